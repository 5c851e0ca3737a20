/* SPDX-License-Identifier: MIT */
/*
 * The server as a library (src/server/http.h): start on a free port with a
 * borrowed shared session (the mode a live tracer without a file uses) and
 * with a path, answer requests from several threads, spool a Chrome
 * download, enforce a token, stop cleanly (the endpoints' state freed
 * through their hooks: the ASan build checks for leaks); and the Range header parser
 * (tft_http_parse_range) on its own.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "server/http.h"
#include "store/session.h"
#include "store/writer.h"
#include "tap.h"

/* GET/POST path; returns the status code, *body the malloc'd response (headers included). */
static int http(uint16_t port, const char *method, const char *path, const char *extra, char **body)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	char req[2048];
	size_t len = 0, cap = 1 << 16;
	char *buf = malloc(cap + 1);
	int fd = socket(AF_INET, SOCK_STREAM, 0), status = -1;
	ssize_t n;

	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	if (fd < 0 || !buf || connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0)
		goto out;
	n = snprintf(req, sizeof(req),
		     "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n%s%s\r\n", method, path,
		     extra ? extra : "", strcmp(method, "POST") == 0 ? "Content-Length: 0\r\n" : "");
	if (write(fd, req, (size_t)n) != n)
		goto out;
	while ((n = read(fd, buf + len, cap - len)) > 0) {
		len += (size_t)n;
		if (len == cap) {
			char *nb = realloc(buf, cap * 2 + 1);
			if (!nb)
				goto out;
			buf = nb;
			cap *= 2;
		}
	}
	buf[len] = '\0';
	if (sscanf(buf, "HTTP/1.%*d %d", &status) != 1)
		status = -1;
out:
	if (fd >= 0)
		close(fd);
	if (body)
		*body = buf;
	else
		free(buf);
	return status;
}

static int make_session(const char *path)
{
	struct tft_error err;
	struct tft_writer *w = tft_writer_open(path, NULL, &err);
	struct tft_process p = { .pid = 7, .rank = -1 };
	struct tft_track t = { .kind = TFT_TRACK_THREAD, .tid = 1 };

	if (!w)
		return -1;
	p.name = tft_writer_intern_cstr(w, "proc");
	t.process = tft_writer_add_process(w, &p);
	t.name = tft_writer_intern_cstr(w, "main");
	t.id = tft_writer_add_track(w, &t);
	for (int i = 0; i < 1000; i++) {
		struct tft_event ev = { .ts_ns = 1000 + i * 100, .dur_ns = 50, .track = t.id, .count = 1,
					.kind = TFT_EV_SLICE };
		ev.name = tft_writer_intern_cstr(w, i % 2 ? "op_a" : "op_b");
		if (tft_writer_append(w, &ev) != 0) {
			tft_writer_abort(w);
			return -1;
		}
	}
	return tft_writer_close(w, &err);
}

struct client {
	uint16_t port;
	int ok;
};

static void *client_main(void *arg)
{
	struct client *c = arg;

	for (int i = 0; i < 20; i++)
		c->ok += http(c->port, "GET", i % 2 ? "/api/viewport?width=300" : "/api/search?q=op_a&limit=5",
			      NULL, NULL) == 200;
	return NULL;
}

static void test_shared(const char *path)
{
	struct tft_error err;
	struct tft_session *s;
	struct tft_server_opts o;
	struct tft_server_source src = { 0 };
	struct tft_server *srv;
	struct client cl[4];
	pthread_t th[4];
	char *body = NULL;
	int total = 0;

	tft_error_clear(&err);
	s = tft_session_open(path, &err);
	ok(s != NULL, "open the session");
	if (!s)
		return;
	tft_server_opts_init(&o);
	o.port = 0;
	o.threads = 2;
	src.session = s;
	srv = tft_server_start(&o, &src, &err);
	ok(srv != NULL, "start with a shared session (%s)", err.msg);
	if (!srv) {
		tft_session_close(s);
		return;
	}
	ok(tft_server_port(srv) != 0, "a free port was picked");
	ok(tft_server_token(srv) == NULL, "loopback: no token");
	ok(strncmp(tft_server_url(srv), "http://127.0.0.1:", 17) == 0, "URL %s", tft_server_url(srv));
	is_int(http(tft_server_port(srv), "GET", "/api/session", NULL, &body), 200, "GET /api/session");
	ok(body && strstr(body, "\"slices\":1000"), "1000 slices");
	free(body);
	for (int i = 0; i < 4; i++) {
		cl[i] = (struct client){ tft_server_port(srv), 0 };
		pthread_create(&th[i], NULL, client_main, &cl[i]);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		total += cl[i].ok;
	}
	is_int(total, 80, "80 concurrent requests on one serialised session");
	/* No path to open a reader from: the Chrome export is spooled under the lock. */
	is_int(http(tft_server_port(srv), "GET", "/download/chrome", NULL, &body), 200, "GET /download/chrome");
	ok(body && strstr(body, "\"traceEvents\"") && strstr(body, "op_a"), "Chrome JSON");
	free(body);
	is_int(http(tft_server_port(srv), "GET", "/download/session", NULL, NULL), 404,
	       "no file to download");
	is_int(http(tft_server_port(srv), "POST", "/api/refresh", NULL, NULL), 200, "POST /api/refresh");
	/*
	 * Every endpoint group's server-wide state built (the search index by the
	 * searches above; here the flow index and the ranks cache): the stop frees
	 * each through its hook in routes.c, which the ASan build's leak check sees.
	 */
	is_int(http(tft_server_port(srv), "GET", "/api/search?q=op_b&limit=1", NULL, NULL), 200,
	       "GET /api/search after the refresh (a new index)");
	is_int(http(tft_server_port(srv), "GET", "/api/slice?track=0&ts=1000", NULL, &body), 200,
	       "GET /api/slice (builds the flow index)");
	ok(body && strstr(body, "op_b"), "the slice at 1000 ns is op_b");
	free(body);
	is_int(http(tft_server_port(srv), "GET", "/api/ranks", NULL, NULL), 200,
	       "GET /api/ranks (caches the analysis)");
	{
		uint16_t port = tft_server_port(srv);
		tft_server_stop(srv);
		is_int(http(port, "GET", "/api/steps", NULL, NULL), -1, "stopped: the port no longer answers");
	}
	tft_session_close(s);
}

static void test_path_token(const char *path)
{
	struct tft_error err;
	struct tft_server_opts o;
	struct tft_server_source src = { .path = path };
	struct tft_server *srv, *busy;
	char hdr[128], *body = NULL;

	tft_error_clear(&err);
	tft_server_opts_init(&o);
	o.port = 0;
	o.token = "unit-test-token";
	srv = tft_server_start(&o, &src, &err);
	ok(srv != NULL, "start with a path and a token");
	if (!srv)
		return;
	ok(tft_server_token(srv) && strcmp(tft_server_token(srv), "unit-test-token") == 0, "token");
	ok(strstr(tft_server_url(srv), "?token=unit-test-token") != NULL, "token in the URL");
	is_int(http(tft_server_port(srv), "GET", "/api/steps", NULL, NULL), 401, "no token: 401");
	snprintf(hdr, sizeof(hdr), "X-TFT-Token: unit-test-token\r\n");
	is_int(http(tft_server_port(srv), "GET", "/api/steps", hdr, NULL), 200, "header token: 200");
	is_int(http(tft_server_port(srv), "GET", "/download/chrome?token=unit-test-token", NULL, &body), 200,
	       "streamed Chrome download");
	ok(body && strstr(body, "Transfer-Encoding: chunked") && strstr(body, "op_b"), "chunked JSON");
	free(body);
	/* the same port again: refused with an error, not a crash */
	o.port = tft_server_port(srv);
	o.token = NULL;
	tft_error_clear(&err);
	busy = tft_server_start(&o, &src, &err);
	ok(busy == NULL && err.code == TFT_EIO, "port in use: TFT_EIO");
	tft_server_stop(busy);
	{
		uint16_t port = tft_server_port(srv);
		tft_server_stop(srv);
		is_int(http(port, "GET", "/api/steps", hdr, NULL), -1, "stopped: the port no longer answers");
	}

	tft_server_opts_init(&o);
	o.port = 0;
	o.token = "bad token";
	tft_error_clear(&err);
	ok(tft_server_start(&o, &src, &err) == NULL && err.code == TFT_EINVAL, "bad token refused");
	tft_server_opts_init(&o);
	o.host = "example.org";
	tft_error_clear(&err);
	ok(tft_server_start(&o, &src, &err) == NULL && err.code == TFT_EINVAL, "host name refused");
	ok(tft_server_host_is_loopback("127.0.0.1") && tft_server_host_is_loopback("::1") &&
	   tft_server_host_is_loopback("localhost") && !tft_server_host_is_loopback("127.0.0.2") &&
	   !tft_server_host_is_loopback("0.0.0.0"), "loopback addresses");
}

/* Range header values against a body of `size` bytes: what 200/206/416 they give. */
static void test_range(void)
{
	static const struct {
		const char *h;
		uint64_t size;
		enum tft_http_range want;
		uint64_t first, last; /* for TFT_HTTP_RANGE_PART */
	} cases[] = {
		{ "bytes=0-99", 1000, TFT_HTTP_RANGE_PART, 0, 99 },
		{ "bytes=900-", 1000, TFT_HTTP_RANGE_PART, 900, 999 },
		{ "bytes=900-5000", 1000, TFT_HTTP_RANGE_PART, 900, 999 },
		{ "bytes=-100", 1000, TFT_HTTP_RANGE_PART, 900, 999 },
		{ "bytes=-2000", 1000, TFT_HTTP_RANGE_PART, 0, 999 },
		{ "BYTES=1-1", 1000, TFT_HTTP_RANGE_PART, 1, 1 },
		{ "bytes=, 5-6 ,", 1000, TFT_HTTP_RANGE_PART, 5, 6 },
		{ "bytes=0-", 1, TFT_HTTP_RANGE_PART, 0, 0 },
		{ "bytes=1844674407370955160-", UINT64_MAX, TFT_HTTP_RANGE_PART,
		  1844674407370955160u, UINT64_MAX - 1 },
		{ "bytes=-99999999999999999999999", UINT64_MAX, TFT_HTTP_RANGE_PART, 0, UINT64_MAX - 1 },
		/* the largest positions are read exactly, not capped early */
		{ "bytes=18446744073709551614-", UINT64_MAX, TFT_HTTP_RANGE_PART,
		  18446744073709551614ULL, 18446744073709551614ULL },
		{ "bytes=1000-", 1000, TFT_HTTP_RANGE_UNSATISFIED, 0, 0 },
		{ "bytes=-0", 1000, TFT_HTTP_RANGE_UNSATISFIED, 0, 0 },
		{ "bytes=0-", 0, TFT_HTTP_RANGE_UNSATISFIED, 0, 0 },
		{ "bytes=-5", 0, TFT_HTTP_RANGE_UNSATISFIED, 0, 0 },
		{ "bytes=2000-3000,5000-", 1000, TFT_HTTP_RANGE_UNSATISFIED, 0, 0 },
		{ "bytes=99999999999999999999999-", 1000, TFT_HTTP_RANGE_UNSATISFIED, 0, 0 },
		{ "bytes=0-1,5-6", 1000, TFT_HTTP_RANGE_WHOLE, 0, 0 },
		{ "bytes=0-1,2000-3000", 1000, TFT_HTTP_RANGE_WHOLE, 0, 0 },
		{ "bytes=5-1", 1000, TFT_HTTP_RANGE_WHOLE, 0, 0 },
		{ "bytes=", 1000, TFT_HTTP_RANGE_WHOLE, 0, 0 },
		{ "bytes=-", 1000, TFT_HTTP_RANGE_WHOLE, 0, 0 },
		{ "bytes=1", 1000, TFT_HTTP_RANGE_WHOLE, 0, 0 },
		{ "bytes=1-2x", 1000, TFT_HTTP_RANGE_WHOLE, 0, 0 },
		{ "bytes=a-b", 1000, TFT_HTTP_RANGE_WHOLE, 0, 0 },
		{ "items=0-1", 1000, TFT_HTTP_RANGE_WHOLE, 0, 0 },
		{ "", 1000, TFT_HTTP_RANGE_WHOLE, 0, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t first = 0, last = 0;
		enum tft_http_range rr = tft_http_parse_range(cases[i].h, cases[i].size, &first, &last);

		if (cases[i].want == TFT_HTTP_RANGE_PART)
			ok(rr == cases[i].want && first == cases[i].first && last == cases[i].last,
			   "range \"%s\" of %llu bytes: %llu-%llu (got %d: %llu-%llu)", cases[i].h,
			   (unsigned long long)cases[i].size, (unsigned long long)cases[i].first,
			   (unsigned long long)cases[i].last, (int)rr, (unsigned long long)first,
			   (unsigned long long)last);
		else
			ok(rr == cases[i].want, "range \"%s\" of %llu bytes: %s (got %d)", cases[i].h,
			   (unsigned long long)cases[i].size,
			   cases[i].want == TFT_HTTP_RANGE_WHOLE ? "whole" : "unsatisfiable", (int)rr);
	}
}

int main(void)
{
	char dir[] = "/tmp/tft-test-server-XXXXXX", path[64];

	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/s.tft", dir);
	ok(make_session(path) == 0, "write a session");
	test_shared(path);
	test_path_token(path);
	test_range();
	unlink(path);
	rmdir(dir);
	return done_testing();
}
