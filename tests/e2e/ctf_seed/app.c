/* SPDX-License-Identifier: MIT */
/*
 * A program instrumented like the LTTng-based TensorFlow profiler
 * (pzins/tensorflow-profiler, docs/formats-lttng.md): its tracepoint
 * providers (tensorflowTracer, hsaTracer, hipTracer, openclTracer,
 * interceptionTracer, hcTracer, cudaTracer), with the event fields its
 * documentation gives, emitted in the order its libraries emit them. Built
 * and run under a real LTTng session by tests/e2e/test_ctf.py, which writes
 * the provider headers (tp_*.h, tp_all.h) from its schema table.
 *
 * Per session run (3): a TF op on the main thread around HIP, HSA and OpenCL
 * API calls that launch a kernel; an async op started here and finished on
 * a worker thread; the OpenCL command's device times reported at its
 * completion (CLUST's callback); HC and CUDA device times with their own
 * clocks. At the end the HSA kernel times come in a batch (hsa_kernel_times
 * at queue destroy), an orphan API exit and async op end, and the instrumented cyg.c functions
 * (-finstrument-functions, liblttng-ust-cyg-profile) end with one that
 * calls exit() inside: an entry without its exit.
 */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "tp_all.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define RUNS 3
#define CL_DEVICE_SHIFT 7000000000ull /* the OpenCL device's clock: 7 s ahead of the host's */

void cyg_work(int n);
void cyg_never_returns(void);

static uint64_t ns_of(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void spin_us(unsigned us)
{
	uint64_t end = ns_of(CLOCK_MONOTONIC) + us * 1000ull;

	while (ns_of(CLOCK_MONOTONIC) < end)
		;
}

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int pending, done;

/* The worker thread finishes each run's async op (a TF async kernel's done callback). */
static void *worker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&mu);
	for (;;) {
		while (!pending && !done)
			pthread_cond_wait(&cv, &mu);
		if (!pending && done)
			break;
		pending--;
		pthread_mutex_unlock(&mu);
		spin_us(200);
		lttng_ust_tracepoint(tensorflowTracer, async_operation_end, "async_op", "/device:GPU:0",
				     "RecvTensor");
		pthread_mutex_lock(&mu);
	}
	pthread_mutex_unlock(&mu);
	return NULL;
}

struct launch {
	uint64_t start_rel, end_rel; /* HSA kernel times: ns since hsa_init */
};

int main(void)
{
	struct launch hsa[RUNS];
	uint64_t init_mono;
	uint16_t wg[3] = { 64, 1, 1 };
	uint32_t grid[3] = { 4096, 1, 1 };
	char op[32];
	pthread_t th;

	if (pthread_create(&th, NULL, worker, NULL))
		return 1;
	/* hsa_init, as hsa_call_stack and hsa_kernel_times see it: the kernel times count
	 * from the moment it returned */
	lttng_ust_tracepoint(interceptionTracer, function_entry, "hsa_api", "hsa_init");
	spin_us(50);
	init_mono = ns_of(CLOCK_MONOTONIC);
	lttng_ust_tracepoint(interceptionTracer, runtime_initialized, "hsa_api");
	lttng_ust_tracepoint(interceptionTracer, function_exit, "hsa_api", "hsa_init");
	for (int run = 1; run <= RUNS; run++) {
		uint64_t t0, t1;

		snprintf(op, sizeof(op), "MatMul_%d", run);
		lttng_ust_tracepoint(tensorflowTracer, session_start, "session", "session_run", run);
		lttng_ust_tracepoint(tensorflowTracer, operation_start, "operation", "/device:GPU:0", op);
		lttng_ust_tracepoint(hipTracer, function_entry, "hip_api", "hipLaunchKernel");
		lttng_ust_tracepoint(hsaTracer, function_entry, "hsa_api", "hsa_queue_store_write_index");
		spin_us(20);
		lttng_ust_tracepoint(hsaTracer, function_exit, "hsa_api", "hsa_queue_store_write_index");
		lttng_ust_tracepoint(hipTracer, function_exit, "hip_api", "hipLaunchKernel");
		/* the kernel runs now: HSA (relative to hsa_init) and HC (the host clock) times */
		t0 = ns_of(CLOCK_MONOTONIC);
		spin_us(300);
		t1 = ns_of(CLOCK_MONOTONIC);
		hsa[run - 1] = (struct launch){ t0 - init_mono, t1 - init_mono };
		lttng_ust_tracepoint(hcTracer, kernel_begin, "hc_kernel", t0, "matmul_kernel",
				     "matmul_kernel(float*, float*)", op, wg, grid);
		lttng_ust_tracepoint(hcTracer, kernel_end, "hc_kernel", t1, "matmul_kernel");
		/* a CUDA kernel: CUPTI-style times in microseconds since the epoch */
		uint64_t r0 = ns_of(CLOCK_REALTIME) / 1000;
		spin_us(100);
		uint64_t r1 = ns_of(CLOCK_REALTIME) / 1000;
		lttng_ust_tracepoint(cudaTracer, kernel_begin, "cuda_kernel", "sgemm_kernel", r0);
		lttng_ust_tracepoint(cudaTracer, kernel_end, "cuda_kernel", "sgemm_kernel", r1);
		/* an OpenCL command: its device times come with its completion callback */
		lttng_ust_tracepoint(openclTracer, function_entry, "clEnqueueNDRangeKernel", "opencl");
		spin_us(10);
		lttng_ust_tracepoint(openclTracer, function_exit, "clEnqueueNDRangeKernel", "opencl");
		uint64_t q = ns_of(CLOCK_MONOTONIC) + CL_DEVICE_SHIFT;
		spin_us(50);
		uint64_t s = ns_of(CLOCK_MONOTONIC) + CL_DEVICE_SHIFT;
		spin_us(200);
		uint64_t e = ns_of(CLOCK_MONOTONIC) + CL_DEVICE_SHIFT;
		lttng_ust_tracepoint(openclTracer, kernel_begin, "vadd", op, "opencl_kernel", s);
		lttng_ust_tracepoint(openclTracer, kernel_end, "vadd", "opencl_kernel", e);
		lttng_ust_tracepoint(openclTracer, clust_device_event, "vadd", "opencl_device", 0xabcul,
				     4592, q, q + 20000, s, e);
		lttng_ust_tracepoint(tensorflowTracer, operation_end, "operation", "/device:GPU:0", op);
		/* an async op: ends on the worker thread */
		lttng_ust_tracepoint(tensorflowTracer, async_operation_start, "async_op", "/device:GPU:0",
				     "RecvTensor");
		pthread_mutex_lock(&mu);
		pending++;
		pthread_cond_signal(&cv);
		pthread_mutex_unlock(&mu);
		lttng_ust_tracepoint(tensorflowTracer, rdv_send, "rendezvous", "edge_5_MatMul");
		spin_us(500);
		lttng_ust_tracepoint(tensorflowTracer, session_end, "session", "session_run", run);
	}
	pthread_mutex_lock(&mu);
	done = 1;
	pthread_cond_signal(&cv);
	pthread_mutex_unlock(&mu);
	pthread_join(th, NULL);
	/* hsa_kernel_times: the queue's kernel times, gathered at its destruction */
	for (int run = 1; run <= RUNS; run++) {
		snprintf(op, sizeof(op), "MatMul_%d", run);
		lttng_ust_tracepoint(interceptionTracer, kernel_begin, "kernels_interception", 0x7f00beefull,
				     "matmul_kernel", op, 0x1000ull, 0, hsa[run - 1].start_rel);
		lttng_ust_tracepoint(interceptionTracer, kernel_end, "kernels_interception", 0x7f00beefull,
				     "matmul_kernel", op, 0x1000ull, 0, hsa[run - 1].end_rel);
	}
	/* exits whose entries were never traced: an API call, an async op */
	lttng_ust_tracepoint(interceptionTracer, function_exit, "hsa_api", "hsa_shut_down");
	lttng_ust_tracepoint(tensorflowTracer, async_operation_end, "async_op", "/device:GPU:0",
			     "_Recv");
	cyg_work(3);
	cyg_never_returns(); /* exits inside: its func_entry has no func_exit */
	return 0;
}
