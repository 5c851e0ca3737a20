/* SPDX-License-Identifier: MIT */
/*
 * Float operations of TensorFlow ops from their shapes, with tfprof's rules:
 * the `@ops.RegisterStatistics(OP, "flops")` functions of TensorFlow
 * (python/profiler/internal/flops_registry.py, nn_ops.py, math_ops.py), so
 * that a node's float_ops are what tfprof would count (docs/cmd-prof.md
 * lists them, with the few places where tftracer goes further: NCHW layouts,
 * Conv3D and its backprops, BatchMatMul's adj_x).
 */
#ifndef TFT_ANALYZE_TF_COSTS_H
#define TFT_ANALYZE_TF_COSTS_H

#include <stdbool.h>
#include <stdint.h>

#include "analyze/prof_json.h"

#define TFT_SHAPE_MAX_DIMS 8

/* A tensor shape: n dims (0 = scalar); known false = unknown rank or missing. */
struct tft_shape {
	bool known;
	int n;
	int64_t d[TFT_SHAPE_MAX_DIMS];
};

/* Elements of a fully defined shape, or -1 (unknown rank, a dim < 0, overflow). */
int64_t tft_shape_numel(const struct tft_shape *s);

/*
 * Float operations of one run of an op of type `op` (NUL-terminated) with
 * attrs (the node's attrs object as docs/file-format.md stores it; may be
 * NULL), its data inputs' shapes in[0..nin) (control inputs left out) and
 * its output 0's shape. Returns the count, or -1 when tfprof has no rule for
 * the op or a shape it needs is not fully defined.
 */
int64_t tft_tf_flops(const char *op, const struct pj *attrs, const struct tft_shape *in, int nin,
		     const struct tft_shape *out);

/* Whether `op` has a flops rule (tfprof's registered ops and tftracer's additions). */
bool tft_tf_has_flops(const char *op);

/* Whether `op` is a variable whose "shape" attr gives the parameters (VariableV2, VarHandleOp ...). */
bool tft_tf_is_variable(const char *op);

#endif /* TFT_ANALYZE_TF_COSTS_H */
