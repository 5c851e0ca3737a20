/* SPDX-License-Identifier: MIT */
/*
 * The search answer (query/search.h) and its index (struct
 * tft_qry_search_index).
 * GET /api/search?q=TEXT&regex=0|1&exact=0|1&in=FIELDS&limit=N&after_ts=NS&after_track=ID
 * &after_depth=D&after_seq=K:
 * slices and instants whose name, category, argument values or track match
 * (a case-insensitive substring, a POSIX regex, or with exact=1 the whole
 * text, case included: "every slice named X", for names of any length),
 * in time order (FIELDS: a comma-separated subset of name,cat,args,track;
 * default name).
 *
 * The first search of a session generation builds an index with one full
 * scan: per (name id, category id, track) the number of events and the first
 * and last start time, and per track its event count and first event. A
 * query matches the distinct names and categories only, takes the exact
 * total from the index, and scans just the tracks (and the time range) where
 * matching ones occur, stopping each scan once it has `limit` results past
 * the cursor.
 *
 * Argument values have an index of their own, built by a second full scan on
 * the first query that asks for args (name searches never pay for it): per
 * (string value id, track) the first and last start time, and per track the
 * time range of events with numeric args. A query matches each distinct
 * string value once and scans only where matching values (or, when the text
 * could be part of a number, numeric args) occur. Those ranges are scanned
 * to their end whatever the limit: an event that matches by its args alone is
 * counted only by looking at it.
 */
#include <math.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "core/hmap.h"
#include "core/model.h"
#include "core/strtab.h"
#include "query/search.h"

#define SEARCH_MAX_Q 256
#define SEARCH_MAX_EXACT 4096 /* exact=1: a whole name (C++ kernel names run long) */
#define SEARCH_DEFAULT_LIMIT 1000
#define SEARCH_MAX_LIMIT 10000

/* in= fields (bits) and what a hit reports: the first that matched, in this order. */
enum { F_NAME = 1, F_CAT = 2, F_ARGS = 4, F_TRACK = 8 };
enum { HIT_NAME = 1, HIT_CAT, HIT_ARGS, HIT_TRACK };
static const char *const field_names[] = { "name", "cat", "args", "track" };

/* How a string id occurs as an argument value (idset flags, av_entry.flags). */
enum { AV_STR = 1, AV_JSON = 2 };

struct ix_entry {
	uint32_t name, cat, track; /* key */
	uint64_t count;
	int64_t min_ts, max_ts;
};

/* Distinct string ids: the list (with flag bits per id) and a hash set over it. */
struct idset {
	uint32_t *ids;  /* owned */
	uint8_t *flags; /* owned, parallel to ids */
	size_t n, cap;
	struct tft_hmap set; /* owned: id -> index into ids */
	uint32_t max;   /* largest id in the list (0 when empty) */
};

struct ix_track {
	uint64_t count;            /* slices and instants */
	int64_t first_ts, first_dur; /* its first event in start order (when count > 0) */
	uint32_t first_depth, first_name;
};

/* A string argument value on a track: when it occurs. */
struct av_entry {
	uint32_t str, track; /* key */
	uint8_t flags;       /* AV_STR, AV_JSON: the arg types it had there */
	int64_t min_ts, max_ts;
};

struct tft_qry_search_index {
	struct ix_entry *tab;    /* owned: len entries, in the order first seen */
	size_t cap, len;
	struct tft_hmap tab_ix;  /* owned: (name, cat, track) -> index into tab */
	struct idset names, cats;
	struct ix_track *tracks; /* owned: ntracks entries */
	uint32_t ntracks;
	/* Argument values, filled on the first query with in=args (tft_qry_search_prepare). */
	bool args_ready;
	struct av_entry *av;     /* owned: av_len entries, in the order first seen */
	size_t av_cap, av_len;
	struct tft_hmap av_ix;   /* owned: (str, track) -> index into av */
	struct idset argstr;     /* distinct string values, flags AV_* */
	int64_t *num_min, *num_max; /* owned, per track: events with numeric args (min > max: none) */
};

static void idset_init(struct idset *s)
{
	memset(s, 0, sizeof(*s));
	tft_hmap_init(&s->set, 1);
}

/* Free what s holds; it stays ready for adds. */
static void idset_free(struct idset *s)
{
	free(s->ids);
	free(s->flags);
	tft_hmap_fini(&s->set);
	s->ids = NULL;
	s->flags = NULL;
	s->n = s->cap = 0;
	s->max = 0;
}

static void args_free(struct tft_qry_search_index *ix)
{
	free(ix->av);
	tft_hmap_fini(&ix->av_ix);
	free(ix->num_min);
	free(ix->num_max);
	idset_free(&ix->argstr);
	ix->av = NULL;
	ix->num_min = ix->num_max = NULL;
	ix->av_cap = ix->av_len = 0;
	ix->args_ready = false;
}

void tft_qry_search_index_free(struct tft_qry_search_index *ix)
{
	if (!ix)
		return;
	free(ix->tab);
	tft_hmap_fini(&ix->tab_ix);
	idset_free(&ix->names);
	idset_free(&ix->cats);
	free(ix->tracks);
	args_free(ix);
	free(ix);
}

static int idset_add(struct idset *s, uint32_t id, uint8_t flag)
{
	uint64_t k = id;
	uint32_t h = (uint32_t)tft_hash_u64(id), v = tft_hmap_get1(&s->set, k, h);

	if (v != TFT_HMAP_EMPTY) {
		s->flags[v] |= flag;
		return 0;
	}
	if (s->n == s->cap) {
		/* two arrays of one capacity: s->cap moves when both grew */
		size_t ci = s->cap, cf = s->cap;
		if (tft_grow_size_ex((void **)&s->ids, &ci, s->n + 1, sizeof(*s->ids), 1024, 0) ||
		    tft_grow_size_ex((void **)&s->flags, &cf, s->n + 1, sizeof(*s->flags), 1024, 0))
			return TFT_ENOMEM;
		s->cap = ci;
	}
	if (tft_hmap_put(&s->set, &k, h, (uint32_t)s->n))
		return TFT_ENOMEM;
	s->ids[s->n] = id;
	s->flags[s->n] = flag;
	s->n++;
	if (id > s->max)
		s->max = id;
	return 0;
}

static uint32_t ix_hash(const uint64_t k[2])
{
	return (uint32_t)tft_hash_u64(k[0] ^ k[1] * 0x9e3779b97f4a7c15ULL);
}

/* The entry of ev's (name, cat, track), added if new; NULL on ENOMEM. */
static struct ix_entry *ix_entry_of(struct tft_qry_search_index *ix, const struct tft_event *ev)
{
	uint64_t k[2] = { (uint64_t)ev->name << 32 | ev->track, ev->cat };
	uint32_t h = ix_hash(k), i = tft_hmap_get2(&ix->tab_ix, k, h);

	if (i != TFT_HMAP_EMPTY)
		return &ix->tab[i];
	i = (uint32_t)ix->len;
	if ((ix->len == ix->cap &&
	     tft_grow_size_ex((void **)&ix->tab, &ix->cap, ix->len + 1, sizeof(*ix->tab), 4096, 0)) ||
	    idset_add(&ix->names, ev->name, 0) != 0 || idset_add(&ix->cats, ev->cat, 0) != 0 ||
	    tft_hmap_put(&ix->tab_ix, k, h, i) != 0)
		return NULL;
	ix->tab[i] = (struct ix_entry){ ev->name, ev->cat, ev->track, 0, ev->ts_ns, ev->ts_ns };
	ix->len++;
	return &ix->tab[i];
}

struct ix_build {
	struct tft_qry_search_index *ix;
	struct ix_entry *last; /* the entry of the previous event (runs of one name): tab moves only
				* when an entry is added, which sets it anew */
};

static int on_index(void *ctx, const struct tft_event *ev)
{
	struct ix_build *b = ctx;
	struct tft_qry_search_index *ix = b->ix;
	struct ix_entry *e = b->last;
	struct ix_track *t;

	if (ev->kind == TFT_EV_COUNTER || (ev->flags & TFT_EVF_SUMMARY) || ev->track >= ix->ntracks)
		return 0;
	if (!e || e->name != ev->name || e->cat != ev->cat || e->track != ev->track) {
		if (!(e = ix_entry_of(ix, ev)))
			return TFT_ENOMEM;
		b->last = e;
	}
	e->count++;
	if (ev->ts_ns < e->min_ts)
		e->min_ts = ev->ts_ns;
	if (ev->ts_ns > e->max_ts)
		e->max_ts = ev->ts_ns;
	t = &ix->tracks[ev->track];
	if (t->count++ == 0) {
		t->first_ts = ev->ts_ns;
		t->first_dur = ev->dur_ns;
		t->first_depth = ev->depth;
		t->first_name = ev->name;
	}
	return 0;
}

struct tft_qry_search_index *tft_qry_search_index_new(struct tft_session *s, struct tft_error *err)
{
	struct tft_qry_search_index *ix = calloc(1, sizeof(*ix));
	uint32_t nt = tft_session_track_count(s);
	int rc = 0;

	if (ix) {
		tft_hmap_init(&ix->tab_ix, 2);
		tft_hmap_init(&ix->av_ix, 1);
		idset_init(&ix->names);
		idset_init(&ix->cats);
		idset_init(&ix->argstr);
	}
	if (!ix || !(ix->tracks = calloc(nt ? nt : 1, sizeof(*ix->tracks)))) {
		tft_qry_search_index_free(ix);
		tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
		return NULL;
	}
	ix->ntracks = nt;
	for (uint32_t t = 0; t < nt && rc == 0; t++) {
		const struct tft_track *tr = tft_session_track(s, t);
		struct ix_build b = { ix, NULL };
		if (!tr || tr->kind == TFT_TRACK_COUNTER || tr->slices + tr->instants == 0)
			continue;
		rc = tft_session_scan(s, t, INT64_MIN, INT64_MAX, 0, on_index, &b, err);
	}
	if (rc != 0) {
		tft_error_set(err, rc < 0 ? rc : TFT_EIO, -1, "cannot build the search index");
		tft_qry_search_index_free(ix);
		return NULL;
	}
	return ix;
}

/* ---- the argument values -------------------------------------------------- */

static int av_note(struct tft_qry_search_index *ix, uint32_t str, uint32_t track, int64_t ts, uint8_t flag)
{
	uint64_t k = (uint64_t)str << 32 | track;
	uint32_t h = (uint32_t)tft_hash_u64(k), i = tft_hmap_get1(&ix->av_ix, k, h);
	struct av_entry *e;

	if (i == TFT_HMAP_EMPTY) {
		i = (uint32_t)ix->av_len;
		if ((ix->av_len == ix->av_cap &&
		     tft_grow_size_ex((void **)&ix->av, &ix->av_cap, ix->av_len + 1, sizeof(*ix->av), 4096, 0)) ||
		    tft_hmap_put(&ix->av_ix, &k, h, i) != 0)
			return TFT_ENOMEM;
		ix->av[i] = (struct av_entry){ str, track, 0, ts, ts };
		ix->av_len++;
	}
	e = &ix->av[i];
	if (!(e->flags & flag)) {
		if (idset_add(&ix->argstr, str, flag) != 0)
			return TFT_ENOMEM;
		e->flags |= flag;
	}
	if (ts < e->min_ts)
		e->min_ts = ts;
	if (ts > e->max_ts)
		e->max_ts = ts;
	return 0;
}

static int on_args(void *ctx, const struct tft_event *ev)
{
	struct tft_qry_search_index *ix = ctx;
	bool num = false;

	if (ev->kind == TFT_EV_COUNTER || (ev->flags & TFT_EVF_SUMMARY) || ev->track >= ix->ntracks)
		return 0;
	for (uint16_t k = 0; k < ev->nargs; k++) {
		const struct tft_arg *a = &ev->args[k];
		if (a->type == TFT_ARG_STR || a->type == TFT_ARG_JSON) {
			if (av_note(ix, a->v.str, ev->track, ev->ts_ns, a->type == TFT_ARG_JSON ? AV_JSON : AV_STR))
				return TFT_ENOMEM;
		} else if (a->type == TFT_ARG_INT || (a->type == TFT_ARG_DOUBLE && isfinite(a->v.d))) {
			num = true;
		}
	}
	if (num) {
		if (ev->ts_ns < ix->num_min[ev->track])
			ix->num_min[ev->track] = ev->ts_ns;
		if (ev->ts_ns > ix->num_max[ev->track])
			ix->num_max[ev->track] = ev->ts_ns;
	}
	return 0;
}

/* Fill the argument part of ix (one scan of every track); on failure ix is as before. */
static int build_args(struct tft_qry_search_index *ix, struct tft_session *s, struct tft_error *err)
{
	size_t nt = ix->ntracks ? ix->ntracks : 1;
	int rc = 0;

	ix->num_min = malloc(nt * sizeof(*ix->num_min));
	ix->num_max = malloc(nt * sizeof(*ix->num_max));
	if (!ix->num_min || !ix->num_max) {
		args_free(ix);
		tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
		return TFT_ENOMEM;
	}
	for (size_t t = 0; t < nt; t++) {
		ix->num_min[t] = INT64_MAX;
		ix->num_max[t] = INT64_MIN;
	}
	for (uint32_t t = 0; t < ix->ntracks && rc == 0; t++)
		if (ix->tracks[t].count)
			rc = tft_session_scan(s, t, INT64_MIN, INT64_MAX, 0, on_args, ix, err);
	if (rc != 0) {
		args_free(ix);
		tft_error_set(err, rc < 0 ? rc : TFT_EIO, -1, "cannot build the search index");
		return rc < 0 ? rc : TFT_EIO;
	}
	ix->args_ready = true;
	return 0;
}

/* ---- a query ------------------------------------------------------------ */

struct hit {
	int64_t ts, dur;
	uint32_t track, depth, name;
	uint32_t seq;  /* its ordinal among the track's events starting at ts at its depth */
	uint8_t field; /* HIT_* */
};

/* A backslash before 1..9 anywhere (also where it would be literal: refused all the same). */
static bool has_backref(const char *q, size_t n)
{
	for (size_t i = 0; i + 1 < n; i++) {
		if (q[i] != '\\')
			continue;
		if (q[i + 1] >= '1' && q[i + 1] <= '9')
			return true;
		i++; /* an escaped character: a backslash, then 1, is no back-reference */
	}
	return false;
}

/* The query text: a case-insensitive substring or a compiled regex. */
struct matcher {
	const char *q; /* NUL-terminated */
	size_t qlen;
	bool regex;
	bool exact; /* the whole text, case-sensitive */
	regex_t re;
	char *buf;     /* owned: JSON text compacted for matching */
	size_t buf_cap;
};

static bool text_match(const struct matcher *m, const char *s, size_t len)
{
	if (m->exact)
		return len == m->qlen && memcmp(s, m->q, len) == 0;
	return m->regex ? regexec(&m->re, s, 0, NULL, 0) == 0 : tft_query_find_icase(s, len, m->q, m->qlen) >= 0;
}

/* JSON values (arrays, objects) match as their compact text, as JSON.stringify writes them. */
static int json_match(struct matcher *m, const char *s, size_t len, bool *out)
{
	if (len + 1 > m->buf_cap) {
		char *nb = realloc(m->buf, len + 1);
		if (!nb)
			return TFT_ENOMEM;
		m->buf = nb;
		m->buf_cap = len + 1;
	}
	len = tft_query_json_compact(m->buf, s, len);
	m->buf[len] = '\0';
	*out = text_match(m, m->buf, len);
	return 0;
}

/*
 * Numbers already matched, by value (direct-mapped): args repeat their values
 * (device, stream, sizes), and a regex costs far more than this lookup.
 */
#define NUM_MEMO 4096
struct num_memo {
	uint64_t bits;  /* the int64 or the double's bits */
	uint8_t type;   /* TFT_ARG_INT or TFT_ARG_DOUBLE; 0 = empty */
	uint8_t hit;
};

struct query {
	unsigned fields;         /* F_* */
	const uint8_t *sm;       /* borrowed: sm[id] != 0 for matching names and categories */
	uint32_t sm_len;
	const uint8_t *am;       /* borrowed: am[id] & AV_STR / AV_JSON: the value matches as that type */
	uint32_t am_len;
	const struct matcher *m; /* numbers are formatted and matched when `numbers` */
	bool numbers;
	struct num_memo *memo;   /* owned, NUM_MEMO entries when `numbers` */
	int64_t after_ts;        /* cursor: results are > (after_ts, after_track, after_depth, after_seq) */
	uint32_t after_track, after_depth, after_seq;
	bool has_cursor;
	size_t limit;
	struct hit *hits;        /* owned */
	size_t nhits, cap;
	/* the track being scanned */
	bool track_hit;          /* its name or its process name matches: every event does */
	bool counting;           /* count events matching by args alone, up to count_until */
	int64_t count_until;
	bool track_full;         /* it gave `limit` hits: only counting goes on */
	size_t track_hits;       /* hits from it */
	uint64_t args_total;     /* events (of unmatched tracks) that match by args alone */
	bool cut;                /* a scan stopped collecting early: more results exist */
	/* per depth of the track being scanned: the start of its current run of events
	 * starting together, and how many of them came so far (each event's seq) */
	int64_t *run_ts;         /* owned */
	uint32_t *run_n;         /* owned */
	uint32_t run_cap;
	int status;
};

static bool after_cursor(const struct query *q, int64_t ts, uint32_t track, uint32_t depth, uint32_t seq)
{
	if (!q->has_cursor)
		return true;
	if (ts != q->after_ts)
		return ts > q->after_ts;
	if (track != q->after_track)
		return track > q->after_track;
	if (depth != q->after_depth)
		return depth > q->after_depth;
	return q->after_seq != UINT32_MAX && seq > q->after_seq;
}

/*
 * The seq of ev (as GET /api/slice's): a scan returns the events starting
 * together at a depth consecutively among that depth's, in the store's order.
 */
static int run_seq(struct query *q, const struct tft_event *ev, uint32_t *seq)
{
	uint32_t d = ev->depth;

	if (d >= q->run_cap) {
		/* two arrays of one capacity: run_cap moves when both grew */
		uint32_t ct = q->run_cap, nc = q->run_cap;

		if (tft_grow_ex((void **)&q->run_ts, &ct, (uint64_t)d + 1, sizeof(*q->run_ts), 16, 0) ||
		    tft_grow_ex((void **)&q->run_n, &nc, (uint64_t)d + 1, sizeof(*q->run_n), 16, 0))
			return TFT_ENOMEM;
		for (uint32_t i = q->run_cap; i < nc; i++) {

			q->run_ts[i] = INT64_MIN;
			q->run_n[i] = UINT32_MAX; /* no run yet (INT64_MIN is a start too) */
		}
		q->run_cap = nc;
	}
	if (q->run_n[d] != UINT32_MAX && q->run_ts[d] == ev->ts_ns) {
		q->run_n[d]++;
	} else {
		q->run_ts[d] = ev->ts_ns;
		q->run_n[d] = 0;
	}
	*seq = q->run_n[d];
	return 0;
}

static bool num_match(const struct query *q, const struct tft_arg *a)
{
	char buf[64];
	size_t n;
	uint64_t bits;
	struct num_memo *e;

	if (a->type == TFT_ARG_INT) {
		bits = (uint64_t)a->v.i;
	} else {
		if (!isfinite(a->v.d))
			return false;
		memcpy(&bits, &a->v.d, sizeof(bits));
	}
	e = &q->memo[tft_hash_u64(bits ^ a->type) & (NUM_MEMO - 1)];
	if (e->type == a->type && e->bits == bits)
		return e->hit;
	if (a->type == TFT_ARG_INT)
		n = tft_json_fmt_int(buf, a->v.i);
	else
		n = tft_json_fmt_double(buf, a->v.d, false);
	buf[n] = '\0';
	*e = (struct num_memo){ bits, (uint8_t)a->type, text_match(q->m, buf, n) };
	return e->hit;
}

static bool args_match(const struct query *q, const struct tft_event *ev)
{
	for (uint16_t k = 0; k < ev->nargs; k++) {
		const struct tft_arg *a = &ev->args[k];
		switch (a->type) {
		case TFT_ARG_STR:
			if (a->v.str < q->am_len && (q->am[a->v.str] & AV_STR))
				return true;
			break;
		case TFT_ARG_JSON:
			if (a->v.str < q->am_len && (q->am[a->v.str] & AV_JSON))
				return true;
			break;
		case TFT_ARG_INT:
		case TFT_ARG_DOUBLE:
			if (q->numbers && num_match(q, a))
				return true;
			break;
		default:
			break;
		}
	}
	return false;
}

/* HIT_* for the first field of ev that matches, 0 if none. */
static int classify(const struct query *q, const struct tft_event *ev)
{
	if ((q->fields & F_NAME) && ev->name < q->sm_len && q->sm[ev->name])
		return HIT_NAME;
	if ((q->fields & F_CAT) && ev->cat < q->sm_len && q->sm[ev->cat])
		return HIT_CAT;
	if ((q->fields & F_ARGS) && ev->nargs && args_match(q, ev))
		return HIT_ARGS;
	return q->track_hit ? HIT_TRACK : 0;
}

static int add_hit(struct query *q, int64_t ts, int64_t dur, uint32_t track, uint32_t depth,
		   uint32_t seq, uint32_t name, int field)
{
	if (tft_grow_size_ex((void **)&q->hits, &q->cap, q->nhits + 1, sizeof(*q->hits), 256, 0)) {
		q->status = TFT_ENOMEM;
		return TFT_ENOMEM;
	}

	q->hits[q->nhits++] = (struct hit){ ts, dur, track, depth, name, seq, (uint8_t)field };
	return 0;
}

static int on_match(void *ctx, const struct tft_event *ev)
{
	struct query *q = ctx;
	uint32_t seq;
	int f;

	if (ev->kind == TFT_EV_COUNTER || (ev->flags & TFT_EVF_SUMMARY))
		return 0;
	if (q->track_full && ev->ts_ns > q->count_until)
		return 1;
	if (run_seq(q, ev, &seq) != 0) { /* (every event counts, matching or not) */
		q->status = TFT_ENOMEM;
		return TFT_ENOMEM;
	}
	f = classify(q, ev);
	if (!f)
		return 0;
	if (f == HIT_ARGS && q->counting)
		q->args_total++;
	if (q->track_full || !after_cursor(q, ev->ts_ns, ev->track, ev->depth, seq))
		return 0;
	/* In start order: once this track gave `limit` hits, later ones cannot make the cut. */
	if (q->track_hits >= q->limit && ev->ts_ns > q->hits[q->nhits - 1].ts) {
		q->cut = true;
		if (!q->counting || ev->ts_ns > q->count_until)
			return 1;
		q->track_full = true;
		return 0;
	}
	if (add_hit(q, ev->ts_ns, ev->dur_ns, ev->track, ev->depth, seq, ev->name, f) != 0)
		return TFT_ENOMEM;
	q->track_hits++;
	return 0;
}

static int cmp_hit(const void *a, const void *b)
{
	const struct hit *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->track != y->track)
		return x->track < y->track ? -1 : 1;
	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Mark the ids of set in sm (sized by the largest id) whose text matches. */
static void match_set(struct tft_session *s, const struct idset *set, const struct matcher *m, uint8_t *sm)
{
	for (size_t i = 0; i < set->n; i++) {
		uint32_t id = set->ids[i];
		size_t len = 0;
		const char *str;
		if (sm[id])
			continue;
		str = tft_session_str(s, id, &len);
		if (str && text_match(m, str, len))
			sm[id] = 1;
	}
}

/* am[id]: AV_STR when the value's text matches, AV_JSON when its compact JSON text does. */
static int match_args(struct tft_session *s, const struct idset *set, struct matcher *m, uint8_t *am)
{
	for (size_t i = 0; i < set->n; i++) {
		uint32_t id = set->ids[i];
		size_t len = 0;
		const char *str = tft_session_str(s, id, &len);
		bool hit;
		if (!str)
			continue;
		if ((set->flags[i] & AV_STR) && text_match(m, str, len))
			am[id] |= AV_STR;
		if (set->flags[i] & AV_JSON) {
			if (json_match(m, str, len, &hit) != 0)
				return TFT_ENOMEM;
			if (hit)
				am[id] |= AV_JSON;
		}
	}
	return 0;
}

/* tm[t] = 1 for the tracks with events whose name or process name matches. */
static int match_tracks(struct tft_session *s, const struct tft_qry_search_index *ix, const struct matcher *m,
			uint8_t *tm)
{
	uint32_t np = tft_session_process_count(s);
	uint8_t *pm = calloc(np ? np : 1, 1); /* per process: 0 unknown, 1 no, 2 yes */

	if (!pm)
		return TFT_ENOMEM;
	for (uint32_t t = 0; t < ix->ntracks; t++) {
		const struct tft_track *tr = tft_session_track(s, t);
		size_t len = 0;
		const char *str;
		if (!tr || !ix->tracks[t].count)
			continue;
		str = tft_session_str(s, tr->name, &len);
		if (str && text_match(m, str, len)) {
			tm[t] = 1;
			continue;
		}
		if (tr->process >= np)
			continue;
		if (!pm[tr->process]) {
			const struct tft_process *p = tft_session_process(s, tr->process);
			str = p ? tft_session_str(s, p->name, &len) : NULL;
			pm[tr->process] = str && text_match(m, str, len) ? 2 : 1;
		}
		tm[t] = pm[tr->process] == 2;
	}
	free(pm);
	return 0;
}

/* Per track: the range to scan for name/category hits, and where args may match. */
struct plan {
	int64_t t0, t1; /* events matching by name or category start in [t0, t1] */
	int64_t a0, a1; /* events matching by args alone start in [a0, a1] */
};

static void widen(int64_t *lo, int64_t *hi, int64_t a, int64_t b)
{
	if (a < *lo)
		*lo = a;
	if (b > *hi)
		*hi = b;
}

/*
 * Fill q->hits (unsorted) and *total. The exact total: every event of a
 * matching track, the index's counts of matching (name, category) pairs on
 * the others, and the events there that match by args alone (counted by the
 * scans).
 */
static int run_query(struct tft_session *s, const struct tft_qry_search_index *ix, struct matcher *m,
		     struct query *q, uint64_t *total, struct tft_error *err)
{
	uint32_t nt = ix->ntracks, sm_len = 0;
	uint8_t *sm = NULL, *am = NULL, *tm = NULL;
	struct plan *plan = NULL;
	int rc = 0;

	*total = 0;
	if (q->fields & F_NAME)
		sm_len = ix->names.max + 1;
	if ((q->fields & F_CAT) && ix->cats.max + 1 > sm_len)
		sm_len = ix->cats.max + 1;
	if (!(sm = calloc(sm_len ? sm_len : 1, 1)) || !(tm = calloc(nt ? nt : 1, 1)) ||
	    !(plan = malloc((nt ? nt : 1) * sizeof(*plan)))) {
		rc = TFT_ENOMEM;
		goto out;
	}
	if (q->fields & F_NAME)
		match_set(s, &ix->names, m, sm);
	if (q->fields & F_CAT)
		match_set(s, &ix->cats, m, sm);
	q->sm = sm;
	q->sm_len = sm_len;
	if (q->fields & F_ARGS) {
		q->am_len = ix->argstr.max + 1;
		if (!(am = calloc(q->am_len, 1)) || match_args(s, &ix->argstr, m, am) != 0) {
			rc = TFT_ENOMEM;
			goto out;
		}
		q->am = am;
		/* A regex may match digits whatever it says: format numbers for it too. */
		q->numbers = m->regex || tft_query_may_match_number(m->q, m->qlen);
		if (q->numbers && !(q->memo = calloc(NUM_MEMO, sizeof(*q->memo)))) {
			rc = TFT_ENOMEM;
			goto out;
		}
	}
	if ((q->fields & F_TRACK) && (rc = match_tracks(s, ix, m, tm)) != 0)
		goto out;
	q->m = m;

	if (q->fields == F_TRACK) {
		/* Tracks alone: one result per matching track, its first event. */
		for (uint32_t t = 0; t < nt; t++) {
			const struct ix_track *it = &ix->tracks[t];
			if (!tm[t])
				continue;
			(*total)++;
			/* (the track's first event: the first of any run it starts, seq 0) */
			if (after_cursor(q, it->first_ts, t, it->first_depth, 0) &&
			    (rc = add_hit(q, it->first_ts, it->first_dur, t, it->first_depth, 0, it->first_name,
					  HIT_TRACK)) != 0)
				goto out;
		}
		goto out;
	}

	for (uint32_t t = 0; t < nt; t++)
		plan[t] = (struct plan){ INT64_MAX, INT64_MIN, INT64_MAX, INT64_MIN };
	for (size_t i = 0; i < ix->len; i++) {
		const struct ix_entry *e = &ix->tab[i];
		if (tm[e->track])
			continue;
		if (!(((q->fields & F_NAME) && sm[e->name]) || ((q->fields & F_CAT) && sm[e->cat])))
			continue;
		*total += e->count;
		widen(&plan[e->track].t0, &plan[e->track].t1, e->min_ts, e->max_ts);
	}
	if (q->fields & F_ARGS) {
		for (size_t i = 0; i < ix->av_len; i++) {
			const struct av_entry *e = &ix->av[i];
			if (!tm[e->track] && (am[e->str] & e->flags))
				widen(&plan[e->track].a0, &plan[e->track].a1, e->min_ts, e->max_ts);
		}
		for (uint32_t t = 0; q->numbers && t < nt; t++)
			if (!tm[t] && ix->num_min[t] <= ix->num_max[t])
				widen(&plan[t].a0, &plan[t].a1, ix->num_min[t], ix->num_max[t]);
	}

	/* One scan per track, in track order. */
	for (uint32_t t = 0; t < nt && rc == 0; t++) {
		const struct plan *p = &plan[t];
		int64_t lo = p->t0, hi = p->t1;

		q->track_hit = tm[t] != 0;
		for (uint32_t d = 0; d < q->run_cap; d++)
			q->run_n[d] = UINT32_MAX; /* runs restart with each track */
		q->counting = false;
		q->track_full = false;
		q->track_hits = 0;
		if (q->track_hit) {
			*total += ix->tracks[t].count;
			lo = INT64_MIN;
			hi = INT64_MAX;
		} else if (p->a0 <= p->a1) {
			q->counting = true;
			q->count_until = p->a1;
		}
		/* Name and category hits are wanted only past the cursor; args hits are counted from a0. */
		if (q->has_cursor && q->after_ts > lo)
			lo = q->after_ts;
		if (q->counting)
			widen(&lo, &hi, p->a0, p->a1);
		if (lo > hi)
			continue;
		rc = tft_session_scan(s, t, lo, hi, 0, on_match, q, err);
		if (rc > 0)
			rc = 0;
		if (q->status)
			rc = q->status;
	}
	*total += q->args_total;
out:
	free(sm);
	free(am);
	free(tm);
	free(plan);
	free(q->memo);
	free(q->run_ts);
	free(q->run_n);
	q->sm = q->am = NULL;
	q->memo = NULL;
	q->run_ts = NULL;
	q->run_n = NULL;
	q->run_cap = 0;
	return rc;
}

/* ---- the answer ------------------------------------------------------------ */

/* The checked parameters: the text (qz: its copy), how it matches, which fields, the cursor. */
struct search_args {
	char qz[SEARCH_MAX_EXACT + 1];
	struct matcher m; /* m.re compiled when m.regex: args_fini */
	struct query qu;  /* fields, cursor and limit set */
};

static void args_fini(struct search_args *a)
{
	if (a->m.regex)
		regfree(&a->m.re);
	free(a->m.buf);
	free(a->qu.hits);
}

/* Whether q asks for the args field (an `in` that does not parse asks for nothing). */
static bool wants_args(const struct tft_query *q)
{
	size_t inlen = 0;
	const char *in = tft_query_get(q, "in", &inlen);
	unsigned fields = F_NAME;

	return in && tft_query_parse_words(in, inlen, field_names, 4, &fields) == 0 && (fields & F_ARGS);
}

/* Check q's parameters in the order they are refused; on success a is ready (args_fini it). */
static int parse_args(const struct tft_query *q, struct search_args *a, struct tft_qry_err *e)
{
	size_t qlen, inlen = 0;
	int64_t regex, exact, limit, at, atr, adp, asq;
	unsigned fields = F_NAME;
	const char *text = tft_query_get(q, "q", &qlen);
	const char *in = tft_query_get(q, "in", &inlen);

	memset(&a->m, 0, sizeof(a->m));
	memset(&a->qu, 0, sizeof(a->qu));
	if (!text || qlen == 0)
		return tft_qry_fail(e, 400, "q is required");
	if (tft_query_get_i64(q, "exact", 0, 1, 0, &exact) != 0)
		return tft_qry_fail(e, 400, "exact must be 0 or 1");
	if (qlen > (exact ? SEARCH_MAX_EXACT : SEARCH_MAX_Q) || memchr(text, '\0', qlen))
		return tft_qry_fail(e, 400, exact ? "q is limited to 4096 bytes with exact=1"
						  : "q is limited to 256 bytes of text");
	if (tft_query_get_i64(q, "regex", 0, 1, 0, &regex) != 0 ||
	    tft_query_get_i64(q, "limit", 1, SEARCH_MAX_LIMIT, SEARCH_DEFAULT_LIMIT, &limit) != 0 ||
	    tft_query_get_i64(q, "after_ts", INT64_MIN, INT64_MAX, INT64_MIN, &at) != 0 ||
	    tft_query_get_i64(q, "after_track", 0, UINT32_MAX, UINT32_MAX, &atr) != 0 ||
	    tft_query_get_i64(q, "after_depth", 0, UINT32_MAX, UINT32_MAX, &adp) != 0 ||
	    tft_query_get_i64(q, "after_seq", 0, UINT32_MAX - 1, UINT32_MAX, &asq) != 0)
		return tft_qry_fail(e, 400, "regex, limit, after_ts, after_track, after_depth, after_seq "
				    "must be integers in range");
	if (in && tft_query_parse_words(in, inlen, field_names, 4, &fields) != 0)
		return tft_qry_fail(e, 400, "in must be a comma-separated list of name, cat, args, track");

	memcpy(a->qz, text, qlen);
	a->qz[qlen] = '\0';
	a->m.q = a->qz;
	a->m.qlen = qlen;
	a->m.exact = exact != 0;
	if (a->m.exact && regex)
		return tft_qry_fail(e, 400, "exact=1 and regex=1 exclude each other");
	/*
	 * No back-references: POSIX leaves \1..\9 undefined in extended
	 * expressions, and glibc matches them by backtracking, in time
	 * exponential in the pattern (BENCHMARKS.md, "Server and runtime:
	 * design measurements").
	 */
	if (regex && has_backref(a->qz, qlen))
		return tft_qry_fail(e, 400, "back-references (\\1 to \\9) are not supported in a regex");
	if (regex && regcomp(&a->m.re, a->qz, REG_EXTENDED | REG_ICASE | REG_NOSUB) != 0)
		return tft_qry_fail(e, 400, "not a valid POSIX extended regular expression");
	a->m.regex = regex != 0; /* (from here on a->m.re is to be freed) */

	a->qu.fields = fields;
	/* Results are strictly after (after_ts, after_track, after_depth, after_seq) in (ts,
	 * track, depth, seq) order; an omitted after_track, after_depth or after_seq means
	 * "past all of them". */
	a->qu.has_cursor = tft_query_get(q, "after_ts", NULL) != NULL;
	a->qu.after_ts = at;
	a->qu.after_track = (uint32_t)atr;
	a->qu.after_depth = (uint32_t)adp;
	a->qu.after_seq = (uint32_t)asq;
	a->qu.limit = (size_t)limit;
	return 0;
}

int tft_qry_search_check(const struct tft_query *q, struct tft_qry_err *e)
{
	struct search_args a;
	int rc = parse_args(q, &a, e);

	if (rc == 0)
		args_fini(&a);
	return rc;
}

int tft_qry_search_prepare(struct tft_qry_search_index *ix, struct tft_session *s,
			   const struct tft_query *q, struct tft_error *err)
{
	if (!wants_args(q) || ix->args_ready)
		return 0;
	return build_args(ix, s, err);
}

static void write_hits(struct tft_json_writer *w, struct tft_session *s, struct query *qu, uint64_t total)
{
	size_t n = qu->nhits < qu->limit ? qu->nhits : qu->limit;

	if (qu->nhits > 1)
		qsort(qu->hits, qu->nhits, sizeof(*qu->hits), cmp_hit);
	tft_json_write_begin_object(w);
	tft_json_write_key(w, "total");
	tft_json_write_uint(w, total);
	tft_json_write_key(w, "results");
	tft_json_write_begin_array(w);
	for (size_t i = 0; i < n; i++) {
		const struct hit *h = &qu->hits[i];
		size_t len = 0;
		const char *name = tft_session_str(s, h->name, &len);
		tft_json_write_begin_object(w);
		tft_json_write_key(w, "track");
		tft_json_write_uint(w, h->track);
		tft_json_write_key(w, "ts");
		tft_json_write_int(w, h->ts);
		tft_json_write_key(w, "dur");
		tft_json_write_int(w, h->dur);
		tft_json_write_key(w, "depth");
		tft_json_write_uint(w, h->depth);
		tft_json_write_key(w, "seq");
		tft_json_write_uint(w, h->seq);
		tft_json_write_key(w, "name");
		tft_json_write_str(w, name ? name : "", name ? len : 0);
		tft_json_write_key(w, "field");
		tft_json_write_str(w, field_names[h->field - 1], strlen(field_names[h->field - 1]));
		tft_json_write_end_object(w);
	}
	tft_json_write_end_array(w);
	tft_json_write_key(w, "more");
	tft_json_write_bool(w, qu->cut || qu->nhits > n);
	tft_json_write_end_object(w);
}

int tft_qry_search(struct tft_session *s, struct tft_qry_search_index *ix, const struct tft_query *q,
		   struct tft_json_writer *w, struct tft_qry_err *e)
{
	struct search_args a;
	struct tft_error err;
	uint64_t total = 0;
	int rc;

	if (parse_args(q, &a, e) != 0)
		return (int)e->status;
	tft_error_clear(&err);
	rc = tft_qry_search_prepare(ix, s, q, &err);
	if (rc == 0)
		rc = run_query(s, ix, &a.m, &a.qu, &total, &err);
	if (rc == 0) {
		write_hits(w, s, &a.qu, total);
		rc = w->status;
	}
	args_fini(&a);
	return rc != 0 ? tft_qry_fail_status(e, rc, &err) : 0;
}
