/* SPDX-License-Identifier: MIT */
/*
 * Request-target parsing for the HTTP server: the path/query split, cookies
 * and token comparison. The query string itself is parsed by
 * query/params.c. Pure functions over bounded buffers (no I/O, no
 * allocation); fuzzed by fuzz/fuzz_http.c.
 */
#include <string.h>

#include "core/status.h"
#include "server/query.h"

int tft_query_split_target(const char *target, size_t len, const char **path, size_t *path_len,
			   const char **qs, size_t *qs_len)
{
	size_t i, q = len, end = len;

	*path = target;
	*path_len = 0;
	*qs = target + len;
	*qs_len = 0;
	if (len == 0 || target[0] != '/')
		return TFT_EINVAL;
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)target[i];
		if (c <= 0x20 || c >= 0x7f)
			return TFT_EINVAL;
		if (c == '#') {
			end = i;
			break;
		}
		if (c == '?' && q == len)
			q = i;
	}
	if (q > end)
		q = end;
	if (q > TFT_PATH_MAX_BYTES)
		return TFT_ENOSPC;
	*path_len = q;
	if (q < end) {
		if (end - q - 1 > TFT_QUERY_MAX_BYTES)
			return TFT_ENOSPC;
		*qs = target + q + 1;
		*qs_len = end - q - 1;
	} else {
		*qs = target + end;
	}
	return 0;
}

const char *tft_query_cookie(const char *header, size_t header_len, const char *name,
			     size_t *val_len)
{
	size_t nl = strlen(name), pos = 0;

	while (pos < header_len) {
		size_t start, eq, end;

		while (pos < header_len && (header[pos] == ' ' || header[pos] == '\t'))
			pos++;
		start = pos;
		while (pos < header_len && header[pos] != ';')
			pos++;
		end = pos;
		pos++;
		for (eq = start; eq < end && header[eq] != '='; eq++)
			;
		if (eq < end && eq - start == nl && memcmp(header + start, name, nl) == 0) {
			size_t vs = eq + 1, ve = end;
			while (ve > vs && (header[ve - 1] == ' ' || header[ve - 1] == '\t'))
				ve--;
			if (ve - vs >= 2 && header[vs] == '"' && header[ve - 1] == '"') {
				vs++;
				ve--;
			}
			*val_len = ve - vs;
			return header + vs;
		}
	}
	return NULL;
}

bool tft_query_token_equal(const char *a, size_t alen, const char *b, size_t blen)
{
	/* Compare over the expected length so the time does not depend on a. */
	volatile unsigned char diff = (unsigned char)(alen != blen);

	for (size_t i = 0; i < blen; i++)
		diff |= (unsigned char)((i < alen ? (unsigned char)a[i] : 0) ^ (unsigned char)b[i]);
	return diff == 0;
}

