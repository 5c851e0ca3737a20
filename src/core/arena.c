/* SPDX-License-Identifier: MIT */
/* The block arena (core/arena.h). */
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"

void *tft_arena_alloc(struct tft_arena *a, size_t n)
{
	struct tft_arena_block *b = a->head;

	if (!b || b->cap - b->used < n) {
		size_t cap = a->block ? a->block : TFT_ARENA_BLOCK;

		if (cap < n)
			cap = n;
		if (cap > (size_t)-1 - sizeof(*b))
			return NULL;
		b = malloc(sizeof(*b) + cap);
		if (!b)
			return NULL;
		b->cap = cap;
		b->used = 0;
		b->next = a->head;
		a->head = b;
	}
	b->used += n;
	return b->data + b->used - n;
}

char *tft_arena_dup(struct tft_arena *a, const void *s, size_t n)
{
	char *p = tft_arena_alloc(a, n);

	if (p && n)
		memcpy(p, s, n);
	return p;
}

void tft_arena_free(struct tft_arena *a)
{
	while (a->head) {
		struct tft_arena_block *next = a->head->next;

		free(a->head);
		a->head = next;
	}
}
