/* SPDX-License-Identifier: MIT */
/*
 * The tf.timeline export's small containers (tl_int.h): a growable text
 * buffer, an open-addressing set of indices (timeline.py's first-fit lanes are core/lanes.h's).
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

uint32_t tft_tl_imap_find(const struct imap *m, uint64_t h, imap_eq_fn eq, void *ctx)
{
	if (!m->cap)
		return NOSTR;
	for (size_t i = h & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (!m->slot[i])
			return NOSTR;
		if (m->hash[i] == h && eq(ctx, m->slot[i] - 1))
			return m->slot[i] - 1;
	}
}

int tft_tl_imap_add(struct imap *m, uint64_t h, uint32_t idx)
{
	if ((m->n + 1) * 2 > m->cap) {
		size_t nc = m->cap ? m->cap * 2 : 64;
		uint32_t *ns = calloc(nc, sizeof(*ns));
		uint64_t *nh = malloc(nc * sizeof(*nh));

		if (!ns || !nh) {
			free(ns);
			free(nh);
			return TFT_ENOMEM;
		}
		for (size_t i = 0; i < m->cap; i++) {
			size_t j;

			if (!m->slot[i])
				continue;
			for (j = m->hash[i] & (nc - 1); ns[j]; j = (j + 1) & (nc - 1))
				;
			ns[j] = m->slot[i];
			nh[j] = m->hash[i];
		}
		free(m->slot);
		free(m->hash);
		m->slot = ns;
		m->hash = nh;
		m->cap = nc;
	}
	for (size_t i = h & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (!m->slot[i]) {
			m->slot[i] = idx + 1;
			m->hash[i] = h;
			m->n++;
			return 0;
		}
	}
}

void tft_tl_imap_clear(struct imap *m)
{
	if (m->cap)
		memset(m->slot, 0, m->cap * sizeof(*m->slot));
	m->n = 0;
}

void tft_tl_imap_free(struct imap *m)
{
	free(m->slot);
	free(m->hash);
	memset(m, 0, sizeof(*m));
}
