/* SPDX-License-Identifier: MIT */
/*
 * The live hub: the HTTP server inside a training job, following the session
 * file the in-process runtime writes (docs/http-api.md "Live"). It keeps
 * only aggregates in memory (per run kind), streams step/status/trace events
 * to the UI and takes tracing requests. The Python module is built on it.
 */
#ifndef TFT_SERVER_LIVE_H
#define TFT_SERVER_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/status.h"
#include "server/http.h"

struct tft_live;

struct tft_live_opts {
	struct tft_server_opts server; /* host, port, token, threads ... */
	const char *path; /* borrowed: serve this session file (a file server); NULL = the
			   * running runtime's session (tft_runtime_path), live */
};

void tft_live_opts_init(struct tft_live_opts *o);

/*
 * Start the server (and, live, the follower thread). A live hub needs a
 * running runtime (tft_init). NULL + err on failure (what tft_server_start
 * returns, or TFT_EINVAL without a runtime session).
 */
struct tft_live *tft_live_start(const struct tft_live_opts *o, struct tft_error *err);

/*
 * Stop the server and the follower, free everything. NULL is a no-op. The
 * job's end: the runtime is flushed, every step recorded until now goes out
 * to the event streams (its `run`, its `trace` when traced), then an `end`
 * event; each stream is sent all of it before it closes (at most 2 s).
 */
void tft_live_stop(struct tft_live *lv);

/*
 * What follows the end, for the pages' `end` event ("next"): "serve" when the
 * same address serves the session file once the job is gone (`tftracer record
 * --serve`); NULL or "" for nothing. Copied (at most 15 bytes).
 */
void tft_live_set_next(struct tft_live *lv, const char *next);

/* The URL to open (token included when auth is on); "" once stopped. Copies. */
void tft_live_url(struct tft_live *lv, char *buf, size_t size);
uint16_t tft_live_port(const struct tft_live *lv);

/*
 * Wait at most timeout_ms (< 0: forever) for the server to stop (POST
 * /api/stop or tft_live_stop). True once it has stopped.
 */
bool tft_live_wait(struct tft_live *lv, int64_t timeout_ms);

/*
 * Serve another session file (`path`, a file server: /api/live is a 404) or,
 * with path NULL, the runtime's live session again. The server restarts on
 * the same port. 0 or what tft_server_start returned (the old server is then
 * gone too).
 */
int tft_live_serve(struct tft_live *lv, const char *path, struct tft_error *err);

/*
 * Steps through the hub: tft_step_begin/end plus the hub's trace requests
 * (POST /api/trace) and its per-kind statistics. *traced (may be NULL): this
 * step records op-level events. lv may be NULL (then only the runtime calls).
 * Same return values as tft_step_begin / tft_step_end.
 */
int64_t tft_live_step_begin(struct tft_live *lv, const char *name, bool *traced);
int64_t tft_live_step_end(struct tft_live *lv);
/* tft_step_abandon(): the open step is never recorded (nor shown as a run). */
int64_t tft_live_step_abandon(struct tft_live *lv);

/*
 * Trace the next n steps (0 cancels): a trace request, which replaces the
 * previous one. Returns its id (> 0; the cancelled one's for n = 0). The
 * hub follows a request's steps until each has landed: its runtime events
 * are in the file and so are the profiler imports it expects (below).
 */
uint64_t tft_live_trace_next(struct tft_live *lv, int n);
/* Trace every k-th step (0 = off). */
void tft_live_trace_every(struct tft_live *lv, int k);
/* Global op-level tracing. */
void tft_live_set_tracing(struct tft_live *lv, bool on);

/*
 * A traced step's profiler trace is coming (n imports more; the Python
 * module: torch.profiler ran over the step, a RunMetadata or XSpace will
 * follow): the step has landed once they have been imported (tft_live_import
 * with im->step = step) or given up (tft_live_step_import_failed). Call it
 * before the step's last expected import is queued.
 */
void tft_live_step_expect_imports(struct tft_live *lv, int64_t step, int n);
/* An expected import of the step will not come (why: one line, copied). */
void tft_live_step_import_failed(struct tft_live *lv, int64_t step, const char *why);

/* The latest trace request (POST /api/trace steps=N, tft_live_trace_next). */
struct tft_live_request {
	uint64_t id;          /* 0: none yet */
	int64_t steps;        /* asked for; 0 once cancelled */
	int64_t begun;        /* its steps that began traced */
	int64_t landed;       /* its steps whose events are all in the file */
	int64_t failed;       /* its steps that landed without their profiler trace */
};

struct tft_live_status {
	bool live;
	int state;          /* enum tft_runtime_state */
	bool tracing;       /* op-level events recorded now (switch or requested steps) */
	bool global;        /* the global switch (tft_set_tracing), whatever the steps */
	int64_t pending, every;
	uint64_t events, dropped, flushes, bytes_written, threads;
	int64_t steps;
	uint64_t generation;
	int64_t end_ns;
	uint64_t imports, import_errors, imported_events;
	struct tft_live_request request;
	char disabled_reason[200];
	char session[256];  /* the served file's base name */
};
void tft_live_get_status(struct tft_live *lv, struct tft_live_status *out);

/* ---- imports (live_import.c) ------------------------------------------- */

enum tft_live_source {
	TFT_LIVE_SRC_RUNTIME = 0, /* zones the runtime recorded */
	TFT_LIVE_SRC_TORCH = 1,   /* a torch.profiler Chrome/Kineto trace */
	TFT_LIVE_SRC_RUNMETA = 2, /* a TF RunMetadata (FULL_TRACE) */
	TFT_LIVE_SRC_XSPACE = 3,  /* a TF2 profiler XSpace (.xplane.pb) */
};
const char *tft_live_source_name(int source);

struct tft_live_import {
	int source;          /* enum tft_live_source (not RUNTIME) */
	const char *path;    /* borrowed: the trace file, or NULL with data/len */
	const void *data;    /* borrowed: the trace bytes when path is NULL */
	size_t len;
	int64_t step;        /* the step it belongs to, or -1 */
	const char *name;    /* borrowed: what to call it in the trace event (NULL = source) */
	/*
	 * CLOCK_MONOTONIC ns when the profiler started / stopped. A trace whose
	 * times are Unix-epoch based is shifted by (CLOCK_MONOTONIC -
	 * CLOCK_REALTIME); any other trace is shifted so that it starts at t0_ns.
	 */
	int64_t t0_ns, t1_ns;
};

/*
 * Import a profiler trace into the running runtime's session file (its own
 * processes and tracks, reused across imports of the same producer; steps
 * of the trace are not copied) and commit. The trace is read into a
 * temporary session next to the live file first, so the runtime's drain is
 * held up only for the copy. lv may be NULL; with a hub, a `trace` event
 * follows. The next import of the same producer through the same hub
 * continues its tracks; each hub keeps its own (two hubs in one process do
 * not share them), and an import without a hub makes new ones. *events (may be NULL): events copied. 0, or TFT_EINVAL (no
 * runtime session), TFT_EFORMAT (a bad trace: err says where), TFT_EIO.
 */
int tft_live_import(struct tft_live *lv, const struct tft_live_import *im, uint64_t *events,
		    struct tft_error *err);

/*
 * Write a consistent copy of the served session to `path` (must end in
 * ".tft" and not exist; NULL = next to it, "<name>-<unix time>.tft"): a
 * runtime flush, then the SQLite backup API. The path written goes to
 * out (may be NULL). 0, TFT_EINVAL (bad path), TFT_EIO.
 */
int tft_live_save(struct tft_live *lv, const char *path, char *out, size_t out_size,
		  uint64_t *bytes, struct tft_error *err);
/* The same for any session file (the copy of a live one is consistent). */
int tft_session_save_copy(const char *src, const char *path, uint64_t *bytes,
			  struct tft_error *err);

#endif /* TFT_SERVER_LIVE_H */
