/* SPDX-License-Identifier: MIT */
/*
 * Writer lanes: an importer's own threads each store the tracks they
 * claim, with a store context of their own (tft_writer_lane_*; the per-event
 * append is in track.c). Inserts are serialized by db_mu, interning by str_mu.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "core/grow.h"
#include "store/writer/writer_int.h"


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
int tft_wr_lane_claim(struct tft_writer_lane *l, struct wtrack *wt, struct wcall *c)
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
		if ((rc = tft_wr_lane_claim(l, c->wt, c)))
			return rc;
	} else if (c->wt->lane_ended) {
		return 0;
	}
	c->wt->lane_ended = 1;
	c->wt->lane_last = INT64_MAX;
	c->ended = 1; /* once per track: handed back ended */
	c->last_ts = INT64_MAX;
	return tft_wr_end_track(w, c->wt);
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
	if (__atomic_load_n(&c->wt->lane, __ATOMIC_RELAXED) != l && (*rc = tft_wr_lane_claim(l, c->wt, c)))
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
			rc = tft_wr_step_reset(w, w->st[ST_DEL_TRACK], "forget a track's chunks");
		}
		if (!rc && wt->nwritten) {
			sqlite3_bind_int64(w->st[ST_DEL_CSTATS], 1, track);
			rc = tft_wr_step_reset(w, w->st[ST_DEL_CSTATS], "forget a track's chunk statistics");
		}
		if (!rc && wt->nstaged && w->st[ST_UNSTAGE_TRACK]) {
			sqlite3_bind_int64(w->st[ST_UNSTAGE_TRACK], 1, track);
			rc = tft_wr_step_reset(w, w->st[ST_UNSTAGE_TRACK], "forget a track's chunks");
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
	tft_wr_agg_forget(wt);
	tft_wr_lod_forget(wt);
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
		r = wt->lane_ended ? 0 : tft_wr_flush_track(w, wt, 1);
		if (r && !rc)
			rc = r;
		wt->ctx = &w->main;
		wt->owned = 0;
		__atomic_store_n(&wt->lane, NULL, __ATOMIC_RELEASE); /* with events now: no lane can claim it again */
	}
	tft_wr_ctx_fini(&l->ctx);
	free(l);
	__atomic_fetch_sub(&w->nlanes, 1, __ATOMIC_RELAXED);
	if (rc)
		tft_wr_set_failed(w, rc);
	return failed_now(w);
}

