/* SPDX-License-Identifier: MIT */
/*
 * core/workers: every worker runs exactly once, on distinct threads while they
 * can start, and a job queue hands each job to exactly one worker however many
 * take from it at once.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/workers.h"
#include "tap.h"

#define NJOBS 100000u

struct ctx {
	atomic_int ran[TFT_WORKERS_MAX];
	pthread_t self[TFT_WORKERS_MAX];
	struct tft_jobq q;
	atomic_uchar *taken;  /* per job: how many times it was taken */
	atomic_uint per[TFT_WORKERS_MAX];
	atomic_int waiting;   /* workers that reached the barrier */
	int nwait;            /* how many must reach it before any goes on */
};

static void run_one(void *p, unsigned w)
{
	struct ctx *c = p;
	uint32_t k;

	atomic_fetch_add(&c->ran[w], 1);
	c->self[w] = pthread_self();
	if (c->nwait) { /* all workers at once: proves they run concurrently */
		atomic_fetch_add(&c->waiting, 1);
		while (atomic_load(&c->waiting) < c->nwait)
			sched_yield();
	}
	while (c->taken && tft_jobq_take(&c->q, &k)) {
		atomic_fetch_add(&c->taken[k], 1);
		atomic_fetch_add(&c->per[w], 1);
	}
}

static void test_once(unsigned n)
{
	struct ctx *c = calloc(1, sizeof(*c));
	int once = 1;

	tft_workers_run(n, run_one, c);
	for (unsigned i = 0; i < TFT_WORKERS_MAX; i++)
		once &= atomic_load(&c->ran[i]) == (i < (n ? n : 1));
	ok(once, "%u workers: each ran exactly once, no other", n);
	ok(pthread_equal(c->self[0], pthread_self()), "%u workers: worker 0 is the calling thread", n);
	free(c);
}

static void test_concurrent(void)
{
	struct ctx *c = calloc(1, sizeof(*c));
	int distinct = 1;

	c->nwait = 4; /* would spin forever if the workers ran one after another */
	tft_workers_run(4, run_one, c);
	for (int i = 0; i < 4; i++)
		for (int j = i + 1; j < 4; j++)
			distinct &= !pthread_equal(c->self[i], c->self[j]);
	ok(distinct, "4 workers ran at once on 4 distinct threads");
	free(c);
}

static void test_queue(void)
{
	struct ctx *c = calloc(1, sizeof(*c));
	unsigned long sum = 0;
	int once = 1;

	c->taken = calloc(NJOBS, sizeof(*c->taken));
	tft_jobq_init(&c->q, NJOBS);
	tft_workers_run(8, run_one, c);
	for (uint32_t k = 0; k < NJOBS; k++)
		once &= atomic_load(&c->taken[k]) == 1;
	for (int w = 0; w < 8; w++)
		sum += atomic_load(&c->per[w]);
	ok(once, "8 workers, %u jobs: every job taken exactly once", NJOBS);
	is_int(sum, NJOBS, "the workers' job counts add up to the jobs");
	ok(!tft_jobq_take(&c->q, &(uint32_t){0}), "a drained queue hands out nothing more");
	free(c->taken);
	free(c);
}

static void test_pick(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	is_int(tft_workers_pick(0, 0), 1, "no jobs: one worker");
	is_int(tft_workers_pick(1, 0), 1, "one job: one worker");
	is_int(tft_workers_pick(1000, 1), 1, "capped at 1");
	is_int(tft_workers_pick(1000, 0), cpus < (long)TFT_WORKERS_MAX ? cpus : (long)TFT_WORKERS_MAX,
	       "many jobs: the online CPUs");
}

int main(void)
{
	test_once(0);
	test_once(1);
	test_once(3);
	test_once(TFT_WORKERS_MAX + 5);
	test_concurrent();
	test_queue();
	test_pick();
	return done_testing();
}
