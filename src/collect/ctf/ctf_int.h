/* SPDX-License-Identifier: MIT */
/*
 * The CTF importer's private header (src/collect/ctf/): its state (traces,
 * processes, execs and their open slices, OTF2 definitions), the keyed
 * tables (core/hmap), small helpers over libbabeltrace2's fields, and the
 * functions the files share. See ctf_ingest.c for the whole.
 */
#ifndef TFT_COLLECT_CTF_INT_H
#define TFT_COLLECT_CTF_INT_H

#include <babeltrace2/babeltrace.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "codec/json_write.h"
#include "collect/ingest_ctf.h"
#include "core/grow.h"
#include "core/hmap.h"
#include "store/sorter.h"

#define MAX_ARGS 96        /* args kept per event (fields beyond are left out) */
#define FIND_DEPTH 8       /* directory levels searched for traces below a path */
#define MAX_TRACES 256     /* traces one import reads */
#define MAX_VISIT 20000    /* directories searched for them */
#define CTF_PACKET_MAGIC 0xC1FC1FC1u
#define TSDL_PACKET_MAGIC 0x75D11D57u

/* ---- keyed tables: (a, b) -> index, in a core/hmap map ----------------------- */

static inline uint64_t mix64(uint64_t a, uint64_t b)
{
	uint64_t h = a * 0x9E3779B97F4A7C15ull ^ (b + 0x632BE59BD9B4E019ull + (a << 6) + (a >> 2));

	h ^= h >> 33;
	h *= 0xFF51AFD7ED558CCDull;
	h ^= h >> 33;
	return h;
}

static inline uint32_t map_get(const struct tft_hmap *m, uint64_t a, uint64_t b)
{
	const uint64_t k[2] = { a, b };

	return tft_hmap_get(m, k, (uint32_t)mix64(a, b));
}

static inline int map_put(struct tft_hmap *m, uint64_t a, uint64_t b, uint32_t v)
{
	const uint64_t k[2] = { a, b };

	return tft_hmap_put(m, k, (uint32_t)mix64(a, b), v);
}

/* ---- state ---------------------------------------------------------------------- */

enum trace_kind { TR_OTHER, TR_UST, TR_KERNEL, TR_OTF2 };

/* Keys of processes (map a = kind << 32 | trace) and tracks (a = kind << 32 | process). */
enum { PK_PID = 1, PK_NAME, PK_TRACE, PK_OTF2 };
enum { E_THREAD = 1, E_CPU, E_STREAM, E_QUEUE, E_ASYNC, E_COMM };

struct trace {
	const bt_trace *bt;  /* borrowed: identity only */
	int kind;            /* enum trace_kind */
	uint32_t host;       /* string id of env hostname ("" if none) */
	uint32_t name;       /* the trace's name (its directory) */
	struct otf2 *otf2;   /* owned; OTF2 definitions */
};

struct proc {
	uint32_t id;          /* writer's */
	uint32_t trace;
	int64_t pid;
	bool named_by_main;   /* its name is its main thread's (tid == pid) */
	int64_t hsa_init_ns;  /* interceptionTracer kernel times' base; INT64_MIN: none yet */
	int64_t cl_offset;    /* OpenCL device -> trace time: min(emission - device end) */
	bool cl_seen;
};

/* An open slice: an entry waiting for its exit. */
struct open {
	int64_t ts;
	uint64_t match;        /* what the exit must carry too (name id, address); 0: anything */
	uint32_t key;          /* pairing key: string id of the base name */
	uint32_t name, cat;
	struct tft_arg *args;  /* owned */
	uint16_t nargs;
	uint8_t flags;         /* OF_* */
	int64_t step_index;    /* OF_STEP: the session run's count */
};

enum {
	OF_STEP = 1,      /* a TF session run: also a step */
	OF_HSA_INIT = 2,  /* the hsa_init call: its return is the kernel times' base */
	OF_CL_DEVICE = 4, /* OpenCL device times: held until the offset is known */
};

struct exec {
	uint32_t track;    /* writer's; TFT_NONE until its first event */
	struct tft_track def; /* what it is registered as */
	uint32_t proc;     /* index into procs */
	bool fifo;         /* device queues, async ops: an exit closes the oldest match */
	struct open *st;   /* owned; open slices, oldest first */
	uint32_t n, cap;
};

/* An OpenCL device activity, held until the process's clock offset is known. */
struct cl_pending {
	uint32_t exec;
	int64_t dev_ts, dev_dur;
	uint32_t name, cat;
	struct tft_arg *args; /* owned */
	uint16_t nargs;
};

struct ctf {
	struct tft_writer *w;
	struct tft_sorter *sorter;
	const struct tft_ingest_opts *opts;
	struct tft_error *err;
	int rc;                    /* first failure of ours (not libbabeltrace2's) */

	struct trace *traces;
	uint32_t ntraces, ctraces;
	uint32_t trace0;           /* the first of the current graph's (earlier graphs' are freed) */
	struct proc *procs;
	uint32_t nprocs, cprocs;
	struct exec *execs;
	uint32_t nexecs, cexecs;
	struct tft_hmap proc_map, exec_map; /* (kind << 32 | trace/process, key) -> index */
	struct cl_pending *cl;
	uint32_t ncl, ccl;
	struct tft_step *steps;
	uint32_t nsteps, csteps;
	struct {
		uint64_t id;  /* stream instance id (LTTng: the CPU) */
		char *name;   /* owned; source.ctf.fs: the stream file's path */
	} *streams;
	uint32_t nstreams, cstreams;

	/* the event being mapped */
	struct tft_arg args[MAX_ARGS];
	uint16_t nargs;
	struct tft_json_writer jw;

	int64_t t_min, t_max;     /* the trace's extent (ns), over every event */
	uint64_t events, unclosed, unmatched_ends, dropped, dropped_packets, unaligned;
	struct timespec last_progress;

	uint32_t s_empty; /* "" */
};

struct otf2_def {
	uint32_t name;   /* string ref (OTF2 string id) */
	uint32_t extra;  /* region: paradigm; location: its group; group: type */
	uint32_t extra2; /* group: paradigm */
};

struct otf2 {
	struct tft_hmap strings;   /* OTF2 string id -> index into str */
	uint32_t *str;        /* our string ids */
	uint32_t nstr, cstr;
	struct tft_hmap regions, locations, groups_loc, paradigms, comms, groups;
	struct otf2_def *defs;
	uint32_t ndefs, cdefs;
	struct tft_hmap rank_of;   /* location -> rank (MPI_COMM_WORLD's locations) */
};

/* The traces an import reads: as the user named them, and their real paths (libbabeltrace2's). */
struct found {
	char **dirs, **real;
	uint32_t n, cap, rcap;
	uint32_t visited;  /* directories looked into */
	bool first_only;   /* stop at the first trace (a probe) */
	bool overflow;     /* more than MAX_TRACES traces or MAX_VISIT directories */
};

/* ---- small helpers ------------------------------------------------------------------ */

static inline int oom(struct ctf *c)
{
	if (!c->rc)
		c->rc = tft_error_set(c->err, TFT_ENOMEM, -1, "out of memory reading the CTF trace");
	return c->rc;
}

static inline uint32_t intern(struct ctf *c, const char *s, size_t len)
{
	uint32_t id = tft_writer_intern(c->w, s, len);

	if (id == UINT32_MAX) {
		oom(c);
		return 0;
	}
	return id;
}

static inline uint32_t intern_cstr(struct ctf *c, const char *s)
{
	return intern(c, s ? s : "", s ? strlen(s) : 0);
}

static inline const bt_field *member(const bt_field *st, const char *name)
{
	if (!st || bt_field_get_class_type(st) != BT_FIELD_CLASS_TYPE_STRUCTURE)
		return NULL;
	return bt_field_structure_borrow_member_field_by_name_const(st, name);
}

/* An integer field's value (enumerations too); false if f is not one. */
static inline bool int_value(const bt_field *f, int64_t *v)
{
	bt_field_class_type t;

	if (!f)
		return false;
	t = bt_field_get_class_type(f);
	if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_UNSIGNED_INTEGER)) {
		*v = (int64_t)bt_field_integer_unsigned_get_value(f);
		return true;
	}
	if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_SIGNED_INTEGER)) {
		*v = bt_field_integer_signed_get_value(f);
		return true;
	}
	return false;
}

static inline bool member_int(const bt_field *st, const char *name, int64_t *v)
{
	return int_value(member(st, name), v);
}

/* A string member's value, NULL if absent or not a string. */
static inline const char *member_str(const bt_field *st, const char *name)
{
	const bt_field *f = member(st, name);

	if (!f || bt_field_get_class_type(f) != BT_FIELD_CLASS_TYPE_STRING)
		return NULL;
	return bt_field_string_get_value(f);
}

static inline const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s && s[1] ? s + 1 : path;
}

/* b - a, or 0 when b <= a; INT64_MAX when it does not fit (times are any int64). */
static inline int64_t span(int64_t a, int64_t b)
{
	int64_t d;

	if (b <= a)
		return 0;
	return __builtin_sub_overflow(b, a, &d) ? INT64_MAX : d;
}

/* args.c */
void tft_ctf_add_struct_args(struct ctf *c, const bt_field *st, const char *const *skip);
void tft_ctf_add_int_arg(struct ctf *c, const char *key, int64_t v);
void tft_ctf_add_str_arg(struct ctf *c, const char *key, uint32_t str);
struct tft_arg *tft_ctf_copy_args(struct ctf *c, const struct tft_arg *a, uint16_t n);

/* tracks.c */
int tft_ctf_push(struct ctf *c, uint32_t exec, int kind, int64_t ts, int64_t dur, uint32_t name,
		 uint32_t cat, uint8_t flags, const struct tft_arg *args, uint16_t nargs);
uint32_t tft_ctf_add_proc(struct ctf *c, uint32_t trace, int kind, uint64_t key, int64_t pid,
			  uint32_t name, int32_t rank);
uint32_t tft_ctf_add_exec(struct ctf *c, uint32_t proc, int kind, uint64_t key, uint32_t tkind,
			  uint32_t name, int64_t tid, int32_t sort_index);
int tft_ctf_open_slice(struct ctf *c, uint32_t exec, int64_t ts, uint32_t key, uint64_t match,
		       uint32_t name, uint32_t cat);
int64_t tft_ctf_find_open(const struct exec *e, uint32_t key, uint64_t match);
int tft_ctf_close_slice(struct ctf *c, uint32_t exec, uint32_t i, int64_t ts, uint8_t flags);

/* otf2.c */
void tft_ctf_otf2_init(struct otf2 *o);
void tft_ctf_otf2_free(struct otf2 *o);
int tft_ctf_otf2_event(struct ctf *c, uint32_t trace, const char *name, const bt_field *p,
		       int64_t ts);

/* lttng.c */
int tft_ctf_lttng_event(struct ctf *c, uint32_t t, const bt_message *msg, const bt_event *ev,
			const char *name, int64_t ts);

/* bt_graph.c */
int tft_ctf_run_graph(struct ctf *c, const struct found *f, uint32_t i);
int tft_ctf_trial_read(struct ctf *c, const struct found *f, uint32_t i);

/* find.c */
bool tft_ctf_is_dir(const char *path);
int tft_ctf_find_traces(const char *dir, int depth, struct found *f);
void tft_ctf_found_free(struct found *f);
void tft_ctf_found_sort(struct found *f);
bool tft_ctf_trace_of_file(const char *path, char *dir, size_t size);
int tft_ctf_check_metadata(struct ctf *c, const char *dir);

#endif /* TFT_COLLECT_CTF_INT_H */
