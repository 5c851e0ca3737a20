/* SPDX-License-Identifier: MIT */
/*
 * GraphDef / CostGraphDef -> graph_nodes rows: NodeDef name, op, inputs,
 * device, attrs as JSON (tensor values reduced to dtype + shape), output
 * shapes; the functions of a GraphDef's library, each a graph of its own;
 * CostGraphDef.Node costs, memory and input/output info.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/json_write.h"
#include "codec/pb_text.h"
#include "collect/ingest_graph.h"
#include "collect/tf_names.h"
#include "collect/tf_proto.h"
#include "core/grow.h"
#include "core/hmap.h"
#include "store/graph.h"

#define F TFT_PB_FIELD
#define H TFT_PB_HOOK

#define MAX_DIMS 64        /* dims kept per shape (more are counted as "...") */
#define MAX_STR_ATTR 1024  /* longer string attrs are stored as "<N bytes>" */
#define GRAPH_NAME_MAX 300

/*
 * A TensorShapeProto as decoded so far. Decoding another occurrence into
 * the same one merges, as protobuf does: its dims are appended,
 * unknown_rank takes the last value given.
 */
struct shape_acc {
	struct tft_tf_shape tf;
	uint32_t ndims;
	int dims_over;          /* more than MAX_DIMS */
	int64_t dims[MAX_DIMS]; /* (not cleared by shape_reset) */
};

/* A TensorProto: dtype and shape (the values are not kept). */
struct g_tensor {
	uint64_t has;
	int64_t dtype;
	int have_shape;
	struct shape_acc shape;
};

struct g_func {
	uint64_t has;
	struct tft_pb_bytes name;
};

/*
 * An AttrValue as decoded so far, with protobuf's semantics for a oneof
 * set several times (binary input merged or concatenated, text given a
 * member twice): the member set last wins; a message member set again
 * right after itself merges into it (list elements append, shape dims
 * append, a tensor's dtype is replaced and its shape merged, a func's name
 * replaced). Written once the entry is read (its key may come after it).
 */
struct attr_value {
	uint32_t member;          /* field number of the member set last, 0: none */
	struct tft_pb_val scalar; /* s, i, f, b, type, placeholder (bytes borrowed) */
	struct shape_acc shape;
	struct g_tensor tensor;
	struct g_func func;
	/* list: its elements' JSON, in tft_graph_import.j_list */
};

/*
 * A map field (NodeDef.attr, FunctionDef.attr, .ret, .control_ret) as a
 * JSON object: each key once, where it first appears, with the value of
 * its last entry. That is how a protobuf parser keeps a map (and a Python
 * dict built from the pairs); written as they come, a key given twice
 * appeared twice and json_extract read the first. Entries are written as
 * they come and a key seen again only marks the object, which is rebuilt
 * from the entries' value spans when it ends (rare). Keys are found in a
 * hash map of the entries (a node with very many attrs is not quadratic).
 */
struct jmap_entry {
	const uint8_t *key; /* borrowed: the input or the text reader's arena */
	size_t klen;        /* as written: cut at a NUL and at 255 bytes */
	size_t voff, vend;  /* the value's JSON in the object's writer */
	uint32_t last;      /* (first entry of its key) the key's last entry */
	int first;          /* the first entry of its key */
};

struct jmap {
	struct jmap_entry *e;   /* owned */
	uint32_t n, cap;
	struct tft_hmap first;  /* a key (an entry's bytes) -> its first entry; core/hmap */
	int dup;                /* a key was given twice */
};

struct tft_graph_import {
	struct tft_graph_store *gs; /* owned */
	struct tft_error *err;      /* borrowed */
	struct tft_pb_dec *dec;     /* borrowed: the decoder of the current graph */
	const char *graph_name;     /* borrowed (the store's): the current graph's unique name */
	int64_t graph_id;
	/* Per node. */
	struct tft_json_writer j_inputs, j_attrs, j_shapes, j_cost, j_in, j_out, j_ctrl;
	struct tft_json_writer j_list; /* the elements of the list of the AttrValue being read */
	struct tft_json_writer j_tmp;  /* scratch: an object rewritten by jmap_end() */
	struct attr_value av;          /* the AttrValue being read */
	struct jmap m_attrs, m_ret, m_cret; /* the maps j_attrs, j_in and j_ctrl hold */
};

static void jw_reset(struct tft_json_writer *w)
{
	w->len = 0;
	w->depth = 0;
	w->sep = 0;
	w->status = 0;
}

static struct tft_graph_text jw_text(struct tft_json_writer *w)
{
	struct tft_graph_text t = {NULL, 0};

	if (w->len) {
		t.p = tft_json_write_borrow(w, &t.len);
		if (!t.len)
			t.p = NULL;
	}
	return t;
}

static int jw_oom(const struct tft_graph_import *gi)
{
	return gi->j_inputs.status || gi->j_attrs.status || gi->j_shapes.status ||
	       gi->j_cost.status || gi->j_in.status || gi->j_out.status || gi->j_ctrl.status;
}

/* ---- protobuf maps as JSON objects (struct jmap above) ----------------------------- */

/* Is entry val's key the key of the entry `key` points to? */
static bool jmap_eq(const void *ctx, const void *key, uint32_t val)
{
	const struct jmap *m = ctx;
	const struct jmap_entry *k = key, *o = &m->e[val];

	return o->klen == k->klen && (!k->klen || memcmp(o->key, k->key, k->klen) == 0);
}

/* Start the object in w, which holds nothing else. */
static void jmap_begin(struct jmap *m, struct tft_json_writer *w)
{
	m->n = 0;
	m->dup = 0;
	if (!m->first.eq) /* the first object (the import's state starts zeroed) */
		tft_hmap_init_ext(&m->first, jmap_eq, m);
	tft_hmap_clear(&m->first);
	tft_json_write_begin_object(w);
}

/* An entry's key (p[0..len), cut at a NUL or 255 bytes); its value goes to w next. */
static int jmap_key(struct jmap *m, struct tft_json_writer *w, const uint8_t *p, size_t len)
{
	struct jmap_entry *e;
	char key[256];
	uint32_t i, f;
	int r;

	if (len > 255)
		len = 255;
	if (len) {
		const uint8_t *nul = memchr(p, 0, len);

		if (nul)
			len = (size_t)(nul - p);
	}
	r = tft_grow((void **)&m->e, &m->cap, m->n + 1, sizeof(*m->e));
	if (r)
		return r;
	i = m->n;
	e = &m->e[i];
	e->key = len ? p : (const uint8_t *)"";
	e->klen = len;
	e->last = i;
	e->first = 1;
	f = i;
	r = tft_hmap_add(&m->first, e, (uint32_t)tft_hash_fast(e->key, len, 0), &f);
	if (r < 0)
		return r;
	m->n++;
	if (f != i) {
		m->e[f].last = i;
		e->first = 0;
		m->dup = 1;
	}
	memcpy(key, e->key, len);
	key[len] = '\0';
	tft_json_write_key(w, key);
	e->voff = w->len;
	return 0;
}

/* After the value of the entry jmap_key() started. */
static void jmap_value_end(struct jmap *m, const struct tft_json_writer *w)
{
	if (m->n)
		m->e[m->n - 1].vend = w->len;
}

/* End the object; with a key given twice, rewrite it (tmp: scratch). */
static int jmap_end(struct jmap *m, struct tft_json_writer *w, struct tft_json_writer *tmp)
{
	if (m->dup && !w->status) {
		const char *src;
		size_t n;

		jw_reset(tmp);
		src = tft_json_write_borrow(w, &n);
		tft_json_write_raw(tmp, src, n);
		if (tmp->status)
			return tmp->status;
		src = tft_json_write_borrow(tmp, &n);
		jw_reset(w);
		tft_json_write_begin_object(w);
		for (uint32_t i = 0; i < m->n; i++) {
			const struct jmap_entry *e = &m->e[i], *l;
			char key[256];

			if (!e->first)
				continue;
			l = &m->e[e->last];
			memcpy(key, e->key, e->klen);
			key[e->klen] = '\0';
			tft_json_write_key(w, key);
			tft_json_write_value_raw(w, src + l->voff, l->vend - l->voff);
		}
	}
	tft_json_write_end_object(w);
	return 0;
}

static void jmap_fini(struct jmap *m)
{
	free(m->e);
	tft_hmap_fini(&m->first);
}

static struct tft_graph_text text_of(struct tft_pb_bytes b)
{
	struct tft_graph_text t = {(const char *)b.p, b.len};

	if (!t.p)
		t.p = "";
	return t;
}

/* ---- DataType ------------------------------------------------------------------- */



static void write_dtype(struct tft_json_writer *w, int64_t v)
{
	char buf[48];
	const char *name = tft_tf_dtype_name(v, buf, sizeof(buf));

	if (name)
		tft_json_write_cstr(w, name);
	else
		tft_json_write_int(w, v);
}

/* ---- TensorShapeProto ------------------------------------------------------------- */

/* One dim of the shape being decoded (tft_tf_dim_fn): its size kept, up to MAX_DIMS. */
static void add_dim(void *user, const struct tft_tf_dim *dim)
{
	struct shape_acc *sh = user;

	if (sh->ndims < MAX_DIMS)
		sh->dims[sh->ndims++] = dim->size;
	else
		sh->dims_over = 1;
}

static void shape_reset(struct shape_acc *sh)
{
	sh->tf.has = 0;
	sh->tf.unknown_rank = 0;
	sh->ndims = 0;
	sh->dims_over = 0;
}

/*
 * Decode a TensorShapeProto into sh, merging with what it holds. Called
 * from the handler of the field that holds the shape, while that field is
 * on the decoder's path, so that an error names it.
 */
static int decode_shape(struct tft_graph_import *gi, const struct tft_pb_sub *s,
			struct shape_acc *sh)
{
	return tft_tf_shape_decode(s, gi, &sh->tf, add_dim, sh);
}

/* A shape as JSON: [d0, d1, ...] (-1 unknown), or null for an unknown rank. */
static void write_shape(struct tft_json_writer *w, const struct shape_acc *sh)
{
	if (sh->tf.unknown_rank) {
		tft_json_write_null(w);
		return;
	}
	tft_json_write_begin_array(w);
	for (uint32_t i = 0; i < sh->ndims; i++)
		tft_json_write_int(w, sh->dims[i]);
	if (sh->dims_over)
		tft_json_write_cstr(w, "...");
	tft_json_write_end_array(w);
}

/* ---- TensorProto (dtype and shape only) -------------------------------------------- */

static int on_tensor_shape(void *ctx, void *msg, const struct tft_pb_field *f,
			   const struct tft_pb_val *v)
{
	struct g_tensor *t = msg;

	t->have_shape = 1;
	return decode_shape(ctx, &v->sub, &t->shape);
}

static const struct tft_pb_field tensor_fields[] = {
	F(1, TFT_PB_ENUM, 0, struct g_tensor, dtype, "dtype", NULL, &tft_tf_dtype_enum),
	H(2, TFT_PB_MESSAGE, 0, "tensor_shape", on_tensor_shape, NULL),
};
static const struct tft_pb_msg tensor_msg = {"TensorProto", tensor_fields, 2,
					     offsetof(struct g_tensor, has)};

static void tensor_reset(struct g_tensor *t)
{
	t->has = 0;
	t->dtype = 0;
	t->have_shape = 0;
	shape_reset(&t->shape);
}

static void write_tensor(struct tft_json_writer *w, const struct g_tensor *t)
{
	tft_json_write_begin_object(w);
	tft_json_write_key(w, "dtype");
	write_dtype(w, t->dtype);
	tft_json_write_key(w, "shape");
	if (t->have_shape) {
		write_shape(w, &t->shape);
	} else {
		tft_json_write_begin_array(w); /* a scalar */
		tft_json_write_end_array(w);
	}
	tft_json_write_end_object(w);
}

/* ---- AttrValue / ListValue ---------------------------------------------------------- */

static const struct tft_pb_field func_fields[] = {
	F(1, TFT_PB_STRING, 0, struct g_func, name, "name", NULL, NULL),
};
static const struct tft_pb_msg func_msg = {"NameAttrList", func_fields, 1,
					   offsetof(struct g_func, has)};

/*
 * An `s` attr (a bytes field in attr_value.proto). UTF-8 (names, formats,
 * paddings: nearly every one) is a JSON string. Other bytes would lose
 * what they hold as U+FFFD: they become {"base64":"..."}, standard base64
 * with padding, which is how protobuf's JSON mapping (json_format.
 * MessageToJson) writes every bytes field, so nothing is lost and the text
 * compares with TF's JSON as is. The serialized ConfigProto in the
 * config_proto attr of every TF2 (Stateful)PartitionedCall is such a value.
 */
static void write_bytes(struct tft_json_writer *w, const uint8_t *p, size_t n)
{
	static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char buf[(MAX_STR_ATTR + 2) / 3 * 4 + 1];
	size_t o = 0, i = 0;

	if (n > MAX_STR_ATTR) {
		snprintf(buf, sizeof(buf), "<%zu bytes>", n);
		tft_json_write_cstr(w, buf);
		return;
	}
	if (tft_json_is_utf8(p, n)) {
		tft_json_write_str(w, (const char *)p, n);
		return;
	}
	for (; n - i >= 3; i += 3) {
		uint32_t x = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];

		buf[o++] = b64[x >> 18];
		buf[o++] = b64[(x >> 12) & 63];
		buf[o++] = b64[(x >> 6) & 63];
		buf[o++] = b64[x & 63];
	}
	if (n - i) {
		uint32_t x = (uint32_t)p[i] << 16 | (n - i == 2 ? (uint32_t)p[i + 1] << 8 : 0);

		buf[o++] = b64[x >> 18];
		buf[o++] = b64[(x >> 12) & 63];
		buf[o++] = n - i == 2 ? b64[(x >> 6) & 63] : '=';
		buf[o++] = '=';
	}
	tft_json_write_begin_object(w);
	tft_json_write_key(w, "base64");
	tft_json_write_str(w, buf, o);
	tft_json_write_end_object(w);
}

/*
 * A float attr. JSON has no number for inf, -inf and nan (the writer's
 * null would read as an empty AttrValue): they are the strings protobuf's
 * JSON mapping writes for them, "Infinity", "-Infinity" and "NaN".
 */
static void write_float(struct tft_json_writer *w, double d)
{
	if (isnan(d))
		tft_json_write_cstr(w, "NaN");
	else if (isinf(d))
		tft_json_write_cstr(w, d < 0 ? "-Infinity" : "Infinity");
	else
		tft_json_write_double(w, d);
}

static void write_func(struct tft_json_writer *w, const struct g_func *fn)
{
	tft_json_write_begin_object(w);
	tft_json_write_key(w, "func");
	tft_json_write_str(w, fn->name.p ? (const char *)fn->name.p : "", fn->name.len);
	tft_json_write_end_object(w);
}

/* A scalar of an AttrValue or of a ListValue (field numbers are the same in both). */
static void write_scalar(struct tft_json_writer *w, uint32_t num, const struct tft_pb_val *v)
{
	switch (num) {
	case 2: /* s */
		write_bytes(w, v->p, v->len);
		break;
	case 3: /* i */
		tft_json_write_int(w, v->n.i);
		break;
	case 4: /* f */
		write_float(w, v->n.d);
		break;
	case 5: /* b */
		tft_json_write_bool(w, v->n.i != 0);
		break;
	case 6: /* type */
		write_dtype(w, v->n.i);
		break;
	}
}

/* One element of a ListValue, appended to gi->j_list. */
static int on_list_elem(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct tft_graph_import *gi = ctx;
	struct tft_json_writer *w = &gi->j_list;
	int r;

	switch (f->num) {
	case 7: { /* shape */
		struct shape_acc sh;

		shape_reset(&sh);
		r = decode_shape(gi, &v->sub, &sh);
		if (!r)
			write_shape(w, &sh);
		return r;
	}
	case 8: { /* tensor */
		struct g_tensor t;

		tensor_reset(&t);
		r = tft_pb_wire_decode_sub(&v->sub, &tensor_msg, &t, gi);
		if (!r)
			write_tensor(w, &t);
		return r;
	}
	case 9: { /* func */
		struct g_func fn;

		memset(&fn, 0, sizeof(fn));
		r = tft_pb_wire_decode_sub(&v->sub, &func_msg, &fn, gi);
		if (!r)
			write_func(w, &fn);
		return r;
	}
	default:
		write_scalar(w, f->num, v);
		return 0;
	}
}

static const struct tft_pb_field list_fields[] = {
	H(2, TFT_PB_BYTES, TFT_PB_F_REPEATED, "s", on_list_elem, NULL),
	H(3, TFT_PB_INT64, TFT_PB_F_REPEATED, "i", on_list_elem, NULL),
	H(4, TFT_PB_FLOAT, TFT_PB_F_REPEATED, "f", on_list_elem, NULL),
	H(5, TFT_PB_BOOL, TFT_PB_F_REPEATED, "b", on_list_elem, NULL),
	H(6, TFT_PB_ENUM, TFT_PB_F_REPEATED, "type", on_list_elem, &tft_tf_dtype_enum),
	H(7, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "shape", on_list_elem, NULL),
	H(8, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "tensor", on_list_elem, NULL),
	H(9, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "func", on_list_elem, NULL),
};
static const struct tft_pb_msg list_msg = {"AttrValue.ListValue", list_fields, 8, TFT_PB_NOOFF};

/* A member of the AttrValue oneof: the last one set wins (struct attr_value). */
static int on_attr_value(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct tft_graph_import *gi = ctx;
	struct attr_value *a = &gi->av;
	int again = a->member == f->num;

	a->member = f->num;
	switch (f->num) {
	case 1: /* list: a list right after a list appends to it */
		if (!again) {
			jw_reset(&gi->j_list);
			tft_json_write_begin_array(&gi->j_list);
		}
		return tft_pb_wire_decode_sub(&v->sub, &list_msg, NULL, gi);
	case 7: /* shape */
		if (!again)
			shape_reset(&a->shape);
		return decode_shape(gi, &v->sub, &a->shape);
	case 8: /* tensor */
		if (!again)
			tensor_reset(&a->tensor);
		return tft_pb_wire_decode_sub(&v->sub, &tensor_msg, &a->tensor, gi);
	case 10: /* func */
		if (!again)
			memset(&a->func, 0, sizeof(a->func));
		return tft_pb_wire_decode_sub(&v->sub, &func_msg, &a->func, gi);
	default: /* s, i, f, b, type, placeholder */
		a->scalar = *v;
		return 0;
	}
}

static const struct tft_pb_field attr_value_fields[] = {
	H(1, TFT_PB_MESSAGE, 0, "list", on_attr_value, NULL),
	H(2, TFT_PB_BYTES, 0, "s", on_attr_value, NULL),
	H(3, TFT_PB_INT64, 0, "i", on_attr_value, NULL),
	H(4, TFT_PB_FLOAT, 0, "f", on_attr_value, NULL),
	H(5, TFT_PB_BOOL, 0, "b", on_attr_value, NULL),
	H(6, TFT_PB_ENUM, 0, "type", on_attr_value, &tft_tf_dtype_enum),
	H(7, TFT_PB_MESSAGE, 0, "shape", on_attr_value, NULL),
	H(8, TFT_PB_MESSAGE, 0, "tensor", on_attr_value, NULL),
	H(9, TFT_PB_STRING, 0, "placeholder", on_attr_value, NULL),
	H(10, TFT_PB_MESSAGE, 0, "func", on_attr_value, NULL),
};
static const struct tft_pb_msg attr_value_msg = {"AttrValue", attr_value_fields, 10,
						 TFT_PB_NOOFF};

/* The AttrValue read (gi->av) as JSON to w; an empty one is null. */
static int write_attr_value(struct tft_graph_import *gi, struct tft_json_writer *w)
{
	const struct attr_value *a = &gi->av;

	switch (a->member) {
	case 0:
		tft_json_write_null(w);
		return 0;
	case 1: {
		const char *json;
		size_t n;

		tft_json_write_end_array(&gi->j_list);
		if (gi->j_list.status)
			return gi->j_list.status;
		json = tft_json_write_borrow(&gi->j_list, &n);
		tft_json_write_value_raw(w, json, n);
		return 0;
	}
	case 7:
		write_shape(w, &a->shape);
		return 0;
	case 8:
		write_tensor(w, &a->tensor);
		return 0;
	case 9: { /* placeholder */
		char buf[GRAPH_NAME_MAX];

		snprintf(buf, sizeof(buf), "$%.*s", (int)(a->scalar.len > 250 ? 250 : a->scalar.len),
			 a->scalar.p ? (const char *)a->scalar.p : "");
		tft_json_write_cstr(w, buf);
		return 0;
	}
	case 10:
		write_func(w, &a->func);
		return 0;
	default:
		write_scalar(w, a->member, &a->scalar);
		return 0;
	}
}

/* ---- NodeDef ----------------------------------------------------------------------- */

struct g_attr_entry {
	uint64_t has;
	struct tft_pb_bytes key;
};

/*
 * The value is decoded here, while attr[i] is on the decoder's path (an
 * error reads node[3].attr[1].value.f, not node[3].value.f), into gi->av;
 * a value given twice merges, as protobuf merges a message field.
 */
static int on_entry_value(void *ctx, void *msg, const struct tft_pb_field *f,
			  const struct tft_pb_val *v)
{
	return tft_pb_wire_decode_sub(&v->sub, &attr_value_msg, NULL, ctx);
}

static const struct tft_pb_field attr_entry_fields[] = {
	F(1, TFT_PB_STRING, 0, struct g_attr_entry, key, "key", NULL, NULL),
	H(2, TFT_PB_MESSAGE, 0, "value", on_entry_value, NULL),
};
static const struct tft_pb_msg attr_entry_msg = {"NodeDef.AttrEntry", attr_entry_fields, 2,
						 offsetof(struct g_attr_entry, has)};

static int bytes_is(struct tft_pb_bytes b, const char *lit)
{
	size_t n = strlen(lit);

	return b.len == n && memcmp(b.p, lit, n) == 0;
}

static int on_attr(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct tft_graph_import *gi = ctx;
	struct g_attr_entry e;
	int r;

	memset(&e, 0, sizeof(e));
	gi->av.member = 0;
	r = tft_pb_wire_decode_sub(&v->sub, &attr_entry_msg, &e, ctx);
	if (r)
		return r;
	if (bytes_is(e.key, "_output_shapes")) {
		/* Its own column: a list of shapes (a map: the last entry wins). */
		jw_reset(&gi->j_shapes);
		if (gi->av.member == 0)
			return 0;
		r = write_attr_value(gi, &gi->j_shapes);
	} else {
		/* Keys are identifiers; a NUL inside or a longer key is cut. */
		r = jmap_key(&gi->m_attrs, &gi->j_attrs, e.key.p, e.key.len);
		if (!r)
			r = write_attr_value(gi, &gi->j_attrs);
		if (!r)
			jmap_value_end(&gi->m_attrs, &gi->j_attrs);
	}
	if (r)
		return tft_pb_wire_fail(gi->dec, r, v->offset, "out of memory");
	return 0;
}

static int on_input(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct tft_graph_import *gi = ctx;

	tft_json_write_str(&gi->j_inputs, (const char *)v->p, v->len);
	return 0;
}

/* A NodeDef's inputs and attrs (its table: collect/tf_proto.c). */
static const struct tft_tf_node_fns node_fns = {on_input, on_attr};

static void node_begin(struct tft_graph_import *gi)
{
	jw_reset(&gi->j_inputs);
	jw_reset(&gi->j_attrs);
	jw_reset(&gi->j_shapes);
	jw_reset(&gi->j_cost);
	jw_reset(&gi->j_in);
	jw_reset(&gi->j_out);
	jw_reset(&gi->j_ctrl);
}

static int store_node(struct tft_graph_import *gi, struct tft_graph_node *row, int64_t offset)
{
	int r;

	if (jw_oom(gi))
		return tft_pb_wire_fail(gi->dec, TFT_ENOMEM, offset, "out of memory");
	r = tft_graph_store_add(gi->gs, gi->graph_id, row, gi->err);
	if (r)
		return tft_pb_wire_fail(gi->dec, r, offset, "could not store the node");
	return 0;
}

/* NodeDef v as a row of kind `kind` ("graphdef", "function_node") of the current graph. */
static int node_row(struct tft_graph_import *gi, const struct tft_pb_val *v, const char *kind)
{
	struct tft_graph_node row;
	struct tft_tf_node n;
	int r;

	memset(&n, 0, sizeof(n));
	node_begin(gi);
	tft_json_write_begin_array(&gi->j_inputs);
	jmap_begin(&gi->m_attrs, &gi->j_attrs);
	r = tft_tf_node_decode(&v->sub, gi, &n, &node_fns);
	if (r)
		return r;
	tft_json_write_end_array(&gi->j_inputs);
	r = jmap_end(&gi->m_attrs, &gi->j_attrs, &gi->j_tmp);
	if (r)
		return tft_pb_wire_fail(gi->dec, r, v->offset, "out of memory");
	memset(&row, 0, sizeof(row));
	row.graph.p = gi->graph_name;
	row.graph.len = strlen(gi->graph_name);
	row.kind.p = kind;
	row.kind.len = strlen(kind);
	row.name = text_of(n.name);
	row.op = text_of(n.op);
	row.device = text_of(n.device);
	row.inputs = jw_text(&gi->j_inputs);
	row.attrs = jw_text(&gi->j_attrs);
	row.output_shapes = jw_text(&gi->j_shapes);
	row.compute_cost = row.temporary_memory = row.persistent_memory = TFT_GRAPH_NO_COST;
	return store_node(gi, &row, v->offset);
}

static int on_node(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	return node_row(ctx, v, "graphdef");
}

static int on_skip(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	return 0;
}

/* ---- FunctionDefLibrary ------------------------------------------------------------ */

/* Key and the JSON value built in arr. */
static void cost_raw(struct tft_json_writer *w, const char *key, struct tft_json_writer *arr)
{
	size_t n;
	const char *s = tft_json_write_borrow(arr, &n);

	tft_json_write_key(w, key);
	tft_json_write_value_raw(w, s, n);
}

/*
 * In TF2 (tf.function, Keras, control flow v2) the ops that run are the
 * node_defs of library functions; the top level holds little more than
 * the (Stateful)PartitionedCall that calls one. Each FunctionDef becomes a
 * graph of its own, named "<graph>:library:<function name>": a "function"
 * row for the function (its signature and return mapping) and a
 * "function_node" row per node_def, named as the executor and the profiler
 * name them (sequential/dense/MatMul). node_def inputs are kept as written:
 * "x" (a function argument), "node:output_arg:i" (i-th element of the named
 * output arg: not a port, which would need the op's OpDef), "^node".
 */

struct g_arg {
	uint64_t has;
	struct tft_pb_bytes name;
};

static const struct tft_pb_field arg_fields[] = {
	F(1, TFT_PB_STRING, 0, struct g_arg, name, "name", NULL, NULL),
};
static const struct tft_pb_msg arg_msg = {"OpDef.ArgDef", arg_fields, 1, offsetof(struct g_arg, has)};

/* input_arg -> the function row's inputs; output_arg -> its cost JSON's "output_arg". */
static int on_arg(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct tft_graph_import *gi = ctx;
	struct g_arg a;
	int r;

	memset(&a, 0, sizeof(a));
	r = tft_pb_wire_decode_sub(&v->sub, &arg_msg, &a, ctx);
	if (r)
		return r;
	tft_json_write_str(f->num == 2 ? &gi->j_inputs : &gi->j_out,
			   a.name.p ? (const char *)a.name.p : "", a.name.len);
	return 0;
}

struct g_function {
	uint64_t has;
	struct tft_pb_bytes name; /* signature.name */
};

static const struct tft_pb_field opdef_fields[] = {
	F(1, TFT_PB_STRING, 0, struct g_function, name, "name", NULL, NULL),
	H(2, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "input_arg", on_arg, NULL),
	H(3, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "output_arg", on_arg, NULL),
};
static const struct tft_pb_msg opdef_msg = {"OpDef", opdef_fields, 3, TFT_PB_NOOFF};

static int on_signature(void *ctx, void *msg, const struct tft_pb_field *f,
			const struct tft_pb_val *v)
{
	/* (the name lands in the FunctionDef's struct: same layout) */
	return tft_pb_wire_decode_sub(&v->sub, &opdef_msg, msg, ctx);
}

struct g_str_entry {
	uint64_t has;
	struct tft_pb_bytes key, value;
};

static const struct tft_pb_field str_entry_fields[] = {
	F(1, TFT_PB_STRING, 0, struct g_str_entry, key, "key", NULL, NULL),
	F(2, TFT_PB_STRING, 0, struct g_str_entry, value, "value", NULL, NULL),
};
static const struct tft_pb_msg str_entry_msg = {"FunctionDef.RetEntry", str_entry_fields, 2,
						offsetof(struct g_str_entry, has)};

/* ret (4) -> "ret", control_ret (6) -> "control_ret": {"output arg": "node:output_arg:i"}. */
static int on_ret(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct tft_graph_import *gi = ctx;
	struct tft_json_writer *w = f->num == 4 ? &gi->j_in : &gi->j_ctrl;
	struct jmap *m = f->num == 4 ? &gi->m_ret : &gi->m_cret;
	struct g_str_entry e;
	int r;

	memset(&e, 0, sizeof(e));
	r = tft_pb_wire_decode_sub(&v->sub, &str_entry_msg, &e, ctx);
	if (r)
		return r;
	r = jmap_key(m, w, e.key.p, e.key.len);
	if (r)
		return tft_pb_wire_fail(gi->dec, r, v->offset, "out of memory");
	tft_json_write_str(w, e.value.p ? (const char *)e.value.p : "", e.value.len);
	jmap_value_end(m, w);
	return 0;
}

static int on_function_node(void *ctx, void *msg, const struct tft_pb_field *f,
			    const struct tft_pb_val *v)
{
	return node_row(ctx, v, "function_node");
}

/*
 * A FunctionDef is read twice: first everything but the body (the body's
 * graph is named after the signature, which a text file may give last),
 * then the body's node_defs.
 */
static const struct tft_pb_field function_head_fields[] = {
	H(1, TFT_PB_MESSAGE, 0, "signature", on_signature, NULL),
	H(3, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "node_def", on_skip, NULL),
	H(4, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "ret", on_ret, NULL),
	H(5, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "attr", on_attr, NULL),
	H(6, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "control_ret", on_ret, NULL),
};
static const struct tft_pb_msg function_head_msg = {"FunctionDef", function_head_fields, 5,
						    TFT_PB_NOOFF};

static const struct tft_pb_field function_body_fields[] = {
	H(1, TFT_PB_MESSAGE, 0, "signature", on_skip, NULL),
	H(3, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "node_def", on_function_node, NULL),
	H(4, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "ret", on_skip, NULL),
	H(5, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "attr", on_skip, NULL),
	H(6, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "control_ret", on_skip, NULL),
};
static const struct tft_pb_msg function_body_msg = {"FunctionDef", function_body_fields, 5,
						    TFT_PB_NOOFF};

static int graph_begin(struct tft_graph_import *gi, const char *graph_name, int64_t offset);

static int on_function(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct tft_graph_import *gi = ctx;
	const char *parent = gi->graph_name;
	int64_t parent_id = gi->graph_id;
	struct tft_graph_node row;
	struct g_function fn;
	size_t plen = strlen(parent), gsize;
	char *gname;
	int r;

	memset(&fn, 0, sizeof(fn));
	node_begin(gi);
	tft_json_write_begin_array(&gi->j_inputs);
	jmap_begin(&gi->m_attrs, &gi->j_attrs);
	tft_json_write_begin_array(&gi->j_out);
	jmap_begin(&gi->m_ret, &gi->j_in);
	jmap_begin(&gi->m_cret, &gi->j_ctrl);
	r = tft_pb_wire_decode_sub(&v->sub, &function_head_msg, &fn, gi);
	if (r)
		return r;
	tft_json_write_end_array(&gi->j_inputs);
	tft_json_write_end_array(&gi->j_out);
	r = jmap_end(&gi->m_attrs, &gi->j_attrs, &gi->j_tmp);
	if (!r)
		r = jmap_end(&gi->m_ret, &gi->j_in, &gi->j_tmp);
	if (!r)
		r = jmap_end(&gi->m_cret, &gi->j_ctrl, &gi->j_tmp);
	if (r)
		return tft_pb_wire_fail(gi->dec, r, v->offset, "out of memory");
	tft_json_write_begin_object(&gi->j_cost);
	cost_raw(&gi->j_cost, "output_arg", &gi->j_out);
	cost_raw(&gi->j_cost, "ret", &gi->j_in);
	cost_raw(&gi->j_cost, "control_ret", &gi->j_ctrl);
	tft_json_write_end_object(&gi->j_cost);

	/* "<graph>:library:<name>" (a name cut at a NUL; none: "library.function[i]"). */
	gsize = plen + 300;
	gname = malloc(gsize);
	if (!gname)
		return tft_pb_wire_fail(gi->dec, TFT_ENOMEM, v->offset, "out of memory");
	if (fn.name.len)
		snprintf(gname, gsize, "%s:library:%.*s", parent,
			 (int)(fn.name.len > 256 ? 256 : fn.name.len), (const char *)fn.name.p);
	else
		snprintf(gname, gsize, "%s:library.function[%u]", parent, v->index);
	r = graph_begin(gi, gname, v->offset);
	free(gname);
	if (r)
		return r;

	memset(&row, 0, sizeof(row));
	row.graph.p = gi->graph_name;
	row.graph.len = strlen(gi->graph_name);
	row.kind.p = "function";
	row.kind.len = 8;
	row.name = text_of(fn.name);
	row.inputs = jw_text(&gi->j_inputs);
	row.attrs = jw_text(&gi->j_attrs);
	row.output_shapes = jw_text(&gi->j_shapes);
	row.cost = jw_text(&gi->j_cost);
	row.compute_cost = row.temporary_memory = row.persistent_memory = TFT_GRAPH_NO_COST;
	r = store_node(gi, &row, v->offset);
	if (!r)
		r = tft_pb_wire_decode_sub(&v->sub, &function_body_msg, NULL, gi);
	/* Top-level nodes after the library (any order in text) are the graph's again. */
	gi->graph_name = parent;
	gi->graph_id = parent_id;
	return r;
}

/* gradient (2) and registered_gradients (3) name functions already listed: skipped. */
static const struct tft_pb_field library_fields[] = {
	H(1, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "function", on_function, NULL),
};
static const struct tft_pb_msg library_msg = {"FunctionDefLibrary", library_fields, 1, TFT_PB_NOOFF};

static int on_library(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	return tft_pb_wire_decode_sub(&v->sub, &library_msg, NULL, ctx);
}

/* ---- GraphDef ------------------------------------------------------------------------ */

/* Its nodes and library (its table: collect/tf_proto.c; versions are skipped). */
static const struct tft_tf_graph_fns graph_fns = {on_node, on_library};

/* ---- MetaGraphDef (model.ckpt.meta): its graph_def; the rest (ops, saver, signatures) skipped */

static int on_graph_def(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	return tft_tf_graph_decode(&v->sub, ctx, &graph_fns);
}

static const struct tft_pb_field metagraph_fields[] = {
	H(1, TFT_PB_MESSAGE, 0, "meta_info_def", on_skip, NULL),
	H(2, TFT_PB_MESSAGE, 0, "graph_def", on_graph_def, NULL),
};
static const struct tft_pb_msg metagraph_msg = {"MetaGraphDef", metagraph_fields, 2, TFT_PB_NOOFF};

/* ---- CostGraphDef ------------------------------------------------------------------ */

struct g_input_info {
	uint64_t has;
	int64_t node, port;
};

static const struct tft_pb_field input_info_fields[] = {
	F(1, TFT_PB_INT32, 0, struct g_input_info, node, "preceding_node", NULL, NULL),
	F(2, TFT_PB_INT32, 0, struct g_input_info, port, "preceding_port", NULL, NULL),
};
static const struct tft_pb_msg input_info_msg = {"CostGraphDef.Node.InputInfo", input_info_fields,
						 2, offsetof(struct g_input_info, has)};

static int on_input_info(void *ctx, void *msg, const struct tft_pb_field *f,
			 const struct tft_pb_val *v)
{
	struct tft_graph_import *gi = ctx;
	struct g_input_info ii;
	int r;

	memset(&ii, 0, sizeof(ii));
	r = tft_pb_wire_decode_sub(&v->sub, &input_info_msg, &ii, ctx);
	if (r)
		return r;
	tft_json_write_begin_object(&gi->j_in);
	tft_json_write_key(&gi->j_in, "preceding_node");
	tft_json_write_int(&gi->j_in, ii.node);
	tft_json_write_key(&gi->j_in, "preceding_port");
	tft_json_write_int(&gi->j_in, ii.port);
	tft_json_write_end_object(&gi->j_in);
	return 0;
}

struct g_output_info {
	uint64_t has;
	int64_t size, alias, dtype;
	int have_shape;
	struct shape_acc shape;
};

/* Decoded here, while output_info[i] is on the decoder's path (errors name it). */
static int on_out_shape(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct g_output_info *o = msg;

	o->have_shape = 1;
	return decode_shape(ctx, &v->sub, &o->shape);
}

static const struct tft_pb_field output_info_fields[] = {
	F(1, TFT_PB_INT64, 0, struct g_output_info, size, "size", NULL, NULL),
	F(2, TFT_PB_INT64, 0, struct g_output_info, alias, "alias_input_port", NULL, NULL),
	H(3, TFT_PB_MESSAGE, 0, "shape", on_out_shape, NULL),
	F(4, TFT_PB_ENUM, 0, struct g_output_info, dtype, "dtype", NULL, &tft_tf_dtype_enum),
};
static const struct tft_pb_msg output_info_msg = {"CostGraphDef.Node.OutputInfo",
						  output_info_fields, 4,
						  offsetof(struct g_output_info, has)};

static int on_output_info(void *ctx, void *msg, const struct tft_pb_field *f,
			  const struct tft_pb_val *v)
{
	struct tft_graph_import *gi = ctx;
	struct tft_json_writer *w = &gi->j_out;
	struct g_output_info o;
	int r;

	o.has = 0;
	o.size = o.alias = o.dtype = 0;
	o.have_shape = 0;
	shape_reset(&o.shape);
	r = tft_pb_wire_decode_sub(&v->sub, &output_info_msg, &o, ctx);
	if (r)
		return r;
	tft_json_write_begin_object(w);
	tft_json_write_key(w, "size");
	tft_json_write_int(w, o.size);
	/*
	 * proto3: an absent value is 0, input 0 (TF writes -1 for an output
	 * that aliases no input, costmodel.cc AddToCostGraphDef).
	 */
	tft_json_write_key(w, "alias_input_port");
	tft_json_write_int(w, o.alias);
	/* (likewise an absent dtype is DT_INVALID: text that spells it out gives the same row) */
	tft_json_write_key(w, "dtype");
	write_dtype(w, o.dtype);
	tft_json_write_end_object(w);
	/* Shapes go to the output_shapes column, one per output (null if absent). */
	if (o.have_shape)
		write_shape(&gi->j_shapes, &o.shape);
	else
		tft_json_write_null(&gi->j_shapes);
	return 0;
}

static int on_control_input(void *ctx, void *msg, const struct tft_pb_field *f,
			    const struct tft_pb_val *v)
{
	struct tft_graph_import *gi = ctx;

	tft_json_write_int(&gi->j_ctrl, v->n.i);
	return 0;
}

struct g_cnode {
	uint64_t has;
	struct tft_pb_bytes name, device;
	int64_t id, temp, is_final, compute_cost, host_temp, device_temp, persistent,
		compute_time, memory_time, device_persistent, inaccurate;
};

enum {
	CN_NAME, CN_DEVICE, CN_ID, CN_IN, CN_OUT, CN_TEMP, CN_FINAL, CN_CTRL, CN_COST, CN_HOST_TEMP,
	CN_DEV_TEMP, CN_PERSIST, CN_CTIME, CN_MTIME, CN_DEV_PERSIST, CN_INACCURATE
};

static const struct tft_pb_field cnode_fields[] = {
	[CN_NAME] = F(1, TFT_PB_STRING, 0, struct g_cnode, name, "name", NULL, NULL),
	[CN_DEVICE] = F(2, TFT_PB_STRING, 0, struct g_cnode, device, "device", NULL, NULL),
	[CN_ID] = F(3, TFT_PB_INT32, 0, struct g_cnode, id, "id", NULL, NULL),
	[CN_IN] = H(4, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "input_info", on_input_info, NULL),
	[CN_OUT] = H(5, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "output_info", on_output_info, NULL),
	[CN_TEMP] = F(6, TFT_PB_INT64, 0, struct g_cnode, temp, "temporary_memory_size", NULL, NULL),
	[CN_FINAL] = F(7, TFT_PB_BOOL, 0, struct g_cnode, is_final, "is_final", NULL, NULL),
	[CN_CTRL] = H(8, TFT_PB_INT32, TFT_PB_F_REPEATED, "control_input", on_control_input, NULL),
	[CN_COST] = F(9, TFT_PB_INT64, 0, struct g_cnode, compute_cost, "compute_cost", NULL, NULL),
	[CN_HOST_TEMP] = F(10, TFT_PB_INT64, 0, struct g_cnode, host_temp, "host_temp_memory_size",
			   NULL, NULL),
	[CN_DEV_TEMP] = F(11, TFT_PB_INT64, 0, struct g_cnode, device_temp,
			  "device_temp_memory_size", NULL, NULL),
	[CN_PERSIST] = F(12, TFT_PB_INT64, 0, struct g_cnode, persistent, "persistent_memory_size",
			 NULL, NULL),
	[CN_CTIME] = F(14, TFT_PB_INT64, 0, struct g_cnode, compute_time, "compute_time", NULL, NULL),
	[CN_MTIME] = F(15, TFT_PB_INT64, 0, struct g_cnode, memory_time, "memory_time", NULL, NULL),
	[CN_DEV_PERSIST] = F(16, TFT_PB_INT64, 0, struct g_cnode, device_persistent,
			     "device_persistent_memory_size", NULL, NULL),
	[CN_INACCURATE] = F(17, TFT_PB_BOOL, 0, struct g_cnode, inaccurate, "inaccurate", NULL, NULL),
};
static const struct tft_pb_msg cnode_msg = {"CostGraphDef.Node", cnode_fields,
					    sizeof(cnode_fields) / sizeof(cnode_fields[0]),
					    offsetof(struct g_cnode, has)};

/* A deprecated memory size: only when set (TF no longer writes them). */
static void cost_int_nonzero(struct tft_json_writer *w, const char *key, int64_t v)
{
	if (v) {
		tft_json_write_key(w, key);
		tft_json_write_int(w, v);
	}
}

static int on_cnode(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct tft_graph_import *gi = ctx;
	struct tft_json_writer *w = &gi->j_cost;
	struct tft_graph_node row;
	struct g_cnode n;
	int r;

	memset(&n, 0, sizeof(n));
	node_begin(gi);
	tft_json_write_begin_array(&gi->j_in);
	tft_json_write_begin_array(&gi->j_out);
	tft_json_write_begin_array(&gi->j_ctrl);
	tft_json_write_begin_array(&gi->j_shapes);
	r = tft_pb_wire_decode_sub(&v->sub, &cnode_msg, &n, gi);
	if (r)
		return r;
	tft_json_write_end_array(&gi->j_in);
	tft_json_write_end_array(&gi->j_out);
	tft_json_write_end_array(&gi->j_ctrl);
	tft_json_write_end_array(&gi->j_shapes);
	tft_json_write_begin_object(w);
	tft_json_write_key(w, "id");
	tft_json_write_int(w, n.id);
	cost_raw(w, "input_info", &gi->j_in);
	cost_raw(w, "output_info", &gi->j_out);
	/*
	 * cost_graph.proto is proto3: a 0 / false is never written, so presence
	 * means nothing and an absent scalar is its default. Every field is
	 * written with its value, so text and binary input (or a text file that
	 * spells the zeros out) give the same row.
	 */
	cost_raw(w, "control_input", &gi->j_ctrl);
	tft_json_write_key(w, "compute_time");
	tft_json_write_int(w, n.compute_time);
	tft_json_write_key(w, "memory_time");
	tft_json_write_int(w, n.memory_time);
	cost_int_nonzero(w, "host_temp_memory_size", n.host_temp);
	cost_int_nonzero(w, "device_temp_memory_size", n.device_temp);
	cost_int_nonzero(w, "device_persistent_memory_size", n.device_persistent);
	tft_json_write_key(w, "is_final");
	tft_json_write_bool(w, n.is_final != 0);
	tft_json_write_key(w, "inaccurate");
	tft_json_write_bool(w, n.inaccurate != 0);
	tft_json_write_end_object(w);
	memset(&row, 0, sizeof(row));
	row.graph.p = gi->graph_name;
	row.graph.len = strlen(gi->graph_name);
	row.kind.p = "costgraph";
	row.kind.len = 9;
	row.name = text_of(n.name);
	row.device = text_of(n.device);
	row.op.p = NULL;
	if (n.has & (1ull << CN_OUT))
		row.output_shapes = jw_text(&gi->j_shapes);
	row.cost = jw_text(w);
	/* (proto3 defaults, as above; NULL stays for graphdef rows, which have no cost) */
	row.compute_cost = n.compute_cost;
	row.temporary_memory = n.temp;
	row.persistent_memory = n.persistent;
	return store_node(gi, &row, v->offset);
}

static const struct tft_pb_field costgraph_fields[] = {
	H(1, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "node", on_cnode, NULL),
};
static const struct tft_pb_msg costgraph_msg = {"CostGraphDef", costgraph_fields, 1, TFT_PB_NOOFF};

/* ---- API ---------------------------------------------------------------------------- */

struct tft_graph_import *tft_graph_import_create(struct tft_writer *w, struct tft_error *err)
{
	struct tft_graph_import *gi = calloc(1, sizeof(*gi));

	if (!gi) {
		tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
		return NULL;
	}
	gi->err = err;
	gi->gs = tft_graph_store_open(w, err);
	if (!gi->gs) {
		free(gi);
		return NULL;
	}
	tft_json_write_init_mem(&gi->j_inputs);
	tft_json_write_init_mem(&gi->j_attrs);
	tft_json_write_init_mem(&gi->j_shapes);
	tft_json_write_init_mem(&gi->j_cost);
	tft_json_write_init_mem(&gi->j_in);
	tft_json_write_init_mem(&gi->j_out);
	tft_json_write_init_mem(&gi->j_ctrl);
	tft_json_write_init_mem(&gi->j_list);
	tft_json_write_init_mem(&gi->j_tmp);
	return gi;
}

/* Start graph graph_name: gi->graph_id and gi->graph_name (made unique in the session). */
static int graph_begin(struct tft_graph_import *gi, const char *graph_name, int64_t offset)
{
	int64_t id = tft_graph_store_begin(gi->gs, graph_name, &gi->graph_name, gi->err);

	if (id < 0)
		return tft_pb_wire_fail(gi->dec, (int)id, offset, "out of memory");
	gi->graph_id = id;
	return 0;
}

/* Start graph graph_name for the sub-message s (a GraphDef or CostGraphDef). */
static int import_sub(struct tft_graph_import *gi, const char *graph_name,
		      const struct tft_pb_sub *s)
{
	gi->dec = s->dec;
	return graph_begin(gi, graph_name, s->p && s->dec ? (int64_t)(s->p - s->dec->base) : -1);
}

int tft_graph_import_graphdef(struct tft_graph_import *gi, const char *graph_name,
			      const struct tft_pb_sub *s)
{
	int r = import_sub(gi, graph_name, s);

	return r ? r : tft_tf_graph_decode(s, gi, &graph_fns);
}

int tft_graph_import_costgraph(struct tft_graph_import *gi, const char *graph_name,
			       const struct tft_pb_sub *s)
{
	int r = import_sub(gi, graph_name, s);

	return r ? r : tft_pb_wire_decode_sub(s, &costgraph_msg, NULL, gi);
}

uint64_t tft_graph_import_count(const struct tft_graph_import *gi)
{
	return gi ? tft_graph_store_count(gi->gs) : 0;
}

int tft_graph_import_finish(struct tft_graph_import *gi, struct tft_error *err)
{
	int r;

	if (!gi)
		return 0;
	r = tft_graph_store_close(gi->gs, err);
	tft_json_write_fini(&gi->j_inputs);
	tft_json_write_fini(&gi->j_attrs);
	tft_json_write_fini(&gi->j_shapes);
	tft_json_write_fini(&gi->j_cost);
	tft_json_write_fini(&gi->j_in);
	tft_json_write_fini(&gi->j_out);
	tft_json_write_fini(&gi->j_ctrl);
	tft_json_write_fini(&gi->j_list);
	tft_json_write_fini(&gi->j_tmp);
	jmap_fini(&gi->m_attrs);
	jmap_fini(&gi->m_ret);
	jmap_fini(&gi->m_cret);
	free(gi);
	return r;
}

static int is_graph_format(int format)
{
	return format == TFT_PB_FMT_GRAPHDEF || format == TFT_PB_FMT_GRAPHDEF_TEXT ||
	       format == TFT_PB_FMT_COSTGRAPH || format == TFT_PB_FMT_COSTGRAPH_TEXT ||
	       format == TFT_PB_FMT_METAGRAPH || format == TFT_PB_FMT_METAGRAPH_TEXT;
}

int tft_graph_ingest(struct tft_writer *w, const char *name, const uint8_t *data, size_t len,
		     int format, const struct tft_ingest_opts *opts, struct tft_error *err)
{
	struct tft_graph_import *gi;
	struct tft_pb_dec dec;
	int text, cost, meta, r;

	if (!w || (!data && len))
		return tft_error_set(err, TFT_EINVAL, -1, "no writer or no input");
	if (!is_graph_format(format)) {
		format = tft_pb_sniff(data, len, name);
		if (format == TFT_PB_FMT_OPLOG || format == TFT_PB_FMT_OPLOG_TEXT) {
			/* (never taken for another format: its entries would read as nodes) */
			r = tft_error_set(err, TFT_EFORMAT, 0,
					  "a tfprof OpLogProto (tfprof_log), not a GraphDef");
			tft_error_set_file(err, name);
			return r;
		}
		if (!is_graph_format(format))
			format = len && (data[0] == 'n' || data[0] == ' ' || data[0] == '#' ||
					 data[0] == '\n')
					 ? TFT_PB_FMT_GRAPHDEF_TEXT
					 : TFT_PB_FMT_GRAPHDEF;
	}
	text = format == TFT_PB_FMT_GRAPHDEF_TEXT || format == TFT_PB_FMT_COSTGRAPH_TEXT ||
	       format == TFT_PB_FMT_METAGRAPH_TEXT;
	cost = format == TFT_PB_FMT_COSTGRAPH || format == TFT_PB_FMT_COSTGRAPH_TEXT;
	meta = format == TFT_PB_FMT_METAGRAPH || format == TFT_PB_FMT_METAGRAPH_TEXT;
	r = tft_pb_dec_init(&dec, text, data, len, err);
	if (r)
		return r;
	gi = tft_graph_import_create(w, err);
	if (!gi) {
		r = err && err->code ? err->code : TFT_ENOMEM;
		goto out;
	}
	/*
	 * Named by the input as given, which tells two graph.pbtxt of two
	 * workers apart. A CostGraphDef saved on its own (str(run_metadata.
	 * cost_graph)) gives the rows its RunMetadata's cost_graph would.
	 */
	gi->dec = &dec;
	r = graph_begin(gi, name ? name : "graph", 0);
	if (!r)
		r = cost || meta ? tft_pb_wire_decode(&dec, cost ? &costgraph_msg : &metagraph_msg, NULL, gi)
				 : tft_tf_graph_decode_all(&dec, gi, &graph_fns);
	if (!r && opts && opts->progress)
		opts->progress(opts->progress_ctx, len, len, tft_graph_import_count(gi));
	if (!r)
		r = tft_graph_import_finish(gi, err);
	else
		tft_graph_import_finish(gi, NULL);
	if (!r) /* (each input's encoding once: "graphdef_text+costgraph") */
		r = tft_writer_join_meta(w, "graph_format", tft_tf_names_format_name(format), "+");
	if (!r) /* (a graph alone is a session too: info says what it holds) */
		r = tft_writer_join_meta(w, "format", cost ? "costgraph" : "graphdef", "+");
out:
	if (r && err && err->code == TFT_OK)
		tft_error_set(err, r, -1, "%s", tft_strerror(r));
	if (r)
		tft_error_set_file(err, name);
	if (text)
		tft_pb_text_fini(&dec);
	return r;
}
