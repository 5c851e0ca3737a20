/* SPDX-License-Identifier: MIT */
/*
 * Sorter: random-order input, a tiny memory budget forcing many spills, the
 * session read back equals a reference sort (ts asc, dur desc, arrival).
 * Input in a few ascending runs per track (Kineto's shape: merged, not
 * sorted) and one track in more runs than the merge takes (sorted).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/session.h"
#include "store/sorter.h"
#include "store/writer.h"
#include "tap.h"

static uint64_t rng = 0x2545f4914f6cdd1dULL;
static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

struct rev {
	struct tft_event ev;
	struct tft_arg args[3];
	uint64_t seq;
};

static int ref_cmp(const void *a, const void *b)
{
	const struct rev *x = a, *y = b;

	if (x->ev.track != y->ev.track)
		return x->ev.track < y->ev.track ? -1 : 1;
	if (x->ev.ts_ns != y->ev.ts_ns)
		return x->ev.ts_ns < y->ev.ts_ns ? -1 : 1;
	if (x->ev.dur_ns != y->ev.dur_ns)
		return x->ev.dur_ns > y->ev.dur_ns ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

struct check {
	const struct rev *want;
	size_t n, i;
	int64_t shift;
	int bad;
};

static int check_fn(void *ctx, const struct tft_event *ev)
{
	struct check *c = ctx;
	const struct tft_event *w;

	if (c->i >= c->n) {
		c->bad++;
		return 0;
	}
	w = &c->want[c->i++].ev;
	if (ev->ts_ns != w->ts_ns + c->shift || ev->dur_ns != w->dur_ns || ev->name != w->name ||
	    ev->cat != w->cat || ev->kind != w->kind || ev->nargs != w->nargs ||
	    ev->value != w->value || ev->flags != w->flags) {
		if (c->bad < 3)
			printf("# mismatch at %zu: ts %lld/%lld dur %lld/%lld name %u/%u\n", c->i - 1,
			       (long long)ev->ts_ns, (long long)(w->ts_ns + c->shift),
			       (long long)ev->dur_ns, (long long)w->dur_ns, ev->name, w->name);
		c->bad++;
		return 0;
	}
	for (int a = 0; a < ev->nargs; a++)
		if (ev->args[a].key != w->args[a].key || ev->args[a].type != w->args[a].type ||
		    ev->args[a].v.i != w->args[a].v.i)
			c->bad++;
	return 0;
}

/* Key order only (ts asc, dur desc): a block sorted so keeps its ties in arrival order. */
static int key_cmp(const void *a, const void *b)
{
	const struct rev *x = a, *y = b;

	if (x->ev.ts_ns != y->ev.ts_ns)
		return x->ev.ts_ns < y->ev.ts_ns ? -1 : 1;
	if (x->ev.dur_ns != y->ev.dur_ns)
		return x->ev.dur_ns > y->ev.dur_ns ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * Push n random events over ntracks into a fresh session; verify after
 * reading back. runs > 0: the input is cut into that many blocks, each in
 * key order (so every track comes in at most `runs` ascending runs).
 */
static void run_case_runs(const char *dir, const char *label, size_t n, uint32_t ntracks,
			  size_t budget, int64_t shift, size_t runs)
{
	char path[512];
	struct tft_error err;
	struct tft_writer *w;
	struct tft_sorter *s;
	struct tft_session *ss;
	struct rev *evs = calloc(n, sizeof(*evs));
	uint32_t names[16], keys[3];
	int bad = 0;

	snprintf(path, sizeof(path), "%s/%s.tft", dir, label);
	tft_error_clear(&err);
	w = tft_writer_open(path, NULL, &err);
	if (!ok(w != NULL, "%s: writer open", label))
		return;
	tft_writer_add_process(w, &(struct tft_process){ .rank = -1 });
	for (uint32_t t = 0; t < ntracks; t++)
		tft_writer_add_track(w, &(struct tft_track){ .kind = TFT_TRACK_THREAD });
	for (int i = 0; i < 16; i++) {
		char nm[16];
		snprintf(nm, sizeof(nm), "n%d", i);
		names[i] = tft_writer_intern_cstr(w, nm);
	}
	keys[0] = tft_writer_intern_cstr(w, "k0");
	keys[1] = tft_writer_intern_cstr(w, "k1");
	keys[2] = tft_writer_intern_cstr(w, "k2");
	for (size_t i = 0; i < n; i++) {
		struct rev *r = &evs[i];
		r->seq = i;
		r->ev.track = (uint32_t)(rnd() % ntracks);
		r->ev.ts_ns = (int64_t)(rnd() % (n * 10)); /* many ties */
		r->ev.dur_ns = (int64_t)(rnd() % 4) * 7;   /* ties in dur too */
		r->ev.name = names[rnd() % 16];
		r->ev.kind = r->ev.dur_ns ? TFT_EV_SLICE : TFT_EV_INSTANT;
		r->ev.count = 1;
		r->ev.flags = rnd() % 50 == 0 ? TFT_EVF_UNCLOSED : 0;
		r->ev.nargs = (uint16_t)(rnd() % 4);
		for (int a = 0; a < r->ev.nargs; a++)
			r->args[a] = (struct tft_arg){ .key = keys[a], .type = TFT_ARG_INT,
						       .v.i = (int64_t)(rnd() % 1000) - 500 };
	}
	for (size_t b = 0; runs && b < runs; b++) {
		size_t lo = n * b / runs, hi = n * (b + 1) / runs;
		qsort(&evs[lo], hi - lo, sizeof(*evs), key_cmp);
	}
	s = tft_sorter_create(w, budget);
	for (size_t i = 0; i < n; i++) {
		struct rev *r = &evs[i];
		r->seq = i; /* arrival order */
		r->ev.args = r->args;
		if (tft_sorter_push(s, &r->ev, &err))
			bad++;
	}
	is_int(bad, 0, "push");
	is_int(tft_sorter_count(s), n, "count");
	tft_error_clear(&err);
	is_int(tft_sorter_finish(s, shift, &err), 0, "finish");
	is_int(tft_sorter_count(s), 0, "empty after finish");
	tft_sorter_destroy(s);
	is_int(tft_writer_close(w, &err), 0, "writer close");

	for (size_t i = 0; i < n; i++)
		evs[i].ev.args = evs[i].args;
	qsort(evs, n, sizeof(*evs), ref_cmp);
	for (size_t i = 0; i < n; i++)
		evs[i].ev.args = evs[i].args; /* qsort moved the arrays */
	ss = tft_session_open(path, &err);
	if (!ok(ss != NULL, "%s: reopen", label))
		return;
	size_t off = 0;
	bad = 0;
	for (uint32_t t = 0; t < ntracks; t++) {
		size_t m = 0;
		while (off + m < n && evs[off + m].ev.track == t)
			m++;
		struct check c = { &evs[off], m, 0, shift, 0 };
		tft_session_scan(ss, t, INT64_MIN, INT64_MAX, 0, check_fn, &c, &err);
		bad += c.bad + (c.i != m);
		off += m;
	}
	ok(bad == 0, "%s: %zu events over %u tracks come back in reference order", label, n, ntracks);
	tft_session_close(ss);
	free(evs);
	unlink(path);
}

static void run_case(const char *dir, const char *label, size_t n, uint32_t ntracks, size_t budget,
		     int64_t shift)
{
	run_case_runs(dir, label, n, ntracks, budget, shift, 0);
}

int main(void)
{
	char dir[256];

	snprintf(dir, sizeof(dir), "%s/tft-sorter-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(dir))
		return 1;
	/* fits the budget: sorted in memory */
	run_case(dir, "inmem", 5000, 3, 0, 0);
	/* 16 KiB budget: ~160 events per run, so dozens of spills and a wide merge */
	run_case(dir, "spill", 20000, 5, 16 << 10, 1000000);
	/* one track, negative shift */
	run_case(dir, "onetrack", 8000, 1, 32 << 10, -5000);
	/* a few ascending runs per track (ties across them): merged, in memory and spilled */
	run_case_runs(dir, "runs3", 30000, 4, 0, 7, 3);
	run_case_runs(dir, "runs40", 30000, 2, 0, 0, 40);
	run_case_runs(dir, "runs3spill", 30000, 3, 64 << 10, 0, 3);
	/* one track in more runs than a merge takes (sorted), and one run (as it came) */
	run_case(dir, "manyruns", 20000, 1, 0, 0);
	run_case_runs(dir, "onerun", 10000, 2, 0, 0, 1);

	/* reuse after finish; rejects an unknown track; empty finish is fine */
	{
		char path[512];
		struct tft_error err;
		snprintf(path, sizeof(path), "%s/reuse.tft", dir);
		struct tft_writer *w = tft_writer_open(path, NULL, &err);
		tft_writer_add_process(w, &(struct tft_process){ .rank = -1 });
		uint32_t t = tft_writer_add_track(w, &(struct tft_track){ .kind = TFT_TRACK_THREAD });
		struct tft_sorter *s = tft_sorter_create(w, 16 << 10);
		tft_error_clear(&err);
		is_int(tft_sorter_push(s, &(struct tft_event){ .track = 7, .count = 1 }, &err), TFT_EINVAL,
		       "reuse: unknown track refused");
		is_int(tft_sorter_finish(s, 0, &err), 0, "reuse: empty finish");
		for (int round = 0; round < 2; round++) {
			for (int i = 999; i >= 0; i--)
				tft_sorter_push(s, &(struct tft_event){ .track = t, .ts_ns = round * 100000 + i * 10,
									.dur_ns = 5, .count = 1 }, &err);
			tft_error_clear(&err);
			is_int(tft_sorter_finish(s, 0, &err), 0, "reuse: finish round");
		}
		/* a later batch that goes back in time is the writer's to refuse */
		tft_sorter_push(s, &(struct tft_event){ .track = t, .ts_ns = 0, .count = 1 }, &err);
		tft_error_clear(&err);
		is_int(tft_sorter_finish(s, 0, &err), TFT_EINVAL, "reuse: out of order across batches refused");
		ok(strstr(err.msg, "track 0") != NULL, "reuse: message names the track (%s)", err.msg);
		tft_sorter_destroy(s);
		tft_writer_close(w, &err);
		struct tft_session *ss = tft_session_open(path, &err);
		ok(ss && tft_session_track(ss, t)->slices == 2000, "reuse: both rounds stored");
		tft_session_close(ss);
		unlink(path);
	}
	rmdir(dir);
	return done_testing();
}
