/* SPDX-License-Identifier: MIT */
/*
 * Committing and closing a session: rows of strings, processes,
 * tracks, meta and LOD written at each commit; at close the open chunks are
 * flushed, the levels of detail worth keeping chosen (too-short levels
 * rebuilt or pruned) and the staged LOD chunks copied into the session.
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

#include "core/strtab.h"
#include "store/graph_tables.h"
#include "store/writer/writer_int.h"

static int write_rows(struct tft_writer *w)
{
	sqlite3_stmt *st;
	uint32_t nstr = tft_strtab_count(w->strs);
	int rc;

	if (w->nflows != w->nflows_written) {
		if ((rc = tft_writer_add_count(w, TFT_COUNT_FLOW_COUNT,
						 (int64_t)(w->nflows - w->nflows_written))))
			return rc;
		w->nflows_written = w->nflows;
	}
	st = w->st[ST_STRING];
	for (uint32_t id = w->strs_written; id < nstr; id++) {
		size_t len;
		const char *s = tft_strtab_get(w->strs, id, &len);
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_text(st, 2, s, (int)len, SQLITE_STATIC);
		if ((rc = tft_wr_step_reset(w, st, "insert string")))
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
		if ((rc = tft_wr_step_reset(w, st, "insert process")))
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
		if ((rc = tft_wr_step_reset(w, st, "insert track")))
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
		if ((rc = tft_wr_step_reset(w, st, "insert meta")))
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
	return tft_wr_step_reset(w, st, "insert lod");
}

int tft_writer_commit(struct tft_writer *w, struct tft_error *err)
{
	int rc;

	tft_wr_sync(w);
	if (w->failed)
		return tft_wr_report(w, err, w->failed);
	if (w->flush_partial) {
		if ((rc = tft_wr_flush_all(w, 0)) || (rc = tft_wr_flush_flows(w)))
			return tft_wr_report(w, err, rc);
		/* Live readers see every level written so far; close() prunes. */
		for (uint32_t i = 0; i < w->ntracks; i++)
			for (int k = 0; k < TFT_STORE_LEVELS; k++)
				if (w->tracks[i]->n_level[k] &&
				    (rc = write_lod_row(w, i, k, w->tracks[i]->n_level[k])))
					return tft_wr_report(w, err, rc);
	}
	if ((rc = write_rows(w)) || (rc = tft_wr_exec_sql(w, "COMMIT")) || (rc = tft_wr_exec_sql(w, "BEGIN")))
		return tft_wr_report(w, err, rc);
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
		rc = tft_wr_write_chunk(rb->w, &rb->w->main, rb->wt->t.id, level, e, rb->w->st[ST_CHUNK],
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
		rc = tft_wr_db_fail(w, "rebuild lod");
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
		rc = tft_wr_db_fail(w, "rebuild lod");
	if (!rc)
		rc = tft_lod_flush(&lod, rebuild_emit, rb);
	for (int k = 1; k < TFT_STORE_LEVELS && !rc; k++)
		if (rb->enc[k].n)
			rc = tft_wr_write_chunk(w, &w->main, wt->t.id, k, &rb->enc[k], w->st[ST_CHUNK],
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
	if ((rc = tft_wr_step_reset(w, st, "delete lod")))
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
				if ((rc = tft_wr_step_reset(w, st, "keep level")))
					return rc;
			}
			continue;
		}
		if (!w->flush_partial)
			continue; /* staged: simply not copied */
		st = w->st[ST_DEL_LEVEL];
		sqlite3_bind_int64(st, 1, wt->t.id);
		sqlite3_bind_int(st, 2, k);
		if ((rc = tft_wr_step_reset(w, st, "delete level")))
			return rc;
	}
	return rebuild ? rebuild_levels(w, wt, rebuild) : 0;
}

/*
 * Copy the kept staged LOD chunks into the session, recompressed at its zstd
 * level; not re-sorted by start, which costs more write time than the file
 * size it saves (BENCHMARKS.md, "Store: design measurements").
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
		rc = tft_wr_db_fail(w, "read staged lod");
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
		if ((rc = tft_wr_step_reset(w, ins, "insert chunk")))
			goto out;
	}
	if (step != SQLITE_DONE)
		rc = tft_wr_db_fail(w, "read staged lod");
out:
	sqlite3_finalize(sel);
	ZSTD_freeDCtx(dctx);
	/*
	 * The staging tables are left as they are: the temp database goes with
	 * the connection, while dropping them would free every page of the
	 * dropped levels first (measured: BENCHMARKS.md, "Store: design measurements").
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
	tft_wr_sync(w);
	if (w->failed) {
		rc = tft_wr_report(w, err, w->failed);
		goto out;
	}
	rc = tft_wr_close_attached(w);
	if (rc && !w->errmsg[0])
		snprintf(w->errmsg, sizeof(w->errmsg), "could not link the inputs' flows: %s",
			 tft_strerror(rc));
	for (uint32_t i = 0; i < w->ntracks && !rc; i++)
		rc = tft_wr_lod_end(w, w->tracks[i]);
	for (uint32_t i = 0; i < w->ntracks && !rc; i++)
		rc = tft_wr_agg_end(w, w->tracks[i]);
	if (!rc)
		rc = tft_wr_flush_all(w, 1);
	for (uint32_t i = 0; i < w->ntracks && !rc; i++)
		rc = tft_wr_agg_write_sum(w, w->tracks[i]);
	if (!rc)
		rc = tft_wr_flush_flows(w);
	for (uint32_t i = 0; i < w->ntracks && !rc; i++)
		rc = prune_lod(w, w->tracks[i]);
	if (!rc && !w->flush_partial)
		rc = unstage(w);
	if (!rc)
		rc = write_rows(w);
	if (!rc)
		rc = tft_wr_exec_sql(w, "COMMIT");
	if (rc) {
		tft_wr_report(w, err, rc);
		goto out;
	}
	for (int i = 0; i < ST_COUNT; i++) {
		sqlite3_finalize(w->st[i]);
		w->st[i] = NULL;
	}
	tft_graph_tables_free(w->graphs);
	w->graphs = NULL;
	/* A finished session is one self-contained file; stays WAL if a reader holds it. */
	sqlite3_exec(w->db, "PRAGMA journal_mode=DELETE", NULL, NULL, NULL);
	if (sqlite3_close(w->db) != SQLITE_OK) {
		rc = tft_wr_report(w, err, tft_wr_db_fail(w, "close"));
		sqlite3_close_v2(w->db);
	}
	w->db = NULL;
	/* Bulk mode never synced: make the finished file durable before a caller renames it. */
	if (!rc && w->bulk && w->path) {
		int fd = open(w->path, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || fsync(fd) != 0) {
			snprintf(w->errmsg, sizeof(w->errmsg), "sync: %s", strerror(errno));
			rc = tft_wr_report(w, err, TFT_EIO);
		}
		if (fd >= 0)
			close(fd);
	}
out:
	tft_wr_free(w);
	return rc;
}

void tft_writer_abort(struct tft_writer *w)
{
	if (!w)
		return;
	if (w->db)
		sqlite3_exec(w->db, "ROLLBACK", NULL, NULL, NULL);
	tft_wr_free(w);
}

