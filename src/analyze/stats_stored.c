/* SPDX-License-Identifier: MIT */
/*
 * Statistics from the per-chunk summaries stored in the session
 * (store/chunk_stats.h), for one track and a window [t0, t1]:
 *
 *   - a raw chunk wholly inside the window (its events start at or after t0
 *     and end by t1) adds its stored entries: every number of its slices is
 *     what scanning them would give, clipped or not;
 *   - a chunk wholly outside adds nothing;
 *   - a chunk across an edge is decoded and its slices overlapping the
 *     window are counted one by one. Their self time needs their direct
 *     children, which may lie in later chunks: there each chunk that lies
 *     wholly within the parent's span gives its stored sum of the durations
 *     at the children's depth (clipped to their parents; nothing if the chunk
 *     is outside the window and times are clipped), and the chunk in which
 *     the parent ends is decoded to take the children that start before.
 *
 * The whole track (no window) is the first case for every chunk. What
 * scanning would count is documented with tft_stats_compute() (stats.h).
 */
#include <stdlib.h>
#include <string.h>

#include "analyze/stats_int.h"
#include "core/grow.h"
#include "store/chunk_stats.h"

struct chunk_info {
	int64_t t_min, t_max;        /* from the directory: first start, latest end */
	int64_t first_ts, last_ts;   /* from the statistics: first and last start */
	int64_t *depth_sum;          /* owned copy */
	uint32_t ndepth;
	bool have;                   /* statistics found */
	bool inside, outside;
};

struct track_pass {
	struct tft_session *s;
	uint32_t track;
	int64_t t0, t1;
	bool clip, nesting;
	struct agg *a;               /* the computation's groups */
	struct chunk_info *c;
	uint32_t nc;
	uint32_t nstr;
	struct tft_error *err;
	int status;
};

static int64_t max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

static uint32_t group_key_of(const struct agg *a, uint32_t name, uint32_t cat, uint32_t track)
{
	return a->group_by == TFT_STATS_BY_NAME ? name : a->group_by == TFT_STATS_BY_CATEGORY ? cat : track;
}

/* A chunk's stored statistics: kept (depth sums, starts), and merged if it is inside. */
static int on_stats(void *ctx, uint32_t i, const uint8_t *blob, size_t len)
{
	struct track_pass *p = ctx;
	struct chunk_info *ci = &p->c[i];
	struct tft_cstats cs;
	int rc = tft_cstats_decode(&cs, blob, len, p->nstr, p->err);

	if (rc) {
		tft_cstats_fini(&cs);
		return p->status = rc;
	}
	ci->have = true;
	ci->first_ts = cs.first_ts;
	ci->last_ts = cs.last_ts;
	ci->ndepth = cs.ndepth;
	ci->depth_sum = cs.depth_sum; /* taken over */
	cs.depth_sum = NULL;
	if (ci->inside) {
		for (uint32_t k = 0; k < cs.ne && !rc; k++) {
			const struct tft_cstats_entry *e = &cs.e[k];
			int64_t gi = tft_stats_group(p->a, group_key_of(p->a, e->name, e->cat, p->track));
			struct group *g;
			if (gi < 0) {
				rc = TFT_ENOMEM;
				break;
			}
			g = &p->a->groups[gi];
			g->total_ns = tft_stats_sat_add(g->total_ns, e->total);
			g->self_ns = tft_stats_sat_add(g->self_ns, e->self < 0 ? 0 : e->self);
			if (e->min < g->min_ns)
				g->min_ns = e->min;
			if (e->max > g->max_ns)
				g->max_ns = e->max;
			if (e->nraw) {
				for (uint32_t j = 0; j < e->nraw && !rc; j++) {
					g->count++;
					rc = tft_stats_group_dur(g, cs.raw[e->first + j]);
				}
			} else {
				for (uint32_t j = 0; j < e->nbucket && !rc; j++) {
					g->count += cs.bcount[e->first + j];
					rc = tft_stats_group_bucket(g, cs.bucket[e->first + j],
								    cs.bcount[e->first + j]);
				}
			}
		}
	}
	tft_cstats_fini(&cs);
	if (rc && !p->status)
		p->status = tft_error_set(p->err, rc, -1, "out of memory merging chunk statistics");
	return p->status;
}

/* ---- the decoded chunks -------------------------------------------------------------- */

struct ev_rec {
	int64_t ts, end;
	uint32_t depth, name, cat;
	uint32_t chunk;
	bool slice;
};

struct decoded {
	struct ev_rec *ev; /* owned: the decoded chunks' events, chunk after chunk */
	uint32_t n, cap;
	uint32_t *first;   /* owned: per chunk, its events ev[first, end), or UINT32_MAX */
	uint32_t *end;     /* owned */
};

struct collect_ctx {
	struct decoded *d;
	uint32_t chunk;
	int status;
};

static int on_collect(void *ctx, const struct tft_event *ev)
{
	struct collect_ctx *c = ctx;
	struct decoded *d = c->d;

	if (ev->flags & TFT_EVF_SUMMARY)
		return 0;
	if (d->n == d->cap && tft_grow_ex((void **)&d->ev, &d->cap, (uint64_t)d->n + 1, sizeof(*d->ev), 4096, 0))
		return c->status = TFT_ENOMEM;

	d->ev[d->n++] = (struct ev_rec){
		.ts = ev->ts_ns,
		.end = tft_stats_sat_add(ev->ts_ns, ev->dur_ns > 0 ? ev->dur_ns : 0),
		.depth = ev->depth,
		.name = ev->name,
		.cat = ev->cat,
		.chunk = c->chunk,
		.slice = ev->kind == TFT_EV_SLICE,
	};
	return 0;
}

static int decode_chunk(struct track_pass *p, struct decoded *d, uint32_t i)
{
	struct collect_ctx c = { d, i, 0 };
	int rc;

	if (d->first[i] != UINT32_MAX)
		return 0;
	d->first[i] = d->n;
	rc = tft_session_scan_raw_chunk(p->s, p->track, i, on_collect, &c, p->err);
	d->end[i] = d->n;
	if (c.status)
		return tft_error_set(p->err, c.status, -1, "out of memory decoding a chunk");
	return rc;
}

/* |[a, b] ∩ [lo, hi]| */
static int64_t overlap(int64_t a, int64_t b, int64_t lo, int64_t hi)
{
	int64_t x = max64(a, lo), y = min64(b, hi);

	return y > x ? y - x : 0;
}

/*
 * The time of E's direct children (depth + 1, starting in [ts, end)) inside
 * E and inside [w0, w1], from chunk `from` on (E's own chunk included: its
 * events after E). Decodes the chunk in which E ends if needed.
 */
static int children_time(struct track_pass *p, struct decoded *d, struct ev_rec E,
			 uint32_t self_index, int64_t w0, int64_t w1, int64_t *out)
{
	int64_t sum = 0, a = max64(E.ts, w0), b = min64(E.end, w1);
	uint32_t dc = E.depth + 1;
	int rc;

	/* E's own chunk: the events after it */
	for (uint32_t k = self_index + 1; k < d->end[E.chunk] && d->ev[k].ts < E.end; k++)
		if (d->ev[k].slice && d->ev[k].depth == dc)
			sum += overlap(d->ev[k].ts, d->ev[k].end, a, b);
	for (uint32_t j = E.chunk + 1; j < p->nc; j++) {
		const struct chunk_info *ci = &p->c[j];
		if (ci->first_ts >= E.end)
			break; /* (events start in order: none of the rest starts within E) */
		if (d->first[j] == UINT32_MAX && ci->last_ts < E.end) {
			/* wholly within E's span: its slices at dc are E's children */
			if ((!p->clip || !ci->outside) && dc < ci->ndepth)
				sum += ci->depth_sum[dc]; /* inside the window (or times not clipped) */
			continue;
		}
		if ((rc = decode_chunk(p, d, j))) /* (d->ev may move) */
			return rc;
		for (uint32_t k = d->first[j]; k < d->end[j] && d->ev[k].ts < E.end; k++)
			if (d->ev[k].slice && d->ev[k].depth == dc)
				sum += overlap(d->ev[k].ts, d->ev[k].end, a, b);
	}
	*out = sum;
	return 0;
}

/* Count the slices of decoded chunk i that overlap the window. */
static int count_chunk(struct track_pass *p, struct decoded *d, uint32_t i)
{
	int rc;

	for (uint32_t k = d->first[i]; k < d->end[i]; k++) {
		struct ev_rec E = d->ev[k];
		int64_t dur, self, kids = 0, w0 = p->clip ? p->t0 : INT64_MIN, w1 = p->clip ? p->t1 : INT64_MAX;
		int64_t gi;
		struct group *g;

		if (!E.slice || E.ts > p->t1 || E.end < p->t0)
			continue;
		dur = p->clip ? overlap(E.ts, E.end, p->t0, p->t1) : E.end - E.ts;
		if (p->nesting && (rc = children_time(p, d, E, k, w0, w1, &kids)))
			return rc;
		self = dur - kids;
		gi = tft_stats_group(p->a, group_key_of(p->a, E.name, E.cat, p->track));
		if (gi < 0)
			return tft_error_set(p->err, TFT_ENOMEM, -1, "out of memory aggregating slices");
		g = &p->a->groups[gi];
		g->count++;
		g->total_ns = tft_stats_sat_add(g->total_ns, dur);
		g->self_ns = tft_stats_sat_add(g->self_ns, self < 0 ? 0 : self);
		if (dur < g->min_ns)
			g->min_ns = dur;
		if (dur > g->max_ns)
			g->max_ns = dur;
		if (tft_stats_group_dur(g, dur))
			return tft_error_set(p->err, TFT_ENOMEM, -1, "out of memory aggregating slices");
	}
	return 0;
}

int tft_stats_stored_track(struct tft_session *s, uint32_t track, int64_t t0, int64_t t1, bool clip,
			   struct agg *out, struct tft_error *err)
{
	const struct tft_track *tr = tft_session_track(s, track);
	struct track_pass p = { .s = s, .track = track, .t0 = t0, .t1 = t1, .clip = clip, .err = err };
	struct decoded d = { 0 };
	int rc;

	p.a = out;
	p.nstr = tft_session_string_count(s);
	if (t0 == INT64_MIN && t1 == INT64_MAX) {
		/* the whole track: its chunks' statistics merged at close, one blob */
		struct chunk_info whole = { .inside = true };
		p.c = &whole;
		p.nc = 1;
		rc = tft_session_track_stats(s, track, on_stats, &p, err);
		free(whole.depth_sum);
		if (p.status)
			return p.status;
		if (rc <= 0)
			return rc;
		p.c = NULL; /* none stored: the chunks' then */
	}
	rc = tft_session_chunk_stats_complete(s, track, err);

	if (rc <= 0)
		return rc < 0 ? rc : 1; /* incomplete (a live session's open chunk): scanned instead */
	rc = 0;
	p.nesting = tr && tft_track_nests(tr->kind, tr->flags);
	p.nc = tft_session_raw_chunk_count(s, track);
	if (!p.nc)
		return 0;
	p.c = calloc(p.nc, sizeof(*p.c));
	d.first = malloc((size_t)p.nc * sizeof(*d.first));
	d.end = malloc((size_t)p.nc * sizeof(*d.end));
	if (!p.c || !d.first || !d.end) {
		rc = tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
		goto out;
	}
	for (uint32_t i = 0; i < p.nc; i++) {
		uint32_t n;
		tft_session_raw_chunk(s, track, i, &p.c[i].t_min, &p.c[i].t_max, &n);
		p.c[i].outside = p.c[i].t_max < t0 || p.c[i].t_min > t1;
		p.c[i].inside = p.c[i].t_min >= t0 && p.c[i].t_max <= t1;
		d.first[i] = UINT32_MAX;
	}
	rc = tft_session_chunk_stats(s, track, on_stats, &p, err);
	if (p.status)
		rc = p.status;
	if (rc)
		goto out;
	for (uint32_t i = 0; i < p.nc; i++) {
		if (!p.c[i].have) { /* counted complete, yet a chunk's row is missing */
			rc = tft_error_set(err, TFT_EFORMAT, -1, "chunk statistics: track %u's chunk %u has none",
					   track, i);
			goto out;
		}
	}
	/* the chunks across the window's edges, one event at a time */
	for (uint32_t i = 0; i < p.nc && !rc; i++)
		if (!p.c[i].inside && !p.c[i].outside)
			rc = decode_chunk(&p, &d, i);
	for (uint32_t i = 0; i < p.nc && !rc; i++)
		if (!p.c[i].inside && !p.c[i].outside)
			rc = count_chunk(&p, &d, i);
out:
	for (uint32_t i = 0; p.c && i < p.nc; i++)
		free(p.c[i].depth_sum);
	free(p.c);
	free(d.ev);
	free(d.first);
	free(d.end);
	return rc;
}
