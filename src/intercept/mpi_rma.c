/* SPDX-License-Identifier: MIT */
/*
 * MPI one-sided communication from above its profiling interface
 * (mpi_wrap.h): windows (made, freed), RMA operations (put, get, accumulate
 * ...) with their target's world rank, and the synchronisation calls
 * (fence, lock, flush, post-start-complete-wait).
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
	mc_begin(&c, SITE(F));                                                                 \
	rc = tft_mpi_pmpi.P##F(__VA_ARGS__);                                                             \
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
	mc_begin(&c, SITE(MPI_Win_free));
	if (c.z.depth && win)
		arg_win(&c, win_of(*win));
	rc = tft_mpi_pmpi.PMPI_Win_free(win);
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
	mc_begin(&c, SITE(F));                                                                 \
	rc = tft_mpi_pmpi.P##F(__VA_ARGS__);                                                             \
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
		mc_begin(&c, SITE(MPI_Win_fence));
		rc = tft_mpi_pmpi.PMPI_Win_fence(assert_, win);
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
	mc_begin(&c, SITE(F));                                                                 \
	rc = tft_mpi_pmpi.P##F(__VA_ARGS__);                                                             \
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

#endif /* TFT_HAVE_MPI */
