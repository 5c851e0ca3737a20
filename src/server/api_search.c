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

/* srv->ep[TFT_EP_SEARCH].p: the search index of one generation of the data. */
struct index_ref {
	struct tft_qry_search_index *ix; /* owned */
	uint64_t gen;                    /* pool generation it was built for */
	unsigned refs;                   /* requests using it (guarded by ep[TFT_EP_SEARCH].lock) */
};

static void ref_free(struct index_ref *ref)
{
	if (!ref)
		return;
	tft_qry_search_index_free(ref->ix);
	free(ref);
}

/*
 * The index of the data the slot's reader holds (its generation: the
 * server's may have moved on since the slot was taken), prepared for q (its
 * argument part when q asks for args); NULL + err on failure.
 */
static struct index_ref *index_get(struct tft_server *srv, struct tft_pool_slot *slot,
				   const struct tft_query *q, struct tft_error *err)
{
	struct tft_session *s = slot->sess;
	uint64_t gen = slot->gen;
	struct tft_ep_state *ep = &srv->ep[TFT_EP_SEARCH];
	struct index_ref *ref;

	pthread_mutex_lock(&ep->lock);
	ref = ep->p;
	if (ref && ref->gen != gen) {
		ep->p = NULL;
		if (ref->refs == 0)
			ref_free(ref);
		ref = NULL;
	}
	if (!ref) {
		ref = calloc(1, sizeof(*ref));
		if (!ref)
			tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
		else if (!(ref->ix = tft_qry_search_index_new(s, err))) {
			free(ref);
			ref = NULL;
		} else {
			ref->gen = gen;
		}
		ep->p = ref;
	}
	/* Requests already holding the index read only its name part, never what this fills. */
	if (ref && tft_qry_search_prepare(ref->ix, s, q, err) != 0)
		ref = NULL;
	if (ref)
		ref->refs++;
	pthread_mutex_unlock(&ep->lock);
	return ref;
}

static void index_put(struct tft_server *srv, struct index_ref *ref)
{
	struct tft_ep_state *ep = &srv->ep[TFT_EP_SEARCH];

	pthread_mutex_lock(&ep->lock);
	if (--ref->refs == 0 && ref != ep->p)
		ref_free(ref);
	pthread_mutex_unlock(&ep->lock);
}

int tft_api_search(struct tft_http_req *r)
{
	struct tft_server *srv = r->srv;
	struct index_ref *ref;
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
	ref = index_get(srv, slot, &r->query, &err);
	if (!ref) {
		tft_pool_release(slot);
		return tft_http_reply_status(r, err.code ? err.code : TFT_ENOMEM, &err);
	}
	tft_json_write_init_mem(&w);
	rc = tft_qry_search(slot->sess, ref->ix, &r->query, &w, &e);
	tft_pool_release(slot);
	index_put(srv, ref);
	if (rc != 0) {
		tft_json_write_fini(&w);
		return tft_http_reply_error(r, e.status, e.msg);
	}
	return tft_http_reply_json(r, 200, &w);
}

void tft_api_search_state_free(void *p)
{
	ref_free(p);
}
