/* SPDX-License-Identifier: MIT */
/*
 * The communication of a distributed job, read from its ranks' slices and
 * matched across ranks (docs/distributed.md):
 *
 *   - MPI calls: slices named by the MPI function (category "mpi") with the
 *     args of the capture spec: comm, comm_size, peer, tag, bytes, seq (a
 *     message's envelope sequence number per (comm, src, dst, tag)),
 *     coll_seq (a collective's sequence number on its communicator), root,
 *     request (nonblocking calls) and completes (the Wait/Test that
 *     completes requests; for receives also the matched peer/tag/bytes);
 *   - torch.distributed collectives: category "collective" or the names
 *     Kineto records (c10d::*, gloo:*, nccl:*), args comm, coll_seq, bytes;
 *     without coll_seq the k-th call of a name on each rank is one
 *     collective (Kineto traces carry no sequence numbers);
 *   - communication kernels on device streams (nccl*, rccl*): their time
 *     only.
 *
 * A comm call nested in another one on the same track (Kineto's nccl:* op
 * inside c10d::*) is the outer call's. The same pass takes each rank's busy
 * time: the union of the top-level slices of its thread, device and
 * communication tracks and of every slice of its lane-packed tracks (GPU
 * streams); derived tracks are left out. Matching (tft_comm_match): the k-th
 * send from A to B with tag T on a communicator is the k-th receive of B
 * from A with tag T (MPI's non-overtaking rule), by `seq` where the call
 * says it, else by call order; collectives by (comm, coll_seq).
 *
 * Works on any session whose tracks' processes carry ranks (a job view,
 * job/job.h, a merged job, several ranks' traces imported into one file)
 * or on one rank's session. Times are the session's. Not thread-safe: one
 * set per thread.
 */
#ifndef TFT_JOB_COMM_H
#define TFT_JOB_COMM_H

#include <stdbool.h>
#include <stdint.h>

#include "core/status.h"
#include "store/session.h"

enum tft_comm_kind {
	TFT_COMM_OTHER = 0,  /* an MPI call that matches nothing (MPI_Init, MPI_Comm_split ...) */
	TFT_COMM_SEND = 1,   /* MPI_Send, Ssend, Bsend, Rsend */
	TFT_COMM_ISEND = 2,  /* MPI_Isend, Issend, Ibsend, Irsend (completed by a WAIT) */
	TFT_COMM_RECV = 3,   /* MPI_Recv */
	TFT_COMM_IRECV = 4,  /* MPI_Irecv (completed by a WAIT) */
	TFT_COMM_WAIT = 5,   /* MPI_Wait*, MPI_Test*: completes requests */
	TFT_COMM_COLL = 6,   /* a collective call */
	TFT_COMM_DEVICE = 7, /* a communication kernel on a device stream */
};

/* tft_comm_call.flags */
enum {
	TFT_COMM_F_MPI = 1u << 0,         /* an MPI call (its semantics are MPI's) */
	TFT_COMM_F_NONBLOCKING = 1u << 1, /* a nonblocking collective (MPI_Iallreduce ...) */
};

/* Who waits for whom in a collective. */
enum tft_coll_shape {
	TFT_COLL_ALL = 0,      /* everyone for everyone: barrier, allreduce, allgather, alltoall,
				* reduce_scatter (and what is not known) */
	TFT_COLL_ROOT_OUT = 1, /* the members for the root: bcast, scatter */
	TFT_COLL_ROOT_IN = 2,  /* the root for the members: reduce, gather */
	TFT_COLL_PREFIX = 3,   /* rank i of the communicator for ranks < i: scan, exscan */
};

struct tft_comm_call {
	int64_t ts, end;      /* the slice's start and end (session time) */
	uint32_t rank;        /* rank index into tft_comm_set.ranks (a rank number while reading) */
	uint32_t track;       /* session track id */
	uint32_t name;        /* session string id */
	uint32_t depth;
	uint8_t kind, shape;  /* enum tft_comm_kind, enum tft_coll_shape */
	uint8_t flags;        /* TFT_COMM_F_* */
	int32_t peer;         /* world rank of the other side; -1 unknown or any */
	int32_t tag;          /* -1 unknown or any */
	int32_t root;         /* collectives: the root's rank in comm; -1 none */
	int32_t comm_size;    /* members of the communicator; 0 unknown */
	int32_t rank_in_comm; /* this rank's rank in comm; -1 unknown (then its world rank) */
	int64_t comm;         /* communicator id (0: MPI_COMM_WORLD / the default group) */
	int64_t bytes;        /* this rank's bytes; -1 unknown */
	int64_t seq;          /* p2p: envelope sequence number; collectives: coll_seq; -1 unknown */
	int64_t request;      /* nonblocking calls: the request id; -1 none */
	uint32_t done, ndone; /* WAIT: its completions, tft_comm_set.done[done .. done + ndone) */
	uint32_t completed_by; /* ISEND/IRECV: the WAIT that completed it (UINT32_MAX: none seen) */
	/*
	 * Time the call spent waiting for another rank (clipped to the call) and
	 * the call it waited for (UINT32_MAX: none): a receive's late sender, a
	 * send's late receiver, a collective's last arrival (the root for
	 * ROOT_OUT, the ranks before it for PREFIX). tft_comm_compute_waits.
	 */
	int64_t wait_ns;
	uint32_t waited_for;
};

/* One request a Wait/Test completed. */
struct tft_comm_done {
	int64_t request;
	int32_t peer, tag; /* receives: the matched source and tag; -1 unknown */
	int64_t bytes;     /* -1 unknown */
	int64_t seq;       /* -1 unknown */
};

/* A matched point-to-point message. */
struct tft_comm_msg {
	uint32_t send;      /* the send call */
	uint32_t recv;      /* the receive call (RECV, or the IRECV that posted it) */
	uint32_t recv_done; /* the call in which the data arrived: the RECV, or the IRECV's WAIT */
	int64_t bytes;      /* the send's bytes (-1 unknown) */
};

/* A collective: its calls on the member ranks. */
struct tft_comm_coll {
	int64_t comm, seq;             /* (comm, coll_seq), or the inferred order */
	uint32_t first, n;             /* members: tft_comm_set.member[first .. first + n), rank order */
	uint32_t expected;             /* members it should have (comm_size, else the ranks present) */
	uint32_t first_call, last_call; /* calls of the first and the last arrival */
	uint32_t name;                 /* the first member's name (string id) */
};

/* A rank's busy time: disjoint intervals [a, b), by start. */
struct tft_comm_busy {
	int32_t rank;              /* while reading: the rank number (its index after finish) */
	struct tft_comm_ivl { int64_t a, b; } *v; /* owned */
	uint32_t n, cap;
};

struct tft_comm_set {
	int32_t *ranks;            /* owned: rank numbers, ascending */
	uint32_t nranks;
	struct tft_comm_call *calls; /* owned: by rank index, then start */
	uint32_t ncalls, cap_calls;
	uint32_t *rank_first;      /* owned: rank i's calls are [rank_first[i], rank_first[i + 1]) */
	struct tft_comm_done *done; /* owned */
	uint32_t ndone, cap_done;
	struct tft_comm_msg *msgs; /* owned: by send */
	uint32_t nmsgs;
	struct tft_comm_coll *colls; /* owned: by first arrival */
	uint32_t ncolls;
	uint32_t *member;          /* owned: call indices of the collectives' members */
	uint32_t nmember;
	uint32_t sends, recvs;     /* point-to-point sends and receives read */
	uint32_t unmatched_sends, unmatched_recvs;
	uint32_t incomplete_colls; /* collectives with fewer members than expected */
	uint32_t inferred_colls;   /* collectives matched by call order (no coll_seq) */
	uint32_t orphan_waits;     /* completions of requests no call posted */
	struct tft_comm_busy *busy; /* owned: while reading, one per rank read (in any order);
				     * after finish, [rank index] */
	uint32_t nbusy, cap_busy;
};

/* Empty set (also what tft_comm_set_fini leaves). */
void tft_comm_set_init(struct tft_comm_set *cs);
void tft_comm_set_fini(struct tft_comm_set *cs);

/*
 * What tft_comm_read reads: rank >= 0 gives every track that rank (one
 * rank's session file), else each track's process rank (tracks of processes
 * without one are skipped). str_map(str_ctx, id) renumbers the name ids the
 * calls report (a job's ids for a rank file's); NULL keeps them. track_base
 * is added to the track ids reported.
 */
struct tft_comm_read_opts {
	int32_t rank;
	uint32_t track_base;
	uint32_t (*str_map)(void *str_ctx, uint32_t id);
	void *str_ctx;
};

/*
 * Append the communication calls and the busy time of s (one pass over its
 * thread, device, GPU stream and communication tracks) to cs, in the
 * session's time. Call tft_comm_finish once every session is read. 0,
 * TFT_ENOMEM or what the scans return (err says it).
 */
int tft_comm_read(struct tft_session *s, const struct tft_comm_read_opts *o, struct tft_comm_set *cs,
		  struct tft_error *err);

/* Move src's calls to the end of dst (src is left empty). 0 or TFT_ENOMEM. */
int tft_comm_set_take(struct tft_comm_set *dst, struct tft_comm_set *src);

/*
 * Index what was read: ranks (the calls' and ranks[0..nranks)), calls
 * sorted by rank and start, rank numbers turned into indices; then match
 * (messages and collectives). 0 or TFT_ENOMEM.
 */
int tft_comm_finish(struct tft_comm_set *cs, const int32_t *ranks, uint32_t nranks);

/* Sort and merge b's intervals (disjoint, by start). */
void tft_comm_busy_norm(struct tft_comm_busy *b);

/* Rank index of rank number r, or UINT32_MAX. */
uint32_t tft_comm_rank_index(const struct tft_comm_set *cs, int32_t r);

/*
 * Match (tft_comm_finish does it): messages, collectives, then the waits.
 * 0 or TFT_ENOMEM.
 */
int tft_comm_match(struct tft_comm_set *cs);
/*
 * Each call's wait_ns and waited_for, and each collective's first and last
 * arrival, from the calls' times: again after they moved (clock alignment).
 */
void tft_comm_compute_waits(struct tft_comm_set *cs);

/* Whether a collective is a TFT_COLL_* by its name ("MPI_Bcast", "c10d::broadcast_", ...). */
int tft_comm_coll_shape(const char *name, size_t len);

/* Meta job_comm: the set's counts as a JSON object (malloc'd; NULL on out-of-memory). */
char *tft_comm_json(const struct tft_comm_set *cs);

#endif /* TFT_JOB_COMM_H */
