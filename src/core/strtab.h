/* SPDX-License-Identifier: MIT */
/*
 * String interning: byte strings -> dense uint32 ids. Id 0 is always "".
 * Strings are copied into an arena owned by the table and stay at a fixed
 * address until tft_strtab_destroy(), so borrowed pointers remain valid.
 * Not thread-safe.
 */
#ifndef TFT_CORE_STRTAB_H
#define TFT_CORE_STRTAB_H

#include <stddef.h>
#include <stdint.h>

struct tft_strtab;

struct tft_strtab *tft_strtab_create(void);
void tft_strtab_destroy(struct tft_strtab *t);

/* Intern s[0..len); returns its id, or UINT32_MAX when out of memory. */
uint32_t tft_strtab_intern(struct tft_strtab *t, const char *s, size_t len);

/* Look up without inserting: the id, or UINT32_MAX when absent. */
uint32_t tft_strtab_find(const struct tft_strtab *t, const char *s, size_t len);

/* The string for id (NUL-terminated, borrowed) or NULL if id is out of range. */
const char *tft_strtab_get(const struct tft_strtab *t, uint32_t id, size_t *len);

/* Number of ids handed out, including id 0. */
uint32_t tft_strtab_count(const struct tft_strtab *t);

/* 64-bit hash of a byte string (also used by other hash tables). */
uint64_t tft_hash_bytes(const void *p, size_t len);

static inline uint64_t tft_hash_u64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

#endif /* TFT_CORE_STRTAB_H */
