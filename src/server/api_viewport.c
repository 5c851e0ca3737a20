/* SPDX-License-Identifier: MIT */
/*
 * GET /api/viewport: HTTP glue for the viewport answer (query/viewport.c):
 * refuse bad parameters, take a reader, answer with its scratch, reply.
 */
#include "query/viewport.h"
#include "server/api.h"

int tft_api_viewport(struct tft_http_req *r)
{
	struct tft_pool_slot *slot;
	struct tft_json_writer w;
	struct tft_qry_err e;
	struct tft_error err;
	int rc;

	if (tft_qry_viewport_check(&r->query, &e) != 0)
		return tft_http_reply_error(r, e.status, e.msg);
	tft_error_clear(&err);
	slot = tft_pool_acquire(&r->srv->pool, &err);
	if (!slot)
		return tft_http_reply_status(r, err.code ? err.code : TFT_EIO, &err);
	if (!slot->scratch && !(slot->scratch = tft_qry_viewport_scratch_new())) {
		tft_pool_release(slot);
		return tft_http_reply_error(r, 503, "out of memory");
	}
	tft_json_write_init_mem(&w);
	rc = tft_qry_viewport(slot->sess, slot->scratch, &r->query, &w, &e);
	tft_pool_release(slot);
	if (rc != 0) {
		tft_json_write_fini(&w);
		return tft_http_reply_error(r, e.status, e.msg);
	}
	return tft_http_reply_json(r, 200, &w);
}
