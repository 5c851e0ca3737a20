/* SPDX-License-Identifier: MIT */
/*
 * Streaming JSON writer: buffer management, string escaping with UTF-8
 * validation, hand-written integer and ns->us formatting, doubles.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codec/json_read.h"
#include "codec/json_write.h"
#include "core/grow.h"
#include "core/status.h"


/* ---- buffer ------------------------------------------------------------- */

static void fail(struct tft_json_writer *w, int status)
{
	if (w->status == 0)
		w->status = status;
	/* No room left: every later reserve goes to the slow path and fails. */
	w->cap = w->len;
}

void tft_json_write_init_mem(struct tft_json_writer *w)
{
	memset(w, 0, sizeof(*w));
}

int tft_json_write_init_sink(struct tft_json_writer *w, tft_json_sink_fn sink, void *ctx)
{
	memset(w, 0, sizeof(*w));
	w->sink = sink;
	w->sink_ctx = ctx;
	w->buf = malloc(TFT_JSON_WRITE_BUF);
	if (!w->buf) {
		w->status = TFT_ENOMEM;
		return TFT_ENOMEM;
	}
	w->cap = TFT_JSON_WRITE_BUF;
	return 0;
}

static int file_sink(void *ctx, const void *buf, size_t len)
{
	FILE *fp = ctx;

	if (fwrite(buf, 1, len, fp) != len)
		return TFT_EIO;
	return 0;
}

int tft_json_write_init_file(struct tft_json_writer *w, FILE *fp)
{
	return tft_json_write_init_sink(w, file_sink, fp);
}

void tft_json_write_fini(struct tft_json_writer *w)
{
	free(w->buf);
	w->buf = NULL;
	w->len = w->cap = 0;
}

int tft_json_write_flush(struct tft_json_writer *w)
{
	int rc;

	if (w->status)
		return w->status;
	if (!w->sink || w->len == 0)
		return 0;
	rc = w->sink(w->sink_ctx, w->buf, w->len);
	if (rc) {
		fail(w, rc < 0 ? rc : TFT_EIO);
		return w->status;
	}
	w->flushed += w->len;
	w->len = 0;
	return 0;
}

int tft_json_write_finish(struct tft_json_writer *w)
{
	return tft_json_write_flush(w);
}

int tft_json_write_reserve_slow(struct tft_json_writer *w, size_t n)
{
	if
 (w->status)
		return w->status;
	if (w->sink && w->len) {
		if (tft_json_write_flush(w))
			return w->status;
		if (w->cap >= n)
			return 0;
	}
	if (n > SIZE_MAX / 2 - w->len) {
		fail(w, TFT_ENOMEM);
		return w->status;
	}
	if (tft_grow_size_ex((void **)&w->buf, &w->cap, w->len + n, 1, 4096, 0)) {
		fail(w, TFT_ENOMEM);
		return w->status;
	}
	return 0;
}

char *tft_json_write_take(struct tft_json_writer *w, size_t *len)
{
	size_t n = 0;
	const char *p = tft_json_write_borrow(w, &n);
	char *out = NULL;

	if (!tft_json_write_failed(w) && (out = malloc(n + 1))) {
		memcpy(out, p, n);
		out[n] = '\0';
	}
	if (len)
		*len = out ? n : 0;
	tft_json_write_fini(w);
	return out;
}

const char *tft_json_write_borrow(struct tft_json_writer *w, size_t *len)
{
	if (!tft_json_write_reserve(w, 1)) {
		if (len)
			*len = 0;
		return "";
	}
	if (len)
		*len = w->len;
	w->buf[w->len] = '\0';
	return w->buf;
}

/* ---- number formatting ------------------------------------------------- */

static const char digit_pairs[201] =
	"00010203040506070809"
	"10111213141516171819"
	"20212223242526272829"
	"30313233343536373839"
	"40414243444546474849"
	"50515253545556575859"
	"60616263646566676869"
	"70717273747576777879"
	"80818283848586878889"
	"90919293949596979899";

/* Decimal digits of v (1..20). */
static inline unsigned count_digits(uint64_t v)
{
	unsigned n = 1;

	for (;;) {
		if (v < 10)
			return n;
		if (v < 100)
			return n + 1;
		if (v < 1000)
			return n + 2;
		if (v < 10000)
			return n + 3;
		v /= 10000;
		n += 4;
	}
}

/*
 * Digits are counted first, then written straight into out, last pair
 * first (no scratch buffer: BENCHMARKS.md, "Analysis, export and capture:
 * design measurements").
 */
size_t tft_json_fmt_uint(char *out, uint64_t v)
{
	size_t n = count_digits(v);
	char *p = out + n;

	while (v >= 100) {
		unsigned d = (unsigned)(v % 100) * 2;

		v /= 100;
		p -= 2;
		memcpy(p, digit_pairs + d, 2);
	}
	if (v >= 10)
		memcpy(p - 2, digit_pairs + (unsigned)v * 2, 2);
	else
		p[-1] = (char)('0' + v);
	return n;
}

size_t tft_json_fmt_int(char *out, int64_t v)
{
	if (v < 0) {
		out[0] = '-';
		/* Negate in unsigned arithmetic: INT64_MIN has no positive twin. */
		return 1 + tft_json_fmt_uint(out + 1, 0 - (uint64_t)v);
	}
	return tft_json_fmt_uint(out, (uint64_t)v);
}

size_t tft_json_fmt_ns_us(char *out, int64_t ns)
{
	uint64_t u = ns < 0 ? 0 - (uint64_t)ns : (uint64_t)ns;
	unsigned frac = (unsigned)(u % 1000);
	size_t n = 0;

	if (ns < 0)
		out[n++] = '-';
	n += tft_json_fmt_uint(out + n, u / 1000);
	if (frac) {
		out[n++] = '.';
		out[n++] = (char)('0' + frac / 100);
		if (frac % 100) {
			out[n++] = (char)('0' + frac / 10 % 10);
			if (frac % 10)
				out[n++] = (char)('0' + frac % 10);
		}
	}
	return n;
}

size_t tft_json_fmt_double(char *out, double v, bool keep_point)
{
	char tmp[40];
	size_t n;
	int len = 0;

	if (!isfinite(v)) {
		memcpy(out, "null", 4);
		return 4;
	}
	/* Integral values (counters, byte sizes) skip printf entirely. */
	if (v == trunc(v) && fabs(v) < 1e15) {
		n = tft_json_fmt_int(out, (int64_t)v);
		if (keep_point) {
			memcpy(out + n, ".0", 2);
			n += 2;
		}
		return n;
	}
	/*
	 * Fixed point with the fewest decimals k that read back exactly: n =
	 * round(v * 10^k) and n / 10^k (both exact doubles, so the division is
	 * correctly rounded like strtod of the decimal text) must give v back.
	 * Covers the usual counter and arg values without printf.
	 */
	if (fabs(v) >= 1e-5 && fabs(v) < 1e15) {
		static const double p10[] = { 1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8,
					      1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
					      1e17, 1e18, 1e19, 1e20 };
		for (int k = 1; k <= 20; k++) {
			double scaled = v * p10[k];
			if (fabs(scaled) >= 9007199254740992.0) /* 2^53: n no longer exact */
				break;
			int64_t q = llround(scaled);
			if ((double)q / p10[k] != v)
				continue;
			uint64_t u = q < 0 ? 0 - (uint64_t)q : (uint64_t)q;
			char digits[24];
			size_t nd = tft_json_fmt_uint(digits, u);
			n = 0;
			if (q < 0)
				out[n++] = '-';
			if (nd <= (size_t)k) { /* 0.000ddd */
				out[n++] = '0';
				out[n++] = '.';
				memset(out + n, '0', (size_t)k - nd);
				n += (size_t)k - nd;
				memcpy(out + n, digits, nd);
				n += nd;
			} else {
				memcpy(out + n, digits, nd - (size_t)k);
				n += nd - (size_t)k;
				out[n++] = '.';
				memcpy(out + n, digits + nd - (size_t)k, (size_t)k);
				n += (size_t)k;
			}
			return n;
		}
	}
	for (int prec = 15; prec <= 17; prec++) {
		len = snprintf(tmp, sizeof(tmp), "%.*g", prec, v);
		if (prec == 17 || strtod(tmp, NULL) == v)
			break;
	}
	if (len <= 0 || (size_t)len >= sizeof(tmp) - 3) {
		memcpy(out, "null", 4);
		return 4;
	}
	n = (size_t)len;
	memcpy(out, tmp, n);
	if (keep_point && !memchr(tmp, '.', n) && !memchr(tmp, 'e', n)) {
		memcpy(out + n, ".0", 2);
		n += 2;
	}
	return n;
}

/* ---- escaping ----------------------------------------------------------- */

/* 0: copy as is; 1: ASCII that needs a backslash escape; 2: non-ASCII lead. */
static const unsigned char esc_class[256] = {
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0x00 */
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0x10 */
	0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0x20: '"' */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0x30 */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0x40 */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, /* 0x50: '\\' */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0x60 */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0x70 */
	2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, /* 0x80 */
	2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
	2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
	2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
	2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
	2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
	2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
	2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
};

/* Length of the valid UTF-8 sequence at s[0..avail), or 0 if invalid. */
static size_t utf8_seq_len(const unsigned char *s, size_t avail)
{
	unsigned c = s[0];
	unsigned lo = 0x80, hi = 0xBF;
	size_t n;

	if (c >= 0xC2 && c <= 0xDF)
		n = 2;
	else if (c >= 0xE0 && c <= 0xEF)
		n = 3;
	else if (c >= 0xF0 && c <= 0xF4)
		n = 4;
	else
		return 0; /* continuation byte, overlong C0/C1, or F5..FF */
	if (n > avail)
		return 0;
	/* The second byte carries the overlong/surrogate/range limits. */
	if (c == 0xE0)
		lo = 0xA0;
	else if (c == 0xED)
		hi = 0x9F;
	else if (c == 0xF0)
		lo = 0x90;
	else if (c == 0xF4)
		hi = 0x8F;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if ((s[i] & 0xC0) != 0x80)
			return 0;
	return n;
}

bool tft_json_is_utf8(const void *p, size_t len)
{
	const unsigned char *s = p;

	for (size_t i = 0; i < len;) {
		size_t k = s[i] < 0x80 ? 1 : utf8_seq_len(s + i, len - i);

		if (!k)
			return false;
		i += k;
	}
	return true;
}

size_t tft_json_escape(char *out, const char *str, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)str;
	char *o = out;
	size_t i = 0;

	while (i < len) {
		size_t run = i;

		/*
		 * Eight bytes at a time while none needs a look: no control
		 * character, '"', '\\' or non-ASCII byte (the zero-byte tests
		 * below are exact for "none at all", which is all they answer).
		 */
		while (len - run >= 8) {
			const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
			uint64_t x, q, b;

			memcpy(&x, s + run, 8);
			q = x ^ (ones * '"');
			b = x ^ (ones * '\\');
			if (((x | ((x - ones * 0x20) & ~x) | ((q - ones) & ~q) | ((b - ones) & ~b)) &
			     highs) != 0)
				break;
			run += 8;
		}
		while (run < len && esc_class[s[run]] == 0)
			run++;
		if (run > i) {
			memcpy(o, s + i, run - i);
			o += run - i;
			i = run;
			if (i == len)
				break;
		}
		unsigned c = s[i];
		if (esc_class[c] == 1) {
			*o++ = '\\';
			switch (c) {
			case '"': *o++ = '"'; break;
			case '\\': *o++ = '\\'; break;
			case '\b': *o++ = 'b'; break;
			case '\f': *o++ = 'f'; break;
			case '\n': *o++ = 'n'; break;
			case '\r': *o++ = 'r'; break;
			case '\t': *o++ = 't'; break;
			default:
				memcpy(o, "u00", 3);
				o[3] = hex[c >> 4];
				o[4] = hex[c & 15];
				o += 5;
			}
			i++;
			continue;
		}
		size_t n = utf8_seq_len(s + i, len - i);
		if (n) {
			memcpy(o, s + i, n);
			o += n;
			i += n;
		} else {
			memcpy(o, "\xEF\xBF\xBD", 3); /* U+FFFD */
			o += 3;
			i++;
		}
	}
	return (size_t)(o - out);
}

/* ---- raw calls ---------------------------------------------------------- */

/* Escape at most this many input bytes per reservation (bounded buffer). */
#define ESC_PIECE 16384

void tft_json_write_raw_str(struct tft_json_writer *w, const char *s, size_t len)
{
	if (!tft_json_write_reserve(w, tft_json_escape_bound(len < ESC_PIECE ? len : ESC_PIECE) + 2))
		return;
	w->buf[w->len++] = '"';
	while (len > ESC_PIECE) {
		/* Cut on a UTF-8 boundary so a sequence is never split. */
		size_t piece = ESC_PIECE;
		while (piece > ESC_PIECE - 4 && ((unsigned char)s[piece] & 0xC0) == 0x80)
			piece--;
		if (!tft_json_write_reserve(w, tft_json_escape_bound(piece)))
			return;
		w->len += tft_json_escape(w->buf + w->len, s, piece);
		s += piece;
		len -= piece;
	}
	if (!tft_json_write_reserve(w, tft_json_escape_bound(len) + 1))
		return;
	w->len += tft_json_escape(w->buf + w->len, s, len);
	w->buf[w->len++] = '"';
}

void tft_json_write_raw_int(struct tft_json_writer *w, int64_t v)
{
	if (tft_json_write_reserve(w, 24))
		w->len += tft_json_fmt_int(w->buf + w->len, v);
}

void tft_json_write_raw_uint(struct tft_json_writer *w, uint64_t v)
{
	if (tft_json_write_reserve(w, 24))
		w->len += tft_json_fmt_uint(w->buf + w->len, v);
}

void tft_json_write_raw_ns_us(struct tft_json_writer *w, int64_t ns)
{
	if (tft_json_write_reserve(w, 28))
		w->len += tft_json_fmt_ns_us(w->buf + w->len, ns);
}

void tft_json_write_raw_double(struct tft_json_writer *w, double v, bool keep_point)
{
	if (tft_json_write_reserve(w, 48))
		w->len += tft_json_fmt_double(w->buf + w->len, v, keep_point);
}

/* ---- Python's json.dumps(obj, indent=4) ----------------------------------- */

static void py_newline(struct tft_json_py *j)
{
	static const char spaces[] = "                                        ";

	tft_json_write_raw_char(j->w, '\n');
	tft_json_write_raw(j->w, spaces, (size_t)(4 * j->depth));
}

void tft_json_py_open(struct tft_json_py *j, char c)
{
	tft_json_write_raw_char(j->w, c);
	j->depth++;
	j->first[j->depth] = true;
}

void tft_json_py_close(struct tft_json_py *j, char c)
{
	bool empty = j->first[j->depth];

	j->depth--;
	if (!empty)
		py_newline(j);
	tft_json_write_raw_char(j->w, c);
}

void tft_json_py_item(struct tft_json_py *j)
{
	if (!j->first[j->depth])
		tft_json_write_raw_char(j->w, ',');
	j->first[j->depth] = false;
	py_newline(j);
}

/* The code point of the valid UTF-8 sequence s[0..n) (utf8_seq_len). */
static uint32_t utf8_decode(const unsigned char *s, size_t n)
{
	uint32_t cp = s[0] & (n == 2 ? 0x1f : n == 3 ? 0x0f : 0x07);

	for (size_t k = 1; k < n; k++)
		cp = cp << 6 | (s[k] & 0x3f);
	return cp;
}

/* ensure_ascii: ' '..'~' as they are, '"' '\\' and \n \r \t \b \f escaped, the rest \uXXXX (UTF-16). */
void tft_json_py_str(struct tft_json_py *j, const char *str, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;

	tft_json_write_raw_char(j->w, '"');
	while (i < len) {
		size_t run = i, n;
		uint32_t cp;
		char e[12];

		while (run < len && s[run] >= 0x20 && s[run] <= 0x7e && s[run] != '"' && s[run] != '\\')
			run++;
		if (run > i) {
			tft_json_write_raw(j->w, str + i, run - i);
			i = run;
			continue;
		}
		/* an invalid byte is U+FFFD, one byte each */
		n = s[i] < 0x80 ? 1 : utf8_seq_len(s + i, len - i);
		cp = n == 1 ? s[i] : n ? utf8_decode(s + i, n) : 0xfffd;
		i += n ? n : 1;
		switch (cp) {
		case '"': tft_json_write_raw(j->w, "\\\"", 2); continue;
		case '\\': tft_json_write_raw(j->w, "\\\\", 2); continue;
		case '\n': tft_json_write_raw(j->w, "\\n", 2); continue;
		case '\r': tft_json_write_raw(j->w, "\\r", 2); continue;
		case '\t': tft_json_write_raw(j->w, "\\t", 2); continue;
		case '\b': tft_json_write_raw(j->w, "\\b", 2); continue;
		case '\f': tft_json_write_raw(j->w, "\\f", 2); continue;
		default: break;
		}
		if (cp >= 0x10000) {
			uint32_t v = cp - 0x10000, hi = 0xd800 | (v >> 10), lo = 0xdc00 | (v & 0x3ff);

			e[0] = '\\', e[1] = 'u', e[2] = hex[hi >> 12], e[3] = hex[(hi >> 8) & 15],
			e[4] = hex[(hi >> 4) & 15], e[5] = hex[hi & 15];
			e[6] = '\\', e[7] = 'u', e[8] = hex[lo >> 12], e[9] = hex[(lo >> 8) & 15],
			e[10] = hex[(lo >> 4) & 15], e[11] = hex[lo & 15];
			tft_json_write_raw(j->w, e, 12);
		} else {
			e[0] = '\\', e[1] = 'u', e[2] = hex[cp >> 12], e[3] = hex[(cp >> 8) & 15],
			e[4] = hex[(cp >> 4) & 15], e[5] = hex[cp & 15];
			tft_json_write_raw(j->w, e, 6);
		}
	}
	tft_json_write_raw_char(j->w, '"');
}

void tft_json_py_key(struct tft_json_py *j, const char *k)
{
	tft_json_py_item(j);
	tft_json_py_str(j, k, strlen(k));
	tft_json_write_raw(j->w, ": ", 2);
}

/* ---- structural calls --------------------------------------------------- */

static void newline_indent(struct tft_json_writer *w)
{
	size_t n = 1 + 2 * (size_t)w->depth;

	if (!tft_json_write_reserve(w, n))
		return;
	w->buf[w->len] = '\n';
	memset(w->buf + w->len + 1, ' ', n - 1);
	w->len += n;
}

/* Separator before a value or a key. */
static void before_item(struct tft_json_writer *w)
{
	if (w->sep == 2) /* the value of a key: the key wrote the separator */
		return;
	if (w->sep == 1)
		tft_json_write_raw_char(w, ',');
	if (w->pretty && w->depth)
		newline_indent(w);
}

void tft_json_write_begin_object(struct tft_json_writer *w)
{
	before_item(w);
	tft_json_write_raw_char(w, '{');
	w->depth++;
	w->sep = 0;
}

void tft_json_write_begin_array(struct tft_json_writer *w)
{
	before_item(w);
	tft_json_write_raw_char(w, '[');
	w->depth++;
	w->sep = 0;
}

static void end_container(struct tft_json_writer *w, char c)
{
	if (w->depth)
		w->depth--;
	if (w->pretty && w->sep == 1)
		newline_indent(w);
	tft_json_write_raw_char(w, c);
	w->sep = 1;
}

void tft_json_write_end_object(struct tft_json_writer *w)
{
	end_container(w, '}');
}

void tft_json_write_end_array(struct tft_json_writer *w)
{
	end_container(w, ']');
}

void tft_json_write_key(struct tft_json_writer *w, const char *key)
{
	before_item(w);
	tft_json_write_raw_str(w, key, strlen(key));
	if (w->pretty)
		tft_json_write_raw(w, ": ", 2);
	else
		tft_json_write_raw_char(w, ':');
	w->sep = 2;
}

void tft_json_write_str(struct tft_json_writer *w, const char *s, size_t len)
{
	before_item(w);
	tft_json_write_raw_str(w, s, len);
	w->sep = 1;
}

void tft_json_write_cstr(struct tft_json_writer *w, const char *s)
{
	if (!s)
		tft_json_write_null(w);
	else
		tft_json_write_str(w, s, strlen(s));
}

void tft_json_write_int(struct tft_json_writer *w, int64_t v)
{
	before_item(w);
	tft_json_write_raw_int(w, v);
	w->sep = 1;
}

void tft_json_write_uint(struct tft_json_writer *w, uint64_t v)
{
	before_item(w);
	tft_json_write_raw_uint(w, v);
	w->sep = 1;
}

void tft_json_write_double(struct tft_json_writer *w, double v)
{
	before_item(w);
	tft_json_write_raw_double(w, v, false);
	w->sep = 1;
}

void tft_json_write_bool(struct tft_json_writer *w, bool v)
{
	before_item(w);
	if (v)
		tft_json_write_raw(w, "true", 4);
	else
		tft_json_write_raw(w, "false", 5);
	w->sep = 1;
}

void tft_json_write_null(struct tft_json_writer *w)
{
	before_item(w);
	tft_json_write_raw(w, "null", 4);
	w->sep = 1;
}

void tft_json_write_ns_us(struct tft_json_writer *w, int64_t ns)
{
	before_item(w);
	tft_json_write_raw_ns_us(w, ns);
	w->sep = 1;
}

void tft_json_write_newline(struct tft_json_writer *w)
{
	if (w->sep == 1)
		tft_json_write_raw_char(w, ',');
	tft_json_write_raw_char(w, '\n');
	w->sep = 0;
}

void tft_json_write_value_raw(struct tft_json_writer *w, const char *json, size_t len)
{
	before_item(w);
	tft_json_write_raw(w, json, len);
	w->sep = 1;
}

bool tft_json_is_value(const char *json, size_t len)
{
	struct tft_json_reader r;
	char *buf;
	bool ok;

	for (size_t i = 0; i < len;) { /* UTF-8 throughout: the reader checks only the grammar */
		size_t n = (unsigned char)json[i] < 0x80 ? 1 : utf8_seq_len((const unsigned char *)json + i, len - i);

		if (!n)
			return false;
		i += n;
	}
	buf = malloc(len + TFT_JSON_PAD + 1); /* the reader wants a NUL and padding after the text */
	if (!buf)
		return false;
	memcpy(buf, json, len);
	memset(buf + len, 0, TFT_JSON_PAD + 1);
	tft_json_reader_init_mem(&r, buf, len, NULL, NULL);
	ok = tft_json_skip_checked(&r, NULL, NULL) == 0;
	for (size_t i = r.pos; ok && i < len; i++) /* nothing after it but spaces */
		ok = buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\n' || buf[i] == '\r';
	tft_json_reader_fini(&r);
	free(buf);
	return ok;
}

bool tft_json_memo_is_value(struct tft_json_memo *m, uint32_t id, const char *json, size_t len)
{
	if (tft_grow_size_ex((void **)&m->state, &m->cap, (size_t)id + 1, 1, 1024, 1))
		return tft_json_is_value(json, len);
	if (!m->state[id])
		m->state[id] = tft_json_is_value(json, len) ? 1 : 2;
	return m->state[id] == 1;
}

void tft_json_memo_free(struct tft_json_memo *m)
{
	free(m->state);
	m->state = NULL;
	m->cap = 0;
}

void tft_json_write_value_checked(struct tft_json_writer *w, const char *json, size_t len)
{
	if (tft_json_is_value(json, len))
		tft_json_write_value_raw(w, json, len);
	else
		tft_json_write_str(w, json, len);
}
