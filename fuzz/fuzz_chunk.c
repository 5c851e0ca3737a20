/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the chunk decoder: the input is an uncompressed
 * payload, a compressed blob, or (first byte odd) a payload that is zstd
 * compressed first so that the blob path reaches the payload parser.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <zstd.h>

#include "store/chunk.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct tft_chunk_dec dec; /* reused across inputs, as the reader does */
	struct tft_error err;
	int mode;

	if (size < 1)
		return 0;
	mode = data[0] & 3;
	data++;
	size--;
	tft_error_clear(&err);
	switch (mode) {
	case 0:
	case 2:
		tft_chunk_decode_payload(&dec, data, size, 1, &err);
		break;
	case 1:
		tft_chunk_decode(&dec, data, size, 1, &err);
		break;
	default: {
		size_t bound = ZSTD_compressBound(size);
		void *blob = malloc(bound);
		if (!blob)
			return 0;
		size_t n = ZSTD_compress(blob, bound, data, size, 1);
		if (!ZSTD_isError(n))
			tft_chunk_decode(&dec, blob, n, 1, &err);
		free(blob);
		break;
	}
	}
	/* Whatever decoded must be self-consistent: touch every event and arg. */
	volatile uint64_t sink = 0;
	for (uint32_t i = 0; i < dec.n; i++) {
		const struct tft_event *ev = &dec.ev[i];
		sink += (uint64_t)ev->ts_ns + (uint64_t)ev->dur_ns + ev->name + ev->depth;
		for (uint16_t j = 0; j < ev->nargs; j++)
			sink += ev->args[j].key + ev->args[j].type;
	}
	(void)sink;
	return 0;
}
