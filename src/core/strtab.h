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

/*
 * A faster 64-bit hash of a byte string for in-memory tables that never
 * store or print it (the string table, the importers' memo caches).
 * Independent multiply-xor lanes (four for 32-byte blocks, then two) keep
 * the multiplier busy instead of waiting on one latency chain; each step is
 * a bijection of its lane's state, so no input word can wipe what came
 * before. Its values differ from tft_hash_bytes(), which stays as it is:
 * flow ids and other stored values derive from that one.
 */
static inline uint64_t tft_hash_fast(const void *p, size_t len, uint64_t seed)
{
	const uint64_t k1 = 0xbf58476d1ce4e5b9ULL, k2 = 0x94d049bb133111ebULL;
	const unsigned char *s = p, *start = p;
	uint64_t a = seed ^ 0x9e3779b97f4a7c15ULL ^ (len * 0x100000001b3ULL);
	uint64_t b = seed ^ 0x6a09e667f3bcc909ULL;

	if (len >= 32) {
		uint64_t c = seed ^ 0xbb67ae8584caa73bULL, d = seed ^ 0x3c6ef372fe94f82bULL;

		do {
			uint64_t w[4];

			__builtin_memcpy(w, s, 32);
			a = (a ^ w[0]) * k1;
			b = (b ^ w[1]) * k2;
			c = (c ^ w[2]) * k1;
			d = (d ^ w[3]) * k2;
			a ^= a >> 31;
			b ^= b >> 29;
			c ^= c >> 31;
			d ^= d >> 29;
			s += 32;
			len -= 32;
		} while (len >= 32);
		a = (a ^ (c << 21 | c >> 43)) * k1;
		b = (b ^ (d << 43 | d >> 21)) * k2;
		a ^= a >> 31;
		b ^= b >> 29;
	}
	while (len >= 16) {
		uint64_t x, y;

		__builtin_memcpy(&x, s, 8);
		__builtin_memcpy(&y, s + 8, 8);
		a = (a ^ x) * k1;
		b = (b ^ y) * k2;
		a ^= a >> 31;
		b ^= b >> 29;
		s += 16;
		len -= 16;
	}
	if (len >= 8) {
		uint64_t x;

		__builtin_memcpy(&x, s, 8);
		a = (a ^ x) * k1;
		a ^= a >> 31;
		s += 8;
		len -= 8;
	}
	if (len) {
		/* The last 1-7 bytes without a byte loop (the total length is already in a). */
		uint64_t y;

		if (s + len - start >= 8) {
			__builtin_memcpy(&y, s + len - 8, 8); /* overlaps hashed bytes */
		} else if (len >= 4) {
			uint32_t lo, hi;

			__builtin_memcpy(&lo, s, 4);
			__builtin_memcpy(&hi, s + len - 4, 4);
			y = (uint64_t)lo << 32 | hi;
		} else {
			y = (uint64_t)s[0] << 16 | (uint64_t)s[len / 2] << 8 | s[len - 1];
		}
		b = (b ^ y) * k2;
		b ^= b >> 29;
	}
	return tft_hash_u64(a ^ (b * 0xff51afd7ed558ccdULL));
}

#endif /* TFT_CORE_STRTAB_H */
