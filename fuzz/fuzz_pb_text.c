/* SPDX-License-Identifier: MIT */
/* libFuzzer target: the protobuf text-format reader. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "codec/pb_text.h"

struct any {
	uint64_t has;
	int64_t i32, i64;
	uint64_t u64;
	int64_t s64, b, en;
	uint64_t fx32;
	double fl, db;
	struct tft_pb_bytes str;
};

static int on_msg(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v);
static int on_num(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	(*(uint64_t *)ctx) += (uint64_t)v->n.i;
	return 0;
}

static const struct tft_pb_enum_val en_vals[] = {{"ZERO", 0}, {"ONE", 1}};
static const struct tft_pb_enum en_enum = {en_vals, 2, NULL};

static const struct tft_pb_field any_fields[] = {
	{1, TFT_PB_INT32, 0, offsetof(struct any, i32), "i32", NULL, NULL},
	{2, TFT_PB_INT64, 0, offsetof(struct any, i64), "i64", NULL, NULL},
	{3, TFT_PB_UINT64, 0, offsetof(struct any, u64), "u64", NULL, NULL},
	{4, TFT_PB_SINT64, 0, offsetof(struct any, s64), "s64", NULL, NULL},
	{5, TFT_PB_BOOL, 0, offsetof(struct any, b), "b", NULL, NULL},
	{6, TFT_PB_ENUM, 0, offsetof(struct any, en), "en", NULL, &en_enum},
	{7, TFT_PB_FIXED32, 0, offsetof(struct any, fx32), "fx32", NULL, NULL},
	{8, TFT_PB_FLOAT, 0, offsetof(struct any, fl), "fl", NULL, NULL},
	{9, TFT_PB_DOUBLE, 0, offsetof(struct any, db), "db", NULL, NULL},
	{10, TFT_PB_STRING, 0, offsetof(struct any, str), "str", NULL, NULL},
	{11, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, TFT_PB_NOOFF, "child", on_msg, NULL},
	{12, TFT_PB_SINT32, TFT_PB_F_REPEATED, TFT_PB_NOOFF, "nums", on_num, NULL},
	{13, TFT_PB_SFIXED64, TFT_PB_F_REPEATED, TFT_PB_NOOFF, "fixed", on_num, NULL},
	{14, TFT_PB_MESSAGE, 0, TFT_PB_NOOFF, "skipped", NULL, NULL},
};
static const struct tft_pb_msg any_msg = {"Any", any_fields, 14, offsetof(struct any, has)};

static int on_msg(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct any a;

	memset(&a, 0, sizeof(a));
	return tft_pb_wire_decode_sub(&v->sub, &any_msg, &a, ctx);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tft_pb_dec d;
	struct tft_error err;
	struct any a;
	uint64_t sum = 0;

	tft_error_clear(&err);
	memset(&a, 0, sizeof(a));
	if (tft_pb_text_init(&d, data, size, &err) == 0 &&
	    tft_pb_text_decode(&d, &any_msg, &a, &sum) == 0 && a.str.len)
		sum += a.str.p[a.str.len - 1];
	tft_pb_text_fini(&d);
	return 0;
}
