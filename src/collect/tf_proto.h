/* SPDX-License-Identifier: MIT */
/*
 * TensorFlow protobuf messages read by more than one importer (GraphDef in
 * ingest_graph.c, RunMetadata in runmeta/): one table each, with the
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

#endif /* TFT_COLLECT_TF_PROTO_H */
