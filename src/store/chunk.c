/* SPDX-License-Identifier: MIT */
/*
 * Chunk codec: incremental columnar encoder (LEB128 varints, lazy columns,
 * per-(key,type) arg columns) plus zstd, and a validating decoder.
 *
 * The encoder's cost is per event and per arg. Events of one track mostly
 * repeat the arg keys of recent events at the same positions, so each arg
 * position remembers its last few columns (aslot): an arg that matches
 * one, in a column with room, skips the column hash. An event whose columns
 * are all present with room and whose args all match takes one pass that
 * checks and writes (tft_chunk_enc_add); any other takes enc_add_slow.
 * Column numbering (creation order) is what a lookup of every arg gives: the
 * payload does not depend on the cache.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "core/strtab.h"
#include "store/chunk.h"

/* ---- varints ---------------------------------------------------------------- */

static inline uint64_t zz_enc(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t zz_dec(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

static inline size_t put_uv(uint8_t *p, uint64_t v)
{
	size_t n = 0;

	/* ids and small deltas: one or two bytes without the loop */
	if (tft_likely(v < 0x80)) {
		p[0] = (uint8_t)v;
		return 1;
	}
	if (v < 0x4000) {
		p[0] = (uint8_t)(v | 0x80);
		p[1] = (uint8_t)(v >> 7);
		return 2;
	}
	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

/*
 * put_uv without data-dependent branches for values below 2^28, for columns
 * whose value sizes vary unpredictably (time deltas): stores 4 bytes at p
 * (room needed), of which the varint's length is returned. Larger values
 * take put_uv.
 */
static inline size_t put_uv_nb(uint8_t *p, uint64_t v)
{
	uint32_t w, top;

	if (tft_unlikely(v >> 28))
		return put_uv(p, v);
	w = (uint32_t)((v & 0x7f) | (v << 1 & 0x7f00) | (v << 2 & 0x7f0000) | (v << 3 & 0x7f000000));
	/* The varint ends at w's highest nonzero byte (byte 0 for v = 0):
	 * continuation bits below it, 8 * (length - 1) = top. */
	top = (uint32_t)(__builtin_clz(w | 1) ^ 31) & 24; /* ^ 31: 31 - clz, bsr on x86 */
	w |= 0x808080u & ((1u << top) - 1);
	p[0] = (uint8_t)w; /* byte stores: one 32-bit store once optimized */
	p[1] = (uint8_t)(w >> 8);
	p[2] = (uint8_t)(w >> 16);
	p[3] = (uint8_t)(w >> 24);
	return top / 8 + 1;
}

static inline void put_u64le(uint8_t *p, uint64_t v)
{
	/* spelled out: one 64-bit store once optimized (a loop is not unrolled at -O2) */
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
	p[4] = (uint8_t)(v >> 32);
	p[5] = (uint8_t)(v >> 40);
	p[6] = (uint8_t)(v >> 48);
	p[7] = (uint8_t)(v >> 56);
}

static inline uint64_t get_u64le(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* ---- buffers ---------------------------------------------------------------- */

int tft_chunk_buf_reserve(struct tft_chunk_buf *b, size_t extra)
{
	size_t need, cap;
	uint8_t *p;

	if (b->cap - b->len >= extra)
		return 0;
	if (extra > SIZE_MAX / 2 - b->len)
		return TFT_ENOMEM;
	need = b->len + extra;
	cap = b->cap ? b->cap : 64;
	while (cap < need)
		cap *= 2;
	p = realloc(b->p, cap);
	if (!p)
		return TFT_ENOMEM;
	b->p = p;
	b->cap = cap;
	return 0;
}

void tft_chunk_buf_free(struct tft_chunk_buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

static inline void buf_uv(struct tft_chunk_buf *b, uint64_t v)
{
	b->len += put_uv(b->p + b->len, v); /* capacity reserved by the caller */
}

/* ---- encoder ---------------------------------------------------------------- */

#define BIT(c) (1u << (c))

/*
 * An event's fields from dur_ns up to args (dur, value, track, name, cat,
 * depth, count, kind, flags, nargs) fill EV_NWORDS words without padding:
 * whether an event has a value for a column the chunk lacks is then a few
 * masked word compares with the default event (see enc_set_present).
 */
#define EV_NWORDS 5
_Static_assert(offsetof(struct tft_event, args) - offsetof(struct tft_event, dur_ns) == 8 * EV_NWORDS &&
		       offsetof(struct tft_event, nargs) + 2 == offsetof(struct tft_event, args),
	       "struct tft_event: 5 words from dur_ns to args");

static const struct tft_event ev_default = { .count = 1 };

static inline uint64_t ev_word(const struct tft_event *ev, int i)
{
	uint64_t w;

	memcpy(&w, (const unsigned char *)&ev->dur_ns + 8 * i, sizeof(w));
	return w;
}

/* Does ev have a non-default value for a column the chunk lacks? */
static inline int ev_odd(const struct tft_chunk_enc *e, const struct tft_event *ev)
{
	const uint64_t *m = e->absent_word;
	const struct tft_event *d = &ev_default;

	/* the words spelled out: a loop is not unrolled at -O2 */
	return (((ev_word(ev, 0) ^ ev_word(d, 0)) & m[0]) | ((ev_word(ev, 1) ^ ev_word(d, 1)) & m[1]) |
		((ev_word(ev, 2) ^ ev_word(d, 2)) & m[2]) | ((ev_word(ev, 3) ^ ev_word(d, 3)) & m[3]) |
		((ev_word(ev, 4) ^ ev_word(d, 4)) & m[4])) != 0;
}

/* Default value of each lazy column (as encoded varint; VALUE is special). */
static const uint8_t col_default[TFT_CHUNK_NCOLS] = {
	[TFT_CHUNK_COL_COUNT] = 1,
};

/* Set the present columns, and the bits of the others in absent_word. */
static void enc_set_present(struct tft_chunk_enc *e, uint32_t present)
{
	struct tft_event m;

	memset(&m, 0, sizeof(m));
	if (!(present & BIT(TFT_CHUNK_COL_DUR)))
		m.dur_ns = -1;
	if (!(present & BIT(TFT_CHUNK_COL_VALUE)))
		memset(&m.value, 0xff, sizeof(m.value));
	if (!(present & BIT(TFT_CHUNK_COL_NAME)))
		m.name = UINT32_MAX;
	if (!(present & BIT(TFT_CHUNK_COL_CAT)))
		m.cat = UINT32_MAX;
	if (!(present & BIT(TFT_CHUNK_COL_DEPTH)))
		m.depth = UINT32_MAX;
	if (!(present & BIT(TFT_CHUNK_COL_COUNT)))
		m.count = UINT32_MAX;
	if (!(present & BIT(TFT_CHUNK_COL_KIND)))
		m.kind = UINT8_MAX;
	if (!(present & BIT(TFT_CHUNK_COL_FLAGS)))
		m.flags = UINT8_MAX;
	if (!(present & BIT(TFT_CHUNK_COL_NARGS)))
		m.nargs = UINT16_MAX;
	for (int i = 0; i < EV_NWORDS; i++)
		e->absent_word[i] = ev_word(&m, i);
	e->present = present;
}

void tft_chunk_enc_init(struct tft_chunk_enc *e)
{
	memset(e, 0, sizeof(*e));
	enc_set_present(e, 1u << TFT_CHUNK_COL_TS);
	e->value_int = 1;
}

void tft_chunk_enc_fini(struct tft_chunk_enc *e)
{
	for (int c = 0; c < TFT_CHUNK_NCOLS; c++)
		tft_chunk_buf_free(&e->col[c]);
	for (uint32_t i = 0; i < e->nacols_buf; i++)
		tft_chunk_buf_free(&e->acols[i].data);
	free(e->acols);
	free(e->ahash);
	free(e->aslot);
	memset(e, 0, sizeof(*e));
}

void tft_chunk_enc_reset(struct tft_chunk_enc *e, int release)
{
	if (release) {
		tft_chunk_enc_fini(e);
		tft_chunk_enc_init(e);
		return;
	}
	for (int c = 0; c < TFT_CHUNK_NCOLS; c++)
		e->col[c].len = 0;
	/* Arg column buffers are kept, like the columns': the next chunk's
	 * columns take them over in creation order (see acol_get). */
	e->nacols = 0;
	e->naslots = 0;
	if (e->ahash)
		memset(e->ahash, 0, ((size_t)e->ahash_mask + 1) * sizeof(*e->ahash));
	e->n = 0;
	e->kind_mask = 0;
	enc_set_present(e, 1u << TFT_CHUNK_COL_TS);
	e->base_ts = e->prev_ts = 0;
	e->t_min = e->t_max = 0;
	e->prev_value_bits = 0;
	e->prev_value_i = 0;
	e->value_int = 1;
	e->room = 0;
	e->bytes = 0;
}

/* A tag is its arg type, except for bool true; UINT32_MAX for a bad type. */
_Static_assert((int)TFT_CHUNK_TAG_NULL == (int)TFT_ARG_NULL &&
		       (int)TFT_CHUNK_TAG_FALSE == (int)TFT_ARG_BOOL &&
		       (int)TFT_CHUNK_TAG_INT == (int)TFT_ARG_INT &&
		       (int)TFT_CHUNK_TAG_DOUBLE == (int)TFT_ARG_DOUBLE &&
		       (int)TFT_CHUNK_TAG_STR == (int)TFT_ARG_STR &&
		       (int)TFT_CHUNK_TAG_JSON == (int)TFT_ARG_JSON,
	       "chunk tags follow enum tft_arg_type");

static inline uint32_t arg_tag(const struct tft_arg *a)
{
	uint32_t t = a->type;

	if (t > TFT_ARG_JSON)
		return UINT32_MAX;
	return t == TFT_ARG_BOOL && a->v.i ? TFT_CHUNK_TAG_TRUE : t;
}

/* Fibonacci hashing: the codes are small, clustered integers. */
static inline uint32_t ahash_slot(uint64_t code, uint32_t mask)
{
	return (uint32_t)((code * 0x9e3779b97f4a7c15ULL) >> 32) & mask;
}

static inline uint64_t acol_code(const struct tft_chunk_acol *ac)
{
	return (uint64_t)ac->key << 3 | ac->tag;
}

static int ahash_grow(struct tft_chunk_enc *e)
{
	uint32_t ncap = e->ahash ? (e->ahash_mask + 1) * 2 : 16;
	struct tft_chunk_ahent *h = calloc(ncap, sizeof(*h));

	if (!h)
		return TFT_ENOMEM;
	for (uint32_t i = 0; i < e->nacols; i++) {
		uint64_t code = acol_code(&e->acols[i]);
		uint32_t j = ahash_slot(code, ncap - 1);
		while (h[j].code1)
			j = (j + 1) & (ncap - 1);
		h[j] = (struct tft_chunk_ahent){ .code1 = code + 1, .idx = i };
	}
	free(e->ahash);
	e->ahash = h;
	e->ahash_mask = ncap - 1;
	return 0;
}

/* Index of the (key, tag) column, created if missing; -1 on ENOMEM. */
static int64_t acol_get(struct tft_chunk_enc *e, uint32_t key, uint32_t tag)
{
	uint64_t code = ((uint64_t)key << 3) | tag;
	struct tft_chunk_acol *ac;
	uint32_t j;

	if (!e->ahash && ahash_grow(e))
		return -1;
	for (j = ahash_slot(code, e->ahash_mask); e->ahash[j].code1; j = (j + 1) & e->ahash_mask)
		if (e->ahash[j].code1 == code + 1)
			return e->ahash[j].idx;
	/* A new column: keep the table at most half full. */
	if ((uint64_t)(e->nacols + 1) * 2 > (uint64_t)e->ahash_mask + 1) {
		if (ahash_grow(e))
			return -1;
		for (j = ahash_slot(code, e->ahash_mask); e->ahash[j].code1;
		     j = (j + 1) & e->ahash_mask)
			;
	}
	if (e->nacols == e->cap_acols) {
		uint32_t ncap = e->cap_acols ? e->cap_acols * 2 : 8;
		struct tft_chunk_acol *na = realloc(e->acols, (size_t)ncap * sizeof(*na));
		if (!na)
			return -1;
		e->acols = na;
		e->cap_acols = ncap;
	}
	ac = &e->acols[e->nacols];
	if (e->nacols < e->nacols_buf) {
		/* reuse the buffer a column of an earlier chunk left here */
		*ac = (struct tft_chunk_acol){ .key = key, .tag = tag, .data = ac->data };
		ac->data.len = 0;
	} else {
		*ac = (struct tft_chunk_acol){ .key = key, .tag = tag };
		e->nacols_buf = e->nacols + 1;
	}
	e->ahash[j] = (struct tft_chunk_ahent){ .code1 = code + 1, .idx = e->nacols };
	return e->nacols++;
}

/* Write default values for the n events added before column c appeared. */
static inline size_t backfill(struct tft_chunk_enc *e, int c, int value_int)
{
	struct tft_chunk_buf *b = &e->col[c];
	size_t len = c == TFT_CHUNK_COL_VALUE && !value_int ? (size_t)e->n * 8 : e->n;

	memset(b->p + b->len, col_default[c], len);
	b->len += len;
	return len;
}

/* Is v stored exactly by the int value mode? */
static inline int value_is_int(double v, uint64_t bits)
{
	if (bits == 0)
		return 1;
	if (bits == 0x8000000000000000ULL || !(v >= -9007199254740992.0 && v <= 9007199254740992.0))
		return 0; /* -0.0, NaN, too large */
	return v == (double)(int64_t)v;
}

/* Switch the value column from int deltas to raw XOR bits (a non-integer arrived). */
static int value_to_raw(struct tft_chunk_enc *e)
{
	struct tft_chunk_buf *b = &e->col[TFT_CHUNK_COL_VALUE];
	size_t cap = (size_t)e->n * 8 + 64;
	uint8_t *nb = malloc(cap), *q = nb;
	const uint8_t *p = b->p, *end = b->p + b->len;
	int64_t prev = 0;
	uint64_t prev_bits = 0;

	if (!nb)
		return TFT_ENOMEM;
	for (uint32_t i = 0; i < e->n; i++) {
		uint64_t u = 0, bits;
		double d;
		for (int shift = 0; p < end; shift += 7) {
			uint8_t x = *p++;
			u |= (uint64_t)(x & 0x7f) << shift;
			if (!(x & 0x80))
				break;
		}
		prev = (int64_t)((uint64_t)prev + (uint64_t)zz_dec(u));
		d = (double)prev;
		memcpy(&bits, &d, sizeof(bits));
		put_u64le(q, bits ^ prev_bits);
		q += 8;
		prev_bits = bits;
	}
	e->bytes += (size_t)(q - nb) - b->len;
	free(b->p);
	b->p = nb;
	b->len = (size_t)(q - nb);
	b->cap = cap;
	e->prev_value_bits = prev_bits;
	e->value_int = 0;
	return 0;
}

/* Append arg a to its column (room reserved); returns the bytes written. */
static inline size_t arg_put(struct tft_chunk_acol *ac, const struct tft_arg *a)
{
	uint8_t *p = ac->data.p + ac->data.len;
	uint32_t tag = ac->tag;
	size_t k;

	/* Most frequent first (a chain of tests predicts better than a jump table). */
	if (tag == TFT_CHUNK_TAG_INT) {
		int64_t i = a->v.i;
		k = put_uv(p, zz_enc((int64_t)((uint64_t)i - (uint64_t)ac->prev_i)));
		ac->prev_i = i;
	} else if (tag == TFT_CHUNK_TAG_STR || tag == TFT_CHUNK_TAG_JSON) {
		k = put_uv(p, a->v.str);
	} else if (tag == TFT_CHUNK_TAG_DOUBLE) {
		uint64_t bits;
		memcpy(&bits, &a->v.d, sizeof(bits));
		put_u64le(p, bits);
		k = 8;
	} else {
		return 0; /* null, false, true: presence only */
	}
	ac->data.len += k;
	return k;
}

/* An arg's first 8 bytes: its key and type (in host order). */
static inline uint64_t arg_head(const struct tft_arg *a)
{
	uint64_t h;

	memcpy(&h, a, sizeof(h));
	return h;
}

/*
 * The aslot code of a column: the head of an arg with its key and the tag
 * as type. For every type but bool the tag is the type, so such an arg's
 * head is its column's code as is.
 */
static inline uint64_t arg_code(uint32_t key, uint32_t tag)
{
	struct tft_arg a = { .key = key, .type = tag };

	return arg_head(&a);
}
_Static_assert(offsetof(struct tft_arg, type) == 4 && sizeof(((struct tft_arg *)0)->type) == 4,
	       "an arg's key and type fill its first 8 bytes");

/* The way of slot s from w on that holds code, or TFT_CHUNK_AWAYS if none. */
static inline uint32_t aslot_way_from(const struct tft_chunk_aslot *s, uint64_t code, uint32_t w)
{
	while (w < TFT_CHUNK_AWAYS && s->code[w] != code)
		w++;
	return w;
}

static inline uint32_t aslot_way(const struct tft_chunk_aslot *s, uint64_t code)
{
	return aslot_way_from(s, code, 0);
}

/* Put (code, idx) in way 0 of slot s, the ways before w one further. */
static inline void aslot_front(struct tft_chunk_aslot *s, uint32_t w, uint64_t code, uint32_t idx)
{
	for (; w > 0; w--) {
		s->code[w] = s->code[w - 1];
		s->idx[w] = s->idx[w - 1];
	}
	s->code[0] = code;
	s->idx[0] = idx;
}

/* If an older way of slot s holds code, make it way 0 (the latest); true if so. */
static inline int aslot_swap(struct tft_chunk_aslot *s, uint64_t code)
{
	uint32_t w = aslot_way(s, code);

	if (w == TFT_CHUNK_AWAYS)
		return 0;
	aslot_front(s, w, code, s->idx[w]);
	return 1;
}

/*
 * Look up the columns of args [from, nargs) into aslot[from, nargs) (args
 * before `from` hit the cache). Columns are created in arg order, as a
 * lookup of every arg would: the cache never changes the column numbering.
 */
static int args_lookup(struct tft_chunk_enc *e, const struct tft_event *ev, uint32_t from)
{
	if (ev->nargs > e->cap_aslots) {
		uint32_t ncap = e->cap_aslots ? e->cap_aslots : 4;
		struct tft_chunk_aslot *ns;

		while (ncap < ev->nargs)
			ncap *= 2;
		ns = realloc(e->aslot, (size_t)ncap * sizeof(*ns));
		if (!ns)
			return TFT_ENOMEM;
		e->aslot = ns;
		e->cap_aslots = ncap;
	}
	for (uint32_t i = from; i < ev->nargs; i++) {
		struct tft_chunk_aslot *s = &e->aslot[i];
		uint32_t tag = arg_tag(&ev->args[i]);
		uint64_t code = arg_code(ev->args[i].key, tag);
		int64_t idx;

		if (i < e->naslots && (s->code[0] == code || aslot_swap(s, code)))
			continue;
		idx = acol_get(e, ev->args[i].key, tag);
		if (idx < 0)
			return TFT_ENOMEM;
		if (i >= e->naslots) {
			/* a new slot: no ways yet (its memory may be an old chunk's) */
			for (uint32_t w = 0; w < TFT_CHUNK_AWAYS; w++) {
				s->code[w] = UINT64_MAX;
				s->idx[w] = 0;
			}
			e->naslots = i + 1; /* slots below i are all set */
		}
		/* the oldest way gives way */
		aslot_front(s, TFT_CHUNK_AWAYS - 1, code, (uint32_t)idx);
	}
	return 0;
}

/* Slow path: reserve room in every column this event writes (with backfill). */
static int enc_reserve(struct tft_chunk_enc *e, const struct tft_event *ev, uint32_t fresh,
		       uint32_t cols, int value_int)
{
	uint32_t room = UINT32_MAX;

	for (uint32_t m = cols & ~BIT(TFT_CHUNK_COL_ARGREF); m; m &= m - 1) {
		int c = __builtin_ctz(m);
		struct tft_chunk_buf *b = &e->col[c];
		size_t need = 64 * 10; /* room for this and the next 63 events */

		if (fresh & BIT(c))
			need += c == TFT_CHUNK_COL_VALUE && !value_int ? (size_t)e->n * 8 : e->n;
		if (b->cap - b->len < need && tft_chunk_buf_reserve(b, need))
			return TFT_ENOMEM;
	}
	/* Backfill happens after this, so count it out of the room. */
	for (uint32_t m = e->present | cols; m; m &= m - 1) {
		int c = __builtin_ctz(m);
		const struct tft_chunk_buf *b = &e->col[c];
		size_t avail = b->cap - b->len, r;

		if (c == TFT_CHUNK_COL_ARGREF)
			continue;
		if (fresh & BIT(c))
			avail -= c == TFT_CHUNK_COL_VALUE && !value_int ? (size_t)e->n * 8 : e->n;
		r = avail / 10;
		if (r < room)
			room = (uint32_t)(r > UINT32_MAX ? UINT32_MAX : r);
	}
	e->room = room;
	(void)ev;
	return 0;
}

/*
 * Append the event to every column of cols (room reserved, backfill done),
 * its args too if with_args; wrote: bytes already added for this event.
 */
static inline __attribute__((always_inline)) void
enc_put(struct tft_chunk_enc *e, const struct tft_event *ev, uint32_t cols, int value_int,
	uint64_t vbits, int64_t end, size_t wrote, int with_args)
{
	uint32_t nargs = ev->nargs;

	if (e->n == 0) {
		e->base_ts = e->prev_ts = ev->ts_ns;
		e->t_min = ev->ts_ns;
		e->t_max = end;
	} else {
		if (ev->ts_ns < e->t_min)
			e->t_min = ev->ts_ns;
		if (end > e->t_max)
			e->t_max = end;
	}
#define PUT(c, v)                                                            \
	do {                                                                  \
		struct tft_chunk_buf *b_ = &e->col[c];                        \
		size_t k_ = put_uv(b_->p + b_->len, (v));                     \
		b_->len += k_;                                                \
		wrote += k_;                                                  \
	} while (0)
	PUT(TFT_CHUNK_COL_TS, zz_enc((int64_t)((uint64_t)ev->ts_ns - (uint64_t)e->prev_ts)));
	if (cols & BIT(TFT_CHUNK_COL_DUR))
		PUT(TFT_CHUNK_COL_DUR, zz_enc(ev->dur_ns));
	if (cols & BIT(TFT_CHUNK_COL_NAME))
		PUT(TFT_CHUNK_COL_NAME, ev->name);
	if (cols & BIT(TFT_CHUNK_COL_CAT))
		PUT(TFT_CHUNK_COL_CAT, ev->cat);
	if (cols & BIT(TFT_CHUNK_COL_DEPTH))
		PUT(TFT_CHUNK_COL_DEPTH, ev->depth);
	if (cols & BIT(TFT_CHUNK_COL_KIND))
		PUT(TFT_CHUNK_COL_KIND, ev->kind);
	if (cols & BIT(TFT_CHUNK_COL_FLAGS))
		PUT(TFT_CHUNK_COL_FLAGS, ev->flags);
	if (cols & BIT(TFT_CHUNK_COL_COUNT))
		PUT(TFT_CHUNK_COL_COUNT, ev->count);
	if (cols & BIT(TFT_CHUNK_COL_VALUE)) {
		if (value_int) {
			int64_t iv = vbits ? (int64_t)ev->value : 0;
			PUT(TFT_CHUNK_COL_VALUE, zz_enc((int64_t)((uint64_t)iv - (uint64_t)e->prev_value_i)));
			e->prev_value_i = iv;
		} else {
			struct tft_chunk_buf *b = &e->col[TFT_CHUNK_COL_VALUE];
			put_u64le(b->p + b->len, vbits ^ e->prev_value_bits);
			b->len += 8;
			wrote += 8;
		}
	}
	if (cols & BIT(TFT_CHUNK_COL_NARGS))
		PUT(TFT_CHUNK_COL_NARGS, nargs);
	if (with_args && nargs) {
		/* Locals: byte stores may alias any field, which would be reloaded. */
		struct tft_chunk_buf *rb = &e->col[TFT_CHUNK_COL_ARGREF];
		uint8_t *ref = rb->p + rb->len, *ref0 = ref;
		struct tft_chunk_acol *acols = e->acols;
		const struct tft_chunk_aslot *slot = e->aslot;
		const struct tft_arg *args = ev->args;

		for (uint32_t i = 0; i < nargs; i++) {
			uint32_t idx = slot[i].idx[0];

			if (tft_likely(idx < 0x80))
				*ref++ = (uint8_t)idx;
			else
				ref += put_uv(ref, idx);
			wrote += arg_put(&acols[idx], &args[i]);
		}
		rb->len += (size_t)(ref - ref0);
		wrote += (size_t)(ref - ref0);
	}
#undef PUT
	e->room--;
	e->bytes += wrote;
	e->prev_value_bits = vbits;
	e->kind_mask |= 1u << ev->kind;
	e->prev_ts = ev->ts_ns;
	e->n++;
}

/*
 * Take back what the args [0, n) of ev (valid, each in a column of its slot)
 * added to their columns, the last first: a column may hold several of
 * them, its last value the last of them. An int's delta gives back the
 * column's previous value.
 */
static __attribute__((noinline)) void args_unput(struct tft_chunk_enc *e,
						 const struct tft_event *ev, uint32_t n)
{
	while (n-- > 0) {
		const struct tft_arg *a = &ev->args[n];
		const struct tft_chunk_aslot *s = &e->aslot[n];
		uint32_t way = aslot_way(s, arg_code(a->key, arg_tag(a)));
		struct tft_chunk_acol *ac = &e->acols[s->idx[way]];
		struct tft_chunk_buf *b = &ac->data;
		uint64_t u = 0;
		size_t k = 1;

		if (ac->tag == TFT_CHUNK_TAG_DOUBLE) {
			b->len -= 8;
			continue;
		}
		if (ac->tag != TFT_CHUNK_TAG_INT && ac->tag != TFT_CHUNK_TAG_STR &&
		    ac->tag != TFT_CHUNK_TAG_JSON)
			continue; /* presence only */
		/* the varint's first byte follows the column's previous last byte */
		while (k < b->len && (b->p[b->len - k - 1] & 0x80))
			k++;
		b->len -= k;
		if (ac->tag == TFT_CHUNK_TAG_INT) {
			for (size_t j = 0; j < k; j++)
				u |= (uint64_t)(b->p[b->len + j] & 0x7f) << (7 * j);
			ac->prev_i = (int64_t)((uint64_t)a->v.i - (uint64_t)zz_dec(u));
		}
	}
}

/*
 * The general case of tft_chunk_enc_add: a column appears, the columns
 * need room, an arg misses its position's cached columns, the value column
 * changes mode, or the event is bad.
 */
static __attribute__((noinline)) int enc_add_slow(struct tft_chunk_enc *e,
						  const struct tft_event *ev)
{
	uint64_t vbits;
	int64_t end;
	uint32_t want, fresh, cols, nargs = ev->nargs, slow = nargs;
	size_t aneed = (size_t)nargs * 10; /* room per arg column (args may share one) */
	size_t wrote = 0;
	int value_int = e->value_int, vint;

	if (tft_unlikely(ev->kind > TFT_EV_COUNTER || ev->dur_ns < 0 ||
			 __builtin_add_overflow(ev->ts_ns, ev->dur_ns, &end) ||
			 (nargs && !ev->args)))
		return TFT_EINVAL;
	/*
	 * Validate the args. Up to the first that needs the slow path (its
	 * column is not the cached one of its position, or lacks room), also
	 * check each one's column: the common case then needs no other pass.
	 */
	if (nargs) {
		const struct tft_arg *args = ev->args;
		struct tft_chunk_aslot *slot = e->aslot;
		const struct tft_chunk_acol *acols = e->acols;
		uint32_t i = 0, nfast = nargs < e->naslots ? nargs : e->naslots;

		for (; i < nfast; i++) {
			uint32_t tag = arg_tag(&args[i]);
			uint64_t code;
			const struct tft_chunk_buf *b;

			if (tft_unlikely(tag == UINT32_MAX))
				return TFT_EINVAL;
			code = arg_code(args[i].key, tag);
			if (slot[i].code[0] != code && !aslot_swap(&slot[i], code))
				break;
			b = &acols[slot[i].idx[0]].data;
			if (b->cap - b->len < aneed)
				break;
		}
		slow = i;
		for (; i < nargs; i++)
			if (tft_unlikely(arg_tag(&args[i]) == UINT32_MAX))
				return TFT_EINVAL;
	}
	if (tft_unlikely(e->n >= TFT_CHUNK_MAX_EVENTS))
		return TFT_ENOSPC;
	memcpy(&vbits, &ev->value, sizeof(vbits));

	/* Columns this event has a non-default value for. */
	want = BIT(TFT_CHUNK_COL_TS);
	want |= ev->dur_ns ? BIT(TFT_CHUNK_COL_DUR) : 0;
	want |= ev->name ? BIT(TFT_CHUNK_COL_NAME) : 0;
	want |= ev->cat ? BIT(TFT_CHUNK_COL_CAT) : 0;
	want |= ev->depth ? BIT(TFT_CHUNK_COL_DEPTH) : 0;
	want |= ev->kind ? BIT(TFT_CHUNK_COL_KIND) : 0;
	want |= ev->flags ? BIT(TFT_CHUNK_COL_FLAGS) : 0;
	want |= ev->count != 1 ? BIT(TFT_CHUNK_COL_COUNT) : 0;
	want |= vbits ? BIT(TFT_CHUNK_COL_VALUE) : 0;
	want |= ev->nargs ? BIT(TFT_CHUNK_COL_NARGS) | BIT(TFT_CHUNK_COL_ARGREF) : 0;
	fresh = want & ~e->present;
	cols = e->present | want;

	/* Value mode: ints as varint deltas until the first non-integer. */
	vint = vbits ? value_is_int(ev->value, vbits) : 1;
	if (tft_unlikely(!vint && value_int)) {
		if (e->present & BIT(TFT_CHUNK_COL_VALUE)) {
			if (value_to_raw(e))
				return TFT_ENOMEM;
			e->room = 0;
		}
		value_int = 0;
	}
	/* Reserve first, so that a failure leaves the chunk as it was. */
	if (tft_unlikely(fresh || e->room == 0)) {
		if (enc_reserve(e, ev, fresh, cols, value_int))
			return TFT_ENOMEM;
	}
	if (nargs) {
		struct tft_chunk_buf *b = &e->col[TFT_CHUNK_COL_ARGREF];
		size_t need = (size_t)nargs * 5; /* argref: column indexes, 5 bytes up to 2^35 */

		if (b->cap - b->len < need && tft_chunk_buf_reserve(b, need))
			return TFT_ENOMEM;
		if (tft_unlikely(slow < nargs)) {
			if (args_lookup(e, ev, slow))
				return TFT_ENOMEM;
			for (uint32_t i = slow; i < nargs; i++) {
				b = &e->acols[e->aslot[i].idx[0]].data;
				if (b->cap - b->len < aneed && tft_chunk_buf_reserve(b, aneed))
					return TFT_ENOMEM;
			}
		}
	}

	if (tft_unlikely(fresh & ~BIT(TFT_CHUNK_COL_ARGREF))) {
		for (uint32_t m = fresh & ~BIT(TFT_CHUNK_COL_ARGREF); m; m &= m - 1)
			wrote += backfill(e, __builtin_ctz(m), value_int);
		if (fresh & BIT(TFT_CHUNK_COL_VALUE))
			e->value_int = (uint32_t)value_int;
	}
	if (fresh)
		enc_set_present(e, cols);
	enc_put(e, ev, cols, value_int, vbits, end, wrote, 1);
	return 0;
}

/*
 * The common case, all checks in one pass before any write: every column
 * the event has a value for is present and has room, the value column keeps
 * its mode, and each arg's column is a cached one of its position with room.
 * Anything else takes enc_add_slow, which repeats the checks in full.
 */
int tft_chunk_enc_add(struct tft_chunk_enc *e, const struct tft_event *ev)
{
	uint64_t vbits;
	int64_t end;
	uint32_t nargs = ev->nargs, i = 0;
	size_t wrote = 0;

	if (tft_unlikely(ev_odd(e, ev) || e->room == 0 || ev->kind > TFT_EV_COUNTER || ev->dur_ns < 0 ||
			 __builtin_add_overflow(ev->ts_ns, ev->dur_ns, &end) ||
			 e->n >= TFT_CHUNK_MAX_EVENTS))
		return enc_add_slow(e, ev);
	memcpy(&vbits, &ev->value, sizeof(vbits));
	/* (the value column is present when vbits != 0: odd is 0) */
	if (tft_unlikely(vbits && e->value_int && !value_is_int(ev->value, vbits)))
		return enc_add_slow(e, ev);
	if (nargs) {
		/* Locals: byte stores may alias any field, which would be reloaded. */
		const struct tft_arg *args = ev->args;
		struct tft_chunk_aslot *slot = e->aslot;
		struct tft_chunk_acol *acols = e->acols;
		struct tft_chunk_buf *rb = &e->col[TFT_CHUNK_COL_ARGREF];
		uint8_t *ref = rb->p + rb->len, *ref0 = ref;

		if (tft_unlikely(!args || nargs > e->naslots || rb->cap - rb->len < (size_t)nargs * 5))
			return enc_add_slow(e, ev);
		/* Check and write each arg in turn; a miss takes the writes back. */
		for (; i < nargs; i++) {
			uint32_t t = args[i].type, idx;
			uint64_t code = arg_head(&args[i]);
			struct tft_chunk_acol *ac;

			/* For most types the arg's own key and type are the code. */
			if (tft_unlikely(t < TFT_ARG_INT || t > TFT_ARG_JSON)) {
				if (t > TFT_ARG_JSON)
					goto miss; /* bad type */
				code = arg_code(args[i].key, arg_tag(&args[i]));
			}
			/* Either way: the ways are swapped only by enc_add_slow. */
			if (tft_likely(slot[i].code[0] == code)) {
				idx = slot[i].idx[0];
			} else if (slot[i].code[1] == code) {
				idx = slot[i].idx[1]; /* two kinds of events alternate */
			} else {
				uint32_t w = aslot_way_from(&slot[i], code, 2);

				if (w == TFT_CHUNK_AWAYS)
					goto miss;
				idx = slot[i].idx[w];
			}
			ac = &acols[idx];
			if (tft_unlikely(ac->data.cap - ac->data.len < 10))
				goto miss;
			if (tft_likely(idx < 0x80))
				*ref++ = (uint8_t)idx;
			else
				ref += put_uv(ref, idx);
			wrote += arg_put(ac, &args[i]);
		}
		rb->len += (size_t)(ref - ref0);
		wrote += (size_t)(ref - ref0);
	}
	enc_put(e, ev, e->present, (int)e->value_int, vbits, end, wrote, 0);
	return 0;
miss:
	args_unput(e, ev, i);
	return enc_add_slow(e, ev);
}

int tft_chunk_enc_payload(const struct tft_chunk_enc *e, struct tft_chunk_buf *out)
{
	size_t need = 2 + 5 * 10 + (size_t)e->nacols * 16;

	for (int c = 0; c < TFT_CHUNK_NCOLS; c++)
		need += 10 + e->col[c].len;
	for (uint32_t i = 0; i < e->nacols; i++)
		need += 10 + e->acols[i].data.len;
	out->len = 0;
	if (tft_chunk_buf_reserve(out, need))
		return TFT_ENOMEM;
	out->p[out->len++] = TFT_CHUNK_MAGIC;
	out->p[out->len++] = TFT_CHUNK_VERSION;
	buf_uv(out, e->kind_mask);
	buf_uv(out, e->present);
	buf_uv(out, (e->present & BIT(TFT_CHUNK_COL_VALUE)) && e->value_int ? TFT_CHUNK_ENC_VALUE_INT : 0);
	buf_uv(out, e->n);
	buf_uv(out, zz_enc(e->base_ts));
	buf_uv(out, e->nacols);
	for (uint32_t i = 0; i < e->nacols; i++) {
		buf_uv(out, e->acols[i].key);
		out->p[out->len++] = (uint8_t)e->acols[i].tag;
	}
	for (int c = 0; c < TFT_CHUNK_NCOLS; c++) {
		if (!(e->present & (1u << c)))
			continue;
		buf_uv(out, e->col[c].len);
		if (e->col[c].len)
			memcpy(out->p + out->len, e->col[c].p, e->col[c].len);
		out->len += e->col[c].len;
	}
	for (uint32_t i = 0; i < e->nacols; i++) {
		const struct tft_chunk_buf *b = &e->acols[i].data;
		buf_uv(out, b->len);
		if (b->len)
			memcpy(out->p + out->len, b->p, b->len);
		out->len += b->len;
	}
	return 0;
}

int tft_chunk_enc_finish(const struct tft_chunk_enc *e, void *cctx, int level,
			 struct tft_chunk_buf *scratch, struct tft_chunk_buf *out)
{
	size_t bound, r;
	int rc = tft_chunk_enc_payload(e, scratch);

	if (rc)
		return rc;
	bound = ZSTD_compressBound(scratch->len);
	out->len = 0;
	if (tft_chunk_buf_reserve(out, bound))
		return TFT_ENOMEM;
	r = ZSTD_compressCCtx(cctx, out->p, bound, scratch->p, scratch->len, level);
	if (ZSTD_isError(r))
		return TFT_EIO;
	out->len = r;
	return 0;
}

/* ---- decoder ---------------------------------------------------------------- */

struct rd {
	const uint8_t *p, *end;
	const uint8_t *base; /* start of the payload, for error offsets */
};

/* A varint of at most 10 bytes, the 10th at most 1; -1 when cut off or too long. */
static __attribute__((noinline)) int rd_uv_slow(struct rd *r, uint64_t *out)
{
	uint64_t v = 0;

	for (int shift = 0; shift < 70; shift += 7) {
		if (r->p >= r->end)
			return -1;
		uint8_t b = *r->p++;
		if (shift == 63 && b > 1)
			return -1;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*out = v;
			return 0;
		}
	}
	return -1;
}

/* rd_uv_slow() without a bounds check per byte where 10 bytes are left (most of a column). */
static inline int rd_uv(struct rd *r, uint64_t *out)
{
	const uint8_t *p = r->p;
	uint64_t v, b;

	if (tft_unlikely(r->end - p < 10))
		return rd_uv_slow(r, out);
	b = *p++;
	if (tft_likely(b < 0x80)) {
		*out = b;
		r->p = p;
		return 0;
	}
	v = b & 0x7f;
	for (int shift = 7;; shift += 7) {
		b = *p++;
		if (b < 0x80) {
			if (shift == 63 && b > 1)
				return rd_uv_slow(r, out); /* the error, where the slow path reports it */
			*out = v | b << shift;
			r->p = p;
			return 0;
		}
		if (shift == 63)
			return rd_uv_slow(r, out);
		v |= (b & 0x7f) << shift;
	}
}

#define DEC_FAIL(r, what, ...)                                                              \
	tft_error_set(err, TFT_EFORMAT, (int64_t)((r)->p - (r)->base), "chunk %lld: " what,    \
		      (long long)chunk_id, ##__VA_ARGS__)

static const char *const col_names[TFT_CHUNK_NCOLS] = {
	"ts", "dur", "name", "cat", "depth", "kind", "flags", "count", "value", "nargs", "argref",
};

void tft_chunk_dec_init(struct tft_chunk_dec *d)
{
	memset(d, 0, sizeof(*d));
}

void tft_chunk_dec_fini(struct tft_chunk_dec *d)
{
	free(d->ev);
	free(d->args);
	tft_chunk_buf_free(&d->raw);
	if (d->dctx)
		ZSTD_freeDCtx(d->dctx);
	memset(d, 0, sizeof(*d));
}

/* Decode n varints of column c into field f of the events, each at most max. */
#define DEC_UV_COL(f, type)                                                                   \
	for (uint32_t i = 0; i < d->n; i++) {                                                 \
		uint64_t v;                                                                   \
		if (rd_uv(r, &v))                                                             \
			return DEC_FAIL(r, "%s column: truncated varint at event %u", col_names[c], i); \
		if (v > max)                                                                  \
			return DEC_FAIL(r, "%s column: value %llu out of range at event %u",  \
					col_names[c], (unsigned long long)v, i);              \
		d->ev[i].f = (type)v;                                                         \
	}

static int dec_uv_col(struct tft_chunk_dec *d, struct rd *r, int c, uint64_t max, int64_t chunk_id,
		      struct tft_error *err)
{
	switch (c) {
	case TFT_CHUNK_COL_NAME: DEC_UV_COL(name, uint32_t) break;
	case TFT_CHUNK_COL_CAT: DEC_UV_COL(cat, uint32_t) break;
	case TFT_CHUNK_COL_DEPTH: DEC_UV_COL(depth, uint32_t) break;
	case TFT_CHUNK_COL_KIND: DEC_UV_COL(kind, uint8_t) break;
	case TFT_CHUNK_COL_FLAGS: DEC_UV_COL(flags, uint8_t) break;
	case TFT_CHUNK_COL_COUNT: DEC_UV_COL(count, uint32_t) break;
	case TFT_CHUNK_COL_NARGS: DEC_UV_COL(nargs, uint16_t) break;
	}
	if (r->p != r->end)
		return DEC_FAIL(r, "%s column: %zu trailing bytes", col_names[c], (size_t)(r->end - r->p));
	return 0;
}

int tft_chunk_decode_payload(struct tft_chunk_dec *d, const void *payload, size_t len,
			     int64_t chunk_id, struct tft_error *err)
{
	const uint8_t *base = payload;
	struct rd r = { base, base + len, base };
	struct rd col[TFT_CHUNK_NCOLS];
	struct rd *acol = NULL;
	uint32_t *atag = NULL, *akey = NULL;
	uint64_t kind_mask, present, enc_flags, n, nacols, u;
	int64_t prev_ts;
	uint32_t max_str = 0, real_mask = 0;
	size_t total_args = 0;
	int rc = TFT_EFORMAT;

	d->n = 0;
	d->nargs = 0;
	d->kind_mask = 0;
	d->max_str = 0;
	d->t_min = d->t_max = 0;
	if (len < 2 || base[0] != TFT_CHUNK_MAGIC)
		return DEC_FAIL(&r, "bad magic (expected 0x%02x)", TFT_CHUNK_MAGIC);
	if (base[1] != TFT_CHUNK_VERSION)
		return DEC_FAIL(&r, "unknown chunk version %u (expected %u)", base[1], TFT_CHUNK_VERSION);
	r.p += 2;
	if (rd_uv(&r, &kind_mask) || kind_mask > 7)
		return DEC_FAIL(&r, "bad kind mask");
	if (rd_uv(&r, &present) || present >= (1u << TFT_CHUNK_NCOLS) ||
	    !(present & (1u << TFT_CHUNK_COL_TS)))
		return DEC_FAIL(&r, "bad column mask");
	if (!(present & (1u << TFT_CHUNK_COL_NARGS)) != !(present & (1u << TFT_CHUNK_COL_ARGREF)))
		return DEC_FAIL(&r, "nargs and argref columns must come together");
	if (rd_uv(&r, &enc_flags) || enc_flags > TFT_CHUNK_ENC_VALUE_INT)
		return DEC_FAIL(&r, "bad encoding flags");
	if (rd_uv(&r, &n) || n > TFT_CHUNK_MAX_EVENTS)
		return DEC_FAIL(&r, "bad event count (at most %u)", TFT_CHUNK_MAX_EVENTS);
	if (rd_uv(&r, &u))
		return DEC_FAIL(&r, "truncated base timestamp");
	prev_ts = zz_dec(u);
	if (rd_uv(&r, &nacols) || nacols > TFT_CHUNK_MAX_ARG_COLS ||
	    nacols > (uint64_t)(r.end - r.p) / 2)
		return DEC_FAIL(&r, "bad arg column count");
	if (nacols) {
		acol = malloc(nacols * sizeof(*acol));
		atag = malloc(nacols * sizeof(*atag));
		akey = malloc(nacols * sizeof(*akey));
		if (!acol || !atag || !akey) {
			rc = tft_error_set(err, TFT_ENOMEM, -1, "chunk %lld: out of memory",
					   (long long)chunk_id);
			goto out;
		}
	}
	for (uint64_t i = 0; i < nacols; i++) {
		if (rd_uv(&r, &u) || u > UINT32_MAX) {
			DEC_FAIL(&r, "bad key of arg column %llu", (unsigned long long)i);
			goto out;
		}
		akey[i] = (uint32_t)u;
		if (u > max_str)
			max_str = (uint32_t)u;
		if (r.p >= r.end || *r.p > TFT_CHUNK_TAG_MAX) {
			DEC_FAIL(&r, "bad type tag of arg column %llu", (unsigned long long)i);
			goto out;
		}
		atag[i] = *r.p++;
	}
	for (int c = 0; c < TFT_CHUNK_NCOLS; c++) {
		col[c].base = base;
		col[c].p = col[c].end = NULL;
		if (!(present & (1u << c)))
			continue;
		if (rd_uv(&r, &u) || u > (uint64_t)(r.end - r.p)) {
			DEC_FAIL(&r, "bad length of %s column", col_names[c]);
			goto out;
		}
		col[c].p = r.p;
		col[c].end = r.p + u;
		r.p += u;
	}
	for (uint64_t i = 0; i < nacols; i++) {
		acol[i].base = base;
		if (rd_uv(&r, &u) || u > (uint64_t)(r.end - r.p)) {
			DEC_FAIL(&r, "bad length of arg column %llu", (unsigned long long)i);
			goto out;
		}
		acol[i].p = r.p;
		acol[i].end = r.p + u;
		r.p += u;
	}
	if (r.p != r.end) {
		DEC_FAIL(&r, "%zu trailing bytes after the last column", (size_t)(r.end - r.p));
		goto out;
	}
	/* Every event takes at least one byte of the ts column: bounds n by the input. */
	if (n > (uint64_t)(col[TFT_CHUNK_COL_TS].end - col[TFT_CHUNK_COL_TS].p)) {
		r.p = col[TFT_CHUNK_COL_TS].p;
		DEC_FAIL(&r, "event count %llu exceeds the ts column", (unsigned long long)n);
		goto out;
	}
	if (n > d->cap_ev) {
		struct tft_event *ne = realloc(d->ev, n * sizeof(*ne));
		if (!ne) {
			rc = tft_error_set(err, TFT_ENOMEM, -1, "chunk %lld: out of memory",
					   (long long)chunk_id);
			goto out;
		}
		d->ev = ne;
		d->cap_ev = (uint32_t)n;
	}
	d->n = (uint32_t)n;
	for (uint32_t i = 0; i < d->n; i++)
		d->ev[i] = (struct tft_event){ .track = TFT_NONE, .count = 1 };

	/* ts */
	for (uint32_t i = 0; i < d->n; i++) {
		struct rd *cr = &col[TFT_CHUNK_COL_TS];
		if (rd_uv(cr, &u)) {
			DEC_FAIL(cr, "ts column: truncated varint at event %u", i);
			goto out;
		}
		if (i == 0 && u != 0) {
			DEC_FAIL(cr, "ts column: first delta must be 0");
			goto out;
		}
		prev_ts = (int64_t)((uint64_t)prev_ts + (uint64_t)zz_dec(u));
		d->ev[i].ts_ns = prev_ts;
	}
	if (col[TFT_CHUNK_COL_TS].p != col[TFT_CHUNK_COL_TS].end) {
		DEC_FAIL(&col[TFT_CHUNK_COL_TS], "ts column: trailing bytes");
		goto out;
	}
	/* dur */
	if (present & (1u << TFT_CHUNK_COL_DUR)) {
		struct rd *cr = &col[TFT_CHUNK_COL_DUR];
		for (uint32_t i = 0; i < d->n; i++) {
			int64_t dur, end;
			if (rd_uv(cr, &u)) {
				DEC_FAIL(cr, "dur column: truncated varint at event %u", i);
				goto out;
			}
			dur = zz_dec(u);
			if (dur < 0 || __builtin_add_overflow(d->ev[i].ts_ns, dur, &end)) {
				DEC_FAIL(cr, "dur column: bad duration at event %u", i);
				goto out;
			}
			d->ev[i].dur_ns = dur;
		}
		if (cr->p != cr->end) {
			DEC_FAIL(cr, "dur column: trailing bytes");
			goto out;
		}
	}
	{
		static const struct {
			int c;
			uint64_t max;
		} uvcols[] = {
			{ TFT_CHUNK_COL_NAME, UINT32_MAX },  { TFT_CHUNK_COL_CAT, UINT32_MAX },
			{ TFT_CHUNK_COL_DEPTH, UINT32_MAX }, { TFT_CHUNK_COL_KIND, TFT_EV_COUNTER },
			{ TFT_CHUNK_COL_FLAGS, UINT8_MAX },  { TFT_CHUNK_COL_COUNT, UINT32_MAX },
			{ TFT_CHUNK_COL_NARGS, UINT16_MAX },
		};
		for (size_t k = 0; k < sizeof(uvcols) / sizeof(uvcols[0]); k++) {
			int c = uvcols[k].c;
			if (!(present & (1u << c)) || (c == TFT_CHUNK_COL_NARGS && d->no_args))
				continue;
			rc = dec_uv_col(d, &col[c], c, uvcols[k].max, chunk_id, err);
			if (rc)
				goto out;
			rc = TFT_EFORMAT;
		}
	}
	/* value */
	if (present & (1u << TFT_CHUNK_COL_VALUE)) {
		struct rd *cr = &col[TFT_CHUNK_COL_VALUE];

		if (enc_flags & TFT_CHUNK_ENC_VALUE_INT) {
			int64_t iv = 0;
			for (uint32_t i = 0; i < d->n; i++) {
				if (rd_uv(cr, &u)) {
					DEC_FAIL(cr, "value column: truncated varint at event %u", i);
					goto out;
				}
				iv = (int64_t)((uint64_t)iv + (uint64_t)zz_dec(u));
				d->ev[i].value = (double)iv;
			}
			if (cr->p != cr->end) {
				DEC_FAIL(cr, "value column: trailing bytes");
				goto out;
			}
		} else {
			uint64_t prev = 0;
			if ((uint64_t)(cr->end - cr->p) != (uint64_t)d->n * 8) {
				DEC_FAIL(cr, "value column: %zu bytes for %u events",
					 (size_t)(cr->end - cr->p), d->n);
				goto out;
			}
			for (uint32_t i = 0; i < d->n; i++) {
				prev ^= get_u64le(cr->p + (size_t)i * 8);
				memcpy(&d->ev[i].value, &prev, sizeof(prev));
			}
		}
	}
	for (uint32_t i = 0; i < d->n; i++) {
		struct tft_event *ev = &d->ev[i];
		int64_t end = ev->ts_ns + ev->dur_ns;
		if (i == 0 || ev->ts_ns < d->t_min)
			d->t_min = ev->ts_ns;
		if (i == 0 || end > d->t_max)
			d->t_max = end;
		if (ev->name > max_str)
			max_str = ev->name;
		if (ev->cat > max_str)
			max_str = ev->cat;
		real_mask |= 1u << ev->kind;
		total_args += ev->nargs;
	}
	if (real_mask != kind_mask) {
		r.p = base + 2;
		DEC_FAIL(&r, "kind mask 0x%llx does not match the events (0x%x)",
			 (unsigned long long)kind_mask, real_mask);
		goto out;
	}
	/* args */
	if (d->no_args) {
		/* not read: the caller wants none */
	} else if (total_args) {
		struct rd *cr = &col[TFT_CHUNK_COL_ARGREF];
		size_t k = 0;

		if (total_args > (size_t)(cr->end - cr->p)) {
			DEC_FAIL(cr, "argref column too short for %zu args", total_args);
			goto out;
		}
		if (total_args > d->cap_args) {
			struct tft_arg *na = realloc(d->args, total_args * sizeof(*na));
			if (!na) {
				rc = tft_error_set(err, TFT_ENOMEM, -1, "chunk %lld: out of memory",
						   (long long)chunk_id);
				goto out;
			}
			d->args = na;
			d->cap_args = total_args;
		}
		int64_t *prev_i = calloc(nacols ? nacols : 1, sizeof(*prev_i));
		if (!prev_i) {
			rc = tft_error_set(err, TFT_ENOMEM, -1, "chunk %lld: out of memory",
					   (long long)chunk_id);
			goto out;
		}
		for (uint32_t i = 0; i < d->n; i++) {
			struct tft_event *ev = &d->ev[i];
			ev->args = ev->nargs ? &d->args[k] : NULL;
			for (uint16_t j = 0; j < ev->nargs; j++, k++) {
				struct tft_arg *a = &d->args[k];
				struct rd *ar;
				uint64_t ci;

				if (rd_uv(cr, &ci) || ci >= nacols) {
					free(prev_i);
					DEC_FAIL(cr, "argref column: bad column index at event %u", i);
					goto out;
				}
				ar = &acol[ci];
				memset(a, 0, sizeof(*a));
				a->key = akey[ci];
				switch (atag[ci]) {
				case TFT_CHUNK_TAG_NULL: a->type = TFT_ARG_NULL; break;
				case TFT_CHUNK_TAG_FALSE: a->type = TFT_ARG_BOOL; a->v.i = 0; break;
				case TFT_CHUNK_TAG_TRUE: a->type = TFT_ARG_BOOL; a->v.i = 1; break;
				case TFT_CHUNK_TAG_INT:
					a->type = TFT_ARG_INT;
					if (rd_uv(ar, &u))
						goto bad_arg;
					prev_i[ci] = (int64_t)((uint64_t)prev_i[ci] + (uint64_t)zz_dec(u));
					a->v.i = prev_i[ci];
					break;
				case TFT_CHUNK_TAG_DOUBLE: {
					uint64_t bits;
					if (ar->end - ar->p < 8)
						goto bad_arg;
					bits = get_u64le(ar->p);
					ar->p += 8;
					memcpy(&a->v.d, &bits, sizeof(bits));
					a->type = TFT_ARG_DOUBLE;
					break;
				}
				case TFT_CHUNK_TAG_STR:
				case TFT_CHUNK_TAG_JSON:
					a->type = atag[ci] == TFT_CHUNK_TAG_STR ? TFT_ARG_STR : TFT_ARG_JSON;
					if (rd_uv(ar, &u) || u > UINT32_MAX)
						goto bad_arg;
					a->v.str = (uint32_t)u;
					if (a->v.str > max_str)
						max_str = a->v.str;
					break;
				}
				continue;
bad_arg:
				free(prev_i);
				DEC_FAIL(ar, "arg column %llu: truncated value at event %u",
					 (unsigned long long)ci, i);
				goto out;
			}
		}
		free(prev_i);
		if (cr->p != cr->end) {
			DEC_FAIL(cr, "argref column: trailing bytes");
			goto out;
		}
	} else if (present & (1u << TFT_CHUNK_COL_ARGREF) &&
		   col[TFT_CHUNK_COL_ARGREF].p != col[TFT_CHUNK_COL_ARGREF].end) {
		DEC_FAIL(&col[TFT_CHUNK_COL_ARGREF], "argref column: trailing bytes");
		goto out;
	}
	for (uint64_t i = 0; i < nacols && !d->no_args; i++) {
		if (acol[i].p != acol[i].end) {
			DEC_FAIL(&acol[i], "arg column %llu: trailing bytes", (unsigned long long)i);
			goto out;
		}
	}
	d->nargs = total_args;
	d->kind_mask = real_mask;
	d->max_str = max_str;
	rc = 0;
out:
	free(acol);
	free(atag);
	free(akey);
	if (rc)
		d->n = 0;
	return rc;
}

/*
 * Decompress one zstd frame (with its content size, at most the payload limit,
 * nothing after it) into raw. *dctx is created on first use.
 */
static int unzstd(void **dctx, struct tft_chunk_buf *raw, const void *blob, size_t len,
		  const char *what, int64_t chunk_id, struct tft_error *err)
{
	unsigned long long size;
	size_t r;

	raw->len = 0;
	if (!blob || len == 0)
		return tft_error_set(err, TFT_EFORMAT, 0, "%s %lld: empty blob", what,
				     (long long)chunk_id);
	size = ZSTD_getFrameContentSize(blob, len);
	if (size == ZSTD_CONTENTSIZE_UNKNOWN || size == ZSTD_CONTENTSIZE_ERROR)
		return tft_error_set(err, TFT_EFORMAT, 0, "%s %lld: not a zstd frame with a size",
				     what, (long long)chunk_id);
	if (size > TFT_CHUNK_MAX_PAYLOAD_BYTES)
		return tft_error_set(err, TFT_EFORMAT, 0,
				     "%s %lld: payload of %llu bytes exceeds the limit", what,
				     (long long)chunk_id, size);
	r = ZSTD_findFrameCompressedSize(blob, len);
	if (ZSTD_isError(r) || r != len)
		return tft_error_set(err, TFT_EFORMAT, 0, "%s %lld: blob is not exactly one zstd frame",
				     what, (long long)chunk_id);
	if (!*dctx) {
		*dctx = ZSTD_createDCtx();
		if (!*dctx)
			return tft_error_set(err, TFT_ENOMEM, -1, "%s %lld: out of memory", what,
					     (long long)chunk_id);
	}
	if (tft_chunk_buf_reserve(raw, size ? (size_t)size : 1))
		return tft_error_set(err, TFT_ENOMEM, -1, "%s %lld: out of memory", what,
				     (long long)chunk_id);
	r = ZSTD_decompressDCtx(*dctx, raw->p, (size_t)size, blob, len);
	if (ZSTD_isError(r) || r != size)
		return tft_error_set(err, TFT_EFORMAT, 0, "%s %lld: zstd: %s", what, (long long)chunk_id,
				     ZSTD_isError(r) ? ZSTD_getErrorName(r) : "size mismatch");
	raw->len = r;
	return 0;
}

int tft_chunk_decode_ext(struct tft_chunk_dec *d, void **dctx, struct tft_chunk_buf *raw,
			 const void *blob, size_t len, int64_t chunk_id, struct tft_error *err)
{
	int rc;

	d->n = 0;
	if ((rc = unzstd(dctx, raw, blob, len, "chunk", chunk_id, err)))
		return rc;
	return tft_chunk_decode_payload(d, raw->p, raw->len, chunk_id, err);
}

int tft_chunk_decode(struct tft_chunk_dec *d, const void *blob, size_t len, int64_t chunk_id,
		     struct tft_error *err)
{
	return tft_chunk_decode_ext(d, &d->dctx, &d->raw, blob, len, chunk_id, err);
}

size_t tft_chunk_dec_bytes(const struct tft_chunk_dec *d)
{
	return sizeof(*d) + (size_t)d->cap_ev * sizeof(*d->ev) + d->cap_args * sizeof(*d->args) +
	       d->raw.cap;
}

/* ---- flow chunks --------------------------------------------------------------- */

#define FLOW_FAIL(r, what, ...)                                                              \
	tft_error_set(err, TFT_EFORMAT, (int64_t)((r)->p - (r)->base), "flow chunk %lld: " what, \
		      (long long)chunk_id, ##__VA_ARGS__)

static const char *const flow_col_names[TFT_FLOW_NCOLS] = {
	"ts", "src_ts", "dst_ts", "src_track", "dst_track", "flow_id", "name", "cat", "flags",
};

/* Largest stored value per column (track columns hold id + 1). */
static const uint64_t flow_col_max[TFT_FLOW_NCOLS] = {
	UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT32_MAX, UINT32_MAX, UINT64_MAX, UINT32_MAX, UINT32_MAX,
	UINT32_MAX,
};

/* Bytes a column's varint can take per flow (64-bit values: 10, 32-bit: 5). */
static const uint8_t flow_col_bytes[TFT_FLOW_NCOLS] = { 10, 10, 10, 5, 5, 10, 5, 5, 5 };
#define FLOW_MAX_BYTES 65 /* their sum */

struct flow_key {
	int64_t ts;
	uint32_t i;
};

/* Index after the ascending (non-decreasing ts) run of k that starts at i < n. */
static inline uint32_t flow_run_end(const struct flow_key *k, uint32_t i, uint32_t n)
{
	for (i++; i < n && k[i].ts >= k[i - 1].ts; i++)
		;
	return i;
}

/* Merge adjacent runs a[0, na) and b[0, nb) into out; on equal ts a's (earlier) flow first. */
static void flow_merge(const struct flow_key *a, uint32_t na, const struct flow_key *b,
		       uint32_t nb, struct flow_key *out)
{
	const struct flow_key *ae = a + na, *be = b + nb;

	while (a < ae && b < be)
		*out++ = b->ts < a->ts ? *b++ : *a++;
	memcpy(out, a, (size_t)(ae - a) * sizeof(*a));
	out += ae - a;
	memcpy(out, b, (size_t)(be - b) * sizeof(*b));
}

/*
 * Sort key[0, n) by ts, ties in index order (the order of a stable sort),
 * with tmp[0, n) as the other buffer; returns the one holding the result.
 * Natural merge sort: flows arrive as a few ascending runs (one per producer
 * thread or line), so the common cases cost one or two linear passes; the
 * worst case is O(n log n).
 */
static struct flow_key *flow_sort(struct flow_key *key, struct flow_key *tmp, uint32_t n)
{
	struct flow_key *src = key, *dst = tmp, *t;

	for (;;) {
		uint32_t i = 0, runs = 0;

		while (i < n) {
			uint32_t m = flow_run_end(src, i, n), e;

			if (m == n) {
				if (i == 0)
					return src; /* one run: sorted */
				memcpy(dst + i, src + i, (size_t)(n - i) * sizeof(*src));
				runs++;
				break;
			}
			e = flow_run_end(src, m, n);
			flow_merge(src + i, m - i, src + m, e - m, dst + i);
			runs++;
			i = e;
		}
		t = src;
		src = dst;
		dst = t;
		if (runs == 1)
			return src;
	}
}

/* Is column data p[0, len) of n values all zeros (one 0 byte per value)? */
static int flow_col_zero(const uint8_t *p, size_t len, uint32_t n)
{
	size_t i = 0;

	if (len != n)
		return 0;
	for (; i + 8 <= len; i += 8) {
		uint64_t w;
		memcpy(&w, p + i, sizeof(w));
		if (w)
			return 0;
	}
	for (; i < len; i++)
		if (p[i])
			return 0;
	return 1;
}

static inline int64_t flow_time(const struct tft_flow *f)
{
	return f->src_track == TFT_NONE && f->dst_track != TFT_NONE ? f->dst_ts_ns : f->src_ts_ns;
}

int64_t tft_flow_time(const struct tft_flow *f)
{
	return flow_time(f);
}

/*
 * Working space, reused across calls instead of allocated per chunk:
 * scratch first holds the sort keys (and the merge buffer), out the columns
 * (at fixed offsets, FLOW_MAX_BYTES per flow); then scratch receives the
 * payload and out the compressed blob.
 */
int tft_flow_chunk_encode(const struct tft_flow *f, uint32_t n, void *cctx, int level,
			  struct tft_chunk_buf *scratch, struct tft_chunk_buf *out, int64_t *t_min,
			  int64_t *t_max)
{
	uint8_t *col[TFT_FLOW_NCOLS], *p[TFT_FLOW_NCOLS];
	struct flow_key *key;
	uint32_t present = 0;
	int64_t prev_ts, base_ts;
	uint64_t prev_id = 0;
	size_t need, bound, r, off = 0;

	if (n == 0 || n > TFT_FLOW_CHUNK_MAX_FLOWS)
		return TFT_EINVAL;
	scratch->len = out->len = 0;
	if (tft_chunk_buf_reserve(scratch, (size_t)n * 2 * sizeof(*key)) ||
	    tft_chunk_buf_reserve(out, (size_t)n * FLOW_MAX_BYTES + 8 * TFT_FLOW_NCOLS))
		return TFT_ENOMEM;
	key = (struct flow_key *)(void *)scratch->p; /* malloc'd: aligned */
	for (uint32_t i = 0; i < n; i++)
		key[i] = (struct flow_key){ flow_time(&f[i]), i };
	key = flow_sort(key, key + n, n);
	for (int c = 0; c < TFT_FLOW_NCOLS; c++) {
		col[c] = p[c] = out->p + off;
		off += (size_t)n * flow_col_bytes[c] + 8; /* put_uv_nb stores 4 bytes */
	}
	base_ts = prev_ts = key[0].ts;
	*t_min = key[0].ts;
	*t_max = key[n - 1].ts;
	for (uint32_t j = 0; j < n; j++) {
		const struct tft_flow *x = &f[key[j].i];
		uint64_t t = (uint64_t)key[j].ts;

		/* time deltas and ids: sizes vary from flow to flow */
		p[TFT_FLOW_COL_TS] += put_uv_nb(p[TFT_FLOW_COL_TS], zz_enc((int64_t)(t - (uint64_t)prev_ts)));
		/* a missing end's ts (usually 0) is stored as is */
		p[TFT_FLOW_COL_SRC_TS] += put_uv(p[TFT_FLOW_COL_SRC_TS], /* mostly 0 */
			zz_enc((int64_t)((uint64_t)x->src_ts_ns - (x->src_track == TFT_NONE ? 0 : t))));
		p[TFT_FLOW_COL_DST_TS] += put_uv_nb(p[TFT_FLOW_COL_DST_TS],
			zz_enc((int64_t)((uint64_t)x->dst_ts_ns - (x->dst_track == TFT_NONE ? 0 : t))));
		p[TFT_FLOW_COL_SRC_TRACK] += put_uv(p[TFT_FLOW_COL_SRC_TRACK],
						    (uint32_t)(x->src_track + 1)); /* TFT_NONE -> 0 */
		p[TFT_FLOW_COL_DST_TRACK] += put_uv(p[TFT_FLOW_COL_DST_TRACK],
						    (uint32_t)(x->dst_track + 1));
		p[TFT_FLOW_COL_ID] += put_uv_nb(p[TFT_FLOW_COL_ID], zz_enc((int64_t)(x->flow_id - prev_id)));
		p[TFT_FLOW_COL_NAME] += put_uv(p[TFT_FLOW_COL_NAME], x->name);
		p[TFT_FLOW_COL_CAT] += put_uv(p[TFT_FLOW_COL_CAT], x->cat);
		p[TFT_FLOW_COL_FLAGS] += put_uv(p[TFT_FLOW_COL_FLAGS], x->flags);
		prev_ts = (int64_t)t;
		prev_id = x->flow_id;
	}
	/* An all-zero column is left out; ts is always stored: it bounds n for a decoder. */
	for (int c = 0; c < TFT_FLOW_NCOLS; c++)
		if (c == TFT_FLOW_COL_TS || !flow_col_zero(col[c], (size_t)(p[c] - col[c]), n))
			present |= BIT(c);
	need = 2 + 4 * 10;
	for (int c = 0; c < TFT_FLOW_NCOLS; c++)
		need += 10 + (size_t)(p[c] - col[c]);
	/* The keys are dead: scratch takes the payload. */
	if (tft_chunk_buf_reserve(scratch, need))
		return TFT_ENOMEM;
	scratch->p[scratch->len++] = TFT_FLOW_CHUNK_MAGIC;
	scratch->p[scratch->len++] = TFT_FLOW_CHUNK_VERSION;
	buf_uv(scratch, n);
	buf_uv(scratch, present);
	buf_uv(scratch, zz_enc(base_ts));
	for (int c = 0; c < TFT_FLOW_NCOLS; c++) {
		size_t len = (size_t)(p[c] - col[c]);

		if (!(present & BIT(c)))
			continue;
		buf_uv(scratch, len);
		memcpy(scratch->p + scratch->len, col[c], len);
		scratch->len += len;
	}
	/* The columns are dead: out takes the blob. */
	bound = ZSTD_compressBound(scratch->len);
	if (tft_chunk_buf_reserve(out, bound))
		return TFT_ENOMEM;
	r = ZSTD_compressCCtx(cctx, out->p, bound, scratch->p, scratch->len, level);
	if (ZSTD_isError(r))
		return TFT_EIO;
	out->len = r;
	return 0;
}

void tft_flow_dec_init(struct tft_flow_dec *d)
{
	memset(d, 0, sizeof(*d));
}

void tft_flow_dec_fini(struct tft_flow_dec *d)
{
	free(d->f);
	tft_chunk_buf_free(&d->raw);
	if (d->dctx)
		ZSTD_freeDCtx(d->dctx);
	memset(d, 0, sizeof(*d));
}

int tft_flow_chunk_decode_payload(struct tft_flow_dec *d, const void *payload, size_t len,
				  int64_t chunk_id, struct tft_error *err)
{
	const uint8_t *base = payload;
	struct rd r = { base, base + len, base };
	struct rd col[TFT_FLOW_NCOLS];
	uint64_t n, present, u;
	int64_t ts, prev_ts;
	uint64_t id = 0;

	d->n = 0;
	d->max_str = 0;
	d->max_track = 0;
	if (len < 2 || base[0] != TFT_FLOW_CHUNK_MAGIC)
		return FLOW_FAIL(&r, "bad flow chunk magic (expected 0x%02x)", TFT_FLOW_CHUNK_MAGIC);
	if (base[1] != TFT_FLOW_CHUNK_VERSION)
		return FLOW_FAIL(&r, "unknown flow chunk version %u (expected %u)", base[1],
				TFT_FLOW_CHUNK_VERSION);
	r.p += 2;
	if (rd_uv(&r, &n) || n == 0 || n > TFT_FLOW_CHUNK_MAX_FLOWS)
		return FLOW_FAIL(&r, "bad flow count (1 to %u)", TFT_FLOW_CHUNK_MAX_FLOWS);
	if (rd_uv(&r, &present) || present >= (1u << TFT_FLOW_NCOLS) ||
	    !(present & BIT(TFT_FLOW_COL_TS)))
		return FLOW_FAIL(&r, "bad flow column mask");
	if (rd_uv(&r, &u))
		return FLOW_FAIL(&r, "truncated base timestamp");
	prev_ts = zz_dec(u);
	for (int c = 0; c < TFT_FLOW_NCOLS; c++) {
		col[c].base = base;
		col[c].p = col[c].end = NULL;
		if (!(present & BIT(c)))
			continue;
		if (rd_uv(&r, &u) || u > (uint64_t)(r.end - r.p))
			return FLOW_FAIL(&r, "bad length of %s column", flow_col_names[c]);
		col[c].p = r.p;
		col[c].end = r.p + u;
		r.p += u;
	}
	if (r.p != r.end)
		return FLOW_FAIL(&r, "%zu trailing bytes after the last column", (size_t)(r.end - r.p));
	/* Every flow takes at least one byte of the ts column: bounds n by the input. */
	if (n > (uint64_t)(col[TFT_FLOW_COL_TS].end - col[TFT_FLOW_COL_TS].p)) {
		r.p = col[TFT_FLOW_COL_TS].p;
		return FLOW_FAIL(&r, "flow count %llu exceeds the ts column", (unsigned long long)n);
	}
	if (n > d->cap) {
		struct tft_flow *nf = realloc(d->f, n * sizeof(*nf));
		if (!nf)
			return tft_error_set(err, TFT_ENOMEM, -1, "flow chunk %lld: out of memory",
					     (long long)chunk_id);
		d->f = nf;
		d->cap = (uint32_t)n;
	}
	for (uint32_t i = 0; i < n; i++) {
		struct tft_flow *x = &d->f[i];
		uint64_t v[TFT_FLOW_NCOLS];

		for (int c = 0; c < TFT_FLOW_NCOLS; c++) {
			v[c] = 0;
			if (col[c].p && rd_uv(&col[c], &v[c]))
				return FLOW_FAIL(&col[c], "%s column: truncated varint at flow %u",
						 flow_col_names[c], i);
			if (v[c] > flow_col_max[c])
				return FLOW_FAIL(&col[c], "%s column: value out of range at flow %u",
						 flow_col_names[c], i);
		}
		ts = (int64_t)((uint64_t)prev_ts + (uint64_t)zz_dec(v[TFT_FLOW_COL_TS]));
		id += (uint64_t)zz_dec(v[TFT_FLOW_COL_ID]);
		x->src_track = v[TFT_FLOW_COL_SRC_TRACK] ? (uint32_t)(v[TFT_FLOW_COL_SRC_TRACK] - 1) : TFT_NONE;
		x->dst_track = v[TFT_FLOW_COL_DST_TRACK] ? (uint32_t)(v[TFT_FLOW_COL_DST_TRACK] - 1) : TFT_NONE;
		x->src_ts_ns = (int64_t)((x->src_track == TFT_NONE ? 0 : (uint64_t)ts) +
					 (uint64_t)zz_dec(v[TFT_FLOW_COL_SRC_TS]));
		x->dst_ts_ns = (int64_t)((x->dst_track == TFT_NONE ? 0 : (uint64_t)ts) +
					 (uint64_t)zz_dec(v[TFT_FLOW_COL_DST_TS]));
		x->flow_id = id;
		x->name = (uint32_t)v[TFT_FLOW_COL_NAME];
		x->cat = (uint32_t)v[TFT_FLOW_COL_CAT];
		x->flags = (uint32_t)v[TFT_FLOW_COL_FLAGS];
		if (x->name > d->max_str)
			d->max_str = x->name;
		if (x->cat > d->max_str)
			d->max_str = x->cat;
		if (v[TFT_FLOW_COL_SRC_TRACK] > d->max_track)
			d->max_track = (uint32_t)v[TFT_FLOW_COL_SRC_TRACK];
		if (v[TFT_FLOW_COL_DST_TRACK] > d->max_track)
			d->max_track = (uint32_t)v[TFT_FLOW_COL_DST_TRACK];
		prev_ts = ts;
	}
	for (int c = 0; c < TFT_FLOW_NCOLS; c++)
		if (col[c].p != col[c].end)
			return FLOW_FAIL(&col[c], "%s column: %zu trailing bytes", flow_col_names[c],
					(size_t)(col[c].end - col[c].p));
	d->n = (uint32_t)n;
	return 0;
}

int tft_flow_chunk_decode(struct tft_flow_dec *d, const void *blob, size_t len, int64_t chunk_id,
			  struct tft_error *err)
{
	int rc;

	d->n = 0;
	if ((rc = unzstd(&d->dctx, &d->raw, blob, len, "flow chunk", chunk_id, err)))
		return rc;
	return tft_flow_chunk_decode_payload(d, d->raw.p, d->raw.len, chunk_id, err);
}
