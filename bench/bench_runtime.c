/* SPDX-License-Identifier: MIT */
/*
 * Runtime micro-benchmark: ns per recorded event (tft_instant; a zone's
 * begin + end) against a bare rdtsc + store loop, an LTTng-UST tracepoint
 * (enabled in a live session when lttng-tools is installed) and the cost of
 * compiled-in but disabled calls. Ratios are taken within the same run.
 *
 *   bench_runtime [-n EVENTS_PER_BATCH] [-r BATCHES]
 * Env: BENCH_LTTNG=0 skips LTTng; BENCH_JSON=FILE appends one JSON line per result.
 * Build: make bench-runtime (links libtftracer.so; -llttng-ust when installed).
 * The LTTng provider is defined in this very file (LTTNG_UST_TRACEPOINT_INCLUDE
 * names it), so the parts below are guarded against its repeated inclusion.
 */
#ifndef TFT_BENCH_NO_LTTNG
#ifndef TFT_BENCH_PASS
#define TFT_BENCH_PASS 1
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#endif
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER tft_bench
#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "bench_runtime.c"
#if !defined(TFT_BENCH_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define TFT_BENCH_TP_H
#include <stdint.h>
#include <lttng/tracepoint.h>
LTTNG_UST_TRACEPOINT_EVENT(tft_bench, event, LTTNG_UST_TP_ARGS(uint64_t, v),
			   LTTNG_UST_TP_FIELDS(lttng_ust_field_integer(uint64_t, v, v)))
#endif
#include <lttng/tracepoint-event.h>
#endif /* TFT_BENCH_NO_LTTNG */

#ifndef LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ /* the benchmark proper: once */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include "tftracer/tftracer.h"
#include "tftracer/zone.h"

#define BARRIER() __asm__ __volatile__("" ::: "memory")

static long n_events = 1000000;
static int batches = 7;
static FILE *json;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

struct result {
	const char *name;
	double min_ns, median_ns;
};

static void report(struct result *r, const double *ns, int n)
{
	double s[64];

	memcpy(s, ns, (size_t)n * sizeof(double));
	qsort(s, (size_t)n, sizeof(double), cmp_double);
	r->min_ns = s[0];
	r->median_ns = s[n / 2];
	printf("%-34s min %7.2f ns/event   median %7.2f\n", r->name, r->min_ns, r->median_ns);
	if (json)
		fprintf(json, "{\"bench\":\"runtime\",\"case\":\"%s\",\"unit\":\"ns/event\",\"min\":%.3f,"
			      "\"median\":%.3f,\"n\":%ld,\"batches\":%d}\n",
			r->name, r->min_ns, r->median_ns, n_events, n);
}

/* ---- the cases: each runs n_events events and returns seconds ---------------------- */

struct rec {
	uint64_t tick;
	uint64_t kind;
	uint64_t p0, p1;
};
static struct rec *bare_ring;
static uint64_t bare_mask;

static double run_bare(void)
{
	static const struct tft_site site = { "bare", NULL, __FILE__, __LINE__, 0 };
	double t0 = now_s();

	for (long i = 0; i < n_events; i++) {
		struct rec *r = &bare_ring[(uint64_t)i & bare_mask];
		r->tick = __rdtsc();
		r->kind = 3;
		r->p0 = (uintptr_t)&site;
		BARRIER();
	}
	return now_s() - t0;
}

static double run_instant(void)
{
	static const struct tft_site site = { "instant", NULL, __FILE__, __LINE__, 0 };
	double t0 = now_s();

	for (long i = 0; i < n_events; i++)
		tft_instant(&site);
	return now_s() - t0;
}

static double run_zone(void) /* two events per iteration */
{
	double t0 = now_s();

	for (long i = 0; i < n_events / 2; i++) {
		TFT_ZONE_BEGIN(z, "zone");
		TFT_ZONE_END(z);
	}
	return now_s() - t0;
}

static double run_counter(void)
{
	double t0 = now_s();

	for (long i = 0; i < n_events; i++)
		TFT_COUNTER("counter", i);
	return now_s() - t0;
}

static double run_empty(void)
{
	double t0 = now_s();

	for (long i = 0; i < n_events; i++)
		BARRIER();
	return now_s() - t0;
}

#ifndef TFT_BENCH_NO_LTTNG
static double run_lttng(void)
{
	double t0 = now_s();

	for (long i = 0; i < n_events; i++)
		lttng_ust_tracepoint(tft_bench, event, (uint64_t)i);
	return now_s() - t0;
}

/* Start a user-space LTTng session that records tft_bench:event; 1 if enabled. */
static char lttng_dir[256];
static int lttng_session;
static int lttng_daemon_started;

static int sh(const char *cmd)
{
	return system(cmd);
}

static int lttng_start(void)
{
	char cmd[512];

	if (sh("command -v lttng >/dev/null 2>&1") != 0) {
		printf("# lttng-tools not installed: the LTTng tracepoint stays disabled\n");
		return 0;
	}
	snprintf(lttng_dir, sizeof(lttng_dir), "/tmp/tft-bench-lttng-%d", (int)getpid());
	snprintf(cmd, sizeof(cmd),
		 "lttng create tftbench%d --output=%s >/dev/null 2>&1", (int)getpid(), lttng_dir);
	if (sh(cmd) != 0) {
		if (sh("lttng-sessiond --daemonize --no-kernel --pidfile=/tmp/tft-bench-sessiond.pid "
		       ">/dev/null 2>&1") != 0 || sh(cmd) != 0) {
			printf("# cannot start an LTTng session: the tracepoint stays disabled\n");
			return 0;
		}
		lttng_daemon_started = 1;
		sleep(1); /* our process registers with the new session daemon */
	}
	lttng_session = 1;
	snprintf(cmd, sizeof(cmd),
		 "lttng enable-event -s tftbench%d -u tft_bench:event >/dev/null 2>&1 && "
		 "lttng start tftbench%d >/dev/null 2>&1",
		 (int)getpid(), (int)getpid());
	if (sh(cmd) != 0)
		return 0;
	for (int i = 0; i < 500 && !lttng_ust_tracepoint_enabled(tft_bench, event); i++)
		usleep(10000);
	return lttng_ust_tracepoint_enabled(tft_bench, event) != 0;
}

static void lttng_stop(void)
{
	char cmd[512];

	if (lttng_session) {
		snprintf(cmd, sizeof(cmd), "lttng destroy tftbench%d >/dev/null 2>&1; rm -rf %s",
			 (int)getpid(), lttng_dir);
		sh(cmd);
	}
	if (lttng_daemon_started)
		sh("kill $(cat /tmp/tft-bench-sessiond.pid) 2>/dev/null; "
		   "rm -f /tmp/tft-bench-sessiond.pid");
}
#endif

static void measure(struct result *r, double (*fn)(void), int flush)
{
	double ns[64];

	fn(); /* warm up: registration, page cache, branch predictors */
	if (flush)
		tft_flush(60000);
	for (int b = 0; b < batches; b++) {
		ns[b] = fn() * 1e9 / (double)n_events;
		if (flush)
			tft_flush(60000); /* drain between batches: the ring never fills */
	}
	report(r, ns, batches);
}

int main(int argc, char **argv)
{
	struct result bare = { "bare rdtsc+store loop", 0, 0 };
	struct result instant = { "tft_instant (enabled)", 0, 0 };
	struct result zone = { "tft zone begin+end (per event)", 0, 0 };
	struct result counter = { "tft_counter (enabled)", 0, 0 };
	struct result off_instant = { "tft_instant (disabled)", 0, 0 };
	struct result off_zone = { "tft zone begin+end (disabled)", 0, 0 };
	struct result empty = { "empty loop", 0, 0 };
	struct tft_runtime_stats st;
	struct tft_config cfg;
	char path[128];
	int c, lttng_on = 0;

	while ((c = getopt(argc, argv, "n:r:")) != -1) {
		if (c == 'n')
			n_events = atol(optarg);
		else if (c == 'r')
			batches = atoi(optarg);
	}
	if (n_events < 1000)
		n_events = 1000;
	if (batches < 1 || batches > 64)
		batches = 7;
	if (getenv("BENCH_JSON"))
		json = fopen(getenv("BENCH_JSON"), "a");
	bare_mask = 1;
	while (bare_mask < (uint64_t)n_events)
		bare_mask <<= 1;
	bare_ring = calloc(bare_mask, sizeof(*bare_ring));
	if (!bare_ring)
		return 1;
	bare_mask--;

	snprintf(path, sizeof(path), "/tmp/tft-bench-runtime-%d.tft", (int)getpid());
	tft_config_init(&cfg);
	cfg.session_path = path;
	cfg.buffer_bytes = (bare_mask + 1) * 2 * 32; /* a batch never fills the ring */
	cfg.exit_timeout_ms = 60000;
	if (tft_init(&cfg) != 0) {
		fprintf(stderr, "bench_runtime: tft_init failed\n");
		return 1;
	}
	printf("# %ld events per batch, %d batches, %s clock, ring %zu MiB\n", n_events, batches,
	       getenv("TFT_CLOCK") ? getenv("TFT_CLOCK") : "auto", cfg.buffer_bytes >> 20);
	measure(&empty, run_empty, 0);
	measure(&bare, run_bare, 0);
	measure(&instant, run_instant, 1);
	measure(&zone, run_zone, 1);
	measure(&counter, run_counter, 1);
	tft_set_tracing(false);
	measure(&off_instant, run_instant, 0);
	measure(&off_zone, run_zone, 0);
	tft_set_tracing(true);

#ifndef TFT_BENCH_NO_LTTNG
	struct result lt_off = { "lttng tracepoint (disabled)", 0, 0 };
	struct result lt_on = { "lttng tracepoint (enabled)", 0, 0 };
	measure(&lt_off, run_lttng, 0);
	if (!getenv("BENCH_LTTNG") || strcmp(getenv("BENCH_LTTNG"), "0") != 0)
		lttng_on = lttng_start();
	if (lttng_on)
		measure(&lt_on, run_lttng, 0);
	lttng_stop();
#endif

	tft_shutdown();
	memset(&st, 0, sizeof(st));
	st.struct_size = sizeof(st);
	tft_stats(&st);
	unlink(path);
	printf("# runtime: %llu events, %llu dropped\n", (unsigned long long)st.events,
	       (unsigned long long)st.dropped);
	printf("\nratios (same run, min):\n");
	printf("  tft_instant / bare loop          %.2f   (target <= 1.6)\n",
	       instant.min_ns / bare.min_ns);
	printf("  tft zone event / bare loop       %.2f\n", zone.min_ns / bare.min_ns);
#ifndef TFT_BENCH_NO_LTTNG
	if (lttng_on) {
		printf("  tft_instant / lttng tracepoint   %.3f  (target <= 0.2)\n",
		       instant.min_ns / lt_on.min_ns);
		printf("  tft zone event / lttng           %.3f\n", zone.min_ns / lt_on.min_ns);
	} else {
		printf("  lttng: no enabled session, ratio not measured\n");
	}
#endif
	printf("  disabled instant %.2f ns, disabled zone event %.2f ns (target <= 1), "
	       "empty loop %.2f ns\n",
	       off_instant.min_ns, off_zone.min_ns, empty.min_ns);
	if (json)
		fclose(json);
	free(bare_ring);
	return 0;
}
#endif /* !LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ */
