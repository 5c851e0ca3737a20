/* SPDX-License-Identifier: MIT */
/*
 * MPI collectives from above its profiling interface (mpi_wrap.h), blocking
 * and nonblocking: each a zone with its communicator, its sequence number on
 * the communicator, its root and the bytes it moves.
 */
#include <dlfcn.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "intercept/preload.h"

#if defined(TFT_HAVE_MPI)

#include "intercept/mpi_wrap.h"

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
	mc_begin(&c, SITE(F));                                                                 \
	rc = tft_mpi_pmpi.P##F(__VA_ARGS__)
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
			tft_mpi_req_made(r_, rc, req);                                                   \
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

#endif /* TFT_HAVE_MPI */
