/* SPDX-License-Identifier: MIT */
/*
 * How a query answer (query/viewport.c, slice.c, search.c, stats.c) refuses
 * or fails: an HTTP-like status and a one-line message, the pair the server
 * sends as `{"error": msg}` with that status and the standalone export
 * shows. One type for the four answers (query/error.c).
 *
 * Statuses: 400 a parameter is malformed or out of range, 404 what it names
 * does not exist (a track, a slice), 503 out of memory or busy, 500 the
 * session could not be read. The message is fixed text or the library's
 * (struct tft_error: file offsets, ids), never request input; the texts are
 * part of the interface (docs/http-api.md; the static export answers with
 * this code too, src/wasm/).
 */
#ifndef TFT_QUERY_ERROR_H
#define TFT_QUERY_ERROR_H

#include "core/status.h"

struct tft_qry_err {
	unsigned status;             /* 400, 404, 500, 503 (see above); 0 while none */
	char msg[TFT_ERROR_MSG_MAX]; /* NUL-terminated, one line */
};

/* Fill e with (status, msg); returns (int)status, what a failing answer returns. */
int tft_qry_fail(struct tft_qry_err *e, unsigned status, const char *msg);

/*
 * Fill e from a library failure rc (a negative tft_status) and its err
 * (NULL or empty: tft_strerror(rc)): TFT_EINVAL 400 and TFT_ENOTFOUND 404
 * with err's message, TFT_ENOMEM 503 "out of memory", TFT_EAGAIN 503
 * "busy; try again", anything else 500 with err's message. Returns the status.
 */
int tft_qry_fail_status(struct tft_qry_err *e, int rc, const struct tft_error *err);

#endif /* TFT_QUERY_ERROR_H */
