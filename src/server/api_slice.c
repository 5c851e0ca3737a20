/* SPDX-License-Identifier: MIT */
/*
 * GET /api/slice: HTTP glue for the slice answer (query/slice.c): refuse
 * bad parameters, take a reader, answer with the server's flow index, reply.
 * The flow index is shared by the requests (srv->ep[TFT_EP_FLOWS]): built
 * once per session generation, under the group's lock, and freed when the
 * last request reading it is done with it.
 */
#include <stdlib.h>

#include "query/slice.h"
#include "server/api.h"
#include "server/ep_shared.h"

/* The request's side of the flow-index callback: which generation, and what it took. */
struct flows_use {
	struct tft_server *srv;
	uint64_t gen;              /* the generation the request's reader holds */
	struct tft_ep_shared *ref; /* the one taken, or NULL */
};

static void *flows_build(void *s, struct tft_error *err)
{
	return tft_qry_flows_new(s, err);
}

static void flows_free(void *fx)
{
	tft_qry_flows_free(fx);
}

/* srv->ep[TFT_EP_FLOWS]: the flow index of the data the slot's reader holds (ep_shared.h). */
static const struct tft_qry_flows *flows_get(void *ctx, struct tft_session *s, struct tft_error *err)
{
	struct flows_use *u = ctx;

	u->ref = tft_ep_shared_take(&u->srv->ep[TFT_EP_FLOWS], u->gen, flows_build, NULL, flows_free, s, err);
	return u->ref ? u->ref->obj : NULL;
}

int tft_api_slice(struct tft_http_req *r)
{
	struct tft_server *srv = r->srv;
	struct tft_pool_slot *slot;
	struct tft_json_writer w;
	struct tft_qry_err e;
	struct tft_error err;
	struct flows_use use = { srv, 0, NULL };
	int rc;

	if (tft_qry_slice_check(&r->query, &e) != 0)
		return tft_http_reply_error(r, e.status, e.msg);
	tft_error_clear(&err);
	slot = tft_pool_acquire(&srv->pool, &err);
	if (!slot)
		return tft_http_reply_status(r, err.code ? err.code : TFT_EIO, &err);
	use.gen = slot->gen;
	tft_json_write_init_mem(&w);
	rc = tft_qry_slice(slot->sess, flows_get, &use, &r->query, &w, &e);
	tft_pool_release(slot);
	if (use.ref)
		tft_ep_shared_put(&srv->ep[TFT_EP_FLOWS], use.ref);
	if (rc != 0) {
		tft_json_write_fini(&w);
		return tft_http_reply_error(r, e.status, e.msg);
	}
	return tft_http_reply_json(r, 200, &w);
}
