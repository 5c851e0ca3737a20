/* SPDX-License-Identifier: MIT */
/*
 * Shared by `tftracer prof` (cmd_prof.c) and its tfprof> shell
 * (cmd_prof_shell.c): the session, the profile of the step asked for, and
 * running one view with options to its output.
 */
#ifndef TFT_CLI_CMD_PROF_H
#define TFT_CLI_CMD_PROF_H

#include <stdbool.h>

#include "analyze/prof.h"
#include "store/session.h"

enum { PROF_FMT_TEXT, PROF_FMT_JSON, PROF_FMT_CSV };

struct prof_cli {
	const char *path;          /* the session file (argv, borrowed) */
	struct tft_session *s;     /* owned */
	struct tft_prof *prof;     /* owned: the profile of prof_step */
	int64_t prof_step;
	int threads;
	int format;                /* PROF_FMT_* */
	bool footer;               /* text: the line about steps and what was left out */
};

/*
 * Make the view with opts and write it where opts->output says (stdout,
 * file, timeline, pprof, none), re-scanning the session when opts->step is
 * not the profile's. Returns an exit code; errors are printed (one line).
 */
int prof_cli_run(struct prof_cli *c, int view, const struct tft_prof_opts *opts);

/*
 * Parse tfprof options from argv[i..n) into o ("-name value", "--name value",
 * "--name=value"; -account_displayed_op_only takes an optional bool).
 * Non-options are returned through *positional (the count in *npos, at most
 * maxpos) unless positional is NULL (then they are errors). 0 or -1 with
 * err filled (its message says which option).
 */
int prof_cli_parse(int n, char **argv, struct tft_prof_opts *o, const char **positional, int maxpos, int *npos,
		   struct tft_error *err);

/* The tfprof> shell over c, options starting as opts. Returns the exit code. */
int prof_shell(struct prof_cli *c, struct tft_prof_opts *opts, bool interactive);

#endif /* TFT_CLI_CMD_PROF_H */
