/* SPDX-License-Identifier: MIT */
/*
 * What the runtime offers the layers above it that record from below (the
 * interceptors of src/intercept/): event sources the drain thread collects
 * every cycle (device work timed after the fact, on tracks of their own),
 * the innermost zone open on the calling thread (kernel-to-op matching),
 * per-zone counter values, step hooks, and a session the preload library
 * starts and owns. Not part of the public API (include/tftracer/).
 */
#ifndef TFT_RUNTIME_SOURCE_H
#define TFT_RUNTIME_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/model.h"
#include "tftracer/tftracer.h"

/* ---- sessions the preload library owns --------------------------------------- */

/*
 * Start the runtime as tft_init(cfg) does, on behalf of the preload library:
 * the program's own tft_init() then joins this session (returns 0 and applies
 * cfg->enabled) and its tft_shutdown() only flushes; the session ends with
 * tft_rt_shutdown_owned() (the preload's exit and exec handlers) or the
 * runtime's atexit handler. Same return values as tft_init.
 */
int tft_rt_init_owned(const struct tft_config *cfg);
/* End the session whoever started it (as tft_shutdown). */
int tft_rt_shutdown_owned(void);
/* Sessions begun in this process so far (by tft_init or tft_rt_init_owned; a fork
 * child starts from its parent's count). */
uint32_t tft_rt_sessions_begun(void);
/* Whether a session runs now (TFT_RT_STEPS). */
bool tft_rt_running(void);
/* The pid of the process that started the running session, 0 when none runs
 * (a vfork or fork child sees its parent's session as not its own). */
int64_t tft_rt_session_pid(void);

/* ---- the calling thread ------------------------------------------------------ */

/*
 * The call site of the innermost zone open (and recorded) on the calling
 * thread, or NULL: what a kernel enqueued now belongs to. Never blocks; a
 * signal handler's zone open at the time counts.
 */
const struct tft_site *tft_rt_innermost_site(void);

/* The current tick of the runtime's clock (for tft_rt_src_ns). */
uint64_t tft_rt_now_tick(void);

/*
 * Counter values for the zone at `depth` (its tft_zone.depth) on the calling
 * thread: phase 0 right after its begin, phase 1 right before its end. The
 * drain puts end - begin on the slice as args named by
 * tft_rt_counters_describe. n <= TFT_RT_MAX_VALUES. Not events: never
 * counted as such; dropped (and counted in `values_dropped`) when the ring has
 * no room beyond the slots reserved for open zones' ends.
 */
#define TFT_RT_MAX_VALUES 8u
void tft_rt_emit_values(uint32_t phase, uint32_t depth, const uint64_t *v, uint32_t n);

/*
 * Args of the zone at `depth` (its tft_zone.depth) on the calling thread,
 * recorded while it is open (just before its end, in practice): they become
 * args of its slice. A key, and a TFT_RT_ARG_STR value, are borrowed strings
 * that must outlive every session (static); a TEXT or JSON value is copied
 * (at most TFT_RT_ARG_TEXT_MAX bytes; longer is cut, and a cut JSON value is
 * stored as text). n <= TFT_RT_MAX_ARGS per zone. Not events: never counted
 * as such; when the ring has no room beyond the slots reserved for open
 * zones' ends, the zone's args are dropped together (and counted in
 * `values_dropped`). A zone split at a hold limit keeps them on its last piece.
 */
#define TFT_RT_MAX_ARGS 16u
#define TFT_RT_ARG_TEXT_MAX 8192u
enum tft_rt_arg_type {
	TFT_RT_ARG_INT = 1,  /* i */
	TFT_RT_ARG_STR = 2,  /* s: a borrowed static string */
	TFT_RT_ARG_TEXT = 3, /* s[0..len): copied, a string */
	TFT_RT_ARG_JSON = 4, /* s[0..len): copied, raw JSON text (a list, an object) */
	TFT_RT_ARG_BOOL = 5, /* i: 0 or 1 */
};
struct tft_rt_arg {
	const char *key; /* borrowed, static */
	uint32_t type;   /* enum tft_rt_arg_type */
	uint32_t len;    /* TEXT, JSON: bytes of s */
	int64_t i;
	const char *s;
};
void tft_rt_zone_args(uint32_t depth, const struct tft_rt_arg *a, uint32_t n);

/*
 * Hooks: zone(phase, depth) runs on the recording thread after each
 * recorded zone begin (phase 0) and before each recorded zone end (phase 1);
 * step(phase) before each step begin (0) and end (1) record. NULL = none.
 * Set them before the session starts (or while the program cannot record).
 */
typedef void (*tft_rt_zone_hook_fn)(uint32_t phase, uint32_t depth);
typedef void (*tft_rt_step_hook_fn)(uint32_t phase);
void tft_rt_set_hooks(tft_rt_zone_hook_fn zone, tft_rt_step_hook_fn step);
/*
 * Names of the values tft_rt_emit_values carries, in order (borrowed: must
 * outlive every session), interned once per session as arg keys.
 */
void tft_rt_counters_describe(const char *const *names, uint32_t n);

/* ---- slices recorded elsewhere ------------------------------------------------------- */

/*
 * A whole slice (an operation that ended) with its args, for
 * tft_rt_append_slices. Times are CLOCK_MONOTONIC ns (the runtime adds the
 * test skew); strings are borrowed for the call (copied into the session).
 */
struct tft_rt_slice {
	const char *name, *cat;
	int64_t ts_ns, dur_ns;
	const struct tft_rt_arg *args;
	uint32_t nargs;            /* at most TFT_RT_MAX_ARGS are kept */
};
/*
 * Append slices to the track of kind `kind` named `track` of the running
 * session's own process (made at its first use: concurrent, lane-packed),
 * between two drain cycles. The calls must hand a track's slices in order of
 * their start (a batch is sorted; one older than the track's last is moved
 * up to it). Returns the slices appended, or TFT_EINVAL (no session runs, a
 * bad kind), TFT_ENOSPC (64 such tracks), TFT_EIO / TFT_ENOMEM. Exported
 * (TFT_API) so that the Python module's calls reach the runtime that owns the
 * session, as its other runtime calls do (python/tftracer/_tftracer.map).
 */
TFT_API int tft_rt_append_slices(uint32_t kind, const char *track, const struct tft_rt_slice *s,
				 uint32_t n);

/*
 * The process's rank in its job, the job's size (<= 0: unknown) and id (NULL
 * or "": the launcher's, from the environment), said after the session began
 * (a Python process learns its rank from torch.distributed's
 * init_process_group): the drain sets the process's rank and the meta
 * job_rank, job_size, job_id at its next cycle. 0, TFT_EINVAL (rank < 0),
 * TFT_EAGAIN (no session runs, or a call in progress). Exported as
 * tft_rt_append_slices is.
 */
TFT_API int tft_rt_set_job(int rank, int size, const char *id);

/* ---- event sources --------------------------------------------------------------- */

struct tft_rt_src; /* the drain's side of one collection (valid during the call) */

/*
 * A source: collect(ctx, io, final) runs on the drain thread at the start of
 * every drain cycle (before the threads' rings are read, so a flow begun on a
 * thread before the source saw its command is always there first), under
 * the runtime's work lock, while a session runs; final = 1 in the last
 * cycle of a session. It appends its own events to its own tracks with the
 * tft_rt_src_* calls and must not block for long.
 */
struct tft_rt_source {
	void (*collect)(void *ctx, struct tft_rt_src *io, int final);
	void *ctx;
};
/* Register a source for this and later sessions (at most 8). 0 or TFT_ENOSPC. */
int tft_rt_source_add(const struct tft_rt_source *src);

/* Clock: a tick of tft_rt_now_tick() in session ns (CLOCK_MONOTONIC); now. */
int64_t tft_rt_src_ns(struct tft_rt_src *io, uint64_t tick);
int64_t tft_rt_src_now_ns(struct tft_rt_src *io);
/* A session generation: changes with every session (a source's track ids are per session). */
uint32_t tft_rt_src_session(struct tft_rt_src *io);
/* Intern a string (UINT32_MAX-safe: 0 on failure); a site's name id. */
uint32_t tft_rt_src_intern(struct tft_rt_src *io, const char *s, size_t len);
uint32_t tft_rt_src_site_name(struct tft_rt_src *io, const struct tft_site *site);
/*
 * A track of the runtime's process: kind (enum tft_track_kind), name, tid.
 * Its id, or TFT_NONE (the session failed). A gpu_stream or device track
 * holds concurrent executions (TFT_TRACKF_CONCURRENT: lanes, not nesting).
 */
uint32_t tft_rt_src_track(struct tft_rt_src *io, uint32_t kind, const char *name, int64_t tid);
/*
 * Append an event to one of the source's tracks, in time order per track (a
 * timestamp before the track's last is moved up to it, and counted in the
 * meta count `clamped`). 0, TFT_EINVAL (the event is lost and counted), TFT_EIO.
 * Appended events count in tft_stats().events once committed.
 */
int tft_rt_src_append(struct tft_rt_src *io, const struct tft_event *ev);
/*
 * The end of a flow a thread began with tft_rt_flow(site, id, 0): on `track`
 * at ts, bound to the slice there. Matched (or counted unmatched) like a
 * thread's flow end.
 */
void tft_rt_src_flow_end(struct tft_rt_src *io, uint64_t id, uint32_t track, int64_t ts);
/*
 * A whole flow from the thread `src_tid` at src_ts (bound to its slice there:
 * the API call that launched the work) to `dst_track` at dst_ts, for sources
 * that learn both ends at once. A thread that never recorded in this session
 * leaves the flow unmatched (counted).
 */
void tft_rt_src_flow(struct tft_rt_src *io, uint64_t id, const struct tft_site *site,
		     int64_t src_tid, int64_t src_ts, uint32_t dst_track, int64_t dst_ts);
/* A sample of the process-wide counter track named site->name, in time order
 * with the threads' samples of that counter. */
void tft_rt_src_counter(struct tft_rt_src *io, const struct tft_site *site, int64_t ts,
			double value);
/* Add to a session count (meta, integer) / set a meta value. */
void tft_rt_src_count(struct tft_rt_src *io, const char *key, int64_t delta);
void tft_rt_src_meta(struct tft_rt_src *io, const char *key, const char *value);
/*
 * The process's rank in its job and the job's size (<= 0: unknown), as the
 * program's communication library tells them: the session's process rank and
 * its meta job_rank and job_size (job_id from the environment, runtime/job.h).
 */
void tft_rt_src_job(struct tft_rt_src *io, int rank, int size);
/* Events the source lost (counted in the session's and tft_stats' `dropped`). */
void tft_rt_src_dropped(struct tft_rt_src *io, uint64_t n);
/* The session failed (nothing more is written). */
bool tft_rt_src_failed(struct tft_rt_src *io);

#endif /* TFT_RUNTIME_SOURCE_H */
