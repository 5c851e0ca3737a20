/* SPDX-License-Identifier: MIT */
/*
 * The slice answer (query/slice.c): GET /api/slice's JSON for a session,
 * without HTTP (docs/http-api.md "GET /api/slice"), and the flow index it
 * reads. The server (server/api_slice.c) calls it.
 *
 * The flow index (struct tft_qry_flows) holds every flow of a session,
 * sorted by each end's track and time; it is built once (one read of the
 * flows) and only read afterwards, so callers may share one between threads
 * (the server does, under its own lock, per session generation). The
 * answer asks for it through a callback, only once a slice was found.
 */
#ifndef TFT_QUERY_SLICE_H
#define TFT_QUERY_SLICE_H

#include "codec/json_write.h"
#include "core/status.h"
#include "query/error.h"
#include "query/params.h"
#include "store/session.h"

/* The flow index of s as it is now; NULL + err (TFT_ENOMEM, or the read's failure). */
struct tft_qry_flows *tft_qry_flows_new(struct tft_session *s, struct tft_error *err);
void tft_qry_flows_free(struct tft_qry_flows *fx); /* NULL: no-op */

/*
 * How the answer gets the flow index of s: the caller's, built on first use;
 * NULL + err when it cannot be built. It must stay valid until the answer
 * returns.
 */
typedef const struct tft_qry_flows *(*tft_qry_flows_get_fn)(void *ctx, struct tft_session *s,
							     struct tft_error *err);
/* A tft_qry_flows_get_fn for one owner: ctx is a struct tft_qry_flows ** (NULL at first). */
const struct tft_qry_flows *tft_qry_flows_own(void *ctx, struct tft_session *s, struct tft_error *err);

/*
 * The refusals that need no session (the parameters' syntax and ranges),
 * so that a server can refuse before it takes a reader: 0, or e->status
 * (400) with e filled. tft_qry_slice makes them again, first.
 */
int tft_qry_slice_check(const struct tft_query *q, struct tft_qry_err *e);

/*
 * Answer q (track, ts, depth, deepest, seq, nav) on s: the slice object is
 * appended to w and 0 returned, or e->status with e filled (w then holds a
 * partial answer: drop it). The graph nodes the slice joins (`graph`) come
 * from the session (tft_session_graph_lookup). Refusals, in this order: 400
 * "track and ts are required", 400 "track, ts and depth must be integers",
 * 400 "deepest must be 0 or 1", 400 "seq must be a non-negative integer",
 * 400 "nav must be next or prev", 400 "deepest=1 and nav exclude each
 * other", 400 "deepest=1 and seq exclude each other", 404 "no such track",
 * 404 "no later slice at this depth" / "no earlier slice at this depth" /
 * "no slice at this time and depth"; then what the session reads fail with
 * (tft_qry_fail_status).
 */
int tft_qry_slice(struct tft_session *s, tft_qry_flows_get_fn flows, void *flows_ctx,
		  const struct tft_query *q, struct tft_json_writer *w, struct tft_qry_err *e);

#endif /* TFT_QUERY_SLICE_H */
