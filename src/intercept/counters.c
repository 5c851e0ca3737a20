/* SPDX-License-Identifier: MIT */
/*
 * Hardware and OS counters (perf_event_open) for the preload library
 * (TFT_COUNTERS, `tftracer record --counters=...`; docs/intercept.md).
 *
 * Two sets of the counters the kernel grants:
 *  - per thread, read on the thread at each recorded zone's begin and end
 *    (runtime zone hook): the differences become args of the zone's slice
 *    ("perf.instructions" ...), inclusive of nested zones;
 *  - for the process (inherit: its threads and the processes it starts after
 *    the library loaded), read at each step's begin and end and every 50 ms
 *    by the drain: samples of the counter tracks "perf.<counter>", cumulative
 *    since the library loaded, so a step's count is the difference of the
 *    samples at its end and at its begin.
 * A counter the kernel refuses (not supported by the CPU or VM, or not
 * permitted) is said once, with why, and stored in the session's meta
 * `counters_refused`; the others are recorded. Reading costs a read()
 * system call per zone boundary, only while counters are asked for.
 */
#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "intercept/perf.h"
#include "intercept/preload.h"
#include "runtime/source.h"

#define SAMPLE_NS 50000000 /* process counters sampled by the drain this often */
#define NDEFS 8u           /* at least tft_perf_ndefs */

static struct {
	uint32_t n;                        /* counters recorded */
	uint32_t def[NDEFS];               /* their tft_perf_defs[] index */
	int user_only[NDEFS];              /* 1: kernel counting refused, user space only */
	int proc_fd[NDEFS];                /* process-wide (inherit) counter, per recorded counter */
	struct tft_site site[NDEFS];       /* counter track sites, per recorded counter */
	const char *names[NDEFS];          /* arg names (tft_rt_counters_describe) */
	char recorded[160];                /* "task-clock,page-faults" */
	char refused[800];                 /* "cycles: not supported (...); ..." */
	pthread_key_t key;                 /* closes a thread's group at its exit */
	int64_t next_sample_ns;            /* the drain only */
	uint32_t said_gen;                 /* the drain only: meta written for this session */
} c;

/* The calling thread's group: its fds and the process they belong to. */
static __thread int tls_fd[NDEFS];
static __thread int tls_state;   /* 0 not opened, 1 open, -1 refused */
static __thread uint32_t tls_gen; /* fork_gen when opened */
static _Atomic uint32_t fork_gen; /* bumped in a fork child: its threads' fds are its parent's */

static void on_fork_child(void)
{
	atomic_fetch_add_explicit(&fork_gen, 1, memory_order_relaxed);
}

/* Scale a counter that the kernel multiplexed (ran part of the time) to the whole time. */
static uint64_t scaled(uint64_t v, uint64_t enabled, uint64_t running)
{
	if (running && running < enabled)
		return (uint64_t)((double)v * ((double)enabled / (double)running));
	return v;
}

static uint64_t read_proc(uint32_t i)
{
	uint64_t buf[3] = { 0, 0, 0 };

	if (c.proc_fd[i] < 0 || read(c.proc_fd[i], buf, sizeof(buf)) != (ssize_t)sizeof(buf))
		return 0;
	return scaled(buf[0], buf[1], buf[2]);
}

/* ---- per thread ----------------------------------------------------------------------- */

static void close_group(void *p)
{
	(void)p;
	for (uint32_t i = 0; i < c.n; i++)
		if (tls_fd[i] > 0)
			close(tls_fd[i]);
	tls_state = -1; /* (destructors that record after this get nothing) */
}

/*
 * The thread's group: the leader opened disabled, the members added, then the
 * leader enabled, which schedules the whole group in at once. (Members added
 * to a running leader of another PMU, as page-faults and context-switches are
 * to task-clock where the hardware counters are refused, stay idle until the
 * thread is next scheduled in: the first zones' counts came out 0 or short.)
 */
static int open_group(void)
{
	int leader = -1;
	uint32_t i;

	for (i = 0; i < c.n; i++) {
		int fd = tft_perf_open(&tft_perf_defs[c.def[i]], 0, leader, c.user_only[i], 1,
				       leader < 0);
		if (fd < 0)
			break;
		tls_fd[i] = fd;
		if (leader < 0)
			leader = fd;
	}
	if (i < c.n || ioctl(leader, PERF_EVENT_IOC_ENABLE, 0) != 0) {
		for (uint32_t k = 0; k < i; k++)
			close(tls_fd[k]);
		return -1;
	}
	tls_gen = atomic_load_explicit(&fork_gen, memory_order_relaxed);
	pthread_setspecific(c.key, (void *)1);
	return 0;
}

static void zone_hook(uint32_t phase, uint32_t depth)
{
	uint64_t buf[3 + NDEFS], vals[NDEFS];
	ssize_t want = (ssize_t)((3 + c.n) * sizeof(uint64_t));
	int e = errno;

	if (tls_state == 1 && tls_gen != atomic_load_explicit(&fork_gen, memory_order_relaxed)) {
		/* a fork child: the fds count its parent's thread */
		for (uint32_t i = 0; i < c.n; i++)
			close(tls_fd[i]);
		tls_state = 0;
	}
	if (tls_state == 0)
		tls_state = open_group() == 0 ? 1 : -1;
	if (tls_state != 1 || read(tls_fd[0], buf, sizeof(buf)) != want) {
		errno = e;
		return;
	}
	/* {nr, time_enabled, time_running, values[nr]} */
	for (uint32_t i = 0; i < c.n; i++)
		vals[i] = scaled(buf[3 + i], buf[1], buf[2]);
	tft_rt_emit_values(phase, depth, vals, c.n);
	errno = e;
}

/* ---- per process: steps and the drain's samples -------------------------------------------- */

static void step_hook(uint32_t phase)
{
	int e = errno;

	(void)phase;
	for (uint32_t i = 0; i < c.n; i++)
		tft_rt_counter(&c.site[i], (double)read_proc(i));
	errno = e;
}

static void collect(void *ctx, struct tft_rt_src *io, int final)
{
	int64_t now = tft_rt_src_now_ns(io);

	(void)ctx;
	if (c.said_gen != tft_rt_src_session(io)) {
		c.said_gen = tft_rt_src_session(io);
		tft_rt_src_meta(io, "counters", c.recorded);
		if (c.refused[0])
			tft_rt_src_meta(io, "counters_refused", c.refused);
		c.next_sample_ns = 0;
	}
	if (now < c.next_sample_ns && !final)
		return;
	c.next_sample_ns = now + SAMPLE_NS;
	for (uint32_t i = 0; i < c.n; i++)
		tft_rt_src_counter(io, &c.site[i], now, (double)read_proc(i));
}

/* ---- set-up ----------------------------------------------------------------------------- */

void tft_counters_setup(void)
{
	static const struct tft_rt_source src = { collect, NULL };
	static int said;
	char why[256];
	size_t nrec = 0, nref = 0;

	uint32_t mask = 0;
	const char *bad;
	size_t badlen;

	if (!tft_preload.counters)
		return;
	if (tft_perf_parse(tft_preload.counters, &mask, &bad, &badlen)) {
		tft_preload_say(&said, true, "counters not recorded: no counter named '%.*s'", (int)badlen,
				bad);
		return;
	}
	for (uint32_t d = 0; d < tft_perf_ndefs && d < NDEFS; d++) {
		int fd, user_only;
		if (!(mask & (1u << d)))
			continue;
		fd = tft_perf_open_any(&tft_perf_defs[d], 1, &user_only);
		if (fd < 0) {
			tft_perf_refusal(why, sizeof(why), -fd);
			nref += (size_t)snprintf(c.refused + nref, sizeof(c.refused) - nref, "%s%s: %s",
						 nref ? "; " : "", tft_perf_defs[d].name, why);
			if (nref >= sizeof(c.refused))
				nref = sizeof(c.refused) - 1;
			continue;
		}
		c.def[c.n] = d;
		c.user_only[c.n] = user_only;
		c.proc_fd[c.n] = fd;
		c.site[c.n].name = tft_perf_defs[d].track;
		c.site[c.n].cat = "perf";
		c.site[c.n].flags = TFT_SITE_MONOTONIC; /* read on the stepping thread and the drain's */
		c.names[c.n] = tft_perf_defs[d].track;
		nrec += (size_t)snprintf(c.recorded + nrec, sizeof(c.recorded) - nrec, "%s%s%s",
					 nrec ? "," : "", tft_perf_defs[d].name, user_only ? ":u" : "");
		if (nrec >= sizeof(c.recorded))
			nrec = sizeof(c.recorded) - 1;
		c.n++;
	}
	if (c.refused[0] && !tft_preload.counters_quiet)
		tft_preload_say(&said, true, "counters not recorded: %s", c.refused);
	if (!c.n)
		return;
	if (pthread_key_create(&c.key, close_group) != 0 || tft_rt_source_add(&src) != 0 ||
	    pthread_atfork(NULL, NULL, on_fork_child) != 0) {
		tft_preload_say(NULL, true, "counters not recorded: cannot set up");
		return;
	}
	tft_rt_counters_describe(c.names, c.n);
	tft_rt_set_hooks(zone_hook, step_hook);
}
