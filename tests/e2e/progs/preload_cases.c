/* SPDX-License-Identifier: MIT */
/*
 * Programs the preload library must survive (tests/e2e/test_preload.py), one
 * per mode; each prints what it did on stdout, one line, and exits with a
 * status of its own:
 *   fork     OpenCL work, a fork child that records zones and exits 7, more work
 *   threads  8 waves of 4 threads that start, enqueue on a shared queue and end
 *   exec     OpenCL work, then exec of itself in mode exec2 (more work, exit 9)
 *   none     uses neither OpenCL nor the runtime; exits 5
 *   signal   zones recorded from a 1 ms SIGALRM handler while enqueuing
 *   kill     OpenCL work, tft_flush, then SIGKILL from itself
 * Linked with libOpenCL and libtftracer.so; never calls tft_init.
 */
#define CL_TARGET_OPENCL_VERSION 300
#define TFT_ENABLE
#include <CL/cl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <tftracer/zone.h>
#include <unistd.h>

#define N 1024

static const char *src =
	"__kernel void inc(__global float *a) { int i = get_global_id(0); a[i] += 1.0f; }\n";

static cl_context ctx;
static cl_device_id dev;
static cl_command_queue q;
static cl_kernel k;
static cl_mem buf;
static pthread_mutex_t klock = PTHREAD_MUTEX_INITIALIZER; /* clSetKernelArg is not thread-safe */

static void die(const char *what)
{
	fprintf(stderr, "preload_cases: %s failed\n", what);
	exit(3);
}

static void setup(void)
{
	cl_platform_id plat;
	cl_int err;
	cl_program prog;

	if (clGetPlatformIDs(1, &plat, NULL) || clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL))
		die("platform");
	ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
	q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
	prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
	if (err || clBuildProgram(prog, 1, &dev, NULL, NULL, NULL))
		die("build");
	k = clCreateKernel(prog, "inc", &err);
	buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, N * sizeof(float), NULL, &err);
	if (err || clSetKernelArg(k, 0, sizeof(buf), &buf))
		die("kernel");
}

static const struct tft_site z_before_fork = { "before_fork", NULL, NULL, 0, 0 };
static const struct tft_site z_after_fork = { "after_fork", NULL, NULL, 0, 0 };
static const struct tft_site z_in_thread = { "in_thread", NULL, NULL, 0, 0 };
static const struct tft_site z_before_exec = { "before_exec", NULL, NULL, 0, 0 };
static const struct tft_site z_after_exec = { "after_exec", NULL, NULL, 0, 0 };
static const struct tft_site z_main_loop = { "main_loop", NULL, NULL, 0, 0 };
static const struct tft_site z_before_kill = { "before_kill", NULL, NULL, 0, 0 };

/* n kernels in a zone; returns the commands enqueued */
static int work(int n, const struct tft_site *site)
{
	size_t gws = N;
	struct tft_zone z = tft_zone_begin(site);

	for (int i = 0; i < n; i++) {
		pthread_mutex_lock(&klock);
		if (clEnqueueNDRangeKernel(q, k, 1, NULL, &gws, NULL, 0, NULL, NULL))
			die("enqueue");
		pthread_mutex_unlock(&klock);
	}
	if (clFinish(q))
		die("finish");
	tft_zone_end(z);
	return n;
}

static void *thread_main(void *p)
{
	int *n = p;

	*n = work(5, &z_in_thread);
	return NULL;
}

static volatile sig_atomic_t ticks;

static void on_alarm(int sig)
{
	(void)sig;
	TFT_ZONE("in_handler");
	ticks++;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	int n = 0;

	if (strcmp(mode, "none") == 0) {
		volatile double x = 0;
		for (int i = 0; i < 1000000; i++)
			x += i * 0.5;
		printf("none %.0f\n", x);
		return 5;
	}
	setup();
	if (strcmp(mode, "fork") == 0) {
		int st = 0;
		pid_t pid;
		n += work(10, &z_before_fork);
		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			/* the child: the parent's session is not its own; its zones go nowhere */
			for (int i = 0; i < 100; i++) {
				TFT_ZONE("in_child");
			}
			_exit(7);
		}
		n += work(10, &z_after_fork);
		waitpid(pid, &st, 0);
		printf("fork %d child %d\n", n, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		return 0;
	}
	if (strcmp(mode, "threads") == 0) {
		for (int wave = 0; wave < 8; wave++) {
			pthread_t th[4];
			int got[4];
			for (int t = 0; t < 4; t++)
				pthread_create(&th[t], NULL, thread_main, &got[t]);
			for (int t = 0; t < 4; t++) {
				pthread_join(th[t], NULL);
				n += got[t];
			}
		}
		printf("threads %d\n", n);
		return 0;
	}
	if (strcmp(mode, "exec") == 0) {
		n += work(12, &z_before_exec);
		printf("exec %d\n", n);
		fflush(stdout);
		execl("/proc/self/exe", argv[0], "exec2", (char *)NULL);
		die("exec");
	}
	if (strcmp(mode, "exec2") == 0) {
		n += work(6, &z_after_exec);
		printf("exec2 %d\n", n);
		return 9;
	}
	if (strcmp(mode, "signal") == 0) {
		struct itimerval it = { { 0, 1000 }, { 0, 1000 } };
		signal(SIGALRM, on_alarm);
		setitimer(ITIMER_REAL, &it, NULL);
		for (int i = 0; i < 40 || ticks < 20; i++)
			n += work(10, &z_main_loop);
		memset(&it, 0, sizeof(it));
		setitimer(ITIMER_REAL, &it, NULL);
		printf("signal %d ticks %d\n", n, (int)ticks);
		return 0;
	}
	if (strcmp(mode, "kill") == 0) {
		n += work(20, &z_before_kill);
		printf("kill %d flush %d\n", n, tft_flush(10000));
		fflush(stdout);
		raise(SIGKILL);
	}
	fprintf(stderr, "usage: preload_cases fork|threads|exec|none|signal|kill\n");
	return 2;
}
