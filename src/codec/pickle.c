/* SPDX-License-Identifier: MIT */
/*
 * Safe pickle reader: a stack machine over the protocol 2-5 opcodes that
 * builds inert values. Nothing is imported or called; classes come from an
 * allow-list and the few "callables" the files use are interpreted here.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "core/hmap.h"
#include "codec/pickle.h"
#include "core/strtab.h"

#define PK_CHUNK 256u
#define PK_DEFAULT_MAX_VALUES (4u << 20)
#define PK_DEFAULT_MAX_DEPTH 100u
#define PK_MAX_GLOBAL_LINE 512u
#define PK_MAX_DEPTH_LIMIT 10000u /* bounds the graph check's recursion */
#define PK_INDEX_MIN 16u          /* dicts with more pairs get a hash index */

struct pk_chunk {
	struct pk_chunk *next; /* owned */
	uint32_t used;
	struct tft_pickle_value v[PK_CHUNK];
};

struct tft_pickle {
	const uint8_t *data; /* borrowed: the input */
	size_t len, pos;
	size_t stop_pos;     /* bytes consumed through STOP */
	int protocol;
	struct tft_error *err; /* borrowed during parse */
	int status;            /* first failure (err may be NULL) */

	struct pk_chunk *chunks; /* owned list */
	void **owned;            /* owned: converted byte strings */
	uint32_t nowned, cowned;

	struct tft_pickle_value *root; /* borrowed from chunks */

	/* parser state (freed after parse) */
	struct tft_pickle_value **stack; /* owned */
	uint32_t nstack, cstack;
	uint32_t *marks; /* owned: stack heights at MARK */
	uint32_t nmarks, cmarks;
	struct tft_pickle_value **memo; /* owned; NULL = unset slot */
	uint32_t cmemo, memo_count;
	uint64_t budget; /* values + container slots created */
	uint32_t max_values, max_depth;
};

/* ---- allow-list ------------------------------------------------------------ */

static const struct {
	const char *module, *name;
	uint8_t cls;
} allowed[] = {
	{ "collections", "OrderedDict", TFT_PICKLE_CLS_ORDERED_DICT },
	{ "datetime", "datetime", TFT_PICKLE_CLS_DATETIME },
	{ "datetime", "date", TFT_PICKLE_CLS_DATE },
	{ "datetime", "timedelta", TFT_PICKLE_CLS_TIMEDELTA },
	{ "copyreg", "_reconstructor", TFT_PICKLE_CLS_RECONSTRUCTOR },
	{ "copy_reg", "_reconstructor", TFT_PICKLE_CLS_RECONSTRUCTOR },
	{ "builtins", "object", TFT_PICKLE_CLS_OBJECT },
	{ "__builtin__", "object", TFT_PICKLE_CLS_OBJECT },
	{ "_codecs", "encode", TFT_PICKLE_CLS_CODECS_ENCODE },
	{ "builtins", "bytes", TFT_PICKLE_CLS_BYTES },
	{ "__builtin__", "bytes", TFT_PICKLE_CLS_BYTES },
	{ "tensorflow.core.protobuf.config_pb2", "RunMetadata", TFT_PICKLE_CLS_RUN_METADATA },
	{ "tensorflow.core.framework.step_stats_pb2", "StepStats", TFT_PICKLE_CLS_STEP_STATS },
	{ "tftracer.tracing_server", "TracingSource", TFT_PICKLE_CLS_TRACING_SOURCE },
};

static const char *const class_names[TFT_PICKLE_CLS_MAX + 1] = {
	[TFT_PICKLE_CLS_NONE] = "",
	[TFT_PICKLE_CLS_ORDERED_DICT] = "collections.OrderedDict",
	[TFT_PICKLE_CLS_DATETIME] = "datetime.datetime",
	[TFT_PICKLE_CLS_DATE] = "datetime.date",
	[TFT_PICKLE_CLS_TIMEDELTA] = "datetime.timedelta",
	[TFT_PICKLE_CLS_RECONSTRUCTOR] = "copyreg._reconstructor",
	[TFT_PICKLE_CLS_OBJECT] = "builtins.object",
	[TFT_PICKLE_CLS_CODECS_ENCODE] = "_codecs.encode",
	[TFT_PICKLE_CLS_BYTES] = "builtins.bytes",
	[TFT_PICKLE_CLS_RUN_METADATA] = "tensorflow.core.protobuf.config_pb2.RunMetadata",
	[TFT_PICKLE_CLS_STEP_STATS] = "tensorflow.core.framework.step_stats_pb2.StepStats",
	[TFT_PICKLE_CLS_TRACING_SOURCE] = "tftracer.tracing_server.TracingSource",
};

const char *tft_pickle_class_name(int cls)
{
	return cls > 0 && cls <= TFT_PICKLE_CLS_MAX ? class_names[cls] : "";
}

const char *tft_pickle_type_name(int type)
{
	static const char *const names[] = { "?",     "none",  "bool",  "int",  "int",
					     "float", "str",   "bytes", "tuple", "list",
					     "dict",  "set",   "class", "object" };

	return type > 0 && type <= TFT_PICKLE_OBJECT ? names[type] : "?";
}

/* ---- errors ------------------------------------------------------------------ */

__attribute__((format(printf, 3, 4))) static int fail(struct tft_pickle *p, int64_t off,
						      const char *fmt, ...)
{
	char msg[TFT_ERROR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!p->status)
		p->status = TFT_EFORMAT;
	return tft_error_set(p->err, TFT_EFORMAT, off, "pickle: %s", msg);
}

static int oom(struct tft_pickle *p)
{
	if (!p->status)
		p->status = TFT_ENOMEM;
	return tft_error_set(p->err, TFT_ENOMEM, -1, "pickle: out of memory");
}

/* Printable rendering of a (possibly hostile) name for messages; size >= 9. */
static void printable(char *out, size_t size, const uint8_t *s, size_t len)
{
	size_t i, j = 0;

	for (i = 0; i < len && j + 8 < size; i++) {
		unsigned char c = s[i];

		if (c >= 0x20 && c < 0x7f)
			out[j++] = (char)c;
		else
			j += (size_t)snprintf(out + j, size - j, "\\x%02x", c);
	}
	if (i < len) {
		memcpy(out + j, "...", 3);
		j += 3;
	}
	out[j] = '\0';
}

/* ---- allocation ------------------------------------------------------------ */

static int charge(struct tft_pickle *p, uint64_t n, int64_t off)
{
	p->budget += n;
	if (p->budget > p->max_values)
		return fail(p, off, "too many values (limit %u)", p->max_values);
	return 0;
}

static struct tft_pickle_value *new_value(struct tft_pickle *p, int type, int64_t off)
{
	struct tft_pickle_value *v;

	if (charge(p, 1, off))
		return NULL;
	if (!p->chunks || p->chunks->used == PK_CHUNK) {
		struct pk_chunk *c = malloc(sizeof(*c));

		if (!c) {
			oom(p);
			return NULL;
		}
		c->next = p->chunks;
		c->used = 0;
		p->chunks = c;
	}
	v = &p->chunks->v[p->chunks->used++];
	memset(v, 0, sizeof(*v));
	v->type = (uint8_t)type;
	v->offset = off;
	return v;
}


/* Item slots a container uses (a DICT holds key and value). */
static uint64_t slots_of(const struct tft_pickle_value *c)
{
	return c->type == TFT_PICKLE_DICT ? 2ull * c->n : c->n;
}

static int add_items(struct tft_pickle *p, struct tft_pickle_value *c,
		     struct tft_pickle_value *const *items, uint32_t k, int64_t off)
{
	uint64_t used = slots_of(c);

	if (k == 0)
		return 0;
	if (charge(p, k, off))
		return TFT_EFORMAT;
	if (tft_grow((void **)&c->u.items, &c->cap_, used + k, sizeof(*c->u.items)))
		return oom(p);
	memcpy(c->u.items + used, items, (size_t)k * sizeof(*items));
	c->n += c->type == TFT_PICKLE_DICT ? k / 2 : k;
	return 0;
}

static void *own(struct tft_pickle *p, size_t n)
{
	void *b;

	if (tft_grow((void **)&p->owned, &p->cowned, (uint64_t)p->nowned + 1, sizeof(void *)))
		return NULL;
	b = malloc(n ? n : 1);
	if (b)
		p->owned[p->nowned++] = b;
	return b;
}

/* ---- stack ---------------------------------------------------------------------- */

static int push(struct tft_pickle *p, struct tft_pickle_value *v, int64_t off)
{
	if (!v)
		return p->status ? p->status : TFT_ENOMEM;
	if (p->nstack >= p->max_values)
		return fail(p, off, "stack too deep (limit %u)", p->max_values);
	if (tft_grow((void **)&p->stack, &p->cstack, (uint64_t)p->nstack + 1, sizeof(*p->stack)))
		return oom(p);
	p->stack[p->nstack++] = v;
	return 0;
}

/* Items above the innermost mark. */
static uint32_t mark_base(const struct tft_pickle *p)
{
	return p->nmarks ? p->marks[p->nmarks - 1] : 0;
}

static struct tft_pickle_value *pop(struct tft_pickle *p, int64_t off, const char *op)
{
	if (p->nstack <= mark_base(p)) {
		fail(p, off, "%s: stack underflow", op);
		return NULL;
	}
	return p->stack[--p->nstack];
}

static struct tft_pickle_value *top(struct tft_pickle *p, int64_t off, const char *op)
{
	if (p->nstack <= mark_base(p)) {
		fail(p, off, "%s: stack underflow", op);
		return NULL;
	}
	return p->stack[p->nstack - 1];
}

/* Close the innermost mark: *base = index of the first item above it. */
static int pop_mark(struct tft_pickle *p, int64_t off, const char *op, uint32_t *base)
{
	if (!p->nmarks)
		return fail(p, off, "%s: no MARK on the stack", op);
	*base = p->marks[--p->nmarks];
	return 0;
}

/* ---- input ------------------------------------------------------------------------- */

static int need(struct tft_pickle *p, size_t n, int64_t off, const char *op)
{
	if (p->len - p->pos < n)
		return fail(p, off, "truncated input: %s needs %zu more bytes, %zu left", op, n,
			    p->len - p->pos);
	return 0;
}

static uint64_t le(const uint8_t *b, unsigned n)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)b[i] << (8 * i);
	return v;
}

/* A length-prefixed string/bytes value; nlen = size of the length field. */
static int op_sized(struct tft_pickle *p, int type, unsigned nlen, bool is_signed, int64_t off,
		    const char *op)
{
	uint64_t n;
	struct tft_pickle_value *v;
	int r;

	if ((r = need(p, nlen, off, op)))
		return r;
	n = le(p->data + p->pos, nlen);
	if (is_signed && nlen == 4 && (n & 0x80000000u))
		return fail(p, off, "%s: negative length", op);
	p->pos += nlen;
	if (n > p->len - p->pos)
		return fail(p, off, "truncated input: %s of %llu bytes, %zu left", op,
			    (unsigned long long)n, p->len - p->pos);
	v = new_value(p, type, off);
	if (!v)
		return p->status ? p->status : TFT_ENOMEM;
	v->u.s.p = p->data + p->pos;
	v->u.s.len = (size_t)n;
	p->pos += (size_t)n;
	return push(p, v, off);
}

static int push_int(struct tft_pickle *p, int64_t i, int64_t off)
{
	struct tft_pickle_value *v = new_value(p, TFT_PICKLE_INT, off);

	if (v)
		v->u.i = i;
	return push(p, v, off);
}

/* LONG1 / LONG4: little-endian two's complement of n bytes. */
static int op_long(struct tft_pickle *p, unsigned nlen, int64_t off, const char *op)
{
	uint64_t n;
	const uint8_t *b;
	struct tft_pickle_value *v;
	int r;

	if ((r = need(p, nlen, off, op)))
		return r;
	n = le(p->data + p->pos, nlen);
	if (nlen == 4 && (n & 0x80000000u))
		return fail(p, off, "%s: negative length", op);
	p->pos += nlen;
	if (n > p->len - p->pos)
		return fail(p, off, "truncated input: %s of %llu bytes, %zu left", op,
			    (unsigned long long)n, p->len - p->pos);
	b = p->data + p->pos;
	p->pos += (size_t)n;
	if (n <= 8) {
		uint64_t u = le(b, (unsigned)n);

		if (n > 0 && n < 8 && (b[n - 1] & 0x80))
			u |= ~0ull << (8 * n); /* sign-extend */
		return push_int(p, (int64_t)u, off);
	}
	v = new_value(p, TFT_PICKLE_BIGINT, off);
	if (v) {
		v->u.s.p = b;
		v->u.s.len = (size_t)n;
	}
	return push(p, v, off);
}

/* ---- classes and objects -------------------------------------------------------------- */

static int push_global(struct tft_pickle *p, const uint8_t *mod, size_t mlen, const uint8_t *name,
		       size_t nlen, int64_t off)
{
	struct tft_pickle_value *v;
	char m[160], n[160];

	for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++) {
		if (strlen(allowed[i].module) == mlen && memcmp(allowed[i].module, mod, mlen) == 0 &&
		    strlen(allowed[i].name) == nlen && memcmp(allowed[i].name, name, nlen) == 0) {
			v = new_value(p, TFT_PICKLE_CLASS, off);
			if (v)
				v->cls = allowed[i].cls;
			return push(p, v, off);
		}
	}
	printable(m, sizeof(m), mod, mlen);
	printable(n, sizeof(n), name, nlen);
	return fail(p, off, "class %s.%s is not allowed (only the classes of TensorFlow tracer files are)",
		    m, n);
}

static int op_global(struct tft_pickle *p, int64_t off)
{
	const uint8_t *line[2];
	size_t len[2];

	for (int k = 0; k < 2; k++) {
		const uint8_t *s = p->data + p->pos;
		size_t left = p->len - p->pos, lim = left < PK_MAX_GLOBAL_LINE ? left : PK_MAX_GLOBAL_LINE;
		const uint8_t *nl = memchr(s, '\n', lim);

		if (!nl)
			return fail(p, off, "GLOBAL: %s name not terminated by a newline",
				    k ? "class" : "module");
		line[k] = s;
		len[k] = (size_t)(nl - s);
		p->pos += len[k] + 1;
	}
	return push_global(p, line[0], len[0], line[1], len[1], off);
}

static int op_stack_global(struct tft_pickle *p, int64_t off)
{
	struct tft_pickle_value *name, *mod;

	if (!(name = pop(p, off, "STACK_GLOBAL")) || !(mod = pop(p, off, "STACK_GLOBAL")))
		return TFT_EFORMAT;
	if (name->type != TFT_PICKLE_STR || mod->type != TFT_PICKLE_STR)
		return fail(p, off, "STACK_GLOBAL: module and name must be str, got %s and %s",
			    tft_pickle_type_name(mod->type), tft_pickle_type_name(name->type));
	return push_global(p, mod->u.s.p, mod->u.s.len, name->u.s.p, name->u.s.len, off);
}

static bool is_instantiable(int cls)
{
	return cls != TFT_PICKLE_CLS_RECONSTRUCTOR && cls != TFT_PICKLE_CLS_CODECS_ENCODE;
}

/* An instance of an allowed class: OrderedDict becomes a DICT. */
static struct tft_pickle_value *instantiate(struct tft_pickle *p, int cls,
					    struct tft_pickle_value *args, int64_t off)
{
	struct tft_pickle_value *v;

	if (cls == TFT_PICKLE_CLS_ORDERED_DICT) {
		v = new_value(p, TFT_PICKLE_DICT, off);
		if (v)
			v->cls = (uint8_t)cls;
		return v;
	}
	if (cls == TFT_PICKLE_CLS_BYTES) {
		v = new_value(p, TFT_PICKLE_BYTES, off);
		if (v && args && args->n == 1 && args->u.items[0]->type == TFT_PICKLE_BYTES)
			v->u.s = args->u.items[0]->u.s;
		return v;
	}
	v = new_value(p, TFT_PICKLE_OBJECT, off);
	if (v) {
		v->cls = (uint8_t)cls;
		v->u.obj.args = args;
	}
	return v;
}

/* latin-1 text (as UTF-8) -> bytes: what _codecs.encode(s, 'latin1') returns. */
static struct tft_pickle_value *latin1_bytes(struct tft_pickle *p, const struct tft_pickle_value *s,
					     int64_t off)
{
	const uint8_t *in = s->u.s.p;
	size_t n = s->u.s.len, j = 0;
	uint8_t *out = own(p, n);
	struct tft_pickle_value *v;

	if (!out) {
		oom(p);
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		uint8_t c = in[i];

		if (c < 0x80) {
			out[j++] = c;
		} else if ((c == 0xc2 || c == 0xc3) && i + 1 < n && (in[i + 1] & 0xc0) == 0x80) {
			out[j++] = (uint8_t)(((c & 0x03) << 6) | (in[i + 1] & 0x3f));
			i++;
		} else {
			fail(p, off, "_codecs.encode: text is not latin-1");
			return NULL;
		}
	}
	v = new_value(p, TFT_PICKLE_BYTES, off);
	if (v) {
		v->u.s.p = out;
		v->u.s.len = j;
	}
	return v;
}

static int op_reduce(struct tft_pickle *p, int64_t off)
{
	struct tft_pickle_value *args, *fn, *v = NULL;

	if (!(args = pop(p, off, "REDUCE")) || !(fn = pop(p, off, "REDUCE")))
		return TFT_EFORMAT;
	if (fn->type != TFT_PICKLE_CLASS)
		return fail(p, off, "REDUCE: cannot call a %s (only allowed classes)",
			    tft_pickle_type_name(fn->type));
	if (args->type != TFT_PICKLE_TUPLE)
		return fail(p, off, "REDUCE: arguments must be a tuple, got %s",
			    tft_pickle_type_name(args->type));
	switch (fn->cls) {
	case TFT_PICKLE_CLS_RECONSTRUCTOR: {
		/* copyreg._reconstructor(cls, base, state) */
		struct tft_pickle_value *cls = args->n == 3 ? args->u.items[0] : NULL;

		if (!cls || cls->type != TFT_PICKLE_CLASS || !is_instantiable(cls->cls) ||
		    args->u.items[1]->type != TFT_PICKLE_CLASS)
			return fail(p, off, "copyreg._reconstructor: expected (class, base, state)");
		v = instantiate(p, cls->cls, NULL, off);
		break;
	}
	case TFT_PICKLE_CLS_CODECS_ENCODE:
		if (args->n != 2 || args->u.items[0]->type != TFT_PICKLE_STR ||
		    !(tft_pickle_str_is(args->u.items[1], "latin1") ||
		      tft_pickle_str_is(args->u.items[1], "latin-1")))
			return fail(p, off, "_codecs.encode: expected (str, 'latin1')");
		v = latin1_bytes(p, args->u.items[0], off);
		break;
	case TFT_PICKLE_CLS_BYTES:
		if (args->n > 1 || (args->n == 1 && args->u.items[0]->type != TFT_PICKLE_BYTES))
			return fail(p, off, "builtins.bytes: expected () or (bytes,)");
		v = instantiate(p, fn->cls, args, off);
		break;
	case TFT_PICKLE_CLS_ORDERED_DICT:
		if (args->n > 1)
			return fail(p, off, "collections.OrderedDict: expected at most one argument");
		v = instantiate(p, fn->cls, NULL, off);
		if (v && args->n == 1) {
			/* OrderedDict([[k, v], ...]) (protocols 0 and 1) */
			struct tft_pickle_value *l = args->u.items[0];

			if (l->type != TFT_PICKLE_LIST && l->type != TFT_PICKLE_TUPLE)
				return fail(p, off, "collections.OrderedDict: expected a list of pairs");
			for (uint32_t i = 0; i < l->n; i++) {
				struct tft_pickle_value *kv = l->u.items[i];
				int r;

				if ((kv->type != TFT_PICKLE_LIST && kv->type != TFT_PICKLE_TUPLE) ||
				    kv->n != 2)
					return fail(p, off, "collections.OrderedDict: expected a list of pairs");
				if ((r = add_items(p, v, kv->u.items, 2, off)))
					return r;
			}
		}
		break;
	default:
		v = instantiate(p, fn->cls, args, off);
		break;
	}
	return push(p, v, off);
}

static int op_newobj(struct tft_pickle *p, int64_t off, bool ex)
{
	struct tft_pickle_value *kwargs = NULL, *args, *cls;
	const char *op = ex ? "NEWOBJ_EX" : "NEWOBJ";

	if (ex && !(kwargs = pop(p, off, op)))
		return TFT_EFORMAT;
	if (!(args = pop(p, off, op)) || !(cls = pop(p, off, op)))
		return TFT_EFORMAT;
	if (cls->type != TFT_PICKLE_CLASS || !is_instantiable(cls->cls))
		return fail(p, off, "%s: cannot instantiate a %s", op,
			    cls->type == TFT_PICKLE_CLASS ? tft_pickle_class_name(cls->cls)
							  : tft_pickle_type_name(cls->type));
	if (args->type != TFT_PICKLE_TUPLE || (kwargs && kwargs->type != TFT_PICKLE_DICT))
		return fail(p, off, "%s: malformed arguments", op);
	return push(p, instantiate(p, cls->cls, args, off), off);
}

static int op_build(struct tft_pickle *p, int64_t off)
{
	struct tft_pickle_value *state, *obj;

	if (!(state = pop(p, off, "BUILD")) || !(obj = top(p, off, "BUILD")))
		return TFT_EFORMAT;
	if (obj->type == TFT_PICKLE_OBJECT) {
		obj->u.obj.state = state;
		return 0;
	}
	/* OrderedDict instance attributes: nothing we need; Python sets __dict__. */
	if (obj->type == TFT_PICKLE_DICT && obj->cls == TFT_PICKLE_CLS_ORDERED_DICT)
		return 0;
	return fail(p, off, "BUILD: cannot set the state of a %s", tft_pickle_type_name(obj->type));
}

/* ---- containers -------------------------------------------------------------------- */

static int op_collect(struct tft_pickle *p, int type, int64_t off, const char *op)
{
	uint32_t base = 0;
	struct tft_pickle_value *v;
	int r;

	if ((r = pop_mark(p, off, op, &base)))
		return r;
	if (type == TFT_PICKLE_DICT && ((p->nstack - base) & 1))
		return fail(p, off, "%s: odd number of items", op);
	v = new_value(p, type, off);
	if (!v)
		return p->status ? p->status : TFT_ENOMEM;
	if ((r = add_items(p, v, p->stack + base, p->nstack - base, off)))
		return r;
	p->nstack = base;
	return push(p, v, off);
}

static int op_tuple_n(struct tft_pickle *p, uint32_t k, int64_t off, const char *op)
{
	struct tft_pickle_value *v;
	int r;

	if (p->nstack - mark_base(p) < k)
		return fail(p, off, "%s: stack underflow", op);
	v = new_value(p, TFT_PICKLE_TUPLE, off);
	if (!v)
		return p->status ? p->status : TFT_ENOMEM;
	if ((r = add_items(p, v, p->stack + p->nstack - k, k, off)))
		return r;
	p->nstack -= k;
	return push(p, v, off);
}

/* APPEND(S), SETITEM(S), ADDITEMS: add the items above the mark (or the top k) to a container. */
static int op_add(struct tft_pickle *p, int want, uint32_t k, bool marked, int64_t off,
		  const char *op)
{
	uint32_t base = 0;
	struct tft_pickle_value *c;
	int r;

	if (marked) {
		if ((r = pop_mark(p, off, op, &base)))
			return r;
	} else {
		if (p->nstack - mark_base(p) < k)
			return fail(p, off, "%s: stack underflow", op);
		base = p->nstack - k;
	}
	if (base == 0 || base <= mark_base(p))
		return fail(p, off, "%s: no container on the stack", op);
	c = p->stack[base - 1];
	if (c->type != want)
		return fail(p, off, "%s: target is a %s, expected a %s", op, tft_pickle_type_name(c->type),
			    tft_pickle_type_name(want));
	if (want == TFT_PICKLE_DICT && ((p->nstack - base) & 1))
		return fail(p, off, "%s: odd number of items", op);
	if ((r = add_items(p, c, p->stack + base, p->nstack - base, off)))
		return r;
	p->nstack = base;
	return 0;
}

/* ---- memo ---------------------------------------------------------------------------- */

static int memo_put(struct tft_pickle *p, uint64_t idx, int64_t off, const char *op)
{
	struct tft_pickle_value *v = top(p, off, op);

	if (!v)
		return TFT_EFORMAT;
	if (idx >= p->max_values)
		return fail(p, off, "%s: memo index %llu too large", op, (unsigned long long)idx);
	if (idx >= p->cmemo) {
		uint32_t old = p->cmemo;

		if (tft_grow((void **)&p->memo, &p->cmemo, idx + 1, sizeof(*p->memo)))
			return oom(p);
		memset(p->memo + old, 0, (size_t)(p->cmemo - old) * sizeof(*p->memo));
	}
	if (!p->memo[idx])
		p->memo_count++;
	p->memo[idx] = v;
	return 0;
}

static int memo_get(struct tft_pickle *p, uint64_t idx, int64_t off, const char *op)
{
	if (idx >= p->cmemo || !p->memo[idx])
		return fail(p, off, "%s: memo index %llu was never stored", op, (unsigned long long)idx);
	return push(p, p->memo[idx], off);
}

/* ---- graph check -------------------------------------------------------------------- */

enum { GS_NEW = 0, GS_OPEN = 1, GS_DONE = 2 };

/* Rejects cycles and graphs nested deeper than max_depth; height_ = longest path below. */
static int check_graph(struct tft_pickle *p, struct tft_pickle_value *v, uint32_t depth)
{
	uint64_t k = 0;
	struct tft_pickle_value *kids[2];
	struct tft_pickle_value **items = NULL;
	uint32_t h = 1;

	if (depth > p->max_depth)
		return fail(p, v->offset, "objects nested deeper than %u levels", p->max_depth);
	if (v->state_ == GS_DONE) {
		if (depth - 1 + v->height_ > p->max_depth)
			return fail(p, v->offset, "objects nested deeper than %u levels", p->max_depth);
		return 0;
	}
	if (v->state_ == GS_OPEN)
		return fail(p, v->offset, "self-referencing object graph (a container holds itself)");
	switch (v->type) {
	case TFT_PICKLE_TUPLE:
	case TFT_PICKLE_LIST:
	case TFT_PICKLE_SET:
	case TFT_PICKLE_DICT:
		items = v->u.items;
		k = slots_of(v);
		break;
	case TFT_PICKLE_OBJECT:
		if (v->u.obj.args)
			kids[k++] = v->u.obj.args;
		if (v->u.obj.state)
			kids[k++] = v->u.obj.state;
		items = kids;
		break;
	default:
		break;
	}
	v->state_ = GS_OPEN;
	for (uint64_t i = 0; i < k; i++) {
		int r = check_graph(p, items[i], depth + 1);

		if (r)
			return r;
		if (items[i]->height_ + 1 > h)
			h = items[i]->height_ + 1;
	}
	v->state_ = GS_DONE;
	v->height_ = h;
	return 0;
}

/* ---- dict index ----------------------------------------------------------------------- */

/* Hash of a key as lookups see it: bytes for STR/BYTES, the value for INT/BOOL; 0 = none. */
static uint64_t key_hash(const struct tft_pickle_value *k)
{
	if (k->type == TFT_PICKLE_STR || k->type == TFT_PICKLE_BYTES)
		return tft_hash_bytes(k->u.s.p, k->u.s.len) | 1;
	if (k->type == TFT_PICKLE_INT || k->type == TFT_PICKLE_BOOL)
		return tft_hash_u64((uint64_t)k->u.i ^ 0x9e3779b97f4a7c15ull) | 1;
	return 0;
}

static bool key_eq(const struct tft_pickle_value *a, const struct tft_pickle_value *b)
{
	bool sa = a->type == TFT_PICKLE_STR || a->type == TFT_PICKLE_BYTES;
	bool sb = b->type == TFT_PICKLE_STR || b->type == TFT_PICKLE_BYTES;

	if (sa || sb)
		return sa && sb && a->u.s.len == b->u.s.len && memcmp(a->u.s.p, b->u.s.p, a->u.s.len) == 0;
	return (a->type == TFT_PICKLE_INT || a->type == TFT_PICKLE_BOOL) &&
	       (b->type == TFT_PICKLE_INT || b->type == TFT_PICKLE_BOOL) && a->u.i == b->u.i;
}

/* The index's keys are the dict's: is key the key of pair val? */
static bool pair_key_eq(const void *ctx, const void *key, uint32_t val)
{
	const struct tft_pickle_value *d = ctx;

	return key_eq(d->u.items[2 * val], key);
}

static int build_index(struct tft_pickle *p, struct tft_pickle_value *d)
{
	struct tft_hmap *ix = malloc(sizeof(*ix));

	if (!ix)
		return oom(p);
	tft_hmap_init_ext(ix, pair_key_eq, d);
	if (tft_hmap_reserve(ix, d->n))
		goto nomem;
	for (uint32_t i = 0; i < d->n; i++) {
		const struct tft_pickle_value *k = d->u.items[2 * i];
		uint64_t h = key_hash(k);

		if (!h)
			continue; /* unhashable keys are never looked up */
		if (tft_hmap_put(ix, k, (uint32_t)h, i)) /* the later pair wins */
			goto nomem;
	}
	d->index_ = ix;
	return 0;
nomem:
	tft_hmap_fini(ix);
	free(ix);
	return oom(p);
}

static int index_dicts(struct tft_pickle *p)
{
	for (struct pk_chunk *c = p->chunks; c; c = c->next) {
		for (uint32_t i = 0; i < c->used; i++) {
			struct tft_pickle_value *v = &c->v[i];
			int r;

			if (v->type == TFT_PICKLE_DICT && v->n > PK_INDEX_MIN && v->state_ == GS_DONE &&
			    (r = build_index(p, v)))
				return r;
		}
	}
	return 0;
}

static const struct tft_pickle_value *dict_lookup(const struct tft_pickle_value *d,
						  const struct tft_pickle_value *key)
{
	uint64_t h;

	if (!d || d->type != TFT_PICKLE_DICT)
		return NULL;
	if (d->index_) {
		uint32_t i;

		if (!(h = key_hash(key)))
			return NULL;
		i = tft_hmap_get(d->index_, key, (uint32_t)h);
		return i == TFT_HMAP_EMPTY ? NULL : d->u.items[2 * i + 1];
	}
	for (uint32_t i = d->n; i-- > 0;)
		if (key_eq(d->u.items[2 * i], key))
			return d->u.items[2 * i + 1];
	return NULL;
}

/* ---- the machine ---------------------------------------------------------------------- */

/* One opcode group each: framing, the stack and its marks, scalars, the memo, and what is refused. The
 * dispatch below stays one switch with these inlined into it (OP: as fast as the cases they were). */
#define OP static inline __attribute__((always_inline))

/* PROTO: the protocol byte, 2 to 5. */
OP int op_proto(struct tft_pickle *p, int64_t off)
{
	int r;

	if ((r = need(p, 1, off, "PROTO")))
		return r;
	p->protocol = p->data[p->pos++];
	if (p->protocol < 2 || p->protocol > 5)
		return fail(p, off, "unsupported protocol %d (expected 2 to 5)", p->protocol);
	return 0;
}

/* FRAME: an 8-byte frame length; frames only group opcodes. */
OP int op_frame(struct tft_pickle *p, int64_t off)
{
	int r;

	if ((r = need(p, 8, off, "FRAME")))
		return r;
	if (le(p->data + p->pos, 8) > p->len - p->pos - 8)
		return fail(p, off, "truncated input: FRAME longer than the data left");
	p->pos += 8;
	return 0;
}

/* STOP: the top of the stack is the result; its graph checked and its large dicts indexed. */
static int op_stop(struct tft_pickle *p, int64_t off)
{
	int r;

	if (p->nstack == 0)
		return fail(p, off, "STOP with an empty stack");
	p->root = p->stack[p->nstack - 1];
	p->stop_pos = p->pos;
	r = check_graph(p, p->root, 1);
	return r ? r : index_dicts(p);
}

OP int op_mark(struct tft_pickle *p, int64_t off)
{
	if (p->nmarks >= p->max_values)
		return fail(p, off, "too many MARKs (limit %u)", p->max_values);
	if (tft_grow((void **)&p->marks, &p->cmarks, (uint64_t)p->nmarks + 1, sizeof(*p->marks)))
		return oom(p);
	p->marks[p->nmarks++] = p->nstack;
	return 0;
}

OP int op_pop(struct tft_pickle *p, int64_t off)
{
	if (p->nstack > mark_base(p))
		p->nstack--;
	else if (p->nmarks)
		p->nmarks--; /* Python pops the mark itself */
	else
		return fail(p, off, "POP: stack underflow");
	return 0;
}

OP int op_pop_mark(struct tft_pickle *p, int64_t off)
{
	uint32_t base = 0;
	int r;

	if (!(r = pop_mark(p, off, "POP_MARK", &base)))
		p->nstack = base;
	return r;
}

OP int op_dup(struct tft_pickle *p, int64_t off)
{
	struct tft_pickle_value *v = top(p, off, "DUP");

	return v ? push(p, v, off) : TFT_EFORMAT;
}

/* NEWTRUE, NEWFALSE */
OP int op_bool(struct tft_pickle *p, bool b, int64_t off)
{
	struct tft_pickle_value *v = new_value(p, TFT_PICKLE_BOOL, off);

	if (v)
		v->u.i = b;
	return push(p, v, off);
}

/* BININT (4 bytes, signed), BININT1 and BININT2 (unsigned). */
OP int op_binint(struct tft_pickle *p, unsigned n, int64_t off, const char *op)
{
	int64_t i;
	int r;

	if ((r = need(p, n, off, op)))
		return r;
	i = n == 4 ? (int64_t)(int32_t)(uint32_t)le(p->data + p->pos, 4) : (int64_t)le(p->data + p->pos, n);
	p->pos += n;
	return push_int(p, i, off);
}

/* BINFLOAT: big-endian IEEE 754 double. */
OP int op_binfloat(struct tft_pickle *p, int64_t off)
{
	struct tft_pickle_value *v;
	uint64_t u = 0;
	int r;

	if ((r = need(p, 8, off, "BINFLOAT")))
		return r;
	for (int i = 0; i < 8; i++)
		u = u << 8 | p->data[p->pos + (size_t)i];
	p->pos += 8;
	v = new_value(p, TFT_PICKLE_FLOAT, off);
	if (v)
		memcpy(&v->u.d, &u, sizeof(u));
	return push(p, v, off);
}

/* BINPUT, LONG_BINPUT (put), BINGET, LONG_BINGET (get): an n-byte memo index. */
OP int op_memo(struct tft_pickle *p, unsigned n, bool put, int64_t off, const char *op)
{
	uint64_t i;
	int r;

	if ((r = need(p, n, off, op)))
		return r;
	i = n == 1 ? p->data[p->pos] : le(p->data + p->pos, n);
	p->pos += n;
	return put ? memo_put(p, i, off, op) : memo_get(p, i, off, op);
}

/* The opcodes a safe reader refuses, and those no protocol 2-5 has. */
static int op_refused(struct tft_pickle *p, uint8_t op, int64_t off)
{
	switch (op) {
	case 0x97: /* NEXT_BUFFER */
	case 0x98: /* READONLY_BUFFER */
		return fail(p, off, "out-of-band buffers (protocol 5 NEXT_BUFFER) are not supported");
	case 'P': /* PERSID */
	case 'Q': /* BINPERSID */
		return fail(p, off, "persistent ids are not allowed");
	case 0x82: /* EXT1 */
	case 0x83:
	case 0x84:
		return fail(p, off, "extension-registry classes (EXT1/2/4) are not allowed");
	case 'i': /* INST */
	case 'o': /* OBJ */
		return fail(p, off, "protocol 0/1 instance opcode 0x%02x is not supported", op);
	default:
		if (op >= 0x20 && op < 0x7f)
			return fail(p, off, "unsupported opcode 0x%02x ('%c')", op, op);
		return fail(p, off, "unsupported opcode 0x%02x", op);
	}
}

/* ---- the machine ---------------------------------------------------------------------- */

static int run(struct tft_pickle *p)
{
	int r = 0;

	while (!r) {
		int64_t off = (int64_t)p->pos;
		uint8_t op;

		if (p->pos >= p->len)
			return fail(p, off, "truncated input: no STOP opcode");
		op = p->data[p->pos++];
		switch (op) {
		/* framing */
		case 0x80: r = op_proto(p, off); break;
		case 0x95: r = op_frame(p, off); break;
		case '.': return op_stop(p, off);
		/* the stack */
		case '(': r = op_mark(p, off); break;
		case '0': r = op_pop(p, off); break;
		case '1': r = op_pop_mark(p, off); break;
		case '2': r = op_dup(p, off); break;
		/* scalars */
		case 'N': r = push(p, new_value(p, TFT_PICKLE_NONE, off), off); break;
		case 0x88: r = op_bool(p, true, off); break;   /* NEWTRUE */
		case 0x89: r = op_bool(p, false, off); break;  /* NEWFALSE */
		case 'J': r = op_binint(p, 4, off, "BININT"); break;
		case 'K': r = op_binint(p, 1, off, "BININT1"); break;
		case 'M': r = op_binint(p, 2, off, "BININT2"); break;
		case 0x8a: r = op_long(p, 1, off, "LONG1"); break;
		case 0x8b: r = op_long(p, 4, off, "LONG4"); break;
		case 'G': r = op_binfloat(p, off); break;
		/* strings and bytes */
		case 'X': r = op_sized(p, TFT_PICKLE_STR, 4, false, off, "BINUNICODE"); break;
		case 0x8c: r = op_sized(p, TFT_PICKLE_STR, 1, false, off, "SHORT_BINUNICODE"); break;
		case 0x8d: r = op_sized(p, TFT_PICKLE_STR, 8, false, off, "BINUNICODE8"); break;
		case 'B': r = op_sized(p, TFT_PICKLE_BYTES, 4, false, off, "BINBYTES"); break;
		case 'C': r = op_sized(p, TFT_PICKLE_BYTES, 1, false, off, "SHORT_BINBYTES"); break;
		case 0x8e: r = op_sized(p, TFT_PICKLE_BYTES, 8, false, off, "BINBYTES8"); break;
		case 0x96: r = op_sized(p, TFT_PICKLE_BYTES, 8, false, off, "BYTEARRAY8"); break;
		case 'T': r = op_sized(p, TFT_PICKLE_BYTES, 4, true, off, "BINSTRING"); break; /* (Python 2 str) */
		case 'U': r = op_sized(p, TFT_PICKLE_BYTES, 1, false, off, "SHORT_BINSTRING"); break;
		/* containers */
		case ')': r = push(p, new_value(p, TFT_PICKLE_TUPLE, off), off); break; /* EMPTY_TUPLE */
		case 't': r = op_collect(p, TFT_PICKLE_TUPLE, off, "TUPLE"); break;
		case 0x85: r = op_tuple_n(p, 1, off, "TUPLE1"); break;
		case 0x86: r = op_tuple_n(p, 2, off, "TUPLE2"); break;
		case 0x87: r = op_tuple_n(p, 3, off, "TUPLE3"); break;
		case ']': r = push(p, new_value(p, TFT_PICKLE_LIST, off), off); break; /* EMPTY_LIST */
		case 'l': r = op_collect(p, TFT_PICKLE_LIST, off, "LIST"); break;
		case 'a': r = op_add(p, TFT_PICKLE_LIST, 1, false, off, "APPEND"); break;
		case 'e': r = op_add(p, TFT_PICKLE_LIST, 0, true, off, "APPENDS"); break;
		case '}': r = push(p, new_value(p, TFT_PICKLE_DICT, off), off); break; /* EMPTY_DICT */
		case 'd': r = op_collect(p, TFT_PICKLE_DICT, off, "DICT"); break;
		case 's': r = op_add(p, TFT_PICKLE_DICT, 2, false, off, "SETITEM"); break;
		case 'u': r = op_add(p, TFT_PICKLE_DICT, 0, true, off, "SETITEMS"); break;
		case 0x8f: r = push(p, new_value(p, TFT_PICKLE_SET, off), off); break; /* EMPTY_SET */
		case 0x90: r = op_add(p, TFT_PICKLE_SET, 0, true, off, "ADDITEMS"); break;
		case 0x91: r = op_collect(p, TFT_PICKLE_SET, off, "FROZENSET"); break;
		/* classes and objects */
		case 'c': r = op_global(p, off); break;
		case 0x93: r = op_stack_global(p, off); break;
		case 'R': r = op_reduce(p, off); break;
		case 0x81: r = op_newobj(p, off, false); break;
		case 0x92: r = op_newobj(p, off, true); break;
		case 'b': r = op_build(p, off); break;
		/* the memo */
		case 'q': r = op_memo(p, 1, true, off, "BINPUT"); break;
		case 'r': r = op_memo(p, 4, true, off, "LONG_BINPUT"); break;
		case 0x94: r = memo_put(p, p->memo_count, off, "MEMOIZE"); break;
		case 'h': r = op_memo(p, 1, false, off, "BINGET"); break;
		case 'j': r = op_memo(p, 4, false, off, "LONG_BINGET"); break;
		default: r = op_refused(p, op, off); break;
		}
	}
	return r;
}

struct tft_pickle *tft_pickle_parse(const uint8_t *data, size_t len,
				    const struct tft_pickle_opts *opts, struct tft_error *err)
{
	struct tft_pickle *p;
	int r;

	if (!data && len) {
		tft_error_set(err, TFT_EINVAL, -1, "pickle: no input");
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		tft_error_set(err, TFT_ENOMEM, -1, "pickle: out of memory");
		return NULL;
	}
	p->data = data;
	p->len = len;
	p->err = err;
	p->max_values = opts && opts->max_values ? opts->max_values : PK_DEFAULT_MAX_VALUES;
	p->max_depth = opts && opts->max_depth ? opts->max_depth : PK_DEFAULT_MAX_DEPTH;
	if (p->max_depth > PK_MAX_DEPTH_LIMIT)
		p->max_depth = PK_MAX_DEPTH_LIMIT;
	if (len < 2 || data[0] != 0x80) {
		r = fail(p, 0, "not a pickle of protocol 2 or later (expected byte 0x80)");
	} else {
		r = run(p);
	}
	free(p->stack);
	free(p->marks);
	free(p->memo);
	p->stack = NULL;
	p->marks = NULL;
	p->memo = NULL;
	p->err = NULL;
	if (r) {
		tft_pickle_destroy(p);
		return NULL;
	}
	return p;
}

void tft_pickle_destroy(struct tft_pickle *p)
{
	struct pk_chunk *c, *next;

	if (!p)
		return;
	for (c = p->chunks; c; c = next) {
		next = c->next;
		for (uint32_t i = 0; i < c->used; i++) {
			uint8_t t = c->v[i].type;

			if (t == TFT_PICKLE_TUPLE || t == TFT_PICKLE_LIST || t == TFT_PICKLE_DICT ||
			    t == TFT_PICKLE_SET)
				free(c->v[i].u.items);
			if (c->v[i].index_) {
				tft_hmap_fini(c->v[i].index_);
				free(c->v[i].index_);
			}
		}
		free(c);
	}
	for (uint32_t i = 0; i < p->nowned; i++)
		free(p->owned[i]);
	free(p->owned);
	free(p->stack);
	free(p->marks);
	free(p->memo);
	free(p);
}

const struct tft_pickle_value *tft_pickle_root(const struct tft_pickle *p)
{
	return p ? p->root : NULL;
}

int tft_pickle_protocol(const struct tft_pickle *p)
{
	return p ? p->protocol : 0;
}

size_t tft_pickle_size(const struct tft_pickle *p)
{
	return p ? p->stop_pos : 0;
}

int tft_pickle_probe(const uint8_t *head, size_t len)
{
	return len >= 2 && head[0] == 0x80 && head[1] >= 2 && head[1] <= 5;
}

/* ---- accessors ----------------------------------------------------------------------- */

bool tft_pickle_str_is(const struct tft_pickle_value *v, const char *s)
{
	size_t n = strlen(s);

	return v && (v->type == TFT_PICKLE_STR || v->type == TFT_PICKLE_BYTES) && v->u.s.len == n &&
	       memcmp(v->u.s.p, s, n) == 0;
}

const struct tft_pickle_value *tft_pickle_dict_get(const struct tft_pickle_value *dict,
						   const char *key)
{
	struct tft_pickle_value k;

	memset(&k, 0, sizeof(k));
	k.type = TFT_PICKLE_STR;
	k.u.s.p = (const uint8_t *)key;
	k.u.s.len = strlen(key);
	return dict_lookup(dict, &k);
}

const struct tft_pickle_value *tft_pickle_dict_get_int(const struct tft_pickle_value *dict,
						       int64_t key)
{
	struct tft_pickle_value k;

	memset(&k, 0, sizeof(k));
	k.type = TFT_PICKLE_INT;
	k.u.i = key;
	return dict_lookup(dict, &k);
}

const struct tft_pickle_value *tft_pickle_attr(const struct tft_pickle_value *obj,
					       const char *name)
{
	const struct tft_pickle_value *st;

	if (!obj || obj->type != TFT_PICKLE_OBJECT || !(st = obj->u.obj.state))
		return NULL;
	if (st->type == TFT_PICKLE_TUPLE && st->n == 2) {
		/* (dict, slots): slots win, as setattr runs after __dict__.update */
		const struct tft_pickle_value *v = tft_pickle_dict_get(st->u.items[1], name);

		return v ? v : tft_pickle_dict_get(st->u.items[0], name);
	}
	return tft_pickle_dict_get(st, name);
}
