/* SPDX-License-Identifier: MIT */
/*
 * Benchmark input generator: writes a synthetic Kineto-style Chrome trace of
 * about SIZE_MB megabytes (training steps of nested cpu_op slices on a few
 * threads, kernels/memcpys on GPU streams, ac2g flows, Kineto args).
 * With --with-stack it writes instead the shape of a PyTorch 2.x trace recorded
 * with_stack=True, like the real vLLM decode trace of ../shared/data (see
 * with_stack_window()). Deterministic (fixed seed).
 * Usage: gen_chrome [--with-stack] SIZE_MB OUT.json
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OUT_BUF (8u << 20)

/* A growable block of events (--with-stack: one category's block of a window). */
struct block {
	char *p;   /* owned */
	size_t len, cap;
};

struct gen {
	FILE *fp;            /* borrowed */
	char *buf;           /* owned: OUT_BUF bytes */
	size_t len;          /* bytes pending in buf */
	struct block *to;    /* where out() writes: NULL for buf */
	uint64_t written;    /* bytes flushed so far */
	uint64_t rng;        /* xorshift state */
	int64_t ext_id;      /* Kineto "External id" counter */
	int64_t corr;        /* CUDA correlation id counter */
	int64_t ev_idx;
	uint64_t events;
	int first;           /* no event written yet (no leading comma) */
	int64_t gpu_free_ns[3]; /* per stream: when the GPU is next idle */
	int64_t py_id;       /* --with-stack: "Python id" counter */
	uint64_t win_events; /* --with-stack: python_function events in this window */
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
	char *dst;
	size_t room;

	if (g->to) {
		struct block *b = g->to;

		if (b->cap - b->len < 4096) {
			b->cap = b->cap ? b->cap * 2 : (1u << 20);
			b->p = realloc(b->p, b->cap);
			if (!b->p) {
				perror("gen_chrome");
				exit(1);
			}
		}
		dst = b->p + b->len;
		room = b->cap - b->len;
	} else {
		if (OUT_BUF - g->len < 4096)
			flush(g);
		dst = g->buf + g->len;
		room = OUT_BUF - g->len;
	}
	va_start(ap, fmt);
	n = vsnprintf(dst, room, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= room) {
		fprintf(stderr, "gen_chrome: record too long\n");
		exit(1);
	}
	if (g->to)
		g->to->len += (size_t)n;
	else
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

/* Blocks always get the separator: block_flush() drops the file's first one. */
static void sep(struct gen *g)
{
	if (!g->first || g->to)
		out(g, ",\n");
	if (!g->to)
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

/*
 * --with-stack: the shape of the real vLLM decode trace (PyTorch 2.x, with_stack=True;
 * tracelens/inference/vllm_decode_full in ../shared/data): one thread whose events are
 * 91% python_function slices, 38-byte names on average ("file.py(line): function" and
 * built-ins) from 619 distinct ones, nested 61 deep on average (77 at most), each with
 * "Python parent id", "Python id" and "Ev Idx" args; a few cpu_ops with Kineto's
 * argument set, [memory] instants and runtime calls with their ac2g flows. Kineto
 * lists a profiling window's events by category: its cpu_ops, then its instants, its
 * python functions and its runtime calls, each block in time order; a window here
 * holds ~120k events (34 MB, like the real one) and the file is a run of windows.
 */
enum { WS_PID = 851, WS_TID = 851, WS_NAMES = 608, WS_WINDOW_EVENTS = 120000 };
static char ws_names[WS_NAMES][160];

static void ws_init_names(struct gen *g)
{
	static const char *dirs[] = { "vllm/model_executor", "vllm/worker", "vllm/v1/engine",
				      "torch/nn/modules", "torch/_dynamo", "triton/runtime",
				      "vllm/distributed", "transformers",
				      "vllm/attention", "torch/utils" };
	static const char *files[] = { "linear.py", "module.py", "jit.py", "core.py", "eval_frame.py",
				       "parallel_state.py", "model_runner.py", "utils.py",
				       "rotary_embedding.py", "layernorm.py", "activation.py",
				       "flash_attn.py", "_ops.py", "functional.py", "scheduler.py",
				       "graph.py" };
	static const char *funcs[] = { "forward", "_call_impl", "_wrapped_call_impl", "__call__",
				       "specialize_impl", "run", "execute_model", "apply",
				       "_forward", "get", "__getitem__", "decorate_context",
				       "_fn", "wrapper", "step", "maybe_get", "launch",
				       "_bootstrap_inner", "inner", "compute_logits" };
	static const char *builtins[] = { "<built-in function isinstance>",
					  "<built-in method get of dict object at 0x7f6078eca900>",
					  "<built-in method __exit__ of _thread.lock object at 0x7f5fd19e3d80>",
					  "<built-in function len>", "<built-in method item of Tensor object>",
					  "<built-in method acquire of _thread.lock object at 0x7f608e4e91c0>",
					  "<frozen os>(709): __getitem__", "<frozen _collections_abc>(804): get" };
	char b[160];

	for (int i = 0; i < WS_NAMES; i++) {
		if (i < 8)
			snprintf(b, sizeof(b), "%s", builtins[i]);
		else
			snprintf(b, sizeof(b), "%s/%s(%u): %s", dirs[rnd(g, 10)], files[rnd(g, 16)],
				 20 + rnd(g, 2400), funcs[rnd(g, 20)]);
		memcpy(ws_names[i], b, sizeof(b));
	}
}

struct ws_blocks {
	struct block cpu, inst, py, rt;
};

/* A leaf python function of at least 1 us calls an op now and then: a cpu_op
 * inside it, sometimes a [memory] instant and a launch with its flow. */
static void ws_op(struct gen *g, struct ws_blocks *w, int64_t ts, int64_t dur)
{
	static const char *ops[] = { "aten::slice", "aten::as_strided", "aten::copy_", "aten::empty",
				     "aten::to", "aten::index_select", "aten::mm", "aten::add" };
	char args[512], a[32];
	int64_t t0 = ts + dur / 10, d = dur * 8 / 10;

	g->to = &w->cpu;
	cpu_op(g, ops[rnd(g, 8)], WS_TID, t0, d, 1 + (int)rnd(g, 4));
	if (rnd(g, 3) == 0) {
		g->to = &w->inst;
		us(a, t0 + 1);
		sep(g);
		out(g,
		    "  {\n    \"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": "
		    "\"[memory]\",\n    \"pid\": %d, \"tid\": %d,\n    \"ts\": %s,\n    \"args\": {\n"
		    "      \"Total Reserved\": 193621655552, \"Total Allocated\": %" PRIu64 ", \"Bytes\": %d, "
		    "\"Device Id\": 0, \"Device Type\": 6, \"Addr\": %" PRIu64 ", \"finished\": false, "
		    "\"Ev Idx\": %" PRId64 "\n    }\n  }",
		    WS_PID, WS_TID, a, (uint64_t)191610969088ull + rnd(g, 1u << 20),
		    (int)rnd(g, 400000) - 200000, (uint64_t)139725698500096ull + rnd(g, 1u << 30),
		    g->ev_idx++);
	}
	if (rnd(g, 4) != 0) {
		int64_t corr = ++g->corr, rt = t0 + d / 4;

		g->to = &w->rt;
		snprintf(args, sizeof(args),
			 "\"External id\": %" PRId64 ",      \"cid\": 134, \"correlation\": %" PRId64
			 ", \"src\": \"0x7f5ac0c92000\", \"dst\": \"0x7f1ab4254400\", \"bytes\": \"4096\", "
			 "\"kind\": \"1\"",
			 g->ext_id, corr);
		slice(g, "cuda_runtime", rnd(g, 2) ? "hipLaunchKernel" : "hipMemcpyAsync", WS_PID, WS_TID,
		      rt, d / 2, args);
		flow(g, 's', corr, WS_PID, WS_TID, rt);
	}
}

/* A python function and its callees: depth below the spine's bottom is capped at
 * `left`; children by a critical branching (mean 1: 48% leaves, like the real one). */
static void ws_frame(struct gen *g, struct ws_blocks *w, int64_t parent, int left, int64_t ts,
		     int64_t dur, int name)
{
	char args[160];
	int64_t id = ++g->py_id;
	uint32_t r = rnd(g, 100);
	int k;

	if (parent)
		snprintf(args, sizeof(args),
			 "\"Python parent id\": %" PRId64 ", \"Python id\": %" PRId64 ", \"Ev Idx\": %" PRId64,
			 parent, id, g->ev_idx++);
	else
		snprintf(args, sizeof(args),
			 "\"Python parent id\": null, \"Python id\": %" PRId64 ", \"Ev Idx\": %" PRId64, id,
			 g->ev_idx++);
	g->to = &w->py;
	slice(g, "python_function", ws_names[name], WS_PID, WS_TID, ts, dur, args);
	g->win_events++;
	k = r < 48 ? 0 : r < 80 ? 1 : r < 90 ? 2 : r < 96 ? 3 : 4 + (int)rnd(g, 7);
	if (left <= 0 || dur < 40 * (int64_t)(k + 1))
		k = 0;
	if (k == 0) {
		if (dur >= 1000 && rnd(g, 8) == 0)
			ws_op(g, w, ts, dur);
		return;
	}
	int64_t slot = dur / k;
	for (int i = 0; i < k; i++) {
		int64_t gap = 1 + rnd(g, (uint32_t)(slot / 8 + 1));
		/* leaves are built-ins a quarter of the time */
		int nm = rnd(g, 4) == 0 ? (int)rnd(g, 8) : 8 + (int)rnd(g, WS_NAMES - 8);

		ws_frame(g, w, id, left - 1, ts + i * slot + gap, slot - 2 * gap, nm);
	}
}

static void block_flush(struct gen *g, struct block *b)
{
	size_t skip = (g->first && b->len >= 2) ? 2 : 0; /* the file's first event: no ",\n" */

	g->to = NULL;
	flush(g);
	if (b->len > skip && fwrite(b->p + skip, 1, b->len - skip, g->fp) != b->len - skip) {
		perror("gen_chrome: write");
		exit(1);
	}
	g->written += b->len - skip;
	if (b->len > skip)
		g->first = 0;
	b->len = 0;
}

/* One profiling window: a spine of 52-63 frames (thread bootstrap down to the
 * model's forward), then calls under it until the window has its events. */
static void with_stack_window(struct gen *g, struct ws_blocks *w, int64_t *clock)
{
	int spine = 52 + (int)rnd(g, 12);
	int64_t t = *clock, dur = 60000000, parent = 0;

	g->win_events = 0;
	for (int i = 0; i < spine; i++) {
		char args[160];
		int64_t id = ++g->py_id;

		if (parent)
			snprintf(args, sizeof(args),
				 "\"Python parent id\": %" PRId64 ", \"Python id\": %" PRId64
				 ", \"Ev Idx\": %" PRId64,
				 parent, id, g->ev_idx++);
		else
			snprintf(args, sizeof(args),
				 "\"Python parent id\": null, \"Python id\": %" PRId64 ", \"Ev Idx\": %" PRId64,
				 id, g->ev_idx++);
		g->to = &w->py;
		slice(g, "python_function", ws_names[8 + i * 7 % (WS_NAMES - 8)], WS_PID, WS_TID, t, dur,
		      args);
		g->win_events++;
		parent = id;
		t += 1000 + rnd(g, 2000);
		dur -= 4000;
	}
	/* calls of 20 us each under the spine's bottom frame */
	int64_t end = t + dur - 1000;
	while (g->win_events < WS_WINDOW_EVENTS && t + 25000 < end) {
		ws_frame(g, w, parent, 8 + (int)rnd(g, 14), t + 500, 20000, 8 + (int)rnd(g, WS_NAMES - 8));
		t += 22000;
	}
	block_flush(g, &w->cpu);
	block_flush(g, &w->inst);
	block_flush(g, &w->py);
	block_flush(g, &w->rt);
	*clock += 60000000 + 5000000;
}

int main(int argc, char **argv)
{
	struct gen g;
	uint64_t target;
	int64_t clock = INT64_C(1712195495519689047); /* ns since the epoch, like real Kineto */
	int with_stack = argc > 1 && strcmp(argv[1], "--with-stack") == 0;

	argc -= with_stack;
	argv += with_stack;
	if (argc != 3) {
		fprintf(stderr, "usage: gen_chrome [--with-stack] SIZE_MB OUT.json\n");
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
	if (with_stack) {
		struct ws_blocks w;

		memset(&w, 0, sizeof(w));
		clock = INT64_C(6520430063606411);
		ws_init_names(&g);
		meta(&g, "process_name", WS_PID, 0, "name", "\"python3\"");
		meta(&g, "thread_name", WS_PID, WS_TID, "name", "\"thread 851 (python3)\"");
		while (g.written + g.len < target)
			with_stack_window(&g, &w, &clock);
		free(w.cpu.p);
		free(w.inst.p);
		free(w.py.p);
		free(w.rt.p);
		goto done;
	}
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
done:
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
