/* SPDX-License-Identifier: MIT */
/*
 * `tftracer record`'s job directories (record_job.h). A rank's process
 * finds its file from TFT_JOB_DIR and its rank (the preload library, the
 * Python hook: runtime/job.h), so that ranks a launcher starts below one
 * `record` (mpirun, torchrun, torch.multiprocessing + init_process_group)
 * each write their own file too.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/record_job.h"
#include "runtime/job.h"

static int is_dir(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* mkdir -p; 0 or -errno. */
static int make_dirs(char *p)
{
	for (char *s = p + 1;; s++) {
		if (*s == '/' || !*s) {
			char c = *s;
			*s = 0;
			if (mkdir(p, 0777) != 0 && errno != EEXIST) {
				int e = errno;
				*s = c;
				return -e;
			}
			*s = c;
			if (!c)
				break;
		}
	}
	return is_dir(p) ? 0 : -ENOTDIR;
}

int tft_rec_job_prepare(struct tft_rec_job *j, const char *session, const char *cwd, char *path,
			size_t psize)
{
	struct tft_job env;
	size_t n;
	int rc;

	memset(j, 0, sizeof(*j));
	j->rank = tft_job_from_env(&env);
	j->size = env.size;
	if (!session)
		return 0;
	n = strlen(session);
	if (j->rank < 0 && !(n && session[n - 1] == '/') && !is_dir(session))
		return 0; /* a session file, as ever */
	j->on = 1;
	if ((size_t)snprintf(j->dir, sizeof(j->dir), "%s%s%s", session[0] == '/' ? "" : cwd,
			     session[0] == '/' ? "" : "/", session) >= sizeof(j->dir))
		return cli_fail(TFT_EXIT_BADINPUT, "record: the job directory's name is too long");
	for (n = strlen(j->dir); n > 1 && j->dir[n - 1] == '/'; n--)
		j->dir[n - 1] = 0;
	if ((rc = make_dirs(j->dir)) != 0)
		return cli_fail(TFT_EXIT_BADINPUT, "record: cannot make the job directory %s: %s", j->dir,
				strerror(-rc));
	if (j->rank >= 0) {
		if (tft_job_rank_path(path, psize, j->dir, j->rank))
			return cli_fail(TFT_EXIT_BADINPUT, "record: the job directory's name is too long");
		if (access(path, F_OK) == 0)
			return cli_fail(TFT_EXIT_BADINPUT,
					"record: %s exists (rank %d of an earlier run?); choose a new job "
					"directory",
					path, j->rank);
	} else {
		/* the launcher below record: the ranks it starts share an id */
		char host[64];
		struct timespec ts;

		if ((size_t)snprintf(path, psize, "%s/record-%ld.tft", j->dir, (long)getpid()) >= psize)
			return cli_fail(TFT_EXIT_BADINPUT, "record: the job directory's name is too long");
		if (!getenv("TFT_JOB_ID")) {
			if (gethostname(host, sizeof(host)) != 0)
				host[0] = 0;
			host[sizeof(host) - 1] = 0;
			clock_gettime(CLOCK_REALTIME, &ts);
			snprintf(j->id, sizeof(j->id), "record:%s:%ld:%lld", host, (long)getpid(),
				 (long long)ts.tv_sec);
		}
	}
	return 0;
}

int tft_rec_job_child_env(const struct tft_rec_job *j)
{
	if (!j->on)
		return 0;
	unsetenv("TFT_JOB_RANK_TAKEN"); /* (a record around this one's) */
	if (setenv("TFT_JOB_DIR", j->dir, 1))
		return -1;
	if (j->id[0] && setenv("TFT_JOB_ID", j->id, 1))
		return -1;
	return 0;
}

void tft_rec_job_children(struct tft_rec_job *j, const char *path)
{
	size_t n = strlen(path);

	if (j->on)
		return;
	if (n > 4 && strcmp(path + n - 4, ".tft") == 0)
		snprintf(j->ranks, sizeof(j->ranks), "%.*s", (int)(n - 4), path);
	else
		snprintf(j->ranks, sizeof(j->ranks), "%s.ranks", path);
}

int tft_rec_job_ranks(const struct tft_rec_job *j, const char **dir)
{
	const char *p = j->on ? j->dir : j->ranks;
	DIR *d;
	struct dirent *e;
	int n = 0;

	*dir = p;
	if (!p[0] || !(d = opendir(p)))
		return 0;
	while ((e = readdir(d)) != NULL) {
		size_t k = strlen(e->d_name);
		if (k > 9 && strncmp(e->d_name, "rank-", 5) == 0 && strcmp(e->d_name + k - 4, ".tft") == 0)
			n++;
	}
	closedir(d);
	return n;
}
