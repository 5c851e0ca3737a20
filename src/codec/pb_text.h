/* SPDX-License-Identifier: MIT */
/*
 * Protobuf TEXT format reader (.pbtxt) driven by the same field tables as
 * the wire reader (codec/pb_wire.h): handlers see the same events.
 */
#ifndef TFT_CODEC_PB_TEXT_H
#define TFT_CODEC_PB_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "codec/pb_wire.h"

/*
 * Start decoding text input data[0..len) (borrowed; must outlive the
 * decoder). Accepted syntax: `field: value`, `field { ... }`, `field < ... >`,
 * optional ':' before a message, `field: [v1, v2]` lists, `,`/`;`
 * separators, `#` comments, strings in '..' or ".." with C escapes (octal,
 * \x, \u, \U) and adjacent-literal concatenation, decimal/hex/octal
 * integers, floats (inf, nan, trailing f), enums as identifiers, bools
 * (true/false/t/f/1/0). Unknown fields, extensions and Any expansions
 * (`[type.googleapis.com/x.Y] { ... }`) are skipped.
 *
 * Escaped strings are unescaped into an arena owned by the decoder, valid
 * until tft_pb_text_fini(); plain literals are borrowed from the input.
 * Returns 0 or TFT_ENOMEM. Call tft_pb_text_fini() in every case.
 */
int tft_pb_text_init(struct tft_pb_dec *d, const uint8_t *data, size_t len, struct tft_error *err);

/*
 * Start decoding data[0..len) as text (text != 0, tft_pb_text_init) or as
 * wire (tft_pb_wire_init): the importers that take both. 0 or TFT_ENOMEM.
 * Call tft_pb_text_fini() after, in every case (nothing to free for wire).
 */
int tft_pb_dec_init(struct tft_pb_dec *d, int text, const uint8_t *data, size_t len, struct tft_error *err);

/* Free the arena (strings handed out become invalid). */
void tft_pb_text_fini(struct tft_pb_dec *d);

/*
 * Decode the whole document as message m (same contract as
 * tft_pb_wire_decode; sub-messages are decoded with tft_pb_wire_decode_sub).
 * Errors: TFT_EFORMAT with the byte offset, path and what was expected.
 */
int tft_pb_text_decode(struct tft_pb_dec *d, const struct tft_pb_msg *m, void *out, void *ctx);

#endif /* TFT_CODEC_PB_TEXT_H */
