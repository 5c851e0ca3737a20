/* SPDX-License-Identifier: MIT */
/*
 * The slice answer (GET /api/slice; query/slice.h), and the flow index it
 * reads (struct tft_qry_flows).
 * GET /api/slice?track=ID&ts=NS&depth=D: everything known about the slice
 * at depth D of the track whose [ts, ts+dur] contains ts: name, category,
 * times, self time, track, process, typed args, step, flows and the chain of
 * enclosing slices. Flows come from an index built once per session
 * generation (sorted by each end's track and time); a flow binds to the
 * deepest slice enclosing its end. Instead of depth D: deepest=1 finds that
 * deepest slice; nav=next|prev the next (previous) slice at depth D. A
 * session with graph nodes (GraphDef, CostGraphDef) also gets the nodes the
 * slice joins by name (write_graph).
 */
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "core/model.h"
#include "export/export_summary.h"
#include "query/slice.h"
#include "store/graph.h"

#define SLICE_MAX_ARGS 1024  /* args kept for one slice */
#define SLICE_MAX_FLOWS 1000 /* flows listed per direction */
#define RAW_JSON_MAX_DEPTH 64
#define SLICE_MAX_ANCESTORS 1024 /* deeper slices list no ancestors */
#define SLICE_MAX_GRAPH_NODES 16 /* graph rows listed for one slice */

/* a + b clamped to the int64 range (stored data is not trusted to stay in it). */
static int64_t sat_add(int64_t a, int64_t b)
{
	int64_t r;

	return __builtin_add_overflow(a, b, &r) ? (b > 0 ? INT64_MAX : INT64_MIN) : r;
}

/* ---- flow index --------------------------------------------------------- */

struct flow_end {
	uint32_t track;
	int64_t ts;
	uint32_t flow; /* index into flows */
};

struct tft_qry_flows {
	struct tft_flow *flows;  /* owned */
	size_t n, cap;
	struct flow_end *src;    /* owned: sorted by (track, ts) of the start */
	struct flow_end *dst;    /* owned: sorted by (track, ts) of the end */
	size_t nsrc, ndst;
};

void tft_qry_flows_free(struct tft_qry_flows *ix)
{
	if (!ix)
		return;
	free(ix->flows);
	free(ix->src);
	free(ix->dst);
	free(ix);
}

static int collect_flow(void *ctx, const struct tft_flow *f)
{
	struct tft_qry_flows *ix = ctx;

	if (tft_grow_size_ex((void **)&ix->flows, &ix->cap, ix->n + 1, sizeof(*ix->flows), 1024, 0))
		return TFT_ENOMEM;
	ix->flows[ix->n++] = *f;
	return 0;
}

static int cmp_end(const void *a, const void *b)
{
	const struct flow_end *x = a, *y = b;

	if (x->track != y->track)
		return x->track < y->track ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->flow < y->flow ? -1 : x->flow > y->flow;
}

struct tft_qry_flows *tft_qry_flows_new(struct tft_session *s, struct tft_error *err)
{
	struct tft_qry_flows *ix = calloc(1, sizeof(*ix));
	int rc;

	if (!ix) {
		tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
		return NULL;
	}
	rc = tft_session_flows(s, collect_flow, ix, err);
	if (rc == 0 && ix->n) {
		ix->src = malloc(ix->n * sizeof(*ix->src));
		ix->dst = malloc(ix->n * sizeof(*ix->dst));
		if (!ix->src || !ix->dst)
			rc = TFT_ENOMEM;
	}
	if (rc != 0) {
		tft_error_set(err, rc < 0 ? rc : TFT_EIO, -1, "cannot read the flows");
		tft_qry_flows_free(ix);
		return NULL;
	}
	for (size_t i = 0; i < ix->n; i++) {
		const struct tft_flow *f = &ix->flows[i];
		if (f->src_track != TFT_NONE)
			ix->src[ix->nsrc++] = (struct flow_end){ f->src_track, f->src_ts_ns, (uint32_t)i };
		if (f->dst_track != TFT_NONE)
			ix->dst[ix->ndst++] = (struct flow_end){ f->dst_track, f->dst_ts_ns, (uint32_t)i };
	}
	if (ix->nsrc > 1)
		qsort(ix->src, ix->nsrc, sizeof(*ix->src), cmp_end);
	if (ix->ndst > 1)
		qsort(ix->dst, ix->ndst, sizeof(*ix->dst), cmp_end);
	return ix;
}

const struct tft_qry_flows *tft_qry_flows_own(void *ctx, struct tft_session *s, struct tft_error *err)
{
	struct tft_qry_flows **fx = ctx;

	if (!*fx)
		*fx = tft_qry_flows_new(s, err);
	return *fx;
}

/* First end with (track, ts) >= (track, t0). */
static size_t lower_bound(const struct flow_end *v, size_t n, uint32_t track, int64_t t0)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid].track < track || (v[mid].track == track && v[mid].ts < t0))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* ---- finding the slice -------------------------------------------------- */

/* A closed time range [ts, end]. */
struct span {
	int64_t ts, end;
};

/*
 * Slices at one depth are ordered by start, then by the store's order among those that
 * start together (zero-duration slices and instants can share a start): a slice's
 * `seq` is its ordinal in that run, so (ts, seq) names it and stepping reaches them all.
 */
enum find_mode {
	FIND_AT,      /* at depth: the latest-starting slice containing ts (of several that
		       * start together, the last); with seq: the seq-th starting at ts */
	FIND_DEEPEST, /* any depth: the deepest slice containing ts (where a flow end binds;
		       * not an instant), the latest-starting one there, the last of a run */
	FIND_NEXT,    /* at depth: the first after (ts, seq); no seq: after all at ts */
	FIND_PREV,    /* at depth: the last before (ts, seq), at or after lo; no seq: before all at ts */
};

/* An enclosing slice (the chain shown above the selection). */
struct ancestor {
	int64_t ts, dur;
	uint32_t name;
	bool found;
};

struct find {
	int64_t ts;
	uint32_t depth;
	enum find_mode mode;
	int64_t seq;                /* the seq parameter, -1 when not given */
	int64_t lo;                 /* FIND_PREV: candidates start at or after this */
	bool found;
	uint32_t ev_seq;            /* the found one's seq */
	bool run_any;               /* the run of events at `depth` starting at run_ts ... */
	int64_t run_ts;
	uint32_t run_n;             /* ... has run_n + 1 events so far */
	uint32_t same_n;            /* on_seq: events seen at the found one's depth and start */
	struct ancestor *anc;       /* owned: [ev.depth] */
	struct tft_event ev;        /* the slice (args pointer replaced) */
	struct tft_arg *args;       /* owned copy */
	/* second pass (on_inside): children, and where a flow end binds elsewhere */
	bool nesting;               /* depth means nesting on this track */
	int64_t end;
	size_t nkids;               /* direct children */
	int64_t covered_to;         /* union of children so far ends here */
	int64_t child_ns;           /* union length */
	struct span *cover;         /* owned: disjoint, in order: where a slice after this one
				     * (deeper, or later at its depth) holds the time, clipped */
	size_t ncover, cover_cap;
	const struct tft_qry_flows *ix; /* borrowed: only ranges holding a flow end are covered */
	bool ends_inside;           /* a flow end of the track lies in the slice */
	int status;
};

static int on_candidate(void *ctx, const struct tft_event *ev)
{
	struct find *f = ctx;
	int64_t end, ord = 0;

	if (ev->kind == TFT_EV_COUNTER || (ev->flags & TFT_EVF_SUMMARY))
		return 0;
	if (f->mode != FIND_DEEPEST) {
		if (ev->depth != f->depth)
			return 0;
		/* Its seq. A scan that reaches a start sees every event starting there (they
		 * all overlap it), in the store's order; a run it only partly sees starts
		 * before the scan's window and is never a candidate (FIND_AT: on_seq). */
		f->run_n = f->run_any && ev->ts_ns == f->run_ts ? f->run_n + 1 : 0;
		f->run_any = true;
		f->run_ts = ev->ts_ns;
		ord = f->run_n;
	}
	end = sat_add(ev->ts_ns, ev->dur_ns > 0 ? ev->dur_ns : 0);
	switch (f->mode) {
	case FIND_NEXT:
		if (ev->ts_ns < f->ts || (ev->ts_ns == f->ts && (f->seq < 0 || ord <= f->seq)))
			return 0;
		break; /* the first one (scan order: start order) */
	case FIND_PREV:
		/* without seq, ord >= -1 holds: none at ts itself */
		if (ev->ts_ns > f->ts || ev->ts_ns < f->lo || (ev->ts_ns == f->ts && ord >= f->seq))
			return 0;
		break; /* the last one wins */
	case FIND_DEEPEST:
		/* flows bind to slices only (on_inside): an instant is never the answer */
		if (ev->kind != TFT_EV_SLICE || ev->ts_ns > f->ts || end < f->ts)
			return 0;
		if (f->found && (ev->depth < f->ev.depth ||
				 (ev->depth == f->ev.depth && ev->ts_ns < f->ev.ts_ns)))
			return 0;
		break;
	default:
		if (f->seq >= 0) {
			if (ev->ts_ns != f->ts || ord != f->seq)
				return 0;
			break;
		}
		if (ev->ts_ns > f->ts || end < f->ts)
			return 0;
		/* The latest-starting slice containing ts wins (scan order: start order; of
		 * several starting together, the last). */
		if (f->found && ev->ts_ns < f->ev.ts_ns)
			return 0;
		break;
	}
	f->found = true;
	f->ev_seq = (uint32_t)ord;
	f->ev = *ev;
	f->ev.nargs = ev->nargs > SLICE_MAX_ARGS ? SLICE_MAX_ARGS : ev->nargs;
	if (f->ev.nargs) {
		struct tft_arg *a = realloc(f->args, f->ev.nargs * sizeof(*a));
		if (!a) {
			f->status = TFT_ENOMEM;
			return TFT_ENOMEM;
		}
		memcpy(a, ev->args, f->ev.nargs * sizeof(*a));
		f->args = a;
	}
	f->ev.args = f->args;
	/* 1: stop the scan */
	return f->mode == FIND_NEXT || (f->mode == FIND_AT && f->seq >= 0) ? 1 : 0;
}

/*
 * The seq of a slice found by containing ts (FIND_AT without seq, FIND_DEEPEST): the
 * first scan may not have seen the earlier ones of its run (those that end before ts),
 * this one, over its start only, sees them all. It is the last of its run that holds ts.
 */
static int on_seq(void *ctx, const struct tft_event *ev)
{
	struct find *f = ctx;

	if (ev->kind == TFT_EV_COUNTER || (ev->flags & TFT_EVF_SUMMARY) || ev->depth != f->ev.depth ||
	    ev->ts_ns != f->ev.ts_ns)
		return 0;
	if (sat_add(ev->ts_ns, ev->dur_ns > 0 ? ev->dur_ns : 0) >= f->ts &&
	    (f->mode != FIND_DEEPEST || ev->kind == TFT_EV_SLICE))
		f->ev_seq = f->same_n;
	f->same_n++;
	return 0;
}

/* Slices enclosing the found one, per depth above it (the latest-starting wins). */
static int on_ancestor(void *ctx, const struct tft_event *ev)
{
	struct find *f = ctx;
	struct ancestor *a;

	if (ev->kind != TFT_EV_SLICE || (ev->flags & TFT_EVF_SUMMARY) || ev->depth >= f->ev.depth)
		return 0;
	if (ev->ts_ns > f->ev.ts_ns || sat_add(ev->ts_ns, ev->dur_ns > 0 ? ev->dur_ns : 0) < f->end)
		return 0;
	a = &f->anc[ev->depth];
	a->found = true;
	a->ts = ev->ts_ns;
	a->dur = ev->dur_ns;
	a->name = ev->name;
	return 0;
}

/*
 * The slice to describe, by f->mode. The previous slice is looked for in windows
 * growing back from ts (64 us, then x16), so a dense track costs one small scan.
 */
static int find_slice(struct tft_session *s, uint32_t track, const struct tft_track *tr,
		      struct find *f, struct tft_error *err)
{
	int64_t w = 65536, hi;
	int rc;

	switch (f->mode) {
	case FIND_NEXT:
		/* with seq, its later siblings at ts come first */
		if (f->seq < 0 && f->ts == INT64_MAX)
			return 0;
		rc = tft_session_scan(s, track, f->seq < 0 ? f->ts + 1 : f->ts, INT64_MAX, 0, on_candidate,
				      f, err);
		return rc > 0 ? 0 : rc;
	case FIND_PREV:
		/* with seq > 0, its earlier siblings at ts come first */
		if (f->seq <= 0 && f->ts == INT64_MIN)
			return 0;
		hi = f->seq > 0 ? f->ts : f->ts - 1;
		if (tr->min_ts_ns > tr->max_ts_ns || hi < tr->min_ts_ns)
			return 0;
		for (;;) {
			/* w is INT64_MAX once x16 would overflow: then the last round starts at the
			 * track's start, however far back (a session mixing relative and epoch times) */
			f->lo = w == INT64_MAX ? INT64_MIN : sat_add(f->ts, -w);
			if (f->lo <= tr->min_ts_ns)
				f->lo = INT64_MIN;
			f->run_any = false;
			rc = tft_session_scan(s, track, f->lo == INT64_MIN ? tr->min_ts_ns : f->lo, hi, 0,
					      on_candidate, f, err);
			if (rc < 0 || f->found || f->lo == INT64_MIN)
				return rc < 0 ? rc : 0;
			w = w > INT64_MAX / 16 ? INT64_MAX : w * 16;
		}
	default:
		rc = tft_session_scan(s, track, f->ts, f->ts, 0, on_candidate, f, err);
		if (rc < 0 || !f->found || (f->mode == FIND_AT && f->seq >= 0))
			return rc > 0 ? 0 : rc;
		return tft_session_scan(s, track, f->ev.ts_ns, f->ev.ts_ns, 0, on_seq, f, err);
	}
}

/* Add [a, b] to the cover; ranges arrive by start (scan order, clipped to the slice). */
static int cover_add(struct find *f, int64_t a, int64_t b)
{
	struct span *last = f->ncover ? &f->cover[f->ncover - 1] : NULL;

	if (last && a <= last->end) {
		if (b > last->end)
			last->end = b;
		return 0;
	}
	if (tft_grow_size_ex((void **)&f->cover, &f->cover_cap, f->ncover + 1, sizeof(*f->cover), 64, 0))
		return f->status = TFT_ENOMEM;

	f->cover[f->ncover++] = (struct span){ a, b };
	return 0;
}

/* Whether a flow end (either) of the slice's track lies in [a, b]. */
static bool holds_end(const struct find *f, int64_t a, int64_t b)
{
	const struct tft_qry_flows *ix = f->ix;
	size_t i = lower_bound(ix->src, ix->nsrc, f->ev.track, a);

	if (i < ix->nsrc && ix->src[i].track == f->ev.track && ix->src[i].ts <= b)
		return true;
	i = lower_bound(ix->dst, ix->ndst, f->ev.track, a);
	return i < ix->ndst && ix->dst[i].track == f->ev.track && ix->dst[i].ts <= b;
}

/*
 * Every event overlapping the found slice S. A flow end at t binds to the slice that
 * deepest=1 finds at t (the deepest slice holding t, the latest-starting one there,
 * the last of several starting together), so it binds to S unless a slice that comes
 * after S in that order holds t: a deeper one, or one at S's depth that starts later
 * or later in S's run. Those ranges, clipped to S, make the cover. Direct children (on
 * nesting tracks): slices one depth below S that start in it and overlap it for more
 * than 0 ns; their union is what self_ns subtracts.
 */
static int on_inside(void *ctx, const struct tft_event *ev)
{
	struct find *f = ctx;
	int64_t a, b;
	uint32_t ord = 0;
	bool after;

	if (ev->kind == TFT_EV_COUNTER || (ev->flags & TFT_EVF_SUMMARY))
		return 0;
	if (ev->depth == f->ev.depth && ev->ts_ns == f->ev.ts_ns)
		ord = f->same_n++; /* its seq, as on_seq counted S's */
	if (ev->kind != TFT_EV_SLICE)
		return 0;
	a = ev->ts_ns < f->ev.ts_ns ? f->ev.ts_ns : ev->ts_ns;
	b = sat_add(ev->ts_ns, ev->dur_ns > 0 ? ev->dur_ns : 0);
	if (b > f->end)
		b = f->end;
	if (b < a)
		return 0;
	after = ev->depth > f->ev.depth ||
		(ev->depth == f->ev.depth &&
		 (ev->ts_ns > f->ev.ts_ns || (ev->ts_ns == f->ev.ts_ns && ord > f->ev_seq)));
	/* (only where a flow end lies: memory stays with the flows, not the children) */
	if (after && f->ends_inside && holds_end(f, a, b) && cover_add(f, a, b))
		return f->status;
	if (!f->nesting || ev->depth != f->ev.depth + 1 || b == a || ev->ts_ns < f->ev.ts_ns)
		return 0;
	f->nkids++;
	/* Union of children: they arrive in start order. */
	if (a < f->covered_to)
		a = f->covered_to;
	if (b > a) {
		f->child_ns += b - a;
		f->covered_to = b;
	}
	return 0;
}

/* Whether a flow end at t binds to the found slice (instants bind none). */
static bool binds_here(const struct find *f, int64_t t)
{
	size_t lo = 0, hi = f->ncover;

	if (f->ev.kind != TFT_EV_SLICE || t < f->ev.ts_ns || t > f->end)
		return false;
	/* the last cover range starting at or before t: the ranges are disjoint */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (f->cover[mid].ts <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo == 0 || f->cover[lo - 1].end < t;
}

/* ---- the response --------------------------------------------------------- */

static void write_sid(struct tft_json_writer *w, struct tft_session *s, uint32_t id)
{
	size_t len = 0;
	const char *str = tft_session_str(s, id, &len);

	tft_json_write_str(w, str ? str : "", str ? len : 0);
}

static void write_arg(struct tft_json_writer *w, struct tft_session *s, const struct tft_arg *a)
{
	size_t len = 0;
	const char *str;

	tft_json_write_key(w, tft_session_str(s, a->key, NULL));
	switch (a->type) {
	case TFT_ARG_BOOL: tft_json_write_bool(w, a->v.i != 0); break;
	case TFT_ARG_INT: tft_json_write_int(w, a->v.i); break;
	case TFT_ARG_DOUBLE: tft_json_write_double(w, a->v.d); break;
	case TFT_ARG_STR: write_sid(w, s, a->v.str); break;
	case TFT_ARG_JSON: /* checked: the file is untrusted (tft_json_is_value) */
		str = tft_session_str(s, a->v.str, &len);
		tft_json_write_value_checked(w, str ? str : "", str ? len : 0);
		break;
	default: tft_json_write_null(w); break;
	}
}

static void write_flows(struct tft_json_writer *w, struct tft_session *s, const struct find *f,
			const struct tft_qry_flows *ix, bool out)
{
	const struct flow_end *v = out ? ix->src : ix->dst;
	size_t n = out ? ix->nsrc : ix->ndst, i, listed = 0;

	tft_json_write_begin_array(w);
	for (i = lower_bound(v, n, f->ev.track, f->ev.ts_ns);
	     i < n && v[i].track == f->ev.track && v[i].ts <= f->end && listed < SLICE_MAX_FLOWS; i++) {
		const struct tft_flow *fl = &ix->flows[v[i].flow];
		uint32_t other = out ? fl->dst_track : fl->src_track;
		int64_t ots = out ? fl->dst_ts_ns : fl->src_ts_ns;

		if (!binds_here(f, v[i].ts))
			continue;
		listed++;
		tft_json_write_begin_object(w);
		tft_json_write_key(w, "flow_id");
		tft_json_write_uint(w, fl->flow_id);
		tft_json_write_key(w, "name");
		write_sid(w, s, fl->name);
		tft_json_write_key(w, "cat");
		write_sid(w, s, fl->cat);
		tft_json_write_key(w, "track");
		if (other == TFT_NONE)
			tft_json_write_null(w);
		else
			tft_json_write_uint(w, other);
		tft_json_write_key(w, "ts");
		if (other == TFT_NONE)
			tft_json_write_null(w);
		else
			tft_json_write_int(w, ots);
		tft_json_write_key(w, "unmatched");
		tft_json_write_bool(w, (fl->flags & TFT_FLOWF_UNMATCHED) != 0);
		tft_json_write_end_object(w);
	}
	tft_json_write_end_array(w);
}

/* The step holding ts on the track's process (one of that process before a global one), or NULL. */
static const struct tft_step *step_at(struct tft_session *s, const struct tft_track *tr, int64_t ts)
{
	uint32_t n = tft_session_step_count(s);
	const struct tft_step *best = NULL;

	for (uint32_t i = 0; i < n; i++) {
		const struct tft_step *st = tft_session_step(s, i);
		if (!st || ts < st->start_ns || ts >= sat_add(st->start_ns, st->dur_ns))
			continue;
		if (st->process != TFT_NONE && st->process != tr->process)
			continue;
		/* Prefer the step of this process over a global one. */
		if (!best || (best->process == TFT_NONE && st->process != TFT_NONE))
			best = st;
	}
	return best;
}

static void write_graph(struct tft_json_writer *w, struct tft_session *s,
			const struct tft_event *ev, const struct tft_step *st);

static int write_slice(struct tft_json_writer *w, struct tft_session *s,
		       struct find *f, const struct tft_qry_flows *ix)
{
	const struct tft_track *tr = tft_session_track(s, f->ev.track);
	const struct tft_process *pr = tr ? tft_session_process(s, tr->process) : NULL;
	const struct tft_step *st = tr ? step_at(s, tr, f->ev.ts_ns) : NULL; /* (once: step, graph) */
	const char *kind = tr ? tft_track_kind_name((int)tr->kind) : "";

	tft_json_write_begin_object(w);
	tft_json_write_key(w, "name");
	write_sid(w, s, f->ev.name);
	tft_json_write_key(w, "cat");
	write_sid(w, s, f->ev.cat);
	tft_json_write_key(w, "kind");
	tft_json_write_cstr(w, f->ev.kind == TFT_EV_INSTANT ? "instant" : "slice");
	tft_json_write_key(w, "ts");
	tft_json_write_int(w, f->ev.ts_ns);
	tft_json_write_key(w, "dur");
	tft_json_write_int(w, f->ev.dur_ns);
	tft_json_write_key(w, "depth");
	tft_json_write_uint(w, f->ev.depth);
	tft_json_write_key(w, "seq");
	tft_json_write_uint(w, f->ev_seq);
	tft_json_write_key(w, "self_ns");
	tft_json_write_int(w, f->ev.dur_ns - f->child_ns);
	tft_json_write_key(w, "children");
	tft_json_write_uint(w, f->nkids);
	tft_json_write_key(w, "unclosed");
	tft_json_write_bool(w, (f->ev.flags & TFT_EVF_UNCLOSED) != 0);
	tft_json_write_key(w, "ancestors");
	tft_json_write_begin_array(w);
	for (uint32_t d = 0; f->anc && d < f->ev.depth; d++) {
		if (!f->anc[d].found)
			continue;
		tft_json_write_begin_object(w);
		tft_json_write_key(w, "name");
		write_sid(w, s, f->anc[d].name);
		tft_json_write_key(w, "ts");
		tft_json_write_int(w, f->anc[d].ts);
		tft_json_write_key(w, "dur");
		tft_json_write_int(w, f->anc[d].dur);
		tft_json_write_key(w, "depth");
		tft_json_write_uint(w, d);
		tft_json_write_end_object(w);
	}
	tft_json_write_end_array(w);
	tft_json_write_key(w, "track");
	tft_json_write_begin_object(w);
	tft_json_write_key(w, "id");
	tft_json_write_uint(w, f->ev.track);
	tft_json_write_key(w, "name");
	write_sid(w, s, tr ? tr->name : 0);
	tft_json_write_key(w, "kind");
	tft_json_write_cstr(w, kind ? kind : "");
	tft_json_write_end_object(w);
	tft_json_write_key(w, "process");
	if (pr) {
		tft_json_write_begin_object(w);
		tft_json_write_key(w, "id");
		tft_json_write_uint(w, pr->id);
		tft_json_write_key(w, "name");
		write_sid(w, s, pr->name);
		tft_json_write_key(w, "pid");
		tft_json_write_int(w, pr->pid);
		tft_json_write_key(w, "rank");
		tft_json_write_int(w, pr->rank);
		tft_json_write_end_object(w);
	} else {
		tft_json_write_null(w);
	}
	tft_json_write_key(w, "args");
	tft_json_write_begin_object(w);
	for (uint16_t i = 0; i < f->ev.nargs; i++)
		write_arg(w, s, &f->ev.args[i]);
	tft_json_write_end_object(w);
	tft_json_write_key(w, "step");
	if (st)
		tft_json_write_int(w, st->index);
	else
		tft_json_write_null(w);
	tft_json_write_key(w, "flows_out");
	write_flows(w, s, f, ix, true);
	tft_json_write_key(w, "flows_in");
	write_flows(w, s, f, ix, false);
	write_graph(w, s, &f->ev, st);
	tft_json_write_end_object(w);
	return w->status;
}

/* ---- the graph nodes a slice joins ------------------------------------------- */

struct graph_out {
	struct tft_json_writer *w;
	int n;
	const struct tft_step *st; /* the slice's step, or NULL */
	int pass;                  /* with a step: 0, rows of graphs linked to it; 1, the others */
};

static int on_graph_node(void *ctx, const struct tft_graph_node *n, int64_t graph_id)
{
	struct graph_out *g = ctx;

	/* the graph's step as the importer linked it (graph_steps) */
	if (g->st) {
		bool own = n->step_start != TFT_GRAPH_NO_COST && n->step_start == g->st->start_ns &&
			   (n->step_process == TFT_GRAPH_NO_COST || n->step_process == g->st->process);

		if (own != (g->pass == 0))
			return 0;
	}
	tft_export_graph_node(g->w, n, graph_id);
	return ++g->n >= SLICE_MAX_GRAPH_NODES;
}

/* The slice's string arg `key`, or NULL. */
static const char *arg_text(struct tft_session *s, const struct tft_event *ev, const char *key,
			    size_t *len)
{
	for (uint16_t i = 0; i < ev->nargs; i++) {
		const char *k = tft_session_str(s, ev->args[i].key, NULL);

		if (k && strcmp(k, key) == 0 && ev->args[i].type == TFT_ARG_STR)
			return tft_session_str(s, ev->args[i].v.str, len);
	}
	return NULL;
}

/*
 * The node name in "scope/node:Op" (a TF kernel or XSpace op name: the op
 * type after the last ':' past the last '/'), else the text itself.
 */
static size_t node_part(const char *p, size_t len)
{
	const char *slash = memrchr(p, '/', len);
	const char *base = slash ? slash + 1 : p;
	const char *colon = memrchr(base, ':', len - (size_t)(base - p));

	return colon && colon > p ? (size_t)(colon - p) : len;
}

/*
 * "graph": the graph nodes of the slice. The keys that name its node come
 * first, and the first that finds any row wins: its `node` arg (a GPU
 * kernel's op, RunMetadata), XSpace's `long_name` and `tf_op` without their
 * ":Op" suffix ("scope/Cast:Cast"), tf.timeline's `name` arg. Only a slice
 * with none of them is looked up by its name, then its name without ":Op"
 * (TF's "conv1/Conv2D:Conv2D" kernels): XSpace and tf.timeline name a slice
 * by its op type, which would join any node called "Cast" or "Mul".
 * Rows of the graphs the importer linked to the slice's step (graph_steps)
 * come first: each step of a RunMetadata import brings its own graphs, with
 * the same node names.
 * Written only when the session holds graph nodes; a failed lookup lists none.
 */
static void write_graph(struct tft_json_writer *w, struct tft_session *s,
			const struct tft_event *ev, const struct tft_step *st)
{
	const char *m = tft_session_meta(s, "graph_nodes");
	struct graph_out g = {w, 0, st, 0};
	struct {
		const char *p;
		size_t len;
	} key[6];
	int nk = 0;
	size_t len = 0;
	const char *t;

	if (!m || !strcmp(m, "0"))
		return;
	if ((t = arg_text(s, ev, "node", &len)) && len)
		key[nk].p = t, key[nk++].len = len;
	if ((t = arg_text(s, ev, "long_name", &len)) && len)
		key[nk].p = t, key[nk++].len = node_part(t, len);
	if ((t = arg_text(s, ev, "tf_op", &len)) && len)
		key[nk].p = t, key[nk++].len = node_part(t, len);
	if ((t = arg_text(s, ev, "name", &len)) && len)
		key[nk].p = t, key[nk++].len = len;
	if (!nk && (t = tft_session_str(s, ev->name, &len)) && len) {
		key[nk].p = t, key[nk++].len = len;
		if (node_part(t, len) < len)
			key[nk].p = t, key[nk++].len = node_part(t, len);
	}
	tft_json_write_key(w, "graph");
	tft_json_write_begin_array(w);
	for (int i = 0; i < nk && !g.n; i++) {
		char name[1024];
		struct tft_error err;

		/* (a key holding a NUL names no node: SQL would compare only its head) */
		if (!key[i].len || key[i].len >= sizeof(name) || memchr(key[i].p, '\0', key[i].len))
			continue;
		memcpy(name, key[i].p, key[i].len);
		name[key[i].len] = '\0';
		for (g.pass = 0; g.pass < (g.st ? 2 : 1) && g.n < SLICE_MAX_GRAPH_NODES; g.pass++) {
			tft_error_clear(&err);
			tft_session_graph_lookup(s, name, on_graph_node, &g, &err);
		}
	}
	tft_json_write_end_array(w);
}

/* ---- the answer ------------------------------------------------------------ */

/* The parameters that need no session, in the order they are refused: f (reset) and *track. */
static int check_args(const struct tft_query *q, struct find *f, int64_t *track, struct tft_qry_err *e)
{
	int64_t ts, depth, deepest, seq;
	const char *nav;
	size_t nav_len = 0;

	if (!tft_query_get(q, "track", NULL) || !tft_query_get(q, "ts", NULL))
		return tft_qry_fail(e, 400, "track and ts are required");
	if (tft_query_get_i64(q, "track", 0, UINT32_MAX - 1, 0, track) != 0 ||
	    tft_query_get_i64(q, "ts", INT64_MIN, INT64_MAX, 0, &ts) != 0 ||
	    tft_query_get_i64(q, "depth", 0, UINT32_MAX - 1, 0, &depth) != 0)
		return tft_qry_fail(e, 400, "track, ts and depth must be integers");
	if (tft_query_get_i64(q, "deepest", 0, 1, 0, &deepest) != 0)
		return tft_qry_fail(e, 400, "deepest must be 0 or 1");
	if (tft_query_get_i64(q, "seq", 0, INT64_MAX, -1, &seq) != 0)
		return tft_qry_fail(e, 400, "seq must be a non-negative integer");
	memset(f, 0, sizeof(*f));
	f->ts = ts;
	f->depth = (uint32_t)depth;
	f->seq = seq;
	f->mode = deepest ? FIND_DEEPEST : FIND_AT;
	nav = tft_query_get(q, "nav", &nav_len);
	if (nav && nav_len == 4 && memcmp(nav, "next", 4) == 0)
		f->mode = FIND_NEXT;
	else if (nav && nav_len == 4 && memcmp(nav, "prev", 4) == 0)
		f->mode = FIND_PREV;
	else if (nav)
		return tft_qry_fail(e, 400, "nav must be next or prev");
	if (deepest && nav)
		return tft_qry_fail(e, 400, "deepest=1 and nav exclude each other");
	if (deepest && seq >= 0)
		return tft_qry_fail(e, 400, "deepest=1 and seq exclude each other");
	return 0;
}

int tft_qry_slice_check(const struct tft_query *q, struct tft_qry_err *e)
{
	struct find f;
	int64_t track;

	return check_args(q, &f, &track, e);
}

/* The found slice's children, the flow ends that bind to it and its ancestors (0 or < 0). */
static int describe(struct tft_session *s, uint32_t track, const struct tft_track *tr, struct find *f,
		    const struct tft_qry_flows *ix, struct tft_error *err)
{
	int rc = 0;

	f->end = sat_add(f->ev.ts_ns, f->ev.dur_ns > 0 ? f->ev.dur_ns : 0);
	f->covered_to = f->ev.ts_ns;
	f->nesting = tft_track_nests(tr->kind, tr->flags);
	f->same_n = 0;
	f->ix = ix;
	f->ends_inside = holds_end(f, f->ev.ts_ns, f->end);
	/* zero-duration slices too: a later one of their run may hold their flows */
	if (f->ev.kind == TFT_EV_SLICE)
		rc = tft_session_scan(s, track, f->ev.ts_ns, f->end, 0, on_inside, f, err);
	if (rc >= 0 && f->nesting && f->ev.depth > 0 && f->ev.depth <= SLICE_MAX_ANCESTORS) {
		f->anc = calloc(f->ev.depth, sizeof(*f->anc));
		if (!f->anc)
			rc = tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
		else
			rc = tft_session_scan(s, track, f->ev.ts_ns, f->ev.ts_ns, 0, on_ancestor, f, err);
	}
	if (rc >= 0 && f->status)
		rc = f->status;
	return rc;
}

int tft_qry_slice(struct tft_session *s, tft_qry_flows_get_fn flows, void *flows_ctx,
		  const struct tft_query *q, struct tft_json_writer *w,
		  struct tft_qry_err *e)
{
	const struct tft_qry_flows *ix = NULL;
	const struct tft_track *tr;
	struct tft_error err;
	struct find f;
	int64_t track;
	int rc;

	if (check_args(q, &f, &track, e) != 0)
		return (int)e->status;
	tft_error_clear(&err);
	tr = tft_session_track(s, (uint32_t)track);
	if (!tr)
		return tft_qry_fail(e, 404, "no such track");
	/* a depth the track never reaches has no next or previous slice: no scan of the rest */
	if ((f.mode == FIND_NEXT || f.mode == FIND_PREV) && f.depth > tr->max_depth)
		rc = 0;
	else
		rc = find_slice(s, (uint32_t)track, tr, &f, &err);
	if (rc >= 0 && !f.found) {
		free(f.args);
		return tft_qry_fail(e, 404, f.mode == FIND_NEXT   ? "no later slice at this depth"
					    : f.mode == FIND_PREV ? "no earlier slice at this depth"
								  : "no slice at this time and depth");
	}
	if (rc >= 0) {
		ix = flows(flows_ctx, s, &err);
		if (!ix)
			rc = err.code ? err.code : TFT_ENOMEM;
	}
	if (rc >= 0)
		rc = describe(s, (uint32_t)track, tr, &f, ix, &err);
	if (rc >= 0)
		rc = write_slice(w, s, &f, ix);
	free(f.args);
	free(f.cover);
	free(f.anc);
	return rc < 0 ? tft_qry_fail_status(e, rc, &err) : 0;
}
