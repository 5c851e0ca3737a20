/* SPDX-License-Identifier: MIT */
/*
 * In-process runtime internals shared by emit.c (the producers' hot path),
 * drain*.c (the drain thread) and runtime.c (control): the per-thread SPSC
 * ring and its records, the global thread list and the runtime state word.
 */
#ifndef TFT_RUNTIME_RT_H
#define TFT_RUNTIME_RT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "core/status.h"
#include "runtime/clock.h"
#include "tftracer/tftracer.h"

#define TFT_RT_MAX_DEPTH 256u      /* zones open at once per thread; deeper ones drop */
#define TFT_RT_TEXT_MAX 127u       /* bytes of a name carried in a record */
#define TFT_RT_REC_BYTES 32u
#define TFT_RT_TEXT_SLOTS(len) (((len) + TFT_RT_REC_BYTES - 1) / TFT_RT_REC_BYTES)

/* tft_rt_state bits beyond the public TFT_RT_STEPS / TFT_RT_OPS. */
#define TFT_RT_TRACING 4u /* tft_set_tracing(true) (or cfg.enabled) */
#define TFT_RT_DEMAND 8u  /* inside an on-demand window (tft_trace_next_steps) */

enum tft_rt_kind {
	TFT_RK_ZONE_BEGIN = 1, /* p0 = site */
	TFT_RK_ZONE_END = 2,   /* - */
	TFT_RK_INSTANT = 3,    /* p0 = site */
	TFT_RK_COUNTER = 4,    /* p0 = site, p1 = the double's bits */
	TFT_RK_FLOW_BEGIN = 5, /* p0 = site (0 = none), p1 = flow id */
	TFT_RK_FLOW_END = 6,   /* p0 = site (0 = none), p1 = flow id */
	TFT_RK_MEM_ALLOC = 7,  /* p0 = pointer, p1 = bytes */
	TFT_RK_MEM_FREE = 8,   /* p0 = pointer */
	TFT_RK_STEP_BEGIN = 9, /* p0 = index, p1 = traced; text follows */
	TFT_RK_STEP_END = 10,  /* p0 = index, p1 = traced | TFT_RT_STEP_HOLD */
	TFT_RK_THREAD_NAME = 11,  /* text follows */
	TFT_RK_PROCESS_NAME = 12, /* text follows */
	TFT_RK_VALUES = 13,       /* p0, p1 = two values of tft_rt_emit_values; aux: see below */
	TFT_RK_ARG = 14,          /* p0 = key, p1 = value (int, or a static string); aux: below;
				   * a TEXT or JSON value's bytes follow in the next slots */
	TFT_RK_KIND_MAX = 14,
};

/* TFT_RK_STEP_END p1: hold the thread's later records for the step's import. */
#define TFT_RT_STEP_HOLD 2u

/* TFT_RK_VALUES aux: one record per two values, published together. */
#define TFT_RT_VAL_AUX(i, n, phase, depth) \
	((uint32_t)(i) << 24 | (uint32_t)(n) << 20 | (uint32_t)(phase) << 16 | (uint32_t)(depth))
#define TFT_RT_VAL_I(aux) ((aux) >> 24)           /* record index in its group */
#define TFT_RT_VAL_N(aux) (((aux) >> 20) & 15u)   /* values in the group */
#define TFT_RT_VAL_PHASE(aux) (((aux) >> 16) & 1u) /* 0: after a zone begin, 1: before its end */
#define TFT_RT_VAL_DEPTH(aux) ((aux) & 0xffffu)   /* the zone's depth (tft_zone.depth) */

/* TFT_RK_ARG aux: the zone's depth, the arg's type (enum tft_rt_arg_type), its
 * text length, and whether it is the last arg of the group (the zone's args are
 * published together). */
#define TFT_RT_ARG_AUX(depth, type, len, last) \
	((uint32_t)(depth) | (uint32_t)(type) << 9 | (uint32_t)(last) << 12 | (uint32_t)(len) << 13)
#define TFT_RT_ARG_DEPTH(aux) ((aux) & 0x1ffu)
#define TFT_RT_ARG_TYPE(aux) (((aux) >> 9) & 7u)
#define TFT_RT_ARG_LAST(aux) (((aux) >> 12) & 1u)
#define TFT_RT_ARG_LEN(aux) ((aux) >> 13)

/*
 * One ring slot. A record with text (aux = its length, <= TFT_RT_TEXT_MAX)
 * is followed by TFT_RT_TEXT_SLOTS(aux) slots of raw bytes, published
 * together with it.
 */
struct tft_rt_rec {
	uint64_t tick; /* clock ticks (see clock.h) */
	uint32_t kind; /* enum tft_rt_kind */
	uint32_t aux;  /* text length */
	uint64_t p0, p1;
};

struct tft_rt_dthread; /* drain_records.c: the drain's per-thread state */

/*
 * A thread's ring and counters: one anonymous mapping (this struct, then the
 * ring), created on the thread's first event and unmapped by the drain once
 * the thread has exited and its ring is empty. Producer fields are written
 * only by the owning thread; drain fields only by the drain (or by tft_init
 * while no drain runs).
 */
struct tft_rt_thread {
	/* ---- producer: the owning thread only ---- */
	struct tft_rt_rec *ring; /* borrowed: inside this mapping */
	uint64_t mask;           /* ring slots - 1 (a power of two minus one) */
	uint64_t head_local;     /* next slot to fill; == head after each publish */
	uint64_t tail_cache;     /* the drain's tail as last read (acquire) */
	uint64_t half;           /* slots; past this the drain is woken */
	uint32_t open;           /* zones begun and recorded, not yet ended */
	uint32_t serial;         /* this thread's serial, in zone contexts */
	uint32_t busy;           /* inside a recording call: signal / recursion guard */
	_Atomic uint64_t values_dropped; /* tft_rt_emit_values groups that found no room (relaxed) */
	_Atomic uint64_t head;   /* slots published (release; pairs with the drain's acquire) */
	_Atomic uint64_t dropped; /* events dropped on this thread (relaxed counter) */

	/* call sites of the open zones, [0, open): what a kernel enqueued now belongs to
	 * (tft_rt_innermost_site; read by the owning thread only) */
	const struct tft_site *sites[TFT_RT_MAX_DEPTH];

	/* ---- drain: the drain thread only ---- */
	_Alignas(64) _Atomic uint64_t tail; /* slots consumed (release; pairs with reserve's acquire) */
	struct tft_rt_dthread *ds;          /* owned by the drain session, NULL outside one */

	/* ---- shared, set once ---- */
	_Alignas(64) struct tft_rt_thread *_Atomic next; /* thread list link */
	_Atomic int exited;   /* set by the exit destructor (release; the drain acquires) */
	int64_t tid;          /* gettid() */
	char comm[16];        /* thread name at registration */
	size_t map_bytes;     /* the whole mapping */
};

/* ---- globals (runtime.c) ---- */

/* Public state word (TFT_RT_* bits), read relaxed by the inline gates. */
extern TFT_API int tft_rt_state;
/* 1 if producers read the TSC (set before TFT_RT_STEPS is published). */
extern _Atomic int tft_rt_use_tsc;
/* Head of the thread list: producers push with CAS, only the drain unlinks. */
extern struct tft_rt_thread *_Atomic tft_rt_threads;
/* Events lost because the thread has no ring (refused, exited, failed). */
extern _Atomic uint64_t tft_rt_lost;
/* Set by producers whose ring passed half full; the drain polls and clears it. */
extern _Atomic int tft_rt_wake;
/* Ring bytes and thread cap for new threads; live threads with a ring. */
extern _Atomic size_t tft_rt_ring_bytes;
extern _Atomic uint32_t tft_rt_max_threads;
extern _Atomic uint32_t tft_rt_nthreads;
/* Sessions begun (tft_init): a thread refused a ring may try again in the next one. */
extern _Atomic uint32_t tft_rt_generation;
/* Key whose destructor marks a thread exited. */
extern pthread_key_t tft_rt_key;
/* Hooks of runtime/source.h (NULL = none), loaded relaxed where they are called. */
typedef void (*tft_rt_zone_hook_fn)(uint32_t phase, uint32_t depth);
typedef void (*tft_rt_step_hook_fn)(uint32_t phase);
extern _Atomic(tft_rt_zone_hook_fn) tft_rt_zone_hook;
extern _Atomic(tft_rt_step_hook_fn) tft_rt_step_hook;

static inline unsigned tft_rt_state_load(void)
{
	return (unsigned)__atomic_load_n(&tft_rt_state, __ATOMIC_RELAXED);
}

/* ---- emit.c ---- */

/* Record a step / name record with its text on the calling thread. 0 or TFT_EAGAIN. */
int tft_rt_emit_text(uint32_t kind, uint64_t p0, uint64_t p1, const char *text);
/* Fork child: forget the forking thread's ring (it belongs to the parent). */
void tft_rt_emit_forget_self(void);
/* The drain thread: never record from it (its allocations may be traced). */
void tft_rt_emit_mark_internal(void);
/* The key destructor. */
void tft_rt_thread_exit(void *p);
/* Unmap a thread's mapping (drain / init / fork cleanup). */
void tft_rt_thread_free(struct tft_rt_thread *t);

/* ---- the drain (drain*.c, drain_int.h) ---- */

struct tft_rt_session;

struct tft_rt_settings {
	char path[4096];
	uint32_t flush_ms;
	uint32_t hold_ms;
	uint32_t exit_timeout_ms;
	uint32_t import_hold_ms; /* TFT_IMPORT_HOLD_MS: longest hold for an import, 0 = none */
	size_t ring_bytes;
	int want_tsc;
};

/* Names of the values of TFT_RK_VALUES records (tft_rt_counters_describe). */
extern const char *const *_Atomic tft_rt_value_names;
extern _Atomic uint32_t tft_rt_value_count;

/* Create the session file and the drain state. NULL + err on failure. */
struct tft_rt_session *tft_rt_session_create(const struct tft_rt_settings *st,
					     struct tft_error *err);
/* Free a session whose drain thread never ran or has finished. */
void tft_rt_session_destroy(struct tft_rt_session *s);
/* The drain thread's body (arg: the session). */
void *tft_rt_drain_main(void *arg);
/* Start of session: skip what rings hold from before and take counter baselines. */
void tft_rt_session_adopt_threads(struct tft_rt_session *s);

/*
 * Foreign events into the live session (the Python module imports profiler
 * traces with it): run fn(ctx, w) on the running session's writer. The
 * caller holds the work lock, so the drain is excluded. fn appends to its own
 * tracks only and may commit. A TFT_EIO from fn disables the session like a
 * failed drain write. Returns fn's result, or TFT_EIO when the writer failed.
 */
struct tft_writer;
int tft_rt_session_with_writer(struct tft_rt_session *s,
			       int (*fn)(void *ctx, struct tft_writer *w), void *ctx);
/*
 * For an import, while the drain is excluded (inside fn above): the earliest
 * timestamp the drain holds for OS thread tid and will still append to its
 * track (zones open, slices waiting for them), INT64_MAX if none; and a track
 * that the import appended to up to ts (the drain's later events on it never
 * start before that: moved up, counted in `clamped`).
 */
int64_t tft_rt_session_thread_floor(struct tft_rt_session *s, int64_t tid);
void tft_rt_session_track_appended(struct tft_rt_session *s, uint32_t track, int64_t ts);

/* ---- meta.c: tft_set_meta's values waiting for the drain ---- */

/* Write the values waiting into the session (the drain, before a commit);
 * they leave the table whatever happens. 0 or the first failure's status. */
int tft_rt_meta_apply(struct tft_writer *w);
/* Forget the values waiting (tft_init: a new session starts with none). */
void tft_rt_meta_clear(void);
/* Held across fork (after the runtime's own locks). */
void tft_rt_meta_lock(void);
void tft_rt_meta_unlock(void);

/* ---- runtime.c: the drain's calls back into control ---- */

/* Snapshot the drain publishes for tft_stats (under the stats lock). */
struct tft_rt_snapshot {
	uint64_t events, dropped, bytes, flushes, threads;
	int64_t last_flush_ns, last_flush_unix_ns;
};
void tft_rt_publish_stats(const struct tft_rt_snapshot *snap);
/* The runtime disabled itself (write failure): stop recording, keep the reason. */
void tft_rt_disable(int status, const char *reason);
/*
 * Drain thread handshake: wait until there is work, the poll period passed,
 * a flush is requested or stop is set. Returns the flags below.
 */
enum { TFT_RT_WAIT_FLUSH = 1, TFT_RT_WAIT_STOP = 2 };
int tft_rt_drain_wait(int64_t until_ns, uint64_t *flush_seq);
/* Held around each unit of drain work, so that fork never copies it mid-call. */
void tft_rt_work_begin(void);
void tft_rt_work_end(void);
/* Report the flush request `seq` done (and, with final, that the drain ended). */
void tft_rt_drain_done(uint64_t seq, int final, int rc);
/* The import of `step` was released (tft_rt_import_release): true once, then forgotten. */
int tft_rt_import_released(int64_t step);

/*
 * Run fn(ctx, w) on the running session's writer between two drain cycles
 * (under the control and work locks; see tft_rt_session_with_writer).
 * Returns fn's result, TFT_EINVAL when no session runs, TFT_EIO when the
 * session's writer has failed. Never call it from the drain thread or fn.
 */
TFT_API int tft_rt_with_writer(int (*fn)(void *ctx, struct tft_writer *w), void *ctx);
/* tft_rt_session_thread_floor / _track_appended of the session; only inside such an fn. */
TFT_API int64_t tft_rt_thread_floor(int64_t tid);
TFT_API void tft_rt_track_appended(uint32_t track, int64_t ts);

/*
 * Holding a thread for an import (server/live_steps.c; docs/runtime.md
 * "Holding a thread for an import"). TFT_API, like tft_rt_with_writer: the
 * Python module's hub reaches the one runtime of the process (the preload
 * library's under `tftracer record`; python/tftracer/_tftracer.map). A traced step's profiler trace is
 * imported into the session after the step ends, and the store appends a
 * track only in time order: so the drain must not append the thread's later
 * events before the trace is in.
 *
 * tft_rt_import_hold(step): `step` is the open step and its trace will be
 * imported: its end marks the thread that ends it, and the drain consumes
 * that thread's ring up to the step's end and no further until
 * tft_rt_import_release(step) or until import_hold_ms passed since the
 * step's end (then counted in the meta count `import_hold_timeouts`). Other
 * threads drain as always; the program never waits (its records wait in its
 * ring; a full ring drops, counted in `dropped`). 0, or TFT_EINVAL (not the
 * open step, no session, holds off).
 *
 * tft_rt_import_release(step): the step's trace is in, or will not come.
 * Never blocks on the drain (a short lock of its own); a release for a step
 * whose end the drain has not reached yet is remembered (the last 64).
 */
TFT_API int tft_rt_import_hold(int64_t step);
TFT_API void tft_rt_import_release(int64_t step);

#endif /* TFT_RUNTIME_RT_H */
