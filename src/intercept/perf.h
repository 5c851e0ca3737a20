/* SPDX-License-Identifier: MIT */
/*
 * The counters tftracer reads with perf_event_open: their names (as
 * `--counters` and perf(1) spell them), how to open one, and why the kernel
 * refused one, in words. No runtime here: the preload library's counters
 * (counters.c) and `tftracer record`, which checks the counters before the
 * program starts, share it.
 */
#ifndef TFT_INTERCEPT_PERF_H
#define TFT_INTERCEPT_PERF_H

#include <stddef.h>
#include <stdint.h>

struct tft_perf_def {
	const char *name;  /* "instructions" */
	const char *track; /* counter track and arg name: "perf.instructions" */
	uint32_t type;     /* perf_event_attr.type */
	uint64_t config;   /* perf_event_attr.config */
};

extern const struct tft_perf_def tft_perf_defs[];
extern const uint32_t tft_perf_ndefs;

/*
 * A comma-separated list of counter names ("all" or "default": every one) as
 * a mask of tft_perf_defs indices. 0, or -1 with *bad, *badlen the first
 * unknown name.
 */
int tft_perf_parse(const char *list, uint32_t *mask, const char **bad, size_t *badlen);

/*
 * Open counter d for the calling thread (inherit: and the threads and
 * processes it starts later), in the group of group_fd (-1: a leader),
 * user space only when asked, with PERF_FORMAT_GROUP when fmt_group,
 * disabled (until PERF_EVENT_IOC_ENABLE) when asked; reads carry the times
 * enabled and running. The fd (close-on-exec), or -errno.
 *
 * A group's members go in with the leader disabled, then the leader is
 * enabled: a member added to a running group is not counting until the
 * thread is next scheduled in where its PMU is not the leader's (Linux 6.x:
 * page-faults or context-switches joining a task-clock leader, both software
 * events of different PMUs; the install reschedules the member's PMU only).
 */
int tft_perf_open(const struct tft_perf_def *d, int inherit, int group_fd, int user_only,
		  int fmt_group, int disabled);

/*
 * Open d as tftracer does (whole kernel and user time; user space only when
 * the kernel refuses that with EACCES/EPERM). The fd, *user_only set, or
 * -errno: of the user-space-only try when that one failed for another reason
 * (the event does not exist), else of the first.
 */
int tft_perf_open_any(const struct tft_perf_def *d, int inherit, int *user_only);

/* Why the kernel refused a counter with errno err ("not supported here (...)"). */
void tft_perf_refusal(char *out, size_t size, int err);

#endif /* TFT_INTERCEPT_PERF_H */
