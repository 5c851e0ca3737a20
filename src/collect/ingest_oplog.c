/* SPDX-License-Identifier: MIT */
/*
 * tfprof OpLogProto (tensorflow/core/profiler/tfprof_log.proto) ->
 * graph_nodes rows of kind "oplog": per op name its custom types, float
 * ops and code traces (file:line:function frames).
 *
 *   OpLogProto { repeated OpLogEntry log_entries = 1; map<int64, string> id_to_string = 2; }
 *   OpLogEntry { string name = 1; int64 float_ops = 2; repeated string types = 3; CodeDef code_def = 4; }
 *   CodeDef    { repeated Trace traces = 1; }
 *   Trace      { int64 file_id = 6; int32 lineno = 2; int64 function_id = 7; int64 line_id = 8;
 *                int32 func_start_line = 5; reserved 1, 3, 4 ("file", "function", "line":
 *                strings in the files of older versions) }
 *
 * A serializer writes the string table after the entries, so the entries
 * are read after the whole message: the top-level walk keeps them (borrowed
 * sub-messages) and the table, then each entry is decoded, with its path in
 * errors ("log_entries[3].code_def.traces[0].file_id").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/json_write.h"
#include "codec/pb_text.h"
#include "collect/ingest_oplog.h"
#include "collect/tf_names.h"
#include "core/grow.h"
#include "core/hmap.h"
#include "core/strtab.h"
#include "store/graph.h"

#define F TFT_PB_FIELD
#define H TFT_PB_HOOK

/* ---- messages ------------------------------------------------------------------------ */

struct ol_map_entry {
	uint64_t has;
	int64_t key;
	struct tft_pb_bytes value;
};

static const struct tft_pb_field map_entry_fields[] = {
	F(1, TFT_PB_INT64, 0, struct ol_map_entry, key, "key", NULL, NULL),
	F(2, TFT_PB_STRING, 0, struct ol_map_entry, value, "value", NULL, NULL),
};
static const struct tft_pb_msg map_entry_msg = {"OpLogProto.IdToStringEntry", map_entry_fields, 2,
						offsetof(struct ol_map_entry, has)};

/* A Trace: the string ids with where they were read (errors name their byte). */
struct ol_trace {
	uint64_t has;
	struct tft_pb_bytes file, function; /* older files */
	int64_t lineno;
	int64_t file_id, function_id;
	int64_t file_off, function_off;
};

enum { TR_FILE, TR_LINENO, TR_FUNCTION }; /* presence bits (field table order) */

static int on_trace_id(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v);

static const struct tft_pb_field trace_fields[] = {
	F(1, TFT_PB_STRING, 0, struct ol_trace, file, "file", NULL, NULL),
	F(2, TFT_PB_INT32, 0, struct ol_trace, lineno, "lineno", NULL, NULL),
	F(3, TFT_PB_STRING, 0, struct ol_trace, function, "function", NULL, NULL),
	H(4, TFT_PB_STRING, 0, "line", NULL, NULL),
	H(5, TFT_PB_INT32, 0, "func_start_line", NULL, NULL),
	H(6, TFT_PB_INT64, 0, "file_id", on_trace_id, NULL),
	H(7, TFT_PB_INT64, 0, "function_id", on_trace_id, NULL),
	H(8, TFT_PB_INT64, 0, "line_id", NULL, NULL),
};
static const struct tft_pb_msg trace_msg = {"Trace", trace_fields, 8, offsetof(struct ol_trace, has)};

static int on_trace(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v);

static const struct tft_pb_field code_fields[] = {
	H(1, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "traces", on_trace, NULL),
};
static const struct tft_pb_msg code_msg = {"CodeDef", code_fields, 1, TFT_PB_NOOFF};

struct ol_entry_msg {
	uint64_t has;
	struct tft_pb_bytes name;
	int64_t float_ops;
};

enum { EN_NAME, EN_FLOAT_OPS }; /* presence bits */

static int on_type(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v);
static int on_code(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v);

static const struct tft_pb_field entry_fields[] = {
	F(1, TFT_PB_STRING, 0, struct ol_entry_msg, name, "name", NULL, NULL),
	F(2, TFT_PB_INT64, 0, struct ol_entry_msg, float_ops, "float_ops", NULL, NULL),
	H(3, TFT_PB_STRING, TFT_PB_F_REPEATED, "types", on_type, NULL),
	H(4, TFT_PB_MESSAGE, 0, "code_def", on_code, NULL),
};
static const struct tft_pb_msg entry_msg = {"OpLogEntry", entry_fields, 4,
					    offsetof(struct ol_entry_msg, has)};

static int on_entry(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v);
static int on_id(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v);

static const struct tft_pb_field oplog_fields[] = {
	H(1, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "log_entries", on_entry, NULL),
	H(2, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "id_to_string", on_id, NULL),
};
static const struct tft_pb_msg oplog_msg = {"OpLogProto", oplog_fields, 2, TFT_PB_NOOFF};

/* ---- importer state ------------------------------------------------------------------ */

/* An id_to_string entry (the last entry of an id wins, as in a map). */
struct ol_str {
	int64_t id;
	const uint8_t *p; /* borrowed: the input, or the text reader's arena */
	size_t len;
};

/* What the entries of one name say, merged (tfprof's AddOpLogProto). */
struct ol_node {
	const uint8_t *name; /* borrowed */
	size_t name_len;
	struct tft_pb_bytes *types; /* owned array, bytes borrowed; each type once */
	uint32_t ntypes, ctypes;
	int has_float_ops;
	int64_t float_ops;
	char *code; /* owned: JSON array, or NULL */
	size_t code_len;
};

struct ol {
	struct tft_pb_dec *dec; /* borrowed */
	struct tft_error *err;  /* borrowed */
	struct tft_pb_sub *entries; /* the log_entries, borrowed */
	uint32_t nentries, centries;
	struct ol_str *strs; /* owned: id_to_string's entries */
	uint32_t nstrs, cstrs;
	struct tft_hmap strix; /* owned: id -> index in strs */
	struct ol_node *nodes; /* owned */
	uint32_t nnodes, cnodes;
	struct tft_strtab *names; /* owned: the node names */
	uint32_t *nodeix;         /* owned: per name id, its node's index + 1 (0: none yet) */
	uint32_t cnodeix;
	struct ol_node cur;       /* the entry being decoded: its types (owned array), has code */
	struct tft_json_writer code; /* the current entry's code_def: its frames */
	struct tft_json_writer tmp;
};

static int nomem(struct ol *o, int64_t offset)
{
	return tft_pb_wire_fail(o->dec, TFT_ENOMEM, offset, "out of memory");
}

static int str_put(struct ol *o, int64_t id, struct tft_pb_bytes v)
{
	uint64_t k = (uint64_t)id;
	uint32_t h = (uint32_t)tft_hash_u64(k), i = o->nstrs;
	int r = tft_hmap_add(&o->strix, &k, h, &i);

	if (r < 0)
		return TFT_ENOMEM;
	if (r == 0) {
		if (tft_grow((void **)&o->strs, &o->cstrs, o->nstrs + 1, sizeof(*o->strs))) {
			tft_hmap_del(&o->strix, &k, h);
			return TFT_ENOMEM;
		}
		o->nstrs++;
	}
	o->strs[i] = (struct ol_str){ id, v.p, v.len };
	return 0;
}

/* The string of id, or NULL (id 0 absent from the table: ""). */
static const struct ol_str *str_get(const struct ol *o, int64_t id)
{
	static const struct ol_str none = { 0, (const uint8_t *)"", 0 };
	uint32_t i = tft_hmap_get1(&o->strix, (uint64_t)id, (uint32_t)tft_hash_u64((uint64_t)id));

	if (i != TFT_HMAP_EMPTY)
		return &o->strs[i];
	return id == 0 ? &none : NULL;
}

/* ---- handlers -------------------------------------------------------------------------- */

static int on_entry(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct ol *o = ctx;

	if (tft_grow((void **)&o->entries, &o->centries, o->nentries + 1, sizeof(*o->entries)))
		return nomem(o, v->offset);
	o->entries[o->nentries++] = v->sub;
	return 0;
}

static int on_id(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct ol *o = ctx;
	struct ol_map_entry e;
	int r;

	memset(&e, 0, sizeof(e));
	r = tft_pb_wire_decode_sub(&v->sub, &map_entry_msg, &e, ctx);
	if (r)
		return r;
	return str_put(o, e.key, e.value) ? nomem(o, v->offset) : 0;
}

/* Type t into nd's, unless there (tfprof keeps a node's types as a set). */
static int add_type(struct ol_node *nd, struct tft_pb_bytes t)
{
	for (uint32_t i = 0; i < nd->ntypes; i++)
		if (nd->types[i].len == t.len && (!t.len || !memcmp(nd->types[i].p, t.p, t.len)))
			return 0;
	if (tft_grow((void **)&nd->types, &nd->ctypes, nd->ntypes + 1, sizeof(*nd->types)))
		return TFT_ENOMEM;
	nd->types[nd->ntypes++] = t;
	return 0;
}

static int on_type(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct ol *o = ctx;

	return add_type(&o->cur, (struct tft_pb_bytes){ v->p, v->len }) ? nomem(o, v->offset) : 0;
}

static int on_trace_id(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct ol_trace *t = msg;

	if (f->num == 6) {
		t->file_id = v->n.i;
		t->file_off = v->offset;
	} else {
		t->function_id = v->n.i;
		t->function_off = v->offset;
	}
	return 0;
}

/* One frame "file:lineno:function" of the current code_def. */
static int on_trace(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct ol *o = ctx;
	struct ol_trace t;
	struct tft_pb_bytes file, func;
	char num[24];
	int r;

	memset(&t, 0, sizeof(t));
	t.file_off = t.function_off = -1;
	r = tft_pb_wire_decode_sub(&v->sub, &trace_msg, &t, ctx);
	if (r)
		return r;
	file = t.file;
	func = t.function;
	/* the ids (newer files) name the strings; the strings themselves in older ones */
	if (t.file_off >= 0 || !(t.has & (1ull << TR_FILE))) {
		const struct ol_str *s = str_get(o, t.file_id);

		if (!s)
			return tft_pb_wire_fail(o->dec, TFT_EFORMAT, t.file_off,
						"file_id: string id %lld is not in id_to_string",
						(long long)t.file_id);
		file = (struct tft_pb_bytes){ s->p, s->len };
	}
	if (t.function_off >= 0 || !(t.has & (1ull << TR_FUNCTION))) {
		const struct ol_str *s = str_get(o, t.function_id);

		if (!s)
			return tft_pb_wire_fail(o->dec, TFT_EFORMAT, t.function_off,
						"function_id: string id %lld is not in id_to_string",
						(long long)t.function_id);
		func = (struct tft_pb_bytes){ s->p, s->len };
	}
	o->tmp.len = 0;
	o->tmp.status = 0;
	tft_json_write_raw(&o->tmp, (const char *)file.p, file.len);
	snprintf(num, sizeof(num), ":%lld:", (long long)(int32_t)t.lineno);
	tft_json_write_raw(&o->tmp, num, strlen(num));
	tft_json_write_raw(&o->tmp, (const char *)func.p, func.len);
	{
		size_t n = 0;
		const char *frame = tft_json_write_borrow(&o->tmp, &n);

		tft_json_write_str(&o->code, frame ? frame : "", n);
	}
	return o->tmp.status || o->code.status ? nomem(o, v->offset) : 0;
}

static int on_code(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct ol *o = ctx;

	o->code.len = 0;
	o->code.depth = 0;
	o->code.sep = 0;
	o->code.status = 0;
	o->cur.code = (char *)""; /* (a mark: the entry has a code_def; its frames are in o->code) */
	tft_json_write_begin_array(&o->code);
	return tft_pb_wire_decode_sub(&v->sub, &code_msg, NULL, ctx);
}

/* The node of name (a new one at its first entry), or NULL when out of memory. */
static struct ol_node *node_of(struct ol *o, struct tft_pb_bytes name)
{
	uint32_t id = tft_strtab_intern(o->names, (const char *)name.p, name.len), had = o->cnodeix;
	struct ol_node *nd;

	if (id == UINT32_MAX || tft_grow((void **)&o->nodeix, &o->cnodeix, id + 1, sizeof(*o->nodeix)))
		return NULL;
	if (o->cnodeix > had)
		memset(o->nodeix + had, 0, (o->cnodeix - had) * sizeof(*o->nodeix));
	if (o->nodeix[id])
		return &o->nodes[o->nodeix[id] - 1];
	if (tft_grow((void **)&o->nodes, &o->cnodes, o->nnodes + 1, sizeof(*o->nodes)))
		return NULL;
	nd = &o->nodes[o->nnodes++];
	memset(nd, 0, sizeof(*nd));
	nd->name = name.p;
	nd->name_len = name.len;
	o->nodeix[id] = o->nnodes;
	return nd;
}

/*
 * Entry k (o->entries[k]) merged into the node of its name, as tfprof's
 * AddOpLogProto does: its types added, its float_ops when not 0, its
 * code_def in place of an earlier one.
 */
static int decode_entry(struct ol *o, uint32_t k)
{
	struct ol_entry_msg e;
	struct tft_pb_sub *s = &o->entries[k];
	int64_t off = o->dec->decode_text_sub ? -1 : (int64_t)(s->p - o->dec->base);
	struct ol_node *nd;
	int r;

	memset(&e, 0, sizeof(e));
	o->cur.ntypes = 0;
	o->cur.code = NULL;
	r = tft_pb_wire_decode_sub(s, &entry_msg, &e, o);
	if (r)
		return r;
	if (!(nd = node_of(o, e.name)))
		return nomem(o, off);
	for (uint32_t i = 0; i < o->cur.ntypes; i++)
		if (add_type(nd, o->cur.types[i]))
			return nomem(o, off);
	if ((e.has & (1ull << EN_FLOAT_OPS)) && (e.float_ops || !nd->has_float_ops)) {
		nd->has_float_ops = 1;
		nd->float_ops = e.float_ops;
	}
	if (o->cur.code) {
		const char *js;
		size_t n = 0;
		char *copy;

		tft_json_write_end_array(&o->code);
		js = tft_json_write_borrow(&o->code, &n);
		if (o->code.status || !js || !(copy = malloc(n + 1)))
			return nomem(o, off);
		memcpy(copy, js, n);
		copy[n] = '\0';
		free(nd->code);
		nd->code = copy;
		nd->code_len = n;
	}
	return 0;
}

static void ol_free(struct ol *o)
{
	for (uint32_t i = 0; i < o->nnodes; i++) {
		free(o->nodes[i].types);
		free(o->nodes[i].code);
	}
	free(o->nodes);
	free(o->cur.types);
	free(o->nodeix);
	free(o->entries);
	free(o->strs);
	tft_hmap_fini(&o->strix);
	tft_strtab_destroy(o->names);
	tft_json_write_fini(&o->code);
	tft_json_write_fini(&o->tmp);
}

/* The merged nodes as rows of graph `gname` (kind "oplog"). */
static int store_nodes(struct ol *o, struct tft_writer *w, const char *gname, struct tft_error *err)
{
	struct tft_graph_store *gs = tft_graph_store_open(w, err);
	const char *unique = NULL;
	int64_t gid;
	int r = 0;

	if (!gs)
		return err && err->code ? err->code : TFT_EIO;
	gid = tft_graph_store_begin(gs, gname, &unique, err);
	if (gid < 0) {
		tft_graph_store_close(gs, NULL);
		return (int)gid;
	}
	for (uint32_t i = 0; i < o->nnodes && !r; i++) {
		const struct ol_node *nd = &o->nodes[i];
		struct tft_graph_node row;

		memset(&row, 0, sizeof(row));
		row.graph = (struct tft_graph_text){ unique, strlen(unique) };
		row.kind = (struct tft_graph_text){ "oplog", 5 };
		row.name = (struct tft_graph_text){ (const char *)nd->name, nd->name_len };
		row.compute_cost = row.temporary_memory = row.persistent_memory = TFT_GRAPH_NO_COST;
		row.oplog = true;
		row.float_ops = nd->has_float_ops ? nd->float_ops : TFT_GRAPH_NO_COST;
		if (nd->ntypes) {
			o->tmp.len = o->tmp.depth = o->tmp.sep = 0;
			o->tmp.status = 0;
			tft_json_write_begin_array(&o->tmp);
			for (uint32_t t = 0; t < nd->ntypes; t++)
				tft_json_write_str(&o->tmp, (const char *)nd->types[t].p, nd->types[t].len);
			tft_json_write_end_array(&o->tmp);
			if (o->tmp.status) {
				r = tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
				break;
			}
			row.op_types.p = tft_json_write_borrow(&o->tmp, &row.op_types.len);
		}
		if (nd->code)
			row.code = (struct tft_graph_text){ nd->code, nd->code_len };
		r = tft_graph_store_add(gs, gid, &row, err);
	}
	if (r) {
		tft_graph_store_close(gs, NULL);
		return r;
	}
	return tft_graph_store_close(gs, err);
}

int tft_oplog_ingest(struct tft_writer *w, const char *name, const uint8_t *data, size_t len,
		     int format, const struct tft_ingest_opts *opts, struct tft_error *err)
{
	struct tft_pb_dec dec;
	struct ol o;
	int text, r;

	if (!w || (!data && len))
		return tft_error_set(err, TFT_EINVAL, -1, "no writer or no input");
	if (format != TFT_PB_FMT_OPLOG && format != TFT_PB_FMT_OPLOG_TEXT)
		format = tft_pb_sniff(data, len, name) == TFT_PB_FMT_OPLOG_TEXT ? TFT_PB_FMT_OPLOG_TEXT
									  : TFT_PB_FMT_OPLOG;
	text = format == TFT_PB_FMT_OPLOG_TEXT;
	memset(&o, 0, sizeof(o));
	tft_hmap_init(&o.strix, 1);
	o.dec = &dec;
	o.err = err;
	tft_json_write_init_mem(&o.code);
	tft_json_write_init_mem(&o.tmp);
	r = tft_pb_dec_init(&dec, text, data, len, err);
	if (r)
		goto out;
	if (!(o.names = tft_strtab_create())) {
		r = tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
		goto out;
	}
	/* The entries and the string table, then each entry (its path: log_entries[k]). */
	r = tft_pb_wire_decode(&dec, &oplog_msg, NULL, &o);
	for (uint32_t k = 0; !r && k < o.nentries; k++)
		r = decode_entry(&o, k);
	if (!r)
		r = store_nodes(&o, w, name ? name : "tfprof_log", err);
	if (!r && opts && opts->progress)
		opts->progress(opts->progress_ctx, len, len, o.nnodes);
	if (!r)
		r = tft_writer_join_meta(w, "graph_format", tft_tf_names_format_name(format), "+");
	if (!r) /* (alone it is a session too: info says what it holds) */
		r = tft_writer_join_meta(w, "format", "oplog", "+");
out:
	if (r && err && err->code == TFT_OK)
		tft_error_set(err, r, -1, "%s", tft_strerror(r));
	if (r)
		tft_error_set_file(err, name);
	if (text)
		tft_pb_text_fini(&dec);
	ol_free(&o);
	return r;
}
