/* SPDX-License-Identifier: MIT */
/*
 * libmicrohttpd glue: daemon start/stop, per-request state, limits, access
 * control (loopback, token, Host and Origin checks) and the reply helpers
 * every endpoint uses. Responses never echo request input.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "query/error.h"
#include "server/routes.h"

#define MAX_PEM_BYTES (1u << 20)
#define TOKEN_BYTES 16

/* ---- options ------------------------------------------------------------ */

void tft_server_opts_init(struct tft_server_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->host = "127.0.0.1";
	o->port = 9999;
	o->threads = 4;
	o->max_connections = 64;
	o->timeout_s = 30;
}

bool tft_server_host_is_loopback(const char *host)
{
	struct in6_addr a6;

	if (!host)
		return false;
	if (strcmp(host, "localhost") == 0 || strcmp(host, "127.0.0.1") == 0)
		return true;
	return inet_pton(AF_INET6, host, &a6) == 1 && IN6_IS_ADDR_LOOPBACK(&a6);
}

static bool token_ok(const char *t)
{
	size_t n = strlen(t);

	if (n < 8 || n > 64)
		return false;
	for (; *t; t++)
		if (!((*t >= 'a' && *t <= 'z') || (*t >= 'A' && *t <= 'Z') || (*t >= '0' && *t <= '9') ||
		      *t == '-' || *t == '_' || *t == '.' || *t == '~'))
			return false;
	return true;
}

static int make_token(char *out, size_t size)
{
	unsigned char b[TOKEN_BYTES];
	size_t got = 0;

	while (got < sizeof(b)) {
		ssize_t n = getrandom(b + got, sizeof(b) - got, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return TFT_EIO;
		}
		got += (size_t)n;
	}
	for (size_t i = 0; i < sizeof(b) && 2 * i + 2 < size; i++)
		snprintf(out + 2 * i, 3, "%02x", b[i]);
	return 0;
}

static char *read_pem(const char *path, struct tft_error *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	char *buf = NULL;
	size_t got = 0;

	if (fd < 0) {
		tft_error_set(err, TFT_EIO, -1, "cannot open %s: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
	    (uint64_t)st.st_size > MAX_PEM_BYTES) {
		tft_error_set(err, TFT_EIO, -1, "%s: not a PEM file of at most 1 MiB", path);
		goto out;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
		goto out;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			tft_error_set(err, TFT_EIO, -1, "cannot read %s", path);
			free(buf);
			buf = NULL;
			goto out;
		}
		got += (size_t)n;
	}
	buf[got] = '\0';
out:
	close(fd);
	return buf;
}

/* ---- replies ------------------------------------------------------------ */

static void add_common_headers(struct tft_http_req *r, struct MHD_Response *resp)
{
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
	MHD_add_response_header(resp, "X-Frame-Options", "DENY");
	if (r->token_in_query) {
		char c[256];
		snprintf(c, sizeof(c), "tft_token=%s; Path=/; HttpOnly; SameSite=Strict%s",
			 r->srv->token, r->srv->tls ? "; Secure" : "");
		MHD_add_response_header(resp, MHD_HTTP_HEADER_SET_COOKIE, c);
	}
}

static int queue(struct tft_http_req *r, unsigned status, struct MHD_Response *resp)
{
	enum MHD_Result ok;

	if (!resp)
		return TFT_ENOMEM;
	if (r->queued) {
		MHD_destroy_response(resp);
		return TFT_EINVAL;
	}
	add_common_headers(r, resp);
	ok = MHD_queue_response(r->conn, status, resp);
	MHD_destroy_response(resp);
	r->queued = true;
	return ok == MHD_YES ? 0 : TFT_EIO;
}

int tft_http_reply_json(struct tft_http_req *r, unsigned status, struct tft_json_writer *w)
{
	struct MHD_Response *resp;
	char *buf;
	size_t len;

	if (w->status) {
		int rc = w->status;
		tft_json_write_fini(w);
		return tft_http_reply_error(r, rc == TFT_ENOMEM ? 503 : 500,
					    rc == TFT_ENOMEM ? "out of memory" : "internal error");
	}
	tft_json_write_borrow(w, &len);
	buf = w->buf;
	w->buf = NULL; /* the response owns the text now */
	w->len = w->cap = 0;
	resp = MHD_create_response_from_buffer_with_free_callback(len, buf, free);
	if (!resp) {
		free(buf);
		return TFT_ENOMEM;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json; charset=utf-8");
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	return queue(r, status, resp);
}

int tft_http_reply_error(struct tft_http_req *r, unsigned status, const char *msg)
{
	struct tft_json_writer w;

	/* Error bodies are small fixed strings: build them without the reply_json recursion. */
	tft_json_write_init_mem(&w);
	tft_json_write_begin_object(&w);
	tft_json_write_key(&w, "error");
	tft_json_write_cstr(&w, msg);
	tft_json_write_end_object(&w);
	if (w.status) {
		tft_json_write_fini(&w);
		static const char oom[] = "{\"error\":\"out of memory\"}";
		struct MHD_Response *resp =
			MHD_create_response_from_buffer(sizeof(oom) - 1, (void *)oom, MHD_RESPMEM_PERSISTENT);
		if (resp)
			MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
						"application/json; charset=utf-8");
		return queue(r, 503, resp);
	}
	return tft_http_reply_json(r, status, &w);
}

int tft_http_reply_status(struct tft_http_req *r, int status, const struct tft_error *err)
{
	/* err->msg comes from the library (file offsets, ids), never from the request. */
	struct tft_qry_err e;

	tft_qry_fail_status(&e, status, err);
	return tft_http_reply_error(r, e.status, e.msg);
}

static bool etag_matches(const char *inm, const char *etag)
{
	size_t el = strlen(etag);
	const char *p = inm;

	if (strcmp(inm, "*") == 0)
		return true;
	while ((p = strstr(p, etag)) != NULL) {
		char after = p[el];
		if (after == '\0' || after == ',' || after == ' ')
			return true;
		p += el;
	}
	return false;
}

static bool accepts_gzip(struct tft_http_req *r)
{
	const char *ae = tft_http_header(r, MHD_HTTP_HEADER_ACCEPT_ENCODING);

	return ae && strstr(ae, "gzip") != NULL;
}

int tft_http_reply_asset(struct tft_http_req *r, const struct tft_asset *a)
{
	const char *inm = tft_http_header(r, MHD_HTTP_HEADER_IF_NONE_MATCH);
	struct MHD_Response *resp;
	unsigned status = MHD_HTTP_OK;
	bool gz = a->gz && accepts_gzip(r);

	if (inm && etag_matches(inm, a->etag)) {
		resp = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
		status = MHD_HTTP_NOT_MODIFIED;
	} else {
		resp = MHD_create_response_from_buffer(gz ? a->gz_len : a->len,
						       (void *)(gz ? a->gz : a->data),
						       MHD_RESPMEM_PERSISTENT);
	}
	if (!resp)
		return TFT_ENOMEM;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, a->content_type);
	MHD_add_response_header(resp, MHD_HTTP_HEADER_ETAG, a->etag);
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
	if (a->gz)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_VARY, "Accept-Encoding");
	if (gz && status == MHD_HTTP_OK)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_ENCODING, "gzip");
	if (a->csp)
		MHD_add_response_header(resp, "Content-Security-Policy", a->csp);
	return queue(r, status, resp);
}

static void add_download_headers(struct MHD_Response *resp, const char *type, const char *filename)
{
	char cd[256];

	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	if (filename) {
		snprintf(cd, sizeof(cd), "attachment; filename=\"%s\"", filename);
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_DISPOSITION, cd);
	}
}

/* ---- byte ranges (RFC 9110 section 14) ----------------------------------- */

/* Decimal digits at *p; saturates (a huge position is valid, just unsatisfiable). */
static bool range_number(const char **p, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;

	if (*s < '0' || *s > '9')
		return false;
	for (; *s >= '0' && *s <= '9'; s++) {
		uint64_t d = (uint64_t)(*s - '0');
		v = v > (UINT64_MAX - d) / 10 ? UINT64_MAX : v * 10 + d;
	}
	*p = s;
	*out = v;
	return true;
}

/* See http.h. */
enum tft_http_range tft_http_parse_range(const char *h, uint64_t size, uint64_t *first,
					 uint64_t *last)
{
	const char *p = h;
	unsigned nspec = 0, nsat = 0;

	if (strncasecmp(p, "bytes=", 6) != 0)
		return TFT_HTTP_RANGE_WHOLE;
	p += 6;
	for (;;) {
		uint64_t a, b;
		bool sat;

		while (*p == ' ' || *p == '\t' || *p == ',') /* empty list elements are allowed */
			p++;
		if (!*p)
			break;
		if (*p == '-') { /* suffix-range: the last b bytes */
			p++;
			if (!range_number(&p, &b))
				return TFT_HTTP_RANGE_WHOLE;
			sat = b > 0 && size > 0;
			a = sat ? size - (b < size ? b : size) : 0;
			b = sat ? size - 1 : 0;
		} else { /* int-range: a- or a-b */
			if (!range_number(&p, &a) || *p++ != '-')
				return TFT_HTTP_RANGE_WHOLE;
			b = UINT64_MAX;
			if (*p >= '0' && *p <= '9') {
				range_number(&p, &b);
				if (b < a)
					return TFT_HTTP_RANGE_WHOLE; /* invalid, so the whole header is */
			}
			sat = a < size;
			if (sat && b >= size)
				b = size - 1;
		}
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p && *p != ',')
			return TFT_HTTP_RANGE_WHOLE;
		nspec++;
		if (sat) {
			nsat++;
			*first = a;
			*last = b;
		}
	}
	if (nspec == 0)
		return TFT_HTTP_RANGE_WHOLE;
	if (nsat == 0)
		return TFT_HTTP_RANGE_UNSATISFIED;
	return nspec == 1 ? TFT_HTTP_RANGE_PART : TFT_HTTP_RANGE_WHOLE;
}

/* {"error": msg} as a response (content type set), or NULL when out of memory. */
static struct MHD_Response *error_response(const char *msg)
{
	struct MHD_Response *resp;
	struct tft_json_writer w;
	size_t len;
	char *buf;

	tft_json_write_init_mem(&w);
	tft_json_write_begin_object(&w);
	tft_json_write_key(&w, "error");
	tft_json_write_cstr(&w, msg);
	tft_json_write_end_object(&w);
	tft_json_write_borrow(&w, &len);
	if (w.status) {
		tft_json_write_fini(&w);
		return NULL;
	}
	buf = w.buf;
	w.buf = NULL; /* the response owns the text now */
	resp = MHD_create_response_from_buffer_with_free_callback(len, buf, free);
	if (!resp) {
		free(buf);
		return NULL;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json; charset=utf-8");
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	return resp;
}

/*
 * A file is sent whole (200), as one range (206, Content-Range) or refused
 * (416) after the request's Range header. Its strong ETag (inode, size,
 * mtime) lets a client resume with If-Range: a file that changed since
 * (a live session checkpointed again) is then sent whole, never spliced.
 */
int tft_http_reply_file(struct tft_http_req *r, int fd, uint64_t size, const char *type,
			const char *filename)
{
	const char *range = tft_http_header(r, MHD_HTTP_HEADER_RANGE);
	const char *if_range = tft_http_header(r, MHD_HTTP_HEADER_IF_RANGE);
	enum tft_http_range rr = TFT_HTTP_RANGE_WHOLE;
	struct MHD_Response *resp;
	uint64_t first = 0, last = 0;
	char etag[80] = "", cr[80];
	struct stat st;

	if (fstat(fd, &st) == 0)
		snprintf(etag, sizeof(etag), "\"%llx-%llx-%llx.%lx\"", (unsigned long long)st.st_ino,
			 (unsigned long long)size, (unsigned long long)st.st_mtim.tv_sec,
			 (unsigned long)st.st_mtim.tv_nsec);
	/* If-Range with another validator (or a date, which we never send): whole body. */
	if (range && (!if_range || (etag[0] && strcmp(if_range, etag) == 0)))
		rr = tft_http_parse_range(range, size, &first, &last);
	if (rr == TFT_HTTP_RANGE_UNSATISFIED) {
		close(fd);
		resp = error_response("range not satisfiable");
		if (!resp)
			return tft_http_reply_error(r, 503, "out of memory");
		snprintf(cr, sizeof(cr), "bytes */%llu", (unsigned long long)size);
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_RANGE, cr);
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ACCEPT_RANGES, "bytes");
		return queue(r, MHD_HTTP_RANGE_NOT_SATISFIABLE, resp);
	}
	if (rr == TFT_HTTP_RANGE_PART)
		resp = MHD_create_response_from_fd_at_offset64(last - first + 1, fd, first);
	else
		resp = MHD_create_response_from_fd64(size, fd);
	if (!resp) {
		close(fd);
		return TFT_ENOMEM;
	}
	add_download_headers(resp, type, filename);
	MHD_add_response_header(resp, MHD_HTTP_HEADER_ACCEPT_RANGES, "bytes");
	if (etag[0])
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ETAG, etag);
	if (rr == TFT_HTTP_RANGE_PART) {
		snprintf(cr, sizeof(cr), "bytes %llu-%llu/%llu", (unsigned long long)first,
			 (unsigned long long)last, (unsigned long long)size);
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_RANGE, cr);
		return queue(r, MHD_HTTP_PARTIAL_CONTENT, resp);
	}
	return queue(r, MHD_HTTP_OK, resp);
}

int tft_http_reply_stream(struct tft_http_req *r, int fd, const char *type, const char *filename)
{
	struct MHD_Response *resp = MHD_create_response_from_pipe(fd);

	if (!resp) {
		close(fd);
		return TFT_ENOMEM;
	}
	add_download_headers(resp, type, filename);
	/* Produced as it is sent: a Range is ignored (200, the whole body), and said so. */
	MHD_add_response_header(resp, MHD_HTTP_HEADER_ACCEPT_RANGES, "none");
	return queue(r, MHD_HTTP_OK, resp);
}

struct events_ctx {
	tft_http_reader_fn fn;
	void *ctx;
	void (*free_fn)(void *ctx);
};

static ssize_t events_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct events_ctx *e = cls;
	long n = e->fn(e->ctx, pos, buf, max);

	return n < 0 ? MHD_CONTENT_READER_END_OF_STREAM : (ssize_t)n;
}

static void events_free(void *cls)
{
	struct events_ctx *e = cls;

	e->free_fn(e->ctx);
	free(e);
}

int tft_http_reply_events(struct tft_http_req *r, tft_http_reader_fn fn, void *ctx,
			  void (*free_fn)(void *ctx))
{
	struct events_ctx *e = malloc(sizeof(*e));
	struct MHD_Response *resp;

	if (!e) {
		free_fn(ctx);
		return TFT_ENOMEM;
	}
	e->fn = fn;
	e->ctx = ctx;
	e->free_fn = free_fn;
	/* Small blocks: an event goes out as soon as it is produced. */
	resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, events_read, e, events_free);
	if (!resp) {
		events_free(e);
		return TFT_ENOMEM;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream; charset=utf-8");
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	MHD_add_response_header(resp, "X-Accel-Buffering", "no");
	return queue(r, MHD_HTTP_OK, resp);
}

void tft_http_suspend(struct MHD_Connection *conn)
{
	MHD_suspend_connection(conn);
}

void tft_http_resume(struct MHD_Connection *conn)
{
	MHD_resume_connection(conn);
}

const char *tft_http_header(struct tft_http_req *r, const char *name)
{
	return MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, name);
}

/* ---- background jobs ---------------------------------------------------- */

bool tft_http_job_begin(struct tft_server *srv)
{
	bool ok;

	pthread_mutex_lock(&srv->job_lock);
	ok = srv->jobs < TFT_HTTP_MAX_EXPORTS;
	if (ok)
		srv->jobs++;
	pthread_mutex_unlock(&srv->job_lock);
	return ok;
}

void tft_http_job_end(struct tft_server *srv)
{
	pthread_mutex_lock(&srv->job_lock);
	srv->jobs--;
	pthread_cond_broadcast(&srv->job_cond);
	pthread_mutex_unlock(&srv->job_lock);
}

/* ---- access control ----------------------------------------------------- */

/*
 * Host header (DNS-rebinding guard): a loopback name, with any port (port
 * forwarding may change it); a rebinding attack needs a foreign name.
 */
static bool host_header_ok(struct tft_http_req *r)
{
	const char *h = tft_http_header(r, MHD_HTTP_HEADER_HOST);
	static const char *const names[] = { "127.0.0.1", "localhost", "[::1]" };

	if (!h)
		return false;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		size_t n = strlen(names[i]);
		if (strncasecmp(h, names[i], n) == 0 && (h[n] == '\0' || h[n] == ':')) {
			const char *p = h[n] == ':' ? h + n + 1 : "";
			while (*p >= '0' && *p <= '9')
				p++;
			if (*p == '\0')
				return true;
		}
	}
	return false;
}

/* A POST's Origin, when sent, must be this server (CSRF guard). */
static bool origin_ok(struct tft_http_req *r)
{
	const char *o = tft_http_header(r, "Origin");
	const char *h = tft_http_header(r, MHD_HTTP_HEADER_HOST);
	const char *rest;

	if (!o)
		return true;
	if (!h)
		return false;
	if (strncmp(o, "http://", 7) == 0)
		rest = o + 7;
	else if (strncmp(o, "https://", 8) == 0)
		rest = o + 8;
	else
		return false;
	return strcmp(rest, h) == 0;
}

static bool authorized(struct tft_http_req *r)
{
	struct tft_server *srv = r->srv;
	const char *v;
	size_t len;

	if (!srv->auth)
		return true;
	v = tft_query_get(&r->query, "token", &len);
	if (v && tft_query_token_equal(v, len, srv->token, srv->token_len)) {
		r->token_in_query = true;
		return true;
	}
	v = tft_http_header(r, "X-TFT-Token");
	if (v && tft_query_token_equal(v, strlen(v), srv->token, srv->token_len))
		return true;
	v = tft_http_header(r, MHD_HTTP_HEADER_COOKIE);
	if (v) {
		const char *c = tft_query_cookie(v, strlen(v), "tft_token", &len);
		if (c && tft_query_token_equal(c, len, srv->token, srv->token_len))
			return true;
	}
	return false;
}

static int handle(struct tft_http_req *r)
{
	const char *qs;
	size_t qs_len;
	int rc;

	if (r->too_long)
		return tft_http_reply_error(r, MHD_HTTP_URI_TOO_LONG, "request target too long");
	if (!r->target)
		return tft_http_reply_error(r, MHD_HTTP_SERVICE_UNAVAILABLE, "out of memory");
	rc = tft_query_split_target(r->target, strlen(r->target), &r->path, &r->path_len, &qs, &qs_len);
	if (rc == TFT_ENOSPC)
		return tft_http_reply_error(r, MHD_HTTP_URI_TOO_LONG, "request target too long");
	if (rc != 0)
		return tft_http_reply_error(r, MHD_HTTP_BAD_REQUEST, "malformed request target");
	rc = tft_query_parse(&r->query, qs, qs_len);
	if (rc == TFT_ENOSPC)
		return tft_http_reply_error(r, MHD_HTTP_URI_TOO_LONG, "query string too long");
	if (rc != 0)
		return tft_http_reply_error(r, MHD_HTTP_BAD_REQUEST, "malformed query string");
	if (r->srv->check_host && !host_header_ok(r))
		return tft_http_reply_error(r, MHD_HTTP_FORBIDDEN, "Host header is not this server");
	if (!authorized(r))
		return tft_http_reply_error(r, MHD_HTTP_UNAUTHORIZED, "a valid token is required");
	if (r->method == TFT_HTTP_POST && !origin_ok(r))
		return tft_http_reply_error(r, MHD_HTTP_FORBIDDEN, "cross-origin request refused");
	if (r->body_bytes > TFT_HTTP_MAX_BODY)
		return tft_http_reply_error(r, MHD_HTTP_CONTENT_TOO_LARGE, "request body too large");
	return tft_routes_dispatch(r);
}

/* ---- libmicrohttpd callbacks -------------------------------------------- */

#define QUIET_STOP_NS (100 * 1000000LL) /* a stop waits for this long without a request */

static int64_t real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* First sight of a request: keep a bounded copy of the raw target. */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
	struct tft_http_req *r = calloc(1, sizeof(*r));
	size_t len;

	if (!r)
		return NULL;
	r->srv = cls;
	r->conn = conn;
	pthread_mutex_lock(&r->srv->job_lock);
	r->srv->active++;
	r->srv->last_request_ns = real_ns();
	pthread_mutex_unlock(&r->srv->job_lock);
	len = strlen(uri);
	if (len > TFT_PATH_MAX_BYTES + TFT_QUERY_MAX_BYTES + 1) {
		r->too_long = true;
		return r;
	}
	r->target = malloc(len + 1);
	if (r->target)
		memcpy(r->target, uri, len + 1);
	return r;
}

static int method_of(const char *m)
{
	if (strcmp(m, MHD_HTTP_METHOD_GET) == 0)
		return TFT_HTTP_GET;
	if (strcmp(m, MHD_HTTP_METHOD_HEAD) == 0)
		return TFT_HTTP_HEAD;
	if (strcmp(m, MHD_HTTP_METHOD_POST) == 0)
		return TFT_HTTP_POST;
	return TFT_HTTP_OTHER;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload_data,
				  size_t *upload_data_size, void **con_cls)
{
	struct tft_http_req *r = *con_cls;
	int rc = 0;

	if (!r)
		return MHD_NO; /* out of memory in on_uri: drop the connection */
	r->conn = conn;
	if (!r->started) {
		/* First call: headers only. Replying later (after the body, if any) keeps
		 * the connection alive; an early reply makes libmicrohttpd close it. */
		r->started = true;
		r->method = method_of(method);
		return MHD_YES;
	}
	if (*upload_data_size) {
		/* Bodies are counted; the first TFT_HTTP_KEEP_BODY bytes are kept (live controls). */
		if (r->body_bytes < TFT_HTTP_KEEP_BODY) {
			size_t take = TFT_HTTP_KEEP_BODY - r->body_bytes;
			if (take > *upload_data_size)
				take = *upload_data_size;
			if (!r->body)
				r->body = malloc(TFT_HTTP_KEEP_BODY + 1);
			if (r->body) {
				memcpy(r->body + r->body_len, upload_data, take);
				r->body_len += take;
				r->body[r->body_len] = '\0';
			}
		}
		r->body_bytes += *upload_data_size;
		*upload_data_size = 0;
		/* Refuse an oversized body at once (the connection is then closed). */
		if (r->body_bytes > TFT_HTTP_MAX_BODY && !r->queued)
			tft_http_reply_error(r, MHD_HTTP_CONTENT_TOO_LARGE, "request body too large");
		return MHD_YES;
	}
	if (r->queued)
		return MHD_YES;
	rc = handle(r);
	if (!r->queued)
		rc = tft_http_reply_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "internal error");
	return rc == 0 || r->queued ? MHD_YES : MHD_NO;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct tft_http_req *r = *con_cls;

	if (r) {
		pthread_mutex_lock(&r->srv->job_lock);
		r->srv->active--;
		pthread_cond_broadcast(&r->srv->job_cond);
		pthread_mutex_unlock(&r->srv->job_lock);
		free(r->target);
		free(r->body);
		free(r);
		*con_cls = NULL;
	}
}

/* ---- start / stop ------------------------------------------------------- */

static int parse_addr(const char *host, int port, struct sockaddr_storage *ss, bool *v6)
{
	struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (strcmp(host, "localhost") == 0)
		host = "127.0.0.1";
	if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons((uint16_t)port);
		*v6 = false;
		return 0;
	}
	if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)port);
		*v6 = true;
		return 0;
	}
	return TFT_EINVAL;
}

static void free_server(struct tft_server *srv)
{
	if (srv->pool.slots)
		tft_pool_fini(&srv->pool);
	tft_routes_free(srv);
	for (int i = 0; i < TFT_EP_COUNT; i++)
		pthread_mutex_destroy(&srv->ep[i].lock);
	pthread_mutex_destroy(&srv->job_lock);
	pthread_cond_destroy(&srv->job_cond);
	free(srv->path);
	free(srv->tls_cert);
	free(srv->tls_key);
	free(srv);
}

struct tft_server *tft_server_start(const struct tft_server_opts *opts,
				    const struct tft_server_source *src, struct tft_error *err)
{
	struct tft_server_opts def;
	struct tft_server *srv;
	struct tft_server_source s2;
	struct sockaddr_storage ss;
	bool v6, loopback;
	unsigned flags, threads;
	const char *host;
	const union MHD_DaemonInfo *info;
	int rc;

	if (!opts) {
		tft_server_opts_init(&def);
		opts = &def;
	}
	host = opts->host ? opts->host : "127.0.0.1";
	if (!src) {
		tft_error_set(err, TFT_EINVAL, -1, "no session source");
		return NULL;
	}
	if (opts->port < 0 || opts->port > 65535 || strlen(host) >= sizeof(srv->host)) {
		tft_error_set(err, TFT_EINVAL, -1, "bad host or port");
		return NULL;
	}
	if (parse_addr(host, opts->port, &ss, &v6) != 0) {
		tft_error_set(err, TFT_EINVAL, -1, "host must be an IPv4/IPv6 address or localhost");
		return NULL;
	}
	if (!opts->tls_cert_file != !opts->tls_key_file) {
		tft_error_set(err, TFT_EINVAL, -1, "TLS needs both a certificate and a key");
		return NULL;
	}
	if (opts->token && !token_ok(opts->token)) {
		tft_error_set(err, TFT_EINVAL, -1,
			      "a token is 8 to 64 characters from [A-Za-z0-9._~-]");
		return NULL;
	}
	threads = opts->threads ? opts->threads : 4;
	if (threads > 16)
		threads = 16;

	srv = calloc(1, sizeof(*srv));
	if (!srv) {
		tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
		return NULL;
	}
	for (int i = 0; i < TFT_EP_COUNT; i++)
		pthread_mutex_init(&srv->ep[i].lock, NULL);
	pthread_mutex_init(&srv->job_lock, NULL);
	pthread_cond_init(&srv->job_cond, NULL);
	snprintf(srv->host, sizeof(srv->host), "%s", host);
	loopback = tft_server_host_is_loopback(host);
	srv->auth = !loopback && !opts->no_auth;
	if (opts->token && !opts->no_auth)
		srv->auth = true; /* an explicit token is always enforced */
	srv->check_host = loopback && !srv->auth;
	if (srv->auth) {
		if (opts->token)
			snprintf(srv->token, sizeof(srv->token), "%s", opts->token);
		else if (make_token(srv->token, sizeof(srv->token)) != 0) {
			tft_error_set(err, TFT_EIO, -1, "cannot read random bytes for a token");
			goto fail;
		}
		srv->token_len = strlen(srv->token);
	}
	if (opts->tls_cert_file) {
		srv->tls_cert = read_pem(opts->tls_cert_file, err);
		srv->tls_key = srv->tls_cert ? read_pem(opts->tls_key_file, err) : NULL;
		if (!srv->tls_key)
			goto fail;
		if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
			tft_error_set(err, TFT_EINVAL, -1, "this libmicrohttpd has no TLS support");
			goto fail;
		}
		srv->tls = true;
	}
	s2 = *src;
	if (src->path) {
		srv->path = strdup(src->path);
		if (!srv->path) {
			tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
			goto fail;
		}
		s2.path = srv->path;
	}
	rc = tft_pool_init(&srv->pool, &s2, threads, err);
	if (rc != 0)
		goto fail;

	/* Suspend/resume: event streams (GET /api/live) wait without holding a worker. */
	flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME;
	if (v6)
		flags |= MHD_USE_IPv6;
	if (srv->tls)
		flags |= MHD_USE_TLS;
	{
		struct MHD_OptionItem tls_items[] = {
			{ MHD_OPTION_HTTPS_MEM_CERT, 0, srv->tls_cert },
			{ MHD_OPTION_HTTPS_MEM_KEY, 0, srv->tls_key },
			{ MHD_OPTION_END, 0, NULL },
		};
		struct MHD_OptionItem none[] = { { MHD_OPTION_END, 0, NULL } };

		srv->daemon = MHD_start_daemon(
			flags, (uint16_t)opts->port, NULL, NULL, on_request, srv,
			MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
			MHD_OPTION_THREAD_POOL_SIZE, threads,
			MHD_OPTION_CONNECTION_LIMIT, opts->max_connections ? opts->max_connections : 64u,
			MHD_OPTION_CONNECTION_TIMEOUT, opts->timeout_s ? opts->timeout_s : 30u,
			MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(64u << 10),
			MHD_OPTION_URI_LOG_CALLBACK, on_uri, srv,
			MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv,
			MHD_OPTION_ARRAY, srv->tls ? tls_items : none,
			MHD_OPTION_END);
	}
	if (!srv->daemon) {
		tft_error_set(err, TFT_EIO, -1, "cannot listen on %s port %d (in use, or bad TLS files?)",
			      host, opts->port);
		goto fail;
	}
	info = MHD_get_daemon_info(srv->daemon, MHD_DAEMON_INFO_BIND_PORT);
	srv->port = info ? info->port : (uint16_t)opts->port;
	snprintf(srv->url, sizeof(srv->url), "%s://%s%s%s:%u/%s%s", srv->tls ? "https" : "http",
		 v6 ? "[" : "", host, v6 ? "]" : "", (unsigned)srv->port, srv->auth ? "?token=" : "",
		 srv->auth ? srv->token : "");
	return srv;
fail:
	free_server(srv);
	return NULL;
}

void tft_server_stop(struct tft_server *srv)
{
	if (!srv)
		return;
	/* Suspended event streams (the endpoints' hooks) must end before the daemon stops. */
	tft_routes_closing(srv);
	/*
	 * Requests under way get their answers, and so do those a page sends before
	 * it reads its stream's last event (it asks nothing more after that, and
	 * says so: POST /api/live/ended): the daemon stops once every page sent
	 * `end` said it read it, none is open and none came for 100 ms; 1 s at
	 * most, 2 s while a page has yet to say it (a slow or busy browser).
	 */
	{
		int64_t t = real_ns(), until = t + 1000000000LL;
		pthread_mutex_lock(&srv->job_lock);
		if (srv->end_read < srv->end_sent)
			until += 1000000000LL;
		while (t < until && (srv->active > 0 || srv->end_read < srv->end_sent ||
				     t - srv->last_request_ns < QUIET_STOP_NS)) {
			int64_t w = srv->active > 0 || srv->end_read < srv->end_sent
					    ? until
					    : srv->last_request_ns + QUIET_STOP_NS;
			struct timespec ts; /* (job_cond waits on CLOCK_REALTIME) */
			if (w > until)
				w = until;
			ts.tv_sec = w / 1000000000;
			ts.tv_nsec = w % 1000000000;
			pthread_cond_timedwait(&srv->job_cond, &srv->job_lock, &ts);
			t = real_ns();
		}
		pthread_mutex_unlock(&srv->job_lock);
	}
	/* Closes every connection; a download stream then fails its next write. */
	MHD_stop_daemon(srv->daemon);
	pthread_mutex_lock(&srv->job_lock);
	while (srv->jobs > 0)
		pthread_cond_wait(&srv->job_cond, &srv->job_lock);
	pthread_mutex_unlock(&srv->job_lock);
	free_server(srv);
}

const char *tft_server_url(const struct tft_server *srv)
{
	return srv->url;
}

uint16_t tft_server_port(const struct tft_server *srv)
{
	return srv->port;
}

const char *tft_server_token(const struct tft_server *srv)
{
	return srv->auth ? srv->token : NULL;
}
