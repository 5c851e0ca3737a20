/* SPDX-License-Identifier: MIT */
/*
 * What the tf.timeline export reads from a node's args (tl_int.h):
 * timeline_label parsed as timeline.py's regular expressions do (op and
 * inputs; kernel labels are collect/tf_names.h's), and the "output" arg (the
 * JSON the RunMetadata importer writes) read back into the tensor
 * description timeline.py prints.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "core/strtab.h"
#include "export/tftimeline/tl_int.h"

/* ---- labels ---------------------------------------------------------------------- */


/*
 * re.match(r"(.*) = (.*)\((.*)\)", label) with Python's backtracking: '.'
 * stops at a newline; the last ')' closes the inputs, the last '(' before
 * it opens them, the last " = " before that ends the name.
 */
bool tft_tl_parse_op_label(const char *s, size_t len, struct slice *op, struct slice *inputs)
{
	const char *nl = memchr(s, '\n', len);
	size_t n = nl ? (size_t)(nl - s) : len, k, j, i;

	for (k = n; k > 0 && s[k - 1] != ')'; k--)
		;
	if (!k)
		return false;
	k--; /* s[k] == ')' */
	for (j = k; j > 0 && s[j - 1] != '('; j--)
		;
	if (!j)
		return false;
	j--; /* s[j] == '(' */
	if (j < 3)
		return false;
	for (i = j - 3 + 1; i > 0; i--)
		if (memcmp(s + i - 1, " = ", 3) == 0)
			break;
	if (!i)
		return false;
	i--; /* " = " at s[i] */
	op->p = s + i + 3;
	op->len = j - (i + 3);
	inputs->p = s + j + 1;
	inputs->len = k - (j + 1);
	return true;
}

/* inputs.split(", ") (nothing for an empty string): next piece, 0 when done. */
bool tft_tl_next_input(struct slice *rest, bool *done, struct slice *out)
{
	const char *p = rest->p;
	size_t n = rest->len;

	if (*done)
		return false;
	for (size_t i = 0; i + 1 < n; i++) {
		if (p[i] == ',' && p[i + 1] == ' ') {
			out->p = p;
			out->len = i;
			rest->p = p + i + 2;
			rest->len = n - i - 2;
			return true;
		}
	}
	out->p = p;
	out->len = n;
	*done = true;
	return true;
}

/* ---- the "output" arg (JSON written by the RunMetadata importer) ------------------- */



static void jp_ws(struct jp *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\n' || *j->p == '\t' || *j->p == '\r'))
		j->p++;
}

bool tft_tl_jp_lit(struct jp *j, char c)
{
	jp_ws(j);
	if (j->p < j->end && *j->p == c) {
		j->p++;
		return true;
	}
	return false;
}

/* A string; out = raw bytes between the quotes (escapes left as written). */
static bool jp_string(struct jp *j, struct slice *out)
{
	const char *q;

	jp_ws(j);
	if (j->p >= j->end || *j->p != '"')
		return false;
	for (q = j->p + 1; q < j->end && *q != '"'; q++)
		if (*q == '\\')
			q++;
	if (q >= j->end)
		return false;
	out->p = j->p + 1;
	out->len = (size_t)(q - out->p);
	j->p = q + 1;
	return true;
}

static bool jp_int(struct jp *j, int64_t *v)
{
	bool neg = false;
	uint64_t u = 0;
	const char *start;

	jp_ws(j);
	if (j->p < j->end && *j->p == '-')
		neg = true, j->p++;
	start = j->p;
	while (j->p < j->end && *j->p >= '0' && *j->p <= '9') {
		u = u * 10 + (uint64_t)(*j->p - '0');
		j->p++;
	}
	if (j->p == start)
		return false;
	/* fractions / exponents are not expected; skip them */
	while (j->p < j->end && (*j->p == '.' || *j->p == 'e' || *j->p == 'E' || *j->p == '+' ||
				 *j->p == '-' || (*j->p >= '0' && *j->p <= '9')))
		j->p++;
	*v = neg ? (int64_t)(0 - u) : (int64_t)u;
	return true;
}

/* Skip any value (bounded nesting). */
static bool jp_skip(struct jp *j, int depth)
{
	struct slice s;
	int64_t v;

	jp_ws(j);
	if (j->p >= j->end || depth > 32)
		return false;
	switch (*j->p) {
	case '"':
		return jp_string(j, &s);
	case '[':
	case '{': {
		char close = *j->p == '[' ? ']' : '}';
		bool obj = close == '}';

		j->p++;
		if (tft_tl_jp_lit(j, close))
			return true;
		do {
			if (obj && (!jp_string(j, &s) || !tft_tl_jp_lit(j, ':')))
				return false;
			if (!jp_skip(j, depth + 1))
				return false;
		} while (tft_tl_jp_lit(j, ','));
		return tft_tl_jp_lit(j, close);
	}
	case 't':
	case 'f':
	case 'n': {
		const char *w = *j->p == 't' ? "true" : *j->p == 'f' ? "false" : "null";
		size_t n = strlen(w);

		if ((size_t)(j->end - j->p) < n || memcmp(j->p, w, n) != 0)
			return false;
		j->p += n;
		return true;
	}
	default:
		return jp_int(j, &v);
	}
}

static bool jp_bool(struct jp *j, bool *v)
{
	jp_ws(j);
	if ((size_t)(j->end - j->p) >= 4 && memcmp(j->p, "true", 4) == 0) {
		j->p += 4;
		*v = true;
		return true;
	}
	if ((size_t)(j->end - j->p) >= 5 && memcmp(j->p, "false", 5) == 0) {
		j->p += 5;
		*v = false;
		return true;
	}
	return false;
}

bool tft_tl_slice_is(struct slice s, const char *lit)
{
	return s.len == strlen(lit) && memcmp(s.p, lit, s.len) == 0;
}

/* One NodeOutput object of the "output" array. */
bool tft_tl_parse_output(struct jp *j, struct out_desc *o)
{
	struct slice key;

	memset(o, 0, sizeof(*o));
	if (!tft_tl_jp_lit(j, '{'))
		return false;
	if (tft_tl_jp_lit(j, '}'))
		return true;
	do {
		bool ok;

		if (!jp_string(j, &key) || !tft_tl_jp_lit(j, ':'))
			return false;
		if (tft_tl_slice_is(key, "dtype")) {
			jp_ws(j);
			o->has_dtype = true;
			o->dtype_is_name = j->p < j->end && *j->p == '"';
			ok = o->dtype_is_name ? jp_string(j, &o->dtype_name) : jp_int(j, &o->dtype);
		} else if (tft_tl_slice_is(key, "shape")) {
			const char *start;

			jp_ws(j);
			start = j->p + 1;
			ok = j->p < j->end && *j->p == '[' && jp_skip(j, 0);
			if (ok) {
				o->has_shape = true;
				o->shape.p = start;
				o->shape.len = (size_t)(j->p - 1 - start);
			}
		} else if (tft_tl_slice_is(key, "unknown_rank")) {
			ok = jp_bool(j, &o->unknown_rank);
		} else if (tft_tl_slice_is(key, "requested_bytes")) {
			ok = jp_int(j, &o->requested);
		} else if (tft_tl_slice_is(key, "allocated_bytes")) {
			ok = jp_int(j, &o->allocated);
		} else if (tft_tl_slice_is(key, "allocator_name")) {
			ok = jp_string(j, &o->allocator);
		} else if (tft_tl_slice_is(key, "allocation_id")) {
			ok = jp_int(j, &o->alloc_id);
		} else if (tft_tl_slice_is(key, "has_single_reference")) {
			ok = jp_bool(j, &o->has_single_ref);
		} else if (tft_tl_slice_is(key, "allocation_description")) {
			o->alloc_present = true;
			ok = jp_skip(j, 1);
		} else if (tft_tl_slice_is(key, "ptr")) {
			int64_t v = 0;

			ok = jp_int(j, &v);
			o->ptr = (uint64_t)v;
			o->has_ptr = v != 0;
		} else {
			ok = jp_skip(j, 1);
		}
		if (!ok)
			return false;
	} while (tft_tl_jp_lit(j, ','));
	return tft_tl_jp_lit(j, '}');
}

/* JSON string escapes of the importer's text, undone (for allocator names). */
size_t tft_tl_json_unescape(struct slice in, char *out, size_t cap)
{
	size_t j = 0;

	for (size_t i = 0; i < in.len && j < cap; i++) {
		char c = in.p[i];

		if (c == '\\' && i + 1 < in.len) {
			c = in.p[++i];
			switch (c) {
			case 'n': c = '\n'; break;
			case 't': c = '\t'; break;
			case 'r': c = '\r'; break;
			case 'b': c = '\b'; break;
			case 'f': c = '\f'; break;
			case 'u': {
				unsigned v = 0;

				for (int k = 0; k < 4 && i + 1 < in.len; k++) {
					char h = in.p[++i];

					v = v * 16 + (unsigned)(h >= 'a' ? h - 'a' + 10 : h >= 'A' ? h - 'A' + 10 : h - '0');
				}
				if (v < 0x80) {
					c = (char)v;
				} else if (v < 0x800 && j + 1 < cap) {
					out[j++] = (char)(0xc0 | (v >> 6));
					c = (char)(0x80 | (v & 0x3f));
				} else if (j + 2 < cap) {
					out[j++] = (char)(0xe0 | (v >> 12));
					out[j++] = (char)(0x80 | ((v >> 6) & 0x3f));
					c = (char)(0x80 | (v & 0x3f));
				}
				break;
			}
			default: break;
			}
		}
		out[j++] = c;
	}
	return j;
}

/* protobuf text_format's string escaping (CEscape), then timeline.py drops the quotes. */
static void text_escape(struct buf *b, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		char e[5];

		switch (c) {
		case '\n': tft_tl_buf_add(b, "\\n", 2); break;
		case '\r': tft_tl_buf_add(b, "\\r", 2); break;
		case '\t': tft_tl_buf_add(b, "\\t", 2); break;
		case '"': tft_tl_buf_add(b, "\\", 1); break; /* the quote itself is removed */
		case '\'': tft_tl_buf_add(b, "\\'", 2); break;
		case '\\': tft_tl_buf_add(b, "\\\\", 2); break;
		default:
			if (c < 0x20 || c >= 0x7f) {
				e[0] = '\\';
				e[1] = (char)('0' + (c >> 6));
				e[2] = (char)('0' + ((c >> 3) & 7));
				e[3] = (char)('0' + (c & 7));
				tft_tl_buf_add(b, e, 4);
			} else {
				tft_tl_buf_add(b, (const char *)&c, 1);
			}
		}
	}
}

/* str(output.tensor_description).replace('"', '') from the importer's JSON. */
void tft_tl_tensor_text(struct buf *b, const struct out_desc *o)
{
	char tmp[512];

	b->len = 0;
	if (o->has_dtype && !(o->dtype_is_name ? tft_tl_slice_is(o->dtype_name, "DT_INVALID") : o->dtype == 0)) {
		tft_tl_buf_cstr(b, "dtype: ");
		if (o->dtype_is_name)
			tft_tl_buf_add(b, o->dtype_name.p, o->dtype_name.len);
		else
			tft_tl_buf_int(b, o->dtype);
		tft_tl_buf_cstr(b, "\n");
	}
	if (o->has_shape) {
		struct jp j = { o->shape.p, o->shape.p + o->shape.len };
		int64_t v;

		tft_tl_buf_cstr(b, "shape {\n");
		while (jp_int(&j, &v)) {
			tft_tl_buf_cstr(b, "  dim {\n");
			if (v) {
				tft_tl_buf_cstr(b, "    size: ");
				tft_tl_buf_int(b, v);
				tft_tl_buf_cstr(b, "\n");
			}
			tft_tl_buf_cstr(b, "  }\n");
			if (!tft_tl_jp_lit(&j, ','))
				break;
		}
		if (o->unknown_rank)
			tft_tl_buf_cstr(b, "  unknown_rank: true\n");
		tft_tl_buf_cstr(b, "}\n");
	}
	if (o->requested || o->allocated || o->allocator.len || o->alloc_id || o->has_single_ref ||
	    o->has_ptr || o->alloc_present) {
		tft_tl_buf_cstr(b, "allocation_description {\n");
		if (o->requested) {
			tft_tl_buf_cstr(b, "  requested_bytes: ");
			tft_tl_buf_int(b, o->requested);
			tft_tl_buf_cstr(b, "\n");
		}
		if (o->allocated) {
			tft_tl_buf_cstr(b, "  allocated_bytes: ");
			tft_tl_buf_int(b, o->allocated);
			tft_tl_buf_cstr(b, "\n");
		}
		if (o->allocator.len) {
			tft_tl_buf_cstr(b, "  allocator_name: ");
			text_escape(b, tmp, tft_tl_json_unescape(o->allocator, tmp, sizeof(tmp)));
			tft_tl_buf_cstr(b, "\n");
		}
		if (o->alloc_id) {
			tft_tl_buf_cstr(b, "  allocation_id: ");
			tft_tl_buf_int(b, o->alloc_id);
			tft_tl_buf_cstr(b, "\n");
		}
		if (o->has_single_ref)
			tft_tl_buf_cstr(b, "  has_single_reference: true\n");
		if (o->has_ptr) {
			char u[24];

			tft_tl_buf_cstr(b, "  ptr: ");
			tft_tl_buf_add(b, u, tft_json_fmt_uint(u, o->ptr));
			tft_tl_buf_cstr(b, "\n");
		}
		tft_tl_buf_cstr(b, "}\n");
	}
}
