/* SPDX-License-Identifier: MIT */
/*
 * A job directory read as one session (job/job.h): the rank files, their
 * tables renumbered into the job's, the job's string table, the
 * communication read on several threads, matched and turned into clock
 * maps and flows. The view (the tft_session_ops) is in job_view.c.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/grow.h"
#include "core/strtab.h"
#include "core/workers.h"
#include "job/job_int.h"

#define MAX_THREADS 8

/* ---- finding the rank files ------------------------------------------------------------- */

/* "rank-<N>.tft": N, or -1 */
static int64_t rank_of_name(const char *name)
{
	int64_t n = 0;
	const char *p;

	if (strncmp(name, "rank-", 5) != 0)
		return -1;
	p = name + 5;
	if (*p < '0' || *p > '9')
		return -1;
	while (*p >= '0' && *p <= '9') {
		n = n * 10 + (*p - '0');
		if (n > INT32_MAX)
			return -1;
		p++;
	}
	return strcmp(p, ".tft") == 0 ? n : -1;
}

bool tft_job_is_dir(const char *path)
{
	struct stat st;
	DIR *d;
	struct dirent *e;
	bool any = false;

	if (!path || stat(path, &st) != 0 || !S_ISDIR(st.st_mode) || !(d = opendir(path)))
		return false;
	while (!any && (e = readdir(d)))
		any = rank_of_name(e->d_name) >= 0;
	closedir(d);
	return any;
}

static int cmp_rank(const void *a, const void *b)
{
	const struct job_rank *x = a, *y = b;

	return (x->rank > y->rank) - (x->rank < y->rank);
}

static int list_ranks(struct tft_job *j, struct tft_error *err)
{
	DIR *d = opendir(j->dir);
	struct dirent *e;
	uint32_t cap = 0;

	if (!d) {
		int en = errno;
		tft_error_set(err, en == ENOENT ? TFT_ENOTFOUND : TFT_EIO, -1, "cannot open the job directory: %s",
			      strerror(en));
		tft_error_set_file(err, j->dir);
		return err ? err->code : TFT_EIO;
	}
	while ((e = readdir(d))) {
		int64_t r = rank_of_name(e->d_name);
		size_t len;
		if (r < 0)
			continue;
		if (tft_grow((void **)&j->r, &cap, j->n + 1, sizeof(*j->r))) {
			closedir(d);
			return tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
		}
		memset(&j->r[j->n], 0, sizeof(j->r[0]));
		len = strlen(j->dir) + strlen(e->d_name) + 2;
		j->r[j->n].path = malloc(len);
		if (!j->r[j->n].path) {
			closedir(d);
			return tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
		}
		snprintf(j->r[j->n].path, len, "%s/%s", j->dir, e->d_name);
		j->r[j->n].rank = (int32_t)r;
		j->n++;
	}
	closedir(d);
	if (!j->n) {
		tft_error_set(err, TFT_ENOTFOUND, -1, "no rank-<N>.tft files: not a job directory");
		tft_error_set_file(err, j->dir);
		return TFT_ENOTFOUND;
	}
	if (j->n)
		qsort(j->r, j->n, sizeof(*j->r), cmp_rank);
	return 0;
}

/* ---- strings ---------------------------------------------------------------------------- */

uint32_t tft_job_str_id(struct tft_job *j, uint32_t ri, struct tft_session *rs, uint32_t local)
{
	struct job_rank *r = &j->r[ri];
	uint32_t m, id;
	const char *p;
	size_t len;

	if (local == 0 || local >= r->nstr)
		return 0;
	m = atomic_load_explicit(&r->smap[local], memory_order_acquire); /* pairs with the release below */
	if (m)
		return m - 1;
	p = tft_session_str(rs, local, &len);
	pthread_mutex_lock(&j->lock);
	m = atomic_load_explicit(&r->smap[local], memory_order_relaxed);
	if (!m) {
		id = tft_strtab_intern(j->strs, p, len);
		if (id != UINT32_MAX) {
			m = id + 1;
			atomic_store_explicit(&r->smap[local], m, memory_order_release); /* pairs with the acquire above */
		}
	}
	pthread_mutex_unlock(&j->lock);
	return m ? m - 1 : 0;
}

uint32_t tft_job_intern(struct tft_job *j, const char *s)
{
	uint32_t id;

	pthread_mutex_lock(&j->lock);
	id = tft_strtab_intern(j->strs, s, strlen(s));
	pthread_mutex_unlock(&j->lock);
	return id == UINT32_MAX ? 0 : id;
}

const char *tft_job_str(struct tft_job *j, uint32_t id, size_t *len)
{
	const char *p;

	pthread_mutex_lock(&j->lock);
	p = tft_strtab_get(j->strs, id, len);
	pthread_mutex_unlock(&j->lock);
	if (!p) {
		if (len)
			*len = 0;
		return "";
	}
	return p;
}

uint32_t tft_job_string_count(struct tft_job *j)
{
	uint32_t n;

	pthread_mutex_lock(&j->lock);
	n = tft_strtab_count(j->strs);
	pthread_mutex_unlock(&j->lock);
	return n;
}

/* ---- reading one rank's tables ------------------------------------------------------------ */

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

static int read_tables(struct tft_job *j, uint32_t ri, struct tft_error *err)
{
	struct job_rank *r = &j->r[ri];
	struct tft_session *s = tft_session_open(r->path, err);
	struct tft_session_summary sum;
	uint32_t np, nt, ns;
	const char *v;
	int rc = 0;

	if (!s) {
		tft_error_set_file(err, r->path);
		return err && err->code ? err->code : TFT_EIO;
	}
	r->nstr = tft_session_string_count(s);
	r->smap = calloc(r->nstr ? r->nstr : 1, sizeof(*r->smap));
	np = tft_session_process_count(s);
	nt = tft_session_track_count(s);
	ns = tft_session_step_count(s);
	if (!r->smap || tft_grow((void **)&j->procs, &j->cap_procs, j->nprocs + np, sizeof(*j->procs)) ||
	    tft_grow((void **)&j->tracks, &j->cap_tracks, j->ntracks + nt, sizeof(*j->tracks)) ||
	    tft_grow((void **)&j->track_rank, &j->cap_track_rank, j->ntracks + nt, sizeof(*j->track_rank)) ||
	    tft_grow((void **)&j->steps, &j->cap_steps, j->nsteps + ns, sizeof(*j->steps)) ||
	    tft_grow((void **)&j->step_rank, &j->cap_step_rank, j->nsteps + ns, sizeof(*j->step_rank))) {
		rc = tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
		goto out;
	}
	r->proc_base = j->nprocs;
	r->nprocs = np;
	for (uint32_t i = 0; i < np; i++) {
		struct tft_process p = *tft_session_process(s, i);
		p.id = j->nprocs;
		p.name = tft_job_str_id(j, ri, s, p.name);
		p.host = tft_job_str_id(j, ri, s, p.host);
		p.labels = tft_job_str_id(j, ri, s, p.labels);
		p.rank = r->rank; /* the file's: a job's ranks are its files */
		j->procs[j->nprocs++] = p;
	}
	r->track_base = j->ntracks;
	r->ntracks = nt;
	for (uint32_t i = 0; i < nt; i++) {
		struct tft_track t = *tft_session_track(s, i);
		t.id = j->ntracks;
		t.process = t.process < np ? r->proc_base + t.process : TFT_NONE;
		t.name = tft_job_str_id(j, ri, s, t.name);
		j->track_rank[j->ntracks] = ri;
		j->tracks[j->ntracks++] = t;
	}
	for (uint32_t i = 0; i < ns; i++) {
		struct tft_step st = *tft_session_step(s, i);
		st.name = tft_job_str_id(j, ri, s, st.name);
		st.process = st.process < np ? r->proc_base + st.process : TFT_NONE;
		j->step_rank[j->nsteps] = ri;
		j->steps[j->nsteps++] = st;
	}
	tft_session_get_summary(s, &sum);
	r->format = dup_or_null(sum.format);
	r->producer = dup_or_null(sum.producer);
	r->flows = sum.flows;
	r->dropped = sum.dropped;
	r->unmatched_flows = sum.unmatched_flows;
	r->unclosed_slices = sum.unclosed_slices;
	r->has_cstats = tft_session_has_chunk_stats(s);
	if ((v = tft_session_meta(s, "job_id")))
		r->job_id = strdup(v);
	if ((v = tft_session_meta(s, "job_size")))
		r->job_size = strtoll(v, NULL, 10);
	else if ((v = tft_session_meta(s, "world_size")))
		r->job_size = strtoll(v, NULL, 10);
	if ((v = tft_session_meta(s, "clock_sync")) &&
	    (rc = tft_clock_parse_sync(v, r->rank, &j->sync, &j->nsync, &j->cap_sync, err))) {
		tft_error_set_file(err, r->path);
		goto out;
	}
	if ((sum.format && !r->format) || (sum.producer && !r->producer))
		rc = tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
out:
	tft_session_close(s);
	return rc;
}

/* ---- reading the communication, one thread per rank at a time ------------------------------ */

struct comm_job {
	struct tft_job *j;
	struct tft_jobq q;            /* the rank indexes to read */
	pthread_mutex_t lock;         /* guards the error and the merge */
	struct tft_comm_set *out;     /* borrowed: where each rank's calls go */
	struct tft_error err;
	int status;
	tft_job_rank_fn fn;           /* tft_job_each_rank */
	void *ctx;
};

struct map_ctx {
	struct tft_job *j;
	uint32_t ri;
	struct tft_session *s;
};

static uint32_t map_str(void *ctx, uint32_t id)
{
	struct map_ctx *m = ctx;

	return tft_job_str_id(m->j, m->ri, m->s, id);
}

static int read_rank_comm(void *ctx, uint32_t ri, struct tft_session *s, uint32_t track_base,
			  const struct tft_clock_map *map, struct tft_error *err)
{
	struct comm_job *cj = ctx;
	struct map_ctx m = { cj->j, ri, s };
	struct tft_comm_read_opts o = { .rank = cj->j->r[ri].rank, .track_base = track_base,
					.str_map = map_str, .str_ctx = &m };
	struct tft_comm_set mine;
	int rc;

	(void)map;
	tft_comm_set_init(&mine);
	rc = tft_comm_read(s, &o, &mine, err);
	if (!rc) {
		pthread_mutex_lock(&cj->lock);
		rc = tft_comm_set_take(cj->out, &mine);
		pthread_mutex_unlock(&cj->lock);
		if (rc)
			tft_error_set(err, rc, -1, "out of memory");
	}
	tft_comm_set_fini(&mine);
	return rc;
}

static void rank_worker(void *arg, unsigned worker)
{
	struct comm_job *cj = arg;
	struct tft_job *j = cj->j;
	uint32_t i;

	(void)worker;
	while (tft_jobq_take(&cj->q, &i) && !atomic_load(&j->cancel)) {
		struct tft_error err;
		struct tft_session *s;
		int rc;

		tft_error_clear(&err);
		s = tft_session_open(j->r[i].path, &err);
		rc = s ? cj->fn(cj->ctx, i, s, j->r[i].track_base, &j->clock[i], &err)
		       : (err.code ? err.code : TFT_EIO);
		tft_session_close(s);
		if (rc) {
			tft_error_set_file(&err, j->r[i].path);
			pthread_mutex_lock(&cj->lock);
			if (!cj->status) {
				cj->status = rc;
				cj->err = err;
			}
			pthread_mutex_unlock(&cj->lock);
		}
	}
}

/* Read the ranks on `threads` workers (0: the job's setting, else one per CPU), each taking the next rank. */
static int run_ranks(struct tft_job *j, unsigned threads, struct comm_job *cj, struct tft_error *err)
{
	unsigned want = threads ? threads : j->threads;
	unsigned nt = want ? (want > MAX_THREADS ? MAX_THREADS : want) : tft_workers_pick(j->n, MAX_THREADS);

	if (nt > j->n)
		nt = j->n ? j->n : 1;
	tft_jobq_init(&cj->q, j->n);
	pthread_mutex_init(&cj->lock, NULL);
	tft_error_clear(&cj->err);
	cj->status = 0;
	tft_workers_run(nt, rank_worker, cj);
	pthread_mutex_destroy(&cj->lock);
	if (cj->status && err && !err->code)
		*err = cj->err;
	return cj->status;
}

int tft_job_each_rank(struct tft_job *job, unsigned threads, tft_job_rank_fn fn, void *ctx,
		      struct tft_error *err)
{
	struct comm_job cj = { .j = job, .fn = fn, .ctx = ctx };

	return run_ranks(job, threads, &cj, err);
}

/* ---- flows of the matched communication ------------------------------------------------------- */

static int add_xflow(struct tft_job *j, const struct tft_flow *f)
{
	if (tft_grow((void **)&j->xflows, &j->cap_xflows, j->nxflows + 1, sizeof(*j->xflows)))
		return TFT_ENOMEM;
	j->xflows[j->nxflows++] = *f;
	return 0;
}

/* A point just inside a call's end (a flow binds to the deepest slice enclosing its end). */
static int64_t inside_end(const struct tft_comm_call *c)
{
	return c->end > c->ts ? c->end - 1 : c->ts;
}

static int make_flows(struct tft_job *j)
{
	const struct tft_comm_set *cs = &j->comm;
	uint32_t msg = tft_job_intern(j, "message"), cat_msg = tft_job_intern(j, "comm.message");
	uint32_t cat_coll = tft_job_intern(j, "comm.collective");
	int rc = 0;

	for (uint32_t m = 0; m < cs->nmsgs && !rc; m++) {
		const struct tft_comm_call *s = &cs->calls[cs->msgs[m].send], *d = &cs->calls[cs->msgs[m].recv_done];
		struct tft_flow f = {
			.flow_id = tft_hash_u64(((uint64_t)m << 1) | 1) , .name = msg, .cat = cat_msg,
			.src_track = s->track, .src_ts_ns = s->ts, .dst_track = d->track, .dst_ts_ns = inside_end(d),
		};
		rc = add_xflow(j, &f);
	}
	for (uint32_t g = 0; g < cs->ncolls && !rc; g++) {
		const struct tft_comm_coll *c = &cs->colls[g];
		const struct tft_comm_call *last = NULL;
		int64_t at = INT64_MIN;
		/* the last arrival on the reference's clock (the set's times are each rank's own) */
		for (uint32_t k = 0; k < c->n; k++) {
			const struct tft_comm_call *mc = &cs->calls[cs->member[c->first + k]];
			int64_t t = tft_clock_aligned(&j->clock[mc->rank], mc->ts);
			if (!last || t > at) {
				last = mc;
				at = t;
			}
		}
		uint64_t id = tft_hash_u64(tft_hash_u64((uint64_t)c->comm) ^ (uint64_t)c->seq ^ ((uint64_t)c->name << 40));
		for (uint32_t k = 0; k < c->n && !rc; k++) {
			const struct tft_comm_call *mc = &cs->calls[cs->member[c->first + k]];
			if (mc == last)
				continue;
			struct tft_flow f = {
				.flow_id = id, .name = c->name, .cat = cat_coll, .src_track = last->track,
				.src_ts_ns = last->ts, .dst_track = mc->track, .dst_ts_ns = inside_end(mc),
			};
			rc = add_xflow(j, &f);
		}
	}
	return rc;
}

/* ---- meta ------------------------------------------------------------------------------------- */

static int make_meta(struct tft_job *j)
{
	int64_t size = j->n;
	const char *id = NULL;
	int32_t *ranks = malloc(j->n * sizeof(*ranks));

	if (!ranks)
		return TFT_ENOMEM;
	for (uint32_t i = 0; i < j->n; i++) {
		ranks[i] = j->r[i].rank;
		if (j->r[i].job_size > size)
			size = j->r[i].job_size;
		if (!id && j->r[i].job_id && *j->r[i].job_id)
			id = j->r[i].job_id;
	}
	snprintf(j->meta_ranks, sizeof(j->meta_ranks), "%u", j->n);
	snprintf(j->meta_size, sizeof(j->meta_size), "%lld", (long long)size);
	j->meta_id = strdup(id ? id : "");
	j->meta_clock = tft_clock_json(ranks, j->clock, j->n, true);
	j->meta_estimate = tft_clock_json(ranks, j->clock, j->n, false);
	free(ranks);
	return j->meta_id && j->meta_clock && j->meta_estimate ? 0 : TFT_ENOMEM;
}

/* ---- the communication pass --------------------------------------------------------------------- */

/* Whether every rank but the lowest has ping-pong rows with it. */
static bool has_pingpong(const struct tft_job *j)
{
	for (uint32_t i = 1; i < j->n; i++) {
		bool found = false;
		for (uint32_t k = 0; k < j->nsync && !found; k++)
			found = j->sync[k].rank == j->r[i].rank && j->sync[k].ref_rank == j->r[0].rank;
		if (!found)
			return false;
	}
	return true;
}

/* The clocks from the ping-pong rows alone (a set of no calls over the job's ranks). */
static int tft_clock_estimate_rows(struct tft_job *j)
{
	struct tft_comm_set none;
	int rc;

	tft_comm_set_init(&none);
	rc = tft_comm_finish(&none, j->ranks, j->n);
	if (!rc)
		rc = tft_clock_estimate(&none, j->sync, j->nsync, 0, j->clock);
	tft_comm_set_fini(&none);
	return rc;
}

/*
 * Read every rank's communication, match it, then (with_clocks) estimate the clocks
 * from it and the ping-pong rows; the flows and meta job_comm. Sets comm_done.
 */
static void comm_pass(struct tft_job *j, bool with_clocks)
{
	struct comm_job cj;
	struct tft_error err;
	int rc;

	memset(&cj, 0, sizeof(cj));
	cj.j = j;
	cj.out = &j->comm;
	cj.fn = read_rank_comm;
	cj.ctx = &cj;
	tft_error_clear(&err);
	rc = run_ranks(j, 0, &cj, &err);
	if (!rc && (tft_comm_finish(&j->comm, j->ranks, j->n) ||
		    (with_clocks && tft_clock_estimate(&j->comm, j->sync, j->nsync, 0, j->clock)) || make_flows(j)))
		rc = tft_error_set(&err, TFT_ENOMEM, -1, "out of memory");
	if (!rc && !(j->meta_comm = tft_comm_json(&j->comm)))
		rc = tft_error_set(&err, TFT_ENOMEM, -1, "out of memory");
	pthread_mutex_lock(&j->lock);
	j->comm_status = rc;
	j->comm_err = err;
	j->comm_done = true;
	pthread_cond_broadcast(&j->comm_cond); /* pairs with the wait in tft_job_wait_comm */
	pthread_mutex_unlock(&j->lock);
}

static void *comm_main(void *arg)
{
	comm_pass(arg, false);
	return NULL;
}

int tft_job_wait_comm(struct tft_job *j, struct tft_error *err)
{
	int rc;

	pthread_mutex_lock(&j->lock);
	while (!j->comm_done)
		pthread_cond_wait(&j->comm_cond, &j->lock);
	rc = j->comm_status;
	if (rc && err && !err->code)
		*err = j->comm_err;
	pthread_mutex_unlock(&j->lock);
	return rc;
}

int tft_job_wait(struct tft_job *job, struct tft_error *err)
{
	return tft_job_wait_comm(job, err);
}

bool tft_job_comm_ready(struct tft_job *j)
{
	bool done;

	pthread_mutex_lock(&j->lock);
	done = j->comm_done && !j->comm_status;
	pthread_mutex_unlock(&j->lock);
	return done;
}

/* ---- open / close ------------------------------------------------------------------------------ */

void tft_job_close(struct tft_job *j)
{
	if (!j)
		return;
	if (j->comm_thread_on) {
		atomic_store(&j->cancel, true); /* read by rank_worker between rank files */
		pthread_join(j->comm_thread, NULL);
	}
	for (uint32_t i = 0; i < j->n; i++) {
		free(j->r[i].path);
		free((void *)j->r[i].smap);
		free(j->r[i].format);
		free(j->r[i].producer);
		free(j->r[i].job_id);
	}
	free(j->r);
	free(j->procs);
	free(j->tracks);
	free(j->track_rank);
	free(j->steps);
	free(j->step_rank);
	free(j->sync);
	free(j->clock);
	free(j->xflows);
	free(j->meta_id);
	free(j->meta_clock);
	free(j->meta_estimate);
	free(j->meta_comm);
	tft_comm_set_fini(&j->comm);
	if (j->strs)
		tft_strtab_destroy(j->strs);
	free(j->ranks);
	pthread_cond_destroy(&j->comm_cond);
	pthread_mutex_destroy(&j->lock);
	free(j->dir);
	free(j);
}

struct tft_job *tft_job_open(const char *dir, const struct tft_job_opts *opts, struct tft_error *err)
{
	struct tft_job *j = calloc(1, sizeof(*j));
	int32_t *ranks = NULL;
	size_t len;
	int rc;

	if (!j) {
		tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&j->lock, NULL);
	pthread_cond_init(&j->comm_cond, NULL);
	atomic_init(&j->cancel, false);
	tft_comm_set_init(&j->comm);
	len = strlen(dir);
	while (len > 1 && dir[len - 1] == '/')
		len--; /* "JOBDIR/" names the same job */
	j->dir = strndup(dir, len);
	j->threads = opts ? opts->threads : 0;
	j->max_open = opts && opts->max_open ? opts->max_open : 256;
	j->strs = tft_strtab_create();
	if (!j->dir || !j->strs) {
		tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
		goto fail;
	}
	if (list_ranks(j, err))
		goto fail;
	j->clock = calloc(j->n, sizeof(*j->clock));
	ranks = malloc(j->n * sizeof(*ranks));
	if (!j->clock || !ranks) {
		tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
		goto fail;
	}
	for (uint32_t i = 0; i < j->n; i++) {
		j->clock[i] = tft_clock_identity();
		ranks[i] = j->r[i].rank;
		if ((rc = read_tables(j, i, err)))
			goto fail;
	}
	j->ranks = ranks;
	ranks = NULL;
	/*
	 * With every rank's ping-pong the clocks are known now, and the communication
	 * (for flows and the per-rank analysis) is read on a thread of its own; without,
	 * the clocks come from it: read it first.
	 */
	if (j->n >= 2 && has_pingpong(j)) {
		if (tft_clock_estimate_rows(j) || make_meta(j)) {
			tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
			goto fail;
		}
		if (pthread_create(&j->comm_thread, NULL, comm_main, j) == 0) {
			j->comm_thread_on = true;
			return j;
		}
	}
	comm_pass(j, true);
	if (j->comm_status) {
		if (err && !err->code)
			*err = j->comm_err;
		goto fail;
	}
	if (!j->meta_clock && make_meta(j)) {
		tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
		goto fail;
	}
	return j;
fail:
	free(ranks);
	tft_job_close(j);
	return NULL;
}

/* ---- accessors -------------------------------------------------------------------------------- */

uint32_t tft_job_rank_count(const struct tft_job *job)
{
	return job->n;
}

int32_t tft_job_rank(const struct tft_job *job, uint32_t i)
{
	return i < job->n ? job->r[i].rank : -1;
}

const char *tft_job_dir(const struct tft_job *job)
{
	return job->dir;
}

const struct tft_clock_map *tft_job_clock(const struct tft_job *job, uint32_t i)
{
	return i < job->n ? &job->clock[i] : NULL;
}
