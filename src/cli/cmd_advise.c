/* SPDX-License-Identifier: MIT */
/*
 * tftracer advise FILE|JOBDIR [--step N|--all-steps] [--json] [--checker NAME...]
 * Parses options and prints; analyze/advise.c and its checkers find.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/advise.h"
#include "analyze/stats.h"
#include "cli/cli.h"
#include "codec/json_write.h"
#include "store/session.h"

static const char usage_text[] =
	"usage: tftracer advise FILE|JOBDIR [--step N|--all-steps] [--json] [--checker NAME...]\n"
	"\n"
	"Finds what slows the session's steps and says what to change: findings ranked\n"
	"by the time they cost per step, each with an explanation, the evidence (time\n"
	"ranges and slices, which the web UI's Advisor page opens on the Timeline) and\n"
	"a recommendation; then each checker's verdict, and every step's breakdown\n"
	"(device compute, communication, memcpy, input, host compute, idle: it sums to\n"
	"the step's duration). Steps are analysed without each worker's first step\n"
	"when it has three or more (warm-up: allocation, autotuning, compilation).\n"
	"\n"
	"Checkers (docs/cmd-advise.md has their rules and thresholds):\n"
	"  step_time       the step-time breakdown; input-pipeline bound steps\n"
	"  utilization     accelerator busy time; idle split into host wait, kernel wait, other\n"
	"  expensive_ops   ops with the largest self time; ops on the CPU beside an accelerator\n"
	"  op_config       NCHW/NHWC conversions, float64 on the device, tiny kernels and\n"
	"                  ops, launch delays, non-fused batch norm\n"
	"  communication   collectives and transfers: overlap with compute, exposed time, bandwidth\n"
	"  memory          allocator peaks; host<->device copies per step\n"
	"  variability     step-time spread, slow steps against the median, straggler ranks\n"
	"  critical_path   the dependency chain that ends a step\n"
	"\n"
	"      --step N        analyse only the steps numbered N (every worker's)\n"
	"      --all-steps     analyse every traced step, the first ones too\n"
	"      --checker NAME  run only this checker (repeat, or NAME,NAME)\n"
	"      --json          the result as JSON (docs/cmd-advise.md)\n"
	"  -h, --help          this help\n"
	"\n"
	"Exit status: 0 with or without findings, 1 failure, 2 bad input or usage.\n";

/*
 * Text wrapped at 100 columns, the first line starting at column `col` (already
 * printed), the next ones indented by `indent`; control characters as '?'.
 */
static void print_wrapped_at(const char *s, int col, int indent)
{
	int start = col;

	while (*s) {
		const char *w = s;
		int n = 0;
		while (w[n] && w[n] != ' ')
			n++;
		if (col > start && col + 1 + n > 100) {
			printf("\n%*s", indent, "");
			col = start = indent;
		} else if (col > start) {
			putchar(' ');
			col++;
		}
		for (int i = 0; i < n; i++)
			putchar((unsigned char)w[i] < 0x20 || w[i] == 0x7f ? '?' : w[i]);
		col += n;
		s = w + n;
		while (*s == ' ')
			s++;
	}
	putchar('\n');
}

static void print_wrapped(const char *s, int indent)
{
	printf("%*s", indent, "");
	print_wrapped_at(s, indent, indent);
}

static void print_text(struct tft_session *s, const struct tft_advise_result *r)
{
	char b[32], b2[32];
	size_t shown = 0;

	printf("%u step%s analysed, %s per step\n", r->analysed_windows, r->analysed_windows == 1 ? "" : "s",
	       tft_stats_format_ns(b, sizeof(b), r->analysed_windows ? r->analysed_ns / r->analysed_windows : 0));
	if (!r->nfindings)
		printf("\nNo findings.\n");
	else
		printf("\nFindings, by cost per step:\n");
	for (size_t i = 0; i < r->nfindings; i++) {
		const struct tft_advise_finding *f = &r->findings[i];
		printf("\n%2zu. %s  [%s, %s per step]\n", i + 1, f->title, tft_advise_checker_name(f->checker),
		       tft_stats_format_ns(b, sizeof(b), f->cost_ns));
		if (f->explanation && f->explanation[0])
			print_wrapped(f->explanation, 4);
		if (f->recommendation && f->recommendation[0]) {
			printf("    What to do:\n");
			print_wrapped(f->recommendation, 6);
		}
		for (size_t j = 0; j < f->nevidence && j < 5; j++) {
			const struct tft_advise_evidence *e = &f->evidence[j];
			const struct tft_track *t = e->track != TFT_NONE ? tft_session_track(s, e->track) : NULL;
			printf("    evidence: ");
			if (t) {
				const char *tn = tft_session_str(s, t->name, NULL);
				const struct tft_process *pr = tft_session_process(s, t->process);
				if (!tn[0] && pr)
					tn = tft_session_str(s, pr->name, NULL);
				printf("track %u (%s) ", e->track, tn);
			}
			printf("%" PRId64 " .. %" PRId64 " ns (%s)", e->t0_ns, e->t1_ns,
			       tft_stats_format_ns(b2, sizeof(b2), e->t1_ns - e->t0_ns));
			if (e->nslices)
				printf(", %zu slice%s", e->nslices, e->nslices == 1 ? "" : "s");
			putchar('\n');
		}
	}
	printf("\nChecked:\n");
	for (size_t i = 0; i < r->nchecked; i++) {
		printf("  %-14s ", tft_advise_checker_name(r->checked[i].checker));
		print_wrapped_at(r->checked[i].text, 17, 17);
	}
	if (!r->nsteps)
		return;
	printf("\nSteps (ms): %8s %8s %8s %8s %8s %8s %8s\n", "duration", "device", "comm", "memcpy", "input",
	       "host", "idle");
	for (size_t i = 0; i < r->nsteps; i++) {
		const struct tft_advise_step *st = &r->steps[i];
		if (shown >= 20) {
			printf("  (%zu more steps: --json lists them all)\n", r->nsteps - shown);
			break;
		}
		printf("  %8" PRId64 "%s %8.3f", st->index, st->analysed ? " " : "*", (double)st->dur_ns / 1e6);
		for (int p = 0; p < TFT_ADVISE_NPARTS; p++)
			printf(" %8.3f", (double)st->part_ns[p] / 1e6);
		if (st->rank >= 0)
			printf("  rank %d", st->rank);
		putchar('\n');
		shown++;
	}
	printf("  (* not analysed: a worker's first step, untraced, or outside --step)\n");
}

int tft_cmd_advise(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "step", required_argument, NULL, 's' },
		{ "all-steps", no_argument, NULL, 'a' },
		{ "checker", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct tft_advise_opts opts = { 0 };
	struct tft_advise_result *r = NULL;
	struct tft_session *s = NULL;
	struct tft_error err;
	bool json = false;
	int c, rc;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'j': json = true; break;
		case 's': {
			char *end;
			long long v = strtoll(optarg, &end, 10);
			if (!*optarg || *end)
				return cli_fail(TFT_EXIT_BADINPUT, "advise: --step expects a step number, not '%s'", optarg);
			opts.one_step = true;
			opts.step = v;
			break;
		}
		case 'a': opts.all_steps = true; break;
		case 'c': {
			const char *p = optarg;
			while (*p) {
				size_t n = strcspn(p, ",");
				int k = tft_advise_checker_parse(p, n);
				if (k < 0)
					return cli_fail(TFT_EXIT_BADINPUT,
							"advise: --checker expects step_time, utilization, expensive_ops, "
							"op_config, communication, memory, variability or critical_path, "
							"not '%.*s'", (int)n, p);
				opts.checkers |= 1u << k;
				p += n;
				if (*p == ',')
					p++;
			}
			break;
		}
		case 'h': fputs(usage_text, stdout); return TFT_EXIT_OK;
		default: return cli_bad_option("advise", argv);
		}
	}
	if (opts.one_step && opts.all_steps)
		return cli_fail(TFT_EXIT_BADINPUT, "advise: --step and --all-steps exclude each other");
	if (optind != argc - 1) {
		fputs(usage_text, stderr);
		return TFT_EXIT_BADINPUT;
	}
	rc = cli_open_session(argv[optind], &s); /* a session file or a job directory */
	if (rc)
		return rc;
	tft_error_clear(&err);
	rc = tft_advise_run(s, &opts, &r, &err);
	if (rc) {
		tft_error_set_file(&err, argv[optind]);
		tft_session_close(s);
		return cli_fail_error(&err);
	}
	rc = 0;
	if (json) {
		struct tft_json_writer w;
		if (tft_json_write_init_file(&w, stdout)) {
			rc = TFT_ENOMEM;
		} else {
			tft_advise_write_json(r, &w);
			tft_json_write_raw_char(&w, '\n');
			rc = tft_json_write_finish(&w);
			tft_json_write_fini(&w);
		}
	} else {
		print_text(s, r);
	}
	tft_advise_destroy(r);
	tft_session_close(s);
	if (rc || fflush(stdout) != 0 || ferror(stdout))
		return cli_fail(TFT_EXIT_FAIL, "advise: cannot write the output");
	return TFT_EXIT_OK;
}
