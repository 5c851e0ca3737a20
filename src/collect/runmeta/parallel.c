/* SPDX-License-Identifier: MIT */
/*
 * The parallel import's driver (par_int.h says how it works): whether the
 * input is for it, the jobs, the tracks registered in the serial order,
 * the workers' state and lanes, the two phases on core/workers.h's
 * fan-out, then the devices' results taken in device order (or the devices
 * redone serially).
 */
#include <stdlib.h>
#include <string.h>

#include "collect/runmeta/par_int.h"
#include "core/grow.h"

/* Largest first, then input order: the last job to start is a small one. */
static int cmp_job(const void *a, const void *b, void *ctx)
{
	const struct rm_job *job = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (job[x].size != job[y].size)
		return job[x].size > job[y].size ? -1 : 1;
	return x < y ? -1 : (x > y);
}

/* Run the current phase's jobs (order[0..norder)) on every worker: the calling thread is worker 0. */
static void par_phase(struct rm_par *par, int phase)
{
	par->phase = phase;
	tft_jobq_init(&par->q, par->norder);
	tft_workers_run(par->nwk, tft_rm_par_run, par);
}

static void par_free(struct rm_par *par)
{
	for (uint32_t i = 0; par->wk && i < par->nwk; i++) {
		struct rm *w = &par->wk[i].rm;

		/* (borrowed from the driver) */
		w->devs = NULL;
		w->procs = NULL;
		w->dinfo = NULL;
		w->df = NULL;
		w->sorter = NULL;
		w->graphs = NULL;
		tft_rm_free(w);
		free(par->wk[i].memo);
	}
	for (uint32_t i = 0; par->job && i < par->njob; i++) {
		free(par->job[i].pend);
		free(par->job[i].pargs);
	}
	for (uint32_t i = 0; i < par->npool; i++) {
		free(par->pool[i].pend);
		free(par->pool[i].pargs);
	}
	pthread_mutex_destroy(&par->pool_mu);
	free(par->wk);
	free(par->pdev);
	free(par->job);
	free(par->order);
}

/* Append a decoded job's comm records to the driver's (jobs in device order). */
static int par_take_comm(struct rm *rm, const struct rm_par *par, const struct rm_job *job)
{
	const struct rm *w = &par->wk[job->worker].rm;

	if (!job->ncomm)
		return 0;
	if (tft_grow((void **)&rm->comm, &rm->ccomm, rm->ncomm + job->ncomm, sizeof(*rm->comm)))
		return TFT_ENOMEM;
	for (uint32_t i = 0; i < job->ncomm; i++) {
		rm->comm[rm->ncomm] = w->comm[job->comm_off + i];
		rm->comm[rm->ncomm].seq = rm->ncomm;
		rm->ncomm++;
	}
	return 0;
}

/* What tft_rm_emit_node() counted for a decoded job, as if the driver had decoded it. */
static void par_take_counts(struct rm *rm, const struct rm_job *job)
{
	if (!job->nodes)
		return;
	if (rm->nodes == 0 || job->min_ts < rm->min_ts)
		rm->min_ts = job->min_ts;
	if (rm->nodes == 0 || job->max_end > rm->max_end)
		rm->max_end = job->max_end;
	if (rm->procs_seen == 0) {
		rm->step_process = job->step_process;
		rm->procs_seen = 1;
	} else if (rm->step_process != job->step_process) {
		rm->step_process = TFT_NONE;
	}
	rm->nodes += job->nodes;
}

/*
 * Whether the StepStats ss (NULL: the whole input) is for the parallel
 * decode: binary, each device once, only dev_stats fields and those the
 * pre-pass walked (then the decoder finds nothing else), nothing decoded yet.
 */
static int par_fits(const struct rm *rm, const struct tft_pb_sub *ss)
{
	const uint8_t *p, *end;
	uint32_t k;

	if (!rm->direct || !rm->ndinfo || !rm->opts || rm->opts->threads < 2 ||
	    rm->dec->decode_text_sub || rm->dec->depth + 1 >= rm->dec->max_depth)
		return 0;
	p = ss ? ss->p : rm->dec->base;
	end = ss ? ss->p + ss->len : rm->dec->base + rm->dec->size;
	for (k = 0; p < end; k++) {
		uint64_t key, l;

		if (tft_pb_wire_varint(&p, end, &key) || key != (1 << 3 | TFT_PB_WT_LEN) ||
		    tft_pb_wire_varint(&p, end, &l) || l > (uint64_t)(end - p) || k >= rm->ndinfo ||
		    rm->dinfo[k].p != p || rm->dinfo[k].len != l)
			return 0;
		p += l;
	}
	return k == rm->ndinfo && !rm->ndevs;
}

/*
 * How many jobs each device with nodes is (pdev[k].job0, njobs): one, or
 * the parts of one larger than a worker's even share of the bytes (so is a
 * lone device), or whose events would likely not fit a worker's budget (at
 * RM_NODE_EST bytes a node; parts fill two thirds of it): parts cost
 * buffers and a merge, so only those. Returns the devices with nodes.
 */
static uint32_t par_plan(struct rm_par *par, uint32_t nwk)
{
	const struct rm *rm = par->rm;
	uint32_t ndev = 0;
	size_t total = 0;

	for (uint32_t k = 0; k < rm->ndinfo; k++) {
		if (rm->dinfo[k].nodes) {
			total += rm->dinfo[k].len;
			ndev++;
		} else {
			par->pdev[k].tracks = PT_MAIN;
		}
	}
	if (!ndev)
		return 0;
	par->dev_budget = rm->pend_budget +
			  (rm->opts->mem_budget ? rm->opts->mem_budget : TFT_SORTER_DEFAULT_BUDGET);
	par->part_bytes = total / nwk + 1;
	for (uint32_t k = 0; k < rm->ndinfo; k++) {
		const struct rm_dinfo *di = &rm->dinfo[k];
		uint64_t est = di->nodes * RM_NODE_EST, wb = par->dev_budget / nwk;
		size_t n = 1;

		if (!di->nodes)
			continue;
		if (di->simple && di->len >= RM_PART_MIN) {
			if (di->len > par->part_bytes)
				n = (di->len + par->part_bytes - 1) / par->part_bytes;
			if (est * 3 > wb * 2 && (est * 3 + wb * 2 - 1) / (wb * 2) > n)
				n = (size_t)((est * 3 + wb * 2 - 1) / (wb * 2));
			n = n > 16 ? 16 : n;
			n = n > di->nodes ? di->nodes : n;
		}
		par->pdev[k].job0 = par->njob;
		par->pdev[k].njobs = (uint32_t)n;
		par->njob += (uint32_t)n;
	}
	return ndev;
}

/* The jobs (each a whole device until split_device() cuts it), phase 0's order, the workers. */
static int par_setup(struct rm_par *par, uint32_t nwk)
{
	const struct rm *rm = par->rm;

	par->job = calloc(par->njob, sizeof(*par->job));
	par->order = malloc((par->njob > rm->ndinfo ? par->njob : rm->ndinfo) * sizeof(*par->order));
	par->wk = calloc(nwk, sizeof(*par->wk));
	if (!par->job || !par->order || !par->wk)
		return -1;
	for (uint32_t k = 0; k < rm->ndinfo; k++) {
		const struct rm_dinfo *di = &rm->dinfo[k];
		struct rm_job *job = &par->job[par->pdev[k].job0];

		if (!di->nodes)
			continue;
		par->order[par->norder++] = k;
		for (uint32_t j = 0; j < par->pdev[k].njobs; j++) {
			job[j].dev = k;
			job[j].part = j;
			job[j].p = di->p; /* (parts: cut by split_device()) */
			job[j].end = di->p + di->len;
			job[j].size = di->len;
		}
	}
	par->nwk = nwk;
	for (uint32_t i = 0; i < nwk; i++) {
		par->wk[i].par = par;
		par->wk[i].index = i;
		par->wk[i].fail_dev = UINT32_MAX;
	}
	return 0;
}

/* Phase 1's order: every job, largest first. */
static void par_order_jobs(struct rm_par *par)
{
	const struct rm *rm = par->rm;

	par->norder = 0;
	for (uint32_t k = 0; k < rm->ndinfo; k++) {
		for (uint32_t j = 0; rm->dinfo[k].nodes && j < par->pdev[k].njobs; j++)
			par->order[par->norder++] = par->pdev[k].job0 + j;
		par->pdev[k].parts_left = par->pdev[k].njobs;
	}
	qsort_r(par->order, par->norder, sizeof(*par->order), cmp_job, par->job);
}

/*
 * Processes and tracks, in the serial import's order. A failure leaves
 * what was registered as the serial decode would have registered it, and
 * that decode retries the rest.
 */
static int par_register(struct rm_par *par)
{
	struct rm *rm = par->rm;

	for (uint32_t k = 0; k < rm->ndinfo; k++) {
		const struct rm_dinfo *di = &rm->dinfo[k];
		struct rm_dev *dev = tft_rm_get_device(rm, di->device.p, di->device.len);
		int t = par->pdev[k].tracks;

		if (!dev || dev != &rm->devs[k])
			return -1;
		if ((t & PT_COMM_FIRST) && tft_rm_comm_track(rm, dev) == TFT_NONE)
			return -1;
		if ((t & PT_MAIN) && tft_rm_main_track(rm, dev) == TFT_NONE)
			return -1;
		if ((t & PT_COMM) && tft_rm_comm_track(rm, dev) == TFT_NONE)
			return -1;
	}
	return 0;
}

/* Worker i's struct rm: the driver's keys, devices (read only) and counters' start, buffers of its own. */
static void par_worker_rm(struct rm_par *par, uint32_t i)
{
	struct rm *rm = par->rm, *w = &par->wk[i].rm;

	*w = *rm;
	w->procs = NULL;
	w->nprocs = w->cprocs = 0;
	w->threads = NULL;
	w->nthreads = w->cthreads = 0;
	tft_json_write_init_mem(&w->j_memory);
	tft_json_write_init_mem(&w->j_output);
	tft_json_write_init_mem(&w->j_ref);
	tft_json_write_init_mem(&w->j_memstats);
	tft_json_write_init_mem(&w->j_tmp);
	tft_json_write_init_mem(&w->j_dims);
	tft_json_write_init_mem(&w->j_ids);
	tft_json_write_init_mem(&w->j_ids2);
	tft_json_write_init_mem(&w->j_dnames);
	tft_json_write_init_mem(&w->scratch);
	w->comm = NULL;
	w->ncomm = w->ccomm = 0;
	w->dfh = NULL; /* (its own; df is the driver's, placed: par_place_records()) */
	w->ndfh = w->cdfh = 0;
	w->df_wk = (uint16_t)(i + 1);
	w->wkdfh = NULL;
	w->nwkdfh = 0;
	w->pend = NULL;
	w->npend = w->cpend = 0;
	w->pargs = NULL;
	w->npargs = w->cpargs = 0;
	w->tmpl = NULL;
	w->tmpl_tag = NULL;
	w->tmpl_next = NULL;
	w->tmpl_cache = NULL; /* (the writer's attachments are the driving thread's) */
	w->graphs = NULL;
	w->sorter = NULL;
	w->entries = NULL;
	w->nentries = w->centries = 0;
	w->err = &par->wk[i].err;
	w->nodes = 0;
	w->procs_seen = 0;
	w->step_process = TFT_NONE;
	/*
	 * The workers' buffers together hold at most what the serial import's
	 * pend buffer and sorter may (TFT_SORTER_DEFAULT_BUDGET by default),
	 * and so do a device's parts (par_part()).
	 */
	par->wk[i].budget = par->dev_budget / par->nwk;
	w->par = par;
	w->opts = i == 0 ? rm->opts : NULL; /* progress: from the driving thread only */
}

/* Node records: every node's place known (device by device, node by node) in the driver's rm.df. */
static int par_place_records(struct rm_par *par)
{
	struct rm *rm = par->rm;
	uint64_t nrec = 0;

	for (uint32_t k = 0; k < rm->ndinfo; k++) {
		par->pdev[k].df_base = nrec;
		nrec += rm->dinfo[k].nodes;
	}
	if (rm->ndf || rm->wkdfh || nrec > UINT32_MAX || par->nwk >= UINT16_MAX ||
	    !(rm->wkdfh = calloc(par->nwk, sizeof(*rm->wkdfh))) ||
	    (nrec && tft_grow((void **)&rm->df, &rm->cdf, (uint32_t)nrec, sizeof(*rm->df))))
		return -1;
	rm->nwkdfh = par->nwk;
	rm->ndf = (uint32_t)nrec;
	rm->df_placed = 1;
	for (uint32_t i = 0; i < par->nwk; i++) {
		par->wk[i].rm.df = rm->df;
		par->wk[i].rm.ndf = rm->ndf;
		par->wk[i].rm.cdf = rm->cdf;
		par->wk[i].rm.df_placed = 1;
	}
	return 0;
}

/* A lane per worker; none when one cannot open (nothing appended yet). */
static int par_open_lanes(struct rm_par *par)
{
	for (uint32_t i = 0; i < par->nwk; i++) {
		par->wk[i].rm.lane = tft_writer_lane_open(par->rm->w);
		if (!par->wk[i].rm.lane) {
			while (i--) {
				tft_writer_lane_close(par->wk[i].rm.lane);
				par->wk[i].rm.lane = NULL;
			}
			return -1;
		}
	}
	return 0;
}

/* Close the lanes: the first status that is not 0. */
static int par_close_lanes(struct rm_par *par)
{
	int lr = 0;

	for (uint32_t i = 0; i < par->nwk; i++) {
		int r = tft_writer_lane_close(par->wk[i].rm.lane);

		par->wk[i].rm.lane = NULL;
		if (r && !lr)
			lr = r;
	}
	return lr;
}

/*
 * The devices in order: what they counted and recorded, the first failed
 * device's error, or (deferred, not reached, or without nodes but with more
 * than a name: the decoder judges the rest) decoded serially now.
 */
static int par_collect(struct rm_par *par)
{
	struct rm *rm = par->rm;
	int r = 0;

	for (uint32_t k = 0; k < rm->ndinfo && !r; k++) {
		struct rm_pdev *pd = &par->pdev[k];
		struct tft_pb_dec *main_dec = rm->dec, d;
		struct tft_pb_val v;

		if (!rm->dinfo[k].nodes && rm->dinfo[k].simple)
			continue; /* (registered by par_register(), nothing to decode) */
		if (pd->state == PD_DONE) {
			for (uint32_t j = 0; j < pd->njobs && !r; j++) {
				par_take_counts(rm, &par->job[pd->job0 + j]);
				r = par_take_comm(rm, par, &par->job[pd->job0 + j]);
			}
			if (r)
				r = tft_error_set(rm->err, r, -1, "out of memory");
			continue;
		}
		if (pd->state == PD_FAILED) {
			/* (the worker's first failure: an earlier one would have been met first) */
			const struct rm_worker *wk = &par->wk[pd->worker];

			if (rm->err)
				*rm->err = wk->fail_err;
			return wk->fail_rc;
		}
		tft_rm_par_dec(par, &d, rm->err, k, &v);
		rm->dec = &d;
		rm->df_base = pd->df_base;
		r = tft_rm_dev_stats(rm, &v, &rm->dinfo[k]);
		rm->dec = main_dec;
	}
	return r;
}

/* Nothing was decoded (the serial decode appends its records): back to the serial import. */
static int par_abandon(struct rm_par *par)
{
	struct rm *rm = par->rm;

	if (rm->df_placed) {
		rm->df_placed = 0;
		rm->ndf = 0;
		free(rm->wkdfh);
		rm->wkdfh = NULL;
		rm->nwkdfh = 0;
	}
	par_free(par);
	return RM_SERIAL;
}

/*
 * Decode the StepStats ss (NULL: the whole input is one) on several threads.
 * RM_SERIAL when the input is not for it (nothing done then), else what
 * decoding it serially returns.
 */
int tft_rm_par_stepstats(struct rm *rm, const struct tft_pb_sub *ss)
{
	struct rm_par par;
	uint32_t nwk;
	int r, lr;

	if (!par_fits(rm, ss))
		return RM_SERIAL;
	memset(&par, 0, sizeof(par));
	pthread_mutex_init(&par.pool_mu, NULL);
	par.rm = rm;
	par.min_fail = UINT32_MAX;
	par.dec0 = *rm->dec;
	if (ss) { /* as tft_pb_wire_decode_sub() enters it */
		par.dec0.path[par.dec0.depth].name = ss->name;
		par.dec0.path[par.dec0.depth].index = ss->index;
		par.dec0.depth++;
	}
	par.base_pos = (uint64_t)((ss ? ss->p : rm->dec->base) - rm->dec->base);
	par.pdev = calloc(rm->ndinfo, sizeof(*par.pdev));
	nwk = (uint32_t)rm->opts->threads;
	if (!par.pdev || !par_plan(&par, nwk) || par.njob < 2)
		return par_abandon(&par);
	nwk = nwk < par.njob ? nwk : par.njob;
	nwk = nwk < TFT_WORKERS_MAX ? nwk : TFT_WORKERS_MAX;
	if (par_setup(&par, nwk))
		return par_abandon(&par);

	/* 1. Which tracks each device uses, its parts (no writer calls: nothing to undo). */
	par_phase(&par, 0);
	if (par.unsure)
		return par_abandon(&par);
	par_order_jobs(&par);

	/* 2. Processes and tracks, in the serial import's order. */
	if (par_register(&par))
		return par_abandon(&par);

	/* 3. The devices, on the workers. */
	for (uint32_t i = 0; i < nwk; i++)
		par_worker_rm(&par, i);
	if (par_place_records(&par) || par_open_lanes(&par))
		return par_abandon(&par);
	par_phase(&par, 1);
	lr = par_close_lanes(&par);
	rm->last_progress = par.wk[0].rm.last_progress;

	/* The entries, all of them (each device once; ndinfo: every dev_stats). */
	for (uint32_t k = 0; k < rm->ndinfo && !lr; k++)
		if (tft_rm_note_entry(rm, &rm->devs[k], !rm->dinfo[k].nodes))
			lr = TFT_ENOMEM;
	rm->entries_par = 1;
	rm->cur_entry = -1;

	/* 4. The devices in order: what they counted and recorded, or serially. */
	r = par_collect(&par);
	rm->next_dinfo = rm->ndinfo;
	rm->df_placed = 0; /* (a second StepStats, merged into this one, appends) */
	for (uint32_t i = 0; i < nwk; i++) { /* the workers' hashes, for tft_rm_emit_dataflow() */
		rm->wkdfh[i] = par.wk[i].rm.dfh;
		par.wk[i].rm.dfh = NULL;
	}
	par_free(&par);
	/* (a device's failure first: the writer's may be its consequence) */
	return r ? r : lr;
}
