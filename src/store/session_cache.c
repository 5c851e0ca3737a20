/* SPDX-License-Identifier: MIT */
/*
 * The session reader's chunk cache: decoded chunks found by rowid (a hash)
 * and kept in an LRU list within a byte budget; a refresh detaches entries
 * that scans still pin.
 * (Not core/hmap: an LRU cache that evicts, its buckets chaining the cache
 * entries themselves, which scans pin and a refresh detaches, not a map to
 * a 32-bit value.)
 */
#include <stdlib.h>
#include <string.h>

#include "core/strtab.h"
#include "store/session_int.h"

static inline uint32_t cache_bucket(const struct tft_sess_file *s, int64_t rowid)
{
	return (uint32_t)tft_hash_u64((uint64_t)rowid) & (s->hcap - 1);
}

struct cache_ent *tft_sess_cache_find(const struct tft_sess_file *s, int64_t rowid)
{
	if (!s->hcap)
		return NULL;
	for (struct cache_ent *c = s->htab[cache_bucket(s, rowid)]; c; c = c->hnext)
		if (c->rowid == rowid)
			return c;
	return NULL;
}

static void hash_remove(struct tft_sess_file *s, struct cache_ent *c)
{
	struct cache_ent **pp;

	if (c->rowid < 0)
		return;
	for (pp = &s->htab[cache_bucket(s, c->rowid)]; *pp; pp = &(*pp)->hnext)
		if (*pp == c) {
			*pp = c->hnext;
			break;
		}
	c->hnext = NULL;
	c->rowid = -1;
}

/* Insert c (rowid set) into the hash; grows the buckets to one per entry. */
int tft_sess_hash_insert(struct tft_sess_file *s, struct cache_ent *c)
{
	uint32_t b;

	if (s->nent >= s->hcap) {
		uint32_t ncap = s->hcap ? s->hcap * 2 : 64;
		struct cache_ent **nt = calloc(ncap, sizeof(*nt));
		if (!nt)
			return TFT_ENOMEM;
		for (uint32_t i = 0; i < s->hcap; i++)
			for (struct cache_ent *e = s->htab[i], *nx; e; e = nx) {
				nx = e->hnext;
				b = (uint32_t)tft_hash_u64((uint64_t)e->rowid) & (ncap - 1);
				e->hnext = nt[b];
				nt[b] = e;
			}
		free(s->htab);
		s->htab = nt;
		s->hcap = ncap;
	}
	b = cache_bucket(s, c->rowid);
	c->hnext = s->htab[b];
	s->htab[b] = c;
	return 0;
}

void tft_sess_lru_unlink(struct tft_sess_file *s, struct cache_ent *c)
{
	if (c->prev)
		c->prev->next = c->next;
	else
		s->lru_head = c->next;
	if (c->next)
		c->next->prev = c->prev;
	else
		s->lru_tail = c->prev;
	c->prev = c->next = NULL;
}

void tft_sess_lru_push_back(struct tft_sess_file *s, struct cache_ent *c)
{
	c->next = NULL;
	c->prev = s->lru_tail;
	if (s->lru_tail)
		s->lru_tail->next = c;
	s->lru_tail = c;
	if (!s->lru_head)
		s->lru_head = c;
}

void tft_sess_lru_push_front(struct tft_sess_file *s, struct cache_ent *c)
{
	c->prev = NULL;
	c->next = s->lru_head;
	if (s->lru_head)
		s->lru_head->prev = c;
	s->lru_head = c;
	if (!s->lru_tail)
		s->lru_tail = c;
}

/* Take an (unpinned) entry out of the cache; the caller reuses or frees it. */
void tft_sess_cache_detach(struct tft_sess_file *s, struct cache_ent *c)
{
	hash_remove(s, c);
	tft_sess_lru_unlink(s, c);
	s->cache_bytes -= c->bytes;
	s->nent--;
	c->bytes = 0;
	if (s->stream_ent == c)
		s->stream_ent = NULL;
}

/* Take the least recently used unpinned entry (not `keep`) out of the cache. */
struct cache_ent *tft_sess_cache_take_lru(struct tft_sess_file *s, const struct cache_ent *keep)
{
	for (struct cache_ent *c = s->lru_tail; c; c = c->prev) {
		if (c->pins || c == keep)
			continue;
		tft_sess_cache_detach(s, c);
		return c;
	}
	return NULL;
}

void tft_sess_ent_free(struct cache_ent *c)
{
	tft_chunk_dec_fini(&c->dec);
	free(c);
}

/* Evict least recently used entries until the cache fits its budget. */
void tft_sess_cache_trim(struct tft_sess_file *s, const struct cache_ent *keep)
{
	while (s->cache_bytes > s->cache_budget) {
		struct cache_ent *c = tft_sess_cache_take_lru(s, keep);
		if (!c)
			break; /* everything left is pinned (nested scans) */
		tft_sess_ent_free(c);
	}
}

/* After a refresh rowids may name other chunks: drop everything not pinned,
 * detach the pinned entries (freed once evicted). */
void tft_sess_cache_clear(struct tft_sess_file *s)
{
	struct cache_ent *c, *prev;

	for (c = s->lru_tail; c; c = prev) {
		prev = c->prev;
		if (c->pins) {
			hash_remove(s, c);
			continue;
		}
		tft_sess_cache_detach(s, c);
		tft_sess_ent_free(c);
	}
}

void tft_sess_set_cache_bytes(void *impl, size_t bytes)
{
	struct tft_sess_file *s = impl;

	s->cache_budget = bytes ? bytes : CACHE_BYTES_DEFAULT;
	tft_sess_cache_trim(s, NULL);
}

