/* SPDX-License-Identifier: MIT */
/*
 * Level-of-detail builder: merges a track's events, per depth, into summary
 * blocks at 13 levels of merge gap G_k = 1 us * 4^(k-1), cascading each closed
 * block of level k into level k+1. A slice lasting >= G_k is never merged at
 * level k (it is at least a pixel wide there): it closes the open block and
 * is emitted as a 1-event block. Memory: one open block per depth and level.
 */
#ifndef TFT_STORE_LOD_H
#define TFT_STORE_LOD_H

#include <stdint.h>

#include "core/model.h"
#include "core/status.h"

#define TFT_LOD_LEVELS 13 /* levels 1..13: gaps 1 us .. 4^12 us (16.8 s) */

/* Merge gap of level k (k >= 1); 0 for level 0 (raw events). */
static inline int64_t tft_lod_gap_ns(int level)
{
	return level <= 0 ? 0 : (int64_t)1000 << (2 * (level - 1));
}

struct tft_lod_block {
	int64_t start_ns, end_ns;
	int64_t busy_ns;    /* sum of merged slice durations (saturating) */
	int64_t longest_ns; /* duration of the longest merged slice */
	double vmax;        /* counters: largest sample */
	uint64_t count;     /* events merged */
	uint32_t name, cat; /* of the longest slice (counters: first sample) */
	uint8_t is_counter;
	uint8_t has_slice;
};

/* One depth's blocks. */
struct tft_lod_row {
	uint32_t open; /* bit k: level k has an open block, blk[k - 1] */
	struct tft_lod_block blk[TFT_LOD_LEVELS];
};

/* Receives each closed block as a summary event (flag TFT_EVF_SUMMARY). */
typedef int (*tft_lod_emit_fn)(void *ctx, int level, const struct tft_event *ev);

struct tft_lod {
	struct tft_lod_row *row; /* owned: [depth] */
	uint32_t cap_depth;
	uint32_t track;
	/*
	 * Quiet levels (bit k for level k, set by the caller between calls):
	 * their closed blocks are counted in count[k] instead of emitted (a
	 * caller that only needs to know how many there are saves the call and
	 * the summary event). Blocks still cascade into coarser levels, so the
	 * output of the other levels does not change. count (borrowed,
	 * TFT_LOD_LEVELS + 1 entries) may be NULL while quiet is 0.
	 */
	uint32_t quiet;
	uint64_t *count;
};

void tft_lod_init(struct tft_lod *l, uint32_t track);
void tft_lod_fini(struct tft_lod *l);

/*
 * tft_lod_add runs once per event: its common cases are inline (below), the
 * others out of line in lod.c.
 */
int tft_lod_grow(struct tft_lod *l, uint32_t depth);
int tft_lod_add_item(struct tft_lod *l, int k, const struct tft_event *ev, tft_lod_emit_fn emit,
		     void *ctx);
int tft_lod_long_slice(struct tft_lod *l, int m, const struct tft_event *ev, tft_lod_emit_fn emit,
		       void *ctx);

static inline int64_t tft_lod_sat_add(int64_t a, int64_t b)
{
	int64_t r;

	return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}

/*
 * Raw event ev merges into the open block of level k, where it is not long
 * (`counter` and `slice` say its kind)? As joins() and merge() in lod.c with
 * the event's block, which is not built in memory.
 */
static inline int tft_lod_merge_event(struct tft_lod_row *row, int k, const struct tft_event *ev,
				      int counter, int slice)
{
	struct tft_lod_block *b = &row->blk[k - 1];
	int64_t end = counter ? ev->ts_ns : ev->ts_ns + ev->dur_ns;
	int64_t ref = b->is_counter ? b->start_ns : b->end_ns;
	int64_t d;
	uint64_t count = ev->count ? ev->count : 1;

	if (!(row->open & (1u << k)) || b->is_counter != counter)
		return 0;
	if (ev->ts_ns > ref &&
	    (__builtin_sub_overflow(ev->ts_ns, ref, &d) || d >= tft_lod_gap_ns(k)))
		return 0;
	if (end > b->end_ns)
		b->end_ns = end;
	if (slice)
		b->busy_ns = tft_lod_sat_add(b->busy_ns, ev->dur_ns);
	if (__builtin_add_overflow(b->count, count, &b->count))
		b->count = UINT64_MAX;
	if (!counter && ev->dur_ns > b->longest_ns) {
		b->longest_ns = ev->dur_ns;
		b->name = ev->name;
		b->cat = ev->cat;
	}
	if (ev->value > b->vmax)
		b->vmax = ev->value;
	b->has_slice |= slice;
	return 1;
}

/*
 * Feed one event (depth already assigned; events of one depth in start
 * order). Slices shorter than the gap and instants merge when the next one
 * starts less than the gap after the block's end; a slice at least as long
 * as the gap stands alone (count 1); counter samples merge while they fall
 * within the gap after the block's first sample (value = the bucket's maximum).
 * Returns 0, TFT_ENOMEM or what `emit` returned. Always inline: in the
 * writer's per-event path it saves a call that costs as much as merging.
 */
static inline __attribute__((always_inline)) int
tft_lod_add(struct tft_lod *l, const struct tft_event *ev, tft_lod_emit_fn emit, void *ctx)
{
	uint32_t depth = ev->depth;
	struct tft_lod_row *row;
	int rc;

	if (tft_unlikely(depth >= l->cap_depth) && (rc = tft_lod_grow(l, depth)))
		return rc;
	row = &l->row[depth];
	if (ev->kind == TFT_EV_SLICE && ev->dur_ns >= tft_lod_gap_ns(1)) {
		uint64_t q = (uint64_t)ev->dur_ns / (uint64_t)tft_lod_gap_ns(1); /* >= 1 */
		int m = (63 - __builtin_clzll(q)) / 2 + 1; /* gap_k = 1 us * 4^(k-1) <= dur */
		uint32_t span;

		if (m > TFT_LOD_LEVELS)
			m = TFT_LOD_LEVELS;
		span = (2u << m) - 2u; /* levels 1..m: bits 1..m */
		if (tft_unlikely((row->open & span) || (~l->quiet & span)))
			return tft_lod_long_slice(l, m, ev, emit, ctx);
		/* Nothing to close, and only counted there (a bulk import's usual case). */
		for (int k = 1; k <= m; k++)
			l->count[k]++;
		if (m == TFT_LOD_LEVELS)
			return 0;
		if (tft_lod_merge_event(row, m + 1, ev, 0, 1))
			return 0;
		return tft_lod_add_item(l, m + 1, ev, emit, ctx);
	}
	if (tft_lod_merge_event(row, 1, ev, ev->kind == TFT_EV_COUNTER, ev->kind == TFT_EV_SLICE))
		return 0;
	return tft_lod_add_item(l, 1, ev, emit, ctx);
}

/* Close every open block, coarsest last (at the end of a track). */
int tft_lod_flush(struct tft_lod *l, tft_lod_emit_fn emit, void *ctx);

#endif /* TFT_STORE_LOD_H */
