/* SPDX-License-Identifier: MIT */
/*
 * A log-linear duration histogram: the mergeable sketch behind stored
 * statistics (store/chunk_stats.h) and their percentiles (analyze/stats.c).
 *
 * Bucket of a duration v >= 0 (ns): v itself below 128; above, 64 buckets
 * per power of two (the 6 bits after the leading one). A bucket's value is
 * its midpoint, so a percentile read from buckets is within
 * TFT_HIST_REL_ERROR of the true duration at that rank (exact below 128 ns).
 * Histograms merge by adding the counts of equal buckets, in any order.
 */
#ifndef TFT_CORE_HIST_H
#define TFT_CORE_HIST_H

#include <stdint.h>

#define TFT_HIST_SUB_BITS 6
#define TFT_HIST_SUB (1u << TFT_HIST_SUB_BITS)   /* buckets per power of two */
#define TFT_HIST_EXACT (2u * TFT_HIST_SUB)       /* values below are their own bucket */
/* Buckets: 128 exact, then 64 per power of two from 2^7 to 2^62. */
#define TFT_HIST_BUCKETS (TFT_HIST_EXACT + 56u * TFT_HIST_SUB)
/* Largest relative error of a bucket's midpoint: half a bucket over its lower end. */
#define TFT_HIST_REL_ERROR (1.0 / (2.0 * TFT_HIST_SUB))

static inline uint32_t tft_hist_bucket(int64_t v)
{
	uint64_t u = v < 0 ? 0 : (uint64_t)v;
	uint32_t e;

	if (u < TFT_HIST_EXACT)
		return (uint32_t)u;
	e = 63u - (uint32_t)__builtin_clzll(u); /* > TFT_HIST_SUB_BITS */
	return TFT_HIST_EXACT + (e - TFT_HIST_SUB_BITS - 1u) * TFT_HIST_SUB +
	       (uint32_t)((u >> (e - TFT_HIST_SUB_BITS)) & (TFT_HIST_SUB - 1u));
}

/* The lower end of bucket b (its first duration). */
static inline int64_t tft_hist_lower(uint32_t b)
{
	uint32_t e, top;

	if (b < TFT_HIST_EXACT)
		return b;
	e = TFT_HIST_SUB_BITS + 1u + (b - TFT_HIST_EXACT) / TFT_HIST_SUB;
	top = TFT_HIST_SUB + (b - TFT_HIST_EXACT) % TFT_HIST_SUB;
	return (int64_t)((uint64_t)top << (e - TFT_HIST_SUB_BITS));
}

/* The value a bucket stands for: its midpoint (exact buckets: the value). */
static inline int64_t tft_hist_value(uint32_t b)
{
	uint32_t e;

	if (b < TFT_HIST_EXACT)
		return b;
	e = TFT_HIST_SUB_BITS + 1u + (b - TFT_HIST_EXACT) / TFT_HIST_SUB;
	return tft_hist_lower(b) + (int64_t)(((uint64_t)1 << (e - TFT_HIST_SUB_BITS)) / 2);
}

#endif /* TFT_CORE_HIST_H */
