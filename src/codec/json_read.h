/* SPDX-License-Identifier: MIT */
/*
 * Streaming JSON pull parser over a byte source. The document is never held
 * whole: the reader keeps a window (default 4 MiB) of the decompressed
 * stream and the caller walks it one value at a time.
 *
 * Replay protocol. Before each unit of work (typically one array element)
 * the caller calls tft_json_mark(). Any call may then return TFT_JSON_MORE:
 * the unit straddles the end of the window. The caller drops what it parsed
 * since the mark, calls tft_json_refill() (which keeps the bytes from the
 * mark on, reads more, growing the window up to max_buffer for a unit
 * larger than it) and replays the unit from the mark. Strings returned
 * by the reader are borrowed and valid until the next mark or refill.
 *
 * Grammar: RFC 8259 except that raw control characters inside strings are
 * accepted as they are. Nesting is capped (default 256).
 *
 * Not thread-safe: one reader per thread.
 */
#ifndef TFT_CODEC_JSON_READ_H
#define TFT_CODEC_JSON_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codec/source.h"
#include "core/status.h"

/* Positive return: the window ends inside the current unit; refill + replay. */
#define TFT_JSON_MORE 2

#define TFT_JSON_MAX_DEPTH 256
/* Bytes allocated past the end of the window (vector loads, sentinels). */
#define TFT_JSON_PAD 64

/* tft_json_next_item() flags */
#define TFT_JSON_EOF_ENDS_ARRAY 1u /* end of input closes this array (Chrome) */

enum tft_json_type {
	TFT_JSON_NULL = 1,
	TFT_JSON_FALSE = 2,
	TFT_JSON_TRUE = 3,
	TFT_JSON_NUMBER = 4,
	TFT_JSON_STRING = 5,
	TFT_JSON_OBJECT = 6, /* the reader has entered the object */
	TFT_JSON_ARRAY = 7,  /* the reader has entered the array */
};

/* A byte string borrowed from the reader (not NUL-terminated). */
struct tft_json_str {
	const char *ptr; /* borrowed */
	size_t len;
};

struct tft_json_value {
	int type;        /* enum tft_json_type */
	bool is_int;     /* NUMBER without fraction or exponent */
	const char *ptr; /* borrowed: STRING decoded bytes, NUMBER text; NULL otherwise */
	size_t len;
	int64_t offset;  /* stream offset of the value's first byte */
};

struct tft_json_reader_opts {
	size_t block_size;  /* initial window in bytes; 0 = 4 MiB */
	size_t max_buffer;  /* the window never grows past this; 0 = 256 MiB */
	uint32_t max_depth; /* nesting cap; 0 = 256 (at most TFT_JSON_MAX_DEPTH) */
};

struct tft_json_scratch; /* decoded-string blocks (json_read.c) */

struct tft_json_reader {
	struct tft_source *src;   /* borrowed */
	char *buf;                /* owned; cap + TFT_JSON_PAD bytes */
	size_t cap, len, pos;     /* window capacity, bytes in it, read position */
	uint64_t base;            /* stream offset of buf[0] */
	bool eof;                 /* the source is exhausted */
	bool truncated;           /* an array was closed by end of input */
	size_t mark_pos;
	uint32_t mark_depth;
	uint8_t mark_level;
	uint32_t depth, max_depth;
	size_t max_buffer;
	uint8_t level[TFT_JSON_MAX_DEPTH + 1]; /* per open container: JL_* bits */
	struct tft_json_scratch *scratch;     /* owned list, newest first */
};

/* Initialise r on src (borrowed). opts may be NULL. 0 or TFT_ENOMEM. */
int tft_json_reader_init(struct tft_json_reader *r, struct tft_source *src,
			 const struct tft_json_reader_opts *opts, struct tft_error *err);
void tft_json_reader_fini(struct tft_json_reader *r);

/* Set the replay point to the current position (frees decoded strings). */
void tft_json_mark(struct tft_json_reader *r);

/*
 * After TFT_JSON_MORE: keep the window from the mark on, read more input
 * and rewind to the mark. Returns 0, TFT_EFORMAT (the unit does not fit in
 * max_buffer) or a source error.
 */
int tft_json_refill(struct tft_json_reader *r, struct tft_error *err);

/* Stream offset of the read position. */
static inline int64_t tft_json_offset(const struct tft_json_reader *r)
{
	return (int64_t)(r->base + r->pos);
}

/*
 * Skip whitespace and report the next byte in *c without consuming it
 * (-1 at end of input). 0 or TFT_JSON_MORE.
 */
int tft_json_peek(struct tft_json_reader *r, int *c, struct tft_error *err);

/*
 * Read the next value. Scalars are consumed whole; for '{' / '[' the reader
 * enters the container and the caller walks it with tft_json_next_key() /
 * tft_json_next_item() (or leaves it with tft_json_skip_rest()).
 * 0, TFT_JSON_MORE or TFT_EFORMAT.
 */
int tft_json_read(struct tft_json_reader *r, struct tft_json_value *v, struct tft_error *err);

/*
 * Like tft_json_read() but an object or array is not entered: it is
 * skipped (validated when `checked`, see tft_json_skip_checked) and
 * returned as type TFT_JSON_OBJECT / TFT_JSON_ARRAY with ptr/len = its
 * verbatim text.
 */
int tft_json_read_flat(struct tft_json_reader *r, struct tft_json_value *v, bool checked,
		       struct tft_error *err);

/*
 * In an object: 1 = a member follows, its key in *key and the ':' consumed
 * (read or skip its value next); 0 = the object ended (consumed, left).
 * TFT_JSON_MORE or TFT_EFORMAT otherwise.
 */
int tft_json_next_key(struct tft_json_reader *r, struct tft_json_str *key,
		      struct tft_error *err);

/*
 * tft_json_next_key() and the start of its value in one call: 1 = a member,
 * key in *key; a scalar value is read whole into *v; for an object or an
 * array v->type says which and nothing of it is consumed yet (enter it with
 * tft_json_read() or skip it). 0 = the object ended; TFT_JSON_MORE or
 * TFT_EFORMAT otherwise.
 */
int tft_json_next_member(struct tft_json_reader *r, struct tft_json_str *key,
			 struct tft_json_value *v, struct tft_error *err);

/*
 * In an array: 1 = an element follows (read or skip it next); 0 = the array
 * ended. With TFT_JSON_EOF_ENDS_ARRAY, end of input after an element or a
 * comma (or right after '[') ends the array too and sets r->truncated.
 */
int tft_json_next_item(struct tft_json_reader *r, unsigned flags, struct tft_error *err);

/*
 * Skip one value fast: strings are scanned, containers by bracket matching
 * (scalars inside them are not validated). *raw (may be NULL) gets the
 * verbatim bytes. 0, TFT_JSON_MORE or TFT_EFORMAT.
 */
int tft_json_skip(struct tft_json_reader *r, struct tft_json_str *raw, struct tft_error *err);

/* Like tft_json_skip() but validates the whole value against the grammar. */
int tft_json_skip_checked(struct tft_json_reader *r, struct tft_json_str *raw,
			  struct tft_error *err);

/*
 * Skip one value of any size without holding it: the window is refilled as
 * needed and the mark moves along, so the caller must have nothing to
 * replay before this call. Never returns TFT_JSON_MORE. 0 or an error.
 */
int tft_json_skip_stream(struct tft_json_reader *r, struct tft_error *err);

/* Skip the rest of the innermost open container and leave it. */
int tft_json_skip_rest(struct tft_json_reader *r, struct tft_error *err);

/*
 * After the top-level value: only whitespace may follow. 0, TFT_JSON_MORE
 * or TFT_EFORMAT.
 */
int tft_json_finish(struct tft_json_reader *r, struct tft_error *err);

/*
 * Number text (as returned by tft_json_read) to int64 nanoseconds, the text
 * being microseconds: exact decimal arithmetic, rounded half away from zero
 * to the nanosecond. 0, or -1 on overflow / malformed text.
 */
int tft_json_number_to_ns(const char *s, size_t len, int64_t *ns);
/* Exact int64 for integer text; -1 if not an integer or out of range. */
int tft_json_number_to_i64(const char *s, size_t len, int64_t *out);
/* Correctly rounded double (strtod). -1 on malformed text. */
int tft_json_number_to_double(const char *s, size_t len, double *out);

/*
 * Copy JSON text to out (at least len bytes) without the whitespace
 * outside strings; returns the compacted length.
 */
size_t tft_json_compact(const char *in, size_t len, char *out);

#endif /* TFT_CODEC_JSON_READ_H */
