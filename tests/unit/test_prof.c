/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for tftracer prof (analyze/prof*.c, analyze/tf_costs.c,
 * analyze/torch_costs.c, analyze/prof_json.c): the FLOPs rules on shapes
 * worked out by hand, the options, the JSON reader on good and broken text,
 * and a session written with the writer whose every number is known by
 * construction: a PyTorch-like step (modules, ops, a kernel launched
 * through a flow, a derived copy of it, memory events, a backward op on
 * another thread), two steps of different lengths, an event outside them.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/prof.h"
#include "analyze/prof_json.h"
#include "analyze/tf_costs.h"
#include "analyze/torch_costs.h"
#include "store/session.h"
#include "store/writer.h"
#include "tap.h"

/* ---- FLOPs rules --------------------------------------------------------------------- */

static struct tft_shape shp(int n, ...)
{
	struct tft_shape s = { .known = true, .n = n };
	va_list ap;

	va_start(ap, n);
	for (int i = 0; i < n; i++)
		s.d[i] = va_arg(ap, int64_t);
	va_end(ap);
	return s;
}

static int64_t tf(const char *op, const char *attrs, const struct tft_shape *in, int nin, const struct tft_shape *out)
{
	struct pj_doc *d = attrs ? tft_pj_parse(attrs, strlen(attrs)) : NULL;
	int64_t f = tft_tf_flops(op, d ? tft_pj_root(d) : NULL, in, nin, out);

	tft_pj_free(d);
	return f;
}

static void test_tf_costs(void)
{
	struct tft_shape in[3], out;

	/* MatMul [7,5]x[5,3]: k=5, out 21 -> 2*5*21 */
	in[0] = shp(2, (int64_t)7, (int64_t)5);
	in[1] = shp(2, (int64_t)5, (int64_t)3);
	out = shp(2, (int64_t)7, (int64_t)3);
	is_int(tf("MatMul", "{\"transpose_a\":false}", in, 2, &out), 210, "MatMul 2*k*out");
	/* transpose_a: a is [5,7], k = a[0] = 5 */
	in[0] = shp(2, (int64_t)5, (int64_t)7);
	is_int(tf("MatMul", "{\"transpose_a\":true}", in, 2, &out), 210, "MatMul transpose_a takes k from dim 0");
	/* unknown dim: nothing */
	in[0] = shp(2, (int64_t)-1, (int64_t)5);
	is_int(tf("MatMul", NULL, in, 2, &out), -1, "MatMul with an unknown dim: -1");
	/* Conv2D NHWC: input [2,8,8,3], filter [3,3,3,16], output [2,4,4,16]: out*in_depth*kh*kw*2 */
	in[0] = shp(4, (int64_t)2, (int64_t)8, (int64_t)8, (int64_t)3);
	in[1] = shp(4, (int64_t)3, (int64_t)3, (int64_t)3, (int64_t)16);
	out = shp(4, (int64_t)2, (int64_t)4, (int64_t)4, (int64_t)16);
	is_int(tf("Conv2D", "{\"strides\":[1,2,2,1],\"data_format\":\"NHWC\"}", in, 2, &out), 512 * 3 * 3 * 3 * 2,
	       "Conv2D out*depth*kh*kw*2");
	/* Conv2DBackpropInput: out = [2,8,8,3] (the input grad), kernel [3,3,3,16], strides 2x2 */
	in[0] = shp(1, (int64_t)4);
	out = shp(4, (int64_t)2, (int64_t)8, (int64_t)8, (int64_t)3);
	is_int(tf("Conv2DBackpropInput", "{\"strides\":[1,2,2,1],\"data_format\":\"NHWC\"}", in, 2, &out),
	       2 * 384 * 432 / (3 * 4), "Conv2DBackpropInput 2*out*kernel/(depth*strides)");
	/* the same in NCHW: out [2,3,8,8], channels dim 1, strides [1,1,2,2] */
	out = shp(4, (int64_t)2, (int64_t)3, (int64_t)8, (int64_t)8);
	is_int(tf("Conv2DBackpropInput", "{\"strides\":[1,1,2,2],\"data_format\":\"NCHW\"}", in, 2, &out),
	       2 * 384 * 432 / (3 * 4), "Conv2DBackpropInput NCHW");
	/* Conv2DBackpropFilter: image [2,8,8,3], out = kernel [3,3,3,16] */
	in[0] = shp(4, (int64_t)2, (int64_t)8, (int64_t)8, (int64_t)3);
	out = shp(4, (int64_t)3, (int64_t)3, (int64_t)3, (int64_t)16);
	is_int(tf("Conv2DBackpropFilter", "{\"strides\":[1,2,2,1]}", in, 2, &out), 2 * 384 * 432 / (3 * 4),
	       "Conv2DBackpropFilter");
	/* BiasAdd: input elements */
	in[0] = shp(2, (int64_t)7, (int64_t)3);
	is_int(tf("BiasAdd", NULL, in, 2, &out), 21, "BiasAdd = input elements");
	/* Add: output elements; SquaredDifference 2 per element; Rsqrt 2 per input element */
	out = shp(3, (int64_t)2, (int64_t)3, (int64_t)4);
	is_int(tf("Add", NULL, in, 2, &out), 24, "Add = output elements");
	is_int(tf("SquaredDifference", NULL, in, 2, &out), 48, "SquaredDifference 2 per element");
	is_int(tf("Rsqrt", NULL, in, 1, &out), 42, "Rsqrt 2 per input element");
	is_int(tf("L2Loss", NULL, in, 1, &out), 62, "L2Loss 3n-1");
	/* Mean [2,3,4] -> [2]: in + out*(1-1); Sum: in - out */
	in[0] = shp(3, (int64_t)2, (int64_t)3, (int64_t)4);
	out = shp(1, (int64_t)2);
	is_int(tf("Mean", NULL, in, 2, &out), 24, "Mean");
	is_int(tf("Sum", NULL, in, 2, &out), 22, "Sum");
	/* AddN of 3 inputs [2,3]: 6*2 */
	in[0] = in[1] = in[2] = shp(2, (int64_t)2, (int64_t)3);
	is_int(tf("AddN", NULL, in, 3, &out), 12, "AddN numel*(n-1)");
	/* MaxPool ksize [1,2,2,1], out [1,4,4,8] */
	out = shp(4, (int64_t)1, (int64_t)4, (int64_t)4, (int64_t)8);
	is_int(tf("MaxPool", "{\"ksize\":[1,2,2,1]}", in, 1, &out), 4 * 128, "MaxPool ksize*out");
	/* MaxPoolGrad: kernel*orig_out + orig_out (input 1) */
	in[1] = shp(4, (int64_t)1, (int64_t)4, (int64_t)4, (int64_t)8);
	is_int(tf("MaxPoolGrad", "{\"ksize\":[1,2,2,1]}", in, 3, &out), 4 * 128 + 128, "MaxPoolGrad");
	is_int(tf("AvgPoolGrad", "{\"ksize\":[1,2,2,1]}", in, 2, &out), 4 * 128 * 2, "AvgPoolGrad");
	/* BatchMatMulV2 [4,2,5]x[4,5,3] -> [4,2,3]: 2*5*24 */
	in[0] = shp(3, (int64_t)4, (int64_t)2, (int64_t)5);
	out = shp(3, (int64_t)4, (int64_t)2, (int64_t)3);
	is_int(tf("BatchMatMulV2", NULL, in, 2, &out), 240, "BatchMatMulV2");
	is_int(tf("Relu", NULL, in, 1, &out), -1, "Relu has no rule: -1");
	ok(tft_tf_is_variable("VariableV2") && tft_tf_is_variable("VarHandleOp") && !tft_tf_is_variable("Const"),
	   "variable ops");
}

static int64_t torch(const char *name, const char *dims, const char *concrete)
{
	struct pj_doc *d = tft_pj_parse(dims, strlen(dims)), *c = concrete ? tft_pj_parse(concrete, strlen(concrete)) : NULL;
	int64_t f = tft_torch_flops(name, d ? tft_pj_root(d) : NULL, c ? tft_pj_root(c) : NULL);

	tft_pj_free(d);
	tft_pj_free(c);
	return f;
}

static void test_torch_costs(void)
{
	is_int(torch("aten::mm", "[[5,6],[6,7]]", NULL), 2 * 5 * 6 * 7, "mm 2nmp");
	is_int(torch("aten::addmm", "[[5,7],[5,6],[6,7],[],[]]", NULL), 420, "addmm from inputs 1, 2");
	is_int(torch("aten::bmm", "[[3,5,6],[3,6,7]]", NULL), 1260, "bmm 2bnmp");
	is_int(torch("aten::baddbmm", "[[3,5,7],[3,5,6],[3,6,7],[],[]]", NULL), 1260, "baddbmm");
	is_int(torch("aten::mul", "[[6],[5,6]]", NULL), 6, "mul: the first input's elements");
	is_int(torch("aten::add", "[[5,6],[],[]]", NULL), 30, "add");
	/* conv2d [2,4,9,9] * [6,2,3,3], stride 2, padding 1, dilation 2, groups 2: out 4x4 */
	is_int(torch("aten::conv2d", "[[2,4,9,9],[6,2,3,3],[],[],[],[],[]]",
		     "[\"\",\"\",\"\",\"[2, 2]\",\"[1, 1]\",\"[2, 2]\",\"2\"]"), 6912, "conv2d with concrete inputs");
	is_int(torch("aten::conv2d", "[[2,4,9,9],[6,2,3,3],[],[],[],[],[]]", NULL), -1,
	       "conv2d without strides: -1");
	is_int(torch("aten::relu", "[[5,6]]", NULL), -1, "relu: not counted");
	is_int(tft_torch_dtype_size("c10::BFloat16"), 2, "bf16 size");
}

/* ---- the JSON reader ------------------------------------------------------------------------- */

static void test_json(void)
{
	const char *good = "{\"a\":[1,-2,3.5,\"x\\u00e9\\n\"],\"b\":{\"c\":null,\"d\":true},\"e\":[]}";
	struct pj_doc *d = tft_pj_parse(good, strlen(good));
	int64_t dims[4];

	ok(d != NULL, "parses a document");
	if (d) {
		const struct pj *a = tft_pj_get(tft_pj_root(d), "a");
		ok(a && a->n == 4 && tft_pj_int(tft_pj_at(a, 1), 0) == -2 && tft_pj_at(a, 2)->d == 3.5, "array members");
		ok(tft_pj_at(a, 3) && strcmp(tft_pj_at(a, 3)->s, "x\xc3\xa9\n") == 0, "string escapes decoded");
		ok(tft_pj_get(tft_pj_get(tft_pj_root(d), "b"), "d")->type == PJ_TRUE, "nested object");
		ok(tft_pj_dims(tft_pj_get(tft_pj_root(d), "e"), dims, 4) == 0, "empty shape");
		ok(tft_pj_dims(a, dims, 4) == -1, "not a shape");
	}
	tft_pj_free(d);
	static const char *const bad[] = { "", "{", "[1,", "{\"a\" 1}", "[1 2]", "\"\\q\"", "tru", "[1]x",
					   "{\"a\":\"\x01\"}", "-", "[\"\\ud800\"" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		d = tft_pj_parse(bad[i], strlen(bad[i]));
		ok(d == NULL, "refuses %zu-byte bad text", strlen(bad[i]));
		tft_pj_free(d);
	}
	/* nesting past the cap is refused, not recursed into */
	char deep[300];
	memset(deep, '[', sizeof(deep));
	d = tft_pj_parse(deep, sizeof(deep));
	ok(d == NULL, "refuses 300 levels");
	tft_pj_free(d);
	/* random bytes never crash (ASan watches) */
	unsigned seed = 7;
	int parsed = 0;
	for (int i = 0; i < 2000; i++) {
		char buf[64];
		size_t n = (size_t)(rand_r(&seed) % 64);
		for (size_t k = 0; k < n; k++)
			buf[k] = "[]{}\",:0123456789.-eE\\ntrufals x"[rand_r(&seed) % 33];
		d = tft_pj_parse(buf, n);
		parsed += d != NULL;
		tft_pj_free(d);
	}
	ok(parsed >= 0, "2000 random texts parsed or refused (%d parsed)", parsed);
}

/* ---- options ---------------------------------------------------------------------------------- */

static void test_options(void)
{
	struct tft_prof_opts o;
	struct tft_error err;
	char buf[2048];

	tft_prof_opts_init(&o);
	ok(o.max_depth == 10 && o.step == -1 && o.order_by == TFT_PROF_ORDER_NAME &&
	   o.select == TFT_PROF_SEL_METRIC(TFT_PROF_MICROS) && o.account_type.all && o.show_name.all &&
	   o.trim_name.n == 0 && !o.account_displayed_op_only && o.output == TFT_PROF_OUT_STDOUT,
	   "tfprof's command-line defaults");
	tft_error_clear(&err);
	ok(tft_prof_opts_set(&o, "-max_depth", "4", &err) == 0 && o.max_depth == 4, "-max_depth");
	ok(tft_prof_opts_set(&o, "--max-depth", "5", &err) == 0 && o.max_depth == 5, "--max-depth (GNU spelling)");
	ok(tft_prof_opts_set(&o, "select", "'params,float_ops,device'", &err) == 0 &&
	   o.select == (TFT_PROF_SEL_METRIC(TFT_PROF_PARAMS) | TFT_PROF_SEL_METRIC(TFT_PROF_FLOAT_OPS) |
			TFT_PROF_SEL_DEVICE), "-select with quotes");
	ok(tft_prof_opts_set(&o, "-order_by", "micros", &err) == 0 && o.order_by == TFT_PROF_ORDER_MICROS,
	   "-order_by micros");
	ok(tft_prof_opts_set(&o, "-step", "-1", &err) == 0 && o.step == -1, "-step -1");
	ok(tft_prof_opts_set(&o, "-account_displayed_op_only", NULL, &err) == 0 && o.account_displayed_op_only,
	   "-account_displayed_op_only alone means true");
	ok(tft_prof_opts_set(&o, "-account_displayed_op_only", "false", &err) == 0 && !o.account_displayed_op_only,
	   "-account_displayed_op_only false");
	ok(tft_prof_opts_set(&o, "-hide_name_regexes", "a.*,b[0-9]+", &err) == 0 && o.hide_name.n == 2,
	   "regex list");
	ok(tft_prof_opts_set(&o, "-output", "pprof:outfile=/tmp/x.pb.gz", &err) == 0 &&
	   o.output == TFT_PROF_OUT_PPROF && strcmp(o.outfile, "/tmp/x.pb.gz") == 0, "-output pprof:outfile=F");
	static const char *const bad[][2] = {
		{ "-max_depth", "x" }, { "-min_micros", "-5" }, { "-step", "-2" }, { "-select", "micros,speed" },
		{ "-order_by", "size" }, { "-show_name_regexes", "a(b" }, { "-output", "file" },
		{ "-output", "png:outfile=x" }, { "-output", "file:where=x" }, { "-nosuch", "1" },
		{ "-account_displayed_op_only", "maybe" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		tft_error_clear(&err);
		ok(tft_prof_opts_set(&o, bad[i][0], bad[i][1], &err) == TFT_EINVAL && err.msg[0] &&
		   !strchr(err.msg, '\n'), "refused: %s %s (%s)", bad[i][0], bad[i][1], err.msg);
	}
	ok(o.max_depth == 5 && o.show_name.all, "a refused value leaves the option as it was");
	ok(tft_prof_opt_takes_value("-select") == 1 && tft_prof_opt_takes_value("--account-displayed-op-only") == 0 &&
	   tft_prof_opt_takes_value("-x") == -1, "takes_value");
	tft_prof_opts_format(&o, buf, sizeof(buf));
	ok(strstr(buf, "-max_depth                  5\n") && strstr(buf, "-select                     float_ops,params,device\n") == NULL &&
	   strstr(buf, "-output                     pprof:outfile=/tmp/x.pb.gz\n"), "the set listing");
	struct tft_prof_opts c;
	ok(tft_prof_opts_copy(&c, &o) == 0 && c.hide_name.n == 2 && c.outfile != o.outfile &&
	   strcmp(c.outfile, o.outfile) == 0, "copy");
	tft_prof_opts_fini(&c);
	tft_prof_opts_fini(&o);
}

/* ---- a session with known numbers ------------------------------------------------------------- */

static char path[256];
static struct tft_writer *W;

struct argspec {
	const char *key;
	int type;
	int64_t i;
	const char *s;
};

static void ev(uint32_t track, const char *name, const char *cat, int64_t ts_us, int64_t dur_us,
	       const struct argspec *args, int nargs)
{
	struct tft_arg a[8];
	struct tft_event e = { .ts_ns = ts_us * 1000, .dur_ns = dur_us * 1000, .track = track,
			       .name = tft_writer_intern_cstr(W, name), .cat = tft_writer_intern_cstr(W, cat),
			       .count = 1, .kind = dur_us < 0 ? TFT_EV_INSTANT : TFT_EV_SLICE };

	if (dur_us < 0)
		e.dur_ns = 0;
	for (int i = 0; i < nargs; i++) {
		a[i].key = tft_writer_intern_cstr(W, args[i].key);
		a[i].type = (uint32_t)args[i].type;
		if (args[i].type == TFT_ARG_STR || args[i].type == TFT_ARG_JSON)
			a[i].v.str = tft_writer_intern_cstr(W, args[i].s);
		else
			a[i].v.i = args[i].i;
	}
	e.args = a;
	e.nargs = (uint16_t)nargs;
	if (tft_writer_append(W, &e))
		printf("# append %s at %lld failed\n", name, (long long)ts_us);
}

static uint32_t track(uint32_t proc, int kind, uint32_t flags, const char *name, int64_t tid)
{
	struct tft_track t = { .process = proc, .kind = (uint32_t)kind, .tid = tid, .flags = flags };

	t.name = tft_writer_intern_cstr(W, name);
	return tft_writer_add_track(W, &t);
}

static const int64_t L[2] = { 200, 300 }, A[2] = { 100, 150 }, K[2] = { 50, 70 };

/* bwd_first: the backward thread's track first (its first event as early as the main thread's) */
static struct tft_session *build(bool bwd_first)
{
	struct tft_error err;
	struct tft_process p = { .pid = 1, .rank = -1 };
	uint32_t p0, p1, tmain, tbwd, tgpu, tann;

	snprintf(path, sizeof(path), "/tmp/tft_test_prof_%ld.tft", (long)getpid());
	unlink(path);
	tft_error_clear(&err);
	W = tft_writer_open(path, NULL, &err);
	if (!W)
		return NULL;
	p.name = tft_writer_intern_cstr(W, "python");
	p0 = tft_writer_add_process(W, &p);
	p.name = tft_writer_intern_cstr(W, "GPU 0 (Test GPU)");
	p.pid = 2;
	p1 = tft_writer_add_process(W, &p);
	if (bwd_first) {
		tbwd = track(p0, TFT_TRACK_THREAD, 0, "autograd", 2);
		tmain = track(p0, TFT_TRACK_THREAD, 0, "main", 1);
		ev(tbwd, "aten::empty", "cpu_op", 0, 1, NULL, 0);
	} else {
		tmain = track(p0, TFT_TRACK_THREAD, 0, "main", 1);
		tbwd = track(p0, TFT_TRACK_THREAD, 0, "autograd", 2);
	}
	tgpu = track(p1, TFT_TRACK_GPU_STREAM, TFT_TRACKF_CONCURRENT, "stream 7", 7);
	tann = track(p1, TFT_TRACK_GPU_STREAM, TFT_TRACKF_CONCURRENT | TFT_TRACKF_DERIVED, "annotations", 8);
	for (int k = 0; k < 2; k++) {
		int64_t b = k * 1000 + (bwd_first ? 5 : 0);
		char step[32], seq_dims[8];
		struct argspec lin[] = { { "Sequence number", TFT_ARG_INT, 100 + k, NULL },
					 { "Input Dims", TFT_ARG_JSON, 0, "[[2,3],[4,3],[4]]" } };
		struct argspec mm[] = { { "Sequence number", TFT_ARG_INT, 100 + k, NULL },
					{ "flops", TFT_ARG_INT, 1000 * (k + 1), NULL },
					{ "Input Dims", TFT_ARG_JSON, 0, "[[4],[2,3],[3,4],[],[]]" } };
		struct argspec alloc[] = { { "Bytes", TFT_ARG_INT, 100, NULL } };
		struct argspec freed[] = { { "Bytes", TFT_ARG_INT, -40, NULL } };
		struct argspec bwd[] = { { "Sequence number", TFT_ARG_INT, 100 + k, NULL },
					 { "Fwd thread id", TFT_ARG_INT, 1, NULL } };
		struct argspec bmm[] = { { "Input Dims", TFT_ARG_JSON, 0, "[[2,4],[4,3]]" } };
		(void)seq_dims;
		snprintf(step, sizeof(step), "ProfilerStep#%d", k + 1);
		ev(tmain, step, "user_annotation", b, 990, NULL, 0);
		ev(tmain, "train.py(10): main", "python_function", b + 5, 645, NULL, 0);
		ev(tmain, "nn.Module: model", "python_module", b + 10, 590, NULL, 0);
		ev(tmain, "nn.Module: fc", "python_module", b + 20, 480, NULL, 0);
		ev(tmain, "aten::linear", "cpu_op", b + 30, L[k], lin, 2);
		ev(tmain, "aten::addmm", "cpu_op", b + 40, A[k], mm, 3);
		ev(tmain, "[memory]", "cpu_instant_event", b + 45, -1, alloc, 1);
		ev(tmain, "cudaLaunchKernel", "cuda_runtime", b + 50, 10, NULL, 0);
		ev(tmain, "[memory]", "cpu_instant_event", b + 70, -1, freed, 1);
		ev(tmain, "aten::relu", "cpu_op", b + 520, 20, NULL, 0);
		ev(tmain, "aten::item", "cpu_op", b + 700, 10, NULL, 0);
		ev(tbwd, "autograd::engine::evaluate_function: AddmmBackward0", "cpu_op", b + 800, 50, bwd, 2);
		ev(tbwd, "aten::mm", "cpu_op", b + 810, 20, bmm, 1);
		ev(tgpu, "gemm", "kernel", b + 65, K[k], NULL, 0);
		ev(tgpu, "memset_kernel", "kernel", b + 900, 10, NULL, 0);
		ev(tann, "gemm", "gpu_user_annotation", b + 65, K[k], NULL, 0);
		struct tft_flow f = { .flow_id = (uint64_t)k + 1, .name = tft_writer_intern_cstr(W, "ac2g"),
				      .cat = tft_writer_intern_cstr(W, "ac2g"), .src_track = tmain,
				      .src_ts_ns = (b + 50) * 1000, .dst_track = tgpu, .dst_ts_ns = (b + 65) * 1000 };
		tft_writer_add_flow(W, &f);
		struct tft_step st = { .index = k + 1, .name = tft_writer_intern_cstr(W, step), .process = p0,
				       .start_ns = b * 1000, .dur_ns = 990000, .traced = true };
		tft_writer_add_step(W, &st);
	}
	ev(tmain, "aten::outside", "cpu_op", 2100, 10, NULL, 0);
	tft_writer_set_meta(W, "model_params",
			    "{\"framework\":\"pytorch\",\"models\":[{\"name\":\"model\",\"class\":\"Net\",\"modules\":["
			    "{\"path\":\"\",\"class\":\"Net\",\"params\":0,\"buffers\":0},"
			    "{\"path\":\"fc\",\"class\":\"Linear\",\"params\":15,\"parameters\":["
			    "{\"name\":\"weight\",\"shape\":[4,3],\"dtype\":\"float32\",\"numel\":12,\"trainable\":true},"
			    "{\"name\":\"bias\",\"shape\":[4],\"dtype\":\"float32\",\"numel\":4,\"trainable\":false}]}],"
			    "\"total_params\":16,\"trainable_params\":12}]}");
	if (tft_writer_close(W, &err))
		return NULL;
	return tft_session_open(path, &err);
}

static const struct tft_prof_node *find(const struct tft_prof_result *r, const char *name)
{
	for (uint32_t i = 0; i < r->nnodes; i++)
		if (strcmp(r->nodes[i].name, name) == 0)
			return &r->nodes[i];
	return NULL;
}

static bool near(double a, double b)
{
	return fabs(a - b) < 1e-6;
}

static struct tft_prof_result *view(struct tft_prof *p, int v, const char *const *opts)
{
	struct tft_prof_opts o;
	struct tft_prof_result *r = NULL;
	struct tft_error err;

	tft_prof_opts_init(&o);
	tft_error_clear(&err);
	o.max_depth = 100;
	for (int i = 0; opts && opts[i]; i += 2)
		if (tft_prof_opts_set(&o, opts[i], opts[i + 1], &err))
			printf("# option %s: %s\n", opts[i], err.msg);
	if (tft_prof_view(p, v, &o, &r, &err))
		printf("# view: %s\n", err.msg);
	tft_prof_opts_fini(&o); /* (the result's opts pointer is not used here) */
	return r;
}

/*
 * The backward thread scanned before the forward one: its ops wait in a
 * placeholder context until the scan knows every forward op.
 */
static void test_backward_first(void)
{
	struct tft_session *s = build(true);
	struct tft_prof_result *r;
	struct tft_error err;
	struct tft_prof *p;
	const struct tft_prof_node *n;

	tft_error_clear(&err);
	p = s ? tft_prof_open(s, 2, 1, &err) : NULL;
	ok(p != NULL, "profile of the backward-first session");
	if (p) {
		r = view(p, TFT_PROF_SCOPE, (const char *const[]){ "-select", "cpu_micros,float_ops", NULL });
		n = r ? find(r, "model/fc/autograd::engine::evaluate_function: AddmmBackward0") : NULL;
		ok(n && near(n->self[TFT_PROF_CPU_MICROS], 30) && near(n->total[TFT_PROF_CPU_MICROS], 50) &&
		   near(n->total[TFT_PROF_FLOAT_OPS], 48) &&
		   find(r, "model/fc/autograd::engine::evaluate_function: AddmmBackward0/aten::mm") &&
		   !find(r, "autograd::engine::evaluate_function: AddmmBackward0"),
		   "backward first: the op and its child still in model/fc (self %g total %g)",
		   n ? n->self[TFT_PROF_CPU_MICROS] : -1, n ? n->total[TFT_PROF_CPU_MICROS] : -1);
		bool no_placeholder = r != NULL;
		for (uint32_t i = 0; r && i < r->nnodes; i++)
			no_placeholder &= strstr(r->nodes[i].name, "#seq") == NULL;
		ok(no_placeholder, "no placeholder context is shown");
		tft_prof_result_free(r);
		tft_prof_close(p);
	}
	if (s)
		tft_session_close(s);
	if (!getenv("TFT_KEEP"))
		unlink(path);
}

static void test_session(void)
{
	struct tft_session *s = build(false);
	struct tft_error err;
	struct tft_prof *p;
	struct tft_prof_info in;
	const struct tft_prof_node *n;
	struct tft_prof_result *r;

	ok(s != NULL, "session written");
	if (!s)
		return;
	for (int k = 0; k < 2; k++) {
		tft_error_clear(&err);
		p = tft_prof_open(s, k + 1, k == 0 ? 1 : 2, &err);
		ok(p != NULL, "profile of step %d (%d threads)", k + 1, k + 1);
		if (!p)
			continue;
		tft_prof_get_info(p, &in);
		ok(in.nsteps == 1 && in.traced_steps == 2 && in.derived_tracks == 1 && in.kernels_linked == 2 &&
		   in.kernels_unlinked == 2, "step %d: steps %u/%u, derived %u, kernels %llu linked, %llu unlinked",
		   k + 1, in.nsteps, in.traced_steps, in.derived_tracks, (unsigned long long)in.kernels_linked,
		   (unsigned long long)in.kernels_unlinked);
		r = view(p, TFT_PROF_SCOPE, (const char *const[]){ "-select", "micros,accelerator_micros,cpu_micros,bytes,peak_bytes,residual_bytes,float_ops,occurrence,params", NULL });
		n = r ? find(r, "model/fc/aten::linear/aten::addmm") : NULL;
		ok(n && near(n->self[TFT_PROF_CPU_MICROS], (double)(A[k] - 10)) &&
		   near(n->self[TFT_PROF_ACCEL_MICROS], (double)K[k]) && near(n->self[TFT_PROF_OCCURRENCE], 1) &&
		   near(n->self[TFT_PROF_FLOAT_OPS], 1000.0 * (k + 1)) && near(n->self[TFT_PROF_BYTES], 100) &&
		   near(n->self[TFT_PROF_PEAK_BYTES], 100) && near(n->self[TFT_PROF_RESIDUAL_BYTES], 60),
		   "step %d: addmm self: cpu %g (want %lld), accelerator %g (its kernel by the flow), flops %g, "
		   "memory %g/%g/%g", k + 1, n ? n->self[TFT_PROF_CPU_MICROS] : -1, (long long)(A[k] - 10),
		   n ? n->self[TFT_PROF_ACCEL_MICROS] : -1, n ? n->self[TFT_PROF_FLOAT_OPS] : -1,
		   n ? n->self[TFT_PROF_BYTES] : -1, n ? n->self[TFT_PROF_PEAK_BYTES] : -1,
		   n ? n->self[TFT_PROF_RESIDUAL_BYTES] : -1);
		n = r ? find(r, "model/fc/aten::linear") : NULL;
		ok(n && near(n->self[TFT_PROF_CPU_MICROS], (double)(L[k] - A[k])) &&
		   near(n->total[TFT_PROF_CPU_MICROS], (double)L[k]) && near(n->total[TFT_PROF_ACCEL_MICROS], (double)K[k]),
		   "step %d: linear self %g total %g", k + 1, n ? n->self[TFT_PROF_CPU_MICROS] : -1,
		   n ? n->total[TFT_PROF_CPU_MICROS] : -1);
		/* the backward op in its forward op's module; its aten::mm flops by the rule 2*2*4*3 */
		n = r ? find(r, "model/fc/autograd::engine::evaluate_function: AddmmBackward0") : NULL;
		ok(n && near(n->self[TFT_PROF_CPU_MICROS], 30) && near(n->total[TFT_PROF_CPU_MICROS], 50) &&
		   near(n->total[TFT_PROF_FLOAT_OPS], 48), "step %d: backward op in model/fc: self %g total %g flops %g",
		   k + 1, n ? n->self[TFT_PROF_CPU_MICROS] : -1, n ? n->total[TFT_PROF_CPU_MICROS] : -1,
		   n ? n->total[TFT_PROF_FLOAT_OPS] : -1);
		n = r ? find(r, "model/fc") : NULL;
		ok(n && near(n->total[TFT_PROF_CPU_MICROS], (double)L[k] + 50) &&
		   near(n->total[TFT_PROF_ACCEL_MICROS], (double)K[k]) && near(n->total[TFT_PROF_PARAMS], 16) &&
		   !n->accounted == false, "step %d: model/fc total cpu %g accelerator %g params %g", k + 1,
		   n ? n->total[TFT_PROF_CPU_MICROS] : -1, n ? n->total[TFT_PROF_ACCEL_MICROS] : -1,
		   n ? n->total[TFT_PROF_PARAMS] : -1);
		n = r ? find(r, "model/fc/weight") : NULL;
		ok(n && near(n->self[TFT_PROF_PARAMS], 12) && n->shape && strcmp(n->shape, "4x3") == 0,
		   "the weight's parameters and shape from model_params");
		n = r ? &r->nodes[0] : NULL;
		ok(n && strcmp(n->name, "_TFProfRoot") == 0 && !n->accounted &&
		   near(n->total[TFT_PROF_CPU_MICROS], (double)L[k] + 50 + 20 + 10) &&
		   near(n->total[TFT_PROF_ACCEL_MICROS], (double)K[k] + 10) &&
		   near(n->total[TFT_PROF_MICROS], (double)L[k] + 80 + K[k] + 10) && near(n->total[TFT_PROF_PARAMS], 16),
		   "step %d: root total cpu %g (the derived copy and the other step left out), accelerator %g", k + 1,
		   n ? n->total[TFT_PROF_CPU_MICROS] : -1, n ? n->total[TFT_PROF_ACCEL_MICROS] : -1);
		tft_prof_result_free(r);
		/* the op view: self = exclusive, total = inclusive */
		r = view(p, TFT_PROF_OP, (const char *const[]){ "-select", "cpu_micros,accelerator_micros,occurrence", NULL });
		n = r ? find(r, "aten::linear") : NULL;
		ok(n && near(n->self[TFT_PROF_CPU_MICROS], (double)(L[k] - A[k])) &&
		   near(n->total[TFT_PROF_CPU_MICROS], (double)L[k]) && near(n->total[TFT_PROF_ACCEL_MICROS], (double)K[k]),
		   "op view: aten::linear self %g total %g", n ? n->self[TFT_PROF_CPU_MICROS] : -1,
		   n ? n->total[TFT_PROF_CPU_MICROS] : -1);
		n = r ? find(r, "memset_kernel") : NULL;
		ok(n && near(n->self[TFT_PROF_ACCEL_MICROS], 10), "op view: a kernel no op launched is its own type");
		ok(r && find(r, "gemm") == NULL, "op view: a launched kernel counts in its op, not as a type");
		ok(r && find(r, "nn.Module: fc") == NULL && find(r, "fc") == NULL && find(r, "ProfilerStep#1") == NULL &&
		   find(r, "train.py(10): main") == NULL, "op view: scopes, steps and code frames are no op types");
		tft_prof_result_free(r);
		/* code view: the ops under train.py:10:main (not aten::item, not the backward thread) */
		r = view(p, TFT_PROF_CODE, (const char *const[]){ "-select", "cpu_micros,accelerator_micros", NULL });
		n = r ? find(r, "train.py:10:main") : NULL;
		ok(n && near(n->total[TFT_PROF_CPU_MICROS], (double)L[k] + 20) &&
		   near(n->total[TFT_PROF_ACCEL_MICROS], (double)K[k]), "code view: train.py:10:main total cpu %g",
		   n ? n->total[TFT_PROF_CPU_MICROS] : -1);
		tft_prof_result_free(r);
		/* -account_type_regexes: only aten::addmm counts */
		r = view(p, TFT_PROF_SCOPE, (const char *const[]){ "-account_type_regexes", "aten::addmm", NULL });
		ok(r && near(r->nodes[0].total[TFT_PROF_CPU_MICROS], (double)(A[k] - 10)) && find(r, "aten::item") == NULL,
		   "-account_type_regexes aten::addmm: root total %g", r ? r->nodes[0].total[TFT_PROF_CPU_MICROS] : -1);
		tft_prof_result_free(r);
		/* -account_type_regexes _trainable_variables: the weight, not the frozen bias */
		r = view(p, TFT_PROF_SCOPE, (const char *const[]){ "-account_type_regexes", "_trainable_variables",
								   "-select", "params", NULL });
		ok(r && near(r->nodes[0].total[TFT_PROF_PARAMS], 12), "_trainable_variables: %g params",
		   r ? r->nodes[0].total[TFT_PROF_PARAMS] : -1);
		tft_prof_result_free(r);
		tft_prof_close(p);
	}
	/* -step -1: the average of the two steps */
	tft_error_clear(&err);
	p = tft_prof_open(s, -1, 0, &err);
	ok(p != NULL, "profile of every step");
	if (p) {
		tft_prof_get_info(p, &in);
		ok(in.nsteps == 2 && in.outside_steps == 1, "two steps averaged, one execution outside them (%llu)",
		   (unsigned long long)in.outside_steps);
		r = view(p, TFT_PROF_SCOPE, (const char *const[]){ "-select", "cpu_micros,float_ops,params", NULL });
		n = r ? find(r, "model/fc/aten::linear/aten::addmm") : NULL;
		ok(n && near(n->self[TFT_PROF_CPU_MICROS], (90.0 + 140.0) / 2) && near(n->self[TFT_PROF_FLOAT_OPS], 1500),
		   "average: addmm cpu %g flops %g", n ? n->self[TFT_PROF_CPU_MICROS] : -1,
		   n ? n->self[TFT_PROF_FLOAT_OPS] : -1);
		ok(r && near(r->nodes[0].total[TFT_PROF_PARAMS], 16), "parameters are not averaged");
		ok(r && find(r, "aten::outside") == NULL, "the event outside the steps is not a node");
		tft_prof_result_free(r);
		/* display options: depth, thresholds, name regexes */
		r = view(p, TFT_PROF_SCOPE, (const char *const[]){ "-max_depth", "2", NULL });
		bool depth_ok = r != NULL;
		for (uint32_t i = 0; r && i < r->nnodes; i++)
			depth_ok &= r->nodes[i].depth <= 1;
		ok(depth_ok && find(r, "model") && !find(r, "model/fc"), "-max_depth 2: the root and one level");
		tft_prof_result_free(r);
		r = view(p, TFT_PROF_SCOPE, (const char *const[]){ "-min_micros", "100", NULL });
		bool min_ok = r != NULL;
		for (uint32_t i = 1; r && i < r->nnodes; i++)
			min_ok &= r->nodes[i].total[TFT_PROF_MICROS] >= 100;
		ok(min_ok && find(r, "model/fc/aten::linear") && !find(r, "aten::item"), "-min_micros 100");
		tft_prof_result_free(r);
		r = view(p, TFT_PROF_SCOPE, (const char *const[]){ "-hide_name_regexes", "model/fc", NULL });
		n = r ? find(r, "model") : NULL;
		ok(n && !find(r, "model/fc") && find(r, "model/fc/aten::linear") &&
		   r->nodes[n->first_child].depth == 2, "-hide_name_regexes: a hidden node's children take its place");
		tft_prof_result_free(r);
		r = view(p, TFT_PROF_SCOPE, (const char *const[]){ "-trim_name_regexes", "model/fc", NULL });
		ok(r && find(r, "model/fc") && !find(r, "model/fc/aten::linear"), "-trim_name_regexes");
		tft_prof_result_free(r);
		r = view(p, TFT_PROF_SCOPE, (const char *const[]){ "-start_name_regexes", "model/fc/aten::linear", NULL });
		ok(r && r->nodes[0].nchildren == 1 && strcmp(r->nodes[1].name, "model/fc/aten::linear") == 0,
		   "-start_name_regexes");
		tft_prof_result_free(r);
		r = view(p, TFT_PROF_SCOPE, (const char *const[]){ "-show_name_regexes", ".*addmm", "-account_displayed_op_only", "true", NULL });
		ok(r && r->nnodes == 2 && near(r->nodes[1].total[TFT_PROF_CPU_MICROS], 115),
		   "-show_name_regexes with -account_displayed_op_only");
		tft_prof_result_free(r);
		r = view(p, TFT_PROF_OP, (const char *const[]){ "-order_by", "cpu_micros", "-select", "cpu_micros", NULL });
		bool sorted = r != NULL;
		for (uint32_t i = 2; r && i < r->nnodes; i++)
			sorted &= r->nodes[i - 1].self[TFT_PROF_CPU_MICROS] >= r->nodes[i].self[TFT_PROF_CPU_MICROS];
		ok(sorted, "op view -order_by cpu_micros");
		tft_prof_result_free(r);
		tft_prof_close(p);
	}
	tft_error_clear(&err);
	p = tft_prof_open(s, 7, 1, &err);
	ok(!p && err.code == TFT_ENOTFOUND && strstr(err.msg, "-step 7"), "-step 7: %s", err.msg);
	tft_prof_close(p);
	tft_session_close(s);
	if (!getenv("TFT_KEEP")) unlink(path);
}

/* the datasheet peaks by device name: the most specific entry wins, an unknown device has none */
static void test_device_peak(void)
{
	double f = 0, b = 0;

	ok(tft_prof_device_peak("GPU 0 (NVIDIA H100 80GB HBM3)", true, &f, &b) && f == 989.4e12 && b == 3.35e12,
	   "H100 SXM bf16");
	ok(tft_prof_device_peak("NVIDIA H100 PCIe", false, &f, &b) && f == 51.2e12 && b == 2.0e12, "H100 PCIe fp32");
	ok(tft_prof_device_peak("Tesla V100-SXM2-32GB", false, &f, &b) && f == 15.7e12 && b == 0.9e12, "V100 SXM2");
	ok(tft_prof_device_peak("AMD Instinct MI300X VF", true, &f, &b) && f == 1307.4e12 && b == 5.3e12, "MI300X");
	ok(!tft_prof_device_peak("/job:localhost/replica:0/task:0/device:GPU:0", false, &f, &b) &&
	   !tft_prof_device_peak("cpu", false, &f, &b) && !tft_prof_device_peak(NULL, false, &f, &b),
	   "no peak for a device without a known model");
}

int main(void)
{
	test_device_peak();
	test_tf_costs();
	test_torch_costs();
	test_json();
	test_options();
	test_session();
	test_backward_first();
	return done_testing();
}
