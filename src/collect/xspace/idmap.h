/* SPDX-License-Identifier: MIT */
/*
 * The XSpace importer's u64 -> u32 map (metadata ids, correlation ids,
 * group ids): a dense array for small keys, a hash for the rest. Ids are
 * usually small and dense (1..N), so most lookups are one array load;
 * the lookup and the insert are inline for the per-event paths.
 */
#ifndef TFT_COLLECT_XSPACE_IDMAP_H
#define TFT_COLLECT_XSPACE_IDMAP_H

#include <stddef.h>
#include <stdint.h>

#include "core/hmap.h"
#include "core/status.h"
#include "core/strtab.h"
#include "store/writer.h"

/* ---- u64 -> u32 map: a dense array for small keys, a hash for the rest ------ */

#define DENSE_MAX (1u << 23) /* keys below this may live in the dense array (32 MiB) */

struct idmap {
	uint32_t *dense;          /* owned: dense[key] for key < ndense (TFT_NONE = absent) */
	uint32_t ndense;
	struct tft_hmap hash;     /* owned: keys >= ndense (zeroed until the first) */
};

/* Every key forgotten; the storage kept. */
void tft_xs_idmap_clear(struct idmap *m);
void tft_xs_idmap_free(struct idmap *m);
/* Empty a map of the keys ids[0..n) (stride apart) and of its hashed part. */
void tft_xs_idmap_forget(struct idmap *m, const void *ids, size_t stride, uint32_t n);
/* idmap_put() for a key past the dense array. */
int tft_xs_idmap_put_slow(struct idmap *m, uint64_t key, uint32_t val, uint32_t live);

static inline uint32_t idmap_get(const struct idmap *m, uint64_t key)
{
	if (key < m->ndense)
		return m->dense[key];
	if (!m->hash.count)
		return TFT_NONE;
	return tft_hmap_get1(&m->hash, key, (uint32_t)tft_hash_u64(key)); /* (TFT_HMAP_EMPTY is TFT_NONE) */
}

/* Insert or replace. 0 or TFT_ENOMEM. `live` = entries in the map (density check). */
static inline int idmap_put(struct idmap *m, uint64_t key, uint32_t val, uint32_t live)
{
	if (tft_likely(key < m->ndense)) { /* new correlation ids, mostly: no call */
		m->dense[key] = val;
		return 0;
	}
	return tft_xs_idmap_put_slow(m, key, val, live);
}

#endif /* TFT_COLLECT_XSPACE_IDMAP_H */
