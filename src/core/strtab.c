/* SPDX-License-Identifier: MIT */
/*
 * String interning with an open-addressing hash table (linear probing) over
 * an arena of NUL-terminated copies. Slots hash with tft_hash_fast(): the
 * hash never leaves this file (ids are dense in insertion order), so it
 * can be the fast one.
 * (Not core/hmap: this unit is below it; hmap.h includes strtab.h for the
 * hashes, and every importer's interning would pay a call per lookup.)
 */
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "core/strtab.h"


#define ARENA_BLOCK (1u << 20)

struct entry {
	const char *ptr; /* borrowed from an arena block */
	uint32_t len;
	uint32_t hash32;
};

struct block {
	struct block *next; /* owned */
	size_t used, cap;
	char data[];
};

struct tft_strtab {
	struct entry *ents; /* owned; index = id */
	uint32_t nents, cap_ents;
	uint32_t *slots; /* owned; id+1, 0 = empty */
	uint32_t mask;
	struct block *blocks; /* owned list, newest first */
};

uint64_t tft_hash_bytes(const void *p, size_t len)
{
	const unsigned char *s = p;
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ (len * 0x100000001b3ULL);

	while (len >= 8) {
		uint64_t w;
		memcpy(&w, s, 8);
		h = (h ^ w) * 0xbf58476d1ce4e5b9ULL;
		h ^= h >> 31;
		s += 8;
		len -= 8;
	}
	if (len) {
		uint64_t w = 0;
		memcpy(&w, s, len);
		h = (h ^ w) * 0x94d049bb133111ebULL;
		h ^= h >> 29;
	}
	return tft_hash_u64(h);
}

static char *arena_copy(struct tft_strtab *t, const char *s, size_t len)
{
	struct block *b = t->blocks;
	char *p;

	if (!b || b->cap - b->used < len + 1) {
		size_t cap = len + 1 > ARENA_BLOCK ? len + 1 : ARENA_BLOCK;
		b = malloc(sizeof(*b) + cap);
		if (!b)
			return NULL;
		b->next = t->blocks;
		b->used = 0;
		b->cap = cap;
		t->blocks = b;
	}
	p = b->data + b->used;
	memcpy(p, s, len);
	p[len] = '\0';
	b->used += len + 1;
	return p;
}

static int grow_slots(struct tft_strtab *t)
{
	uint32_t ncap = t->mask ? (t->mask + 1) * 2 : 1024;
	uint32_t *slots = calloc(ncap, sizeof(*slots));

	if (!slots)
		return -1;
	for (uint32_t i = 0; i < t->nents; i++) {
		uint32_t j = t->ents[i].hash32 & (ncap - 1);
		while (slots[j])
			j = (j + 1) & (ncap - 1);
		slots[j] = i + 1;
	}
	free(t->slots);
	t->slots = slots;
	t->mask = ncap - 1;
	return 0;
}

struct tft_strtab *tft_strtab_create(void)
{
	struct tft_strtab *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	if (grow_slots(t) || tft_strtab_intern(t, "", 0) != 0) {
		tft_strtab_destroy(t);
		return NULL;
	}
	return t;
}

void tft_strtab_destroy(struct tft_strtab *t)
{
	if (!t)
		return;
	for (struct block *b = t->blocks, *n; b; b = n) {
		n = b->next;
		free(b);
	}
	free(t->ents);
	free(t->slots);
	free(t);
}

uint32_t tft_strtab_find(const struct tft_strtab *t, const char *s, size_t len)
{
	uint32_t h = (uint32_t)tft_hash_fast(s, len, 0);
	uint32_t j = h & t->mask;

	for (;;) {
		uint32_t id1 = t->slots[j];
		if (!id1)
			return UINT32_MAX;
		const struct entry *e = &t->ents[id1 - 1];
		if (e->hash32 == h && e->len == len && (len == 0 || memcmp(e->ptr, s, len) == 0))
			return id1 - 1;
		j = (j + 1) & t->mask;
	}
}

uint32_t tft_strtab_intern(struct tft_strtab *t, const char *s, size_t len)
{
	uint32_t h, j;

	if (len > UINT32_MAX - 1)
		return UINT32_MAX;
	h = (uint32_t)tft_hash_fast(s, len, 0);
	j = h & t->mask;
	for (;;) {
		uint32_t id1 = t->slots[j];
		if (!id1)
			break;
		const struct entry *e = &t->ents[id1 - 1];
		if (e->hash32 == h && e->len == len && (len == 0 || memcmp(e->ptr, s, len) == 0))
			return id1 - 1;
		j = (j + 1) & t->mask;
	}
	if (t->nents >= t->mask) /* growth failed earlier: never fill the last slot */
		return UINT32_MAX;
	if (tft_grow_ex((void **)&t->ents, &t->cap_ents, (uint64_t)t->nents + 1, sizeof(*t->ents), 1024, 0))
		return UINT32_MAX;
	char *copy = arena_copy(t, s, len);
	if (!copy)
		return UINT32_MAX;
	uint32_t id = t->nents++;
	t->ents[id] = (struct entry){ copy, (uint32_t)len, h };
	t->slots[j] = id + 1;
	/* On failure the table stays valid at the old size; the next insert retries. */
	if ((uint64_t)t->nents * 4 > (uint64_t)(t->mask + 1) * 3)
		(void)grow_slots(t);
	return id;
}

const char *tft_strtab_get(const struct tft_strtab *t, uint32_t id, size_t *len)
{
	if (id >= t->nents)
		return NULL;
	if (len)
		*len = t->ents[id].len;
	return t->ents[id].ptr;
}

uint32_t tft_strtab_count(const struct tft_strtab *t)
{
	return t->nents;
}
