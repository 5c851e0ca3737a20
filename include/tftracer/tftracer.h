/* SPDX-License-Identifier: MIT */
/*
 * tftracer public header: version and status codes shared by every layer,
 * and the in-process runtime API (steps, zones, counters, flows, memory).
 * Instrumentation macros that compile out live in tftracer/zone.h.
 */
#ifndef TFTRACER_TFTRACER_H
#define TFTRACER_TFTRACER_H

#ifdef __cplusplus
extern "C" {
#endif

#define TFT_VERSION_MAJOR 0
#define TFT_VERSION_MINOR 1
#define TFT_VERSION_PATCH 0
#define TFT_VERSION_STRING "0.1.0"

#if defined(__GNUC__)
#define TFT_API __attribute__((visibility("default")))
#else
#define TFT_API
#endif

/* Every fallible library call returns 0 or one of these (negative). */
enum tft_status {
	TFT_OK = 0,
	TFT_ENOMEM = -1,    /* allocation failed */
	TFT_EINVAL = -2,    /* bad argument or usage */
	TFT_EIO = -3,       /* read/write/database failure */
	TFT_EFORMAT = -4,   /* malformed input */
	TFT_EVERSION = -5,  /* file written by an unknown format version */
	TFT_EAGAIN = -6,    /* would block; try later */
	TFT_ENOSPC = -7,    /* buffer or disk full */
	TFT_ENOTFOUND = -8, /* no such file, track, key ... */
};

/* A static, human-readable string for a tft_status; never NULL. */
TFT_API const char *tft_strerror(int status);

/* ==== In-process runtime (libtftracer.so) ====================================
 *
 * Records steps, zones (timed scopes), instants, counters, flows and memory
 * events from inside a running program into a session file (.tft) that the
 * reader, the CLI and the server open while it grows. See docs/runtime.md.
 *
 * Cost model: every recording call is a static inline gate (one relaxed load
 * and one unlikely branch when op-level tracing is off) in front of an
 * exported function that appends a 32-byte record to the calling thread's
 * lock-free ring. A drain thread turns records into model events and
 * commits them to the session at least every flush interval.
 *
 * Thread-safety: every function below may be called from any thread at any
 * time, before tft_init() and after tft_shutdown() included (they then
 * record nothing). The recording calls take no lock, never block, never
 * allocate after a thread's first event, leave errno unchanged and may be
 * called from a signal handler; a call that finds the ring full, or that
 * interrupts a recording call of the same thread, drops the event and
 * counts it (tft_stats). The runtime never prints, exits or aborts.
 *
 * Fork: the child starts with tracing off and no drain thread; it may call
 * tft_init() again (use "%p" in the session path). Exit: an atexit handler
 * shuts the runtime down with a bounded wait (tft_config.exit_timeout_ms).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * A static call-site descriptor. Events carry only its address; the drain
 * thread reads and interns the strings once per site. A site must stay
 * valid and unchanged until tft_shutdown() returns (a static const, as the
 * TFT_ZONE* macros of tftracer/zone.h define, or memory never freed).
 */
struct tft_site {
	const char *name; /* borrowed: event / counter name (NULL = "") */
	const char *cat;  /* borrowed: category (NULL = "") */
	const char *file; /* borrowed: source file (NULL if unknown) */
	uint32_t line;    /* source line, 0 if unknown */
	uint32_t flags;   /* TFT_SITE_*; 0 for most sites */
};

/* tft_site.flags */
enum {
	/*
	 * A cumulative counter (a count of events or time so far): its samples
	 * never go down. Samples taken on several threads may reach the session
	 * out of their time order; the runtime then keeps the larger value.
	 */
	TFT_SITE_MONOTONIC = 1u << 0,
};

enum tft_clock_mode {
	TFT_CLOCK_AUTO = 0,      /* TSC where invariant (x86_64), else CLOCK_MONOTONIC */
	TFT_CLOCK_TSC = 1,       /* TSC if usable, else CLOCK_MONOTONIC */
	TFT_CLOCK_MONOTONIC = 2, /* clock_gettime(CLOCK_MONOTONIC) (vDSO) */
};

/*
 * Runtime configuration. Fill it with tft_config_init() and change what you
 * need. ABI: struct_size comes first; fields are only ever added at the end.
 */
struct tft_config {
	uint32_t struct_size;       /* sizeof(struct tft_config), set by tft_config_init */
	uint32_t flush_interval_ms; /* commit period: default 100, clamped to [1, 250] */
	const char *session_path;   /* borrowed (copied by tft_init): the new session file;
				     * "%p" expands to the pid. NULL: $TFT_SESSION, else
				     * "tftracer-%p.tft" in the working directory */
	size_t buffer_bytes;        /* per-thread ring bytes: default 1 MiB, rounded up to a
				     * power of two, clamped to [4 KiB, 1 GiB] */
	bool enabled;               /* op-level tracing on from the start (default true);
				     * false: steps only until tft_set_tracing(true) or
				     * tft_trace_next_steps() */
	uint32_t max_threads;       /* threads with a ring at a time: default 256; later
				     * threads record nothing (their events count as dropped) */
	uint32_t exit_timeout_ms;   /* bound on the final flush at exit/shutdown: default 1000 */
	uint32_t max_hold_ms;       /* longest a completed slice waits for its enclosing
				     * zones to end before those are split: default 1000 */
	int clock;                  /* enum tft_clock_mode; $TFT_CLOCK ("tsc", "monotonic")
				     * overrides TFT_CLOCK_AUTO */
	/* End of base ABI */
};

/* Fill *cfg with the defaults (cfg must not be NULL). */
TFT_API void tft_config_init(struct tft_config *cfg);

/*
 * Start the runtime: create the session file, start the drain thread and
 * begin recording. cfg may be NULL (all defaults). Returns 0, or
 *   TFT_EINVAL  already running, bad cfg->struct_size, or the file exists
 *   TFT_EIO     the session file cannot be created (reason in tft_stats)
 *   TFT_ENOMEM  out of memory
 *   TFT_EAGAIN  the drain thread of a previous session is still finishing
 * On failure nothing is recorded and the reason is kept for tft_stats().
 */
TFT_API int tft_init(const struct tft_config *cfg);

/*
 * Stop recording, drain every ring, close still-open zones (flagged
 * unclosed), finish and close the session file. Waits at most
 * exit_timeout_ms. Returns 0, TFT_EAGAIN (timed out: the data up to the
 * last commit is safe, the drain thread finishes in the background), or
 * TFT_EIO (the final write failed). Without a running session: 0.
 * Statistics stay readable until the next tft_init().
 */
TFT_API int tft_shutdown(void);

/*
 * Drain every ring and commit now; wait at most timeout_ms for it. After a
 * 0 return, every event recorded before the call is in the session file,
 * except slices still waiting for an enclosing zone of their thread to end
 * (at most max_hold_ms). Returns 0, TFT_EAGAIN (timeout), TFT_EINVAL (not
 * running) or TFT_EIO (the runtime disabled itself after a write error).
 */
TFT_API int tft_flush(uint32_t timeout_ms);

/*
 * Steps (training iterations). tft_step_begin() starts step N (0, 1, 2 ...
 * per session; ending the open step first if there is one) and returns N;
 * tft_step_end() ends the open step and returns its index. Both return -1
 * when the runtime is not running (or, for end, when no step is open).
 * Steps are process-wide and recorded whether op-level tracing is on or not;
 * each becomes a step of the session (traced = op-level tracing was on at
 * its begin: turned on mid-step, the events from then on are kept, but the
 * step is not called traced). name is copied (up to 127 bytes); NULL = "step".
 */
TFT_API int64_t tft_step_begin(const char *name);
TFT_API int64_t tft_step_end(void);
/*
 * The open step is not a step after all (a program's tail after its last
 * training step): it is closed without an end, so the session never gets
 * it (events recorded meanwhile stay, outside any step). Its index, or -1.
 */
TFT_API int64_t tft_step_abandon(void);

/*
 * Op-level tracing (zones, instants, counters, flows, memory) on or off for
 * the whole process. Zones begun while on are always ended and recorded.
 */
TFT_API void tft_set_tracing(bool on);

/*
 * On demand: record op-level events during the next n steps only (from the
 * next tft_step_begin() to the end of the n-th step), then return to the
 * tft_set_tracing() setting. n <= 0 cancels a pending request.
 */
TFT_API void tft_trace_next_steps(int n);

/* Name the calling thread's track / the process (copied, up to 127 bytes).
 * 0, TFT_EINVAL (NULL), TFT_EAGAIN (not running, or the event was dropped). */
TFT_API int tft_thread_name(const char *name);
TFT_API int tft_process_name(const char *name);

/*
 * Session metadata: store value under key in the running session's meta
 * table (one text value per key; a later call replaces it). Both strings are
 * copied; the drain thread writes the value at its next commit (within
 * flush_interval_ms; tft_flush() makes it durable now), so the call never
 * waits for the file. For values that change rarely (a model's description,
 * a run's configuration): not on the recording path, it takes a lock and
 * allocates. Returns 0, TFT_EINVAL (NULL or empty key, a key over 127 bytes,
 * a value over 64 MiB, or a key the session writes itself: "format",
 * "producer", "clock", "dropped" ... see docs/runtime.md), TFT_EAGAIN (not
 * running, or 64 keys / 128 MiB already waiting for the drain), TFT_ENOMEM.
 */
TFT_API int tft_set_meta(const char *key, const char *value);

enum tft_runtime_state {
	TFT_RUNTIME_OFF = 0,      /* never started, or shut down */
	TFT_RUNTIME_RUNNING = 1,
	TFT_RUNTIME_DISABLED = 2, /* disabled itself: see disabled_status / disabled_reason */
};

/*
 * Runtime statistics. Counts are per session (reset by tft_init) and count
 * API events: a zone is two (begin, end). Once a session is shut down,
 * events + dropped == every event emitted while tracing was on.
 * ABI: set struct_size before the call; fields are only added at the end.
 */
struct tft_runtime_stats {
	uint32_t struct_size;      /* in: sizeof(struct tft_runtime_stats) */
	int32_t state;             /* enum tft_runtime_state */
	bool tracing;              /* op-level events are being recorded now */
	uint64_t events;           /* events committed to the session file */
	uint64_t dropped;          /* events lost: ring full, nesting too deep, re-entry,
				    * no ring for the thread, or a failed write */
	uint64_t bytes_written;    /* session file bytes (database + WAL) at the last commit */
	uint64_t flushes;          /* commits so far */
	uint64_t threads;          /* threads that recorded in this session */
	int64_t steps;             /* steps begun in this session */
	int64_t last_flush_ns;     /* CLOCK_MONOTONIC ns of the last commit, 0 if none */
	int64_t last_flush_unix_ns; /* the same instant as Unix-epoch ns, 0 if none */
	int32_t disabled_status;   /* enum tft_status that stopped / refused the runtime, 0 */
	char disabled_reason[200]; /* why, one line ("" if running fine) */
	/* End of base ABI */
};

/*
 * Copy the statistics into *out (out->struct_size says how much to fill).
 * Returns 0 or TFT_EINVAL (NULL or struct_size too small for the first
 * fields). Cheap: no I/O, one short lock the recording path never takes.
 */
TFT_API int tft_stats(struct tft_runtime_stats *out);

/*
 * The session file of the running (or last) session: copies it into buf
 * (NUL-terminated, truncated to size) and returns its full length, or
 * TFT_ENOTFOUND when no session was ever started. A server may open the
 * file with the reader and follow it with tft_session_refresh() after each
 * commit (tft_runtime_stats.last_flush_ns tells when).
 */
TFT_API int tft_runtime_path(char *buf, size_t size);

/* ---- recording calls (inline gates) ----------------------------------------------- */

/*
 * A zone context, returned by tft_zone_begin() and given back to
 * tft_zone_end(): a value to copy, never to take apart. End each zone
 * exactly once, on the thread that began it, innermost first; ending an
 * outer zone also ends the inner zones still open on that thread.
 */
struct tft_zone {
	uint32_t depth;  /* nesting depth + 1 when recorded, 0 when not */
	uint32_t serial; /* the recording thread */
};

/* Implementation of the inline gates below; call the tft_* names instead.
 * tft_rt_state is read with relaxed atomic loads (TFT_RT_* bits). */
extern TFT_API int tft_rt_state;
#define TFT_RT_STEPS 1u /* the runtime is running: steps are recorded */
#define TFT_RT_OPS 2u   /* op-level tracing is on */
TFT_API struct tft_zone tft_rt_zone_begin(const struct tft_site *site);
TFT_API void tft_rt_zone_end(struct tft_zone z);
TFT_API void tft_rt_instant(const struct tft_site *site);
TFT_API void tft_rt_counter(const struct tft_site *site, double value);
TFT_API void tft_rt_flow(const struct tft_site *site, uint64_t id, int end);
TFT_API void tft_rt_mem_alloc(const void *ptr, size_t bytes);
TFT_API void tft_rt_mem_free(const void *ptr);

/* True when op-level events are being recorded (one relaxed load). */
static inline bool tft_is_tracing(void)
{
	return (__atomic_load_n(&tft_rt_state, __ATOMIC_RELAXED) & TFT_RT_OPS) != 0;
}

/* Begin a zone at `site` (a struct tft_site that outlives the session). */
static inline struct tft_zone tft_zone_begin(const struct tft_site *site)
{
	struct tft_zone none = { 0, 0 };

	if (__builtin_expect(tft_is_tracing(), 0))
		return tft_rt_zone_begin(site);
	return none;
}

/* End the zone `z` came from (no-op when it was not recorded). */
static inline void tft_zone_end(struct tft_zone z)
{
	if (__builtin_expect(z.depth != 0, 0))
		tft_rt_zone_end(z);
}

/* For __attribute__((cleanup)): ends *z (see TFT_ZONE in tftracer/zone.h). */
static inline void tft_zone_cleanup(struct tft_zone *z)
{
	tft_zone_end(*z);
}

/* An instant event at `site` on the calling thread's track. */
static inline void tft_instant(const struct tft_site *site)
{
	if (__builtin_expect(tft_is_tracing(), 0))
		tft_rt_instant(site);
}

/* A sample of the process-wide counter named site->name. */
static inline void tft_counter(const struct tft_site *site, double value)
{
	if (__builtin_expect(tft_is_tracing(), 0))
		tft_rt_counter(site, value);
}

/*
 * A flow arrow from the point of tft_flow_begin(id) to the point of
 * tft_flow_end(id), on any threads (e.g. enqueue -> dequeue). site names
 * the flow and may be NULL ("flow"). Ids are matched process-wide.
 */
static inline void tft_flow_begin(const struct tft_site *site, uint64_t id)
{
	if (__builtin_expect(tft_is_tracing(), 0))
		tft_rt_flow(site, id, 0);
}

static inline void tft_flow_end(const struct tft_site *site, uint64_t id)
{
	if (__builtin_expect(tft_is_tracing(), 0))
		tft_rt_flow(site, id, 1);
}

/*
 * Memory: `bytes` allocated at ptr / ptr freed. The session gets a
 * process-wide "memory in use" counter (bytes). A free of a pointer whose
 * allocation was not recorded changes nothing.
 */
static inline void tft_mem_alloc(const void *ptr, size_t bytes)
{
	if (__builtin_expect(tft_is_tracing(), 0))
		tft_rt_mem_alloc(ptr, bytes);
}

static inline void tft_mem_free(const void *ptr)
{
	if (__builtin_expect(tft_is_tracing(), 0))
		tft_rt_mem_free(ptr);
}

#ifdef __cplusplus
}
#endif
#endif /* TFTRACER_TFTRACER_H */
