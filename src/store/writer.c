/* SPDX-License-Identifier: MIT */
/*
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
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "core/grow.h"
#include "core/strtab.h"
#include "store/chunk.h"
#include "store/chunk_stats.h"
#include "store/lod.h"
#include "store/schema.h"
#include "store/wc_vfs.h"
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
	struct wattach *att;   /* owned: importers' state kept until close (tft_writer_attach) */
	uint32_t natt, cap_att;
	char errmsg[TFT_ERROR_MSG_MAX];
};

#define FLOW_PAR_MAX 4 /* flow chunks encoded at once */

struct wattach {
	char *name;
	void *ctx;
	int (*on_close)(struct tft_writer *w, void *ctx);
	void (*free_ctx)(void *ctx);
};

/* ---- small helpers -------------------------------------------------------------- */

/* The sticky failure, read from any thread (workers set it under db_mu). */
static inline int failed_now(const struct tft_writer *w)
{
	return __atomic_load_n(&w->failed, __ATOMIC_ACQUIRE);
}

static void set_failed(struct tft_writer *w, int rc)
{
	if (!failed_now(w))
		__atomic_store_n(&w->failed, rc, __ATOMIC_RELEASE);
}

static int db_fail(struct tft_writer *w, const char *what)
{
	int sys = sqlite3_system_errno(w->db); /* why the file could not be written: ENOSPC, EFBIG */

	snprintf(w->errmsg, sizeof(w->errmsg), "%s: %s%s%s%s", what, sqlite3_errmsg(w->db),
		 sys ? " (" : "", sys ? strerror(sys) : "", sys ? ")" : "");
	set_failed(w, TFT_EIO);
	return w->failed;
}

static int exec_sql(struct tft_writer *w, const char *sql)
{
	if (sqlite3_exec(w->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return db_fail(w, sql);
	return 0;
}

static int step_reset(struct tft_writer *w, sqlite3_stmt *st, const char *what)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (rc != SQLITE_DONE)
		return db_fail(w, what);
	return 0;
}

static int report(struct tft_writer *w, struct tft_error *err, int rc)
{
	if (rc)
		tft_error_set(err, rc, -1, "%s", w->errmsg[0] ? w->errmsg : tft_strerror(rc));
	return rc;
}

static inline int str_ok(const struct tft_writer *w, uint32_t id)
{
	return id < w->nstr;
}

/* ---- open ------------------------------------------------------------------------- */

static void ctx_fini(struct wctx *c)
{
	if (c->cctx)
		ZSTD_freeCCtx(c->cctx);
	tft_chunk_buf_free(&c->scratch);
	tft_chunk_buf_free(&c->blob);
	free(c->sblob);
	free(c->zblob);
	free(c->own);
	memset(c, 0, sizeof(*c));
}

static void workers_stop(struct tft_writer *w);
static int workers_start(struct tft_writer *w, uint32_t n);
static void flows_fini(struct tft_writer *w);

static void agg_free_all(struct wtrack *wt);

static void writer_free(struct tft_writer *w)
{
	workers_stop(w);
	for (int i = 0; i < ST_COUNT; i++)
		sqlite3_finalize(w->st[i]);
	if (w->db)
		sqlite3_close(w->db);
	ctx_fini(&w->main);
	for (uint32_t i = 0; i < w->ntracks; i++) {
		struct wtrack *wt = w->tracks[i];
		for (int k = 0; k < TFT_STORE_LEVELS; k++) {
			if (wt->enc[k]) {
				tft_chunk_enc_fini(wt->enc[k]);
				free(wt->enc[k]);
			}
		}
		tft_lod_fini(&wt->lod);
		free(wt->pend);
		free(wt->stack);
		free(wt->open);
		agg_free_all(wt);
		free(wt);
	}
	free(w->tracks);
	free(w->calls);
	for (uint32_t i = 0; i < w->nmeta; i++) {
		free(w->meta[i].key);
		free(w->meta[i].text);
	}
	free(w->meta);
	tft_strtab_destroy(w->meta_keys);
	free(w->procs);
	flows_fini(w);
	for (uint32_t i = 0; i < w->natt; i++) {
		if (w->att[i].free_ctx)
			w->att[i].free_ctx(w->att[i].ctx);
		free(w->att[i].name);
	}
	free(w->att);
	tft_strtab_destroy(w->strs);
	pthread_mutex_destroy(&w->db_mu);
	pthread_mutex_destroy(&w->str_mu);
	free(w->path);
	if (w->wb_fd >= 0)
		close(w->wb_fd);
	free(w);
}

struct tft_writer *tft_writer_open(const char *path, const struct tft_writer_opts *opts,
				   struct tft_error *err)
{
	struct tft_writer *w;
	int is_mem, fd, threads, bulk;

	if (!path || !*path) {
		tft_error_set(err, TFT_EINVAL, -1, "no session path");
		return NULL;
	}
	is_mem = strcmp(path, ":memory:") == 0;
	if (!is_mem) {
		/* Claim the name atomically: the session must be a new file. */
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd < 0) {
			int e = errno;
			tft_error_set(err, e == EEXIST ? TFT_EINVAL : TFT_EIO, -1, "%s",
				      e == EEXIST ? "session file already exists" : strerror(e));
			tft_error_set_file(err, path);
			return NULL;
		}
		close(fd);
	}
	w = calloc(1, sizeof(*w));
	if (!w) {
		tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
		goto fail_unlink;
	}
	pthread_mutex_init(&w->db_mu, NULL);
	pthread_mutex_init(&w->str_mu, NULL);
	w->zstd_level = opts && opts->zstd_level ? opts->zstd_level : 3;
	if (w->zstd_level > ZSTD_maxCLevel())
		w->zstd_level = ZSTD_maxCLevel();
	w->chunk_events = opts && opts->chunk_events ? opts->chunk_events
						     : TFT_STORE_DEFAULT_CHUNK_EVENTS;
	if (w->chunk_events > TFT_STORE_MAX_CHUNK_EVENTS)
		w->chunk_events = TFT_STORE_MAX_CHUNK_EVENTS;
	w->flush_partial = opts ? opts->flush_partial : 0;
	w->open_max = TFT_STORE_OPEN_BYTES_MAX;
	bulk = opts && opts->bulk && !w->flush_partial;
	w->bulk = bulk;
	w->wb_fd = -1;
	if (bulk && !is_mem && !(w->path = strdup(path))) {
		tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
		goto fail;
	}
	if (w->path)
		w->wb_fd = open(path, O_RDONLY | O_CLOEXEC); /* -1: no early writeback, no harm */
	threads = opts && !w->flush_partial && opts->threads > 0 ? opts->threads : 0;
	if (threads > TFT_WRITER_MAX_THREADS)
		threads = TFT_WRITER_MAX_THREADS;
	w->strs = tft_strtab_create();
	w->nstr = w->strs ? tft_strtab_count(w->strs) : 0;
	w->main.cctx = ZSTD_createCCtx();
	if (!w->strs || !w->main.cctx) {
		tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
		goto fail;
	}
	/*
	 * Serialized: with workers, chunk inserts and the caller's statements share it.
	 * Bulk: the pages go out through the write-combining VFS (store/wc_vfs.h):
	 * 64 KB writes instead of one per 4 KB page (a 300 MB XSpace import:
	 * 15,800 -> 1,200 pwrites for its 64 MB, ~40 ms less CPU), the same file.
	 * The blobs' writeback kicks below still find the pages in the file, at
	 * most the window's 1 MB later. Not live mode: its readers follow the
	 * file as it grows, and a live session is written a little at a time.
	 * If the VFS cannot be registered, the default one writes the same file.
	 */
	if (sqlite3_open_v2(path, &w->db,
			    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
				    (threads ? SQLITE_OPEN_FULLMUTEX : 0),
			    bulk && !is_mem && tft_wc_vfs_register() == 0 ? TFT_WC_VFS_NAME : NULL) !=
	    SQLITE_OK) {
		tft_error_set(err, TFT_EIO, -1, "cannot open session: %s",
			      w->db ? sqlite3_errmsg(w->db) : "out of memory");
		goto fail;
	}
	/* page_size must precede the first table; WAL lets readers follow a live writer. */
	/* Bulk: pages go to the file once (no WAL copy); the file is only kept if close succeeds. */
	/*
	 * Bulk: a 2 MB page cache (16 MB live). Without a journal, the pages
	 * that do not fit are written as the import goes, by the threads that
	 * insert, while the input is still being read; what the cache holds is
	 * written by the final COMMIT, on one thread with the others idle (16 MB
	 * cost ~18 ms of CPU there, and the fsync after it waited for them). The
	 * session is the same, byte for byte; the pages written +0.2%.
	 */
	if (exec_sql(w, "PRAGMA page_size=4096") ||
	    exec_sql(w, bulk ? "PRAGMA journal_mode=OFF" : "PRAGMA journal_mode=WAL") ||
	    exec_sql(w, bulk ? "PRAGMA synchronous=OFF" : "PRAGMA synchronous=NORMAL") ||
	    exec_sql(w, bulk ? "PRAGMA cache_size=-2048" : "PRAGMA cache_size=-16384") ||
	    exec_sql(w, "PRAGMA temp_store=FILE") || exec_sql(w, "BEGIN") ||
	    exec_sql(w, TFT_SCHEMA_SQL) || (!w->flush_partial && exec_sql(w, STAGE_SQL))) {
		report(w, err, w->failed);
		goto fail;
	}
	for (int i = 0; i < ST_COUNT; i++) {
		if (w->flush_partial && (i == ST_STAGE || i == ST_KEEP || i == ST_UNSTAGE_TRACK))
			continue; /* live mode writes LOD chunks straight into the session */
		if (sqlite3_prepare_v3(w->db, stmt_sql[i], -1, SQLITE_PREPARE_PERSISTENT, &w->st[i],
				       NULL) != SQLITE_OK) {
			report(w, err, db_fail(w, "prepare"));
			goto fail;
		}
	}
	if (tft_writer_add_count(w, "schema_version", TFT_SCHEMA_VERSION) ||
	    tft_writer_set_meta(w, "created_by", "tftracer " TFT_VERSION_STRING) ||
	    tft_writer_commit(w, err))
		goto fail;
	if (threads && workers_start(w, (uint32_t)threads)) {
		tft_error_set(err, TFT_ENOMEM, -1,
			      "cannot start store threads (TFT_STORE_THREADS=0 stores on this thread)");
		goto fail;
	}
	return w;
fail:
	writer_free(w);
fail_unlink:
	if (!is_mem)
		tft_session_file_remove(path);
	tft_error_set_file(err, path);
	return NULL;
}

void tft_session_file_remove(const char *path)
{
	static const char *const sides[] = { "-wal", "-shm", "-journal" };
	char side[4200];

	unlink(path);
	for (size_t i = 0; i < sizeof(sides) / sizeof(sides[0]); i++)
		if ((size_t)snprintf(side, sizeof(side), "%s%s", path, sides[i]) < sizeof(side))
			unlink(side);
}

/* ---- strings, processes, tracks ---------------------------------------------------- */

uint32_t tft_writer_intern(struct tft_writer *w, const char *s, size_t len)
{
	int locked = __atomic_load_n(&w->nlanes, __ATOMIC_RELAXED) != 0;
	uint32_t id;

	if (locked)
		pthread_mutex_lock(&w->str_mu);
	id = tft_strtab_intern(w->strs, s ? s : "", s ? len : 0);
	__atomic_store_n(&w->nstr, tft_strtab_count(w->strs), __ATOMIC_RELEASE);
	if (locked)
		pthread_mutex_unlock(&w->str_mu);
	return id;
}

uint32_t tft_writer_intern_cstr(struct tft_writer *w, const char *s)
{
	return tft_writer_intern(w, s, s ? strlen(s) : 0);
}

const char *tft_writer_str(const struct tft_writer *w, uint32_t id, size_t *len)
{
	struct tft_writer *mw = (struct tft_writer *)w; /* the lock only */
	int locked = __atomic_load_n(&w->nlanes, __ATOMIC_RELAXED) != 0;
	const char *s;

	if (locked)
		pthread_mutex_lock(&mw->str_mu);
	s = tft_strtab_get(w->strs, id, len); /* the bytes never move; the index may */
	if (locked)
		pthread_mutex_unlock(&mw->str_mu);
	return s;
}

uint32_t tft_writer_add_process(struct tft_writer *w, const struct tft_process *p)
{
	if (!str_ok(w, p->name) || !str_ok(w, p->host) || !str_ok(w, p->labels) ||
	    w->nprocs >= TFT_NONE - 1)
		return TFT_NONE;
	if (w->nprocs == w->cap_procs) {
		uint32_t ncap = w->cap_procs ? w->cap_procs * 2 : 16;
		struct tft_process *np = realloc(w->procs, (size_t)ncap * sizeof(*np));
		if (!np)
			return TFT_NONE;
		w->procs = np;
		w->cap_procs = ncap;
	}
	w->procs[w->nprocs] = *p;
	w->procs[w->nprocs].id = w->nprocs;
	return w->nprocs++;
}

uint32_t tft_writer_add_track(struct tft_writer *w, const struct tft_track *t)
{
	struct wtrack *wt;

	if (t->process >= w->nprocs || t->kind < 1 || t->kind > TFT_TRACK_KIND_MAX ||
	    !str_ok(w, t->name) || w->ntracks >= TFT_NONE - 1)
		return TFT_NONE;
	if (w->ntracks == w->cap_tracks) {
		uint32_t ncap = w->cap_tracks ? w->cap_tracks * 2 : 16;
		struct wtrack **nt = realloc(w->tracks, (size_t)ncap * sizeof(*nt));
		struct wcall *nc;
		if (!nt)
			return TFT_NONE;
		w->tracks = nt;
		nc = realloc(w->calls, (size_t)ncap * sizeof(*nc));
		if (!nc)
			return TFT_NONE;
		w->calls = nc;
		w->cap_tracks = ncap;
	}
	wt = calloc(1, sizeof(*wt));
	if (!wt)
		return TFT_NONE;
	wt->t = *t;
	wt->t.id = w->ntracks;
	wt->t.slices = wt->t.instants = wt->t.counters = 0;
	wt->t.min_ts_ns = INT64_MAX;
	wt->t.max_ts_ns = INT64_MIN;
	wt->t.max_depth = 0;
	wt->w = w;
	wt->ctx = &w->main;
	if (w->nwk) {
		wt->wk = &w->wk[w->ntracks % w->nwk];
		wt->ctx = &wt->wk->ctx;
	}
	w->calls[w->ntracks] = (struct wcall){ .last_ts = INT64_MIN, .max_end = INT64_MIN, .wt = wt,
					       .wk = wt->wk };
	tft_lod_init(&wt->lod, wt->t.id);
	wt->lod.count = wt->n_level;
	w->tracks[w->ntracks] = wt;
	return w->ntracks++;
}

struct tft_process *tft_writer_process(struct tft_writer *w, uint32_t id)
{
	return id < w->nprocs ? &w->procs[id] : NULL;
}

static int writer_sync(struct tft_writer *w);

struct tft_track *tft_writer_track(struct tft_writer *w, uint32_t id)
{
	if (id >= w->ntracks)
		return NULL;
	writer_sync(w); /* workers read the kind; the caller may change it */
	return &w->tracks[id]->t;
}

uint32_t tft_writer_process_count(const struct tft_writer *w)
{
	return w->nprocs;
}

uint32_t tft_writer_track_count(const struct tft_writer *w)
{
	return w->ntracks;
}

/* ---- chunks ------------------------------------------------------------------------ */

/* Compress e with c's state (outside the lock) and insert it with statement
 * st (chunks or the LOD stage). */
static int write_chunk(struct tft_writer *w, struct wctx *c, uint32_t track, int level,
		       const struct tft_chunk_enc *e, sqlite3_stmt *st, int zlevel, int64_t *rowid)
{
	int rc = tft_chunk_enc_finish(e, c->cctx, zlevel, &c->scratch, &c->blob);
	int locked = w->nwk || __atomic_load_n(&w->nlanes, __ATOMIC_RELAXED), kick = 0;

	if (locked)
		pthread_mutex_lock(&w->db_mu);
	if (rc) {
		snprintf(w->errmsg, sizeof(w->errmsg), "chunk compression failed");
		set_failed(w, rc);
	} else {
		sqlite3_bind_int64(st, 1, track);
		sqlite3_bind_int(st, 2, level);
		sqlite3_bind_int64(st, 3, e->t_min);
		sqlite3_bind_int64(st, 4, e->t_max);
		sqlite3_bind_int64(st, 5, e->n);
		sqlite3_bind_blob(st, 6, c->blob.p, (int)c->blob.len, SQLITE_STATIC);
		rc = step_reset(w, st, "insert chunk");
		if (rowid)
			*rowid = sqlite3_last_insert_rowid(w->db);
		w->wb_bytes += c->blob.len;
		kick = w->wb_fd >= 0 && w->wb_bytes >= WRITEBACK_BYTES;
		if (kick)
			w->wb_bytes = 0;
	}
	if (locked)
		pthread_mutex_unlock(&w->db_mu);
	/* Start writing what SQLite has written so far (outside the lock: it
	 * may wait for the device queue). */
	if (kick)
		(void)sync_file_range(w->wb_fd, 0, 0, SYNC_FILE_RANGE_WRITE);
	return rc;
}

/* ---- per-chunk statistics (store/chunk_stats.h) ------------------------------------------- */

/* Bytes of an accumulator counted in its context's open bytes: its durations. */
#define AGG_VAL_BYTES sizeof(struct tft_cstats_val)

static void agg_recycle(struct wtrack *wt, struct tft_cstats_acc *a)
{
	wt->ctx->open_bytes -= (size_t)a->nv * AGG_VAL_BYTES;
	if (!wt->acc_free) {
		tft_cstats_acc_reset(a);
		wt->acc_free = a; /* one kept for the next chunk */
	} else {
		tft_cstats_acc_fini(a);
		free(a);
	}
}

static void agg_free_all(struct wtrack *wt)
{
	struct tft_cstats_acc *lists[3] = { wt->acc, wt->acc_wait, wt->acc_free };

	for (int i = 0; i < 3; i++) {
		for (struct tft_cstats_acc *a = lists[i], *next; a; a = next) {
			next = i == 1 ? a->next : NULL;
			tft_cstats_acc_fini(a);
			free(a);
		}
	}
	wt->acc = wt->acc_wait = wt->acc_free = NULL;
	tft_cstats_sum_free(wt->sum);
	wt->sum = NULL;
}

/* The open raw chunk's accumulator, created with its first event. NULL: out of memory. */
static __attribute__((noinline)) struct tft_cstats_acc *agg_new(struct wtrack *wt)
{
	struct tft_cstats_acc *a = wt->acc_free;

	if (a) {
		wt->acc_free = NULL;
	} else if ((a = malloc(sizeof(*a)))) {
		tft_cstats_acc_init(a);
	}
	wt->acc = a;
	return a;
}

/* Compress c->sblob[0..len) and insert it with st (?1 = id, ?2 = track when two_keys). */
static int stats_insert(struct tft_writer *w, struct wctx *c, size_t len, int rc, sqlite3_stmt *st,
			int64_t id, uint32_t track, int two_keys, const char *what)
{
	int locked = w->nwk || __atomic_load_n(&w->nlanes, __ATOMIC_RELAXED);
	size_t zlen = 0, bound;

	if (!rc) {
		bound = ZSTD_compressBound(len);
		if (bound > c->cap_zblob) {
			uint8_t *nz = realloc(c->zblob, bound);
			if (!nz)
				rc = TFT_ENOMEM;
			else
				c->zblob = nz, c->cap_zblob = bound;
		}
	}
	if (!rc) {
		zlen = ZSTD_compressCCtx(c->cctx, c->zblob, c->cap_zblob, c->sblob, len,
					 TFT_IMPORT_ZSTD_LEVEL);
		if (ZSTD_isError(zlen))
			rc = TFT_ENOMEM;
	}
	if (locked)
		pthread_mutex_lock(&w->db_mu);
	if (rc) {
		snprintf(w->errmsg, sizeof(w->errmsg), "%s: %s", what, tft_strerror(rc));
		set_failed(w, rc);
	} else {
		sqlite3_bind_int64(st, 1, id);
		if (two_keys)
			sqlite3_bind_int64(st, 2, track);
		sqlite3_bind_blob(st, two_keys ? 3 : 2, c->zblob, (int)zlen, SQLITE_STATIC);
		rc = step_reset(w, st, what);
	}
	if (locked)
		pthread_mutex_unlock(&w->db_mu);
	return rc;
}

/* Encode, compress and insert a complete accumulator (its chunk written, no slice open). */
static int agg_write(struct tft_writer *w, struct wtrack *wt, struct tft_cstats_acc *a)
{
	struct wctx *c = wt->ctx;
	size_t len = 0;
	int rc = tft_cstats_acc_encode(a, &c->sblob, &c->cap_sblob, &len);

	if (!rc && !wt->sum && !(wt->sum = tft_cstats_sum_new()))
		rc = TFT_ENOMEM;
	if (!rc)
		rc = tft_cstats_sum_add(wt->sum, a);
	rc = stats_insert(w, c, len, rc, w->st[ST_CSTATS], a->chunk, wt->t.id, 1,
			  "insert chunk statistics");
	agg_recycle(wt, a);
	return rc;
}

/* The track's statistics, merged from its chunks' (after the last one is written). */
static int agg_write_sum(struct tft_writer *w, struct wtrack *wt)
{
	struct wctx *c = wt->ctx;
	size_t len = 0;
	int rc;

	if (!wt->sum)
		return 0;
	rc = tft_cstats_sum_encode(wt->sum, &c->sblob, &c->cap_sblob, &len);
	rc = stats_insert(w, c, len, rc, w->st[ST_TSTATS], wt->t.id, 0, 0, "insert track statistics");
	tft_cstats_sum_free(wt->sum);
	wt->sum = NULL;
	return rc;
}

/* The raw chunk whose events `wt->acc` holds was written as row `rowid`. */
static int agg_chunk_written(struct tft_writer *w, struct wtrack *wt, int64_t rowid)
{
	struct tft_cstats_acc *a = wt->acc;

	if (!a)
		return 0; /* a counter track's */
	wt->acc = NULL;
	a->chunk = rowid;
	if (a->open == 0)
		return agg_write(w, wt, a);
	a->next = wt->acc_wait; /* its open slices close later */
	wt->acc_wait = a;
	return 0;
}

/* The slice open at stack[i] closed: its self time is known. */
static int agg_close(struct tft_writer *w, struct wtrack *wt, uint32_t i)
{
	struct wopen *o = &wt->open[i];
	struct tft_cstats_acc *a = o->acc;

	/* (children overlap only at the depth cap, where their sum may pass the duration) */
	tft_cstats_acc_self(a, o->entry, o->child < o->dur ? o->dur - o->child : 0);
	if (--a->open || a->chunk < 0)
		return 0;
	for (struct tft_cstats_acc **pp = &wt->acc_wait; *pp; pp = &(*pp)->next) {
		if (*pp == a) {
			*pp = a->next;
			break;
		}
	}
	return agg_write(w, wt, a);
}

/* Every slice still open closes (the track ends): its chunks' statistics complete. */
static int agg_end(struct tft_writer *w, struct wtrack *wt)
{
	int rc = 0;

	if (!wt->open)
		return 0;
	while (wt->nstack && !rc)
		rc = agg_close(w, wt, --wt->nstack);
	return rc;
}

/* A track forgotten (tft_writer_lane_reset_track): its statistics too. */
static void agg_forget(struct wtrack *wt)
{
	struct tft_cstats_acc *keep = wt->acc_free;

	wt->acc_free = NULL;
	if (wt->acc)
		wt->ctx->open_bytes -= (size_t)wt->acc->nv * AGG_VAL_BYTES;
	for (struct tft_cstats_acc *a = wt->acc_wait; a; a = a->next)
		wt->ctx->open_bytes -= (size_t)a->nv * AGG_VAL_BYTES;
	agg_free_all(wt);
	wt->acc_free = keep;
	if (keep)
		tft_cstats_acc_reset(keep);
}

/*
 * Levels whose count is already well past the keep rule's threshold (a
 * quarter of the finer kept level) stop being encoded; they are still counted
 * and still feed coarser levels. If the final counts keep such a level after
 * all, close() rebuilds it from the raw chunks, so the result is exact.
 */
#define SKIP_MIN_EVENTS 4096

/* The levels to make quiet, given the events per level so far (counts[0]: raw). */
static uint32_t predict_quiet(const uint64_t *counts)
{
	uint64_t finer = counts[0];
	uint32_t quiet = 0;

	if (finer < SKIP_MIN_EVENTS)
		return 0;
	for (int k = 1; k < TFT_STORE_LEVELS; k++) {
		uint64_t n = counts[k];
		if (n <= finer / TFT_LOD_KEEP_DIV) {
			finer = n;
			continue;
		}
		/* skip from 1.2x the threshold on */
		if (n * 5 * TFT_LOD_KEEP_DIV >= finer * 6)
			quiet |= 1u << k;
	}
	return quiet;
}

static void predict_skips(struct tft_writer *w, struct wtrack *wt)
{
	uint32_t quiet;

	if (w->flush_partial)
		return;
	quiet = predict_quiet(wt->n_level) & ~wt->lod.quiet;
	for (int k = 1; k < TFT_STORE_LEVELS; k++) {
		if (!(quiet & (1u << k)))
			continue;
		wt->lod.quiet |= 1u << k;
		if (wt->enc[k]) {
			wt->ctx->open_bytes -= wt->enc[k]->bytes;
			tft_chunk_enc_reset(wt->enc[k], 1);
		}
	}
}

static int flush_chunk(struct tft_writer *w, struct wtrack *wt, int level, int release)
{
	struct tft_chunk_enc *e = wt->enc[level];
	int staged = level > 0 && !w->flush_partial;
	int64_t rowid = -1;
	int rc;

	if (!e || e->n == 0) {
		if (e && release)
			tft_chunk_enc_reset(e, 1);
		return 0;
	}
	/* Staged LOD chunks are compressed fast: most are dropped at close, the
	 * kept ones are recompressed at the session's level then. */
	rc = write_chunk(w, wt->ctx, wt->t.id, level, e, w->st[staged ? ST_STAGE : ST_CHUNK],
			 staged ? STAGE_ZSTD_LEVEL : w->zstd_level, level == 0 ? &rowid : NULL);
	if (rc)
		return rc;
	if (staged)
		wt->nstaged++;
	else
		wt->nwritten++;
	wt->ctx->open_bytes -= e->bytes;
	tft_chunk_enc_reset(e, release);
	if (level == 0) {
		predict_skips(w, wt);
		return agg_chunk_written(w, wt, rowid);
	}
	return 0;
}

static int lod_replay(struct tft_writer *w, struct wtrack *wt, int crossing);

static int flush_track(struct tft_writer *w, struct wtrack *wt, int release)
{
	/* Memory pressure: the held-back events go to the LOD builder now. */
	if (wt->npend) {
		int rc = lod_replay(w, wt, 0);
		if (rc)
			return rc;
	}
	for (int k = 0; k < TFT_STORE_LEVELS; k++) {
		int rc = flush_chunk(w, wt, k, release);
		if (rc)
			return rc;
	}
	return 0;
}

/* Every track; from the caller's thread with the workers drained. */
static int flush_all(struct tft_writer *w, int release)
{
	for (uint32_t i = 0; i < w->ntracks; i++) {
		int rc = flush_track(w, w->tracks[i], release);
		if (rc)
			return rc;
	}
	return 0;
}

/* The open chunks of c's tracks are over budget: write them all. */
static int flush_ctx(struct tft_writer *w, struct wctx *c)
{
	if (c == &w->main) {
		/* Its tracks: every track without workers or lanes, else those handed back. */
		for (uint32_t i = 0; i < w->ntracks; i++) {
			int rc = w->tracks[i]->ctx == c ? flush_track(w, w->tracks[i], 1) : 0;
			if (rc)
				return rc;
		}
		return 0;
	}
	for (uint32_t i = 0; i < c->nown; i++) {
		int rc = flush_track(w, c->own[i], 1);
		if (rc)
			return rc;
	}
	return 0;
}

/* The first event of (track, level): its encoder. NULL on ENOMEM. */
static __attribute__((noinline, cold)) struct tft_chunk_enc *enc_new(struct wtrack *wt, int level)
{
	struct tft_chunk_enc *e = malloc(sizeof(*e));

	if (e) {
		tft_chunk_enc_init(e);
		wt->enc[level] = e;
	}
	return e;
}

/* Add ev to the open chunk of (track, level); write the chunk when full.
 * Inline: once per raw event and per encoded summary event. */
static inline int enc_add(struct tft_writer *w, struct wtrack *wt, int level,
			  const struct tft_event *ev)
{
	struct tft_chunk_enc *e = wt->enc[level];
	size_t before;
	int rc;

	if (tft_unlikely(!e) && !(e = enc_new(wt, level)))
		return TFT_ENOMEM;
	before = e->bytes;
	rc = tft_chunk_enc_add(e, ev);
	if (tft_unlikely(rc))
		return rc;
	wt->ctx->open_bytes += e->bytes - before;
	wt->n_level[level]++; /* before the flush: predict_skips() reads it */
	if (tft_unlikely(tft_chunk_enc_is_full(e, w->chunk_events)))
		return flush_chunk(w, wt, level, 0);
	return 0;
}

static int emit_lod(void *ctx, int level, const struct tft_event *ev);

static int emit_none(void *ctx, int level, const struct tft_event *ev)
{
	(void)ctx;
	(void)level;
	(void)ev;
	return TFT_EINVAL; /* every level is quiet: never called */
}

/*
 * The held-back raw events into the LOD builder, in order; from now on as
 * they come. `crossing`: the next event gives the track enough raw events
 * for a kept level, and its chunk flush will predict which levels to skip
 * (predict_skips) from the counts so far. Those counts come first from a
 * builder that only counts, so that the levels it would skip are quiet from
 * the start and their summaries of the held-back part are never encoded (they
 * would be dropped at that flush).
 */
static int lod_replay(struct tft_writer *w, struct wtrack *wt, int crossing)
{
	struct tft_event *p = wt->pend;
	uint32_t n = wt->npend;
	int rc = 0;

	wt->pend = NULL;
	wt->npend = wt->cap_pend = 0;
	wt->lod_direct = 1;
	wt->ctx->open_bytes -= (size_t)n * sizeof(*p);
	if (crossing && !w->flush_partial && wt->lod.quiet == 0) {
		uint64_t counts[TFT_STORE_LEVELS] = { 0 };
		struct tft_lod c;

		tft_lod_init(&c, wt->t.id);
		c.quiet = ~0u;
		c.count = counts;
		for (uint32_t i = 0; i < n && !rc; i++)
			rc = tft_lod_add(&c, &p[i], emit_none, NULL);
		tft_lod_fini(&c);
		counts[0] = wt->n_level[0] + 1; /* as at the next event's flush */
		if (!rc)
			wt->lod.quiet = predict_quiet(counts);
	}
	for (uint32_t i = 0; i < n && !rc; i++)
		rc = tft_lod_add(&wt->lod, &p[i], emit_lod, wt);
	free(p);
	if (rc && failed_now(w))
		rc = failed_now(w);
	return rc;
}

/* A track that ends short of a kept level: its held-back events are simply dropped. */
static void lod_forget(struct wtrack *wt)
{
	wt->ctx->open_bytes -= (size_t)wt->npend * sizeof(*wt->pend);
	free(wt->pend);
	wt->pend = NULL;
	wt->npend = wt->cap_pend = 0;
}

/* The track's last events: its open LOD blocks out, its held-back events dropped if short. */
static int lod_end(struct tft_writer *w, struct wtrack *wt)
{
	int rc;

	if (wt->n_level[0] < TFT_LOD_MIN_RAW_EVENTS)
		lod_forget(wt);
	rc = tft_lod_flush(&wt->lod, emit_lod, wt);
	return rc && failed_now(w) ? failed_now(w) : rc;
}

/* A summary event of a level that is not quiet (the LOD builder counts those). */
static int emit_lod(void *ctx, int level, const struct tft_event *ev)
{
	struct wtrack *wt = ctx;

	return enc_add(wt->w, wt, level, ev);
}

/* ---- append ------------------------------------------------------------------------ */

/* The args of an event with nargs > 0 (nstr: the strings interned so far). */
static inline int args_ok(uint32_t nstr, const struct tft_event *ev)
{
	const struct tft_arg *a = ev->args, *end = a + ev->nargs;

	if (!a)
		return 0;
	for (; a < end; a++) {
		if (a->key >= nstr)
			return 0;
		/* NULL .. DOUBLE hold no string: one compare for them */
		if (a->type > TFT_ARG_DOUBLE &&
		    (a->type > TFT_ARG_JSON || a->v.str >= nstr))
			return 0;
	}
	return 1;
}

static int grow_stack(struct wtrack *wt)
{
	uint32_t ncap = wt->cap_stack ? wt->cap_stack * 2 : 16;
	int64_t *ns;

	if (ncap > TFT_STORE_MAX_DEPTH)
		ncap = TFT_STORE_MAX_DEPTH;
	ns = realloc(wt->stack, (size_t)ncap * sizeof(*ns));
	if (!ns)
		return TFT_ENOMEM;
	wt->stack = ns;
	if (tft_track_nests(wt->t.kind, wt->t.flags)) {
		struct wopen *no = realloc(wt->open, (size_t)ncap * sizeof(*no));
		if (!no)
			return TFT_ENOMEM;
		wt->open = no;
	}
	wt->cap_stack = ncap;
	return 0;
}

/*
 * Store one checked event of wt: depth, encoding, stats, LOD. Runs on the
 * thread that owns wt's context (a worker, or the caller without threads).
 * Inline in the two append paths, where the call costs more than the stats
 * it keeps; the workers call it through store_job().
 */
static inline __attribute__((always_inline)) int store_event(struct tft_writer *w, struct wtrack *wt,
							     const struct tft_event *ev)
{
	struct tft_event e;
	int64_t end = ev->ts_ns + ev->dur_ns; /* checked by the caller */
	uint32_t depth = 0;
	int push = 0, lane = -1, rc;

	if (tft_unlikely(wt->wk && !wt->owned)) {
		struct wctx *c = wt->ctx;
		if (tft_grow((void **)&c->own, &c->cap_own, c->nown + 1, sizeof(*c->own)))
			return TFT_ENOMEM;
		c->own[c->nown++] = wt;
		wt->owned = 1;
	}
	/* Depth: stack nesting, lane packing, or 0 for counters. */
	if (ev->kind != TFT_EV_COUNTER && wt->t.kind != TFT_TRACK_COUNTER) {
		if (tft_track_lanes(wt->t.kind, wt->t.flags)) {
			uint32_t best = 0;
			for (uint32_t i = 0; i < wt->nstack; i++) {
				if (wt->stack[i] <= ev->ts_ns) {
					lane = (int)i;
					break;
				}
				if (wt->stack[i] < wt->stack[best])
					best = i;
			}
			if (lane < 0) {
				if (wt->nstack < TFT_STORE_MAX_LANES) {
					if (wt->nstack == wt->cap_stack && grow_stack(wt))
						return TFT_ENOMEM;
					lane = (int)wt->nstack;
					push = ev->kind == TFT_EV_SLICE;
				} else {
					lane = (int)best; /* all lanes busy: share the soonest free */
				}
			}
			depth = (uint32_t)lane;
		} else {
			uint32_t n = wt->nstack;

			while (n && wt->stack[n - 1] <= ev->ts_ns) {
				n--;
				if (tft_likely(wt->open != NULL) && (rc = agg_close(w, wt, n)))
					return rc;
			}
			wt->nstack = depth = n;
			if (ev->kind == TFT_EV_SLICE && wt->nstack < TFT_STORE_MAX_DEPTH) {
				if (wt->nstack == wt->cap_stack && grow_stack(wt))
					return TFT_ENOMEM;
				push = 1;
			}
		}
		/* Statistics of the open raw chunk (written with it, flush_chunk()). */
		if (tft_unlikely(!wt->acc) && !agg_new(wt))
			return TFT_ENOMEM;
		tft_cstats_acc_event(wt->acc, ev->ts_ns);
		if (ev->kind == TFT_EV_SLICE) {
			int64_t clipped = ev->dur_ns, entry;
			if (lane >= 0 || !wt->open) {
				entry = tft_cstats_acc_slice(wt->acc, ev, depth, clipped, ev->dur_ns);
			} else {
				if (depth) { /* its parent: stack[depth - 1] */
					int64_t pend = wt->stack[depth - 1];
					clipped = (end < pend ? end : pend) - ev->ts_ns;
					wt->open[depth - 1].child += clipped;
				}
				entry = tft_cstats_acc_slice(wt->acc, ev, depth, clipped, push ? -1 : ev->dur_ns);
				if (push && entry >= 0) {
					wt->open[depth] = (struct wopen){ wt->acc, (uint32_t)entry, ev->dur_ns, 0 };
					wt->acc->open++;
				}
			}
			if (tft_unlikely(entry < 0))
				return TFT_ENOMEM;
			wt->ctx->open_bytes += AGG_VAL_BYTES;
		}
	}
	e = *ev;
	e.depth = depth;
	if (e.count == 0)
		e.count = 1;
	/*
	 * The event that gives the track enough raw events for a kept level:
	 * the builder first takes those held back, so that predict_skips() (at
	 * this event's chunk flush) counts the levels as it would have.
	 */
	if (tft_unlikely(wt->npend) && wt->n_level[0] + 1 >= TFT_LOD_MIN_RAW_EVENTS &&
	    (rc = lod_replay(w, wt, 1)))
		return rc;
	rc = enc_add(w, wt, 0, &e);
	if (tft_unlikely(rc))
		return rc;
	if (push) {
		wt->stack[depth] = end;
		if (depth == wt->nstack)
			wt->nstack++;
	} else if (lane >= 0 && ev->kind == TFT_EV_SLICE) {
		wt->stack[lane] = end; /* reuse a free (or the soonest free) lane */
	}
	switch (ev->kind) {
	case TFT_EV_SLICE: wt->t.slices++; break;
	case TFT_EV_INSTANT: wt->t.instants++; break;
	default: wt->t.counters++; break;
	}
	if (ev->ts_ns < wt->t.min_ts_ns)
		wt->t.min_ts_ns = ev->ts_ns;
	if (end > wt->t.max_ts_ns)
		wt->t.max_ts_ns = end;
	if (depth > wt->t.max_depth)
		wt->t.max_depth = depth;
	if (wt->n_level[0] < TFT_LOD_MIN_RAW_EVENTS && !wt->lod_direct && !w->flush_partial) {
		/* bulk only: a live session shows its levels as they are written */
		if (tft_unlikely(wt->npend == wt->cap_pend) &&
		    tft_grow((void **)&wt->pend, &wt->cap_pend, wt->npend + 1, sizeof(*wt->pend)))
			return TFT_ENOMEM;
		e.nargs = 0; /* held back without its args (the LOD builder reads none) */
		e.args = NULL;
		wt->pend[wt->npend++] = e;
		wt->ctx->open_bytes += sizeof(e);
	} else {
		rc = tft_lod_add(&wt->lod, &e, emit_lod, wt);
		if (tft_unlikely(rc))
			return failed_now(w) ? failed_now(w) : rc;
	}
	if (tft_unlikely(wt->ctx->open_bytes > w->open_max))
		return flush_ctx(w, wt->ctx);
	return 0;
}

/* store_event() out of line: a worker's, or an event that cannot be queued. */
static __attribute__((noinline)) int store_job(struct tft_writer *w, struct wtrack *wt,
					       const struct tft_event *ev)
{
	return store_event(w, wt, ev);
}

static int queue_event(struct tft_writer *w, struct wworker *k, struct wtrack *wt,
		       const struct tft_event *ev);

/* A job's ev.kind meaning "end this track" rather than an event. */
#define WJOB_END_TRACK 0xFFu

/* Flush wt's LOD summaries and open chunks and free its encoders (owner's thread). */
static int end_track(struct tft_writer *w, struct wtrack *wt)
{
	int rc = lod_end(w, wt);

	if (!rc)
		rc = agg_end(w, wt);
	if (!rc)
		rc = flush_track(w, wt, 1);
	if (!rc)
		rc = agg_write_sum(w, wt);
	if (rc)
		return failed_now(w) ? failed_now(w) : rc;
	for (int k = 0; k < TFT_STORE_LEVELS; k++) {
		if (wt->enc[k]) {
			tft_chunk_enc_fini(wt->enc[k]);
			free(wt->enc[k]);
			wt->enc[k] = NULL;
		}
	}
	free(wt->stack);
	wt->stack = NULL;
	free(wt->open);
	wt->open = NULL;
	wt->nstack = wt->cap_stack = 0;
	return 0;
}

int tft_writer_end_track(struct tft_writer *w, uint32_t track)
{
	struct wtrack *wt;

	if (failed_now(w))
		return failed_now(w);
	if (track >= w->ntracks)
		return TFT_EINVAL;
	wt = w->tracks[track];
	if (w->calls[track].ended)
		return 0; /* already ended */
	w->calls[track].ended = 1; /* later appends fail */
	w->calls[track].last_ts = INT64_MAX;
	if (wt->wk) {
		struct tft_event mark = {.kind = WJOB_END_TRACK};
		return queue_event(w, wt->wk, wt, &mark);
	}
	return end_track(w, wt);
}

int tft_writer_append(struct tft_writer *w, const struct tft_event *ev)
{
	struct wcall *c;
	int64_t end;
	int rc;

	if (tft_unlikely(failed_now(w)))
		return failed_now(w);
	if (tft_unlikely(ev->track >= w->ntracks || ev->kind > TFT_EV_COUNTER || ev->dur_ns < 0 ||
			 __builtin_add_overflow(ev->ts_ns, ev->dur_ns, &end) ||
			 !str_ok(w, ev->name) || !str_ok(w, ev->cat)))
		return TFT_EINVAL;
	if (tft_unlikely(ev->nargs && !args_ok(w->nstr, ev)))
		return TFT_EINVAL;
	c = &w->calls[ev->track];
	if (tft_unlikely(ev->ts_ns < c->last_ts || c->ended))
		return TFT_EINVAL;
	rc = c->wk ? queue_event(w, c->wk, c->wt, ev) : store_event(w, c->wt, ev);
	if (tft_likely(!rc)) {
		c->last_ts = ev->ts_ns;
		c->used = 1;
		if (end > c->max_end)
			c->max_end = end;
	}
	return rc;
}

/* ---- lanes ----------------------------------------------------------------------- */

struct tft_writer_lane {
	struct tft_writer *w; /* borrowed */
	struct wctx ctx;      /* ctx.own: the tracks this lane claimed */
};

struct tft_writer_lane *tft_writer_lane_open(struct tft_writer *w)
{
	struct tft_writer_lane *l;

	if (failed_now(w))
		return NULL;
	l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	l->w = w;
	l->ctx.cctx = ZSTD_createCCtx();
	if (!l->ctx.cctx) {
		free(l);
		return NULL;
	}
	__atomic_fetch_add(&w->nlanes, 1, __ATOMIC_RELAXED);
	return l;
}

/* Make wt the lane's (its first event): it must be unclaimed and have no events. */
static int lane_claim(struct tft_writer_lane *l, struct wtrack *wt, struct wcall *c)
{
	struct tft_writer_lane *none = NULL;
	struct wctx *x = &l->ctx;

	if (tft_grow((void **)&x->own, &x->cap_own, x->nown + 1, sizeof(*x->own)))
		return TFT_ENOMEM;
	/* The claim first: another lane's track is refused without reading its
	 * c->last_ts, which that lane's thread writes per event. */
	if (!__atomic_compare_exchange_n(&wt->lane, &none, l, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return TFT_EINVAL;
	if (c->used || c->ended) { /* events from the driving thread or a closed lane */
		__atomic_store_n(&wt->lane, NULL, __ATOMIC_RELEASE);
		return TFT_EINVAL;
	}
	x->own[x->nown++] = wt;
	wt->owned = 1;
	wt->wk = NULL;
	wt->ctx = x;
	wt->lane_last = INT64_MIN;
	wt->lane_used = 0;
	wt->lane_max_end = INT64_MIN;
	c->wk = NULL;
	return 0;
}

int tft_writer_lane_append(struct tft_writer_lane *l, const struct tft_event *ev)
{
	struct tft_writer *w = l->w;
	uint32_t nstr = __atomic_load_n(&w->nstr, __ATOMIC_ACQUIRE);
	struct wcall *c;
	struct wtrack *wt;
	int64_t end;
	int rc;

	if (tft_unlikely(failed_now(w)))
		return failed_now(w);
	if (tft_unlikely(ev->track >= w->ntracks || ev->kind > TFT_EV_COUNTER || ev->dur_ns < 0 ||
			 __builtin_add_overflow(ev->ts_ns, ev->dur_ns, &end) || ev->name >= nstr ||
			 ev->cat >= nstr))
		return TFT_EINVAL;
	if (tft_unlikely(ev->nargs && !args_ok(nstr, ev)))
		return TFT_EINVAL;
	c = &w->calls[ev->track];
	wt = c->wt;
	if (tft_unlikely(__atomic_load_n(&wt->lane, __ATOMIC_RELAXED) != l) &&
	    (rc = lane_claim(l, wt, c)))
		return rc;
	if (tft_unlikely(ev->ts_ns < wt->lane_last || wt->lane_ended))
		return TFT_EINVAL;
	rc = store_event(w, wt, ev);
	if (tft_likely(!rc)) {
		wt->lane_last = ev->ts_ns;
		wt->lane_used = 1;
		if (end > wt->lane_max_end)
			wt->lane_max_end = end;
	}
	return rc;
}

int tft_writer_lane_end_track(struct tft_writer_lane *l, uint32_t track)
{
	struct tft_writer *w = l->w;
	struct wcall *c;
	int rc;

	if (failed_now(w))
		return failed_now(w);
	if (track >= w->ntracks)
		return TFT_EINVAL;
	c = &w->calls[track];
	if (__atomic_load_n(&c->wt->lane, __ATOMIC_RELAXED) != l) {
		if ((rc = lane_claim(l, c->wt, c)))
			return rc;
	} else if (c->wt->lane_ended) {
		return 0;
	}
	c->wt->lane_ended = 1;
	c->wt->lane_last = INT64_MAX;
	c->ended = 1; /* once per track: handed back ended */
	c->last_ts = INT64_MAX;
	return end_track(w, c->wt);
}

/* The lane's own track (claimed now if no lane has it), not ended; NULL: refused. */
static struct wtrack *lane_track(struct tft_writer_lane *l, uint32_t track, int *rc)
{
	struct tft_writer *w = l->w;
	struct wcall *c;

	*rc = failed_now(w);
	if (*rc)
		return NULL;
	*rc = TFT_EINVAL;
	if (track >= w->ntracks)
		return NULL;
	c = &w->calls[track];
	if (__atomic_load_n(&c->wt->lane, __ATOMIC_RELAXED) != l && (*rc = lane_claim(l, c->wt, c)))
		return NULL;
	if (c->wt->lane_ended) {
		*rc = TFT_EINVAL; /* ended: its chunks are final */
		return NULL;
	}
	*rc = 0;
	return c->wt;
}

int tft_writer_lane_reset_track(struct tft_writer_lane *l, uint32_t track)
{
	struct tft_writer *w = l->w;
	struct wtrack *wt;
	int rc;

	if (!(wt = lane_track(l, track, &rc)))
		return rc;
	/* Usually nothing was written yet (a line is found out of order early). The
	 * staging table has no index by track: it is searched only if needed. */
	if (wt->nwritten || wt->nstaged) {
		pthread_mutex_lock(&w->db_mu);
		if (wt->nwritten) {
			sqlite3_bind_int64(w->st[ST_DEL_TRACK], 1, track);
			rc = step_reset(w, w->st[ST_DEL_TRACK], "forget a track's chunks");
		}
		if (!rc && wt->nwritten) {
			sqlite3_bind_int64(w->st[ST_DEL_CSTATS], 1, track);
			rc = step_reset(w, w->st[ST_DEL_CSTATS], "forget a track's chunk statistics");
		}
		if (!rc && wt->nstaged && w->st[ST_UNSTAGE_TRACK]) {
			sqlite3_bind_int64(w->st[ST_UNSTAGE_TRACK], 1, track);
			rc = step_reset(w, w->st[ST_UNSTAGE_TRACK], "forget a track's chunks");
		}
		pthread_mutex_unlock(&w->db_mu);
		if (rc)
			return rc;
		wt->nwritten = wt->nstaged = 0;
	}
	for (int k = 0; k < TFT_STORE_LEVELS; k++) {
		if (wt->enc[k]) {
			wt->ctx->open_bytes -= wt->enc[k]->bytes;
			tft_chunk_enc_reset(wt->enc[k], 1);
		}
	}
	memset(wt->n_level, 0, sizeof(wt->n_level));
	agg_forget(wt);
	lod_forget(wt);
	wt->lod_direct = 0;
	tft_lod_fini(&wt->lod);
	tft_lod_init(&wt->lod, wt->t.id);
	wt->lod.count = wt->n_level;
	wt->nstack = 0;
	wt->t.slices = wt->t.instants = wt->t.counters = 0;
	wt->t.min_ts_ns = INT64_MAX;
	wt->t.max_ts_ns = INT64_MIN;
	wt->t.max_depth = 0;
	wt->lane_last = INT64_MIN;
	wt->lane_max_end = INT64_MIN;
	wt->lane_used = 0;
	return 0;
}

/* How a kind and flags place events (store_event()): 0 stack, 1 lanes, 2 counters. */
static int nesting_mode(uint32_t kind, uint32_t flags)
{
	if (kind == TFT_TRACK_COUNTER)
		return 2;
	return tft_track_lanes(kind, flags) ? 1 : 0;
}

int tft_writer_lane_name_track(struct tft_writer_lane *l, uint32_t track, uint32_t kind,
			       uint32_t flags, uint32_t name, int64_t tid)
{
	uint32_t nstr = __atomic_load_n(&l->w->nstr, __ATOMIC_ACQUIRE);
	struct wtrack *wt;
	int rc;

	if (name >= nstr || kind < 1 || kind > TFT_TRACK_KIND_MAX)
		return TFT_EINVAL;
	if (!(wt = lane_track(l, track, &rc)))
		return rc;
	if (wt->lane_used && nesting_mode(kind, flags) != nesting_mode(wt->t.kind, wt->t.flags))
		return TFT_EINVAL; /* it decides how events nest: not after the fact */
	wt->t.kind = kind;
	wt->t.flags = flags & TFT_TRACKF_ALL;
	wt->t.name = name;
	wt->t.tid = tid;
	return 0;
}

int tft_writer_lane_close(struct tft_writer_lane *l)
{
	struct tft_writer *w;
	int rc = 0;

	if (!l)
		return 0;
	w = l->w;
	/* Tracks the lane did not end go back to the driving thread's context. */
	for (uint32_t i = 0; i < l->ctx.nown; i++) {
		struct wtrack *wt = l->ctx.own[i];
		int r;

		w->calls[wt->t.id].last_ts = wt->lane_last; /* the order check goes back too */
		if (wt->lane_max_end > w->calls[wt->t.id].max_end)
			w->calls[wt->t.id].max_end = wt->lane_max_end;
		w->calls[wt->t.id].used |= wt->lane_used;
		r = wt->lane_ended ? 0 : flush_track(w, wt, 1);
		if (r && !rc)
			rc = r;
		wt->ctx = &w->main;
		wt->owned = 0;
		__atomic_store_n(&wt->lane, NULL, __ATOMIC_RELEASE); /* with events now: no lane can claim it again */
	}
	ctx_fini(&l->ctx);
	free(l);
	__atomic_fetch_sub(&w->nlanes, 1, __ATOMIC_RELAXED);
	if (rc)
		set_failed(w, rc);
	return failed_now(w);
}

/* ---- worker threads ---------------------------------------------------------------- */

static struct wbatch *batch_get(struct wworker *k)
{
	struct wbatch *b = NULL;

	pthread_mutex_lock(&k->mu);
	for (;;) {
		if (k->free) {
			b = k->free;
			k->free = b->next;
			break;
		}
		if (k->nalloc < WB_POOL) {
			b = malloc(sizeof(*b));
			if (b)
				k->nalloc++;
			break;
		}
		pthread_cond_wait(&k->idle, &k->mu);
	}
	pthread_mutex_unlock(&k->mu);
	if (b) {
		b->next = NULL;
		b->n = b->nargs = 0;
	}
	return b;
}

static void batch_submit(struct wworker *k, struct wbatch *b)
{
	pthread_mutex_lock(&k->mu);
	if (k->tail)
		k->tail->next = b;
	else
		k->head = b;
	k->tail = b;
	pthread_cond_signal(&k->work);
	pthread_mutex_unlock(&k->mu);
}

static int queue_event(struct tft_writer *w, struct wworker *k, struct wtrack *wt,
		       const struct tft_event *ev)
{
	struct wbatch *b = k->cur;
	struct wjob *j;

	if (tft_unlikely(!b || b->n == WB_EVENTS || b->nargs + ev->nargs > WB_ARGS)) {
		if (b)
			batch_submit(k, b);
		k->cur = b = batch_get(k);
		if (!b)
			return TFT_ENOMEM;
		if (tft_unlikely(ev->nargs > WB_ARGS)) { /* cannot be queued: store it here */
			int rc;
			writer_sync(w);
			rc = failed_now(w) ? failed_now(w) : store_job(w, wt, ev);
			return rc;
		}
	}
	j = &b->job[b->n++];
	j->ev = *ev;
	j->wt = wt;
	j->args_off = b->nargs;
	if (ev->nargs) {
		memcpy(b->args + b->nargs, ev->args, ev->nargs * sizeof(*ev->args));
		b->nargs += ev->nargs;
	}
	return 0;
}

static void *worker_main(void *arg)
{
	struct wworker *k = arg;
	struct tft_writer *w = k->w;

	pthread_mutex_lock(&k->mu);
	for (;;) {
		struct wbatch *b;
		while (!k->head && !k->stop)
			pthread_cond_wait(&k->work, &k->mu);
		if (!k->head)
			break;
		b = k->head;
		k->head = b->next;
		if (!k->head)
			k->tail = NULL;
		k->busy = 1;
		pthread_mutex_unlock(&k->mu);

		for (uint32_t i = 0; i < b->n && !failed_now(w); i++) {
			struct wjob *j = &b->job[i];
			int rc;
			j->ev.args = j->ev.nargs ? b->args + j->args_off : NULL;
			rc = tft_likely(j->ev.kind != WJOB_END_TRACK) ? store_job(w, j->wt, &j->ev)
								      : end_track(w, j->wt);
			if (tft_unlikely(rc)) {
				pthread_mutex_lock(&w->db_mu);
				if (!w->errmsg[0])
					snprintf(w->errmsg, sizeof(w->errmsg), "storing an event: %s",
						 tft_strerror(rc));
				set_failed(w, rc);
				pthread_mutex_unlock(&w->db_mu);
			}
		}

		pthread_mutex_lock(&k->mu);
		b->next = k->free;
		k->free = b;
		k->busy = 0;
		pthread_cond_broadcast(&k->idle);
	}
	pthread_mutex_unlock(&k->mu);
	return NULL;
}

/* Queue every partial batch and wait until all workers are idle. */
static int writer_sync(struct tft_writer *w)
{
	for (uint32_t i = 0; i < w->nwk; i++) {
		struct wworker *k = &w->wk[i];
		if (k->cur && k->cur->n) {
			batch_submit(k, k->cur);
			k->cur = NULL;
		}
	}
	for (uint32_t i = 0; i < w->nwk; i++) {
		struct wworker *k = &w->wk[i];
		pthread_mutex_lock(&k->mu);
		while (k->head || k->busy)
			pthread_cond_wait(&k->idle, &k->mu);
		pthread_mutex_unlock(&k->mu);
	}
	return failed_now(w);
}

static int workers_start(struct tft_writer *w, uint32_t n)
{
	w->wk = calloc(n, sizeof(*w->wk));
	if (!w->wk)
		return TFT_ENOMEM;
	w->nwk_alloc = n;
	for (uint32_t i = 0; i < n; i++) {
		struct wworker *k = &w->wk[i];
		k->w = w;
		pthread_mutex_init(&k->mu, NULL);
		pthread_cond_init(&k->work, NULL);
		pthread_cond_init(&k->idle, NULL);
		k->ctx.cctx = ZSTD_createCCtx();
		if (!k->ctx.cctx || pthread_create(&k->thread, NULL, worker_main, k))
			break;
		k->started = 1;
		w->nwk = i + 1;
	}
	if (w->nwk != n)
		return TFT_ENOMEM; /* writer_free() stops the started ones */
	w->open_max = TFT_STORE_OPEN_BYTES_MAX / n;
	return 0;
}

static void batch_list_free(struct wbatch *b)
{
	while (b) {
		struct wbatch *next = b->next;
		free(b);
		b = next;
	}
}

/* Stop and join the workers (queued work is dropped: call writer_sync first to keep it). */
static void workers_stop(struct tft_writer *w)
{
	if (!w->wk)
		return;
	for (uint32_t i = 0; i < w->nwk_alloc; i++) {
		struct wworker *k = &w->wk[i];
		if (k->started) {
			pthread_mutex_lock(&k->mu);
			batch_list_free(k->head); /* dropped unless synced */
			k->head = k->tail = NULL;
			k->stop = 1;
			pthread_cond_signal(&k->work);
			pthread_mutex_unlock(&k->mu);
			pthread_join(k->thread, NULL);
		}
		free(k->cur);
		batch_list_free(k->head);
		batch_list_free(k->free);
		ctx_fini(&k->ctx);
		pthread_mutex_destroy(&k->mu);
		pthread_cond_destroy(&k->work);
		pthread_cond_destroy(&k->idle);
	}
	free(w->wk);
	w->wk = NULL;
	w->nwk = w->nwk_alloc = 0;
}

int tft_writer_default_threads(void)
{
	const char *e = getenv("TFT_STORE_THREADS");
	long n;

	if (e && *e) {
		n = strtol(e, NULL, 10);
		return n < 0 ? 0 : n > TFT_WRITER_MAX_THREADS ? TFT_WRITER_MAX_THREADS : (int)n;
	}
	n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > 4 ? 4 : (int)n;
}

/* ---- flows, steps, meta -------------------------------------------------------- */

/*
 * Flows are written in chunks of TFT_FLOW_CHUNK_FLOWS, in the order added
 * (each sorted by time inside), the last one partial: the slots of a ring
 * (fbuf), filled one at a time by the caller. A full slot is queued; the
 * flow helper threads (flow_par - 1 of them, from the first full chunk on)
 * encode the queued slots in order, while the caller fills the next ones;
 * the caller encodes too when the ring is full or when it drains it. Only
 * the caller inserts, in slot order, so the rows are those of one thread.
 *
 * Slots are named by sequence numbers (slot seq % nfslot): [fhead, fnext)
 * are being encoded or done, [fnext, ffill) queued, ffill is being filled.
 */
enum { FS_QUEUED, FS_BUSY, FS_DONE };

struct fslot {
	struct tft_chunk_buf blob; /* the encoded chunk, kept until its insert */
	uint32_t n;
	int64_t t_min, t_max;
	int rc;
	int state; /* under fmu */
};

/* A flow helper thread, with its encoder. */
struct fhelper {
	struct tft_writer *w;
	ZSTD_CCtx *cctx; /* owned */
	struct tft_chunk_buf scratch;
	pthread_t thread;
};

static struct tft_flow *fslot_flows(const struct tft_writer *w, uint32_t seq)
{
	return w->fbuf + (size_t)(seq % w->nfslot) * TFT_FLOW_CHUNK_FLOWS;
}

/* Encode the claimed slot seq (fmu not held); returns with it done, fmu held. */
static void fslot_encode(struct tft_writer *w, uint32_t seq, ZSTD_CCtx *cctx,
			 struct tft_chunk_buf *scratch)
{
	struct fslot *s = &w->fslot[seq % w->nfslot];

	s->rc = tft_flow_chunk_encode(fslot_flows(w, seq), s->n, cctx, w->zstd_level, scratch,
				      &s->blob, &s->t_min, &s->t_max);
	pthread_mutex_lock(&w->fmu);
	s->state = FS_DONE;
	pthread_cond_broadcast(&w->fdone);
}

static void *fhelper_main(void *arg)
{
	struct fhelper *h = arg;
	struct tft_writer *w = h->w;

	pthread_mutex_lock(&w->fmu);
	for (;;) {
		uint32_t seq;

		while (!w->fstop && w->fnext == w->ffill)
			pthread_cond_wait(&w->fwork, &w->fmu);
		if (w->fstop)
			break;
		seq = w->fnext++;
		w->fslot[seq % w->nfslot].state = FS_BUSY;
		pthread_mutex_unlock(&w->fmu);
		fslot_encode(w, seq, h->cctx, &h->scratch);
	}
	pthread_mutex_unlock(&w->fmu);
	return NULL;
}

/* Start the helpers (fewer if some cannot start: the caller encodes what they do not). */
static void fhelpers_start(struct tft_writer *w)
{
	uint32_t want = w->flow_par - 1;

	w->fhelp = calloc(want, sizeof(*w->fhelp));
	for (uint32_t i = 0; w->fhelp && i < want; i++) {
		struct fhelper *h = &w->fhelp[i];

		h->w = w;
		if (!(h->cctx = ZSTD_createCCtx()))
			break;
		if (pthread_create(&h->thread, NULL, fhelper_main, h)) {
			ZSTD_freeCCtx(h->cctx);
			h->cctx = NULL;
			break;
		}
		w->nfhelp++;
	}
}

/* Stop the helpers (what they have not encoded is dropped) and free the flow buffers. */
static void flows_fini(struct tft_writer *w)
{
	if (w->nfslot) {
		pthread_mutex_lock(&w->fmu);
		w->fstop = 1;
		pthread_cond_broadcast(&w->fwork);
		pthread_mutex_unlock(&w->fmu);
		for (uint32_t i = 0; i < w->nfhelp; i++) {
			pthread_join(w->fhelp[i].thread, NULL);
			ZSTD_freeCCtx(w->fhelp[i].cctx);
			tft_chunk_buf_free(&w->fhelp[i].scratch);
		}
		for (uint32_t i = 0; i < w->nfslot; i++)
			tft_chunk_buf_free(&w->fslot[i].blob);
		pthread_mutex_destroy(&w->fmu);
		pthread_cond_destroy(&w->fwork);
		pthread_cond_destroy(&w->fdone);
	}
	free(w->fhelp);
	free(w->fslot);
	free(w->fbuf);
}

/* Insert the done slots at the head of the ring, in order. */
static int fslots_insert(struct tft_writer *w)
{
	sqlite3_stmt *st = w->st[ST_FLOW];
	int rc = 0;

	while (!rc) {
		struct fslot *s = &w->fslot[w->fhead % w->nfslot];
		int done;

		pthread_mutex_lock(&w->fmu);
		done = w->fhead != w->fnext && s->state == FS_DONE;
		pthread_mutex_unlock(&w->fmu);
		if (!done)
			break;
		if (s->rc) {
			snprintf(w->errmsg, sizeof(w->errmsg), "flow chunk compression failed");
			set_failed(w, s->rc);
			return s->rc;
		}
		if (w->nwk)
			pthread_mutex_lock(&w->db_mu);
		sqlite3_bind_int64(st, 1, s->n);
		sqlite3_bind_int64(st, 2, s->t_min);
		sqlite3_bind_int64(st, 3, s->t_max);
		sqlite3_bind_blob(st, 4, s->blob.p, (int)s->blob.len, SQLITE_STATIC);
		rc = step_reset(w, st, "insert flow chunk");
		if (w->nwk)
			pthread_mutex_unlock(&w->db_mu);
		w->fhead++;
	}
	return rc;
}

/*
 * Queue the slot being filled (its nfbuf flows) unless `drain` finds it
 * empty; insert what is done; then, until a slot is free to fill (with
 * `drain`: until every slot is inserted), encode the next queued slot on
 * this thread, or wait for the oldest one.
 */
static int flows_submit(struct tft_writer *w, int drain)
{
	int rc;

	if (w->nfbuf) {
		struct fslot *s = &w->fslot[w->ffill % w->nfslot];

		pthread_mutex_lock(&w->fmu);
		s->n = w->nfbuf;
		s->state = FS_QUEUED;
		w->ffill++;
		if (w->nfhelp)
			pthread_cond_signal(&w->fwork);
		pthread_mutex_unlock(&w->fmu);
		w->nfbuf = 0;
		w->fcur = fslot_flows(w, w->ffill);
		/* Helpers from the first full chunk on: a few flows need none. */
		if (!drain && w->flow_par > 1 && !w->fhelp)
			fhelpers_start(w);
	}
	for (;;) {
		if ((rc = fslots_insert(w)))
			return rc;
		if (drain ? w->fhead == w->ffill : w->ffill - w->fhead < w->nfslot)
			return 0;
		pthread_mutex_lock(&w->fmu);
		if (w->fnext != w->ffill) {
			uint32_t seq = w->fnext++;

			w->fslot[seq % w->nfslot].state = FS_BUSY;
			pthread_mutex_unlock(&w->fmu);
			fslot_encode(w, seq, w->main.cctx, &w->main.scratch);
		} else {
			while (w->fslot[w->fhead % w->nfslot].state != FS_DONE)
				pthread_cond_wait(&w->fdone, &w->fmu);
		}
		pthread_mutex_unlock(&w->fmu);
	}
}

/* Write every flow added: the partial slot too. */
static int flush_flows(struct tft_writer *w)
{
	return w->fbuf ? flows_submit(w, 1) : 0;
}

/* The flow ring and its lock: two slots per encoding thread (with workers: imports), else one. */
static int flows_init(struct tft_writer *w)
{
	uint32_t par = w->nwk < 2 ? 1 : w->nwk < FLOW_PAR_MAX ? w->nwk : FLOW_PAR_MAX;
	uint32_t ns = par == 1 ? 1 : 2 * par;

	w->fbuf = malloc((size_t)ns * TFT_FLOW_CHUNK_FLOWS * sizeof(*w->fbuf));
	w->fslot = calloc(ns, sizeof(*w->fslot));
	if (!w->fbuf || !w->fslot) {
		free(w->fbuf);
		free(w->fslot);
		w->fbuf = NULL;
		w->fslot = NULL;
		return TFT_ENOMEM;
	}
	pthread_mutex_init(&w->fmu, NULL);
	pthread_cond_init(&w->fwork, NULL);
	pthread_cond_init(&w->fdone, NULL);
	w->nfslot = ns;
	w->flow_par = par;
	w->fcur = w->fbuf;
	return 0;
}

static inline int flow_ok(const struct tft_writer *w, const struct tft_flow *f)
{
	return (f->src_track == TFT_NONE || f->src_track < w->ntracks) &&
	       (f->dst_track == TFT_NONE || f->dst_track < w->ntracks) && str_ok(w, f->name) &&
	       str_ok(w, f->cat);
}

int tft_writer_add_flow(struct tft_writer *w, const struct tft_flow *f)
{
	if (failed_now(w))
		return failed_now(w);
	if (!flow_ok(w, f))
		return TFT_EINVAL;
	if (!w->fbuf && flows_init(w))
		return TFT_ENOMEM;
	w->fcur[w->nfbuf++] = *f;
	w->nflows++;
	if (w->nfbuf == TFT_FLOW_CHUNK_FLOWS)
		return flows_submit(w, 0);
	return 0;
}

int tft_writer_flow_room(struct tft_writer *w, struct tft_flow **f, uint32_t *n)
{
	if (failed_now(w))
		return failed_now(w);
	if (!w->fbuf && flows_init(w))
		return TFT_ENOMEM;
	if (w->nfbuf == TFT_FLOW_CHUNK_FLOWS) /* a failed flows_submit() */
		return TFT_EIO;
	*f = w->fcur + w->nfbuf;
	*n = TFT_FLOW_CHUNK_FLOWS - w->nfbuf;
	return 0;
}

int tft_writer_flows_add(struct tft_writer *w, uint32_t k)
{
	const struct tft_flow *f = w->fcur + w->nfbuf;
	uint32_t i = 0;

	uint32_t bad = 0;

	if (failed_now(w))
		return failed_now(w);
	/* The common case without a branch per flow: TFT_NONE + 1 wraps to 0. */
	for (uint32_t j = 0; j < k; j++)
		bad |= (f[j].src_track + 1 > w->ntracks) | (f[j].dst_track + 1 > w->ntracks) |
		       (f[j].name >= w->nstr) | (f[j].cat >= w->nstr);
	if (!bad)
		i = k;
	while (i < k && flow_ok(w, &f[i]))
		i++;
	w->nfbuf += i;
	w->nflows += i;
	if (w->nfbuf == TFT_FLOW_CHUNK_FLOWS) {
		int rc = flows_submit(w, 0);

		if (rc)
			return rc;
	}
	return i < k ? TFT_EINVAL : 0;
}

int tft_writer_add_step(struct tft_writer *w, const struct tft_step *s)
{
	sqlite3_stmt *st = w->st[ST_STEP];
	int rc;

	if (failed_now(w))
		return failed_now(w);
	if ((s->process != TFT_NONE && s->process >= w->nprocs) || !str_ok(w, s->name))
		return TFT_EINVAL;
	if (w->nwk)
		pthread_mutex_lock(&w->db_mu);
	sqlite3_bind_int64(st, 1, s->index);
	sqlite3_bind_int64(st, 2, s->name);
	if (s->process == TFT_NONE)
		sqlite3_bind_null(st, 3);
	else
		sqlite3_bind_int64(st, 3, s->process);
	sqlite3_bind_int64(st, 4, s->start_ns);
	sqlite3_bind_int64(st, 5, s->dur_ns);
	sqlite3_bind_int(st, 6, s->traced ? 1 : 0);
	rc = step_reset(w, st, "insert step");
	if (!rc)
		w->nsteps++;
	if (w->nwk)
		pthread_mutex_unlock(&w->db_mu);
	return rc;
}

uint32_t tft_writer_step_count(const struct tft_writer *w)
{
	return w->nsteps;
}

int64_t tft_writer_track_end(const struct tft_writer *w, uint32_t track)
{
	return track < w->ntracks ? w->calls[track].max_end : INT64_MIN;
}

uint32_t tft_writer_track_process(const struct tft_writer *w, uint32_t track)
{
	return track < w->ntracks ? w->tracks[track]->t.process : TFT_NONE;
}

int tft_writer_track_appendable(const struct tft_writer *w, uint32_t track)
{
	if (track >= w->ntracks || failed_now(w))
		return 0;
	return !w->calls[track].ended &&
	       __atomic_load_n(&w->calls[track].wt->lane, __ATOMIC_ACQUIRE) == NULL;
}

/*
 * The index of meta `key`, or UINT32_MAX (importers add a key per step: a
 * session pickle has thousands).
 */
static uint32_t meta_find(const struct tft_writer *w, const char *key)
{
	uint32_t id = w->meta_keys ? tft_strtab_find(w->meta_keys, key, strlen(key)) : UINT32_MAX;

	return id == UINT32_MAX || id == 0 ? UINT32_MAX : id - 1;
}

static struct meta_ent *meta_get(struct tft_writer *w, const char *key)
{
	struct meta_ent *m;
	uint32_t i = meta_find(w, key);

	if (i != UINT32_MAX)
		return &w->meta[i];
	if (!*key || (!w->meta_keys && !(w->meta_keys = tft_strtab_create())))
		return NULL;
	if (w->nmeta == w->cap_meta) {
		uint32_t ncap = w->cap_meta ? w->cap_meta * 2 : 16;
		struct meta_ent *nm = realloc(w->meta, (size_t)ncap * sizeof(*nm));
		if (!nm)
			return NULL;
		w->meta = nm;
		w->cap_meta = ncap;
	}
	m = &w->meta[w->nmeta];
	memset(m, 0, sizeof(*m));
	m->key = strdup(key);
	if (!m->key || tft_strtab_intern(w->meta_keys, key, strlen(key)) != w->nmeta + 1) {
		free(m->key);
		return NULL;
	}
	w->nmeta++;
	return m;
}

int tft_writer_set_meta(struct tft_writer *w, const char *key, const char *value)
{
	struct meta_ent *m;
	char *text;

	if (!key || !*key || !value)
		return TFT_EINVAL;
	text = strdup(value);
	if (!text)
		return TFT_ENOMEM;
	m = meta_get(w, key);
	if (!m) {
		free(text);
		return TFT_ENOMEM;
	}
	free(m->text);
	m->text = text;
	m->dirty = 1;
	return 0;
}

int tft_writer_join_meta(struct tft_writer *w, const char *key, const char *item, const char *sep)
{
	struct meta_ent *m;
	size_t n, k, ls;
	char *text;

	if (!key || !*key || !item || !*item || !sep)
		return TFT_EINVAL;
	m = meta_get(w, key);
	if (!m)
		return TFT_ENOMEM;
	if (!m->text || !*m->text)
		return tft_writer_set_meta(w, key, item);
	/* already listed? */
	n = strlen(item);
	ls = strlen(sep);
	for (const char *p = m->text;;) {
		const char *q = ls ? strstr(p, sep) : NULL;

		k = q ? (size_t)(q - p) : strlen(p);
		if (k == n && memcmp(p, item, n) == 0)
			return 0;
		if (!q)
			break;
		p = q + ls;
	}
	k = strlen(m->text);
	text = malloc(k + ls + n + 1);
	if (!text)
		return TFT_ENOMEM;
	memcpy(text, m->text, k);
	memcpy(text + k, sep, ls);
	memcpy(text + k + ls, item, n + 1);
	{
		int rc = tft_writer_set_meta(w, key, text);

		free(text);
		return rc;
	}
}

const char *tft_writer_meta(struct tft_writer *w, const char *key)
{
	uint32_t i = meta_find(w, key);

	return i == UINT32_MAX ? NULL : w->meta[i].text;
}

int64_t tft_writer_count(const struct tft_writer *w, const char *key)
{
	uint32_t i = meta_find(w, key);

	if (i == UINT32_MAX)
		return 0;
	return w->meta[i].text ? strtoll(w->meta[i].text, NULL, 10) : w->meta[i].ival;
}

int tft_writer_add_count(struct tft_writer *w, const char *key, int64_t delta)
{
	struct meta_ent *m;

	if (!key || !*key)
		return TFT_EINVAL;
	m = meta_get(w, key);
	if (!m)
		return TFT_ENOMEM;
	if (m->text) { /* a text value set earlier: count on from its number */
		m->ival = strtoll(m->text, NULL, 10);
		free(m->text);
		m->text = NULL;
	}
	m->ival = __builtin_add_overflow(m->ival, delta, &m->ival) ? INT64_MAX : m->ival;
	m->dirty = 1;
	return 0;
}

/* ---- importers' state ------------------------------------------------------------- */

int tft_writer_attach(struct tft_writer *w, const char *name, void *ctx,
		      int (*on_close)(struct tft_writer *w, void *ctx), void (*free_ctx)(void *ctx))
{
	struct wattach *a;

	if (!name || tft_writer_attached(w, name))
		return TFT_EINVAL;
	if (tft_grow((void **)&w->att, &w->cap_att, w->natt + 1, sizeof(*w->att)))
		return TFT_ENOMEM;
	a = &w->att[w->natt];
	if (!(a->name = strdup(name)))
		return TFT_ENOMEM;
	a->ctx = ctx;
	a->on_close = on_close;
	a->free_ctx = free_ctx;
	w->natt++;
	return 0;
}

void *tft_writer_attached(const struct tft_writer *w, const char *name)
{
	for (uint32_t i = 0; i < w->natt; i++)
		if (!strcmp(w->att[i].name, name))
			return w->att[i].ctx;
	return NULL;
}

/* Run the attached states' close steps, in attach order. */
static int close_attached(struct tft_writer *w)
{
	int rc = 0;

	for (uint32_t i = 0; i < w->natt && !rc; i++)
		if (w->att[i].on_close)
			rc = w->att[i].on_close(w, w->att[i].ctx);
	return rc;
}

/* ---- commit / close -------------------------------------------------------------- */

static int write_rows(struct tft_writer *w)
{
	sqlite3_stmt *st;
	uint32_t nstr = tft_strtab_count(w->strs);
	int rc;

	if (w->nflows != w->nflows_written) {
		if ((rc = tft_writer_add_count(w, "flow_count", (int64_t)(w->nflows - w->nflows_written))))
			return rc;
		w->nflows_written = w->nflows;
	}
	st = w->st[ST_STRING];
	for (uint32_t id = w->strs_written; id < nstr; id++) {
		size_t len;
		const char *s = tft_strtab_get(w->strs, id, &len);
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_text(st, 2, s, (int)len, SQLITE_STATIC);
		if ((rc = step_reset(w, st, "insert string")))
			return rc;
	}
	w->strs_written = nstr;
	st = w->st[ST_PROC];
	for (uint32_t i = 0; i < w->nprocs; i++) {
		const struct tft_process *p = &w->procs[i];
		sqlite3_bind_int64(st, 1, i);
		sqlite3_bind_int64(st, 2, str_ok(w, p->name) ? p->name : 0);
		sqlite3_bind_int64(st, 3, str_ok(w, p->host) ? p->host : 0);
		sqlite3_bind_int64(st, 4, p->pid);
		sqlite3_bind_int64(st, 5, p->rank);
		sqlite3_bind_int64(st, 6, p->sort_index);
		sqlite3_bind_int64(st, 7, str_ok(w, p->labels) ? p->labels : 0);
		if ((rc = step_reset(w, st, "insert process")))
			return rc;
	}
	st = w->st[ST_TRACK];
	for (uint32_t i = 0; i < w->ntracks; i++) {
		const struct tft_track *t = &w->tracks[i]->t;
		sqlite3_bind_int64(st, 1, i);
		sqlite3_bind_int64(st, 2, t->process < w->nprocs ? t->process : 0);
		sqlite3_bind_int64(st, 3, t->kind);
		sqlite3_bind_int64(st, 4, str_ok(w, t->name) ? t->name : 0);
		sqlite3_bind_int64(st, 5, t->tid);
		sqlite3_bind_int64(st, 6, t->sort_index);
		sqlite3_bind_int64(st, 7, (int64_t)t->slices);
		sqlite3_bind_int64(st, 8, (int64_t)t->instants);
		sqlite3_bind_int64(st, 9, (int64_t)t->counters);
		if (t->min_ts_ns <= t->max_ts_ns) {
			sqlite3_bind_int64(st, 10, t->min_ts_ns);
			sqlite3_bind_int64(st, 11, t->max_ts_ns);
		} else {
			sqlite3_bind_null(st, 10);
			sqlite3_bind_null(st, 11);
		}
		sqlite3_bind_int64(st, 12, t->max_depth);
		sqlite3_bind_int64(st, 13, t->flags & TFT_TRACKF_ALL);
		if ((rc = step_reset(w, st, "insert track")))
			return rc;
	}
	st = w->st[ST_META];
	for (uint32_t i = 0; i < w->nmeta; i++) {
		struct meta_ent *m = &w->meta[i];
		if (!m->dirty)
			continue;
		sqlite3_bind_text(st, 1, m->key, -1, SQLITE_STATIC);
		if (m->text)
			sqlite3_bind_text(st, 2, m->text, -1, SQLITE_STATIC);
		else
			sqlite3_bind_int64(st, 2, m->ival);
		if ((rc = step_reset(w, st, "insert meta")))
			return rc;
		m->dirty = 0;
	}
	return 0;
}

static int write_lod_row(struct tft_writer *w, uint32_t track, int level, uint64_t n)
{
	sqlite3_stmt *st = w->st[ST_LOD];

	sqlite3_bind_int64(st, 1, track);
	sqlite3_bind_int(st, 2, level);
	sqlite3_bind_int64(st, 3, tft_lod_gap_ns(level));
	sqlite3_bind_int64(st, 4, (int64_t)n);
	return step_reset(w, st, "insert lod");
}

int tft_writer_commit(struct tft_writer *w, struct tft_error *err)
{
	int rc;

	writer_sync(w);
	if (w->failed)
		return report(w, err, w->failed);
	if (w->flush_partial) {
		if ((rc = flush_all(w, 0)) || (rc = flush_flows(w)))
			return report(w, err, rc);
		/* Live readers see every level written so far; close() prunes. */
		for (uint32_t i = 0; i < w->ntracks; i++)
			for (int k = 0; k < TFT_STORE_LEVELS; k++)
				if (w->tracks[i]->n_level[k] &&
				    (rc = write_lod_row(w, i, k, w->tracks[i]->n_level[k])))
					return report(w, err, rc);
	}
	if ((rc = write_rows(w)) || (rc = exec_sql(w, "COMMIT")) || (rc = exec_sql(w, "BEGIN")))
		return report(w, err, rc);
	return 0;
}

/*
 * Keep LOD level k only if the track has at least TFT_LOD_MIN_RAW_EVENTS raw
 * events and the level has at most a quarter of the events of the finest
 * stored level below it; drop the others (the reader falls back).
 */
struct rebuild {
	struct tft_writer *w;
	struct wtrack *wt;
	uint32_t mask;                                /* levels to rebuild */
	struct tft_chunk_enc enc[TFT_STORE_LEVELS];
};

static int rebuild_emit(void *ctx, int level, const struct tft_event *ev)
{
	struct rebuild *rb = ctx;
	struct tft_chunk_enc *e = &rb->enc[level];
	int rc;

	if (!(rb->mask & (1u << level)))
		return 0;
	if ((rc = tft_chunk_enc_add(e, ev)))
		return rc;
	if (tft_chunk_enc_is_full(e, rb->w->chunk_events)) {
		rc = write_chunk(rb->w, &rb->w->main, rb->wt->t.id, level, e, rb->w->st[ST_CHUNK],
				 rb->w->zstd_level, NULL);
		tft_chunk_enc_reset(e, 0);
	}
	return rc;
}

/* Rebuild skipped-but-kept LOD levels from the track's raw chunks (rare). */
static int rebuild_levels(struct tft_writer *w, struct wtrack *wt, uint32_t mask)
{
	struct rebuild *rb = calloc(1, sizeof(*rb));
	struct tft_chunk_dec dec;
	struct tft_lod lod;
	uint64_t other[TFT_STORE_LEVELS] = { 0 }; /* the other levels: only counted */
	sqlite3_stmt *sel = NULL;
	int rc = 0, step;

	if (!rb)
		return w->failed = TFT_ENOMEM;
	rb->w = w;
	rb->wt = wt;
	rb->mask = mask;
	for (int k = 0; k < TFT_STORE_LEVELS; k++)
		tft_chunk_enc_init(&rb->enc[k]);
	tft_chunk_dec_init(&dec);
	dec.no_args = 1; /* the LOD builder reads none */
	tft_lod_init(&lod, wt->t.id);
	lod.quiet = ((1u << TFT_STORE_LEVELS) - 2u) & ~mask;
	lod.count = other;
	if (sqlite3_prepare_v2(w->db, "SELECT id, data FROM main.chunks WHERE track = ? AND level = 0"
				      " ORDER BY id", -1, &sel, NULL) != SQLITE_OK) {
		rc = db_fail(w, "rebuild lod");
		goto out;
	}
	sqlite3_bind_int64(sel, 1, wt->t.id);
	while (!rc && (step = sqlite3_step(sel)) == SQLITE_ROW) {
		struct tft_error err;
		tft_error_clear(&err);
		rc = tft_chunk_decode(&dec, sqlite3_column_blob(sel, 1),
				      (size_t)sqlite3_column_bytes(sel, 1), sqlite3_column_int64(sel, 0), &err);
		if (rc) {
			snprintf(w->errmsg, sizeof(w->errmsg), "rebuild lod: %.280s", err.msg);
			rc = w->failed = TFT_EIO;
			break;
		}
		for (uint32_t i = 0; i < dec.n && !rc; i++) {
			dec.ev[i].nargs = 0;
			dec.ev[i].args = NULL;
			rc = tft_lod_add(&lod, &dec.ev[i], rebuild_emit, rb);
		}
	}
	if (!rc && step != SQLITE_DONE)
		rc = db_fail(w, "rebuild lod");
	if (!rc)
		rc = tft_lod_flush(&lod, rebuild_emit, rb);
	for (int k = 1; k < TFT_STORE_LEVELS && !rc; k++)
		if (rb->enc[k].n)
			rc = write_chunk(w, &w->main, wt->t.id, k, &rb->enc[k], w->st[ST_CHUNK],
					 w->zstd_level, NULL);
out:
	sqlite3_finalize(sel);
	for (int k = 0; k < TFT_STORE_LEVELS; k++)
		tft_chunk_enc_fini(&rb->enc[k]);
	tft_chunk_dec_fini(&dec);
	tft_lod_fini(&lod);
	free(rb);
	if (rc && !w->failed)
		w->failed = rc;
	return rc;
}

static int prune_lod(struct tft_writer *w, struct wtrack *wt)
{
	sqlite3_stmt *st;
	uint64_t finer = wt->n_level[0];
	uint32_t rebuild = 0;
	int rc;

	st = w->st[ST_DEL_LOD];
	sqlite3_bind_int64(st, 1, wt->t.id);
	if ((rc = step_reset(w, st, "delete lod")))
		return rc;
	if (finer && (rc = write_lod_row(w, wt->t.id, 0, finer)))
		return rc;
	for (int k = 1; k < TFT_STORE_LEVELS; k++) {
		uint64_t n = wt->n_level[k];
		if (!n)
			continue;
		if (wt->n_level[0] >= TFT_LOD_MIN_RAW_EVENTS && n <= finer / TFT_LOD_KEEP_DIV) {
			if ((rc = write_lod_row(w, wt->t.id, k, n)))
				return rc;
			finer = n;
			if (wt->lod.quiet & (1u << k)) {
				rebuild |= 1u << k;
			} else if (!w->flush_partial) {
				st = w->st[ST_KEEP];
				sqlite3_bind_int64(st, 1, wt->t.id);
				sqlite3_bind_int(st, 2, k);
				if ((rc = step_reset(w, st, "keep level")))
					return rc;
			}
			continue;
		}
		if (!w->flush_partial)
			continue; /* staged: simply not copied */
		st = w->st[ST_DEL_LEVEL];
		sqlite3_bind_int64(st, 1, wt->t.id);
		sqlite3_bind_int(st, 2, k);
		if ((rc = step_reset(w, st, "delete level")))
			return rc;
	}
	return rebuild ? rebuild_levels(w, wt, rebuild) : 0;
}

/*
 * Copy the kept staged LOD chunks into the session, recompressed at its zstd
 * level. (Re-sorting their events by start would save ~2% of the file but
 * costs ~20% more write time: not done.)
 */
static int unstage(struct tft_writer *w)
{
	sqlite3_stmt *sel = NULL, *ins = w->st[ST_CHUNK];
	struct wctx *c = &w->main;
	ZSTD_DCtx *dctx = ZSTD_createDCtx();
	int rc = 0, step;

	if (!dctx)
		return w->failed = TFT_ENOMEM;
	if (sqlite3_prepare_v2(w->db, UNSTAGE_SQL, -1, &sel, NULL) != SQLITE_OK) {
		rc = db_fail(w, "read staged lod");
		goto out;
	}
	while ((step = sqlite3_step(sel)) == SQLITE_ROW) {
		const void *blob = sqlite3_column_blob(sel, 5);
		size_t len = (size_t)sqlite3_column_bytes(sel, 5), r;
		unsigned long long raw = ZSTD_getFrameContentSize(blob, len);

		c->scratch.len = 0;
		if (raw == ZSTD_CONTENTSIZE_UNKNOWN || raw == ZSTD_CONTENTSIZE_ERROR ||
		    raw > TFT_CHUNK_MAX_PAYLOAD_BYTES || tft_chunk_buf_reserve(&c->scratch, raw + 1) ||
		    ZSTD_isError(r = ZSTD_decompressDCtx(dctx, c->scratch.p, raw, blob, len)) || r != raw) {
			snprintf(w->errmsg, sizeof(w->errmsg), "staged lod chunk unreadable");
			rc = w->failed = TFT_EIO;
			goto out;
		}
		c->blob.len = 0;
		if (tft_chunk_buf_reserve(&c->blob, ZSTD_compressBound(raw))) {
			rc = w->failed = TFT_ENOMEM;
			goto out;
		}
		r = ZSTD_compressCCtx(c->cctx, c->blob.p, c->blob.cap, c->scratch.p, raw, w->zstd_level);
		if (ZSTD_isError(r)) {
			snprintf(w->errmsg, sizeof(w->errmsg), "chunk compression failed");
			rc = w->failed = TFT_EIO;
			goto out;
		}
		for (int i = 0; i < 5; i++)
			sqlite3_bind_int64(ins, i + 1, sqlite3_column_int64(sel, i));
		sqlite3_bind_blob(ins, 6, c->blob.p, (int)r, SQLITE_STATIC);
		if ((rc = step_reset(w, ins, "insert chunk")))
			goto out;
	}
	if (step != SQLITE_DONE)
		rc = db_fail(w, "read staged lod");
out:
	sqlite3_finalize(sel);
	ZSTD_freeDCtx(dctx);
	/*
	 * The staging tables are left as they are: the temp database goes with
	 * the connection, while dropping them would free every page of the
	 * dropped levels first (~30 ms for 8 MB of staged chunks).
	 */
	return rc;
}

int tft_writer_failure(const struct tft_writer *w, struct tft_error *err)
{
	int rc = failed_now(w);

	if (rc && err)
		tft_error_set(err, rc, -1, "%s", w->errmsg[0] ? w->errmsg : tft_strerror(rc));
	return rc;
}

int tft_writer_close(struct tft_writer *w, struct tft_error *err)
{
	int rc = 0;

	if (!w)
		return 0;
	writer_sync(w);
	if (w->failed) {
		rc = report(w, err, w->failed);
		goto out;
	}
	rc = close_attached(w);
	if (rc && !w->errmsg[0])
		snprintf(w->errmsg, sizeof(w->errmsg), "could not link the inputs' flows: %s",
			 tft_strerror(rc));
	for (uint32_t i = 0; i < w->ntracks && !rc; i++)
		rc = lod_end(w, w->tracks[i]);
	for (uint32_t i = 0; i < w->ntracks && !rc; i++)
		rc = agg_end(w, w->tracks[i]);
	if (!rc)
		rc = flush_all(w, 1);
	for (uint32_t i = 0; i < w->ntracks && !rc; i++)
		rc = agg_write_sum(w, w->tracks[i]);
	if (!rc)
		rc = flush_flows(w);
	for (uint32_t i = 0; i < w->ntracks && !rc; i++)
		rc = prune_lod(w, w->tracks[i]);
	if (!rc && !w->flush_partial)
		rc = unstage(w);
	if (!rc)
		rc = write_rows(w);
	if (!rc)
		rc = exec_sql(w, "COMMIT");
	if (rc) {
		report(w, err, rc);
		goto out;
	}
	for (int i = 0; i < ST_COUNT; i++) {
		sqlite3_finalize(w->st[i]);
		w->st[i] = NULL;
	}
	/* A finished session is one self-contained file; stays WAL if a reader holds it. */
	sqlite3_exec(w->db, "PRAGMA journal_mode=DELETE", NULL, NULL, NULL);
	if (sqlite3_close(w->db) != SQLITE_OK) {
		rc = report(w, err, db_fail(w, "close"));
		sqlite3_close_v2(w->db);
	}
	w->db = NULL;
	/* Bulk mode never synced: make the finished file durable before a caller renames it. */
	if (!rc && w->bulk && w->path) {
		int fd = open(w->path, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || fsync(fd) != 0) {
			snprintf(w->errmsg, sizeof(w->errmsg), "sync: %s", strerror(errno));
			rc = report(w, err, TFT_EIO);
		}
		if (fd >= 0)
			close(fd);
	}
out:
	writer_free(w);
	return rc;
}

void tft_writer_abort(struct tft_writer *w)
{
	if (!w)
		return;
	if (w->db)
		sqlite3_exec(w->db, "ROLLBACK", NULL, NULL, NULL);
	writer_free(w);
}

struct sqlite3 *tft_writer_db(struct tft_writer *w)
{
	return w->db;
}
