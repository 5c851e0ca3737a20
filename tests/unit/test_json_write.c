/* SPDX-License-Identifier: MIT */
/* Unit tests for codec/json_write: escaping, UTF-8 policy, numbers, ns->us, structure, sinks. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codec/json_write.h"
#include "core/status.h"
#include "tap.h"

static char *esc(const char *s, size_t len)
{
	static char buf[4096];
	size_t n = tft_json_escape(buf, s, len);

	buf[n] = '\0';
	return buf;
}

static void test_escape(void)
{
	is_str(esc("plain", 5), "plain", "ASCII copied");
	is_str(esc("a\"b\\c", 5), "a\\\"b\\\\c", "quote and backslash escaped");
	is_str(esc("\b\f\n\r\t", 5), "\\b\\f\\n\\r\\t", "short escapes");
	is_str(esc("\x01\x1f", 2), "\\u0001\\u001f", "other controls as \\u00XX");
	is_str(esc("a\0b", 3), "a\\u0000b", "NUL inside a string");
	is_str(esc("\x7f/", 2), "\x7f/", "DEL and '/' copied");
	is_str(esc("\xC2\xB5s \xE2\x82\xAC \xF0\x9F\x98\x80", 12), "\xC2\xB5s \xE2\x82\xAC \xF0\x9F\x98\x80",
	       "valid 2-, 3-, 4-byte UTF-8 copied");
	is_str(esc("\x80", 1), "\xEF\xBF\xBD", "stray continuation -> U+FFFD");
	is_str(esc("a\xC3", 2), "a\xEF\xBF\xBD", "truncated sequence at end -> U+FFFD");
	is_str(esc("\xC3(", 2), "\xEF\xBF\xBD(", "bad continuation: lead replaced, next byte kept");
	is_str(esc("\xC0\xAF", 2), "\xEF\xBF\xBD\xEF\xBF\xBD", "overlong C0 AF -> two U+FFFD");
	is_str(esc("\xE0\x80\xAF", 3), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD", "overlong E0 80 AF");
	is_str(esc("\xED\xA0\x80", 3), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD", "UTF-16 surrogate rejected");
	is_str(esc("\xF4\x90\x80\x80", 4),
	       "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD", "above U+10FFFF rejected");
	is_str(esc("\xF4\x8F\xBF\xBF", 4), "\xF4\x8F\xBF\xBF", "U+10FFFF accepted");
	is_str(esc("\xFF", 1), "\xEF\xBF\xBD", "0xFF -> U+FFFD");

	/* worst case fits the bound */
	char in[64], out[64 * 6];
	memset(in, 1, sizeof(in));
	ok(tft_json_escape(out, in, sizeof(in)) == tft_json_escape_bound(sizeof(in)),
	   "all-control input uses exactly the bound");
}

static const char *fmt_i(int64_t v)
{
	static char b[32];

	b[tft_json_fmt_int(b, v)] = '\0';
	return b;
}

static const char *fmt_us(int64_t v)
{
	static char b[32];

	b[tft_json_fmt_ns_us(b, v)] = '\0';
	return b;
}

static const char *fmt_d(double v, bool keep)
{
	static char b[48];

	b[tft_json_fmt_double(b, v, keep)] = '\0';
	return b;
}

static void test_numbers(void)
{
	char b[32];

	is_str(fmt_i(0), "0", "int 0");
	is_str(fmt_i(7), "7", "int 7");
	is_str(fmt_i(10), "10", "int 10");
	is_str(fmt_i(-42), "-42", "int -42");
	is_str(fmt_i(1234567890123LL), "1234567890123", "int 13 digits");
	is_str(fmt_i(INT64_MAX), "9223372036854775807", "INT64_MAX");
	is_str(fmt_i(INT64_MIN), "-9223372036854775808", "INT64_MIN");
	b[tft_json_fmt_uint(b, UINT64_MAX)] = '\0';
	is_str(b, "18446744073709551615", "UINT64_MAX");
	for (int64_t v = -1000; v <= 1000; v += 7) {
		char want[32];
		snprintf(want, sizeof(want), "%lld", (long long)v);
		if (strcmp(fmt_i(v), want) != 0) {
			ok(0, "int %lld", (long long)v);
			return;
		}
	}
	ok(1, "ints -1000..1000 match printf");

	is_str(fmt_us(1234567), "1234.567", "1234567 ns -> 1234.567");
	is_str(fmt_us(1234500), "1234.5", "trailing zeros dropped");
	is_str(fmt_us(1234560), "1234.56", "two decimals");
	is_str(fmt_us(1234000), "1234", "whole microseconds have no point");
	is_str(fmt_us(1234005), "1234.005", "leading zero decimals kept");
	is_str(fmt_us(0), "0", "0 ns");
	is_str(fmt_us(1), "0.001", "1 ns");
	is_str(fmt_us(-1), "-0.001", "-1 ns");
	is_str(fmt_us(-1500), "-1.5", "-1500 ns");
	is_str(fmt_us(1527874900607604123LL), "1527874900607604.123", "epoch ns stays exact");
	is_str(fmt_us(INT64_MAX), "9223372036854775.807", "INT64_MAX ns");
	is_str(fmt_us(INT64_MIN), "-9223372036854775.808", "INT64_MIN ns");

	is_str(fmt_d(4096, false), "4096", "integral double without point");
	is_str(fmt_d(4096, true), "4096.0", "integral double keeps .0");
	is_str(fmt_d(-3, true), "-3.0", "negative integral");
	is_str(fmt_d(0.5, true), "0.5", "0.5");
	is_str(fmt_d(0.1, false), "0.1", "0.1 is shortest");
	is_str(fmt_d(1.0 / 3.0, false), "0.3333333333333333", "1/3 needs 16 digits");
	is_str(fmt_d(1e300, true), "1e+300", "big exponent keeps e form");
	is_str(fmt_d(NAN, true), "null", "NaN -> null");
	is_str(fmt_d(INFINITY, false), "null", "inf -> null");
	const double samples[] = { 0.1 + 0.2, 5e-324, DBL_MAX, 123456.789e3, -2.5e-7, 1e15 + 0.5,
				   3.141592653589793, 1e16, 9007199254740993.0 };
	int bad = 0;
	for (size_t i = 0; i < sizeof(samples) / sizeof(samples[0]); i++)
		if (strtod(fmt_d(samples[i], false), NULL) != samples[i])
			bad++;
	is_int(bad, 0, "doubles read back exactly");
	is_str(fmt_d(2048.5, false), "2048.5", "fixed point 2048.5");
	is_str(fmt_d(0.001, true), "0.001", "0.001");
	is_str(fmt_d(-0.25, false), "-0.25", "-0.25");
	is_str(fmt_d(1e-5, false), "0.00001", "1e-5 in fixed point");
	is_str(fmt_d(12345.678901, false), "12345.678901", "six decimals");
	is_str(fmt_d(0.1 + 0.2, false), "0.30000000000000004", "needs 17 digits: printf path");
	is_str(fmt_d(-2.5e-7, false), "-2.5e-07", "tiny: exponent form");

	/* Random bit patterns and random short decimals: exact round trip, and
	 * at most 24 characters (the longest %.17g form). */
	uint64_t x = 88172645463325252ULL;
	int bad_rt = 0, longer = 0;
	for (int i = 0; i < 200000; i++) {
		double d;
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		if (i & 1) {
			memcpy(&d, &x, sizeof(d));
			if (!isfinite(d))
				continue;
		} else {
			static const double p10[] = { 1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7 };
			d = (double)(int64_t)(x % 2000000000000ULL) / p10[x % 8] * ((x >> 40) & 1 ? -1 : 1);
		}
		const char *t = fmt_d(d, false);
		if (strtod(t, NULL) != d)
			bad_rt++;
		if (strlen(t) > 24)
			longer++;
	}
	is_int(bad_rt, 0, "200000 random doubles read back exactly");
	is_int(longer, 0, "at most 24 characters");
}

static void test_structure(void)
{
	struct tft_json_writer w;
	size_t len;

	tft_json_write_init_mem(&w);
	tft_json_write_begin_object(&w);
	tft_json_write_key(&w, "a");
	tft_json_write_int(&w, 1);
	tft_json_write_key(&w, "b\n");
	tft_json_write_begin_array(&w);
	tft_json_write_str(&w, "x\"", 2);
	tft_json_write_bool(&w, true);
	tft_json_write_null(&w);
	tft_json_write_double(&w, 2.5);
	tft_json_write_ns_us(&w, 1500);
	tft_json_write_begin_object(&w);
	tft_json_write_end_object(&w);
	tft_json_write_begin_array(&w);
	tft_json_write_end_array(&w);
	tft_json_write_end_array(&w);
	tft_json_write_key(&w, "c");
	tft_json_write_cstr(&w, NULL);
	tft_json_write_key(&w, "d");
	tft_json_write_uint(&w, UINT64_MAX);
	tft_json_write_key(&w, "e");
	tft_json_write_value_raw(&w, "[1,2]", 5);
	tft_json_write_end_object(&w);
	is_str(tft_json_write_borrow(&w, &len),
	       "{\"a\":1,\"b\\n\":[\"x\\\"\",true,null,2.5,1.5,{},[]],\"c\":null,"
	       "\"d\":18446744073709551615,\"e\":[1,2]}",
	       "compact structure with separators");
	is_int(tft_json_write_finish(&w), 0, "memory writer status ok");
	tft_json_write_fini(&w);

	tft_json_write_init_mem(&w);
	w.pretty = true;
	tft_json_write_begin_object(&w);
	tft_json_write_key(&w, "a");
	tft_json_write_begin_array(&w);
	tft_json_write_int(&w, 1);
	tft_json_write_int(&w, 2);
	tft_json_write_end_array(&w);
	tft_json_write_key(&w, "e");
	tft_json_write_begin_array(&w);
	tft_json_write_end_array(&w);
	tft_json_write_end_object(&w);
	is_str(tft_json_write_borrow(&w, NULL), "{\n  \"a\": [\n    1,\n    2\n  ],\n  \"e\": []\n}",
	       "pretty output");
	tft_json_write_fini(&w);

	tft_json_write_init_mem(&w);
	tft_json_write_begin_array(&w);
	for (int i = 0; i < 3; i++) {
		tft_json_write_newline(&w);
		tft_json_write_int(&w, i);
	}
	tft_json_write_end_array(&w);
	is_str(tft_json_write_borrow(&w, NULL), "[\n0,\n1,\n2]", "one item per line");
	tft_json_write_fini(&w);
}

struct collect {
	char *buf;
	size_t len;
	int calls;
	int fail_after; /* fail on this call (1-based), 0 = never */
};

static int collect_sink(void *ctx, const void *p, size_t n)
{
	struct collect *c = ctx;

	c->calls++;
	if (c->fail_after && c->calls >= c->fail_after)
		return TFT_EIO;
	c->buf = realloc(c->buf, c->len + n + 1);
	memcpy(c->buf + c->len, p, n);
	c->len += n;
	c->buf[c->len] = '\0';
	return 0;
}

static void test_sink(void)
{
	struct tft_json_writer w;
	struct collect c = { 0 };
	char *big = malloc(3 * TFT_JSON_WRITE_BUF);
	size_t n = 3 * TFT_JSON_WRITE_BUF;

	/* A string longer than the buffer, with multibyte sequences across pieces. */
	for (size_t i = 0; i < n; i++)
		big[i] = i % 3 == 0 ? '\xE2' : i % 3 == 1 ? '\x82' : '\xAC';
	is_int(tft_json_write_init_sink(&w, collect_sink, &c), 0, "sink writer init");
	tft_json_write_begin_array(&w);
	tft_json_write_str(&w, big, n);
	tft_json_write_str(&w, "tail\x01", 5);
	tft_json_write_end_array(&w);
	is_int(tft_json_write_finish(&w), 0, "sink writer finished ok");
	ok(c.calls > 1, "flushed in several blocks (%d)", c.calls);
	ok(c.len == n + 17 && memcmp(c.buf + 2, big, n) == 0,
	   "large string intact across flushes");
	ok(strcmp(c.buf + c.len - 15, "\",\"tail\\u0001\"]") == 0, "tail written");
	is_int((int)tft_json_write_bytes(&w), (int)c.len, "byte count");
	tft_json_write_fini(&w);
	free(c.buf);

	/* Sink errors are sticky. */
	struct collect f = { .fail_after = 1 };
	tft_json_write_init_sink(&w, collect_sink, &f);
	tft_json_write_str(&w, big, n);
	tft_json_write_int(&w, 5);
	is_int(tft_json_write_finish(&w), TFT_EIO, "sink failure reported");
	is_int(f.calls, 1, "no write after the failure");
	tft_json_write_fini(&w);
	free(f.buf);
	free(big);
}

/* tft_json_is_value: one JSON value, spaces around it, UTF-8 throughout. */
static void test_is_value(void)
{
	static const char *const yes[] = { "1", "-0.5e3", "\"s\"", "[1,{\"a\":[true,null]}]", " {} ", "\"\xc3\xa9\"" };
	static const char *const no[] = { "", " ", "[1,2", "[1,2] 3", "{\"a\" 1}", "1},{\"ph\":\"X\"",
					  "\"\xff\"", "[\"\xc3\"]", "tru", "01", "NaN" };

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		ok(tft_json_is_value(yes[i], strlen(yes[i])), "is a JSON value: %s", yes[i]);
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		ok(!tft_json_is_value(no[i], strlen(no[i])), "is no JSON value: %zu", i);
}

/* tft_json_is_utf8: well-formed UTF-8 only (no overlong form, surrogate, past U+10FFFF). */
static void test_is_utf8(void)
{
	static const char *const yes[] = { "", "plain", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xf4\x8f\xbf\xbf" };
	static const char *const no[] = { "\x80", "\xc0\xaf", "\xe0\x80\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80",
					  "\xc3", "a\xff", "\x82" "config" };

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		ok(tft_json_is_utf8(yes[i], strlen(yes[i])), "is UTF-8: %zu", i);
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		ok(!tft_json_is_utf8(no[i], strlen(no[i])), "is not UTF-8: %zu", i);
}

/* tft_json_write_take: the document handed over, never a cut-off one. */
static void test_take(void)
{
	struct tft_json_writer w;
	size_t len = 99;
	char *s;

	tft_json_write_init_mem(&w);
	tft_json_write_begin_object(&w);
	tft_json_write_key(&w, "a");
	tft_json_write_int(&w, 1);
	tft_json_write_end_object(&w);
	s = tft_json_write_take(&w, &len);
	ok(s && strcmp(s, "{\"a\":1}") == 0 && len == 7, "take: the document, NUL-terminated, its length");
	ok(w.buf == NULL && w.len == 0, "take: the writer is finished");
	free(s);
	tft_json_write_init_mem(&w);
	tft_json_write_begin_array(&w);
	w.status = TFT_ENOMEM; /* a write failed: what is there is cut off */
	len = 99;
	s = tft_json_write_take(&w, &len);
	ok(s == NULL && len == 0, "take: NULL after a failed write");
	ok(w.buf == NULL, "take: the writer is finished after a failure too");
	free(s);
	/* Nothing written yet, then an empty fragment: no buffer to copy into
	 * (UBSan called memcpy(NULL + 0, ..., 0) undefined; found by fuzz_oplog). */
	tft_json_write_init_mem(&w);
	tft_json_write_raw(&w, "", 0);
	ok(w.buf == NULL && w.len == 0 && w.status == 0, "raw: an empty fragment on a fresh writer is a no-op");
	tft_json_write_fini(&w);
}

int main(void)
{
	test_take();
	test_escape();
	test_is_utf8();
	test_numbers();
	test_structure();
	test_sink();
	test_is_value();
	return done_testing();
}
