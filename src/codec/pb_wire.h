/* SPDX-License-Identifier: MIT */
/*
 * Zero-copy protobuf wire-format reader over a memory range, driven by small
 * per-message field tables (no code generator, no libprotobuf). The same
 * tables drive the text-format reader (codec/pb_text.h).
 */
#ifndef TFT_CODEC_PB_WIRE_H
#define TFT_CODEC_PB_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/status.h"

/* Wire types (the low 3 bits of a field key). */
enum tft_pb_wire_type {
	TFT_PB_WT_VARINT = 0,
	TFT_PB_WT_I64 = 1,
	TFT_PB_WT_LEN = 2,
	TFT_PB_WT_SGROUP = 3, /* deprecated groups: skipped, never decoded */
	TFT_PB_WT_EGROUP = 4,
	TFT_PB_WT_I32 = 5,
};

/* Field kinds (the .proto scalar types, plus embedded messages). */
enum tft_pb_kind {
	TFT_PB_INT32 = 1,
	TFT_PB_INT64,
	TFT_PB_UINT32,
	TFT_PB_UINT64,
	TFT_PB_SINT32,
	TFT_PB_SINT64,
	TFT_PB_BOOL,
	TFT_PB_ENUM,
	TFT_PB_FIXED32,
	TFT_PB_SFIXED32,
	TFT_PB_FLOAT,
	TFT_PB_FIXED64,
	TFT_PB_SFIXED64,
	TFT_PB_DOUBLE,
	TFT_PB_STRING,
	TFT_PB_BYTES,
	TFT_PB_MESSAGE,
};
#define TFT_PB_KIND_MAX TFT_PB_MESSAGE

#define TFT_PB_MAX_DEPTH 64   /* hard bound on message nesting */
#define TFT_PB_MAX_FIELDS 64  /* fields per message table (presence mask bits) */
#define TFT_PB_NOOFF 0xFFFFu  /* "no storage" for tft_pb_field.offset */
#define TFT_PB_SINGULAR UINT32_MAX /* path index of a non-repeated field */

/* tft_pb_field.flags */
enum {
	TFT_PB_F_REPEATED = 1u << 0, /* packed encoding accepted for numeric kinds */
};

struct tft_pb_dec;
struct tft_pb_msg;

/* A string/bytes value stored into a message struct (borrowed). */
struct tft_pb_bytes {
	const uint8_t *p; /* borrowed: the input buffer, or the text reader's arena */
	size_t len;
};

/*
 * An undecoded sub-message: hand it to tft_pb_wire_decode_sub() now or
 * later (while the input and the decoder live), or ignore it. Wire input:
 * p/len is the payload. Text input: p/len spans the '{'...'}' block.
 */
struct tft_pb_sub {
	struct tft_pb_dec *dec; /* borrowed */
	const uint8_t *p;       /* borrowed: inside the input */
	size_t len;
	const char *name;       /* borrowed (static): field name, for error paths */
	uint32_t index;         /* occurrence index, or TFT_PB_SINGULAR */
};

/* One decoded field value as handlers see it. */
struct tft_pb_val {
	union {
		int64_t i;  /* signed kinds, bool, enum (zigzag/sign already applied) */
		uint64_t u; /* UINT32/UINT64/FIXED32/FIXED64 */
		double d;   /* FLOAT/DOUBLE */
	} n;
	const uint8_t *p; /* STRING/BYTES: borrowed bytes (not NUL-terminated) */
	size_t len;
	struct tft_pb_sub sub; /* MESSAGE */
	int64_t offset;        /* byte offset of the value in the input */
	uint32_t index;        /* occurrence of this field in its message, 0-based */
};

struct tft_pb_field;

/*
 * Field handler: called for every occurrence (every element of a packed
 * field). `msg` is the struct being filled (may be NULL). Return 0, or a
 * negative status after reporting with tft_pb_wire_fail().
 */
typedef int (*tft_pb_field_fn)(void *ctx, void *msg, const struct tft_pb_field *f,
			       const struct tft_pb_val *v);

struct tft_pb_enum_val {
	const char *name;
	int32_t value;
};

/* Enum names for the text format (wire input never needs them). */
struct tft_pb_enum {
	const struct tft_pb_enum_val *vals; /* borrowed (static) */
	uint32_t n;
	/* Optional: numbers for names not in vals (e.g. DT_FLOAT_REF); -1 = unknown. */
	int64_t (*lookup)(const char *name, size_t len);
};

/*
 * One field of a message table. Without a handler, a value is stored at
 * `offset` in the message struct (TFT_PB_NOOFF: dropped):
 *   integer kinds, bool, enum -> int64_t (unsigned kinds: uint64_t bits)
 *   FLOAT, DOUBLE             -> double
 *   STRING, BYTES             -> struct tft_pb_bytes
 *   MESSAGE                   -> an embedded struct decoded in place with
 *                                the table `aux` (struct tft_pb_msg)
 * Repeated fields stored this way keep the last value.
 */
struct tft_pb_field {
	uint32_t num;       /* field number, 1..2^29-1 */
	uint8_t kind;       /* enum tft_pb_kind */
	uint8_t flags;      /* TFT_PB_F_* */
	uint16_t offset;    /* offset in the message struct, or TFT_PB_NOOFF */
	const char *name;   /* borrowed (static): .proto field name (text format, paths) */
	tft_pb_field_fn fn; /* handler, or NULL to store at offset */
	const void *aux;    /* borrowed (static): MESSAGE: struct tft_pb_msg; ENUM: struct tft_pb_enum */
};

/*
 * Table rows: TFT_PB_FIELD stores into `member` of `type` (or calls fn),
 * TFT_PB_HOOK only calls fn. Importers alias them as F and H.
 */
#define TFT_PB_FIELD(num, kind, flags, type, member, name, fn, aux)                              \
	{num, kind, flags, (uint16_t)offsetof(type, member), name, fn, aux}
#define TFT_PB_HOOK(num, kind, flags, name, fn, aux) {num, kind, flags, TFT_PB_NOOFF, name, fn, aux}


struct tft_pb_msg {
	const char *name;                  /* borrowed (static): message type name */
	const struct tft_pb_field *fields; /* borrowed (static) */
	uint32_t nfields;                  /* <= TFT_PB_MAX_FIELDS */
	uint16_t has_offset; /* offset of a uint64_t presence mask (bit = field index), or TFT_PB_NOOFF */
};

struct tft_pb_path_elem {
	const char *name; /* borrowed (static) */
	uint32_t index;   /* TFT_PB_SINGULAR for non-repeated */
};

/* Decoder state. Callers declare it and treat the fields as private. */
struct tft_pb_dec {
	const uint8_t *base;    /* borrowed: the whole input */
	size_t size;
	struct tft_error *err;  /* borrowed, may be NULL */
	uint32_t depth;         /* path entries in use */
	uint32_t max_depth;     /* <= TFT_PB_MAX_DEPTH */
	const char *cur_field;  /* borrowed: field being read (error messages) */
	uint32_t cur_index;     /* its occurrence index, or TFT_PB_SINGULAR */
	uint32_t cur_num;       /* number of an unknown field being skipped, else 0 */
	struct tft_pb_path_elem path[TFT_PB_MAX_DEPTH];
	/* Set by the text reader: decodes a text sub-message. NULL for wire input. */
	int (*decode_text_sub)(const struct tft_pb_sub *s, const struct tft_pb_msg *m, void *out,
			       void *ctx);
	void *text; /* owned by the text reader (codec/pb_text.c) */
};

/* ---- table-driven decoding ---------------------------------------------- */

/* Start decoding wire input data[0..len) (borrowed; must outlive the decoder). */
void tft_pb_wire_init(struct tft_pb_dec *d, const uint8_t *data, size_t len,
		      struct tft_error *err);

/*
 * Decode the whole input as one message of type m into `out` (may be NULL;
 * the caller zeroes it), calling handlers with ctx. Returns 0, TFT_EFORMAT
 * (err: byte offset, message path and what was expected) or a handler's
 * status.
 */
int tft_pb_wire_decode(struct tft_pb_dec *d, const struct tft_pb_msg *m, void *out, void *ctx);

/* Decode a sub-message handed to a handler (wire or text). Same returns. */
int tft_pb_wire_decode_sub(const struct tft_pb_sub *s, const struct tft_pb_msg *m, void *out,
			   void *ctx);

/*
 * Report a failure at input byte `offset` with the current message path
 * ("planes[0].lines[2].events[7]: <what>"). Returns `code`. Handlers use it
 * for semantic errors.
 */
int tft_pb_wire_fail(struct tft_pb_dec *d, int code, int64_t offset, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* The current message path as text ("" at the top); returns buf. */
const char *tft_pb_wire_path(const struct tft_pb_dec *d, char *buf, size_t size);

/* Wire type a kind is encoded with (LEN for strings, bytes, messages). */
static inline int tft_pb_wire_type_of(int kind)
{
	if (kind >= TFT_PB_STRING)
		return TFT_PB_WT_LEN;
	if (kind >= TFT_PB_FIXED64)
		return TFT_PB_WT_I64;
	if (kind >= TFT_PB_FIXED32)
		return TFT_PB_WT_I32;
	return TFT_PB_WT_VARINT;
}

/* Find a field by number / by name in a table (NULL if absent). */
const struct tft_pb_field *tft_pb_wire_field(const struct tft_pb_msg *m, uint32_t num);
const struct tft_pb_field *tft_pb_wire_field_by_name(const struct tft_pb_msg *m, const char *name,
						     size_t len);

/* ---- low-level wire primitives (no allocation, bounds-checked) ---------- */

/*
 * Read a varint at *pp (< end). On success advance *pp and return 0; on a
 * truncated (-1) or over-long (-2, more than 10 bytes or a 10th byte > 1)
 * varint leave *pp unchanged.
 */
static inline int tft_pb_wire_varint(const uint8_t **pp, const uint8_t *end, uint64_t *out)
{
	const uint8_t *p = *pp;
	uint64_t v;

	if (__builtin_expect(p < end && *p < 0x80, 1)) {
		*out = *p;
		*pp = p + 1;
		return 0;
	}
	if (__builtin_expect(end - p >= 10, 1)) {
		/* Unrolled: no bounds check per byte (timestamps are 5-9 byte varints). */
		uint64_t b;
		int i;

		v = p[0] & 0x7F;
		for (i = 1; i < 9; i++) {
			b = p[i];
			v |= (b & 0x7F) << (7 * i);
			if (b < 0x80) {
				*out = v;
				*pp = p + i + 1;
				return 0;
			}
		}
		b = p[9];
		if (b > 1)
			return -2;
		*out = v | b << 63;
		*pp = p + 10;
		return 0;
	}
	v = 0;
	for (unsigned shift = 0; shift < 70; shift += 7) {
		uint8_t b;

		if (p >= end)
			return -1;
		b = *p++;
		if (shift == 63 && b > 1)
			return -2;
		v |= (uint64_t)(b & 0x7F) << shift;
		if (b < 0x80) {
			*out = v;
			*pp = p;
			return 0;
		}
	}
	return -2;
}

static inline int64_t tft_pb_wire_zigzag64(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

static inline int32_t tft_pb_wire_zigzag32(uint32_t v)
{
	return (int32_t)(v >> 1) ^ -(int32_t)(v & 1);
}

static inline uint32_t tft_pb_wire_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t tft_pb_wire_le64(const uint8_t *p)
{
	return (uint64_t)tft_pb_wire_le32(p) | (uint64_t)tft_pb_wire_le32(p + 4) << 32;
}

/* One raw field as the iterator returns it. */
struct tft_pb_raw {
	uint32_t num;     /* field number */
	uint8_t wt;       /* wire type */
	uint64_t v;       /* VARINT/I64/I32: the raw value */
	const uint8_t *p; /* LEN: payload (borrowed); SGROUP: group body */
	size_t len;
	int64_t offset;   /* byte offset of the field key */
};

/* Iterates the fields of one message range. */
struct tft_pb_iter {
	const uint8_t *p, *end; /* borrowed */
};

static inline void tft_pb_wire_iter_init(struct tft_pb_iter *it, const uint8_t *p, size_t len)
{
	it->p = p;
	it->end = len ? p + len : p; /* an empty payload may have no pointer: no arithmetic on NULL */
}

/*
 * Next field of the range: 1 = *f filled, 0 = end of range, TFT_EFORMAT
 * (reported on d with its path) on a malformed key, varint, length, group
 * or wire type. Groups are skipped whole (f->p/len span the body).
 */
int tft_pb_wire_iter_next(struct tft_pb_dec *d, struct tft_pb_iter *it, struct tft_pb_raw *f);

/*
 * Convert a raw scalar to a value of `kind` (zigzag, sign extension,
 * float bits). Returns 0, or TFT_EFORMAT if the wire type does not fit the
 * kind.
 */
int tft_pb_wire_scalar(int kind, int wt, uint64_t raw, struct tft_pb_val *v);

/*
 * Next element of a packed repeated field of numeric `kind` in [*pp, end):
 * 1 = *v filled (*pp advanced), 0 = end, TFT_EFORMAT on a truncated element
 * (reported on d).
 */
int tft_pb_wire_packed_next(struct tft_pb_dec *d, const uint8_t **pp, const uint8_t *end, int kind,
			    struct tft_pb_val *v);

/*
 * Hand one decoded value of field f to its handler (f->fn), or store it at
 * f->offset in the message struct `out` (a sub-message decoded into it by
 * its table f->aux): what the wire and the text readers both do with each
 * value. Inline: once per field on the decoders' hot path. 0 or a negative
 * status (reported).
 */
static inline int tft_pb_deliver(struct tft_pb_dec *d, const struct tft_pb_field *f, struct tft_pb_val *v,
				 void *out, void *ctx)
{
	int r;

	if (f->fn) {
		r = f->fn(ctx, out, f, v);
		if (r < 0)
			return tft_pb_wire_fail(d, r, v->offset, "%s", tft_strerror(r));
		return 0;
	}
	if (f->offset == TFT_PB_NOOFF || !out)
		return 0;
	switch (f->kind) {
	case TFT_PB_STRING:
	case TFT_PB_BYTES: {
		struct tft_pb_bytes b = {v->p, v->len};

		memcpy((char *)out + f->offset, &b, sizeof(b));
		return 0;
	}
	case TFT_PB_MESSAGE:
		if (!f->aux)
			return 0;
		return tft_pb_wire_decode_sub(&v->sub, (const struct tft_pb_msg *)f->aux,
					      (char *)out + f->offset, ctx);
	case TFT_PB_FLOAT:
	case TFT_PB_DOUBLE:
		memcpy((char *)out + f->offset, &v->n.d, sizeof(double));
		return 0;
	default:
		memcpy((char *)out + f->offset, &v->n.i, sizeof(int64_t));
		return 0;
	}
}

#endif /* TFT_CODEC_PB_WIRE_H */
