/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for core/hmap: insert, find, replace, delete, growth, clear,
 * colliding hashes, caller-kept keys, and random operations checked against
 * a naive reference (an array indexed by key) with good and bad hashes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/hmap.h"
#include "tftracer/tftracer.h"
#include "tap.h"

static void test_basic(void)
{
	struct tft_hmap m;
	uint64_t k[3] = { 1, 2, 3 }, k2[3] = { 1, 2, 4 };
	uint32_t h = tft_hmap_hash_words(k, 3), h2 = tft_hmap_hash_words(k2, 3), v;

	tft_hmap_init(&m, 3);
	is_int(tft_hmap_get(&m, k, h), TFT_HMAP_EMPTY, "empty map: no key");
	ok(!tft_hmap_del(&m, k, h), "empty map: nothing to delete");
	is_int(tft_hmap_put(&m, k, h, 10), 0, "put");
	is_int(tft_hmap_get(&m, k, h), 10, "get after put");
	is_int(tft_hmap_get(&m, k2, h2), TFT_HMAP_EMPTY, "another key is missing");
	is_int(tft_hmap_put(&m, k, h, 11), 0, "put again");
	is_int(tft_hmap_get(&m, k, h), 11, "put replaces");
	is_int(m.count, 1, "one entry");
	v = 20;
	is_int(tft_hmap_add(&m, k, h, &v), 1, "add finds the key");
	is_int(v, 11, "add returns its value");
	v = 20;
	is_int(tft_hmap_add(&m, k2, h2, &v), 0, "add inserts a new key");
	is_int(tft_hmap_get(&m, k2, h2), 20, "the added value");
	ok(tft_hmap_del(&m, k, h), "delete");
	is_int(tft_hmap_get(&m, k, h), TFT_HMAP_EMPTY, "gone after delete");
	is_int(tft_hmap_get(&m, k2, h2), 20, "the other key stays");
	ok(!tft_hmap_del(&m, k, h), "second delete finds nothing");
	tft_hmap_clear(&m);
	is_int(m.count, 0, "clear empties");
	is_int(tft_hmap_get(&m, k2, h2), TFT_HMAP_EMPTY, "nothing after clear");
	tft_hmap_fini(&m);
}

/* Many keys with one hash: every lookup walks one long chain, deletes shift it. */
static void test_collisions(void)
{
	struct tft_hmap m;
	int good = 1;

	tft_hmap_init(&m, 1);
	for (uint64_t i = 0; i < 500; i++)
		if (tft_hmap_put(&m, &i, 7, (uint32_t)i * 3))
			good = 0;
	for (uint64_t i = 0; i < 500; i++)
		if (tft_hmap_get(&m, &i, 7) != (uint32_t)i * 3)
			good = 0;
	ok(good, "500 keys of one hash: all found");
	for (uint64_t i = 0; i < 500; i += 2)
		if (!tft_hmap_del(&m, &i, 7))
			good = 0;
	for (uint64_t i = 0; i < 500; i++)
		if (tft_hmap_get(&m, &i, 7) != (i % 2 ? (uint32_t)i * 3 : TFT_HMAP_EMPTY))
			good = 0;
	ok(good, "every other deleted: the rest still found");
	is_int(m.count, 250, "250 left");
	tft_hmap_fini(&m);

	/* hashes that differ only above the mask, wrapping at the table's end */
	tft_hmap_init(&m, 2);
	for (uint64_t i = 0; i < 12; i++) {
		uint64_t k[2] = { i, ~i };
		tft_hmap_put(&m, k, (uint32_t)(15 + (i << 20)), (uint32_t)i);
	}
	for (uint64_t i = 0; i < 12; i += 3) {
		uint64_t k[2] = { i, ~i };
		tft_hmap_del(&m, k, (uint32_t)(15 + (i << 20)));
	}
	for (uint64_t i = 0; i < 12; i++) {
		uint64_t k[2] = { i, ~i };
		if (tft_hmap_get(&m, k, (uint32_t)(15 + (i << 20))) != (i % 3 ? (uint32_t)i : TFT_HMAP_EMPTY))
			good = 0;
	}
	ok(good, "chains wrapping past the last slot survive deletes");
	tft_hmap_fini(&m);
}

static uint64_t rng_state = 0x853c49e6748fea9bULL;

static uint32_t rnd(uint32_t n)
{
	rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)(rng_state >> 33) % n;
}

#define UNIVERSE 3000u

/* Random puts, adds, deletes, lookups and clears against ref[key] (TFT_HMAP_EMPTY: absent). */
static void random_ops(unsigned hash_bits, uint32_t ops, const char *what)
{
	static uint32_t ref[UNIVERSE];
	struct tft_hmap m;
	uint32_t n = 0, bad = 0;

	tft_hmap_init(&m, 3);
	for (uint32_t i = 0; i < UNIVERSE; i++)
		ref[i] = TFT_HMAP_EMPTY;
	for (uint32_t op = 0; op < ops && !bad; op++) {
		uint32_t x = rnd(UNIVERSE), r = rnd(100), v;
		uint64_t k[3] = { x, (uint64_t)x << 40, x ^ 0x5555 };
		uint32_t h = tft_hmap_hash_words(k, 3);
		if (hash_bits < 32)
			h &= (1u << hash_bits) - 1;
		if (r < 35) {
			v = rnd(1000000);
			if (tft_hmap_put(&m, k, h, v))
				bad++;
			n += ref[x] == TFT_HMAP_EMPTY;
			ref[x] = v;
		} else if (r < 45) {
			v = rnd(1000000);
			int a = tft_hmap_add(&m, k, h, &v);
			if (a != (ref[x] != TFT_HMAP_EMPTY) || (a == 1 && v != ref[x]))
				bad++;
			if (a == 0) {
				ref[x] = v;
				n++;
			}
		} else if (r < 75) {
			if (tft_hmap_del(&m, k, h) != (ref[x] != TFT_HMAP_EMPTY))
				bad++;
			n -= ref[x] != TFT_HMAP_EMPTY;
			ref[x] = TFT_HMAP_EMPTY;
		} else if (r < 99 || rnd(100) != 0) {
			if (tft_hmap_get(&m, k, h) != ref[x])
				bad++;
		} else {
			tft_hmap_clear(&m);
			for (uint32_t i = 0; i < UNIVERSE; i++)
				ref[i] = TFT_HMAP_EMPTY;
			n = 0;
		}
		if (m.count != n)
			bad++;
		if ((op & 4095) == 0) /* every key, now and then */
			for (uint32_t i = 0; i < UNIVERSE; i++) {
				uint64_t kk[3] = { i, (uint64_t)i << 40, i ^ 0x5555 };
				uint32_t hh = tft_hmap_hash_words(kk, 3);
				if (hash_bits < 32)
					hh &= (1u << hash_bits) - 1;
				if (tft_hmap_get(&m, kk, hh) != ref[i])
					bad++;
			}
	}
	ok(bad == 0, "random operations match the reference (%s)", what);
	tft_hmap_fini(&m);
}

/* Caller-kept keys: strings in the caller's array, the map holding their index. */
struct strs {
	const char **s;
};

struct probe {
	const char *p;
	size_t n;
};

static bool str_eq(const void *ctx, const void *key, uint32_t val)
{
	const struct strs *t = ctx;
	const struct probe *k = key;

	return strlen(t->s[val]) == k->n && memcmp(t->s[val], k->p, k->n) == 0;
}

static void test_ext(void)
{
	static const char *words[] = { "alpha", "beta", "gamma", "delta", "alpha", "beta", "" };
	const char *kept[64];
	struct strs t = { kept };
	struct tft_hmap m;
	uint32_t firsts[7];
	int good = 1;

	tft_hmap_init_ext(&m, str_eq, &t);
	for (uint32_t i = 0; i < 7; i++) {
		struct probe k = { words[i], strlen(words[i]) };
		uint32_t v = i;
		kept[i] = words[i];
		tft_hmap_add(&m, &k, (uint32_t)tft_hash_fast(k.p, k.n, 0), &v);
		firsts[i] = v;
	}
	ok(firsts[0] == 0 && firsts[1] == 1 && firsts[4] == 0 && firsts[5] == 1 && firsts[6] == 6,
	   "caller-kept keys: a repeated string finds its first index");
	is_int(m.count, 5, "five distinct strings");
	/* clearing many times after one large fill: the slots shrink back */
	char buf[4096][8];
	const char *many[4096];
	t.s = many;
	for (uint32_t i = 0; i < 4096; i++) {
		snprintf(buf[i], sizeof(buf[i]), "k%u", i);
		many[i] = buf[i];
	}
	tft_hmap_clear(&m);
	for (uint32_t i = 0; i < 4096; i++) {
		struct probe k = { many[i], strlen(many[i]) };
		if (tft_hmap_put(&m, &k, (uint32_t)tft_hash_fast(k.p, k.n, 0), i))
			good = 0;
	}
	uint32_t big = m.mask + 1;
	tft_hmap_clear(&m);
	struct probe k0 = { many[5], strlen(many[5]) };
	tft_hmap_put(&m, &k0, (uint32_t)tft_hash_fast(k0.p, k0.n, 0), 5);
	tft_hmap_clear(&m);
	ok(good && big >= 4096 && (m.slots == NULL || m.mask + 1 < big),
	   "a clear after a large fill gives the slots back (%u slots before)", big);
	is_int(tft_hmap_get(&m, &k0, (uint32_t)tft_hash_fast(k0.p, k0.n, 0)), TFT_HMAP_EMPTY,
	       "nothing after the clears");
	tft_hmap_fini(&m);
}

/* Growth keeps every entry: 1M keys of one word. */
static void test_grow(void)
{
	struct tft_hmap m;
	int good = 1;

	tft_hmap_init(&m, 1);
	for (uint64_t i = 0; i < 1000000; i++)
		if (tft_hmap_put(&m, &i, tft_hmap_hash_words(&i, 1), (uint32_t)(i ^ 0xabc)))
			good = 0;
	ok(good && m.count == 1000000, "1M puts");
	ok((m.mask + 1) * 3 >= m.count * 4, "load stays at or under 3/4 (%u slots)", m.mask + 1);
	for (uint64_t i = 0; i < 1000000; i++)
		if (tft_hmap_get(&m, &i, tft_hmap_hash_words(&i, 1)) != (uint32_t)(i ^ 0xabc))
			good = 0;
	ok(good, "all found after growing");
	tft_hmap_fini(&m);
}

/*
 * tft_hmap_get1 (one-word keys) agrees with tft_hmap_get and a reference
 * through puts and deletes, on long chains (colliding 6-bit hashes) too;
 * a zeroed map (never initialised, as in a zeroed struct) finds nothing.
 */
static void test_get1(void)
{
	static uint32_t ref[UNIVERSE];
	struct tft_hmap m, z;
	uint32_t bad = 0;

	memset(&z, 0, sizeof(z));
	is_int(tft_hmap_get1(&z, 5, 5), TFT_HMAP_EMPTY, "get1 on a zeroed map: nothing");
	tft_hmap_fini(&z);
	tft_hmap_init(&m, 1);
	for (uint32_t i = 0; i < UNIVERSE; i++)
		ref[i] = TFT_HMAP_EMPTY;
	for (uint32_t op = 0; op < 200000; op++) {
		uint64_t x = rnd(UNIVERSE);
		uint64_t k = x * 0x100000001ULL; /* high and low words both matter */
		uint32_t h = tft_hmap_hash_words(&k, 1) & 63u, r = rnd(10);
		if (r < 5) {
			ref[x] = rnd(1000000);
			if (tft_hmap_put(&m, &k, h, ref[x]))
				bad++;
		} else if (r < 7) {
			tft_hmap_del(&m, &k, h);
			ref[x] = TFT_HMAP_EMPTY;
		}
		if (tft_hmap_get1(&m, k, h) != ref[x] || tft_hmap_get(&m, &k, h) != ref[x])
			bad++;
	}
	ok(bad == 0, "get1 matches get and the reference");
	tft_hmap_fini(&m);
}

/*
 * tft_hmap_get2 (two-word keys) agrees with tft_hmap_get and a reference the
 * same way; keys that differ in one word only are told apart.
 */
static void test_get2(void)
{
	static uint32_t ref[UNIVERSE];
	struct tft_hmap m, z;
	uint32_t bad = 0;
	uint64_t zk[2] = { 5, 5 };

	memset(&z, 0, sizeof(z));
	is_int(tft_hmap_get2(&z, zk, 5), TFT_HMAP_EMPTY, "get2 on a zeroed map: nothing");
	tft_hmap_init(&m, 2);
	for (uint32_t i = 0; i < UNIVERSE; i++)
		ref[i] = TFT_HMAP_EMPTY;
	for (uint32_t op = 0; op < 200000; op++) {
		uint64_t x = rnd(UNIVERSE);
		uint64_t k[2] = { x & 1 ? x >> 1 : 1ull << 40, x & 1 ? 1ull << 40 : x >> 1 }; /* one word varies */
		uint32_t h = tft_hmap_hash_words(k, 2) & 63u, r = rnd(10);
		if (r < 5) {
			ref[x] = rnd(1000000);
			if (tft_hmap_put(&m, k, h, ref[x]))
				bad++;
		} else if (r < 7) {
			tft_hmap_del(&m, k, h);
			ref[x] = TFT_HMAP_EMPTY;
		}
		if (tft_hmap_get2(&m, k, h) != ref[x] || tft_hmap_get(&m, k, h) != ref[x])
			bad++;
	}
	ok(bad == 0, "get2 matches get and the reference");
	tft_hmap_fini(&m);
}

/* Reserved room: n puts never move the slots, and the load stays at 3/4. */
static void test_reserve(void)
{
	struct tft_hmap m;
	const unsigned char *slots;
	int good = 1;

	tft_hmap_init(&m, 1);
	is_int(tft_hmap_reserve(&m, 1000), 0, "reserve 1000");
	ok((m.mask + 1) * 3 >= 1000 * 4 && m.mask + 1 <= 2048, "1000 entries fit at 3/4 (%u slots)", m.mask + 1);
	slots = m.slots;
	for (uint64_t i = 0; i < 1000; i++)
		if (tft_hmap_put(&m, &i, tft_hmap_hash_words(&i, 1), (uint32_t)i))
			good = 0;
	ok(good && m.slots == slots && m.count == 1000, "1000 puts without growing");
	is_int(tft_hmap_reserve(&m, 10), 0, "a smaller reserve keeps the slots");
	ok(m.slots == slots, "slots kept");
	is_int(tft_hmap_reserve(&m, 5000), 0, "a larger reserve grows");
	for (uint64_t i = 0; i < 1000; i++)
		if (tft_hmap_get1(&m, i, tft_hmap_hash_words(&i, 1)) != (uint32_t)i)
			good = 0;
	ok(good && (m.mask + 1) * 3 >= 5000 * 4, "entries kept through the reserve");
	is_int(tft_hmap_reserve(&m, UINT32_MAX), TFT_ENOMEM, "an impossible reserve: ENOMEM");
	tft_hmap_fini(&m);
}

/* Iteration visits every entry once, with its key and value; an empty or zeroed map none. */
static void test_next(void)
{
	static unsigned char seen[3000];
	struct tft_hmap m, z;
	const struct tft_hmap_slot *s;
	uint32_t i = 0, n = 0, bad = 0;

	memset(&z, 0, sizeof(z));
	ok(tft_hmap_next(&z, &i) == NULL, "a zeroed map: no entries");
	tft_hmap_init(&m, 2);
	i = 0;
	ok(tft_hmap_next(&m, &i) == NULL, "an empty map: no entries");
	for (uint64_t k = 0; k < 3000; k++) {
		uint64_t key[2] = { k, ~k };
		tft_hmap_put(&m, key, tft_hmap_hash_words(key, 2), (uint32_t)k * 7);
	}
	for (uint64_t k = 0; k < 3000; k += 3) {
		uint64_t key[2] = { k, ~k };
		tft_hmap_del(&m, key, tft_hmap_hash_words(key, 2));
	}
	for (i = 0; (s = tft_hmap_next(&m, &i)) != NULL; n++) {
		if (s->key[0] >= 3000 || s->key[1] != ~s->key[0] || s->val != s->key[0] * 7 ||
		    s->key[0] % 3 == 0 || seen[s->key[0]]++)
			bad++;
	}
	ok(bad == 0 && n == 2000 && n == m.count, "every entry once (%u of 2000)", n);
	is_int(tft_hmap_bytes(&m), (m.mask + 1) * (8 + 2 * 8), "bytes: slots times their size");
	is_int(tft_hmap_bytes(&z), 0, "bytes of a zeroed map: 0");
	tft_hmap_fini(&m);
}

int main(void)
{
	test_next();
	test_reserve();
	test_get1();
	test_get2();
	test_basic();
	test_collisions();
	test_grow();
	test_ext();
	random_ops(32, 400000, "full hashes");
	random_ops(4, 20000, "4-bit hashes: long chains");
	random_ops(9, 100000, "9-bit hashes");
	return done_testing();
}
