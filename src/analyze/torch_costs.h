/* SPDX-License-Identifier: MIT */
/*
 * Float operations of PyTorch ops from a trace's "Input Dims" (and, for
 * convolutions, the "Concrete Inputs" newer profilers record), with the
 * rules of PyTorch's own profiler (torch/csrc/profiler/util.cpp,
 * computeFlops): the value `key_averages()` gives with `with_flops=True` for
 * the ops it counts. A trace's own "flops" arg, where the profiler wrote
 * one, is always preferred to this.
 */
#ifndef TFT_ANALYZE_TORCH_COSTS_H
#define TFT_ANALYZE_TORCH_COSTS_H

#include <stdbool.h>
#include <stdint.h>

#include "analyze/prof_json.h"

/* Whether PyTorch's profiler counts flops for op `name` ("aten::mm" ...). */
bool tft_torch_has_flops(const char *name);

/*
 * Flops of one call of `name` with input shapes `dims` (the "Input Dims"
 * array) and `concrete` (the "Concrete Inputs" array, or NULL). Returns
 * the count, or -1 when the op is not counted or the inputs do not say
 * enough (a convolution without its strides, paddings, dilations, groups).
 */
int64_t tft_torch_flops(const char *name, const struct pj *dims, const struct pj *concrete);

/* Bytes per element of a PyTorch dtype name ("float", "c10::BFloat16", "Half" ...), 0 if unknown. */
int tft_torch_dtype_size(const char *type);

#endif /* TFT_ANALYZE_TORCH_COSTS_H */
