/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the HTTP server's request parsing: path/query split,
 * query decoding, typed lookups, id lists, cookies, the asset table lookup,
 * the case-insensitive search, the Range header, and the search helpers
 * (the in= word list, the number pre-check, JSON compaction). Checks the
 * invariants the server relies on (bounds, decoded lengths, NUL
 * termination, a partial range inside the body, what each helper promises
 * in server/query.h).
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "codec/json_write.h"
#include "core/status.h"
#include "export/web_assets.h"
#include "server/http.h"
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

/*
 * The input as a Range header value against bodies of a few sizes. On a
 * partial answer the part lies inside the body. The set of satisfiable
 * ranges only grows with the size, and nothing else depends on it, so once
 * a size gets an answer other than 416, every larger size gets that answer.
 */
static void check_range(const char *h)
{
	static const uint64_t sizes[] = { 0, 1, 1000, UINT64_MAX }; /* ascending */
	enum tft_http_range prev = TFT_HTTP_RANGE_UNSATISFIED;

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint64_t first = 0, last = 0;
		enum tft_http_range rr = tft_http_parse_range(h, sizes[i], &first, &last);

		switch (rr) {
		case TFT_HTTP_RANGE_PART:
			if (first > last || last >= sizes[i])
				abort();
			break;
		case TFT_HTTP_RANGE_WHOLE:
			break;
		case TFT_HTTP_RANGE_UNSATISFIED:
			/* only a "bytes=" set can be unsatisfiable; anything else is ignored */
			if (strncasecmp(h, "bytes=", 6) != 0)
				abort();
			break;
		default:
			abort();
		}
		if (i > 0 && prev != TFT_HTTP_RANGE_UNSATISFIED && rr != prev)
			abort();
		prev = rr;
	}
}

/*
 * tft_query_parse_words against an independent reading of its contract:
 * 0 exactly when every comma-separated item is one of the words, with the
 * bits of the words named.
 */
static void check_words(const char *s, size_t size, const char *const *words, unsigned nwords)
{
	unsigned mask = 0, want = 0;
	bool valid = size > 0;
	size_t start = 0;
	int rc = tft_query_parse_words(s, size, words, nwords, &mask);

	for (size_t i = 0; valid && i <= size; i++) {
		unsigned k;
		if (i < size && s[i] != ',')
			continue;
		for (k = 0; k < nwords; k++)
			if (strlen(words[k]) == i - start && memcmp(words[k], s + start, i - start) == 0)
				break;
		if (k == nwords)
			valid = false;
		else
			want |= 1u << k;
		start = i + 1;
	}
	if (valid ? rc != 0 || mask != want : rc != TFT_EINVAL)
		abort();
}

/*
 * A needle that occurs in the text of a number must pass
 * tft_query_may_match_number (the search skips formatting numbers when it
 * does not): the input as the needle, and a slice of the number's text
 * chosen by the input, against an integer and a finite double read from it.
 */
static void check_number_needle(const uint8_t *data, size_t size)
{
	char num[2][64];
	size_t n[2];
	int64_t i64 = 0;
	double d = 0;

	memcpy(&i64, data, size < sizeof(i64) ? size : sizeof(i64));
	memcpy(&d, data, size < sizeof(d) ? size : sizeof(d));
	if (!isfinite(d))
		d = (double)i64; /* the search never formats a non-finite double */
	n[0] = tft_json_fmt_int(num[0], i64);
	n[1] = tft_json_fmt_double(num[1], d, false);
	for (int j = 0; j < 2; j++) {
		size_t a = size > 8 ? data[8] % (n[j] + 1) : 0;
		size_t b = size > 9 ? data[9] % (n[j] + 1) : n[j];
		if (a > b) {
			size_t t = a;
			a = b;
			b = t;
		}
		if (!tft_query_may_match_number(num[j] + a, b - a))
			abort();
		if (tft_query_find_icase(num[j], n[j], (const char *)data, size) >= 0 &&
		    !tft_query_may_match_number((const char *)data, size))
			abort();
	}
}

static bool is_json_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/*
 * tft_query_json_compact writes at most len bytes (out is exactly that
 * big, so ASan sees any overrun), only drops whitespace, and leaves nothing
 * to drop: compacting its output again changes nothing.
 */
static void check_json_compact(const char *s, size_t size)
{
	char *out = malloc(size ? size : 1), *again = malloc(size ? size : 1);
	size_t n, n2, j = 0;

	if (!out || !again)
		goto out;
	n = tft_query_json_compact(out, s, size);
	if (n > size)
		abort();
	for (size_t i = 0; i < size; i++) { /* out is s with some whitespace removed */
		if (j < n && out[j] == s[i])
			j++;
		else if (!is_json_space(s[i]))
			abort();
	}
	if (j != n)
		abort();
	n2 = tft_query_json_compact(again, out, n);
	if (n2 != n || memcmp(again, out, n) != 0)
		abort();
out:
	free(out);
	free(again);
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

	/* 4. The input as a Range header value (a C string: up to its first NUL),
	 * as it is and after "bytes=", so that the range grammar is reached. */
	{
		char *h = malloc(size + 7);
		if (h) {
			memcpy(h, data, size);
			h[size] = '\0';
			check_range(h);
			memcpy(h, "bytes=", 6);
			memcpy(h + 6, data, size);
			h[size + 6] = '\0';
			check_range(h);
			free(h);
		}
	}

	/* 5. The search helpers: the in= list with the server's words and with
	 * 32 one-letter words (bit 31 included), the number pre-check, and JSON
	 * compaction. */
	{
		static const char *const fields[] = { "name", "cat", "args", "track" };
		static const char *const letters[] = {
			"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p",
			"q", "r", "s", "t", "u", "v", "w", "x", "y", "z", "0", "1", "2", "3", "4", "5",
			"6", /* a 33rd word, for the call that must refuse 33 */
		};
		unsigned mask;

		check_words(s, size, fields, 4);
		check_words(s, size, letters, 32);
		check_words(s, size, letters, 0);
		if (tft_query_parse_words(s, size, letters, 33, &mask) != TFT_EINVAL)
			abort(); /* more words than mask bits */
		check_number_needle(data, size);
		check_json_compact(s, size);
	}
	return 0;
}
