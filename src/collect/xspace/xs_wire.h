/* SPDX-License-Identifier: MIT */
/*
 * The XSpace importer's wire readers for its hot loops (varints are
 * codec/pb_wire.h's tft_pb_wire_varint()): four bytes as a number, and
 * length-delimited values. Inline: every event and stat goes through them.
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

/* Read a length-delimited value at *pp (after its key) that fits before end. */
static inline __attribute__((always_inline)) int take_bytes(const uint8_t **pp, const uint8_t *end,
							      struct tft_pb_bytes *b)
{
	uint64_t n;

	if (tft_pb_wire_varint(pp, end, &n) || n > (uint64_t)(end - *pp))
		return -1;
	b->p = *pp;
	b->len = (size_t)n;
	*pp += n;
	return 0;
}

#endif /* TFT_COLLECT_XSPACE_XS_WIRE_H */
