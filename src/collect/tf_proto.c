/* SPDX-License-Identifier: MIT */
/*
 * The TensorFlow message tables shared by the GraphDef and RunMetadata
 * importers (see tf_proto.h).
 */
#include <stddef.h>
#include <string.h>

#include "collect/tf_proto.h"

#define F TFT_PB_FIELD
#define H TFT_PB_HOOK

static const struct tft_pb_field dim_fields[] = {
	F(1, TFT_PB_INT64, 0, struct tft_tf_dim, size, "size", NULL, NULL),
	F(2, TFT_PB_STRING, 0, struct tft_tf_dim, name, "name", NULL, NULL),
};
static const struct tft_pb_msg dim_msg = {"TensorShapeProto.Dim", dim_fields, 2,
					  offsetof(struct tft_tf_dim, has)};

/* A shape being decoded: the struct filled, and where its dims go. */
struct shape_dec {
	uint64_t has;
	int64_t unknown_rank;
	tft_tf_dim_fn fn;
	void *user;
};

static int on_dim(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct shape_dec *sd = msg;
	struct tft_tf_dim dim;
	int r;

	(void)f;
	memset(&dim, 0, sizeof(dim));
	r = tft_pb_wire_decode_sub(&v->sub, &dim_msg, &dim, ctx);
	if (r)
		return r;
	sd->fn(sd->user, &dim);
	return 0;
}

static const struct tft_pb_field shape_fields[] = {
	H(2, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "dim", on_dim, NULL),
	F(3, TFT_PB_BOOL, 0, struct shape_dec, unknown_rank, "unknown_rank", NULL, NULL),
};
static const struct tft_pb_msg shape_msg = {"TensorShapeProto", shape_fields, 2,
					    offsetof(struct shape_dec, has)};

int tft_tf_shape_decode(const struct tft_pb_sub *s, void *ctx, struct tft_tf_shape *sh,
			tft_tf_dim_fn fn, void *user)
{
	struct shape_dec sd = {sh->has, sh->unknown_rank, fn, user};
	int r;

	r = tft_pb_wire_decode_sub(s, &shape_msg, &sd, ctx);
	sh->has = sd.has;
	sh->unknown_rank = sd.unknown_rank;
	return r;
}
