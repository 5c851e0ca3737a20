/* SPDX-License-Identifier: MIT */
/*
 * `tftracer record`'s capture from below (record_intercept.c): its options
 * (--no-intercept, --intercept=LIST, --counters[=LIST]), the preload library
 * and the variables the program runs with, the counters checked (and their
 * refusals said) before it starts, and the session of a program that left
 * none (its run, status and resource use). cmd_record.c calls these.
 */
#ifndef TFT_CLI_RECORD_INTERCEPT_H
#define TFT_CLI_RECORD_INTERCEPT_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

struct tft_rec_icpt {
	int off;                     /* --no-intercept */
	char intercept[64];          /* --intercept list ("" = all) */
	char counters[256];          /* --counters list ("" = none) */
	char preload[PATH_MAX];      /* the library next to this binary ("" if missing) */
	char sanitizer[PATH_MAX];    /* an ASan build's runtime, loaded before the library ("") */
	int counters_said;           /* the refusals were said here */
	int64_t t0_ns;               /* CLOCK_MONOTONIC before the program started */
};

/* The long options, for record's getopt_long table (codes below). */
#define TFT_REC_ICPT_OPTIONS                                                  \
	{ "no-intercept", no_argument, NULL, TFT_REC_OPT_NO_INTERCEPT },      \
	{ "intercept", required_argument, NULL, TFT_REC_OPT_INTERCEPT },      \
	{ "counters", optional_argument, NULL, TFT_REC_OPT_COUNTERS }
enum { TFT_REC_OPT_NO_INTERCEPT = 0x1001, TFT_REC_OPT_INTERCEPT, TFT_REC_OPT_COUNTERS };

void tft_rec_icpt_init(struct tft_rec_icpt *o);
/* One of the options above: 0, or an exit code after a one-line message (bad value). */
int tft_rec_icpt_option(struct tft_rec_icpt *o, int code, const char *arg);
/* Before the program starts: find the library, check the counters (refusals said once). */
void tft_rec_icpt_prepare(struct tft_rec_icpt *o, int quiet);
/* In the child, before exec: the environment the program gets. 0, or -1 (no memory). */
int tft_rec_icpt_child_env(const struct tft_rec_icpt *o);
/*
 * After the program (pid, ended with exit code `code`): when no process of
 * it left the session file at `path`, write one with the run itself (its
 * command, time span, status and resource use). 1 written, 0 not needed, -1
 * could not (said unless quiet).
 */
int tft_rec_icpt_finish(const struct tft_rec_icpt *o, const char *path, char **cmd, pid_t pid,
			int code, int quiet);

#endif /* TFT_CLI_RECORD_INTERCEPT_H */
