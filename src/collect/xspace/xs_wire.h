/* SPDX-License-Identifier: MIT */
/*
 * The XSpace importer's wire readers for its hot loops: varints read eight
 * bytes at a time where the whole input allows, and length-delimited
 * values. Inline: every event and stat goes through them. Results and
 * returns are those of codec/pb_wire.h's readers.
 */
#ifndef TFT_COLLECT_XSPACE_XS_WIRE_H
#define TFT_COLLECT_XSPACE_XS_WIRE_H

#include <stdint.h>
#include <string.h>

#include "codec/pb_wire.h"
#include "core/status.h"

/* Four input bytes as a little-endian number, in one load where the CPU allows. */
static inline uint32_t load_le32(const uint8_t *p)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
#else
	return tft_pb_wire_le32(p);
#endif
}

/*
 * A varint of 1..8 bytes at p, from eight bytes loaded at once (the caller
 * checked that they lie before the end of the whole input): the value and
 * its length, without a branch per byte; 0 if it is longer, -1 if it runs
 * past `end` (the end of the message).
 */
static inline __attribute__((always_inline)) int varint8(const uint8_t *p, const uint8_t *end,
							 uint64_t *out)
{
	uint64_t w, stop;
	unsigned n;

	memcpy(&w, p, 8); /* p[0] in the low byte (little-endian only) */
	stop = ~w & 0x8080808080808080ull;
	if (tft_unlikely(!stop))
		return 0;
	n = ((unsigned)__builtin_ctzll(stop) >> 3) + 1; /* bytes, 1..8 */
	if (tft_unlikely((size_t)(end - p) < n))
		return -1; /* truncated by the message end */
	/* Its n bytes without their continuation bits: n 7-bit groups. */
	w &= (stop ^ (stop - 1)) & 0x7f7f7f7f7f7f7f7full;
	/* Join neighbours (each lane's value only shrinks: no borrow). */
	w -= (w & 0x7f007f007f007f00ull) >> 1;       /* 16-bit lanes: a + 128 b */
	w -= ((w & 0x3fff00003fff0000ull) >> 2) * 3; /* 32-bit lanes: a + 2^14 b */
	*out = (w & 0xffffffffull) | (w >> 32) << 28; /* a + 2^28 b */
	return (int)n;
}

/*
 * Varint reader for the hot loops: one byte, else eight bytes decoded at
 * once without a branch per byte, when eight can be loaded before `lim`
 * (the end of the whole input, which may lie past `end`, the end of the
 * message). Longer varints and the last bytes of the input go to
 * tft_pb_wire_varint(); the results and returns are the same as its.
 */
static inline __attribute__((always_inline)) int xs_varint(const uint8_t **pp, const uint8_t *end,
							   const uint8_t *lim, uint64_t *out)
{
	const uint8_t *p = *pp;

	if (tft_likely(p < end && *p < 0x80)) {
		*out = *p;
		*pp = p + 1;
		return 0;
	}
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (tft_likely(p < end && lim - p >= 8)) {
		uint64_t w;
		int n;

		memcpy(&w, p, 8);
		if (!(w & 0x8000)) { /* two bytes (ids, small counts): short path */
			if (tft_unlikely(end - p < 2))
				return -1;
			*out = (w & 0x7f) | (w >> 1 & 0x3f80);
			*pp = p + 2;
			return 0;
		}
		n = varint8(p, end, out);
		if (tft_likely(n > 0)) {
			*pp = p + n;
			return 0;
		}
		if (n < 0)
			return -1;
	}
#else
	(void)lim;
#endif
	return tft_pb_wire_varint(pp, end, out);
}

/*
 * xs_varint() for values that mostly take several bytes (times in ps):
 * straight to the eight-byte path, which takes one or two bytes as well.
 * Same results and returns.
 */
static inline __attribute__((always_inline)) int xs_varint_wide(const uint8_t **pp,
								const uint8_t *end,
								const uint8_t *lim, uint64_t *out)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	const uint8_t *p = *pp;

	if (tft_likely(p < end && lim - p >= 8)) {
		int n = varint8(p, end, out);

		if (tft_likely(n > 0)) {
			*pp = p + n;
			return 0;
		}
		if (n < 0)
			return -1;
	}
#endif
	return xs_varint(pp, end, lim, out);
}

/* Skip a varint as xs_varint() would read it (same checks and returns; inlined,
 * the value's arithmetic is dropped). */
static inline __attribute__((always_inline)) int xs_skip_varint(const uint8_t **pp,
								const uint8_t *end,
								const uint8_t *lim)
{
	uint64_t v;

	return xs_varint(pp, end, lim, &v);
}

static inline __attribute__((always_inline)) int xs_skip_varint_wide(const uint8_t **pp,
								     const uint8_t *end,
								     const uint8_t *lim)
{
	uint64_t v;

	return xs_varint_wide(pp, end, lim, &v);
}

/* Read a length-delimited value at *pp (after its key) that fits before end. */
static inline __attribute__((always_inline)) int take_bytes(const uint8_t **pp, const uint8_t *end, const uint8_t *lim,
			     struct tft_pb_bytes *b)
{
	uint64_t n;

	if (xs_varint(pp, end, lim, &n) || n > (uint64_t)(end - *pp))
		return -1;
	b->p = *pp;
	b->len = (size_t)n;
	*pp += n;
	return 0;
}

#endif /* TFT_COLLECT_XSPACE_XS_WIRE_H */
