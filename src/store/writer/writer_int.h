/* SPDX-License-Identifier: MIT */
/*
 * Private to the session writer (the files of src/store/writer/): its structs and the
 * functions its files share.
 *
 * Session writer: per-track depth assignment, stats and LOD, events encoded
 * into per-track open chunks that are compressed and inserted as they fill.
 * One SQLite write transaction stays open between commits.
 *
 * Threaded mode (opts.threads > 0): tft_writer_append() checks the event on
 * the caller's thread and copies it into the current batch of the worker
 * that owns its track; full batches are queued to that worker, which runs
 * store_event() on them. Each worker has its own store context (zstd
 * context, buffers, open-chunk budget); inserts into SQLite are serialized by
 * db_mu. A bounded pool of batches per worker keeps memory bounded: the
 * caller waits for a free batch when a worker falls behind.
 *
 * Lanes (tft_writer_lane_open): an importer's own threads store the tracks
 * they claim on their own thread, each with a store context of its own, as
 * a worker would; inserts are serialized by db_mu and interning by str_mu.
 */
#ifndef TFT_STORE_WRITER_INT_H
#define TFT_STORE_WRITER_INT_H

#include <pthread.h>
#include <sqlite3.h>
#include <stdint.h>
#include <zstd.h>

#include "core/model.h"
#include "core/status.h"
#include "store/chunk.h"
#include "store/chunk_stats.h"
#include "store/lod.h"
#include "store/schema.h"
#include "store/writer.h"


/*
 * A store context: what chunk writing needs besides the track. The writer's
 * own (main) context serves the caller's thread; each worker has one.
 */
struct wctx {
	ZSTD_CCtx *cctx; /* owned */
	struct tft_chunk_buf scratch, blob;
	uint8_t *sblob;        /* owned: a chunk's statistics, encoded (agg_write) */
	size_t cap_sblob;
	uint8_t *zblob;        /* owned: ... compressed */
	size_t cap_zblob;
	size_t open_bytes;     /* bytes buffered in the open chunks of this context's tracks */
	struct wtrack **own;   /* owned array (borrowed tracks): a worker's tracks, in first-event order */
	uint32_t nown, cap_own;
};

struct wtrack {
	struct tft_track t;   /* the public copy; stats are filled here */
	struct tft_writer *w; /* borrowed: the owner */
	struct wctx *ctx;     /* borrowed: the context that stores this track */
	struct wworker *wk;   /* borrowed: its worker, NULL without threads */
	struct tft_writer_lane *lane; /* borrowed: the lane that claimed it (set once, atomically) */
	/* A lane's track: its calls[].last_ts, kept here while the lane has it
	 * (written per event by the lane's thread: neighbouring calls[] entries
	 * belong to other lanes' threads, and would share cache lines). */
	int64_t lane_last;
	int lane_used;        /* its lane stored an event (lane_last may be INT64_MIN with events) */
	int64_t lane_max_end; /* the lane's calls[].max_end, as lane_last */
	int lane_ended;       /* ended by its lane */
	uint32_t nwritten, nstaged; /* chunks inserted into chunks / temp.lod_stage */
	int owned;            /* listed in ctx->own */
	int64_t *stack;       /* owned: ends of open slices, or lane ends */
	uint32_t nstack, cap_stack;
	/*
	 * Per-chunk statistics (store/chunk_stats.h): the open raw chunk's
	 * accumulator; written chunks' accumulators still waiting for a slice
	 * to close; on call-stack tracks, per open slice (stack[i]) where its
	 * self time goes. All owned (counter tracks have none).
	 */
	struct tft_cstats_acc *acc, *acc_wait, *acc_free;
	struct tft_cstats_sum *sum; /* the written chunks' statistics merged (table track_stats) */
	struct wopen {
		struct tft_cstats_acc *acc; /* borrowed: its chunk's accumulator */
		uint32_t entry;
		int64_t dur, child;         /* child: its direct children's time, clipped to it */
	} *open;                            /* cap_stack entries */
	struct tft_chunk_enc *enc[TFT_STORE_LEVELS]; /* owned, lazy: [0] raw, [k] LOD level k */
	uint64_t n_level[TFT_STORE_LEVELS];          /* events emitted per level */
	/*
	 * A bulk import's raw events not yet given to the LOD builder, while the
	 * track has fewer than a kept level needs (TFT_LOD_MIN_RAW_EVENTS): a
	 * shorter track keeps no level (prune_lod), so for most tracks of a many-
	 * track trace no summary is ever built, encoded or staged. Owned.
	 */
	struct tft_event *pend;
	uint32_t npend, cap_pend;
	int lod_direct;       /* the builder takes events as they come (memory pressure) */
	/* lod.quiet: the LOD levels counted (into n_level) but not encoded,
	 * predicted to be dropped (see predict_skips) */
	struct tft_lod lod;
};

/* Threaded mode: a batch of events queued to one worker. */
#define WB_EVENTS 4096u
#define WB_ARGS 16384u
#define WB_POOL 16u /* batches per worker */

struct wjob {
	struct tft_event ev; /* ev.args is rebuilt from args_off by the worker */
	struct wtrack *wt;   /* borrowed */
	uint32_t args_off;
};

struct wbatch {
	struct wbatch *next;
	uint32_t n, nargs;
	struct wjob job[WB_EVENTS];
	struct tft_arg args[WB_ARGS];
};

/*
 * The caller's thread's view of a track, kept apart from struct wtrack (which
 * the owning worker writes per event) so that the two threads never write
 * the same cache line per event.
 */
struct wcall {
	int64_t last_ts;    /* INT64_MIN before the first event; INT64_MAX once ended */
	struct wtrack *wt;  /* borrowed */
	struct wworker *wk; /* borrowed; NULL without threads */
	int used;           /* has events (an event may have ts INT64_MIN: not last_ts) */
	int64_t max_end;    /* latest end (ts + dur) of its events so far; INT64_MIN: none */
	int ended;          /* no more events (an event may have ts INT64_MAX: not last_ts) */
};

#define WPAD 128 /* bytes between fields written per event by different threads */

struct wworker {
	struct wbatch *cur;   /* owned by the caller's thread: being filled */
	char pad0[WPAD];
	/* The worker's own: */
	struct tft_writer *w; /* borrowed */
	pthread_t thread;
	int started;
	struct wctx ctx;
	char pad1[WPAD];
	/* Guarded by mu: */
	pthread_mutex_t mu;
	pthread_cond_t work;  /* worker waits: a batch queued, or stop */
	pthread_cond_t idle;  /* caller waits: a batch freed, or the queue drained */
	struct wbatch *head, *tail; /* owned: queued, oldest first */
	struct wbatch *free;  /* owned: free list */
	uint32_t nalloc;      /* batches allocated */
	int busy, stop;
	char pad2[WPAD];
};

struct meta_ent {
	char *key;  /* owned */
	char *text; /* owned; NULL for an integer value */
	int64_t ival;
	int dirty;
};

enum {
	ST_CHUNK, ST_STRING, ST_FLOW, ST_STEP, ST_TRACK, ST_PROC, ST_META, ST_LOD, ST_DEL_LEVEL,
	ST_DEL_LOD, ST_DEL_TRACK, ST_STAGE, ST_KEEP, ST_UNSTAGE_TRACK, ST_CSTATS, ST_DEL_CSTATS,
	ST_TSTATS, ST_COUNT
};

static const char *const stmt_sql[ST_COUNT] = {
	[ST_CHUNK] = "INSERT INTO chunks(track, level, t_min, t_max, n, data) VALUES(?,?,?,?,?,?)",
	[ST_STRING] = "INSERT OR REPLACE INTO strings(id, s) VALUES(?,?)",
	[ST_FLOW] = "INSERT INTO flow_chunks(n, t_min, t_max, data) VALUES(?,?,?,?)",
	[ST_STEP] = "INSERT INTO steps(idx, name, process, start_ns, dur_ns, traced)"
		    " VALUES(?,?,?,?,?,?)",
	[ST_TRACK] = "INSERT OR REPLACE INTO tracks(id, process, kind, name, tid, sort_index,"
		     " slices, instants, counters, min_ts, max_ts, max_depth, flags)"
		     " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)",
	[ST_PROC] = "INSERT OR REPLACE INTO processes(id, name, host, pid, rank, sort_index,"
		    " labels) VALUES(?,?,?,?,?,?,?)",
	[ST_META] = "INSERT OR REPLACE INTO meta(key, value) VALUES(?,?)",
	[ST_LOD] = "INSERT OR REPLACE INTO lod(track, level, gap_ns, n) VALUES(?,?,?,?)",
	[ST_DEL_LEVEL] = "DELETE FROM chunks WHERE track = ? AND level = ?",
	[ST_DEL_LOD] = "DELETE FROM lod WHERE track = ?",
	[ST_DEL_TRACK] = "DELETE FROM chunks WHERE track = ?",
	[ST_STAGE] = "INSERT INTO temp.lod_stage(track, level, t_min, t_max, n, data)"
		     " VALUES(?,?,?,?,?,?)",
	[ST_KEEP] = "INSERT INTO temp.lod_keep(track, level) VALUES(?,?)",
	[ST_UNSTAGE_TRACK] = "DELETE FROM temp.lod_stage WHERE track = ?",
	[ST_CSTATS] = "INSERT INTO chunk_stats(chunk, track, data) VALUES(?,?,?)",
	[ST_DEL_CSTATS] = "DELETE FROM chunk_stats WHERE track = ?",
	[ST_TSTATS] = "INSERT OR REPLACE INTO track_stats(track, data) VALUES(?,?)",
};

/*
 * Which levels of detail to keep is known only at close. Outside live mode,
 * LOD chunks wait in SQLite's temp database (a separate scratch file) and
 * only the kept levels are copied into the session, so dropped levels leave
 * no free pages behind.
 */
#define STAGE_SQL                                                                      \
	"CREATE TEMP TABLE lod_stage(id INTEGER PRIMARY KEY, track INTEGER, level INTEGER," \
	" t_min INTEGER, t_max INTEGER, n INTEGER, data BLOB);"                            \
	"CREATE TEMP TABLE lod_keep(track INTEGER, level INTEGER, PRIMARY KEY(track, level))" \
	" WITHOUT ROWID;"
#define UNSTAGE_SQL                                                                     \
	"SELECT s.track, s.level, s.t_min, s.t_max, s.n, s.data FROM temp.lod_stage s"      \
	" JOIN temp.lod_keep k ON k.track = s.track AND k.level = s.level"                 \
	" ORDER BY s.track, s.level, s.t_min, s.id"
#define STAGE_ZSTD_LEVEL (-1)
#define WRITEBACK_BYTES ((size_t)16 << 20)
#define TFT_WRITER_MAX_THREADS 16

struct tft_writer {
	sqlite3 *db;              /* owned */
	sqlite3_stmt *st[ST_COUNT]; /* owned */
	struct wctx main;         /* the caller's thread's store context */
	struct wworker *wk;       /* owned: nwk_alloc workers, the first nwk running (threaded mode) */
	uint32_t nwk, nwk_alloc;
	size_t open_max;          /* open-chunk bytes per context before it flushes them all */
	pthread_mutex_t db_mu;    /* threaded mode or lanes: chunk inserts, failed, errmsg */
	pthread_mutex_t str_mu;   /* lanes open: the string table */
	uint32_t nlanes;          /* lanes open (atomic; opened and closed by the driving thread) */
	int zstd_level;
	uint32_t nsteps; /* steps added: the next one's position */
	uint32_t chunk_events;
	int flush_partial;
	int bulk;   /* no journal, no syncs; fsync at close */
	char *path; /* owned; bulk mode, NULL for :memory: */
	/*
	 * Bulk mode: a descriptor of the file to start its writeback early
	 * (every WRITEBACK_BYTES of chunks), so that the one fsync at close has
	 * little left to wait for. -1 if none.
	 */
	int wb_fd;
	size_t wb_bytes; /* chunk bytes inserted since the last kick (under db_mu) */
	int failed; /* sticky error status: once set, every call returns it (atomic in threaded mode) */
	struct tft_strtab *strs; /* owned */
	uint32_t strs_written;   /* ids below this are in the strings table */
	uint32_t nstr;           /* tft_strtab_count(strs), cached for the append path (atomic with lanes) */
	struct tft_process *procs; /* owned */
	uint32_t nprocs, cap_procs;
	struct wtrack **tracks; /* owned, each owned */
	uint32_t ntracks, cap_tracks;
	struct wcall *calls;    /* owned: per track, the caller's thread's (cap_tracks entries) */
	struct meta_ent *meta; /* owned */
	uint32_t nmeta, cap_meta;
	struct tft_strtab *meta_keys; /* owned, lazy: meta[i]'s key has id i + 1 (0 is "") */
	uint64_t nflows, nflows_written; /* flows added; the count in meta "flow_count" */
	/* Flows, in the slots of a ring (see flows_submit()). */
	struct tft_flow *fbuf; /* owned: nfslot chunks of TFT_FLOW_CHUNK_FLOWS */
	struct tft_flow *fcur; /* the slot being filled: nfbuf flows */
	uint32_t nfbuf;
	uint32_t flow_par;     /* threads encoding flows; 0 until the first flow */
	struct fslot *fslot;   /* owned: nfslot */
	uint32_t nfslot;
	uint32_t fhead, fnext, ffill; /* slot sequence numbers */
	struct fhelper *fhelp; /* owned: the nfhelp running helpers */
	uint32_t nfhelp;
	int fstop;             /* the helpers exit (under fmu) */
	pthread_mutex_t fmu;   /* slot states, fnext, ffill, fstop */
	pthread_cond_t fwork, fdone;
	/* Importers' state kept until close (tft_writer_attach): per slot, and
	 * the slots in attach order (att_order[0 .. natt)). */
	struct wattach {
		void *ctx;
		int (*on_close)(struct tft_writer *w, void *ctx);
		void (*free_ctx)(void *ctx);
		int used;
	} att[TFT_SLOT_COUNT];
	uint8_t att_order[TFT_SLOT_COUNT];
	uint32_t natt;
	struct tft_graph_tables *graphs; /* owned, lazy: tft_writer_graphs() */
	char errmsg[TFT_ERROR_MSG_MAX];
};

#define FLOW_PAR_MAX 4 /* flow chunks encoded at once */

struct tft_writer_lane {
	struct tft_writer *w; /* borrowed */
	struct wctx ctx;      /* ctx.own: the tracks this lane claimed */
};
/* A job's ev.kind meaning "end this track" rather than an event. */
#define WJOB_END_TRACK 0xFFu
/* Bytes of an accumulator counted in its context's open bytes: its durations. */
#define AGG_VAL_BYTES sizeof(struct tft_cstats_val)
/* The sticky failure, read from any thread (workers set it under db_mu). */
static inline int failed_now(const struct tft_writer *w)
{
	return __atomic_load_n(&w->failed, __ATOMIC_ACQUIRE);
}

static inline int str_ok(const struct tft_writer *w, uint32_t id)
{
	return id < w->nstr;
}

/* writer.c */
void tft_wr_set_failed(struct tft_writer *w, int rc);
int tft_wr_db_fail(struct tft_writer *w, const char *what);
int tft_wr_exec_sql(struct tft_writer *w, const char *sql);
int tft_wr_step_reset(struct tft_writer *w, sqlite3_stmt *st, const char *what);
int tft_wr_report(struct tft_writer *w, struct tft_error *err, int rc);
void tft_wr_ctx_fini(struct wctx *c);
void tft_wr_free(struct tft_writer *w);
/* track.c */
int tft_wr_write_chunk(struct tft_writer *w, struct wctx *c, uint32_t track, int level,
		       const struct tft_chunk_enc *e, sqlite3_stmt *st, int zlevel, int64_t *rowid);
void tft_wr_agg_free_all(struct wtrack *wt);
int tft_wr_agg_write_sum(struct tft_writer *w, struct wtrack *wt);
int tft_wr_agg_end(struct tft_writer *w, struct wtrack *wt);
void tft_wr_agg_forget(struct wtrack *wt);
int tft_wr_flush_track(struct tft_writer *w, struct wtrack *wt, int release);
int tft_wr_flush_all(struct tft_writer *w, int release);
void tft_wr_lod_forget(struct wtrack *wt);
int tft_wr_lod_end(struct tft_writer *w, struct wtrack *wt);
__attribute__((noinline)) int tft_wr_store_job(struct tft_writer *w, struct wtrack *wt,
					       const struct tft_event *ev);
int tft_wr_end_track(struct tft_writer *w, struct wtrack *wt);
/* lanes.c */
int tft_wr_lane_claim(struct tft_writer_lane *l, struct wtrack *wt, struct wcall *c);
/* workers.c */
struct wbatch *tft_wr_batch_get(struct wworker *k);
void tft_wr_batch_submit(struct wworker *k, struct wbatch *b);
int tft_wr_sync(struct tft_writer *w);
int tft_wr_workers_start(struct tft_writer *w, uint32_t n);
void tft_wr_workers_stop(struct tft_writer *w);
/* flow_ring.c */
void tft_wr_flows_fini(struct tft_writer *w);
int tft_wr_flush_flows(struct tft_writer *w);
/* meta.c */
int tft_wr_close_attached(struct tft_writer *w);

#endif /* TFT_STORE_WRITER_INT_H */
