/* SPDX-License-Identifier: MIT */
/*
 * Error reporting for readers and writers: a status code plus where in the
 * input it went wrong (file, byte offset, message path) and what was expected.
 */
#ifndef TFT_CORE_STATUS_H
#define TFT_CORE_STATUS_H

#include <stdint.h>
#include <stddef.h>
#include "tftracer/tftracer.h"

#define TFT_ERROR_MSG_MAX 320

/*
 * Filled by a failing reader/writer. Callers may pass NULL where they do not
 * care. `offset` is a byte offset into the (decompressed) input, or -1 when
 * the failure has no position (I/O, memory).
 */
struct tft_error {
	int code;                    /* enum tft_status */
	int64_t offset;              /* byte offset in the input, -1 if none */
	char file[256];              /* input path ("" if none) */
	char msg[TFT_ERROR_MSG_MAX]; /* what was expected / what failed */
};

void tft_error_clear(struct tft_error *err);

/*
 * Set err (if non-NULL) and return `code`, so callers can write
 * `return tft_error_set(err, TFT_EFORMAT, off, "expected ':' after key");`.
 * Does not overwrite an error already set (the first, deepest cause wins).
 */
int tft_error_set(struct tft_error *err, int code, int64_t offset, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Attach the file name to an error that does not have one yet. */
void tft_error_set_file(struct tft_error *err, const char *file);

/*
 * Format as one line: "FILE: byte OFFSET: MSG" (parts omitted when unknown).
 * Returns buf.
 */
const char *tft_error_format(const struct tft_error *err, char *buf, size_t size);

#define TFT_ASSERT(cond)                                                       \
	do {                                                                   \
		if (__builtin_expect(!(cond), 0))                              \
			tft_assert_fail(#cond, __FILE__, __LINE__, __func__);  \
	} while (0)

__attribute__((noreturn, cold)) void tft_assert_fail(const char *expr, const char *file,
						     int line, const char *func);

#define tft_likely(x) __builtin_expect(!!(x), 1)
#define tft_unlikely(x) __builtin_expect(!!(x), 0)

#endif /* TFT_CORE_STATUS_H */
