/* SPDX-License-Identifier: MIT */
/*
 * In-process runtime: events of every kind end up in the session as model
 * events (nesting, counters, flows, memory, steps, names), tracing on/off and
 * on demand, drop accounting, misnesting, unclosed zones, live reading,
 * clocks, signals, thread caps, fork, and disabling itself on write errors.
 */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TFT_ENABLE 1
#include "runtime/rt.h"
#include "store/session.h"
#include "store/writer.h"
#include "tap.h"
#include "tftracer/tftracer.h"
#include "tftracer/zone.h"

static char tmpdir[256];

static const char *tpath(const char *name)
{
	static char buf[8][512];
	static int k;
	char *p = buf[k++ & 7];

	snprintf(p, 512, "%s/%s", tmpdir, name);
	return p;
}

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static struct tft_runtime_stats get_stats(void)
{
	struct tft_runtime_stats s;

	memset(&s, 0, sizeof(s));
	s.struct_size = sizeof(s);
	tft_stats(&s);
	return s;
}

static int start(const char *name, size_t ring, int enabled)
{
	struct tft_config c;

	tft_config_init(&c);
	c.exit_timeout_ms = 60000; /* a loaded CI machine */
	c.session_path = tpath(name);
	c.buffer_bytes = ring;
	c.enabled = enabled;
	return tft_init(&c);
}

/* ---- reading a session back ---------------------------------------------------------- */

#define MAXEV 65536
struct rev {
	int64_t ts, dur;
	double value;
	uint32_t depth;
	int kind, flags, split;
	char name[64];
};

struct col {
	struct tft_session *s;
	struct rev ev[MAXEV];
	int n;
};

static int collect_fn(void *ctx, const struct tft_event *ev)
{
	struct col *c = ctx;
	struct rev *r;

	if (c->n >= MAXEV)
		return 0;
	r = &c->ev[c->n++];
	r->ts = ev->ts_ns;
	r->dur = ev->dur_ns;
	r->value = ev->value;
	r->depth = ev->depth;
	r->kind = ev->kind;
	r->flags = ev->flags;
	r->split = 0;
	for (uint16_t i = 0; i < ev->nargs; i++)
		if (strcmp(tft_session_str(c->s, ev->args[i].key, NULL), "split") == 0)
			r->split = 1;
	snprintf(r->name, sizeof(r->name), "%s", tft_session_str(c->s, ev->name, NULL));
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

static void scan(struct tft_session *s, int track, struct col *c)
{
	c->s = s;
	c->n = 0;
	if (track >= 0)
		tft_session_scan(s, (uint32_t)track, INT64_MIN, INT64_MAX, 0, collect_fn, c, NULL);
}

static uint64_t total_events(struct tft_session *s)
{
	struct tft_session_summary sum;

	tft_session_get_summary(s, &sum);
	return sum.slices * 2 + sum.instants + sum.counters;
}

static int flow_fn(void *ctx, const struct tft_flow *f)
{
	struct tft_flow *out = ctx;

	*out = *f;
	return 0;
}

/* ---- tests ------------------------------------------------------------------------------ */

static void test_before_init(void)
{
	struct tft_runtime_stats s = get_stats();
	struct tft_config c;
	char buf[64];

	tft_config_init(&c);
	is_int(c.flush_interval_ms, 100, "config: default flush interval");
	is_int(c.exit_timeout_ms, 1000, "config: default exit timeout");
	is_int(c.buffer_bytes, 1 << 20, "config: default ring bytes");
	ok(c.enabled, "config: enabled by default");
	is_int(s.state, TFT_RUNTIME_OFF, "stats before init: off");
	is_int(tft_runtime_path(buf, sizeof(buf)), TFT_ENOTFOUND, "no session path before init");
	ok(!tft_is_tracing(), "not tracing before init");
	is_int(tft_step_begin("x"), -1, "step before init: -1");
	is_int(tft_thread_name("x"), TFT_EAGAIN, "thread name before init: EAGAIN");
	is_int(tft_flush(10), TFT_EINVAL, "flush before init: EINVAL");
	is_int(tft_shutdown(), 0, "shutdown before init: 0");
	{
		TFT_ZONE("ignored");
		TFT_INSTANT("ignored");
	}
}

struct flow_arg {
	uint64_t id;
};

static void *flow_thread(void *p)
{
	struct flow_arg *a = p;

	tft_thread_name("consumer");
	TFT_ZONE_BEGIN(z, "consume");
	TFT_FLOW_END("batch", a->id);
	TFT_ZONE_END(z);
	return NULL;
}

static void test_basic(void)
{
	struct tft_runtime_stats st;
	struct tft_session *s;
	struct tft_error err;
	struct col *c = calloc(1, sizeof(*c));
	struct flow_arg fa = { 42 };
	struct tft_flow fl;
	pthread_t th;
	char path[512];
	int tr, n;
	static char buf1[100], buf2[50];

	is_int(start("basic.tft", 0, 1), 0, "basic: init");
	is_int(start("basic2.tft", 0, 1), TFT_EINVAL, "basic: second init refused");
	ok(tft_is_tracing(), "basic: tracing");
	is_int(tft_runtime_path(path, sizeof(path)), (int)strlen(tpath("basic.tft")),
	       "basic: path length");
	is_str(path, tpath("basic.tft"), "basic: path");
	tft_process_name("trainer");
	tft_thread_name("main loop");
	is_int(tft_step_begin("train"), 0, "basic: first step is 0");
	{
		TFT_ZONE_CAT("outer", "python");
		{
			TFT_ZONE("inner");
			TFT_INSTANT("mark");
		}
		TFT_COUNTER("loss", 1.5);
		TFT_COUNTER("loss", 0.5);
		TFT_MEM_ALLOC(buf1, 100);
		TFT_MEM_ALLOC(buf2, 50);
		TFT_MEM_FREE(buf1);
		TFT_FLOW_BEGIN("batch", fa.id);
	}
	pthread_create(&th, NULL, flow_thread, &fa);
	pthread_join(th, NULL);
	is_int(tft_step_end(), 0, "basic: step end returns its index");
	is_int(tft_step_end(), -1, "basic: no open step");
	is_int(tft_step_begin(NULL), 1, "basic: second step");
	is_int(tft_step_begin("again"), 2, "basic: begin ends the open step");
	tft_step_end();
	is_int(tft_flush(2000), 0, "basic: flush");
	st = get_stats();
	ok(st.flushes >= 1 && st.last_flush_ns > 0 && st.bytes_written > 0,
	   "basic: stats after flush (flushes %llu, bytes %llu)", (unsigned long long)st.flushes,
	   (unsigned long long)st.bytes_written);
	is_int(tft_shutdown(), 0, "basic: shutdown");
	is_int(tft_shutdown(), 0, "basic: second shutdown is a no-op");
	st = get_stats();
	is_int(st.state, TFT_RUNTIME_OFF, "basic: off after shutdown");
	/* 2 zones (4) + instant + 2 counters + 3 mem + flow begin/end + consumer zone (2)
	 * + 4 step begins/ends... + names (process, 2 threads) */
	is_int(st.dropped, 0, "basic: nothing dropped");
	is_int(st.threads, 2, "basic: two threads recorded");

	tft_error_clear(&err);
	s = tft_session_open(tpath("basic.tft"), &err);
	ok(s != NULL, "basic: session opens (%s)", err.msg);
	if (!s) {
		free(c);
		return;
	}
	is_str(tft_session_meta(s, "format"), "tftracer-runtime", "basic: format meta");
	is_str(tft_session_str(s, tft_session_process(s, 0)->name, NULL), "trainer",
	       "basic: process name");
	is_int(tft_session_process(s, 0)->pid, getpid(), "basic: pid");
	tr = find_track(s, TFT_TRACK_THREAD, "main loop");
	ok(tr >= 0, "basic: main thread track renamed");
	scan(s, tr, c);
	is_int(c->n, 3, "basic: main track: outer, inner, mark");
	if (c->n == 3) {
		is_str(c->ev[0].name, "outer", "basic: outer first");
		is_int(c->ev[0].depth, 0, "basic: outer depth 0");
		is_str(c->ev[1].name, "inner", "basic: inner second");
		is_int(c->ev[1].depth, 1, "basic: inner depth 1");
		ok(c->ev[1].ts >= c->ev[0].ts &&
			   c->ev[1].ts + c->ev[1].dur <= c->ev[0].ts + c->ev[0].dur,
		   "basic: inner within outer");
		is_str(c->ev[2].name, "mark", "basic: instant");
		is_int(c->ev[2].kind, TFT_EV_INSTANT, "basic: instant kind");
		is_int(c->ev[2].depth, 2, "basic: instant inside inner");
	}
	tr = find_track(s, TFT_TRACK_COUNTER, "loss");
	scan(s, tr, c);
	ok(tr >= 0 && c->n == 2 && c->ev[0].value == 1.5 && c->ev[1].value == 0.5,
	   "basic: loss counter samples");
	tr = find_track(s, TFT_TRACK_COUNTER, "memory in use");
	scan(s, tr, c);
	ok(tr >= 0 && c->n == 3 && c->ev[0].value == 100 && c->ev[1].value == 150 &&
		   c->ev[2].value == 50,
	   "basic: memory in use 100, 150, 50 (%d samples)", c->n);
	tr = find_track(s, TFT_TRACK_THREAD, "consumer");
	ok(tr >= 0, "basic: consumer thread track");
	memset(&fl, 0, sizeof(fl));
	tft_session_flows(s, flow_fn, &fl, NULL);
	ok(fl.flow_id == 42 && fl.src_track != TFT_NONE && fl.dst_track == (uint32_t)tr &&
		   fl.dst_ts_ns >= fl.src_ts_ns,
	   "basic: flow from main to consumer");
	is_str(tft_session_str(s, fl.name, NULL), "batch", "basic: flow name");
	n = (int)tft_session_step_count(s);
	is_int(n, 3, "basic: three steps");
	if (n == 3) {
		is_str(tft_session_str(s, tft_session_step(s, 0)->name, NULL), "train",
		       "basic: step name");
		is_str(tft_session_str(s, tft_session_step(s, 1)->name, NULL), "step",
		       "basic: default step name");
		ok(tft_session_step(s, 0)->dur_ns > 0 && tft_session_step(s, 0)->traced,
		   "basic: step 0 timed and traced");
	}
	tft_session_close(s);
	free(c);
}

static void test_tracing_off_and_demand(void)
{
	struct tft_runtime_stats st;
	struct tft_session *s;
	struct col *c = calloc(1, sizeof(*c));
	int tr;

	is_int(start("demand.tft", 0, 0), 0, "demand: init with tracing off");
	ok(!tft_is_tracing(), "demand: not tracing");
	tft_thread_name("main");
	for (int i = 0; i < 6; i++) {
		if (i == 2)
			tft_trace_next_steps(2);
		tft_step_begin("s");
		ok(tft_is_tracing() == (i == 2 || i == 3), "demand: step %d tracing %d", i,
		   tft_is_tracing());
		TFT_ZONE("op");
		tft_step_end();
	}
	ok(!tft_is_tracing(), "demand: off after the window");
	tft_set_tracing(true);
	ok(tft_is_tracing(), "demand: set_tracing(true)");
	{
		TFT_ZONE("on");
		tft_set_tracing(false); /* a zone begun while on still ends */
	}
	ok(!tft_is_tracing(), "demand: set_tracing(false)");
	tft_trace_next_steps(3);
	tft_trace_next_steps(0); /* cancelled */
	tft_step_begin("s");
	ok(!tft_is_tracing(), "demand: cancelled request");
	tft_step_end();
	is_int(tft_shutdown(), 0, "demand: shutdown");
	st = get_stats();
	is_int(st.dropped, 0, "demand: nothing dropped");
	s = tft_session_open(tpath("demand.tft"), NULL);
	ok(s != NULL, "demand: session opens");
	if (!s) {
		free(c);
		return;
	}
	is_int(tft_session_step_count(s), 7, "demand: every step recorded");
	for (uint32_t i = 0; i < tft_session_step_count(s) && i < 7; i++)
		is_int(tft_session_step(s, i)->traced, i == 2 || i == 3, "demand: traced flag");
	tr = find_track(s, TFT_TRACK_THREAD, "main");
	scan(s, tr, c);
	is_int(c->n, 3, "demand: 2 ops in the window + the zone begun while on");
	tft_session_close(s);
	free(c);
}

static void test_drops(void)
{
	struct tft_runtime_stats st;
	struct tft_session *s;
	uint64_t emitted = 0;

	is_int(start("drops.tft", 4096, 1), 0, "drops: init with a 4 KiB ring");
	for (int i = 0; i < 200000; i++) {
		TFT_INSTANT("burst");
		emitted++;
		if (i % 1000 == 0) {
			TFT_ZONE_BEGIN(z, "z");
			TFT_ZONE_END(z);
			emitted += 2;
		}
	}
	is_int(tft_shutdown(), 0, "drops: shutdown");
	st = get_stats();
	ok(st.dropped > 0, "drops: some dropped (%llu)", (unsigned long long)st.dropped);
	is_int(st.events + st.dropped, emitted, "drops: events + dropped == emitted");
	s = tft_session_open(tpath("drops.tft"), NULL);
	ok(s != NULL, "drops: session opens");
	if (s) {
		struct tft_session_summary sum;
		tft_session_get_summary(s, &sum);
		is_int(total_events(s), st.events, "drops: session holds exactly the events");
		is_int(sum.dropped, st.dropped, "drops: dropped count in the session");
		tft_session_close(s);
	}
}

static void test_misnested_and_unclosed(void)
{
	struct tft_session *s;
	struct tft_session_summary sum;
	struct col *c = calloc(1, sizeof(*c));
	struct tft_runtime_stats st;
	int tr;

	is_int(start("nest.tft", 0, 1), 0, "nest: init");
	tft_thread_name("main");
	{
		TFT_ZONE_BEGIN(a, "A");
		TFT_ZONE_BEGIN(b, "B");
		TFT_ZONE_BEGIN(cz, "C");
		TFT_ZONE_END(a);  /* ends C and B too */
		TFT_ZONE_END(cz); /* already ended: ignored */
		TFT_ZONE_END(b);
	}
	TFT_ZONE_BEGIN(open1, "left open");
	(void)open1;
	is_int(tft_shutdown(), 0, "nest: shutdown");
	st = get_stats();
	s = tft_session_open(tpath("nest.tft"), NULL);
	ok(s != NULL, "nest: session opens");
	if (s) {
		tr = find_track(s, TFT_TRACK_THREAD, "main");
		scan(s, tr, c);
		is_int(c->n, 4, "nest: A, B, C and the open zone");
		if (c->n == 4) {
			ok(!strcmp(c->ev[0].name, "A") && !strcmp(c->ev[1].name, "B") &&
				   !strcmp(c->ev[2].name, "C"),
			   "nest: order A B C");
			ok(c->ev[1].depth == 1 && c->ev[2].depth == 2, "nest: depths");
			ok(c->ev[3].flags & TFT_EVF_UNCLOSED, "nest: open zone flagged unclosed");
		}
		tft_session_get_summary(s, &sum);
		is_int(sum.unclosed_slices, 1, "nest: one unclosed slice counted");
		tft_session_close(s);
	}
	/* The zone still open on this thread ends in a later session: ignored there. */
	is_int(start("nest2.tft", 0, 1), 0, "nest: second session in the same process");
	TFT_ZONE_END(open1);
	{
		TFT_ZONE("after");
	}
	is_int(tft_shutdown(), 0, "nest: second shutdown");
	s = tft_session_open(tpath("nest2.tft"), NULL);
	ok(s != NULL, "nest2: session opens");
	if (s) {
		struct tft_session_summary sum2;
		tft_session_get_summary(s, &sum2);
		is_int(sum2.slices, 1, "nest2: only the new zone");
		tft_session_close(s);
	}
	(void)st;
	free(c);
}

/* The live-allocation and open-flow tables: growth, deletion in any order. */
static void test_tables(void)
{
	struct tft_session *s;
	struct col *c = calloc(1, sizeof(*c));
	struct tft_session_summary sum;
	enum { N = 20000 };
	static uint32_t order[N];
	uint64_t total = 0, seed = 12345;
	int tr;

	is_int(start("tables.tft", 0, 1), 0, "tables: init");
	for (uint32_t i = 0; i < N; i++) {
		order[i] = i;
		TFT_MEM_ALLOC((void *)(uintptr_t)(0x10000 + (uint64_t)i * 64), i + 1);
		TFT_FLOW_BEGIN("f", 1000000 + i);
		total += i + 1;
		if (i % 5000 == 4999)
			tft_flush(10000); /* keep the ring from filling */
	}
	for (uint32_t i = N - 1; i > 0; i--) { /* shuffle */
		uint32_t j;
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		j = (uint32_t)((seed >> 33) % (i + 1));
		uint32_t t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	for (uint32_t k = 0; k < N; k++) {
		uint32_t i = order[k];
		TFT_MEM_FREE((void *)(uintptr_t)(0x10000 + (uint64_t)i * 64));
		TFT_FLOW_END("f", 1000000 + i);
		if (k % 5000 == 4999)
			tft_flush(10000);
	}
	TFT_MEM_FREE((void *)(uintptr_t)0x42); /* never allocated: no sample */
	is_int(tft_shutdown(), 0, "tables: shutdown");
	is_int(get_stats().dropped, 0, "tables: nothing dropped");
	s = tft_session_open(tpath("tables.tft"), NULL);
	ok(s != NULL, "tables: session opens");
	if (!s) {
		free(c);
		return;
	}
	tft_session_get_summary(s, &sum);
	is_int(sum.flows, N, "tables: every flow written");
	is_int(sum.unmatched_flows, 0, "tables: every flow matched");
	tr = find_track(s, TFT_TRACK_COUNTER, "memory in use");
	scan(s, tr, c);
	is_int(c->n, 2 * N, "tables: one sample per alloc and per known free");
	if (c->n == 2 * N) {
		ok(c->ev[N - 1].value == (double)total, "tables: peak is the sum (%.0f)",
		   c->ev[N - 1].value);
		ok(c->ev[2 * N - 1].value == 0, "tables: back to zero (%.0f)", c->ev[2 * N - 1].value);
	}
	tft_session_close(s);
	free(c);
}

/* Runs on a new thread: a thread's ring size is fixed when it first records. */
static void *split_body(void *arg)
{
	struct tft_session *s;
	struct tft_error err;
	struct tft_session_summary sum;
	uint64_t before;

	(void)arg;
	tft_thread_name("main");
	TFT_ZONE_BEGIN(outer, "epoch");
	for (int i = 0; i < 10; i++) {
		TFT_ZONE("batch");
	}
	usleep(60000);
	is_int(tft_flush(2000), 0, "split: flush");
	tft_error_clear(&err);
	s = tft_session_open(tpath("split.tft"), &err);
	ok(s != NULL, "split: live session opens while recording (%s)", err.msg);
	if (s) {
		tft_session_get_summary(s, &sum);
		ok(sum.slices >= 10, "split: children visible before the epoch ends (%llu)",
		   (unsigned long long)sum.slices);
		before = sum.slices;
	} else {
		before = 0;
	}
	for (int i = 0; i < 20000; i++) { /* past the pending bound: split without waiting */
		TFT_ZONE("batch");
	}
	TFT_ZONE_END(outer);
	is_int(tft_flush(2000), 0, "split: flush 2");
	if (s) {
		is_int(tft_session_refresh(s, &err), 0, "split: refresh");
		tft_session_get_summary(s, &sum);
		ok(sum.slices > before, "split: refresh sees more (%llu > %llu)",
		   (unsigned long long)sum.slices, (unsigned long long)before);
		tft_session_close(s);
	}
	return NULL;
}

static void test_split_and_live(void)
{
	struct tft_config cfg;
	struct tft_session *s;
	struct col *c = calloc(1, sizeof(*c));
	struct tft_session_summary sum;
	struct tft_runtime_stats st;
	int tr, splits = 0;
	pthread_t th;

	tft_config_init(&cfg);
	cfg.exit_timeout_ms = 60000; /* a loaded CI machine */
	cfg.session_path = tpath("split.tft");
	cfg.max_hold_ms = 20;
	cfg.flush_interval_ms = 10;
	cfg.buffer_bytes = 4 << 20; /* the burst must not drop */
	is_int(tft_init(&cfg), 0, "split: init (hold 20 ms)");
	pthread_create(&th, NULL, split_body, NULL);
	pthread_join(th, NULL);
	is_int(tft_shutdown(), 0, "split: shutdown");
	st = get_stats();
	is_int(st.dropped, 0, "split: nothing dropped");
	if (st.disabled_reason[0])
		printf("# disabled: %s\n", st.disabled_reason);
	s = tft_session_open(tpath("split.tft"), NULL);
	ok(s != NULL, "split: session opens");
	if (!s) {
		free(c);
		return;
	}
	tr = find_track(s, TFT_TRACK_THREAD, "main");
	tft_session_get_summary(s, &sum);
	scan(s, tr, c);
	for (int i = 0; i < c->n; i++) {
		if (!strcmp(c->ev[i].name, "epoch")) {
			splits++;
			ok(c->ev[i].split && c->ev[i].depth == 0, "split: epoch piece %d flagged", i);
		}
	}
	ok(splits >= 2, "split: epoch cut in %d pieces", splits);
	is_int(sum.slices, 20010 + (uint64_t)splits, "split: every batch plus the pieces");
	tft_session_close(s);
	free(c);
}

static void test_clock(int mode, const char *name)
{
	struct tft_config cfg;
	struct tft_session *s;
	struct col *c = calloc(1, sizeof(*c));
	int64_t t0, t1;
	int tr;

	tft_config_init(&cfg);
	cfg.exit_timeout_ms = 60000; /* a loaded CI machine */
	cfg.session_path = tpath(name);
	cfg.clock = mode;
	is_int(tft_init(&cfg), 0, "clock: init");
	tft_thread_name("main");
	usleep(300000); /* past the first refinement */
	t0 = mono_ns();
	TFT_INSTANT("now");
	t1 = mono_ns();
	tft_shutdown();
	s = tft_session_open(tpath(name), NULL);
	tr = s ? find_track(s, TFT_TRACK_THREAD, "main") : -1;
	if (s)
		scan(s, tr, c);
	ok(c->n == 1 && c->ev[0].ts >= t0 - 200000 && c->ev[0].ts <= t1 + 200000,
	   "clock %s (%s): instant at CLOCK_MONOTONIC %lld within [%lld, %lld] +- 200 us",
	   mode == TFT_CLOCK_MONOTONIC ? "monotonic" : "auto",
	   s ? tft_session_meta(s, "clock") : "?", c->n ? (long long)c->ev[0].ts : 0LL,
	   (long long)t0, (long long)t1);
	if (s)
		tft_session_close(s);
	free(c);
}

static volatile sig_atomic_t sig_emitted;

static void on_alarm(int sig)
{
	static const struct tft_site site = { "signal", NULL, __FILE__, __LINE__, 0 };
	int e = errno;

	(void)sig;
	tft_instant(&site);
	sig_emitted = sig_emitted + 1;
	errno = e;
}

/*
 * A handler interrupting the recording thread records too. `ring` 0 is the
 * default ring; a small one with a fast timer keeps the ring near full, so
 * handlers often land between a recording call's room check and its write
 * (a check made before the call is marked busy would be stale by the
 * handler's record: the write would then overrun the drain).
 */
static void test_signals_and_errno(const char *name, size_t ring, long timer_us, int64_t run_ns)
{
	struct itimerval it = { { 0, timer_us }, { 0, timer_us } };
	struct tft_runtime_stats st;
	struct sigaction sa;
	uint64_t emitted = 0;
	int64_t end;
	int errno_ok = 1;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	ok(start(name, ring, 1) == 0, "signals %s: init", name);
	sig_emitted = 0;
	setitimer(ITIMER_REAL, &it, NULL);
	end = mono_ns() + run_ns;
	while (mono_ns() < end) {
		errno = 1234;
		TFT_ZONE_BEGIN(z, "work");
		TFT_COUNTER("c", 1);
		TFT_ZONE_END(z);
		if (errno != 1234)
			errno_ok = 0;
		emitted += 3;
	}
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	signal(SIGALRM, SIG_DFL);
	ok(errno_ok, "signals %s: errno preserved by recording calls", name);
	ok(tft_shutdown() == 0, "signals %s: shutdown", name);
	st = get_stats();
	ok(sig_emitted > 10, "signals %s: %d events from the handler", name, (int)sig_emitted);
	if (ring) /* the ring was full at times: the handler's calls met the drop path too */
		ok(st.dropped > 0, "signals %s: the small ring dropped (%llu)", name,
		   (unsigned long long)st.dropped);
	if (!ok(st.events + st.dropped == emitted + (uint64_t)sig_emitted,
		"signals %s: every event recorded or counted as dropped", name))
		printf("#   recorded %llu + dropped %llu, emitted %llu + %llu by the handler\n",
		       (unsigned long long)st.events, (unsigned long long)st.dropped,
		       (unsigned long long)emitted, (unsigned long long)sig_emitted);
}

static void *short_thread(void *p)
{
	uint64_t *n = p;

	for (int i = 0; i < 100; i++) {
		TFT_INSTANT("t");
		(*n)++;
	}
	return NULL;
}

static void test_thread_cap(void)
{
	struct tft_config cfg;
	struct tft_runtime_stats st;
	pthread_t th[6];
	uint64_t n[6] = { 0 }, total = 0;

	tft_config_init(&cfg);
	cfg.exit_timeout_ms = 60000; /* a loaded CI machine */
	cfg.session_path = tpath("cap.tft");
	cfg.max_threads = 2;
	is_int(tft_init(&cfg), 0, "cap: init with 2 threads max");
	/* sequential: exited threads give their slot back once drained */
	for (int i = 0; i < 3; i++) {
		pthread_create(&th[i], NULL, short_thread, &n[i]);
	}
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < 3; i++)
		total += n[i];
	is_int(tft_shutdown(), 0, "cap: shutdown");
	st = get_stats();
	ok(st.threads <= 2, "cap: at most 2 threads recorded (%llu)",
	   (unsigned long long)st.threads);
	is_int(st.events + st.dropped, total, "cap: refused threads count as dropped");
	(void)th;
}

/*
 * A thread refused a ring (the cap) records again once it may: in a later
 * session, or in the same one when a slot comes free.
 */
static sem_t refused_go, refused_done;

static void *refused_worker(void *p)
{
	uint64_t *n = p;

	for (int round = 0; round < 3; round++) {
		sem_wait(&refused_go);
		for (int i = 0; i < 100; i++) {
			TFT_INSTANT("r");
			n[round]++;
		}
		sem_post(&refused_done);
	}
	return NULL;
}

static void test_refused_retry(void)
{
	struct tft_config cfg;
	struct tft_runtime_stats st;
	uint64_t n[3] = { 0, 0, 0 };
	pthread_t w;

	sem_init(&refused_go, 0, 0);
	sem_init(&refused_done, 0, 0);
	pthread_create(&w, NULL, refused_worker, n);
	tft_config_init(&cfg);
	cfg.exit_timeout_ms = 60000;
	cfg.session_path = tpath("refused1.tft");
	cfg.max_threads = 1; /* this thread's ring, kept from the tests before, takes the one slot */
	is_int(tft_init(&cfg), 0, "refused: init with 1 thread max");
	sem_post(&refused_go);
	sem_wait(&refused_done);
	is_int(tft_shutdown(), 0, "refused: shutdown");
	st = get_stats();
	is_int(st.events, 0, "refused: the worker was refused a ring");
	is_int(st.dropped, n[0], "refused: its events counted as dropped");

	cfg.session_path = tpath("refused2.tft");
	cfg.max_threads = 64;
	is_int(tft_init(&cfg), 0, "refused: a second session, 64 threads max");
	sem_post(&refused_go);
	sem_wait(&refused_done);
	is_int(tft_shutdown(), 0, "refused: second shutdown");
	st = get_stats();
	is_int(st.events + st.dropped, n[1], "refused: the next session's events accounted for");
	ok(st.events > 0 && st.threads == 1, "refused: the worker records in the next session (%llu events)",
	   (unsigned long long)st.events);
	sem_post(&refused_go); /* the last round after the session: nothing to record into */
	sem_wait(&refused_done);
	pthread_join(w, NULL);
	sem_destroy(&refused_go);
	sem_destroy(&refused_done);
}

static void test_errors(void)
{
	struct tft_runtime_stats st;
	struct tft_config cfg;
	int rc;

	tft_config_init(&cfg);
	cfg.exit_timeout_ms = 60000; /* a loaded CI machine */
	cfg.session_path = "/nonexistent-dir-tft/x.tft";
	rc = tft_init(&cfg);
	ok(rc == TFT_EIO || rc == TFT_ENOTFOUND, "errors: unwritable path refused (%d)", rc);
	st = get_stats();
	is_int(st.state, TFT_RUNTIME_DISABLED, "errors: state disabled");
	ok(st.disabled_status != 0 && strstr(st.disabled_reason, "nonexistent") != NULL,
	   "errors: reason recorded (%s)", st.disabled_reason);
	ok(!tft_is_tracing(), "errors: not tracing");
	{
		TFT_ZONE("nothing");
	}
	cfg.session_path = tpath("basic.tft");
	is_int(tft_init(&cfg), TFT_EINVAL, "errors: existing session file refused");
	cfg.struct_size = 4;
	is_int(tft_init(&cfg), TFT_EINVAL, "errors: bad struct_size");
}

/* Disk full, in a child (RLIMIT_FSIZE): the runtime disables itself, loses count, no crash. */
static void test_disk_full(void)
{
	pid_t pid = fork();
	int status = 0;

	if (pid == 0) {
		struct rlimit rl = { 256 << 10, 256 << 10 };
		struct tft_runtime_stats st;
		struct tft_config cfg;
		uint64_t emitted = 0;
		int fails = 0;

		signal(SIGXFSZ, SIG_IGN);
		alarm(120); /* never hang the suite */
		setrlimit(RLIMIT_FSIZE, &rl);
		tft_config_init(&cfg);
		cfg.exit_timeout_ms = 60000; /* a loaded CI machine */
		cfg.session_path = tpath("full.tft");
		cfg.flush_interval_ms = 5;
		if (tft_init(&cfg))
			_exit(10);
		for (int i = 0; i < 400 && get_stats().state == TFT_RUNTIME_RUNNING; i++) {
			for (int j = 0; j < 5000; j++) {
				if (!tft_is_tracing())
					break;
				TFT_ZONE_BEGIN(z, "fill");
				TFT_COUNTER("v", j);
				TFT_ZONE_END(z);
				emitted += 3;
			}
			tft_flush(1000);
		}
		st = get_stats();
		if (st.state != TFT_RUNTIME_DISABLED)
			fails |= 1;
		if (st.disabled_status == 0 || !st.disabled_reason[0])
			fails |= 2;
		if (tft_is_tracing())
			fails |= 4;
		tft_shutdown();
		st = get_stats();
		/* The runtime turns itself off between our check and the calls: one
		 * iteration of slack. */
		if (st.events + st.dropped > emitted || st.events + st.dropped + 3 < emitted)
			fails |= 8;
		if (st.dropped == 0)
			fails |= 16;
		_exit(fails);
	}
	waitpid(pid, &status, 0);
	ok(WIFEXITED(status), "disk full: child exited normally");
	is_int(WEXITSTATUS(status), 0, "disk full: disabled, reason kept, counts exact");
}

static void test_fork(void)
{
	struct tft_runtime_stats st;
	struct tft_session *s;
	pid_t pid;
	int status = 0;

	is_int(start("parent.tft", 0, 1), 0, "fork: init in the parent");
	TFT_ZONE_BEGIN(z, "before fork");
	/* The drain thread is up and idle: libasan (GCC 12) has no fork handler,
	 * a thread starting up inside its allocator would deadlock the child. */
	tft_flush(10000);
	pid = fork();
	if (pid == 0) {
		int fails = 0;
		struct tft_config cfg;
		alarm(120); /* never hang the suite */
		if (tft_is_tracing())
			fails |= 1;
		TFT_ZONE_END(z); /* the parent's zone: ignored */
		{
			TFT_ZONE("child ignored");
		}
		tft_config_init(&cfg);
		cfg.exit_timeout_ms = 60000; /* a loaded CI machine */
		cfg.session_path = tpath("child-%p.tft");
		if (tft_init(&cfg))
			fails |= 2;
		{
			TFT_ZONE("child zone");
		}
		if (tft_shutdown())
			fails |= 4;
		st = get_stats();
		if (st.events != 2 || st.dropped != 0)
			fails |= 8;
		_exit(fails);
	}
	waitpid(pid, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "fork: child re-inits its own session (%d)",
	   WEXITSTATUS(status));
	TFT_ZONE_END(z);
	{
		TFT_ZONE("after fork");
	}
	is_int(tft_shutdown(), 0, "fork: parent shutdown");
	s = tft_session_open(tpath("parent.tft"), NULL);
	if (s) {
		struct tft_session_summary sum;
		tft_session_get_summary(s, &sum);
		is_int(sum.slices, 2, "fork: parent session has its two zones");
		tft_session_close(s);
	} else {
		ok(0, "fork: parent session opens");
	}
	{
		char p[64];
		snprintf(p, sizeof(p), "child-%d.tft", (int)pid);
		s = tft_session_open(tpath(p), NULL);
		ok(s != NULL, "fork: child session exists");
		if (s) {
			struct tft_session_summary sum;
			tft_session_get_summary(s, &sum);
			is_int(sum.slices, 1, "fork: child session has its zone");
			tft_session_close(s);
		}
	}
}

/*
 * A profiler import (server/live_import.c) made the thread's track before the
 * thread's first zone: the drain records the thread there, on the one track
 * of that OS thread in the job's process, after the imported events.
 */
struct adopt_ctx {
	int64_t tid, ts;
	uint32_t track;
};

static int adopt_import(void *arg, struct tft_writer *w)
{
	struct adopt_ctx *a = arg;
	struct tft_track t = { .process = 0, .kind = TFT_TRACK_THREAD, .tid = a->tid };
	struct tft_event ev = { .kind = TFT_EV_SLICE, .ts_ns = a->ts, .dur_ns = 1000, .count = 1 };

	t.name = tft_writer_intern_cstr(w, "imported thread");
	a->track = tft_writer_add_track(w, &t);
	if (a->track == TFT_NONE)
		return TFT_ENOMEM;
	ev.track = a->track;
	ev.name = tft_writer_intern_cstr(w, "aten::mm");
	return tft_writer_append(w, &ev) ? TFT_EIO : tft_writer_commit(w, NULL);
}

static void test_adopt_import_track(void)
{
	struct adopt_ctx a = { .tid = (int64_t)gettid() };
	struct tft_session *s;
	struct col *c = calloc(1, sizeof(*c));
	int threads = 0, tr = -1;

	is_int(start("adopt.tft", 0, 1), 0, "adopt: init");
	a.ts = mono_ns();
	is_int(tft_rt_with_writer(adopt_import, &a), 0, "adopt: an import adds this thread's track");
	{
		TFT_ZONE("after import");
	}
	is_int(tft_shutdown(), 0, "adopt: shutdown");
	s = tft_session_open(tpath("adopt.tft"), NULL);
	ok(s != NULL, "adopt: session opens");
	if (!s) {
		free(c);
		return;
	}
	for (uint32_t i = 0; i < tft_session_track_count(s); i++) {
		const struct tft_track *t = tft_session_track(s, i);
		if (t->kind == TFT_TRACK_THREAD && t->tid == a.tid) {
			threads++;
			tr = (int)i;
		}
	}
	is_int(threads, 1, "adopt: one thread track for the OS thread");
	is_int(tr, (int)a.track, "adopt: the import's");
	scan(s, tr, c);
	ok(c->n == 2 && !strcmp(c->ev[0].name, "aten::mm") && !strcmp(c->ev[1].name, "after import"),
	   "adopt: the imported slice, then the zone (%d events)", c->n);
	tft_session_close(s);
	free(c);
}

int main(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/tft-test-runtime-XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	test_before_init();
	test_basic();
	test_tracing_off_and_demand();
	test_drops();
	test_misnested_and_unclosed();
	test_tables();
	test_split_and_live();
	test_adopt_import_track();
	test_clock(TFT_CLOCK_AUTO, "clock-auto.tft");
	test_clock(TFT_CLOCK_MONOTONIC, "clock-mono.tft");
	test_signals_and_errno("signals.tft", 0, 200, 150000000);
	test_signals_and_errno("signals-small.tft", 4096, 20, 300000000);
	test_thread_cap();
	test_refused_retry();
	test_errors();
	test_disk_full();
	test_fork();
	{
		char cmd[600];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd) != 0)
			fprintf(stderr, "# could not remove %s\n", tmpdir);
	}
	return done_testing();
}
