/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for core/arena.h: what is taken stays where it is and keeps its
 * bytes while the arena grows (blocks never move), a request larger than a
 * block gets a block of its own, a zeroed arena uses the default block size,
 * sizes that are multiples of 8 keep 8-byte alignment, and an arena freed is
 * empty and usable again.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "tap.h"

static void test_stable(void)
{
	struct tft_arena a = {0};
	char *p[5000];
	char want[32];
	int bad = 0, misaligned = 0;
	size_t blocks = 0;

	for (int i = 0; i < 5000; i++) {
		int n = snprintf(want, sizeof(want), "value %d", i);

		p[i] = tft_arena_dup(&a, want, (size_t)n + 1);
		if (!p[i])
			bad++;
	}
	for (int i = 0; i < 5000 && !bad; i++) {
		snprintf(want, sizeof(want), "value %d", i);
		if (strcmp(p[i], want))
			bad++;
	}
	is_int(bad, 0, "5000 copies keep their bytes while the arena grows");
	for (struct tft_arena_block *b = a.head; b; b = b->next) {
		blocks++;
		if (b->cap != TFT_ARENA_BLOCK)
			misaligned++;
	}
	ok(blocks >= 1 && blocks <= 2, "about 60 KB of copies: one or two default blocks (%zu)", blocks);
	is_int(misaligned, 0, "a zeroed arena's blocks have the default size");
	tft_arena_free(&a);
	ok(a.head == NULL, "freed: empty");
	ok(tft_arena_dup(&a, "again", 6) != NULL && a.head != NULL, "usable again after free");
	tft_arena_free(&a);
}

static void test_sizes(void)
{
	struct tft_arena a = {.block = 256};
	char *small, *big, *after;
	int misaligned = 0;

	small = tft_arena_alloc(&a, 100);
	ok(small != NULL && a.head->cap == 256, "the chosen block size");
	big = tft_arena_alloc(&a, 1000);
	ok(big != NULL && a.head->cap == 1000, "a request larger than a block gets its own block");
	memset(big, 'x', 1000);
	after = tft_arena_alloc(&a, 8);
	ok(after != NULL && a.head->cap == 256, "then a new block of the chosen size");
	memset(small, 'y', 100);
	ok(big[0] == 'x' && big[999] == 'x', "the large block is untouched");
	tft_arena_free(&a);
	for (int i = 0; i < 200; i++) {
		void *q = tft_arena_alloc(&a, 8 * (size_t)(1 + i % 5));

		if (!q || ((uintptr_t)q & 7))
			misaligned++;
	}
	is_int(misaligned, 0, "sizes in multiples of 8: 8-byte aligned");
	ok(tft_arena_dup(&a, NULL, 0) != NULL, "an empty copy is a valid pointer");
	tft_arena_free(&a);
}

int main(void)
{
	test_stable();
	test_sizes();
	return done_testing();
}
