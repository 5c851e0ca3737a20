/* SPDX-License-Identifier: MIT */
/*
 * A fixed-size map from handles (pointers: cl_kernel, cl_command_queue ...)
 * to values, read without locks on the interceptors' paths and written when
 * a handle is created (a handle the runtime reuses after a release is simply
 * written again). No removal: values are never freed. Also a set of interned
 * strings (kernel names) whose pointers stay valid for the process.
 */
#ifndef TFT_INTERCEPT_PTRMAP_H
#define TFT_INTERCEPT_PTRMAP_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct tft_ptrmap {
	_Atomic uintptr_t *keys; /* owned (mmap): 0 = empty slot */
	void *_Atomic *vals;     /* owned (mmap), beside keys */
	uint32_t mask;           /* slots - 1 */
	_Atomic uint32_t used;
};

/*
 * Reserve room for 2^bits slots (untouched pages cost nothing). 0 or
 * TFT_ENOMEM. A zeroed, uninitialised map reads as empty and refuses puts.
 */
int tft_ptrmap_init(struct tft_ptrmap *m, unsigned bits);
/*
 * Map key (nonzero) to val, replacing what it had. Lock-free; concurrent
 * readers see the old or the new value. 0, or TFT_ENOSPC when 3/4 full.
 */
int tft_ptrmap_put(struct tft_ptrmap *m, uintptr_t key, void *val);
/* The value of key, or NULL. Lock-free, async-signal-safe. */
void *tft_ptrmap_get(const struct tft_ptrmap *m, uintptr_t key);

/*
 * Interned strings: one copy of each, never freed (the names of a program's
 * kernels). Takes a mutex: only for creation paths, never per enqueue.
 */
struct tft_strset {
	pthread_mutex_t lock;
	struct tft_ptrmap by_hash; /* hash -> first string with it (collisions: chained) */
	uint64_t bytes;            /* copied so far */
};
#define TFT_STRSET_MAX_BYTES (64u << 20) /* beyond this, intern returns NULL */
int tft_strset_init(struct tft_strset *s, unsigned bits);
/* The interned copy of str[0..len) (NUL-terminated), or NULL (out of room). */
const char *tft_strset_intern(struct tft_strset *s, const char *str, size_t len);

#endif /* TFT_INTERCEPT_PTRMAP_H */
