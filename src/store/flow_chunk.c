/* SPDX-License-Identifier: MIT */
/*
 * Flow chunks: a session's flows in compressed columnar chunks of up to
 * TFT_FLOW_CHUNK_FLOWS, each sorted by time (store/chunk.h), and their
 * validating decoder.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "core/grow.h"
#include "store/chunk.h"
#include "store/chunk_int.h"

#define BIT(c) (1u << (c))

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
	size_t need, off = 0;

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
	return tft_chunk_compress(cctx, level, scratch, out);
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
		if (tft_grow((void **)&d->f, &d->cap, n, sizeof(*d->f)))
			return tft_error_set(err, TFT_ENOMEM, -1, "flow chunk %lld: out of memory",
					     (long long)chunk_id);
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
	if ((rc = tft_chunk_unzstd(&d->dctx, &d->raw, blob, len, "flow chunk", chunk_id, err)))
		return rc;
	return tft_flow_chunk_decode_payload(d, d->raw.p, d->raw.len, chunk_id, err);
}
