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

/*
 * The steps to count: -1 = every traced step (the divisor: the number of
 * distinct step numbers), N = the traced steps numbered N (one per worker
 * of a distributed job). Without traced steps the whole session is one step.
 */
static int pick_steps(struct tft_prof *p, int64_t step, struct tft_error *err)
{
	uint32_t n = tft_session_step_count(p->s), nidx = 0;
	int64_t *idx = malloc(sizeof(int64_t) * (n + 1));
	struct prof_steps *st = &p->steps;

	if (!idx)
		return tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
	for (uint32_t i = 0; i < n; i++) {
		const struct tft_step *s = tft_session_step(p->s, i);
		if (s && s->traced)
			idx[nidx++] = s->index;
	}
	qsort(idx, nidx, sizeof(*idx), cmp_i64);
	uint32_t distinct = 0;
	for (uint32_t i = 0; i < nidx; i++)
		if (!i || idx[i] != idx[i - 1])
			idx[distinct++] = idx[i];
	st->traced = distinct;
	if (!distinct) {
		if (step >= 0) {
			free(idx);
			return tft_error_set(err, TFT_ENOTFOUND, -1,
					     "-step %" PRId64 ": the session has no traced steps (-step -1 profiles it "
					     "as one)", step);
		}
		st->all = true;
		st->nsteps = 1;
		free(idx);
		return 0;
	}
	if (step >= 0 && !bsearch(&step, idx, distinct, sizeof(*idx), cmp_i64)) {
		int rc = tft_error_set(err, TFT_ENOTFOUND, -1,
				       "-step %" PRId64 ": no traced step with that number (traced: %" PRId64
				       "%s%" PRId64 ", %u steps)", step, idx[0], distinct > 1 ? " .. " : "",
				       distinct > 1 ? idx[distinct - 1] : idx[0], distinct);
		if (distinct == 1)
			tft_error_clear(err), rc = tft_error_set(err, TFT_ENOTFOUND, -1,
								  "-step %" PRId64 ": no traced step with that number "
								  "(the session's one traced step is %" PRId64 ")",
								  step, idx[0]);
		free(idx);
		return rc;
	}
	free(idx);
	st->spans = malloc(sizeof(*st->spans) * (n + 1));
	if (!st->spans)
		return tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
	for (uint32_t i = 0; i < n; i++) {
		const struct tft_step *s = tft_session_step(p->s, i);
		if (!s || !s->traced || (step >= 0 && s->index != step))
			continue;
		st->spans[st->n++] = (struct prof_span){ .start = s->start_ns, .end = s->start_ns + s->dur_ns,
							 .process = s->process };
	}
	st->nsteps = step >= 0 ? 1 : distinct;
	return 0;
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
	if (prof_tab_init(&p->tab)) {
		tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
		goto fail;
	}
	if (pick_steps(p, step, err))
		goto fail;
	if (prof_scan(p, err))
		goto fail;
	if (prof_model(p, err))
		goto fail;
	free(p->flows);
	p->flows = NULL;
	p->nflows = 0;
	p->info.step = step;
	p->info.nsteps = p->steps.nsteps;
	p->info.traced_steps = p->steps.traced;
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
	prof_tab_fini(&p->tab);
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
	out->name = prof_str(&p->tab, p->tab.recs[id].name);
	out->op = prof_str(&p->tab, p->tab.recs[id].op);
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
	return prof_scan_executions(p, want, fn, ctx, err);
}
