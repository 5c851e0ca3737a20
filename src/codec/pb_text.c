/* SPDX-License-Identifier: MIT */
/*
 * Protobuf text-format reader: a small lexer plus a recursive parser that
 * hands values to the wire reader's field tables and handlers.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codec/pb_text.h"
#include "core/arena.h"
#include "core/ascii.h"

struct text_state {
	struct tft_arena strs; /* the values' decoded strings */
};

struct lex {
	struct tft_pb_dec *d; /* borrowed */
	const uint8_t *p, *end; /* borrowed: inside d->base */
};

static int text_decode_sub(const struct tft_pb_sub *s, const struct tft_pb_msg *m, void *out,
			   void *ctx);

int tft_pb_text_init(struct tft_pb_dec *d, const uint8_t *data, size_t len, struct tft_error *err)
{
	struct text_state *ts;

	tft_pb_wire_init(d, data, len, err);
	ts = calloc(1, sizeof(*ts));
	if (!ts)
		return tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
	d->text = ts;
	d->decode_text_sub = text_decode_sub;
	return 0;
}

void tft_pb_text_fini(struct tft_pb_dec *d)
{
	struct text_state *ts = d->text;

	if (!ts)
		return;
	tft_arena_free(&ts->strs);
	free(ts);
	d->text = NULL;
}

static inline int64_t off_of(const struct lex *l, const uint8_t *p)
{
	return (int64_t)(p - l->d->base);
}

static int fail_at(struct lex *l, const uint8_t *at, const char *what)
{
	return tft_pb_wire_fail(l->d, TFT_EFORMAT, off_of(l, at), "%s", what);
}

/*
 * "expected WHAT WHERE" at `at`; where the input ends, "expected WHAT
 * before the end of the input" (a cut file says so).
 */
static int fail_expect(struct lex *l, const uint8_t *at, const char *what, const char *where)
{
	if (at >= l->end)
		return tft_pb_wire_fail(l->d, TFT_EFORMAT, off_of(l, l->end),
					"expected %s before the end of the input", what);
	return tft_pb_wire_fail(l->d, TFT_EFORMAT, off_of(l, at), "expected %s%s", what, where);
}

static void skip_ws(struct lex *l)
{
	const uint8_t *p = l->p, *end = l->end;

	while (p < end) {
		uint8_t c = *p;

		if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
			p++;
		} else if (c == '#') {
			while (p < end && *p != '\n')
				p++;
		} else {
			break;
		}
	}
	l->p = p;
}

static inline int is_ident_start(uint8_t c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static inline int is_ident_char(uint8_t c)
{
	return is_ident_start(c) || (c >= '0' && c <= '9');
}

static inline int is_digit(uint8_t c)
{
	return c >= '0' && c <= '9';
}

/* Identifier at l->p (after whitespace); length 0 if none. */
static size_t read_ident(struct lex *l, const uint8_t **start)
{
	const uint8_t *p = l->p;

	*start = p;
	if (p >= l->end || !is_ident_start(*p))
		return 0;
	while (p < l->end && is_ident_char(*p))
		p++;
	l->p = p;
	return (size_t)(p - *start);
}

/* A number-ish token: [-]?[0-9A-Za-z_.]+ with exponent signs. */
static size_t read_number_token(struct lex *l, const uint8_t **start)
{
	const uint8_t *p = l->p;
	int hex = 0;

	*start = p;
	if (p < l->end && (*p == '-' || *p == '+'))
		p++;
	if (l->end - p >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		hex = 1;
	while (p < l->end) {
		uint8_t c = *p;

		if (is_ident_char(c) || c == '.') {
			p++;
		} else if ((c == '-' || c == '+') && !hex && p > *start &&
			   (p[-1] == 'e' || p[-1] == 'E')) {
			p++;
		} else {
			break;
		}
	}
	l->p = p;
	return (size_t)(p - *start);
}

static size_t put_utf8(uint8_t *o, uint32_t cp)
{
	if (cp < 0x80) {
		o[0] = (uint8_t)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (uint8_t)(0xC0 | (cp >> 6));
		o[1] = (uint8_t)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (uint8_t)(0xE0 | (cp >> 12));
		o[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
		o[2] = (uint8_t)(0x80 | (cp & 0x3F));
		return 3;
	}
	o[0] = (uint8_t)(0xF0 | (cp >> 18));
	o[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
	o[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
	o[3] = (uint8_t)(0x80 | (cp & 0x3F));
	return 4;
}

/*
 * Scan one quoted literal at l->p. On success l->p is past the closing
 * quote, body/blen span the raw body and *escapes says whether it holds a
 * backslash.
 */
static int scan_string(struct lex *l, const uint8_t **body, size_t *blen, int *escapes)
{
	const uint8_t *start = l->p, *p = l->p + 1;
	uint8_t q = *start;

	*escapes = 0;
	while (p < l->end && *p != q) {
		if (*p == '\n')
			return fail_at(l, p, "newline inside a string literal (expected the closing quote)");
		if (*p == '\\') {
			*escapes = 1;
			p++;
			if (p >= l->end)
				break;
		}
		p++;
	}
	if (p >= l->end)
		return tft_pb_wire_fail(l->d, TFT_EFORMAT, off_of(l, l->end),
					"expected '%c' before the end of the input (the string opened at "
					"byte %lld)",
					q, (long long)off_of(l, start));
	*body = start + 1;
	*blen = (size_t)(p - (start + 1));
	l->p = p + 1;
	return 0;
}

/* Unescape body[0..n) into out (>= n bytes); returns the length or -1 with *bad set. */
static long unescape(const uint8_t *s, size_t n, uint8_t *out, const uint8_t **bad)
{
	size_t i = 0, o = 0;

	while (i < n) {
		uint8_t c = s[i];

		if (c != '\\') {
			out[o++] = c;
			i++;
			continue;
		}
		*bad = s + i;
		if (++i >= n)
			return -1;
		c = s[i++];
		switch (c) {
		case 'a': out[o++] = '\a'; break;
		case 'b': out[o++] = '\b'; break;
		case 'f': out[o++] = '\f'; break;
		case 'n': out[o++] = '\n'; break;
		case 'r': out[o++] = '\r'; break;
		case 't': out[o++] = '\t'; break;
		case 'v': out[o++] = '\v'; break;
		case '\\': case '\'': case '"': case '?':
			out[o++] = c;
			break;
		case 'x': case 'X': {
			int v = 0, k = 0;

			while (k < 2 && i < n && tft_hexval(s[i]) >= 0) {
				v = v * 16 + tft_hexval(s[i++]);
				k++;
			}
			if (!k)
				return -1;
			out[o++] = (uint8_t)v;
			break;
		}
		case 'u': case 'U': {
			int want = c == 'u' ? 4 : 8;
			uint32_t cp = 0;

			for (int k = 0; k < want; k++) {
				if (i >= n || tft_hexval(s[i]) < 0)
					return -1;
				cp = cp * 16 + (uint32_t)tft_hexval(s[i++]);
			}
			if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
				return -1;
			/* An escape is >= 6 input bytes and <= 4 output bytes: fits. */
			o += put_utf8(out + o, cp);
			break;
		}
		default:
			if (c >= '0' && c <= '7') {
				int v = c - '0', k = 1;

				while (k < 3 && i < n && s[i] >= '0' && s[i] <= '7') {
					v = v * 8 + (s[i++] - '0');
					k++;
				}
				if (v > 255)
					return -1;
				out[o++] = (uint8_t)v;
			} else {
				return -1;
			}
		}
	}
	return (long)o;
}

/* One or more adjacent string literals -> v->p, v->len (borrowed or arena). */
static int parse_string_value(struct lex *l, struct tft_pb_val *v)
{
	struct text_state *ts = l->d->text;
	const uint8_t *body, *first_body = NULL;
	size_t blen, total = 0, first_len = 0;
	int esc, any_esc = 0, count = 0, r;
	struct lex save;
	uint8_t *buf, *o;

	v->offset = off_of(l, l->p);
	save = *l;
	/* Pass 1: find the literals and the raw size. */
	while (l->p < l->end && (*l->p == '"' || *l->p == '\'')) {
		r = scan_string(l, &body, &blen, &esc);
		if (r)
			return r;
		if (!count) {
			first_body = body;
			first_len = blen;
		}
		any_esc |= esc;
		total += blen;
		count++;
		skip_ws(l);
	}
	if (!count)
		return fail_at(l, l->p, "expected a string literal");
	if (count == 1 && !any_esc) {
		v->p = first_body;
		v->len = first_len;
		return 0;
	}
	buf = tft_arena_alloc(&ts->strs, total + 1);
	if (!buf)
		return tft_pb_wire_fail(l->d, TFT_ENOMEM, -1, "out of memory");
	o = buf;
	*l = save;
	while (l->p < l->end && (*l->p == '"' || *l->p == '\'')) {
		const uint8_t *bad = l->p;
		long n;

		scan_string(l, &body, &blen, &esc);
		n = unescape(body, blen, o, &bad);
		if (n < 0)
			return fail_at(l, bad, "invalid escape sequence in string literal");
		o += n;
		skip_ws(l);
	}
	*o = '\0';
	v->p = buf;
	v->len = (size_t)(o - buf);
	return 0;
}

static int tok_eq(const uint8_t *s, size_t n, const char *lit)
{
	size_t k = strlen(lit);

	return n == k && memcmp(s, lit, k) == 0;
}

static int tok_ieq(const uint8_t *s, size_t n, const char *lit)
{
	size_t k = strlen(lit);

	if (n != k)
		return 0;
	for (size_t i = 0; i < k; i++) {
		uint8_t c = s[i];

		if (c >= 'A' && c <= 'Z')
			c = (uint8_t)(c - 'A' + 'a');
		if (c != (uint8_t)lit[i])
			return 0;
	}
	return 1;
}

/* Parse an integer token (decimal, 0x hex, 0 octal, optional sign). */
static int parse_int_token(const uint8_t *s, size_t n, int *neg, uint64_t *mag)
{
	size_t i = 0;
	uint64_t v = 0;
	unsigned base = 10;

	*neg = 0;
	if (i < n && (s[i] == '-' || s[i] == '+')) {
		*neg = s[i] == '-';
		i++;
	}
	if (i >= n)
		return -1;
	if (n - i >= 2 && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
		base = 16;
		i += 2;
		if (i >= n)
			return -1;
	} else if (n - i >= 2 && s[i] == '0') {
		base = 8;
		i++;
	}
	for (; i < n; i++) {
		int dv = tft_hexval(s[i]);

		if (dv < 0 || (unsigned)dv >= base)
			return -1;
		if (v > (UINT64_MAX - (uint64_t)dv) / base)
			return -2;
		v = v * base + (uint64_t)dv;
	}
	*mag = v;
	return 0;
}

static int parse_float_token(const uint8_t *s, size_t n, double *out)
{
	char buf[80];
	char *endp;
	size_t i = 0;
	int neg = 0;

	if (n && (s[0] == '-' || s[0] == '+')) {
		neg = s[0] == '-';
		i = 1;
	}
	if (tok_ieq(s + i, n - i, "inf") || tok_ieq(s + i, n - i, "infinity") ||
	    tok_ieq(s + i, n - i, "inff") || tok_ieq(s + i, n - i, "infinityf")) {
		*out = neg ? -INFINITY : INFINITY;
		return 0;
	}
	if (tok_ieq(s + i, n - i, "nan") || tok_ieq(s + i, n - i, "nanf")) {
		*out = NAN;
		return 0;
	}
	if (n && (s[n - 1] == 'f' || s[n - 1] == 'F') &&
	    !(n > 2 && (s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X'))))
		n--;
	if (n == 0 || n >= sizeof(buf))
		return -1;
	/* Hex integers are valid float values in text format. */
	if (n - i > 2 && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
		int ineg;
		uint64_t mag;

		if (parse_int_token(s, n, &ineg, &mag))
			return -1;
		*out = ineg ? -(double)mag : (double)mag;
		return 0;
	}
	for (size_t k = i; k < n; k++) {
		uint8_t c = s[k];

		if (!(is_digit(c) || c == '.' || c == 'e' || c == 'E' || c == '-' || c == '+'))
			return -1;
	}
	memcpy(buf, s, n);
	buf[n] = '\0';
	errno = 0;
	*out = strtod(buf, &endp);
	if (endp != buf + n)
		return -1;
	return 0;
}

static int64_t enum_lookup(const struct tft_pb_enum *e, const uint8_t *s, size_t n)
{
	if (!e)
		return -1;
	for (uint32_t i = 0; i < e->n; i++)
		if (tok_eq(s, n, e->vals[i].name))
			return e->vals[i].value;
	if (e->lookup)
		return e->lookup((const char *)s, n);
	return -1;
}

/* Parse one scalar of f->kind at l->p into v. */
static int parse_scalar(struct lex *l, const struct tft_pb_field *f, struct tft_pb_val *v)
{
	const uint8_t *tok;
	size_t n;
	int kind = f->kind;

	if (kind == TFT_PB_STRING || kind == TFT_PB_BYTES)
		return parse_string_value(l, v);
	v->offset = off_of(l, l->p);
	v->p = NULL;
	v->len = 0;
	n = read_number_token(l, &tok);
	if (!n)
		return fail_expect(l, l->p, "a value", "");
	switch (kind) {
	case TFT_PB_FLOAT:
	case TFT_PB_DOUBLE:
		if (parse_float_token(tok, n, &v->n.d))
			return fail_at(l, tok, "expected a floating-point number");
		if (kind == TFT_PB_FLOAT)
			v->n.d = (float)v->n.d;
		return 0;
	case TFT_PB_BOOL:
		if (tok_eq(tok, n, "true") || tok_eq(tok, n, "True") || tok_eq(tok, n, "t") ||
		    tok_eq(tok, n, "1")) {
			v->n.i = 1;
			return 0;
		}
		if (tok_eq(tok, n, "false") || tok_eq(tok, n, "False") || tok_eq(tok, n, "f") ||
		    tok_eq(tok, n, "0")) {
			v->n.i = 0;
			return 0;
		}
		return fail_at(l, tok, "expected true or false");
	case TFT_PB_ENUM:
		if (is_ident_start(tok[0])) {
			int64_t e = enum_lookup(f->aux, tok, n);

			if (e < 0 || e > INT32_MAX)
				return tft_pb_wire_fail(l->d, TFT_EFORMAT, off_of(l, tok),
							"unknown enum value '%.*s'", (int)(n > 64 ? 64 : n),
							(const char *)tok);
			v->n.i = e;
			return 0;
		}
		break;
	default:
		break;
	}
	/* Integer kinds (and numeric enums). */
	{
		int neg, r;
		uint64_t mag;
		int is_signed = kind == TFT_PB_INT32 || kind == TFT_PB_INT64 || kind == TFT_PB_SINT32 ||
				kind == TFT_PB_SINT64 || kind == TFT_PB_SFIXED32 ||
				kind == TFT_PB_SFIXED64 || kind == TFT_PB_ENUM;
		int is32 = kind == TFT_PB_INT32 || kind == TFT_PB_SINT32 || kind == TFT_PB_SFIXED32 ||
			   kind == TFT_PB_ENUM || kind == TFT_PB_UINT32 || kind == TFT_PB_FIXED32;

		r = parse_int_token(tok, n, &neg, &mag);
		if (r == -2)
			return fail_at(l, tok, "integer out of range");
		if (r)
			return fail_at(l, tok, "expected an integer");
		if (is_signed) {
			uint64_t lim = is32 ? (uint64_t)INT32_MAX : (uint64_t)INT64_MAX;

			if (mag > lim + (uint64_t)neg)
				return fail_at(l, tok, "integer out of range");
			v->n.i = neg ? (int64_t)(0 - mag) : (int64_t)mag;
		} else {
			if (neg && mag)
				return fail_at(l, tok, "negative value for an unsigned field");
			if (is32 && mag > UINT32_MAX)
				return fail_at(l, tok, "integer out of range");
			v->n.u = mag;
		}
	}
	return 0;
}

/* Skip a scalar value of an unknown field. */
static int skip_scalar(struct lex *l)
{
	const uint8_t *tok;

	if (l->p < l->end && (*l->p == '"' || *l->p == '\'')) {
		const uint8_t *body;
		size_t blen;
		int esc;

		while (l->p < l->end && (*l->p == '"' || *l->p == '\'')) {
			int r = scan_string(l, &body, &blen, &esc);

			if (r)
				return r;
			skip_ws(l);
		}
		return 0;
	}
	if (!read_number_token(l, &tok))
		return fail_expect(l, l->p, "a value", "");
	return 0;
}

/*
 * Blocks a skip may scan nested: only for matching '{'/'<' with their closing
 * char. What is parsed is bounded by max_depth where it is descended into
 * (text_decode_sub), so unparsed content (an unknown field, a field the
 * table drops) may nest deeper, as a binary message's bytes may.
 */
#define SKIP_MAX_LEVELS 4096

/*
 * Find the end of the block opening at l->p ('{' or '<'), honouring nested
 * blocks, lists, strings and comments. l->p ends after the closing char.
 */
static int skip_block(struct lex *l)
{
	uint64_t stack[SKIP_MAX_LEVELS / 64]; /* bit i: level i was opened with '<' */
	uint32_t level = 0;
	const uint8_t *start = l->p;

	while (l->p < l->end) {
		uint8_t c = *l->p;

		if (c == '{' || c == '<') {
			if (level >= SKIP_MAX_LEVELS)
				return tft_pb_wire_fail(l->d, TFT_EFORMAT, off_of(l, l->p),
							"messages nested deeper than %u",
							SKIP_MAX_LEVELS);
			if (c == '<')
				stack[level / 64] |= 1ull << (level % 64);
			else
				stack[level / 64] &= ~(1ull << (level % 64));
			level++;
			l->p++;
		} else if (c == '}' || c == '>') {
			int want_angle;

			if (!level)
				return fail_at(l, l->p, "unbalanced closing bracket");
			want_angle = (stack[(level - 1) / 64] >> ((level - 1) % 64)) & 1;
			if ((c == '>') != want_angle)
				return fail_at(l, l->p, want_angle ? "expected '>'" : "expected '}'");
			level--;
			l->p++;
			if (!level)
				return 0;
		} else if (c == '"' || c == '\'') {
			const uint8_t *body;
			size_t blen;
			int esc, r = scan_string(l, &body, &blen, &esc);

			if (r)
				return r;
		} else if (c == '#') {
			while (l->p < l->end && *l->p != '\n')
				l->p++;
		} else {
			l->p++;
		}
	}
	/*
	 * Where the input ends is where the problem is (a cut file): the byte
	 * the block opened at is only a hint, and the innermost open level says
	 * which bracket is missing.
	 */
	return tft_pb_wire_fail(l->d, TFT_EFORMAT, off_of(l, l->end),
				"expected '%c' before the end of the input (the message opened at byte "
				"%lld)",
				((stack[(level - 1) / 64] >> ((level - 1) % 64)) & 1) ? '>' : '}',
				(long long)off_of(l, start));
}

static int parse_fields(struct lex *l, const struct tft_pb_msg *m, void *out, void *ctx,
			const uint8_t *open);

/* The value of field f: the message block [at, end), the field's (*count)-th. */
static void block_val(struct lex *l, const struct tft_pb_field *f, const uint8_t *at,
		      const uint8_t *end, uint32_t *count, struct tft_pb_val *v)
{
	memset(v, 0, sizeof(*v));
	v->offset = off_of(l, at);
	v->index = (*count)++;
	v->p = at;
	v->len = (size_t)(end - at);
	v->sub.dec = l->d;
	v->sub.p = at;
	v->sub.len = v->len;
	v->sub.name = f->name;
	v->sub.index = (f->flags & TFT_PB_F_REPEATED) ? v->index : TFT_PB_SINGULAR;
}

/*
 * A block skip_block() could not close (the input cut short, a bracket lost
 * or mismatched, a string not closed). The scan's error gives the outer
 * field's path, and for a cut file the end of the input: inside a large
 * RunMetadata that is `step_stats` whatever was cut. So the block is handed
 * on as if it ran to the end of the input, and parsed as usual where the
 * handler descends into it: the parse stops at the first real problem
 * with the innermost message's path (`step_stats.dev_stats[2].node_stats[7]:
 * expected '}' before the end of the input`). The earlier of the two errors
 * is reported (the parse's when they agree); the scan's stands when the
 * handler does not descend. Only on failure, and each open level scans the
 * rest of the input once more, as skip_block() already did: linear.
 */
static int unclosed_block(struct lex *l, const struct tft_pb_field *f, const uint8_t *at,
			  uint32_t *count, void *out, void *ctx, int scan_r)
{
	struct tft_error *err = l->d->err;
	struct tft_error scan;
	struct tft_pb_val v;
	int r;

	if (!err || err->code == TFT_OK)
		return scan_r; /* no message to improve */
	scan = *err;
	err->code = TFT_OK;
	err->msg[0] = '\0';
	block_val(l, f, at, l->end, count, &v);
	r = tft_pb_deliver(l->d, f, &v, out, ctx);
	if (err->code != TFT_EFORMAT || err->offset < 0 || err->offset > scan.offset) {
		*err = scan;
		return scan_r;
	}
	return r ? r : TFT_EFORMAT;
}

/* One element of a field's value: a message block or a scalar. */
static int parse_value(struct lex *l, const struct tft_pb_field *f, uint32_t *count, void *out,
		       void *ctx, int have_colon)
{
	struct tft_pb_val v;
	const uint8_t *at = l->p;
	int r;

	memset(&v, 0, sizeof(v));
	if (at < l->end && (*at == '{' || *at == '<')) {
		if (f && f->kind != TFT_PB_MESSAGE)
			return tft_pb_wire_fail(l->d, TFT_EFORMAT, off_of(l, at),
						"field %s is not a message (expected a value)", f->name);
		r = skip_block(l);
		if (r && f && r == TFT_EFORMAT)
			return unclosed_block(l, f, at, count, out, ctx, r);
		if (r || !f)
			return r;
		block_val(l, f, at, l->p, count, &v);
		return tft_pb_deliver(l->d, f, &v, out, ctx);
	}
	if (!have_colon)
		return fail_expect(l, at, "':' or '{'", " after the field name");
	if (!f)
		return skip_scalar(l);
	if (f->kind == TFT_PB_MESSAGE)
		return tft_pb_wire_fail(l->d, TFT_EFORMAT, off_of(l, at),
					"field %s is a message (expected '{')", f->name);
	r = parse_scalar(l, f, &v);
	if (r)
		return r;
	v.index = (*count)++;
	return tft_pb_deliver(l->d, f, &v, out, ctx);
}

/*
 * The fields of a message up to its closing bracket, or of the whole
 * document up to the end of the input (open NULL: no bracket). `open` is
 * the message's opening '{' or '<'.
 */
static int parse_fields(struct lex *l, const struct tft_pb_msg *m, void *out, void *ctx,
			const uint8_t *open)
{
	uint8_t close = !open ? 0 : *open == '{' ? '}' : '>';
	uint32_t counts[TFT_PB_MAX_FIELDS];
	uint32_t nf = m->nfields < TFT_PB_MAX_FIELDS ? m->nfields : TFT_PB_MAX_FIELDS;
	uint64_t has = 0;
	int r;

	memset(counts, 0, nf * sizeof(counts[0]));
	for (;;) {
		const struct tft_pb_field *f = NULL;
		const uint8_t *name, *at;
		size_t nlen;
		uint32_t fi = 0, dummy = 0;
		int colon = 0;

		l->d->cur_field = NULL;
		skip_ws(l);
		at = l->p;
		if (l->p >= l->end) {
			if (close)
				return tft_pb_wire_fail(l->d, TFT_EFORMAT, off_of(l, l->p),
							"expected '%c' before the end of the input (the "
							"message opened at byte %lld)",
							close, (long long)off_of(l, open));
			break;
		}
		if (close && *l->p == close) { /* (the document has no closing byte: a NUL is an error) */
			l->p++;
			break;
		}
		if (close && (*l->p == '}' || *l->p == '>')) /* the other bracket */
			return tft_pb_wire_fail(l->d, TFT_EFORMAT, off_of(l, l->p),
						"expected '%c' (the message opened at byte %lld)", close,
						(long long)off_of(l, open));
		if (*l->p == '[') {
			/* Extension or Any type URL: skipped. */
			while (l->p < l->end && *l->p != ']' && *l->p != '\n')
				l->p++;
			if (l->p >= l->end || *l->p != ']')
				return fail_expect(l, l->p, "']'", " after an extension name");
			l->p++;
		} else {
			nlen = read_ident(l, &name);
			if (!nlen)
				return fail_at(l, at, close ? "expected a field name or the end of the message"
							    : "expected a field name");
			f = tft_pb_wire_field_by_name(m, (const char *)name, nlen);
			if (f) {
				fi = (uint32_t)(f - m->fields);
				if (fi >= nf)
					f = NULL;
			}
		}
		l->d->cur_field = f ? f->name : NULL;
		l->d->cur_index = (f && (f->flags & TFT_PB_F_REPEATED)) ? counts[fi] : TFT_PB_SINGULAR;
		skip_ws(l);
		if (l->p < l->end && *l->p == ':') {
			colon = 1;
			l->p++;
			skip_ws(l);
		}
		if (l->p < l->end && *l->p == '[') {
			/* List of values. */
			if (!colon && !(f && f->kind == TFT_PB_MESSAGE) && f)
				return fail_at(l, l->p, "expected ':' before a list of scalars");
			l->p++;
			skip_ws(l);
			if (l->p < l->end && *l->p == ']') {
				l->p++;
			} else {
				for (;;) {
					r = parse_value(l, f, f ? &counts[fi] : &dummy, out, ctx, 1);
					if (r)
						return r;
					l->d->cur_field = f ? f->name : NULL;
					l->d->cur_index = (f && (f->flags & TFT_PB_F_REPEATED)) ? counts[fi]
												 : TFT_PB_SINGULAR;
					skip_ws(l);
					if (l->p < l->end && *l->p == ',') {
						l->p++;
						skip_ws(l);
						continue;
					}
					if (l->p < l->end && *l->p == ']') {
						l->p++;
						break;
					}
					return fail_expect(l, l->p, "',' or ']'", " in a list");
				}
			}
		} else {
			r = parse_value(l, f, f ? &counts[fi] : &dummy, out, ctx, colon);
			if (r)
				return r;
		}
		if (f)
			has |= 1ull << fi;
		skip_ws(l);
		if (l->p < l->end && (*l->p == ',' || *l->p == ';'))
			l->p++;
	}
	l->d->cur_field = NULL;
	if (out && m->has_offset != TFT_PB_NOOFF) {
		uint64_t old;

		memcpy(&old, (char *)out + m->has_offset, sizeof(old));
		old |= has;
		memcpy((char *)out + m->has_offset, &old, sizeof(old));
	}
	return 0;
}

static int text_decode_sub(const struct tft_pb_sub *s, const struct tft_pb_msg *m, void *out,
			   void *ctx)
{
	struct tft_pb_dec *d = s->dec;
	const char *saved = d->cur_field;
	uint32_t saved_index = d->cur_index;
	struct lex l;
	int r;

	l.d = d;
	if (!s->name && s->p == d->base && s->len == d->size) {
		/* The whole document: fields without braces. */
		l.p = s->p;
		l.end = s->p + s->len;
		return parse_fields(&l, m, out, ctx, NULL);
	}
	if (!s->len || (s->p[0] != '{' && s->p[0] != '<'))
		return tft_pb_wire_fail(d, TFT_EFORMAT, s->p - d->base, "expected '{'");
	if (d->depth >= d->max_depth)
		return tft_pb_wire_fail(d, TFT_EFORMAT, s->p - d->base, "messages nested deeper than %u",
					d->max_depth);
	d->path[d->depth].name = s->name;
	d->path[d->depth].index = s->index;
	d->depth++;
	l.p = s->p + 1;
	l.end = s->p + s->len;
	r = parse_fields(&l, m, out, ctx, s->p);
	if (!r && l.p != l.end)
		r = tft_pb_wire_fail(d, TFT_EFORMAT, l.p - d->base, "trailing text after the message");
	d->depth--;
	d->cur_field = saved;
	d->cur_index = saved_index;
	return r;
}

int tft_pb_dec_init(struct tft_pb_dec *d, int text, const uint8_t *data, size_t len, struct tft_error *err)
{
	int r;

	if (!text) {
		tft_pb_wire_init(d, data, len, err);
		return 0;
	}
	r = tft_pb_text_init(d, data, len, err);
	if (r)
		tft_pb_text_fini(d);
	return r;
}

int tft_pb_text_decode(struct tft_pb_dec *d, const struct tft_pb_msg *m, void *out, void *ctx)
{
	struct tft_pb_sub s = {d, d->base, d->size, NULL, TFT_PB_SINGULAR};

	if (!d->text)
		return tft_pb_wire_fail(d, TFT_EINVAL, -1, "decoder not set up for text input");
	return text_decode_sub(&s, m, out, ctx);
}
