/* SPDX-License-Identifier: MIT */
/*
 * The job layer (job/): a directory of rank files written as the capture
 * spec says (tests/lib/jobgen.h: a simulated MPI run with known true times)
 * read as one session: every message matched, every collective complete,
 * each rank's clock skew (TFT_TEST_CLOCK_SKEW_NS's constant, and a drift)
 * recovered within the error the alignment reports, from the ping-pong and
 * without it; the view's ids, strings, times, flows and stored statistics;
 * bad job directories.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/stats.h"
#include "job/job.h"
#include "jobgen.h"
#include "store/chunk_stats.h"
#include "tap.h"

static char root[] = "/tmp/tft-job-XXXXXX";

static void rm_dir(const char *d)
{
	char cmd[4200];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", d);
}

static struct tft_job *gen_open(const char *name, const struct jobgen_opts *o, struct jobgen_truth *tr,
				char *dir, size_t dsize)
{
	struct tft_error err;
	struct tft_job *j;

	snprintf(dir, dsize, "%s/%s", root, name);
	if (jobgen_write(o, dir, tr)) {
		ok(0, "%s: generated", name);
		return NULL;
	}
	tft_error_clear(&err);
	j = tft_job_open(dir, NULL, &err);
	if (!ok(j != NULL, "%s: job opens", name))
		printf("#   %s: %s\n", err.file, err.msg);
	return j;
}

/* Every rank's offset within its reported error of the truth (skew[k] - skew[0]); the
 * largest error seen in *max_err. */
static void check_clocks(const char *what, struct tft_job *j, const int64_t *skew, int64_t limit,
			 uint32_t want_method)
{
	int64_t worst = 0, max_err = 0;
	bool within = true, methods = true, known = true;

	for (uint32_t k = 1; k < tft_job_rank_count(j); k++) {
		const struct tft_clock_map *m = tft_job_clock(j, k);
		int64_t truth = skew[k] - skew[0], d = llabs(m->offset_ns - truth);
		if (m->error_ns < 0)
			known = false;
		if (d > m->error_ns)
			within = false;
		if (d > worst)
			worst = d;
		if (m->error_ns > max_err)
			max_err = m->error_ns;
		if (!(m->method & want_method))
			methods = false;
		if (d > m->error_ns || getenv("DUMP"))
			printf("#   %s rank %u: offset %lld, truth %lld, error %lld, method %x, drift %g\n", what, k,
			       (long long)m->offset_ns, (long long)truth, (long long)m->error_ns, m->method, m->drift);
	}
	ok(known, "%s: every rank's error bound is known", what);
	ok(within, "%s: every offset within its error of the skew (worst %lld ns)", what, (long long)worst);
	ok(max_err <= limit, "%s: errors at most %lld ns (largest %lld)", what, (long long)limit, (long long)max_err);
	ok(methods, "%s: every rank aligned by method %x", what, want_method);
	ok(tft_job_clock(j, 0)->method == TFT_CLOCK_REFERENCE && tft_job_clock(j, 0)->offset_ns == 0,
	   "%s: rank 0 is the reference", what);
}

struct first_ctx {
	const char *want;
	struct tft_session *s;
	int64_t ts, end;
	uint32_t name;
	bool found;
};

static int on_first(void *c, const struct tft_event *ev)
{
	struct first_ctx *f = c;

	if (ev->kind != TFT_EV_SLICE || strcmp(tft_session_str(f->s, ev->name, NULL), f->want) != 0)
		return 0;
	f->ts = ev->ts_ns;
	f->end = ev->ts_ns + ev->dur_ns;
	f->name = ev->name;
	f->found = true;
	return 1;
}

/* The first slice called name on the track (its start and end). */
static bool first_slice(struct tft_session *s, uint32_t track, const char *name, int64_t *ts, int64_t *end,
			uint32_t *id)
{
	struct first_ctx f = { .want = name, .s = s };
	struct tft_error err;

	tft_error_clear(&err);
	tft_session_scan(s, track, INT64_MIN, INT64_MAX, 0, on_first, &f, &err);
	if (ts)
		*ts = f.ts;
	if (end)
		*end = f.end;
	if (id)
		*id = f.name;
	return f.found;
}

struct flow_count {
	uint64_t all, msg, coll, back;
	struct tft_session *s;
};

static int on_flow(void *c, const struct tft_flow *f)
{
	struct flow_count *fc = c;
	const char *cat = tft_session_str(fc->s, f->cat, NULL);

	fc->all++;
	fc->msg += strcmp(cat, "comm.message") == 0;
	fc->coll += strcmp(cat, "comm.collective") == 0;
	fc->back += f->dst_ts_ns < f->src_ts_ns;
	return 0;
}

struct stats_blob {
	struct tft_session *s;
	bool mpi_named;
	int64_t first;
};

static int on_blob(void *ctx, uint32_t i, const uint8_t *blob, size_t len)
{
	struct stats_blob *b = ctx;
	struct tft_cstats c;

	(void)i;
	if (tft_cstats_decode(&c, blob, len, tft_session_string_count(b->s), NULL) == 0) {
		for (uint32_t k = 0; k < c.ne; k++)
			if (strcmp(tft_session_str(b->s, c.e[k].name, NULL), "MPI_Allreduce") == 0)
				b->mpi_named = true;
		b->first = c.first_ts;
	}
	tft_cstats_fini(&c);
	return 0;
}

static void test_pingpong(void)
{
	static const int64_t skew[4] = { 0, 3700000, -1200000, 50000 };
	struct jobgen_opts o = { .ranks = 4, .steps = 6, .fillers = 20, .straggler = 2, .straggle_ns = 200000,
				 .skew_ns = skew, .pingpong = true, .steps_recorded = true, .seed = 1 };
	struct jobgen_truth tr;
	char dir[512];
	struct tft_job *j = gen_open("pp", &o, &tr, dir, sizeof(dir));
	struct tft_session *v, *raw;
	struct tft_comm_set cs;
	struct tft_error err;

	if (!j)
		return;
	is_int(tft_job_rank_count(j), 4, "pp: 4 ranks");
	check_clocks("pp", j, skew, 2500, TFT_CLOCK_PINGPONG);
	tft_error_clear(&err);
	v = tft_job_view(j, false, false, &err);
	raw = tft_job_view(j, true, false, &err);
	if (!ok(v && raw, "pp: aligned and raw views"))
		return;
	ok(tft_job_of(v) == j && tft_job_of(raw) == j && !tft_job_view_is_raw(v) && tft_job_view_is_raw(raw),
	   "pp: the views know their job and clock");
	/* communication */
	if (ok(tft_job_comm(v, &cs) == 0, "pp: the job's communication")) {
		is_int(cs.nmsgs, tr.messages, "pp: every message matched");
		is_int(cs.unmatched_sends + cs.unmatched_recvs, 0, "pp: nothing unmatched");
		is_int(cs.ncolls, tr.collectives, "pp: every collective found");
		is_int(cs.incomplete_colls, 0, "pp: every collective complete");
		is_int(cs.orphan_waits, 0, "pp: every completion has its request");
		/* aligned: every Allreduce's members leave after its last arrival */
		bool causal = true;
		for (uint32_t g = 0; g < cs.ncolls; g++) {
			const struct tft_comm_coll *c = &cs.colls[g];
			for (uint32_t k = 0; k < c->n; k++)
				if (cs.calls[cs.member[c->first + k]].end < cs.calls[c->last_call].ts)
					causal = false;
		}
		ok(causal, "pp: aligned, no member leaves a collective before its last arrival");
		tft_comm_set_fini(&cs);
	}
	/* the view */
	{
		uint32_t nt = tft_session_track_count(v), ids[4];
		int64_t ts[4], end[4], lo = INT64_MAX, hi = INT64_MIN, rts;
		bool ranks = true, same = true;
		is_int(nt, 4, "pp: one track per rank");
		is_int(tft_session_process_count(v), 4, "pp: one process per rank");
		for (uint32_t i = 0; i < 4; i++) {
			const struct tft_process *p = tft_session_process(v, i);
			ranks &= p && p->rank == (int32_t)i;
		}
		ok(ranks, "pp: processes carry their ranks, in rank order");
		for (uint32_t i = 0; i < nt; i++) {
			if (!first_slice(v, i, "MPI_Allreduce", &ts[i], &end[i], &ids[i]))
				ok(0, "pp: rank %u has an MPI_Allreduce", i);
			same &= ids[i] == ids[0];
			if (end[i] < lo)
				lo = end[i];
			if (end[i] > hi)
				hi = end[i];
		}
		ok(same, "pp: one string id for MPI_Allreduce on every rank");
		ok(hi - lo < 8000, "pp: aligned, the first MPI_Allreduce ends within 8 us on every rank (%lld ns)",
		   (long long)(hi - lo));
		first_slice(raw, 1, "MPI_Allreduce", &rts, NULL, NULL);
		ok(llabs(rts - ts[1] - skew[1]) <= 2500, "pp: the raw view keeps rank 1's own clock (%lld)",
		   (long long)(rts - ts[1]));
		is_int(tft_session_step_count(v), 4 * 6, "pp: every rank's steps");
		ok(strcmp(tft_session_meta(v, "job_ranks"), "4") == 0 && strcmp(tft_session_meta(v, "job_id"), "jobgen-1") == 0,
		   "pp: meta job_ranks and job_id");
		ok(tft_session_meta(v, "job_clock") && strstr(tft_session_meta(v, "job_clock"), "\"error_ns\""),
		   "pp: meta job_clock");
		ok(tft_session_meta(raw, "job_clock") == NULL && tft_session_meta(raw, "job_clock_estimate"),
		   "pp: the raw view applies no clock (job_clock_estimate has it)");
	}
	/* flows: each message one, each collective one per member but the last */
	{
		struct flow_count fc = { .s = v };
		tft_error_clear(&err);
		tft_session_flows(v, on_flow, &fc, &err);
		is_int(fc.msg, tr.messages, "pp: a flow per message");
		is_int(fc.coll, tr.collectives * 3, "pp: a collective's flows from its last arrival to the others");
		is_int(fc.back, 0, "pp: aligned, no flow goes back in time");
	}
	/* statistics over the ranks: one row per name */
	{
		struct tft_stats_opts so = { .group_by = TFT_STATS_BY_NAME, .track = TFT_NONE };
		struct tft_stats_result *r = NULL;
		uint64_t allreduce = 0, rows = 0;
		tft_error_clear(&err);
		if (ok(tft_stats_compute(v, &so, &r, &err) == 0, "pp: statistics over the job")) {
			for (size_t i = 0; i < r->nrows; i++)
				if (r->rows[i].name_len == 13 && memcmp(r->rows[i].name, "MPI_Allreduce", 13) == 0) {
					allreduce = r->rows[i].count;
					rows++;
				}
			is_int(rows, 1, "pp: MPI_Allreduce is one row");
			is_int(allreduce, 4 * 6, "pp: ... counting every rank's calls");
			tft_stats_destroy(r);
		}
	}
	/* the stored statistics of a track, renumbered and moved */
	{
		struct stats_blob b = { .s = v };
		int64_t ts1;
		first_slice(v, 1, "MPI_Init", &ts1, NULL, NULL);
		tft_error_clear(&err);
		ok(tft_session_track_stats(v, 1, on_blob, &b, &err) == 0 && b.mpi_named,
		   "pp: rank 1's track statistics name MPI_Allreduce by the job's ids");
		is_int(b.first, ts1, "pp: ... and start at its first event, aligned");
	}
	tft_session_close(raw);
	tft_session_close(v);
	tft_job_close(j);
}

static void test_no_pingpong(void)
{
	static const int64_t skew[6] = { 1000, -250000, 9000000, 3000, -4100000, 77000 };
	struct jobgen_opts o = { .ranks = 6, .steps = 8, .fillers = 4, .straggler = -1, .skew_ns = skew,
				 .seed = 2, .steps_recorded = true };
	char dir[512];
	struct tft_job *j = gen_open("coll", &o, NULL, dir, sizeof(dir));

	if (!j)
		return;
	check_clocks("coll", j, skew, 20000, TFT_CLOCK_COLLECTIVES);
	tft_job_close(j);
}

static void test_drift(void)
{
	/* rank 2's clock gains 1 us per ms, rank 3's loses 0.6 us per ms
	 * (more than the errors of one ping-pong, so that the drift shows), over ~17 ms */
	static const int64_t skew[4] = { 0, 120000, -700000, 2000000 };
	static const double drift[4] = { 0, 0, 1000e-6, -600e-6 };
	struct jobgen_opts o = { .ranks = 4, .steps = 200, .fillers = 10, .straggler = -1, .skew_ns = skew,
				 .drift = drift, .pingpong = true, .seed = 3 };
	char dir[512];
	struct tft_job *j = gen_open("drift", &o, NULL, dir, sizeof(dir));
	bool within = true;

	if (!j)
		return;
	/* the truth at each time: aligned(raw_k(t)) must land within error of raw_0(t) = t + skew0 */
	for (uint32_t k = 1; k < 4; k++) {
		const struct tft_clock_map *m = tft_job_clock(j, k);
		for (int64_t t = JOBGEN_T0; t < JOBGEN_T0 + 17000000; t += 1000000) {
			int64_t rk = t + skew[k] + (int64_t)(drift[k] * (double)(t - JOBGEN_T0));
			int64_t d = llabs(tft_clock_aligned(m, rk) - (t + skew[0]));
			if (d > m->error_ns + 2) {
				within = false;
				printf("#   drift rank %u at +%lld ns: %lld ns off, error %lld, drift %g\n", k,
				       (long long)(t - JOBGEN_T0), (long long)d, (long long)m->error_ns, m->drift);
			}
		}
	}
	ok(within, "drift: every rank's aligned clock within its error of the reference's over the run");
	/* (a slope through windows a few ms apart whose offsets are known within ~1 us) */
	ok(fabs(tft_job_clock(j, 2)->drift - 1000e-6) < 100e-6 && fabs(tft_job_clock(j, 3)->drift + 600e-6) < 100e-6,
	   "drift: 1000 and -600 ppm found (%g, %g)", tft_job_clock(j, 2)->drift * 1e6, tft_job_clock(j, 3)->drift * 1e6);
	ok(tft_job_clock(j, 1)->drift == 0, "drift: none where there is none (%g)", tft_job_clock(j, 1)->drift);
	tft_job_close(j);
}

static void test_bad_dirs(void)
{
	char dir[512], path[600];
	struct tft_error err;
	FILE *f;

	snprintf(dir, sizeof(dir), "%s/empty", root);
	mkdir(dir, 0777);
	tft_error_clear(&err);
	ok(!tft_job_is_dir(dir), "bad: an empty directory is no job");
	ok(tft_job_open(dir, NULL, &err) == NULL && err.code == TFT_ENOTFOUND && strstr(err.msg, "rank-<N>.tft"),
	   "bad: opening it says no rank files (%s)", err.msg);
	snprintf(path, sizeof(path), "%s/rank-0.tft", dir);
	f = fopen(path, "w");
	if (f) {
		fputs("{\"traceEvents\": []}", f);
		fclose(f);
	}
	ok(tft_job_is_dir(dir), "bad: a directory with rank-0.tft is a job");
	tft_error_clear(&err);
	ok(tft_job_open(dir, NULL, &err) == NULL && strstr(err.file, "rank-0.tft") && err.code == TFT_EFORMAT,
	   "bad: a rank file that is no session is named (%s: %s)", err.file, err.msg);
	snprintf(path, sizeof(path), "%s/rank-0.tft", root);
	ok(!tft_job_is_dir(path) && !tft_job_is_dir("/nonexistent/x"), "bad: files and missing paths are no jobs");
}

int main(void)
{
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		return 1;
	}
	test_pingpong();
	test_no_pingpong();
	test_drift();
	test_bad_dirs();
	if (!getenv("KEEP"))
		rm_dir(root);
	return done_testing();
}
