/* SPDX-License-Identifier: MIT */
/*
 * Chrome trace event format importer (Chrome JSON, PyTorch Kineto,
 * tf.timeline): walks the document one event at a time, maps pids/tids to
 * processes and tracks, pairs B/E, b/e, N/D and flow events, and pushes
 * every event through the sorter (the input is not ordered).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "codec/json_read.h"
#include "collect/ingest_chrome.h"
#include "core/model.h"
#include "core/strtab.h"
#include "store/sorter.h"

#define MAX_ARGS 65535u        /* tft_event.nargs is 16-bit */
#define PROGRESS_EVERY 4096u   /* events between clock checks */
#define PROGRESS_NS 100000000LL
#define SYNTH_ID_BASE (INT64_C(1) << 32) /* pid/tid values for string pids/tids */

/* ---- growable arrays ------------------------------------------------------ */

static int vec_grow(void **p, uint32_t *cap, uint64_t need, size_t elem)
{
	uint64_t ncap;
	void *np;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap : 16;
	while (ncap < need)
		ncap *= 2;
	if (ncap > UINT32_MAX - 1)
		return TFT_ENOMEM;
	np = realloc(*p, (size_t)ncap * elem);
	if (!np)
		return TFT_ENOMEM;
	*p = np;
	*cap = (uint32_t)ncap;
	return 0;
}

/* ---- one hash map for every keyed table ---------------------------------- */

/* Key tags (top byte of hkey.a). */
enum {
	K_PROC = 1,    /* (pid int/str)           -> procs index */
	K_THREAD,      /* (proc, tid int/str)     -> threads index */
	K_COUNTER,     /* (proc, name, arg key)   -> track id */
	K_ASYNC_TRACK, /* (proc, cat)             -> track id */
	K_ASYNC,       /* (proc, cat, name, id)   -> newest open span */
	K_OBJ_TRACK,   /* (proc, name)            -> track id */
	K_OBJ,         /* (proc, name, id)        -> newest open span */
	K_FLOW,        /* (local proc, cat, scope, id) -> chain of open starts */
	K_FLOW_END,    /* same key                -> chain of ends seen before their start */
};

struct hkey {
	uint64_t a, b, c;
};

struct hslot {
	struct hkey k;
	uint32_t val;  /* TFT_NONE = empty slot */
	uint32_t hash;
};

struct hmap {
	struct hslot *slots; /* owned */
	uint32_t mask, count;
};

static inline struct hkey mkkey(unsigned tag, uint64_t a, uint64_t b, uint64_t c)
{
	struct hkey k = { ((uint64_t)tag << 56) | a, b, c };
	return k;
}

static inline uint32_t hkey_hash(const struct hkey *k)
{
	uint64_t h = tft_hash_u64(k->c ^ 0x9e3779b97f4a7c15ULL);

	return (uint32_t)tft_hash_u64(k->a ^ tft_hash_u64(k->b ^ h));
}

static inline bool hkey_eq(const struct hkey *x, const struct hkey *y)
{
	return x->a == y->a && x->b == y->b && x->c == y->c;
}

static uint32_t hmap_get(const struct hmap *m, const struct hkey *k)
{
	uint32_t h, i;

	if (!m->slots)
		return TFT_NONE;
	h = hkey_hash(k);
	for (i = h & m->mask;; i = (i + 1) & m->mask) {
		const struct hslot *s = &m->slots[i];
		if (s->val == TFT_NONE)
			return TFT_NONE;
		if (s->hash == h && hkey_eq(&s->k, k))
			return s->val;
	}
}

static int hmap_resize(struct hmap *m, uint32_t ncap)
{
	struct hslot *ns = malloc((size_t)ncap * sizeof(*ns));

	if (!ns)
		return TFT_ENOMEM;
	for (uint32_t i = 0; i < ncap; i++)
		ns[i].val = TFT_NONE;
	if (m->slots) {
		for (uint32_t i = 0; i <= m->mask; i++) {
			struct hslot *s = &m->slots[i];
			if (s->val == TFT_NONE)
				continue;
			uint32_t j = s->hash & (ncap - 1);
			while (ns[j].val != TFT_NONE)
				j = (j + 1) & (ncap - 1);
			ns[j] = *s;
		}
	}
	free(m->slots);
	m->slots = ns;
	m->mask = ncap - 1;
	return 0;
}

/* Insert or replace. */
static int hmap_put(struct hmap *m, const struct hkey *k, uint32_t val)
{
	uint32_t h, i;

	if (!m->slots || (uint64_t)(m->count + 1) * 4 > (uint64_t)(m->mask + 1) * 3) {
		if (m->mask >= (1u << 30))
			return TFT_ENOMEM;
		int rc = hmap_resize(m, m->slots ? (m->mask + 1) * 2 : 256);
		if (rc)
			return rc;
	}
	h = hkey_hash(k);
	for (i = h & m->mask;; i = (i + 1) & m->mask) {
		struct hslot *s = &m->slots[i];
		if (s->val == TFT_NONE) {
			s->k = *k;
			s->hash = h;
			s->val = val;
			m->count++;
			return 0;
		}
		if (s->hash == h && hkey_eq(&s->k, k)) {
			s->val = val;
			return 0;
		}
	}
}

/* Remove with backward shift (keeps probe chains intact). */
static void hmap_del(struct hmap *m, const struct hkey *k)
{
	uint32_t h, i, j;

	if (!m->slots)
		return;
	h = hkey_hash(k);
	for (i = h & m->mask;; i = (i + 1) & m->mask) {
		if (m->slots[i].val == TFT_NONE)
			return;
		if (m->slots[i].hash == h && hkey_eq(&m->slots[i].k, k))
			break;
	}
	for (j = i;;) {
		j = (j + 1) & m->mask;
		if (m->slots[j].val == TFT_NONE)
			break;
		uint32_t ideal = m->slots[j].hash & m->mask;
		bool stays = i <= j ? (i < ideal && ideal <= j) : (i < ideal || ideal <= j);
		if (stays)
			continue;
		m->slots[i] = m->slots[j];
		i = j;
	}
	m->slots[i].val = TFT_NONE;
	m->count--;
}

/* ---- importer state -------------------------------------------------------- */

struct proc {
	int64_t pid;        /* producer's pid; SYNTH_ID_BASE+n for string pids */
	uint32_t id;        /* writer process id; TFT_NONE until an event needs it */
	uint32_t name;      /* string id */
	uint32_t labels;    /* string id */
	int32_t sort_index;
	uint32_t instants;  /* "Instants" track (process-scoped instants) or TFT_NONE */
};

struct open_slice {
	int64_t ts;
	uint32_t name, cat;
	uint32_t args_start; /* index into the thread's arg stack */
};

struct thread {
	int64_t tid;
	uint32_t proc;              /* index into procs */
	uint32_t track;             /* writer track id; TFT_NONE until needed */
	uint32_t name;              /* string id */
	int32_t sort_index;
	struct open_slice *open;    /* owned; B stack */
	uint32_t nopen, cap_open;
	struct tft_arg *args;       /* owned; args of the open B's, stacked */
	uint32_t nargs, cap_args;
};

enum { SPAN_FREE = 0, SPAN_ASYNC = 1, SPAN_OBJECT = 2 };

/* An open async slice (b/S) or object (N). */
struct span {
	struct hkey key;
	int64_t ts;
	uint64_t seq;          /* opening order */
	uint32_t track, name, cat;
	uint32_t proc;
	uint64_t id;
	uint32_t prev;         /* older open span with the same key, or TFT_NONE */
	uint32_t next_free;
	uint8_t kind;          /* SPAN_* */
	struct tft_arg *args;  /* owned */
	uint32_t nargs, cap_args;
};

/*
 * A flow half waiting for its other half: a started segment (s / t /
 * flow_out) under its key, or an end seen before its start (f / t /
 * flow_in; Kineto writes many 'f' before their 's'), chained under the
 * key's K_FLOW_END twin.
 */
struct pflow {
	uint64_t id;
	uint32_t name, cat;
	uint32_t track;
	uint32_t flags;        /* ends: TFT_FLOWF_BIND_ENCLOSING */
	int64_t ts;
	bool stepped;          /* starts: opened by a step, so the chain may end here */
	bool live;
	bool is_end;
	uint32_t next;         /* next orphan end under the same key, or next free */
};

/* A pid / tid / id as written: integer or string. */
struct xid {
	uint8_t kind; /* 0 = absent, 1 = integer, 2 = string */
	int64_t i;
	struct tft_json_str s;
};

/* A parsed argument before interning (borrowed from the reader). */
struct parg {
	struct tft_json_str key;
	uint8_t type; /* enum tft_arg_type */
	struct tft_json_str s;
	int64_t i;
	double d;
};

/* One event as parsed (strings borrowed from the reader until the next mark). */
struct cev {
	struct tft_json_str ph, name, cat, scope, bp, s;
	struct xid pid, tid, id, bind_id;
	bool id_local;
	bool flow_in, flow_out;
	bool has_ts, has_dur;
	int64_t ts, dur;
	int64_t offset;
};

/*
 * A direct-mapped cache in front of the writer's string table: names,
 * categories and arg keys repeat millions of times, and hashing a few
 * bytes here is cheaper than the table's full hash + probe.
 */
#define ICACHE_BITS 12
struct icache_ent {
	uint64_t h;
	const char *s; /* borrowed: the writer's interned copy */
	uint32_t len, id;
};

struct chrome {
	struct icache_ent *icache;  /* owned; 1 << ICACHE_BITS entries */
	struct tft_writer *w;       /* borrowed */
	struct tft_sorter *sorter;  /* owned */
	struct tft_source *src;     /* borrowed */
	struct tft_json_reader r;
	const struct tft_ingest_opts *opts; /* borrowed, may be NULL */
	struct tft_error *err;      /* borrowed, may be NULL */

	struct hmap map;            /* every keyed table (K_* tags) */
	struct proc *procs;         /* owned */
	uint32_t nprocs, cap_procs;
	struct thread *threads;     /* owned */
	uint32_t nthreads, cap_threads;
	struct span *spans;         /* owned; free list through next_free */
	uint32_t nspans, cap_spans, free_span;
	struct pflow *pflows;       /* owned; free list through next */
	uint32_t npflows, cap_pflows, free_pflow;
	struct tft_flow *flows;     /* owned; added at the end (time shift) */
	uint32_t nflows, cap_flows;
	struct tft_step *steps;     /* owned; added at the end (time shift) */
	uint32_t nsteps, cap_steps;

	struct parg *pargs;         /* owned; parsed args of the current event */
	uint32_t npargs, cap_pargs;
	struct tft_arg *args;       /* owned; interned args of the current event */
	uint32_t nargs, cap_args;

	/* cache of the last (pid, tid) -> thread lookup (integer ids only) */
	int64_t last_pid, last_tid;
	uint32_t last_thread;

	uint32_t global_proc;       /* index of the synthetic "Global" process or TFT_NONE */
	uint32_t global_track;
	int64_t next_synth;
	uint64_t span_seq;

	bool have_end;
	int64_t trace_start, trace_end; /* min ts, max ts + dur of this file */
	int64_t shift_ns;
	uint64_t events;
	int64_t unmatched_ends, unclosed, unmatched_flows, skipped;

	bool kineto, tf_timeline;
	uint32_t last_cat_checked;
	bool has_rank;
	int32_t rank;
	uint32_t host;

	uint32_t s_id;              /* interned "id" */
	struct timespec last_progress;
};

/* ---- errors / small helpers -------------------------------------------------- */

static int nomem(struct chrome *c)
{
	return tft_error_set(c->err, TFT_ENOMEM, -1, "out of memory");
}

static inline uint64_t quick_hash(const char *s, size_t len)
{
	uint64_t a = 0, b = 0;

	if (len >= 8) {
		memcpy(&a, s, 8);
		memcpy(&b, s + len - 8, 8);
	} else {
		memcpy(&a, s, len);
	}
	return (a * 0x9e3779b97f4a7c15ULL) ^ ((b + len) * 0xc2b2ae3d27d4eb4fULL);
}

static int intern(struct chrome *c, const char *s, size_t len, uint32_t *id)
{
	uint64_t h = quick_hash(s, len);
	struct icache_ent *e = &c->icache[(h ^ (h >> 29)) & ((1u << ICACHE_BITS) - 1)];
	uint32_t v;

	if (e->s && e->h == h && e->len == len && memcmp(e->s, s, len) == 0) {
		*id = e->id;
		return 0;
	}
	v = tft_writer_intern(c->w, s, len);
	*id = v;
	if (v == UINT32_MAX)
		return nomem(c);
	if (len <= UINT32_MAX) {
		size_t l2;
		const char *copy = tft_writer_str(c->w, v, &l2);
		if (copy && l2 == len) {
			e->h = h;
			e->s = copy;
			e->len = (uint32_t)len;
			e->id = v;
		}
	}
	return 0;
}

static inline bool str_eq(const struct tft_json_str *s, const char *lit, size_t n)
{
	return s->len == n && memcmp(s->ptr, lit, n) == 0;
}
#define STR_EQ(s, lit) str_eq((s), (lit), sizeof(lit) - 1)

static const char *wstr(struct chrome *c, uint32_t id, size_t *len)
{
	const char *s = tft_writer_str(c->w, id, len);

	if (!s) {
		*len = 0;
		return "";
	}
	return s;
}

static bool contains(const char *s, size_t n, const char *needle)
{
	return s && n && memmem(s, n, needle, strlen(needle)) != NULL;
}

static bool contains_ci(const char *s, size_t n, const char *needle)
{
	size_t m = strlen(needle);

	for (size_t i = 0; i + m <= n; i++) {
		size_t j = 0;
		while (j < m && (s[i + j] | 0x20) == needle[j])
			j++;
		if (j == m)
			return true;
	}
	return false;
}

static bool is_alpha(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
}

/* "comm" as a whole word ("comm", "comm 3", "rank_comm") but not "command". */
static bool has_comm_word(const char *s, size_t n)
{
	for (size_t i = 0; i + 4 <= n; i++) {
		if (memcmp(s + i, "comm", 4) && memcmp(s + i, "Comm", 4))
			continue;
		bool before = i == 0 || !is_alpha(s[i - 1]);
		size_t k = i + 4;
		if (k < n && s[k] == 's')
			k++;
		bool after = k >= n || !is_alpha(s[k]);
		if (before && after)
			return true;
	}
	return false;
}

static bool ends_with(const char *s, size_t n, const char *suf)
{
	size_t m = strlen(suf);

	return n >= m && memcmp(s + n - m, suf, m) == 0;
}

/*
 * The track-kind classifier for thread-like tracks, from the process and
 * thread names (either may be empty).
 */
static uint32_t classify_track(const char *pn, size_t pl, const char *tn, size_t tl)
{
	if (contains_ci(tn, tl, "stream") || contains_ci(pn, pl, "stream") ||
	    contains(pn, pl, "/memcpy") || contains(tn, tl, "/memcpy"))
		return TFT_TRACK_GPU_STREAM;
	if (ends_with(pn, pl, " Compute") && (contains(pn, pl, "/gpu:") || contains(pn, pl, "/device:")))
		return TFT_TRACK_DEVICE;
	if (contains_ci(tn, tl, "nccl") || contains_ci(tn, tl, "rccl") || contains(tn, tl, "Send") ||
	    contains(tn, tl, "Recv") || contains_ci(tn, tl, "collective") ||
	    contains_ci(tn, tl, "communicat") || has_comm_word(tn, tl))
		return TFT_TRACK_COMM;
	return TFT_TRACK_THREAD;
}

static uint32_t thread_kind(struct chrome *c, const struct thread *t)
{
	size_t pl, tl;
	const char *pn = wstr(c, c->procs[t->proc].name, &pl);
	const char *tn = wstr(c, t->name, &tl);

	return classify_track(pn, pl, tn, tl);
}

/* An integer written as a string ("1890023232"), as Kineto does for tids. */
static bool digits_to_i64(const struct tft_json_str *s, int64_t *out)
{
	if (s->len == 0 || s->len > 18)
		return false;
	return tft_json_number_to_i64(s->ptr, s->len, out) == 0 && s->ptr[0] != '-' &&
	       !(s->len > 1 && s->ptr[0] == '0');
}

/* A flow/async/object id as a 64-bit value: number, "0x..." hex, decimal or hashed. */
static uint64_t xid_value(const struct xid *x)
{
	if (x->kind == 1)
		return (uint64_t)x->i;
	if (x->kind == 2) {
		const char *p = x->s.ptr;
		size_t n = x->s.len;
		if (n > 2 && n <= 18 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
			uint64_t v = 0;
			size_t i;
			for (i = 2; i < n; i++) {
				char ch = p[i];
				int d = ch >= '0' && ch <= '9' ? ch - '0'
					: (ch | 0x20) >= 'a' && (ch | 0x20) <= 'f' ? (ch | 0x20) - 'a' + 10
										: -1;
				if (d < 0)
					break;
				v = v << 4 | (uint64_t)d;
			}
			if (i == n)
				return v;
		}
		int64_t v;
		if (digits_to_i64(&x->s, &v))
			return (uint64_t)v;
		return tft_hash_bytes(p, n);
	}
	return 0;
}

/* ---- processes and tracks ------------------------------------------------------ */

static int new_proc(struct chrome *c, int64_t pid, uint32_t name, uint32_t *idx)
{
	if (vec_grow((void **)&c->procs, &c->cap_procs, (uint64_t)c->nprocs + 1, sizeof(*c->procs)))
		return nomem(c);
	struct proc *p = &c->procs[c->nprocs];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->id = TFT_NONE;
	p->name = name;
	p->instants = TFT_NONE;
	*idx = c->nprocs++;
	return 0;
}

/* The proc entry for a pid as written (created on first sight). */
static int get_proc(struct chrome *c, const struct xid *pid, uint32_t *idx)
{
	struct hkey k;
	int64_t iv = 0;
	uint32_t sid = 0;
	bool is_str = false;
	int rc;

	if (pid->kind == 1) {
		iv = pid->i;
	} else if (pid->kind == 2 && !digits_to_i64(&pid->s, &iv)) {
		is_str = true;
		if ((rc = intern(c, pid->s.ptr, pid->s.len, &sid)))
			return rc;
	}
	k = is_str ? mkkey(K_PROC, 1, sid, 0) : mkkey(K_PROC, 0, (uint64_t)iv, 0);
	*idx = hmap_get(&c->map, &k);
	if (*idx != TFT_NONE)
		return 0;
	if ((rc = new_proc(c, is_str ? SYNTH_ID_BASE + c->next_synth++ : iv, is_str ? sid : 0, idx)))
		return rc;
	if (hmap_put(&c->map, &k, *idx))
		return nomem(c);
	return 0;
}

/* Register the process with the writer the first time an event needs it. */
static int ensure_proc(struct chrome *c, uint32_t idx, uint32_t *id)
{
	struct proc *p = &c->procs[idx];

	*id = TFT_NONE;
	if (p->id == TFT_NONE) {
		struct tft_process wp;
		memset(&wp, 0, sizeof(wp));
		wp.name = p->name;
		wp.pid = p->pid;
		wp.rank = -1;
		wp.sort_index = p->sort_index;
		wp.labels = p->labels;
		p->id = tft_writer_add_process(c->w, &wp);
		if (p->id == TFT_NONE)
			return tft_error_set(c->err, TFT_ENOMEM, -1, "cannot register a process");
	}
	*id = p->id;
	return 0;
}

static int add_track(struct chrome *c, uint32_t proc_idx, uint32_t kind, uint32_t name, int64_t tid,
		     int32_t sort_index, uint32_t *track)
{
	struct tft_track t;
	uint32_t pid;
	int rc = ensure_proc(c, proc_idx, &pid);

	if (rc)
		return rc;
	memset(&t, 0, sizeof(t));
	t.process = pid;
	t.kind = kind;
	t.name = name;
	t.tid = tid;
	t.sort_index = sort_index;
	*track = tft_writer_add_track(c->w, &t);
	if (*track == TFT_NONE)
		return tft_error_set(c->err, TFT_ENOMEM, -1, "cannot register a track");
	return 0;
}

static int get_thread(struct chrome *c, const struct xid *pid, const struct xid *tid, uint32_t *idx)
{
	struct hkey k;
	uint32_t proc, sid = 0;
	int64_t iv = 0;
	bool is_str = false;
	int rc;

	if (pid->kind != 2 && tid->kind != 2 && c->last_thread != TFT_NONE &&
	    (pid->kind ? pid->i : 0) == c->last_pid && (tid->kind ? tid->i : 0) == c->last_tid) {
		*idx = c->last_thread;
		return 0;
	}
	if ((rc = get_proc(c, pid, &proc)))
		return rc;
	if (tid->kind == 1) {
		iv = tid->i;
	} else if (tid->kind == 2 && !digits_to_i64(&tid->s, &iv)) {
		is_str = true;
		if ((rc = intern(c, tid->s.ptr, tid->s.len, &sid)))
			return rc;
	}
	k = is_str ? mkkey(K_THREAD, 1, proc, sid) : mkkey(K_THREAD, 0, proc, (uint64_t)iv);
	*idx = hmap_get(&c->map, &k);
	if (*idx == TFT_NONE) {
		if (vec_grow((void **)&c->threads, &c->cap_threads, (uint64_t)c->nthreads + 1,
			     sizeof(*c->threads)))
			return nomem(c);
		struct thread *t = &c->threads[c->nthreads];
		memset(t, 0, sizeof(*t));
		t->tid = is_str ? SYNTH_ID_BASE + c->next_synth++ : iv;
		t->proc = proc;
		t->track = TFT_NONE;
		t->name = sid;
		*idx = c->nthreads++;
		if (hmap_put(&c->map, &k, *idx))
			return nomem(c);
	}
	if (pid->kind != 2 && tid->kind != 2) {
		c->last_pid = pid->kind ? pid->i : 0;
		c->last_tid = tid->kind ? tid->i : 0;
		c->last_thread = *idx;
	}
	return 0;
}

static int thread_track(struct chrome *c, uint32_t idx, uint32_t *track)
{
	struct thread *t = &c->threads[idx];

	if (t->track == TFT_NONE) {
		int rc = add_track(c, t->proc, thread_kind(c, t), t->name, t->tid, t->sort_index,
				   &t->track);
		if (rc)
			return rc;
		t = &c->threads[idx];
	}
	*track = t->track;
	return 0;
}

/* Track of the event's (pid, tid). */
static int event_track(struct chrome *c, const struct cev *e, uint32_t *track, uint32_t *tidx)
{
	uint32_t idx;
	int rc = get_thread(c, &e->pid, &e->tid, &idx);

	if (rc)
		return rc;
	if (tidx)
		*tidx = idx;
	return thread_track(c, idx, track);
}

/* A keyed per-process track (counter / async / object), created on first use. */
static int keyed_track(struct chrome *c, const struct hkey *k, uint32_t proc, uint32_t kind,
		       uint32_t name, uint32_t *track)
{
	int rc;

	*track = hmap_get(&c->map, k);
	if (*track != TFT_NONE)
		return 0;
	if ((rc = add_track(c, proc, kind, name, 0, 0, track)))
		return rc;
	if (hmap_put(&c->map, k, *track))
		return nomem(c);
	return 0;
}

/* ---- arguments --------------------------------------------------------------- */

/* Intern the current event's parsed args into c->args. */
static int intern_args(struct chrome *c)
{
	int rc;

	c->nargs = 0;
	if (c->npargs == 0)
		return 0;
	if (vec_grow((void **)&c->args, &c->cap_args, c->npargs, sizeof(*c->args)))
		return nomem(c);
	for (uint32_t i = 0; i < c->npargs; i++) {
		const struct parg *p = &c->pargs[i];
		struct tft_arg *a = &c->args[i];
		if ((rc = intern(c, p->key.ptr, p->key.len, &a->key)))
			return rc;
		a->type = p->type;
		switch (p->type) {
		case TFT_ARG_STR:
		case TFT_ARG_JSON:
			if ((rc = intern(c, p->s.ptr, p->s.len, &a->v.str)))
				return rc;
			break;
		case TFT_ARG_DOUBLE:
			a->v.d = p->d;
			break;
		default:
			a->v.i = p->i;
			break;
		}
	}
	c->nargs = c->npargs;
	return 0;
}

/* Merge `add` into the arg array *args (same key: replaced). */
static int merge_args(struct chrome *c, struct tft_arg **args, uint32_t *n, uint32_t *cap,
		      const struct tft_arg *add, uint32_t nadd)
{
	for (uint32_t i = 0; i < nadd; i++) {
		uint32_t j;
		for (j = 0; j < *n; j++)
			if ((*args)[j].key == add[i].key)
				break;
		if (j == *n) {
			if (*n >= MAX_ARGS)
				continue;
			if (vec_grow((void **)args, cap, (uint64_t)*n + 1, sizeof(**args)))
				return nomem(c);
			(*n)++;
		}
		(*args)[j] = add[i];
	}
	return 0;
}

static const struct parg *find_parg(const struct chrome *c, const char *key)
{
	size_t n = strlen(key);

	for (uint32_t i = 0; i < c->npargs; i++)
		if (str_eq(&c->pargs[i].key, key, n))
			return &c->pargs[i];
	return NULL;
}

/* ---- output helpers --------------------------------------------------------------- */

/* to - from, never negative, saturated (hostile inputs carry any int64). */
static inline int64_t span_ns(int64_t from, int64_t to)
{
	int64_t d;

	if (to <= from)
		return 0;
	return __builtin_sub_overflow(to, from, &d) ? INT64_MAX : d;
}

static void note_end(struct chrome *c, int64_t ts, int64_t dur)
{
	if (!c->have_end || ts < c->trace_start)
		c->trace_start = ts;
	int64_t end = ts;

	if (dur > 0 && !__builtin_add_overflow(ts, dur, &end)) {
		/* end = ts + dur */
	} else if (dur > 0) {
		end = INT64_MAX;
	}
	if (!c->have_end || end > c->trace_end) {
		c->trace_end = end;
		c->have_end = true;
	}
}

static int push(struct chrome *c, uint32_t track, int kind, uint8_t flags, int64_t ts, int64_t dur,
		double value, uint32_t name, uint32_t cat, const struct tft_arg *args, uint32_t nargs)
{
	struct tft_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.ts_ns = ts;
	int64_t room = ts > 0 ? INT64_MAX - ts : INT64_MAX; /* keep ts + dur representable */
	ev.dur_ns = dur < 0 ? 0 : dur > room ? room : dur;
	ev.value = value;
	ev.track = track;
	ev.name = name;
	ev.cat = cat;
	ev.count = 1;
	ev.kind = (uint8_t)kind;
	ev.flags = flags;
	ev.nargs = (uint16_t)(nargs > MAX_ARGS ? MAX_ARGS : nargs);
	ev.args = ev.nargs ? args : NULL;
	return tft_sorter_push(c->sorter, &ev, c->err);
}

static int add_flow(struct chrome *c, uint64_t id, uint32_t name, uint32_t cat, uint32_t src_track,
		    int64_t src_ts, uint32_t dst_track, int64_t dst_ts, uint32_t flags)
{
	if (vec_grow((void **)&c->flows, &c->cap_flows, (uint64_t)c->nflows + 1, sizeof(*c->flows)))
		return nomem(c);
	struct tft_flow *f = &c->flows[c->nflows++];
	memset(f, 0, sizeof(*f));
	f->flow_id = id;
	f->name = name;
	f->cat = cat;
	f->src_track = src_track;
	f->src_ts_ns = src_track == TFT_NONE ? 0 : src_ts;
	f->dst_track = dst_track;
	f->dst_ts_ns = dst_track == TFT_NONE ? 0 : dst_ts;
	f->flags = flags;
	if (flags & TFT_FLOWF_UNMATCHED)
		c->unmatched_flows++;
	return 0;
}

/* Kineto's ProfilerStep#N slices become steps. */
static int maybe_step(struct chrome *c, const char *name, size_t len, const struct tft_json_str *cat,
		      uint32_t name_id, uint32_t proc_idx, int64_t ts, int64_t dur)
{
	static const char pfx[] = "ProfilerStep#";
	int64_t idx;
	uint32_t pid;
	int rc;

	if (len <= sizeof(pfx) - 1 || memcmp(name, pfx, sizeof(pfx) - 1) != 0)
		return 0;
	if (cat && contains(cat->ptr, cat->len, "gpu"))
		return 0; /* the GPU-side copy of the annotation */
	if (tft_json_number_to_i64(name + sizeof(pfx) - 1, len - (sizeof(pfx) - 1), &idx) || idx < 0)
		return 0;
	if ((rc = ensure_proc(c, proc_idx, &pid)))
		return rc;
	if (vec_grow((void **)&c->steps, &c->cap_steps, (uint64_t)c->nsteps + 1, sizeof(*c->steps)))
		return nomem(c);
	struct tft_step *s = &c->steps[c->nsteps++];
	memset(s, 0, sizeof(*s));
	s->index = idx;
	s->name = name_id;
	s->process = pid;
	s->start_ns = ts;
	s->dur_ns = dur < 0 ? 0 : dur;
	s->traced = true;
	return 0;
}

/* ---- spans (async slices, objects) ----------------------------------------------- */

static int span_alloc(struct chrome *c, uint32_t *idx)
{
	*idx = TFT_NONE;
	if (c->free_span != TFT_NONE) {
		*idx = c->free_span;
		c->free_span = c->spans[*idx].next_free;
	} else {
		if (vec_grow((void **)&c->spans, &c->cap_spans, (uint64_t)c->nspans + 1, sizeof(*c->spans)))
			return nomem(c);
		*idx = c->nspans++;
		c->spans[*idx].args = NULL;
		c->spans[*idx].cap_args = 0;
	}
	struct span *s = &c->spans[*idx];
	s->nargs = 0;
	s->prev = TFT_NONE;
	s->seq = c->span_seq++;
	return 0;
}

static void span_free(struct chrome *c, uint32_t idx)
{
	struct span *s = &c->spans[idx];

	s->kind = SPAN_FREE;
	s->nargs = 0;
	s->next_free = c->free_span;
	c->free_span = idx;
}

/* Open a span under key k (spans with the same key stack up). */
static int span_open(struct chrome *c, const struct hkey *k, uint8_t kind, int64_t ts, uint32_t track,
		     uint32_t name, uint32_t cat, uint32_t proc, uint64_t id, uint32_t *out)
{
	uint32_t idx;
	int rc = span_alloc(c, &idx);

	if (rc)
		return rc;
	struct span *s = &c->spans[idx];
	s->key = *k;
	s->kind = kind;
	s->ts = ts;
	s->track = track;
	s->name = name;
	s->cat = cat;
	s->proc = proc;
	s->id = id;
	s->prev = hmap_get(&c->map, k);
	if (hmap_put(&c->map, k, idx))
		return nomem(c);
	*out = idx;
	return 0;
}

/* Unlink span idx (the newest under its key) from the map. */
static int span_unlink(struct chrome *c, uint32_t idx)
{
	struct span *s = &c->spans[idx];
	struct hkey k = s->key;

	if (s->prev == TFT_NONE) {
		hmap_del(&c->map, &k);
		return 0;
	}
	if (hmap_put(&c->map, &k, s->prev))
		return nomem(c);
	return 0;
}

/* ---- phases ------------------------------------------------------------------ */

static int pflow_alloc(struct chrome *c, uint32_t *pi)
{
	*pi = TFT_NONE;
	if (c->free_pflow != TFT_NONE) {
		*pi = c->free_pflow;
		c->free_pflow = c->pflows[*pi].next;
		return 0;
	}
	if (vec_grow((void **)&c->pflows, &c->cap_pflows, (uint64_t)c->npflows + 1, sizeof(*c->pflows)))
		return nomem(c);
	*pi = c->npflows++;
	return 0;
}

static void pflow_free(struct chrome *c, uint32_t pi)
{
	c->pflows[pi].live = false;
	c->pflows[pi].next = c->free_pflow;
	c->free_pflow = pi;
}

static struct hkey end_key(const struct hkey *k)
{
	struct hkey e = *k;

	e.a = (e.a & ((1ULL << 56) - 1)) | ((uint64_t)K_FLOW_END << 56);
	return e;
}

/* Flow halves waiting under one key are chained; scans look this far. */
#define CHAIN_SCAN 256

/*
 * Take the waiting half under key k that pairs with a half at ts: for an
 * end (want_start), the earliest start at or before ts; for a start, the
 * earliest end at or after ts. TFT_NONE if none.
 */
static int chain_take(struct chrome *c, const struct hkey *k, int64_t ts, bool want_start,
		      uint32_t *out)
{
	uint32_t head = hmap_get(&c->map, k), best = TFT_NONE, bprev = TFT_NONE, n = 0;

	*out = TFT_NONE;
	for (uint32_t i = head, prev = TFT_NONE; i != TFT_NONE && n < CHAIN_SCAN;
	     prev = i, i = c->pflows[i].next, n++) {
		const struct pflow *p = &c->pflows[i];
		if ((want_start ? p->ts <= ts : p->ts >= ts) &&
		    (best == TFT_NONE || p->ts < c->pflows[best].ts)) {
			best = i;
			bprev = prev;
		}
	}
	if (best == TFT_NONE)
		return 0;
	if (bprev != TFT_NONE)
		c->pflows[bprev].next = c->pflows[best].next;
	else if (c->pflows[best].next == TFT_NONE)
		hmap_del(&c->map, k);
	else if (hmap_put(&c->map, k, c->pflows[best].next))
		return nomem(c);
	*out = best;
	return 0;
}

static int chain_push(struct chrome *c, const struct hkey *k, bool is_end, uint64_t id, uint32_t name,
		      uint32_t cat, uint32_t track, int64_t ts, uint32_t flags, bool stepped)
{
	uint32_t pi;
	int rc = pflow_alloc(c, &pi);

	if (rc)
		return rc;
	struct pflow *p = &c->pflows[pi];
	p->id = id;
	p->name = name;
	p->cat = cat;
	p->track = track;
	p->ts = ts;
	p->flags = flags;
	p->stepped = stepped;
	p->live = true;
	p->is_end = is_end;
	p->next = hmap_get(&c->map, k);
	return hmap_put(&c->map, k, pi) ? nomem(c) : 0;
}

/*
 * A segment ends at (track, ts): pair it with the earliest open start of
 * its key (first in, first out: Chrome reuses ids for back-to-back flows),
 * or park it until its start shows up (Kineto writes many 'f' before 's').
 */
static int flow_end(struct chrome *c, const struct hkey *k, uint64_t id, uint32_t name, uint32_t cat,
		    uint32_t track, int64_t ts, uint32_t flags)
{
	uint32_t pi;
	int rc = chain_take(c, k, ts, true, &pi);

	if (rc)
		return rc;
	if (pi == TFT_NONE) {
		struct hkey ek = end_key(k);
		return chain_push(c, &ek, true, id, name, cat, track, ts, flags, false);
	}
	struct pflow p = c->pflows[pi];
	pflow_free(c, pi);
	return add_flow(c, p.id, p.name, p.cat, p.track, p.ts, track, ts, flags);
}

/* A segment starts at (track, ts): pair it with a parked end, or open it. */
static int flow_start(struct chrome *c, const struct hkey *k, uint64_t id, uint32_t name, uint32_t cat,
		      uint32_t track, int64_t ts, bool stepped)
{
	struct hkey ek = end_key(k);
	uint32_t pi;
	int rc = chain_take(c, &ek, ts, false, &pi);

	if (rc)
		return rc;
	if (pi == TFT_NONE)
		return chain_push(c, k, false, id, name, cat, track, ts, 0, stepped);
	struct pflow o = c->pflows[pi];
	pflow_free(c, pi);
	return add_flow(c, id, name, cat, track, ts, o.track, o.ts, o.flags);
}

static int do_complete(struct chrome *c, const struct cev *e, uint32_t name, uint32_t cat)
{
	uint32_t track, tidx;
	int rc;

	if ((rc = event_track(c, e, &track, &tidx)) || (rc = intern_args(c)))
		return rc;
	if ((rc = push(c, track, TFT_EV_SLICE, 0, e->ts, e->dur, 0, name, cat, c->args, c->nargs)))
		return rc;
	if (e->name.len > 13 && e->name.ptr[0] == 'P' &&
	    (rc = maybe_step(c, e->name.ptr, e->name.len, &e->cat, name, c->threads[tidx].proc, e->ts,
			     e->dur)))
		return rc;
	/* Flow events v2: bind_id + flow_in / flow_out on the slice itself. */
	if (e->bind_id.kind && (e->flow_in || e->flow_out)) {
		uint64_t id = xid_value(&e->bind_id);
		struct hkey k = mkkey(K_FLOW, 1ULL << 40, 0, id); /* v2 ids: own namespace */
		if (e->flow_in && (rc = flow_end(c, &k, id, name, cat, track, e->ts, 0)))
			return rc;
		if (e->flow_out && (rc = flow_start(c, &k, id, name, cat, track, e->ts, e->flow_in)))
			return rc;
	}
	return 0;
}

static int do_begin(struct chrome *c, const struct cev *e, uint32_t name, uint32_t cat)
{
	uint32_t track, tidx;
	int rc;

	if ((rc = event_track(c, e, &track, &tidx)) || (rc = intern_args(c)))
		return rc;
	struct thread *t = &c->threads[tidx];
	if (vec_grow((void **)&t->open, &t->cap_open, (uint64_t)t->nopen + 1, sizeof(*t->open)) ||
	    vec_grow((void **)&t->args, &t->cap_args, (uint64_t)t->nargs + c->nargs, sizeof(*t->args)))
		return nomem(c);
	struct open_slice *o = &t->open[t->nopen++];
	o->ts = e->ts;
	o->name = name;
	o->cat = cat;
	o->args_start = t->nargs;
	if (c->nargs)
		memcpy(t->args + t->nargs, c->args, c->nargs * sizeof(*c->args));
	t->nargs += c->nargs;
	return 0;
}

static int do_end(struct chrome *c, const struct cev *e)
{
	uint32_t track, tidx, nargs;
	int rc;

	if ((rc = event_track(c, e, &track, &tidx)) || (rc = intern_args(c)))
		return rc;
	struct thread *t = &c->threads[tidx];
	if (t->nopen == 0) {
		c->unmatched_ends++;
		return 0;
	}
	struct open_slice o = t->open[--t->nopen];
	/* E's args join the slice's: the open B's args sit on top of the stack */
	if (vec_grow((void **)&t->args, &t->cap_args, (uint64_t)t->nargs + c->nargs, sizeof(*t->args)))
		return nomem(c);
	nargs = t->nargs - o.args_start;
	for (uint32_t i = 0; i < c->nargs; i++) {
		struct tft_arg *base = t->args + o.args_start;
		uint32_t j;
		for (j = 0; j < nargs; j++)
			if (base[j].key == c->args[i].key)
				break;
		if (j == nargs) {
			if (nargs >= MAX_ARGS)
				continue;
			nargs++;
		}
		base[j] = c->args[i];
	}
	rc = push(c, track, TFT_EV_SLICE, 0, o.ts, span_ns(o.ts, e->ts), 0, o.name, o.cat,
		  nargs ? t->args + o.args_start : NULL, nargs);
	t->nargs = o.args_start;
	if (rc)
		return rc;
	size_t nl;
	const char *nm = wstr(c, o.name, &nl);
	if (nl > 13 && nm[0] == 'P') {
		size_t cl;
		const char *cs = wstr(c, o.cat, &cl);
		struct tft_json_str cj = { cs, cl };
		return maybe_step(c, nm, nl, &cj, o.name, t->proc, o.ts, span_ns(o.ts, e->ts));
	}
	return 0;
}

static int global_track(struct chrome *c, uint32_t *track)
{
	int rc;

	if (c->global_proc == TFT_NONE) {
		uint32_t name;
		if ((rc = intern(c, "Global", 6, &name)) ||
		    (rc = new_proc(c, SYNTH_ID_BASE + c->next_synth++, name, &c->global_proc)))
			return rc;
		if ((rc = add_track(c, c->global_proc, TFT_TRACK_THREAD, name, 0, 0, &c->global_track)))
			return rc;
	}
	*track = c->global_track;
	return 0;
}

static int do_instant(struct chrome *c, const struct cev *e, uint32_t name, uint32_t cat)
{
	uint32_t track;
	uint8_t flags = 0;
	int rc;

	if (e->s.len == 1 && e->s.ptr[0] == 'g') {
		flags = TFT_EVF_GLOBAL;
		rc = global_track(c, &track);
	} else if (e->s.len == 1 && e->s.ptr[0] == 'p') {
		uint32_t pidx;
		flags = TFT_EVF_PROCESS;
		if ((rc = get_proc(c, &e->pid, &pidx)))
			return rc;
		if (c->procs[pidx].instants == TFT_NONE) {
			uint32_t tn, tr;
			if ((rc = intern(c, "Instants", 8, &tn)) ||
			    (rc = add_track(c, pidx, TFT_TRACK_THREAD, tn, 0, 0, &tr)))
				return rc;
			c->procs[pidx].instants = tr;
		}
		track = c->procs[pidx].instants;
	} else {
		rc = event_track(c, e, &track, NULL);
	}
	if (rc || (rc = intern_args(c)))
		return rc;
	return push(c, track, TFT_EV_INSTANT, flags, e->ts, 0, 0, name, cat, c->args, c->nargs);
}

static int do_counter(struct chrome *c, const struct cev *e, uint32_t name, uint32_t cat)
{
	uint32_t pidx;
	int rc;

	if ((rc = get_proc(c, &e->pid, &pidx)))
		return rc;
	for (uint32_t i = 0; i < c->npargs; i++) {
		const struct parg *p = &c->pargs[i];
		double v;
		uint32_t key, tname, track;
		if (p->type == TFT_ARG_INT)
			v = (double)p->i;
		else if (p->type == TFT_ARG_DOUBLE)
			v = p->d;
		else if (p->type == TFT_ARG_STR && p->s.len > 0 &&
			 tft_json_number_to_double(p->s.ptr, p->s.len, &v) == 0)
			;
		else
			continue;
		if ((rc = intern(c, p->key.ptr, p->key.len, &key)))
			return rc;
		struct hkey k = mkkey(K_COUNTER, pidx, name, key);
		track = hmap_get(&c->map, &k);
		if (track == TFT_NONE) {
			if ((p->key.len == e->name.len && memcmp(p->key.ptr, e->name.ptr, e->name.len) == 0) ||
			    STR_EQ(&p->key, "value")) {
				tname = name;
			} else {
				size_t n = e->name.len + 1 + p->key.len;
				char *tmp = malloc(n);
				if (!tmp)
					return nomem(c);
				memcpy(tmp, e->name.ptr, e->name.len);
				tmp[e->name.len] = '.';
				memcpy(tmp + e->name.len + 1, p->key.ptr, p->key.len);
				rc = intern(c, tmp, n, &tname);
				free(tmp);
				if (rc)
					return rc;
			}
			if ((rc = keyed_track(c, &k, pidx, TFT_TRACK_COUNTER, tname, &track)))
				return rc;
		}
		if ((rc = push(c, track, TFT_EV_COUNTER, 0, e->ts, 0, v, name, cat, NULL, 0)))
			return rc;
	}
	return 0;
}

static void note_tf_name(struct chrome *c, const struct tft_json_str *n)
{
	if (c->tf_timeline)
		return;
	/* "/job:.../device:GPU:0 Compute", "/gpu:0/stream:12 Tensors", "Allocators" */
	if (STR_EQ(n, "Allocators") ||
	    (n->len > 0 && n->ptr[0] == '/' &&
	     (ends_with(n->ptr, n->len, " Compute") || ends_with(n->ptr, n->len, " Tensors"))))
		c->tf_timeline = true;
}

static int do_meta(struct chrome *c, const struct cev *e)
{
	const struct parg *a;
	uint32_t idx, sid;
	int rc;

	if (STR_EQ(&e->name, "process_name") || STR_EQ(&e->name, "process_labels") ||
	    STR_EQ(&e->name, "process_sort_index")) {
		if ((rc = get_proc(c, &e->pid, &idx)))
			return rc;
		struct proc *p = &c->procs[idx];
		struct tft_process *wp;
		if (e->name.ptr[8] == 'n') {
			if (!(a = find_parg(c, "name")) || a->type != TFT_ARG_STR)
				return 0;
			note_tf_name(c, &a->s);
			if ((rc = intern(c, a->s.ptr, a->s.len, &sid)))
				return rc;
			p->name = sid;
			if (p->id != TFT_NONE && (wp = tft_writer_process(c->w, p->id)))
				wp->name = sid;
		} else if (e->name.ptr[8] == 'l') {
			if (!(a = find_parg(c, "labels")) || a->type != TFT_ARG_STR)
				return 0;
			if ((rc = intern(c, a->s.ptr, a->s.len, &sid)))
				return rc;
			p->labels = sid;
			if (p->id != TFT_NONE && (wp = tft_writer_process(c->w, p->id)))
				wp->labels = sid;
		} else {
			if (!(a = find_parg(c, "sort_index")) || a->type != TFT_ARG_INT)
				return 0;
			p->sort_index = (int32_t)a->i;
			if (p->id != TFT_NONE && (wp = tft_writer_process(c->w, p->id)))
				wp->sort_index = p->sort_index;
		}
		return 0;
	}
	if (STR_EQ(&e->name, "thread_name") || STR_EQ(&e->name, "thread_sort_index")) {
		if ((rc = get_thread(c, &e->pid, &e->tid, &idx)))
			return rc;
		struct thread *t = &c->threads[idx];
		struct tft_track *wt;
		if (e->name.ptr[7] == 'n') {
			if (!(a = find_parg(c, "name")) || a->type != TFT_ARG_STR)
				return 0;
			if ((rc = intern(c, a->s.ptr, a->s.len, &sid)))
				return rc;
			t = &c->threads[idx];
			t->name = sid;
			if (t->track != TFT_NONE && (wt = tft_writer_track(c->w, t->track))) {
				wt->name = sid;
				wt->kind = thread_kind(c, t);
			}
		} else {
			if (!(a = find_parg(c, "sort_index")) || a->type != TFT_ARG_INT)
				return 0;
			t->sort_index = (int32_t)a->i;
			if (t->track != TFT_NONE && (wt = tft_writer_track(c->w, t->track)))
				wt->sort_index = t->sort_index;
		}
	}
	return 0;
}

static int do_flow(struct chrome *c, const struct cev *e, char ph, uint32_t name, uint32_t cat)
{
	uint32_t track, scope = 0, pidx = 0;
	uint64_t id = xid_value(&e->id);
	uint32_t bind = STR_EQ(&e->bp, "e") ? TFT_FLOWF_BIND_ENCLOSING : 0;
	int rc;

	if ((rc = event_track(c, e, &track, NULL)))
		return rc;
	if (e->scope.len && (rc = intern(c, e->scope.ptr, e->scope.len, &scope)))
		return rc;
	if (e->id_local && (rc = get_proc(c, &e->pid, &pidx)))
		return rc;
	/* key: (cat, scope, id), plus the process for id2.local ids */
	struct hkey k = mkkey(K_FLOW, e->id_local ? (uint64_t)pidx + 1 : 0,
			      ((uint64_t)cat << 32) | scope, id);
	if (ph != 's' && (rc = flow_end(c, &k, id, name, cat, track, e->ts, bind)))
		return rc;
	if (ph != 'f')
		return flow_start(c, &k, id, name, cat, track, e->ts, ph == 't');
	return 0;
}

static int async_track(struct chrome *c, uint32_t pidx, uint32_t cat, uint32_t *track)
{
	struct hkey k = mkkey(K_ASYNC_TRACK, pidx, cat, 0);
	uint32_t tname = cat;
	int rc;

	if (cat == 0 && (rc = intern(c, "Async", 5, &tname)))
		return rc;
	return keyed_track(c, &k, pidx, TFT_TRACK_ASYNC, tname, track);
}

static int do_async(struct chrome *c, const struct cev *e, char ph, uint32_t name, uint32_t cat)
{
	uint32_t pidx, track, si;
	uint64_t id = xid_value(&e->id);
	int rc;

	if ((rc = get_proc(c, &e->pid, &pidx)) || (rc = async_track(c, pidx, cat, &track)) ||
	    (rc = intern_args(c)))
		return rc;
	if (ph == 'n' || ph == 'T' || ph == 'p')
		return push(c, track, TFT_EV_INSTANT, 0, e->ts, 0, 0, name, cat, c->args, c->nargs);
	struct hkey k = mkkey(K_ASYNC, pidx, ((uint64_t)cat << 32) | name, id);
	if (ph == 'b' || ph == 'S') {
		if ((rc = span_open(c, &k, SPAN_ASYNC, e->ts, track, name, cat, pidx, id, &si)))
			return rc;
		struct span *s = &c->spans[si];
		return merge_args(c, &s->args, &s->nargs, &s->cap_args, c->args, c->nargs);
	}
	/* 'e' / 'F' */
	si = hmap_get(&c->map, &k);
	if (si == TFT_NONE && e->name.len == 0) {
		/* an end without a name closes the newest open span with that id */
		uint64_t best = 0;
		for (uint32_t i = 0; i < c->nspans; i++) {
			const struct span *s = &c->spans[i];
			if (s->kind == SPAN_ASYNC && s->proc == pidx && s->cat == cat && s->id == id &&
			    (si == TFT_NONE || s->seq > best)) {
				/* only the newest under its own key can be closed */
				if (hmap_get(&c->map, &s->key) != i)
					continue;
				si = i;
				best = s->seq;
			}
		}
	}
	if (si == TFT_NONE) {
		c->unmatched_ends++;
		return 0;
	}
	struct span *s = &c->spans[si];
	if ((rc = merge_args(c, &s->args, &s->nargs, &s->cap_args, c->args, c->nargs)))
		return rc;
	s = &c->spans[si];
	if ((rc = push(c, s->track, TFT_EV_SLICE, 0, s->ts, span_ns(s->ts, e->ts), 0, s->name, s->cat, s->args,
		       s->nargs)))
		return rc;
	if ((rc = span_unlink(c, si)))
		return rc;
	span_free(c, si);
	return 0;
}

static int do_object(struct chrome *c, const struct cev *e, char ph, uint32_t name, uint32_t cat)
{
	uint32_t pidx, track, si;
	uint64_t id = xid_value(&e->id);
	int rc;

	if ((rc = get_proc(c, &e->pid, &pidx)))
		return rc;
	struct hkey tk = mkkey(K_OBJ_TRACK, pidx, name, 0);
	if ((rc = keyed_track(c, &tk, pidx, TFT_TRACK_OBJECT, name, &track)) || (rc = intern_args(c)))
		return rc;
	struct hkey k = mkkey(K_OBJ, pidx, name, id);
	si = hmap_get(&c->map, &k);
	if (ph == 'N') {
		struct tft_arg ida;
		if ((rc = span_open(c, &k, SPAN_OBJECT, e->ts, track, name, cat, pidx, id, &si)))
			return rc;
		ida.key = c->s_id;
		if (e->id.kind == 2) {
			ida.type = TFT_ARG_STR;
			if ((rc = intern(c, e->id.s.ptr, e->id.s.len, &ida.v.str)))
				return rc;
		} else {
			ida.type = TFT_ARG_INT;
			ida.v.i = e->id.i;
		}
		struct span *s = &c->spans[si];
		if ((rc = merge_args(c, &s->args, &s->nargs, &s->cap_args, &ida, 1)))
			return rc;
		s = &c->spans[si];
		return merge_args(c, &s->args, &s->nargs, &s->cap_args, c->args, c->nargs);
	}
	if (ph == 'O') {
		if ((rc = push(c, track, TFT_EV_INSTANT, 0, e->ts, 0, 0, name, cat, c->args, c->nargs)))
			return rc;
		if (si != TFT_NONE) {
			struct span *s = &c->spans[si];
			return merge_args(c, &s->args, &s->nargs, &s->cap_args, c->args, c->nargs);
		}
		return 0;
	}
	/* 'D' without 'N': the object predates the trace; nothing to draw */
	if (si == TFT_NONE)
		return 0;
	struct span *s = &c->spans[si];
	if ((rc = merge_args(c, &s->args, &s->nargs, &s->cap_args, c->args, c->nargs)))
		return rc;
	s = &c->spans[si];
	if ((rc = push(c, s->track, TFT_EV_SLICE, 0, s->ts, span_ns(s->ts, e->ts), 0, s->name, s->cat, s->args,
		       s->nargs)))
		return rc;
	if ((rc = span_unlink(c, si)))
		return rc;
	span_free(c, si);
	return 0;
}

static bool is_kineto_cat(const char *s, size_t n)
{
	switch (n) {
	case 4: return memcmp(s, "ac2g", 4) == 0;
	case 6: return memcmp(s, "cpu_op", 6) == 0 || memcmp(s, "kernel", 6) == 0 ||
		       memcmp(s, "Kernel", 6) == 0;
	case 7: return memcmp(s, "Runtime", 7) == 0;
	case 8: return memcmp(s, "Operator", 8) == 0;
	case 12: return memcmp(s, "cuda_runtime", 12) == 0;
	default: return false;
	}
}

static int commit(struct chrome *c, const struct cev *e)
{
	uint32_t name = 0, cat = 0;
	char ph;
	int rc;

	c->events++;
	if (e->ph.len != 1) {
		c->skipped++;
		return 0;
	}
	ph = e->ph.ptr[0];
	if (ph == 'M')
		return do_meta(c, e);
	note_end(c, e->ts, ph == 'X' ? e->dur : 0); /* no ts: 0 */
	if (!strchr("XBEiIRCstfbeSTFnpNOD", ph) || ph == '\0') {
		c->skipped++;
		return 0;
	}
	if ((e->name.len && (rc = intern(c, e->name.ptr, e->name.len, &name))) ||
	    (e->cat.len && (rc = intern(c, e->cat.ptr, e->cat.len, &cat))))
		return rc;
	if (!c->kineto && cat && cat != c->last_cat_checked) {
		c->last_cat_checked = cat;
		if (is_kineto_cat(e->cat.ptr, e->cat.len))
			c->kineto = true;
	}
	switch (ph) {
	case 'X': return do_complete(c, e, name, cat);
	case 'B': return do_begin(c, e, name, cat);
	case 'E': return do_end(c, e);
	case 'i': case 'I': case 'R': return do_instant(c, e, name, cat);
	case 'C': return do_counter(c, e, name, cat);
	case 's': case 't': case 'f': return do_flow(c, e, ph, name, cat);
	case 'N': case 'O': case 'D': return do_object(c, e, ph, name, cat);
	default: return do_async(c, e, ph, name, cat);
	}
}

/* ---- parsing ------------------------------------------------------------------ */

/* Enter an object value; *is_obj = false when the value was something else (consumed). */
static int enter_object(struct chrome *c, bool *is_obj)
{
	struct tft_json_value v;
	int rc = tft_json_read(&c->r, &v, c->err);

	*is_obj = false;
	if (rc)
		return rc;
	if (v.type == TFT_JSON_ARRAY)
		return tft_json_skip_rest(&c->r, c->err);
	*is_obj = v.type == TFT_JSON_OBJECT;
	return 0;
}

static inline bool is_container(const struct tft_json_value *v)
{
	return v->type == TFT_JSON_OBJECT || v->type == TFT_JSON_ARRAY;
}

/* Member values as the importer wants them (v from tft_json_next_member). */
static void val_str(const struct tft_json_value *v, struct tft_json_str *out)
{
	if (v->type == TFT_JSON_STRING || v->type == TFT_JSON_NUMBER) {
		out->ptr = v->ptr;
		out->len = v->len;
	} else {
		out->ptr = "";
		out->len = 0;
	}
}

static void val_xid(const struct tft_json_value *v, struct xid *x)
{
	x->kind = 0;
	if (v->type == TFT_JSON_NUMBER) {
		if (v->is_int && tft_json_number_to_i64(v->ptr, v->len, &x->i) == 0) {
			x->kind = 1;
		} else {
			x->kind = 2; /* fractional / huge: keyed by its text */
			x->s.ptr = v->ptr;
			x->s.len = v->len;
		}
	} else if (v->type == TFT_JSON_STRING) {
		x->kind = 2;
		x->s.ptr = v->ptr;
		x->s.len = v->len;
	}
}

static int val_time(struct chrome *c, const struct tft_json_value *v, int64_t *out, bool *has)
{
	*has = false;
	if (v->type == TFT_JSON_NUMBER) {
		if (tft_json_number_to_ns(v->ptr, v->len, out))
			return tft_error_set(c->err, TFT_EFORMAT, v->offset,
					     "expected a time in microseconds within the int64 nanosecond range");
		*has = true;
	} else if (v->type == TFT_JSON_STRING) {
		*has = tft_json_number_to_ns(v->ptr, v->len, out) == 0;
	}
	return 0;
}

static bool val_bool(const struct tft_json_value *v)
{
	return v->type == TFT_JSON_TRUE ||
	       (v->type == TFT_JSON_NUMBER && !(v->len == 1 && v->ptr[0] == '0'));
}

/* A string-ish value read whole (top-level keys). */
static int read_str(struct chrome *c, struct tft_json_str *out)
{
	struct tft_json_value v;
	int rc = tft_json_read_flat(&c->r, &v, false, c->err);

	if (rc)
		return rc;
	val_str(&v, out);
	return 0;
}

/* "id2": {"local": ...} or {"global": ...}; the '{' is next. */
static int read_id2(struct chrome *c, struct cev *e)
{
	struct tft_json_value v;
	struct tft_json_str k;
	bool is_obj;
	int rc = enter_object(c, &is_obj);

	if (rc || !is_obj)
		return rc;
	while ((rc = tft_json_next_member(&c->r, &k, &v, c->err)) == 1) {
		if (is_container(&v)) {
			if ((rc = tft_json_skip(&c->r, NULL, c->err)))
				return rc;
		} else if (STR_EQ(&k, "local") || STR_EQ(&k, "global")) {
			e->id_local = k.ptr[0] == 'l';
			val_xid(&v, &e->id);
		}
	}
	return rc;
}

/* "args": {...}; the '{' is next. */
static int read_args(struct chrome *c)
{
	struct tft_json_value v;
	struct tft_json_str k;
	bool is_obj;
	int rc = enter_object(c, &is_obj);

	if (rc || !is_obj)
		return rc;
	while ((rc = tft_json_next_member(&c->r, &k, &v, c->err)) == 1) {
		struct parg *a;
		if (c->npargs >= MAX_ARGS) {
			if (is_container(&v) && (rc = tft_json_skip(&c->r, NULL, c->err)))
				return rc;
			continue;
		}
		if (c->npargs == c->cap_pargs &&
		    vec_grow((void **)&c->pargs, &c->cap_pargs, (uint64_t)c->npargs + 1, sizeof(*c->pargs)))
			return nomem(c);
		a = &c->pargs[c->npargs];
		a->key = k;
		switch (v.type) {
		case TFT_JSON_STRING:
			a->type = TFT_ARG_STR;
			a->s.ptr = v.ptr;
			a->s.len = v.len;
			break;
		case TFT_JSON_NUMBER:
			if (v.is_int && tft_json_number_to_i64(v.ptr, v.len, &a->i) == 0) {
				a->type = TFT_ARG_INT;
			} else {
				a->type = TFT_ARG_DOUBLE;
				if (tft_json_number_to_double(v.ptr, v.len, &a->d))
					a->d = 0;
			}
			break;
		case TFT_JSON_TRUE:
		case TFT_JSON_FALSE:
			a->type = TFT_ARG_BOOL;
			a->i = v.type == TFT_JSON_TRUE;
			break;
		case TFT_JSON_OBJECT:
		case TFT_JSON_ARRAY:
			/* kept verbatim: validated so that exporters can copy it out */
			if ((rc = tft_json_skip_checked(&c->r, &a->s, c->err)))
				return rc;
			a->type = TFT_ARG_JSON;
			break;
		default:
			a->type = TFT_ARG_NULL;
			a->i = 0;
			break;
		}
		c->npargs++;
	}
	return rc;
}

/*
 * Parse one traceEvents element into *e and c->pargs. Returns 1 for an
 * event object, 0 for an element that is not an object (skipped),
 * TFT_JSON_MORE or an error.
 */
static int parse_event(struct chrome *c, struct cev *e)
{
	struct tft_json_value v;
	struct tft_json_str k;
	bool is_obj;
	int rc;

	memset(e, 0, sizeof(*e));
	c->npargs = 0;
	e->offset = tft_json_offset(&c->r); /* next_item stopped at the element's first byte */
	if ((rc = enter_object(c, &is_obj)))
		return rc;
	if (!is_obj)
		return 0;
	while ((rc = tft_json_next_member(&c->r, &k, &v, c->err)) == 1) {
		const char *p = k.ptr;
		rc = 0;
		if (tft_unlikely(is_container(&v))) {
			if (k.len == 4 && memcmp(p, "args", 4) == 0)
				rc = read_args(c);
			else if (k.len == 3 && memcmp(p, "id2", 3) == 0)
				rc = read_id2(c, e);
			else
				rc = tft_json_skip(&c->r, NULL, c->err);
			if (rc)
				return rc;
			continue;
		}
		switch (k.len) {
		case 1:
			if (p[0] == 's')
				val_str(&v, &e->s);
			break;
		case 2:
			if (p[0] == 'p' && p[1] == 'h')
				val_str(&v, &e->ph);
			else if (p[0] == 't' && p[1] == 's')
				rc = val_time(c, &v, &e->ts, &e->has_ts);
			else if (p[0] == 'i' && p[1] == 'd')
				val_xid(&v, &e->id);
			else if (p[0] == 'b' && p[1] == 'p')
				val_str(&v, &e->bp);
			break;
		case 3:
			if (memcmp(p, "pid", 3) == 0)
				val_xid(&v, &e->pid);
			else if (memcmp(p, "tid", 3) == 0)
				val_xid(&v, &e->tid);
			else if (memcmp(p, "cat", 3) == 0)
				val_str(&v, &e->cat);
			else if (memcmp(p, "dur", 3) == 0)
				rc = val_time(c, &v, &e->dur, &e->has_dur);
			break;
		case 4:
			if (memcmp(p, "name", 4) == 0)
				val_str(&v, &e->name);
			break;
		case 5:
			if (memcmp(p, "scope", 5) == 0)
				val_str(&v, &e->scope);
			break;
		case 7:
			if (memcmp(p, "bind_id", 7) == 0)
				val_xid(&v, &e->bind_id);
			else if (memcmp(p, "flow_in", 7) == 0)
				e->flow_in = val_bool(&v);
			break;
		case 8:
			if (memcmp(p, "flow_out", 8) == 0)
				e->flow_out = val_bool(&v);
			break;
		default:
			break;
		}
		if (rc)
			return rc;
	}
	if (rc)
		return rc;
	if (!e->has_dur)
		e->dur = 0;
	return 1;
}

/* ---- progress ----------------------------------------------------------------- */

static void progress(struct chrome *c, bool force)
{
	struct timespec now;

	if (!c->opts || !c->opts->progress)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	int64_t dt = (int64_t)(now.tv_sec - c->last_progress.tv_sec) * 1000000000LL +
		     (now.tv_nsec - c->last_progress.tv_nsec);
	if (!force && dt < PROGRESS_NS)
		return;
	c->last_progress = now;
	c->opts->progress(c->opts->progress_ctx, tft_source_raw_offset(c->src),
			  tft_source_raw_size(c->src), c->events);
}

/* ---- document walk --------------------------------------------------------------- */

static int refill(struct chrome *c)
{
	return tft_json_refill(&c->r, c->err);
}

static int read_events(struct chrome *c, unsigned flags)
{
	struct cev e;
	int rc;

	for (;;) {
		tft_json_mark(&c->r);
		rc = tft_json_next_item(&c->r, flags, c->err);
		if (rc == 1)
			rc = parse_event(c, &e);
		else if (rc == 0)
			return 0;
		if (rc == TFT_JSON_MORE) {
			if ((rc = refill(c)))
				return rc;
			continue;
		}
		if (rc < 0)
			return rc;
		if (rc == 0) {
			c->events++;
			c->skipped++;
			continue;
		}
		if ((rc = commit(c, &e))) {
			tft_error_set(c->err, rc, e.offset, "cannot import the event at this offset");
			return rc;
		}
		if ((c->events & (PROGRESS_EVERY - 1)) == 0)
			progress(c, false);
	}
}

/* Top-level value under a mark: run fn until it does not need more input. */
static int set_meta_str(struct chrome *c, const char *key, const struct tft_json_str *s)
{
	char *tmp = malloc(s->len + 1);
	int rc;

	if (!tmp)
		return nomem(c);
	memcpy(tmp, s->ptr, s->len);
	tmp[s->len] = '\0';
	rc = tft_writer_set_meta(c->w, key, tmp);
	free(tmp);
	return rc;
}

static int meta_json(struct chrome *c, const char *key)
{
	struct tft_json_str raw;
	int rc = tft_json_skip_checked(&c->r, &raw, c->err);
	char *tmp;
	size_t n;

	if (rc)
		return rc;
	tmp = malloc(raw.len + 1);
	if (!tmp)
		return nomem(c);
	n = tft_json_compact(raw.ptr, raw.len, tmp);
	tmp[n] = '\0';
	rc = tft_writer_set_meta(c->w, key, tmp);
	free(tmp);
	return rc;
}

static int meta_scalar(struct chrome *c, const char *key)
{
	struct tft_json_value v;
	int rc = tft_json_read_flat(&c->r, &v, true, c->err);

	if (rc)
		return rc;
	if (v.type == TFT_JSON_OBJECT || v.type == TFT_JSON_ARRAY) {
		char *tmp = malloc(v.len + 1);
		size_t n;
		if (!tmp)
			return nomem(c);
		n = tft_json_compact(v.ptr, v.len, tmp);
		tmp[n] = '\0';
		rc = tft_writer_set_meta(c->w, key, tmp);
		free(tmp);
		return rc;
	}
	if (v.type == TFT_JSON_STRING || v.type == TFT_JSON_NUMBER) {
		struct tft_json_str s = { v.ptr, v.len };
		return set_meta_str(c, key, &s);
	}
	return 0;
}

static int read_distributed(struct chrome *c)
{
	struct tft_json_value v;
	struct tft_json_str k;
	bool is_obj;
	int rc = enter_object(c, &is_obj);

	if (rc || !is_obj)
		return rc;
	while ((rc = tft_json_next_key(&c->r, &k, c->err)) == 1) {
		if (STR_EQ(&k, "rank")) {
			int64_t r;
			if ((rc = tft_json_read_flat(&c->r, &v, false, c->err)))
				return rc;
			if (v.type == TFT_JSON_NUMBER && tft_json_number_to_i64(v.ptr, v.len, &r) == 0 &&
			    r >= 0 && r <= INT32_MAX) {
				c->has_rank = true;
				c->rank = (int32_t)r;
			}
		} else if (STR_EQ(&k, "backend")) {
			rc = meta_scalar(c, "distributed_backend");
		} else if (STR_EQ(&k, "world_size")) {
			rc = meta_scalar(c, "world_size");
		} else {
			rc = tft_json_skip(&c->r, NULL, c->err);
		}
		if (rc)
			return rc;
	}
	return rc;
}

static int read_base_time(struct chrome *c)
{
	struct tft_json_value v;
	int rc = tft_json_read_flat(&c->r, &v, false, c->err);
	int64_t ns;

	if (rc)
		return rc;
	if (v.type != TFT_JSON_NUMBER && v.type != TFT_JSON_STRING)
		return 0;
	/* already nanoseconds: an integer (a fraction is rounded) */
	if (tft_json_number_to_i64(v.ptr, v.len, &ns) != 0) {
		double d;
		if (tft_json_number_to_double(v.ptr, v.len, &d) || !(d > -9.2e18 && d < 9.2e18))
			return tft_error_set(c->err, TFT_EFORMAT, v.offset,
					     "expected baseTimeNanoseconds as an integer number of nanoseconds");
		ns = (int64_t)(d < 0 ? d - 0.5 : d + 0.5);
	}
	c->shift_ns = ns;
	c->kineto = true;
	char buf[32];
	snprintf(buf, sizeof(buf), "%lld", (long long)ns);
	return tft_writer_set_meta(c->w, "base_time_ns", buf);
}

/* Handle one top-level key's value (the key was consumed). */
static int top_value(struct chrome *c, const struct tft_json_str *k)
{
	if (STR_EQ(k, "displayTimeUnit"))
		return meta_scalar(c, "display_time_unit");
	if (STR_EQ(k, "otherData"))
		return meta_json(c, "other_data");
	if (STR_EQ(k, "metadata"))
		return meta_json(c, "metadata");
	if (STR_EQ(k, "schemaVersion")) {
		c->kineto = true;
		return meta_scalar(c, "kineto_schema_version");
	}
	if (STR_EQ(k, "deviceProperties")) {
		c->kineto = true;
		return meta_json(c, "device_properties");
	}
	if (STR_EQ(k, "distributedInfo")) {
		c->kineto = true;
		return read_distributed(c);
	}
	if (STR_EQ(k, "baseTimeNanoseconds"))
		return read_base_time(c);
	if (STR_EQ(k, "traceName"))
		return meta_scalar(c, "trace_name");
	if (STR_EQ(k, "host_name")) {
		struct tft_json_str s;
		int rc = read_str(c, &s);
		if (rc || s.len == 0)
			return rc;
		return intern(c, s.ptr, s.len, &c->host);
	}
	return tft_json_skip(&c->r, NULL, c->err);
}

/* Keys whose values may be huge and are not kept: skipped without buffering. */
static bool is_streamed_key(const struct tft_json_str *k)
{
	return STR_EQ(k, "systemTraceEvents") || STR_EQ(k, "stackFrames") || STR_EQ(k, "samples");
}

static bool is_known_key(const struct tft_json_str *k)
{
	return STR_EQ(k, "displayTimeUnit") || STR_EQ(k, "otherData") || STR_EQ(k, "metadata") ||
	       STR_EQ(k, "schemaVersion") || STR_EQ(k, "deviceProperties") ||
	       STR_EQ(k, "distributedInfo") || STR_EQ(k, "baseTimeNanoseconds") ||
	       STR_EQ(k, "traceName") || STR_EQ(k, "host_name");
}

static int read_object_doc(struct chrome *c)
{
	struct tft_json_str k;
	struct tft_json_value v;
	int rc;

	for (;;) {
		tft_json_mark(&c->r);
		rc = tft_json_next_key(&c->r, &k, c->err);
		if (rc == 1) {
			if (STR_EQ(&k, "traceEvents")) {
				if ((rc = tft_json_read(&c->r, &v, c->err)) == 0) {
					if (v.type == TFT_JSON_OBJECT)
						rc = tft_json_skip_rest(&c->r, c->err);
					else if (v.type == TFT_JSON_ARRAY)
						rc = read_events(c, 0);
					/* anything else is not a list of events: ignored */
					if (rc == 0)
						continue;
				}
			} else if (is_streamed_key(&k)) {
				if (STR_EQ(&k, "systemTraceEvents") &&
				    (rc = tft_writer_set_meta(c->w, "system_trace_events",
							      "present (not imported)")))
					return rc;
				if ((rc = tft_json_skip_stream(&c->r, c->err)))
					return rc;
				continue;
			} else if (is_known_key(&k)) {
				if ((rc = top_value(c, &k)) == 0)
					continue;
			} else {
				if ((rc = tft_json_skip_stream(&c->r, c->err)))
					return rc;
				continue;
			}
		}
		if (rc == TFT_JSON_MORE) {
			if ((rc = refill(c)))
				return rc;
			continue;
		}
		return rc; /* 0: end of the object; <0: error */
	}
}

static int read_document(struct chrome *c)
{
	struct tft_json_value v;
	int rc;

	/* a UTF-8 byte order mark is tolerated */
	if (c->r.len >= 3 && memcmp(c->r.buf, "\xef\xbb\xbf", 3) == 0)
		c->r.pos = 3;
	for (;;) {
		tft_json_mark(&c->r);
		rc = tft_json_read(&c->r, &v, c->err);
		if (rc != TFT_JSON_MORE)
			break;
		if ((rc = refill(c)))
			return rc;
	}
	if (rc)
		return rc;
	if (v.type == TFT_JSON_ARRAY)
		rc = read_events(c, TFT_JSON_EOF_ENDS_ARRAY);
	else if (v.type == TFT_JSON_OBJECT)
		rc = read_object_doc(c);
	else
		return tft_error_set(c->err, TFT_EFORMAT, v.offset,
				     "expected '{' or '[' at the start of a JSON trace");
	if (rc)
		return rc;
	for (;;) {
		tft_json_mark(&c->r);
		rc = tft_json_finish(&c->r, c->err);
		if (rc != TFT_JSON_MORE)
			return rc;
		if ((rc = refill(c)))
			return rc;
	}
}

/* ---- end of input ------------------------------------------------------------- */

static int close_open(struct chrome *c)
{
	int64_t end = c->have_end ? c->trace_end : 0;
	int rc;

	for (uint32_t i = 0; i < c->nthreads; i++) {
		struct thread *t = &c->threads[i];
		for (uint32_t j = 0; j < t->nopen; j++) {
			const struct open_slice *o = &t->open[j];
			uint32_t na = (j + 1 < t->nopen ? t->open[j + 1].args_start : t->nargs) -
				      o->args_start;
			if ((rc = push(c, t->track, TFT_EV_SLICE, TFT_EVF_UNCLOSED, o->ts,
				       span_ns(o->ts, end), 0, o->name, o->cat,
				       na ? t->args + o->args_start : NULL, na)))
				return rc;
			c->unclosed++;
		}
		t->nopen = 0;
		t->nargs = 0;
	}
	for (uint32_t i = 0; i < c->nspans; i++) {
		struct span *s = &c->spans[i];
		if (s->kind == SPAN_FREE)
			continue;
		if ((rc = push(c, s->track, TFT_EV_SLICE, TFT_EVF_UNCLOSED, s->ts,
			       span_ns(s->ts, end), 0, s->name, s->cat, s->args, s->nargs)))
			return rc;
		if (s->kind == SPAN_ASYNC)
			c->unclosed++;
	}
	for (uint32_t i = 0; i < c->npflows; i++) {
		struct pflow *p = &c->pflows[i];
		if (!p->live)
			continue;
		if (p->is_end)
			rc = add_flow(c, p->id, p->name, p->cat, TFT_NONE, 0, p->track, p->ts,
				      p->flags | TFT_FLOWF_UNMATCHED);
		else if (!p->stepped) /* a chain that ended with a step is complete */
			rc = add_flow(c, p->id, p->name, p->cat, p->track, p->ts, TFT_NONE, 0,
				      TFT_FLOWF_UNMATCHED);
		else
			continue;
		if (rc)
			return rc;
	}
	return 0;
}

/* The formats already imported into a writer, per thread (one thread drives a writer). */
#define FMT_SLOTS 4
struct fmt_slot {
	const struct tft_writer *w; /* weak: compared, never dereferenced */
	uint32_t processes, tracks, str_id;
	char formats[96];
};
static _Thread_local struct fmt_slot fmt_slots[FMT_SLOTS];
static _Thread_local unsigned fmt_next;

static int set_format(struct chrome *c, const char *fmt)
{
	struct fmt_slot *slot = NULL;
	char joined[96];
	size_t l;

	for (unsigned i = 0; i < FMT_SLOTS; i++) {
		struct fmt_slot *s = &fmt_slots[i];
		if (s->w != c->w)
			continue;
		const char *cur = tft_writer_str(c->w, s->str_id, &l);
		/* a new writer at a recycled address fails these checks */
		if (cur && strcmp(cur, s->formats) == 0 &&
		    tft_writer_process_count(c->w) >= s->processes &&
		    tft_writer_track_count(c->w) >= s->tracks)
			slot = s;
		else
			s->w = NULL;
		break;
	}
	joined[0] = '\0';
	if (slot) {
		snprintf(joined, sizeof(joined), "%s", slot->formats);
		/* already listed? */
		const char *p = joined;
		size_t n = strlen(fmt);
		bool found = false;
		while (*p) {
			const char *q = strchr(p, '+');
			size_t len = q ? (size_t)(q - p) : strlen(p);
			if (len == n && memcmp(p, fmt, n) == 0)
				found = true;
			p += len + (q ? 1 : 0);
		}
		if (!found && strlen(joined) + 1 + n < sizeof(joined)) {
			strcat(joined, "+");
			strcat(joined, fmt);
		}
	} else {
		snprintf(joined, sizeof(joined), "%s", fmt);
		slot = &fmt_slots[fmt_next++ % FMT_SLOTS];
	}
	slot->w = c->w;
	snprintf(slot->formats, sizeof(slot->formats), "%s", joined);
	int rc = intern(c, joined, strlen(joined), &slot->str_id);
	if (rc)
		return rc;
	slot->processes = tft_writer_process_count(c->w);
	slot->tracks = tft_writer_track_count(c->w);
	return tft_writer_set_meta(c->w, "format", joined);
}

static int finish(struct chrome *c)
{
	int rc;

	if ((rc = close_open(c)))
		return rc;
	/* names may have arrived after the events: classify once more */
	for (uint32_t i = 0; i < c->nthreads; i++) {
		struct thread *t = &c->threads[i];
		struct tft_track *wt;
		if (t->track == TFT_NONE || !(wt = tft_writer_track(c->w, t->track)))
			continue;
		wt->kind = thread_kind(c, t);
	}
	for (uint32_t i = 0; i < c->nprocs; i++) {
		struct proc *p = &c->procs[i];
		struct tft_process *wp;
		if (p->id == TFT_NONE || i == c->global_proc || !(wp = tft_writer_process(c->w, p->id)))
			continue;
		if (c->has_rank)
			wp->rank = c->rank;
		if (c->host)
			wp->host = c->host;
	}
	if (c->shift_ns && c->have_end) {
		int64_t t;
		if (__builtin_add_overflow(c->trace_start, c->shift_ns, &t) ||
		    __builtin_add_overflow(c->trace_end, c->shift_ns, &t))
			return tft_error_set(c->err, TFT_EFORMAT, -1,
					     "baseTimeNanoseconds moves timestamps out of the int64 range");
	}
	if ((rc = tft_sorter_finish(c->sorter, c->shift_ns, c->err)))
		return rc;
	for (uint32_t i = 0; i < c->nflows; i++) {
		struct tft_flow f = c->flows[i];
		if (f.src_track != TFT_NONE)
			f.src_ts_ns += c->shift_ns;
		if (f.dst_track != TFT_NONE)
			f.dst_ts_ns += c->shift_ns;
		if ((rc = tft_writer_add_flow(c->w, &f)))
			return rc;
	}
	for (uint32_t i = 0; i < c->nsteps; i++) {
		struct tft_step s = c->steps[i];
		s.start_ns += c->shift_ns;
		if ((rc = tft_writer_add_step(c->w, &s)))
			return rc;
	}
	if ((c->unmatched_ends && (rc = tft_writer_add_count(c->w, "unmatched_ends", c->unmatched_ends))) ||
	    (c->unclosed && (rc = tft_writer_add_count(c->w, "unclosed_slices", c->unclosed))) ||
	    (c->unmatched_flows &&
	     (rc = tft_writer_add_count(c->w, "unmatched_flows", c->unmatched_flows))) ||
	    (c->skipped && (rc = tft_writer_add_count(c->w, "skipped_events", c->skipped))))
		return rc;
	if (c->r.truncated && (rc = tft_writer_set_meta(c->w, "truncated", "1")))
		return rc;
	const char *fmt = c->kineto ? "kineto" : c->tf_timeline ? "tf_timeline" : "chrome";
	if ((rc = set_format(c, fmt)))
		return rc;
	if (c->kineto)
		rc = tft_writer_set_meta(c->w, "producer", "PyTorch Profiler");
	else if (c->tf_timeline)
		rc = tft_writer_set_meta(c->w, "producer", "TensorFlow");
	return rc;
}

static void destroy(struct chrome *c)
{
	for (uint32_t i = 0; i < c->nthreads; i++) {
		free(c->threads[i].open);
		free(c->threads[i].args);
	}
	for (uint32_t i = 0; i < c->nspans; i++)
		free(c->spans[i].args);
	free(c->threads);
	free(c->procs);
	free(c->spans);
	free(c->pflows);
	free(c->flows);
	free(c->steps);
	free(c->pargs);
	free(c->args);
	free(c->map.slots);
	free(c->icache);
	tft_sorter_destroy(c->sorter);
	tft_json_reader_fini(&c->r);
}

int tft_ingest_chrome_source(struct tft_writer *w, struct tft_source *src,
			     const struct tft_ingest_opts *opts,
			     const struct tft_json_reader_opts *ropts, struct tft_error *err)
{
	struct chrome c;
	int rc;

	memset(&c, 0, sizeof(c));
	c.w = w;
	c.src = src;
	c.opts = opts;
	c.err = err;
	c.last_thread = TFT_NONE;
	c.global_proc = TFT_NONE;
	c.global_track = TFT_NONE;
	c.free_span = TFT_NONE;
	c.free_pflow = TFT_NONE;
	c.last_cat_checked = TFT_NONE;
	clock_gettime(CLOCK_MONOTONIC, &c.last_progress);
	c.icache = calloc(1u << ICACHE_BITS, sizeof(*c.icache));
	if (!c.icache) {
		rc = tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
		goto out;
	}
	c.sorter = tft_sorter_create(w, opts ? opts->mem_budget : 0);
	if (!c.sorter) {
		rc = tft_error_set(err, TFT_ENOMEM, -1, "cannot create the event sorter");
		goto out;
	}
	if ((rc = intern(&c, "id", 2, &c.s_id)))
		goto out;
	if ((rc = tft_json_reader_init(&c.r, src, ropts, err)))
		goto out;
	if ((rc = read_document(&c)))
		goto out;
	rc = finish(&c);
	progress(&c, true);
out:
	if (rc)
		tft_error_set_file(err, tft_source_name(src));
	destroy(&c);
	return rc;
}
