/* SPDX-License-Identifier: MIT */
/*
 * Streaming JSON writer: appends JSON text to a buffer that is either kept in
 * memory (growable) or flushed to a sink (a FILE* or any byte consumer).
 * Escapes strings, formats integers by hand and nanoseconds as exact
 * microsecond decimals. No model knowledge.
 */
#ifndef TFT_CODEC_JSON_WRITE_H
#define TFT_CODEC_JSON_WRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Sink for flushed output: consume len bytes; return 0 or a negative tft_status. */
typedef int (*tft_json_sink_fn)(void *ctx, const void *buf, size_t len);

/*
 * Writer state. Callers declare it (stack or embedded) and treat the fields
 * as private. Two layers of calls:
 *  - structural calls (begin/end/key/str/int/...) insert ',' between values
 *    and, with `pretty` (set it after init), newlines and indentation;
 *  - raw calls (tft_json_write_raw*) append exactly what they are given and
 *    never touch the separator state: hot loops use them to emit pre-built
 *    fragments.
 * Errors are sticky: after the first failure (sink error, out of memory)
 * every call is a no-op and tft_json_write_finish() returns the status.
 */
struct tft_json_writer {
	char *buf;            /* owned: pending output */
	size_t len, cap;      /* bytes pending / allocated */
	tft_json_sink_fn sink; /* NULL: memory mode, output stays in buf */
	void *sink_ctx;       /* borrowed; passed to sink */
	uint64_t flushed;     /* bytes handed to the sink so far */
	int status;           /* first error, 0 if none */
	uint32_t depth;       /* open containers (structural calls only) */
	uint8_t sep;          /* 0: first in its container, 1: after a value, 2: after a key */
	bool pretty;          /* newlines + two-space indentation (structural calls) */
};

/* Default flush threshold of a sink-backed writer. */
#define TFT_JSON_WRITE_BUF (1u << 20)

/* Memory mode: output accumulates in w->buf (see tft_json_write_borrow). */
void tft_json_write_init_mem(struct tft_json_writer *w);

/*
 * Sink mode: output is handed to sink(ctx, ...) in blocks of about
 * TFT_JSON_WRITE_BUF bytes. Returns 0 or TFT_ENOMEM.
 */
int tft_json_write_init_sink(struct tft_json_writer *w, tft_json_sink_fn sink, void *ctx);

/* Sink mode writing to a stdio stream (borrowed; not closed). */
int tft_json_write_init_file(struct tft_json_writer *w, FILE *fp);

/* Free the buffer. Does not flush. */
void tft_json_write_fini(struct tft_json_writer *w);

/* Hand pending output to the sink (no-op in memory mode). 0 or the sticky status. */
int tft_json_write_flush(struct tft_json_writer *w);

/* Flush and return the sticky status (0 if every write succeeded). */
int tft_json_write_finish(struct tft_json_writer *w);

/* Memory mode: the output so far (NUL-terminated, borrowed until the next call). */
const char *tft_json_write_borrow(struct tft_json_writer *w, size_t *len);

/*
 * Memory mode: the whole output as a NUL-terminated string of the caller's
 * (free it), its length in *len (when len), and the writer finished
 * (tft_json_write_fini). NULL when out of memory or when a write failed (a
 * cut-off document is never handed out).
 */
char *tft_json_write_take(struct tft_json_writer *w, size_t *len);

/* Total bytes produced (flushed + pending). */
static inline uint64_t tft_json_write_bytes(const struct tft_json_writer *w)
{
	return w->flushed + w->len;
}

/* ---- structural calls ------------------------------------------------- */

void tft_json_write_begin_object(struct tft_json_writer *w);
void tft_json_write_end_object(struct tft_json_writer *w);
void tft_json_write_begin_array(struct tft_json_writer *w);
void tft_json_write_end_array(struct tft_json_writer *w);
/* An object key (escaped); the next value call writes its value. */
void tft_json_write_key(struct tft_json_writer *w, const char *key);
void tft_json_write_str(struct tft_json_writer *w, const char *s, size_t len);
void tft_json_write_cstr(struct tft_json_writer *w, const char *s); /* NULL -> null */
void tft_json_write_int(struct tft_json_writer *w, int64_t v);
void tft_json_write_uint(struct tft_json_writer *w, uint64_t v);
void tft_json_write_double(struct tft_json_writer *w, double v);
void tft_json_write_bool(struct tft_json_writer *w, bool v);
void tft_json_write_null(struct tft_json_writer *w);
/* "key": value, for the common member kinds. */
static inline void tft_json_write_key_int(struct tft_json_writer *w, const char *key, int64_t v)
{
	tft_json_write_key(w, key);
	tft_json_write_int(w, v);
}

static inline void tft_json_write_key_uint(struct tft_json_writer *w, const char *key, uint64_t v)
{
	tft_json_write_key(w, key);
	tft_json_write_uint(w, v);
}

/* Nanoseconds as an exact microsecond decimal number ("1234.567"). */
void tft_json_write_ns_us(struct tft_json_writer *w, int64_t ns);
/*
 * Start the next item of the open array/object on a new line: writes the ','
 * it needs (if any) and '\n'. Lists one item per line without full pretty
 * printing.
 */
void tft_json_write_newline(struct tft_json_writer *w);
/* Pre-formatted JSON value, copied verbatim (caller guarantees validity). */
void tft_json_write_value_raw(struct tft_json_writer *w, const char *json, size_t len);
/* Whether p[0..len) is UTF-8 (no overlong form, surrogate or code point past U+10FFFF). */
bool tft_json_is_utf8(const void *p, size_t len);
/* json[0..len) is one JSON value (spaces around it allowed), valid UTF-8 throughout. */
bool tft_json_is_value(const char *json, size_t len);
/*
 * A stored JSON value that may not be one (a session file is untrusted):
 * verbatim if tft_json_is_value(), else as a string, so that the output
 * stays valid JSON whatever the text holds.
 */
void tft_json_write_value_checked(struct tft_json_writer *w, const char *json, size_t len);
/*
 * tft_json_is_value() remembered by id (a string id: the same JSON arg text
 * recurs on event after event), so that an export checks each text once.
 * Zero-initialise; tft_json_memo_free() when done. Out of memory: checks
 * again each time, never wrong.
 */
struct tft_json_memo {
	uint8_t *state; /* owned: per id, 0 unknown, 1 a value, 2 not */
	size_t cap;
};
bool tft_json_memo_is_value(struct tft_json_memo *m, uint32_t id, const char *json, size_t len);
void tft_json_memo_free(struct tft_json_memo *m);

/* ---- raw calls (no separators, no state) ------------------------------ */

static inline void tft_json_write_raw(struct tft_json_writer *w, const char *s, size_t len);
/* "s" quoted and escaped (see tft_json_escape for the policy). */
void tft_json_write_raw_str(struct tft_json_writer *w, const char *s, size_t len);
void tft_json_write_raw_int(struct tft_json_writer *w, int64_t v);
void tft_json_write_raw_uint(struct tft_json_writer *w, uint64_t v);
void tft_json_write_raw_ns_us(struct tft_json_writer *w, int64_t ns);
/*
 * A double as short text that reads back exactly: for 1e-5 <= |v| < 1e15,
 * fixed point with the fewest decimals that round-trip (no printf);
 * otherwise the shortest of %.15g/%.16g/%.17g that reads back exactly.
 * Integral values print without a fraction unless keep_point is set, in
 * which case ".0" is appended so a reader sees a floating-point number.
 * NaN and infinities have no JSON form and print as null.
 */
void tft_json_write_raw_double(struct tft_json_writer *w, double v, bool keep_point);

static inline void tft_json_write_raw_char(struct tft_json_writer *w, char c);

/* ---- Python's json.dumps(obj, indent=4) ----------------------------------- */

/*
 * The text Python's json.dumps(obj, indent=4) writes (ensure_ascii), for
 * outputs compared byte for byte with Python's (the tf.timeline export):
 * four-space indentation, "," and a newline between items, ": " after a key,
 * "[]" and "{}" when empty, strings with only ' '..'~' unescaped. Its own
 * nesting state over the writer's raw calls (the structural calls' state is
 * left alone). Zero-initialise with w set; at most TFT_JSON_PY_MAX_NEST deep.
 */
#define TFT_JSON_PY_MAX_NEST 8
struct tft_json_py {
	struct tft_json_writer *w; /* borrowed */
	int depth;
	bool first[TFT_JSON_PY_MAX_NEST + 1];
};

/* Open ('{' or '[') or close ('}' or ']') a container. */
void tft_json_py_open(struct tft_json_py *j, char c);
void tft_json_py_close(struct tft_json_py *j, char c);
/* Start the next item of the open container (its ',' and newline). */
void tft_json_py_item(struct tft_json_py *j);
/* A string value, or the next item's key ("k": ). */
void tft_json_py_str(struct tft_json_py *j, const char *s, size_t len);
void tft_json_py_key(struct tft_json_py *j, const char *k);

static inline void tft_json_py_key_int(struct tft_json_py *j, const char *k, int64_t v)
{
	tft_json_py_key(j, k);
	tft_json_write_raw_int(j->w, v);
}

static inline void tft_json_py_key_str(struct tft_json_py *j, const char *k, const char *s, size_t n)
{
	tft_json_py_key(j, k);
	tft_json_py_str(j, s, n);
}

/* ---- formatting helpers (no writer) ------------------------------------ */

/* Decimal digits of v into out (>= 21 bytes); returns the length. No NUL. */
size_t tft_json_fmt_int(char *out, int64_t v);
size_t tft_json_fmt_uint(char *out, uint64_t v);
/*
 * ns as microseconds, exact: 1234567 -> "1234.567", 1234500 -> "1234.5",
 * 1234000 -> "1234", -1 -> "-0.001". out >= 24 bytes; returns the length.
 */
size_t tft_json_fmt_ns_us(char *out, int64_t ns);
/* The double text of tft_json_write_raw_double; out >= 32 bytes. */
size_t tft_json_fmt_double(char *out, double v, bool keep_point);

/*
 * Escape s[0..len) as the inside of a JSON string into out, which must hold
 * at least tft_json_escape_bound(len) bytes; returns the bytes written.
 * Policy: '"' and '\\' are backslash-escaped; control characters U+0000 to
 * U+001F become \b \f \n \r \t or \u00XX; DEL and every valid UTF-8
 * sequence are copied as they are; each byte that is not part of a valid
 * UTF-8 sequence (stray continuation bytes, truncated or overlong
 * sequences, surrogates, code points above U+10FFFF) is replaced by U+FFFD,
 * written as its UTF-8 bytes. The output is therefore always valid UTF-8.
 */
size_t tft_json_escape(char *out, const char *s, size_t len);
static inline size_t tft_json_escape_bound(size_t len)
{
	return len * 6;
}

/* Slow path of the inline helpers; internal. */
int tft_json_write_reserve_slow(struct tft_json_writer *w, size_t n);

/* Make room for n more bytes; false once the writer has failed. */
static inline bool tft_json_write_reserve(struct tft_json_writer *w, size_t n)
{
	if (__builtin_expect(w->cap - w->len >= n, 1))
		return true;
	return tft_json_write_reserve_slow(w, n) == 0;
}

static inline void tft_json_write_raw_char(struct tft_json_writer *w, char c)
{
	if (tft_json_write_reserve(w, 1))
		w->buf[w->len++] = c;
}

/* Inline so that fragments of constant length compile to a few moves. */
static inline void tft_json_write_raw(struct tft_json_writer *w, const char *s, size_t len)
{
	/* len 0 on a fresh memory writer: no buffer yet, nothing to copy. */
	if (len && tft_json_write_reserve(w, len)) {
		memcpy(w->buf + w->len, s, len);
		w->len += len;
	}
}

/* ---- records written through a cursor; memory-mode helpers ---------------
 *
 * For importers that write many small JSON records (one per node) into
 * memory-mode writers: reserve a bound of a whole record once
 * (tft_json_write_cursor), write it through the cursor with the
 * tft_json_put_*() helpers (no bounds checks, no separator state), then
 * hand the end back (tft_json_write_commit). Same bytes as the raw calls.
 */

/* The most bytes tft_json_put_int() writes ('-' and 20 digits). */
#define TFT_JSON_INT_MAX 21

/* Room for n more bytes: where to write them, or NULL once the writer has failed. */
static inline char *tft_json_write_cursor(struct tft_json_writer *w, size_t n)
{
	return tft_json_write_reserve(w, n) ? w->buf + w->len : NULL;
}

/* What was written through the cursor, up to end, is the writer's output. */
static inline void tft_json_write_commit(struct tft_json_writer *w, const char *end)
{
	w->len = (size_t)(end - w->buf);
}

static inline char *tft_json_put_raw(char *o, const void *s, size_t n)
{
	if (n)
		memcpy(o, s, n);
	return o + n;
}

/* A string literal, its length a constant. */
#define tft_json_put_lit(o, s) tft_json_put_raw((o), (s), sizeof(s) - 1)

/*
 * "key": (quoted[0..n) holds the quoted key and the colon) after a ','
 * unless the byte before the cursor opens an object or array (there must
 * be one: the record's opener at least).
 */
static inline char *tft_json_put_keyn(char *o, const char *quoted, size_t n)
{
	if (o[-1] != '[' && o[-1] != '{')
		*o++ = ',';
	return tft_json_put_raw(o, quoted, n);
}

/* tft_json_put_keyn() for a string literal key k. */
#define tft_json_put_key(o, k) tft_json_put_keyn((o), "\"" k "\":", sizeof("\"" k "\":") - 1)

static inline char *tft_json_put_int(char *o, int64_t v)
{
	return o + tft_json_fmt_int(o, v);
}

static inline char *tft_json_put_uint(char *o, uint64_t v)
{
	return o + tft_json_fmt_uint(o, v);
}

/* "s" quoted and escaped: needs tft_json_escape_bound(n) + 2 bytes. */
static inline char *tft_json_put_str(char *o, const void *s, size_t n)
{
	*o++ = '"';
	o += tft_json_escape(o, (const char *)s, n);
	*o++ = '"';
	return o;
}

/* Memory mode: forget the output so far (a failure stays sticky). */
static inline void tft_json_write_clear(struct tft_json_writer *w)
{
	w->len = 0;
}

/* Memory mode: the output so far, not NUL-terminated (NULL before the first byte). */
static inline const char *tft_json_write_data(const struct tft_json_writer *w, size_t *len)
{
	*len = w->len;
	return w->buf;
}

/* The first failure (TFT_ENOMEM, a sink's error), 0 if none. */
static inline int tft_json_write_failed(const struct tft_json_writer *w)
{
	return w->status;
}

/*
 * Memory mode, raw: a ',' unless the output is empty or ends with '[' or
 * '{' (lists built with raw calls, where no separator state is kept).
 */
static inline void tft_json_write_raw_sep(struct tft_json_writer *w)
{
	if (w->len && w->buf[w->len - 1] != '[' && w->buf[w->len - 1] != '{')
		tft_json_write_raw_char(w, ',');
}

#endif /* TFT_CODEC_JSON_WRITE_H */
