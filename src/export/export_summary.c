/* SPDX-License-Identifier: MIT */
/*
 * The session summary keys shared by `tftracer info --json` and
 * GET /api/session. It lives in export/, not store/: store/ is also built
 * into libtftracer.so, which links no JSON writer.
 */
#include <stdlib.h>
#include <string.h>

#include "export/export_summary.h"

/* One meta value of lines as an array of strings. */
static void put_lines(struct tft_json_writer *w, const char *key, const char *text)
{
	tft_json_write_key(w, key);
	tft_json_write_begin_array(w);
	while (text && *text) {
		const char *nl = strchr(text, '\n');
		size_t n = nl ? (size_t)(nl - text) : strlen(text);

		tft_json_write_str(w, text, n);
		text += n + (nl != NULL);
	}
	tft_json_write_end_array(w);
}

/* What the producing profiler said about its own trace (XSpace errors and warnings). */
static void put_profiler_messages(struct tft_json_writer *w, const struct tft_session *s)
{
	const char *ne = tft_session_meta(s, "xspace_errors");
	const char *nw = tft_session_meta(s, "xspace_warnings");

	tft_json_write_key_int(w, "profiler_errors", ne ? strtoll(ne, NULL, 10) : 0);
	tft_json_write_key_int(w, "profiler_warnings", nw ? strtoll(nw, NULL, 10) : 0);
	put_lines(w, "profiler_error_messages", tft_session_meta(s, "xspace_error_messages"));
	put_lines(w, "profiler_warning_messages", tft_session_meta(s, "xspace_warning_messages"));
}

static void raw_or_null(struct tft_json_writer *w, const char *key, const char *json)
{
	tft_json_write_key(w, key);
	if (json && tft_json_is_value(json, strlen(json)))
		tft_json_write_value_raw(w, json, strlen(json));
	else
		tft_json_write_null(w);
}

/*
 * "job": {...} for a session that is a job (a job view, or a merged job:
 * meta job_ranks), or nothing: ranks, size, id, clock (meta job_clock, the
 * alignment applied; null when the times are raw), clock_estimate (the
 * alignment estimated, applied or not), comm (the matching's counts),
 * clock_switchable (a job view, whose meta says its directory: its ranks can
 * be shown on their own clocks). From the meta keys only, so the summary
 * needs nothing of the job layer.
 */
static void job_keys(struct tft_json_writer *w, const struct tft_session *s)
{
	const char *n = tft_session_meta(s, "job_ranks"), *v;

	if (!n)
		return;
	tft_json_write_key(w, "job");
	tft_json_write_begin_object(w);
	tft_json_write_key(w, "ranks");
	tft_json_write_uint(w, strtoull(n, NULL, 10));
	tft_json_write_key(w, "size");
	v = tft_session_meta(s, "job_size");
	tft_json_write_uint(w, v ? strtoull(v, NULL, 10) : 0);
	tft_json_write_key(w, "id");
	tft_json_write_cstr(w, (v = tft_session_meta(s, "job_id")) ? v : "");
	raw_or_null(w, "clock", tft_session_meta(s, "job_clock"));
	v = tft_session_meta(s, "job_clock_estimate");
	raw_or_null(w, "clock_estimate", v ? v : tft_session_meta(s, "job_clock"));
	raw_or_null(w, "comm", tft_session_meta(s, "job_comm"));
	tft_json_write_key(w, "clock_switchable");
	tft_json_write_bool(w, tft_session_meta(s, "job_dir") != NULL);
	tft_json_write_end_object(w);
}

void tft_export_summary_keys(struct tft_json_writer *w, const struct tft_session *s)
{
	struct tft_session_summary sum;

	tft_session_get_summary(s, &sum);
	tft_json_write_key(w, "format");
	tft_json_write_cstr(w, sum.format ? sum.format : "");
	tft_json_write_key(w, "producer");
	tft_json_write_cstr(w, sum.producer ? sum.producer : "");
	tft_json_write_key_uint(w, "processes", sum.processes);
	tft_json_write_key_uint(w, "tracks", sum.tracks);
	tft_json_write_key_uint(w, "slices", sum.slices);
	tft_json_write_key_uint(w, "instants", sum.instants);
	tft_json_write_key_uint(w, "flows", sum.flows);
	tft_json_write_key_uint(w, "counters", sum.counters);
	tft_json_write_key_uint(w, "steps", sum.steps);
	tft_json_write_key_int(w, "start_ns", sum.start_ns);
	tft_json_write_key_int(w, "end_ns", sum.end_ns);
	/* Unsigned: a span wider than INT64_MAX (timestamps near both ends of
	 * the range) wraps, as the signed subtraction did in practice, instead
	 * of being undefined behaviour, which UBSan builds abort on. */
	tft_json_write_key_int(w, "duration_ns", (int64_t)((uint64_t)sum.end_ns - (uint64_t)sum.start_ns));
	tft_json_write_key_uint(w, "dropped", sum.dropped);
	tft_json_write_key_uint(w, "unmatched_flows", sum.unmatched_flows);
	tft_json_write_key_uint(w, "unclosed_slices", sum.unclosed_slices);
	put_profiler_messages(w, s);
	job_keys(w, s); /* a job (a directory of ranks, or merged) */
}

static void graph_text(struct tft_json_writer *w, const char *key, struct tft_graph_text t, bool json)
{
	tft_json_write_key(w, key);
	if (!t.p)
		tft_json_write_null(w);
	else if (json)
		tft_json_write_value_checked(w, t.p, t.len);
	else
		tft_json_write_str(w, t.p, t.len);
}

static void graph_cost(struct tft_json_writer *w, const char *key, int64_t v)
{
	tft_json_write_key(w, key);
	if (v == TFT_GRAPH_NO_COST)
		tft_json_write_null(w);
	else
		tft_json_write_int(w, v);
}

void tft_export_graph_node(struct tft_json_writer *w, const struct tft_graph_node *n, int64_t graph_id)
{
	tft_json_write_begin_object(w);
	tft_json_write_key(w, "graph_id");
	tft_json_write_int(w, graph_id);
	graph_text(w, "graph", n->graph, false);
	graph_text(w, "kind", n->kind, false);
	graph_text(w, "name", n->name, false);
	graph_text(w, "op", n->op, false);
	graph_text(w, "device", n->device, false);
	graph_text(w, "inputs", n->inputs, true);
	graph_text(w, "attrs", n->attrs, true);
	graph_text(w, "output_shapes", n->output_shapes, true);
	graph_cost(w, "compute_cost", n->compute_cost);
	graph_cost(w, "temporary_memory", n->temporary_memory);
	graph_cost(w, "persistent_memory", n->persistent_memory);
	graph_text(w, "cost", n->cost, true);
	/* a tfprof OpLogProto's (tfprof_log) op types, float ops and code traces: null without one */
	graph_text(w, "op_types", n->oplog ? n->op_types : (struct tft_graph_text){ NULL, 0 }, true);
	graph_cost(w, "float_ops", n->oplog ? n->float_ops : TFT_GRAPH_NO_COST);
	graph_text(w, "code", n->oplog ? n->code : (struct tft_graph_text){ NULL, 0 }, true);
	graph_cost(w, "step_process", n->step_process);
	graph_cost(w, "step_start_ns", n->step_start);
	tft_json_write_end_object(w);
}
