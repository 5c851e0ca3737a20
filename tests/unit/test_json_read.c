/* SPDX-License-Identifier: MIT */
/*
 * Tests for the streaming JSON reader (codec/json_read.h) and byte sources
 * (codec/source.h): escapes, numbers, nesting cap, window refills at every
 * possible boundary, truncation offsets, gzip.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "codec/json_read.h"
#include "codec/source.h"
#include "tap.h"

/* ---- a canonical re-serialiser driven through the replay protocol -------- */

struct out {
	char buf[8192];
	size_t n;
};

static void put(struct out *o, const char *s, size_t n)
{
	if (o->n + n < sizeof(o->buf)) {
		memcpy(o->buf + o->n, s, n);
		o->n += n;
	}
	o->buf[o->n] = '\0';
}

static void put_str(struct out *o, const char *s, size_t n)
{
	put(o, "\"", 1);
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		char tmp[8];
		if (ch == '"' || ch == '\\') {
			tmp[0] = '\\';
			tmp[1] = (char)ch;
			put(o, tmp, 2);
		} else if (ch < 0x20) {
			snprintf(tmp, sizeof(tmp), "\\u%04x", ch);
			put(o, tmp, 6);
		} else {
			put(o, (const char *)&ch, 1);
		}
	}
	put(o, "\"", 1);
}

/*
 * How emit_value() walks a document: 0 = tft_json_next_key and in-place
 * refills; 1 = tft_json_next_members (g_max at a time) and refills from
 * windows filled here (g_head bytes of room in front, g_block new bytes),
 * as the importer's reader thread does.
 */
static int g_mode;
static unsigned g_max = 1;
static size_t g_head, g_block;

static int refill(struct tft_json_reader *r, struct tft_error *err)
{
	struct tft_json_window w;
	size_t n = 0, got;
	bool eof = false;
	int rc;

	if (!g_mode)
		return tft_json_refill(r, err);
	w.cap = g_head + g_block;
	w.buf = malloc(w.cap + TFT_JSON_PAD);
	if (!w.buf)
		return TFT_ENOMEM;
	while (n < g_block) {
		if ((rc = tft_source_read(r->src, w.buf + g_head + n, g_block - n, &got, err))) {
			free(w.buf);
			return rc;
		}
		if (!got) {
			eof = true;
			break;
		}
		n += got;
	}
	rc = tft_json_refill_from(r, &w, g_head, n, eof, err);
	tft_json_window_free(&w); /* the previous window, or the unused new one */
	return rc;
}

/* Run one reader operation, refilling and replaying it on TFT_JSON_MORE. */
#define OP(r, err, call)                                                    \
	({                                                                  \
		int rc_;                                                    \
		for (;;) {                                                  \
			tft_json_mark(r);                                   \
			rc_ = (call);                                       \
			if (rc_ != TFT_JSON_MORE)                           \
				break;                                      \
			if ((rc_ = refill(r, err)) != 0)                    \
				break;                                      \
		}                                                           \
		rc_;                                                        \
	})

static int emit_value(struct tft_json_reader *r, struct out *o, struct tft_error *err);

static void emit_scalar(const struct tft_json_value *v, struct out *o)
{
	switch (v->type) {
	case TFT_JSON_NULL: put(o, "null", 4); break;
	case TFT_JSON_TRUE: put(o, "true", 4); break;
	case TFT_JSON_FALSE: put(o, "false", 5); break;
	case TFT_JSON_NUMBER: put(o, v->ptr, v->len); break;
	default: put_str(o, v->ptr, v->len); break;
	}
}

/* The members of an entered object through tft_json_next_members(). */
static int emit_members(struct tft_json_reader *r, struct out *o, struct tft_error *err)
{
	struct tft_json_member ms[3];
	bool ended = false, first = true;
	unsigned n;
	int rc;

	put(o, "{", 1);
	while (!ended) {
		rc = OP(r, err, tft_json_next_members(r, ms, g_max, &n, &ended, err));
		if (rc)
			return rc;
		for (unsigned i = 0; i < n; i++) {
			if (!first)
				put(o, ",", 1);
			first = false;
			put_str(o, ms[i].key.ptr, ms[i].key.len);
			put(o, ":", 1);
			if (ms[i].v.type == TFT_JSON_OBJECT || ms[i].v.type == TFT_JSON_ARRAY) {
				if ((rc = emit_value(r, o, err))) /* enters it */
					return rc;
			} else {
				emit_scalar(&ms[i].v, o);
			}
		}
	}
	put(o, "}", 1);
	return 0;
}

static int emit_value(struct tft_json_reader *r, struct out *o, struct tft_error *err)
{
	struct tft_json_value v;
	struct tft_json_str k;
	int rc = OP(r, err, tft_json_read(r, &v, err));

	if (rc)
		return rc;
	switch (v.type) {
	case TFT_JSON_NULL: put(o, "null", 4); return 0;
	case TFT_JSON_TRUE: put(o, "true", 4); return 0;
	case TFT_JSON_FALSE: put(o, "false", 5); return 0;
	case TFT_JSON_NUMBER: put(o, v.ptr, v.len); return 0;
	case TFT_JSON_STRING: put_str(o, v.ptr, v.len); return 0;
	case TFT_JSON_OBJECT:
		if (g_mode)
			return emit_members(r, o, err);
		put(o, "{", 1);
		for (int first = 1;; first = 0) {
			rc = OP(r, err, tft_json_next_key(r, &k, err));
			if (rc < 0)
				return rc;
			if (rc == 0)
				break;
			if (!first)
				put(o, ",", 1);
			put_str(o, k.ptr, k.len);
			put(o, ":", 1);
			if ((rc = emit_value(r, o, err)))
				return rc;
		}
		put(o, "}", 1);
		return 0;
	default:
		put(o, "[", 1);
		for (int first = 1;; first = 0) {
			rc = OP(r, err, tft_json_next_item(r, 0, err));
			if (rc < 0)
				return rc;
			if (rc == 0)
				break;
			if (!first)
				put(o, ",", 1);
			if ((rc = emit_value(r, o, err)))
				return rc;
		}
		put(o, "]", 1);
		return 0;
	}
}

/* Parse doc with a given window and return the canonical text (or NULL + err). */
static int canon(const char *doc, size_t len, size_t block, struct out *o, struct tft_error *err)
{
	struct tft_json_reader_opts opts = { .block_size = block, .max_buffer = 1 << 20 };
	struct tft_source *src = tft_source_open_mem(doc, len, "doc", err);
	struct tft_json_reader r;
	int rc;

	o->n = 0;
	o->buf[0] = '\0';
	tft_error_clear(err);
	if (!src)
		return -1;
	rc = tft_json_reader_init(&r, src, &opts, err);
	if (rc == 0)
		rc = emit_value(&r, o, err);
	if (rc == 0)
		rc = OP(&r, err, tft_json_finish(&r, err));
	tft_json_reader_fini(&r);
	tft_source_close(src);
	return rc;
}

static void check_canon(const char *doc, const char *want, const char *what)
{
	struct tft_error err;
	struct out o;
	int bad = 0;
	size_t len = strlen(doc);

	/* every window size from 1 byte up, then the default; both walks */
	for (size_t block = 1; block <= len + 1 && !bad; block++) {
		for (g_mode = 0; g_mode < 2 && !bad; g_mode++) {
			g_max = 1 + block % 3;
			g_head = block % 4;
			g_block = block;
			int rc = canon(doc, len, block, &o, &err);
			if (rc || strcmp(o.buf, want) != 0) {
				printf("# block %zu mode %d: rc %d (%s) got %s\n", block, g_mode, rc, err.msg,
				       o.buf);
				bad = 1;
			}
		}
		g_mode = 0;
	}
	if (!bad && (canon(doc, len, 0, &o, &err) || strcmp(o.buf, want) != 0))
		bad = 1;
	ok(!bad, "%s", what);
}

/* Expect a format error at `offset` whose message contains `msg`. */
static void check_error(const char *doc, int64_t offset, const char *msg, const char *what)
{
	struct tft_error err;
	struct out o;
	int bad = 0;
	size_t len = strlen(doc);

	for (size_t block = 1; block <= len + 1 && !bad; block++) {
		for (g_mode = 0; g_mode < 2 && !bad; g_mode++) {
			g_max = 1 + block % 3;
			g_head = block % 4;
			g_block = block;
			int rc = canon(doc, len, block, &o, &err);
			if (rc != TFT_EFORMAT || err.offset != offset || !strstr(err.msg, msg)) {
				printf("# block %zu mode %d: rc %d offset %lld msg '%s'\n", block, g_mode, rc,
				       (long long)err.offset, err.msg);
				bad = 1;
			}
		}
		g_mode = 0;
	}
	ok(!bad, "%s", what);
}

static void test_documents(void)
{
	check_canon("{}", "{}", "empty object");
	check_canon(" [ ] ", "[]", "empty array with whitespace");
	check_canon("{\"a\" : [1, -2.5e+3, 0, true, false, null, \"x\"], \"b\":{\"c\":{}}}",
		    "{\"a\":[1,-2.5e+3,0,true,false,null,\"x\"],\"b\":{\"c\":{}}}", "nested values");
	check_canon("\n\t{\r\n  \"k\":\n\t\"v\"  }\n", "{\"k\":\"v\"}", "all whitespace kinds");
	check_canon("[\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"]", "[\"\\\"\\\\/\\u0008\\u000c\\u000a\\u000d\\u0009\"]",
		    "simple escapes");
	check_canon("[\"caf\\u00e9 \\u20ac\"]", "[\"caf\xc3\xa9 \xe2\x82\xac\"]", "\\u escapes to UTF-8");
	check_canon("[\"\\ud83d\\ude00!\"]", "[\"\xf0\x9f\x98\x80!\"]", "surrogate pair");
	check_canon("[\"a\\ud800b\", \"\\udc00\"]", "[\"a\xef\xbf\xbd" "b\",\"\xef\xbf\xbd\"]",
		    "lone surrogates become U+FFFD");
	check_canon("[\"\xc3\xa9 raw utf-8\"]", "[\"\xc3\xa9 raw utf-8\"]", "raw UTF-8 passes through");
	check_canon("{\"long key with \\\"quotes\\\" inside\": \"0123456789abcdefghijklmnopqrstuvwxyz\"}",
		    "{\"long key with \\\"quotes\\\" inside\":\"0123456789abcdefghijklmnopqrstuvwxyz\"}",
		    "escaped key, long strings");
	check_canon("[12345678901234567890123, -0, 0.5, 1E10]", "[12345678901234567890123,-0,0.5,1E10]",
		    "number tokens");
}

static void test_errors(void)
{
	check_error("{\"a\": [1, 2", 11, "expected ',' or ']' after array element",
		    "truncated array: offset = end of input");
	check_error("{\"a\": \"abc", 10, "unterminated string (opened at byte 6)", "truncated string");
	check_error("{\"a\" 1}", 5, "expected ':' after object key", "missing colon");
	check_error("{\"a\":1 \"b\":2}", 7, "expected ',' or '}' after object member", "missing comma");
	check_error("[1,]", 3, "trailing comma", "trailing comma in array");
	check_error("{\"a\":1,}", 7, "expected a string key after ','", "trailing comma in object");
	check_error("[01]", 1, "invalid number", "leading zero");
	check_error("[1.]", 1, "invalid number", "fraction without digits");
	check_error("[-]", 1, "invalid number", "lone minus");
	check_error("[1e]", 1, "invalid number", "exponent without digits");
	check_error("[.5]", 1, "expected a value", "leading dot");
	check_error("[tru]", 1, "expected 'true'", "bad literal");
	check_error("[nul", 1, "expected 'null'", "truncated literal");
	check_error("[\"\\x\"]", 2, "invalid escape sequence", "bad escape");
	check_error("[\"\\u12g4\"]", 2, "invalid \\u escape", "bad \\u escape");
	check_error("{} x", 3, "expected end of input", "garbage after the document");
	check_error("", 0, "expected a value", "empty input");
	check_error("[1, 2", 5, "expected ',' or ']'", "unterminated array without allowance");
}

/* 300 nested arrays: depth cap 256 by default */
static void test_depth(void)
{
	char doc[700];
	struct tft_error err;
	struct out o;
	size_t n = 0;
	int rc;

	for (int i = 0; i < 256; i++)
		doc[n++] = '[';
	for (int i = 0; i < 256; i++)
		doc[n++] = ']';
	doc[n] = '\0';
	rc = canon(doc, n, 0, &o, &err);
	ok(rc == 0, "256 levels accepted");
	n = 0;
	for (int i = 0; i < 257; i++)
		doc[n++] = '[';
	for (int i = 0; i < 257; i++)
		doc[n++] = ']';
	doc[n] = '\0';
	rc = canon(doc, n, 0, &o, &err);
	ok(rc == TFT_EFORMAT && err.offset == 256 && strstr(err.msg, "nesting deeper than 256"),
	   "257 levels rejected at byte 256 (%lld: %s)", (long long)err.offset, err.msg);

	/* tft_json_skip enforces the cap too */
	{
		struct tft_source *src = tft_source_open_mem(doc, n, "deep", &err);
		struct tft_json_reader r;
		tft_error_clear(&err);
		tft_json_reader_init(&r, src, NULL, &err);
		rc = tft_json_skip(&r, NULL, &err);
		ok(rc == TFT_EFORMAT && err.offset == 256, "skip: nesting cap");
		tft_json_reader_fini(&r);
		tft_source_close(src);
	}
}

static void test_numbers(void)
{
	static const struct {
		const char *s;
		int rc;
		int64_t ns;
	} cases[] = {
		{ "1", 0, 1000 },
		{ "1.0015", 0, 1002 },       /* 1001.5 ns: half rounds away from zero */
		{ "1.0014999", 0, 1001 },
		{ "-1.0015", 0, -1002 },
		{ "-1.0014", 0, -1001 },
		{ "3.136", 0, 3136 },
		{ "1e3", 0, 1000000 },
		{ "1E-3", 0, 1 },
		{ "12.5e-1", 0, 1250 },
		{ "5e-4", 0, 1 },            /* 0.5 ns */
		{ "2.5e-4", 0, 0 },          /* 0.25 ns */
		{ "0.0005", 0, 1 },
		{ "0.00049999", 0, 0 },
		{ "-0", 0, 0 },
		{ "0e400", 0, 0 },
		{ "1e-400", 0, 0 },
		{ "1712195495519689.047", 0, INT64_C(1712195495519689047) },
		{ "3605057436108.407", 0, INT64_C(3605057436108407) },
		{ "9223372036854775.807", 0, INT64_MAX },
		{ "-9223372036854775.808", 0, INT64_MIN },
		{ "9223372036854775.808", -1, 0 },
		{ "9223372036854775.8074", 0, INT64_MAX },
		{ "9223372036854775.8075", -1, 0 },  /* rounds past INT64_MAX */
		{ "1e400", -1, 0 },
		{ "123456789012345678901234567890", -1, 0 },
		{ "0.000000000000000000000000000001e30", 0, 1000 },
		{ "1.", -1, 0 },
		{ "abc", -1, 0 },
		{ "", -1, 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int64_t ns = 0;
		int rc = tft_json_number_to_ns(cases[i].s, strlen(cases[i].s), &ns);
		if (cases[i].rc)
			ok(rc != 0, "to_ns(\"%s\") fails", cases[i].s);
		else
			ok(rc == 0 && ns == cases[i].ns, "to_ns(\"%s\") = %lld (got %lld)", cases[i].s,
			   (long long)cases[i].ns, (long long)ns);
	}

	int64_t v = 0;
	ok(tft_json_number_to_i64("9223372036854775807", 19, &v) == 0 && v == INT64_MAX, "i64 max");
	ok(tft_json_number_to_i64("-9223372036854775808", 20, &v) == 0 && v == INT64_MIN, "i64 min");
	ok(tft_json_number_to_i64("9223372036854775808", 19, &v) != 0, "i64 overflow");
	ok(tft_json_number_to_i64("18446744073709551615", 20, &v) != 0, "u64 max is not an i64");
	ok(tft_json_number_to_i64("1.0", 3, &v) != 0, "1.0 is not an integer");
	ok(tft_json_number_to_i64("-12", 3, &v) == 0 && v == -12, "negative integer");
	double d = 0;
	ok(tft_json_number_to_double("0.1", 3, &d) == 0 && d == 0.1, "double 0.1 correctly rounded");
	ok(tft_json_number_to_double("18446744073709551615", 20, &d) == 0 && d == 18446744073709551615.0,
	   "u64 max as double");
	ok(tft_json_number_to_double("1e-320", 6, &d) == 0 && d > 0, "subnormal");

	/* the reader's one-pass conversions agree with the text ones */
	static const char *nums[] = {
		"0", "-0", "7", "-7", "1.0015", "-1.0015", "1.0014999", "0.0005", "0.00049999",
		"3.136", "1e3", "1E-3", "12.5e-1", "1712195495519689.047", "3605057436108.407",
		"9223372036854775.807", "-9223372036854775.808", "9223372036854775.808",
		"9223372036854775.8074", "9223372036854775.8075", "9999999999999999.9995",
		"99999999999999999", "123456789012345678", "9223372036854775807",
		"-9223372036854775808", "9223372036854775808", "18446744073709551615",
		"99999999999999999999", "123456789012345678901234567890", "0.5", "-0.5e0",
	};
	int agree = 1;
	for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
		char doc[64];
		struct tft_error err;
		struct tft_json_reader r;
		struct tft_json_value jv;
		snprintf(doc, sizeof(doc), "%s ", nums[i]);
		struct tft_source *src = tft_source_open_mem(doc, strlen(doc), "n", &err);
		if (!src || tft_json_reader_init(&r, src, NULL, &err) || tft_json_read(&r, &jv, &err) ||
		    jv.type != TFT_JSON_NUMBER) {
			agree = 0;
		} else {
			int64_t a = 0, b = 0;
			int ra = tft_json_value_to_ns(&jv, &a), rb = tft_json_number_to_ns(jv.ptr, jv.len, &b);
			if (ra != rb || (ra == 0 && a != b)) {
				printf("# to_ns %s: %d %lld vs %d %lld\n", nums[i], ra, (long long)a, rb,
				       (long long)b);
				agree = 0;
			}
			ra = tft_json_value_to_i64(&jv, &a);
			rb = jv.is_int ? tft_json_number_to_i64(jv.ptr, jv.len, &b) : -1;
			if (ra != rb || (ra == 0 && a != b)) {
				printf("# to_i64 %s: %d %lld vs %d %lld\n", nums[i], ra, (long long)a, rb,
				       (long long)b);
				agree = 0;
			}
		}
		tft_json_reader_fini(&r);
		tft_source_close(src);
	}
	ok(agree, "tft_json_value_to_ns/_i64 agree with the text conversions");
}

static void test_eof_allowance(void)
{
	static const char *docs[] = { "[1, 2", "[1, 2,", "[1, 2, \t ", "[", "[ " };
	static const int counts[] = { 2, 2, 2, 0, 0 };

	for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
		struct tft_error err;
		struct tft_source *src = tft_source_open_mem(docs[i], strlen(docs[i]), "d", &err);
		struct tft_json_reader r;
		struct tft_json_value v;
		int rc, n = 0;
		tft_error_clear(&err);
		tft_json_reader_init(&r, src, NULL, &err);
		rc = tft_json_read(&r, &v, &err);
		while (rc == 0 && (rc = tft_json_next_item(&r, TFT_JSON_EOF_ENDS_ARRAY, &err)) == 1) {
			rc = tft_json_read(&r, &v, &err);
			n++;
		}
		if (rc == 0)
			rc = tft_json_finish(&r, &err);
		ok(rc == 0 && n == counts[i] && r.truncated, "unterminated \"%s\" accepted (%d items)",
		   docs[i], n);
		tft_json_reader_fini(&r);
		tft_source_close(src);
	}
	/* an element cut in the middle is still an error */
	{
		struct tft_error err;
		const char *doc = "[{\"a\":1}, {\"b\":";
		struct tft_source *src = tft_source_open_mem(doc, strlen(doc), "d", &err);
		struct tft_json_reader r;
		struct tft_json_value v;
		struct tft_json_str raw;
		int rc;
		tft_error_clear(&err);
		tft_json_reader_init(&r, src, NULL, &err);
		rc = tft_json_read(&r, &v, &err);
		while (rc == 0 && (rc = tft_json_next_item(&r, TFT_JSON_EOF_ENDS_ARRAY, &err)) == 1)
			rc = tft_json_skip_checked(&r, &raw, &err);
		ok(rc == TFT_EFORMAT && err.offset == (int64_t)strlen(doc), "cut element: error at end (%lld)",
		   (long long)err.offset);
		tft_json_reader_fini(&r);
		tft_source_close(src);
	}
}

static int skip_doc(const char *doc, int checked, struct tft_json_str *raw, struct tft_error *err)
{
	struct tft_source *src = tft_source_open_mem(doc, strlen(doc), "d", err);
	struct tft_json_reader r;
	static char copy[256];
	int rc;

	tft_error_clear(err);
	tft_json_reader_init(&r, src, NULL, err);
	rc = checked ? tft_json_skip_checked(&r, raw, err) : tft_json_skip(&r, raw, err);
	if (rc == 0) {
		snprintf(copy, sizeof(copy), "%.*s", (int)raw->len, raw->ptr);
		raw->ptr = copy;
	}
	tft_json_reader_fini(&r);
	tft_source_close(src);
	return rc;
}

static void test_skip(void)
{
	struct tft_error err;
	struct tft_json_str raw;

	ok(skip_doc("  [1, {\"a\": \"]}\\\"\"}, [[]]] tail", 0, &raw, &err) == 0 &&
		   raw.len == 24 && memcmp(raw.ptr, "[1, {\"a\": \"]}\\\"\"}, [[]]]", 24) == 0,
	   "skip returns the verbatim container");
	ok(skip_doc("[1 2]", 0, &raw, &err) == 0, "fast skip does not validate scalars");
	ok(skip_doc("[1 2]", 1, &raw, &err) == TFT_EFORMAT && err.offset == 3,
	   "checked skip validates (offset %lld)", (long long)err.offset);
	ok(skip_doc("[}", 0, &raw, &err) == TFT_EFORMAT && strstr(err.msg, "expected ']'"),
	   "fast skip matches bracket kinds");
	ok(skip_doc("\"str\\\"ing\"", 0, &raw, &err) == 0 && raw.len == 10, "skip string");
	ok(skip_doc("-12.5e3,", 0, &raw, &err) == 0 && raw.len == 7, "skip number");
	ok(skip_doc("{\"a\":[1,{\"b\":null}]}", 1, &raw, &err) == 0 && raw.len == 20,
	   "checked skip of a valid value");

	char out[64];
	size_t n = tft_json_compact("{ \"a b\" : [ 1 ,\n\t\"x \\\" y\" ] }", 29, out);
	out[n] = '\0';
	is_str(out, "{\"a b\":[1,\"x \\\" y\"]}", "compact keeps whitespace inside strings");
}

/* skip_stream walks a value far larger than the window without growing it. */
static void test_skip_stream(void)
{
	size_t n = 200000;
	char *doc = malloc(n + 64);
	struct tft_error err;
	struct tft_json_reader_opts opts = { .block_size = 64, .max_buffer = 64 };
	struct tft_json_reader r;
	struct tft_json_str k;
	struct tft_json_value v;
	size_t p = 0;
	int rc;

	p += (size_t)sprintf(doc, "{\"big\": [\"");
	while (p < n - 100) {
		memcpy(doc + p, "ab\\\"c]}{[", 9);
		p += 9;
	}
	p += (size_t)sprintf(doc + p, "\", {\"x\": [1, 2]}], \"after\": 42}");
	tft_error_clear(&err);
	struct tft_source *src = tft_source_open_mem(doc, p, "big", &err);
	tft_json_reader_init(&r, src, &opts, &err);
	rc = tft_json_read(&r, &v, &err);
	rc = rc ? rc : tft_json_next_key(&r, &k, &err);
	rc = rc == 1 ? tft_json_skip_stream(&r, &err) : -100;
	ok(rc == 0 && r.cap == 64, "skip_stream over %zu bytes with a 64-byte window", p);
	tft_json_mark(&r);
	rc = OP(&r, &err, tft_json_next_key(&r, &k, &err));
	ok(rc == 1 && k.len == 5 && memcmp(k.ptr, "after", 5) == 0, "next key after the big value");
	rc = OP(&r, &err, tft_json_read(&r, &v, &err));
	ok(rc == 0 && v.type == TFT_JSON_NUMBER && v.len == 2, "value after the big value");
	tft_json_reader_fini(&r);
	tft_source_close(src);

	/* an element larger than max_buffer fails cleanly */
	tft_error_clear(&err);
	src = tft_source_open_mem(doc, p, "big", &err);
	opts.max_buffer = 4096;
	tft_json_reader_init(&r, src, &opts, &err);
	rc = OP(&r, &err, tft_json_read(&r, &v, &err));
	rc = rc ? rc : OP(&r, &err, tft_json_next_key(&r, &k, &err));
	rc = rc == 1 ? OP(&r, &err, tft_json_skip(&r, NULL, &err)) : -100;
	ok(rc == TFT_EFORMAT && strstr(err.msg, "buffer limit") && err.offset == 8,
	   "value larger than max_buffer: %s at %lld", err.msg, (long long)err.offset);
	tft_json_reader_fini(&r);
	tft_source_close(src);
	free(doc);
}

/* next_member / read_flat / peek: the importer's entry points, at every window size. */
static void test_members(void)
{
	const char *doc = " {\"a\": 1.5, \"o\": {\"x\": [1]}, \"s\": \"t\\u0041\", \"l\": [2, 3], \"n\": null}";
	size_t len = strlen(doc);
	int bad = 0;

	for (size_t block = 1; block <= len + 1 && !bad; block++) {
		struct tft_json_reader_opts opts = { .block_size = block };
		struct tft_error err;
		struct tft_source *src = tft_source_open_mem(doc, len, "m", &err);
		struct tft_json_reader r;
		struct tft_json_value v;
		struct tft_json_str k;
		char got[256];
		size_t n = 0;
		int rc, c = 0;

		tft_error_clear(&err);
		tft_json_reader_init(&r, src, &opts, &err);
		rc = OP(&r, &err, tft_json_peek(&r, &c, &err));
		bad |= rc != 0 || c != '{' || tft_json_offset(&r) != 1;
		rc = OP(&r, &err, tft_json_read(&r, &v, &err));
		while (rc == 0 && (rc = OP(&r, &err, tft_json_next_member(&r, &k, &v, &err))) == 1) {
			n += (size_t)snprintf(got + n, sizeof(got) - n, "%.*s:%d", (int)k.len, k.ptr, v.type);
			rc = 0;
			if (v.type == TFT_JSON_OBJECT) {
				rc = OP(&r, &err, tft_json_skip(&r, NULL, &err));
			} else if (v.type == TFT_JSON_ARRAY) {
				rc = OP(&r, &err, tft_json_read_flat(&r, &v, true, &err));
				n += (size_t)snprintf(got + n, sizeof(got) - n, "=%.*s", (int)v.len, v.ptr);
			} else if (v.ptr) {
				n += (size_t)snprintf(got + n, sizeof(got) - n, "=%.*s", (int)v.len, v.ptr);
			}
			n += (size_t)snprintf(got + n, sizeof(got) - n, ";");
			if (rc)
				break;
		}
		if (rc == 0)
			rc = OP(&r, &err, tft_json_peek(&r, &c, &err));
		if (rc || c != -1 || strcmp(got, "a:4=1.5;o:6;s:5=tA;l:7=[2, 3];n:1;") != 0) {
			printf("# block %zu: rc %d c %d got %s\n", block, rc, c, got);
			bad = 1;
		}
		tft_json_reader_fini(&r);
		tft_source_close(src);
	}
	ok(!bad, "next_member, read_flat and peek at every window size");
}

/* ---- sources -------------------------------------------------------------- */

static size_t gzip_buf(const void *in, size_t n, unsigned char *out, size_t cap)
{
	z_stream z;

	memset(&z, 0, sizeof(z));
	deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
	z.next_in = (unsigned char *)(uintptr_t)in;
	z.avail_in = (uInt)n;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	deflate(&z, Z_FINISH);
	size_t got = cap - z.avail_out;
	deflateEnd(&z);
	return got;
}

static int read_all(struct tft_source *s, char *out, size_t cap, size_t step, size_t *total,
		    struct tft_error *err)
{
	size_t got;
	int rc;

	*total = 0;
	for (;;) {
		size_t want = cap - *total < step ? cap - *total : step;
		rc = tft_source_read(s, out + *total, want, &got, err);
		if (rc || got == 0)
			return rc;
		*total += got;
	}
}

static void test_sources(void)
{
	char text[5000], back[12000];
	unsigned char gz[12000];
	struct tft_error err;
	size_t n = 0, total;
	int rc;

	for (int i = 0; n < sizeof(text) - 40; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "{\"i\": %d},\n", i);

	/* memory, plain */
	tft_error_clear(&err);
	struct tft_source *s = tft_source_open_mem(text, n, "m", &err);
	const void *pk;
	size_t pl;
	rc = tft_source_peek(s, 10, &pk, &pl, &err);
	ok(rc == 0 && pl == 10 && memcmp(pk, text, 10) == 0 && tft_source_offset(s) == 0,
	   "peek does not consume");
	rc = read_all(s, back, sizeof(back), 7, &total, &err);
	ok(rc == 0 && total == n && memcmp(back, text, n) == 0 && tft_source_offset(s) == n,
	   "memory source round trip");
	ok(!tft_source_is_gzip(s), "plain memory is not gzip");
	tft_source_close(s);

	/* gzip, two concatenated members, odd read sizes */
	size_t g1 = gzip_buf(text, n / 3, gz, sizeof(gz));
	size_t g2 = gzip_buf(text + n / 3, n - n / 3, gz + g1, sizeof(gz) - g1);
	s = tft_source_open_mem(gz, g1 + g2, "gz", &err);
	rc = tft_source_peek(s, 100, &pk, &pl, &err);
	ok(rc == 0 && pl == 100 && memcmp(pk, text, 100) == 0, "gzip peek");
	rc = read_all(s, back, sizeof(back), 13, &total, &err);
	ok(rc == 0 && total == n && memcmp(back, text, n) == 0 && tft_source_is_gzip(s),
	   "gzip members decode to the original (%zu bytes)", total);
	tft_source_close(s);

	/* truncated gzip */
	tft_error_clear(&err);
	s = tft_source_open_mem(gz, g1 / 2, "gz", &err);
	rc = read_all(s, back, sizeof(back), 4096, &total, &err);
	ok(rc == TFT_EFORMAT && strstr(err.msg, "truncated gzip") && err.offset == (int64_t)total,
	   "truncated gzip: error at decompressed offset %lld after %zu bytes", (long long)err.offset,
	   total);
	tft_source_close(s);

	/* corrupt gzip */
	memcpy(back, gz, g1);
	for (size_t i = 20; i < 40 && i < g1; i++)
		((unsigned char *)back)[i] ^= 0x5a;
	tft_error_clear(&err);
	s = tft_source_open_mem(back, g1, "gz", &err);
	char sink[20000];
	rc = read_all(s, sink, sizeof(sink), 4096, &total, &err);
	ok(rc == TFT_EFORMAT && strstr(err.msg, "gzip"), "corrupt gzip: %s", err.msg);
	tft_source_close(s);

	/* file source, gzip, through the JSON reader with a tiny window */
	char path[] = "/tmp/tft_test_json_XXXXXX";
	int fd = mkstemp(path);
	ok(fd >= 0 && write(fd, gz, g1 + g2) == (ssize_t)(g1 + g2), "temp file written");
	close(fd);
	tft_error_clear(&err);
	s = tft_source_open_file(path, &err);
	ok(s && tft_source_raw_size(s) == g1 + g2 && tft_source_is_gzip(s), "file source sees gzip");
	rc = read_all(s, back, sizeof(back), 1000, &total, &err);
	ok(rc == 0 && total == n && memcmp(back, text, n) == 0 && tft_source_raw_offset(s) == g1 + g2,
	   "file gzip round trip");
	tft_source_close(s);
	unlink(path);

	tft_error_clear(&err);
	s = tft_source_open_file("/nonexistent/x.json", &err);
	ok(!s && err.code == TFT_ENOTFOUND && strcmp(err.file, "/nonexistent/x.json") == 0,
	   "missing file: TFT_ENOTFOUND with the path");
}

/* A document in memory as the window; refill_from's size limit. */
static void test_mem_and_refill_from(void)
{
	static const char doc[] = "{\"a\": [1, 2, {\"b\": \"x\\ny\"}], \"c\": 3.5}";
	char *buf = calloc(1, sizeof(doc) + TFT_JSON_PAD);
	struct tft_json_reader r;
	struct tft_error err;
	struct out o;

	if (!buf) {
		ok(0, "calloc");
		return;
	}
	memcpy(buf, doc, sizeof(doc) - 1);
	tft_json_reader_init_mem(&r, buf, sizeof(doc) - 1, NULL, NULL);
	o.n = 0;
	int rc = emit_value(&r, &o, &err);
	if (rc == 0)
		rc = OP(&r, &err, tft_json_finish(&r, &err));
	tft_json_reader_fini(&r);
	ok(rc == 0 && strcmp(o.buf, "{\"a\":[1,2,{\"b\":\"x\\u000ay\"}],\"c\":3.5}") == 0,
	   "a document in memory is its own window: %s", o.buf);
	free(buf);

	/* a value that outgrows max_buffer through caller-filled windows */
	char big[300];
	memset(big, ' ', sizeof(big));
	big[0] = '[';
	big[5] = '"';
	memset(big + 6, 'x', 250);
	big[sizeof(big) - 1] = '\0';
	struct tft_json_reader_opts ro = { .block_size = 16, .max_buffer = 64 };
	struct tft_source *src = tft_source_open_mem(big, strlen(big), "big", &err);
	tft_error_clear(&err);
	rc = tft_json_reader_init(&r, src, &ro, &err);
	g_mode = 1;
	g_head = 4;
	g_block = 16;
	struct tft_json_value v;
	rc = rc ? rc : OP(&r, &err, tft_json_read(&r, &v, &err));
	if (rc == 0) {
		rc = OP(&r, &err, tft_json_next_item(&r, 0, &err));
		if (rc == 1)
			rc = OP(&r, &err, tft_json_read(&r, &v, &err));
	}
	g_mode = 0;
	ok(rc == TFT_EFORMAT && strstr(err.msg, "buffer limit") && err.offset == 5,
	   "refill_from: a string larger than max_buffer fails at its start (%s at %lld)", err.msg,
	   (long long)err.offset);
	tft_json_reader_fini(&r);
	tft_source_close(src);
}

/* tft_source_map: plain files only, zeros after the end, nothing read before. */
static void test_source_map(void)
{
	char path[64];
	struct tft_source_map m;
	struct tft_error err;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	int good = 1;

	snprintf(path, sizeof(path), "/tmp/tft_test_map_%d", (int)getpid());
	/* a page-sized file (the zeros come from the mapping after it) and a short one */
	for (int k = 0; k < 2; k++) {
		size_t n = k ? 1000 : page;
		FILE *fp = fopen(path, "wb");
		for (size_t i = 0; fp && i < n; i++)
			fputc('a' + (int)(i % 26), fp);
		if (fp)
			fclose(fp);
		struct tft_source *s = tft_source_open_file(path, &err);
		const void *pk;
		size_t pl;
		int rc = s ? tft_source_peek(s, 16, &pk, &pl, &err) : -1;
		rc = rc ? -1 : tft_source_map(s, &m, &err);
		if (rc != 1 || m.len != n || memcmp(m.data, "abcdefghij", 10) != 0) {
			good = 0;
		} else {
			for (size_t i = 0; i < TFT_SOURCE_MAP_PAD; i++)
				good &= m.data[n + i] == 0;
			size_t got = 1;
			good &= tft_source_read(s, (char[8]){ 0 }, 8, &got, &err) == 0 && got == 0;
			tft_source_map_release(&m, n);
			good &= m.data[0] == 'a'; /* released pages read again from the file */
		}
		tft_source_unmap(&m);
		tft_source_close(s);
	}
	ok(good, "a plain file maps whole, with zeros after it, and then reads as consumed");

	/* gzip or already read: not mapped */
	unsigned char gz[256];
	size_t gl = gzip_buf("[1]", 3, gz, sizeof(gz));
	FILE *fp = fopen(path, "wb");
	if (fp) {
		fwrite(gz, 1, gl, fp);
		fclose(fp);
	}
	struct tft_source *s = tft_source_open_file(path, &err);
	ok(s && tft_source_map(s, &m, &err) == 0 && !m.base, "a gzip file is not mapped");
	tft_source_close(s);
	unlink(path);
}

int main(void)
{
	test_documents();
	test_errors();
	test_depth();
	test_numbers();
	test_eof_allowance();
	test_skip();
	test_skip_stream();
	test_members();
	test_sources();
	test_mem_and_refill_from();
	test_source_map();
	return done_testing();
}
