/* SPDX-License-Identifier: MIT */
/*
 * Runtime under concurrency (meant for TSAN=1 too): 8 threads x N events
 * into their rings while the drain runs, with and without drops; the drop
 * accounting must be exact (events + dropped == emitted) and the session
 * must hold exactly the events recorded. TFT_TSAN_FULL=1: 10M events per
 * thread. Also: threads that come and go, stats and tracing toggles from
 * other threads while recording.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TFT_ENABLE 1
#include "store/session.h"
#include "tap.h"
#include "tftracer/tftracer.h"
#include "tftracer/zone.h"

#define NTHREADS 8

static char tmpdir[256];
static uint64_t per_thread;
static pthread_barrier_t barrier;

static const char *tpath(const char *name)
{
	static char buf[4][512];
	static int k;
	char *p = buf[k++ & 3];

	snprintf(p, 512, "%s/%s", tmpdir, name);
	return p;
}

static struct tft_runtime_stats get_stats(void)
{
	struct tft_runtime_stats s;

	memset(&s, 0, sizeof(s));
	s.struct_size = sizeof(s);
	tft_stats(&s);
	return s;
}

struct worker {
	int id;
	uint64_t emitted;
};

/* zone { instant; counter } = 4 events per iteration; per_thread events in all. */
static void *worker(void *p)
{
	struct worker *w = p;
	char name[16];

	snprintf(name, sizeof(name), "worker %d", w->id);
	tft_thread_name(name); /* a name record: not counted */
	pthread_barrier_wait(&barrier);
	for (uint64_t i = 0; i + 4 <= per_thread; i += 4) {
		TFT_ZONE_BEGIN(z, "iter");
		TFT_INSTANT("tick");
		TFT_COUNTER("progress", (double)i);
		TFT_ZONE_END(z);
		w->emitted += 4;
	}
	return NULL;
}

static atomic_int stop_poller;

static void *poller(void *p)
{
	uint64_t *n = p;

	while (!atomic_load(&stop_poller)) {
		struct tft_runtime_stats s = get_stats();
		(void)s;
		(*n)++;
		usleep(1000);
	}
	return NULL;
}

static void run(const char *name, size_t ring, int expect_drops)
{
	struct worker w[NTHREADS];
	pthread_t th[NTHREADS], pt;
	struct tft_runtime_stats st;
	struct tft_session *s;
	struct tft_config cfg;
	uint64_t emitted = 0, polls = 0;

	tft_config_init(&cfg);
	cfg.exit_timeout_ms = 60000; /* a loaded CI machine */
	cfg.session_path = tpath(name);
	cfg.buffer_bytes = ring;
	ok(tft_init(&cfg) == 0, "%s: init", name);
	pthread_barrier_init(&barrier, NULL, NTHREADS);
	atomic_store(&stop_poller, 0);
	pthread_create(&pt, NULL, poller, &polls);
	for (int i = 0; i < NTHREADS; i++) {
		w[i].id = i;
		w[i].emitted = 0;
		pthread_create(&th[i], NULL, worker, &w[i]);
	}
	for (int i = 0; i < NTHREADS; i++) {
		pthread_join(th[i], NULL);
		emitted += w[i].emitted;
	}
	atomic_store(&stop_poller, 1);
	pthread_join(pt, NULL);
	pthread_barrier_destroy(&barrier);
	ok(tft_shutdown() == 0, "%s: shutdown", name);
	st = get_stats();
	ok(st.events + st.dropped == emitted,
	   "%s: events %llu + dropped %llu == emitted %llu", name, (unsigned long long)st.events,
	   (unsigned long long)st.dropped, (unsigned long long)emitted);
	if (expect_drops)
		ok(st.dropped > 0, "%s: the small ring dropped (%llu)", name,
		   (unsigned long long)st.dropped);
	else if (per_thread * 32 <= ring) /* the whole run fits the ring */
		is_int(st.dropped, 0, "nothing dropped with large rings");
	is_int(st.threads, NTHREADS, "all threads recorded");
	s = tft_session_open(tpath(name), NULL);
	ok(s != NULL, "%s: session opens", name);
	if (s) {
		struct tft_session_summary sum;
		int nthread_tracks = 0;
		tft_session_get_summary(s, &sum);
		is_int(sum.slices * 2 + sum.instants + sum.counters, st.events,
		       "session holds exactly the events recorded");
		is_int(sum.dropped, st.dropped, "session's dropped count matches");
		for (uint32_t i = 0; i < tft_session_track_count(s); i++)
			if (tft_session_track(s, i)->kind == TFT_TRACK_THREAD)
				nthread_tracks++;
		is_int(nthread_tracks, NTHREADS, "one track per worker");
		tft_session_close(s);
	}
}

/* Threads that come and go while tracing toggles: no crash, no leak, counts bounded. */
static void *churn_thread(void *p)
{
	uint64_t *n = p;

	for (int i = 0; i < 2000; i++) {
		TFT_ZONE_BEGIN(z, "churn");
		TFT_MEM_ALLOC((void *)(uintptr_t)(0x1000 + i * 16), 16);
		TFT_MEM_FREE((void *)(uintptr_t)(0x1000 + i * 16));
		TFT_FLOW_BEGIN("f", i);
		TFT_FLOW_END("f", i);
		TFT_ZONE_END(z);
		(*n)++;
	}
	return NULL;
}

static void test_churn(void)
{
	struct tft_runtime_stats st;
	struct tft_config cfg;
	uint64_t n[4] = { 0 };

	tft_config_init(&cfg);
	cfg.exit_timeout_ms = 60000; /* a loaded CI machine */
	cfg.session_path = tpath("churn.tft");
	cfg.buffer_bytes = 64 << 10;
	cfg.flush_interval_ms = 5;
	is_int(tft_init(&cfg), 0, "churn: init");
	for (int round = 0; round < 10; round++) {
		pthread_t th[4];
		for (int i = 0; i < 4; i++)
			pthread_create(&th[i], NULL, churn_thread, &n[i]);
		tft_set_tracing(round % 2 == 0);
		if (round == 5)
			tft_trace_next_steps(1);
		tft_step_begin("round");
		for (int i = 0; i < 4; i++)
			pthread_join(th[i], NULL);
		tft_step_end();
		tft_flush(1000);
	}
	is_int(tft_shutdown(), 0, "churn: shutdown");
	st = get_stats();
	ok(st.events + st.dropped <= 10 * 4 * 2000 * 6 + 20,
	   "churn: counts bounded (%llu + %llu)", (unsigned long long)st.events,
	   (unsigned long long)st.dropped);
	ok(st.steps == 10, "churn: 10 steps");
}

int main(void)
{
	const char *full = getenv("TFT_TSAN_FULL");

	per_thread = full && *full == '1' ? 10000000 : 200000;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/tft-test-runtime-mt-XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	printf("# %d threads x %llu events\n", NTHREADS, (unsigned long long)per_thread);
	run("large.tft", (size_t)8 << 20, 0);
	run("small.tft", (size_t)16 << 10, 1);
	test_churn();
	{
		char cmd[600];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd) != 0)
			fprintf(stderr, "# could not remove %s\n", tmpdir);
	}
	return done_testing();
}
