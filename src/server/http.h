/* SPDX-License-Identifier: MIT */
/*
 * The embedded HTTP server (libmicrohttpd): serves the web UI and the JSON
 * API of docs/http-api.md from background threads inside the library, so a
 * CLI (`tftracer serve`) or a live tracer inside a training job can run it.
 */
#ifndef TFT_SERVER_HTTP_H
#define TFT_SERVER_HTTP_H

#include <stdbool.h>
#include <stdint.h>

#include "core/status.h"
#include "store/session.h"

struct tft_server;
struct tft_live;

struct tft_server_opts {
	const char *host;          /* borrowed: IPv4/IPv6 literal or "localhost" */
	int port;                  /* 0 = any free port (see tft_server_port) */
	const char *token;         /* borrowed: access token; NULL = generate one if needed */
	bool no_auth;              /* allow a non-loopback bind without a token */
	const char *tls_cert_file; /* borrowed: PEM certificate; with tls_key_file = HTTPS */
	const char *tls_key_file;  /* borrowed: PEM private key */
	unsigned threads;          /* worker threads, 1..16 */
	unsigned max_connections;  /* concurrent connections; more are refused */
	unsigned timeout_s;        /* idle connection timeout, seconds */
};

/*
 * Where the server gets its sessions. A tft_session is not thread-safe, so
 * either every worker opens its own reader (path and/or open given;
 * concurrent requests run in parallel) or one borrowed session is shared
 * and requests using it are serialised by a mutex.
 */
struct tft_server_source {
	const char *path;            /* borrowed: session file; opened once per worker
				      * when `open` is NULL; /download/session sends it.
				      * May be NULL when `session` or `open` is set. */
	struct tft_session *session; /* borrowed: serve this one session (serialised) */
	/* Optional opener (live tracer); NULL = tft_session_open(path). */
	struct tft_session *(*open)(void *ctx, struct tft_error *err);
	void (*close)(void *ctx, struct tft_session *s); /* NULL = tft_session_close */
	void *ctx;                   /* borrowed; passed to open/close */
	/* Optional live hub (server/live.h): the live endpoints (/api/live, /api/runs,
	 * the controls) use it; NULL = a file server. Borrowed. */
	struct tft_live *live;
};

/* Defaults: 127.0.0.1:9999, auth as needed, 4 threads, 64 connections, 30 s. */
void tft_server_opts_init(struct tft_server_opts *o);

/*
 * True for the addresses served without a token: exactly 127.0.0.1, ::1 and
 * "localhost" (other 127/8 addresses count as non-loopback, on purpose).
 */
bool tft_server_host_is_loopback(const char *host);

/*
 * Bind and start serving in background threads. A non-loopback host needs a
 * token (opts->token, or one generated from /dev/urandom) unless
 * opts->no_auth. Returns NULL and fills err on failure: TFT_EINVAL (bad
 * options), TFT_EIO (cannot bind, cannot read the TLS files), TFT_ENOMEM,
 * or what opening the first session returned.
 * The source (and what it points to) must outlive the server.
 */
struct tft_server *tft_server_start(const struct tft_server_opts *opts,
				    const struct tft_server_source *src, struct tft_error *err);

/*
 * Stop accepting, wait for the requests in flight (downloads included) and
 * free everything. NULL is a no-op.
 */
void tft_server_stop(struct tft_server *srv);

/* The URL to open, token included when auth is on (borrowed until stop). */
const char *tft_server_url(const struct tft_server *srv);
/* The bound port (the real one when opts->port was 0). */
uint16_t tft_server_port(const struct tft_server *srv);
/* The access token, or NULL when auth is off (borrowed until stop). */
const char *tft_server_token(const struct tft_server *srv);

/* How a Range header applies to a body (RFC 9110 section 14). */
enum tft_http_range {
	TFT_HTTP_RANGE_WHOLE,       /* no Range, one to ignore, or several ranges: 200, whole body */
	TFT_HTTP_RANGE_PART,        /* one satisfiable range: 206 */
	TFT_HTTP_RANGE_UNSATISFIED, /* no range of the set is satisfiable: 416 */
};

/*
 * Evaluate the Range header value h (NUL-terminated) against a body of
 * `size` bytes. On TFT_HTTP_RANGE_PART, [*first, *last] is the part,
 * inclusive and clamped to the body: first <= last < size; otherwise
 * *first and *last hold nothing useful. A header that is not a valid
 * "bytes=" range set is ignored (WHOLE), as RFC 9110 allows; several ranges
 * are answered with the whole body (also allowed), which spares us
 * multipart/byteranges bodies no client of ours needs. Pure: no I/O, no
 * allocation; exposed for the unit tests and fuzz/fuzz_http.c.
 */
enum tft_http_range tft_http_parse_range(const char *h, uint64_t size, uint64_t *first,
					 uint64_t *last);

#endif /* TFT_SERVER_HTTP_H */
