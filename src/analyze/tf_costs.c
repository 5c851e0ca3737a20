/* SPDX-License-Identifier: MIT */
/*
 * TensorFlow float-operation rules (tf_costs.h). Each rule is the formula of
 * the RegisterStatistics("flops") function TensorFlow ships for the op, on
 * the same shapes (input i = the tensor the node's i-th data input names,
 * out = output 0). Integer arithmetic; a rule whose shapes are not fully
 * defined gives -1, as tfprof then counts nothing for the node.
 */
#include <string.h>

#include "analyze/tf_costs.h"

int64_t tft_shape_numel(const struct tft_shape *s)
{
	int64_t n = 1;

	if (!s || !s->known)
		return -1;
	for (int i = 0; i < s->n; i++) {
		if (s->d[i] < 0)
			return -1;
		if (s->d[i] && n > INT64_MAX / s->d[i])
			return -1;
		n *= s->d[i];
	}
	return n;
}

enum kind {
	K_UNARY,     /* numel(in0) * k */
	K_L2LOSS,    /* 3 * numel(in0) - 1 */
	K_BINARY,    /* numel(out) * k */
	K_REDUCE,    /* numel(in0) * 1 + numel(out) * (k - 1), k = finalize flops */
	K_POOL,      /* product(ksize) * numel(out) */
	K_AVGPOOLGRAD, K_MAXPOOLGRAD,
	K_CONV2D_BP_INPUT, K_CONV2D_BP_FILTER,
	K_CONV3D_BP_INPUT, K_CONV3D_BP_FILTER,
	K_ADDN, K_MATMUL, K_BATCHMATMUL,
	K_CONV2D, K_CONV3D, K_DEPTHWISE, K_BIASADD, K_DILATION2D,
};

static const struct rule {
	const char *op;
	int kind;
	int k;
} rules[] = {
	/* flops_registry.py: unary */
	{ "Reciprocal", K_UNARY, 1 }, { "Square", K_UNARY, 1 }, { "Rsqrt", K_UNARY, 2 },
	{ "Log", K_UNARY, 1 }, { "Neg", K_UNARY, 1 }, { "AssignSub", K_UNARY, 1 },
	{ "AssignAdd", K_UNARY, 1 }, { "L2Loss", K_L2LOSS, 0 }, { "Softmax", K_UNARY, 5 },
	/* binary, per output element */
	{ "Add", K_BINARY, 1 }, { "AddV2", K_BINARY, 1 }, { "Sub", K_BINARY, 1 }, { "Mul", K_BINARY, 1 },
	{ "RealDiv", K_BINARY, 1 }, { "Maximum", K_BINARY, 1 }, { "Minimum", K_BINARY, 1 },
	{ "Pow", K_BINARY, 1 }, { "RsqrtGrad", K_BINARY, 4 }, { "GreaterEqual", K_BINARY, 1 },
	{ "Greater", K_BINARY, 1 }, { "LessEqual", K_BINARY, 1 }, { "Less", K_BINARY, 1 },
	{ "Equal", K_BINARY, 1 }, { "NotEqual", K_BINARY, 1 }, { "SquaredDifference", K_BINARY, 2 },
	/* reductions: reduce 1 flop per input element, finalize k per output element */
	{ "Mean", K_REDUCE, 1 }, { "Sum", K_REDUCE, 0 }, { "ArgMax", K_REDUCE, 0 },
	{ "ArgMin", K_REDUCE, 0 }, { "BiasAddGrad", K_REDUCE, 0 },
	/* convolution and pooling */
	{ "AvgPool", K_POOL, 0 }, { "MaxPool", K_POOL, 0 }, { "AvgPoolGrad", K_AVGPOOLGRAD, 0 },
	{ "MaxPoolGrad", K_MAXPOOLGRAD, 0 }, { "Conv2DBackpropInput", K_CONV2D_BP_INPUT, 0 },
	{ "Conv2DBackpropFilter", K_CONV2D_BP_FILTER, 0 },
	/* other ops */
	{ "AddN", K_ADDN, 0 }, { "MatMul", K_MATMUL, 0 }, { "BatchMatMul", K_BATCHMATMUL, 0 },
	{ "BatchMatMulV2", K_BATCHMATMUL, 0 }, { "BatchMatMulV3", K_BATCHMATMUL, 0 },
	/* registered in nn_ops.py */
	{ "Conv2D", K_CONV2D, 0 }, { "DepthwiseConv2dNative", K_DEPTHWISE, 0 },
	{ "BiasAdd", K_BIASADD, 0 }, { "BiasAddV1", K_BIASADD, 0 }, { "Dilation2D", K_DILATION2D, 0 },
	/* tftracer: the 3-D convolutions, by the 2-D formulas over three spatial dims */
	{ "Conv3D", K_CONV3D, 0 }, { "Conv3DBackpropInputV2", K_CONV3D_BP_INPUT, 0 },
	{ "Conv3DBackpropFilterV2", K_CONV3D_BP_FILTER, 0 },
};

static const struct rule *find_rule(const char *op)
{
	if (!op)
		return NULL;
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
		if (strcmp(rules[i].op, op) == 0)
			return &rules[i];
	return NULL;
}

bool tft_tf_has_flops(const char *op)
{
	return find_rule(op) != NULL;
}

bool tft_tf_is_variable(const char *op)
{
	static const char *const vars[] = { "Variable", "VariableV2", "VarHandleOp", "AutoReloadVariable",
					    "_VarHandleOp" };

	if (!op)
		return false;
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		if (strcmp(vars[i], op) == 0)
			return true;
	return false;
}

static const struct tft_shape *input(const struct tft_shape *in, int nin, int i)
{
	return i < nin ? &in[i] : NULL;
}

/* An int list attr (strides, ksize) into v[0..max); the count, or -1. */
static int int_list(const struct pj *attrs, const char *key, int64_t *v, int max)
{
	return tft_pj_dims(tft_pj_get(attrs, key), v, max);
}

static bool attr_true(const struct pj *attrs, const char *key)
{
	const struct pj *a = tft_pj_get(attrs, key);

	return a && a->type == PJ_TRUE;
}

/* NCHW / NCDHW: channels first (tfprof supports NHWC only; the formulas only move the axis). */
static bool channels_first(const struct pj *attrs)
{
	const struct pj *f = tft_pj_get(attrs, "data_format");

	return f && f->type == PJ_STR && f->len >= 2 && f->s[0] == 'N' && f->s[1] == 'C';
}

static int64_t mul_ok(int64_t a, int64_t b)
{
	if (a < 0 || b < 0)
		return -1;
	if (b && a > INT64_MAX / b)
		return -1;
	return a * b;
}

/* Product of the spatial strides (dims 1..sp for NHWC, 2..sp+1 for NCHW), or -1. */
static int64_t strides_product(const struct pj *attrs, int sp)
{
	int64_t s[8], p = 1;
	int n = int_list(attrs, "strides", s, 8);
	int first = channels_first(attrs) ? 2 : 1;

	if (n < first + sp)
		return -1;
	for (int i = first; i < first + sp; i++) {
		if (s[i] <= 0)
			return -1;
		p *= s[i];
	}
	return p;
}

static int64_t channels(const struct pj *attrs, const struct tft_shape *s)
{
	if (!s || !s->known || s->n < 2)
		return -1;
	return channels_first(attrs) ? s->d[1] : s->d[s->n - 1];
}

/* 2 * numel(big) * numel(kernel) / (channels(big) * strides): the backprop formulas. */
static int64_t conv_backprop(const struct pj *attrs, const struct tft_shape *big,
			     const struct tft_shape *kernel, int sp)
{
	int64_t nb = tft_shape_numel(big), nk = tft_shape_numel(kernel), c = channels(attrs, big);
	int64_t st = strides_product(attrs, sp), num;

	if (nb < 0 || nk < 0 || c <= 0 || st <= 0)
		return -1;
	num = mul_ok(mul_ok(2, nb), nk);
	return num < 0 ? -1 : num / (c * st);
}

int64_t tft_tf_flops(const char *op, const struct pj *attrs, const struct tft_shape *in, int nin,
		     const struct tft_shape *out)
{
	const struct rule *r = find_rule(op);
	const struct tft_shape *a = input(in, nin, 0), *b = input(in, nin, 1);
	int64_t ksize[8], n, m, k;
	int nk;

	if (!r)
		return -1;
	switch (r->kind) {
	case K_UNARY:
		return mul_ok(tft_shape_numel(a), r->k);
	case K_L2LOSS:
		n = tft_shape_numel(a);
		return n < 0 ? -1 : 3 * n - 1;
	case K_BINARY:
		return mul_ok(tft_shape_numel(out), r->k);
	case K_REDUCE:
		n = tft_shape_numel(a);
		m = tft_shape_numel(out);
		if (n < 0 || m < 0)
			return -1;
		return n + m * (r->k - 1);
	case K_POOL:
	case K_AVGPOOLGRAD:
	case K_MAXPOOLGRAD:
		nk = int_list(attrs, "ksize", ksize, 8);
		if (nk < 0)
			return -1;
		k = 1;
		for (int i = 0; i < nk; i++)
			k = mul_ok(k, ksize[i]);
		if (r->kind == K_POOL)
			return mul_ok(k, tft_shape_numel(out));
		n = tft_shape_numel(b); /* the original output / its gradient */
		if (r->kind == K_AVGPOOLGRAD)
			return mul_ok(mul_ok(k, n), 2);
		m = mul_ok(k, n);
		return m < 0 ? -1 : m + n;
	case K_CONV2D_BP_INPUT:
		return conv_backprop(attrs, out, b, 2);
	case K_CONV2D_BP_FILTER:
		return conv_backprop(attrs, a, out, 2);
	case K_CONV3D_BP_INPUT:
		return conv_backprop(attrs, out, b, 3);
	case K_CONV3D_BP_FILTER:
		return conv_backprop(attrs, a, out, 3);
	case K_ADDN:
		if (nin == 0)
			return 0;
		return mul_ok(tft_shape_numel(a), nin - 1);
	case K_MATMUL:
		if (!a || !a->known || a->n != 2 || tft_shape_numel(a) < 0)
			return -1;
		k = attr_true(attrs, "transpose_a") ? a->d[0] : a->d[1];
		return mul_ok(mul_ok(k, tft_shape_numel(out)), 2);
	case K_BATCHMATMUL:
		if (!a || !a->known || a->n < 2 || tft_shape_numel(a) < 0)
			return -1;
		k = attr_true(attrs, "adj_x") || attr_true(attrs, "transpose_a") ? a->d[a->n - 2] : a->d[a->n - 1];
		return mul_ok(mul_ok(k, tft_shape_numel(out)), 2);
	case K_CONV2D:
		/* filter [h, w, in, out]; needs the input's shape defined too, as TF's rule asserts */
		if (tft_shape_numel(a) < 0 || !b || tft_shape_numel(b) < 0 || b->n < 3)
			return -1;
		return mul_ok(mul_ok(mul_ok(mul_ok(tft_shape_numel(out), b->d[2]), b->d[0]), b->d[1]), 2);
	case K_CONV3D:
		/* filter [d, h, w, in, out] */
		if (tft_shape_numel(a) < 0 || !b || tft_shape_numel(b) < 0 || b->n < 4)
			return -1;
		return mul_ok(mul_ok(mul_ok(mul_ok(mul_ok(tft_shape_numel(out), b->d[3]), b->d[0]), b->d[1]),
				     b->d[2]), 2);
	case K_DEPTHWISE:
	case K_DILATION2D:
		if (tft_shape_numel(a) < 0 || !b || tft_shape_numel(b) < 0 || b->n < 2)
			return -1;
		return mul_ok(mul_ok(mul_ok(tft_shape_numel(out), b->d[0]), b->d[1]), 2);
	case K_BIASADD:
		return tft_shape_numel(a);
	}
	return -1;
}
