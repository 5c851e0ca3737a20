/* SPDX-License-Identifier: MIT */
/* tftracer: command table and dispatch. One subcommand per cmd_<name>.c. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <microhttpd.h>

#include "cli/cli.h"
#include "store/writer.h"

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{ "import", tft_cmd_import, "import traces (Chrome/Kineto/tf.timeline JSON, TF RunMetadata, XSpace, GraphDef, pickles) into a session" },
	{ "info", tft_cmd_info, "summarise a session: processes, tracks, counts, time span, peak memory" },
	{ "stats", tft_cmd_stats, "op statistics: count, total, self, mean, min, max, p50, p99" },
	{ "prof", tft_cmd_prof, "tfprof's views: scope, graph, op, code; params, FLOPs, time, memory per step" },
	{ "advise", tft_cmd_advise, "find what slows the steps, say what to change, with the evidence" },
	{ "export", tft_cmd_export, "export a session (Chrome trace JSON, tf.timeline, standalone HTML)" },
	{ "merge", tft_cmd_merge, "one session from a job directory (rank-<N>.tft files), clocks aligned" },
	{ "serve", tft_cmd_serve, "serve the web UI for a session or trace files (also: tftracer FILE)" },
	{ "record", tft_cmd_record, "run a program with the tracer inside it: tftracer record -- CMD" },
};

static void usage(FILE *fp)
{
	fprintf(fp, "usage: tftracer <command> [options]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(fp, "  %-8s %s\n", commands[i].name, commands[i].summary);
	fprintf(fp, "\n'tftracer <command> --help' describes each command.\n");
}

int cli_fail(int code, const char *fmt, ...)
{
	va_list ap;

	fputs("tftracer: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return code;
}

int cli_exit_code(int status)
{
	switch (status) {
	case TFT_OK: return TFT_EXIT_OK;
	case TFT_EFORMAT:
	case TFT_EVERSION:
	case TFT_EINVAL:
	case TFT_ENOTFOUND: return TFT_EXIT_BADINPUT;
	default: return TFT_EXIT_FAIL;
	}
}

int cli_fail_error(const struct tft_error *err)
{
	char buf[1024];

	tft_error_format(err, buf, sizeof(buf));
	return cli_fail(cli_exit_code(err->code), "%s", buf);
}

int cli_bad_option(const char *cmd, char **argv)
{
	/*
	 * A long option: the argument getopt consumed last. A short one: its
	 * letter (in a cluster such as -xz, getopt has not moved past the
	 * argument yet, so that would be the one before).
	 */
	const char *arg = optind > 0 && argv[optind - 1] ? argv[optind - 1] : "";
	char letter[3] = { '-', (char)optopt, 0 };

	if (optopt > 0 && optopt < 128 && strncmp(arg, "--", 2) != 0)
		arg = letter;
	return cli_fail(TFT_EXIT_BADINPUT, "%s: unknown option, or one missing its value: '%s' "
			"(see tftracer %s --help)", cmd, arg, cmd);
}

int cli_is_help(const char *arg)
{
	return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0;
}

/* ---- cleanup on a fatal signal ------------------------------------------------ */

/* A session file's SQLite side files, after the file itself (""). */
static const char *const session_sides[4] = { "", "-wal", "-shm", "-journal" };

/*
 * The file being written (and its SQLite side files) and a temporary
 * directory, removed if SIGINT, SIGTERM or SIGHUP ends the command. Set
 * before the file exists, cleared once it is renamed or removed; the
 * handler calls only unlink, rmdir, signal and raise.
 */
static char cleanup_paths[4][4400];
static char cleanup_dir[4096];
static volatile sig_atomic_t cleanup_npaths, cleanup_hasdir;

static void on_fatal_signal(int sig)
{
	int n = cleanup_npaths;

	for (int i = 0; i < n; i++)
		unlink(cleanup_paths[i]);
	if (cleanup_hasdir)
		rmdir(cleanup_dir);
	signal(sig, SIG_DFL);
	raise(sig);
}

void cli_cleanup_on_signal(const char *file, const char *dir)
{
	cleanup_npaths = 0;
	cleanup_hasdir = 0;
	if (!file)
		return;
	for (int i = 0; i < 4; i++)
		snprintf(cleanup_paths[i], sizeof(cleanup_paths[i]), "%s%s", file, session_sides[i]);
	if (dir)
		snprintf(cleanup_dir, sizeof(cleanup_dir), "%s", dir);
	cleanup_hasdir = dir != NULL;
	cleanup_npaths = 4;
}

static void install_signal_cleanup(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_fatal_signal;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
	/* past `ulimit -f` a write fails (EFBIG) and the command cleans up, instead of dying */
	signal(SIGXFSZ, SIG_IGN);
}

int cli_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!s || s[0] < '0' || s[0] > '9') /* no sign, no space: strtoull would take them */
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int cli_same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int cli_outfile_open(struct cli_outfile *o, const char *path, int want_stdio)
{
	struct stat st;

	memset(o, 0, sizeof(*o));
	if (strlen(path) >= sizeof(o->path))
		return -ENAMETOOLONG;
	snprintf(o->path, sizeof(o->path), "%s", path);
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return -EISDIR; /* (refused now: the rename would fail only after all the work) */
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		/* a device or a FIFO: renaming a file over it would replace it (/dev/null, as root) */
		if (!want_stdio)
			return -EINVAL;
		o->fp = fopen(path, "wb");
		if (!o->fp)
			return -errno;
		o->direct = 1;
		return 0;
	}
	snprintf(o->tmp, sizeof(o->tmp), "%s.tmp.%ld", path, (long)getpid());
	unlink(o->tmp);
	cli_cleanup_on_signal(o->tmp, NULL);
	if (want_stdio) {
		o->fp = fopen(o->tmp, "wb");
		if (!o->fp)
			return -errno;
	}
	return 0;
}

int cli_outfile_commit(struct cli_outfile *o)
{
	int rc = 0;

	if (o->fp) {
		if (fflush(o->fp) != 0 || ferror(o->fp))
			rc = -EIO;
		if (fclose(o->fp) != 0 && rc == 0)
			rc = -errno;
		o->fp = NULL;
	}
	if (o->direct)
		return rc;
	if (rc == 0 && rename(o->tmp, o->path) != 0)
		rc = -errno;
	if (rc)
		unlink(o->tmp);
	cli_cleanup_on_signal(NULL, NULL);
	return rc;
}

void cli_outfile_discard(struct cli_outfile *o)
{
	if (o->fp) {
		fclose(o->fp);
		o->fp = NULL;
	}
	if (o->direct)
		return;
	cli_remove_session_file(o->tmp); /* with the side files of a half-written session */
	cli_cleanup_on_signal(NULL, NULL);
}

void cli_remove_session_file(const char *path)
{
	tft_session_file_remove(path);
}

/*
 * `tftracer --version`: the version, then this build's features, one a line
 * (docs/cli.md). TLS is the libmicrohttpd's the binary runs with; the Python
 * module and the interceptors are what the build made (the Makefile's
 * TFT_BUILD_PYTHON, TFT_BUILD_INTERCEPTORS).
 */
#ifndef TFT_BUILD_PYTHON
#define TFT_BUILD_PYTHON ""
#endif
#ifndef TFT_BUILD_INTERCEPTORS
#define TFT_BUILD_INTERCEPTORS ""
#endif
static void print_version(void)
{
	const char *mhd = MHD_get_version();

	printf("tftracer %s\n", TFT_VERSION_STRING);
	if (MHD_is_feature_supported(MHD_FEATURE_TLS) == MHD_YES)
		printf("TLS:          yes (libmicrohttpd %s; serve --tls-cert/--tls-key)\n", mhd ? mhd : "?");
	else
		printf("TLS:          no (libmicrohttpd %s has no TLS support)\n", mhd ? mhd : "?");
	if (TFT_BUILD_PYTHON[0])
		printf("Python:       yes (module for CPython %s built with this binary)\n", TFT_BUILD_PYTHON);
	else
		printf("Python:       no (built without python3-dev)\n");
	if (TFT_BUILD_INTERCEPTORS[0])
		printf("interceptors: %s (libtftracer-preload.so)\n", TFT_BUILD_INTERCEPTORS);
	else
		printf("interceptors: none (this build has no libtftracer-preload.so)\n");
}

int main(int argc, char **argv)
{
	install_signal_cleanup();
	if (argc < 2 || cli_is_help(argv[1])) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? TFT_EXIT_BADINPUT : TFT_EXIT_OK;
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
		print_version();
		return TFT_EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(argv[1], commands[i].name) == 0)
			return commands[i].run(argc - 1, argv + 1);
	if (access(argv[1], F_OK) == 0) /* `tftracer FILE...`: serve it, as the seed did */
		return tft_cmd_serve(argc, argv);
	cli_fail(TFT_EXIT_BADINPUT, "unknown command '%s'", argv[1]);
	usage(stderr);
	return TFT_EXIT_BADINPUT;
}
