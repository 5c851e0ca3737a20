/* SPDX-License-Identifier: MIT */
/*
 * Level-of-detail builder: per depth, one open block per level; a block that
 * closes at level k is emitted and becomes an input item of level k + 1. A
 * slice at least as long as a level's gap passes through that level unmerged.
 *
 * This runs once per event, and most events end at their first level (they
 * merge, or open a block) or are long slices that pass through the levels
 * 1..m whose gap is <= their duration. So: a long slice's levels are found
 * from its duration; where none of them has an open block and all are quiet
 * (the usual case of a bulk import) it is only counted there, else its
 * summary event is built once for all of them (tft_lod_long_slice); an event
 * that merges into the open block of its first level does so without a block
 * of its own (tft_lod_add and tft_lod_merge_event, inline in lod.h); a
 * closing chain is a loop, not a recursion, that moves each closed block up
 * one level (close_up). Blocks are emitted in the order of the recursive
 * formulation. Blocks of quiet levels are only counted: no summary event, no
 * call.
 */
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "core/status.h"
#include "store/lod.h"
#include "tftracer/tftracer.h"

void tft_lod_init(struct tft_lod *l, uint32_t track)
{
	memset(l, 0, sizeof(*l));
	l->track = track;
}

void tft_lod_fini(struct tft_lod *l)
{
	free(l->row);
	memset(l, 0, sizeof(*l));
}

/* Room for rows 0..depth (depth >= cap_depth). */
int tft_lod_grow(struct tft_lod *l, uint32_t depth)
{
	return tft_grow_ex((void **)&l->row, &l->cap_depth, (uint64_t)depth + 1, sizeof(*l->row), 4, 1);
}


/* The item a raw event is at a level where it is not long. */
static inline void event_block(const struct tft_event *ev, struct tft_lod_block *it)
{
	int counter = ev->kind == TFT_EV_COUNTER, slice = ev->kind == TFT_EV_SLICE;

	*it = (struct tft_lod_block){
		.start_ns = ev->ts_ns,
		/* Counter buckets are point samples: a bucket's extent is first..last sample. */
		.end_ns = counter ? ev->ts_ns : ev->ts_ns + ev->dur_ns,
		.busy_ns = slice ? ev->dur_ns : 0,
		.longest_ns = counter ? 0 : ev->dur_ns,
		.vmax = ev->value,
		.count = ev->count ? ev->count : 1,
		.name = ev->name,
		.cat = ev->cat,
		.is_counter = counter,
		.has_slice = slice,
	};
}

/* Does `it` join block b at a level with merge gap `gap`? */
static inline int joins(const struct tft_lod_block *b, const struct tft_lod_block *it, int64_t gap)
{
	int64_t ref = b->is_counter ? b->start_ns : b->end_ns;
	int64_t d;

	if (b->is_counter != it->is_counter)
		return 0;
	if (it->start_ns <= ref)
		return 1;
	if (__builtin_sub_overflow(it->start_ns, ref, &d))
		return 0;
	return d < gap;
}

static inline void merge(struct tft_lod_block *b, const struct tft_lod_block *it)
{
	if (it->end_ns > b->end_ns)
		b->end_ns = it->end_ns;
	b->busy_ns = tft_lod_sat_add(b->busy_ns, it->busy_ns);
	if (__builtin_add_overflow(b->count, it->count, &b->count))
		b->count = UINT64_MAX;
	if (!b->is_counter && it->longest_ns > b->longest_ns) {
		b->longest_ns = it->longest_ns;
		b->name = it->name;
		b->cat = it->cat;
	}
	if (it->vmax > b->vmax)
		b->vmax = it->vmax;
	b->has_slice |= it->has_slice;
}

/* The summary event of block b (at `depth`). */
static inline void block_event(const struct tft_lod *l, uint32_t depth,
			       const struct tft_lod_block *b, struct tft_event *ev)
{
	int64_t dur;

	/* A block of events with huge durations may span more than INT64_MAX ns: saturate. */
	if (__builtin_sub_overflow(b->end_ns, b->start_ns, &dur))
		dur = INT64_MAX;
	*ev = (struct tft_event){
		.ts_ns = b->start_ns,
		.dur_ns = dur,
		.value = b->is_counter ? b->vmax : (double)b->busy_ns,
		.track = l->track,
		.name = b->name,
		.cat = b->cat,
		.depth = depth,
		.count = b->count > UINT32_MAX ? UINT32_MAX : (uint32_t)b->count,
		.kind = b->is_counter ? TFT_EV_COUNTER : b->has_slice ? TFT_EV_SLICE : TFT_EV_INSTANT,
		.flags = TFT_EVF_SUMMARY,
	};
}

/* Block b closed at `level`: emitted, or counted at a quiet level. */
static inline int emit_block(struct tft_lod *l, int level, uint32_t depth,
			     const struct tft_lod_block *b, tft_lod_emit_fn emit, void *ctx)
{
	struct tft_event ev;

	if (l->quiet & (1u << level)) {
		l->count[level]++;
		return 0;
	}
	block_event(l, depth, b, &ev);
	return emit(ctx, level, &ev);
}

/*
 * The open block of level k at `depth` does not take the item offered (a
 * closed block, or an item shorter than level k's gap): it closes, and is
 * emitted and offered to level k + 1, where it merges into the open block or
 * opens one, or closes that block in the same way. Each closed level thus
 * takes the block of the level below: when the chain stops at level j, the
 * blocks of levels k..j-2 move up one level, and level k is left to the
 * caller to fill with its item. The levels the chain passes were open and
 * stay so. On an emit error the level that failed is replaced all the same,
 * as the recursive version did.
 */
static int close_up(struct tft_lod *l, int k, uint32_t depth, tft_lod_emit_fn emit, void *ctx)
{
	struct tft_lod_row *row = &l->row[depth];
	struct tft_lod_block *blk = row->blk;
	const struct tft_lod_block *c;
	int j = k, rc;

	for (;;) {
		struct tft_lod_block *b = &blk[j - 1];

		/* b closes: emitted here, then offered to level j + 1 */
		if ((rc = emit_block(l, j, depth, b, emit, ctx))) {
			j++; /* b is replaced all the same */
			break;
		}
		c = b;
		if (++j > TFT_LOD_LEVELS)
			break;
		b = &blk[j - 1];
		if (!(row->open & (1u << j))) {
			*b = *c;
			row->open |= 1u << j;
			break;
		}
		if (joins(b, c, tft_lod_gap_ns(j))) {
			merge(b, c);
			break;
		}
	}
	for (int i = j - 2; i >= k; i--) /* usually 0..2 blocks: no memmove call */
		blk[i] = blk[i - 1];
	return rc;
}

/*
 * Offer `it` to level k: it merges, opens a block or closes the open one (it
 * must not point into this depth's levels >= k).
 */
static int offer(struct tft_lod *l, int k, uint32_t depth, const struct tft_lod_block *it,
		 tft_lod_emit_fn emit, void *ctx)
{
	struct tft_lod_row *row = &l->row[depth];
	struct tft_lod_block *b = &row->blk[k - 1];
	int rc;

	if (!(row->open & (1u << k))) {
		*b = *it;
		row->open |= 1u << k;
		return 0;
	}
	if (joins(b, it, tft_lod_gap_ns(k))) {
		merge(b, it);
		return 0;
	}
	rc = close_up(l, k, depth, emit, ctx);
	*b = *it;
	return rc;
}

/*
 * Raw event ev at level k, where it is not long, that the open block (if
 * any) does not take: it opens a block, or closes the open one.
 */
int tft_lod_add_item(struct tft_lod *l, int k, const struct tft_event *ev, tft_lod_emit_fn emit,
		     void *ctx)
{
	struct tft_lod_row *row = &l->row[ev->depth];
	int rc = 0;

	if (!(row->open & (1u << k)))
		row->open |= 1u << k;
	else
		rc = close_up(l, k, ev->depth, emit, ctx);
	event_block(ev, &row->blk[k - 1]);
	return rc;
}

/*
 * A long slice at levels 1..m (the gaps <= its duration) where some block
 * is open or some level is not quiet: at each, it closes the open block and
 * stands alone. Its summary event is the same at each of these levels:
 * built once. Then it is offered to level m + 1.
 */
int tft_lod_long_slice(struct tft_lod *l, int m, const struct tft_event *ev, tft_lod_emit_fn emit,
		       void *ctx)
{
	uint32_t depth = ev->depth;
	struct tft_lod_row *row = &l->row[depth];
	struct tft_lod_block it;
	struct tft_event sev;
	uint32_t quiet = l->quiet;
	int rc;

	/* levels 1..m: bits 1..m */
	if (~quiet & ((2u << m) - 2u)) {
		event_block(ev, &it);
		block_event(l, depth, &it, &sev);
	}
	for (int k = 1; k <= m; k++) {
		if (row->open & (1u << k)) {
			struct tft_lod_block *b = &row->blk[k - 1];

			row->open &= ~(1u << k);
			if ((rc = emit_block(l, k, depth, b, emit, ctx)) ||
			    (k < TFT_LOD_LEVELS && (rc = offer(l, k + 1, depth, b, emit, ctx))))
				return rc;
		}
		if (quiet & (1u << k))
			l->count[k]++;
		else if ((rc = emit(ctx, k, &sev)))
			return rc;
	}
	if (m == TFT_LOD_LEVELS || tft_lod_merge_event(row, m + 1, ev, 0, 1))
		return 0;
	return tft_lod_add_item(l, m + 1, ev, emit, ctx);
}

int tft_lod_flush(struct tft_lod *l, tft_lod_emit_fn emit, void *ctx)
{
	for (int k = 1; k <= TFT_LOD_LEVELS; k++) {
		for (uint32_t d = 0; d < l->cap_depth; d++) {
			struct tft_lod_row *row = &l->row[d];
			struct tft_lod_block *b = &row->blk[k - 1];
			int rc;

			if (!(row->open & (1u << k)))
				continue;
			row->open &= ~(1u << k);
			rc = emit_block(l, k, d, b, emit, ctx);
			if (!rc && k < TFT_LOD_LEVELS)
				rc = offer(l, k + 1, d, b, emit, ctx);
			if (rc)
				return rc;
		}
	}
	return 0;
}
