/* SPDX-License-Identifier: MIT */
/*
 * Op statistics over a session's slices: per group (name, category or
 * track) the count, total, self time, mean, min, max and exact p50/p99 of
 * the durations, plus each group's share of the summed total.
 */
#ifndef TFT_ANALYZE_STATS_H
#define TFT_ANALYZE_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/hist.h"
#include "core/status.h"
#include "store/session.h"

enum tft_stats_group {
	TFT_STATS_BY_NAME = 0,
	TFT_STATS_BY_CATEGORY = 1,
	TFT_STATS_BY_TRACK = 2,
	/*
	 * Device work (the seed's trace_analysis statistics): GPU kernels,
	 * copies and sets by name (slices on GPU stream / device queue tracks);
	 * runtime API calls by name (CUDA runtime/driver, HIP, OpenCL: their
	 * categories); kernels by the op that launched them (the kernel's "op"
	 * arg, else the CPU op with its Kineto "External id"; "" if none).
	 */
	TFT_STATS_BY_KERNEL = 3,
	TFT_STATS_BY_API = 4,
	TFT_STATS_BY_OP = 5,
	/*
	 * Per rank of a distributed job: not rows of slices but where each rank's
	 * time goes (compute, communication, waiting, idle) and the straggler:
	 * analyze/ranks.h computes it; tft_stats_compute refuses it (TFT_EINVAL).
	 */
	TFT_STATS_BY_RANK = 6,
};

struct tft_stats_opts {
	int group_by;        /* enum tft_stats_group */
	uint32_t track;      /* only this track id; TFT_NONE = every track */
	const char *process; /* borrowed; only tracks of processes with this name
			      * (or this decimal pid); NULL = every process */
	/*
	 * Area selections (the web UI's, through /api/stats). Zero-initialised
	 * fields leave the whole-session statistics above unchanged.
	 */
	const uint32_t *tracks; /* borrowed; ntracks > 0: only these track ids
				 * (replaces `track`) */
	size_t ntracks;
	bool window;            /* only slices overlapping [t0, t1] (closed) */
	int64_t t0, t1;
	bool clip;              /* with window: clip durations and self times to
				 * [t0, t1] (Perfetto's area selection) */
	/*
	 * Also the derived tracks (TFT_TRACKF_DERIVED: /stream:all, GPU
	 * annotations ...), which repeat work counted on other tracks. Without
	 * it they count only when named (track, tracks); otherwise they are left
	 * out so that one execution is counted once (derived_tracks says how many).
	 */
	bool derived;
	/*
	 * Scan every event even where stored chunk statistics would answer
	 * (a selection of more than TFT_STATS_STORED_MIN_DEFAULT slices): exact
	 * percentiles whatever the size, at the cost of decoding it all.
	 */
	bool exact;
};

/* Selections of more slices merge the stored chunk statistics (store/chunk_stats.h). */
#define TFT_STATS_STORED_MIN_DEFAULT 262144u

/*
 * One group. Durations are those stored in the session (an unclosed slice
 * counts with its stored duration), or their part inside the window with
 * clip. Self time of a slice = its duration minus the time of its direct
 * children (the slices nested in it one level deeper on the same track,
 * each clipped to it; they never overlap but at the writer's depth cap,
 * where each still counts); on async, object and concurrent tracks, where
 * depth is a lane and not nesting (tft_track_nests()), self = duration.
 * Percentiles are nearest-rank: p-th = the ceil(p/100 * count)-th smallest
 * duration of the group; exact (row.exact) while the group's durations are
 * kept one by one (up to TFT_STATS_EXACT_MAX of them, or from stored
 * statistics those of at most 16 slices per chunk), else read from log-linear
 * buckets within TFT_STATS_PERCENTILE_ERROR (relative) of the exact value.
 */
struct tft_stats_row {
	uint32_t key;      /* name/category string id, or track id */
	const char *name;  /* borrowed from the session: name, category, or track name */
	size_t name_len;   /* its bytes (a name may hold a NUL) */
	uint32_t track_id; /* the track (TFT_STATS_BY_TRACK), else TFT_NONE */
	uint64_t count;
	int64_t total_ns, self_ns;
	double mean_ns;    /* total_ns / count */
	int64_t min_ns, max_ns, p50_ns, p99_ns;
	double share;      /* percent of the sum of total_ns over all rows */
	bool exact;        /* p50/p99 exact; else within TFT_STATS_PERCENTILE_ERROR */
	uint64_t bytes;    /* device groupings: bytes moved by the group's slices (0: none said) */
};

/* Relative error of a percentile that is not exact (core/hist.h's bucket midpoints). */
#define TFT_STATS_PERCENTILE_ERROR TFT_HIST_REL_ERROR

struct tft_stats_result {
	struct tft_stats_row *rows; /* owned; sorted by total_ns desc, then name */
	size_t nrows;
	uint64_t slices;   /* slices aggregated (sum of count) */
	int64_t total_ns;  /* sum of total_ns over rows */
	uint32_t tracks;   /* tracks scanned */
	uint32_t derived_tracks; /* derived tracks left out (see tft_stats_opts.derived) */
	uint32_t stored_tracks;  /* tracks aggregated from stored chunk statistics */
	size_t approx_groups;    /* rows whose percentiles are not exact */
};

/*
 * Aggregate the session's slices (not instants, counter samples or
 * level-of-detail summaries). On success *out is a new result to free with
 * tft_stats_destroy(). Returns 0, TFT_EINVAL (bad group_by, unknown track),
 * TFT_ENOMEM, or what the session scan returns. A selection of more than
 * TFT_STATS_STORED_MIN_DEFAULT slices merges the statistics stored with each
 * chunk and decodes only the chunks across a window's edges (the same
 * numbers, percentiles within the stated error); a smaller one scans every
 * event. Memory: at most TFT_STATS_EXACT_MAX durations per group, then its
 * buckets, plus a per-group and per-depth table; no per-slice malloc.
 *
 * With a window (or several tracks) only the slices overlapping [t0, t1]
 * count (a slice ending at t0 or starting at t1 included). Without clip
 * they count whole: their full duration, and self time subtracts their
 * children wherever those lie. With clip every number is about the time
 * inside the window: a slice's duration is its part inside [t0, t1] (0 for
 * one that only touches it), its self time that part minus the union of
 * its direct children's parts (each clipped to it) inside the window;
 * count, mean, min, max and percentiles use the clipped durations.
 */
int tft_stats_compute(struct tft_session *s, const struct tft_stats_opts *opts,
		      struct tft_stats_result **out, struct tft_error *err);

void tft_stats_destroy(struct tft_stats_result *r);

/* Nearest-rank percentile of v[0..n) (n > 0); reorders v. p in [0, 100]. */
int64_t tft_stats_percentile(int64_t *v, size_t n, unsigned p);

/*
 * A duration for people: "850 ns", "12.345 µs", "12.345 ms", "1.234 s"
 * (three decimals, µs as UTF-8). Returns out (always NUL-terminated).
 */
const char *tft_stats_format_ns(char *out, size_t size, int64_t ns);

/* Group name for --by: "name", "category", "track", "kernel", "api", "op", "rank"; -1 if unknown. */
int tft_stats_group_parse(const char *s);

/*
 * Process pid of s is one `want` names: its name, its pid in decimal, "#ID"
 * (the session's process id, unique where names and pids repeat across
 * workers), "host=HOST" or "rank=N".
 */
bool tft_stats_process_matches(const struct tft_session *s, uint32_t pid, const char *want);

#endif /* TFT_ANALYZE_STATS_H */
