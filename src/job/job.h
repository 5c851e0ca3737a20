/* SPDX-License-Identifier: MIT */
/*
 * A distributed job: a directory of per-rank session files (rank-<N>.tft,
 * what `tftracer record -o JOBDIR` writes under a launcher; see
 * docs/distributed.md), read together without copying them.
 *
 * tft_job_open reads each rank file's tables (processes, tracks, steps,
 * meta) and its communication calls (job/comm.h, on several threads),
 * matches them across ranks and estimates each rank's clock against the
 * lowest rank (job/clock.h). A view (tft_job_view) is then a tft_session
 * over every rank: the readers of sessions (statistics, exports, the
 * server) take it as they take a file. In a view:
 *   - processes and tracks are numbered rank after rank (rank 0's first),
 *     each process carrying its rank (tft_process.rank = the file's N);
 *   - string ids are the job's: one id per distinct string across ranks
 *     (the same in every view of the job), assigned as strings are first
 *     read;
 *   - times are on the reference rank's clock (aligned), or each rank's
 *     own (raw_clock);
 *   - flows are the ranks' own plus the job's matched communication: each
 *     point-to-point message a flow from its send to the call in which it
 *     arrived (category "comm.message"), each collective a group of flows
 *     sharing one flow id, from its last arrival to every other member
 *     (category "comm.collective", named by the collective; the flow id is
 *     a hash of (comm, coll_seq));
 *   - meta: job_ranks, job_size, job_id, job_dir, job_clock (JSON: per rank
 *     offset, drift, error bound, method) and job_comm (JSON: the matching's
 *     counts), then the lowest rank's own keys.
 * A view opens rank files as it needs them, at most max_open at once.
 *
 * Threads: a job may be shared by views on several threads (strings are
 * interned under a lock); a view, like any session, is used by one thread
 * at a time.
 */
#ifndef TFT_JOB_JOB_H
#define TFT_JOB_JOB_H

#include <stdbool.h>
#include <stdint.h>

#include "core/status.h"
#include "job/clock.h"
#include "job/comm.h"
#include "store/session.h"

struct tft_job;

struct tft_job_opts {
	unsigned threads;  /* threads reading the ranks at open; 0 = the online CPUs (at most 8) */
	unsigned max_open; /* rank files one view keeps open; 0 = 256 */
};

/*
 * Whether path is a job directory: a directory holding at least one
 * rank-<N>.tft file. false for anything else (a file, a missing path).
 */
bool tft_job_is_dir(const char *path);

/*
 * Open the job in dir. opts may be NULL. NULL on failure, err naming the
 * rank file and what is wrong with it (TFT_ENOTFOUND: no rank files;
 * a rank file that is no session: what tft_session_open says).
 */
struct tft_job *tft_job_open(const char *dir, const struct tft_job_opts *opts, struct tft_error *err);
/* Free the job; every view of it must be closed first. NULL is a no-op. */
void tft_job_close(struct tft_job *job);

/*
 * A session over every rank of the job (see above), closed with
 * tft_session_close. With raw_clock each rank keeps its own clock. With
 * owns_job the view closes the job when it is closed. NULL on
 * out-of-memory (the job is closed then if owned).
 */
struct tft_session *tft_job_view(struct tft_job *job, bool raw_clock, bool owns_job, struct tft_error *err);

/* tft_job_open and an aligned view that owns it: what readers of a JOBDIR use. */
struct tft_session *tft_job_open_session(const char *dir, const struct tft_job_opts *opts,
					 struct tft_error *err);

/* The job behind a view, or NULL for any other session. */
struct tft_job *tft_job_of(const struct tft_session *s);
/* Whether a view shows raw clocks. */
bool tft_job_view_is_raw(const struct tft_session *s);

/*
 * Wait until the job's communication is read and matched (at open when the
 * clocks need it, else on a thread of its own: a view is usable before).
 * 0, or the pass's failure with err filled.
 */
int tft_job_wait(struct tft_job *job, struct tft_error *err);

/* Ranks: their count, the rank number of each (ascending), the directory. */
uint32_t tft_job_rank_count(const struct tft_job *job);
int32_t tft_job_rank(const struct tft_job *job, uint32_t i);
const char *tft_job_dir(const struct tft_job *job);
/* Rank index i's clock against the reference (rank index 0). */
const struct tft_clock_map *tft_job_clock(const struct tft_job *job, uint32_t i);

/*
 * A copy of the job's matched communication in the view's time and ids
 * (call tracks are the view's, names its string ids); free with
 * tft_comm_set_fini. 0 or TFT_ENOMEM.
 */
int tft_job_comm(const struct tft_session *view, struct tft_comm_set *out);

/*
 * Run fn(ctx, i, s, track_base, map, err) for every rank index i on up to
 * `threads` threads (0: as at open), each on a session of its own over rank
 * i's file alone (its own ids, its own clock; map takes its times to the
 * reference's; the view's ids of its tracks are track_base + id). Returns
 * the first non-zero fn result (the others still run) or 0.
 */
typedef int (*tft_job_rank_fn)(void *ctx, uint32_t i, struct tft_session *s, uint32_t track_base,
			       const struct tft_clock_map *map, struct tft_error *err);
int tft_job_each_rank(struct tft_job *job, unsigned threads, tft_job_rank_fn fn, void *ctx,
		      struct tft_error *err);

#endif /* TFT_JOB_JOB_H */
