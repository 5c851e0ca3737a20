/* SPDX-License-Identifier: MIT */
/*
 * The TensorFlow message tables shared by the GraphDef and RunMetadata
 * importers (see tf_proto.h): TensorShapeProto, NodeDef, GraphDef.
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

/* A NodeDef being decoded: the struct filled, and who takes its repeated fields. */
struct node_dec {
	uint64_t has;
	struct tft_pb_bytes name, op, device;
	const struct tft_tf_node_fns *fns;
};

static int on_node_input(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	const struct node_dec *nd = msg;

	return nd->fns->input ? nd->fns->input(ctx, NULL, f, v) : 0;
}

static int on_node_attr(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	const struct node_dec *nd = msg;

	return nd->fns->attr ? nd->fns->attr(ctx, NULL, f, v) : 0;
}

static const struct tft_pb_field node_fields[] = {
	F(1, TFT_PB_STRING, 0, struct node_dec, name, "name", NULL, NULL),
	F(2, TFT_PB_STRING, 0, struct node_dec, op, "op", NULL, NULL),
	H(3, TFT_PB_STRING, TFT_PB_F_REPEATED, "input", on_node_input, NULL),
	F(4, TFT_PB_STRING, 0, struct node_dec, device, "device", NULL, NULL),
	H(5, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "attr", on_node_attr, NULL),
};
static const struct tft_pb_msg node_msg = {"NodeDef", node_fields, 5, offsetof(struct node_dec, has)};

int tft_tf_node_decode(const struct tft_pb_sub *s, void *ctx, struct tft_tf_node *n,
		       const struct tft_tf_node_fns *fns)
{
	struct node_dec nd = {n->has, n->name, n->op, n->device, fns};
	int r;

	r = tft_pb_wire_decode_sub(s, &node_msg, &nd, ctx);
	n->has = nd.has;
	n->name = nd.name;
	n->op = nd.op;
	n->device = nd.device;
	return r;
}

/* A GraphDef being decoded: who takes its fields. */
struct graph_dec {
	const struct tft_tf_graph_fns *fns;
};

static int on_graph_field(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	const struct graph_dec *gd = msg;
	tft_pb_field_fn fn = f->num == 1 ? gd->fns->node : f->num == 2 ? gd->fns->library : NULL;

	return fn ? fn(ctx, NULL, f, v) : 0;
}

static const struct tft_pb_field graph_fields[] = {
	H(1, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "node", on_graph_field, NULL),
	H(2, TFT_PB_MESSAGE, 0, "library", on_graph_field, NULL),
	H(3, TFT_PB_INT32, 0, "version", on_graph_field, NULL),
	H(4, TFT_PB_MESSAGE, 0, "versions", on_graph_field, NULL),
};
static const struct tft_pb_msg graph_msg = {"GraphDef", graph_fields, 4, TFT_PB_NOOFF};

int tft_tf_graph_decode(const struct tft_pb_sub *s, void *ctx, const struct tft_tf_graph_fns *fns)
{
	struct graph_dec gd = {fns};

	return tft_pb_wire_decode_sub(s, &graph_msg, &gd, ctx);
}

int tft_tf_graph_decode_all(struct tft_pb_dec *d, void *ctx, const struct tft_tf_graph_fns *fns)
{
	struct graph_dec gd = {fns};

	return tft_pb_wire_decode(d, &graph_msg, &gd, ctx);
}
