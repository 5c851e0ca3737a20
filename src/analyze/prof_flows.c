/* SPDX-License-Identifier: MIT */
/*
 * The launch flows of tftracer prof's scan (prof_scan_int.h): the session's
 * flows from a host track to an accelerator track, indexed by source track
 * and by destination track, each run in time order. A host track's scan
 * resolves the flows that start on it to the op that launched them; an
 * accelerator track's scan charges its kernels to those ops.
 */
#include <stdlib.h>
#include <string.h>

#include "analyze/prof_scan_int.h"
#include "core/grow.h"

struct flow_load {
	struct tft_prof *p;
	uint32_t cap;
};

bool tft_prof_countable(const struct tft_track *t)
{
	return t && !(t->flags & TFT_TRACKF_DERIVED) && t->kind != TFT_TRACK_COUNTER &&
	       t->kind != TFT_TRACK_OBJECT;
}

static int on_flow(void *ctx, const struct tft_flow *f)
{
	struct flow_load *fl = ctx;
	struct tft_prof *p = fl->p;
	const struct tft_track *src, *dst;

	if (f->src_track == TFT_NONE || f->dst_track == TFT_NONE)
		return 0;
	src = tft_session_track(p->s, f->src_track);
	dst = tft_session_track(p->s, f->dst_track);
	if (!tft_prof_countable(src) || !tft_prof_countable(dst) || dst->kind != TFT_TRACK_GPU_STREAM ||
	    src->kind == TFT_TRACK_GPU_STREAM)
		return 0;
	if (tft_grow((void **)&p->flows, &fl->cap, p->nflows + 1, sizeof(*p->flows)))
		return TFT_ENOMEM;
	p->flows[p->nflows++] = (struct prof_flow){ .src_ts = f->src_ts_ns, .dst_ts = f->dst_ts_ns,
						    .src_track = f->src_track, .dst_track = f->dst_track,
						    .cell = PROF_NONE };
	return 0;
}

static int cmp_src(const void *a, const void *b)
{
	const struct prof_flow *x = *(struct prof_flow *const *)a, *y = *(struct prof_flow *const *)b;

	if (x->src_track != y->src_track)
		return x->src_track < y->src_track ? -1 : 1;
	return (x->src_ts > y->src_ts) - (x->src_ts < y->src_ts);
}

static int cmp_dst(const void *a, const void *b)
{
	const struct prof_flow *x = *(struct prof_flow *const *)a, *y = *(struct prof_flow *const *)b;

	if (x->dst_track != y->dst_track)
		return x->dst_track < y->dst_track ? -1 : 1;
	return (x->dst_ts > y->dst_ts) - (x->dst_ts < y->dst_ts);
}

static bool sorted_range(struct prof_flow **v, uint32_t n, bool src)
{
	for (uint32_t i = 1; i < n; i++)
		if (src ? v[i]->src_ts < v[i - 1]->src_ts : v[i]->dst_ts < v[i - 1]->dst_ts)
			return false;
	return true;
}

/*
 * Flows by (track, time) into out: a counting sort by track, then each
 * track's run sorted by time (the session hands flows over chunk by chunk,
 * each chunk in time order, so a run is mostly in order already and is
 * only sorted when it is not).
 */
static int by_track(struct tft_prof *p, struct prof_flow **out, bool src)
{
	uint32_t nt = tft_session_track_count(p->s), *start = calloc(nt + 2, sizeof(uint32_t));

	if (!start)
		return TFT_ENOMEM;
	for (uint32_t i = 0; i < p->nflows; i++)
		start[(src ? p->flows[i].src_track : p->flows[i].dst_track) + 1]++;
	for (uint32_t t = 0; t < nt; t++)
		start[t + 1] += start[t];
	for (uint32_t i = 0; i < p->nflows; i++)
		out[start[src ? p->flows[i].src_track : p->flows[i].dst_track]++] = &p->flows[i];
	/* start[t] is now the end of track t's run */
	for (uint32_t t = 0, b = 0; t < nt; b = start[t], t++) {
		uint32_t n = start[t] - b;
		if (n > 1 && !sorted_range(out + b, n, src))
			qsort(out + b, n, sizeof(*out), src ? cmp_src : cmp_dst);
	}
	free(start);
	return 0;
}

int tft_prof_flows_load(struct tft_prof *p, struct prof_flow_index *fx, struct tft_error *err)
{
	struct flow_load fl = { .p = p };
	int rc;

	memset(fx, 0, sizeof(*fx));
	free(p->flows);
	p->flows = NULL;
	p->nflows = 0;
	rc = tft_session_flows(p->s, on_flow, &fl, err);
	if (rc == TFT_ENOMEM)
		return tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
	if (rc)
		return rc;
	fx->n = p->nflows;
	fx->by_src = malloc(sizeof(*fx->by_src) * (fx->n + 1));
	fx->by_dst = malloc(sizeof(*fx->by_dst) * (fx->n + 1));
	if (!fx->by_src || !fx->by_dst)
		return tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
	if (by_track(p, fx->by_src, true) || by_track(p, fx->by_dst, false))
		return tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
	return 0;
}

void tft_prof_flows_free(struct prof_flow_index *fx)
{
	free(fx->by_src);
	free(fx->by_dst);
	fx->by_src = fx->by_dst = NULL;
	fx->n = 0;
}

/* The first flow of track in v (by source or destination track), by binary search. */
static uint32_t lower(struct prof_flow *const *v, uint32_t n, uint32_t track, bool src)
{
	uint32_t lo = 0, hi = n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if ((src ? v[mid]->src_track : v[mid]->dst_track) < track)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

struct prof_flow **tft_prof_flows_of(const struct prof_flow_index *fx, uint32_t track, bool src, uint32_t *n)
{
	struct prof_flow **v = src ? fx->by_src : fx->by_dst;
	uint32_t i = lower(v, fx->n, track, src), e;

	for (e = i; e < fx->n && (src ? v[e]->src_track : v[e]->dst_track) == track; e++)
		;
	*n = e - i;
	return v + i;
}
