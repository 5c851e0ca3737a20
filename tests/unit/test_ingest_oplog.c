/* SPDX-License-Identifier: MIT */
/*
 * The tfprof OpLogProto (tfprof_log) reader: told apart from a GraphDef, a
 * CostGraphDef and an XSpace (a ProfileProto too); alone a session of format
 * "oplog"; with a graph (either order) its op types, float ops and code
 * traces attached to the graph's nodes of those names (store/graph.c, the
 * graph node JSON); bad input fails at the byte that is wrong. The OpLogProto
 * bytes are built from tfprof_log.proto's field numbers (tests/lib/pbenc.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codec/json_write.h"
#include "collect/ingest.h"
#include "collect/ingest_graph.h"
#include "collect/ingest_oplog.h"
#include "collect/tf_names.h"
#include "export/export_summary.h"
#include "store/graph.h"
#include "store/session.h"
#include "pbenc.h"
#include "tap.h"

static char tmpdir[256];
static char data_dir[512];
static int seq;

/* ---- OpLogProto encoding ------------------------------------------------------------- */

/* A Trace {file_id 6, lineno 2, function_id 7, line_id 8, func_start_line 5}. */
static void trace(struct enc *code, int64_t file_id, int lineno, int64_t function_id)
{
	struct enc t = { 0 };

	e_int(&t, 2, (uint64_t)lineno);
	e_int(&t, 5, 3);
	e_int(&t, 6, (uint64_t)file_id);
	e_int(&t, 7, (uint64_t)function_id);
	e_int(&t, 8, 9);
	e_msg(code, 1, &t);
}

/* An OpLogEntry {name 1, float_ops 2, types 3..., code_def 4}; code may be NULL. */
static void entry(struct enc *log, const char *name, int64_t float_ops, const char *type,
		  struct enc *code)
{
	struct enc e = { 0 };

	e_str(&e, 1, name);
	if (float_ops)
		e_int(&e, 2, (uint64_t)float_ops);
	if (type)
		e_str(&e, 3, type);
	if (code)
		e_msg(&e, 4, code);
	e_msg(log, 1, &e);
}

/* id_to_string {key 1, value 2} */
static void id_string(struct enc *log, int64_t id, const char *s)
{
	struct enc m = { 0 };

	e_int(&m, 1, (uint64_t)id);
	e_str(&m, 2, s);
	e_msg(log, 2, &m);
}

/*
 * What tf.profiler.write_op_log writes for four trainable variables of the
 * MNIST graph (graphdef_mnist.pbtxt), one of them also with a float_ops
 * count and the code that made it.
 */
static struct enc mnist_oplog(void)
{
	struct enc log = { 0 }, code = { 0 };

	entry(&log, "layer1/weights/Variable", 0, "_trainable_variables", NULL);
	entry(&log, "layer1/biases/Variable", 0, "_trainable_variables", NULL);
	entry(&log, "layer2/weights/Variable", 0, "_trainable_variables", NULL);
	trace(&code, 1, 42, 2);
	trace(&code, 3, 17, 4);
	entry(&log, "layer1/Wx_plus_b/MatMul", 3136000, NULL, &code);
	entry(&log, "layer2/biases/Variable", 0, "_trainable_variables", NULL);
	id_string(&log, 0, "none");
	id_string(&log, 1, "mnist_with_summaries.py");
	id_string(&log, 2, "nn_layer");
	id_string(&log, 3, "tensorflow/python/ops/math_ops.py");
	id_string(&log, 4, "matmul");
	return log;
}

/* ---- import helpers ------------------------------------------------------------------- */

struct in {
	const char *name;
	const uint8_t *p;
	size_t n;
};

static struct tft_session *import(const struct in *ins, int n, char *path, size_t size, int *rc,
				  struct tft_error *err)
{
	struct tft_writer *w;

	snprintf(path, size, "%s/s%d.tft", tmpdir, seq++);
	tft_error_clear(err);
	*rc = 0;
	w = tft_writer_open(path, NULL, err);
	if (!w) {
		*rc = err->code;
		return NULL;
	}
	for (int i = 0; i < n; i++) {
		*rc = ins[i].p ? tft_ingest_mem(w, ins[i].name, ins[i].p, ins[i].n, NULL, err)
			       : tft_ingest_file(w, ins[i].name, NULL, err);
		if (*rc) {
			tft_writer_abort(w);
			return NULL;
		}
	}
	if ((*rc = tft_writer_close(w, err)))
		return NULL;
	return tft_session_open(path, err);
}

struct rows {
	int n;
	char kind[4][16];
	char json[4][1200];
};

static int on_row(void *ctx, const struct tft_graph_node *nd, int64_t graph_id)
{
	struct rows *r = ctx;
	struct tft_json_writer w;
	const char *s;
	size_t len = 0;

	if (r->n >= 4)
		return 1;
	snprintf(r->kind[r->n], sizeof(r->kind[0]), "%.*s", (int)nd->kind.len, nd->kind.p ? nd->kind.p : "");
	tft_json_write_init_mem(&w);
	tft_export_graph_node(&w, nd, graph_id);
	s = tft_json_write_borrow(&w, &len);
	snprintf(r->json[r->n], sizeof(r->json[0]), "%.*s", (int)len, s ? s : "");
	tft_json_write_fini(&w);
	r->n++;
	return 0;
}

static struct rows lookup(const char *path, const char *name)
{
	struct rows r;
	struct tft_error err;

	memset(&r, 0, sizeof(r));
	tft_graph_lookup(path, name, on_row, &r, &err);
	return r;
}

static int has(const char *hay, const char *needle)
{
	return strstr(hay, needle) != NULL;
}

/* ---- tests ------------------------------------------------------------------------------ */

static void test_sniff(void)
{
	struct enc log = mnist_oplog(), names = { 0 }, ids = { 0 }, fo = { 0 }, g = { 0 }, n = { 0 },
		   prof = { 0 }, pn = { 0 }, pe = { 0 }, xs = { 0 }, xp = { 0 };
	static const char text[] = "log_entries {\n  name: \"a\"\n  types: \"_trainable_variables\"\n}\n";

	/* the case: name + types entries, as a NodeDef's name + input */
	is_int(tft_pb_sniff(log.p, log.len, "logdir/tfprof_log"), TFT_PB_FMT_OPLOG,
	       "sniff: a tfprof_log of trainable variables is an OpLogProto (was a 4-node GraphDef)");
	is_int(tft_pb_sniff(log.p, log.len, "x.pb"), TFT_PB_FMT_OPLOG, "sniff: ... whatever its name");
	entry(&fo, "conv/Conv2D", 1000, NULL, NULL);
	is_int(tft_pb_sniff(fo.p, fo.len, "x.pb"), TFT_PB_FMT_OPLOG,
	       "sniff: an entry with float_ops (a varint 2: was a CostGraphDef)");
	entry(&names, "a", 0, NULL, NULL);
	entry(&names, "b", 0, NULL, NULL);
	is_int(tft_pb_sniff(names.p, names.len, "run/tfprof_log"), TFT_PB_FMT_OPLOG,
	       "sniff: entries with names only: tfprof_log by its name");
	is_int(tft_pb_sniff(names.p, names.len, "graph.pb"), TFT_PB_FMT_GRAPHDEF,
	       "sniff: ... a GraphDef under another name, as before");
	id_string(&ids, 0, "none");
	is_int(tft_pb_sniff(ids.p, ids.len, "x.pb"), TFT_PB_FMT_OPLOG, "sniff: an OpLogProto without entries");
	is_int(tft_pb_sniff((const uint8_t *)text, sizeof(text) - 1, "op_log.pbtxt"), TFT_PB_FMT_OPLOG_TEXT,
	       "sniff: text OpLogProto");
	/* GraphDefs stay GraphDefs: NodeDef {name, op, input, device, attr} */
	e_str(&n, 1, "conv");
	e_str(&n, 2, "Conv2D");
	e_str(&n, 3, "x");
	e_str(&n, 4, "/device:GPU:0");
	e_msg(&g, 1, &n);
	e_int(&g, 3, 27);
	is_int(tft_pb_sniff(g.p, g.len, "tfprof_log"), TFT_PB_FMT_GRAPHDEF,
	       "sniff: a NodeDef with its op is a GraphDef, even named tfprof_log");
	/* a ProfileProto: nodes {key 1, value ProfileNode {name 1 ...}} (read as an XSpace before) */
	e_str(&pn, 1, "conv");
	e_str(&pn, 9, "Conv2D");
	e_int(&pe, 1, 7);
	e_msg(&pe, 2, &pn);
	e_msg(&prof, 1, &pe);
	is_int(tft_pb_sniff(prof.p, prof.len, "profile_100"), TFT_PB_FMT_PROFILE,
	       "sniff: a tfprof ProfileProto (was an XSpace)");
	e_int(&xp, 1, 3);
	e_str(&xp, 2, "/host:CPU");
	e_msg(&xs, 1, &xp);
	is_int(tft_pb_sniff(xs.p, xs.len, "host.pb"), TFT_PB_FMT_XSPACE, "sniff: an XSpace stays one");
	free(log.p);
	free(names.p);
	free(ids.p);
	free(fo.p);
	free(g.p);
	free(prof.p);
	free(xs.p);
}

static void test_alone(void)
{
	struct enc log = mnist_oplog();
	struct in in = { "logs/tfprof_log", log.p, log.len };
	struct tft_error err;
	struct tft_session *s;
	char path[512];
	struct rows r;
	int rc;

	s = import(&in, 1, path, sizeof(path), &rc, &err);
	if (!ok(s != NULL, "an OpLogProto alone imports (%s)", err.msg))
		goto out;
	is_str(tft_session_meta(s, "format"), "oplog", "format oplog");
	is_str(tft_session_meta(s, "graph_nodes"), "5", "its five entries as graph_nodes rows");
	r = lookup(path, "layer1/weights/Variable");
	ok(r.n == 1 && !strcmp(r.kind[0], "oplog") && has(r.json[0], "\"op_types\":[\"_trainable_variables\"]") &&
		   has(r.json[0], "\"float_ops\":null") && has(r.json[0], "\"code\":null") &&
		   has(r.json[0], "\"graph\":\"logs/tfprof_log\"") && has(r.json[0], "\"op\":null"),
	   "a variable: an oplog row with its type (%s)", r.json[0]);
	r = lookup(path, "layer1/Wx_plus_b/MatMul");
	ok(r.n == 1 && has(r.json[0], "\"float_ops\":3136000") &&
		   has(r.json[0], "\"code\":[\"mnist_with_summaries.py:42:nn_layer\","
				  "\"tensorflow/python/ops/math_ops.py:17:matmul\"]") &&
		   has(r.json[0], "\"op_types\":null"),
	   "MatMul: float ops and its code, file:line:function outermost first (%s)", r.json[0]);
	tft_session_close(s);
out:
	free(log.p);
}

/* With the real MNIST GraphDef, in both orders: the graph's rows carry what the log says. */
static void test_with_graph(void)
{
	char gpath[600];
	struct enc log = mnist_oplog();

	snprintf(gpath, sizeof(gpath), "%s/tensorboard/graphdef/graphdef_mnist.pbtxt", data_dir);
	if (!ok(access(gpath, R_OK) == 0, "the MNIST GraphDef %s is there", gpath)) {
		free(log.p);
		return;
	}
	for (int order = 0; order < 2; order++) {
		struct in ins[2] = { { gpath, NULL, 0 }, { "tfprof_log", log.p, log.len } };
		struct in swapped[2] = { ins[1], ins[0] };
		struct tft_error err;
		struct tft_session *s;
		char path[512];
		struct rows r;
		int rc;

		s = import(order ? swapped : ins, 2, path, sizeof(path), &rc, &err);
		if (!ok(s != NULL, "graph and oplog (order %d) import (%s)", order, err.msg))
			continue;
		ok(!strcmp(tft_session_meta(s, "format"), order ? "oplog+graphdef" : "graphdef+oplog"),
		   "order %d: both formats (%s)", order, tft_session_meta(s, "format"));
		r = lookup(path, "layer1/weights/Variable");
		ok(r.n == 1 && !strcmp(r.kind[0], "graphdef") && has(r.json[0], "\"op\":\"Variable\"") &&
			   has(r.json[0], "\"op_types\":[\"_trainable_variables\"]"),
		   "order %d: the variable's graph node carries its type, no oplog row beside it (%d rows: %s)",
		   order, r.n, r.json[0]);
		r = lookup(path, "layer1/Wx_plus_b/MatMul");
		ok(r.n == 1 && !strcmp(r.kind[0], "graphdef") && has(r.json[0], "\"op\":\"MatMul\"") &&
			   has(r.json[0], "\"float_ops\":3136000") &&
			   has(r.json[0], "mnist_with_summaries.py:42:nn_layer"),
		   "order %d: MatMul's graph node carries its float ops and code (%s)", order, r.json[0]);
		r = lookup(path, "input/x-input");
		ok(r.n == 1 && has(r.json[0], "\"op_types\":null") && has(r.json[0], "\"float_ops\":null"),
		   "order %d: a node the log does not name: nulls (%s)", order, r.json[0]);
		tft_session_close(s);
	}
	free(log.p);
}

/* Entries of one name merge as tfprof merges them; older traces hold their strings. */
static void test_merge_and_old_traces(void)
{
	struct enc log = { 0 }, code = { 0 }, t = { 0 };
	struct in in = { "tfprof_log", NULL, 0 };
	struct tft_error err;
	struct tft_session *s;
	char path[512];
	struct rows r;
	int rc;

	entry(&log, "x", 10, "a", NULL);
	trace(&code, 1, 5, 1);
	entry(&log, "x", 0, "b", &code);
	/* an older trace: file (1), lineno (2), function (3) strings */
	e_str(&t, 1, "old.py");
	e_int(&t, 2, 7);
	e_str(&t, 3, "f");
	e_msg(&code, 1, &t);
	entry(&log, "x", 20, "a", &code);
	id_string(&log, 1, "new.py");
	in.p = log.p;
	in.n = log.len;
	s = import(&in, 1, path, sizeof(path), &rc, &err);
	if (ok(s != NULL, "merge: imported (%s)", err.msg)) {
		r = lookup(path, "x");
		ok(r.n == 1 && has(r.json[0], "\"op_types\":[\"a\",\"b\"]") && has(r.json[0], "\"float_ops\":20") &&
			   has(r.json[0], "\"code\":[\"old.py:7:f\"]"),
		   "three entries of x: one row, types a and b once each, the last float ops and code_def (%s)",
		   r.json[0]);
		tft_session_close(s);
	}
	free(log.p);
}

static void test_bad_input(void)
{
	struct enc log = { 0 }, code = { 0 }, g = { 0 };
	struct tft_error err;
	struct tft_session *s;
	struct tft_writer *w;
	char path[512];
	size_t id_at;
	int rc;

	/* a trace naming string id 9, which the table lacks: its byte and path */
	entry(&log, "ok", 0, "t", NULL);
	trace(&code, 9, 3, 0);
	entry(&log, "bad", 0, NULL, &code);
	id_string(&log, 0, "none");
	{
		struct in in = { "tfprof_log", log.p, log.len };

		/* the file_id field (key 0x30, value 9) inside the second entry */
		for (id_at = log.len - 1; id_at > 0 && !(log.p[id_at - 1] == 0x30 && log.p[id_at] == 9); id_at--)
			;
		s = import(&in, 1, path, sizeof(path), &rc, &err);
		ok(!s && rc == TFT_EFORMAT && err.offset == (int64_t)id_at &&
			   has(err.msg, "log_entries[1].code_def.traces[0]: file_id: string id 9 is not in id_to_string") &&
			   has(err.file, "tfprof_log"),
		   "a trace's string id not in id_to_string: rc %d at byte %lld (want %zu): %s", rc,
		   (long long)err.offset, id_at, err.msg);
		/* cut inside the second entry */
		in.n = id_at;
		s = import(&in, 1, path, sizeof(path), &rc, &err);
		ok(!s && rc == TFT_EFORMAT && err.offset >= 0 && (size_t)err.offset <= id_at,
		   "cut: fails with a byte offset (%lld: %s)", (long long)err.offset, err.msg);
		/* the GraphDef importer, given no format, refuses the log */
		tft_error_clear(&err);
		w = tft_writer_open(":memory:", NULL, &err);
		rc = w ? tft_graph_ingest(w, "tfprof_log", log.p, id_at - 10, 0, NULL, &err) : -1;
		ok(rc == TFT_EFORMAT && has(err.msg, "OpLogProto"), "the GraphDef importer refuses it: %s", err.msg);
		if (w)
			tft_writer_abort(w);
	}
	{
		static const char text[] = "log_entries {\n  name: \"a\"\n  float_ops: x\n}\n";
		struct in in = { "op_log.pbtxt", (const uint8_t *)text, sizeof(text) - 1 };

		s = import(&in, 1, path, sizeof(path), &rc, &err);
		ok(!s && rc == TFT_EFORMAT && err.offset == (int64_t)(strstr(text, "x\n") - text) &&
			   has(err.msg, "float_ops"),
		   "text: a bad value at its byte (%lld: %s)", (long long)err.offset, err.msg);
	}
	{
		struct enc pe = { 0 }, pn = { 0 };
		struct in in = { "profile_100", NULL, 0 };

		e_str(&pn, 1, "conv");
		e_int(&pe, 1, 7);
		e_msg(&pe, 2, &pn);
		e_msg(&g, 1, &pe);
		in.p = g.p;
		in.n = g.len;
		s = import(&in, 1, path, sizeof(path), &rc, &err);
		ok(!s && rc == TFT_EFORMAT && err.offset == 0 && has(err.msg, "ProfileProto"),
		   "a ProfileProto is refused, saying what it is: %s", err.msg);
	}
	free(log.p);
	free(g.p);
}

/* The text format (str(op_log)) gives the rows the binary does. */
static void test_text(void)
{
	static const char text[] =
		"log_entries {\n  name: \"m\"\n  float_ops: 64\n  types: \"_trainable_variables\"\n"
		"  code_def {\n    traces {\n      lineno: 12\n      file_id: 1\n      function_id: 2\n    }\n  }\n}\n"
		"id_to_string {\n  key: 1\n  value: \"model.py\"\n}\nid_to_string {\n  key: 2\n  value: \"build\"\n}\n";
	struct in in = { "op_log.pbtxt", (const uint8_t *)text, sizeof(text) - 1 };
	struct tft_error err;
	struct tft_session *s;
	char path[512];
	struct rows r;
	int rc;

	s = import(&in, 1, path, sizeof(path), &rc, &err);
	if (ok(s != NULL, "text OpLogProto imports (%s)", err.msg)) {
		r = lookup(path, "m");
		ok(r.n == 1 && has(r.json[0], "\"op_types\":[\"_trainable_variables\"]") &&
			   has(r.json[0], "\"float_ops\":64") && has(r.json[0], "\"code\":[\"model.py:12:build\"]"),
		   "text: types, float ops, code (%s)", r.json[0]);
		is_str(tft_session_meta(s, "graph_format"), "oplog_text", "graph_format oplog_text");
		tft_session_close(s);
	}
}

int main(void)
{
	const char *d = getenv("TFT_DATA");
	char tmpl[] = "/tmp/tft-oplog-XXXXXX";

	snprintf(data_dir, sizeof(data_dir), "%s", d ? d : "../shared/data");
	if (!mkdtemp(tmpl)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(tmpdir, sizeof(tmpdir), "%s", tmpl);
	test_sniff();
	test_alone();
	test_with_graph();
	test_merge_and_old_traces();
	test_bad_input();
	test_text();
	{
		char cmd[400];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd) != 0)
			printf("# could not remove %s\n", tmpdir);
	}
	return done_testing();
}
