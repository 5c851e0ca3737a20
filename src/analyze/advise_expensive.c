/* SPDX-License-Identifier: MIT */
/*
 * Checker 3, expensive_ops (tfprof's ExpensiveOperationChecker, extended):
 * the ops with the largest self time over the analysed steps, their share of
 * all ops' self time and where they run (an accelerator's stream or executor,
 * or the host); an op holding 20% or more of it is a finding (a
 * synchronisation call is a wait, not work: never). With an
 * accelerator present, host ops that never start device work (no launch
 * flow from them or from an op inside them) and take 20 us or more on
 * average are ops that run on the CPU: 5% of the step time or more in them
 * is a finding.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/advise_int.h"

#define HOT_OP_PCT 20      /* one op's self time: a finding from this share of all ops' self time */
#define CPU_OPS_PCT 5      /* ops running on the CPU beside an accelerator */
#define CPU_OP_MIN_NS 20000 /* their mean self time at least */
#define KEEP 3

struct op_rec {
	int64_t self, total, dev_self, host_self, nolaunch_self;
	uint64_t count, host_ops, launched;
	struct adv_inst top[KEEP];
};

struct ex_state {
	struct adv_map ops; /* name id -> struct op_rec */
	bool executors;     /* host ops on TF executor tracks seen */
};

static int ex_init(struct adv *a)
{
	struct ex_state *st = calloc(1, sizeof(*st));

	if (!st)
		return TFT_ENOMEM;
	st->ops.vsize = sizeof(struct op_rec);
	a->st[TFT_ADVISE_EXPENSIVE] = st;
	return 0;
}

static int ex_slab(struct adv *a, struct adv_slab *sl)
{
	struct ex_state *st = a->st[TFT_ADVISE_EXPENSIVE];

	for (size_t i = 0; i < sl->n; i++) {
		const struct adv_sl *x = &sl->sl[i];
		struct op_rec *r;

		if (!(x->flags & ADV_SL_OWN) || x->win == TFT_NONE || !a->win[x->win].analysed)
			continue;
		if (!(r = tft_adv_map_get(&st->ops, x->name)))
			return TFT_ENOMEM;
		r->self += sl->self[i];
		r->total += x->end - x->ts;
		r->count++;
		if (a->tracks[x->track].role == ADV_R_DEVICE) {
			r->dev_self += sl->self[i];
		} else {
			r->host_self += sl->self[i];
			const struct adv_track *at = &a->tracks[x->track];
			if (x->cls == ADV_C_HOST && tft_adv_is_op(a, x)) {
				/* a TF executor's op runs where it is placed; a framework op where it launches */
				bool on_device = at->executor ? at->accel : (x->flags & ADV_SL_LAUNCHED) != 0;
				r->host_ops++;
				st->executors |= at->executor;
				if (on_device)
					r->launched++;
				else
					r->nolaunch_self += sl->self[i];
			}
		}
		tft_adv_keep_longest(r->top, KEEP, x);
	}
	return 0;
}

struct row {
	uint32_t name;
	const struct op_rec *r;
};

static int cmp_self(const void *x, const void *y)
{
	const struct row *p = x, *q = y;

	if (p->r->self != q->r->self)
		return p->r->self > q->r->self ? -1 : 1;
	return (p->name > q->name) - (p->name < q->name);
}

static int cmp_nolaunch(const void *x, const void *y)
{
	const struct row *p = x, *q = y;

	if (p->r->nolaunch_self != q->r->nolaunch_self)
		return p->r->nolaunch_self > q->r->nolaunch_self ? -1 : 1;
	return (p->name > q->name) - (p->name < q->name);
}

/* A name shortened for a title. */
static const char *short_name(struct adv *a, uint32_t name, char *buf, size_t size)
{
	const char *s = tft_adv_str(a, name);
	size_t n = strlen(s);

	if (n < size && n <= 70)
		return s;
	snprintf(buf, size, "%.67s...", s);
	return buf;
}

static const char *where(const struct adv *a, const struct op_rec *r)
{
	if (r->dev_self && r->host_self)
		return "device and host";
	return r->dev_self ? "device" : a->has_device ? "host (CPU)" : "CPU";
}

static void recommend_hot(struct adv *a, struct tft_advise_finding *f, uint32_t name, const struct op_rec *r)
{
	const char *s = tft_adv_str(a, name);
	uint32_t nb = tft_adv_name_bits(a, name);
	bool mm = strstr(s, "gemm") || strstr(s, "matmul") || strstr(s, "addmm") || strstr(s, "MatMul") ||
		  strstr(s, "linear") || strstr(s, "bmm") || (nb & ADV_N_CONV);

	if (nb & ADV_N_COMM)
		tft_adv_recommend(f, "A communication op: see the communication findings; overlap it with compute "
				     "and check the bandwidth it reaches.");
	else if (nb & (ADV_N_MEMCPY))
		tft_adv_recommend(f, "A copy: keep tensors on the device across steps, pin host memory and copy "
				     "asynchronously (non_blocking=True), or copy less.");
	else if (nb & ADV_N_INPUT)
		tft_adv_recommend(f, "Input loading: see the step-time finding; prefetch and parallelise the input "
				     "pipeline.");
	else if (mm && r->dev_self >= r->host_self)
		tft_adv_recommend(f, "A matrix multiply or convolution: run it on tensor cores (mixed precision "
				     "with bf16/fp16 autocast, TF32 for fp32), keep its dimensions multiples of 8, and "
				     "for convolutions use the channels-last (NHWC) layout; then check whether a larger "
				     "batch raises its efficiency.");
	else if (r->dev_self >= r->host_self)
		tft_adv_recommend(f, "A device kernel that dominates: check its shapes and dtype, fuse the "
				     "element-wise ops around it (torch.compile, XLA), and compare its time with the "
				     "bytes it must move (a memory-bound kernel is near the device's bandwidth).");
	else
		tft_adv_recommend(f, "A host op: if it is compute, move it to the device (or vectorise it); if it "
				     "wraps device work, the time is launch overhead or a wait: see the utilization "
				     "and critical-path findings.");
}

static int ex_finish(struct adv *a)
{
	struct ex_state *st = a->st[TFT_ADVISE_EXPENSIVE];
	int64_t total = tft_adv_analysed_ns(a), cpu_sum = 0, all_self = 0;
	uint32_t n = tft_adv_analysed_count(a), nrows = 0, hot = 0, ncpu = 0;
	struct row *rows;
	char verdict[1024], b1[32], p1[16], nm[80];
	size_t vl = 0;

	if (!n || total <= 0 || !st->ops.n) {
		tft_adv_verdict(a, TFT_ADVISE_EXPENSIVE, "no ops in the analysed steps");
		return 0;
	}
	rows = malloc(st->ops.n * sizeof(*rows));
	if (!rows)
		return TFT_ENOMEM;
	for (size_t i = 0; i < st->ops.cap; i++) {
		uint32_t key;
		const struct op_rec *r = tft_adv_map_slot(&st->ops, i, &key);
		if (r) {
			rows[nrows].name = key;
			rows[nrows++].r = r;
		}
	}
	qsort(rows, nrows, sizeof(*rows), cmp_self);
	for (uint32_t i = 0; i < nrows; i++)
		all_self += rows[i].r->self;
	vl = (size_t)snprintf(verdict, sizeof(verdict), "top ops by self time (share of all ops' self time):");
	for (uint32_t i = 0; i < nrows && i < 3; i++)
		vl += (size_t)snprintf(verdict + vl, sizeof(verdict) - vl, "%s %s %s (%s)", i ? "," : "",
				       short_name(a, rows[i].name, nm, sizeof(nm)),
				       tft_adv_pct(p1, sizeof(p1), rows[i].r->self, all_self), where(a, rows[i].r));
	for (uint32_t i = 0, rank = 0; i < nrows && hot < 2; i++) {
		const struct op_rec *r = rows[i].r;
		struct tft_advise_finding *f;
		int64_t per = r->self / n, step = total / n;
		if (tft_adv_name_bits(a, rows[i].name) & (ADV_N_SYNC | ADV_N_STEP))
			continue; /* (a wait for the device, not work of its own) */
		rank++;
		if (!tft_adv_share_ge(r->self, HOT_OP_PCT, all_self))
			break;
		hot++;
		/* (on several threads or streams at once an op's time can pass the step's: capped) */
		f = tft_adv_finding(a, TFT_ADVISE_EXPENSIVE, per < step ? per : step,
				    "%s: %s of all ops' self time (on the %s)", short_name(a, rows[i].name, nm, sizeof(nm)),
				    tft_adv_pct(p1, sizeof(p1), r->self, all_self), where(a, r));
		tft_adv_explain(f,
				"%s runs %llu times in the %u analysed step%s with a self time (its time minus the ops "
				"inside it) of %s per step: %s of all ops' self time%s; it is the op type with the %s "
				"largest self time.",
				tft_adv_str(a, rows[i].name), (unsigned long long)r->count, n, n == 1 ? "" : "s",
				tft_adv_ns(b1, sizeof(b1), per), p1,
				per > step ? ", more than a step lasts (it runs on several threads or streams at once)" : "",
				rank == 1 ? "" : rank == 2 ? "second" : "third");
		recommend_hot(a, f, rows[i].name, r);
		tft_adv_evidence_top(f, r->top, KEEP);
	}
	/* ops that run on the CPU beside an accelerator */
	if (a->has_device && (a->nlaunch || st->executors)) {
		qsort(rows, nrows, sizeof(*rows), cmp_nolaunch);
		for (uint32_t i = 0; i < nrows; i++) {
			const struct op_rec *r = rows[i].r;
			uint32_t nb = tft_adv_name_bits(a, rows[i].name);
			if (!r->host_ops || r->launched || r->nolaunch_self <= 0)
				continue;
			if (nb & (ADV_N_INPUT | ADV_N_COMM | ADV_N_SYNC | ADV_N_STEP | ADV_N_LAUNCH | ADV_N_MEMCPY))
				continue;
			if (r->nolaunch_self / (int64_t)r->host_ops < CPU_OP_MIN_NS)
				continue;
			rows[ncpu++] = rows[i];
			cpu_sum += r->nolaunch_self;
		}
		if (tft_adv_share_ge(cpu_sum, CPU_OPS_PCT, total)) {
			struct tft_advise_finding *f;
			char list[512];
			size_t ll = 0;
			list[0] = 0;
			for (uint32_t i = 0; i < ncpu && i < 5; i++)
				ll += (size_t)snprintf(list + ll, sizeof(list) - ll, "%s%s (%s)", i ? ", " : "",
						       short_name(a, rows[i].name, nm, sizeof(nm)),
						       tft_adv_pct(p1, sizeof(p1), rows[i].r->nolaunch_self, total));
			f = tft_adv_finding(a, TFT_ADVISE_EXPENSIVE, cpu_sum / n,
					    "Ops run on the CPU although an accelerator is present: %s of the step",
					    tft_adv_pct(p1, sizeof(p1), cpu_sum, total));
			tft_adv_explain(f,
					"%u op type%s start no device work (no kernel or copy is launched from them "
					"or from an op inside them) and take %s per step on the host: %s%s.",
					ncpu, ncpu == 1 ? "" : "s", tft_adv_ns(b1, sizeof(b1), cpu_sum / n), list,
					ncpu > 5 ? ", ..." : "");
			tft_adv_recommend(f, "Place these ops on the accelerator: create tensors on the device "
					     "(device=... rather than .to() after), keep the model and its inputs there, "
					     "and in TensorFlow check the placement (tf.debugging.set_log_device_placement) "
					     "for ops without a GPU kernel (string ops, some int64 ops) that force copies.");
			for (uint32_t i = 0; i < ncpu && i < 3; i++)
				tft_adv_evidence_top(f, rows[i].r->top, KEEP);
		} else if (tft_adv_wanted(a, TFT_ADVISE_EXPENSIVE) && vl < sizeof(verdict) - 80) {
			vl += (size_t)snprintf(verdict + vl, sizeof(verdict) - vl, "; ops on the CPU beside the accelerator: %s",
					       tft_adv_pct(p1, sizeof(p1), cpu_sum, total));
		}
	} else if (a->has_device && vl < sizeof(verdict) - 80) {
		vl += (size_t)snprintf(verdict + vl, sizeof(verdict) - vl,
				       "; no launch flows: which host ops start device work is unknown");
	}
	tft_adv_verdict(a, TFT_ADVISE_EXPENSIVE, "%s", verdict);
	free(rows);
	return 0;
}

static void ex_fini(struct adv *a)
{
	struct ex_state *st = a->st[TFT_ADVISE_EXPENSIVE];

	if (!st)
		return;
	tft_adv_map_fini(&st->ops);
	free(st);
	a->st[TFT_ADVISE_EXPENSIVE] = NULL;
}

const struct adv_checker tft_adv_expensive = {
	.id = TFT_ADVISE_EXPENSIVE,
	.init = ex_init,
	.slab = ex_slab,
	.finish = ex_finish,
	.fini = ex_fini,
};
