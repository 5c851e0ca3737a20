/* SPDX-License-Identifier: MIT */
/*
 * The standalone HTML export's query engine, built for WebAssembly
 * (wasm32-wasi: `make` builds $(O)/wasm/tftracer.wasm, the exporter inlines
 * it; docs/http-api.md "Static HTML export"): the page's DATA opened as a
 * session (export/html_data.c), and GET /api/viewport, /api/slice,
 * /api/search and /api/stats answered by the server's own code (query/),
 * so an exported page answers exactly as `tftracer serve` does. One session,
 * one call at a time (the page's worker, web/static-engine.js).
 *
 * The interface, all in the module's memory:
 *   tft_wasm_alloc(n)    room for n bytes (and the reader's padding after
 *                        them) for the caller to fill: DATA, a path, a query;
 *   tft_wasm_open(p, n)  open DATA p[0 .. n) (taken: freed here); 0, or a
 *                        negative status with tft_wasm_body() the message;
 *   tft_wasm_query(path, plen, qs, qlen)  answer "api/NAME" with the query
 *                        string qs: the HTTP-like status (200, 400, 404 ...),
 *                        tft_wasm_body()/tft_wasm_body_len() the JSON answer
 *                        or, for another status, the refusal's message;
 *   tft_wasm_meta(key)   a meta value of the session (a NUL-terminated key
 *                        written at tft_wasm_alloc's room), or 0: e.g.
 *                        static_truncated (export/html_data.h);
 *   tft_wasm_realloc(p, n)  the same room grown to n bytes (the caller
 *                        writing DATA in pieces, not knowing its length);
 *   tft_wasm_free(p)     free what tft_wasm_alloc gave (a path, a query).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/json_read.h"
#include "codec/json_write.h"
#include "export/html_data.h"
#include "query/error.h"
#include "query/params.h"
#include "query/search.h"
#include "query/slice.h"
#include "query/stats.h"
#include "query/viewport.h"

#define EXPORT(name) __attribute__((export_name(#name), visibility("default")))

/* The module's exports (above); the page calls them, nothing in C does. */
void *tft_wasm_alloc(size_t n);
void *tft_wasm_realloc(void *p, size_t n);
void tft_wasm_free(void *p);
const char *tft_wasm_body(void);
size_t tft_wasm_body_len(void);
int tft_wasm_open(char *data, size_t len);
int tft_wasm_query(const char *path, size_t plen, const char *qs, size_t qlen);
const char *tft_wasm_meta(const char *key);

static struct {
	struct tft_session *s;
	struct tft_qry_viewport_scratch *vp;
	struct tft_qry_flows *flows;         /* built on the first slice that needs it */
	struct tft_qry_search_index *search; /* built on the first search */
	struct tft_json_writer out;          /* the last answer */
	struct tft_query q;
	struct tft_qry_err e;
	const char *body;
	size_t body_len;
} g;

EXPORT(tft_wasm_alloc) void *tft_wasm_alloc(size_t n)
{
	return malloc(n + TFT_JSON_PAD + 1);
}

EXPORT(tft_wasm_realloc) void *tft_wasm_realloc(void *p, size_t n)
{
	return realloc(p, n + TFT_JSON_PAD + 1);
}

EXPORT(tft_wasm_free) void tft_wasm_free(void *p)
{
	free(p);
}

EXPORT(tft_wasm_body) const char *tft_wasm_body(void)
{
	return g.body;
}

EXPORT(tft_wasm_body_len) size_t tft_wasm_body_len(void)
{
	return g.body_len;
}

/* The refusal in g.e as the answer. */
static int refused(void)
{
	if (!g.e.status)
		tft_qry_fail(&g.e, 500, "failed");
	g.body = g.e.msg;
	g.body_len = strlen(g.e.msg);
	return (int)g.e.status;
}

static int say(unsigned status, const char *msg)
{
	tft_qry_fail(&g.e, status, msg);
	return refused();
}

EXPORT(tft_wasm_open) int tft_wasm_open(char *data, size_t len)
{
	struct tft_error err;

	tft_error_clear(&err);
	memset(data + len, 0, TFT_JSON_PAD + 1);
	g.s = tft_html_data_open(data, len, "the page", &err);
	free(data);
	if (g.s && !(g.vp = tft_qry_viewport_scratch_new())) {
		tft_session_close(g.s);
		g.s = NULL;
		tft_error_set(&err, TFT_ENOMEM, -1, "out of memory");
	}
	if (!g.s) {
		char msg[sizeof(err.msg) + 48];
		snprintf(msg, sizeof(msg), "%s (at byte %lld of the inlined data)", err.msg, (long long)err.offset);
		say(500, msg);
		return err.code ? err.code : TFT_EFORMAT;
	}
	tft_json_write_init_mem(&g.out);
	return 0;
}

EXPORT(tft_wasm_query) int tft_wasm_query(const char *path, size_t plen, const char *qs, size_t qlen)
{
	int rc;

	if (!g.s)
		return say(500, "the inlined session data is not open");
	if (tft_query_parse(&g.q, qs, qlen))
		return say(400, "malformed query string");
	tft_json_write_clear(&g.out);
	g.out.sep = 0;
	g.out.depth = 0;
	g.e.status = 0;
#define IS(name) (plen == sizeof(name) - 1 && memcmp(path, name, plen) == 0)
	if (IS("api/viewport"))
		rc = tft_qry_viewport(g.s, g.vp, &g.q, &g.out, &g.e);
	else if (IS("api/slice"))
		rc = tft_qry_slice(g.s, tft_qry_flows_own, &g.flows, &g.q, &g.out, &g.e);
	else if (IS("api/search")) {
		struct tft_error err;
		tft_error_clear(&err);
		if (!g.search && !(g.search = tft_qry_search_index_new(g.s, &err))) {
			tft_qry_fail_status(&g.e, err.code ? err.code : TFT_ENOMEM, &err);
			return refused();
		}
		rc = tft_qry_search(g.s, g.search, &g.q, &g.out, &g.e);
	} else if (IS("api/stats"))
		rc = tft_qry_stats(g.s, &g.q, &g.out, &g.e);
	else
		return say(404, "no such endpoint in a static export");
#undef IS
	if (rc)
		return refused();
	if (g.out.status)
		return say(503, "out of memory");
	g.body = tft_json_write_data(&g.out, &g.body_len);
	return 200;
}

EXPORT(tft_wasm_meta) const char *tft_wasm_meta(const char *key)
{
	return g.s ? tft_session_meta(g.s, key) : NULL;
}
