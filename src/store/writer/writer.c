/* SPDX-License-Identifier: MIT */
/*
 * The session writer's core: opening a session file (SQLite setup,
 * prepared statements, the store threads), strings, processes and tracks as
 * the caller registers them, and what the driving thread knows of a track.
 * The rest of the writer is one concept per file beside this one: track.c
 * (the per-track store: depth, stats, LOD, chunks; the append paths),
 * lanes.c, workers.c, flow_ring.c, meta.c and close.c; writer_int.h holds
 * their shared structs.
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
#include "store/graph_tables.h"
#include "store/schema.h"
#include "store/wc_vfs.h"
#include "store/writer/writer_int.h"

void tft_wr_set_failed(struct tft_writer *w, int rc)
{
	if (!failed_now(w))
		__atomic_store_n(&w->failed, rc, __ATOMIC_RELEASE);
}

int tft_wr_db_fail(struct tft_writer *w, const char *what)
{
	int sys = sqlite3_system_errno(w->db); /* why the file could not be written: ENOSPC, EFBIG */

	snprintf(w->errmsg, sizeof(w->errmsg), "%s: %s%s%s%s", what, sqlite3_errmsg(w->db),
		 sys ? " (" : "", sys ? strerror(sys) : "", sys ? ")" : "");
	tft_wr_set_failed(w, TFT_EIO);
	return w->failed;
}

int tft_wr_exec_sql(struct tft_writer *w, const char *sql)
{
	if (sqlite3_exec(w->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return tft_wr_db_fail(w, sql);
	return 0;
}

int tft_wr_step_reset(struct tft_writer *w, sqlite3_stmt *st, const char *what)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (rc != SQLITE_DONE)
		return tft_wr_db_fail(w, what);
	return 0;
}

int tft_wr_report(struct tft_writer *w, struct tft_error *err, int rc)
{
	if (rc)
		tft_error_set(err, rc, -1, "%s", w->errmsg[0] ? w->errmsg : tft_strerror(rc));
	return rc;
}


/* ---- open ------------------------------------------------------------------------- */

void tft_wr_ctx_fini(struct wctx *c)
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



void tft_wr_free(struct tft_writer *w)
{
	tft_wr_workers_stop(w);
	tft_graph_tables_free(w->graphs); /* its statements, before the handle closes */
	for (int i = 0; i < ST_COUNT; i++)
		sqlite3_finalize(w->st[i]);
	if (w->db)
		sqlite3_close(w->db);
	tft_wr_ctx_fini(&w->main);
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
		tft_wr_agg_free_all(wt);
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
	tft_wr_flows_fini(w);
	for (uint32_t i = 0; i < w->natt; i++) {
		const struct wattach *a = &w->att[w->att_order[i]];
		if (a->free_ctx)
			a->free_ctx(a->ctx);
	}
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
	 * 64 KB writes instead of one per 4 KB page, less kernel CPU for the same
	 * file (BENCHMARKS.md, "Store: design measurements"). The blobs'
	 * writeback kicks still find the pages in the file, at most the
	 * window's 1 MB later. Not live mode: its readers follow the
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
	 * insert, while the input is still being read, rather than all by the
	 * final COMMIT on one thread (BENCHMARKS.md, "Store: design
	 * measurements"). The session is the same, byte for byte.
	 */
	if (tft_wr_exec_sql(w, "PRAGMA page_size=4096") ||
	    tft_wr_exec_sql(w, bulk ? "PRAGMA journal_mode=OFF" : "PRAGMA journal_mode=WAL") ||
	    tft_wr_exec_sql(w, bulk ? "PRAGMA synchronous=OFF" : "PRAGMA synchronous=NORMAL") ||
	    tft_wr_exec_sql(w, bulk ? "PRAGMA cache_size=-2048" : "PRAGMA cache_size=-16384") ||
	    tft_wr_exec_sql(w, "PRAGMA temp_store=FILE") || tft_wr_exec_sql(w, "BEGIN") ||
	    tft_wr_exec_sql(w, TFT_SCHEMA_SQL) || (!w->flush_partial && tft_wr_exec_sql(w, STAGE_SQL))) {
		tft_wr_report(w, err, w->failed);
		goto fail;
	}
	for (int i = 0; i < ST_COUNT; i++) {
		if (w->flush_partial && (i == ST_STAGE || i == ST_KEEP || i == ST_UNSTAGE_TRACK))
			continue; /* live mode writes LOD chunks straight into the session */
		if (sqlite3_prepare_v3(w->db, stmt_sql[i], -1, SQLITE_PREPARE_PERSISTENT, &w->st[i],
				       NULL) != SQLITE_OK) {
			tft_wr_report(w, err, tft_wr_db_fail(w, "prepare"));
			goto fail;
		}
	}
	if (tft_writer_add_count(w, TFT_COUNT_SCHEMA_VERSION, TFT_SCHEMA_VERSION) ||
	    tft_writer_set_meta(w, "created_by", "tftracer " TFT_VERSION_STRING) ||
	    tft_writer_commit(w, err))
		goto fail;
	if (threads && tft_wr_workers_start(w, (uint32_t)threads)) {
		tft_error_set(err, TFT_ENOMEM, -1,
			      "cannot start store threads (TFT_STORE_THREADS=0 stores on this thread)");
		goto fail;
	}
	return w;
fail:
	tft_wr_free(w);
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
	if (tft_grow((void **)&w->procs, &w->cap_procs, (uint64_t)w->nprocs + 1, sizeof(*w->procs)))
		return TFT_NONE;
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
		/* two arrays of one capacity: it moves only when both grew */
		uint32_t ct = w->cap_tracks, cc = w->cap_tracks;
		if (tft_grow((void **)&w->tracks, &ct, (uint64_t)w->ntracks + 1, sizeof(*w->tracks)) ||
		    tft_grow((void **)&w->calls, &cc, (uint64_t)w->ntracks + 1, sizeof(*w->calls)))
			return TFT_NONE;
		w->cap_tracks = ct;
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


struct tft_track *tft_writer_track(struct tft_writer *w, uint32_t id)
{
	if (id >= w->ntracks)
		return NULL;
	tft_wr_sync(w); /* workers read the kind; the caller may change it */
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

struct tft_graph_tables *tft_writer_graphs(struct tft_writer *w, int create, struct tft_error *err)
{
	if (!w->graphs && create)
		w->graphs = tft_graph_tables_open(w->db, err);
	return w->graphs;
}
