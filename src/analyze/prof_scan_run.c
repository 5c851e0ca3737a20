/* SPDX-License-Identifier: MIT */
/*
 * The driver of tftracer prof's scan (prof_int.h: tft_prof_scan,
 * tft_prof_scan_executions): the session's countable tracks split over worker
 * threads (core/workers.h), each with its own session handle and tables
 * (prof_scan.c), scanned in two phases: host tracks first (they resolve the
 * launch flows to the launching op's cell), then accelerator tracks. The
 * workers' tables are merged at the end (prof_merge.c). The second pass (the
 * executions of wanted records) runs on one worker.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/prof_scan_int.h"
#include "core/workers.h"

static int cmp_span_ptr(const void *a, const void *b)
{
	const struct prof_span *x = *(const struct prof_span *const *)a, *y = *(const struct prof_span *const *)b;

	return (x->start > y->start) - (x->start < y->start);
}

/* Tracks split over nw workers by slices, largest first (each phase's tracks over all workers). */
static int assign_tracks(struct tft_prof *p, struct prof_worker *ws, int nw)
{
	uint32_t nt = tft_session_track_count(p->s), *ids = malloc(sizeof(uint32_t) * (nt + 1));
	uint64_t load[2][8] = { { 0 } };

	if (!ids)
		return TFT_ENOMEM;
	uint32_t n = 0;
	for (uint32_t i = 0; i < nt; i++) {
		const struct tft_track *t = tft_session_track(p->s, i);
		if (!tft_prof_countable(t)) {
			if (t && (t->flags & TFT_TRACKF_DERIVED))
				p->info.derived_tracks++;
			continue;
		}
		ids[n++] = i;
	}
	/* largest first */
	for (uint32_t i = 1; i < n; i++)
		for (uint32_t j = i; j > 0 && tft_session_track(p->s, ids[j])->slices >
						     tft_session_track(p->s, ids[j - 1])->slices; j--) {
			uint32_t x = ids[j];
			ids[j] = ids[j - 1];
			ids[j - 1] = x;
		}
	for (int k = 0; k < nw; k++) {
		ws[k].tracks = malloc(sizeof(uint32_t) * (n + 1));
		if (!ws[k].tracks) {
			free(ids);
			return TFT_ENOMEM;
		}
	}
	/*
	 * Host tracks go by process: all of a process's to one worker, in the order
	 * of their first event, so that a backward op finds its forward op, scanned
	 * before it, in the same worker. Accelerator tracks go one by one.
	 */
	uint32_t np = tft_session_process_count(p->s);
	int *proc_worker = malloc(sizeof(int) * (np + 1));
	uint64_t *proc_load = calloc(np + 1, sizeof(uint64_t));
	if (!proc_worker || !proc_load) {
		free(proc_worker);
		free(proc_load);
		free(ids);
		return TFT_ENOMEM;
	}
	for (uint32_t i = 0; i < n; i++) {
		const struct tft_track *t = tft_session_track(p->s, ids[i]);
		if (t->kind != TFT_TRACK_GPU_STREAM && t->process < np)
			proc_load[t->process] += t->slices + t->instants + 1;
	}
	for (uint32_t q = 0; q <= np; q++)
		proc_worker[q] = -1;
	for (uint32_t i = 0; i < n; i++) {
		const struct tft_track *t = tft_session_track(p->s, ids[i]);
		int ph = t->kind == TFT_TRACK_GPU_STREAM, best = 0;
		uint32_t q = t->process < np ? t->process : np;
		if (!ph && proc_worker[q] >= 0) {
			best = proc_worker[q];
		} else {
			for (int k = 1; k < nw; k++)
				if (load[ph][k] < load[ph][best])
					best = k;
			load[ph][best] += ph || q == np ? t->slices + t->instants + 1 : proc_load[q];
			if (!ph)
				proc_worker[q] = best;
		}
		ws[best].tracks[ws[best].ntracks++] = ids[i];
	}
	free(proc_worker);
	free(proc_load);
	/* each worker's host tracks in the order of their first event */
	for (int k = 0; k < nw; k++) {
		uint32_t *tr = ws[k].tracks;
		for (uint32_t i = 1; i < ws[k].ntracks; i++)
			for (uint32_t j = i; j > 0 && tft_session_track(p->s, tr[j])->min_ts_ns <
							  tft_session_track(p->s, tr[j - 1])->min_ts_ns; j--) {
				uint32_t x = tr[j];
				tr[j] = tr[j - 1];
				tr[j - 1] = x;
			}
	}
	free(ids);
	return 0;
}

struct phase_run {
	struct prof_worker *ws;
	const struct prof_phase *ph;
	int accel; /* which tracks: 0 host, 1 accelerator */
};

/* Worker k: its tracks of this phase, one after another. */
static void run_worker(void *ctx, unsigned k)
{
	const struct phase_run *r = ctx;
	struct prof_worker *w = &r->ws[k];

	for (uint32_t i = 0; i < w->ntracks && !w->rc; i++) {
		const struct tft_track *t = tft_session_track(w->s, w->tracks[i]);
		if ((t->kind == TFT_TRACK_GPU_STREAM) != (r->accel != 0))
			continue;
		tft_prof_scan_track(w, r->ph, w->tracks[i]);
	}
}

/* One phase on the nw workers at once (core/workers.h: this thread is worker 0). */
static int run_phase(struct prof_worker *ws, int nw, const struct prof_phase *ph, int accel)
{
	struct phase_run r = { .ws = ws, .ph = ph, .accel = accel };

	tft_workers_run((unsigned)nw, run_worker, &r);
	for (int k = 0; k < nw; k++)
		if (ws[k].rc)
			return ws[k].rc;
	return 0;
}

static int phase_spans(struct tft_prof *p, struct prof_phase *ph)
{
	ph->nspans = 0;
	ph->spans = malloc(sizeof(*ph->spans) * (p->steps.n + 1));
	if (!ph->spans)
		return TFT_ENOMEM;
	for (uint32_t i = 0; i < p->steps.n; i++)
		ph->spans[ph->nspans++] = &p->steps.spans[i];
	qsort(ph->spans, ph->nspans, sizeof(*ph->spans), cmp_span_ptr);
	return 0;
}

int tft_prof_scan(struct tft_prof *p, struct tft_error *err)
{
	int nw = p->threads > 0 ? p->threads : (int)tft_workers_pick(UINT64_MAX, 8), rc = 0, ninit = 0;
	struct prof_flow_index fx = { 0 };
	struct prof_phase ph = { .p = p, .fx = &fx };
	struct prof_worker *ws;

	if (nw > 8)
		nw = 8;
	{
		struct tft_session_summary sum;
		tft_session_get_summary(p->s, &sum);
		if (nw > 1 && sum.slices + sum.instants < 200000)
			nw = 1; /* (a small session: BENCHMARKS.md, "Analysis, export and capture") */
		if (!tft_session_is_file(p->s))
			nw = 1; /* (a job's view: its path is a directory, not another handle) */
	}
	ws = calloc((size_t)nw, sizeof(*ws));
	if (!ws)
		return tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
	if ((rc = tft_prof_flows_load(p, &fx, err)))
		goto out;
	if ((rc = phase_spans(p, &ph)))
		goto out;
	for (ninit = 0; ninit < nw; ninit++) {
		rc = tft_prof_worker_init(&ws[ninit], p, ninit);
		if (rc) {
			if (ninit > 0 && rc != TFT_ENOMEM) {
				/* no second handle: fewer workers */
				tft_prof_worker_fini(&ws[ninit]);
				rc = 0;
				nw = ninit;
				break;
			}
			ninit++;
			goto out;
		}
	}
	if ((rc = assign_tracks(p, ws, nw)))
		goto out;
	if ((rc = run_phase(ws, nw, &ph, 0)) || (rc = run_phase(ws, nw, &ph, 1))) {
		for (int k = 0; k < nw; k++)
			if (ws[k].rc) {
				*err = ws[k].err;
				break;
			}
		goto out;
	}
	for (int k = 0; k < nw; k++) {
		p->info.executions += ws[k].executions;
		p->info.outside_steps += ws[k].outside;
		p->info.kernels_linked += ws[k].linked;
		p->info.kernels_unlinked += ws[k].unlinked;
		p->info.has_code |= ws[k].has_code;
		if (ws[k].framework_tf && !p->framework[0])
			snprintf(p->framework, sizeof(p->framework), "tensorflow");
		if (ws[k].framework_torch && !p->framework[0])
			snprintf(p->framework, sizeof(p->framework), "pytorch");
	}
	rc = tft_prof_merge(p, ws, nw, err);
out:
	if (rc && !err->code)
		tft_error_set(err, rc, -1, rc == TFT_ENOMEM ? "out of memory" : "the scan failed");
	for (int k = 0; k < ninit && k < nw + 1; k++)
		tft_prof_worker_fini(&ws[k]);
	free(ws);
	tft_prof_flows_free(&fx);
	free(ph.spans);
	return rc;
}

/* ---- the second pass ---------------------------------------------------------------------------- */

int tft_prof_scan_executions(struct tft_prof *p, const uint8_t *want, tft_prof_exec_fn fn, void *ctx,
			 struct tft_error *err)
{
	struct prof_flow_index fx = { 0 };
	struct prof_phase ph = { .p = p, .fx = &fx };
	struct prof_worker w;
	int rc;

	if ((rc = tft_prof_flows_load(p, &fx, err)))
		goto out;
	if ((rc = phase_spans(p, &ph)))
		goto out;
	if ((rc = tft_prof_worker_init(&w, p, 0))) {
		tft_prof_worker_fini(&w);
		goto out;
	}
	w.want = want;
	w.fn = fn;
	w.fn_ctx = ctx;
	uint32_t nt = tft_session_track_count(p->s);
	w.tracks = malloc(sizeof(uint32_t) * (nt + 1));
	if (!w.tracks) {
		tft_prof_worker_fini(&w);
		rc = TFT_ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < nt; i++)
		if (tft_prof_countable(tft_session_track(p->s, i)))
			w.tracks[w.ntracks++] = i;
	rc = run_phase(&w, 1, &ph, 0);
	if (!rc)
		rc = run_phase(&w, 1, &ph, 1);
	if (rc > 0) /* the callback stopped it */
		;
	else if (rc)
		*err = w.err;
	tft_prof_worker_fini(&w);
out:
	tft_prof_flows_free(&fx);
	free(ph.spans);
	free(p->flows);
	p->flows = NULL;
	p->nflows = 0;
	return rc;
}
