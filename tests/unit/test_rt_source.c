/* SPDX-License-Identifier: MIT */
/*
 * What the runtime offers the interceptors (runtime/source.h): the innermost
 * open zone per thread, event sources collected by the drain (slices on
 * tracks of their own, flow ends matched to flows begun on a thread, whole
 * flows, counter samples, counts and meta), counter values carried beside a
 * zone's begin and end and put on its slice as args, step hooks, and a
 * session owned by the preload library that a program's tft_init joins and
 * its tft_shutdown only flushes.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define TFT_ENABLE 1
#include "runtime/source.h"
#include "store/session.h"
#include "tap.h"
#include "tftracer/tftracer.h"
#include "tftracer/zone.h"

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

static int find_track(struct tft_session *s, int kind, const char *name)
{
	for (uint32_t i = 0; i < tft_session_track_count(s); i++) {
		const struct tft_track *t = tft_session_track(s, i);
		if ((int)t->kind == kind && strcmp(tft_session_str(s, t->name, NULL), name) == 0)
			return (int)i;
	}
	return -1;
}

/* ---- innermost zone ---------------------------------------------------------------------- */

static const struct tft_site s_outer = { "outer", NULL, NULL, 0, 0 };
static const struct tft_site s_inner = { "inner", NULL, NULL, 0, 0 };

static void test_innermost(void)
{
	struct tft_zone a, b;

	ok(tft_rt_innermost_site() == NULL, "innermost: none before any zone");
	is_int(start("inner.tft"), 0, "innermost: init");
	a = tft_zone_begin(&s_outer);
	ok(tft_rt_innermost_site() == &s_outer, "innermost: the open zone");
	b = tft_zone_begin(&s_inner);
	ok(tft_rt_innermost_site() == &s_inner, "innermost: the nested zone");
	tft_zone_end(b);
	ok(tft_rt_innermost_site() == &s_outer, "innermost: back to the outer zone");
	b = tft_zone_begin(&s_inner);
	tft_zone_end(a); /* ends the inner one too */
	ok(tft_rt_innermost_site() == NULL, "innermost: none once the outer zone ended both");
	tft_set_tracing(false);
	a = tft_zone_begin(&s_outer);
	ok(tft_rt_innermost_site() == NULL, "innermost: a zone not recorded is not one");
	tft_zone_end(a);
	tft_set_tracing(true);
	tft_shutdown();
}

/* ---- a source -------------------------------------------------------------------------- */

static const struct tft_site s_launch = { "launch", "test", NULL, 0, 0 };
static const struct tft_site s_gauge = { "gauge", "test", NULL, 0, 0 };

#define NCMD 50
static struct {
	pthread_mutex_t lock;
	int64_t ts[NCMD];       /* ticks of the launches (in order) */
	int n, written, finals;
	uint32_t track, gen;
	int64_t tid;
	const struct tft_site *op[NCMD];
} src = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void collect(void *ctx, struct tft_rt_src *io, int final)
{
	(void)ctx;
	pthread_mutex_lock(&src.lock);
	if (src.gen != tft_rt_src_session(io)) {
		src.gen = tft_rt_src_session(io);
		src.track = tft_rt_src_track(io, TFT_TRACK_GPU_STREAM, "device queue", 7);
		tft_rt_src_meta(io, "source_meta", "here");
	}
	for (; src.written < src.n; src.written++) {
		struct tft_arg arg;
		struct tft_event ev;
		int i = src.written;
		int64_t t = tft_rt_src_ns(io, (uint64_t)src.ts[i]);
		memset(&ev, 0, sizeof(ev));
		ev.kind = TFT_EV_SLICE;
		ev.track = src.track;
		ev.ts_ns = t + 1000;
		ev.dur_ns = 500;
		ev.name = tft_rt_src_intern(io, "kernel", 6);
		arg.key = tft_rt_src_intern(io, "op", 2);
		arg.type = TFT_ARG_STR;
		arg.v.str = tft_rt_src_site_name(io, src.op[i]);
		ev.nargs = src.op[i] ? 1 : 0;
		ev.args = &arg;
		tft_rt_src_append(io, &ev);
		if (i % 2 == 0) /* its launch flow began on the thread */
			tft_rt_src_flow_end(io, 1000 + (uint64_t)i, src.track, ev.ts_ns);
		else /* a whole flow from the launching thread */
			tft_rt_src_flow(io, 1000 + (uint64_t)i, &s_launch, src.tid, t, src.track, ev.ts_ns);
		tft_rt_src_counter(io, &s_gauge, t, (double)i);
		tft_rt_src_count(io, "source_commands", 1);
	}
	if (final)
		src.finals++;
	pthread_mutex_unlock(&src.lock);
}

static const struct tft_site s_step_zone = { "forward", NULL, NULL, 0, 0 };
static struct tft_session *op_session;

static int count_op(void *ctx, const struct tft_event *ev)
{
	int *n = ctx;

	for (uint16_t i = 0; i < ev->nargs; i++)
		if (strcmp(tft_session_str(op_session, ev->args[i].key, NULL), "op") == 0 &&
		    strcmp(tft_session_str(op_session, ev->args[i].v.str, NULL), "forward") == 0)
			(*n)++;
	return 0;
}

static void test_source(void)
{
	static const struct tft_rt_source def = { collect, NULL };
	struct tft_session *s;
	struct tft_session_summary sum;
	int track, nslices = 0, with_op = 0;
	uint64_t id;

	is_int(tft_rt_source_add(&def), 0, "source: registered");
	is_int(start("source.tft"), 0, "source: init");
	src.tid = (int64_t)syscall(SYS_gettid);
	for (int i = 0; i < NCMD; i++) {
		struct tft_zone z = tft_zone_begin(&s_step_zone);
		uint64_t t;
		if (i % 2 == 0)
			tft_flow_begin(&s_launch, 1000 + (uint64_t)i);
		/* The command is enqueued once its launch flow has begun: its kernel (at
		 * t + 1 us) starts after the flow's begin, however long a preemption
		 * between the two took (read before it, a 1 us gap made the end sort
		 * first: one flow unmatched, seen under ASan at load). */
		t = tft_rt_now_tick();
		pthread_mutex_lock(&src.lock);
		src.op[src.n] = tft_rt_innermost_site();
		src.ts[src.n++] = (int64_t)t;
		pthread_mutex_unlock(&src.lock);
		tft_zone_end(z);
		if (i == NCMD / 2)
			tft_flush(60000); /* half of them collected in an earlier cycle */
	}
	is_int(tft_shutdown(), 0, "source: shutdown");
	is_int(src.finals, 1, "source: one final collection");
	s = tft_session_open(tpath("source.tft"), NULL);
	ok(s != NULL, "source: the session opens");
	if (!s)
		return;
	op_session = s;
	track = find_track(s, TFT_TRACK_GPU_STREAM, "device queue");
	ok(track >= 0, "source: its track, kind gpu_stream");
	if (track >= 0) {
		const struct tft_track *t = tft_session_track(s, (uint32_t)track);
		nslices = (int)t->slices;
		is_int(t->tid, 7, "source: the track's tid");
		for (uint32_t i = 0; i < tft_session_track_count(s); i++)
			if (tft_session_track(s, i)->kind == TFT_TRACK_THREAD)
				is_int(tft_session_track(s, i)->process, t->process,
				       "source: in the runtime's process");
		tft_session_scan(s, (uint32_t)track, INT64_MIN, INT64_MAX, 0, count_op, &with_op, NULL);
	}
	is_int(nslices, NCMD, "source: every command a slice");
	tft_session_get_summary(s, &sum);
	is_int(sum.flows, NCMD, "source: a flow per command (ends and whole flows)");
	is_int(sum.unmatched_flows, 0, "source: none unmatched");
	is_int(sum.dropped, 0, "source: nothing dropped");
	ok(sum.counters >= NCMD, "source: counter samples");
	is_str(tft_session_meta(s, "source_meta"), "here", "source: meta");
	id = 0;
	{
		const char *v = tft_session_meta(s, "source_commands");
		id = v ? strtoull(v, NULL, 10) : 0;
	}
	is_int(id, NCMD, "source: count");
	is_int(with_op, NCMD, "source: each with its op (the zone open at its launch)");
	tft_session_close(s);
}

/* ---- counter values on slices ------------------------------------------------------------ */

static uint64_t fake_counter;
static const char *const value_names[] = { "perf.fake", "perf.twice" };

static void zone_hook(uint32_t phase, uint32_t depth)
{
	uint64_t v[2];

	fake_counter += 10 * depth; /* each boundary moves it by 10 x depth */
	v[0] = fake_counter;
	v[1] = 2 * fake_counter;
	tft_rt_emit_values(phase, depth, v, 2);
}

static int steps_seen[2];

static void step_hook(uint32_t phase)
{
	steps_seen[phase & 1]++;
}

struct vcol {
	struct tft_session *s;
	int n, bad;
	int64_t fake[8], twice[8];
	char name[8][16];
};

static int vcollect(void *ctx, const struct tft_event *ev)
{
	struct vcol *c = ctx;

	if (c->n >= 8)
		return 0;
	snprintf(c->name[c->n], 16, "%s", tft_session_str(c->s, ev->name, NULL));
	c->fake[c->n] = c->twice[c->n] = -1;
	for (uint16_t i = 0; i < ev->nargs; i++) {
		const char *k = tft_session_str(c->s, ev->args[i].key, NULL);
		if (strcmp(k, "perf.fake") == 0)
			c->fake[c->n] = ev->args[i].v.i;
		else if (strcmp(k, "perf.twice") == 0)
			c->twice[c->n] = ev->args[i].v.i;
	}
	c->n++;
	return 0;
}

static void test_values(void)
{
	struct tft_session *s;
	struct vcol c;
	struct tft_zone a, b;
	int track = -1;

	tft_rt_counters_describe(value_names, 2);
	tft_rt_set_hooks(zone_hook, step_hook);
	is_int(start("values.tft"), 0, "values: init");
	tft_step_begin("train");
	a = tft_zone_begin(&s_outer); /* +10 */
	b = tft_zone_begin(&s_inner); /* +20 */
	tft_zone_end(b);              /* +20: inner = 20 */
	tft_zone_end(a);              /* +10: outer = 20 + 20 + 10 = 50 */
	tft_step_end();
	tft_rt_set_hooks(NULL, NULL);
	tft_shutdown();
	is_int(steps_seen[0], 1, "values: step hook at the begin");
	is_int(steps_seen[1], 1, "values: step hook at the end");
	s = tft_session_open(tpath("values.tft"), NULL);
	ok(s != NULL, "values: the session opens");
	if (!s)
		return;
	for (uint32_t i = 0; i < tft_session_track_count(s); i++)
		if (tft_session_track(s, i)->kind == TFT_TRACK_THREAD)
			track = (int)i;
	memset(&c, 0, sizeof(c));
	c.s = s;
	if (track >= 0)
		tft_session_scan(s, (uint32_t)track, INT64_MIN, INT64_MAX, 0, vcollect, &c, NULL);
	is_int(c.n, 2, "values: two slices");
	is_str(c.name[0], "outer", "values: outer first");
	is_int(c.fake[0], 50, "values: the outer zone's difference (nested included)");
	is_int(c.twice[0], 100, "values: its second value");
	is_int(c.fake[1], 20, "values: the inner zone's difference");
	is_int(c.twice[1], 40, "values: its second value");
	tft_session_close(s);
	tft_rt_counters_describe(NULL, 0);
}

/* ---- owned sessions ---------------------------------------------------------------------- */

static void test_owned(void)
{
	struct tft_config c;
	struct tft_session *s;
	uint32_t begun = tft_rt_sessions_begun();

	tft_config_init(&c);
	c.exit_timeout_ms = 60000;
	c.session_path = tpath("owned.tft");
	is_int(tft_rt_init_owned(&c), 0, "owned: the preload's session starts");
	ok(tft_rt_running(), "owned: running");
	is_int(tft_rt_session_pid(), getpid(), "owned: this process's");
	is_int(tft_rt_sessions_begun(), begun + 1, "owned: counted");
	c.session_path = tpath("other.tft");
	is_int(tft_init(&c), 0, "owned: the program's tft_init joins it");
	ok(access(tpath("other.tft"), F_OK) != 0, "owned: and creates no file of its own");
	tft_step_begin("joined");
	tft_step_end();
	is_int(tft_shutdown(), 0, "owned: the program's tft_shutdown ...");
	ok(tft_rt_running(), "owned: ... leaves it running");
	is_int(tft_rt_shutdown_owned(), 0, "owned: the preload ends it");
	ok(!tft_rt_running(), "owned: ended");
	is_int(tft_rt_session_pid(), 0, "owned: no session pid");
	s = tft_session_open(tpath("owned.tft"), NULL);
	ok(s && tft_session_step_count(s) == 1, "owned: the program's step is in it");
	if (s)
		tft_session_close(s);
	/* an ordinary session: tft_init refuses a second one, as before */
	is_int(start("plain.tft"), 0, "owned: a plain session");
	c.session_path = tpath("plain2.tft");
	is_int(tft_init(&c), TFT_EINVAL, "owned: a plain session is not joined");
	tft_shutdown();
	ok(!tft_rt_running(), "owned: a plain session ends with tft_shutdown");
}

int main(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/tft-test-rt-source-XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	test_innermost();
	test_source();
	test_values();
	test_owned();
	{
		char cmd[600];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd) != 0)
			fprintf(stderr, "# could not remove %s\n", tmpdir);
	}
	return done_testing();
}
