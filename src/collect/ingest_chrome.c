/* SPDX-License-Identifier: MIT */
/*
 * Chrome trace event format importer (Chrome JSON, PyTorch Kineto,
 * tf.timeline): walks the document one event at a time, maps pids/tids to
 * processes and tracks, pairs B/E, b/e, N/D and flow events, and pushes
 * every event through the sorter (the input is not ordered).
 *
 * Stages: the parser (JSON -> batches of parsed events whose strings are
 * borrowed from the JSON window) and the committer (batches -> tracks,
 * pairing, sorter, writer). On a large input the committer runs on a
 * second thread, and the input is either mapped whole (a plain file: the
 * window is the file, its pages released behind the committer) or read
 * and inflated ahead by a third thread into windows that circulate with
 * the batches. Batches and windows are few and recycled, so memory stays
 * bounded. Only the committer touches the writer and the importer's
 * tables, except for the few top-level keys, which the parser handles
 * after waiting for the committer to go idle. Flow points are kept to the
 * end and paired in time order (emit_flows).
 */
#include <pthread.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/grow.h"
#include "core/hmap.h"
#include "codec/json_read.h"
#include "collect/ingest_chrome.h"
#include "collect/track_roles.h"
#include "collect/tf_names.h"
#include "core/model.h"
#include "core/strtab.h"
#include "store/sorter.h"

#define MAX_ARGS 65535u        /* tft_event.nargs is 16-bit */
#define PROGRESS_EVERY 4096u   /* events between clock checks */
#define SYNTH_ID_BASE (INT64_C(1) << 32) /* pid/tid values for string pids/tids */

/* ---- the keys of every keyed table (one core/hmap map) ------------------------ */

/* Key tags (top byte of hkey.a). */
enum {
	K_PROC = 1,    /* (pid int/str)           -> procs index */
	K_THREAD,      /* (proc, tid int/str)     -> threads index */
	K_COUNTER,     /* (proc, name, arg key)   -> track id */
	K_ASYNC_TRACK, /* (proc, cat)             -> track id */
	K_ASYNC,       /* (proc, cat, name, id)   -> newest open span */
	K_OBJ_TRACK,   /* (proc, name)            -> track id */
	K_OBJ,         /* (proc, name, id)        -> newest open span */
	K_FLOW,        /* (local proc, cat, scope, id) -> flow key index */
};

struct hkey {
	uint64_t a, b, c;
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

static inline uint32_t map_get(const struct tft_hmap *m, const struct hkey *k)
{
	return tft_hmap_get(m, k, hkey_hash(k));
}

static inline int map_put(struct tft_hmap *m, const struct hkey *k, uint32_t val)
{
	return tft_hmap_put(m, k, hkey_hash(k), val);
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
	uint64_t gpu_events;        /* slices of a GPU activity category (cat_class()) */
	uint32_t ann_track;         /* its GPU user annotations' track; TFT_NONE until needed */
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
 * A flow point: s / t / f, or a flow-v2 slice (flow_out = s, flow_in = f,
 * both = t). Points are kept until the end of the input and paired per key
 * in timestamp order (see emit_flows), because producers write them in any
 * order (Kineto writes many 'f' before their 's').
 */
enum { FP_S = 0, FP_T = 1, FP_F = 2 }; /* also the order of points at equal ts */

struct fpoint {
	int64_t ts;
	uint32_t key;           /* index into chrome.fkey_ids */
	uint32_t track, name, cat;
	uint8_t ph;             /* FP_* */
	uint8_t flags;          /* ends: TFT_FLOWF_BIND_ENCLOSING */
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
	uint8_t type;         /* enum tft_arg_type */
	struct tft_json_str s; /* STR, JSON: the text; DOUBLE: the number's text */
	int64_t i;            /* INT, BOOL */
};

/* A DOUBLE arg's value: strtod is left to the committer (the parser is the busier thread). */
static double parg_double(const struct parg *p)
{
	double d;

	return tft_json_number_to_double(p->s.ptr, p->s.len, &d) ? 0 : d;
}

/* One event as parsed (strings borrowed from the reader until the next mark). */
struct cev {
	struct tft_json_str ph, name, cat, scope, bp, s;
	struct xid pid, tid, id, bind_id;
	bool id_local;
	bool flow_in, flow_out;
	bool has_ts, has_dur;
	bool has_ph;           /* a "ph" key was present (whatever its value) */
	int64_t ts, dur;
	int64_t offset;
};

/* metadata.processes[] / metadata.tracks[] entries of a tftracer export. */
struct md_proc {
	int64_t pid, source_pid;
	uint32_t host;   /* string id */
	uint32_t labels; /* string id (0: none) */
	int32_t rank, sort_index;
	bool has_source_pid, has_host, has_rank, has_labels, has_sort_index;
};

struct md_track {
	int64_t pid, tid, source_tid;
	uint32_t kind;   /* enum tft_track_kind, 0 if unknown */
	uint32_t flags;  /* TFT_TRACKF_*: "concurrent", "derived" */
	bool has_source_tid, has_flags;
};

/*
 * A direct-mapped cache in front of the writer's string table: names,
 * categories and arg keys repeat millions of times, and hashing a few
 * bytes here is cheaper than the table's full hash + probe.
 */
#ifndef ICACHE_BITS
#define ICACHE_BITS 12
#endif
#define ICACHE_INLINE 16 /* strings this short are compared in the entry (no pointer chase) */
struct icache_ent {
	uint64_t h;
	const char *s; /* borrowed: the writer's interned copy */
	uint32_t len, id;
	char head[ICACHE_INLINE]; /* the first bytes of s */
};

struct chrome {
	struct icache_ent *icache;  /* owned; 1 << ICACHE_BITS entries */
	struct tft_writer *w;       /* borrowed */
	struct tft_sorter *sorter;  /* owned */
	struct tft_source *src;     /* borrowed; only its constant size is read here */
	const struct tft_ingest_opts *opts; /* borrowed, may be NULL */
	struct tft_error *err;      /* borrowed, may be NULL: store/table errors */
	struct tft_error berr;      /* err while a committer thread runs */

	struct tft_hmap map;        /* every keyed table (K_* tags): struct hkey -> index */
	struct proc *procs;         /* owned */
	uint32_t nprocs, cap_procs;
	struct thread *threads;     /* owned */
	uint32_t nthreads, cap_threads;
	struct span *spans;         /* owned; free list through next_free */
	uint32_t nspans, cap_spans, free_span;
	struct fpoint *fpoints;     /* owned; every flow point, in input order */
	uint32_t nfpoints, cap_fpoints;
	uint64_t *fkey_ids;         /* owned; flow id per flow key index */
	uint32_t nfkeys, cap_fkeys;
	struct tft_step *steps;     /* owned; added at the end (time shift) */
	uint32_t nsteps, cap_steps;
	uint32_t *step_proc;        /* owned: per step, the proc of a tftracer.step event (its
				     * process registered only if the step stays), else TFT_NONE */
	uint32_t cap_step_proc;

	const struct parg *pargs;   /* borrowed from the batch: args of the current event */
	uint32_t npargs;
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
	uint8_t *cat_cls;           /* owned: CAT_* of a category string id, 0 = not seen */
	uint32_t ncat_cls;
	bool has_rank;
	int32_t rank;
	uint32_t host;

	uint32_t s_id;              /* interned "id" */
	struct timespec last_progress;
	uint64_t raw_offset;        /* input position of the batch being committed */
	bool truncated;             /* the events array was cut by end of input */

	/* What a tftracer export wrote under "metadata" (restored at the end). */
	bool md_tftracer;           /* metadata.exporter is "tftracer ..." */
	bool md_has_steps;
	struct md_proc *md_procs;   /* owned */
	uint32_t md_nprocs, md_cap_procs;
	struct md_track *md_tracks; /* owned */
	uint32_t md_ntracks, md_cap_tracks;
	struct tft_step *md_steps;  /* owned; process = exported pid index into md_step_pid */
	int64_t *md_step_pid;       /* owned; exported pid per md step (INT64_MIN: none) */
	uint32_t md_nsteps, md_cap_steps, md_cap_step_pid;
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

	if (e->s && e->h == h && e->len == len &&
	    memcmp(len <= ICACHE_INLINE ? e->head : e->s, s, len) == 0) {
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
			memcpy(e->head, copy, len < ICACHE_INLINE ? len : ICACHE_INLINE);
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
/*
 * A tf.timeline "DEVICE Compute" process of any TF era: /device:GPU:0,
 * /gpu:0, /cpu:0 (TF <= 1.3), device:SYCL:0 ..., with or without /job.
 */
static bool is_tf_device(const char *name, size_t len)
{
	struct tft_tf_device d;

	return tft_tf_names_parse_device(name, len, &d) == 0 && d.type.len && d.index >= 0;
}

/*
 * A GPU stream's or queue's name: "stream 7" (Kineto), "Stream #7",
 * "/gpu:0/stream:12", "stream:all" (TF), "Stream 101 Submission Queue"
 * (MTIA): "stream" then optional ' ', '#' or ':' and a digit or "all".
 * Not a thread that merely has the word in its name (ScriptStreamerThread).
 */
static bool has_stream_id(const char *s, size_t n)
{
	for (size_t i = 0; i + 6 <= n; i++) {
		size_t k = i + 6;

		if ((s[i] | 0x20) != 's' || strncasecmp(s + i, "stream", 6) != 0)
			continue;
		while (k < n && (s[k] == ' ' || s[k] == '#' || s[k] == ':'))
			k++;
		if (k < n && s[k] >= '0' && s[k] <= '9')
			return true;
		if (k + 3 <= n && strncasecmp(s + k, "all", 3) == 0)
			return true;
	}
	return false;
}

static uint32_t classify_track(const char *pn, size_t pl, const char *tn, size_t tl)
{
	if (has_stream_id(tn, tl) || has_stream_id(pn, pl) || contains(pn, pl, "/memcpy") ||
	    contains(tn, tl, "/memcpy"))
		return TFT_TRACK_GPU_STREAM;
	if (ends_with(pn, pl, " Compute") && is_tf_device(pn, pl - 8))
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
	if (s->len == 0 || s->len > 19) /* 19 digits: the conversion refuses what overflows */
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
	if (tft_grow((void **)&c->procs, &c->cap_procs, (uint64_t)c->nprocs + 1, sizeof(*c->procs)))
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
/* A pid that is a number (or a string of digits): *iv; else false (*iv 0: no pid is pid 0). */
static bool pid_number(const struct xid *pid, int64_t *iv)
{
	*iv = 0;
	if (pid->kind == 1) {
		*iv = pid->i;
		return true;
	}
	if (pid->kind == 2 && digits_to_i64(&pid->s, iv))
		return true;
	*iv = 0;
	return false;
}

static int get_proc(struct chrome *c, const struct xid *pid, uint32_t *idx)
{
	struct hkey k;
	int64_t iv = 0;
	uint32_t sid = 0;
	bool is_str = false;
	int rc;

	if (!pid_number(pid, &iv) && pid->kind == 2) {
		is_str = true;
		if ((rc = intern(c, pid->s.ptr, pid->s.len, &sid)))
			return rc;
	}
	k = is_str ? mkkey(K_PROC, 1, sid, 0) : mkkey(K_PROC, 0, (uint64_t)iv, 0);
	*idx = map_get(&c->map, &k);
	if (*idx != TFT_NONE)
		return 0;
	if ((rc = new_proc(c, is_str ? SYNTH_ID_BASE + c->next_synth++ : iv, is_str ? sid : 0, idx)))
		return rc;
	if (map_put(&c->map, &k, *idx))
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
	*idx = map_get(&c->map, &k);
	if (*idx == TFT_NONE) {
		if (tft_grow((void **)&c->threads, &c->cap_threads, (uint64_t)c->nthreads + 1,
			     sizeof(*c->threads)))
			return nomem(c);
		struct thread *t = &c->threads[c->nthreads];
		memset(t, 0, sizeof(*t));
		t->tid = is_str ? SYNTH_ID_BASE + c->next_synth++ : iv;
		t->proc = proc;
		t->track = TFT_NONE;
		t->ann_track = TFT_NONE;
		t->name = sid;
		*idx = c->nthreads++;
		if (map_put(&c->map, &k, *idx))
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

	*track = map_get(&c->map, k);
	if (*track != TFT_NONE)
		return 0;
	if ((rc = add_track(c, proc, kind, name, 0, 0, track)))
		return rc;
	if (map_put(&c->map, k, *track))
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
	if (tft_grow((void **)&c->args, &c->cap_args, c->npargs, sizeof(*c->args)))
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
			a->v.d = parg_double(p);
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
			if (tft_grow((void **)args, cap, (uint64_t)*n + 1, sizeof(**args)))
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

/* Keep a flow point under key k (flow id `id`) for emit_flows(). */
static int flow_point(struct chrome *c, const struct hkey *k, uint64_t id, uint8_t ph, uint32_t track,
		      int64_t ts, uint32_t name, uint32_t cat, uint32_t flags)
{
	uint32_t key = map_get(&c->map, k);

	if (key == TFT_NONE) {
		if (tft_grow((void **)&c->fkey_ids, &c->cap_fkeys, (uint64_t)c->nfkeys + 1,
			     sizeof(*c->fkey_ids)))
			return nomem(c);
		key = c->nfkeys++;
		c->fkey_ids[key] = id;
		if (map_put(&c->map, k, key))
			return nomem(c);
	}
	if (tft_unlikely(c->nfpoints == c->cap_fpoints) &&
	    tft_grow((void **)&c->fpoints, &c->cap_fpoints, (uint64_t)c->nfpoints + 1, sizeof(*c->fpoints)))
		return nomem(c);
	c->fpoints[c->nfpoints++] = (struct fpoint){ .ts = ts, .key = key, .track = track, .name = name,
						     .cat = cat, .ph = ph, .flags = (uint8_t)flags };
	return 0;
}

/* Room for one more step (zeroed), its proc slot TFT_NONE; NULL: out of memory. */
static struct tft_step *push_step(struct chrome *c)
{
	struct tft_step *s;

	if (tft_grow((void **)&c->steps, &c->cap_steps, (uint64_t)c->nsteps + 1, sizeof(*c->steps)) ||
	    tft_grow((void **)&c->step_proc, &c->cap_step_proc, (uint64_t)c->nsteps + 1,
		     sizeof(*c->step_proc)))
		return NULL;
	c->step_proc[c->nsteps] = TFT_NONE;
	s = &c->steps[c->nsteps++];
	memset(s, 0, sizeof(*s));
	return s;
}

/*
 * A tftracer export's step drawn as a slice (cat "tftracer.step") is a step
 * again, not a slice. Its process is registered only if the step stays:
 * the export's metadata.steps, when the file has it, replaces these steps
 * at the end (as it replaces ProfilerStep#N ones), and a process made only
 * for steps without one ("Steps") must not appear on a round trip.
 */
static int tracer_step(struct chrome *c, const struct cev *e)
{
	const struct parg *a;
	uint32_t name = 0, idx;
	int rc;

	if ((e->name.len && (rc = intern(c, e->name.ptr, e->name.len, &name))) ||
	    (rc = get_proc(c, &e->pid, &idx)))
		return rc;
	struct tft_step *s = push_step(c);

	if (!s)
		return nomem(c);
	a = find_parg(c, "step");
	s->index = a && a->type == TFT_ARG_INT ? a->i : (int64_t)c->nsteps - 1;
	a = find_parg(c, "traced");
	s->traced = a && a->type == TFT_ARG_BOOL && a->i;
	s->name = name;
	s->process = TFT_NONE;
	s->start_ns = e->ts;
	s->dur_ns = e->dur < 0 ? 0 : e->dur;
	c->step_proc[c->nsteps - 1] = idx;
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
	struct tft_step *s = push_step(c);
	if (!s)
		return nomem(c);
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
		if (tft_grow((void **)&c->spans, &c->cap_spans, (uint64_t)c->nspans + 1, sizeof(*c->spans)))
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
	s->prev = map_get(&c->map, k);
	if (map_put(&c->map, k, idx))
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
		tft_hmap_del(&c->map, &k, hkey_hash(&k));
		return 0;
	}
	if (map_put(&c->map, &k, s->prev))
		return nomem(c);
	return 0;
}

/* ---- phases ------------------------------------------------------------------ */

/*
 * Categories that say where a slice ran (Kineto's, old and new schema):
 * device activity (kernels, copies, sets, device syncs) types its track as a
 * GPU stream whatever the track's names say; GPU user annotations span
 * kernels and go to a derived track of their own (see annotation_track()).
 */
enum { CAT_UNSEEN = 0, CAT_OTHER = 1, CAT_GPU = 2, CAT_GPU_ANNOTATION = 3 };

static uint8_t cat_class_of(const char *s, size_t n)
{
	static const char *const gpu[] = { "kernel", "gpu_memcpy", "gpu_memset", "cuda_sync",
					   "Kernel", "Memcpy", "Memset" };

	if (n == 19 && memcmp(s, "gpu_user_annotation", 19) == 0)
		return CAT_GPU_ANNOTATION;
	for (size_t i = 0; i < sizeof(gpu) / sizeof(gpu[0]); i++)
		if (strlen(gpu[i]) == n && memcmp(s, gpu[i], n) == 0)
			return CAT_GPU;
	return CAT_OTHER;
}

/* The class of category string id `cat` (0: none), cached by id. */
static int cat_class(struct chrome *c, uint32_t cat, const struct tft_json_str *text, uint8_t *cls)
{
	*cls = CAT_OTHER;
	if (!cat)
		return 0;
	if (cat >= c->ncat_cls) {
		uint32_t n = c->ncat_cls ? c->ncat_cls : 64;
		uint8_t *p;
		while (n <= cat)
			n *= 2;
		if (!(p = realloc(c->cat_cls, n)))
			return nomem(c);
		memset(p + c->ncat_cls, 0, n - c->ncat_cls);
		c->cat_cls = p;
		c->ncat_cls = n;
	}
	if (c->cat_cls[cat] == CAT_UNSEEN)
		c->cat_cls[cat] = cat_class_of(text->ptr, text->len);
	*cls = c->cat_cls[cat];
	return 0;
}

/*
 * A stream's GPU user annotations (Kineto "gpu_user_annotation"): ranges
 * that name the kernels they span, on a track of their own next to the
 * stream's, derived (aggregates leave them out: they are not work). Named in
 * finish(), when the stream's name is known.
 */
static int annotation_track(struct chrome *c, uint32_t tidx, uint32_t *track)
{
	struct thread *t = &c->threads[tidx];
	int rc;

	if (t->ann_track == TFT_NONE) {
		if ((rc = add_track(c, t->proc, TFT_TRACK_GPU_STREAM, 0, t->tid, t->sort_index,
				    &c->threads[tidx].ann_track)))
			return rc;
		t = &c->threads[tidx];
		struct tft_track *wt = tft_writer_track(c->w, t->ann_track);
		if (wt)
			wt->flags = TFT_TRACKF_DERIVED;
	}
	*track = t->ann_track;
	return 0;
}

static int do_complete(struct chrome *c, const struct cev *e, uint32_t name, uint32_t cat)
{
	uint32_t track, tidx;
	uint8_t cls;
	int rc;

	if ((rc = get_thread(c, &e->pid, &e->tid, &tidx)) || (rc = intern_args(c)) ||
	    (rc = cat_class(c, cat, &e->cat, &cls)))
		return rc;
	if (cls == CAT_GPU)
		c->threads[tidx].gpu_events++;
	rc = cls == CAT_GPU_ANNOTATION ? annotation_track(c, tidx, &track)
				       : thread_track(c, tidx, &track);
	if (rc)
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
		uint8_t ph = e->flow_in && e->flow_out ? FP_T : e->flow_in ? FP_F : FP_S;
		if ((rc = flow_point(c, &k, id, ph, track, e->ts, name, cat, 0)))
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
	if (tft_grow((void **)&t->open, &t->cap_open, (uint64_t)t->nopen + 1, sizeof(*t->open)) ||
	    tft_grow((void **)&t->args, &t->cap_args, (uint64_t)t->nargs + c->nargs, sizeof(*t->args)))
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
	if (tft_grow((void **)&t->args, &t->cap_args, (uint64_t)t->nargs + c->nargs, sizeof(*t->args)))
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

/*
 * Is pid a process already named "Global"? A tftracer export writes each
 * input's Global process (its global instants) with its own pid and name:
 * its instants go back there, so that the workers' Global processes stay
 * apart. Other producers' global instants (Kineto's pid "Traces") go to the
 * input's synthetic Global process.
 */
static bool global_named(struct chrome *c, const struct xid *pid)
{
	struct hkey k;
	int64_t iv;
	uint32_t idx;
	size_t len = 0;
	const char *nm;

	if (!pid_number(pid, &iv))
		return false; /* no pid, or a string pid: not a tftracer export's */
	k = mkkey(K_PROC, 0, (uint64_t)iv, 0);
	idx = map_get(&c->map, &k);
	if (idx == TFT_NONE || idx == c->global_proc || !c->procs[idx].name)
		return false;
	nm = wstr(c, c->procs[idx].name, &len);
	return len == 6 && memcmp(nm, "Global", 6) == 0;
}

static int do_instant(struct chrome *c, const struct cev *e, uint32_t name, uint32_t cat)
{
	uint32_t track;
	uint8_t flags = 0;
	int rc;

	if (e->s.len == 1 && e->s.ptr[0] == 'g') {
		flags = TFT_EVF_GLOBAL;
		rc = global_named(c, &e->pid) ? event_track(c, e, &track, NULL) : global_track(c, &track);
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

static int counter_series(struct chrome *c, const struct cev *e, const struct tft_json_str *nm,
			  uint32_t pidx, uint32_t name, uint32_t cname, uint32_t cat);

/*
 * A counter event: one series per numeric arg, each on its own counter
 * track ("name.key", or "name" for a key named "value" or like the
 * counter). A counter with an id is an instance of its own, "name[id]", as
 * Chrome's viewer names it: instances never share a track.
 */
static int do_counter(struct chrome *c, const struct cev *e, uint32_t name, uint32_t cat)
{
	struct tft_json_str nm = e->name; /* the series' prefix */
	uint32_t pidx, cname = name;
	char small[256], *inst = NULL;
	int rc;

	if ((rc = get_proc(c, &e->pid, &pidx)))
		return rc;
	if (e->id.kind) {
		char num[24];
		const char *ip = num;
		size_t il;

		if (e->id.kind == 2) {
			ip = e->id.s.ptr;
			il = e->id.s.len;
		} else {
			il = (size_t)snprintf(num, sizeof(num), "%lld", (long long)e->id.i);
		}
		/* counters with ids are sampled often: no allocation for the usual short names */
		inst = e->name.len + il + 3 <= sizeof(small) ? small : malloc(e->name.len + il + 3);
		if (!inst)
			return nomem(c);
		if (e->name.len)
			memcpy(inst, e->name.ptr, e->name.len);
		inst[e->name.len] = '[';
		if (il)
			memcpy(inst + e->name.len + 1, ip, il);
		inst[e->name.len + 1 + il] = ']';
		nm.ptr = inst;
		nm.len = e->name.len + il + 2;
		rc = intern(c, nm.ptr, nm.len, &cname);
		if (rc) {
			if (inst != small)
				free(inst);
			return rc;
		}
	}
	rc = counter_series(c, e, &nm, pidx, name, cname, cat);
	if (inst != small)
		free(inst);
	return rc;
}

static int counter_series(struct chrome *c, const struct cev *e, const struct tft_json_str *nm,
			  uint32_t pidx, uint32_t name, uint32_t cname, uint32_t cat)
{
	int rc;

	for (uint32_t i = 0; i < c->npargs; i++) {
		const struct parg *p = &c->pargs[i];
		double v;
		uint32_t key, tname, track;
		if (p->type == TFT_ARG_INT)
			v = (double)p->i;
		else if (p->type == TFT_ARG_DOUBLE)
			v = parg_double(p);
		else if (p->type == TFT_ARG_STR && p->s.len > 0 &&
			 tft_json_number_to_double(p->s.ptr, p->s.len, &v) == 0)
			;
		else
			continue;
		if (!isfinite(v)) /* inf or NaN (1e400, "NaN"): no sample to draw, as for text */
			continue;
		if ((rc = intern(c, p->key.ptr, p->key.len, &key)))
			return rc;
		struct hkey k = mkkey(K_COUNTER, pidx, cname, key);
		track = map_get(&c->map, &k);
		if (track == TFT_NONE) {
			/* (empty names may have NULL pointers: no memcmp/memcpy on them) */
			if ((p->key.len == e->name.len &&
			     (!e->name.len || memcmp(p->key.ptr, e->name.ptr, e->name.len) == 0)) ||
			    STR_EQ(&p->key, "value")) {
				tname = cname;
			} else {
				size_t n = nm->len + 1 + p->key.len;
				char *tmp = malloc(n);
				if (!tmp)
					return nomem(c);
				if (nm->len)
					memcpy(tmp, nm->ptr, nm->len);
				tmp[nm->len] = '.';
				if (p->key.len)
					memcpy(tmp + nm->len + 1, p->key.ptr, p->key.len);
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
	return flow_point(c, &k, id, ph == 's' ? FP_S : ph == 't' ? FP_T : FP_F, track, e->ts, name,
			  cat, ph == 's' ? 0 : bind);
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
	si = map_get(&c->map, &k);
	if (si == TFT_NONE && e->name.len == 0) {
		/* an end without a name closes the newest open span with that id */
		uint64_t best = 0;
		for (uint32_t i = 0; i < c->nspans; i++) {
			const struct span *s = &c->spans[i];
			if (s->kind == SPAN_ASYNC && s->proc == pidx && s->cat == cat && s->id == id &&
			    (si == TFT_NONE || s->seq > best)) {
				/* only the newest under its own key can be closed */
				if (map_get(&c->map, &s->key) != i)
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
	struct hkey k = mkkey(K_OBJ, pidx, name, id);
	si = map_get(&c->map, &k);
	/* 'D' without 'N': the object predates the trace; nothing to draw (and no track for it) */
	if (ph == 'D' && si == TFT_NONE)
		return 0;
	struct hkey tk = mkkey(K_OBJ_TRACK, pidx, name, 0);
	if ((rc = keyed_track(c, &tk, pidx, TFT_TRACK_OBJECT, name, &track)) || (rc = intern_args(c)))
		return rc;
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

	/* a tftracer export's steps, drawn as slices: steps again (tracer_step) */
	if (e->ph.len == 1 && e->ph.ptr[0] == 'X' && STR_EQ(&e->cat, "tftracer.step"))
		return tracer_step(c, e);
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

/* ---- batches: parsed events on their way to commit() ---------------------------- */

#define BATCH_EVENTS 1024u          /* events per batch */
#define MAX_BATCHES 4u              /* batches in circulation (each may pin one JSON window) */
#define STR_BLOCK (16u << 10)       /* decoded-string block size */
#define PIPELINE_MIN_BYTES (4u << 20) /* smaller plain inputs are imported on one thread */
/*
 * JSON window with threads: windows circulate between the reader, the
 * parser and the committer (MAX_WINDOWS of them), and should stay in the
 * shared cache; a larger one makes every read() and parse miss it.
 */
#ifndef PIPE_BLOCK
#define PIPE_BLOCK (512u << 10)
#endif

/* Copies of decoded strings (escapes), which the reader only keeps until the next mark. */
struct sblock {
	struct sblock *next; /* owned; older block */
	size_t cap, used;
	char data[];
};

/* One parsed event: strings borrowed from the batch's window(s) or its sblocks. */
struct pev {
	struct cev e;
	uint32_t parg0, npargs; /* its args: batch pargs[parg0 .. parg0 + npargs) */
};

struct batch {
	struct batch *next;         /* queue / free list link */
	struct pev *ev;             /* owned */
	uint32_t nev, cap_ev;
	struct parg *pargs;         /* owned */
	uint32_t npargs, cap_pargs;
	struct sblock *strs;        /* owned list, newest first */
	struct tft_json_window win; /* owned: a retired window that this and earlier
				     * batches borrow from, released after commit */
	uint64_t raw_offset;        /* raw input bytes read when the batch was handed over */
	int64_t end_off;            /* input offset its events all end before */
};

static struct batch *batch_new(void)
{
	return calloc(1, sizeof(struct batch));
}

/* Empty the batch for reuse (its window must have been taken). */
static void batch_reset(struct batch *b)
{
	struct sblock *k = b->strs;

	if (k) {
		for (struct sblock *o = k->next, *n; o; o = n) {
			n = o->next;
			free(o);
		}
		k->next = NULL;
		k->used = 0;
	}
	b->nev = 0;
	b->npargs = 0;
}

static void batch_free(struct batch *b)
{
	if (!b)
		return;
	for (struct sblock *k = b->strs, *n; k; k = n) {
		n = k->next;
		free(k);
	}
	tft_json_window_free(&b->win);
	free(b->ev);
	free(b->pargs);
	free(b);
}

/* Copy s into the batch (s then points at the copy). 0 or TFT_ENOMEM. */
static int batch_keep(struct batch *b, struct tft_json_str *s)
{
	struct sblock *k = b->strs;

	if (!k || k->cap - k->used < s->len) {
		size_t cap = s->len > STR_BLOCK ? s->len : STR_BLOCK;
		struct sblock *nk = malloc(sizeof(*nk) + cap);
		if (!nk)
			return TFT_ENOMEM;
		nk->next = k;
		nk->cap = cap;
		nk->used = 0;
		b->strs = k = nk;
	}
	memcpy(k->data + k->used, s->ptr, s->len);
	s->ptr = k->data + k->used;
	k->used += s->len;
	return 0;
}

/* ---- committing a batch ------------------------------------------------------------ */

static void progress(struct chrome *c, bool force)
{
	if (!c->opts || !c->opts->progress || !tft_ingest_progress_due(&c->last_progress, force))
		return;
	c->opts->progress(c->opts->progress_ctx, c->raw_offset, tft_source_raw_size(c->src),
			  c->events);
}

static int commit_batch(struct chrome *c, const struct batch *b)
{
	int rc;

	c->raw_offset = b->raw_offset;
	for (uint32_t i = 0; i < b->nev; i++) {
		const struct pev *pe = &b->ev[i];
		c->pargs = pe->npargs ? b->pargs + pe->parg0 : NULL;
		c->npargs = pe->npargs;
		if ((rc = commit(c, &pe->e))) {
			tft_error_set(c->err, rc, pe->e.offset, "cannot import the event at this offset");
			return rc;
		}
		if ((c->events & (PROGRESS_EVERY - 1)) == 0)
			progress(c, false);
	}
	c->pargs = NULL;
	c->npargs = 0;
	return 0;
}

/* ---- the committer and reader threads ------------------------------------------------ */

/*
 * With threads, the parser (the caller's thread) only parses. A reader
 * thread reads (and inflates) the input into windows ahead of it; the
 * parser takes a filled window at each refill and hands the previous one
 * on with its last batch; a committer thread commits batches in order and
 * puts their windows in the pool the reader fills again. Batches and
 * windows are few and recycled, so memory stays bounded.
 */
#define READ_AHEAD 2u                  /* filled windows waiting for the parser */
#define MAX_WINDOWS (MAX_BATCHES + 4u) /* windows in circulation (see reader_main) */

/* A window filled by the reader: new bytes at buf[at .. at + n). */
struct filled {
	struct tft_json_window win;
	size_t at, n;
	bool eof;
	uint64_t raw_offset; /* raw input bytes read so far (progress) */
};

/* All fields below are guarded by mu. */
struct pipe {
	struct chrome *c;            /* borrowed */
	struct tft_source *src;      /* borrowed; read by the reader thread only while it runs */
	pthread_t committer, reader;
	bool have_reader;
	pthread_mutex_t mu;
	pthread_cond_t work;         /* committer waits: a batch queued, or done */
	pthread_cond_t idle;         /* parser waits: a batch freed, the queue drained */
	pthread_cond_t filled_cv;    /* parser waits: a window filled */
	pthread_cond_t room;         /* reader waits: a window free and room to fill it */
	struct batch *head, *tail;   /* owned; queued, oldest first */
	struct batch *free;          /* owned; free list */
	struct tft_json_window pool[MAX_WINDOWS]; /* owned; empty windows */
	unsigned npool, nwindows;    /* in the pool; allocated by the reader, in all */
	struct filled ready[READ_AHEAD]; /* owned; filled, oldest first */
	unsigned nready;
	size_t win_size, win_head;   /* reader windows: bytes, room kept in front */
	bool busy;                   /* the committer holds a batch */
	bool done;                   /* no more batches will come; the reader stops too */
	bool read_end;               /* the reader has stopped (end of input or error) */
	int rc;                      /* the committer's first error (message in c->err) */
	int64_t done_off;            /* input before this offset is committed */
	int read_rc;                 /* the reader's error, after the windows it filled */
	struct tft_error read_err;
};

static void *committer_main(void *arg)
{
	struct pipe *q = arg;

	pthread_mutex_lock(&q->mu);
	for (;;) {
		struct batch *b;
		int rc;
		while (!q->head && !q->done)
			pthread_cond_wait(&q->work, &q->mu);
		if (!q->head)
			break;
		b = q->head;
		q->head = b->next;
		if (!q->head)
			q->tail = NULL;
		q->busy = true;
		rc = q->rc;
		pthread_mutex_unlock(&q->mu);

		if (!rc) /* after a failure batches are only recycled */
			rc = commit_batch(q->c, b);
		struct tft_json_window win = b->win;
		b->win.buf = NULL;
		b->win.cap = 0;
		batch_reset(b);

		pthread_mutex_lock(&q->mu);
		if (rc && !q->rc)
			q->rc = rc;
		q->done_off = b->end_off;
		if (win.buf && q->npool < MAX_WINDOWS) {
			q->pool[q->npool++] = win;
			pthread_cond_signal(&q->room);
		} else {
			tft_json_window_free(&win);
		}
		b->next = q->free;
		q->free = b;
		q->busy = false;
		pthread_cond_signal(&q->idle);
	}
	pthread_mutex_unlock(&q->mu);
	return NULL;
}

/*
 * Fill windows ahead of the parser until the input ends, fails, or the
 * parser is done. Windows in circulation: the parser's, one per queued or
 * committing batch (MAX_BATCHES), READ_AHEAD filled ones, and the one
 * being filled: MAX_WINDOWS is enough for the reader never to wait on a
 * window that only the parser could release.
 */
static void *reader_main(void *arg)
{
	struct pipe *q = arg;

	pthread_mutex_lock(&q->mu);
	while (!q->done) {
		struct filled f;
		memset(&f, 0, sizeof(f));
		if (q->nready >= READ_AHEAD || (!q->npool && q->nwindows >= MAX_WINDOWS)) {
			pthread_cond_wait(&q->room, &q->mu);
			continue;
		}
		if (q->npool)
			f.win = q->pool[--q->npool];
		else
			q->nwindows++;
		pthread_mutex_unlock(&q->mu);

		int rc = 0;
		if (!f.win.buf || f.win.cap < q->win_head + 1) {
			tft_json_window_free(&f.win);
			f.win.buf = malloc(q->win_size + TFT_JSON_PAD);
			f.win.cap = q->win_size;
			if (f.win.buf)
				memset(f.win.buf + f.win.cap, 0, TFT_JSON_PAD);
			else
				rc = tft_error_set(&q->read_err, TFT_ENOMEM, -1, "out of memory for a JSON window");
		}
		f.at = q->win_head;
		while (!rc && f.at + f.n < f.win.cap) {
			size_t got;
			rc = tft_source_read(q->src, f.win.buf + f.at + f.n, f.win.cap - f.at - f.n, &got,
					     &q->read_err);
			if (!rc && got == 0) {
				f.eof = true;
				break;
			}
			f.n += got;
		}
		f.raw_offset = tft_source_raw_offset(q->src);

		pthread_mutex_lock(&q->mu);
		if (rc) {
			q->read_rc = rc;
			if (f.win.buf && q->npool < MAX_WINDOWS)
				q->pool[q->npool++] = f.win;
			else
				tft_json_window_free(&f.win);
		} else {
			q->ready[q->nready++] = f;
		}
		pthread_cond_signal(&q->filled_cv);
		if (rc || f.eof)
			break;
	}
	q->read_end = true;
	pthread_cond_signal(&q->filled_cv);
	pthread_mutex_unlock(&q->mu);
	return NULL;
}

static void pipe_destroy(struct pipe *q)
{
	for (struct batch *b = q->free, *n; b; b = n) {
		n = b->next;
		batch_free(b);
	}
	for (struct batch *b = q->head, *n; b; b = n) {
		n = b->next;
		batch_free(b);
	}
	for (unsigned i = 0; i < q->npool; i++)
		tft_json_window_free(&q->pool[i]);
	for (unsigned i = 0; i < q->nready; i++)
		tft_json_window_free(&q->ready[i].win);
	pthread_cond_destroy(&q->work);
	pthread_cond_destroy(&q->idle);
	pthread_cond_destroy(&q->filled_cv);
	pthread_cond_destroy(&q->room);
	pthread_mutex_destroy(&q->mu);
	free(q);
}

/* Let the threads finish (the committer: what is queued) and join them; the committer's error or 0. */
static int pipe_stop(struct pipe *q)
{
	pthread_mutex_lock(&q->mu);
	q->done = true;
	pthread_cond_signal(&q->work);
	pthread_cond_signal(&q->room);
	pthread_mutex_unlock(&q->mu);
	pthread_join(q->committer, NULL);
	if (q->have_reader)
		pthread_join(q->reader, NULL);
	return q->rc;
}

/*
 * Start the committer (and, unless the reader r has seen the whole input,
 * the reader) for c; NULL when that is not possible (run on one thread).
 */
static struct pipe *pipe_start(struct chrome *c, const struct tft_json_reader *r)
{
	struct pipe *q = calloc(1, sizeof(*q));

	if (!q)
		return NULL;
	q->c = c;
	q->src = r->src;
	/* reader windows: the parser's block size, plus room for a cut event in front */
	q->win_head = r->cap / 8 < 8 ? 8 : r->cap / 8 > (64u << 10) ? (64u << 10) : r->cap / 8;
	q->win_size = q->win_head + r->cap;
	if (pthread_mutex_init(&q->mu, NULL)) {
		free(q);
		return NULL;
	}
	if (pthread_cond_init(&q->work, NULL) || pthread_cond_init(&q->idle, NULL) ||
	    pthread_cond_init(&q->filled_cv, NULL) || pthread_cond_init(&q->room, NULL)) {
		/* (a failed pthread_cond_init leaves nothing to destroy on Linux) */
		pthread_mutex_destroy(&q->mu);
		free(q);
		return NULL;
	}
	/* MAX_BATCHES - 1 on the free list: the parser holds the other one */
	for (unsigned i = 0; i + 1 < MAX_BATCHES; i++) {
		struct batch *b = batch_new();
		if (!b) {
			pipe_destroy(q);
			return NULL;
		}
		b->next = q->free;
		q->free = b;
	}
	if (pthread_create(&q->committer, NULL, committer_main, q)) {
		pipe_destroy(q);
		return NULL;
	}
	if (!r->eof) {
		if (pthread_create(&q->reader, NULL, reader_main, q) == 0) {
			q->have_reader = true;
		} else {
			pipe_stop(q);
			pipe_destroy(q);
			return NULL;
		}
	}
	return q;
}

/* Queue b; returns a free batch in *next (waits for one), or the committer's error. */
static int pipe_put(struct pipe *q, struct batch *b, struct batch **next)
{
	int rc;

	pthread_mutex_lock(&q->mu);
	b->next = NULL;
	if (q->tail)
		q->tail->next = b;
	else
		q->head = b;
	q->tail = b;
	pthread_cond_signal(&q->work);
	while (!q->free)
		pthread_cond_wait(&q->idle, &q->mu);
	*next = q->free;
	q->free = (*next)->next;
	rc = q->rc;
	pthread_mutex_unlock(&q->mu);
	return rc;
}

/* Wait until every queued batch is committed; the committer's error or 0. */
static int pipe_wait_idle(struct pipe *q)
{
	int rc;

	pthread_mutex_lock(&q->mu);
	while (q->head || q->busy)
		pthread_cond_wait(&q->idle, &q->mu);
	rc = q->rc;
	pthread_mutex_unlock(&q->mu);
	return rc;
}

/* The next filled window (waits for it); 0, or the reader's error (in *err). */
static int pipe_take_filled(struct pipe *q, struct filled *f, struct tft_error *err)
{
	int rc = 0;

	pthread_mutex_lock(&q->mu);
	while (!q->nready && !q->read_end)
		pthread_cond_wait(&q->filled_cv, &q->mu);
	if (q->nready) {
		*f = q->ready[0];
		memmove(q->ready, q->ready + 1, (q->nready - 1) * sizeof(*q->ready));
		q->nready--;
		pthread_cond_signal(&q->room);
	} else {
		rc = q->read_rc ? q->read_rc : TFT_EIO;
		if (err)
			*err = q->read_err;
		if (!q->read_rc)
			tft_error_set(err, TFT_EIO, -1, "input reader stopped");
	}
	pthread_mutex_unlock(&q->mu);
	return rc;
}

/* Input before this offset is committed (its strings are no longer needed). */
static size_t pipe_done_off(struct pipe *q)
{
	int64_t off;

	pthread_mutex_lock(&q->mu);
	off = q->done_off;
	pthread_mutex_unlock(&q->mu);
	return off > 0 ? (size_t)off : 0;
}

/* Give an unused window back to the pool. */
static void pipe_put_window(struct pipe *q, struct tft_json_window *w)
{
	pthread_mutex_lock(&q->mu);
	if (w->buf && q->npool < MAX_WINDOWS) {
		q->pool[q->npool++] = *w;
		pthread_cond_signal(&q->room);
	} else {
		tft_json_window_free(w);
	}
	w->buf = NULL;
	w->cap = 0;
	pthread_mutex_unlock(&q->mu);
}

/* ---- parsing ------------------------------------------------------------------ */

struct parser {
	struct chrome *c;           /* borrowed */
	struct tft_json_reader r;
	struct tft_error *err;      /* borrowed, may be NULL: parse errors */
	struct batch *cur;          /* owned; being filled */
	struct pipe *pipe;          /* owned; NULL: read, parse and commit on this thread */
	struct tft_source_map map;  /* owned; the input file when parsed in place */
	uint64_t raw_offset;        /* raw input read so far, with a reader thread */
	uint64_t nonobj;            /* events-array elements that are not objects */
	bool saw_events;            /* a traceEvents array was found */
};

/* Hand the current batch over: commit it now, or queue it for the committer. */
static int p_flush(struct parser *p)
{
	struct batch *b = p->cur;
	int rc;

	b->end_off = tft_json_offset(&p->r); /* its events all end before this */
	if (p->map.base)
		b->raw_offset = (uint64_t)b->end_off;
	else
		b->raw_offset = p->pipe ? p->raw_offset : tft_source_raw_offset(p->r.src);
	if (!p->pipe) {
		rc = commit_batch(p->c, b);
		batch_reset(b);
		tft_source_map_release(&p->map, (size_t)b->end_off);
		return rc;
	}
	rc = pipe_put(p->pipe, b, &p->cur);
	if (p->map.base)
		tft_source_map_release(&p->map, pipe_done_off(p->pipe));
	return rc;
}

/*
 * After TFT_JSON_MORE (nothing since the mark is kept): read more input.
 * On one thread the batch is committed first and the window refilled in
 * place. With threads the reader has filled the next window; the previous
 * one, which the batch borrows from, leaves with the batch.
 */
static int p_refill(struct parser *p)
{
	struct filled f;
	int rc;

	if (!p->pipe) {
		if (p->cur->nev && (rc = p_flush(p)))
			return rc;
		return tft_json_refill(&p->r, p->err);
	}
	if ((rc = pipe_take_filled(p->pipe, &f, p->err)))
		return rc;
	rc = tft_json_refill_from(&p->r, &f.win, f.at, f.n, f.eof, p->err);
	if (rc) {
		pipe_put_window(p->pipe, &f.win);
		return rc;
	}
	p->raw_offset = f.raw_offset;
	p->cur->win = f.win; /* the previous window, released with the batch */
	return p_flush(p);
}

/* p_refill() as the reader's refill hook (tft_json_skip_stream refills by itself). */
static int p_refill_hook(void *ctx, struct tft_error *err)
{
	(void)err; /* the parser's own: p->err */
	return p_refill(ctx);
}

/* Commit everything parsed so far; afterwards the parser may touch c and the writer. */
static int p_drain(struct parser *p)
{
	int rc;

	if (p->cur->nev == 0 && !p->cur->win.buf && !p->pipe)
		return 0;
	if ((p->cur->nev || p->cur->win.buf) && (rc = p_flush(p)))
		return rc;
	return p->pipe ? pipe_wait_idle(p->pipe) : 0;
}

/* Enter an object value; *is_obj = false when the value was something else (consumed). */
static int enter_object(struct parser *p, bool *is_obj)
{
	struct tft_json_value v;
	int rc = tft_json_read(&p->r, &v, p->err);

	*is_obj = false;
	if (rc)
		return rc;
	if (v.type == TFT_JSON_ARRAY)
		return tft_json_skip_rest(&p->r, p->err);
	*is_obj = v.type == TFT_JSON_OBJECT;
	return 0;
}

static inline bool is_container(const struct tft_json_value *v)
{
	return v->type == TFT_JSON_OBJECT || v->type == TFT_JSON_ARRAY;
}

/* Member values as the importer wants them (v from tft_json_next_member). */
static inline void val_str(const struct tft_json_value *v, struct tft_json_str *out)
{
	if (v->type == TFT_JSON_STRING || v->type == TFT_JSON_NUMBER) {
		out->ptr = v->ptr;
		out->len = v->len;
	} else {
		out->ptr = "";
		out->len = 0;
	}
}

static inline void val_xid(const struct tft_json_value *v, struct xid *x)
{
	x->kind = 0;
	if (v->type == TFT_JSON_NUMBER) {
		if (tft_json_value_to_i64(v, &x->i) == 0) {
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

static inline int val_time(struct parser *p, const struct tft_json_value *v, int64_t *out, bool *has)
{
	*has = false;
	if (v->type == TFT_JSON_NUMBER) {
		if (tft_json_value_to_ns(v, out))
			return tft_error_set(p->err, TFT_EFORMAT, v->offset,
					     "expected a time in microseconds within the int64 nanosecond range");
		*has = true;
	} else if (v->type == TFT_JSON_STRING) {
		if (tft_json_number_to_ns(v->ptr, v->len, out) != 0) /* never a silent 0 */
			return tft_error_set(p->err, TFT_EFORMAT, v->offset,
					     "expected a time in microseconds (a number, or a string holding one) within the int64 nanosecond range");
		*has = true;
	}
	return 0;
}

static bool val_bool(const struct tft_json_value *v)
{
	return v->type == TFT_JSON_TRUE ||
	       (v->type == TFT_JSON_NUMBER && !(v->len == 1 && v->ptr[0] == '0'));
}

/* A string-ish value read whole (top-level keys). */
static int read_str(struct parser *p, struct tft_json_str *out)
{
	struct tft_json_value v;
	int rc = tft_json_read_flat(&p->r, &v, false, p->err);

	if (rc)
		return rc;
	val_str(&v, out);
	return 0;
}

/* "id2": {"local": ...} or {"global": ...}; the '{' is next. */
static int read_id2(struct parser *p, struct cev *e)
{
	struct tft_json_value v;
	struct tft_json_str k;
	bool is_obj;
	int rc = enter_object(p, &is_obj);

	if (rc || !is_obj)
		return rc;
	while ((rc = tft_json_next_member(&p->r, &k, &v, p->err)) == 1) {
		if (is_container(&v)) {
			if ((rc = tft_json_skip_checked(&p->r, NULL, p->err)))
				return rc;
		} else if (STR_EQ(&k, "local") || STR_EQ(&k, "global")) {
			e->id_local = k.ptr[0] == 'l';
			val_xid(&v, &e->id);
		}
	}
	return rc;
}

#define MEMBERS 16 /* members read per tft_json_next_members() call */

/* One arg from its parsed member; containers are validated and kept verbatim. */
/* Digits, with a leading '-' at most: a JSON integer (which the reader has validated). */
static bool is_int_literal(const char *s, size_t n)
{
	size_t i = n && s[0] == '-';

	if (i == n)
		return false;
	for (; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

static inline int put_arg(struct parser *p, struct parg *a, const struct tft_json_member *m)
{
	int rc;

	a->key = m->key;
	switch (m->v.type) {
	case TFT_JSON_STRING:
		a->type = TFT_ARG_STR;
		a->s.ptr = m->v.ptr;
		a->s.len = m->v.len;
		break;
	case TFT_JSON_NUMBER:
		if (tft_json_value_to_i64(&m->v, &a->i) == 0) {
			a->type = TFT_ARG_INT;
		} else {
			/*
			 * An integer past int64 (a uint64 id, a hash) stays the exact
			 * JSON text it was, as a double would round it; anything else
			 * is a double, converted by the committer (parg_double).
			 */
			a->type = is_int_literal(m->v.ptr, m->v.len) ? TFT_ARG_JSON : TFT_ARG_DOUBLE;
			a->s.ptr = m->v.ptr;
			a->s.len = m->v.len;
		}
		break;
	case TFT_JSON_TRUE:
	case TFT_JSON_FALSE:
		a->type = TFT_ARG_BOOL;
		a->i = m->v.type == TFT_JSON_TRUE;
		break;
	case TFT_JSON_OBJECT:
	case TFT_JSON_ARRAY:
		/* kept verbatim: validated so that exporters can copy it out */
		if ((rc = tft_json_skip_checked(&p->r, &a->s, p->err)))
			return rc;
		a->type = TFT_ARG_JSON;
		break;
	default:
		a->type = TFT_ARG_NULL;
		a->i = 0;
		break;
	}
	return 0;
}

/* "args": {...} of the event in pe; the '{' is next. Appends to b->pargs. */
static int read_args(struct parser *p, struct batch *b, const struct pev *pe)
{
	struct tft_json_member ms[MEMBERS];
	bool is_obj, ended = false;
	unsigned n;
	int rc = enter_object(p, &is_obj);

	if (rc || !is_obj)
		return rc;
	while (!ended) {
		if ((rc = tft_json_next_members(&p->r, ms, MEMBERS, &n, &ended, p->err)))
			return rc;
		if (tft_unlikely(b->npargs + n > b->cap_pargs) &&
		    tft_grow((void **)&b->pargs, &b->cap_pargs, (uint64_t)b->npargs + n, sizeof(*b->pargs)))
			return tft_error_set(p->err, TFT_ENOMEM, -1, "out of memory");
		for (unsigned i = 0; i < n; i++) {
			if (b->npargs - pe->parg0 >= MAX_ARGS) {
				if (is_container(&ms[i].v) && (rc = tft_json_skip_checked(&p->r, NULL, p->err)))
					return rc;
				continue;
			}
			if ((rc = put_arg(p, &b->pargs[b->npargs], &ms[i])))
				return rc;
			b->npargs++;
		}
	}
	return 0;
}

/*
 * Parse one events-array element into *pe (args appended to b). Returns 1
 * for an event object, 0 for an element that is not an object (skipped),
 * TFT_JSON_MORE or an error.
 */
static int parse_event(struct parser *p, struct batch *b, struct pev *pe)
{
	struct cev *e = &pe->e;
	struct tft_json_member ms[MEMBERS];
	bool is_obj, ended = false;
	unsigned n;
	int rc;

	memset(e, 0, sizeof(*e));
	e->offset = tft_json_offset(&p->r); /* next_item stopped at the element's first byte */
	if ((rc = enter_object(p, &is_obj)))
		return rc;
	if (!is_obj)
		return 0;
	while (!ended) {
		if ((rc = tft_json_next_members(&p->r, ms, MEMBERS, &n, &ended, p->err)))
			return rc;
		for (unsigned i = 0; i < n; i++) {
			const struct tft_json_member *m = &ms[i];
			const char *kp = m->key.ptr;
			const struct tft_json_value *v = &m->v;
			if (tft_unlikely(is_container(v))) {
				if (m->key.len == 4 && memcmp(kp, "args", 4) == 0) {
					b->npargs = pe->parg0; /* a second "args" replaces the first, as in JSON */
					rc = read_args(p, b, pe);
				}
				else if (m->key.len == 3 && memcmp(kp, "id2", 3) == 0)
					rc = read_id2(p, e);
				else /* an event's key not used: still checked to be JSON */
					rc = tft_json_skip_checked(&p->r, NULL, p->err);
				if (rc)
					return rc;
				continue;
			}
			switch (m->key.len) {
			case 1:
				if (kp[0] == 's')
					val_str(v, &e->s);
				break;
			case 2:
				if (kp[0] == 'p' && kp[1] == 'h') {
					val_str(v, &e->ph);
					e->has_ph = true;
				} else if (kp[0] == 't' && kp[1] == 's') {
					rc = val_time(p, v, &e->ts, &e->has_ts);
				} else if (kp[0] == 'i' && kp[1] == 'd') {
					val_xid(v, &e->id);
				} else if (kp[0] == 'b' && kp[1] == 'p') {
					val_str(v, &e->bp);
				}
				break;
			case 3:
				if (memcmp(kp, "pid", 3) == 0)
					val_xid(v, &e->pid);
				else if (memcmp(kp, "tid", 3) == 0)
					val_xid(v, &e->tid);
				else if (memcmp(kp, "cat", 3) == 0)
					val_str(v, &e->cat);
				else if (memcmp(kp, "dur", 3) == 0)
					rc = val_time(p, v, &e->dur, &e->has_dur);
				break;
			case 4:
				if (memcmp(kp, "name", 4) == 0)
					val_str(v, &e->name);
				break;
			case 5:
				if (memcmp(kp, "scope", 5) == 0)
					val_str(v, &e->scope);
				break;
			case 7:
				if (memcmp(kp, "bind_id", 7) == 0)
					val_xid(v, &e->bind_id);
				else if (memcmp(kp, "flow_in", 7) == 0)
					e->flow_in = val_bool(v);
				break;
			case 8:
				if (memcmp(kp, "flow_out", 8) == 0)
					e->flow_out = val_bool(v);
				break;
			default:
				break;
			}
			if (rc)
				return rc;
		}
	}
	if (!e->has_dur)
		e->dur = 0;
	pe->npargs = b->npargs - pe->parg0;
	return 1;
}

/* Strings decoded into the reader's scratch die at the next mark: copy them into b. */
static int keep_decoded(struct parser *p, struct batch *b, struct pev *pe)
{
	struct cev *e = &pe->e;
	struct tft_json_str *strs[] = { &e->ph, &e->name, &e->cat, &e->scope, &e->bp, &e->s,
					&e->pid.s, &e->tid.s, &e->id.s, &e->bind_id.s };

	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
		if (strs[i]->len && !tft_json_in_window(&p->r, strs[i]->ptr) && batch_keep(b, strs[i]))
			goto oom;
	for (uint32_t i = 0; i < pe->npargs; i++) {
		struct parg *a = &b->pargs[pe->parg0 + i];
		if (a->key.len && !tft_json_in_window(&p->r, a->key.ptr) && batch_keep(b, &a->key))
			goto oom;
		if ((a->type == TFT_ARG_STR || a->type == TFT_ARG_JSON) && a->s.len &&
		    !tft_json_in_window(&p->r, a->s.ptr) && batch_keep(b, &a->s))
			goto oom;
	}
	return 0;
oom:
	return tft_error_set(p->err, TFT_ENOMEM, -1, "out of memory");
}

/* ---- document walk --------------------------------------------------------------- */

static int read_events(struct parser *p, unsigned flags)
{
	uint64_t items = 0, with_ph = 0;
	int64_t first = -1;
	int rc;

	for (;;) {
		struct batch *b = p->cur;
		struct pev *pe;
		if (tft_unlikely(b->nev == b->cap_ev) &&
		    tft_grow((void **)&b->ev, &b->cap_ev, (uint64_t)b->nev + 1, sizeof(*b->ev)))
			return tft_error_set(p->err, TFT_ENOMEM, -1, "out of memory");
		pe = &b->ev[b->nev];
		pe->parg0 = b->npargs;
		tft_json_mark(&p->r);
		rc = tft_json_next_item(&p->r, flags, p->err);
		if (rc == 1)
			rc = parse_event(p, b, pe);
		else if (rc == 0)
			break;
		if (rc == TFT_JSON_MORE) {
			b->npargs = pe->parg0; /* drop the partial event's args */
			if ((rc = p_refill(p)))
				return rc;
			continue;
		}
		if (rc < 0)
			return rc;
		if (items++ == 0)
			first = pe->e.offset;
		if (rc == 0) {
			p->nonobj++;
			continue;
		}
		with_ph += pe->e.has_ph;
		if (p->r.decoded && (rc = keep_decoded(p, b, pe)))
			return rc;
		if (++b->nev >= BATCH_EVENTS && (rc = p_flush(p)))
			return rc;
	}
	/* [1, 2, 3] or [{"a": 1}] is valid JSON but not a trace */
	if (items && !with_ph)
		return tft_error_set(p->err, TFT_EFORMAT, first,
				     "expected trace event objects (with a \"ph\" key) in the events array");
	return 0;
}

/* ---- top-level keys (the committer is idle: see p_drain) ----------------------------- */

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

static int set_meta_compact(struct chrome *c, const char *key, const char *json, size_t len)
{
	char *tmp = malloc(len + 1);
	size_t n;
	int rc;

	if (!tmp)
		return nomem(c);
	n = tft_json_compact(json, len, tmp);
	tmp[n] = '\0';
	rc = tft_writer_set_meta(c->w, key, tmp);
	free(tmp);
	return rc;
}

static int meta_json(struct parser *p, const char *key, struct tft_json_str *raw_out)
{
	struct tft_json_str raw;
	int rc = tft_json_skip_checked(&p->r, &raw, p->err);

	if (rc)
		return rc;
	if (raw_out)
		*raw_out = raw;
	return set_meta_compact(p->c, key, raw.ptr, raw.len);
}

static int meta_scalar(struct parser *p, const char *key)
{
	struct tft_json_value v;
	int rc = tft_json_read_flat(&p->r, &v, true, p->err);

	if (rc)
		return rc;
	if (v.type == TFT_JSON_OBJECT || v.type == TFT_JSON_ARRAY)
		return set_meta_compact(p->c, key, v.ptr, v.len);
	if (v.type == TFT_JSON_STRING || v.type == TFT_JSON_NUMBER) {
		struct tft_json_str s = { v.ptr, v.len };
		return set_meta_str(p->c, key, &s);
	}
	return 0;
}

static int read_distributed(struct parser *p)
{
	struct chrome *c = p->c;
	struct tft_json_value v;
	struct tft_json_str k;
	bool is_obj;
	int rc = enter_object(p, &is_obj);

	if (rc || !is_obj)
		return rc;
	while ((rc = tft_json_next_key(&p->r, &k, p->err)) == 1) {
		if (STR_EQ(&k, "rank")) {
			int64_t r;
			if ((rc = tft_json_read_flat(&p->r, &v, false, p->err)))
				return rc;
			if (v.type == TFT_JSON_NUMBER && tft_json_number_to_i64(v.ptr, v.len, &r) == 0 &&
			    r >= 0 && r <= INT32_MAX) {
				c->has_rank = true;
				c->rank = (int32_t)r;
			}
		} else if (STR_EQ(&k, "backend")) {
			rc = meta_scalar(p, "distributed_backend");
		} else if (STR_EQ(&k, "world_size")) {
			rc = meta_scalar(p, "world_size");
		} else {
			rc = tft_json_skip(&p->r, NULL, p->err);
		}
		if (rc)
			return rc;
	}
	return rc;
}

static int read_base_time(struct parser *p)
{
	struct chrome *c = p->c;
	struct tft_json_value v;
	int rc = tft_json_read_flat(&p->r, &v, false, p->err);
	int64_t ns;

	if (rc)
		return rc;
	if (v.type != TFT_JSON_NUMBER && v.type != TFT_JSON_STRING)
		return 0;
	/* already nanoseconds: an integer (a fraction is rounded) */
	if (tft_json_number_to_i64(v.ptr, v.len, &ns) != 0) {
		double d;
		if (tft_json_number_to_double(v.ptr, v.len, &d) || !(d > -9.2e18 && d < 9.2e18))
			return tft_error_set(p->err, TFT_EFORMAT, v.offset,
					     "expected baseTimeNanoseconds as an integer number of nanoseconds");
		ns = (int64_t)(d < 0 ? d - 0.5 : d + 0.5);
	}
	c->shift_ns = ns;
	c->kineto = true;
	char buf[32];
	snprintf(buf, sizeof(buf), "%lld", (long long)ns);
	return tft_writer_set_meta(c->w, "base_time_ns", buf);
}

/* ---- metadata written by tftracer's Chrome exporter ------------------------------------ */

/* An int64 member value; false for anything else. */
static bool md_int(const struct tft_json_value *v, int64_t *out)
{
	return v->type == TFT_JSON_NUMBER && tft_json_value_to_i64(v, out) == 0;
}

/* One object of metadata.processes / .tracks / .steps (entered); which: 'p', 't', 's'. */
static int md_entry(struct chrome *c, struct tft_json_reader *r, char which)
{
	struct md_proc mp = { .rank = -1 };
	struct md_track mt = { 0 };
	struct tft_step st = { .process = TFT_NONE };
	int64_t step_pid = INT64_MIN, iv;
	bool has_pid = false, has_tid = false, has_index = false, has_start = false;
	struct tft_json_value v;
	struct tft_json_str k;
	char kind[16] = "";
	int rc;

	while ((rc = tft_json_next_member(r, &k, &v, NULL)) == 1) {
		if (is_container(&v)) {
			if ((rc = tft_json_skip(r, NULL, NULL)))
				return rc;
			continue;
		}
		if (STR_EQ(&k, "pid")) {
			if (md_int(&v, &iv)) {
				has_pid = true;
				mp.pid = mt.pid = step_pid = iv;
			}
		} else if (STR_EQ(&k, "source_pid")) {
			mp.has_source_pid = md_int(&v, &mp.source_pid);
		} else if (STR_EQ(&k, "host") && v.type == TFT_JSON_STRING && v.len) {
			if ((rc = intern(c, v.ptr, v.len, &mp.host)))
				return rc;
			mp.has_host = true;
		} else if (STR_EQ(&k, "rank")) {
			if (md_int(&v, &iv) && iv >= INT32_MIN && iv <= INT32_MAX) {
				mp.rank = (int32_t)iv;
				mp.has_rank = true;
			}
		} else if (STR_EQ(&k, "labels") && v.type == TFT_JSON_STRING && which == 'p') {
			/* the process's own labels: process_labels adds host and rank */
			mp.labels = 0;
			if (v.len && (rc = intern(c, v.ptr, v.len, &mp.labels)))
				return rc;
			mp.has_labels = true;
		} else if (STR_EQ(&k, "sort_index") && which == 'p') {
			if (md_int(&v, &iv) && iv >= INT32_MIN && iv <= INT32_MAX) {
				mp.sort_index = (int32_t)iv;
				mp.has_sort_index = true;
			}
		} else if (STR_EQ(&k, "tid")) {
			has_tid = md_int(&v, &mt.tid);
		} else if (STR_EQ(&k, "source_tid")) {
			mt.has_source_tid = md_int(&v, &mt.source_tid);
		} else if ((STR_EQ(&k, "concurrent") || STR_EQ(&k, "derived")) &&
			   (v.type == TFT_JSON_TRUE || v.type == TFT_JSON_FALSE)) {
			uint32_t f = STR_EQ(&k, "concurrent") ? TFT_TRACKF_CONCURRENT : TFT_TRACKF_DERIVED;
			mt.flags = v.type == TFT_JSON_TRUE ? mt.flags | f : mt.flags & ~f;
			mt.has_flags = true;
		} else if (STR_EQ(&k, "kind") && v.type == TFT_JSON_STRING && v.len < sizeof(kind)) {
			memcpy(kind, v.ptr, v.len);
			kind[v.len] = '\0';
		} else if (STR_EQ(&k, "index")) {
			has_index = md_int(&v, &st.index);
		} else if (STR_EQ(&k, "name") && v.type == TFT_JSON_STRING && which == 's') {
			if ((rc = intern(c, v.ptr, v.len, &st.name)))
				return rc;
		} else if (STR_EQ(&k, "start_ns")) {
			has_start = md_int(&v, &st.start_ns);
		} else if (STR_EQ(&k, "dur_ns")) {
			if (!md_int(&v, &st.dur_ns) || st.dur_ns < 0)
				st.dur_ns = 0;
		} else if (STR_EQ(&k, "traced")) {
			st.traced = v.type == TFT_JSON_TRUE;
		}
	}
	if (rc < 0)
		return rc;
	if (which == 'p' && has_pid) {
		if (tft_grow((void **)&c->md_procs, &c->md_cap_procs, (uint64_t)c->md_nprocs + 1,
			     sizeof(*c->md_procs)))
			return nomem(c);
		c->md_procs[c->md_nprocs++] = mp;
	} else if (which == 't' && has_pid && has_tid) {
		mt.kind = (uint32_t)tft_track_kind_parse(kind);
		if (tft_grow((void **)&c->md_tracks, &c->md_cap_tracks, (uint64_t)c->md_ntracks + 1,
			     sizeof(*c->md_tracks)))
			return nomem(c);
		c->md_tracks[c->md_ntracks++] = mt;
	} else if (which == 's' && has_index && has_start) {
		if (tft_grow((void **)&c->md_steps, &c->md_cap_steps, (uint64_t)c->md_nsteps + 1,
			     sizeof(*c->md_steps)) ||
		    tft_grow((void **)&c->md_step_pid, &c->md_cap_step_pid, (uint64_t)c->md_nsteps + 1,
			     sizeof(*c->md_step_pid)))
			return nomem(c);
		c->md_step_pid[c->md_nsteps] = step_pid;
		c->md_steps[c->md_nsteps++] = st;
	}
	return 0;
}

/*
 * The "metadata" object (validated JSON text): a tftracer export lists what
 * Chrome's fields cannot carry (track kinds, hosts, ranks, steps without a
 * slice); keep it for finish(). Anything unexpected is ignored.
 */
static int md_parse(struct chrome *c, const char *text, size_t len)
{
	struct tft_json_reader_opts ro = { .block_size = len + 1, .max_buffer = len + 1 };
	struct tft_source *src = tft_source_open_mem(text, len, "metadata", NULL);
	struct tft_json_reader r;
	struct tft_json_value v;
	struct tft_json_str k;
	int rc;

	if (!src)
		return nomem(c);
	if ((rc = tft_json_reader_init(&r, src, &ro, NULL))) {
		tft_source_close(src);
		return rc == TFT_ENOMEM ? nomem(c) : 0;
	}
	if (tft_json_read(&r, &v, NULL) || v.type != TFT_JSON_OBJECT)
		goto out;
	while ((rc = tft_json_next_member(&r, &k, &v, NULL)) == 1) {
		char which = STR_EQ(&k, "processes") ? 'p' : STR_EQ(&k, "tracks") ? 't'
			   : STR_EQ(&k, "steps") ? 's' : 0;
		if (STR_EQ(&k, "exporter")) {
			if (v.type == TFT_JSON_STRING && v.len >= 8 && memcmp(v.ptr, "tftracer", 8) == 0)
				c->md_tftracer = true;
			continue;
		}
		if (!is_container(&v))
			continue;
		if (!which || v.type != TFT_JSON_ARRAY) {
			if (tft_json_skip(&r, NULL, NULL))
				break;
			continue;
		}
		if (which == 's')
			c->md_has_steps = true;
		if (tft_json_read(&r, &v, NULL))
			break;
		while ((rc = tft_json_next_item(&r, 0, NULL)) == 1) {
			bool is_obj;
			if ((rc = tft_json_read(&r, &v, NULL)))
				break;
			is_obj = v.type == TFT_JSON_OBJECT;
			if (v.type == TFT_JSON_ARRAY)
				rc = tft_json_skip_rest(&r, NULL);
			else if (is_obj)
				rc = md_entry(c, &r, which);
			if (rc)
				break;
		}
		if (rc == TFT_ENOMEM)
			break;
		if (rc)
			goto out;
	}
out:
	tft_json_reader_fini(&r);
	tft_source_close(src);
	return rc == TFT_ENOMEM ? rc : 0;
}

/* Handle one top-level key's value (the key was consumed). */
static int top_value(struct parser *p, const struct tft_json_str *k)
{
	struct chrome *c = p->c;

	if (STR_EQ(k, "displayTimeUnit"))
		return meta_scalar(p, "display_time_unit");
	if (STR_EQ(k, "otherData"))
		return meta_json(p, "other_data", NULL);
	if (STR_EQ(k, "metadata")) {
		struct tft_json_str raw;
		int rc = meta_json(p, "metadata", &raw);
		if (rc)
			return rc;
		return md_parse(c, raw.ptr, raw.len);
	}
	if (STR_EQ(k, "schemaVersion")) {
		c->kineto = true;
		return meta_scalar(p, "kineto_schema_version");
	}
	if (STR_EQ(k, "deviceProperties")) {
		c->kineto = true;
		return meta_json(p, "device_properties", NULL);
	}
	if (STR_EQ(k, "distributedInfo")) {
		c->kineto = true;
		return read_distributed(p);
	}
	if (STR_EQ(k, "baseTimeNanoseconds"))
		return read_base_time(p);
	if (STR_EQ(k, "traceName"))
		return meta_scalar(p, "trace_name");
	if (STR_EQ(k, "host_name")) {
		struct tft_json_str s;
		int rc = read_str(p, &s);
		if (rc || s.len == 0)
			return rc;
		return intern(c, s.ptr, s.len, &c->host);
	}
	return tft_json_skip(&p->r, NULL, p->err);
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

static int read_object_doc(struct parser *p, int64_t obj_offset)
{
	struct tft_json_str k;
	struct tft_json_value v;
	int rc;

	for (;;) {
		tft_json_mark(&p->r);
		rc = tft_json_next_key(&p->r, &k, p->err);
		if (rc == 1) {
			if (STR_EQ(&k, "traceEvents")) {
				if ((rc = tft_json_read(&p->r, &v, p->err)) == 0) {
					if (v.type != TFT_JSON_ARRAY)
						return tft_error_set(p->err, TFT_EFORMAT, v.offset,
								     "expected an array of trace events as the value of \"traceEvents\"");
					p->saw_events = true;
					if ((rc = read_events(p, 0)) == 0)
						continue;
				}
			} else if ((rc = p_drain(p))) {
				return rc;
			} else if (is_streamed_key(&k)) {
				if (STR_EQ(&k, "systemTraceEvents") &&
				    (rc = tft_writer_set_meta(p->c->w, "system_trace_events",
							      "present (not imported)")))
					return rc;
				if ((rc = tft_json_skip_stream(&p->r, p->err)))
					return rc;
				continue;
			} else if (is_known_key(&k)) {
				if ((rc = top_value(p, &k)) == 0)
					continue;
			} else {
				if ((rc = tft_json_skip_stream(&p->r, p->err)))
					return rc;
				continue;
			}
		}
		if (rc == TFT_JSON_MORE) {
			if ((rc = p_refill(p)))
				return rc;
			continue;
		}
		if (rc == 0 && !p->saw_events)
			return tft_error_set(p->err, TFT_EFORMAT, obj_offset,
					     "expected a \"traceEvents\" array in the top-level object: not a Chrome trace");
		return rc; /* 0: end of the object; <0: error */
	}
}

static int read_document(struct parser *p)
{
	struct tft_json_value v;
	int rc;

	/* a UTF-8 byte order mark is tolerated */
	if (p->r.len >= 3 && memcmp(p->r.buf, "\xef\xbb\xbf", 3) == 0)
		p->r.pos = 3;
	for (;;) {
		tft_json_mark(&p->r);
		rc = tft_json_read(&p->r, &v, p->err);
		if (rc != TFT_JSON_MORE)
			break;
		if ((rc = p_refill(p)))
			return rc;
	}
	if (rc)
		return rc;
	if (v.type == TFT_JSON_ARRAY)
		rc = read_events(p, TFT_JSON_EOF_ENDS_ARRAY);
	else if (v.type == TFT_JSON_OBJECT)
		rc = read_object_doc(p, v.offset);
	else
		return tft_error_set(p->err, TFT_EFORMAT, v.offset,
				     "expected '{' or '[' at the start of a JSON trace");
	if (rc)
		return rc;
	for (;;) {
		tft_json_mark(&p->r);
		rc = tft_json_finish(&p->r, p->err);
		if (rc != TFT_JSON_MORE)
			break;
		if ((rc = p_refill(p)))
			return rc;
	}
	if (rc)
		return rc;
	return p_drain(p);
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
	return 0;
}

/* One flow to the writer: from point `from` (NULL: never seen) to point `to` (NULL: never seen). */
static int put_flow(struct chrome *c, const struct fpoint *from, const struct fpoint *to)
{
	const struct fpoint *named = from ? from : to;
	struct tft_flow f;

	memset(&f, 0, sizeof(f));
	f.flow_id = c->fkey_ids[named->key];
	f.name = named->name;
	f.cat = named->cat;
	f.src_track = from ? from->track : TFT_NONE;
	f.src_ts_ns = from ? from->ts + c->shift_ns : 0;
	f.dst_track = to ? to->track : TFT_NONE;
	f.dst_ts_ns = to ? to->ts + c->shift_ns : 0;
	f.flags = to ? to->flags : 0;
	if (!from || !to) {
		f.flags |= TFT_FLOWF_UNMATCHED;
		c->unmatched_flows++;
	}
	return tft_writer_add_flow(c->w, &f);
}

/* Points of one key sort by (ts, s < t < f, input order). */
struct fp_ord {
	int64_t ts;
	uint32_t idx;
	uint8_t ph;
};

static int fp_cmp(const void *a, const void *b)
{
	const struct fp_ord *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->ph != y->ph)
		return x->ph < y->ph ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/*
 * Pair the flow points of each key in timestamp order: an s opens a
 * segment (and ends the chains left open by a t); a t ends the oldest open
 * segment (one flow) and opens the next; an f ends the oldest open segment,
 * or is an unmatched flow when none is open. An s never ended is an
 * unmatched flow; a trailing t ends its chain. Reused ids thus pair first
 * in, first out. Flows go to the writer, shifted by shift_ns.
 */
static int emit_flows(struct chrome *c)
{
	uint32_t n = c->nfpoints, nk = c->nfkeys;
	uint32_t *start = NULL, *order = NULL, *open = NULL;
	struct fp_ord *seg = NULL;
	uint32_t cap_seg = 0;
	int rc = 0;

	if (!n)
		return 0;
	start = calloc((size_t)nk + 1, sizeof(*start));
	order = malloc((size_t)n * sizeof(*order));
	open = malloc((size_t)n * sizeof(*open));
	if (!start || !order || !open) {
		rc = nomem(c);
		goto out;
	}
	/* group by key (counting sort: input order kept within a key) */
	for (uint32_t i = 0; i < n; i++)
		start[c->fpoints[i].key + 1]++;
	for (uint32_t k = 0; k < nk; k++)
		start[k + 1] += start[k];
	for (uint32_t i = 0; i < n; i++)
		order[start[c->fpoints[i].key]++] = i;
	for (uint32_t k = nk; k > 0; k--) /* the cursors moved each start to the next key's */
		start[k] = start[k - 1];
	start[0] = 0;
	for (uint32_t k = 0; k < nk && !rc; k++) {
		uint32_t lo = start[k], m = start[k + 1] - lo, head = 0, nopen = 0;
		if (m > cap_seg) {
			struct fp_ord *ns = realloc(seg, (size_t)m * sizeof(*seg));
			if (!ns) {
				rc = nomem(c);
				break;
			}
			seg = ns;
			cap_seg = m;
		}
		for (uint32_t j = 0; j < m; j++) {
			const struct fpoint *p = &c->fpoints[order[lo + j]];
			seg[j] = (struct fp_ord){ p->ts, order[lo + j], p->ph };
		}
		if (m > 16) {
			qsort(seg, m, sizeof(*seg), fp_cmp);
		} else {
			for (uint32_t j = 1; j < m; j++) /* mostly 2 points: insertion sort */
				for (uint32_t i = j; i > 0 && fp_cmp(&seg[i], &seg[i - 1]) < 0; i--) {
					struct fp_ord t = seg[i];
					seg[i] = seg[i - 1];
					seg[i - 1] = t;
				}
		}
		/* open[head .. nopen): open points of this key, oldest first */
		for (uint32_t j = 0; j < m && !rc; j++) {
			const struct fpoint *p = &c->fpoints[seg[j].idx];
			if (p->ph == FP_S) {
				uint32_t w = head;
				for (uint32_t i = head; i < nopen; i++) /* chains ended by a t are done */
					if (c->fpoints[open[i]].ph == FP_S)
						open[w++] = open[i];
				nopen = w;
				open[nopen++] = seg[j].idx;
				continue;
			}
			if (head < nopen)
				rc = put_flow(c, &c->fpoints[open[head++]], p);
			else if (p->ph == FP_F)
				rc = put_flow(c, NULL, p);
			if (p->ph == FP_T)
				open[nopen++] = seg[j].idx;
		}
		for (uint32_t i = head; i < nopen && !rc; i++)
			if (c->fpoints[open[i]].ph == FP_S)
				rc = put_flow(c, &c->fpoints[open[i]], NULL);
	}
out:
	free(start);
	free(order);
	free(open);
	free(seg);
	return rc;
}

/* Apply the process and track fields a tftracer export listed under "metadata" (md_parse). */
static void apply_md(struct chrome *c)
{
	for (uint32_t i = 0; i < c->md_nprocs; i++) {
		const struct md_proc *m = &c->md_procs[i];
		struct hkey k = mkkey(K_PROC, 0, (uint64_t)m->pid, 0);
		uint32_t idx = map_get(&c->map, &k);
		struct tft_process *wp;
		if (idx == TFT_NONE || c->procs[idx].id == TFT_NONE ||
		    !(wp = tft_writer_process(c->w, c->procs[idx].id)))
			continue;
		if (m->has_source_pid)
			wp->pid = m->source_pid;
		if (m->has_host)
			wp->host = m->host;
		if (m->has_rank)
			wp->rank = m->rank;
		if (m->has_labels)
			wp->labels = m->labels;
		if (m->has_sort_index)
			wp->sort_index = m->sort_index;
	}
	for (uint32_t i = 0; i < c->md_ntracks; i++) {
		const struct md_track *m = &c->md_tracks[i];
		struct hkey pk = mkkey(K_PROC, 0, (uint64_t)m->pid, 0);
		uint32_t pidx = map_get(&c->map, &pk), tidx;
		struct tft_track *wt;
		if (pidx == TFT_NONE)
			continue;
		struct hkey tk = mkkey(K_THREAD, 0, pidx, (uint64_t)m->tid);
		tidx = map_get(&c->map, &tk);
		/* thread-like tracks only: counter/async/object tracks are re-created by kind */
		if (tidx == TFT_NONE || c->threads[tidx].track == TFT_NONE ||
		    !(wt = tft_writer_track(c->w, c->threads[tidx].track)))
			continue;
		if (m->kind == TFT_TRACK_THREAD || m->kind == TFT_TRACK_DEVICE ||
		    m->kind == TFT_TRACK_GPU_STREAM || m->kind == TFT_TRACK_COMM)
			wt->kind = m->kind;
		if (m->has_flags)
			wt->flags = m->flags;
		if (m->has_source_tid)
			wt->tid = m->source_tid;
	}
}

/*
 * A tftracer export lists every step (with or without a slice): they
 * replace the ones found from ProfilerStep#N slices, which the list
 * includes. Its times are absolute (a tftracer export has no time shift).
 */
static int add_md_steps(struct chrome *c)
{
	int rc;

	for (uint32_t i = 0; i < c->md_nsteps; i++) {
		struct tft_step s = c->md_steps[i];
		s.process = TFT_NONE;
		if (c->md_step_pid[i] != INT64_MIN) {
			struct hkey k = mkkey(K_PROC, 0, (uint64_t)c->md_step_pid[i], 0);
			uint32_t idx = map_get(&c->map, &k);
			if (idx != TFT_NONE && (rc = ensure_proc(c, idx, &s.process)))
				return rc;
		}
		if ((rc = tft_writer_add_step(c->w, &s)))
			return rc;
	}
	return 0;
}

/*
 * The model name deviceProperties gives GPU `id` (Kineto:
 * [{"id": 0, "name": "NVIDIA A100-SXM4-80GB", ...}]), into buf; false if none.
 */
static bool device_model(struct chrome *c, int64_t id, char *buf, size_t size)
{
	const char *text = tft_writer_meta(c->w, "device_properties");
	struct tft_json_reader_opts ro;
	struct tft_source *src;
	struct tft_json_reader r;
	struct tft_json_value v;
	bool found = false;

	if (!text || text[0] != '[')
		return false;
	ro = (struct tft_json_reader_opts){ .block_size = strlen(text) + 1,
					    .max_buffer = strlen(text) + 1 };
	if (!(src = tft_source_open_mem(text, strlen(text), "deviceProperties", NULL)))
		return false;
	if (tft_json_reader_init(&r, src, &ro, NULL)) {
		tft_source_close(src);
		return false;
	}
	if (tft_json_read(&r, &v, NULL) == 0 && v.type == TFT_JSON_ARRAY) {
		while (!found && tft_json_next_item(&r, 0, NULL) == 1) {
			struct tft_json_str k, name = { 0 };
			int64_t iv = INT64_MIN;
			if (tft_json_read(&r, &v, NULL))
				break;
			if (v.type != TFT_JSON_OBJECT) {
				if (is_container(&v) && tft_json_skip_rest(&r, NULL))
					break;
				continue;
			}
			while (tft_json_next_member(&r, &k, &v, NULL) == 1) {
				if (is_container(&v)) {
					if (tft_json_skip(&r, NULL, NULL))
						break;
				} else if (STR_EQ(&k, "id")) {
					md_int(&v, &iv);
				} else if (STR_EQ(&k, "name") && v.type == TFT_JSON_STRING && v.len < size) {
					name = (struct tft_json_str){ v.ptr, v.len };
					memcpy(buf, name.ptr, name.len);
					buf[name.len] = '\0';
				}
			}
			found = iv == id && name.len;
		}
	}
	tft_json_reader_fini(&r);
	tft_source_close(src);
	return found;
}

/* "GPU N": a process's labels (Kineto: "GPU 0"), N in *n; false otherwise. */
static bool gpu_label(struct chrome *c, const struct proc *p, int64_t *n)
{
	size_t len;
	const char *s = p->labels ? wstr(c, p->labels, &len) : "";

	if (!p->labels || len < 5 || memcmp(s, "GPU ", 4) != 0)
		return false;
	*n = 0;
	for (size_t i = 4; i < len; i++) {
		if (s[i] < '0' || s[i] > '9' || *n > 100000000)
			return false;
		*n = *n * 10 + (s[i] - '0');
	}
	return true;
}

/*
 * Kinds, flags and names of the thread-like tracks, once every name and
 * category is known (they may come after the events). A track that ran
 * device activity (kernels, copies: Kineto's categories) is a GPU stream
 * whatever its names say, named "stream N" when unnamed; its process, when
 * unnamed or labelled "GPU N" (Kineto names a GPU after the host process),
 * becomes "GPU N" with the model deviceProperties gives. GPU streams and TF
 * device executors hold concurrent executions; the profiler's own span
 * ("Spans"/"Traces": "PyTorch Profiler") is derived, not work.
 */
static int classify_threads(struct chrome *c)
{
	uint8_t *gpu_proc = calloc(c->nprocs ? c->nprocs : 1, 1);
	char buf[320], model[200];
	int rc = 0;

	if (!gpu_proc)
		return nomem(c);
	for (uint32_t i = 0; i < c->nthreads && !rc; i++) {
		struct thread *t = &c->threads[i];
		struct tft_track *wt;
		size_t pl;
		const char *pn;
		if (t->track == TFT_NONE || !(wt = tft_writer_track(c->w, t->track)))
			continue;
		wt->kind = t->gpu_events ? TFT_TRACK_GPU_STREAM : thread_kind(c, t);
		wt->flags = tft_roles_default_flags(wt->kind);
		pn = wstr(c, c->procs[t->proc].name, &pl);
		if (c->procs[t->proc].pid >= SYNTH_ID_BASE &&
		    ((pl == 5 && memcmp(pn, "Spans", 5) == 0) || (pl == 6 && memcmp(pn, "Traces", 6) == 0)))
			wt->flags |= TFT_TRACKF_DERIVED;
		if (t->gpu_events)
			gpu_proc[t->proc] = 1;
		if (t->gpu_events && !wt->name) {
			snprintf(buf, sizeof(buf), "stream %lld", (long long)t->tid);
			if ((rc = intern(c, buf, strlen(buf), &wt->name)))
				break;
		}
	}
	for (uint32_t i = 0; i < c->nthreads && !rc; i++) {
		struct thread *t = &c->threads[i];
		struct tft_track *at, *wt;
		uint32_t nid;
		size_t nl;
		const char *nm;
		if (t->ann_track == TFT_NONE || !(at = tft_writer_track(c->w, t->ann_track)))
			continue;
		wt = t->track != TFT_NONE ? tft_writer_track(c->w, t->track) : NULL;
		nid = wt && wt->name ? wt->name : t->name;
		nm = nid ? wstr(c, nid, &nl) : "";
		if (!nid)
			nl = 0;
		while (nl && nm[nl - 1] == ' ')
			nl--;
		if (nl >= 11 && memcmp(nm + nl - 11, "annotations", 11) == 0)
			snprintf(buf, sizeof(buf), "%.*s", (int)(nl > 300 ? 300 : nl), nm); /* an export's */
		else if (nl)
			snprintf(buf, sizeof(buf), "%.*s annotations", (int)(nl > 256 ? 256 : nl), nm);
		else
			snprintf(buf, sizeof(buf), "stream %lld annotations", (long long)t->tid);
		rc = intern(c, buf, strlen(buf), &at->name);
	}
	for (uint32_t i = 0; i < c->nprocs && !rc; i++) {
		struct proc *p = &c->procs[i];
		struct tft_process *wp;
		int64_t n = p->pid;
		size_t pl;
		const char *pn;
		if (!gpu_proc[i] || p->id == TFT_NONE || !(wp = tft_writer_process(c->w, p->id)))
			continue;
		if (!gpu_label(c, p, &n) && p->name)
			continue; /* a GPU with a name of its own */
		snprintf(buf, sizeof(buf), "GPU %lld", (long long)n);
		pn = p->name ? wstr(c, p->name, &pl) : "";
		if (!p->name)
			pl = 0;
		if (pl >= strlen(buf) && memcmp(pn, buf, strlen(buf)) == 0)
			continue; /* named so already (a tftracer export) */
		if (device_model(c, n, model, sizeof(model)))
			snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), " (%s)", model);
		if ((rc = intern(c, buf, strlen(buf), &wp->name)))
			break;
	}
	free(gpu_proc);
	return rc;
}

static int finish(struct chrome *c)
{
	int rc;

	if ((rc = close_open(c)))
		return rc;
	/* names may have arrived after the events: classify once more */
	if ((rc = classify_threads(c)))
		return rc;
	for (uint32_t i = 0; i < c->nprocs; i++) {
		struct proc *p = &c->procs[i];
		struct tft_process *wp;
		if (p->id == TFT_NONE || !(wp = tft_writer_process(c->w, p->id)))
			continue;
		if (c->has_rank)
			wp->rank = c->rank;
		if (c->host)
			wp->host = c->host;
	}
	/* tftracer metadata: after the kinds, ranks and hosts set above */
	if (c->md_tftracer)
		apply_md(c);
	if (c->shift_ns && c->have_end) {
		int64_t t;
		if (__builtin_add_overflow(c->trace_start, c->shift_ns, &t) ||
		    __builtin_add_overflow(c->trace_end, c->shift_ns, &t))
			return tft_error_set(c->err, TFT_EFORMAT, -1,
					     "baseTimeNanoseconds moves timestamps out of the int64 range");
	}
	if ((rc = tft_sorter_finish(c->sorter, c->shift_ns, c->err)))
		return rc;
	if ((rc = emit_flows(c)))
		return rc;
	if (c->md_tftracer && c->md_has_steps) {
		c->nsteps = 0;
		if ((rc = add_md_steps(c)))
			return rc;
	}
	for (uint32_t i = 0; i < c->nsteps; i++) {
		struct tft_step s = c->steps[i];
		s.start_ns += c->shift_ns;
		if (c->step_proc[i] != TFT_NONE && (rc = ensure_proc(c, c->step_proc[i], &s.process)))
			return rc;
		if ((rc = tft_writer_add_step(c->w, &s)))
			return rc;
	}
	if ((c->unmatched_ends && (rc = tft_writer_add_count(c->w, "unmatched_ends", c->unmatched_ends))) ||
	    (c->unclosed && (rc = tft_writer_add_count(c->w, "unclosed_slices", c->unclosed))) ||
	    (c->unmatched_flows &&
	     (rc = tft_writer_add_count(c->w, "unmatched_flows", c->unmatched_flows))) ||
	    (c->skipped && (rc = tft_writer_add_count(c->w, "skipped_events", c->skipped))))
		return rc;
	if (c->truncated && (rc = tft_writer_set_meta(c->w, "truncated", "1")))
		return rc;
	const char *fmt = c->kineto ? "kineto" : c->tf_timeline ? "tf_timeline" : "chrome";
	/* (several inputs into one session: "kineto+xspace"; producers likewise) */
	if ((rc = tft_writer_join_meta(c->w, "format", fmt, "+")))
		return rc;
	if (c->kineto)
		rc = tft_writer_join_meta(c->w, "producer", "PyTorch Profiler", " + ");
	else if (c->tf_timeline)
		rc = tft_writer_join_meta(c->w, "producer", "TensorFlow", " + ");
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
	free(c->cat_cls);
	free(c->spans);
	free(c->fpoints);
	free(c->fkey_ids);
	free(c->steps);
	free(c->step_proc);
	free(c->args);
	tft_hmap_fini(&c->map);
	free(c->icache);
	free(c->md_procs);
	free(c->md_tracks);
	free(c->md_steps);
	free(c->md_step_pid);
	tft_sorter_destroy(c->sorter);
}

/* Run the parser over the document (the committer, if any, on a second thread). */
static int parse_all(struct chrome *c, struct tft_source *src, const struct tft_chrome_opts *copts,
		     struct tft_error *err)
{
	struct parser p;
	int threads = copts ? copts->threads : 0;
	int rc;

	memset(&p, 0, sizeof(p));
	p.c = c;
	p.err = err;
	p.cur = batch_new();
	if (!p.cur)
		return tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
	if (threads == 0) {
		/* worth threads: large or compressed inputs (known size 0: a pipe) */
		uint64_t size = tft_source_raw_size(src);
		threads = tft_source_is_gzip(src) || size == 0 || size >= PIPELINE_MIN_BYTES ? 2 : 1;
	}
	struct tft_json_reader_opts ro = { 0 };
	if (copts && copts->reader)
		ro = *copts->reader;
	/* a plain file: parsed in place, mapped (no read() copies, no windows) */
	if (!ro.block_size && tft_source_raw_size(src) >= PIPELINE_MIN_BYTES &&
	    (rc = tft_source_map(src, &p.map, err)) != 0) {
		if (rc < 0)
			goto out;
		tft_json_reader_init_mem(&p.r, p.map.data, p.map.len, src, &ro);
		rc = 0;
	} else {
		if (threads > 1 && !ro.block_size)
			ro.block_size = PIPE_BLOCK;
		if ((rc = tft_json_reader_init(&p.r, src, &ro, err)))
			goto out;
	}
	/*
	 * Store errors go to berr: the committer works on input that precedes
	 * what the parser is reading, so its error (once everything parsed
	 * before a parse error is committed) is the first one in the input,
	 * whatever the batch boundaries and threads.
	 */
	tft_error_clear(&c->berr);
	c->err = &c->berr;
	if (threads > 1)
		p.pipe = pipe_start(c, &p.r); /* NULL: one thread after all */
	p.r.refill_hook = p_refill_hook;
	p.r.refill_ctx = &p;
	rc = read_document(&p);
	if (rc)
		(void)p_drain(&p);
	if (p.pipe) {
		pipe_stop(p.pipe);
		pipe_destroy(p.pipe);
	}
	c->err = err;
	if (c->berr.code) {
		if (err)
			*err = c->berr;
		rc = c->berr.code;
	}
	c->truncated = p.r.truncated;
	c->events += p.nonobj;
	c->skipped += (int64_t)p.nonobj;
out:
	batch_free(p.cur);
	tft_json_reader_fini(&p.r);
	tft_source_unmap(&p.map);
	return rc;
}

int tft_ingest_chrome_source(struct tft_writer *w, struct tft_source *src,
			     const struct tft_ingest_opts *opts, const struct tft_chrome_opts *copts,
			     struct tft_error *err)
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
	c.last_cat_checked = TFT_NONE;
	tft_hmap_init(&c.map, 3);
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
	if ((rc = parse_all(&c, src, copts, err)))
		goto out;
	rc = finish(&c);
	c.raw_offset = tft_source_raw_offset(src);
	progress(&c, true);
out:
	if (rc)
		tft_error_set_file(err, tft_source_name(src));
	destroy(&c);
	return rc;
}
