/* SPDX-License-Identifier: MIT */
/*
 * export/html_data.c: a static HTML export's DATA read back as a session
 * holds what the session file it was exported from holds (level 0). Real
 * traces from shared/data are imported, exported with the embedded web UI
 * (tft_export_html_page), DATA found in the page and opened; then the two
 * sessions are compared: processes, tracks, steps, summary; every event of
 * every track in several windows (times, kinds, depths, names, categories,
 * flags, values, every arg); the flows; statistics by name (the file's
 * computed exactly, by a scan, as DATA's must be). And DATA that is damaged
 * is refused with its byte offset, never read past.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/stats.h"
#include "codec/json_read.h"
#include "codec/json_write.h"
#include "collect/ingest.h"
#include "export/export_html.h"
#include "export/export_summary.h"
#include "export/html_data.h"
#include "store/graph.h"
#include "importfix.h"
#include "tap.h"

static char dir[] = "/tmp/tft-htmld-XXXXXX";

/* ctx: the paths to import into one session, NULL-terminated. */
static int ingest(struct tft_writer *w, void *ctx, struct tft_error *err)
{
	int rc = 0;

	for (char **p = ctx; *p && !rc; p++)
		rc = tft_ingest_file(w, *p, NULL, err);
	return rc;
}

static bool same_str(struct tft_session *a, uint32_t ia, struct tft_session *b, uint32_t ib)
{
	size_t la, lb;
	const char *pa = tft_session_str(a, ia, &la), *pb = tft_session_str(b, ib, &lb);

	return la == lb && memcmp(pa, pb, la) == 0;
}

/* ---- events ------------------------------------------------------------------------------ */

struct evlist {
	struct tft_session *s;
	struct tft_event *ev;
	struct tft_arg *args; /* copies; ev[i].args indexes into it after collection */
	size_t n, cap, nargs, cap_args;
	size_t *arg0;
};

static int collect(void *ctx, const struct tft_event *e)
{
	struct evlist *l = ctx;

	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 256;
		l->ev = realloc(l->ev, l->cap * sizeof(*l->ev));
		l->arg0 = realloc(l->arg0, l->cap * sizeof(*l->arg0));
	}
	if (l->nargs + e->nargs > l->cap_args) {
		l->cap_args = (l->nargs + e->nargs) * 2 + 64;
		l->args = realloc(l->args, l->cap_args * sizeof(*l->args));
	}
	l->arg0[l->n] = l->nargs;
	if (e->nargs)
		memcpy(l->args + l->nargs, e->args, e->nargs * sizeof(*e->args));
	l->nargs += e->nargs;
	l->ev[l->n++] = *e;
	return 0;
}

static void evlist_free(struct evlist *l)
{
	free(l->ev);
	free(l->args);
	free(l->arg0);
	memset(l, 0, sizeof(*l));
}

/* One arg of each: the same key and the same value (as the page and the server show it). */
static bool same_arg(struct tft_session *fs, const struct tft_arg *a, struct tft_session *ds,
		     const struct tft_arg *b, char *why, size_t wn)
{
	size_t la, lb;
	const char *pa, *pb;

	if (!same_str(fs, a->key, ds, b->key)) {
		snprintf(why, wn, "arg key %s vs %s", tft_session_str(fs, a->key, NULL),
			 tft_session_str(ds, b->key, NULL));
		return false;
	}
	switch (a->type) {
	case TFT_ARG_NULL: return b->type == TFT_ARG_NULL;
	case TFT_ARG_BOOL: return b->type == TFT_ARG_BOOL && a->v.i == b->v.i;
	case TFT_ARG_INT: return b->type == TFT_ARG_INT && a->v.i == b->v.i;
	case TFT_ARG_DOUBLE:
		/* the exporter writes a double as JSON (non-finite: null; integral: maybe no '.') */
		if (!isfinite(a->v.d))
			return b->type == TFT_ARG_NULL;
		if (b->type == TFT_ARG_INT)
			return (double)b->v.i == a->v.d;
		return b->type == TFT_ARG_DOUBLE && a->v.d == b->v.d;
	case TFT_ARG_STR:
		return b->type == TFT_ARG_STR && same_str(fs, a->v.str, ds, b->v.str);
	case TFT_ARG_JSON:
		pa = tft_session_str(fs, a->v.str, &la);
		pb = tft_session_str(ds, b->v.str, &lb);
		if (!la)
			return b->type == TFT_ARG_NULL;
		/* valid JSON text is inlined as a value, anything else as a string */
		return (b->type == TFT_ARG_JSON || b->type == TFT_ARG_STR) && la == lb && !memcmp(pa, pb, la);
	}
	snprintf(why, wn, "arg type %u", a->type);
	return false;
}

static bool same_events(struct tft_session *fs, struct tft_session *ds, uint32_t track, int64_t t0,
			int64_t t1, char *why, size_t wn)
{
	struct evlist a = { .s = fs }, b = { .s = ds };
	struct tft_error err;
	bool good = true;

	tft_error_clear(&err);
	if (tft_session_scan(fs, track, t0, t1, 0, collect, &a, &err) ||
	    tft_session_scan(ds, track, t0, t1, 0, collect, &b, &err)) {
		snprintf(why, wn, "scan: %s", err.msg);
		good = false;
		goto out;
	}
	if (a.n != b.n) {
		snprintf(why, wn, "track %u [%lld, %lld]: %zu events vs %zu", track, (long long)t0,
			 (long long)t1, a.n, b.n);
		good = false;
		goto out;
	}
	for (size_t i = 0; i < a.n && good; i++) {
		const struct tft_event *x = &a.ev[i], *y = &b.ev[i];
		if (x->ts_ns != y->ts_ns || x->dur_ns != y->dur_ns || x->depth != y->depth ||
		    x->kind != y->kind || x->flags != y->flags || x->count != y->count ||
		    x->track != y->track || x->nargs != y->nargs ||
		    (x->kind == TFT_EV_COUNTER && x->value != y->value && !(isnan(x->value) && isnan(y->value)))) {
			snprintf(why, wn, "track %u event %zu: ts %lld/%lld dur %lld/%lld depth %u/%u kind %u/%u nargs %u/%u",
				 track, i, (long long)x->ts_ns, (long long)y->ts_ns, (long long)x->dur_ns,
				 (long long)y->dur_ns, x->depth, y->depth, x->kind, y->kind, x->nargs, y->nargs);
			good = false;
			break;
		}
		/* a counter sample's name and category are not in DATA (its track names it) */
		if (x->kind != TFT_EV_COUNTER && (!same_str(fs, x->name, ds, y->name) || !same_str(fs, x->cat, ds, y->cat))) {
			snprintf(why, wn, "track %u event %zu: name %s / %s", track, i,
				 tft_session_str(fs, x->name, NULL), tft_session_str(ds, y->name, NULL));
			good = false;
			break;
		}
		for (uint16_t k = 0; k < x->nargs && good; k++)
			if (!same_arg(fs, &a.args[a.arg0[i] + k], ds, &b.args[b.arg0[i] + k], why, wn)) {
				if (!*why)
					snprintf(why, wn, "track %u event %zu: arg %u differs", track, i, k);
				good = false;
			}
	}
out:
	evlist_free(&a);
	evlist_free(&b);
	return good;
}

/* ---- the session lists ----------------------------------------------------------------------- */

static bool same_lists(struct tft_session *fs, struct tft_session *ds, char *why, size_t wn)
{
	struct tft_session_summary a, b;

	if (tft_session_process_count(fs) != tft_session_process_count(ds) ||
	    tft_session_track_count(fs) != tft_session_track_count(ds) ||
	    tft_session_step_count(fs) != tft_session_step_count(ds)) {
		snprintf(why, wn, "counts: processes %u/%u tracks %u/%u steps %u/%u",
			 tft_session_process_count(fs), tft_session_process_count(ds),
			 tft_session_track_count(fs), tft_session_track_count(ds),
			 tft_session_step_count(fs), tft_session_step_count(ds));
		return false;
	}
	for (uint32_t i = 0; i < tft_session_process_count(fs); i++) {
		const struct tft_process *x = tft_session_process(fs, i), *y = tft_session_process(ds, i);
		if (x->id != y->id || x->pid != y->pid || x->rank != y->rank || x->sort_index != y->sort_index ||
		    !same_str(fs, x->name, ds, y->name) || !same_str(fs, x->host, ds, y->host) ||
		    !same_str(fs, x->labels, ds, y->labels)) {
			snprintf(why, wn, "process %u", i);
			return false;
		}
	}
	for (uint32_t i = 0; i < tft_session_track_count(fs); i++) {
		const struct tft_track *x = tft_session_track(fs, i), *y = tft_session_track(ds, i);
		if (x->id != y->id || x->process != y->process || x->kind != y->kind || x->tid != y->tid ||
		    x->sort_index != y->sort_index || x->flags != y->flags || x->slices != y->slices ||
		    x->instants != y->instants || x->counters != y->counters || x->max_depth != y->max_depth ||
		    x->min_ts_ns != y->min_ts_ns || x->max_ts_ns != y->max_ts_ns ||
		    !same_str(fs, x->name, ds, y->name)) {
			snprintf(why, wn, "track %u", i);
			return false;
		}
	}
	for (uint32_t i = 0; i < tft_session_step_count(fs); i++) {
		const struct tft_step *x = tft_session_step(fs, i), *y = tft_session_step(ds, i);
		if (x->index != y->index || x->process != y->process || x->start_ns != y->start_ns ||
		    x->dur_ns != y->dur_ns || x->traced != y->traced || !same_str(fs, x->name, ds, y->name)) {
			snprintf(why, wn, "step %u", i);
			return false;
		}
	}
	tft_session_get_summary(fs, &a);
	tft_session_get_summary(ds, &b);
	if (strcmp(a.format, b.format) || strcmp(a.producer, b.producer) || a.processes != b.processes ||
	    a.tracks != b.tracks || a.slices != b.slices || a.instants != b.instants ||
	    a.counters != b.counters || a.flows != b.flows || a.steps != b.steps ||
	    a.start_ns != b.start_ns || a.end_ns != b.end_ns || a.dropped != b.dropped ||
	    a.unmatched_flows != b.unmatched_flows || a.unclosed_slices != b.unclosed_slices) {
		snprintf(why, wn, "summary");
		return false;
	}
	return true;
}

/* ---- flows --------------------------------------------------------------------------------- */

struct flist {
	struct tft_flow *f;
	size_t n, cap;
};

static int collect_flow(void *ctx, const struct tft_flow *f)
{
	struct flist *l = ctx;

	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 64;
		l->f = realloc(l->f, l->cap * sizeof(*l->f));
	}
	l->f[l->n++] = *f;
	return 0;
}

static bool same_flows(struct tft_session *fs, struct tft_session *ds, size_t *n, char *why, size_t wn)
{
	struct flist a = { 0 }, b = { 0 };
	struct tft_error err;
	bool good = true;

	tft_error_clear(&err);
	if (tft_session_flows(fs, collect_flow, &a, &err) || tft_session_flows(ds, collect_flow, &b, &err)) {
		snprintf(why, wn, "flows: %s", err.msg);
		good = false;
	} else if (a.n != b.n) {
		snprintf(why, wn, "%zu flows vs %zu", a.n, b.n);
		good = false;
	}
	for (size_t i = 0; good && i < a.n; i++) {
		const struct tft_flow *x = &a.f[i], *y = &b.f[i];
		if (x->flow_id != y->flow_id || x->src_track != y->src_track || x->dst_track != y->dst_track ||
		    (x->src_track != TFT_NONE && x->src_ts_ns != y->src_ts_ns) ||
		    (x->dst_track != TFT_NONE && x->dst_ts_ns != y->dst_ts_ns) || x->flags != y->flags ||
		    !same_str(fs, x->name, ds, y->name) || !same_str(fs, x->cat, ds, y->cat)) {
			snprintf(why, wn, "flow %zu", i);
			good = false;
		}
	}
	*n = a.n;
	free(a.f);
	free(b.f);
	return good;
}

/* ---- statistics ------------------------------------------------------------------------------ */

static bool same_stats(struct tft_session *fs, struct tft_session *ds, char *why, size_t wn)
{
	struct tft_stats_opts o = { .group_by = TFT_STATS_BY_NAME, .track = TFT_NONE, .exact = true };
	struct tft_stats_result *a = NULL, *b = NULL;
	struct tft_error err;
	bool good = true;

	tft_error_clear(&err);
	if (tft_stats_compute(fs, &o, &a, &err) || tft_stats_compute(ds, &o, &b, &err)) {
		snprintf(why, wn, "stats: %s", err.msg);
		good = false;
		goto out;
	}
	if (a->nrows != b->nrows || a->slices != b->slices || a->total_ns != b->total_ns) {
		snprintf(why, wn, "stats: %zu rows vs %zu, %llu slices vs %llu", a->nrows, b->nrows,
			 (unsigned long long)a->slices, (unsigned long long)b->slices);
		good = false;
		goto out;
	}
	for (size_t i = 0; i < a->nrows && good; i++) {
		const struct tft_stats_row *x = &a->rows[i], *y = &b->rows[i];
		if (x->name_len != y->name_len || memcmp(x->name, y->name, x->name_len) || x->count != y->count ||
		    x->total_ns != y->total_ns || x->self_ns != y->self_ns || x->min_ns != y->min_ns ||
		    x->max_ns != y->max_ns || x->p50_ns != y->p50_ns || x->p99_ns != y->p99_ns) {
			snprintf(why, wn, "stats row %zu (%.*s)", i, (int)x->name_len, x->name);
			good = false;
		}
	}
out:
	tft_stats_destroy(a);
	tft_stats_destroy(b);
	return good;
}

/* ---- graph nodes ------------------------------------------------------------------------------ */

struct grows {
	struct tft_json_writer w;
	int n;
};

static int on_row(void *ctx, const struct tft_graph_node *n, int64_t graph_id)
{
	struct grows *g = ctx;

	tft_export_graph_node(&g->w, n, graph_id);
	g->n++;
	return 0;
}

struct names {
	char **v;
	size_t n;
};

static int on_name(void *ctx, const struct tft_graph_node *n, int64_t graph_id)
{
	struct names *l = ctx;

	l->v = realloc(l->v, (l->n + 1) * sizeof(*l->v));
	l->v[l->n++] = strndup(n->name.p ? n->name.p : "", n->name.len);
	return 0;
}

/* Every node name of the file looked up in both: the same rows, serialised as the server does. */
static bool same_graph(struct tft_session *fs, struct tft_session *ds, size_t *nrows, char *why, size_t wn)
{
	struct names l = { 0 };
	struct tft_error err;
	bool good = true;
	const char *mf = tft_session_meta(fs, "graph_nodes"), *md = tft_session_meta(ds, "graph_nodes");

	*nrows = 0;
	if ((mf == NULL) != (md == NULL) || (mf && strcmp(mf, md))) {
		snprintf(why, wn, "meta graph_nodes %s / %s", mf ? mf : "(none)", md ? md : "(none)");
		return false;
	}
	tft_error_clear(&err);
	tft_graph_each(tft_session_path(fs), on_name, &l, &err);
	for (size_t i = 0; i < l.n; i++) {
		struct grows a = { .n = 0 }, b = { .n = 0 };
		size_t la = 0, lb = 0;
		const char *pa, *pb;
		tft_json_write_init_mem(&a.w);
		tft_json_write_init_mem(&b.w);
		tft_json_write_begin_array(&a.w);
		tft_json_write_begin_array(&b.w);
		tft_session_graph_lookup(fs, l.v[i], on_row, &a, &err);
		tft_session_graph_lookup(ds, l.v[i], on_row, &b, &err);
		tft_json_write_end_array(&a.w);
		tft_json_write_end_array(&b.w);
		pa = tft_json_write_data(&a.w, &la);
		pb = tft_json_write_data(&b.w, &lb);
		if (good && (a.n != b.n || la != lb || memcmp(pa, pb, la))) {
			snprintf(why, wn, "graph rows of %s: %d vs %d", l.v[i], a.n, b.n);
			good = false;
		}
		*nrows += (size_t)a.n;
		tft_json_write_fini(&a.w);
		tft_json_write_fini(&b.w);
		free(l.v[i]);
	}
	free(l.v);
	return good;
}

/* ---- one trace ------------------------------------------------------------------------------- */

/* The page of s, and DATA in it as a padded, NUL-terminated copy. */
static char *export_data(struct tft_session *s, size_t *len)
{
	struct tft_json_writer w;
	struct tft_error err;
	size_t plen, off, dlen;
	const char *page;
	char *data = NULL;

	tft_error_clear(&err);
	tft_json_write_init_mem(&w);
	if (tft_export_html_page(s, &w, 0, NULL, &err)) {
		printf("# export: %s\n", err.msg);
		goto out;
	}
	page = tft_json_write_data(&w, &plen);
	if (tft_html_data_find(page, plen, &off, &dlen, &err)) {
		printf("# find: %s\n", err.msg);
		goto out;
	}
	data = malloc(dlen + TFT_JSON_PAD + 1);
	memcpy(data, page + off, dlen);
	memset(data + dlen, 0, TFT_JSON_PAD + 1);
	*len = dlen;
out:
	tft_json_write_fini(&w);
	return data;
}

static void check_trace(const char *rel, const char *rel2)
{
	char path[1024], path2[1024], why[512] = "", *paths[3] = { path, rel2 ? path2 : NULL, NULL };
	const char *root = getenv("TFT_DATA");
	struct tft_session *fs, *ds = NULL;
	struct tft_error err;
	size_t len = 0, nflows = 0;
	char *data = NULL;
	int rc, windows = 0;
	bool good = true;

	snprintf(path, sizeof(path), "%s/%s", root ? root : "../shared/data", rel);
	if (rel2)
		snprintf(path2, sizeof(path2), "%s/%s", root ? root : "../shared/data", rel2);
	fs = tft_test_import(dir, ingest, paths, &rc, &err);
	if (!fs) {
		ok(0, "%s: import: %s", rel, err.msg);
		return;
	}
	data = export_data(fs, &len);
	if (data) {
		tft_error_clear(&err);
		ds = tft_html_data_open(data, len, "page.html", &err);
		if (!ds)
			printf("# open: %s (at %lld)\n", err.msg, (long long)err.offset);
	}
	ok(ds != NULL, "%s: DATA opens as a session (%zu bytes)", rel, len);
	if (!ds)
		goto out;
	good = same_lists(fs, ds, why, sizeof(why));
	ok(good, "%s: processes, tracks, steps and summary as the file's %s", rel, why);
	for (uint32_t t = 0; t < tft_session_track_count(fs) && good; t++) {
		const struct tft_track *tr = tft_session_track(fs, t);
		int64_t lo = tr->min_ts_ns, hi = tr->max_ts_ns;
		__int128 span = (__int128)hi - lo; /* (a track's times may span the whole range) */
		int64_t win[][2] = { { INT64_MIN, INT64_MAX }, { lo, (int64_t)(lo + span / 3) },
				     { (int64_t)(lo + span / 2), (int64_t)(lo + span / 2) },
				     { (int64_t)(lo + span / 4), (int64_t)(hi - span / 4) }, { hi, hi } };
		if (lo > hi)
			continue;
		for (size_t k = 0; k < sizeof(win) / sizeof(win[0]) && good; k++, windows++)
			good = same_events(fs, ds, t, win[k][0], win[k][1], why, sizeof(why));
	}
	ok(good, "%s: every event of every track in %d windows, as the file's %s", rel, windows, why);
	good = same_flows(fs, ds, &nflows, why, sizeof(why));
	ok(good, "%s: the %zu flows as the file's %s", rel, nflows, why);
	good = same_stats(fs, ds, why, sizeof(why));
	ok(good, "%s: statistics by name as the file's (scanned) %s", rel, why);
	{
		size_t nrows = 0;
		good = same_graph(fs, ds, &nrows, why, sizeof(why));
		ok(good, "%s: the %zu graph rows a slice can join, looked up by every name, as the file's %s", rel,
		   nrows, why);
	}
out:
	tft_session_close(ds);
	tft_session_close(fs);
	free(data);
}

/* ---- damaged DATA ------------------------------------------------------------------------------ */

static struct tft_session *open_text(const char *text, struct tft_error *err)
{
	size_t len = strlen(text);
	char *buf = malloc(len + TFT_JSON_PAD + 1);
	struct tft_session *s;

	memcpy(buf, text, len);
	memset(buf + len, 0, TFT_JSON_PAD + 1);
	tft_error_clear(err);
	s = tft_html_data_open(buf, len, "bad.html", err);
	free(buf);
	return s;
}

static void check_refusals(void)
{
	static const char head[] = "{\"tft_static\":1,\"session\":{\"process_list\":[{\"id\":0,\"name\":\"p\"}],"
				   "\"track_list\":[{\"id\":0,\"process\":0,\"kind\":\"thread\",\"name\":\"t\"}]},"
				   "\"strings\":[\"\",\"a\"],\"tracks\":[";
	static const struct {
		const char *tail, *want;
	} cases[] = {
		{ "{\"id\":0,\"ts\":[0,1],\"dur\":[5]}]}", "differ in length" },
		{ "{\"id\":0,\"ts\":[0],\"dur\":[5],\"depth\":[0],\"name\":[7]}]}", "not an index of" },
		{ "{\"id\":3,\"ts\":[0]}]}", "not in track_list" },
		{ "{\"id\":0,\"ts\":[5,1],\"dur\":[0,0],\"depth\":[0,0],\"name\":[1,1]}]}", "time order" },
		{ "{\"id\":0,\"ts\":[0],\"dur\":[1],\"depth\":[0],\"name\":[1],\"args\":[\"{\\\"x\\\":\"]}]}", "args text" },
		{ "{\"id\":0,\"ts\":[0],\"dur\":[1],\"depth\":[0],\"name\":[1]", "end of input" },
	};
	struct tft_error err;
	char doc[1024];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tft_session *s;
		snprintf(doc, sizeof(doc), "%s%s", head, cases[i].tail);
		s = open_text(doc, &err);
		ok(!s && err.code == TFT_EFORMAT && strstr(err.msg, cases[i].want) && err.offset >= 0 &&
			   (size_t)err.offset <= strlen(doc) && strcmp(err.file, "bad.html") == 0,
		   "damaged DATA %zu refused: \"%s\" at byte %lld", i, err.msg, (long long)err.offset);
		tft_session_close(s);
	}
	snprintf(doc, sizeof(doc), "%s{\"id\":0,\"ts\":[0,10],\"dur\":[20,3],\"depth\":[0,1],\"name\":[1,1],"
		 "\"args\":[{\"b\":true,\"d\":1.5,\"s\":\"x\",\"j\":[1, 2],\"n\":null,\"i\":-7},"
		 "\"{\\\"big\\\":18446744073709551615}\"]}]}", head);
	{
		static const uint32_t want[] = { TFT_ARG_BOOL, TFT_ARG_DOUBLE, TFT_ARG_STR, TFT_ARG_JSON,
						 TFT_ARG_NULL, TFT_ARG_INT, TFT_ARG_JSON };
		struct tft_session *s = open_text(doc, &err);
		struct evlist l = { 0 };
		bool types = true;
		size_t jl = 0;
		if (s)
			tft_session_scan(s, 0, 12, 12, 0, collect, &l, &err);
		for (size_t i = 0; i < 7 && l.nargs == 7; i++)
			types &= l.args[i].type == want[i];
		if (s && l.nargs == 7)
			tft_session_str(s, l.args[6].v.str, &jl);
		ok(s && l.n == 2 && l.ev[0].nargs == 6 && l.ev[1].nargs == 1 && types && l.args[0].v.i == 1 &&
			   l.args[1].v.d == 1.5 && l.args[5].v.i == -7 && jl == 20,
		   "args of every type, and an args object given as its text (an integer beyond int64 kept as "
		   "its digits); the window [12, 12] finds the enclosing slice too");
		evlist_free(&l);
		tft_session_close(s);
	}
}

int main(void)
{
	static const char *const traces[] = {
		"kineto/tb_plugin_samples/resnet50_num_workers_0/worker0.pt.trace.json.gz",
		"tf-profiler-demo/GPU-multi-worker/34.83.195.179_6003.xplane.pb",
		"ikhlestov-tf-profiling/GPU/timeline_03_merged_5_runs.json",
		"catapult/multiple_input_latency.json",
		"hta/nccl_parser_config/nccl_data.json.gz",
	};

	if (!mkdtemp(dir))
		return 1;
	for (size_t i = 0; i < sizeof(traces) / sizeof(traces[0]); i++)
		check_trace(traces[i], NULL);
	/* a session with graph nodes: a tf.timeline and the GraphDef its ops come from */
	check_trace("ikhlestov-tf-profiling/GPU/timeline_01.json", "tensorboard/graphdef/graphdef_mnist.pbtxt");
	check_refusals();
	{
		char cmd[64];
		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd) != 0)
			printf("# could not remove %s\n", dir);
	}
	return done_testing();
}
