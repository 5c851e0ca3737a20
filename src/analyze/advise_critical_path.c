/* SPDX-License-Identifier: MIT */
/*
 * Checker 8, critical_path: the chain of dependent work that ends one step
 * (the step asked for, else the analysed step of median duration), walked
 * back from the work that ends last: at each op, the predecessor that let
 * it start latest, among the op before it on the same thread or stream
 * (CPU ops run one after another on a thread, kernels in order on a stream:
 * HTA's lightweight critical path) and the flows into it (launch -> kernel,
 * RunMetadata dataflow, send -> recv). The time between a predecessor
 * letting go and the op starting is waiting. A path spent mostly (50% or
 * more) on the host (with a device), in input, communication or copies, or
 * with one op type holding 25% of it, is a finding; a path on device compute
 * (without a device: host compute) is a verdict.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/advise_int.h"
#include "core/grow.h"

#define MAX_NODES (1024u * 1024u)
#define MAX_PATH 100000
#define DOMINANT_PCT 50
#define ONE_OP_PCT 25

struct node {
	int64_t ts, end;
	uint32_t track, name, depth;
	uint8_t cls;
	uint32_t prev;  /* the node before it on its track (serial tracks), or TFT_NONE */
};

struct edge {
	uint32_t dst;   /* node index */
	uint32_t src;   /* node index */
	int64_t ready;  /* when the source lets the destination go: the flow's start */
};

struct cp {
	struct adv *a;
	struct node *n;
	uint32_t nn;
	uint32_t *by_track_lo, *by_track_hi; /* per track: its nodes [lo, hi) (sorted by ts) */
	struct edge *e;
	size_t ne, cape;
	int64_t t0, t1;
	uint32_t scope;
};

/* The node of track t holding time ts (the last starting at or before it), or TFT_NONE. */
static uint32_t node_at(const struct cp *c, uint32_t t, int64_t ts)
{
	uint32_t lo, hi;

	if (t >= c->a->ntracks || c->by_track_lo[t] == c->by_track_hi[t])
		return TFT_NONE;
	lo = c->by_track_lo[t];
	hi = c->by_track_hi[t];
	while (lo < hi) {
		uint32_t m = lo + (hi - lo) / 2;
		if (c->n[m].ts <= ts)
			lo = m + 1;
		else
			hi = m;
	}
	if (lo == c->by_track_lo[t])
		return TFT_NONE;
	/* among nodes starting at or before ts, one that still runs at ts */
	for (uint32_t k = lo, tries = 0; k-- > c->by_track_lo[t] && tries < 8; tries++)
		if (c->n[k].end >= ts)
			return k;
	return TFT_NONE;
}

static int on_flow(void *ctx, const struct tft_flow *f)
{
	struct cp *c = ctx;
	uint32_t s, d;

	if (f->src_track >= c->a->ntracks || f->dst_track >= c->a->ntracks)
		return 0;
	if (f->dst_ts_ns < c->t0 || f->dst_ts_ns > c->t1 || f->src_ts_ns > f->dst_ts_ns)
		return 0;
	if ((s = node_at(c, f->src_track, f->src_ts_ns)) == TFT_NONE)
		return 0;
	if ((d = node_at(c, f->dst_track, f->dst_ts_ns)) == TFT_NONE || d == s)
		return 0;
	if (tft_grow_size_ex((void **)&c->e, &c->cape, c->ne + 1, sizeof(*c->e), 1024, 0))
		return TFT_ENOMEM;

	c->e[c->ne].dst = d;
	c->e[c->ne].src = s;
	c->e[c->ne].ready = f->src_ts_ns;
	c->ne++;
	return 0;
}

static int cmp_edge(const void *x, const void *y)
{
	const struct edge *p = x, *q = y;

	return (p->dst > q->dst) - (p->dst < q->dst);
}

/* The window to walk: the step asked for, or the analysed step of median length. */
static uint32_t pick(struct adv *a)
{
	uint32_t *ws = malloc((a->nwin ? a->nwin : 1) * sizeof(*ws)), n = 0, w = TFT_NONE;

	if (!ws)
		return TFT_NONE;
	for (uint32_t i = 0; i < a->nwin; i++)
		if (a->win[i].analysed && a->win[i].t1 > a->win[i].t0)
			ws[n++] = i;
	/* insertion sort by duration (steps are few) */
	for (uint32_t i = 1; i < n; i++) {
		uint32_t k = ws[i], j = i;
		for (; j > 0 && a->win[ws[j - 1]].t1 - a->win[ws[j - 1]].t0 > a->win[k].t1 - a->win[k].t0; j--)
			ws[j] = ws[j - 1];
		ws[j] = k;
	}
	if (n)
		w = a->opts.one_step ? ws[0] : ws[(n + 1) / 2 - 1];
	free(ws);
	return w;
}

struct name_t {
	int64_t t;
};

struct step {
	uint32_t node;
	int64_t enter, exit;
};

/* The walked path: its steps from the last op back, and what it adds up to. */
struct path {
	struct step *s;
	uint32_t n;
	int64_t waiting, length;
};

/* The nodes of the window: the outermost ops of call stacks, every slice of streams and lanes. */
static int build_nodes(struct cp *c, const struct adv_slab *sl)
{
	struct adv *a = c->a;

	c->n = malloc((sl->n ? sl->n : 1) * sizeof(*c->n));
	c->by_track_lo = calloc(a->ntracks ? a->ntracks : 1, sizeof(*c->by_track_lo));
	c->by_track_hi = calloc(a->ntracks ? a->ntracks : 1, sizeof(*c->by_track_hi));
	if (!c->n || !c->by_track_lo || !c->by_track_hi)
		return TFT_ENOMEM;
	for (size_t r = 0; r < sl->nruns; r++) {
		const struct adv_run *run = &sl->runs[r];
		uint32_t first = c->nn;
		bool serial = a->tracks[run->track].serial;
		for (size_t i = run->lo; i < run->hi; i++) {
			const struct adv_sl *x = &sl->sl[i];
			struct node *nd;
			if (!(x->flags & ADV_SL_TOP))
				continue;
			nd = &c->n[c->nn];
			nd->ts = x->ts;
			nd->end = x->end;
			nd->track = x->track;
			nd->name = x->name;
			nd->depth = x->depth;
			nd->cls = x->cls;
			/* on a stream or thread: the latest-ending earlier node lets it go */
			nd->prev = TFT_NONE;
			if (serial && c->nn > first)
				nd->prev = c->nn - 1;
			c->nn++;
		}
		c->by_track_lo[run->track] = first;
		c->by_track_hi[run->track] = c->nn;
	}
	return 0;
}

/* The predecessor that let node cur start latest (the op before it on its track, or a flow into it), or TFT_NONE. */
static uint32_t latest_pred(const struct cp *c, uint32_t cur, int64_t *ready)
{
	const struct node *nd = &c->n[cur];
	int64_t best_ready = INT64_MIN;
	uint32_t best = TFT_NONE;
	size_t lo = 0, hi = c->ne;

	/* the previous op on its thread or stream that ended by its start */
	for (uint32_t pv = nd->prev, tries = 0; pv != TFT_NONE && tries < 64; pv = c->n[pv].prev, tries++) {
		if (c->n[pv].end <= nd->ts) {
			best = pv;
			best_ready = c->n[pv].end;
			break;
		}
	}
	/* flows into it */
	while (lo < hi) {
		size_t m = lo + (hi - lo) / 2;
		if (c->e[m].dst < cur)
			lo = m + 1;
		else
			hi = m;
	}
	for (size_t k = lo; k < c->ne && c->e[k].dst == cur; k++) {
		if (c->e[k].ready <= nd->ts && c->e[k].ready > best_ready && c->e[k].src != cur) {
			best = c->e[k].src;
			best_ready = c->e[k].ready;
		}
	}
	*ready = best_ready;
	return best;
}

/* Walk back from the work that ends last to the window's start. */
static int walk(const struct cp *c, struct path *p)
{
	uint32_t cur = 0;
	int64_t exit_t, start;

	for (uint32_t i = 1; i < c->nn; i++)
		if ((c->n[i].end < c->t1 ? c->n[i].end : c->t1) > (c->n[cur].end < c->t1 ? c->n[cur].end : c->t1))
			cur = i;
	exit_t = c->n[cur].end < c->t1 ? c->n[cur].end : c->t1;
	p->s = malloc(MAX_PATH * sizeof(*p->s));
	if (!p->s)
		return TFT_ENOMEM;
	start = exit_t;
	for (;;) {
		const struct node *nd = &c->n[cur];
		int64_t enter = nd->ts > c->t0 ? nd->ts : c->t0, best_ready;
		uint32_t best;

		if (exit_t < enter)
			exit_t = enter;
		p->s[p->n].node = cur;
		p->s[p->n].enter = enter;
		p->s[p->n].exit = exit_t;
		p->n++;
		start = enter;
		if (enter <= c->t0 || p->n >= MAX_PATH)
			break;
		best = latest_pred(c, cur, &best_ready);
		if (best == TFT_NONE || best_ready < c->t0)
			break;
		p->waiting += nd->ts - best_ready;
		cur = best;
		exit_t = best_ready;
	}
	p->length = (c->n[p->s[0].node].end < c->t1 ? c->n[p->s[0].node].end : c->t1) - start;
	return 0;
}

/* Evidence: the path's ops in time order, one entry per track. */
static void add_evidence(const struct cp *c, const struct path *p, struct tft_advise_finding *f)
{
	uint32_t ntr = 0, *tracks_seen;
	struct tft_advise_evidence *ev[TFT_ADVISE_MAX_EVIDENCE];

	tracks_seen = malloc(TFT_ADVISE_MAX_EVIDENCE * sizeof(*tracks_seen));
	for (uint32_t i = p->n; tracks_seen && i-- > 0;) {
		const struct step *st = &p->s[i];
		const struct node *nd = &c->n[st->node];
		uint32_t k;
		for (k = 0; k < ntr && tracks_seen[k] != nd->track; k++)
			;
		if (k == ntr) {
			if (ntr == TFT_ADVISE_MAX_EVIDENCE)
				continue;
			ev[ntr] = tft_adv_evidence(f, nd->track, st->enter, st->exit);
			if (!ev[ntr])
				break;
			tracks_seen[ntr++] = nd->track;
		}
		if (st->enter < ev[k]->t0_ns)
			ev[k]->t0_ns = st->enter;
		if (st->exit > ev[k]->t1_ns)
			ev[k]->t1_ns = st->exit;
		tft_adv_evidence_slice(ev[k], nd->track, nd->depth, nd->ts);
	}
	free(tracks_seen);
}

static void recommend_for(struct tft_advise_finding *f, int dom)
{
	if (dom == ADV_C_HOST)
		tft_adv_recommend(f, "The step waits for the CPU: cut host work on the path (the "
				     "evidence): fewer, larger ops (fusion, torch.compile, CUDA graphs), no "
				     "per-step Python bookkeeping or synchronisation, and overlap what the "
				     "host must do with device work.");
	else if (dom == ADV_C_INPUT)
		tft_adv_recommend(f, "The step waits for its input: prefetch and parallelise the "
				     "input pipeline so the next batch is ready when the step starts.");
	else if (dom == ADV_C_COMM)
		tft_adv_recommend(f, "The step waits for communication: overlap it with compute "
				     "(bucketed, asynchronous collectives), send fewer bytes, and check for "
				     "a straggler rank.");
	else
		tft_adv_recommend(f, "The step waits for copies: overlap them with compute (pinned "
				     "memory, non_blocking copies, prefetching to the device) and copy less.");
}

/* The verdict on the walked path, and a finding where it runs mostly on one class or one op type. */
static void report(struct adv *a, const struct cp *c, const struct path *p, const char *label)
{
	int64_t on_class[ADV_NCLASSES] = { 0 }, top_t = 0, length = p->length;
	struct adv_map names = { .vsize = sizeof(struct name_t) };
	char b1[32], b2[32], pc[ADV_NCLASSES + 1][16], tops[600];
	int dom = 0;
	/* the work the step is for: device compute, or without a device host compute */
	int work = a->has_device ? ADV_C_DEVICE : ADV_C_HOST;
	uint32_t top = TFT_NONE;
	static const char *const what[ADV_NCLASSES] = { "device compute", "communication", "copies", "input",
							 "host ops" };
	struct tft_advise_finding *f = NULL;

	/* the path's parts */
	for (uint32_t i = 0; i < p->n; i++) {
		const struct node *nd = &c->n[p->s[i].node];
		int64_t d = p->s[i].exit - p->s[i].enter;
		struct name_t *nt;
		if (d <= 0)
			continue;
		on_class[nd->cls < ADV_NCLASSES ? nd->cls : ADV_C_HOST] += d;
		if ((nt = tft_adv_map_get(&names, nd->name)))
			nt->t += d;
	}
	for (int k = 1; k < ADV_NCLASSES; k++)
		if (on_class[k] > on_class[dom])
			dom = k;
	for (size_t i = 0; i < names.cap; i++) {
		uint32_t key;
		const struct name_t *nt = tft_adv_map_slot(&names, i, &key);
		if (nt && nt->t > top_t) {
			top_t = nt->t;
			top = key;
		}
	}
	tft_adv_map_fini(&names);
	for (int k = 0; k < ADV_NCLASSES; k++)
		tft_adv_pct(pc[k], sizeof(pc[k]), on_class[k], length);
	tft_adv_pct(pc[ADV_NCLASSES], sizeof(pc[ADV_NCLASSES]), p->waiting, length);
	tops[0] = 0;
	if (top != TFT_NONE)
		snprintf(tops, sizeof(tops), "; the op type longest on it: %.80s (%s)", tft_adv_str(a, top),
			 tft_adv_pct(b2, sizeof(b2), top_t, length));
	tft_adv_verdict(a, TFT_ADVISE_CRITICAL_PATH,
			"critical path of %s: %s over %u ops: device compute %s, communication %s, copies %s, "
			"input %s, host ops %s, waiting %s%s",
			label, tft_adv_ns(b1, sizeof(b1), length), p->n, pc[ADV_C_DEVICE], pc[ADV_C_COMM],
			pc[ADV_C_MEMCPY], pc[ADV_C_INPUT], pc[ADV_C_HOST], pc[ADV_NCLASSES], tops);
	if (length > 0 && dom != work && tft_adv_share_ge(on_class[dom], DOMINANT_PCT, length)) {
		f = tft_adv_finding(a, TFT_ADVISE_CRITICAL_PATH, on_class[dom], "The critical path of %s runs %s on %s",
				    label, pc[dom], what[dom]);
		tft_adv_explain(f,
				"Walking back from the work that ends %s (each op's predecessor is the one that "
				"let it start last: the op before it on its thread or stream, or the flow into "
				"it), the path is %s long over %u ops: device compute %s, communication %s, "
				"copies %s, input %s, host ops %s, waiting between them %s%s. Shortening work "
				"off the path does not shorten the step.",
				label, tft_adv_ns(b1, sizeof(b1), length), p->n, pc[ADV_C_DEVICE], pc[ADV_C_COMM],
				pc[ADV_C_MEMCPY], pc[ADV_C_INPUT], pc[ADV_C_HOST], pc[ADV_NCLASSES], tops);
		recommend_for(f, dom);
	} else if (length > 0 && top != TFT_NONE && tft_adv_share_ge(top_t, ONE_OP_PCT, length) && dom != work) {
		f = tft_adv_finding(a, TFT_ADVISE_CRITICAL_PATH, top_t, "%.80s holds %s of the critical path of %s",
				    tft_adv_str(a, top), tft_adv_pct(b2, sizeof(b2), top_t, length), label);
		tft_adv_explain(f, "The path is %s long over %u ops; %s spends %s on it.",
				tft_adv_ns(b1, sizeof(b1), length), p->n, tft_adv_str(a, top),
				tft_adv_ns(b2, sizeof(b2), top_t));
		tft_adv_recommend(f, "Speed this op up or move it off the path (run it earlier, on another "
				     "stream, or overlapped with the work before it).");
	}
	if (f)
		add_evidence(c, p, f);
}

static int cp_finish(struct adv *a)
{
	struct cp c;
	struct adv_slab sl;
	struct path p = { 0 };
	uint32_t w;
	char label[96];
	int rc = 0;

	if (!tft_adv_wanted(a, TFT_ADVISE_CRITICAL_PATH))
		return 0;
	w = pick(a);
	if (w == TFT_NONE) {
		tft_adv_verdict(a, TFT_ADVISE_CRITICAL_PATH, "no analysed step to walk");
		return 0;
	}
	memset(&c, 0, sizeof(c));
	memset(&sl, 0, sizeof(sl));
	c.a = a;
	c.t0 = a->win[w].t0;
	c.t1 = a->win[w].t1;
	c.scope = a->win[w].scope;
	tft_adv_window_label(a, w, label, sizeof(label));
	sl.scope = c.scope;
	sl.a = c.t0;
	sl.b = c.t1;
	sl.own_a = c.t0;
	sl.own_b = c.t1;
	sl.max_n = MAX_NODES;
	a->no_hooks = true;
	rc = tft_adv_slab_fill(a, &sl);
	a->no_hooks = false;
	if (rc == TFT_ENOSPC) {
		rc = 0;
		tft_adv_verdict(a, TFT_ADVISE_CRITICAL_PATH, "%s has more than the %u ops the critical path walks",
				label, MAX_NODES);
		goto out;
	}
	if (rc || (rc = build_nodes(&c, &sl)))
		goto out;
	if (!c.nn) {
		tft_adv_verdict(a, TFT_ADVISE_CRITICAL_PATH, "%s has no ops to walk", label);
		goto out;
	}
	if ((rc = tft_session_flows(a->s, on_flow, &c, a->err)))
		goto out;
	if (c.ne)
		qsort(c.e, c.ne, sizeof(*c.e), cmp_edge);
	if ((rc = walk(&c, &p)))
		goto out;
	report(a, &c, &p, label);
out:
	free(p.s);
	free(c.n);
	free(c.by_track_lo);
	free(c.by_track_hi);
	free(c.e);
	tft_adv_slab_free(&sl);
	return rc < 0 ? rc : rc ? TFT_EIO : 0;
}

const struct adv_checker tft_adv_critical_path = {
	.id = TFT_ADVISE_CRITICAL_PATH,
	.finish = cp_finish,
};
