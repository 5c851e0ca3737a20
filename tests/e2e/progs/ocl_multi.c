/* SPDX-License-Identifier: MIT */
/*
 * A real OpenCL program for tests/e2e/test_opencl.py, run under the preload
 * library: three kernels, three queues (in-order with profiling asked, in-order
 * without, out-of-order made with properties), buffer commands of each kind,
 * events released at once, clFinish / clWaitForEvents / clFlush, inside steps
 * and zones of the C runtime (linked: libtftracer.so) that it never starts
 * itself unless given --init. It writes what it enqueued, in order, to a
 * manifest (JSON lines: name, queue, zone), and what its queue queries
 * answered, so the test can check the session against it.
 *
 * usage: ocl_multi MANIFEST [-s STEPS] [--init] [--threads N]
 */
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#define TFT_ENABLE
#include <CL/cl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tftracer/zone.h>

#define N 4096

static const char *src =
	"__kernel void vadd(__global const float *a, __global const float *b, __global float *c)\n"
	"{ int i = get_global_id(0); c[i] = a[i] + b[i]; }\n"
	"__kernel void vmul(__global const float *a, __global const float *b, __global float *c)\n"
	"{ int i = get_global_id(0); c[i] = a[i] * b[i]; }\n"
	"__kernel void saxpy(float k, __global const float *x, __global float *y)\n"
	"{ int i = get_global_id(0); y[i] = k * x[i] + y[i]; }\n";

static FILE *man;
static pthread_mutex_t man_lock = PTHREAD_MUTEX_INITIALIZER;
static cl_context ctx;
static cl_device_id dev;
static cl_program prog;

#define CHECK(x)                                                                            \
	do {                                                                                \
		cl_int e_ = (x);                                                            \
		if (e_ != CL_SUCCESS) {                                                     \
			fprintf(stderr, "ocl_multi: %s failed: %d (line %d)\n", #x, e_, __LINE__); \
			exit(3);                                                            \
		}                                                                           \
	} while (0)

/* One line of the manifest per command, in enqueue order (per thread). */
static void note(const char *name, int queue, const char *zone, int thread)
{
	pthread_mutex_lock(&man_lock);
	fprintf(man, "{\"name\":\"%s\",\"queue\":%d,\"zone\":\"%s\",\"thread\":%d}\n", name, queue, zone,
		thread);
	pthread_mutex_unlock(&man_lock);
}

struct work {
	int thread, steps;
	cl_command_queue q[3];
	int qord[3]; /* the queues' ordinals in this process (creation order) */
};

static void run(struct work *w)
{
	cl_int err;
	float host[N], pat = 1.5f, k = 2.0f;
	size_t gws = N, lws = 64;
	cl_mem a = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof(host), NULL, &err);
	cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof(host), NULL, &err);
	cl_mem c = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof(host), NULL, &err);
	cl_kernel kadd = clCreateKernel(prog, "vadd", &err);
	cl_kernel kmul = clCreateKernel(prog, "vmul", &err);
	cl_kernel ksax = clCreateKernel(prog, "saxpy", &err);

	for (int i = 0; i < N; i++)
		host[i] = (float)i;
	CHECK(clSetKernelArg(kadd, 0, sizeof(a), &a));
	CHECK(clSetKernelArg(kadd, 1, sizeof(b), &b));
	CHECK(clSetKernelArg(kadd, 2, sizeof(c), &c));
	CHECK(clSetKernelArg(kmul, 0, sizeof(a), &a));
	CHECK(clSetKernelArg(kmul, 1, sizeof(b), &b));
	CHECK(clSetKernelArg(kmul, 2, sizeof(c), &c));
	CHECK(clSetKernelArg(ksax, 0, sizeof(k), &k));
	CHECK(clSetKernelArg(ksax, 1, sizeof(a), &a));
	CHECK(clSetKernelArg(ksax, 2, sizeof(b), &b));
	for (int s = 0; s < w->steps; s++) {
		cl_event ev[2];
		void *p;
		if (w->thread == 0)
			tft_step_begin("train");
		{
			TFT_ZONE("forward");
			CHECK(clEnqueueWriteBuffer(w->q[0], a, CL_FALSE, 0, sizeof(host), host, 0, NULL, NULL));
			note("WriteBuffer", w->qord[0], "forward", w->thread);
			CHECK(clEnqueueFillBuffer(w->q[0], b, &pat, sizeof(pat), 0, sizeof(host), 0, NULL, NULL));
			note("FillBuffer", w->qord[0], "forward", w->thread);
			CHECK(clEnqueueNDRangeKernel(w->q[0], kadd, 1, NULL, &gws, &lws, 0, NULL, &ev[0]));
			note("vadd", w->qord[0], "forward", w->thread);
			CHECK(clReleaseEvent(ev[0])); /* released at once: the command is still traced */
			CHECK(clFinish(w->q[0]));
			CHECK(clEnqueueNDRangeKernel(w->q[1], kmul, 1, NULL, &gws, NULL, 0, NULL, NULL));
			note("vmul", w->qord[1], "forward", w->thread);
			CHECK(clFlush(w->q[1]));
		}
		{
			TFT_ZONE("backward");
			CHECK(clEnqueueNDRangeKernel(w->q[2], ksax, 1, NULL, &gws, &lws, 0, NULL, &ev[0]));
			note("saxpy", w->qord[2], "backward", w->thread);
			CHECK(clEnqueueNDRangeKernel(w->q[2], ksax, 1, NULL, &gws, &lws, 0, NULL, &ev[1]));
			note("saxpy", w->qord[2], "backward", w->thread);
			CHECK(clWaitForEvents(2, ev));
			CHECK(clReleaseEvent(ev[0]));
			CHECK(clReleaseEvent(ev[1]));
			CHECK(clEnqueueCopyBuffer(w->q[1], b, c, 0, 0, sizeof(host), 0, NULL, NULL));
			note("CopyBuffer", w->qord[1], "backward", w->thread);
			p = clEnqueueMapBuffer(w->q[1], c, CL_TRUE, CL_MAP_READ, 0, sizeof(host), 0, NULL, NULL, &err);
			CHECK(err);
			note("MapBuffer", w->qord[1], "backward", w->thread);
			CHECK(clEnqueueUnmapMemObject(w->q[1], c, p, 0, NULL, NULL));
			note("UnmapMemObject", w->qord[1], "backward", w->thread);
			CHECK(clEnqueueReadBuffer(w->q[1], c, CL_TRUE, 0, sizeof(host), host, 0, NULL, NULL));
			note("ReadBuffer", w->qord[1], "backward", w->thread);
		}
		/* outside any zone: no op */
		CHECK(clEnqueueMarkerWithWaitList(w->q[1], 0, NULL, NULL));
		note("Marker", w->qord[1], "", w->thread);
		CHECK(clFinish(w->q[1]));
		CHECK(clFinish(w->q[2]));
		if (w->thread == 0)
			tft_step_end();
	}
	clReleaseKernel(kadd);
	clReleaseKernel(kmul);
	clReleaseKernel(ksax);
	clReleaseMemObject(a);
	clReleaseMemObject(b);
	clReleaseMemObject(c);
}

static int qcount;

static void make_queues(struct work *w)
{
	cl_int err;
	cl_queue_properties ooo[] = { CL_QUEUE_PROPERTIES, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, 0 };

	w->q[0] = clCreateCommandQueue(ctx, dev, CL_QUEUE_PROFILING_ENABLE, &err);
	CHECK(err);
	w->qord[0] = qcount++;
	w->q[1] = clCreateCommandQueue(ctx, dev, 0, &err);
	CHECK(err);
	w->qord[1] = qcount++;
	w->q[2] = clCreateCommandQueueWithProperties(ctx, dev, ooo, &err);
	CHECK(err);
	w->qord[2] = qcount++;
}

static void *thread_main(void *p)
{
	run(p);
	return NULL;
}

int main(int argc, char **argv)
{
	int steps = 3, init = 0, threads = 1;
	cl_platform_id plat;
	cl_int err;
	cl_command_queue_properties props = 0;
	cl_queue_properties arr[8];
	size_t arr_size = 0;
	struct work w[4];
	pthread_t th[4];

	if (argc < 2) {
		fprintf(stderr, "usage: ocl_multi MANIFEST [-s STEPS] [--init] [--threads N]\n");
		return 2;
	}
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "-s") == 0 && i + 1 < argc)
			steps = atoi(argv[++i]);
		else if (strcmp(argv[i], "--init") == 0)
			init = 1;
		else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
			threads = atoi(argv[++i]);
	}
	if (threads < 1 || threads > 4)
		threads = 1;
	if (init && tft_init(NULL) != 0) {
		fprintf(stderr, "ocl_multi: tft_init failed\n");
		return 4;
	}
	man = fopen(argv[1], "w");
	if (!man)
		return 5;
	CHECK(clGetPlatformIDs(1, &plat, NULL));
	CHECK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
	ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
	CHECK(err);
	prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
	CHECK(err);
	CHECK(clBuildProgram(prog, 1, &dev, NULL, NULL, NULL));
	for (int t = 0; t < threads; t++) {
		w[t].thread = t;
		w[t].steps = steps;
		make_queues(&w[t]);
	}
	/* What the program sees of its queues: profiling only where it asked for it. */
	CHECK(clGetCommandQueueInfo(w[0].q[1], CL_QUEUE_PROPERTIES, sizeof(props), &props, NULL));
	fprintf(man, "{\"q1_profiling\":%d}\n", (props & CL_QUEUE_PROFILING_ENABLE) != 0);
	CHECK(clGetCommandQueueInfo(w[0].q[0], CL_QUEUE_PROPERTIES, sizeof(props), &props, NULL));
	fprintf(man, "{\"q0_profiling\":%d}\n", (props & CL_QUEUE_PROFILING_ENABLE) != 0);
	CHECK(clGetCommandQueueInfo(w[0].q[2], CL_QUEUE_PROPERTIES_ARRAY, sizeof(arr), arr, &arr_size));
	fprintf(man, "{\"q2_props_array\":[");
	for (size_t i = 0; i < arr_size / sizeof(arr[0]); i++)
		fprintf(man, "%s%llu", i ? "," : "", (unsigned long long)arr[i]);
	fprintf(man, "]}\n");
	if (threads == 1) {
		run(&w[0]);
	} else {
		for (int t = 0; t < threads; t++)
			pthread_create(&th[t], NULL, thread_main, &w[t]);
		for (int t = 0; t < threads; t++)
			pthread_join(th[t], NULL);
	}
	for (int t = 0; t < threads; t++)
		for (int i = 0; i < 3; i++)
			clReleaseCommandQueue(w[t].q[i]);
	clReleaseProgram(prog);
	clReleaseContext(ctx);
	fclose(man);
	if (init)
		tft_shutdown();
	return 0;
}
