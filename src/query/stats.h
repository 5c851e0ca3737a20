/* SPDX-License-Identifier: MIT */
/*
 * The stats answer (query/stats.c): GET /api/stats's JSON for a session,
 * without HTTP (docs/http-api.md "GET /api/stats"); analyze/stats.c
 * computes the rows. The server (server/api_stats.c) calls it. No state,
 * no lock.
 */
#ifndef TFT_QUERY_STATS_H
#define TFT_QUERY_STATS_H

#include "codec/json_write.h"
#include "query/error.h"
#include "query/params.h"
#include "store/session.h"

/*
 * The refusals that need no session (by, t0, t1, clip, top), so that a
 * server can refuse before it takes a reader: 0, or e->status (400) with e
 * filled. tft_qry_stats makes them again, first.
 */
int tft_qry_stats_check(const struct tft_query *q, struct tft_qry_err *e);

/*
 * Answer q (by, track, t0, t1, clip, top) on s: the response object is
 * appended to w and 0 returned, or e->status with e filled (w then holds a
 * partial answer: drop it). Refusals, in this order: 400 "by must be name,
 * category or track", 400 "t0 and t1 must be integer nanoseconds, t0 <=
 * t1", 400 "clip must be 0 or 1", 400 "top must be an integer in
 * 0..1000000", 503 "out of memory", 404 "no such track", 400 "too many track
 * ids", 400 "track must be a comma-separated list of track ids"; then what
 * the computation fails with (tft_qry_fail_status).
 */
int tft_qry_stats(struct tft_session *s, const struct tft_query *q, struct tft_json_writer *w,
		  struct tft_qry_err *e);

#endif /* TFT_QUERY_STATS_H */
