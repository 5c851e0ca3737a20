/* SPDX-License-Identifier: MIT */
/*
 * The document around the events: an array of events, or an object whose
 * "traceEvents" the decoder reads and whose other top-level keys
 * (displayTimeUnit, otherData, metadata, Kineto's schemaVersion,
 * deviceProperties, distributedInfo, baseTimeNanoseconds, ...) become
 * session metadata. Top-level keys are read with the committer idle.
 */
#include <stdio.h>

#include "collect/chrome/chrome_int.h"

static int set_meta_str(struct chrome *c, const char *key, const struct tft_json_str *s)
{
	char *tmp = malloc(s->len + 1);
	int rc;

	if (!tmp)
		return nomem(c);
	memcpy(tmp, s->ptr, s->len);
	tmp[s->len] = '\0';
	rc = tft_writer_set_meta(c->w, key, tmp);
	free(tmp);
	return rc;
}

static int set_meta_compact(struct chrome *c, const char *key, const char *json, size_t len)
{
	char *tmp = malloc(len + 1);
	size_t n;
	int rc;

	if (!tmp)
		return nomem(c);
	n = tft_json_compact(json, len, tmp);
	tmp[n] = '\0';
	rc = tft_writer_set_meta(c->w, key, tmp);
	free(tmp);
	return rc;
}

static int meta_json(struct parser *p, const char *key, struct tft_json_str *raw_out)
{
	struct tft_json_str raw;
	int rc = tft_json_skip_checked(&p->r, &raw, p->err);

	if (rc)
		return rc;
	if (raw_out)
		*raw_out = raw;
	return set_meta_compact(p->c, key, raw.ptr, raw.len);
}

static int meta_scalar(struct parser *p, const char *key)
{
	struct tft_json_value v;
	int rc = tft_json_read_flat(&p->r, &v, true, p->err);

	if (rc)
		return rc;
	if (v.type == TFT_JSON_OBJECT || v.type == TFT_JSON_ARRAY)
		return set_meta_compact(p->c, key, v.ptr, v.len);
	if (v.type == TFT_JSON_STRING || v.type == TFT_JSON_NUMBER) {
		struct tft_json_str s = { v.ptr, v.len };
		return set_meta_str(p->c, key, &s);
	}
	return 0;
}

/* A string-ish value read whole (top-level keys). */
static int read_str(struct parser *p, struct tft_json_str *out)
{
	struct tft_json_value v;
	int rc = tft_json_read_flat(&p->r, &v, false, p->err);

	if (rc)
		return rc;
	val_str(&v, out);
	return 0;
}

static int read_distributed(struct parser *p)
{
	struct chrome *c = p->c;
	struct tft_json_value v;
	struct tft_json_str k;
	bool is_obj;
	int rc = enter_object(p, &is_obj);

	if (rc || !is_obj)
		return rc;
	while ((rc = tft_json_next_key(&p->r, &k, p->err)) == 1) {
		if (STR_EQ(&k, "rank")) {
			int64_t r;
			if ((rc = tft_json_read_flat(&p->r, &v, false, p->err)))
				return rc;
			if (v.type == TFT_JSON_NUMBER && tft_json_number_to_i64(v.ptr, v.len, &r) == 0 &&
			    r >= 0 && r <= INT32_MAX) {
				c->has_rank = true;
				c->rank = (int32_t)r;
			}
		} else if (STR_EQ(&k, "backend")) {
			rc = meta_scalar(p, "distributed_backend");
		} else if (STR_EQ(&k, "world_size")) {
			rc = meta_scalar(p, "world_size");
		} else {
			rc = tft_json_skip(&p->r, NULL, p->err);
		}
		if (rc)
			return rc;
	}
	return rc;
}

static int read_base_time(struct parser *p)
{
	struct chrome *c = p->c;
	struct tft_json_value v;
	int rc = tft_json_read_flat(&p->r, &v, false, p->err);
	int64_t ns;

	if (rc)
		return rc;
	if (v.type != TFT_JSON_NUMBER && v.type != TFT_JSON_STRING)
		return 0;
	/* already nanoseconds: an integer (a fraction is rounded) */
	if (tft_json_number_to_i64(v.ptr, v.len, &ns) != 0) {
		double d;
		if (tft_json_number_to_double(v.ptr, v.len, &d) || !(d > -9.2e18 && d < 9.2e18))
			return tft_error_set(p->err, TFT_EFORMAT, v.offset,
					     "expected baseTimeNanoseconds as an integer number of nanoseconds");
		ns = (int64_t)(d < 0 ? d - 0.5 : d + 0.5);
	}
	c->shift_ns = ns;
	c->kineto = true;
	char buf[32];
	snprintf(buf, sizeof(buf), "%lld", (long long)ns);
	return tft_writer_set_meta(c->w, "base_time_ns", buf);
}

/* Handle one top-level key's value (the key was consumed). */
static int top_value(struct parser *p, const struct tft_json_str *k)
{
	struct chrome *c = p->c;

	if (STR_EQ(k, "displayTimeUnit"))
		return meta_scalar(p, "display_time_unit");
	if (STR_EQ(k, "otherData"))
		return meta_json(p, "other_data", NULL);
	if (STR_EQ(k, "metadata")) {
		struct tft_json_str raw;
		int rc = meta_json(p, "metadata", &raw);
		if (rc)
			return rc;
		return tft_chrome_md_parse(c, raw.ptr, raw.len);
	}
	if (STR_EQ(k, "schemaVersion")) {
		c->kineto = true;
		return meta_scalar(p, "kineto_schema_version");
	}
	if (STR_EQ(k, "deviceProperties")) {
		c->kineto = true;
		return meta_json(p, "device_properties", NULL);
	}
	if (STR_EQ(k, "distributedInfo")) {
		c->kineto = true;
		return read_distributed(p);
	}
	if (STR_EQ(k, "baseTimeNanoseconds"))
		return read_base_time(p);
	if (STR_EQ(k, "traceName"))
		return meta_scalar(p, "trace_name");
	if (STR_EQ(k, "host_name")) {
		struct tft_json_str s;
		int rc = read_str(p, &s);
		if (rc || s.len == 0)
			return rc;
		return intern(c, s.ptr, s.len, &c->host);
	}
	return tft_json_skip(&p->r, NULL, p->err);
}

/* Keys whose values may be huge and are not kept: skipped without buffering. */
static bool is_streamed_key(const struct tft_json_str *k)
{
	return STR_EQ(k, "systemTraceEvents") || STR_EQ(k, "stackFrames") || STR_EQ(k, "samples");
}

static bool is_known_key(const struct tft_json_str *k)
{
	return STR_EQ(k, "displayTimeUnit") || STR_EQ(k, "otherData") || STR_EQ(k, "metadata") ||
	       STR_EQ(k, "schemaVersion") || STR_EQ(k, "deviceProperties") ||
	       STR_EQ(k, "distributedInfo") || STR_EQ(k, "baseTimeNanoseconds") ||
	       STR_EQ(k, "traceName") || STR_EQ(k, "host_name");
}

/* The top-level object's keys: traceEvents to the decoder, the others as metadata. */
static int read_object_doc(struct parser *p, int64_t obj_offset)
{
	struct tft_json_str k;
	struct tft_json_value v;
	int rc;

	for (;;) {
		tft_json_mark(&p->r);
		rc = tft_json_next_key(&p->r, &k, p->err);
		if (rc == 1) {
			if (STR_EQ(&k, "traceEvents")) {
				if ((rc = tft_json_read(&p->r, &v, p->err)) == 0) {
					if (v.type != TFT_JSON_ARRAY)
						return tft_error_set(p->err, TFT_EFORMAT, v.offset,
								     "expected an array of trace events as the value of \"traceEvents\"");
					p->saw_events = true;
					if ((rc = tft_chrome_read_events(p, 0)) == 0)
						continue;
				}
			} else if ((rc = tft_chrome_p_drain(p))) {
				return rc;
			} else if (is_streamed_key(&k)) {
				if (STR_EQ(&k, "systemTraceEvents") &&
				    (rc = tft_writer_set_meta(p->c->w, "system_trace_events",
							      "present (not imported)")))
					return rc;
				if ((rc = tft_json_skip_stream(&p->r, p->err)))
					return rc;
				continue;
			} else if (is_known_key(&k)) {
				if ((rc = top_value(p, &k)) == 0)
					continue;
			} else {
				if ((rc = tft_json_skip_stream(&p->r, p->err)))
					return rc;
				continue;
			}
		}
		if (rc == TFT_JSON_MORE) {
			if ((rc = tft_chrome_p_refill(p)))
				return rc;
			continue;
		}
		if (rc == 0 && !p->saw_events)
			return tft_error_set(p->err, TFT_EFORMAT, obj_offset,
					     "expected a \"traceEvents\" array in the top-level object: not a Chrome trace");
		return rc; /* 0: end of the object; <0: error */
	}
}

/* The whole document: an array of events, or an object holding traceEvents. */
int tft_chrome_read_document(struct parser *p)
{
	struct tft_json_value v;
	int rc;

	/* a UTF-8 byte order mark is tolerated */
	if (p->r.len >= 3 && memcmp(p->r.buf, "\xef\xbb\xbf", 3) == 0)
		p->r.pos = 3;
	for (;;) {
		tft_json_mark(&p->r);
		rc = tft_json_read(&p->r, &v, p->err);
		if (rc != TFT_JSON_MORE)
			break;
		if ((rc = tft_chrome_p_refill(p)))
			return rc;
	}
	if (rc)
		return rc;
	if (v.type == TFT_JSON_ARRAY)
		rc = tft_chrome_read_events(p, TFT_JSON_EOF_ENDS_ARRAY);
	else if (v.type == TFT_JSON_OBJECT)
		rc = read_object_doc(p, v.offset);
	else
		return tft_error_set(p->err, TFT_EFORMAT, v.offset,
				     "expected '{' or '[' at the start of a JSON trace");
	if (rc)
		return rc;
	for (;;) {
		tft_json_mark(&p->r);
		rc = tft_json_finish(&p->r, p->err);
		if (rc != TFT_JSON_MORE)
			break;
		if ((rc = tft_chrome_p_refill(p)))
			return rc;
	}
	if (rc)
		return rc;
	return tft_chrome_p_drain(p);
}
