/* SPDX-License-Identifier: MIT */
/*
 * Run statistics (docs/http-api.md, GET /api/runs): a live hub's per-kind
 * aggregates of the steps (a log histogram for the percentiles, the recent
 * steps), kept by the follower; for a session file, exact statistics from
 * its steps.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "server/live_int.h"

static uint32_t hist_bucket(int64_t ns)
{
	double b;

	if (ns <= 1)
		return 0;
	b = log((double)ns) / log(HIST_RATIO);
	return b >= HIST_BUCKETS - 1 ? HIST_BUCKETS - 1 : (uint32_t)b;
}

static int64_t hist_value(uint32_t b)
{
	/* The geometric middle of [ratio^b, ratio^(b+1)). */
	return (int64_t)llround(pow(HIST_RATIO, (double)b + 0.5));
}

void tft_live_kind_free(struct run_kind *k)
{
	free(k->hist);
	free(k->recent);
	memset(k, 0, sizeof(*k));
}

/* The kind for name (created, evicting the least recently seen when full); agg_lock held. */
static struct run_kind *kind_get(struct tft_live *lv, const char *name)
{
	struct run_kind *k = NULL;
	uint32_t lru = 0;

	for (uint32_t i = 0; i < lv->nkinds; i++) {
		if (strcmp(lv->kinds[i].name, name) == 0)
			return &lv->kinds[i];
		if (lv->kinds[i].last_seen < lv->kinds[lru].last_seen)
			lru = i;
	}
	if (lv->nkinds < KINDS_MAX) {
		k = &lv->kinds[lv->nkinds++];
	} else {
		k = &lv->kinds[lru];
		tft_live_kind_free(k);
		lv->evicted_kinds++;
	}
	k->hist = calloc(HIST_BUCKETS, sizeof(*k->hist));
	k->recent = calloc(RECENT_MAX, sizeof(*k->recent));
	if (!k->hist || !k->recent) {
		tft_live_kind_free(k);
		if (k == &lv->kinds[lv->nkinds - 1])
			lv->nkinds--;
		return NULL;
	}
	snprintf(k->name, sizeof(k->name), "%s", name);
	k->min_ns = INT64_MAX;
	return k;
}

void tft_live_aggregate(struct tft_live *lv, const struct done_step *d)
{
	struct run_kind *k;

	pthread_mutex_lock(&lv->agg_lock);
	lv->total_steps++;
	k = kind_get(lv, d->name);
	if (k) {
		struct recent_ent *r = &k->recent[k->rhead];
		k->count++;
		k->traced += d->traced;
		k->last_seen = ++lv->seen_seq;
		k->sum_ns += (uint64_t)(d->dur_ns > 0 ? d->dur_ns : 0);
		if (d->dur_ns < k->min_ns)
			k->min_ns = d->dur_ns;
		if (d->dur_ns > k->max_ns)
			k->max_ns = d->dur_ns;
		k->last_ns = d->dur_ns;
		k->hist[hist_bucket(d->dur_ns)]++;
		r->index = d->index;
		r->start_ns = d->start_ns;
		r->dur_ns = d->dur_ns;
		r->traced = d->traced;
		k->rhead = (k->rhead + 1) % RECENT_MAX;
		if (k->rn < RECENT_MAX)
			k->rn++;
	}
	pthread_mutex_unlock(&lv->agg_lock);
}

static int64_t hist_rank(const struct run_kind *k, double q)
{
	uint64_t want = (uint64_t)ceil(q * (double)k->count), seen = 0;

	if (want < 1)
		want = 1;
	for (uint32_t b = 0; b < HIST_BUCKETS; b++) {
		seen += k->hist[b];
		if (seen >= want) {
			int64_t v = hist_value(b);
			/* Never outside the exact extremes. */
			return v < k->min_ns ? k->min_ns : v > k->max_ns ? k->max_ns : v;
		}
	}
	return k->max_ns;
}

/* /api/runs from a session file's steps: exact statistics. */
/* A kind of step of a file session: its steps are refs[lo, lo + n) (by position). */
struct file_kind {
	uint32_t name;
	uint32_t first; /* position of its first step: ties in count keep file order */
	uint64_t lo, n, traced;
	__int128 sum_ns; /* no overflow, whatever the durations */
};

/* A step's kind and position: sorted, the steps of each kind lie together, in order. */
struct step_ref {
	uint32_t name, pos;
};

static int cmp_step_ref(const void *a, const void *b)
{
	const struct step_ref *x = a, *y = b;

	if (x->name != y->name)
		return x->name < y->name ? -1 : 1;
	return (x->pos > y->pos) - (x->pos < y->pos);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static int cmp_kind_count(const void *a, const void *b)
{
	const struct file_kind *x = a, *y = b;

	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	return (x->first > y->first) - (x->first < y->first);
}

static int64_t rank_of(const int64_t *sorted, uint64_t n, double q)
{
	uint64_t k = (uint64_t)ceil(q * (double)n);

	return sorted[(k ? k : 1) - 1];
}

static void write_run_stats(struct tft_json_writer *w, const char *name, uint64_t count,
			    uint64_t traced, int64_t mean, int64_t mn, int64_t mx, int64_t p50,
			    int64_t p99, int64_t last)
{
	tft_json_write_key(w, "name");
	tft_json_write_cstr(w, name);
	tft_json_write_key(w, "count");
	tft_json_write_uint(w, count);
	tft_json_write_key(w, "traced");
	tft_json_write_uint(w, traced);
	tft_json_write_key(w, "mean_ns");
	tft_json_write_int(w, mean);
	tft_json_write_key(w, "min_ns");
	tft_json_write_int(w, mn);
	tft_json_write_key(w, "max_ns");
	tft_json_write_int(w, mx);
	tft_json_write_key(w, "p50_ns");
	tft_json_write_int(w, p50);
	tft_json_write_key(w, "p99_ns");
	tft_json_write_int(w, p99);
	tft_json_write_key(w, "last_ns");
	tft_json_write_int(w, last);
}

static void write_recent(struct tft_json_writer *w, int64_t index, int64_t start, int64_t dur,
			 bool traced)
{
	tft_json_write_begin_object(w);
	tft_json_write_key(w, "index");
	tft_json_write_int(w, index);
	tft_json_write_key(w, "start_ns");
	tft_json_write_int(w, start);
	tft_json_write_key(w, "dur_ns");
	tft_json_write_int(w, dur);
	tft_json_write_key(w, "traced");
	tft_json_write_bool(w, traced);
	tft_json_write_end_object(w);
}

/*
 * /api/runs of a file session: the steps grouped by kind (name) with one
 * sort, so that many kinds (Kineto's ProfilerStep#N: one per step) cost
 * n log n, not n per kind.
 */
static int runs_from_file(struct tft_http_req *r, int64_t recent)
{
	struct tft_error err;
	struct tft_pool_slot *slot;
	struct tft_session *s;
	struct file_kind *k = NULL;
	struct step_ref *refs = NULL;
	int64_t *durs = NULL;
	uint32_t nk = 0, n;
	struct tft_json_writer w;
	int rc = 0;

	tft_error_clear(&err);
	slot = tft_pool_acquire(&r->srv->pool, &err);
	if (!slot)
		return tft_http_reply_status(r, err.code ? err.code : TFT_EIO, &err);
	s = slot->sess;
	n = tft_session_step_count(s);
	if (n) {
		refs = malloc((size_t)n * sizeof(*refs));
		durs = malloc((size_t)n * sizeof(*durs));
		k = malloc((size_t)n * sizeof(*k)); /* at most one kind per step */
		if (!refs || !durs || !k)
			rc = TFT_ENOMEM;
	}
	if (!rc && n) {
		for (uint32_t i = 0; i < n; i++)
			refs[i] = (struct step_ref){ tft_session_step(s, i)->name, i };
		qsort(refs, n, sizeof(*refs), cmp_step_ref);
		for (uint32_t i = 0; i < n; i++) {
			const struct tft_step *st = tft_session_step(s, refs[i].pos);

			if (!i || refs[i].name != refs[i - 1].name)
				k[nk++] = (struct file_kind){ .name = refs[i].name, .first = refs[i].pos, .lo = i };
			k[nk - 1].n++;
			k[nk - 1].traced += st->traced;
			k[nk - 1].sum_ns += st->dur_ns;
			durs[i] = st->dur_ns;
		}
		qsort(k, nk, sizeof(*k), cmp_kind_count);
	}
	tft_json_write_init_mem(&w);
	if (!rc) {
		tft_json_write_begin_object(&w);
		tft_json_write_key(&w, "live");
		tft_json_write_bool(&w, false);
		tft_json_write_key(&w, "steps");
		tft_json_write_uint(&w, n);
		tft_json_write_key(&w, "generation");
		tft_json_write_uint(&w, tft_pool_gen(&r->srv->pool));
		tft_json_write_key(&w, "evicted_kinds");
		tft_json_write_uint(&w, 0);
		tft_json_write_key(&w, "runs");
		tft_json_write_begin_array(&w);
		for (uint32_t j = 0; j < nk; j++) {
			const struct step_ref *kr = refs + k[j].lo;
			int64_t *kd = durs + k[j].lo, last = kd[k[j].n - 1];
			uint64_t skip = k[j].n > (uint64_t)recent ? k[j].n - (uint64_t)recent : 0;

			tft_json_write_begin_object(&w);
			/* the last `recent` steps of the kind, in file order; then the ranks */
			tft_json_write_key(&w, "recent");
			tft_json_write_begin_array(&w);
			for (uint64_t i = skip; i < k[j].n; i++) {
				const struct tft_step *st = tft_session_step(s, kr[i].pos);

				write_recent(&w, st->index, st->start_ns, st->dur_ns, st->traced);
			}
			tft_json_write_end_array(&w);
			qsort(kd, k[j].n, sizeof(int64_t), cmp_i64);
			write_run_stats(&w, tft_session_str(s, k[j].name, NULL), k[j].n, k[j].traced,
					(int64_t)(k[j].sum_ns / (__int128)k[j].n), kd[0], kd[k[j].n - 1],
					rank_of(kd, k[j].n, 0.5), rank_of(kd, k[j].n, 0.99), last);
			tft_json_write_end_object(&w);
		}
		tft_json_write_end_array(&w);
		tft_json_write_end_object(&w);
	}
	tft_pool_release(slot);
	free(k);
	free(refs);
	free(durs);
	if (rc) {
		tft_json_write_fini(&w);
		return tft_http_reply_error(r, 503, "out of memory");
	}
	return tft_http_reply_json(r, 200, &w);
}

int tft_api_runs(struct tft_http_req *r)
{
	struct tft_live *lv = tft_live_of(r);
	struct tft_json_writer w;
	int64_t recent;
	uint32_t order[KINDS_MAX];

	if (tft_query_get_i64(&r->query, "recent", 0, RECENT_MAX, RECENT_DEFAULT, &recent) != 0)
		return tft_http_reply_error(r, 400, "bad recent (0..1000)");
	if (!lv)
		return runs_from_file(r, recent);
	tft_json_write_init_mem(&w);
	pthread_mutex_lock(&lv->agg_lock);
	tft_json_write_begin_object(&w);
	tft_json_write_key(&w, "live");
	tft_json_write_bool(&w, true);
	tft_json_write_key(&w, "steps");
	tft_json_write_uint(&w, lv->total_steps);
	tft_json_write_key(&w, "generation");
	tft_json_write_uint(&w, tft_pool_gen(&r->srv->pool));
	tft_json_write_key(&w, "evicted_kinds");
	tft_json_write_uint(&w, lv->evicted_kinds);
	tft_json_write_key(&w, "runs");
	tft_json_write_begin_array(&w);
	for (uint32_t i = 0; i < lv->nkinds; i++)
		order[i] = i;
	/* By count, descending (insertion sort: at most 64 kinds). */
	for (uint32_t i = 1; i < lv->nkinds; i++) {
		uint32_t v = order[i], j = i;
		while (j > 0 && lv->kinds[order[j - 1]].count < lv->kinds[v].count) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = v;
	}
	for (uint32_t i = 0; i < lv->nkinds; i++) {
		const struct run_kind *k = &lv->kinds[order[i]];
		uint32_t m = k->rn < (uint32_t)recent ? k->rn : (uint32_t)recent;
		if (!k->count)
			continue;
		tft_json_write_begin_object(&w);
		write_run_stats(&w, k->name, k->count, k->traced, (int64_t)(k->sum_ns / k->count),
				k->min_ns, k->max_ns, hist_rank(k, 0.5), hist_rank(k, 0.99), k->last_ns);
		tft_json_write_key(&w, "recent");
		tft_json_write_begin_array(&w);
		for (uint32_t j = 0; j < m; j++) {
			const struct recent_ent *e =
				&k->recent[(k->rhead + RECENT_MAX - m + j) % RECENT_MAX];
			write_recent(&w, e->index, e->start_ns, e->dur_ns, e->traced);
		}
		tft_json_write_end_array(&w);
		tft_json_write_end_object(&w);
	}
	tft_json_write_end_array(&w);
	tft_json_write_end_object(&w);
	pthread_mutex_unlock(&lv->agg_lock);
	return tft_http_reply_json(r, 200, &w);
}
