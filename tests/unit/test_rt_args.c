/* SPDX-License-Identifier: MIT */
/*
 * Args on a zone's slice (tft_rt_zone_args, runtime/source.h), the job a
 * process belongs to from its launcher's environment (runtime/job.h: the
 * process rank and meta job_rank, job_size, job_id; a source's later word
 * on them), and the test-only clock skew (TFT_TEST_CLOCK_SKEW_NS) that moves
 * every time the session records.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TFT_ENABLE 1
#include "runtime/clock.h"
#include "runtime/job.h"
#include "runtime/source.h"
#include "store/session.h"
#include "tap.h"
#include "tftracer/tftracer.h"
#include "tftracer/zone.h"

#define SKEW 5000000000000LL /* 5000 s: TFT_TEST_CLOCK_SKEW_NS of this test (main) */

static char tmpdir[256];

static const char *tpath(const char *name)
{
	static char buf[4][512];
	static int k;
	char *p = buf[k++ & 3];

	snprintf(p, 512, "%s/%s", tmpdir, name);
	return p;
}

static int start(const char *name)
{
	struct tft_config c;

	tft_config_init(&c);
	c.exit_timeout_ms = 60000;
	c.session_path = tpath(name);
	return tft_init(&c);
}

static const struct tft_site s_outer = { "outer", "t", NULL, 0, 0 };
static const struct tft_site s_inner = { "inner", "t", NULL, 0, 0 };
static const struct tft_site s_plain = { "plain", "t", NULL, 0, 0 };

/* One slice as read back: its name and args as "key=value" text. */
struct slice {
	char name[32];
	int nargs;
	char args[20][9000];
	int64_t ts, dur;
};

struct col {
	struct tft_session *s;
	int n;
	struct slice *sl;
};

static int collect(void *ctx, const struct tft_event *ev)
{
	struct col *c = ctx;
	struct slice *x;

	if (c->n >= 8 || ev->kind != TFT_EV_SLICE)
		return 0;
	x = &c->sl[c->n++];
	snprintf(x->name, sizeof(x->name), "%s", tft_session_str(c->s, ev->name, NULL));
	x->ts = ev->ts_ns;
	x->dur = ev->dur_ns;
	x->nargs = ev->nargs;
	for (uint16_t i = 0; i < ev->nargs && i < 20; i++) {
		const struct tft_arg *a = &ev->args[i];
		const char *k = tft_session_str(c->s, a->key, NULL);
		switch (a->type) {
		case TFT_ARG_INT:
			snprintf(x->args[i], sizeof(x->args[i]), "%s=%lld", k, (long long)a->v.i);
			break;
		case TFT_ARG_BOOL:
			snprintf(x->args[i], sizeof(x->args[i]), "%s=%s", k, a->v.i ? "true" : "false");
			break;
		case TFT_ARG_STR:
			snprintf(x->args[i], sizeof(x->args[i]), "%s='%s'", k,
				 tft_session_str(c->s, a->v.str, NULL));
			break;
		case TFT_ARG_JSON:
			snprintf(x->args[i], sizeof(x->args[i]), "%s=%s", k,
				 tft_session_str(c->s, a->v.str, NULL));
			break;
		default:
			snprintf(x->args[i], sizeof(x->args[i]), "%s?", k);
		}
	}
	return 0;
}

static int find_track(struct tft_session *s, int kind, const char *name)
{
	for (uint32_t i = 0; i < tft_session_track_count(s); i++) {
		const struct tft_track *t = tft_session_track(s, i);
		if ((int)t->kind == kind && strcmp(tft_session_str(s, t->name, NULL), name) == 0)
			return (int)i;
	}
	return -1;
}

static int thread_track(struct tft_session *s)
{
	for (uint32_t i = 0; i < tft_session_track_count(s); i++)
		if (tft_session_track(s, i)->kind == TFT_TRACK_THREAD)
			return (int)i;
	return -1;
}

static int has_arg(const struct slice *x, const char *want)
{
	for (int i = 0; i < x->nargs && i < 20; i++)
		if (strcmp(x->args[i], want) == 0)
			return 1;
	return 0;
}

static char big[TFT_RT_ARG_TEXT_MAX + 100];

static void test_args(void)
{
	static struct slice sl[8];
	struct tft_session *s;
	struct col c = { 0 };
	struct tft_zone a, b, p;
	int track;
	static const char json[] = "[1,2,3]";
	static const char text[] = "dynamic text";
	char longname[80];

	is_int(start("args.tft"), 0, "args: init");
	a = tft_zone_begin(&s_outer);
	b = tft_zone_begin(&s_inner);
	{
		struct tft_rt_arg x[5] = {
			{ .key = "count", .type = TFT_RT_ARG_INT, .i = -42 },
			{ .key = "datatype", .type = TFT_RT_ARG_STR, .s = "MPI_INT" },
			{ .key = "note", .type = TFT_RT_ARG_TEXT, .s = text, .len = sizeof(text) - 1 },
			{ .key = "completes", .type = TFT_RT_ARG_JSON, .s = json, .len = sizeof(json) - 1 },
			{ .key = "flag", .type = TFT_RT_ARG_BOOL, .i = 1 },
		};
		tft_rt_zone_args(b.depth, x, 5);
	}
	tft_zone_end(b);
	/* the outer zone's args come after its inner zone's; then a second group */
	{
		struct tft_rt_arg x[1] = { { .key = "count", .type = TFT_RT_ARG_INT, .i = 7 } };
		tft_rt_zone_args(a.depth, x, 1);
		b = tft_zone_begin(&s_inner);
		tft_zone_end(b); /* an inner zone without args between the outer's groups */
		x[0].key = "bytes";
		x[0].i = 1LL << 40;
		tft_rt_zone_args(a.depth, x, 1);
		/* not the innermost zone's depth: ignored */
		b = tft_zone_begin(&s_inner);
		tft_rt_zone_args(a.depth, x, 1);
		tft_zone_end(b);
	}
	tft_zone_end(a);
	/* a text longer than the limit is cut (and a cut JSON is stored as a string) */
	memset(big, 'x', sizeof(big));
	big[0] = '[';
	p = tft_zone_begin(&s_plain);
	{
		struct tft_rt_arg x[2] = {
			{ .key = "big", .type = TFT_RT_ARG_JSON, .s = big, .len = sizeof(big) },
			{ .key = "count", .type = TFT_RT_ARG_INT, .i = 3 },
		};
		tft_rt_zone_args(p.depth, x, 2);
		/* more than TFT_RT_MAX_ARGS at once: refused */
		struct tft_rt_arg many[TFT_RT_MAX_ARGS + 1];
		for (unsigned i = 0; i <= TFT_RT_MAX_ARGS; i++)
			many[i] = (struct tft_rt_arg){ .key = "m", .type = TFT_RT_ARG_INT, .i = i };
		tft_rt_zone_args(p.depth, many, TFT_RT_MAX_ARGS + 1);
	}
	tft_zone_end(p);
	/* a zone never opened, a depth beyond the open ones: nothing happens */
	{
		struct tft_rt_arg x[1] = { { .key = "count", .type = TFT_RT_ARG_INT, .i = 1 } };
		tft_rt_zone_args(5, x, 1);
		tft_rt_zone_args(0, x, 1);
	}
	is_int(tft_shutdown(), 0, "args: shutdown");

	s = tft_session_open(tpath("args.tft"), NULL);
	ok(s != NULL, "args: the session opens");
	if (!s)
		return;
	track = thread_track(s);
	c.s = s;
	c.sl = sl;
	if (track >= 0)
		tft_session_scan(s, (uint32_t)track, INT64_MIN, INT64_MAX, 0, collect, &c, NULL);
	is_int(c.n, 5, "args: five slices");
	is_str(sl[0].name, "outer", "args: outer first");
	is_int(sl[0].nargs, 2, "args: the outer zone's two groups");
	ok(has_arg(&sl[0], "count=7") && has_arg(&sl[0], "bytes=1099511627776"),
	   "args: the outer zone's args (%s, %s)", sl[0].args[0], sl[0].args[1]);
	is_str(sl[1].name, "inner", "args: inner next");
	is_int(sl[1].nargs, 5, "args: the inner zone's five");
	ok(has_arg(&sl[1], "count=-42"), "args: an int (%s)", sl[1].args[0]);
	ok(has_arg(&sl[1], "datatype='MPI_INT'"), "args: a static string (%s)", sl[1].args[1]);
	ok(has_arg(&sl[1], "note='dynamic text'"), "args: a copied text (%s)", sl[1].args[2]);
	ok(has_arg(&sl[1], "completes=[1,2,3]"), "args: JSON (%s)", sl[1].args[3]);
	ok(has_arg(&sl[1], "flag=true"), "args: a bool (%s)", sl[1].args[4]);
	is_int(sl[2].nargs, 0, "args: the inner zone between the outer's groups has none");
	is_int(sl[3].nargs, 0, "args: a zone that is not the innermost gets none");
	is_str(sl[4].name, "plain", "args: the zone with a long text");
	is_int(sl[4].nargs, 2, "args: its two (the group of too many refused)");
	snprintf(longname, sizeof(longname), "big='[%.10s", big + 1);
	ok(strncmp(sl[4].args[0], longname, strlen(longname)) == 0 &&
		   strlen(sl[4].args[0]) == strlen("big=''") + TFT_RT_ARG_TEXT_MAX,
	   "args: a long JSON cut to %u bytes, a string (%.20s... %zu)", TFT_RT_ARG_TEXT_MAX,
	   sl[4].args[0], strlen(sl[4].args[0]));
	tft_session_close(s);
}

/* Many zones with args on a thread whose outer zone stays open: pending slices are
 * written while it is open (hold limit, full pending list) and every slice keeps its own. */
struct chk {
	struct tft_session *s;
	int bad, n;
	int64_t outer;
};

static int check_many(void *ctx, const struct tft_event *ev)
{
	struct chk *k = ctx;
	const char *name = tft_session_str(k->s, ev->name, NULL);
	int64_t i = -1, twice = -1;

	for (uint16_t j = 0; j < ev->nargs; j++) {
		const char *key = tft_session_str(k->s, ev->args[j].key, NULL);
		if (strcmp(key, "i") == 0)
			i = ev->args[j].v.i;
		else if (strcmp(key, "twice") == 0)
			twice = ev->args[j].v.i;
		else if (strcmp(key, "outer") == 0)
			k->outer = ev->args[j].v.i;
	}
	if (strcmp(name, "inner") == 0) {
		if (i < 0 || twice != 2 * i)
			k->bad++;
		k->n++;
	}
	return 0;
}

static void test_args_many(void)
{
	struct tft_session *s;
	struct tft_zone a, b;
	struct chk k = { 0 };
	int track;
	enum { N = 40000 };

	is_int(start("many.tft"), 0, "many: init");
	a = tft_zone_begin(&s_outer);
	for (int i = 0; i < N; i++) {
		struct tft_rt_arg x[2] = { { .key = "i", .type = TFT_RT_ARG_INT, .i = i },
					   { .key = "twice", .type = TFT_RT_ARG_INT, .i = 2 * i } };
		b = tft_zone_begin(&s_inner);
		tft_rt_zone_args(b.depth, x, 2);
		tft_zone_end(b);
		if (i % 1000 == 999)
			tft_flush(10000); /* the drain keeps up (a full ring drops, not this test's point) */
	}
	{
		struct tft_rt_arg x[1] = { { .key = "outer", .type = TFT_RT_ARG_INT, .i = N } };
		tft_rt_zone_args(a.depth, x, 1);
	}
	tft_zone_end(a);
	is_int(tft_shutdown(), 0, "many: shutdown");
	s = tft_session_open(tpath("many.tft"), NULL);
	ok(s != NULL, "many: the session opens");
	if (!s)
		return;
	track = thread_track(s);
	k.s = s;
	k.outer = -1;
	if (track >= 0)
		tft_session_scan(s, (uint32_t)track, INT64_MIN, INT64_MAX, 0, check_many, &k, NULL);
	is_int(k.n, N, "many: every inner slice");
	is_int(k.bad, 0, "many: each with its own args");
	is_int(k.outer, N, "many: the outer slice (split or not) ends with its arg");
	tft_session_close(s);
}

/* ---- the job ------------------------------------------------------------------------------ */

static void test_job(void)
{
	struct tft_job j;
	struct tft_session *s;
	const struct tft_process *p;
	char path[64];

	unsetenv("RANK");
	unsetenv("WORLD_SIZE");
	unsetenv("MASTER_ADDR");
	unsetenv("MASTER_PORT");
	is_int(tft_job_from_env(&j), -1, "job: no rank");
	setenv("RANK", "3", 1);
	setenv("WORLD_SIZE", "8", 1);
	setenv("MASTER_ADDR", "10.0.0.1", 1);
	setenv("MASTER_PORT", "29500", 1);
	is_int(tft_job_from_env(&j), 3, "job: RANK");
	is_int(j.size, 8, "job: WORLD_SIZE");
	is_str(j.id, "10.0.0.1:29500", "job: id from the rendezvous address");
	is_str(j.from, "RANK", "job: where the rank came from");
	setenv("OMPI_COMM_WORLD_RANK", "5", 1);
	setenv("OMPI_MCA_ess_base_jobid", "1234", 1);
	is_int(tft_job_from_env(&j), 5, "job: Open MPI's rank first");
	is_str(j.id, "ompi:1234", "job: Open MPI's job id");
	setenv("OMPI_COMM_WORLD_RANK", "x5", 1);
	is_int(tft_job_from_env(&j), 3, "job: a rank that is not a number is skipped");
	unsetenv("OMPI_COMM_WORLD_RANK");
	unsetenv("OMPI_MCA_ess_base_jobid");
	is_int(tft_job_rank_path(path, sizeof(path), "jobdir//", 12), 0, "job: rank path");
	is_str(path, "jobdir/rank-12.tft", "job: rank path without a doubled slash");
	is_int(tft_job_rank_path(path, 10, "jobdir", 12), -1, "job: rank path too long");

	is_int(start("job.tft"), 0, "job: init");
	tft_shutdown();
	s = tft_session_open(tpath("job.tft"), NULL);
	ok(s != NULL, "job: the session opens");
	if (!s)
		return;
	p = tft_session_process(s, 0);
	is_int(p ? p->rank : -2, 3, "job: the process carries its rank");
	is_str(tft_session_meta(s, "job_rank"), "3", "job: meta job_rank");
	is_str(tft_session_meta(s, "job_size"), "8", "job: meta job_size");
	is_str(tft_session_meta(s, "job_id"), "10.0.0.1:29500", "job: meta job_id");
	tft_session_close(s);
	unsetenv("RANK");
	unsetenv("WORLD_SIZE");
	unsetenv("MASTER_ADDR");
	unsetenv("MASTER_PORT");
}

/* A source that says the rank later (an MPI library's word, after MPI_Init). */
static int said;
static void job_collect(void *ctx, struct tft_rt_src *io, int final)
{
	(void)ctx;
	(void)final;
	if (!said) {
		tft_rt_src_job(io, 6, 9);
		said = 1;
	}
}

static void test_job_source(void)
{
	static const struct tft_rt_source src = { job_collect, NULL };
	struct tft_session *s;
	const struct tft_process *p;

	is_int(tft_rt_source_add(&src), 0, "job source: added");
	is_int(start("jobsrc.tft"), 0, "job source: init");
	tft_flush(10000);
	tft_shutdown();
	s = tft_session_open(tpath("jobsrc.tft"), NULL);
	ok(s != NULL, "job source: the session opens");
	if (!s)
		return;
	p = tft_session_process(s, 0);
	is_int(p ? p->rank : -2, 6, "job source: the process's rank");
	is_str(tft_session_meta(s, "job_rank"), "6", "job source: job_rank");
	is_str(tft_session_meta(s, "job_size"), "9", "job source: job_size");
	is_str(tft_session_meta(s, "job_id"), "", "job source: no job id in the environment");
	tft_session_close(s);
}

/* ---- slices recorded elsewhere, the job said later ----------------------------------------- */

static void test_append(void)
{
	static struct slice sl[8];
	struct tft_session *s;
	struct col c = { 0 };
	const struct tft_track *t;
	const struct tft_process *p;
	int track;
	static const char json[] = "[4,5]";
	struct tft_rt_arg a[4] = {
		{ .key = "bytes", .type = TFT_RT_ARG_INT, .i = 4096 },
		{ .key = "dtype", .type = TFT_RT_ARG_TEXT, .s = "float32", .len = 7 },
		{ .key = "shape", .type = TFT_RT_ARG_JSON, .s = json, .len = sizeof(json) - 1 },
		{ .key = "async", .type = TFT_RT_ARG_BOOL, .i = 1 },
	};
	struct tft_rt_slice x[3] = {
		{ "c10d::all_reduce", "collective", 3000, 500, a, 4 },
		{ "c10d::broadcast", "collective", 1000, 5000, a, 1 }, /* (overlaps the others: lanes) */
		{ "c10d::barrier", "collective", 2000, 100, NULL, 0 },
	};
	struct tft_rt_slice late = { "c10d::barrier", "collective", 2500, 1000, NULL, 0 };

	is_int(tft_rt_append_slices(TFT_TRACK_COMM, "torch.distributed", x, 3), TFT_EINVAL,
	       "append: no session runs");
	is_int(tft_rt_set_job(1, 2, NULL), TFT_EAGAIN, "set_job: no session runs");
	is_int(start("append.tft"), 0, "append: init");
	is_int(tft_rt_append_slices(TFT_TRACK_COUNTER, "x", x, 3), TFT_EINVAL, "append: not a counter track");
	is_int(tft_rt_append_slices(TFT_TRACK_COMM, "torch.distributed", x, 3), 3, "append: three");
	is_int(tft_rt_append_slices(TFT_TRACK_COMM, "torch.distributed", &late, 1), 1,
	       "append: one older than the track's last (moved up)");
	is_int(tft_rt_set_job(-1, 2, NULL), TFT_EINVAL, "set_job: a negative rank");
	is_int(tft_rt_set_job(3, 4, "job-7"), 0, "set_job: rank 3 of 4");
	tft_flush(10000);
	tft_shutdown();
	s = tft_session_open(tpath("append.tft"), NULL);
	ok(s != NULL, "append: the session opens");
	if (!s)
		return;
	track = find_track(s, TFT_TRACK_COMM, "torch.distributed");
	ok(track >= 0, "append: a comm track named torch.distributed");
	if (track < 0) {
		tft_session_close(s);
		return;
	}
	t = tft_session_track(s, (uint32_t)track);
	ok(t->flags & TFT_TRACKF_CONCURRENT, "append: its slices in lanes (concurrent)");
	c.s = s;
	c.sl = sl;
	tft_session_scan(s, (uint32_t)track, INT64_MIN, INT64_MAX, 0, collect, &c, NULL);
	is_int(c.n, 4, "append: four slices");
	is_str(sl[0].name, "c10d::broadcast", "append: in order of start");
	is_int(sl[0].ts, 1000 + SKEW, "append: at its time on the session clock (the test skew added)");
	is_str(sl[2].name, "c10d::all_reduce", "append: the third");
	ok(has_arg(&sl[2], "bytes=4096") && has_arg(&sl[2], "dtype='float32'") &&
		   has_arg(&sl[2], "shape=[4,5]") && has_arg(&sl[2], "async=true"),
	   "append: its args (%s %s %s %s)", sl[2].args[0], sl[2].args[1], sl[2].args[2], sl[2].args[3]);
	is_int(sl[3].ts, 3000 + SKEW, "append: the late one moved up to the last start");
	is_int(sl[3].dur, 500, "append: ... ending where it ended");
	p = tft_session_process(s, 0);
	is_int(p ? p->rank : -2, 3, "set_job: the process's rank");
	is_str(tft_session_meta(s, "job_rank"), "3", "set_job: job_rank");
	is_str(tft_session_meta(s, "job_size"), "4", "set_job: job_size");
	is_str(tft_session_meta(s, "job_id"), "job-7", "set_job: job_id");
	tft_session_close(s);
}

/* ---- the test clock skew ---------------------------------------------------------------- */


static void test_skew(void)
{
	static struct slice sl[8];
	struct tft_session *s;
	struct col c = { 0 };
	struct tft_zone z;
	int64_t t0, t1, real0, mono0;
	const char *v;

	is_int(tft_rt_test_skew_ns(), SKEW, "skew: read from the environment");
	is_int(start("skew.tft"), 0, "skew: init");
	t0 = tft_rt_mono_ns();
	z = tft_zone_begin(&s_plain);
	tft_zone_end(z);
	t1 = tft_rt_mono_ns();
	real0 = tft_rt_real_ns();
	mono0 = tft_rt_mono_ns();
	ok(tft_rt_session_now_ns() - tft_rt_mono_ns() >= SKEW - 1000000 &&
		   tft_rt_session_now_ns() - tft_rt_mono_ns() <= SKEW + 1000000,
	   "skew: the session's now is CLOCK_MONOTONIC plus the skew");
	tft_shutdown();
	s = tft_session_open(tpath("skew.tft"), NULL);
	ok(s != NULL, "skew: the session opens");
	if (!s)
		return;
	c.s = s;
	c.sl = sl;
	tft_session_scan(s, (uint32_t)thread_track(s), INT64_MIN, INT64_MAX, 0, collect, &c, NULL);
	is_int(c.n, 1, "skew: one slice");
	/* (the TSC map may be off CLOCK_MONOTONIC by a few microseconds) */
	ok(sl[0].ts >= t0 + SKEW - 100000 && sl[0].ts + sl[0].dur <= t1 + SKEW + 100000,
	   "skew: the slice at its CLOCK_MONOTONIC time plus the skew (%lld in [%lld, %lld])",
	   (long long)sl[0].ts, (long long)(t0 + SKEW), (long long)(t1 + SKEW));
	v = tft_session_meta(s, "session_start_ns");
	ok(v && strtoll(v, NULL, 10) > t0 + SKEW - 10000000000LL && strtoll(v, NULL, 10) <= t0 + SKEW,
	   "skew: session_start_ns moved too (%s)", v ? v : "none");
	v = tft_session_meta(s, "realtime_offset_ns");
	ok(v && llabs(strtoll(v, NULL, 10) - (real0 - mono0)) < 10000000000LL,
	   "skew: the wall-clock offset is the host's, not moved (a host whose clocks are off)");
	tft_session_close(s);
}

int main(void)
{
	const char *base = getenv("TMPDIR");

	snprintf(tmpdir, sizeof(tmpdir), "%s/tft-rtargs-XXXXXX", base && *base ? base : "/tmp");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	/* before the first session: the skew is read once per process */
	setenv("TFT_TEST_CLOCK_SKEW_NS", "5000000000000", 1);
	test_skew();
	test_append();
	test_args();
	test_args_many();
	test_job();
	test_job_source();
	{
		char cmd[600];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", tmpdir);
	}
	return done_testing();
}
