/* SPDX-License-Identifier: MIT */
/*
 * The endpoint groups (api_*.c): one handler per route and the hooks that
 * free their server-wide state.
 * Included by routes.c (the route and hook tables) and the api_*.c files;
 * not by http.c, which knows no endpoint.
 */
#ifndef TFT_SERVER_API_H
#define TFT_SERVER_API_H

#include "server/routes.h"

int tft_api_session(struct tft_http_req *r);  /* GET /api/session */
int tft_api_steps(struct tft_http_req *r);    /* GET /api/steps */
int tft_api_refresh(struct tft_http_req *r);  /* POST /api/refresh */
int tft_api_viewport(struct tft_http_req *r); /* GET /api/viewport */
int tft_api_slice(struct tft_http_req *r);    /* GET /api/slice */
int tft_api_search(struct tft_http_req *r);   /* GET /api/search */
int tft_api_stats(struct tft_http_req *r);    /* GET /api/stats */
int tft_api_prof(struct tft_http_req *r);     /* GET /api/prof (tftracer prof's views) */
int tft_api_ranks(struct tft_http_req *r);    /* GET /api/ranks */
int tft_api_clock(struct tft_http_req *r);    /* POST /api/clock */
int tft_api_advise(struct tft_http_req *r);   /* GET /api/advise */
int tft_api_download_session(struct tft_http_req *r); /* GET /download/session */
int tft_api_download_chrome(struct tft_http_req *r);  /* GET /download/chrome */
/* Live endpoints (docs/http-api.md "Live"): live_events.c, live_runs.c, api_live.c. */
int tft_api_live(struct tft_http_req *r);          /* GET /api/live (SSE) */
int tft_api_live_status(struct tft_http_req *r);   /* GET /api/live/status */
int tft_api_live_ended(struct tft_http_req *r);    /* POST /api/live/ended */
int tft_api_runs(struct tft_http_req *r);          /* GET /api/runs */
int tft_api_trace(struct tft_http_req *r);         /* POST /api/trace */
int tft_api_tracing(struct tft_http_req *r);       /* POST /api/tracing */
int tft_api_save(struct tft_http_req *r);          /* POST /api/save */
int tft_api_stop(struct tft_http_req *r);          /* POST /api/stop */
/* Server stop: end the event streams (called before the daemon stops). */
void tft_api_live_closing(struct tft_server *srv);

/* Free an endpoint group's server-wide state (srv->ep[TFT_EP_*].p; NULL is a no-op). */
void tft_api_ranks_state_free(void *p);  /* TFT_EP_RANKS */

#endif /* TFT_SERVER_API_H */
