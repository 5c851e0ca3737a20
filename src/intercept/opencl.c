/* SPDX-License-Identifier: MIT */
/*
 * OpenCL from below (docs/intercept.md): the API calls of the ICD loader,
 * interposed. Each enqueue/finish/wait/flush is a zone on the calling thread
 * named after the API function; each enqueued command gets an event of ours
 * (a reference taken, so the program may release its own at once) and a
 * completion callback that reads its device times. The drain thread collects
 * completed commands every cycle (a runtime source): a slice per command on
 * a gpu_stream track per device and queue, named by the kernel function,
 * converted to the host clock with an offset measured from the device's
 * QUEUED time of each command (inside its enqueue call), its error stated;
 * a flow from the enqueue to the command; the innermost zone open at the
 * enqueue as the arg `op`. Queues are created with profiling on, the
 * program's other properties kept, and answer queries as the program made them.
 */
#include <dlfcn.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "intercept/preload.h"

#if defined(TFT_HAVE_OPENCL)

#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS /* clCreateCommandQueue, clEnqueueTask: programs use them */
#include <CL/cl.h>

#include "core/grow.h"
#include "core/status.h"
#include "intercept/ptrmap.h"
#include "runtime/source.h"

/* Flow ids of launches: a namespace of their own, apart from the program's flow ids. */
#define FLOW_NS 0x4f434c0000000000ull /* "OCL" */
#define CMD_MAX (1u << 18)          /* commands in flight or waiting for the drain, at most */
#define DEVICES_MAX 16u
#define NAME_CACHE 256u

/* ---- the real functions -------------------------------------------------------------- */

#define OCL_FUNCS(X)                                                                      \
	X(clGetPlatformIDs) X(clCreateCommandQueue) X(clCreateCommandQueueWithProperties) \
	X(clGetCommandQueueInfo) X(clCreateKernel) X(clCreateKernelsInProgram)            \
	X(clCloneKernel) X(clGetKernelInfo) X(clGetDeviceInfo) X(clRetainEvent)           \
	X(clReleaseEvent) X(clSetEventCallback) X(clGetEventProfilingInfo)                \
	X(clGetImageInfo) X(clEnqueueNDRangeKernel) X(clEnqueueTask)                      \
	X(clEnqueueReadBuffer) X(clEnqueueWriteBuffer) X(clEnqueueCopyBuffer)             \
	X(clEnqueueReadBufferRect) X(clEnqueueWriteBufferRect)                            \
	X(clEnqueueCopyBufferRect) X(clEnqueueFillBuffer) X(clEnqueueReadImage)           \
	X(clEnqueueWriteImage) X(clEnqueueCopyImage) X(clEnqueueFillImage)                \
	X(clEnqueueCopyImageToBuffer) X(clEnqueueCopyBufferToImage)                       \
	X(clEnqueueMapBuffer) X(clEnqueueMapImage) X(clEnqueueUnmapMemObject)             \
	X(clEnqueueMigrateMemObjects) X(clEnqueueMarkerWithWaitList)                      \
	X(clEnqueueBarrierWithWaitList) X(clFinish) X(clFlush) X(clWaitForEvents)

#define DECL_REAL(f) __typeof__(&f) f;
static struct {
	OCL_FUNCS(DECL_REAL)
} real;
#undef DECL_REAL

static void *lib; /* the OpenCL library the real functions come from (a handle of ours) */

/* The real function `name`: from the ICD loader (wherever it was loaded, even
 * RTLD_LOCAL by a Python extension), else the next definition after ours. */
static void *resolve(const char *name)
{
	void *h = __atomic_load_n(&lib, __ATOMIC_ACQUIRE), *p = NULL;

	if (!h) {
		h = tft_preload_real_dlopen("libOpenCL.so.1", RTLD_LAZY | RTLD_NOLOAD);
		if (!h)
			h = tft_preload_real_dlopen("libOpenCL.so", RTLD_LAZY | RTLD_NOLOAD);
		if (h)
			__atomic_store_n(&lib, h, __ATOMIC_RELEASE);
	}
	if (h)
		p = tft_preload_real_dlsym(h, name);
	if (!p)
		p = tft_preload_real_dlsym(RTLD_NEXT, name);
	return p;
}

#define REAL(f)                                                                                \
	(__atomic_load_n(&real.f, __ATOMIC_RELAXED)                                            \
		 ? __atomic_load_n(&real.f, __ATOMIC_RELAXED)                                  \
		 : (__atomic_store_n(&real.f, (__typeof__(real.f))resolve(#f), __ATOMIC_RELAXED), \
		    __atomic_load_n(&real.f, __ATOMIC_RELAXED)))

/* ---- commands ---------------------------------------------------------------------------- */

enum cmd_kind {
	K_KERNEL, K_TASK, K_READ_BUFFER, K_WRITE_BUFFER, K_COPY_BUFFER, K_READ_BUFFER_RECT,
	K_WRITE_BUFFER_RECT, K_COPY_BUFFER_RECT, K_FILL_BUFFER, K_READ_IMAGE, K_WRITE_IMAGE,
	K_COPY_IMAGE, K_FILL_IMAGE, K_COPY_IMAGE_TO_BUFFER, K_COPY_BUFFER_TO_IMAGE, K_MAP_BUFFER,
	K_MAP_IMAGE, K_UNMAP, K_MIGRATE, K_MARKER, K_BARRIER,
};

/* Device slice names of the commands that are not kernels. */
static const char *const cmd_names[] = {
	[K_KERNEL] = "kernel", [K_TASK] = "task", [K_READ_BUFFER] = "ReadBuffer",
	[K_WRITE_BUFFER] = "WriteBuffer", [K_COPY_BUFFER] = "CopyBuffer",
	[K_READ_BUFFER_RECT] = "ReadBufferRect", [K_WRITE_BUFFER_RECT] = "WriteBufferRect",
	[K_COPY_BUFFER_RECT] = "CopyBufferRect", [K_FILL_BUFFER] = "FillBuffer",
	[K_READ_IMAGE] = "ReadImage", [K_WRITE_IMAGE] = "WriteImage", [K_COPY_IMAGE] = "CopyImage",
	[K_FILL_IMAGE] = "FillImage", [K_COPY_IMAGE_TO_BUFFER] = "CopyImageToBuffer",
	[K_COPY_BUFFER_TO_IMAGE] = "CopyBufferToImage", [K_MAP_BUFFER] = "MapBuffer",
	[K_MAP_IMAGE] = "MapImage", [K_UNMAP] = "UnmapMemObject", [K_MIGRATE] = "MigrateMemObjects",
	[K_MARKER] = "Marker", [K_BARRIER] = "Barrier",
};

struct ocl_queue;

enum { ST_PENDING = 0, ST_TIMED = 1, ST_UNTIMED = 2 };

/*
 * One enqueued command, from its enqueue to its slice. Filled by the
 * enqueuing thread, pushed on `issued` (release), timed by the completion
 * callback (state: release), written and freed by the drain thread.
 */
struct ocl_cmd {
	struct ocl_cmd *next;        /* issued list / free list link */
	struct ocl_cmd *qnext;       /* the drain's per-queue list */
	struct ocl_queue *q;         /* borrowed: queues are never freed */
	cl_event ev;                 /* our reference to the command's event */
	const char *name;            /* borrowed: interned kernel name, or a static command name */
	const struct tft_site *op;   /* borrowed: innermost zone at the enqueue, NULL if none */
	uint64_t tick0, tick1;       /* runtime ticks just before / after the real enqueue call */
	uint64_t seq;                /* flow id (low bits) */
	uint64_t bytes;              /* bytes moved (transfers), 0 if none or unknown */
	size_t gws[3], lws[3];
	uint32_t kind, dims;
	int has_lws;
	int sampled;                 /* the drain: its QUEUED time is in its device's clock estimate */
	cl_ulong dev[4];             /* device QUEUED, SUBMIT, START, END (ns, device clock) */
	_Atomic int state;           /* ST_*: set last by the callback */
};

/* A queue of the program (never freed: a command may outlive it). */
struct ocl_queue {
	cl_command_queue handle;
	cl_device_id device;
	char dev_name[96];
	uint32_t ordinal;             /* queue number in the process (the track's tid) */
	int ooo;                      /* out-of-order execution */
	int user_profiling;           /* the program asked for CL_QUEUE_PROFILING_ENABLE */
	cl_queue_properties *user_props; /* owned: the program's property list (WithProperties) */
	size_t user_props_bytes;
	struct ocl_queue *all_next;   /* the list of every queue */
	/* the drain thread only: */
	uint32_t track, track_gen;
	struct ocl_cmd *head, *tail;  /* commands issued, not yet written */
};

/* Per device, the drain's clock offset estimate: device ns - host ns is in [lo, hi]. */
struct ocl_device {
	cl_device_id id;
	const char *name;             /* borrowed from a queue */
	int have;
	int64_t lo, hi;
	uint64_t samples, resyncs;
	uint64_t said_samples;        /* samples when its meta was last written */
};

static struct {
	int on;                          /* interception set up */
	struct ocl_cmd *arena;           /* owned (mmap): CMD_MAX commands */
	_Atomic uint32_t arena_used;
	struct ocl_cmd *_Atomic free_list; /* freed by the drain; taken whole by enqueuers */
	struct ocl_cmd *_Atomic issued;    /* enqueued, not yet seen by the drain */
	struct ocl_queue *_Atomic queues;  /* every queue (push only) */
	_Atomic uint32_t nqueues;
	_Atomic uint64_t seq;
	_Atomic uint64_t dropped;          /* commands not timed: no record left */
	pthread_key_t key;                 /* returns a dying thread's free records */
	struct tft_ptrmap queue_map;       /* cl_command_queue -> struct ocl_queue */
	struct tft_ptrmap kernel_map;      /* cl_kernel -> interned name */
	struct tft_strset names;
	/* the drain thread only: */
	struct ocl_device devs[DEVICES_MAX];
	uint32_t ndevs;
	struct ocl_cmd **ready;            /* owned: scratch for one queue's commands to write */
	uint32_t cap_ready;
	struct { const char *p; uint32_t id, gen; } name_cache[NAME_CACHE];
	uint64_t rep_dropped;
} g;

static __thread struct ocl_cmd *tls_free; /* this thread's free records */
static __thread int tls_inside;           /* inside a wrapper (never recurse) */

/* Push a list of free records on the shared free list. */
static void push_free(struct ocl_cmd *l)
{
	struct ocl_cmd *last, *head;

	if (!l)
		return;
	for (last = l; last->next; last = last->next)
		;
	head = atomic_load_explicit(&g.free_list, memory_order_relaxed);
	do
		last->next = head;
	while (!atomic_compare_exchange_weak_explicit(&g.free_list, &head, l, memory_order_release,
						      memory_order_relaxed));
}

/* A thread ends: its free records go back (the key's value is &tls_free, still valid here). */
static void give_back_free(void *p)
{
	struct ocl_cmd **mine = p;

	push_free(*mine);
	*mine = NULL;
}

static struct ocl_cmd *cmd_alloc(void)
{
	static __thread int keyed;
	struct ocl_cmd *c = tls_free;
	uint32_t i;

	if (tft_unlikely(!keyed)) {
		pthread_setspecific(g.key, &tls_free); /* once per thread */
		keyed = 1;
	}
	if (!c) /* Acquire: pairs with the release CAS that pushed the list (push_free). */
		c = atomic_exchange_explicit(&g.free_list, NULL, memory_order_acquire);
	if (c) {
		tls_free = c->next;
		return c;
	}
	i = atomic_fetch_add_explicit(&g.arena_used, 1, memory_order_relaxed);
	if (i >= CMD_MAX) {
		atomic_fetch_sub_explicit(&g.arena_used, 1, memory_order_relaxed);
		return NULL;
	}
	return &g.arena[i];
}

/* ---- queues and kernels --------------------------------------------------------------- */

static struct ocl_queue *queue_add(cl_command_queue h, cl_device_id dev, cl_command_queue_properties props,
				   int user_profiling, const cl_queue_properties *user_props)
{
	struct ocl_queue *q = calloc(1, sizeof(*q)), *head;
	size_t n = 0;

	if (!q)
		return NULL;
	q->handle = h;
	q->device = dev;
	q->ooo = (props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) != 0;
	q->user_profiling = user_profiling;
	q->track = TFT_NONE;
	if (REAL(clGetDeviceInfo) &&
	    real.clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof(q->dev_name) - 1, q->dev_name, NULL) != CL_SUCCESS)
		q->dev_name[0] = 0;
	q->dev_name[sizeof(q->dev_name) - 1] = 0;
	if (!q->dev_name[0])
		snprintf(q->dev_name, sizeof(q->dev_name), "device %p", (void *)dev);
	if (user_props) {
		while (user_props[n])
			n += 2;
		q->user_props_bytes = (n + 1) * sizeof(*user_props);
		q->user_props = malloc(q->user_props_bytes);
		if (q->user_props)
			memcpy(q->user_props, user_props, q->user_props_bytes);
	}
	q->ordinal = atomic_fetch_add_explicit(&g.nqueues, 1, memory_order_relaxed);
	tft_ptrmap_put(&g.queue_map, (uintptr_t)h, q);
	/* Release: the queue is complete before the drain (acquire) walks to it. */
	head = atomic_load_explicit(&g.queues, memory_order_relaxed);
	do
		q->all_next = head;
	while (!atomic_compare_exchange_weak_explicit(&g.queues, &head, q, memory_order_release,
						      memory_order_relaxed));
	return q;
}

/* The queue a command goes to; one the program made before we saw it is learnt now. */
static struct ocl_queue *queue_of(cl_command_queue h)
{
	struct ocl_queue *q = tft_ptrmap_get(&g.queue_map, (uintptr_t)h);
	cl_device_id dev = NULL;
	cl_command_queue_properties props = 0;

	if (q || !h || !REAL(clGetCommandQueueInfo))
		return q;
	if (real.clGetCommandQueueInfo(h, CL_QUEUE_DEVICE, sizeof(dev), &dev, NULL) != CL_SUCCESS)
		return NULL;
	real.clGetCommandQueueInfo(h, CL_QUEUE_PROPERTIES, sizeof(props), &props, NULL);
	return queue_add(h, dev, props, (props & CL_QUEUE_PROFILING_ENABLE) != 0, NULL);
}

static const char *kernel_name(cl_kernel k)
{
	const char *n = tft_ptrmap_get(&g.kernel_map, (uintptr_t)k);
	char buf[256];
	size_t len = 0;

	if (n || !k)
		return n ? n : "kernel";
	if (REAL(clGetKernelInfo) &&
	    real.clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, sizeof(buf), buf, &len) == CL_SUCCESS &&
	    len > 0) {
		n = tft_strset_intern(&g.names, buf, strnlen(buf, sizeof(buf) - 1));
		if (n)
			tft_ptrmap_put(&g.kernel_map, (uintptr_t)k, (void *)n);
	}
	return n ? n : "kernel";
}

static void kernel_learn(cl_kernel k, const char *name)
{
	const char *n;

	if (!k)
		return;
	if (!name) {
		kernel_name(k);
		return;
	}
	n = tft_strset_intern(&g.names, name, strlen(name));
	if (n)
		tft_ptrmap_put(&g.kernel_map, (uintptr_t)k, (void *)n);
}

/* ---- the wrappers' common path ---------------------------------------------------------- */

/* API zone sites: one per recorded API function. */
#define API_FUNCS(X)                                                                             \
	X(clEnqueueNDRangeKernel) X(clEnqueueTask) X(clEnqueueReadBuffer) X(clEnqueueWriteBuffer) \
	X(clEnqueueCopyBuffer) X(clEnqueueReadBufferRect) X(clEnqueueWriteBufferRect)             \
	X(clEnqueueCopyBufferRect) X(clEnqueueFillBuffer) X(clEnqueueReadImage)                   \
	X(clEnqueueWriteImage) X(clEnqueueCopyImage) X(clEnqueueFillImage)                        \
	X(clEnqueueCopyImageToBuffer) X(clEnqueueCopyBufferToImage) X(clEnqueueMapBuffer)         \
	X(clEnqueueMapImage) X(clEnqueueUnmapMemObject) X(clEnqueueMigrateMemObjects)             \
	X(clEnqueueMarkerWithWaitList) X(clEnqueueBarrierWithWaitList) X(clFinish) X(clFlush)     \
	X(clWaitForEvents)
#define API_SITE(f) static const struct tft_site site_##f = { #f, "opencl.api", NULL, 0, 0 };
API_FUNCS(API_SITE)
#undef API_SITE
static const struct tft_site flow_site = { "launch", "opencl", NULL, 0, 0 };

/* One intercepted call in progress. */
struct icall {
	struct tft_zone z;
	struct ocl_cmd *cmd;   /* NULL: an API slice only */
	cl_event ev;           /* the event the real call fills when we time the command */
	cl_event *evp;         /* what the real call gets: &ev, or the program's pointer */
};

/* The functions the interceptor calls itself, found once (false: not timed). */
static bool helpers(void)
{
	static _Atomic int ok; /* 1 found, -1 missing */
	int v = atomic_load_explicit(&ok, memory_order_acquire);

	if (tft_likely(v))
		return v > 0;
	v = REAL(clRetainEvent) && REAL(clReleaseEvent) && REAL(clSetEventCallback) &&
			    REAL(clGetEventProfilingInfo)
		    ? 1
		    : -1;
	atomic_store_explicit(&ok, v, memory_order_release);
	return v > 0;
}

/* Whether this call is recorded; the first call of the process may claim the session. */
static inline bool tracing(void)
{
	if (!g.on || tls_inside)
		return false;
	if (tft_unlikely(!tft_is_tracing()))
		return tft_preload_claim() && tft_is_tracing();
	return true;
}

/* An API call that is not a command (finish, flush, wait). */
static inline bool api_begin(struct icall *c, const struct tft_site *site)
{
	if (!tracing())
		return false;
	tls_inside = 1;
	c->z = tft_zone_begin(site);
	return true;
}

static inline void api_end(struct icall *c)
{
	tft_zone_end(c->z);
	tls_inside = 0;
}

/* An enqueue: the zone, a command record, our own event for it. */
static inline bool cmd_begin(struct icall *c, const struct tft_site *site, cl_command_queue qh,
			     cl_event *user_ev)
{
	const struct tft_site *op;
	struct ocl_queue *q;
	struct ocl_cmd *cmd;

	c->evp = user_ev;
	c->cmd = NULL;
	if (!tracing())
		return false;
	tls_inside = 1;
	op = tft_rt_innermost_site(); /* before our own zone opens */
	q = queue_of(qh);
	c->z = tft_zone_begin(site);
	cmd = q && helpers() ? cmd_alloc() : NULL;
	if (!cmd) {
		atomic_fetch_add_explicit(&g.dropped, 1, memory_order_relaxed);
		return true;
	}
	cmd->q = q;
	cmd->op = op;
	cmd->seq = atomic_fetch_add_explicit(&g.seq, 1, memory_order_relaxed) + 1;
	cmd->bytes = 0;
	cmd->dims = 0;
	cmd->has_lws = 0;
	cmd->sampled = 0;
	cmd->ev = NULL;
	atomic_store_explicit(&cmd->state, ST_PENDING, memory_order_relaxed);
	/* The launch flow starts here, before the command exists on the device. */
	tft_flow_begin(&flow_site, FLOW_NS | cmd->seq);
	cmd->tick0 = tft_rt_now_tick();
	c->cmd = cmd;
	c->ev = NULL;
	c->evp = &c->ev;
	return true;
}

static void CL_CALLBACK on_complete(cl_event ev, cl_int status, void *ud)
{
	struct ocl_cmd *cmd = ud;
	int st = ST_UNTIMED;

	(void)ev;
	if (status == CL_COMPLETE && real.clGetEventProfilingInfo) {
		static const cl_profiling_info what[4] = { CL_PROFILING_COMMAND_QUEUED,
							   CL_PROFILING_COMMAND_SUBMIT,
							   CL_PROFILING_COMMAND_START,
							   CL_PROFILING_COMMAND_END };
		st = ST_TIMED;
		for (int i = 0; i < 4; i++)
			if (real.clGetEventProfilingInfo(cmd->ev, what[i], sizeof(cl_ulong), &cmd->dev[i],
							 NULL) != CL_SUCCESS)
				st = ST_UNTIMED;
	}
	/* Release: the device times are written before the drain (acquire) reads them. */
	atomic_store_explicit(&cmd->state, st, memory_order_release);
}

/* After the real enqueue returned rc: hand the command to the drain, or forget it. */
static inline void cmd_end(struct icall *c, cl_int rc, cl_event *user_ev, uint32_t kind,
			   const char *name, uint64_t bytes)
{
	struct ocl_cmd *cmd = c->cmd, *head;

	if (cmd) {
		cmd->tick1 = tft_rt_now_tick();
		if (rc != CL_SUCCESS || !c->ev) {
			/* (its flow begin stays unmatched, counted at the session's end) */
			cmd->next = tls_free;
			tls_free = cmd;
		} else {
			cmd->ev = c->ev;
			cmd->kind = kind;
			cmd->name = name;
			cmd->bytes = bytes;
			if (user_ev) { /* the program's reference, and ours */
				*user_ev = c->ev;
				real.clRetainEvent(c->ev);
			}
			if (real.clSetEventCallback(c->ev, CL_COMPLETE, on_complete, cmd) != CL_SUCCESS)
				atomic_store_explicit(&cmd->state, ST_UNTIMED, memory_order_release);
			/* Release: the record is filled before the drain (acquire) takes the list. */
			head = atomic_load_explicit(&g.issued, memory_order_relaxed);
			do
				cmd->next = head;
			while (!atomic_compare_exchange_weak_explicit(&g.issued, &head, cmd,
								      memory_order_release,
								      memory_order_relaxed));
		}
	}
	tft_zone_end(c->z);
	tls_inside = 0;
}

static uint64_t region_bytes(const size_t *region)
{
	return region ? (uint64_t)region[0] * region[1] * region[2] : 0;
}

static uint64_t image_bytes(cl_mem image, const size_t *region)
{
	size_t elem = 0;

	if (!region || !REAL(clGetImageInfo) ||
	    real.clGetImageInfo(image, CL_IMAGE_ELEMENT_SIZE, sizeof(elem), &elem, NULL) != CL_SUCCESS)
		return 0;
	return region_bytes(region) * elem;
}

/* ---- interposed functions --------------------------------------------------------------- */

#define MISSING_RC CL_INVALID_OPERATION /* no OpenCL library behind the wrapper */

TFT_INTERPOSE cl_int clGetPlatformIDs(cl_uint n, cl_platform_id *platforms, cl_uint *n_ret)
{
	__typeof__(real.clGetPlatformIDs) fn = REAL(clGetPlatformIDs);

	if (!fn) { /* as the ICD loader says when it finds no platform */
		if (n_ret)
			*n_ret = 0;
		return -1001; /* CL_PLATFORM_NOT_FOUND_KHR */
	}
	if (g.on)
		tft_preload_claim(); /* the program starts using OpenCL: the session starts */
	return fn(n, platforms, n_ret);
}

TFT_INTERPOSE cl_command_queue clCreateCommandQueue(cl_context ctx, cl_device_id dev,
						    cl_command_queue_properties props, cl_int *err)
{
	__typeof__(real.clCreateCommandQueue) fn = REAL(clCreateCommandQueue);
	cl_command_queue q;

	if (!fn) {
		if (err)
			*err = MISSING_RC;
		return NULL;
	}
	if (!g.on)
		return fn(ctx, dev, props, err);
	q = fn(ctx, dev, props | CL_QUEUE_PROFILING_ENABLE, err);
	if (q)
		queue_add(q, dev, props, (props & CL_QUEUE_PROFILING_ENABLE) != 0, NULL);
	return q;
}

TFT_INTERPOSE cl_command_queue clCreateCommandQueueWithProperties(cl_context ctx, cl_device_id dev,
								  const cl_queue_properties *props,
								  cl_int *err)
{
	__typeof__(real.clCreateCommandQueueWithProperties) fn = REAL(clCreateCommandQueueWithProperties);
	cl_queue_properties mine[66];
	cl_command_queue_properties qp = 0;
	cl_command_queue q;
	size_t n = 0;
	int found = 0;

	if (!fn) {
		if (err)
			*err = MISSING_RC;
		return NULL;
	}
	if (!g.on)
		return fn(ctx, dev, props, err);
	/* The program's list with profiling added (to its CL_QUEUE_PROPERTIES, or as one). */
	for (; props && props[n] && n + 4 < sizeof(mine) / sizeof(mine[0]); n += 2) {
		mine[n] = props[n];
		mine[n + 1] = props[n + 1];
		if (props[n] == CL_QUEUE_PROPERTIES) {
			qp = (cl_command_queue_properties)props[n + 1];
			mine[n + 1] |= CL_QUEUE_PROFILING_ENABLE;
			found = 1;
		}
	}
	if (props && props[n]) /* a list longer than we copy: as the program made it */
		return fn(ctx, dev, props, err);
	if (!found) {
		mine[n++] = CL_QUEUE_PROPERTIES;
		mine[n++] = CL_QUEUE_PROFILING_ENABLE;
	}
	mine[n] = 0;
	q = fn(ctx, dev, mine, err);
	if (q)
		queue_add(q, dev, qp, (qp & CL_QUEUE_PROFILING_ENABLE) != 0, props ? props : mine + n);
	return q;
}

TFT_INTERPOSE cl_int clGetCommandQueueInfo(cl_command_queue qh, cl_command_queue_info what,
					   size_t size, void *value, size_t *size_ret)
{
	__typeof__(real.clGetCommandQueueInfo) fn = REAL(clGetCommandQueueInfo);
	struct ocl_queue *q;
	cl_int rc;

	if (!fn)
		return MISSING_RC;
	q = g.on ? tft_ptrmap_get(&g.queue_map, (uintptr_t)qh) : NULL;
	if (q && what == CL_QUEUE_PROPERTIES_ARRAY && q->user_props) {
		/* the list the program gave, not ours */
		if (value && size < q->user_props_bytes)
			return CL_INVALID_VALUE;
		if (value)
			memcpy(value, q->user_props, q->user_props_bytes);
		if (size_ret)
			*size_ret = q->user_props_bytes;
		return CL_SUCCESS;
	}
	rc = fn(qh, what, size, value, size_ret);
	if (rc == CL_SUCCESS && q && what == CL_QUEUE_PROPERTIES && value &&
	    size >= sizeof(cl_command_queue_properties) && !q->user_profiling)
		*(cl_command_queue_properties *)value &= ~(cl_command_queue_properties)CL_QUEUE_PROFILING_ENABLE;
	return rc;
}

TFT_INTERPOSE cl_kernel clCreateKernel(cl_program prog, const char *name, cl_int *err)
{
	__typeof__(real.clCreateKernel) fn = REAL(clCreateKernel);
	cl_kernel k;

	if (!fn) {
		if (err)
			*err = MISSING_RC;
		return NULL;
	}
	k = fn(prog, name, err);
	if (k && g.on && name)
		kernel_learn(k, name);
	return k;
}

TFT_INTERPOSE cl_int clCreateKernelsInProgram(cl_program prog, cl_uint n, cl_kernel *kernels,
					      cl_uint *n_ret)
{
	__typeof__(real.clCreateKernelsInProgram) fn = REAL(clCreateKernelsInProgram);
	cl_int rc;

	if (!fn)
		return MISSING_RC;
	rc = fn(prog, n, kernels, n_ret);
	if (rc == CL_SUCCESS && kernels && g.on)
		for (cl_uint i = 0; i < n; i++)
			kernel_learn(kernels[i], NULL);
	return rc;
}

TFT_INTERPOSE cl_kernel clCloneKernel(cl_kernel src, cl_int *err)
{
	__typeof__(real.clCloneKernel) fn = REAL(clCloneKernel);
	cl_kernel k;

	if (!fn) {
		if (err)
			*err = MISSING_RC;
		return NULL;
	}
	k = fn(src, err);
	if (k && g.on)
		kernel_learn(k, kernel_name(src));
	return k;
}

TFT_INTERPOSE cl_int clEnqueueNDRangeKernel(cl_command_queue q, cl_kernel k, cl_uint dims,
					    const size_t *off, const size_t *gws, const size_t *lws,
					    cl_uint n, const cl_event *wl, cl_event *ev)
{
	__typeof__(real.clEnqueueNDRangeKernel) fn = REAL(clEnqueueNDRangeKernel);
	struct icall c;
	cl_int rc;

	if (!fn)
		return MISSING_RC;
	if (!cmd_begin(&c, &site_clEnqueueNDRangeKernel, q, ev))
		return fn(q, k, dims, off, gws, lws, n, wl, ev);
	rc = fn(q, k, dims, off, gws, lws, n, wl, c.evp);
	if (c.cmd) {
		uint32_t d = dims > 3 ? 3 : dims;
		c.cmd->dims = d;
		c.cmd->has_lws = lws != NULL;
		for (uint32_t i = 0; i < d; i++) {
			c.cmd->gws[i] = gws ? gws[i] : 0;
			c.cmd->lws[i] = lws ? lws[i] : 0;
		}
	}
	cmd_end(&c, rc, ev, K_KERNEL, kernel_name(k), 0);
	return rc;
}

TFT_INTERPOSE cl_int clEnqueueTask(cl_command_queue q, cl_kernel k, cl_uint n, const cl_event *wl,
				   cl_event *ev)
{
	__typeof__(real.clEnqueueTask) fn = REAL(clEnqueueTask);
	struct icall c;
	cl_int rc;

	if (!fn)
		return MISSING_RC;
	if (!cmd_begin(&c, &site_clEnqueueTask, q, ev))
		return fn(q, k, n, wl, ev);
	rc = fn(q, k, n, wl, c.evp);
	cmd_end(&c, rc, ev, K_TASK, kernel_name(k), 0);
	return rc;
}

/* The enqueues of memory commands: one pattern. */
#define MEM_WRAPPER(f, kind, bytes_expr, params, args)                      \
	TFT_INTERPOSE cl_int f params                                       \
	{                                                                   \
		__typeof__(real.f) fn = REAL(f);                            \
		struct icall c;                                             \
		cl_int rc;                                                  \
		if (!fn)                                                    \
			return MISSING_RC;                                  \
		if (!cmd_begin(&c, &site_##f, q, ev))                       \
			return fn args;                                     \
		{                                                           \
			cl_event *user_ev_ = ev;                            \
			ev = c.evp;                                         \
			rc = fn args;                                       \
			ev = user_ev_;                                      \
		}                                                           \
		cmd_end(&c, rc, ev, kind, cmd_names[kind], (bytes_expr));   \
		return rc;                                                  \
	}

MEM_WRAPPER(clEnqueueReadBuffer, K_READ_BUFFER, cb,
	    (cl_command_queue q, cl_mem b, cl_bool blk, size_t off, size_t cb, void *p, cl_uint n,
	     const cl_event *wl, cl_event *ev),
	    (q, b, blk, off, cb, p, n, wl, ev))
MEM_WRAPPER(clEnqueueWriteBuffer, K_WRITE_BUFFER, cb,
	    (cl_command_queue q, cl_mem b, cl_bool blk, size_t off, size_t cb, const void *p,
	     cl_uint n, const cl_event *wl, cl_event *ev),
	    (q, b, blk, off, cb, p, n, wl, ev))
MEM_WRAPPER(clEnqueueCopyBuffer, K_COPY_BUFFER, cb,
	    (cl_command_queue q, cl_mem src, cl_mem dst, size_t so, size_t dof, size_t cb,
	     cl_uint n, const cl_event *wl, cl_event *ev),
	    (q, src, dst, so, dof, cb, n, wl, ev))
MEM_WRAPPER(clEnqueueReadBufferRect, K_READ_BUFFER_RECT, region_bytes(region),
	    (cl_command_queue q, cl_mem b, cl_bool blk, const size_t *bo, const size_t *ho,
	     const size_t *region, size_t brp, size_t bsp, size_t hrp, size_t hsp, void *p,
	     cl_uint n, const cl_event *wl, cl_event *ev),
	    (q, b, blk, bo, ho, region, brp, bsp, hrp, hsp, p, n, wl, ev))
MEM_WRAPPER(clEnqueueWriteBufferRect, K_WRITE_BUFFER_RECT, region_bytes(region),
	    (cl_command_queue q, cl_mem b, cl_bool blk, const size_t *bo, const size_t *ho,
	     const size_t *region, size_t brp, size_t bsp, size_t hrp, size_t hsp, const void *p,
	     cl_uint n, const cl_event *wl, cl_event *ev),
	    (q, b, blk, bo, ho, region, brp, bsp, hrp, hsp, p, n, wl, ev))
MEM_WRAPPER(clEnqueueCopyBufferRect, K_COPY_BUFFER_RECT, region_bytes(region),
	    (cl_command_queue q, cl_mem src, cl_mem dst, const size_t *so, const size_t *dof,
	     const size_t *region, size_t srp, size_t ssp, size_t drp, size_t dsp, cl_uint n,
	     const cl_event *wl, cl_event *ev),
	    (q, src, dst, so, dof, region, srp, ssp, drp, dsp, n, wl, ev))
MEM_WRAPPER(clEnqueueFillBuffer, K_FILL_BUFFER, size,
	    (cl_command_queue q, cl_mem b, const void *pat, size_t ps, size_t off, size_t size,
	     cl_uint n, const cl_event *wl, cl_event *ev),
	    (q, b, pat, ps, off, size, n, wl, ev))
MEM_WRAPPER(clEnqueueReadImage, K_READ_IMAGE, image_bytes(img, region),
	    (cl_command_queue q, cl_mem img, cl_bool blk, const size_t *origin, const size_t *region,
	     size_t rp, size_t sp, void *p, cl_uint n, const cl_event *wl, cl_event *ev),
	    (q, img, blk, origin, region, rp, sp, p, n, wl, ev))
MEM_WRAPPER(clEnqueueWriteImage, K_WRITE_IMAGE, image_bytes(img, region),
	    (cl_command_queue q, cl_mem img, cl_bool blk, const size_t *origin, const size_t *region,
	     size_t rp, size_t sp, const void *p, cl_uint n, const cl_event *wl, cl_event *ev),
	    (q, img, blk, origin, region, rp, sp, p, n, wl, ev))
MEM_WRAPPER(clEnqueueCopyImage, K_COPY_IMAGE, image_bytes(src, region),
	    (cl_command_queue q, cl_mem src, cl_mem dst, const size_t *so, const size_t *dof,
	     const size_t *region, cl_uint n, const cl_event *wl, cl_event *ev),
	    (q, src, dst, so, dof, region, n, wl, ev))
MEM_WRAPPER(clEnqueueFillImage, K_FILL_IMAGE, image_bytes(img, region),
	    (cl_command_queue q, cl_mem img, const void *color, const size_t *origin,
	     const size_t *region, cl_uint n, const cl_event *wl, cl_event *ev),
	    (q, img, color, origin, region, n, wl, ev))
MEM_WRAPPER(clEnqueueCopyImageToBuffer, K_COPY_IMAGE_TO_BUFFER, image_bytes(src, region),
	    (cl_command_queue q, cl_mem src, cl_mem dst, const size_t *so, const size_t *region,
	     size_t dof, cl_uint n, const cl_event *wl, cl_event *ev),
	    (q, src, dst, so, region, dof, n, wl, ev))
MEM_WRAPPER(clEnqueueCopyBufferToImage, K_COPY_BUFFER_TO_IMAGE, image_bytes(dst, region),
	    (cl_command_queue q, cl_mem src, cl_mem dst, size_t so, const size_t *dof,
	     const size_t *region, cl_uint n, const cl_event *wl, cl_event *ev),
	    (q, src, dst, so, dof, region, n, wl, ev))
MEM_WRAPPER(clEnqueueUnmapMemObject, K_UNMAP, 0,
	    (cl_command_queue q, cl_mem m, void *p, cl_uint n, const cl_event *wl, cl_event *ev),
	    (q, m, p, n, wl, ev))
MEM_WRAPPER(clEnqueueMigrateMemObjects, K_MIGRATE, 0,
	    (cl_command_queue q, cl_uint nm, const cl_mem *mems, cl_mem_migration_flags fl,
	     cl_uint n, const cl_event *wl, cl_event *ev),
	    (q, nm, mems, fl, n, wl, ev))
MEM_WRAPPER(clEnqueueMarkerWithWaitList, K_MARKER, 0,
	    (cl_command_queue q, cl_uint n, const cl_event *wl, cl_event *ev), (q, n, wl, ev))
MEM_WRAPPER(clEnqueueBarrierWithWaitList, K_BARRIER, 0,
	    (cl_command_queue q, cl_uint n, const cl_event *wl, cl_event *ev), (q, n, wl, ev))

TFT_INTERPOSE void *clEnqueueMapBuffer(cl_command_queue q, cl_mem b, cl_bool blk,
				       cl_map_flags flags, size_t off, size_t cb, cl_uint n,
				       const cl_event *wl, cl_event *ev, cl_int *err)
{
	__typeof__(real.clEnqueueMapBuffer) fn = REAL(clEnqueueMapBuffer);
	struct icall c;
	cl_int rc = CL_SUCCESS;
	void *p;

	if (!fn) {
		if (err)
			*err = MISSING_RC;
		return NULL;
	}
	if (!cmd_begin(&c, &site_clEnqueueMapBuffer, q, ev))
		return fn(q, b, blk, flags, off, cb, n, wl, ev, err);
	p = fn(q, b, blk, flags, off, cb, n, wl, c.evp, &rc);
	if (err)
		*err = rc;
	cmd_end(&c, rc, ev, K_MAP_BUFFER, cmd_names[K_MAP_BUFFER], cb);
	return p;
}

TFT_INTERPOSE void *clEnqueueMapImage(cl_command_queue q, cl_mem img, cl_bool blk,
				      cl_map_flags flags, const size_t *origin,
				      const size_t *region, size_t *rp, size_t *sp, cl_uint n,
				      const cl_event *wl, cl_event *ev, cl_int *err)
{
	__typeof__(real.clEnqueueMapImage) fn = REAL(clEnqueueMapImage);
	struct icall c;
	cl_int rc = CL_SUCCESS;
	void *p;

	if (!fn) {
		if (err)
			*err = MISSING_RC;
		return NULL;
	}
	if (!cmd_begin(&c, &site_clEnqueueMapImage, q, ev))
		return fn(q, img, blk, flags, origin, region, rp, sp, n, wl, ev, err);
	p = fn(q, img, blk, flags, origin, region, rp, sp, n, wl, c.evp, &rc);
	if (err)
		*err = rc;
	cmd_end(&c, rc, ev, K_MAP_IMAGE, cmd_names[K_MAP_IMAGE], image_bytes(img, region));
	return p;
}

TFT_INTERPOSE cl_int clFinish(cl_command_queue q)
{
	__typeof__(real.clFinish) fn = REAL(clFinish);
	struct icall c;
	cl_int rc;

	if (!fn)
		return MISSING_RC;
	if (!api_begin(&c, &site_clFinish))
		return fn(q);
	rc = fn(q);
	api_end(&c);
	return rc;
}

TFT_INTERPOSE cl_int clFlush(cl_command_queue q)
{
	__typeof__(real.clFlush) fn = REAL(clFlush);
	struct icall c;
	cl_int rc;

	if (!fn)
		return MISSING_RC;
	if (!api_begin(&c, &site_clFlush))
		return fn(q);
	rc = fn(q);
	api_end(&c);
	return rc;
}

TFT_INTERPOSE cl_int clWaitForEvents(cl_uint n, const cl_event *list)
{
	__typeof__(real.clWaitForEvents) fn = REAL(clWaitForEvents);
	struct icall c;
	cl_int rc;

	if (!fn)
		return MISSING_RC;
	if (!api_begin(&c, &site_clWaitForEvents))
		return fn(n, list);
	rc = fn(n, list);
	api_end(&c);
	return rc;
}

/* ---- dlsym of a library the program opened ------------------------------------------- */

#define WRAP_ENT(f) { #f, (void *)f, (void **)&real.f },
static const struct {
	const char *name;
	void *wrapper;
	void **real;
} wraps[] = {
	WRAP_ENT(clGetPlatformIDs) WRAP_ENT(clCreateCommandQueue)
	WRAP_ENT(clCreateCommandQueueWithProperties) WRAP_ENT(clGetCommandQueueInfo)
	WRAP_ENT(clCreateKernel) WRAP_ENT(clCreateKernelsInProgram) WRAP_ENT(clCloneKernel)
	WRAP_ENT(clEnqueueNDRangeKernel) WRAP_ENT(clEnqueueTask) WRAP_ENT(clEnqueueReadBuffer)
	WRAP_ENT(clEnqueueWriteBuffer) WRAP_ENT(clEnqueueCopyBuffer)
	WRAP_ENT(clEnqueueReadBufferRect) WRAP_ENT(clEnqueueWriteBufferRect)
	WRAP_ENT(clEnqueueCopyBufferRect) WRAP_ENT(clEnqueueFillBuffer)
	WRAP_ENT(clEnqueueReadImage) WRAP_ENT(clEnqueueWriteImage) WRAP_ENT(clEnqueueCopyImage)
	WRAP_ENT(clEnqueueFillImage) WRAP_ENT(clEnqueueCopyImageToBuffer)
	WRAP_ENT(clEnqueueCopyBufferToImage) WRAP_ENT(clEnqueueMapBuffer)
	WRAP_ENT(clEnqueueMapImage) WRAP_ENT(clEnqueueUnmapMemObject)
	WRAP_ENT(clEnqueueMigrateMemObjects) WRAP_ENT(clEnqueueMarkerWithWaitList)
	WRAP_ENT(clEnqueueBarrierWithWaitList) WRAP_ENT(clFinish) WRAP_ENT(clFlush)
	WRAP_ENT(clWaitForEvents)
};
#undef WRAP_ENT

void *tft_opencl_wrap_symbol(const char *name, void *sym)
{
	for (size_t i = 0; i < sizeof(wraps) / sizeof(wraps[0]); i++) {
		void *expect = NULL;
		if (strcmp(wraps[i].name, name) != 0)
			continue;
		if (!g.on || sym == wraps[i].wrapper)
			return NULL;
		/* The library the program opened is where the real functions are. */
		if (!__atomic_load_n(&lib, __ATOMIC_ACQUIRE)) {
			Dl_info di;
			void *h;
			if (dladdr(sym, &di) && di.dli_fname &&
			    (h = tft_preload_real_dlopen(di.dli_fname, RTLD_LAZY | RTLD_NOLOAD)))
				__atomic_store_n(&lib, h, __ATOMIC_RELEASE);
		}
		if (!__atomic_compare_exchange_n(wraps[i].real, &expect, sym, 0, __ATOMIC_RELAXED,
						 __ATOMIC_RELAXED) &&
		    expect != sym)
			return NULL; /* a second OpenCL implementation: left to itself */
		return wraps[i].wrapper;
	}
	return NULL;
}

/* ---- the drain's side: commands to slices ------------------------------------------------ */

static struct ocl_device *device_of(const struct ocl_queue *q)
{
	for (uint32_t i = 0; i < g.ndevs; i++)
		if (g.devs[i].id == q->device)
			return &g.devs[i];
	if (g.ndevs == DEVICES_MAX)
		return &g.devs[DEVICES_MAX - 1]; /* (shared beyond 16 devices) */
	g.devs[g.ndevs].id = q->device;
	g.devs[g.ndevs].name = q->dev_name;
	return &g.devs[g.ndevs++];
}

/*
 * Device clock -> host clock. A command's QUEUED time is taken inside its
 * enqueue call, so device - host lies in [queued - t1, queued - t0] for each
 * command; the device's estimate is the intersection over its commands (a
 * fresh start when they stop intersecting: the clocks drifted), and each
 * command is converted with the estimate's midpoint moved into its own
 * interval.
 */
static void device_sample(struct ocl_device *d, int64_t lo, int64_t hi)
{
	d->samples++;
	if (!d->have || lo > d->hi || hi < d->lo) {
		if (d->have)
			d->resyncs++;
		d->lo = lo;
		d->hi = hi;
		d->have = 1;
		return;
	}
	if (lo > d->lo)
		d->lo = lo;
	if (hi < d->hi)
		d->hi = hi;
}

static uint32_t name_id(struct tft_rt_src *io, const char *p)
{
	uint32_t gen = tft_rt_src_session(io);
	uint32_t h = (uint32_t)(((uintptr_t)p >> 3) & (NAME_CACHE - 1));

	if (g.name_cache[h].p != p || g.name_cache[h].gen != gen) {
		g.name_cache[h].p = p;
		g.name_cache[h].gen = gen;
		g.name_cache[h].id = tft_rt_src_intern(io, p, strlen(p));
	}
	return g.name_cache[h].id;
}

static int cmp_start(const void *a, const void *b)
{
	const struct ocl_cmd *x = *(struct ocl_cmd *const *)a, *y = *(struct ocl_cmd *const *)b;
	int64_t sx = (int64_t)x->dev[2], sy = (int64_t)y->dev[2]; /* (host times by now) */

	if (sx != sy)
		return sx < sy ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static uint32_t queue_track(struct tft_rt_src *io, struct ocl_queue *q)
{
	uint32_t gen = tft_rt_src_session(io);
	char name[160];

	if (q->track_gen != gen || q->track == TFT_NONE) {
		snprintf(name, sizeof(name), "OpenCL %s queue %u%s", q->dev_name, q->ordinal,
			 q->ooo ? " (out of order)" : "");
		q->track = tft_rt_src_track(io, TFT_TRACK_GPU_STREAM, name, (int64_t)q->ordinal);
		q->track_gen = gen;
	}
	return q->track;
}

static void write_cmd(struct tft_rt_src *io, struct ocl_queue *q, const struct ocl_cmd *c)
{
	struct tft_arg args[8];
	struct tft_event ev;
	char text[96];
	uint32_t track = queue_track(io, q), na = 0;
	int kernel = c->kind == K_KERNEL || c->kind == K_TASK;

	if (track == TFT_NONE)
		return;
	memset(&ev, 0, sizeof(ev));
	ev.kind = TFT_EV_SLICE;
	ev.track = track;
	ev.ts_ns = (int64_t)c->dev[2];
	ev.dur_ns = c->dev[3] > c->dev[2] ? (int64_t)(c->dev[3] - c->dev[2]) : 0;
	ev.name = name_id(io, c->name);
	ev.cat = name_id(io, kernel ? "opencl.kernel"
			 : c->kind == K_MARKER || c->kind == K_BARRIER ? "opencl.sync"
								    : "opencl.memory");
	if (c->op) {
		args[na].key = name_id(io, "op");
		args[na].type = TFT_ARG_STR;
		args[na++].v.str = tft_rt_src_site_name(io, c->op);
	}
	if (c->kind == K_KERNEL && c->dims) {
		int n = snprintf(text, sizeof(text), "[%zu", c->gws[0]);
		for (uint32_t i = 1; i < c->dims && n > 0 && (size_t)n < sizeof(text); i++)
			n += snprintf(text + n, sizeof(text) - (size_t)n, ",%zu", c->gws[i]);
		if (n > 0 && (size_t)n < sizeof(text) - 1) {
			text[n++] = ']';
			args[na].key = name_id(io, "global");
			args[na].type = TFT_ARG_JSON;
			args[na++].v.str = tft_rt_src_intern(io, text, (size_t)n);
		}
		if (c->has_lws) {
			n = snprintf(text, sizeof(text), "[%zu", c->lws[0]);
			for (uint32_t i = 1; i < c->dims && n > 0 && (size_t)n < sizeof(text); i++)
				n += snprintf(text + n, sizeof(text) - (size_t)n, ",%zu", c->lws[i]);
			if (n > 0 && (size_t)n < sizeof(text) - 1) {
				text[n++] = ']';
				args[na].key = name_id(io, "local");
				args[na].type = TFT_ARG_JSON;
				args[na++].v.str = tft_rt_src_intern(io, text, (size_t)n);
			}
		}
	}
	if (!kernel && c->bytes) {
		args[na].key = name_id(io, "bytes");
		args[na].type = TFT_ARG_INT;
		args[na++].v.i = (int64_t)c->bytes;
	}
	args[na].key = name_id(io, "queued_ns");
	args[na].type = TFT_ARG_INT;
	args[na++].v.i = (int64_t)c->dev[0];
	args[na].key = name_id(io, "submit_ns");
	args[na].type = TFT_ARG_INT;
	args[na++].v.i = (int64_t)c->dev[1];
	args[na].key = name_id(io, "launch");
	args[na].type = TFT_ARG_INT;
	args[na++].v.i = (int64_t)c->seq;
	ev.nargs = (uint16_t)na;
	ev.args = args;
	if (tft_rt_src_append(io, &ev) == 0)
		tft_rt_src_flow_end(io, FLOW_NS | c->seq, track, ev.ts_ns);
}

static void free_cmds(struct ocl_cmd *l, int release)
{
	struct ocl_cmd *n, *head = NULL, *last = NULL;

	for (; l; l = n) {
		n = l->next;
		if (release && l->ev)
			real.clReleaseEvent(l->ev);
		l->ev = NULL;
		l->next = head;
		head = l;
		if (!last)
			last = l;
	}
	push_free(head);
}

static void say_clock(struct tft_rt_src *io)
{
	char key[48], val[256];

	for (uint32_t i = 0; i < g.ndevs; i++) {
		struct ocl_device *d = &g.devs[i];
		if (!d->have || d->samples == d->said_samples)
			continue;
		d->said_samples = d->samples;
		snprintf(key, sizeof(key), "opencl_clock.%u", i);
		snprintf(val, sizeof(val),
			 "device=%s offset_ns=%" PRId64 " error_ns=%" PRId64 " commands=%" PRIu64
			 " resyncs=%" PRIu64,
			 d->name, (d->lo + d->hi) / 2, (d->hi - d->lo + 1) / 2, d->samples, d->resyncs);
		tft_rt_src_meta(io, key, val);
	}
}

static int grow_ready(uint32_t need)
{
	/* at least one: qsort() below gets a real array even with no commands */
	return tft_grow_ex((void **)&g.ready, &g.cap_ready, need ? need : 1, sizeof(*g.ready), 256, 0);
}


static void collect(void *ctx, struct tft_rt_src *io, int final)
{
	struct ocl_cmd *l, *prev = NULL, *n, *freed = NULL;
	uint64_t written = 0, untimed = 0, incomplete = 0, d;
	int64_t now = tft_rt_src_now_ns(io);

	(void)ctx;
	/* Acquire: pairs with the release CAS of each enqueue (cmd_end). Reversed into issue order. */
	l = atomic_exchange_explicit(&g.issued, NULL, memory_order_acquire);
	for (; l; l = n) {
		n = l->next;
		l->next = prev;
		prev = l;
	}
	for (l = prev; l; l = n) {
		n = l->next;
		l->qnext = NULL;
		if (l->q->tail)
			l->q->tail->qnext = l;
		else
			l->q->head = l;
		l->q->tail = l;
	}
	/* Acquire: pairs with the release CAS in queue_add. */
	for (struct ocl_queue *q = atomic_load_explicit(&g.queues, memory_order_acquire); q;
	     q = q->all_next) {
		int64_t watermark = INT64_MAX, oldest;
		uint32_t nready = 0, count = 0;
		struct ocl_cmd **link;
		struct ocl_device *dv;

		if (!q->head)
			continue;
		/* Commands still running start after their enqueue began: the watermark. */
		for (l = q->head; l; l = l->qnext) {
			int st = atomic_load_explicit(&l->state, memory_order_acquire);
			count++;
			if (st == ST_PENDING) {
				int64_t t0 = tft_rt_src_ns(io, l->tick0);
				if (t0 < watermark)
					watermark = t0;
			}
		}
		if (grow_ready(count))
			watermark = INT64_MIN; /* out of memory: wait for the next cycle */
		/*
		 * Every completed command's QUEUED time narrows its device's clock
		 * estimate first; then they are converted. Until the estimate is
		 * good (16 commands, or within 200 us) commands wait, at most 1 s.
		 */
		dv = device_of(q);
		oldest = INT64_MAX;
		for (l = q->head; l; l = l->qnext) {
			int64_t t0, t1;
			/* Acquire: pairs with the callback's release store (on_complete). */
			if (atomic_load_explicit(&l->state, memory_order_acquire) != ST_TIMED)
				continue;
			t0 = tft_rt_src_ns(io, l->tick0);
			if (t0 < oldest)
				oldest = t0;
			if (l->sampled)
				continue;
			t1 = tft_rt_src_ns(io, l->tick1);
			device_sample(dv, (int64_t)l->dev[0] - t1, (int64_t)l->dev[0] - t0);
			l->sampled = 1;
		}
		if (!final && dv->samples < 16 && dv->hi - dv->lo > 200000 &&
		    (oldest == INT64_MAX || now - oldest < 1000000000))
			watermark = INT64_MIN; /* not yet: the estimate is still coarse */
		link = &q->head;
		q->tail = NULL;
		while ((l = *link) != NULL) {
			int st = atomic_load_explicit(&l->state, memory_order_acquire);
			if (st == ST_TIMED && watermark != INT64_MIN) {
				int64_t t0 = tft_rt_src_ns(io, l->tick0), t1 = tft_rt_src_ns(io, l->tick1);
				int64_t lo = (int64_t)l->dev[0] - t1, hi = (int64_t)l->dev[0] - t0, off;
				/* the device's estimate, moved into this command's own interval */
				off = dv->lo + (dv->hi - dv->lo) / 2;
				if (off < lo)
					off = lo;
				if (off > hi)
					off = hi;
				if ((int64_t)l->dev[2] - off < watermark) {
					/* host ns from here on (dev[] is ours now) */
					for (int i = 0; i < 4; i++)
						l->dev[i] = (cl_ulong)((int64_t)l->dev[i] - off);
					g.ready[nready++] = l;
					*link = l->qnext;
					continue;
				}
			} else if (st == ST_UNTIMED) {
				untimed++;
				*link = l->qnext;
				l->next = freed;
				freed = l;
				continue;
			} else if (st == ST_PENDING && final) {
				/* still running at the session's end: its callback may come later,
				 * so the record is never reused */
				incomplete++;
				*link = l->qnext;
				continue;
			}
			q->tail = l;
			link = &l->qnext;
		}
		qsort(g.ready, nready, sizeof(*g.ready), cmp_start);
		for (uint32_t i = 0; i < nready; i++) {
			write_cmd(io, q, g.ready[i]);
			g.ready[i]->next = freed;
			freed = g.ready[i];
		}
		written += nready;
	}
	free_cmds(freed, !final); /* at the end, OpenCL may be gone already: no release */
	d = atomic_load_explicit(&g.dropped, memory_order_relaxed);
	tft_rt_src_count(io, "opencl_commands", (int64_t)written);
	tft_rt_src_count(io, "opencl_untimed", (int64_t)untimed);
	tft_rt_src_count(io, "opencl_incomplete", (int64_t)incomplete);
	tft_rt_src_count(io, "opencl_dropped", (int64_t)(d - g.rep_dropped));
	tft_rt_src_dropped(io, untimed + (d - g.rep_dropped));
	g.rep_dropped = d;
	say_clock(io);
}

void tft_opencl_setup(void)
{
	static const struct tft_rt_source src = { collect, NULL };
	void *m;

	if (!(tft_preload.intercept & TFT_ICPT_OPENCL))
		return;
	m = mmap(NULL, (size_t)CMD_MAX * sizeof(struct ocl_cmd), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED || pthread_key_create(&g.key, give_back_free) != 0 ||
	    tft_ptrmap_init(&g.queue_map, 12) || tft_ptrmap_init(&g.kernel_map, 16) ||
	    tft_strset_init(&g.names, 12) || tft_rt_source_add(&src)) {
		tft_preload_say(NULL, true, "OpenCL calls run untraced: cannot set up the interceptor");
		return;
	}
	g.arena = m;
	g.on = 1;
}

#else /* !TFT_HAVE_OPENCL: built without the OpenCL headers */

void tft_opencl_setup(void)
{
}

void *tft_opencl_wrap_symbol(const char *name, void *sym)
{
	(void)name;
	(void)sym;
	return NULL;
}

#endif
