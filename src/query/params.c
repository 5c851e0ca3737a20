/* SPDX-License-Identifier: MIT */
/*
 * Query-string parameters: the parsed form of "a=1&b=x" (strict
 * percent-decoding) and the typed lookups and text helpers the query
 * answers (query/viewport.c, slice.c, search.c, stats.c) check their
 * parameters with. Every function here is bounded by its input length and
 * the fixed buffers of struct tft_query; only tft_query_parse_u32_list
 * allocates (a bitmap, freed before it returns). No HTTP: the request
 * target, cookies and tokens are server/query.c's.
 */
#include <stdlib.h>
#include <string.h>

#include "core/ascii.h"
#include "core/status.h"
#include "query/params.h"

/* Decode s[0..len) into out (room for len bytes); returns the length or -1. */
static long decode(char *out, const char *s, size_t len)
{
	size_t i, n = 0;

	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '+') {
			out[n++] = ' ';
		} else if (c == '%') {
			int hi, lo;
			if (i + 2 >= len)
				return -1;
			hi = tft_hexval((unsigned char)s[i + 1]);
			lo = tft_hexval((unsigned char)s[i + 2]);
			if (hi < 0 || lo < 0)
				return -1;
			out[n++] = (char)(hi << 4 | lo);
			i += 2;
		} else {
			out[n++] = (char)c;
		}
	}
	return (long)n;
}

int tft_query_parse(struct tft_query *q, const char *qs, size_t len)
{
	size_t pos = 0, used = 0;

	q->count = 0;
	q->buf[0] = '\0';
	if (len > TFT_QUERY_MAX_BYTES)
		return TFT_ENOSPC;
	while (pos < len) {
		size_t start = pos, eq = SIZE_MAX, end;
		long kl, vl;
		struct tft_query_param *p;

		while (pos < len && qs[pos] != '&') {
			if (qs[pos] == '=' && eq == SIZE_MAX)
				eq = pos;
			pos++;
		}
		end = pos;
		pos++; /* skip '&' */
		if (end == start)
			continue;
		if (q->count == TFT_QUERY_MAX_PARAMS)
			return TFT_ENOSPC;
		if (eq == SIZE_MAX)
			eq = end;
		/* Decoded text never grows; +2 for the two NULs of this pair. */
		if (used + (end - start) + 2 > sizeof(q->buf))
			return TFT_ENOSPC;
		p = &q->params[q->count];
		kl = decode(q->buf + used, qs + start, eq - start);
		if (kl < 0 || memchr(q->buf + used, '\0', (size_t)kl))
			return TFT_EFORMAT;
		p->key = q->buf + used;
		p->key_len = (size_t)kl;
		used += (size_t)kl;
		q->buf[used++] = '\0';
		vl = eq < end ? decode(q->buf + used, qs + eq + 1, end - eq - 1) : 0;
		if (vl < 0)
			return TFT_EFORMAT;
		p->val = q->buf + used;
		p->val_len = (size_t)vl;
		used += (size_t)vl;
		q->buf[used++] = '\0';
		q->count++;
	}
	return 0;
}

const char *tft_query_get(const struct tft_query *q, const char *key, size_t *len)
{
	size_t kl = strlen(key);

	for (uint32_t i = 0; i < q->count; i++) {
		const struct tft_query_param *p = &q->params[i];
		if (p->key_len == kl && memcmp(p->key, key, kl) == 0) {
			if (len)
				*len = p->val_len;
			return p->val;
		}
	}
	return NULL;
}

int tft_query_parse_i64(const char *s, size_t len, int64_t *out)
{
	size_t i = 0;
	int neg = 0;
	uint64_t v = 0, lim;

	if (len > 0 && s[0] == '-') {
		neg = 1;
		i = 1;
	}
	if (i == len || len > 21)
		return TFT_EINVAL;
	lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	for (; i < len; i++) {
		unsigned d = (unsigned char)s[i] - '0';
		if (d > 9)
			return TFT_EINVAL;
		if (v > (lim - d) / 10)
			return TFT_EINVAL;
		v = v * 10 + d;
	}
	if (neg)
		*out = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
	else
		*out = (int64_t)v;
	return 0;
}

int tft_query_get_i64(const struct tft_query *q, const char *key, int64_t min, int64_t max,
		      int64_t def, int64_t *out)
{
	size_t len;
	const char *s = tft_query_get(q, key, &len);
	int64_t v;

	if (!s) {
		*out = def;
		return 0;
	}
	if (tft_query_parse_i64(s, len, &v) != 0 || v < min || v > max)
		return TFT_EINVAL;
	*out = v;
	return 0;
}

/*
 * Drop the repeats of out[0..n), ids < limit (the first of each stays, in
 * order): a list naming one track 4000 times must not cost 4000 times its
 * work.
 */
static size_t unique_u32(uint32_t *out, size_t n, uint32_t limit)
{
	uint8_t *seen = n > 1 ? calloc((size_t)limit / 8 + 1, 1) : NULL;
	size_t m = 0;

	for (size_t i = 0; i < n; i++) {
		uint32_t v = out[i];
		size_t j = 0;

		if (seen) {
			if (seen[v >> 3] & (1u << (v & 7)))
				continue;
			seen[v >> 3] |= (uint8_t)(1u << (v & 7));
		} else { /* one id, or out of memory: quadratic, never wrong */
			while (j < m && out[j] != v)
				j++;
			if (j < m)
				continue;
		}
		out[m++] = v;
	}
	free(seen);
	return m;
}

int tft_query_parse_u32_list(const char *s, size_t len, uint32_t limit, uint32_t *out, size_t max)
{
	size_t pos = 0, n = 0;
	bool unknown = false;

	if (len == 0)
		return 0;
	while (pos <= len) {
		size_t start = pos;
		int64_t v;

		while (pos < len && s[pos] != ',')
			pos++;
		if (pos == start || tft_query_parse_i64(s + start, pos - start, &v) != 0 || v < 0 ||
		    v > UINT32_MAX)
			return TFT_EINVAL;
		if (n == max)
			return TFT_ENOSPC;
		if ((uint64_t)v >= limit)
			unknown = true; /* (the list is checked to its end first: malformed wins) */
		else
			out[n++] = (uint32_t)v;
		pos++;
	}
	return unknown ? TFT_ENOTFOUND : (int)unique_u32(out, n, limit);
}

static inline unsigned char lower(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') ? (unsigned char)(c + 32) : c;
}

long tft_query_find_icase(const char *hay, size_t hay_len, const char *needle, size_t needle_len)
{
	unsigned char first;

	if (needle_len == 0)
		return 0;
	if (needle_len > hay_len)
		return -1;
	first = lower((unsigned char)needle[0]);
	for (size_t i = 0; i + needle_len <= hay_len; i++) {
		size_t j;

		if (lower((unsigned char)hay[i]) != first)
			continue;
		for (j = 1; j < needle_len; j++)
			if (lower((unsigned char)hay[i + j]) != lower((unsigned char)needle[j]))
				break;
		if (j == needle_len)
			return (long)i;
	}
	return -1;
}

int tft_query_parse_words(const char *s, size_t len, const char *const *words, unsigned nwords,
			  unsigned *mask)
{
	unsigned m = 0;
	size_t pos = 0;

	if (len == 0 || nwords > 32)
		return TFT_EINVAL;
	while (pos <= len) {
		size_t start = pos;
		unsigned k;

		while (pos < len && s[pos] != ',')
			pos++;
		for (k = 0; k < nwords; k++)
			if (strlen(words[k]) == pos - start && memcmp(words[k], s + start, pos - start) == 0)
				break;
		/* no word is empty, so an empty item ("a,,b", "a,") is unknown too */
		if (k == nwords || pos == start)
			return TFT_EINVAL;
		m |= 1u << k;
		pos++;
	}
	*mask = m;
	return 0;
}

bool tft_query_may_match_number(const char *needle, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)needle[i];
		if (!(c >= '0' && c <= '9') && c != '-' && c != '+' && c != '.' && c != 'e' && c != 'E')
			return false;
	}
	return true;
}

size_t tft_query_json_compact(char *out, const char *json, size_t len)
{
	size_t n = 0;
	bool in_str = false, esc = false;

	for (size_t i = 0; i < len; i++) {
		char c = json[i];

		if (in_str) {
			out[n++] = c;
			if (esc)
				esc = false;
			else if (c == '\\')
				esc = true;
			else if (c == '"')
				in_str = false;
		} else if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
			in_str = c == '"';
			out[n++] = c;
		}
	}
	return n;
}
