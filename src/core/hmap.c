/* SPDX-License-Identifier: MIT */
/*
 * The hash map of core/hmap.h: inserting, growing (load <= 3/4, doubling),
 * deleting with backward shift (no tombstones: a probe chain stays intact
 * by moving the entries after the removed one back), clearing.
 */
#include <stdlib.h>
#include <string.h>

#include "core/hmap.h"
#include "tftracer/tftracer.h"

#define MIN_SLOTS 16u
#define MAX_SLOTS (1u << 30)

void tft_hmap_init(struct tft_hmap *m, unsigned nwords)
{
	memset(m, 0, sizeof(*m));
	if (nwords < 1)
		nwords = 1;
	if (nwords > TFT_HMAP_MAX_WORDS)
		nwords = TFT_HMAP_MAX_WORDS;
	m->nwords = nwords;
	m->stride = (uint32_t)(sizeof(struct tft_hmap_slot) + nwords * sizeof(uint64_t));
}

void tft_hmap_init_ext(struct tft_hmap *m, tft_hmap_eq_fn eq, const void *ctx)
{
	memset(m, 0, sizeof(*m));
	m->eq = eq;
	m->eq_ctx = ctx;
	m->stride = (uint32_t)sizeof(struct tft_hmap_slot);
}

void tft_hmap_fini(struct tft_hmap *m)
{
	free(m->slots);
	m->slots = NULL;
	m->mask = 0;
	m->count = 0;
}

static void mark_empty(unsigned char *slots, uint32_t n, uint32_t stride)
{
	for (uint32_t i = 0; i < n; i++)
		((struct tft_hmap_slot *)(slots + (size_t)i * stride))->val = TFT_HMAP_EMPTY;
}

void tft_hmap_clear(struct tft_hmap *m)
{
	uint32_t n = m->slots ? m->mask + 1 : 0;

	if (!m->count)
		return;
	if (n > 4 * MIN_SLOTS && (uint64_t)m->count * 8 < n) {
		tft_hmap_fini(m); /* the next put allocates what the entries need */
		return;
	}
	mark_empty(m->slots, n, m->stride);
	m->count = 0;
}

/* A slot's bytes (a multiple of 8: hash, value, key words), without a memcpy call per slot. */
static inline void copy_slot(void *dst, const void *src, uint32_t stride)
{
	uint64_t *d = dst;
	const uint64_t *sw = src;

	for (uint32_t i = 0; i < stride / 8; i++)
		d[i] = sw[i];
}

static int resize(struct tft_hmap *m, uint32_t ncap)
{
	unsigned char *ns = malloc((size_t)ncap * m->stride);

	if (!ns)
		return TFT_ENOMEM;
	mark_empty(ns, ncap, m->stride);
	if (m->slots) {
		for (uint32_t i = 0; i <= m->mask; i++) {
			const struct tft_hmap_slot *s = tft_hmap_slot_at(m, i);
			uint32_t j;
			if (s->val == TFT_HMAP_EMPTY)
				continue;
			j = s->hash & (ncap - 1);
			while (((struct tft_hmap_slot *)(ns + (size_t)j * m->stride))->val != TFT_HMAP_EMPTY)
				j = (j + 1) & (ncap - 1);
			copy_slot(ns + (size_t)j * m->stride, s, m->stride);
		}
	}
	free(m->slots);
	m->slots = ns;
	m->mask = ncap - 1;
	return 0;
}

/* Room for one more entry (grows at 3/4 full). */
static int reserve_one(struct tft_hmap *m)
{
	if (m->slots && (uint64_t)(m->count + 1) * 4 <= (uint64_t)(m->mask + 1) * 3)
		return 0;
	if (m->slots && m->mask + 1 >= MAX_SLOTS)
		return TFT_ENOMEM;
	return resize(m, m->slots ? (m->mask + 1) * 2 : MIN_SLOTS);
}

int tft_hmap_reserve(struct tft_hmap *m, uint32_t n)
{
	uint64_t want = MIN_SLOTS;

	while (want * 3 < (uint64_t)n * 4)
		want *= 2;
	if (want > MAX_SLOTS)
		return TFT_ENOMEM;
	if (m->slots && (uint64_t)m->mask + 1 >= want)
		return 0;
	return resize(m, (uint32_t)want);
}

/* The slot of key, or the free slot that ends its probe chain. */
static struct tft_hmap_slot *probe(const struct tft_hmap *m, const void *key, uint32_t hash)
{
	for (uint32_t i = hash & m->mask;; i = (i + 1) & m->mask) {
		struct tft_hmap_slot *s = tft_hmap_slot_at(m, i);
		if (s->val == TFT_HMAP_EMPTY || (s->hash == hash && tft_hmap_key_eq(m, s, key)))
			return s;
	}
}

static void fill(struct tft_hmap *m, struct tft_hmap_slot *s, const void *key, uint32_t hash,
		 uint32_t val)
{
	s->hash = hash;
	s->val = val;
	for (uint32_t i = 0; i < m->nwords; i++)
		s->key[i] = ((const uint64_t *)key)[i];
	m->count++;
}

int tft_hmap_put(struct tft_hmap *m, const void *key, uint32_t hash, uint32_t val)
{
	struct tft_hmap_slot *s;
	int rc = reserve_one(m);

	if (rc)
		return rc;
	s = probe(m, key, hash);
	if (s->val == TFT_HMAP_EMPTY)
		fill(m, s, key, hash, val);
	else
		s->val = val;
	return 0;
}

int tft_hmap_add(struct tft_hmap *m, const void *key, uint32_t hash, uint32_t *val)
{
	struct tft_hmap_slot *s;
	int rc = reserve_one(m);

	if (rc)
		return rc;
	s = probe(m, key, hash);
	if (s->val != TFT_HMAP_EMPTY) {
		*val = s->val;
		return 1;
	}
	fill(m, s, key, hash, *val);
	return 0;
}

bool tft_hmap_del(struct tft_hmap *m, const void *key, uint32_t hash)
{
	uint32_t i, j;

	if (!m->slots)
		return false;
	for (i = hash & m->mask;; i = (i + 1) & m->mask) {
		const struct tft_hmap_slot *s = tft_hmap_slot_at(m, i);
		if (s->val == TFT_HMAP_EMPTY)
			return false;
		if (s->hash == hash && tft_hmap_key_eq(m, s, key))
			break;
	}
	/* move back each later entry of the cluster whose home is not in (i, j] */
	for (j = i;;) {
		j = (j + 1) & m->mask;
		struct tft_hmap_slot *sj = tft_hmap_slot_at(m, j);
		if (sj->val == TFT_HMAP_EMPTY)
			break;
		uint32_t home = sj->hash & m->mask;
		bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
		if (stays)
			continue;
		copy_slot(tft_hmap_slot_at(m, i), sj, m->stride);
		i = j;
	}
	tft_hmap_slot_at(m, i)->val = TFT_HMAP_EMPTY;
	m->count--;
	return true;
}
