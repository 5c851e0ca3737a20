/* SPDX-License-Identifier: MIT */
/*
 * The job a process belongs to, as session meta (job_rank, job_size,
 * job_id): from the launcher's environment at the start, or what the
 * program says later (tft_rt_set_job), which the drain applies at its next
 * cycle.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/drain_int.h"

/* The job's rank, size and id as meta (a process of a distributed job). */
int tft_rt_drain_set_job_meta(struct tft_writer *w, const struct tft_job *j)
{
	char num[24];

	if (j->rank < 0)
		return 0;
	snprintf(num, sizeof(num), "%d", j->rank);
	if (tft_writer_set_meta(w, "job_rank", num))
		return TFT_EIO;
	snprintf(num, sizeof(num), "%d", j->size);
	if (j->size >= 0 && tft_writer_set_meta(w, "job_size", num))
		return TFT_EIO;
	return tft_writer_set_meta(w, "job_id", j->id) ? TFT_EIO : 0;
}

/*
 * The job a program says it is in after its session began (tft_rt_set_job):
 * handed to the drain, which applies it at its next cycle. Try-locks only: a
 * fork child that inherits it held gets TFT_EAGAIN, never a hang.
 */
static pthread_mutex_t job_lock = PTHREAD_MUTEX_INITIALIZER;

static struct {
	int set, rank, size;
	char id[128];
} job_pending;

TFT_API int tft_rt_set_job(int rank, int size, const char *id)
{
	if (rank < 0)
		return TFT_EINVAL;
	if (!(tft_rt_state_load() & TFT_RT_STEPS))
		return TFT_EAGAIN;
	if (pthread_mutex_trylock(&job_lock) != 0)
		return TFT_EAGAIN;
	job_pending.rank = rank;
	job_pending.size = size > 0 ? size : -1;
	snprintf(job_pending.id, sizeof(job_pending.id), "%s", id ? id : "");
	job_pending.set = 1;
	pthread_mutex_unlock(&job_lock);
	return 0;
}

void tft_rt_drain_apply_job(struct tft_rt_session *s)
{
	struct tft_process *p;
	struct tft_job j;

	if (!job_pending.set || pthread_mutex_trylock(&job_lock) != 0)
		return;
	memset(&j, 0, sizeof(j));
	j.rank = job_pending.rank;
	j.size = job_pending.size;
	memcpy(j.id, job_pending.id, sizeof(j.id));
	job_pending.set = 0;
	pthread_mutex_unlock(&job_lock);
	if (!s->w || s->failed)
		return;
	if (!j.id[0]) { /* no id given: the launcher's, if any */
		struct tft_job env;
		tft_job_from_env(&env);
		memcpy(j.id, env.id, sizeof(j.id));
	}
	if ((p = tft_writer_process(s->w, s->process)) != NULL)
		p->rank = j.rank;
	if (tft_rt_drain_set_job_meta(s->w, &j))
		tft_rt_drain_fail(s, TFT_EIO, "writing the job's meta", NULL);
}
