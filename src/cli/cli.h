/* SPDX-License-Identifier: MIT */
/*
 * Shared by the subcommands (src/cli/cmd_<name>.c): entry points, exit
 * codes and the few helpers that print. Only the CLI layer prints and exits.
 */
#ifndef TFT_CLI_CLI_H
#define TFT_CLI_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "core/status.h"

enum {
	TFT_EXIT_OK = 0,      /* success */
	TFT_EXIT_FAIL = 1,    /* the operation failed (I/O, internal) */
	TFT_EXIT_BADINPUT = 2 /* bad input file or bad usage */
};

/* Subcommands: argv[0] is the subcommand name. Return an exit code. */
int tft_cmd_import(int argc, char **argv);
int tft_cmd_info(int argc, char **argv);
int tft_cmd_stats(int argc, char **argv);
int tft_cmd_advise(int argc, char **argv);
int tft_cmd_export(int argc, char **argv);
int tft_cmd_serve(int argc, char **argv); /* also the bare form `tftracer FILE` */
int tft_cmd_record(int argc, char **argv);
int tft_cmd_prof(int argc, char **argv);
int tft_cmd_merge(int argc, char **argv);

struct tft_session;
/*
 * Open what a command reads: a session file or a job directory (rank-<N>.tft
 * files, seen as one session with the ranks' clocks aligned: job/job.h). On
 * failure print one line (the file at fault and why) and return the exit
 * code; TFT_EXIT_OK and *out otherwise (close it with tft_session_close).
 */
int cli_open_session(const char *path, struct tft_session **out);

/* "tftracer: <msg>" on stderr; returns `code` for `return cli_fail(...)`. */
int cli_fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Print err as one line on stderr and return the exit code its status maps to. */
int cli_fail_error(const struct tft_error *err);

/* Exit code for a tft_status: EFORMAT/EVERSION/EINVAL/ENOTFOUND -> 2, else 1. */
int cli_exit_code(int status);

/*
 * Output files are written to "<path>.tmp.<pid>" and renamed into place only
 * when complete, so a failure never leaves partial output behind.
 */
struct cli_outfile {
	char path[4096];
	char tmp[4200];
	FILE *fp; /* owned; NULL for outputs opened by another library (SQLite) */
	int direct; /* OUT is a device or a FIFO (/dev/null, a pipe): written in place, never renamed over */
};
/*
 * 0 or -errno. An existing OUT that is not a regular file (a device such as
 * /dev/null, a FIFO) is written in place when want_stdio, and refused with
 * -EINVAL otherwise (a session cannot be written to it); a directory is
 * refused with -EISDIR (before any work, not at the rename).
 */
int cli_outfile_open(struct cli_outfile *o, const char *path, int want_stdio);
/*
 * Remove `file` (and its SQLite side files) and `dir` (may be NULL) if a
 * SIGINT, SIGTERM or SIGHUP ends the command; (NULL, NULL) forgets them.
 * cli_outfile_open/commit/discard set and clear their temp file themselves.
 */
void cli_cleanup_on_signal(const char *file, const char *dir);
/* A decimal number in [min, max], digits only (no sign, no spaces, no overflow): 0, else -1. */
int cli_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);
/* a and b name the same existing file (links included). */
int cli_same_file(const char *a, const char *b);
int cli_outfile_commit(struct cli_outfile *o); /* close + rename; 0 or -errno */
void cli_outfile_discard(struct cli_outfile *o);
/* Remove a session file and its SQLite side files (-wal, -shm, -journal). */
void cli_remove_session_file(const char *path);

/*
 * After getopt_long (opterr = 0) returned '?': "tftracer: CMD: unknown
 * option, or one missing its value: 'ARG' (see tftracer CMD --help)", one
 * line; returns the usage exit code.
 */
int cli_bad_option(const char *cmd, char **argv);

/* True if `arg` is one of the help flags. */
int cli_is_help(const char *arg);

#endif /* TFT_CLI_CLI_H */
