/* SPDX-License-Identifier: MIT */
/*
 * Job internals shared by job.c (opening, strings, communication, meta)
 * and job_view.c (the session over the ranks). Not a public interface.
 */
#ifndef TFT_JOB_JOB_INT_H
#define TFT_JOB_JOB_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include "job/job.h"

struct tft_strtab;

struct job_rank {
	char *path;             /* owned: DIR/rank-<N>.tft */
	int32_t rank;           /* N */
	uint32_t proc_base, nprocs;   /* its processes are the job's [proc_base, + nprocs) */
	uint32_t track_base, ntracks; /* its tracks likewise */
	uint32_t nstr;          /* its string ids */
	_Atomic uint32_t *smap; /* owned: [its string id] job id + 1; 0 not mapped yet */
	char *format, *producer, *job_id; /* owned copies of its meta (NULL: none) */
	int64_t job_size;       /* meta job_size (or world_size); 0 none */
	uint64_t flows, dropped, unmatched_flows, unclosed_slices;
	int has_cstats;
};

struct tft_job {
	char *dir;                   /* owned, no trailing slash */
	struct job_rank *r;          /* owned: by rank number */
	uint32_t n;
	unsigned threads, max_open;
	struct tft_process *procs;   /* owned: the job's processes (job string ids, rank set) */
	uint32_t nprocs, cap_procs;
	struct tft_track *tracks;    /* owned: the job's tracks, raw times */
	uint32_t ntracks, cap_tracks;
	uint32_t *track_rank;        /* owned: [track] rank index */
	uint32_t cap_track_rank;
	struct tft_step *steps;      /* owned: every rank's steps, raw times, file order */
	uint32_t nsteps, cap_steps;
	uint32_t *step_rank;         /* owned: [step] rank index */
	uint32_t cap_step_rank;
	struct tft_clock_sync *sync; /* owned: the ranks' ping-pong rows */
	uint32_t nsync, cap_sync;
	struct tft_clock_map *clock; /* owned: [rank index] */
	struct tft_comm_set comm;    /* raw times, job track and string ids */
	struct tft_flow *xflows;     /* owned: flows of the matched communication, raw times */
	uint32_t nxflows, cap_xflows;
	char meta_ranks[16], meta_size[24];
	char *meta_id, *meta_clock, *meta_estimate, *meta_comm; /* owned (meta_estimate: job_clock, not applied) */
	int32_t *ranks;              /* owned: [rank index] rank number */
	/*
	 * The communication pass: at open when the clocks need it (no ping-pong),
	 * else on a thread of its own while views are already read; comm, xflows
	 * and meta_comm are the pass's until comm_done (set under lock, with
	 * comm_cond signalled; readers take them after tft_job_wait_comm).
	 */
	pthread_t comm_thread;
	bool comm_thread_on;
	bool comm_done;
	int comm_status;
	struct tft_error comm_err;
	atomic_bool cancel;          /* tft_job_close: the pass stops between rank files */
	pthread_cond_t comm_cond;
	pthread_mutex_t lock;        /* guards strs and the comm_* fields */
	struct tft_strtab *strs;     /* owned: the job's strings */
	atomic_int all_strings;      /* every rank's strings are in strs */
};

/* The job id of rank index ri's string `local`, read through rs (a session over its file). */
uint32_t tft_job_str_id(struct tft_job *j, uint32_t ri, struct tft_session *rs, uint32_t local);
/* Wait for the communication pass; its status (0, or err filled). */
int tft_job_wait_comm(struct tft_job *j, struct tft_error *err);
/* Whether the pass is done (no wait). */
bool tft_job_comm_ready(struct tft_job *j);
/* Intern a string of the job's own (0 on out-of-memory). */
uint32_t tft_job_intern(struct tft_job *j, const char *s);
/* A job string (borrowed until the job closes; "" for unknown ids). */
const char *tft_job_str(struct tft_job *j, uint32_t id, size_t *len);
uint32_t tft_job_string_count(struct tft_job *j);

#endif /* TFT_JOB_JOB_INT_H */
