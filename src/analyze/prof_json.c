/* SPDX-License-Identifier: MIT */
/*
 * A small recursive-descent JSON parser into an arena tree (prof_json.h).
 * Strict enough for what tftracer's importers and the Python module write;
 * anything else is refused (NULL), not guessed at.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/prof_json.h"
#include "core/arena.h"
#include "core/ascii.h"

#define PJ_MAX_DEPTH 64

struct pj_doc {
	struct tft_arena mem; /* the document's values and strings */
	struct pj *root;
};

struct parser {
	struct pj_doc *doc;
	const char *p, *end;
	int depth;
};

/* n bytes of the document, 8-byte aligned (every size is rounded up to 8). */
static void *arena(struct pj_doc *d, size_t n)
{
	if (!d->mem.block)
		d->mem.block = 16384;
	return tft_arena_alloc(&d->mem, (n + 7) & ~(size_t)7);
}

static void ws(struct parser *ps)
{
	while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
		ps->p++;
}

static char *put_utf8(char *o, uint32_t cp)
{
	if (cp < 0x80) {
		*o++ = (char)cp;
	} else if (cp < 0x800) {
		*o++ = (char)(0xC0 | cp >> 6);
		*o++ = (char)(0x80 | (cp & 0x3F));
	} else if (cp < 0x10000) {
		*o++ = (char)(0xE0 | cp >> 12);
		*o++ = (char)(0x80 | ((cp >> 6) & 0x3F));
		*o++ = (char)(0x80 | (cp & 0x3F));
	} else {
		*o++ = (char)(0xF0 | cp >> 18);
		*o++ = (char)(0x80 | ((cp >> 12) & 0x3F));
		*o++ = (char)(0x80 | ((cp >> 6) & 0x3F));
		*o++ = (char)(0x80 | (cp & 0x3F));
	}
	return o;
}

/* A string at ps->p (on the '"'): decoded into the arena. */
static const char *string(struct parser *ps, size_t *len)
{
	const char *q = ps->p + 1;
	char *out, *o;

	/* the decoded text is never longer than the source */
	for (q = ps->p + 1; q < ps->end && *q != '"'; q++)
		if (*q == '\\')
			q++;
	if (q >= ps->end)
		return NULL;
	out = arena(ps->doc, (size_t)(q - ps->p) + 1);
	if (!out)
		return NULL;
	o = out;
	for (q = ps->p + 1; *q != '"'; q++) {
		unsigned char c = (unsigned char)*q;
		if (c < 0x20)
			return NULL;
		if (c != '\\') {
			*o++ = (char)c;
			continue;
		}
		q++;
		switch (*q) {
		case '"': *o++ = '"'; break;
		case '\\': *o++ = '\\'; break;
		case '/': *o++ = '/'; break;
		case 'b': *o++ = '\b'; break;
		case 'f': *o++ = '\f'; break;
		case 'n': *o++ = '\n'; break;
		case 'r': *o++ = '\r'; break;
		case 't': *o++ = '\t'; break;
		case 'u': {
			uint32_t cp = 0;
			if (ps->end - q < 5)
				return NULL;
			for (int i = 1; i <= 4; i++) {
				int h = tft_hexval(q[i]);
				if (h < 0)
					return NULL;
				cp = cp << 4 | (uint32_t)h;
			}
			q += 4;
			if (cp >= 0xD800 && cp < 0xDC00 && ps->end - q >= 7 && q[1] == '\\' && q[2] == 'u') {
				uint32_t lo = 0;
				int okp = 1;
				for (int i = 3; i <= 6; i++) {
					int h = tft_hexval(q[i]);
					if (h < 0)
						okp = 0;
					lo = lo << 4 | (uint32_t)(h < 0 ? 0 : h);
				}
				if (okp && lo >= 0xDC00 && lo < 0xE000) {
					cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
					q += 6;
				}
			}
			o = put_utf8(o, cp);
			break;
		}
		default: return NULL;
		}
	}
	*o = '\0';
	*len = (size_t)(o - out);
	ps->p = q + 1;
	return out;
}

static struct pj *value(struct parser *ps);

static struct pj *node(struct parser *ps, int type)
{
	struct pj *v = arena(ps->doc, sizeof(*v));

	if (v) {
		memset(v, 0, sizeof(*v));
		v->type = (uint8_t)type;
	}
	return v;
}

static int lit(struct parser *ps, const char *w)
{
	size_t n = strlen(w);

	if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, w, n) != 0)
		return 0;
	ps->p += n;
	return 1;
}

static struct pj *number(struct parser *ps)
{
	const char *s = ps->p;
	char buf[64];
	bool frac = false;
	struct pj *v;
	size_t n;

	if (ps->p < ps->end && *ps->p == '-')
		ps->p++;
	if (ps->p >= ps->end || *ps->p < '0' || *ps->p > '9')
		return NULL;
	while (ps->p < ps->end && ((*ps->p >= '0' && *ps->p <= '9') || *ps->p == '.' || *ps->p == 'e' ||
				    *ps->p == 'E' || *ps->p == '+' || *ps->p == '-')) {
		if (*ps->p == '.' || *ps->p == 'e' || *ps->p == 'E')
			frac = true;
		ps->p++;
	}
	n = (size_t)(ps->p - s);
	if (n >= sizeof(buf))
		return NULL;
	memcpy(buf, s, n);
	buf[n] = '\0';
	if (!(v = node(ps, PJ_NUM)))
		return NULL;
	char *end;
	errno = 0;
	v->d = strtod(buf, &end);
	if (*end)
		return NULL;
	if (!frac) {
		errno = 0;
		long long x = strtoll(buf, &end, 10);
		if (!errno && !*end) {
			v->is_int = true;
			v->i = x;
			return v;
		}
	}
	v->i = isfinite(v->d) && v->d < 9.2e18 && v->d > -9.2e18 ? (int64_t)v->d : 0;
	return v;
}

static struct pj *container(struct parser *ps, int type)
{
	char close = type == PJ_ARR ? ']' : '}';
	struct pj *v = node(ps, type), **tail;

	if (!v || ++ps->depth > PJ_MAX_DEPTH)
		return NULL;
	tail = &v->child;
	ps->p++;
	ws(ps);
	if (ps->p < ps->end && *ps->p == close) {
		ps->p++;
		ps->depth--;
		return v;
	}
	for (;;) {
		const char *key = NULL;
		struct pj *c;
		size_t kl;

		ws(ps);
		if (type == PJ_OBJ) {
			if (ps->p >= ps->end || *ps->p != '"' || !(key = string(ps, &kl)))
				return NULL;
			ws(ps);
			if (ps->p >= ps->end || *ps->p != ':')
				return NULL;
			ps->p++;
		}
		if (!(c = value(ps)))
			return NULL;
		c->key = key;
		*tail = c;
		tail = &c->next;
		v->n++;
		ws(ps);
		if (ps->p < ps->end && *ps->p == ',') {
			ps->p++;
			continue;
		}
		if (ps->p < ps->end && *ps->p == close) {
			ps->p++;
			ps->depth--;
			return v;
		}
		return NULL;
	}
}

static struct pj *value(struct parser *ps)
{
	struct pj *v;

	ws(ps);
	if (ps->p >= ps->end)
		return NULL;
	switch (*ps->p) {
	case '{': return container(ps, PJ_OBJ);
	case '[': return container(ps, PJ_ARR);
	case '"':
		if (!(v = node(ps, PJ_STR)))
			return NULL;
		v->s = string(ps, &v->len);
		return v->s ? v : NULL;
	case 't': return lit(ps, "true") ? node(ps, PJ_TRUE) : NULL;
	case 'f': return lit(ps, "false") ? node(ps, PJ_FALSE) : NULL;
	case 'n': return lit(ps, "null") ? node(ps, PJ_NULL) : NULL;
	default: return number(ps);
	}
}

struct pj_doc *tft_pj_parse(const char *text, size_t len)
{
	struct pj_doc *d = calloc(1, sizeof(*d));
	struct parser ps = { .doc = d, .p = text, .end = text + len };

	if (!d || !text)
		goto fail;
	d->root = value(&ps);
	ws(&ps);
	if (!d->root || ps.p != ps.end)
		goto fail;
	return d;
fail:
	tft_pj_free(d);
	return NULL;
}

const struct pj *tft_pj_root(const struct pj_doc *d)
{
	return d ? d->root : NULL;
}

void tft_pj_free(struct pj_doc *d)
{
	if (!d)
		return;
	tft_arena_free(&d->mem);
	free(d);
}

const struct pj *tft_pj_get(const struct pj *o, const char *key)
{
	if (!o || o->type != PJ_OBJ)
		return NULL;
	for (const struct pj *c = o->child; c; c = c->next)
		if (c->key && strcmp(c->key, key) == 0)
			return c;
	return NULL;
}

const struct pj *tft_pj_at(const struct pj *a, uint32_t i)
{
	const struct pj *c;

	if (!a || a->type != PJ_ARR)
		return NULL;
	for (c = a->child; c && i; c = c->next, i--)
		;
	return c;
}

int64_t tft_pj_int(const struct pj *v, int64_t def)
{
	if (!v)
		return def;
	if (v->type == PJ_NUM)
		return v->i;
	if (v->type == PJ_TRUE)
		return 1;
	if (v->type == PJ_FALSE)
		return 0;
	return def;
}

int tft_pj_dims(const struct pj *v, int64_t *dims, int max)
{
	int n = 0;

	if (!v || v->type != PJ_ARR)
		return -1;
	for (const struct pj *c = v->child; c; c = c->next) {
		if (c->type != PJ_NUM || !c->is_int || n >= max)
			return -1;
		dims[n++] = c->i;
	}
	return n;
}
