/* SPDX-License-Identifier: MIT */
/*
 * The viewport answer (GET /api/viewport; query/viewport.h): what to draw
 * for a window, per track, in columns.
 * The store answers at the level of detail that matches the resolution;
 * on top of that, per depth, runs of sub-pixel events separated by
 * sub-pixel gaps are merged on the fly into one block (count = events, name
 * and category = the longest's), so a track yields O(width) items per depth
 * whatever the event density. Counter samples are reduced to one per pixel
 * bucket (first ts, last value, min, max), after the sample in force at t0.
 * Also its parameters' checks and refusals, and its per-reader scratch.
 */
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "core/hmap.h"
#include "core/model.h"
#include "core/strtab.h"
#include "query/viewport.h"
#include "store/lod.h"

#define VP_MAX_DEPTH 4096   /* deeper events are dropped and reported */
#define VP_MAX_TRACKS 4096  /* ids in one request */
#define VP_DEFAULT_WIDTH 1000
#define VP_MAX_WIDTH 10000

/* An item to draw (slice, instant or merged block). */
struct vp_item {
	int64_t ts, dur;
	uint32_t depth, name, cat, count; /* name, cat: string ids */
	uint8_t flags, ekind;
};

/* The open (not yet emitted) item of one depth. */
struct vp_pend {
	struct vp_item it;
	int64_t end;     /* ts + dur, saturated */
	int64_t longest; /* duration of the item that names (and categorises) the block */
	bool used, small;
};

/* A counter sample reduced over one pixel bucket. */
struct vp_sample {
	int64_t ts;            /* first sample in the bucket */
	double last, min, max; /* values over the bucket */
};

/* One counter bucket being reduced. */
struct vp_bucket {
	int64_t idx, ts;
	double last, min, max;
	bool used;
};

/* Per-reader buffers reused across requests (see tft_qry_viewport_write). */
struct tft_qry_viewport_scratch {
	struct vp_pend *pend;  /* owned; [depth] */
	size_t pend_cap;
	uint32_t max_used;     /* pend[0..max_used) may hold items */
	struct vp_item *items; /* owned */
	size_t nitems, items_cap;
	struct vp_sample *samples; /* owned: reduced counter samples */
	size_t nsamples, samples_cap;
	struct tft_hmap set;   /* owned: the set of string ids (id -> index in ids) */
	size_t set_len;
	uint32_t *ids;         /* owned: the set's members in insertion order */
	size_t ids_cap;
	int status;            /* first allocation failure */
};

/* Scan state for one track. */
struct vp_track {
	struct tft_qry_viewport_scratch *sc;
	int64_t t0, res;
	bool summary;   /* saw a level-of-detail block */
	uint64_t dropped;
	struct vp_bucket b;
};

struct tft_qry_viewport_scratch *tft_qry_viewport_scratch_new(void)
{
	struct tft_qry_viewport_scratch *sc = calloc(1, sizeof(*sc));

	if (sc)
		tft_hmap_init(&sc->set, 1);
	return sc;
}

void tft_qry_viewport_scratch_free(struct tft_qry_viewport_scratch *sc)
{
	if (!sc)
		return;
	free(sc->pend);
	free(sc->items);
	free(sc->samples);
	tft_hmap_fini(&sc->set);
	free(sc->ids);
	free(sc);
}

/* ---- string id set ------------------------------------------------------ */

static void set_reset(struct tft_qry_viewport_scratch *sc)
{
	tft_hmap_clear(&sc->set);
	sc->set_len = 0;
}

static void set_add(struct tft_qry_viewport_scratch *sc, uint32_t id)
{
	uint64_t k = id;
	uint32_t h = (uint32_t)tft_hash_u64(id);

	if (tft_hmap_get1(&sc->set, k, h) != TFT_HMAP_EMPTY)
		return;
	if (tft_grow_size((void **)&sc->ids, &sc->ids_cap, sc->set_len + 1, sizeof(*sc->ids))) {
		sc->status = TFT_ENOMEM;
		return;
	}
	if (tft_hmap_put(&sc->set, &k, h, (uint32_t)sc->set_len)) {
		sc->status = TFT_ENOMEM;
		return;
	}
	sc->ids[sc->set_len++] = id;
}

/* ---- slice tracks ------------------------------------------------------- */

static void emit(struct tft_qry_viewport_scratch *sc, const struct vp_item *it)
{
	if (tft_grow_size((void **)&sc->items, &sc->items_cap, sc->nitems + 1, sizeof(*sc->items))) {
		sc->status = TFT_ENOMEM;
		return;
	}
	sc->items[sc->nitems++] = *it;
}

static int64_t sat_add(int64_t a, int64_t b)
{
	int64_t r;

	return __builtin_add_overflow(a, b, &r) ? (b > 0 ? INT64_MAX : INT64_MIN) : r;
}

/* a - b, clamped to the int64 range (windows may reach INT64_MIN/MAX). */
static int64_t sat_sub(int64_t a, int64_t b)
{
	int64_t r;

	return __builtin_sub_overflow(a, b, &r) ? (a > b ? INT64_MAX : INT64_MIN) : r;
}

/* b - a < lim for a <= b, without overflow. */
static bool less_apart(int64_t a, int64_t b, int64_t lim)
{
	return b <= a || (uint64_t)b - (uint64_t)a < (uint64_t)lim;
}

static int on_slice(void *ctx, const struct tft_event *ev)
{
	struct vp_track *t = ctx;
	struct tft_qry_viewport_scratch *sc = t->sc;
	struct vp_pend *p;
	int64_t dur = ev->dur_ns > 0 ? ev->dur_ns : 0, end = sat_add(ev->ts_ns, dur);
	bool small = dur < t->res;
	uint32_t d = ev->depth;

	if (ev->kind == TFT_EV_COUNTER)
		return 0;
	if (ev->flags & TFT_EVF_SUMMARY)
		t->summary = true;
	if (d >= VP_MAX_DEPTH) {
		t->dropped += ev->count ? ev->count : 1;
		return 0;
	}
	if (d >= sc->pend_cap) {
		size_t old = sc->pend_cap;
		if (tft_grow_size((void **)&sc->pend, &sc->pend_cap, (size_t)d + 1, sizeof(*sc->pend))) {
			sc->status = TFT_ENOMEM;
			return TFT_ENOMEM;
		}
		memset(sc->pend + old, 0, (sc->pend_cap - old) * sizeof(*sc->pend));
	}
	if (d >= sc->max_used)
		sc->max_used = d + 1;
	p = &sc->pend[d];
	if (p->used && small && p->small && p->it.ekind == ev->kind && less_apart(p->end, ev->ts_ns, t->res)) {
		/* Sub-pixel item less than a pixel after the open block: fold it in. */
		if (end > p->end)
			p->end = end;
		p->it.count += ev->count ? ev->count : 1;
		if (dur > p->longest) {
			p->longest = dur;
			p->it.name = ev->name;
			p->it.cat = ev->cat;
		}
		p->it.flags |= (uint8_t)(TFT_EVF_SUMMARY | (ev->flags & TFT_EVF_UNCLOSED));
		return 0;
	}
	if (p->used) {
		p->it.dur = sat_sub(p->end, p->it.ts);
		emit(sc, &p->it);
	}
	p->used = true;
	p->small = small;
	p->end = end;
	p->longest = dur;
	p->it.ts = ev->ts_ns;
	p->it.dur = dur;
	p->it.depth = d;
	p->it.name = ev->name;
	p->it.cat = ev->cat;
	p->it.count = ev->count ? ev->count : 1;
	p->it.flags = ev->flags;
	p->it.ekind = ev->kind;
	return sc->status;
}

static int cmp_item(const void *a, const void *b)
{
	const struct vp_item *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->depth < y->depth ? -1 : x->depth > y->depth;
}

/* ,"key":[expr, ...]: expr over arr[0 .. n), each element as `var` (w and n in scope). */
#define COLUMN(key, arr, var, expr)                                        \
	do {                                                               \
		tft_json_write_raw(w, ",\"" key "\":[", sizeof(key) + 4);  \
		for (size_t i = 0; i < n; i++) {                           \
			const __typeof__(*(arr)) *var = &(arr)[i];         \
			if (i)                                             \
				tft_json_write_raw_char(w, ',');           \
			expr;                                              \
		}                                                          \
		tft_json_write_raw_char(w, ']');                           \
	} while (0)

/* has_cat: some item has a category; otherwise the `cat` column is left out. */
static void write_items(struct tft_json_writer *w, struct tft_qry_viewport_scratch *sc, int64_t base,
			bool has_cat)
{
	size_t n = sc->nitems;

	COLUMN("ts", sc->items, it, tft_json_write_raw_int(w, sat_sub(it->ts, base)));
	COLUMN("dur", sc->items, it, tft_json_write_raw_int(w, it->dur));
	COLUMN("depth", sc->items, it, tft_json_write_raw_uint(w, it->depth));
	COLUMN("name", sc->items, it, tft_json_write_raw_uint(w, it->name));
	COLUMN("count", sc->items, it, tft_json_write_raw_uint(w, it->count));
	COLUMN("flags", sc->items, it, tft_json_write_raw_uint(w, it->flags));
	COLUMN("ekind", sc->items, it, tft_json_write_raw_uint(w, it->ekind));
	if (has_cat)
		COLUMN("cat", sc->items, it, tft_json_write_raw_uint(w, it->cat));
}

/* ---- counter tracks ----------------------------------------------------- */

static void flush_bucket(struct vp_track *t)
{
	struct tft_qry_viewport_scratch *sc = t->sc;

	if (!t->b.used)
		return;
	t->b.used = false;
	if (tft_grow_size((void **)&sc->samples, &sc->samples_cap, sc->nsamples + 1, sizeof(*sc->samples))) {
		sc->status = TFT_ENOMEM;
		return;
	}
	sc->samples[sc->nsamples++] = (struct vp_sample){
		.ts = t->b.ts, .last = t->b.last, .min = t->b.min, .max = t->b.max
	};
}

static int on_counter(void *ctx, const struct tft_event *ev)
{
	struct vp_track *t = ctx;
	int64_t idx, ts = ev->ts_ns;

	if (ev->kind != TFT_EV_COUNTER)
		return 0;
	if (ev->flags & TFT_EVF_SUMMARY)
		t->summary = true;
	/*
	 * The scan only returns what reaches t0, so what starts before it is a summary
	 * block holding samples on both sides. Its samples from t0 on are the window's: it
	 * counts in the first bucket, at t0, and the bucket before t0 keeps the sample
	 * carry_in() found in force there, not the block's maximum.
	 */
	if (ts < t->t0)
		ts = t->t0;
	idx = (int64_t)(((uint64_t)ts - (uint64_t)t->t0) / (uint64_t)t->res);
	if (t->b.used && t->b.idx == idx) {
		t->b.last = ev->value;
		if (ev->value < t->b.min)
			t->b.min = ev->value;
		if (ev->value > t->b.max)
			t->b.max = ev->value;
		return 0;
	}
	flush_bucket(t);
	t->b.used = true;
	t->b.idx = idx;
	t->b.ts = ts;
	t->b.last = t->b.min = t->b.max = ev->value;
	return t->sc->status;
}

/* The last sample before t0 (the value in force at t0), for carry_in(). */
struct vp_last {
	int64_t before; /* samples at or after this are ignored */
	bool found;
	int64_t ts;
	double value;
};

static int on_last(void *ctx, const struct tft_event *ev)
{
	struct vp_last *l = ctx;

	if (ev->kind != TFT_EV_COUNTER || (ev->flags & TFT_EVF_SUMMARY) || ev->ts_ns >= l->before)
		return 0;
	if (!l->found || ev->ts_ns >= l->ts) {
		l->found = true;
		l->ts = ev->ts_ns;
		l->value = ev->value;
	}
	return 0;
}

/*
 * A counter holds its value until its next sample: the sample in force at t0 opens
 * the window (its own bucket, before t0), so a window with no sample of its own, or
 * the part of it before its first sample, is drawn with the right value. Raw samples
 * in windows growing back from t0 (one bucket, then x16): a dense counter costs one
 * small scan, a sparse one a few.
 */
static int carry_in(struct tft_session *s, uint32_t id, const struct tft_track *tr,
		    struct vp_track *t, struct tft_error *err)
{
	struct vp_last l = { .before = t->t0 };
	/* from one bucket (at most 1 ms: a wide bucket would decode all it covers) */
	int64_t w = t->res > 0 ? (t->res < 1000000 ? t->res : 1000000) : 1, lo, hi;
	int rc;

	if (t->t0 <= tr->min_ts_ns || tr->min_ts_ns > tr->max_ts_ns)
		return 0;
	/* past the track's end, its last sample is in force: start there */
	hi = t->t0 - 1 < tr->max_ts_ns ? t->t0 - 1 : tr->max_ts_ns;
	for (;;) {
		/* w is INT64_MAX once x16 would overflow: the last round starts at the track's
		 * start, however far back its previous sample is */
		lo = w == INT64_MAX ? tr->min_ts_ns : sat_sub(hi, w);
		if (lo < tr->min_ts_ns)
			lo = tr->min_ts_ns;
		rc = tft_session_scan(s, id, lo, hi, 0, on_last, &l, err);
		if (rc < 0)
			return rc;
		if (l.found || lo <= tr->min_ts_ns)
			break;
		w = w > INT64_MAX / 16 ? INT64_MAX : w * 16;
	}
	if (!l.found)
		return 0;
	t->b = (struct vp_bucket){ .idx = -1, .ts = l.ts, .last = l.value, .min = l.value,
				   .max = l.value, .used = true };
	return 0;
}

static void write_counters(struct tft_json_writer *w, struct tft_qry_viewport_scratch *sc, int64_t base)
{
	size_t n = sc->nsamples;

	COLUMN("ts", sc->samples, sm, tft_json_write_raw_int(w, sat_sub(sm->ts, base)));
	COLUMN("value", sc->samples, sm, tft_json_write_raw_double(w, sm->last, false));
	COLUMN("min", sc->samples, sm, tft_json_write_raw_double(w, sm->min, false));
	COLUMN("max", sc->samples, sm, tft_json_write_raw_double(w, sm->max, false));
}

/* ---- the response ------------------------------------------------------- */

/* The store level the resolution selects (0 = raw events). */
static int lod_level(int64_t res)
{
	int k = 0;

	while (k < TFT_LOD_LEVELS && tft_lod_gap_ns(k + 1) <= res)
		k++;
	return k;
}

static int write_track(struct tft_session *s, const struct tft_qry_viewport_req *req, uint32_t id,
		       int64_t res, struct tft_qry_viewport_scratch *sc, struct tft_json_writer *w,
		       struct tft_error *err)
{
	const struct tft_track *tr = tft_session_track(s, id);
	struct vp_track t = { .sc = sc, .t0 = req->t0_ns, .res = res };
	const char *kind;
	bool counter, has_cat = false;
	int rc;

	if (!tr)
		return tft_error_set(err, TFT_EINVAL, -1, "unknown track %u", id);
	counter = tr->kind == TFT_TRACK_COUNTER;
	kind = tft_track_kind_name((int)tr->kind);
	for (uint32_t d = 0; d < sc->max_used; d++) /* after a failed scan */
		sc->pend[d].used = false;
	sc->nitems = 0;
	sc->nsamples = 0;
	sc->max_used = 0;
	/* An empty track, or one that starts after the window, costs no scan. */
	if (tr->min_ts_ns > tr->max_ts_ns || tr->min_ts_ns > req->t1_ns)
		rc = 0;
	else if (counter && (rc = carry_in(s, id, tr, &t, err)) < 0)
		return rc;
	else
		rc = tft_session_scan(s, id, req->t0_ns, req->t1_ns, res, counter ? on_counter : on_slice,
				      &t, err);
	if (rc < 0)
		return rc;
	if (sc->status)
		return tft_error_set(err, sc->status, -1, "out of memory");
	if (counter) {
		flush_bucket(&t);
	} else {
		for (uint32_t d = 0; d < sc->max_used; d++) {
			struct vp_pend *p = &sc->pend[d];
			if (!p->used)
				continue;
			p->it.dur = sat_sub(p->end, p->it.ts);
			emit(sc, &p->it);
			p->used = false;
		}
		if (sc->nitems > 1)
			qsort(sc->items, sc->nitems, sizeof(*sc->items), cmp_item);
		for (size_t i = 0; i < sc->nitems; i++) {
			set_add(sc, sc->items[i].name);
			has_cat |= sc->items[i].cat != 0;
		}
		/* Most tracks of a runtime or TF session have no categories: an all-zero
		 * column would only add bytes, so it is sent only when one is named. */
		for (size_t i = 0; has_cat && i < sc->nitems; i++)
			set_add(sc, sc->items[i].cat);
	}
	if (sc->status)
		return tft_error_set(err, sc->status, -1, "out of memory");

	tft_json_write_raw(w, "{\"id\":", 6);
	tft_json_write_raw_uint(w, id);
	tft_json_write_raw(w, ",\"kind\":", 8);
	tft_json_write_raw_str(w, kind ? kind : "", kind ? strlen(kind) : 0);
	tft_json_write_raw(w, ",\"lod\":", 7);
	tft_json_write_raw_int(w, t.summary ? lod_level(res) : 0);
	if (t.dropped) {
		tft_json_write_raw(w, ",\"dropped\":", 11);
		tft_json_write_raw_uint(w, t.dropped);
	}
	if (counter)
		write_counters(w, sc, req->rel ? req->t0_ns : 0);
	else
		write_items(w, sc, req->rel ? req->t0_ns : 0, has_cat);
	tft_json_write_raw_char(w, '}');
	return 0;
}

int tft_qry_viewport_write(struct tft_session *s, const struct tft_qry_viewport_req *req,
			   struct tft_qry_viewport_scratch *sc, struct tft_json_writer *w,
			   struct tft_error *err)
{
	uint32_t nt = tft_session_track_count(s);
	size_t n = req->tracks ? req->ntracks : nt;
	int64_t span, res;
	int rc;

	if (req->t1_ns <= req->t0_ns || req->width_px == 0 || req->width_px > VP_MAX_WIDTH)
		return tft_error_set(err, TFT_EINVAL, -1, "need t0 < t1 and 1 <= width <= 10000");
	sc->status = 0;
	set_reset(sc);
	/* (t1 - t0) may overflow int64 for absurd windows: compute it unsigned. */
	span = (uint64_t)req->t1_ns - (uint64_t)req->t0_ns > (uint64_t)INT64_MAX
		       ? INT64_MAX
		       : req->t1_ns - req->t0_ns;
	res = span / (int64_t)req->width_px;
	if (res < 1)
		res = 1;

	tft_json_write_raw(w, "{\"t0\":", 6);
	tft_json_write_raw_int(w, req->t0_ns);
	tft_json_write_raw(w, ",\"t1\":", 6);
	tft_json_write_raw_int(w, req->t1_ns);
	tft_json_write_raw(w, ",\"resolution_ns\":", 17);
	tft_json_write_raw_int(w, res);
	if (req->rel)
		tft_json_write_raw(w, ",\"rel\":1", 8);
	tft_json_write_raw(w, ",\"tracks\":[", 11);
	for (size_t i = 0; i < n; i++) {
		uint32_t id = req->tracks ? req->tracks[i] : (uint32_t)i;
		if (i)
			tft_json_write_raw_char(w, ',');
		rc = write_track(s, req, id, res, sc, w, err);
		if (rc < 0)
			return rc;
	}
	tft_json_write_raw(w, "],\"strings\":{", 13);
	for (size_t i = 0; i < sc->set_len; i++) {
		size_t len = 0;
		const char *str = tft_session_str(s, sc->ids[i], &len);
		if (i)
			tft_json_write_raw_char(w, ',');
		tft_json_write_raw_char(w, '"');
		tft_json_write_raw_uint(w, sc->ids[i]);
		tft_json_write_raw(w, "\":", 2);
		tft_json_write_raw_str(w, str ? str : "", str ? len : 0);
	}
	tft_json_write_raw(w, "}}", 2);
	return w->status;
}

/* ---- the parameters ------------------------------------------------------ */

/* The parameters that need no session, in the order they are refused. */
static int check_args(const struct tft_query *q, int64_t *width, int64_t *rel, struct tft_qry_err *e)
{
	if (tft_query_get_i64(q, "width", 1, VP_MAX_WIDTH, VP_DEFAULT_WIDTH, width) != 0)
		return tft_qry_fail(e, 400, "width must be an integer in 1..10000");
	if (tft_query_get_i64(q, "rel", 0, 1, 0, rel) != 0)
		return tft_qry_fail(e, 400, "rel must be 0 or 1");
	return 0;
}

int tft_qry_viewport_check(const struct tft_query *q, struct tft_qry_err *e)
{
	int64_t width, rel;

	return check_args(q, &width, &rel, e);
}

int tft_qry_viewport(struct tft_session *s, struct tft_qry_viewport_scratch *sc,
		     const struct tft_query *q, struct tft_json_writer *w, struct tft_qry_err *e)
{
	struct tft_qry_viewport_req req;
	struct tft_session_summary sum;
	struct tft_error err;
	uint32_t *ids = NULL;
	int64_t width, rel, t0, t1;
	const char *list;
	size_t list_len;
	int rc;

	memset(&req, 0, sizeof(req));
	if (check_args(q, &width, &rel, e) != 0)
		return (int)e->status;
	memset(&sum, 0, sizeof(sum));
	tft_session_get_summary(s, &sum);
	if (tft_query_get_i64(q, "t0", INT64_MIN, INT64_MAX, sum.start_ns, &t0) != 0 ||
	    tft_query_get_i64(q, "t1", INT64_MIN, INT64_MAX, sum.end_ns, &t1) != 0)
		return tft_qry_fail(e, 400, "t0 and t1 must be integer nanoseconds");
	if (t1 < t0)
		return tft_qry_fail(e, 400, "t1 must not be before t0");
	if (t1 == t0)
		t1 = t0 == INT64_MAX ? t0 : t0 + 1; /* an empty session or a point: one nanosecond */
	if (t1 == t0)
		t0--;
	list = tft_query_get(q, "tracks", &list_len);
	if (list && list_len) {
		ids = malloc(VP_MAX_TRACKS * sizeof(*ids));
		if (!ids)
			return tft_qry_fail(e, 503, "out of memory");
		rc = tft_query_parse_u32_list(list, list_len, tft_session_track_count(s), ids,
					      VP_MAX_TRACKS);
		if (rc < 0) {
			free(ids);
			if (rc == TFT_ENOTFOUND)
				return tft_qry_fail(e, 404, "no such track");
			if (rc == TFT_ENOSPC)
				return tft_qry_fail(e, 400, "too many track ids");
			return tft_qry_fail(e, 400, "tracks must be a comma-separated list of track ids");
		}
		req.tracks = ids;
		req.ntracks = (size_t)rc;
	}
	req.t0_ns = t0;
	req.t1_ns = t1;
	req.width_px = (uint32_t)width;
	req.rel = rel != 0;
	tft_error_clear(&err);
	rc = tft_qry_viewport_write(s, &req, sc, w, &err);
	free(ids);
	return rc < 0 ? tft_qry_fail_status(e, rc, &err) : 0;
}
