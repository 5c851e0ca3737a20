/* SPDX-License-Identifier: MIT */
/*
 * Session writer: streams a trace into a session file (.tft, a SQLite
 * database; see docs/file-format.md) by appending compressed columnar chunks.
 *
 * Model: the caller registers processes and tracks, interns strings, then
 * appends events. Per track, events must arrive in non-decreasing ts_ns
 * order (ties: longer slice first, so parents precede children); importers
 * whose input is unordered go through the sorter (store/sorter.h). The
 * writer assigns nesting depth (call-stack tracks: stack nesting; async,
 * object and TFT_TRACKF_CONCURRENT tracks: first free lane; see
 * tft_track_nests() in core/model.h), keeps per-track stats and builds the
 * level-of-detail summaries as events stream by. A track's kind and flags
 * decide how its events nest: set them before its first event.
 *
 * Durability: everything up to the last tft_writer_commit() survives a crash
 * of the writer (SQLite WAL). Memory is bounded: one open chunk per track
 * and per LOD level, whatever the number of events.
 *
 * Threads: one thread drives a writer (calls its functions). With
 * opts.threads > 0 (offline imports), that thread only checks and queues
 * each event; `threads` worker threads do the per-track work (depth, stats,
 * LOD, chunk encoding, zstd, inserts), each owning the tracks whose id is
 * congruent to its index. Results are the same as without threads: every
 * track's events are processed in append order by one worker. Worker errors
 * (EIO, ENOMEM) surface as the writer's sticky failure on a later call.
 * Calls that read or change what workers own (tft_writer_track, _graphs,
 * _commit, _close) first wait for the workers to drain.
 */
#ifndef TFT_STORE_WRITER_H
#define TFT_STORE_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "core/model.h"
#include "core/status.h"

struct tft_writer;

/* zstd level for offline imports: much faster to compress for slightly larger
 * chunks (BENCHMARKS.md, "Store: design measurements"). */
#define TFT_IMPORT_ZSTD_LEVEL 1

struct tft_writer_opts {
	int zstd_level;          /* 0 = default (3) */
	uint32_t chunk_events;   /* events per chunk, 0 = default (4096) */
	int flush_partial;       /* commit() also writes partially filled chunks (live tracing) */
	int threads;             /* store worker threads; 0 = none (ignored with flush_partial) */
	int bulk;                /* a scratch file, deleted unless closed successfully (imports
				  * into a temporary name): no journal, no syncs until close;
				  * commit() is then no durability point (ignored with flush_partial) */
};

/* Worker threads an offline import should ask for on this machine: the
 * online CPUs (at most 4); the TFT_STORE_THREADS environment variable
 * overrides it (0 = store on the importing thread). */
int tft_writer_default_threads(void);

/*
 * Create a new session file at `path` (it must not exist). opts may be NULL.
 * Returns NULL and fills err on failure.
 */
struct tft_writer *tft_writer_open(const char *path, const struct tft_writer_opts *opts,
				   struct tft_error *err);

/* Intern a string into the session's table; UINT32_MAX on out-of-memory. */
uint32_t tft_writer_intern(struct tft_writer *w, const char *s, size_t len);
uint32_t tft_writer_intern_cstr(struct tft_writer *w, const char *s);
/* Borrow an interned string back (valid until close). */
const char *tft_writer_str(const struct tft_writer *w, uint32_t id, size_t *len);

/*
 * Register a process / track. The id fields of *p / *t are ignored; the new
 * id is returned (TFT_NONE on failure). t->process must be a known process.
 */
uint32_t tft_writer_add_process(struct tft_writer *w, const struct tft_process *p);
uint32_t tft_writer_add_track(struct tft_writer *w, const struct tft_track *t);

/*
 * Borrow the writer's copy of a process / track to change its name, rank,
 * sort index, kind ... before close (metadata often arrives after events).
 * The store-filled stats fields of a track must not be changed. NULL if id
 * is unknown.
 */
struct tft_process *tft_writer_process(struct tft_writer *w, uint32_t id);
struct tft_track *tft_writer_track(struct tft_writer *w, uint32_t id);
uint32_t tft_writer_process_count(const struct tft_writer *w);
uint32_t tft_writer_track_count(const struct tft_writer *w);

/*
 * Append one event to ev->track. Arguments are copied. Returns 0,
 * TFT_EINVAL (unknown track, or ts out of order for that track), or
 * TFT_EIO/TFT_ENOMEM.
 */
int tft_writer_append(struct tft_writer *w, const struct tft_event *ev);

/*
 * The caller appends no more events to `track`: its LOD summaries and open
 * chunks are written and its encoders freed now rather than at close, which
 * bounds memory over inputs with many tracks (an XSpace line per track).
 * Later appends to the track return TFT_EINVAL. 0 (also if already ended),
 * TFT_EINVAL for an unknown track, or the writer's failure.
 */
int tft_writer_end_track(struct tft_writer *w, uint32_t track);

/*
 * Lanes: parallel importers. An importer whose input splits into runs of
 * whole tracks (XSpace lines, RunMetadata devices) can store several runs at
 * once, one per thread: the driving thread opens one lane per thread before starting them and closes each after joining
 * its thread. A lane's thread appends through its lane only; the lane's
 * thread then does all of a track's store work itself (depth, stats, LOD,
 * encoding, zstd; inserts are serialized), whatever opts.threads says.
 *
 * A track belongs to the lane that appends to (or ends) it first, and must
 * have no events before that. While a lane is open, every thread (the
 * driving one included) may call only the lane functions, tft_writer_intern
 * and tft_writer_str (both thread-safe then); tracks, processes, flows,
 * steps, meta and commits wait until every lane is closed. The session is
 * what appending each track's events on one thread gives, except that
 * string ids follow the order in which the threads interned the strings.
 *
 * lane_open: NULL on out-of-memory or a failed writer. lane_append and
 * lane_end_track: as tft_writer_append and tft_writer_end_track (ending a
 * track twice is 0 only within its lane), plus TFT_EINVAL for a track
 * another lane claimed or that already has events (or was ended).
 * lane_close: tracks the lane did not end go back to the driving thread
 * (their open chunks written); returns the writer's failure status.
 */
struct tft_writer_lane;
struct tft_writer_lane *tft_writer_lane_open(struct tft_writer *w);
int tft_writer_lane_append(struct tft_writer_lane *l, const struct tft_event *ev);
int tft_writer_lane_end_track(struct tft_writer_lane *l, uint32_t track);
int tft_writer_lane_close(struct tft_writer_lane *l);

/*
 * For importers that store a track optimistically (a line whose events are
 * expected in order, before its header is complete). Both take a lane's
 * own track that is not ended, claiming it if no lane has it, and return
 * TFT_EINVAL otherwise. reset_track forgets everything stored for it (its
 * chunks, level of detail, statistics, order state): it is as registered.
 * name_track sets its name, tid, kind and flags; a kind or flags that change
 * how events nest (async, object, counter, TFT_TRACKF_CONCURRENT) cannot be
 * set or left this way once the lane stored an event of the track (a reset
 * track has none).
 */
int tft_writer_lane_reset_track(struct tft_writer_lane *l, uint32_t track);
int tft_writer_lane_name_track(struct tft_writer_lane *l, uint32_t track, uint32_t kind,
			       uint32_t flags, uint32_t name, int64_t tid);

/*
 * Flows are buffered and stored in compressed chunks of 16384, each sorted by
 * time (src_ts, or dst_ts when the source is unknown); in live mode commit()
 * also writes the partial chunk. TFT_EINVAL for an unknown track or string.
 */
int tft_writer_add_flow(struct tft_writer *w, const struct tft_flow *f);
/*
 * Flows written in place, for an importer with many: *f gets room for *n >= 1
 * flows, which the caller fills; tft_writer_flows_add(w, k) then adds the
 * first k <= *n of them, as k tft_writer_add_flow() calls would (up to the
 * first invalid one: TFT_EINVAL). No other writer call in between.
 */
int tft_writer_flow_room(struct tft_writer *w, struct tft_flow **f, uint32_t *n);
int tft_writer_flows_add(struct tft_writer *w, uint32_t k);
int tft_writer_add_step(struct tft_writer *w, const struct tft_step *s);
/* Steps added so far: a step's position among the session's steps is the count before it. */
uint32_t tft_writer_step_count(const struct tft_writer *w);
/*
 * Whether the calling (driving) thread may still append to `track`: not
 * ended, and no lane holds it. An input that continues an earlier input's
 * track (a worker's next steps) appends events no earlier than its last.
 */
int tft_writer_track_appendable(const struct tft_writer *w, uint32_t track);
/*
 * The process of a track, or TFT_NONE: without waiting for the store
 * workers (a track's process never changes), for scans over every track.
 */
uint32_t tft_writer_track_process(const struct tft_writer *w, uint32_t track);
/*
 * The latest end (ts + dur) of the events appended to `track` so far, as the
 * calling (driving) thread knows them (a lane's once it is closed); INT64_MIN
 * if none.
 */
int64_t tft_writer_track_end(const struct tft_writer *w, uint32_t track);

/* Session metadata (key/value text). Later values replace earlier ones. */
int tft_writer_set_meta(struct tft_writer *w, const char *key, const char *value);
/*
 * Add item to the list in key's value, items separated by sep ("kineto+xspace"),
 * unless it is listed already: what importers note of each input of a session
 * ("format", "producer"). An unset or empty value becomes item.
 */
int tft_writer_join_meta(struct tft_writer *w, const char *key, const char *item, const char *sep);
/* A meta value set so far (NULL when unset); valid until that key is set again. */
const char *tft_writer_meta(struct tft_writer *w, const char *key);
/*
 * The slots for importers' state that outlives one input, for what only the
 * session's inputs together decide (a send in one worker's file, its receive
 * in another's). One per importer concept; a new one is added here.
 */
enum tft_writer_slot {
	TFT_SLOT_RUNMETA_TMPL,  /* RunMetadata: node templates shared by inputs */
	TFT_SLOT_RUNMETA_POOL,  /* RunMetadata: the send/receive pool, matched at close */
	TFT_SLOT_XSPACE_HOSTS,  /* XSpace: the hosts seen so far */
	TFT_SLOT_COUNT
};

/*
 * Attach ctx to a slot, found again by a later input and finished at close,
 * where on_close(w, ctx) runs (slots in attach order) before the flows are
 * written (it may add flows and counts) and then free_ctx(ctx). abort()
 * only frees it. TFT_EINVAL if the slot is taken or unknown; on failure ctx
 * is not taken over.
 */
int tft_writer_attach(struct tft_writer *w, enum tft_writer_slot slot, void *ctx,
		      int (*on_close)(struct tft_writer *w, void *ctx), void (*free_ctx)(void *ctx));
/* The state attached to slot, or NULL. */
void *tft_writer_attached(const struct tft_writer *w, enum tft_writer_slot slot);

/*
 * The session's counters of lost data and other integer facts, stored as
 * integer meta values under their names (tft_counter_name(); the names are
 * the file format's, docs/file-format.md).
 */
enum tft_counter {
	TFT_COUNT_SCHEMA_VERSION,      /* "schema_version" */
	TFT_COUNT_FLOW_COUNT,          /* "flow_count" */
	TFT_COUNT_GRAPH_NODES,         /* "graph_nodes" */
	TFT_COUNT_DROPPED,             /* "dropped" */
	TFT_COUNT_UNMATCHED_FLOWS,     /* "unmatched_flows" */
	TFT_COUNT_UNCLOSED_SLICES,     /* "unclosed_slices" */
	TFT_COUNT_UNMATCHED_ENDS,      /* "unmatched_ends" */
	TFT_COUNT_SKIPPED_EVENTS,      /* "skipped_events" */
	TFT_COUNT_DROPPED_PACKETS,     /* "dropped_packets" */
	TFT_COUNT_DEVICE_TIMES_UNALIGNED, /* "device_times_unaligned" */
	TFT_COUNT_CLAMPED,             /* "clamped" */
	TFT_COUNT_IMPORT_HOLD_TIMEOUTS, /* "import_hold_timeouts" */
	TFT_COUNT_VALUES_DROPPED,      /* "values_dropped" */
	TFT_COUNT_REALTIME_OFFSET_NS,  /* "realtime_offset_ns" */
	TFT_COUNT_SESSION_START_NS,    /* "session_start_ns" */
	TFT_COUNT_IMPORTS_BESIDE,      /* "imports_beside" */
	TFT_COUNT_XSPACE_ERRORS,       /* "xspace_errors" */
	TFT_COUNT_XSPACE_WARNINGS,     /* "xspace_warnings" */
	TFT_COUNT_NUM
};

/* The meta key a counter is stored under ("dropped"); NULL for an unknown one. */
const char *tft_counter_name(enum tft_counter c);
/* Add to a counter (saturating). TFT_EINVAL for an unknown counter. */
int tft_writer_add_count(struct tft_writer *w, enum tft_counter c, int64_t delta);
/* A counter's value so far (0 when unset). */
int64_t tft_writer_count(const struct tft_writer *w, enum tft_counter c);
/*
 * A counter a runtime source names itself ("cuda_kernels", "opencl_dropped":
 * tft_rt_src_count), stored as the counters above. TFT_EINVAL for an empty key.
 */
int tft_writer_add_named_count(struct tft_writer *w, const char *key, int64_t delta);

/* Make everything appended so far durable (one SQLite transaction). */
int tft_writer_commit(struct tft_writer *w, struct tft_error *err);

/*
 * Flush all open chunks and LOD levels, write track stats, commit and close.
 * The writer is freed whatever the result. Returns 0 or a negative status.
 */
int tft_writer_close(struct tft_writer *w, struct tft_error *err);

/*
 * Whether the writer has failed (its sticky status: every later call
 * returns it): 0, or the status with err (if not NULL) saying what failed,
 * with the system's reason where SQLite had one ("insert chunk: disk I/O
 * error (File too large)"). An importer reports a store failure at the
 * input's place; a caller tells the two apart with this.
 */
int tft_writer_failure(const struct tft_writer *w, struct tft_error *err);

/* Free the writer without finalizing (the file is left as last committed). */
void tft_writer_abort(struct tft_writer *w);

/* Remove a session file and its SQLite side files (-wal, -shm, -journal); missing ones are no error. */
void tft_session_file_remove(const char *path);

/*
 * The session's graph tables (store/graph.h), owned by the writer and freed
 * at close/abort: with create, made on first use (NULL and err filled on
 * failure); without, NULL until then. Use from the thread driving the writer.
 */
struct tft_graph_tables;
struct tft_graph_tables *tft_writer_graphs(struct tft_writer *w, int create, struct tft_error *err);

#endif /* TFT_STORE_WRITER_H */
