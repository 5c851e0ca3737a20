/* SPDX-License-Identifier: MIT */
/*
 * Chunk decoder: a zstd frame, then the columnar payload checked as it is
 * read (every count, length and id bounded by the input), in named steps:
 * header, column layout, times, plain columns, values, the kind check, args.
 * Each step's per-event loop stays tight; the steps are called once per chunk.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "core/grow.h"
#include "store/chunk.h"
#include "store/chunk_int.h"

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

/* What a payload's header and column layout say, read by dec_header() and dec_layout(). */
struct dec_hdr {
	const uint8_t *base;
	struct rd r;                    /* the header, then past the last column */
	struct rd col[TFT_CHUNK_NCOLS]; /* each present column (p, end NULL if absent) */
	struct rd *acol;                /* owned: the nacols arg columns */
	uint32_t *atag, *akey;          /* owned: each arg column's type tag and key */
	uint64_t kind_mask, present, enc_flags, n, nacols;
	int64_t base_ts;
	uint32_t max_str;               /* the largest string id seen so far */
};

static int dec_oom(int64_t chunk_id, struct tft_error *err)
{
	return tft_error_set(err, TFT_ENOMEM, -1, "chunk %lld: out of memory", (long long)chunk_id);
}

/* Magic, version, masks, flags, count, base time and arg column count. */
static int dec_header(struct dec_hdr *h, size_t len, int64_t chunk_id, struct tft_error *err)
{
	const uint8_t *base = h->base;
	struct rd *r = &h->r;
	uint64_t u;

	if (len < 2 || base[0] != TFT_CHUNK_MAGIC)
		return DEC_FAIL(r, "bad magic (expected 0x%02x)", TFT_CHUNK_MAGIC);
	if (base[1] != TFT_CHUNK_VERSION)
		return DEC_FAIL(r, "unknown chunk version %u (expected %u)", base[1], TFT_CHUNK_VERSION);
	r->p += 2;
	if (rd_uv(r, &h->kind_mask) || h->kind_mask > 7)
		return DEC_FAIL(r, "bad kind mask");
	if (rd_uv(r, &h->present) || h->present >= (1u << TFT_CHUNK_NCOLS) ||
	    !(h->present & (1u << TFT_CHUNK_COL_TS)))
		return DEC_FAIL(r, "bad column mask");
	if (!(h->present & (1u << TFT_CHUNK_COL_NARGS)) != !(h->present & (1u << TFT_CHUNK_COL_ARGREF)))
		return DEC_FAIL(r, "nargs and argref columns must come together");
	if (rd_uv(r, &h->enc_flags) || h->enc_flags > TFT_CHUNK_ENC_VALUE_INT)
		return DEC_FAIL(r, "bad encoding flags");
	if (rd_uv(r, &h->n) || h->n > TFT_CHUNK_MAX_EVENTS)
		return DEC_FAIL(r, "bad event count (at most %u)", TFT_CHUNK_MAX_EVENTS);
	if (rd_uv(r, &u))
		return DEC_FAIL(r, "truncated base timestamp");
	h->base_ts = zz_dec(u);
	if (rd_uv(r, &h->nacols) || h->nacols > TFT_CHUNK_MAX_ARG_COLS ||
	    h->nacols > (uint64_t)(r->end - r->p) / 2)
		return DEC_FAIL(r, "bad arg column count");
	return 0;
}

/* The arg columns' keys and tags, then every column's extent; n bounded by the ts column. */
static int dec_layout(struct dec_hdr *h, int64_t chunk_id, struct tft_error *err)
{
	struct rd *r = &h->r;
	uint64_t u;

	if (h->nacols) {
		h->acol = malloc(h->nacols * sizeof(*h->acol));
		h->atag = malloc(h->nacols * sizeof(*h->atag));
		h->akey = malloc(h->nacols * sizeof(*h->akey));
		if (!h->acol || !h->atag || !h->akey)
			return dec_oom(chunk_id, err);
	}
	for (uint64_t i = 0; i < h->nacols; i++) {
		if (rd_uv(r, &u) || u > UINT32_MAX)
			return DEC_FAIL(r, "bad key of arg column %llu", (unsigned long long)i);
		h->akey[i] = (uint32_t)u;
		if (u > h->max_str)
			h->max_str = (uint32_t)u;
		if (r->p >= r->end || *r->p > TFT_CHUNK_TAG_MAX)
			return DEC_FAIL(r, "bad type tag of arg column %llu", (unsigned long long)i);
		h->atag[i] = *r->p++;
	}
	for (int c = 0; c < TFT_CHUNK_NCOLS; c++) {
		h->col[c].base = h->base;
		h->col[c].p = h->col[c].end = NULL;
		if (!(h->present & (1u << c)))
			continue;
		if (rd_uv(r, &u) || u > (uint64_t)(r->end - r->p))
			return DEC_FAIL(r, "bad length of %s column", col_names[c]);
		h->col[c].p = r->p;
		h->col[c].end = r->p + u;
		r->p += u;
	}
	for (uint64_t i = 0; i < h->nacols; i++) {
		h->acol[i].base = h->base;
		if (rd_uv(r, &u) || u > (uint64_t)(r->end - r->p))
			return DEC_FAIL(r, "bad length of arg column %llu", (unsigned long long)i);
		h->acol[i].p = r->p;
		h->acol[i].end = r->p + u;
		r->p += u;
	}
	if (r->p != r->end)
		return DEC_FAIL(r, "%zu trailing bytes after the last column", (size_t)(r->end - r->p));
	/* Every event takes at least one byte of the ts column: bounds n by the input. */
	if (h->n > (uint64_t)(h->col[TFT_CHUNK_COL_TS].end - h->col[TFT_CHUNK_COL_TS].p)) {
		r->p = h->col[TFT_CHUNK_COL_TS].p;
		return DEC_FAIL(r, "event count %llu exceeds the ts column", (unsigned long long)h->n);
	}
	return 0;
}

/* Room for the n events, each set to its defaults. */
static int dec_events(struct tft_chunk_dec *d, uint64_t n, int64_t chunk_id, struct tft_error *err)
{
	if (tft_grow((void **)&d->ev, &d->cap_ev, n, sizeof(*d->ev)))
		return dec_oom(chunk_id, err);
	d->n = (uint32_t)n;
	for (uint32_t i = 0; i < d->n; i++)
		d->ev[i] = (struct tft_event){ .track = TFT_NONE, .count = 1 };
	return 0;
}

/* The ts column (deltas from the base time) and the dur column. */
static int dec_times(struct tft_chunk_dec *d, struct dec_hdr *h, int64_t chunk_id,
		     struct tft_error *err)
{
	struct rd *cr = &h->col[TFT_CHUNK_COL_TS];
	int64_t prev_ts = h->base_ts;
	uint64_t u;

	for (uint32_t i = 0; i < d->n; i++) {
		if (rd_uv(cr, &u))
			return DEC_FAIL(cr, "ts column: truncated varint at event %u", i);
		if (i == 0 && u != 0)
			return DEC_FAIL(cr, "ts column: first delta must be 0");
		prev_ts = (int64_t)((uint64_t)prev_ts + (uint64_t)zz_dec(u));
		d->ev[i].ts_ns = prev_ts;
	}
	if (cr->p != cr->end)
		return DEC_FAIL(cr, "ts column: trailing bytes");
	if (!(h->present & (1u << TFT_CHUNK_COL_DUR)))
		return 0;
	cr = &h->col[TFT_CHUNK_COL_DUR];
	for (uint32_t i = 0; i < d->n; i++) {
		int64_t dur, end;
		if (rd_uv(cr, &u))
			return DEC_FAIL(cr, "dur column: truncated varint at event %u", i);
		dur = zz_dec(u);
		if (dur < 0 || __builtin_add_overflow(d->ev[i].ts_ns, dur, &end))
			return DEC_FAIL(cr, "dur column: bad duration at event %u", i);
		d->ev[i].dur_ns = dur;
	}
	if (cr->p != cr->end)
		return DEC_FAIL(cr, "dur column: trailing bytes");
	return 0;
}

/* The plain varint columns: name, cat, depth, kind, flags, count, nargs. */
static int dec_plain(struct tft_chunk_dec *d, struct dec_hdr *h, int64_t chunk_id,
		     struct tft_error *err)
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
	int rc;

	for (size_t k = 0; k < sizeof(uvcols) / sizeof(uvcols[0]); k++) {
		int c = uvcols[k].c;
		if (!(h->present & (1u << c)) || (c == TFT_CHUNK_COL_NARGS && d->no_args))
			continue;
		if ((rc = dec_uv_col(d, &h->col[c], c, uvcols[k].max, chunk_id, err)))
			return rc;
	}
	return 0;
}

/* The value column: zigzag deltas of integers, or XOR-chained doubles. */
static int dec_values(struct tft_chunk_dec *d, struct dec_hdr *h, int64_t chunk_id,
		      struct tft_error *err)
{
	struct rd *cr = &h->col[TFT_CHUNK_COL_VALUE];
	uint64_t u;

	if (!(h->present & (1u << TFT_CHUNK_COL_VALUE)))
		return 0;
	if (h->enc_flags & TFT_CHUNK_ENC_VALUE_INT) {
		int64_t iv = 0;
		for (uint32_t i = 0; i < d->n; i++) {
			if (rd_uv(cr, &u))
				return DEC_FAIL(cr, "value column: truncated varint at event %u", i);
			iv = (int64_t)((uint64_t)iv + (uint64_t)zz_dec(u));
			d->ev[i].value = (double)iv;
		}
		if (cr->p != cr->end)
			return DEC_FAIL(cr, "value column: trailing bytes");
	} else {
		uint64_t prev = 0;
		if ((uint64_t)(cr->end - cr->p) != (uint64_t)d->n * 8)
			return DEC_FAIL(cr, "value column: %zu bytes for %u events",
					(size_t)(cr->end - cr->p), d->n);
		for (uint32_t i = 0; i < d->n; i++) {
			prev ^= get_u64le(cr->p + (size_t)i * 8);
			memcpy(&d->ev[i].value, &prev, sizeof(prev));
		}
	}
	return 0;
}

/* The chunk's time span, largest string id and kinds from its events; the kinds must match the header's. */
static int dec_summary(struct tft_chunk_dec *d, struct dec_hdr *h, uint32_t *real_mask,
		       size_t *total_args, int64_t chunk_id, struct tft_error *err)
{
	uint32_t mask = 0, max_str = h->max_str;
	size_t nargs = 0;

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
		mask |= 1u << ev->kind;
		nargs += ev->nargs;
	}
	h->max_str = max_str;
	*real_mask = mask;
	*total_args = nargs;
	if (mask != h->kind_mask) {
		h->r.p = h->base + 2;
		return DEC_FAIL(&h->r, "kind mask 0x%llx does not match the events (0x%x)",
				(unsigned long long)h->kind_mask, mask);
	}
	return 0;
}

/* One arg of arg column ci into a; -1 when the column is cut off. */
static inline int dec_arg(struct dec_hdr *h, uint64_t ci, int64_t *prev_i, struct tft_arg *a)
{
	struct rd *ar = &h->acol[ci];
	uint64_t u;

	memset(a, 0, sizeof(*a));
	a->key = h->akey[ci];
	switch (h->atag[ci]) {
	case TFT_CHUNK_TAG_NULL: a->type = TFT_ARG_NULL; break;
	case TFT_CHUNK_TAG_FALSE: a->type = TFT_ARG_BOOL; a->v.i = 0; break;
	case TFT_CHUNK_TAG_TRUE: a->type = TFT_ARG_BOOL; a->v.i = 1; break;
	case TFT_CHUNK_TAG_INT:
		a->type = TFT_ARG_INT;
		if (rd_uv(ar, &u))
			return -1;
		prev_i[ci] = (int64_t)((uint64_t)prev_i[ci] + (uint64_t)zz_dec(u));
		a->v.i = prev_i[ci];
		break;
	case TFT_CHUNK_TAG_DOUBLE: {
		uint64_t bits;
		if (ar->end - ar->p < 8)
			return -1;
		bits = get_u64le(ar->p);
		ar->p += 8;
		memcpy(&a->v.d, &bits, sizeof(bits));
		a->type = TFT_ARG_DOUBLE;
		break;
	}
	case TFT_CHUNK_TAG_STR:
	case TFT_CHUNK_TAG_JSON:
		a->type = h->atag[ci] == TFT_CHUNK_TAG_STR ? TFT_ARG_STR : TFT_ARG_JSON;
		if (rd_uv(ar, &u) || u > UINT32_MAX)
			return -1;
		a->v.str = (uint32_t)u;
		if (a->v.str > h->max_str)
			h->max_str = a->v.str;
		break;
	}
	return 0;
}

/* The args of events that have some: each names its arg column in the argref column. */
static int dec_args_read(struct tft_chunk_dec *d, struct dec_hdr *h, size_t total_args,
			 int64_t chunk_id, struct tft_error *err)
{
	struct rd *cr = &h->col[TFT_CHUNK_COL_ARGREF];
	int64_t *prev_i;
	size_t k = 0;
	int rc = TFT_EFORMAT;

	if (total_args > (size_t)(cr->end - cr->p))
		return DEC_FAIL(cr, "argref column too short for %zu args", total_args);
	if (tft_grow_size((void **)&d->args, &d->cap_args, total_args, sizeof(*d->args)))
		return dec_oom(chunk_id, err);
	prev_i = calloc(h->nacols ? h->nacols : 1, sizeof(*prev_i));
	if (!prev_i)
		return dec_oom(chunk_id, err);
	for (uint32_t i = 0; i < d->n; i++) {
		struct tft_event *ev = &d->ev[i];
		ev->args = ev->nargs ? &d->args[k] : NULL;
		for (uint16_t j = 0; j < ev->nargs; j++, k++) {
			uint64_t ci;

			if (rd_uv(cr, &ci) || ci >= h->nacols) {
				DEC_FAIL(cr, "argref column: bad column index at event %u", i);
				goto out;
			}
			if (dec_arg(h, ci, prev_i, &d->args[k])) {
				DEC_FAIL(&h->acol[ci], "arg column %llu: truncated value at event %u",
					 (unsigned long long)ci, i);
				goto out;
			}
		}
	}
	if (cr->p != cr->end) {
		DEC_FAIL(cr, "argref column: trailing bytes");
		goto out;
	}
	rc = 0;
out:
	free(prev_i);
	return rc;
}

/* The args (unless the caller wants none), then every arg column read to its end. */
static int dec_args(struct tft_chunk_dec *d, struct dec_hdr *h, size_t total_args,
		    int64_t chunk_id, struct tft_error *err)
{
	int rc;

	if (d->no_args)
		return 0; /* not read: the caller wants none */
	if (total_args) {
		if ((rc = dec_args_read(d, h, total_args, chunk_id, err)))
			return rc;
	} else if (h->present & (1u << TFT_CHUNK_COL_ARGREF) &&
		   h->col[TFT_CHUNK_COL_ARGREF].p != h->col[TFT_CHUNK_COL_ARGREF].end) {
		return DEC_FAIL(&h->col[TFT_CHUNK_COL_ARGREF], "argref column: trailing bytes");
	}
	for (uint64_t i = 0; i < h->nacols; i++)
		if (h->acol[i].p != h->acol[i].end)
			return DEC_FAIL(&h->acol[i], "arg column %llu: trailing bytes",
					(unsigned long long)i);
	return 0;
}

int tft_chunk_decode_payload(struct tft_chunk_dec *d, const void *payload, size_t len,
			     int64_t chunk_id, struct tft_error *err)
{
	struct dec_hdr h = { .base = payload };
	uint32_t real_mask = 0;
	size_t total_args = 0;
	int rc;

	h.r = (struct rd){ h.base, h.base + len, h.base };
	d->n = 0;
	d->nargs = 0;
	d->kind_mask = 0;
	d->max_str = 0;
	d->t_min = d->t_max = 0;
	if ((rc = dec_header(&h, len, chunk_id, err)))
		return rc;
	if (!(rc = dec_layout(&h, chunk_id, err)) && !(rc = dec_events(d, h.n, chunk_id, err)) &&
	    !(rc = dec_times(d, &h, chunk_id, err)) && !(rc = dec_plain(d, &h, chunk_id, err)) &&
	    !(rc = dec_values(d, &h, chunk_id, err)) &&
	    !(rc = dec_summary(d, &h, &real_mask, &total_args, chunk_id, err)) &&
	    !(rc = dec_args(d, &h, total_args, chunk_id, err))) {
		d->nargs = total_args;
		d->kind_mask = real_mask;
		d->max_str = h.max_str;
	}
	free(h.acol);
	free(h.atag);
	free(h.akey);
	if (rc)
		d->n = 0;
	return rc;
}

/* See chunk_int.h. */
int tft_chunk_unzstd(void **dctx, struct tft_chunk_buf *raw, const void *blob, size_t len,
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
	if ((rc = tft_chunk_unzstd(dctx, raw, blob, len, "chunk", chunk_id, err)))
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

