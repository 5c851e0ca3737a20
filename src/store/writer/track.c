/* SPDX-License-Identifier: MIT */
/*
 * The per-track store: each appended event's depth (stack nesting or
 * lanes), per-chunk statistics, level-of-detail summaries and chunk
 * encoding; chunks compressed and inserted as they fill. The append entry
 * points (tft_writer_append, tft_writer_lane_append, a worker's store_job)
 * live here so that store_event() inlines into each: one call per event.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "core/grow.h"
#include "store/writer/writer_int.h"

/* Compress e with c's state (outside the lock) and insert it with statement
 * st (chunks or the LOD stage). */
int tft_wr_write_chunk(struct tft_writer *w, struct wctx *c, uint32_t track, int level,
		       const struct tft_chunk_enc *e, sqlite3_stmt *st, int zlevel, int64_t *rowid)
{
	int rc = tft_chunk_enc_finish(e, c->cctx, zlevel, &c->scratch, &c->blob);
	int locked = w->nwk || __atomic_load_n(&w->nlanes, __ATOMIC_RELAXED), kick = 0;

	if (locked)
		pthread_mutex_lock(&w->db_mu);
	if (rc) {
		snprintf(w->errmsg, sizeof(w->errmsg), "chunk compression failed");
		tft_wr_set_failed(w, rc);
	} else {
		sqlite3_bind_int64(st, 1, track);
		sqlite3_bind_int(st, 2, level);
		sqlite3_bind_int64(st, 3, e->t_min);
		sqlite3_bind_int64(st, 4, e->t_max);
		sqlite3_bind_int64(st, 5, e->n);
		sqlite3_bind_blob(st, 6, c->blob.p, (int)c->blob.len, SQLITE_STATIC);
		rc = tft_wr_step_reset(w, st, "insert chunk");
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

void tft_wr_agg_free_all(struct wtrack *wt)
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
		tft_wr_set_failed(w, rc);
	} else {
		sqlite3_bind_int64(st, 1, id);
		if (two_keys)
			sqlite3_bind_int64(st, 2, track);
		sqlite3_bind_blob(st, two_keys ? 3 : 2, c->zblob, (int)zlen, SQLITE_STATIC);
		rc = tft_wr_step_reset(w, st, what);
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
int tft_wr_agg_write_sum(struct tft_writer *w, struct wtrack *wt)
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
int tft_wr_agg_end(struct tft_writer *w, struct wtrack *wt)
{
	int rc = 0;

	if (!wt->open)
		return 0;
	while (wt->nstack && !rc)
		rc = agg_close(w, wt, --wt->nstack);
	return rc;
}

/* A track forgotten (tft_writer_lane_reset_track): its statistics too. */
void tft_wr_agg_forget(struct wtrack *wt)
{
	struct tft_cstats_acc *keep = wt->acc_free;

	wt->acc_free = NULL;
	if (wt->acc)
		wt->ctx->open_bytes -= (size_t)wt->acc->nv * AGG_VAL_BYTES;
	for (struct tft_cstats_acc *a = wt->acc_wait; a; a = a->next)
		wt->ctx->open_bytes -= (size_t)a->nv * AGG_VAL_BYTES;
	tft_wr_agg_free_all(wt);
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
	rc = tft_wr_write_chunk(w, wt->ctx, wt->t.id, level, e, w->st[staged ? ST_STAGE : ST_CHUNK],
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

int tft_wr_flush_track(struct tft_writer *w, struct wtrack *wt, int release)
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
int tft_wr_flush_all(struct tft_writer *w, int release)
{
	for (uint32_t i = 0; i < w->ntracks; i++) {
		int rc = tft_wr_flush_track(w, w->tracks[i], release);
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
			int rc = w->tracks[i]->ctx == c ? tft_wr_flush_track(w, w->tracks[i], 1) : 0;
			if (rc)
				return rc;
		}
		return 0;
	}
	for (uint32_t i = 0; i < c->nown; i++) {
		int rc = tft_wr_flush_track(w, c->own[i], 1);
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
void tft_wr_lod_forget(struct wtrack *wt)
{
	wt->ctx->open_bytes -= (size_t)wt->npend * sizeof(*wt->pend);
	free(wt->pend);
	wt->pend = NULL;
	wt->npend = wt->cap_pend = 0;
}

/* The track's last events: its open LOD blocks out, its held-back events dropped if short. */
int tft_wr_lod_end(struct tft_writer *w, struct wtrack *wt)
{
	int rc;

	if (wt->n_level[0] < TFT_LOD_MIN_RAW_EVENTS)
		tft_wr_lod_forget(wt);
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
 * it keeps; the workers call it through tft_wr_store_job().
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
__attribute__((noinline)) int tft_wr_store_job(struct tft_writer *w, struct wtrack *wt,
					       const struct tft_event *ev)
{
	return store_event(w, wt, ev);
}

static int queue_event(struct tft_writer *w, struct wworker *k, struct wtrack *wt,
		       const struct tft_event *ev);


/* Flush wt's LOD summaries and open chunks and free its encoders (owner's thread). */
int tft_wr_end_track(struct tft_writer *w, struct wtrack *wt)
{
	int rc = tft_wr_lod_end(w, wt);

	if (!rc)
		rc = tft_wr_agg_end(w, wt);
	if (!rc)
		rc = tft_wr_flush_track(w, wt, 1);
	if (!rc)
		rc = tft_wr_agg_write_sum(w, wt);
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
	return tft_wr_end_track(w, wt);
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
	    (rc = tft_wr_lane_claim(l, wt, c)))
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

static int queue_event(struct tft_writer *w, struct wworker *k, struct wtrack *wt,
		       const struct tft_event *ev)
{
	struct wbatch *b = k->cur;
	struct wjob *j;

	if (tft_unlikely(!b || b->n == WB_EVENTS || b->nargs + ev->nargs > WB_ARGS)) {
		if (b)
			tft_wr_batch_submit(k, b);
		k->cur = b = tft_wr_batch_get(k);
		if (!b)
			return TFT_ENOMEM;
		if (tft_unlikely(ev->nargs > WB_ARGS)) { /* cannot be queued: store it here */
			int rc;
			tft_wr_sync(w);
			rc = failed_now(w) ? failed_now(w) : tft_wr_store_job(w, wt, ev);
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

