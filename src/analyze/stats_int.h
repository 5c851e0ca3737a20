/* SPDX-License-Identifier: MIT */
/*
 * Internals shared by analyze/stats.c (aggregation by scanning events) and
 * analyze/stats_stored.c (aggregation from stored chunk statistics): the
 * groups a computation fills and how values are added to them.
 *
 * A group's durations are kept exactly (durs, for exact percentiles) until
 * it holds more than TFT_STATS_EXACT_MAX of them or receives a stored
 * histogram; from then on they are counted in log-linear buckets
 * (core/hist.h) and its percentiles are within TFT_HIST_REL_ERROR.
 */
#ifndef TFT_ANALYZE_STATS_INT_H
#define TFT_ANALYZE_STATS_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "analyze/stats.h"
#include "core/hist.h"
#include "core/hmap.h"

/* Exact durations kept per group before it switches to buckets (a power of two):
 * scanning, and merging stored statistics (whose percentiles are approximate
 * anyway but for the rarest names: a group of up to this many stays exact). */
#define TFT_STATS_EXACT_MAX 65536u
#define TFT_STATS_EXACT_MAX_STORED 1024u

struct group {
	uint32_t key;
	uint64_t count;
	int64_t total_ns, self_ns, min_ns, max_ns;
	int64_t *durs; /* owned; count entries while exact */
	size_t cap;
	bool approx;   /* durations counted in hist, not kept in durs */
	uint32_t exact_max; /* durations kept before switching to hist */
	uint64_t *hist; /* owned: counts of buckets [hlo, hlo + hn) (core/hist.h) */
	uint32_t hlo, hn;
	uint64_t bytes;  /* device groupings: bytes moved (the slices' "bytes" args) */
};

struct frame;

struct agg {
	int group_by;
	bool nested;          /* the current track nests slices by depth */
	int status;
	struct group *groups; /* owned */
	size_t ngroups, cap_groups;
	struct tft_hmap map;   /* owned: group key -> index in groups (zeroed until the first group) */
	uint32_t last_key, last_group; /* one-entry cache in front of the table */
	uint32_t exact_max;   /* for new groups (0: TFT_STATS_EXACT_MAX) */
	struct tft_stats_device *dev; /* owned: the device groupings' state (stats_device.c) */
	struct frame *stack;  /* owned */
	size_t sp, cap_stack;
};

int64_t tft_stats_sat_add(int64_t a, int64_t b);
/* The group of key (created if new); -1 on out-of-memory. */
int64_t tft_stats_group(struct agg *a, uint32_t key);
/* One duration into g's distribution (exact or bucketed). 0 or TFT_ENOMEM. */
int tft_stats_group_dur(struct group *g, int64_t dur);
/* count durations given as a bucket. 0 or TFT_ENOMEM. */
int tft_stats_group_bucket(struct group *g, uint32_t bucket, uint64_t count);
/* Merge every group of src into dst (same group_by). 0 or TFT_ENOMEM. */
int tft_stats_agg_merge(struct agg *dst, const struct agg *src);
void tft_stats_agg_free(struct agg *a);

/*
 * From stored chunk statistics (stats_stored.c): the slices of `track`
 * overlapping [t0, t1] (closed; the whole track with t0 = INT64_MIN and
 * t1 = INT64_MAX), clipped to it with clip, aggregated into a as scanning
 * them would. Returns 0, 1 when the track's statistics are incomplete (a
 * live session's open chunk: the caller scans the events instead; a is
 * unchanged), or a negative status with err set.
 */
/*
 * Device groupings (stats_device.c): by kernel, runtime API call, and the op
 * that launched each kernel. prepare() reads what they need before the scan
 * (the op of each Kineto External id); track() says whether a track takes
 * part; key() gives a slice's group, false if it has none.
 */
struct tft_stats_device;
int tft_stats_device_prepare(struct tft_session *s, struct agg *a, struct tft_error *err);
void tft_stats_device_free(struct agg *a);
bool tft_stats_device_track(const struct agg *a, const struct tft_track *tr);
bool tft_stats_device_key(struct agg *a, const struct tft_event *ev, uint32_t *key);
/* The "bytes" arg of a slice (a copy's size), 0 if none. */
uint64_t tft_stats_event_bytes(const struct agg *a, const struct tft_event *ev);

int tft_stats_stored_track(struct tft_session *s, uint32_t track, int64_t t0, int64_t t1, bool clip,
			   struct agg *a, struct tft_error *err);

#endif /* TFT_ANALYZE_STATS_INT_H */
