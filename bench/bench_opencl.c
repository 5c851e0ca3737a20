/* SPDX-License-Identifier: MIT */
/*
 * What the OpenCL interceptor costs (bench/bench_opencl.py drives it; see
 * BENCHMARKS.md "Capture from below").
 *
 *   bench_opencl calls [-n CALLS] [-r BATCHES]
 *     In one run, batches of calls through the interposed symbols (the
 *     preload library's wrappers when it is loaded) alternate with batches
 *     of the same calls through the ICD loader's own functions, taken with
 *     dlvsym (which the library does not interpose): clEnqueueNDRangeKernel
 *     of an empty kernel, clEnqueueWriteBuffer of 64 bytes, clFinish of an
 *     empty queue. Per call: the enqueue loop alone (wall time, and CPU time
 *     of the calling thread), and the loop with the clFinish that completes
 *     its commands (where their callbacks run).
 *   bench_opencl loop [-k KERNELS]
 *     A kernel-heavy loop (kernels of 2-3 ms on PoCL here, clFinish every 8): its
 *     wall ms and the CPU ms of the whole process over the loop.
 *
 * Output: one JSON line per result.
 */
#define _GNU_SOURCE /* dlvsym */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static const char *src =
	"__kernel void noop(__global float *a) { }\n"
	"__kernel void work(__global float *a, int n)\n"
	"{ int i = get_global_id(0); float x = a[i];\n"
	"  for (int k = 0; k < n; k++) x = x * 0.999f + 0.001f;\n"
	"  a[i] = x; }\n";

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* CPU time of the calling thread: what the call itself costs it, less the machine's
 * other load (a shared 2-core VM) and the time it waits for pocl's threads */
static int64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static double median(int64_t *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp64);
	return n % 2 ? (double)v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

#define CHECK(x)                                                                   \
	do {                                                                       \
		if ((x) != CL_SUCCESS) {                                           \
			fprintf(stderr, "bench_opencl: %s failed\n", #x);          \
			exit(3);                                                   \
		}                                                                  \
	} while (0)

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "calls";
	int n = 256, r = 201, kernels = 400;
	cl_platform_id plat;
	cl_device_id dev;
	cl_int err;
	void *h;
	__typeof__(&clEnqueueNDRangeKernel) raw_ndr;
	__typeof__(&clEnqueueWriteBuffer) raw_write;
	__typeof__(&clFinish) raw_finish;

	for (int i = 2; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "-n") == 0)
			n = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "-r") == 0)
			r = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "-k") == 0)
			kernels = atoi(argv[i + 1]);
	}
	CHECK(clGetPlatformIDs(1, &plat, NULL));
	CHECK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
	cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
	cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
	cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
	CHECK(clBuildProgram(prog, 1, &dev, NULL, NULL, NULL));
	cl_kernel knoop = clCreateKernel(prog, "noop", &err);
	cl_kernel kwork = clCreateKernel(prog, "work", &err);
	cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 1 << 18, NULL, &err);
	CHECK(clSetKernelArg(knoop, 0, sizeof(buf), &buf));
	CHECK(clSetKernelArg(kwork, 0, sizeof(buf), &buf));

	if (strcmp(mode, "loop") == 0) {
		size_t gws = 1 << 16;
		int iters = 50; /* about 2-3 ms a kernel on PoCL here */
		int64_t t0;
		struct rusage u0, u1;
		CHECK(clSetKernelArg(kwork, 1, sizeof(iters), &iters));
		CHECK(clEnqueueNDRangeKernel(q, kwork, 1, NULL, &gws, NULL, 0, NULL, NULL)); /* warm */
		CHECK(clFinish(q));
		getrusage(RUSAGE_SELF, &u0); /* every thread: the program's, pocl's, the tracer's */
		t0 = now_ns();
		for (int i = 0; i < kernels; i++) {
			CHECK(clEnqueueNDRangeKernel(q, kwork, 1, NULL, &gws, NULL, 0, NULL, NULL));
			if (i % 8 == 7)
				CHECK(clFinish(q));
		}
		CHECK(clFinish(q));
		t0 = now_ns() - t0;
		getrusage(RUSAGE_SELF, &u1);
		printf("{\"bench\":\"opencl_loop\",\"kernels\":%d,\"wall_ms\":%.3f,\"cpu_ms\":%.3f}\n",
		       kernels, t0 / 1e6,
		       ((u1.ru_utime.tv_sec - u0.ru_utime.tv_sec) + (u1.ru_stime.tv_sec - u0.ru_stime.tv_sec)) * 1e3 +
			       ((u1.ru_utime.tv_usec - u0.ru_utime.tv_usec) + (u1.ru_stime.tv_usec - u0.ru_stime.tv_usec)) / 1e3);
		return 0;
	}

	/* the ICD loader's own functions: dlvsym is not interposed */
	h = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_NOLOAD);
	raw_ndr = h ? (__typeof__(raw_ndr))dlvsym(h, "clEnqueueNDRangeKernel", "OPENCL_1.0") : NULL;
	raw_write = h ? (__typeof__(raw_write))dlvsym(h, "clEnqueueWriteBuffer", "OPENCL_1.0") : NULL;
	raw_finish = h ? (__typeof__(raw_finish))dlvsym(h, "clFinish", "OPENCL_1.0") : NULL;
	if (!raw_ndr || !raw_write || !raw_finish) {
		fprintf(stderr, "bench_opencl: no versioned OpenCL symbols\n");
		return 3;
	}
	{
		int64_t *e[2][3], *f[2][3], *u[2][3];
		size_t one = 1;
		char bytes[64] = { 0 };
		const char *names[3] = { "clEnqueueNDRangeKernel", "clEnqueueWriteBuffer", "clFinish" };

		for (int w = 0; w < 2; w++)
			for (int c = 0; c < 3; c++) {
				e[w][c] = calloc((size_t)r, sizeof(int64_t));
				f[w][c] = calloc((size_t)r, sizeof(int64_t));
				u[w][c] = calloc((size_t)r, sizeof(int64_t));
			}
		for (int b = 0; b < r + 1; b++) {
			for (int k = 0; k < 2; k++) {
				/* the order flips every batch: both see the same machine */
				int w = (b + k) % 2; /* 0: interposed, 1: raw */
				for (int c = 0; c < 3; c++) {
					int64_t t0 = now_ns(), c0 = cpu_ns(), t1, c1, t2;
					for (int i = 0; i < n; i++) {
						if (c == 0)
							err = w ? raw_ndr(q, knoop, 1, NULL, &one, NULL, 0, NULL, NULL)
								: clEnqueueNDRangeKernel(q, knoop, 1, NULL, &one, NULL, 0, NULL, NULL);
						else if (c == 1)
							err = w ? raw_write(q, buf, CL_FALSE, 0, sizeof(bytes), bytes, 0, NULL, NULL)
								: clEnqueueWriteBuffer(q, buf, CL_FALSE, 0, sizeof(bytes), bytes, 0, NULL, NULL);
						else
							err = w ? raw_finish(q) : clFinish(q);
						if (err != CL_SUCCESS)
							return 4;
					}
					t1 = now_ns();
					c1 = cpu_ns();
					CHECK(raw_finish(q));
					t2 = now_ns();
					if (b > 0) { /* the first round warms up */
						e[w][c][b - 1] = t1 - t0;
						f[w][c][b - 1] = t2 - t0;
						u[w][c][b - 1] = c1 - c0;
					}
				}
			}
		}
		for (int c = 0; c < 3; c++) {
			double mi = median(e[0][c], r) / n, mr = median(e[1][c], r) / n;
			double fi = median(f[0][c], r) / n, fr = median(f[1][c], r) / n;
			double ui = median(u[0][c], r) / n, ur = median(u[1][c], r) / n;
			printf("{\"bench\":\"opencl_call\",\"call\":\"%s\",\"calls\":%d,\"batches\":%d,"
			       "\"interposed_ns\":%.1f,\"raw_ns\":%.1f,\"added_ns\":%.1f,"
			       "\"cpu_interposed_ns\":%.1f,\"cpu_raw_ns\":%.1f,\"cpu_added_ns\":%.1f,"
			       "\"with_finish_interposed_ns\":%.1f,\"with_finish_raw_ns\":%.1f,"
			       "\"with_finish_added_ns\":%.1f}\n",
			       names[c], n, r, mi, mr, mi - mr, ui, ur, ui - ur, fi, fr, fi - fr);
		}
	}
	return 0;
}
