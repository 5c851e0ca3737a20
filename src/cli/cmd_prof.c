/* SPDX-License-Identifier: MIT */
/*
 * tftracer prof SESSION [scope|graph|op|code] [tfprof options] [--json|--csv]
 * TensorFlow's tfprof over a session (docs/cmd-prof.md): parses options and
 * writes; analyze/prof*.c computes, export/export_prof*.c formats. Without
 * a view the tfprof> shell runs (cmd_prof_shell.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/cmd_prof.h"
#include "codec/json_write.h"
#include "export/export_pprof.h"
#include "export/export_prof.h"
#include "export/export_prof_timeline.h"

static const char usage_text[] =
	"usage: tftracer prof SESSION [scope|graph|op|code] [options] [--json|--csv]\n"
	"       tftracer prof SESSION              (the interactive tfprof> shell)\n"
	"\n"
	"TensorFlow's tfprof over any session: the graph nodes (TF nodes, PyTorch ops in\n"
	"their module scope, zones), their time on the host (cpu_micros) and on\n"
	"accelerators (accelerator_micros: the kernels each op launched), memory,\n"
	"parameters and float operations, per step (-step N) or the average over the\n"
	"traced steps (-step -1). Views: scope (name scopes, nn.Module tree), graph\n"
	"(inputs), op (per op type), code (Python stacks). docs/cmd-prof.md has the details.\n"
	"\n"
	"tfprof's options, with one dash or two (-select x or --select=x):\n"
	"  -max_depth N              depth shown (10)\n"
	"  -min_bytes N  -min_peak_bytes N  -min_residual_bytes N  -min_output_bytes N\n"
	"  -min_micros N  -min_accelerator_micros N  -min_cpu_micros N\n"
	"  -min_params N  -min_float_ops N  -min_occurrence N\n"
	"                            show only nodes with at least this much (0)\n"
	"  -step N                   one traced step; -1: the average over them (-1)\n"
	"  -order_by KEY             name depth bytes peak_bytes residual_bytes output_bytes\n"
	"                            micros accelerator_micros cpu_micros params float_ops occurrence (name)\n"
	"  -account_type_regexes R   count only nodes with an op type matching (.*)\n"
	"  -start_name_regexes R     show from the nodes matching (.*)\n"
	"  -trim_name_regexes R      do not descend below matching nodes ()\n"
	"  -show_name_regexes R      show matching nodes (.*)\n"
	"  -hide_name_regexes R      hide matching nodes ()\n"
	"                            R: comma-separated POSIX extended regular expressions,\n"
	"                            each matched against the whole name\n"
	"  -account_displayed_op_only [true|false]   totals of the shown nodes only (false)\n"
	"  -select LIST              bytes peak_bytes residual_bytes output_bytes micros\n"
	"                            accelerator_micros cpu_micros params float_ops occurrence\n"
	"                            tensor_value device op_types input_shapes (micros)\n"
	"  -output OUT               stdout, none, file:outfile=F, timeline:outfile=F (a Chrome\n"
	"                            trace of the shown nodes), pprof:outfile=F (gzipped\n"
	"                            profile.proto for `go tool pprof`) (stdout)\n"
	"tftracer's:\n"
	"      --json                {\"view\", \"step\", \"root\": NODE} (docs/cmd-prof.md)\n"
	"      --csv                 one line per shown node\n"
	"      --roofline            instead of a view: per op type and kernel, FLOP/s and bytes/s\n"
	"                            achieved against the device's peak (with --json, --csv too)\n"
	"      --threads N           scan threads (0: one per CPU, at most 8)\n"
	"  -h, --help                this help\n"
	"\n"
	"Exit status: 0 ok, 1 failure, 2 bad input or usage.\n";

static bool is_bool(const char *s)
{
	static const char *const b[] = { "true", "t", "yes", "y", "1", "false", "f", "no", "n", "0" };

	for (size_t i = 0; i < sizeof(b) / sizeof(b[0]); i++)
		if (strcasecmp(s, b[i]) == 0)
			return true;
	return false;
}

int prof_cli_parse(int n, char **argv, struct tft_prof_opts *o, const char **positional, int maxpos, int *npos,
		   struct tft_error *err)
{
	if (npos)
		*npos = 0;
	for (int i = 0; i < n; i++) {
		const char *a = argv[i];
		char name[128];
		const char *eq, *value = NULL;
		int takes;

		if (a[0] != '-' || !a[1]) {
			if (!positional || *npos >= maxpos) {
				tft_error_set(err, TFT_EINVAL, -1, "unexpected argument '%s'", a);
				return -1;
			}
			positional[(*npos)++] = a;
			continue;
		}
		eq = strchr(a, '=');
		snprintf(name, sizeof(name), "%.*s", (int)(eq ? (size_t)(eq - a) : strlen(a)), a);
		takes = tft_prof_opt_takes_value(name);
		if (takes < 0) {
			tft_error_set(err, TFT_EINVAL, -1, "unknown option '%s'", name);
			return -1;
		}
		if (eq) {
			value = eq + 1;
		} else if (takes) {
			if (i + 1 >= n) {
				tft_error_set(err, TFT_EINVAL, -1, "%s needs a value", name);
				return -1;
			}
			value = argv[++i];
		} else if (i + 1 < n && is_bool(argv[i + 1])) {
			value = argv[++i]; /* -account_displayed_op_only true (tfprof also takes it alone) */
		}
		if (tft_prof_opts_set(o, name, value, err))
			return -1;
	}
	return 0;
}

/* ---- running a view ------------------------------------------------------------------------------ */

static int ensure_profile(struct prof_cli *c, int64_t step)
{
	struct tft_error err;

	if (c->prof && c->prof_step == step)
		return 0;
	tft_prof_close(c->prof);
	c->prof = NULL;
	tft_error_clear(&err);
	c->prof = tft_prof_open(c->s, step, c->threads, &err);
	if (!c->prof) {
		tft_error_set_file(&err, c->path);
		return cli_fail_error(&err);
	}
	c->prof_step = step;
	return 0;
}

static void footer(struct prof_cli *c, FILE *fp)
{
	struct tft_prof_info in;

	tft_prof_get_info(c->prof, &in);
	fputc('\n', fp);
	if (!in.traced_steps)
		fprintf(fp, "%llu executions (no traced steps: the whole session is one step)",
			(unsigned long long)in.executions);
	else if (in.steps_hold_nothing)
		fprintf(fp, "%llu executions (the %u traced step%s held none of them: the whole session is one step)",
			(unsigned long long)in.executions, in.traced_steps, in.traced_steps == 1 ? "" : "s");
	else if (in.step < 0)
		fprintf(fp, "%llu executions in %u traced step%s, values per step (their average)",
			(unsigned long long)in.executions, in.nsteps, in.nsteps == 1 ? "" : "s");
	else
		fprintf(fp, "%llu executions in step %lld", (unsigned long long)in.executions, (long long)in.step);
	if (in.outside_steps)
		fprintf(fp, "; %llu outside %s", (unsigned long long)in.outside_steps,
			in.step < 0 ? "the traced steps" : "that step");
	if (in.derived_tracks)
		fprintf(fp, "; %u derived track%s not counted (%s other tracks' work)", in.derived_tracks,
			in.derived_tracks == 1 ? "" : "s", in.derived_tracks == 1 ? "it repeats" : "they repeat");
	fputc('\n', fp);
}

static int write_format(struct prof_cli *c, const struct tft_prof_result *r, FILE *fp)
{
	struct tft_json_writer w;
	int rc;

	if (c->format == PROF_FMT_JSON) {
		if (tft_json_write_init_file(&w, fp))
			return -ENOMEM;
		tft_export_prof_json(r, &w);
		tft_json_write_raw_char(&w, '\n');
		rc = tft_json_write_finish(&w);
		tft_json_write_fini(&w);
		return rc ? -EIO : 0;
	}
	if (c->format == PROF_FMT_CSV)
		return tft_export_prof_csv(r, fp);
	return tft_export_prof_text(r, fp);
}

static int to_file(struct prof_cli *c, const struct tft_prof_result *r, const char *path, int kind)
{
	struct cli_outfile of;
	struct tft_error err;
	int rc;
	uint64_t events = 0;

	rc = cli_outfile_open(&of, path, 1);
	if (rc)
		return cli_fail(TFT_EXIT_FAIL, "%s: cannot write: %s", path, strerror(-rc));
	tft_error_clear(&err);
	if (kind == TFT_PROF_OUT_PPROF) {
		rc = tft_export_pprof(r, of.fp, &err);
	} else if (kind == TFT_PROF_OUT_TIMELINE) {
		struct tft_json_writer w;
		if (tft_json_write_init_file(&w, of.fp)) {
			rc = TFT_ENOMEM;
		} else {
			rc = tft_export_prof_timeline(r, &w, &events, &err);
			if (!rc)
				rc = tft_json_write_finish(&w);
			tft_json_write_fini(&w);
		}
	} else {
		rc = write_format(c, r, of.fp);
		if (rc)
			tft_error_set(&err, TFT_EIO, -1, "cannot write");
	}
	if (rc) {
		cli_outfile_discard(&of);
		if (!err.code)
			tft_error_set(&err, rc < 0 ? rc : TFT_EIO, -1, "cannot write the output");
		tft_error_set_file(&err, path);
		return cli_fail_error(&err);
	}
	if ((rc = cli_outfile_commit(&of)))
		return cli_fail(TFT_EXIT_FAIL, "%s: cannot write: %s", path, strerror(-rc));
	if (kind == TFT_PROF_OUT_TIMELINE)
		printf("generating trace file.\n\n******************************************************\n"
		       "Timeline file is written to %s.\n"
		       "Open a Chrome browser, enter URL chrome://tracing and load the timeline file.\n"
		       "******************************************************\n", path);
	else if (kind == TFT_PROF_OUT_PPROF)
		printf("\nRun go tool pprof -top %s (or -png --nodecount=100 --sample_index=1 %s)\n", path, path);
	(void)events;
	return 0;
}

int prof_cli_run(struct prof_cli *c, int view, const struct tft_prof_opts *opts)
{
	struct tft_prof_result *r = NULL;
	struct tft_error err;
	int rc;

	if ((rc = ensure_profile(c, opts->step)))
		return rc;
	tft_error_clear(&err);
	if (tft_prof_view(c->prof, view, opts, &r, &err)) {
		tft_error_set_file(&err, c->path);
		return cli_fail_error(&err);
	}
	switch (opts->output) {
	case TFT_PROF_OUT_NONE:
		rc = 0;
		break;
	case TFT_PROF_OUT_STDOUT:
		rc = write_format(c, r, stdout);
		if (!rc && c->format == PROF_FMT_TEXT && c->footer)
			footer(c, stdout);
		if (rc || fflush(stdout) != 0 || ferror(stdout))
			rc = cli_fail(TFT_EXIT_FAIL, "prof: cannot write the output");
		break;
	default:
		rc = to_file(c, r, opts->outfile, opts->output);
		break;
	}
	tft_prof_result_free(r);
	return rc;
}

static int roofline(struct prof_cli *c, const struct tft_prof_opts *opts)
{
	struct tft_prof_roofline_row *rows = NULL;
	struct tft_prof_info in;
	struct tft_json_writer w;
	uint32_t n = 0;
	int rc;

	if ((rc = ensure_profile(c, opts->step)))
		return rc;
	if (tft_prof_roofline(c->prof, &rows, &n))
		return cli_fail(TFT_EXIT_FAIL, "out of memory");
	tft_prof_get_info(c->prof, &in);
	if (c->format == PROF_FMT_JSON) {
		rc = tft_json_write_init_file(&w, stdout);
		if (!rc) {
			tft_export_prof_roofline_json(rows, n, in.nsteps, &w);
			tft_json_write_raw_char(&w, '\n');
			rc = tft_json_write_finish(&w);
			tft_json_write_fini(&w);
		}
	} else if (c->format == PROF_FMT_CSV) {
		rc = tft_export_prof_roofline_csv(rows, n, stdout);
	} else {
		rc = tft_export_prof_roofline_text(rows, n, stdout);
	}
	free(rows);
	if (rc || fflush(stdout) != 0 || ferror(stdout))
		return cli_fail(TFT_EXIT_FAIL, "prof: cannot write the output");
	return 0;
}

int tft_cmd_prof(int argc, char **argv)
{
	struct prof_cli c = { .prof_step = -2, .footer = true };
	struct tft_prof_opts opts;
	struct tft_error err;
	const char *pos[2];
	int npos = 0, view = -1, rc, nargs = 0;
	bool want_roofline = false;
	char **args = malloc(sizeof(char *) * (size_t)(argc + 1));

	if (!args)
		return cli_fail(TFT_EXIT_FAIL, "out of memory");
	/* tftracer's own options first; the rest are tfprof's */
	for (int i = 1; i < argc; i++) {
		if (cli_is_help(argv[i])) {
			free(args);
			fputs(usage_text, stdout);
			return TFT_EXIT_OK;
		}
		if (strcmp(argv[i], "--json") == 0 || strcmp(argv[i], "--csv") == 0) {
			int f = argv[i][2] == 'j' ? PROF_FMT_JSON : PROF_FMT_CSV;
			if (c.format != PROF_FMT_TEXT && c.format != f) {
				free(args);
				return cli_fail(TFT_EXIT_BADINPUT, "prof: --json and --csv exclude each other");
			}
			c.format = f;
		} else if (strcmp(argv[i], "--roofline") == 0) {
			want_roofline = true;
		} else if (strcmp(argv[i], "--threads") == 0 || strncmp(argv[i], "--threads=", 10) == 0) {
			const char *v = argv[i][9] == '=' ? argv[i] + 10 : i + 1 < argc ? argv[++i] : NULL;
			uint64_t t;
			if (!v || cli_parse_u64(v, 0, 64, &t)) {
				free(args);
				return cli_fail(TFT_EXIT_BADINPUT, "prof: --threads expects a number 0..64, not '%s'",
						v ? v : "");
			}
			c.threads = (int)t;
		} else {
			args[nargs++] = argv[i];
		}
	}
	tft_prof_opts_init(&opts);
	tft_error_clear(&err);
	if (prof_cli_parse(nargs, args, &opts, pos, 2, &npos, &err)) {
		free(args);
		tft_prof_opts_fini(&opts);
		return cli_fail(TFT_EXIT_BADINPUT, "prof: %s (see tftracer prof --help)", err.msg);
	}
	free(args);
	if (npos < 1) {
		tft_prof_opts_fini(&opts);
		fputs(usage_text, stderr);
		return TFT_EXIT_BADINPUT;
	}
	c.path = pos[0];
	if (npos == 2 && (view = tft_prof_view_parse(pos[1])) < 0) {
		tft_prof_opts_fini(&opts);
		return cli_fail(TFT_EXIT_BADINPUT, "prof: unknown view '%s' (scope, graph, op or code)", pos[1]);
	}
	if ((rc = cli_open_session(c.path, &c.s))) { /* a session file or a job directory */
		tft_prof_opts_fini(&opts);
		return rc;
	}
	if (want_roofline)
		rc = roofline(&c, &opts);
	else if (view >= 0)
		rc = prof_cli_run(&c, view, &opts);
	else
		rc = prof_shell(&c, &opts, isatty(STDIN_FILENO) && isatty(STDOUT_FILENO));
	tft_prof_close(c.prof);
	tft_session_close(c.s);
	tft_prof_opts_fini(&opts);
	return rc;
}
