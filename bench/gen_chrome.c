/* SPDX-License-Identifier: MIT */
/*
 * Benchmark input generator: writes a synthetic Kineto-style Chrome trace of
 * about SIZE_MB megabytes (training steps of nested cpu_op slices on a few
 * threads, kernels/memcpys on GPU streams, ac2g flows, Kineto args).
 * Deterministic (fixed seed). Usage: gen_chrome SIZE_MB OUT.json
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OUT_BUF (8u << 20)

struct gen {
	FILE *fp;            /* borrowed */
	char *buf;           /* owned: OUT_BUF bytes */
	size_t len;          /* bytes pending in buf */
	uint64_t written;    /* bytes flushed so far */
	uint64_t rng;        /* xorshift state */
	int64_t ext_id;      /* Kineto "External id" counter */
	int64_t corr;        /* CUDA correlation id counter */
	int64_t ev_idx;
	uint64_t events;
	int first;           /* no event written yet (no leading comma) */
	int64_t gpu_free_ns[3]; /* per stream: when the GPU is next idle */
};

static const int PID = 2873451;
static const int TID_MAIN = 2873451, TID_BWD = 2873602, TID_LOADER = 2873610;
static const int GPU_PID = 0;
static const int STREAMS[3] = { 7, 20, 24 };

static void flush(struct gen *g)
{
	if (g->len && fwrite(g->buf, 1, g->len, g->fp) != g->len) {
		perror("gen_chrome: write");
		exit(1);
	}
	g->written += g->len;
	g->len = 0;
}

__attribute__((format(printf, 2, 3))) static void out(struct gen *g, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (OUT_BUF - g->len < 4096)
		flush(g);
	va_start(ap, fmt);
	n = vsnprintf(g->buf + g->len, OUT_BUF - g->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= OUT_BUF - g->len) {
		fprintf(stderr, "gen_chrome: record too long\n");
		exit(1);
	}
	g->len += (size_t)n;
}

static uint32_t rnd(struct gen *g, uint32_t n)
{
	g->rng ^= g->rng << 13;
	g->rng ^= g->rng >> 7;
	g->rng ^= g->rng << 17;
	return (uint32_t)(g->rng % n);
}

/* Kineto prints microseconds with 3 decimals. */
static void us(char *b, int64_t ns)
{
	sprintf(b, "%" PRId64 ".%03" PRId64, ns / 1000, ns % 1000);
}

static void sep(struct gen *g)
{
	if (!g->first)
		out(g, ",\n");
	g->first = 0;
	g->events++;
}

static void slice(struct gen *g, const char *cat, const char *name, int pid, int tid, int64_t ts,
		  int64_t dur, const char *args)
{
	char a[32], b[32];

	us(a, ts);
	us(b, dur);
	sep(g);
	out(g,
	    "  {\n    \"ph\": \"X\", \"cat\": \"%s\", \"name\": \"%s\", \"pid\": %d, \"tid\": %d,\n"
	    "    \"ts\": %s, \"dur\": %s,\n    \"args\": {\n      %s\n    }\n  }",
	    cat, name, pid, tid, a, b, args);
}

static void flow(struct gen *g, char ph, int64_t id, int pid, int tid, int64_t ts)
{
	char a[32];

	us(a, ts);
	sep(g);
	out(g,
	    "  {\n    \"ph\": \"%c\", \"id\": %" PRId64 ", \"pid\": %d, \"tid\": %d, \"ts\": %s,\n"
	    "    \"cat\": \"ac2g\", \"name\": \"ac2g\"%s\n  }",
	    ph, id, pid, tid, a, ph == 'f' ? ", \"bp\": \"e\"" : "");
}

static void meta(struct gen *g, const char *what, int pid, int tid, const char *key, const char *val)
{
	sep(g);
	out(g,
	    "  {\n    \"name\": \"%s\", \"ph\": \"M\", \"ts\": 0, \"pid\": %d, \"tid\": %d,\n"
	    "    \"args\": {\n      \"%s\": %s\n    }\n  }",
	    what, pid, tid, key, val);
}

/* A cpu_op with Kineto's argument set. */
static void cpu_op(struct gen *g, const char *name, int tid, int64_t ts, int64_t dur, int ninputs)
{
	static const char *dims[] = { "[16, 1024]", "[1024, 1024]", "[1024]", "[]", "[16, 4096]",
				      "[4096, 1024]" };
	char args[1024], in_dims[256] = "", in_types[256] = "", strides[256] = "";
	int n = 0, m = 0, k = 0;

	for (int i = 0; i < ninputs; i++) {
		const char *d = dims[rnd(g, 6)];
		n += snprintf(in_dims + n, sizeof(in_dims) - n, "%s%s", i ? ", " : "", d);
		m += snprintf(in_types + m, sizeof(in_types) - m, "%s\"float\"", i ? ", " : "");
		k += snprintf(strides + k, sizeof(strides) - k, "%s[1024, 1]", i ? ", " : "");
	}
	g->ext_id++;
	snprintf(args, sizeof(args),
		 "\"External id\": %" PRId64 ",\"Record function id\": 0, \"Sequence number\": %" PRId64
		 ", \"Fwd thread id\": 0, \"Concrete Inputs\": [\"\"], \"Input type\": [%s], "
		 "\"Input Strides\": [%s], \"Input Dims\": [%s], \"Ev Idx\": %" PRId64,
		 g->ext_id, g->ext_id / 3, in_types, strides, in_dims, g->ev_idx++);
	slice(g, "cpu_op", name, PID, tid, ts, dur, args);
}

/* cudaLaunchKernel on `tid` at ts + the kernel it launches, linked by an ac2g flow. */
static void launch(struct gen *g, int tid, int64_t ts, const char *kernel, int64_t kdur)
{
	char args[768];
	int64_t corr = ++g->corr;
	int s = rnd(g, 8) == 0 ? 2 : 0; /* one launch in 8 on stream 24, memcpys on 20 */
	int64_t start, dur = 4000 + rnd(g, 3000);

	snprintf(args, sizeof(args),
		 "\"External id\": %" PRId64 ",  \"cbid\": 211, \"correlation\": %" PRId64, g->ext_id,
		 corr);
	slice(g, "cuda_runtime", "cudaLaunchKernel", PID, tid, ts, dur, args);
	flow(g, 's', corr, PID, tid, ts + 1000);
	start = ts + dur + 2000 + rnd(g, 5000);
	if (start < g->gpu_free_ns[s])
		start = g->gpu_free_ns[s] + 500;
	g->gpu_free_ns[s] = start + kdur;
	snprintf(args, sizeof(args),
		 "\"External id\": %" PRId64 ", \"queued\": 0, \"device\": 0, \"context\": 1, "
		 "\"stream\": %d, \"correlation\": %" PRId64 ", \"registers per thread\": %u, "
		 "\"shared memory\": %u, \"blocks per SM\": 0.%u, \"warps per SM\": %u.%u, "
		 "\"grid\": [%u, 1, 1], \"block\": [128, 1, 1], \"est. achieved occupancy %%\": %u",
		 g->ext_id, STREAMS[s], corr, 32 + rnd(g, 96), rnd(g, 4) * 16384, 1 + rnd(g, 9),
		 rnd(g, 16), rnd(g, 10), 1 + rnd(g, 4096), rnd(g, 100));
	slice(g, "kernel", kernel, GPU_PID, STREAMS[s], start, kdur, args);
	flow(g, 'f', corr, GPU_PID, STREAMS[s], start);
}

static const char *KERNELS[] = {
	"ampere_sgemm_128x64_tn",
	"void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::"
	"launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, "
	"at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#7}::"
	"operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2> >(int, "
	"at::native::(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&, "
	"c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::operator()() "
	"const::{lambda()#7}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2>)",
	"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_16x6_nn_align4>"
	"(cutlass_80_tensorop_s1688gemm_64x64_16x6_nn_align4::Params)",
	"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, "
	"at::native::MeanOps<float, float>, unsigned int, float, 4> >(at::native::ReduceOp<float, "
	"at::native::MeanOps<float, float>, unsigned int, float, 4>)",
};

/* One Linear layer forward under aten::linear: returns the end time. */
static int64_t linear_fwd(struct gen *g, int tid, int64_t t)
{
	int64_t tt;

	t += 2000;
	/* aten::t -> aten::transpose -> aten::as_strided */
	tt = t;
	cpu_op(g, "aten::t", tid, tt, 9000, 1);
	cpu_op(g, "aten::transpose", tid, tt + 2000, 6000, 1);
	cpu_op(g, "aten::as_strided", tid, tt + 4000, 2000, 1);
	t += 11000;
	/* aten::addmm -> cudaLaunchKernel -> kernel */
	int64_t addmm_dur = 30000 + rnd(g, 20000);
	cpu_op(g, "aten::addmm", tid, t, addmm_dur, 3);
	launch(g, tid, t + 8000, KERNELS[rnd(g, 2) ? 0 : 2], 20000 + rnd(g, 200000));
	return t + addmm_dur + 2000;
}

static void step(struct gen *g, int64_t step_no, int64_t *clock)
{
	enum { LAYERS = 12 };
	int64_t t = *clock, start = t, step_dur, fwd_dur = 0;
	int64_t layer_ns[LAYERS];
	char args[256];

	/* Parents are written before their children (start order, as Kineto
	 * does), so every duration is fixed up front; children always fit. */
	for (int i = 0; i < LAYERS; i++) {
		layer_ns[i] = 120000 + (int64_t)rnd(g, 60000);
		fwd_dur += layer_ns[i] + 30000;
	}
	step_dur = fwd_dur * 3 + 200000;
	snprintf(args, sizeof(args), "\"External id\": %" PRId64 ",\"Record function id\": 0, \"Ev Idx\": %" PRId64,
		 ++g->ext_id, g->ev_idx++);
	char name[64];
	snprintf(name, sizeof(name), "ProfilerStep#%" PRId64, step_no);
	slice(g, "user_annotation", name, PID, TID_MAIN, start, step_dur, args);

	/* forward on the main thread: nn.Module: Linear_i -> aten::linear -> ... */
	t = start + 10000;
	for (int i = 0; i < LAYERS; i++) {
		char mod[64];

		snprintf(mod, sizeof(mod), "nn.Module: Linear_%d", i);
		snprintf(args, sizeof(args), "\"External id\": %" PRId64 ", \"Python id\": %d, \"Ev Idx\": %" PRId64,
			 ++g->ext_id, 100 + i, g->ev_idx++);
		slice(g, "python_function", mod, PID, TID_MAIN, t, layer_ns[i], args);
		cpu_op(g, "aten::linear", TID_MAIN, t + 1000, layer_ns[i] - 2000, 3);
		int64_t e = linear_fwd(g, TID_MAIN, t + 1000); /* <= t + 67 us */

		cpu_op(g, "aten::relu", TID_MAIN, e, 12000, 1);
		cpu_op(g, "aten::clamp_min", TID_MAIN, e + 1000, 10000, 1);
		launch(g, TID_MAIN, e + 2000, KERNELS[1], 8000 + rnd(g, 20000));
		t += layer_ns[i] + 30000;
	}
	/* backward on the autograd thread */
	for (int i = LAYERS - 1; i >= 0; i--) {
		int64_t d = layer_ns[i] * 2;

		slice(g, "cpu_op", "autograd::engine::evaluate_function: AddmmBackward0", PID, TID_BWD, t,
		      d - 1000, "\"External id\": 0, \"Sequence number\": 7, \"Fwd thread id\": 1");
		cpu_op(g, "AddmmBackward0", TID_BWD, t + 1000, d - 4000, 2);
		cpu_op(g, "aten::mm", TID_BWD, t + 3000, d / 3, 2);
		launch(g, TID_BWD, t + 6000, KERNELS[0], 30000 + rnd(g, 150000));
		cpu_op(g, "aten::mm", TID_BWD, t + 6000 + d / 3, d / 3, 2);
		launch(g, TID_BWD, t + 9000 + d / 3, KERNELS[2], 30000 + rnd(g, 150000));
		t += d;
	}
	/* optimizer + a memory instant on the main thread */
	{
		char a[32];
		int64_t d = 20000 + (int64_t)LAYERS * 22000;

		cpu_op(g, "Optimizer.step#SGD.step", TID_MAIN, t, d, 0);
		for (int i = 0; i < LAYERS; i++) {
			cpu_op(g, "aten::add_", TID_MAIN, t + 5000 + i * 22000, 15000, 2);
			launch(g, TID_MAIN, t + 8000 + i * 22000, KERNELS[3], 5000 + rnd(g, 9000));
		}
		us(a, t + d + 500);
		sep(g);
		out(g,
		    "  {\n    \"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": "
		    "\"[memory]\",\n    \"pid\": %d, \"tid\": %d,\n    \"ts\": %s,\n    \"args\": {\n"
		    "      \"Device Type\": 1, \"Device Id\": 0, \"Addr\": %" PRIu64 ", \"Bytes\": %u, "
		    "\"Total Allocated\": %u, \"Total Reserved\": 2097152\n    }\n  }",
		    PID, TID_MAIN, a, (uint64_t)139870000000000ull + rnd(g, 1u << 30), 4096 + rnd(g, 65536),
		    1u << 20);
	}
	/* data loader thread: one memcpy per step */
	cpu_op(g, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", TID_LOADER, start + 2000,
	       40000, 0);
	{
		char args2[512];
		int64_t corr = ++g->corr, ts = start + 50000;

		snprintf(args2, sizeof(args2),
			 "\"External id\": %" PRId64 ", \"device\": 0, \"context\": 1, \"stream\": 20, "
			 "\"correlation\": %" PRId64 ", \"bytes\": 65536, \"memory bandwidth (GB/s)\": 6.5536",
			 g->ext_id, corr);
		slice(g, "cuda_runtime", "cudaMemcpyAsync", PID, TID_LOADER, ts - 8000, 6000,
		      "\"External id\": 0, \"cbid\": 41, \"correlation\": 0");
		slice(g, "gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", GPU_PID, 20, ts, 10000, args2);
	}
	*clock = start + step_dur + 50000;
}

int main(int argc, char **argv)
{
	struct gen g;
	uint64_t target;
	int64_t clock = INT64_C(1712195495519689047); /* ns since the epoch, like real Kineto */

	if (argc != 3) {
		fprintf(stderr, "usage: gen_chrome SIZE_MB OUT.json\n");
		return 2;
	}
	target = (uint64_t)(strtod(argv[1], NULL) * 1e6);
	memset(&g, 0, sizeof(g));
	g.rng = 0x9E3779B97F4A7C15ull;
	g.first = 1;
	g.buf = malloc(OUT_BUF);
	g.fp = strcmp(argv[2], "-") ? fopen(argv[2], "wb") : stdout;
	if (!g.buf || !g.fp) {
		perror("gen_chrome");
		return 1;
	}
	out(&g,
	    "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [\n    {\n      \"id\": 0, \"name\": "
	    "\"NVIDIA A100-SXM4-80GB\", \"totalGlobalMem\": 85100068864,\n      \"computeMajor\": 8, "
	    "\"computeMinor\": 0,\n      \"maxThreadsPerBlock\": 1024, \"maxThreadsPerMultiprocessor\": "
	    "2048,\n      \"regsPerBlock\": 65536, \"warpSize\": 32,\n      \"sharedMemPerBlock\": 49152, "
	    "\"numSms\": 108\n    }\n  ],\n  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 0, "
	    "\"world_size\": 8},\n  \"record_shapes\": 1,\n  \"traceEvents\": [\n");
	meta(&g, "process_name", PID, 0, "name", "\"python3\"");
	meta(&g, "process_labels", PID, 0, "labels", "\"CPU\"");
	meta(&g, "thread_name", PID, TID_MAIN, "name", "\"thread 2873451 (python3)\"");
	meta(&g, "thread_name", PID, TID_BWD, "name", "\"thread 2873602 (pt_autograd_0)\"");
	meta(&g, "thread_name", PID, TID_LOADER, "name", "\"thread 2873610 (pt_dataloader)\"");
	meta(&g, "process_name", GPU_PID, 0, "name", "\"GPU 0\"");
	meta(&g, "process_labels", GPU_PID, 0, "labels", "\"GPU 0\"");
	for (int s = 0; s < 3; s++) {
		char v[32];

		snprintf(v, sizeof(v), "\"stream %d\"", STREAMS[s]);
		meta(&g, "thread_name", GPU_PID, STREAMS[s], "name", v);
	}
	for (int64_t n = 1; g.written + g.len < target; n++)
		step(&g, n, &clock);
	out(&g,
	    "\n  ],\n  \"traceName\": \"synthetic_kineto.json\",\n  \"displayTimeUnit\": \"ms\"\n}\n");
	flush(&g);
	if (g.fp != stdout && fclose(g.fp) != 0) {
		perror("gen_chrome: close");
		return 1;
	}
	fprintf(stderr, "gen_chrome: %.1f MB, %" PRIu64 " events\n", g.written / 1e6, g.events);
	free(g.buf);
	return 0;
}
