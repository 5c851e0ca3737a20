/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the chunk decoders: the first byte picks the decoder
 * (bit 2: flow chunks, else event chunks) and the input form (low 2 bits:
 * 0/2 an uncompressed payload, 1 a compressed blob, 3 a payload that is zstd
 * compressed first so that the blob path reaches the payload parser).
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
	static struct tft_flow_dec fdec;
	struct tft_error err;
	void *blob = NULL;
	int mode, flows;

	if (size < 1)
		return 0;
	mode = data[0] & 3;
	flows = data[0] & 4;
	data++;
	size--;
	tft_error_clear(&err);
	if (mode == 3) {
		size_t bound = ZSTD_compressBound(size), n;
		blob = malloc(bound);
		if (!blob)
			return 0;
		n = ZSTD_compress(blob, bound, data, size, 1);
		if (ZSTD_isError(n)) {
			free(blob);
			return 0;
		}
		data = blob;
		size = n;
	}
	if (flows) {
		if (mode == 1 || mode == 3)
			tft_flow_chunk_decode(&fdec, data, size, 1, &err);
		else
			tft_flow_chunk_decode_payload(&fdec, data, size, 1, &err);
	} else {
		if (mode == 1 || mode == 3)
			tft_chunk_decode(&dec, data, size, 1, &err);
		else
			tft_chunk_decode_payload(&dec, data, size, 1, &err);
	}
	free(blob);
	/* Whatever decoded must be self-consistent: touch every event, arg and flow. */
	volatile uint64_t sink = 0;
	if (flows) {
		for (uint32_t i = 0; i < fdec.n; i++)
			sink += (uint64_t)fdec.f[i].src_ts_ns + fdec.f[i].flow_id + fdec.f[i].dst_track;
	} else {
		for (uint32_t i = 0; i < dec.n; i++) {
			const struct tft_event *ev = &dec.ev[i];
			sink += (uint64_t)ev->ts_ns + (uint64_t)ev->dur_ns + ev->name + ev->depth;
			for (uint16_t j = 0; j < ev->nargs; j++)
				sink += ev->args[j].key + ev->args[j].type;
		}
	}
	(void)sink;
	return 0;
}
