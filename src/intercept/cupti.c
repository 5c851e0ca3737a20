/* SPDX-License-Identifier: MIT */
/*
 * CUDA from below (docs/intercept.md), through CUPTI: the CUDA driver loads
 * this library as its injection (CUDA_INJECTION64_PATH, set by `tftracer
 * record`) and calls InitializeInjection() from cuInit. Then:
 *  - the callback API puts every runtime and driver API call on the calling
 *    thread as a zone named after the function, and notes, per correlation
 *    id, the innermost zone open when the outermost CUDA call began (the op
 *    that launched the work) and the thread and time of the call;
 *  - the activity API hands over kernels, memcpys, memsets and
 *    synchronisations, which the drain writes on a gpu_stream track per
 *    context and stream, named by the kernel, with the op as the arg `op`
 *    and a flow from the launching call;
 *  - NVTX ranges (NVTX_INJECTION64_PATH, InitializeInjectionNvtx2) become
 *    zones, so a kernel launched inside one belongs to it.
 * libcupti is opened with dlopen at that moment: the library needs no CUDA to
 * load, and a program that never initialises CUDA never loads CUPTI.
 * Built only where the CUPTI headers are (TFT_HAVE_CUPTI); untested without a GPU.
 */
#include <dlfcn.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "intercept/preload.h"

#if defined(TFT_HAVE_CUPTI)

#include <cupti.h>
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include "core/grow.h"
#include "core/status.h"
#include "intercept/ptrmap.h"
#include "runtime/source.h"

#ifndef TFT_CUPTI_LIB
#define TFT_CUPTI_LIB "libcupti.so"
#endif

/* The newest record layouts of this CUPTI (the fields used are in all of them). */
#if CUPTI_API_VERSION >= 130000
typedef CUpti_ActivityKernel10 tft_cu_kernel;
typedef CUpti_ActivityMemcpy6 tft_cu_memcpy;
typedef CUpti_ActivitySynchronization2 tft_cu_sync;
#elif CUPTI_API_VERSION >= 18
typedef CUpti_ActivityKernel9 tft_cu_kernel;
typedef CUpti_ActivityMemcpy5 tft_cu_memcpy;
typedef CUpti_ActivitySynchronization tft_cu_sync;
#else
typedef CUpti_ActivityKernel8 tft_cu_kernel;
typedef CUpti_ActivityMemcpy5 tft_cu_memcpy;
typedef CUpti_ActivitySynchronization tft_cu_sync;
#endif
typedef CUpti_ActivityMemset4 tft_cu_memset;

#define FLOW_NS 0x4355440000000000ull /* "CUD": launch flows, apart from the program's ids */
#define CORR_BITS 18u                 /* launches remembered until their work is collected */
#define BUF_BYTES (4u << 20)
#define API_DEPTH 32u
#define NVTX_DEPTH 64u
#define NVTX_SITES_MAX 65536u
#define FLUSH_NS 100000000            /* the drain asks CUPTI for completed records this often */

/* CUPTI functions, from the library opened at injection. */
#define CUPTI_FUNCS(X)                                                                          \
	X(cuptiSubscribe) X(cuptiEnableDomain) X(cuptiActivityRegisterCallbacks)                \
	X(cuptiActivityEnable) X(cuptiActivityGetNextRecord) X(cuptiActivityFlushAll)           \
	X(cuptiGetTimestamp) X(cuptiGetResultString) X(cuptiActivityGetNumDroppedRecords)
#define DECL(f) __typeof__(&f) f;
static struct {
	CUPTI_FUNCS(DECL)
	CUptiResult (*register_timestamp)(uint64_t (*)(void)); /* CUDA 12.? and later */
} cu;
#undef DECL

/* What a launch left for its work: written by the calling thread, read by the drain. */
struct corr_ent {
	_Atomic uint32_t corr;       /* correlation id; written last (release) */
	uint32_t pad;
	const struct tft_site *op;   /* borrowed: innermost zone when the outermost CUDA call began */
	int64_t tid;
	uint64_t tick;               /* when the API call began */
};

/* A buffer of activity records CUPTI completed, waiting for the drain. */
struct buf {
	struct buf *next;
	uint8_t *data; /* owned (malloc) */
	size_t valid;
};

/* A parsed record, on its way to a track. */
struct act {
	uint64_t start, end;      /* CUPTI ns */
	uint32_t kind;            /* CUpti_ActivityKind */
	uint32_t ctx, stream, dev, corr;
	uint64_t bytes;
	const char *name;         /* borrowed from CUPTI, or static */
	uint32_t grid[3], block[3];
	uint32_t track;
};

struct stream_track {
	uint32_t ctx, stream, track, gen;
};

static struct {
	int on;
	void *lib;
	CUpti_SubscriberHandle sub;
	struct corr_ent *corr;            /* owned (mmap): 2^CORR_BITS */
	struct buf *_Atomic done;         /* completed buffers, newest first */
	struct tft_site *rt_sites, *drv_sites; /* owned: one per callback id, named on first use */
	_Atomic uint64_t api_calls;
	int ts_callback;                  /* CUPTI timestamps are CLOCK_MONOTONIC ns (ours) */
	/* the drain only: */
	int64_t offset_ns, offset_err_ns; /* CUPTI ns - CLOCK_MONOTONIC ns, and its error */
	int have_offset;
	int64_t next_flush_ns;
	struct act *acts;
	uint32_t nacts, cap_acts;
	struct stream_track *tracks;
	uint32_t ntracks, cap_tracks;
	uint32_t ctx_dev[64];             /* context id -> device + 1 (learnt from records) */
	uint64_t no_op;                   /* kernels written without an op (since the last count) */
	/* NVTX */
	struct tft_ptrmap nvtx_sites;     /* interned message -> site */
	struct tft_strset nvtx_names;
	_Atomic uint32_t nvtx_nsites;
} u;

static const struct tft_site launch_site = { "launch", "cuda", NULL, 0, 0 };
static const struct tft_site nvtx_other = { "nvtx range", "nvtx", NULL, 0, 0 };
static __thread struct tft_zone tls_api[API_DEPTH];
static __thread uint32_t tls_api_depth;
static __thread const struct tft_site *tls_op; /* the op of the outermost CUDA call in progress */
static __thread int64_t tls_tid;
static __thread struct tft_zone tls_nvtx[NVTX_DEPTH];
static __thread uint32_t tls_nvtx_depth;

static int64_t my_tid(void)
{
	static _Atomic int64_t pid_seen;
	/* A fork child's threads have other ids: the cache is per process. */
	if (!tls_tid || atomic_load_explicit(&pid_seen, memory_order_relaxed) != (int64_t)getpid()) {
		atomic_store_explicit(&pid_seen, (int64_t)getpid(), memory_order_relaxed);
		tls_tid = (int64_t)syscall(SYS_gettid);
	}
	return tls_tid;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- callbacks: API calls on the calling thread ------------------------------------------- */

static const struct tft_site *api_site(CUpti_CallbackDomain dom, CUpti_CallbackId id,
				       const char *fname)
{
	struct tft_site *arr = dom == CUPTI_CB_DOMAIN_RUNTIME_API ? u.rt_sites : u.drv_sites;
	uint32_t size = dom == CUPTI_CB_DOMAIN_RUNTIME_API ? CUPTI_RUNTIME_TRACE_CBID_SIZE
							   : CUPTI_DRIVER_TRACE_CBID_SIZE;
	struct tft_site *s;

	if (!arr || id >= size)
		return NULL;
	s = &arr[id];
	/* (the same static name from any thread: a racing store writes the same pointer) */
	if (!__atomic_load_n(&s->name, __ATOMIC_ACQUIRE)) {
		s->cat = dom == CUPTI_CB_DOMAIN_RUNTIME_API ? "cuda.runtime" : "cuda.driver";
		__atomic_store_n(&s->name, fname ? fname : "cuda", __ATOMIC_RELEASE);
	}
	return s;
}

static void CUPTIAPI on_callback(void *ud, CUpti_CallbackDomain dom, CUpti_CallbackId id,
				 const void *data)
{
	const CUpti_CallbackData *d = data;

	(void)ud;
	if (dom != CUPTI_CB_DOMAIN_RUNTIME_API && dom != CUPTI_CB_DOMAIN_DRIVER_API)
		return;
	if (d->callbackSite == CUPTI_API_ENTER) {
		const struct tft_site *site;
		struct tft_zone z = { 0, 0 };
		if (tls_api_depth == 0)
			tls_op = tft_rt_innermost_site(); /* before any zone of ours */
		if (tft_is_tracing() && (site = api_site(dom, id, d->functionName)) != NULL) {
			struct corr_ent *e = &u.corr[d->correlationId & ((1u << CORR_BITS) - 1)];
			z = tft_zone_begin(site);
			e->op = tls_op;
			e->tid = my_tid();
			e->tick = tft_rt_now_tick();
			/* Release: the fields above are visible with the id (the drain acquires). */
			atomic_store_explicit(&e->corr, d->correlationId, memory_order_release);
			atomic_fetch_add_explicit(&u.api_calls, 1, memory_order_relaxed);
		}
		if (tls_api_depth < API_DEPTH)
			tls_api[tls_api_depth] = z;
		tls_api_depth++;
	} else if (tls_api_depth > 0) {
		tls_api_depth--;
		if (tls_api_depth < API_DEPTH)
			tft_zone_end(tls_api[tls_api_depth]);
	}
}

/* ---- activity buffers ------------------------------------------------------------------- */

static void CUPTIAPI buf_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	*buffer = aligned_alloc(8, BUF_BYTES);
	*size = *buffer ? BUF_BYTES : 0;
	*max_records = 0;
}

static void CUPTIAPI buf_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
				   size_t valid)
{
	struct buf *b, *head;

	(void)ctx;
	(void)stream;
	(void)size;
	if (!buffer)
		return;
	if (!valid || !(b = malloc(sizeof(*b)))) {
		free(buffer);
		return;
	}
	b->data = buffer;
	b->valid = valid;
	/* Release: the buffer's records are visible to the drain (acquire exchange). */
	head = atomic_load_explicit(&u.done, memory_order_relaxed);
	do
		b->next = head;
	while (!atomic_compare_exchange_weak_explicit(&u.done, &head, b, memory_order_release,
						      memory_order_relaxed));
}

static uint64_t CUPTIAPI timestamp_cb(void)
{
	return mono_ns();
}

/* ---- the drain's side ---------------------------------------------------------------- */

static const char *memcpy_name(uint32_t kind)
{
	switch (kind) {
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "Memcpy HtoD";
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "Memcpy DtoH";
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "Memcpy DtoD";
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "Memcpy HtoH";
	case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "Memcpy PtoP";
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA: return "Memcpy HtoA";
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH: return "Memcpy AtoH";
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA: return "Memcpy AtoA";
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD: return "Memcpy AtoD";
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA: return "Memcpy DtoA";
	default: return "Memcpy";
	}
}

static const char *sync_name(uint32_t type)
{
	switch (type) {
	case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE: return "cudaEventSynchronize";
	case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT: return "cudaStreamWaitEvent";
	case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE: return "cudaStreamSynchronize";
	case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE: return "cudaDeviceSynchronize";
	default: return "synchronization";
	}
}

static int push_act(const struct act *a)
{
	if (tft_grow_ex((void **)&u.acts, &u.cap_acts, (uint64_t)u.nacts + 1, sizeof(*u.acts), 4096, 0))
		return TFT_ENOMEM;
	u.acts[u.nacts++] = *a;
	return 0;
}

static void parse(struct buf *b, uint64_t *lost)
{
	CUpti_Activity *r = NULL;

	while (cu.cuptiActivityGetNextRecord(b->data, b->valid, &r) == CUPTI_SUCCESS) {
		struct act a;
		memset(&a, 0, sizeof(a));
		a.kind = r->kind;
		switch (r->kind) {
		case CUPTI_ACTIVITY_KIND_KERNEL:
		case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
			const tft_cu_kernel *k = (const tft_cu_kernel *)r;
			a.start = k->start;
			a.end = k->end;
			a.dev = k->deviceId;
			a.ctx = k->contextId;
			a.stream = k->streamId;
			a.corr = k->correlationId;
			a.name = k->name ? k->name : "kernel";
			a.grid[0] = (uint32_t)k->gridX;
			a.grid[1] = (uint32_t)k->gridY;
			a.grid[2] = (uint32_t)k->gridZ;
			a.block[0] = (uint32_t)k->blockX;
			a.block[1] = (uint32_t)k->blockY;
			a.block[2] = (uint32_t)k->blockZ;
			break;
		}
		case CUPTI_ACTIVITY_KIND_MEMCPY: {
			const tft_cu_memcpy *m = (const tft_cu_memcpy *)r;
			a.start = m->start;
			a.end = m->end;
			a.dev = m->deviceId;
			a.ctx = m->contextId;
			a.stream = m->streamId;
			a.corr = m->correlationId;
			a.bytes = m->bytes;
			a.name = memcpy_name(m->copyKind);
			break;
		}
		case CUPTI_ACTIVITY_KIND_MEMSET: {
			const tft_cu_memset *m = (const tft_cu_memset *)r;
			a.start = m->start;
			a.end = m->end;
			a.dev = m->deviceId;
			a.ctx = m->contextId;
			a.stream = m->streamId;
			a.corr = m->correlationId;
			a.bytes = m->bytes;
			a.name = "Memset";
			break;
		}
		case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
			const tft_cu_sync *s = (const tft_cu_sync *)r;
			a.start = s->start;
			a.end = s->end;
			a.ctx = s->contextId;
			a.stream = s->streamId;
			a.corr = s->correlationId;
			a.dev = UINT32_MAX;
			a.name = sync_name(s->type);
			break;
		}
		default:
			continue;
		}
		if (a.start == 0 && a.end == 0) { /* no timestamps could be taken */
			(*lost)++;
			continue;
		}
		if (a.dev != UINT32_MAX && a.ctx < 64)
			u.ctx_dev[a.ctx] = a.dev + 1;
		if (push_act(&a))
			(*lost)++;
	}
}

static uint32_t stream_track(struct tft_rt_src *io, uint32_t ctx, uint32_t stream)
{
	uint32_t gen = tft_rt_src_session(io);
	char name[128];

	for (uint32_t i = 0; i < u.ntracks; i++)
		if (u.tracks[i].ctx == ctx && u.tracks[i].stream == stream) {
			if (u.tracks[i].gen != gen)
				break;
			return u.tracks[i].track;
		}
	if (tft_grow_ex((void **)&u.tracks, &u.cap_tracks, (uint64_t)u.ntracks + 1, sizeof(*u.tracks), 32, 0))
		return TFT_NONE;

	if (stream == CUPTI_SYNCHRONIZATION_INVALID_VALUE)
		snprintf(name, sizeof(name), "CUDA context %u (synchronization)", ctx);
	else if (ctx < 64 && u.ctx_dev[ctx])
		snprintf(name, sizeof(name), "CUDA GPU %u stream %u", u.ctx_dev[ctx] - 1, stream);
	else
		snprintf(name, sizeof(name), "CUDA context %u stream %u", ctx, stream);
	/* (a track of an earlier session is forgotten: ids are per session) */
	for (uint32_t i = 0; i < u.ntracks; i++)
		if (u.tracks[i].ctx == ctx && u.tracks[i].stream == stream) {
			u.tracks[i].track = tft_rt_src_track(io, TFT_TRACK_GPU_STREAM, name, stream);
			u.tracks[i].gen = gen;
			return u.tracks[i].track;
		}
	u.tracks[u.ntracks].ctx = ctx;
	u.tracks[u.ntracks].stream = stream;
	u.tracks[u.ntracks].gen = gen;
	u.tracks[u.ntracks].track = tft_rt_src_track(io, TFT_TRACK_GPU_STREAM, name,
						     stream == CUPTI_SYNCHRONIZATION_INVALID_VALUE ? -1
											     : (int64_t)stream);
	return u.tracks[u.ntracks++].track;
}

static int cmp_act(const void *pa, const void *pb)
{
	const struct act *a = pa, *b = pb;

	if (a->track != b->track)
		return a->track < b->track ? -1 : 1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->corr < b->corr ? -1 : a->corr > b->corr;
}

/* CUPTI's clock against CLOCK_MONOTONIC: the tightest of a few bracketed reads. */
static void measure_offset(void)
{
	for (int i = 0; i < 5; i++) {
		uint64_t t0 = mono_ns(), c = 0, t1;
		if (cu.cuptiGetTimestamp(&c) != CUPTI_SUCCESS)
			return;
		t1 = mono_ns();
		if (!u.have_offset || (int64_t)(t1 - t0) / 2 < u.offset_err_ns) {
			u.offset_ns = (int64_t)c - (int64_t)(t0 + (t1 - t0) / 2);
			u.offset_err_ns = (int64_t)(t1 - t0 + 1) / 2;
			u.have_offset = 1;
		}
	}
}

static int64_t host_ns(uint64_t t)
{
	return (int64_t)t - (u.ts_callback ? 0 : u.offset_ns);
}

/*
 * Write one activity record. Work launched while op-level tracing was off
 * (its launch was not noted) is left out, like the API call that launched it:
 * returns 0 then, 1 when written.
 */
static int write_act(struct tft_rt_src *io, const struct act *a)
{
	struct tft_arg args[6];
	struct tft_event ev;
	char text[64];
	uint32_t na = 0;
	const struct corr_ent *e = &u.corr[a->corr & ((1u << CORR_BITS) - 1)];
	const struct tft_site *op = NULL;
	int64_t tid = 0;
	uint64_t tick = 0;
	int known = 0;

	/* Acquire: pairs with the release store of the id (on_callback); checked again after. */
	if (a->corr && atomic_load_explicit(&e->corr, memory_order_acquire) == a->corr) {
		op = e->op;
		tid = e->tid;
		tick = e->tick;
		known = atomic_load_explicit(&e->corr, memory_order_acquire) == a->corr;
	}
	if (!known && a->kind != CUPTI_ACTIVITY_KIND_SYNCHRONIZATION)
		return 0;
	memset(&ev, 0, sizeof(ev));
	ev.kind = TFT_EV_SLICE;
	ev.track = a->track;
	ev.ts_ns = host_ns(a->start);
	ev.dur_ns = a->end > a->start ? (int64_t)(a->end - a->start) : 0;
	ev.name = tft_rt_src_intern(io, a->name, strlen(a->name));
	ev.cat = tft_rt_src_intern(io, a->kind == CUPTI_ACTIVITY_KIND_SYNCHRONIZATION ? "cuda.sync"
					: a->kind == CUPTI_ACTIVITY_KIND_MEMCPY || a->kind == CUPTI_ACTIVITY_KIND_MEMSET
						? "cuda.memory"
						: "cuda.kernel",
				   a->kind == CUPTI_ACTIVITY_KIND_SYNCHRONIZATION ? 9 : 11);
	if (known && op) {
		args[na].key = tft_rt_src_intern(io, "op", 2);
		args[na].type = TFT_ARG_STR;
		args[na++].v.str = tft_rt_src_site_name(io, op);
	} else if (a->kind != CUPTI_ACTIVITY_KIND_SYNCHRONIZATION) {
		u.no_op++; /* launched outside any zone */
	}
	if (a->kind == CUPTI_ACTIVITY_KIND_KERNEL || a->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
		int n = snprintf(text, sizeof(text), "[%u,%u,%u]", a->grid[0], a->grid[1], a->grid[2]);
		args[na].key = tft_rt_src_intern(io, "grid", 4);
		args[na].type = TFT_ARG_JSON;
		args[na++].v.str = tft_rt_src_intern(io, text, (size_t)n);
		n = snprintf(text, sizeof(text), "[%u,%u,%u]", a->block[0], a->block[1], a->block[2]);
		args[na].key = tft_rt_src_intern(io, "block", 5);
		args[na].type = TFT_ARG_JSON;
		args[na++].v.str = tft_rt_src_intern(io, text, (size_t)n);
	}
	if (a->bytes) {
		args[na].key = tft_rt_src_intern(io, "bytes", 5);
		args[na].type = TFT_ARG_INT;
		args[na++].v.i = (int64_t)a->bytes;
	}
	args[na].key = tft_rt_src_intern(io, "correlation", 11);
	args[na].type = TFT_ARG_INT;
	args[na++].v.i = a->corr;
	ev.nargs = (uint16_t)na;
	ev.args = args;
	if (tft_rt_src_append(io, &ev) == 0 && known && a->kind != CUPTI_ACTIVITY_KIND_SYNCHRONIZATION)
		tft_rt_src_flow(io, FLOW_NS | a->corr, &launch_site, tid, tft_rt_src_ns(io, tick),
				a->track, ev.ts_ns);
	return 1;
}

static void collect(void *ctx, struct tft_rt_src *io, int final)
{
	int64_t now = tft_rt_src_now_ns(io);
	struct buf *l, *n, *prev = NULL;
	uint64_t lost = 0, untraced = 0, nkernel = 0, nmemcpy = 0, nmemset = 0, nsync = 0;
	size_t dropped = 0;
	char val[160];

	(void)ctx;
	if (final || now >= u.next_flush_ns) {
		/* completed records (all of them at the end) come to buf_completed, on this thread */
		cu.cuptiActivityFlushAll(final ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
		u.next_flush_ns = now + FLUSH_NS;
		if (!u.ts_callback)
			measure_offset();
	}
	/* Acquire: pairs with the release CAS in buf_completed; reversed into completion order. */
	for (l = atomic_exchange_explicit(&u.done, NULL, memory_order_acquire); l; l = n) {
		n = l->next;
		l->next = prev;
		prev = l;
	}
	u.nacts = 0;
	for (l = prev; l; l = n) {
		n = l->next;
		parse(l, &lost);
		free(l->data);
		free(l);
	}
	for (uint32_t i = 0; i < u.nacts; i++)
		u.acts[i].track = stream_track(io, u.acts[i].ctx, u.acts[i].stream);
	qsort(u.acts, u.nacts, sizeof(*u.acts), cmp_act);
	for (uint32_t i = 0; i < u.nacts; i++) {
		const struct act *a = &u.acts[i];
		if (a->track == TFT_NONE) {
			lost++;
			continue;
		}
		if (!write_act(io, a)) {
			untraced++;
			continue;
		}
		if (a->kind == CUPTI_ACTIVITY_KIND_MEMCPY)
			nmemcpy++;
		else if (a->kind == CUPTI_ACTIVITY_KIND_MEMSET)
			nmemset++;
		else if (a->kind == CUPTI_ACTIVITY_KIND_SYNCHRONIZATION)
			nsync++;
		else
			nkernel++;
	}
	tft_rt_src_count(io, "cuda_kernels", (int64_t)nkernel);
	tft_rt_src_count(io, "cuda_memcpys", (int64_t)nmemcpy);
	tft_rt_src_count(io, "cuda_memsets", (int64_t)nmemset);
	tft_rt_src_count(io, "cuda_syncs", (int64_t)nsync);
	if (cu.cuptiActivityGetNumDroppedRecords &&
	    cu.cuptiActivityGetNumDroppedRecords(NULL, 0, &dropped) == CUPTI_SUCCESS && dropped)
		lost += dropped; /* (records CUPTI had no buffer for) */
	if (lost) {
		tft_rt_src_count(io, "cuda_dropped", (int64_t)lost);
		tft_rt_src_dropped(io, lost);
	}
	if (u.no_op) {
		tft_rt_src_count(io, "cuda_no_op", (int64_t)u.no_op);
		u.no_op = 0;
	}
	tft_rt_src_count(io, "cuda_untraced", (int64_t)untraced); /* launched while tracing was off */
	if (u.ts_callback)
		snprintf(val, sizeof(val), "offset_ns=0 error_ns=0 source=timestamp callback (CLOCK_MONOTONIC)");
	else
		snprintf(val, sizeof(val), "offset_ns=%" PRId64 " error_ns=%" PRId64 " source=cuptiGetTimestamp",
			 u.offset_ns, u.offset_err_ns);
	tft_rt_src_meta(io, "cuda_clock", val);
}

/* ---- injection ---------------------------------------------------------------------- */

static int said_load, said_fail;

static int open_cupti(void)
{
	const char *env = getenv("TFT_CUPTI_LIB");
	const char *cand[] = { env, TFT_CUPTI_LIB, "libcupti.so", "libcupti.so.13", "libcupti.so.12",
			       "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so" };

	for (size_t i = 0; i < sizeof(cand) / sizeof(cand[0]) && !u.lib; i++)
		if (cand[i] && *cand[i])
			u.lib = tft_preload_real_dlopen(cand[i], RTLD_NOW | RTLD_LOCAL);
	if (!u.lib) {
		tft_preload_say(&said_load, true, "CUDA calls run untraced: cannot load libcupti (%s)",
				dlerror());
		return -1;
	}
#define RESOLVE(f) cu.f = (__typeof__(cu.f))tft_preload_real_dlsym(u.lib, #f);
	CUPTI_FUNCS(RESOLVE)
#undef RESOLVE
	cu.register_timestamp = (CUptiResult(*)(uint64_t (*)(void)))tft_preload_real_dlsym(
		u.lib, "cuptiActivityRegisterTimestampCallback");
	if (!cu.cuptiSubscribe || !cu.cuptiEnableDomain || !cu.cuptiActivityRegisterCallbacks ||
	    !cu.cuptiActivityEnable || !cu.cuptiActivityGetNextRecord || !cu.cuptiActivityFlushAll ||
	    !cu.cuptiGetTimestamp) {
		tft_preload_say(&said_load, true, "CUDA calls run untraced: libcupti lacks functions");
		return -1;
	}
	return 0;
}

static const char *cupti_err(CUptiResult r)
{
	const char *s = NULL;

	if (cu.cuptiGetResultString)
		cu.cuptiGetResultString(r, &s);
	return s ? s : "CUPTI error";
}

/* Called by the CUDA driver (cuInit) in the library CUDA_INJECTION64_PATH names. */
TFT_INTERPOSE int InitializeInjection(void);
int InitializeInjection(void)
{
	static const struct tft_rt_source src = { collect, NULL };
	static const CUpti_ActivityKind kinds[] = {
		CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
		CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
	};
	static int done;
	CUptiResult r;
	void *m;

	if (done++ || !(tft_preload.intercept & TFT_ICPT_CUDA))
		return 1;
	if (open_cupti())
		return 1;
	m = mmap(NULL, sizeof(struct corr_ent) << CORR_BITS, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	u.rt_sites = calloc(CUPTI_RUNTIME_TRACE_CBID_SIZE, sizeof(*u.rt_sites));
	u.drv_sites = calloc(CUPTI_DRIVER_TRACE_CBID_SIZE, sizeof(*u.drv_sites));
	if (m == MAP_FAILED || !u.rt_sites || !u.drv_sites) {
		tft_preload_say(&said_fail, true, "CUDA calls run untraced: out of memory");
		return 1;
	}
	u.corr = m;
	tft_preload_claim(); /* the program starts using CUDA: the session starts */
	r = cu.cuptiSubscribe(&u.sub, (CUpti_CallbackFunc)on_callback, NULL);
	if (r != CUPTI_SUCCESS) {
		tft_preload_say(&said_fail, true,
				"CUDA calls run untraced: CUPTI refused a subscriber (%s; another "
				"profiler may hold it)",
				cupti_err(r));
		return 1;
	}
	cu.cuptiEnableDomain(1, u.sub, CUPTI_CB_DOMAIN_RUNTIME_API);
	cu.cuptiEnableDomain(1, u.sub, CUPTI_CB_DOMAIN_DRIVER_API);
	if (cu.register_timestamp && cu.register_timestamp(timestamp_cb) == CUPTI_SUCCESS)
		u.ts_callback = 1;
	r = cu.cuptiActivityRegisterCallbacks(buf_requested, buf_completed);
	for (size_t i = 0; r == CUPTI_SUCCESS && i < sizeof(kinds) / sizeof(kinds[0]); i++)
		r = cu.cuptiActivityEnable(kinds[i]);
	if (r != CUPTI_SUCCESS) {
		tft_preload_say(&said_fail, true, "CUDA kernels are not timed: %s (API calls are recorded)",
				cupti_err(r));
		return 1;
	}
	if (!u.ts_callback)
		measure_offset();
	if (tft_rt_source_add(&src) == 0)
		u.on = 1;
	return 1;
}

/* ---- NVTX ranges -------------------------------------------------------------------- */

static const struct tft_site *nvtx_site(const char *msg)
{
	const char *name;
	struct tft_site *s;

	if (!msg)
		return &nvtx_other;
	name = tft_strset_intern(&u.nvtx_names, msg, strnlen(msg, 256));
	if (!name)
		return &nvtx_other;
	s = tft_ptrmap_get(&u.nvtx_sites, (uintptr_t)name);
	if (s)
		return s;
	if (atomic_fetch_add_explicit(&u.nvtx_nsites, 1, memory_order_relaxed) >= NVTX_SITES_MAX ||
	    !(s = calloc(1, sizeof(*s))))
		return &nvtx_other;
	s->name = name;
	s->cat = "nvtx";
	tft_ptrmap_put(&u.nvtx_sites, (uintptr_t)name, s); /* (a racing twin is harmless) */
	return s;
}

static const char *nvtx_message(const nvtxEventAttributes_t *a)
{
	if (a && a->messageType == NVTX_MESSAGE_TYPE_ASCII)
		return a->message.ascii;
	return NULL;
}

static int nvtx_push(const char *msg)
{
	struct tft_zone z = tft_is_tracing() ? tft_zone_begin(nvtx_site(msg)) : (struct tft_zone){ 0, 0 };

	if (tls_nvtx_depth < NVTX_DEPTH)
		tls_nvtx[tls_nvtx_depth] = z;
	return (int)tls_nvtx_depth++;
}

static int nvtx_pop(void)
{
	if (!tls_nvtx_depth)
		return -1;
	tls_nvtx_depth--;
	if (tls_nvtx_depth < NVTX_DEPTH)
		tft_zone_end(tls_nvtx[tls_nvtx_depth]);
	return (int)tls_nvtx_depth;
}

static int NVTX_API my_RangePushA(const char *msg) { return nvtx_push(msg); }
static int NVTX_API my_RangePushEx(const nvtxEventAttributes_t *a) { return nvtx_push(nvtx_message(a)); }
static int NVTX_API my_RangePop(void) { return nvtx_pop(); }
static int NVTX_API my_DomainRangePushEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	(void)d;
	return nvtx_push(nvtx_message(a));
}
static int NVTX_API my_DomainRangePop(nvtxDomainHandle_t d)
{
	(void)d;
	return nvtx_pop();
}
static void NVTX_API my_MarkA(const char *msg)
{
	if (tft_is_tracing())
		tft_instant(nvtx_site(msg));
}
static void NVTX_API my_MarkEx(const nvtxEventAttributes_t *a)
{
	my_MarkA(nvtx_message(a));
}
static void NVTX_API my_NameOsThreadA(uint32_t tid, const char *name)
{
	if (name && (int64_t)tid == my_tid())
		tft_thread_name(name);
}

static void nvtx_set(NvtxGetExportTableFunc_t get, NvtxCallbackModule module, unsigned id,
		     NvtxFunctionPointer fn)
{
	const NvtxExportTableCallbacks *cb = get(NVTX_ETID_CALLBACKS);
	NvtxFunctionTable table = NULL;
	unsigned int size = 0;

	if (!cb || !cb->GetModuleFunctionTable || !cb->GetModuleFunctionTable(module, &table, &size) ||
	    !table || id >= size || !table[id])
		return;
	*table[id] = fn;
}

/* Called by NVTX (its first call) in the library NVTX_INJECTION64_PATH names. */
TFT_INTERPOSE int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get);
int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get)
{
	if (!get || !(tft_preload.intercept & TFT_ICPT_CUDA))
		return 0;
	if (tft_ptrmap_init(&u.nvtx_sites, 17) || tft_strset_init(&u.nvtx_names, 17))
		return 0;
	tft_preload_claim();
	nvtx_set(get, NVTX_CB_MODULE_CORE, NVTX_CBID_CORE_RangePushA, (NvtxFunctionPointer)my_RangePushA);
	nvtx_set(get, NVTX_CB_MODULE_CORE, NVTX_CBID_CORE_RangePushEx, (NvtxFunctionPointer)my_RangePushEx);
	nvtx_set(get, NVTX_CB_MODULE_CORE, NVTX_CBID_CORE_RangePop, (NvtxFunctionPointer)my_RangePop);
	nvtx_set(get, NVTX_CB_MODULE_CORE, NVTX_CBID_CORE_MarkA, (NvtxFunctionPointer)my_MarkA);
	nvtx_set(get, NVTX_CB_MODULE_CORE, NVTX_CBID_CORE_MarkEx, (NvtxFunctionPointer)my_MarkEx);
	nvtx_set(get, NVTX_CB_MODULE_CORE, NVTX_CBID_CORE_NameOsThreadA,
		 (NvtxFunctionPointer)my_NameOsThreadA);
	nvtx_set(get, NVTX_CB_MODULE_CORE2, NVTX_CBID_CORE2_DomainRangePushEx,
		 (NvtxFunctionPointer)my_DomainRangePushEx);
	nvtx_set(get, NVTX_CB_MODULE_CORE2, NVTX_CBID_CORE2_DomainRangePop,
		 (NvtxFunctionPointer)my_DomainRangePop);
	return 1;
}

void tft_cupti_setup(void)
{
}

#else /* !TFT_HAVE_CUPTI: built without the CUPTI headers; CUDA is not intercepted */

void tft_cupti_setup(void)
{
}

#endif
