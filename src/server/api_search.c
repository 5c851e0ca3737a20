/* SPDX-License-Identifier: MIT */
/*
 * GET /api/search?q=TEXT&regex=0|1&limit=N&after_track=ID&after_ts=NS:
 * slices and instants whose name matches, in time order.
 *
 * The first search of a session generation builds an index with one full
 * scan: per (name id, track) the number of events and the first and last
 * start time. A query then matches the distinct names only, takes the exact
 * total from the index, and scans just the tracks (and the time range)
 * where matching names occur, stopping each scan once it has `limit`
 * results past the cursor.
 */
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "core/model.h"
#include "core/strtab.h"
#include "server/routes.h"

#define SEARCH_MAX_Q 256
#define SEARCH_DEFAULT_LIMIT 1000
#define SEARCH_MAX_LIMIT 10000

struct ix_entry {
	uint32_t name, track; /* key; name = UINT32_MAX marks a free slot */
	uint64_t count;
	int64_t min_ts, max_ts;
};

struct tft_search_index {
	uint64_t gen;            /* pool generation it was built for */
	unsigned refs;           /* requests using it (guarded by search_lock) */
	struct ix_entry *tab;    /* owned: open addressing on (name, track) */
	size_t cap, len;
	uint32_t *names;         /* owned: distinct name ids */
	size_t nnames, names_cap;
	uint32_t *name_set;      /* owned: open addressing set of names (+1) */
	size_t name_set_cap;
};

void tft_api_search_index_free(struct tft_search_index *ix)
{
	if (!ix)
		return;
	free(ix->tab);
	free(ix->names);
	free(ix->name_set);
	free(ix);
}

static size_t slot_of(uint32_t name, uint32_t track, size_t mask)
{
	return (size_t)tft_hash_u64((uint64_t)name << 32 | track) & mask;
}

static int ix_grow(struct tft_search_index *ix)
{
	size_t ncap = ix->cap ? ix->cap * 2 : 4096;
	struct ix_entry *nt = malloc(ncap * sizeof(*nt));

	if (!nt)
		return TFT_ENOMEM;
	for (size_t i = 0; i < ncap; i++)
		nt[i].name = UINT32_MAX;
	for (size_t i = 0; i < ix->cap; i++) {
		struct ix_entry *e = &ix->tab[i];
		size_t j;
		if (e->name == UINT32_MAX)
			continue;
		for (j = slot_of(e->name, e->track, ncap - 1); nt[j].name != UINT32_MAX; j = (j + 1) & (ncap - 1))
			;
		nt[j] = *e;
	}
	free(ix->tab);
	ix->tab = nt;
	ix->cap = ncap;
	return 0;
}

static int names_add(struct tft_search_index *ix, uint32_t name)
{
	size_t mask, i;

	if (ix->nnames * 2 >= ix->name_set_cap) {
		size_t ncap = ix->name_set_cap ? ix->name_set_cap * 2 : 1024;
		uint32_t *ns = calloc(ncap, sizeof(*ns));
		if (!ns)
			return TFT_ENOMEM;
		for (size_t k = 0; k < ix->nnames; k++) {
			size_t j = (size_t)tft_hash_u64(ix->names[k]) & (ncap - 1);
			while (ns[j])
				j = (j + 1) & (ncap - 1);
			ns[j] = ix->names[k] + 1;
		}
		free(ix->name_set);
		ix->name_set = ns;
		ix->name_set_cap = ncap;
	}
	mask = ix->name_set_cap - 1;
	for (i = (size_t)tft_hash_u64(name) & mask; ix->name_set[i]; i = (i + 1) & mask)
		if (ix->name_set[i] == name + 1)
			return 0;
	if (ix->nnames == ix->names_cap) {
		size_t nc = ix->names_cap ? ix->names_cap * 2 : 1024;
		uint32_t *nn = realloc(ix->names, nc * sizeof(*nn));
		if (!nn)
			return TFT_ENOMEM;
		ix->names = nn;
		ix->names_cap = nc;
	}
	ix->name_set[i] = name + 1;
	ix->names[ix->nnames++] = name;
	return 0;
}

struct ix_build {
	struct tft_search_index *ix;
	struct ix_entry *last; /* the entry of the previous event (runs of one name) */
};

static int on_index(void *ctx, const struct tft_event *ev)
{
	struct ix_build *b = ctx;
	struct tft_search_index *ix = b->ix;
	struct ix_entry *e = b->last;
	size_t i, mask;

	if (ev->kind == TFT_EV_COUNTER || (ev->flags & TFT_EVF_SUMMARY))
		return 0;
	if (!e || e->name != ev->name || e->track != ev->track) {
		if ((ix->len + 1) * 4 > ix->cap * 3 && ix_grow(ix) != 0)
			return TFT_ENOMEM;
		mask = ix->cap - 1;
		for (i = slot_of(ev->name, ev->track, mask); ix->tab[i].name != UINT32_MAX; i = (i + 1) & mask)
			if (ix->tab[i].name == ev->name && ix->tab[i].track == ev->track)
				break;
		e = &ix->tab[i];
		if (e->name == UINT32_MAX) {
			if (names_add(ix, ev->name) != 0)
				return TFT_ENOMEM;
			*e = (struct ix_entry){ ev->name, ev->track, 0, ev->ts_ns, ev->ts_ns };
			ix->len++;
		}
		b->last = e;
	}
	e->count++;
	if (ev->ts_ns < e->min_ts)
		e->min_ts = ev->ts_ns;
	if (ev->ts_ns > e->max_ts)
		e->max_ts = ev->ts_ns;
	return 0;
}

static struct tft_search_index *build_index(struct tft_session *s, uint64_t gen, struct tft_error *err)
{
	struct tft_search_index *ix = calloc(1, sizeof(*ix));
	uint32_t nt = tft_session_track_count(s);
	int rc = 0;

	if (!ix || ix_grow(ix) != 0) {
		free(ix);
		tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
		return NULL;
	}
	ix->gen = gen;
	for (uint32_t t = 0; t < nt && rc == 0; t++) {
		const struct tft_track *tr = tft_session_track(s, t);
		struct ix_build b = { ix, NULL };
		if (!tr || tr->kind == TFT_TRACK_COUNTER || tr->slices + tr->instants == 0)
			continue;
		rc = tft_session_scan(s, t, INT64_MIN, INT64_MAX, 0, on_index, &b, err);
	}
	if (rc != 0) {
		tft_error_set(err, rc < 0 ? rc : TFT_EIO, -1, "cannot build the search index");
		tft_api_search_index_free(ix);
		return NULL;
	}
	return ix;
}

static struct tft_search_index *index_get(struct tft_server *srv, struct tft_session *s,
					  struct tft_error *err)
{
	uint64_t gen = tft_pool_gen(&srv->pool);
	struct tft_search_index *ix;

	pthread_mutex_lock(&srv->search_lock);
	ix = srv->search;
	if (ix && ix->gen != gen) {
		srv->search = NULL;
		if (ix->refs == 0)
			tft_api_search_index_free(ix);
		ix = NULL;
	}
	if (!ix) {
		ix = build_index(s, gen, err);
		srv->search = ix;
	}
	if (ix)
		ix->refs++;
	pthread_mutex_unlock(&srv->search_lock);
	return ix;
}

static void index_put(struct tft_server *srv, struct tft_search_index *ix)
{
	pthread_mutex_lock(&srv->search_lock);
	if (--ix->refs == 0 && ix != srv->search)
		tft_api_search_index_free(ix);
	pthread_mutex_unlock(&srv->search_lock);
}

/* ---- a query ------------------------------------------------------------ */

struct hit {
	int64_t ts, dur;
	uint32_t track, depth, name;
};

/* Tracks to scan: where matching names occur, and when. */
struct span {
	uint32_t track;
	int64_t t0, t1;
};

struct query {
	const uint8_t *match;    /* borrowed: match[name id] != 0 for matching names */
	uint32_t match_len;
	int64_t after_ts;        /* cursor: results are > (after_ts, after_track, after_depth) */
	uint32_t after_track, after_depth;
	bool has_cursor;
	size_t limit;
	struct hit *hits;        /* owned */
	size_t nhits, cap;
	size_t track_hits;       /* hits from the current track */
	bool cut;                /* a scan stopped early: more results exist */
	int status;
};

static bool after_cursor(const struct query *q, const struct tft_event *ev)
{
	if (!q->has_cursor)
		return true;
	if (ev->ts_ns != q->after_ts)
		return ev->ts_ns > q->after_ts;
	if (ev->track != q->after_track)
		return ev->track > q->after_track;
	return ev->depth > q->after_depth;
}

static int on_match(void *ctx, const struct tft_event *ev)
{
	struct query *q = ctx;

	if (ev->kind == TFT_EV_COUNTER || (ev->flags & TFT_EVF_SUMMARY))
		return 0;
	if (ev->name >= q->match_len || !q->match[ev->name] || !after_cursor(q, ev))
		return 0;
	/* In start order: once this track gave `limit` hits, later ones cannot make the cut. */
	if (q->track_hits >= q->limit && ev->ts_ns > q->hits[q->nhits - 1].ts) {
		q->cut = true;
		return 1;
	}
	if (q->nhits == q->cap) {
		size_t nc = q->cap ? q->cap * 2 : 256;
		struct hit *nh = realloc(q->hits, nc * sizeof(*nh));
		if (!nh) {
			q->status = TFT_ENOMEM;
			return TFT_ENOMEM;
		}
		q->hits = nh;
		q->cap = nc;
	}
	q->hits[q->nhits++] = (struct hit){ ev->ts_ns, ev->dur_ns, ev->track, ev->depth, ev->name };
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
	return x->depth < y->depth ? -1 : x->depth > y->depth;
}

static int cmp_span(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	return x->track < y->track ? -1 : x->track > y->track;
}

/* Match the index's names; fills match[] (sized by the largest id). */
static int match_names(struct tft_session *s, const struct tft_search_index *ix, const char *q,
		       size_t qlen, bool regex, uint8_t **match, uint32_t *match_len)
{
	uint32_t maxid = 0;
	regex_t re;
	uint8_t *m;

	for (size_t i = 0; i < ix->nnames; i++)
		if (ix->names[i] > maxid)
			maxid = ix->names[i];
	m = calloc((size_t)maxid + 1, 1);
	if (!m)
		return TFT_ENOMEM;
	if (regex && regcomp(&re, q, REG_EXTENDED | REG_ICASE | REG_NOSUB) != 0) {
		free(m);
		return TFT_EINVAL;
	}
	for (size_t i = 0; i < ix->nnames; i++) {
		size_t len = 0;
		const char *str = tft_session_str(s, ix->names[i], &len);
		if (!str)
			continue;
		if (regex ? regexec(&re, str, 0, NULL, 0) == 0 : tft_query_find_icase(str, len, q, qlen) >= 0)
			m[ix->names[i]] = 1;
	}
	if (regex)
		regfree(&re);
	*match = m;
	*match_len = maxid + 1;
	return 0;
}

int tft_api_search(struct tft_http_req *r)
{
	struct tft_server *srv = r->srv;
	struct tft_search_index *ix = NULL;
	struct tft_pool_slot *slot;
	struct tft_json_writer w;
	struct tft_error err;
	struct query qu;
	struct span *spans = NULL;
	size_t nspans = 0, qlen;
	uint8_t *match = NULL;
	uint64_t total = 0;
	int64_t regex, limit, at, atr, adp;
	const char *q = tft_query_get(&r->query, "q", &qlen);
	int rc;

	if (!q || qlen == 0)
		return tft_http_reply_error(r, 400, "q is required");
	if (qlen > SEARCH_MAX_Q || memchr(q, '\0', qlen))
		return tft_http_reply_error(r, 400, "q is limited to 256 bytes of text");
	if (tft_query_get_i64(&r->query, "regex", 0, 1, 0, &regex) != 0 ||
	    tft_query_get_i64(&r->query, "limit", 1, SEARCH_MAX_LIMIT, SEARCH_DEFAULT_LIMIT, &limit) != 0 ||
	    tft_query_get_i64(&r->query, "after_ts", INT64_MIN, INT64_MAX, INT64_MIN, &at) != 0 ||
	    tft_query_get_i64(&r->query, "after_track", 0, UINT32_MAX, UINT32_MAX, &atr) != 0 ||
	    tft_query_get_i64(&r->query, "after_depth", 0, UINT32_MAX, UINT32_MAX, &adp) != 0)
		return tft_http_reply_error(r, 400, "regex, limit, after_ts, after_track, after_depth must be integers in range");

	memset(&qu, 0, sizeof(qu));
	/* Results are strictly after (after_ts, after_track, after_depth) in (ts, track, depth)
	 * order; an omitted after_track or after_depth means "past all of them". */
	qu.has_cursor = tft_query_get(&r->query, "after_ts", NULL) != NULL;
	qu.after_ts = at;
	qu.after_track = (uint32_t)atr;
	qu.after_depth = (uint32_t)adp;
	qu.limit = (size_t)limit;

	tft_error_clear(&err);
	slot = tft_pool_acquire(&srv->pool, &err);
	if (!slot)
		return tft_http_reply_status(r, err.code ? err.code : TFT_EIO, &err);
	ix = index_get(srv, slot->sess, &err);
	if (!ix) {
		tft_pool_release(slot);
		return tft_http_reply_status(r, err.code ? err.code : TFT_ENOMEM, &err);
	}
	{
		char qz[SEARCH_MAX_Q + 1];
		memcpy(qz, q, qlen);
		qz[qlen] = '\0';
		rc = match_names(slot->sess, ix, qz, qlen, regex != 0, &match, &qu.match_len);
	}
	if (rc == TFT_EINVAL) {
		index_put(srv, ix);
		tft_pool_release(slot);
		return tft_http_reply_error(r, 400, "not a valid POSIX extended regular expression");
	}
	qu.match = match;
	if (rc == 0) {
		/* Exact total and the spans to scan, from the index. */
		for (size_t i = 0; i < ix->cap; i++) {
			const struct ix_entry *e = &ix->tab[i];
			if (e->name == UINT32_MAX || !match[e->name])
				continue;
			total += e->count;
			if (qu.has_cursor && e->max_ts < qu.after_ts)
				continue;
			if (nspans % 256 == 0) {
				struct span *ns = realloc(spans, (nspans + 256) * sizeof(*ns));
				if (!ns) {
					rc = TFT_ENOMEM;
					break;
				}
				spans = ns;
			}
			spans[nspans++] = (struct span){ e->track, e->min_ts, e->max_ts };
		}
	}
	if (rc == 0 && nspans) {
		/* One scan per track over the union of its matching names' ranges. */
		size_t k = 0;
		qsort(spans, nspans, sizeof(*spans), cmp_span);
		for (size_t i = 0; i < nspans; i++) {
			if (k && spans[k - 1].track == spans[i].track) {
				if (spans[i].t0 < spans[k - 1].t0)
					spans[k - 1].t0 = spans[i].t0;
				if (spans[i].t1 > spans[k - 1].t1)
					spans[k - 1].t1 = spans[i].t1;
			} else {
				spans[k++] = spans[i];
			}
		}
		nspans = k;
		for (size_t i = 0; i < nspans && rc >= 0; i++) {
			int64_t t0 = spans[i].t0;
			if (qu.has_cursor && qu.after_ts > t0)
				t0 = qu.after_ts;
			qu.track_hits = 0;
			rc = tft_session_scan(slot->sess, spans[i].track, t0, spans[i].t1, 0, on_match, &qu, &err);
			if (rc > 0)
				rc = 0;
			if (qu.status)
				rc = qu.status;
		}
	}
	tft_json_write_init_mem(&w);
	if (rc == 0) {
		size_t n = qu.nhits < qu.limit ? qu.nhits : qu.limit;
		if (qu.nhits > 1)
			qsort(qu.hits, qu.nhits, sizeof(*qu.hits), cmp_hit);
		tft_json_write_begin_object(&w);
		tft_json_write_key(&w, "total");
		tft_json_write_uint(&w, total);
		tft_json_write_key(&w, "results");
		tft_json_write_begin_array(&w);
		for (size_t i = 0; i < n; i++) {
			const struct hit *h = &qu.hits[i];
			size_t len = 0;
			const char *name = tft_session_str(slot->sess, h->name, &len);
			tft_json_write_begin_object(&w);
			tft_json_write_key(&w, "track");
			tft_json_write_uint(&w, h->track);
			tft_json_write_key(&w, "ts");
			tft_json_write_int(&w, h->ts);
			tft_json_write_key(&w, "dur");
			tft_json_write_int(&w, h->dur);
			tft_json_write_key(&w, "depth");
			tft_json_write_uint(&w, h->depth);
			tft_json_write_key(&w, "name");
			tft_json_write_str(&w, name ? name : "", name ? len : 0);
			tft_json_write_end_object(&w);
		}
		tft_json_write_end_array(&w);
		tft_json_write_key(&w, "more");
		tft_json_write_bool(&w, qu.cut || qu.nhits > n);
		tft_json_write_end_object(&w);
	}
	tft_pool_release(slot);
	index_put(srv, ix);
	free(match);
	free(spans);
	free(qu.hits);
	if (rc != 0) {
		tft_json_write_fini(&w);
		return tft_http_reply_status(r, rc, &err);
	}
	return tft_http_reply_json(r, 200, &w);
}
