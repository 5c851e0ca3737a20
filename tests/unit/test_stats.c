/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for analyze/stats: sessions built with the writer, nested slices
 * with known self times, grouping by name/category/track, filters, exact
 * nearest-rank percentiles, time windows with and without clipping.
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
	p.host = tft_writer_intern_cstr(w, "hostB");
	p.rank = 3;
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
	{
		/* the forms that tell workers apart where names and pids repeat */
		static const char *const sel[] = { "#1", "host=hostB", "rank=3" };

		for (size_t i = 0; i < sizeof(sel) / sizeof(sel[0]); i++) {
			o.process = sel[i];
			r = NULL;
			ok(tft_stats_compute(s, &o, &r, NULL) == 0, "--process %s", sel[i]);
			ok(r && r->slices == 2 && r->nrows == 1, "--process %s selects 'other' only", sel[i]);
			tft_stats_destroy(r);
		}
		ok(!tft_stats_process_matches(s, 0, "rank=-1") && !tft_stats_process_matches(s, 0, "#9") &&
			   !tft_stats_process_matches(s, 0, "host=") && tft_stats_process_matches(s, 0, "#0"),
		   "no rank, another id, no host: not selected; #0 is main_proc");
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

/* Statistics of one area selection; NULL (and a failed test point) on error. */
static struct tft_stats_result *area(struct tft_session *s, int by, const uint32_t *tracks,
				     size_t ntracks, int64_t t0, int64_t t1, bool clip)
{
	struct tft_stats_opts o = { .group_by = by, .track = TFT_NONE, .tracks = tracks,
				    .ntracks = ntracks, .window = true, .t0 = t0, .t1 = t1,
				    .clip = clip };
	struct tft_stats_result *r = NULL;
	struct tft_error err;

	tft_error_clear(&err);
	if (tft_stats_compute(s, &o, &r, &err) != 0) {
		ok(0, "area [%lld, %lld] clip %d: %s", (long long)t0, (long long)t1, clip, err.msg);
		return NULL;
	}
	return r;
}

/* A row as "count total self min max p50 p99", or "-" when absent. */
static const char *row_text(const struct tft_stats_result *r, const char *name)
{
	static char buf[160];
	const struct tft_stats_row *x = r ? row(r, name) : NULL;

	if (!x)
		return "-";
	snprintf(buf, sizeof(buf), "%llu %lld %lld %lld %lld %lld %lld", (unsigned long long)x->count,
		 (long long)x->total_ns, (long long)x->self_ns, (long long)x->min_ns,
		 (long long)x->max_ns, (long long)x->p50_ns, (long long)x->p99_ns);
	return buf;
}

/*
 * Windows on track "main" (see build()): A [0,100) holds B [10,40) (holding
 * C [15,20)) and B [50,70); A [200,260) holds C [210,220).
 */
static void test_window_clip(struct tft_session *s)
{
	const uint32_t main_track = 0, main_worker[] = { 0, 1 }, async_track = 2, perc = 3;
	struct tft_stats_result *r;

	/*
	 * [12, 60]: A is cut to 48, less B1's 28 and B2's 10 inside it: self 10.
	 * B1 cut to 28 (less C's 5), B2 to 10: B's p50 is the clipped 10.
	 */
	r = area(s, TFT_STATS_BY_NAME, &main_track, 1, 12, 60, true);
	is_str(row_text(r, "A"), "1 48 10 48 48 48 48", "clip [12,60]: A cut to the window, children removed");
	is_str(row_text(r, "B"), "2 38 33 10 28 10 28", "clip [12,60]: B durations, self and percentiles clipped");
	is_str(row_text(r, "C"), "1 5 5 5 5 5 5", "clip [12,60]: C inside the window, whole");
	ok(r && r->nrows == 3 && r->slices == 4 && r->total_ns == 48 + 38 + 5,
	   "clip [12,60]: the second A is outside; result total is the clipped sum");
	tft_stats_destroy(r);

	/* The same window unclipped: slices count whole, children removed wherever they lie. */
	r = area(s, TFT_STATS_BY_NAME, &main_track, 1, 12, 60, false);
	is_str(row_text(r, "A"), "1 100 50 100 100 100 100", "no clip [12,60]: A whole");
	is_str(row_text(r, "B"), "2 50 45 20 30 20 30", "no clip [12,60]: B whole");
	tft_stats_destroy(r);

	/* A window inside C: every ancestor is cut to it and loses all of it to its child. */
	r = area(s, TFT_STATS_BY_NAME, &main_track, 1, 16, 18, true);
	is_str(row_text(r, "A"), "1 2 0 2 2 2 2", "clip [16,18]: A total = the window, self 0");
	is_str(row_text(r, "B"), "1 2 0 2 2 2 2", "clip [16,18]: B total = the window, self 0");
	is_str(row_text(r, "C"), "1 2 2 2 2 2 2", "clip [16,18]: C self = the window");
	tft_stats_destroy(r);

	/* A window between B1 and B2, inside A: all of it is A's self time. */
	r = area(s, TFT_STATS_BY_NAME, &main_track, 1, 41, 49, true);
	is_str(row_text(r, "A"), "1 8 8 8 8 8 8", "clip [41,49]: A alone, self = the window");
	ok(r && r->nrows == 1, "clip [41,49]: no child overlaps");
	tft_stats_destroy(r);

	/* A slice that only touches the window counts, with nothing inside it. */
	r = area(s, TFT_STATS_BY_NAME, &main_track, 1, 100, 150, true);
	is_str(row_text(r, "A"), "1 0 0 0 0 0 0", "clip [100,150]: A ending at t0 counts with 0");
	ok(r && r->nrows == 1 && r->total_ns == 0, "clip [100,150]: nothing else");
	tft_stats_destroy(r);

	/* A window covering the track: clipping changes nothing. */
	{
		struct tft_stats_opts o = { .group_by = TFT_STATS_BY_NAME, .track = main_track };
		struct tft_stats_result *whole = NULL;
		int same = 0;

		is_int(tft_stats_compute(s, &o, &whole, NULL), 0, "whole track main");
		r = area(s, TFT_STATS_BY_NAME, &main_track, 1, -1000, 1000, true);
		if (whole && r && whole->nrows == r->nrows) {
			same = 1;
			for (size_t i = 0; i < r->nrows; i++) {
				char a[160];
				snprintf(a, sizeof(a), "%s", row_text(whole, r->rows[i].name));
				same &= strcmp(a, row_text(r, r->rows[i].name)) == 0;
			}
		}
		ok(same, "clip over the whole track = the track's statistics");
		tft_stats_destroy(whole);
		tft_stats_destroy(r);
	}

	/* Async lanes do not nest: self = the clipped duration. */
	r = area(s, TFT_STATS_BY_NAME, &async_track, 1, 5, 15, true);
	is_str(row_text(r, "A"), "2 15 15 5 10 5 10", "clip [5,15] async: 10 + 5, self = clipped");
	tft_stats_destroy(r);

	/* Several tracks, and grouping by track, with clipped totals. */
	r = area(s, TFT_STATS_BY_NAME, main_worker, 2, 12, 60, true);
	is_str(row_text(r, "k1"), "1 30 30 30 30 30 30", "clip [12,60] tracks 0,1: k1 [20,50) whole");
	is_str(row_text(r, "A"), "1 48 10 48 48 48 48", "clip [12,60] tracks 0,1: A as on track 0 alone");
	ok(r && r->tracks == 2, "two tracks scanned");
	tft_stats_destroy(r);
	r = area(s, TFT_STATS_BY_TRACK, main_worker, 2, 12, 60, true);
	is_str(row_text(r, "main"), "4 91 48 5 48 10 48", "by track: main = 48 + 38 + 5");
	tft_stats_destroy(r);

	/*
	 * Percentiles of clipped durations: "perc" holds 1..100 back to back
	 * (5050 ns); the window [0, 2525] cuts the slice straddling 2525.
	 */
	r = area(s, TFT_STATS_BY_NAME, &perc, 1, 0, 2525, true);
	{
		const struct tft_stats_row *p = r ? row(r, "p") : NULL;
		ok(p && p->total_ns == 2525 && p->self_ns == 2525, "perc: clipped total = window (%lld)",
		   p ? (long long)p->total_ns : -1);
		ok(p && p->max_ns <= 100 && p->min_ns >= 0, "perc: clipped min/max in range");
	}
	tft_stats_destroy(r);

	/* Every track, no list: the window alone selects. */
	{
		struct tft_stats_opts o = { .group_by = TFT_STATS_BY_NAME, .track = TFT_NONE,
					    .window = true, .t0 = 12, .t1 = 60, .clip = true };
		r = NULL;
		is_int(tft_stats_compute(s, &o, &r, NULL), 0, "clip [12,60] every track");
		/*
		 * A: 48 (self 10) on main, [0,1000) and [10,20) on async cut to 48
		 * and 8; p: [1,39) and [39,114) cut to 27 and 21.
		 */
		is_str(row_text(r, "A"), "3 104 66 8 48 48 48", "every track: A from main and async");
		is_str(row_text(r, "p"), "2 48 48 21 27 21 27", "every track: two p slices cut");
		is_str(row_text(r, "k1"), "1 30 30 30 30 30 30", "every track: k1");
		tft_stats_destroy(r);
	}

	/* clip without a window: nothing to clip, the session's statistics. */
	{
		struct tft_stats_opts o = { .group_by = TFT_STATS_BY_NAME, .track = main_track,
					    .clip = true };
		r = NULL;
		is_int(tft_stats_compute(s, &o, &r, NULL), 0, "clip without window");
		is_str(row_text(r, "A"), "2 160 100 60 100 60 100", "clip without window: A whole");
		tft_stats_destroy(r);
	}

	/* Bad input. */
	{
		const uint32_t bad_ids[] = { 0, 999 };
		struct tft_stats_opts o = { .group_by = TFT_STATS_BY_NAME, .track = TFT_NONE,
					    .tracks = bad_ids, .ntracks = 2, .window = true,
					    .t0 = 0, .t1 = 10, .clip = true };
		struct tft_error err;
		r = NULL;
		tft_error_clear(&err);
		is_int(tft_stats_compute(s, &o, &r, &err), TFT_EINVAL, "unknown track in the list -> EINVAL");
		ok(r == NULL && strstr(err.msg, "999") != NULL, "error names the track");
		o.ntracks = 1;
		o.t0 = 10;
		o.t1 = 9;
		is_int(tft_stats_compute(s, &o, &r, NULL), TFT_EINVAL, "t1 < t0 -> EINVAL");
	}
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

/* Names holding a NUL byte keep their length in the rows ("op\0A" and "op\0B" are two names). */
static void test_nul_names(void)
{
	char p[256];
	struct tft_error err;
	struct tft_writer *w;
	struct tft_session *s;
	struct tft_stats_opts o = { .group_by = TFT_STATS_BY_NAME, .track = TFT_NONE };
	struct tft_stats_result *r = NULL;
	uint32_t t;

	snprintf(p, sizeof(p), "/tmp/tft_test_stats_nul_%ld.tft", (long)getpid());
	unlink(p);
	w = tft_writer_open(p, NULL, &err);
	if (!ok(w != NULL, "NUL names: writer"))
		return;
	t = track(w, tft_writer_add_process(w, &(struct tft_process){ .pid = 1, .rank = -1 }), TFT_TRACK_THREAD,
		  "t", 1);
	for (int i = 0; i < 2; i++) {
		struct tft_event ev = { .ts_ns = i * 10, .dur_ns = 5 + i, .track = t, .count = 1, .kind = TFT_EV_SLICE };

		ev.name = tft_writer_intern(w, i ? "op\0B" : "op\0A", 4);
		tft_writer_append(w, &ev);
	}
	is_int(tft_writer_close(w, &err), 0, "NUL names: close");
	s = tft_session_open(p, &err);
	if (!ok(s != NULL, "NUL names: open"))
		return;
	is_int(tft_stats_compute(s, &o, &r, NULL), 0, "NUL names: compute");
	if (r) {
		is_int(r->nrows, 2, "NUL names: two rows");
		ok(r->nrows == 2 && r->rows[0].name_len == 4 && r->rows[1].name_len == 4 &&
		   memcmp(r->rows[0].name, r->rows[1].name, 4) != 0,
		   "NUL names: each row's name whole (4 bytes), and they differ");
		tft_stats_destroy(r);
	}
	tft_session_close(s);
	unlink(p);
}

int main(void)
{
	struct tft_session *s = build();

	ok(s != NULL, "session built and opened");
	if (s) {
		test_by_name(s);
		test_by_category_track(s);
		test_filters(s);
		test_window_clip(s);
		tft_session_close(s);
	}
	unlink(path);
	test_percentile();
	test_format();
	test_nul_names();
	return done_testing();
}
