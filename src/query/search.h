/* SPDX-License-Identifier: MIT */
/*
 * The search answer (query/search.c): GET /api/search's JSON for a session,
 * without HTTP (docs/http-api.md "GET /api/search"), and the index it reads.
 * The server (server/api_search.c) calls it.
 *
 * The index (struct tft_qry_search_index) is built by one scan of the
 * session (names, categories, tracks); its argument part by a second scan,
 * on the first query that asks for args (tft_qry_search_prepare). Once
 * prepared for a query the answer only reads it, so callers may share one
 * index between threads if they serialise tft_qry_search_index_new and
 * tft_qry_search_prepare (the server does, under its own lock, per session
 * generation). The layer itself takes no lock.
 */
#ifndef TFT_QUERY_SEARCH_H
#define TFT_QUERY_SEARCH_H

#include "codec/json_write.h"
#include "core/status.h"
#include "query/error.h"
#include "query/params.h"
#include "store/session.h"

/* The index of s as it is now (its name part); NULL + err on failure. */
struct tft_qry_search_index *tft_qry_search_index_new(struct tft_session *s, struct tft_error *err);
void tft_qry_search_index_free(struct tft_qry_search_index *ix); /* NULL: no-op */

/*
 * Make ix ready for q: when q asks for args (in=...,args) and ix has no
 * argument part yet, build it (one scan of s); otherwise nothing. 0, or a
 * negative tft_status + err (ix then is as before).
 */
int tft_qry_search_prepare(struct tft_qry_search_index *ix, struct tft_session *s,
			   const struct tft_query *q, struct tft_error *err);

/*
 * The refusals that need no session (every parameter's, the regex's
 * syntax), so that a server can refuse before it takes a reader: 0, or
 * e->status (400) with e filled. tft_qry_search makes them again, first.
 */
int tft_qry_search_check(const struct tft_query *q, struct tft_qry_err *e);

/*
 * Answer q (q, regex, exact, in, limit, after_ts, after_track, after_depth,
 * after_seq) on s with ix (an index of s; prepared here when it needs to
 * be): the response object is appended to w and 0 returned, or e->status
 * with e filled (w then holds a partial answer: drop it). Refusals, in this
 * order: 400 "q is required", 400 "exact must be 0 or 1", 400 "q is limited
 * to 4096 bytes with exact=1" / "q is limited to 256 bytes of text", 400
 * "regex, limit, after_ts, after_track, after_depth, after_seq must be
 * integers in range", 400 "in must be a comma-separated list of name, cat,
 * args, track", 400 "exact=1 and regex=1 exclude each other", 400
 * "back-references (\1 to \9) are not supported in a regex", 400 "not a
 * valid POSIX extended regular expression"; then what the session reads
 * fail with (tft_qry_fail_status).
 */
int tft_qry_search(struct tft_session *s, struct tft_qry_search_index *ix, const struct tft_query *q,
		   struct tft_json_writer *w, struct tft_qry_err *e);

#endif /* TFT_QUERY_SEARCH_H */
