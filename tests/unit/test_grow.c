/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for core/grow.h: doubling from the first capacity, a chosen
 * first capacity, the zero fill of the new part, refusal at the uint32
 * capacity limit and at the size_t byte limit, and a failed realloc that
 * leaves the array and its capacity unchanged.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "tftracer/tftracer.h"
#include "tap.h"

/* a refused huge allocation returns NULL under ASan instead of aborting */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "allocator_may_return_null=1";
}

static void test_growth(void)
{
	uint32_t *a = NULL, cap = 0, i;
	size_t *b = NULL, bcap = 0;

	is_int(tft_grow((void **)&a, &cap, 0, sizeof(*a)), 0, "need 0: nothing to do");
	ok(a == NULL && cap == 0, "need 0 allocates nothing");
	is_int(tft_grow((void **)&a, &cap, 1, sizeof(*a)), 0, "first growth");
	is_int(cap, 16, "starts at 16");
	for (i = 0; i < 16; i++)
		a[i] = i;
	is_int(tft_grow((void **)&a, &cap, 16, sizeof(*a)), 0, "need == cap");
	is_int(cap, 16, "need == cap keeps the capacity");
	is_int(tft_grow((void **)&a, &cap, 17, sizeof(*a)), 0, "grow past 16");
	is_int(cap, 32, "doubles");
	is_int(tft_grow((void **)&a, &cap, 1000, sizeof(*a)), 0, "grow far");
	is_int(cap, 1024, "doubles until need fits");
	for (i = 0; i < 16 && a[i] == i; i++)
		;
	is_int(i, 16, "contents kept");
	free(a);

	is_int(tft_grow_size((void **)&b, &bcap, 5, sizeof(*b)), 0, "size_t growth");
	is_int(bcap, 16, "size_t starts at 16");
	is_int(tft_grow_size((void **)&b, &bcap, 33, sizeof(*b)), 0, "size_t grow");
	is_int(bcap, 64, "size_t doubles");
	free(b);

	a = NULL;
	cap = 0;
	is_int(tft_grow_ex((void **)&a, &cap, 3, sizeof(*a), 1024, 0), 0, "first capacity 1024");
	is_int(cap, 1024, "starts at the given first capacity");
	free(a);
	a = NULL;
	cap = 0;
	is_int(tft_grow_ex((void **)&a, &cap, 3, sizeof(*a), 0, 0), 0, "first capacity 0");
	is_int(cap, 4, "first 0 counts as 1");
	free(a);
	a = NULL;
	cap = 3; /* a capacity that is not a power of two (set by a caller) */
	a = malloc(3 * sizeof(*a));
	is_int(tft_grow_ex((void **)&a, &cap, 7, sizeof(*a), 16, 0), 0, "odd capacity");
	is_int(cap, 12, "an odd capacity doubles from itself");
	free(a);
}

static void test_zero(void)
{
	uint64_t *a = NULL;
	uint32_t cap = 0, i, bad = 0;
	size_t *b = NULL, bcap = 0;

	is_int(tft_grow_ex((void **)&a, &cap, 5, sizeof(*a), 8, 1), 0, "zeroed growth");
	is_int(cap, 8, "first 8");
	for (i = 0; i < cap; i++)
		bad += a[i] != 0;
	is_int(bad, 0, "the first block is zero");
	for (i = 0; i < cap; i++)
		a[i] = 0xabababababababab;
	is_int(tft_grow_ex((void **)&a, &cap, 9, sizeof(*a), 8, 1), 0, "zeroed doubling");
	is_int(cap, 16, "doubled to 16");
	for (i = 0, bad = 0; i < 8; i++)
		bad += a[i] != 0xabababababababab;
	is_int(bad, 0, "the old part kept");
	for (i = 8, bad = 0; i < 16; i++)
		bad += a[i] != 0;
	is_int(bad, 0, "the new part zero");
	free(a);

	is_int(tft_grow_size_ex((void **)&b, &bcap, 2, sizeof(*b), 4, 1), 0, "size_t zeroed");
	b[0] = b[1] = b[2] = b[3] = 7;
	is_int(tft_grow_size_ex((void **)&b, &bcap, 5, sizeof(*b), 4, 1), 0, "size_t zeroed doubling");
	ok(bcap == 8 && b[3] == 7 && b[4] == 0 && b[7] == 0, "size_t: old kept, new zero");
	free(b);
}

static void test_limits(void)
{
	/* the helper never touches the elements here: a small block stands in for 2^31 bytes */
	uint8_t *a = malloc(1), *keep = a;
	uint32_t cap = 1u << 31;
	uint8_t *s = malloc(16), *skeep = s;
	size_t scap = 16;

	is_int(tft_grow((void **)&a, &cap, (uint64_t)UINT32_MAX + 1, 1), TFT_ENOMEM,
	       "need past UINT32_MAX refused");
	ok(a == keep && cap == 1u << 31, "refusal leaves array and capacity");
	is_int(tft_grow((void **)&a, &cap, (1u << 31) + 1, 1), TFT_ENOMEM,
	       "doubling past 2^31 refused");
	ok(a == keep && cap == 1u << 31, "refusal leaves array and capacity (2^31 + 1)");
	is_int(tft_grow((void **)&a, &cap, 1u << 31, 1), 0, "need == 2^31 fits");
	free(a);

	is_int(tft_grow_size((void **)&s, &scap, SIZE_MAX / 2, 8), TFT_ENOMEM,
	       "size_t: bytes past SIZE_MAX / 2 refused");
	ok(s == skeep && scap == 16, "size_t refusal leaves array and capacity");
	free(s);
}

static void test_realloc_fails(void)
{
	uint32_t *a = NULL, cap = 0;
	uint8_t *s = NULL;
	size_t scap = 0;

	is_int(tft_grow((void **)&a, &cap, 16, sizeof(*a)), 0, "a small array");
	a[0] = 42;
	/* 2^31 elements of 2^16 bytes: 128 TiB, refused by the allocator */
	{
		uint32_t *keep = a;
		uint32_t cap2 = cap;
		int rc = tft_grow_ex((void **)&a, &cap, 1u << 31, (size_t)1 << 16, 16, 1);

		is_int(rc, TFT_ENOMEM, "a failed realloc is TFT_ENOMEM");
		ok(a == keep && cap == cap2 && a[0] == 42, "a failed realloc leaves the array");
	}
	free(a);

	is_int(tft_grow_size((void **)&s, &scap, 16, 1), 0, "a small byte array");
	s[0] = 7;
	{
		uint8_t *keep = s;
		int rc = tft_grow_size((void **)&s, &scap, (size_t)1 << 50, 1);

		is_int(rc, TFT_ENOMEM, "size_t: a failed realloc is TFT_ENOMEM");
		ok(s == keep && scap == 16 && s[0] == 7, "size_t: a failed realloc leaves the array");
	}
	free(s);
}

int main(void)
{
	test_growth();
	test_zero();
	test_limits();
	test_realloc_fails();
	return done_testing();
}
