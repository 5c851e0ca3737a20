/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for export/export_chrome: a session with every kind of track,
 * event, arg type, flow and step is exported to memory, parsed back with a
 * small strict JSON parser (below) and checked event by event; then the
 * output is imported again (tft_ingest_mem) and compared with the original:
 * counts and per-track (name, ts, dur) multisets.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codec/json_write.h"
#include "collect/ingest.h"
#include "export/export_chrome.h"
#include "store/session.h"
#include "store/writer.h"
#include "tap.h"

/* ---- a minimal strict JSON parser (test only) ---------------------------- */

enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

struct jv {
	int type;
	char *s;          /* J_STR decoded, J_NUM text (owned) */
	size_t slen;
	int b;
	struct jv *items; /* J_ARR / J_OBJ values (owned) */
	char **keys;      /* J_OBJ keys (owned) */
	size_t n;
};

struct jp {
	const char *p, *end;
	int bad;
};

static void jws(struct jp *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\n' || *j->p == '\r' || *j->p == '\t'))
		j->p++;
}

static void put_utf8(char **o, unsigned cp)
{
	char *q = *o;
	if (cp < 0x80) {
		*q++ = (char)cp;
	} else if (cp < 0x800) {
		*q++ = (char)(0xC0 | cp >> 6);
		*q++ = (char)(0x80 | (cp & 63));
	} else if (cp < 0x10000) {
		*q++ = (char)(0xE0 | cp >> 12);
		*q++ = (char)(0x80 | (cp >> 6 & 63));
		*q++ = (char)(0x80 | (cp & 63));
	} else {
		*q++ = (char)(0xF0 | cp >> 18);
		*q++ = (char)(0x80 | (cp >> 12 & 63));
		*q++ = (char)(0x80 | (cp >> 6 & 63));
		*q++ = (char)(0x80 | (cp & 63));
	}
	*o = q;
}

static int hex4(const char *p, unsigned *v)
{
	*v = 0;
	for (int i = 0; i < 4; i++) {
		char c = p[i];
		*v <<= 4;
		if (c >= '0' && c <= '9')
			*v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			*v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			*v |= (unsigned)(c - 'A' + 10);
		else
			return -1;
	}
	return 0;
}

static char *jstr(struct jp *j, size_t *len)
{
	char *out, *o;

	if (j->p >= j->end || *j->p != '"') {
		j->bad = 1;
		return NULL;
	}
	j->p++;
	out = o = malloc((size_t)(j->end - j->p) + 1);
	while (j->p < j->end && *j->p != '"') {
		unsigned char c = (unsigned char)*j->p++;
		if (c < 0x20) {
			j->bad = 1; /* raw control characters are not JSON */
			break;
		}
		if (c != '\\') {
			*o++ = (char)c;
			continue;
		}
		if (j->p >= j->end) {
			j->bad = 1;
			break;
		}
		c = (unsigned char)*j->p++;
		switch (c) {
		case '"': *o++ = '"'; break;
		case '\\': *o++ = '\\'; break;
		case '/': *o++ = '/'; break;
		case 'b': *o++ = '\b'; break;
		case 'f': *o++ = '\f'; break;
		case 'n': *o++ = '\n'; break;
		case 'r': *o++ = '\r'; break;
		case 't': *o++ = '\t'; break;
		case 'u': {
			unsigned cp, lo;
			if (j->end - j->p < 4 || hex4(j->p, &cp)) {
				j->bad = 1;
				break;
			}
			j->p += 4;
			if (cp >= 0xD800 && cp < 0xDC00 && j->end - j->p >= 6 && j->p[0] == '\\' &&
			    j->p[1] == 'u' && !hex4(j->p + 2, &lo) && lo >= 0xDC00 && lo < 0xE000) {
				cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
				j->p += 6;
			}
			put_utf8(&o, cp);
			break;
		}
		default: j->bad = 1;
		}
	}
	if (j->p >= j->end)
		j->bad = 1;
	else
		j->p++;
	*o = '\0';
	*len = (size_t)(o - out);
	return out;
}

static void jval(struct jp *j, struct jv *v, int depth);

static void jpush(struct jv *v, struct jv *item, char *key)
{
	v->items = realloc(v->items, (v->n + 1) * sizeof(*v->items));
	v->items[v->n] = *item;
	if (v->type == J_OBJ) {
		v->keys = realloc(v->keys, (v->n + 1) * sizeof(*v->keys));
		v->keys[v->n] = key;
	}
	v->n++;
}

static void jval(struct jp *j, struct jv *v, int depth)
{
	memset(v, 0, sizeof(*v));
	jws(j);
	if (j->p >= j->end || depth > 64) {
		j->bad = 1;
		return;
	}
	char c = *j->p;
	if (c == '{' || c == '[') {
		v->type = c == '{' ? J_OBJ : J_ARR;
		j->p++;
		jws(j);
		if (j->p < j->end && *j->p == (c == '{' ? '}' : ']')) {
			j->p++;
			return;
		}
		while (!j->bad) {
			struct jv item;
			char *key = NULL;
			size_t kl;
			jws(j);
			if (v->type == J_OBJ) {
				key = jstr(j, &kl);
				jws(j);
				if (j->p >= j->end || *j->p != ':') {
					j->bad = 1;
					free(key);
					return;
				}
				j->p++;
			}
			jval(j, &item, depth + 1);
			jpush(v, &item, key);
			jws(j);
			if (j->p < j->end && *j->p == ',') {
				j->p++;
				continue;
			}
			if (j->p < j->end && *j->p == (c == '{' ? '}' : ']')) {
				j->p++;
				return;
			}
			j->bad = 1;
		}
		return;
	}
	if (c == '"') {
		v->type = J_STR;
		v->s = jstr(j, &v->slen);
		return;
	}
	if (j->end - j->p >= 4 && memcmp(j->p, "null", 4) == 0) {
		v->type = J_NULL;
		j->p += 4;
		return;
	}
	if (j->end - j->p >= 4 && memcmp(j->p, "true", 4) == 0) {
		v->type = J_BOOL;
		v->b = 1;
		j->p += 4;
		return;
	}
	if (j->end - j->p >= 5 && memcmp(j->p, "false", 5) == 0) {
		v->type = J_BOOL;
		j->p += 5;
		return;
	}
	/* number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
	const char *s = j->p;
	if (j->p < j->end && *j->p == '-')
		j->p++;
	if (j->p < j->end && *j->p == '0')
		j->p++;
	else if (j->p < j->end && *j->p >= '1' && *j->p <= '9')
		while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
			j->p++;
	else {
		j->bad = 1;
		return;
	}
	if (j->p < j->end && *j->p == '.') {
		j->p++;
		if (j->p >= j->end || *j->p < '0' || *j->p > '9')
			j->bad = 1;
		while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
			j->p++;
	}
	if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
		j->p++;
		if (j->p < j->end && (*j->p == '+' || *j->p == '-'))
			j->p++;
		if (j->p >= j->end || *j->p < '0' || *j->p > '9')
			j->bad = 1;
		while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
			j->p++;
	}
	v->type = J_NUM;
	v->slen = (size_t)(j->p - s);
	v->s = strndup(s, v->slen);
}

static void jfree(struct jv *v)
{
	for (size_t i = 0; i < v->n; i++) {
		jfree(&v->items[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->items);
	free(v->keys);
	free(v->s);
}

static const struct jv *jget(const struct jv *o, const char *key)
{
	if (!o || o->type != J_OBJ)
		return NULL;
	for (size_t i = 0; i < o->n; i++)
		if (o->keys[i] && strcmp(o->keys[i], key) == 0)
			return &o->items[i];
	return NULL;
}

/* The string or number text of o[key], "" if absent. */
static const char *jtext(const struct jv *o, const char *key)
{
	const struct jv *v = jget(o, key);

	return v && v->s ? v->s : "";
}

/* ---- fixture ------------------------------------------------------------- */

static char path_a[256], path_b[256];

static struct tft_arg arg(struct tft_writer *w, const char *key, int type)
{
	struct tft_arg a = { .key = tft_writer_intern_cstr(w, key), .type = (uint32_t)type };
	return a;
}

static void ev(struct tft_writer *w, uint32_t track, int kind, const char *name, const char *cat,
	       int64_t ts, int64_t dur, unsigned flags, double value, const struct tft_arg *args,
	       uint16_t nargs)
{
	struct tft_event e = {
		.ts_ns = ts,
		.dur_ns = dur,
		.value = value,
		.track = track,
		.name = tft_writer_intern_cstr(w, name),
		.cat = tft_writer_intern_cstr(w, cat),
		.count = 1,
		.kind = (uint8_t)kind,
		.flags = (uint8_t)flags,
		.nargs = nargs,
		.args = args,
	};
	int rc = tft_writer_append(w, &e);
	if (rc)
		printf("# append %s: %d\n", name, rc);
}

static uint32_t mk_track(struct tft_writer *w, uint32_t proc, int kind, const char *name, int64_t tid,
			 int sort)
{
	struct tft_track t = { .process = proc, .kind = (uint32_t)kind, .tid = tid, .sort_index = sort };

	t.name = tft_writer_intern_cstr(w, name);
	return tft_writer_add_track(w, &t);
}

static void flow(struct tft_writer *w, uint64_t id, uint32_t st, int64_t sts, uint32_t dt, int64_t dts,
		 unsigned flags)
{
	struct tft_flow f = {
		.flow_id = id,
		.name = tft_writer_intern_cstr(w, "launch"),
		.cat = tft_writer_intern_cstr(w, "ac2g"),
		.src_track = st,
		.src_ts_ns = sts,
		.dst_track = dt,
		.dst_ts_ns = dts,
		.flags = flags,
	};
	tft_writer_add_flow(w, &f);
}

static int build(const char *path)
{
	struct tft_error err;
	struct tft_writer *w;
	struct tft_process p = { .pid = 100, .rank = 0, .sort_index = 3 };
	uint32_t p0, p1, p2, tmain, tdup, tdev, tmem, tutil, tasync, tobj, tglob, tinst;

	unlink(path);
	tft_error_clear(&err);
	w = tft_writer_open(path, NULL, &err);
	if (!w) {
		printf("# writer: %s\n", err.msg);
		return -1;
	}
	p.name = tft_writer_intern_cstr(w, "trainer");
	p.host = tft_writer_intern_cstr(w, "node1");
	p.labels = tft_writer_intern_cstr(w, "lab");
	p0 = tft_writer_add_process(w, &p);
	p = (struct tft_process){ .pid = 100, .rank = -1 };
	p.name = tft_writer_intern_cstr(w, "dup");
	p.labels = tft_writer_intern_cstr(w, "tab: example.com");
	p1 = tft_writer_add_process(w, &p);
	/* Where the importer puts global and process-scoped instants. */
	p = (struct tft_process){ .pid = 999, .rank = -1 };
	p.name = tft_writer_intern_cstr(w, "Global");
	p2 = tft_writer_add_process(w, &p);
	tglob = mk_track(w, p2, TFT_TRACK_THREAD, "Global", 0, 0);
	tinst = mk_track(w, p0, TFT_TRACK_THREAD, "Instants", 0, 0);
	tmain = mk_track(w, p0, TFT_TRACK_THREAD, "main", 7, 1);
	tdup = mk_track(w, p0, TFT_TRACK_THREAD, "dup tid", 7, 2);
	tdev = mk_track(w, p1, TFT_TRACK_DEVICE, "/device:GPU:0", 0, 0);
	tmem = mk_track(w, p0, TFT_TRACK_COUNTER, "mem.bytes", 0, 0);
	tutil = mk_track(w, p0, TFT_TRACK_COUNTER, "gpu_util", 0, 0);
	tasync = mk_track(w, p0, TFT_TRACK_ASYNC, "requests", 0, 0);
	tobj = mk_track(w, p1, TFT_TRACK_OBJECT, "tensor:0", 0, 0);

	struct tft_arg args[6];
	args[0] = arg(w, "i", TFT_ARG_INT);
	args[0].v.i = -5;
	args[1] = arg(w, "d", TFT_ARG_DOUBLE);
	args[1].v.d = 1.0;
	args[2] = arg(w, "s", TFT_ARG_STR);
	args[2].v.str = tft_writer_intern_cstr(w, "q\"x\n");
	args[3] = arg(w, "b", TFT_ARG_BOOL);
	args[3].v.i = 1;
	args[4] = arg(w, "n", TFT_ARG_NULL);
	args[5] = arg(w, "j", TFT_ARG_JSON);
	args[5].v.str = tft_writer_intern_cstr(w, "[1,2]");

	ev(w, tmain, TFT_EV_SLICE, "matmul", "op", 1500, 2250, 0, 0, args, 6);
	ev(w, tmain, TFT_EV_SLICE, "inner", "op", 2000, 500, 0, 0, NULL, 0);
	ev(w, tglob, TFT_EV_INSTANT, "mark", "", 3000, 0, TFT_EVF_GLOBAL, 0, NULL, 0);
	ev(w, tmain, TFT_EV_SLICE, "ProfilerStep#1", "user_annotation", 10000, 5000, 0, 0, NULL, 0);
	ev(w, tmain, TFT_EV_SLICE, "open", "", 20000, 80000, TFT_EVF_UNCLOSED, 0, NULL, 0);
	ev(w, tdup, TFT_EV_SLICE, "other", "", 0, 1000, 0, 0, NULL, 0);
	ev(w, tinst, TFT_EV_INSTANT, "pmark", "", 500, 0, TFT_EVF_PROCESS, 0, NULL, 0);
	ev(w, tdup, TFT_EV_INSTANT, "tmark", "", 600, 0, 0, 0, NULL, 0);
	/* The last closed event ends at 100000: where the unclosed ones run to. */
	ev(w, tdup, TFT_EV_SLICE, "last", "", 99000, 1000, 0, 0, NULL, 0);
	ev(w, tdev, TFT_EV_SLICE, "kernel", "kernel", 5000, 1000, 0, 0, NULL, 0);
	ev(w, tmem, TFT_EV_COUNTER, "mem", "", 0, 0, 0, 1024, NULL, 0);
	ev(w, tmem, TFT_EV_COUNTER, "mem", "", 1000, 0, 0, 2048.5, NULL, 0);
	ev(w, tutil, TFT_EV_COUNTER, "gpu_util", "", 0, 0, 0, 50, NULL, 0);
	struct tft_arg ax = arg(w, "x", TFT_ARG_INT);
	ax.v.i = 1;
	ev(w, tasync, TFT_EV_SLICE, "req", "net", 100, 900, 0, 0, &ax, 1);
	ev(w, tasync, TFT_EV_SLICE, "req", "net", 200, 100, 0, 0, NULL, 0);
	ev(w, tasync, TFT_EV_SLICE, "req", "net", 300, 99700, TFT_EVF_UNCLOSED, 0, NULL, 0);
	ev(w, tobj, TFT_EV_SLICE, "tensor:0", "Tensor", 0, 5000, 0, 0, NULL, 0);
	ev(w, tobj, TFT_EV_INSTANT, "tensor:0", "Tensor", 100, 0, 0, 0, NULL, 0);

	flow(w, 5, tmain, 1500, tdev, 5000, TFT_FLOWF_BIND_ENCLOSING);
	flow(w, 5, tmain, 2000, tdev, 5500, 0); /* repeated id: renumbered */
	flow(w, 9, tmain, 1600, TFT_NONE, 0, TFT_FLOWF_UNMATCHED);
	flow(w, 10, TFT_NONE, 0, tdev, 5200, TFT_FLOWF_UNMATCHED);
	tft_writer_add_count(w, TFT_COUNT_UNCLOSED_SLICES, 2);
	tft_writer_add_count(w, TFT_COUNT_UNMATCHED_FLOWS, 2);

	struct tft_step st = { .index = 1, .process = p0, .start_ns = 10000, .dur_ns = 5000, .traced = true };
	st.name = tft_writer_intern_cstr(w, "ProfilerStep#1");
	tft_writer_add_step(w, &st);
	st = (struct tft_step){ .index = 2, .process = TFT_NONE, .start_ns = 50000, .dur_ns = 1000 };
	st.name = tft_writer_intern_cstr(w, "step2");
	tft_writer_add_step(w, &st);
	tft_writer_set_meta(w, "format", "test");

	if (tft_writer_close(w, &err) != 0) {
		printf("# close: %s\n", err.msg);
		return -1;
	}
	return 0;
}

/* ---- checks on the exported JSON ------------------------------------------ */

static int count_ph(const struct jv *evs, const char *ph, const char *name)
{
	int n = 0;

	for (size_t i = 0; i < evs->n; i++)
		if (strcmp(jtext(&evs->items[i], "ph"), ph) == 0 &&
		    (!name || strcmp(jtext(&evs->items[i], "name"), name) == 0))
			n++;
	return n;
}

static const struct jv *find_ev(const struct jv *evs, const char *ph, const char *name, size_t nth)
{
	for (size_t i = 0; i < evs->n; i++)
		if (strcmp(jtext(&evs->items[i], "ph"), ph) == 0 &&
		    strcmp(jtext(&evs->items[i], "name"), name) == 0 && nth-- == 0)
			return &evs->items[i];
	return NULL;
}

static const struct jv *find_meta(const struct jv *evs, const char *what, const char *pid,
				  const char *argname)
{
	for (size_t i = 0; i < evs->n; i++) {
		const struct jv *e = &evs->items[i];
		if (strcmp(jtext(e, "ph"), "M") == 0 && strcmp(jtext(e, "name"), what) == 0 &&
		    strcmp(jtext(e, "pid"), pid) == 0 &&
		    (!argname || strcmp(jtext(jget(e, "args"), "name"), argname) == 0))
			return e;
	}
	return NULL;
}

static void check_json(const char *text, size_t len, const struct tft_export_counts *n)
{
	struct jp j = { text, text + len, 0 };
	struct jv root;
	const struct jv *evs, *e, *md;

	jval(&j, &root, 0);
	jws(&j);
	ok(!j.bad && j.p == j.end, "output is one valid JSON document");
	evs = jget(&root, "traceEvents");
	ok(evs && evs->type == J_ARR, "traceEvents array");
	is_str(jtext(&root, "displayTimeUnit"), "ns", "displayTimeUnit ns");
	if (!evs || j.bad)
		goto out;
	is_int(evs->n, n->events, "event count matches the exporter's count");

	/* metadata events */
	is_int(count_ph(evs, "M", NULL), 3 + 2 + 3 + 9 + 9 + 2,
	       "M: 3 names, 2 labels, 3+9 sort indexes, 9 thread names, a Steps process and thread");
	e = find_meta(evs, "process_labels", "1000", NULL);
	is_str(e ? jtext(jget(e, "args"), "labels") : NULL, "tab: example.com",
	       "process_labels without host or rank: as they are");
	ok(find_meta(evs, "process_name", "100", "trainer") != NULL, "trainer keeps pid 100");
	ok(find_meta(evs, "process_name", "1000", "dup") != NULL, "second pid 100 renumbered above the largest (1000)");
	e = find_meta(evs, "process_labels", "100", NULL);
	is_str(jtext(jget(e, "args"), "labels"), "lab, host node1, rank 0",
	       "process_labels: its own, then host and rank (what viewers show of a worker)");
	e = find_meta(evs, "process_sort_index", "100", NULL);
	is_str(jtext(jget(e, "args"), "sort_index"), "0",
	       "two workers (node1/rank 0 and none): the first worker's process sorts first");
	e = find_meta(evs, "thread_name", "100", "dup tid");
	is_str(jtext(e, "tid"), "8", "duplicate tid renumbered above the largest");
	e = find_meta(evs, "thread_name", "100", "main");
	is_str(jtext(e, "tid"), "7", "main keeps tid 7");
	e = find_meta(evs, "thread_name", "100", "requests");
	ok(e && strcmp(jtext(e, "tid"), "7") != 0 && strcmp(jtext(e, "tid"), "8") != 0,
	   "async track gets its own tid (%s)", e ? jtext(e, "tid") : "-");

	/* slices and args */
	is_int(count_ph(evs, "X", NULL), 6 + 1, "X slices, and the step no slice stands for");
	e = find_ev(evs, "X", "step2", 0);
	ok(e && !strcmp(jtext(e, "cat"), "tftracer.step") && !strcmp(jtext(e, "ts"), "50") &&
		   !strcmp(jtext(e, "dur"), "1") && !strcmp(jtext(e, "pid"), "1001"),
	   "step2 drawn in a Steps process of its own (it names none), above the largest pid");
	ok(find_meta(evs, "process_name", "1001", "Steps") != NULL, "the Steps process is named");
	is_int(count_ph(evs, "X", "ProfilerStep#1"), 1, "a step its slice stands for is not drawn twice");
	e = find_ev(evs, "X", "matmul", 0);
	ok(e != NULL, "matmul exported");
	is_str(jtext(e, "ts"), "1.5", "ts in exact microseconds");
	is_str(jtext(e, "dur"), "2.25", "dur in exact microseconds");
	is_str(jtext(e, "cat"), "op", "cat");
	is_str(jtext(e, "pid"), "100", "pid");
	is_str(jtext(e, "tid"), "7", "tid");
	const struct jv *a = jget(e, "args");
	is_str(jtext(a, "i"), "-5", "INT arg");
	is_str(jtext(a, "d"), "1.0", "DOUBLE arg keeps its point");
	is_str(jtext(a, "s"), "q\"x\n", "STR arg escaped and read back");
	ok(jget(a, "b") && jget(a, "b")->type == J_BOOL && jget(a, "b")->b, "BOOL arg");
	ok(jget(a, "n") && jget(a, "n")->type == J_NULL, "NULL arg");
	ok(jget(a, "j") && jget(a, "j")->type == J_ARR && jget(a, "j")->n == 2, "JSON arg verbatim");
	ok(strstr(text, "\"args\":{\"i\":-5,\"d\":1.0,\"s\":\"q\\\"x\\n\",\"b\":true,\"n\":null,\"j\":[1,2]}") != NULL,
	   "args text exact");
	is_int(count_ph(evs, "B", "open"), 1, "unclosed slice as B");
	is_int(count_ph(evs, "E", NULL), 0, "no E anywhere");

	/* instants */
	is_str(jtext(find_ev(evs, "i", "mark", 0), "s"), "g", "global instant");
	is_str(jtext(find_ev(evs, "i", "pmark", 0), "s"), "p", "process instant");
	is_str(jtext(find_ev(evs, "i", "tmark", 0), "s"), "t", "thread instant");

	/* counters */
	is_int(count_ph(evs, "C", NULL), 3, "C samples");
	e = find_ev(evs, "C", "mem", 1);
	is_str(jtext(jget(e, "args"), "bytes"), "2048.5", "mem.bytes -> name mem, key bytes");
	ok(e && !jget(e, "tid"), "counter has no tid");
	e = find_ev(evs, "C", "gpu_util", 0);
	is_str(jtext(jget(e, "args"), "gpu_util"), "50", "name without '.' -> key = name");

	/* async and objects */
	is_int(count_ph(evs, "b", "req"), 3, "b for each async slice");
	is_int(count_ph(evs, "e", "req"), 2, "e only for closed ones");
	e = find_ev(evs, "b", "req", 0);
	const struct jv *e2 = find_ev(evs, "e", "req", 0);
	ok(e && e2 && strcmp(jtext(e, "id"), jtext(e2, "id")) == 0 &&
	   strcmp(jtext(e, "cat"), "requests") == 0 && strcmp(jtext(e2, "cat"), "requests") == 0,
	   "b/e share id and cat = track name");
	is_str(jtext(e2, "ts"), "1", "e at ts + dur");
	is_str(jtext(jget(e, "args"), "x"), "1", "b carries the args");
	is_int(count_ph(evs, "N", "tensor:0"), 1, "object create");
	is_str(jtext(find_ev(evs, "D", "tensor:0", 0), "ts"), "5", "object delete at end");
	is_str(jtext(find_ev(evs, "N", "tensor:0", 0), "cat"), "Tensor", "object keeps its own cat");
	is_int(count_ph(evs, "O", "tensor:0"), 1, "instant on an object track as O");

	/* flows */
	is_int(count_ph(evs, "s", NULL), 3, "s: 2 matched + 1 lone");
	is_int(count_ph(evs, "f", NULL), 3, "f: 2 matched + 1 lone");
	int ids5 = 0, bp = 0;
	for (size_t i = 0; i < evs->n; i++) {
		e = &evs->items[i];
		if (strcmp(jtext(e, "ph"), "f") == 0 && strcmp(jtext(e, "bp"), "e") == 0)
			bp++;
		if ((strcmp(jtext(e, "ph"), "s") == 0 || strcmp(jtext(e, "ph"), "f") == 0) &&
		    strcmp(jtext(e, "id"), "5") == 0)
			ids5++;
	}
	is_int(ids5, 2, "id 5 used by one flow only");
	is_int(bp, 1, "bp:e on the enclosing-bound flow");
	ok(find_ev(evs, "s", "launch", 0) && strcmp(jtext(find_ev(evs, "s", "launch", 0), "cat"), "ac2g") == 0,
	   "flow cat");

	/* trailer */
	md = jget(&root, "metadata");
	ok(md && md->type == J_OBJ, "metadata object");
	const struct jv *steps = jget(md, "steps");
	ok(steps && steps->type == J_ARR && steps->n == 2, "metadata lists both steps");
	if (steps && steps->n == 2) {
		ok(jget(&steps->items[0], "slice")->b == 1, "ProfilerStep#1 is represented by a slice");
		ok(jget(&steps->items[1], "slice")->b == 0, "step2 is not");
	}
	is_int(n->steps_in_metadata, 1, "one step only in metadata");
	{
		const struct jv *procs = jget(md, "processes");

		ok(procs && procs->type == J_ARR && procs->n >= 1 &&
			   !strcmp(jtext(&procs->items[0], "labels"), "lab") &&
			   !strcmp(jtext(&procs->items[0], "sort_index"), "3"),
		   "metadata keeps the process's own labels and sort index");
	}
	is_str(jtext(md, "source_format"), "test", "source format");
	is_int(n->slices, 11, "counts: slices");
	is_int(n->instants, 4, "counts: instants");
	is_int(n->counters, 3, "counts: counters");
	is_int(n->flows, 4, "counts: flows");
out:
	jfree(&root);
}

/* ---- re-import ---------------------------------------------------------- */

struct key {
	char track[64], name[64];
	int64_t ts, dur;
	int kind;
};

struct keys {
	struct key *k;
	size_t n;
};

struct scan_ctx {
	struct tft_session *s;
	struct keys *out;
	const char *track;
};

static int collect_ev(void *ctx, const struct tft_event *e)
{
	struct scan_ctx *c = ctx;
	struct keys *ks = c->out;

	ks->k = realloc(ks->k, (ks->n + 1) * sizeof(*ks->k));
	struct key *k = &ks->k[ks->n++];
	memset(k, 0, sizeof(*k));
	snprintf(k->track, sizeof(k->track), "%s", c->track);
	snprintf(k->name, sizeof(k->name), "%s", tft_session_str(c->s, e->name, NULL));
	k->ts = e->ts_ns;
	k->dur = e->kind == TFT_EV_COUNTER ? (int64_t)(e->value * 1000) : e->dur_ns;
	k->kind = e->kind;
	return 0;
}

static int cmp_key(const void *pa, const void *pb)
{
	const struct key *a = pa, *b = pb;
	int c = strcmp(a->track, b->track);

	if (!c)
		c = strcmp(a->name, b->name);
	if (!c)
		c = a->ts < b->ts ? -1 : a->ts > b->ts;
	if (!c)
		c = a->dur < b->dur ? -1 : a->dur > b->dur;
	if (!c)
		c = a->kind - b->kind;
	return c;
}

static void collect_all(struct tft_session *s, struct keys *ks)
{
	for (uint32_t t = 0; t < tft_session_track_count(s); t++) {
		const struct tft_track *tr = tft_session_track(s, t);
		struct scan_ctx c = { s, ks, tft_session_str(s, tr->name, NULL) };
		tft_session_scan(s, t, INT64_MIN, INT64_MAX, 0, collect_ev, &c, NULL);
	}
	qsort(ks->k, ks->n, sizeof(*ks->k), cmp_key);
}

static void check_reimport(const char *text, size_t len)
{
	struct tft_error err;
	struct tft_writer *w;
	struct tft_session *a, *b;
	struct tft_session_summary sa, sb;
	struct keys ka = { 0 }, kb = { 0 };

	unlink(path_b);
	tft_error_clear(&err);
	w = tft_writer_open(path_b, NULL, &err);
	if (!w) {
		ok(0, "re-import: writer");
		return;
	}
	int rc = tft_ingest_mem(w, "export.json", text, len, NULL, &err);
	is_int(rc, 0, "re-import of the export succeeds");
	if (rc) {
		printf("# %s at byte %lld\n", err.msg, (long long)err.offset);
		tft_writer_abort(w);
		return;
	}
	is_int(tft_writer_close(w, &err), 0, "re-import: close");
	a = tft_session_open(path_a, &err);
	b = tft_session_open(path_b, &err);
	ok(a && b, "both sessions open");
	if (!a || !b)
		goto out;
	tft_session_get_summary(a, &sa);
	tft_session_get_summary(b, &sb);
	is_int(sb.slices, sa.slices, "re-import: slices");
	is_int(sb.instants, sa.instants, "re-import: instants");
	is_int(sb.counters, sa.counters, "re-import: counter samples");
	is_int(sb.flows, sa.flows, "re-import: flows");
	is_int(sb.unmatched_flows, 2, "re-import: the lone s and f are unmatched flows");
	is_int(sb.unclosed_slices, 2, "re-import: B and b without end are unclosed");
	is_int(sb.steps, sa.steps, "re-import: every step comes back (slice-less ones from metadata.steps)");
	is_int(sb.start_ns, sa.start_ns, "re-import: start");
	is_int(sb.end_ns, sa.end_ns, "re-import: end");
	collect_all(a, &ka);
	collect_all(b, &kb);
	size_t diff = ka.n == kb.n ? 0 : 1;
	for (size_t i = 0; !diff && i < ka.n; i++)
		if (cmp_key(&ka.k[i], &kb.k[i]) != 0) {
			printf("# first difference: %s/%s@%lld+%lld vs %s/%s@%lld+%lld\n", ka.k[i].track,
			       ka.k[i].name, (long long)ka.k[i].ts, (long long)ka.k[i].dur, kb.k[i].track,
			       kb.k[i].name, (long long)kb.k[i].ts, (long long)kb.k[i].dur);
			diff = 1;
		}
	ok(!diff, "re-import: same per-track (name, ts, dur) multisets (%zu vs %zu events)", ka.n, kb.n);
out:
	free(ka.k);
	free(kb.k);
	if (a)
		tft_session_close(a);
	if (b)
		tft_session_close(b);
}

/* ---- sink errors and an empty session ------------------------------------ */

static int failing_sink(void *ctx, const void *buf, size_t len)
{
	return TFT_EIO;
}

static void check_empty_and_errors(struct tft_session *s)
{
	struct tft_json_writer w;
	struct tft_error err;
	char p[256];

	tft_json_write_init_sink(&w, failing_sink, NULL);
	/* A tiny buffer so the first flush happens inside the export. */
	w.cap = 64;
	tft_error_clear(&err);
	is_int(tft_export_chrome(s, &w, NULL, &err), TFT_EIO, "sink failure -> TFT_EIO");
	tft_json_write_fini(&w);

	snprintf(p, sizeof(p), "/tmp/tft_test_export_empty_%ld.tft", (long)getpid());
	unlink(p);
	struct tft_writer *wr = tft_writer_open(p, NULL, &err);
	if (wr && tft_writer_close(wr, &err) == 0) {
		struct tft_session *e = tft_session_open(p, &err);
		if (e) {
			size_t len;
			tft_json_write_init_mem(&w);
			is_int(tft_export_chrome(e, &w, NULL, &err), 0, "empty session exports");
			const char *t = tft_json_write_borrow(&w, &len);
			struct jp j = { t, t + len, 0 };
			struct jv root;
			jval(&j, &root, 0);
			ok(!j.bad && jget(&root, "traceEvents") && jget(&root, "traceEvents")->n == 0,
			   "empty session: valid JSON, no events");
			jfree(&root);
			tft_json_write_fini(&w);
			tft_session_close(e);
		}
	}
	unlink(p);
}

/* Many distinct long strings (the string cache grows and moves), a name longer
 * than the cache limit, and bytes that need escaping or are not UTF-8. */
static void check_many_strings(void)
{
	struct tft_error err;
	struct tft_json_writer w;
	struct tft_export_counts n;
	char p[256], name[160], *huge;
	int nslices = 3000;

	snprintf(p, sizeof(p), "/tmp/tft_test_export_strs_%ld.tft", (long)getpid());
	unlink(p);
	tft_error_clear(&err);
	struct tft_writer *wr = tft_writer_open(p, NULL, &err);
	if (!wr) {
		ok(0, "strings session: writer");
		return;
	}
	struct tft_process pr = { .pid = 1, .rank = -1 };
	uint32_t pi = tft_writer_add_process(wr, &pr);
	uint32_t t = mk_track(wr, pi, TFT_TRACK_THREAD, "t\x01\xff", 1, 0);
	for (int i = 0; i < nslices; i++) {
		/* short names, long categories: caching a category moves the arena
		 * while the name's cached text is in use */
		snprintf(name, 20, "n\"%d\"\n", i);
		snprintf(name + 20, sizeof(name) - 20, "%0120d cat", i);
		ev(wr, t, TFT_EV_SLICE, name, name + 20, i * 10, 5, 0, 0, NULL, 0);
	}
	huge = malloc(10000);
	memset(huge, 'h', 9999);
	huge[9999] = '\0';
	huge[5] = '\xc3'; /* truncated sequence in the middle */
	ev(wr, t, TFT_EV_SLICE, huge, "", nslices * 10, 5, 0, 0, NULL, 0);
	if (tft_writer_close(wr, &err) != 0) {
		ok(0, "strings session: close");
		free(huge);
		return;
	}
	struct tft_session *s = tft_session_open(p, &err);
	if (s) {
		size_t len;
		tft_json_write_init_mem(&w);
		is_int(tft_export_chrome(s, &w, &n, &err), 0, "strings session exports");
		const char *text = tft_json_write_borrow(&w, &len);
		struct jp j = { text, text + len, 0 };
		struct jv root;
		jval(&j, &root, 0);
		const struct jv *evs = jget(&root, "traceEvents");
		ok(!j.bad && evs && count_ph(evs, "X", NULL) == nslices + 1, "all slices, valid JSON");
		snprintf(name, 20, "n\"%d\"\n", 2999);
		snprintf(name + 20, sizeof(name) - 20, "%0120d cat", 2999);
		const struct jv *e = find_ev(evs, "X", name, 0);
		ok(e && strcmp(jtext(e, "cat"), name + 20) == 0, "escaped name and cat read back");
		e = evs && evs->n ? &evs->items[evs->n - 1] : NULL;
		ok(e && strlen(jtext(e, "name")) == 9999 + 2 &&
		   memcmp(jtext(e, "name") + 5, "\xEF\xBF\xBD", 3) == 0,
		   "long uncached name, invalid byte replaced by U+FFFD");
		e = find_meta(evs, "thread_name", "1", NULL);
		is_str(jtext(jget(e, "args"), "name"), "t\x01\xEF\xBF\xBD", "control char and bad byte in a track name");
		jfree(&root);
		tft_json_write_fini(&w);
		tft_session_close(s);
	}
	free(huge);
	unlink(p);
}

/*
 * A session file is untrusted: a JSON argument whose text is no JSON value
 * (crafted: it would close the event and open one of its own) or is not
 * UTF-8 goes out as a string; the output stays valid JSON with the file's
 * events only.
 */
static void check_crafted_json_args(void)
{
	static const char *const texts[] = {
		"1},{\"ph\":\"X\",\"name\":\"INJECTED\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":1,\"args\":{\"x\":1",
		"[1,2", "{\"a\":\"\xff\"}", "[1,2] 3", " [1, {\"b\": null}] ",
	};
	struct tft_error err;
	struct tft_json_writer w;
	struct tft_export_counts n;
	char p[256];
	struct tft_writer *wr;
	struct tft_session *s;

	snprintf(p, sizeof(p), "/tmp/tft_test_export_crafted_%ld.tft", (long)getpid());
	unlink(p);
	tft_error_clear(&err);
	wr = tft_writer_open(p, NULL, &err);
	if (!ok(wr != NULL, "crafted args: writer"))
		return;
	struct tft_process pr = { .pid = 1, .rank = -1 };
	uint32_t t = mk_track(wr, tft_writer_add_process(wr, &pr), TFT_TRACK_THREAD, "t", 1, 0);
	for (int i = 0; i < 5; i++) {
		struct tft_arg a = arg(wr, "j", TFT_ARG_JSON);
		a.v.str = tft_writer_intern_cstr(wr, texts[i]);
		ev(wr, t, TFT_EV_SLICE, "e", "", i * 10, 5, 0, 0, &a, 1);
	}
	is_int(tft_writer_close(wr, &err), 0, "crafted args: close");
	s = tft_session_open(p, &err);
	if (!ok(s != NULL, "crafted args: session opens"))
		return;
	tft_json_write_init_mem(&w);
	is_int(tft_export_chrome(s, &w, &n, &err), 0, "crafted args: export");
	{
		size_t len;
		const char *text = tft_json_write_borrow(&w, &len);
		struct jp j = { text, text + len, 0 };
		struct jv root;
		const struct jv *evs;

		jval(&j, &root, 0);
		evs = jget(&root, "traceEvents");
		ok(evs && count_ph(evs, "X", NULL) == 5 && count_ph(evs, "X", "INJECTED") == 0,
		   "crafted args: the five events only, none injected");
		ok(!j.bad, "crafted args: the output parses as JSON");
		ok(strstr(text, "\"j\":\"[1,2\"") != NULL, "crafted args: an unclosed array goes out as a string");
		ok(strstr(text, "\"j\": [1, {\"b\": null}] ") != NULL || strstr(text, "[1, {\"b\": null}]") != NULL,
		   "crafted args: a valid value stays verbatim");
		ok(!memchr(text, 0xff, len), "crafted args: no invalid UTF-8 byte in the output");
		jfree(&root);
	}
	tft_json_write_fini(&w);
	tft_session_close(s);
	unlink(p);
}

int main(void)
{
	struct tft_session *s;
	struct tft_json_writer w;
	struct tft_export_counts n;
	struct tft_error err;
	const char *text;
	size_t len;

	snprintf(path_a, sizeof(path_a), "/tmp/tft_test_export_a_%ld.tft", (long)getpid());
	snprintf(path_b, sizeof(path_b), "/tmp/tft_test_export_b_%ld.tft", (long)getpid());
	ok(build(path_a) == 0, "session built");
	tft_error_clear(&err);
	s = tft_session_open(path_a, &err);
	ok(s != NULL, "session opened");
	if (!s)
		return done_testing();

	tft_json_write_init_mem(&w);
	is_int(tft_export_chrome(s, &w, &n, &err), 0, "export to memory");
	text = tft_json_write_borrow(&w, &len);
	ok(len > 0 && tft_json_write_bytes(&w) == len, "bytes counted");
	check_json(text, len, &n);
	check_reimport(text, len);
	tft_json_write_fini(&w);
	check_empty_and_errors(s);
	check_many_strings();
	check_crafted_json_args();
	tft_session_close(s);
	unlink(path_a);
	unlink(path_b);
	return done_testing();
}
