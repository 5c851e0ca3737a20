/* SPDX-License-Identifier: MIT */
/*
 * Reading a static HTML export's DATA (html_data_int.h, for html_data.c):
 * the document is walked once with codec/json_read; every value is checked as
 * it is read (an error names the byte offset and what was expected); the
 * events of a track are kept as DATA holds them, in (ts, depth) order, with a
 * running maximum of their ends for window queries; the graph rows indexed by
 * name. DATA's "strings" come last, and its indexes must stay the string ids:
 * every other string (the session's names, arg keys and values) goes to a
 * table of its own first and into the session's after DATA's strings, then the
 * records are renumbered.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/json_read.h"
#include "core/arena.h"
#include "core/grow.h"
#include "core/hmap.h"
#include "core/strtab.h"
#include "export/html_data_int.h"

/* The reader and what names the input in errors. */
struct rd {
	struct tft_json_reader r;
	struct tft_error *err;
	const char *name;
};

static int bad(struct rd *d, const char *what)
{
	tft_error_set(d->err, TFT_EFORMAT, tft_json_offset(&d->r), "static export data: %s", what);
	if (d->name)
		tft_error_set_file(d->err, d->name);
	return TFT_EFORMAT;
}

static int nomem(struct rd *d)
{
	return tft_error_set(d->err, TFT_ENOMEM, -1, "out of memory");
}

static bool key_is(const struct tft_json_str *k, const char *s)
{
	size_t n = strlen(s);
	return k->len == n && memcmp(k->ptr, s, n) == 0;
}

/* The next value: rc 0 and v filled, else the error (truncation is one). */
static int read_value(struct rd *d, struct tft_json_value *v, const char *what)
{
	int rc = tft_json_read(&d->r, v, d->err);

	if (rc > 0)
		return bad(d, what);
	return rc;
}

static int read_i64(struct rd *d, int64_t *out, const char *what)
{
	struct tft_json_value v;
	int rc = read_value(d, &v, what);

	if (rc)
		return rc;
	if (v.type != TFT_JSON_NUMBER || tft_json_number_to_i64(v.ptr, v.len, out))
		return bad(d, what);
	return 0;
}

/* An integer, or null (*is_null). */
static int read_i64_or_null(struct rd *d, int64_t *out, bool *is_null, const char *what)
{
	struct tft_json_value v;
	int rc = read_value(d, &v, what);

	if (rc)
		return rc;
	*is_null = v.type == TFT_JSON_NULL;
	if (*is_null)
		return 0;
	if (v.type != TFT_JSON_NUMBER || tft_json_number_to_i64(v.ptr, v.len, out))
		return bad(d, what);
	return 0;
}

static int read_u32(struct rd *d, uint32_t *out, uint32_t max, const char *what)
{
	int64_t x;
	int rc = read_i64(d, &x, what);

	if (rc)
		return rc;
	if (x < 0 || (uint64_t)x > max)
		return bad(d, what);
	*out = (uint32_t)x;
	return 0;
}

static int read_bool(struct rd *d, bool *out, const char *what)
{
	struct tft_json_value v;
	int rc = read_value(d, &v, what);

	if (rc)
		return rc;
	if (v.type != TFT_JSON_TRUE && v.type != TFT_JSON_FALSE)
		return bad(d, what);
	*out = v.type == TFT_JSON_TRUE;
	return 0;
}

static int enter(struct rd *d, int type, const char *what)
{
	struct tft_json_value v;
	int rc = read_value(d, &v, what);

	if (rc)
		return rc;
	return v.type == type ? 0 : bad(d, what);
}

/* The end of a container: the reader's status after its last member or item. */
static int ended(struct rd *d, int rc, const char *what)
{
	return rc > 0 ? bad(d, what) : rc;
}

/* ---- strings -------------------------------------------------------------------------- */

/* A string other than DATA's: its id in h->other (renumbered at the end). */
static int read_other(struct rd *d, struct hd *h, uint32_t *id, const char *what)
{
	struct tft_json_value v;
	int rc = read_value(d, &v, what);

	if (rc)
		return rc;
	if (v.type != TFT_JSON_STRING)
		return bad(d, what);
	*id = tft_strtab_intern(h->other, v.ptr, v.len);
	return *id == UINT32_MAX ? nomem(d) : 0;
}

static int read_strings(struct rd *d, struct hd *h)
{
	int rc;

	if (h->have_strings)
		return bad(d, "\"strings\" twice");
	if ((rc = enter(d, TFT_JSON_ARRAY, "\"strings\": expected an array")))
		return rc;
	while ((rc = tft_json_next_item(&d->r, 0, d->err)) == 1) {
		uint32_t id;
		struct tft_json_value v;
		if ((rc = read_value(d, &v, "a string")))
			return rc;
		if (v.type == TFT_JSON_NULL) /* (the page reads null as "") */
			v.ptr = "", v.len = 0;
		else if (v.type != TFT_JSON_STRING)
			return bad(d, "\"strings\": expected strings");
		id = tft_strtab_intern(h->strs, v.ptr, v.len);
		if (id == UINT32_MAX)
			return nomem(d);
		if (id != h->nstrings)
			return bad(d, "\"strings\": a string twice (its index would not be its id)");
		h->nstrings++;
	}
	if (rc)
		return ended(d, rc, "\"strings\": truncated");
	h->have_strings = true;
	return 0;
}

/* After the whole document: the other strings after DATA's, every reference renumbered. */
static int renumber(struct rd *d, struct hd *h)
{
	uint32_t n = tft_strtab_count(h->other), *map = malloc((size_t)n * sizeof(*map));

	if (!map)
		return nomem(d);
	for (uint32_t i = 0; i < n; i++) {
		size_t len;
		const char *p = tft_strtab_get(h->other, i, &len);
		if ((map[i] = tft_strtab_intern(h->strs, p, len)) == UINT32_MAX) {
			free(map);
			return nomem(d);
		}
	}
	for (uint32_t i = 0; i < h->nprocs; i++) {
		h->procs[i].name = map[h->procs[i].name];
		h->procs[i].host = map[h->procs[i].host];
		h->procs[i].labels = map[h->procs[i].labels];
	}
	for (uint32_t i = 0; i < h->ntracks; i++) {
		struct hd_events *e = &h->ev[i];
		h->tracks[i].name = map[h->tracks[i].name];
		for (uint32_t j = 0; j < e->nargs; j++) {
			e->args[j].key = map[e->args[j].key];
			if (e->args[j].type == TFT_ARG_STR || e->args[j].type == TFT_ARG_JSON)
				e->args[j].v.str = map[e->args[j].v.str];
		}
	}
	for (uint32_t i = 0; i < h->nsteps; i++)
		h->steps[i].name = map[h->steps[i].name];
	h->sum_format = map[h->sum_format];
	h->sum_producer = map[h->sum_producer];
	free(map);
	tft_strtab_destroy(h->other);
	h->other = NULL;
	return 0;
}

/* After the whole document: every name, category and flow name an index of "strings". */
static int check_indexes(struct rd *d, const struct hd *h)
{
	for (uint32_t t = 0; t < h->ntracks; t++) {
		const struct hd_events *e = &h->ev[t];
		for (uint32_t i = 0; i < e->n; i++)
			if (e->name[i] >= h->nstrings || e->cat[i] >= h->nstrings)
				return bad(d, "an event's name or cat is not an index of \"strings\"");
	}
	for (size_t i = 0; i < h->nflows; i++)
		if (h->flows[i].name >= h->nstrings || h->flows[i].cat >= h->nstrings)
			return bad(d, "a flow's name or cat is not an index of \"strings\"");
	return 0;
}

/* ---- "session": processes, tracks, steps, summary ---------------------------------------- */

static int read_process(struct rd *d, struct hd *h)
{
	uint32_t i = h->nprocs;
	struct tft_process *p;
	struct tft_json_str k;
	int64_t x;
	int rc;

	if ((rc = enter(d, TFT_JSON_OBJECT, "process_list: expected objects")))
		return rc;
	if (tft_grow((void **)&h->procs, &h->cap_procs, (size_t)i + 1, sizeof(*h->procs)))
		return nomem(d);
	p = &h->procs[h->nprocs++];
	*p = (struct tft_process){ .id = TFT_NONE, .rank = -1 };
	while ((rc = tft_json_next_key(&d->r, &k, d->err)) == 1) {
		if (key_is(&k, "id"))
			rc = read_u32(d, &p->id, UINT32_MAX - 1, "a process id");
		else if (key_is(&k, "name"))
			rc = read_other(d, h, &p->name, "a process name");
		else if (key_is(&k, "host"))
			rc = read_other(d, h, &p->host, "a process host");
		else if (key_is(&k, "labels"))
			rc = read_other(d, h, &p->labels, "process labels");
		else if (key_is(&k, "pid"))
			rc = read_i64(d, &p->pid, "a process pid");
		else if (key_is(&k, "rank") || key_is(&k, "sort_index")) {
			bool rank = k.len == 4;
			if (!(rc = read_i64(d, &x, "a process rank or sort_index"))) {
				if (x < INT32_MIN || x > INT32_MAX)
					return bad(d, "a process rank or sort_index out of range");
				*(rank ? &p->rank : &p->sort_index) = (int32_t)x;
			}
		} else
			rc = tft_json_skip(&d->r, NULL, d->err);
		if (rc)
			return ended(d, rc, "a process: truncated");
	}
	if (rc)
		return ended(d, rc, "a process: truncated");
	if (p->id != i)
		return bad(d, "process_list: ids must be 0, 1, 2 ... in order");
	return 0;
}

static int read_track(struct rd *d, struct hd *h)
{
	uint32_t i = h->ntracks;
	struct tft_track *t;
	struct tft_json_str k;
	bool concurrent = false, derived = false, null_ts;
	int64_t x;
	int rc;

	if ((rc = enter(d, TFT_JSON_OBJECT, "track_list: expected objects")))
		return rc;
	if (tft_grow((void **)&h->tracks, &h->cap_tracks, (size_t)i + 1, sizeof(*h->tracks)))
		return nomem(d);
	t = &h->tracks[h->ntracks++];
	*t = (struct tft_track){ .id = TFT_NONE, .min_ts_ns = INT64_MAX, .max_ts_ns = INT64_MIN };
	while ((rc = tft_json_next_key(&d->r, &k, d->err)) == 1) {
		if (key_is(&k, "id"))
			rc = read_u32(d, &t->id, UINT32_MAX - 1, "a track id");
		else if (key_is(&k, "process"))
			rc = read_u32(d, &t->process, UINT32_MAX - 1, "a track's process");
		else if (key_is(&k, "name"))
			rc = read_other(d, h, &t->name, "a track name");
		else if (key_is(&k, "kind")) {
			struct tft_json_value v;
			char kind[32];
			if (!(rc = read_value(d, &v, "a track kind"))) {
				if (v.type != TFT_JSON_STRING || v.len >= sizeof(kind))
					return bad(d, "a track kind");
				memcpy(kind, v.ptr, v.len);
				kind[v.len] = '\0';
				if (!(t->kind = (uint32_t)tft_track_kind_parse(kind)))
					return bad(d, "a track kind (thread, device, ...)");
			}
		} else if (key_is(&k, "tid"))
			rc = read_i64(d, &t->tid, "a track tid");
		else if (key_is(&k, "sort_index")) {
			if (!(rc = read_i64(d, &x, "a track sort_index"))) {
				if (x < INT32_MIN || x > INT32_MAX)
					return bad(d, "a track sort_index out of range");
				t->sort_index = (int32_t)x;
			}
		} else if (key_is(&k, "slices") || key_is(&k, "instants") || key_is(&k, "counters")) {
			uint64_t *dst = k.ptr[0] == 's' ? &t->slices : k.ptr[0] == 'i' ? &t->instants : &t->counters;
			if (!(rc = read_i64(d, &x, "a track's event count"))) {
				if (x < 0)
					return bad(d, "a track's event count");
				*dst = (uint64_t)x;
			}
		} else if (key_is(&k, "max_depth"))
			rc = read_u32(d, &t->max_depth, UINT32_MAX, "a track max_depth");
		else if (key_is(&k, "concurrent"))
			rc = read_bool(d, &concurrent, "a track's concurrent flag");
		else if (key_is(&k, "derived"))
			rc = read_bool(d, &derived, "a track's derived flag");
		else if (key_is(&k, "min_ts_ns")) {
			if (!(rc = read_i64_or_null(d, &x, &null_ts, "a track's min_ts_ns")) && !null_ts)
				t->min_ts_ns = x;
		} else if (key_is(&k, "max_ts_ns")) {
			if (!(rc = read_i64_or_null(d, &x, &null_ts, "a track's max_ts_ns")) && !null_ts)
				t->max_ts_ns = x;
		} else
			rc = tft_json_skip(&d->r, NULL, d->err);
		if (rc)
			return ended(d, rc, "a track: truncated");
	}
	if (rc)
		return ended(d, rc, "a track: truncated");
	if (t->id != i)
		return bad(d, "track_list: ids must be 0, 1, 2 ... in order");
	if (!t->kind)
		return bad(d, "a track without a kind");
	t->flags = (concurrent ? TFT_TRACKF_CONCURRENT : 0) | (derived ? TFT_TRACKF_DERIVED : 0);
	return 0;
}

static int read_step(struct rd *d, struct hd *h)
{
	uint32_t i = h->nsteps;
	struct tft_step *st;
	struct tft_json_str k;
	bool null_process = false;
	int64_t x;
	int rc;

	if ((rc = enter(d, TFT_JSON_OBJECT, "step_list: expected objects")))
		return rc;
	if (tft_grow((void **)&h->steps, &h->cap_steps, (size_t)i + 1, sizeof(*h->steps)))
		return nomem(d);
	st = &h->steps[h->nsteps++];
	*st = (struct tft_step){ .process = TFT_NONE };
	while ((rc = tft_json_next_key(&d->r, &k, d->err)) == 1) {
		if (key_is(&k, "index"))
			rc = read_i64(d, &st->index, "a step index");
		else if (key_is(&k, "name"))
			rc = read_other(d, h, &st->name, "a step name");
		else if (key_is(&k, "process")) {
			if (!(rc = read_i64_or_null(d, &x, &null_process, "a step's process")) && !null_process) {
				if (x < 0 || x >= TFT_NONE)
					return bad(d, "a step's process");
				st->process = (uint32_t)x;
			}
		} else if (key_is(&k, "start_ns"))
			rc = read_i64(d, &st->start_ns, "a step's start_ns");
		else if (key_is(&k, "dur_ns"))
			rc = read_i64(d, &st->dur_ns, "a step's dur_ns");
		else if (key_is(&k, "traced"))
			rc = read_bool(d, &st->traced, "a step's traced flag");
		else
			rc = tft_json_skip(&d->r, NULL, d->err);
		if (rc)
			return ended(d, rc, "a step: truncated");
	}
	return rc ? ended(d, rc, "a step: truncated") : 0;
}

/* A list of the session object: each element through fn. */
static int read_list(struct rd *d, struct hd *h, int (*fn)(struct rd *, struct hd *), const char *what)
{
	int rc;

	if ((rc = enter(d, TFT_JSON_ARRAY, what)))
		return rc;
	while ((rc = tft_json_next_item(&d->r, 0, d->err)) == 1)
		if ((rc = fn(d, h)))
			return rc;
	return ended(d, rc, what);
}

static int read_session(struct rd *d, struct hd *h)
{
	struct tft_json_str k;
	int64_t x;
	int rc;

	if (h->have_session)
		return bad(d, "\"session\" twice");
	if ((rc = enter(d, TFT_JSON_OBJECT, "\"session\": expected an object")))
		return rc;
	while ((rc = tft_json_next_key(&d->r, &k, d->err)) == 1) {
		uint64_t *u = NULL;
		if (key_is(&k, "process_list"))
			rc = read_list(d, h, read_process, "process_list: expected an array");
		else if (key_is(&k, "track_list"))
			rc = read_list(d, h, read_track, "track_list: expected an array");
		else if (key_is(&k, "step_list"))
			rc = read_list(d, h, read_step, "step_list: expected an array");
		else if (key_is(&k, "format"))
			rc = read_other(d, h, &h->sum_format, "\"format\": expected a string");
		else if (key_is(&k, "producer"))
			rc = read_other(d, h, &h->sum_producer, "\"producer\": expected a string");
		else if (key_is(&k, "start_ns"))
			rc = read_i64(d, &h->sum.start_ns, "\"start_ns\": expected an integer");
		else if (key_is(&k, "end_ns"))
			rc = read_i64(d, &h->sum.end_ns, "\"end_ns\": expected an integer");
		else if (key_is(&k, "flows"))
			u = &h->sum.flows;
		else if (key_is(&k, "steps"))
			u = &h->sum.steps;
		else if (key_is(&k, "dropped"))
			u = &h->sum.dropped;
		else if (key_is(&k, "unmatched_flows"))
			u = &h->sum.unmatched_flows;
		else if (key_is(&k, "unclosed_slices"))
			u = &h->sum.unclosed_slices;
		else
			rc = tft_json_skip(&d->r, NULL, d->err);
		if (u && !(rc = read_i64(d, &x, "a summary count: expected an integer"))) {
			if (x < 0)
				return bad(d, "a summary count: expected an integer >= 0");
			*u = (uint64_t)x;
		}
		if (rc)
			return ended(d, rc, "\"session\": truncated");
	}
	if (rc)
		return ended(d, rc, "\"session\": truncated");
	for (uint32_t i = 0; i < h->ntracks; i++)
		if (h->tracks[i].process >= h->nprocs)
			return bad(d, "a track's process is not in process_list");
	h->ev = calloc(h->ntracks ? h->ntracks : 1, sizeof(*h->ev));
	if (!h->ev)
		return nomem(d);
	h->origin = h->sum.start_ns;
	snprintf(h->start, sizeof(h->start), "%lld", (long long)h->origin);
	h->have_session = true;
	return 0;
}

/* ---- "tracks": the events ---------------------------------------------------------------- */

/* DATA's offsets from start_ns to absolute times, saturated as the exporter saturates. */
static int64_t absolute(const struct hd *h, int64_t off)
{
	int64_t t;

	if (__builtin_add_overflow(off, h->origin, &t))
		return off < 0 ? INT64_MIN : INT64_MAX;
	return t;
}

/* An array of exactly n numbers (n == UINT32_MAX: any count, which sets n). */
static int read_column(struct rd *d, const char *col, bool dbl, uint32_t *n, void **out, size_t elem,
		       int64_t min, int64_t max)
{
	size_t cap = 0;
	uint8_t *a = NULL;
	uint32_t i = 0;
	int rc;

	if ((rc = enter(d, TFT_JSON_ARRAY, col)))
		return rc;
	while ((rc = tft_json_next_item(&d->r, 0, d->err)) == 1) {
		struct tft_json_value v;
		if ((rc = read_value(d, &v, col)))
			break;
		if (v.type != TFT_JSON_NUMBER || (*n != UINT32_MAX && i >= *n) || i == UINT32_MAX - 1) {
			rc = bad(d, col);
			break;
		}
		if (tft_grow_size_ex((void **)&a, &cap, (size_t)i + 1, elem, 256, 0)) {
			rc = nomem(d);
			break;
		}
		if (dbl) {
			double x;
			if (tft_json_number_to_double(v.ptr, v.len, &x)) {
				rc = bad(d, col);
				break;
			}
			memcpy(a + (size_t)i * elem, &x, sizeof(x));
		} else {
			int64_t x;
			if (tft_json_number_to_i64(v.ptr, v.len, &x) || x < min || x > max) {
				rc = bad(d, col);
				break;
			}
			if (elem == 8)
				memcpy(a + (size_t)i * 8, &x, 8);
			else if (elem == 4)
				((uint32_t *)(void *)a)[i] = (uint32_t)x;
			else
				a[i] = (uint8_t)x;
		}
		i++;
	}
	if (rc) {
		free(a);
		return ended(d, rc, col);
	}
	if (*n != UINT32_MAX && i != *n) {
		free(a);
		return bad(d, "a track's arrays differ in length");
	}
	*n = i;
	*out = a ? a : calloc(1, elem);
	return *out ? 0 : nomem(d);
}

static int add_arg(struct rd *d, struct hd_events *e, const struct tft_arg *a)
{
	if (e->nargs == UINT32_MAX - 1)
		return bad(d, "too many args");
	if (tft_grow_size_ex((void **)&e->args, &e->cap_args, (size_t)e->nargs + 1, sizeof(*e->args), 64, 0))
		return nomem(d);
	e->args[e->nargs++] = *a;
	return 0;
}

/* One args object's members into e->args (the reader has entered the object). */
static int read_args_members(struct rd *d, struct hd *h, struct hd_events *e)
{
	struct tft_json_str k;
	int rc;

	while ((rc = tft_json_next_key(&d->r, &k, d->err)) == 1) {
		struct tft_arg a = { .type = TFT_ARG_NULL };
		struct tft_json_value v;
		a.key = tft_strtab_intern(h->other, k.ptr, k.len);
		if (a.key == UINT32_MAX)
			return nomem(d);
		if ((rc = tft_json_read_flat(&d->r, &v, true, d->err)))
			return ended(d, rc, "an args object: truncated");
		switch (v.type) {
		case TFT_JSON_NULL: break;
		case TFT_JSON_TRUE:
		case TFT_JSON_FALSE:
			a.type = TFT_ARG_BOOL;
			a.v.i = v.type == TFT_JSON_TRUE;
			break;
		case TFT_JSON_NUMBER:
			if (v.is_int && !tft_json_number_to_i64(v.ptr, v.len, &a.v.i)) {
				a.type = TFT_ARG_INT;
				break;
			}
			if (v.is_int) { /* beyond int64: its digits, as the importers keep it */
				a.type = TFT_ARG_JSON;
				if ((a.v.str = tft_strtab_intern(h->other, v.ptr, v.len)) == UINT32_MAX)
					return nomem(d);
				break;
			}
			a.type = TFT_ARG_DOUBLE;
			if (tft_json_number_to_double(v.ptr, v.len, &a.v.d))
				return bad(d, "an arg value: a number out of range");
			break;
		case TFT_JSON_STRING:
		case TFT_JSON_OBJECT:
		case TFT_JSON_ARRAY:
			a.type = v.type == TFT_JSON_STRING ? TFT_ARG_STR : TFT_ARG_JSON;
			a.v.str = tft_strtab_intern(h->other, v.ptr, v.len);
			if (a.v.str == UINT32_MAX)
				return nomem(d);
			break;
		default: return bad(d, "an arg value");
		}
		if ((rc = add_arg(d, e, &a)))
			return rc;
	}
	return rc ? ended(d, rc, "an args object: truncated") : 0;
}

/*
 * A value DATA gives as its JSON text (an object holding an integer beyond
 * 2^53: an event's args, a graph row): the text parsed on its own, its
 * members through fn(sub, h, ctx). `what` names it in errors, which say where
 * in the text it failed and point at the text in DATA.
 */
static int read_text_object(struct rd *d, struct hd *h, const char *p, size_t len, const char *what,
			    int (*fn)(struct rd *sub, struct hd *h, void *ctx), void *ctx)
{
	struct rd sub = { .err = d->err, .name = d->name };
	int rc;

	if (tft_grow_size_ex((void **)&h->argbuf, &h->cap_argbuf, len + TFT_JSON_PAD + 1, 1, 256, 0))
		return nomem(d);
	memcpy(h->argbuf, p, len);
	memset(h->argbuf + len, 0, TFT_JSON_PAD + 1);
	tft_json_reader_init_mem(&sub.r, h->argbuf, len, NULL, NULL);
	rc = enter(&sub, TFT_JSON_OBJECT, "expected a JSON object");
	if (!rc)
		rc = fn(&sub, h, ctx);
	if (!rc && (rc = tft_json_finish(&sub.r, d->err)) > 0)
		rc = bad(&sub, "trailing bytes");
	tft_json_reader_fini(&sub.r);
	if (rc) {
		char why[sizeof(d->err->msg) + 64];
		snprintf(why, sizeof(why), "%s is not a JSON object (%s, at its byte %lld)", what, d->err->msg,
			 (long long)d->err->offset);
		tft_error_clear(d->err);
		return bad(d, why);
	}
	return 0;
}

static int args_members(struct rd *sub, struct hd *h, void *e)
{
	return read_args_members(sub, h, e);
}

static int read_args(struct rd *d, struct hd *h, struct hd_events *e, uint32_t n)
{
	uint32_t i = 0;
	int rc;

	if ((rc = enter(d, TFT_JSON_ARRAY, "a track's \"args\": expected an array")))
		return rc;
	e->arg0 = malloc(((size_t)n + 1) * sizeof(*e->arg0));
	if (!e->arg0)
		return nomem(d);
	while ((rc = tft_json_next_item(&d->r, 0, d->err)) == 1) {
		struct tft_json_value v;
		if (i >= n)
			return bad(d, "a track's arrays differ in length");
		e->arg0[i++] = e->nargs;
		if ((rc = tft_json_read(&d->r, &v, d->err)))
			return ended(d, rc, "an event's args: truncated");
		if (v.type == TFT_JSON_NULL)
			continue;
		if (v.type == TFT_JSON_OBJECT)
			rc = read_args_members(d, h, e);
		else if (v.type == TFT_JSON_STRING)
			rc = read_text_object(d, h, v.ptr, v.len, "an args text", args_members, e);
		else
			rc = bad(d, "an event's args: expected an object, its JSON text or null");
		if (rc)
			return rc;
		if (e->nargs - e->arg0[i - 1] > UINT16_MAX)
			return bad(d, "an event with more than 65535 args");
	}
	if (rc)
		return ended(d, rc, "a track's \"args\": truncated");
	if (i != n)
		return bad(d, "a track's arrays differ in length");
	e->arg0[n] = e->nargs;
	return 0;
}

static void events_free(struct hd_events *e)
{
	free(e->ts);
	free(e->dur);
	free(e->maxend);
	free(e->value);
	free(e->depth);
	free(e->name);
	free(e->cat);
	free(e->flags);
	free(e->kind);
	free(e->arg0);
	free(e->args);
	memset(e, 0, sizeof(*e));
}

/* Missing optional columns as DATA says (all 0), then the times made absolute. */
static int events_finish(struct rd *d, struct hd *h, struct hd_events *e, const struct tft_track *tr)
{
	uint32_t n = e->n;
	bool counter = tr->kind == TFT_TRACK_COUNTER;
	int64_t run = INT64_MIN;

#define ZEROS(f)                                                                              \
	if (!e->f && !(e->f = calloc(n ? n : 1, sizeof(*e->f))))                              \
		return nomem(d);
	ZEROS(dur)
	ZEROS(value)
	ZEROS(depth)
	ZEROS(name)
	ZEROS(cat)
	ZEROS(flags)
	ZEROS(kind)
#undef ZEROS
	if (!e->arg0 && !(e->arg0 = calloc((size_t)n + 1, sizeof(*e->arg0))))
		return nomem(d);
	if (!(e->maxend = malloc((n ? n : 1) * sizeof(*e->maxend))))
		return nomem(d);
	for (uint32_t i = 0; i < n; i++) {
		int64_t end;
		if (e->kind[i] > 1)
			return bad(d, "an event's ekind (0 slice, 1 instant)");
		e->kind[i] = counter ? TFT_EV_COUNTER : e->kind[i] ? TFT_EV_INSTANT : TFT_EV_SLICE;
		e->ts[i] = absolute(h, e->ts[i]);
		if (i && e->ts[i] < e->ts[i - 1])
			return bad(d, "a track's events are not in time order");
		if (e->dur[i] < 0)
			return bad(d, "an event's dur is negative");
		if (__builtin_add_overflow(e->ts[i], e->dur[i], &end))
			end = INT64_MAX;
		if (end > run)
			run = end;
		e->maxend[i] = run;
	}
	return 0;
}

static int read_track_events(struct rd *d, struct hd *h)
{
	struct hd_events e = { .n = UINT32_MAX };
	struct tft_json_str k;
	uint32_t id = TFT_NONE;
	int rc;

	if ((rc = enter(d, TFT_JSON_OBJECT, "\"tracks\": expected objects")))
		return rc;
	/* "id" and "ts" come first (the exporter's order): the rest is checked against them */
	while ((rc = tft_json_next_key(&d->r, &k, d->err)) == 1) {
		void **col = NULL;
		size_t elem = 4;
		int64_t max = UINT32_MAX;
		bool dbl = false;
		if (key_is(&k, "id")) {
			if ((rc = read_u32(d, &id, UINT32_MAX - 1, "a track's id")))
				goto fail;
			if (id >= h->ntracks || h->ev[id].present) {
				rc = bad(d, "a track's id: not in track_list, or twice");
				goto fail;
			}
			continue;
		}
		if (id == TFT_NONE) {
			rc = bad(d, "a track entry must begin with its \"id\"");
			goto fail;
		}
		if (key_is(&k, "args")) {
			if (e.n == UINT32_MAX) {
				rc = bad(d, "a track's \"args\" before its \"ts\"");
				goto fail;
			}
			if ((rc = read_args(d, h, &e, e.n)))
				goto fail;
			continue;
		}
		if (key_is(&k, "ts") || key_is(&k, "dur"))
			col = (void **)(k.ptr[0] == 't' ? &e.ts : &e.dur), elem = 8, max = INT64_MAX;
		else if (key_is(&k, "value"))
			col = (void **)&e.value, elem = 8, dbl = true;
		else if (key_is(&k, "depth"))
			col = (void **)&e.depth;
		else if (key_is(&k, "name"))
			col = (void **)&e.name;
		else if (key_is(&k, "cat"))
			col = (void **)&e.cat;
		else if (key_is(&k, "flags") || key_is(&k, "ekind"))
			col = (void **)(k.ptr[0] == 'f' ? &e.flags : &e.kind), elem = 1, max = UINT8_MAX;
		if (!col) {
			if ((rc = tft_json_skip(&d->r, NULL, d->err)))
				goto fail;
			continue;
		}
		if (*col || (col != (void **)&e.ts && e.n == UINT32_MAX)) {
			rc = bad(d, *col ? "a track's column twice" : "a track's columns must follow its \"ts\"");
			goto fail;
		}
		if ((rc = read_column(d, "a track's column: expected an array of numbers", dbl, &e.n, col, elem,
				      max == INT64_MAX ? INT64_MIN : 0, max)))
			goto fail;
	}
	if (rc) {
		rc = ended(d, rc, "a track entry: truncated");
		goto fail;
	}
	if (id == TFT_NONE || !e.ts) {
		rc = bad(d, "a track entry without \"id\" and \"ts\"");
		goto fail;
	}
	if ((rc = events_finish(d, h, &e, &h->tracks[id])))
		goto fail;
	e.present = true;
	h->ev[id] = e;
	return 0;
fail:
	events_free(&e);
	return rc;
}

static int read_tracks(struct rd *d, struct hd *h)
{
	if (!h->have_session)
		return bad(d, "\"tracks\" before \"session\"");
	return read_list(d, h, read_track_events, "\"tracks\": expected an array");
}

/* ---- "flows" ------------------------------------------------------------------------------ */

static int read_flow(struct rd *d, struct hd *h)
{
	struct tft_flow f = { .src_track = TFT_NONE, .dst_track = TFT_NONE };
	struct tft_json_str k;
	bool null_v;
	int64_t x;
	int rc;

	if ((rc = enter(d, TFT_JSON_OBJECT, "\"flows\": expected objects")))
		return rc;
	while ((rc = tft_json_next_key(&d->r, &k, d->err)) == 1) {
		if (key_is(&k, "id")) {
			struct tft_json_value v;
			if ((rc = read_value(d, &v, "a flow id")))
				return rc;
			/* a number, or beyond 2^53 - 1 a string of its digits */
			if (v.len == 0 || v.len > 20 || (v.type != TFT_JSON_NUMBER && v.type != TFT_JSON_STRING))
				return bad(d, "a flow id");
			f.flow_id = 0;
			for (size_t i = 0; i < v.len; i++) {
				unsigned c = (unsigned char)v.ptr[i] - '0';
				if (c > 9 || __builtin_mul_overflow(f.flow_id, 10, &f.flow_id) ||
				    __builtin_add_overflow(f.flow_id, c, &f.flow_id))
					return bad(d, "a flow id: expected an unsigned integer");
			}
		} else if (key_is(&k, "name") || key_is(&k, "cat")) {
			uint32_t *dst = k.ptr[0] == 'n' ? &f.name : &f.cat;
			rc = read_u32(d, dst, UINT32_MAX - 1, "a flow's name or cat");
		} else if (key_is(&k, "src_track") || key_is(&k, "dst_track")) {
			uint32_t *dst = k.ptr[0] == 's' ? &f.src_track : &f.dst_track;
			if (!(rc = read_i64_or_null(d, &x, &null_v, "a flow's track")) && !null_v) {
				if (x < 0 || x >= h->ntracks)
					return bad(d, "a flow's track is not in track_list");
				*dst = (uint32_t)x;
			}
		} else if (key_is(&k, "src_ts") || key_is(&k, "dst_ts")) {
			int64_t *dst = k.ptr[0] == 's' ? &f.src_ts_ns : &f.dst_ts_ns;
			if (!(rc = read_i64_or_null(d, &x, &null_v, "a flow's ts")) && !null_v)
				*dst = absolute(h, x);
		} else if (key_is(&k, "flags"))
			rc = read_u32(d, &f.flags, UINT32_MAX, "a flow's flags");
		else
			rc = tft_json_skip(&d->r, NULL, d->err);
		if (rc)
			return ended(d, rc, "a flow: truncated");
	}
	if (rc)
		return ended(d, rc, "a flow: truncated");
	if (tft_grow_size((void **)&h->flows, &h->cap_flows, h->nflows + 1, sizeof(*h->flows)))
		return nomem(d);
	h->flows[h->nflows++] = f;
	return 0;
}

static int read_flows(struct rd *d, struct hd *h)
{
	if (!h->have_session)
		return bad(d, "\"flows\" before \"session\"");
	return read_list(d, h, read_flow, "\"flows\": expected an array");
}

/* ---- "graph": the graph rows a slice joins ---------------------------------------------------- */

static int graph_copy(struct rd *d, struct hd *h, struct tft_graph_text *t, const char *p, size_t len)
{
	char *c = tft_arena_alloc(&h->garena, len + 1);

	if (!c)
		return nomem(d);
	memcpy(c, p, len);
	c[len] = '\0';
	t->p = c;
	t->len = len;
	return 0;
}

/*
 * A text column: a string (kind, name ...) or a JSON value (inputs, attrs ...,
 * inlined as written), or null (absent). A JSON column given as a string is
 * text that was not JSON: the server writes it as a string too.
 */
static int graph_text(struct rd *d, struct hd *h, struct tft_graph_text *t, bool json)
{
	struct tft_json_value v;
	int rc = tft_json_read_flat(&d->r, &v, true, d->err);

	if (rc)
		return ended(d, rc, "a graph row: truncated");
	*t = (struct tft_graph_text){ NULL, 0 };
	if (v.type == TFT_JSON_NULL)
		return 0;
	if (v.type == TFT_JSON_STRING || (json && v.ptr))
		return graph_copy(d, h, t, v.ptr, v.len);
	return bad(d, "a graph row's text: expected a string or null");
}

static int graph_cost(struct rd *d, int64_t *out)
{
	bool null_v;
	int rc = read_i64_or_null(d, out, &null_v, "a graph row's cost: expected an integer or null");

	if (!rc && null_v)
		*out = TFT_GRAPH_NO_COST;
	return rc;
}

/* A row's members (the reader has entered its object), in h->gn[h->ngn - 1]. */
static int graph_members(struct rd *d, struct hd *h)
{
	struct tft_graph_node *n = &h->gn[h->ngn - 1];
	int64_t *id = &h->gid[h->ngn - 1];
	struct tft_json_str k;
	int rc;

	*n = (struct tft_graph_node){ .compute_cost = TFT_GRAPH_NO_COST, .temporary_memory = TFT_GRAPH_NO_COST,
				      .persistent_memory = TFT_GRAPH_NO_COST, .float_ops = TFT_GRAPH_NO_COST,
				      .step_process = TFT_GRAPH_NO_COST, .step_start = TFT_GRAPH_NO_COST };
	*id = 0;
	while ((rc = tft_json_next_key(&d->r, &k, d->err)) == 1) {
		if (key_is(&k, "graph_id"))
			rc = read_i64(d, id, "a graph row's graph_id");
		else if (key_is(&k, "graph"))
			rc = graph_text(d, h, &n->graph, false);
		else if (key_is(&k, "kind"))
			rc = graph_text(d, h, &n->kind, false);
		else if (key_is(&k, "name"))
			rc = graph_text(d, h, &n->name, false);
		else if (key_is(&k, "op"))
			rc = graph_text(d, h, &n->op, false);
		else if (key_is(&k, "device"))
			rc = graph_text(d, h, &n->device, false);
		else if (key_is(&k, "inputs"))
			rc = graph_text(d, h, &n->inputs, true);
		else if (key_is(&k, "attrs"))
			rc = graph_text(d, h, &n->attrs, true);
		else if (key_is(&k, "output_shapes"))
			rc = graph_text(d, h, &n->output_shapes, true);
		else if (key_is(&k, "cost"))
			rc = graph_text(d, h, &n->cost, true);
		else if (key_is(&k, "op_types"))
			rc = graph_text(d, h, &n->op_types, true);
		else if (key_is(&k, "code"))
			rc = graph_text(d, h, &n->code, true);
		else if (key_is(&k, "compute_cost"))
			rc = graph_cost(d, &n->compute_cost);
		else if (key_is(&k, "temporary_memory"))
			rc = graph_cost(d, &n->temporary_memory);
		else if (key_is(&k, "persistent_memory"))
			rc = graph_cost(d, &n->persistent_memory);
		else if (key_is(&k, "float_ops"))
			rc = graph_cost(d, &n->float_ops);
		else if (key_is(&k, "step_process"))
			rc = graph_cost(d, &n->step_process);
		else if (key_is(&k, "step_start_ns"))
			rc = graph_cost(d, &n->step_start);
		else
			rc = tft_json_skip(&d->r, NULL, d->err);
		if (rc)
			return ended(d, rc, "a graph row: truncated");
	}
	if (rc)
		return ended(d, rc, "a graph row: truncated");
	/* as the file's reader says it: a row with any of the OpLogProto's columns */
	n->oplog = n->op_types.p || n->float_ops != TFT_GRAPH_NO_COST || n->code.p;
	return 0;
}

static int graph_row_members(struct rd *sub, struct hd *h, void *ctx)
{
	return graph_members(sub, h);
}

static int read_graph_row(struct rd *d, struct hd *h)
{
	struct tft_json_value v;
	int rc;

	int64_t *gid;

	if (tft_grow_size((void **)&h->gn, &h->cap_gn, h->ngn + 1, sizeof(*h->gn)) ||
	    !(gid = realloc(h->gid, h->cap_gn * sizeof(*h->gid))))
		return nomem(d);
	h->gid = gid;
	if (h->ngn == UINT32_MAX - 1)
		return bad(d, "too many graph rows");
	h->ngn++;
	if ((rc = tft_json_read(&d->r, &v, d->err)))
		return ended(d, rc, "a graph row: truncated");
	if (v.type == TFT_JSON_OBJECT)
		return graph_members(d, h);
	if (v.type == TFT_JSON_STRING)
		return read_text_object(d, h, v.ptr, v.len, "a graph row's text", graph_row_members, NULL);
	return bad(d, "a graph row: expected an object or its JSON text");
}


/* The rows by name: each name's rows chained in insertion order. */
static int graph_index(struct rd *d, struct hd *h)
{
	if (!(h->gnext = malloc((h->ngn ? h->ngn : 1) * sizeof(*h->gnext))))
		return nomem(d);
	tft_hmap_init(&h->gbyname, 1);
	for (size_t i = h->ngn; i-- > 0;) {
		const struct tft_graph_node *n = &h->gn[i];
		uint64_t key = tft_hd_name_hash(n->name.p ? n->name.p : "", n->name.len);
		uint32_t head = tft_hmap_get1(&h->gbyname, key, (uint32_t)tft_hash_u64(key));

		h->gnext[i] = head; /* TFT_HMAP_EMPTY ends a chain */
		if (tft_hmap_put(&h->gbyname, &key, (uint32_t)tft_hash_u64(key), (uint32_t)i))
			return nomem(d);
	}
	snprintf(h->graph_count, sizeof(h->graph_count), "%zu", h->ngn);
	return 0;
}

static int read_graph(struct rd *d, struct hd *h)
{
	int rc;

	if (h->have_graph)
		return bad(d, "\"graph\" twice");
	if ((rc = read_list(d, h, read_graph_row, "\"graph\": expected an array")))
		return rc;
	h->have_graph = true;
	return graph_index(d, h);
}

/* ---- the document ------------------------------------------------------------------------- */

void tft_hd_free(struct hd *h)
{
	if (!h)
		return;
	for (uint32_t i = 0; h->ev && i < h->ntracks; i++)
		events_free(&h->ev[i]);
	free(h->ev);
	free(h->procs);
	free(h->tracks);
	free(h->steps);
	free(h->flows);
	free(h->argbuf);
	free(h->gn);
	free(h->gid);
	free(h->gnext);
	if (h->have_graph)
		tft_hmap_fini(&h->gbyname);
	tft_arena_free(&h->garena);
	tft_strtab_destroy(h->other);
	tft_strtab_destroy(h->strs);
	free(h);
}

static int read_document(struct rd *d, struct hd *h)
{
	struct tft_json_str k;
	bool is_static = false;
	int rc;

	if ((rc = enter(d, TFT_JSON_OBJECT, "expected a JSON object")))
		return rc;
	while ((rc = tft_json_next_key(&d->r, &k, d->err)) == 1) {
		if (key_is(&k, "tft_static")) {
			int64_t v;
			if ((rc = read_i64(d, &v, "\"tft_static\": expected 1")))
				return rc;
			if (v != 1)
				return bad(d, "\"tft_static\": expected 1 (a newer exporter's data?)");
			is_static = true;
		} else if (key_is(&k, "session"))
			rc = read_session(d, h);
		else if (key_is(&k, "strings"))
			rc = read_strings(d, h);
		else if (key_is(&k, "tracks"))
			rc = read_tracks(d, h);
		else if (key_is(&k, "flows"))
			rc = read_flows(d, h);
		else if (key_is(&k, "graph"))
			rc = read_graph(d, h);
		else if (key_is(&k, "truncated") || key_is(&k, "graph_truncated")) {
			int64_t v;
			if (!(rc = read_i64(d, &v, "a truncation count: expected an integer")) && v < 0)
				return bad(d, "a truncation count: expected an integer >= 0");
			if (!rc)
				snprintf(k.len == 9 ? h->truncated : h->graph_truncated, sizeof(h->truncated), "%lld",
					 (long long)v);
		}
		else
			rc = tft_json_skip(&d->r, NULL, d->err); /* advise, prof, graph, truncated */
		if (rc)
			return ended(d, rc, "truncated");
	}
	if (rc)
		return ended(d, rc, "truncated");
	if ((rc = tft_json_finish(&d->r, d->err)))
		return ended(d, rc, "trailing bytes after the object");
	if (!is_static || !h->have_session || !h->have_strings)
		return bad(d, "not a tftracer static export's data (\"tft_static\", \"session\", \"strings\")");
	if ((rc = check_indexes(d, h)))
		return rc;
	return renumber(d, h);
}

int tft_hd_read(struct hd *h, const char *json, size_t len, const char *name, struct tft_error *err)
{
	struct rd d = { .err = err, .name = name };
	int rc;

	tft_json_reader_init_mem(&d.r, json, len, NULL, NULL);
	rc = read_document(&d, h);
	tft_json_reader_fini(&d.r);
	if (rc && name && err && !err->file[0])
		tft_error_set_file(err, name); /* (the JSON reader's own errors) */
	return rc;
}
