/* SPDX-License-Identifier: MIT */
/* tftracer: command table and dispatch. One subcommand per cmd_<name>.c. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{ "import", tft_cmd_import, "import trace files (Chrome, Kineto, tf.timeline JSON) into a session" },
	{ "info", tft_cmd_info, "summarise a session: processes, tracks, counts, time span" },
	{ "stats", tft_cmd_stats, "op statistics: count, total, self, mean, min, max, p50, p99" },
	{ "export", tft_cmd_export, "export a session (Chrome trace JSON)" },
	{ "serve", tft_cmd_serve, "serve the web UI for a session or trace files (also: tftracer FILE)" },
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

int cli_is_help(const char *arg)
{
	return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0;
}

int cli_outfile_open(struct cli_outfile *o, const char *path, int want_stdio)
{
	memset(o, 0, sizeof(*o));
	if (strlen(path) >= sizeof(o->path))
		return -ENAMETOOLONG;
	snprintf(o->path, sizeof(o->path), "%s", path);
	snprintf(o->tmp, sizeof(o->tmp), "%s.tmp.%ld", path, (long)getpid());
	unlink(o->tmp);
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
	if (rc == 0 && rename(o->tmp, o->path) != 0)
		rc = -errno;
	if (rc)
		unlink(o->tmp);
	return rc;
}

void cli_outfile_discard(struct cli_outfile *o)
{
	if (o->fp) {
		fclose(o->fp);
		o->fp = NULL;
	}
	unlink(o->tmp);
	/* SQLite side files of a half-written session */
	char side[4300];
	snprintf(side, sizeof(side), "%s-wal", o->tmp);
	unlink(side);
	snprintf(side, sizeof(side), "%s-shm", o->tmp);
	unlink(side);
	snprintf(side, sizeof(side), "%s-journal", o->tmp);
	unlink(side);
}

int main(int argc, char **argv)
{
	if (argc < 2 || cli_is_help(argv[1])) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? TFT_EXIT_BADINPUT : TFT_EXIT_OK;
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
		printf("tftracer %s\n", TFT_VERSION_STRING);
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
