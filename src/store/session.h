/* SPDX-License-Identifier: MIT */
/*
 * Session reader: opens a session file read-only and answers queries
 * without scanning the file: the track table and the chunk directory are
 * loaded at open; a window query decodes only the chunks that overlap it,
 * at the level of detail that matches the requested resolution.
 * (store/session_file.c; store/session.c only dispatches each call to the
 * ops a session was opened with, so another layer can answer them: see
 * "sessions of another layer" below.)
 *
 * A session may be open while a writer appends to it (live tracing):
 * tft_session_refresh() picks up what was committed since.
 *
 * Not thread-safe: use one tft_session per thread.
 */
#ifndef TFT_STORE_SESSION_H
#define TFT_STORE_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "core/model.h"
#include "core/status.h"

struct tft_session;
struct tft_track;

struct tft_session_summary {
	const char *format;   /* source format(s), e.g. "chrome", "kineto" (borrowed) */
	const char *producer; /* e.g. "PyTorch Profiler" or "" (borrowed) */
	uint64_t processes, tracks;
	uint64_t slices, instants, counters, flows, steps;
	int64_t start_ns, end_ns;  /* 0,0 for an empty session */
	uint64_t dropped;          /* events lost by the producer */
	uint64_t unmatched_flows;  /* flows with a missing end */
	uint64_t unclosed_slices;  /* B/b without a matching E/e */
};

struct tft_session *tft_session_open(const char *path, struct tft_error *err);
void tft_session_close(struct tft_session *s);

/* Re-read what a live writer committed since open/last refresh. */
int tft_session_refresh(struct tft_session *s, struct tft_error *err);

void tft_session_get_summary(const struct tft_session *s, struct tft_session_summary *out);

/*
 * The tracks' part of a summary: adds the slices, instants and counters of
 * tracks[0 .. n) to *out and sets start_ns/end_ns to the span of those with
 * events (left as they are when none has). For a view over several
 * sessions (job/job_view.c) as for one file.
 */
void tft_session_summary_tracks(struct tft_session_summary *out, const struct tft_track *tracks, uint32_t n);

uint32_t tft_session_process_count(const struct tft_session *s);
const struct tft_process *tft_session_process(const struct tft_session *s, uint32_t id);
uint32_t tft_session_track_count(const struct tft_session *s);
const struct tft_track *tft_session_track(const struct tft_session *s, uint32_t id);

/*
 * String by id (NUL-terminated, borrowed until close); "" for unknown ids.
 * Strings are read from the file on first use, a block of ids at a time, so
 * this call is not read-only: like every call, one thread at a time.
 */
const char *tft_session_str(const struct tft_session *s, uint32_t id, size_t *len);
/* Number of string ids (id 0 is ""); ids at or past it read as "". */
uint32_t tft_session_string_count(const struct tft_session *s);
/* Metadata value (borrowed) or NULL. */
const char *tft_session_meta(const struct tft_session *s, const char *key);
/* The file the session was opened from (as given to tft_session_open). */
const char *tft_session_path(const struct tft_session *s);

/* Called per event; return non-zero to stop the scan (scan returns it). */
typedef int (*tft_event_fn)(void *ctx, const struct tft_event *ev);

/*
 * Events of `track` that overlap [t0_ns, t1_ns], in start order.
 * resolution_ns = 0 returns every event. A positive resolution returns
 * level-of-detail summary blocks (flag TFT_EVF_SUMMARY) from the coarsest
 * stored level whose merge gap is <= resolution_ns, where such a level
 * exists: at most a few events per resolution step per depth.
 * The event and its args are valid only during the callback.
 */
int tft_session_scan(struct tft_session *s, uint32_t track, int64_t t0_ns, int64_t t1_ns,
		     int64_t resolution_ns, tft_event_fn fn, void *ctx, struct tft_error *err);

/*
 * Every flow, chunk by chunk: each chunk's flows sorted by time (src_ts, or
 * dst_ts when the start is missing; ties in insertion order), chunks in the
 * order the writer filled them (roughly time order: not globally sorted). Returns 0,
 * the callback's non-zero return, or a negative status.
 */
typedef int (*tft_flow_fn)(void *ctx, const struct tft_flow *f);
int tft_session_flows(struct tft_session *s, tft_flow_fn fn, void *ctx, struct tft_error *err);

/*
 * Memory for decoded chunks kept between scans (an LRU cache; 0 = the default,
 * 64 MiB). Chunks in use by a running scan are kept whatever the budget.
 */
void tft_session_set_cache_bytes(struct tft_session *s, size_t bytes);

/*
 * Raw chunks and their stored statistics (store/chunk_stats.h), for
 * analyze/stats.c. A track's raw (level-0) chunks are numbered 0..count-1 in
 * start order: chunk i's events start at t_min and end by t_max.
 */
uint32_t tft_session_raw_chunk_count(const struct tft_session *s, uint32_t track);
void tft_session_raw_chunk(const struct tft_session *s, uint32_t track, uint32_t i, int64_t *t_min,
			   int64_t *t_max, uint32_t *n);
/* Every event of raw chunk i of `track`, in start order (as tft_session_scan). */
int tft_session_scan_raw_chunk(struct tft_session *s, uint32_t track, uint32_t i, tft_event_fn fn,
			       void *ctx, struct tft_error *err);
/* Whether the session stores chunk statistics (schema version 2; written at close). */
int tft_session_has_chunk_stats(const struct tft_session *s);
/*
 * The stored statistics of `track`'s raw chunks: fn(ctx, i, blob, len) per
 * chunk that has them (the blob decompressed, valid during the call); a
 * chunk without (a live session's chunk with a slice still open) is not
 * called. Returns 0, fn's non-zero return, or a negative status.
 */
typedef int (*tft_chunk_stats_fn)(void *ctx, uint32_t i, const uint8_t *blob, size_t len);
/*
 * The statistics of the whole track, its chunks' merged (written at close):
 * fn(ctx, 0, blob, len) once; returns fn's result, 1 if the track has none
 * (a live or an older session), or a negative status.
 */
int tft_session_track_stats(struct tft_session *s, uint32_t track, tft_chunk_stats_fn fn, void *ctx,
			    struct tft_error *err);
/* Whether every raw chunk of `track` has its statistics (0/1), or a negative status. */
int tft_session_chunk_stats_complete(struct tft_session *s, uint32_t track, struct tft_error *err);
int tft_session_chunk_stats(struct tft_session *s, uint32_t track, tft_chunk_stats_fn fn, void *ctx,
			    struct tft_error *err);

uint32_t tft_session_step_count(const struct tft_session *s);
const struct tft_step *tft_session_step(const struct tft_session *s, uint32_t i);

/*
 * The graph nodes named `name` (store/graph.h: the graph_nodes rows as
 * tft_graph_lookup returns them, in insertion order): fn(ctx, node,
 * graph_id) for each until it returns non-zero. Returns the number visited
 * (0: none, or no graph), or a negative status (err filled).
 */
struct tft_graph_node;
typedef int (*tft_graph_node_fn)(void *ctx, const struct tft_graph_node *n, int64_t graph_id);
int tft_session_graph_lookup(struct tft_session *s, const char *name, tft_graph_node_fn fn, void *ctx,
			     struct tft_error *err);

/* ---- sessions of another layer -------------------------------------------------- */

/*
 * A session whose data a layer above the store provides (job/job.h: the
 * ranks of a job, each a session file, seen as one session): every
 * tft_session_* call on it goes to these functions, with the `impl` it was
 * made with, so that the readers above (statistics, exports, the server)
 * take it as they take a file. Each function has the contract of the call
 * of the same name; all are required. close(impl) runs at
 * tft_session_close. Thread-safety is the implementation's, as for a file:
 * one thread at a time per session.
 */
struct tft_session_ops {
	void (*close)(void *impl);
	int (*refresh)(void *impl, struct tft_error *err);
	void (*get_summary)(void *impl, struct tft_session_summary *out);
	uint32_t (*process_count)(void *impl);
	const struct tft_process *(*process)(void *impl, uint32_t id);
	uint32_t (*track_count)(void *impl);
	const struct tft_track *(*track)(void *impl, uint32_t id);
	const char *(*str)(void *impl, uint32_t id, size_t *len);
	uint32_t (*string_count)(void *impl);
	const char *(*meta)(void *impl, const char *key);
	int (*scan)(void *impl, uint32_t track, int64_t t0_ns, int64_t t1_ns, int64_t resolution_ns,
		    tft_event_fn fn, void *ctx, struct tft_error *err);
	int (*flows)(void *impl, tft_flow_fn fn, void *ctx, struct tft_error *err);
	void (*set_cache_bytes)(void *impl, size_t bytes);
	uint32_t (*raw_chunk_count)(void *impl, uint32_t track);
	void (*raw_chunk)(void *impl, uint32_t track, uint32_t i, int64_t *t_min, int64_t *t_max,
			  uint32_t *n);
	int (*scan_raw_chunk)(void *impl, uint32_t track, uint32_t i, tft_event_fn fn, void *ctx,
			      struct tft_error *err);
	int (*has_chunk_stats)(void *impl);
	int (*track_stats)(void *impl, uint32_t track, tft_chunk_stats_fn fn, void *ctx,
			   struct tft_error *err);
	int (*chunk_stats_complete)(void *impl, uint32_t track, struct tft_error *err);
	int (*chunk_stats)(void *impl, uint32_t track, tft_chunk_stats_fn fn, void *ctx,
			   struct tft_error *err);
	uint32_t (*step_count)(void *impl);
	const struct tft_step *(*step)(void *impl, uint32_t i);
	int (*graph_lookup)(void *impl, const char *name, tft_graph_node_fn fn, void *ctx,
			    struct tft_error *err);
};

/*
 * A session answered by ops over impl (borrowed until tft_session_close,
 * which calls ops->close(impl)); `path` is what tft_session_path returns (a
 * job directory). NULL on out-of-memory (ops->close(impl) has run then).
 */
struct tft_session *tft_session_open_ops(const struct tft_session_ops *ops, void *impl,
					 const char *path, struct tft_error *err);
/* The impl of a session made by tft_session_open_ops with these ops, else NULL. */
void *tft_session_ops_impl(const struct tft_session *s, const struct tft_session_ops *ops);
/* A session read from one file (its path opens again as another handle of the same
 * session), not one answered by ops (a job directory's view). */
bool tft_session_is_file(const struct tft_session *s);

#endif /* TFT_STORE_SESSION_H */
