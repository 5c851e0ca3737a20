/* SPDX-License-Identifier: MIT */
/*
 * GET /api/ranks[?collectives=N]: a distributed job's per-rank analysis
 * (analyze/ranks.h, in export/export_ranks.c's shape), computed once per
 * session generation and clock and kept; POST /api/clock?mode=raw|aligned:
 * a job directory's ranks shown on their own clocks or aligned (the pool's
 * views switch on their next request).
 */
#include <stdlib.h>
#include <string.h>

#include "analyze/ranks.h"
#include "export/export_ranks.h"
#include "job/job.h"
#include "server/api.h"

#define RANKS_COLLS_DEFAULT 2000 /* collectives listed (the largest skews) */
#define RANKS_COLLS_MAX 100000

struct tft_ranks_cache {
	uint64_t gen;      /* the pool generation it was computed at */
	uint32_t colls;    /* collectives listed */
	char *json;        /* owned: the analysis object */
	size_t len;
};

static void cache_free(struct tft_ranks_cache *c)
{
	if (!c)
		return;
	free(c->json);
	free(c);
}

void tft_api_ranks_state_free(void *p)
{
	cache_free(p);
}

/* The analysis of the slot's session as JSON into a new cache entry. */
static struct tft_ranks_cache *compute(struct tft_pool_slot *slot, uint32_t colls, struct tft_error *err)
{
	struct tft_ranks_result *r = NULL;
	struct tft_ranks_cache *c;
	struct tft_json_writer w;
	size_t len;

	if (tft_ranks_analyze(slot->sess, &r, err))
		return NULL;
	tft_json_write_init_mem(&w);
	tft_export_ranks_json(&w, slot->sess, r, colls);
	tft_ranks_destroy(r);
	c = calloc(1, sizeof(*c));
	if (c && (c->json = tft_json_write_take(&w, &len))) {
		c->len = len;
		c->gen = slot->gen;
		c->colls = colls;
	} else {
		cache_free(c);
		c = NULL;
		tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
	}
	tft_json_write_fini(&w); /* (taken already unless calloc failed: fini twice is safe) */
	return c;
}

int tft_api_ranks(struct tft_http_req *r)
{
	struct tft_server *srv = r->srv;
	struct tft_ep_state *ep = &srv->ep[TFT_EP_RANKS];
	struct tft_ranks_cache *cache;
	struct tft_pool_slot *slot;
	struct tft_json_writer w;
	struct tft_error err;
	int64_t colls;
	bool job, raw;

	if (tft_query_get_i64(&r->query, "collectives", 0, RANKS_COLLS_MAX, RANKS_COLLS_DEFAULT, &colls))
		return tft_http_reply_error(r, 400, "collectives: expected 0 to 100000");
	tft_error_clear(&err);
	slot = tft_pool_acquire(&srv->pool, &err);
	if (!slot)
		return tft_http_reply_status(r, err.code ? err.code : TFT_EIO, &err);
	job = tft_job_of(slot->sess) != NULL;
	raw = tft_job_view_is_raw(slot->sess);
	/* one analysis per generation (a clock switch bumps it): the others wait for it */
	pthread_mutex_lock(&ep->lock);
	cache = ep->p;
	if (!cache || cache->gen != slot->gen || cache->colls != colls) {
		struct tft_ranks_cache *c = compute(slot, (uint32_t)colls, &err);
		if (!c) {
			pthread_mutex_unlock(&ep->lock);
			tft_pool_release(slot);
			return tft_http_reply_status(r, err.code ? err.code : TFT_EIO, &err);
		}
		cache_free(cache);
		ep->p = cache = c;
	}
	tft_json_write_init_mem(&w);
	tft_json_write_begin_object(&w);
	tft_json_write_key(&w, "generation");
	tft_json_write_uint(&w, slot->gen);
	tft_json_write_key(&w, "clock_mode");
	tft_json_write_cstr(&w, raw ? "raw" : "aligned");
	tft_json_write_key(&w, "clock_switchable");
	tft_json_write_bool(&w, job);
	tft_json_write_key(&w, "analysis");
	tft_json_write_value_raw(&w, cache->json, cache->len);
	tft_json_write_end_object(&w);
	pthread_mutex_unlock(&ep->lock);
	tft_pool_release(slot);
	return tft_http_reply_json(r, 200, &w);
}

int tft_api_clock(struct tft_http_req *r)
{
	size_t len;
	const char *mode = tft_query_get(&r->query, "mode", &len);
	struct tft_json_writer w;
	bool raw;

	if (mode && len == 3 && memcmp(mode, "raw", 3) == 0)
		raw = true;
	else if (mode && len == 7 && memcmp(mode, "aligned", 7) == 0)
		raw = false;
	else
		return tft_http_reply_error(r, 400, "mode: expected raw or aligned");
	if (!tft_pool_set_raw(&r->srv->pool, raw))
		return tft_http_reply_error(r, 404, "not a job directory: its clocks are as they are");
	tft_json_write_init_mem(&w);
	tft_json_write_begin_object(&w);
	tft_json_write_key(&w, "clock_mode");
	tft_json_write_cstr(&w, raw ? "raw" : "aligned");
	tft_json_write_key(&w, "generation");
	tft_json_write_uint(&w, tft_pool_gen(&r->srv->pool));
	tft_json_write_end_object(&w);
	return tft_http_reply_json(r, 200, &w);
}
