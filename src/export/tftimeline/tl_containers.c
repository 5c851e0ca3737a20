/* SPDX-License-Identifier: MIT */
/*
 * The tf.timeline export's small containers (tl_int.h): a growable text
 * buffer (timeline.py's first-fit lanes are core/lanes.h's, the name ->
 * index sets core/hmap's, the names' arena core/arena.h's).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "core/strtab.h"
#include "export/tftimeline/tl_int.h"

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
