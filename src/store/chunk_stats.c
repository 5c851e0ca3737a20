/* SPDX-License-Identifier: MIT */
/*
 * Per-chunk statistics (see chunk_stats.h): the writer's accumulator and
 * the blob codec. The blob (docs/file-format.md, table chunk_stats):
 *
 *   u8 version 1 | varint nevents | zigzag first_ts | varint last_ts - first_ts
 *   varint nentries, per entry: varint name, cat, count, total | zigzag self |
 *     varint min, max - min | varint raw: 1: count sorted durations (varint
 *     deltas from the previous, the first from min); 0: varint nbuckets, per
 *     bucket (sorted): varint bucket - previous bucket, varint count
 *   varint ndepth, per depth: zigzag sum
 */
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "core/hist.h"
#include "store/chunk_stats.h"

/* ---- accumulator -------------------------------------------------------------------- */

void tft_cstats_acc_init(struct tft_cstats_acc *a)
{
	memset(a, 0, sizeof(*a));
	tft_hmap_init(&a->ix, 1);
	a->first_ts = INT64_MAX;
	a->last_ts = INT64_MIN;
	a->chunk = -1;
}

void tft_cstats_acc_reset(struct tft_cstats_acc *a)
{
	a->first_ts = INT64_MAX;
	a->last_ts = INT64_MIN;
	a->nevents = 0;
	a->ne = 0;
	a->nv = 0;
	tft_hmap_clear(&a->ix);
	a->ndepth = 0;
	a->open = 0;
	a->chunk = -1;
	a->next = NULL;
}

void tft_cstats_acc_fini(struct tft_cstats_acc *a)
{
	free(a->e);
	tft_hmap_fini(&a->ix);
	free(a->v);
	free(a->depth_sum);
	memset(a, 0, sizeof(*a));
}

size_t tft_cstats_acc_bytes(const struct tft_cstats_acc *a)
{
	return (size_t)a->cap_e * sizeof(*a->e) + tft_hmap_bytes(&a->ix) +
	       (size_t)a->cap_v * sizeof(*a->v) + (size_t)a->cap_depth * sizeof(*a->depth_sum);
}

/* ---- (name, category) -> entry ------------------------------------------------------------- */

/* The key of (name, cat) in a core/hmap of one-word keys, and its hash. */
static inline uint64_t pair_key(uint32_t name, uint32_t cat)
{
	return (uint64_t)name << 32 | cat;
}

static inline uint32_t pair_hash(uint64_t k)
{
	return (uint32_t)((k * UINT64_C(0x9E3779B97F4A7C15)) >> 32);
}

/*
 * The entry of (name, cat) among n entries: *idx its index; a new pair gets
 * index n (the caller appends its entry). 1 found, 0 new, -1 out of memory.
 */
static inline int pair_index(struct tft_hmap *ix, uint32_t n, uint32_t name, uint32_t cat, uint32_t *idx)
{
	uint64_t k = pair_key(name, cat);
	uint32_t h = pair_hash(k), i = tft_hmap_get1(ix, k, h);

	if (i != TFT_HMAP_EMPTY) {
		*idx = i;
		return 1;
	}
	if (tft_hmap_put(ix, &k, h, n))
		return -1;
	*idx = n;
	return 0;
}

int64_t tft_cstats_acc_slice(struct tft_cstats_acc *a, const struct tft_event *ev, uint32_t depth,
			     int64_t clipped, int64_t self)
{
	struct tft_cstats_acc_entry *e;
	uint32_t i;
	int r = pair_index(&a->ix, a->ne, ev->name, ev->cat, &i);

	if (r < 0)
		return -1;
	if (r == 0) {
		if (tft_grow((void **)&a->e, &a->cap_e, a->ne + 1, sizeof(*a->e)))
			return -1;
		e = &a->e[a->ne++];
		memset(e, 0, sizeof(*e));
		e->name = ev->name;
		e->cat = ev->cat;
		e->min = INT64_MAX;
	}
	if (tft_unlikely(a->nv == a->cap_v) &&
	    tft_grow((void **)&a->v, &a->cap_v, a->nv + 1, sizeof(*a->v)))
		return -1;
	if (tft_unlikely(depth >= a->ndepth)) {
		if (tft_grow((void **)&a->depth_sum, &a->cap_depth, depth + 1, sizeof(*a->depth_sum)))
			return -1;
		memset(a->depth_sum + a->ndepth, 0, (size_t)(depth + 1 - a->ndepth) * sizeof(*a->depth_sum));
		a->ndepth = depth + 1;
	}
	e = &a->e[i];
	e->count++;
	e->total += ev->dur_ns;
	if (ev->dur_ns < e->min)
		e->min = ev->dur_ns;
	if (ev->dur_ns > e->max)
		e->max = ev->dur_ns;
	if (self >= 0)
		e->self += self;
	a->v[a->nv].entry = i;
	a->v[a->nv].dur = ev->dur_ns;
	a->nv++;
	a->depth_sum[depth] += clipped;
	return (int64_t)i;
}

/* ---- encoding --------------------------------------------------------------------- */

struct obuf {
	uint8_t *p;
	size_t cap, len;
	int oom;
};

static void put_byte(struct obuf *b, uint8_t c)
{
	if (b->len == b->cap && (b->oom || tft_grow_size_ex((void **)&b->p, &b->cap, b->len + 1, 1, 1024, 0))) {
		b->oom = 1;
		return;
	}

	b->p[b->len++] = c;
}

static void put_uv(struct obuf *b, uint64_t v)
{
	while (v >= 0x80) {
		put_byte(b, (uint8_t)(v | 0x80));
		v >>= 7;
	}
	put_byte(b, (uint8_t)v);
}

static void put_sv(struct obuf *b, int64_t v)
{
	put_uv(b, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

static int cmp_i64(const void *x, const void *y)
{
	int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;

	return (a > b) - (a < b);
}

/* An entry's fixed fields, then whether its durations follow one by one. */
static void put_entry_head(struct obuf *b, uint32_t name, uint32_t cat, uint64_t count, int64_t total,
			   int64_t self, int64_t min, int64_t max, int raw)
{
	put_uv(b, name);
	put_uv(b, cat);
	put_uv(b, count);
	put_uv(b, (uint64_t)total);
	put_sv(b, self);
	put_uv(b, (uint64_t)min);
	put_uv(b, (uint64_t)max - (uint64_t)min);
	put_uv(b, raw != 0);
}

/* Durations d[0..n) one by one: sorted, each as the delta from the previous (the first from min). */
static void put_raw(struct obuf *b, int64_t *d, uint32_t n, int64_t min)
{
	int64_t prev = min;

	qsort(d, n, sizeof(d[0]), cmp_i64);
	for (uint32_t j = 0; j < n; j++) {
		put_uv(b, (uint64_t)d[j] - (uint64_t)prev);
		prev = d[j];
	}
}

static int cmp_u32(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;

	return (a > b) - (a < b);
}

int tft_cstats_acc_encode(const struct tft_cstats_acc *a, uint8_t **out, size_t *cap, size_t *len)
{
	struct obuf b = { *out, *cap, 0, 0 };
	uint32_t *start = NULL, *fill = NULL, *key = NULL;
	int rc = 0;

	/* the slices' durations grouped by entry (a counting sort) */
	start = calloc((size_t)a->ne + 1, sizeof(*start));
	fill = malloc(((size_t)a->ne + 1) * sizeof(*fill));
	key = malloc(((size_t)a->nv + 1) * sizeof(*key));
	if (!start || !fill || !key) {
		rc = TFT_ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < a->nv; i++)
		start[a->v[i].entry + 1]++;
	for (uint32_t i = 0; i < a->ne; i++)
		start[i + 1] += start[i];
	memcpy(fill, start, ((size_t)a->ne + 1) * sizeof(*fill));
	put_byte(&b, TFT_CSTATS_VERSION);
	put_uv(&b, a->nevents);
	put_sv(&b, a->nevents ? a->first_ts : 0);
	put_uv(&b, a->nevents ? (uint64_t)a->last_ts - (uint64_t)a->first_ts : 0);
	put_uv(&b, a->ne);
	/* key[]: per entry, its durations' buckets (or, raw, the index of the duration) */
	for (uint32_t i = 0; i < a->nv; i++) {
		const struct tft_cstats_acc_entry *e = &a->e[a->v[i].entry];
		key[fill[a->v[i].entry]++] = e->count <= TFT_CSTATS_RAW_MAX ? i : tft_hist_bucket(a->v[i].dur);
	}
	for (uint32_t i = 0; i < a->ne && !b.oom; i++) {
		const struct tft_cstats_acc_entry *e = &a->e[i];
		uint32_t *k = key + start[i], n = start[i + 1] - start[i];

		put_entry_head(&b, e->name, e->cat, e->count, e->total, e->self, e->min, e->max,
			       e->count <= TFT_CSTATS_RAW_MAX);
		if (e->count <= TFT_CSTATS_RAW_MAX) {
			int64_t d[TFT_CSTATS_RAW_MAX];
			for (uint32_t j = 0; j < n; j++)
				d[j] = a->v[k[j]].dur;
			put_raw(&b, d, n, e->min);
		} else {
			uint32_t nb = 0, prev = 0;
			qsort(k, n, sizeof(*k), cmp_u32);
			for (uint32_t j = 0; j < n; j++)
				nb += j == 0 || k[j] != k[j - 1];
			put_uv(&b, nb);
			for (uint32_t j = 0; j < n;) {
				uint32_t r = j;
				while (r < n && k[r] == k[j])
					r++;
				put_uv(&b, k[j] - prev);
				put_uv(&b, r - j);
				prev = k[j];
				j = r;
			}
		}
	}
	put_uv(&b, a->ndepth);
	for (uint32_t d = 0; d < a->ndepth; d++)
		put_sv(&b, a->depth_sum[d]);
	if (b.oom)
		rc = TFT_ENOMEM;
out:
	free(start);
	free(fill);
	free(key);
	*out = b.p;
	*cap = b.cap;
	*len = rc ? 0 : b.len;
	return rc;
}

/* ---- a track's sum --------------------------------------------------------------- */

struct sum_entry {
	uint32_t name, cat;
	uint64_t count;
	int64_t total, self, min, max;
	int64_t *raw;                    /* owned: count <= TFT_CSTATS_SUM_RAW_MAX: the durations */
	uint32_t cap_raw;
	uint64_t *hist;                  /* owned: else counts of buckets [hlo, hlo + hn) */
	uint32_t hlo, hn;
};

struct tft_cstats_sum {
	int64_t first_ts, last_ts;
	uint64_t nevents;
	struct sum_entry *e;
	uint32_t ne, cap_e;
	struct tft_hmap ix; /* owned: (name, cat) -> index into e */
	size_t hist_bytes;
};

struct tft_cstats_sum *tft_cstats_sum_new(void)
{
	struct tft_cstats_sum *s = calloc(1, sizeof(*s));

	if (s) {
		s->first_ts = INT64_MAX;
		s->last_ts = INT64_MIN;
		tft_hmap_init(&s->ix, 1);
	}
	return s;
}

void tft_cstats_sum_free(struct tft_cstats_sum *s)
{
	if (!s)
		return;
	for (uint32_t i = 0; i < s->ne; i++) {
		free(s->e[i].hist);
		free(s->e[i].raw);
	}
	free(s->e);
	tft_hmap_fini(&s->ix);
	free(s);
}

size_t tft_cstats_sum_bytes(const struct tft_cstats_sum *s)
{
	return (size_t)s->cap_e * sizeof(*s->e) + tft_hmap_bytes(&s->ix) + s->hist_bytes;
}

static struct sum_entry *sum_entry(struct tft_cstats_sum *s, uint32_t name, uint32_t cat)
{
	uint32_t i;
	int r = pair_index(&s->ix, s->ne, name, cat, &i);

	if (r < 0)
		return NULL;
	if (r == 0) {
		if (tft_grow((void **)&s->e, &s->cap_e, s->ne + 1, sizeof(*s->e)))
			return NULL;
		memset(&s->e[s->ne], 0, sizeof(s->e[0]));
		s->e[s->ne].name = name;
		s->e[s->ne].cat = cat;
		s->e[s->ne].min = INT64_MAX;
		s->ne++;
	}
	return &s->e[i];
}

/* Count one duration in a bucketed entry's window (grown to hold its bucket). */
static int sum_bucket(struct tft_cstats_sum *s, struct sum_entry *e, int64_t dur)
{
	uint32_t b = tft_hist_bucket(dur);

	if (b < e->hlo || b >= e->hlo + e->hn) {
		uint32_t lo = e->hn ? (b < e->hlo ? b : e->hlo) : b;
		uint32_t hi = e->hn ? (b >= e->hlo + e->hn ? b + 1 : e->hlo + e->hn) : b + 1;
		uint64_t *nh;
		lo = lo > 2 * TFT_HIST_SUB ? lo - 2 * TFT_HIST_SUB : 0;
		hi = hi + 2 * TFT_HIST_SUB < TFT_HIST_BUCKETS ? hi + 2 * TFT_HIST_SUB : TFT_HIST_BUCKETS;
		if (!(nh = calloc(hi - lo, sizeof(*nh))))
			return TFT_ENOMEM;
		if (e->hn)
			memcpy(nh + (e->hlo - lo), e->hist, (size_t)e->hn * sizeof(*nh));
		s->hist_bytes += (size_t)(hi - lo - e->hn) * sizeof(*nh);
		free(e->hist);
		e->hist = nh;
		e->hlo = lo;
		e->hn = hi - lo;
	}
	e->hist[b - e->hlo]++;
	return 0;
}

int tft_cstats_sum_add(struct tft_cstats_sum *s, const struct tft_cstats_acc *a)
{
	uint32_t *map;

	if (!a->nevents)
		return 0;
	if (a->first_ts < s->first_ts)
		s->first_ts = a->first_ts;
	if (a->last_ts > s->last_ts)
		s->last_ts = a->last_ts;
	s->nevents += a->nevents;
	if (!a->ne)
		return 0;
	if (!(map = malloc((size_t)a->ne * sizeof(*map))))
		return TFT_ENOMEM;
	for (uint32_t i = 0; i < a->ne; i++) {
		const struct tft_cstats_acc_entry *x = &a->e[i];
		struct sum_entry *e = sum_entry(s, x->name, x->cat);
		if (!e) {
			free(map);
			return TFT_ENOMEM;
		}
		map[i] = (uint32_t)(e - s->e);
		e->total += x->total;
		e->self += x->self;
		if (x->min < e->min)
			e->min = x->min;
		if (x->max > e->max)
			e->max = x->max;
	}
	for (uint32_t i = 0; i < a->nv; i++) {
		struct sum_entry *e = &s->e[map[a->v[i].entry]];
		if (e->count < TFT_CSTATS_SUM_RAW_MAX) {
			if (tft_grow((void **)&e->raw, &e->cap_raw, (uint32_t)e->count + 1, sizeof(*e->raw))) {
				free(map);
				return TFT_ENOMEM;
			}
			e->raw[e->count++] = a->v[i].dur;
			continue;
		}
		if (e->count == TFT_CSTATS_SUM_RAW_MAX) { /* to buckets */
			for (uint32_t k = 0; k < TFT_CSTATS_SUM_RAW_MAX; k++)
				if (sum_bucket(s, e, e->raw[k])) {
					free(map);
					return TFT_ENOMEM;
				}
			free(e->raw);
			e->raw = NULL;
			e->cap_raw = 0;
		}
		e->count++;
		if (sum_bucket(s, e, a->v[i].dur)) {
			free(map);
			return TFT_ENOMEM;
		}
	}
	free(map);
	return 0;
}

int tft_cstats_sum_encode(const struct tft_cstats_sum *s, uint8_t **out, size_t *cap, size_t *len)
{
	struct obuf b = { *out, *cap, 0, 0 };

	put_byte(&b, TFT_CSTATS_VERSION);
	put_uv(&b, s->nevents > UINT32_MAX ? UINT32_MAX : s->nevents);
	put_sv(&b, s->nevents ? s->first_ts : 0);
	put_uv(&b, s->nevents ? (uint64_t)s->last_ts - (uint64_t)s->first_ts : 0);
	put_uv(&b, s->ne);
	for (uint32_t i = 0; i < s->ne && !b.oom; i++) {
		const struct sum_entry *e = &s->e[i];
		put_entry_head(&b, e->name, e->cat, e->count, e->total, e->self, e->min, e->max,
			       e->count <= TFT_CSTATS_SUM_RAW_MAX);
		if (e->count <= TFT_CSTATS_SUM_RAW_MAX) {
			put_raw(&b, e->raw, (uint32_t)e->count, e->min);
		} else {
			uint32_t nb = 0, prev = 0;
			for (uint32_t k = 0; k < e->hn; k++)
				nb += e->hist[k] != 0;
			put_uv(&b, nb);
			for (uint32_t k = 0; k < e->hn; k++) {
				if (!e->hist[k])
					continue;
				put_uv(&b, e->hlo + k - prev);
				put_uv(&b, e->hist[k]);
				prev = e->hlo + k;
			}
		}
	}
	put_uv(&b, 0); /* no depth sums */
	*out = b.p;
	*cap = b.cap;
	*len = b.oom ? 0 : b.len;
	return b.oom ? TFT_ENOMEM : 0;
}

int tft_cstats_encode(const struct tft_cstats *c, uint8_t **out, size_t *cap, size_t *len)
{
	struct obuf b = { *out, *cap, 0, 0 };

	put_byte(&b, TFT_CSTATS_VERSION);
	put_uv(&b, c->nevents);
	put_sv(&b, c->nevents ? c->first_ts : 0);
	put_uv(&b, c->nevents ? (uint64_t)c->last_ts - (uint64_t)c->first_ts : 0);
	put_uv(&b, c->ne);
	for (uint32_t i = 0; i < c->ne && !b.oom; i++) {
		const struct tft_cstats_entry *e = &c->e[i];

		put_uv(&b, e->name);
		put_uv(&b, e->cat);
		put_uv(&b, e->count);
		put_uv(&b, (uint64_t)e->total);
		put_sv(&b, e->self);
		put_uv(&b, (uint64_t)e->min);
		put_uv(&b, (uint64_t)e->max - (uint64_t)e->min);
		put_uv(&b, e->nraw > 0);
		if (e->nraw) {
			int64_t prev = e->min;
			for (uint32_t j = 0; j < e->nraw; j++) {
				put_uv(&b, (uint64_t)c->raw[e->first + j] - (uint64_t)prev);
				prev = c->raw[e->first + j];
			}
		} else {
			uint32_t prev = 0;
			put_uv(&b, e->nbucket);
			for (uint32_t j = 0; j < e->nbucket; j++) {
				put_uv(&b, c->bucket[e->first + j] - prev);
				put_uv(&b, c->bcount[e->first + j]);
				prev = c->bucket[e->first + j];
			}
		}
	}
	put_uv(&b, c->ndepth);
	for (uint32_t d = 0; d < c->ndepth; d++)
		put_sv(&b, c->depth_sum[d]);
	*out = b.p;
	*cap = b.cap;
	*len = b.oom ? 0 : b.len;
	return b.oom ? TFT_ENOMEM : 0;
}

/* ---- decoding --------------------------------------------------------------------- */

struct ibuf {
	const uint8_t *p, *end;
	int bad;
};

static uint64_t get_uv(struct ibuf *b)
{
	uint64_t v = 0;

	for (int shift = 0; shift < 64; shift += 7) {
		if (b->p >= b->end) {
			b->bad = 1;
			return 0;
		}
		uint8_t c = *b->p++;
		v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return v;
	}
	b->bad = 1;
	return 0;
}

static int64_t get_sv(struct ibuf *b)
{
	uint64_t u = get_uv(b);

	return (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
}

void tft_cstats_fini(struct tft_cstats *c)
{
	free(c->e);
	free(c->raw);
	free(c->bucket);
	free(c->bcount);
	free(c->depth_sum);
	memset(c, 0, sizeof(*c));
}

static int bad(struct tft_error *err, const char *what)
{
	return tft_error_set(err, TFT_EFORMAT, -1, "chunk statistics: %s", what);
}

int tft_cstats_decode(struct tft_cstats *c, const uint8_t *p, size_t len, uint32_t nstr,
		      struct tft_error *err)
{
	struct ibuf b = { p, p + len, 0 };
	uint64_t ne, nraw = 0, nb = 0, capraw, capb;

	memset(c, 0, sizeof(*c));
	if (len < 1 || *b.p++ != TFT_CSTATS_VERSION)
		return bad(err, "unknown version");
	c->nevents = (uint32_t)get_uv(&b);
	c->first_ts = get_sv(&b);
	c->last_ts = (int64_t)((uint64_t)c->first_ts + get_uv(&b));
	ne = get_uv(&b);
	if (b.bad || ne > len || ne > c->nevents)
		return bad(err, "bad header");
	c->e = calloc(ne ? ne : 1, sizeof(*c->e));
	/* each raw duration and each bucket takes at least a byte */
	capraw = capb = len;
	c->raw = malloc(capraw * sizeof(*c->raw));
	c->bucket = malloc(capb * sizeof(*c->bucket));
	c->bcount = malloc(capb * sizeof(*c->bcount));
	if (!c->e || !c->raw || !c->bucket || !c->bcount)
		return tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
	for (uint64_t i = 0; i < ne; i++) {
		struct tft_cstats_entry *e = &c->e[i];
		uint64_t sum = 0;

		e->name = (uint32_t)get_uv(&b);
		e->cat = (uint32_t)get_uv(&b);
		e->count = get_uv(&b);
		e->total = (int64_t)get_uv(&b);
		e->self = get_sv(&b);
		e->min = (int64_t)get_uv(&b);
		e->max = (int64_t)((uint64_t)e->min + get_uv(&b));
		uint64_t is_raw = get_uv(&b);
		if (b.bad || e->name >= nstr || e->cat >= nstr || e->count == 0 ||
		    (e->count > c->nevents && c->nevents != UINT32_MAX) || e->total < 0 || e->min < 0 ||
		    e->max < e->min || is_raw > 1 || (is_raw && e->count > len))
			return bad(err, "bad entry");
		if (is_raw) {
			int64_t prev = e->min;
			e->nraw = (uint32_t)e->count;
			e->first = (uint32_t)nraw;
			for (uint64_t j = 0; j < e->count; j++) {
				prev = (int64_t)((uint64_t)prev + get_uv(&b));
				if (b.bad || nraw >= capraw || prev > e->max || prev < e->min)
					return bad(err, "bad durations");
				c->raw[nraw++] = prev;
			}
		} else {
			uint64_t n = get_uv(&b);
			uint32_t prev = 0;
			if (b.bad || n == 0 || n > e->count || nb + n > capb)
				return bad(err, "bad histogram");
			e->nbucket = (uint32_t)n;
			e->first = (uint32_t)nb;
			for (uint64_t j = 0; j < n; j++) {
				uint64_t d = get_uv(&b), k = get_uv(&b);
				if (b.bad || (j && d == 0) || prev + d >= TFT_HIST_BUCKETS || k == 0)
					return bad(err, "bad histogram bucket");
				prev += (uint32_t)d;
				c->bucket[nb] = prev;
				c->bcount[nb++] = k;
				sum += k;
			}
			if (sum != e->count)
				return bad(err, "histogram counts differ from the entry's");
		}
	}
	c->ne = (uint32_t)ne;
	c->ndepth = (uint32_t)get_uv(&b);
	if (b.bad || c->ndepth > len)
		return bad(err, "bad depth sums");
	c->depth_sum = calloc(c->ndepth ? c->ndepth : 1, sizeof(*c->depth_sum));
	if (!c->depth_sum)
		return tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
	for (uint32_t d = 0; d < c->ndepth; d++)
		c->depth_sum[d] = get_sv(&b);
	if (b.bad || b.p != b.end)
		return bad(err, b.bad ? "bad depth sums" : "trailing bytes");
	return 0;
}
