/* SPDX-License-Identifier: MIT */
/*
 * The per-rank analysis (analyze/ranks.c) on generated jobs whose truth is
 * known (tests/lib/jobgen.h): the deliberate straggler found with the op
 * that made it late, each step's compute / communication / waiting / idle
 * summing to the step, the matrix of the ring and the reports, the
 * collectives' skew; in a job view and in one session holding the ranks
 * (the job merged by copying every rank's events into one file).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/ranks.h"
#include "job/job.h"
#include "jobgen.h"
#include "store/writer.h"
#include "tap.h"

static char root[] = "/tmp/tft-ranks-XXXXXX";

static const char *str(struct tft_session *s, uint32_t id)
{
	return tft_session_str(s, id, NULL);
}

static void check(const char *what, struct tft_session *s, const struct tft_ranks_result *r, uint32_t nranks,
		  uint32_t steps, int32_t straggler, const struct jobgen_truth *tr)
{
	bool sums = true, busy = true;
	uint64_t ring = 0, other = 0;

	is_int(r->nranks, nranks, what);
	is_int(r->nsteps, steps, "... steps");
	is_int(r->straggler, straggler, "... the straggler");
	ok(r->nops > 0 && strcmp(str(s, r->ops[0].name), "slow_op") == 0 &&
		   r->ops[0].straggler_ns > r->ops[0].others_ns,
	   "... slow_op made it late (%s: %lld vs %lld ns)", r->nops ? str(s, r->ops[0].name) : "-",
	   r->nops ? (long long)r->ops[0].straggler_ns : 0, r->nops ? (long long)r->ops[0].others_ns : 0);
	for (uint32_t k = 0; k < r->nsteps; k++)
		for (uint32_t i = 0; i < r->nranks; i++) {
			const struct tft_ranks_cell *c = &r->cells[(size_t)k * r->nranks + i];
			int64_t sum = c->compute_ns + c->comm_ns + c->wait_ns + c->idle_ns;
			if (sum != c->end_ns - c->start_ns) {
				sums = false;
				printf("#   step %u rank %u: %lld + %lld + %lld + %lld != %lld\n", k, i,
				       (long long)c->compute_ns, (long long)c->comm_ns, (long long)c->wait_ns,
				       (long long)c->idle_ns, (long long)(c->end_ns - c->start_ns));
			}
			if (c->compute_ns <= 0 || c->comm_ns <= 0)
				busy = false;
		}
	ok(sums, "... compute + communication + waiting + idle = the step, every step and rank");
	ok(busy, "... every rank computes and communicates in every step");
	ok(r->ranks[straggler].total.compute_ns > r->ranks[(straggler + 1) % nranks].total.compute_ns,
	   "... the straggler computes longest");
	ok(r->ranks[(straggler + 1) % nranks].total.wait_ns > r->ranks[straggler].total.wait_ns,
	   "... and waits least");
	/* the ring (r to r+1, 1 MiB) and the reports (r to 0, 64 B), one each per step */
	for (uint32_t p = 0; p < r->npairs; p++) {
		const struct tft_ranks_pair *q = &r->pairs[p];
		uint64_t want_n = 0, want_b = 0;
		if (q->dst == (q->src + 1) % nranks)
			want_n += steps, want_b += (uint64_t)steps * 1048576;
		if (q->dst == 0 && q->src != 0)
			want_n += steps, want_b += (uint64_t)steps * 64;
		if (q->messages == want_n && q->bytes == want_b && q->time_ns > 0)
			ring += q->messages;
		else
			other++;
	}
	is_int(ring, (uint64_t)steps * (2 * nranks - 1), "... the matrix: the ring's and the reports' messages and bytes");
	is_int(other, 0, "... every pair as sent");
	is_int(r->npairs, 2 * nranks - 2, "... 2n-2 pairs (4 to 0 both ring and report)");
	is_int(r->messages, tr->messages, "... every message matched");
	is_int(r->unmatched_sends + r->unmatched_receives, 0, "... none unmatched");
	is_int(r->ncolls, tr->collectives, "... every collective");
	is_int(r->incomplete_collectives, 0, "... complete");
	{
		uint64_t straggler_last = 0, allreduce = 0;
		bool skew = true;
		for (uint32_t g = 0; g < r->ncolls; g++) {
			const struct tft_ranks_coll *c = &r->colls[g];
			if (strcmp(str(s, c->name), "MPI_Allreduce") != 0)
				continue;
			allreduce++;
			straggler_last += c->last_rank == straggler;
			skew &= c->last_ns - c->first_ns >= 150000 && c->members == nranks;
		}
		/* (rank 0 arrives last: it waited for the straggler's report first; the
		 * straggler's lateness is the skew all the same) */
		is_int(straggler_last, 0, "... rank 0 arrives last at every MPI_Allreduce, not the straggler");
		ok(skew, "... and their skew is the straggler's lateness (>= 150 us)");
		ok(r->ranks[0].caused_ns < r->ranks[straggler].caused_ns / 10,
		   "... the waiting for rank 0 goes to the straggler whose report it waited for (%lld vs %lld ns)",
		   (long long)r->ranks[0].caused_ns, (long long)r->ranks[straggler].caused_ns);
	}
}

/* The job's ranks copied into one session (what `tftracer merge` does, simplified). */
struct copy_ctx {
	struct tft_writer *w;
	struct tft_session *s;
	uint32_t track;
	struct tft_arg args[64];
	int status;
};

static int on_copy(void *c, const struct tft_event *ev)
{
	struct copy_ctx *x = c;
	struct tft_event e = *ev;

	e.track = x->track;
	e.name = tft_writer_intern_cstr(x->w, str(x->s, ev->name));
	e.cat = tft_writer_intern_cstr(x->w, str(x->s, ev->cat));
	for (uint16_t i = 0; i < ev->nargs && i < 64; i++) {
		x->args[i] = ev->args[i];
		x->args[i].key = tft_writer_intern_cstr(x->w, str(x->s, ev->args[i].key));
		if (ev->args[i].type == TFT_ARG_STR || ev->args[i].type == TFT_ARG_JSON)
			x->args[i].v.str = tft_writer_intern_cstr(x->w, str(x->s, ev->args[i].v.str));
	}
	e.args = x->args;
	x->status |= tft_writer_append(x->w, &e);
	return 0;
}

static struct tft_session *copy_all(struct tft_session *v, const char *path)
{
	struct tft_error err;
	struct tft_writer *w;
	struct copy_ctx cc = { 0 };

	tft_error_clear(&err);
	if (!(w = tft_writer_open(path, NULL, &err)))
		return NULL;
	cc.w = w;
	cc.s = v;
	for (uint32_t i = 0; i < tft_session_process_count(v); i++) {
		struct tft_process p = *tft_session_process(v, i);
		p.name = tft_writer_intern_cstr(w, str(v, p.name));
		p.host = tft_writer_intern_cstr(w, str(v, p.host));
		p.labels = 0;
		tft_writer_add_process(w, &p);
	}
	for (uint32_t t = 0; t < tft_session_track_count(v); t++) {
		struct tft_track tr = *tft_session_track(v, t);
		tr.name = tft_writer_intern_cstr(w, str(v, tr.name));
		cc.track = tft_writer_add_track(w, &tr);
		tft_session_scan(v, t, INT64_MIN, INT64_MAX, 0, on_copy, &cc, &err);
	}
	for (uint32_t i = 0; i < tft_session_step_count(v); i++) {
		struct tft_step st = *tft_session_step(v, i);
		st.name = tft_writer_intern_cstr(w, str(v, st.name));
		tft_writer_add_step(w, &st);
	}
	if (cc.status || tft_writer_close(w, &err))
		return NULL;
	return tft_session_open(path, &err);
}

int main(void)
{
	static const int64_t skew[5] = { 0, -2000000, 500000, 7000000, -30000 };
	struct jobgen_opts o = { .ranks = 5, .steps = 6, .fillers = 12, .straggler = 3, .straggle_ns = 300000,
				 .skew_ns = skew, .pingpong = true, .steps_recorded = true, .seed = 11 };
	struct jobgen_truth tr;
	struct tft_ranks_result *r = NULL;
	struct tft_error err;
	struct tft_session *v, *m;
	char dir[512], path[600];

	if (!mkdtemp(root)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(dir, sizeof(dir), "%s/job", root);
	if (!ok(jobgen_write(&o, dir, &tr) == 0, "generated a 5-rank job"))
		return done_testing();
	tft_error_clear(&err);
	v = tft_job_open_session(dir, NULL, &err);
	if (!ok(v != NULL, "job opens"))
		return done_testing();
	if (ok(tft_ranks_analyze(v, &r, &err) == 0, "job view: analysed")) {
		check("job view: 5 ranks", v, r, 5, 6, 3, &tr);
		ok(r->clock_aligned && r->ranks[3].clock_error_ns >= 0 &&
			   llabs(r->ranks[3].clock_offset_ns - 7000000) <= r->ranks[3].clock_error_ns,
		   "job view: the ranks' clocks are known");
		tft_ranks_destroy(r);
	}
	/* one session holding every rank (the aligned view copied) */
	snprintf(path, sizeof(path), "%s/merged.tft", root);
	m = copy_all(v, path);
	if (ok(m != NULL, "the ranks copied into one session")) {
		r = NULL;
		tft_error_clear(&err);
		if (ok(tft_ranks_analyze(m, &r, &err) == 0, "one session: analysed"))
			check("one session: 5 ranks", m, r, 5, 6, 3, &tr);
		tft_ranks_destroy(r);
		tft_session_close(m);
	}
	tft_session_close(v);
	/* a session without ranks: nothing */
	{
		struct tft_writer *w;
		struct tft_process p = { .rank = -1, .pid = 1 };
		snprintf(path, sizeof(path), "%s/single.tft", root);
		tft_error_clear(&err);
		w = tft_writer_open(path, NULL, &err);
		tft_writer_add_process(w, &p);
		tft_writer_close(w, &err);
		m = tft_session_open(path, &err);
		r = NULL;
		ok(m && tft_ranks_analyze(m, &r, &err) == 0 && r && r->nranks == 0 && r->straggler == -1,
		   "a session without ranks: no ranks, no straggler");
		tft_ranks_destroy(r);
		tft_session_close(m);
	}
	if (!getenv("KEEP")) {
		char cmd[600];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
		if (system(cmd) != 0)
			printf("# could not remove %s\n", root);
	}
	return done_testing();
}
