/* SPDX-License-Identifier: MIT */
/*
 * The session summary keys shared by `tftracer info --json` and
 * GET /api/session. It lives in export/, not store/: store/ is also built
 * into libtftracer.so, which links no JSON writer.
 */
#include "export/export_summary.h"

static void put_u64(struct tft_json_writer *w, const char *key, uint64_t v)
{
	tft_json_write_key(w, key);
	tft_json_write_uint(w, v);
}

static void put_i64(struct tft_json_writer *w, const char *key, int64_t v)
{
	tft_json_write_key(w, key);
	tft_json_write_int(w, v);
}

void tft_export_summary_keys(struct tft_json_writer *w, const struct tft_session *s)
{
	struct tft_session_summary sum;

	tft_session_get_summary(s, &sum);
	tft_json_write_key(w, "format");
	tft_json_write_cstr(w, sum.format ? sum.format : "");
	tft_json_write_key(w, "producer");
	tft_json_write_cstr(w, sum.producer ? sum.producer : "");
	put_u64(w, "processes", sum.processes);
	put_u64(w, "tracks", sum.tracks);
	put_u64(w, "slices", sum.slices);
	put_u64(w, "instants", sum.instants);
	put_u64(w, "flows", sum.flows);
	put_u64(w, "counters", sum.counters);
	put_u64(w, "steps", sum.steps);
	put_i64(w, "start_ns", sum.start_ns);
	put_i64(w, "end_ns", sum.end_ns);
	/* Unsigned: a span wider than INT64_MAX (timestamps near both ends of
	 * the range) wraps, as the signed subtraction did in practice, instead
	 * of being undefined behaviour, which UBSan builds abort on. */
	put_i64(w, "duration_ns", (int64_t)((uint64_t)sum.end_ns - (uint64_t)sum.start_ns));
	put_u64(w, "dropped", sum.dropped);
	put_u64(w, "unmatched_flows", sum.unmatched_flows);
	put_u64(w, "unclosed_slices", sum.unclosed_slices);
}
