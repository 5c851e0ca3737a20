/* SPDX-License-Identifier: MIT */
/*
 * Checker 2, utilization: how busy each accelerator and each of its streams
 * is over the analysed steps, and why a stream is idle, as HTA's idle time
 * breakdown splits it: before each kernel, the gap since the stream's last
 * kernel ended is host wait when the kernel was launched only after that end
 * (the stream waited for the CPU), kernel wait when it was queued already
 * and the gap is under ADV_KERNEL_WAIT_NS, other when queued and longer; the
 * launch time comes from the session's launch flows (Kineto ac2g,
 * RunMetadata launches, XSpace flows), and without one a gap is unknown.
 * tfprof's AcceleratorUtilizationChecker called a device under 50% busy
 * "low utilization": such a device is a finding.
 */
#include <stdlib.h>
#include <string.h>

#include "analyze/advise_int.h"

#define ADV_KERNEL_WAIT_NS 10000 /* a queued kernel starting within 10 us of the last: kernel wait */
#define LOW_UTIL_PCT 50
#define TOP_GAPS 64

struct ut_track {
	int64_t prev_end, last_ts;
	bool has;
	int64_t idle[4];
	uint64_t kernels; /* compute slices in the analysed windows */
};

struct ut_gap {
	uint32_t device, track, depth;
	int cat;
	int64_t g0, g1, ov, next_ts;
};

struct ut_state {
	struct ut_track *tr;   /* per track */
	int64_t *scope_ns;     /* per scope: its analysed windows' length */
	struct ut_gap top[TOP_GAPS];
	uint32_t ntop;
	struct tft_ivset dev, tmp, spare;
};

static int ut_init(struct adv *a)
{
	struct ut_state *st = calloc(1, sizeof(*st));

	if (!st)
		return TFT_ENOMEM;
	a->st[TFT_ADVISE_UTILIZATION] = st;
	st->tr = calloc(a->ntracks ? a->ntracks : 1, sizeof(*st->tr));
	st->scope_ns = calloc(a->nscopes ? a->nscopes : 1, sizeof(*st->scope_ns));
	if (!st->tr || !st->scope_ns)
		return TFT_ENOMEM;
	for (uint32_t i = 0; i < a->nwin; i++)
		if (a->win[i].analysed)
			st->scope_ns[a->win[i].scope] += a->win[i].t1 - a->win[i].t0;
	for (uint32_t d = 0; d < a->ndevices; d++)
		a->devices[d].window_ns = a->devices[d].scope < a->nscopes ? st->scope_ns[a->devices[d].scope] : 0;
	return 0;
}

static void keep_gap(struct ut_state *st, const struct ut_gap *g)
{
	uint32_t m = 0;

	if (st->ntop < TOP_GAPS) {
		st->top[st->ntop++] = *g;
		return;
	}
	for (uint32_t k = 1; k < TOP_GAPS; k++)
		if (st->top[k].ov < st->top[m].ov)
			m = k;
	if (st->top[m].ov < g->ov)
		st->top[m] = *g;
}

/* A gap [g0, g1) on track t before the slice x launched at launch (x NULL: after the stream's last). */
static void gap(struct adv *a, struct ut_state *st, uint32_t t, int64_t g0, int64_t g1, const struct adv_sl *x,
		int64_t launch)
{
	const struct adv_track *at = &a->tracks[t];
	int64_t ov = tft_adv_analysed_overlap(a, at->scope, g0, g1);
	struct ut_gap g;
	int cat;

	if (ov <= 0)
		return;
	if (!x) {
		cat = ADV_IDLE_OTHER;
	} else {
		if (launch == INT64_MIN)
			cat = a->nlaunch ? ADV_IDLE_OTHER : ADV_IDLE_UNKNOWN;
		else if (launch > g0)
			cat = ADV_IDLE_HOST;
		else if (g1 - g0 < ADV_KERNEL_WAIT_NS)
			cat = ADV_IDLE_KERNEL;
		else
			cat = ADV_IDLE_OTHER;
	}
	st->tr[t].idle[cat] += ov;
	if (!x || cat == ADV_IDLE_KERNEL)
		return;
	g.device = at->device;
	g.track = t;
	g.cat = cat;
	/* (evidence: the gap from the start of the step it ends in, at the earliest) */
	{
		uint32_t w = tft_adv_window_at(a, at->scope, g1 - 1);
		if (w != TFT_NONE && g0 < a->win[w].t0)
			g0 = a->win[w].t0;
	}
	g.g0 = g0;
	g.g1 = g1;
	g.ov = ov;
	g.next_ts = x->ts;
	g.depth = x->depth;
	keep_gap(st, &g);
}

static int ut_slab(struct adv *a, struct adv_slab *sl)
{
	struct ut_state *st = a->st[TFT_ADVISE_UTILIZATION];

	for (size_t r = 0; r < sl->nruns; r++) {
		const struct adv_run *run = &sl->runs[r];
		uint32_t t = run->track;
		struct ut_track *ut = &st->tr[t];

		if (a->tracks[t].role != ADV_R_DEVICE)
			continue;
		for (size_t i = run->lo; i < run->hi; i++) {
			const struct adv_sl *x = &sl->sl[i];
			/* (a slice across a slab's edge is read twice: once is enough) */
			if (ut->has && x->ts <= ut->last_ts)
				continue;
			if (x->ts > (ut->has ? ut->prev_end : INT64_MIN))
				gap(a, st, t, ut->has ? ut->prev_end : INT64_MIN, x->ts, x, sl->launch[i]);
			if (!ut->has || x->end > ut->prev_end)
				ut->prev_end = x->end;
			ut->has = true;
			ut->last_ts = x->ts;
			if ((x->flags & ADV_SL_OWN) && x->win != TFT_NONE && a->win[x->win].analysed &&
			    x->cls == ADV_C_DEVICE)
				ut->kernels++;
		}
	}
	/* each device's busy time: the union of its tracks */
	for (uint32_t d = 0; d < a->ndevices; d++) {
		struct adv_device *dev = &a->devices[d];
		bool any = false;

		if (dev->scope != sl->scope)
			continue;
		tft_ivset_clear(&st->dev);
		for (size_t r = 0; r < sl->nruns; r++) {
			const struct adv_run *run = &sl->runs[r];
			struct tft_ivset t;
			if (a->tracks[run->track].device != d)
				continue;
			tft_ivset_clear(&st->tmp);
			for (size_t i = run->lo; i < run->hi; i++) {
				const struct adv_sl *x = &sl->sl[i];
				tft_ivset_add_sorted(&st->tmp, x->ts > sl->a ? x->ts : sl->a, x->end < sl->b ? x->end : sl->b);
			}
			if (st->tmp.oom || tft_ivset_union(&st->spare, &st->dev, &st->tmp))
				return TFT_ENOMEM;
			t = st->dev;
			st->dev = st->spare;
			st->spare = t;
			any = true;
		}
		if (!any)
			continue;
		for (size_t i = 0; i < st->dev.n; i++)
			dev->busy_ns += tft_adv_analysed_overlap(a, sl->scope, st->dev.v[i].a, st->dev.v[i].b);
	}
	return 0;
}

static int ut_finish(struct adv *a)
{
	struct ut_state *st = a->st[TFT_ADVISE_UTILIZATION];
	char verdict[2048], b1[32], b2[32], p1[16], p[4][16];
	size_t vl = 0;
	uint32_t shown = 0;

	/* streams' trailing idle (after their last kernel); a stream with nothing in the steps is idle */
	for (uint32_t t = 0; t < a->ntracks; t++) {
		if (a->tracks[t].role != ADV_R_DEVICE || a->tracks[t].scope >= a->nscopes)
			continue;
		if (st->tr[t].has)
			gap(a, st, t, st->tr[t].prev_end, INT64_MAX, NULL, INT64_MIN);
		else
			st->tr[t].idle[ADV_IDLE_OTHER] = st->scope_ns[a->tracks[t].scope];
	}
	if (!a->has_device) {
		tft_adv_verdict(a, TFT_ADVISE_UTILIZATION, "no device in this session: nothing ran on an accelerator");
		return 0;
	}
	verdict[0] = 0;
	for (uint32_t d = 0; d < a->ndevices; d++) {
		struct adv_device *dev = &a->devices[d];
		int64_t idle, main_busy = -1, per;
		uint32_t nwin = 0;
		uint64_t kernels = 0;
		struct tft_advise_finding *f;
		int top_cat = 0;

		if (dev->window_ns <= 0)
			continue;
		for (uint32_t t = 0; t < a->ntracks; t++) {
			int64_t busy, sum = 0;
			if (a->tracks[t].device != d)
				continue;
			for (int k = 0; k < 4; k++)
				sum += st->tr[t].idle[k];
			busy = dev->window_ns - sum;
			kernels += st->tr[t].kernels;
			if (busy > main_busy) {
				main_busy = busy;
				dev->main_track = t;
				memcpy(dev->main_idle, st->tr[t].idle, sizeof(dev->main_idle));
			}
		}
		if (dev->busy_ns > dev->window_ns)
			dev->busy_ns = dev->window_ns;
		idle = dev->window_ns - dev->busy_ns;
		for (int k = 0; k < 4; k++)
			tft_adv_pct(p[k], sizeof(p[k]), dev->main_idle[k], dev->window_ns);
		for (int k = 1; k < 4; k++)
			if (dev->main_idle[k] > dev->main_idle[top_cat])
				top_cat = k;
		if (shown < 8 && vl < sizeof(verdict) - 200) {
			vl += (size_t)snprintf(verdict + vl, sizeof(verdict) - vl, "%s%s %s busy (%s %s busy; idle: %s host wait, %s kernel wait, %s other%s%s)",
					       shown ? "; " : "", dev->name,
					       tft_adv_pct(p1, sizeof(p1), dev->busy_ns, dev->window_ns),
					       tft_adv_track_label(a, dev->main_track),
					       tft_adv_pct(b2, sizeof(b2), main_busy, dev->window_ns), p[0], p[1], p[2],
					       dev->main_idle[ADV_IDLE_UNKNOWN] ? ", unknown " : "",
					       dev->main_idle[ADV_IDLE_UNKNOWN] ? p[3] : "");
			shown++;
		}
		/* (a device that runs no kernel in the steps, only copies, is not this worker's) */
		if (!kernels || tft_adv_share_ge(dev->busy_ns, LOW_UTIL_PCT, dev->window_ns))
			continue;
		for (uint32_t i = a->scopes[dev->scope].w0; i < a->scopes[dev->scope].w1; i++)
			nwin += a->win[i].analysed;
		per = nwin ? idle / nwin : idle;
		f = tft_adv_finding(a, TFT_ADVISE_UTILIZATION, per, "%s is idle %s of the step", dev->name,
				    tft_adv_pct(p1, sizeof(p1), idle, dev->window_ns));
		if (!f)
			continue;
		tft_adv_explain(f,
				"Over the analysed steps %s runs work %s of the time (%s per step idle; tfprof calls "
				"under %d%% low utilization). Its busiest stream, %s, is idle %s per step: %s host wait "
				"(the next kernel was launched only after the previous one ended: the GPU waited for "
				"the CPU), %s kernel wait (queued kernels with gaps under %d us), %s other (a queued "
				"kernel waiting longer: synchronisation, events, or the step's ends)%s%s.",
				dev->name, tft_adv_pct(p1, sizeof(p1), dev->busy_ns, dev->window_ns),
				tft_adv_ns(b1, sizeof(b1), per), LOW_UTIL_PCT,
				tft_adv_track_label(a, dev->main_track),
				tft_adv_ns(b2, sizeof(b2), nwin ? (dev->window_ns - main_busy) / nwin : 0), p[0], p[1],
				ADV_KERNEL_WAIT_NS / 1000, p[2],
				dev->main_idle[ADV_IDLE_UNKNOWN] ? "; unknown (no launch flows) " : "",
				dev->main_idle[ADV_IDLE_UNKNOWN] ? p[3] : "");
		if (top_cat == ADV_IDLE_HOST)
			tft_adv_recommend(f, "The host does not launch work fast enough. Find what the CPU does in the "
					     "gaps (the evidence): fuse small ops (torch.compile, XLA/jit_compile), capture the "
					     "step in a CUDA graph, raise the batch size, and move data loading and Python "
					     "bookkeeping (logging, .item()) off the training loop.");
		else if (top_cat == ADV_IDLE_KERNEL)
			tft_adv_recommend(f, "Kernels are queued but short gaps separate them: fewer, larger kernels "
					     "(fusion, torch.compile) and CUDA graphs remove the per-kernel overhead.");
		else
			tft_adv_recommend(f, "Work was queued but did not start: look for synchronisation in the gaps "
					     "(cudaStreamSynchronize, cudaEventSynchronize, .item(), .cpu(), blocking "
					     "copies), waits between streams, and work outside the traced steps.");
		for (uint32_t k = 0, ne = 0; k < st->ntop && ne < 5; k++) {
			/* the longest gaps of this device first */
			uint32_t best = TFT_NONE;
			for (uint32_t j = 0; j < st->ntop; j++)
				if (st->top[j].device == d && st->top[j].ov > 0 &&
				    (best == TFT_NONE || st->top[j].ov > st->top[best].ov))
					best = j;
			if (best == TFT_NONE)
				break;
			struct tft_advise_evidence *e = tft_adv_evidence(f, st->top[best].track, st->top[best].g0,
									  st->top[best].g1);
			tft_adv_evidence_slice(e, st->top[best].track, st->top[best].depth, st->top[best].next_ts);
			st->top[best].ov = -st->top[best].ov; /* (taken) */
			ne++;
		}
		for (uint32_t j = 0; j < st->ntop; j++)
			if (st->top[j].ov < 0)
				st->top[j].ov = -st->top[j].ov;
	}
	if (shown < a->ndevices && vl < sizeof(verdict) - 40)
		snprintf(verdict + vl, sizeof(verdict) - vl, "; %u more devices", a->ndevices - shown);
	tft_adv_verdict(a, TFT_ADVISE_UTILIZATION, "%s", verdict[0] ? verdict : "no device ran during the analysed steps");
	return 0;
}

static void ut_fini(struct adv *a)
{
	struct ut_state *st = a->st[TFT_ADVISE_UTILIZATION];

	if (!st)
		return;
	free(st->tr);
	free(st->scope_ns);
	tft_ivset_fini(&st->dev);
	tft_ivset_fini(&st->tmp);
	tft_ivset_fini(&st->spare);
	free(st);
	a->st[TFT_ADVISE_UTILIZATION] = NULL;
}

const struct adv_checker tft_adv_utilization = {
	.id = TFT_ADVISE_UTILIZATION,
	.init = ut_init,
	.slab = ut_slab,
	.finish = ut_finish,
	.fini = ut_fini,
};
