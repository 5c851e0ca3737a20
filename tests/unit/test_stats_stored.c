/* SPDX-License-Identifier: MIT */
/*
 * Statistics from stored chunk summaries (analyze/stats_stored.c) against
 * the scan of every event (analyze/stats.c's exact path), which
 * test_stats.c checks against hand-computed numbers: on generated sessions
 * built to be hard (deep and long parents across many chunks, children that
 * end after their parent, zero-length slices, instants, lane-packed tracks)
 * and on real traces imported with small chunks, for the whole session and
 * hundreds of windows, clipped and not, by name, category and track. Count,
 * total, self, min and max must be equal; percentiles equal where the row
 * says exact, else within the stated error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/stats.h"
#include "collect/ingest.h"
#include "core/hist.h"
#include "store/session.h"
#include "store/writer.h"
#include "tap.h"

static char dir[] = "/tmp/tft-stst-XXXXXX";
static unsigned long long rng = 88172645463325252ULL;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static int64_t rr(int64_t lo, int64_t hi) /* [lo, hi] */
{
	return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1));
}

static struct tft_stats_result *run(struct tft_session *s, const struct tft_stats_opts *o, int stored)
{
	struct tft_stats_result *r = NULL;
	struct tft_error err;

	setenv("TFT_STATS_STORED_MIN", stored ? "0" : "18446744073709551615", 1);
	tft_error_clear(&err);
	if (tft_stats_compute(s, o, &r, &err)) {
		printf("# stats: %s\n", err.msg);
		return NULL;
	}
	return r;
}

static const struct tft_stats_row *find(const struct tft_stats_result *r, uint32_t key)
{
	for (size_t i = 0; i < r->nrows; i++)
		if (r->rows[i].key == key)
			return &r->rows[i];
	return NULL;
}

static int near(int64_t a, int64_t b)
{
	int64_t d = a > b ? a - b : b - a;

	return (double)d <= (double)(a > b ? a : b) * TFT_STATS_PERCENTILE_ERROR + 1;
}

/* Stored vs scanned for one selection; returns 0 or prints the first difference. */
static int compare(struct tft_session *s, const struct tft_stats_opts *o, const char *what, int *nstored)
{
	struct tft_stats_result *a = run(s, o, 0), *b = run(s, o, 1);
	int bad = 0;

	if (!a || !b) {
		bad = 1;
		goto out;
	}
	*nstored += b->stored_tracks > 0 || a->slices == 0; /* (no slice: nothing to merge) */
	if (a->nrows != b->nrows || a->slices != b->slices || a->total_ns != b->total_ns) {
		printf("# %s: %zu rows %llu slices %lld ns (scan) vs %zu %llu %lld (stored)\n", what, a->nrows,
		       (unsigned long long)a->slices, (long long)a->total_ns, b->nrows,
		       (unsigned long long)b->slices, (long long)b->total_ns);
		bad = 1;
		goto out;
	}
	for (size_t i = 0; i < a->nrows && !bad; i++) {
		const struct tft_stats_row *x = &a->rows[i], *y = find(b, x->key);
		if (!y || x->count != y->count || x->total_ns != y->total_ns || x->self_ns != y->self_ns ||
		    x->min_ns != y->min_ns || x->max_ns != y->max_ns ||
		    (y->exact ? x->p50_ns != y->p50_ns || x->p99_ns != y->p99_ns
			      : !near(x->p50_ns, y->p50_ns) || !near(x->p99_ns, y->p99_ns))) {
			printf("# %s: %.*s: count %llu/%llu total %lld/%lld self %lld/%lld min %lld/%lld max "
			       "%lld/%lld p50 %lld/%lld p99 %lld/%lld\n",
			       what, (int)x->name_len, x->name, (unsigned long long)x->count,
			       (unsigned long long)(y ? y->count : 0), (long long)x->total_ns,
			       (long long)(y ? y->total_ns : 0), (long long)x->self_ns, (long long)(y ? y->self_ns : 0),
			       (long long)x->min_ns, (long long)(y ? y->min_ns : 0), (long long)x->max_ns,
			       (long long)(y ? y->max_ns : 0), (long long)x->p50_ns, (long long)(y ? y->p50_ns : 0),
			       (long long)x->p99_ns, (long long)(y ? y->p99_ns : 0));
			bad = 1;
		}
	}
out:
	tft_stats_destroy(a);
	tft_stats_destroy(b);
	return bad;
}

/* Whole session and `nwin` random windows (some at chunk and slice edges), every grouping. */
static void check_session(struct tft_session *s, const char *label, int nwin)
{
	struct tft_session_summary sum;
	int bad = 0, nstored = 0, n = 0;
	char what[160];

	tft_session_get_summary(s, &sum);
	for (int by = 0; by < 3 && !bad; by++) {
		struct tft_stats_opts o = { .group_by = by, .track = TFT_NONE };
		snprintf(what, sizeof(what), "%s whole by %d", label, by);
		bad |= compare(s, &o, what, &nstored);
		n++;
	}
	for (int i = 0; i < nwin && !bad; i++) {
		struct tft_stats_opts o = { .group_by = (int)(rnd() % 3), .track = TFT_NONE, .window = true };
		int64_t span = sum.end_ns - sum.start_ns;
		int64_t a = sum.start_ns + rr(-span / 20, span), b = a + rr(0, span / (1 + (int64_t)(rnd() % 8)));
		uint32_t nt = tft_session_track_count(s), pick[4];
		o.t0 = a;
		o.t1 = b;
		o.clip = rnd() & 1;
		if (i % 5 == 4) { /* a few tracks named: derived ones count then */
			uint32_t k = 1 + (uint32_t)(rnd() % 4);
			for (uint32_t j = 0; j < k; j++)
				pick[j] = (uint32_t)(rnd() % nt);
			o.tracks = pick;
			o.ntracks = k;
		}
		snprintf(what, sizeof(what), "%s window %d [%lld, %lld] clip %d by %d", label, i, (long long)a,
			 (long long)b, o.clip, o.group_by);
		bad |= compare(s, &o, what, &nstored);
		n++;
	}
	ok(!bad && nstored == n, "%s: stored statistics equal the scan's (%d selections, whole and windows, "
	   "clipped and not)", label, n);
}

/* ---- a generated session built to be hard ------------------------------------------------ */

static int gen_track(struct tft_writer *w, uint32_t track, int lanes, uint32_t *names, int nnames, int nev)
{
	int64_t stack_end[64], t = 1000;
	int sp = 0;

	for (int i = 0; i < nev; i++) {
		struct tft_event ev = { .track = track, .count = 1 };
		int64_t dur;
		int r = (int)(rnd() % 100);

		t += rr(0, 3) == 0 ? 0 : rr(1, 50); /* ties happen */
		while (sp && stack_end[sp - 1] <= t)
			sp--;
		ev.ts_ns = t;
		ev.name = names[rnd() % (uint64_t)nnames];
		ev.cat = names[rnd() % 3];
		if (r < 5) {
			ev.kind = TFT_EV_INSTANT;
		} else {
			ev.kind = TFT_EV_SLICE;
			if (r < 8)
				dur = 0;
			else if (r < 12)
				dur = rr(20000, 400000); /* long: spans many chunks */
			else
				dur = rr(1, 3000);
			/* a child that outlives its parent sometimes (improper nesting) */
			if (!lanes && sp && rr(0, 9) && t + dur > stack_end[sp - 1])
				dur = stack_end[sp - 1] - t + (rr(0, 20) == 0 ? rr(1, 500) : 0);
			if (dur < 0)
				dur = 0;
			ev.dur_ns = dur;
			if (sp < 60)
				stack_end[sp++] = t + dur;
		}
		if (tft_writer_append(w, &ev))
			return -1;
	}
	return 0;
}

static struct tft_session *make_generated(int threads)
{
	struct tft_writer_opts wo = { .chunk_events = 64, .threads = threads };
	struct tft_error err;
	struct tft_writer *w;
	char path[512];
	uint32_t names[40];

	snprintf(path, sizeof(path), "%s/gen%d.tft", dir, threads);
	tft_error_clear(&err);
	w = tft_writer_open(path, &wo, &err);
	if (!w)
		return NULL;
	for (int i = 0; i < 40; i++) {
		char b[16];
		snprintf(b, sizeof(b), "op%d", i);
		names[i] = tft_writer_intern_cstr(w, b);
	}
	struct tft_process p = { .name = names[0], .rank = -1 };
	uint32_t pid = tft_writer_add_process(w, &p);
	static const struct { uint32_t kind, flags; } kinds[] = {
		{ TFT_TRACK_THREAD, 0 }, { TFT_TRACK_THREAD, 0 }, { TFT_TRACK_GPU_STREAM, TFT_TRACKF_CONCURRENT },
		{ TFT_TRACK_DEVICE, TFT_TRACKF_CONCURRENT }, { TFT_TRACK_ASYNC, 0 },
		{ TFT_TRACK_GPU_STREAM, TFT_TRACKF_CONCURRENT | TFT_TRACKF_DERIVED },
	};
	for (int k = 0; k < 6; k++) {
		struct tft_track t = { .process = pid, .kind = kinds[k].kind, .flags = kinds[k].flags,
				       .name = names[k], .tid = k };
		uint32_t id = tft_writer_add_track(w, &t);
		if (id == TFT_NONE || gen_track(w, id, !tft_track_nests(t.kind, t.flags), names,
						 k == 0 ? 40 : 8, k < 2 ? 6000 : 1500)) {
			tft_writer_abort(w);
			return NULL;
		}
	}
	if (tft_writer_close(w, &err))
		return NULL;
	return tft_session_open(path, &err);
}

/* A real trace imported with small chunks (many chunk edges inside its stacks). */
static struct tft_session *import_small_chunks(const char *rel)
{
	struct tft_writer_opts wo = { .chunk_events = 256 };
	const char *data = getenv("TFT_DATA");
	char in[1024], path[512];
	struct tft_error err;
	struct tft_writer *w;

	snprintf(in, sizeof(in), "%s/%s", data ? data : "../shared/data", rel);
	snprintf(path, sizeof(path), "%s/real%d.tft", dir, (int)(rnd() % 100000));
	tft_error_clear(&err);
	if (access(in, R_OK) != 0) {
		printf("# missing %s\n", in);
		return NULL;
	}
	w = tft_writer_open(path, &wo, &err);
	if (!w)
		return NULL;
	if (tft_ingest_file(w, in, NULL, &err)) {
		printf("# import %s: %s\n", in, err.msg);
		tft_writer_abort(w);
		return NULL;
	}
	if (tft_writer_close(w, &err))
		return NULL;
	return tft_session_open(path, &err);
}

/* core/hist.h: buckets in order, each value in its bucket, the midpoint within the error. */
static void test_hist(void)
{
	int bad = 0;
	uint32_t prev = 0;

	for (int64_t v = 0; v < ((int64_t)1 << 50) && !bad; v = v < 100000 ? v + 1 : v + v / 997 + 1) {
		uint32_t b = tft_hist_bucket(v);
		double err = (double)(tft_hist_value(b) - v) / (double)(v ? v : 1);
		bad |= b < prev || b >= TFT_HIST_BUCKETS || tft_hist_lower(b) > v ||
		       (b + 1 < TFT_HIST_BUCKETS && tft_hist_lower(b + 1) <= v) ||
		       (err < 0 ? -err : err) > TFT_HIST_REL_ERROR || (v < TFT_HIST_EXACT && tft_hist_value(b) != v);
		if (bad)
			printf("# value %lld: bucket %u, lower %lld, value %lld\n", (long long)v, b,
			       (long long)tft_hist_lower(b), (long long)tft_hist_value(b));
		prev = b;
	}
	ok(!bad && tft_hist_bucket(INT64_MAX) == TFT_HIST_BUCKETS - 1,
	   "hist: buckets ordered, values inside theirs, midpoints within %.2f%%", 100 * TFT_HIST_REL_ERROR);
}

int main(void)
{
	static const char *const real[] = {
		"tracelens/kineto_h100/gaunernst_bert-small-uncased__1016001.json.gz", /* 43 deep */
		"kineto/tb_plugin_samples/resnet50_num_workers_0/worker0.pt.trace.json.gz",
		"ikhlestov-tf-profiling/GPU/timeline_03_merged_5_runs.json",
		"tf-profiler-demo/GPU-multi-worker/34.83.195.179_6003.xplane.pb",
	};
	struct tft_session *s;

	if (!mkdtemp(dir))
		return 1;
	test_hist();
	for (int threads = 0; threads <= 2; threads += 2) {
		char label[64];
		s = make_generated(threads);
		snprintf(label, sizeof(label), "generated, %d store threads", threads);
		ok(s != NULL, "%s: written", label);
		if (s) {
			ok(tft_session_has_chunk_stats(s), "%s: has chunk statistics", label);
			check_session(s, label, 300);
			tft_session_close(s);
		}
	}
	for (size_t i = 0; i < sizeof(real) / sizeof(real[0]); i++) {
		s = import_small_chunks(real[i]);
		ok(s != NULL, "%s: imported with 256-event chunks", real[i]);
		if (s) {
			check_session(s, real[i], 120);
			tft_session_close(s);
		}
	}
	{
		char cmd[600];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (!getenv("TFT_TEST_KEEP") && system(cmd) != 0)
			printf("# could not remove %s\n", dir);
	}
	return done_testing();
}
