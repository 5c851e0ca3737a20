/* SPDX-License-Identifier: MIT */
/*
 * Standalone HTML export (export_html.h): index.html with its tft:assets
 * block replaced by the stylesheet, the session data (DATA, see
 * docs/http-api.md "Static HTML export") and the UI's modules inlined.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "analyze/advise.h"
#include "analyze/prof.h"
#include "core/grow.h"
#include "core/strtab.h"
#include "export/export_html.h"
#include "export/export_prof.h"
#include "export/export_session.h"
#include "export/export_summary.h"
#include "store/graph.h"

static const char mark_begin[] = "<!--tft:assets-->";
static const char mark_end[] = "<!--/tft:assets-->";

/* ---- text helpers ------------------------------------------------------------ */

static const struct tft_html_asset *find_asset(const struct tft_html_opts *o, const char *name)
{
	for (size_t i = 0; i < o->nassets; i++)
		if (strcmp(o->assets[i].name, name) == 0)
			return &o->assets[i];
	return NULL;
}

static bool contains(const unsigned char *p, size_t len, const char *needle)
{
	size_t n = strlen(needle);

	for (size_t i = 0; i + n <= len; i++)
		if (p[i] == (unsigned char)needle[0] && strncasecmp((const char *)p + i, needle, n) == 0)
			return true;
	return false;
}

/* The line [*b, *e) holding exactly `mark` (surrounding blanks allowed), from `from`. */
static bool find_line(const unsigned char *p, size_t len, size_t from, const char *mark,
		      size_t *b, size_t *e)
{
	size_t n = strlen(mark);

	for (size_t ls = from; ls < len;) {
		size_t le = ls, i, j;
		while (le < len && p[le] != '\n')
			le++;
		i = ls;
		while (i < le && (p[i] == ' ' || p[i] == '\t'))
			i++;
		j = le;
		while (j > i && (p[j - 1] == ' ' || p[j - 1] == '\t' || p[j - 1] == '\r'))
			j--;
		if (j - i == n && memcmp(p + i, mark, n) == 0) {
			*b = ls;
			*e = le < len ? le + 1 : le;
			return true;
		}
		ls = le + 1;
	}
	return false;
}

static int check_file(const struct tft_html_asset *a, struct tft_error *err)
{
	if (contains(a->data, a->len, "</script") || contains(a->data, a->len, "<!--"))
		return tft_error_set(err, TFT_EFORMAT, -1,
				     "web file %s holds \"</script\" or \"<!--\": it cannot be inlined",
				     a->name);
	return 0;
}

static void raw(struct tft_json_writer *w, const void *p, size_t n)
{
	tft_json_write_raw(w, (const char *)p, n);
}

static void raw_cstr(struct tft_json_writer *w, const char *s)
{
	raw(w, s, strlen(s));
}

/* p[0 .. n) as standard base64 (RFC 4648, padded), in lines the HTML parser takes in stride. */
static void raw_base64(struct tft_json_writer *w, const unsigned char *p, size_t n)
{
	static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char line[77];
	size_t k = 0;

	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) | (i + 2 < n ? p[i + 2] : 0);
		line[k++] = abc[v >> 18 & 63];
		line[k++] = abc[v >> 12 & 63];
		line[k++] = i + 1 < n ? abc[v >> 6 & 63] : '=';
		line[k++] = i + 2 < n ? abc[v & 63] : '=';
		if (k == 76 || i + 3 >= n) {
			line[k++] = '\n';
			raw(w, line, k);
			k = 0;
		}
	}
}

/* ---- DATA ------------------------------------------------------------------ */

/* The inner JSON writer's sink: every '<' becomes \u003c (legal JSON, inert HTML). */
static int data_sink(void *ctx, const void *buf, size_t len)
{
	struct tft_json_writer *out = ctx;
	const char *p = buf, *end = p + len;

	while (p < end) {
		const char *lt = memchr(p, '<', (size_t)(end - p));
		size_t run = lt ? (size_t)(lt - p) : (size_t)(end - p);
		tft_json_write_raw(out, p, run);
		if (!lt)
			break;
		tft_json_write_raw(out, "\\u003c", 6);
		p = lt + 1;
	}
	return out->status;
}

struct tbuf {
	int64_t *ts, *dur;
	double *value;
	uint32_t *depth, *name, *cat;
	uint8_t *flags, *ekind;
	size_t n, cap;
	bool counter, any_args, any_cat, any_flags, any_instant;
	struct tft_json_writer args; /* "[null, {...}, ...]" being built */
};

struct html_ctx {
	struct tft_session *s;
	struct tft_strtab *strs; /* dense string table of DATA */
	struct tbuf t;
	int64_t origin;
	uint64_t budget, events, truncated;
	struct tft_error *err;
	int rc;
	struct tft_json_memo json_ok; /* JSON arg texts checked, by string id */
	struct tft_json_writer one;   /* one event's args object, before it goes into t.args */
};

static uint32_t dense(struct html_ctx *c, uint32_t sid)
{
	size_t len;
	const char *p;
	uint32_t id;

	if (sid == 0)
		return 0;
	p = tft_session_str(c->s, sid, &len);
	id = tft_strtab_intern(c->strs, p, len);
	if (id == UINT32_MAX)
		c->rc = TFT_ENOMEM;
	return id == UINT32_MAX ? 0 : id;
}

static bool tbuf_grow(struct tbuf *t)
{
	size_t cap = t->cap;
	/* parallel arrays of one capacity: t->cap moves when all of them grew */
#define GROW(f)                                                                                       \
	do {                                                                                          \
		cap = t->cap;                                                                         \
		if (tft_grow_size_ex((void **)&t->f, &cap, t->cap + 1, sizeof(*t->f), 1024, 0))       \
			return false;                                                                 \
	} while (0)

	GROW(ts);
	GROW(dur);
	GROW(value);
	GROW(depth);
	GROW(name);
	GROW(cat);
	GROW(flags);
	GROW(ekind);
#undef GROW
	t->cap = cap;
	return true;
}

static void tbuf_free(struct tbuf *t)
{
	free(t->ts);
	free(t->dur);
	free(t->value);
	free(t->depth);
	free(t->name);
	free(t->cat);
	free(t->flags);
	free(t->ekind);
	tft_json_write_fini(&t->args);
	memset(t, 0, sizeof(*t));
}

/* ---- integers beyond 2^53 ------------------------------------------------------ */

/* Largest integer a JavaScript number holds exactly (Number.MAX_SAFE_INTEGER). */
#define JS_SAFE_MAX 9007199254740991ull

/*
 * Whether the JSON text holds an integer beyond 2^53 - 1, which a JavaScript number may
 * not hold exactly: a run of digits beyond it, not next to a '.' or an exponent (a
 * number with a fraction or an exponent is a double to the server's client too). A
 * run inside a string counts too: harmless, the page then parses that value the exact
 * way.
 */
static bool has_unsafe_int(const char *p, size_t len)
{
	static const char safe_max[] = "9007199254740991"; /* 16 digits */

	for (size_t i = 0; i < len;) {
		size_t b = i;
		while (i < len && p[i] >= '0' && p[i] <= '9')
			i++;
		if (i == b) {
			i++;
			continue;
		}
		if (i - b < 16 || (i - b == 16 && memcmp(p + b, safe_max, 16) <= 0))
			continue;
		if ((b && p[b - 1] == '.') || (i < len && (p[i] == '.' || p[i] == 'e' || p[i] == 'E')))
			continue;
		return true;
	}
	return false;
}

/*
 * The JSON value `json` (an event's args object, a graph row) into w: as it is, or,
 * when it holds an integer a JavaScript number may round, as a string of its text,
 * which the page parses with exact integers (docs/http-api.md "Static HTML export").
 * The fast parse of DATA then never sees such a number.
 */
static void write_exact_value(struct tft_json_writer *w, const char *json, size_t len)
{
	if (has_unsafe_int(json, len))
		tft_json_write_str(w, json, len);
	else
		tft_json_write_value_raw(w, json, len);
}

/* An unsigned integer (a flow id): a number up to 2^53 - 1, beyond it its digits as a string. */
static void write_u64_exact(struct tft_json_writer *w, uint64_t v)
{
	char buf[24];
	int n;

	if (v <= JS_SAFE_MAX) {
		tft_json_write_uint(w, v);
		return;
	}
	n = snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
	tft_json_write_str(w, buf, (size_t)n);
}

/* A memory writer emptied for a new value. */
static void scratch_reset(struct tft_json_writer *w)
{
	tft_json_write_clear(w);
	w->sep = 0;
	w->depth = 0;
}

static void write_arg_value(struct html_ctx *c, struct tft_json_writer *w, const struct tft_arg *a)
{
	size_t len;
	const char *p;

	switch (a->type) {
	case TFT_ARG_BOOL: tft_json_write_bool(w, a->v.i != 0); break;
	case TFT_ARG_INT: tft_json_write_int(w, a->v.i); break;
	case TFT_ARG_DOUBLE: tft_json_write_double(w, a->v.d); break;
	case TFT_ARG_STR:
		p = tft_session_str(c->s, a->v.str, &len);
		tft_json_write_str(w, p, len);
		break;
	case TFT_ARG_JSON:
		p = tft_session_str(c->s, a->v.str, &len);
		if (!len)
			tft_json_write_null(w);
		else if (tft_json_memo_is_value(&c->json_ok, a->v.str, p, len)) /* the file is untrusted */
			tft_json_write_value_raw(w, p, len);
		else
			tft_json_write_str(w, p, len);
		break;
	default: tft_json_write_null(w); break;
	}
}

static int on_event(void *ctx, const struct tft_event *ev)
{
	struct html_ctx *c = ctx;
	struct tbuf *t = &c->t;
	size_t i;

	if (c->events >= c->budget) {
		c->truncated++;
		return 0;
	}
	if (t->n == t->cap && !tbuf_grow(t))
		return c->rc = TFT_ENOMEM;
	i = t->n++;
	c->events++;
	/* relative to the session's start; saturated (stored times are not trusted to stay in range) */
	if (__builtin_sub_overflow(ev->ts_ns, c->origin, &t->ts[i]))
		t->ts[i] = ev->ts_ns < 0 ? INT64_MIN : INT64_MAX;
	t->dur[i] = ev->dur_ns;
	t->value[i] = ev->value;
	t->depth[i] = ev->depth;
	t->name[i] = dense(c, ev->name);
	t->cat[i] = dense(c, ev->cat);
	t->flags[i] = ev->flags;
	t->ekind[i] = ev->kind == TFT_EV_INSTANT;
	t->any_cat |= t->cat[i] != 0;
	t->any_flags |= ev->flags != 0;
	t->any_instant |= ev->kind == TFT_EV_INSTANT;
	if (t->counter)
		return c->rc;
	if (ev->nargs) {
		struct tft_json_writer *o = &c->one;
		size_t len;
		const char *obj;
		t->any_args = true;
		scratch_reset(o);
		tft_json_write_begin_object(o);
		for (uint16_t a = 0; a < ev->nargs; a++) {
			size_t klen;
			const char *k = tft_session_str(c->s, ev->args[a].key, &klen);
			/* A key with its length (the key helper takes C strings): the string,
			 * then ':' and the writer's "after a key" state. */
			tft_json_write_str(o, k, klen);
			tft_json_write_raw_char(o, ':');
			o->sep = 2;
			write_arg_value(c, o, &ev->args[a]);
		}
		tft_json_write_end_object(o);
		if (o->status)
			return c->rc = o->status;
		obj = tft_json_write_data(o, &len);
		write_exact_value(&t->args, obj, len);
	} else {
		tft_json_write_null(&t->args);
	}
	return c->rc;
}

static void write_i64s(struct tft_json_writer *w, const char *key, const int64_t *v, size_t n)
{
	tft_json_write_key(w, key);
	tft_json_write_begin_array(w);
	for (size_t i = 0; i < n; i++)
		tft_json_write_int(w, v[i]);
	tft_json_write_end_array(w);
}

static void write_u32s(struct tft_json_writer *w, const char *key, const uint32_t *v, size_t n)
{
	tft_json_write_key(w, key);
	tft_json_write_begin_array(w);
	for (size_t i = 0; i < n; i++)
		tft_json_write_uint(w, v[i]);
	tft_json_write_end_array(w);
}

static void write_u8s(struct tft_json_writer *w, const char *key, const uint8_t *v, size_t n)
{
	tft_json_write_key(w, key);
	tft_json_write_begin_array(w);
	for (size_t i = 0; i < n; i++)
		tft_json_write_uint(w, v[i]);
	tft_json_write_end_array(w);
}

static int write_track(struct html_ctx *c, struct tft_json_writer *w, uint32_t id)
{
	const struct tft_track *tr = tft_session_track(c->s, id);
	struct tbuf *t = &c->t;
	int rc;

	if (!tr || tr->slices + tr->instants + tr->counters == 0)
		return 0;
	t->n = 0;
	t->counter = tr->kind == TFT_TRACK_COUNTER;
	t->any_args = t->any_cat = t->any_flags = t->any_instant = false;
	tft_json_write_fini(&t->args);
	tft_json_write_init_mem(&t->args);
	tft_json_write_begin_array(&t->args);
	rc = tft_session_scan(c->s, id, INT64_MIN, INT64_MAX, 0, on_event, c, c->err);
	if (!rc)
		rc = c->rc;
	if (rc)
		return rc;
	if (!t->n)
		return 0;
	tft_json_write_begin_object(w);
	tft_json_write_key(w, "id");
	tft_json_write_uint(w, id);
	write_i64s(w, "ts", t->ts, t->n);
	if (t->counter) {
		tft_json_write_key(w, "value");
		tft_json_write_begin_array(w);
		for (size_t i = 0; i < t->n; i++)
			tft_json_write_double(w, t->value[i]);
		tft_json_write_end_array(w);
	} else {
		size_t len;
		const char *a;
		write_i64s(w, "dur", t->dur, t->n);
		write_u32s(w, "depth", t->depth, t->n);
		write_u32s(w, "name", t->name, t->n);
		if (t->any_cat)
			write_u32s(w, "cat", t->cat, t->n);
		if (t->any_flags)
			write_u8s(w, "flags", t->flags, t->n);
		if (t->any_instant)
			write_u8s(w, "ekind", t->ekind, t->n);
		if (t->any_args) {
			tft_json_write_end_array(&t->args);
			if (t->args.status)
				return t->args.status;
			a = tft_json_write_borrow(&t->args, &len);
			tft_json_write_key(w, "args");
			tft_json_write_value_raw(w, a, len);
		}
	}
	tft_json_write_end_object(w);
	return w->status;
}

struct flow_ctx {
	struct html_ctx *c;
	struct tft_json_writer *w;
};

static int on_flow(void *ctx, const struct tft_flow *f)
{
	struct flow_ctx *fc = ctx;
	struct tft_json_writer *w = fc->w;

	tft_json_write_begin_object(w);
	tft_json_write_key(w, "id");
	write_u64_exact(w, f->flow_id);
	tft_json_write_key(w, "name");
	tft_json_write_uint(w, dense(fc->c, f->name));
	tft_json_write_key(w, "cat");
	tft_json_write_uint(w, dense(fc->c, f->cat));
	tft_json_write_key(w, "src_track");
	if (f->src_track == TFT_NONE)
		tft_json_write_null(w);
	else
		tft_json_write_uint(w, f->src_track);
	tft_json_write_key(w, "src_ts");
	if (f->src_track == TFT_NONE)
		tft_json_write_null(w);
	else
		tft_json_write_int(w, f->src_ts_ns - fc->c->origin);
	tft_json_write_key(w, "dst_track");
	if (f->dst_track == TFT_NONE)
		tft_json_write_null(w);
	else
		tft_json_write_uint(w, f->dst_track);
	tft_json_write_key(w, "dst_ts");
	if (f->dst_track == TFT_NONE)
		tft_json_write_null(w);
	else
		tft_json_write_int(w, f->dst_ts_ns - fc->c->origin);
	tft_json_write_key(w, "flags");
	tft_json_write_uint(w, f->flags);
	tft_json_write_end_object(w);
	return fc->c->rc ? fc->c->rc : w->status;
}

/* ---- graph nodes ------------------------------------------------------------- */

struct graph_ctx {
	struct tft_json_writer *w;
	struct tft_json_writer one; /* the row, before it goes into w */
	uint64_t n, max, total;
};

/* One graph_nodes row, up to the cap. */
static int on_graph_row(void *ctx, const struct tft_graph_node *n, int64_t graph_id)
{
	struct graph_ctx *g = ctx;
	const char *row;
	size_t len;

	g->total++;
	if (g->n >= g->max)
		return 0; /* (counted: DATA says how many were left out) */
	g->n++;
	scratch_reset(&g->one);
	tft_export_graph_node(&g->one, n, graph_id);
	if (g->one.status)
		return g->one.status;
	/* (its step_start_ns is absolute: most rows of a traced step go as text) */
	row = tft_json_write_data(&g->one, &len);
	write_exact_value(g->w, row, len);
	return g->w->status;
}

/*
 * "graph": the session's graph nodes (at most TFT_HTML_MAX_GRAPH_NODES, the
 * rest counted in "graph_truncated"), for the page's /api/slice; absent when
 * the session has none, as on the server.
 */
static int write_graph(struct tft_session *s, struct tft_json_writer *w)
{
	const char *m = tft_session_meta(s, "graph_nodes");
	struct graph_ctx g = {.w = w, .max = TFT_HTML_MAX_GRAPH_NODES};
	struct tft_error gerr;
	int rc;

	if (!m || !strcmp(m, "0"))
		return 0;
	tft_json_write_init_mem(&g.one);
	tft_json_write_key(w, "graph");
	tft_json_write_begin_array(w);
	/* (an unreadable graph_nodes table, say of another schema, leaves the list short,
	 * as the server then lists no nodes: the page is still made) */
	tft_error_clear(&gerr);
	rc = tft_graph_each(tft_session_path(s), on_graph_row, &g, &gerr);
	tft_json_write_fini(&g.one);
	if (rc == TFT_ENOMEM)
		return rc;
	tft_json_write_end_array(w);
	tft_json_write_key(w, "graph_truncated");
	tft_json_write_uint(w, g.total - g.n);
	return w->status;
}

/*
 * The advisor's default result (GET /api/advise without parameters), for the
 * page's Advisor and Overview: "advise" right after "session", so that the
 * page finds it without walking the event arrays. A session the advisor
 * cannot read leaves the key out (the page says so); only ENOMEM fails.
 */
static int write_advise(struct tft_session *s, struct tft_json_writer *w)
{
	struct tft_advise_result *r = NULL;
	struct tft_error aerr;
	int rc;

	tft_error_clear(&aerr);
	rc = tft_advise_run(s, NULL, &r, &aerr);
	if (rc == TFT_ENOMEM)
		return rc;
	if (rc)
		return 0;
	tft_json_write_key(w, "advise");
	tft_advise_write_json(r, w);
	tft_advise_destroy(r);
	return 0;
}

/*
 * tftracer prof's four views with the Analysis page's default options
 * (GET /api/prof?view=V&select=...&order_by=micros, averaged over the steps),
 * for that page: "prof": {"scope": DOC, "op": DOC, "graph": DOC, "code": DOC}.
 * A session prof cannot read leaves the key out; only ENOMEM fails.
 */
#define HTML_PROF_SELECT "micros,accelerator_micros,cpu_micros,params,float_ops,occurrence"

static int write_prof(struct tft_session *s, struct tft_json_writer *w)
{
	struct tft_prof_opts opts;
	struct tft_error perr;
	struct tft_prof *p;
	int rc = 0;

	tft_error_clear(&perr);
	p = tft_prof_open(s, -1, 0, &perr);
	if (!p)
		return perr.code == TFT_ENOMEM ? TFT_ENOMEM : 0;
	tft_prof_opts_init(&opts);
	if (tft_prof_opts_set(&opts, "select", HTML_PROF_SELECT, &perr) ||
	    tft_prof_opts_set(&opts, "order_by", "micros", &perr)) {
		rc = perr.code == TFT_ENOMEM ? TFT_ENOMEM : 0;
		goto out;
	}
	tft_json_write_key(w, "prof");
	tft_json_write_begin_object(w);
	for (int v = TFT_PROF_SCOPE; v <= TFT_PROF_CODE; v++) {
		struct tft_prof_result *r = NULL;
		if (tft_prof_view(p, v, &opts, &r, &perr)) {
			if (perr.code == TFT_ENOMEM) {
				rc = TFT_ENOMEM;
				break;
			}
			continue;
		}
		tft_json_write_key(w, tft_prof_view_name(v));
		tft_export_prof_json(r, w);
		tft_prof_result_free(r);
	}
	tft_json_write_end_object(w);
out:
	tft_prof_opts_fini(&opts);
	tft_prof_close(p);
	return rc;
}

static int write_data(struct tft_session *s, struct tft_json_writer *out,
		      const struct tft_html_opts *o, struct tft_html_counts *n, struct tft_error *err)
{
	struct tft_session_summary sum;
	struct tft_json_writer w;
	struct html_ctx c;
	struct flow_ctx fc;
	uint32_t ntracks = tft_session_track_count(s), nstr;
	int rc = 0;

	memset(&c, 0, sizeof(c));
	c.s = s;
	c.err = err;
	c.budget = o->max_events ? o->max_events : TFT_HTML_MAX_EVENTS;
	c.strs = tft_strtab_create();
	if (!c.strs)
		return tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
	tft_session_get_summary(s, &sum);
	c.origin = sum.start_ns;
	if (tft_json_write_init_sink(&w, data_sink, out)) {
		tft_strtab_destroy(c.strs);
		return tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
	}
	tft_json_write_init_mem(&c.t.args);
	tft_json_write_init_mem(&c.one);
	tft_json_write_begin_object(&w);
	tft_json_write_key(&w, "tft_static");
	tft_json_write_int(&w, 1);
	tft_json_write_key(&w, "session");
	tft_export_session_write(s, &w);
	rc = write_advise(s, &w);
	if (!rc)
		rc = write_prof(s, &w);
	tft_json_write_key(&w, "tracks");
	tft_json_write_begin_array(&w);
	for (uint32_t id = 0; id < ntracks && !rc; id++)
		rc = write_track(&c, &w, id);
	tft_json_write_end_array(&w);
	if (!rc) {
		fc.c = &c;
		fc.w = &w;
		tft_json_write_key(&w, "flows");
		tft_json_write_begin_array(&w);
		rc = tft_session_flows(s, on_flow, &fc, err);
		tft_json_write_end_array(&w);
	}
	if (!rc)
		rc = write_graph(s, &w);
	if (!rc) {
		/* The string table last: it is complete only now (object order is free). */
		nstr = tft_strtab_count(c.strs);
		tft_json_write_key(&w, "strings");
		tft_json_write_begin_array(&w);
		for (uint32_t i = 0; i < nstr; i++) {
			size_t len;
			const char *p = tft_strtab_get(c.strs, i, &len);
			tft_json_write_str(&w, p ? p : "", p ? len : 0);
		}
		tft_json_write_end_array(&w);
		tft_json_write_key(&w, "truncated");
		tft_json_write_uint(&w, c.truncated);
		tft_json_write_end_object(&w);
		rc = tft_json_write_flush(&w);
		if (!rc && (w.status || out->status))
			rc = w.status ? w.status : out->status;
		if (rc)
			tft_error_set(err, rc, -1, "cannot write the page: %s", tft_strerror(rc));
	} else if (rc > 0) {
		rc = TFT_EIO;
	}
	if (rc == TFT_ENOMEM)
		tft_error_set(err, rc, -1, "out of memory");
	if (n) {
		n->events = c.events;
		n->truncated = c.truncated;
	}
	tbuf_free(&c.t);
	tft_json_write_fini(&c.one);
	tft_json_write_fini(&w);
	tft_strtab_destroy(c.strs);
	tft_json_memo_free(&c.json_ok);
	return rc;
}

/* ---- the page ------------------------------------------------------------- */

static int cmp_assets(const void *a, const void *b)
{
	const struct tft_html_asset *x = *(const struct tft_html_asset *const *)a;
	const struct tft_html_asset *y = *(const struct tft_html_asset *const *)b;

	return strcmp(x->name, y->name);
}

static bool is_module(const char *name)
{
	size_t n = strlen(name);

	return n > 3 && strcmp(name + n - 3, ".js") == 0 && !strchr(name, '/') &&
	       strcmp(name, "static-boot.js") != 0 && strcmp(name, "tileworker.js") != 0;
}

int tft_export_html(struct tft_session *s, struct tft_json_writer *w,
		    const struct tft_html_opts *o, struct tft_html_counts *n, struct tft_error *err)
{
	const struct tft_html_asset *index, *css, *boot, *wasm;
	const struct tft_html_asset **mods = NULL;
	size_t nmods = 0, b0, b1, e0, e1, head_end;
	int rc;

	if (n)
		memset(n, 0, sizeof(*n));
	if (!o)
		return tft_error_set(err, TFT_EINVAL, -1, "no web UI assets");
	index = find_asset(o, "index.html");
	css = find_asset(o, "style.css");
	boot = find_asset(o, "static-boot.js");
	wasm = find_asset(o, "tftracer.wasm");
	if (!index || !css || !boot || !wasm)
		return tft_error_set(err, TFT_EINVAL, -1,
				     "the embedded web UI lacks index.html, style.css, static-boot.js or tftracer.wasm");
	if (!find_line(index->data, index->len, 0, mark_begin, &b0, &b1) ||
	    !find_line(index->data, index->len, b1, mark_end, &e0, &e1))
		return tft_error_set(err, TFT_EFORMAT, -1,
				     "index.html has no <!--tft:assets--> ... <!--/tft:assets--> block");
	if ((rc = check_file(css, err)) || (rc = check_file(boot, err)))
		return rc;
	mods = calloc(o->nassets ? o->nassets : 1, sizeof(*mods));
	if (!mods)
		return tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
	for (size_t i = 0; i < o->nassets; i++)
		if (is_module(o->assets[i].name)) {
			if ((rc = check_file(&o->assets[i], err))) {
				free(mods);
				return rc;
			}
			mods[nmods++] = &o->assets[i];
		}
	qsort(mods, nmods, sizeof(*mods), cmp_assets);

	/*
	 * The page's policy first thing in its <head> (before any script): what
	 * the served page gets in a header. The page's data is inert JSON, but
	 * should a name ever break out of it, nothing it injects could run.
	 */
	head_end = 0;
	if (boot->csp) {
		static const char charset[] = "<meta charset=\"utf-8\">";
		const char *h = memmem(index->data, b0, "<head>", 6);
		const char *c = memmem(index->data, b0, charset, sizeof(charset) - 1);

		if (!h || strpbrk(boot->csp, "\"<>&")) {
			free(mods);
			return tft_error_set(err, TFT_EFORMAT, -1,
					     "index.html has no <head>, or the page policy is not attribute text");
		}
		/* after the charset declaration (it must come early), else right after <head> */
		head_end = c && c > h ? (size_t)(c - (const char *)index->data) + sizeof(charset) - 1
				      : (size_t)(h - (const char *)index->data) + 6;
		raw(w, index->data, head_end);
		raw_cstr(w, "\n<meta http-equiv=\"Content-Security-Policy\" content=\"");
		raw_cstr(w, boot->csp);
		raw_cstr(w, "\">");
	}
	raw(w, index->data + head_end, b0 - head_end);
	raw_cstr(w, "<style>\n");
	raw(w, css->data, css->len);
	raw_cstr(w, "</style>\n<script type=\"application/json\" id=\"tft-data\">");
	rc = write_data(s, w, o, n, err);
	if (rc) {
		free(mods);
		return rc;
	}
	raw_cstr(w, "</script>\n");
	/* the query engine (src/wasm/): the page answers its queries with the server's code */
	raw_cstr(w, "<script type=\"application/octet-stream\" id=\"tft-wasm\">\n");
	raw_base64(w, wasm->data, wasm->len);
	raw_cstr(w, "</script>\n");
	for (size_t i = 0; i < nmods; i++) {
		raw_cstr(w, "<script type=\"text/plain\" data-tft-module=\"");
		raw_cstr(w, mods[i]->name);
		raw_cstr(w, "\">");
		raw(w, mods[i]->data, mods[i]->len);
		raw_cstr(w, "</script>\n");
	}
	raw_cstr(w, "<script>");
	raw(w, boot->data, boot->len);
	raw_cstr(w, "</script>\n");
	raw(w, index->data + e1, index->len - e1);
	free(mods);
	if (w->status)
		return tft_error_set(err, w->status, -1, "cannot write the page: %s",
				     tft_strerror(w->status));
	return 0;
}
