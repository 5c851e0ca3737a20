/* SPDX-License-Identifier: MIT */
/*
 * Accounting across importers: concurrency is not nesting (a TF device's ops
 * and a GPU stream's kernels are lane-packed, self = total), one execution
 * is counted once (TF's /stream:all and /memcpy copies, XProf's derived
 * lines, GPU annotations and the profiler's own span are derived and left
 * out of the statistics), and GPU activity is typed and named from Kineto's
 * categories and deviceProperties. Inputs are built from the documented
 * formats (RunMetadata and XSpace wire bytes, Kineto JSON text); expected
 * numbers are written out by hand from timeline.py's and tfprof's semantics.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/stats.h"
#include "collect/ingest.h"
#include "store/session.h"
#include "store/writer.h"
#include "pbenc.h"
#include "tap.h"

static char dir[] = "/tmp/tft-acct-XXXXXX";
static int seq;

/* Import data[0..len) named `name` through tft_ingest_mem into a new session. */
static struct tft_session *import_mem(const char *name, const void *data, size_t len)
{
	char path[512];
	struct tft_error err;
	struct tft_writer *w;
	int rc;

	snprintf(path, sizeof(path), "%s/s%d.tft", dir, seq++);
	tft_error_clear(&err);
	w = tft_writer_open(path, NULL, &err);
	if (!w)
		return NULL;
	rc = tft_ingest_mem(w, name, data, len, NULL, &err);
	if (rc) {
		printf("# import %s: %s\n", name, err.msg);
		tft_writer_abort(w);
		return NULL;
	}
	if (tft_writer_close(w, &err))
		return NULL;
	return tft_session_open(path, &err);
}

static uint32_t find_track(struct tft_session *s, const char *proc, const char *name)
{
	for (uint32_t i = 0; i < tft_session_track_count(s); i++) {
		const struct tft_track *t = tft_session_track(s, i);
		const struct tft_process *p = tft_session_process(s, t->process);
		if (name && strcmp(tft_session_str(s, t->name, NULL), name) != 0)
			continue;
		if (proc && (!p || strcmp(tft_session_str(s, p->name, NULL), proc) != 0))
			continue;
		return i;
	}
	return UINT32_MAX;
}

static const struct tft_stats_row *row(const struct tft_stats_result *r, const char *name)
{
	for (size_t i = 0; r && i < r->nrows; i++)
		if (r->rows[i].name_len == strlen(name) && memcmp(r->rows[i].name, name, r->rows[i].name_len) == 0)
			return &r->rows[i];
	return NULL;
}

static struct tft_stats_result *stats(struct tft_session *s, bool derived)
{
	struct tft_stats_opts o = { .group_by = TFT_STATS_BY_NAME, .track = TFT_NONE, .derived = derived };
	struct tft_stats_result *r = NULL;
	struct tft_error err;

	tft_error_clear(&err);
	if (tft_stats_compute(s, &o, &r, &err))
		printf("# stats: %s\n", err.msg);
	for (size_t i = 0; getenv("DUMP") && r && i < r->nrows; i++)
		printf("# row %.*s count %llu total %lld self %lld\n", (int)r->rows[i].name_len, r->rows[i].name,
		       (unsigned long long)r->rows[i].count, (long long)r->rows[i].total_ns, (long long)r->rows[i].self_ns);
	return r;
}

struct depth_ctx {
	char names[16][64];
	uint32_t depth[16];
	int n;
};

static int on_depth(void *ctx, const struct tft_event *ev)
{
	struct depth_ctx *d = ctx;

	(void)ev;
	if (d->n < 16) {
		snprintf(d->names[d->n], sizeof(d->names[0]), "%u", ev->name);
		d->depth[d->n++] = ev->depth;
	}
	return 0;
}

/* ---- RunMetadata: a TF 1.x GPU step ------------------------------------------------ */

static void node(struct enc *dev, const char *name, int64_t start_us, int64_t dur_us, const char *label)
{
	struct enc n = { 0 };

	e_str(&n, 1, name);
	e_int(&n, 2, (uint64_t)start_us);
	e_int(&n, 3, 0);
	e_int(&n, 4, (uint64_t)dur_us);
	e_int(&n, 5, (uint64_t)dur_us);
	if (label)
		e_str(&n, 8, label);
	e_msg(dev, 2, &n);
}

#define T0 1490280136316000LL
#define CPU "/job:localhost/replica:0/task:0/cpu:0"
#define GPU "/job:localhost/replica:0/task:0/gpu:0"

static void test_runmeta(void)
{
	struct enc rm = { 0 }, ss = { 0 }, dev = { 0 };
	struct tft_session *s;
	struct tft_stats_result *r;
	const struct tft_stats_row *x;

	/*
	 * The CPU device's inter-op threads run layer1/activations [0, 1912 us]
	 * and, during it, layer1/MatMul [100, 421] and layer1/add [1800, 2000]
	 * (timeline.py: three lanes' worth of overlap, no nesting).
	 */
	e_str(&dev, 1, CPU);
	node(&dev, "layer1/activations", T0, 1912, "layer1/activations = Relu(layer1/add)");
	node(&dev, "layer1/MatMul", T0 + 100, 321, "layer1/MatMul = MatMul(x, w)");
	node(&dev, "layer1/add", T0 + 1800, 200, "layer1/add = Add(layer1/MatMul, b)");
	e_msg(&ss, 1, &dev);
	/* The GPU tracer: every kernel on stream:all and stream:N, every copy on memcpy and stream:N. */
	e_str(&dev, 1, GPU);
	node(&dev, "layer2/MatMul", T0 + 2100, 30, "layer2/MatMul = MatMul(layer1/activations, w2)");
	e_msg(&ss, 1, &dev);
	e_str(&dev, 1, "/gpu:0/stream:all");
	node(&dev, "layer2/MatMul:MatMul", T0 + 2140, 50, "sgemm@@layer2/MatMul:MatMul");
	node(&dev, "layer2/MatMul:MatMul", T0 + 2170, 50, "sgemm@@layer2/MatMul:MatMul");
	e_msg(&ss, 1, &dev);
	e_str(&dev, 1, "/gpu:0/stream:12");
	node(&dev, "layer2/MatMul:MatMul", T0 + 2140, 50, "sgemm@@layer2/MatMul:MatMul");
	e_msg(&ss, 1, &dev);
	e_str(&dev, 1, "/gpu:0/stream:13");
	node(&dev, "layer2/MatMul:MatMul", T0 + 2170, 50, "sgemm@@layer2/MatMul:MatMul");
	node(&dev, "edge_5_x:MEMCPYHtoD", T0 + 2000, 20, "MEMCPYHtoD bytes:4096");
	e_msg(&ss, 1, &dev);
	e_str(&dev, 1, "/gpu:0/memcpy");
	node(&dev, "edge_5_x:MEMCPYHtoD", T0 + 2000, 20, "MEMCPYHtoD bytes:4096");
	e_msg(&ss, 1, &dev);
	e_msg(&rm, 1, &ss);

	s = import_mem("run_meta.pb", rm.p, rm.len);
	free(rm.p);
	ok(s != NULL, "runmeta: imports");
	if (!s)
		return;
	uint32_t cpu = find_track(s, NULL, CPU);
	const struct tft_track *t = cpu != UINT32_MAX ? tft_session_track(s, cpu) : NULL;
	ok(t && t->kind == TFT_TRACK_DEVICE && (t->flags & TFT_TRACKF_CONCURRENT),
	   "runmeta: a TF device executor holds concurrent executions");
	is_int(t ? t->max_depth : 99, 1, "runmeta: its three overlapping ops take two lanes");
	{
		struct tft_error err;
		struct depth_ctx d = { .n = 0 };
		tft_error_clear(&err);
		tft_session_scan(s, cpu, INT64_MIN, INT64_MAX, 0, on_depth, &d, &err);
		ok(d.n == 3 && d.depth[0] == 0 && d.depth[1] == 1 && d.depth[2] == 1,
		   "runmeta: activations on lane 0, MatMul and add on lane 1 (a lane frees when its op ends)");
	}
	r = stats(s, false);
	x = row(r, "layer1/activations");
	ok(x && x->total_ns == 1912000 && x->self_ns == 1912000,
	   "runmeta: the op that ran during others keeps its whole time as self (1912 us, not 1391)");
	x = row(r, "layer1/MatMul");
	ok(x && x->count == 1 && x->self_ns == 321000 && x->total_ns == 321000,
	   "runmeta: the ops it overlapped are not its children: self = total");
	const struct tft_stats_row *k = row(r, "layer2/MatMul:MatMul");
	ok(k && k->count == 2 && k->total_ns == 100000,
	   "runmeta: each kernel counted once (stream:N, not also stream:all)");
	k = row(r, "edge_5_x:MEMCPYHtoD");
	ok(k && k->count == 1 && k->total_ns == 20000, "runmeta: each copy counted once (stream:N, not also memcpy)");
	is_int(r ? r->derived_tracks : 0, 2, "runmeta: /stream:all and /memcpy left out as derived");
	tft_stats_destroy(r);
	r = stats(s, true);
	k = row(r, "layer2/MatMul:MatMul");
	ok(k && k->count == 4, "runmeta: --all-tracks counts the copies too (4 kernel slices)");
	tft_stats_destroy(r);
	uint32_t all = find_track(s, NULL, "/gpu:0/stream:all");
	t = all != UINT32_MAX ? tft_session_track(s, all) : NULL;
	ok(t && (t->flags & TFT_TRACKF_DERIVED) && (t->flags & TFT_TRACKF_CONCURRENT),
	   "runmeta: /stream:all is derived (and its overlapping kernels take lanes)");
	is_int(t ? t->max_depth : 99, 1, "runmeta: /stream:all's two overlapping kernels on two lanes");
	uint32_t s12 = find_track(s, NULL, "/gpu:0/stream:12");
	t = s12 != UINT32_MAX ? tft_session_track(s, s12) : NULL;
	ok(t && !(t->flags & TFT_TRACKF_DERIVED), "runmeta: /stream:12 is counted");
	tft_session_close(s);
}

/* A stream:all without any stream:N: it is the only record of the kernels. */
static void test_runmeta_all_only(void)
{
	struct enc rm = { 0 }, ss = { 0 }, dev = { 0 };
	struct tft_session *s;
	struct tft_stats_result *r;

	e_str(&dev, 1, "/device:GPU:0/stream:all");
	node(&dev, "k:MatMul", T0, 10, "sgemm@@k:MatMul");
	e_msg(&ss, 1, &dev);
	e_msg(&rm, 1, &ss);
	s = import_mem("run_meta_all.pb", rm.p, rm.len);
	free(rm.p);
	if (!s) {
		ok(0, "runmeta, stream:all only: imports");
		return;
	}
	r = stats(s, false);
	ok(r && r->slices == 1 && r->derived_tracks == 0,
	   "runmeta, stream:all only: counted (nothing else holds the kernels)");
	tft_stats_destroy(r);
	tft_session_close(s);
}

/* ---- XSpace: a GPU plane with XProf's derived lines ---------------------------------- */

static void xevent(struct enc *line, int64_t md, int64_t off_ps, int64_t dur_ps)
{
	struct enc ev = { 0 };

	e_int(&ev, 1, (uint64_t)md);
	e_int(&ev, 2, (uint64_t)off_ps);
	e_int(&ev, 3, (uint64_t)dur_ps);
	e_msg(line, 4, &ev);
}

static void xline(struct enc *plane, int64_t id, const char *name, struct enc *events)
{
	struct enc l = { 0 };

	e_int(&l, 1, (uint64_t)id);
	e_str(&l, 2, name);
	e_int(&l, 3, 1700000000000000000ULL);
	for (size_t i = 0; i < events->len; i++)
		e_byte(&l, events->p[i]);
	free(events->p);
	memset(events, 0, sizeof(*events));
	e_msg(plane, 3, &l);
}

static void xmeta(struct enc *plane, int64_t id, const char *name)
{
	struct enc entry = { 0 }, md = { 0 };

	e_int(&md, 1, (uint64_t)id);
	e_str(&md, 2, name);
	e_int(&entry, 1, (uint64_t)id);
	e_msg(&entry, 2, &md);
	e_msg(plane, 4, &entry);
}

static void test_xspace(void)
{
	struct enc sp = { 0 }, pl = { 0 }, ev = { 0 };
	struct tft_session *s;
	struct tft_stats_result *r;

	/* GPU plane: two kernels on a stream, overlapping by 1 us (reported so by the tracer) */
	e_int(&pl, 1, 1);
	e_str(&pl, 2, "/device:GPU:0");
	xmeta(&pl, 1, "volta_sgemm");
	xmeta(&pl, 2, "dense/MatMul");
	xmeta(&pl, 3, "train_step");
	xmeta(&pl, 4, "model");
	xevent(&ev, 1, 0, 10000000);
	xevent(&ev, 1, 9000000, 10000000);
	xline(&pl, 7, "Stream #7(Compute)", &ev);
	xevent(&ev, 2, 0, 19000000); /* the TF op spanning its kernels */
	xline(&pl, -559038734, "TensorFlow Ops", &ev);
	xevent(&ev, 4, 0, 19000000);
	xevent(&ev, 2, 0, 19000000);
	xline(&pl, -559038735, "TensorFlow Name Scope", &ev);
	xevent(&ev, 3, 0, 19000000);
	xline(&pl, -559038737, "Steps", &ev);
	e_msg(&sp, 1, &pl);
	/* TPU plane: no streams, its XLA Ops line is the ops themselves */
	e_int(&pl, 1, 2);
	e_str(&pl, 2, "/device:TPU:0");
	xmeta(&pl, 1, "fusion.1");
	xmeta(&pl, 2, "jit_step");
	xevent(&ev, 1, 0, 5000000);
	xline(&pl, 1, "XLA Ops", &ev);
	xevent(&ev, 2, 0, 5000000);
	xline(&pl, 2, "XLA Modules", &ev);
	e_msg(&sp, 1, &pl);

	s = import_mem("host.xplane.pb", sp.p, sp.len);
	free(sp.p);
	ok(s != NULL, "xspace: imports");
	if (!s)
		return;
	uint32_t st = find_track(s, NULL, "Stream #7(Compute)");
	const struct tft_track *t = st != UINT32_MAX ? tft_session_track(s, st) : NULL;
	ok(t && t->kind == TFT_TRACK_GPU_STREAM && t->flags == TFT_TRACKF_CONCURRENT && t->max_depth == 1,
	   "xspace: a stream's overlapping kernels take two lanes, not parent and child");
	static const char *const derived[] = { "TensorFlow Ops", "TensorFlow Name Scope", "Steps", "XLA Modules" };
	for (int i = 0; i < 4; i++) {
		uint32_t id = find_track(s, NULL, derived[i]);
		t = id != UINT32_MAX ? tft_session_track(s, id) : NULL;
		ok(t && (t->flags & TFT_TRACKF_DERIVED) && !(t->flags & TFT_TRACKF_CONCURRENT),
		   "xspace: '%s' is derived (it repeats the kernels' or ops' time)", derived[i]);
	}
	uint32_t ns = find_track(s, NULL, "TensorFlow Name Scope");
	is_int(ns != UINT32_MAX ? tft_session_track(s, ns)->max_depth : 99, 1,
	       "xspace: name scopes still nest (model > dense/MatMul)");
	uint32_t xo = find_track(s, NULL, "XLA Ops");
	t = xo != UINT32_MAX ? tft_session_track(s, xo) : NULL;
	ok(t && t->flags == 0, "xspace: a TPU's XLA Ops (no streams on its plane) are the work: counted");
	r = stats(s, false);
	const struct tft_stats_row *k = row(r, "volta_sgemm");
	ok(k && k->count == 2 && k->self_ns == 20000 && k->total_ns == 20000,
	   "xspace: kernels' self = total (20 us), the 1 us overlap is no nesting");
	ok(!row(r, "dense/MatMul") && !row(r, "train_step") && !row(r, "model") && !row(r, "jit_step"),
	   "xspace: derived lines' names are not in the statistics");
	ok(row(r, "fusion.1") != NULL, "xspace: the TPU's op is");
	is_int(r ? r->slices : 0, 3, "xspace: 3 executions counted (2 kernels, 1 TPU op)");
	tft_stats_destroy(r);
	tft_session_close(s);
}

/* ---- Kineto: devices from categories and deviceProperties --------------------------- */

static const char kineto_nometa[] =
	"{\"schemaVersion\":1,\"deviceProperties\":[{\"id\":0,\"name\":\"AMD Instinct MI300X\"},"
	"{\"id\":2,\"name\":\"NVIDIA H100\"}],\n"
	" \"traceEvents\":[\n"
	"  {\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":251,\"tid\":251,\"ts\":100,\"dur\":50},\n"
	"  {\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":251,\"tid\":251,\"ts\":110,\"dur\":5},\n"
	"  {\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm\",\"pid\":2,\"tid\":7,\"ts\":120,\"dur\":30},\n"
	"  {\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm\",\"pid\":2,\"tid\":7,\"ts\":140,\"dur\":30},\n"
	"  {\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy HtoD\",\"pid\":2,\"tid\":8,\"ts\":90,\"dur\":4},\n"
	"  {\"ph\":\"X\",\"cat\":\"gpu_user_annotation\",\"name\":\"forward\",\"pid\":2,\"tid\":7,\"ts\":0,\"dur\":100000},\n"
	"  {\"ph\":\"X\",\"cat\":\"Trace\",\"name\":\"PyTorch Profiler (0)\",\"pid\":\"Spans\",\"tid\":\"PyTorch Profiler\",\"ts\":0,\"dur\":200000},\n"
	"  {\"ph\":\"X\",\"cat\":\"v8\",\"name\":\"parse\",\"pid\":251,\"tid\":300,\"ts\":0,\"dur\":10},\n"
	"  {\"ph\":\"X\",\"cat\":\"v8\",\"name\":\"inner\",\"pid\":251,\"tid\":300,\"ts\":1,\"dur\":2},\n"
	"  {\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":251,\"tid\":300,\"args\":{\"name\":\"ScriptStreamerThread\"}}\n"
	" ]}\n";

static void test_kineto(void)
{
	struct tft_session *s = import_mem("k.json", kineto_nometa, sizeof(kineto_nometa) - 1);
	struct tft_stats_result *r;

	ok(s != NULL, "kineto: imports");
	if (!s)
		return;
	uint32_t st = find_track(s, "GPU 2 (NVIDIA H100)", "stream 7");
	const struct tft_track *t = st != UINT32_MAX ? tft_session_track(s, st) : NULL;
	ok(t && t->kind == TFT_TRACK_GPU_STREAM && (t->flags & TFT_TRACKF_CONCURRENT),
	   "kineto: kernels on an unnamed (pid 2, tid 7): GPU 2's 'stream 7', a gpu_stream, named from deviceProperties");
	is_int(t ? t->max_depth : 99, 1, "kineto: its overlapping kernels on two lanes");
	st = find_track(s, "GPU 2 (NVIDIA H100)", "stream 8");
	t = st != UINT32_MAX ? tft_session_track(s, st) : NULL;
	ok(t && t->kind == TFT_TRACK_GPU_STREAM, "kineto: a copy engine's stream too ('stream 8')");
	st = find_track(s, "GPU 2 (NVIDIA H100)", "stream 7 annotations");
	t = st != UINT32_MAX ? tft_session_track(s, st) : NULL;
	ok(t && (t->flags & TFT_TRACKF_DERIVED), "kineto: the GPU annotation on a derived track of its own");
	st = find_track(s, NULL, "ScriptStreamerThread");
	t = st != UINT32_MAX ? tft_session_track(s, st) : NULL;
	ok(t && t->kind == TFT_TRACK_THREAD && t->max_depth == 1,
	   "kineto: 'ScriptStreamerThread' is a thread with a call stack, not a stream");
	r = stats(s, false);
	ok(r && r->nrows > 0 && strcmp(r->rows[0].name, "gemm") == 0,
	   "kineto: the top op is real work (the kernels), not the annotation or the profiler's span");
	ok(!row(r, "forward") && !row(r, "PyTorch Profiler (0)"),
	   "kineto: GPU annotation and profiler span not counted as ops");
	const struct tft_stats_row *k = row(r, "gemm");
	ok(k && k->count == 2 && k->self_ns == 60000, "kineto: overlapping kernels: self = total (60 us)");
	k = row(r, "parse");
	ok(k && k->self_ns == 8000, "kineto: a thread's call stack still nests (parse self 8 us)");
	tft_stats_destroy(r);
	tft_session_close(s);
}

int main(void)
{
	if (!mkdtemp(dir))
		return 1;
	test_runmeta();
	test_runmeta_all_only();
	test_xspace();
	test_kineto();
	{
		char cmd[600];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			printf("# could not remove %s\n", dir);
	}
	return done_testing();
}
