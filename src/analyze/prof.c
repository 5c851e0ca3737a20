/* SPDX-License-Identifier: MIT */
/*
 * tftracer prof: the profile's life (prof.h). Opening picks the step(s),
 * scans the session (prof_scan.c) and completes the records (prof_model.c);
 * the views are made from it (prof_views.c).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/prof_int.h"
#include "core/grow.h"

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

struct tstep {
	int64_t num;         /* the step's number for -step */
	int64_t start, dur;
	uint32_t process;
};

static int cmp_proc_start(const void *a, const void *b)
{
	const struct tstep *x = a, *y = b;

	if (x->process != y->process)
		return x->process < y->process ? -1 : 1;
	return (x->start > y->start) - (x->start < y->start);
}

static int cmp_proc_num(const void *a, const void *b)
{
	const struct tstep *x = a, *y = b;

	if (x->process != y->process)
		return x->process < y->process ? -1 : 1;
	return (x->num > y->num) - (x->num < y->num);
}

/*
 * The steps to count: -1 = every traced step (the divisor: the number of
 * distinct step numbers), N = the traced steps numbered N (one per worker
 * of a distributed job). A step's number is its index (ProfilerStep#N ->
 * N) where a process's steps have distinct indexes; otherwise (RunMetadata
 * files, which carry no step number) every process's steps are numbered
 * 0, 1 ... in time order, as tfprof numbers its run_meta files. Without
 * traced steps the whole session is one step.
 */
static int pick_steps(struct tft_prof *p, int64_t step, struct tft_error *err)
{
	uint32_t n = tft_session_step_count(p->s), nt = 0, distinct = 0;
	struct tstep *ts = malloc(sizeof(*ts) * (n + 1));
	int64_t *idx = malloc(sizeof(int64_t) * (n + 1));
	struct prof_steps *st = &p->steps;
	bool renumber = false;
	int rc = 0;

	if (!ts || !idx) {
		rc = tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
		goto out;
	}
	for (uint32_t i = 0; i < n; i++) {
		const struct tft_step *s = tft_session_step(p->s, i);
		if (s && s->traced)
			ts[nt++] = (struct tstep){ .num = s->index, .start = s->start_ns, .dur = s->dur_ns,
						   .process = s->process };
	}
	qsort(ts, nt, sizeof(*ts), cmp_proc_num);
	for (uint32_t i = 1; i < nt; i++)
		if (ts[i].process == ts[i - 1].process && ts[i].num == ts[i - 1].num)
			renumber = true;
	if (renumber) {
		qsort(ts, nt, sizeof(*ts), cmp_proc_start);
		for (uint32_t i = 0, k = 0; i < nt; i++) {
			k = i && ts[i].process == ts[i - 1].process ? k + 1 : 0;
			ts[i].num = k;
		}
	}
	for (uint32_t i = 0; i < nt; i++)
		idx[i] = ts[i].num;
	qsort(idx, nt, sizeof(*idx), cmp_i64);
	for (uint32_t i = 0; i < nt; i++)
		if (!i || idx[i] != idx[i - 1])
			idx[distinct++] = idx[i];
	st->traced = distinct;
	if (!distinct) {
		if (step >= 0)
			rc = tft_error_set(err, TFT_ENOTFOUND, -1,
					   "-step %" PRId64 ": the session has no traced steps (-step -1 profiles it "
					   "as one)", step);
		st->all = true;
		st->nsteps = 1;
		goto out;
	}
	if (step >= 0 && !bsearch(&step, idx, distinct, sizeof(*idx), cmp_i64)) {
		if (distinct == 1)
			rc = tft_error_set(err, TFT_ENOTFOUND, -1,
					   "-step %" PRId64 ": no traced step with that number (the session's one "
					   "traced step is %" PRId64 ")", step, idx[0]);
		else
			rc = tft_error_set(err, TFT_ENOTFOUND, -1,
					   "-step %" PRId64 ": no traced step with that number (traced: %" PRId64
					   " .. %" PRId64 ", %u steps)", step, idx[0], idx[distinct - 1], distinct);
		goto out;
	}
	st->spans = malloc(sizeof(*st->spans) * (nt + 1));
	if (!st->spans) {
		rc = tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
		goto out;
	}
	for (uint32_t i = 0; i < nt; i++)
		if (step < 0 || ts[i].num == step)
			st->spans[st->n++] = (struct prof_span){ .start = ts[i].start, .end = ts[i].start + ts[i].dur,
								 .process = ts[i].process };
	st->nsteps = step >= 0 ? 1 : distinct;
out:
	free(ts);
	free(idx);
	return rc;
}

struct tft_prof *tft_prof_open(struct tft_session *s, int64_t step, int threads, struct tft_error *err)
{
	struct tft_prof *p = calloc(1, sizeof(*p));

	if (!p) {
		tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
		return NULL;
	}
	p->s = s;
	p->step = step;
	p->threads = threads;
	if (tft_prof_tab_init(&p->tab)) {
		tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
		goto fail;
	}
	if (pick_steps(p, step, err))
		goto fail;
	p->spec_modules = tft_session_meta(s, "model_params") != NULL;
	if (tft_prof_scan(p, err))
		goto fail;
	if (step < 0 && !p->steps.all && !p->info.executions && p->info.outside_steps) {
		/*
		 * Steps that hold none of the session's executions (an XSpace's device
		 * "Steps" line: the host ops that feed a step run in no step of their
		 * own process): profile the session as one step rather than show zeros.
		 */
		tft_prof_tab_fini(&p->tab);
		free(p->flows);
		p->flows = NULL;
		p->nflows = 0;
		memset(&p->info, 0, sizeof(p->info));
		p->steps.all = true;
		p->steps.nsteps = 1;
		p->steps_hold_nothing = true;
		if (tft_prof_tab_init(&p->tab)) {
			tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
			goto fail;
		}
		if (tft_prof_scan(p, err))
			goto fail;
	}
	if (tft_prof_model(p, err))
		goto fail;
	free(p->flows);
	p->flows = NULL;
	p->nflows = 0;
	p->info.step = step;
	p->info.nsteps = p->steps.nsteps;
	p->info.traced_steps = p->steps.traced;
	p->info.steps_hold_nothing = p->steps_hold_nothing;
	p->info.graph_nodes = p->norder;
	p->info.framework = p->framework;
	return p;
fail:
	tft_prof_close(p);
	return NULL;
}

void tft_prof_close(struct tft_prof *p)
{
	if (!p)
		return;
	tft_prof_tab_fini(&p->tab);
	free(p->steps.spans);
	free(p->st);
	free(p->types);
	free(p->frames);
	free(p->inputs);
	free(p->self);
	free(p->incl);
	free(p->order);
	free(p->kids);
	free(p->kid_first);
	free(p->kid_n);
	free(p->flows);
	free(p);
}

void tft_prof_get_info(const struct tft_prof *p, struct tft_prof_info *out)
{
	*out = p->info;
	out->framework = p->framework;
}

struct tft_session *tft_prof_session(const struct tft_prof *p)
{
	return p->s;
}

uint32_t tft_prof_record_count(const struct tft_prof *p)
{
	return p->tab.nrecs;
}

void tft_prof_record_get(const struct tft_prof *p, uint32_t id, struct tft_prof_record *out)
{
	memset(out, 0, sizeof(*out));
	if (id >= p->tab.nrecs)
		return;
	out->name = tft_prof_str(&p->tab, p->tab.recs[id].name);
	out->op = tft_prof_str(&p->tab, p->tab.recs[id].op);
	for (int k = 0; k < TFT_PROF_NMETRICS; k++) {
		double v = (double)p->self[id][k];
		if (k != TFT_PROF_PARAMS)
			v /= p->steps.nsteps;
		if (k == TFT_PROF_MICROS || k == TFT_PROF_ACCEL_MICROS || k == TFT_PROF_CPU_MICROS)
			v /= 1000.0;
		out->self[k] = v;
	}
}

int tft_prof_executions(struct tft_prof *p, const uint8_t *want, tft_prof_exec_fn fn, void *ctx,
			struct tft_error *err)
{
	return tft_prof_scan_executions(p, want, fn, ctx, err);
}
