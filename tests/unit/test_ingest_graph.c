/* SPDX-License-Identifier: MIT */
/*
 * Tests for GraphDef/CostGraphDef import into graph_nodes (collect/ingest_graph,
 * store/graph), RunMetadata partition_graphs/cost_graph, and the RunMetadata
 * step entry point (step index/name, node_stats_index, empty devices, dim names).
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collect/ingest.h"
#include "collect/ingest_graph.h"
#include "collect/ingest_runmeta.h"
#include "collect/tf_names.h"
#include "store/graph.h"
#include "store/session.h"
#include "pbenc.h"
#include "tap.h"

/* ---- a tiny protobuf encoder ----------------------------------------------------- */

/* TensorShapeProto with dims (size, name) into e as field num. */
static void e_shape(struct enc *e, uint32_t num, const int64_t *dims, const char *const *names,
		    int n)
{
	struct enc sh = {0}, d = {0};

	for (int i = 0; i < n; i++) {
		e_int(&d, 1, (uint64_t)dims[i]);
		if (names && names[i])
			e_str(&d, 2, names[i]);
		e_msg(&sh, 2, &d);
	}
	e_msg(e, num, &sh);
}

/* NodeDef attr entry: key -> AttrValue (already encoded in val). */
static void e_attr(struct enc *node, const char *key, struct enc *val)
{
	struct enc ent = {0};

	e_str(&ent, 1, key);
	e_msg(&ent, 2, val);
	e_msg(node, 5, &ent);
}

/* A Conv2D-like NodeDef. */
static void e_conv_node(struct enc *graph, const char *name)
{
	static const int64_t out[] = {8, 28, 28, 32};
	static const int64_t kdims[] = {3, 3, 1, 32};
	struct enc n = {0}, v = {0}, l = {0}, t = {0};

	e_str(&n, 1, name);
	e_str(&n, 2, "Conv2D");
	e_str(&n, 3, "input");
	e_str(&n, 3, "kernel/read:1");
	e_str(&n, 3, "^init");
	e_str(&n, 4, "/device:GPU:0");
	e_int(&v, 6, 1); /* type: DT_FLOAT */
	e_attr(&n, "T", &v);
	e_str(&v, 2, "NHWC");
	e_attr(&n, "data_format", &v);
	e_str(&v, 2, "SAME");
	e_attr(&n, "padding", &v);
	for (int i = 0; i < 4; i++)
		e_int(&l, 3, (uint64_t)(i == 1 || i == 2 ? 2 : 1));
	e_msg(&v, 1, &l);
	e_attr(&n, "strides", &v);
	e_shape(&l, 7, out, NULL, 4);
	e_msg(&v, 1, &l);
	e_attr(&n, "_output_shapes", &v);
	e_int(&t, 1, 1);
	e_shape(&t, 2, kdims, NULL, 4);
	e_str(&t, 4, "\x01\x02\x03\x04"); /* tensor_content: not kept */
	e_msg(&v, 8, &t);
	e_attr(&n, "value", &v);
	e_msg(graph, 1, &n);
}

static char tmpdir[256];
static int seq;

struct found {
	const char *want; /* keep only rows of this kind (NULL: any) */
	int n;
	char op[64], device[64], inputs[256], attrs[1024], shapes[256], cost[512], graph[128],
		kind[16];
	int64_t compute_cost, temp, persistent;
};

static void cp(char *dst, size_t size, struct tft_graph_text t)
{
	snprintf(dst, size, "%.*s", t.p ? (int)t.len : 6, t.p ? t.p : "(null)");
}

static int on_found(void *ctx, const struct tft_graph_node *n, int64_t graph_id)
{
	struct found *f = ctx;

	f->n++;
	if (f->want && (n->kind.len != strlen(f->want) || memcmp(n->kind.p, f->want, n->kind.len)))
		return 0;
	cp(f->op, sizeof(f->op), n->op);
	cp(f->device, sizeof(f->device), n->device);
	cp(f->inputs, sizeof(f->inputs), n->inputs);
	cp(f->attrs, sizeof(f->attrs), n->attrs);
	cp(f->shapes, sizeof(f->shapes), n->output_shapes);
	cp(f->cost, sizeof(f->cost), n->cost);
	cp(f->graph, sizeof(f->graph), n->graph);
	cp(f->kind, sizeof(f->kind), n->kind);
	f->compute_cost = n->compute_cost;
	f->temp = n->temporary_memory;
	f->persistent = n->persistent_memory;
	return 0;
}

static int lookup(const char *path, const char *name, const char *kind, struct found *f)
{
	struct tft_error err;
	int r;

	memset(f, 0, sizeof(*f));
	f->want = kind;
	tft_error_clear(&err);
	r = tft_graph_lookup(path, name, on_found, f, &err);
	if (r > 0 && kind && strcmp(f->kind, kind) != 0)
		return 0;
	return r;
}

static uint8_t *read_file(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "rb");
	uint8_t *buf;
	long n;

	if (!fp)
		return NULL;
	fseek(fp, 0, SEEK_END);
	n = ftell(fp);
	fseek(fp, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, fp) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(fp);
	*len = (size_t)n;
	return buf;
}

/* First column of the rows of sql on a session file, joined by '|' into out (NULL as "NULL"). */
static const char *q(const char *path, const char *sql, char *out, size_t size)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	size_t n = 0;

	out[0] = 0;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		snprintf(out, size, "(sql error: %s)", db ? sqlite3_errmsg(db) : "open");
		sqlite3_close(db);
		return out;
	}
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *t = (const char *)sqlite3_column_text(st, 0);

		n += (size_t)snprintf(out + n, n < size ? size - n : 0, "%s%s", n ? "|" : "",
				      t ? t : "NULL");
		if (n >= size)
			break;
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
	return out;
}

/* Import one in-memory input into a new session file (path filled); 0 or the importer's status. */
static int import_one(char *path, size_t size, const char *name, const void *data, size_t len,
		      int fmt, struct tft_error *err)
{
	struct tft_writer *w;
	int r;

	snprintf(path, size, "%s/i%d.tft", tmpdir, seq++);
	tft_error_clear(err);
	w = tft_writer_open(path, NULL, err);
	if (!w)
		return -1;
	if (fmt == TFT_PB_FMT_UNKNOWN) /* detected, as import does */
		r = tft_ingest_mem(w, name, data, len, NULL, err);
	else if (fmt == TFT_PB_FMT_RUNMETA || fmt == TFT_PB_FMT_RUNMETA_TEXT)
		r = tft_runmeta_ingest_step(w, name, data, len, fmt, 0, NULL, NULL, err);
	else
		r = tft_graph_ingest(w, name, data, len, fmt, NULL, err);
	if (r) {
		printf("#   %s: %s\n", name, err->msg);
		tft_writer_abort(w);
		return r;
	}
	return tft_writer_close(w, err);
}

/* ---- tests ----------------------------------------------------------------------- */

static void test_binary_graphdef(void)
{
	struct enc g = {0};
	struct tft_error err;
	struct tft_writer *w;
	struct found f;
	char path[512];
	int r;

	e_conv_node(&g, "conv1/Conv2D");
	e_conv_node(&g, "conv2/Conv2D");
	{
		struct enc ver = {0};

		e_int(&ver, 1, 27); /* versions { producer: 27 }: skipped */
		e_msg(&g, 4, &ver);
	}
	is_int(tft_pb_sniff(g.p, g.len, "model.pb"), TFT_PB_FMT_GRAPHDEF, "binary GraphDef sniffed");
	snprintf(path, sizeof(path), "%s/g%d.tft", tmpdir, seq++);
	tft_error_clear(&err);
	w = tft_writer_open(path, NULL, &err);
	r = tft_graph_ingest(w, "dir/model.pb", g.p, g.len, TFT_PB_FMT_GRAPHDEF, NULL, &err);
	is_int(r, 0, "binary GraphDef imports");
	if (r)
		printf("#   %s\n", err.msg);
	is_int(tft_writer_close(w, &err), 0, "session closes");
	is_int(tft_graph_count(path, &err), 2, "two graph nodes");
	is_int(lookup(path, "conv2/Conv2D", NULL, &f), 1, "lookup by name finds the node");
	is_str(f.op, "Conv2D", "op");
	is_str(f.device, "/device:GPU:0", "device");
	is_str(f.graph, "dir/model.pb", "graph named after the input as given");
	is_str(f.kind, "graphdef", "kind graphdef");
	is_str(f.inputs, "[\"input\",\"kernel/read:1\",\"^init\"]", "inputs with :N and ^ctrl");
	is_str(f.shapes, "[[8,28,28,32]]", "_output_shapes -> output_shapes");
	ok(strstr(f.attrs, "\"T\":\"DT_FLOAT\"") != NULL, "T as a dtype name: %s", f.attrs);
	ok(strstr(f.attrs, "\"data_format\":\"NHWC\"") != NULL, "data_format");
	ok(strstr(f.attrs, "\"padding\":\"SAME\"") != NULL, "padding");
	ok(strstr(f.attrs, "\"strides\":[1,2,2,1]") != NULL, "strides list");
	ok(strstr(f.attrs, "\"value\":{\"dtype\":\"DT_FLOAT\",\"shape\":[3,3,1,32]}") != NULL,
	   "tensor value: dtype and shape, no contents");
	ok(strstr(f.attrs, "_output_shapes") == NULL, "_output_shapes not repeated in attrs");
	is_int(f.compute_cost, TFT_GRAPH_NO_COST, "no cost for a GraphDef node");
	is_int(lookup(path, "nope", NULL, &f), 0, "unknown node: nothing found");

	/* Truncated: a precise error. */
	w = tft_writer_open(":memory:", NULL, &err);
	tft_error_clear(&err);
	r = tft_graph_ingest(w, "cut.pb", g.p, g.len - 5, TFT_PB_FMT_GRAPHDEF, NULL, &err);
	ok(r == TFT_EFORMAT && err.offset >= 0 && strstr(err.msg, "node[1]"),
	   "truncated GraphDef refused with a path: %s", err.msg);
	tft_writer_abort(w);
	free(g.p);
}

static void test_real_pbtxt(const char *data)
{
	static const struct {
		const char *file;
		int nodes;
	} files[] = {
		{"tensorboard/graphdef/functionaltests_graph.pbtxt", 338},
		{"tensorboard/graphdef/graphdef_mnist.pbtxt", 364},
		{"tensorboard/graphdef/tf_graph_demo_graph.pbtxt", 118},
	};

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char src[1024], path[512], msg[600];
		struct tft_error err;
		struct tft_writer *w;
		uint8_t *buf;
		size_t len;
		int r, fmt;

		snprintf(src, sizeof(src), "%s/%s", data, files[i].file);
		buf = read_file(src, &len);
		if (!buf) {
			ok(0, "%s not found (TFT_DATA)", files[i].file);
			continue;
		}
		fmt = tft_pb_sniff(buf, len, src);
		snprintf(msg, sizeof(msg), "%s sniffed as text GraphDef", files[i].file);
		is_int(fmt, TFT_PB_FMT_GRAPHDEF_TEXT, msg);
		snprintf(path, sizeof(path), "%s/g%d.tft", tmpdir, seq++);
		tft_error_clear(&err);
		w = tft_writer_open(path, NULL, &err);
		r = tft_graph_ingest(w, src, buf, len, fmt, NULL, &err);
		snprintf(msg, sizeof(msg), "%s imports: %s", files[i].file, r ? err.msg : "ok");
		is_int(r, 0, msg);
		tft_writer_close(w, &err);
		snprintf(msg, sizeof(msg), "%s: %d nodes", files[i].file, files[i].nodes);
		is_int(tft_graph_count(path, &err), files[i].nodes, msg);
		if (i == 1) {
			struct found f;

			is_int(lookup(path, "input_reshape/Reshape/shape", NULL, &f), 1,
			       "mnist: Const node found");
			ok(strstr(f.attrs, "\"value\":{\"dtype\":\"DT_INT32\",\"shape\":[4]}") != NULL,
			   "mnist: Const value reduced to dtype+shape: %s", f.attrs);
		}
		if (i == 0) {
			struct found f;

			is_int(lookup(path, "global_step", NULL, &f), 1, "functionaltests: global_step");
			is_str(f.op, "Variable", "functionaltests: op");
			is_str(f.shapes, "[[]]", "functionaltests: scalar _output_shapes");
			ok(strstr(f.attrs, "\"dtype\":\"DT_INT64\"") != NULL, "dtype attr: %s", f.attrs);
		}
		free(buf);
	}
}

/* A RunMetadata with step_stats (an empty device too), partition_graphs and cost_graph. */
static void build_runmeta(struct enc *rm)
{
	static const int64_t dims[] = {32, 10};
	static const char *const dnames[] = {"batch", NULL};
	struct enc ss = {0}, dev = {0}, n = {0}, out = {0}, td = {0}, g = {0}, cg = {0}, cn = {0},
		   oi = {0}, ii = {0};

	/* GPU:0 with two nodes, out of start order (timeline.py keeps node_stats order). */
	e_str(&n, 1, "dense/MatMul");
	e_int(&n, 2, 1000200);
	e_int(&n, 5, 50);
	e_str(&n, 8, "dense/MatMul = MatMul(x, w)");
	e_int(&out, 1, 0);
	e_int(&td, 1, 1);
	e_shape(&td, 2, dims, dnames, 2);
	e_msg(&out, 3, &td);
	e_msg(&n, 7, &out);
	e_msg(&dev, 2, &n);
	e_str(&n, 1, "dense/BiasAdd");
	e_int(&n, 2, 1000100);
	e_int(&n, 5, 20);
	e_str(&n, 8, "dense/BiasAdd = BiasAdd(dense/MatMul, b)");
	e_msg(&dev, 2, &n);
	e_str(&dev, 1, "/job:localhost/replica:0/task:0/device:GPU:0");
	e_msg(&ss, 1, &dev);
	/* A device without nodes. */
	e_str(&dev, 1, "/job:localhost/replica:0/task:0/device:CPU:0");
	e_msg(&ss, 1, &dev);
	e_msg(rm, 1, &ss);

	/* cost_graph: one node with costs, output_info and input_info. */
	e_str(&cn, 1, "dense/MatMul");
	e_str(&cn, 2, "/job:localhost/replica:0/task:0/device:GPU:0");
	e_int(&cn, 3, 7);
	e_int(&ii, 1, 3);
	e_int(&ii, 2, 0);
	e_msg(&cn, 4, &ii);
	e_int(&oi, 1, 1280);
	e_int(&oi, 2, (uint64_t)-1);
	e_shape(&oi, 3, dims, NULL, 2);
	e_int(&oi, 4, 1);
	e_msg(&cn, 5, &oi);
	e_int(&cn, 6, 4096);
	e_int(&cn, 9, 42);
	e_int(&cn, 12, 128);
	e_int(&cn, 14, 40);
	e_msg(&cg, 1, &cn);
	e_msg(rm, 2, &cg);

	/* partition_graphs[0]: the MatMul node. */
	e_str(&n, 1, "dense/MatMul");
	e_str(&n, 2, "MatMul");
	e_str(&n, 3, "x");
	e_str(&n, 3, "w");
	e_str(&n, 4, "/job:localhost/replica:0/task:0/device:GPU:0");
	e_msg(&g, 1, &n);
	e_msg(rm, 3, &g);
}

struct evs {
	struct tft_session *s;
	int n;
	char names[8][64];
	int64_t idx[8];
	char output[8][512];
};

static int collect(void *ctx, const struct tft_event *ev)
{
	struct evs *l = ctx;

	if (l->n >= 8)
		return 0;
	snprintf(l->names[l->n], 64, "%s", tft_session_str(l->s, ev->name, NULL));
	l->idx[l->n] = -1;
	l->output[l->n][0] = 0;
	for (int i = 0; i < ev->nargs; i++) {
		const char *k = tft_session_str(l->s, ev->args[i].key, NULL);

		if (!strcmp(k, "node_stats_index"))
			l->idx[l->n] = ev->args[i].v.i;
		if (!strcmp(k, "output"))
			snprintf(l->output[l->n], 512, "%s", tft_session_str(l->s, ev->args[i].v.str, NULL));
	}
	l->n++;
	return 0;
}

static void test_runmeta_graphs(void)
{
	struct enc rm = {0};
	struct tft_error err;
	struct tft_writer *w;
	struct tft_session *s;
	struct found f;
	char path[512];
	int r, empty_cpu = 0;

	build_runmeta(&rm);
	snprintf(path, sizeof(path), "%s/r%d.tft", tmpdir, seq++);
	tft_error_clear(&err);
	w = tft_writer_open(path, NULL, &err);
	r = tft_runmeta_ingest_step(w, "traces/run_meta_7.pb", rm.p, rm.len, TFT_PB_FMT_RUNMETA, 7,
				    "train step 7", NULL, &err);
	is_int(r, 0, "RunMetadata with graphs imports");
	if (r)
		printf("#   %s\n", err.msg);
	is_int(tft_writer_close(w, &err), 0, "closes");
	is_int(tft_graph_count(path, &err), 2, "partition graph node + cost graph node stored");
	is_int(lookup(path, "dense/MatMul", "costgraph", &f), 2, "both rows found by name");
	is_str(f.kind, "costgraph", "the cost graph's row");
	is_str(f.graph, "traces/run_meta_7.pb:cost_graph", "cost graph name");
	is_int(f.compute_cost, 42, "compute_cost");
	is_int(f.temp, 4096, "temporary_memory");
	is_int(f.persistent, 128, "persistent_memory");
	is_str(f.shapes, "[[32,10]]", "output_info shapes");
	ok(strstr(f.cost, "\"output_info\":[{\"size\":1280,\"alias_input_port\":-1,\"dtype\":\"DT_FLOAT\"}]") != NULL,
	   "output_info sizes: %s", f.cost);
	ok(strstr(f.cost, "\"input_info\":[{\"preceding_node\":3,\"preceding_port\":0}]") != NULL,
	   "input_info");
	ok(strstr(f.cost, "\"compute_time\":40") != NULL, "compute_time");

	s = tft_session_open(path, &err);
	if (!ok(s != NULL, "session opens"))
		return;
	is_str(tft_session_meta(s, "graph_nodes"), "2", "meta graph_nodes counter");
	is_int(tft_session_step_count(s), 1, "one step");
	if (tft_session_step_count(s) == 1) {
		const struct tft_step *st = tft_session_step(s, 0);

		is_int(st->index, 7, "step index from the caller");
		is_str(tft_session_str(s, st->name, NULL), "train step 7", "step name from the caller");
	}
	for (uint32_t i = 0; i < tft_session_track_count(s); i++) {
		const struct tft_track *t = tft_session_track(s, i);
		const char *nm = tft_session_str(s, t->name, NULL);

		if (strstr(nm, "device:CPU:0") && t->slices == 0)
			empty_cpu = 1;
		if (strstr(nm, "device:GPU:0") && !strstr(nm, "comm")) {
			struct evs l;

			memset(&l, 0, sizeof(l));
			l.s = s;
			tft_session_scan(s, t->id, INT64_MIN, INT64_MAX, 0, collect, &l, &err);
			is_int(l.n, 2, "two GPU slices");
			if (l.n == 2) {
				/* Sorted by time: BiasAdd (index 1) first. */
				is_str(l.names[0], "dense/BiasAdd", "slices in time order");
				is_int(l.idx[0], 1, "node_stats_index of the 2nd node_stats entry");
				is_int(l.idx[1], 0, "node_stats_index of the 1st");
				ok(strstr(l.output[1], "\"shape\":[32,10],\"dim_names\":[\"batch\",\"\"]") != NULL,
				   "dim names kept next to the shape: %s", l.output[1]);
			}
		}
	}
	ok(empty_cpu, "device without nodes kept as an empty track");
	tft_session_close(s);

	/* A device too large to hold in memory goes through the sorter: same order. */
	{
		struct tft_ingest_opts opts = {0};
		struct evs l;

		opts.mem_budget = 1;
		snprintf(path, sizeof(path), "%s/r%d.tft", tmpdir, seq++);
		tft_error_clear(&err);
		w = tft_writer_open(path, NULL, &err);
		r = tft_runmeta_ingest_step(w, "run_meta.pb", rm.p, rm.len, TFT_PB_FMT_RUNMETA, 0, NULL,
					    &opts, &err);
		is_int(r, 0, "imports with a 1-byte memory budget");
		tft_writer_close(w, &err);
		s = tft_session_open(path, &err);
		memset(&l, 0, sizeof(l));
		l.s = s;
		for (uint32_t i = 0; s && i < tft_session_track_count(s); i++) {
			const struct tft_track *t = tft_session_track(s, i);
			const char *nm = tft_session_str(s, t->name, NULL);

			if (strstr(nm, "device:GPU:0") && !strstr(nm, "comm"))
				tft_session_scan(s, t->id, INT64_MIN, INT64_MAX, 0, collect, &l, &err);
		}
		ok(l.n == 2 && !strcmp(l.names[0], "dense/BiasAdd") && l.idx[0] == 1,
		   "spilled device: same order and node_stats_index");
		if (s)
			tft_session_close(s);
	}
	free(rm.p);
}

/*
 * CostGraphDef is proto3: a zero is never written, so an absent scalar means
 * 0 / false (TF writes alias_input_port -1 for an output that aliases
 * nothing, and leaves it out for one that aliases input 0). Text and binary
 * input, with or without the zeros spelt out, give the same rows.
 */
static const char cost_text_sparse[] =
	"step_stats { dev_stats { device: \"/job:localhost/replica:0/task:0/device:CPU:0\"\n"
	"  node_stats { node_name: \"x\" all_start_micros: 1000 all_end_rel_micros: 2 } } }\n"
	"cost_graph {\n"
	"  node { name: \"x\" device: \"/cpu:0\" output_info { size: 16 alias_input_port: -1 } }\n"
	"  node { name: \"w/read\" id: 1 input_info { preceding_node: 0 }\n"
	"         output_info { size: 16 } compute_cost: 3 is_final: true }\n"
	"}\n";
static const char cost_text_zeros[] =
	"step_stats { dev_stats { device: \"/job:localhost/replica:0/task:0/device:CPU:0\"\n"
	"  node_stats { node_name: \"x\" all_start_micros: 1000 all_end_rel_micros: 2 } } }\n"
	"cost_graph {\n"
	"  node { name: \"x\" device: \"/cpu:0\" id: 0 output_info { size: 16 alias_input_port: -1 dtype: DT_INVALID }\n"
	"         temporary_memory_size: 0 is_final: false compute_cost: 0\n"
	"         persistent_memory_size: 0 compute_time: 0 memory_time: 0 inaccurate: false\n"
	"         host_temp_memory_size: 0 device_temp_memory_size: 0\n"
	"         device_persistent_memory_size: 0 }\n"
	"  node { name: \"w/read\" id: 1 input_info { preceding_node: 0 preceding_port: 0 }\n"
	"         output_info { size: 16 alias_input_port: 0 } compute_cost: 3 is_final: true }\n"
	"}\n";

static void build_cost_runmeta(struct enc *rm)
{
	struct enc ss = {0}, dev = {0}, n = {0}, cg = {0}, cn = {0}, oi = {0}, ii = {0};

	e_str(&n, 1, "x");
	e_int(&n, 2, 1000);
	e_int(&n, 5, 2);
	e_str(&dev, 1, "/job:localhost/replica:0/task:0/device:CPU:0");
	e_msg(&dev, 2, &n);
	e_msg(&ss, 1, &dev);
	e_msg(rm, 1, &ss);
	/* Nothing that is 0 is written, as protobuf's serializer does. */
	e_str(&cn, 1, "x");
	e_str(&cn, 2, "/cpu:0");
	e_int(&oi, 1, 16);
	e_int(&oi, 2, (uint64_t)-1);
	e_msg(&cn, 5, &oi);
	e_msg(&cg, 1, &cn);
	e_str(&cn, 1, "w/read");
	e_int(&cn, 3, 1);
	e_msg(&cn, 4, &ii); /* an empty InputInfo: node 0, port 0 */
	e_int(&oi, 1, 16);
	e_msg(&cn, 5, &oi);
	e_int(&cn, 9, 3);
	e_int(&cn, 7, 1);
	e_msg(&cg, 1, &cn);
	e_msg(rm, 2, &cg);
}

static void test_cost_defaults(void)
{
	static const char *const want_x =
		"{\"id\":0,\"input_info\":[],\"output_info\":[{\"size\":16,\"alias_input_port\":-1,\"dtype\":\"DT_INVALID\"}],"
		"\"control_input\":[],\"compute_time\":0,\"memory_time\":0,\"is_final\":false,"
		"\"inaccurate\":false}";
	static const char *const want_read =
		"{\"id\":1,\"input_info\":[{\"preceding_node\":0,\"preceding_port\":0}],"
		"\"output_info\":[{\"size\":16,\"alias_input_port\":0,\"dtype\":\"DT_INVALID\"}],\"control_input\":[],"
		"\"compute_time\":0,\"memory_time\":0,\"is_final\":true,\"inaccurate\":false}";
	struct {
		const char *what;
		const void *p;
		size_t len;
		int fmt;
	} in[3];
	struct enc rm = {0};
	struct tft_error err;
	char path[512], out[1024], msg[200];

	build_cost_runmeta(&rm);
	in[0].what = "binary";
	in[0].p = rm.p;
	in[0].len = rm.len;
	in[0].fmt = TFT_PB_FMT_RUNMETA;
	in[1].what = "text";
	in[1].p = cost_text_sparse;
	in[1].len = strlen(cost_text_sparse);
	in[1].fmt = TFT_PB_FMT_RUNMETA_TEXT;
	in[2].what = "text with the zeros";
	in[2].p = cost_text_zeros;
	in[2].len = strlen(cost_text_zeros);
	in[2].fmt = TFT_PB_FMT_RUNMETA_TEXT;
	for (int i = 0; i < 3; i++) {
		snprintf(msg, sizeof(msg), "%s cost graph imports", in[i].what);
		if (!ok(import_one(path, sizeof(path), "run.pb", in[i].p, in[i].len, in[i].fmt, &err) == 0,
			"%s", msg))
			continue;
		snprintf(msg, sizeof(msg), "%s: absent costs and memory sizes are 0", in[i].what);
		is_str(q(path,
			 "SELECT compute_cost || ',' || temporary_memory || ',' || persistent_memory"
			 " FROM graph_nodes WHERE kind = 'costgraph' ORDER BY id",
			 out, sizeof(out)),
		       "0,0,0|3,0,0", msg);
		snprintf(msg, sizeof(msg), "%s: x's cost JSON has the proto3 defaults", in[i].what);
		is_str(q(path, "SELECT cost FROM graph_nodes WHERE name = 'x' AND kind = 'costgraph'",
			 out, sizeof(out)),
		       want_x, msg);
		snprintf(msg, sizeof(msg), "%s: an absent alias_input_port is input 0", in[i].what);
		is_str(q(path, "SELECT cost FROM graph_nodes WHERE name = 'w/read'", out, sizeof(out)),
		       want_read, msg);
	}
	free(rm.p);
}

/*
 * Each graph of a session has a name of its own that says where it came
 * from: the input as given, then " (2)" ... for the same input again.
 */
static void test_graph_names(void)
{
	static const struct {
		const char *name;
		int rm;
	} in[] = {
		{"w0/graph.pb", 0},   {"w1/graph.pb", 0},   {"w0/graph.pb", 0},
		{"w0/run_meta.pb", 1}, {"w1/run_meta.pb", 1}, {"w1/run_meta.pb", 1},
	};
	struct enc g = {0}, rm = {0};
	struct tft_error err;
	struct tft_writer *w;
	char path[512], out[2048];
	int r = 0;

	e_conv_node(&g, "conv1/Conv2D");
	build_runmeta(&rm);
	snprintf(path, sizeof(path), "%s/n%d.tft", tmpdir, seq++);
	tft_error_clear(&err);
	w = tft_writer_open(path, NULL, &err);
	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]) && !r; i++)
		r = in[i].rm ? tft_runmeta_ingest_as(w, in[i].name, rm.p, rm.len, TFT_PB_FMT_RUNMETA, NULL,
						      &err)
			     : tft_graph_ingest(w, in[i].name, g.p, g.len, TFT_PB_FMT_GRAPHDEF, NULL, &err);
	is_int(r, 0, "three graphs and three RunMetadata import into one session");
	if (r)
		printf("#   %s\n", err.msg);
	is_int(tft_writer_close(w, &err), 0, "closes");
	is_str(q(path, "SELECT graph FROM graph_nodes GROUP BY graph_id ORDER BY graph_id", out,
		 sizeof(out)),
	       "w0/graph.pb|w1/graph.pb|w0/graph.pb (2)"
	       "|w0/run_meta.pb:cost_graph|w0/run_meta.pb:partition_graphs[0]"
	       "|w1/run_meta.pb:cost_graph|w1/run_meta.pb:partition_graphs[0]"
	       "|w1/run_meta.pb:cost_graph (2)|w1/run_meta.pb:partition_graphs[0] (2)",
	       "graph names: the input as given, made unique");
	is_str(q(path,
		 "SELECT COUNT(DISTINCT graph) || ',' || COUNT(DISTINCT graph_id) FROM graph_nodes",
		 out, sizeof(out)),
	       "9,9", "one name per graph");
	free(g.p);
	free(rm.p);
}

/* A TF2 GraphDef: the ops that run are in library.function[].node_def. */
static const char tf2_graph_text[] =
	"node { name: \"x\" op: \"Placeholder\" attr { key: \"dtype\" value { type: DT_FLOAT } } }\n"
	"node { name: \"StatefulPartitionedCall\" op: \"StatefulPartitionedCall\" input: \"x\"\n"
	"  input: \"dense_kernel\"\n"
	"  attr { key: \"f\" value { func { name: \"__inference_call_123\" } } } }\n"
	"library {\n"
	"  function {\n"
	"    signature {\n"
	"      name: \"__inference_call_123\"\n"
	"      input_arg { name: \"x\" type: DT_FLOAT }\n"
	"      input_arg { name: \"dense_matmul_readvariableop_resource\" type: DT_RESOURCE }\n"
	"      output_arg { name: \"identity\" type: DT_FLOAT }\n"
	"      is_stateful: true\n"
	"    }\n"
	"    node_def { name: \"sequential/dense/MatMul/ReadVariableOp\" op: \"ReadVariableOp\"\n"
	"      input: \"dense_matmul_readvariableop_resource\"\n"
	"      attr { key: \"dtype\" value { type: DT_FLOAT } } }\n"
	"    node_def { name: \"sequential/dense/MatMul\" op: \"MatMul\" input: \"x\"\n"
	"      input: \"sequential/dense/MatMul/ReadVariableOp:value:0\"\n"
	"      device: \"/device:GPU:0\"\n"
	"      attr { key: \"T\" value { type: DT_FLOAT } }\n"
	"      attr { key: \"_output_shapes\" value { list { shape { dim { size: -1 } dim { size: 10 } } } } } }\n"
	"    ret { key: \"identity\" value: \"sequential/dense/MatMul:product:0\" }\n"
	"    attr { key: \"_noinline\" value { b: true } }\n"
	"  }\n"
	"  function {\n"
	"    node_def { name: \"body/Add\" op: \"AddV2\" input: \"a\" input: \"^sequential/dense/MatMul\" }\n"
	"    signature { name: \"while_body_7\" input_arg { name: \"a\" } }\n"
	"  }\n"
	"  gradient { function_name: \"f\" gradient_func: \"g\" }\n"
	"}\n"
	"node { name: \"Identity\" op: \"Identity\" input: \"StatefulPartitionedCall\" }\n"
	"versions { producer: 1087 }\n";

/* The same graph in binary, fields in field-number order as TF serializes them. */
static void build_tf2_graph(struct enc *g)
{
	static const int64_t out[] = {-1, 10};
	struct enc n = {0}, v = {0}, fa = {0}, lib = {0}, fn = {0}, sig = {0}, arg = {0}, ent = {0},
		   l = {0};

	e_str(&n, 1, "x");
	e_str(&n, 2, "Placeholder");
	e_int(&v, 6, 1);
	e_attr(&n, "dtype", &v);
	e_msg(g, 1, &n);
	e_str(&n, 1, "StatefulPartitionedCall");
	e_str(&n, 2, "StatefulPartitionedCall");
	e_str(&n, 3, "x");
	e_str(&n, 3, "dense_kernel");
	e_str(&fa, 1, "__inference_call_123");
	e_msg(&v, 10, &fa);
	e_attr(&n, "f", &v);
	e_msg(g, 1, &n);
	e_str(&n, 1, "Identity");
	e_str(&n, 2, "Identity");
	e_str(&n, 3, "StatefulPartitionedCall");
	e_msg(g, 1, &n);

	e_str(&sig, 1, "__inference_call_123");
	e_str(&arg, 1, "x");
	e_int(&arg, 3, 1);
	e_msg(&sig, 2, &arg);
	e_str(&arg, 1, "dense_matmul_readvariableop_resource");
	e_int(&arg, 3, 20);
	e_msg(&sig, 2, &arg);
	e_str(&arg, 1, "identity");
	e_int(&arg, 3, 1);
	e_msg(&sig, 3, &arg);
	e_int(&sig, 16, 1); /* is_stateful */
	e_msg(&fn, 1, &sig);
	e_str(&n, 1, "sequential/dense/MatMul/ReadVariableOp");
	e_str(&n, 2, "ReadVariableOp");
	e_str(&n, 3, "dense_matmul_readvariableop_resource");
	e_int(&v, 6, 1);
	e_attr(&n, "dtype", &v);
	e_msg(&fn, 3, &n);
	e_str(&n, 1, "sequential/dense/MatMul");
	e_str(&n, 2, "MatMul");
	e_str(&n, 3, "x");
	e_str(&n, 3, "sequential/dense/MatMul/ReadVariableOp:value:0");
	e_str(&n, 4, "/device:GPU:0");
	e_int(&v, 6, 1);
	e_attr(&n, "T", &v);
	e_shape(&l, 7, out, NULL, 2);
	e_msg(&v, 1, &l);
	e_attr(&n, "_output_shapes", &v);
	e_msg(&fn, 3, &n);
	e_str(&ent, 1, "identity");
	e_str(&ent, 2, "sequential/dense/MatMul:product:0");
	e_msg(&fn, 4, &ent);
	e_int(&v, 5, 1);
	e_str(&ent, 1, "_noinline");
	e_msg(&ent, 2, &v);
	e_msg(&fn, 5, &ent);
	e_msg(&lib, 1, &fn);

	e_str(&sig, 1, "while_body_7");
	e_str(&arg, 1, "a");
	e_msg(&sig, 2, &arg);
	e_msg(&fn, 1, &sig);
	e_str(&n, 1, "body/Add");
	e_str(&n, 2, "AddV2");
	e_str(&n, 3, "a");
	e_str(&n, 3, "^sequential/dense/MatMul");
	e_msg(&fn, 3, &n);
	e_msg(&lib, 1, &fn);
	e_str(&ent, 1, "f");
	e_str(&ent, 2, "g");
	e_msg(&lib, 2, &ent);
	e_msg(g, 2, &lib);
	e_int(&v, 1, 1087);
	e_msg(g, 4, &v);
}

static void check_tf2_rows(const char *path, const char *what, const char *gname, int text)
{
	char out[2048], msg[200], sql[512], want[1024];

	/* (the text file has a top-level node after the library) */
	snprintf(msg, sizeof(msg), "%s: top-level nodes, functions and their bodies", what);
	snprintf(want, sizeof(want),
		 "graphdef x|graphdef StatefulPartitionedCall|%sfunction __inference_call_123"
		 "|function_node sequential/dense/MatMul/ReadVariableOp"
		 "|function_node sequential/dense/MatMul|function while_body_7"
		 "|function_node body/Add%s",
		 text ? "" : "graphdef Identity|", text ? "|graphdef Identity" : "");
	is_str(q(path, "SELECT kind || ' ' || name FROM graph_nodes ORDER BY id", out, sizeof(out)),
	       want, msg);
	snprintf(msg, sizeof(msg), "%s: top-level nodes are graph 0", what);
	is_str(q(path, "SELECT group_concat(DISTINCT graph_id) FROM graph_nodes WHERE kind = 'graphdef'",
		 out, sizeof(out)),
	       "0", msg);
	snprintf(msg, sizeof(msg), "%s: one graph per function, named after it", what);
	snprintf(sql, sizeof(sql),
		 "SELECT DISTINCT graph_id || ' ' || graph FROM graph_nodes ORDER BY id");
	snprintf(want, sizeof(want), "0 %s|1 %s:library:__inference_call_123|2 %s:library:while_body_7",
		 gname, gname, gname);
	is_str(q(path, sql, out, sizeof(out)), want, msg);
	snprintf(msg, sizeof(msg), "%s: a body node's op, device, inputs as written, attrs, shapes",
		 what);
	is_str(q(path,
		 "SELECT op || ' ' || device || ' ' || inputs || ' ' || attrs || ' ' || output_shapes"
		 " FROM graph_nodes WHERE name = 'sequential/dense/MatMul'",
		 out, sizeof(out)),
	       "MatMul /device:GPU:0 [\"x\",\"sequential/dense/MatMul/ReadVariableOp:value:0\"]"
	       " {\"T\":\"DT_FLOAT\"} [[-1,10]]",
	       msg);
	snprintf(msg, sizeof(msg), "%s: the function row: arguments, attrs, outputs and ret", what);
	is_str(q(path,
		 "SELECT inputs || ' ' || attrs || ' ' || cost || ' ' || (op IS NULL)"
		 " FROM graph_nodes WHERE kind = 'function' ORDER BY id",
		 out, sizeof(out)),
	       "[\"x\",\"dense_matmul_readvariableop_resource\"] {\"_noinline\":true}"
	       " {\"output_arg\":[\"identity\"],\"ret\":{\"identity\":\"sequential/dense/MatMul:product:0\"},"
	       "\"control_ret\":{}} 1"
	       "|[\"a\"] {} {\"output_arg\":[],\"ret\":{},\"control_ret\":{}} 1",
	       msg);
	snprintf(msg, sizeof(msg), "%s: a control input in a body kept", what);
	is_str(q(path, "SELECT inputs FROM graph_nodes WHERE name = 'body/Add'", out, sizeof(out)),
	       "[\"a\",\"^sequential/dense/MatMul\"]", msg);
}

static void test_function_library(void)
{
	struct enc g = {0}, rm = {0}, pg = {0};
	struct tft_error err;
	char path[512], out[1024];
	int r;

	is_int(tft_pb_sniff((const uint8_t *)tf2_graph_text, strlen(tf2_graph_text), "g.pbtxt"),
	       TFT_PB_FMT_GRAPHDEF_TEXT, "TF2 text GraphDef sniffed");
	r = import_one(path, sizeof(path), "m/g.pbtxt", tf2_graph_text, strlen(tf2_graph_text),
		       TFT_PB_FMT_GRAPHDEF_TEXT, &err);
	is_int(r, 0, "TF2 text GraphDef imports");
	if (!r)
		check_tf2_rows(path, "text", "m/g.pbtxt", 1);
	build_tf2_graph(&g);
	r = import_one(path, sizeof(path), "m/g.pb", g.p, g.len, TFT_PB_FMT_GRAPHDEF, &err);
	is_int(r, 0, "TF2 binary GraphDef imports");
	if (!r)
		check_tf2_rows(path, "binary", "m/g.pb", 0);

	/* The same library inside a RunMetadata's partition graph. */
	e_bytes(&pg, 3, g.p, g.len);
	r = import_one(path, sizeof(path), "run.pb", pg.p, pg.len, TFT_PB_FMT_RUNMETA, &err);
	is_int(r, 0, "RunMetadata with a library in partition_graphs imports");
	is_str(q(path,
		 "SELECT DISTINCT graph FROM graph_nodes WHERE kind = 'function_node' ORDER BY id",
		 out, sizeof(out)),
	       "run.pb:partition_graphs[0]:library:__inference_call_123"
	       "|run.pb:partition_graphs[0]:library:while_body_7",
	       "partition graph functions named after the partition graph");

	/* A broken body node: the error path goes through the library. */
	{
		static const char bad[] = "library { function { signature { name: \"f\" }\n"
					  "  node_def { name: \"a\" attr { key: \"T\" value { i: x } } } } }\n";

		r = import_one(path, sizeof(path), "bad.pbtxt", bad, strlen(bad),
			       TFT_PB_FMT_GRAPHDEF_TEXT, &err);
		ok(r == TFT_EFORMAT && strstr(err.msg, "library.function[0].node_def[0]") != NULL,
		   "an error inside a function body names its path: %s", err.msg);
	}
	free(g.p);
	free(rm.p);
	free(pg.p);
}

/*
 * A CostGraphDef saved on its own (str(run_metadata.cost_graph), or
 * serialized) starts with `node` as a GraphDef does: told apart by the
 * first node's fields, and imported as the RunMetadata's cost_graph is.
 */
static void test_costgraph_file(void)
{
	static const char text[] =
		"# str(run_metadata.cost_graph)\n"
		"node {\n"
		"  name: \"op { x\"   # a comment with op: in it\n"
		"  device: \"/job:localhost/replica:0/task:0/device:CPU:0\"\n"
		"  output_info { size: 16 alias_input_port: -1 }\n"
		"}\n"
		"node { name: \"w/read\" id: 1 input_info { preceding_node: 0 }\n"
		"  output_info { size: 16 } compute_cost: 3 is_final: true }\n";
	static const struct {
		const char *text;
		int fmt;
	} sniffs[] = {
		{"node { name: \"a\" device: \"/cpu:0\" op: \"MatMul\" }", TFT_PB_FMT_GRAPHDEF_TEXT},
		{"node { name: \"a\" attr { key: \"id\" value { i: 1 } } }", TFT_PB_FMT_GRAPHDEF_TEXT},
		{"node { name: \"a\" }\nnode { name: \"b\" op: \"X\" }", TFT_PB_FMT_GRAPHDEF_TEXT},
		{"node: { name: 'a' 'b' device: \"/cpu:0\" compute_cost: 5 }", TFT_PB_FMT_COSTGRAPH_TEXT},
		{"node < name: \"_SOURCE\"; is_final: true >", TFT_PB_FMT_COSTGRAPH_TEXT},
		{"node { name: \"a\" device: \"\" id: 3 }", TFT_PB_FMT_COSTGRAPH_TEXT},
		{"cost { cost: 1.5 dimension: \"flops\" }", TFT_PB_FMT_COSTGRAPH_TEXT},
		/* TF's _SOURCE first: a name and a device only (zero costs left out) */
		{"node { name: \"_SOURCE\" device: \"/cpu:0\" }\nnode { name: \"_SINK\" device: \"/cpu:0\" }\n"
		 "node { name: \"MatMul\" device: \"/cpu:0\" id: 2 compute_cost: 12 }", TFT_PB_FMT_COSTGRAPH_TEXT},
		{"node { name: \"_SOURCE\" device: \"/cpu:0\" }\n", TFT_PB_FMT_COSTGRAPH_TEXT},
	};
	struct enc cg = {0}, cn = {0}, oi = {0}, ii = {0}, rm = {0}, g = {0}, n = {0};
	struct tft_error err;
	char path[512], a[2048], b[2048], msg[300];
	int r;

	for (size_t i = 0; i < sizeof(sniffs) / sizeof(sniffs[0]); i++) {
		snprintf(msg, sizeof(msg), "sniffed: %s", sniffs[i].text);
		is_int(tft_pb_sniff((const uint8_t *)sniffs[i].text, strlen(sniffs[i].text), "x.pbtxt"),
		       sniffs[i].fmt, msg);
	}
	is_int(tft_pb_sniff((const uint8_t *)text, strlen(text), "cost_graph.pbtxt"),
	       TFT_PB_FMT_COSTGRAPH_TEXT, "text CostGraphDef sniffed as such");
	{
		/* a NUL in a text GraphDef's first 4 KiB: still text (the reader says where) */
		static const char nul[] = "node { name: \"a\" op: \"X\" }\n\0\0node { name: \"b\" op: \"Y\" }\n";

		is_int(tft_pb_sniff((const uint8_t *)nul, sizeof(nul) - 1, "g.pbtxt"), TFT_PB_FMT_GRAPHDEF_TEXT,
		       "a text GraphDef with a NUL in its first 4 KiB is sniffed as text");
	}

	/* The binary twin, as TF serializes it (field order, no zeros). */
	e_str(&cn, 1, "op { x");
	e_str(&cn, 2, "/job:localhost/replica:0/task:0/device:CPU:0");
	e_int(&oi, 1, 16);
	e_int(&oi, 2, (uint64_t)-1);
	e_msg(&cn, 5, &oi);
	e_msg(&cg, 1, &cn);
	e_str(&cn, 1, "w/read");
	e_int(&cn, 3, 1);
	e_msg(&cn, 4, &ii);
	e_int(&oi, 1, 16);
	e_msg(&cn, 5, &oi);
	e_int(&cn, 7, 1);
	e_int(&cn, 9, 3);
	e_msg(&cg, 1, &cn);
	is_int(tft_pb_sniff(cg.p, cg.len, "cost_graph.pb"), TFT_PB_FMT_COSTGRAPH,
	       "binary CostGraphDef sniffed as such");
	/* Cost nodes that say so later: an id only, an input_info, an output_info. */
	{
		struct enc c = {0}, node = {0}, sub = {0};

		e_str(&node, 1, "a");
		e_int(&node, 3, 4);
		e_msg(&c, 1, &node);
		is_int(tft_pb_sniff(c.p, c.len, "c.pb"), TFT_PB_FMT_COSTGRAPH, "binary: a cost node's id");
		free(c.p);
		memset(&c, 0, sizeof(c));
		e_str(&node, 1, "a");
		e_int(&sub, 1, 2);
		e_msg(&node, 4, &sub);
		e_msg(&c, 1, &node);
		is_int(tft_pb_sniff(c.p, c.len, "c.pb"), TFT_PB_FMT_COSTGRAPH,
		       "binary: a cost node's input_info");
		free(c.p);
		memset(&c, 0, sizeof(c));
		e_str(&node, 1, "a");
		e_int(&sub, 1, 64);
		e_msg(&node, 5, &sub);
		e_msg(&c, 1, &node);
		is_int(tft_pb_sniff(c.p, c.len, "c.pb"), TFT_PB_FMT_COSTGRAPH,
		       "binary: a cost node's output_info");
		free(c.p);
	}
	/* NodeDefs stay GraphDefs: device before op, attrs only. */
	e_str(&n, 1, "a");
	e_str(&n, 4, "/device:GPU:0");
	e_str(&n, 2, "MatMul");
	e_msg(&g, 1, &n);
	is_int(tft_pb_sniff(g.p, g.len, "g.pb"), TFT_PB_FMT_GRAPHDEF, "binary: NodeDef with a device first");
	free(g.p);
	memset(&g, 0, sizeof(g));
	{
		struct enc v = {0};

		e_str(&n, 1, "a");
		e_int(&v, 3, 7);
		e_attr(&n, "N", &v);
		e_msg(&g, 1, &n);
	}
	is_int(tft_pb_sniff(g.p, g.len, "g.pb"), TFT_PB_FMT_GRAPHDEF, "binary: NodeDef with attrs only");
	free(g.p);

	/* Imported (detected by tft_ingest_mem) as the RunMetadata's cost_graph would be. */
	r = import_one(path, sizeof(path), "run/cost_graph.pbtxt", text, strlen(text),
		       TFT_PB_FMT_UNKNOWN, &err);
	is_int(r, 0, "text CostGraphDef imports");
	is_str(q(path,
		 "SELECT graph || ' ' || kind || ' ' || name || ' ' || (op IS NULL) || ' ' || compute_cost"
		 " || ' ' || cost FROM graph_nodes ORDER BY id",
		 a, sizeof(a)),
	       "run/cost_graph.pbtxt costgraph op { x 1 0 {\"id\":0,\"input_info\":[],\"output_info\":"
	       "[{\"size\":16,\"alias_input_port\":-1,\"dtype\":\"DT_INVALID\"}],\"control_input\":[],\"compute_time\":0,"
	       "\"memory_time\":0,\"is_final\":false,\"inaccurate\":false}"
	       "|run/cost_graph.pbtxt costgraph w/read 1 3 {\"id\":1,\"input_info\":[{\"preceding_node\":0,"
	       "\"preceding_port\":0}],\"output_info\":[{\"size\":16,\"alias_input_port\":0,\"dtype\":\"DT_INVALID\"}],"
	       "\"control_input\":[],\"compute_time\":0,\"memory_time\":0,\"is_final\":true,"
	       "\"inaccurate\":false}",
	       "text CostGraphDef: cost rows");
	is_str(q(path, "SELECT value FROM meta WHERE key IN ('format', 'graph_format') ORDER BY key",
		 a, sizeof(a)),
	       "costgraph|costgraph_text", "format and graph_format meta");

	r = import_one(path, sizeof(path), "run/cost_graph.pb", cg.p, cg.len, TFT_PB_FMT_UNKNOWN, &err);
	is_int(r, 0, "binary CostGraphDef imports");
	q(path,
	  "SELECT kind || name || device || compute_cost || temporary_memory || persistent_memory"
	  " || output_shapes || cost FROM graph_nodes ORDER BY id",
	  b, sizeof(b));
	/* The same graph inside a RunMetadata. */
	e_msg(&rm, 2, &cg);
	r = import_one(path, sizeof(path), "run.pb", rm.p, rm.len, TFT_PB_FMT_RUNMETA, &err);
	is_int(r, 0, "the same CostGraphDef in a RunMetadata imports");
	is_str(q(path,
		 "SELECT kind || name || device || compute_cost || temporary_memory || persistent_memory"
		 " || output_shapes || cost FROM graph_nodes ORDER BY id",
		 a, sizeof(a)),
	       b, "binary CostGraphDef file: the rows of RunMetadata.cost_graph");
	free(rm.p);
}

/*
 * Nesting the importer does not descend into (a func attr's own attrs,
 * 21 levels deep: 63 blocks under the node) is skipped in text as in
 * binary; only what is parsed counts against the 64-level limit.
 */
static void test_deep_skipped(void)
{
	static char text[4096];
	struct enc g = {0}, node = {0}, val = {0};
	struct tft_error err;
	char path[512], a[512], b[512];
	size_t n = 0;
	int r;

	n += (size_t)snprintf(text + n, sizeof(text) - n,
			      "node { name: \"a\" op: \"X\" attr { key: \"f\" value ");
	for (int i = 0; i < 21; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n,
				      "{ func { name: \"f%d\" attr { key: \"g\" value ", i);
	n += (size_t)snprintf(text + n, sizeof(text) - n, "{ i: 1 }");
	for (int i = 0; i < 21; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, " } } }");
	snprintf(text + n, sizeof(text) - n, " } }\n");

	e_int(&val, 3, 1);
	for (int i = 20; i >= 0; i--) {
		struct enc fn = {0}, ent = {0}, up = {0};
		char nm[16];

		snprintf(nm, sizeof(nm), "f%d", i);
		e_str(&fn, 1, nm);
		e_str(&ent, 1, "g");
		e_msg(&ent, 2, &val);
		e_msg(&fn, 2, &ent);
		e_msg(&up, 10, &fn);
		val = up;
	}
	e_str(&node, 1, "a");
	e_str(&node, 2, "X");
	e_attr(&node, "f", &val);
	e_msg(&g, 1, &node);

	r = import_one(path, sizeof(path), "deep.pbtxt", text, strlen(text), TFT_PB_FMT_GRAPHDEF_TEXT,
		       &err);
	is_int(r, 0, "text: 63 nested blocks under a func attr's attrs import");
	q(path, "SELECT attrs FROM graph_nodes", a, sizeof(a));
	r = import_one(path, sizeof(path), "deep.pb", g.p, g.len, TFT_PB_FMT_GRAPHDEF, &err);
	is_int(r, 0, "binary: the same imports");
	is_str(q(path, "SELECT attrs FROM graph_nodes", b, sizeof(b)), a, "text and binary: same attrs");
	is_str(a, "{\"f\":{\"func\":\"f0\"}}", "the outer func kept");
	free(g.p);
}

/*
 * attrs JSON that keeps what the AttrValue says: inf, -inf and nan floats
 * are the strings protobuf's JSON mapping writes ("Infinity", "-Infinity",
 * "NaN"; null is an empty AttrValue), and `s` bytes that are not UTF-8 are
 * {"base64": ...} (json_format's encoding of a bytes field), not U+FFFD.
 */
static void test_attr_values(void)
{
	static const char text[] =
		"node { name: \"a\" op: \"X\"\n"
		"  attr { key: \"pinf\" value { f: inf } }\n"
		"  attr { key: \"ninf\" value { f: -inf } }\n"
		"  attr { key: \"nan\" value { f: nan } }\n"
		"  attr { key: \"fl\" value { list { f: [1.5, -Infinity, nan] } } }\n"
		"  attr { key: \"empty\" value { } }\n"
		"  attr { key: \"raw\" value { s: \"\\202\\001x\" } }\n"
		"  attr { key: \"two\" value { s: \"\\300\\200\" } }\n"
		"  attr { key: \"utf8\" value { s: \"caf\\303\\251\\n\" } }\n"
		"  attr { key: \"ls\" value { list { s: [\"ok\", \"\\377\"] } } }\n"
		"}\n";
	static const char want[] =
		"{\"pinf\":\"Infinity\",\"ninf\":\"-Infinity\",\"nan\":\"NaN\","
		"\"fl\":[1.5,\"-Infinity\",\"NaN\"],\"empty\":null,\"raw\":{\"base64\":\"ggF4\"},"
		"\"two\":{\"base64\":\"wIA=\"},\"utf8\":\"caf\xc3\xa9\\n\",\"ls\":[\"ok\",{\"base64\":\"/w==\"}]}";
	struct tft_error err;
	char path[512], a[1024];
	int r;

	r = import_one(path, sizeof(path), "attrs.pbtxt", text, strlen(text), TFT_PB_FMT_GRAPHDEF_TEXT,
		       &err);
	is_int(r, 0, "text graph with special floats and raw bytes imports");
	is_str(q(path, "SELECT attrs FROM graph_nodes", a, sizeof(a)), want,
	       "inf/nan as strings, non-UTF-8 bytes as base64");

	/* The binary twin: the same row. */
	{
		struct enc g = {0}, n = {0}, v = {0}, l = {0};
		static const uint8_t pinf[] = {0x25, 0x00, 0x00, 0x80, 0x7f}; /* f (fixed32): +inf */
		static const uint8_t ninf[] = {0x25, 0x00, 0x00, 0x80, 0xff};
		static const uint8_t qnan[] = {0x25, 0x00, 0x00, 0xc0, 0x7f};
		static const uint8_t fl[] = {0x22, 12, 0x00, 0x00, 0xc0, 0x3f, 0x00, 0x00, 0x80, 0xff,
					     0x00, 0x00, 0xc0, 0x7f}; /* list { f: [packed] } */

		e_str(&n, 1, "a");
		e_str(&n, 2, "X");
		for (int i = 0; i < 5; i++)
			e_byte(&v, pinf[i]);
		e_attr(&n, "pinf", &v);
		for (int i = 0; i < 5; i++)
			e_byte(&v, ninf[i]);
		e_attr(&n, "ninf", &v);
		for (int i = 0; i < 5; i++)
			e_byte(&v, qnan[i]);
		e_attr(&n, "nan", &v);
		for (size_t i = 0; i < sizeof(fl); i++)
			e_byte(&l, fl[i]);
		e_msg(&v, 1, &l);
		e_attr(&n, "fl", &v);
		e_attr(&n, "empty", &v);
		e_bytes(&v, 2, "\x82\x01x", 3);
		e_attr(&n, "raw", &v);
		e_bytes(&v, 2, "\xc0\x80", 2);
		e_attr(&n, "two", &v);
		e_str(&v, 2, "caf\xc3\xa9\n");
		e_attr(&n, "utf8", &v);
		e_str(&l, 2, "ok");
		e_bytes(&l, 2, "\xff", 1);
		e_msg(&v, 1, &l);
		e_attr(&n, "ls", &v);
		e_msg(&g, 1, &n);
		r = import_one(path, sizeof(path), "attrs.pb", g.p, g.len, TFT_PB_FMT_GRAPHDEF, &err);
		is_int(r, 0, "binary twin imports");
		is_str(q(path, "SELECT attrs FROM graph_nodes", a, sizeof(a)), want,
		       "binary twin: the same attrs");
		free(g.p);
	}
}

/*
 * An AttrValue whose oneof is set more than once (wire input merged or
 * concatenated; text that names two members) follows protobuf: the member
 * set last wins, and a message member set again right after itself merges
 * (a list's elements append, a shape's dims append).
 */
static void test_attr_oneof(void)
{
	static const char text[] =
		"node { name: \"a\" op: \"X\"\n"
		"  attr { key: \"last\" value { i: 1 f: 2.5 } }\n"
		"  attr { key: \"lists\" value { list { i: [1, 2] } list { i: 3 } } }\n"
		"  attr { key: \"switch\" value { list { i: 1 } s: \"x\" list { i: 2 } } }\n"
		"  attr { key: \"shapes\" value { shape { dim { size: 2 } } shape { dim { size: 3 } } } }\n"
		"  attr { key: \"values\" value { i: 7 } value { type: DT_INT32 } }\n"
		"  attr { key: \"tensors\" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } } }"
		" tensor { dtype: DT_INT32 } } }\n"
		"  attr { value { b: true } key: \"key_last\" }\n"
		"}\n";
	static const char want[] =
		"{\"last\":2.5,\"lists\":[1,2,3],\"switch\":[2],\"shapes\":[2,3],\"values\":\"DT_INT32\","
		"\"tensors\":{\"dtype\":\"DT_INT32\",\"shape\":[2]},\"key_last\":true}";
	struct enc g = {0}, n = {0}, v = {0}, l = {0};
	struct tft_error err;
	char path[512], a[1024];
	int r;

	r = import_one(path, sizeof(path), "oneof.pbtxt", text, strlen(text), TFT_PB_FMT_GRAPHDEF_TEXT,
		       &err);
	is_int(r, 0, "text: oneof members set twice import");
	is_str(q(path, "SELECT attrs FROM graph_nodes", a, sizeof(a)), want,
	       "text: the last member wins, lists and shapes merge");

	/* Binary: two AttrValues concatenated, as a merge of serialized messages gives. */
	e_str(&n, 1, "a");
	e_str(&n, 2, "X");
	e_int(&v, 3, 1);
	{
		static const uint8_t f25[] = {0x25, 0x00, 0x00, 0x20, 0x40}; /* f (fixed32): 2.5 */

		for (size_t i = 0; i < sizeof(f25); i++)
			e_byte(&v, f25[i]);
	}
	e_attr(&n, "last", &v);
	e_int(&l, 3, 1);
	e_int(&l, 3, 2);
	e_msg(&v, 1, &l);
	e_int(&l, 3, 3);
	e_msg(&v, 1, &l);
	e_attr(&n, "lists", &v);
	e_int(&l, 3, 1);
	e_msg(&v, 1, &l);
	e_str(&v, 2, "x");
	e_int(&l, 3, 2);
	e_msg(&v, 1, &l);
	e_attr(&n, "switch", &v);
	{
		static const int64_t two[] = {2}, three[] = {3};

		e_shape(&v, 7, two, NULL, 1);
		e_shape(&v, 7, three, NULL, 1);
		e_attr(&n, "shapes", &v);
	}
	e_msg(&g, 1, &n);
	r = import_one(path, sizeof(path), "oneof.pb", g.p, g.len, TFT_PB_FMT_GRAPHDEF, &err);
	is_int(r, 0, "binary: oneof members set twice import");
	is_str(q(path, "SELECT attrs FROM graph_nodes", a, sizeof(a)),
	       "{\"last\":2.5,\"lists\":[1,2,3],\"switch\":[2],\"shapes\":[2,3]}",
	       "binary: the last member wins, lists and shapes merge");
	free(g.p);
}

/* Error paths name the attr entry, the tensor and the cost node output they are in. */
static void test_attr_error_paths(void)
{
	static const struct {
		const char *text;
		int fmt;
		const char *want;
	} cases[] = {
		{"node { name: \"a\" op: \"X\" attr { key: \"T\" value { type: DT_FLOAT } }\n"
		 "  attr { key: \"x\" value { f: - 5 } } }\n",
		 TFT_PB_FMT_GRAPHDEF_TEXT, "node[0].attr[1].value.f: expected a floating-point number"},
		{"node { name: \"a\" } node { name: \"b\" attr { value { list { i: [1, x] } } key: \"k\" } }",
		 TFT_PB_FMT_GRAPHDEF_TEXT, "node[1].attr[0].value.list.i[1]: expected an integer"},
		{"node { name: \"c\" attr { key: \"value\" value { tensor { dtype: DT_FLOAT\n"
		 "  tensor_shape { dim { size: 2 } dim { size: y } } } } } }",
		 TFT_PB_FMT_GRAPHDEF_TEXT,
		 "node[0].attr[0].value.tensor.tensor_shape.dim[1].size: expected an integer"},
		{"node { name: \"x\" id: 0 output_info { size: 4 } output_info { size: 4\n"
		 "  shape { dim { size: z } } } }",
		 TFT_PB_FMT_COSTGRAPH_TEXT, "node[0].output_info[1].shape.dim[0].size: expected an integer"},
	};
	struct tft_error err;
	char path[512];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int r = import_one(path, sizeof(path), "bad.pbtxt", cases[i].text, strlen(cases[i].text),
				   cases[i].fmt, &err);

		ok(r == TFT_EFORMAT && strcmp(err.msg, cases[i].want) == 0, "error path: %s",
		   cases[i].want);
		if (strcmp(err.msg, cases[i].want))
			printf("#   got \"%s\"\n", err.msg);
	}
	/* Binary: the same paths (a float sent as a varint). */
	{
		struct enc g = {0}, n = {0}, v = {0};
		int r;

		e_str(&n, 1, "a");
		e_int(&v, 6, 1);
		e_attr(&n, "T", &v);
		e_int(&v, 4, 1);
		e_attr(&n, "x", &v);
		e_msg(&g, 1, &n);
		r = import_one(path, sizeof(path), "bad.pb", g.p, g.len, TFT_PB_FMT_GRAPHDEF, &err);
		ok(r == TFT_EFORMAT && strncmp(err.msg, "node[0].attr[1].value.f: ", 25) == 0,
		   "binary error path: %s", err.msg);
		free(g.p);
	}
}

/*
 * A map key given twice (NodeDef.attr, FunctionDef.attr and ret) is one
 * key with its last entry's value, where the key first appears, as
 * protobuf keeps a map; written twice, json_extract read the first.
 */
static void test_attr_map(void)
{
	static const char text[] =
		"node { name: \"a\" op: \"Cast\"\n"
		"  attr { key: \"T\" value { type: DT_FLOAT } }\n"
		"  attr { key: \"Truncate\" value { b: false } }\n"
		"  attr { key: \"T\" value { type: DT_INT32 } }\n"
		"  attr { key: \"_output_shapes\" value { list { shape { dim { size: 1 } } } } }\n"
		"  attr { key: \"_output_shapes\" value { list { shape { dim { size: 2 } } } } }\n"
		"}\n"
		"node { name: \"b\" op: \"X\" attr { key: \"T\" value { type: DT_HALF } } }\n"
		"library { function { signature { name: \"fn\" output_arg { name: \"y\" } }\n"
		"  ret { key: \"y\" value: \"n1:z:0\" } ret { key: \"y\" value: \"n2:z:0\" }\n"
		"  attr { key: \"_noinline\" value { b: false } } attr { key: \"_noinline\" value { b: true } }\n"
		"} }\n";
	struct enc g = {0}, n = {0}, v = {0};
	struct tft_error err;
	char path[512], a[8192], want[8192];
	size_t k = 0;
	int r;

	r = import_one(path, sizeof(path), "map.pbtxt", text, strlen(text), TFT_PB_FMT_GRAPHDEF_TEXT,
		       &err);
	is_int(r, 0, "text: attr keys given twice import");
	is_str(q(path, "SELECT attrs FROM graph_nodes WHERE name = 'a'", a, sizeof(a)),
	       "{\"T\":\"DT_INT32\",\"Truncate\":false}", "text: each key once, the last value");
	is_str(q(path, "SELECT json_extract(attrs, '$.T') FROM graph_nodes WHERE name = 'a'", a,
		 sizeof(a)),
	       "DT_INT32", "json_extract reads the last value");
	is_str(q(path, "SELECT output_shapes FROM graph_nodes WHERE name = 'a'", a, sizeof(a)),
	       "[[2]]", "_output_shapes given twice: the last");
	is_str(q(path, "SELECT attrs FROM graph_nodes WHERE name = 'b'", a, sizeof(a)),
	       "{\"T\":\"DT_HALF\"}", "the next node starts a map of its own");
	is_str(q(path, "SELECT attrs || ' ' || cost FROM graph_nodes WHERE kind = 'function'", a,
		 sizeof(a)),
	       "{\"_noinline\":true} {\"output_arg\":[\"y\"],\"ret\":{\"y\":\"n2:z:0\"},"
	       "\"control_ret\":{}}",
	       "FunctionDef attr and ret given twice: the last");

	/* Binary, 40 keys (the lookup table grows) each given twice, values 0..39 then 100..139. */
	e_str(&n, 1, "many");
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < 40; i++) {
			char key[16];

			snprintf(key, sizeof(key), "k%d", i);
			e_int(&v, 3, (uint64_t)(pass * 100 + i));
			e_attr(&n, key, &v);
		}
	e_msg(&g, 1, &n);
	r = import_one(path, sizeof(path), "map.pb", g.p, g.len, TFT_PB_FMT_GRAPHDEF, &err);
	is_int(r, 0, "binary: 40 keys given twice import");
	k += (size_t)snprintf(want + k, sizeof(want) - k, "{");
	for (int i = 0; i < 40; i++)
		k += (size_t)snprintf(want + k, sizeof(want) - k, "%s\"k%d\":%d", i ? "," : "", i,
				      100 + i);
	snprintf(want + k, sizeof(want) - k, "}");
	is_str(q(path, "SELECT attrs FROM graph_nodes", a, sizeof(a)), want,
	       "binary: 40 keys once each, in first order, the last values");
	free(g.p);
}

/*
 * A MetaGraphDef (model.ckpt.meta: meta_info_def {meta_graph_version, stripped_op_list
 * {op {name, input_arg ...}}, tags, tensorflow_version}, graph_def, saver_def) was read
 * as a StepStats (its op list as node_stats: one bogus slice) or, with a version, failed
 * as a GraphDef: it is told apart and its graph_def imported. A DeviceStepStats without
 * its device name (node_stats first) stays a StepStats.
 */
static void test_metagraph(void)
{
	struct enc op = { 0 }, arg = { 0 }, ops = { 0 }, info = { 0 }, g = { 0 }, meta = { 0 }, meta2 = { 0 },
		   ss = { 0 }, dev = { 0 }, n = { 0 };
	static const char text[] = "meta_info_def {\n  stripped_op_list {\n    op {\n      name: \"Add\"\n    }\n  }\n"
				   "  tensorflow_version: \"1.15.0\"\n}\ngraph_def {\n  node {\n    name: \"a\"\n"
				   "    op: \"Const\"\n  }\n}\n";
	struct tft_session *s;
	struct tft_error err;
	struct found f;
	char path[512];

	e_str(&op, 1, "Add");
	e_str(&arg, 1, "x");
	e_str(&arg, 3, "T");
	e_msg(&op, 2, &arg);
	e_msg(&ops, 1, &op);
	e_msg(&info, 2, &ops);
	e_str(&info, 4, "serve");
	e_str(&info, 5, "1.15.0");
	e_conv_node(&g, "conv1/Conv2D");
	e_msg(&meta, 1, &info);
	e_msg(&meta, 2, &g);
	e_str(&meta, 3, "\x0a\x04save"); /* saver_def */
	is_int(tft_pb_sniff(meta.p, meta.len, "model.ckpt.meta"), TFT_PB_FMT_METAGRAPH,
	       "sniff: a MetaGraphDef (was a StepStats)");
	/* with its meta_graph_version first */
	{
		struct enc info2 = { 0 }, ops2 = { 0 }, op2 = { 0 }, arg2 = { 0 }, g2 = { 0 };

		e_str(&info2, 1, "v1.0");
		e_str(&op2, 1, "Add");
		e_str(&arg2, 1, "x");
		e_msg(&op2, 2, &arg2);
		e_msg(&ops2, 1, &op2);
		e_msg(&info2, 2, &ops2);
		e_conv_node(&g2, "conv1/Conv2D");
		e_msg(&meta2, 1, &info2);
		e_msg(&meta2, 2, &g2);
	}
	is_int(tft_pb_sniff(meta2.p, meta2.len, "m.meta"), TFT_PB_FMT_METAGRAPH,
	       "sniff: a MetaGraphDef with its version (was a GraphDef, failing)");
	is_int(tft_pb_sniff((const uint8_t *)text, sizeof(text) - 1, "m.meta.pbtxt"), TFT_PB_FMT_METAGRAPH_TEXT,
	       "sniff: a text MetaGraphDef");
	/* StepStats { dev_stats { node_stats { node_name, all_start_micros } } } */
	e_str(&n, 1, "x");
	e_int(&n, 2, 1500000000000000ull);
	e_msg(&dev, 2, &n);
	e_msg(&ss, 1, &dev);
	is_int(tft_pb_sniff(ss.p, ss.len, "step.pb"), TFT_PB_FMT_STEPSTATS,
	       "sniff: a StepStats whose device comes after its nodes stays one");
	for (int k = 0; k < 3; k++) {
		const struct enc *e = k == 0 ? &meta : &meta2;
		const void *p = k == 2 ? (const void *)text : e->p;
		size_t len = k == 2 ? sizeof(text) - 1 : e->len;
		const char *node = k == 2 ? "a" : "conv1/Conv2D", *op_want = k == 2 ? "Const" : "Conv2D";

		if (!ok(import_one(path, sizeof(path), "model.ckpt.meta", p, len, TFT_PB_FMT_UNKNOWN, &err) == 0,
			"MetaGraphDef %d: imported (%s)", k, err.msg))
			continue;
		ok(lookup(path, node, "graphdef", &f) == 1 && !strcmp(f.op, op_want) &&
			   !strcmp(f.graph, "model.ckpt.meta"),
		   "MetaGraphDef %d: its graph_def's node %s (op %s, graph %s)", k, node, f.op, f.graph);
		s = tft_session_open(path, &err);
		ok(s && !strcmp(tft_session_meta(s, "format"), "graphdef") &&
			   !strcmp(tft_session_meta(s, "graph_format"), k == 2 ? "metagraph_text" : "metagraph") &&
			   tft_session_track_count(s) == 0,
		   "MetaGraphDef %d: format graphdef, graph_format %s, no tracks", k,
		   s ? tft_session_meta(s, "graph_format") : "?");
		if (s)
			tft_session_close(s);
	}
	free(meta.p);
	free(meta2.p);
	free(ss.p);
}

int main(void)
{
	const char *data = getenv("TFT_DATA");
	char tmpl[] = "/tmp/tft-graph-XXXXXX";

	if (!data)
		data = "../shared/data";
	if (!mkdtemp(tmpl)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(tmpdir, sizeof(tmpdir), "%s", tmpl);
	test_binary_graphdef();
	test_real_pbtxt(data);
	test_runmeta_graphs();
	test_cost_defaults();
	test_graph_names();
	test_function_library();
	test_costgraph_file();
	test_deep_skipped();
	test_attr_values();
	test_attr_oneof();
	test_attr_error_paths();
	test_attr_map();
	test_metagraph();
	{
		char cmd[400];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd) != 0)
			printf("# could not remove %s\n", tmpdir);
	}
	return done_testing();
}
