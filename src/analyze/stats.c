/* SPDX-License-Identifier: MIT */
/*
 * Op statistics. A large selection merges the statistics stored with each
 * chunk (analyze/stats_stored.c, store/chunk_stats.h) and decodes only the
 * chunks at a window's edges; a small one (or a session without them) is
 * one pass over every selected track in start order: a per-track stack of
 * open slices for self time, per-group duration vectors for exact
 * percentiles (quickselect). Area selections (a time window, or several
 * tracks: the web UI's) scan only the slices around the window, and with
 * clip count only the time inside it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/stats_int.h"
#include "core/grow.h"
#include "core/hmap.h"
#include "core/strtab.h"

/* An open slice on the current track. */
struct frame {
	int64_t start_ns, end_ns;
	int64_t covered_ns;  /* its direct children's time so far, each clipped to it */
	uint32_t depth;
	uint32_t group;
};

int64_t tft_stats_sat_add(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

#define sat_add tft_stats_sat_add

/*
 * Group index for key, creating the group; -1 on out-of-memory. Forced
 * inline: it runs once per slice, and with two callers gcc keeps it out of
 * line, which cost the whole-session scan 2% more instructions.
 */
static inline __attribute__((always_inline)) int64_t find_group(struct agg *a, uint32_t key)
{
	uint32_t h, gi;
	uint64_t k = key;

	if (a->ngroups && a->last_key == key)
		return a->last_group;
	h = (uint32_t)tft_hash_u64(key);
	gi = tft_hmap_get1(&a->map, k, h);
	if (gi != TFT_HMAP_EMPTY)
		goto found;
	if (!a->map.stride) /* (an agg starts zeroed) */
		tft_hmap_init(&a->map, 1);
	if (tft_grow_size_ex((void **)&a->groups, &a->cap_groups, a->ngroups + 1, sizeof(*a->groups), 64, 0))
		return -1;
	gi = (uint32_t)a->ngroups;
	if (tft_hmap_put(&a->map, &k, h, gi))
		return -1;
	memset(&a->groups[a->ngroups], 0, sizeof(a->groups[0]));
	a->groups[a->ngroups].key = key;
	a->groups[a->ngroups].min_ns = INT64_MAX;
	a->groups[a->ngroups].max_ns = INT64_MIN;
	a->groups[a->ngroups].exact_max = a->exact_max ? a->exact_max : TFT_STATS_EXACT_MAX;
	a->ngroups++;
found:
	a->last_key = key;
	a->last_group = gi;
	return gi;
}

static void pop_frame(struct agg *a)
{
	struct frame *f = &a->stack[--a->sp];
	int64_t self = (f->end_ns - f->start_ns) - f->covered_ns;

	if (f->group != UINT32_MAX) /* (a slice no group counts: a parent only) */
		a->groups[f->group].self_ns = sat_add(a->groups[f->group].self_ns, self < 0 ? 0 : self);
}

int64_t tft_stats_group(struct agg *a, uint32_t key)
{
	return find_group(a, key);
}

/* ---- a group's distribution: exact durations, then buckets ---------------------- */

/*
 * Count n durations of bucket b: the counts are a dense window of the
 * buckets the group has seen (a few thousand at most: its durations' range
 * of octaves times 128), grown to take b.
 */
static int add_bucket(struct group *g, uint32_t b, uint64_t n)
{
	if (tft_unlikely(b < g->hlo || b >= g->hlo + g->hn)) {
		uint32_t lo = g->hn ? (b < g->hlo ? b : g->hlo) : b;
		uint32_t hi = g->hn ? (b >= g->hlo + g->hn ? b + 1 : g->hlo + g->hn) : b + 1;
		uint64_t *nh;
		/* room for an octave either side, within the bucket range */
		lo = lo > TFT_HIST_SUB ? lo - TFT_HIST_SUB : 0;
		hi = hi + TFT_HIST_SUB < TFT_HIST_BUCKETS ? hi + TFT_HIST_SUB : TFT_HIST_BUCKETS;
		nh = calloc(hi - lo, sizeof(*nh));
		if (!nh)
			return TFT_ENOMEM;
		if (g->hn)
			memcpy(nh + (g->hlo - lo), g->hist, (size_t)g->hn * sizeof(*nh));
		free(g->hist);
		g->hist = nh;
		g->hlo = lo;
		g->hn = hi - lo;
	}
	g->hist[b - g->hlo] += n;
	return 0;
}

/* From exact durations to buckets (a stored histogram arrived, or too many). */
static int to_buckets(struct group *g)
{
	size_t n = g->count;

	g->approx = true;
	for (size_t i = 0; i < n && g->durs; i++)
		if (add_bucket(g, tft_hist_bucket(g->durs[i]), 1))
			return TFT_ENOMEM;
	free(g->durs);
	g->durs = NULL;
	g->cap = 0;
	return 0;
}

/* (g->count is already counted by the caller.) */
static inline int push_dur(struct group *g, int64_t dur)
{
	size_t i = g->count - 1; /* this duration's place among the exact ones */

	if (tft_unlikely(g->approx))
		return add_bucket(g, tft_hist_bucket(dur), 1);
	if (i == g->cap) {
		if (i >= g->exact_max) {
			g->count--; /* to_buckets() takes the durations so far */
			if (to_buckets(g))
				return TFT_ENOMEM;
			g->count++;
			return add_bucket(g, tft_hist_bucket(dur), 1);
		}
		if (tft_grow_size((void **)&g->durs, &g->cap, i + 1, sizeof(*g->durs)))
			return TFT_ENOMEM;
	}
	g->durs[i] = dur;
	return 0;
}

int tft_stats_group_dur(struct group *g, int64_t dur)
{
	return push_dur(g, dur);
}

int tft_stats_group_bucket(struct group *g, uint32_t bucket, uint64_t count)
{
	if (!g->approx) {
		size_t have = g->count - count; /* the exact durations before these */
		g->count = have;
		int rc = to_buckets(g);
		g->count = have + count;
		if (rc)
			return rc;
	}
	return add_bucket(g, bucket, count);
}

int tft_stats_agg_merge(struct agg *dst, const struct agg *src)
{
	for (size_t i = 0; i < src->ngroups; i++) {
		const struct group *sg = &src->groups[i];
		int64_t gi = find_group(dst, sg->key);
		struct group *g;
		if (gi < 0)
			return TFT_ENOMEM;
		g = &dst->groups[gi];
		g->total_ns = sat_add(g->total_ns, sg->total_ns);
		g->self_ns = sat_add(g->self_ns, sg->self_ns);
		if (sg->min_ns < g->min_ns)
			g->min_ns = sg->min_ns;
		if (sg->max_ns > g->max_ns)
			g->max_ns = sg->max_ns;
		if (!sg->approx) {
			for (size_t k = 0; k < sg->count; k++) {
				g->count++;
				if (push_dur(g, sg->durs[k]))
					return TFT_ENOMEM;
			}
		} else {
			for (uint32_t k = 0; k < sg->hn; k++) {
				if (!sg->hist[k])
					continue;
				g->count += sg->hist[k];
				if (tft_stats_group_bucket(g, sg->hlo + k, sg->hist[k]))
					return TFT_ENOMEM;
			}
		}
	}
	return 0;
}

/* The group of a slice: false when it counts in none (device groupings, stats_device.c). */
static inline bool group_key(struct agg *a, const struct tft_event *ev, uint32_t *key)
{
	switch (a->group_by) {
	case TFT_STATS_BY_NAME: *key = ev->name; return true;
	case TFT_STATS_BY_CATEGORY: *key = ev->cat; return true;
	case TFT_STATS_BY_TRACK: *key = ev->track; return true;
	default: return tft_stats_device_key(a, ev, key);
	}
}

static int on_event(void *ctx, const struct tft_event *ev)
{
	struct agg *a = ctx;
	struct group *g = NULL;
	int64_t gi = -1, dur, end;
	uint32_t key;

	if (ev->kind != TFT_EV_SLICE || (ev->flags & TFT_EVF_SUMMARY))
		return 0;
	dur = ev->dur_ns < 0 ? 0 : ev->dur_ns;
	if (group_key(a, ev, &key)) {
		gi = find_group(a, key);
		if (gi < 0)
			return a->status = TFT_ENOMEM;
		g = &a->groups[gi];
		g->count++;
		if (push_dur(g, dur))
			return a->status = TFT_ENOMEM;
		g->total_ns = sat_add(g->total_ns, dur);
		if (dur < g->min_ns)
			g->min_ns = dur;
		if (dur > g->max_ns)
			g->max_ns = dur;
		if (a->group_by > TFT_STATS_BY_TRACK)
			g->bytes += tft_stats_event_bytes(a, ev);
	}
	if (!a->nested) {
		if (g)
			g->self_ns = sat_add(g->self_ns, dur);
		return 0;
	}

	end = sat_add(ev->ts_ns, dur);
	while (a->sp && a->stack[a->sp - 1].depth >= ev->depth)
		pop_frame(a);
	if (a->sp) {
		/*
		 * The nearest open ancestor loses our interval clipped to it (direct
		 * children never overlap below the writer's depth cap, where slices
		 * share the last depth: there each counts, as the writer's stored
		 * statistics count them).
		 */
		struct frame *p = &a->stack[a->sp - 1];
		int64_t s0 = ev->ts_ns > p->start_ns ? ev->ts_ns : p->start_ns;
		int64_t e0 = end < p->end_ns ? end : p->end_ns;
		if (e0 > s0)
			p->covered_ns += e0 - s0;
	}
	if (a->sp == a->cap_stack &&
	    tft_grow_size_ex((void **)&a->stack, &a->cap_stack, a->sp + 1, sizeof(*a->stack), 64, 0))
		return a->status = TFT_ENOMEM;
	a->stack[a->sp++] = (struct frame){
		.start_ns = ev->ts_ns,
		.end_ns = end,
		.covered_ns = 0,
		.depth = ev->depth,
		.group = gi < 0 ? UINT32_MAX : (uint32_t)gi,
	};
	return 0;
}

/* ---- area selections ---------------------------------------------------- */

/* Deeper slices share the last slot: bounded memory whatever the data says. */
#define AREA_MAX_DEPTH 4096

/* An open slice at some depth of the current track, waiting for its children. */
struct open {
	bool used, counted;
	uint32_t group;
	int64_t ts, end;
	int64_t self;       /* (clipped) duration minus that union */
};

struct area {
	struct agg *a;
	int64_t t0, t1;      /* the window */
	bool clip;
	bool nesting;        /* depth is nesting on the current track */
	struct open *stack;  /* owned; indexed by depth */
	size_t cap_stack;
	uint32_t top;        /* stack[0..top) may be used */
	int64_t ext0, ext1;  /* pass 1: extent of the slices overlapping the window */
	bool any;
};

static bool overlaps(const struct area *w, int64_t ts, int64_t end)
{
	return ts <= w->t1 && end >= w->t0;
}

static void close_open(struct agg *a, struct open *o)
{
	if (!o->used)
		return;
	o->used = false;
	if (o->counted)
		a->groups[o->group].self_ns = sat_add(a->groups[o->group].self_ns,
						      o->self < 0 ? 0 : o->self);
}

static int on_extent(void *ctx, const struct tft_event *ev)
{
	struct area *w = ctx;
	int64_t end = sat_add(ev->ts_ns, ev->dur_ns > 0 ? ev->dur_ns : 0);

	if (ev->kind != TFT_EV_SLICE || (ev->flags & TFT_EVF_SUMMARY) || !overlaps(w, ev->ts_ns, end))
		return 0;
	if (!w->any || ev->ts_ns < w->ext0)
		w->ext0 = ev->ts_ns;
	if (!w->any || end > w->ext1)
		w->ext1 = end;
	w->any = true;
	return 0;
}

static int on_area_slice(void *ctx, const struct tft_event *ev)
{
	struct area *w = ctx;
	struct agg *a = w->a;
	int64_t dur = ev->dur_ns > 0 ? ev->dur_ns : 0, end = sat_add(ev->ts_ns, dur), gi;
	uint32_t d = w->nesting ? ev->depth : 0;
	struct group *g;
	struct open *o;
	bool counted;
	uint32_t key = 0;

	if (ev->kind != TFT_EV_SLICE || (ev->flags & TFT_EVF_SUMMARY))
		return 0;
	if (d >= AREA_MAX_DEPTH)
		d = AREA_MAX_DEPTH - 1;
	if (d >= w->cap_stack &&
	    tft_grow_size_ex((void **)&w->stack, &w->cap_stack, (size_t)d + 1, sizeof(*w->stack), 64, 0))
		return a->status = TFT_ENOMEM;

	while (w->top <= d)
		w->stack[w->top++].used = false;
	/* Close this depth and everything deeper: those slices have no more children. */
	for (uint32_t k = w->top; k-- > d;)
		close_open(a, &w->stack[k]);
	w->top = d + 1;
	/*
	 * Take our time (clipped to the parent, and with clip to the window) from
	 * the parent's self time.
	 */
	if (w->nesting && d > 0 && w->stack[d - 1].used && ev->ts_ns < w->stack[d - 1].end) {
		struct open *p = &w->stack[d - 1];
		int64_t s0 = ev->ts_ns > p->ts ? ev->ts_ns : p->ts;
		int64_t s1 = end < p->end ? end : p->end;
		if (w->clip) {
			s0 = s0 > w->t0 ? s0 : w->t0;
			s1 = s1 < w->t1 ? s1 : w->t1;
		}
		if (s1 > s0)
			p->self -= s1 - s0;
	}
	counted = overlaps(w, ev->ts_ns, end) && group_key(a, ev, &key);
	if (counted && w->clip) {
		/* Both ends lie in [ts, end] here, so this is in [0, dur]. */
		int64_t c0 = ev->ts_ns > w->t0 ? ev->ts_ns : w->t0;
		int64_t c1 = end < w->t1 ? end : w->t1;
		dur = c1 - c0;
	}
	o = &w->stack[d];
	*o = (struct open){ .used = w->nesting, .counted = counted, .ts = ev->ts_ns, .end = end,
			    .self = dur };
	if (!counted)
		return 0;
	gi = find_group(a, key);
	if (gi < 0)
		return a->status = TFT_ENOMEM;
	g = &a->groups[gi];
	o->group = (uint32_t)gi;
	if (a->group_by > TFT_STATS_BY_TRACK)
		g->bytes += tft_stats_event_bytes(a, ev);
	g->count++;
	if (push_dur(g, dur))
		return a->status = TFT_ENOMEM;
	g->total_ns = sat_add(g->total_ns, dur);
	if (!w->nesting)
		g->self_ns = sat_add(g->self_ns, dur);
	if (dur < g->min_ns)
		g->min_ns = dur;
	if (dur > g->max_ns)
		g->max_ns = dur;
	return 0;
}

/*
 * Aggregate the slices of one track that overlap the window. Without clip a
 * counted slice may have children outside the window that its self time
 * must lose, so pass 1 finds the extent of the counted slices and pass 2
 * scans all of it. With clip, time outside the window counts for nothing
 * and every ancestor of a slice overlapping the window overlaps it too, so
 * scanning the window once is enough (and cheaper).
 */
static int area_track(struct tft_session *s, struct area *w, uint32_t t, struct tft_error *err)
{
	int rc;

	if (w->clip) {
		w->ext0 = w->t0;
		w->ext1 = w->t1;
	} else {
		w->any = false;
		rc = tft_session_scan(s, t, w->t0, w->t1, 0, on_extent, w, err);
		if (rc || !w->any)
			return rc;
	}
	w->top = 0;
	rc = tft_session_scan(s, t, w->ext0, w->ext1, 0, on_area_slice, w, err);
	for (uint32_t k = w->top; k-- > 0;)
		close_open(w->a, &w->stack[k]);
	w->top = 0;
	return rc;
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

bool tft_stats_process_matches(const struct tft_session *s, uint32_t pid, const char *want)
{
	const struct tft_process *p = tft_session_process(s, pid);
	char buf[24];

	if (!p)
		return false;
	if (want[0] == '#') { /* the session's process id, as `tftracer info` lists it */
		snprintf(buf, sizeof(buf), "#%u", pid);
		return strcmp(buf, want) == 0;
	}
	if (strncmp(want, "host=", 5) == 0)
		return p->host && strcmp(tft_session_str(s, p->host, NULL), want + 5) == 0;
	if (strncmp(want, "rank=", 5) == 0) {
		snprintf(buf, sizeof(buf), "rank=%d", (int)p->rank);
		return p->rank >= 0 && strcmp(buf, want) == 0;
	}
	if (strcmp(tft_session_str(s, p->name, NULL), want) == 0)
		return true;
	snprintf(buf, sizeof(buf), "%lld", (long long)p->pid);
	return strcmp(buf, want) == 0;
}

void tft_stats_agg_free(struct agg *a)
{
	tft_stats_device_free(a);
	for (size_t i = 0; i < a->ngroups; i++) {
		free(a->groups[i].durs);
		free(a->groups[i].hist);
	}
	free(a->groups);
	tft_hmap_fini(&a->map);
	free(a->stack);
	memset(a, 0, sizeof(*a));
}

#define agg_free tft_stats_agg_free

/* Turn a scan's outcome into the call's status (with err set). */
static int scan_status(const struct agg *a, int rc, struct tft_error *err)
{
	if (a->status)
		return tft_error_set(err, a->status, -1, "out of memory aggregating slices");
	if (rc)
		return rc < 0 ? rc : TFT_EIO;
	return 0;
}

/* Every selected track, scanned whole (the session's statistics). */
static int compute_whole(struct tft_session *s, struct agg *a, uint32_t only, const char *proc,
			 bool derived, bool stored, struct tft_stats_result *r, struct tft_error *err)
{
	uint32_t ntracks = tft_session_track_count(s);
	int rc;

	for (uint32_t t = 0; t < ntracks; t++) {
		const struct tft_track *tr = tft_session_track(s, t);

		if (!tr || (only != TFT_NONE && t != only))
			continue;
		if (proc && !tft_stats_process_matches(s, tr->process, proc))
			continue;
		/* Counter tracks and tracks whose stored stats show no slices. */
		if (tr->kind == TFT_TRACK_COUNTER ||
		    (tr->slices == 0 && tr->instants + tr->counters > 0))
			continue;
		if ((tr->flags & TFT_TRACKF_DERIVED) && only == TFT_NONE && !derived) {
			r->derived_tracks++; /* repeats other tracks' work: counted there */
			continue;
		}
		if (a->group_by > TFT_STATS_BY_TRACK && !tft_stats_device_track(a, tr))
			continue;
		a->nested = tft_track_nests(tr->kind, tr->flags);
		a->sp = 0;
		r->tracks++;
		if (stored) {
			rc = tft_stats_stored_track(s, t, INT64_MIN, INT64_MAX, false, a, err);
			if (rc <= 0) {
				r->stored_tracks += rc == 0;
				if (rc)
					return rc;
				continue;
			}
		}
		rc = scan_status(a, tft_session_scan(s, t, INT64_MIN, INT64_MAX, 0, on_event, a, err), err);
		if (rc)
			return rc;
		while (a->sp)
			pop_frame(a);
	}
	return 0;
}

/* The area selection: tracks list[0..n) (NULL: every track), the window in w. */
static int compute_area(struct tft_session *s, struct area *w, const uint32_t *list, size_t n,
			const char *proc, bool derived, bool stored, struct tft_stats_result *r,
			struct tft_error *err)
{
	int rc;

	for (size_t i = 0; i < n; i++) {
		uint32_t t = list ? list[i] : (uint32_t)i;
		const struct tft_track *tr = tft_session_track(s, t);

		if (!tr || tr->kind == TFT_TRACK_COUNTER || tr->slices == 0)
			continue;
		if (proc && !tft_stats_process_matches(s, tr->process, proc))
			continue;
		if ((tr->flags & TFT_TRACKF_DERIVED) && !list && !derived) {
			r->derived_tracks++;
			continue;
		}
		if (w->a->group_by > TFT_STATS_BY_TRACK && !tft_stats_device_track(w->a, tr))
			continue;
		w->nesting = tft_track_nests(tr->kind, tr->flags);
		r->tracks++;
		if (stored) {
			rc = tft_stats_stored_track(s, t, w->t0, w->t1, w->clip, w->a, err);
			if (rc <= 0) {
				r->stored_tracks += rc == 0;
				if (rc)
					return rc;
				continue;
			}
		}
		rc = scan_status(w->a, area_track(s, w, t, err), err);
		if (rc)
			return rc;
	}
	return 0;
}

/* The duration at 0-based rank k of a bucketed group: its bucket's value, within [min, max]. */
static int64_t hist_rank(const struct group *g, size_t k)
{
	uint64_t seen = 0;
	int64_t v = g->max_ns;

	for (uint32_t i = 0; i < g->hn; i++) {
		seen += g->hist[i];
		if (seen > k) {
			v = tft_hist_value(g->hlo + i);
			break;
		}
	}
	return v < g->min_ns ? g->min_ns : v > g->max_ns ? g->max_ns : v;
}

/* Rows from the groups: names, means, percentiles, shares, sorted. */
static int make_rows(struct tft_session *s, struct agg *a, struct tft_stats_result *r,
		     struct tft_error *err)
{
	r->rows = calloc(a->ngroups ? a->ngroups : 1, sizeof(*r->rows));
	if (!r->rows)
		return tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
	r->nrows = a->ngroups;
	for (size_t i = 0; i < a->ngroups; i++) {
		struct group *g = &a->groups[i];
		struct tft_stats_row *row = &r->rows[i];
		size_t k50 = rank_index(g->count, 50), k99 = rank_index(g->count, 99);

		row->key = g->key;
		if (a->group_by == TFT_STATS_BY_TRACK) {
			const struct tft_track *tr = tft_session_track(s, g->key);
			row->track_id = g->key;
			row->name = tft_session_str(s, tr ? tr->name : 0, &row->name_len);
		} else {
			row->track_id = TFT_NONE;
			row->name = tft_session_str(s, g->key, &row->name_len);
		}
		if (!row->name) {
			row->name = "";
			row->name_len = 0;
		}
		row->count = g->count;
		row->bytes = g->bytes;
		row->total_ns = g->total_ns;
		row->self_ns = g->self_ns;
		row->min_ns = g->min_ns;
		row->max_ns = g->max_ns;
		row->mean_ns = (double)g->total_ns / (double)g->count;
		row->exact = !g->approx;
		if (!g->approx) {
			/* p99 is searched only right of p50: select_kth left it partitioned. */
			select_kth(g->durs, 0, g->count - 1, k50);
			row->p50_ns = g->durs[k50];
			select_kth(g->durs, k50, g->count - 1, k99);
			row->p99_ns = g->durs[k99];
		} else {
			row->p50_ns = hist_rank(g, k50);
			row->p99_ns = hist_rank(g, k99);
			r->approx_groups++;
		}
		r->slices += g->count;
		r->total_ns = sat_add(r->total_ns, g->total_ns);
	}
	for (size_t i = 0; i < r->nrows; i++)
		r->rows[i].share = r->total_ns > 0
			? 100.0 * (double)r->rows[i].total_ns / (double)r->total_ns : 0.0;
	qsort(r->rows, r->nrows, sizeof(*r->rows), cmp_rows);
	return 0;
}

/*
 * Whether to merge stored chunk statistics: the session has them, and the
 * selection holds more slices than a scan answers quickly (the exact path
 * keeps every duration: exact percentiles). TFT_STATS_STORED_MIN (slices)
 * moves the threshold (tests set 0 to check one path against the other).
 */
static bool use_stored(struct tft_session *s, const struct tft_stats_opts *opts)
{
	const char *env = getenv("TFT_STATS_STORED_MIN");
	uint64_t min = env && *env ? strtoull(env, NULL, 10) : TFT_STATS_STORED_MIN_DEFAULT, n = 0;
	uint32_t nt = tft_session_track_count(s);

	if (opts->exact || !tft_session_has_chunk_stats(s) || opts->group_by > TFT_STATS_BY_TRACK)
		return false; /* (device groupings read args: scanned) */
	for (uint32_t t = 0; t < nt; t++) {
		const struct tft_track *tr = tft_session_track(s, t);
		bool chosen = opts->ntracks == 0 && opts->track == TFT_NONE;
		for (size_t i = 0; !chosen && i < opts->ntracks; i++)
			chosen = opts->tracks[i] == t;
		if (opts->ntracks == 0 && opts->track == t)
			chosen = true;
		if (chosen && tr)
			n += tr->slices;
	}
	return n > min || (min == 0 && n > 0);
}

int tft_stats_compute(struct tft_session *s, const struct tft_stats_opts *opts,
		      struct tft_stats_result **out, struct tft_error *err)
{
	static const struct tft_stats_opts defaults = { .group_by = TFT_STATS_BY_NAME,
							.track = TFT_NONE };
	struct agg a = { 0 };
	struct area w = { 0 };
	struct tft_stats_result *r = NULL;
	uint32_t ntracks = tft_session_track_count(s);
	bool stored;
	int rc;

	*out = NULL;
	if (!opts)
		opts = &defaults;
	a.group_by = opts->group_by;
	if (a.group_by < TFT_STATS_BY_NAME || a.group_by > TFT_STATS_BY_OP)
		return tft_error_set(err, TFT_EINVAL, -1, "unknown grouping %d", a.group_by);
	if (opts->ntracks == 0 && opts->track != TFT_NONE && !tft_session_track(s, opts->track))
		return tft_error_set(err, TFT_EINVAL, -1, "no track with id %u", opts->track);
	if (opts->ntracks > 0 && !opts->tracks)
		return tft_error_set(err, TFT_EINVAL, -1, "no track list");
	for (size_t i = 0; i < opts->ntracks; i++)
		if (!tft_session_track(s, opts->tracks[i]))
			return tft_error_set(err, TFT_EINVAL, -1, "no track with id %u", opts->tracks[i]);
	if (opts->window && opts->t1 < opts->t0)
		return tft_error_set(err, TFT_EINVAL, -1, "the window ends before it starts");
	r = calloc(1, sizeof(*r));
	if (!r)
		return tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
	stored = use_stored(s, opts);
	if (stored)
		a.exact_max = TFT_STATS_EXACT_MAX_STORED;
	if (a.group_by > TFT_STATS_BY_TRACK && (rc = tft_stats_device_prepare(s, &a, err))) {
		tft_stats_destroy(r);
		agg_free(&a);
		return rc;
	}

	if (opts->window || opts->ntracks > 1) {
		w.a = &a;
		w.t0 = opts->window ? opts->t0 : INT64_MIN;
		w.t1 = opts->window ? opts->t1 : INT64_MAX;
		w.clip = opts->window && opts->clip;
		if (opts->ntracks > 0)
			rc = compute_area(s, &w, opts->tracks, opts->ntracks, opts->process,
					  opts->derived, stored, r, err);
		else if (opts->track != TFT_NONE)
			rc = compute_area(s, &w, &opts->track, 1, opts->process, opts->derived, stored, r,
					  err);
		else
			rc = compute_area(s, &w, NULL, ntracks, opts->process, opts->derived, stored, r,
					  err);
		free(w.stack);
	} else {
		rc = compute_whole(s, &a, opts->ntracks ? opts->tracks[0] : opts->track, opts->process,
				   opts->derived, stored, r, err);
	}
	if (rc == 0)
		rc = make_rows(s, &a, r, err);
	agg_free(&a);
	if (rc) {
		tft_stats_destroy(r);
		return rc;
	}
	*out = r;
	return 0;
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
	if (strcmp(s, "kernel") == 0)
		return TFT_STATS_BY_KERNEL;
	if (strcmp(s, "api") == 0)
		return TFT_STATS_BY_API;
	if (strcmp(s, "op") == 0)
		return TFT_STATS_BY_OP;
	if (strcmp(s, "rank") == 0)
		return TFT_STATS_BY_RANK;
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
