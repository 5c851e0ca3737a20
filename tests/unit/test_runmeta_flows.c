/* SPDX-License-Identifier: MIT */
/*
 * The RunMetadata importer's dataflow and launch flows: the session's
 * "DataFlow" flows are the edges TensorFlow's timeline.py draws (the
 * tf.timeline export's s/t pairs, computed by its own code from the same
 * nodes), serially and on several threads; each GPU kernel gets a "launch"
 * flow from the op its annotation names on its GPU's executor device.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codec/json_read.h"
#include "codec/json_write.h"
#include "collect/ingest.h"
#include "collect/ingest_runmeta.h"
#include "collect/tf_names.h"
#include "export/export_tftimeline.h"
#include "store/session.h"
#include "store/writer.h"
#include "pbenc.h"
#include "tap.h"

#define T0 1500000000000000LL
#define CPU "/job:localhost/replica:0/task:0/device:CPU:0"
#define GPU "/job:localhost/replica:0/task:0/device:GPU:0"

static char tmpdir[256];
static int seq;

/* One NodeOutput: a float[4] tensor from allocator alloc (field 7 of NodeExecStats). */
static void output(struct enc *node)
{
	struct enc out = { 0 }, td = { 0 }, sh = { 0 }, dim = { 0 }, ad = { 0 };

	e_int(&td, 1, 1); /* DT_FLOAT */
	e_int(&dim, 1, 4);
	e_msg(&sh, 2, &dim);
	e_msg(&td, 2, &sh);
	e_int(&ad, 1, 16);
	e_str(&ad, 3, "cpu");
	e_msg(&td, 4, &ad);
	e_msg(&out, 3, &td);
	e_msg(node, 7, &out);
}

/* A NodeExecStats with `outputs` outputs (micros only, as TF 1.x). */
static void node(struct enc *dev, const char *name, int64_t start, int64_t dur, const char *label,
		 int outputs)
{
	struct enc n = { 0 };

	e_str(&n, 1, name);
	e_int(&n, 2, (uint64_t)start);
	e_int(&n, 3, 0);
	e_int(&n, 4, (uint64_t)dur);
	e_int(&n, 5, (uint64_t)dur);
	for (int i = 0; i < outputs; i++)
		output(&n);
	if (label)
		e_str(&n, 8, label);
	e_msg(dev, 2, &n);
}

static void device(struct enc *ss, const char *name, struct enc *dev)
{
	struct enc d = { 0 };

	e_str(&d, 1, name);
	for (size_t i = 0; i < dev->len; i++)
		e_byte(&d, dev->p[i]);
	free(dev->p);
	memset(dev, 0, sizeof(*dev));
	e_msg(ss, 1, &d);
}

/*
 * CPU: a [100, 110] lane 0; c (two outputs) [105, 113] lane 1; e = Mul(a,
 * c:1, ^a) [120, 125] lane 0 (a on its own lane: no arrow); dup [130, 132].
 * GPU: b = Neg(a, c, missing) [120, 130]; f = AddN(a/_7, dup, e) [140, 144]
 * (a/_7: a Send/Recv rename of a; dup: the GPU's, the last one produced, on
 * lane 1); dup [141, 142] lane 1; b again = Neg(a) [150, 152]; a RecvTensor
 * whose label lists an input (no arrow). Kernels on stream:all name b (at
 * 122: the first b; at 153: the second), f, and an op that does not run;
 * stream:7 repeats the kernel of b at 122, and lists an input (no arrow).
 */
static struct enc build(void)
{
	struct enc rm = { 0 }, ss = { 0 }, dev = { 0 };

	node(&dev, "a", T0 + 100, 10, "a = Const()", 1);
	node(&dev, "c", T0 + 105, 8, "c = Split()", 2);
	node(&dev, "e", T0 + 120, 5, "e = Mul(a, c:1, ^a)", 1);
	node(&dev, "dup", T0 + 130, 2, "dup = Const()", 1);
	device(&ss, CPU, &dev);
	node(&dev, "b", T0 + 120, 10, "b = Neg(a, c, missing)", 1);
	node(&dev, "f", T0 + 140, 4, "[GPU_0_bfc 0.1MB 0.1MB] f = AddN(a/_7, dup, e)", 0);
	node(&dev, "dup", T0 + 141, 1, "dup = Const()", 1);
	node(&dev, "b", T0 + 150, 2, "b = Neg(a)", 0);
	node(&dev, "RecvTensor", T0 + 200, 3, "r = Recv(a)", 0);
	device(&ss, GPU, &dev);
	node(&dev, "b:Neg", T0 + 122, 3, "neg_kernel regs:8 shm:0 grid:1,1,1 block:32,1,1@@b:Neg", 0);
	node(&dev, "f:AddN", T0 + 143, 1, "addn_kernel@@f:AddN", 0);
	node(&dev, "b:Neg", T0 + 153, 1, "neg_kernel@@b:Neg", 0);
	node(&dev, "zz:Op", T0 + 160, 1, "zz_kernel@@nothing:Op", 0);
	device(&ss, "/device:GPU:0/stream:all", &dev);
	node(&dev, "b:Neg", T0 + 122, 3, "k = Neg(a)@@b:Neg", 0);
	device(&ss, "/device:GPU:0/stream:7", &dev);
	e_msg(&rm, 1, &ss);
	return rm;
}

static struct tft_session *import(const struct enc *rms, int n, int threads)
{
	char path[512];
	struct tft_error err;
	struct tft_writer *w;
	struct tft_writer_opts wo = { .threads = threads };
	struct tft_ingest_opts io = { .threads = threads };

	snprintf(path, sizeof(path), "%s/s%d.tft", tmpdir, seq++);
	tft_error_clear(&err);
	w = tft_writer_open(path, threads ? &wo : NULL, &err);
	if (!w)
		return NULL;
	for (int i = 0; i < n; i++) {
		char name[32];

		snprintf(name, sizeof(name), "step%d.pb", i);
		if (tft_runmeta_ingest_as(w, name, rms[i].p, rms[i].len, TFT_PB_FMT_RUNMETA,
					  threads ? &io : NULL, &err)) {
			printf("# import: %s\n", err.msg);
			tft_writer_abort(w);
			return NULL;
		}
	}
	if (tft_writer_close(w, &err))
		return NULL;
	return tft_session_open(path, &err);
}

/* ---- the session's flows, by the slices they bind --------------------------------- */

struct slice_at {
	int64_t ts;
	char name[64];
	int64_t end;
	bool found;
};

static int on_slice(void *ctx, const struct tft_event *ev)
{
	struct slice_at *a = ctx;

	if (ev->kind == TFT_EV_SLICE && ev->ts_ns == a->ts && !a->found) {
		a->found = true;
		a->end = ev->ts_ns + ev->dur_ns;
	}
	return 0;
}

/* The slice of track `track` starting at ts: "name@start_us" (its end in *end_us). */
static void slice_text(struct tft_session *s, uint32_t track, int64_t ts, char *buf, size_t size,
		       int64_t *end_us)
{
	struct slice_at a = { .ts = ts };
	struct tft_error err;
	const struct tft_track *tr = tft_session_track(s, track);

	tft_session_scan(s, track, ts, ts, 0, on_slice, &a, &err);
	snprintf(buf, size, "%s:%s@%lld", tr ? tft_session_str(s, tr->name, NULL) : "?",
		 a.found ? "" : "(none)", (long long)(ts / 1000 - T0));
	if (end_us)
		*end_us = a.found ? a.end / 1000 : -1;
}

struct edges {
	struct tft_session *s;
	const char *cat;
	char e[64][400];
	int n;
};

static int on_flow(void *ctx, const struct tft_flow *f)
{
	struct edges *x = ctx;
	char a[160], b[160];
	int64_t end_us;

	if (strcmp(tft_session_str(x->s, f->cat, NULL), x->cat) != 0 || x->n >= 64)
		return 0;
	if (!strcmp(x->cat, "DataFlow")) {
		/* as the export writes an arrow: tensor, producer end, consumer start (us) */
		slice_text(x->s, f->src_track, f->src_ts_ns, a, sizeof(a), &end_us);
		snprintf(x->e[x->n++], sizeof(x->e[0]), "%s %lld -> %lld", tft_session_str(x->s, f->name, NULL),
			 (long long)(end_us - T0), (long long)(f->dst_ts_ns / 1000 - T0));
		return 0;
	}
	slice_text(x->s, f->src_track, f->src_ts_ns, a, sizeof(a), NULL);
	slice_text(x->s, f->dst_track, f->dst_ts_ns, b, sizeof(b), NULL);
	snprintf(x->e[x->n++], sizeof(x->e[0]), "%s: %s -> %s", tft_session_str(x->s, f->name, NULL), a, b);
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(a, b);
}

static void session_edges(struct tft_session *s, const char *cat, struct edges *x)
{
	struct tft_error err;

	memset(x, 0, sizeof(*x));
	x->s = s;
	x->cat = cat;
	tft_session_flows(s, on_flow, x, &err);
	qsort(x->e, (size_t)x->n, sizeof(x->e[0]), cmp_str);
}

static bool has_edge(const struct edges *x, const char *e)
{
	for (int i = 0; i < x->n; i++)
		if (!strcmp(x->e[i], e))
			return true;
	return false;
}

/* ---- the tf.timeline export's arrows ------------------------------------------------- */

static char *export_tl(struct tft_session *s)
{
	struct tft_json_writer w;
	struct tft_tftimeline_opts o = { true, false };
	struct tft_error err;
	const char *text;
	size_t len;
	char *out = NULL;

	tft_json_write_init_mem(&w);
	tft_error_clear(&err);
	if (tft_export_tftimeline(s, &w, &o, NULL, &err) == 0) {
		text = tft_json_write_borrow(&w, &len);
		out = malloc(len + 1);
		len = tft_json_compact(text, len, out);
		out[len] = '\0';
	}
	tft_json_write_fini(&w);
	return out;
}

/* The export's s/t pairs as "tensor s_ts -> t_ts" (us from T0). */
static void export_edges(const char *t, struct edges *x)
{
	static const char ks[] = "{\"ph\":\"s\",\"cat\":\"DataFlow\",\"name\":\"";
	static const char kt[] = "{\"ph\":\"t\",\"cat\":\"DataFlow\",\"name\":\"";
	struct { char name[64]; long long ts, id; } sv[64];
	int ns = 0;

	memset(x, 0, sizeof(*x));
	for (const char *p = t; (p = strstr(p, ks)) != NULL && ns < 64; p++) {
		long long pid, tid;
		const char *q = p + sizeof(ks) - 1, *e = strchr(q, '"');

		snprintf(sv[ns].name, sizeof(sv[ns].name), "%.*s", (int)(e - q), q);
		if (sscanf(e, "\",\"pid\":%lld,\"tid\":%lld,\"ts\":%lld,\"id\":%lld", &pid, &tid, &sv[ns].ts,
			   &sv[ns].id) == 4)
			ns++;
	}
	for (const char *p = t; (p = strstr(p, kt)) != NULL && x->n < 64; p++) {
		long long pid, tid, ts, id;
		const char *q = p + sizeof(kt) - 1, *e = strchr(q, '"');

		if (sscanf(e, "\",\"pid\":%lld,\"tid\":%lld,\"ts\":%lld,\"id\":%lld", &pid, &tid, &ts, &id) != 4)
			continue;
		for (int i = 0; i < ns; i++)
			if (sv[i].id == id && x->n < 64)
				snprintf(x->e[x->n++], sizeof(x->e[0]), "%.60s %lld -> %lld", sv[i].name,
					 sv[i].ts - T0, ts - T0);
	}
	qsort(x->e, (size_t)x->n, sizeof(x->e[0]), cmp_str);
}

static bool same_edges(const struct edges *a, const struct edges *b)
{
	if (a->n != b->n)
		return false;
	for (int i = 0; i < a->n; i++)
		if (strcmp(a->e[i], b->e[i]))
			return false;
	return true;
}

static void print_edges(const char *what, const struct edges *x)
{
	printf("# %s (%d):\n", what, x->n);
	for (int i = 0; i < x->n; i++)
		printf("#   %s\n", x->e[i]);
}

/* ---- tests ------------------------------------------------------------------------------ */

static void test_dataflow(void)
{
	struct enc rm = build();
	struct tft_session *one = NULL, *par = NULL;
	struct edges *sx = malloc(sizeof(*sx)), *ex = malloc(sizeof(*ex)), *px = malloc(sizeof(*px));
	char *t = NULL;

	one = import(&rm, 1, 0);
	par = import(&rm, 1, 2);
	if (!ok(one && par, "dataflow: imported serially and on two threads"))
		goto out;
	session_edges(one, "DataFlow", sx);
	is_int(sx->n, 7, "seven dataflow flows");
	ok(has_edge(sx, "c:1 113 -> 120"), "c:1 into e (another lane of the CPU): output 1's name");
	ok(has_edge(sx, "c 113 -> 120"), "c into b (CPU -> GPU)");
	ok(has_edge(sx, "a 110 -> 140"), "a/_7 into f: the Send/Recv rename taken back to a");
	ok(has_edge(sx, "dup 142 -> 140"), "dup into f: the last dup produced (the GPU's, lane 1)");
	ok(has_edge(sx, "e 125 -> 140"), "e into f");
	ok(has_edge(sx, "a 110 -> 150"), "a into the second b");
	{
		int a_into_120 = 0;

		for (int i = 0; i < sx->n; i++)
			a_into_120 += !strcmp(sx->e[i], "a 110 -> 120");
		is_int(a_into_120, 1, "a into b (GPU) but not into e (a's own CPU lane), nor ^a");
	}
	t = export_tl(one);
	if (!ok(t != NULL, "tf.timeline export with --show-dataflow"))
		goto out;
	export_edges(t, ex);
	if (!ok(same_edges(sx, ex), "the session's DataFlow flows are the tf.timeline export's arrows")) {
		print_edges("session", sx);
		print_edges("export", ex);
	}
	session_edges(par, "DataFlow", px);
	if (!ok(same_edges(sx, px), "the same flows from the parallel import"))
		print_edges("parallel", px);

	session_edges(one, "launch", sx);
	is_int(sx->n, 4, "four launch flows");
	ok(has_edge(sx, "b: " GPU ":@120 -> /device:GPU:0/stream:all:@122"),
	   "the kernel at 122 from the first b (the last run of b starting before it)");
	ok(has_edge(sx, "b: " GPU ":@150 -> /device:GPU:0/stream:all:@153"),
	   "the kernel at 153 from the second b");
	ok(has_edge(sx, "f: " GPU ":@140 -> /device:GPU:0/stream:all:@143"), "f's kernel");
	ok(has_edge(sx, "b: " GPU ":@120 -> /device:GPU:0/stream:7:@122"),
	   "the same kernel on its stream, from b");
	if (sx->n != 4)
		print_edges("launch", sx);
	session_edges(par, "launch", px);
	ok(same_edges(sx, px), "the same launch flows from the parallel import");
out:
	free(t);
	free(sx);
	free(ex);
	free(px);
	free(rm.p);
	if (one)
		tft_session_close(one);
	if (par)
		tft_session_close(par);
}

/*
 * A device listed twice in dev_stats: timeline.py lays out each entry's
 * lanes on its own (both on the device's one pid), so a node of the second
 * entry on lane 0 and its producer on the first entry's lane 0 draw no
 * arrow; the input that crosses lanes does.
 */
static void test_repeated_device(void)
{
	struct enc rm = { 0 }, ss = { 0 }, dev = { 0 };
	struct tft_session *s;
	struct edges *sx = malloc(sizeof(*sx)), *ex = malloc(sizeof(*ex));
	char *t = NULL;

	node(&dev, "p", T0 + 10, 10, "p = Const()", 1);
	node(&dev, "q", T0 + 12, 10, "q = Const()", 1);
	device(&ss, CPU, &dev);
	node(&dev, "r", T0 + 30, 10, "r = Add(p, q)", 0);
	device(&ss, CPU, &dev);
	e_msg(&rm, 1, &ss);
	s = import(&rm, 1, 0);
	if (ok(s != NULL, "repeated device: imported")) {
		session_edges(s, "DataFlow", sx);
		ok(sx->n == 1 && has_edge(sx, "q 22 -> 30"), "repeated device: only q (lane 1) into r (lane 0)");
		t = export_tl(s);
		export_edges(t ? t : "", ex);
		if (!ok(same_edges(sx, ex), "repeated device: the export's arrows")) {
			print_edges("session", sx);
			print_edges("export", ex);
		}
		tft_session_close(s);
	}
	free(t);
	free(sx);
	free(ex);
	free(rm.p);
}

/* A NodeDef {name 1, op 2, input 3...} as field 1 of a GraphDef. */
static void graph_node(struct enc *g, const char *name, const char *op, const char *in1, const char *in2)
{
	struct enc n = { 0 };

	e_str(&n, 1, name);
	e_str(&n, 2, op);
	if (in1)
		e_str(&n, 3, in1);
	if (in2)
		e_str(&n, 3, in2);
	e_msg(g, 1, &n);
}

/*
 * Nodes without a timeline_label (timeline.py draws no arrow into them) take
 * their inputs from the RunMetadata's partition_graphs: x [10, 20] and y
 * [12, 22] on the CPU (two lanes), z = Add(y, x:0 as "x", ^ctrl) [30, 40] on
 * the GPU without a label; w on the GPU has a label naming only x, and its
 * NodeDef names y too: its label wins (the export's edge, and no more).
 */
static void test_graph_inputs(void)
{
	struct enc rm = { 0 }, ss = { 0 }, dev = { 0 }, g = { 0 };
	struct tft_session *s;
	struct edges *sx = malloc(sizeof(*sx));

	node(&dev, "x", T0 + 10, 10, NULL, 1);
	node(&dev, "y", T0 + 12, 10, NULL, 1);
	device(&ss, CPU, &dev);
	node(&dev, "z", T0 + 30, 10, NULL, 0);
	node(&dev, "w", T0 + 50, 10, "w = Neg(x)", 0);
	device(&ss, GPU, &dev);
	e_msg(&rm, 1, &ss);
	graph_node(&g, "x", "Const", NULL, NULL);
	graph_node(&g, "y", "Const", NULL, NULL);
	graph_node(&g, "z", "Add", "y", "x");
	graph_node(&g, "w", "Add", "x", "y");
	graph_node(&g, "q", "Add", "x", "^z");
	e_msg(&rm, 3, &g); /* partition_graphs */
	s = import(&rm, 1, 0);
	if (ok(s != NULL, "graph inputs: imported")) {
		session_edges(s, "DataFlow", sx);
		ok(sx->n == 3 && has_edge(sx, "y 22 -> 30") && has_edge(sx, "x 20 -> 30") &&
			   has_edge(sx, "x 20 -> 50"),
		   "z (no label): its NodeDef's inputs y and x; w (a label): only the label's x");
		if (sx->n != 3)
			print_edges("session", sx);
		tft_session_close(s);
	}
	free(sx);
	free(rm.p);
}

static void test_label_parse(void)
{
	struct tft_tf_str in, rest, out;
	int done = 0;
	const char *l = "[cpu 0.1MB] x = f(y) = Op(a, b(c), d)\nmore)";

	/* Python: ('[cpu 0.1MB] x = f(y)', 'Op(a, b', 'c), d') */
	ok(tft_tf_names_timeline_inputs(l, strlen(l), &in) && in.len == 5 && !memcmp(in.p, "c), d", 5),
	   "timeline label: re.match's groups (the last ')' before the newline, the last '(' before it)");
	ok(!tft_tf_names_timeline_inputs("x = _Recv(t @/cpu:0", 19, &in), "_Recv label: no inputs");
	ok(!tft_tf_names_timeline_inputs("(a)", 3, &in), "no ' = ': no match");
	rest = (struct tft_tf_str){ "a, b,c, ", 8 };
	ok(tft_tf_names_timeline_next_input(&rest, &done, &out) && out.len == 1 &&
		   tft_tf_names_timeline_next_input(&rest, &done, &out) && out.len == 3 &&
		   tft_tf_names_timeline_next_input(&rest, &done, &out) && out.len == 0 &&
		   !tft_tf_names_timeline_next_input(&rest, &done, &out),
	   "split(', '): 'a', 'b,c', ''");
	ok(tft_tf_names_strip_rename((struct tft_tf_str){ "x/y/_12", 7 }, &out) && out.len == 3 &&
		   !tft_tf_names_strip_rename((struct tft_tf_str){ "/_1", 3 }, &out) &&
		   !tft_tf_names_strip_rename((struct tft_tf_str){ "x_1", 3 }, &out),
	   "Send/Recv renames: up to the last '/_' (not at the start)");
}

int main(void)
{
	char tmpl[] = "/tmp/tft-rmflows-XXXXXX";

	if (!mkdtemp(tmpl)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(tmpdir, sizeof(tmpdir), "%s", tmpl);
	test_label_parse();
	test_dataflow();
	test_repeated_device();
	test_graph_inputs();
	{
		char cmd[400];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd) != 0)
			printf("# could not remove %s\n", tmpdir);
	}
	return done_testing();
}
