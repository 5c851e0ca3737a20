/* SPDX-License-Identifier: MIT */
/*
 * A CTF trace's `metadata` file framing (CTF 1.8 section 7.1): either TSDL
 * text, or a sequence of metadata packets, each a 37-byte header (magic
 * 0x75D11D57 in the trace's byte order, UUID, checksum, content and packet
 * sizes in bits, compression/encryption/checksum schemes, version) then its
 * share of the TSDL text.
 *
 * libbabeltrace2 parses the metadata itself; this checks only the packet
 * framing first, because its 2.0 reader loops forever on a packet cut by
 * the end of the file (a truncated trace). Text is left to libbabeltrace2.
 */
#ifndef TFT_CODEC_CTF_META_H
#define TFT_CODEC_CTF_META_H

#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

#define TFT_CTF_META_MAGIC 0x75D11D57u
#define TFT_CTF_META_HEADER_BYTES 37u

/*
 * 0 if data (a whole metadata file, len bytes) is non-empty text or a run of
 * sound metadata packets that ends exactly at its end; TFT_EFORMAT with
 * err->offset at the packet (or field) that is wrong and err->msg saying what
 * was expected otherwise.
 */
int tft_ctf_meta_check(const uint8_t *data, size_t len, struct tft_error *err);

#endif /* TFT_CODEC_CTF_META_H */
