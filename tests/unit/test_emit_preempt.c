/* SPDX-License-Identifier: MIT */
/*
 * A signal handler that records on the thread it interrupts, landing in a
 * recording call's fast path just before the call marks the thread busy
 * (src/runtime/emit.c, TFT_RT_PREEMPT). This file compiles emit.c itself
 * with a hook at that point, so the landing is exact rather than left to a
 * timer. The hook acts as a handler would when the ring has exactly the
 * room the interrupted call counted on:
 *   - it records an instant: the interrupted instant or zone begin must
 *     find its room gone and drop (counted), not write past the drain's tail;
 *   - it ends the outer zone (which ends the inner one too) while the inner
 *     zone's end is interrupted: that end must find its zone ended and write
 *     nothing, not an end into a slot no one reserved (and leave the open
 *     count below zero).
 * Every event must be recorded or counted as dropped.
 *
 * The library's emit.o is not linked: this file defines all of its symbols,
 * so the archive member is never pulled in.
 */
#include <stdatomic.h>
#include <stdint.h>

struct tft_rt_thread;
static void test_preempt(struct tft_rt_thread *t);
static void test_preempt_register(void);
#define TFT_RT_PREEMPT(t) test_preempt(t)
#define TFT_RT_PREEMPT_REGISTER() test_preempt_register()

#include "../../src/runtime/emit.c"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "tap.h"

static int armed;       /* the hook fires while set (cleared as it fires) */
static uint64_t fired;  /* times the hook acted */
static const struct tft_site hook_site = { "preempt", NULL, __FILE__, __LINE__, 0 };

/*
 * The room the interrupted call counts on beyond the open zones' end slots:
 * an instant 1, a zone begin 2, a zone end 0 (its slot is reserved).
 */
static uint64_t need_now;
static struct tft_zone end_zone; /* a zone to end instead of recording an instant */

static void test_preempt(struct tft_rt_thread *t)
{
	uint64_t tail, room;

	if (!armed)
		return;
	tail = atomic_load_explicit(&t->tail, memory_order_acquire);
	room = t->mask + 1 - (t->head_local - tail);
	if (room != need_now + t->open)
		return;
	armed = 0; /* the hook's own call passes here too */
	if (end_zone.depth)
		tft_rt_zone_end(end_zone);
	else
		tft_rt_instant(&hook_site);
	fired++;
}

/* A handler recording a thread's first event while the thread registers for its own. */
static int armed_register;

static void test_preempt_register(void)
{
	if (!armed_register)
		return;
	armed_register = 0;
	tft_rt_instant(&hook_site); /* registers the thread, then records */
}

static char tmpdir[64];

static struct tft_runtime_stats stats(void)
{
	struct tft_runtime_stats s;

	memset(&s, 0, sizeof(s));
	s.struct_size = sizeof(s);
	tft_stats(&s);
	return s;
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Record `what` (instants or zones) until the hook has fired `want` times or 5 s pass. */
static void run(const char *name, int zones, uint64_t want)
{
	static const struct tft_site work = { "work", NULL, __FILE__, __LINE__, 0 };
	struct tft_runtime_stats st;
	struct tft_config c;
	char path[128];
	uint64_t emitted = 0, extra;
	int64_t end;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	tft_config_init(&c);
	c.exit_timeout_ms = 60000;
	c.session_path = path;
	c.buffer_bytes = 4096; /* the smallest ring: 128 slots, full most of the time */
	c.enabled = 1;
	ok(tft_init(&c) == 0, "%s: init", name);
	fired = 0;
	need_now = zones ? 2 : 1;
	end = now_ns() + 5000000000LL;
	while (fired < want && now_ns() < end) {
		if (zones == 2) {
			/* outer and inner zone; the hook ends the outer one during the inner end */
			struct tft_zone a = tft_rt_zone_begin(&work), b = tft_rt_zone_begin(&work);

			for (int i = 0; i < 64; i++) /* keep the ring near full */
				tft_rt_instant(&work);
			emitted += 4 + 64; /* two zones (begin, end) whoever ends them, and the instants */
			end_zone = a;
			need_now = 0;
			armed = b.depth == 2;
			tft_rt_zone_end(b);
			armed = 0;
			end_zone.depth = 0;
			if (self && self->open > 1) { /* the outer zone at most */
				ok(0, "%s: open zones after the inner end: %u", name, self->open);
				break; /* the outer end would loop up to the bogus count */
			}
			tft_rt_zone_end(a);
		} else if (zones) {
			struct tft_zone z;

			armed = 1;
			z = tft_rt_zone_begin(&work);
			armed = 0;
			tft_rt_zone_end(z);
			emitted += 2;
		} else {
			armed = 1;
			tft_rt_instant(&work);
			emitted++;
		}
	}
	armed = 0;
	ok(tft_shutdown() == 0, "%s: shutdown", name);
	st = stats();
	ok(fired == want, "%s: the hook landed %llu times with the room exactly taken", name,
	   (unsigned long long)fired);
	extra = zones == 2 ? 0 : fired; /* ending zones adds no event: their ends are counted */
	if (!ok(st.events + st.dropped == emitted + extra,
		"%s: every event recorded or counted as dropped", name))
		printf("#   recorded %llu + dropped %llu, emitted %llu + %llu by the hook (threads %llu)\n",
		       (unsigned long long)st.events, (unsigned long long)st.dropped,
		       (unsigned long long)emitted, (unsigned long long)extra, (unsigned long long)st.threads);
}

static void *first_event(void *arg)
{
	static const struct tft_site work = { "first", NULL, __FILE__, __LINE__, 0 };

	(void)arg;
	armed_register = 1;
	tft_rt_instant(&work);
	armed_register = 0;
	return NULL;
}

/* The thread must end up with one ring (the handler's), not two (one leaked with its slot). */
static void run_register(void)
{
	struct tft_runtime_stats st;
	struct tft_config c;
	char path[128];
	pthread_t th;
	uint32_t n0;

	snprintf(path, sizeof(path), "%s/register.tft", tmpdir);
	tft_config_init(&c);
	c.exit_timeout_ms = 60000;
	c.session_path = path;
	c.enabled = 1;
	ok(tft_init(&c) == 0, "register: init");
	n0 = atomic_load(&tft_rt_nthreads); /* this thread's ring, from the runs before */
	ok(pthread_create(&th, NULL, first_event, NULL) == 0, "register: thread");
	pthread_join(th, NULL);
	ok(tft_shutdown() == 0, "register: shutdown");
	st = stats();
	is_int(st.threads, 1, "register: one ring for the thread whose registration a handler interrupted");
	is_int(st.events + st.dropped, 2, "register: its event and the handler's");
	is_int(atomic_load(&tft_rt_nthreads), n0, "register: its ring given back when the thread and the session ended");
}

int main(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/tft-test-preempt-XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	run("instants.tft", 0, 200);
	run("zones.tft", 1, 200);
	run("zone-ends.tft", 2, 200);
	run_register();
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd) != 0)
			fprintf(stderr, "# could not remove %s\n", tmpdir);
	}
	return done_testing();
}
