/* SPDX-License-Identifier: MIT */
/*
 * An endpoint group's object shared by its requests, one per session
 * generation (srv->ep[k].p; ep_shared.c): the first request of a generation
 * builds it under the group's lock, a request of a newer generation replaces
 * it, and a replaced one is freed when the last request using it is done.
 * The flow index of GET /api/slice and the search index of GET /api/search.
 */
#ifndef TFT_SERVER_EP_SHARED_H
#define TFT_SERVER_EP_SHARED_H

#include <stdint.h>

#include "core/status.h"
#include "server/routes.h"

struct tft_ep_shared {
	void *obj;                   /* owned, freed through free_obj */
	void (*free_obj)(void *obj);
	uint64_t gen;                /* the pool generation it was built for */
	unsigned refs;               /* requests using it (guarded by the group's lock) */
};

/*
 * The group's object for the data of generation gen, taken (a reference
 * the request gives back with tft_ep_shared_put): built by build(ctx, err)
 * when the group has none or another generation's, then made ready for this
 * request by ready(obj, ctx, err) under the lock (NULL: nothing to do;
 * requests already holding the object must never read what it fills).
 * NULL + err when it cannot be built or made ready.
 */
struct tft_ep_shared *tft_ep_shared_take(struct tft_ep_state *ep, uint64_t gen,
					 void *(*build)(void *ctx, struct tft_error *err),
					 int (*ready)(void *obj, void *ctx, struct tft_error *err),
					 void (*free_obj)(void *obj), void *ctx, struct tft_error *err);
void tft_ep_shared_put(struct tft_ep_state *ep, struct tft_ep_shared *ref);
/* A group's state hook (routes.c): the object and its reference (NULL: nothing). */
void tft_ep_shared_free(void *p);

#endif /* TFT_SERVER_EP_SHARED_H */
