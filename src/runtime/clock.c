/* SPDX-License-Identifier: MIT */
/*
 * Runtime clock: TSC detection, calibration against CLOCK_MONOTONIC at init
 * and refinement by the drain thread (see clock.h and docs/runtime.md).
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/clock.h"

#define CAL_SPIN_NS 2000000          /* initial calibration window */
#define REFINE_EVERY_NS 250000000    /* refine at most this often */
#define SLEW_MAX_PPM 1000            /* cap on the rate correction while slewing */

int64_t tft_rt_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t tft_rt_real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t tft_rt_test_skew_ns(void)
{
	static _Atomic int done;
	static _Atomic int64_t skew;

	if (!atomic_load_explicit(&done, memory_order_acquire)) {
		const char *v = getenv("TFT_TEST_CLOCK_SKEW_NS");
		char *end = NULL;
		long long x = 0;

		if (v && *v) {
			errno = 0;
			x = strtoll(v, &end, 10);
			if (errno || *end)
				x = 0;
		}
		atomic_store_explicit(&skew, (int64_t)x, memory_order_relaxed);
		atomic_store_explicit(&done, 1, memory_order_release);
	}
	return atomic_load_explicit(&skew, memory_order_relaxed);
}

int64_t tft_rt_session_now_ns(void)
{
	return tft_rt_mono_ns() + tft_rt_test_skew_ns();
}

int tft_rt_tsc_usable(void)
{
#if defined(__x86_64__)
	char line[8192];
	FILE *f = fopen("/proc/cpuinfo", "re");
	int ok = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "flags", 5) != 0)
			continue;
		/* Linux shows the invariant TSC (CPUID 80000007H:EDX[8]) as both flags. */
		ok = strstr(line, " constant_tsc") && strstr(line, " nonstop_tsc");
		break;
	}
	fclose(f);
	return ok;
#else
	return 0;
#endif
}

uint64_t tft_rt_clock_now(const struct tft_rt_clock *c)
{
	return tft_rt_tick(c->tsc);
}

static int64_t mulshift(uint64_t d, uint64_t mult)
{
	return (int64_t)(((unsigned __int128)d * mult) >> 32);
}

/* A tick on CLOCK_MONOTONIC (the map itself, without the test skew). */
static int64_t map_ns(const struct tft_rt_clock *c, uint64_t tick)
{
	if (!c->tsc)
		return (int64_t)tick;
	if (tick >= c->base_tick)
		return c->base_ns + mulshift(tick - c->base_tick, c->mult);
	if (tick >= c->prev_tick)
		return c->prev_ns + mulshift(tick - c->prev_tick, c->prev_mult);
	return c->prev_ns - mulshift(c->prev_tick - tick, c->prev_mult);
}

int64_t tft_rt_clock_ns(const struct tft_rt_clock *c, uint64_t tick)
{
	return map_ns(c, tick) + c->skew_ns;
}

/* One (tick, ns) pair read as close together as we can: best of 5 brackets. */
static void sample(uint64_t *tick, int64_t *ns)
{
	int64_t best = INT64_MAX;

	*tick = 0;
	*ns = 0;
	for (int i = 0; i < 5; i++) {
		int64_t a = tft_rt_mono_ns();
		uint64_t t = tft_rt_tick(1);
		int64_t b = tft_rt_mono_ns();
		if (b - a < best) {
			best = b - a;
			*tick = t;
			*ns = a + (b - a) / 2;
		}
	}
}

/* ns per tick between two points, 32.32 fixed point; 0 if unusable. */
static uint64_t rate(uint64_t t0, int64_t n0, uint64_t t1, int64_t n1)
{
	if (t1 <= t0 || n1 <= n0)
		return 0;
	return (uint64_t)(((unsigned __int128)(uint64_t)(n1 - n0) << 32) / (t1 - t0));
}

void tft_rt_clock_init(struct tft_rt_clock *c, int want_tsc)
{
	uint64_t t0, t1;
	int64_t n0, n1;

	memset(c, 0, sizeof(*c));
	c->skew_ns = tft_rt_test_skew_ns();
	c->tsc = want_tsc && tft_rt_tsc_usable();
	if (!c->tsc) {
		c->hz = 1e9;
		return;
	}
	sample(&t0, &n0);
	do
		sample(&t1, &n1);
	while (n1 - n0 < CAL_SPIN_NS);
	c->mult = rate(t0, n0, t1, n1);
	if (c->mult == 0) { /* the TSC did not move: not usable after all */
		c->tsc = 0;
		c->hz = 1e9;
		return;
	}
	c->cal_tick = t0;
	c->cal_ns = n0;
	c->base_tick = c->prev_tick = t1;
	c->base_ns = c->prev_ns = n1;
	c->prev_mult = c->mult;
	c->last_refine_ns = n1;
	c->hz = (double)(t1 - t0) * 1e9 / (double)(n1 - n0);
}

void tft_rt_clock_refine(struct tft_rt_clock *c)
{
	uint64_t tick, lr, mult, lo, hi, period;
	int64_t ns, mapped, err;
	__int128 m;

	if (!c->tsc || tft_rt_mono_ns() - c->last_refine_ns < REFINE_EVERY_NS)
		return;
	sample(&tick, &ns);
	if (tick <= c->base_tick)
		return;
	lr = rate(c->cal_tick, c->cal_ns, tick, ns); /* long-run rate */
	if (lr == 0)
		return;
	mapped = map_ns(c, tick);
	err = mapped - ns; /* > 0: the map runs ahead of CLOCK_MONOTONIC */
	/* Slew the error out over about one refinement period (in ticks). */
	period = (uint64_t)((double)REFINE_EVERY_NS * c->hz / 1e9) + 1;
	m = (__int128)lr - (__int128)err * ((__int128)1 << 32) / (__int128)period;
	lo = lr - lr / 1000000 * SLEW_MAX_PPM;
	hi = lr + lr / 1000000 * SLEW_MAX_PPM;
	mult = m < (__int128)lo ? lo : m > (__int128)hi ? hi : (uint64_t)m;
	c->prev_tick = c->base_tick;
	c->prev_ns = c->base_ns;
	c->prev_mult = c->mult;
	c->base_tick = tick;
	c->base_ns = mapped; /* continuous: the new segment starts where the old one is */
	c->mult = mult;
	c->last_refine_ns = ns;
	c->hz = (double)(tick - c->cal_tick) * 1e9 / (double)(ns - c->cal_ns);
}
