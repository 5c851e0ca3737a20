/* SPDX-License-Identifier: MIT */
/*
 * A signal handler that records on the thread it interrupts, landing in a
 * recording call's fast path just before the call marks the thread busy
 * (src/runtime/emit.c, TFT_RT_PREEMPT). This file compiles emit.c itself
 * with a hook at that point, so the landing is exact rather than left to a
 * timer: the hook records an instant, as a handler would, when the ring has
 * exactly the room the interrupted call needs. The interrupted call must
 * then find its room gone and drop (counted), not write past the drain's
 * tail: every event is recorded or counted as dropped.
 *
 * The library's emit.o is not linked: this file defines all of its symbols,
 * so the archive member is never pulled in.
 */
#include <stdatomic.h>
#include <stdint.h>

struct tft_rt_thread;
static void test_preempt(struct tft_rt_thread *t);
#define TFT_RT_PREEMPT(t) test_preempt(t)

#include "../../src/runtime/emit.c"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "tap.h"

static int armed;       /* the hook fires while set (cleared as it fires) */
static uint64_t fired;  /* instants the hook recorded */
static const struct tft_site hook_site = { "preempt", NULL, __FILE__, __LINE__, 0 };

/* The room the call about to write needs: an instant 1, a zone begin 2, plus the open zones' ends. */
static uint64_t need_now;

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
	tft_rt_instant(&hook_site);
	fired++;
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
	uint64_t emitted = 0;
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
		armed = 1;
		if (zones) {
			struct tft_zone z = tft_rt_zone_begin(&work);

			armed = 0;
			tft_rt_zone_end(z);
			emitted += 2;
		} else {
			tft_rt_instant(&work);
			emitted++;
		}
	}
	armed = 0;
	ok(tft_shutdown() == 0, "%s: shutdown", name);
	st = stats();
	ok(fired == want, "%s: the hook landed %llu times with the room exactly taken", name,
	   (unsigned long long)fired);
	if (!ok(st.events + st.dropped == emitted + fired,
		"%s: every event recorded or counted as dropped", name))
		printf("#   recorded %llu + dropped %llu, emitted %llu + %llu by the hook (threads %llu)\n",
		       (unsigned long long)st.events, (unsigned long long)st.dropped,
		       (unsigned long long)emitted, (unsigned long long)fired, (unsigned long long)st.threads);
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
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd) != 0)
			fprintf(stderr, "# could not remove %s\n", tmpdir);
	}
	return done_testing();
}
