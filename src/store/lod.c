/* SPDX-License-Identifier: MIT */
/*
 * Level-of-detail builder: per depth, one open block per level; a block that
 * closes at level k is emitted and becomes an input item of level k + 1. A
 * slice at least as long as a level's gap passes through that level unmerged.
 *
 * This runs once per event, and most events end at their first level (they
 * merge, or open a block) or are long slices that pass through the levels
 * 1..m whose gap is <= their duration. So: a long slice's levels are found
 * from its duration and its summary event is built once for all of them
 * (tft_lod_add); a closing chain is a loop, not a recursion, that moves each
 * closed block up one level (cascade); the merge/open outcome is inline
 * (offer). Blocks are emitted in the order of the recursive formulation.
 * Blocks of quiet levels are only counted: no summary event, no call.
 */
#include <stdlib.h>
#include <string.h>

#include "store/lod.h"
#include "tftracer/tftracer.h"

void tft_lod_init(struct tft_lod *l, uint32_t track)
{
	memset(l, 0, sizeof(*l));
	l->track = track;
}

void tft_lod_fini(struct tft_lod *l)
{
	free(l->blk);
	memset(l, 0, sizeof(*l));
}

static int ensure_depth(struct tft_lod *l, uint32_t depth)
{
	uint32_t ncap;
	void *nb;

	if (depth < l->cap_depth)
		return 0;
	ncap = l->cap_depth ? l->cap_depth : 4;
	while (ncap <= depth)
		ncap *= 2;
	nb = realloc(l->blk, (size_t)ncap * sizeof(*l->blk));
	if (!nb)
		return TFT_ENOMEM;
	l->blk = nb;
	memset(&l->blk[l->cap_depth], 0, (size_t)(ncap - l->cap_depth) * sizeof(*l->blk));
	l->cap_depth = ncap;
	return 0;
}

static inline int64_t sat_add(int64_t a, int64_t b)
{
	int64_t r;

	return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
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
	b->busy_ns = sat_add(b->busy_ns, it->busy_ns);
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
	b->single = 0;
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
 * Offer `it`, which is not long at level k or above (a closed block, or an
 * item shorter than level k's gap), to level k at `depth`. It merges into the
 * open block or opens one; otherwise it replaces the open block, which is
 * emitted and offered to level k + 1 in the same way. Each closed level thus
 * takes the block of the level below: when the chain stops at level j, the
 * blocks of levels k..j-2 move up one level and level k takes `it` (which
 * must not point into this depth's levels >= k). On an emit error the level
 * that failed is replaced all the same, as the recursive version did.
 */
static int cascade(struct tft_lod *l, int k, uint32_t depth, const struct tft_lod_block *it,
		   tft_lod_emit_fn emit, void *ctx)
{
	struct tft_lod_block *row = l->blk[depth];
	const struct tft_lod_block *c = it;
	int j, rc = 0;

	for (j = k; j <= TFT_LOD_LEVELS; j++) {
		struct tft_lod_block *b = &row[j - 1];

		if (!b->open) {
			*b = *c;
			b->open = 1;
			break;
		}
		if (joins(b, c, tft_lod_gap_ns(j))) {
			merge(b, c);
			break;
		}
		/* b closes: emitted here, then offered to level j + 1 */
		if ((rc = emit_block(l, j, depth, b, emit, ctx))) {
			j++; /* b is replaced all the same */
			break;
		}
		c = b;
	}
	if (j > k) {
		for (int i = j - 2; i >= k; i--) /* usually 0..2 blocks: no memmove call */
			row[i] = row[i - 1];
		row[k - 1] = *it;
		row[k - 1].open = 1;
	}
	return rc;
}

/* cascade(), with the common outcomes at level k (merge, open) inline. */
static inline int offer(struct tft_lod *l, int k, uint32_t depth, const struct tft_lod_block *it,
			tft_lod_emit_fn emit, void *ctx)
{
	struct tft_lod_block *b = &l->blk[depth][k - 1];

	if (!b->open) {
		*b = *it;
		b->open = 1;
		return 0;
	}
	if (joins(b, it, tft_lod_gap_ns(k))) {
		merge(b, it);
		return 0;
	}
	return cascade(l, k, depth, it, emit, ctx);
}

int tft_lod_add(struct tft_lod *l, const struct tft_event *ev, tft_lod_emit_fn emit, void *ctx)
{
	struct tft_lod_block it = {
		.start_ns = ev->ts_ns,
		.end_ns = ev->ts_ns + ev->dur_ns,
		.busy_ns = ev->kind == TFT_EV_SLICE ? ev->dur_ns : 0,
		.longest_ns = ev->kind == TFT_EV_COUNTER ? 0 : ev->dur_ns,
		.vmax = ev->value,
		.count = ev->count ? ev->count : 1,
		.name = ev->name,
		.cat = ev->cat,
		.is_counter = ev->kind == TFT_EV_COUNTER,
		.has_slice = ev->kind == TFT_EV_SLICE,
		.single = ev->kind == TFT_EV_SLICE,
	};
	uint32_t depth = ev->depth;
	int k = 1, rc = ensure_depth(l, depth);

	if (rc)
		return rc;
	/* Counter buckets are point samples: a bucket's extent is first..last sample. */
	if (it.is_counter)
		it.end_ns = it.start_ns;
	if (it.single && ev->dur_ns >= tft_lod_gap_ns(1)) {
		/*
		 * A long slice: at levels 1..m (the gaps <= its duration) it
		 * closes the open block and stands alone. Its summary event is
		 * the same at each of these levels: built once.
		 */
		uint64_t q = (uint64_t)ev->dur_ns / (uint64_t)tft_lod_gap_ns(1); /* >= 1 */
		int m = (63 - __builtin_clzll(q)) / 2 + 1; /* gap_k = 1 us * 4^(k-1) <= dur */
		struct tft_lod_block *row = l->blk[depth];
		struct tft_event sev;
		uint32_t quiet = l->quiet;

		if (m > TFT_LOD_LEVELS)
			m = TFT_LOD_LEVELS;
		/* levels 1..m: bits 1..m */
		if (~quiet & ((2u << m) - 2u))
			block_event(l, depth, &it, &sev);
		for (; k <= m; k++) {
			struct tft_lod_block *b = &row[k - 1];

			if (b->open) {
				b->open = 0;
				if ((rc = emit_block(l, k, depth, b, emit, ctx)) ||
				    (rc = cascade(l, k + 1, depth, b, emit, ctx)))
					return rc;
			}
			if (quiet & (1u << k))
				l->count[k]++;
			else if ((rc = emit(ctx, k, &sev)))
				return rc;
		}
		if (k > TFT_LOD_LEVELS)
			return 0;
	}
	return offer(l, k, depth, &it, emit, ctx);
}

int tft_lod_flush(struct tft_lod *l, tft_lod_emit_fn emit, void *ctx)
{
	for (int k = 1; k <= TFT_LOD_LEVELS; k++) {
		for (uint32_t d = 0; d < l->cap_depth; d++) {
			struct tft_lod_block *b = &l->blk[d][k - 1];
			int rc;

			if (!b->open)
				continue;
			b->open = 0;
			rc = emit_block(l, k, d, b, emit, ctx);
			if (!rc && k < TFT_LOD_LEVELS)
				rc = cascade(l, k + 1, d, b, emit, ctx);
			if (rc)
				return rc;
		}
	}
	return 0;
}
