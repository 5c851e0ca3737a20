/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the HTTP server's request-target parsing: path/query
 * split, query decoding, typed lookups, id lists, cookies, the asset table
 * lookup and the case-insensitive search. Checks the invariants the server
 * relies on (bounds, decoded lengths, NUL termination).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "server/assets.h"
#include "server/query.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_query(const struct tft_query *q)
{
	if (q->count > TFT_QUERY_MAX_PARAMS)
		abort();
	for (uint32_t i = 0; i < q->count; i++) {
		const struct tft_query_param *p = &q->params[i];
		if (p->key < q->buf || p->val < q->buf ||
		    p->key + p->key_len >= q->buf + sizeof(q->buf) ||
		    p->val + p->val_len >= q->buf + sizeof(q->buf))
			abort();
		if (p->key[p->key_len] != '\0' || p->val[p->val_len] != '\0')
			abort();
		if (memchr(p->key, '\0', p->key_len))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	const char *path, *qs, *v;
	size_t path_len, qs_len, len;
	static struct tft_query q; /* large: keep it off the stack */
	uint32_t ids[64];
	int64_t i64;
	int rc;

	/* 1. The whole input as a request target. */
	rc = tft_query_split_target(s, size, &path, &path_len, &qs, &qs_len);
	if (rc == 0) {
		if (path != s || path_len == 0 || path_len > size || path_len > TFT_PATH_MAX_BYTES)
			abort();
		if (qs < s || qs + qs_len > s + size || qs_len > TFT_QUERY_MAX_BYTES)
			abort();
		(void)tft_assets_find(path, path_len);
		rc = tft_query_parse(&q, qs, qs_len);
		if (rc == 0) {
			check_query(&q);
			(void)tft_query_get_i64(&q, "t0", INT64_MIN, INT64_MAX, 0, &i64);
			(void)tft_query_get_i64(&q, "width", 1, 10000, 1000, &i64);
			v = tft_query_get(&q, "tracks", &len);
			if (v) {
				rc = tft_query_parse_u32_list(v, len, 1000, ids, 64);
				if (rc > 64)
					abort();
				for (int i = 0; i < rc; i++)
					if (ids[i] >= 1000)
						abort();
			}
			v = tft_query_get(&q, "q", &len);
			if (v)
				(void)tft_query_find_icase(s, size, v, len);
		}
	}

	/* 2. The whole input as a raw query string and as a Cookie header. */
	if (tft_query_parse(&q, s, size) == 0)
		check_query(&q);
	v = tft_query_cookie(s, size, "tft_token", &len);
	if (v && (v < s || v + len > s + size))
		abort();
	(void)tft_query_token_equal(s, size, "0123456789abcdef", 16);

	/* 3. Integers and id lists. */
	if (tft_query_parse_i64(s, size, &i64) == 0 && size == 0)
		abort();
	rc = tft_query_parse_u32_list(s, size, UINT32_MAX, ids, 64);
	if (rc > 64)
		abort();
	if (size > 1) {
		long at = tft_query_find_icase(s + 1, size - 1, s, 1);
		if (at >= (long)(size - 1))
			abort();
	}
	return 0;
}
