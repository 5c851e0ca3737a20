/* SPDX-License-Identifier: MIT */
/*
 * Protobuf wire-format reader: field iteration, scalar conversion, packed
 * fields and the table-driven decoder shared with the text reader.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "codec/pb_wire.h"

void tft_pb_wire_init(struct tft_pb_dec *d, const uint8_t *data, size_t len,
		      struct tft_error *err)
{
	d->base = data;
	d->size = len;
	d->err = err;
	d->depth = 0;
	d->max_depth = TFT_PB_MAX_DEPTH;
	d->cur_field = NULL;
	d->cur_index = TFT_PB_SINGULAR;
	d->cur_num = 0;
	d->decode_text_sub = NULL;
	d->text = NULL;
}

const char *tft_pb_wire_path(const struct tft_pb_dec *d, char *buf, size_t size)
{
	size_t n = 0;

	if (!size)
		return buf;
	buf[0] = '\0';
	for (uint32_t i = 0; i < d->depth && n + 1 < size; i++) {
		const struct tft_pb_path_elem *e = &d->path[i];
		int k;

		if (e->index == TFT_PB_SINGULAR)
			k = snprintf(buf + n, size - n, "%s%s", i ? "." : "", e->name ? e->name : "?");
		else
			k = snprintf(buf + n, size - n, "%s%s[%u]", i ? "." : "",
				     e->name ? e->name : "?", e->index);
		if (k < 0)
			break;
		n += (size_t)k;
	}
	if (n >= size)
		buf[size - 1] = '\0';
	return buf;
}

int tft_pb_wire_fail(struct tft_pb_dec *d, int code, int64_t offset, const char *fmt, ...)
{
	char what[200], path[224];
	va_list ap;

	if (!d->err || d->err->code != TFT_OK)
		return code;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	tft_pb_wire_path(d, path, sizeof(path));
	if (d->cur_field && d->cur_index != TFT_PB_SINGULAR)
		tft_error_set(d->err, code, offset, "%s%s%s[%u]: %s", path, path[0] ? "." : "",
			      d->cur_field, d->cur_index, what);
	else if (d->cur_field)
		tft_error_set(d->err, code, offset, "%s%s%s: %s", path, path[0] ? "." : "",
			      d->cur_field, what);
	else if (d->cur_num)
		tft_error_set(d->err, code, offset, "%s%sfield %u: %s", path, path[0] ? "." : "",
			      d->cur_num, what);
	else if (path[0])
		tft_error_set(d->err, code, offset, "%s: %s", path, what);
	else
		tft_error_set(d->err, code, offset, "%s", what);
	return code;
}

static inline int64_t off_of(const struct tft_pb_dec *d, const uint8_t *p)
{
	return (int64_t)(p - d->base);
}

const struct tft_pb_field *tft_pb_wire_field(const struct tft_pb_msg *m, uint32_t num)
{
	for (uint32_t i = 0; i < m->nfields; i++)
		if (m->fields[i].num == num)
			return &m->fields[i];
	return NULL;
}

const struct tft_pb_field *tft_pb_wire_field_by_name(const struct tft_pb_msg *m, const char *name,
						     size_t len)
{
	for (uint32_t i = 0; i < m->nfields; i++) {
		const char *fn = m->fields[i].name;

		if (fn && strlen(fn) == len && memcmp(fn, name, len) == 0)
			return &m->fields[i];
	}
	return NULL;
}

/* Convert a raw value whose wire type already matches the kind. */
static inline void convert(int kind, uint64_t raw, struct tft_pb_val *v)
{
	switch (kind) {
	case TFT_PB_INT32:
	case TFT_PB_ENUM:
		v->n.i = (int32_t)(uint32_t)raw;
		break;
	case TFT_PB_INT64:
		v->n.i = (int64_t)raw;
		break;
	case TFT_PB_UINT32:
	case TFT_PB_FIXED32:
		v->n.u = (uint32_t)raw;
		break;
	case TFT_PB_UINT64:
	case TFT_PB_FIXED64:
		v->n.u = raw;
		break;
	case TFT_PB_SINT32:
		v->n.i = tft_pb_wire_zigzag32((uint32_t)raw);
		break;
	case TFT_PB_SINT64:
		v->n.i = tft_pb_wire_zigzag64(raw);
		break;
	case TFT_PB_BOOL:
		v->n.i = raw != 0;
		break;
	case TFT_PB_SFIXED32:
		v->n.i = (int32_t)(uint32_t)raw;
		break;
	case TFT_PB_SFIXED64:
		v->n.i = (int64_t)raw;
		break;
	case TFT_PB_FLOAT: {
		uint32_t bits = (uint32_t)raw;
		float fl;

		memcpy(&fl, &bits, sizeof(fl));
		v->n.d = fl;
		break;
	}
	case TFT_PB_DOUBLE:
		memcpy(&v->n.d, &raw, sizeof(v->n.d));
		break;
	default:
		v->n.u = raw;
		break;
	}
}

int tft_pb_wire_scalar(int kind, int wt, uint64_t raw, struct tft_pb_val *v)
{
	if (kind < TFT_PB_INT32 || kind > TFT_PB_DOUBLE || wt != tft_pb_wire_type_of(kind))
		return TFT_EFORMAT;
	convert(kind, raw, v);
	return 0;
}

static int is_packable(int kind)
{
	return kind >= TFT_PB_INT32 && kind <= TFT_PB_DOUBLE;
}

static int fail_varint(struct tft_pb_dec *d, const uint8_t *at, int r, const char *what)
{
	return tft_pb_wire_fail(d, TFT_EFORMAT, off_of(d, at), "%s %s", r == -1 ? "truncated" : "over-long",
				what);
}

/* Read a length prefix at *pp and check the payload fits before end. */
static int read_len(struct tft_pb_dec *d, const uint8_t **pp, const uint8_t *end, size_t *len)
{
	const uint8_t *at = *pp;
	uint64_t n;
	int r = tft_pb_wire_varint(pp, end, &n);

	if (r)
		return fail_varint(d, at, r, "length");
	if (n > (uint64_t)(end - *pp)) {
		unsigned long long left = (unsigned long long)(end - *pp);

		*pp = at;
		return tft_pb_wire_fail(d, TFT_EFORMAT, off_of(d, at),
					"length %llu exceeds the %llu bytes left in the message",
					(unsigned long long)n, left);
	}
	*len = (size_t)n;
	return 0;
}

/* Skip a group body after its SGROUP key; *pp ends after the EGROUP key. */
static int skip_group(struct tft_pb_dec *d, uint32_t num, const uint8_t **pp, const uint8_t *end,
		      uint32_t level);

/* Skip one value of wire type wt at *pp. */
static int skip_value(struct tft_pb_dec *d, uint32_t num, uint32_t wt, const uint8_t *key_at,
		      const uint8_t **pp, const uint8_t *end, uint32_t level)
{
	const uint8_t *at = *pp;
	uint64_t v;
	size_t n;
	int r;

	switch (wt) {
	case TFT_PB_WT_VARINT:
		r = tft_pb_wire_varint(pp, end, &v);
		return r ? fail_varint(d, at, r, "varint") : 0;
	case TFT_PB_WT_I64:
		if (end - at < 8)
			return tft_pb_wire_fail(d, TFT_EFORMAT, off_of(d, at), "truncated fixed64 in field %u", num);
		*pp = at + 8;
		return 0;
	case TFT_PB_WT_I32:
		if (end - at < 4)
			return tft_pb_wire_fail(d, TFT_EFORMAT, off_of(d, at), "truncated fixed32 in field %u", num);
		*pp = at + 4;
		return 0;
	case TFT_PB_WT_LEN:
		r = read_len(d, pp, end, &n);
		if (r)
			return r;
		*pp += n;
		return 0;
	case TFT_PB_WT_SGROUP:
		return skip_group(d, num, pp, end, level + 1);
	case TFT_PB_WT_EGROUP:
		return tft_pb_wire_fail(d, TFT_EFORMAT, off_of(d, key_at), "end-group for field %u without a start", num);
	default:
		return tft_pb_wire_fail(d, TFT_EFORMAT, off_of(d, key_at), "invalid wire type %u in field %u",
					wt, num);
	}
}

static int skip_group(struct tft_pb_dec *d, uint32_t num, const uint8_t **pp, const uint8_t *end,
		      uint32_t level)
{
	if (d->depth + level >= d->max_depth)
		return tft_pb_wire_fail(d, TFT_EFORMAT, off_of(d, *pp), "groups nested deeper than %u",
					d->max_depth);
	while (*pp < end) {
		const uint8_t *key_at = *pp;
		uint64_t key;
		int r = tft_pb_wire_varint(pp, end, &key);
		uint32_t wt, fnum;

		if (r)
			return fail_varint(d, key_at, r, "field key");
		wt = (uint32_t)(key & 7);
		if ((key >> 3) == 0 || (key >> 3) > 0x1FFFFFFF)
			return tft_pb_wire_fail(d, TFT_EFORMAT, off_of(d, key_at), "invalid field number %llu",
						(unsigned long long)(key >> 3));
		fnum = (uint32_t)(key >> 3);
		if (wt == TFT_PB_WT_EGROUP) {
			if (fnum != num)
				return tft_pb_wire_fail(d, TFT_EFORMAT, off_of(d, key_at),
							"end-group for field %u inside group %u", fnum, num);
			return 0;
		}
		r = skip_value(d, fnum, wt, key_at, pp, end, level);
		if (r)
			return r;
	}
	return tft_pb_wire_fail(d, TFT_EFORMAT, off_of(d, *pp), "group %u not closed before the end of its message", num);
}

int tft_pb_wire_iter_next(struct tft_pb_dec *d, struct tft_pb_iter *it, struct tft_pb_raw *f)
{
	const uint8_t *p = it->p, *key_at = p;
	uint64_t key;
	int r;

	if (p >= it->end)
		return 0;
	r = tft_pb_wire_varint(&p, it->end, &key);
	if (r)
		return fail_varint(d, key_at, r, "field key");
	if ((key >> 3) == 0 || (key >> 3) > 0x1FFFFFFF)
		return tft_pb_wire_fail(d, TFT_EFORMAT, off_of(d, key_at), "invalid field number %llu",
					(unsigned long long)(key >> 3));
	f->num = (uint32_t)(key >> 3);
	f->wt = (uint8_t)(key & 7);
	f->offset = off_of(d, key_at);
	f->v = 0;
	f->p = NULL;
	f->len = 0;
	switch (f->wt) {
	case TFT_PB_WT_VARINT: {
		const uint8_t *at = p;

		r = tft_pb_wire_varint(&p, it->end, &f->v);
		if (r)
			return fail_varint(d, at, r, "varint");
		break;
	}
	case TFT_PB_WT_I64:
		if (it->end - p < 8)
			return tft_pb_wire_fail(d, TFT_EFORMAT, off_of(d, p), "truncated fixed64 in field %u", f->num);
		f->v = tft_pb_wire_le64(p);
		p += 8;
		break;
	case TFT_PB_WT_I32:
		if (it->end - p < 4)
			return tft_pb_wire_fail(d, TFT_EFORMAT, off_of(d, p), "truncated fixed32 in field %u", f->num);
		f->v = tft_pb_wire_le32(p);
		p += 4;
		break;
	case TFT_PB_WT_LEN:
		r = read_len(d, &p, it->end, &f->len);
		if (r)
			return r;
		f->p = p;
		p += f->len;
		break;
	case TFT_PB_WT_SGROUP: {
		const uint8_t *body = p;

		r = skip_group(d, f->num, &p, it->end, 1);
		if (r)
			return r;
		f->p = body;
		f->len = (size_t)(p - body);
		break;
	}
	default:
		return skip_value(d, f->num, f->wt, key_at, &p, it->end, 0);
	}
	it->p = p;
	return 1;
}

int tft_pb_wire_packed_next(struct tft_pb_dec *d, const uint8_t **pp, const uint8_t *end, int kind,
			    struct tft_pb_val *v)
{
	const uint8_t *p = *pp;
	int wt = tft_pb_wire_type_of(kind);
	uint64_t raw;
	int r;

	if (p >= end)
		return 0;
	v->offset = off_of(d, p);
	if (wt == TFT_PB_WT_VARINT) {
		r = tft_pb_wire_varint(&p, end, &raw);
		if (r)
			return fail_varint(d, *pp, r, "packed varint");
	} else if (wt == TFT_PB_WT_I64) {
		if (end - p < 8)
			return tft_pb_wire_fail(d, TFT_EFORMAT, off_of(d, p), "truncated packed fixed64");
		raw = tft_pb_wire_le64(p);
		p += 8;
	} else if (wt == TFT_PB_WT_I32) {
		if (end - p < 4)
			return tft_pb_wire_fail(d, TFT_EFORMAT, off_of(d, p), "truncated packed fixed32");
		raw = tft_pb_wire_le32(p);
		p += 4;
	} else {
		return tft_pb_wire_fail(d, TFT_EFORMAT, off_of(d, p), "kind %d cannot be packed", kind);
	}
	tft_pb_wire_scalar(kind, wt, raw, v);
	*pp = p;
	return 1;
}

static int decode_range(struct tft_pb_dec *d, const struct tft_pb_msg *m, const uint8_t *p,
			const uint8_t *end, void *out, void *ctx);

static int decode_range(struct tft_pb_dec *d, const struct tft_pb_msg *m, const uint8_t *p,
			const uint8_t *end, void *out, void *ctx)
{
	uint32_t counts[TFT_PB_MAX_FIELDS];
	const struct tft_pb_field *fields = m->fields;
	uint32_t nf = m->nfields < TFT_PB_MAX_FIELDS ? m->nfields : TFT_PB_MAX_FIELDS;
	uint32_t hint = 0;
	uint64_t has = 0;
	int r;

	memset(counts, 0, nf * sizeof(counts[0]));
	d->cur_field = NULL;
	while (p < end) {
		const uint8_t *key_at = p;
		const struct tft_pb_field *f = NULL;
		struct tft_pb_val v;
		uint64_t key, num;
		uint32_t wt, fi, ewt;

		r = tft_pb_wire_varint(&p, end, &key);
		if (r) {
			d->cur_field = NULL;
			return fail_varint(d, key_at, r, "field key");
		}
		num = key >> 3;
		wt = (uint32_t)(key & 7);
		if (num == 0 || num > 0x1FFFFFFF) {
			d->cur_field = NULL;
			return tft_pb_wire_fail(d, TFT_EFORMAT, off_of(d, key_at), "invalid field number %llu",
						(unsigned long long)num);
		}
		/* Fields usually arrive in table order: try the next one first. */
		if (hint < nf && fields[hint].num == num) {
			fi = hint;
		} else {
			for (fi = 0; fi < nf; fi++)
				if (fields[fi].num == num)
					break;
		}
		if (fi == nf) {
			d->cur_field = NULL;
			d->cur_num = (uint32_t)num;
			r = skip_value(d, (uint32_t)num, wt, key_at, &p, end, 0);
			d->cur_num = 0;
			if (r)
				return r;
			continue;
		}
		f = &fields[fi];
		hint = fi + 1;
		d->cur_field = f->name;
		d->cur_index = (f->flags & TFT_PB_F_REPEATED) ? counts[fi] : TFT_PB_SINGULAR;
		ewt = (uint32_t)tft_pb_wire_type_of(f->kind);
		v.offset = off_of(d, p);
		if (wt == ewt) {
			v.index = counts[fi]++;
			if (wt == TFT_PB_WT_LEN) {
				size_t n;

				r = read_len(d, &p, end, &n);
				if (r)
					return r;
				v.p = p;
				v.len = n;
				if (f->kind == TFT_PB_MESSAGE) {
					v.sub.dec = d;
					v.sub.p = p;
					v.sub.len = n;
					v.sub.name = f->name;
					v.sub.index = (f->flags & TFT_PB_F_REPEATED) ? v.index : TFT_PB_SINGULAR;
				}
				p += n;
			} else {
				uint64_t raw;
				const uint8_t *at = p;

				if (wt == TFT_PB_WT_VARINT) {
					r = tft_pb_wire_varint(&p, end, &raw);
					if (r)
						return fail_varint(d, at, r, "varint");
				} else if (wt == TFT_PB_WT_I64) {
					if (end - p < 8)
						return tft_pb_wire_fail(d, TFT_EFORMAT, off_of(d, p), "truncated fixed64");
					raw = tft_pb_wire_le64(p);
					p += 8;
				} else {
					if (end - p < 4)
						return tft_pb_wire_fail(d, TFT_EFORMAT, off_of(d, p), "truncated fixed32");
					raw = tft_pb_wire_le32(p);
					p += 4;
				}
				convert(f->kind, raw, &v);
			}
			r = tft_pb_deliver(d, f, &v, out, ctx);
			if (r)
				return r;
			d->cur_field = f->name;
			d->cur_index = (f->flags & TFT_PB_F_REPEATED) ? v.index : TFT_PB_SINGULAR;
		} else if (wt == TFT_PB_WT_LEN && (f->flags & TFT_PB_F_REPEATED) && is_packable(f->kind)) {
			const uint8_t *q, *qend;
			size_t n;

			r = read_len(d, &p, end, &n);
			if (r)
				return r;
			q = p;
			qend = p + n;
			p = qend;
			while ((r = tft_pb_wire_packed_next(d, &q, qend, f->kind, &v)) == 1) {
				v.index = counts[fi]++;
				d->cur_index = v.index;
				r = tft_pb_deliver(d, f, &v, out, ctx);
				if (r)
					return r;
			}
			if (r < 0)
				return r;
		} else {
			return tft_pb_wire_fail(d, TFT_EFORMAT, off_of(d, key_at),
						"wire type %u does not match the field (expected %u)", wt, ewt);
		}
		has |= 1ull << fi;
	}
	d->cur_field = NULL;
	if (out && m->has_offset != TFT_PB_NOOFF) {
		uint64_t old;

		memcpy(&old, (char *)out + m->has_offset, sizeof(old));
		old |= has;
		memcpy((char *)out + m->has_offset, &old, sizeof(old));
	}
	return 0;
}

int tft_pb_wire_decode(struct tft_pb_dec *d, const struct tft_pb_msg *m, void *out, void *ctx)
{
	if (d->decode_text_sub) {
		struct tft_pb_sub s = {d, d->base, d->size, NULL, TFT_PB_SINGULAR};

		return d->decode_text_sub(&s, m, out, ctx);
	}
	return decode_range(d, m, d->base, d->base + d->size, out, ctx);
}

int tft_pb_wire_decode_sub(const struct tft_pb_sub *s, const struct tft_pb_msg *m, void *out,
			   void *ctx)
{
	struct tft_pb_dec *d = s->dec;
	const char *saved = d->cur_field;
	uint32_t saved_index = d->cur_index;
	int r;

	if (d->decode_text_sub)
		return d->decode_text_sub(s, m, out, ctx);
	if (d->depth >= d->max_depth)
		return tft_pb_wire_fail(d, TFT_EFORMAT, off_of(d, s->p), "messages nested deeper than %u",
					d->max_depth);
	d->path[d->depth].name = s->name;
	d->path[d->depth].index = s->index;
	d->depth++;
	r = decode_range(d, m, s->p, s->p + s->len, out, ctx);
	d->depth--;
	d->cur_field = saved;
	d->cur_index = saved_index;
	return r;
}
