/* SPDX-License-Identifier: MIT */
/*
 * Opening what a command reads: a session file, or a job directory of
 * per-rank session files (rank-<N>.tft, job/job.h) read as one session.
 */
#include <sys/stat.h>

#include "cli/cli.h"
#include "job/job.h"
#include "store/session.h"

int cli_open_session(const char *path, struct tft_session **out)
{
	struct tft_error err;
	struct stat st;

	*out = NULL;
	tft_error_clear(&err);
	if (stat(path, &st) != 0)
		return cli_fail(TFT_EXIT_BADINPUT, "%s: cannot open: no such file", path);
	if (S_ISDIR(st.st_mode)) {
		if (!tft_job_is_dir(path))
			return cli_fail(TFT_EXIT_BADINPUT,
					"%s: a directory without rank-<N>.tft files: not a job (a profile run? "
					"import it first: tftracer import DIR -o run.tft)",
					path);
		*out = tft_job_open_session(path, NULL, &err);
		/* a command reads the job whole: its communication matched too */
		if (*out && tft_job_wait(tft_job_of(*out), &err)) {
			tft_session_close(*out);
			*out = NULL;
		}
	} else {
		*out = tft_session_open(path, &err);
	}
	if (!*out) {
		tft_error_set_file(&err, path);
		cli_fail_error(&err);
		/* what does not open as a session is bad input, whatever the cause */
		return err.code == TFT_ENOMEM ? TFT_EXIT_FAIL : TFT_EXIT_BADINPUT;
	}
	return TFT_EXIT_OK;
}
