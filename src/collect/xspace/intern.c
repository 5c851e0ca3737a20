/* SPDX-License-Identifier: MIT */
/*
 * Interning the input's strings: a direct-mapped cache per thread in front
 * of the writer's string table, whose lock the threads would otherwise take
 * for every string stat of a real profile (kernel details, op names ...).
 */
#include <stdlib.h>
#include <string.h>

#include "collect/xspace/xs_int.h"

/*
 * A thread's cache of interned input strings, zeroed for every XSpace: its
 * size holds a real profile's distinct string stats and fits the L2 cache
 * (BENCHMARKS.md, "XSpace importer: design measurements").
 */
#define ICACHE_SLOTS 16384u /* a power of two */

struct xs_icache {
	const uint8_t *p; /* borrowed: inside the input; NULL = empty */
	uint32_t len, id;
};

/*
 * The cache slot of b[0, n): a long string by its length and three of its
 * words (first, middle, last), not all its bytes (real stat values are
 * kernel names of a hundred bytes and more; the writer hashes a miss in full
 * anyway). Strings that agree there share a slot: a miss, never a wrong id.
 */
static inline uint32_t icache_slot(const uint8_t *b, size_t n)
{
	uint64_t w0, w1, w2;

	if (n < 24)
		return (uint32_t)tft_hash_fast(b, n, 0) & (ICACHE_SLOTS - 1);
	memcpy(&w0, b, 8);
	memcpy(&w1, b + n / 2 - 4, 8);
	memcpy(&w2, b + n - 8, 8);
	return (uint32_t)tft_hash_u64(w0 ^ (w1 * 0x9e3779b97f4a7c15ULL) ^
				      ((w2 ^ n) * 0xbf58476d1ce4e5b9ULL)) & (ICACHE_SLOTS - 1);
}

uint32_t tft_xs_intern(struct xs *x, const void *s, size_t n)
{
	const uint8_t *b = s;
	struct xs_icache *c;
	uint32_t id;

	if (!n)
		return 0; /* id 0 is "" (and s may be NULL) */
	if (!x->icache || b < x->dec->base || b + n > x->lim || n > UINT32_MAX)
		return tft_writer_intern(x->w, (const char *)s, n);
	c = &x->icache[icache_slot(b, n)];
	if (c->p && c->len == n && memcmp(c->p, b, n) == 0)
		return c->id;
	id = tft_writer_intern(x->w, (const char *)s, n);
	if (id != UINT32_MAX) {
		c->p = b;
		c->len = (uint32_t)n;
		c->id = id;
	}
	return id;
}

struct xs_icache *tft_xs_icache_new(void)
{
	return calloc(ICACHE_SLOTS, sizeof(struct xs_icache));
}
