/* SPDX-License-Identifier: MIT */
/*
 * A bump allocator over a list of blocks that never move: what is taken
 * from it stays valid until tft_arena_free(), which frees it all at once.
 * For parsed documents and the strings a pass keeps (the text proto
 * decoder's values, prof's JSON options, the tf.timeline export's names).
 * A zeroed struct tft_arena is an empty arena with the default block size.
 */
#ifndef TFT_CORE_ARENA_H
#define TFT_CORE_ARENA_H

#include <stddef.h>

#define TFT_ARENA_BLOCK (64u * 1024u) /* default block size */

struct tft_arena_block {
	struct tft_arena_block *next; /* owned */
	size_t used, cap;
	char data[]; /* 8-byte aligned (the header is three words) */
};

struct tft_arena {
	struct tft_arena_block *head; /* owned list, newest first */
	size_t block;                 /* bytes of a new block (0: TFT_ARENA_BLOCK); a larger request gets its own */
};

/* n bytes (not zeroed, not aligned beyond what earlier sizes leave), or NULL when out of memory. */
void *tft_arena_alloc(struct tft_arena *a, size_t n);

/* A copy of s[0 .. n) in the arena (no terminator added), or NULL when out of memory. */
char *tft_arena_dup(struct tft_arena *a, const void *s, size_t n);

/* Free every block; the arena is empty (and usable) again. */
void tft_arena_free(struct tft_arena *a);

#endif /* TFT_CORE_ARENA_H */
