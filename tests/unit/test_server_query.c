/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for src/query/params.c (query-string parameters) and
 * src/server/query.c (request target, cookies, tokens).
 */
#include <stdint.h>
#include <string.h>

#include "core/status.h"
#include "server/query.h"
#include "tap.h"

static struct tft_query q;

static void test_split(void)
{
	const char *p, *qs;
	size_t pl, ql;
	char big[TFT_QUERY_MAX_BYTES + 64];

	is_int(tft_query_split_target("/api/x?a=1&b=2", 14, &p, &pl, &qs, &ql), 0, "split ok");
	ok(pl == 6 && memcmp(p, "/api/x", 6) == 0, "path");
	ok(ql == 7 && memcmp(qs, "a=1&b=2", 7) == 0, "query");
	is_int(tft_query_split_target("/a#frag?x", 9, &p, &pl, &qs, &ql), 0, "fragment ok");
	ok(pl == 2 && ql == 0, "fragment dropped, no query");
	is_int(tft_query_split_target("/a?x=1#f", 8, &p, &pl, &qs, &ql), 0, "query + fragment");
	ok(ql == 3 && memcmp(qs, "x=1", 3) == 0, "query before the fragment");
	is_int(tft_query_split_target("/", 1, &p, &pl, &qs, &ql), 0, "root");
	is_int(tft_query_split_target("", 0, &p, &pl, &qs, &ql), TFT_EINVAL, "empty");
	is_int(tft_query_split_target("api", 3, &p, &pl, &qs, &ql), TFT_EINVAL, "relative");
	is_int(tft_query_split_target("http://h/x", 10, &p, &pl, &qs, &ql), TFT_EINVAL, "absolute form");
	is_int(tft_query_split_target("/a b", 4, &p, &pl, &qs, &ql), TFT_EINVAL, "space");
	is_int(tft_query_split_target("/a\x01", 3, &p, &pl, &qs, &ql), TFT_EINVAL, "control");
	is_int(tft_query_split_target("/\xc3\xa9", 3, &p, &pl, &qs, &ql), TFT_EINVAL, "raw non-ASCII");
	memset(big, 'a', sizeof(big));
	big[0] = '/';
	big[10] = '?';
	is_int(tft_query_split_target(big, sizeof(big), &p, &pl, &qs, &ql), TFT_ENOSPC, "query too long");
	is_int(tft_query_split_target(big, 11 + TFT_QUERY_MAX_BYTES, &p, &pl, &qs, &ql), 0,
	       "query at the limit");
	big[10] = 'a';
	is_int(tft_query_split_target(big, TFT_PATH_MAX_BYTES + 1, &p, &pl, &qs, &ql), TFT_ENOSPC,
	       "path too long");
}

static void test_parse(void)
{
	size_t len;
	const char *v;
	int64_t i;

	is_int(tft_query_parse(&q, "a=1&b=x%20y+z&&c&d=%41%42&a=2", 29), 0, "parse");
	is_int(q.count, 5, "5 pairs (empty skipped)");
	is_str(tft_query_get(&q, "a", NULL), "1", "first a wins");
	is_str(tft_query_get(&q, "b", NULL), "x y z", "%20 and +");
	v = tft_query_get(&q, "c", &len);
	ok(v && len == 0, "key without '='");
	is_str(tft_query_get(&q, "d", NULL), "AB", "hex escapes");
	ok(tft_query_get(&q, "zz", NULL) == NULL, "absent key");
	is_int(tft_query_parse(&q, "a=%4", 4), TFT_EFORMAT, "truncated escape");
	is_int(tft_query_parse(&q, "a=%", 3), TFT_EFORMAT, "bare %");
	is_int(tft_query_parse(&q, "a=%zz", 5), TFT_EFORMAT, "bad hex");
	is_int(tft_query_parse(&q, "a%00b=1", 7), TFT_EFORMAT, "NUL in key");
	is_int(tft_query_parse(&q, "a=%00", 5), 0, "NUL in value is kept");
	v = tft_query_get(&q, "a", &len);
	ok(v && len == 1 && v[0] == '\0', "value with NUL");
	is_int(tft_query_parse(&q, "x=%2e%2E", 8), 0, "encoded dots");
	is_str(tft_query_get(&q, "x", NULL), "..", "decoded dots");
	{
		char many[400] = "";
		for (int k = 0; k < TFT_QUERY_MAX_PARAMS + 1; k++)
			strcat(many, "k=1&");
		is_int(tft_query_parse(&q, many, strlen(many)), TFT_ENOSPC, "too many pairs");
	}
	is_int(tft_query_parse(&q, "w=1500&t0=-5&t1=9223372036854775807&bad=1x", 42), 0, "ints");
	is_int(tft_query_get_i64(&q, "w", 1, 10000, 1000, &i), 0, "w in range");
	is_int(i, 1500, "w value");
	is_int(tft_query_get_i64(&q, "missing", 1, 10, 7, &i), 0, "default");
	is_int(i, 7, "default value");
	is_int(tft_query_get_i64(&q, "w", 1, 1000, 0, &i), TFT_EINVAL, "w above max");
	is_int(tft_query_get_i64(&q, "t0", INT64_MIN, INT64_MAX, 0, &i), 0, "negative");
	is_int(i, -5, "negative value");
	is_int(tft_query_get_i64(&q, "t1", INT64_MIN, INT64_MAX, 0, &i), 0, "INT64_MAX");
	ok(i == INT64_MAX, "INT64_MAX value");
	is_int(tft_query_get_i64(&q, "bad", 0, 10, 0, &i), TFT_EINVAL, "trailing junk");
}

static void test_ints(void)
{
	int64_t v;

	is_int(tft_query_parse_i64("-9223372036854775808", 20, &v), 0, "INT64_MIN");
	ok(v == INT64_MIN, "INT64_MIN value");
	is_int(tft_query_parse_i64("9223372036854775808", 19, &v), TFT_EINVAL, "overflow");
	is_int(tft_query_parse_i64("-9223372036854775809", 20, &v), TFT_EINVAL, "underflow");
	is_int(tft_query_parse_i64("", 0, &v), TFT_EINVAL, "empty");
	is_int(tft_query_parse_i64("-", 1, &v), TFT_EINVAL, "sign only");
	is_int(tft_query_parse_i64("+1", 2, &v), TFT_EINVAL, "plus sign");
	is_int(tft_query_parse_i64(" 1", 2, &v), TFT_EINVAL, "space");
	is_int(tft_query_parse_i64("1e3", 3, &v), TFT_EINVAL, "exponent");
	is_int(tft_query_parse_i64("007", 3, &v), 0, "leading zeros");
	is_int(v, 7, "leading zeros value");
}

static void test_lists(void)
{
	uint32_t ids[8];

	is_int(tft_query_parse_u32_list("3,9,12", 6, 100, ids, 4), 3, "three ids");
	ok(ids[0] == 3 && ids[1] == 9 && ids[2] == 12, "ids");
	is_int(tft_query_parse_u32_list("", 0, 100, ids, 4), 0, "empty list");
	ok(tft_query_parse_u32_list("3,1,3,2,1", 9, 100, ids, 8) == 3 && ids[0] == 3 && ids[1] == 1 && ids[2] == 2,
	   "repeated ids kept once, where first listed");
	is_int(tft_query_parse_u32_list("1,,2", 4, 100, ids, 4), TFT_EINVAL, "empty item");
	is_int(tft_query_parse_u32_list("1,", 2, 100, ids, 4), TFT_EINVAL, "trailing comma");
	is_int(tft_query_parse_u32_list("100", 3, 100, ids, 4), TFT_ENOTFOUND, "id at limit: no such track");
	is_int(tft_query_parse_u32_list("100,x", 5, 100, ids, 4), TFT_EINVAL, "malformed wins over unknown");
	is_int(tft_query_parse_u32_list("-1", 2, 100, ids, 4), TFT_EINVAL, "negative id");
	is_int(tft_query_parse_u32_list("1,2,3,4,5", 9, 100, ids, 4), TFT_ENOSPC, "too many");
	is_int(tft_query_parse_u32_list("99999999999999999999", 20, UINT32_MAX, ids, 4), TFT_EINVAL,
	       "huge id");
}

static void test_cookie_token_find(void)
{
	const char *h = "a=1; tft_token=abc123 ;b=\"q\"; tft_token2=x", *v;
	size_t len;

	v = tft_query_cookie(h, strlen(h), "tft_token", &len);
	ok(v && len == 6 && memcmp(v, "abc123", 6) == 0, "cookie value, spaces trimmed");
	v = tft_query_cookie(h, strlen(h), "b", &len);
	ok(v && len == 1 && v[0] == 'q', "quoted cookie");
	ok(tft_query_cookie(h, strlen(h), "tft", &len) == NULL, "prefix is not a match");
	ok(tft_query_cookie("", 0, "a", &len) == NULL, "empty header");
	ok(tft_query_token_equal("secret", 6, "secret", 6), "equal tokens");
	ok(!tft_query_token_equal("secreT", 6, "secret", 6), "one byte differs");
	ok(!tft_query_token_equal("secret1", 7, "secret", 6), "longer");
	ok(!tft_query_token_equal("secre", 5, "secret", 6), "shorter");
	ok(!tft_query_token_equal("", 0, "secret", 6), "empty");
	is_int(tft_query_find_icase("aten::AddMM", 11, "addmm", 5), 6, "icase find");
	is_int(tft_query_find_icase("aten::mm", 8, "addmm", 5), -1, "not found");
	is_int(tft_query_find_icase("ab", 2, "abc", 3), -1, "needle longer");
	is_int(tft_query_find_icase("x", 1, "", 0), 0, "empty needle");
}

static void test_words(void)
{
	static const char *const words[] = { "name", "cat", "args", "track" };
	unsigned m = 0;

	is_int(tft_query_parse_words("name", 4, words, 4, &m), 0, "one word");
	is_int(m, 1, "bit 0");
	is_int(tft_query_parse_words("track,cat,name,cat", 18, words, 4, &m), 0, "repeats, any order");
	is_int(m, 1 | 2 | 8, "bits of name, cat, track");
	is_int(tft_query_parse_words("name,cat,args,track", 19, words, 4, &m), 0, "all");
	is_int(m, 15, "all bits");
	m = 99;
	is_int(tft_query_parse_words("", 0, words, 4, &m), TFT_EINVAL, "empty list");
	is_int(m, 99, "mask untouched on error");
	is_int(tft_query_parse_words("name,", 5, words, 4, &m), TFT_EINVAL, "trailing comma");
	is_int(tft_query_parse_words(",name", 5, words, 4, &m), TFT_EINVAL, "leading comma");
	is_int(tft_query_parse_words("name,,cat", 9, words, 4, &m), TFT_EINVAL, "empty item");
	is_int(tft_query_parse_words("names", 5, words, 4, &m), TFT_EINVAL, "longer than a word");
	is_int(tft_query_parse_words("nam", 3, words, 4, &m), TFT_EINVAL, "prefix of a word");
	is_int(tft_query_parse_words("NAME", 4, words, 4, &m), TFT_EINVAL, "case matters");
	is_int(tft_query_parse_words("name cat", 8, words, 4, &m), TFT_EINVAL, "space is not a separator");
	is_int(tft_query_parse_words("name\0", 5, words, 4, &m), TFT_EINVAL, "NUL byte");
}

static void test_number_text(void)
{
	ok(tft_query_may_match_number("8218", 4), "digits");
	ok(tft_query_may_match_number("-1.5e+07", 8), "sign, point, exponent");
	ok(tft_query_may_match_number("E", 1), "upper-case exponent");
	ok(tft_query_may_match_number("", 0), "empty needle matches anything");
	ok(!tft_query_may_match_number("0x10", 4), "hex prefix");
	ok(!tft_query_may_match_number("kernel", 6), "a word");
	ok(!tft_query_may_match_number("1,1", 3), "comma (JSON arrays are strings)");
	ok(!tft_query_may_match_number("null", 4), "non-finite numbers are not matched");
}

/* Compact `in` and compare with `want` (both C strings). */
static bool compacts_to(const char *in, const char *want)
{
	char out[64];
	size_t n = tft_query_json_compact(out, in, strlen(in));

	return n == strlen(want) && memcmp(out, want, n) == 0;
}

static void test_json_compact(void)
{
	char out[1];

	ok(compacts_to("[564, 1, 1]", "[564,1,1]"), "array");
	ok(compacts_to("{ \"a b\" : [ \"x  y\" ],\n\t\"c\":1 }\r\n", "{\"a b\":[\"x  y\"],\"c\":1}"),
	   "spaces inside strings kept");
	ok(compacts_to("[\"q\\\" \", 2]", "[\"q\\\" \",2]"), "escaped quote stays inside the string");
	ok(compacts_to("[\"\\\\\", 2]", "[\"\\\\\",2]"), "escaped backslash ends before the quote");
	ok(compacts_to(" \"open  x", "\"open  x"), "unterminated string: copied");
	is_int(tft_query_json_compact(out, "", 0), 0, "empty");
}

int main(void)
{
	test_split();
	test_parse();
	test_ints();
	test_lists();
	test_cookie_token_find();
	test_words();
	test_number_text();
	test_json_compact();
	return done_testing();
}
