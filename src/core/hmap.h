/* SPDX-License-Identifier: MIT */
/*
 * One open-addressing hash map (linear probing, backward-shift delete) from
 * a key to a 32-bit value, for the importers' keyed tables. A key is either
 * a few 64-bit words kept in the map's slots (tft_hmap_init), or something
 * the caller keeps and compares itself, the slot holding only its value
 * (tft_hmap_init_ext: strings in the caller's arena, say). The caller hashes
 * the key (its hot path may have the hash already); tft_hmap_hash_words()
 * and tft_hash_fast() are there when it has not. The lookup is inline: an
 * importer's per-event lookups cost no call.
 */
#ifndef TFT_CORE_HMAP_H
#define TFT_CORE_HMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/strtab.h"

#define TFT_HMAP_EMPTY UINT32_MAX /* no value: what a lookup of a missing key returns */
#define TFT_HMAP_MAX_WORDS 8u     /* key words a slot may hold */

/* Caller-kept keys: is `key` (as passed to the call) the key of the entry holding val? */
typedef bool (*tft_hmap_eq_fn)(const void *ctx, const void *key, uint32_t val);

/* One slot: hash and value, then the key's words (tft_hmap_init). */
struct tft_hmap_slot {
	uint32_t hash;
	uint32_t val; /* TFT_HMAP_EMPTY: a free slot */
	uint64_t key[];
};

struct tft_hmap {
	unsigned char *slots; /* owned; mask + 1 slots of `stride` bytes; NULL before the first put */
	uint32_t mask;        /* slots - 1 (a power of 2) */
	uint32_t count;       /* entries */
	uint32_t nwords;      /* key words kept per slot; 0 with eq */
	uint32_t stride;      /* bytes per slot */
	tft_hmap_eq_fn eq;    /* caller-kept keys' comparison, or NULL */
	const void *eq_ctx;   /* borrowed: eq's first argument */
};

/* A map of keys of `nwords` 64-bit words (1 .. TFT_HMAP_MAX_WORDS), kept in the map. */
void tft_hmap_init(struct tft_hmap *m, unsigned nwords);

/* A map whose keys the caller keeps: eq(ctx, key, val) compares them. */
void tft_hmap_init_ext(struct tft_hmap *m, tft_hmap_eq_fn eq, const void *ctx);

void tft_hmap_fini(struct tft_hmap *m);

/*
 * Remove every entry. Costs the number of slots, which are given back when
 * far more than the entries needed (a large table then stays small again).
 */
void tft_hmap_clear(struct tft_hmap *m);

/*
 * Room for n entries in all without growing (a table whose size is known
 * up front: its puts then never move the slots). 0 or TFT_ENOMEM.
 */
int tft_hmap_reserve(struct tft_hmap *m, uint32_t n);

/* Insert, or replace the value of an equal key. 0 or TFT_ENOMEM (val must not be TFT_HMAP_EMPTY). */
int tft_hmap_put(struct tft_hmap *m, const void *key, uint32_t hash, uint32_t val);

/*
 * The value of an equal key in *val (returns 1), or insert val under key
 * (returns 0), or TFT_ENOMEM: a lookup and an insert in one probe.
 */
int tft_hmap_add(struct tft_hmap *m, const void *key, uint32_t hash, uint32_t *val);

/* Remove key; true if it was there. */
bool tft_hmap_del(struct tft_hmap *m, const void *key, uint32_t hash);

/* Bytes of memory its slots hold (for a caller's memory budget). */
static inline size_t tft_hmap_bytes(const struct tft_hmap *m)
{
	return m->slots ? ((size_t)m->mask + 1) * m->stride : 0;
}

/* A hash of nwords 64-bit words. */
static inline uint32_t tft_hmap_hash_words(const uint64_t *k, unsigned nwords)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL;

	for (unsigned i = 0; i < nwords; i++)
		h = tft_hash_u64(h ^ k[i]);
	return (uint32_t)h;
}

static inline struct tft_hmap_slot *tft_hmap_slot_at(const struct tft_hmap *m, uint32_t i)
{
	return (struct tft_hmap_slot *)(m->slots + (size_t)i * m->stride);
}

/* Is the slot's key equal to key (its hash is)? */
static inline bool tft_hmap_key_eq(const struct tft_hmap *m, const struct tft_hmap_slot *s,
				   const void *key)
{
	const uint64_t *k = key;

	if (m->eq)
		return m->eq(m->eq_ctx, key, s->val);
	for (uint32_t i = 0; i < m->nwords; i++)
		if (s->key[i] != k[i])
			return false;
	return true;
}

/* The value under key, or TFT_HMAP_EMPTY. */
static inline uint32_t tft_hmap_get(const struct tft_hmap *m, const void *key, uint32_t hash)
{
	if (!m->slots)
		return TFT_HMAP_EMPTY;
	for (uint32_t i = hash & m->mask;; i = (i + 1) & m->mask) {
		const struct tft_hmap_slot *s = tft_hmap_slot_at(m, i);
		if (s->val == TFT_HMAP_EMPTY)
			return TFT_HMAP_EMPTY;
		if (s->hash == hash && tft_hmap_key_eq(m, s, key))
			return s->val;
	}
}

/*
 * The value under a one-word key (a map of tft_hmap_init(m, 1)), or
 * TFT_HMAP_EMPTY: tft_hmap_get without the general key comparison, for the
 * per-event tables keyed by an id.
 */
static inline uint32_t tft_hmap_get1(const struct tft_hmap *m, uint64_t key, uint32_t hash)
{
	if (!m->slots)
		return TFT_HMAP_EMPTY;
	for (uint32_t i = hash & m->mask;; i = (i + 1) & m->mask) {
		/* (one word: the stride is a constant) */
		const struct tft_hmap_slot *s =
			(const struct tft_hmap_slot *)(m->slots + (size_t)i * (sizeof(*s) + sizeof(uint64_t)));
		if (s->val == TFT_HMAP_EMPTY)
			return TFT_HMAP_EMPTY;
		if (s->key[0] == key)
			return s->val;
	}
}

/* The value under a two-word key (a map of tft_hmap_init(m, 2)), or TFT_HMAP_EMPTY: tft_hmap_get1's kind. */
static inline uint32_t tft_hmap_get2(const struct tft_hmap *m, const uint64_t key[2], uint32_t hash)
{
	if (!m->slots)
		return TFT_HMAP_EMPTY;
	for (uint32_t i = hash & m->mask;; i = (i + 1) & m->mask) {
		const struct tft_hmap_slot *s =
			(const struct tft_hmap_slot *)(m->slots + (size_t)i * (sizeof(*s) + 2 * sizeof(uint64_t)));
		if (s->val == TFT_HMAP_EMPTY)
			return TFT_HMAP_EMPTY;
		if (s->key[0] == key[0] && s->key[1] == key[1])
			return s->val;
	}
}

/*
 * Iteration: the first entry at slot *i or after (its key in ->key, its
 * value in ->val), *i moved past it; NULL at the end. Start with *i = 0.
 * The order is the slots', not the insertion's.
 */
static inline const struct tft_hmap_slot *tft_hmap_next(const struct tft_hmap *m, uint32_t *i)
{
	for (; m->slots && *i <= m->mask; (*i)++) {
		const struct tft_hmap_slot *s = tft_hmap_slot_at(m, *i);
		if (s->val != TFT_HMAP_EMPTY) {
			(*i)++;
			return s;
		}
	}
	return NULL;
}

#endif /* TFT_CORE_HMAP_H */
