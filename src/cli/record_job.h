/* SPDX-License-Identifier: MIT */
/*
 * `tftracer record`'s job directories (record_job.c, docs/cmd-record.md,
 * "Distributed jobs"): when record runs as a rank of a job (its launcher put
 * a rank in the environment) or -o names a directory, -o is the job's
 * directory and each rank writes rank-<N>.tft into it.
 */
#ifndef TFT_CLI_RECORD_JOB_H
#define TFT_CLI_RECORD_JOB_H

#include <limits.h>
#include <stddef.h>

struct tft_rec_job {
	int on;                /* a job directory */
	int rank;              /* this command's rank (its environment), -1: a launcher's parent */
	int size;              /* the job's size, -1 unknown */
	char dir[PATH_MAX];    /* absolute, without a trailing slash */
	char id[160];          /* the job id given to the ranks below ("" : the launcher's) */
	char ranks[PATH_MAX];  /* no job directory: where Python children that become ranks write
				* (the session file's path without .tft, _distributed.job_dir) */
};

/*
 * Decide from -o (session, may be NULL) and the environment; in a job, make
 * the directory (and its parents) when absent and choose this command's
 * session path: <dir>/rank-<N>.tft for a rank, else <dir>/record-<pid>.tft
 * (the launcher's own process, when it records). path is left alone when
 * there is no job. 0, or an exit code after a one-line message.
 */
int tft_rec_job_prepare(struct tft_rec_job *j, const char *session, const char *cwd, char *path,
			size_t psize);
/* In the child: TFT_JOB_DIR (and TFT_JOB_ID for ranks started below). 0 or -1. */
int tft_rec_job_child_env(const struct tft_rec_job *j);
/* Rank files in the job directory (or the children's ranks directory) now; its path. */
int tft_rec_job_ranks(const struct tft_rec_job *j, const char **dir);
/* No job directory: note where children ranks would write, from the session path. */
void tft_rec_job_children(struct tft_rec_job *j, const char *path);

#endif /* TFT_CLI_RECORD_JOB_H */
