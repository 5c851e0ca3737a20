/* SPDX-License-Identifier: MIT */
/*
 * A process's place in a distributed job, as the launcher tells it in the
 * environment (docs/intercept.md, "MPI"; docs/cmd-record.md): its rank, the job's size and an
 * id the ranks of one run share. Read by the runtime (the session's process
 * rank and its meta job_rank, job_size, job_id), the preload library (the
 * rank's session file in a job directory) and `tftracer record` (a rank in
 * its environment makes -o a job directory).
 */
#ifndef TFT_RUNTIME_JOB_H
#define TFT_RUNTIME_JOB_H

#include <stddef.h>

struct tft_job {
	int rank;          /* -1: no rank in the environment */
	int size;          /* -1: unknown */
	char id[128];      /* "" when the launcher gives none */
	const char *from;  /* the variable the rank came from (static), NULL */
};

/*
 * The job from the environment. Rank: TFT_JOB_RANK (by hand, for a launcher
 * not known here; a Python process that learns its rank late, from
 * torch.distributed's init_process_group, says it with tft_rt_set_job),
 * OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK, RANK,
 * SLURM_PROCID, the first that is a number in [0, INT_MAX]. Size: TFT_JOB_SIZE,
 * OMPI_COMM_WORLD_SIZE, PMI_SIZE, WORLD_SIZE, SLURM_NTASKS. Id: TFT_JOB_ID,
 * OMPI_MCA_ess_base_jobid, SLURM_JOB_ID(.SLURM_STEP_ID), TORCHELASTIC_RUN_ID (not "none"),
 * MASTER_ADDR:MASTER_PORT, else "". Returns j->rank.
 */
int tft_job_from_env(struct tft_job *j);

/*
 * The session file of rank `rank` in the job directory `dir`:
 * "<dir>/rank-<rank>.tft" (a trailing slash of dir is not doubled). 0, or -1
 * when it does not fit in size bytes.
 */
int tft_job_rank_path(char *out, size_t size, const char *dir, int rank);

#endif /* TFT_RUNTIME_JOB_H */
