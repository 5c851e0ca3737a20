/* SPDX-License-Identifier: MIT */
/*
 * Clock alignment (job/clock.h): ordered pairs of events across ranks to
 * difference bounds, shortest paths to each rank's interval against the
 * reference, time windows to drift.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codec/json_read.h"
#include "codec/json_write.h"
#include "core/grow.h"
#include "job/clock.h"

#define NWIN 8           /* time windows for the drift */
#define ALL NWIN         /* the matrix over all pairs */
#define DENSE_MEMBERS 64 /* collectives up to this size give every pair; larger ones a subset */
#define SUBSET 8         /* the latest arrivals and the earliest departures a large collective gives */
#define INF INT64_MAX

/* ---- parsing clock_sync ------------------------------------------------------------- */

static int sync_err(struct tft_error *err, const struct tft_json_reader *r, const char *what)
{
	return tft_error_set(err, TFT_EFORMAT, tft_json_offset(r), "meta clock_sync: %s", what);
}

static int read_i64(struct tft_json_reader *r, int64_t *out, struct tft_error *err)
{
	struct tft_json_value v;
	int rc = tft_json_read(r, &v, err);

	if (rc)
		return rc < 0 ? rc : sync_err(err, r, "truncated");
	if (v.type != TFT_JSON_NUMBER || tft_json_number_to_i64(v.ptr, v.len, out))
		return sync_err(err, r, "expected an integer");
	return 0;
}

int tft_clock_parse_sync(const char *json, int32_t own_rank, struct tft_clock_sync **rows, uint32_t *n,
			 uint32_t *cap, struct tft_error *err)
{
	struct tft_json_reader r;
	struct tft_json_value v;
	struct tft_json_str k;
	size_t len = strlen(json);
	char *buf = malloc(len + TFT_JSON_PAD + 1);
	int64_t ref_rank = 0;
	int rc;

	if (!buf)
		return tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
	memcpy(buf, json, len);
	memset(buf + len, 0, TFT_JSON_PAD + 1);
	tft_json_reader_init_mem(&r, buf, len, NULL, NULL);
	rc = tft_json_read(&r, &v, err);
	if (rc || v.type != TFT_JSON_OBJECT) {
		rc = rc < 0 ? rc : sync_err(err, &r, "expected an object");
		goto out;
	}
	while ((rc = tft_json_next_key(&r, &k, err)) == 1) {
		if (k.len == 14 && memcmp(k.ptr, "reference_rank", 14) == 0) {
			if ((rc = read_i64(&r, &ref_rank, err)))
				goto out;
			continue;
		}
		if (!(k.len == 6 && memcmp(k.ptr, "points", 6) == 0)) {
			if ((rc = tft_json_skip(&r, NULL, err)))
				goto out;
			continue;
		}
		if ((rc = tft_json_read(&r, &v, err)) || v.type != TFT_JSON_ARRAY) {
			rc = rc < 0 ? rc : sync_err(err, &r, "points: expected an array");
			goto out;
		}
		while ((rc = tft_json_next_item(&r, 0, err)) == 1) {
			struct tft_clock_sync row = { .rank = own_rank, .ref_rank = (int32_t)ref_rank };
			int have = 0;
			if ((rc = tft_json_read(&r, &v, err)) || v.type != TFT_JSON_OBJECT) {
				rc = rc < 0 ? rc : sync_err(err, &r, "a point: expected an object");
				goto out;
			}
			while ((rc = tft_json_next_key(&r, &k, err)) == 1) {
				int64_t x;
				int64_t *dst = NULL;
				int bit = 0;
				if (k.len == 6 && memcmp(k.ptr, "ref_t0", 6) == 0)
					dst = &row.ref_t0, bit = 1;
				else if (k.len == 6 && memcmp(k.ptr, "ref_t1", 6) == 0)
					dst = &row.ref_t1, bit = 2;
				else if (k.len == 5 && memcmp(k.ptr, "local", 5) == 0)
					dst = &row.local, bit = 4;
				else if (k.len == 4 && memcmp(k.ptr, "peer", 4) == 0)
					dst = &x, bit = 8;
				if (!dst) {
					if ((rc = tft_json_skip(&r, NULL, err)))
						goto out;
					continue;
				}
				if ((rc = read_i64(&r, dst, err)))
					goto out;
				if (bit == 8) {
					if (x < 0 || x > INT32_MAX) {
						rc = sync_err(err, &r, "peer: expected a rank");
						goto out;
					}
					row.rank = (int32_t)x;
				}
				have |= bit;
			}
			if (rc)
				goto out;
			if ((have & 7) != 7) {
				rc = sync_err(err, &r, "a point without ref_t0, ref_t1 or local");
				goto out;
			}
			if (row.ref_t1 < row.ref_t0) {
				rc = sync_err(err, &r, "a point whose ref_t1 precedes its ref_t0");
				goto out;
			}
			row.ref_rank = (int32_t)ref_rank;
			if (row.rank == row.ref_rank)
				continue; /* (the reference with itself says nothing) */
			if (tft_grow((void **)rows, cap, *n + 1, sizeof(**rows))) {
				rc = tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
				goto out;
			}
			(*rows)[(*n)++] = row;
		}
		if (rc)
			goto out;
	}
	if (rc > 0)
		rc = sync_err(err, &r, "truncated");
out:
	tft_json_reader_fini(&r);
	free(buf);
	return rc < 0 ? rc : 0;
}

/* ---- parsing job_clock ------------------------------------------------------------- */

static uint32_t method_bit(const struct tft_json_value *v)
{
	static const struct { const char *s; uint32_t bit; } m[] = {
		{ "reference", TFT_CLOCK_REFERENCE },   { "pingpong", TFT_CLOCK_PINGPONG },
		{ "collectives", TFT_CLOCK_COLLECTIVES }, { "messages", TFT_CLOCK_MESSAGES },
		{ "inconsistent", TFT_CLOCK_INCONSISTENT },
	};

	for (size_t i = 0; v->type == TFT_JSON_STRING && i < sizeof(m) / sizeof(m[0]); i++)
		if (strlen(m[i].s) == v->len && memcmp(v->ptr, m[i].s, v->len) == 0)
			return m[i].bit;
	return 0;
}

static bool key_is(const struct tft_json_str *k, const char *s)
{
	return k->len == strlen(s) && memcmp(k->ptr, s, k->len) == 0;
}

int tft_clock_parse_job(const char *json, struct tft_clock_rank **out, uint32_t *n, bool *applied,
			struct tft_error *err)
{
	struct tft_json_reader r;
	struct tft_json_value v;
	struct tft_json_str k;
	size_t len = strlen(json);
	char *buf = malloc(len + TFT_JSON_PAD + 1);
	uint32_t cap = 0;
	int rc;

	*out = NULL;
	*n = 0;
	*applied = false;
	if (!buf)
		return tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
	memcpy(buf, json, len);
	memset(buf + len, 0, TFT_JSON_PAD + 1);
	tft_json_reader_init_mem(&r, buf, len, NULL, NULL);
	if ((rc = tft_json_read(&r, &v, err)) || v.type != TFT_JSON_OBJECT) {
		rc = rc < 0 ? rc : tft_error_set(err, TFT_EFORMAT, tft_json_offset(&r), "job_clock: expected an object");
		goto out;
	}
	while ((rc = tft_json_next_key(&r, &k, err)) == 1) {
		if (key_is(&k, "applied")) {
			if ((rc = tft_json_read(&r, &v, err)))
				goto out;
			*applied = v.type == TFT_JSON_TRUE;
			continue;
		}
		if (!key_is(&k, "ranks")) {
			if ((rc = tft_json_skip(&r, NULL, err)))
				goto out;
			continue;
		}
		if ((rc = tft_json_read(&r, &v, err)) || v.type != TFT_JSON_ARRAY) {
			rc = rc < 0 ? rc : tft_error_set(err, TFT_EFORMAT, tft_json_offset(&r), "job_clock: ranks: expected an array");
			goto out;
		}
		while ((rc = tft_json_next_item(&r, 0, err)) == 1) {
			struct tft_clock_rank cr = { .rank = -1, .map = tft_clock_identity() };
			if ((rc = tft_json_read(&r, &v, err)) || v.type != TFT_JSON_OBJECT) {
				rc = rc < 0 ? rc : tft_error_set(err, TFT_EFORMAT, tft_json_offset(&r), "job_clock: a rank: expected an object");
				goto out;
			}
			while ((rc = tft_json_next_key(&r, &k, err)) == 1) {
				int64_t x = 0;
				double d = 0;
				if (key_is(&k, "method")) {
					if ((rc = tft_json_read(&r, &v, err)) || v.type != TFT_JSON_ARRAY) {
						rc = rc < 0 ? rc : tft_error_set(err, TFT_EFORMAT, tft_json_offset(&r), "job_clock: method: expected an array");
						goto out;
					}
					while ((rc = tft_json_next_item(&r, 0, err)) == 1) {
						if ((rc = tft_json_read(&r, &v, err)))
							goto out;
						cr.map.method |= method_bit(&v);
					}
					if (rc)
						goto out;
					continue;
				}
				if ((rc = tft_json_read(&r, &v, err)))
					goto out;
				if (v.type != TFT_JSON_NUMBER)
					continue;
				if (key_is(&k, "drift_ppm")) {
					if (tft_json_number_to_double(v.ptr, v.len, &d) == 0)
						cr.map.drift = d * 1e-6;
					continue;
				}
				if (tft_json_number_to_i64(v.ptr, v.len, &x))
					continue;
				if (key_is(&k, "rank") && x >= 0 && x <= INT32_MAX)
					cr.rank = (int32_t)x;
				else if (key_is(&k, "offset_ns"))
					cr.map.offset_ns = x;
				else if (key_is(&k, "ref_ns"))
					cr.map.ref_ns = x;
				else if (key_is(&k, "error_ns"))
					cr.map.error_ns = x;
			}
			if (rc)
				goto out;
			if (cr.rank < 0)
				continue;
			if (tft_grow((void **)out, &cap, *n + 1, sizeof(**out))) {
				rc = tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
				goto out;
			}
			(*out)[(*n)++] = cr;
		}
		if (rc)
			goto out;
	}
	if (rc > 0)
		rc = tft_error_set(err, TFT_EFORMAT, tft_json_offset(&r), "job_clock: truncated");
out:
	tft_json_reader_fini(&r);
	free(buf);
	if (rc < 0) {
		free(*out);
		*out = NULL;
		*n = 0;
	}
	return rc < 0 ? rc : 0;
}

/* ---- the pairs -------------------------------------------------------------------- */

struct est {
	uint32_t n;
	int64_t *w[NWIN + 1];    /* owned: [a * n + b]: o_b - o_a <= w (INF: no bound) */
	int64_t *wt[NWIN + 1];   /* owned: [a * n + b]: the time of the pair that set w (its first event) */
	uint32_t *kinds;         /* owned: [rank] TFT_CLOCK_* of the pairs touching it */
	uint32_t *pairs;         /* owned: [rank] pairs touching it */
	int64_t t0, t1;          /* span of the pairs' times (windows) */
	const struct tft_clock_map *maps; /* the current estimate: drift corrects times */
	bool skip_other_colls;   /* leave out collectives that are not MPI's */
};

/* A time with the rank's drift taken out (its offset stays). */
static int64_t corrected(const struct est *e, uint32_t rank, int64_t t)
{
	const struct tft_clock_map *m = &e->maps[rank];
	int64_t d;

	if (m->drift == 0.0 || __builtin_sub_overflow(t, m->ref_ns, &d))
		return t;
	return t - (int64_t)llround(m->drift * (double)d);
}

/* Event at ta on rank a happened before the event at tb on rank b. */
static void before(struct est *e, uint32_t a, int64_t ta, uint32_t b, int64_t tb, uint32_t kind)
{
	int64_t x, y, d;
	int win;

	if (a == b || a >= e->n || b >= e->n || ta == INT64_MIN || tb == INT64_MAX)
		return;
	x = corrected(e, a, ta);
	y = corrected(e, b, tb);
	if (__builtin_sub_overflow(y, x, &d))
		return;
	win = e->t1 > e->t0 ? (int)((double)(x - e->t0) / (double)(e->t1 - e->t0) * NWIN) : 0;
	win = win < 0 ? 0 : win >= NWIN ? NWIN - 1 : win;
	if (d < e->w[ALL][(size_t)a * e->n + b]) {
		e->w[ALL][(size_t)a * e->n + b] = d;
		e->wt[ALL][(size_t)a * e->n + b] = x;
	}
	if (d < e->w[win][(size_t)a * e->n + b]) {
		e->w[win][(size_t)a * e->n + b] = d;
		e->wt[win][(size_t)a * e->n + b] = x;
	}
	e->kinds[a] |= kind;
	e->kinds[b] |= kind;
	e->pairs[a]++;
	e->pairs[b]++;
}

/* The estimated reference-clock time of a call's start or end (for picking pairs). */
static int64_t est_time(const struct est *e, uint32_t rank, int64_t t)
{
	return tft_clock_aligned(&e->maps[rank], t);
}

struct pick {
	int64_t t;
	uint32_t call;
};

static int cmp_pick(const void *a, const void *b)
{
	const struct pick *x = a, *y = b;

	return (x->t > y->t) - (x->t < y->t);
}

static int coll_pairs(struct est *e, const struct tft_comm_set *cs, const struct tft_comm_coll *g)
{
	const uint32_t *mem = cs->member + g->first;
	const struct tft_comm_call *c0 = &cs->calls[mem[0]];
	uint32_t root = UINT32_MAX;

	if (g->n < 2 || (c0->flags & TFT_COMM_F_NONBLOCKING) ||
	    (e->skip_other_colls && !(c0->flags & TFT_COMM_F_MPI)))
		return 0;
	for (uint32_t j = 0; j < g->n; j++) {
		const struct tft_comm_call *c = &cs->calls[mem[j]];
		int32_t cr = c->rank_in_comm >= 0 ? c->rank_in_comm : cs->ranks[c->rank];
		if (c->root >= 0 && cr == c->root)
			root = mem[j];
	}
	if (c0->shape == TFT_COLL_ROOT_OUT || c0->shape == TFT_COLL_ROOT_IN) {
		if (root == UINT32_MAX)
			return 0;
		const struct tft_comm_call *r = &cs->calls[root];
		for (uint32_t j = 0; j < g->n; j++) {
			const struct tft_comm_call *c = &cs->calls[mem[j]];
			if (mem[j] == root)
				continue;
			if (c0->shape == TFT_COLL_ROOT_OUT)
				before(e, r->rank, r->ts, c->rank, c->end, TFT_CLOCK_COLLECTIVES);
			else
				before(e, c->rank, c->ts, r->rank, r->end, TFT_CLOCK_COLLECTIVES);
		}
		return 0;
	}
	if (c0->shape == TFT_COLL_PREFIX) {
		if (g->n > DENSE_MEMBERS)
			return 0;
		for (uint32_t i = 0; i < g->n; i++)
			for (uint32_t j = 0; j < g->n; j++) {
				const struct tft_comm_call *a = &cs->calls[mem[i]], *b = &cs->calls[mem[j]];
				int32_t ra = a->rank_in_comm >= 0 ? a->rank_in_comm : cs->ranks[a->rank];
				int32_t rb = b->rank_in_comm >= 0 ? b->rank_in_comm : cs->ranks[b->rank];
				if (ra < rb)
					before(e, a->rank, a->ts, b->rank, b->end, TFT_CLOCK_COLLECTIVES);
			}
		return 0;
	}
	/* every member leaves after every member arrived */
	if (g->n <= DENSE_MEMBERS) {
		for (uint32_t i = 0; i < g->n; i++)
			for (uint32_t j = 0; j < g->n; j++) {
				const struct tft_comm_call *a = &cs->calls[mem[i]], *b = &cs->calls[mem[j]];
				before(e, a->rank, a->ts, b->rank, b->end, TFT_CLOCK_COLLECTIVES);
			}
		return 0;
	}
	/* a large one: the latest arrivals to everyone, everyone to the earliest departures
	 * (latest and earliest by the current estimate: the tight pairs once it is close) */
	struct pick *st = malloc((size_t)g->n * sizeof(*st)), *en = malloc((size_t)g->n * sizeof(*en));
	if (!st || !en) {
		free(st);
		free(en);
		return TFT_ENOMEM;
	}
	for (uint32_t j = 0; j < g->n; j++) {
		const struct tft_comm_call *c = &cs->calls[mem[j]];
		st[j] = (struct pick){ est_time(e, c->rank, c->ts), mem[j] };
		en[j] = (struct pick){ est_time(e, c->rank, c->end), mem[j] };
	}
	if (g->n) {
		qsort(st, g->n, sizeof(*st), cmp_pick);
		qsort(en, g->n, sizeof(*en), cmp_pick);
	}
	for (uint32_t q = 0; q < SUBSET && q < g->n; q++) {
		const struct tft_comm_call *a = &cs->calls[st[g->n - 1 - q].call];
		const struct tft_comm_call *b = &cs->calls[en[q].call];
		for (uint32_t j = 0; j < g->n; j++) {
			const struct tft_comm_call *c = &cs->calls[mem[j]];
			before(e, a->rank, a->ts, c->rank, c->end, TFT_CLOCK_COLLECTIVES);
			before(e, c->rank, c->ts, b->rank, b->end, TFT_CLOCK_COLLECTIVES);
		}
	}
	free(st);
	free(en);
	return 0;
}

static void est_free(struct est *e)
{
	for (int k = 0; k <= NWIN; k++) {
		free(e->w[k]);
		free(e->wt[k]);
	}
	free(e->kinds);
	free(e->pairs);
}

static int est_build(struct est *e, const struct tft_comm_set *cs, const struct tft_clock_sync *rows,
		     uint32_t nrows)
{
	size_t nn = (size_t)e->n * e->n;
	int rc = 0;

	for (int k = 0; k <= NWIN; k++) {
		if ((!e->w[k] && !(e->w[k] = malloc(nn * sizeof(int64_t)))) ||
		    (!e->wt[k] && !(e->wt[k] = malloc(nn * sizeof(int64_t)))))
			return TFT_ENOMEM;
		for (size_t i = 0; i < nn; i++)
			e->w[k][i] = INF;
	}
	if ((!e->kinds && !(e->kinds = malloc(e->n * sizeof(uint32_t)))) ||
	    (!e->pairs && !(e->pairs = malloc(e->n * sizeof(uint32_t)))))
		return TFT_ENOMEM;
	memset(e->kinds, 0, e->n * sizeof(uint32_t));
	memset(e->pairs, 0, e->n * sizeof(uint32_t));
	for (uint32_t i = 0; i < nrows; i++) {
		uint32_t r0 = tft_comm_rank_index(cs, rows[i].ref_rank), k = tft_comm_rank_index(cs, rows[i].rank);
		if (r0 == UINT32_MAX || k == UINT32_MAX)
			continue;
		before(e, r0, rows[i].ref_t0, k, rows[i].local, TFT_CLOCK_PINGPONG);
		before(e, k, rows[i].local, r0, rows[i].ref_t1, TFT_CLOCK_PINGPONG);
	}
	for (uint32_t m = 0; m < cs->nmsgs; m++) {
		const struct tft_comm_call *s = &cs->calls[cs->msgs[m].send], *d = &cs->calls[cs->msgs[m].recv_done];
		before(e, s->rank, s->ts, d->rank, d->end, TFT_CLOCK_MESSAGES);
	}
	for (uint32_t g = 0; g < cs->ncolls && !rc; g++)
		rc = coll_pairs(e, cs, &cs->colls[g]);
	return rc;
}

/* ---- a first drift: offsets sampled over time --------------------------------------------- */

struct sample {
	double x, y; /* time since t0, offset seen then */
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Least squares through s[0..n) (n >= 2); false if the times do not spread. */
static bool line(const struct sample *s, uint32_t n, double *slope, double *icpt)
{
	double sx = 0, sy = 0, sxx = 0, sxy = 0, den;

	for (uint32_t i = 0; i < n; i++) {
		sx += s[i].x;
		sy += s[i].y;
		sxx += s[i].x * s[i].x;
		sxy += s[i].x * s[i].y;
	}
	den = n * sxx - sx * sx;
	if (n < 2 || !(den > 0))
		return false;
	*slope = (n * sxy - sx * sy) / den;
	*icpt = (sy - *slope * sx) / n;
	return true;
}

/*
 * The drift of rank k against ref from samples of their offset over the run:
 * each ping-pong round's midpoint (local - (t0 + t1) / 2) and, where the run
 * has none, each collective both are in (the difference of their exits: who
 * leaves a collective leaves about when the others do). A line through them,
 * refitted without the samples more than 3 median deviations off; 0 unless it
 * moves the offset by more than 3 median deviations (and 100 ns) over the run.
 */
static double first_drift(const struct tft_comm_set *cs, const struct tft_clock_sync *rows, uint32_t nrows,
			  uint32_t ref, uint32_t k, int64_t t0, struct sample *s, double *res)
{
	uint32_t n = 0, m;
	double slope, icpt, mad, xmin = 1e300, xmax = -1e300;

	for (uint32_t i = 0; i < nrows; i++)
		if (tft_comm_rank_index(cs, rows[i].ref_rank) == ref && tft_comm_rank_index(cs, rows[i].rank) == k)
			s[n++] = (struct sample){ (double)(rows[i].ref_t0 - t0),
						  (double)rows[i].local - ((double)rows[i].ref_t0 + (double)rows[i].ref_t1) / 2 };
	for (uint32_t g = 0; n == 0 && g < cs->ncolls; g++) {
		const struct tft_comm_coll *c = &cs->colls[g];
		const struct tft_comm_call *a = NULL, *b = NULL;
		if (cs->calls[cs->member[c->first]].shape != TFT_COLL_ALL ||
		    (cs->calls[cs->member[c->first]].flags & TFT_COMM_F_NONBLOCKING))
			continue;
		for (uint32_t j = 0; j < c->n; j++) {
			const struct tft_comm_call *x = &cs->calls[cs->member[c->first + j]];
			if (x->rank == ref)
				a = x;
			else if (x->rank == k)
				b = x;
		}
		if (a && b)
			s[m = n++] = (struct sample){ (double)(a->end - t0), (double)(b->end - a->end) };
	}
	if (n < 2)
		return 0;
	for (int pass = 0; pass < 2; pass++) {
		if (!line(s, n, &slope, &icpt))
			return 0;
		for (uint32_t i = 0; i < n; i++)
			res[i] = fabs(s[i].y - (icpt + slope * s[i].x));
		if (n)
			qsort(res, n, sizeof(*res), cmp_double);
		mad = res[n / 2];
		if (pass == 1)
			break;
		m = 0;
		for (uint32_t i = 0; i < n; i++)
			if (fabs(s[i].y - (icpt + slope * s[i].x)) <= 3 * mad + 1)
				s[m++] = s[i];
		if (m < 2)
			return 0;
		n = m;
	}
	for (uint32_t i = 0; i < n; i++) {
		if (s[i].x < xmin)
			xmin = s[i].x;
		if (s[i].x > xmax)
			xmax = s[i].x;
	}
	if (fabs(slope * (xmax - xmin)) <= 3 * mad + 100)
		return 0;
	return slope;
}

/* ---- the bounds --------------------------------------------------------------------- */

/*
 * Shortest paths from src over w (its transpose with `rev`): dist[k] bounds
 * o_k - o_src (rev: o_src - o_k). False on a negative cycle (the pairs
 * contradict each other).
 */
static bool spfa(const int64_t *w, uint32_t n, uint32_t src, bool rev, int64_t *dist, uint32_t *pred,
		 uint32_t *queue, uint32_t *cnt, bool *inq)
{
	uint32_t head = 0, len = 0;

	for (uint32_t i = 0; i < n; i++) {
		dist[i] = INF;
		cnt[i] = 0;
		inq[i] = false;
		pred[i] = UINT32_MAX;
	}
	dist[src] = 0;
	queue[0] = src;
	len = 1;
	inq[src] = true;
	while (len) {
		uint32_t u = queue[head];
		head = (head + 1) % n;
		len--;
		inq[u] = false;
		for (uint32_t v = 0; v < n; v++) {
			int64_t wt = rev ? w[(size_t)v * n + u] : w[(size_t)u * n + v], nd;
			if (wt == INF || __builtin_add_overflow(dist[u], wt, &nd))
				continue;
			if (nd < dist[v]) {
				dist[v] = nd;
				pred[v] = u;
				if (!inq[v]) {
					if (++cnt[v] > n)
						return false;
					queue[(head + len) % n] = v;
					len++;
					inq[v] = true;
				}
			}
		}
	}
	return true;
}

struct bounds {
	int64_t *lo, *hi; /* owned: o_k - o_ref within [lo, hi] (INT64_MIN / INF: unbounded) */
	double *at;       /* owned: when the bounds hold (the mean time of the pairs on their paths) */
	bool ok;          /* consistent */
};

/* The mean time of the pairs on the path to k (pred), added to *sum / *cnt. */
static void path_times(const int64_t *wt, uint32_t n, uint32_t ref, uint32_t k, const uint32_t *pred, bool rev,
		       double *sum, uint32_t *cnt)
{
	for (uint32_t v = k, steps = 0; v != ref && pred[v] != UINT32_MAX && steps < n; steps++) {
		uint32_t u = pred[v];
		*sum += (double)(rev ? wt[(size_t)v * n + u] : wt[(size_t)u * n + v]);
		(*cnt)++;
		v = u;
	}
}

static int solve(const int64_t *w, const int64_t *wt, uint32_t n, uint32_t ref, struct bounds *b)
{
	int64_t *d = malloc(n * sizeof(*d));
	uint32_t *q = malloc(n * sizeof(*q)), *cnt = malloc(n * sizeof(*cnt));
	uint32_t *p1 = malloc(n * sizeof(*p1)), *p2 = malloc(n * sizeof(*p2));
	bool *inq = malloc(n * sizeof(*inq));
	int rc = 0;

	if (!d || !q || !cnt || !inq || !p1 || !p2) {
		rc = TFT_ENOMEM;
		goto out;
	}
	b->ok = spfa(w, n, ref, false, b->hi, p1, q, cnt, inq) && spfa(w, n, ref, true, d, p2, q, cnt, inq);
	for (uint32_t k = 0; k < n; k++) {
		double sum = 0;
		uint32_t c = 0;
		b->lo[k] = d[k] == INF ? INT64_MIN : -d[k];
		if (b->ok) {
			path_times(wt, n, ref, k, p1, false, &sum, &c);
			path_times(wt, n, ref, k, p2, true, &sum, &c);
		}
		b->at[k] = c ? sum / c : 0;
	}
out:
	free(d);
	free(q);
	free(cnt);
	free(inq);
	free(p1);
	free(p2);
	return rc;
}

static bool bounded(const struct bounds *b, uint32_t k)
{
	return b->ok && b->lo[k] != INT64_MIN && b->hi[k] != INF && b->lo[k] <= b->hi[k];
}

/* A line through the windows' midpoints (weighted by their errors): its slope if the
 * offset moves more than the windows' errors over the run, else 0. */
static double fit_drift(struct bounds *wb, const struct est *e, uint32_t k)
{
	double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0, first_x = 0, last_x = 0, first_e = 0, last_e = 0;
	double first_m = 0, last_m = 0;
	int n = 0;

	for (int w = 0; w < NWIN; w++) {
		if (!bounded(&wb[w], k))
			continue;
		double x = wb[w].at[k] - (double)e->t0;
		double m = ((double)wb[w].lo[k] + (double)wb[w].hi[k]) / 2;
		double er = ((double)wb[w].hi[k] - (double)wb[w].lo[k]) / 2;
		double wt = 1.0 / (er * er + 1.0);
		if (!n) {
			first_x = x;
			first_e = er;
			first_m = m;
		}
		last_x = x;
		last_e = er;
		last_m = m;
		sw += wt;
		sx += wt * x;
		sy += wt * m;
		sxx += wt * x * x;
		sxy += wt * x * m;
		n++;
	}
	if (n < 2 || last_x <= first_x)
		return 0;
	if (fabs(last_m - first_m) <= first_e + last_e + 1)
		return 0; /* within the windows' errors: no drift seen */
	double den = sw * sxx - sx * sx;
	return den > 0 ? (sw * sxy - sx * sy) / den : 0;
}

/* The span of the pairs' times, for the windows, in e->t0 and e->t1. */
static void pair_span(struct est *e, const struct tft_comm_set *cs, const struct tft_clock_sync *rows,
		      uint32_t nrows)
{
	e->t0 = INT64_MAX;
	e->t1 = INT64_MIN;
	for (uint32_t i = 0; i < cs->ncalls; i++) {
		if (cs->calls[i].ts < e->t0)
			e->t0 = cs->calls[i].ts;
		if (cs->calls[i].end > e->t1)
			e->t1 = cs->calls[i].end;
	}
	for (uint32_t i = 0; i < nrows; i++) {
		if (rows[i].ref_t0 < e->t0)
			e->t0 = rows[i].ref_t0;
		if (rows[i].ref_t1 > e->t1)
			e->t1 = rows[i].ref_t1;
	}
	if (e->t0 > e->t1)
		e->t0 = e->t1 = 0;
}

/* Rank k's map (not the reference's) from the solved bounds: offset, drift, error and method. */
static void final_map(struct tft_clock_map *m, const struct est *e, uint32_t k, double drift,
		      const struct bounds *all, const struct bounds *wb)
{
	m->method = e->kinds[k] & (TFT_CLOCK_PINGPONG | TFT_CLOCK_COLLECTIVES | TFT_CLOCK_MESSAGES);
	if (!all->ok) {
		m->method |= TFT_CLOCK_INCONSISTENT;
		m->error_ns = -1;
		return;
	}
	m->drift = drift;
	if (bounded(all, k)) {
		m->offset_ns = all->lo[k] + (all->hi[k] - all->lo[k]) / 2;
		m->error_ns = all->hi[k] - m->offset_ns;
		/* a fitted drift is known only so well: the windows bound the offset at
		 * their times whatever drift is left, the estimate is within |offset -
		 * middle| + half width of each */
		for (int w = 0; w < NWIN && m->drift != 0; w++) {
			if (!bounded(&wb[w], k))
				continue;
			int64_t mid = wb[w].lo[k] + (wb[w].hi[k] - wb[w].lo[k]) / 2;
			int64_t ew = llabs(m->offset_ns - mid) + (wb[w].hi[k] - mid);
			if (ew > m->error_ns)
				m->error_ns = ew;
		}
	} else {
		/* one side only: the bound itself, error unknown */
		m->offset_ns = all->hi[k] != INF ? (all->hi[k] < 0 ? all->hi[k] : 0)
			       : all->lo[k] != INT64_MIN ? (all->lo[k] > 0 ? all->lo[k] : 0) : 0;
		m->error_ns = -1;
	}
}

int tft_clock_estimate(const struct tft_comm_set *cs, const struct tft_clock_sync *rows, uint32_t nrows,
		       uint32_t ref, struct tft_clock_map *out)
{
	uint32_t n = cs->nranks;
	struct est e = { .n = n };
	struct bounds all = { 0 }, wb[NWIN];
	struct tft_clock_map *maps = NULL;
	double *first = NULL;
	int rc = 0;

	memset(wb, 0, sizeof(wb));
	for (uint32_t k = 0; k < n; k++)
		out[k] = tft_clock_identity();
	if (ref < n)
		out[ref].method = TFT_CLOCK_REFERENCE;
	if (n < 2 || ref >= n)
		return 0;
	maps = calloc(n, sizeof(*maps));
	first = calloc(n, sizeof(*first));
	all.lo = malloc(n * sizeof(int64_t));
	all.hi = malloc(n * sizeof(int64_t));
	all.at = malloc(n * sizeof(double));
	for (int w = 0; w < NWIN; w++) {
		wb[w].lo = malloc(n * sizeof(int64_t));
		wb[w].hi = malloc(n * sizeof(int64_t));
		wb[w].at = malloc(n * sizeof(double));
		if (!wb[w].lo || !wb[w].hi || !wb[w].at)
			rc = TFT_ENOMEM;
	}
	if (!maps || !first || !all.lo || !all.hi || !all.at || rc) {
		rc = TFT_ENOMEM;
		goto out;
	}
	pair_span(&e, cs, rows, nrows);
	for (uint32_t k = 0; k < n; k++)
		maps[k] = (struct tft_clock_map){ .ref_ns = e.t0 };
	e.maps = maps;
	/* a first drift from the offsets sampled over the run, refined by the windows below */
	{
		uint32_t cap = nrows + cs->ncolls + 2;
		struct sample *smp = malloc(cap * sizeof(*smp));
		double *res = malloc(cap * sizeof(*res));
		if (!smp || !res) {
			free(smp);
			free(res);
			rc = TFT_ENOMEM;
			goto out;
		}
		for (uint32_t k = 0; k < n; k++)
			first[k] = k == ref ? 0 : first_drift(cs, rows, nrows, ref, k, e.t0, smp, res);
		free(smp);
		free(res);
	}
	bool large = false;
	for (uint32_t g = 0; g < cs->ncolls; g++)
		large |= cs->colls[g].n > DENSE_MEMBERS;
	for (int attempt = 0; attempt < 2; attempt++) {
		e.skip_other_colls = attempt == 1;
		for (uint32_t k = 0; k < n; k++)
			maps[k].drift = first[k];
		/*
		 * Each pass solves every window on the times corrected by the drift so far and
		 * fits what drift is left; until none shows (a large collective's pairs are
		 * picked by the previous pass's estimate: one pass more for them).
		 */
		for (int pass = 0; pass < 8; pass++) {
			bool drift = false;
			if ((rc = est_build(&e, cs, rows, nrows)) || (rc = solve(e.w[ALL], e.wt[ALL], n, ref, &all)))
				goto out;
			for (int w = 0; w < NWIN; w++)
				if ((rc = solve(e.w[w], e.wt[w], n, ref, &wb[w])))
					goto out;
			for (uint32_t k = 0; k < n && pass < 6; k++) {
				double d = k == ref ? 0 : fit_drift(wb, &e, k);
				maps[k].drift += d;
				drift |= d != 0;
			}
			/* the current estimate, for the next pass's choice of pairs */
			for (uint32_t k = 0; k < n; k++)
				if (bounded(&all, k))
					maps[k].offset_ns = all.lo[k] + (all.hi[k] - all.lo[k]) / 2;
			if (!drift && (!large || pass > 0))
				break;
		}
		if (all.ok)
			break;
	}
	for (uint32_t k = 0; k < n; k++) {
		out[k].ref_ns = e.t0;
		out[k].pairs = e.pairs[k];
		if (k != ref)
			final_map(&out[k], &e, k, maps[k].drift, &all, wb);
	}
out:
	est_free(&e);
	free(maps);
	free(first);
	free(all.lo);
	free(all.hi);
	free(all.at);
	for (int w = 0; w < NWIN; w++) {
		free(wb[w].lo);
		free(wb[w].hi);
		free(wb[w].at);
	}
	return rc;
}

/* ---- meta job_clock ------------------------------------------------------------------ */

void tft_clock_write_methods(struct tft_json_writer *w, uint32_t m)
{
	tft_json_write_begin_array(w);
	if (m & TFT_CLOCK_REFERENCE)
		tft_json_write_cstr(w, "reference");
	if (m & TFT_CLOCK_PINGPONG)
		tft_json_write_cstr(w, "pingpong");
	if (m & TFT_CLOCK_COLLECTIVES)
		tft_json_write_cstr(w, "collectives");
	if (m & TFT_CLOCK_MESSAGES)
		tft_json_write_cstr(w, "messages");
	if (m & TFT_CLOCK_INCONSISTENT)
		tft_json_write_cstr(w, "inconsistent");
	tft_json_write_end_array(w);
}

char *tft_clock_json(const int32_t *ranks, const struct tft_clock_map *m, uint32_t n, bool applied)
{
	struct tft_json_writer w;

	tft_json_write_init_mem(&w);
	tft_json_write_begin_object(&w);
	tft_json_write_key(&w, "reference_rank");
	tft_json_write_int(&w, n ? ranks[0] : 0);
	tft_json_write_key(&w, "applied");
	tft_json_write_bool(&w, applied);
	tft_json_write_key(&w, "ranks");
	tft_json_write_begin_array(&w);
	for (uint32_t i = 0; i < n; i++) {
		tft_json_write_begin_object(&w);
		tft_json_write_key(&w, "rank");
		tft_json_write_int(&w, ranks[i]);
		tft_json_write_key(&w, "offset_ns");
		tft_json_write_int(&w, m[i].offset_ns);
		tft_json_write_key(&w, "drift_ppm");
		tft_json_write_double(&w, m[i].drift * 1e6);
		tft_json_write_key(&w, "ref_ns");
		tft_json_write_int(&w, m[i].ref_ns);
		tft_json_write_key(&w, "error_ns");
		tft_json_write_int(&w, m[i].error_ns);
		tft_json_write_key(&w, "method");
		tft_clock_write_methods(&w, m[i].method);
		tft_json_write_key(&w, "pairs");
		tft_json_write_uint(&w, m[i].pairs);
		tft_json_write_end_object(&w);
	}
	tft_json_write_end_array(&w);
	tft_json_write_end_object(&w);
	return tft_json_write_take(&w, NULL);
}

