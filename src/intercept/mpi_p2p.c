/* SPDX-License-Identifier: MIT */
/*
 * MPI point-to-point from above its profiling interface (mpi_wrap.h): sends
 * (blocking, nonblocking, persistent), receives, send-receive, probes and
 * matched messages, and the completion calls (wait, test and their all,
 * any, some forms) with what each completed.
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

/* ---- scratch arrays (requests saved before a completion call, statuses) ---------------------- */

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
	tft_mpi_arg_p2p(&c, ci, dest, tag, count, dt, -1, seq);
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
	tft_mpi_req_made(r, rc, req); /* (r may be completed by another thread from here on) */
	tft_mpi_arg_p2p(&c, ci, dest, tag, count, dt, bytes, seq);
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
	tft_mpi_req_made(r, rc, req);
	tft_mpi_arg_p2p(&c, ci, peer, tag, count, dt, bytes, -1);
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
		return send_common(SITE(F), tft_mpi_pmpi.P##F, buf, count, dt, dest, tag, comm);       \
	}
#define NONBLOCKING_SEND(F)                                                                      \
	TFT_INTERPOSE int F(const void *buf, int count, MPI_Datatype dt, int dest, int tag,      \
			    MPI_Comm comm, MPI_Request *req)                                     \
	{                                                                                        \
		if (!following() || !REAL(F))                                                    \
			return PASS(F, buf, count, dt, dest, tag, comm, req);                    \
		return isend_common(SITE(F), tft_mpi_pmpi.P##F, buf, count, dt, dest, tag, comm, req); \
	}
#define PERSISTENT_SEND(F)                                                                       \
	TFT_INTERPOSE int F(const void *buf, int count, MPI_Datatype dt, int dest, int tag,      \
			    MPI_Comm comm, MPI_Request *req)                                     \
	{                                                                                        \
		if (!following() || !REAL(F))                                                    \
			return PASS(F, buf, count, dt, dest, tag, comm, req);                    \
		return pinit_common(SITE(F), tft_mpi_pmpi.P##F, TFT_MREQ_SEND, buf, count, dt, dest,   \
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
	return pinit_common(SITE(MPI_Recv_init), (isend_fn)tft_mpi_pmpi.PMPI_Recv_init, TFT_MREQ_RECV, buf,
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
	mc_begin(&c, SITE(MPI_Start));
	rc = tft_mpi_pmpi.PMPI_Start(req);
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
		return tft_mpi_pmpi.PMPI_Startall(count, reqs);
	tft_mpi_req_find_many(reqs, count, recs);
	for (int i = 0; i < count; i++) {
		if (recs[i] && (!recs[i]->persistent || recs[i]->active))
			recs[i] = NULL;
		if (recs[i])
			start_one(recs[i]);
	}
	mc_begin(&c, SITE(MPI_Startall));
	if (c.z.depth) { /* (read before the call: another thread may complete them after it) */
		tft_mpi_jb_init(&j, 0);
		for (int i = 0; i < count; i++) {
			struct tft_mpi_req *r = recs[i];
			if (!r)
				continue;
			tft_mpi_jb_add(&j,
			       "{\"request\":%" PRIu64 ",\"kind\":\"%s\",\"comm\":%" PRId64 ",\"peer\":%d,"
			       "\"tag\":%d,\"bytes\":%" PRId64 ",\"seq\":%" PRId64 "}",
			       r->id, r->kind == TFT_MREQ_SEND ? "send" : "recv", r->ci ? r->ci->id : -1,
			       tft_mpi_world_rank(r->ci, r->peer), r->tag, r->bytes, r->seq);
		}
		arg_json(&c, "started", j.p, tft_mpi_jb_close(&j));
		if (j.left_out)
			arg_int(&c, "left_out", j.left_out);
	}
	rc = tft_mpi_pmpi.PMPI_Startall(count, reqs);
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
	mc_begin(&c, SITE(MPI_Request_free));
	if (r)
		arg_int(&c, "request", (int64_t)r->id);
	rc = tft_mpi_pmpi.PMPI_Request_free(req);
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
	mc_begin(&c, SITE(MPI_Cancel));
	if (r)
		arg_int(&c, "request", (int64_t)r->id);
	rc = tft_mpi_pmpi.PMPI_Cancel(req);
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
	mc_begin(&c, SITE(MPI_Recv));
	rc = tft_mpi_pmpi.PMPI_Recv(buf, count, dt, source, tag, comm, st);
	if (rc == MPI_SUCCESS) {
		tft_mpi_recv_matched(&tmp, st, NULL, 0);
		tft_mpi_arg_p2p(&c, ci, tmp.rpeer, tmp.rtag, count, dt, tmp.rbytes, tmp.seq);
	} else {
		tft_mpi_recv_forget(&tmp);
		tft_mpi_arg_p2p(&c, ci, source, tag, count, dt, -1, -1);
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
	mc_begin(&c, SITE(MPI_Irecv));
	rc = tft_mpi_pmpi.PMPI_Irecv(buf, count, dt, source, tag, comm, req);
	tft_mpi_req_made(r, rc, req);
	tft_mpi_arg_p2p(&c, ci, source, tag, count, dt, bytes, seq);
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
	mc_begin(&c, SITE(MPI_Sendrecv));
	rc = tft_mpi_pmpi.PMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag,
				comm, st);
	if (rc == MPI_SUCCESS)
		tft_mpi_recv_matched(&tmp, st, NULL, 0);
	else
		tft_mpi_recv_forget(&tmp);
	tft_mpi_arg_p2p(&c, ci, dest, stag, scount, stype, -1, seq);
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
	mc_begin(&c, SITE(MPI_Sendrecv_replace));
	rc = tft_mpi_pmpi.PMPI_Sendrecv_replace(buf, count, dt, dest, stag, source, rtag, comm, st);
	if (rc == MPI_SUCCESS)
		tft_mpi_recv_matched(&tmp, st, NULL, 0);
	else
		tft_mpi_recv_forget(&tmp);
	tft_mpi_arg_p2p(&c, ci, dest, stag, count, dt, -1, seq);
	if (rc == MPI_SUCCESS)
		arg_recv_half(&c, ci, &tmp);
	mc_end(&c);
	return rc;
}

/* ---- probes and matched messages ------------------------------------------------------------- */

/*
 * (Not core/hmap: a fixed static table of whole records, in the traced
 * program's MPI calls, that never allocates; a full table forgets.)
 */
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
	mc_begin(&c, SITE(MPI_Probe));
	rc = tft_mpi_pmpi.PMPI_Probe(source, tag, comm, st);
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
	mc_begin(&c, SITE(MPI_Iprobe));
	rc = tft_mpi_pmpi.PMPI_Iprobe(source, tag, comm, flag, st);
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
	mc_begin(&c, SITE(MPI_Mprobe));
	rc = tft_mpi_pmpi.PMPI_Mprobe(source, tag, comm, message, st);
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
	mc_begin(&c, SITE(MPI_Improbe));
	rc = tft_mpi_pmpi.PMPI_Improbe(source, tag, comm, flag, message, st);
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
	mc_begin(&c, SITE(MPI_Mrecv));
	rc = tft_mpi_pmpi.PMPI_Mrecv(buf, count, dt, message, st);
	if (known)
		tft_mpi_arg_p2p(&c, info.ci, info.rpeer, info.rtag, count, dt, info.rbytes, info.seq);
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
	mc_begin(&c, SITE(MPI_Imrecv));
	rc = tft_mpi_pmpi.PMPI_Imrecv(buf, count, dt, message, req);
	tft_mpi_req_made(r, rc, req);
	if (known) {
		tft_mpi_arg_p2p(&c, info.ci, info.rpeer, info.rtag, count, dt, info.rbytes, info.seq);
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
	mc_begin(&c, SITE(MPI_Wait));
	rc = tft_mpi_pmpi.PMPI_Wait(req, st);
	if (rc == MPI_SUCCESS && r)
		tft_mpi_completed(&c, &r, st, 1);
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
	mc_begin(&c, SITE(MPI_Test));
	rc = tft_mpi_pmpi.PMPI_Test(req, flag, st);
	if (rc == MPI_SUCCESS) {
		arg_bool(&c, "flag", *flag);
		if (*flag && r)
			tft_mpi_completed(&c, &r, st, 1);
	}
	mc_end(&c);
	return rc;
}

/* Waitall / Testall: every request tft_mpi_completed (done), with their statuses. */
static void all_done(struct mcall *c, int rc, int count, struct tft_mpi_req **recs, MPI_Status *sts)
{
	if (!recs || !sts)
		return;
	if (rc == MPI_ERR_IN_STATUS) /* those still pending did not complete */
		for (int i = 0; i < count; i++)
			if (sts[i].MPI_ERROR == MPI_ERR_PENDING)
				recs[i] = NULL;
	tft_mpi_completed(c, recs, sts, count);
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
	mc_begin(&c, SITE(MPI_Waitall));
	rc = tft_mpi_pmpi.PMPI_Waitall(count, reqs, st);
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
	mc_begin(&c, SITE(MPI_Testall));
	rc = tft_mpi_pmpi.PMPI_Testall(count, reqs, flag, st);
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
	mc_begin(&c, SITE(MPI_Waitany));
	rc = tft_mpi_pmpi.PMPI_Waitany(count, reqs, index, st);
	if (rc == MPI_SUCCESS && recs && *index >= 0 && *index < count && recs[*index])
		tft_mpi_completed(&c, &recs[*index], st, 1);
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
	mc_begin(&c, SITE(MPI_Testany));
	rc = tft_mpi_pmpi.PMPI_Testany(count, reqs, index, flag, st);
	if (rc == MPI_SUCCESS) {
		arg_bool(&c, "flag", *flag);
		if (*flag && recs && *index >= 0 && *index < count && recs[*index])
			tft_mpi_completed(&c, &recs[*index], st, 1);
	}
	mc_end(&c);
	return rc;
}

/* Waitsome / Testsome: the requests at indices[0..n) tft_mpi_completed, statuses in that order. */
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
	tft_mpi_completed(c, out, sts, n);
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
	mc_begin(&c, SITE(MPI_Waitsome));
	rc = tft_mpi_pmpi.PMPI_Waitsome(incount, reqs, outcount, indices, st);
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
	mc_begin(&c, SITE(MPI_Testsome));
	rc = tft_mpi_pmpi.PMPI_Testsome(incount, reqs, outcount, indices, st);
	if (rc == MPI_SUCCESS) {
		arg_int(&c, "outcount", *outcount);
		some_done(&c, *outcount, indices, incount, recs, st);
	}
	mc_end(&c);
	return rc;
}

#endif /* TFT_HAVE_MPI */
