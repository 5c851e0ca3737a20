/* SPDX-License-Identifier: MIT */
/* timeline.py's first-fit lanes over a min segment tree (see lanes.h). */
#include "core/lanes.h"

#include <stdlib.h>
#include <string.h>

#include "tftracer/tftracer.h"

static void lanes_set(struct tft_lanes *l, size_t i, int64_t v)
{
	size_t k = l->cap + i;

	l->t[k] = v;
	for (k /= 2; k >= 1; k /= 2)
		l->t[k] = l->t[2 * k] < l->t[2 * k + 1] ? l->t[2 * k] : l->t[2 * k + 1];
}

int tft_lanes_reset(struct tft_lanes *l)
{
	if (!l->t) {
		l->cap = 64;
		l->t = malloc(2 * l->cap * sizeof(*l->t));
		if (!l->t)
			return TFT_ENOMEM;
	}
	for (size_t i = 0; i < 2 * l->cap; i++)
		l->t[i] = INT64_MAX;
	l->n = 1;
	lanes_set(l, 0, 0); /* lanes = [0] */
	return 0;
}

/* Double the leaves, keeping the lanes' ends; the new lanes are unused (INT64_MAX). */
static int lanes_widen(struct tft_lanes *l)
{
	size_t nc = l->cap * 2;
	int64_t *nt = l->n < UINT32_MAX ? malloc(2 * nc * sizeof(*nt)) : NULL;

	if (!nt)
		return TFT_ENOMEM;
	for (size_t j = 0; j < 2 * nc; j++)
		nt[j] = INT64_MAX;
	memcpy(nt + nc, l->t + l->cap, l->cap * sizeof(*nt));
	for (size_t j = nc - 1; j >= 1; j--)
		nt[j] = nt[2 * j] < nt[2 * j + 1] ? nt[2 * j] : nt[2 * j + 1];
	free(l->t);
	l->t = nt;
	l->cap = nc;
	return 0;
}

int tft_lanes_assign(struct tft_lanes *l, int64_t start, int64_t end, uint32_t *lane)
{
	size_t k = 1, i;

	if (l->t[1] < start) { /* some lane is free: descend to the first */
		while (k < l->cap)
			k = l->t[2 * k] < start ? 2 * k : 2 * k + 1;
		i = k - l->cap;
	} else {
		if (l->n == l->cap && lanes_widen(l))
			return TFT_ENOMEM;
		i = l->n++;
	}
	lanes_set(l, i, end);
	*lane = (uint32_t)i;
	return 0;
}

void tft_lanes_free(struct tft_lanes *l)
{
	free(l->t);
	memset(l, 0, sizeof(*l));
}
