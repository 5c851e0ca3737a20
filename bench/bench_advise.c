/* SPDX-License-Identifier: MIT */
/*
 * Advisor benchmark (issue: `tftracer advise` on a 10M-event session in under
 * 3 s with bounded memory): generates once (cached) a session of N events
 * shaped like a PyTorch GPU training job's Kineto trace: a main thread with
 * ProfilerStep#N steps (and the session's step table), each step a DataLoader
 * wait then ops (aten::linear > aten::addmm > cudaLaunchKernel, cpu_op and
 * cuda_runtime), each launch with its ac2g flow to a kernel on one of two
 * streams (some under 10 us), a pageable host-to-device copy and an NCCL
 * all-reduce on a third stream; then times tft_advise_run over it, in this
 * process (best of 3). bench/run.sh times the CLI on the same session (wall,
 * CPU, peak RSS).
 *
 * usage: bench_advise [--session FILE] [--events N] [--gen-only]
 * Prints a table line and one JSON line per result on stdout.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "analyze/advise.h"
#include "store/session.h"
#include "store/writer.h"

#define OPS_PER_STEP 2000 /* 4 events and a flow each */

static uint64_t rng = 0x9E3779B97F4A7C15ULL;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

struct gen {
	struct tft_writer *w;
	uint32_t host, stream[3];
	uint32_t cat_op, cat_rt, cat_k, cat_ann, cat_mc;
	uint32_t n_linear, n_addmm, n_launch, n_loader, n_memcpy_call, n_memcpy, n_nccl, n_ar, n_k[8];
	uint64_t n;
};

static int slice(struct gen *g, uint32_t track, uint32_t name, uint32_t cat, int64_t ts, int64_t dur)
{
	struct tft_event ev = { .track = track, .name = name, .cat = cat, .count = 1, .kind = TFT_EV_SLICE,
				.ts_ns = ts, .dur_ns = dur };

	g->n++;
	return tft_writer_append(g->w, &ev);
}

static int flow(struct gen *g, uint64_t id, int64_t src_ts, uint32_t dst, int64_t dst_ts)
{
	struct tft_flow f = { .flow_id = id, .src_track = g->host, .src_ts_ns = src_ts, .dst_track = dst,
			      .dst_ts_ns = dst_ts };

	f.name = f.cat = tft_writer_intern_cstr(g->w, "ac2g");
	return tft_writer_add_flow(g->w, &f);
}

static int generate(const char *path, uint64_t events)
{
	struct tft_writer_opts wo = { .threads = 2, .bulk = 1 };
	struct tft_process pr = { .rank = -1, .pid = 1 }, gp = { .rank = -1, .pid = 0 };
	struct tft_track tr = { .tid = 1 };
	struct tft_error err;
	struct gen g = { 0 };
	int64_t ts = 1000000000, kend[3] = { 0, 0, 0 };
	uint64_t corr = 1;
	char tmp[4200], b[128];
	int rc = 0;

	snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
	tft_error_clear(&err);
	if (!(g.w = tft_writer_open(tmp, &wo, &err)))
		return fprintf(stderr, "bench_advise: %s\n", err.msg), 1;
	pr.name = tft_writer_intern_cstr(g.w, "python3");
	pr.id = tft_writer_add_process(g.w, &pr);
	gp.name = tft_writer_intern_cstr(g.w, "GPU 0");
	gp.id = tft_writer_add_process(g.w, &gp);
	tr.process = pr.id;
	tr.kind = TFT_TRACK_THREAD;
	tr.name = tft_writer_intern_cstr(g.w, "thread 1 (python3)");
	g.host = tft_writer_add_track(g.w, &tr);
	for (int s = 0; s < 3; s++) {
		struct tft_track st = { .process = gp.id, .kind = TFT_TRACK_GPU_STREAM, .flags = TFT_TRACKF_CONCURRENT,
					.tid = s == 2 ? 20 : 7 + s };
		snprintf(b, sizeof(b), "stream %d", s == 2 ? 20 : 7 + s);
		st.name = tft_writer_intern_cstr(g.w, b);
		g.stream[s] = tft_writer_add_track(g.w, &st);
	}
	g.cat_op = tft_writer_intern_cstr(g.w, "cpu_op");
	g.cat_rt = tft_writer_intern_cstr(g.w, "cuda_runtime");
	g.cat_k = tft_writer_intern_cstr(g.w, "kernel");
	g.cat_ann = tft_writer_intern_cstr(g.w, "user_annotation");
	g.cat_mc = tft_writer_intern_cstr(g.w, "gpu_memcpy");
	g.n_linear = tft_writer_intern_cstr(g.w, "aten::linear");
	g.n_addmm = tft_writer_intern_cstr(g.w, "aten::addmm");
	g.n_launch = tft_writer_intern_cstr(g.w, "cudaLaunchKernel");
	g.n_loader = tft_writer_intern_cstr(g.w, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__");
	g.n_memcpy_call = tft_writer_intern_cstr(g.w, "cudaMemcpyAsync");
	g.n_memcpy = tft_writer_intern_cstr(g.w, "Memcpy HtoD (Pageable -> Device)");
	g.n_ar = tft_writer_intern_cstr(g.w, "c10d::allreduce_");
	g.n_nccl = tft_writer_intern_cstr(g.w, "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)");
	for (int k = 0; k < 8; k++) {
		snprintf(b, sizeof(b), "void at::native::elementwise_kernel<128, %d, gemm_%d>(int, Func)", k, k);
		g.n_k[k] = tft_writer_intern_cstr(g.w, b);
	}
	for (int64_t stepi = 0; g.n < events && !rc; stepi++) {
		int64_t step_start = ts, loader = 200000 + (int64_t)(rnd() % 100000), c, end;
		struct tft_step st = { .index = stepi, .process = pr.id, .start_ns = ts, .traced = true };
		char sn[48];

		/* the ops first (to know the step's end), appended after its own slice */
		c = ts + loader + 2000;
		/* the step's own slice: its duration is only known at the end, so estimate
		 * generously from the ops' pace (2 us apart, 3 events each, about 12 us) */
		end = c + (int64_t)OPS_PER_STEP * 14000 + 400000;
		snprintf(sn, sizeof(sn), "ProfilerStep#%lld", (long long)stepi);
		st.name = tft_writer_intern_cstr(g.w, sn);
		rc |= slice(&g, g.host, st.name, g.cat_ann, ts, end - ts);
		rc |= slice(&g, g.host, g.n_loader, g.cat_ann, ts + 1000, loader);
		/* the batch to the GPU */
		rc |= slice(&g, g.host, g.n_memcpy_call, g.cat_rt, c, 8000);
		kend[0] = kend[0] > c + 10000 ? kend[0] : c + 10000;
		rc |= slice(&g, g.stream[0], g.n_memcpy, g.cat_mc, kend[0], 300000);
		rc |= flow(&g, corr++, c, g.stream[0], kend[0]);
		kend[0] += 300000;
		c += 10000;
		for (int i = 0; i < OPS_PER_STEP && !rc; i++) {
			int s = i % 5 == 4 ? 1 : 0;
			int64_t kd = i % 3 ? 2000 + (int64_t)(rnd() % 6000) : 15000 + (int64_t)(rnd() % 30000);
			int64_t kts;
			rc |= slice(&g, g.host, g.n_linear, g.cat_op, c, 12000);
			rc |= slice(&g, g.host, g.n_addmm, g.cat_op, c + 1000, 10000);
			rc |= slice(&g, g.host, g.n_launch, g.cat_rt, c + 2000, 6000);
			kts = kend[s] > c + 9000 ? kend[s] : c + 9000;
			rc |= slice(&g, g.stream[s], g.n_k[i % 8], g.cat_k, kts, kd);
			rc |= flow(&g, corr++, c + 2000, g.stream[s], kts);
			kend[s] = kts + kd;
			c += 14000;
		}
		/* the gradients' all-reduce after the last kernel */
		rc |= slice(&g, g.host, g.n_ar, g.cat_op, c, 20000);
		rc |= slice(&g, g.host, g.n_launch, g.cat_rt, c + 2000, 6000);
		{
			int64_t kts = kend[0] > kend[1] ? kend[0] : kend[1];
			kts = kts > kend[2] ? kts : kend[2];
			kts = kts > c + 9000 ? kts : c + 9000;
			rc |= slice(&g, g.stream[2], g.n_nccl, g.cat_k, kts, 150000);
			rc |= flow(&g, corr++, c + 2000, g.stream[2], kts);
			kend[2] = kts + 150000;
		}
		ts = end > kend[2] ? end : kend[2];
		ts += 5000;
		st.dur_ns = end - step_start;
		rc |= tft_writer_add_step(g.w, &st);
	}
	if (rc) {
		fprintf(stderr, "bench_advise: append failed (%s)\n", tft_writer_failure(g.w, &err) ? err.msg : "order");
		tft_writer_abort(g.w);
		unlink(tmp);
		return 1;
	}
	if (tft_writer_close(g.w, &err))
		return fprintf(stderr, "bench_advise: %s\n", err.msg), 1;
	return rename(tmp, path) ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *path = "/tmp/tft-bench/advise.tft";
	uint64_t events = 10000000;
	bool gen_only = false;
	struct tft_session_summary sum;
	struct tft_session *s;
	struct tft_error err;
	struct stat st;
	double best = 1e18, first = 0;
	size_t nf = 0, nsteps = 0;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--session") == 0 && i + 1 < argc)
			path = argv[++i];
		else if (strcmp(argv[i], "--events") == 0 && i + 1 < argc)
			events = strtoull(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--gen-only") == 0)
			gen_only = true;
	}
	if (stat(path, &st) != 0) {
		double g = now_ms();
		if (generate(path, events))
			return 1;
		fprintf(stderr, "# generated %s in %.1f s\n", path, (now_ms() - g) / 1e3);
	}
	if (gen_only)
		return 0;
	tft_error_clear(&err);
	if (!(s = tft_session_open(path, &err)))
		return fprintf(stderr, "bench_advise: %s\n", err.msg), 1;
	tft_session_get_summary(s, &sum);
	for (int r = 0; r < 3; r++) {
		struct tft_advise_result *res = NULL;
		double t = now_ms();
		if (tft_advise_run(s, NULL, &res, &err))
			return fprintf(stderr, "bench_advise: %s\n", err.msg), 1;
		t = now_ms() - t;
		if (!r)
			first = t;
		best = t < best ? t : best;
		nf = res->nfindings;
		nsteps = res->nsteps;
		tft_advise_destroy(res);
	}
	printf("{\"bench\":\"advise_lib\",\"events\":%" PRIu64 ",\"flows\":%" PRIu64 ",\"steps\":%zu"
	       ",\"findings\":%zu,\"first_ms\":%.1f,\"best_ms\":%.1f}\n",
	       sum.slices + sum.instants, sum.flows, nsteps, nf, first, best);
	tft_session_close(s);
	return 0;
}
