/* SPDX-License-Identifier: MIT */
/*
 * Streaming JSON pull parser: a window over a byte source, SSE2/SWAR scans
 * for string ends and brackets, hand-written number conversions, and the
 * mark/refill/replay protocol described in json_read.h.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "codec/json_read.h"
#include "core/ascii.h"

/* The per-token paths are folded into each public entry point. */
#define HOT static inline __attribute__((always_inline))

#define JL_ARRAY 1u /* this level is an array (else an object) */
#define JL_ITEM 2u  /* a member / element was seen at this level */

#define DEFAULT_BLOCK (4u << 20)
#define DEFAULT_MAX_BUFFER (256u << 20)
#define SCRATCH_MIN (64u << 10)

struct tft_json_scratch {
	struct tft_json_scratch *next; /* owned; older block */
	size_t cap, used;
	char data[];
};

/* JSON insignificant whitespace; buf[len] holds a '\0' sentinel that is not. */
static const unsigned char is_ws[256] = {
	[' '] = 1, ['\t'] = 1, ['\n'] = 1, ['\r'] = 1,
};

/* Bytes that may appear in a number token. */
static const unsigned char is_numch[256] = {
	['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1, ['6'] = 1,
	['7'] = 1, ['8'] = 1, ['9'] = 1, ['-'] = 1, ['+'] = 1, ['.'] = 1, ['e'] = 1, ['E'] = 1,
};

/* ---- errors ----------------------------------------------------------- */

__attribute__((format(printf, 4, 5), cold)) static int fail(struct tft_json_reader *r,
							    struct tft_error *err, size_t at,
							    const char *fmt, ...)
{
	char msg[TFT_ERROR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	tft_error_set(err, TFT_EFORMAT, (int64_t)(r->base + at), "%s", msg);
	if (r->src)
		tft_error_set_file(err, tft_source_name(r->src));
	return TFT_EFORMAT;
}

/* The window ended: ask for more, or fail at end of input. */
static int more_or_eof(struct tft_json_reader *r, struct tft_error *err, const char *expected)
{
	if (!r->eof)
		return TFT_JSON_MORE;
	return fail(r, err, r->len, "unexpected end of input: expected %s", expected);
}

/* ---- scratch for decoded strings --------------------------------------- */

/* (Not core/arena: reset per document, keeping its newest, largest block, and its blocks double.) */

static char *scratch_alloc(struct tft_json_reader *r, size_t n)
{
	struct tft_json_scratch *b = r->scratch;

	if (!b || b->cap - b->used < n) {
		size_t cap = SCRATCH_MIN;
		if (b && b->cap * 2 > cap)
			cap = b->cap * 2;
		if (cap < n)
			cap = n;
		struct tft_json_scratch *nb = malloc(sizeof(*nb) + cap);
		if (!nb)
			return NULL;
		nb->next = b;
		nb->cap = cap;
		nb->used = 0;
		r->scratch = b = nb;
	}
	char *p = b->data + b->used;
	b->used += n;
	return p;
}

/* Keep the newest (largest) block, free the others. */
static void scratch_reset(struct tft_json_reader *r)
{
	struct tft_json_scratch *b = r->scratch;

	if (!b)
		return;
	for (struct tft_json_scratch *o = b->next, *n; o; o = n) {
		n = o->next;
		free(o);
	}
	b->next = NULL;
	b->used = 0;
	r->decoded = 0;
}

/* ---- scanning ----------------------------------------------------------- */

/* First '"' or '\\' in [p, e), or e. May read up to 15 bytes past e (pad). */
static inline const char *find_quote_or_bs(const char *p, const char *e)
{
#if defined(__SSE2__)
	const __m128i q = _mm_set1_epi8('"'), bs = _mm_set1_epi8('\\');
	while (p < e) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
		unsigned m = (unsigned)_mm_movemask_epi8(
			_mm_or_si128(_mm_cmpeq_epi8(v, q), _mm_cmpeq_epi8(v, bs)));
		if (m) {
			const char *h = p + __builtin_ctz(m);
			return h < e ? h : e;
		}
		p += 16;
	}
	return e;
#else
	const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
	while (p + 8 <= e) {
		uint64_t w, a, b;
		memcpy(&w, p, 8);
		a = w ^ (ones * '"');
		b = w ^ (ones * '\\');
		a = (a - ones) & ~a & highs;
		b = (b - ones) & ~b & highs;
		if (a | b)
			break;
		p += 8;
	}
	while (p < e && *p != '"' && *p != '\\')
		p++;
	return p;
#endif
}

/* First of '"' '{' '}' '[' ']' in [p, e), or e. */
static inline const char *find_structural(const char *p, const char *e)
{
#if defined(__SSE2__)
	const __m128i q = _mm_set1_epi8('"'), ob = _mm_set1_epi8('{'), cb = _mm_set1_epi8('}');
	const __m128i os = _mm_set1_epi8('['), cs = _mm_set1_epi8(']');
	while (p < e) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
		__m128i m1 = _mm_or_si128(_mm_cmpeq_epi8(v, q), _mm_cmpeq_epi8(v, ob));
		__m128i m2 = _mm_or_si128(_mm_cmpeq_epi8(v, cb), _mm_cmpeq_epi8(v, os));
		unsigned m = (unsigned)_mm_movemask_epi8(
			_mm_or_si128(_mm_or_si128(m1, m2), _mm_cmpeq_epi8(v, cs)));
		if (m) {
			const char *h = p + __builtin_ctz(m);
			return h < e ? h : e;
		}
		p += 16;
	}
	return e;
#else
	while (p < e && *p != '"' && *p != '{' && *p != '}' && *p != '[' && *p != ']')
		p++;
	return p;
#endif
}

/* First non-whitespace byte from p (the '\0' sentinel at buf[len] stops it). */
static inline const unsigned char *ws_scan(const unsigned char *p)
{
#if defined(__SSE2__)
	const __m128i sp = _mm_set1_epi8(' '), nl = _mm_set1_epi8('\n');
	const __m128i cr = _mm_set1_epi8('\r'), tb = _mm_set1_epi8('\t');
	for (;;) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
		__m128i w = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, sp), _mm_cmpeq_epi8(v, nl)),
					 _mm_or_si128(_mm_cmpeq_epi8(v, cr), _mm_cmpeq_epi8(v, tb)));
		unsigned m = (unsigned)_mm_movemask_epi8(w) ^ 0xffffu;
		if (m)
			return p + __builtin_ctz(m);
		p += 16;
	}
#else
	while (is_ws[*p])
		p++;
	return p;
#endif
}

/* Skip whitespace; the next byte, or -1 at the end of the window. */
HOT int ws_skip(struct tft_json_reader *r)
{
	const unsigned char *p = (const unsigned char *)r->buf + r->pos;

	if (tft_unlikely(is_ws[*p])) {
		if (!is_ws[p[1]])
			p++;
		else
			p = ws_scan(p + 2);
	}
	r->pos = (size_t)((const char *)p - r->buf);
	return r->pos < r->len ? *p : -1;
}

/* ---- setup -------------------------------------------------------------- */

static void set_mark(struct tft_json_reader *r)
{
	r->mark_pos = r->pos;
	r->mark_depth = r->depth;
	r->mark_level = r->level[r->depth];
}

void tft_json_mark(struct tft_json_reader *r)
{
	set_mark(r);
	scratch_reset(r);
}

/* The window must grow (the unit from the mark fills it): the new capacity, 0 on failure. */
static size_t grown_cap(struct tft_json_reader *r, struct tft_error *err)
{
	if (r->cap >= r->max_buffer) {
		size_t at = r->mark_pos; /* report where the oversized value starts */
		while (at < r->len && is_ws[(unsigned char)r->buf[at]])
			at++;
		fail(r, err, at, "JSON value larger than the buffer limit (%zu bytes)", r->max_buffer);
		return 0;
	}
	return r->cap * 2 > r->max_buffer ? r->max_buffer : r->cap * 2;
}

/* The window was refilled: rewind to the mark (now at 0). */
static void rewind_to_mark(struct tft_json_reader *r)
{
	r->buf[r->len] = '\0'; /* sentinel for ws_skip() and number scans */
	r->pos = 0;
	r->depth = r->mark_depth;
	r->level[r->depth] = r->mark_level;
	scratch_reset(r);
}

/* Read into the window (the kept bytes are at its start), then rewind to the mark. */
static int fill_window(struct tft_json_reader *r, struct tft_error *err)
{
	while (r->len < r->cap && !r->eof) {
		size_t got;
		int rc = tft_source_read(r->src, r->buf + r->len, r->cap - r->len, &got, err);
		if (rc)
			return rc;
		if (got == 0)
			r->eof = true;
		r->len += got;
	}
	rewind_to_mark(r);
	return 0;
}

/* A whole document in memory (tft_json_reader_init_mem): nothing to read, rewind only. */
static int refill_mem(struct tft_json_reader *r)
{
	r->pos = r->mark_pos;
	r->depth = r->mark_depth;
	r->level[r->depth] = r->mark_level;
	scratch_reset(r);
	return 0;
}

int tft_json_refill(struct tft_json_reader *r, struct tft_error *err)
{
	size_t from = r->mark_pos;

	if (!r->mem)
		return refill_mem(r);

	if (from > 0 || r->buf != r->mem) {
		memmove(r->mem, r->buf + from, r->len - from);
		r->len -= from;
		r->base += from;
		r->mark_pos = 0;
		r->buf = r->mem;
		r->cap = r->mem_cap;
	}
	if (r->len == r->cap && !r->eof) {
		size_t ncap = grown_cap(r, err);
		char *nb;
		if (!ncap)
			return TFT_EFORMAT;
		nb = realloc(r->mem, ncap + TFT_JSON_PAD);
		if (!nb) {
			tft_error_set(err, TFT_ENOMEM, -1, "out of memory growing the JSON window");
			return TFT_ENOMEM;
		}
		memset(nb + r->cap, 0, ncap - r->cap + TFT_JSON_PAD);
		r->mem = r->buf = nb;
		r->mem_cap = r->cap = ncap;
	}
	return fill_window(r, err);
}

int tft_json_refill_from(struct tft_json_reader *r, struct tft_json_window *win, size_t at,
			 size_t n, bool eof, struct tft_error *err)
{
	size_t from = r->mark_pos, keep = r->len - from;
	struct tft_json_window old;
	char *base;
	size_t cap;

	if (!r->mem)
		return refill_mem(r);
	if (keep >= r->max_buffer && !r->eof) {
		size_t at0 = from; /* report where the oversized value starts */
		while (at0 < r->len && is_ws[(unsigned char)r->buf[at0]])
			at0++;
		return fail(r, err, at0, "JSON value larger than the buffer limit (%zu bytes)",
			    r->max_buffer);
	}
	if (keep <= at) {
		/* the usual case: the cut unit goes in the room left in front of the new bytes */
		base = win->buf + at - keep;
		cap = win->cap - (at - keep);
		memcpy(base, r->buf + from, keep);
	} else {
		/* a unit longer than that room: make the window hold both */
		if (win->cap < keep + n) {
			char *nb = realloc(win->buf, keep + n + TFT_JSON_PAD);
			if (!nb) {
				tft_error_set(err, TFT_ENOMEM, -1, "out of memory growing the JSON window");
				return TFT_ENOMEM;
			}
			win->buf = nb;
			win->cap = keep + n;
		}
		memmove(win->buf + keep, win->buf + at, n);
		memcpy(win->buf, r->buf + from, keep);
		base = win->buf;
		cap = win->cap;
	}
	old.buf = r->mem;
	old.cap = r->mem_cap;
	r->mem = win->buf;
	r->mem_cap = win->cap;
	*win = old;
	r->buf = base;
	r->cap = cap;
	r->len = keep + n;
	r->base += from;
	r->mark_pos = 0;
	r->eof = eof;
	rewind_to_mark(r);
	return 0;
}

void tft_json_window_free(struct tft_json_window *win)
{
	free(win->buf);
	win->buf = NULL;
	win->cap = 0;
}

int tft_json_reader_init(struct tft_json_reader *r, struct tft_source *src,
			 const struct tft_json_reader_opts *opts, struct tft_error *err)
{
	memset(r, 0, sizeof(*r));
	r->src = src;
	r->cap = opts && opts->block_size ? opts->block_size : DEFAULT_BLOCK;
	/* a small plain input of known size never needs a larger window */
	if (src && !tft_source_is_gzip(src) && tft_source_raw_size(src) > 0) {
		uint64_t want = tft_source_raw_size(src) + 1;
		if (want < 64)
			want = 64;
		if (want < r->cap)
			r->cap = (size_t)want;
	}
	r->max_buffer = opts && opts->max_buffer ? opts->max_buffer : DEFAULT_MAX_BUFFER;
	if (r->max_buffer < r->cap)
		r->max_buffer = r->cap;
	r->max_depth = opts && opts->max_depth ? opts->max_depth : TFT_JSON_MAX_DEPTH;
	if (r->max_depth > TFT_JSON_MAX_DEPTH)
		r->max_depth = TFT_JSON_MAX_DEPTH;
	r->mem = r->buf = calloc(1, r->cap + TFT_JSON_PAD);
	r->mem_cap = r->cap;
	if (!r->buf) {
		tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
		return TFT_ENOMEM;
	}
	return tft_json_refill(r, err);
}

void tft_json_reader_init_mem(struct tft_json_reader *r, const char *data, size_t len,
			      struct tft_source *src, const struct tft_json_reader_opts *opts)
{
	memset(r, 0, sizeof(*r));
	r->src = src;
	r->buf = (char *)(uintptr_t)data; /* only read: the window is never refilled */
	r->cap = r->len = len;
	r->max_buffer = len;
	r->eof = true;
	r->max_depth = opts && opts->max_depth ? opts->max_depth : TFT_JSON_MAX_DEPTH;
	if (r->max_depth > TFT_JSON_MAX_DEPTH)
		r->max_depth = TFT_JSON_MAX_DEPTH;
}

void tft_json_reader_fini(struct tft_json_reader *r)
{
	scratch_reset(r);
	if (r->scratch)
		free(r->scratch);
	r->scratch = NULL;
	free(r->mem);
	r->mem = r->buf = NULL;
}

/* ---- tokens ------------------------------------------------------------- */

static int hex4(const char *p)
{
	int a = tft_hexval((unsigned char)p[0]), b = tft_hexval((unsigned char)p[1]);
	int c = tft_hexval((unsigned char)p[2]), d = tft_hexval((unsigned char)p[3]);

	if ((a | b | c | d) < 0)
		return -1;
	return (a << 12) | (b << 8) | (c << 4) | d;
}

static size_t put_utf8(char *o, uint32_t cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | (cp >> 6));
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | (cp >> 12));
		o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | (cp >> 18));
	o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/*
 * Decode the escapes of the string body [s, end) (end = its closing quote)
 * into scratch. Every escape is complete: the closing quote was found by
 * stepping over them.
 */
static int decode_string(struct tft_json_reader *r, const char *s, const char *end,
			 struct tft_json_str *out, struct tft_error *err)
{
	char *o = scratch_alloc(r, (size_t)(end - s));
	char *o0 = o;
	const char *p = s;

	if (!o) {
		tft_error_set(err, TFT_ENOMEM, -1, "out of memory decoding a string");
		return TFT_ENOMEM;
	}
	while (p < end) {
		const char *bs = memchr(p, '\\', (size_t)(end - p));
		if (!bs) {
			memcpy(o, p, (size_t)(end - p));
			o += end - p;
			break;
		}
		memcpy(o, p, (size_t)(bs - p));
		o += bs - p;
		p = bs;
		switch (p[1]) {
		case '"': *o++ = '"'; p += 2; break;
		case '\\': *o++ = '\\'; p += 2; break;
		case '/': *o++ = '/'; p += 2; break;
		case 'b': *o++ = '\b'; p += 2; break;
		case 'f': *o++ = '\f'; p += 2; break;
		case 'n': *o++ = '\n'; p += 2; break;
		case 'r': *o++ = '\r'; p += 2; break;
		case 't': *o++ = '\t'; p += 2; break;
		case 'u': {
			int cp;
			if (end - p < 6 || (cp = hex4(p + 2)) < 0)
				return fail(r, err, (size_t)(p - r->buf),
					    "invalid \\u escape: expected 4 hex digits");
			p += 6;
			if (cp >= 0xd800 && cp <= 0xdbff) {
				int lo;
				if (end - p >= 6 && p[0] == '\\' && p[1] == 'u' &&
				    (lo = hex4(p + 2)) >= 0xdc00 && lo <= 0xdfff) {
					cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
					p += 6;
				} else {
					cp = 0xfffd; /* lone high surrogate */
				}
			} else if (cp >= 0xdc00 && cp <= 0xdfff) {
				cp = 0xfffd; /* lone low surrogate */
			}
			/* 6 or 12 input bytes always cover the 1..4 output bytes */
			o += put_utf8(o, (uint32_t)cp);
			break;
		}
		default:
			return fail(r, err, (size_t)(p - r->buf),
				    "invalid escape sequence: expected one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u");
		}
	}
	out->ptr = o0;
	out->len = (size_t)(o - o0);
	r->decoded += out->len + 1; /* + 1: an empty decoded string counts too */
	return 0;
}

/* r->buf[r->pos] is the opening quote. */
HOT int read_string(struct tft_json_reader *r, struct tft_json_str *out, struct tft_error *err)
{
	const char *s = r->buf + r->pos + 1, *e = r->buf + r->len;
	const char *h = find_quote_or_bs(s, e);

	if (tft_likely(h < e && *h == '"')) {
		out->ptr = s;
		out->len = (size_t)(h - s);
		r->pos = (size_t)(h + 1 - r->buf);
		return 0;
	}
	/* Escapes: find the real end first, stepping over each escape. */
	while (h < e && *h == '\\') {
		if (h + 2 > e) {
			h = e; /* the escaped byte is past the window */
			break;
		}
		h = find_quote_or_bs(h + 2, e);
	}
	if (h >= e) {
		if (!r->eof)
			return TFT_JSON_MORE;
		return fail(r, err, r->len,
			    "unterminated string (opened at byte %llu): expected '\"' before end of input",
			    (unsigned long long)(r->base + r->pos));
	}
	int rc = decode_string(r, s, h, out, err);
	if (rc)
		return rc;
	r->pos = (size_t)(h + 1 - r->buf);
	return 0;
}

static inline bool is_digit(char ch)
{
	return (unsigned)(ch - '0') < 10u;
}


/*
 * One pass: scan and validate, and keep the integer part's value; the '\0'
 * sentinel at buf[len] ends every loop.
 */
HOT int read_number_inl(struct tft_json_reader *r, struct tft_json_value *v, struct tft_error *err)
{
	const char *s = r->buf + r->pos, *p = s, *e = r->buf + r->len, *d0, *fp = NULL;
	bool is_int = true, neg = false;
	uint64_t m = 0;

	if (*p == '-') {
		neg = true;
		p++;
	}
	d0 = p;
	if (*p == '0') {
		p++;
	} else if (is_digit(*p)) {
		while (is_digit(*p)) {
			m = m * 10 + (unsigned)(*p - '0'); /* wraps past 19 digits: mag_ok is false */
			p++;
		}
	} else {
		goto bad;
	}
	v->mag_ok = p - d0 <= 19;
	if (*p == '.') {
		p++;
		if (!is_digit(*p))
			goto bad;
		fp = p;
		do
			p++;
		while (is_digit(*p));
		is_int = false;
	}
	v->frac_len = fp ? (uint32_t)(p - fp) : 0;
	if ((*p | 0x20) == 'e') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!is_digit(*p))
			goto bad;
		do
			p++;
		while (is_digit(*p));
		is_int = false;
		v->mag_ok = false;
	}
	if (p >= e && !r->eof)
		return TFT_JSON_MORE; /* the number may go on in the next window */
	if (is_numch[(unsigned char)*p] && p < e)
		goto bad;
	v->type = TFT_JSON_NUMBER;
	v->is_int = is_int;
	v->neg = neg;
	v->int_mag = m;
	v->ptr = s;
	v->len = (size_t)(p - s);
	r->pos = (size_t)(p - r->buf);
	return 0;
bad:
	if (p >= e && !r->eof)
		return TFT_JSON_MORE;
	return fail(r, err, r->pos, "invalid number: expected digits [.digits][e[+-]digits]");
}

/* Out of line where a number is one value among others; the member loop inlines read_number_inl. */
static int read_number(struct tft_json_reader *r, struct tft_json_value *v, struct tft_error *err)
{
	return read_number_inl(r, v, err);
}

static int read_literal(struct tft_json_reader *r, const char *lit, size_t n, int type,
			struct tft_json_value *v, struct tft_error *err)
{
	size_t avail = r->len - r->pos;

	if (avail < n) {
		if (!r->eof && memcmp(r->buf + r->pos, lit, avail) == 0)
			return TFT_JSON_MORE;
	} else if (memcmp(r->buf + r->pos, lit, n) == 0) {
		r->pos += n;
		v->type = type;
		return 0;
	}
	return fail(r, err, r->pos, "invalid literal: expected '%s'", lit);
}

static int enter_level(struct tft_json_reader *r, unsigned kind, struct tft_error *err)
{
	if (r->depth >= r->max_depth)
		return fail(r, err, r->pos, "nesting deeper than %u levels", r->max_depth);
	r->depth++;
	r->level[r->depth] = (uint8_t)kind;
	r->pos++;
	return 0;
}

int tft_json_peek(struct tft_json_reader *r, int *c, struct tft_error *err)
{
	int ch = ws_skip(r);

	(void)err;
	if (ch < 0 && !r->eof)
		return TFT_JSON_MORE;
	*c = ch;
	return 0;
}

/* Read a value; containers are entered (enter) or only reported, unconsumed. */
HOT int value_start(struct tft_json_reader *r, struct tft_json_value *v, bool enter,
		    struct tft_error *err)
{
	int c = ws_skip(r);
	int rc;

	v->ptr = NULL;
	v->len = 0;
	v->is_int = false;
	if (c < 0)
		return more_or_eof(r, err, "a value");
	v->offset = (int64_t)(r->base + r->pos);
	switch (c) {
	case '"': {
		struct tft_json_str s = { NULL, 0 };
		rc = read_string(r, &s, err);
		if (rc)
			return rc;
		v->type = TFT_JSON_STRING;
		v->ptr = s.ptr;
		v->len = s.len;
		return 0;
	}
	case '{':
		v->type = TFT_JSON_OBJECT;
		return enter ? enter_level(r, 0, err) : 0;
	case '[':
		v->type = TFT_JSON_ARRAY;
		return enter ? enter_level(r, JL_ARRAY, err) : 0;
	case 't':
		return read_literal(r, "true", 4, TFT_JSON_TRUE, v, err);
	case 'f':
		return read_literal(r, "false", 5, TFT_JSON_FALSE, v, err);
	case 'n':
		return read_literal(r, "null", 4, TFT_JSON_NULL, v, err);
	default:
		if (c == '-' || (c >= '0' && c <= '9'))
			return read_number(r, v, err);
		return fail(r, err, r->pos,
			    "expected a value (string, number, object, array, true, false or null)");
	}
}

int tft_json_read(struct tft_json_reader *r, struct tft_json_value *v, struct tft_error *err)
{
	return value_start(r, v, true, err);
}

int tft_json_enter_object(struct tft_json_reader *r, bool *is_obj, struct tft_error *err)
{
	struct tft_json_value v;
	int rc;

	*is_obj = false;
	if (ws_skip(r) == '{') {
		if ((rc = enter_level(r, 0, err)))
			return rc;
		*is_obj = true;
		return 0;
	}
	if ((rc = value_start(r, &v, true, err)))
		return rc;
	return v.type == TFT_JSON_ARRAY ? tft_json_skip_rest(r, err) : 0;
}

int tft_json_read_flat(struct tft_json_reader *r, struct tft_json_value *v, bool checked,
		       struct tft_error *err)
{
	int c = ws_skip(r);

	if (c == '{' || c == '[') {
		size_t start = r->pos;
		int rc = checked ? tft_json_skip_checked(r, NULL, err) : tft_json_skip(r, NULL, err);
		if (rc)
			return rc;
		v->type = c == '{' ? TFT_JSON_OBJECT : TFT_JSON_ARRAY;
		v->is_int = false;
		v->ptr = r->buf + start;
		v->len = r->pos - start;
		v->offset = (int64_t)(r->base + start);
		return 0;
	}
	return tft_json_read(r, v, err);
}

HOT int key_step(struct tft_json_reader *r, struct tft_json_str *key, struct tft_error *err)
{
	uint8_t lv = r->level[r->depth];
	int c = ws_skip(r);
	int rc;

	TFT_ASSERT(r->depth > 0 && !(lv & JL_ARRAY));
	if (c < 0)
		return more_or_eof(r, err, (lv & JL_ITEM) ? "',' or '}' after object member"
							   : "a string key or '}'");
	if (c == '}') {
		r->pos++;
		r->depth--;
		return 0;
	}
	if (lv & JL_ITEM) {
		if (c != ',')
			return fail(r, err, r->pos, "expected ',' or '}' after object member");
		r->pos++;
		c = ws_skip(r);
		if (c < 0)
			return more_or_eof(r, err, "a string key after ','");
		if (c != '"')
			return fail(r, err, r->pos, "expected a string key after ','");
	} else if (c != '"') {
		return fail(r, err, r->pos, "expected a string key or '}'");
	}
	rc = read_string(r, key, err);
	if (rc)
		return rc;
	c = ws_skip(r);
	if (c < 0)
		return more_or_eof(r, err, "':' after object key");
	if (c != ':')
		return fail(r, err, r->pos, "expected ':' after object key");
	r->pos++;
	r->level[r->depth] = lv | JL_ITEM;
	return 1;
}

int tft_json_next_key(struct tft_json_reader *r, struct tft_json_str *key, struct tft_error *err)
{
	return key_step(r, key, err);
}

int tft_json_next_member(struct tft_json_reader *r, struct tft_json_str *key,
			 struct tft_json_value *v, struct tft_error *err)
{
	int rc = key_step(r, key, err);

	if (rc != 1)
		return rc;
	rc = value_start(r, v, false, err);
	return rc ? rc : 1;
}

/*
 * The member loop with the reader's state in locals: the common member
 * (optional ',', a key without escapes, ':', a string without escapes, a
 * number, a literal or the start of a container) is read here; anything
 * else (escapes, the end of the window, malformed input) is handed to
 * key_step() + value_start() from the start of that member, so results and
 * errors are those of tft_json_next_member().
 */
int tft_json_next_members(struct tft_json_reader *r, struct tft_json_member *out, unsigned max,
			  unsigned *n, bool *ended, struct tft_error *err)
{
	const char *buf = r->buf, *e = buf + r->len, *p = buf + r->pos;
	uint8_t lv = r->level[r->depth];
	unsigned k = 0;
	int rc;

	TFT_ASSERT(r->depth > 0 && !(lv & JL_ARRAY));
	*ended = false;
	while (k < max) {
		struct tft_json_member *m = &out[k];
		const char *p0 = p, *h;

		while (is_ws[(unsigned char)*p])
			p++;
		if (*p == '}' && p < e) {
			p++;
			r->depth--;
			*ended = true;
			r->pos = (size_t)(p - buf);
			*n = k;
			return 0;
		}
		if (lv & JL_ITEM) {
			if (*p != ',')
				goto generic;
			p++;
			while (is_ws[(unsigned char)*p])
				p++;
		}
		if (*p != '"' || p >= e)
			goto generic;
		h = find_quote_or_bs(p + 1, e);
		if (h >= e || *h != '"')
			goto generic;
		m->key.ptr = p + 1;
		m->key.len = (size_t)(h - p - 1);
		p = h + 1;
		while (is_ws[(unsigned char)*p])
			p++;
		if (*p != ':' || p >= e)
			goto generic;
		p++;
		while (is_ws[(unsigned char)*p])
			p++;
		if (p >= e)
			goto generic;
		m->v.offset = (int64_t)(r->base + (size_t)(p - buf));
		m->v.is_int = false;
		switch (*p) {
		case '"':
			h = find_quote_or_bs(p + 1, e);
			if (h >= e || *h != '"')
				goto generic;
			m->v.type = TFT_JSON_STRING;
			m->v.ptr = p + 1;
			m->v.len = (size_t)(h - p - 1);
			p = h + 1;
			break;
		case '{':
		case '[':
			m->v.type = *p == '{' ? TFT_JSON_OBJECT : TFT_JSON_ARRAY;
			m->v.ptr = NULL;
			m->v.len = 0;
			r->level[r->depth] = lv | JL_ITEM;
			r->pos = (size_t)(p - buf); /* not consumed */
			*n = k + 1;
			return 0;
		case '-':
		case '0': case '1': case '2': case '3': case '4':
		case '5': case '6': case '7': case '8': case '9':
			r->pos = (size_t)(p - buf);
			if ((rc = read_number_inl(r, &m->v, err)))
				return rc;
			p = buf + r->pos;
			break;
		case 't':
		case 'f':
		case 'n':
			r->pos = (size_t)(p - buf);
			m->v.ptr = NULL;
			m->v.len = 0;
			rc = *p == 't' ? read_literal(r, "true", 4, TFT_JSON_TRUE, &m->v, err)
			   : *p == 'f' ? read_literal(r, "false", 5, TFT_JSON_FALSE, &m->v, err)
				       : read_literal(r, "null", 4, TFT_JSON_NULL, &m->v, err);
			if (rc)
				return rc;
			p = buf + r->pos;
			break;
		default:
			goto generic;
		}
		lv |= JL_ITEM;
		k++;
		continue;
generic:
		/* replay this member with the general code */
		r->pos = (size_t)(p0 - buf);
		r->level[r->depth] = lv;
		rc = key_step(r, &m->key, err);
		if (rc == 0) {
			*ended = true;
			*n = k;
			return 0;
		}
		if (rc != 1)
			return rc;
		if ((rc = value_start(r, &m->v, false, err)))
			return rc;
		lv = r->level[r->depth];
		p = buf + r->pos;
		k++;
		if (m->v.type == TFT_JSON_OBJECT || m->v.type == TFT_JSON_ARRAY) {
			*n = k;
			return 0;
		}
	}
	r->level[r->depth] = lv;
	r->pos = (size_t)(p - buf);
	*n = k;
	return 0;
}

static int eof_ends(struct tft_json_reader *r)
{
	r->truncated = true;
	r->depth--;
	return 0;
}

int tft_json_next_item(struct tft_json_reader *r, unsigned flags, struct tft_error *err)
{
	uint8_t lv = r->level[r->depth];
	int c = ws_skip(r);

	TFT_ASSERT(r->depth > 0 && (lv & JL_ARRAY));
	if (c < 0) {
		if (r->eof && (flags & TFT_JSON_EOF_ENDS_ARRAY))
			return eof_ends(r);
		return more_or_eof(r, err, (lv & JL_ITEM) ? "',' or ']' after array element"
							   : "a value or ']'");
	}
	if (c == ']') {
		r->pos++;
		r->depth--;
		return 0;
	}
	if (lv & JL_ITEM) {
		if (c != ',')
			return fail(r, err, r->pos, "expected ',' or ']' after array element");
		r->pos++;
		c = ws_skip(r);
		if (c < 0) {
			if (r->eof && (flags & TFT_JSON_EOF_ENDS_ARRAY))
				return eof_ends(r);
			return more_or_eof(r, err, "a value after ','");
		}
		if (c == ']')
			return fail(r, err, r->pos, "expected a value after ',' (trailing comma)");
	}
	r->level[r->depth] = lv | JL_ITEM;
	return 1;
}

/* ---- skipping ----------------------------------------------------------- */

/* Step over a string body from p (after the opening quote); NULL if cut off. */
static inline const char *skip_string_body(const char *p, const char *e)
{
	for (;;) {
		const char *h = find_quote_or_bs(p, e);
		if (h >= e)
			return NULL;
		if (*h == '"')
			return h + 1;
		if (h + 2 > e)
			return NULL;
		p = h + 2;
	}
}

/*
 * Bracket-matching scan of a container starting at r->pos. *d / bits carry
 * the open brackets across calls (stream mode); returns 0 when the
 * outermost bracket closed, 1 when the window ended (r->pos = where to
 * resume), <0 on mismatch.
 */
struct scan_state {
	uint32_t d;
	bool in_str;
	uint64_t bits[TFT_JSON_MAX_DEPTH / 64 + 1]; /* 1 = '[' at that depth */
};

static int scan_container(struct tft_json_reader *r, struct scan_state *st, struct tft_error *err)
{
	const char *p = r->buf + r->pos, *e = r->buf + r->len;

	for (;;) {
		if (st->in_str) {
			const char *h = find_quote_or_bs(p, e);
			if (h >= e) {
				r->pos = r->len;
				return 1;
			}
			if (*h == '\\') {
				if (h + 2 > e) {
					r->pos = (size_t)(h - r->buf); /* resume at the backslash */
					return 1;
				}
				p = h + 2;
				continue;
			}
			p = h + 1;
			st->in_str = false;
			if (st->d == 0) {
				r->pos = (size_t)(p - r->buf);
				return 0;
			}
			continue;
		}
		p = find_structural(p, e);
		if (p >= e) {
			r->pos = r->len;
			return 1;
		}
		switch (*p) {
		case '"':
			st->in_str = true;
			p++;
			break;
		case '{':
		case '[':
			if (r->depth + st->d >= r->max_depth)
				return fail(r, err, (size_t)(p - r->buf), "nesting deeper than %u levels",
					    r->max_depth);
			if (*p == '[')
				st->bits[st->d >> 6] |= 1ULL << (st->d & 63);
			else
				st->bits[st->d >> 6] &= ~(1ULL << (st->d & 63));
			st->d++;
			p++;
			break;
		default: { /* '}' or ']' */
			bool is_arr;
			if (st->d == 0)
				return fail(r, err, (size_t)(p - r->buf), "unexpected '%c'", *p);
			st->d--;
			is_arr = (st->bits[st->d >> 6] >> (st->d & 63)) & 1;
			if (is_arr != (*p == ']'))
				return fail(r, err, (size_t)(p - r->buf), "expected '%c' to close '%c'",
					    is_arr ? ']' : '}', is_arr ? '[' : '{');
			p++;
			if (st->d == 0) {
				r->pos = (size_t)(p - r->buf);
				return 0;
			}
			break;
		}
		}
	}
}

int tft_json_skip(struct tft_json_reader *r, struct tft_json_str *raw, struct tft_error *err)
{
	int c = ws_skip(r);
	size_t start = r->pos;
	int rc;

	if (c < 0)
		return more_or_eof(r, err, "a value");
	if (c == '"') {
		const char *e = r->buf + r->len;
		const char *p = skip_string_body(r->buf + r->pos + 1, e);
		if (!p) {
			if (!r->eof)
				return TFT_JSON_MORE;
			return fail(r, err, r->len,
				    "unterminated string (opened at byte %llu): expected '\"' before end of input",
				    (unsigned long long)(r->base + start));
		}
		r->pos = (size_t)(p - r->buf);
	} else if (c == '{' || c == '[') {
		struct scan_state st;
		st.d = 0;
		st.in_str = false;
		rc = scan_container(r, &st, err);
		if (rc < 0)
			return rc;
		if (rc == 1) {
			r->pos = start;
			return more_or_eof(r, err, c == '{' ? "'}'" : "']'");
		}
	} else {
		struct tft_json_value v;
		rc = tft_json_read(r, &v, err);
		if (rc)
			return rc;
	}
	if (raw) {
		raw->ptr = r->buf + start;
		raw->len = r->pos - start;
	}
	return 0;
}

int tft_json_skip_checked(struct tft_json_reader *r, struct tft_json_str *raw,
			  struct tft_error *err)
{
	struct tft_json_value v;
	struct tft_json_str k;
	uint32_t top = r->depth;
	size_t start;
	int rc, c = ws_skip(r);

	if (c < 0)
		return more_or_eof(r, err, "a value");
	start = r->pos;
	rc = tft_json_read(r, &v, err);
	while (rc == 0 && r->depth > top) {
		if (r->level[r->depth] & JL_ARRAY)
			rc = tft_json_next_item(r, 0, err);
		else
			rc = tft_json_next_key(r, &k, err);
		if (rc == 1)
			rc = tft_json_read(r, &v, err);
		else if (rc == 0)
			continue; /* left a container */
	}
	if (rc)
		return rc;
	if (raw) {
		raw->ptr = r->buf + start;
		raw->len = r->pos - start;
	}
	return 0;
}

static int stream_refill(struct tft_json_reader *r, struct tft_error *err)
{
	return r->refill_hook ? r->refill_hook(r->refill_ctx, err) : tft_json_refill(r, err);
}

int tft_json_skip_stream(struct tft_json_reader *r, struct tft_error *err)
{
	int c, rc;

	for (;;) {
		c = ws_skip(r);
		if (c >= 0)
			break;
		if (r->eof)
			return more_or_eof(r, err, "a value");
		set_mark(r);
		rc = stream_refill(r, err);
		if (rc)
			return rc;
	}
	if (c == '"' || c == '{' || c == '[') {
		struct scan_state st;
		st.d = 0;
		st.in_str = c == '"';
		if (st.in_str)
			r->pos++;
		for (;;) {
			rc = scan_container(r, &st, err);
			if (rc <= 0)
				return rc;
			if (r->eof)
				return fail(r, err, r->len, "unexpected end of input: expected %s",
					    st.in_str ? "'\"'" : "a closing bracket");
			set_mark(r);
			rc = stream_refill(r, err);
			if (rc)
				return rc;
		}
	}
	/* A scalar: short, replay it whole. */
	for (;;) {
		struct tft_json_value v;
		set_mark(r);
		rc = tft_json_read(r, &v, err);
		if (rc != TFT_JSON_MORE)
			return rc;
		rc = stream_refill(r, err);
		if (rc)
			return rc;
	}
}

int tft_json_skip_rest(struct tft_json_reader *r, struct tft_error *err)
{
	uint32_t top = r->depth;
	struct tft_json_str k;
	int rc;

	TFT_ASSERT(top > 0);
	for (;;) {
		if (r->level[top] & JL_ARRAY)
			rc = tft_json_next_item(r, 0, err);
		else
			rc = tft_json_next_key(r, &k, err);
		if (rc != 1)
			return rc;
		rc = tft_json_skip(r, NULL, err);
		if (rc)
			return rc;
	}
}

int tft_json_finish(struct tft_json_reader *r, struct tft_error *err)
{
	int c = ws_skip(r);

	if (c < 0)
		return r->eof ? 0 : TFT_JSON_MORE;
	return fail(r, err, r->pos, "expected end of input after the top-level value");
}

/* ---- numbers ------------------------------------------------------------ */

int tft_json_number_to_ns(const char *s, size_t len, int64_t *ns)
{
	const char *p = s, *e = s + len, *ip, *ie, *fp, *fe;
	bool neg = false;
	long exp = 0, nint, total, keep;
	uint64_t v = 0, limit;

	if (p < e && *p == '-') {
		neg = true;
		p++;
	}
	ip = p;
	while (p < e && *p >= '0' && *p <= '9')
		p++;
	ie = fp = fe = p;
	if (ie == ip)
		return -1;
	if (p < e && *p == '.') {
		fp = ++p;
		while (p < e && *p >= '0' && *p <= '9')
			p++;
		fe = p;
		if (fe == fp)
			return -1;
	}
	if (p < e && (*p == 'e' || *p == 'E')) {
		bool eneg = false;
		const char *x;
		p++;
		if (p < e && (*p == '+' || *p == '-'))
			eneg = *p++ == '-';
		x = p;
		while (p < e && *p >= '0' && *p <= '9') {
			if (exp < 1000000)
				exp = exp * 10 + (*p - '0');
			p++;
		}
		if (p == x)
			return -1;
		if (eneg)
			exp = -exp;
	}
	if (p != e)
		return -1;
	nint = ie - ip;
	if (exp == 0 && nint <= 15) {
		/* common case: <= 15 integer digits, no exponent: no overflow possible */
		long nf = fe - fp;
		for (const char *q = ip; q < ie; q++)
			v = v * 10 + (unsigned)(*q - '0');
		v = v * 10 + (nf > 0 ? (unsigned)(fp[0] - '0') : 0);
		v = v * 10 + (nf > 1 ? (unsigned)(fp[1] - '0') : 0);
		v = v * 10 + (nf > 2 ? (unsigned)(fp[2] - '0') : 0);
		if (nf > 3 && fp[3] >= '5')
			v++; /* half away from zero */
		*ns = neg ? -(int64_t)v : (int64_t)v;
		return 0;
	}
	/* value_ns = D * 10^(exp + 3 - nfrac), D = int digits ++ fraction digits;
	 * the first `keep` digits of D form the integer part. */
	total = nint + (fe - fp);
	keep = nint + exp + 3;
	limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	for (long i = 0; i < total && i < keep; i++) {
		unsigned d = (unsigned)((i < nint ? ip[i] : fp[i - nint]) - '0');
		if (v > (limit - d) / 10) /* rare path: the division is fine */
			return -1;
		v = v * 10 + d;
	}
	if (keep > total) {
		for (long i = total; i < keep && v != 0; i++) {
			if (v > limit / 10)
				return -1;
			v *= 10;
		}
	} else if (keep >= 0 && keep < total) {
		unsigned rd = (unsigned)((keep < nint ? ip[keep] : fp[keep - nint]) - '0');
		if (rd >= 5) { /* half away from zero: magnitude rounds up */
			if (v == limit)
				return -1;
			v++;
		}
	}
	if (neg)
		*ns = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
	else
		*ns = (int64_t)v;
	return 0;
}

int tft_json_number_to_i64(const char *s, size_t len, int64_t *out)
{
	const char *p = s, *e = s + len;
	bool neg = false;
	uint64_t v = 0, limit;

	if (p < e && *p == '-') {
		neg = true;
		p++;
	}
	if (p == e)
		return -1;
	limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	if (e - p <= 18) {
		/* up to 18 digits always fit */
		for (; p < e; p++) {
			unsigned d = (unsigned)(*p - '0');
			if (d > 9)
				return -1;
			v = v * 10 + d;
		}
	} else {
		for (; p < e; p++) {
			unsigned d = (unsigned)(*p - '0');
			if (d > 9 || v > (limit - d) / 10)
				return -1;
			v = v * 10 + d;
		}
	}
	if (neg)
		*out = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
	else
		*out = (int64_t)v;
	return 0;
}

int tft_json_number_to_double(const char *s, size_t len, double *out)
{
	char tmp[128];
	char *buf = tmp, *end;
	int rc = 0;

	if (len == 0)
		return -1;
	if (len >= sizeof(tmp)) {
		buf = malloc(len + 1);
		if (!buf)
			return -1;
	}
	memcpy(buf, s, len);
	buf[len] = '\0';
	*out = strtod(buf, &end);
	if (end != buf + len)
		rc = -1;
	if (buf != tmp)
		free(buf);
	return rc;
}

size_t tft_json_compact(const char *in, size_t len, char *out)
{
	size_t o = 0;
	bool in_str = false;

	for (size_t i = 0; i < len; i++) {
		char c = in[i];
		if (in_str) {
			out[o++] = c;
			if (c == '\\' && i + 1 < len)
				out[o++] = in[++i];
			else if (c == '"')
				in_str = false;
		} else if (!is_ws[(unsigned char)c]) {
			out[o++] = c;
			if (c == '"')
				in_str = true;
		}
	}
	return o;
}
