/* SPDX-License-Identifier: MIT */
/*
 * MPI communicators and setup from above its profiling interface
 * (mpi_wrap.h): the calls that make communicators (each new one gets the id
 * its members agree on), MPI_Init (it claims the session and starts
 * following calls) and MPI_Finalize, with their clock exchanges
 * (mpi_clock.c), and what the drain writes as session meta: the rank, the
 * job, the library, the clock exchanges and what was dropped.
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
	mc_begin(&c, SITE(F));                                                                 \
	rc = tft_mpi_pmpi.P##F(__VA_ARGS__);                                                             \
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
	mc_begin(&c, SITE(MPI_Comm_create_group));
	rc = tft_mpi_pmpi.PMPI_Comm_create_group(comm, group, tag, newcomm);
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
	mc_begin(&c, SITE(MPI_Intercomm_create));
	rc = tft_mpi_pmpi.PMPI_Intercomm_create(local, local_leader, peer_comm, remote_leader, tag, newcomm);
	/* (both groups know the tag and the members: not each other's parents) */
	if (rc == MPI_SUCCESS && newcomm)
		tft_mpi_comm_made_by_group(*newcomm, tft_mpi_mix(0x494e5452u /* "INTR" */, (uint32_t)tag));
	arg_newcomm(&c, pi, rc == MPI_SUCCESS && newcomm ? *newcomm : tft_mpi.comm_null);
	mc_end(&c);
	return rc;
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
	z = tft_zone_begin(SITE(sync));
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
	mc_begin(&c, thread ? SITE(MPI_Init_thread) : SITE(MPI_Init));
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
	mc_begin(&c, SITE(MPI_Finalize));
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
