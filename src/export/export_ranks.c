/* SPDX-License-Identifier: MIT */
/* A distributed job as JSON (export/export_ranks.h). */
#include <stdlib.h>
#include <string.h>

#include "export/export_ranks.h"
#include "job/clock.h"
#include "job/job.h"

static void str_id(struct tft_json_writer *w, struct tft_session *s, uint32_t id)
{
	size_t len;
	const char *p = tft_session_str(s, id, &len);

	tft_json_write_str(w, p, len);
}

static void kint(struct tft_json_writer *w, const char *k, int64_t v)
{
	tft_json_write_key(w, k);
	tft_json_write_int(w, v);
}

static void kuint(struct tft_json_writer *w, const char *k, uint64_t v)
{
	tft_json_write_key(w, k);
	tft_json_write_uint(w, v);
}

static void cell(struct tft_json_writer *w, const struct tft_ranks_cell *c)
{
	tft_json_write_begin_object(w);
	kint(w, "start_ns", c->start_ns);
	kint(w, "end_ns", c->end_ns);
	kint(w, "compute_ns", c->compute_ns);
	kint(w, "comm_ns", c->comm_ns);
	kint(w, "wait_ns", c->wait_ns);
	kint(w, "idle_ns", c->idle_ns);
	tft_json_write_end_object(w);
}

static int cmp_skew(const void *a, const void *b)
{
	const struct tft_ranks_coll *x = *(const struct tft_ranks_coll *const *)a;
	const struct tft_ranks_coll *y = *(const struct tft_ranks_coll *const *)b;
	int64_t p = x->last_ns - x->first_ns, q = y->last_ns - y->first_ns;

	if (p != q)
		return p < q ? 1 : -1;
	return (x->first_ns > y->first_ns) - (x->first_ns < y->first_ns);
}

static int cmp_time(const void *a, const void *b)
{
	const struct tft_ranks_coll *x = *(const struct tft_ranks_coll *const *)a;
	const struct tft_ranks_coll *y = *(const struct tft_ranks_coll *const *)b;

	return (x->first_ns > y->first_ns) - (x->first_ns < y->first_ns);
}

void tft_export_ranks_json(struct tft_json_writer *w, struct tft_session *s, const struct tft_ranks_result *r,
			   uint32_t max_colls)
{
	const struct tft_ranks_coll **cl = NULL;
	uint32_t ncl = r->ncolls;

	tft_json_write_begin_object(w);
	tft_json_write_key(w, "clock_aligned");
	tft_json_write_bool(w, r->clock_aligned);
	tft_json_write_key(w, "comm");
	tft_json_write_begin_object(w);
	kuint(w, "calls", r->calls);
	kuint(w, "sends", r->sends);
	kuint(w, "receives", r->receives);
	kuint(w, "messages", r->messages);
	kuint(w, "unmatched_sends", r->unmatched_sends);
	kuint(w, "unmatched_receives", r->unmatched_receives);
	kuint(w, "collectives", r->collectives);
	kuint(w, "incomplete_collectives", r->incomplete_collectives);
	kuint(w, "inferred_collectives", r->inferred_collectives);
	tft_json_write_end_object(w);

	tft_json_write_key(w, "ranks");
	tft_json_write_begin_array(w);
	for (uint32_t i = 0; i < r->nranks; i++) {
		const struct tft_ranks_rank *k = &r->ranks[i];
		tft_json_write_newline(w);
		tft_json_write_begin_object(w);
		kint(w, "rank", k->rank);
		kint(w, "compute_ns", k->total.compute_ns);
		kint(w, "comm_ns", k->total.comm_ns);
		kint(w, "wait_ns", k->total.wait_ns);
		kint(w, "idle_ns", k->total.idle_ns);
		kint(w, "caused_ns", k->caused_ns);
		kuint(w, "last_arrivals", k->last_arrivals);
		kuint(w, "calls", k->calls);
		tft_json_write_key(w, "clock");
		tft_json_write_begin_object(w);
		kint(w, "offset_ns", k->clock_offset_ns);
		tft_json_write_key(w, "drift_ppm");
		tft_json_write_double(w, k->clock_drift * 1e6);
		kint(w, "error_ns", k->clock_error_ns);
		tft_json_write_key(w, "method");
		tft_clock_write_methods(w, k->clock_method);
		tft_json_write_end_object(w);
		tft_json_write_end_object(w);
	}
	tft_json_write_end_array(w);

	tft_json_write_key(w, "steps");
	tft_json_write_begin_array(w);
	for (uint32_t k = 0; k < r->nsteps; k++) {
		const struct tft_ranks_step *st = &r->steps[k];
		tft_json_write_newline(w);
		tft_json_write_begin_object(w);
		kint(w, "index", st->index);
		tft_json_write_key(w, "name");
		str_id(w, s, st->name);
		kint(w, "start_ns", st->start_ns);
		kint(w, "end_ns", st->end_ns);
		tft_json_write_key(w, "cells");
		tft_json_write_begin_array(w);
		for (uint32_t i = 0; i < r->nranks; i++)
			cell(w, &r->cells[(size_t)k * r->nranks + i]);
		tft_json_write_end_array(w);
		tft_json_write_end_object(w);
	}
	tft_json_write_end_array(w);

	tft_json_write_key(w, "straggler");
	if (r->straggler < 0) {
		tft_json_write_null(w);
	} else {
		const struct tft_ranks_rank *k = &r->ranks[r->straggler_index];
		tft_json_write_begin_object(w);
		kint(w, "rank", r->straggler);
		kint(w, "caused_ns", k->caused_ns);
		kint(w, "wait_total_ns", r->wait_total_ns);
		tft_json_write_key(w, "share");
		tft_json_write_double(w, r->wait_total_ns ? (double)k->caused_ns / (double)r->wait_total_ns : 0);
		tft_json_write_key(w, "ops");
		tft_json_write_begin_array(w);
		for (uint32_t i = 0; i < r->nops; i++) {
			tft_json_write_begin_object(w);
			tft_json_write_key(w, "name");
			str_id(w, s, r->ops[i].name);
			kint(w, "straggler_ns", r->ops[i].straggler_ns);
			kint(w, "others_ns", r->ops[i].others_ns);
			kuint(w, "count", r->ops[i].count);
			tft_json_write_end_object(w);
		}
		tft_json_write_end_array(w);
		tft_json_write_end_object(w);
	}

	tft_json_write_key(w, "matrix");
	tft_json_write_begin_array(w);
	for (uint32_t p = 0; p < r->npairs; p++) {
		const struct tft_ranks_pair *q = &r->pairs[p];
		tft_json_write_begin_object(w);
		kint(w, "src", r->ranks[q->src].rank);
		kint(w, "dst", r->ranks[q->dst].rank);
		kuint(w, "messages", q->messages);
		kuint(w, "bytes", q->bytes);
		kint(w, "time_ns", q->time_ns);
		tft_json_write_end_object(w);
	}
	tft_json_write_end_array(w);

	/* the collectives: the largest skews, in time order */
	if (ncl)
		cl = malloc(ncl * sizeof(*cl));
	kuint(w, "collectives_total", r->ncolls);
	tft_json_write_key(w, "collectives");
	tft_json_write_begin_array(w);
	if (cl) {
		for (uint32_t i = 0; i < ncl; i++)
			cl[i] = &r->colls[i];
		if (max_colls && ncl > max_colls) {
			qsort(cl, ncl, sizeof(*cl), cmp_skew);
			ncl = max_colls;
		}
		qsort(cl, ncl, sizeof(*cl), cmp_time);
		for (uint32_t i = 0; i < ncl; i++) {
			const struct tft_ranks_coll *c = cl[i];
			tft_json_write_newline(w);
			tft_json_write_begin_object(w);
			tft_json_write_key(w, "name");
			str_id(w, s, c->name);
			kint(w, "comm", c->comm);
			kint(w, "seq", c->seq);
			kuint(w, "members", c->members);
			kuint(w, "expected", c->expected);
			kint(w, "first_ns", c->first_ns);
			kint(w, "last_ns", c->last_ns);
			kint(w, "skew_ns", c->last_ns - c->first_ns);
			kint(w, "first_rank", c->first_rank);
			kint(w, "last_rank", c->last_rank);
			kuint(w, "last_track", c->last_track);
			kint(w, "last_ts", c->last_ts);
			kint(w, "wait_ns", c->wait_ns);
			tft_json_write_end_object(w);
		}
	}
	free(cl);
	tft_json_write_end_array(w);
	tft_json_write_end_object(w);
}
