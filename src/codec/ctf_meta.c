/* SPDX-License-Identifier: MIT */
/* CTF metadata packet framing: see codec/ctf_meta.h. */
#include "codec/ctf_meta.h"

/* Header layout (bytes): magic 0, uuid 4, checksum 20, content_size 24,
 * packet_size 28, compression 32, encryption 33, checksum scheme 34,
 * major 35, minor 36. */
#define OFF_CONTENT 24
#define OFF_PACKET 28
#define OFF_SCHEMES 32

static uint32_t rd32(const uint8_t *p, int be)
{
	return be ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]
		  : (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

int tft_ctf_meta_check(const uint8_t *data, size_t len, struct tft_error *err)
{
	size_t off = 0;
	int be;

	if (len == 0)
		return tft_error_set(err, TFT_EFORMAT, 0,
				     "expected CTF metadata (TSDL text or metadata packets), found an "
				     "empty file");
	if (len < 4 || (rd32(data, 0) != TFT_CTF_META_MAGIC && rd32(data, 1) != TFT_CTF_META_MAGIC))
		return 0; /* text: libbabeltrace2 parses it */
	be = rd32(data, 1) == TFT_CTF_META_MAGIC;
	while (off < len) {
		const uint8_t *h = data + off;
		size_t left = len - off;
		uint32_t content, packet;

		if (left < TFT_CTF_META_HEADER_BYTES)
			return tft_error_set(err, TFT_EFORMAT, (int64_t)off,
					     "expected a %u-byte metadata packet header, found %zu "
					     "bytes (a truncated file?)", TFT_CTF_META_HEADER_BYTES, left);
		if (rd32(h, be) != TFT_CTF_META_MAGIC)
			return tft_error_set(err, TFT_EFORMAT, (int64_t)off,
					     "expected a metadata packet's magic number 0x%08x",
					     TFT_CTF_META_MAGIC);
		content = rd32(h + OFF_CONTENT, be);
		packet = rd32(h + OFF_PACKET, be);
		if (h[OFF_SCHEMES] || h[OFF_SCHEMES + 1] || h[OFF_SCHEMES + 2])
			return tft_error_set(err, TFT_EFORMAT, (int64_t)off + OFF_SCHEMES,
					     "expected a metadata packet without compression, encryption "
					     "or checksum (schemes 0, the only ones CTF 1.8 defines)");
		if (packet % 8 || content % 8 || content < TFT_CTF_META_HEADER_BYTES * 8 ||
		    content > packet)
			return tft_error_set(err, TFT_EFORMAT, (int64_t)off + OFF_CONTENT,
					     "expected a metadata packet's content size (%u bits) and "
					     "packet size (%u bits) in whole bytes, the header <= "
					     "content <= packet", content, packet);
		if (packet / 8 > left)
			return tft_error_set(err, TFT_EFORMAT, (int64_t)off + OFF_PACKET,
					     "expected a metadata packet of %u bytes, but the file ends "
					     "%zu bytes into it (a truncated file?)", packet / 8, left);
		off += packet / 8;
	}
	return 0;
}
