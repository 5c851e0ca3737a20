/* SPDX-License-Identifier: MIT */
/*
 * tftracer merge JOBDIR|FILE -o OUT.tft [--raw]
 * One session file from a job: every rank's processes, tracks, events,
 * flows and steps, on the reference rank's clock, with the job's matched
 * communication as flows and meta job_clock / job_comm. A FILE whose
 * processes carry several ranks (ranks' traces imported together) is
 * aligned the same way: its clocks estimated from its own communication.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "core/grow.h"
#include "job/clock.h"
#include "job/comm.h"
#include "job/job.h"
#include "store/session.h"
#include "store/writer.h"

static const char usage_text[] =
	"usage: tftracer merge JOBDIR|FILE -o OUT.tft [--raw] [--quiet]\n"
	"\n"
	"Write one session file holding every rank of a job: a JOBDIR of rank-<N>.tft\n"
	"files (what `record -o JOBDIR` writes under mpirun or torchrun), or a session\n"
	"whose processes carry several ranks (ranks' traces imported together). Times\n"
	"are moved onto the lowest rank's clock, each rank by the offset (and drift)\n"
	"estimated from the job itself: the MPI ping-pong at MPI_Init/MPI_Finalize,\n"
	"collectives, matched messages (`tftracer info OUT` lists them with their\n"
	"error bounds; meta job_clock). Matched messages and collectives become flows\n"
	"between the ranks (categories comm.message and comm.collective).\n"
	"\n"
	"  -o, --output OUT   the session to write (replaced if it exists)\n"
	"      --raw          keep each rank's own clock (the estimate is still recorded)\n"
	"  -q, --quiet        no summary line\n"
	"  -h, --help         this help\n"
	"\n"
	"Exit status: 0 ok, 1 failure, 2 bad input or usage.\n";

/* ---- copying a session --------------------------------------------------------------- */

struct copy {
	struct tft_session *s;    /* borrowed: the source */
	struct tft_writer *w;     /* borrowed */
	uint32_t *ids;            /* owned: [source string id] writer id + 1, 0 not yet */
	uint32_t nids;
	const struct tft_clock_map *maps; /* borrowed: [source track] (NULL: times as they are) */
	uint32_t track;           /* the track being copied (source id = writer id) */
	struct tft_arg *args;     /* owned */
	uint32_t cap_args;
	uint64_t events;
	int status;
};

static uint32_t str_of(struct copy *c, uint32_t id)
{
	size_t len;
	const char *p;

	if (id == 0)
		return 0;
	if (id >= c->nids && tft_grow_ex((void **)&c->ids, &c->nids, (uint64_t)id + 1, sizeof(*c->ids), 4096, 1)) {
		c->status = TFT_ENOMEM;
		return 0;
	}

	if (!c->ids[id]) {
		p = tft_session_str(c->s, id, &len);
		uint32_t w = tft_writer_intern(c->w, p, len);
		if (w == UINT32_MAX) {
			c->status = TFT_ENOMEM;
			return 0;
		}
		c->ids[id] = w + 1;
	}
	return c->ids[id] - 1;
}

static int64_t moved(const struct copy *c, uint32_t track, int64_t t)
{
	return c->maps && track < tft_session_track_count(c->s) ? tft_clock_aligned(&c->maps[track], t) : t;
}

static int on_event(void *ctx, const struct tft_event *ev)
{
	struct copy *c = ctx;
	struct tft_event e = *ev;
	int rc;

	if (ev->flags & TFT_EVF_SUMMARY)
		return 0;
	e.track = c->track;
	e.name = str_of(c, ev->name);
	e.cat = str_of(c, ev->cat);
	e.depth = 0;
	if (c->maps) {
		int64_t end;
		e.ts_ns = moved(c, c->track, ev->ts_ns);
		if (ev->dur_ns > 0) {
			end = __builtin_add_overflow(ev->ts_ns, ev->dur_ns, &end) ? INT64_MAX : end;
			end = moved(c, c->track, end);
			e.dur_ns = end > e.ts_ns ? end - e.ts_ns : 0;
		}
	}
	if (ev->nargs) {
		if (tft_grow((void **)&c->args, &c->cap_args, ev->nargs, sizeof(*c->args)))
			return c->status = TFT_ENOMEM;
		for (uint16_t i = 0; i < ev->nargs; i++) {
			c->args[i] = ev->args[i];
			c->args[i].key = str_of(c, ev->args[i].key);
			if (ev->args[i].type == TFT_ARG_STR || ev->args[i].type == TFT_ARG_JSON)
				c->args[i].v.str = str_of(c, ev->args[i].v.str);
		}
		e.args = c->args;
	}
	if (c->status)
		return c->status;
	if ((rc = tft_writer_append(c->w, &e)))
		return c->status = rc;
	c->events++;
	return 0;
}

static int on_flow(void *ctx, const struct tft_flow *f)
{
	struct copy *c = ctx;
	struct tft_flow g = *f;
	int rc;

	g.name = str_of(c, f->name);
	g.cat = str_of(c, f->cat);
	if (g.src_track != TFT_NONE)
		g.src_ts_ns = moved(c, g.src_track, f->src_ts_ns);
	if (g.dst_track != TFT_NONE)
		g.dst_ts_ns = moved(c, g.dst_track, f->dst_ts_ns);
	if (c->status)
		return c->status;
	if ((rc = tft_writer_add_flow(c->w, &g)))
		return c->status = rc;
	return 0;
}

static void copy_meta(struct copy *c, const char *key)
{
	const char *v = tft_session_meta(c->s, key);

	if (v && !c->status)
		c->status = tft_writer_set_meta(c->w, key, v);
}

/* Everything of c->s into c->w (maps: times moved per track). */
static int copy_session(struct copy *c, struct tft_error *err)
{
	struct tft_session *s = c->s;
	struct tft_session_summary sum;
	uint32_t np = tft_session_process_count(s), nt = tft_session_track_count(s);
	int rc = 0;

	for (uint32_t i = 0; i < np && !c->status; i++) {
		struct tft_process p = *tft_session_process(s, i);
		p.name = str_of(c, p.name);
		p.host = str_of(c, p.host);
		p.labels = str_of(c, p.labels);
		if (tft_writer_add_process(c->w, &p) != i)
			c->status = TFT_ENOMEM;
	}
	for (uint32_t t = 0; t < nt && !c->status; t++) {
		struct tft_track tr = *tft_session_track(s, t);
		tr.name = str_of(c, tr.name);
		if (tft_writer_add_track(c->w, &tr) != t)
			c->status = TFT_ENOMEM;
	}
	for (uint32_t t = 0; t < nt && !c->status && !rc; t++) {
		c->track = t;
		rc = tft_session_scan(s, t, INT64_MIN, INT64_MAX, 0, on_event, c, err);
		if (!rc && !c->status)
			c->status = tft_writer_end_track(c->w, t);
	}
	if (!rc && !c->status)
		rc = tft_session_flows(s, on_flow, c, err);
	for (uint32_t i = 0; i < tft_session_step_count(s) && !rc && !c->status; i++) {
		struct tft_step st = *tft_session_step(s, i);
		const struct tft_process *p = tft_session_process(s, st.process);
		uint32_t track = TFT_NONE;
		/* a step moves with its process's rank (any of its tracks has the same map) */
		for (uint32_t t = 0; p && c->maps && t < nt && track == TFT_NONE; t++)
			if (tft_session_track(s, t)->process == st.process)
				track = t;
		if (track != TFT_NONE) {
			int64_t end = moved(c, track, st.start_ns + st.dur_ns);
			st.start_ns = moved(c, track, st.start_ns);
			st.dur_ns = end > st.start_ns ? end - st.start_ns : 0;
		}
		st.name = str_of(c, st.name);
		c->status = tft_writer_add_step(c->w, &st);
	}
	copy_meta(c, "format");
	copy_meta(c, "producer");
	copy_meta(c, "job_ranks");
	copy_meta(c, "job_size");
	copy_meta(c, "job_id");
	copy_meta(c, "job_comm");
	copy_meta(c, "distributed_backend");
	copy_meta(c, "world_size");
	tft_session_get_summary(s, &sum);
	if (!c->status && sum.dropped)
		c->status = tft_writer_add_count(c->w, TFT_COUNT_DROPPED, (int64_t)sum.dropped);
	if (!c->status && sum.unmatched_flows)
		c->status = tft_writer_add_count(c->w, TFT_COUNT_UNMATCHED_FLOWS,
						 (int64_t)sum.unmatched_flows);
	if (!c->status && sum.unclosed_slices)
		c->status = tft_writer_add_count(c->w, TFT_COUNT_UNCLOSED_SLICES,
						 (int64_t)sum.unclosed_slices);
	if (rc)
		return rc;
	if (c->status) {
		if (tft_writer_failure(c->w, err))
			return c->status;
		return tft_error_set(err, c->status, -1, "%s",
				     c->status == TFT_ENOMEM ? "out of memory" : "the events do not copy (out of order?)");
	}
	return 0;
}

/* ---- one file with several ranks: its clocks from its own communication ----------------------- */

static int align_file(struct tft_session *s, struct tft_clock_map **maps, char **clock_json, char **est_json,
		      char **comm_json, uint32_t *nranks, struct tft_error *err)
{
	struct tft_comm_set cs;
	struct tft_clock_map *m = NULL;
	int32_t *ranks = NULL;
	uint32_t np = tft_session_process_count(s), nt = tft_session_track_count(s), n = 0;
	int rc;

	tft_comm_set_init(&cs);
	ranks = malloc(((size_t)np + 1) * sizeof(*ranks));
	if (!ranks)
		return tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
	for (uint32_t i = 0; i < np; i++) {
		int32_t r = tft_session_process(s, i)->rank;
		bool seen = false;
		for (uint32_t k = 0; k < n && !seen; k++)
			seen = ranks[k] == r;
		if (r >= 0 && !seen)
			ranks[n++] = r;
	}
	*nranks = n;
	if (n < 2) {
		free(ranks);
		return tft_error_set(err, TFT_EINVAL, -1,
				     "%s: nothing to merge or align (a job is a directory of rank-<N>.tft files)",
				     n ? "one rank" : "no process carries a rank");
	}
	if ((rc = tft_comm_read(s, NULL, &cs, err)))
		goto out;
	if (tft_comm_finish(&cs, ranks, n)) {
		rc = tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
		goto out;
	}
	m = calloc(cs.nranks, sizeof(*m));
	*maps = calloc(nt + 1, sizeof(**maps));
	if (!m || !*maps || tft_clock_estimate(&cs, NULL, 0, 0, m)) {
		rc = tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
		goto out;
	}
	for (uint32_t t = 0; t < nt; t++) {
		const struct tft_process *p = tft_session_process(s, tft_session_track(s, t)->process);
		uint32_t ri = p ? tft_comm_rank_index(&cs, p->rank) : UINT32_MAX;
		(*maps)[t] = ri == UINT32_MAX ? tft_clock_identity() : m[ri];
	}
	*clock_json = tft_clock_json(cs.ranks, m, cs.nranks, true);
	*est_json = tft_clock_json(cs.ranks, m, cs.nranks, false);
	*comm_json = tft_comm_json(&cs);
	if (!*clock_json || !*est_json || !*comm_json)
		rc = tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
out:
	free(m);
	free(ranks);
	tft_comm_set_fini(&cs);
	return rc;
}

int tft_cmd_merge(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "raw", no_argument, NULL, 'r' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *outpath = NULL, *in;
	struct tft_writer_opts wo = { .zstd_level = TFT_IMPORT_ZSTD_LEVEL, .bulk = 1 };
	struct cli_outfile of;
	struct tft_session *s = NULL;
	struct tft_clock_map *maps = NULL;
	char *clock_json = NULL, *est_json = NULL, *comm_json = NULL;
	struct tft_error err;
	struct copy c = { 0 };
	struct stat st;
	bool raw = false, quiet = false, job;
	uint32_t nranks = 0;
	int ch, rc;

	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "o:qh", longopts, NULL)) != -1) {
		switch (ch) {
		case 'o': outpath = optarg; break;
		case 'r': raw = true; break;
		case 'q': quiet = true; break;
		case 'h': fputs(usage_text, stdout); return TFT_EXIT_OK;
		default: return cli_bad_option("merge", argv);
		}
	}
	if (optind != argc - 1 || !outpath) {
		fputs(usage_text, stderr);
		return TFT_EXIT_BADINPUT;
	}
	in = argv[optind];
	if (stat(in, &st) != 0)
		return cli_fail(TFT_EXIT_BADINPUT, "%s: cannot open: no such file", in);
	if (cli_same_file(in, outpath))
		return cli_fail(TFT_EXIT_BADINPUT, "merge: the output %s is the input", outpath);
	job = S_ISDIR(st.st_mode);
	tft_error_clear(&err);
	if (job) {
		struct tft_job *j;
		if (!tft_job_is_dir(in))
			return cli_fail(TFT_EXIT_BADINPUT, "%s: a directory without rank-<N>.tft files: not a job", in);
		j = tft_job_open(in, NULL, &err);
		s = j ? tft_job_view(j, raw, true, &err) : NULL;
		if (s)
			nranks = tft_job_rank_count(j);
	} else {
		s = tft_session_open(in, &err);
	}
	if (!s) {
		tft_error_set_file(&err, in);
		return cli_fail_error(&err);
	}
	if (!job && (rc = align_file(s, &maps, &clock_json, &est_json, &comm_json, &nranks, &err))) {
		tft_session_close(s);
		tft_error_set_file(&err, in);
		return cli_fail_error(&err);
	}
	rc = cli_outfile_open(&of, outpath, 0);
	if (rc) {
		tft_session_close(s);
		free(maps);
		free(clock_json);
		free(est_json);
		free(comm_json);
		return cli_fail(TFT_EXIT_FAIL, "%s: cannot write: %s", outpath, strerror(-rc));
	}
	wo.threads = tft_writer_default_threads();
	c.w = tft_writer_open(of.tmp, &wo, &err);
	if (!c.w) {
		cli_outfile_discard(&of);
		tft_session_close(s);
		free(maps);
		free(clock_json);
		free(est_json);
		free(comm_json);
		tft_error_set_file(&err, outpath);
		return cli_fail_error(&err);
	}
	c.s = s;
	c.maps = raw ? NULL : maps;
	rc = copy_session(&c, &err);
	if (!rc) {
		const char *v;
		if (job) {
			/* the view's own: job_clock when the times are aligned, the estimate always */
			if ((v = tft_session_meta(s, "job_clock")))
				rc = tft_writer_set_meta(c.w, "job_clock", v);
			if (!rc && (v = tft_session_meta(s, "job_clock_estimate")))
				rc = tft_writer_set_meta(c.w, "job_clock_estimate", v);
		} else {
			char ranks[16];
			snprintf(ranks, sizeof(ranks), "%u", nranks);
			rc = raw ? 0 : tft_writer_set_meta(c.w, "job_clock", clock_json);
			if (!rc)
				rc = tft_writer_set_meta(c.w, "job_clock_estimate", est_json);
			if (!rc)
				rc = tft_writer_set_meta(c.w, "job_comm", comm_json);
			if (!rc)
				rc = tft_writer_set_meta(c.w, "job_ranks", ranks);
		}
		if (rc)
			tft_error_set(&err, rc, -1, "out of memory");
	}
	if (rc) {
		tft_writer_abort(c.w);
	} else {
		rc = tft_writer_close(c.w, &err);
		if (rc)
			tft_error_set_file(&err, outpath);
	}
	free(c.ids);
	free(c.args);
	free(maps);
	free(clock_json);
	free(est_json);
	free(comm_json);
	if (rc) {
		cli_outfile_discard(&of);
		tft_session_close(s);
		tft_error_set_file(&err, in);
		return cli_fail_error(&err);
	}
	if ((rc = cli_outfile_commit(&of))) {
		tft_session_close(s);
		return cli_fail(TFT_EXIT_FAIL, "%s: cannot write: %s", outpath, strerror(-rc));
	}
	if (!quiet)
		printf("tftracer: merged %u ranks, %" PRIu64 " events%s into %s\n", nranks, c.events,
		       raw ? " (raw clocks)" : ", clocks aligned", outpath);
	tft_session_close(s);
	return TFT_EXIT_OK;
}
