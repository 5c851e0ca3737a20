/* SPDX-License-Identifier: MIT */
/*
 * Request-target parsing for the HTTP server (server/query.c): path/query
 * split, cookies and token comparison. The query string's parameters are
 * query/params.h's (struct tft_query). Pure functions over bounded buffers
 * (no I/O, no allocation); fuzzed by fuzz/fuzz_http.c.
 */
#ifndef TFT_SERVER_QUERY_H
#define TFT_SERVER_QUERY_H

#include <stdbool.h>
#include <stddef.h>

#include "query/params.h"

#define TFT_PATH_MAX_BYTES 1024  /* longest accepted path */

/*
 * Split a raw request target ("/api/x?a=1") into its path and query string
 * (both borrowed from target; the query without '?', empty if none; a
 * '#fragment' is dropped). Returns 0, TFT_EINVAL when the target is not an
 * origin-form path (does not start with '/', holds control characters,
 * spaces or bytes >= 0x80), or TFT_ENOSPC when the path or the query is
 * longer than TFT_PATH_MAX_BYTES / TFT_QUERY_MAX_BYTES.
 */
int tft_query_split_target(const char *target, size_t len, const char **path, size_t *path_len,
			   const char **qs, size_t *qs_len);

/*
 * The value of cookie `name` in a Cookie header ("a=1; tft_token=xyz").
 * Returns the value (borrowed from header) and its length, or NULL.
 */
const char *tft_query_cookie(const char *header, size_t header_len, const char *name,
			     size_t *val_len);

/* Compare two byte strings in time independent of where they differ. */
bool tft_query_token_equal(const char *a, size_t alen, const char *b, size_t blen);

#endif /* TFT_SERVER_QUERY_H */
