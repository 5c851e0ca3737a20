/* SPDX-License-Identifier: MIT */
/*
 * Per-rank time of a distributed job (analyze/ranks.h): busy intervals,
 * communication and waiting from the matched calls (job/comm.h: one pass;
 * a job's was made at its open), then per step the interval
 * arithmetic, the waiting charged to whom it waited for, the straggler's
 * ops, the matrix and the collectives' skew.
 */
#include <stdlib.h>
#include <string.h>

#include "analyze/ranks.h"
#include "core/grow.h"
#include "job/clock.h"
#include "job/comm.h"
#include "job/job.h"

/* ---- intervals ----------------------------------------------------------------------- */

struct ivls {
	struct tft_comm_ivl *v; /* [a, b), owned (borrowed: the busy time of a set) */
	uint32_t n, cap;
};

static int ivl_add(struct ivls *s, int64_t a, int64_t b)
{
	if (b <= a)
		return 0;
	if (s->n && s->v[s->n - 1].b == a) { /* (slices end to end: one interval) */
		s->v[s->n - 1].b = b;
		return 0;
	}
	if (tft_grow((void **)&s->v, &s->cap, s->n + 1, sizeof(*s->v)))
		return TFT_ENOMEM;
	s->v[s->n++] = (struct tft_comm_ivl){ a, b };
	return 0;
}

static int cmp_ivl(const void *x, const void *y)
{
	const struct tft_comm_ivl *p = x, *q = y;

	return (p->a > q->a) - (p->a < q->a);
}

/* Sort and merge into disjoint intervals. */
static void ivl_norm(struct ivls *s)
{
	uint32_t m = 0;

	if (s->n)
		qsort(s->v, s->n, sizeof(*s->v), cmp_ivl);
	for (uint32_t i = 0; i < s->n; i++) {
		if (m && s->v[i].a <= s->v[m - 1].b) {
			if (s->v[i].b > s->v[m - 1].b)
				s->v[m - 1].b = s->v[i].b;
		} else {
			s->v[m++] = s->v[i];
		}
	}
	s->n = m;
}

/* First interval ending after t. */
static uint32_t ivl_find(const struct ivls *s, int64_t t)
{
	uint32_t lo = 0, hi = s->n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (s->v[mid].b <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* |s ∩ [w0, w1)| */
static int64_t ivl_measure(const struct ivls *s, int64_t w0, int64_t w1)
{
	int64_t sum = 0;

	for (uint32_t i = ivl_find(s, w0); i < s->n && s->v[i].a < w1; i++) {
		int64_t a = s->v[i].a > w0 ? s->v[i].a : w0, b = s->v[i].b < w1 ? s->v[i].b : w1;
		if (b > a)
			sum += b - a;
	}
	return sum;
}

/* |s ∩ t ∩ [w0, w1)| */
static int64_t ivl_measure2(const struct ivls *s, const struct ivls *t, int64_t w0, int64_t w1)
{
	int64_t sum = 0;
	uint32_t i = ivl_find(s, w0), j = ivl_find(t, w0);

	while (i < s->n && j < t->n && s->v[i].a < w1 && t->v[j].a < w1) {
		int64_t a = s->v[i].a, b = s->v[i].b;
		if (t->v[j].a > a)
			a = t->v[j].a;
		if (t->v[j].b < b)
			b = t->v[j].b;
		if (a < w0)
			a = w0;
		if (b > w1)
			b = w1;
		if (b > a)
			sum += b - a;
		if (s->v[i].b < t->v[j].b)
			i++;
		else
			j++;
	}
	return sum;
}

/* ---- the straggler's ops ----------------------------------------------------------------- */

struct op_acc {
	uint32_t name;
	int64_t self_ns;
	uint64_t count;
};

struct open_slice {
	int64_t a, b, kids; /* clipped to the window; its children's clipped time */
	uint32_t name, depth;
	bool comm;          /* a communication call (not an op) */
};

struct self_ctx {
	struct op_acc *acc; /* owned */
	uint32_t nacc, cap;
	int64_t w0, w1;
	/* the open slices (a stack by depth) */
	struct open_slice st[256];
	uint32_t nst;
	const struct tft_comm_set *cs;
	uint32_t *comm_names; /* the calls' names, sorted (they are not ops) */
	uint32_t ncomm_names;
	int status;
};

static bool is_comm_name(const struct self_ctx *c, uint32_t name)
{
	uint32_t lo = 0, hi = c->ncomm_names;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (c->comm_names[mid] < name)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < c->ncomm_names && c->comm_names[lo] == name;
}

static void acc_add(struct self_ctx *c, uint32_t name, int64_t self)
{
	for (uint32_t i = 0; i < c->nacc; i++)
		if (c->acc[i].name == name) {
			c->acc[i].self_ns += self;
			c->acc[i].count++;
			return;
		}
	if (tft_grow((void **)&c->acc, &c->cap, c->nacc + 1, sizeof(*c->acc))) {
		c->status = TFT_ENOMEM;
		return;
	}
	c->acc[c->nacc++] = (struct op_acc){ name, self, 1 };
}

static void pop_to(struct self_ctx *c, uint32_t depth)
{
	while (c->nst && c->st[c->nst - 1].depth >= depth) {
		struct open_slice *t = &c->st[--c->nst];
		int64_t self = (t->b - t->a) - t->kids;
		if (!t->comm)
			acc_add(c, t->name, self > 0 ? self : 0);
	}
}

static int on_self(void *x, const struct tft_event *ev)
{
	struct self_ctx *c = x;
	int64_t a, b;

	if (ev->kind != TFT_EV_SLICE)
		return 0;
	a = ev->ts_ns > c->w0 ? ev->ts_ns : c->w0;
	b = ev->ts_ns + (ev->dur_ns > 0 ? ev->dur_ns : 0);
	b = b < c->w1 ? b : c->w1;
	pop_to(c, ev->depth);
	if (b <= a)
		return 0;
	if (c->nst && c->st[c->nst - 1].depth + 1 == ev->depth)
		c->st[c->nst - 1].kids += b - a;
	if (c->nst < 256)
		c->st[c->nst++] = (struct open_slice){ a, b, 0, ev->name, ev->depth, is_comm_name(c, ev->name) };
	return c->status;
}

/* Self time per op name in [w0, w1) of the track, added to c->acc. */
static int self_times(struct tft_session *s, uint32_t track, int64_t w0, int64_t w1, struct self_ctx *c,
		      struct tft_error *err)
{
	int rc;

	if (w1 <= w0)
		return 0;
	c->w0 = w0;
	c->w1 = w1;
	c->nst = 0;
	rc = tft_session_scan(s, track, w0, w1 - 1, 0, on_self, c, err);
	pop_to(c, 0);
	return c->status ? tft_error_set(err, c->status, -1, "out of memory") : rc;
}

/*
 * Where the run-up to call i starts on its rank: the end of the rank's last
 * collective before it on the same track (the last point where the ranks met),
 * else of its first call; INT64_MIN when i is that first call.
 */
static int64_t run_up(const struct tft_comm_set *cs, uint32_t i)
{
	const struct tft_comm_call *c = &cs->calls[i];
	uint32_t first = cs->rank_first[c->rank];

	for (uint32_t k = i; k > first; k--) {
		const struct tft_comm_call *p = &cs->calls[k - 1];
		if (p->track == c->track && p->kind == TFT_COMM_COLL && p->end <= c->ts)
			return p->end;
	}
	return i > first && cs->calls[first].end <= c->ts ? cs->calls[first].end : INT64_MIN;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

static int cmp_op(const void *a, const void *b)
{
	const struct tft_ranks_op *x = a, *y = b;
	int64_t dx = x->straggler_ns - x->others_ns, dy = y->straggler_ns - y->others_ns;

	return (dx < dy) - (dx > dy);
}

/* A time window on a track (a run-up). */
struct win {
	uint32_t track, rank;
	int64_t a, b;
};

static int win_add(struct win **w, uint32_t *n, uint32_t *cap, uint32_t track, uint32_t rank, int64_t a,
		   int64_t b)
{
	if (b <= a)
		return 0;
	if (tft_grow((void **)w, cap, *n + 1, sizeof(**w)))
		return TFT_ENOMEM;
	(*w)[(*n)++] = (struct win){ track, rank, a, b };
	return 0;
}

static int cmp_win(const void *x, const void *y)
{
	const struct win *p = x, *q = y;

	if (p->track != q->track)
		return p->track < q->track ? -1 : 1;
	return (p->a > q->a) - (p->a < q->a);
}

/* Sort by track and start, merge the overlapping ones; the count left. */
static uint32_t win_merge(struct win *w, uint32_t n)
{
	uint32_t m = 0;

	if (n)
		qsort(w, n, sizeof(*w), cmp_win);
	for (uint32_t i = 0; i < n; i++) {
		if (m && w[m - 1].track == w[i].track && w[i].a <= w[m - 1].b) {
			if (w[i].b > w[m - 1].b)
				w[m - 1].b = w[i].b;
		} else {
			w[m++] = w[i];
		}
	}
	return m;
}

#define MAX_LATE 256  /* the straggler's late calls looked at (the longest waits caused) */
#define MAX_OPS 16

struct late {
	uint32_t call;
	int64_t caused;
};

static int cmp_late(const void *a, const void *b)
{
	const struct late *x = a, *y = b;

	return (x->caused < y->caused) - (x->caused > y->caused);
}

/*
 * The ops in the run-up to the straggler's late calls (since the last collective)
 * against those in the run-up to the calls that waited for them.
 */
static int straggler_ops(struct tft_session *s, const struct tft_comm_set *cs, uint32_t S,
			 struct tft_ranks_result *r, struct tft_error *err)
{
	struct late *late = NULL;
	uint32_t nlate = 0, cap = 0;
	struct self_ctx mine = { .cs = cs }, theirs = { .cs = cs };
	uint32_t *names = malloc(((size_t)cs->ncalls + 1) * sizeof(*names));
	struct win *mw = NULL, *tw = NULL;
	uint32_t nmw = 0, ntw = 0, capm = 0, capt = 0;
	uint64_t waiting_ranks = 0;
	int rc = 0;

	if (!names)
		return tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
	for (uint32_t i = 0; i < cs->ncalls; i++)
		names[i] = cs->calls[i].name;
	if (cs->ncalls)
		qsort(names, cs->ncalls, sizeof(*names), cmp_u32);
	mine.comm_names = theirs.comm_names = names;
	mine.ncomm_names = theirs.ncomm_names = cs->ncalls;
	/* the straggler's calls others waited for, by the waiting they caused */
	for (uint32_t i = 0; i < cs->ncalls; i++) {
		const struct tft_comm_call *c = &cs->calls[i];
		if (c->waited_for == UINT32_MAX || c->wait_ns <= 0 || cs->calls[c->waited_for].rank != S)
			continue;
		uint32_t k;
		for (k = 0; k < nlate && late[k].call != c->waited_for; k++)
			;
		if (k == nlate) {
			if (tft_grow((void **)&late, &cap, nlate + 1, sizeof(*late))) {
				rc = tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
				goto out;
			}
			late[nlate++] = (struct late){ c->waited_for, 0 };
		}
		late[k].caused += c->wait_ns;
	}
	if (nlate)
		qsort(late, nlate, sizeof(*late), cmp_late);
	if (nlate > MAX_LATE)
		nlate = MAX_LATE;
	/* the run-ups (merged where they overlap: a step's calls share theirs) */
	for (uint32_t k = 0; k < nlate && !rc; k++) {
		const struct tft_comm_call *L = &cs->calls[late[k].call];
		int64_t from = run_up(cs, late[k].call);
		if (from != INT64_MIN)
			rc = win_add(&mw, &nmw, &capm, L->track, L->rank, from, L->ts);
		/* the ranks that waited for it (at most 16 of them) */
		uint32_t seen = 0;
		for (uint32_t i = 0; i < cs->ncalls && !rc && seen < 16; i++) {
			const struct tft_comm_call *c = &cs->calls[i];
			if (c->waited_for != late[k].call || c->wait_ns <= 0)
				continue;
			int64_t f = run_up(cs, i);
			if (f != INT64_MIN)
				rc = win_add(&tw, &ntw, &capt, c->track, c->rank, f, c->ts);
			seen++;
		}
	}
	if (rc) {
		rc = tft_error_set(err, rc, -1, "out of memory");
		goto out;
	}
	nmw = win_merge(mw, nmw);
	ntw = win_merge(tw, ntw);
	for (uint32_t i = 0; i < nmw && !rc; i++)
		rc = self_times(s, mw[i].track, mw[i].a, mw[i].b, &mine, err);
	for (uint32_t i = 0; i < ntw && !rc; i++) {
		rc = self_times(s, tw[i].track, tw[i].a, tw[i].b, &theirs, err);
		bool seen = false;
		for (uint32_t j = 0; j < i && !seen; j++)
			seen = tw[j].rank == tw[i].rank;
		waiting_ranks += !seen;
	}
	if (rc)
		goto out;
	r->ops = calloc(mine.nacc + 1, sizeof(*r->ops));
	if (!r->ops) {
		rc = tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
		goto out;
	}
	for (uint32_t i = 0; i < mine.nacc; i++) {
		struct tft_ranks_op *op = &r->ops[r->nops++];
		op->name = mine.acc[i].name;
		op->straggler_ns = mine.acc[i].self_ns;
		op->count = mine.acc[i].count;
		for (uint32_t j = 0; j < theirs.nacc; j++)
			if (theirs.acc[j].name == op->name)
				op->others_ns = waiting_ranks ? theirs.acc[j].self_ns / (int64_t)waiting_ranks : 0;
	}
	if (r->nops)
		qsort(r->ops, r->nops, sizeof(*r->ops), cmp_op);
	/* the ops that took longer on it than on the ranks that waited (the first 3 if none did) */
	{
		uint32_t keep = 0;
		while (keep < r->nops && r->ops[keep].straggler_ns > r->ops[keep].others_ns)
			keep++;
		r->nops = keep ? keep : r->nops < 3 ? r->nops : 3;
	}
	if (r->nops > MAX_OPS)
		r->nops = MAX_OPS;
out:
	free(late);
	free(names);
	free(mw);
	free(tw);
	free(mine.acc);
	free(theirs.acc);
	return rc;
}

/* ---- whose lateness the waiting was ---------------------------------------------------------- */

#define CHARGE_DEPTH 8 /* how far a wait is followed back through the ranks that waited themselves */

/*
 * Charge w ns of waiting to the call L it waited for. L's rank may have been
 * late because it waited itself, in its calls since its previous collective
 * (a rank that waits for a late sender arrives late at the next collective):
 * as much of w as that waiting goes on to whom it waited for, in proportion,
 * and the rest is L's rank's own lateness (Scalasca's root causes of wait
 * states, one rule).
 */
static void charge(const struct tft_comm_set *cs, uint32_t L, int64_t w, int depth, int64_t *caused)
{
	const struct tft_comm_call *l = &cs->calls[L];
	uint32_t first = cs->rank_first[l->rank], i = L;
	int64_t x = 0, take;

	while (i > first && cs->calls[i - 1].kind != TFT_COMM_COLL)
		i--;
	for (uint32_t q = i; q < L; q++)
		if (cs->calls[q].wait_ns > 0 && cs->calls[q].waited_for != UINT32_MAX && cs->calls[q].end <= l->ts)
			x += cs->calls[q].wait_ns;
	if (x <= 0 || depth == 0) {
		caused[l->rank] += w;
		return;
	}
	take = w < x ? w : x;
	caused[l->rank] += w - take;
	for (uint32_t q = i; q < L; q++) {
		const struct tft_comm_call *c = &cs->calls[q];
		if (c->wait_ns > 0 && c->waited_for != UINT32_MAX && c->end <= l->ts)
			charge(cs, c->waited_for, (int64_t)((double)take * (double)c->wait_ns / (double)x), depth - 1,
			       caused);
	}
}

/* ---- the analysis ------------------------------------------------------------------------- */

void tft_ranks_destroy(struct tft_ranks_result *r)
{
	if (!r)
		return;
	free(r->ranks);
	free(r->steps);
	free(r->cells);
	free(r->pairs);
	free(r->colls);
	free(r->ops);
	free(r);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static int cmp_pair(const void *a, const void *b)
{
	const struct tft_ranks_pair *x = a, *y = b;

	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	return (x->dst > y->dst) - (x->dst < y->dst);
}

/* The ranks of a session's processes, ascending, unique. */
static int32_t *process_ranks(struct tft_session *s, uint32_t *n)
{
	uint32_t np = tft_session_process_count(s), m = 0;
	int32_t *r = malloc(((size_t)np + 1) * sizeof(*r));

	if (!r)
		return NULL;
	for (uint32_t i = 0; i < np; i++) {
		const struct tft_process *p = tft_session_process(s, i);
		if (p && p->rank >= 0)
			r[m++] = p->rank;
	}
	for (uint32_t i = 1; i < m; i++) /* (insertion sort: few ranks per process list) */
		for (uint32_t j = i; j > 0 && r[j - 1] > r[j]; j--) {
			int32_t t = r[j];
			r[j] = r[j - 1];
			r[j - 1] = t;
		}
	uint32_t u = 0;
	for (uint32_t i = 0; i < m; i++)
		if (!u || r[u - 1] != r[i])
			r[u++] = r[i];
	*n = u;
	return r;
}

static void cell_fill(struct tft_ranks_cell *c, const struct ivls *B, const struct ivls *C, const struct ivls *W,
		      int64_t w0, int64_t w1)
{
	int64_t b = ivl_measure(B, w0, w1), cc = ivl_measure(C, w0, w1), bc = ivl_measure2(B, C, w0, w1);
	int64_t wt = ivl_measure(W, w0, w1);

	c->start_ns = w0;
	c->end_ns = w1;
	c->compute_ns = b - bc;
	c->wait_ns = wt;
	c->comm_ns = cc - wt > 0 ? cc - wt : 0;
	c->idle_ns = (w1 - w0) - (b + cc - bc);
	if (c->idle_ns < 0)
		c->idle_ns = 0;
}

static void cell_sum(struct tft_ranks_cell *t, const struct tft_ranks_cell *c)
{
	t->compute_ns += c->compute_ns;
	t->comm_ns += c->comm_ns;
	t->wait_ns += c->wait_ns;
	t->idle_ns += c->idle_ns;
	if (c->end_ns > c->start_ns) {
		if (!t->end_ns || c->start_ns < t->start_ns)
			t->start_ns = c->start_ns;
		if (c->end_ns > t->end_ns)
			t->end_ns = c->end_ns;
	}
}

/* One analysis: the matched communication and the per-rank interval sets it fills. */
struct ra {
	struct tft_session *s;
	struct tft_job *job;
	struct tft_comm_set cs;
	struct tft_ranks_result *r;
	struct ivls *B, *C, *W; /* per rank: busy (borrowed), communication, waiting */
	uint32_t n;
	struct tft_error *err;
};

static int oom(struct ra *x)
{
	return tft_error_set(x->err, TFT_ENOMEM, -1, "out of memory");
}

/* The communication, matched (a job's at its open, else read here); 1: no ranks, nothing to say. */
static int read_comm(struct ra *x)
{
	struct tft_session *s = x->s;
	int32_t *pranks;
	uint32_t npr = 0;
	int rc = 0;

	if (x->job) {
		if ((rc = tft_job_comm(s, &x->cs)))
			return tft_error_set(x->err, rc, -1, "out of memory");
		x->r->clock_aligned = !tft_job_view_is_raw(s);
		return 0;
	}
	if (!(pranks = process_ranks(s, &npr)))
		return oom(x);
	if (!npr)
		rc = 1;
	else if (!(rc = tft_comm_read(s, NULL, &x->cs, x->err)) && tft_comm_finish(&x->cs, pranks, npr))
		rc = oom(x);
	free(pranks);
	x->r->clock_aligned = false;
	return rc;
}

/* Each rank's clock map: the job's, or the one a merged job's meta says was applied. */
static void rank_clocks(struct ra *x)
{
	struct tft_ranks_result *r = x->r;
	struct tft_clock_rank *cr = NULL;
	uint32_t ncr = 0;
	bool applied = false;

	for (uint32_t i = 0; i < x->n; i++) {
		r->ranks[i].rank = x->cs.ranks[i];
		r->ranks[i].clock_error_ns = -1;
		if (x->job && i < tft_job_rank_count(x->job)) {
			const struct tft_clock_map *m = tft_job_clock(x->job, i);
			r->ranks[i].clock_offset_ns = m->offset_ns;
			r->ranks[i].clock_drift = m->drift;
			r->ranks[i].clock_error_ns = m->error_ns;
			r->ranks[i].clock_method = m->method;
		}
	}
	if (x->job || !tft_session_meta(x->s, "job_clock"))
		return;
	if (tft_clock_parse_job(tft_session_meta(x->s, "job_clock"), &cr, &ncr, &applied, NULL) == 0) {
		for (uint32_t k = 0; k < ncr; k++) {
			uint32_t i = tft_comm_rank_index(&x->cs, cr[k].rank);
			if (i == UINT32_MAX)
				continue;
			r->ranks[i].clock_offset_ns = cr[k].map.offset_ns;
			r->ranks[i].clock_drift = cr[k].map.drift;
			r->ranks[i].clock_error_ns = cr[k].map.error_ns;
			r->ranks[i].clock_method = cr[k].map.method;
		}
		r->clock_aligned = applied;
	}
	free(cr);
}

/* Busy, communication and waiting per rank; the waiting charged to whom it waited for. */
static int rank_intervals(struct ra *x)
{
	const struct tft_comm_set *cs = &x->cs;
	struct tft_ranks_result *r = x->r;
	int rc = 0;

	/* busy time per rank: read with the communication (borrowed from the set) */
	for (uint32_t i = 0; i < x->n && i < cs->nbusy; i++) {
		x->B[i].v = cs->busy[i].v;
		x->B[i].n = cs->busy[i].n;
	}
	for (uint32_t i = 0; i < cs->ncalls && !rc; i++) {
		const struct tft_comm_call *c = &cs->calls[i];
		rc = ivl_add(&x->C[c->rank], c->ts, c->end);
		if (!rc && c->wait_ns > 0)
			rc = ivl_add(&x->W[c->rank], c->ts, c->ts + c->wait_ns);
		r->ranks[c->rank].calls++;
		if (c->wait_ns > 0 && c->waited_for != UINT32_MAX)
			r->wait_total_ns += c->wait_ns;
	}
	if (!rc) {
		int64_t *caused = calloc(x->n + 1, sizeof(*caused));
		if (!caused)
			rc = TFT_ENOMEM;
		for (uint32_t i = 0; caused && i < cs->ncalls; i++)
			if (cs->calls[i].wait_ns > 0 && cs->calls[i].waited_for != UINT32_MAX)
				charge(cs, cs->calls[i].waited_for, cs->calls[i].wait_ns, CHARGE_DEPTH, caused);
		for (uint32_t i = 0; caused && i < x->n; i++)
			r->ranks[i].caused_ns = caused[i];
		free(caused);
	}
	if (rc)
		return oom(x);
	for (uint32_t i = 0; i < x->n; i++) {
		ivl_norm(&x->C[i]);
		ivl_norm(&x->W[i]);
	}
	return 0;
}

/* The step indexes some rank has, sorted and unique, in idx (room for every step). */
static uint32_t step_indexes(struct ra *x, int64_t *idx, uint32_t ns)
{
	uint32_t nidx = 0, u = 0;

	for (uint32_t i = 0; i < ns; i++) {
		const struct tft_step *st = tft_session_step(x->s, i);
		const struct tft_process *p = st ? tft_session_process(x->s, st->process) : NULL;
		if (p && p->rank >= 0 && tft_comm_rank_index(&x->cs, p->rank) != UINT32_MAX)
			idx[nidx++] = st->index;
	}
	if (nidx)
		qsort(idx, nidx, sizeof(*idx), cmp_i64);
	for (uint32_t i = 0; i < nidx; i++)
		if (!u || idx[u - 1] != idx[i])
			idx[u++] = idx[i];
	return u;
}

/* Steps: each rank's own, matched by index (none: one, the session's span); a cell per step and rank. */
static int rank_steps(struct ra *x)
{
	struct tft_session *s = x->s;
	struct tft_ranks_result *r = x->r;
	uint32_t ns = tft_session_step_count(s), nidx, n = x->n;
	int64_t *idx = malloc(((size_t)ns + 1) * sizeof(*idx));

	if (!idx)
		return oom(x);
	nidx = step_indexes(x, idx, ns);
	r->nsteps = nidx ? nidx : 1;
	r->steps = calloc(r->nsteps, sizeof(*r->steps));
	r->cells = calloc((size_t)r->nsteps * n + 1, sizeof(*r->cells));
	if (!r->steps || !r->cells) {
		free(idx);
		return oom(x);
	}
	if (!nidx) {
		struct tft_session_summary sum;
		tft_session_get_summary(s, &sum);
		r->steps[0] = (struct tft_ranks_step){ 0, 0, sum.start_ns, sum.end_ns };
		for (uint32_t i = 0; i < n; i++)
			cell_fill(&r->cells[i], &x->B[i], &x->C[i], &x->W[i], sum.start_ns, sum.end_ns);
	} else {
		for (uint32_t k = 0; k < nidx; k++)
			r->steps[k] = (struct tft_ranks_step){ idx[k], 0, INT64_MAX, INT64_MIN };
		for (uint32_t i = 0; i < ns; i++) {
			const struct tft_step *st = tft_session_step(s, i);
			const struct tft_process *p = st ? tft_session_process(s, st->process) : NULL;
			uint32_t ri = p && p->rank >= 0 ? tft_comm_rank_index(&x->cs, p->rank) : UINT32_MAX;
			if (ri == UINT32_MAX)
				continue;
			int64_t *hit = bsearch(&st->index, idx, nidx, sizeof(*idx), cmp_i64);
			uint32_t k = (uint32_t)(hit - idx);
			int64_t end = st->start_ns + (st->dur_ns > 0 ? st->dur_ns : 0);
			struct tft_ranks_step *sp = &r->steps[k];
			sp->name = st->name;
			if (st->start_ns < sp->start_ns)
				sp->start_ns = st->start_ns;
			if (end > sp->end_ns)
				sp->end_ns = end;
			cell_fill(&r->cells[(size_t)k * n + ri], &x->B[ri], &x->C[ri], &x->W[ri], st->start_ns, end);
		}
	}
	for (uint32_t k = 0; k < r->nsteps; k++)
		for (uint32_t i = 0; i < n; i++)
			cell_sum(&r->ranks[i].total, &r->cells[(size_t)k * n + i]);
	free(idx);
	return 0;
}

/* The matrix: messages, bytes and time per (sender, receiver). */
static int rank_matrix(struct ra *x)
{
	const struct tft_comm_set *cs = &x->cs;
	struct tft_ranks_result *r = x->r;
	uint32_t cap = 0;

	for (uint32_t m = 0; m < cs->nmsgs; m++) {
		const struct tft_comm_msg *g = &cs->msgs[m];
		struct tft_ranks_pair key = { cs->calls[g->send].rank, cs->calls[g->recv_done].rank, 0, 0, 0 };
		struct tft_ranks_pair *p = r->npairs ? bsearch(&key, r->pairs, r->npairs, sizeof(key), cmp_pair) : NULL;
		if (!p) {
			if (tft_grow((void **)&r->pairs, &cap, r->npairs + 1, sizeof(*r->pairs)))
				return oom(x);
			r->pairs[r->npairs++] = key;
			if (r->npairs)
				qsort(r->pairs, r->npairs, sizeof(*r->pairs), cmp_pair);
			p = bsearch(&key, r->pairs, r->npairs, sizeof(key), cmp_pair);
		}
		p->messages++;
		if (g->bytes > 0)
			p->bytes += (uint64_t)g->bytes;
		int64_t t = cs->calls[g->recv_done].end - cs->calls[g->send].ts;
		p->time_ns += t > 0 ? t : 0;
	}
	return 0;
}

/* The collectives: who came first and last, and the waiting in each. */
static int rank_colls(struct ra *x)
{
	const struct tft_comm_set *cs = &x->cs;
	struct tft_ranks_result *r = x->r;

	r->colls = calloc(cs->ncolls + 1, sizeof(*r->colls));
	if (!r->colls)
		return oom(x);
	for (uint32_t g = 0; g < cs->ncolls; g++) {
		const struct tft_comm_coll *c = &cs->colls[g];
		const struct tft_comm_call *f = &cs->calls[c->first_call], *l = &cs->calls[c->last_call];
		struct tft_ranks_coll *o = &r->colls[r->ncolls++];
		o->name = c->name;
		o->comm = c->comm;
		o->seq = c->seq;
		o->members = c->n;
		o->expected = c->expected;
		o->first_ns = f->ts;
		o->last_ns = l->ts;
		o->first_rank = cs->ranks[f->rank];
		o->last_rank = cs->ranks[l->rank];
		o->last_track = l->track;
		o->last_ts = l->ts;
		for (uint32_t k = 0; k < c->n; k++)
			o->wait_ns += cs->calls[cs->member[c->first + k]].wait_ns;
		if (c->n > 1)
			r->ranks[l->rank].last_arrivals++;
	}
	return 0;
}

/* The straggler: the rank that caused the most waiting, and its ops. */
static int rank_straggler(struct ra *x)
{
	struct tft_ranks_result *r = x->r;

	for (uint32_t i = 0; i < x->n; i++)
		if (r->ranks[i].caused_ns > 0 &&
		    (r->straggler_index == UINT32_MAX || r->ranks[i].caused_ns > r->ranks[r->straggler_index].caused_ns))
			r->straggler_index = i;
	if (r->straggler_index == UINT32_MAX)
		return 0;
	r->straggler = r->ranks[r->straggler_index].rank;
	return straggler_ops(x->s, &x->cs, r->straggler_index, r, x->err);
}

int tft_ranks_analyze(struct tft_session *s, struct tft_ranks_result **out, struct tft_error *err)
{
	struct ra x = { .s = s, .job = tft_job_of(s), .err = err };
	struct tft_ranks_result *r = calloc(1, sizeof(*r));
	uint32_t n;
	int rc = 0;

	tft_comm_set_init(&x.cs);
	*out = NULL;
	if (!r)
		return tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
	x.r = r;
	r->straggler = -1;
	r->straggler_index = UINT32_MAX;
	if ((rc = read_comm(&x))) {
		if (rc == 1) {
			*out = r; /* no ranks: nothing to say */
			r = NULL;
			rc = 0;
		}
		goto out;
	}
	n = x.n = x.cs.nranks;
	r->nranks = n;
	r->calls = x.cs.ncalls;
	r->sends = x.cs.sends;
	r->receives = x.cs.recvs;
	r->messages = x.cs.nmsgs;
	r->unmatched_sends = x.cs.unmatched_sends;
	r->unmatched_receives = x.cs.unmatched_recvs;
	r->collectives = x.cs.ncolls;
	r->incomplete_collectives = x.cs.incomplete_colls;
	r->inferred_collectives = x.cs.inferred_colls;
	r->ranks = calloc(n + 1, sizeof(*r->ranks));
	x.B = calloc(n + 1, sizeof(*x.B));
	x.C = calloc(n + 1, sizeof(*x.C));
	x.W = calloc(n + 1, sizeof(*x.W));
	if (!r->ranks || !x.B || !x.C || !x.W) {
		rc = oom(&x);
		goto out;
	}
	rank_clocks(&x);
	if ((rc = rank_intervals(&x)) || (rc = rank_steps(&x)) || (rc = rank_matrix(&x)) || (rc = rank_colls(&x)))
		goto out;
	rc = rank_straggler(&x);
out:
	for (uint32_t i = 0; i < x.n && x.C; i++)
		free(x.C[i].v);
	for (uint32_t i = 0; i < x.n && x.W; i++)
		free(x.W[i].v);
	free(x.B);
	free(x.C);
	free(x.W);
	tft_comm_set_fini(&x.cs);
	if (rc) {
		tft_ranks_destroy(r);
		return rc;
	}
	if (r)
		*out = r;
	return 0;
}
