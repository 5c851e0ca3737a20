/* SPDX-License-Identifier: MIT */
/*
 * A view of a job (job/job.h): the tft_session_ops that answer each session
 * call over the ranks' files, renumbering tracks, processes and strings
 * into the job's and moving times onto the reference rank's clock. Rank
 * files are opened on first use and the least recently used closed past
 * max_open.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "job/job_int.h"
#include "store/chunk_stats.h"

struct view {
	struct tft_job *job;            /* borrowed (owned when owns_job) */
	bool raw, owns_job;
	struct tft_session **sess;      /* owned: [rank index] its file, or NULL */
	uint64_t *used;                 /* owned: [rank index] last use (LRU) */
	uint64_t tick;
	uint32_t nopen;
	struct tft_clock_map *maps;     /* owned: [rank index] the clock each rank is shown on */
	struct tft_track *tracks;       /* owned: the job's tracks, times moved */
	struct tft_step *steps;         /* owned: every rank's steps, times moved, by start */
	uint8_t *blob;                  /* owned: a rewritten statistics blob */
	size_t cap_blob;
	char *format, *producer;        /* owned: the ranks' formats and producers, joined */
};

static const struct tft_session_ops view_ops;

/* ---- rank files -------------------------------------------------------------------------- */

static struct tft_session *rank_session(struct view *v, uint32_t ri, struct tft_error *err)
{
	struct tft_job *j = v->job;

	v->used[ri] = ++v->tick;
	if (v->sess[ri])
		return v->sess[ri];
	if (v->nopen >= j->max_open) {
		uint32_t lru = UINT32_MAX;
		/* (rank index 0 stays: its meta strings are handed out) */
		for (uint32_t i = 1; i < j->n; i++)
			if (v->sess[i] && i != ri && (lru == UINT32_MAX || v->used[i] < v->used[lru]))
				lru = i;
		if (lru != UINT32_MAX) {
			tft_session_close(v->sess[lru]);
			v->sess[lru] = NULL;
			v->nopen--;
		}
	}
	v->sess[ri] = tft_session_open(j->r[ri].path, err);
	if (!v->sess[ri]) {
		tft_error_set_file(err, j->r[ri].path);
		return NULL;
	}
	v->nopen++;
	return v->sess[ri];
}

/* The rank index and the file's id of a job track; false if unknown. */
static bool local_track(const struct view *v, uint32_t track, uint32_t *ri, uint32_t *local)
{
	const struct tft_job *j = v->job;

	if (track >= j->ntracks)
		return false;
	*ri = j->track_rank[track];
	*local = track - j->r[*ri].track_base;
	return true;
}

static int64_t shown(const struct view *v, uint32_t ri, int64_t t)
{
	return tft_clock_aligned(&v->maps[ri], t);
}

/* ---- tables ------------------------------------------------------------------------------- */

static void v_close(void *impl)
{
	struct view *v = impl;

	if (!v)
		return;
	for (uint32_t i = 0; v->sess && i < v->job->n; i++)
		tft_session_close(v->sess[i]);
	free(v->sess);
	free(v->used);
	free(v->maps);
	free(v->tracks);
	free(v->steps);
	free(v->blob);
	free(v->format);
	free(v->producer);
	if (v->owns_job)
		tft_job_close(v->job);
	free(v);
}

static int v_refresh(void *impl, struct tft_error *err)
{
	(void)impl;
	(void)err;
	return 0; /* a job is read once its ranks have written their files */
}

static uint32_t v_process_count(void *impl)
{
	return ((struct view *)impl)->job->nprocs;
}

static const struct tft_process *v_process(void *impl, uint32_t id)
{
	struct view *v = impl;

	return id < v->job->nprocs ? &v->job->procs[id] : NULL;
}

static uint32_t v_track_count(void *impl)
{
	return ((struct view *)impl)->job->ntracks;
}

static const struct tft_track *v_track(void *impl, uint32_t id)
{
	struct view *v = impl;

	return id < v->job->ntracks ? &v->tracks[id] : NULL;
}

static const char *v_str(void *impl, uint32_t id, size_t *len)
{
	return tft_job_str(((struct view *)impl)->job, id, len);
}

static uint32_t v_string_count(void *impl)
{
	struct view *v = impl;
	struct tft_job *j = v->job;

	/* every rank's strings get their ids first: a reader looking at all ids sees all */
	if (!atomic_load(&j->all_strings)) {
		bool all = true;
		for (uint32_t i = 0; i < j->n; i++) {
			struct tft_session *s = rank_session(v, i, NULL);
			if (!s) {
				all = false;
				continue;
			}
			for (uint32_t k = 1; k < j->r[i].nstr; k++)
				tft_job_str_id(j, i, s, k);
		}
		if (all)
			atomic_store(&j->all_strings, 1);
	}
	return tft_job_string_count(j);
}

static const char *v_meta(void *impl, const char *key)
{
	struct view *v = impl;
	struct tft_job *j = v->job;
	struct tft_session *s;

	if (strcmp(key, "job_ranks") == 0)
		return j->meta_ranks;
	if (strcmp(key, "job_size") == 0)
		return j->meta_size;
	if (strcmp(key, "job_id") == 0)
		return j->meta_id;
	if (strcmp(key, "job_dir") == 0)
		return j->dir;
	if (strcmp(key, "job_clock") == 0)
		return v->raw ? NULL : j->meta_clock;
	if (strcmp(key, "job_clock_estimate") == 0)
		return v->raw ? j->meta_estimate : j->meta_clock;
	if (strcmp(key, "job_comm") == 0)
		return tft_job_comm_ready(j) ? j->meta_comm : NULL; /* (none while the pass runs) */
	if (strcmp(key, "format") == 0)
		return v->format;
	if (strcmp(key, "producer") == 0)
		return v->producer;
	if (strcmp(key, "clock_sync") == 0)
		return NULL; /* (each rank's own: the job's is job_clock) */
	s = rank_session(v, 0, NULL);
	return s ? tft_session_meta(s, key) : NULL;
}

static uint32_t v_step_count(void *impl)
{
	return ((struct view *)impl)->job->nsteps;
}

static const struct tft_step *v_step(void *impl, uint32_t i)
{
	struct view *v = impl;

	return i < v->job->nsteps ? &v->steps[i] : NULL;
}

/* A job directory holds no graph nodes of its own (each rank's stay in its file). */
static int v_graph_lookup(void *impl, const char *name, tft_graph_node_fn fn, void *ctx,
			  struct tft_error *err)
{
	return 0;
}

static void v_get_summary(void *impl, struct tft_session_summary *out)
{
	struct view *v = impl;
	struct tft_job *j = v->job;

	memset(out, 0, sizeof(*out));
	out->format = v->format ? v->format : "";
	out->producer = v->producer ? v->producer : "";
	out->processes = j->nprocs;
	out->tracks = j->ntracks;
	tft_session_summary_tracks(out, v->tracks, j->ntracks);
	out->flows = tft_job_comm_ready(j) ? j->nxflows : 0; /* (the matched ones once matched) */
	for (uint32_t i = 0; i < j->n; i++) {
		out->flows += j->r[i].flows;
		out->dropped += j->r[i].dropped;
		out->unmatched_flows += j->r[i].unmatched_flows;
		out->unclosed_slices += j->r[i].unclosed_slices;
	}
	out->steps = j->nsteps;
}

/* ---- events ---------------------------------------------------------------------------- */

struct scan_ctx {
	struct view *v;
	uint32_t ri, track;
	struct tft_session *s;
	int64_t t0, t1;          /* the window in the view's time */
	tft_event_fn fn;
	void *ctx;
	struct tft_arg *args;    /* owned: the event's args renumbered */
	uint32_t cap_args;
	int status;
};

static int on_event(void *c, const struct tft_event *ev)
{
	struct scan_ctx *sc = c;
	struct tft_job *j = sc->v->job;
	struct tft_event e = *ev;
	int64_t end;

	e.ts_ns = shown(sc->v, sc->ri, ev->ts_ns);
	if (ev->dur_ns > 0) {
		end = __builtin_add_overflow(ev->ts_ns, ev->dur_ns, &end) ? INT64_MAX : end;
		end = shown(sc->v, sc->ri, end);
		e.dur_ns = end > e.ts_ns ? end - e.ts_ns : 0;
	} else {
		end = e.ts_ns;
	}
	if (end < sc->t0 || e.ts_ns > sc->t1)
		return 0; /* (the raw window was widened by the rounding of the map) */
	e.track = sc->track;
	e.name = tft_job_str_id(j, sc->ri, sc->s, ev->name);
	e.cat = tft_job_str_id(j, sc->ri, sc->s, ev->cat);
	if (ev->nargs) {
		if (tft_grow((void **)&sc->args, &sc->cap_args, ev->nargs, sizeof(*sc->args)))
			return sc->status = TFT_ENOMEM;
		for (uint16_t i = 0; i < ev->nargs; i++) {
			sc->args[i] = ev->args[i];
			sc->args[i].key = tft_job_str_id(j, sc->ri, sc->s, ev->args[i].key);
			if (ev->args[i].type == TFT_ARG_STR || ev->args[i].type == TFT_ARG_JSON)
				sc->args[i].v.str = tft_job_str_id(j, sc->ri, sc->s, ev->args[i].v.str);
		}
		e.args = sc->args;
	}
	return sc->fn(sc->ctx, &e);
}

static int scan_setup(struct view *v, uint32_t track, struct scan_ctx *sc, uint32_t *local,
		      struct tft_error *err)
{
	memset(sc, 0, sizeof(*sc));
	if (!local_track(v, track, &sc->ri, local))
		return tft_error_set(err, TFT_EINVAL, -1, "unknown track %u", track);
	sc->v = v;
	sc->track = track;
	sc->s = rank_session(v, sc->ri, err);
	if (!sc->s)
		return err && err->code ? err->code : TFT_EIO;
	return 0;
}

static int v_scan(void *impl, uint32_t track, int64_t t0, int64_t t1, int64_t res, tft_event_fn fn,
		  void *ctx, struct tft_error *err)
{
	struct view *v = impl;
	struct scan_ctx sc;
	uint32_t local;
	int64_t r0, r1;
	int rc;

	if ((rc = scan_setup(v, track, &sc, &local, err)))
		return rc;
	if (!fn)
		return tft_error_set(err, TFT_EINVAL, -1, "unknown track %u", track);
	sc.t0 = t0;
	sc.t1 = t1;
	sc.fn = fn;
	sc.ctx = ctx;
	/* the window on the rank's clock, a few ns wider for the map's rounding */
	r0 = tft_clock_raw(&v->maps[sc.ri], t0);
	r1 = tft_clock_raw(&v->maps[sc.ri], t1);
	if (r0 != INT64_MIN)
		r0 = r0 > INT64_MIN + 4 ? r0 - 4 : INT64_MIN;
	if (r1 != INT64_MAX)
		r1 = r1 < INT64_MAX - 4 ? r1 + 4 : INT64_MAX;
	rc = tft_session_scan(sc.s, local, r0, r1, res, on_event, &sc, err);
	free(sc.args);
	if (sc.status)
		return tft_error_set(err, sc.status, -1, "out of memory");
	return rc;
}

static uint32_t v_raw_chunk_count(void *impl, uint32_t track)
{
	struct view *v = impl;
	uint32_t ri, local;
	struct tft_session *s;

	if (!local_track(v, track, &ri, &local) || !(s = rank_session(v, ri, NULL)))
		return 0;
	return tft_session_raw_chunk_count(s, local);
}

static void v_raw_chunk(void *impl, uint32_t track, uint32_t i, int64_t *t_min, int64_t *t_max, uint32_t *n)
{
	struct view *v = impl;
	uint32_t ri, local;
	struct tft_session *s;

	*t_min = *t_max = 0;
	*n = 0;
	if (!local_track(v, track, &ri, &local) || !(s = rank_session(v, ri, NULL)))
		return;
	tft_session_raw_chunk(s, local, i, t_min, t_max, n);
	*t_min = shown(v, ri, *t_min);
	*t_max = shown(v, ri, *t_max);
}

static int v_scan_raw_chunk(void *impl, uint32_t track, uint32_t i, tft_event_fn fn, void *ctx,
			    struct tft_error *err)
{
	struct view *v = impl;
	struct scan_ctx sc;
	uint32_t local;
	int rc;

	if ((rc = scan_setup(v, track, &sc, &local, err)))
		return rc;
	sc.t0 = INT64_MIN;
	sc.t1 = INT64_MAX;
	sc.fn = fn;
	sc.ctx = ctx;
	rc = tft_session_scan_raw_chunk(sc.s, local, i, on_event, &sc, err);
	free(sc.args);
	if (sc.status)
		return tft_error_set(err, sc.status, -1, "out of memory");
	return rc;
}

static void v_set_cache_bytes(void *impl, size_t bytes)
{
	struct view *v = impl;

	for (uint32_t i = 0; i < v->job->n; i++)
		if (v->sess[i])
			tft_session_set_cache_bytes(v->sess[i], bytes);
}

/* ---- stored statistics: the blobs renumbered and moved -------------------------------------- */

static int v_has_chunk_stats(void *impl)
{
	struct view *v = impl;

	for (uint32_t i = 0; i < v->job->n; i++)
		if (!v->job->r[i].has_cstats)
			return 0;
	return 1;
}

struct blob_ctx {
	struct scan_ctx sc;
	tft_chunk_stats_fn fn;
	void *ctx;
	struct tft_error *err;
	int status;
};

static int on_blob(void *c, uint32_t i, const uint8_t *blob, size_t len)
{
	struct blob_ctx *b = c;
	struct view *v = b->sc.v;
	struct tft_job *j = v->job;
	struct tft_cstats cs;
	size_t out;
	int rc = tft_cstats_decode(&cs, blob, len, j->r[b->sc.ri].nstr, b->err);

	if (rc) {
		tft_cstats_fini(&cs);
		return b->status = rc;
	}
	for (uint32_t k = 0; k < cs.ne; k++) {
		cs.e[k].name = tft_job_str_id(j, b->sc.ri, b->sc.s, cs.e[k].name);
		cs.e[k].cat = tft_job_str_id(j, b->sc.ri, b->sc.s, cs.e[k].cat);
	}
	if (cs.nevents) {
		cs.first_ts = shown(v, b->sc.ri, cs.first_ts);
		cs.last_ts = shown(v, b->sc.ri, cs.last_ts);
	}
	rc = tft_cstats_encode(&cs, &v->blob, &v->cap_blob, &out);
	tft_cstats_fini(&cs);
	if (rc)
		return b->status = tft_error_set(b->err, rc, -1, "out of memory");
	return b->fn(b->ctx, i, v->blob, out);
}

static int v_stats(struct view *v, uint32_t track, bool whole, tft_chunk_stats_fn fn, void *ctx,
		   struct tft_error *err)
{
	struct blob_ctx b = { .fn = fn, .ctx = ctx, .err = err };
	uint32_t local;
	int rc;

	if ((rc = scan_setup(v, track, &b.sc, &local, err)))
		return rc;
	rc = whole ? tft_session_track_stats(b.sc.s, local, on_blob, &b, err)
		   : tft_session_chunk_stats(b.sc.s, local, on_blob, &b, err);
	return b.status ? b.status : rc;
}

static int v_track_stats(void *impl, uint32_t track, tft_chunk_stats_fn fn, void *ctx, struct tft_error *err)
{
	return v_stats(impl, track, true, fn, ctx, err);
}

static int v_chunk_stats(void *impl, uint32_t track, tft_chunk_stats_fn fn, void *ctx, struct tft_error *err)
{
	return v_stats(impl, track, false, fn, ctx, err);
}

static int v_chunk_stats_complete(void *impl, uint32_t track, struct tft_error *err)
{
	struct view *v = impl;
	struct scan_ctx sc;
	uint32_t local;
	int rc;

	if ((rc = scan_setup(v, track, &sc, &local, err)))
		return rc;
	return tft_session_chunk_stats_complete(sc.s, local, err);
}

/* ---- flows -------------------------------------------------------------------------------- */

struct flow_ctx {
	struct view *v;
	uint32_t ri;
	struct tft_session *s;
	tft_flow_fn fn;
	void *ctx;
};

static int64_t flow_time(const struct view *v, uint32_t track, int64_t t)
{
	return track < v->job->ntracks ? shown(v, v->job->track_rank[track], t) : t;
}

static int on_flow(void *c, const struct tft_flow *f)
{
	struct flow_ctx *fc = c;
	struct tft_job *j = fc->v->job;
	const struct job_rank *r = &j->r[fc->ri];
	struct tft_flow g = *f;

	g.name = tft_job_str_id(j, fc->ri, fc->s, f->name);
	g.cat = tft_job_str_id(j, fc->ri, fc->s, f->cat);
	if (f->src_track != TFT_NONE)
		g.src_track = f->src_track < r->ntracks ? r->track_base + f->src_track : TFT_NONE;
	if (f->dst_track != TFT_NONE)
		g.dst_track = f->dst_track < r->ntracks ? r->track_base + f->dst_track : TFT_NONE;
	if (g.src_track != TFT_NONE)
		g.src_ts_ns = flow_time(fc->v, g.src_track, f->src_ts_ns);
	if (g.dst_track != TFT_NONE)
		g.dst_ts_ns = flow_time(fc->v, g.dst_track, f->dst_ts_ns);
	return fc->fn(fc->ctx, &g);
}

static int v_flows(void *impl, tft_flow_fn fn, void *ctx, struct tft_error *err)
{
	struct view *v = impl;
	struct tft_job *j = v->job;
	int rc = 0;

	for (uint32_t i = 0; i < j->n && !rc; i++) {
		struct flow_ctx fc = { v, i, NULL, fn, ctx };
		if (!j->r[i].flows)
			continue;
		if (!(fc.s = rank_session(v, i, err)))
			return err && err->code ? err->code : TFT_EIO;
		rc = tft_session_flows(fc.s, on_flow, &fc, err);
	}
	if (!rc && (rc = tft_job_wait_comm(j, err)))
		return rc;
	for (uint32_t i = 0; i < j->nxflows && !rc; i++) {
		struct tft_flow f = j->xflows[i];
		f.src_ts_ns = flow_time(v, f.src_track, f.src_ts_ns);
		f.dst_ts_ns = flow_time(v, f.dst_track, f.dst_ts_ns);
		rc = fn(ctx, &f);
	}
	return rc;
}

static const struct tft_session_ops view_ops = {
	.close = v_close,
	.refresh = v_refresh,
	.get_summary = v_get_summary,
	.process_count = v_process_count,
	.process = v_process,
	.track_count = v_track_count,
	.track = v_track,
	.str = v_str,
	.string_count = v_string_count,
	.meta = v_meta,
	.scan = v_scan,
	.flows = v_flows,
	.set_cache_bytes = v_set_cache_bytes,
	.raw_chunk_count = v_raw_chunk_count,
	.raw_chunk = v_raw_chunk,
	.scan_raw_chunk = v_scan_raw_chunk,
	.has_chunk_stats = v_has_chunk_stats,
	.track_stats = v_track_stats,
	.chunk_stats_complete = v_chunk_stats_complete,
	.chunk_stats = v_chunk_stats,
	.step_count = v_step_count,
	.step = v_step,
	.graph_lookup = v_graph_lookup,
};

/* ---- making a view ------------------------------------------------------------------------- */

static int cmp_step(const void *a, const void *b)
{
	const struct tft_step *x = a, *y = b;

	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	if (x->process != y->process)
		return x->process < y->process ? -1 : 1;
	return (x->index > y->index) - (x->index < y->index);
}

/* The ranks' values of a meta key, each once, joined with '+' ("kineto+tftracer"). */
static char *joined(const struct tft_job *j, bool producer)
{
	size_t cap = 1, len = 0;
	char *out;

	for (uint32_t i = 0; i < j->n; i++) {
		const char *s = producer ? j->r[i].producer : j->r[i].format;
		cap += s ? strlen(s) + 1 : 0;
	}
	out = malloc(cap);
	if (!out)
		return NULL;
	out[0] = '\0';
	for (uint32_t i = 0; i < j->n; i++) {
		const char *s = producer ? j->r[i].producer : j->r[i].format;
		bool seen = false;
		if (!s || !*s)
			continue;
		for (uint32_t k = 0; k < i && !seen; k++) {
			const char *t = producer ? j->r[k].producer : j->r[k].format;
			seen = t && strcmp(s, t) == 0;
		}
		if (seen)
			continue;
		len += (size_t)snprintf(out + len, cap - len, "%s%s", len ? "+" : "", s);
	}
	return out;
}

struct tft_session *tft_job_view(struct tft_job *job, bool raw_clock, bool owns_job, struct tft_error *err)
{
	struct view *v = calloc(1, sizeof(*v));

	if (!v)
		goto nomem;
	v->job = job;
	v->raw = raw_clock;
	v->owns_job = owns_job;
	v->sess = calloc(job->n, sizeof(*v->sess));
	v->used = calloc(job->n, sizeof(*v->used));
	v->maps = calloc(job->n, sizeof(*v->maps));
	v->tracks = malloc(((size_t)job->ntracks + 1) * sizeof(*v->tracks));
	v->steps = malloc(((size_t)job->nsteps + 1) * sizeof(*v->steps));
	v->format = joined(job, false);
	v->producer = joined(job, true);
	if (!v->sess || !v->used || !v->maps || !v->tracks || !v->steps || !v->format || !v->producer)
		goto nomem;
	for (uint32_t i = 0; i < job->n; i++)
		v->maps[i] = raw_clock ? tft_clock_identity() : job->clock[i];
	for (uint32_t i = 0; i < job->ntracks; i++) {
		struct tft_track t = job->tracks[i];
		uint32_t ri = job->track_rank[i];
		if (t.min_ts_ns <= t.max_ts_ns) {
			t.min_ts_ns = shown(v, ri, t.min_ts_ns);
			t.max_ts_ns = shown(v, ri, t.max_ts_ns);
		}
		v->tracks[i] = t;
	}
	for (uint32_t i = 0; i < job->nsteps; i++) {
		struct tft_step st = job->steps[i];
		uint32_t ri = job->step_rank[i];
		int64_t end = __builtin_add_overflow(st.start_ns, st.dur_ns, &end) ? INT64_MAX : end;
		st.start_ns = shown(v, ri, st.start_ns);
		end = shown(v, ri, end);
		st.dur_ns = end > st.start_ns ? end - st.start_ns : 0;
		if (st.process == TFT_NONE && job->r[ri].nprocs)
			st.process = job->r[ri].proc_base; /* (a rank file's step is its rank's) */
		v->steps[i] = st;
	}
	if (job->nsteps)
		qsort(v->steps, job->nsteps, sizeof(*v->steps), cmp_step);
	return tft_session_open_ops(&view_ops, v, job->dir, err);
nomem:
	if (v) {
		v->owns_job = false;
		v_close(v);
	}
	if (owns_job)
		tft_job_close(job);
	tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
	return NULL;
}

struct tft_session *tft_job_open_session(const char *dir, const struct tft_job_opts *opts,
					 struct tft_error *err)
{
	struct tft_job *j = tft_job_open(dir, opts, err);

	return j ? tft_job_view(j, false, true, err) : NULL;
}

struct tft_job *tft_job_of(const struct tft_session *s)
{
	struct view *v = tft_session_ops_impl(s, &view_ops);

	return v ? v->job : NULL;
}

bool tft_job_view_is_raw(const struct tft_session *s)
{
	struct view *v = tft_session_ops_impl(s, &view_ops);

	return v && v->raw;
}

/* ---- the communication in a view's time ------------------------------------------------------- */

int tft_job_comm(const struct tft_session *s, struct tft_comm_set *out)
{
	struct view *v = tft_session_ops_impl(s, &view_ops);
	const struct tft_comm_set *cs;

	tft_comm_set_init(out);
	if (!v)
		return TFT_EINVAL;
	if (tft_job_wait_comm(v->job, NULL))
		return v->job->comm_status;
	cs = &v->job->comm;
	*out = *cs;
	out->ranks = malloc(((size_t)cs->nranks + 1) * sizeof(*out->ranks));
	out->calls = malloc(((size_t)cs->ncalls + 1) * sizeof(*out->calls));
	out->rank_first = malloc(((size_t)cs->nranks + 1) * sizeof(*out->rank_first));
	out->done = malloc(((size_t)cs->ndone + 1) * sizeof(*out->done));
	out->msgs = malloc(((size_t)cs->nmsgs + 1) * sizeof(*out->msgs));
	out->colls = malloc(((size_t)cs->ncolls + 1) * sizeof(*out->colls));
	out->member = malloc(((size_t)cs->nmember + 1) * sizeof(*out->member));
	out->busy = calloc((size_t)cs->nbusy + 1, sizeof(*out->busy));
	for (uint32_t i = 0; out->busy && i < cs->nbusy; i++) {
		struct tft_comm_busy *b = &out->busy[i];
		*b = cs->busy[i];
		b->cap = b->n;
		b->v = malloc(((size_t)b->n + 1) * sizeof(*b->v));
		if (!b->v) {
			out->nbusy = i;
			tft_comm_set_fini(out);
			return TFT_ENOMEM;
		}
		if (b->n) /* (memcpy from NULL is undefined, even of nothing) */
			memcpy(b->v, cs->busy[i].v, (size_t)b->n * sizeof(*b->v));
		out->nbusy = i + 1;
	}
	out->cap_busy = out->nbusy;
	if (!out->ranks || !out->calls || !out->rank_first || !out->done || !out->msgs || !out->colls ||
	    !out->member || !out->busy) {
		tft_comm_set_fini(out);
		return TFT_ENOMEM;
	}
	out->cap_calls = cs->ncalls;
	out->cap_done = cs->ndone;
	if (cs->nranks) /* (memcpy from NULL is undefined, even of nothing) */
		memcpy(out->ranks, cs->ranks, (size_t)cs->nranks * sizeof(*out->ranks));
	if (cs->ncalls)
		memcpy(out->calls, cs->calls, (size_t)cs->ncalls * sizeof(*out->calls));
	if (cs->rank_first)
		memcpy(out->rank_first, cs->rank_first, ((size_t)cs->nranks + 1) * sizeof(*out->rank_first));
	if (cs->ndone)
		memcpy(out->done, cs->done, (size_t)cs->ndone * sizeof(*out->done));
	if (cs->nmsgs)
		memcpy(out->msgs, cs->msgs, (size_t)cs->nmsgs * sizeof(*out->msgs));
	if (cs->ncolls)
		memcpy(out->colls, cs->colls, (size_t)cs->ncolls * sizeof(*out->colls));
	if (cs->nmember)
		memcpy(out->member, cs->member, (size_t)cs->nmember * sizeof(*out->member));
	if (!v->raw) {
		for (uint32_t i = 0; i < out->ncalls; i++) {
			struct tft_comm_call *c = &out->calls[i];
			c->ts = shown(v, c->rank, c->ts);
			c->end = shown(v, c->rank, c->end);
		}
		for (uint32_t i = 0; i < out->nbusy; i++)
			for (uint32_t k = 0; k < out->busy[i].n; k++) {
				out->busy[i].v[k].a = shown(v, i, out->busy[i].v[k].a);
				out->busy[i].v[k].b = shown(v, i, out->busy[i].v[k].b);
			}
		tft_comm_compute_waits(out);
	}
	return 0;
}
