/* SPDX-License-Identifier: MIT */
/*
 * tftracer import INPUT... -o OUT.tft
 * Imports one or more trace files into one new session file. The session is
 * written under a temporary name and renamed into place only on success.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "collect/ingest.h"
#include "store/writer.h"

static const char usage_text[] =
	"usage: tftracer import INPUT... -o OUT.tft [--quiet] [--mem-budget MB] [--level N]\n"
	"\n"
	"Import trace files into one session file. Formats are detected from the\n"
	"content; gzip-compressed inputs are read transparently:\n"
	"  Chrome trace JSON (array or object form), PyTorch/Kineto traces,\n"
	"  TensorFlow tf.timeline JSON, TF RunMetadata/StepStats (binary or text),\n"
	"  TF2/JAX XSpace (.xplane.pb, or a plugins/profile/<run>/ directory),\n"
	"  GraphDef/CostGraphDef, tftracer/tfvis saved pickles (never executed).\n"
	"\n"
	"  -o, --output FILE     session file to create (replaced if it exists)\n"
	"  -q, --quiet           no progress display\n"
	"      --mem-budget MB   memory for sorting events before spilling (default 96)\n"
	"      --level N         zstd level of the session's chunks (default 1: fastest\n"
	"                        import; 3 makes files ~5% smaller, ~2x slower to compress)\n"
	"  -h, --help            this help\n"
	"\n"
	"Exit status: 0 ok, 1 failure, 2 bad input or usage.\n";

struct progress {
	int enabled;
	const char *file;
	double t0;
	uint64_t last_events;
	int printed;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void show_progress(void *ctx, uint64_t bytes_in, uint64_t bytes_total, uint64_t events)
{
	struct progress *p = ctx;
	double dt = now_s() - p->t0;

	if (!p->enabled || dt < 0.5)
		return;
	if (bytes_total)
		fprintf(stderr, "\r%s: %.1f / %.1f MB (%.0f%%), %llu events, %.0f MB/s   ", p->file,
			(double)bytes_in / 1e6, (double)bytes_total / 1e6,
			100.0 * (double)bytes_in / (double)bytes_total, (unsigned long long)events,
			(double)bytes_in / 1e6 / dt);
	else
		fprintf(stderr, "\r%s: %.1f MB, %llu events, %.0f MB/s   ", p->file,
			(double)bytes_in / 1e6, (unsigned long long)events, (double)bytes_in / 1e6 / dt);
	p->printed = 1;
}

/* The session out could not be written (err: the writer's account). */
static int fail_store(const char *out, const struct tft_error *err)
{
	return cli_fail(cli_exit_code(err->code), "%s: cannot write the session: %s%s", out, err->msg,
			err->code == TFT_EIO ? "; check the free space on its disk and the file size limit"
					       " (ulimit -f)" : "");
}

int tft_cmd_import(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "mem-budget", required_argument, NULL, 'm' },
		{ "level", required_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *out = NULL;
	int quiet = 0, c, rc;
	size_t budget_mb = 0;
	struct tft_error err;
	struct tft_writer_opts wopts = {0};
	struct cli_outfile of;
	struct tft_writer *w;

	optind = 1;
	opterr = 0; /* (cli_bad_option says it in one line) */
	while ((c = getopt_long(argc, argv, "o:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'q': quiet = 1; break;
		case 'm': {
			uint64_t v;
			if (cli_parse_u64(optarg, 1, 65536, &v))
				return cli_fail(TFT_EXIT_BADINPUT, "import: --mem-budget expects megabytes (1..65536)");
			budget_mb = v;
			break;
		}
		case 'l': {
			uint64_t v;
			if (cli_parse_u64(optarg, 1, 19, &v))
				return cli_fail(TFT_EXIT_BADINPUT, "import: --level expects a zstd level (1..19)");
			wopts.zstd_level = (int)v;
			break;
		}
		case 'h': fputs(usage_text, stdout); return TFT_EXIT_OK;
		default: return cli_bad_option("import", argv);
		}
	}
	if (!out || optind >= argc) {
		if (!out && optind < argc)
			cli_fail(TFT_EXIT_BADINPUT, "import: missing -o OUT.tft");
		fputs(usage_text, stderr);
		return TFT_EXIT_BADINPUT;
	}
	if (!out[0] || strcmp(out, "-") == 0) /* a session is a database file: not stdout */
		return cli_fail(TFT_EXIT_BADINPUT, "import: -o needs a file name (a session cannot go to stdout)");
	for (int i = optind; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) != 0)
			return cli_fail(TFT_EXIT_BADINPUT, "%s: cannot open: %s", argv[i], strerror(errno));
		if (cli_same_file(argv[i], out))
			return cli_fail(TFT_EXIT_BADINPUT, "%s: -o names the input %s, which would be overwritten: "
				"choose another output file",
					out, argv[i]);
	}
	rc = cli_outfile_open(&of, out, 0);
	if (rc == -EINVAL || rc == -EISDIR)
		return cli_fail(TFT_EXIT_BADINPUT, "%s: %s: name the session file to create (-o %s)", out,
				rc == -EISDIR ? "a directory" : "not a regular file",
				rc == -EISDIR ? "DIR/run.tft" : "run.tft");
	if (rc != 0)
		return cli_fail(TFT_EXIT_FAIL, "%s: output path too long", out);

	tft_error_clear(&err);
	if (!wopts.zstd_level)
		wopts.zstd_level = TFT_IMPORT_ZSTD_LEVEL;
	wopts.threads = tft_writer_default_threads();
	wopts.bulk = 1; /* a temporary name, renamed only on success */
	w = tft_writer_open(of.tmp, &wopts, &err);
	if (!w) {
		err.file[0] = '\0'; /* (the writer named the temporary file: the user named this one) */
		tft_error_set_file(&err, out);
		cli_outfile_discard(&of);
		return cli_fail_error(&err);
	}

	struct progress prog = { .enabled = !quiet && isatty(STDERR_FILENO) };
	struct tft_ingest_opts opts = {
		.mem_budget = budget_mb << 20,
		.progress = show_progress,
		.progress_ctx = &prog,
		.threads = wopts.threads, /* the same knob: TFT_STORE_THREADS, else the CPUs */
	};
	tft_ingest_order((const char **)(argv + optind), argc - optind); /* (RunMetadata steps: by time) */
	for (int i = optind; i < argc; i++) {
		long long errs0 = (long long)tft_writer_count(w, TFT_COUNT_XSPACE_ERRORS);
		long long warns0 = (long long)tft_writer_count(w, TFT_COUNT_XSPACE_WARNINGS);

		prog.file = argv[i];
		prog.t0 = now_s();
		rc = tft_ingest_file(w, argv[i], &opts, &err);
		if (prog.printed) {
			fputs("\r\033[K", stderr);
			prog.printed = 0;
		}
		if (rc != 0) {
			struct tft_error werr;

			tft_error_clear(&werr);
			/* The session could not be written: say so, not where the input was. */
			if (tft_writer_failure(w, &werr)) {
				tft_writer_abort(w);
				cli_outfile_discard(&of);
				return fail_store(out, &werr);
			}
			tft_error_set_file(&err, argv[i]);
			tft_writer_abort(w);
			cli_outfile_discard(&of);
			return cli_fail_error(&err);
		}
		if (!quiet) {
			long long e = (long long)tft_writer_count(w, TFT_COUNT_XSPACE_ERRORS) -
				      errs0;
			long long wn = (long long)tft_writer_count(w, TFT_COUNT_XSPACE_WARNINGS) -
				       warns0;

			if (e || wn)
				fprintf(stderr, "tftracer: %s: the profiler reported %lld error%s and %lld "
					"warning%s about its trace (`tftracer info %s` lists them)\n",
					argv[i], e, e == 1 ? "" : "s", wn, wn == 1 ? "" : "s", out);
		}
	}
	rc = tft_writer_close(w, &err);
	if (rc != 0) {
		cli_outfile_discard(&of);
		return fail_store(out, &err);
	}
	/* The writer checkpointed and closed the database: only the main file remains. */
	if (cli_outfile_commit(&of) != 0) {
		cli_outfile_discard(&of);
		return cli_fail(TFT_EXIT_FAIL, "%s: cannot move the session into place", out);
	}
	return TFT_EXIT_OK;
}
