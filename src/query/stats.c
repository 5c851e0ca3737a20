/* SPDX-License-Identifier: MIT */
/*
 * The stats answer (query/stats.h):
 * GET /api/stats?by=name|category|track&track=ID[,ID...]&t0=NS&t1=NS&clip=0|1&top=N:
 * op statistics, rows as `tftracer stats --json`. analyze/stats.c computes
 * (definitions in analyze/stats.h): whole-session requests on zero or one
 * track as `tftracer stats`; area selections (a time window, or several
 * tracks) count the slices overlapping [t0, t1], whole or, with clip=1,
 * clipped to the window (the web UI's range aggregation). This file checks
 * the parameters and writes the JSON.
 */
#include <stdlib.h>
#include <string.h>

#include "analyze/stats.h"
#include "core/model.h"
#include "query/stats.h"

#define STATS_MAX_TRACKS 4096

static const char *const by_names[] = { "name", "category", "track" };

/* The parameters that need no session, in the order they are refused: opts, *top. */
static int check_args(const struct tft_query *q, struct tft_stats_opts *opts, int64_t *top,
		      struct tft_qry_err *e)
{
	size_t by_len;
	int64_t clip;
	const char *bys = tft_query_get(q, "by", &by_len);

	*opts = (struct tft_stats_opts){ .group_by = TFT_STATS_BY_NAME, .track = TFT_NONE };
	opts->window = tft_query_get(q, "t0", NULL) || tft_query_get(q, "t1", NULL);
	if (bys) {
		opts->group_by = -1;
		for (int i = 0; i < 3; i++)
			if (strlen(by_names[i]) == by_len && memcmp(bys, by_names[i], by_len) == 0)
				opts->group_by = i;
		if (opts->group_by < 0)
			return tft_qry_fail(e, 400, "by must be name, category or track");
	}
	if (tft_query_get_i64(q, "t0", INT64_MIN, INT64_MAX, INT64_MIN, &opts->t0) != 0 ||
	    tft_query_get_i64(q, "t1", INT64_MIN, INT64_MAX, INT64_MAX, &opts->t1) != 0 ||
	    opts->t1 < opts->t0)
		return tft_qry_fail(e, 400, "t0 and t1 must be integer nanoseconds, t0 <= t1");
	/* Without a window there is nothing to clip: clip=1 then changes nothing. */
	if (tft_query_get_i64(q, "clip", 0, 1, 0, &clip) != 0)
		return tft_qry_fail(e, 400, "clip must be 0 or 1");
	opts->clip = clip == 1;
	if (tft_query_get_i64(q, "top", 0, 1000000, 0, top) != 0)
		return tft_qry_fail(e, 400, "top must be an integer in 0..1000000");
	return 0;
}

int tft_qry_stats_check(const struct tft_query *q, struct tft_qry_err *e)
{
	struct tft_stats_opts opts;
	int64_t top;

	return check_args(q, &opts, &top, e);
}

static void write_stats(struct tft_json_writer *w, const struct tft_stats_opts *opts,
			const struct tft_stats_result *res, int64_t top)
{
	size_t n = top > 0 && (size_t)top < res->nrows ? (size_t)top : res->nrows;

	tft_json_write_begin_object(w);
	tft_json_write_key(w, "group_by");
	tft_json_write_cstr(w, by_names[opts->group_by]);
	tft_json_write_key(w, "slices");
	tft_json_write_uint(w, res->slices);
	tft_json_write_key(w, "total_ns");
	tft_json_write_int(w, res->total_ns);
	tft_json_write_key(w, "percentile_error");
	tft_json_write_double(w, res->approx_groups ? TFT_STATS_PERCENTILE_ERROR : 0.0);
	tft_json_write_key(w, "stored_tracks");
	tft_json_write_uint(w, res->stored_tracks);
	tft_json_write_key(w, "groups");
	tft_json_write_uint(w, res->nrows);
	tft_json_write_key(w, "rows");
	tft_json_write_begin_array(w);
	for (size_t i = 0; i < n; i++) {
		const struct tft_stats_row *rw = &res->rows[i];
		tft_json_write_begin_object(w);
		tft_json_write_key(w, "name");
		tft_json_write_str(w, rw->name ? rw->name : "", rw->name ? rw->name_len : 0);
		if (opts->group_by == TFT_STATS_BY_TRACK) {
			tft_json_write_key(w, "track_id");
			tft_json_write_uint(w, rw->track_id);
		}
		tft_json_write_key(w, "count");
		tft_json_write_uint(w, rw->count);
		tft_json_write_key(w, "total_ns");
		tft_json_write_int(w, rw->total_ns);
		tft_json_write_key(w, "self_ns");
		tft_json_write_int(w, rw->self_ns);
		tft_json_write_key(w, "mean_ns");
		tft_json_write_double(w, rw->mean_ns);
		tft_json_write_key(w, "min_ns");
		tft_json_write_int(w, rw->min_ns);
		tft_json_write_key(w, "max_ns");
		tft_json_write_int(w, rw->max_ns);
		tft_json_write_key(w, "p50_ns");
		tft_json_write_int(w, rw->p50_ns);
		tft_json_write_key(w, "p99_ns");
		tft_json_write_int(w, rw->p99_ns);
		tft_json_write_key(w, "exact");
		tft_json_write_bool(w, rw->exact);
		tft_json_write_key(w, "share");
		tft_json_write_double(w, rw->share);
		tft_json_write_end_object(w);
	}
	tft_json_write_end_array(w);
	tft_json_write_end_object(w);
}

int tft_qry_stats(struct tft_session *s, const struct tft_query *q, struct tft_json_writer *w,
		  struct tft_qry_err *e)
{
	struct tft_stats_opts opts;
	struct tft_stats_result *res = NULL;
	struct tft_error err;
	size_t list_len;
	uint32_t *tracks = NULL;
	int64_t top;
	int rc;
	const char *list = tft_query_get(q, "track", &list_len);

	if (check_args(q, &opts, &top, e) != 0)
		return (int)e->status;
	if (list && list_len) {
		tracks = malloc(STATS_MAX_TRACKS * sizeof(*tracks));
		rc = tracks ? tft_query_parse_u32_list(list, list_len, tft_session_track_count(s), tracks,
						       STATS_MAX_TRACKS)
			    : TFT_ENOMEM;
		if (rc < 0) {
			free(tracks);
			if (rc == TFT_ENOMEM)
				return tft_qry_fail(e, 503, "out of memory");
			if (rc == TFT_ENOTFOUND)
				return tft_qry_fail(e, 404, "no such track");
			if (rc == TFT_ENOSPC)
				return tft_qry_fail(e, 400, "too many track ids");
			return tft_qry_fail(e, 400, "track must be a comma-separated list of track ids");
		}
		opts.tracks = tracks;
		opts.ntracks = (size_t)rc;
	}
	tft_error_clear(&err);
	rc = tft_stats_compute(s, &opts, &res, &err);
	if (rc == 0) {
		write_stats(w, &opts, res, top); /* (row names are borrowed from the session) */
		rc = w->status;
	}
	tft_stats_destroy(res);
	free(tracks);
	return rc != 0 ? tft_qry_fail_status(e, rc, &err) : 0;
}
