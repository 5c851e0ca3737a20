/* SPDX-License-Identifier: MIT */
/*
 * The roofline table of tftracer prof (prof.h): per op type and per kernel
 * name, the FLOPs and the bytes of the tensors read and written per step,
 * the rates achieved in the time it took, and where the device is known
 * its peak compute and memory bandwidth (vendor datasheet figures, dense
 * math) and the attainable rate min(peak, intensity x bandwidth).
 * A kernel takes the share of its ops' FLOPs and bytes that its time is of
 * their accelerator time.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "analyze/prof_int.h"
#include "analyze/prof_json.h"
#include "analyze/tf_costs.h"
#include "analyze/torch_costs.h"
#include "core/grow.h"

/* ---- device peaks ---------------------------------------------------------------- */

static const struct peak {
	const char *match;      /* a substring of the device name (case-insensitive) */
	double fp32_tflops, half_tflops, tbytes_per_s;
} peaks[] = {
	/* NVIDIA: FP32 (non-tensor), FP16/BF16 tensor dense, memory bandwidth */
	{ "H100 PCIe", 51.2, 756.0, 2.0 },
	{ "H100", 66.9, 989.4, 3.35 },
	{ "H200", 66.9, 989.4, 4.8 },
	{ "A100-SXM4-80GB", 19.5, 312.0, 2.039 },
	{ "A100-PCIE-80GB", 19.5, 312.0, 1.935 },
	{ "A100", 19.5, 312.0, 1.555 },
	{ "A10G", 31.2, 125.0, 0.6 },
	{ "L40S", 91.6, 362.0, 0.864 },
	{ "L4", 30.3, 121.0, 0.3 },
	{ "V100-SXM2", 15.7, 125.0, 0.9 },
	{ "V100-DGXS", 15.7, 125.0, 0.9 },
	{ "V100-PCIE", 14.0, 112.0, 0.9 },
	{ "V100", 15.7, 125.0, 0.9 },
	{ "T4", 8.1, 65.0, 0.32 },
	{ "P100", 10.6, 21.2, 0.732 },
	{ "GP100", 10.3, 20.7, 0.717 },
	/* AMD: FP32 vector, FP16/BF16 matrix dense, HBM bandwidth */
	{ "MI300X", 163.4, 1307.4, 5.3 },
	{ "MI300A", 122.6, 980.6, 5.3 },
	{ "MI250X", 47.9, 383.0, 3.277 },
	{ "MI250", 45.3, 362.1, 3.277 },
	{ "MI210", 22.6, 181.0, 1.6 },
	{ "MI100", 23.1, 184.6, 1.2 },
};

bool tft_prof_device_peak(const char *device, bool half, double *flops_per_s, double *bytes_per_s)
{
	if (!device)
		return false;
	for (size_t i = 0; i < sizeof(peaks) / sizeof(peaks[0]); i++)
		if (strcasestr(device, peaks[i].match)) {
			*flops_per_s = (half ? peaks[i].half_tflops : peaks[i].fp32_tflops) * 1e12;
			*bytes_per_s = peaks[i].tbytes_per_s * 1e12;
			return true;
		}
	return false;
}

/* ---- bytes of one execution ------------------------------------------------------------- */

static bool half_type(const char *t)
{
	return t && (strstr(t, "Half") || strstr(t, "BFloat16") || strstr(t, "float16") || strstr(t, "bfloat16") ||
		     strstr(t, "DT_HALF") || strstr(t, "DT_BFLOAT16"));
}

/* PyTorch: the tensor inputs' bytes from Input Dims and Input type; whether any is 16-bit. */
static double torch_bytes(const struct tft_prof *p, const struct prof_rec *x, bool *half)
{
	struct pj_doc *d = NULL, *t = NULL;
	double bytes = 0;
	size_t len;
	const char *s;

	if (!x->dims)
		return NAN;
	s = tft_strtab_get(p->tab.str, x->dims, &len);
	d = s ? tft_pj_parse(s, len) : NULL;
	if (x->intypes && (s = tft_strtab_get(p->tab.str, x->intypes, &len)))
		t = tft_pj_parse(s, len);
	uint32_t i = 0;
	bool any = false;
	for (const struct pj *e = d && tft_pj_root(d)->type == PJ_ARR ? tft_pj_root(d)->child : NULL; e; e = e->next, i++) {
		int64_t dims[8], numel = 1;
		int n = tft_pj_dims(e, dims, 8);
		const struct pj *ty = t ? tft_pj_at(tft_pj_root(t), i) : NULL;
		int size = ty && ty->type == PJ_STR ? tft_torch_dtype_size(ty->s) : 0;
		if (n <= 0 || !size)
			continue;
		for (int k = 0; k < n; k++)
			numel *= dims[k] > 0 ? dims[k] : 0;
		bytes += (double)numel * size;
		any = true;
		if (ty && half_type(ty->s))
			*half = true;
	}
	tft_pj_free(d);
	tft_pj_free(t);
	return any ? bytes : NAN;
}

/* TF: the inputs' known shapes (4-byte elements) from "0:2x3|1:3x4". */
static double tf_in_bytes(const struct tft_prof *p, uint32_t in_shapes)
{
	const char *s = in_shapes ? tft_prof_str(&p->tab, in_shapes) : NULL;
	double bytes = 0;
	bool any = false;

	while (s && *s) {
		const char *colon = strchr(s, ':'), *bar = strchr(s, '|');
		const char *end = bar ? bar : s + strlen(s);
		if (!colon || colon > end)
			break;
		double numel = 1;
		bool ok = true;
		for (const char *q = colon + 1; q < end;) {
			char *e;
			long long d = strtoll(q, &e, 10);
			if (e == q || d < 0) {
				ok = false;
				break;
			}
			numel *= (double)d;
			q = *e == 'x' ? e + 1 : e;
			if (e >= end)
				break;
		}
		if (ok) {
			bytes += numel * 4;
			any = true;
		}
		s = bar ? bar + 1 : end;
	}
	return any ? bytes : NAN;
}

/* ---- the rows --------------------------------------------------------------------------- */

struct agg {
	uint32_t name;        /* lid */
	bool kernel, half, accel; /* accel: its time is accelerator time */
	uint32_t device;      /* lid */
	double count, ns, flops, bytes;
	bool has_bytes;
};

static int cmp_time(const void *a, const void *b)
{
	const struct tft_prof_roofline_row *x = a, *y = b;

	if (x->kernel != y->kernel)
		return x->kernel ? 1 : -1;
	return (x->micros < y->micros) - (x->micros > y->micros);
}

/* the row of a name (ix: per lid, row + 1; one map for op types, one for kernels) */
static uint32_t find_agg(struct agg **a, uint32_t *n, uint32_t *cap, uint32_t *ix, uint32_t name, bool kernel)
{
	if (ix[name])
		return ix[name] - 1;
	if (tft_grow((void **)a, cap, *n + 1, sizeof(**a)))
		return PROF_NONE;
	memset(&(*a)[*n], 0, sizeof(**a));
	(*a)[*n].name = name;
	(*a)[*n].kernel = kernel;
	ix[name] = *n + 1;
	return (*n)++;
}

int tft_prof_roofline(struct tft_prof *p, struct tft_prof_roofline_row **rows, uint32_t *nrows)
{
	struct prof_tab *t = &p->tab;
	struct agg *a = NULL;
	uint32_t na = 0, cap = 0;
	double *rec_bytes = calloc(t->nrecs + 1, sizeof(double));
	uint8_t *rec_half = calloc(t->nrecs + 1, 1);
	uint32_t *rec_dev = calloc(t->nrecs + 1, sizeof(uint32_t));
	uint32_t nlid = tft_strtab_count(t->str) + 1;
	uint32_t *opix = calloc(nlid, sizeof(uint32_t)), *kix = calloc(nlid, sizeof(uint32_t));
	double steps = p->steps.nsteps;
	int rc = TFT_ENOMEM;

	*rows = NULL;
	*nrows = 0;
	if (!rec_bytes || !rec_half || !rec_dev || !opix || !kix)
		goto out;
	/* the accelerator device each record's kernels ran on */
	for (uint32_t i = 0; i < t->nkcells; i++) {
		const struct prof_kcell *kc = &t->kcells[i];
		uint32_t r = t->cells[kc->cell].rec;
		while (r != PROF_NONE && t->recs[r].redirect != PROF_NONE)
			r = t->recs[r].redirect;
		if (r < t->nrecs && !rec_dev[r])
			rec_dev[r] = kc->device;
	}
	/* op types: per record its bytes per execution, summed by type */
	for (uint32_t i = 0; i < p->norder; i++) {
		uint32_t r = p->order[i];
		const struct prof_rec *x = &t->recs[r];
		const int64_t *m = p->self[r];
		bool half = false;
		double b;
		if (x->kind == REC_SCOPE || x->kind == REC_MODULE || x->kind == REC_PARAM)
			continue;
		if (!m[TFT_PROF_OCCURRENCE] && !m[TFT_PROF_ACCEL_MICROS])
			continue;
		b = x->tfname ? tf_in_bytes(p, p->st[r].in_shapes) : torch_bytes(p, x, &half);
		if (x->tfname && m[TFT_PROF_OCCURRENCE]) {
			double outb = (double)m[TFT_PROF_OUTPUT_BYTES] / (double)m[TFT_PROF_OCCURRENCE];
			b = isnan(b) ? (outb > 0 ? outb : NAN) : b + outb;
		}
		rec_bytes[r] = isnan(b) ? NAN : b * (double)m[TFT_PROF_OCCURRENCE];
		rec_half[r] = half;
		uint32_t k = find_agg(&a, &na, &cap, opix, x->op ? x->op : x->name, false);
		if (k == PROF_NONE)
			goto out;
		struct agg *g = &a[k];
		g->count += (double)m[TFT_PROF_OCCURRENCE];
		g->ns += (double)(m[TFT_PROF_ACCEL_MICROS] ? m[TFT_PROF_ACCEL_MICROS] : m[TFT_PROF_CPU_MICROS]);
		g->accel |= m[TFT_PROF_ACCEL_MICROS] != 0;
		g->flops += (double)m[TFT_PROF_FLOAT_OPS];
		if (!isnan(rec_bytes[r])) {
			g->bytes += rec_bytes[r];
			g->has_bytes = true;
		}
		g->half |= half;
		if (!g->device)
			g->device = rec_dev[r] ? rec_dev[r] : x->device;
	}
	/* kernels: their share of their ops' FLOPs and bytes, by time */
	for (uint32_t i = 0; i < t->nkcells; i++) {
		const struct prof_kcell *kc = &t->kcells[i];
		uint32_t r = t->cells[kc->cell].rec, k;
		while (r != PROF_NONE && t->recs[r].redirect != PROF_NONE)
			r = t->recs[r].redirect;
		if (r >= t->nrecs || !kc->n)
			continue;
		k = find_agg(&a, &na, &cap, kix, kc->kname, true);
		if (k == PROF_NONE)
			goto out;
		struct agg *g = &a[k];
		double share = p->self[r][TFT_PROF_ACCEL_MICROS] ? (double)kc->ns / (double)p->self[r][TFT_PROF_ACCEL_MICROS] : 0;
		g->count += (double)kc->n;
		g->ns += (double)kc->ns;
		g->accel = true;
		g->flops += share * (double)p->self[r][TFT_PROF_FLOAT_OPS];
		if (!isnan(rec_bytes[r]) && rec_bytes[r] > 0) {
			g->bytes += share * rec_bytes[r];
			g->has_bytes = true;
		}
		g->half |= rec_half[r];
		if (!g->device)
			g->device = kc->device;
	}
	*rows = calloc(na + 1, sizeof(**rows));
	if (!*rows)
		goto out;
	for (uint32_t i = 0; i < na; i++) {
		const struct agg *g = &a[i];
		struct tft_prof_roofline_row *o = &(*rows)[i];
		double sec = g->ns / 1e9;
		o->name = tft_prof_str(t, g->name);
		o->kernel = g->kernel;
		o->device = g->device ? tft_prof_str(t, g->device) : "";
		o->count = g->count / steps;
		o->micros = g->ns / 1e3 / steps;
		o->flops = g->flops / steps;
		o->bytes = g->has_bytes ? g->bytes / steps : NAN;
		o->flops_per_s = sec > 0 ? g->flops / sec : NAN;
		/* (bytes moved per second only for work that computes or runs kernels: a view or
		 * reshape on the host takes its tensors' size but moves none of it) */
		o->bytes_per_s = sec > 0 && g->has_bytes && (g->flops > 0 || g->accel) ? g->bytes / sec : NAN;
		/* (no FLOPs known: no rate, no intensity, nothing to place on the roofline) */
		o->flops_per_s = g->flops > 0 ? o->flops_per_s : NAN;
		o->intensity = g->has_bytes && g->bytes > 0 && g->flops > 0 ? g->flops / g->bytes : NAN;
		o->peak_flops_per_s = o->peak_bytes_per_s = o->attainable_flops_per_s = o->of_attainable = NAN;
		o->dtype = "";
		o->bound = "";
		if (tft_prof_device_peak(o->device, g->half, &o->peak_flops_per_s, &o->peak_bytes_per_s)) {
			o->dtype = g->half ? "fp16/bf16" : "fp32";
			if (!isnan(o->intensity)) {
				double mem = o->intensity * o->peak_bytes_per_s;
				o->attainable_flops_per_s = mem < o->peak_flops_per_s ? mem : o->peak_flops_per_s;
				o->bound = mem < o->peak_flops_per_s ? "memory" : "compute";
			} else if (g->flops > 0) {
				o->attainable_flops_per_s = o->peak_flops_per_s;
			}
			if (!isnan(o->flops_per_s) && o->attainable_flops_per_s > 0)
				o->of_attainable = o->flops_per_s / o->attainable_flops_per_s;
		} else {
			o->peak_flops_per_s = o->peak_bytes_per_s = NAN;
		}
	}
	qsort(*rows, na, sizeof(**rows), cmp_time);
	*nrows = na;
	rc = 0;
out:
	free(a);
	free(rec_bytes);
	free(rec_half);
	free(rec_dev);
	free(opix);
	free(kix);
	return rc;
}
