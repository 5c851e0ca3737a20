/* SPDX-License-Identifier: MIT */
/*
 * Reading a session's communication calls (job/comm.h): which slices are
 * calls (by name, category and track), their args, the nesting rule, and
 * the index tft_comm_finish builds before matching (match.c).
 */
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "job/comm.h"

/* ---- what a name is ------------------------------------------------------------------ */

/* Classification codes kept per string id: 0 not looked at yet, else 1 + code. */
enum {
	CLS_NONE = 0,      /* no communication */
	CLS_CALL = 1,      /* kind and shape in the bits above */
};

/* bits: 0 a call, 1-3 kind, 4 nonblocking, 5-6 shape, 7 MPI */
static uint8_t cls_pack(int kind, int shape)
{
	return (uint8_t)(CLS_CALL | kind << 1 | shape << 5);
}

#define CLS_NONBLOCKING 0x10u
#define CLS_MPI 0x80u

struct mpi_name {
	const char *name;
	uint8_t kind;
};

static const struct mpi_name mpi_p2p[] = {
	{ "Send", TFT_COMM_SEND },   { "Ssend", TFT_COMM_SEND },   { "Bsend", TFT_COMM_SEND },
	{ "Rsend", TFT_COMM_SEND },  { "Isend", TFT_COMM_ISEND },  { "Issend", TFT_COMM_ISEND },
	{ "Ibsend", TFT_COMM_ISEND }, { "Irsend", TFT_COMM_ISEND }, { "Recv", TFT_COMM_RECV },
	{ "Irecv", TFT_COMM_IRECV }, { "Wait", TFT_COMM_WAIT },    { "Waitall", TFT_COMM_WAIT },
	{ "Waitany", TFT_COMM_WAIT }, { "Waitsome", TFT_COMM_WAIT }, { "Test", TFT_COMM_WAIT },
	{ "Testall", TFT_COMM_WAIT }, { "Testany", TFT_COMM_WAIT }, { "Testsome", TFT_COMM_WAIT },
};

/* MPI collectives (blocking; the nonblocking ones are the same names after an I). */
static const char *const mpi_coll[] = {
	"Barrier", "Bcast", "Reduce", "Allreduce", "Gather", "Gatherv", "Allgather", "Allgatherv",
	"Scatter", "Scatterv", "Alltoall", "Alltoallv", "Alltoallw", "Reduce_scatter",
	"Reduce_scatter_block", "Scan", "Exscan",
};

static bool has_at(const char *s, size_t n, size_t i, const char *w)
{
	size_t k = strlen(w);

	if (i + k > n)
		return false;
	for (size_t j = 0; j < k; j++) {
		char c = s[i + j];
		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (c != w[j])
			return false;
	}
	return true;
}

static bool contains(const char *s, size_t n, const char *w)
{
	for (size_t i = 0; i < n; i++)
		if (has_at(s, n, i, w))
			return true;
	return false;
}

int tft_comm_coll_shape(const char *s, size_t n)
{
	if (contains(s, n, "allreduce") || contains(s, n, "all_reduce") || contains(s, n, "barrier") ||
	    contains(s, n, "allgather") || contains(s, n, "all_gather") || contains(s, n, "alltoall") ||
	    contains(s, n, "all_to_all") || contains(s, n, "reduce_scatter") ||
	    contains(s, n, "reducescatter"))
		return TFT_COLL_ALL;
	if (contains(s, n, "bcast") || contains(s, n, "broadcast") || contains(s, n, "scatter"))
		return TFT_COLL_ROOT_OUT;
	if (contains(s, n, "scan"))
		return TFT_COLL_PREFIX;
	if (contains(s, n, "reduce") || contains(s, n, "gather"))
		return TFT_COLL_ROOT_IN;
	return TFT_COLL_ALL;
}

static bool prefix(const char *s, size_t n, const char *p)
{
	size_t k = strlen(p);

	return n >= k && memcmp(s, p, k) == 0;
}

/* The class of a slice named s[0..n) on a track of `kind`, with category "collective" or not. */
static uint8_t classify(const char *s, size_t n, uint32_t track_kind, bool coll_cat)
{
	if (track_kind == TFT_TRACK_GPU_STREAM)
		return prefix(s, n, "nccl") || prefix(s, n, "rccl") ? cls_pack(TFT_COMM_DEVICE, 0) : 0;
	if (prefix(s, n, "PMPI_")) {
		s++;
		n--;
	}
	if (prefix(s, n, "MPI_")) {
		const char *f = s + 4;
		size_t fn = n - 4;
		uint8_t nb = 0;
		for (size_t i = 0; i < sizeof(mpi_p2p) / sizeof(mpi_p2p[0]); i++)
			if (strlen(mpi_p2p[i].name) == fn && memcmp(f, mpi_p2p[i].name, fn) == 0)
				return (uint8_t)(cls_pack(mpi_p2p[i].kind, 0) | CLS_MPI);
		if (fn > 1 && f[0] == 'I') { /* MPI_Iallreduce ... */
			f++;
			fn--;
			nb = CLS_NONBLOCKING;
		}
		for (size_t i = 0; i < sizeof(mpi_coll) / sizeof(mpi_coll[0]); i++)
			if (strlen(mpi_coll[i]) == fn && memcmp(f, mpi_coll[i], fn) == 0)
				return (uint8_t)(cls_pack(TFT_COMM_COLL, tft_comm_coll_shape(f, fn)) | nb | CLS_MPI);
		return (uint8_t)(cls_pack(TFT_COMM_OTHER, 0) | CLS_MPI);
	}
	if (coll_cat || prefix(s, n, "c10d::") || prefix(s, n, "gloo:") || prefix(s, n, "nccl:")) {
		const char *f = s;
		size_t fn = n;
		/* point-to-point and bookkeeping ops of torch.distributed: time, no matching */
		for (size_t i = 0; i < n; i++)
			if (s[i] == ':') {
				f = s + i + 1;
				fn = n - i - 1;
			}
		if (prefix(f, fn, "send") || prefix(f, fn, "recv") || prefix(f, fn, "record_param_comms"))
			return cls_pack(TFT_COMM_OTHER, 0);
		return cls_pack(TFT_COMM_COLL, tft_comm_coll_shape(f, fn));
	}
	if (n == 18 && memcmp(s, "record_param_comms", 18) == 0)
		return cls_pack(TFT_COMM_OTHER, 0);
	return 0;
}

/* ---- args -------------------------------------------------------------------------- */

enum key_code {
	K_NONE = 1, K_COMM, K_COMM_SIZE, K_RANK_IN_COMM, K_PEER, K_TAG, K_BYTES, K_SEQ, K_COLL_SEQ,
	K_ROOT, K_REQUEST, K_COMPLETES,
};

static uint8_t key_code(const char *s, size_t n)
{
	static const struct { const char *k; uint8_t code; } keys[] = {
		{ "comm", K_COMM },       { "comm_size", K_COMM_SIZE },   { "group_size", K_COMM_SIZE },
		{ "rank_in_comm", K_RANK_IN_COMM }, { "rank_in_group", K_RANK_IN_COMM },
		{ "peer", K_PEER },       { "tag", K_TAG },               { "bytes", K_BYTES },
		{ "seq", K_SEQ },         { "coll_seq", K_COLL_SEQ },     { "root", K_ROOT },
		{ "request", K_REQUEST }, { "completes", K_COMPLETES },
	};

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (strlen(keys[i].k) == n && memcmp(s, keys[i].k, n) == 0)
			return keys[i].code;
	return K_NONE;
}

#define MAX_LIST 4096 /* request ids one Wait/Test call lists */

/* A JSON list of integers ("[3, 4, null]": null is -1); at most max values. Returns the count. */
static uint32_t parse_list(const char *p, size_t n, int64_t *out, uint32_t max)
{
	size_t i = 0;
	uint32_t k = 0;

	while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r'))
		i++;
	if (i == n || p[i] != '[')
		return 0;
	i++;
	while (i < n && k < max) {
		while (i < n && (p[i] == ' ' || p[i] == ',' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r'))
			i++;
		if (i == n || p[i] == ']')
			break;
		if (p[i] == 'n') { /* null */
			out[k++] = -1;
			i += 4;
			continue;
		}
		bool neg = p[i] == '-';
		int64_t v = 0;
		if (neg)
			i++;
		if (i == n || p[i] < '0' || p[i] > '9')
			break; /* not a list of integers */
		while (i < n && p[i] >= '0' && p[i] <= '9') {
			if (v < INT64_MAX / 10)
				v = v * 10 + (p[i] - '0');
			i++;
		}
		if (i < n && (p[i] == '.' || p[i] == 'e' || p[i] == 'E')) /* a float: its integer part */
			while (i < n && p[i] != ',' && p[i] != ']')
				i++;
		out[k++] = neg ? -v : v;
	}
	return k;
}

/* An integer arg value (ints, bools, floats, decimal strings); false if it is none. */
static bool arg_int(struct tft_session *s, const struct tft_arg *a, int64_t *out)
{
	if (a->type == TFT_ARG_INT || a->type == TFT_ARG_BOOL) {
		*out = a->v.i;
		return true;
	}
	if (a->type == TFT_ARG_DOUBLE) {
		if (!(a->v.d > -9.2e18 && a->v.d < 9.2e18))
			return false;
		*out = (int64_t)a->v.d;
		return true;
	}
	if (a->type == TFT_ARG_STR) {
		size_t n;
		const char *p = tft_session_str(s, a->v.str, &n);
		char buf[32];
		char *end;
		if (n == 0 || n >= sizeof(buf))
			return false;
		memcpy(buf, p, n);
		buf[n] = '\0';
		*out = strtoll(buf, &end, 0);
		return *end == '\0';
	}
	return false;
}

/* ---- reading ----------------------------------------------------------------------- */

struct reader {
	struct tft_session *s;
	struct tft_comm_set *cs;
	const struct tft_comm_read_opts *o;
	uint8_t *name_cls;  /* owned: [string id] class (CLS_* packed) + 1, 0 unknown; 0xff: the
			     * category decides */
	uint8_t *gpu_cls;   /* owned: the same on device stream tracks */
	uint8_t *key_cls;   /* owned: [string id] key code, 0 unknown */
	uint8_t *cat_coll;  /* owned: [string id] 1 = "collective", 2 = other, 0 unknown */
	uint32_t ncls;      /* entries of the three (the session's string count) */
	uint32_t track;     /* the track being read */
	uint32_t track_kind;
	int32_t rank;
	bool nests;
	int64_t open_end;   /* end of the last call taken on this track (INT64_MIN: none) */
	uint32_t open_depth;
	bool lanes;         /* the track is lane-packed: every slice is busy time (else the top level) */
	struct tft_comm_busy *busy; /* borrowed: the rank's busy intervals being read */
	int64_t list[3][MAX_LIST]; /* completes, and per-request peer/tag lists */
	int64_t bytes_list[MAX_LIST];
	int status;
};

static int grow_cls(struct reader *r, uint32_t id)
{
	/* four arrays of one capacity, zero-filled: ncls moves when all of them grew */
	uint32_t ca = r->ncls, cb = r->ncls, cc = r->ncls, cd = r->ncls;

	if (tft_grow_ex((void **)&r->name_cls, &ca, (uint64_t)id + 1, 1, 1024, 1) ||
	    tft_grow_ex((void **)&r->gpu_cls, &cb, (uint64_t)id + 1, 1, 1024, 1) ||
	    tft_grow_ex((void **)&r->key_cls, &cc, (uint64_t)id + 1, 1, 1024, 1) ||
	    tft_grow_ex((void **)&r->cat_coll, &cd, (uint64_t)id + 1, 1, 1024, 1))
		return TFT_ENOMEM;
	r->ncls = ca;
	return 0;
}

static bool cat_is_coll(struct reader *r, uint32_t cat)
{
	if (!r->cat_coll[cat]) {
		size_t n;
		const char *p = tft_session_str(r->s, cat, &n);
		r->cat_coll[cat] = n == 10 && memcmp(p, "collective", 10) == 0 ? 1 : 2;
	}
	return r->cat_coll[cat] == 1;
}

static uint8_t name_class(struct reader *r, uint32_t name, uint32_t cat)
{
	uint8_t *cls = r->track_kind == TFT_TRACK_GPU_STREAM ? r->gpu_cls : r->name_cls;

	/* (the category matters only where the name alone says nothing) */
	if (!cls[name]) {
		size_t n;
		const char *p = tft_session_str(r->s, name, &n);
		cls[name] = (uint8_t)(classify(p, n, r->track_kind, false) + 1);
		if (cls[name] == 1 && r->track_kind != TFT_TRACK_GPU_STREAM)
			cls[name] = 0xff; /* nothing by name: the category decides */
	}
	if (cls[name] == 0xff) {
		if (!cat_is_coll(r, cat))
			return 0;
		size_t n;
		const char *p = tft_session_str(r->s, name, &n);
		return classify(p, n, r->track_kind, true);
	}
	return (uint8_t)(cls[name] - 1);
}

static int add_done(struct tft_comm_set *cs, const struct tft_comm_done *d)
{
	if (tft_grow((void **)&cs->done, &cs->cap_done, cs->ndone + 1, sizeof(*cs->done)))
		return TFT_ENOMEM;
	cs->done[cs->ndone++] = *d;
	return 0;
}

static int on_slice(void *ctx, const struct tft_event *ev)
{
	struct reader *r = ctx;
	struct tft_comm_set *cs = r->cs;
	struct tft_comm_call c;
	uint32_t ncomp = 0, npeer = 0, ntag = 0, nbytes = 0;
	int64_t one_peer = -1, one_tag = -1, one_bytes = -1, one_seq = -1;
	bool have_peer = false, have_tag = false, have_bytes = false;
	uint8_t cls;

	if (ev->kind != TFT_EV_SLICE || (ev->flags & TFT_EVF_SUMMARY))
		return 0;
	if (r->busy && (r->lanes || ev->depth == 0)) {
		struct tft_comm_busy *b = r->busy;
		int64_t e;
		e = __builtin_add_overflow(ev->ts_ns, ev->dur_ns > 0 ? ev->dur_ns : 0, &e) ? INT64_MAX : e;
		if (b->n && ev->ts_ns <= b->v[b->n - 1].b && ev->ts_ns >= b->v[b->n - 1].a) {
			if (e > b->v[b->n - 1].b) /* (touching or overlapping the last: one interval) */
				b->v[b->n - 1].b = e;
		} else if (e > ev->ts_ns) {
			if (tft_grow((void **)&b->v, &b->cap, b->n + 1, sizeof(*b->v)))
				return r->status = TFT_ENOMEM;
			b->v[b->n++] = (struct tft_comm_ivl){ ev->ts_ns, e };
		}
	}
	if (ev->name >= r->ncls || ev->cat >= r->ncls)
		if (grow_cls(r, ev->name > ev->cat ? ev->name : ev->cat))
			return r->status = TFT_ENOMEM;
	if (r->nests && ev->ts_ns < r->open_end && ev->depth > r->open_depth)
		return 0; /* inside a call taken already: that call's */
	cls = name_class(r, ev->name, ev->cat);
	if (!(cls & CLS_CALL))
		return 0;
	memset(&c, 0, sizeof(c));
	c.ts = ev->ts_ns;
	c.end = __builtin_add_overflow(ev->ts_ns, ev->dur_ns > 0 ? ev->dur_ns : 0, &c.end) ? INT64_MAX : c.end;
	c.rank = (uint32_t)r->rank;
	c.track = r->o->track_base + r->track;
	c.name = r->o->str_map ? r->o->str_map(r->o->str_ctx, ev->name) : ev->name;
	c.depth = ev->depth;
	c.kind = (uint8_t)(cls >> 1 & 7);
	c.shape = (uint8_t)(cls >> 5 & 3);
	c.flags = (uint8_t)((cls & CLS_MPI ? TFT_COMM_F_MPI : 0) | (cls & CLS_NONBLOCKING ? TFT_COMM_F_NONBLOCKING : 0));
	c.peer = c.tag = c.root = c.rank_in_comm = -1;
	c.bytes = c.seq = c.request = -1;
	c.completed_by = c.waited_for = UINT32_MAX;
	for (uint16_t i = 0; i < ev->nargs; i++) {
		const struct tft_arg *a = &ev->args[i];
		int64_t v;
		if (a->key >= r->ncls && grow_cls(r, a->key))
			return r->status = TFT_ENOMEM;
		if (!r->key_cls[a->key]) {
			size_t n;
			const char *p = tft_session_str(r->s, a->key, &n);
			r->key_cls[a->key] = key_code(p, n);
		}
		uint8_t k = r->key_cls[a->key];
		if (k == K_NONE)
			continue;
		if (a->type == TFT_ARG_JSON) {
			size_t n;
			const char *p = tft_session_str(r->s, a->v.str, &n);
			switch (k) {
			case K_COMPLETES: ncomp = parse_list(p, n, r->list[0], MAX_LIST); break;
			case K_PEER: npeer = parse_list(p, n, r->list[1], MAX_LIST); have_peer = npeer > 0; break;
			case K_TAG: ntag = parse_list(p, n, r->list[2], MAX_LIST); have_tag = ntag > 0; break;
			case K_BYTES: nbytes = parse_list(p, n, r->bytes_list, MAX_LIST); have_bytes = nbytes > 0; break;
			default: break;
			}
			continue;
		}
		if (!arg_int(r->s, a, &v))
			continue;
		switch (k) {
		case K_COMM: c.comm = v; break;
		case K_COMM_SIZE: c.comm_size = v > 0 && v <= INT32_MAX ? (int32_t)v : 0; break;
		case K_RANK_IN_COMM: c.rank_in_comm = v >= 0 && v <= INT32_MAX ? (int32_t)v : -1; break;
		case K_PEER: one_peer = v; c.peer = v >= 0 && v <= INT32_MAX ? (int32_t)v : -1; break;
		case K_TAG: one_tag = v; c.tag = v >= 0 && v <= INT32_MAX ? (int32_t)v : -1; break;
		case K_BYTES: one_bytes = v; c.bytes = v >= 0 ? v : -1; break;
		case K_SEQ: one_seq = v; if (c.kind != TFT_COMM_COLL) c.seq = v >= 0 ? v : -1; break;
		case K_COLL_SEQ: if (c.kind == TFT_COMM_COLL) c.seq = v >= 0 ? v : -1; break;
		case K_ROOT: c.root = v >= 0 && v <= INT32_MAX ? (int32_t)v : -1; break;
		case K_REQUEST: c.request = v; break;
		case K_COMPLETES: r->list[0][0] = v; ncomp = 1; break;
		default: break;
		}
	}
	if (c.kind == TFT_COMM_WAIT) {
		c.done = cs->ndone;
		for (uint32_t j = 0; j < ncomp; j++) {
			struct tft_comm_done d = { .request = r->list[0][j], .peer = -1, .tag = -1, .bytes = -1, .seq = -1 };
			int64_t p = have_peer ? (j < npeer ? r->list[1][j] : -1) : ncomp == 1 ? one_peer : -1;
			int64_t t = have_tag ? (j < ntag ? r->list[2][j] : -1) : ncomp == 1 ? one_tag : -1;
			int64_t b = have_bytes ? (j < nbytes ? r->bytes_list[j] : -1) : ncomp == 1 ? one_bytes : -1;
			d.peer = p >= 0 && p <= INT32_MAX ? (int32_t)p : -1;
			d.tag = t >= 0 && t <= INT32_MAX ? (int32_t)t : -1;
			d.bytes = b >= 0 ? b : -1;
			d.seq = ncomp == 1 && one_seq >= 0 ? one_seq : -1;
			if (add_done(cs, &d))
				return r->status = TFT_ENOMEM;
		}
		c.ndone = ncomp;
		c.peer = c.tag = -1;
	}
	if (tft_grow((void **)&cs->calls, &cs->cap_calls, cs->ncalls + 1, sizeof(*cs->calls)))
		return r->status = TFT_ENOMEM;
	cs->calls[cs->ncalls++] = c;
	if (c.kind == TFT_COMM_SEND || c.kind == TFT_COMM_ISEND)
		cs->sends++;
	else if (c.kind == TFT_COMM_RECV || c.kind == TFT_COMM_IRECV)
		cs->recvs++;
	if (r->nests && (r->open_end == INT64_MIN || ev->ts_ns >= r->open_end || ev->depth <= r->open_depth)) {
		r->open_end = c.end;
		r->open_depth = ev->depth;
	}
	return 0;
}

/* The busy intervals of rank r in cs (a new entry for a rank not read yet). */
static struct tft_comm_busy *busy_of(struct tft_comm_set *cs, int32_t r)
{
	for (uint32_t i = cs->nbusy; i > 0; i--)
		if (cs->busy[i - 1].rank == r)
			return &cs->busy[i - 1];
	if (tft_grow((void **)&cs->busy, &cs->cap_busy, cs->nbusy + 1, sizeof(*cs->busy)))
		return NULL;
	cs->busy[cs->nbusy] = (struct tft_comm_busy){ .rank = r };
	return &cs->busy[cs->nbusy++];
}

int tft_comm_read(struct tft_session *s, const struct tft_comm_read_opts *o, struct tft_comm_set *cs,
		  struct tft_error *err)
{
	static const struct tft_comm_read_opts none = { .rank = -1 };
	struct reader *r = calloc(1, sizeof(*r));
	uint32_t nt = tft_session_track_count(s);
	int rc = 0;

	if (!r)
		return tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
	r->s = s;
	r->cs = cs;
	r->o = o ? o : &none;
	if (grow_cls(r, tft_session_string_count(s) + 1)) {
		rc = tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
		goto out;
	}
	for (uint32_t t = 0; t < nt && !rc; t++) {
		const struct tft_track *tr = tft_session_track(s, t);
		const struct tft_process *p;

		if (!tr || tr->slices == 0 || (tr->flags & TFT_TRACKF_DERIVED))
			continue;
		if (tr->kind != TFT_TRACK_THREAD && tr->kind != TFT_TRACK_DEVICE &&
		    tr->kind != TFT_TRACK_GPU_STREAM && tr->kind != TFT_TRACK_COMM)
			continue;
		r->rank = r->o->rank;
		if (r->rank < 0) {
			p = tft_session_process(s, tr->process);
			if (!p || p->rank < 0)
				continue;
			r->rank = p->rank;
		}
		r->track = t;
		r->track_kind = tr->kind;
		r->nests = tft_track_nests(tr->kind, tr->flags);
		r->lanes = !r->nests;
		r->open_end = INT64_MIN;
		r->open_depth = 0;
		if (!(r->busy = busy_of(cs, r->rank))) {
			rc = tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
			break;
		}
		rc = tft_session_scan(s, t, INT64_MIN, INT64_MAX, 0, on_slice, r, err);
		if (r->status)
			rc = tft_error_set(err, r->status, -1, "out of memory reading communication calls");
	}
out:
	free(r->name_cls);
	free(r->gpu_cls);
	free(r->key_cls);
	free(r->cat_coll);
	free(r);
	return rc;
}

/* ---- the set ------------------------------------------------------------------------- */

void tft_comm_set_init(struct tft_comm_set *cs)
{
	memset(cs, 0, sizeof(*cs));
}

void tft_comm_set_fini(struct tft_comm_set *cs)
{
	free(cs->ranks);
	free(cs->calls);
	free(cs->rank_first);
	free(cs->done);
	free(cs->msgs);
	free(cs->colls);
	free(cs->member);
	for (uint32_t i = 0; i < cs->nbusy; i++)
		free(cs->busy[i].v);
	free(cs->busy);
	memset(cs, 0, sizeof(*cs));
}

int tft_comm_set_take(struct tft_comm_set *dst, struct tft_comm_set *src)
{
	if (tft_grow((void **)&dst->calls, &dst->cap_calls, dst->ncalls + src->ncalls, sizeof(*dst->calls)) ||
	    tft_grow((void **)&dst->done, &dst->cap_done, dst->ndone + src->ndone, sizeof(*dst->done)))
		return TFT_ENOMEM;
	for (uint32_t i = 0; i < src->ncalls; i++) {
		struct tft_comm_call c = src->calls[i];
		c.done += dst->ndone;
		dst->calls[dst->ncalls++] = c;
	}
	if (src->ndone) /* (memcpy from NULL is undefined, even of nothing) */
		memcpy(dst->done + dst->ndone, src->done, (size_t)src->ndone * sizeof(*src->done));
	dst->ndone += src->ndone;
	dst->sends += src->sends;
	dst->recvs += src->recvs;
	for (uint32_t i = 0; i < src->nbusy; i++) {
		struct tft_comm_busy *b = busy_of(dst, src->busy[i].rank);
		if (!b)
			return TFT_ENOMEM;
		if (!b->n) { /* (the usual case: a rank read once) */
			free(b->v);
			*b = src->busy[i];
			src->busy[i].v = NULL;
			continue;
		}
		if (tft_grow((void **)&b->v, &b->cap, b->n + src->busy[i].n, sizeof(*b->v)))
			return TFT_ENOMEM;
		if (src->busy[i].n) /* (memcpy from NULL is undefined, even of nothing) */
			memcpy(b->v + b->n, src->busy[i].v, (size_t)src->busy[i].n * sizeof(*b->v));
		b->n += src->busy[i].n;
	}
	tft_comm_set_fini(src);
	return 0;
}

static int cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

	return (x > y) - (x < y);
}

static int cmp_call(const void *a, const void *b)
{
	const struct tft_comm_call *x = a, *y = b;

	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	return (x->track > y->track) - (x->track < y->track);
}

static int cmp_ivl(const void *x, const void *y)
{
	const struct tft_comm_ivl *p = x, *q = y;

	return (p->a > q->a) - (p->a < q->a);
}

void tft_comm_busy_norm(struct tft_comm_busy *b)
{
	uint32_t m = 0;

	if (b->n)
		qsort(b->v, b->n, sizeof(*b->v), cmp_ivl);
	for (uint32_t i = 0; i < b->n; i++) {
		if (m && b->v[i].a <= b->v[m - 1].b) {
			if (b->v[i].b > b->v[m - 1].b)
				b->v[m - 1].b = b->v[i].b;
		} else {
			b->v[m++] = b->v[i];
		}
	}
	b->n = m;
}

uint32_t tft_comm_rank_index(const struct tft_comm_set *cs, int32_t r)
{
	uint32_t lo = 0, hi = cs->nranks;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (cs->ranks[mid] < r)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < cs->nranks && cs->ranks[lo] == r ? lo : UINT32_MAX;
}

int tft_comm_finish(struct tft_comm_set *cs, const int32_t *ranks, uint32_t nranks)
{
	uint32_t n = 0, cap = nranks + 16;
	int32_t *rk = malloc((size_t)cap * sizeof(*rk));

	if (!rk)
		return TFT_ENOMEM;
	for (uint32_t i = 0; i < nranks; i++)
		rk[n++] = ranks[i];
	for (uint32_t i = 0; i < cs->ncalls; i++) {
		if (n == cap) {
			/* (unique ranks only matter: sort and squeeze before growing) */
			if (n)
				qsort(rk, n, sizeof(*rk), cmp_i32);
			uint32_t m = 0;
			for (uint32_t j = 0; j < n; j++)
				if (!m || rk[m - 1] != rk[j])
					rk[m++] = rk[j];
			n = m;
			if (tft_grow((void **)&rk, &cap, (uint64_t)n + 1, sizeof(*rk))) {
				free(rk);
				return TFT_ENOMEM;
			}

		}
		rk[n++] = (int32_t)cs->calls[i].rank;
	}
	if (n)
		qsort(rk, n, sizeof(*rk), cmp_i32);
	{
		uint32_t m = 0;
		for (uint32_t j = 0; j < n; j++)
			if (!m || rk[m - 1] != rk[j])
				rk[m++] = rk[j];
		n = m;
	}
	free(cs->ranks);
	cs->ranks = rk;
	cs->nranks = n;
	for (uint32_t i = 0; i < cs->ncalls; i++)
		cs->calls[i].rank = tft_comm_rank_index(cs, (int32_t)cs->calls[i].rank);
	if (cs->ncalls) /* (qsort of NULL is undefined, even of none) */
		qsort(cs->calls, cs->ncalls, sizeof(*cs->calls), cmp_call);
	/* busy time: one entry per rank index, sorted and merged (tracks were read one by one) */
	{
		struct tft_comm_busy *b = calloc((size_t)n + 1, sizeof(*b));
		if (!b)
			return TFT_ENOMEM;
		for (uint32_t i = 0; i < n; i++)
			b[i].rank = (int32_t)i;
		for (uint32_t i = 0; i < cs->nbusy; i++) {
			uint32_t k = tft_comm_rank_index(cs, cs->busy[i].rank);
			struct tft_comm_busy *x = &b[k];
			if (k == UINT32_MAX) {
				free(cs->busy[i].v);
				continue;
			}
			if (!x->v) {
				x->v = cs->busy[i].v;
				x->n = cs->busy[i].n;
				x->cap = cs->busy[i].cap;
			} else {
				if (tft_grow((void **)&x->v, &x->cap, x->n + cs->busy[i].n, sizeof(*x->v))) {
					free(cs->busy[i].v);
					continue; /* (the sums below are then short: memory is out anyway) */
				}
				if (cs->busy[i].n) /* (memcpy from NULL is undefined, even of nothing) */
					memcpy(x->v + x->n, cs->busy[i].v, (size_t)cs->busy[i].n * sizeof(*x->v));
				x->n += cs->busy[i].n;
				free(cs->busy[i].v);
			}
		}
		free(cs->busy);
		cs->busy = b;
		cs->nbusy = cs->cap_busy = n;
		for (uint32_t i = 0; i < n; i++)
			tft_comm_busy_norm(&b[i]);
	}
	free(cs->rank_first);
	cs->rank_first = calloc((size_t)n + 1, sizeof(*cs->rank_first));
	if (!cs->rank_first)
		return TFT_ENOMEM;
	for (uint32_t i = 0; i < cs->ncalls; i++)
		cs->rank_first[cs->calls[i].rank + 1]++;
	for (uint32_t i = 0; i < n; i++)
		cs->rank_first[i + 1] += cs->rank_first[i];
	return tft_comm_match(cs);
}
