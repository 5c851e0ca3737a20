/* SPDX-License-Identifier: MIT */
/*
 * The Chrome importer's private header (src/collect/chrome/): its state
 * (struct chrome: the key tables, processes, threads, spans, flow points,
 * steps; struct parser and the batches it fills), the keys of its one hash
 * map, the small helpers of the per-event path as static inline functions
 * (there is no LTO: a helper called per event stays inlined in its caller's
 * file), and the functions the files share. See import.c for the stages.
 */
#ifndef TFT_COLLECT_CHROME_INT_H
#define TFT_COLLECT_CHROME_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "codec/json_read.h"
#include "collect/ingest_chrome.h"
#include "core/grow.h"
#include "core/hmap.h"
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
static inline double parg_double(const struct parg *p)
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

/* Names, categories and arg keys repeat: a direct-mapped cache beats the writer's table lookup. */
#ifndef ICACHE_BITS
#define ICACHE_BITS 12
#endif
/*
 * An entry keeps the string's two words (icache_words): a string of up to
 * 16 bytes is compared as len + two words, without a call or a pointer chase.
 */
struct icache_ent {
	uint64_t w0, w1; /* icache_words() of the string */
	const char *s;   /* borrowed: the writer's interned copy */
	uint32_t len, id;
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

/*
 * Categories that say where a slice ran (Kineto's, old and new schema):
 * device activity (kernels, copies, sets, device syncs) types its track as a
 * GPU stream whatever the track's names say; GPU user annotations span
 * kernels and go to a derived track of their own (see annotation_track()).
 */
enum { CAT_UNSEEN = 0, CAT_OTHER = 1, CAT_GPU = 2, CAT_GPU_ANNOTATION = 3 };

/* ---- batches: parsed events on their way to the committer ----------------------- */

#define BATCH_EVENTS 1024u          /* events per batch */
#define MAX_BATCHES 4u              /* batches in circulation (each may pin one JSON window) */
#define STR_BLOCK (16u << 10)       /* decoded-string block size */
#define PIPELINE_MIN_BYTES (4u << 20) /* smaller plain inputs are imported on one thread */
/* Reader windows (threads): the ones in circulation stay in the shared cache (BENCHMARKS.md). */
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

#define MEMBERS 16 /* members read per tft_json_next_members() call */

/* ---- small helpers of the per-event path ----------------------------------------- */

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

static inline int nomem(struct chrome *c)
{
	return tft_error_set(c->err, TFT_ENOMEM, -1, "out of memory");
}

/*
 * Two words that, with the length, hold every byte of a string of up to 16
 * bytes (the first and the last 8; shorter strings by overlapping loads),
 * and the first and last 8 bytes of a longer one.
 */
static inline void icache_words(const char *s, size_t len, uint64_t *w0, uint64_t *w1)
{
	if (len >= 8) {
		memcpy(w0, s, 8);
		memcpy(w1, s + len - 8, 8);
	} else if (len >= 4) {
		uint32_t lo, hi;
		memcpy(&lo, s, 4);
		memcpy(&hi, s + len - 4, 4);
		*w0 = lo;
		*w1 = hi;
	} else {
		*w0 = len ? (uint64_t)(unsigned char)s[0] | (uint64_t)(unsigned char)s[len >> 1] << 8 |
				    (uint64_t)(unsigned char)s[len - 1] << 16
			  : 0;
		*w1 = 0;
	}
}

int tft_chrome_intern_miss(struct chrome *c, struct icache_ent *e, const char *s, size_t len,
			   uint64_t w0, uint64_t w1, uint32_t *id);

/* The writer's id of s; the cache's hit path is inline, a miss goes to the writer. */
static inline int intern(struct chrome *c, const char *s, size_t len, uint32_t *id)
{
	uint64_t w0, w1, h;
	struct icache_ent *e;

	icache_words(s, len, &w0, &w1);
	h = (w0 * 0x9e3779b97f4a7c15ULL) ^ ((w1 + len) * 0xc2b2ae3d27d4eb4fULL);
	e = &c->icache[(h ^ (h >> 29)) & ((1u << ICACHE_BITS) - 1)];
	if (tft_likely(e->s && e->len == len && e->w0 == w0 && e->w1 == w1 &&
		       (len <= 16 || memcmp(e->s + 8, s + 8, len - 16) == 0))) {
		*id = e->id;
		return 0;
	}
	return tft_chrome_intern_miss(c, e, s, len, w0, w1, id);
}

static inline bool str_eq(const struct tft_json_str *s, const char *lit, size_t n)
{
	return s->len == n && memcmp(s->ptr, lit, n) == 0;
}
#define STR_EQ(s, lit) str_eq((s), (lit), sizeof(lit) - 1)

static inline const char *wstr(struct chrome *c, uint32_t id, size_t *len)
{
	const char *s = tft_writer_str(c->w, id, len);

	if (!s) {
		*len = 0;
		return "";
	}
	return s;
}

static inline bool contains(const char *s, size_t n, const char *needle)
{
	return s && n && memmem(s, n, needle, strlen(needle)) != NULL;
}

static inline bool ends_with(const char *s, size_t n, const char *suf)
{
	size_t m = strlen(suf);

	return n >= m && memcmp(s + n - m, suf, m) == 0;
}

/* An integer written as a string ("1890023232"), as Kineto does for tids. */
static inline bool digits_to_i64(const struct tft_json_str *s, int64_t *out)
{
	if (s->len == 0 || s->len > 19) /* 19 digits: the conversion refuses what overflows */
		return false;
	return tft_json_number_to_i64(s->ptr, s->len, out) == 0 && s->ptr[0] != '-' &&
	       !(s->len > 1 && s->ptr[0] == '0');
}

/* A flow/async/object id as a 64-bit value: number, "0x..." hex, decimal or hashed. */
static inline uint64_t xid_value(const struct xid *x)
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

/* to - from, never negative, saturated (hostile inputs carry any int64). */
static inline int64_t span_ns(int64_t from, int64_t to)
{
	int64_t d;

	if (to <= from)
		return 0;
	return __builtin_sub_overflow(to, from, &d) ? INT64_MAX : d;
}

static inline void note_end(struct chrome *c, int64_t ts, int64_t dur)
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

static inline int push(struct chrome *c, uint32_t track, int kind, uint8_t flags, int64_t ts, int64_t dur,
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

static inline bool is_container(const struct tft_json_value *v)
{
	return v->type == TFT_JSON_OBJECT || v->type == TFT_JSON_ARRAY;
}

/* An int64 member value; false for anything else. */
static inline bool md_int(const struct tft_json_value *v, int64_t *out)
{
	return v->type == TFT_JSON_NUMBER && tft_json_value_to_i64(v, out) == 0;
}

/* Enter an object value; *is_obj = false when the value was something else (consumed). */
static inline int enter_object(struct parser *p, bool *is_obj)
{
	return tft_json_enter_object(&p->r, is_obj, p->err);
}

/* tables.c */
int tft_chrome_get_proc(struct chrome *c, const struct xid *pid, uint32_t *idx);
int tft_chrome_ensure_proc(struct chrome *c, uint32_t idx, uint32_t *id);
int tft_chrome_add_track(struct chrome *c, uint32_t proc_idx, uint32_t kind, uint32_t name,
			 int64_t tid, int32_t sort_index, uint32_t *track);
int tft_chrome_find_thread(struct chrome *c, const struct xid *pid, const struct xid *tid,
			   uint32_t *idx);
int tft_chrome_new_thread_track(struct chrome *c, uint32_t idx, uint32_t *track);
int tft_chrome_keyed_track(struct chrome *c, const struct hkey *k, uint32_t proc, uint32_t kind,
			   uint32_t name, uint32_t *track);
int tft_chrome_global_track(struct chrome *c, uint32_t *track);
bool tft_chrome_global_named(struct chrome *c, const struct xid *pid);
int tft_chrome_annotation_track(struct chrome *c, uint32_t tidx, uint32_t *track);

/* kinds.c */
uint32_t tft_chrome_thread_kind(struct chrome *c, const struct thread *t);
int tft_chrome_cat_class(struct chrome *c, uint32_t cat, const struct tft_json_str *text,
			 uint8_t *cls);
bool tft_chrome_is_kineto_cat(const char *s, size_t n);
int tft_chrome_classify_threads(struct chrome *c);

/* commit.c */
int tft_chrome_intern_args(struct chrome *c);
int tft_chrome_merge_args(struct chrome *c, struct tft_arg **args, uint32_t *n, uint32_t *cap,
			  const struct tft_arg *add, uint32_t nadd);
const struct parg *tft_chrome_find_parg(const struct chrome *c, const char *key);
void tft_chrome_progress(struct chrome *c, bool force);
int tft_chrome_commit_batch(struct chrome *c, const struct batch *b);

/* naming.c */
int tft_chrome_do_meta(struct chrome *c, const struct cev *e);

/* spans.c */
int tft_chrome_do_async(struct chrome *c, const struct cev *e, char ph, uint32_t name,
			uint32_t cat);
int tft_chrome_do_object(struct chrome *c, const struct cev *e, char ph, uint32_t name,
			 uint32_t cat);

/* flows.c */
int tft_chrome_flow_point(struct chrome *c, const struct hkey *k, uint64_t id, uint8_t ph,
			  uint32_t track, int64_t ts, uint32_t name, uint32_t cat, uint32_t flags);
int tft_chrome_do_flow(struct chrome *c, const struct cev *e, char ph, uint32_t name, uint32_t cat);
int tft_chrome_emit_flows(struct chrome *c);

/* decode.c */
int tft_chrome_read_events(struct parser *p, unsigned flags);

/* pipeline.c */
int tft_chrome_batch_keep(struct batch *b, struct tft_json_str *s);
int tft_chrome_p_flush(struct parser *p);
int tft_chrome_p_refill(struct parser *p);
int tft_chrome_p_drain(struct parser *p);
int tft_chrome_parse_all(struct chrome *c, struct tft_source *src,
			 const struct tft_chrome_opts *copts, struct tft_error *err);

/* document.c */
int tft_chrome_read_document(struct parser *p);

/* tftracer_md.c */
int tft_chrome_md_parse(struct chrome *c, const char *text, size_t len);
void tft_chrome_apply_md(struct chrome *c);
int tft_chrome_add_md_steps(struct chrome *c);

/* ---- fast paths of tables.c and kinds.c ------------------------------------------ */

/* The thread entry of (pid, tid), created on first sight; the last integer pair is cached. */
static inline int get_thread(struct chrome *c, const struct xid *pid, const struct xid *tid,
			     uint32_t *idx)
{
	if (pid->kind != 2 && tid->kind != 2 && c->last_thread != TFT_NONE &&
	    (pid->kind ? pid->i : 0) == c->last_pid && (tid->kind ? tid->i : 0) == c->last_tid) {
		*idx = c->last_thread;
		return 0;
	}
	return tft_chrome_find_thread(c, pid, tid, idx);
}

/* The writer track of thread idx, registered the first time an event needs it. */
static inline int thread_track(struct chrome *c, uint32_t idx, uint32_t *track)
{
	if (c->threads[idx].track != TFT_NONE) {
		*track = c->threads[idx].track;
		return 0;
	}
	return tft_chrome_new_thread_track(c, idx, track);
}

/* Track of the event's (pid, tid). */
static inline int event_track(struct chrome *c, const struct cev *e, uint32_t *track, uint32_t *tidx)
{
	uint32_t idx;
	int rc = get_thread(c, &e->pid, &e->tid, &idx);

	if (rc)
		return rc;
	if (tidx)
		*tidx = idx;
	return thread_track(c, idx, track);
}

/* The class of category string id `cat` (0: none), cached by id. */
static inline int cat_class(struct chrome *c, uint32_t cat, const struct tft_json_str *text,
			    uint8_t *cls)
{
	if (cat && cat < c->ncat_cls && c->cat_cls[cat] != CAT_UNSEEN) {
		*cls = c->cat_cls[cat];
		return 0;
	}
	return tft_chrome_cat_class(c, cat, text, cls);
}

#endif /* TFT_COLLECT_CHROME_INT_H */
