/* SPDX-License-Identifier: MIT */
/*
 * MPI from above its profiling interface (docs/intercept.md, "MPI"): the
 * library defines the MPI functions a program calls (MPI_Send ...), and each
 * calls the MPI library's PMPI_ twin, found at run time (the preload library
 * links no libmpi: it loads in any program). Each call is a zone on the
 * calling thread named by the function (category "mpi") with its
 * communicator (an id every member agrees on), peer ranks (world ranks),
 * tag, bytes, datatype, count, the envelope sequence number of a message
 * (the k-th send from A to B with tag T on a communicator matches B's k-th
 * receive from A with tag T), the sequence number of a collective on its
 * communicator, request ids and what each wait or test completed.
 *
 * MPI_Init claims the session (the first use of the runtime it intercepts)
 * and, like MPI_Finalize, exchanges clocks with rank 0 (mpi_clock.c); the
 * drain writes the rank, the job and the exchanges as session meta (a
 * source). Calls are followed (numbered) from MPI_Init to MPI_Finalize
 * whether or not op-level tracing is on, and recorded while it is.
 */
#include <dlfcn.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "intercept/preload.h"

#if defined(TFT_HAVE_MPI)

#include "intercept/mpi_icpt.h"
#include "runtime/clock.h"
#include "runtime/source.h"

/* ---- the functions wrapped -------------------------------------------------------------- */

#define MPI_WRAPPED(X)                                                                            \
	X(MPI_Init) X(MPI_Init_thread) X(MPI_Finalize)                                            \
	X(MPI_Send) X(MPI_Ssend) X(MPI_Bsend) X(MPI_Rsend)                                        \
	X(MPI_Isend) X(MPI_Issend) X(MPI_Ibsend) X(MPI_Irsend)                                    \
	X(MPI_Send_init) X(MPI_Ssend_init) X(MPI_Bsend_init) X(MPI_Rsend_init) X(MPI_Recv_init)   \
	X(MPI_Start) X(MPI_Startall) X(MPI_Request_free) X(MPI_Cancel)                            \
	X(MPI_Recv) X(MPI_Irecv) X(MPI_Sendrecv) X(MPI_Sendrecv_replace)                          \
	X(MPI_Probe) X(MPI_Iprobe) X(MPI_Mprobe) X(MPI_Improbe) X(MPI_Mrecv) X(MPI_Imrecv)        \
	X(MPI_Wait) X(MPI_Waitall) X(MPI_Waitany) X(MPI_Waitsome)                                 \
	X(MPI_Test) X(MPI_Testall) X(MPI_Testany) X(MPI_Testsome)                                 \
	X(MPI_Barrier) X(MPI_Bcast) X(MPI_Reduce) X(MPI_Allreduce) X(MPI_Scan) X(MPI_Exscan)      \
	X(MPI_Gather) X(MPI_Gatherv) X(MPI_Scatter) X(MPI_Scatterv) X(MPI_Allgather)              \
	X(MPI_Allgatherv) X(MPI_Alltoall) X(MPI_Alltoallv) X(MPI_Alltoallw) X(MPI_Reduce_scatter) \
	X(MPI_Reduce_scatter_block)                                                               \
	X(MPI_Ibarrier) X(MPI_Ibcast) X(MPI_Ireduce) X(MPI_Iallreduce) X(MPI_Iscan) X(MPI_Iexscan) \
	X(MPI_Igather) X(MPI_Igatherv) X(MPI_Iscatter) X(MPI_Iscatterv) X(MPI_Iallgather)         \
	X(MPI_Iallgatherv) X(MPI_Ialltoall) X(MPI_Ialltoallv) X(MPI_Ialltoallw)                   \
	X(MPI_Ireduce_scatter) X(MPI_Ireduce_scatter_block)                                       \
	X(MPI_Comm_dup) X(MPI_Comm_dup_with_info) X(MPI_Comm_split) X(MPI_Comm_split_type)        \
	X(MPI_Comm_create) X(MPI_Comm_create_group) X(MPI_Cart_create) X(MPI_Cart_sub)            \
	X(MPI_Graph_create) X(MPI_Dist_graph_create) X(MPI_Dist_graph_create_adjacent)           \
	X(MPI_Intercomm_create) X(MPI_Intercomm_merge)                                            \
	X(MPI_Win_create) X(MPI_Win_allocate) X(MPI_Win_allocate_shared) X(MPI_Win_create_dynamic) \
	X(MPI_Win_free) X(MPI_Put) X(MPI_Get) X(MPI_Accumulate) X(MPI_Get_accumulate)             \
	X(MPI_Fetch_and_op) X(MPI_Compare_and_swap) X(MPI_Win_fence) X(MPI_Win_lock)              \
	X(MPI_Win_unlock) X(MPI_Win_lock_all) X(MPI_Win_unlock_all) X(MPI_Win_flush)              \
	X(MPI_Win_flush_all) X(MPI_Win_flush_local) X(MPI_Win_flush_local_all) X(MPI_Win_post)    \
	X(MPI_Win_start) X(MPI_Win_complete) X(MPI_Win_wait)

#define SITE(f) static const struct tft_site site_##f = { #f, "mpi", NULL, 0, 0 };
MPI_WRAPPED(SITE)
#undef SITE
static const struct tft_site site_sync = { "tftracer clock sync", "tftracer", NULL, 0, 0 };

#define DECL_REAL(f) __typeof__(&P##f) P##f;
static struct {
	MPI_WRAPPED(DECL_REAL)
} real;
#undef DECL_REAL

/* The real PMPI_ twin of f, found at first use (NULL: no MPI here). */
#define REAL(f)                                                                            \
	(__atomic_load_n(&real.P##f, __ATOMIC_RELAXED)                                     \
		 ? __atomic_load_n(&real.P##f, __ATOMIC_RELAXED)                           \
		 : (__atomic_store_n(&real.P##f, (__typeof__(real.P##f))tft_mpi_resolve("P" #f), \
				     __ATOMIC_RELAXED),                                    \
		    __atomic_load_n(&real.P##f, __ATOMIC_RELAXED)))
/* Call it, or say MPI_ERR_OTHER when there is none (a program that probed for MPI). */
#define PASS(f, ...) (REAL(f) ? real.P##f(__VA_ARGS__) : MPI_ERR_OTHER)

/* Calls are followed (between MPI_Init and MPI_Finalize, Open MPI's ABI). */
static inline int following(void)
{
	return atomic_load_explicit(&tft_mpi.on, memory_order_relaxed);
}

/* ---- one call: its zone and args ------------------------------------------------------------ */

struct mcall {
	struct tft_zone z;
	uint32_t n;
	struct tft_rt_arg a[TFT_RT_MAX_ARGS];
};

static inline void mc_begin(struct mcall *c, const struct tft_site *site)
{
	c->n = 0;
	c->z = tft_zone_begin(site);
}

static inline void arg_int(struct mcall *c, const char *k, int64_t v)
{
	if (c->z.depth && c->n < TFT_RT_MAX_ARGS)
		c->a[c->n++] = (struct tft_rt_arg){ .key = k, .type = TFT_RT_ARG_INT, .i = v };
}

static inline void arg_bool(struct mcall *c, const char *k, int v)
{
	if (c->z.depth && c->n < TFT_RT_MAX_ARGS)
		c->a[c->n++] = (struct tft_rt_arg){ .key = k, .type = TFT_RT_ARG_BOOL, .i = v != 0 };
}

/* A static string (names of datatypes and operations are interned for the process). */
static inline void arg_str(struct mcall *c, const char *k, const char *v)
{
	if (c->z.depth && c->n < TFT_RT_MAX_ARGS)
		c->a[c->n++] = (struct tft_rt_arg){ .key = k, .type = TFT_RT_ARG_STR, .s = v };
}

/* JSON text, copied when the zone ends (the buffer must live until then). */
static inline void arg_json(struct mcall *c, const char *k, const char *v, size_t len)
{
	if (c->z.depth && c->n < TFT_RT_MAX_ARGS)
		c->a[c->n++] = (struct tft_rt_arg){ .key = k, .type = TFT_RT_ARG_JSON, .s = v,
						    .len = (uint32_t)len };
}

static inline void mc_end(struct mcall *c)
{
	if (c->z.depth) {
		if (c->n)
			tft_rt_zone_args(c->z.depth, c->a, c->n);
		tft_zone_end(c->z);
	}
}

static inline void arg_comm(struct mcall *c, const struct tft_mpi_comm *ci)
{
	if (!c->z.depth || !ci)
		return;
	arg_int(c, "comm", ci->id);
	arg_int(c, "comm_size", ci->size);
	arg_int(c, "rank_in_comm", ci->rank);
}

/* Point-to-point: the other side (world rank; -1 any source, -2 MPI_PROC_NULL), tag,
 * bytes (count x the datatype's size when < 0), datatype, count, and the message's
 * envelope number when known. */
static void arg_p2p(struct mcall *c, const struct tft_mpi_comm *ci, int peer, int tag, int count,
		    MPI_Datatype dt, int64_t bytes, int64_t seq)
{
	if (!c->z.depth)
		return;
	if (bytes < 0)
		bytes = tft_mpi_bytes(count, dt);
	arg_comm(c, ci);
	arg_int(c, "peer", tft_mpi_world_rank(ci, peer));
	arg_int(c, "tag", tag);
	arg_int(c, "bytes", bytes);
	arg_str(c, "datatype", tft_mpi_type_name(dt));
	arg_int(c, "count", count);
	if (seq >= 0)
		arg_int(c, "seq", seq);
}

/* ---- JSON lists of what a call completed -------------------------------------------------- */

struct jbuf {
	char *p;
	size_t n;
	uint32_t left_out;
};

static __thread char jspace[2][TFT_RT_ARG_TEXT_MAX];

static void jb_init(struct jbuf *j, int which)
{
	j->p = jspace[which];
	j->p[0] = '[';
	j->n = 1;
	j->left_out = 0;
}

/* Append an item (formatted) if the list still fits, else count it left out. */
__attribute__((format(printf, 2, 3))) static void jb_add(struct jbuf *j, const char *fmt, ...)
{
	char item[256];
	va_list ap;
	int k;

	va_start(ap, fmt);
	k = vsnprintf(item, sizeof(item), fmt, ap);
	va_end(ap);
	if (k < 0 || (size_t)k >= sizeof(item) || j->n + (size_t)k + 2 > TFT_RT_ARG_TEXT_MAX) {
		j->left_out++;
		return;
	}
	if (j->n > 1)
		j->p[j->n++] = ',';
	memcpy(j->p + j->n, item, (size_t)k);
	j->n += (size_t)k;
}

static size_t jb_close(struct jbuf *j)
{
	j->p[j->n++] = ']';
	return j->n;
}

/* ---- scratch arrays (requests saved before a completion call, statuses) ---------------------- */

#define STACK_N 32

static __thread MPI_Status *tls_sts;
static __thread size_t tls_nsts;
static __thread struct tft_mpi_req **tls_recs;
static __thread size_t tls_nrecs;

/* Room for n items in a thread's scratch array (allocated once it needs more than
 * the stack's). NULL: out of memory (the call then goes unfollowed). */
static void *scratch(void **buf, size_t *cap, size_t n, size_t size)
{
	if (n > *cap) {
		void *p = realloc(*buf, n * size);
		if (!p)
			return NULL;
		*buf = p;
		*cap = n;
	}
	return *buf;
}

/* ---- requests -------------------------------------------------------------------------------- */

/* A new request the real call filled in: followed from now on (r freed if the call failed). */
static void req_made(struct tft_mpi_req *r, int rc, MPI_Request *req)
{
	if (!r)
		return;
	if (rc != MPI_SUCCESS || !req) {
		tft_mpi_req_free(r);
		return;
	}
	__atomic_store_n(&r->h, *req, __ATOMIC_RELEASE);
	tft_mpi_req_add(r);
}

static int cmp_post(const void *a, const void *b)
{
	const struct tft_mpi_req *x = *(struct tft_mpi_req *const *)a;
	const struct tft_mpi_req *y = *(struct tft_mpi_req *const *)b;

	return x->post < y->post ? -1 : x->post > y->post;
}

/*
 * A wait or test completed the requests recs[0..n) (sts[i]: the status of
 * recs[i], NULL entries: handles not followed): receives learn their match
 * (in posting order), the call gets `completes` (request ids) and `recv` (for
 * each receive: request, world peer, tag, bytes, envelope number) and, when it
 * completed one request, its peer, tag, bytes and number as args; then the
 * records are forgotten (a persistent request's stays, inactive).
 */
static void completed(struct mcall *c, struct tft_mpi_req **recs, const MPI_Status *sts, int n)
{
	struct tft_mpi_req *only = NULL;
	struct jbuf jc, jr;
	int nrecv = 0, nknown = 0;

	/* receives first, in the order they were posted: earlier ones take earlier numbers */
	for (int i = 0; i < n; i++) {
		struct tft_mpi_req *r = recs[i];
		int cancelled = 0;
		if (!r)
			continue;
		nknown++;
		only = r;
		if (r->kind != TFT_MREQ_RECV)
			continue;
		if (MREAL(PMPI_Test_cancelled))
			tft_mpi_real_fns.PMPI_Test_cancelled(&sts[i], &cancelled);
		if (cancelled) { /* no match: left out of `recv` */
			tft_mpi_recv_forget(r);
			r->matched = -1;
			continue;
		}
		nrecv++;
	}
	if (nrecv) {
		struct tft_mpi_req *stack[STACK_N], **order = stack;
		const MPI_Status *sstack[STACK_N], **osts = sstack;
		int k = 0;
		if (n > STACK_N) {
			order = malloc((size_t)n * sizeof(*order));
			osts = malloc((size_t)n * sizeof(*osts));
		}
		if (order && osts) {
			for (int i = 0; i < n; i++)
				if (recs[i] && recs[i]->kind == TFT_MREQ_RECV && recs[i]->matched >= 0)
					order[k++] = recs[i];
			qsort(order, (size_t)k, sizeof(*order), cmp_post);
			for (int i = 0; i < k; i++)
				for (int j = 0; j < n; j++)
					if (recs[j] == order[i])
						osts[i] = &sts[j];
			for (int i = 0; i < k; i++)
				tft_mpi_recv_matched(order[i], osts[i], recs, n);
		}
		if (order != stack)
			free(order);
		if (osts != sstack)
			free((void *)osts);
	}
	if (c->z.depth && nknown) {
		jb_init(&jc, 0);
		jb_init(&jr, 1);
		for (int i = 0; i < n; i++) {
			struct tft_mpi_req *r = recs[i];
			if (!r)
				continue;
			jb_add(&jc, "%" PRIu64, r->id);
			if (r->kind == TFT_MREQ_RECV && r->matched > 0)
				jb_add(&jr,
				       "{\"request\":%" PRIu64 ",\"peer\":%d,\"tag\":%d,\"bytes\":%" PRId64
				       ",\"seq\":%" PRId64 "}",
				       r->id, tft_mpi_world_rank(r->ci, r->rpeer), r->rtag, r->rbytes, r->seq);
		}
		arg_json(c, "completes", jc.p, jb_close(&jc));
		if (nrecv)
			arg_json(c, "recv", jr.p, jb_close(&jr));
		if (jc.left_out || jr.left_out)
			arg_int(c, "left_out", jc.left_out > jr.left_out ? jc.left_out : jr.left_out);
		if (nknown == 1 && only) {
			if (only->ci)
				arg_int(c, "comm", only->ci->id);
			if (only->kind == TFT_MREQ_RECV && only->matched > 0) {
				arg_int(c, "peer", tft_mpi_world_rank(only->ci, only->rpeer));
				arg_int(c, "tag", only->rtag);
				arg_int(c, "bytes", only->rbytes);
				if (only->seq >= 0)
					arg_int(c, "seq", only->seq);
			} else if (only->kind == TFT_MREQ_SEND) {
				arg_int(c, "peer", tft_mpi_world_rank(only->ci, only->peer));
				arg_int(c, "tag", only->tag);
				arg_int(c, "bytes", only->bytes);
				if (only->seq >= 0)
					arg_int(c, "seq", only->seq);
			}
		}
	}
	for (int i = 0; i < n; i++) {
		struct tft_mpi_req *r = recs[i];
		if (!r)
			continue;
		if (r->persistent) {
			r->active = 0;
			r->seq = -1;
			r->matched = 0;
		} else {
			tft_mpi_req_done(r);
		}
	}
}


/* ---- point-to-point ------------------------------------------------------------------------ */

typedef int (*send_fn)(const void *, int, MPI_Datatype, int, int, MPI_Comm);
typedef int (*isend_fn)(const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);

static int send_common(const struct tft_site *site, send_fn fn, const void *buf, int count,
		       MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
	struct tft_mpi_comm *ci = tft_mpi_comm_of(comm);
	int64_t seq = tft_mpi_send_seq(ci, dest, tag);
	struct mcall c;
	int rc;

	mc_begin(&c, site);
	rc = fn(buf, count, dt, dest, tag, comm);
	arg_p2p(&c, ci, dest, tag, count, dt, -1, seq);
	mc_end(&c);
	return rc;
}

static int isend_common(const struct tft_site *site, isend_fn fn, const void *buf, int count,
			MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
	struct tft_mpi_comm *ci = tft_mpi_comm_of(comm);
	struct tft_mpi_req *r = tft_mpi_req_new();
	int64_t seq = tft_mpi_send_seq(ci, dest, tag), bytes = tft_mpi_bytes(count, dt);
	uint64_t id = r ? r->id : 0;
	struct mcall c;
	int rc;

	if (r) {
		r->kind = TFT_MREQ_SEND;
		r->ci = ci;
		r->peer = dest;
		r->tag = tag;
		r->seq = seq;
		r->bytes = bytes;
	}
	mc_begin(&c, site);
	rc = fn(buf, count, dt, dest, tag, comm, req);
	req_made(r, rc, req); /* (r may be completed by another thread from here on) */
	arg_p2p(&c, ci, dest, tag, count, dt, bytes, seq);
	if (r && rc == MPI_SUCCESS)
		arg_int(&c, "request", (int64_t)id);
	mc_end(&c);
	return rc;
}

/* A persistent send or receive: the request is followed; each MPI_Start is one message. */
static int pinit_common(const struct tft_site *site, isend_fn fn, int kind, const void *buf,
			int count, MPI_Datatype dt, int peer, int tag, MPI_Comm comm, MPI_Request *req)
{
	struct tft_mpi_comm *ci = tft_mpi_comm_of(comm);
	struct tft_mpi_req *r = tft_mpi_req_new();
	int64_t bytes = tft_mpi_bytes(count, dt);
	uint64_t id = r ? r->id : 0;
	struct mcall c;
	int rc;

	if (r) {
		r->kind = kind;
		r->persistent = 1;
		r->ci = ci;
		r->peer = peer;
		r->tag = tag;
		r->bytes = bytes;
	}
	mc_begin(&c, site);
	rc = fn(buf, count, dt, peer, tag, comm, req);
	req_made(r, rc, req);
	arg_p2p(&c, ci, peer, tag, count, dt, bytes, -1);
	if (r && rc == MPI_SUCCESS)
		arg_int(&c, "request", (int64_t)id);
	mc_end(&c);
	return rc;
}

#define BLOCKING_SEND(F)                                                                         \
	TFT_INTERPOSE int F(const void *buf, int count, MPI_Datatype dt, int dest, int tag,      \
			    MPI_Comm comm)                                                       \
	{                                                                                        \
		if (!following() || !REAL(F))                                                    \
			return PASS(F, buf, count, dt, dest, tag, comm);                         \
		return send_common(&site_##F, real.P##F, buf, count, dt, dest, tag, comm);       \
	}
#define NONBLOCKING_SEND(F)                                                                      \
	TFT_INTERPOSE int F(const void *buf, int count, MPI_Datatype dt, int dest, int tag,      \
			    MPI_Comm comm, MPI_Request *req)                                     \
	{                                                                                        \
		if (!following() || !REAL(F))                                                    \
			return PASS(F, buf, count, dt, dest, tag, comm, req);                    \
		return isend_common(&site_##F, real.P##F, buf, count, dt, dest, tag, comm, req); \
	}
#define PERSISTENT_SEND(F)                                                                       \
	TFT_INTERPOSE int F(const void *buf, int count, MPI_Datatype dt, int dest, int tag,      \
			    MPI_Comm comm, MPI_Request *req)                                     \
	{                                                                                        \
		if (!following() || !REAL(F))                                                    \
			return PASS(F, buf, count, dt, dest, tag, comm, req);                    \
		return pinit_common(&site_##F, real.P##F, TFT_MREQ_SEND, buf, count, dt, dest,   \
				    tag, comm, req);                                             \
	}
BLOCKING_SEND(MPI_Send)
BLOCKING_SEND(MPI_Ssend)
BLOCKING_SEND(MPI_Bsend)
BLOCKING_SEND(MPI_Rsend)
NONBLOCKING_SEND(MPI_Isend)
NONBLOCKING_SEND(MPI_Issend)
NONBLOCKING_SEND(MPI_Ibsend)
NONBLOCKING_SEND(MPI_Irsend)
PERSISTENT_SEND(MPI_Send_init)
PERSISTENT_SEND(MPI_Ssend_init)
PERSISTENT_SEND(MPI_Bsend_init)
PERSISTENT_SEND(MPI_Rsend_init)

TFT_INTERPOSE int MPI_Recv_init(void *buf, int count, MPI_Datatype dt, int source, int tag,
				MPI_Comm comm, MPI_Request *req)
{
	if (!following() || !REAL(MPI_Recv_init))
		return PASS(MPI_Recv_init, buf, count, dt, source, tag, comm, req);
	return pinit_common(&site_MPI_Recv_init, (isend_fn)real.PMPI_Recv_init, TFT_MREQ_RECV, buf,
			    count, dt, source, tag, comm, req);
}

/* A persistent request starts one message: a new id, its envelope number (a send's now,
 * a receive's as any receive posted now). */
static void start_one(struct tft_mpi_req *r)
{
	r->id = atomic_fetch_add_explicit(&tft_mpi.next_req_id, 1, memory_order_relaxed);
	r->active = 1;
	r->matched = 0;
	if (r->kind == TFT_MREQ_SEND)
		r->seq = tft_mpi_send_seq(r->ci, r->peer, r->tag);
	else if (r->kind == TFT_MREQ_RECV)
		tft_mpi_recv_posted(r->ci, r, r->peer, r->tag);
}

TFT_INTERPOSE int MPI_Start(MPI_Request *req)
{
	struct tft_mpi_req *r;
	struct mcall c;
	int rc;

	if (!following() || !REAL(MPI_Start))
		return PASS(MPI_Start, req);
	r = req ? tft_mpi_req_find(*req) : NULL;
	if (r && (!r->persistent || r->active))
		r = NULL;
	if (r)
		start_one(r);
	mc_begin(&c, &site_MPI_Start);
	rc = real.PMPI_Start(req);
	if (r && c.z.depth) {
		arg_comm(&c, r->ci);
		arg_int(&c, "request", (int64_t)r->id);
		arg_str(&c, "kind", r->kind == TFT_MREQ_SEND ? "send" : "recv");
		arg_int(&c, "peer", tft_mpi_world_rank(r->ci, r->peer));
		arg_int(&c, "tag", r->tag);
		arg_int(&c, "bytes", r->bytes);
		if (r->seq >= 0)
			arg_int(&c, "seq", r->seq);
	}
	mc_end(&c);
	return rc;
}

TFT_INTERPOSE int MPI_Startall(int count, MPI_Request reqs[])
{
	struct tft_mpi_req *stack[STACK_N], **recs = stack;
	struct jbuf j;
	struct mcall c;
	int rc;

	if (!following() || !REAL(MPI_Startall))
		return PASS(MPI_Startall, count, reqs);
	if (count > STACK_N)
		recs = scratch((void **)&tls_recs, &tls_nrecs, (size_t)count, sizeof(*recs));
	if (!recs || count < 0)
		return real.PMPI_Startall(count, reqs);
	tft_mpi_req_find_many(reqs, count, recs);
	for (int i = 0; i < count; i++) {
		if (recs[i] && (!recs[i]->persistent || recs[i]->active))
			recs[i] = NULL;
		if (recs[i])
			start_one(recs[i]);
	}
	mc_begin(&c, &site_MPI_Startall);
	if (c.z.depth) { /* (read before the call: another thread may complete them after it) */
		jb_init(&j, 0);
		for (int i = 0; i < count; i++) {
			struct tft_mpi_req *r = recs[i];
			if (!r)
				continue;
			jb_add(&j,
			       "{\"request\":%" PRIu64 ",\"kind\":\"%s\",\"comm\":%" PRId64 ",\"peer\":%d,"
			       "\"tag\":%d,\"bytes\":%" PRId64 ",\"seq\":%" PRId64 "}",
			       r->id, r->kind == TFT_MREQ_SEND ? "send" : "recv", r->ci ? r->ci->id : -1,
			       tft_mpi_world_rank(r->ci, r->peer), r->tag, r->bytes, r->seq);
		}
		arg_json(&c, "started", j.p, jb_close(&j));
		if (j.left_out)
			arg_int(&c, "left_out", j.left_out);
	}
	rc = real.PMPI_Startall(count, reqs);
	mc_end(&c);
	return rc;
}

TFT_INTERPOSE int MPI_Request_free(MPI_Request *req)
{
	struct tft_mpi_req *r;
	struct mcall c;
	int rc;

	if (!following() || !REAL(MPI_Request_free))
		return PASS(MPI_Request_free, req);
	r = req ? tft_mpi_req_find(*req) : NULL;
	mc_begin(&c, &site_MPI_Request_free);
	if (r)
		arg_int(&c, "request", (int64_t)r->id);
	rc = real.PMPI_Request_free(req);
	if (r && rc == MPI_SUCCESS)
		tft_mpi_req_done(r); /* (an active receive freed: it never tells its match) */
	mc_end(&c);
	return rc;
}

TFT_INTERPOSE int MPI_Cancel(MPI_Request *req)
{
	struct tft_mpi_req *r;
	struct mcall c;
	int rc;

	if (!following() || !REAL(MPI_Cancel))
		return PASS(MPI_Cancel, req);
	r = req ? tft_mpi_req_find(*req) : NULL;
	mc_begin(&c, &site_MPI_Cancel);
	if (r)
		arg_int(&c, "request", (int64_t)r->id);
	rc = real.PMPI_Cancel(req);
	mc_end(&c);
	return rc;
}

TFT_INTERPOSE int MPI_Recv(void *buf, int count, MPI_Datatype dt, int source, int tag,
			   MPI_Comm comm, MPI_Status *status)
{
	struct tft_mpi_comm *ci;
	struct tft_mpi_req tmp;
	MPI_Status mine, *st = status ? status : &mine; /* (MPI_STATUS_IGNORE is NULL) */
	struct mcall c;
	int rc;

	if (!following() || !REAL(MPI_Recv))
		return PASS(MPI_Recv, buf, count, dt, source, tag, comm, status);
	ci = tft_mpi_comm_of(comm);
	memset(&tmp, 0, sizeof(tmp));
	tft_mpi_recv_posted(ci, &tmp, source, tag);
	mc_begin(&c, &site_MPI_Recv);
	rc = real.PMPI_Recv(buf, count, dt, source, tag, comm, st);
	if (rc == MPI_SUCCESS) {
		tft_mpi_recv_matched(&tmp, st, NULL, 0);
		arg_p2p(&c, ci, tmp.rpeer, tmp.rtag, count, dt, tmp.rbytes, tmp.seq);
	} else {
		tft_mpi_recv_forget(&tmp);
		arg_p2p(&c, ci, source, tag, count, dt, -1, -1);
	}
	mc_end(&c);
	return rc;
}

TFT_INTERPOSE int MPI_Irecv(void *buf, int count, MPI_Datatype dt, int source, int tag,
			    MPI_Comm comm, MPI_Request *req)
{
	struct tft_mpi_comm *ci;
	struct tft_mpi_req *r;
	int64_t seq = -1, bytes = 0;
	uint64_t id = 0;
	struct mcall c;
	int rc;

	if (!following() || !REAL(MPI_Irecv))
		return PASS(MPI_Irecv, buf, count, dt, source, tag, comm, req);
	ci = tft_mpi_comm_of(comm);
	bytes = tft_mpi_bytes(count, dt);
	if ((r = tft_mpi_req_new()) != NULL) {
		tft_mpi_recv_posted(ci, r, source, tag);
		r->bytes = bytes;
		seq = r->seq;
		id = r->id;
	}
	mc_begin(&c, &site_MPI_Irecv);
	rc = real.PMPI_Irecv(buf, count, dt, source, tag, comm, req);
	req_made(r, rc, req);
	arg_p2p(&c, ci, source, tag, count, dt, bytes, seq);
	if (r && rc == MPI_SUCCESS)
		arg_int(&c, "request", (int64_t)id);
	mc_end(&c);
	return rc;
}

/* The receive half of a send-receive as args: recv_peer, recv_tag, recv_bytes, recv_seq. */
static void arg_recv_half(struct mcall *c, const struct tft_mpi_comm *ci, const struct tft_mpi_req *r)
{
	arg_int(c, "recv_peer", tft_mpi_world_rank(ci, r->rpeer));
	arg_int(c, "recv_tag", r->rtag);
	arg_int(c, "recv_bytes", r->rbytes);
	if (r->seq >= 0)
		arg_int(c, "recv_seq", r->seq);
}

TFT_INTERPOSE int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag,
			       void *rbuf, int rcount, MPI_Datatype rtype, int source, int rtag,
			       MPI_Comm comm, MPI_Status *status)
{
	struct tft_mpi_comm *ci;
	struct tft_mpi_req tmp;
	MPI_Status mine, *st = status ? status : &mine;
	int64_t seq;
	struct mcall c;
	int rc;

	if (!following() || !REAL(MPI_Sendrecv))
		return PASS(MPI_Sendrecv, sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source,
			    rtag, comm, status);
	ci = tft_mpi_comm_of(comm);
	seq = tft_mpi_send_seq(ci, dest, stag);
	memset(&tmp, 0, sizeof(tmp));
	tft_mpi_recv_posted(ci, &tmp, source, rtag);
	mc_begin(&c, &site_MPI_Sendrecv);
	rc = real.PMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag,
				comm, st);
	if (rc == MPI_SUCCESS)
		tft_mpi_recv_matched(&tmp, st, NULL, 0);
	else
		tft_mpi_recv_forget(&tmp);
	arg_p2p(&c, ci, dest, stag, scount, stype, -1, seq);
	if (rc == MPI_SUCCESS)
		arg_recv_half(&c, ci, &tmp);
	mc_end(&c);
	return rc;
}

TFT_INTERPOSE int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype dt, int dest, int stag,
				       int source, int rtag, MPI_Comm comm, MPI_Status *status)
{
	struct tft_mpi_comm *ci;
	struct tft_mpi_req tmp;
	MPI_Status mine, *st = status ? status : &mine;
	int64_t seq;
	struct mcall c;
	int rc;

	if (!following() || !REAL(MPI_Sendrecv_replace))
		return PASS(MPI_Sendrecv_replace, buf, count, dt, dest, stag, source, rtag, comm, status);
	ci = tft_mpi_comm_of(comm);
	seq = tft_mpi_send_seq(ci, dest, stag);
	memset(&tmp, 0, sizeof(tmp));
	tft_mpi_recv_posted(ci, &tmp, source, rtag);
	mc_begin(&c, &site_MPI_Sendrecv_replace);
	rc = real.PMPI_Sendrecv_replace(buf, count, dt, dest, stag, source, rtag, comm, st);
	if (rc == MPI_SUCCESS)
		tft_mpi_recv_matched(&tmp, st, NULL, 0);
	else
		tft_mpi_recv_forget(&tmp);
	arg_p2p(&c, ci, dest, stag, count, dt, -1, seq);
	if (rc == MPI_SUCCESS)
		arg_recv_half(&c, ci, &tmp);
	mc_end(&c);
	return rc;
}

/* ---- probes and matched messages ------------------------------------------------------------- */

#define MSGS 1024u
static pthread_mutex_t msg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	MPI_Message m;
	struct tft_mpi_comm *ci;
	int rpeer, rtag;
	int64_t rbytes, seq;
} msgs[MSGS];

/* A message MPI_Mprobe / MPI_Improbe matched: what MPI_Mrecv / MPI_Imrecv will say of it. */
static void msg_put(MPI_Message m, const struct tft_mpi_req *r)
{
	uint32_t j = (uint32_t)(((uintptr_t)m >> 4) & (MSGS - 1));

	if (!m || m == tft_mpi.msg_null || m == tft_mpi.msg_no_proc)
		return;
	pthread_mutex_lock(&msg_lock);
	for (uint32_t k = 0; k < MSGS; k++, j = (j + 1) & (MSGS - 1)) {
		if (!msgs[j].m || msgs[j].m == m) {
			msgs[j].m = m;
			msgs[j].ci = r->ci;
			msgs[j].rpeer = r->rpeer;
			msgs[j].rtag = r->rtag;
			msgs[j].rbytes = r->rbytes;
			msgs[j].seq = r->seq;
			break;
		}
	}
	pthread_mutex_unlock(&msg_lock);
}

/* Take a matched message's record into r (0), or -1 when none. */
static int msg_take(MPI_Message m, struct tft_mpi_req *r)
{
	uint32_t j = (uint32_t)(((uintptr_t)m >> 4) & (MSGS - 1));
	int found = -1;

	if (!m)
		return -1;
	pthread_mutex_lock(&msg_lock);
	for (uint32_t k = 0; k < MSGS && msgs[j].m; k++, j = (j + 1) & (MSGS - 1)) {
		if (msgs[j].m != m)
			continue;
		r->ci = msgs[j].ci;
		r->rpeer = msgs[j].rpeer;
		r->rtag = msgs[j].rtag;
		r->rbytes = msgs[j].rbytes;
		r->seq = msgs[j].seq;
		r->matched = 1;
		/* backward shift: the probe sequence stays unbroken */
		for (uint32_t i = j, nx = (j + 1) & (MSGS - 1);; nx = (nx + 1) & (MSGS - 1)) {
			uint32_t h;
			if (!msgs[nx].m) {
				msgs[i].m = NULL;
				break;
			}
			h = (uint32_t)(((uintptr_t)msgs[nx].m >> 4) & (MSGS - 1));
			if ((nx > i && (h <= i || h > nx)) || (nx < i && h <= i && h > nx)) {
				msgs[i] = msgs[nx];
				i = nx;
			}
		}
		found = 0;
		break;
	}
	pthread_mutex_unlock(&msg_lock);
	return found;
}

static void arg_status(struct mcall *c, const struct tft_mpi_comm *ci, const MPI_Status *st)
{
	int n = 0;

	arg_comm(c, ci);
	arg_int(c, "peer", tft_mpi_world_rank(ci, st->MPI_SOURCE));
	arg_int(c, "tag", st->MPI_TAG);
	if (MREAL(PMPI_Get_count) && tft_mpi_real_fns.PMPI_Get_count(st, tft_mpi.byte, &n) == MPI_SUCCESS)
		arg_int(c, "bytes", n);
}

TFT_INTERPOSE int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
	MPI_Status mine, *st = status ? status : &mine;
	struct mcall c;
	int rc;

	if (!following() || !REAL(MPI_Probe))
		return PASS(MPI_Probe, source, tag, comm, status);
	mc_begin(&c, &site_MPI_Probe);
	rc = real.PMPI_Probe(source, tag, comm, st);
	if (rc == MPI_SUCCESS && c.z.depth)
		arg_status(&c, tft_mpi_comm_of(comm), st);
	mc_end(&c);
	return rc;
}

TFT_INTERPOSE int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
	MPI_Status mine, *st = status ? status : &mine;
	struct mcall c;
	int rc;

	if (!following() || !REAL(MPI_Iprobe))
		return PASS(MPI_Iprobe, source, tag, comm, flag, status);
	mc_begin(&c, &site_MPI_Iprobe);
	rc = real.PMPI_Iprobe(source, tag, comm, flag, st);
	if (rc == MPI_SUCCESS && c.z.depth) {
		arg_bool(&c, "found", *flag);
		if (*flag)
			arg_status(&c, tft_mpi_comm_of(comm), st);
		else
			arg_comm(&c, tft_mpi_comm_of(comm));
	}
	mc_end(&c);
	return rc;
}

/* A matched probe takes its message out of matching: the receive's envelope number. */
static void probe_matched(struct mcall *c, struct tft_mpi_comm *ci, struct tft_mpi_req *tmp,
			  const MPI_Status *st, MPI_Message m)
{
	tft_mpi_recv_matched(tmp, st, NULL, 0);
	msg_put(m, tmp);
	arg_comm(c, ci);
	arg_int(c, "peer", tft_mpi_world_rank(ci, tmp->rpeer));
	arg_int(c, "tag", tmp->rtag);
	arg_int(c, "bytes", tmp->rbytes);
	if (tmp->seq >= 0)
		arg_int(c, "seq", tmp->seq);
}

TFT_INTERPOSE int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message,
			     MPI_Status *status)
{
	MPI_Status mine, *st = status ? status : &mine;
	struct tft_mpi_comm *ci;
	struct tft_mpi_req tmp;
	struct mcall c;
	int rc;

	if (!following() || !REAL(MPI_Mprobe))
		return PASS(MPI_Mprobe, source, tag, comm, message, status);
	ci = tft_mpi_comm_of(comm);
	memset(&tmp, 0, sizeof(tmp));
	tft_mpi_recv_posted(ci, &tmp, source, tag);
	mc_begin(&c, &site_MPI_Mprobe);
	rc = real.PMPI_Mprobe(source, tag, comm, message, st);
	if (rc == MPI_SUCCESS)
		probe_matched(&c, ci, &tmp, st, *message);
	else
		tft_mpi_recv_forget(&tmp);
	mc_end(&c);
	return rc;
}

TFT_INTERPOSE int MPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
			      MPI_Status *status)
{
	MPI_Status mine, *st = status ? status : &mine;
	struct tft_mpi_comm *ci;
	struct tft_mpi_req tmp;
	struct mcall c;
	int rc;

	if (!following() || !REAL(MPI_Improbe))
		return PASS(MPI_Improbe, source, tag, comm, flag, message, status);
	ci = tft_mpi_comm_of(comm);
	mc_begin(&c, &site_MPI_Improbe);
	rc = real.PMPI_Improbe(source, tag, comm, flag, message, st);
	if (rc == MPI_SUCCESS) {
		arg_bool(&c, "found", *flag);
		if (*flag) {
			memset(&tmp, 0, sizeof(tmp));
			tft_mpi_recv_posted(ci, &tmp, source, tag);
			probe_matched(&c, ci, &tmp, st, *message);
		} else {
			arg_comm(&c, ci);
		}
	}
	mc_end(&c);
	return rc;
}

TFT_INTERPOSE int MPI_Mrecv(void *buf, int count, MPI_Datatype dt, MPI_Message *message,
			    MPI_Status *status)
{
	MPI_Status mine, *st = status ? status : &mine;
	struct tft_mpi_req info;
	struct mcall c;
	int rc, known;

	if (!following() || !REAL(MPI_Mrecv))
		return PASS(MPI_Mrecv, buf, count, dt, message, status);
	memset(&info, 0, sizeof(info));
	known = message ? msg_take(*message, &info) == 0 : 0;
	mc_begin(&c, &site_MPI_Mrecv);
	rc = real.PMPI_Mrecv(buf, count, dt, message, st);
	if (known)
		arg_p2p(&c, info.ci, info.rpeer, info.rtag, count, dt, info.rbytes, info.seq);
	mc_end(&c);
	return rc;
}

TFT_INTERPOSE int MPI_Imrecv(void *buf, int count, MPI_Datatype dt, MPI_Message *message,
			     MPI_Request *req)
{
	struct tft_mpi_req info, *r = NULL;
	uint64_t id = 0;
	struct mcall c;
	int rc, known;

	if (!following() || !REAL(MPI_Imrecv))
		return PASS(MPI_Imrecv, buf, count, dt, message, req);
	memset(&info, 0, sizeof(info));
	known = message ? msg_take(*message, &info) == 0 : 0;
	if (known && (r = tft_mpi_req_new()) != NULL) {
		r->kind = TFT_MREQ_RECV;
		r->ci = info.ci;
		r->peer = info.rpeer;
		r->tag = info.rtag;
		r->bytes = tft_mpi_bytes(count, dt);
		r->seq = info.seq;
		id = r->id;
	}
	mc_begin(&c, &site_MPI_Imrecv);
	rc = real.PMPI_Imrecv(buf, count, dt, message, req);
	req_made(r, rc, req);
	if (known) {
		arg_p2p(&c, info.ci, info.rpeer, info.rtag, count, dt, info.rbytes, info.seq);
		if (r && rc == MPI_SUCCESS)
			arg_int(&c, "request", (int64_t)id);
	}
	mc_end(&c);
	return rc;
}

/* ---- completion --------------------------------------------------------------------------------- */

/* The records of a call's requests (before it: MPI frees what completes), in scratch. */
static struct tft_mpi_req **records_of(const MPI_Request *reqs, int count,
				       struct tft_mpi_req **stack)
{
	struct tft_mpi_req **recs = stack;

	if (count <= 0)
		return NULL;
	if (count > STACK_N)
		recs = scratch((void **)&tls_recs, &tls_nrecs, (size_t)count, sizeof(*recs));
	if (!recs)
		return NULL;
	tft_mpi_req_find_many(reqs, count, recs);
	for (int i = 0; i < count; i++)
		if (recs[i] && recs[i]->persistent && !recs[i]->active)
			recs[i] = NULL; /* an inactive persistent request completes nothing */
	return recs;
}

/* Statuses for a call that completes receives we follow, when the program ignores them. */
static MPI_Status *statuses_for(MPI_Status *given, int count, MPI_Status *stack)
{
	if (given)
		return given;
	if (count <= STACK_N)
		return stack;
	return scratch((void **)&tls_sts, &tls_nsts, (size_t)count, sizeof(MPI_Status));
}

TFT_INTERPOSE int MPI_Wait(MPI_Request *req, MPI_Status *status)
{
	struct tft_mpi_req *r;
	MPI_Status mine, *st = status ? status : &mine;
	struct mcall c;
	int rc;

	if (!following() || !REAL(MPI_Wait))
		return PASS(MPI_Wait, req, status);
	r = req ? tft_mpi_req_find(*req) : NULL;
	if (r && r->persistent && !r->active)
		r = NULL;
	mc_begin(&c, &site_MPI_Wait);
	rc = real.PMPI_Wait(req, st);
	if (rc == MPI_SUCCESS && r)
		completed(&c, &r, st, 1);
	mc_end(&c);
	return rc;
}

TFT_INTERPOSE int MPI_Test(MPI_Request *req, int *flag, MPI_Status *status)
{
	struct tft_mpi_req *r;
	MPI_Status mine, *st = status ? status : &mine;
	struct mcall c;
	int rc;

	if (!following() || !REAL(MPI_Test))
		return PASS(MPI_Test, req, flag, status);
	r = req ? tft_mpi_req_find(*req) : NULL;
	if (r && r->persistent && !r->active)
		r = NULL;
	mc_begin(&c, &site_MPI_Test);
	rc = real.PMPI_Test(req, flag, st);
	if (rc == MPI_SUCCESS) {
		arg_bool(&c, "flag", *flag);
		if (*flag && r)
			completed(&c, &r, st, 1);
	}
	mc_end(&c);
	return rc;
}

/* Waitall / Testall: every request completed (done), with their statuses. */
static void all_done(struct mcall *c, int rc, int count, struct tft_mpi_req **recs, MPI_Status *sts)
{
	if (!recs || !sts)
		return;
	if (rc == MPI_ERR_IN_STATUS) /* those still pending did not complete */
		for (int i = 0; i < count; i++)
			if (sts[i].MPI_ERROR == MPI_ERR_PENDING)
				recs[i] = NULL;
	completed(c, recs, sts, count);
}

TFT_INTERPOSE int MPI_Waitall(int count, MPI_Request reqs[], MPI_Status sts[])
{
	struct tft_mpi_req *stack[STACK_N], **recs;
	MPI_Status sstack[STACK_N], *st;
	struct mcall c;
	int rc;

	if (!following() || !REAL(MPI_Waitall))
		return PASS(MPI_Waitall, count, reqs, sts);
	recs = records_of(reqs, count, stack);
	st = recs ? statuses_for(sts, count, sstack) : sts;
	mc_begin(&c, &site_MPI_Waitall);
	rc = real.PMPI_Waitall(count, reqs, st);
	if (rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS)
		all_done(&c, rc, count, recs, st);
	mc_end(&c);
	return rc;
}

TFT_INTERPOSE int MPI_Testall(int count, MPI_Request reqs[], int *flag, MPI_Status sts[])
{
	struct tft_mpi_req *stack[STACK_N], **recs;
	MPI_Status sstack[STACK_N], *st;
	struct mcall c;
	int rc;

	if (!following() || !REAL(MPI_Testall))
		return PASS(MPI_Testall, count, reqs, flag, sts);
	recs = records_of(reqs, count, stack);
	st = recs ? statuses_for(sts, count, sstack) : sts;
	mc_begin(&c, &site_MPI_Testall);
	rc = real.PMPI_Testall(count, reqs, flag, st);
	if (rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS) {
		arg_bool(&c, "flag", *flag);
		if (*flag)
			all_done(&c, rc, count, recs, st);
	}
	mc_end(&c);
	return rc;
}

TFT_INTERPOSE int MPI_Waitany(int count, MPI_Request reqs[], int *index, MPI_Status *status)
{
	struct tft_mpi_req *stack[STACK_N], **recs;
	MPI_Status mine, *st = status ? status : &mine;
	struct mcall c;
	int rc;

	if (!following() || !REAL(MPI_Waitany))
		return PASS(MPI_Waitany, count, reqs, index, status);
	recs = records_of(reqs, count, stack);
	mc_begin(&c, &site_MPI_Waitany);
	rc = real.PMPI_Waitany(count, reqs, index, st);
	if (rc == MPI_SUCCESS && recs && *index >= 0 && *index < count && recs[*index])
		completed(&c, &recs[*index], st, 1);
	mc_end(&c);
	return rc;
}

TFT_INTERPOSE int MPI_Testany(int count, MPI_Request reqs[], int *index, int *flag,
			      MPI_Status *status)
{
	struct tft_mpi_req *stack[STACK_N], **recs;
	MPI_Status mine, *st = status ? status : &mine;
	struct mcall c;
	int rc;

	if (!following() || !REAL(MPI_Testany))
		return PASS(MPI_Testany, count, reqs, index, flag, status);
	recs = records_of(reqs, count, stack);
	mc_begin(&c, &site_MPI_Testany);
	rc = real.PMPI_Testany(count, reqs, index, flag, st);
	if (rc == MPI_SUCCESS) {
		arg_bool(&c, "flag", *flag);
		if (*flag && recs && *index >= 0 && *index < count && recs[*index])
			completed(&c, &recs[*index], st, 1);
	}
	mc_end(&c);
	return rc;
}

/* Waitsome / Testsome: the requests at indices[0..n) completed, statuses in that order. */
static void some_done(struct mcall *c, int n, const int *indices, int count,
		      struct tft_mpi_req **recs, MPI_Status *sts)
{
	struct tft_mpi_req *stack[STACK_N], **out = stack;

	if (!recs || !sts || n <= 0 || n == MPI_UNDEFINED)
		return;
	if (n > STACK_N && !(out = malloc((size_t)n * sizeof(*out))))
		return;
	for (int k = 0; k < n; k++)
		out[k] = indices[k] >= 0 && indices[k] < count ? recs[indices[k]] : NULL;
	completed(c, out, sts, n);
	if (out != stack)
		free(out);
}

TFT_INTERPOSE int MPI_Waitsome(int incount, MPI_Request reqs[], int *outcount, int indices[],
			       MPI_Status sts[])
{
	struct tft_mpi_req *stack[STACK_N], **recs;
	MPI_Status sstack[STACK_N], *st;
	struct mcall c;
	int rc;

	if (!following() || !REAL(MPI_Waitsome))
		return PASS(MPI_Waitsome, incount, reqs, outcount, indices, sts);
	recs = records_of(reqs, incount, stack);
	st = recs ? statuses_for(sts, incount, sstack) : sts;
	mc_begin(&c, &site_MPI_Waitsome);
	rc = real.PMPI_Waitsome(incount, reqs, outcount, indices, st);
	if (rc == MPI_SUCCESS)
		some_done(&c, *outcount, indices, incount, recs, st);
	mc_end(&c);
	return rc;
}

TFT_INTERPOSE int MPI_Testsome(int incount, MPI_Request reqs[], int *outcount, int indices[],
			       MPI_Status sts[])
{
	struct tft_mpi_req *stack[STACK_N], **recs;
	MPI_Status sstack[STACK_N], *st;
	struct mcall c;
	int rc;

	if (!following() || !REAL(MPI_Testsome))
		return PASS(MPI_Testsome, incount, reqs, outcount, indices, sts);
	recs = records_of(reqs, incount, stack);
	st = recs ? statuses_for(sts, incount, sstack) : sts;
	mc_begin(&c, &site_MPI_Testsome);
	rc = real.PMPI_Testsome(incount, reqs, outcount, indices, st);
	if (rc == MPI_SUCCESS) {
		arg_int(&c, "outcount", *outcount);
		some_done(&c, *outcount, indices, incount, recs, st);
	}
	mc_end(&c);
	return rc;
}

/* ---- collectives --------------------------------------------------------------------------------- */

#define NO_ROOT (-1000)

/* A collective's number on its communicator (every member calls them in the same order). */
static int64_t coll_seq(struct tft_mpi_comm *ci)
{
	return ci ? (int64_t)atomic_fetch_add_explicit(&ci->coll_seq, 1, memory_order_relaxed) : -1;
}

/* A collective's args: its number, the bytes this rank sends (and receives, >= 0), the
 * datatype and count, the reduction, the root (world rank, and its rank in comm). */
static void arg_coll(struct mcall *c, const struct tft_mpi_comm *ci, int64_t seq, int64_t bytes,
		     int64_t recv_bytes, MPI_Datatype dt, int count, MPI_Op op, int root)
{
	if (!c->z.depth)
		return;
	arg_comm(c, ci);
	if (seq >= 0)
		arg_int(c, "coll_seq", seq);
	arg_int(c, "bytes", bytes);
	if (recv_bytes >= 0)
		arg_int(c, "recv_bytes", recv_bytes);
	if (dt) {
		arg_str(c, "datatype", tft_mpi_type_name(dt));
		arg_int(c, "count", count);
	}
	if (op)
		arg_str(c, "op", tft_mpi_op_name(op));
	if (root != NO_ROOT) {
		/* (an intercommunicator's root is a rank of the remote group, MPI_ROOT or
		 * MPI_PROC_NULL on the root's side) */
		arg_int(c, "root", tft_mpi_world_rank(ci, root));
		arg_int(c, "root_in_comm", root);
	}
}

/* This rank is the root of a rooted collective. */
static int is_root(const struct tft_mpi_comm *ci, int root)
{
	return ci && (ci->inter ? root == MPI_ROOT : root == ci->rank);
}

/* Peers a rank sends to or receives from in an all-to-all pattern. */
static int peers(const struct tft_mpi_comm *ci)
{
	return ci ? ci->npeers : 0;
}

static int64_t sum_bytes(const int *counts, int n, MPI_Datatype dt)
{
	int64_t b = 0;

	for (int i = 0; counts && i < n; i++)
		b += tft_mpi_bytes(counts[i], dt);
	return b;
}

/* The common shape of a collective: follow, number, call, args, request. */
#define COLL_BEGIN(F, ...)                                                                       \
	struct tft_mpi_comm *ci;                                                                 \
	int64_t seq;                                                                             \
	struct mcall c;                                                                          \
	int rc;                                                                                  \
	if (!following() || !REAL(F))                                                            \
		return PASS(F, __VA_ARGS__);                                                     \
	ci = tft_mpi_comm_of(comm);                                                              \
	seq = coll_seq(ci);                                                                      \
	mc_begin(&c, &site_##F);                                                                 \
	rc = real.P##F(__VA_ARGS__)
#define COLL_END()                                                                               \
	mc_end(&c);                                                                              \
	return rc
/* A nonblocking collective's request: followed, so that its wait says it completed it. */
#define COLL_REQUEST()                                                                           \
	do {                                                                                     \
		struct tft_mpi_req *r_ = rc == MPI_SUCCESS ? tft_mpi_req_new() : NULL;          \
		if (r_) {                                                                        \
			uint64_t id_ = r_->id;                                                   \
			r_->kind = TFT_MREQ_COLL;                                                \
			r_->ci = ci;                                                             \
			r_->seq = seq;                                                           \
			req_made(r_, rc, req);                                                   \
			arg_int(&c, "request", (int64_t)id_);                                    \
		}                                                                                \
	} while (0)

TFT_INTERPOSE int MPI_Barrier(MPI_Comm comm)
{
	COLL_BEGIN(MPI_Barrier, comm);
	arg_coll(&c, ci, seq, 0, -1, NULL, 0, NULL, NO_ROOT);
	COLL_END();
}

TFT_INTERPOSE int MPI_Ibarrier(MPI_Comm comm, MPI_Request *req)
{
	COLL_BEGIN(MPI_Ibarrier, comm, req);
	arg_coll(&c, ci, seq, 0, -1, NULL, 0, NULL, NO_ROOT);
	COLL_REQUEST();
	COLL_END();
}

TFT_INTERPOSE int MPI_Bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm)
{
	COLL_BEGIN(MPI_Bcast, buf, count, dt, root, comm);
	arg_coll(&c, ci, seq, tft_mpi_bytes(count, dt), -1, dt, count, NULL, root);
	COLL_END();
}

TFT_INTERPOSE int MPI_Ibcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm,
			     MPI_Request *req)
{
	COLL_BEGIN(MPI_Ibcast, buf, count, dt, root, comm, req);
	arg_coll(&c, ci, seq, tft_mpi_bytes(count, dt), -1, dt, count, NULL, root);
	COLL_REQUEST();
	COLL_END();
}

TFT_INTERPOSE int MPI_Reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
			     int root, MPI_Comm comm)
{
	COLL_BEGIN(MPI_Reduce, sbuf, rbuf, count, dt, op, root, comm);
	arg_coll(&c, ci, seq, tft_mpi_bytes(count, dt), -1, dt, count, op, root);
	COLL_END();
}

TFT_INTERPOSE int MPI_Ireduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
			      int root, MPI_Comm comm, MPI_Request *req)
{
	COLL_BEGIN(MPI_Ireduce, sbuf, rbuf, count, dt, op, root, comm, req);
	arg_coll(&c, ci, seq, tft_mpi_bytes(count, dt), -1, dt, count, op, root);
	COLL_REQUEST();
	COLL_END();
}

#define REDUCE_ALL(F)                                                                            \
	TFT_INTERPOSE int F(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, \
			    MPI_Comm comm)                                                       \
	{                                                                                        \
		COLL_BEGIN(F, sbuf, rbuf, count, dt, op, comm);                                  \
		arg_coll(&c, ci, seq, tft_mpi_bytes(count, dt), -1, dt, count, op, NO_ROOT);    \
		COLL_END();                                                                      \
	}
#define IREDUCE_ALL(F)                                                                           \
	TFT_INTERPOSE int F(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, \
			    MPI_Comm comm, MPI_Request *req)                                     \
	{                                                                                        \
		COLL_BEGIN(F, sbuf, rbuf, count, dt, op, comm, req);                             \
		arg_coll(&c, ci, seq, tft_mpi_bytes(count, dt), -1, dt, count, op, NO_ROOT);    \
		COLL_REQUEST();                                                                  \
		COLL_END();                                                                      \
	}
REDUCE_ALL(MPI_Allreduce)
REDUCE_ALL(MPI_Scan)
REDUCE_ALL(MPI_Exscan)
IREDUCE_ALL(MPI_Iallreduce)
IREDUCE_ALL(MPI_Iscan)
IREDUCE_ALL(MPI_Iexscan)

/* Gather: each rank sends its block (the root's own in place), the root receives them all. */
#define GATHER_ARGS(sbuf, scount, stype, rcount, rtype, root)                                   \
	arg_coll(&c, ci, seq,                                                                    \
		 (sbuf) == MPI_IN_PLACE ? tft_mpi_bytes(rcount, rtype) : tft_mpi_bytes(scount, stype), \
		 is_root(ci, root) ? tft_mpi_bytes(rcount, rtype) * peers(ci) : 0,              \
		 (sbuf) == MPI_IN_PLACE ? (rtype) : (stype), (sbuf) == MPI_IN_PLACE ? (rcount) : (scount), \
		 NULL, root)

TFT_INTERPOSE int MPI_Gather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
			     MPI_Datatype rtype, int root, MPI_Comm comm)
{
	COLL_BEGIN(MPI_Gather, sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
	GATHER_ARGS(sbuf, scount, stype, rcount, rtype, root);
	COLL_END();
}

TFT_INTERPOSE int MPI_Igather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
			      int rcount, MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *req)
{
	COLL_BEGIN(MPI_Igather, sbuf, scount, stype, rbuf, rcount, rtype, root, comm, req);
	GATHER_ARGS(sbuf, scount, stype, rcount, rtype, root);
	COLL_REQUEST();
	COLL_END();
}

/* The v-variants: the root's counts are significant at the root only. */
static void gatherv_args(struct mcall *c, struct tft_mpi_comm *ci, int64_t seq, const void *sbuf,
			 int scount, MPI_Datatype stype, const int *rcounts, MPI_Datatype rtype, int root)
{
	int root_here = is_root(ci, root);
	int64_t sent = sbuf == MPI_IN_PLACE
			       ? (rcounts && ci && ci->rank >= 0 && !ci->inter ? tft_mpi_bytes(rcounts[ci->rank], rtype) : 0)
			       : tft_mpi_bytes(scount, stype);

	arg_coll(c, ci, seq, sent, root_here ? sum_bytes(rcounts, peers(ci), rtype) : 0,
		 sbuf == MPI_IN_PLACE ? rtype : stype, sbuf == MPI_IN_PLACE ? 0 : scount, NULL, root);
}

TFT_INTERPOSE int MPI_Gatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
			      const int rcounts[], const int displs[], MPI_Datatype rtype, int root,
			      MPI_Comm comm)
{
	COLL_BEGIN(MPI_Gatherv, sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm);
	gatherv_args(&c, ci, seq, sbuf, scount, stype, rcounts, rtype, root);
	COLL_END();
}

TFT_INTERPOSE int MPI_Igatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
			       const int rcounts[], const int displs[], MPI_Datatype rtype, int root,
			       MPI_Comm comm, MPI_Request *req)
{
	COLL_BEGIN(MPI_Igatherv, sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm, req);
	gatherv_args(&c, ci, seq, sbuf, scount, stype, rcounts, rtype, root);
	COLL_REQUEST();
	COLL_END();
}

/* Scatter: the root sends a block to each rank, each receives its own. */
#define SCATTER_ARGS(scount, stype, rbuf, rcount, rtype, root)                                  \
	arg_coll(&c, ci, seq, is_root(ci, root) ? tft_mpi_bytes(scount, stype) * peers(ci) : 0, \
		 (rbuf) == MPI_IN_PLACE ? 0 : tft_mpi_bytes(rcount, rtype),                     \
		 is_root(ci, root) ? (stype) : (rtype), is_root(ci, root) ? (scount) : (rcount), \
		 NULL, root)

TFT_INTERPOSE int MPI_Scatter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
			      int rcount, MPI_Datatype rtype, int root, MPI_Comm comm)
{
	COLL_BEGIN(MPI_Scatter, sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
	SCATTER_ARGS(scount, stype, rbuf, rcount, rtype, root);
	COLL_END();
}

TFT_INTERPOSE int MPI_Iscatter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
			       int rcount, MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *req)
{
	COLL_BEGIN(MPI_Iscatter, sbuf, scount, stype, rbuf, rcount, rtype, root, comm, req);
	SCATTER_ARGS(scount, stype, rbuf, rcount, rtype, root);
	COLL_REQUEST();
	COLL_END();
}

static void scatterv_args(struct mcall *c, struct tft_mpi_comm *ci, int64_t seq, const int *scounts,
			  MPI_Datatype stype, const void *rbuf, int rcount, MPI_Datatype rtype, int root)
{
	int root_here = is_root(ci, root);

	arg_coll(c, ci, seq, root_here ? sum_bytes(scounts, peers(ci), stype) : 0,
		 rbuf == MPI_IN_PLACE ? 0 : tft_mpi_bytes(rcount, rtype), root_here ? stype : rtype,
		 root_here ? 0 : rcount, NULL, root);
}

TFT_INTERPOSE int MPI_Scatterv(const void *sbuf, const int scounts[], const int displs[],
			       MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, int root,
			       MPI_Comm comm)
{
	COLL_BEGIN(MPI_Scatterv, sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm);
	scatterv_args(&c, ci, seq, scounts, stype, rbuf, rcount, rtype, root);
	COLL_END();
}

TFT_INTERPOSE int MPI_Iscatterv(const void *sbuf, const int scounts[], const int displs[],
				MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, int root,
				MPI_Comm comm, MPI_Request *req)
{
	COLL_BEGIN(MPI_Iscatterv, sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm, req);
	scatterv_args(&c, ci, seq, scounts, stype, rbuf, rcount, rtype, root);
	COLL_REQUEST();
	COLL_END();
}

/* Allgather: each rank sends its block to all (its own in place), receives all. */
#define ALLGATHER_ARGS(sbuf, scount, stype, rcount, rtype)                                      \
	arg_coll(&c, ci, seq,                                                                    \
		 (sbuf) == MPI_IN_PLACE ? tft_mpi_bytes(rcount, rtype) : tft_mpi_bytes(scount, stype), \
		 tft_mpi_bytes(rcount, rtype) * peers(ci),                                       \
		 (sbuf) == MPI_IN_PLACE ? (rtype) : (stype), (sbuf) == MPI_IN_PLACE ? (rcount) : (scount), \
		 NULL, NO_ROOT)

TFT_INTERPOSE int MPI_Allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
				int rcount, MPI_Datatype rtype, MPI_Comm comm)
{
	COLL_BEGIN(MPI_Allgather, sbuf, scount, stype, rbuf, rcount, rtype, comm);
	ALLGATHER_ARGS(sbuf, scount, stype, rcount, rtype);
	COLL_END();
}

TFT_INTERPOSE int MPI_Iallgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
				 int rcount, MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req)
{
	COLL_BEGIN(MPI_Iallgather, sbuf, scount, stype, rbuf, rcount, rtype, comm, req);
	ALLGATHER_ARGS(sbuf, scount, stype, rcount, rtype);
	COLL_REQUEST();
	COLL_END();
}

static void allgatherv_args(struct mcall *c, struct tft_mpi_comm *ci, int64_t seq, const void *sbuf,
			    int scount, MPI_Datatype stype, const int *rcounts, MPI_Datatype rtype)
{
	int64_t sent = sbuf == MPI_IN_PLACE
			       ? (rcounts && ci && ci->rank >= 0 && !ci->inter ? tft_mpi_bytes(rcounts[ci->rank], rtype) : 0)
			       : tft_mpi_bytes(scount, stype);

	arg_coll(c, ci, seq, sent, sum_bytes(rcounts, peers(ci), rtype),
		 sbuf == MPI_IN_PLACE ? rtype : stype, sbuf == MPI_IN_PLACE ? 0 : scount, NULL, NO_ROOT);
}

TFT_INTERPOSE int MPI_Allgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
				 const int rcounts[], const int displs[], MPI_Datatype rtype,
				 MPI_Comm comm)
{
	COLL_BEGIN(MPI_Allgatherv, sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm);
	allgatherv_args(&c, ci, seq, sbuf, scount, stype, rcounts, rtype);
	COLL_END();
}

TFT_INTERPOSE int MPI_Iallgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
				  const int rcounts[], const int displs[], MPI_Datatype rtype,
				  MPI_Comm comm, MPI_Request *req)
{
	COLL_BEGIN(MPI_Iallgatherv, sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm, req);
	allgatherv_args(&c, ci, seq, sbuf, scount, stype, rcounts, rtype);
	COLL_REQUEST();
	COLL_END();
}

/* Alltoall: a block to and from every rank. */
#define ALLTOALL_ARGS(sbuf, scount, stype, rcount, rtype)                                       \
	arg_coll(&c, ci, seq,                                                                    \
		 ((sbuf) == MPI_IN_PLACE ? tft_mpi_bytes(rcount, rtype) : tft_mpi_bytes(scount, stype)) * \
			 peers(ci),                                                              \
		 tft_mpi_bytes(rcount, rtype) * peers(ci),                                       \
		 (sbuf) == MPI_IN_PLACE ? (rtype) : (stype), (sbuf) == MPI_IN_PLACE ? (rcount) : (scount), \
		 NULL, NO_ROOT)

TFT_INTERPOSE int MPI_Alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
			       int rcount, MPI_Datatype rtype, MPI_Comm comm)
{
	COLL_BEGIN(MPI_Alltoall, sbuf, scount, stype, rbuf, rcount, rtype, comm);
	ALLTOALL_ARGS(sbuf, scount, stype, rcount, rtype);
	COLL_END();
}

TFT_INTERPOSE int MPI_Ialltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
				int rcount, MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req)
{
	COLL_BEGIN(MPI_Ialltoall, sbuf, scount, stype, rbuf, rcount, rtype, comm, req);
	ALLTOALL_ARGS(sbuf, scount, stype, rcount, rtype);
	COLL_REQUEST();
	COLL_END();
}

static void alltoallv_args(struct mcall *c, struct tft_mpi_comm *ci, int64_t seq, const void *sbuf,
			   const int *scounts, MPI_Datatype stype, const int *rcounts, MPI_Datatype rtype)
{
	int64_t recv = sum_bytes(rcounts, peers(ci), rtype);

	arg_coll(c, ci, seq, sbuf == MPI_IN_PLACE ? recv : sum_bytes(scounts, peers(ci), stype), recv,
		 sbuf == MPI_IN_PLACE ? rtype : stype, 0, NULL, NO_ROOT);
}

TFT_INTERPOSE int MPI_Alltoallv(const void *sbuf, const int scounts[], const int sdispls[],
				MPI_Datatype stype, void *rbuf, const int rcounts[], const int rdispls[],
				MPI_Datatype rtype, MPI_Comm comm)
{
	COLL_BEGIN(MPI_Alltoallv, sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm);
	alltoallv_args(&c, ci, seq, sbuf, scounts, stype, rcounts, rtype);
	COLL_END();
}

TFT_INTERPOSE int MPI_Ialltoallv(const void *sbuf, const int scounts[], const int sdispls[],
				 MPI_Datatype stype, void *rbuf, const int rcounts[], const int rdispls[],
				 MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req)
{
	COLL_BEGIN(MPI_Ialltoallv, sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm,
		   req);
	alltoallv_args(&c, ci, seq, sbuf, scounts, stype, rcounts, rtype);
	COLL_REQUEST();
	COLL_END();
}

static void alltoallw_args(struct mcall *c, struct tft_mpi_comm *ci, int64_t seq, const void *sbuf,
			   const int *scounts, const MPI_Datatype *stypes, const int *rcounts,
			   const MPI_Datatype *rtypes)
{
	int64_t sent = 0, recv = 0;

	for (int i = 0; i < peers(ci); i++) {
		if (rcounts && rtypes)
			recv += tft_mpi_bytes(rcounts[i], rtypes[i]);
		if (sbuf != MPI_IN_PLACE && scounts && stypes)
			sent += tft_mpi_bytes(scounts[i], stypes[i]);
	}
	arg_coll(c, ci, seq, sbuf == MPI_IN_PLACE ? recv : sent, recv, NULL, 0, NULL, NO_ROOT);
}

TFT_INTERPOSE int MPI_Alltoallw(const void *sbuf, const int scounts[], const int sdispls[],
				const MPI_Datatype stypes[], void *rbuf, const int rcounts[],
				const int rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm)
{
	COLL_BEGIN(MPI_Alltoallw, sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm);
	alltoallw_args(&c, ci, seq, sbuf, scounts, stypes, rcounts, rtypes);
	COLL_END();
}

TFT_INTERPOSE int MPI_Ialltoallw(const void *sbuf, const int scounts[], const int sdispls[],
				 const MPI_Datatype stypes[], void *rbuf, const int rcounts[],
				 const int rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm,
				 MPI_Request *req)
{
	COLL_BEGIN(MPI_Ialltoallw, sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm,
		   req);
	alltoallw_args(&c, ci, seq, sbuf, scounts, stypes, rcounts, rtypes);
	COLL_REQUEST();
	COLL_END();
}

/* Reduce-scatter: every rank contributes the whole vector, keeps its part. */
static void rscatter_args(struct mcall *c, struct tft_mpi_comm *ci, int64_t seq, const int *rcounts,
			  MPI_Datatype dt, MPI_Op op)
{
	int mine = rcounts && ci && ci->rank >= 0 && ci->rank < ci->size ? rcounts[ci->rank] : 0;

	arg_coll(c, ci, seq, sum_bytes(rcounts, ci ? ci->size : 0, dt), tft_mpi_bytes(mine, dt), dt,
		 mine, op, NO_ROOT);
}

TFT_INTERPOSE int MPI_Reduce_scatter(const void *sbuf, void *rbuf, const int rcounts[],
				     MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
	COLL_BEGIN(MPI_Reduce_scatter, sbuf, rbuf, rcounts, dt, op, comm);
	rscatter_args(&c, ci, seq, rcounts, dt, op);
	COLL_END();
}

TFT_INTERPOSE int MPI_Ireduce_scatter(const void *sbuf, void *rbuf, const int rcounts[],
				      MPI_Datatype dt, MPI_Op op, MPI_Comm comm, MPI_Request *req)
{
	COLL_BEGIN(MPI_Ireduce_scatter, sbuf, rbuf, rcounts, dt, op, comm, req);
	rscatter_args(&c, ci, seq, rcounts, dt, op);
	COLL_REQUEST();
	COLL_END();
}

TFT_INTERPOSE int MPI_Reduce_scatter_block(const void *sbuf, void *rbuf, int rcount,
					   MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
	COLL_BEGIN(MPI_Reduce_scatter_block, sbuf, rbuf, rcount, dt, op, comm);
	arg_coll(&c, ci, seq, tft_mpi_bytes(rcount, dt) * (ci ? ci->size : 0), tft_mpi_bytes(rcount, dt),
		 dt, rcount, op, NO_ROOT);
	COLL_END();
}

TFT_INTERPOSE int MPI_Ireduce_scatter_block(const void *sbuf, void *rbuf, int rcount,
					    MPI_Datatype dt, MPI_Op op, MPI_Comm comm, MPI_Request *req)
{
	COLL_BEGIN(MPI_Ireduce_scatter_block, sbuf, rbuf, rcount, dt, op, comm, req);
	arg_coll(&c, ci, seq, tft_mpi_bytes(rcount, dt) * (ci ? ci->size : 0), tft_mpi_bytes(rcount, dt),
		 dt, rcount, op, NO_ROOT);
	COLL_REQUEST();
	COLL_END();
}

/* ---- communicators ------------------------------------------------------------------------------ */

/* The new communicator's id (-1: none) as the arg new_comm. */
static void arg_newcomm(struct mcall *c, struct tft_mpi_comm *parent, MPI_Comm newcomm)
{
	struct tft_mpi_comm *n;

	if (!c->z.depth)
		return;
	arg_comm(c, parent);
	n = newcomm && newcomm != tft_mpi.comm_null ? tft_mpi_comm_of(newcomm) : NULL;
	arg_int(c, "new_comm", n ? n->id : -1);
	if (n)
		arg_int(c, "new_comm_size", n->size);
}

/* A creation every member of `comm` takes part in: the parent counts it, the new
 * communicator's id follows from the parent's, the count and its first member. */
#define MADE_FROM(F, parent_comm, newp, ...)                                                    \
	struct tft_mpi_comm *pi;                                                                 \
	struct mcall c;                                                                          \
	int rc;                                                                                  \
	if (!following() || !REAL(F))                                                            \
		return PASS(F, __VA_ARGS__);                                                     \
	pi = tft_mpi_comm_of(parent_comm);                                                       \
	mc_begin(&c, &site_##F);                                                                 \
	rc = real.P##F(__VA_ARGS__);                                                             \
	tft_mpi_comm_made(pi, rc == MPI_SUCCESS && (newp) ? *(newp) : tft_mpi.comm_null, 0);    \
	arg_newcomm(&c, pi, rc == MPI_SUCCESS && (newp) ? *(newp) : tft_mpi.comm_null);          \
	mc_end(&c);                                                                              \
	return rc

TFT_INTERPOSE int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
	MADE_FROM(MPI_Comm_dup, comm, newcomm, comm, newcomm);
}

TFT_INTERPOSE int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
	MADE_FROM(MPI_Comm_dup_with_info, comm, newcomm, comm, info, newcomm);
}

TFT_INTERPOSE int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
	MADE_FROM(MPI_Comm_split, comm, newcomm, comm, color, key, newcomm);
}

TFT_INTERPOSE int MPI_Comm_split_type(MPI_Comm comm, int type, int key, MPI_Info info,
				      MPI_Comm *newcomm)
{
	MADE_FROM(MPI_Comm_split_type, comm, newcomm, comm, type, key, info, newcomm);
}

TFT_INTERPOSE int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
	MADE_FROM(MPI_Comm_create, comm, newcomm, comm, group, newcomm);
}

TFT_INTERPOSE int MPI_Cart_create(MPI_Comm comm, int ndims, const int dims[], const int periods[],
				  int reorder, MPI_Comm *newcomm)
{
	MADE_FROM(MPI_Cart_create, comm, newcomm, comm, ndims, dims, periods, reorder, newcomm);
}

TFT_INTERPOSE int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
	MADE_FROM(MPI_Cart_sub, comm, newcomm, comm, remain_dims, newcomm);
}

TFT_INTERPOSE int MPI_Graph_create(MPI_Comm comm, int nnodes, const int index[], const int edges[],
				   int reorder, MPI_Comm *newcomm)
{
	MADE_FROM(MPI_Graph_create, comm, newcomm, comm, nnodes, index, edges, reorder, newcomm);
}

TFT_INTERPOSE int MPI_Dist_graph_create(MPI_Comm comm, int n, const int sources[],
					const int degrees[], const int destinations[],
					const int weights[], MPI_Info info, int reorder,
					MPI_Comm *newcomm)
{
	MADE_FROM(MPI_Dist_graph_create, comm, newcomm, comm, n, sources, degrees, destinations,
		  weights, info, reorder, newcomm);
}

TFT_INTERPOSE int MPI_Dist_graph_create_adjacent(MPI_Comm comm, int indegree, const int sources[],
						 const int sourceweights[], int outdegree,
						 const int destinations[], const int destweights[],
						 MPI_Info info, int reorder, MPI_Comm *newcomm)
{
	MADE_FROM(MPI_Dist_graph_create_adjacent, comm, newcomm, comm, indegree, sources,
		  sourceweights, outdegree, destinations, destweights, info, reorder, newcomm);
}

TFT_INTERPOSE int MPI_Intercomm_merge(MPI_Comm comm, int high, MPI_Comm *newcomm)
{
	MADE_FROM(MPI_Intercomm_merge, comm, newcomm, comm, high, newcomm);
}

/* Made by a group's members only: the id from the parent's id, the tag and the members. */
TFT_INTERPOSE int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
	struct tft_mpi_comm *pi;
	struct mcall c;
	int rc;

	if (!following() || !REAL(MPI_Comm_create_group))
		return PASS(MPI_Comm_create_group, comm, group, tag, newcomm);
	pi = tft_mpi_comm_of(comm);
	mc_begin(&c, &site_MPI_Comm_create_group);
	rc = real.PMPI_Comm_create_group(comm, group, tag, newcomm);
	if (rc == MPI_SUCCESS && newcomm)
		tft_mpi_comm_made_by_group(*newcomm, tft_mpi_mix(pi ? (uint64_t)pi->id : 0, (uint32_t)tag));
	arg_newcomm(&c, pi, rc == MPI_SUCCESS && newcomm ? *newcomm : tft_mpi.comm_null);
	mc_end(&c);
	return rc;
}

TFT_INTERPOSE int MPI_Intercomm_create(MPI_Comm local, int local_leader, MPI_Comm peer_comm,
				       int remote_leader, int tag, MPI_Comm *newcomm)
{
	struct tft_mpi_comm *pi;
	struct mcall c;
	int rc;

	if (!following() || !REAL(MPI_Intercomm_create))
		return PASS(MPI_Intercomm_create, local, local_leader, peer_comm, remote_leader, tag,
			    newcomm);
	pi = tft_mpi_comm_of(local);
	mc_begin(&c, &site_MPI_Intercomm_create);
	rc = real.PMPI_Intercomm_create(local, local_leader, peer_comm, remote_leader, tag, newcomm);
	/* (both groups know the tag and the members: not each other's parents) */
	if (rc == MPI_SUCCESS && newcomm)
		tft_mpi_comm_made_by_group(*newcomm, tft_mpi_mix(0x494e5452u /* "INTR" */, (uint32_t)tag));
	arg_newcomm(&c, pi, rc == MPI_SUCCESS && newcomm ? *newcomm : tft_mpi.comm_null);
	mc_end(&c);
	return rc;
}

/* ---- one-sided ------------------------------------------------------------------------------------ */

/* A window: an id from its communicator's and the count of windows made on it, the world
 * ranks of its group, its fences so far (a fence is a collective on the window). */
struct mwin {
	int64_t id;
	int size;
	int *world;              /* owned: world rank of each rank of the window's group */
	_Atomic uint64_t fences;
};

static int win_delete(MPI_Win win, int key, void *val, void *extra)
{
	struct mwin *w = val;

	(void)win;
	(void)key;
	(void)extra;
	if (w) {
		free(w->world);
		free(w);
	}
	return MPI_SUCCESS;
}

static int win_nocopy(MPI_Win win, int key, void *extra, void *in, void *out, int *flag)
{
	(void)win;
	(void)key;
	(void)extra;
	(void)in;
	(void)out;
	*flag = 0;
	return MPI_SUCCESS;
}

static pthread_once_t win_key_once = PTHREAD_ONCE_INIT;

static void win_key_make(void)
{
	if (!MREAL(PMPI_Win_create_keyval) ||
	    tft_mpi_real_fns.PMPI_Win_create_keyval(win_nocopy, win_delete, &tft_mpi.win_key, NULL) !=
		    MPI_SUCCESS)
		tft_mpi.win_key = MPI_KEYVAL_INVALID;
}

static void win_made(struct tft_mpi_comm *ci, MPI_Win win)
{
	struct mwin *w;
	uint64_t k;

	if (!ci)
		return;
	k = atomic_fetch_add_explicit(&ci->windows, 1, memory_order_relaxed);
	pthread_once(&win_key_once, win_key_make);
	if (!win || win == tft_mpi.win_null || tft_mpi.win_key == MPI_KEYVAL_INVALID ||
	    !(w = calloc(1, sizeof(*w))))
		return;
	w->id = (int64_t)(tft_mpi_mix(tft_mpi_mix(0x57494e44u /* "WIND" */, (uint64_t)ci->id), k) &
			  0x1fffffffffffffull);
	w->size = ci->npeers;
	if (ci->world && ci->npeers > 0 && (w->world = malloc((size_t)ci->npeers * sizeof(int))))
		memcpy(w->world, ci->world, (size_t)ci->npeers * sizeof(int));
	if (!MREAL(PMPI_Win_set_attr) ||
	    tft_mpi_real_fns.PMPI_Win_set_attr(win, tft_mpi.win_key, w) != MPI_SUCCESS)
		win_delete(win, 0, w, NULL);
}

static struct mwin *win_of(MPI_Win win)
{
	void *v = NULL;
	int flag = 0;

	if (tft_mpi.win_key == MPI_KEYVAL_INVALID || !MREAL(PMPI_Win_get_attr) ||
	    tft_mpi_real_fns.PMPI_Win_get_attr(win, tft_mpi.win_key, &v, &flag) != MPI_SUCCESS || !flag)
		return NULL;
	return v;
}

static int win_world(const struct mwin *w, int r)
{
	return w && w->world && r >= 0 && r < w->size ? w->world[r] : r;
}

static void arg_win(struct mcall *c, const struct mwin *w)
{
	if (w)
		arg_int(c, "win", w->id);
}

#define WIN_MADE(F, comm, winp, ...)                                                             \
	struct tft_mpi_comm *ci;                                                                 \
	struct mcall c;                                                                          \
	int rc;                                                                                  \
	if (!following() || !REAL(F))                                                            \
		return PASS(F, __VA_ARGS__);                                                     \
	ci = tft_mpi_comm_of(comm);                                                              \
	mc_begin(&c, &site_##F);                                                                 \
	rc = real.P##F(__VA_ARGS__);                                                             \
	win_made(ci, rc == MPI_SUCCESS && (winp) ? *(winp) : tft_mpi.win_null);                  \
	arg_comm(&c, ci);                                                                        \
	if (rc == MPI_SUCCESS && (winp))                                                         \
		arg_win(&c, win_of(*(winp)));                                                    \
	mc_end(&c);                                                                              \
	return rc

TFT_INTERPOSE int MPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info,
				 MPI_Comm comm, MPI_Win *win)
{
	WIN_MADE(MPI_Win_create, comm, win, base, size, disp_unit, info, comm, win);
}

TFT_INTERPOSE int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
				   void *baseptr, MPI_Win *win)
{
	WIN_MADE(MPI_Win_allocate, comm, win, size, disp_unit, info, comm, baseptr, win);
}

TFT_INTERPOSE int MPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info,
					  MPI_Comm comm, void *baseptr, MPI_Win *win)
{
	WIN_MADE(MPI_Win_allocate_shared, comm, win, size, disp_unit, info, comm, baseptr, win);
}

TFT_INTERPOSE int MPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
	WIN_MADE(MPI_Win_create_dynamic, comm, win, info, comm, win);
}

TFT_INTERPOSE int MPI_Win_free(MPI_Win *win)
{
	struct mcall c;
	int rc;

	if (!following() || !REAL(MPI_Win_free))
		return PASS(MPI_Win_free, win);
	mc_begin(&c, &site_MPI_Win_free);
	if (c.z.depth && win)
		arg_win(&c, win_of(*win));
	rc = real.PMPI_Win_free(win);
	mc_end(&c);
	return rc;
}

/* An access to a target's memory: the window, the target (world rank), bytes, datatype. */
static void arg_rma(struct mcall *c, MPI_Win win, int target, int count, MPI_Datatype dt, MPI_Op op)
{
	struct mwin *w;

	if (!c->z.depth)
		return;
	w = win_of(win);
	arg_win(c, w);
	arg_int(c, "peer", win_world(w, target));
	arg_int(c, "bytes", tft_mpi_bytes(count, dt));
	arg_str(c, "datatype", tft_mpi_type_name(dt));
	arg_int(c, "count", count);
	if (op)
		arg_str(c, "op", tft_mpi_op_name(op));
}

#define RMA(F, target, count, dt, op, ...)                                                       \
	struct mcall c;                                                                          \
	int rc;                                                                                  \
	if (!following() || !REAL(F))                                                            \
		return PASS(F, __VA_ARGS__);                                                     \
	mc_begin(&c, &site_##F);                                                                 \
	rc = real.P##F(__VA_ARGS__);                                                             \
	arg_rma(&c, win, target, count, dt, op);                                                 \
	mc_end(&c);                                                                              \
	return rc

TFT_INTERPOSE int MPI_Put(const void *oaddr, int ocount, MPI_Datatype otype, int target,
			  MPI_Aint tdisp, int tcount, MPI_Datatype ttype, MPI_Win win)
{
	RMA(MPI_Put, target, ocount, otype, NULL, oaddr, ocount, otype, target, tdisp, tcount, ttype,
	    win);
}

TFT_INTERPOSE int MPI_Get(void *oaddr, int ocount, MPI_Datatype otype, int target, MPI_Aint tdisp,
			  int tcount, MPI_Datatype ttype, MPI_Win win)
{
	RMA(MPI_Get, target, ocount, otype, NULL, oaddr, ocount, otype, target, tdisp, tcount, ttype,
	    win);
}

TFT_INTERPOSE int MPI_Accumulate(const void *oaddr, int ocount, MPI_Datatype otype, int target,
				 MPI_Aint tdisp, int tcount, MPI_Datatype ttype, MPI_Op op, MPI_Win win)
{
	RMA(MPI_Accumulate, target, ocount, otype, op, oaddr, ocount, otype, target, tdisp, tcount,
	    ttype, op, win);
}

TFT_INTERPOSE int MPI_Get_accumulate(const void *oaddr, int ocount, MPI_Datatype otype, void *raddr,
				     int rcount, MPI_Datatype rtype, int target, MPI_Aint tdisp,
				     int tcount, MPI_Datatype ttype, MPI_Op op, MPI_Win win)
{
	RMA(MPI_Get_accumulate, target, ocount, otype, op, oaddr, ocount, otype, raddr, rcount, rtype,
	    target, tdisp, tcount, ttype, op, win);
}

TFT_INTERPOSE int MPI_Fetch_and_op(const void *oaddr, void *raddr, MPI_Datatype dt, int target,
				   MPI_Aint tdisp, MPI_Op op, MPI_Win win)
{
	RMA(MPI_Fetch_and_op, target, 1, dt, op, oaddr, raddr, dt, target, tdisp, op, win);
}

TFT_INTERPOSE int MPI_Compare_and_swap(const void *oaddr, const void *caddr, void *raddr,
				       MPI_Datatype dt, int target, MPI_Aint tdisp, MPI_Win win)
{
	RMA(MPI_Compare_and_swap, target, 1, dt, NULL, oaddr, caddr, raddr, dt, target, tdisp, win);
}

TFT_INTERPOSE int MPI_Win_fence(int assert_, MPI_Win win)
{
	struct mwin *w;
	struct mcall c;
	int rc;

	if (!following() || !REAL(MPI_Win_fence))
		return PASS(MPI_Win_fence, assert_, win);
	w = win_of(win);
	{
		/* a fence is a collective of the window's group: numbered on the window, whose
		 * id stands for its communicator */
		int64_t seq = w ? (int64_t)atomic_fetch_add_explicit(&w->fences, 1, memory_order_relaxed) : -1;
		mc_begin(&c, &site_MPI_Win_fence);
		rc = real.PMPI_Win_fence(assert_, win);
		if (w) {
			arg_win(&c, w);
			arg_int(&c, "comm", w->id);
			arg_int(&c, "comm_size", w->size);
			arg_int(&c, "coll_seq", seq);
		}
	}
	mc_end(&c);
	return rc;
}

/* Synchronisation with one target (rank) or all (rank < 0), or with a group. */
#define WIN_SYNC(F, rank, ...)                                                                   \
	struct mcall c;                                                                          \
	int rc;                                                                                  \
	if (!following() || !REAL(F))                                                            \
		return PASS(F, __VA_ARGS__);                                                     \
	mc_begin(&c, &site_##F);                                                                 \
	rc = real.P##F(__VA_ARGS__);                                                             \
	if (c.z.depth) {                                                                         \
		struct mwin *w_ = win_of(win);                                                   \
		arg_win(&c, w_);                                                                 \
		if ((rank) >= 0)                                                                 \
			arg_int(&c, "peer", win_world(w_, rank));                                \
	}                                                                                        \
	mc_end(&c);                                                                              \
	return rc

TFT_INTERPOSE int MPI_Win_lock(int type, int rank, int assert_, MPI_Win win)
{
	WIN_SYNC(MPI_Win_lock, rank, type, rank, assert_, win);
}

TFT_INTERPOSE int MPI_Win_unlock(int rank, MPI_Win win)
{
	WIN_SYNC(MPI_Win_unlock, rank, rank, win);
}

TFT_INTERPOSE int MPI_Win_lock_all(int assert_, MPI_Win win)
{
	WIN_SYNC(MPI_Win_lock_all, -1, assert_, win);
}

TFT_INTERPOSE int MPI_Win_unlock_all(MPI_Win win)
{
	WIN_SYNC(MPI_Win_unlock_all, -1, win);
}

TFT_INTERPOSE int MPI_Win_flush(int rank, MPI_Win win)
{
	WIN_SYNC(MPI_Win_flush, rank, rank, win);
}

TFT_INTERPOSE int MPI_Win_flush_all(MPI_Win win)
{
	WIN_SYNC(MPI_Win_flush_all, -1, win);
}

TFT_INTERPOSE int MPI_Win_flush_local(int rank, MPI_Win win)
{
	WIN_SYNC(MPI_Win_flush_local, rank, rank, win);
}

TFT_INTERPOSE int MPI_Win_flush_local_all(MPI_Win win)
{
	WIN_SYNC(MPI_Win_flush_local_all, -1, win);
}

TFT_INTERPOSE int MPI_Win_post(MPI_Group group, int assert_, MPI_Win win)
{
	WIN_SYNC(MPI_Win_post, -1, group, assert_, win);
}

TFT_INTERPOSE int MPI_Win_start(MPI_Group group, int assert_, MPI_Win win)
{
	WIN_SYNC(MPI_Win_start, -1, group, assert_, win);
}

TFT_INTERPOSE int MPI_Win_complete(MPI_Win win)
{
	WIN_SYNC(MPI_Win_complete, -1, win);
}

TFT_INTERPOSE int MPI_Win_wait(MPI_Win win)
{
	WIN_SYNC(MPI_Win_wait, -1, win);
}

/* ---- init and finalize -------------------------------------------------------------------- */

static char library[MPI_MAX_LIBRARY_VERSION_STRING + 1];
static int untraced_said;
static _Atomic int started; /* MPI_Init succeeded here: rank, size and library are known */

/* After PMPI_Init(_thread) succeeded: follow the calls from now on (Open MPI only). */
static void start_following(void)
{
	int len = 0;

	if (tft_mpi_state_init() != 0) {
		tft_preload_say(&untraced_said, true,
				"MPI calls run untraced: the MPI library is not Open MPI "
				"(this build follows Open MPI's ABI)");
		return;
	}
	if (MREAL(PMPI_Get_library_version) &&
	    tft_mpi_real_fns.PMPI_Get_library_version(library, &len) == MPI_SUCCESS) {
		library[len < MPI_MAX_LIBRARY_VERSION_STRING ? len : MPI_MAX_LIBRARY_VERSION_STRING] = 0;
		library[strcspn(library, "\n")] = 0;
	}
	atomic_store_explicit(&started, 1, memory_order_release);
	atomic_store_explicit(&tft_mpi.on, 1, memory_order_release);
}

/* The clock exchange, a zone of its own beside the MPI call it follows or precedes. */
static void clock_sync(const char *at)
{
	struct tft_rt_arg a = { .key = "at", .type = TFT_RT_ARG_STR, .s = at };
	struct tft_zone z;

	if (!tft_mpi_clock_enabled())
		return;
	z = tft_zone_begin(&site_sync);
	tft_mpi_clock_sync(at);
	if (z.depth) {
		tft_rt_zone_args(z.depth, &a, 1);
		tft_zone_end(z);
	}
}

static int init_common(int *argc, char ***argv, int required, int *provided, int thread)
{
	struct mcall c;
	int rc;

	if (!(tft_preload.intercept & TFT_ICPT_MPI) || following())
		return thread ? PASS(MPI_Init_thread, argc, argv, required, provided)
			      : PASS(MPI_Init, argc, argv);
	/* the first use of MPI: the session starts here (a rank's file in a job directory) */
	tft_preload_claim();
	mc_begin(&c, thread ? &site_MPI_Init_thread : &site_MPI_Init);
	rc = thread ? PASS(MPI_Init_thread, argc, argv, required, provided) : PASS(MPI_Init, argc, argv);
	if (rc == MPI_SUCCESS)
		start_following();
	if (following()) {
		arg_comm(&c, tft_mpi.world_info);
		if (thread) {
			arg_int(&c, "required", required);
			if (provided)
				arg_int(&c, "provided", *provided);
		}
	}
	mc_end(&c);
	if (following())
		clock_sync("init");
	return rc;
}

TFT_INTERPOSE int MPI_Init(int *argc, char ***argv)
{
	return init_common(argc, argv, 0, NULL, 0);
}

TFT_INTERPOSE int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	return init_common(argc, argv, required, provided, 1);
}

TFT_INTERPOSE int MPI_Finalize(void)
{
	struct mcall c;
	int rc;

	if (!following())
		return PASS(MPI_Finalize);
	clock_sync("finalize");
	tft_mpi_clock_fini();
	tft_mpi_state_fini(); /* nothing is followed from here on */
	mc_begin(&c, &site_MPI_Finalize);
	rc = PASS(MPI_Finalize);
	mc_end(&c);
	return rc;
}

/* ---- what the drain writes: the rank, the library, the clock exchanges, the counts ------------- */

static struct {
	uint32_t session;      /* the session it was written to (tft_rt_src_session) */
	int job_said;
	uint64_t clock_gen;
	uint64_t seq_dropped, req_dropped;
} said;

static void collect(void *ctx, struct tft_rt_src *io, int final)
{
	uint64_t gen, v;
	char *json;

	(void)ctx;
	(void)final;
	if (tft_rt_src_session(io) != said.session) {
		memset(&said, 0, sizeof(said));
		said.session = tft_rt_src_session(io);
	}
	/* Acquire: pairs with the release store in start_following (rank, size, library). */
	if (!said.job_said && atomic_load_explicit(&started, memory_order_acquire)) {
		tft_rt_src_job(io, tft_mpi.rank, tft_mpi.size);
		if (library[0])
			tft_rt_src_meta(io, "mpi_library", library);
		said.job_said = 1;
	}
	gen = said.clock_gen;
	if ((json = tft_mpi_clock_json(&gen)) != NULL) {
		tft_rt_src_meta(io, "clock_sync", json);
		said.clock_gen = gen;
		free(json);
	}
	v = atomic_load_explicit(&tft_mpi.seq_dropped, memory_order_relaxed);
	if (v != said.seq_dropped) {
		tft_rt_src_count(io, "mpi_seq_dropped", (int64_t)(v - said.seq_dropped));
		said.seq_dropped = v;
	}
	v = atomic_load_explicit(&tft_mpi.req_dropped, memory_order_relaxed);
	if (v != said.req_dropped) {
		tft_rt_src_count(io, "mpi_requests_dropped", (int64_t)(v - said.req_dropped));
		said.req_dropped = v;
	}
}

void tft_mpi_setup(void)
{
	static const struct tft_rt_source src = { collect, NULL };

	if (tft_preload.intercept & TFT_ICPT_MPI)
		tft_rt_source_add(&src);
}

#endif /* TFT_HAVE_MPI */

#if !defined(TFT_HAVE_MPI)
void tft_mpi_setup(void)
{
}
#endif
