/* SPDX-License-Identifier: MIT */
/*
 * TensorFlow timeline.py's first-fit lanes (_assign_lanes): a slice goes to
 * the first lane whose last end is before its start, else to a new lane.
 * The RunMetadata importer (its dataflow lanes) and the tf.timeline export
 * both place slices this way; a min segment tree over the lanes' ends finds
 * the first fitting lane in O(log lanes).
 *
 * Ownership: the caller owns the struct (zeroed to start); tft_lanes_free
 * releases its tree.
 */
#ifndef TFT_CORE_LANES_H
#define TFT_CORE_LANES_H

#include <stddef.h>
#include <stdint.h>

struct tft_lanes {
	int64_t *t; /* owned: 2 * cap entries, leaves (the lanes' ends) at [cap, 2 cap) */
	size_t cap, n;
};

/* Start over with timeline.py's `lanes = [0]`: one lane, ended at 0. 0 or TFT_ENOMEM. */
int tft_lanes_reset(struct tft_lanes *l);
/* The lane of a slice [start, end] in *lane: the first whose end < start, else a new one. 0 or TFT_ENOMEM. */
int tft_lanes_assign(struct tft_lanes *l, int64_t start, int64_t end, uint32_t *lane);
void tft_lanes_free(struct tft_lanes *l);

#endif
