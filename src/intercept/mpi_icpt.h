/* SPDX-License-Identifier: MIT */
/*
 * The MPI interceptor's parts (docs/intercept.md, "MPI"): the wrappers of
 * mpi.c (each MPI call a zone on the calling thread, named by the function,
 * with its communicator, peers, tag, bytes, datatype, sequence numbers as
 * args), the bookkeeping of mpi_state.c (communicator ids agreed by every
 * member, envelope and collective sequence numbers, requests in flight,
 * datatype and operation names) and the clock exchange of mpi_clock.c.
 *
 * Built against Open MPI's mpi.h, and only its ABI: the handles of a
 * program's MPI are pointers to its objects. Nothing here links with libmpi:
 * the PMPI functions and the predefined objects (MPI_COMM_WORLD, MPI_BYTE
 * ...) are looked up at run time, so the preload library loads in programs
 * without MPI, and a program whose MPI is not Open MPI runs untraced.
 */
#ifndef TFT_INTERCEPT_MPI_ICPT_H
#define TFT_INTERCEPT_MPI_ICPT_H

#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* The PMPI functions the interceptor calls: those it wraps, and its helpers. */
#define MPI_HELPER_FUNCS(X)                                                                  \
	X(PMPI_Init) X(PMPI_Init_thread) X(PMPI_Finalize) X(PMPI_Comm_rank) X(PMPI_Comm_size) \
	X(PMPI_Comm_group) X(PMPI_Comm_remote_group) X(PMPI_Comm_test_inter)                  \
	X(PMPI_Group_translate_ranks) X(PMPI_Group_free) X(PMPI_Group_size)                    \
	X(PMPI_Comm_create_keyval) X(PMPI_Comm_set_attr) X(PMPI_Comm_get_attr)                 \
	X(PMPI_Comm_dup) X(PMPI_Comm_free) X(PMPI_Type_size) X(PMPI_Type_get_name)            \
	X(PMPI_Type_get_envelope) X(PMPI_Get_count) X(PMPI_Request_get_status)                \
	X(PMPI_Get_library_version) X(PMPI_Win_get_group) X(PMPI_Win_create_keyval)           \
	X(PMPI_Win_set_attr) X(PMPI_Win_get_attr) X(PMPI_Send) X(PMPI_Recv)           \
	X(PMPI_Test_cancelled)

/* The real function f (PMPI_...), found at first use; NULL when no MPI is loaded. */
#define MPI_DECL_REAL(f) __typeof__(&f) f;
struct tft_mpi_real {
	MPI_HELPER_FUNCS(MPI_DECL_REAL)
};
extern struct tft_mpi_real tft_mpi_real_fns;
void *tft_mpi_resolve(const char *name);
#define MREAL(f)                                                                           \
	(__atomic_load_n(&tft_mpi_real_fns.f, __ATOMIC_RELAXED)                            \
		 ? __atomic_load_n(&tft_mpi_real_fns.f, __ATOMIC_RELAXED)                  \
		 : (__atomic_store_n(&tft_mpi_real_fns.f,                                  \
				     (__typeof__(tft_mpi_real_fns.f))tft_mpi_resolve(#f),  \
				     __ATOMIC_RELAXED),                                    \
		    __atomic_load_n(&tft_mpi_real_fns.f, __ATOMIC_RELAXED)))

/* ---- communicators ------------------------------------------------------------------ */

/* Per (peer, tag) counters of one direction: the next envelope sequence number. */
struct tft_mpi_seqtab {
	uint64_t *keys;  /* owned: (peer + 1) << 32 | tag as uint32; 0 = empty slot */
	uint64_t *next;  /* owned, beside keys */
	uint32_t cap, n;
};

struct tft_mpi_req;

/*
 * What the interceptor knows of a communicator (attached to it as an
 * attribute; the world's and self's are made at MPI_Init). Its id is the
 * same on every member: 0 for MPI_COMM_WORLD, else a hash of how it was
 * made (the parent's id, the creation's number on the parent, the world rank
 * of its first member), below 2^53.
 */
struct tft_mpi_comm {
	int64_t id;
	int size, rank;       /* this process's group (the local one of an intercommunicator) */
	int inter;            /* an intercommunicator: peers are ranks of the remote group */
	int npeers;           /* ranks peers are named by (the remote group's size for an inter) */
	int *world;           /* owned: world rank of each peer rank, NULL: the same (the world) */
	_Atomic uint64_t coll_seq; /* collectives called on it so far */
	_Atomic uint64_t children; /* communicators made from it so far (dup, split, create ...) */
	_Atomic uint64_t windows;  /* windows made on it so far */
	pthread_mutex_t lock;      /* the tables and the list below */
	struct tft_mpi_seqtab send, recv;
	/* receives whose envelope number waits for their match (a wildcard, or one posted
	 * behind an unmatched wildcard that could take its message): in posting order */
	struct tft_mpi_req *pend_head, *pend_tail;
};

/* The communicator's record (made on first sight: MPI_COMM_SELF, one made by a call
 * not intercepted, whose id is then a hash of its members). NULL: out of memory. */
struct tft_mpi_comm *tft_mpi_comm_of(MPI_Comm comm);
/* Record a communicator the call `parent` made (all members of parent call the creating
 * function, including those that get MPI_COMM_NULL: each counts the creation). `salt`
 * tells apart communicators of the same creation (a split's colours: the world rank of
 * the new communicator's first member is used too). */
void tft_mpi_comm_made(struct tft_mpi_comm *parent, MPI_Comm newcomm, uint64_t salt);
/* The id of a communicator made by members of a group only (MPI_Comm_create_group,
 * MPI_Intercomm_create): from what every member knows (key: the parent's id and the
 * tag; the members; how many such were made here before), not the parent's counter. */
void tft_mpi_comm_made_by_group(MPI_Comm newcomm, uint64_t key);
/* A 64-bit mix of two values (ids, keys). */
uint64_t tft_mpi_mix(uint64_t a, uint64_t b);
/* World rank of peer rank r of c; r itself for MPI_ANY_SOURCE / MPI_PROC_NULL. */
int tft_mpi_world_rank(const struct tft_mpi_comm *c, int r);
/* The next send number to (peer, tag); -1 when the tables are full. Locks c. */
int64_t tft_mpi_send_seq(struct tft_mpi_comm *c, int peer, int tag);

/* ---- requests ----------------------------------------------------------------------- */

enum { TFT_MREQ_SEND = 1, TFT_MREQ_RECV = 2, TFT_MREQ_COLL = 3 };

/*
 * A request of the program the interceptor follows: a nonblocking send or
 * receive (also persistent, also MPI_Imrecv), a nonblocking collective.
 */
struct tft_mpi_req {
	MPI_Request h;               /* the program's handle */
	uint64_t id;                 /* unique in the process; a new one per MPI_Start */
	uint64_t post;               /* posting order (receives) */
	struct tft_mpi_comm *ci;     /* borrowed (communicators outlive their requests) */
	int kind;                    /* TFT_MREQ_* */
	int persistent, active;
	int peer, tag;               /* as posted: peer rank in ci, or MPI_ANY_SOURCE / MPI_ANY_TAG */
	int64_t bytes;               /* as posted (a receive's capacity) */
	int64_t seq;                 /* envelope number, -1 not known yet (or none) */
	int matched;                 /* a receive whose match is known: rpeer, rtag, rbytes */
	int rpeer, rtag;
	int64_t rbytes;
	int pending;                 /* in ci's list of receives waiting for their match */
	struct tft_mpi_req *prev, *next; /* ci's list */
	struct tft_mpi_req *hnext;   /* hash chain (oldest first) / free list */
	uint64_t claim;              /* tft_mpi_req_find_many: the call that took it */
};

/* A request record for a call about to return a new request (free list; NULL: none). */
struct tft_mpi_req *tft_mpi_req_new(void);
/* The request is the program's now (its handle filled in): findable by it. */
void tft_mpi_req_add(struct tft_mpi_req *r);
/* The record of handle h (the oldest, when MPI gave the handle to several), or NULL. */
struct tft_mpi_req *tft_mpi_req_find(MPI_Request h);
/* The records of n handles (NULL entries: not followed), under one lock. */
void tft_mpi_req_find_many(const MPI_Request *h, int n, struct tft_mpi_req **out);
/* Forget it (completed or freed): off the table, off its communicator's list, freed. */
void tft_mpi_req_done(struct tft_mpi_req *r);
/* A record that never became the program's (the real call failed). */
void tft_mpi_req_free(struct tft_mpi_req *r);

/*
 * A receive is posted (peer, tag as the program gave them) on c. r: its
 * request record (nonblocking), or a record on the caller's stack (blocking:
 * settled by tft_mpi_recv_matched before the call returns). Sets r->seq when
 * its number is known now (a specific source and tag, and no earlier wildcard
 * receive still waiting that could take its message), else puts r in c's
 * list of receives waiting for their match.
 */
void tft_mpi_recv_posted(struct tft_mpi_comm *c, struct tft_mpi_req *r, int peer, int tag);
/*
 * The receive r matched: its source, tag and bytes from status. Receives
 * posted before it on the same communicator and still waiting are settled
 * first when MPI says they completed (their numbers come first), so that the
 * k-th receive from A with tag T is numbered k. `done` (n of them): requests
 * completed by the same call, whose handles MPI has freed already (never
 * asked again).
 */
void tft_mpi_recv_matched(struct tft_mpi_req *r, const MPI_Status *st,
			  struct tft_mpi_req *const *done, int n);
/* A receive that will never match (cancelled, freed while waiting): off the list. */
void tft_mpi_recv_forget(struct tft_mpi_req *r);

/* ---- names --------------------------------------------------------------------------- */

/* The name of a datatype ("MPI_INT"; "derived" for a type the program made). */
const char *tft_mpi_type_name(MPI_Datatype t);
/* Bytes of count elements of t (0 for MPI_DATATYPE_NULL or an error). */
int64_t tft_mpi_bytes(int count, MPI_Datatype t);
/* The name of a reduction operation ("MPI_SUM"; "user" for the program's own). */
const char *tft_mpi_op_name(MPI_Op op);

/* ---- state ------------------------------------------------------------------------------ */

struct tft_mpi_state {
	_Atomic int on;           /* after MPI_Init: calls are followed (and recorded when tracing) */
	int rank, size;           /* in MPI_COMM_WORLD */
	void *lib;                /* dlopen handle of the library the PMPI functions are in */
	MPI_Comm world, self, comm_null;
	MPI_Request req_null;
	MPI_Message msg_null, msg_no_proc;
	MPI_Datatype byte, type_null;
	MPI_Win win_null;
	MPI_Group group_null;
	int comm_key, win_key;    /* attribute keys (MPI_KEYVAL_INVALID: none) */
	MPI_Group world_group;    /* for world-rank translation */
	struct tft_mpi_comm *world_info, *self_info;
	_Atomic uint64_t next_req_id;
	_Atomic uint64_t next_post;
	_Atomic uint64_t seq_dropped; /* envelope numbers not given: the tables were full */
	_Atomic uint64_t req_dropped; /* requests not followed: no record left */
};
extern struct tft_mpi_state tft_mpi;

/* Set-up after PMPI_Init(_thread) succeeded: predefined objects, keys, world and self. 0 or -1. */
int tft_mpi_state_init(void);
/* Before PMPI_Finalize: the interceptor stops following calls. */
void tft_mpi_state_fini(void);

/* ---- clock exchange (mpi_clock.c) ---------------------------------------------------------- */

/* The ping-pong with rank 0 (at = "init" or "finalize"), on a private duplicate of the
 * world made at init (freed at finalize): its rows become the session's clock_sync meta. */
void tft_mpi_clock_sync(const char *at);
/* The exchange is on (TFT_MPI_CLOCK_SYNC is not "0"). */
int tft_mpi_clock_enabled(void);
/* The clock_sync meta JSON as it is now, copied into a malloc'ed string, when its version
 * is not *gen (then *gen is set to it); NULL: none yet, or not changed. */
char *tft_mpi_clock_json(uint64_t *gen);
/* Free what the exchanges kept (finalize). */
void tft_mpi_clock_fini(void);

#endif /* TFT_INTERCEPT_MPI_ICPT_H */
