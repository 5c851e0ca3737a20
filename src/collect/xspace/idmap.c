/* SPDX-License-Identifier: MIT */
/* The XSpace importer's u64 -> u32 map: its growth and clearing (see idmap.h). */
#include <stdlib.h>
#include <string.h>

#include "collect/xspace/idmap.h"
#include "core/grow.h"

void tft_xs_idmap_clear(struct idmap *m)
{
	for (uint32_t i = 0; i < m->ndense; i++)
		m->dense[i] = TFT_NONE;
	for (uint32_t i = 0; i < m->cap; i++)
		m->slots[i].val = TFT_NONE;
	m->count = 0;
}

void tft_xs_idmap_free(struct idmap *m)
{
	free(m->dense);
	free(m->slots);
}

static int hash_put(struct idmap *m, uint64_t key, uint32_t val);

/* Rebuild the hash part with capacity ncap, moving keys < ndense to the dense part. */
static int idmap_rehash(struct idmap *m, uint32_t ncap)
{
	struct idmap_slot *old = m->slots, *ns;
	uint32_t ocap = m->cap;

	ns = malloc((size_t)ncap * sizeof(*ns));
	if (!ns)
		return TFT_ENOMEM;
	for (uint32_t k = 0; k < ncap; k++)
		ns[k].val = TFT_NONE;
	m->slots = ns;
	m->cap = ncap;
	m->count = 0;
	for (uint32_t k = 0; k < ocap; k++) {
		if (old[k].val == TFT_NONE)
			continue;
		if (old[k].key < m->ndense)
			m->dense[old[k].key] = old[k].val;
		else
			hash_put(m, old[k].key, old[k].val);
	}
	free(old);
	return 0;
}

static int hash_put(struct idmap *m, uint64_t key, uint32_t val)
{
	uint32_t mask, i;

	if ((m->count + 1) * 4 >= m->cap * 3) {
		uint32_t ncap = m->cap ? m->cap * 2 : 64;

		if (ncap > (1u << 30) || idmap_rehash(m, ncap))
			return TFT_ENOMEM;
	}
	mask = m->cap - 1;
	i = (uint32_t)tft_hash_u64(key) & mask;
	for (;;) {
		struct idmap_slot *s = &m->slots[i];

		if (s->val == TFT_NONE) {
			s->key = key;
			s->val = val;
			m->count++;
			return 0;
		}
		if (s->key == key) {
			s->val = val;
			return 0;
		}
		i = (i + 1) & mask;
	}
}

/* idmap_put() for a key past the dense array. */
int __attribute__((noinline)) tft_xs_idmap_put_slow(struct idmap *m, uint64_t key, uint32_t val,
						     uint32_t live)
{
	/*
	 * Ids are usually small and dense (1..N; correlation ids interleaved
	 * across threads): grow the array while it stays within 16 slots per
	 * live entry.
	 */
	if (key < DENSE_MAX && key <= 16 * (uint64_t)live + 65536) {
		uint32_t old = m->ndense;

		if (tft_grow_ex((void **)&m->dense, &m->ndense, key + 1, sizeof(*m->dense), 256, 0))
			return TFT_ENOMEM;
		for (uint32_t i = old; i < m->ndense; i++)
			m->dense[i] = TFT_NONE;

		if (m->count && idmap_rehash(m, m->cap))
			return TFT_ENOMEM;
		m->dense[key] = val;
		return 0;
	}
	return hash_put(m, key, val);
}

/* Empty a map of the keys ids[0..n) (stride apart) and of its hashed part. */
void tft_xs_idmap_forget(struct idmap *m, const void *ids, size_t stride, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		uint64_t id;

		memcpy(&id, (const char *)ids + (size_t)i * stride, sizeof(id));
		if (id < m->ndense)
			m->dense[id] = TFT_NONE;
	}
	if (m->count) {
		for (uint32_t i = 0; i < m->cap; i++)
			m->slots[i].val = TFT_NONE;
		m->count = 0;
	}
}
