/* SPDX-License-Identifier: MIT */
/*
 * GET /api/session (the summary, in the shape of `tftracer info --json`),
 * GET /api/steps, and POST /api/refresh (pick up what a live writer
 * committed since).
 */
#include <string.h>

#include "export/export_session.h"
#include "server/api.h"

int tft_api_session(struct tft_http_req *r)
{
	struct tft_error err;
	struct tft_json_writer w;
	struct tft_pool_slot *slot;

	tft_error_clear(&err);
	slot = tft_pool_acquire(&r->srv->pool, &err);
	if (!slot)
		return tft_http_reply_status(r, err.code ? err.code : TFT_EIO, &err);
	tft_json_write_init_mem(&w);
	tft_export_session_write(slot->sess, &w);
	tft_pool_release(slot);
	return tft_http_reply_json(r, 200, &w);
}

int tft_api_steps(struct tft_http_req *r)
{
	struct tft_error err;
	struct tft_json_writer w;
	struct tft_pool_slot *slot;

	tft_error_clear(&err);
	slot = tft_pool_acquire(&r->srv->pool, &err);
	if (!slot)
		return tft_http_reply_status(r, err.code ? err.code : TFT_EIO, &err);
	tft_json_write_init_mem(&w);
	tft_json_write_begin_object(&w);
	tft_json_write_key(&w, "steps");
	tft_export_steps_write(&w, slot->sess);
	tft_json_write_end_object(&w);
	tft_pool_release(slot);
	return tft_http_reply_json(r, 200, &w);
}

int tft_api_refresh(struct tft_http_req *r)
{
	struct tft_error err;
	struct tft_json_writer w;
	struct tft_pool_slot *slot;
	struct tft_session_summary sum;

	tft_pool_bump(&r->srv->pool);
	tft_error_clear(&err);
	/* Refresh one reader now so errors surface here; the others follow on use. */
	slot = tft_pool_acquire(&r->srv->pool, &err);
	if (!slot)
		return tft_http_reply_status(r, err.code ? err.code : TFT_EIO, &err);
	memset(&sum, 0, sizeof(sum));
	tft_session_get_summary(slot->sess, &sum);
	tft_pool_release(slot);
	tft_json_write_init_mem(&w);
	tft_json_write_begin_object(&w);
	tft_json_write_key(&w, "generation");
	tft_json_write_uint(&w, tft_pool_gen(&r->srv->pool));
	tft_json_write_key(&w, "end_ns");
	tft_json_write_int(&w, sum.end_ns);
	tft_json_write_end_object(&w);
	return tft_http_reply_json(r, 200, &w);
}
