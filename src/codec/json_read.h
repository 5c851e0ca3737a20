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
	/* NUMBER, filled while scanning (tft_json_value_to_i64/_ns use them): */
	bool neg;           /* starts with '-' */
	bool mag_ok;        /* no exponent and int_mag is the integer part exactly */
	uint32_t frac_len;  /* digits after the '.' (0 if none) */
	uint64_t int_mag;   /* magnitude of the integer part, when mag_ok */
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
	char *mem;                /* owned: the window's buffer, mem_cap + TFT_JSON_PAD bytes */
	size_t mem_cap;
	char *buf;                /* the window: inside mem, cap bytes to its end */
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
	size_t decoded;           /* bytes of strings decoded into scratch since the mark */
	/* tft_json_skip_stream() refills through this when set (else tft_json_refill()) */
	int (*refill_hook)(void *ctx, struct tft_error *err);
	void *refill_ctx;         /* borrowed; passed to refill_hook */
};

/* A window buffer handed between a reader and its caller (tft_json_refill_from). */
struct tft_json_window {
	char *buf;  /* owned by whoever holds the struct; cap + TFT_JSON_PAD bytes */
	size_t cap; /* window capacity in bytes */
};

/* Initialise r on src (borrowed). opts may be NULL. 0 or TFT_ENOMEM. */
int tft_json_reader_init(struct tft_json_reader *r, struct tft_source *src,
			 const struct tft_json_reader_opts *opts, struct tft_error *err);
void tft_json_reader_fini(struct tft_json_reader *r);

/*
 * Initialise r on a whole document in memory: data[0 .. len) (borrowed,
 * must outlive r) with data[len] == '\0' and TFT_JSON_PAD readable bytes
 * after it (e.g. a tft_source_map). The window is the document: strings
 * borrowed from it stay valid as long as data, and nothing is ever read
 * or refilled. src (may be NULL) only names the input in errors.
 */
void tft_json_reader_init_mem(struct tft_json_reader *r, const char *data, size_t len,
			      struct tft_source *src, const struct tft_json_reader_opts *opts);

/* Set the replay point to the current position (frees decoded strings). */
void tft_json_mark(struct tft_json_reader *r);

/*
 * After TFT_JSON_MORE: keep the window from the mark on, read more input
 * and rewind to the mark. Returns 0, TFT_EFORMAT (the unit does not fit in
 * max_buffer) or a source error.
 */
int tft_json_refill(struct tft_json_reader *r, struct tft_error *err);

/*
 * Like tft_json_refill(), but the new bytes were read by the caller (e.g.
 * on another thread) into win->buf[at .. at + n), n > 0 unless eof (no
 * more input after them). The kept bytes (from the mark on) are copied in
 * front of them (moved apart when they are longer than `at`), and the
 * window is swapped: strings borrowed from the previous one stay valid,
 * and on success *win holds it (the caller owns it: reuse it in a later
 * call, or release it with tft_json_window_free()). The window may then
 * exceed max_buffer by up to n bytes. Returns 0, TFT_EFORMAT (the unit
 * from the mark does not fit in max_buffer) or TFT_ENOMEM; on failure *win
 * is still the caller's.
 */
int tft_json_refill_from(struct tft_json_reader *r, struct tft_json_window *win, size_t at,
			 size_t n, bool eof, struct tft_error *err);

void tft_json_window_free(struct tft_json_window *win);

/* True if p points into the reader's current window (a borrowed, undecoded string). */
static inline bool tft_json_in_window(const struct tft_json_reader *r, const char *p)
{
	return p >= r->buf && p < r->buf + r->len;
}

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
 * Enter the next value if it is an object (*is_obj = true); any other value
 * is consumed whole (*is_obj = false). 0, TFT_JSON_MORE or TFT_EFORMAT.
 */
int tft_json_enter_object(struct tft_json_reader *r, bool *is_obj, struct tft_error *err);

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

/* One object member (tft_json_next_members). */
struct tft_json_member {
	struct tft_json_str key;
	struct tft_json_value v;
};

/*
 * tft_json_next_member() for up to max members at once (fewer per-call
 * costs in a hot loop): fills out[0 .. *n). Stops at the end of the object
 * (consumed and left; *ended = true), after a member whose value is an
 * object or an array (the last one in out[]; nothing of the value consumed
 * yet, enter or skip it next), or at max. Strings are borrowed as with
 * tft_json_next_member(). 0, TFT_JSON_MORE or TFT_EFORMAT (out[] then
 * holds nothing usable).
 */
int tft_json_next_members(struct tft_json_reader *r, struct tft_json_member *out, unsigned max,
			  unsigned *n, bool *ended, struct tft_error *err);

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
 * needed (through r->refill_hook when set) and the mark moves along, so the
 * caller must have nothing to replay before this call. Never returns
 * TFT_JSON_MORE. 0 or an error.
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

/* Magnitude to int64 with the sign; -1 when out of range. */
static inline int tft_json_mag_to_i64(uint64_t mag, bool neg, int64_t *out)
{
	if (!neg) {
		if (mag > (uint64_t)INT64_MAX)
			return -1;
		*out = (int64_t)mag;
	} else {
		if (mag > (uint64_t)INT64_MAX + 1)
			return -1;
		*out = mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
	}
	return 0;
}

/*
 * tft_json_number_to_i64() / tft_json_number_to_ns() for a NUMBER value
 * read by this reader, without scanning its text again in the common case.
 */
static inline int tft_json_value_to_i64(const struct tft_json_value *v, int64_t *out)
{
	if (!v->is_int)
		return -1;
	if (v->mag_ok)
		return tft_json_mag_to_i64(v->int_mag, v->neg, out);
	return tft_json_number_to_i64(v->ptr, v->len, out);
}

static inline int tft_json_value_to_ns(const struct tft_json_value *v, int64_t *ns)
{
	/* up to 16 integer digits: int_mag * 1000 + 999 + 1 fits in uint64 */
	if (v->mag_ok && v->int_mag <= UINT64_C(9999999999999999)) {
		const char *f = v->ptr + v->len - v->frac_len;
		uint64_t x = v->int_mag * 1000;
		switch (v->frac_len) {
		default:
			x += f[3] >= '5'; /* half away from zero */
			/* fall through */
		case 3:
			x += (uint64_t)(f[2] - '0');
			/* fall through */
		case 2:
			x += (uint64_t)(f[1] - '0') * 10;
			/* fall through */
		case 1:
			x += (uint64_t)(f[0] - '0') * 100;
			/* fall through */
		case 0:
			break;
		}
		return tft_json_mag_to_i64(x, v->neg, ns);
	}
	return tft_json_number_to_ns(v->ptr, v->len, ns);
}

/*
 * Copy JSON text to out (at least len bytes) without the whitespace
 * outside strings; returns the compacted length.
 */
size_t tft_json_compact(const char *in, size_t len, char *out);

#endif /* TFT_CODEC_JSON_READ_H */
