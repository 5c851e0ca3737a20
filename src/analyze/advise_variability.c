/* SPDX-License-Identifier: MIT */
/*
 * Checker 7, variability: the spread of step times per worker (p50, p99,
 * max), outlier steps (1.5x the median or slower, with three steps or more)
 * and what differs in them against the median step (the breakdown part and
 * the ops whose self time grew most); and with several ranks in the
 * session, the straggler: per step index, each rank's time outside
 * communication (the others spend the difference waiting in collectives);
 * the rank with the most of it in half the steps or more, 5% of a step
 * ahead of the median rank, is a finding (HTA's straggler analysis looks at
 * late-starting collectives, the same wait from the other side). Where the
 * ranks' communication matches (a job directory, a merged job, ranks' MPI
 * calls: analyze/ranks.h, the analysis of the Ranks page and `stats --by
 * rank`), the straggler is that analysis's: the rank the waiting of matched
 * receives and collectives is charged back to, with the ops that made it
 * late; the finding when its waiting is 5% of a step or more.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/advise_int.h"
#include "analyze/ranks.h"
#include "core/grow.h"

#define OUTLIER_X10 15    /* an outlier: 1.5x the median step or slower */
#define MIN_STEPS 3
#define MAX_OUT 3         /* outliers explained per worker */
#define EXCESS_PCT 2      /* outliers' excess: a finding from 2% of the step time */
#define STRAGGLER_PCT 5   /* straggler's lead over the median rank, of a step */

struct op_t {
	int64_t self;
	uint32_t track, depth;
	int64_t ts, dur;
};

struct watch {
	uint32_t win;
	struct adv_map ops; /* name id -> struct op_t */
};

struct longest {
	uint32_t track, depth;
	int64_t ts, dur;
};

struct var_state {
	uint32_t *slot;          /* per window: its watch slot, or TFT_NONE */
	struct watch *w;         /* owned */
	uint32_t nw, cw;
	uint32_t *median_of;     /* per scope: its median window, or TFT_NONE */
	struct longest *comm;    /* per window: its longest comm slice (analysed windows) */
};

static int cmp_dur(const void *x, const void *y, void *ctx)
{
	const struct adv *a = ctx;
	const struct adv_win *p = &a->win[*(const uint32_t *)x], *q = &a->win[*(const uint32_t *)y];
	int64_t dp = p->t1 - p->t0, dq = q->t1 - q->t0;

	if (dp != dq)
		return dp < dq ? -1 : 1;
	return (p->t0 > q->t0) - (p->t0 < q->t0);
}

/* The analysed windows of scope sc sorted by duration into ws; their count. */
static uint32_t sorted_windows(struct adv *a, uint32_t sc, uint32_t *ws)
{
	uint32_t n = 0;

	for (uint32_t i = a->scopes[sc].w0; i < a->scopes[sc].w1; i++)
		if (a->win[i].analysed && a->win[i].step != TFT_NONE)
			ws[n++] = i;
	qsort_r(ws, n, sizeof(*ws), cmp_dur, a);
	return n;
}

static int64_t wdur(const struct adv *a, uint32_t w)
{
	return a->win[w].t1 - a->win[w].t0;
}

static int add_watch(struct var_state *st, uint32_t w)
{
	struct watch *nw;

	if (st->slot[w] != TFT_NONE)
		return 0;
	if (tft_grow((void **)&st->w, &st->cw, st->nw + 1, sizeof(*nw)))
		return TFT_ENOMEM;
	nw = st->w;
	memset(&nw[st->nw], 0, sizeof(nw[0]));
	nw[st->nw].win = w;
	nw[st->nw].ops.vsize = sizeof(struct op_t);
	st->slot[w] = st->nw++;
	return 0;
}

static int var_init(struct adv *a)
{
	struct var_state *st = calloc(1, sizeof(*st));
	uint32_t *ws;

	if (!st)
		return TFT_ENOMEM;
	a->st[TFT_ADVISE_VARIABILITY] = st;
	st->slot = malloc((a->nwin ? a->nwin : 1) * sizeof(*st->slot));
	st->median_of = malloc((a->nscopes ? a->nscopes : 1) * sizeof(*st->median_of));
	st->comm = calloc(a->nwin ? a->nwin : 1, sizeof(*st->comm));
	ws = malloc((a->nwin ? a->nwin : 1) * sizeof(*ws));
	if (!st->slot || !st->median_of || !st->comm || !ws) {
		free(ws);
		return TFT_ENOMEM;
	}
	memset(st->slot, 0xff, (a->nwin ? a->nwin : 1) * sizeof(*st->slot));
	for (uint32_t sc = 0; sc < a->nscopes; sc++) {
		uint32_t n = sorted_windows(a, sc, ws), med;
		st->median_of[sc] = TFT_NONE;
		if (n < MIN_STEPS)
			continue;
		med = ws[(n + 1) / 2 - 1];
		st->median_of[sc] = med;
		/* the slowest outliers, and the median step they are compared with */
		for (uint32_t k = 0; k < MAX_OUT && k < n; k++) {
			uint32_t w = ws[n - 1 - k];
			if (wdur(a, w) * 10 < wdur(a, med) * OUTLIER_X10)
				break;
			if (add_watch(st, w) || add_watch(st, med)) {
				free(ws);
				return TFT_ENOMEM;
			}
		}
	}
	free(ws);
	return 0;
}

static int var_slab(struct adv *a, struct adv_slab *sl)
{
	struct var_state *st = a->st[TFT_ADVISE_VARIABILITY];

	for (size_t i = 0; i < sl->n; i++) {
		const struct adv_sl *x = &sl->sl[i];
		int64_t d = x->end - x->ts;
		if (!(x->flags & ADV_SL_OWN) || x->win == TFT_NONE || !a->win[x->win].analysed)
			continue;
		if (x->cls == ADV_C_COMM && d > st->comm[x->win].dur) {
			st->comm[x->win].track = x->track;
			st->comm[x->win].depth = x->depth;
			st->comm[x->win].ts = x->ts;
			st->comm[x->win].dur = d;
		}
		if (st->slot[x->win] != TFT_NONE) {
			struct op_t *o = tft_adv_map_get(&st->w[st->slot[x->win]].ops, x->name);
			if (!o)
				return TFT_ENOMEM;
			o->self += sl->self[i];
			if (d > o->dur) {
				o->track = x->track;
				o->depth = x->depth;
				o->ts = x->ts;
				o->dur = d;
			}
		}
	}
	return 0;
}

/* "+12 ms input, +3 ms aten::copy_" for outlier w against median m. */
static void diff_text(struct adv *a, struct var_state *st, uint32_t w, uint32_t m, char *out, size_t size,
		      uint32_t *top_name, const struct op_t **top_op)
{
	const struct watch *ow = &st->w[st->slot[w]], *mw = &st->w[st->slot[m]];
	int best_part = -1;
	int64_t best = 0, d1 = 0, d2 = 0;
	uint32_t n1 = TFT_NONE, n2 = TFT_NONE;
	const struct op_t *o1 = NULL;
	char b[32];
	size_t l = 0;

	for (int p = 0; p < TFT_ADVISE_NPARTS; p++) {
		int64_t d = a->win[w].part[p] - a->win[m].part[p];
		if (d > best) {
			best = d;
			best_part = p;
		}
	}
	for (size_t i = 0; i < ow->ops.cap; i++) {
		uint32_t key;
		const struct op_t *o = tft_adv_map_slot(&ow->ops, i, &key), *mo;
		int64_t d;
		if (!o)
			continue;
		mo = tft_adv_map_find(&mw->ops, key);
		d = o->self - (mo ? mo->self : 0);
		if (d > d1) {
			d2 = d1;
			n2 = n1;
			d1 = d;
			n1 = key;
			o1 = o;
		} else if (d > d2) {
			d2 = d;
			n2 = key;
		}
	}
	out[0] = 0;
	if (best_part >= 0)
		l += (size_t)snprintf(out + l, size - l, "+%s %s", tft_adv_ns(b, sizeof(b), best),
				      tft_advise_part_name(best_part));
	if (n1 != TFT_NONE && l < size)
		l += (size_t)snprintf(out + l, size - l, "%s+%s in %.60s", l ? ", " : "", tft_adv_ns(b, sizeof(b), d1),
				      tft_adv_str(a, n1));
	if (n2 != TFT_NONE && l < size)
		snprintf(out + l, size - l, ", +%s in %.60s", tft_adv_ns(b, sizeof(b), d2), tft_adv_str(a, n2));
	*top_name = n1;
	*top_op = o1;
}

static void outliers(struct adv *a, struct var_state *st, char *v, size_t vsize, size_t *vl)
{
	uint32_t *ws = malloc((a->nwin ? a->nwin : 1) * sizeof(*ws));

	if (!ws)
		return;
	for (uint32_t sc = 0; sc < a->nscopes; sc++) {
		uint32_t n = sorted_windows(a, sc, ws), m = st->median_of[sc], nout = 0;
		int64_t excess = 0, total = 0, p50, p99, mx;
		char b1[32], b2[32], b3[32], p1[16], expl[1800], where[200];
		size_t el = 0;
		struct tft_advise_finding *f;

		if (!n)
			continue;
		for (uint32_t k = 0; k < n; k++)
			total += wdur(a, ws[k]);
		p50 = wdur(a, ws[(n + 1) / 2 - 1]);
		p99 = wdur(a, ws[(n * 99 + 99) / 100 - 1]);
		mx = wdur(a, ws[n - 1]);
		where[0] = 0;
		if (a->analysed_scopes > 1 && a->scopes[sc].key[0])
			snprintf(where, sizeof(where), " (%s)", a->scopes[sc].key);
		if (*vl < vsize - 200)
			*vl += (size_t)snprintf(v + *vl, vsize - *vl, "%s%u step%s%s: p50 %s, p99 %s, max %s", *vl ? "; " : "",
						n, n == 1 ? "" : "s", where, tft_adv_ns(b1, sizeof(b1), p50), tft_adv_ns(b2, sizeof(b2), p99),
						tft_adv_ns(b3, sizeof(b3), mx));
		if (m == TFT_NONE)
			continue;
		for (uint32_t k = n; k-- > 0;) {
			if (wdur(a, ws[k]) * 10 < p50 * OUTLIER_X10)
				break;
			excess += wdur(a, ws[k]) - p50;
			nout++;
		}
		if (!nout || !tft_adv_share_ge(excess, EXCESS_PCT, total)) {
			if (*vl < vsize - 40)
				*vl += (size_t)snprintf(v + *vl, vsize - *vl, ", no outliers");
			continue;
		}
		f = tft_adv_finding(a, TFT_ADVISE_VARIABILITY, excess / n, "%u slow step%s%s: up to %.1fx the median step (%s)",
				    nout, nout == 1 ? "" : "s", where, (double)mx / (double)(p50 ? p50 : 1),
				    tft_adv_ns(b1, sizeof(b1), p50));
		el += (size_t)snprintf(expl + el, sizeof(expl) - el,
				       "Over %u steps the median takes %s, p99 %s, the slowest %s; %u step%s take 1.5x "
				       "the median or more, %s per step on average over all steps (%s of the step time). "
				       "Against step %lld, the median step:",
				       n, tft_adv_ns(b1, sizeof(b1), p50), tft_adv_ns(b2, sizeof(b2), p99),
				       tft_adv_ns(b3, sizeof(b3), mx), nout, nout == 1 ? "" : "s",
				       tft_adv_ns(b1, sizeof(b1), excess / n), tft_adv_pct(p1, sizeof(p1), excess, total),
				       (long long)a->res->steps[a->win[m].step].index);
		for (uint32_t k = 0; k < MAX_OUT && k < nout; k++) {
			uint32_t w = ws[n - 1 - k], top = TFT_NONE;
			const struct op_t *o = NULL;
			char d[400];
			struct tft_advise_evidence *e;
			if (st->slot[w] == TFT_NONE)
				continue;
			diff_text(a, st, w, m, d, sizeof(d), &top, &o);
			if (el < sizeof(expl) - 100)
				el += (size_t)snprintf(expl + el, sizeof(expl) - el, " step %lld took %s (%s)%s",
						       (long long)a->res->steps[a->win[w].step].index,
						       tft_adv_ns(b1, sizeof(b1), wdur(a, w)), d, k + 1 < nout && k + 1 < MAX_OUT ? ";" : ".");
			e = tft_adv_evidence(f, o ? o->track : TFT_NONE, a->win[w].t0, a->win[w].t1);
			if (o)
				tft_adv_evidence_slice(e, o->track, o->depth, o->ts);
		}
		tft_adv_explain(f, "%s", expl);
		tft_adv_recommend(f, "Look at what the slow steps do differently (the evidence opens them): a "
				     "growing part points at its cause: input (a loader that falls behind: more "
				     "workers, prefetching), host compute (garbage collection, logging, checkpointing "
				     "every N steps: move it off the step or make it asynchronous), communication (a "
				     "slow or busy peer), idle (the host preempted or waiting on I/O).");
	}
	free(ws);
}

struct rank_sum {
	int32_t rank;
	uint32_t scope;
	uint32_t straggler;  /* steps it was the slowest rank outside communication */
	int64_t excess;      /* summed lead over the median rank in those steps */
	int64_t work, comm;  /* summed time outside communication / in communication */
	uint32_t steps;
};

static int cmp_i64(const void *x, const void *y)
{
	int64_t p = *(const int64_t *)x, q = *(const int64_t *)y;

	return (p > q) - (p < q);
}

/*
 * The straggler from the ranks' matched communication (analyze/ranks.h).
 * Returns true when that analysis decided (finding or not), false to fall
 * back on the step-time comparison (no matched communication, no waiting).
 */
static bool ranks_straggler(struct adv *a, char *v, size_t vsize, size_t *vl)
{
	struct tft_ranks_result *r = NULL;
	struct tft_error err;
	const struct tft_ranks_rank *sr;
	struct tft_advise_finding *f;
	int64_t steps_ns = 0, per_step;
	char b1[32], b2[32], p1[16], expl[1600];
	size_t el = 0;
	uint32_t shown = 0;

	tft_error_clear(&err);
	if (tft_ranks_analyze(a->s, &r, &err) || !r)
		return false;
	if (r->nranks < 2 || (!r->messages && r->collectives == r->inferred_collectives) || r->straggler < 0 ||
	    r->straggler_index >= r->nranks || !r->nsteps) {
		tft_ranks_destroy(r);
		return false;
	}
	sr = &r->ranks[r->straggler_index];
	for (uint32_t k = 0; k < r->nsteps; k++)
		steps_ns += r->steps[k].end_ns - r->steps[k].start_ns;
	/* what each other rank waits for it per step, on average: the step's cost */
	per_step = sr->caused_ns / r->nsteps / (int64_t)(r->nranks - 1);
	if (*vl < vsize - 160)
		*vl += (size_t)snprintf(v + *vl, vsize - *vl,
					"; %u ranks, their communication matched (%" PRIu64 " messages, %" PRIu64
					" collectives): rank %d made each other rank wait %s per step",
					r->nranks, r->messages, r->collectives, sr->rank, tft_adv_ns(b1, sizeof(b1), per_step));
	if (!tft_adv_share_ge(per_step, STRAGGLER_PCT, steps_ns / r->nsteps)) { /* under 5% of a step */
		tft_ranks_destroy(r);
		return true;
	}
	f = tft_adv_finding(a, TFT_ADVISE_VARIABILITY, per_step,
			    "Rank %d is a straggler: the other ranks wait %s per step for it", sr->rank,
			    tft_adv_ns(b1, sizeof(b1), per_step));
	el += (size_t)snprintf(expl + el, sizeof(expl) - el,
			       "Matching the ranks' communication (%" PRIu64 " messages, %" PRIu64 " collectives) and "
			       "charging the time each call waited to the rank it waited for, rank %d caused %s of the "
			       "%s the ranks waited (%s) over %u steps; it arrived last at %" PRIu64 " collectives.",
			       r->messages, r->collectives, sr->rank, tft_adv_ns(b1, sizeof(b1), sr->caused_ns),
			       tft_adv_ns(b2, sizeof(b2), r->wait_total_ns),
			       tft_adv_pct(p1, sizeof(p1), sr->caused_ns, r->wait_total_ns), r->nsteps, sr->last_arrivals);
	for (uint32_t k = 0; k < r->nops && shown < 3 && el < sizeof(expl) - 160; k++) {
		const struct tft_ranks_op *o = &r->ops[k];
		if (o->straggler_ns <= o->others_ns)
			break;
		el += (size_t)snprintf(expl + el, sizeof(expl) - el, "%s %s: %s on rank %d before the calls it was late "
				       "to (%" PRIu64 "x), %s per waiting rank before theirs",
				       shown ? ";" : " What made it late:", tft_adv_str(a, o->name),
				       tft_adv_ns(b1, sizeof(b1), o->straggler_ns), sr->rank, o->count,
				       tft_adv_ns(b2, sizeof(b2), o->others_ns));
		shown++;
	}
	if (shown && el < sizeof(expl) - 2)
		el += (size_t)snprintf(expl + el, sizeof(expl) - el, ".");
	tft_adv_explain(f, "%s", expl);
	tft_adv_recommend(f, "Find what rank %d does more of (the Ranks page shows its ops against the others'): "
			     "an uneven data shard or sequence lengths (balance or bucket the batches), a slower "
			     "or throttled GPU, host work only that rank does (logging, checkpointing, evaluation "
			     "on rank 0), or a noisy neighbour on its host.",
			  sr->rank);
	/* the collectives with the most waiting, those it arrived last at first: first to last arrival */
	for (int e = 0; e < 3; e++) {
		const struct tft_ranks_coll *best = NULL;
		for (uint32_t k = 0; k < r->ncolls; k++) {
			const struct tft_ranks_coll *c = &r->colls[k];
			bool mine = c->last_rank == sr->rank, best_mine = best && best->last_rank == sr->rank;
			if (c->wait_ns <= 0 || (best && (best_mine > mine || (best_mine == mine && c->wait_ns <= best->wait_ns))))
				continue;
			bool taken = false;
			for (uint32_t m = 0; m < f->nevidence; m++)
				if (f->evidence[m].t0_ns == c->first_ns && f->evidence[m].t1_ns == c->last_ns)
					taken = true;
			if (!taken)
				best = c;
		}
		if (!best || best->last_ns <= best->first_ns)
			break;
		tft_adv_evidence(f, TFT_NONE, best->first_ns, best->last_ns);
	}
	tft_ranks_destroy(r);
	return true;
}

static void stragglers(struct adv *a, struct var_state *st, char *v, size_t vsize, size_t *vl)
{
	struct rank_sum rs[64];
	uint32_t nr = 0, common = 0, *by = NULL;
	int64_t work[64], sum_med = 0, top_excess[3] = { 0 };
	uint32_t top_w[3][64], top_nw[3] = { 0 };
	int64_t idx_seen = INT64_MIN;
	struct tft_advise_finding *f;
	char b1[32], b2[32], p1[16], expl[1600];
	size_t el = 0;

	if (a->nranks < 2 || ranks_straggler(a, v, vsize, vl))
		return;
	for (uint32_t sc = 0; sc < a->nscopes && nr < 64; sc++) {
		if (a->scopes[sc].rank < 0)
			continue;
		memset(&rs[nr], 0, sizeof(rs[nr]));
		rs[nr].rank = a->scopes[sc].rank;
		rs[nr].scope = sc;
		nr++;
	}
	/* windows by step index: walk the indices the first rank has */
	by = malloc((size_t)nr * sizeof(*by));
	if (!by)
		return;
	for (uint32_t i = a->scopes[rs[0].scope].w0; i < a->scopes[rs[0].scope].w1; i++) {
		const struct adv_win *w0 = &a->win[i];
		int64_t index, med, mx = INT64_MIN;
		uint32_t got = 0, arg = 0;
		if (!w0->analysed || w0->step == TFT_NONE)
			continue;
		index = a->res->steps[w0->step].index;
		if (index == idx_seen)
			continue;
		idx_seen = index;
		for (uint32_t r = 0; r < nr; r++) {
			by[r] = TFT_NONE;
			for (uint32_t j = a->scopes[rs[r].scope].w0; j < a->scopes[rs[r].scope].w1; j++)
				if (a->win[j].analysed && a->win[j].step != TFT_NONE &&
				    a->res->steps[a->win[j].step].index == index) {
					by[r] = j;
					break;
				}
			if (by[r] == TFT_NONE)
				continue;
			work[got] = wdur(a, by[r]) - a->win[by[r]].part[TFT_ADVISE_COMM];
			rs[r].work += work[got];
			rs[r].comm += a->win[by[r]].part[TFT_ADVISE_COMM];
			rs[r].steps++;
			if (work[got] > mx) {
				mx = work[got];
				arg = r;
			}
			got++;
		}
		if (got < 2)
			continue;
		common++;
		qsort(work, got, sizeof(*work), cmp_i64);
		med = work[(got + 1) / 2 - 1];
		rs[arg].straggler++;
		rs[arg].excess += mx - med;
		sum_med += wdur(a, by[arg]);
		/* the three steps with the largest lead, for the evidence */
		for (int k = 0; k < 3; k++) {
			if (mx - med > top_excess[k]) {
				for (int m = 2; m > k; m--) {
					top_excess[m] = top_excess[m - 1];
					top_nw[m] = top_nw[m - 1];
					memcpy(top_w[m], top_w[m - 1], sizeof(top_w[0]));
				}
				top_excess[k] = mx - med;
				top_nw[k] = nr;
				for (uint32_t r = 0; r < nr; r++)
					top_w[k][r] = r == arg ? by[r] | 0x80000000u : by[r];
				break;
			}
		}
	}
	free(by);
	if (!common)
		return;
	uint32_t s = 0;
	for (uint32_t r = 1; r < nr; r++)
		if (rs[r].excess > rs[s].excess)
			s = r;
	if (*vl < vsize - 120)
		*vl += (size_t)snprintf(v + *vl, vsize - *vl, "; %u ranks over %u common steps: rank %d is slowest outside "
					"communication in %u, %s ahead of the median rank per step",
					nr, common, rs[s].rank, rs[s].straggler,
					tft_adv_ns(b1, sizeof(b1), rs[s].straggler ? rs[s].excess / common : 0));
	if (rs[s].straggler * 2 < common || !tft_adv_share_ge(rs[s].excess, STRAGGLER_PCT, sum_med))
		return;
	f = tft_adv_finding(a, TFT_ADVISE_VARIABILITY, rs[s].excess / common,
			    "Rank %d is a straggler: the other ranks wait %s per step for it", rs[s].rank,
			    tft_adv_ns(b1, sizeof(b1), rs[s].excess / common));
	el += (size_t)snprintf(expl + el, sizeof(expl) - el,
			       "In %u of the %u steps the ranks share, rank %d spends the longest outside "
			       "communication, %s more than the median rank (%s of a step); the other ranks spend "
			       "that time waiting in collectives. Per rank, time outside / in communication per step:",
			       rs[s].straggler, common, rs[s].rank, tft_adv_ns(b1, sizeof(b1), rs[s].excess / common),
			       tft_adv_pct(p1, sizeof(p1), rs[s].excess, sum_med));
	for (uint32_t r = 0; r < nr && el < sizeof(expl) - 80; r++)
		el += (size_t)snprintf(expl + el, sizeof(expl) - el, " rank %d %s / %s%s", rs[r].rank,
				       tft_adv_ns(b1, sizeof(b1), rs[r].steps ? rs[r].work / rs[r].steps : 0),
				       tft_adv_ns(b2, sizeof(b2), rs[r].steps ? rs[r].comm / rs[r].steps : 0),
				       r + 1 < nr ? ";" : ".");
	tft_adv_explain(f, "%s", expl);
	tft_adv_recommend(f, "Find what rank %d does more of (the evidence opens its slow steps next to another "
			     "rank's wait): an uneven data shard or sequence lengths (balance or bucket the "
			     "batches), a slower or throttled GPU, host work only that rank does (logging, "
			     "checkpointing, evaluation on rank 0), or a noisy neighbour on its host.",
			  rs[s].rank);
	for (int k = 0; k < 3; k++) {
		if (!top_excess[k])
			continue;
		for (uint32_t r = 0; r < top_nw[k]; r++) {
			uint32_t w = top_w[k][r];
			if (w == TFT_NONE || !(w & 0x80000000u))
				continue;
			w &= 0x7fffffffu;
			tft_adv_evidence(f, TFT_NONE, a->win[w].t0, a->win[w].t1);
		}
		for (uint32_t r = 0; r < top_nw[k]; r++) {
			uint32_t w = top_w[k][r];
			const struct longest *c;
			if (w == TFT_NONE || (w & 0x80000000u))
				continue;
			c = &st->comm[w];
			if (c->dur) {
				struct tft_advise_evidence *e = tft_adv_evidence(f, c->track, c->ts, c->ts + c->dur);
				tft_adv_evidence_slice(e, c->track, c->depth, c->ts);
				break;
			}
		}
	}
}

static int var_finish(struct adv *a)
{
	struct var_state *st = a->st[TFT_ADVISE_VARIABILITY];
	char v[1600];
	size_t vl = 0;

	v[0] = 0;
	outliers(a, st, v, sizeof(v), &vl);
	stragglers(a, st, v, sizeof(v), &vl);
	tft_adv_verdict(a, TFT_ADVISE_VARIABILITY, "%s", vl ? v : "no steps to compare: the session has no step markers");
	return 0;
}

static void var_fini(struct adv *a)
{
	struct var_state *st = a->st[TFT_ADVISE_VARIABILITY];

	if (!st)
		return;
	for (uint32_t i = 0; i < st->nw; i++)
		tft_adv_map_fini(&st->w[i].ops);
	free(st->w);
	free(st->slot);
	free(st->median_of);
	free(st->comm);
	free(st);
	a->st[TFT_ADVISE_VARIABILITY] = NULL;
}

const struct adv_checker tft_adv_variability = {
	.id = TFT_ADVISE_VARIABILITY,
	.init = var_init,
	.slab = var_slab,
	.finish = var_finish,
	.fini = var_fini,
};
