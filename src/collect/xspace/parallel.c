/* SPDX-License-Identifier: MIT */
/*
 * Parallel lines: the planes' lines decoded and stored by several workers
 * at once (core/workers.h), each line by one worker through its own writer
 * lane, with the serial import's ids, order and errors.
 */
#include <stdlib.h>
#include <string.h>

#include "collect/xspace/xs_int.h"

/*
 * With opts->threads >= 2 and a host's XSpace of opts->par_min_bytes or
 * more (0: PAR_MIN_BYTES), lines are
 * decoded and stored by several threads at once. The planes are read in
 * groups: for each plane of a group this thread does the plane passes and
 * its metadata, keeps the metadata in a snapshot and notes each line as a
 * job, without reading it. Then (tft_xs_run_jobs()):
 *   1. this thread peeks at each line's header fields up to its first
 *      event (tft_xs_line_peek()); the threads scan (tft_xs_line_scan()) the few lines
 *      whose start is unusual;
 *   2. this thread registers the tracks of the lines with events, and each
 *      plane's process with its first one, in line order, so ids are those
 *      of the serial import;
 *   3. the threads decode and store the lines, each line by one thread
 *      through its own writer lane. A peeked line is stored optimistically
 *      (xs.optimistic): its events as they come, their order checked; the
 *      header fields after them (display name and id, usually) rename its
 *      track. Anything else (events out of order, an error, the timestamp
 *      after the events) forgets the track (tft_writer_lane_reset_track)
 *      and stores the line the serial way: scan, then events.
 * A group ends with the input or when its snapshots hold PAR_GROUP_BYTES
 * (half of opts->mem_budget when set): lines of different planes balance
 * each other, and memory stays bounded.
 *
 * What the events note for the whole file (correlation ids, groups,
 * steps) is noted per thread and merged by key after each group
 * (tft_xs_merge_notes()). The error reported is the serial import's: the reading
 * of the group stops at its first error; a line whose scan fails stops the
 * group there (the lines before it are still stored); and the first
 * failing line's error comes first, then that scan's, then the reading's.
 */

/* Move the plane's metadata (as do_plane() left it) into a new snapshot. */
int tft_xs_snap_plane(struct xs *x, const struct tft_pb_sub *ps)
{
	struct xs_psnap *sn;

	if (tft_grow((void **)&x->snaps, &x->csnaps, x->nsnaps + 1, sizeof(*x->snaps)))
		return oom(x);
	sn = &x->snaps[x->nsnaps++];
	memset(sn, 0, sizeof(*sn));
	sn->smeta = x->smeta;
	sn->strs = x->strs;
	sn->nsmeta = x->nsmeta;
	sn->smeta_map = x->smeta_map;
	sn->emeta = x->emeta;
	sn->nemeta = x->nemeta;
	sn->emeta_map = x->emeta_map;
	sn->meta_args = x->meta_args;
	sn->nmeta_args = x->nmeta_args;
	sn->process = x->process;
	sn->device_plane = x->device_plane;
	sn->name = x->plane.name;
	sn->id = x->plane.id;
	sn->plane_index = x->plane_index;
	sn->labels = x->labels;
	sn->ps = *ps;
	sn->bytes = (size_t)x->csmeta * (sizeof(*x->smeta) + sizeof(*x->strs)) +
		    (size_t)x->cemeta * sizeof(*x->emeta) + (size_t)x->cmeta_args * sizeof(*x->meta_args) +
		    ((size_t)x->smeta_map.ndense + x->emeta_map.ndense) * sizeof(uint32_t) +
		    tft_hmap_bytes(&x->smeta_map.hash) + tft_hmap_bytes(&x->emeta_map.hash);
	x->group_bytes += sn->bytes;
	/* The next plane starts from empty tables. */
	x->smeta = NULL;
	x->strs = NULL;
	x->nsmeta = x->csmeta = 0;
	memset(&x->smeta_map, 0, sizeof(x->smeta_map));
	x->emeta = NULL;
	x->nemeta = x->cemeta = 0;
	memset(&x->emeta_map, 0, sizeof(x->emeta_map));
	x->meta_args = NULL;
	x->nmeta_args = x->cmeta_args = 0;
	return 0;
}

void tft_xs_snaps_free(struct xs *x)
{
	for (uint32_t i = 0; i < x->nsnaps; i++) {
		struct xs_psnap *sn = &x->snaps[i];

		free(sn->smeta);
		free(sn->strs);
		tft_xs_idmap_free(&sn->smeta_map);
		free(sn->emeta);
		tft_xs_idmap_free(&sn->emeta_map);
		free(sn->meta_args);
	}
	x->nsnaps = 0;
	x->group_bytes = 0;
}

/* Reading handler: each line becomes a job (tft_xs_run_jobs() scans it, then stores it). */
int tft_xs_on_line_job(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct xs *x = ctx;
	struct xs_job *j;

	if (tft_grow((void **)&x->jobs, &x->cjobs, x->njobs + 1, sizeof(*x->jobs)))
		return oom(x);
	j = &x->jobs[x->njobs++];
	memset(j, 0, sizeof(*j));
	j->sub = v->sub;
	j->track = TFT_NONE;
	j->plane = x->nsnaps; /* the snapshot tft_xs_snap_plane() is about to make */
	j->key_line = (uint64_t)x->nlines_seen++ << 32;
	return 0;
}

/* Ready clone i for a group: x's state, its own buffers, notes and decoder. */
static void clone_begin(struct xs_clone *c, struct xs *x, uint32_t i)
{
	struct xs *y = &c->x;
	struct xs keep = *y;

	*y = *x;
	y->strs = keep.strs;
	y->csmeta = keep.csmeta;
	y->pend = keep.pend;
	y->cpend = keep.cpend;
	y->pargs = keep.pargs;
	y->cpargs = keep.cpargs;
	y->npend = y->npargs = 0;
	memset(&y->corr, 0, sizeof(y->corr)); /* a clone notes ends instead */
	memset(&y->halves, 0, sizeof(y->halves));
	y->cnotes = keep.cnotes;
	y->ccnotes = keep.ccnotes;
	y->ncnotes = 0;
	y->group_map = keep.group_map;
	y->groups = keep.groups;
	y->cgroups = keep.cgroups;
	y->ngroups = 0;
	y->lgroup_map = keep.lgroup_map;
	y->lgroups = keep.lgroups;
	y->clgroups = keep.clgroups;
	y->nlgroups = 0;
	y->steps = keep.steps;
	y->step_keys = keep.step_keys;
	y->cstep_keys = keep.cstep_keys;
	y->csteps = keep.csteps;
	y->nsteps = 0;
	y->icache = keep.icache; /* ids stay valid: the writer's table only grows */
	y->heads = keep.heads;
	y->cheads = keep.cheads;
	y->nheads = 0;
	y->heads_line = NULL;
	/* The plane's tables come from the jobs' snapshots (clone_plane()). */
	y->smeta = NULL;
	y->nsmeta = 0;
	memset(&y->smeta_map, 0, sizeof(y->smeta_map));
	y->emeta = NULL;
	y->nemeta = 0;
	memset(&y->emeta_map, 0, sizeof(y->emeta_map));
	y->meta_args = NULL;
	y->nmeta_args = 0;
	y->jobs = NULL;
	y->njobs = y->cjobs = 0;
	y->snaps = NULL;
	y->nsnaps = y->csnaps = 0;
	y->clones = NULL;
	y->nclones = 0;
	y->parent = x;
	y->lane = NULL;
	y->quiet = i != 0;
	y->events = 0;
	y->dec = &c->dec;
	y->err = &c->err;
	c->base_depth = x->dec->depth;
	c->cur_plane = UINT32_MAX;
	c->dec = *x->dec;
	c->dec.err = &c->err;
	tft_error_clear(&c->err);
	c->fail_job = UINT32_MAX;
	c->fail_rc = 0;
}

/* Load snapshot k (the plane of the clone's next job) into the clone. */
static int clone_plane(struct xs_clone *c, uint32_t k)
{
	struct xs *y = &c->x;
	const struct xs_psnap *sn;

	if (c->cur_plane == k)
		return 0;
	if (k >= y->parent->nsnaps)
		return TFT_ENOMEM; /* tft_xs_snap_plane() could not keep it */
	sn = &y->parent->snaps[k];
	if (sn->nsmeta > y->csmeta) {
		struct xs_strcache *ns = realloc(y->strs, (size_t)sn->nsmeta * sizeof(*ns));

		if (!ns)
			return TFT_ENOMEM;
		y->strs = ns;
		y->csmeta = sn->nsmeta;
	}
	if (sn->nsmeta)
		memset(y->strs, 0, (size_t)sn->nsmeta * sizeof(*y->strs));
	y->smeta = sn->smeta;
	y->nsmeta = sn->nsmeta;
	y->smeta_map = sn->smeta_map;
	y->emeta = sn->emeta;
	y->nemeta = sn->nemeta;
	y->emeta_map = sn->emeta_map;
	y->meta_args = sn->meta_args;
	y->nmeta_args = sn->nmeta_args;
	y->process = sn->process;
	y->device_plane = sn->device_plane;
	/* The decoder as plane_pass() has it: the plane on the path. */
	c->dec.depth = c->base_depth;
	c->dec.path[c->dec.depth].name = sn->ps.name;
	c->dec.path[c->dec.depth].index = sn->ps.index;
	c->dec.depth++;
	c->cur_plane = k;
	return 0;
}

void tft_xs_clone_free(struct xs_clone *c)
{
	struct xs *y = &c->x;

	free(y->strs);
	free(y->pend);
	free(y->pargs);
	free(y->cnotes);
	tft_xs_idmap_free(&y->group_map);
	free(y->groups);
	tft_xs_idmap_free(&y->lgroup_map);
	free(y->lgroups);
	free(y->steps);
	free(y->step_keys);
	free(y->icache);
	free(y->heads);
}

/*
 * A line stored optimistically must be stored the serial way: its track and
 * notes forgotten, the line scanned (which reports the serial error, if
 * any), the track renamed if the scan says so, the events stored again.
 */
static int line_redo(struct xs *y, struct xs_job *j, const struct xs_job *noted, uint64_t events)
{
	struct tft_pb_bytes tname = j->tname;
	int64_t tid = j->tid;
	uint32_t track = j->track;
	int r = tft_writer_lane_reset_track(y->lane, track);

	tft_error_clear(y->err); /* what the optimistic pass reported does not count */
	y->dec->cur_field = j->sub.name;
	y->dec->cur_index = j->sub.index;
	if (r)
		return tft_pb_wire_fail(y->dec, r, j->sub.p - y->dec->base,
					"could not store the line's events: %s", tft_strerror(r));
	y->ncnotes = noted->cn_lo;
	y->nsteps = noted->st_lo;
	tft_xs_line_groups_end(y, 0); /* timed from the header as peeked: noted again */
	y->events = events;
	r = tft_xs_line_scan(y, &j->sub, j, 1);
	j->track = track;
	if (!r && (!bytes_same(j->tname, tname) || j->tid != tid))
		r = tft_xs_line_rename(y, j);
	return r ? r : tft_xs_line_body(y, j);
}

/* A worker's loop: the next job until none is left or one before it failed. */
static void clone_main(void *ctx, unsigned worker)
{
	struct xs *x = ctx;
	struct xs_clone *c = &x->clones[worker];
	struct xs *y = &c->x;

	for (;;) {
		uint32_t k, cur;
		struct xs_job j;
		int r;

		if (!tft_jobq_take(&x->jobq, &k) || k > __atomic_load_n(&x->fail_job, __ATOMIC_RELAXED))
			break;
		j = x->jobs[k];
		if (!x->scanning && !j.nonempty)
			continue;
		r = clone_plane(c, j.plane);
		if (!r) {
			j.sub.dec = &c->dec;
			c->dec.cur_field = j.sub.name; /* as plane_pass() calls the handler */
			c->dec.cur_index = j.sub.index;
			if (x->scanning) {
				if (!j.need_scan)
					continue;
				r = tft_xs_line_scan(y, &j.sub, &j, 0); /* stored later, maybe by another thread */
				if (!r) {
					j.sub.dec = x->jobs[k].sub.dec;
					x->jobs[k] = j; /* this thread's job: no other writes it */
				}
			} else {
				struct xs_job *out = &x->jobs[k]; /* this thread's job: no other writes it */
				uint64_t events = y->events;

				out->clone = (uint32_t)(c - x->clones);
				out->cn_lo = y->ncnotes;
				out->st_lo = y->nsteps;
				y->optimistic = j.peeked;
				r = tft_xs_line_body(y, &j);
				y->optimistic = 0;
				if (r == XS_REDO)
					r = line_redo(y, &j, out, events);
				if (!r && tft_xs_line_groups_end(y, 1))
					r = oom(y);
				out->cn_hi = y->ncnotes;
				out->st_hi = y->nsteps;
			}
		} else {
			r = oom(y);
		}
		if (!r)
			continue;
		c->fail_job = k;
		c->fail_rc = r;
		cur = __atomic_load_n(&x->fail_job, __ATOMIC_RELAXED);
		while (k < cur && !__atomic_compare_exchange_n(&x->fail_job, &cur, k, 0,
							       __ATOMIC_RELAXED, __ATOMIC_RELAXED))
			;
		break; /* its later jobs come after this failure */
	}
}

/*
 * Run clone_main() on n workers (clone i on worker i; this thread is
 * worker 0) over jobs [0, end), scanning or storing them. The lowest
 * failing job, UINT32_MAX if none, is in x->fail_job, its clone's error in
 * that clone.
 */
static void run_clones(struct xs *x, uint32_t n, uint32_t end, int scanning)
{
	tft_jobq_init(&x->jobq, end);
	x->fail_job = UINT32_MAX;
	x->scanning = scanning;
	for (uint32_t i = 0; i < n; i++) {
		x->clones[i].fail_job = UINT32_MAX;
		x->clones[i].fail_rc = 0;
		x->clones[i].cur_plane = UINT32_MAX; /* reload: registration sets processes */
	}
	tft_workers_run(n, clone_main, x);
}

/* The clone that failed on job k (run_clones() left k in x->fail_job). */
static struct xs_clone *failed_clone(struct xs *x, uint32_t n, uint32_t k)
{
	for (uint32_t i = 0; i < n; i++)
		if (x->clones[i].fail_job == k)
			return &x->clones[i];
	return NULL;
}

/*
 * Register the tracks of the scanned jobs [0, end) with events, in line
 * order (the serial import's ids), each plane's process with its first.
 * Returns the job that failed (out of memory; its error in x), or end.
 */
static uint32_t register_jobs(struct xs *x, uint32_t end)
{
	uint32_t k;

	for (k = 0; k < end; k++) {
		struct xs_job *j = &x->jobs[k];
		struct xs_psnap *sn = &x->snaps[j->plane];

		if (!j->nonempty)
			continue;
		if (sn->process == TFT_NONE) {
			sn->process = tft_xs_add_plane_process(x, sn->name, sn->id, sn->plane_index, sn->labels);
			if (sn->process == TFT_NONE) {
				oom(x);
				break;
			}
		}
		x->device_plane = sn->device_plane; /* tft_xs_line_kind() */
		if (tft_xs_line_pending(x, j))
			break;
		j->pending.process = sn->process;
		j->track = tft_writer_add_track(x->w, &j->pending);
		if (j->track == TFT_NONE) {
			tft_pb_wire_fail(x->dec, TFT_ENOMEM, -1, "could not register a track");
			break;
		}
	}
	return k;
}

/*
 * Decode and store the group's jobs on up to opts->threads threads (this
 * one included), then merge their notes. `err_r`: the status of the
 * reading that ended the group (0 if none), reported unless a job failed.
 */
int tft_xs_run_jobs(struct xs *x, int err_r)
{
	uint32_t n = (uint32_t)x->opts->threads, lr = 0, scan_fail, body_end;
	struct xs_clone *failed = NULL;
	struct tft_error scan_err;
	int r = 0, scan_rc = 0;

	if (n > x->njobs)
		n = x->njobs;
	if (n > PAR_MAX_THREADS)
		n = PAR_MAX_THREADS;
	if (n < 1)
		n = 1;
	if (x->nclones < n) {
		struct xs_clone *nc = realloc(x->clones, (size_t)n * sizeof(*nc));

		if (!nc)
			return oom(x);
		memset(nc + x->nclones, 0, (size_t)(n - x->nclones) * sizeof(*nc));
		x->clones = nc;
		x->nclones = n;
	}
	for (uint32_t i = 0; i < n && !r; i++) {
		struct xs_clone *c = &x->clones[i];

		clone_begin(c, x, i);
		c->x.pend_budget = x->pend_budget / n; /* the threads' held lines share the budget */
		if (!c->x.icache && !(c->x.icache = tft_xs_icache_new()))
			r = TFT_ENOMEM;
	}
	if (r) {
		x->njobs = 0;
		tft_xs_snaps_free(x);
		return oom(x);
	}
	/*
	 * 1. Peek at each line's header; the threads scan the lines whose start
	 * is unusual. A failing scan is the serial import's error at that line:
	 * the lines before it are still stored, and their errors come first.
	 */
	tft_error_clear(&scan_err);
	{
		uint32_t nscan = 0;

		for (uint32_t k = 0; k < x->njobs; k++) {
			struct xs_job *j = &x->jobs[k];

			j->need_scan = !tft_xs_line_peek(x, &j->sub, j);
			nscan += (uint32_t)j->need_scan;
		}
		x->fail_job = UINT32_MAX;
		if (nscan)
			run_clones(x, n, x->njobs, 1);
	}
	scan_fail = x->fail_job;
	if (scan_fail != UINT32_MAX) {
		failed = failed_clone(x, n, scan_fail);
		scan_err = failed->err;
		scan_rc = failed->fail_rc;
		failed = NULL;
	}
	/* 2. Register the tracks in line order (no lanes open yet). */
	body_end = scan_fail < x->njobs ? scan_fail : x->njobs;
	{
		uint32_t k = register_jobs(x, body_end);

		if (k < body_end) {
			body_end = k;
			scan_rc = TFT_ENOMEM;
			if (x->err)
				scan_err = *x->err;
		}
	}
	/* 3. Decode and store the lines' events, each line through one lane. */
	for (uint32_t i = 0; i < n && !r; i++) {
		struct xs_clone *c = &x->clones[i];

		tft_error_clear(&c->err);
		if (!(c->x.lane = tft_writer_lane_open(x->w)))
			r = TFT_ENOMEM;
	}
	if (!r)
		run_clones(x, n, body_end, 0);
	for (uint32_t i = 0; i < n; i++) {
		struct xs_clone *c = &x->clones[i];
		int cr = c->x.lane ? tft_writer_lane_close(c->x.lane) : 0;

		c->x.lane = NULL;
		if (cr && !lr)
			lr = (uint32_t)-cr;
	}
	if (!r && x->fail_job != UINT32_MAX)
		failed = failed_clone(x, n, x->fail_job);
	if (!r && !failed && !scan_rc && !err_r && !lr && tft_xs_merge_notes(x, n, body_end))
		r = TFT_ENOMEM;
	x->njobs = 0;
	tft_xs_snaps_free(x);
	if (r)
		return oom(x);
	if (failed) {
		if (x->err)
			*x->err = failed->err;
		return failed->fail_rc;
	}
	if (scan_rc) {
		if (x->err)
			*x->err = scan_err;
		return scan_rc;
	}
	if (err_r)
		return err_r;
	if (lr)
		return tft_pb_wire_fail(x->dec, -(int)lr, -1, "could not store the lines' events: %s",
					tft_strerror(-(int)lr));
	return 0;
}
