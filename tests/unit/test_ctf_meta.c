/* SPDX-License-Identifier: MIT */
/*
 * codec/ctf_meta.c: the framing of a packetized CTF metadata file, checked
 * before libbabeltrace2 reads it (its 2.0 reader loops forever on a packet
 * cut by the end of the file): whole packets in either byte order pass,
 * text passes, and each kind of damage is refused at its byte.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "codec/ctf_meta.h"
#include "tap.h"

/* One metadata packet: header (37 bytes) + text, padded to packet_pad bytes. */
static size_t packet(uint8_t *out, const char *text, size_t packet_pad, int be)
{
	size_t tl = strlen(text), content = TFT_CTF_META_HEADER_BYTES + tl;
	size_t size = packet_pad > content ? packet_pad : content;
	uint32_t v[3] = { TFT_CTF_META_MAGIC, (uint32_t)(content * 8), (uint32_t)(size * 8) };
	size_t at[3] = { 0, 24, 28 };

	memset(out, 0, size);
	for (int k = 0; k < 3; k++)
		for (int b = 0; b < 4; b++)
			out[at[k] + (size_t)b] = (uint8_t)(v[k] >> (be ? 24 - 8 * b : 8 * b));
	out[35] = 1;
	out[36] = 8;
	memcpy(out + TFT_CTF_META_HEADER_BYTES, text, tl);
	return size;
}

static int check(const uint8_t *p, size_t n, int64_t *off)
{
	struct tft_error err;
	int rc;

	tft_error_clear(&err);
	rc = tft_ctf_meta_check(p, n, &err);
	*off = err.offset;
	return rc;
}

int main(void)
{
	uint8_t buf[4096];
	const char *text = "/* CTF 1.8 */ trace { major = 1; minor = 8; byte_order = le; };";
	int64_t off;
	size_t n;

	/* text metadata is libbabeltrace2's to parse; an empty file is no metadata */
	is_int(check((const uint8_t *)text, strlen(text), &off), 0, "text metadata passes");
	is_int(check(buf, 0, &off), TFT_EFORMAT, "an empty file is refused");
	is_int(off, 0, "... at byte 0");

	/* two little-endian packets (the second padded), one big-endian */
	n = packet(buf, text, 0, 0);
	n += packet(buf + n, text, 512, 0);
	is_int(check(buf, n, &off), 0, "two whole little-endian packets pass");
	is_int(check(buf, packet(buf, text, 200, 1), &off), 0, "a big-endian packet passes");

	/* cut inside the second packet's text, inside its header, inside the first */
	n = packet(buf, text, 0, 0);
	size_t first = n;
	n += packet(buf + n, text, 512, 0);
	is_int(check(buf, n - 1, &off), TFT_EFORMAT, "a packet cut short is refused");
	is_int(off, (int64_t)first + 28, "... at its packet size");
	is_int(check(buf, first + 20, &off), TFT_EFORMAT, "a header cut short is refused");
	is_int(off, (int64_t)first, "... at the header");
	is_int(check(buf, 30, &off), TFT_EFORMAT, "the first header cut short is refused");
	is_int(off, 0, "... at byte 0");

	/* a second packet without the magic */
	n = packet(buf, text, 0, 0);
	n += packet(buf + n, text, 0, 0);
	buf[first] ^= 0xFF;
	is_int(check(buf, n, &off), TFT_EFORMAT, "a packet without the magic is refused");
	is_int(off, (int64_t)first, "... at its magic");

	/* sizes: zero (would never advance), content past packet, not whole bytes */
	n = packet(buf, text, 0, 0);
	memset(buf + 28, 0, 4);
	is_int(check(buf, n, &off), TFT_EFORMAT, "a packet size of 0 is refused");
	is_int(off, 24, "... at its sizes");
	n = packet(buf, text, 0, 0);
	buf[24] = (uint8_t)(buf[24] + 8); /* content 1 byte past the packet */
	is_int(check(buf, n, &off), TFT_EFORMAT, "content larger than the packet is refused");
	n = packet(buf, text, 0, 0);
	buf[28] |= 1;
	is_int(check(buf, n, &off), TFT_EFORMAT, "a size in bits that is not whole bytes is refused");

	/* compression / encryption / checksum schemes: CTF 1.8 defines none */
	for (int k = 0; k < 3; k++) {
		n = packet(buf, text, 0, 0);
		buf[32 + k] = 1;
		is_int(check(buf, n, &off), TFT_EFORMAT, "a scheme other than 0 is refused");
		is_int(off, 32, "... at the schemes");
	}
	return done_testing();
}
