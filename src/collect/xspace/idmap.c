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
	tft_hmap_clear(&m->hash);
}

void tft_xs_idmap_free(struct idmap *m)
{
	free(m->dense);
	tft_hmap_fini(&m->hash);
}

static int hash_put(struct idmap *m, uint64_t key, uint32_t val)
{
	if (!m->hash.stride) /* (an idmap starts zeroed) */
		tft_hmap_init(&m->hash, 1);
	if (val == TFT_NONE) { /* (absent: what the dense part's TFT_NONE says) */
		tft_hmap_del(&m->hash, &key, (uint32_t)tft_hash_u64(key));
		return 0;
	}
	return tft_hmap_put(&m->hash, &key, (uint32_t)tft_hash_u64(key), val);
}

/* The dense part grew: its keys leave the hashed part for it. */
static int move_to_dense(struct idmap *m)
{
	struct tft_hmap old = m->hash;
	const struct tft_hmap_slot *s;
	uint32_t i = 0;

	tft_hmap_init(&m->hash, 1);
	while ((s = tft_hmap_next(&old, &i)) != NULL) {
		if (s->key[0] < m->ndense) {
			m->dense[s->key[0]] = s->val;
		} else if (hash_put(m, s->key[0], s->val)) {
			tft_hmap_fini(&m->hash);
			m->hash = old;
			return TFT_ENOMEM;
		}
	}
	tft_hmap_fini(&old);
	return 0;
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
		if (m->hash.count && move_to_dense(m))
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
	if (m->hash.count)
		tft_hmap_clear(&m->hash);
}
