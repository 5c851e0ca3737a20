/* SPDX-License-Identifier: MIT */
/*
 * Query-string parameters (query/params.c): a parsed "a=1&b=x" and the
 * typed lookups and text helpers the query answers (query/viewport.c,
 * slice.c, search.c, stats.c) check their parameters with. Pure functions
 * over bounded buffers, no I/O; knows no HTTP (the request target is
 * server/query.h's).
 */
#ifndef TFT_QUERY_PARAMS_H
#define TFT_QUERY_PARAMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TFT_QUERY_MAX_BYTES 8192 /* longest accepted raw query string */
#define TFT_QUERY_MAX_PARAMS 32  /* most key=value pairs in one query */

struct tft_query_param {
	const char *key; /* borrowed from tft_query.buf; NUL-terminated, decoded */
	const char *val; /* borrowed from tft_query.buf; NUL-terminated, decoded */
	size_t key_len, val_len; /* bytes, without the NUL (values may hold NUL bytes) */
};

/* A parsed query string. Callers declare it; it holds no pointers to the input. */
struct tft_query {
	char buf[TFT_QUERY_MAX_BYTES + 2 * TFT_QUERY_MAX_PARAMS + 2]; /* decoded text */
	struct tft_query_param params[TFT_QUERY_MAX_PARAMS];
	uint32_t count; /* params in use */
};

/*
 * Parse an application/x-www-form-urlencoded query string ('&'-separated
 * key=value pairs, '+' = space, %XX escapes). Empty pairs are skipped; a key
 * without '=' has an empty value. Returns 0, TFT_EFORMAT (bad %-escape or a
 * key with a NUL byte) or TFT_ENOSPC (longer than TFT_QUERY_MAX_BYTES, or
 * more than TFT_QUERY_MAX_PARAMS pairs). q is reset first.
 */
int tft_query_parse(struct tft_query *q, const char *qs, size_t len);

/* The first value of key (borrowed from q) or NULL; *len its length if non-NULL. */
const char *tft_query_get(const struct tft_query *q, const char *key, size_t *len);

/*
 * Integer parameter: absent -> *out = def and 0. Present, it must be a
 * decimal integer (optional '-', digits only, no spaces) within [min, max]:
 * 0, otherwise TFT_EINVAL (*out untouched).
 */
int tft_query_get_i64(const struct tft_query *q, const char *key, int64_t min, int64_t max,
		      int64_t def, int64_t *out);

/*
 * Parse a strict decimal integer from s[0..len) into *out. Returns 0 or
 * TFT_EINVAL (empty, stray characters, overflow).
 */
int tft_query_parse_i64(const char *s, size_t len, int64_t *out);

/*
 * A comma-separated list of unsigned ids ("3,9,12"), at most `max` of them,
 * each < limit; a repeated id is kept once, where it first appears. Returns
 * the count of distinct ids (>= 0), or TFT_EINVAL (malformed), TFT_ENOTFOUND
 * (an id >= limit: no such track) or TFT_ENOSPC (more than max).
 */
int tft_query_parse_u32_list(const char *s, size_t len, uint32_t limit, uint32_t *out, size_t max);

/*
 * Case-insensitive (ASCII) substring search: the first offset of needle in
 * hay, or -1. An empty needle matches at 0.
 */
long tft_query_find_icase(const char *hay, size_t hay_len, const char *needle, size_t needle_len);

/*
 * A comma-separated list of words ("name,args"), each one of words[0..nwords)
 * (non-empty, nwords <= 32): *mask gets bit k for words[k]; repeats are fine.
 * Returns 0, or TFT_EINVAL (empty list, empty item, unknown word).
 */
int tft_query_parse_words(const char *s, size_t len, const char *const *words, unsigned nwords,
			  unsigned *mask);

/*
 * Whether a case-insensitive substring search for needle can match the
 * decimal text of a number as tft_json_fmt_int / tft_json_fmt_double write
 * it: only when every byte is a digit, '-', '+', '.' or 'e'/'E'.
 */
bool tft_query_may_match_number(const char *needle, size_t len);

/*
 * Copy JSON text to out (room for len bytes) without the whitespace outside
 * string literals ("[1, 2]" -> "[1,2]", JSON.stringify's layout); returns the
 * bytes written. Any input is safe: text that is not JSON is copied the same way.
 */
size_t tft_query_json_compact(char *out, const char *json, size_t len);

#endif /* TFT_QUERY_PARAMS_H */
