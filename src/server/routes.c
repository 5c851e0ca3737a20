/* SPDX-License-Identifier: MIT */
/*
 * Dispatch: exact path match against the API table, then against the
 * embedded assets; nothing else exists (no filesystem, no normalisation).
 * Also the endpoint groups' hooks: what each keeps per server (srv->ep) and
 * must end or free when the server stops, so that http.c knows no endpoint.
 */
#include <string.h>

#include "server/api.h"
#include "server/ep_shared.h"

struct route {
	const char *path;
	int methods; /* TFT_HTTP_* accepted */
	int (*fn)(struct tft_http_req *r);
};

static const struct route routes[] = {
	{ "/api/session", TFT_HTTP_GET | TFT_HTTP_HEAD, tft_api_session },
	{ "/api/viewport", TFT_HTTP_GET | TFT_HTTP_HEAD, tft_api_viewport },
	{ "/api/slice", TFT_HTTP_GET | TFT_HTTP_HEAD, tft_api_slice },
	{ "/api/search", TFT_HTTP_GET | TFT_HTTP_HEAD, tft_api_search },
	{ "/api/stats", TFT_HTTP_GET | TFT_HTTP_HEAD, tft_api_stats },
	{ "/api/prof", TFT_HTTP_GET | TFT_HTTP_HEAD, tft_api_prof },
	{ "/api/advise", TFT_HTTP_GET | TFT_HTTP_HEAD, tft_api_advise },
	{ "/api/steps", TFT_HTTP_GET | TFT_HTTP_HEAD, tft_api_steps },
	{ "/api/ranks", TFT_HTTP_GET | TFT_HTTP_HEAD, tft_api_ranks },
	{ "/api/clock", TFT_HTTP_POST, tft_api_clock },
	{ "/api/refresh", TFT_HTTP_POST, tft_api_refresh },
	{ "/download/session", TFT_HTTP_GET | TFT_HTTP_HEAD, tft_api_download_session },
	{ "/download/chrome", TFT_HTTP_GET, tft_api_download_chrome },
	{ "/api/live", TFT_HTTP_GET, tft_api_live },
	{ "/api/live/status", TFT_HTTP_GET | TFT_HTTP_HEAD, tft_api_live_status },
	{ "/api/live/ended", TFT_HTTP_POST, tft_api_live_ended },
	{ "/api/runs", TFT_HTTP_GET | TFT_HTTP_HEAD, tft_api_runs },
	{ "/api/trace", TFT_HTTP_POST, tft_api_trace },
	{ "/api/tracing", TFT_HTTP_POST, tft_api_tracing },
	{ "/api/save", TFT_HTTP_POST, tft_api_save },
	{ "/api/stop", TFT_HTTP_POST, tft_api_stop },
};

int tft_routes_dispatch(struct tft_http_req *r)
{
	const struct tft_asset *a;

	for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
		const struct route *rt = &routes[i];
		if (strlen(rt->path) != r->path_len || memcmp(rt->path, r->path, r->path_len) != 0)
			continue;
		if (!(rt->methods & r->method))
			return tft_http_reply_error(r, 405, "method not allowed");
		return rt->fn(r);
	}
	a = tft_assets_find(r->path, r->path_len);
	if (a) {
		if (!(r->method & (TFT_HTTP_GET | TFT_HTTP_HEAD)))
			return tft_http_reply_error(r, 405, "method not allowed");
		return tft_http_reply_asset(r, a);
	}
	return tft_http_reply_error(r, 404, "no such page");
}

/* ---- the endpoint groups' hooks ------------------------------------------ */

struct ep_hooks {
	void (*closing)(struct tft_server *srv); /* before the daemon stops; NULL = none */
	int state;                               /* its srv->ep slot (TFT_EP_*), or -1 */
	void (*free_state)(void *p);             /* frees that slot's state */
};

static const struct ep_hooks hooks[] = {
	{ NULL, TFT_EP_SEARCH, tft_ep_shared_free },
	{ NULL, TFT_EP_FLOWS, tft_ep_shared_free },
	{ NULL, TFT_EP_RANKS, tft_api_ranks_state_free },
	{ tft_api_live_closing, -1, NULL },
};

void tft_routes_closing(struct tft_server *srv)
{
	for (size_t i = 0; i < sizeof(hooks) / sizeof(hooks[0]); i++)
		if (hooks[i].closing)
			hooks[i].closing(srv);
}

void tft_routes_free(struct tft_server *srv)
{
	for (size_t i = 0; i < sizeof(hooks) / sizeof(hooks[0]); i++) {
		const struct ep_hooks *h = &hooks[i];
		if (h->state >= 0 && h->free_state) {
			h->free_state(srv->ep[h->state].p);
			srv->ep[h->state].p = NULL;
		}
	}
}
