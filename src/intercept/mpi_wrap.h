/* SPDX-License-Identifier: MIT */
/*
 * The MPI wrappers' shared machinery (docs/intercept.md, "MPI"), private to
 * the interceptor: the functions wrapped and their zone sites, the real
 * PMPI_ twins found at run time, one call's zone and its args, the JSON lists
 * of what a call completed and the requests' bookkeeping (mpi.c). The
 * wrappers are by MPI family: point-to-point with probes and completion
 * (mpi_p2p.c), collectives (mpi_coll.c), communicators with init, finalize
 * and the drain's meta (mpi_comm.c), one-sided communication (mpi_rma.c).
 * Include only where TFT_HAVE_MPI is defined.
 */
#ifndef TFT_INTERCEPT_MPI_WRAP_H
#define TFT_INTERCEPT_MPI_WRAP_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "intercept/mpi_icpt.h"
#include "intercept/preload.h"
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

/* The zone sites: one per function wrapped, and the clock exchange's (tft_mpi_sites, mpi.c). */
enum tft_mpi_site_id {
#define MPI_SITE_ID(f) TFT_MS_##f,
	MPI_WRAPPED(MPI_SITE_ID)
#undef MPI_SITE_ID
	TFT_MS_sync,
	TFT_MS_COUNT
};
extern const struct tft_site tft_mpi_sites[TFT_MS_COUNT];
#define SITE(f) (&tft_mpi_sites[TFT_MS_##f])

/* The real PMPI_ twins of the functions wrapped (mpi.c). */
#define DECL_REAL(f) __typeof__(&P##f) P##f;
struct tft_mpi_pmpi {
	MPI_WRAPPED(DECL_REAL)
};
#undef DECL_REAL
extern struct tft_mpi_pmpi tft_mpi_pmpi;

/* The real PMPI_ twin of f, found at first use (NULL: no MPI here). */
#define REAL(f)                                                                            \
	(__atomic_load_n(&tft_mpi_pmpi.P##f, __ATOMIC_RELAXED)                                     \
		 ? __atomic_load_n(&tft_mpi_pmpi.P##f, __ATOMIC_RELAXED)                           \
		 : (__atomic_store_n(&tft_mpi_pmpi.P##f, (__typeof__(tft_mpi_pmpi.P##f))tft_mpi_resolve("P" #f), \
				     __ATOMIC_RELAXED),                                    \
		    __atomic_load_n(&tft_mpi_pmpi.P##f, __ATOMIC_RELAXED)))
/* Call it, or say MPI_ERR_OTHER when there is none (a program that probed for MPI). */
#define PASS(f, ...) (REAL(f) ? tft_mpi_pmpi.P##f(__VA_ARGS__) : MPI_ERR_OTHER)

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

/* Items a call keeps on its stack before it needs a thread's scratch array. */
#define STACK_N 32

/* ---- mpi.c: what calls share ---------------------------------------------------------------- */

/* A JSON list being written into a thread's buffer. */
struct jbuf {
	char *p;
	size_t n;
	uint32_t left_out;
};

/* A point-to-point call's args: communicator, peer (world rank), tag, count, datatype, bytes, envelope number. */
void tft_mpi_arg_p2p(struct mcall *c, const struct tft_mpi_comm *ci, int peer, int tag, int count,
		    MPI_Datatype dt, int64_t bytes, int64_t seq);
/* What a completion call completed (recs[i] with sts[i]): the JSON lists of its args. */
void tft_mpi_completed(struct mcall *c, struct tft_mpi_req **recs, const MPI_Status *sts, int n);
/* A JSON list in a thread's buffer `which` (0 or 1): items added while they fit, then closed. */
void tft_mpi_jb_init(struct jbuf *j, int which);
__attribute__((format(printf, 2, 3))) void tft_mpi_jb_add(struct jbuf *j, const char *fmt, ...);
size_t tft_mpi_jb_close(struct jbuf *j);
/* A new request the real call filled in: followed from now on (r freed if the call failed). */
void tft_mpi_req_made(struct tft_mpi_req *r, int rc, MPI_Request *req);

#endif
