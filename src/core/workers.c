/* SPDX-License-Identifier: MIT */
/* Fan-out over worker threads (see workers.h). */
#include "core/workers.h"

#include <pthread.h>
#include <stdbool.h>
#include <unistd.h>

struct worker_arg {
	void (*fn)(void *ctx, unsigned worker);
	void *ctx;
	unsigned worker;
	pthread_t thread;
	bool started;
};

static void *worker_main(void *p)
{
	struct worker_arg *a = p;

	a->fn(a->ctx, a->worker);
	return NULL;
}

void tft_workers_run(unsigned n, void (*fn)(void *ctx, unsigned worker), void *ctx)
{
	struct worker_arg a[TFT_WORKERS_MAX];

	if (n < 1)
		n = 1;
	if (n > TFT_WORKERS_MAX)
		n = TFT_WORKERS_MAX;
	for (unsigned i = 0; i < n; i++) {
		a[i] = (struct worker_arg){ .fn = fn, .ctx = ctx, .worker = i };
		if (i > 0)
			a[i].started = pthread_create(&a[i].thread, NULL, worker_main, &a[i]) == 0;
	}
	fn(ctx, 0);
	for (unsigned i = 1; i < n; i++)
		if (!a[i].started)
			fn(ctx, i); /* (its thread did not start: it runs here) */
	for (unsigned i = 1; i < n; i++)
		if (a[i].started)
			pthread_join(a[i].thread, NULL);
}

unsigned tft_workers_pick(uint64_t jobs, unsigned cap)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t n = cpus > 0 ? (uint64_t)cpus : 1;

	if (cap && n > cap)
		n = cap;
	if (n > TFT_WORKERS_MAX)
		n = TFT_WORKERS_MAX;
	if (n > jobs)
		n = jobs;
	return n ? (unsigned)n : 1;
}
