/* SPDX-License-Identifier: MIT */
/*
 * The query answers' refusal (struct tft_qry_err, query/error.h): its two
 * constructors, one of them the one mapping from a library status to an
 * HTTP-like status (the server's tft_http_reply_status uses it too).
 */
#include <stdio.h>

#include "query/error.h"

int tft_qry_fail(struct tft_qry_err *e, unsigned status, const char *msg)
{
	e->status = status;
	snprintf(e->msg, sizeof(e->msg), "%s", msg);
	return (int)status;
}

int tft_qry_fail_status(struct tft_qry_err *e, int rc, const struct tft_error *err)
{
	const char *msg = err && err->msg[0] ? err->msg : tft_strerror(rc);

	switch (rc) {
	case TFT_EINVAL: return tft_qry_fail(e, 400, msg);
	case TFT_ENOTFOUND: return tft_qry_fail(e, 404, msg);
	case TFT_ENOMEM: return tft_qry_fail(e, 503, "out of memory");
	case TFT_EAGAIN: return tft_qry_fail(e, 503, "busy; try again");
	default: return tft_qry_fail(e, 500, msg);
	}
}
