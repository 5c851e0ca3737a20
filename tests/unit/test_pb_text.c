/* SPDX-License-Identifier: MIT */
/* Unit tests for the protobuf text-format reader (codec/pb_text.c). */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "codec/pb_text.h"
#include "tap.h"

static const struct tft_pb_enum_val color_vals[] = {{"RED", 0}, {"GREEN", 1}, {"BLUE", 2}};

static int64_t color_lookup(const char *name, size_t len)
{
	return (len == 6 && memcmp(name, "PURPLE", 6) == 0) ? 7 : -1;
}

static const struct tft_pb_enum color_enum = {color_vals, 3, color_lookup};

struct inner {
	uint64_t has;
	int64_t a;
	struct tft_pb_bytes s;
};

static const struct tft_pb_field inner_fields[] = {
	{1, TFT_PB_INT64, 0, offsetof(struct inner, a), "a", NULL, NULL},
	{2, TFT_PB_STRING, 0, offsetof(struct inner, s), "s", NULL, NULL},
};
static const struct tft_pb_msg inner_msg = {"Inner", inner_fields, 2, offsetof(struct inner, has)};

struct all {
	uint64_t has;
	int64_t i32, i64;
	uint64_t u32, u64;
	int64_t s32, b, en;
	double fl, db;
	struct tft_pb_bytes str, byt;
	struct inner in;
};

struct collect {
	int64_t nums[32];
	int nnums;
	int64_t items[16];
	char item_s[16][32];
	int nitems;
	struct tft_pb_sub saved;
	int have_saved;
};

static int on_num(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct collect *c = ctx;

	if (c->nnums < 32)
		c->nums[c->nnums++] = v->n.i;
	return 0;
}

static int on_item(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct collect *c = ctx;
	struct inner in;
	int r;

	if (!c->have_saved) {
		c->saved = v->sub;
		c->have_saved = 1;
	}
	memset(&in, 0, sizeof(in));
	r = tft_pb_wire_decode_sub(&v->sub, &inner_msg, &in, ctx);
	if (r)
		return r;
	if (c->nitems < 16) {
		snprintf(c->item_s[c->nitems], sizeof(c->item_s[0]), "%.*s", (int)in.s.len,
			 (const char *)in.s.p);
		c->items[c->nitems++] = in.a;
	}
	return 0;
}

static const struct tft_pb_field all_fields[] = {
	{1, TFT_PB_INT32, 0, offsetof(struct all, i32), "i32", NULL, NULL},
	{2, TFT_PB_INT64, 0, offsetof(struct all, i64), "i64", NULL, NULL},
	{3, TFT_PB_UINT32, 0, offsetof(struct all, u32), "u32", NULL, NULL},
	{4, TFT_PB_UINT64, 0, offsetof(struct all, u64), "u64", NULL, NULL},
	{5, TFT_PB_SINT32, 0, offsetof(struct all, s32), "s32", NULL, NULL},
	{7, TFT_PB_BOOL, 0, offsetof(struct all, b), "b", NULL, NULL},
	{8, TFT_PB_ENUM, 0, offsetof(struct all, en), "en", NULL, &color_enum},
	{11, TFT_PB_FLOAT, 0, offsetof(struct all, fl), "fl", NULL, NULL},
	{14, TFT_PB_DOUBLE, 0, offsetof(struct all, db), "db", NULL, NULL},
	{15, TFT_PB_STRING, 0, offsetof(struct all, str), "str", NULL, NULL},
	{16, TFT_PB_BYTES, 0, offsetof(struct all, byt), "byt", NULL, NULL},
	{17, TFT_PB_MESSAGE, 0, offsetof(struct all, in), "in", NULL, &inner_msg},
	{18, TFT_PB_SINT64, TFT_PB_F_REPEATED, TFT_PB_NOOFF, "nums", on_num, NULL},
	{19, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, TFT_PB_NOOFF, "items", on_item, NULL},
};
static const struct tft_pb_msg all_msg = {"All", all_fields, 14, offsetof(struct all, has)};

struct run {
	struct tft_pb_dec d;
	struct tft_error err;
	struct all a;
	struct collect c;
	int r;
};

static void run_text_n(struct run *t, const char *text, size_t len)
{
	memset(t, 0, sizeof(*t));
	tft_error_clear(&t->err);
	t->r = tft_pb_text_init(&t->d, (const uint8_t *)text, len, &t->err);
	if (!t->r)
		t->r = tft_pb_text_decode(&t->d, &all_msg, &t->a, &t->c);
}

static void run_text(struct run *t, const char *text)
{
	memset(t, 0, sizeof(*t));
	tft_error_clear(&t->err);
	t->r = tft_pb_text_init(&t->d, (const uint8_t *)text, strlen(text), &t->err);
	if (!t->r)
		t->r = tft_pb_text_decode(&t->d, &all_msg, &t->a, &t->c);
}

static void test_all_syntax(void)
{
	static const char doc[] =
		"# a comment line\n"
		"i32: -5  i64: 0x7fffffffffffffff\n"
		"u32: 4000000000, u64: 18446744073709551615;\n"
		"s32: -2147483648\n"
		"b: true\n"
		"en: BLUE  # trailing comment\n"
		"fl: 1.5f db: -2.5e-3\n"
		"str: 'single' \"and \\\"double\\\"\" ' \\101\\x42\\u00e9\\t'\n"
		"byt: \"\\000\\001\\377\"\n"
		"in < a: 017 s: \"nested\" >\n"
		"nums: -1 nums: [2, -300, 0x10]\n"
		"items { a: 10 s: \"x\" }\n"
		"items: { a: 11 }\n"
		"items [ { a: 12 }, <a: 13> ]\n"
		"unknown_scalar: \"skipped\" unknown_msg { deep { x: 1 s: \"}\" } }\n"
		"unknown_list: [1, 2] [ext.pkg.field]: 5\n"
		"[type.googleapis.com/some.Any] { a: 1 }\n";
	struct run t;

	run_text(&t, doc);
	if (!ok(t.r == 0, "decode the full syntax sample"))
		printf("#   %s at %lld\n", t.err.msg, (long long)t.err.offset);
	is_int(t.a.i32, -5, "int32 negative");
	ok(t.a.i64 == INT64_MAX, "int64 hex max");
	ok(t.a.u32 == 4000000000u, "uint32 large");
	ok(t.a.u64 == UINT64_MAX, "uint64 max");
	ok(t.a.s32 == INT32_MIN, "int32 min");
	is_int(t.a.b, 1, "bool true");
	is_int(t.a.en, 2, "enum by name");
	ok(t.a.fl == 1.5, "float with f suffix");
	ok(fabs(t.a.db + 2.5e-3) < 1e-12, "double with exponent");
	{
		static const char want[] = "singleand \"double\" AB\xc3\xa9\t";

		ok(t.a.str.len == sizeof(want) - 1 && memcmp(t.a.str.p, want, sizeof(want) - 1) == 0,
		   "concatenated strings with escapes (octal, hex, unicode)");
	}
	ok(t.a.byt.len == 3 && t.a.byt.p[0] == 0 && t.a.byt.p[1] == 1 && t.a.byt.p[2] == 0xff,
	   "bytes with octal escapes");
	is_int(t.a.in.a, 15, "octal integer in an angle-bracket message");
	ok(t.a.in.s.len == 6 && memcmp(t.a.in.s.p, "nested", 6) == 0, "nested string");
	is_int(t.c.nnums, 4, "repeated scalar: single + list");
	ok(t.c.nums[0] == -1 && t.c.nums[1] == 2 && t.c.nums[2] == -300 && t.c.nums[3] == 16,
	   "list values");
	is_int(t.c.nitems, 4, "repeated messages: {}, ':' {}, list of {} and <>");
	ok(t.c.items[0] == 10 && t.c.items[3] == 13, "message values");
	is_str(t.c.item_s[0], "x", "message string");
	ok((t.a.has & 0x3FFF) == 0x3FFF, "presence bits");
	{
		/* A saved text sub decodes again later. */
		struct inner in;

		memset(&in, 0, sizeof(in));
		ok(t.c.have_saved && tft_pb_wire_decode_sub(&t.c.saved, &inner_msg, &in, NULL) == 0 &&
			   in.a == 10,
		   "saved text sub decodes later");
	}
	tft_pb_text_fini(&t.d);

	run_text(&t, "en: PURPLE b: f fl: -inf db: nan str: 'plain'");
	ok(t.r == 0 && t.a.en == 7 && t.a.b == 0 && isinf(t.a.fl) && t.a.fl < 0 && isnan(t.a.db),
	   "enum via lookup hook, bool f, -inf, nan");
	ok(t.a.str.p && t.a.str.p[-1] == '\'', "plain literal is borrowed from the input");
	tft_pb_text_fini(&t.d);

	run_text(&t, "");
	ok(t.r == 0 && t.a.has == 0, "empty document");
	tft_pb_text_fini(&t.d);

	run_text(&t, "  # only a comment\n\n");
	ok(t.r == 0, "comment-only document");
	tft_pb_text_fini(&t.d);
}

static void expect_error(const char *text, int64_t off, const char *part, const char *what)
{
	struct run t;

	run_text(&t, text);
	ok(t.r == TFT_EFORMAT, "%s: EFORMAT", what);
	if (off >= 0 && !ok(t.err.offset == off, "%s: offset %lld", what, (long long)off))
		printf("#   got %lld (%s)\n", (long long)t.err.offset, t.err.msg);
	if (part && !ok(strstr(t.err.msg, part) != NULL, "%s: message has '%s'", what, part))
		printf("#   got \"%s\"\n", t.err.msg);
	tft_pb_text_fini(&t.d);
}

static void test_errors(void)
{
	expect_error("str: \"open", 10, "str: expected '\"' before the end of the input (the string opened at byte 5)",
		     "unterminated string: where the input ends");
	expect_error("str: \"a\nb\"", 7, "newline inside a string", "newline in string");
	expect_error("str: \"\\q\"", 6, "invalid escape", "bad escape");
	expect_error("str: \"\\u12\"", 6, "invalid escape", "short \\u escape");
	expect_error("i32 5", 4, "expected ':' or '{'", "missing colon");
	expect_error("i32: 2147483648", 5, "out of range", "int32 overflow");
	expect_error("u32: -1", 5, "negative value", "negative unsigned");
	expect_error("u64: 18446744073709551616", 5, "out of range", "uint64 overflow");
	expect_error("i32: 1.5", 5, "expected an integer", "float for int");
	expect_error("en: MAUVE", 4, "unknown enum value 'MAUVE'", "unknown enum");
	expect_error("b: yes", 3, "expected true or false", "bad bool");
	expect_error("db: 1.2.3", 4, "floating-point", "bad double");
	expect_error("in { a: 1 ", 10, "in: expected '}' before the end of the input (the message opened at byte 3)",
		     "unclosed message: where the input ends");
	expect_error("in { a: 1 >", 10, "in: expected '}'", "mismatched bracket");
	expect_error("in: 5", 4, "is a message", "scalar for message");
	expect_error("i32 { }", 4, "is not a message", "message for scalar");
	expect_error("items { a: x }", 11, "items[0].a: expected an integer", "path in nested error");
	expect_error("items {} items { s: 'ok' a: 0x }", 28, "items[1].a", "path index");
	expect_error("}", 0, "expected a field name", "stray close");
	expect_error("nums: [1, 2", 11, "nums[2]: expected ',' or ']' before the end of the input",
		     "unclosed list");
	expect_error("[ext.field: 1", 13, "expected ']' before the end of the input",
		     "unclosed extension name");
	expect_error("[ext.field\n]: 1", 10, "expected ']' after an extension name",
		     "extension name across a line");
	{
		/*
		 * 5000 nested blocks exceed the limit of a skip (only `in` is
		 * parsed, the rest is skipped: 80 levels of it are fine, as in
		 * binary).
		 */
		static char buf[32768];
		size_t n = 0;

		for (int i = 0; i < 5000; i++)
			n += (size_t)snprintf(buf + n, sizeof(buf) - n, "in {");
		for (int i = 0; i < 5000; i++)
			buf[n++] = '}';
		buf[n] = '\0';
		expect_error(buf, -1, "nested deeper", "depth limit");
	}
	{
		/*
		 * A NUL between top-level fields (a crash's zero-filled tail) is
		 * an error, not the end of the document: the fields after it
		 * would be lost silently.
		 */
		static const char doc[] = "i32: 1\n\0\0\0i64: 2\n";
		struct run t;

		run_text_n(&t, doc, sizeof(doc) - 1);
		ok(t.r == TFT_EFORMAT && t.err.offset == 7 && strstr(t.err.msg, "expected a field name"),
		   "NUL between top-level fields: error at byte 7 (r %d, offset %lld)", t.r,
		   (long long)t.err.offset);
		tft_pb_text_fini(&t.d);
	}
}

/* A tree: `kid` messages decoded by their handler, `opaque` ones never descended into. */
struct tree {
	uint64_t has;
	int64_t v;
	struct tft_pb_bytes s;
};

static int on_kid(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v);

static const struct tft_pb_field tree_fields[] = {
	{1, TFT_PB_INT64, 0, offsetof(struct tree, v), "v", NULL, NULL},
	{2, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, TFT_PB_NOOFF, "kid", on_kid, NULL},
	{3, TFT_PB_MESSAGE, 0, TFT_PB_NOOFF, "opaque", NULL, NULL},
	{4, TFT_PB_STRING, 0, offsetof(struct tree, s), "s", NULL, NULL},
};
static const struct tft_pb_msg tree_msg = {"Tree", tree_fields, 4, offsetof(struct tree, has)};

static int on_kid(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct tree t;

	memset(&t, 0, sizeof(t));
	return tft_pb_wire_decode_sub(&v->sub, &tree_msg, &t, ctx);
}

static void expect_tree_error(const char *text, int64_t off, const char *msg, const char *what)
{
	struct tft_pb_dec d;
	struct tft_error err;
	struct tree t;
	int r;

	memset(&t, 0, sizeof(t));
	tft_error_clear(&err);
	r = tft_pb_text_init(&d, (const uint8_t *)text, strlen(text), &err);
	if (!r)
		r = tft_pb_text_decode(&d, &tree_msg, &t, NULL);
	ok(r == TFT_EFORMAT, "%s: EFORMAT", what);
	if (!ok(err.offset == off && strcmp(err.msg, msg) == 0, "%s: byte %lld: %s", what,
		(long long)off, msg))
		printf("#   got byte %lld: %s\n", (long long)err.offset, err.msg);
	tft_pb_text_fini(&d);
}

/*
 * Errors in a block that does not close: a message is scanned whole before
 * it is parsed, and that scan used to report where the outermost open
 * message starts ("kid: message not closed", byte 4) wherever the cut was.
 */
static void test_unclosed_positions(void)
{
	/* Cut inside kid[0].kid[1]: the end of the input, the innermost path. */
	expect_tree_error("kid { kid { v: 1 } kid { v: 2 ", 30,
			  "kid[0].kid[1]: expected '}' before the end of the input (the message opened "
			  "at byte 23)",
			  "cut three levels deep");
	expect_tree_error("v: 1\nkid { kid { kid <\n", 23,
			  "kid[0].kid[0].kid[0]: expected '>' before the end of the input (the message "
			  "opened at byte 21)",
			  "cut right after an opening '<'");
	/* The first real problem before the cut: the bad value, not the cut. */
	expect_tree_error("kid { kid { v: x } kid { v: 2 ", 15,
			  "kid[0].kid[0].v: expected an integer", "a bad value before the cut");
	/* A string the cut leaves open. */
	expect_tree_error("kid { kid { s: 'abc", 19,
			  "kid[0].kid[0].s: expected ''' before the end of the input (the string opened "
			  "at byte 15)",
			  "cut inside a string");
	/* A mismatched bracket deep inside: its byte and path. */
	expect_tree_error("kid { kid { v: 1 > } }", 17,
			  "kid[0].kid[0]: expected '}' (the message opened at byte 10)",
			  "mismatched bracket deep inside");
	/* A lost '}' that swallows the rest: the message it belongs to. */
	expect_tree_error("kid { v: 1 kid { v: 2 }\nkid { v: 3 }\n", 37,
			  "kid[0]: expected '}' before the end of the input (the message opened at "
			  "byte 4)",
			  "a lost closing bracket");
	/* A block no handler descends into: the scan's error, at the end of the input. */
	expect_tree_error("kid { opaque { x { y: 1 ", 24,
			  "kid[0].opaque: expected '}' before the end of the input (the message opened "
			  "at byte 13)",
			  "cut inside a block that is not parsed");
	expect_tree_error("kid { unknown { x { y: 1 ", 25,
			  "kid[0]: expected '}' before the end of the input (the message opened at byte "
			  "14)",
			  "cut inside an unknown field");
}

/* The same message in text and wire form decodes to the same struct. */
static void test_same_as_wire(void)
{
	static const uint8_t wire[] = {
		0x08, 0x07,                   /* i32: 7 */
		0x7a, 0x03, 'a', 'b', 'c',    /* str: "abc" */
		0x8a, 0x01, 0x04, 0x08, 0x09, 0x12, 0x00, /* in { a: 9 s: "" } */
		0x90, 0x01, 0x03,             /* nums: -2 */
		0x40, 0x01,                   /* en: GREEN */
	};
	struct tft_pb_dec d;
	struct tft_error err;
	struct all a;
	struct collect c;
	struct run t;
	int r;

	memset(&a, 0, sizeof(a));
	memset(&c, 0, sizeof(c));
	tft_error_clear(&err);
	tft_pb_wire_init(&d, wire, sizeof(wire), &err);
	r = tft_pb_wire_decode(&d, &all_msg, &a, &c);
	run_text(&t, "i32: 7 str: 'abc' in { a: 9 s: '' } nums: -2 en: GREEN");
	ok(r == 0 && t.r == 0, "both decode");
	ok(a.i32 == t.a.i32 && a.en == t.a.en && a.in.a == t.a.in.a && a.has == t.a.has &&
		   a.str.len == t.a.str.len && memcmp(a.str.p, t.a.str.p, a.str.len) == 0 &&
		   c.nnums == t.c.nnums && c.nums[0] == t.c.nums[0],
	   "text and wire give the same values and presence bits");
	tft_pb_text_fini(&t.d);
}

int main(void)
{
	test_all_syntax();
	test_errors();
	test_unclosed_positions();
	test_same_as_wire();
	return done_testing();
}
