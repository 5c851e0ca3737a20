/* SPDX-License-Identifier: MIT */
/*
 * An OpenCL program that does not link libOpenCL: it dlopen()s the ICD loader
 * (RTLD_LOCAL) and takes every function with dlsym, as plugins and Python
 * extensions do. For tests/e2e/test_opencl.py: the preload library must
 * still see its queues and commands. Prints the number of commands it
 * enqueued.
 *
 * usage: ocl_dlopen [ITERATIONS]
 */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#define N 1024

static const char *src =
	"__kernel void twice(__global float *a) { int i = get_global_id(0); a[i] *= 2.0f; }\n";

#define FN(name) static __typeof__(&name) p_##name;
FN(clGetPlatformIDs) FN(clGetDeviceIDs) FN(clCreateContext) FN(clCreateCommandQueueWithProperties)
FN(clCreateProgramWithSource) FN(clBuildProgram) FN(clCreateKernel) FN(clCreateBuffer)
FN(clSetKernelArg) FN(clEnqueueNDRangeKernel) FN(clEnqueueReadBuffer) FN(clEnqueueWriteBuffer)
FN(clFinish)
#undef FN

int main(int argc, char **argv)
{
	int iters = argc > 1 ? atoi(argv[1]) : 5, n = 0;
	void *h = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
	cl_platform_id plat;
	cl_device_id dev;
	cl_int err;
	float host[N];
	size_t gws = N;

	if (!h) {
		fprintf(stderr, "ocl_dlopen: %s\n", dlerror());
		return 3;
	}
#define GET(name)                                                                  \
	if (!(p_##name = (__typeof__(p_##name))dlsym(h, #name))) {                  \
		fprintf(stderr, "ocl_dlopen: no %s\n", #name);                      \
		return 3;                                                           \
	}
	GET(clGetPlatformIDs) GET(clGetDeviceIDs) GET(clCreateContext)
	GET(clCreateCommandQueueWithProperties) GET(clCreateProgramWithSource) GET(clBuildProgram)
	GET(clCreateKernel) GET(clCreateBuffer) GET(clSetKernelArg) GET(clEnqueueNDRangeKernel)
	GET(clEnqueueReadBuffer) GET(clEnqueueWriteBuffer) GET(clFinish)
#undef GET
	if (p_clGetPlatformIDs(1, &plat, NULL) != CL_SUCCESS ||
	    p_clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL) != CL_SUCCESS)
		return 3;
	cl_context ctx = p_clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
	cl_command_queue q = p_clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
	cl_program prog = p_clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
	if (err != CL_SUCCESS || p_clBuildProgram(prog, 1, &dev, NULL, NULL, NULL) != CL_SUCCESS)
		return 3;
	cl_kernel k = p_clCreateKernel(prog, "twice", &err);
	cl_mem b = p_clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof(host), NULL, &err);
	p_clSetKernelArg(k, 0, sizeof(b), &b);
	for (int i = 0; i < N; i++)
		host[i] = 1.0f;
	for (int i = 0; i < iters; i++) {
		host[0] = 1.0f;
		if (p_clEnqueueWriteBuffer(q, b, CL_FALSE, 0, sizeof(host), host, 0, NULL, NULL) ||
		    p_clEnqueueNDRangeKernel(q, k, 1, NULL, &gws, NULL, 0, NULL, NULL) ||
		    p_clEnqueueReadBuffer(q, b, CL_TRUE, 0, sizeof(host), host, 0, NULL, NULL))
			return 4;
		n += 3;
	}
	p_clFinish(q);
	printf("%d\n", n);
	return host[0] == 2.0f ? 0 : 5;
}
