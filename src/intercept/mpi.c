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

#include "intercept/mpi_wrap.h"

/* ---- the functions wrapped -------------------------------------------------------------- */

const struct tft_site tft_mpi_sites[TFT_MS_COUNT] = {
#define MPI_SITE(f) [TFT_MS_##f] = { #f, "mpi", NULL, 0, 0 },
	MPI_WRAPPED(MPI_SITE)
#undef MPI_SITE
	[TFT_MS_sync] = { "tftracer clock sync", "tftracer", NULL, 0, 0 },
};

struct tft_mpi_pmpi tft_mpi_pmpi;

/* Point-to-point: the other side (world rank; -1 any source, -2 MPI_PROC_NULL), tag,
 * bytes (count x the datatype's size when < 0), datatype, count, and the message's
 * envelope number when known. */
void tft_mpi_arg_p2p(struct mcall *c, const struct tft_mpi_comm *ci, int peer, int tag, int count,
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

static __thread char jspace[2][TFT_RT_ARG_TEXT_MAX];

void tft_mpi_jb_init(struct jbuf *j, int which)
{
	j->p = jspace[which];
	j->p[0] = '[';
	j->n = 1;
	j->left_out = 0;
}

/* Append an item (formatted) if the list still fits, else count it left out. */
__attribute__((format(printf, 2, 3))) void tft_mpi_jb_add(struct jbuf *j, const char *fmt, ...)
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

size_t tft_mpi_jb_close(struct jbuf *j)
{
	j->p[j->n++] = ']';
	return j->n;
}

/* ---- requests -------------------------------------------------------------------------------- */

/* A new request the real call filled in: followed from now on (r freed if the call failed). */
void tft_mpi_req_made(struct tft_mpi_req *r, int rc, MPI_Request *req)
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
void tft_mpi_completed(struct mcall *c, struct tft_mpi_req **recs, const MPI_Status *sts, int n)
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
		tft_mpi_jb_init(&jc, 0);
		tft_mpi_jb_init(&jr, 1);
		for (int i = 0; i < n; i++) {
			struct tft_mpi_req *r = recs[i];
			if (!r)
				continue;
			tft_mpi_jb_add(&jc, "%" PRIu64, r->id);
			if (r->kind == TFT_MREQ_RECV && r->matched > 0)
				tft_mpi_jb_add(&jr,
				       "{\"request\":%" PRIu64 ",\"peer\":%d,\"tag\":%d,\"bytes\":%" PRId64
				       ",\"seq\":%" PRId64 "}",
				       r->id, tft_mpi_world_rank(r->ci, r->rpeer), r->rtag, r->rbytes, r->seq);
		}
		arg_json(c, "completes", jc.p, tft_mpi_jb_close(&jc));
		if (nrecv)
			arg_json(c, "recv", jr.p, tft_mpi_jb_close(&jr));
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

#endif /* TFT_HAVE_MPI */

#if !defined(TFT_HAVE_MPI)
void tft_mpi_setup(void)
{
}
#endif
