/* SPDX-License-Identifier: MIT */
/*
 * Checker 1, step_time: the step-time breakdown over the analysed steps (the
 * engine computes each step's parts) and the input-pipeline verdict, as
 * XProf's overview page gives it: input-bound when the host waits for data
 * (loader ops, a step's leading gap) for 5% of the step time or more
 * ("highly" from 20%).
 */
#include <stdlib.h>
#include <string.h>

#include "analyze/advise_int.h"

#define INPUT_MODERATE 5 /* percent of step time */
#define INPUT_HIGH 20
#define TOP_INPUT 32     /* input slices kept for evidence */

struct in_slice {
	uint32_t track, depth, win;
	int64_t ts, dur;
};

struct st_state {
	int64_t *win_input;        /* per window: its input-class time (analysed ones) */
	struct in_slice top[TOP_INPUT];
	uint32_t ntop;
	uint64_t loader_torch, loader_tf; /* input slices named like PyTorch's / TF's loaders */
};

static int st_init(struct adv *a)
{
	struct st_state *st = calloc(1, sizeof(*st));

	if (!st)
		return TFT_ENOMEM;
	st->win_input = calloc(a->nwin ? a->nwin : 1, sizeof(*st->win_input));
	if (!st->win_input) {
		free(st);
		return TFT_ENOMEM;
	}
	a->st[TFT_ADVISE_STEP_TIME] = st;
	return 0;
}

static void keep(struct st_state *st, const struct in_slice *x)
{
	uint32_t k;

	if (st->ntop < TOP_INPUT) {
		st->top[st->ntop++] = *x;
		return;
	}
	for (k = 0; k < TOP_INPUT; k++)
		if (st->top[k].dur < x->dur)
			break;
	if (k == TOP_INPUT)
		return;
	/* replace the shortest */
	uint32_t m = 0;
	for (k = 1; k < TOP_INPUT; k++)
		if (st->top[k].dur < st->top[m].dur)
			m = k;
	st->top[m] = *x;
}

static int st_slab(struct adv *a, struct adv_slab *sl)
{
	struct st_state *st = a->st[TFT_ADVISE_STEP_TIME];

	for (size_t i = 0; i < sl->n; i++) {
		const struct adv_sl *x = &sl->sl[i];
		struct in_slice k;
		const char *name;

		if (x->cls != ADV_C_INPUT || !(x->flags & ADV_SL_OWN) || x->win == TFT_NONE || !a->win[x->win].analysed)
			continue;
		if (!(x->flags & ADV_SL_TOP) && sl->sl[i].depth > 0) {
			/* nested inside another input slice: the outer one is kept */
			bool outer_input = false;
			for (size_t j = i; j-- > 0 && sl->sl[j].track == x->track;) {
				if (sl->sl[j].depth < x->depth && sl->sl[j].end > x->ts) {
					outer_input = sl->sl[j].cls == ADV_C_INPUT;
					break;
				}
			}
			if (outer_input)
				continue;
		}
		st->win_input[x->win] += x->end - x->ts;
		k.track = x->track;
		k.depth = x->depth;
		k.win = x->win;
		k.ts = x->ts;
		k.dur = x->end - x->ts;
		keep(st, &k);
		name = tft_adv_str(a, x->name);
		if (strstr(name, "DataLoader") || strstr(name, "dataloader") || strstr(name, "_next_data"))
			st->loader_torch++;
		else
			st->loader_tf++;
	}
	return 0;
}

static int cmp_win_input(const void *x, const void *y, void *ctx)
{
	const int64_t *v = ctx;
	uint32_t p = *(const uint32_t *)x, q = *(const uint32_t *)y;

	return (v[p] < v[q]) - (v[p] > v[q]);
}

static int st_finish(struct adv *a)
{
	struct st_state *st = a->st[TFT_ADVISE_STEP_TIME];
	int64_t part[TFT_ADVISE_NPARTS] = { 0 }, total = 0, per;
	uint32_t n = tft_adv_analysed_count(a), nw = 0, *ws;
	char p[TFT_ADVISE_NPARTS][16], b1[32], b2[32];
	const char *state;
	struct tft_advise_finding *f;

	for (uint32_t i = 0; i < a->nwin; i++) {
		if (!a->win[i].analysed)
			continue;
		for (int k = 0; k < TFT_ADVISE_NPARTS; k++)
			part[k] += a->win[i].part[k];
		/* (a window's pending leading gap stays idle: nothing ran in it) */
	}
	for (int k = 0; k < TFT_ADVISE_NPARTS; k++)
		total += part[k];
	if (!n || total <= 0) {
		tft_adv_verdict(a, TFT_ADVISE_STEP_TIME, "no step time to break down: %s",
				a->nwin ? "no step was traced at op level" : "no slices in this session");
		return 0;
	}
	for (int k = 0; k < TFT_ADVISE_NPARTS; k++)
		tft_adv_pct(p[k], sizeof(p[k]), part[k], total);
	state = tft_adv_share_ge(part[TFT_ADVISE_INPUT], INPUT_HIGH, total)	    ? "highly input-bound"
		: tft_adv_share_ge(part[TFT_ADVISE_INPUT], INPUT_MODERATE, total) ? "moderately input-bound"
										  : "not input-bound";
	tft_adv_verdict(a, TFT_ADVISE_STEP_TIME,
			"%s: %s of step time waits for data (device compute %s, communication %s, memcpy %s, "
			"host compute %s, idle %s; %u step%s, %s per step)",
			state, p[TFT_ADVISE_INPUT], p[TFT_ADVISE_DEVICE_COMPUTE], p[TFT_ADVISE_COMM],
			p[TFT_ADVISE_MEMCPY], p[TFT_ADVISE_HOST_COMPUTE], p[TFT_ADVISE_IDLE], n, n == 1 ? "" : "s",
			tft_adv_ns(b1, sizeof(b1), total / n));
	if (!tft_adv_share_ge(part[TFT_ADVISE_INPUT], INPUT_MODERATE, total))
		return 0;
	per = part[TFT_ADVISE_INPUT] / n;
	f = tft_adv_finding(a, TFT_ADVISE_STEP_TIME, per, "Input-pipeline bound: %s of step time waits for data",
			    p[TFT_ADVISE_INPUT]);
	if (!f)
		return 0;
	tft_adv_explain(f,
			"The analysed step%s spend%s %s per step (%s) with no device or host work running but "
			"data being loaded: in input ops (DataLoader, tf.data iterators) or in the gap between "
			"a step's start and its first op. The rest of the step: device compute %s, "
			"communication %s, memcpy %s, host compute %s, idle %s. XProf calls a program input-bound "
			"from %d%% and highly input-bound from %d%%.",
			n == 1 ? "" : "s", n == 1 ? "s" : "", tft_adv_ns(b2, sizeof(b2), per), p[TFT_ADVISE_INPUT],
			p[TFT_ADVISE_DEVICE_COMPUTE], p[TFT_ADVISE_COMM], p[TFT_ADVISE_MEMCPY],
			p[TFT_ADVISE_HOST_COMPUTE], p[TFT_ADVISE_IDLE], INPUT_MODERATE, INPUT_HIGH);
	if (st->loader_torch >= st->loader_tf)
		tft_adv_recommend(f, "Load data ahead of the step: give the DataLoader worker processes "
				     "(num_workers > 0, persistent_workers=True, a prefetch_factor of 2 or more) and "
				     "pin_memory=True; move per-sample preprocessing out of the training loop (or onto "
				     "the GPU), and cache decoded samples when the dataset fits.");
	else
		tft_adv_recommend(f, "Overlap input with compute: end the tf.data pipeline with "
				     ".prefetch(tf.data.AUTOTUNE), parallelise map/interleave "
				     "(num_parallel_calls=tf.data.AUTOTUNE), .cache() after expensive decoding, and "
				     "read files in parallel; see XProf's input pipeline analyser for the slow stage.");
	/* evidence: the steps that wait longest */
	ws = malloc(a->nwin * sizeof(*ws));
	if (!ws)
		return 0;
	for (uint32_t i = 0; i < a->nwin; i++) {
		struct adv_win *w = &a->win[i];
		if (!w->analysed)
			continue;
		/* the step's leading gap counts too */
		if (w->first_act != INT64_MAX && w->first_act > w->t0)
			st->win_input[i] += w->first_act - w->t0;
		if (st->win_input[i] > 0)
			ws[nw++] = i;
	}
	qsort_r(ws, nw, sizeof(*ws), cmp_win_input, st->win_input);
	for (uint32_t k = 0; k < nw && k < 3; k++) {
		uint32_t wi = ws[k];
		struct adv_win *w = &a->win[wi];
		struct tft_advise_evidence *e;
		uint32_t track = TFT_NONE;

		for (uint32_t j = 0; j < st->ntop; j++)
			if (st->top[j].win == wi && (track == TFT_NONE))
				track = st->top[j].track;
		e = tft_adv_evidence(f, track, w->t0, w->t1);
		if (!e)
			break;
		for (uint32_t j = 0; j < st->ntop; j++)
			if (st->top[j].win == wi)
				tft_adv_evidence_slice(e, st->top[j].track, st->top[j].depth, st->top[j].ts);
		if (w->first_act != INT64_MAX && w->first_act > w->t0 && !e->nslices)
			e->t1_ns = w->first_act; /* the leading gap itself */
	}
	free(ws);
	return 0;
}

static void st_fini(struct adv *a)
{
	struct st_state *st = a->st[TFT_ADVISE_STEP_TIME];

	if (!st)
		return;
	free(st->win_input);
	free(st);
	a->st[TFT_ADVISE_STEP_TIME] = NULL;
}

const struct adv_checker tft_adv_step_time = {
	.id = TFT_ADVISE_STEP_TIME,
	.init = st_init,
	.slab = st_slab,
	.finish = st_finish,
	.fini = st_fini,
};
