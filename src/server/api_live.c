/* SPDX-License-Identifier: MIT */
/*
 * The live controls of docs/http-api.md "Live": POST /api/trace,
 * /api/tracing, /api/save and /api/stop, with their flat JSON bodies (or
 * query parameters). The hub itself: live_hub.c and the files live_int.h
 * lists.
 */
#include <stdio.h>
#include <stdlib.h>

#include "codec/json_read.h"
#include "codec/source.h"
#include "server/live_int.h"

/* One member of a flat JSON object body. */
struct body_field {
	const char *key;
	int type;       /* TFT_JSON_NUMBER, TFT_JSON_TRUE (a boolean), TFT_JSON_STRING */
	bool present;
	int64_t i;
	bool b;
	char s[4200];
};

/* Read the body (a JSON object) or the query parameters into fields. 0 or TFT_EINVAL. */
static int parse_body(struct tft_http_req *r, struct body_field *f, size_t nf)
{
	for (size_t i = 0; i < nf; i++) {
		size_t len;
		const char *v = tft_query_get(&r->query, f[i].key, &len);
		if (!v)
			continue;
		f[i].present = true;
		if (f[i].type == TFT_JSON_NUMBER) {
			if (tft_query_parse_i64(v, len, &f[i].i) != 0)
				return TFT_EINVAL;
		} else if (f[i].type == TFT_JSON_TRUE) {
			if (len == 4 && memcmp(v, "true", 4) == 0)
				f[i].b = true;
			else if ((len == 5 && memcmp(v, "false", 5) == 0))
				f[i].b = false;
			else if (len == 1 && (v[0] == '0' || v[0] == '1'))
				f[i].b = v[0] == '1';
			else
				return TFT_EINVAL;
		} else {
			if (len >= sizeof(f[i].s) || memchr(v, 0, len))
				return TFT_EINVAL;
			memcpy(f[i].s, v, len);
			f[i].s[len] = 0;
		}
	}
	if (r->body_bytes > TFT_HTTP_KEEP_BODY)
		return TFT_EINVAL;
	if (!r->body_len)
		return 0;
	{
		struct tft_source *src = tft_source_open_mem(r->body, r->body_len, "body", NULL);
		struct tft_json_reader_opts ro = { .block_size = 8192, .max_buffer = 8192, .max_depth = 8 };
		struct tft_json_reader jr;
		struct tft_json_value v;
		struct tft_json_str key;
		int rc = TFT_EINVAL, c;

		if (!src)
			return TFT_EINVAL;
		if (tft_json_reader_init(&jr, src, &ro, NULL) != 0) {
			tft_source_close(src);
			return TFT_EINVAL;
		}
		tft_json_mark(&jr);
		if (tft_json_peek(&jr, &c, NULL) != 0 || c != '{' || tft_json_read(&jr, &v, NULL) != 0)
			goto done;
		for (;;) {
			int k = tft_json_next_member(&jr, &key, &v, NULL);
			size_t i;
			if (k == 0)
				break;
			if (k != 1)
				goto done;
			for (i = 0; i < nf; i++)
				if (strlen(f[i].key) == key.len && memcmp(f[i].key, key.ptr, key.len) == 0)
					break;
			if (v.type == TFT_JSON_OBJECT || v.type == TFT_JSON_ARRAY) {
				if (i < nf || tft_json_skip(&jr, NULL, NULL) != 0)
					goto done;
				continue;
			}
			if (i == nf)
				continue; /* unknown members are ignored */
			f[i].present = true;
			if (f[i].type == TFT_JSON_NUMBER) {
				if (v.type != TFT_JSON_NUMBER || tft_json_value_to_i64(&v, &f[i].i) != 0)
					goto done;
			} else if (f[i].type == TFT_JSON_TRUE) {
				if (v.type != TFT_JSON_TRUE && v.type != TFT_JSON_FALSE)
					goto done;
				f[i].b = v.type == TFT_JSON_TRUE;
			} else {
				if (v.type == TFT_JSON_NULL) {
					f[i].present = false;
					continue;
				}
				if (v.type != TFT_JSON_STRING || v.len >= sizeof(f[i].s) ||
				    memchr(v.ptr, 0, v.len))
					goto done;
				memcpy(f[i].s, v.ptr, v.len);
				f[i].s[v.len] = 0;
			}
		}
		if (tft_json_peek(&jr, &c, NULL) == 0 && c == -1)
			rc = 0;
done:
		tft_json_reader_fini(&jr);
		tft_source_close(src);
		return rc;
	}
}

int tft_api_trace(struct tft_http_req *r)
{
	struct tft_live *lv = tft_live_of(r);
	struct body_field f[2] = { { .key = "steps", .type = TFT_JSON_NUMBER },
				   { .key = "every", .type = TFT_JSON_NUMBER } };
	struct tft_json_writer w;
	uint64_t req = 0;

	if (!lv)
		return tft_http_reply_error(r, 404, "not a live session");
	if (parse_body(r, f, 2) != 0)
		return tft_http_reply_error(r, 400, "bad request body");
	if (!f[0].present && !f[1].present)
		return tft_http_reply_error(r, 400, "give steps or every");
	if ((f[0].present && (f[0].i < 0 || f[0].i > 100000)) ||
	    (f[1].present && (f[1].i < 0 || f[1].i > 1000000)))
		return tft_http_reply_error(r, 400, "steps must be 0..100000, every 0..1000000");
	if (f[0].present)
		req = tft_live_trace_next(lv, (int)f[0].i);
	if (f[1].present)
		tft_live_trace_every(lv, (int)f[1].i);
	tft_json_write_init_mem(&w);
	tft_json_write_begin_object(&w);
	tft_json_write_key(&w, "request");
	if (req)
		tft_json_write_uint(&w, req);
	else
		tft_json_write_null(&w);
	tft_json_write_key(&w, "pending");
	tft_json_write_int(&w, atomic_load(&lv->pending));
	tft_json_write_key(&w, "every");
	tft_json_write_int(&w, atomic_load(&lv->every));
	tft_json_write_end_object(&w);
	return tft_http_reply_json(r, 200, &w);
}

int tft_api_tracing(struct tft_http_req *r)
{
	struct tft_live *lv = tft_live_of(r);
	struct body_field f[1] = { { .key = "on", .type = TFT_JSON_TRUE } };
	struct tft_json_writer w;

	if (!lv)
		return tft_http_reply_error(r, 404, "not a live session");
	if (parse_body(r, f, 1) != 0 || !f[0].present)
		return tft_http_reply_error(r, 400, "give on: true or false");
	tft_live_set_tracing(lv, f[0].b);
	tft_json_write_init_mem(&w);
	tft_json_write_begin_object(&w);
	tft_json_write_key(&w, "tracing");
	tft_json_write_bool(&w, f[0].b);
	tft_json_write_end_object(&w);
	return tft_http_reply_json(r, 200, &w);
}

int tft_api_save(struct tft_http_req *r)
{
	struct tft_live *lv = tft_live_of(r);
	struct body_field *f;
	struct tft_json_writer w;
	struct tft_error err;
	char out[4200];
	uint64_t bytes = 0;
	bool given;
	int rc;

	if (!lv)
		return tft_http_reply_error(r, 404, "not a live session");
	f = calloc(1, sizeof(*f));
	if (!f)
		return tft_http_reply_error(r, 503, "out of memory");
	f->key = "path";
	f->type = TFT_JSON_STRING;
	if (parse_body(r, f, 1) != 0) {
		free(f);
		return tft_http_reply_error(r, 400, "bad request body");
	}
	tft_error_clear(&err);
	given = f->present && f->s[0];
	rc = tft_live_save(lv, given ? f->s : NULL, out, sizeof(out), &bytes, &err);
	free(f);
	if (rc == TFT_EINVAL)
		/* Fixed text: the message would echo the requested path. */
		return tft_http_reply_error(r, 400, "bad path: it must end in .tft and not exist");
	if (rc)
		return tft_http_reply_error(r, 500, "the copy failed");
	tft_json_write_init_mem(&w);
	tft_json_write_begin_object(&w);
	/* The path only when the server chose it (request input is never echoed). */
	tft_json_write_key(&w, "path");
	tft_json_write_cstr(&w, given ? NULL : out);
	tft_json_write_key(&w, "bytes");
	tft_json_write_uint(&w, bytes);
	tft_json_write_end_object(&w);
	return tft_http_reply_json(r, 200, &w);
}

int tft_api_stop(struct tft_http_req *r)
{
	struct tft_live *lv = r->srv->pool.src.live;
	struct tft_json_writer w;

	if (!lv)
		return tft_http_reply_error(r, 404, "not a live session");
	/* The follower stops the server a moment later, once this reply is out. */
	atomic_store(&lv->stop_at_ns, tft_live_mono_ns() + 200 * 1000000LL);
	atomic_store(&lv->stop_requested, true);
	tft_json_write_init_mem(&w);
	tft_json_write_begin_object(&w);
	tft_json_write_key(&w, "stopping");
	tft_json_write_bool(&w, true);
	tft_json_write_end_object(&w);
	return tft_http_reply_json(r, 200, &w);
}
