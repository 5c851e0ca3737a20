/* SPDX-License-Identifier: MIT */
/*
 * GET /api/stats?by=name|category|track&track=ID[,ID...]&t0=NS&t1=NS&top=N:
 * op statistics, rows as `tftracer stats --json`. Whole-session requests on
 * zero or one track go to analyze/stats.c. Area selections (a time window,
 * or several tracks) are aggregated here with the same definitions (see
 * analyze/stats.h): slices overlapping [t0, t1] count with their full
 * duration; self = duration minus the union of direct children; on async
 * and object tracks self = duration; percentiles are nearest-rank.
 */
#include <stdlib.h>
#include <string.h>

#include "analyze/stats.h"
#include "core/model.h"
#include "core/strtab.h"
#include "server/routes.h"

#define STATS_MAX_TRACKS 4096
#define STATS_MAX_DEPTH 4096

/* One output row, whichever path computed it. */
struct row {
	uint32_t key;
	const char *name; /* borrowed from the session */
	uint32_t track_id;
	uint64_t count;
	int64_t total_ns, self_ns, min_ns, max_ns, p50_ns, p99_ns;
	double mean_ns, share;
};

/* a + b clamped to the int64 range (stored data is not trusted to stay in it). */
static int64_t sat_add(int64_t a, int64_t b)
{
	int64_t r;

	return __builtin_add_overflow(a, b, &r) ? (b > 0 ? INT64_MAX : INT64_MIN) : r;
}

/* ---- windowed / multi-track aggregation ----------------------------------- */

struct group {
	uint32_t key;
	uint64_t count;
	int64_t total, self, min, max;
};

struct sample {
	uint32_t group;
	int64_t dur;
};

/* An open slice at some depth, waiting for its children. */
struct open {
	bool used, counted;
	uint32_t group;
	int64_t ts, end, covered_to, self;
};

struct agg {
	int by;
	int64_t t0, t1;          /* the window */
	bool nesting;            /* depth is nesting on the current track */
	uint32_t track;
	struct group *groups;    /* owned */
	size_t ngroups, groups_cap;
	uint32_t *gmap;          /* owned: open addressing key -> group index + 1 */
	size_t gmap_cap;
	struct sample *samples;  /* owned: one per counted slice */
	size_t nsamples, samples_cap;
	struct open *stack;      /* owned: [depth] */
	size_t stack_cap;
	uint32_t top;            /* stack[0..top) may be used */
	int64_t ext0, ext1;      /* pass 1: extent of the slices overlapping the window */
	bool any;
	int status;
};

static bool grow(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t n = *cap ? *cap : 64;
	void *np;

	if (need <= *cap)
		return true;
	while (n < need)
		n *= 2;
	np = realloc(*p, n * elem);
	if (!np)
		return false;
	*p = np;
	*cap = n;
	return true;
}

static int group_of(struct agg *a, uint32_t key)
{
	size_t mask, i;

	if ((a->ngroups + 1) * 2 > a->gmap_cap) {
		size_t ncap = a->gmap_cap ? a->gmap_cap * 2 : 1024;
		uint32_t *nm = calloc(ncap, sizeof(*nm));
		if (!nm)
			return -1;
		for (size_t g = 0; g < a->ngroups; g++) {
			size_t j = (size_t)tft_hash_u64(a->groups[g].key) & (ncap - 1);
			while (nm[j])
				j = (j + 1) & (ncap - 1);
			nm[j] = (uint32_t)g + 1;
		}
		free(a->gmap);
		a->gmap = nm;
		a->gmap_cap = ncap;
	}
	mask = a->gmap_cap - 1;
	for (i = (size_t)tft_hash_u64(key) & mask; a->gmap[i]; i = (i + 1) & mask)
		if (a->groups[a->gmap[i] - 1].key == key)
			return (int)(a->gmap[i] - 1);
	if (!grow((void **)&a->groups, &a->groups_cap, a->ngroups + 1, sizeof(*a->groups)))
		return -1;
	a->groups[a->ngroups] = (struct group){ key, 0, 0, 0, INT64_MAX, INT64_MIN };
	a->gmap[i] = (uint32_t)a->ngroups + 1;
	return (int)a->ngroups++;
}

static void close_open(struct agg *a, struct open *o)
{
	if (!o->used)
		return;
	o->used = false;
	if (o->counted)
		a->groups[o->group].self += o->self;
}

static bool overlaps(const struct agg *a, int64_t ts, int64_t end)
{
	return ts <= a->t1 && end >= a->t0;
}

static int on_extent(void *ctx, const struct tft_event *ev)
{
	struct agg *a = ctx;
	int64_t end = sat_add(ev->ts_ns, ev->dur_ns > 0 ? ev->dur_ns : 0);

	if (ev->kind != TFT_EV_SLICE || (ev->flags & TFT_EVF_SUMMARY) || !overlaps(a, ev->ts_ns, end))
		return 0;
	if (!a->any || ev->ts_ns < a->ext0)
		a->ext0 = ev->ts_ns;
	if (!a->any || end > a->ext1)
		a->ext1 = end;
	a->any = true;
	return 0;
}

static int on_slice(void *ctx, const struct tft_event *ev)
{
	struct agg *a = ctx;
	int64_t dur = ev->dur_ns > 0 ? ev->dur_ns : 0, end = sat_add(ev->ts_ns, dur);
	uint32_t d = a->nesting ? ev->depth : 0;
	bool counted;
	struct open *o;

	if (ev->kind != TFT_EV_SLICE || (ev->flags & TFT_EVF_SUMMARY))
		return 0;
	if (d >= STATS_MAX_DEPTH)
		d = STATS_MAX_DEPTH - 1;
	if (!grow((void **)&a->stack, &a->stack_cap, (size_t)d + 1, sizeof(*a->stack)))
		goto oom;
	while (a->top <= d)
		a->stack[a->top++].used = false;
	/* Close this depth and everything deeper: those slices have no more children. */
	for (uint32_t k = a->top; k-- > d;)
		close_open(a, &a->stack[k]);
	a->top = d + 1;
	/* Subtract from the parent's self time the part of us it did not already lose. */
	if (a->nesting && d > 0 && a->stack[d - 1].used && ev->ts_ns < a->stack[d - 1].end) {
		struct open *p = &a->stack[d - 1];
		int64_t s0 = ev->ts_ns > p->covered_to ? ev->ts_ns : p->covered_to;
		int64_t s1 = end < p->end ? end : p->end;
		if (s1 > s0) {
			p->self -= s1 - s0;
			p->covered_to = s1;
		}
	}
	counted = overlaps(a, ev->ts_ns, end);
	o = &a->stack[d];
	*o = (struct open){ .used = a->nesting, .counted = counted, .ts = ev->ts_ns, .end = end,
			    .covered_to = ev->ts_ns, .self = dur };
	if (!counted)
		return 0;
	{
		uint32_t key = a->by == TFT_STATS_BY_CATEGORY ? ev->cat
			       : a->by == TFT_STATS_BY_TRACK  ? ev->track
							      : ev->name;
		int g = group_of(a, key);
		struct group *gr;
		if (g < 0)
			goto oom;
		gr = &a->groups[g];
		o->group = (uint32_t)g;
		gr->count++;
		gr->total = sat_add(gr->total, dur);
		if (!a->nesting)
			gr->self = sat_add(gr->self, dur);
		if (dur < gr->min)
			gr->min = dur;
		if (dur > gr->max)
			gr->max = dur;
		if (!grow((void **)&a->samples, &a->samples_cap, a->nsamples + 1, sizeof(*a->samples)))
			goto oom;
		a->samples[a->nsamples++] = (struct sample){ (uint32_t)g, dur };
	}
	return 0;
oom:
	a->status = TFT_ENOMEM;
	return TFT_ENOMEM;
}

static int cmp_sample(const void *x, const void *y)
{
	const struct sample *a = x, *b = y;

	if (a->group != b->group)
		return a->group < b->group ? -1 : 1;
	return a->dur < b->dur ? -1 : a->dur > b->dur;
}

static int64_t nearest_rank(const struct sample *v, size_t n, unsigned p)
{
	size_t k = (size_t)(((uint64_t)p * n + 99) / 100);

	if (k == 0)
		k = 1;
	return v[k - 1].dur;
}

static int aggregate(struct tft_session *s, int by, const uint32_t *tracks, size_t ntracks,
		     int64_t t0, int64_t t1, struct row **rows_out, size_t *nrows_out,
		     struct tft_error *err)
{
	struct agg a;
	struct row *rows = NULL;
	int rc = 0;

	memset(&a, 0, sizeof(a));
	a.by = by;
	a.t0 = t0;
	a.t1 = t1;
	for (size_t i = 0; i < ntracks && rc == 0; i++) {
		const struct tft_track *tr = tft_session_track(s, tracks[i]);
		if (!tr || tr->kind == TFT_TRACK_COUNTER || tr->slices == 0)
			continue;
		a.track = tracks[i];
		a.nesting = tr->kind == TFT_TRACK_THREAD || tr->kind == TFT_TRACK_DEVICE ||
			    tr->kind == TFT_TRACK_GPU_STREAM || tr->kind == TFT_TRACK_COMM;
		/* Pass 1: the extent of the counted slices, so pass 2 sees all their children. */
		a.any = false;
		rc = tft_session_scan(s, tracks[i], t0, t1, 0, on_extent, &a, err);
		if (rc < 0 || !a.any)
			continue;
		a.top = 0;
		rc = tft_session_scan(s, tracks[i], a.ext0, a.ext1, 0, on_slice, &a, err);
		for (uint32_t k = a.top; k-- > 0;)
			close_open(&a, &a.stack[k]);
		a.top = 0;
		if (a.status)
			rc = a.status;
	}
	if (rc == 0 && a.ngroups) {
		size_t j = 0;
		rows = calloc(a.ngroups, sizeof(*rows));
		if (!rows)
			rc = TFT_ENOMEM;
		else if (a.nsamples > 1)
			qsort(a.samples, a.nsamples, sizeof(*a.samples), cmp_sample);
		for (size_t g = 0; rows && g < a.ngroups; g++) {
			const struct group *gr = &a.groups[g];
			size_t k = j;
			struct row *rw = &rows[g];
			while (k < a.nsamples && a.samples[k].group == g)
				k++;
			rw->key = gr->key;
			rw->track_id = by == TFT_STATS_BY_TRACK ? gr->key : TFT_NONE;
			if (by == TFT_STATS_BY_TRACK) {
				const struct tft_track *tr = tft_session_track(s, gr->key);
				rw->name = tft_session_str(s, tr ? tr->name : 0, NULL);
			} else {
				rw->name = tft_session_str(s, gr->key, NULL);
			}
			rw->count = gr->count;
			rw->total_ns = gr->total;
			rw->self_ns = gr->self;
			rw->min_ns = gr->min;
			rw->max_ns = gr->max;
			rw->mean_ns = gr->count ? (double)gr->total / (double)gr->count : 0;
			rw->p50_ns = k > j ? nearest_rank(a.samples + j, k - j, 50) : 0;
			rw->p99_ns = k > j ? nearest_rank(a.samples + j, k - j, 99) : 0;
			j = k;
		}
	}
	free(a.groups);
	free(a.gmap);
	free(a.samples);
	free(a.stack);
	if (rc != 0) {
		free(rows);
		if (rc == TFT_ENOMEM)
			tft_error_set(err, rc, -1, "out of memory");
		return rc;
	}
	*rows_out = rows;
	*nrows_out = rows ? a.ngroups : 0;
	return 0;
}

/* ---- whole-session path (analyze/stats.c) ---------------------------------- */

static int compute(struct tft_session *s, int by, uint32_t track, struct row **rows_out,
		   size_t *nrows_out, struct tft_error *err)
{
	struct tft_stats_opts opts = { .group_by = by, .track = track, .process = NULL };
	struct tft_stats_result *res = NULL;
	struct row *rows;
	int rc = tft_stats_compute(s, &opts, &res, err);

	if (rc != 0)
		return rc;
	rows = calloc(res->nrows ? res->nrows : 1, sizeof(*rows));
	if (!rows) {
		tft_stats_destroy(res);
		return tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
	}
	for (size_t i = 0; i < res->nrows; i++) {
		const struct tft_stats_row *sr = &res->rows[i];
		rows[i] = (struct row){ .key = sr->key, .name = sr->name, .track_id = sr->track_id,
					.count = sr->count, .total_ns = sr->total_ns,
					.self_ns = sr->self_ns, .min_ns = sr->min_ns,
					.max_ns = sr->max_ns, .p50_ns = sr->p50_ns,
					.p99_ns = sr->p99_ns, .mean_ns = sr->mean_ns };
	}
	*rows_out = rows;
	*nrows_out = res->nrows;
	tft_stats_destroy(res); /* row names are borrowed from the session, not the result */
	return 0;
}

static int cmp_row(const void *x, const void *y)
{
	const struct row *a = x, *b = y;

	if (a->total_ns != b->total_ns)
		return a->total_ns > b->total_ns ? -1 : 1;
	return strcmp(a->name ? a->name : "", b->name ? b->name : "");
}

int tft_api_stats(struct tft_http_req *r)
{
	static const char *const by_names[] = { "name", "category", "track" };
	struct tft_pool_slot *slot;
	struct tft_json_writer w;
	struct tft_error err;
	struct row *rows = NULL;
	size_t nrows = 0, ntracks = 0, list_len, by_len;
	uint32_t *tracks = NULL;
	int64_t t0, t1, top;
	int by = TFT_STATS_BY_NAME, rc;
	int64_t sum = 0;
	uint64_t slices = 0;
	const char *list = tft_query_get(&r->query, "track", &list_len);
	const char *bys = tft_query_get(&r->query, "by", &by_len);
	bool window = tft_query_get(&r->query, "t0", NULL) || tft_query_get(&r->query, "t1", NULL);

	if (bys) {
		by = -1;
		for (int i = 0; i < 3; i++)
			if (strlen(by_names[i]) == by_len && memcmp(bys, by_names[i], by_len) == 0)
				by = i;
		if (by < 0)
			return tft_http_reply_error(r, 400, "by must be name, category or track");
	}
	if (tft_query_get_i64(&r->query, "t0", INT64_MIN, INT64_MAX, INT64_MIN, &t0) != 0 ||
	    tft_query_get_i64(&r->query, "t1", INT64_MIN, INT64_MAX, INT64_MAX, &t1) != 0 || t1 < t0)
		return tft_http_reply_error(r, 400, "t0 and t1 must be integer nanoseconds, t0 <= t1");
	if (tft_query_get_i64(&r->query, "top", 0, 1000000, 0, &top) != 0)
		return tft_http_reply_error(r, 400, "top must be an integer in 0..1000000");

	tft_error_clear(&err);
	slot = tft_pool_acquire(&r->srv->pool, &err);
	if (!slot)
		return tft_http_reply_status(r, err.code ? err.code : TFT_EIO, &err);
	if (list && list_len) {
		tracks = malloc(STATS_MAX_TRACKS * sizeof(*tracks));
		rc = tracks ? tft_query_parse_u32_list(list, list_len, tft_session_track_count(slot->sess),
						       tracks, STATS_MAX_TRACKS)
			    : TFT_ENOMEM;
		if (rc < 0) {
			tft_pool_release(slot);
			free(tracks);
			if (rc == TFT_ENOMEM)
				return tft_http_reply_error(r, 503, "out of memory");
			return tft_http_reply_error(r, 400, "track must be a comma-separated list of track ids");
		}
		ntracks = (size_t)rc;
	}
	if (!window && ntracks <= 1) {
		rc = compute(slot->sess, by, ntracks ? tracks[0] : TFT_NONE, &rows, &nrows, &err);
	} else {
		if (!ntracks) {
			uint32_t nt = tft_session_track_count(slot->sess);
			uint32_t *all = malloc((nt ? nt : 1) * sizeof(*all));
			if (!all) {
				rc = TFT_ENOMEM;
				goto reply;
			}
			for (uint32_t i = 0; i < nt; i++)
				all[i] = i;
			free(tracks);
			tracks = all;
			ntracks = nt;
		}
		rc = aggregate(slot->sess, by, tracks, ntracks, t0, t1, &rows, &nrows, &err);
	}
reply:
	tft_json_write_init_mem(&w);
	if (rc == 0) {
		size_t n;
		if (nrows > 1)
			qsort(rows, nrows, sizeof(*rows), cmp_row);
		for (size_t i = 0; i < nrows; i++) {
			sum += rows[i].total_ns;
			slices += rows[i].count;
		}
		n = top > 0 && (size_t)top < nrows ? (size_t)top : nrows;
		tft_json_write_begin_object(&w);
		tft_json_write_key(&w, "group_by");
		tft_json_write_cstr(&w, by_names[by]);
		tft_json_write_key(&w, "slices");
		tft_json_write_uint(&w, slices);
		tft_json_write_key(&w, "total_ns");
		tft_json_write_int(&w, sum);
		tft_json_write_key(&w, "groups");
		tft_json_write_uint(&w, nrows);
		tft_json_write_key(&w, "rows");
		tft_json_write_begin_array(&w);
		for (size_t i = 0; i < n; i++) {
			const struct row *rw = &rows[i];
			tft_json_write_begin_object(&w);
			tft_json_write_key(&w, "name");
			tft_json_write_cstr(&w, rw->name ? rw->name : "");
			if (by == TFT_STATS_BY_TRACK) {
				tft_json_write_key(&w, "track_id");
				tft_json_write_uint(&w, rw->track_id);
			}
			tft_json_write_key(&w, "count");
			tft_json_write_uint(&w, rw->count);
			tft_json_write_key(&w, "total_ns");
			tft_json_write_int(&w, rw->total_ns);
			tft_json_write_key(&w, "self_ns");
			tft_json_write_int(&w, rw->self_ns);
			tft_json_write_key(&w, "mean_ns");
			tft_json_write_double(&w, rw->mean_ns);
			tft_json_write_key(&w, "min_ns");
			tft_json_write_int(&w, rw->min_ns);
			tft_json_write_key(&w, "max_ns");
			tft_json_write_int(&w, rw->max_ns);
			tft_json_write_key(&w, "p50_ns");
			tft_json_write_int(&w, rw->p50_ns);
			tft_json_write_key(&w, "p99_ns");
			tft_json_write_int(&w, rw->p99_ns);
			tft_json_write_key(&w, "share");
			tft_json_write_double(&w, sum > 0 ? 100.0 * (double)rw->total_ns / (double)sum : 0.0);
			tft_json_write_end_object(&w);
		}
		tft_json_write_end_array(&w);
		tft_json_write_end_object(&w);
	}
	tft_pool_release(slot);
	free(rows);
	free(tracks);
	if (rc != 0) {
		tft_json_write_fini(&w);
		return tft_http_reply_status(r, rc, &err);
	}
	return tft_http_reply_json(r, 200, &w);
}
