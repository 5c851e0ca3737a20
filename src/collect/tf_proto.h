/* SPDX-License-Identifier: MIT */
/*
 * TensorFlow protobuf messages read by more than one importer (GraphDef in
 * ingest_graph.c, RunMetadata in runmeta/: TensorShapeProto, NodeDef, GraphDef): one table each, with the
 * importer's own handling passed in. Not for messages one importer alone
 * reads (they stay with it).
 */
#ifndef TFT_COLLECT_TF_PROTO_H
#define TFT_COLLECT_TF_PROTO_H

#include <stdint.h>

#include "codec/pb_wire.h"

/* TensorShapeProto.Dim: size = -1 for an unknown size; name often empty. */
struct tft_tf_dim {
	uint64_t has;
	int64_t size;
	struct tft_pb_bytes name; /* borrowed from the input */
};

/*
 * TensorShapeProto without its dims (they go to a tft_tf_dim_fn as they
 * are read). has: bit 0 a dim was given, bit 1 unknown_rank was given.
 */
struct tft_tf_shape {
	uint64_t has;
	int64_t unknown_rank;
};

/* Called for each dim of a shape in input order; `dim` lives for the call only. */
typedef void (*tft_tf_dim_fn)(void *user, const struct tft_tf_dim *dim);

/*
 * Decode the TensorShapeProto s into sh, merging as protobuf does (has
 * bits are added, unknown_rank takes the last value given), each dim to
 * fn(user, dim). ctx is the decoder context handed on to nested decodes.
 * Call it from the handler of the field that holds the shape (the field
 * is then on the decoder's path, so that an error names it).
 * Returns 0 or the decoder's negative status (the error is reported).
 */
int tft_tf_shape_decode(const struct tft_pb_sub *s, void *ctx, struct tft_tf_shape *sh,
			tft_tf_dim_fn fn, void *user);

/* NodeDef: name, op and device kept (borrowed from the input); has: bit 0 name, 1 op, 3 device. */
struct tft_tf_node {
	uint64_t has;
	struct tft_pb_bytes name, op, device;
};

/*
 * The importer's handling of a NodeDef's repeated fields, as field
 * handlers called with the decode's ctx and a NULL msg: input (each input
 * name, a string) and attr (each NodeDef.AttrEntry, a sub-message to
 * decode or not). NULL: the field is read and dropped.
 */
struct tft_tf_node_fns {
	tft_pb_field_fn input, attr;
};

/*
 * Decode the NodeDef s into n (zeroed by the caller), its inputs and attrs
 * to fns (ctx handed on to them). Call it from the handler of the field
 * that holds the node. Returns 0 or the decoder's negative status.
 */
int tft_tf_node_decode(const struct tft_pb_sub *s, void *ctx, struct tft_tf_node *n,
		       const struct tft_tf_node_fns *fns);

/*
 * The importer's handling of a GraphDef: node (each NodeDef, a
 * sub-message) and library (the FunctionDefLibrary) as field handlers
 * (ctx: the decode's, msg NULL); NULL: read and dropped. versions and the
 * deprecated version are always dropped.
 */
struct tft_tf_graph_fns {
	tft_pb_field_fn node, library;
};

/* Decode the GraphDef s with fns (ctx handed on). Returns 0 or the decoder's negative status. */
int tft_tf_graph_decode(const struct tft_pb_sub *s, void *ctx, const struct tft_tf_graph_fns *fns);

/* Same, d's whole input being the GraphDef. */
int tft_tf_graph_decode_all(struct tft_pb_dec *d, void *ctx, const struct tft_tf_graph_fns *fns);

#endif /* TFT_COLLECT_TF_PROTO_H */
