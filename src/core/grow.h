/* SPDX-License-Identifier: MIT */
/* Growing a heap array by doubling: the one helper the importers share. */
#ifndef TFT_CORE_GROW_H
#define TFT_CORE_GROW_H

#include <stdint.h>
#include <stdlib.h>

#include "tftracer/tftracer.h"

/*
 * Make *p (an array of elements of `elem` bytes, capacity *cap) hold at least
 * `need` elements, doubling from 16. Returns 0, or TFT_ENOMEM with *p and
 * *cap unchanged (also when `need` does not fit a uint32_t capacity).
 */
static inline int tft_grow(void **p, uint32_t *cap, uint64_t need, size_t elem)
{
	uint32_t nc;
	void *np;

	if (need <= *cap)
		return 0;
	nc = *cap ? *cap : 16;
	while (nc < need) {
		if (nc > UINT32_MAX / 2)
			return TFT_ENOMEM;
		nc *= 2;
	}
	np = realloc(*p, (size_t)nc * elem);
	if (!np)
		return TFT_ENOMEM;
	*p = np;
	*cap = nc;
	return 0;
}

/* The same for a size_t capacity. */
static inline int tft_grow_size(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t nc;
	void *np;

	if (need <= *cap)
		return 0;
	nc = *cap ? *cap : 16;
	while (nc < need) {
		if (nc > SIZE_MAX / 2 / elem)
			return TFT_ENOMEM;
		nc *= 2;
	}
	np = realloc(*p, nc * elem);
	if (!np)
		return TFT_ENOMEM;
	*p = np;
	*cap = nc;
	return 0;
}

#endif /* TFT_CORE_GROW_H */
