/* SPDX-License-Identifier: MIT */
/*
 * The one fan-out the importers and analyses share: run a function on N
 * workers at once (the calling thread is worker 0) and hand out numbered jobs
 * to whichever worker asks next.
 *
 * Ownership: tft_workers_run() owns the threads it starts and joins them all
 * before it returns; ctx stays the caller's. A worker whose thread cannot be
 * started runs on the calling thread after worker 0 instead, so every worker
 * runs exactly once whatever the system allows (per-worker state is always
 * visited, and a shared job queue is always drained).
 */
#ifndef TFT_CORE_WORKERS_H
#define TFT_CORE_WORKERS_H

#include <stdatomic.h>
#include <stdint.h>

/* The most workers one call runs (more are clamped: the machines we run on have fewer cores). */
#define TFT_WORKERS_MAX 64u

/* Run fn(ctx, w) for w in [0, n) at once, n clamped to [1, TFT_WORKERS_MAX]; returns when all have returned. */
void tft_workers_run(unsigned n, void (*fn)(void *ctx, unsigned worker), void *ctx);

/* How many workers to use for `jobs` jobs: the online CPUs, at most `cap` (0: no cap) and at most jobs (>= 1). */
unsigned tft_workers_pick(uint64_t jobs, unsigned cap);

/* A queue of jobs numbered 0..n-1, taken in order by any number of workers. */
struct tft_jobq {
	atomic_uint_fast32_t next;
	uint32_t n;
};

static inline void tft_jobq_init(struct tft_jobq *q, uint32_t n)
{
	atomic_init(&q->next, 0);
	q->n = n;
}

/* The next job's number in *k and 1, or 0 when none is left. */
static inline int tft_jobq_take(struct tft_jobq *q, uint32_t *k)
{
	uint_fast32_t i = atomic_fetch_add_explicit(&q->next, 1, memory_order_relaxed);

	if (i >= q->n)
		return 0;
	*k = (uint32_t)i;
	return 1;
}

#endif
