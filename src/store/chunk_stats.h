/* SPDX-License-Identifier: MIT */
/*
 * Per-chunk statistics: what the statistics of a raw (level-0) chunk's
 * slices need, stored with the chunk (table chunk_stats, docs/file-format.md)
 * so that a session's statistics merge these summaries instead of decoding
 * every event (analyze/stats.c).
 *
 * For each (name, category) of the chunk's slices: count, total and self
 * time, min and max duration, and the durations themselves (up to
 * TFT_CSTATS_RAW_MAX, sorted) or their log-linear histogram (core/hist.h).
 * Per depth: the summed durations of the chunk's slices at that depth,
 * each clipped to its parent (what a parent's self time subtracts), so that
 * a range can take a span of chunks' children without decoding them. The
 * first and last event start of the chunk bound which parents it can serve.
 *
 * Self time = duration minus the durations of the slices nested directly in
 * it, each clipped to it (on a call-stack track; elsewhere self = duration);
 * a slice's self is known when it closes, which may be chunks later: the
 * writer keeps a chunk's accumulator until its last slice has closed.
 */
#ifndef TFT_STORE_CHUNK_STATS_H
#define TFT_STORE_CHUNK_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "core/hmap.h"
#include "core/model.h"
#include "core/status.h"

/* Durations kept as they are for a (name, category) with at most this many
 * slices in a chunk / in a track's sum (exact percentiles for rare names). */
#define TFT_CSTATS_RAW_MAX 16u
#define TFT_CSTATS_SUM_RAW_MAX 256u
#define TFT_CSTATS_VERSION 1u

/* ---- the writer's accumulator ---------------------------------------------------- */

struct tft_cstats_acc_entry {
	uint32_t name, cat;
	uint32_t count;
	int64_t total, self, min, max;
};

struct tft_cstats_acc {
	int64_t first_ts, last_ts; /* first and last event start (INT64_MAX / MIN: none) */
	uint32_t nevents;          /* events of the chunk (slices, instants) */
	struct tft_cstats_acc_entry *e; /* owned */
	uint32_t ne, cap_e;
	struct tft_hmap ix;         /* owned: (name, cat) -> index into e */
	struct tft_cstats_val { uint32_t entry; int64_t dur; } *v; /* owned: one per slice */
	uint32_t nv, cap_v;
	int64_t *depth_sum;        /* owned: [depth] durations clipped to their parents */
	uint32_t ndepth, cap_depth;
	uint32_t open;             /* slices still open (their self unknown) */
	int64_t chunk;             /* the chunk's row id once written, else -1 */
	struct tft_cstats_acc *next; /* writer's list of accumulators waiting for open slices */
};

void tft_cstats_acc_init(struct tft_cstats_acc *a);
void tft_cstats_acc_reset(struct tft_cstats_acc *a); /* empty, memory kept */
void tft_cstats_acc_fini(struct tft_cstats_acc *a);
/* Bytes of memory it holds (for the writer's open-chunk budget). */
size_t tft_cstats_acc_bytes(const struct tft_cstats_acc *a);

/* An event of the chunk (any kind): extends first/last start and the count. */
static inline void tft_cstats_acc_event(struct tft_cstats_acc *a, int64_t ts)
{
	if (a->nevents++ == 0)
		a->first_ts = ts;
	a->last_ts = ts;
}

/*
 * A slice of the chunk at `depth`, `clipped` = its duration clipped to its
 * parent (its duration at depth 0 or on a track without nesting). Its self
 * time is added later with tft_cstats_acc_self() (call-stack tracks) or now
 * (self >= 0). Returns its entry index, or -1 on out-of-memory.
 */
int64_t tft_cstats_acc_slice(struct tft_cstats_acc *a, const struct tft_event *ev, uint32_t depth,
			     int64_t clipped, int64_t self);

static inline void tft_cstats_acc_self(struct tft_cstats_acc *a, uint32_t entry, int64_t self)
{
	a->e[entry].self += self;
}

/* The blob stored for the chunk (not compressed) into *out / *len (realloc'd). */
int tft_cstats_acc_encode(const struct tft_cstats_acc *a, uint8_t **out, size_t *cap, size_t *len);

/*
 * A track's statistics: its chunks' accumulators merged as each completes
 * (the same blob format, without depth sums), so that the statistics of a
 * whole track read one blob instead of one per chunk.
 */
struct tft_cstats_sum;
struct tft_cstats_sum *tft_cstats_sum_new(void);
void tft_cstats_sum_free(struct tft_cstats_sum *s);
/* Merge a complete accumulator (every slice's self known). 0 or TFT_ENOMEM. */
int tft_cstats_sum_add(struct tft_cstats_sum *s, const struct tft_cstats_acc *a);
/* Bytes held. */
size_t tft_cstats_sum_bytes(const struct tft_cstats_sum *s);
int tft_cstats_sum_encode(const struct tft_cstats_sum *s, uint8_t **out, size_t *cap, size_t *len);

/* ---- reading ----------------------------------------------------------------------- */

struct tft_cstats_entry {
	uint32_t name, cat;
	uint64_t count;
	int64_t total, self, min, max;
	uint32_t nraw;              /* the durations as they are: raw[first..first+nraw) sorted (= count) */
	uint32_t first;             /* raw: index into tft_cstats.raw; else into bucket/bcount */
	uint32_t nbucket;           /* histogram buckets (sorted) when nraw == 0 */
};

struct tft_cstats {
	int64_t first_ts, last_ts;
	uint32_t nevents;
	struct tft_cstats_entry *e; /* owned */
	uint32_t ne;
	int64_t *raw;               /* owned */
	uint32_t *bucket;           /* owned */
	uint64_t *bcount;           /* owned */
	int64_t *depth_sum;         /* owned */
	uint32_t ndepth;
};

/*
 * Decode a blob; nstr bounds the string ids. 0, TFT_EFORMAT (err says
 * what is wrong) or TFT_ENOMEM. Free with tft_cstats_fini() either way.
 */
int tft_cstats_decode(struct tft_cstats *c, const uint8_t *p, size_t len, uint32_t nstr,
		      struct tft_error *err);
void tft_cstats_fini(struct tft_cstats *c);
/*
 * The blob of a decoded (and maybe edited) tft_cstats into *out / *len
 * (realloc'd): tft_cstats_decode gives c back. A reader that renumbers
 * strings or moves times (a job's ranks seen as one session, job/job.c)
 * decodes, edits the entries' name and cat and first_ts / last_ts, and
 * encodes. 0 or TFT_ENOMEM.
 */
int tft_cstats_encode(const struct tft_cstats *c, uint8_t **out, size_t *cap, size_t *len);

#endif /* TFT_STORE_CHUNK_STATS_H */
