/* SPDX-License-Identifier: MIT */
/*
 * Holding a thread for an import (runtime/rt.h, tft_rt_import_hold): after
 * a traced step whose trace will be imported, the drain reads the ending
 * thread's ring no further than the step's end until the import releases it
 * (or import_hold_ms pass, counted), so that the import finds the thread's
 * track ready: its slices go on it inside the step, the thread's later zones
 * after them. Other threads drain meanwhile; the program never waits; a ring
 * that fills while held drops, counted; cross-thread events after the hold
 * wait too (no counter sample out of order); a thread that exits while held
 * keeps its ring until released; open zones show in the thread's floor.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

static struct tft_runtime_stats get_stats(void)
{
	struct tft_runtime_stats s;

	memset(&s, 0, sizeof(s));
	s.struct_size = sizeof(s);
	tft_stats(&s);
	return s;
}

static int start(const char *name, size_t ring, const char *hold_ms)
{
	struct tft_config c;

	if (hold_ms)
		setenv("TFT_IMPORT_HOLD_MS", hold_ms, 1);
	else
		unsetenv("TFT_IMPORT_HOLD_MS");
	tft_config_init(&c);
	c.exit_timeout_ms = 60000; /* a loaded CI machine */
	c.session_path = tpath(name);
	c.buffer_bytes = ring;
	return tft_init(&c);
}

/* ---- reading the session back ---------------------------------------------------------- */

#define MAXEV 4096
struct rev {
	int64_t ts, dur;
	double value;
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
	snprintf(r->name, sizeof(r->name), "%s", tft_session_str(c->s, ev->name, NULL));
	return 0;
}

/* What the file holds now: thread tracks of OS thread tid, the events of the
 * first one (and of the counter track "c"), steps, a meta count. */
struct view {
	int threads, steps;
	struct col thr, ctr;
	int64_t timeouts, clamped;
};

static int64_t meta_int(struct tft_session *s, const char *key)
{
	const char *v = tft_session_meta(s, key);

	return v ? strtoll(v, NULL, 10) : 0;
}

static int look(const char *path, int64_t tid, struct view *v)
{
	struct tft_session *s = tft_session_open(path, NULL);
	int first = -1, ctr = -1;

	memset(v, 0, sizeof(*v));
	if (!s)
		return -1;
	for (uint32_t i = 0; i < tft_session_track_count(s); i++) {
		const struct tft_track *t = tft_session_track(s, i);
		if (t->kind == TFT_TRACK_THREAD && t->tid == tid && v->threads++ == 0)
			first = (int)i;
		if (t->kind == TFT_TRACK_COUNTER && !strcmp(tft_session_str(s, t->name, NULL), "c"))
			ctr = (int)i;
	}
	v->thr.s = v->ctr.s = s;
	if (first >= 0)
		tft_session_scan(s, (uint32_t)first, INT64_MIN, INT64_MAX, 0, collect_fn, &v->thr, NULL);
	if (ctr >= 0)
		tft_session_scan(s, (uint32_t)ctr, INT64_MIN, INT64_MAX, 0, collect_fn, &v->ctr, NULL);
	v->steps = (int)tft_session_step_count(s);
	v->timeouts = meta_int(s, "import_hold_timeouts");
	v->clamped = meta_int(s, "clamped");
	tft_session_close(s);
	return 0;
}

static int has(const struct col *c, const char *name)
{
	int n = 0;

	for (int i = 0; i < c->n; i++)
		n += !strcmp(c->ev[i].name, name);
	return n;
}

/* ---- an import, as server/live_import.c makes it -------------------------------------------- */

struct imp {
	int64_t tid, ts, dur;
	int64_t floor;
	int rc;
};

static int import_fn(void *arg, struct tft_writer *w)
{
	struct imp *a = arg;
	struct tft_event ev = { .kind = TFT_EV_SLICE, .ts_ns = a->ts, .dur_ns = a->dur, .count = 1 };
	uint32_t track = TFT_NONE;

	a->floor = tft_rt_thread_floor(a->tid);
	for (uint32_t i = 0; i < tft_writer_track_count(w); i++) {
		const struct tft_track *t = tft_writer_track(w, i);
		if (t && t->kind == TFT_TRACK_THREAD && t->tid == a->tid) {
			track = i;
			break;
		}
	}
	if (track == TFT_NONE || tft_writer_track_end(w, track) > a->ts)
		return TFT_EINVAL; /* not ready: the import would go beside */
	ev.track = track;
	ev.name = tft_writer_intern_cstr(w, "aten::mm");
	if (tft_writer_append(w, &ev))
		return TFT_EIO;
	tft_rt_track_appended(track, a->ts);
	return tft_writer_commit(w, NULL);
}

/* ---- tests ------------------------------------------------------------------------------ */

static struct view v; /* (large) */

static void test_hold_release(void)
{
	int64_t tid = (int64_t)gettid(), step, t0, t1, t2, emitted;
	struct imp im = { .tid = (int64_t)gettid() };
	struct tft_runtime_stats st;

	is_int(start("hold.tft", 0, NULL), 0, "hold: init (default hold)");
	is_int(tft_rt_import_hold(0), TFT_EINVAL, "hold: no open step, no hold");
	step = tft_step_begin("train");
	is_int(tft_rt_import_hold(step + 1), TFT_EINVAL, "hold: not the open step, no hold");
	is_int(tft_rt_import_hold(step), 0, "hold: the open step holds");
	{
		TFT_ZONE("inside");
	}
	t0 = mono_ns(); /* the profiler's ops: after the zone, inside the step */
	sleep_ms(1);
	t1 = mono_ns();
	tft_step_end();
	t2 = mono_ns();
	for (int i = 0; i < 3; i++) { /* the program goes on at once */
		TFT_ZONE("after");
		tft_step_begin("train");
		tft_step_end();
	}
	emitted = get_stats().events;
	is_int(tft_flush(60000), 0, "hold: a flush returns while the thread is held");
	ok(look(tpath("hold.tft"), tid, &v) == 0, "hold: the live file opens");
	ok(has(&v.thr, "inside") == 1 && !has(&v.thr, "after"),
	   "hold: the zone of the step is in, the ones after it wait (%d events)", v.thr.n);
	is_int(v.steps, 1, "hold: the held step is in, the steps after it wait");
	st = get_stats();
	ok(st.events >= (uint64_t)emitted, "hold: stats go on (%llu events)",
	   (unsigned long long)st.events);

	im.ts = t0;
	im.dur = t1 - t0;
	is_int(tft_rt_with_writer(import_fn, &im), 0, "hold: the import finds the thread's track ready");
	is_int(im.floor, INT64_MAX, "hold: nothing the drain still holds precedes it");
	tft_rt_import_release(step);
	is_int(tft_flush(60000), 0, "hold: flush after the release");
	look(tpath("hold.tft"), tid, &v);
	is_int(v.threads, 1, "hold: one track for the thread");
	ok(v.thr.n == 5 && !strcmp(v.thr.ev[0].name, "inside") && !strcmp(v.thr.ev[1].name, "aten::mm") &&
		   !strcmp(v.thr.ev[2].name, "after") && v.thr.ev[2].ts >= t2,
	   "hold: inside, the import, then the zones after the step, in time (%d events)", v.thr.n);
	is_int(v.steps, 4, "hold: every step");
	is_int(v.timeouts, 0, "hold: no timeout");
	is_int(v.clamped, 0, "hold: nothing clamped");

	/* a release that comes before the drain reaches the step's end: no hold at all */
	step = tft_step_begin("train");
	is_int(tft_rt_import_hold(step), 0, "early release: hold");
	tft_step_end();
	tft_rt_import_release(step);
	{
		TFT_ZONE("after early");
	}
	is_int(tft_flush(60000), 0, "early release: flush");
	look(tpath("hold.tft"), tid, &v);
	ok(has(&v.thr, "after early") == 1 && v.steps == 5, "early release: nothing waits");

	/* an abandoned step ends nothing: no hold */
	step = tft_step_begin("train");
	is_int(tft_rt_import_hold(step), 0, "abandoned: hold asked");
	tft_step_abandon();
	step = tft_step_begin("train");
	tft_step_end();
	{
		TFT_ZONE("after abandoned");
	}
	is_int(tft_flush(60000), 0, "abandoned: flush");
	look(tpath("hold.tft"), tid, &v);
	ok(has(&v.thr, "after abandoned") == 1 && v.steps == 6, "abandoned: nothing waits");
	is_int(tft_shutdown(), 0, "hold: shutdown");
}

static void test_timeout(void)
{
	int64_t tid = (int64_t)gettid(), step, end;

	is_int(start("timeout.tft", 0, "100"), 0, "timeout: init (TFT_IMPORT_HOLD_MS=100)");
	step = tft_step_begin("train");
	is_int(tft_rt_import_hold(step), 0, "timeout: hold");
	tft_step_end();
	{
		TFT_ZONE("after");
	}
	/* wait on the state: the zone shows once the hold gave up */
	end = mono_ns() + 60 * (int64_t)1000000000;
	do {
		tft_flush(60000);
		look(tpath("timeout.tft"), tid, &v);
	} while (!has(&v.thr, "after") && mono_ns() < end && (sleep_ms(10), 1));
	ok(has(&v.thr, "after") == 1, "timeout: the held zone goes in without a release");
	is_int(v.timeouts, 1, "timeout: counted in import_hold_timeouts");
	tft_rt_import_release(step); /* late: forgotten */
	is_int(tft_shutdown(), 0, "timeout: shutdown");
	is_int(start("off.tft", 0, "0"), 0, "off: init (TFT_IMPORT_HOLD_MS=0)");
	step = tft_step_begin("train");
	is_int(tft_rt_import_hold(step), TFT_EINVAL, "off: no hold");
	tft_step_end();
	is_int(tft_shutdown(), 0, "off: shutdown");
}

/*
 * A ring that fills while held drops, counted; nothing else is lost. On a
 * thread of its own: a thread's ring has the size of the session it began in.
 */
struct fill {
	int64_t tid, step;
	int n, zones; /* instants (or zones) recorded while held */
	uint64_t dropped;
};

static void *fill_body(void *p)
{
	struct fill *f = p;

	f->tid = (int64_t)gettid();
	f->step = tft_step_begin("train");
	is_int(tft_rt_import_hold(f->step), 0, "fill: hold");
	tft_step_end();
	tft_flush(60000); /* the drain reached the hold */
	for (int i = 0; i < f->n; i++) {
		if (f->zones) {
			TFT_ZONE("z");
		} else {
			TFT_INSTANT("i");
		}
	}
	tft_flush(60000); /* (the drain publishes the counts) */
	f->dropped = get_stats().dropped;
	return NULL;
}

static void test_full_ring(void)
{
	struct fill f = { .n = 1000 };
	pthread_t th;
	int fit;

	is_int(start("full.tft", 4096, NULL), 0, "full: init (4 KiB ring: 128 records)");
	pthread_create(&th, NULL, fill_body, &f);
	pthread_join(th, NULL);
	ok(f.dropped > 0 && f.dropped < 1000, "full: the held ring filled and dropped (%llu of 1000)",
	   (unsigned long long)f.dropped);
	fit = 1000 - (int)f.dropped;
	tft_rt_import_release(f.step);
	is_int(tft_flush(60000), 0, "full: flush after the release (the thread has exited)");
	look(tpath("full.tft"), f.tid, &v);
	is_int(has(&v.thr, "i"), fit, "full: what fitted is in, the rest counted in dropped");
	is_int(tft_shutdown(), 0, "full: shutdown");

	/* the default ring's room while held (docs/runtime.md) */
	memset(&f, 0, sizeof(f));
	f.n = 40000;
	f.zones = 1;
	is_int(start("room.tft", 0, NULL), 0, "room: init (1 MiB ring)");
	pthread_create(&th, NULL, fill_body, &f);
	pthread_join(th, NULL);
	fit = 40000 - (int)(f.dropped / 2); /* a dropped zone counts as two */
	printf("# a held 1 MiB ring took %d zones of 40000 (%llu events dropped)\n", fit,
	       (unsigned long long)f.dropped);
	ok(f.dropped > 0 && fit > 16000, "room: a held 1 MiB ring takes over 16000 zones (%d)", fit);
	tft_rt_import_release(f.step);
	is_int(tft_shutdown(), 0, "room: shutdown");
}

struct other {
	int64_t tid;
	int64_t step;
	int mode; /* 0: a counter sample; 1: end a held step, a zone, exit */
};

static void *other_body(void *p)
{
	struct other *o = p;

	o->tid = (int64_t)gettid();
	if (o->mode == 0) {
		TFT_COUNTER("c", 2.0);
	} else {
		tft_step_end();
		TFT_ZONE("before exit");
	}
	return NULL;
}

/* Cross-thread events after a hold wait for it; an exited held thread keeps its ring. */
static void test_threads(void)
{
	int64_t tid = (int64_t)gettid(), step;
	struct other o = { 0 };
	pthread_t th;

	is_int(start("threads.tft", 0, NULL), 0, "threads: init");
	step = tft_step_begin("train");
	is_int(tft_rt_import_hold(step), 0, "threads: hold");
	tft_step_end();
	TFT_COUNTER("c", 1.0); /* held: after the step's end */
	pthread_create(&th, NULL, other_body, &o);
	pthread_join(th, NULL); /* "c" = 2 on another thread, later */
	is_int(tft_flush(60000), 0, "threads: flush");
	look(tpath("threads.tft"), tid, &v);
	is_int(v.ctr.n, 0, "threads: the other thread's later sample waits for the held one");
	tft_rt_import_release(step);
	is_int(tft_flush(60000), 0, "threads: flush after the release");
	look(tpath("threads.tft"), tid, &v);
	ok(v.ctr.n == 2 && v.ctr.ev[0].value == 1.0 && v.ctr.ev[1].value == 2.0 &&
		   v.ctr.ev[0].ts < v.ctr.ev[1].ts,
	   "threads: both samples, in time order (%d)", v.ctr.n);
	is_int(v.clamped, 0, "threads: none clamped");

	/* a thread that ends a held step and exits */
	step = tft_step_begin("train");
	is_int(tft_rt_import_hold(step), 0, "exit: hold");
	o.mode = 1;
	pthread_create(&th, NULL, other_body, &o);
	pthread_join(th, NULL);
	sleep_ms(20); /* (the drain cycles meanwhile: it must keep the exited ring) */
	is_int(tft_flush(60000), 0, "exit: flush");
	look(tpath("threads.tft"), o.tid, &v);
	ok(!has(&v.thr, "before exit"), "exit: the exited thread's zone waits");
	tft_rt_import_release(step);
	is_int(tft_flush(60000), 0, "exit: flush after the release");
	look(tpath("threads.tft"), o.tid, &v);
	is_int(has(&v.thr, "before exit"), 1, "exit: then it is in");
	is_int(tft_shutdown(), 0, "threads: shutdown");
}

/* A zone open across the step: the drain still holds it, before the step's ops. */
static void test_floor(void)
{
	struct imp im = { .tid = (int64_t)gettid() };
	int64_t step, before;

	is_int(start("floor.tft", 0, NULL), 0, "floor: init");
	before = mono_ns();
	{
		TFT_ZONE("epoch");
		step = tft_step_begin("train");
		tft_rt_import_hold(step);
		{
			TFT_ZONE("inside");
		}
		im.ts = mono_ns();
		im.dur = 1000;
		tft_step_end();
		tft_flush(60000);
		tft_rt_with_writer(import_fn, &im);
		ok(im.floor >= before && im.floor < im.ts,
		   "floor: the open zone's begin (%lld ns before the op)", (long long)(im.ts - im.floor));
		tft_rt_import_release(step);
	}
	is_int(tft_shutdown(), 0, "floor: shutdown");
}

int main(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/tft-test-rt-hold-XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	test_hold_release();
	test_timeout();
	test_full_ring();
	test_threads();
	test_floor();
	return done_testing();
}
