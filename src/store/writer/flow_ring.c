/* SPDX-License-Identifier: MIT */
/*
 * The writer's flows: a ring of flow chunks filled by the caller,
 * encoded by helper threads and inserted in order (tft_writer_add_flow and
 * the in-place tft_writer_flow_room/flows_add). The helpers run beside the
 * caller for the writer's life, a pipeline rather than core/workers.h's
 * fan-out (which blocks its caller until every worker returns).
 */
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "store/writer/writer_int.h"

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
void tft_wr_flows_fini(struct tft_writer *w)
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
			tft_wr_set_failed(w, s->rc);
			return s->rc;
		}
		if (w->nwk)
			pthread_mutex_lock(&w->db_mu);
		sqlite3_bind_int64(st, 1, s->n);
		sqlite3_bind_int64(st, 2, s->t_min);
		sqlite3_bind_int64(st, 3, s->t_max);
		sqlite3_bind_blob(st, 4, s->blob.p, (int)s->blob.len, SQLITE_STATIC);
		rc = tft_wr_step_reset(w, st, "insert flow chunk");
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
int tft_wr_flush_flows(struct tft_writer *w)
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

