/* SPDX-License-Identifier: MIT */
/*
 * Chunk encoder: incremental columnar encoder (LEB128 varints, lazy columns,
 * per-(key,type) arg columns) plus zstd. The validating decoder is
 * chunk_dec.c, flow chunks flow_chunk.c; chunk_int.h their shared varints.
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

#include "core/grow.h"
#include "core/strtab.h"
#include "store/chunk.h"

#include "store/chunk_int.h"

/* ---- buffers ---------------------------------------------------------------- */

int tft_chunk_buf_reserve(struct tft_chunk_buf *b, size_t extra)
{

	if (b->cap - b->len >= extra)
		return 0;
	if (extra > SIZE_MAX / 2 - b->len)
		return TFT_ENOMEM;
	return tft_grow_size_ex((void **)&b->p, &b->cap, b->len + extra, 1, 64, 0);
}

void tft_chunk_buf_free(struct tft_chunk_buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
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
	tft_hmap_init(&e->ahash, 1);
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
	tft_hmap_fini(&e->ahash);
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
	tft_hmap_clear(&e->ahash);
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
static inline uint32_t ahash_of(uint64_t code)
{
	return (uint32_t)((code * 0x9e3779b97f4a7c15ULL) >> 32);
}

/* Index of the (key, tag) column, created if missing; -1 on ENOMEM. */
static int64_t acol_get(struct tft_chunk_enc *e, uint32_t key, uint32_t tag)
{
	uint64_t code = ((uint64_t)key << 3) | tag;
	uint32_t h = ahash_of(code), idx = tft_hmap_get1(&e->ahash, code, h);
	struct tft_chunk_acol *ac;

	if (idx != TFT_HMAP_EMPTY)
		return idx;
	if (tft_grow_ex((void **)&e->acols, &e->cap_acols, (uint64_t)e->nacols + 1, sizeof(*e->acols), 8, 0))
		return -1;
	ac = &e->acols[e->nacols];
	if (e->nacols < e->nacols_buf) {
		/* reuse the buffer a column of an earlier chunk left here */
		*ac = (struct tft_chunk_acol){ .key = key, .tag = tag, .data = ac->data };
		ac->data.len = 0;
	} else {
		*ac = (struct tft_chunk_acol){ .key = key, .tag = tag };
		e->nacols_buf = e->nacols + 1;
	}
	if (tft_hmap_put(&e->ahash, &code, h, e->nacols))
		return -1;
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
	if (ev->nargs > e->cap_aslots &&
	    tft_grow_ex((void **)&e->aslot, &e->cap_aslots, ev->nargs, sizeof(*e->aslot), 4, 0))
		return TFT_ENOMEM;

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

int tft_chunk_compress(void *cctx, int level, const struct tft_chunk_buf *in, struct tft_chunk_buf *out)
{
	size_t bound = ZSTD_compressBound(in->len), r;

	out->len = 0;
	if (tft_chunk_buf_reserve(out, bound))
		return TFT_ENOMEM;
	r = ZSTD_compressCCtx(cctx, out->p, bound, in->p, in->len, level);
	if (ZSTD_isError(r))
		return TFT_EIO;
	out->len = r;
	return 0;
}

int tft_chunk_enc_finish(const struct tft_chunk_enc *e, void *cctx, int level,
			 struct tft_chunk_buf *scratch, struct tft_chunk_buf *out)
{
	int rc = tft_chunk_enc_payload(e, scratch);

	return rc ? rc : tft_chunk_compress(cctx, level, scratch, out);
}

