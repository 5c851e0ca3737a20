/* SPDX-License-Identifier: MIT */
/*
 * The viewport answer (query/viewport.c): GET /api/viewport's JSON for a
 * session, without HTTP (docs/http-api.md "GET /api/viewport"). The server
 * (server/api_viewport.c) and the viewport benchmark call it; it needs no
 * lock: one scratch serves one call at a time.
 */
#ifndef TFT_QUERY_VIEWPORT_H
#define TFT_QUERY_VIEWPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codec/json_write.h"
#include "core/status.h"
#include "query/error.h"
#include "query/params.h"
#include "store/session.h"

/*
 * Buffers reused across answers (one per reader: the caller owns it and
 * uses it for one call at a time). NULL when out of memory.
 */
struct tft_qry_viewport_scratch *tft_qry_viewport_scratch_new(void);
void tft_qry_viewport_scratch_free(struct tft_qry_viewport_scratch *sc); /* NULL: no-op */

/*
 * The refusals that need no session (width, rel), so that a server can
 * refuse before it takes a reader: 0, or e->status (400) with e filled.
 * tft_qry_viewport makes them again, first.
 */
int tft_qry_viewport_check(const struct tft_query *q, struct tft_qry_err *e);

/*
 * Answer q (width, rel, t0, t1, tracks; defaults: the session's span, 1000
 * px, every track) on s: the response object is appended to w and 0
 * returned, or e->status with e filled (w then holds a partial answer: drop
 * it). Refusals, in this order: 400 "width must be an integer in 1..10000",
 * 400 "rel must be 0 or 1", 400 "t0 and t1 must be integer nanoseconds",
 * 400 "t1 must not be before t0", 404 "no such track", 400 "too many track
 * ids", 400 "tracks must be a comma-separated list of track ids"; then what
 * the session reads fail with (tft_qry_fail_status).
 */
int tft_qry_viewport(struct tft_session *s, struct tft_qry_viewport_scratch *sc,
		     const struct tft_query *q, struct tft_json_writer *w, struct tft_qry_err *e);

/* The answer's core, for an already checked window (the benchmark times it). */
struct tft_qry_viewport_req {
	int64_t t0_ns, t1_ns;   /* window; t1 > t0 */
	uint32_t width_px;      /* 1..10000 */
	const uint32_t *tracks; /* borrowed; NULL = every track */
	size_t ntracks;
	bool rel;               /* ts as offsets from t0 */
};

/*
 * Write the viewport response object for req into w. 0, TFT_EINVAL (a bad
 * window, an unknown track), TFT_ENOMEM or what the session scan returns
 * (err filled).
 */
int tft_qry_viewport_write(struct tft_session *s, const struct tft_qry_viewport_req *req,
			   struct tft_qry_viewport_scratch *sc, struct tft_json_writer *w,
			   struct tft_error *err);

#endif /* TFT_QUERY_VIEWPORT_H */
