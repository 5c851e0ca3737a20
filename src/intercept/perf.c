/* SPDX-License-Identifier: MIT */
/*
 * Counter names, opening and refusals (perf.h), shared by the preload
 * library and `tftracer record`.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "intercept/perf.h"

const struct tft_perf_def tft_perf_defs[] = {
	{ "cycles", "perf.cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions", "perf.instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
	{ "cache-misses", "perf.cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES },
	{ "branch-misses", "perf.branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
	{ "task-clock", "perf.task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
	{ "page-faults", "perf.page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "context-switches", "perf.context-switches", PERF_TYPE_SOFTWARE,
	  PERF_COUNT_SW_CONTEXT_SWITCHES },
};
const uint32_t tft_perf_ndefs = sizeof(tft_perf_defs) / sizeof(tft_perf_defs[0]);

int tft_perf_parse(const char *list, uint32_t *mask, const char **bad, size_t *badlen)
{
	*mask = 0;
	for (const char *p = list; *p;) {
		size_t k = strcspn(p, ",");
		uint32_t i;
		if ((k == 3 && strncmp(p, "all", 3) == 0) || (k == 7 && strncmp(p, "default", 7) == 0)) {
			*mask |= (1u << tft_perf_ndefs) - 1;
		} else if (k) {
			for (i = 0; i < tft_perf_ndefs; i++)
				if (strlen(tft_perf_defs[i].name) == k &&
				    strncmp(p, tft_perf_defs[i].name, k) == 0)
					break;
			if (i == tft_perf_ndefs) {
				*bad = p;
				*badlen = k;
				return -1;
			}
			*mask |= 1u << i;
		}
		p += k;
		if (*p == ',')
			p++;
	}
	return 0;
}

int tft_perf_open(const struct tft_perf_def *d, int inherit, int group_fd, int user_only,
		  int fmt_group, int disabled)
{
	struct perf_event_attr a;
	long fd;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = d->type;
	a.config = d->config;
	a.inherit = (unsigned)(inherit != 0);
	a.disabled = (unsigned)(disabled != 0);
	a.exclude_kernel = (unsigned)(user_only != 0);
	a.exclude_hv = (unsigned)(user_only != 0);
	a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	if (fmt_group)
		a.read_format |= PERF_FORMAT_GROUP;
	fd = syscall(SYS_perf_event_open, &a, 0, -1, group_fd, PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : (int)fd;
}

int tft_perf_open_any(const struct tft_perf_def *d, int inherit, int *user_only)
{
	int fd = tft_perf_open(d, inherit, -1, 0, 0, 0);

	*user_only = 0;
	if (fd == -EACCES || fd == -EPERM) {
		int u = tft_perf_open(d, inherit, -1, 1, 0, 0);
		if (u >= 0) {
			*user_only = 1; /* the kernel's share is not permitted: user space only */
			return u;
		}
		/* user space only is not refused for permission: the event itself is missing */
		if (u != -EACCES && u != -EPERM)
			return u;
	}
	return fd;
}

static int paranoid(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");
	int v = -100;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -100;
		fclose(f);
	}
	return v;
}

void tft_perf_refusal(char *out, size_t size, int err)
{
	if (err == ENOENT || err == EOPNOTSUPP || err == ENODEV || err == EINVAL)
		snprintf(out, size, "not supported here (no such event on this CPU or VM: %s)",
			 strerror(err));
	else if (err == EACCES || err == EPERM)
		snprintf(out, size,
			 "not permitted (kernel.perf_event_paranoid=%d; needs CAP_PERFMON or a lower "
			 "setting: %s)",
			 paranoid(), strerror(err));
	else if (err == ENOSYS)
		snprintf(out, size, "not available (no perf_event_open in this kernel)");
	else
		snprintf(out, size, "refused (%s)", strerror(err));
}
