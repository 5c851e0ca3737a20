/* SPDX-License-Identifier: MIT */
/*
 * Op statistics: one pass over every selected track in start order, a
 * per-track stack of open slices for self time, per-group duration vectors
 * for exact percentiles (quickselect).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/stats.h"
#include "core/strtab.h"

struct group {
	uint32_t key;
	uint64_t count;
	int64_t total_ns, self_ns, min_ns, max_ns;
	int64_t *durs; /* owned; count entries */
	size_t cap;
};

/* An open slice on the current track. */
struct frame {
	int64_t start_ns, end_ns;
	int64_t covered_ns;  /* union of direct children so far */
	int64_t last_end_ns; /* end of that union (children come in start order) */
	uint32_t depth;
	uint32_t group;
};

struct agg {
	int group_by;
	bool nested;          /* the current track nests slices by depth */
	int status;
	struct group *groups; /* owned */
	size_t ngroups, cap_groups;
	uint32_t *slots;      /* owned; open addressing: group index + 1, 0 = empty */
	uint32_t mask;
	uint32_t last_key, last_group; /* one-entry cache in front of the table */
	struct frame *stack;  /* owned */
	size_t sp, cap_stack;
};

static int64_t sat_add(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

static int grow_slots(struct agg *a)
{
	uint32_t ncap = a->mask ? (a->mask + 1) * 2 : 1024;
	uint32_t *ns = calloc(ncap, sizeof(*ns));

	if (!ns)
		return TFT_ENOMEM;
	for (size_t i = 0; i < a->ngroups; i++) {
		uint32_t h = (uint32_t)tft_hash_u64(a->groups[i].key) & (ncap - 1);
		while (ns[h])
			h = (h + 1) & (ncap - 1);
		ns[h] = (uint32_t)i + 1;
	}
	free(a->slots);
	a->slots = ns;
	a->mask = ncap - 1;
	return 0;
}

/* Group index for key, creating the group; -1 on out-of-memory. */
static int64_t find_group(struct agg *a, uint32_t key)
{
	uint32_t h, gi;

	if (a->ngroups && a->last_key == key)
		return a->last_group;
	if (!a->slots || (a->ngroups + 1) * 2 > (size_t)a->mask + 1) {
		if (grow_slots(a))
			return -1;
	}
	h = (uint32_t)tft_hash_u64(key) & a->mask;
	while ((gi = a->slots[h]) != 0) {
		if (a->groups[gi - 1].key == key)
			goto found;
		h = (h + 1) & a->mask;
	}
	if (a->ngroups == a->cap_groups) {
		size_t ncap = a->cap_groups ? a->cap_groups * 2 : 64;
		struct group *ng = realloc(a->groups, ncap * sizeof(*ng));
		if (!ng)
			return -1;
		a->groups = ng;
		a->cap_groups = ncap;
	}
	memset(&a->groups[a->ngroups], 0, sizeof(a->groups[0]));
	a->groups[a->ngroups].key = key;
	a->groups[a->ngroups].min_ns = INT64_MAX;
	a->groups[a->ngroups].max_ns = INT64_MIN;
	a->ngroups++;
	gi = (uint32_t)a->ngroups;
	a->slots[h] = gi;
found:
	a->last_key = key;
	a->last_group = gi - 1;
	return gi - 1;
}

static void pop_frame(struct agg *a)
{
	struct frame *f = &a->stack[--a->sp];
	int64_t self = (f->end_ns - f->start_ns) - f->covered_ns;

	a->groups[f->group].self_ns = sat_add(a->groups[f->group].self_ns, self < 0 ? 0 : self);
}

static int push_dur(struct group *g, int64_t dur)
{
	if (g->count == g->cap) {
		size_t ncap = g->cap ? g->cap * 2 : 16;
		int64_t *nd = realloc(g->durs, ncap * sizeof(*nd));
		if (!nd)
			return TFT_ENOMEM;
		g->durs = nd;
		g->cap = ncap;
	}
	g->durs[g->count++] = dur;
	return 0;
}

static int on_event(void *ctx, const struct tft_event *ev)
{
	struct agg *a = ctx;
	struct group *g;
	int64_t gi, dur, end;
	uint32_t key;

	if (ev->kind != TFT_EV_SLICE || (ev->flags & TFT_EVF_SUMMARY))
		return 0;
	key = a->group_by == TFT_STATS_BY_NAME ? ev->name
	      : a->group_by == TFT_STATS_BY_CATEGORY ? ev->cat : ev->track;
	gi = find_group(a, key);
	if (gi < 0)
		return a->status = TFT_ENOMEM;
	g = &a->groups[gi];
	dur = ev->dur_ns < 0 ? 0 : ev->dur_ns;
	if (push_dur(g, dur))
		return a->status = TFT_ENOMEM;
	g->total_ns = sat_add(g->total_ns, dur);
	if (dur < g->min_ns)
		g->min_ns = dur;
	if (dur > g->max_ns)
		g->max_ns = dur;
	if (!a->nested) {
		g->self_ns = sat_add(g->self_ns, dur);
		return 0;
	}

	end = sat_add(ev->ts_ns, dur);
	while (a->sp && a->stack[a->sp - 1].depth >= ev->depth)
		pop_frame(a);
	if (a->sp) {
		/* The nearest open ancestor: add our clipped interval to its union. */
		struct frame *p = &a->stack[a->sp - 1];
		int64_t s0 = ev->ts_ns > p->last_end_ns ? ev->ts_ns : p->last_end_ns;
		int64_t e0 = end < p->end_ns ? end : p->end_ns;
		if (s0 < p->start_ns)
			s0 = p->start_ns;
		if (e0 > s0) {
			p->covered_ns += e0 - s0;
			p->last_end_ns = e0;
		}
	}
	if (a->sp == a->cap_stack) {
		size_t ncap = a->cap_stack ? a->cap_stack * 2 : 64;
		struct frame *nf = realloc(a->stack, ncap * sizeof(*nf));
		if (!nf)
			return a->status = TFT_ENOMEM;
		a->stack = nf;
		a->cap_stack = ncap;
	}
	a->stack[a->sp++] = (struct frame){
		.start_ns = ev->ts_ns,
		.end_ns = end,
		.covered_ns = 0,
		.last_end_ns = ev->ts_ns,
		.depth = ev->depth,
		.group = (uint32_t)gi,
	};
	return 0;
}

/* ---- percentiles ------------------------------------------------------- */

static void swap64(int64_t *a, int64_t *b)
{
	int64_t t = *a;
	*a = *b;
	*b = t;
}

/* Place the k-th smallest of v[lo..hi] at v[k]; smaller left, larger right. */
static void select_kth(int64_t *v, size_t lo, size_t hi, size_t k)
{
	while (hi > lo) {
		if (hi - lo < 16) { /* insertion sort for short ranges */
			for (size_t i = lo + 1; i <= hi; i++) {
				int64_t x = v[i];
				size_t j = i;
				while (j > lo && v[j - 1] > x) {
					v[j] = v[j - 1];
					j--;
				}
				v[j] = x;
			}
			return;
		}
		/* Median of three as the pivot, then Hoare partition. */
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid] < v[lo])
			swap64(&v[mid], &v[lo]);
		if (v[hi] < v[lo])
			swap64(&v[hi], &v[lo]);
		if (v[hi] < v[mid])
			swap64(&v[hi], &v[mid]);
		int64_t pivot = v[mid];
		size_t i = lo, j = hi;
		for (;;) {
			while (v[i] < pivot)
				i++;
			while (v[j] > pivot)
				j--;
			if (i >= j)
				break;
			swap64(&v[i], &v[j]);
			i++;
			j--;
		}
		/* v[lo..j] <= pivot <= v[j+1..hi] */
		if (k <= j)
			hi = j;
		else
			lo = j + 1;
	}
}

static size_t rank_index(size_t n, unsigned p)
{
	uint64_t rank = ((uint64_t)p * n + 99) / 100; /* ceil(p/100 * n) */

	if (rank == 0)
		rank = 1;
	if (rank > n)
		rank = n;
	return (size_t)rank - 1;
}

int64_t tft_stats_percentile(int64_t *v, size_t n, unsigned p)
{
	size_t k;

	if (n == 0)
		return 0;
	k = rank_index(n, p > 100 ? 100 : p);
	select_kth(v, 0, n - 1, k);
	return v[k];
}

/* ---- result ------------------------------------------------------------ */

static int cmp_rows(const void *pa, const void *pb)
{
	const struct tft_stats_row *a = pa, *b = pb;
	int c;

	if (a->total_ns != b->total_ns)
		return a->total_ns > b->total_ns ? -1 : 1;
	c = strcmp(a->name, b->name);
	if (c)
		return c;
	return a->key < b->key ? -1 : a->key > b->key;
}

static bool process_matches(const struct tft_session *s, uint32_t pid, const char *want)
{
	const struct tft_process *p = tft_session_process(s, pid);
	char buf[24];

	if (!p)
		return false;
	if (strcmp(tft_session_str(s, p->name, NULL), want) == 0)
		return true;
	snprintf(buf, sizeof(buf), "%lld", (long long)p->pid);
	return strcmp(buf, want) == 0;
}

static void agg_free(struct agg *a)
{
	for (size_t i = 0; i < a->ngroups; i++)
		free(a->groups[i].durs);
	free(a->groups);
	free(a->slots);
	free(a->stack);
}

int tft_stats_compute(struct tft_session *s, const struct tft_stats_opts *opts,
		      struct tft_stats_result **out, struct tft_error *err)
{
	struct agg a = { 0 };
	struct tft_stats_result *r = NULL;
	uint32_t ntracks = tft_session_track_count(s);
	uint32_t only = opts ? opts->track : TFT_NONE;
	const char *proc = opts ? opts->process : NULL;
	int rc = 0;

	*out = NULL;
	a.group_by = opts ? opts->group_by : TFT_STATS_BY_NAME;
	if (a.group_by < TFT_STATS_BY_NAME || a.group_by > TFT_STATS_BY_TRACK)
		return tft_error_set(err, TFT_EINVAL, -1, "unknown grouping %d", a.group_by);
	if (only != TFT_NONE && !tft_session_track(s, only))
		return tft_error_set(err, TFT_EINVAL, -1, "no track with id %u", only);
	r = calloc(1, sizeof(*r));
	if (!r)
		return tft_error_set(err, TFT_ENOMEM, -1, "out of memory");

	for (uint32_t t = 0; t < ntracks; t++) {
		const struct tft_track *tr = tft_session_track(s, t);

		if (!tr || (only != TFT_NONE && t != only))
			continue;
		if (proc && !process_matches(s, tr->process, proc))
			continue;
		/* Counter tracks and tracks whose stored stats show no slices. */
		if (tr->kind == TFT_TRACK_COUNTER ||
		    (tr->slices == 0 && tr->instants + tr->counters > 0))
			continue;
		a.nested = tr->kind != TFT_TRACK_ASYNC && tr->kind != TFT_TRACK_OBJECT;
		a.sp = 0;
		r->tracks++;
		rc = tft_session_scan(s, t, INT64_MIN, INT64_MAX, 0, on_event, &a, err);
		if (a.status) {
			rc = tft_error_set(err, a.status, -1, "out of memory aggregating slices");
			goto fail;
		}
		if (rc) {
			rc = rc < 0 ? rc : TFT_EIO;
			goto fail;
		}
		while (a.sp)
			pop_frame(&a);
	}

	r->rows = calloc(a.ngroups ? a.ngroups : 1, sizeof(*r->rows));
	if (!r->rows) {
		rc = tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
		goto fail;
	}
	r->nrows = a.ngroups;
	for (size_t i = 0; i < a.ngroups; i++) {
		struct group *g = &a.groups[i];
		struct tft_stats_row *row = &r->rows[i];
		size_t k50 = rank_index(g->count, 50), k99 = rank_index(g->count, 99);

		row->key = g->key;
		if (a.group_by == TFT_STATS_BY_TRACK) {
			const struct tft_track *tr = tft_session_track(s, g->key);
			row->track_id = g->key;
			row->name = tft_session_str(s, tr ? tr->name : 0, NULL);
		} else {
			row->track_id = TFT_NONE;
			row->name = tft_session_str(s, g->key, NULL);
		}
		row->count = g->count;
		row->total_ns = g->total_ns;
		row->self_ns = g->self_ns;
		row->min_ns = g->min_ns;
		row->max_ns = g->max_ns;
		row->mean_ns = (double)g->total_ns / (double)g->count;
		/* p99 is searched only right of p50: select_kth left it partitioned. */
		select_kth(g->durs, 0, g->count - 1, k50);
		row->p50_ns = g->durs[k50];
		select_kth(g->durs, k50, g->count - 1, k99);
		row->p99_ns = g->durs[k99];
		r->slices += g->count;
		r->total_ns = sat_add(r->total_ns, g->total_ns);
	}
	for (size_t i = 0; i < r->nrows; i++)
		r->rows[i].share = r->total_ns > 0
			? 100.0 * (double)r->rows[i].total_ns / (double)r->total_ns : 0.0;
	qsort(r->rows, r->nrows, sizeof(*r->rows), cmp_rows);
	agg_free(&a);
	*out = r;
	return 0;

fail:
	agg_free(&a);
	tft_stats_destroy(r);
	return rc;
}

void tft_stats_destroy(struct tft_stats_result *r)
{
	if (!r)
		return;
	free(r->rows);
	free(r);
}

int tft_stats_group_parse(const char *s)
{
	if (strcmp(s, "name") == 0)
		return TFT_STATS_BY_NAME;
	if (strcmp(s, "category") == 0 || strcmp(s, "cat") == 0)
		return TFT_STATS_BY_CATEGORY;
	if (strcmp(s, "track") == 0)
		return TFT_STATS_BY_TRACK;
	return -1;
}

const char *tft_stats_format_ns(char *out, size_t size, int64_t ns)
{
	uint64_t u = ns < 0 ? 0 - (uint64_t)ns : (uint64_t)ns;
	const char *sign = ns < 0 ? "-" : "";

	/* Integer arithmetic throughout: exact, and no rounding up to "1000.000 µs". */
	if (u < 1000ULL)
		snprintf(out, size, "%s%llu ns", sign, (unsigned long long)u);
	else if (u < 1000000ULL)
		snprintf(out, size, "%s%llu.%03llu \xC2\xB5s", sign, (unsigned long long)(u / 1000),
			 (unsigned long long)(u % 1000));
	else if (u < 1000000000ULL)
		snprintf(out, size, "%s%llu.%03llu ms", sign, (unsigned long long)(u / 1000000),
			 (unsigned long long)(u / 1000 % 1000));
	else
		snprintf(out, size, "%s%llu.%03llu s", sign, (unsigned long long)(u / 1000000000),
			 (unsigned long long)(u / 1000000 % 1000));
	return out;
}
