/* SPDX-License-Identifier: MIT */
/*
 * The parallel import's workers (par_int.h): each takes jobs off the
 * current phase's queue (a device's track prediction, then a whole
 * device's or a part's decode), decodes with its own struct rm and
 * appends through its own writer lane; the last part of a split device
 * appends the device. What a job produced is kept for the driver.
 */
#include <stdlib.h>
#include <string.h>

#include "collect/runmeta/par_int.h"
#include "core/grow.h"

/* A worker that gave its pend buffer to a part takes one from the pool, if any. */
static void pool_get(struct rm_par *par, struct rm *rm)
{
	if (rm->pend || rm->pargs)
		return;
	pthread_mutex_lock(&par->pool_mu);
	if (par->npool) {
		struct rm_job *b = &par->pool[--par->npool];

		rm->pend = b->pend;
		rm->cpend = b->cpend;
		rm->pargs = b->pargs;
		rm->cpargs = b->cpargs;
	}
	pthread_mutex_unlock(&par->pool_mu);
}

/* A part's buffer, appended: to the pool (or freed). */
static void pool_put(struct rm_par *par, struct rm_job *job)
{
	pthread_mutex_lock(&par->pool_mu);
	/* (one per worker at most: the pool holds no more than they use) */
	if (par->npool < par->nwk && par->npool < sizeof(par->pool) / sizeof(par->pool[0])) {
		struct rm_job *b = &par->pool[par->npool++];

		b->pend = job->pend;
		b->cpend = job->cpend;
		b->pargs = job->pargs;
		b->cpargs = job->cpargs;
		job->pend = NULL;
		job->pargs = NULL;
	}
	pthread_mutex_unlock(&par->pool_mu);
	free(job->pend);
	free(job->pargs);
	job->pend = NULL;
	job->pargs = NULL;
}

/*
 * Cut device k (a simple one: only device and node_stats fields) into its
 * jobs' runs of about equal bytes, each starting at a node_stats field.
 * The device keeps fewer jobs when it has fewer nodes; -1 when its fields
 * do not read (then it stays whole).
 */
static int split_device(struct rm_par *par, uint32_t k)
{
	const struct rm_dinfo *di = &par->rm->dinfo[k];
	struct rm_pdev *pd = &par->pdev[k];
	struct rm_job *job = &par->job[pd->job0];
	const uint8_t *p = di->p, *end = di->p + di->len;
	uint32_t j = 0, n = pd->njobs;
	uint64_t node = 0;

	job[0].p = p;
	job[0].node0 = 0;
	for (;;) {
		const uint8_t *at;
		struct tft_pb_bytes b;
		int r = next_node_field(&p, end, &b, &at);

		if (r < 0)
			return -1;
		if (r == 0)
			break;
		if (j + 1 < n && (size_t)(at - di->p) >= (j + 1) * (di->len / n)) {
			job[j].end = at;
			job[++j].p = at;
			job[j].node0 = node;
		}
		node++;
	}
	job[j].end = end;
	pd->njobs = j + 1;
	for (uint32_t i = 0; i <= j; i++)
		job[i].size = (size_t)(job[i].end - job[i].p);
	return 0;
}

/* The decoder as the serial one is when it hands dev_stats[k] to on_dev_stats. */
void tft_rm_par_dec(const struct rm_par *par, struct tft_pb_dec *d, struct tft_error *err,
		    uint32_t k, struct tft_pb_val *v)
{
	const struct rm_dinfo *di = &par->rm->dinfo[k];

	*d = par->dec0;
	d->err = err;
	d->cur_field = tft_rm_stepstats_msg.fields[0].name;
	d->cur_index = k;
	d->cur_num = 0;
	memset(v, 0, sizeof(*v));
	v->offset = di->at - d->base;
	v->index = k;
	v->sub.dec = d;
	v->sub.p = di->p;
	v->sub.len = di->len;
	v->sub.name = tft_rm_stepstats_msg.fields[0].name;
	v->sub.index = k;
}

void tft_rm_par_progress(struct rm *rm, uint64_t pos)
{
	struct rm_par *par = rm->par;
	uint64_t bytes, nodes;

	bytes = __atomic_add_fetch(&par->bytes, pos - rm->par_pos, __ATOMIC_RELAXED);
	nodes = __atomic_add_fetch(&par->nodes, rm->nodes - rm->par_nodes, __ATOMIC_RELAXED);
	rm->par_pos = pos;
	rm->par_nodes = rm->nodes;
	if (!rm->opts || !rm->opts->progress || /* (only the driving thread's worker has opts) */
	    !tft_ingest_progress_due(&rm->last_progress, 0))
		return;
	rm->opts->progress(rm->opts->progress_ctx, par->base_pos + bytes, rm->input_len, nodes);
}

/* A job starts: what tft_rm_emit_node() counts is the job's (job_end() keeps it). */
static void job_start(struct rm_worker *wk, struct rm_job *job)
{
	struct rm *rm = &wk->rm;

	job->worker = wk->index;
	job->comm_off = rm->ncomm;
	job->dfh_off = rm->ndfh;
	rm->nodes = rm->par_nodes = 0;
	rm->procs_seen = 0;
	rm->step_process = TFT_NONE;
	rm->deferred = 0;
	rm->spilled = 0;
	rm->npend = rm->npargs = 0;
	rm->par_pos = (uint64_t)(job->p - wk->dec.base);
}

/* ok: keep the job's counts and comm records, else forget them. */
static void job_end(struct rm_worker *wk, struct rm_job *job, int ok)
{
	struct rm *rm = &wk->rm;

	tft_rm_par_progress(rm, (uint64_t)(job->end - wk->dec.base));
	job->nodes = ok ? rm->nodes : 0;
	job->min_ts = rm->min_ts;
	job->max_end = rm->max_end;
	job->step_process = rm->step_process;
	job->procs_seen = ok ? rm->procs_seen : 0;
	if (!ok) {
		rm->ncomm = job->comm_off;
		rm->ndfh = job->dfh_off; /* (its records are written again by the serial redo) */
	}
	job->ncomm = rm->ncomm - job->comm_off;
	rm->npend = rm->npargs = 0;
	rm->deferred = 0;
}

/* Device k failed in this worker with r (wk->err filled): keep the first failure. */
static void dev_failed(struct rm_worker *wk, uint32_t k, int r)
{
	struct rm_par *par = wk->par;
	uint32_t cur = __atomic_load_n(&par->min_fail, __ATOMIC_RELAXED);

	par->pdev[k].state = PD_FAILED;
	par->pdev[k].worker = wk->index;
	if (k < wk->fail_dev) {
		wk->fail_dev = k;
		wk->fail_err = wk->err;
		wk->fail_rc = r;
	}
	while (k < cur && !__atomic_compare_exchange_n(&par->min_fail, &cur, k, 1, __ATOMIC_RELAXED,
						      __ATOMIC_RELAXED))
		;
	tft_error_clear(&wk->err);
}

/* Decode one part of device k (its nodes only) into a pend buffer of its own. */
static int part_nodes(struct rm *rm, const struct rm_job *job)
{
	const uint8_t *p = job->p, *end = job->end;
	struct rm_node n;

	for (;;) {
		struct tft_pb_bytes b;
		int r = next_node_field(&p, end, &b, NULL);

		if (r <= 0)
			return r;
		struct tft_pb_sub s = {rm->dec, b.p, b.len, "node_stats", TFT_PB_SINGULAR};

		node_begin(rm, &n);
		/* (a node the decoder refuses fails the part: the serial redo reports it) */
		if (tft_pb_wire_decode_sub(&s, &tft_rm_node_msg, &n, rm) || tft_rm_emit_node(rm, &n))
			return -1;
		rm->node_index++;
		if ((rm->nodes & 1023) == 0)
			tft_rm_progress(rm, (uint64_t)(b.p - rm->dec->base));
	}
}

/* The pend order (cmp_pend) without the arrival tie-break: a later part's events come after. */
static int pend_after(const struct rm_pend *x, const struct rm_pend *y)
{
	if (x->ev.track != y->ev.track)
		return x->ev.track > y->ev.track;
	if (x->ev.ts_ns != y->ev.ts_ns)
		return x->ev.ts_ns > y->ev.ts_ns;
	return x->ev.dur_ns < y->ev.dur_ns;
}

/*
 * The last part of device k is decoded: append the device (its parts'
 * buffers, in order, are what the serial import buffers for it), or leave
 * it to the serial redo when a part failed.
 */
static void dev_parts_done(struct rm_worker *wk, uint32_t k)
{
	struct rm_par *par = wk->par;
	struct rm *rm = &wk->rm;
	struct rm_pdev *pd = &par->pdev[k];
	struct rm_job *job = &par->job[pd->job0];
	const struct rm_pend *prev = NULL;
	int sorted = 1, r = 0;

	if (__atomic_load_n(&pd->bad, __ATOMIC_RELAXED)) {
		pd->state = PD_DEFERRED;
		goto out;
	}
	/* Sorted part by part and across their seams: append them as they are. */
	for (uint32_t j = 0, i; j < pd->njobs && sorted; j++) {
		for (i = 1; i < job[j].npend && sorted; i++)
			sorted = tft_rm_cmp_pend(&job[j].pend[i - 1], &job[j].pend[i]) < 0;
		if (sorted && job[j].npend && prev)
			sorted = !pend_after(prev, &job[j].pend[0]);
		if (job[j].npend)
			prev = &job[j].pend[job[j].npend - 1];
	}
	for (uint32_t j = 0; j < pd->njobs && sorted && !r; j++) {
		for (uint32_t i = 0; i < job[j].npend && !r; i++) {
			struct tft_event ev = job[j].pend[i].ev;

			ev.args = job[j].pargs + job[j].pend[i].args_off;
			r = tft_writer_lane_append(rm->lane, &ev);
		}
	}
	if (!sorted) {
		/* The serial buffer (arrival order numbers and all), sorted by tft_rm_flush_device(). */
		uint32_t np = 0, na = 0;

		for (uint32_t j = 0; j < pd->njobs && !r; j++) {
			if (tft_grow((void **)&rm->pend, &rm->cpend, np + job[j].npend, sizeof(*rm->pend)) ||
			    tft_grow((void **)&rm->pargs, &rm->cpargs, na + job[j].npargs,
				     sizeof(*rm->pargs))) {
				r = TFT_ENOMEM;
				break;
			}
			for (uint32_t i = 0; i < job[j].npend; i++) {
				rm->pend[np + i] = job[j].pend[i];
				rm->pend[np + i].seq = np + i;
				rm->pend[np + i].args_off += na;
			}
			if (job[j].npargs)
				memcpy(rm->pargs + na, job[j].pargs, job[j].npargs * sizeof(*rm->pargs));
			np += job[j].npend;
			na += job[j].npargs;
		}
		rm->npend = np;
		rm->npargs = na;
		if (!r)
			r = tft_rm_flush_device(rm);
		rm->npend = rm->npargs = 0;
	} else {
		rm->npend = rm->npargs = 0; /* (nothing left to flush) */
	}
	/*
	 * The device's tracks are not ended: a later input may continue them
	 * (the worker's next steps); the lane's close hands them back with
	 * their last chunk written.
	 */
	if (r) {
		struct tft_pb_val v;

		tft_rm_par_dec(par, &wk->dec, &wk->err, k, &v);
		tft_pb_wire_fail(&wk->dec, r, v.offset, "could not store the device's nodes");
		dev_failed(wk, k, r);
	} else {
		pd->state = PD_DONE;
	}
out:
	for (uint32_t j = 0; j < pd->njobs; j++)
		pool_put(par, &job[j]);
}

/* Decode a part into the worker's lane; the last part appends its device. */
static void par_part(struct rm_worker *wk, struct rm_job *job)
{
	struct rm_par *par = wk->par;
	struct rm *rm = &wk->rm;
	uint32_t k = job->dev;
	struct rm_pdev *pd = &par->pdev[k];
	struct tft_pb_val v;
	int ok = 0;

	if (!__atomic_load_n(&pd->bad, __ATOMIC_RELAXED) &&
	    k <= __atomic_load_n(&par->min_fail, __ATOMIC_RELAXED)) {
		tft_rm_par_dec(par, &wk->dec, &wk->err, k, &v);
		rm->dec = &wk->dec;
		pool_get(par, rm);
		job_start(wk, job);
		rm->pend_budget = wk->budget;
		rm->cur = &par->rm->devs[k];
		rm->nthreads = 0;
		rm->node_index = job->node0;
		rm->df_base = pd->df_base;
		ok = part_nodes(rm, job) == 0;
		/* (all the parts together: no more than the serial pend buffer and sorter hold) */
		if (ok && __atomic_add_fetch(&pd->held,
					     (uint64_t)rm->npend * sizeof(*rm->pend) +
						     (uint64_t)rm->npargs * sizeof(*rm->pargs),
					     __ATOMIC_RELAXED) > par->dev_budget)
			ok = 0;
		if (ok) { /* its buffer goes with the part */
			job->pend = rm->pend;
			job->npend = rm->npend;
			job->cpend = rm->cpend;
			job->pargs = rm->pargs;
			job->npargs = rm->npargs;
			job->cpargs = rm->cpargs;
			rm->pend = NULL;
			rm->pargs = NULL;
			rm->cpend = rm->cpargs = 0;
		}
		job_end(wk, job, ok);
		tft_error_clear(&wk->err);
	}
	if (!ok)
		__atomic_store_n(&pd->bad, 1, __ATOMIC_RELAXED);
	/* (the last part sees every part's buffer: acquire what the others released) */
	if (__atomic_sub_fetch(&pd->parts_left, 1, __ATOMIC_ACQ_REL) == 0)
		dev_parts_done(wk, k);
}

/* Decode a whole device into the worker's lane. */
static void par_decode(struct rm_worker *wk, struct rm_job *job)
{
	struct rm_par *par = wk->par;
	struct rm *rm = &wk->rm;
	uint32_t k = job->dev;
	const struct rm_dinfo *di = &par->rm->dinfo[k];
	struct rm_pdev *pd = &par->pdev[k];
	struct rm_dev *dev = &par->rm->devs[k];
	struct tft_pb_val v;
	int r;

	if (k > __atomic_load_n(&par->min_fail, __ATOMIC_RELAXED))
		return; /* an earlier device failed: its error is the one reported */
	tft_rm_par_dec(par, &wk->dec, &wk->err, k, &v);
	rm->dec = &wk->dec;
	rm->job_dev = dev;
	pool_get(par, rm);
	job_start(wk, job);
	rm->pend_budget = wk->budget;
	rm->df_base = pd->df_base;
	r = tft_rm_dev_stats(rm, &v, di);
	/* (tft_rm_dev_stats() appended the device's events; its tracks stay open, as above) */
	rm->npend = rm->npargs = 0;
	if (r && wk->err.code == TFT_OK)
		tft_pb_wire_fail(&wk->dec, r, v.offset, "could not store the device's nodes");
	/* A failed device is forgotten: redone serially (deferred), or its error reported. */
	if (!r)
		pd->state = PD_DONE;
	else if (rm->deferred)
		pd->state = PD_DEFERRED;
	else
		dev_failed(wk, k, r);
	job_end(wk, job, !r);
	tft_error_clear(&wk->err);
}

/* Phase 0: predict each device's tracks and cut its parts; phase 1: decode the jobs. */
void tft_rm_par_run(void *ctx, unsigned worker)
{
	struct rm_par *par = ctx;
	struct rm_worker *wk = &par->wk[worker];
	uint32_t j, k;

	while (tft_jobq_take(&par->q, &j)) {
		k = par->order[j];
		if (par->phase == 0) {
			int t;

			if (__atomic_load_n(&par->unsure, __ATOMIC_RELAXED))
				break;
			t = tft_rm_predict_tracks(wk, k);
			if (t < 0)
				__atomic_store_n(&par->unsure, 1, __ATOMIC_RELAXED);
			else
				par->pdev[k].tracks = (uint8_t)t;
			if (par->pdev[k].njobs > 1 && split_device(par, k)) {
				struct rm_job *job = &par->job[par->pdev[k].job0];

				par->pdev[k].njobs = 1; /* (whole, then) */
				job->p = par->rm->dinfo[k].p;
				job->end = job->p + par->rm->dinfo[k].len;
				job->size = par->rm->dinfo[k].len;
			}
		} else if (par->pdev[par->job[k].dev].njobs > 1) {
			par_part(wk, &par->job[k]);
		} else {
			par_decode(wk, &par->job[k]);
		}
	}
}
