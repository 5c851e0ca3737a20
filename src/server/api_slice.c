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

/* srv->ep[TFT_EP_FLOWS].p: the flow index of one generation of the data. */
struct flows_ref {
	struct tft_qry_flows *fx; /* owned */
	uint64_t gen;             /* pool generation it was built for */
	unsigned refs;            /* requests using it (guarded by ep[TFT_EP_FLOWS].lock) */
};

/* The request's side of the callback: which generation, and what it took. */
struct flows_use {
	struct tft_server *srv;
	uint64_t gen;          /* the generation the request's reader holds */
	struct flows_ref *ref; /* the one taken, or NULL */
};

static void ref_free(struct flows_ref *ref)
{
	if (!ref)
		return;
	tft_qry_flows_free(ref->fx);
	free(ref);
}

/* The flow index of the data the slot's reader holds (see index_get() in api_search.c). */
static const struct tft_qry_flows *flows_get(void *ctx, struct tft_session *s, struct tft_error *err)
{
	struct flows_use *u = ctx;
	struct tft_ep_state *ep = &u->srv->ep[TFT_EP_FLOWS];
	struct flows_ref *ref;

	pthread_mutex_lock(&ep->lock);
	ref = ep->p;
	if (ref && ref->gen != u->gen) {
		ep->p = NULL;
		if (ref->refs == 0)
			ref_free(ref);
		ref = NULL;
	}
	if (!ref) {
		ref = calloc(1, sizeof(*ref));
		if (!ref)
			tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
		else if (!(ref->fx = tft_qry_flows_new(s, err))) {
			free(ref);
			ref = NULL;
		} else {
			ref->gen = u->gen;
		}
		ep->p = ref;
	}
	if (ref)
		ref->refs++;
	pthread_mutex_unlock(&ep->lock);
	u->ref = ref;
	return ref ? ref->fx : NULL;
}

static void flows_put(struct tft_server *srv, struct flows_ref *ref)
{
	struct tft_ep_state *ep = &srv->ep[TFT_EP_FLOWS];

	pthread_mutex_lock(&ep->lock);
	if (--ref->refs == 0 && ref != ep->p)
		ref_free(ref);
	pthread_mutex_unlock(&ep->lock);
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
		flows_put(srv, use.ref);
	if (rc != 0) {
		tft_json_write_fini(&w);
		return tft_http_reply_error(r, e.status, e.msg);
	}
	return tft_http_reply_json(r, 200, &w);
}

void tft_api_flows_state_free(void *p)
{
	ref_free(p);
}
