/* SPDX-License-Identifier: MIT */
/*
 * A process's place in a distributed job, from the launcher's environment
 * (runtime/job.h).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/job.h"

/* The first of keys whose value is a whole number in [0, INT_MAX], or -1. */
static int env_int(const char *const *keys, size_t n, const char **from)
{
	for (size_t i = 0; i < n; i++) {
		const char *v = getenv(keys[i]);
		char *end;
		long r;

		if (!v || !*v)
			continue;
		errno = 0;
		r = strtol(v, &end, 10);
		if (!errno && !*end && r >= 0 && r <= INT_MAX) {
			if (from)
				*from = keys[i];
			return (int)r;
		}
	}
	return -1;
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

int tft_job_from_env(struct tft_job *j)
{
	static const char *const rank_keys[] = { "TFT_JOB_RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK",
						 "PMIX_RANK", "RANK", "SLURM_PROCID" };
	static const char *const size_keys[] = { "TFT_JOB_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE",
						 "WORLD_SIZE", "SLURM_NTASKS" };
	const char *v, *w;

	memset(j, 0, sizeof(*j));
	j->rank = env_int(rank_keys, N(rank_keys), &j->from);
	j->size = env_int(size_keys, N(size_keys), NULL);
	if ((v = getenv("TFT_JOB_ID")) && *v)
		snprintf(j->id, sizeof(j->id), "%s", v);
	else if ((v = getenv("OMPI_MCA_ess_base_jobid")) && *v)
		snprintf(j->id, sizeof(j->id), "ompi:%s", v);
	else if ((v = getenv("SLURM_JOB_ID")) && *v) {
		w = getenv("SLURM_STEP_ID");
		snprintf(j->id, sizeof(j->id), "slurm:%s%s%s", v, w && *w ? "." : "", w && *w ? w : "");
	}
	else if ((v = getenv("TORCHELASTIC_RUN_ID")) && *v && strcmp(v, "none") != 0)
		snprintf(j->id, sizeof(j->id), "torchelastic:%s", v);
	else if ((v = getenv("MASTER_ADDR")) && *v && (w = getenv("MASTER_PORT")) && *w)
		snprintf(j->id, sizeof(j->id), "%s:%s", v, w);
	return j->rank;
}

int tft_job_rank_path(char *out, size_t size, const char *dir, int rank)
{
	size_t n = strlen(dir);
	int k;

	while (n > 1 && dir[n - 1] == '/')
		n--;
	k = snprintf(out, size, "%.*s/rank-%d.tft", (int)n, dir, rank);
	return k < 0 || (size_t)k >= size ? -1 : 0;
}
