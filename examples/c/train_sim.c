/* SPDX-License-Identifier: MIT */
/*
 * A native program instrumented with the tftracer C API: a simulated
 * training loop (a loader thread feeding batches through a queue, forward /
 * backward / optimizer ops, a loss counter, memory and flow events).
 *
 *   train_sim [-o SESSION] [-n STEPS] [-u US_PER_OP] [-f N] [-t N]
 *     -o  session file (default: tftracer-%p.tft)
 *     -n  steps to run, 0 = until killed (default 20)
 *     -u  microseconds of busy work per op (default 200)
 *     -f  every N steps, tft_flush() and print what is now durable (for tests)
 *     -t  start with op-level tracing off and trace N steps on demand every 10
 * Build: make examples (links libtftracer.so; zone.h macros need -DTFT_ENABLE).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tftracer/tftracer.h"
#include "tftracer/zone.h"

#define QUEUE_CAP 4

struct batch {
	uint64_t id;
	float *data; /* owned */
	size_t bytes;
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct batch q[QUEUE_CAP];
	int head, n, stop;
} queue = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, { { 0, NULL, 0 } }, 0, 0, 0 };

static unsigned us_per_op = 200;

static void busy_us(unsigned us)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000 < (long)us);
}

static void *loader(void *arg)
{
	uint64_t id = 0;

	(void)arg;
	tft_thread_name("loader");
	for (;;) {
		struct batch b;
		{
			TFT_ZONE_CAT("load_batch", "io");
			b.id = ++id;
			b.bytes = 4096 * sizeof(float);
			b.data = malloc(b.bytes);
			if (!b.data)
				return NULL;
			TFT_MEM_ALLOC(b.data, b.bytes);
			for (size_t i = 0; i < b.bytes / sizeof(float); i++)
				b.data[i] = (float)(i % 7);
			busy_us(us_per_op);
			TFT_FLOW_BEGIN("batch", b.id);
		}
		pthread_mutex_lock(&queue.lock);
		while (queue.n == QUEUE_CAP && !queue.stop)
			pthread_cond_wait(&queue.cond, &queue.lock);
		if (queue.stop) {
			pthread_mutex_unlock(&queue.lock);
			TFT_MEM_FREE(b.data);
			free(b.data);
			return NULL;
		}
		queue.q[(queue.head + queue.n) % QUEUE_CAP] = b;
		queue.n++;
		TFT_COUNTER("queue depth", queue.n);
		pthread_cond_broadcast(&queue.cond);
		pthread_mutex_unlock(&queue.lock);
	}
}

static struct batch next_batch(void)
{
	struct batch b;

	TFT_ZONE("wait_batch");
	pthread_mutex_lock(&queue.lock);
	while (queue.n == 0)
		pthread_cond_wait(&queue.cond, &queue.lock);
	b = queue.q[queue.head];
	queue.head = (queue.head + 1) % QUEUE_CAP;
	queue.n--;
	pthread_cond_broadcast(&queue.cond);
	pthread_mutex_unlock(&queue.lock);
	TFT_FLOW_END("batch", b.id);
	return b;
}

/* One op = one zone with busy work; returns the zones it recorded (for -f). */
static int op(const struct tft_site *site)
{
	struct tft_zone z = tft_zone_begin(site);

	busy_us(us_per_op);
	tft_zone_end(z);
	return z.depth != 0;
}

static int layer(int i)
{
	static const struct tft_site matmul = { "matmul", "op", __FILE__, __LINE__, 0 };
	static const struct tft_site relu = { "relu", "op", __FILE__, __LINE__, 0 };
	TFT_ZONE_BEGIN(z, "layer");
	int n = op(&matmul) + op(&relu);

	(void)i;
	TFT_ZONE_END(z);
	return n + (z.depth != 0);
}

int main(int argc, char **argv)
{
	static const struct tft_site s_fwd = { "forward", "phase", __FILE__, __LINE__, 0 };
	static const struct tft_site s_bwd = { "backward", "phase", __FILE__, __LINE__, 0 };
	static const struct tft_site s_opt = { "optimizer", "phase", __FILE__, __LINE__, 0 };
	static const struct tft_site s_loss = { "loss", NULL, __FILE__, __LINE__, 0 };
	const char *path = NULL;
	long steps = 20, flush_every = 0, demand = 0;
	uint64_t zones = 0, counters = 0;
	struct tft_config cfg;
	pthread_t th;
	int c, rc;

	while ((c = getopt(argc, argv, "o:n:u:f:t:h")) != -1) {
		switch (c) {
		case 'o': path = optarg; break;
		case 'n': steps = atol(optarg); break;
		case 'u': us_per_op = (unsigned)atoi(optarg); break;
		case 'f': flush_every = atol(optarg); break;
		case 't': demand = atol(optarg); break;
		default:
			fprintf(stderr, "usage: %s [-o SESSION] [-n STEPS] [-u US] [-f N] [-t N]\n",
				argv[0]);
			return 2;
		}
	}
	tft_config_init(&cfg);
	cfg.session_path = path;
	cfg.enabled = demand == 0;
	rc = tft_init(&cfg);
	if (rc) {
		struct tft_runtime_stats st;
		memset(&st, 0, sizeof(st));
		st.struct_size = sizeof(st);
		tft_stats(&st);
		fprintf(stderr, "train_sim: tracing disabled: %s\n", st.disabled_reason);
	}
	tft_process_name("train_sim");
	tft_thread_name("main");
	pthread_create(&th, NULL, loader, NULL);

	for (long step = 0; steps == 0 || step < steps; step++) {
		struct batch b;
		double loss = 0;

		if (demand && step % 10 == 0)
			tft_trace_next_steps((int)demand);
		tft_step_begin("train");
		b = next_batch();
		{
			struct tft_zone z = tft_zone_begin(&s_fwd);
			for (int i = 0; i < 3; i++)
				zones += (uint64_t)layer(i);
			tft_zone_end(z);
			zones += z.depth != 0;
		}
		for (size_t i = 0; i < b.bytes / sizeof(float); i++)
			loss += b.data[i];
		loss = loss / 1e5 / (double)(step + 1);
		if (tft_is_tracing()) {
			tft_counter(&s_loss, loss);
			counters++;
		}
		{
			struct tft_zone z = tft_zone_begin(&s_bwd);
			for (int i = 0; i < 3; i++)
				zones += (uint64_t)layer(i);
			tft_zone_end(z);
			zones += z.depth != 0;
		}
		zones += (uint64_t)op(&s_opt);
		TFT_MEM_FREE(b.data);
		free(b.data);
		tft_step_end();
		if (flush_every && (step + 1) % flush_every == 0 && tft_flush(5000) == 0) {
			/* Everything counted so far is in the session file now. */
			printf("flushed steps=%ld zones=%llu counters=%llu\n", step + 1,
			       (unsigned long long)zones, (unsigned long long)counters);
			fflush(stdout);
		}
	}
	pthread_mutex_lock(&queue.lock);
	queue.stop = 1;
	pthread_cond_broadcast(&queue.cond);
	pthread_mutex_unlock(&queue.lock);
	pthread_join(th, NULL);
	while (queue.n) { /* batches the loader left in the queue */
		free(queue.q[queue.head].data);
		queue.head = (queue.head + 1) % QUEUE_CAP;
		queue.n--;
	}
	rc = tft_shutdown();
	{
		struct tft_runtime_stats st;
		char p[4096];
		memset(&st, 0, sizeof(st));
		st.struct_size = sizeof(st);
		tft_stats(&st);
		if (tft_runtime_path(p, sizeof(p)) < 0)
			p[0] = 0;
		fprintf(stderr,
			"train_sim: %s: %llu events, %llu dropped, %llu commits, %lld steps (shutdown %d)\n",
			p, (unsigned long long)st.events, (unsigned long long)st.dropped,
			(unsigned long long)st.flushes, (long long)st.steps, rc);
	}
	return rc ? 1 : 0;
}
