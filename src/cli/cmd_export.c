/* SPDX-License-Identifier: MIT */
/*
 * tftracer export FILE -f FORMAT -o OUT [--gzip]
 * Streams a session to another format. Formats are rows of a table: adding
 * one (tf.timeline, pprof, HTML) is one exporter plus one row.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "cli/cli.h"
#include "codec/json_write.h"
#include "export/export_chrome.h"
#include "export/export_html.h"
#include "export/export_tftimeline.h"
#include "store/session.h"

/* Byte consumer the exporters write through (plain file or gzip stream). */
struct out_sink {
	tft_json_sink_fn fn;
	void *ctx;
};

struct gz_sink;

/* Options that shape a format's output. */
struct export_opts {
	bool tf_timeline;   /* chrome: TensorFlow timeline.py's layout */
	bool show_dataflow; /* tf-timeline: DataFlow flows */
	bool show_memory;   /* tf-timeline: tensor objects and memory counters */
	uint64_t max_events; /* html: events inlined at most (0 = default) */
};

struct export_format {
	const char *name;
	const char *summary;
	/* Write the session to the sink; 0 or a negative status with err filled. */
	int (*run)(struct tft_session *s, const struct out_sink *out, const struct export_opts *o,
		   uint64_t *events, struct tft_error *err);
};

static int run_chrome(struct tft_session *s, const struct out_sink *out,
		      const struct export_opts *o, uint64_t *events, struct tft_error *err)
{
	struct tft_json_writer w;
	struct tft_export_counts n = { 0 };
	int rc;

	if (tft_json_write_init_sink(&w, out->fn, out->ctx))
		return tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
	if (o->tf_timeline) {
		struct tft_tftimeline_opts to = { o->show_dataflow, o->show_memory };
		struct tft_tftimeline_counts tn;

		rc = tft_export_tftimeline(s, &w, &to, &tn, err);
		n.events = tn.events;
	} else {
		rc = tft_export_chrome(s, &w, &n, err);
	}
	if (rc == 0) {
		rc = tft_json_write_finish(&w);
		if (rc)
			tft_error_set(err, rc, -1, "cannot write the output: %s", tft_strerror(rc));
	}
	*events = n.events;
	tft_json_write_fini(&w);
	return rc;
}

static int run_html(struct tft_session *s, const struct out_sink *out,
		    const struct export_opts *o, uint64_t *events, struct tft_error *err)
{
	struct tft_json_writer w;
	struct tft_html_counts n = { 0 };
	int rc;

	if (tft_json_write_init_sink(&w, out->fn, out->ctx))
		return tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
	rc = tft_export_html_page(s, &w, o->max_events, &n, err);
	if (rc == 0) {
		rc = tft_json_write_finish(&w);
		if (rc)
			tft_error_set(err, rc, -1, "cannot write the output: %s", tft_strerror(rc));
	}
	*events = n.events;
	tft_json_write_fini(&w);
	return rc;
}

static const struct export_format formats[] = {
	{ "chrome", "Chrome trace event JSON (chrome://tracing, Perfetto UI)", run_chrome },
	{ "html", "one standalone HTML page: the web UI with the session inlined", run_html },
};

static const char usage_head[] =
	"usage: tftracer export FILE -f FORMAT -o OUT [--gzip] [--quiet]\n"
	"       tftracer export FILE -f chrome --tf-timeline [--show-dataflow] [--show-memory] -o OUT\n"
	"\n"
	"Write a session in another format, streaming (memory does not grow with\n"
	"the session). The output appears under OUT only when complete.\n"
	"\n"
	"  -f, --format FORMAT   output format (default chrome), one of:\n";
static const char usage_tail[] =
	"  --tf-timeline         (chrome) what TensorFlow's timeline.py writes for the\n"
	"                        same StepStats: Allocators/Compute/Tensors processes,\n"
	"                        first-fit lanes, args name/op/inputN; one per traced step\n"
	"                        (holds one step's nodes in memory)\n"
	"  --show-dataflow       (tf-timeline) DataFlow arrows producer -> consumer\n"
	"  --show-memory         (tf-timeline) tensor objects and allocator memory counters\n"
	"  --max-events N        (html) inline at most N events (default 2000000)\n"
	"  -o, --output OUT      output file, '-' for standard output\n"
	"  -z, --gzip            gzip the output (also when OUT ends in .gz)\n"
	"  -q, --quiet           no summary line on a terminal\n"
	"  -h, --help            this help\n"
	"\n"
	"Exit status: 0 ok, 1 failure, 2 bad input or usage.\n";

static void usage(FILE *fp)
{
	fputs(usage_head, fp);
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		fprintf(fp, "                          %-8s %s\n", formats[i].name, formats[i].summary);
	fputs(usage_tail, fp);
}

/* ---- sinks ---------------------------------------------------------------- */

/* The output: a stdio stream, optionally behind gzip; remembers a failed write. */
struct out_state {
	FILE *fp;           /* borrowed */
	struct gz_sink *gz; /* borrowed; NULL: plain */
	bool failed;
};

static int gz_write(void *ctx, const void *buf, size_t len);

static int out_write(void *ctx, const void *buf, size_t len)
{
	struct out_state *o = ctx;
	int rc;

	if (o->gz)
		rc = gz_write(o->gz, buf, len);
	else
		rc = fwrite(buf, 1, len, o->fp) == len ? 0 : TFT_EIO;
	if (rc)
		o->failed = true;
	return rc;
}

/* gzip (RFC 1952) through zlib's deflate, written to a FILE*. */
struct gz_sink {
	z_stream zs;
	FILE *fp;         /* borrowed */
	unsigned char out[1 << 16];
};

static int gz_pump(struct gz_sink *g, int flush)
{
	int zrc;

	do {
		g->zs.next_out = g->out;
		g->zs.avail_out = sizeof(g->out);
		zrc = deflate(&g->zs, flush);
		if (zrc == Z_STREAM_ERROR)
			return TFT_EIO;
		size_t have = sizeof(g->out) - g->zs.avail_out;
		if (have && fwrite(g->out, 1, have, g->fp) != have)
			return TFT_EIO;
	} while (g->zs.avail_out == 0 || (flush == Z_FINISH && zrc != Z_STREAM_END));
	return 0;
}

static int gz_write(void *ctx, const void *buf, size_t len)
{
	struct gz_sink *g = ctx;
	const unsigned char *p = buf;

	while (len) {
		uInt piece = len > (1u << 30) ? (1u << 30) : (uInt)len;
		g->zs.next_in = (Bytef *)(uintptr_t)p;
		g->zs.avail_in = piece;
		int rc = gz_pump(g, Z_NO_FLUSH);
		if (rc)
			return rc;
		p += piece;
		len -= piece;
	}
	return 0;
}

/* ---- command --------------------------------------------------------------- */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

#define GO_ON (-1) /* (not an exit status) */

/* What the command line asks for. */
struct export_args {
	const struct export_format *fmt;
	const char *outpath, *in;
	struct export_opts xo;
	bool gzip, quiet, to_stdout;
};

/* Options and their checks: GO_ON, or the exit status to end with. */
static int parse_options(struct export_args *a, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "gzip", no_argument, NULL, 'z' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "tf-timeline", no_argument, NULL, 'T' },
		{ "show-dataflow", no_argument, NULL, 'D' },
		{ "show-memory", no_argument, NULL, 'M' },
		{ "max-events", required_argument, NULL, 'E' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	optind = 1;
	opterr = 0; /* (cli_bad_option says it in one line) */
	while ((c = getopt_long(argc, argv, "f:o:zqh", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			a->fmt = NULL;
			for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
				if (strcmp(optarg, formats[i].name) == 0)
					a->fmt = &formats[i];
			if (!a->fmt)
				return cli_fail(TFT_EXIT_BADINPUT, "export: unknown format '%s' (try --help)", optarg);
			break;
		case 'o': a->outpath = optarg; break;
		case 'z': a->gzip = true; break;
		case 'q': a->quiet = true; break;
		case 'h': usage(stdout); return TFT_EXIT_OK;
		case 'T': a->xo.tf_timeline = true; break;
		case 'D': a->xo.show_dataflow = true; break;
		case 'M': a->xo.show_memory = true; break;
		case 'E': {
			uint64_t v;
			if (cli_parse_u64(optarg, 1, UINT64_MAX, &v))
				return cli_fail(TFT_EXIT_BADINPUT, "export: --max-events needs a positive number");
			a->xo.max_events = v;
			break;
		}
		default: return cli_bad_option("export", argv);
		}
	}
	if (optind != argc - 1 || !a->outpath) {
		if (optind == argc - 1)
			cli_fail(TFT_EXIT_BADINPUT, "export: missing -o OUT");
		usage(stderr);
		return TFT_EXIT_BADINPUT;
	}
	if (!a->outpath[0])
		return cli_fail(TFT_EXIT_BADINPUT, "export: -o needs a file name, or - for stdout");
	if (a->xo.max_events && strcmp(a->fmt->name, "html") != 0)
		return cli_fail(TFT_EXIT_BADINPUT, "export: --max-events goes with -f html");
	if (a->xo.tf_timeline && strcmp(a->fmt->name, "chrome") != 0)
		return cli_fail(TFT_EXIT_BADINPUT, "export: --tf-timeline needs -f chrome");
	if ((a->xo.show_dataflow || a->xo.show_memory) && !a->xo.tf_timeline)
		return cli_fail(TFT_EXIT_BADINPUT,
				"export: --show-dataflow and --show-memory need --tf-timeline");
	a->in = argv[optind];
	a->to_stdout = strcmp(a->outpath, "-") == 0;
	if (!a->to_stdout && ends_with(a->outpath, ".gz"))
		a->gzip = true;
	if (!a->to_stdout && cli_same_file(a->in, a->outpath))
		return cli_fail(TFT_EXIT_BADINPUT, "%s: -o names the input %s, which would be overwritten: "
				"choose another output file",
				a->outpath, a->in);
	return GO_ON;
}

/* The output: stdout, or a temporary file beside OUT (committed at the end); GO_ON or the exit status. */
static int open_output(const struct export_args *a, struct cli_outfile *of, FILE **fp)
{
	int rc;

	if (a->to_stdout) {
		*fp = stdout;
		return GO_ON;
	}
	rc = cli_outfile_open(of, a->outpath, 1);
	if (rc == -EISDIR)
		return cli_fail(TFT_EXIT_BADINPUT, "%s: a directory: name the file to write (-o DIR/out.json)",
				a->outpath);
	if (rc)
		return cli_fail(TFT_EXIT_FAIL, "%s: cannot create: %s", a->outpath, strerror(-rc));
	*fp = of->fp;
	return GO_ON;
}

/* Gzip on the way out: windowBits 15 + 16, a gzip header and trailer around the deflate stream, at
 * level 1 (Z_BEST_SPEED: BENCHMARKS.md, "Analysis, export and capture: design measurements"). NULL if
 * it cannot be set up. */
static struct gz_sink *gzip_open(FILE *fp)
{
	struct gz_sink *gz = calloc(1, sizeof(*gz));

	if (!gz || deflateInit2(&gz->zs, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		free(gz);
		return NULL;
	}
	gz->fp = fp;
	return gz;
}

/* The output written: flush stdout, or commit the file (and say its size on a terminal). */
static int finish_output(struct export_args *a, struct cli_outfile *of, uint64_t events, double t0)
{
	if (a->to_stdout) {
		if (fflush(stdout) != 0 || ferror(stdout))
			return cli_fail(TFT_EXIT_FAIL, "export: cannot write to standard output");
		return TFT_EXIT_OK;
	}
	int crc = cli_outfile_commit(of);
	a->to_stdout = true; /* nothing left to discard */
	if (crc)
		return cli_fail(TFT_EXIT_FAIL, "%s: cannot write: %s", a->outpath, strerror(-crc));
	if (!a->quiet && isatty(STDERR_FILENO)) {
		struct stat st;
		double dt = now_s() - t0;
		if (stat(a->outpath, &st) == 0)
			fprintf(stderr, "tftracer: %s: %llu events, %.1f MB in %.2f s (%.0f MB/s)\n", a->outpath,
				(unsigned long long)events, (double)st.st_size / 1e6, dt,
				dt > 0 ? (double)st.st_size / 1e6 / dt : 0.0);
	}
	return TFT_EXIT_OK;
}

int tft_cmd_export(int argc, char **argv)
{
	struct export_args a = { .fmt = &formats[0] };
	struct tft_session *s = NULL;
	struct gz_sink *gz = NULL;
	struct cli_outfile of;
	struct out_sink sink;
	struct out_state ost = { 0 };
	struct tft_error err;
	uint64_t events = 0;
	double t0;
	int rc;

	if ((rc = parse_options(&a, argc, argv)) != GO_ON)
		return rc;
	rc = cli_open_session(a.in, &s);
	if (rc)
		return rc;
	if ((rc = open_output(&a, &of, &ost.fp)) != GO_ON) {
		tft_session_close(s);
		return rc;
	}
	sink = (struct out_sink){ out_write, &ost };
	if (a.gzip) {
		if (!(gz = gzip_open(ost.fp))) {
			rc = cli_fail(TFT_EXIT_FAIL, "export: cannot set up gzip compression");
			goto out;
		}
		ost.gz = gz;
	}

	tft_error_clear(&err);
	t0 = now_s();
	rc = a.fmt->run(s, &sink, &a.xo, &events, &err);
	if (rc == 0 && gz && gz_pump(gz, Z_FINISH) != 0) {
		ost.failed = true;
		rc = tft_error_set(&err, TFT_EIO, -1, "cannot write the output");
	}
	if (rc) {
		/* Output errors name the output; read errors the session. */
		tft_error_set_file(&err, ost.failed ? (a.to_stdout ? "(standard output)" : a.outpath) : a.in);
		rc = cli_fail_error(&err);
		goto out;
	}
	rc = finish_output(&a, &of, events, t0);
out:
	if (gz) {
		deflateEnd(&gz->zs);
		free(gz);
	}
	if (!a.to_stdout)
		cli_outfile_discard(&of);
	tft_session_close(s);
	return rc;
}
