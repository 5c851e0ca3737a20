/* SPDX-License-Identifier: MIT */
/*
 * The writer's store worker threads (opts.threads > 0): the append
 * path copies each event into the current batch of the worker that owns its
 * track (track.c); full batches are queued to that long-lived worker, which
 * stores them in order. A bounded pool of batches per worker bounds memory:
 * the caller waits for a free batch when a worker falls behind.
 * Not core/workers.h: that fan-out blocks its caller until every worker
 * returns, while these run beside the driving thread for the writer's life.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "store/writer/writer_int.h"

struct wbatch *tft_wr_batch_get(struct wworker *k)
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

void tft_wr_batch_submit(struct wworker *k, struct wbatch *b)
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
			rc = tft_likely(j->ev.kind != WJOB_END_TRACK) ? tft_wr_store_job(w, j->wt, &j->ev)
								      : tft_wr_end_track(w, j->wt);
			if (tft_unlikely(rc)) {
				pthread_mutex_lock(&w->db_mu);
				if (!w->errmsg[0])
					snprintf(w->errmsg, sizeof(w->errmsg), "storing an event: %s",
						 tft_strerror(rc));
				tft_wr_set_failed(w, rc);
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
int tft_wr_sync(struct tft_writer *w)
{
	for (uint32_t i = 0; i < w->nwk; i++) {
		struct wworker *k = &w->wk[i];
		if (k->cur && k->cur->n) {
			tft_wr_batch_submit(k, k->cur);
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

int tft_wr_workers_start(struct tft_writer *w, uint32_t n)
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
		return TFT_ENOMEM; /* tft_wr_free() stops the started ones */
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

/* Stop and join the workers (queued work is dropped: call tft_wr_sync first to keep it). */
void tft_wr_workers_stop(struct tft_writer *w)
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
		tft_wr_ctx_fini(&k->ctx);
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

