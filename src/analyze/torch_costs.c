/* SPDX-License-Identifier: MIT */
/*
 * PyTorch flops rules (torch_costs.h), as torch/csrc/profiler/util.cpp's
 * computeFlops has them since 1.8: conv2d 2*N*Ho*Wo*kh*kw*C*O/groups with
 * Ho/Wo from the strides, paddings and dilations; mm and addmm 2*n*m*p;
 * bmm and baddbmm 2*b*n*m*p; mul and add the first input's element count.
 */
#include <stdlib.h>
#include <string.h>

#include "analyze/torch_costs.h"

enum { T_NONE, T_CONV2D, T_MM, T_ADDMM, T_BMM, T_BADDBMM, T_ELEMENTWISE };

static int op_kind(const char *name)
{
	if (!name)
		return T_NONE;
	if (strcmp(name, "aten::conv2d") == 0)
		return T_CONV2D;
	if (strcmp(name, "aten::mm") == 0)
		return T_MM;
	if (strcmp(name, "aten::addmm") == 0)
		return T_ADDMM;
	if (strcmp(name, "aten::bmm") == 0)
		return T_BMM;
	if (strcmp(name, "aten::baddbmm") == 0)
		return T_BADDBMM;
	if (strcmp(name, "aten::mul") == 0 || strcmp(name, "aten::add") == 0)
		return T_ELEMENTWISE;
	return T_NONE;
}

bool tft_torch_has_flops(const char *name)
{
	return op_kind(name) != T_NONE;
}

static int dims_at(const struct pj *dims, uint32_t i, int64_t *d, int max)
{
	return tft_pj_dims(tft_pj_at(dims, i), d, max);
}

static int64_t mul_ok(int64_t a, int64_t b)
{
	if (a < 0 || b < 0)
		return -1;
	if (b && a > INT64_MAX / b)
		return -1;
	return a * b;
}

/* A concrete input "[2, 2]" (a string holding a list) or "1" into v[0..max); the count or -1. */
static int concrete_ints(const struct pj *concrete, uint32_t i, int64_t *v, int max)
{
	const struct pj *c = tft_pj_at(concrete, i);
	struct pj_doc *d;
	int n;

	if (!c)
		return -1;
	if (c->type == PJ_NUM && c->is_int) {
		v[0] = c->i;
		return 1;
	}
	if (c->type == PJ_ARR)
		return tft_pj_dims(c, v, max);
	if (c->type != PJ_STR || !c->len)
		return -1;
	d = tft_pj_parse(c->s, c->len);
	if (!d)
		return -1;
	if (tft_pj_root(d)->type == PJ_NUM && tft_pj_root(d)->is_int) {
		v[0] = tft_pj_root(d)->i;
		n = 1;
	} else {
		n = tft_pj_dims(tft_pj_root(d), v, max);
	}
	tft_pj_free(d);
	return n;
}

static int64_t numel(const int64_t *d, int n)
{
	int64_t p = 1;

	for (int i = 0; i < n; i++)
		p = mul_ok(p, d[i]);
	return p;
}

static int64_t conv2d(const struct pj *dims, const struct pj *concrete)
{
	int64_t in[8], w[8], st[4], pad[4], dil[4], g[2];

	if (dims_at(dims, 0, in, 8) != 4 || dims_at(dims, 1, w, 8) != 4)
		return -1;
	if (!concrete || concrete_ints(concrete, 3, st, 4) != 2 || concrete_ints(concrete, 4, pad, 4) != 2 ||
	    concrete_ints(concrete, 5, dil, 4) != 2 || concrete_ints(concrete, 6, g, 2) != 1)
		return -1;
	if (st[0] <= 0 || st[1] <= 0 || g[0] <= 0)
		return -1;
	int64_t oh = (in[2] + 2 * pad[0] - dil[0] * (w[2] - 1) - 1) / st[0] + 1;
	int64_t ow = (in[3] + 2 * pad[1] - dil[1] * (w[3] - 1) - 1) / st[1] + 1;
	int64_t f = mul_ok(mul_ok(mul_ok(mul_ok(mul_ok(mul_ok(mul_ok(2, in[0]), oh), ow), w[2]), w[3]), in[1]), w[0]);
	return f < 0 ? -1 : f / g[0];
}

int64_t tft_torch_flops(const char *name, const struct pj *dims, const struct pj *concrete)
{
	int64_t a[8], b[8];
	int na;

	switch (op_kind(name)) {
	case T_CONV2D:
		return conv2d(dims, concrete);
	case T_MM:
	case T_ADDMM: {
		uint32_t i = op_kind(name) == T_ADDMM ? 1 : 0;
		if (dims_at(dims, i, a, 8) != 2 || dims_at(dims, i + 1, b, 8) != 2)
			return -1;
		return mul_ok(mul_ok(mul_ok(2, a[0]), a[1]), b[1]);
	}
	case T_BMM:
	case T_BADDBMM: {
		uint32_t i = op_kind(name) == T_BADDBMM ? 1 : 0;
		if (dims_at(dims, i, a, 8) != 3 || dims_at(dims, i + 1, b, 8) != 3)
			return -1;
		return mul_ok(mul_ok(mul_ok(mul_ok(2, a[0]), a[1]), a[2]), b[2]);
	}
	case T_ELEMENTWISE:
		na = dims_at(dims, 0, a, 8);
		return na < 0 ? -1 : numel(a, na);
	default:
		return -1;
	}
}

int tft_torch_dtype_size(const char *type)
{
	static const struct { const char *name; int size; } sizes[] = {
		{ "float", 4 }, { "Float", 4 }, { "float32", 4 }, { "double", 8 }, { "Double", 8 },
		{ "float64", 8 }, { "c10::Half", 2 }, { "Half", 2 }, { "float16", 2 },
		{ "c10::BFloat16", 2 }, { "BFloat16", 2 }, { "bfloat16", 2 }, { "long int", 8 },
		{ "Long", 8 }, { "int64", 8 }, { "int", 4 }, { "Int", 4 }, { "int32", 4 },
		{ "short int", 2 }, { "signed char", 1 }, { "unsigned char", 1 }, { "bool", 1 },
		{ "Bool", 1 }, { "c10::complex<float>", 8 }, { "c10::complex<double>", 16 },
	};

	if (!type)
		return 0;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		if (strcmp(sizes[i].name, type) == 0)
			return sizes[i].size;
	return 0;
}
