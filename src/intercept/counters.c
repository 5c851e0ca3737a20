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
#include <sys/syscall.h>
#include <unistd.h>

#include "intercept/preload.h"
#include "runtime/source.h"

#define SAMPLE_NS 50000000 /* process counters sampled by the drain this often */

struct cdef {
	const char *name;  /* as in --counters and perf(1) */
	const char *track; /* counter track and arg name */
	uint32_t type;
	uint64_t config;
};

static const struct cdef defs[] = {
	{ "cycles", "perf.cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions", "perf.instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
	{ "cache-misses", "perf.cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES },
	{ "branch-misses", "perf.branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
	{ "task-clock", "perf.task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
	{ "page-faults", "perf.page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "context-switches", "perf.context-switches", PERF_TYPE_SOFTWARE,
	  PERF_COUNT_SW_CONTEXT_SWITCHES },
};
#define NDEFS (sizeof(defs) / sizeof(defs[0]))

static struct {
	uint32_t n;                        /* counters recorded */
	uint32_t def[NDEFS];               /* their defs[] index */
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

/* The calling thread's group: its fds (-1 not open) and the process they belong to. */
static __thread int tls_fd[NDEFS];
static __thread int tls_state;   /* 0 not opened, 1 open, -1 refused */
static __thread pid_t tls_pid;

static int perf_open(const struct cdef *d, int inherit, int group_fd, int user_only, int fmt_group)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = d->type;
	a.config = d->config;
	a.inherit = (unsigned)inherit;
	a.exclude_kernel = (unsigned)user_only;
	a.exclude_hv = (unsigned)user_only;
	a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	if (fmt_group)
		a.read_format |= PERF_FORMAT_GROUP;
	return (int)syscall(SYS_perf_event_open, &a, 0, -1, group_fd, PERF_FLAG_FD_CLOEXEC);
}

static int paranoid(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	int v = -100;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -100;
		fclose(f);
	}
	return v;
}

/* Why the kernel refused a counter, in words. */
static void refusal(char *out, size_t size, int e)
{
	if (e == ENOENT || e == EOPNOTSUPP || e == ENODEV || e == EINVAL)
		snprintf(out, size, "not supported here (no such event on this CPU or VM: %s)",
			 strerror(e));
	else if (e == EACCES || e == EPERM)
		snprintf(out, size,
			 "not permitted (kernel.perf_event_paranoid=%d; needs CAP_PERFMON or a lower "
			 "setting: %s)",
			 paranoid(), strerror(e));
	else if (e == ENOSYS)
		snprintf(out, size, "not available (no perf_event_open in this kernel)");
	else
		snprintf(out, size, "refused (%s)", strerror(e));
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

static int open_group(void)
{
	int leader = -1;

	for (uint32_t i = 0; i < c.n; i++) {
		int fd = perf_open(&defs[c.def[i]], 0, leader, c.user_only[i], 1);
		if (fd < 0) {
			for (uint32_t k = 0; k < i; k++)
				close(tls_fd[k]);
			return -1;
		}
		tls_fd[i] = fd;
		if (leader < 0)
			leader = fd;
	}
	tls_pid = getpid();
	pthread_setspecific(c.key, (void *)1);
	return 0;
}

static void zone_hook(uint32_t phase, uint32_t depth)
{
	uint64_t buf[3 + NDEFS], vals[NDEFS];
	ssize_t want = (ssize_t)((3 + c.n) * sizeof(uint64_t));
	int e = errno;

	if (tls_state == 1 && tls_pid != getpid()) {
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

static int want(const char *list, const char *name)
{
	size_t n = strlen(name);

	if (strcmp(list, "all") == 0 || strcmp(list, "default") == 0)
		return 1;
	for (const char *p = list; *p;) {
		size_t k = strcspn(p, ",");
		if (k == n && strncmp(p, name, n) == 0)
			return 1;
		p += k;
		if (*p == ',')
			p++;
	}
	return 0;
}

void tft_counters_setup(void)
{
	static const struct tft_rt_source src = { collect, NULL };
	static int said;
	char why[256];
	size_t nrec = 0, nref = 0;

	if (!tft_preload.counters)
		return;
	for (uint32_t d = 0; d < NDEFS; d++) {
		int fd, user_only = 0, e;
		if (!want(tft_preload.counters, defs[d].name))
			continue;
		fd = perf_open(&defs[d], 1, -1, 0, 0);
		if (fd < 0 && (errno == EACCES || errno == EPERM)) {
			user_only = 1; /* the kernel's share is refused: user space only */
			fd = perf_open(&defs[d], 1, -1, 1, 0);
		}
		if (fd < 0) {
			e = errno;
			refusal(why, sizeof(why), e);
			nref += (size_t)snprintf(c.refused + nref, sizeof(c.refused) - nref, "%s%s: %s",
						 nref ? "; " : "", defs[d].name, why);
			if (nref >= sizeof(c.refused))
				nref = sizeof(c.refused) - 1;
			continue;
		}
		c.def[c.n] = d;
		c.user_only[c.n] = user_only;
		c.proc_fd[c.n] = fd;
		c.site[c.n].name = defs[d].track;
		c.site[c.n].cat = "perf";
		c.names[c.n] = defs[d].track;
		nrec += (size_t)snprintf(c.recorded + nrec, sizeof(c.recorded) - nrec, "%s%s%s",
					 nrec ? "," : "", defs[d].name, user_only ? ":u" : "");
		if (nrec >= sizeof(c.recorded))
			nrec = sizeof(c.recorded) - 1;
		c.n++;
	}
	if (c.refused[0] && !tft_preload.counters_quiet)
		tft_preload_say(&said, true, "counters not recorded: %s", c.refused);
	if (!c.n)
		return;
	if (pthread_key_create(&c.key, close_group) != 0 || tft_rt_source_add(&src) != 0) {
		tft_preload_say(NULL, true, "counters not recorded: cannot set up");
		return;
	}
	tft_rt_counters_describe(c.names, c.n);
	tft_rt_set_hooks(zone_hook, step_hook);
}
