/* SPDX-License-Identifier: MIT */
/* Unit tests for the protobuf wire reader (codec/pb_wire.c). */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "codec/pb_wire.h"
#include "tap.h"

/* ---- a tiny encoder ------------------------------------------------------------ */

struct enc {
	uint8_t *p;
	size_t len, cap;
};

static void e_byte(struct enc *e, uint8_t b)
{
	if (e->len == e->cap) {
		e->cap = e->cap ? e->cap * 2 : 256;
		e->p = realloc(e->p, e->cap);
		if (!e->p)
			abort();
	}
	e->p[e->len++] = b;
}

static void e_raw(struct enc *e, const void *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		e_byte(e, ((const uint8_t *)p)[i]);
}

static void e_varint(struct enc *e, uint64_t v)
{
	while (v >= 0x80) {
		e_byte(e, (uint8_t)(v | 0x80));
		v >>= 7;
	}
	e_byte(e, (uint8_t)v);
}

static void e_key(struct enc *e, uint32_t num, int wt)
{
	e_varint(e, (uint64_t)num << 3 | (uint64_t)wt);
}

static void e_int(struct enc *e, uint32_t num, uint64_t v)
{
	e_key(e, num, 0);
	e_varint(e, v);
}

static void e_f64(struct enc *e, uint32_t num, uint64_t v)
{
	e_key(e, num, 1);
	for (int i = 0; i < 8; i++)
		e_byte(e, (uint8_t)(v >> (8 * i)));
}

static void e_f32(struct enc *e, uint32_t num, uint32_t v)
{
	e_key(e, num, 5);
	for (int i = 0; i < 4; i++)
		e_byte(e, (uint8_t)(v >> (8 * i)));
}

static void e_bytes(struct enc *e, uint32_t num, const void *p, size_t n)
{
	e_key(e, num, 2);
	e_varint(e, n);
	e_raw(e, p, n);
}

static void e_str(struct enc *e, uint32_t num, const char *s)
{
	e_bytes(e, num, s, strlen(s));
}

static void e_msg(struct enc *e, uint32_t num, struct enc *sub)
{
	e_bytes(e, num, sub->p, sub->len);
	free(sub->p);
	memset(sub, 0, sizeof(*sub));
}

/* ---- test message ------------------------------------------------------------------ */

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
	int64_t s32, s64, b, en;
	uint64_t fx32;
	int64_t sfx32;
	double fl;
	uint64_t fx64;
	int64_t sfx64;
	double db;
	struct tft_pb_bytes str, byt;
	struct inner in;
};

struct collect {
	int64_t nums[64];
	int nnums;
	int64_t items_a[16];
	uint32_t items_idx[16];
	int nitems;
	int fail_with;
	struct tft_pb_sub saved;
	int have_saved;
};

static int on_num(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct collect *c = ctx;

	if (c->nnums < 64)
		c->nums[c->nnums++] = v->n.i;
	return 0;
}

static int on_item(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct collect *c = ctx;
	struct inner in;
	int r;

	if (c->fail_with)
		return tft_pb_wire_fail(v->sub.dec, c->fail_with, v->offset, "handler refused item %u",
					v->index);
	if (!c->have_saved) {
		c->saved = v->sub;
		c->have_saved = 1;
	}
	memset(&in, 0, sizeof(in));
	r = tft_pb_wire_decode_sub(&v->sub, &inner_msg, &in, ctx);
	if (r)
		return r;
	if (c->nitems < 16) {
		c->items_a[c->nitems] = in.a;
		c->items_idx[c->nitems++] = v->index;
	}
	return 0;
}

static const struct tft_pb_field all_fields[] = {
	{1, TFT_PB_INT32, 0, offsetof(struct all, i32), "i32", NULL, NULL},
	{2, TFT_PB_INT64, 0, offsetof(struct all, i64), "i64", NULL, NULL},
	{3, TFT_PB_UINT32, 0, offsetof(struct all, u32), "u32", NULL, NULL},
	{4, TFT_PB_UINT64, 0, offsetof(struct all, u64), "u64", NULL, NULL},
	{5, TFT_PB_SINT32, 0, offsetof(struct all, s32), "s32", NULL, NULL},
	{6, TFT_PB_SINT64, 0, offsetof(struct all, s64), "s64", NULL, NULL},
	{7, TFT_PB_BOOL, 0, offsetof(struct all, b), "b", NULL, NULL},
	{8, TFT_PB_ENUM, 0, offsetof(struct all, en), "en", NULL, NULL},
	{9, TFT_PB_FIXED32, 0, offsetof(struct all, fx32), "fx32", NULL, NULL},
	{10, TFT_PB_SFIXED32, 0, offsetof(struct all, sfx32), "sfx32", NULL, NULL},
	{11, TFT_PB_FLOAT, 0, offsetof(struct all, fl), "fl", NULL, NULL},
	{12, TFT_PB_FIXED64, 0, offsetof(struct all, fx64), "fx64", NULL, NULL},
	{13, TFT_PB_SFIXED64, 0, offsetof(struct all, sfx64), "sfx64", NULL, NULL},
	{14, TFT_PB_DOUBLE, 0, offsetof(struct all, db), "db", NULL, NULL},
	{15, TFT_PB_STRING, 0, offsetof(struct all, str), "str", NULL, NULL},
	{16, TFT_PB_BYTES, 0, offsetof(struct all, byt), "byt", NULL, NULL},
	{17, TFT_PB_MESSAGE, 0, offsetof(struct all, in), "in", NULL, &inner_msg},
	{18, TFT_PB_SINT64, TFT_PB_F_REPEATED, TFT_PB_NOOFF, "nums", on_num, NULL},
	{19, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, TFT_PB_NOOFF, "items", on_item, NULL},
};
static const struct tft_pb_msg all_msg = {"All", all_fields, 19, offsetof(struct all, has)};

/* Self-referential message for the depth limit. */
struct node {
	uint64_t has;
};
static int on_child(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v);
static const struct tft_pb_field node_fields[] = {
	{1, TFT_PB_MESSAGE, 0, TFT_PB_NOOFF, "child", on_child, NULL},
	{2, TFT_PB_INT64, 0, TFT_PB_NOOFF, "x", NULL, NULL},
};
static const struct tft_pb_msg node_msg = {"Node", node_fields, 2, TFT_PB_NOOFF};

static int on_child(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	return tft_pb_wire_decode_sub(&v->sub, &node_msg, NULL, ctx);
}

static int decode(const struct enc *e, const struct tft_pb_msg *m, void *out, void *ctx,
		  struct tft_error *err)
{
	struct tft_pb_dec d;

	tft_error_clear(err);
	tft_pb_wire_init(&d, e->p, e->len, err);
	return tft_pb_wire_decode(&d, m, out, ctx);
}

static void test_varint(void)
{
	static const uint64_t vals[] = {0, 1, 127, 128, 300, 16383, 16384, (1ull << 35) + 7,
					INT64_MAX, UINT64_MAX};
	uint8_t bad[11];
	const uint8_t *p;
	uint64_t v;

	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		struct enc e = {0};
		int r;

		e_varint(&e, vals[i]);
		p = e.p;
		r = tft_pb_wire_varint(&p, e.p + e.len, &v);
		ok(r == 0 && v == vals[i] && p == e.p + e.len, "varint round trip %llu (%zu bytes)",
		   (unsigned long long)vals[i], e.len);
		/* Every strict prefix is truncated. */
		if (e.len > 1) {
			p = e.p;
			r = tft_pb_wire_varint(&p, e.p + e.len - 1, &v);
			ok(r == -1 && p == e.p, "varint %llu truncated -> -1", (unsigned long long)vals[i]);
		}
		free(e.p);
	}
	memset(bad, 0x80, sizeof(bad));
	bad[10] = 0x01;
	p = bad;
	is_int(tft_pb_wire_varint(&p, bad + 11, &v), -2, "11-byte varint is over-long");
	memset(bad, 0xFF, 9);
	bad[9] = 0x02;
	p = bad;
	is_int(tft_pb_wire_varint(&p, bad + 10, &v), -2, "10th byte > 1 is over-long");
	p = bad;
	is_int(tft_pb_wire_varint(&p, bad, &v), -1, "empty range is truncated");

	is_int(tft_pb_wire_zigzag64(0), 0, "zigzag64 0");
	is_int(tft_pb_wire_zigzag64(1), -1, "zigzag64 1");
	is_int(tft_pb_wire_zigzag64(2), 1, "zigzag64 2");
	ok(tft_pb_wire_zigzag64(UINT64_MAX) == INT64_MIN, "zigzag64 max -> INT64_MIN");
	ok(tft_pb_wire_zigzag64(UINT64_MAX - 1) == INT64_MAX, "zigzag64 max-1 -> INT64_MAX");
	is_int(tft_pb_wire_zigzag32(3), -2, "zigzag32 3");
	ok(tft_pb_wire_zigzag32(UINT32_MAX) == INT32_MIN, "zigzag32 max -> INT32_MIN");
}

static void build_all(struct enc *e)
{
	struct enc in = {0}, it = {0}, packed = {0};
	float f = 1.5f;
	double dv = -2.25;
	uint32_t fbits;
	uint64_t dbits;

	memcpy(&fbits, &f, 4);
	memcpy(&dbits, &dv, 8);
	e_int(e, 1, (uint64_t)(int64_t)-5); /* int32 negative: 10-byte varint */
	e_int(e, 2, (uint64_t)(int64_t)-1234567890123LL);
	e_int(e, 3, 4000000000u);
	e_int(e, 4, UINT64_MAX);
	e_int(e, 5, 3);        /* sint32 -2 */
	e_int(e, 6, 4691);     /* sint64 -2346 */
	e_int(e, 7, 1);
	e_int(e, 8, 42);
	e_f32(e, 9, 0xDEADBEEFu);
	e_f32(e, 10, (uint32_t)-7);
	e_f32(e, 11, fbits);
	e_f64(e, 12, 0x0123456789ABCDEFull);
	e_f64(e, 13, (uint64_t)-9);
	e_f64(e, 14, dbits);
	e_str(e, 15, "hello");
	e_bytes(e, 16, "\x00\x01\x02", 3);
	e_int(&in, 1, 77);
	e_str(&in, 2, "inner");
	e_msg(e, 17, &in);
	/* Unknown fields of every wire type, and a group: skipped. */
	e_int(e, 100, 5);
	e_f64(e, 101, 1);
	e_f32(e, 102, 1);
	e_str(e, 103, "skip me");
	e_key(e, 104, 3);
	e_int(e, 1, 999); /* inside the group: must not be seen */
	e_key(e, 105, 3);
	e_key(e, 105, 4);
	e_key(e, 104, 4);
	/* Repeated sint64: one unpacked, then a packed run. */
	e_int(e, 18, 1); /* -1 */
	e_varint(&packed, 2); /* 1 */
	e_varint(&packed, 4); /* 2 */
	e_varint(&packed, 599); /* -300 */
	e_msg(e, 18, &packed);
	for (int k = 0; k < 3; k++) {
		e_int(&it, 1, (uint64_t)(10 + k));
		e_msg(e, 19, &it);
	}
}

static void test_decode_all(void)
{
	struct enc e = {0};
	struct all a;
	struct collect c;
	struct tft_error err;
	int r;

	build_all(&e);
	memset(&a, 0, sizeof(a));
	memset(&c, 0, sizeof(c));
	r = decode(&e, &all_msg, &a, &c, &err);
	is_int(r, 0, "decode all kinds");
	is_int(a.i32, -5, "int32 negative");
	ok(a.i64 == -1234567890123LL, "int64 negative");
	ok(a.u32 == 4000000000u, "uint32 large");
	ok(a.u64 == UINT64_MAX, "uint64 max");
	is_int(a.s32, -2, "sint32");
	is_int(a.s64, -2346, "sint64");
	is_int(a.b, 1, "bool");
	is_int(a.en, 42, "enum");
	ok(a.fx32 == 0xDEADBEEFu, "fixed32");
	is_int(a.sfx32, -7, "sfixed32");
	ok(a.fl == 1.5, "float");
	ok(a.fx64 == 0x0123456789ABCDEFull, "fixed64");
	is_int(a.sfx64, -9, "sfixed64");
	ok(a.db == -2.25, "double");
	ok(a.str.len == 5 && memcmp(a.str.p, "hello", 5) == 0, "string borrowed");
	ok(a.str.p > e.p && a.str.p < e.p + e.len, "string points into the input (zero-copy)");
	ok(a.byt.len == 3 && a.byt.p[2] == 2, "bytes");
	is_int(a.in.a, 77, "embedded message scalar");
	ok(a.in.s.len == 5 && memcmp(a.in.s.p, "inner", 5) == 0, "embedded message string");
	ok((a.has & 0x1FFFF) == 0x1FFFF, "presence bits of fields 1..17");
	ok(a.in.has == 3, "presence bits of the embedded message");
	is_int(c.nnums, 4, "repeated sint64: unpacked + packed elements");
	ok(c.nums[0] == -1 && c.nums[1] == 1 && c.nums[2] == 2 && c.nums[3] == -300, "packed values");
	is_int(c.nitems, 3, "repeated messages via handler");
	ok(c.items_a[2] == 12 && c.items_idx[2] == 2, "repeated message index");
	ok(a.i32 == -5, "group contents skipped (field 1 inside the group not seen)");

	/* Deferred decoding of a saved sub-message. */
	{
		struct inner in;
		struct tft_pb_dec d;

		tft_error_clear(&err);
		tft_pb_wire_init(&d, e.p, e.len, &err);
		memset(&c, 0, sizeof(c));
		r = tft_pb_wire_decode(&d, &all_msg, NULL, &c);
		memset(&in, 0, sizeof(in));
		ok(r == 0 && c.have_saved, "sub saved");
		r = tft_pb_wire_decode_sub(&c.saved, &inner_msg, &in, NULL);
		ok(r == 0 && in.a == 10, "saved sub decodes later");
	}

	/* Raw iteration sees every top-level field. */
	{
		struct tft_pb_dec d;
		struct tft_pb_iter it;
		struct tft_pb_raw f;
		int n = 0, groups = 0;

		tft_pb_wire_init(&d, e.p, e.len, &err);
		tft_pb_wire_iter_init(&it, e.p, e.len);
		while ((r = tft_pb_wire_iter_next(&d, &it, &f)) == 1) {
			n++;
			groups += f.wt == TFT_PB_WT_SGROUP;
		}
		is_int(r, 0, "iteration ends cleanly");
		is_int(n, 17 + 5 + 2 + 3, "iteration field count");
		is_int(groups, 1, "one group seen by the iterator");
	}

	/* Packed iteration primitive. */
	{
		const uint8_t pk[] = {0x01, 0x96, 0x01, 0x7f};
		const uint8_t *p = pk;
		struct tft_pb_dec d;
		struct tft_pb_val v;
		int64_t got[4];
		int n = 0;

		tft_pb_wire_init(&d, pk, sizeof(pk), &err);
		while ((r = tft_pb_wire_packed_next(&d, &p, pk + sizeof(pk), TFT_PB_INT64, &v)) == 1)
			got[n++] = v.n.i;
		ok(r == 0 && n == 3 && got[0] == 1 && got[1] == 150 && got[2] == 127, "packed_next");
	}
	free(e.p);
}

static void expect_error(const uint8_t *buf, size_t len, const struct tft_pb_msg *m, int64_t off,
			 const char *msg_part, const char *what)
{
	struct enc e = {(uint8_t *)buf, len, len};
	struct tft_error err;
	struct all a;
	struct collect c;
	int r;

	memset(&a, 0, sizeof(a));
	memset(&c, 0, sizeof(c));
	r = decode(&e, m, &a, &c, &err);
	ok(r == TFT_EFORMAT && err.code == TFT_EFORMAT, "%s: EFORMAT", what);
	if (off >= 0 && !ok(err.offset == off, "%s: offset %lld", what, (long long)off))
		printf("#   got offset %lld (%s)\n", (long long)err.offset, err.msg);
	if (msg_part && !ok(strstr(err.msg, msg_part) != NULL, "%s: message mentions '%s'", what, msg_part))
		printf("#   got \"%s\"\n", err.msg);
}

static void test_errors(void)
{
	uint8_t b[64];
	struct enc e = {0}, it = {0};
	struct tft_error err;
	struct collect c;
	int r;

	b[0] = 0x08;
	b[1] = 0x80; /* truncated varint value */
	expect_error(b, 2, &all_msg, 1, "i32: truncated varint", "truncated varint");
	b[0] = 0x80;
	expect_error(b, 1, &all_msg, 0, "truncated field key", "truncated key");
	b[0] = 0x00;
	expect_error(b, 1, &all_msg, 0, "invalid field number 0", "field number 0");
	b[0] = 0x0e; /* field 1, wire type 6 */
	expect_error(b, 1, &all_msg, 0, "wire type", "wire type 6 on a known field");
	b[0] = 0xa6; b[1] = 0x06; /* field 100, wire type 6 */
	expect_error(b, 2, &all_msg, 0, "invalid wire type 6", "wire type 6 on an unknown field");
	b[0] = 0x7a; b[1] = 0x05; b[2] = 'a'; /* field 15 len 5, 1 byte left */
	expect_error(b, 3, &all_msg, 1, "length 5 exceeds", "length past the end");
	b[0] = 0x61; b[1] = 1; b[2] = 2; /* field 12 fixed64, 2 bytes */
	expect_error(b, 3, &all_msg, 1, "fx64: truncated fixed64", "truncated fixed64");
	b[0] = 0x0a; b[1] = 0x00; /* field 1 (int32) sent as LEN */
	expect_error(b, 2, &all_msg, 0, "i32: wire type 2 does not match", "wire type mismatch");
	b[0] = 0xa3; b[1] = 0x06; b[2] = 0x08; b[3] = 0x01; /* group 100 never closed */
	expect_error(b, 4, &all_msg, -1, "group 100 not closed", "unterminated group");
	b[0] = 0xa4; b[1] = 0x06; /* end group without start */
	expect_error(b, 2, &all_msg, 0, "without a start", "stray end group");

	/* Error inside a repeated sub-message: path and absolute offset. */
	for (int k = 0; k < 3; k++) {
		if (k == 2) {
			/* items[2].a: a truncated varint */
			uint8_t bad[] = {0x08, 0xff};

			e_bytes(&e, 19, bad, 2);
		} else {
			e_int(&it, 1, 5);
			e_msg(&e, 19, &it);
		}
	}
	expect_error(e.p, e.len, &all_msg, (int64_t)e.len - 1, "items[2].a: truncated varint",
		     "nested error path");
	free(e.p);
	memset(&e, 0, sizeof(e));

	/* Nesting limit: 100 levels of child { child { ... } }. */
	{
		struct enc cur = {0};

		e_int(&cur, 2, 1);
		for (int k = 0; k < 100; k++) {
			struct enc up = {0};

			e_msg(&up, 1, &cur);
			cur = up;
		}
		r = decode(&cur, &node_msg, NULL, NULL, &err);
		ok(r == TFT_EFORMAT && strstr(err.msg, "nested deeper than 64"), "depth limit enforced");
		ok(strstr(err.msg, "child.child.child") != NULL, "depth error carries the path");
		free(cur.p);
	}

	/* A handler's status and message come back. */
	e_int(&it, 1, 5);
	e_msg(&e, 19, &it);
	memset(&c, 0, sizeof(c));
	c.fail_with = TFT_EINVAL;
	r = decode(&e, &all_msg, NULL, &c, &err);
	ok(r == TFT_EINVAL && strstr(err.msg, "handler refused item 0"), "handler status propagates");
	free(e.p);

	/* Wire type checks of the scalar converter. */
	{
		struct tft_pb_val v;

		is_int(tft_pb_wire_scalar(TFT_PB_DOUBLE, TFT_PB_WT_VARINT, 1, &v), TFT_EFORMAT,
		       "scalar: double from varint refused");
		is_int(tft_pb_wire_scalar(TFT_PB_UINT32, TFT_PB_WT_VARINT, 0x1FFFFFFFFull, &v), 0,
		       "scalar: uint32 truncates");
		ok(v.n.u == 0xFFFFFFFFu, "scalar: uint32 value");
	}

	/* Every truncation of a valid message is refused or decoded, never overread. */
	{
		struct enc full = {0};
		int bad = 0;

		build_all(&full);
		for (size_t n = 0; n < full.len; n++) {
			uint8_t *copy = malloc(n ? n : 1);
			struct enc t = {copy, n, n};
			struct all a;

			memcpy(copy, full.p, n);
			memset(&a, 0, sizeof(a));
			memset(&c, 0, sizeof(c));
			r = decode(&t, &all_msg, &a, &c, &err);
			if (r != 0 && r != TFT_EFORMAT)
				bad++;
			if (r == TFT_EFORMAT && (err.offset < 0 || err.offset > (int64_t)n))
				bad++;
			free(copy);
		}
		is_int(bad, 0, "all truncations: 0 or EFORMAT with an in-range offset");
		free(full.p);
	}
}

static void test_path(void)
{
	struct tft_pb_dec d;
	char buf[64];

	tft_pb_wire_init(&d, (const uint8_t *)"", 0, NULL);
	d.path[0].name = "planes";
	d.path[0].index = 0;
	d.path[1].name = "lines";
	d.path[1].index = 2;
	d.path[2].name = "meta";
	d.path[2].index = TFT_PB_SINGULAR;
	d.depth = 3;
	is_str(tft_pb_wire_path(&d, buf, sizeof(buf)), "planes[0].lines[2].meta", "path format");
	tft_pb_wire_path(&d, buf, 8);
	is_int(strlen(buf), 7, "path truncated to the buffer");
	ok(tft_pb_wire_field(&all_msg, 17) == &all_fields[16], "field by number");
	ok(tft_pb_wire_field_by_name(&all_msg, "items", 5) == &all_fields[18], "field by name");
	ok(tft_pb_wire_field(&all_msg, 99) == NULL, "missing field");
	is_int(tft_pb_wire_type_of(TFT_PB_SFIXED32), TFT_PB_WT_I32, "wire type of sfixed32");
	is_int(tft_pb_wire_type_of(TFT_PB_MESSAGE), TFT_PB_WT_LEN, "wire type of message");
}

int main(void)
{
	test_varint();
	test_decode_all();
	test_errors();
	test_path();
	return done_testing();
}
