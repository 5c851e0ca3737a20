/* SPDX-License-Identifier: MIT */
/*
 * Checker 4, op_config: how ops are configured (tfprof's OperationChecker,
 * extended with HTA's kernel launch statistics):
 *  - convolution layouts: time in NCHW <-> NHWC conversions (cuDNN's
 *    nchwToNhwc kernels, TF's LayoutOptimizer transposes) next to the
 *    layouts the convolutions run in (kernel names, GraphDef data_format);
 *  - float64 on an accelerator (kernel names, GraphDef dtypes);
 *  - tfprof's non-fused BatchNorm;
 *  - launch-bound steps: many kernels under 10 us while the device waits for
 *    the host, with the launch-to-start delay distribution (how full the
 *    launch queue is);
 *  - without a device, dispatch-bound steps: many host ops under 10 us.
 * Thresholds: docs/cmd-advise.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/advise_int.h"
#include "core/hist.h"
#include "core/grow.h"
#include "store/graph.h"

#define SHORT_NS 10000          /* a short kernel / a tiny op: under 10 us */
#define XPOSE_PCT 1             /* layout conversions: a finding from 1% of the step */
#define F64_PCT 1               /* float64 device time */
#define BN_PCT 1                /* non-fused batch norm */
#define SHORT_PER_STEP 100      /* launch-bound: short kernels per step at least */
#define HOSTWAIT_PCT 10         /* ... and the device waits for the host this share */
#define TINY_PER_STEP 200       /* dispatch-bound: tiny host ops per step at least */
#define QUEUE_EMPTY_NS 50000    /* launch-bound: kernels start within 50 us of their launch (median) */
#define MAX_EV_SLICES 32
#define KEEP 5

struct oc_state {
	/* layouts */
	int64_t xpose_ns, conv_ns, conv_nchw_ns, conv_nhwc_ns, half_ns, dev_ns;
	uint64_t xpose_n;
	struct adv_inst xpose_top[KEEP];
	uint64_t g_conv_nchw, g_conv_nhwc, g_conv_half, g_conv_fp32; /* GraphDef convs on a GPU */
	/* float64 */
	int64_t f64_ns;
	struct adv_inst f64_top[KEEP];
	char **g_f64;            /* owned, sorted: GPU node names with a float64 dtype */
	size_t ng_f64, cg_f64;
	struct adv_map f64_names; /* name id -> 1 (float64 node), 2 (not) */
	/* batch norm */
	int64_t bn_ns;
	bool fused_bn;
	struct adv_inst bn_top[KEEP];
	/* kernels and launches */
	uint64_t kernels, short_kernels;
	uint32_t *win_short;      /* per window: short kernels (or tiny ops) counted */
	uint32_t best_win;
	struct adv_inst best[MAX_EV_SLICES];
	uint32_t nbest;
	uint64_t delay_n;
	int64_t delay_max;
	uint64_t *delay_hist;     /* TFT_HIST_BUCKETS */
	/* tiny host ops (no device) */
	uint64_t ops, tiny_ops;
	int64_t tiny_ns;
};

static int cmp_str(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

static bool attr_is(const struct tft_graph_text *t, const char *key, const char *val)
{
	const char *p, *end;
	size_t kl = strlen(key);

	if (!t->p)
		return false;
	end = t->p + t->len;
	for (p = t->p; p + kl <= end; p++) {
		if (memcmp(p, key, kl))
			continue;
		/* the value follows the key within a few bytes: "key":"VAL" */
		for (const char *q = p + kl; q < end && q < p + kl + 24; q++)
			if ((size_t)(end - q) >= strlen(val) && !memcmp(q, val, strlen(val)))
				return true;
	}
	return false;
}

static bool text_has(const struct tft_graph_text *t, const char *w)
{
	size_t n = strlen(w);

	if (!t->p)
		return false;
	for (size_t i = 0; i + n <= t->len; i++)
		if (!memcmp(t->p + i, w, n))
			return true;
	return false;
}

static int on_node(void *ctx, const struct tft_graph_node *n, int64_t graph_id)
{
	struct oc_state *st = ctx;
	bool gpu = text_has(&n->device, "GPU") || text_has(&n->device, "gpu");

	(void)graph_id;
	if (!gpu)
		return 0;
	if (text_has(&n->op, "Conv2D") || text_has(&n->op, "Conv3D") || text_has(&n->op, "DepthwiseConv")) {
		/* Conv2D's data_format defaults to NHWC */
		if (attr_is(&n->attrs, "\"data_format\"", "NCHW") || attr_is(&n->attrs, "\"data_format\"", "NCDHW"))
			st->g_conv_nchw++;
		else
			st->g_conv_nhwc++;
		if (text_has(&n->attrs, "DT_HALF") || text_has(&n->attrs, "DT_BFLOAT16"))
			st->g_conv_half++;
		else
			st->g_conv_fp32++;
	}
	if (text_has(&n->attrs, "DT_DOUBLE") && n->name.p && n->name.len < 1024) {
		if (tft_grow_size((void **)&st->g_f64, &st->cg_f64, st->ng_f64 + 1, sizeof(*st->g_f64)))
			return TFT_ENOMEM;
		if (!(st->g_f64[st->ng_f64] = strndup(n->name.p, n->name.len)))
			return TFT_ENOMEM;
		st->ng_f64++;
	}
	return 0;
}

static int oc_init(struct adv *a)
{
	struct oc_state *st = calloc(1, sizeof(*st));
	const char *gm;

	if (!st)
		return TFT_ENOMEM;
	a->st[TFT_ADVISE_OP_CONFIG] = st;
	st->f64_names.vsize = sizeof(uint8_t);
	st->best_win = TFT_NONE;
	st->win_short = calloc(a->nwin ? a->nwin : 1, sizeof(*st->win_short));
	st->delay_hist = calloc(TFT_HIST_BUCKETS, sizeof(*st->delay_hist));
	if (!st->win_short || !st->delay_hist)
		return TFT_ENOMEM;
	gm = tft_session_meta(a->s, "graph_nodes");
	if (gm && strcmp(gm, "0") && tft_session_path(a->s)) {
		struct tft_error gerr;
		tft_error_clear(&gerr);
		/* (an unreadable graph table leaves the graph checks without data) */
		if (tft_graph_each(tft_session_path(a->s), on_node, st, &gerr) == TFT_ENOMEM)
			return TFT_ENOMEM;
		if (st->ng_f64)
			qsort(st->g_f64, st->ng_f64, sizeof(*st->g_f64), cmp_str);
	}
	return 0;
}

/* Whether a device slice runs a float64 GraphDef node ("node", "node:Op", "kernel@@node:Op"). */
static bool graph_f64(struct adv *a, struct oc_state *st, uint32_t name)
{
	uint8_t *v;
	const char *s, *at;
	char buf[1024];
	size_t n;

	if (!st->ng_f64)
		return false;
	v = tft_adv_map_find(&st->f64_names, name);
	if (v)
		return *v == 1;
	s = tft_adv_str(a, name);
	at = strstr(s, "@@");
	if (at)
		s = at + 2;
	n = strlen(s);
	if (n >= sizeof(buf))
		n = sizeof(buf) - 1;
	memcpy(buf, s, n);
	buf[n] = 0;
	for (int pass = 0; pass < 2; pass++) {
		char *key = buf;
		if (bsearch(&key, st->g_f64, st->ng_f64, sizeof(*st->g_f64), cmp_str)) {
			if ((v = tft_adv_map_get(&st->f64_names, name)))
				*v = 1;
			return true;
		}
		char *colon = strrchr(buf, ':');
		if (!colon)
			break;
		*colon = 0;
	}
	if ((v = tft_adv_map_get(&st->f64_names, name)))
		*v = 2;
	return false;
}

static int oc_slab(struct adv *a, struct adv_slab *sl)
{
	struct oc_state *st = a->st[TFT_ADVISE_OP_CONFIG];
	uint32_t lo_win = UINT32_MAX, hi_win = 0;

	for (size_t i = 0; i < sl->n; i++) {
		const struct adv_sl *x = &sl->sl[i];
		const struct adv_track *at = &a->tracks[x->track];
		uint32_t nb;
		int64_t d = x->end - x->ts;
		bool dev = at->role == ADV_R_DEVICE || (at->executor && at->accel);

		if (!(x->flags & ADV_SL_OWN) || x->win == TFT_NONE || !a->win[x->win].analysed)
			continue;
		nb = tft_adv_name_bits(a, x->name);
		if (nb & ADV_N_XPOSE) {
			st->xpose_ns += dev ? d : sl->self[i];
			st->xpose_n++;
			tft_adv_keep_longest(st->xpose_top, KEEP, x);
		}
		if (nb & ADV_N_FUSEDBN)
			st->fused_bn = true;
		if ((nb & ADV_N_BATCHNORM) && at->executor) {
			st->bn_ns += sl->self[i];
			tft_adv_keep_longest(st->bn_top, KEEP, x);
		}
		if (dev && x->cls != ADV_C_IGNORE) {
			st->dev_ns += d;
			if ((nb & ADV_N_F64) || graph_f64(a, st, x->name)) {
				st->f64_ns += d;
				tft_adv_keep_longest(st->f64_top, KEEP, x);
			}
			if (nb & ADV_N_HALF)
				st->half_ns += d;
			if ((nb & ADV_N_CONV) && !(nb & ADV_N_XPOSE)) {
				st->conv_ns += d;
				if (nb & ADV_N_NCHW)
					st->conv_nchw_ns += d;
				if (nb & ADV_N_NHWC)
					st->conv_nhwc_ns += d;
			}
		}
		if (at->role == ADV_R_DEVICE && x->cls == ADV_C_DEVICE) {
			st->kernels++;
			if (d < SHORT_NS) {
				st->short_kernels++;
				st->win_short[x->win]++;
				lo_win = x->win < lo_win ? x->win : lo_win;
				hi_win = x->win > hi_win ? x->win : hi_win;
			}
			if (sl->launch[i] != INT64_MIN) {
				int64_t delay = x->ts - sl->launch[i];
				st->delay_hist[tft_hist_bucket(delay)]++;
				st->delay_n++;
				st->delay_max = delay > st->delay_max ? delay : st->delay_max;
			}
		}
		if (!a->has_device && x->cls == ADV_C_HOST && (x->flags & ADV_SL_TOP) && tft_adv_is_op(a, x)) {
			st->ops++;
			if (d < SHORT_NS) {
				st->tiny_ops++;
				st->tiny_ns += d;
				st->win_short[x->win]++;
				lo_win = x->win < lo_win ? x->win : lo_win;
				hi_win = x->win > hi_win ? x->win : hi_win;
			}
		}
	}
	/* the window with the most short kernels (tiny ops) so far: its first ones are the evidence */
	if (lo_win <= hi_win) {
		uint32_t best = TFT_NONE;
		for (uint32_t w = lo_win; w <= hi_win; w++)
			if (st->win_short[w] && (best == TFT_NONE || st->win_short[w] > st->win_short[best]))
				best = w;
		if (best != TFT_NONE && (st->best_win == TFT_NONE || st->win_short[best] > st->win_short[st->best_win])) {
			st->best_win = best;
			st->nbest = 0;
			for (size_t i = 0; i < sl->n && st->nbest < MAX_EV_SLICES; i++) {
				const struct adv_sl *x = &sl->sl[i];
				bool kern = a->tracks[x->track].role == ADV_R_DEVICE && x->cls == ADV_C_DEVICE;
				bool tiny = !a->has_device && x->cls == ADV_C_HOST && (x->flags & ADV_SL_TOP) &&
					    tft_adv_is_op(a, x);
				if (x->win != best || !(x->flags & ADV_SL_OWN) || x->end - x->ts >= SHORT_NS || !(kern || tiny))
					continue;
				st->best[st->nbest].track = x->track;
				st->best[st->nbest].depth = x->depth;
				st->best[st->nbest].ts = x->ts;
				st->best[st->nbest].dur = x->end - x->ts;
				st->nbest++;
			}
		}
	}
	return 0;
}

static int64_t delay_pct(const struct oc_state *st, unsigned p)
{
	uint64_t want = (st->delay_n * p + 99) / 100, acc = 0;

	if (!want)
		want = 1;
	for (uint32_t b = 0; b < TFT_HIST_BUCKETS; b++) {
		acc += st->delay_hist[b];
		if (acc >= want)
			return tft_hist_value(b);
	}
	return st->delay_max;
}

static void evidence_best(struct adv *a, struct oc_state *st, struct tft_advise_finding *f)
{
	struct tft_advise_evidence *e;
	int64_t t1;

	if (!st->nbest)
		return;
	t1 = st->best[st->nbest - 1].ts + st->best[st->nbest - 1].dur;
	e = tft_adv_evidence(f, st->best[0].track, st->best[0].ts, t1);
	for (uint32_t k = 0; k < st->nbest; k++)
		tft_adv_evidence_slice(e, st->best[k].track, st->best[k].depth, st->best[k].ts);
	if (st->best_win != TFT_NONE)
		tft_adv_evidence(f, TFT_NONE, a->win[st->best_win].t0, a->win[st->best_win].t1);
}

static int oc_finish(struct adv *a)
{
	struct oc_state *st = a->st[TFT_ADVISE_OP_CONFIG];
	int64_t total = tft_adv_analysed_ns(a), hostwait = 0, devwin = 0;
	uint32_t n = tft_adv_analysed_count(a);
	char v[1400], b1[32], b2[32], b3[32], p1[16], p2[16];
	size_t vl = 0;
	struct tft_advise_finding *f;

	if (!n || total <= 0) {
		tft_adv_verdict(a, TFT_ADVISE_OP_CONFIG, "no ops in the analysed steps");
		return 0;
	}
	for (uint32_t d = 0; d < a->ndevices; d++) {
		hostwait += a->devices[d].main_idle[ADV_IDLE_HOST];
		devwin += a->devices[d].window_ns;
	}
	v[0] = 0;
	/* layouts */
	if (tft_adv_share_ge(st->xpose_ns, XPOSE_PCT, total) && st->xpose_n) {
		bool half = st->half_ns * 2 > st->dev_ns || st->g_conv_half > st->g_conv_fp32;
		bool tf = st->g_conv_nchw + st->g_conv_nhwc > 0;
		f = tft_adv_finding(a, TFT_ADVISE_OP_CONFIG, st->xpose_ns / n,
				    "Layout conversions between NCHW and NHWC take %s of the step",
				    tft_adv_pct(p1, sizeof(p1), st->xpose_ns, total));
		tft_adv_explain(f,
				"%llu conversions (transposes between the NCHW and NHWC layouts around the "
				"convolutions) take %s per step. Convolution kernels ran %s per step, %s of it in "
				"kernels named for NCHW and %s for NHWC%s%s.",
				(unsigned long long)st->xpose_n, tft_adv_ns(b1, sizeof(b1), st->xpose_ns / n),
				tft_adv_ns(b2, sizeof(b2), st->conv_ns / n),
				tft_adv_pct(p1, sizeof(p1), st->conv_nchw_ns, st->conv_ns),
				tft_adv_pct(p2, sizeof(p2), st->conv_nhwc_ns, st->conv_ns),
				tf ? "; the graph's GPU convolutions: " : "",
				tf ? (st->g_conv_nchw >= st->g_conv_nhwc ? "mostly data_format NCHW" : "mostly data_format NHWC") : "");
		if (half || !tf)
			tft_adv_recommend(f, "Tensor cores run convolutions in NHWC: keep the whole model in that "
					     "layout so nothing is converted. PyTorch: model.to(memory_format="
					     "torch.channels_last) and inputs .to(memory_format=torch.channels_last), with "
					     "mixed precision (autocast); TensorFlow/Keras: data_format='channels_last' "
					     "(NHWC) with the mixed_float16 policy.");
		else
			tft_adv_recommend(f, "In float32 cuDNN works in NCHW, and TensorFlow transposes NHWC "
					     "convolutions to it (tfprof: 'Found operation using NHWC data_format on GPU. "
					     "Maybe NCHW is faster.'): build the model with data_format='channels_first', or "
					     "move to mixed precision, where NHWC is native.");
		tft_adv_evidence_top(f, st->xpose_top, KEEP);
	}
	vl += (size_t)snprintf(v + vl, sizeof(v) - vl, "layout conversions %s of step time",
			       tft_adv_pct(p1, sizeof(p1), st->xpose_ns, total));
	if (st->conv_ns && !st->conv_nchw_ns && !st->conv_nhwc_ns && !(st->g_conv_nchw + st->g_conv_nhwc))
		vl += (size_t)snprintf(v + vl, sizeof(v) - vl, " (convolution kernels: their names do not say the layout)");
	else if (st->conv_ns || st->g_conv_nchw + st->g_conv_nhwc)
		vl += (size_t)snprintf(v + vl, sizeof(v) - vl, " (convolution kernels: %s NCHW, %s NHWC%s)",
				       tft_adv_pct(p1, sizeof(p1), st->conv_nchw_ns, st->conv_ns),
				       tft_adv_pct(p2, sizeof(p2), st->conv_nhwc_ns, st->conv_ns),
				       st->g_conv_nchw + st->g_conv_nhwc ? "; graph convolutions listed" : "");
	/* float64 */
	if (tft_adv_share_ge(st->f64_ns, F64_PCT, total) && st->f64_ns) {
		f = tft_adv_finding(a, TFT_ADVISE_OP_CONFIG, st->f64_ns / n, "float64 ops run on the accelerator: %s of the step",
				    tft_adv_pct(p1, sizeof(p1), st->f64_ns, total));
		tft_adv_explain(f,
				"Device work in double precision (kernels named for double/f64, or graph nodes of "
				"dtype float64) takes %s per step. Accelerators run float64 at a small fraction of "
				"their float32 rate (1/32 or less on most GPUs) and without tensor cores.",
				tft_adv_ns(b1, sizeof(b1), st->f64_ns / n));
		tft_adv_recommend(f, "Use float32 (or bf16/fp16) tensors: look for torch.float64 / np.float64 "
				     "inputs (NumPy arrays default to float64), torch.set_default_dtype(torch.float64), "
				     "tf.float64 casts, and Python floats promoted by ops.");
		tft_adv_evidence_top(f, st->f64_top, KEEP);
	}
	vl += (size_t)snprintf(v + vl, sizeof(v) - vl, "; float64 on the device %s",
			       tft_adv_pct(p1, sizeof(p1), st->f64_ns, total));
	/* tfprof's batch norm check */
	if (st->bn_ns && !st->fused_bn && tft_adv_share_ge(st->bn_ns, BN_PCT, total)) {
		f = tft_adv_finding(a, TFT_ADVISE_OP_CONFIG, st->bn_ns / n, "Batch norm runs as separate ops: %s of the step",
				    tft_adv_pct(p1, sizeof(p1), st->bn_ns, total));
		tft_adv_explain(f, "Ops named BatchNorm take %s per step and the session has no FusedBatchNorm op.",
				tft_adv_ns(b1, sizeof(b1), st->bn_ns / n));
		tft_adv_recommend(f, "Maybe use faster FusedBatchNorm instead of BatchNorm (tfprof): "
				     "tf.compat.v1.layers.batch_normalization(fused=True) or Keras "
				     "BatchNormalization, which fuses by default.");
		tft_adv_evidence_top(f, st->bn_top, KEEP);
	}
	/* kernels and launches */
	if (st->kernels) {
		int64_t p50 = st->delay_n ? delay_pct(st, 50) : 0, p99 = st->delay_n ? delay_pct(st, 99) : 0;
		char delays[160];
		if (st->delay_n)
			snprintf(delays, sizeof(delays), "launch-to-start delay p50 %s, p99 %s, max %s",
				 tft_adv_ns(b1, sizeof(b1), p50), tft_adv_ns(b2, sizeof(b2), p99),
				 tft_adv_ns(b3, sizeof(b3), st->delay_max));
		else
			snprintf(delays, sizeof(delays), "no launch flows");
		vl += (size_t)snprintf(v + vl, sizeof(v) - vl, "; %llu kernels per step, %s under 10 us; %s",
				       (unsigned long long)(st->kernels / n),
				       tft_adv_pct(p1, sizeof(p1), (int64_t)st->short_kernels, (int64_t)st->kernels), delays);
		/* (a full launch queue, whatever waits the device has, is not launch-bound) */
		if (st->short_kernels / n >= SHORT_PER_STEP && st->short_kernels * 2 >= st->kernels &&
		    devwin > 0 && tft_adv_share_ge(hostwait, HOSTWAIT_PCT, devwin) &&
		    (!st->delay_n || p50 < QUEUE_EMPTY_NS)) {
			f = tft_adv_finding(a, TFT_ADVISE_OP_CONFIG, hostwait / n,
					    "Launch-bound: %llu kernels under 10 us per step, the device waits for launches %s of the time",
					    (unsigned long long)(st->short_kernels / n),
					    tft_adv_pct(p1, sizeof(p1), hostwait, devwin));
			tft_adv_explain(f,
					"%s of the %llu kernels per step run under 10 us: each takes less time on the "
					"device than its launch takes on the CPU (usually 5-20 us), so the device "
					"drains the launch queue and waits for the next launch (host wait %s per step). "
					"The launch queue stays short: %s%s.",
					tft_adv_pct(p2, sizeof(p2), (int64_t)st->short_kernels, (int64_t)st->kernels),
					(unsigned long long)(st->kernels / n), tft_adv_ns(b3, sizeof(b3), hostwait / n), delays,
					st->delay_n ? " (kernels start soon after their launch: the CPU is the "
						      "bottleneck)" : "");
			tft_adv_recommend(f, "Launch fewer, larger kernels: fuse the element-wise ops "
					     "(torch.compile, TorchScript/nvFuser, XLA jit_compile=True), replace Python "
					     "loops over tensors with batched ops, capture the step in a CUDA graph "
					     "(torch.cuda.graphs, mode='reduce-overhead'), and raise the batch size so "
					     "each kernel does more work.");
			evidence_best(a, st, f);
		}
	} else if (!a->has_device && st->ops) {
		vl += (size_t)snprintf(v + vl, sizeof(v) - vl, "; %llu host ops per step, %s under 10 us",
				       (unsigned long long)(st->ops / n),
				       tft_adv_pct(p1, sizeof(p1), (int64_t)st->tiny_ops, (int64_t)st->ops));
		if (st->tiny_ops / n >= TINY_PER_STEP && st->tiny_ops * 2 >= st->ops) {
			f = tft_adv_finding(a, TFT_ADVISE_OP_CONFIG, st->tiny_ns / n,
					    "Dispatch-bound: %llu ops under 10 us per step",
					    (unsigned long long)(st->tiny_ops / n));
			tft_adv_explain(f,
					"%s of the %llu ops per step run under 10 us (%s per step in them, %s of the "
					"step): at that size the framework's per-op cost (dispatch, allocation, the "
					"Python call) is most of the time, not the arithmetic.",
					tft_adv_pct(p1, sizeof(p1), (int64_t)st->tiny_ops, (int64_t)st->ops),
					(unsigned long long)(st->ops / n), tft_adv_ns(b1, sizeof(b1), st->tiny_ns / n),
					tft_adv_pct(p2, sizeof(p2), st->tiny_ns, total));
			tft_adv_recommend(f, "Do the same work in fewer, larger ops: vectorise Python loops over "
					     "tensor elements or small tensors into batched tensor ops, and compile the "
					     "loop (torch.compile, TorchScript, tf.function with jit_compile=True).");
			evidence_best(a, st, f);
		}
	}
	tft_adv_verdict(a, TFT_ADVISE_OP_CONFIG, "%s", v);
	return 0;
}

static void oc_fini(struct adv *a)
{
	struct oc_state *st = a->st[TFT_ADVISE_OP_CONFIG];

	if (!st)
		return;
	for (size_t i = 0; i < st->ng_f64; i++)
		free(st->g_f64[i]);
	free(st->g_f64);
	tft_adv_map_fini(&st->f64_names);
	free(st->win_short);
	free(st->delay_hist);
	free(st);
	a->st[TFT_ADVISE_OP_CONFIG] = NULL;
}

const struct adv_checker tft_adv_op_config = {
	.id = TFT_ADVISE_OP_CONFIG,
	.init = oc_init,
	.slab = oc_slab,
	.finish = oc_finish,
	.fini = oc_fini,
};
