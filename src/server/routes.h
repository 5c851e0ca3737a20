/* SPDX-License-Identifier: MIT */
/*
 * Server internals shared by http.c (libmicrohttpd glue), routes.c
 * (dispatch and the endpoint groups' hooks), pool.c (session readers) and
 * the api_*.c endpoint groups (declared in server/api.h, which http.c does
 * not include). Not a public interface: nothing outside src/server includes
 * it.
 */
#ifndef TFT_SERVER_ROUTES_H
#define TFT_SERVER_ROUTES_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codec/json_write.h"
#include "core/status.h"
#include "export/web_assets.h"
#include "server/http.h"
#include "server/query.h"
#include "store/session.h"

struct MHD_Connection;
struct MHD_Daemon;
struct tft_qry_viewport_scratch;

enum { TFT_HTTP_GET = 1, TFT_HTTP_HEAD = 2, TFT_HTTP_POST = 4, TFT_HTTP_OTHER = 8 };

#define TFT_HTTP_MAX_BODY (64u << 10) /* largest accepted request body */
#define TFT_HTTP_MAX_EXPORTS 2        /* concurrent /download/chrome streams */

/* ---- session readers (pool.c) ------------------------------------------ */

/* One reader: a session plus per-reader scratch, used by one request at a time. */
struct tft_pool_slot {
	pthread_mutex_t lock;     /* held by the request using the slot */
	struct tft_session *sess; /* owned (opened by the pool), or borrowed (shared) */
	uint64_t gen;             /* server generation this reader was refreshed to */
	struct tft_qry_viewport_scratch *scratch; /* owned: viewport buffers (query/viewport.h),
						    * made on first use (api_viewport.c) */
	struct tft_pool *pool;    /* borrowed: back pointer */
};

struct tft_job;

struct tft_pool {
	struct tft_server_source src; /* copy; its pointers are borrowed from the caller */
	struct tft_job *job;          /* owned: src.path is a job directory (job/job.h), read
				       * once; each reader is a view of it */
	atomic_bool raw;              /* job views show each rank's own clock (POST /api/clock) */
	struct tft_pool_slot *slots;  /* owned; n entries */
	unsigned n;
	bool shared;                  /* one borrowed session for everyone */
	atomic_uint next;             /* round-robin start for acquire */
	_Atomic uint64_t gen;         /* bumped by tft_pool_bump (POST /api/refresh) */
};

int tft_pool_init(struct tft_pool *p, const struct tft_server_source *src, unsigned n,
		  struct tft_error *err);
void tft_pool_fini(struct tft_pool *p);
/* A reader for this request (blocks while all are busy); NULL + err on failure. */
struct tft_pool_slot *tft_pool_acquire(struct tft_pool *p, struct tft_error *err);
void tft_pool_release(struct tft_pool_slot *s);
/* Readers refresh (tft_session_refresh) on their next acquire. */
void tft_pool_bump(struct tft_pool *p);
static inline uint64_t tft_pool_gen(struct tft_pool *p)
{
	return atomic_load(&p->gen);
}
/*
 * A reader of its own for a long job on its own thread (downloads), when
 * the source can open one (path or open callback): never a pool slot, so a
 * job never holds up requests. Close it with tft_pool_close_private.
 */
bool tft_pool_can_open(const struct tft_pool *p);
struct tft_session *tft_pool_open_private(struct tft_pool *p, struct tft_error *err);
void tft_pool_close_private(struct tft_pool *p, struct tft_session *s);
/*
 * A job's views on raw clocks (true) or aligned (false): readers take it on
 * their next acquire (the generation is bumped, so caches built from the
 * old times are rebuilt). false when the pool serves no job.
 */
bool tft_pool_set_raw(struct tft_pool *p, bool raw);

/* ---- the server ------------------------------------------------------- */

/*
 * Server-wide state an endpoint group builds on first use (an index, a
 * cache), under its own lock. The server only initialises the locks; each
 * group frees its state through its hook in routes.c (tft_routes_free).
 */
enum {
	TFT_EP_SEARCH, /* the search index (api_search.c), a struct tft_ep_shared (ep_shared.h) */
	TFT_EP_FLOWS,  /* the flow index (api_slice.c), a struct tft_ep_shared (ep_shared.h) */
	TFT_EP_RANKS,  /* struct tft_ranks_cache (api_ranks.c) */
	TFT_EP_COUNT
};

struct tft_ep_state {
	pthread_mutex_t lock; /* held while using or building p */
	void *p;              /* owned by the endpoint group; NULL until built */
};

struct tft_server {
	struct MHD_Daemon *daemon; /* owned */
	struct tft_pool pool;
	char *path;              /* owned copy of the session path, or NULL */
	char host[256];          /* bound address as given */
	char url[600];           /* what to open (token included) */
	char token[96];          /* "" when auth is off */
	size_t token_len;
	uint16_t port;
	bool auth;               /* requests need the token */
	bool check_host;         /* loopback without auth: Host header must be loopback */
	bool tls;
	char *tls_cert, *tls_key; /* owned PEM text */

	struct tft_ep_state ep[TFT_EP_COUNT]; /* the endpoint groups' state (TFT_EP_*) */

	pthread_mutex_t job_lock;  /* guards jobs, active, last_request_ns, end_sent, end_read */
	pthread_cond_t job_cond;   /* signalled when a job or a request ends */
	unsigned jobs;             /* download threads running */
	unsigned active;           /* requests seen and not yet answered (streams too) */
	int64_t last_request_ns;   /* when the latest request came (CLOCK_REALTIME) */
	unsigned end_sent;         /* event streams sent their `end` by this stop (tft_api_live_closing) */
	unsigned end_read;         /* pages that said they read an `end` (POST /api/live/ended) */
};

/* ---- one request (http.c) --------------------------------------------- */

struct tft_http_req {
	struct tft_server *srv;       /* borrowed */
	struct MHD_Connection *conn;  /* borrowed */
	int method;                   /* TFT_HTTP_* */
	char *target;                 /* owned copy of the raw request target, or NULL */
	const char *path;             /* borrowed from target */
	size_t path_len;
	struct tft_query query;
	size_t body_bytes;            /* POST body received so far */
	bool too_long;                /* the target exceeded the limits */
	bool started;                 /* the access handler has run once */
	bool queued;                  /* a response was queued */
	bool token_in_query;          /* authenticated by ?token= (set the cookie) */
	char *body;                   /* owned: the first TFT_HTTP_KEEP_BODY bytes of a POST
				       * body (NUL-terminated), or NULL */
	size_t body_len;              /* bytes kept in body */
};

#define TFT_HTTP_KEEP_BODY 4096u /* POST body bytes kept for the handler (live controls) */

/* Reply helpers: each queues exactly one response; 0 or a negative status. */
int tft_http_reply_json(struct tft_http_req *r, unsigned status, struct tft_json_writer *w);
/* {"error": msg}; msg must be fixed text, never request input. */
int tft_http_reply_error(struct tft_http_req *r, unsigned status, const char *msg);
int tft_http_reply_asset(struct tft_http_req *r, const struct tft_asset *a);
/* A regular file (fd owned by the response from now on). */
int tft_http_reply_file(struct tft_http_req *r, int fd, uint64_t size, const char *type,
			const char *filename);
/* A stream read from fd until EOF (fd owned by the response), chunked. */
int tft_http_reply_stream(struct tft_http_req *r, int fd, const char *type, const char *filename);
/* A request header (borrowed) or NULL. */
const char *tft_http_header(struct tft_http_req *r, const char *name);

/*
 * A streamed response of unknown length produced by fn (server-sent events):
 * fn(ctx, pos, buf, max) returns the bytes written, 0 after suspending the
 * connection (tft_http_suspend; resume it with tft_http_resume), or -1 at
 * the end of the stream. free_fn(ctx) runs when the response is gone. On
 * failure free_fn(ctx) has run too.
 */
typedef long (*tft_http_reader_fn)(void *ctx, uint64_t pos, char *buf, size_t max);
int tft_http_reply_events(struct tft_http_req *r, tft_http_reader_fn fn, void *ctx,
			  void (*free_fn)(void *ctx));
void tft_http_suspend(struct MHD_Connection *conn);
void tft_http_resume(struct MHD_Connection *conn);

/* Map a tft_status from a handler to an HTTP status and reply. */
int tft_http_reply_status(struct tft_http_req *r, int status, const struct tft_error *err);

/* Track background jobs so tft_server_stop waits for them. */
bool tft_http_job_begin(struct tft_server *srv);
void tft_http_job_end(struct tft_server *srv);

/* ---- dispatch (routes.c) ------------------------------------------------ */

/* Route an authenticated request; always queues a response. */
int tft_routes_dispatch(struct tft_http_req *r);
/* The server stops: the endpoint groups end what would hold the daemon up
 * (the live event streams); called before the daemon stops. */
void tft_routes_closing(struct tft_server *srv);
/* Free every endpoint group's state (srv->ep; no request may be running). */
void tft_routes_free(struct tft_server *srv);

#endif /* TFT_SERVER_ROUTES_H */
