/* SPDX-License-Identifier: MIT */
/* An endpoint group's object shared per session generation (ep_shared.h). */
#include <stdlib.h>

#include "server/ep_shared.h"

void tft_ep_shared_free(void *p)
{
	struct tft_ep_shared *ref = p;

	if (!ref)
		return;
	ref->free_obj(ref->obj);
	free(ref);
}

struct tft_ep_shared *tft_ep_shared_take(struct tft_ep_state *ep, uint64_t gen,
					 void *(*build)(void *ctx, struct tft_error *err),
					 int (*ready)(void *obj, void *ctx, struct tft_error *err),
					 void (*free_obj)(void *obj), void *ctx, struct tft_error *err)
{
	struct tft_ep_shared *ref;

	pthread_mutex_lock(&ep->lock);
	ref = ep->p;
	if (ref && ref->gen != gen) {
		/* the data moved on: requests still reading the old one free it */
		ep->p = NULL;
		if (ref->refs == 0)
			tft_ep_shared_free(ref);
		ref = NULL;
	}
	if (!ref) {
		ref = calloc(1, sizeof(*ref));
		if (!ref)
			tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
		else if (!(ref->obj = build(ctx, err))) {
			free(ref);
			ref = NULL;
		} else {
			ref->free_obj = free_obj;
			ref->gen = gen;
		}
		ep->p = ref;
	}
	if (ref && ready && ready(ref->obj, ctx, err) != 0)
		ref = NULL;
	if (ref)
		ref->refs++;
	pthread_mutex_unlock(&ep->lock);
	return ref;
}

void tft_ep_shared_put(struct tft_ep_state *ep, struct tft_ep_shared *ref)
{
	pthread_mutex_lock(&ep->lock);
	if (--ref->refs == 0 && ref != ep->p)
		tft_ep_shared_free(ref);
	pthread_mutex_unlock(&ep->lock);
}
