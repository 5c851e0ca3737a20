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
 * Feed one event (depth already assigned; events of one depth in start
 * order). Slices shorter than the gap and instants merge when the next one
 * starts less than the gap after the block's end; a slice at least as long
 * as the gap stands alone (count 1); counter samples merge while they fall
 * within the gap after the block's first sample (value = the bucket's maximum).
 * Returns 0, TFT_ENOMEM or what `emit` returned.
 */
int tft_lod_add(struct tft_lod *l, const struct tft_event *ev, tft_lod_emit_fn emit, void *ctx);

/* Close every open block, coarsest last (at the end of a track). */
int tft_lod_flush(struct tft_lod *l, tft_lod_emit_fn emit, void *ctx);

#endif /* TFT_STORE_LOD_H */
