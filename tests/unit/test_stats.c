/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for analyze/stats: sessions built with the writer, nested slices
 * with known self times, grouping by name/category/track, filters, exact
 * nearest-rank percentiles.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/stats.h"
#include "store/session.h"
#include "store/writer.h"
#include "tap.h"

static char path[256];

static void slice(struct tft_writer *w, uint32_t track, const char *name, const char *cat,
		  int64_t ts, int64_t dur)
{
	struct tft_event ev = {
		.ts_ns = ts,
		.dur_ns = dur,
		.track = track,
		.name = tft_writer_intern_cstr(w, name),
		.cat = tft_writer_intern_cstr(w, cat),
		.count = 1,
		.kind = TFT_EV_SLICE,
	};
	if (tft_writer_append(w, &ev) != 0)
		printf("# append %s at %lld failed\n", name, (long long)ts);
}

static uint32_t track(struct tft_writer *w, uint32_t proc, int kind, const char *name, int64_t tid)
{
	struct tft_track t = { .process = proc, .kind = (uint32_t)kind, .tid = tid };

	t.name = tft_writer_intern_cstr(w, name);
	return tft_writer_add_track(w, &t);
}

/*
 * Track "main" (thread):           Track "worker" (thread, process "other"):
 *   A [0,100)                        k1 [0,10)  cat k
 *     B [10,40)                      k1 [20,50) cat k
 *       C [15,20)                  Track "async" (async lanes): A [0,1000), A [10,20)
 *     B [50,70)                    Track "perc" (thread): p, durations 1..100
 *   A [200,260)                    plus an instant and a counter track (ignored)
 *     C [210,220)
 * Self: A 50+50, B 25+20, C 5+10.
 */
static struct tft_session *build(void)
{
	struct tft_error err;
	struct tft_writer *w;
	struct tft_process p = { .pid = 1, .rank = -1 };
	uint32_t p0, p1, tm, tw, ta, tp, tc;

	snprintf(path, sizeof(path), "/tmp/tft_test_stats_%ld.tft", (long)getpid());
	unlink(path);
	tft_error_clear(&err);
	w = tft_writer_open(path, NULL, &err);
	if (!w) {
		printf("# writer: %s\n", err.msg);
		return NULL;
	}
	p.name = tft_writer_intern_cstr(w, "main_proc");
	p0 = tft_writer_add_process(w, &p);
	p.name = tft_writer_intern_cstr(w, "other");
	p.pid = 2;
	p1 = tft_writer_add_process(w, &p);
	tm = track(w, p0, TFT_TRACK_THREAD, "main", 10);
	tw = track(w, p1, TFT_TRACK_THREAD, "worker", 20);
	ta = track(w, p0, TFT_TRACK_ASYNC, "async", 0);
	tp = track(w, p0, TFT_TRACK_THREAD, "perc", 11);
	tc = track(w, p0, TFT_TRACK_COUNTER, "mem", 0);

	slice(w, tm, "A", "cpu", 0, 100);
	slice(w, tm, "B", "cpu", 10, 30);
	slice(w, tm, "C", "cpu", 15, 5);
	{
		struct tft_event in = { .ts_ns = 30, .track = tm, .kind = TFT_EV_INSTANT, .count = 1,
					.name = tft_writer_intern_cstr(w, "A") };
		tft_writer_append(w, &in);
	}
	slice(w, tm, "B", "cpu", 50, 20);
	slice(w, tm, "A", "cpu", 200, 60);
	slice(w, tm, "C", "cpu", 210, 10);

	slice(w, tw, "k1", "k", 0, 10);
	slice(w, tw, "k1", "k", 20, 30);

	slice(w, ta, "A", "", 0, 1000);
	slice(w, ta, "A", "", 10, 10);

	/* durations 1..100 in a shuffled order, back to back */
	int64_t ts = 0;
	for (int i = 0; i < 100; i++) {
		int d = (i * 37) % 100 + 1;
		slice(w, tp, "p", "perf", ts, d);
		ts += d;
	}
	for (int i = 0; i < 5; i++) {
		struct tft_event c = { .ts_ns = i * 10, .track = tc, .kind = TFT_EV_COUNTER, .count = 1,
				       .value = i, .name = tft_writer_intern_cstr(w, "mem") };
		tft_writer_append(w, &c);
	}
	if (tft_writer_close(w, &err) != 0) {
		printf("# close: %s\n", err.msg);
		return NULL;
	}
	struct tft_session *s = tft_session_open(path, &err);
	if (!s)
		printf("# open: %s\n", err.msg);
	return s;
}

static const struct tft_stats_row *row(const struct tft_stats_result *r, const char *name)
{
	for (size_t i = 0; i < r->nrows; i++)
		if (strcmp(r->rows[i].name, name) == 0)
			return &r->rows[i];
	return NULL;
}

static void test_by_name(struct tft_session *s)
{
	struct tft_stats_opts o = { .group_by = TFT_STATS_BY_NAME, .track = TFT_NONE };
	struct tft_stats_result *r = NULL;
	const struct tft_stats_row *a, *b, *c, *p, *k;

	is_int(tft_stats_compute(s, &o, &r, NULL), 0, "by name: compute");
	if (!r)
		return;
	is_int(r->nrows, 5, "by name: 5 groups (A B C k1 p)");
	is_int(r->slices, 6 + 2 + 2 + 100, "by name: instants and counters not counted");
	a = row(r, "A");
	b = row(r, "B");
	c = row(r, "C");
	k = row(r, "k1");
	p = row(r, "p");
	ok(a && b && c && k && p, "by name: every group present");
	if (!(a && b && c && k && p))
		goto out;
	is_int(a->count, 4, "A count (2 thread + 2 async)");
	is_int(a->total_ns, 100 + 60 + 1000 + 10, "A total");
	is_int(a->self_ns, 50 + 50 + 1000 + 10, "A self: children removed on the thread, not on async lanes");
	is_int(a->min_ns, 10, "A min");
	is_int(a->max_ns, 1000, "A max");
	is_int(a->p50_ns, 60, "A p50: 2nd of 10,60,100,1000");
	is_int(a->p99_ns, 1000, "A p99");
	ok(a->mean_ns == (100 + 60 + 1000 + 10) / 4.0, "A mean");
	is_int(b->count, 2, "B count");
	is_int(b->total_ns, 50, "B total");
	is_int(b->self_ns, 45, "B self = 25 + 20");
	is_int(c->total_ns, 15, "C total");
	is_int(c->self_ns, 15, "C self = total (leaves)");
	is_int(k->self_ns, 40, "k1 self");
	is_int(p->count, 100, "p count");
	is_int(p->total_ns, 5050, "p total");
	is_int(p->min_ns, 1, "p min");
	is_int(p->max_ns, 100, "p max");
	is_int(p->p50_ns, 50, "p p50 (nearest rank)");
	is_int(p->p99_ns, 99, "p p99 (nearest rank)");
	is_int(p->self_ns, 5050, "p self: back-to-back siblings");
	is_str(r->rows[0].name, "p", "sorted by total desc: p first");
	is_str(r->rows[1].name, "A", "then A");
	double share = 0;
	for (size_t i = 0; i < r->nrows; i++)
		share += r->rows[i].share;
	ok(share > 99.999 && share < 100.001, "shares sum to 100 (%f)", share);
	is_int(r->total_ns, 1170 + 50 + 15 + 40 + 5050, "result total");
out:
	tft_stats_destroy(r);
}

static void test_by_category_track(struct tft_session *s)
{
	struct tft_stats_opts o = { .group_by = TFT_STATS_BY_CATEGORY, .track = TFT_NONE };
	struct tft_stats_result *r = NULL;
	const struct tft_stats_row *x;

	is_int(tft_stats_compute(s, &o, &r, NULL), 0, "by category: compute");
	if (r) {
		is_int(r->nrows, 4, "by category: cpu, k, perf, (none)");
		x = row(r, "cpu");
		ok(x && x->count == 6 && x->total_ns == 225 && x->self_ns == 100 + 45 + 15,
		   "cpu: 6 slices, total 225, self 160");
		x = row(r, "");
		ok(x && x->count == 2 && x->total_ns == 1010, "empty category groups the async slices");
		tft_stats_destroy(r);
	}

	o.group_by = TFT_STATS_BY_TRACK;
	r = NULL;
	is_int(tft_stats_compute(s, &o, &r, NULL), 0, "by track: compute");
	if (r) {
		is_int(r->nrows, 4, "by track: 4 tracks with slices");
		x = row(r, "main");
		ok(x && x->track_id == 0 && x->count == 6 && x->self_ns == 160, "main track row");
		x = row(r, "worker");
		ok(x && x->track_id == 1 && x->count == 2, "worker track row");
		is_int(r->tracks, 4, "counter track not scanned");
		tft_stats_destroy(r);
	}
}

static void test_filters(struct tft_session *s)
{
	struct tft_stats_opts o = { .group_by = TFT_STATS_BY_NAME, .track = 1 };
	struct tft_stats_result *r = NULL;
	struct tft_error err;

	is_int(tft_stats_compute(s, &o, &r, NULL), 0, "--track 1");
	if (r) {
		ok(r->nrows == 1 && strcmp(r->rows[0].name, "k1") == 0 && r->rows[0].count == 2,
		   "only the worker track");
		tft_stats_destroy(r);
	}
	o.track = TFT_NONE;
	o.process = "other";
	r = NULL;
	is_int(tft_stats_compute(s, &o, &r, NULL), 0, "--process other");
	if (r) {
		ok(r->nrows == 1 && r->slices == 2, "only the 'other' process");
		tft_stats_destroy(r);
	}
	o.process = "1"; /* the pid of main_proc */
	r = NULL;
	is_int(tft_stats_compute(s, &o, &r, NULL), 0, "--process by pid");
	if (r) {
		ok(r->slices == 6 + 2 + 100, "pid 1 selects main_proc's tracks");
		tft_stats_destroy(r);
	}
	o.process = "nosuch";
	r = NULL;
	is_int(tft_stats_compute(s, &o, &r, NULL), 0, "unknown process: empty result");
	if (r) {
		is_int(r->nrows, 0, "no rows");
		tft_stats_destroy(r);
	}
	o.process = NULL;
	o.track = 999;
	r = NULL;
	tft_error_clear(&err);
	is_int(tft_stats_compute(s, &o, &r, &err), TFT_EINVAL, "unknown track -> EINVAL");
	ok(r == NULL && strstr(err.msg, "999") != NULL, "error names the track");
	o.track = TFT_NONE;
	o.group_by = 7;
	is_int(tft_stats_compute(s, &o, &r, NULL), TFT_EINVAL, "bad grouping -> EINVAL");
}

static int cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

static void test_percentile(void)
{
	int64_t v5[] = { 5, 1, 4, 2, 3 };
	int64_t one[] = { 42 };
	int bad = 0;

	is_int(tft_stats_percentile(v5, 5, 50), 3, "p50 of 1..5 = 3rd");
	is_int(tft_stats_percentile(v5, 5, 99), 5, "p99 of 1..5 = 5th");
	is_int(tft_stats_percentile(v5, 5, 0), 1, "p0 = min");
	is_int(tft_stats_percentile(v5, 5, 20), 1, "p20 of 5 = 1st (ceil(1.0))");
	is_int(tft_stats_percentile(v5, 5, 21), 2, "p21 of 5 = 2nd");
	is_int(tft_stats_percentile(one, 1, 99), 42, "single value");

	/* random data, duplicates, sorted, reverse: compare with qsort */
	srand(7);
	for (int round = 0; round < 40 && !bad; round++) {
		size_t n = 1 + (size_t)(rand() % 5000);
		int64_t *v = malloc(n * sizeof(*v)), *ref = malloc(n * sizeof(*ref));
		for (size_t i = 0; i < n; i++) {
			switch (round % 4) {
			case 0: v[i] = rand() % 1000000; break;
			case 1: v[i] = rand() % 3; break;
			case 2: v[i] = (int64_t)i; break;
			default: v[i] = (int64_t)(n - i); break;
			}
		}
		memcpy(ref, v, n * sizeof(*v));
		qsort(ref, n, sizeof(*ref), cmp64);
		unsigned ps[] = { 1, 50, 90, 99, 100 };
		for (size_t j = 0; j < 5; j++) {
			size_t rank = (ps[j] * n + 99) / 100;
			if (tft_stats_percentile(v, n, ps[j]) != ref[(rank ? rank : 1) - 1])
				bad++;
		}
		free(v);
		free(ref);
	}
	is_int(bad, 0, "quickselect matches sorted nearest rank on 40 arrays");
}

static void test_format(void)
{
	char b[64];

	is_str(tft_stats_format_ns(b, sizeof(b), 850), "850 ns", "ns");
	is_str(tft_stats_format_ns(b, sizeof(b), 12345), "12.345 \xC2\xB5s", "us");
	is_str(tft_stats_format_ns(b, sizeof(b), 12345678), "12.345 ms", "ms");
	is_str(tft_stats_format_ns(b, sizeof(b), 1234567890), "1.234 s", "s");
	is_str(tft_stats_format_ns(b, sizeof(b), -2000), "-2.000 \xC2\xB5s", "negative");
	is_int(tft_stats_group_parse("category"), TFT_STATS_BY_CATEGORY, "parse category");
	is_int(tft_stats_group_parse("bogus"), -1, "parse unknown");
}

int main(void)
{
	struct tft_session *s = build();

	ok(s != NULL, "session built and opened");
	if (s) {
		test_by_name(s);
		test_by_category_track(s);
		test_filters(s);
		tft_session_close(s);
	}
	unlink(path);
	test_percentile();
	test_format();
	return done_testing();
}
