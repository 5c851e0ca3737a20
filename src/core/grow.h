/* SPDX-License-Identifier: MIT */
/*
 * Growing a heap array by doubling: the one helper every layer shares
 * (importers, store, analyze, export, server, runtime drain, the preload
 * library). Hash tables rebuilt at a power-of-two size use core/hmap instead.
 */
#ifndef TFT_CORE_GROW_H
#define TFT_CORE_GROW_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tftracer/tftracer.h"

/*
 * Make *p (an array of elements of `elem` bytes, capacity *cap) hold at least
 * `need` elements: an empty array starts at `first` elements (at least 1),
 * then the capacity doubles until `need` fits. With `zero`, the new elements
 * [old *cap, new *cap) are zero-filled. Returns 0, or TFT_ENOMEM with *p and
 * *cap unchanged: when realloc fails, or when the capacity would pass 2^31
 * (it must fit a uint32_t).
 */
static inline int tft_grow_ex(void **p, uint32_t *cap, uint64_t need, size_t elem,
			      uint32_t first, int zero)
{
	uint32_t nc;
	void *np;

	if (need <= *cap)
		return 0;
	nc = *cap ? *cap : first ? first : 1;
	while (nc < need) {
		if (nc > UINT32_MAX / 2)
			return TFT_ENOMEM;
		nc *= 2;
	}
	if ((uint64_t)nc > SIZE_MAX / elem)
		return TFT_ENOMEM;
	np = realloc(*p, (size_t)nc * elem);
	if (!np)
		return TFT_ENOMEM;
	if (zero)
		memset((char *)np + (size_t)*cap * elem, 0, (size_t)(nc - *cap) * elem);
	*p = np;
	*cap = nc;
	return 0;
}

/* tft_grow_ex from 16 elements, not zero-filled. */
static inline int tft_grow(void **p, uint32_t *cap, uint64_t need, size_t elem)
{
	return tft_grow_ex(p, cap, need, elem, 16, 0);
}

/* The same for a size_t capacity (refused when the bytes would pass SIZE_MAX / 2). */
static inline int tft_grow_size_ex(void **p, size_t *cap, size_t need, size_t elem,
				   size_t first, int zero)
{
	size_t nc;
	void *np;

	if (need <= *cap)
		return 0;
	nc = *cap ? *cap : first ? first : 1;
	if (nc > SIZE_MAX / 2 / elem)
		return TFT_ENOMEM;
	while (nc < need) {
		if (nc > SIZE_MAX / 2 / elem)
			return TFT_ENOMEM;
		nc *= 2;
	}
	np = realloc(*p, nc * elem);
	if (!np)
		return TFT_ENOMEM;
	if (zero)
		memset((char *)np + *cap * elem, 0, (nc - *cap) * elem);
	*p = np;
	*cap = nc;
	return 0;
}

/* tft_grow_size_ex from 16 elements, not zero-filled. */
static inline int tft_grow_size(void **p, size_t *cap, size_t need, size_t elem)
{
	return tft_grow_size_ex(p, cap, need, elem, 16, 0);
}

#endif /* TFT_CORE_GROW_H */
