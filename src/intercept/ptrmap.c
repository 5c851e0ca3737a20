/* SPDX-License-Identifier: MIT */
/*
 * Lock-free handle map and interned strings for the interceptors (see
 * ptrmap.h). Linear probing on a power-of-two table; a slot's key is claimed
 * with a CAS and never given back.
 * (Not core/hmap: lock-free, written from the traced program's threads in
 * its API calls, on mmap'd slots that never move; core/hmap is one writer's
 * and grows with malloc.)
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "core/status.h"
#include "intercept/ptrmap.h"

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

int tft_ptrmap_init(struct tft_ptrmap *m, unsigned bits)
{
	size_t n = (size_t)1 << bits;
	void *k, *v;

	k = mmap(NULL, n * sizeof(*m->keys), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (k == MAP_FAILED)
		return TFT_ENOMEM;
	v = mmap(NULL, n * sizeof(*m->vals), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (v == MAP_FAILED) {
		munmap(k, n * sizeof(*m->keys));
		return TFT_ENOMEM;
	}
	m->keys = k;
	m->vals = v;
	m->mask = (uint32_t)(n - 1);
	atomic_store_explicit(&m->used, 0, memory_order_relaxed);
	return 0;
}

int tft_ptrmap_put(struct tft_ptrmap *m, uintptr_t key, void *val)
{
	uint32_t i;

	if (!m->keys || !key)
		return TFT_EINVAL;
	for (i = (uint32_t)mix(key) & m->mask;; i = (i + 1) & m->mask) {
		uintptr_t k = atomic_load_explicit(&m->keys[i], memory_order_acquire);
		if (k == 0) {
			if (atomic_load_explicit(&m->used, memory_order_relaxed) >= (m->mask + 1) / 4 * 3)
				return TFT_ENOSPC;
			/* Claim the slot; acq_rel pairs with other writers' claims of it. */
			if (!atomic_compare_exchange_strong_explicit(&m->keys[i], &k, key,
								     memory_order_acq_rel,
								     memory_order_acquire)) {
				if (k != key)
					continue; /* another key took it: probe on */
			} else {
				atomic_fetch_add_explicit(&m->used, 1, memory_order_relaxed);
			}
		} else if (k != key) {
			continue;
		}
		/* Release: what val points to is visible to a reader that loads it (acquire). */
		atomic_store_explicit(&m->vals[i], val, memory_order_release);
		return 0;
	}
}

void *tft_ptrmap_get(const struct tft_ptrmap *m, uintptr_t key)
{
	if (!m->keys || !key)
		return NULL;
	for (uint32_t i = (uint32_t)mix(key) & m->mask;; i = (i + 1) & m->mask) {
		uintptr_t k = atomic_load_explicit(&m->keys[i], memory_order_acquire);
		if (k == key) /* Acquire: pairs with the release store in put. */
			return atomic_load_explicit(&m->vals[i], memory_order_acquire);
		if (k == 0)
			return NULL;
	}
}

/* ---- interned strings --------------------------------------------------------------- */

/* A string and the next one with the same hash; the text follows. */
struct strent {
	struct strent *next; /* owned by the set, never freed */
	size_t len;
	char text[];
};

int tft_strset_init(struct tft_strset *s, unsigned bits)
{
	s->bytes = 0;
	pthread_mutex_init(&s->lock, NULL);
	return tft_ptrmap_init(&s->by_hash, bits);
}

static uintptr_t str_hash(const char *p, size_t n)
{
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * 1099511628211ULL;
	return (uintptr_t)(h | 1); /* never 0 (the empty key) */
}

const char *tft_strset_intern(struct tft_strset *s, const char *str, size_t len)
{
	uintptr_t h = str_hash(str, len);
	struct strent *e, *first;

	pthread_mutex_lock(&s->lock);
	first = tft_ptrmap_get(&s->by_hash, h);
	for (e = first; e; e = e->next) {
		if (e->len == len && memcmp(e->text, str, len) == 0) {
			pthread_mutex_unlock(&s->lock);
			return e->text;
		}
	}
	if (s->bytes + len > TFT_STRSET_MAX_BYTES || !(e = malloc(sizeof(*e) + len + 1))) {
		pthread_mutex_unlock(&s->lock);
		return NULL;
	}
	e->next = first;
	e->len = len;
	memcpy(e->text, str, len);
	e->text[len] = 0;
	if (tft_ptrmap_put(&s->by_hash, h, e)) {
		free(e);
		pthread_mutex_unlock(&s->lock);
		return NULL;
	}
	s->bytes += len;
	pthread_mutex_unlock(&s->lock);
	return e->text;
}
