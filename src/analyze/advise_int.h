/* SPDX-License-Identifier: MIT */
/*
 * The advisor's internals, shared by the engine (advise.c: scopes, windows,
 * the slab scan, the breakdown), the name classes (advise_names.c), the
 * result builders (advise_out.c) and one file per checker (advise_<name>.c).
 * Not a public interface.
 *
 * The engine reads a session once, scope by scope (the tracks of one worker
 * or rank) and slab by slab (a time range holding about ADV_SLAB_SLICES
 * slices, whole steps where they fit): each slab's slices of the tracks that
 * count (host threads, device streams, comm tracks; never derived ones) are
 * kept classified in memory, their class unions built, each step's breakdown
 * taken from them, then every checker reads the slab. Checkers that need a
 * step of their own (the critical path) scan it again in their finish.
 */
#ifndef TFT_ANALYZE_ADVISE_INT_H
#define TFT_ANALYZE_ADVISE_INT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyze/advise.h"
#include "analyze/ivset.h"
#include "core/model.h"
#include "store/session.h"

#define ADV_SLAB_SLICES (512u * 1024u) /* slices a slab holds, about */

/* ---- tracks ---------------------------------------------------------------- */

/* How a track counts. */
enum {
	ADV_R_NONE = 0,    /* not counted: derived, async, object, instants only */
	ADV_R_HOST = 1,    /* host work: CPU threads, TF CPU executors, GPU executors beside streams */
	ADV_R_DEVICE = 2,  /* device work: GPU streams (or GPU executors without streams) */
	ADV_R_COMM = 3,    /* communication tracks */
	ADV_R_COUNTER = 4, /* counter samples (memory checker) */
};

struct adv_track {
	uint8_t role;    /* ADV_R_* */
	bool nests;      /* a call stack (depth = nesting) */
	bool serial;     /* its slices run one after another (a stream, a thread) */
	bool executor;   /* a TF device's executor (ops of its inter-op threads) */
	bool accel;      /* an executor of an accelerator (GPU, TPU) */
	uint32_t scope;  /* index into adv.scopes, or TFT_NONE */
	uint32_t device; /* index into adv.devices (role DEVICE), else TFT_NONE */
};

/* One accelerator: the device-role tracks of one device name. */
struct adv_device {
	char name[96];         /* "GPU 0", "/device:GPU:0" */
	uint32_t scope;
	uint32_t first_track;  /* a track of it (for evidence) */
	/* analysed windows (filled by advise_utilization.c, read by op_config) */
	int64_t window_ns;     /* summed length of the analysed windows of its scope */
	int64_t busy_ns;       /* union of its tracks' slices inside them */
	uint32_t main_track;   /* its busiest stream */
	int64_t main_idle[4];  /* that stream's idle time: ADV_IDLE_* */
};

/* Why a stream is idle before a kernel (HTA's idle time breakdown). */
enum {
	ADV_IDLE_HOST = 0,    /* the kernel was launched after the previous one ended */
	ADV_IDLE_KERNEL = 1,  /* queued already; a short gap between kernels */
	ADV_IDLE_OTHER = 2,   /* queued already; a longer wait (sync, events) or the ends */
	ADV_IDLE_UNKNOWN = 3, /* no launch flow says when it was launched */
};

/* A worker: processes that share a rank, a host or a TF task, with their tracks. */
struct adv_scope {
	char key[160];      /* "rank 0", "host h", "/job:w/replica:0/task:1", "" */
	int32_t rank;       /* -1 if none */
	uint32_t *tracks;   /* owned; the counted tracks (roles HOST, DEVICE, COMM, COUNTER) */
	uint32_t ntracks, ctracks;
	uint32_t w0, w1;    /* its windows: adv.win[w0..w1) */
	uint32_t ndevices;  /* device-role tracks' devices in it */
};

/* ---- windows (steps) ------------------------------------------------------------ */

struct adv_win {
	int64_t t0, t1;   /* [t0, t1) */
	uint32_t scope;
	uint32_t step;    /* index into the result's steps, or TFT_NONE (a scope's span) */
	bool analysed;    /* counts in the findings */
	bool traced;
	int64_t part[TFT_ADVISE_NPARTS];
	int64_t first_act;  /* its first activity (the leading gap's end), INT64_MAX if none yet */
	bool seen;        /* activity met so far (the leading gap is input) */
	int64_t pending;  /* leading gap so far, counted as idle until activity shows */
};

/* ---- slice classes ---------------------------------------------------------------- */

/* A slice's class: the breakdown part it claims (0..4), or ignored. */
enum {
	ADV_C_DEVICE = TFT_ADVISE_DEVICE_COMPUTE,
	ADV_C_COMM = TFT_ADVISE_COMM,
	ADV_C_MEMCPY = TFT_ADVISE_MEMCPY,
	ADV_C_INPUT = TFT_ADVISE_INPUT,
	ADV_C_HOST = TFT_ADVISE_HOST_COMPUTE,
	ADV_C_IGNORE = 7,
};
#define ADV_NCLASSES 5

/* What a name says (advise_names.c). */
enum {
	ADV_N_STEP = 1u << 0,      /* a step marker (ProfilerStep#N, a step's own name) */
	ADV_N_INPUT = 1u << 1,     /* loads input (DataLoader, IteratorGetNext, tf.data) */
	ADV_N_COMM = 1u << 2,      /* a collective, send/recv, RecvTensor */
	ADV_N_MEMCPY = 1u << 3,    /* a copy or memset */
	ADV_N_CONV = 1u << 4,      /* a convolution */
	ADV_N_XPOSE = 1u << 5,     /* an NCHW <-> NHWC layout conversion */
	ADV_N_NCHW = 1u << 6,      /* names the NCHW layout */
	ADV_N_NHWC = 1u << 7,      /* names the NHWC layout */
	ADV_N_F64 = 1u << 8,       /* float64 */
	ADV_N_HALF = 1u << 9,      /* half precision (fp16, bf16, tensor-core MMA) */
	ADV_N_HTOD = 1u << 10,     /* host to device copy */
	ADV_N_DTOH = 1u << 11,     /* device to host copy */
	ADV_N_DTOD = 1u << 12,     /* device to device copy */
	ADV_N_PAGEABLE = 1u << 13, /* from/to pageable host memory */
	ADV_N_MEMEVENT = 1u << 14, /* Kineto's "[memory]" allocation instant */
	ADV_N_BATCHNORM = 1u << 15, /* a (non-fused) batch norm (tfprof's check) */
	ADV_N_FUSEDBN = 1u << 16,  /* FusedBatchNorm */
	ADV_N_SYNC = 1u << 17,     /* a host-device synchronisation */
	ADV_N_LAUNCH = 1u << 18,   /* a launch call: kernels, async copies and sets, graphs (CUDA, HIP) */
	ADV_N_OPTIMIZER = 1u << 19, /* an optimizer step */
	ADV_N_PYFRAME = 1u << 20,  /* a Python frame ($file.py:line fn, XSpace's Python tracer) */
	ADV_N_FWOP = 1u << 21,     /* a framework op by its name (aten::, prim::, c10d:: ...) */
	ADV_N_DONE = 1u << 31,     /* computed */
};

/* What a category says. */
enum {
	ADV_K_MEMCPY = 1u << 0,  /* gpu_memcpy, gpu_memset, Memcpy, Memset */
	ADV_K_KERNEL = 1u << 1,  /* kernel, Kernel */
	ADV_K_PYFUNC = 1u << 2,  /* python_function: call-stack frames, not ops */
	ADV_K_ANNOT = 1u << 3,   /* user_annotation, gpu_user_annotation: ranges, not ops */
	ADV_K_OP = 1u << 4,      /* cpu_op, Operator: framework ops */
	ADV_K_RUNTIME = 1u << 5, /* cuda_runtime, cuda_driver, Runtime */
	ADV_K_SYNC = 1u << 6,    /* cuda_sync: a synchronisation marked on a stream, not work */
	ADV_K_DONE = 1u << 31,
};

/* One slice of a counted track in the slab. */
struct adv_sl {
	int64_t ts, end;  /* unclipped */
	uint32_t track;
	uint32_t name;    /* string id */
	uint32_t cat;     /* string id */
	uint32_t win;     /* window counting it (its start lies there, in this slab), or TFT_NONE */
	uint16_t depth;   /* nesting depth or lane (saturated) */
	uint8_t cls;      /* ADV_C_* */
	uint8_t flags;    /* ADV_SL_* */
};

enum {
	ADV_SL_LAUNCH = 1u << 0,   /* a launch: a flow to a device starts here, or a launch call's name */
	ADV_SL_OWN = 1u << 1,      /* its start is this slab's own: count it here */
	ADV_SL_TOP = 1u << 2,      /* no counted slice encloses it (outermost op of its stack) */
	ADV_SL_LAUNCHED = 1u << 3, /* it or a slice nested in it starts a launch flow */
};

/* A run of one track's slices in the slab: sl[lo..hi). */
struct adv_run {
	uint32_t track;
	size_t lo, hi;
};

struct adv_slab {
	int64_t a, b;         /* range scanned: [a, b) */
	int64_t own_a, own_b; /* slices starting here are this slab's to count */
	uint32_t scope;
	uint32_t w0, w1;      /* windows meeting it: adv.win[w0..w1) */
	struct adv_sl *sl;    /* owned */
	size_t n, cap;
	size_t max_n;         /* 0, or fill stops (TFT_ENOSPC) past this many slices */
	int64_t *self;        /* owned: per slice, its self time (duration minus its direct
			       * children's, clipped to it; = duration off call stacks) */
	int64_t *launch;      /* owned: per slice of a device track, when the launch flow into it
			       * started (its launch call), or INT64_MIN */
	size_t capself;
	struct adv_run *runs; /* owned */
	size_t nruns, capruns;
	struct tft_ivset cls[ADV_NCLASSES]; /* per class, the union of its slices inside [a, b) */
	struct tft_ivset cum[ADV_NCLASSES]; /* cum[k] = cls[0] ∪ ... ∪ cls[k] (indexed) */
};

/* A launch flow into a device track: when the work starts, and when its launch call did. */
struct adv_launch {
	int64_t dst_ts, src_ts;
};

/* Where launch flows start on one host track: their src_ts, sorted. */
struct adv_srcs {
	int64_t *v; /* owned */
	size_t n, cap;
};

/* The launch flows into one device track, sorted by dst_ts. */
struct adv_launches {
	struct adv_launch *v; /* owned */
	size_t n, cap;
};

/* ---- the checkers ----------------------------------------------------------------- */

struct adv;

/*
 * Each checker's hooks (any may be NULL). Every checker reads every slab
 * (so others may use what it computes); only the checkers asked for report.
 */
struct adv_checker {
	int id;              /* enum tft_advise_checker */
	uint32_t want_names; /* ADV_N_* bits whose events (args included) go to event() */
	bool want_counters;  /* counter samples of counter tracks go to event() */
	bool want_executor_args; /* slices with args on TF executor tracks go to event() */
	int (*init)(struct adv *a);                         /* after windows, before the scan */
	void (*event)(struct adv *a, const struct tft_event *ev, uint32_t win); /* during the scan */
	int (*slab)(struct adv *a, struct adv_slab *sl);    /* each slab, once built */
	int (*finish)(struct adv *a);                       /* findings and verdicts */
	void (*fini)(struct adv *a);                        /* free its state */
};

extern const struct adv_checker tft_adv_step_time, tft_adv_utilization, tft_adv_expensive,
	tft_adv_op_config, tft_adv_communication, tft_adv_memory, tft_adv_variability,
	tft_adv_critical_path;

/* ---- the engine's context ------------------------------------------------------------- */

struct adv {
	struct tft_session *s;           /* borrowed */
	struct tft_error *err;           /* borrowed */
	struct tft_advise_opts opts;
	struct tft_advise_result *res;   /* owned until handed out */
	uint32_t ntracks;
	struct adv_track *tracks;        /* owned; ntracks */
	struct adv_scope *scopes;        /* owned */
	uint32_t nscopes, cscopes;
	struct adv_device *devices;      /* owned */
	uint32_t ndevices, cdevices;
	struct adv_win *win;             /* owned; sorted by (scope, t0) */
	uint32_t nwin;
	uint32_t *nbits, *kbits;         /* owned: per string id, ADV_N_* / ADV_K_* (0 = not yet) */
	uint32_t nstrings;
	uint32_t *step_names;            /* owned, sorted: the step table's name ids */
	uint32_t nstep_names;
	struct adv_launches *launches;   /* owned; per track (device tracks' only) */
	struct adv_srcs *srcs;           /* owned; per track (host tracks' only) */
	size_t nlaunch;                  /* launch flows: from a host track to a device track */
	uint64_t nflows;                 /* every flow of the session */
	bool has_device;                 /* a device-role track with slices */
	bool has_streams;                /* GPU stream tracks (kernels), not only executors */
	bool has_comm;                   /* comm-class slices seen */
	uint32_t analysed_scopes;        /* scopes with an analysed window */
	uint32_t nranks;                 /* distinct ranks among the scopes with windows */
	/* the slab being scanned */
	bool no_hooks;                   /* a checker's own scan: no event() calls */
	struct adv_slab *cur;
	uint32_t cur_track;
	uint32_t cur_win;                /* the window the last event fell in (a cache) */
	int scan_rc;
	/* checker states (each checker file owns its struct) */
	void *st[TFT_ADVISE_NCHECKERS];
};

/* ---- engine helpers (advise.c) --------------------------------------------------------- */

/* ADV_N_* bits of a name, ADV_K_* bits of a category (advise_names.c). */
uint32_t tft_adv_classify_name(const char *s, size_t len);
uint32_t tft_adv_classify_cat(const char *s);
/* Whether a host slice is a framework op: a TF executor's, a cpu_op, or named like one. */
bool tft_adv_is_op(struct adv *a, const struct adv_sl *x);
/* Name / category class bits of a string id (cached). */
uint32_t tft_adv_name_bits(struct adv *a, uint32_t name);
uint32_t tft_adv_cat_bits(struct adv *a, uint32_t cat);
/* A track's name, or its process's when it has none (borrowed). */
const char *tft_adv_track_label(struct adv *a, uint32_t t);
/* A string (borrowed from the session). */
const char *tft_adv_str(struct adv *a, uint32_t id);
/* The class of a slice of track t named name in category cat. */
int tft_adv_classify(struct adv *a, uint32_t track, uint32_t name, uint32_t cat);
/* The analysed windows of a scope overlapping [t0, t1): their overlap with it. */
int64_t tft_adv_analysed_overlap(const struct adv *a, uint32_t scope, int64_t t0, int64_t t1);
/* The window of scope holding t (the first one), or TFT_NONE. */
uint32_t tft_adv_window_at(const struct adv *a, uint32_t scope, int64_t t);
/* Analysed windows and their summed length, over every scope. */
uint32_t tft_adv_analysed_count(const struct adv *a);
int64_t tft_adv_analysed_ns(const struct adv *a);
/*
 * Fill sl with the counted slices of sl->scope's tracks over [sl->a, sl->b)
 * (runs, self times, TOP/LAUNCHED flags), without the checkers' hooks: for a
 * checker's own scan of one step. 0, TFT_ENOSPC (more than sl->max_n
 * slices), or a negative status.
 */
int tft_adv_slab_fill(struct adv *a, struct adv_slab *sl);
void tft_adv_slab_free(struct adv_slab *sl);
/* Whether the checker was asked for (its findings and verdict are kept). */
bool tft_adv_wanted(const struct adv *a, int checker);
/* "step 12", "step 12 (rank 1)", or "the trace" for a window without a step. */
void tft_adv_window_label(const struct adv *a, uint32_t w, char *out, size_t size);

/* ---- results (advise_out.c) -------------------------------------------------------------- */

/* A new finding of checker c (NULL on ENOMEM; then a->res is marked failed). */
struct tft_advise_finding *tft_adv_finding(struct adv *a, int checker, int64_t cost_ns,
					   const char *title_fmt, ...)
	__attribute__((format(printf, 4, 5)));
void tft_adv_explain(struct tft_advise_finding *f, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void tft_adv_recommend(struct tft_advise_finding *f, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Evidence: a track (TFT_NONE: none) and a range; NULL past TFT_ADVISE_MAX_EVIDENCE. */
struct tft_advise_evidence *tft_adv_evidence(struct tft_advise_finding *f, uint32_t track, int64_t t0,
					     int64_t t1);
/* A slice of the evidence (ignored past TFT_ADVISE_MAX_SLICES). */
void tft_adv_evidence_slice(struct tft_advise_evidence *e, uint32_t track, uint32_t depth, int64_t ts);

/* A slice a checker keeps as evidence: the k longest of a kind (tft_adv_keep_longest). */
struct adv_inst {
	uint32_t track, depth;
	int64_t ts, dur; /* dur 0: an empty place */
};

/* Keep slice x in top[0 .. k) in place of the shortest there, when longer (the order is not kept). */
void tft_adv_keep_longest(struct adv_inst *top, unsigned k, const struct adv_sl *x);

/* Each kept slice of top[0 .. k) as an evidence range of f with the slice in it. */
void tft_adv_evidence_top(struct tft_advise_finding *f, const struct adv_inst *top, unsigned k);
/* The verdict of checker c (one per checker; a second call replaces it). */
void tft_adv_verdict(struct adv *a, int checker, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Whether building the result ran out of memory. */
bool tft_adv_out_failed(const struct adv *a);
/* Sort the findings by cost. */
void tft_adv_out_sort(struct adv *a);

/* ---- text helpers (advise_out.c) ----------------------------------------------------------- */

/* A duration ("12.345 ms"); returns buf. */
const char *tft_adv_ns(char *buf, size_t size, int64_t ns);
/* A share in percent ("12%", "0.4%"). */
const char *tft_adv_pct(char *buf, size_t size, int64_t part, int64_t whole);

/* part is at least pct % of whole (in double: x100 of a long session's
 * nanoseconds would overflow int64). */
static inline int tft_adv_share_ge(int64_t part, int pct, int64_t whole)
{
	return (double)part * 100.0 >= (double)pct * (double)whole;
}
/* A byte count ("1.2 GB", "512 kB"). */
const char *tft_adv_bytes(char *buf, size_t size, double bytes);

/* ---- a small map from a 32-bit key to a record (advise_out.c) ------------------------------ */

struct adv_map {
	uint32_t *keys;   /* owned; UINT32_MAX = empty */
	void *vals;       /* owned; cap records of vsize bytes, zeroed when created */
	size_t vsize, n, cap;
};
/* The record of key (created zeroed when absent); NULL on ENOMEM. */
void *tft_adv_map_get(struct adv_map *m, uint32_t key);
/* The record of key, or NULL when absent. */
void *tft_adv_map_find(const struct adv_map *m, uint32_t key);
/* i-th slot's record when used (for iteration over 0..cap), else NULL. */
void *tft_adv_map_slot(const struct adv_map *m, size_t i, uint32_t *key);
void tft_adv_map_fini(struct adv_map *m);

#endif /* TFT_ANALYZE_ADVISE_INT_H */
