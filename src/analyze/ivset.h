/* SPDX-License-Identifier: MIT */
/*
 * Sets of time as sorted, disjoint half-open intervals [a, b) in ns: the
 * step-window and interval-union helper the advisor's checkers share (busy
 * time of tracks, unions across tracks, overlap of two sets, the part of a
 * window a set covers). Not for per-event state on a hot path: each set is a
 * growing array, built by appending and normalised once.
 */
#ifndef TFT_ANALYZE_IVSET_H
#define TFT_ANALYZE_IVSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tft_iv {
	int64_t a, b; /* [a, b), ns; a < b */
};

struct tft_ivset {
	struct tft_iv *v; /* owned; n entries (sorted and disjoint once normalised) */
	size_t n, cap;
	int64_t *pre;     /* owned: pre[i] = total length of v[0..i) (tft_ivset_index) */
	size_t npre;      /* entries pre covers (n + 1 when indexed, else 0) */
	bool oom;         /* an append failed: the set is incomplete */
};

/* Zeroed struct = empty set; fini frees; clear empties and keeps the memory. */
void tft_ivset_fini(struct tft_ivset *s);
void tft_ivset_clear(struct tft_ivset *s);

/* Append [a, b) (ignored when b <= a). Any order; normalise before queries. */
void tft_ivset_add(struct tft_ivset *s, int64_t a, int64_t b);
/*
 * Append [a, b) where a is at or after every earlier a (a track's slices in
 * start order): merged into the last interval when they meet, so the set
 * stays sorted and disjoint without a normalise.
 */
void tft_ivset_add_sorted(struct tft_ivset *s, int64_t a, int64_t b);
/* Sort and merge (touching intervals merge): sorted and disjoint. */
void tft_ivset_normalize(struct tft_ivset *s);
/* Prefix sums for tft_ivset_measure_in (after the last change). 0 or TFT_ENOMEM. */
int tft_ivset_index(struct tft_ivset *s);

/* out = x ∪ y (both normalised); out must be neither. 0 or TFT_ENOMEM. */
int tft_ivset_union(struct tft_ivset *out, const struct tft_ivset *x, const struct tft_ivset *y);

/* Total length (normalised set). */
int64_t tft_ivset_measure(const struct tft_ivset *s);
/*
 * Length of s ∩ [a, b) (normalised; O(log n) when indexed, else a scan from
 * the first interval ending after a).
 */
int64_t tft_ivset_measure_in(const struct tft_ivset *s, int64_t a, int64_t b);
/* Index of the first interval with b > t (n if none). */
size_t tft_ivset_find(const struct tft_ivset *s, int64_t t);
/* The first point of s in [a, b), or INT64_MAX when s misses [a, b). */
int64_t tft_ivset_first_in(const struct tft_ivset *s, int64_t a, int64_t b);

#endif /* TFT_ANALYZE_IVSET_H */
