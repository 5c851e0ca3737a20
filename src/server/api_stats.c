/* SPDX-License-Identifier: MIT */
/*
 * GET /api/stats?by=name|category|track&track=ID[,ID...]&t0=NS&t1=NS&clip=0|1&top=N:
 * op statistics, rows as `tftracer stats --json`. analyze/stats.c computes
 * (definitions in analyze/stats.h): whole-session requests on zero or one
 * track as `tftracer stats`; area selections (a time window, or several
 * tracks) count the slices overlapping [t0, t1], whole or, with clip=1,
 * clipped to the window (the web UI's range aggregation). This file parses
 * the query and writes the JSON.
 */
#include <stdlib.h>
#include <string.h>

#include "analyze/stats.h"
#include "core/model.h"
#include "server/api.h"

#define STATS_MAX_TRACKS 4096

int tft_api_stats(struct tft_http_req *r)
{
	static const char *const by_names[] = { "name", "category", "track" };
	struct tft_stats_opts opts = { .group_by = TFT_STATS_BY_NAME, .track = TFT_NONE };
	struct tft_stats_result *res = NULL;
	struct tft_pool_slot *slot;
	struct tft_json_writer w;
	struct tft_error err;
	size_t list_len, by_len;
	uint32_t *tracks = NULL;
	int64_t top, clip;
	int rc;
	const char *list = tft_query_get(&r->query, "track", &list_len);
	const char *bys = tft_query_get(&r->query, "by", &by_len);

	opts.window = tft_query_get(&r->query, "t0", NULL) || tft_query_get(&r->query, "t1", NULL);
	if (bys) {
		opts.group_by = -1;
		for (int i = 0; i < 3; i++)
			if (strlen(by_names[i]) == by_len && memcmp(bys, by_names[i], by_len) == 0)
				opts.group_by = i;
		if (opts.group_by < 0)
			return tft_http_reply_error(r, 400, "by must be name, category or track");
	}
	if (tft_query_get_i64(&r->query, "t0", INT64_MIN, INT64_MAX, INT64_MIN, &opts.t0) != 0 ||
	    tft_query_get_i64(&r->query, "t1", INT64_MIN, INT64_MAX, INT64_MAX, &opts.t1) != 0 ||
	    opts.t1 < opts.t0)
		return tft_http_reply_error(r, 400, "t0 and t1 must be integer nanoseconds, t0 <= t1");
	/* Without a window there is nothing to clip: clip=1 then changes nothing. */
	if (tft_query_get_i64(&r->query, "clip", 0, 1, 0, &clip) != 0)
		return tft_http_reply_error(r, 400, "clip must be 0 or 1");
	opts.clip = clip == 1;
	if (tft_query_get_i64(&r->query, "top", 0, 1000000, 0, &top) != 0)
		return tft_http_reply_error(r, 400, "top must be an integer in 0..1000000");

	tft_error_clear(&err);
	slot = tft_pool_acquire(&r->srv->pool, &err);
	if (!slot)
		return tft_http_reply_status(r, err.code ? err.code : TFT_EIO, &err);
	if (list && list_len) {
		tracks = malloc(STATS_MAX_TRACKS * sizeof(*tracks));
		rc = tracks ? tft_query_parse_u32_list(list, list_len, tft_session_track_count(slot->sess),
						       tracks, STATS_MAX_TRACKS)
			    : TFT_ENOMEM;
		if (rc < 0) {
			tft_pool_release(slot);
			free(tracks);
			if (rc == TFT_ENOMEM)
				return tft_http_reply_error(r, 503, "out of memory");
			if (rc == TFT_ENOTFOUND)
				return tft_http_reply_error(r, 404, "no such track");
			if (rc == TFT_ENOSPC)
				return tft_http_reply_error(r, 400, "too many track ids");
			return tft_http_reply_error(r, 400, "track must be a comma-separated list of track ids");
		}
		opts.tracks = tracks;
		opts.ntracks = (size_t)rc;
	}
	rc = tft_stats_compute(slot->sess, &opts, &res, &err);
	tft_json_write_init_mem(&w);
	if (rc == 0) {
		size_t n = top > 0 && (size_t)top < res->nrows ? (size_t)top : res->nrows;

		tft_json_write_begin_object(&w);
		tft_json_write_key(&w, "group_by");
		tft_json_write_cstr(&w, by_names[opts.group_by]);
		tft_json_write_key(&w, "slices");
		tft_json_write_uint(&w, res->slices);
		tft_json_write_key(&w, "total_ns");
		tft_json_write_int(&w, res->total_ns);
		tft_json_write_key(&w, "percentile_error");
		tft_json_write_double(&w, res->approx_groups ? TFT_STATS_PERCENTILE_ERROR : 0.0);
		tft_json_write_key(&w, "stored_tracks");
		tft_json_write_uint(&w, res->stored_tracks);
		tft_json_write_key(&w, "groups");
		tft_json_write_uint(&w, res->nrows);
		tft_json_write_key(&w, "rows");
		tft_json_write_begin_array(&w);
		for (size_t i = 0; i < n; i++) {
			const struct tft_stats_row *rw = &res->rows[i];
			tft_json_write_begin_object(&w);
			tft_json_write_key(&w, "name");
			tft_json_write_str(&w, rw->name ? rw->name : "", rw->name ? rw->name_len : 0);
			if (opts.group_by == TFT_STATS_BY_TRACK) {
				tft_json_write_key(&w, "track_id");
				tft_json_write_uint(&w, rw->track_id);
			}
			tft_json_write_key(&w, "count");
			tft_json_write_uint(&w, rw->count);
			tft_json_write_key(&w, "total_ns");
			tft_json_write_int(&w, rw->total_ns);
			tft_json_write_key(&w, "self_ns");
			tft_json_write_int(&w, rw->self_ns);
			tft_json_write_key(&w, "mean_ns");
			tft_json_write_double(&w, rw->mean_ns);
			tft_json_write_key(&w, "min_ns");
			tft_json_write_int(&w, rw->min_ns);
			tft_json_write_key(&w, "max_ns");
			tft_json_write_int(&w, rw->max_ns);
			tft_json_write_key(&w, "p50_ns");
			tft_json_write_int(&w, rw->p50_ns);
			tft_json_write_key(&w, "p99_ns");
			tft_json_write_int(&w, rw->p99_ns);
			tft_json_write_key(&w, "exact");
			tft_json_write_bool(&w, rw->exact);
			tft_json_write_key(&w, "share");
			tft_json_write_double(&w, rw->share);
			tft_json_write_end_object(&w);
		}
		tft_json_write_end_array(&w);
		tft_json_write_end_object(&w);
	}
	/* Row names are borrowed from the session: write them before releasing it. */
	tft_stats_destroy(res);
	tft_pool_release(slot);
	free(tracks);
	if (rc != 0) {
		tft_json_write_fini(&w);
		return tft_http_reply_status(r, rc, &err);
	}
	return tft_http_reply_json(r, 200, &w);
}
