/* SPDX-License-Identifier: MIT */
/*
 * Viewport benchmark: generates a 10M-event session once (cached), then
 * times /api/viewport's core (tft_qry_viewport_write over every track) for
 * windows from the whole trace down to 1 us at width 1500, and compares
 * per-thread readers with one mutex-serialised reader under concurrency.
 *
 * usage: bench_viewport [--session FILE] [--events N] [--queries N]
 *                       [--threads N] [--seconds S]
 * Prints a table and one JSON line per result on stdout.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "query/viewport.h"
#include "store/session.h"
#include "store/writer.h"

#define NTRACKS 8
#define NNAMES 200
#define WIDTH 1500

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int die(const char *what, const struct tft_error *err)
{
	char buf[600];

	fprintf(stderr, "bench_viewport: %s: %s\n", what, err ? tft_error_format(err, buf, sizeof(buf)) : "");
	return 1;
}

/*
 * Per thread track: blocks of one 20 us parent holding four ~4 us children,
 * each holding one ~2 us grandchild (9 events per ~25 us), with jitter; one
 * counter track with a sample every 10 us.
 */
static int generate(const char *path, uint64_t events)
{
	struct tft_error err;
	struct tft_writer *w;
	struct tft_process pr = { 0 };
	uint32_t names[NNAMES], tracks[NTRACKS + 1], cat;
	uint64_t per_track = events / NTRACKS, blocks = per_track / 9;
	char tmp[4200];
	double t0 = now_ms();

	snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
	tft_error_clear(&err);
	w = tft_writer_open(tmp, NULL, &err);
	if (!w)
		return die("cannot create the session", &err);
	for (int i = 0; i < NNAMES; i++) {
		char n[64];
		snprintf(n, sizeof(n), "aten::op_%03d_%s", i, i % 3 ? "fwd" : "bwd");
		names[i] = tft_writer_intern_cstr(w, n);
	}
	cat = tft_writer_intern_cstr(w, "cpu_op");
	pr.name = tft_writer_intern_cstr(w, "bench");
	pr.pid = 1;
	pr.rank = -1;
	pr.id = tft_writer_add_process(w, &pr);
	for (int t = 0; t <= NTRACKS; t++) {
		struct tft_track tr = { 0 };
		char n[32];
		snprintf(n, sizeof(n), t < NTRACKS ? "thread %d" : "memory", t);
		tr.process = pr.id;
		tr.kind = t < NTRACKS ? TFT_TRACK_THREAD : TFT_TRACK_COUNTER;
		tr.name = tft_writer_intern_cstr(w, n);
		tr.tid = t + 1;
		tracks[t] = tft_writer_add_track(w, &tr);
	}
	for (int t = 0; t < NTRACKS; t++) {
		int64_t ts = 1000000000;
		for (uint64_t b = 0; b < blocks; b++) {
			struct tft_event ev = { .track = tracks[t], .cat = cat, .count = 1, .kind = TFT_EV_SLICE };
			int64_t pdur = 18000 + (int64_t)(next_rand() % 4000);
			int64_t c = ts + 500;
			ev.ts_ns = ts;
			ev.dur_ns = pdur;
			ev.name = names[next_rand() % NNAMES];
			if (tft_writer_append(w, &ev) != 0)
				goto fail;
			for (int k = 0; k < 4; k++) {
				int64_t cd = 3000 + (int64_t)(next_rand() % 1000);
				ev.ts_ns = c;
				ev.dur_ns = cd;
				ev.name = names[next_rand() % NNAMES];
				if (tft_writer_append(w, &ev) != 0)
					goto fail;
				ev.ts_ns = c + 200;
				ev.dur_ns = 1000 + (int64_t)(next_rand() % 1500);
				ev.name = names[next_rand() % NNAMES];
				if (tft_writer_append(w, &ev) != 0)
					goto fail;
				c += cd + 300;
			}
			ts += pdur + 2000 + (int64_t)(next_rand() % 6000);
		}
		if (tft_writer_commit(w, &err) != 0)
			goto fail;
	}
	{
		struct tft_event ev = { .track = tracks[NTRACKS], .count = 1, .kind = TFT_EV_COUNTER };
		double v = 0;
		int64_t end = 1000000000 + (int64_t)blocks * 26000;
		for (int64_t ts = 1000000000; ts < end; ts += 10000) {
			v += (double)((int64_t)(next_rand() % 2001) - 1000);
			ev.ts_ns = ts;
			ev.value = v;
			if (tft_writer_append(w, &ev) != 0)
				goto fail;
		}
	}
	if (tft_writer_close(w, &err) != 0) {
		unlink(tmp);
		return die("cannot finish the session", &err);
	}
	if (rename(tmp, path) != 0) {
		unlink(tmp);
		return die("cannot move the session into place", NULL);
	}
	fprintf(stderr, "bench_viewport: generated %s (%" PRIu64 " slices) in %.1f s\n", path,
		blocks * 9 * NTRACKS, (now_ms() - t0) / 1e3);
	return 0;
fail:
	tft_writer_abort(w);
	unlink(tmp);
	return die("cannot append", &err);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pct(double *v, size_t n, double p)
{
	size_t k = (size_t)(p / 100.0 * (double)n + 0.999999);

	if (k == 0)
		k = 1;
	if (k > n)
		k = n;
	return v[k - 1];
}

/* One query over every track: ms, response bytes. */
static int query(struct tft_session *s, struct tft_qry_viewport_scratch *scratch, int64_t t0, int64_t t1, double *ms,
		 size_t *bytes)
{
	struct tft_qry_viewport_req req = { .t0_ns = t0, .t1_ns = t1, .width_px = WIDTH, .rel = true };
	struct tft_json_writer w;
	struct tft_error err;
	double a = now_ms();
	int rc;

	tft_error_clear(&err);
	tft_json_write_init_mem(&w);
	rc = tft_qry_viewport_write(s, &req, scratch, &w, &err);
	*ms = now_ms() - a;
	*bytes = w.len;
	tft_json_write_fini(&w);
	if (rc != 0)
		return die("viewport query failed", &err);
	return 0;
}

/* ---- concurrency: per-thread readers vs one shared reader ----------------- */

struct worker {
	const char *path;
	struct tft_session *shared; /* NULL: open an own reader */
	pthread_mutex_t *lock;
	int64_t start, span;
	double seconds;
	uint64_t seed;
	double *lat;
	size_t nlat, cap;
	int failed;
};

static void *worker_main(void *arg)
{
	struct worker *wk = arg;
	struct tft_error err;
	struct tft_session *s = wk->shared;
	struct tft_qry_viewport_scratch *scratch = tft_qry_viewport_scratch_new();
	double end = now_ms() + wk->seconds * 1e3;
	uint64_t r = wk->seed;

	tft_error_clear(&err);
	if (!scratch || (!s && !(s = tft_session_open(wk->path, &err)))) {
		tft_qry_viewport_scratch_free(scratch);
		wk->failed = 1;
		return NULL;
	}
	while (now_ms() < end && wk->nlat < wk->cap) {
		int64_t win, t0;
		double ms, a = now_ms();
		size_t bytes;

		r ^= r << 13;
		r ^= r >> 7;
		r ^= r << 17;
		/* typical UI windows: 1/4 .. 1/4096 of the trace */
		win = wk->span >> (2 + (int)(r % 11));
		t0 = wk->start + (int64_t)((r >> 8) % (uint64_t)(wk->span - win));
		if (wk->lock)
			pthread_mutex_lock(wk->lock);
		if (query(s, scratch, t0, t0 + win, &ms, &bytes) != 0)
			wk->failed = 1;
		if (wk->lock)
			pthread_mutex_unlock(wk->lock);
		wk->lat[wk->nlat++] = now_ms() - a; /* includes waiting for the lock */
	}
	tft_qry_viewport_scratch_free(scratch);
	if (!wk->shared)
		tft_session_close(s);
	return NULL;
}

static void concurrency(const char *path, struct tft_session *shared, int nthreads, double seconds,
			int64_t start, int64_t span)
{
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

	for (int mode = 0; mode < 2; mode++) {
		struct worker wk[16];
		pthread_t th[16];
		size_t total = 0, k = 0;
		double *all, t = now_ms();

		for (int i = 0; i < nthreads; i++) {
			wk[i] = (struct worker){ .path = path, .shared = mode ? shared : NULL,
						 .lock = mode ? &lock : NULL, .start = start, .span = span,
						 .seconds = seconds, .seed = 0x1234567ULL * (uint64_t)(i + 1),
						 .cap = 1000000 };
			wk[i].lat = malloc(wk[i].cap * sizeof(double));
			pthread_create(&th[i], NULL, worker_main, &wk[i]);
		}
		for (int i = 0; i < nthreads; i++) {
			pthread_join(th[i], NULL);
			total += wk[i].nlat;
		}
		t = (now_ms() - t) / 1e3;
		all = malloc((total ? total : 1) * sizeof(double));
		for (int i = 0; i < nthreads; i++) {
			memcpy(all + k, wk[i].lat, wk[i].nlat * sizeof(double));
			k += wk[i].nlat;
			free(wk[i].lat);
		}
		qsort(all, total, sizeof(double), cmp_double);
		printf("%-28s %2d threads: %7.0f queries/s  p50 %6.2f ms  p99 %6.2f ms\n",
		       mode ? "one reader + mutex" : "one reader per thread", nthreads,
		       (double)total / t, total ? pct(all, total, 50) : 0, total ? pct(all, total, 99) : 0);
		printf("{\"bench\":\"viewport_concurrency\",\"mode\":\"%s\",\"threads\":%d,\"qps\":%.0f,"
		       "\"p50_ms\":%.3f,\"p99_ms\":%.3f}\n",
		       mode ? "shared_mutex" : "per_thread", nthreads, (double)total / t,
		       total ? pct(all, total, 50) : 0, total ? pct(all, total, 99) : 0);
		free(all);
	}
}

int main(int argc, char **argv)
{
	const char *path = "build/bench/viewport-10m.tft";
	uint64_t events = 10000000;
	int queries = 40, threads = 2;
	double seconds = 3;
	struct tft_session *s;
	struct tft_session_summary sum;
	struct tft_error err;
	struct stat st;
	struct tft_qry_viewport_scratch *scratch = NULL;
	double *all, *pans;
	size_t nall = 0, npans = 0;
	int64_t span;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--session") == 0 && i + 1 < argc)
			path = argv[++i];
		else if (strcmp(argv[i], "--events") == 0 && i + 1 < argc)
			events = strtoull(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--queries") == 0 && i + 1 < argc)
			queries = atoi(argv[++i]);
		else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
			threads = atoi(argv[++i]);
		else if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc)
			seconds = atof(argv[++i]);
		else {
			fprintf(stderr, "usage: bench_viewport [--session FILE] [--events N] [--queries N]"
					" [--threads N] [--seconds S]\n");
			return 2;
		}
	}
	if (queries < 1 || queries > 100000 || threads < 1 || threads > 16 || events < 1000)
		return die("bad arguments", NULL);
	if (stat(path, &st) != 0) {
		char dir[4096];
		char *slash;
		snprintf(dir, sizeof(dir), "%s", path);
		slash = strrchr(dir, '/');
		if (slash) {
			*slash = '\0';
			mkdir(dir, 0777); /* one level, e.g. build/bench; errors surface at create */
		}
		if (generate(path, events) != 0)
			return 1;
	}
	tft_error_clear(&err);
	s = tft_session_open(path, &err);
	if (!s)
		return die("cannot open the session", &err);
	tft_session_get_summary(s, &sum);
	span = sum.end_ns - sum.start_ns;
	printf("session %s: %" PRIu64 " slices, %" PRIu64 " counter samples, %u tracks, %.3f s\n", path,
	       sum.slices, sum.counters, tft_session_track_count(s), (double)span / 1e9);
	all = malloc(sizeof(double) * (size_t)queries * 16);
	pans = malloc(sizeof(double) * (size_t)queries * 16);
	scratch = tft_qry_viewport_scratch_new();
	if (!all || !pans || !scratch)
		return die("out of memory", NULL);
	printf("cold: a random window each time; pan: then the same window moved by 1/10\n");
	printf("%-14s %10s %10s %10s %10s %12s\n", "window", "cold p50", "cold p99", "pan p50", "pan p99",
	       "resp KiB");
	for (int64_t win = span;; win /= 4) {
		double lat[100000], pan[100000];
		size_t bytes_sum = 0;
		int64_t w = win < 1000 ? 1000 : win;
		char label[32];

		for (int q = 0; q < queries; q++) {
			int64_t t0 = sum.start_ns + (w < span ? (int64_t)(next_rand() % (uint64_t)(span - w)) : 0);
			size_t bytes;
			if (query(s, scratch, t0, t0 + w, &lat[q], &bytes) != 0)
				return 1;
			bytes_sum += bytes;
			all[nall++] = lat[q];
			t0 += w / 10;
			if (query(s, scratch, t0, t0 + w, &pan[q], &bytes) != 0)
				return 1;
			pans[npans++] = pan[q];
		}
		qsort(lat, (size_t)queries, sizeof(double), cmp_double);
		qsort(pan, (size_t)queries, sizeof(double), cmp_double);
		if (w >= 1000000000)
			snprintf(label, sizeof(label), "%.2f s", (double)w / 1e9);
		else if (w >= 1000000)
			snprintf(label, sizeof(label), "%.2f ms", (double)w / 1e6);
		else
			snprintf(label, sizeof(label), "%.2f us", (double)w / 1e3);
		printf("%-14s %10.2f %10.2f %10.2f %10.2f %12.1f\n", label, pct(lat, (size_t)queries, 50),
		       pct(lat, (size_t)queries, 99), pct(pan, (size_t)queries, 50),
		       pct(pan, (size_t)queries, 99), (double)bytes_sum / queries / 1024.0);
		printf("{\"bench\":\"viewport\",\"window_ns\":%" PRId64 ",\"width\":%d,\"tracks\":%u,"
		       "\"p50_ms\":%.3f,\"p99_ms\":%.3f,\"pan_p50_ms\":%.3f,\"pan_p99_ms\":%.3f,"
		       "\"bytes\":%zu}\n",
		       w, WIDTH, tft_session_track_count(s), pct(lat, (size_t)queries, 50),
		       pct(lat, (size_t)queries, 99), pct(pan, (size_t)queries, 50),
		       pct(pan, (size_t)queries, 99), bytes_sum / (size_t)queries);
		if (w <= 1000 || nall + (size_t)queries > (size_t)queries * 16)
			break;
	}
	qsort(all, nall, sizeof(double), cmp_double);
	qsort(pans, npans, sizeof(double), cmp_double);
	printf("all windows: %zu queries: cold p50 %.2f ms, p99 %.2f ms; pan p50 %.2f ms, p99 %.2f ms"
	       " (target p99 <= 30 ms)\n",
	       nall, pct(all, nall, 50), pct(all, nall, 99), pct(pans, npans, 50), pct(pans, npans, 99));
	printf("{\"bench\":\"viewport_all\",\"queries\":%zu,\"p50_ms\":%.3f,\"p99_ms\":%.3f,"
	       "\"pan_p50_ms\":%.3f,\"pan_p99_ms\":%.3f,\"target_p99_ms\":30}\n",
	       nall, pct(all, nall, 50), pct(all, nall, 99), pct(pans, npans, 50), pct(pans, npans, 99));
	free(all);
	free(pans);
	tft_qry_viewport_scratch_free(scratch);
	if (threads > 0 && seconds > 0)
		concurrency(path, s, threads, seconds, sum.start_ns, span);
	tft_session_close(s);
	return 0;
}
