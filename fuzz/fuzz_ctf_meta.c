/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the CTF metadata packet framing check (codec/ctf_meta.c),
 * the only bytes of a CTF trace tftracer parses itself. Everything else of a
 * CTF trace (the TSDL text, the stream packets and their events) is parsed by
 * libbabeltrace2 (Debian's build, not instrumented here); the importer's own
 * code over what it decodes is covered by tests/e2e/test_ctf.py, its bad
 * inputs included (docs/formats-lttng.md).
 *
 * Checks: no crash, no read outside the input, and the verdict is consistent:
 * an accepted packetized input is a whole number of packets, each with the
 * magic and sizes the check demands.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "codec/ctf_meta.h"

static uint32_t rd(const uint8_t *p, int be)
{
	return be ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]
		  : (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tft_error err;
	int rc;

	tft_error_clear(&err);
	rc = tft_ctf_meta_check(data, size, &err);
	if (rc) {
		if (rc != TFT_EFORMAT || err.offset < 0 || (size_t)err.offset > size || !err.msg[0])
			abort();
		return 0;
	}
	if (size >= 4 && (rd(data, 0) == TFT_CTF_META_MAGIC || rd(data, 1) == TFT_CTF_META_MAGIC)) {
		int be = rd(data, 1) == TFT_CTF_META_MAGIC;
		size_t off = 0;
		while (off < size) {
			uint32_t packet;
			if (size - off < TFT_CTF_META_HEADER_BYTES || rd(data + off, be) != TFT_CTF_META_MAGIC)
				abort();
			packet = rd(data + off + 28, be) / 8;
			if (packet < TFT_CTF_META_HEADER_BYTES || packet > size - off)
				abort();
			off += packet;
		}
	} else if (size == 0) {
		abort(); /* an empty file is not metadata */
	}
	return 0;
}
