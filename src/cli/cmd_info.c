/* SPDX-License-Identifier: MIT */
/*
 * tftracer info FILE [--json]
 * Summary of a session: source format, producer, time span, counts, losses,
 * processes with their tracks, steps; with --memory, for TensorFlow
 * StepStats, the per-allocator peak memory that tf.timeline computes.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analyze/stats.h"
#include "cli/cli.h"
#include "codec/json_write.h"
#include "export/export_summary.h"
#include "export/export_tftimeline.h"
#include "job/clock.h"
#include "job/job.h"
#include "store/session.h"

static const char usage_text[] =
	"usage: tftracer info FILE [--json] [--memory]\n"
	"\n"
	"Summarise a session file: source format, producer, time span, event counts,\n"
	"what was lost (dropped events, unmatched flows, unclosed slices), the\n"
	"processes with their tracks and slice counts, and the steps.\n"
	"\n"
	"  --json        one JSON object instead of text (see docs/cmd-info.md)\n"
	"  --memory      sessions from TensorFlow StepStats: peak memory per allocator\n"
	"                and step, as tf.timeline estimates it (reads every event)\n"
	"  -h, --help    this help\n"
	"\n"
	"Exit status: 0 ok, 1 failure, 2 bad input or usage.\n";

/*
 * Text from the file, fit for a terminal: control characters (escape
 * sequences, say, that could retitle or rewrite the terminal) become '?'.
 * Rotates over 8 buffers, so that one printf may take several.
 */
static const char *term_safe(const char *v)
{
	static char buf[8][1024];
	static unsigned k;
	char *o = buf[k++ % 8];
	size_t i = 0;

	if (!v)
		return "";
	for (; v[i] && i < sizeof(buf[0]) - 4; i++)
		o[i] = (unsigned char)v[i] < 0x20 || v[i] == 0x7f ? '?' : v[i];
	if (v[i]) /* cut: say so */
		memcpy(o + i, "...", 4);
	else
		o[i] = '\0';
	return o;
}

static const char *str_or(const struct tft_session *s, uint32_t id, const char *dflt)
{
	const char *v = tft_session_str(s, id, NULL);

	return v && v[0] ? term_safe(v) : dflt;
}

/* Peak memory per allocator (sessions from StepStats only: it reads every event). */
struct peak_out {
	struct tft_session *s;     /* borrowed */
	struct tft_json_writer *w; /* borrowed; NULL: text */
	int n;
};

static int on_peak(void *ctx, const struct tft_tftimeline_peak *p)
{
	struct peak_out *o = ctx;

	if (!o->w) {
		const struct tft_step *st = p->step == TFT_NONE ? NULL : tft_session_step(o->s, p->step);

		if (!o->n++)
			printf("\npeak memory (tf.timeline estimate: producer start .. last consumer end):\n");
		printf("  %-16s %14" PRId64 " bytes at %" PRId64 " us, %u tensors live  %s\n",
		       p->allocator[0] ? term_safe(p->allocator) : "(none)", p->bytes, p->ts_us, p->ntensors,
		       st ? str_or(o->s, st->name, "") : "");
		return 0;
	}
	o->n++;
	tft_json_write_begin_object(o->w);
	o->w->pretty = false;
	tft_json_write_key(o->w, "allocator");
	tft_json_write_cstr(o->w, p->allocator);
	tft_json_write_key(o->w, "step");
	if (p->step == TFT_NONE)
		tft_json_write_null(o->w);
	else
		tft_json_write_uint(o->w, p->step);
	tft_json_write_key(o->w, "bytes");
	tft_json_write_int(o->w, p->bytes);
	tft_json_write_key(o->w, "ts_us");
	tft_json_write_int(o->w, p->ts_us);
	tft_json_write_key(o->w, "tensors");
	tft_json_write_uint(o->w, p->ntensors);
	tft_json_write_end_object(o->w);
	o->w->pretty = true;
	return 0;
}

static void print_peaks(struct tft_session *s, struct tft_json_writer *w)
{
	struct peak_out o = { s, w, 0 };
	struct tft_error err;
	int rc = 0;

	tft_error_clear(&err);
	if (w) {
		tft_json_write_key(w, "peak_memory");
		tft_json_write_begin_array(w);
	}
	if (tft_tftimeline_is_stepstats(s))
		rc = tft_tftimeline_peak_memory(s, on_peak, &o, &err);
	if (w)
		tft_json_write_end_array(w);
	else if (rc)
		printf("\npeak memory: unavailable (%s)\n", err.msg);
	else if (!tft_tftimeline_is_stepstats(s))
		printf("\npeak memory: only for sessions imported from TensorFlow StepStats\n");
	else if (!o.n)
		printf("\npeak memory: no tensor outputs recorded\n");
}

/* Each line of a meta value, after a label. */
static void print_lines(const char *label, const char *text)
{
	while (text && *text) {
		const char *nl = strchr(text, '\n');
		size_t n = nl ? (size_t)(nl - text) : strlen(text);
		char line[1024];

		snprintf(line, sizeof(line), "%.*s", (int)n, text);
		printf("            %s %s\n", label, term_safe(line));
		text += n + (nl != NULL);
	}
}

/* What the TF/JAX profiler reported about its own trace (XSpace errors and warnings). */
static void print_profiler_messages(struct tft_session *s)
{
	const char *ne = tft_session_meta(s, "xspace_errors");
	const char *nw = tft_session_meta(s, "xspace_warnings");
	long long e = ne ? strtoll(ne, NULL, 10) : 0, w = nw ? strtoll(nw, NULL, 10) : 0;

	if (!e && !w)
		return;
	printf("profiler:   %lld error%s, %lld warning%s (reported by the trace's profiler)\n", e,
	       e == 1 ? "" : "s", w, w == 1 ? "" : "s");
	print_lines("error:  ", tft_session_meta(s, "xspace_error_messages"));
	print_lines("warning:", tft_session_meta(s, "xspace_warning_messages"));
}

/* A number of meta job_comm's flat object ({"messages":12,...}); 0 if absent. */
static unsigned long long comm_count(const char *json, const char *key)
{
	char k[64];
	const char *p;

	snprintf(k, sizeof(k), "\"%s\":", key);
	p = json ? strstr(json, k) : NULL;
	return p ? strtoull(p + strlen(k), NULL, 10) : 0;
}

/* A job (a directory of ranks, or merged): its ranks' clocks and its matched communication. */
static void print_job(struct tft_session *s)
{
	const char *n = tft_session_meta(s, "job_ranks"), *clock = tft_session_meta(s, "job_clock_estimate");
	const char *comm = tft_session_meta(s, "job_comm");
	struct tft_clock_rank *cr = NULL;
	uint32_t ncr = 0;
	bool applied = false;
	char d[64], e[64];

	if (!n)
		return;
	comm = tft_session_meta(s, "job_comm");
	if (!clock)
		clock = tft_session_meta(s, "job_clock");
	printf("job:        %s ranks (size %s%s%s)\n", n, term_safe(tft_session_meta(s, "job_size")),
	       tft_session_meta(s, "job_id") && *tft_session_meta(s, "job_id") ? ", id " : "",
	       term_safe(tft_session_meta(s, "job_id")));
	if (comm)
		printf("comm:       %llu messages matched (%llu sends, %llu receives unmatched), %llu collectives "
		       "(%llu incomplete)\n",
		       comm_count(comm, "messages"), comm_count(comm, "unmatched_sends"),
		       comm_count(comm, "unmatched_receives"), comm_count(comm, "collectives"),
		       comm_count(comm, "incomplete_collectives"));
	if (!clock || tft_clock_parse_job(clock, &cr, &ncr, &applied, NULL) != 0)
		return;
	printf("clocks:     %s to rank %d (offset ± error bound, drift, from)\n",
	       tft_session_meta(s, "job_clock") ? "aligned" : "raw; estimated against", ncr ? cr[0].rank : 0);
	for (uint32_t i = 0; i < ncr; i++) {
		const struct tft_clock_map *m = &cr[i].map;
		int64_t off = m->offset_ns;
		printf("  rank %-5d %s%s", cr[i].rank, off < 0 ? "-" : "+",
		       tft_stats_format_ns(d, sizeof(d), off < 0 ? -off : off));
		if (m->error_ns >= 0)
			printf(" ± %s", tft_stats_format_ns(e, sizeof(e), m->error_ns));
		else if (!(m->method & TFT_CLOCK_REFERENCE))
			printf(" (error unknown)");
		if (m->drift != 0)
			printf(", %+.3f ppm", m->drift * 1e6);
		printf("  %s%s%s%s%s\n", m->method & TFT_CLOCK_REFERENCE ? "reference" : "",
		       m->method & TFT_CLOCK_PINGPONG ? " pingpong" : "",
		       m->method & TFT_CLOCK_COLLECTIVES ? " collectives" : "",
		       m->method & TFT_CLOCK_MESSAGES ? " messages" : "",
		       m->method & TFT_CLOCK_INCONSISTENT ? " INCONSISTENT" : "");
	}
	free(cr);
}

static void print_text(struct tft_session *s, const char *path)
{
	struct tft_session_summary sum;
	char d[64];
	uint32_t np = tft_session_process_count(s), nt = tft_session_track_count(s);
	uint32_t nsteps = tft_session_step_count(s);

	tft_session_get_summary(s, &sum);
	printf("session:    %s\n", path);
	printf("format:     %s\n", sum.format && sum.format[0] ? term_safe(sum.format) : "(unknown)");
	printf("producer:   %s\n", sum.producer && sum.producer[0] ? term_safe(sum.producer) : "(unknown)");
	if (sum.end_ns > sum.start_ns || sum.slices + sum.instants + sum.counters)
		printf("time span:  %" PRId64 " .. %" PRId64 " ns (%s)\n", sum.start_ns, sum.end_ns,
		       tft_stats_format_ns(d, sizeof(d), sum.end_ns - sum.start_ns));
	else
		printf("time span:  (empty)\n");
	printf("events:     %" PRIu64 " slices, %" PRIu64 " instants, %" PRIu64
	       " counter samples, %" PRIu64 " flows, %" PRIu64 " steps\n",
	       sum.slices, sum.instants, sum.counters, sum.flows, sum.steps);
	printf("lost:       %" PRIu64 " dropped, %" PRIu64 " unmatched flows, %" PRIu64
	       " unclosed slices\n", sum.dropped, sum.unmatched_flows, sum.unclosed_slices);
	print_profiler_messages(s);
	printf("processes:  %" PRIu64 ", tracks: %" PRIu64 "\n", sum.processes, sum.tracks);
	print_job(s);
	{
		const char *gn = tft_session_meta(s, "graph_nodes");

		if (gn && strtoull(gn, NULL, 10))
			printf("graph:      %s nodes (GraphDef / CostGraphDef / partition graphs; table "
			       "graph_nodes)\n", gn);
	}

	for (uint32_t p = 0; p < np; p++) {
		const struct tft_process *pr = tft_session_process(s, p);
		if (!pr)
			continue;
		printf("\nprocess %u: %s (pid %" PRId64, p, str_or(s, pr->name, "(unnamed)"), pr->pid);
		if (pr->rank >= 0)
			printf(", rank %d", pr->rank);
		if (pr->host)
			printf(", host %s", term_safe(tft_session_str(s, pr->host, NULL)));
		printf(")\n");
		for (uint32_t t = 0; t < nt; t++) {
			const struct tft_track *tr = tft_session_track(s, t);
			if (!tr || tr->process != p)
				continue;
			printf("  track %-4u %-10s tid %-8" PRId64 " %10" PRIu64 " slices", t,
			       tft_track_kind_name((int)tr->kind), tr->tid, tr->slices);
			if (tr->instants)
				printf(", %" PRIu64 " instants", tr->instants);
			if (tr->counters)
				printf(", %" PRIu64 " counter samples", tr->counters);
			if (tr->slices)
				printf(", %s %u", tft_track_nests(tr->kind, tr->flags) ? "depth" : "lanes",
				       tft_track_nests(tr->kind, tr->flags) ? tr->max_depth : tr->max_depth + 1);
			printf("  %s%s\n", str_or(s, tr->name, "(unnamed)"),
			       tr->flags & TFT_TRACKF_DERIVED ? "  [derived: not counted in stats]" : "");
		}
	}
	/* Tracks whose process id is unknown (should not happen; shown, not hidden). */
	for (uint32_t t = 0; t < nt; t++) {
		const struct tft_track *tr = tft_session_track(s, t);
		if (tr && tr->process >= np)
			printf("  track %-4u (no process) %s\n", t, str_or(s, tr->name, "(unnamed)"));
	}
	if (nsteps) {
		printf("\nsteps: %u\n", nsteps);
		for (uint32_t i = 0; i < nsteps; i++) {
			const struct tft_step *st = tft_session_step(s, i);
			if (!st)
				continue;
			printf("  step %-6" PRId64 " start %" PRId64 " ns  dur %-12s %s%s", st->index,
			       st->start_ns, tft_stats_format_ns(d, sizeof(d), st->dur_ns),
			       str_or(s, st->name, ""), st->traced ? "" : " (not traced)");
			/* whose step, where several processes could have it */
			if (np > 1 && st->process != TFT_NONE && tft_session_process(s, st->process))
				printf("  [process %u]", st->process);
			printf("\n");
		}
	}
}


static void kv_str(struct tft_json_writer *w, const char *k, const char *v)
{
	tft_json_write_key(w, k);
	tft_json_write_cstr(w, v ? v : "");
}

/* List entries: one compact object per line inside the indented document. */
static void begin_item(struct tft_json_writer *w)
{
	tft_json_write_begin_object(w);
	w->pretty = false;
}

static void end_item(struct tft_json_writer *w)
{
	tft_json_write_end_object(w);
	w->pretty = true;
}

static void print_json(struct tft_json_writer *w, struct tft_session *s, const char *path)
{
	uint32_t np = tft_session_process_count(s), nt = tft_session_track_count(s);
	uint32_t nsteps = tft_session_step_count(s);

	tft_json_write_begin_object(w);
	kv_str(w, "file", path);
	/* The counts and span, shared with GET /api/session. */
	tft_export_summary_keys(w, s);
	{
		const char *gn = tft_session_meta(s, "graph_nodes");
		tft_json_write_key_uint(w, "graph_nodes", gn ? strtoull(gn, NULL, 10) : 0);
	}

	tft_json_write_key(w, "process_list");
	tft_json_write_begin_array(w);
	for (uint32_t p = 0; p < np; p++) {
		const struct tft_process *pr = tft_session_process(s, p);
		if (!pr)
			continue;
		begin_item(w);
		tft_json_write_key_uint(w, "id", p);
		kv_str(w, "name", tft_session_str(s, pr->name, NULL));
		tft_json_write_key_int(w, "pid", pr->pid);
		tft_json_write_key_int(w, "rank", pr->rank);
		kv_str(w, "host", tft_session_str(s, pr->host, NULL));
		end_item(w);
	}
	tft_json_write_end_array(w);

	tft_json_write_key(w, "track_list");
	tft_json_write_begin_array(w);
	for (uint32_t t = 0; t < nt; t++) {
		const struct tft_track *tr = tft_session_track(s, t);
		const struct tft_process *pr;
		if (!tr)
			continue;
		pr = tft_session_process(s, tr->process);
		begin_item(w);
		tft_json_write_key_uint(w, "id", t);
		kv_str(w, "name", tft_session_str(s, tr->name, NULL));
		kv_str(w, "process", pr ? tft_session_str(s, pr->name, NULL) : "");
		tft_json_write_key(w, "process_id"); /* process_list's id: names repeat across workers */
		if (pr)
			tft_json_write_uint(w, tr->process);
		else
			tft_json_write_null(w);
		tft_json_write_key(w, "pid");
		if (pr)
			tft_json_write_int(w, pr->pid);
		else
			tft_json_write_null(w);
		tft_json_write_key_int(w, "tid", tr->tid);
		kv_str(w, "kind", tft_track_kind_name((int)tr->kind));
		tft_json_write_key(w, "concurrent");
		tft_json_write_bool(w, (tr->flags & TFT_TRACKF_CONCURRENT) != 0);
		tft_json_write_key(w, "derived");
		tft_json_write_bool(w, (tr->flags & TFT_TRACKF_DERIVED) != 0);
		tft_json_write_key_uint(w, "slices", tr->slices);
		tft_json_write_key_uint(w, "instants", tr->instants);
		tft_json_write_key_uint(w, "counters", tr->counters);
		tft_json_write_key_uint(w, "max_depth", tr->max_depth);
		end_item(w);
	}
	tft_json_write_end_array(w);

	tft_json_write_key(w, "step_list");
	tft_json_write_begin_array(w);
	for (uint32_t i = 0; i < nsteps; i++) {
		const struct tft_step *st = tft_session_step(s, i);
		if (!st)
			continue;
		begin_item(w);
		tft_json_write_key_int(w, "index", st->index);
		kv_str(w, "name", tft_session_str(s, st->name, NULL));
		tft_json_write_key(w, "process_id"); /* null: the step spans processes (or names none) */
		if (st->process != TFT_NONE && tft_session_process(s, st->process))
			tft_json_write_uint(w, st->process);
		else
			tft_json_write_null(w);
		tft_json_write_key_int(w, "start_ns", st->start_ns);
		tft_json_write_key_int(w, "dur_ns", st->dur_ns);
		tft_json_write_key(w, "traced");
		tft_json_write_bool(w, st->traced);
		end_item(w);
	}
	tft_json_write_end_array(w);
}

static void end_json(struct tft_json_writer *w)
{
	tft_json_write_end_object(w);
	tft_json_write_raw_char(w, '\n');
}

int tft_cmd_info(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "memory", no_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct tft_session *s = NULL;
	int json = 0, memory = 0, c, rc;

	optind = 1;
	opterr = 0; /* (cli_bad_option says it in one line) */
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'j': json = 1; break;
		case 'm': memory = 1; break;
		case 'h': fputs(usage_text, stdout); return TFT_EXIT_OK;
		default: return cli_bad_option("info", argv);
		}
	}
	if (optind != argc - 1) {
		fputs(usage_text, stderr);
		return TFT_EXIT_BADINPUT;
	}
	rc = cli_open_session(argv[optind], &s);
	if (rc)
		return rc;
	if (json) {
		struct tft_json_writer w;
		if (tft_json_write_init_file(&w, stdout)) {
			tft_session_close(s);
			return cli_fail(TFT_EXIT_FAIL, "out of memory");
		}
		w.pretty = true;
		print_json(&w, s, argv[optind]);
		if (memory)
			print_peaks(s, &w);
		end_json(&w);
		rc = tft_json_write_finish(&w);
		tft_json_write_fini(&w);
	} else {
		print_text(s, argv[optind]);
		if (memory)
			print_peaks(s, NULL);
		rc = 0;
	}
	tft_session_close(s);
	if (rc || fflush(stdout) != 0 || ferror(stdout))
		return cli_fail(TFT_EXIT_FAIL, "info: cannot write the output");
	return TFT_EXIT_OK;
}
