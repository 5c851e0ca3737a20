/* SPDX-License-Identifier: MIT */
/*
 * Dispatch: exact path match against the API table, then against the
 * embedded assets; nothing else exists (no filesystem, no normalisation).
 */
#include <string.h>

#include "server/routes.h"

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
