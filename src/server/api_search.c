/* SPDX-License-Identifier: MIT */
/*
 * GET /api/search: HTTP glue for the search answer (query/search.c): refuse
 * bad parameters, take a reader, get the server's index ready for the query,
 * answer, reply. The index is shared by the requests (srv->ep[TFT_EP_SEARCH]):
 * built once per session generation and given its argument part under the
 * group's lock, freed when the last request reading it is done with it.
 */
#include <stdlib.h>

#include "query/search.h"
#include "server/api.h"
#include "server/ep_shared.h"

/* srv->ep[TFT_EP_SEARCH]: the search index of one generation of the data (ep_shared.h). */
struct search_use {
	struct tft_session *s;
	const struct tft_query *q;
};

static void *index_build(void *ctx, struct tft_error *err)
{
	return tft_qry_search_index_new(((struct search_use *)ctx)->s, err);
}

/* Requests already holding the index read only its name part, never what this fills. */
static int index_ready(void *ix, void *ctx, struct tft_error *err)
{
	struct search_use *u = ctx;

	return tft_qry_search_prepare(ix, u->s, u->q, err);
}

static void index_free(void *ix)
{
	tft_qry_search_index_free(ix);
}

int tft_api_search(struct tft_http_req *r)
{
	struct tft_server *srv = r->srv;
	struct tft_ep_shared *ref;
	struct tft_pool_slot *slot;
	struct tft_json_writer w;
	struct tft_qry_err e;
	struct tft_error err;
	int rc;

	if (tft_qry_search_check(&r->query, &e) != 0)
		return tft_http_reply_error(r, e.status, e.msg);
	tft_error_clear(&err);
	slot = tft_pool_acquire(&srv->pool, &err);
	if (!slot)
		return tft_http_reply_status(r, err.code ? err.code : TFT_EIO, &err);
	ref = tft_ep_shared_take(&srv->ep[TFT_EP_SEARCH], slot->gen, index_build, index_ready, index_free,
				 &(struct search_use){ slot->sess, &r->query }, &err);
	if (!ref) {
		tft_pool_release(slot);
		return tft_http_reply_status(r, err.code ? err.code : TFT_ENOMEM, &err);
	}
	tft_json_write_init_mem(&w);
	rc = tft_qry_search(slot->sess, ref->obj, &r->query, &w, &e);
	tft_pool_release(slot);
	tft_ep_shared_put(&srv->ep[TFT_EP_SEARCH], ref);
	if (rc != 0) {
		tft_json_write_fini(&w);
		return tft_http_reply_error(r, e.status, e.msg);
	}
	return tft_http_reply_json(r, 200, &w);
}
