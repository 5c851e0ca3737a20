/* SPDX-License-Identifier: MIT */
/*
 * Where a distributed job's time goes, rank by rank (the Ranks page,
 * `tftracer stats --by rank`, and the advisor's straggler finding):
 *
 *   - per step and rank: compute (busy outside communication), communication
 *     (time in communication calls not spent waiting), waiting in
 *     communication (time a call waited for another rank: a receive for its
 *     late sender, a blocking send for its late receiver, a collective for
 *     its last arrival, or for its root) and idle (none of these): they sum
 *     to the rank's step;
 *   - the straggler: the rank whose lateness made the others wait longest
 *     (the waiting each call did is charged to the call it waited for), with
 *     the ops that made it late: what it ran before each of those calls
 *     (since its previous communication), against what the ranks that
 *     waited ran before theirs;
 *   - the communication matrix: point-to-point messages, bytes and time
 *     (send start to arrival) between each pair of ranks;
 *   - each collective's skew: its first to its last arrival.
 *
 * Works on a job view (job/job.h: the job's matched communication, ranks
 * read on several threads) and on any session whose processes carry ranks
 * (a merged job, several ranks' traces imported together). Busy time is the
 * union, per rank, of the top-level slices of its thread, device and
 * communication tracks and of every slice of its lane-packed tracks (GPU
 * streams); derived tracks are left out. Steps are each rank's own steps,
 * matched across ranks by index; a session without steps is one step, its
 * whole span. Times are the session's (aligned in a job view).
 */
#ifndef TFT_ANALYZE_RANKS_H
#define TFT_ANALYZE_RANKS_H

#include <stdbool.h>
#include <stdint.h>

#include "core/status.h"
#include "store/session.h"

/* One rank in one step (or in all: tft_ranks_rank.total). */
struct tft_ranks_cell {
	int64_t start_ns, end_ns;          /* the rank's step (0, 0: the rank has no such step) */
	int64_t compute_ns, comm_ns, wait_ns, idle_ns; /* sum to end_ns - start_ns */
};

struct tft_ranks_rank {
	int32_t rank;
	struct tft_ranks_cell total;       /* over its steps */
	int64_t caused_ns;                 /* waiting of other ranks charged to this one */
	uint64_t last_arrivals;            /* collectives it arrived at last */
	uint64_t calls;                    /* its communication calls */
	int64_t clock_offset_ns;           /* its clock against the reference (job views, merged jobs) */
	double clock_drift;                /* ns per ns */
	int64_t clock_error_ns;            /* -1 unknown */
	uint32_t clock_method;             /* TFT_CLOCK_* of job/clock.h; 0 none known */
};

struct tft_ranks_step {
	int64_t index;                     /* the steps' index (0 for a session without steps) */
	uint32_t name;                     /* string id ("" none) */
	int64_t start_ns, end_ns;          /* earliest start, latest end over the ranks */
};

/* Messages from rank src to rank dst (rank indices). */
struct tft_ranks_pair {
	uint32_t src, dst;
	uint64_t messages;
	uint64_t bytes;                    /* messages whose size is known */
	int64_t time_ns;                   /* summed send start to arrival (end of the receiving call) */
};

/* One collective across ranks. */
struct tft_ranks_coll {
	uint32_t name;                     /* string id */
	int64_t comm, seq;
	uint32_t members, expected;
	int64_t first_ns, last_ns;         /* first and last arrival (skew = last - first) */
	int32_t first_rank, last_rank;
	uint32_t last_track;               /* the last arrival's call: track and start */
	int64_t last_ts;
	int64_t wait_ns;                   /* the members' waiting in it */
};

/* An op of the straggler's lateness. */
struct tft_ranks_op {
	uint32_t name;                     /* string id */
	int64_t straggler_ns;              /* its self time on the straggler before the calls it was late to */
	int64_t others_ns;                 /* the same on the ranks that waited, per rank, before theirs */
	uint64_t count;                    /* its slices on the straggler there */
};

struct tft_ranks_result {
	uint32_t nranks;
	struct tft_ranks_rank *ranks;      /* owned: by rank number */
	uint32_t nsteps;
	struct tft_ranks_step *steps;      /* owned: by index */
	struct tft_ranks_cell *cells;      /* owned: [step * nranks + rank index] */
	uint32_t npairs;
	struct tft_ranks_pair *pairs;      /* owned: by src, dst */
	uint32_t ncolls;
	struct tft_ranks_coll *colls;      /* owned: by first arrival */
	int32_t straggler;                 /* rank number, -1 none (nobody waited) */
	uint32_t straggler_index;          /* its index in ranks (UINT32_MAX none) */
	int64_t wait_total_ns;             /* all waiting, every rank */
	uint32_t nops;
	struct tft_ranks_op *ops;          /* owned: by straggler_ns - others_ns, largest first */
	/* the matching (job/comm.h) */
	uint64_t calls, sends, receives, messages, unmatched_sends, unmatched_receives;
	uint64_t collectives, incomplete_collectives, inferred_collectives;
	bool clock_aligned;                /* times are on the reference rank's clock */
};

/*
 * Analyse s. *out is a new result (free with tft_ranks_destroy); a session
 * whose processes carry no rank gives one with nranks = 0. 0, TFT_ENOMEM or
 * what the scans return.
 */
int tft_ranks_analyze(struct tft_session *s, struct tft_ranks_result **out, struct tft_error *err);
void tft_ranks_destroy(struct tft_ranks_result *r);

#endif /* TFT_ANALYZE_RANKS_H */
