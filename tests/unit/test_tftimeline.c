/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for the tf.timeline exporter: StepStats -> RunMetadata importer
 * -> export --tf-timeline, checked against what timeline.py writes for the
 * same StepStats (worked out by hand from seed-systems.md B.4): the full text
 * of a small step, then pids, lanes, args, kernels, memcpy, RecvTensor,
 * Send/Recv, flows, tensors and memory counters of two workers with GPU
 * streams; several steps; node order by node_stats_index; peak memory.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codec/json_read.h"
#include "codec/json_write.h"
#include "codec/source.h"
#include "collect/ingest_chrome.h"
#include "collect/ingest_pickle.h"
#include "collect/ingest_runmeta.h"
#include "export/export_tftimeline.h"
#include "store/session.h"
#include "store/writer.h"
#include "pbenc.h"
#include "tap.h"

/* ---- protobuf encoder (step_stats.proto / config.proto field numbers) ----------------- */

/* NodeOutput { slot, tensor_description { dtype, shape { dim* }, allocation_description } } */
static void output(struct enc *node, const char *alloc, int64_t bytes, int ndims, const int64_t *dims)
{
	struct enc o = { 0 }, td = { 0 }, sh = { 0 }, dim = { 0 }, ad = { 0 };

	e_int(&o, 1, 0);
	e_int(&td, 1, 1); /* DT_FLOAT */
	for (int i = 0; i < ndims; i++) {
		if (dims[i])
			e_int(&dim, 1, (uint64_t)dims[i]);
		e_msg(&sh, 2, &dim);
	}
	e_msg(&td, 2, &sh);
	if (bytes)
		e_int(&ad, 1, (uint64_t)bytes);
	e_str(&ad, 3, alloc);
	e_msg(&td, 4, &ad);
	e_msg(&o, 3, &td);
	e_msg(node, 7, &o);
}

/* NodeExecStats; end_rel < 0: only op_end_rel_micros (the RPC logger); extra: outputs. */
static void node(struct enc *dev, const char *name, int64_t start, int64_t end_rel, const char *label,
		 struct enc *extra)
{
	struct enc n = { 0 };

	e_str(&n, 1, name);
	e_int(&n, 2, (uint64_t)start);
	e_int(&n, 4, (uint64_t)(end_rel < 0 ? 4 : end_rel));
	if (end_rel > 0)
		e_int(&n, 5, (uint64_t)end_rel);
	if (extra) {
		for (size_t i = 0; i < extra->len; i++)
			e_byte(&n, extra->p[i]);
		free(extra->p);
		memset(extra, 0, sizeof(*extra));
	}
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

static void runmeta(struct enc *rm, struct enc *ss)
{
	e_msg(rm, 1, ss);
}

/* ---- session helpers ------------------------------------------------------------------ */

static char tmpdir[256];
static int seq;
static struct tft_error err;

/* Import each RunMetadata of rms[] into one new session (one step each). */
static struct tft_session *import_threads(struct enc *rms, int n, int threads);

static struct tft_session *import(struct enc *rms, int n)
{
	return import_threads(rms, n, 0);
}

/* The same, the writer with `threads` store threads and the parser with as many. */
static struct tft_session *import_threads(struct enc *rms, int n, int threads)
{
	char path[512];
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
		free(rms[i].p);
		memset(&rms[i], 0, sizeof(rms[i]));
	}
	if (tft_writer_close(w, &err))
		return NULL;
	return tft_session_open(path, &err);
}

/* Export to memory; returns a malloc'd NUL-terminated text. compact: whitespace outside strings removed. */
static char *export(struct tft_session *s, bool dataflow, bool memory, bool compact,
		    struct tft_tftimeline_counts *c)
{
	struct tft_json_writer w;
	struct tft_tftimeline_opts o = { dataflow, memory };
	const char *text;
	size_t len;
	char *out;
	int r;

	tft_json_write_init_mem(&w);
	tft_error_clear(&err);
	r = tft_export_tftimeline(s, &w, &o, c, &err);
	if (r) {
		printf("# export: %d %s\n", r, err.msg);
		tft_json_write_fini(&w);
		return NULL;
	}
	text = tft_json_write_borrow(&w, &len);
	out = malloc(len + 1);
	if (compact)
		len = tft_json_compact(text, len, out);
	else
		memcpy(out, text, len);
	out[len] = '\0';
	tft_json_write_fini(&w);
	return out;
}

static int count_of(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)) != NULL; p++)
		n++;
	return n;
}

/* `needle` occurs, and (if after) after `after`. */
static void has(const char *text, const char *needle, const char *msg)
{
	if (!ok(text && strstr(text, needle) != NULL, "%s", msg))
		printf("#   missing: %s\n", needle);
}

static void before(const char *text, const char *a, const char *b, const char *msg)
{
	const char *pa = text ? strstr(text, a) : NULL, *pb = text ? strstr(text, b) : NULL;

	if (!ok(pa && pb && pa < pb, "%s", msg))
		printf("#   want %s before %s\n", a, b);
}

/* ---- 1: the whole text of a small step -------------------------------------------------- */

#define DEV "/job:localhost/replica:0/task:0/device:CPU:0"

static const char small_expected[] =
	"{\n"
	"    \"traceEvents\": [\n"
	"        {\n"
	"            \"name\": \"process_name\",\n"
	"            \"ph\": \"M\",\n"
	"            \"pid\": 0,\n"
	"            \"args\": {\n"
	"                \"name\": \"Allocators\"\n"
	"            }\n"
	"        },\n"
	"        {\n"
	"            \"name\": \"process_name\",\n"
	"            \"ph\": \"M\",\n"
	"            \"pid\": 1,\n"
	"            \"args\": {\n"
	"                \"name\": \"" DEV " Compute\"\n"
	"            }\n"
	"        },\n"
	"        {\n"
	"            \"name\": \"process_name\",\n"
	"            \"ph\": \"M\",\n"
	"            \"pid\": 2,\n"
	"            \"args\": {\n"
	"                \"name\": \"" DEV " Tensors\"\n"
	"            }\n"
	"        },\n"
	"        {\n"
	"            \"ph\": \"N\",\n"
	"            \"cat\": \"Tensor\",\n"
	"            \"name\": \"a\",\n"
	"            \"pid\": 2,\n"
	"            \"tid\": 0,\n"
	"            \"ts\": 100,\n"
	"            \"id\": 0\n"
	"        },\n"
	"        {\n"
	"            \"ph\": \"O\",\n"
	"            \"cat\": \"Tensor\",\n"
	"            \"name\": \"a\",\n"
	"            \"pid\": 2,\n"
	"            \"tid\": 0,\n"
	"            \"ts\": 109,\n"
	"            \"id\": 0,\n"
	"            \"args\": {\n"
	"                \"snapshot\": {\n"
	"                    \"tensor_description\": \"dtype: DT_FLOAT\\nshape {\\n  dim {\\n    size: 4\\n  }\\n}\\n"
	"allocation_description {\\n  requested_bytes: 16\\n  allocator_name: cpu\\n}\\n\"\n"
	"                }\n"
	"            }\n"
	"        },\n"
	"        {\n"
	"            \"ph\": \"N\",\n"
	"            \"cat\": \"Tensor\",\n"
	"            \"name\": \"b\",\n"
	"            \"pid\": 2,\n"
	"            \"tid\": 1,\n"
	"            \"ts\": 105,\n"
	"            \"id\": 1\n"
	"        },\n"
	"        {\n"
	"            \"ph\": \"O\",\n"
	"            \"cat\": \"Tensor\",\n"
	"            \"name\": \"b\",\n"
	"            \"pid\": 2,\n"
	"            \"tid\": 1,\n"
	"            \"ts\": 114,\n"
	"            \"id\": 1,\n"
	"            \"args\": {\n"
	"                \"snapshot\": {\n"
	"                    \"tensor_description\": \"dtype: DT_FLOAT\\nshape {\\n  dim {\\n    size: 4\\n  }\\n}\\n"
	"allocation_description {\\n  requested_bytes: 16\\n  allocator_name: cpu\\n}\\n\"\n"
	"                }\n"
	"            }\n"
	"        },\n"
	"        {\n"
	"            \"ph\": \"X\",\n"
	"            \"cat\": \"Op\",\n"
	"            \"name\": \"Const\",\n"
	"            \"pid\": 1,\n"
	"            \"tid\": 0,\n"
	"            \"ts\": 100,\n"
	"            \"dur\": 10,\n"
	"            \"args\": {\n"
	"                \"name\": \"a\",\n"
	"                \"op\": \"Const\"\n"
	"            }\n"
	"        },\n"
	"        {\n"
	"            \"ph\": \"X\",\n"
	"            \"cat\": \"Op\",\n"
	"            \"name\": \"Neg\",\n"
	"            \"pid\": 1,\n"
	"            \"tid\": 1,\n"
	"            \"ts\": 105,\n"
	"            \"dur\": 10,\n"
	"            \"args\": {\n"
	"                \"name\": \"b\",\n"
	"                \"op\": \"Neg\",\n"
	"                \"input0\": \"a\"\n"
	"            }\n"
	"        },\n"
	"        {\n"
	"            \"ph\": \"s\",\n"
	"            \"cat\": \"DataFlow\",\n"
	"            \"name\": \"a\",\n"
	"            \"pid\": 1,\n"
	"            \"tid\": 0,\n"
	"            \"ts\": 110,\n"
	"            \"id\": 0\n"
	"        },\n"
	"        {\n"
	"            \"ph\": \"t\",\n"
	"            \"cat\": \"DataFlow\",\n"
	"            \"name\": \"a\",\n"
	"            \"pid\": 1,\n"
	"            \"tid\": 1,\n"
	"            \"ts\": 105,\n"
	"            \"id\": 0\n"
	"        },\n"
	"        {\n"
	"            \"ph\": \"D\",\n"
	"            \"cat\": \"Tensor\",\n"
	"            \"name\": \"a\",\n"
	"            \"pid\": 2,\n"
	"            \"tid\": 0,\n"
	"            \"ts\": 114,\n"
	"            \"id\": 0\n"
	"        },\n"
	"        {\n"
	"            \"ph\": \"D\",\n"
	"            \"cat\": \"Tensor\",\n"
	"            \"name\": \"b\",\n"
	"            \"pid\": 2,\n"
	"            \"tid\": 0,\n"
	"            \"ts\": 115,\n"
	"            \"id\": 1\n"
	"        },\n"
	"        {\n"
	"            \"ph\": \"C\",\n"
	"            \"cat\": \"Memory\",\n"
	"            \"name\": \"cpu\",\n"
	"            \"pid\": 0,\n"
	"            \"tid\": 0,\n"
	"            \"ts\": 100,\n"
	"            \"args\": {\n"
	"                \"cpu\": 16\n"
	"            }\n"
	"        },\n"
	"        {\n"
	"            \"ph\": \"C\",\n"
	"            \"cat\": \"Memory\",\n"
	"            \"name\": \"cpu\",\n"
	"            \"pid\": 0,\n"
	"            \"tid\": 0,\n"
	"            \"ts\": 105,\n"
	"            \"args\": {\n"
	"                \"cpu\": 32\n"
	"            }\n"
	"        },\n"
	"        {\n"
	"            \"ph\": \"C\",\n"
	"            \"cat\": \"Memory\",\n"
	"            \"name\": \"cpu\",\n"
	"            \"pid\": 0,\n"
	"            \"tid\": 0,\n"
	"            \"ts\": 114,\n"
	"            \"args\": {\n"
	"                \"cpu\": 16\n"
	"            }\n"
	"        },\n"
	"        {\n"
	"            \"ph\": \"C\",\n"
	"            \"cat\": \"Memory\",\n"
	"            \"name\": \"cpu\",\n"
	"            \"pid\": 0,\n"
	"            \"tid\": 0,\n"
	"            \"ts\": 115,\n"
	"            \"args\": {\n"
	"                \"cpu\": 0\n"
	"            }\n"
	"        }\n"
	"    ]\n"
	"}";

static struct enc small_runmeta(int64_t t0)
{
	struct enc rm = { 0 }, ss = { 0 }, dev = { 0 }, ex = { 0 };
	static const int64_t dims[1] = { 4 };

	output(&ex, "cpu", 16, 1, dims);
	node(&dev, "a", t0 + 100, 10, "a = Const()", &ex);
	output(&ex, "cpu", 16, 1, dims);
	node(&dev, "b", t0 + 105, 10, "b = Neg(a)", &ex);
	device(&ss, DEV, &dev);
	runmeta(&rm, &ss);
	return rm;
}

struct peaks {
	int n;
	char alloc[4][32];
	int64_t bytes[4], ts[4];
	uint32_t step[4], ntensors[4];
	char tensors[4][128];
	int stop_with;
};

static int on_peak(void *ctx, const struct tft_tftimeline_peak *p)
{
	struct peaks *k = ctx;

	if (k->n < 4) {
		snprintf(k->alloc[k->n], sizeof(k->alloc[0]), "%s", p->allocator);
		k->bytes[k->n] = p->bytes;
		k->ts[k->n] = p->ts_us;
		k->step[k->n] = p->step;
		k->ntensors[k->n] = p->ntensors;
		k->tensors[k->n][0] = '\0';
		for (uint32_t i = 0; i < p->ntensors; i++) {
			strncat(k->tensors[k->n], p->tensors[i], 100);
			strcat(k->tensors[k->n], ",");
		}
	}
	k->n++;
	return k->stop_with;
}

static void test_small(void)
{
	struct enc rm = small_runmeta(0);
	struct tft_session *s = import(&rm, 1);
	struct tft_tftimeline_counts c;
	struct peaks pk = { 0 };
	char *text;

	if (!ok(s != NULL, "small step imported"))
		return;
	text = export(s, true, true, false, &c);
	if (!ok(text && strcmp(text, small_expected) == 0, "small step: byte-exact timeline.py output")) {
		const char *a = text ? text : "", *b = small_expected;
		size_t i = 0;

		while (a[i] && a[i] == b[i])
			i++;
		printf("#   first difference at byte %zu: got \"%.60s\"\n#   want \"%.60s\"\n", i, a + i, b + i);
	}
	is_int(c.events, 17, "counts.events");
	is_int(c.ops, 2, "counts.ops");
	is_int(c.flows, 1, "counts.flows");
	is_int(c.tensors, 2, "counts.tensors");
	is_int(c.counters, 4, "counts.counters");
	is_int(c.steps, 1, "counts.steps");
	free(text);

	/* generate_chrome_trace_format(show_dataflow=False, show_memory=False): M + X only */
	text = export(s, false, false, true, &c);
	is_int(count_of(text, "\"ph\":"), 5, "no flows, objects, counters without the options");
	has(text, "\"args\":{\"name\":\"b\",\"op\":\"Neg\",\"input0\":\"a\"}}]}", "ends with the last op");
	free(text);

	/* AllocationMaximum: cpu peaks at 32 bytes at ts 105 with {a, b} */
	ok(tft_tftimeline_is_stepstats(s), "session is from StepStats");
	is_int(tft_tftimeline_peak_memory(s, on_peak, &pk, &err), 0, "peak_memory");
	is_int(pk.n, 1, "one allocator");
	is_str(pk.alloc[0], "cpu", "allocator");
	is_int(pk.bytes[0], 32, "peak bytes");
	is_int(pk.ts[0], 105, "peak timestamp");
	is_int(pk.step[0], 0, "peak step");
	is_str(pk.tensors[0], "a,b,", "tensors live at the peak");
	pk.n = 0;
	pk.stop_with = 7;
	is_int(tft_tftimeline_peak_memory(s, on_peak, &pk, &err), 7, "a callback's value stops the walk");
	tft_session_close(s);
}

/* ---- 2: two workers, GPU streams, memcpy, RecvTensor, Send/Recv ------------------------- */

#define W0 "/job:worker/replica:0/task:0"
#define W1 "/job:worker/replica:0/task:1"
#define T0 1500000000000000LL

static struct enc big_runmeta(int64_t t0)
{
	struct enc rm = { 0 }, ss = { 0 }, dev = { 0 }, ex = { 0 };
	static const int64_t d32x10[2] = { 32, 10 }, d32[1] = { 32 }, none[1] = { 0 };
	const char *k = "volta_sgemm_128x64_nn regs:64 shm:1024 grid:4,1,1 block:256,1,1@@";
	char label[256];

	output(&ex, "cpu", 128, 1, d32);
	node(&dev, "x", t0 + 2, 3, "x = Const()", &ex);
	node(&dev, "x/_1", t0 + 6, 1, "x/_1 = _Send(x @" W1 "/device:CPU:0", NULL);
	device(&ss, W0 "/device:CPU:0", &dev);

	output(&ex, "GPU_0_bfc", 1280, 2, d32x10);
	node(&dev, "dense/MatMul", t0 + 20, 35,
	     "[GPU_0_bfc 0.1MB 0.1MB] dense/MatMul = MatMul(x, dense/kernel/read)", &ex);
	output(&ex, "GPU_0_bfc", 0, 1, none);
	node(&dev, "aux/Fill", t0 + 24, 10, "aux/Fill = Fill(aux/dims)", &ex);
	output(&ex, "GPU_0_bfc", 640, 1, d32);
	node(&dev, "add", t0 + 60, 6, "add = Add(dense/MatMul, ^aux/Fill)", &ex);
	node(&dev, "loss", t0 + 70, 9, "loss = Mean(add/_3, missing)", NULL);
	node(&dev, "caf\xc3\xa9", t0 + 80, 2, "caf\xc3\xa9 = NoOp()", NULL);
	device(&ss, W0 "/device:GPU:0", &dev);

	snprintf(label, sizeof(label), "%sdense/MatMul:MatMul#id=3#", k);
	node(&dev, "dense/MatMul:MatMul", t0 + 25, 12, label, NULL);
	device(&ss, W0 "/device:GPU:0/stream:all", &dev);
	node(&dev, "dense/MatMul:MatMul", t0 + 25, 12, label, NULL);
	device(&ss, W0 "/device:GPU:0/stream:14", &dev);
	node(&dev, "edge_7_x:MEMCPYHtoD", t0 + 12, 3, "MEMCPYHtoD bytes:128", NULL);
	device(&ss, W0 "/device:GPU:0/memcpy", &dev);

	node(&dev, "RecvTensor", t0 + 7, -1,
	     "[128B] " W0 "/device:CPU:0;0000000000000001;" W1 "/device:CPU:0;edge_5_x;0:0 from " W0
	     "/device:CPU:0 to " W1 "/device:CPU:0",
	     NULL);
	output(&ex, "cpu", 128, 1, d32);
	node(&dev, "x/_2", t0 + 8, 5, "x/_2 = _Recv(x @" W0 "/device:CPU:0", &ex);
	output(&ex, "cpu", 128, 1, d32);
	node(&dev, "y", t0 + 14, 3, "y = Mul(x/_2, x/_2)", &ex);
	device(&ss, W1 "/device:CPU:0", &dev);
	runmeta(&rm, &ss);
	return rm;
}


static void test_workers(void)
{
	struct enc rm = big_runmeta(T0);
	struct tft_session *s = import(&rm, 1);
	struct peaks pk = { 0 };
	char *t;

	if (!ok(s != NULL, "two-worker step imported"))
		return;
	t = export(s, true, true, true, NULL);
	if (!ok(t != NULL, "exported"))
		goto out;
	/* pids: Allocators, then each dev_stats in file order: Compute, Tensors */
	before(t, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":0,\"args\":{\"name\":\"Allocators\"}}",
	       "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"args\":{\"name\":\"" W0
	       "/device:CPU:0 Compute\"}}",
	       "pid 0 Allocators first, pid 1 the first device");
	has(t, "\"pid\":2,\"args\":{\"name\":\"" W0 "/device:CPU:0 Tensors\"}", "pid 2: its Tensors");
	has(t, "\"pid\":3,\"args\":{\"name\":\"" W0 "/device:GPU:0 Compute\"}", "pid 3: GPU:0");
	has(t, "\"pid\":5,\"args\":{\"name\":\"" W0 "/device:GPU:0/stream:all Compute\"}", "pid 5: stream:all");
	has(t, "\"pid\":7,\"args\":{\"name\":\"" W0 "/device:GPU:0/stream:14 Compute\"}", "pid 7: stream:14");
	has(t, "\"pid\":9,\"args\":{\"name\":\"" W0 "/device:GPU:0/memcpy Compute\"}", "pid 9: memcpy");
	has(t, "\"pid\":11,\"args\":{\"name\":\"" W1 "/device:CPU:0 Compute\"}", "pid 11: the second worker");
	is_int(count_of(t, "\"ph\":\"M\""), 13, "13 process_name events");
	before(t, "\"pid\":12,\"args\"", "\"ph\":\"N\"", "all metadata before the events");

	/* ops: name = op type, args name/op/inputN; the allocator prefix is not part of the op */
	has(t, "{\"ph\":\"X\",\"cat\":\"Op\",\"name\":\"MatMul\",\"pid\":3,\"tid\":0,\"ts\":1500000000000020,"
	       "\"dur\":35,\"args\":{\"name\":\"dense/MatMul\",\"op\":\"MatMul\",\"input0\":\"x\","
	       "\"input1\":\"dense/kernel/read\"}}",
	    "MatMul op event");
	/* lanes: Fill starts inside MatMul: lane 1; add after both: lane 0 */
	has(t, "\"name\":\"Fill\",\"pid\":3,\"tid\":1,\"ts\":1500000000000024", "overlapping op: lane 1");
	has(t, "\"name\":\"Add\",\"pid\":3,\"tid\":0,", "later op: back to lane 0");
	/* control inputs are listed as inputs too */
	has(t, "\"args\":{\"name\":\"add\",\"op\":\"Add\",\"input0\":\"dense/MatMul\",\"input1\":\"^aux/Fill\"}",
	    "control input kept as an input arg");
	/* kernels: node from the annotation between @@ and #, name:op */
	has(t, "{\"ph\":\"X\",\"cat\":\"Op\",\"name\":\"MatMul\",\"pid\":5,\"tid\":0,\"ts\":1500000000000025,"
	       "\"dur\":12,\"args\":{\"name\":\"dense/MatMul\",\"op\":\"MatMul\"}}",
	    "kernel on stream:all");
	has(t, "\"name\":\"MatMul\",\"pid\":7,\"tid\":0", "kernel on stream:14");
	/* memcpy: no @@, node_name "edge_7_x:MEMCPYHtoD" */
	has(t, "\"name\":\"MEMCPYHtoD\",\"pid\":9,\"tid\":0,\"ts\":1500000000000012,\"dur\":3,"
	       "\"args\":{\"name\":\"edge_7_x\",\"op\":\"MEMCPYHtoD\"}}",
	    "memcpy event");
	/* RecvTensor: op RecvTensor, all_end_rel_micros absent -> dur 0 */
	has(t, "\"name\":\"RecvTensor\",\"pid\":11,\"tid\":0,\"ts\":1500000000000007,\"dur\":0,"
	       "\"args\":{\"name\":\"RecvTensor\",\"op\":\"RecvTensor\"}}",
	    "RecvTensor event");
	/* _Send/_Recv labels have no closing paren: the regex fails -> "unknown" */
	has(t, "\"name\":\"unknown\",\"pid\":1,\"tid\":0,\"ts\":1500000000000006,\"dur\":1,"
	       "\"args\":{\"name\":\"x/_1\",\"op\":\"unknown\"}}",
	    "_Send is unknown");
	has(t, "\"args\":{\"name\":\"x/_2\",\"op\":\"unknown\"}}", "_Recv is unknown");
	/* RecvTensor ends at 7 (dur 0) -> _Recv at 8 reuses lane 0 */
	has(t, "\"name\":\"unknown\",\"pid\":11,\"tid\":0,\"ts\":1500000000000008", "_Recv on lane 0");
	/* non-ASCII as \u escapes */
	has(t, "\"name\":\"NoOp\",\"pid\":3,\"tid\":0,\"ts\":1500000000000080,\"dur\":2,"
	       "\"args\":{\"name\":\"caf\\u00e9\",\"op\":\"NoOp\"}}",
	    "non-ASCII node name escaped like json.dumps");

	/* dataflow: x (CPU, pid 1 tid 0, ends at 5) -> MatMul (pid 3 tid 0, starts 20) */
	has(t, "{\"ph\":\"s\",\"cat\":\"DataFlow\",\"name\":\"x\",\"pid\":1,\"tid\":0,\"ts\":1500000000000005,"
	       "\"id\":0}",
	    "flow start at the producer's end");
	has(t, "{\"ph\":\"t\",\"cat\":\"DataFlow\",\"name\":\"x\",\"pid\":3,\"tid\":0,\"ts\":1500000000000020,"
	       "\"id\":0}",
	    "flow end at the consumer's start");
	/* add/_3 is not a tensor: the "/_3" Send/Recv suffix is stripped; same pid/tid: no flow */
	is_int(count_of(t, "\"name\":\"add\",\"pid\":3"), 0, "no flow between ops on one lane");
	/* y reads x/_2 on another lane? x/_2 is on lane 0 (8..13), y at 14 also lane 0: no flow */
	is_int(count_of(t, "\"ph\":\"s\""), 1, "one flow in all");
	/* tensors: N/O per output, D per tensor; object ids in production order */
	is_int(count_of(t, "\"ph\":\"N\""), 6, "6 tensors created");
	is_int(count_of(t, "\"ph\":\"O\""), 6, "6 snapshots");
	is_int(count_of(t, "\"ph\":\"D\""), 6, "6 deletions");
	has(t, "{\"ph\":\"N\",\"cat\":\"Tensor\",\"name\":\"dense/MatMul\",\"pid\":4,\"tid\":0,"
	       "\"ts\":1500000000000020,\"id\":1}",
	    "MatMul's tensor on GPU:0 Tensors");
	/* x: last unref = MatMul end - 1 = 54 */
	has(t, "{\"ph\":\"D\",\"cat\":\"Tensor\",\"name\":\"x\",\"pid\":2,\"tid\":0,\"ts\":1500000000000054,"
	       "\"id\":0}",
	    "x lives until its consumer's end - 1");
	/* the zero-byte tensor has no requested_bytes line and an empty dim */
	has(t, "\"tensor_description\":\"dtype: DT_FLOAT\\nshape {\\n  dim {\\n  }\\n}\\n"
	       "allocation_description {\\n  allocator_name: GPU_0_bfc\\n}\\n\"",
	    "zero-size tensor snapshot");
	/* memory counters per allocator in order of first use: cpu before GPU_0_bfc */
	before(t, "\"cat\":\"Memory\",\"name\":\"cpu\"", "\"cat\":\"Memory\",\"name\":\"GPU_0_bfc\"",
	       "counters of cpu first");
	has(t, "{\"ph\":\"C\",\"cat\":\"Memory\",\"name\":\"GPU_0_bfc\",\"pid\":0,\"tid\":0,"
	       "\"ts\":1500000000000060,\"args\":{\"GPU_0_bfc\":1920}}",
	    "GPU_0_bfc running total when add is allocated");
	free(t);

	is_int(tft_tftimeline_peak_memory(s, on_peak, &pk, &err), 0, "peak memory");
	is_int(pk.n, 2, "two allocators");
	is_str(pk.alloc[0], "cpu", "cpu first");
	/* x (2..54), x/_2 (8..16: y ends at 17), y (14..17): 384 at 14 */
	is_int(pk.bytes[0], 384, "cpu peak");
	is_int(pk.ts[0], T0 + 14, "cpu peak time");
	is_str(pk.tensors[0], "x,x/_2,y,", "cpu live set");
	is_str(pk.alloc[1], "GPU_0_bfc", "GPU second");
	/* MatMul (20..59: add ends at 66 - 1 = 65), Fill 0 bytes, add 640 (60..66): 1920 */
	is_int(pk.bytes[1], 1920, "GPU peak");
	is_str(pk.tensors[1], "add,aux/Fill,dense/MatMul,", "GPU live set (zero-byte tensors stay)");
out:
	tft_session_close(s);
}

/* ---- 3: several steps in one session ------------------------------------------------- */

static void test_steps(void)
{
	struct enc rms[2] = { small_runmeta(0), small_runmeta(1000000) };
	struct tft_session *s = import(rms, 2);
	struct tft_tftimeline_counts c;
	char *t;

	if (!ok(s != NULL, "two steps imported"))
		return;
	t = export(s, true, true, true, &c);
	is_int(c.steps, 2, "two StepStats");
	has(t, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":3,\"args\":{\"name\":\"" DEV " Compute\"}}",
	    "the second step's device gets new pids");
	before(t, "\"pid\":4,\"args\"", "\"ph\":\"N\"", "metadata of both steps first");
	has(t, "\"name\":\"a\",\"pid\":4,\"tid\":0,\"ts\":1000100,\"id\":2}", "object ids continue");
	has(t, "{\"ph\":\"s\",\"cat\":\"DataFlow\",\"name\":\"a\",\"pid\":3,\"tid\":0,\"ts\":1000110,\"id\":1}",
	    "flow ids continue");
	is_int(count_of(t, "\"ph\":\"M\""), 5, "Allocators once");
	free(t);
	tft_session_close(s);
}

/* ---- 4: a session written directly: node_stats_index order, other sources ------------- */

static void test_direct(void)
{
	char path[512];
	struct tft_writer *w;
	struct tft_process p = { 0 };
	struct tft_track tr = { 0 };
	struct tft_session *s;
	struct tft_step st = { 0 };
	uint32_t pid, tid, k_label, k_start, k_end, k_index, k_op;
	char *t;

	snprintf(path, sizeof(path), "%s/direct.tft", tmpdir);
	tft_error_clear(&err);
	w = tft_writer_open(path, NULL, &err);
	if (!ok(w != NULL, "writer"))
		return;
	p.name = tft_writer_intern_cstr(w, "host");
	pid = tft_writer_add_process(w, &p);
	tr.process = pid;
	tr.kind = TFT_TRACK_DEVICE;
	tr.name = tft_writer_intern_cstr(w, "/device:CPU:0");
	tid = tft_writer_add_track(w, &tr);
	k_label = tft_writer_intern_cstr(w, "timeline_label");
	k_start = tft_writer_intern_cstr(w, "all_start_micros");
	k_end = tft_writer_intern_cstr(w, "all_end_rel_micros");
	k_index = tft_writer_intern_cstr(w, "node_stats_index");
	k_op = tft_writer_intern_cstr(w, "op");
	/*
	 * node_stats order (index) differs from time order: timeline.py assigns
	 * lanes in node_stats order. index 0: n1 at 10..30; index 1: n0 at 5..8
	 * (5 > 0? lane 0 is free until 30 -> 5 > 30 false -> lane 1); index 2:
	 * n2 at 31 (> 30 -> lane 0).
	 */
	{
		static const struct {
			const char *name;
			int64_t start, dur, index;
		} nodes[] = { { "n0", 5, 3, 1 }, { "n1", 10, 20, 0 }, { "n2", 31, 1, 2 } };

		for (int i = 0; i < 3; i++) {
			struct tft_arg a[4];
			struct tft_event ev = { 0 };
			char label[32];

			snprintf(label, sizeof(label), "%s = Op()", nodes[i].name);
			a[0] = (struct tft_arg){ k_label, TFT_ARG_STR, { .str = tft_writer_intern_cstr(w, label) } };
			a[1] = (struct tft_arg){ k_start, TFT_ARG_INT, { .i = nodes[i].start } };
			a[2] = (struct tft_arg){ k_end, TFT_ARG_INT, { .i = nodes[i].dur } };
			a[3] = (struct tft_arg){ k_index, TFT_ARG_INT, { .i = nodes[i].index } };
			ev.kind = TFT_EV_SLICE;
			ev.ts_ns = nodes[i].start * 1000;
			ev.dur_ns = nodes[i].dur * 1000;
			ev.track = tid;
			ev.name = tft_writer_intern_cstr(w, nodes[i].name);
			ev.count = 1;
			ev.nargs = 4;
			ev.args = a;
			tft_writer_append(w, &ev);
		}
	}
	/* a track from another source: no label, times from the event (ns -> whole us) */
	tr.name = tft_writer_intern_cstr(w, "python thread");
	tr.kind = TFT_TRACK_THREAD;
	tid = tft_writer_add_track(w, &tr);
	{
		struct tft_arg a = { k_op, TFT_ARG_STR, { .str = tft_writer_intern_cstr(w, "matmul") } };
		struct tft_event ev = { 0 };

		ev.kind = TFT_EV_SLICE;
		ev.ts_ns = 2500;
		ev.dur_ns = 1600; /* 2.5 .. 4.1 us -> ts 2, dur 2 */
		ev.track = tid;
		ev.name = tft_writer_intern_cstr(w, "torch.mm");
		ev.count = 1;
		ev.nargs = 1;
		ev.args = &a;
		tft_writer_append(w, &ev);
		/* and a slice with no args at all (a Kineto op): its name is its op */
		ev.ts_ns = 9000;
		ev.dur_ns = 1000;
		ev.name = tft_writer_intern_cstr(w, "aten::mm");
		ev.nargs = 0;
		ev.args = NULL;
		tft_writer_append(w, &ev);
	}
	st.name = tft_writer_intern_cstr(w, "untraced");
	st.process = TFT_NONE;
	st.start_ns = 0;
	st.dur_ns = 1;
	st.traced = false; /* untraced steps never make a StepStats */
	tft_writer_add_step(w, &st);
	ok(tft_writer_close(w, &err) == 0, "direct session written");
	s = tft_session_open(path, &err);
	if (!ok(s != NULL, "direct session opens"))
		return;
	ok(!tft_tftimeline_is_stepstats(s), "no StepStats format meta");
	t = export(s, false, false, true, NULL);
	has(t, "\"name\":\"Op\",\"pid\":1,\"tid\":0,\"ts\":10,\"dur\":20,\"args\":{\"name\":\"n1\"",
	    "index 0 first: lane 0");
	has(t, "\"name\":\"Op\",\"pid\":1,\"tid\":1,\"ts\":5,\"dur\":3,\"args\":{\"name\":\"n0\"",
	    "index 1 (earlier in time) on lane 1");
	has(t, "\"name\":\"Op\",\"pid\":1,\"tid\":0,\"ts\":31,", "index 2 back on lane 0");
	before(t, "\"name\":\"n1\"", "\"name\":\"n0\"", "ops in node_stats order");
	has(t, "{\"ph\":\"X\",\"cat\":\"Op\",\"name\":\"matmul\",\"pid\":3,\"tid\":0,\"ts\":2,\"dur\":2,"
	       "\"args\":{\"name\":\"torch.mm\",\"op\":\"matmul\"}}",
	    "other sources: op arg, event name, whole microseconds");
	has(t, "\"pid\":3,\"args\":{\"name\":\"python thread Compute\"}", "a thread track is a device");
	has(t, "{\"ph\":\"X\",\"cat\":\"Op\",\"name\":\"aten::mm\",\"pid\":3,\"tid\":0,\"ts\":9,\"dur\":1,"
	       "\"args\":{\"name\":\"aten::mm\",\"op\":\"aten::mm\"}}",
	    "other sources, no op arg: the slice's name is its op (not \"unknown\")");
	free(t);
	tft_session_close(s);
}

/* ---- 5: empty session, pickle import end to end ---------------------------------------- */

static void test_empty_and_pickle(void)
{
	char path[512];
	struct tft_writer *w;
	struct tft_session *s;
	struct enc rm = small_runmeta(0), pk = { 0 };
	char *t;

	snprintf(path, sizeof(path), "%s/empty.tft", tmpdir);
	w = tft_writer_open(path, NULL, &err);
	tft_writer_close(w, &err);
	s = tft_session_open(path, &err);
	t = export(s, true, true, false, NULL);
	is_str(t, "{\n    \"traceEvents\": [\n        {\n            \"name\": \"process_name\",\n"
		  "            \"ph\": \"M\",\n            \"pid\": 0,\n            \"args\": {\n"
		  "                \"name\": \"Allocators\"\n            }\n        }\n    ]\n}",
	       "empty session: the Allocators process only");
	free(t);
	tft_session_close(s);

	/* pickle.dumps(RunMetadata, 2) around the same bytes: same timeline */
	e_byte(&pk, 0x80), e_byte(&pk, 2);
	for (const char *g = "ctensorflow.core.protobuf.config_pb2\nRunMetadata\n)R}X\x0a"; *g; g++)
		e_byte(&pk, (uint8_t)*g);
	for (int i = 0; i < 3; i++)
		e_byte(&pk, 0);
	for (const char *g = "serializedB"; *g; g++)
		e_byte(&pk, (uint8_t)*g);
	for (int i = 0; i < 4; i++)
		e_byte(&pk, (uint8_t)(rm.len >> (8 * i)));
	for (size_t i = 0; i < rm.len; i++)
		e_byte(&pk, rm.p[i]);
	e_byte(&pk, 's'), e_byte(&pk, 'b'), e_byte(&pk, '.');
	free(rm.p);
	snprintf(path, sizeof(path), "%s/pickle.tft", tmpdir);
	w = tft_writer_open(path, NULL, &err);
	tft_error_clear(&err);
	if (!ok(tft_ingest_pickle_mem(w, "/x/step.pickle", pk.p, pk.len, NULL, &err) == 0,
		"pickled RunMetadata imports"))
		printf("#   %s\n", err.msg);
	tft_writer_close(w, &err);
	free(pk.p);
	s = tft_session_open(path, &err);
	t = export(s, true, true, false, NULL);
	ok(t && strcmp(t, small_expected) == 0, "pickled RunMetadata: the same timeline");
	is_str(tft_session_meta(s, "format"), "runmeta-pickle", "format meta");
	is_str(tft_session_meta(s, "session.name"), "step", "session name from the file name");
	free(t);
	tft_session_close(s);
}

/* ---- 6: real data: TensorBoard's RunMetadata text proto (TF 0.7/0.8) -------------------- */

static void test_real_pbtxt(void)
{
	const char *dir = getenv("TFT_DATA");
	char path[512], out[512];
	FILE *fp;
	long n;
	char *data;
	struct tft_writer *w;
	struct tft_session *s;
	char *t;

	snprintf(path, sizeof(path), "%s/tensorboard/run_metadata_run_step99_tag_train.pbtxt",
		 dir ? dir : "../shared/data");
	fp = fopen(path, "rb");
	if (!fp) {
		ok(0, "%s not found (TFT_DATA)", path);
		return;
	}
	fseek(fp, 0, SEEK_END);
	n = ftell(fp);
	fseek(fp, 0, SEEK_SET);
	data = malloc((size_t)n + 1);
	if (fread(data, 1, (size_t)n, fp) != (size_t)n)
		n = 0;
	fclose(fp);
	snprintf(out, sizeof(out), "%s/real.tft", tmpdir);
	w = tft_writer_open(out, NULL, &err);
	ok(tft_runmeta_ingest(w, path, (const uint8_t *)data, (size_t)n, NULL, &err) == 0,
	   "real RunMetadata text imports");
	tft_writer_close(w, &err);
	free(data);
	s = tft_session_open(out, &err);
	t = export(s, true, true, true, NULL);
	/* timeline.py on it: one device, _SOURCE = NoOp() for 52 us; its memory entry has no tensors */
	is_str(t,
	       "{\"traceEvents\":[{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":0,\"args\":{\"name\":"
	       "\"Allocators\"}},{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"args\":{\"name\":"
	       "\"/job:localhost/replica:0/task:0/cpu:0 Compute\"}},{\"name\":\"process_name\",\"ph\":\"M\","
	       "\"pid\":2,\"args\":{\"name\":\"/job:localhost/replica:0/task:0/cpu:0 Tensors\"}},{\"ph\":"
	       "\"X\",\"cat\":\"Op\",\"name\":\"NoOp\",\"pid\":1,\"tid\":0,\"ts\":1459365298611334,"
	       "\"dur\":52,\"args\":{\"name\":\"_SOURCE\",\"op\":\"NoOp\"}}]}",
	       "real RunMetadata: timeline.py's output");
	free(t);
	tft_session_close(s);
}

/*
 * StepStats nodes without a timeline_label on a GPU tracer device: named and
 * typed as timeline.py does with an empty label (_parse_kernel_label splits
 * the node name "name:op"; a name without ':' has op "unknown"), not from
 * the op argument the importer derives for its own use.
 */
static void test_gpu_no_label(void)
{
	struct enc rm = { 0 }, ss = { 0 }, dev = { 0 };
	struct tft_session *s;
	char *j;

	node(&dev, "dense/MatMul:MatMul", 1000, 5, NULL, NULL);
	node(&dev, "RecvTensor", 1010, 5, NULL, NULL);
	device(&ss, "/device:GPU:0/stream:all", &dev);
	runmeta(&rm, &ss);
	s = import(&rm, 1);
	ok(s != NULL, "label-less GPU nodes: import");
	if (!s)
		return;
	j = export(s, false, false, true, NULL);
	ok(j != NULL, "label-less GPU nodes: export");
	if (j) {
		has(j, "\"name\":\"MatMul\",\"pid\":1,\"tid\":0,\"ts\":1000,\"dur\":5,"
		       "\"args\":{\"name\":\"dense/MatMul\",\"op\":\"MatMul\"}",
		    "a node without a label: name and op split at its ':'");
		has(j, "\"name\":\"unknown\",\"pid\":1,\"tid\":0,\"ts\":1010,\"dur\":5,"
		       "\"args\":{\"name\":\"RecvTensor\",\"op\":\"unknown\"}",
		    "RecvTensor without a label: op unknown");
		ok(!strstr(j, "dense/MatMul:MatMul"), "the full node name is not the slice's name");
	}
	free(j);
	tft_session_close(s);
}

/*
 * A device listed twice in dev_stats (the worker RPC logger's own entry for
 * the RecvTensor nodes of a device the executor also lists) and a device
 * without nodes, in a session's second step: timeline.py gives every entry
 * a pair of pids in entry order, sends a device's events to its last pair,
 * assigns lanes entry by entry (the RecvTensor that overlaps MatMul takes
 * lane 0 of its own entry; its all_end_rel_micros is absent: dur 0) and
 * emits entry by entry. Expected text from a
 * port of timeline.py on the same StepStats.
 */
#define GPU0 "/job:localhost/replica:0/task:0/device:GPU:0"
#define GPU1 "/job:localhost/replica:0/task:0/device:GPU:1"

static void test_repeated_device(void)
{
	struct enc rms[2] = { small_runmeta(0), { 0 } }, ss = { 0 }, dev = { 0 };
	struct tft_session *s;
	char *t;
	const int64_t t0 = 1000000;

	node(&dev, "x", t0 + 100, 20, "x = MatMul(a)", NULL);
	node(&dev, "y", t0 + 105, 5, "y = Relu(x)", NULL);
	device(&ss, GPU0, &dev);
	node(&dev, "c", t0 + 100, 10, "c = Const()", NULL);
	device(&ss, DEV, &dev);
	node(&dev, "RecvTensor", t0 + 102, -1, "RecvTensor 4 bytes x from /job:w to " GPU0, NULL);
	device(&ss, GPU0, &dev);
	device(&ss, GPU1, &dev);
	runmeta(&rms[1], &ss);
	s = import(rms, 2);
	if (!ok(s != NULL, "repeated device: imported"))
		return;
	ok(tft_session_meta(s, "tf.dev_stats.0") == NULL, "step 0: entries not stored (one each)");
	ok(tft_session_meta(s, "tf.dev_stats.1") != NULL, "step 1: entries stored");
	t = export(s, true, false, true, NULL);
	has(t, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":3,\"args\":{\"name\":\"" GPU0
	       " Compute\"}},{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":4,\"args\":{\"name\":\"" GPU0
	       " Tensors\"}},{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":5,\"args\":{\"name\":\"" DEV
	       " Compute\"}},{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":6,\"args\":{\"name\":\"" DEV
	       " Tensors\"}},{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":7,\"args\":{\"name\":\"" GPU0
	       " Compute\"}},{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":8,\"args\":{\"name\":\"" GPU0
	       " Tensors\"}},{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":9,\"args\":{\"name\":\"" GPU1
	       " Compute\"}},{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":10,\"args\":{\"name\":\"" GPU1
	       " Tensors\"}},",
	    "a pair of pids per entry, in entry order, the empty device's too");
	has(t, "{\"ph\":\"X\",\"cat\":\"Op\",\"name\":\"MatMul\",\"pid\":7,\"tid\":0,\"ts\":1000100,\"dur\":20,"
	       "\"args\":{\"name\":\"x\",\"op\":\"MatMul\",\"input0\":\"a\"}},"
	       "{\"ph\":\"X\",\"cat\":\"Op\",\"name\":\"Relu\",\"pid\":7,\"tid\":1,\"ts\":1000105,\"dur\":5,"
	       "\"args\":{\"name\":\"y\",\"op\":\"Relu\",\"input0\":\"x\"}},"
	       "{\"ph\":\"X\",\"cat\":\"Op\",\"name\":\"Const\",\"pid\":5,\"tid\":0,\"ts\":1000100,\"dur\":10,"
	       "\"args\":{\"name\":\"c\",\"op\":\"Const\"}},"
	       "{\"ph\":\"X\",\"cat\":\"Op\",\"name\":\"RecvTensor\",\"pid\":7,\"tid\":0,\"ts\":1000102,\"dur\":0,"
	       "\"args\":{\"name\":\"RecvTensor\",\"op\":\"RecvTensor\"}}",
	    "events on the last pair, lanes and order entry by entry");
	is_int(count_of(t, "\"ph\":\"M\""), 11, "Allocators + 5 pairs");
	free(t);
	tft_session_close(s);
}

/*
 * A tf.timeline JSON imported and exported again with --show-dataflow gives
 * its DataFlow arrows back (the session keeps them as flows; the nodes carry
 * no labels to derive them from).
 */
/* Tracks per name in s: how many tracks are named `name`. */
static int tracks_named(struct tft_session *s, const char *name)
{
	int n = 0;

	for (uint32_t i = 0; i < tft_session_track_count(s); i++) {
		const struct tft_track *tr = tft_session_track(s, i);

		n += tr && strcmp(tft_session_str(s, tr->name, NULL), name) == 0;
	}
	return n;
}

/*
 * One RunMetadata per step of one worker (or a tracing session pickle):
 * the later steps continue the worker's process and tracks. Inputs that
 * overlap in time (ranks all named task:0, the same file twice) do not.
 */
static void test_continued_tracks(void)
{
	for (int threads = 0; threads <= 2; threads += 2) {
		struct enc rms[3] = { small_runmeta(0), small_runmeta(1000000), small_runmeta(2000000) };
		struct enc same[2] = { small_runmeta(0), small_runmeta(0) };
		struct tft_session *s = import_threads(rms, 3, threads);
		struct tft_session *o = import_threads(same, 2, threads);
		struct tft_tftimeline_counts c;
		char *t = NULL;

		if (!ok(s && o, "continued tracks (threads %d): imported", threads))
			goto next;
		is_int(tft_session_process_count(s), 1, "three steps of one worker: one process");
		is_int(tracks_named(s, DEV), 1, "... and one track for its device");
		is_int(tft_session_track(s, 0)->slices, 6, "... holding the three steps' nodes");
		is_int(tft_session_step_count(s), 3, "... three steps");
		t = export(s, true, true, true, &c);
		is_int(c.steps, 3, "tf.timeline: three StepStats from the shared track");
		is_int(c.ops, 6, "tf.timeline: every node once");
		has(t, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":5,\"args\":{\"name\":\"" DEV " Compute\"}}",
		    "tf.timeline: the third step's device gets its own pids");
		has(t, "\"ph\":\"X\",\"cat\":\"Op\",\"name\":\"Neg\",\"pid\":5,\"tid\":1,\"ts\":2000105",
		    "tf.timeline: the third step's node on its pids");
		is_int(tft_session_process_count(o), 2, "the same step twice: two processes");
		is_int(tracks_named(o, DEV), 2, "... each with its track");
next:
		free(t);
		if (s)
			tft_session_close(s);
		if (o)
			tft_session_close(o);
	}
}

/* a and c on the CPU (two lanes), b = Neg(a, c) on the GPU: two arrows, forward in time. */
static struct enc dataflow_runmeta(int64_t t0)
{
	struct enc rm = { 0 }, ss = { 0 }, dev = { 0 }, ex = { 0 };
	static const int64_t dims[1] = { 4 };

	output(&ex, "cpu", 16, 1, dims);
	node(&dev, "a", t0 + 100, 10, "a = Const()", &ex);
	output(&ex, "cpu", 16, 1, dims);
	node(&dev, "c", t0 + 105, 8, "c = Const()", &ex);
	device(&ss, DEV, &dev);
	node(&dev, "b", t0 + 120, 10, "b = Neg(a, c)", NULL);
	device(&ss, "/job:localhost/replica:0/task:0/device:GPU:0", &dev);
	runmeta(&rm, &ss);
	return rm;
}

static void test_reimport_dataflow(void)
{
	struct enc rm = dataflow_runmeta(1500000000000000);

	struct tft_session *s = import(&rm, 1), *s2 = NULL;
	char *a = s ? export(s, true, false, false, NULL) : NULL, *b = NULL, path[512];
	struct tft_writer *w;
	struct tft_source *src = NULL;
	struct tft_tftimeline_counts c = { 0 };

	if (!ok(a != NULL, "re-import dataflow: first export") ||
	    !ok(count_of(a, "\"DataFlow\"") == 4, "the first export has two arrows (s + t each)"))
		goto out;
	snprintf(path, sizeof(path), "%s/s%d.tft", tmpdir, seq++);
	tft_error_clear(&err);
	w = tft_writer_open(path, NULL, &err);
	if (w)
		src = tft_source_open_mem(a, strlen(a), "timeline.json", &err);
	if (!ok(w && src && tft_ingest_chrome_source(w, src, NULL, NULL, &err) == 0 &&
			tft_writer_close(w, &err) == 0,
		"re-import dataflow: the export imports (%s)", err.msg))
		goto out;
	s2 = tft_session_open(path, &err);
	b = s2 ? export(s2, true, false, false, &c) : NULL;
	ok(b && c.flows == 2, "re-export writes the arrows (flows %llu)", (unsigned long long)c.flows);
	if (!ok(b && strcmp(a, b) == 0, "re-export with dataflow: byte-identical to the first export") && b)
		printf("# first:\n%s\n# again:\n%s\n", a, b);
	free(b);
	b = s2 ? export(s2, false, false, false, NULL) : NULL;
	ok(b && count_of(b, "DataFlow") == 0, "without --show-dataflow: no arrows");
out:
	if (src)
		tft_source_close(src);
	free(a);
	free(b);
	if (s)
		tft_session_close(s);
	if (s2)
		tft_session_close(s2);
}

/* One worker's step: device dev, nodes a [t0+100, +10] and b = Neg(a) [t0+120, +10]. */
static struct enc worker_step(const char *dev_name, int64_t t0)
{
	struct enc rm = { 0 }, ss = { 0 }, dev = { 0 }, ex = { 0 };
	static const int64_t dims[1] = { 4 };

	output(&ex, "cpu", 16, 1, dims);
	node(&dev, "a", t0 + 100, 10, "a = Const()", &ex);
	node(&dev, "b", t0 + 120, 10, "b = Neg(a)", NULL);
	device(&ss, dev_name, &dev);
	runmeta(&rm, &ss);
	return rm;
}

#define DEV1 "/job:localhost/replica:0/task:1/device:CPU:0"

/*
 * Two workers, one file per worker and step, the workers' steps at the same
 * time: each worker's later step continues its own process (whatever the
 * other worker did meanwhile), and the tf.timeline export writes each
 * step's nodes in that step.
 */
static void test_workers_per_file(void)
{
	struct enc rms[4] = { worker_step(DEV, 0), worker_step(DEV1, 5), worker_step(DEV, 1000000),
			      worker_step(DEV1, 1000005) };
	struct tft_session *s = import(rms, 4);
	struct tft_tftimeline_counts c;
	char *t;

	if (!ok(s != NULL, "per-worker files: imported"))
		return;
	is_int(tft_session_process_count(s), 2, "per-worker files: a process per worker");
	is_int(tracks_named(s, DEV) + tracks_named(s, DEV1), 2, "... a track per device");
	t = export(s, false, false, true, &c);
	is_int(c.steps, 4, "tf.timeline: four StepStats");
	is_int(c.ops, 8, "tf.timeline: every node once");
	/* steps in session order: w0 s1 (pids 1/2), w1 s1 (3/4), w0 s2 (5/6), w1 s2 (7/8) */
	has(t, "\"name\":\"Const\",\"pid\":3,\"tid\":0,\"ts\":105,", "worker 1's first node in its first step");
	has(t, "\"name\":\"Neg\",\"pid\":5,\"tid\":0,\"ts\":1000120,", "worker 0's second step's node in it");
	is_int(count_of(t, "\"process_name\""), 9, "Allocators + a pair per step: no empty devices");
	free(t);
	tft_session_close(s);
}

/*
 * A worker's two steps share its track; another worker's one long step spans
 * both: each of the first worker's steps is a StepStats of its own (the nodes
 * say which step they came from), not the long step's.
 */
static void test_long_step_across(void)
{
	struct enc rms[3] = { worker_step(DEV, 0), worker_step(DEV, 1000), { 0 } }, ss = { 0 }, dev = { 0 };
	struct tft_session *s;
	struct tft_tftimeline_counts c;
	char *t;

	node(&dev, "long", 50, 5000, "long = Const()", NULL);
	device(&ss, DEV1, &dev);
	runmeta(&rms[2], &ss);
	s = import(rms, 3);
	if (!ok(s != NULL, "long step across: imported"))
		return;
	is_int(tracks_named(s, DEV), 1, "long step across: the worker's steps share its track");
	t = export(s, false, false, true, &c);
	is_int(c.steps, 3, "long step across: three StepStats");
	has(t, "\"name\":\"Const\",\"pid\":1,\"tid\":0,\"ts\":100,", "the first step's node on the first pids");
	has(t, "\"name\":\"Const\",\"pid\":3,\"tid\":0,\"ts\":1100,", "the second step's node on its own pids");
	has(t, "\"name\":\"Const\",\"pid\":5,\"tid\":0,\"ts\":50,", "the long step's node on the third");
	free(t);
	tft_session_close(s);
}

/*
 * A tf.timeline JSON and a RunMetadata step covering part of its time in
 * one session: the export keeps every event (the JSON's tracks are no
 * step's) and every DataFlow arrow.
 */
static void test_mixed_session(void)
{
	struct enc one = dataflow_runmeta(1500000000000000), later = { 0 }, ss = { 0 }, dev = { 0 };
	struct tft_session *s = import(&one, 1), *m = NULL;
	char *a = s ? export(s, true, false, false, NULL) : NULL, path[512];
	struct tft_writer *w = NULL;
	struct tft_source *src = NULL;
	struct tft_tftimeline_counts c = { 0 };
	char *b = NULL;

	/* a step over [100, 112]: the JSON's c [105, 113] lies partly in it */
	node(&dev, "z", 1500000000000100, 12, "z = Const()", NULL);
	device(&ss, DEV1, &dev);
	runmeta(&later, &ss);
	if (!ok(a != NULL, "mixed session: the tf.timeline JSON"))
		goto out;
	snprintf(path, sizeof(path), "%s/s%d.tft", tmpdir, seq++);
	tft_error_clear(&err);
	w = tft_writer_open(path, NULL, &err);
	if (w)
		src = tft_source_open_mem(a, strlen(a), "timeline.json", &err);
	if (!ok(w && src && tft_ingest_chrome_source(w, src, NULL, NULL, &err) == 0 &&
			tft_runmeta_ingest_as(w, "later.pb", later.p, later.len, TFT_PB_FMT_RUNMETA, NULL,
					      &err) == 0 &&
			tft_writer_close(w, &err) == 0,
		"mixed session: imported (%s)", err.msg))
		goto out;
	m = tft_session_open(path, &err);
	b = m ? export(m, true, false, false, &c) : NULL;
	is_int(c.ops, 4, "mixed session: the JSON's three ops (one partly in the step) and the step's node");
	ok(b && count_of(b, "\"DataFlow\"") == 4, "mixed session: the JSON's two arrows");
out:
	free(later.p);
	if (src)
		tft_source_close(src);
	free(a);
	free(b);
	if (s)
		tft_session_close(s);
	if (m)
		tft_session_close(m);
}

/*
 * An allocation_description present with every field at its default: str()
 * of the TensorDescription prints it (proto3 prints a set submessage), so
 * the snapshot does too.
 */
static void test_empty_alloc_desc(void)
{
	struct enc rm = { 0 }, ss = { 0 }, dev = { 0 }, ex = { 0 }, o = { 0 }, td = { 0 }, sh = { 0 }, ad = { 0 };
	struct tft_session *s;
	char *t;

	e_int(&o, 1, 0);
	e_int(&td, 1, 1); /* DT_FLOAT */
	e_msg(&td, 2, &sh); /* shape {} */
	e_msg(&td, 4, &ad); /* allocation_description {} */
	e_msg(&o, 3, &td);
	e_msg(&ex, 7, &o);
	node(&dev, "a", 1600000000000000, 2, "a = Op()", &ex);
	device(&ss, DEV, &dev);
	runmeta(&rm, &ss);
	s = import(&rm, 1);
	if (!ok(s != NULL, "empty allocation_description: imported"))
		return;
	t = export(s, false, true, true, NULL);
	has(t, "\"tensor_description\":\"dtype: DT_FLOAT\\nshape {\\n}\\nallocation_description {\\n}\\n\"",
	    "empty allocation_description: printed as timeline.py's str() does");
	free(t);
	tft_session_close(s);
}

int main(void)
{
	char tmpl[] = "/tmp/tft-tftimeline-XXXXXX";

	if (!mkdtemp(tmpl)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(tmpdir, sizeof(tmpdir), "%s", tmpl);
	test_small();
	test_workers();
	test_steps();
	test_direct();
	test_empty_and_pickle();
	test_real_pbtxt();
	test_gpu_no_label();
	test_repeated_device();
	test_reimport_dataflow();
	test_continued_tracks();
	test_workers_per_file();
	test_empty_alloc_desc();
	test_mixed_session();
	test_long_step_across();
	{
		char cmd[400];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd) != 0)
			printf("# could not remove %s\n", tmpdir);
	}
	return done_testing();
}
