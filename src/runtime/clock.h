/* SPDX-License-Identifier: MIT */
/*
 * Runtime clock: records carry raw ticks (the TSC where it is invariant, else
 * CLOCK_MONOTONIC ns); the drain thread maps ticks to CLOCK_MONOTONIC ns with
 * a piecewise-linear, continuous, increasing map it refines as it runs.
 */
#ifndef TFT_RUNTIME_CLOCK_H
#define TFT_RUNTIME_CLOCK_H

#include <stdint.h>
#include <time.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

/*
 * Tick -> ns map, owned by the drain session. ns = base_ns + (tick -
 * base_tick) * mult / 2^32 for ticks at or after base_tick; the previous
 * segment serves older ticks, so a tick converts the same whichever cycle
 * reads it (up to one refinement back).
 */
struct tft_rt_clock {
	int tsc;             /* 1: ticks are TSC; 0: ticks are CLOCK_MONOTONIC ns */
	uint64_t base_tick;  /* current segment */
	int64_t base_ns;
	uint64_t mult;       /* ns per tick, 32.32 fixed point */
	uint64_t prev_tick;  /* previous segment */
	int64_t prev_ns;
	uint64_t prev_mult;
	uint64_t cal_tick;   /* first calibration point: long-run rate */
	int64_t cal_ns;
	int64_t last_refine_ns;
	double hz;           /* ticks per second, last estimate */
	int64_t skew_ns;     /* added to every converted time (tft_rt_test_skew_ns) */
};

/* CLOCK_MONOTONIC / CLOCK_REALTIME in ns. */
int64_t tft_rt_mono_ns(void);
int64_t tft_rt_real_ns(void);

/*
 * TEST ONLY: $TFT_TEST_CLOCK_SKEW_NS (a signed integer, ns; read once), added
 * to every time the runtime converts (events, steps, sources' times) and to
 * the times other recorders of the process take on the session's clock (the
 * MPI interceptor's clock exchange, the Python module's collectives), so that
 * a test can give one rank of a job a clock of its own and check that the
 * job's clock alignment finds it. 0 when unset or not a number.
 */
int64_t tft_rt_test_skew_ns(void);

/* CLOCK_MONOTONIC ns plus the test skew: now on the session's clock. */
int64_t tft_rt_session_now_ns(void);

/* 1 if /proc/cpuinfo lists an invariant TSC (constant_tsc + nonstop_tsc) on x86_64. */
int tft_rt_tsc_usable(void);

/*
 * Choose the source (want_tsc and usable -> TSC) and calibrate: spins about
 * 2 ms to measure the TSC rate. Never fails.
 */
void tft_rt_clock_init(struct tft_rt_clock *c, int want_tsc);

/* Map a tick to CLOCK_MONOTONIC ns (plus the test skew). */
int64_t tft_rt_clock_ns(const struct tft_rt_clock *c, uint64_t tick);

/* Read the current tick of the chosen source. */
uint64_t tft_rt_clock_now(const struct tft_rt_clock *c);

/*
 * Refine the map against CLOCK_MONOTONIC (drain thread, every cycle; acts at
 * most every 250 ms). The map stays continuous and increasing: the offset is
 * slewed out over the next period, the rate is the long-run measurement.
 */
void tft_rt_clock_refine(struct tft_rt_clock *c);

/* The producers' tick read: rdtsc when `tsc`, else the vDSO clock. */
static inline uint64_t tft_rt_tick(int tsc)
{
#if defined(__x86_64__)
	if (__builtin_expect(tsc, 1))
		return __rdtsc();
#else
	(void)tsc;
#endif
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#endif /* TFT_RUNTIME_CLOCK_H */
