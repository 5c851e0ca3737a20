/* SPDX-License-Identifier: MIT */
/*
 * Private to the chunk codec (store/chunk.c, chunk_dec.c, flow_chunk.c): the
 * varints and the bounds-checked reader they share, inline in each (the
 * per-event encode and decode loops call them per value).
 */
#ifndef TFT_STORE_CHUNK_INT_H
#define TFT_STORE_CHUNK_INT_H

#include <stddef.h>
#include <stdint.h>

#include "core/status.h"
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

static inline void buf_uv(struct tft_chunk_buf *b, uint64_t v)
{
	b->len += put_uv(b->p + b->len, v); /* capacity reserved by the caller */
}


/* ---- reader ---------------------------------------------------------------- */

struct rd {
	const uint8_t *p, *end;
	const uint8_t *base; /* start of the payload, for error offsets */
};

/* A varint of at most 10 bytes, the 10th at most 1; -1 when cut off or too long. */
static __attribute__((noinline, unused)) int rd_uv_slow(struct rd *r, uint64_t *out)
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

/*
 * Decompress one zstd frame (with its content size, at most the payload limit,
 * nothing after it) into raw. *dctx is created on first use.
 */
int tft_chunk_unzstd(void **dctx, struct tft_chunk_buf *raw, const void *blob, size_t len,
		     const char *what, int64_t chunk_id, struct tft_error *err);

#endif /* TFT_STORE_CHUNK_INT_H */
