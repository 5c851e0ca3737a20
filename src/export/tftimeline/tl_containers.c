/* SPDX-License-Identifier: MIT */
/*
 * The tf.timeline export's small containers (tl_int.h): a byte arena whose
 * slices never move, a growable text buffer (timeline.py's first-fit lanes
 * are core/lanes.h's, the name -> index sets core/hmap's).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "core/strtab.h"
#include "export/tftimeline/tl_int.h"

char *tft_tl_arena_put(struct arena *a, const char *s, size_t n)
{
	struct arena_block *b = a->head;

	if (!b || b->cap - b->used < n) {
		size_t cap = n > 65536 ? n : 65536;

		b = malloc(sizeof(*b) + cap);
		if (!b)
			return NULL;
		b->next = a->head;
		b->used = 0;
		b->cap = cap;
		a->head = b;
	}
	memcpy(b->data + b->used, s, n);
	b->used += n;
	return b->data + b->used - n;
}

void tft_tl_arena_free(struct arena *a)
{
	while (a->head) {
		struct arena_block *n = a->head->next;

		free(a->head);
		a->head = n;
	}
}

void tft_tl_buf_add(struct buf *b, const char *s, size_t n)
{
	if (b->oom || tft_grow_size((void **)&b->p, &b->cap, b->len + n + 1, 1)) {
		b->oom = 1;
		return;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

void tft_tl_buf_cstr(struct buf *b, const char *s)
{
	tft_tl_buf_add(b, s, strlen(s));
}

void tft_tl_buf_int(struct buf *b, int64_t v)
{
	char tmp[24];

	tft_tl_buf_add(b, tmp, tft_json_fmt_int(tmp, v));
}
