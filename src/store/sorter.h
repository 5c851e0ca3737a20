/* SPDX-License-Identifier: MIT */
/*
 * Sorter: accepts events in any order and feeds them to a writer sorted per
 * track, in bounded memory. Events (with copies of their args) accumulate in
 * a buffer of at most `mem_budget` bytes; a full buffer is sorted and
 * spilled as per-track sorted runs into a scratch file; finish() merges the
 * runs. An input that fits the budget is never spilled.
 *
 * Sort key per track: ts_ns ascending, then dur_ns descending (parents
 * before children), then arrival order (stable).
 */
#ifndef TFT_STORE_SORTER_H
#define TFT_STORE_SORTER_H

#include <stddef.h>
#include <stdint.h>

#include "core/model.h"
#include "core/status.h"
#include "store/writer.h"

struct tft_sorter;

/* The sorter's memory budget when none is given. */
#define TFT_SORTER_DEFAULT_BUDGET ((size_t)96 << 20)

/* mem_budget: bytes for buffered events and args (0 = TFT_SORTER_DEFAULT_BUDGET). */
struct tft_sorter *tft_sorter_create(struct tft_writer *w, size_t mem_budget);

/* Buffer one event (args copied). May spill. 0 or a negative status. */
int tft_sorter_push(struct tft_sorter *s, const struct tft_event *ev, struct tft_error *err);

/*
 * Sort, merge and append everything to the writer, adding shift_ns to
 * every timestamp (a clock offset learnt at the end of an input, e.g.
 * Kineto's baseTimeNanoseconds). The sorter is empty afterwards and can be
 * reused.
 */
int tft_sorter_finish(struct tft_sorter *s, int64_t shift_ns, struct tft_error *err);

/* Events pushed since the last finish. */
uint64_t tft_sorter_count(const struct tft_sorter *s);

void tft_sorter_destroy(struct tft_sorter *s);

#endif /* TFT_STORE_SORTER_H */
