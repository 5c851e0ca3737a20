/* SPDX-License-Identifier: MIT */
/*
 * Level-of-detail builder: per depth, one open block per level; a block that
 * closes at level k is emitted and becomes an input item of level k + 1. A
 * slice at least as long as a level's gap passes through that level unmerged.
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
	b->count = b->count + it->count < b->count ? UINT64_MAX : b->count + it->count;
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

static int emit_block(struct tft_lod *l, int level, uint32_t depth, const struct tft_lod_block *b,
		      tft_lod_emit_fn emit, void *ctx)
{
	struct tft_event ev = {
		.ts_ns = b->start_ns,
		.dur_ns = b->end_ns - b->start_ns,
		.value = b->is_counter ? b->vmax : (double)b->busy_ns,
		.track = l->track,
		.name = b->name,
		.cat = b->cat,
		.depth = depth,
		.count = b->count > UINT32_MAX ? UINT32_MAX : (uint32_t)b->count,
		.kind = b->is_counter ? TFT_EV_COUNTER : b->has_slice ? TFT_EV_SLICE : TFT_EV_INSTANT,
		.flags = TFT_EVF_SUMMARY,
	};
	return emit(ctx, level, &ev);
}

/*
 * A long item stands alone at a level: a single slice at least as long as the
 * level's gap (a "pixel" at the resolution the level serves) is never merged.
 */
static inline int is_long(const struct tft_lod_block *it, int64_t gap)
{
	return it->single && it->end_ns - it->start_ns >= gap;
}

/*
 * Offer item `it` to level k at `depth`. Closed blocks (and long items, which
 * close the open block and pass through as themselves) are emitted and offered
 * to level k + 1 in start order; recursion depth is at most TFT_LOD_LEVELS.
 */
static int push(struct tft_lod *l, int k, uint32_t depth, const struct tft_lod_block *it,
		tft_lod_emit_fn emit, void *ctx)
{
	struct tft_lod_block *b, closed;
	int64_t gap;
	int rc;

	if (k > TFT_LOD_LEVELS)
		return 0;
	b = &l->blk[depth][k - 1];
	gap = tft_lod_gap_ns(k);
	if (is_long(it, gap)) {
		if (b->open) {
			closed = *b;
			b->open = 0;
			if ((rc = emit_block(l, k, depth, &closed, emit, ctx)) ||
			    (rc = push(l, k + 1, depth, &closed, emit, ctx)))
				return rc;
		}
		if ((rc = emit_block(l, k, depth, it, emit, ctx)))
			return rc;
		return push(l, k + 1, depth, it, emit, ctx);
	}
	if (!b->open) {
		*b = *it;
		b->open = 1;
		return 0;
	}
	if (joins(b, it, gap)) {
		merge(b, it);
		return 0;
	}
	closed = *b;
	*b = *it;
	b->open = 1;
	if ((rc = emit_block(l, k, depth, &closed, emit, ctx)))
		return rc;
	return push(l, k + 1, depth, &closed, emit, ctx);
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
	int rc = ensure_depth(l, ev->depth);

	if (rc)
		return rc;
	/* Counter buckets are point samples: a bucket's extent is first..last sample. */
	if (it.is_counter)
		it.end_ns = it.start_ns;
	return push(l, 1, ev->depth, &it, emit, ctx);
}

int tft_lod_flush(struct tft_lod *l, tft_lod_emit_fn emit, void *ctx)
{
	for (int k = 1; k <= TFT_LOD_LEVELS; k++) {
		for (uint32_t d = 0; d < l->cap_depth; d++) {
			struct tft_lod_block *b = &l->blk[d][k - 1];
			struct tft_lod_block closed;
			int rc;

			if (!b->open)
				continue;
			closed = *b;
			b->open = 0;
			rc = emit_block(l, k, d, &closed, emit, ctx);
			if (!rc)
				rc = push(l, k + 1, d, &closed, emit, ctx);
			if (rc)
				return rc;
		}
	}
	return 0;
}
