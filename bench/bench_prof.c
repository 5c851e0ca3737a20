/* SPDX-License-Identifier: MIT */
/*
 * tftracer prof benchmark (issue #20: `prof` on a 10M-event session answers
 * in under 2 s with bounded memory): generates once (cached) a session of N
 * events shaped like a PyTorch training job profiled with Kineto: steps
 * (ProfilerStep#N and the steps table), a model of LAYERS linear layers as
 * "nn.Module: <path>" scopes, aten ops nesting (linear -> t -> transpose,
 * addmm -> cudaLaunchKernel) with Input Dims and flops args, a backward
 * thread (evaluate_function -> AddmmBackward0 -> 2 x mm -> launch) with
 * Sequence numbers, every launch's kernel on one of two GPU streams through
 * a flow, and [memory] events; then times tft_prof_open (the scan, all
 * steps averaged) plus the op and scope views, with the default threads and
 * with one, and reports the process's peak RSS.
 *
 * usage: bench_prof [--session FILE] [--events N] [--reps N]
 * Prints one JSON line per result on stdout.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "analyze/prof.h"
#include "store/session.h"
#include "store/writer.h"

#define LAYERS 50

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

struct gen {
	struct tft_writer *w;
	uint32_t main, bwd, gpu[2];
	uint32_t cat_op, cat_rt, cat_kernel, cat_mod, cat_ann, cat_inst, flow_cat;
	uint32_t k_dims, k_flops, k_seq, k_fwd, k_bytes, dims_lin, dims_addmm, dims_mm;
	uint32_t n_linear, n_t, n_transpose, n_addmm, n_launch, n_relu, n_clamp, n_eval, n_node, n_mm, n_mem;
	uint32_t n_model, n_layer[LAYERS], n_fc[LAYERS], n_kernel[4];
	uint64_t events, flow_id;
	int64_t gpu_t[2];
	int fail;
};

static void slice(struct gen *g, uint32_t track, uint32_t name, uint32_t cat, int64_t ts, int64_t dur,
		  const struct tft_arg *args, uint16_t nargs)
{
	struct tft_event ev = { .ts_ns = ts, .dur_ns = dur, .track = track, .name = name, .cat = cat, .count = 1,
				.kind = dur < 0 ? TFT_EV_INSTANT : TFT_EV_SLICE, .args = args, .nargs = nargs };

	if (dur < 0)
		ev.dur_ns = 0;
	if (tft_writer_append(g->w, &ev))
		g->fail = 1;
	g->events++;
}

/* a launch at ts on the host and its kernel on stream s (in that stream's time order) */
static void launch(struct gen *g, int64_t ts, int s, uint32_t kname, int64_t kdur)
{
	int64_t kt = g->gpu_t[s] > ts + 5000 ? g->gpu_t[s] : ts + 5000;
	struct tft_flow f = { .flow_id = ++g->flow_id, .name = g->flow_cat, .cat = g->flow_cat,
			      .src_track = g->main, .src_ts_ns = ts, .dst_track = g->gpu[s], .dst_ts_ns = kt };

	slice(g, g->main, g->n_launch, g->cat_rt, ts, 3000, NULL, 0);
	(void)f;
	g->gpu_t[s] = kt + kdur + 500;
	/* the kernel is appended to its stream here: streams are tracks of their own, each in time order */
	slice(g, g->gpu[s], kname, g->cat_kernel, kt, kdur, NULL, 0);
	if (tft_writer_add_flow(g->w, &f))
		g->fail = 1;
}

static int generate(const char *path, uint64_t target)
{
	struct tft_writer_opts wo = { .threads = 2, .bulk = 1 };
	struct tft_process pr = { .rank = -1, .pid = 1 };
	struct tft_error err;
	struct gen g = { 0 };
	char tmp[4200], buf[96];
	int64_t t = 1000000000;
	uint64_t step = 0;

	snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
	tft_error_clear(&err);
	if (!(g.w = tft_writer_open(tmp, &wo, &err)))
		return fprintf(stderr, "bench_prof: %s\n", err.msg), 1;
#define I(s) tft_writer_intern_cstr(g.w, s)
	pr.name = I("python");
	uint32_t p0 = tft_writer_add_process(g.w, &pr);
	pr.name = I("GPU 0 (NVIDIA A100-SXM4-80GB)");
	pr.pid = 2;
	uint32_t p1 = tft_writer_add_process(g.w, &pr);
	struct tft_track tr = { .process = p0, .kind = TFT_TRACK_THREAD, .tid = 1, .name = I("thread 1 (python)") };
	g.main = tft_writer_add_track(g.w, &tr);
	tr.tid = 2;
	tr.name = I("thread 2 (pt_autograd_0)");
	g.bwd = tft_writer_add_track(g.w, &tr);
	for (int s = 0; s < 2; s++) {
		struct tft_track gt = { .process = p1, .kind = TFT_TRACK_GPU_STREAM, .tid = 7 + s,
					.flags = TFT_TRACKF_CONCURRENT };
		snprintf(buf, sizeof(buf), "stream %d", 7 + s);
		gt.name = I(buf);
		g.gpu[s] = tft_writer_add_track(g.w, &gt);
	}
	g.cat_op = I("cpu_op");
	g.cat_rt = I("cuda_runtime");
	g.cat_kernel = I("kernel");
	g.cat_mod = I("python_module");
	g.cat_ann = I("user_annotation");
	g.cat_inst = I("cpu_instant_event");
	g.flow_cat = I("ac2g");
	g.k_dims = I("Input Dims");
	g.k_flops = I("flops");
	g.k_seq = I("Sequence number");
	g.k_fwd = I("Fwd thread id");
	g.k_bytes = I("Bytes");
	g.dims_lin = I("[[64, 1024], [1024, 1024], [1024]]");
	g.dims_addmm = I("[[1024], [64, 1024], [1024, 1024], [], []]");
	g.dims_mm = I("[[64, 1024], [1024, 1024]]");
	g.n_linear = I("aten::linear");
	g.n_t = I("aten::t");
	g.n_transpose = I("aten::transpose");
	g.n_addmm = I("aten::addmm");
	g.n_launch = I("cudaLaunchKernel");
	g.n_relu = I("aten::relu");
	g.n_clamp = I("aten::clamp_min");
	g.n_eval = I("autograd::engine::evaluate_function: AddmmBackward0");
	g.n_node = I("AddmmBackward0");
	g.n_mm = I("aten::mm");
	g.n_mem = I("[memory]");
	g.n_model = I("nn.Module: model");
	g.n_kernel[0] = I("ampere_sgemm_128x64_tn");
	g.n_kernel[1] = I("void at::native::vectorized_elementwise_kernel<4, at::native::clamp_min>");
	g.n_kernel[2] = I("ampere_sgemm_64x64_nn");
	g.n_kernel[3] = I("ampere_sgemm_128x128_nt");
	for (int l = 0; l < LAYERS; l++) {
		snprintf(buf, sizeof(buf), "nn.Module: layers.%d", l);
		g.n_layer[l] = I(buf);
		snprintf(buf, sizeof(buf), "nn.Module: layers.%d.fc", l);
		g.n_fc[l] = I(buf);
	}
	tft_writer_set_meta(g.w, "format", "kineto");
	while (g.events < target && !g.fail) {
		int64_t s0 = t, seq0 = (int64_t)step * LAYERS;
		/* a step: forward on the main thread, backward on the autograd thread */
		int64_t fwd_len = LAYERS * 100000 + 20000, bwd_len = LAYERS * 80000 + 20000;
		snprintf(buf, sizeof(buf), "ProfilerStep#%" PRIu64, step);
		slice(&g, g.main, I(buf), g.cat_ann, s0, fwd_len + bwd_len + 20000, NULL, 0);
		slice(&g, g.main, g.n_model, g.cat_mod, s0 + 1000, fwd_len, NULL, 0);
		int64_t c = s0 + 2000;
		for (int l = 0; l < LAYERS; l++) {
			struct tft_arg lin[2] = { { .key = g.k_seq, .type = TFT_ARG_INT, .v.i = seq0 + l },
						  { .key = g.k_dims, .type = TFT_ARG_JSON, .v.str = g.dims_lin } };
			struct tft_arg mm[3] = { { .key = g.k_seq, .type = TFT_ARG_INT, .v.i = seq0 + l },
						 { .key = g.k_flops, .type = TFT_ARG_INT, .v.i = 2LL * 64 * 1024 * 1024 },
						 { .key = g.k_dims, .type = TFT_ARG_JSON, .v.str = g.dims_addmm } };
			struct tft_arg alloc = { .key = g.k_bytes, .type = TFT_ARG_INT, .v.i = 262144 };
			slice(&g, g.main, g.n_layer[l], g.cat_mod, c, 98000, NULL, 0);
			slice(&g, g.main, g.n_fc[l], g.cat_mod, c + 500, 60000, NULL, 0);
			slice(&g, g.main, g.n_linear, g.cat_op, c + 1000, 55000, lin, 2);
			slice(&g, g.main, g.n_t, g.cat_op, c + 2000, 8000, NULL, 0);
			slice(&g, g.main, g.n_transpose, g.cat_op, c + 3000, 5000, NULL, 0);
			slice(&g, g.main, g.n_addmm, g.cat_op, c + 12000, 40000, mm, 3);
			slice(&g, g.main, g.n_mem, g.cat_inst, c + 13000, -1, &alloc, 1);
			launch(&g, c + 20000, l & 1, g.n_kernel[0], 30000);
			slice(&g, g.main, g.n_relu, g.cat_op, c + 62000, 30000, NULL, 0);
			slice(&g, g.main, g.n_clamp, g.cat_op, c + 63000, 25000, NULL, 0);
			launch(&g, c + 70000, l & 1, g.n_kernel[1], 8000);
			c += 100000;
		}
		int64_t b = s0 + fwd_len + 5000;
		for (int l = LAYERS - 1; l >= 0; l--) {
			struct tft_arg ev[2] = { { .key = g.k_seq, .type = TFT_ARG_INT, .v.i = seq0 + l },
						 { .key = g.k_fwd, .type = TFT_ARG_INT, .v.i = 1 } };
			struct tft_arg mm = { .key = g.k_dims, .type = TFT_ARG_JSON, .v.str = g.dims_mm };
			slice(&g, g.bwd, g.n_eval, g.cat_op, b, 75000, ev, 2);
			slice(&g, g.bwd, g.n_node, g.cat_op, b + 2000, 70000, NULL, 0);
			slice(&g, g.bwd, g.n_mm, g.cat_op, b + 4000, 30000, &mm, 1);
			slice(&g, g.bwd, g.n_mm, g.cat_op, b + 38000, 30000, &mm, 1);
			b += 80000;
		}
		struct tft_step st = { .index = (int64_t)step, .name = 0, .process = p0, .start_ns = s0,
				       .dur_ns = fwd_len + bwd_len + 20000, .traced = true };
		if (tft_writer_add_step(g.w, &st))
			g.fail = 1;
		t = s0 + fwd_len + bwd_len + 30000;
		step++;
	}
#undef I
	if (g.fail) {
		fprintf(stderr, "bench_prof: append failed (%s)\n", tft_writer_failure(g.w, &err) ? err.msg : "order");
		tft_writer_abort(g.w);
		unlink(tmp);
		return 1;
	}
	if (tft_writer_close(g.w, &err))
		return fprintf(stderr, "bench_prof: %s\n", err.msg), 1;
	return rename(tmp, path) ? 1 : 0;
}

static double run(struct tft_session *s, int threads, uint32_t *nodes)
{
	struct tft_prof_opts o;
	struct tft_prof_result *r = NULL;
	struct tft_error err;
	double a = now_ms();
	struct tft_prof *p;

	tft_error_clear(&err);
	tft_prof_opts_init(&o);
	if (!(p = tft_prof_open(s, -1, threads, &err))) {
		fprintf(stderr, "bench_prof: %s\n", err.msg);
		exit(1);
	}
	for (int v = 0; v < 2; v++) {
		if (tft_prof_view(p, v == 0 ? TFT_PROF_OP : TFT_PROF_SCOPE, &o, &r, &err)) {
			fprintf(stderr, "bench_prof: %s\n", err.msg);
			exit(1);
		}
		*nodes = r->nnodes;
		tft_prof_result_free(r);
	}
	a = now_ms() - a;
	tft_prof_close(p);
	tft_prof_opts_fini(&o);
	return a;
}

int main(int argc, char **argv)
{
	const char *path = "/tmp/tft-bench/prof.tft";
	uint64_t events = 10000000;
	int reps = 3;
	struct tft_session_summary sum;
	struct tft_session *s;
	struct tft_error err;
	struct stat st;
	uint32_t nodes = 0;
	struct rusage ru;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--session") == 0 && i + 1 < argc)
			path = argv[++i];
		else if (strcmp(argv[i], "--events") == 0 && i + 1 < argc)
			events = strtoull(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
			reps = atoi(argv[++i]);
	}
	if (stat(path, &st) != 0) {
		double g = now_ms();
		if (generate(path, events))
			return 1;
		fprintf(stderr, "# generated %s in %.1f s\n", path, (now_ms() - g) / 1e3);
	}
	tft_error_clear(&err);
	if (!(s = tft_session_open(path, &err)))
		return fprintf(stderr, "bench_prof: %s\n", err.msg), 1;
	tft_session_get_summary(s, &sum);
	double best = 1e18, best1 = 1e18, cold = run(s, 0, &nodes);
	for (int i = 0; i < reps; i++) {
		double t = run(s, 0, &nodes);
		best = t < best ? t : best;
	}
	for (int i = 0; i < reps; i++) {
		double t = run(s, 1, &nodes);
		best1 = t < best1 ? t : best1;
	}
	getrusage(RUSAGE_SELF, &ru);
	printf("{\"bench\":\"prof_op_scope\",\"events\":%" PRIu64 ",\"slices\":%" PRIu64 ",\"flows\":%" PRIu64
	       ",\"steps\":%" PRIu64 ",\"nodes\":%u,\"cold_ms\":%.1f,\"best_ms\":%.1f,\"one_thread_ms\":%.1f"
	       ",\"peak_rss_mb\":%.1f,\"threads\":%ld}\n",
	       sum.slices + sum.instants, sum.slices, sum.flows, sum.steps, nodes, cold, best, best1,
	       ru.ru_maxrss / 1024.0, sysconf(_SC_NPROCESSORS_ONLN));
	tft_session_close(s);
	return 0;
}
