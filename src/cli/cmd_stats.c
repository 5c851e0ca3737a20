/* SPDX-License-Identifier: MIT */
/*
 * tftracer stats FILE|JOBDIR [--json|--csv] [--by name|category|track|kernel|api|op|rank] [--top N]
 *                     [--track ID] [--process NAME] [--all-tracks] [--exact]
 * Parses options and prints; analyze/stats.c computes.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analyze/ranks.h"
#include "analyze/stats.h"
#include "cli/cli.h"
#include "codec/json_write.h"
#include "export/export_ranks.h"
#include "job/clock.h"
#include "store/session.h"

static const char usage_text[] =
	"usage: tftracer stats FILE|JOBDIR [--json|--csv] [--by name|category|track|kernel|api|op|rank]\n"
	"                           [--top N]\n"
	"                           [--track ID] [--process NAME] [--all-tracks] [--exact]\n"
	"\n"
	"Per-op statistics over the session's slices, one row per group, sorted by\n"
	"total time: count, total, self (total minus the time of the slices nested\n"
	"directly inside), mean, min, max, p50 and p99 (nearest rank), and share\n"
	"(percent of the summed total of all groups). A selection of more than\n"
	"262144 slices merges the statistics stored with the session's chunks: the\n"
	"same counts and times, p50/p99 within 0.78% where a name has more than a\n"
	"few hundred slices (the footer says how many; --exact scans instead).\n"
	"Each execution counts once: tracks that repeat other tracks' work (TF's\n"
	"/stream:all and /memcpy, GPU annotations, XProf's derived lines: 'derived'\n"
	"in 'tftracer info') are left out unless named with --track or --all-tracks.\n"
	"On tracks of concurrent executions (TF device executors, GPU streams) no\n"
	"slice is nested in another: self = total.\n"
	"\n"
	"      --by KEY        group by name (default), category or track; device work:\n"
	"                      kernel (GPU kernels, copies, sets on stream/queue tracks),\n"
	"                      api (runtime API calls: CUDA, HIP, OpenCL), op (kernels by\n"
	"                      the op that launched them); these add bytes and GB/s;\n"
	"                      rank (a distributed job: a JOBDIR, a merged job, or ranks'\n"
	"                      traces imported together): per rank compute, communication,\n"
	"                      waiting in communication and idle time, the waiting it\n"
	"                      caused, its clock; the straggler and the ops that made it\n"
	"                      late; the matching of messages and collectives\n"
	"      --top N         print only the N groups with the largest total (0: all)\n"
	"      --track ID      only this track (ids as listed by 'tftracer info')\n"
	"      --process P     only tracks of the processes P names: a name, a pid, #ID (the\n"
	"                      session's process id, from 'tftracer info'), host=HOST or rank=N\n"
	"      --all-tracks    count the derived tracks too (their slices then count twice)\n"
	"      --exact         scan every event: exact p50/p99 whatever the session's size\n"
	"      --json          {\"rows\": [...]} with the times in nanoseconds\n"
	"      --csv           comma-separated, one header line, times in nanoseconds\n"
	"  -h, --help          this help\n"
	"\n"
	"Exit status: 0 ok, 1 failure, 2 bad input or usage.\n";

enum { OUT_TEXT, OUT_JSON, OUT_CSV };

/* Display width of UTF-8 text: code points (every name here is narrow). */
static size_t text_width(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xC0) != 0x80;
	return n;
}

static void print_padded(const char *s, size_t width)
{
	size_t w = text_width(s);

	for (; w < width; w++)
		putchar(' ');
	fputs(s, stdout);
}

/* Names may hold control characters: show them as '?' in the text table. */
static void print_name(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		putchar((unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i]);
}

static const char *const by_names[] = { "name", "category", "track", "kernel", "api", "op", "rank" };
static const char *const by_plural[] = { "names", "categories", "tracks", "kernels", "API calls", "ops", "ranks" };

/* Bytes for people: "512 B", "12.3 KB", "1.2 MB", "3.4 GB" (powers of 1000). */
static void fmt_bytes(char *out, size_t size, uint64_t b)
{
	if (b < 1000)
		snprintf(out, size, "%" PRIu64 " B", b);
	else if (b < 1000000)
		snprintf(out, size, "%.1f KB", (double)b / 1e3);
	else if (b < 1000000000)
		snprintf(out, size, "%.1f MB", (double)b / 1e6);
	else
		snprintf(out, size, "%.1f GB", (double)b / 1e9);
}

/* Achieved bandwidth of a group (GB/s over its total time); 0 when no bytes. */
static double bandwidth_gbps(const struct tft_stats_row *row)
{
	return row->bytes && row->total_ns > 0 ? (double)row->bytes / (double)row->total_ns : 0.0;
}

static void print_text(const struct tft_stats_result *r, size_t nshow, int by)
{
	static const char *const heads[] = { "count", "total", "self", "mean", "min", "max",
					     "p50", "p99", "share", "bytes", "GB/s" };
	char cell[11][48];
	size_t width[11];
	int ncol = by >= TFT_STATS_BY_KERNEL && by != TFT_STATS_BY_API ? 11 : 9;
	const char *key = by_names[by];
	char d[64];

	/* Column widths from the cells, so the table stays aligned. */
	for (int c = 0; c < ncol; c++)
		width[c] = strlen(heads[c]);
	for (int pass = 0; pass < 2; pass++) {
		if (pass) {
			for (int c = 0; c < ncol; c++)
				print_padded(heads[c], width[c] + (c ? 2 : 0));
			if (by == TFT_STATS_BY_TRACK)
				printf("  %5s", "id");
			printf("  %s\n", key);
		}
		for (size_t i = 0; i < nshow; i++) {
			const struct tft_stats_row *row = &r->rows[i];
			snprintf(cell[0], sizeof(cell[0]), "%" PRIu64, row->count);
			tft_stats_format_ns(cell[1], sizeof(cell[1]), row->total_ns);
			tft_stats_format_ns(cell[2], sizeof(cell[2]), row->self_ns);
			tft_stats_format_ns(cell[3], sizeof(cell[3]), (int64_t)(row->mean_ns + 0.5));
			tft_stats_format_ns(cell[4], sizeof(cell[4]), row->min_ns);
			tft_stats_format_ns(cell[5], sizeof(cell[5]), row->max_ns);
			tft_stats_format_ns(cell[6], sizeof(cell[6]), row->p50_ns);
			tft_stats_format_ns(cell[7], sizeof(cell[7]), row->p99_ns);
			snprintf(cell[8], sizeof(cell[8]), "%.1f%%", row->share);
			if (row->bytes) {
				fmt_bytes(cell[9], sizeof(cell[9]), row->bytes);
				snprintf(cell[10], sizeof(cell[10]), "%.2f", bandwidth_gbps(row));
			} else {
				strcpy(cell[9], "-");
				strcpy(cell[10], "-");
			}
			for (int c = 0; c < ncol; c++) {
				if (!pass) {
					size_t w = text_width(cell[c]);
					if (w > width[c])
						width[c] = w;
				} else {
					print_padded(cell[c], width[c] + (c ? 2 : 0));
				}
			}
			if (!pass)
				continue;
			if (by == TFT_STATS_BY_TRACK)
				printf("  %5u", row->track_id);
			fputs("  ", stdout);
			if (row->name_len)
				print_name(row->name, row->name_len);
			else
				fputs(by == TFT_STATS_BY_OP ? "(no op found)" : "(none)", stdout);
			putchar('\n');
		}
	}
	printf("\n%" PRIu64 " slices in %zu %s", r->slices, r->nrows,
	       r->nrows == 1 ? by_names[by] : by_plural[by]);
	if (by != TFT_STATS_BY_TRACK)
		printf(" on %u track%s", r->tracks, r->tracks == 1 ? "" : "s");
	printf(", total %s", tft_stats_format_ns(d, sizeof(d), r->total_ns));
	if (nshow < r->nrows)
		printf("; top %zu shown", nshow);
	putchar('\n');
	if (r->approx_groups)
		printf("p50/p99 of %zu name%s within %.2f%% (from stored chunk statistics; --exact scans "
		       "every event)\n", r->approx_groups, r->approx_groups == 1 ? "" : "s",
		       100 * TFT_STATS_PERCENTILE_ERROR);
	if (r->derived_tracks)
		printf("%u derived track%s not counted (%s the work of other tracks; --all-tracks)\n",
		       r->derived_tracks, r->derived_tracks == 1 ? "" : "s",
		       r->derived_tracks == 1 ? "it repeats" : "they repeat");
}

static int print_json(struct tft_session *sess, const struct tft_stats_result *r, size_t nshow, int by)
{
	struct tft_json_writer w;
	int rc;

	if (tft_json_write_init_file(&w, stdout))
		return TFT_ENOMEM;
	tft_json_write_begin_object(&w);
	tft_json_write_key(&w, "group_by");
	tft_json_write_cstr(&w, by_names[by]);
	tft_json_write_key(&w, "slices");
	tft_json_write_uint(&w, r->slices);
	tft_json_write_key(&w, "groups");
	tft_json_write_uint(&w, r->nrows);
	tft_json_write_key(&w, "total_ns");
	tft_json_write_int(&w, r->total_ns);
	tft_json_write_key(&w, "percentile_error");
	tft_json_write_double(&w, r->approx_groups ? TFT_STATS_PERCENTILE_ERROR : 0.0);
	tft_json_write_key(&w, "stored_tracks");
	tft_json_write_uint(&w, r->stored_tracks);
	tft_json_write_key(&w, "tracks");
	tft_json_write_uint(&w, r->tracks);
	tft_json_write_key(&w, "derived_tracks_excluded");
	tft_json_write_uint(&w, r->derived_tracks);
	tft_json_write_key(&w, "rows");
	tft_json_write_begin_array(&w);
	for (size_t i = 0; i < nshow; i++) {
		const struct tft_stats_row *row = &r->rows[i];
		tft_json_write_newline(&w);
		tft_json_write_begin_object(&w);
		tft_json_write_key(&w, "name");
		tft_json_write_str(&w, row->name, row->name_len);
		if (by == TFT_STATS_BY_TRACK) {
			const struct tft_track *tr = tft_session_track(sess, row->track_id);

			tft_json_write_key(&w, "track_id");
			tft_json_write_uint(&w, row->track_id);
			tft_json_write_key(&w, "process_id");
			if (tr)
				tft_json_write_uint(&w, tr->process);
			else
				tft_json_write_null(&w);
		}
		tft_json_write_key(&w, "count");
		tft_json_write_uint(&w, row->count);
		tft_json_write_key(&w, "total_ns");
		tft_json_write_int(&w, row->total_ns);
		tft_json_write_key(&w, "self_ns");
		tft_json_write_int(&w, row->self_ns);
		tft_json_write_key(&w, "mean_ns");
		tft_json_write_double(&w, row->mean_ns);
		tft_json_write_key(&w, "min_ns");
		tft_json_write_int(&w, row->min_ns);
		tft_json_write_key(&w, "max_ns");
		tft_json_write_int(&w, row->max_ns);
		tft_json_write_key(&w, "p50_ns");
		tft_json_write_int(&w, row->p50_ns);
		tft_json_write_key(&w, "p99_ns");
		tft_json_write_int(&w, row->p99_ns);
		tft_json_write_key(&w, "exact");
		tft_json_write_bool(&w, row->exact);
		tft_json_write_key(&w, "share");
		tft_json_write_double(&w, row->share);
		if (by >= TFT_STATS_BY_KERNEL) {
			tft_json_write_key(&w, "bytes");
			tft_json_write_uint(&w, row->bytes);
			tft_json_write_key(&w, "bandwidth_gbps");
			tft_json_write_double(&w, bandwidth_gbps(row));
		}
		tft_json_write_end_object(&w);
	}
	if (nshow)
		tft_json_write_raw(&w, "\n", 1);
	tft_json_write_end_array(&w);
	tft_json_write_end_object(&w);
	tft_json_write_raw_char(&w, '\n');
	rc = tft_json_write_finish(&w);
	tft_json_write_fini(&w);
	return rc;
}

/* RFC 4180: quote a field holding a comma, a quote or a line break. */
/* A CSV field (RFC 4180 quoting); a NUL byte, which no CSV reader keeps, as '?'. */
static void csv_field(const char *s, size_t n)
{
	bool quote = false;

	for (size_t i = 0; i < n && !quote; i++)
		quote = s[i] == ',' || s[i] == '"' || s[i] == '\r' || s[i] == '\n';
	if (quote)
		putchar('"');
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '"')
			putchar('"');
		putchar(s[i] ? s[i] : '?');
	}
	if (quote)
		putchar('"');
}

static void print_csv(const struct tft_stats_result *r, size_t nshow, int by)
{
	char mean[48], share[48];

	fputs("name,", stdout);
	if (by == TFT_STATS_BY_TRACK)
		fputs("track_id,", stdout);
	fputs(by >= TFT_STATS_BY_KERNEL ? "count,total_ns,self_ns,mean_ns,min_ns,max_ns,p50_ns,p99_ns,share,"
					  "bytes,bandwidth_gbps\n"
					: "count,total_ns,self_ns,mean_ns,min_ns,max_ns,p50_ns,p99_ns,share\n",
	      stdout);
	for (size_t i = 0; i < nshow; i++) {
		const struct tft_stats_row *row = &r->rows[i];
		mean[tft_json_fmt_double(mean, row->mean_ns, false)] = '\0';
		share[tft_json_fmt_double(share, row->share, false)] = '\0';
		csv_field(row->name, row->name_len);
		if (by == TFT_STATS_BY_TRACK)
			printf(",%u", row->track_id);
		printf(",%" PRIu64 ",%" PRId64 ",%" PRId64 ",%s,%" PRId64 ",%" PRId64 ",%" PRId64
		       ",%" PRId64 ",%s", row->count, row->total_ns, row->self_ns, mean, row->min_ns,
		       row->max_ns, row->p50_ns, row->p99_ns, share);
		if (by >= TFT_STATS_BY_KERNEL) {
			char bw[48];
			bw[tft_json_fmt_double(bw, bandwidth_gbps(row), false)] = '\0';
			printf(",%" PRIu64 ",%s", row->bytes, bw);
		}
		putchar('\n');
	}
}

/* ---- --by rank -------------------------------------------------------------------------- */

static void ns_cell(char *out, size_t size, int64_t ns)
{
	tft_stats_format_ns(out, size, ns);
}

static void print_ranks_text(struct tft_session *s, const struct tft_ranks_result *r, size_t nshow)
{
	static const char *const heads[] = { "rank", "compute", "comm", "wait", "idle", "caused wait", "last", "calls",
					     "clock" };
	char cell[9][64];
	size_t width[9];
	char d[64], e[64];

	if (!r->nranks) {
		printf("no ranks: the session's processes carry none (a job is a directory of rank-<N>.tft files, "
		       "or ranks' traces imported together)\n");
		return;
	}
	for (int c = 0; c < 9; c++)
		width[c] = strlen(heads[c]);
	for (int pass = 0; pass < 2; pass++) {
		if (pass) {
			for (int c = 0; c < 9; c++)
				print_padded(heads[c], width[c] + (c ? 2 : 0));
			putchar('\n');
		}
		for (size_t i = 0; i < nshow && i < r->nranks; i++) {
			const struct tft_ranks_rank *k = &r->ranks[i];
			snprintf(cell[0], sizeof(cell[0]), "%d%s", k->rank, (int32_t)k->rank == r->straggler ? "*" : "");
			ns_cell(cell[1], sizeof(cell[1]), k->total.compute_ns);
			ns_cell(cell[2], sizeof(cell[2]), k->total.comm_ns);
			ns_cell(cell[3], sizeof(cell[3]), k->total.wait_ns);
			ns_cell(cell[4], sizeof(cell[4]), k->total.idle_ns);
			ns_cell(cell[5], sizeof(cell[5]), k->caused_ns);
			snprintf(cell[6], sizeof(cell[6]), "%" PRIu64, k->last_arrivals);
			snprintf(cell[7], sizeof(cell[7]), "%" PRIu64, k->calls);
			if (k->clock_method & TFT_CLOCK_REFERENCE)
				snprintf(cell[8], sizeof(cell[8]), "reference");
			else if (!k->clock_method)
				snprintf(cell[8], sizeof(cell[8]), "-");
			else if (k->clock_error_ns < 0)
				snprintf(cell[8], sizeof(cell[8]), "%s%s (error unknown)", k->clock_offset_ns < 0 ? "-" : "+",
					 tft_stats_format_ns(d, sizeof(d), llabs(k->clock_offset_ns)));
			else
				snprintf(cell[8], sizeof(cell[8]), "%s%s ± %s", k->clock_offset_ns < 0 ? "-" : "+",
					 tft_stats_format_ns(d, sizeof(d), llabs(k->clock_offset_ns)),
					 tft_stats_format_ns(e, sizeof(e), k->clock_error_ns));
			for (int c = 0; c < 9; c++) {
				if (!pass) {
					size_t w = text_width(cell[c]);
					if (w > width[c])
						width[c] = w;
				} else {
					print_padded(cell[c], width[c] + (c ? 2 : 0));
				}
			}
			if (pass)
				putchar('\n');
		}
	}
	printf("\n%u ranks, %u step%s%s; clocks %s\n", r->nranks, r->nsteps, r->nsteps == 1 ? "" : "s",
	       nshow < r->nranks ? "; first ranks shown" : "",
	       r->clock_aligned ? "aligned to the reference rank" : "as recorded (not aligned)");
	printf("communication: %" PRIu64 " messages matched (%" PRIu64 " sends, %" PRIu64
	       " receives unmatched), %" PRIu64 " collectives (%" PRIu64 " incomplete)\n",
	       r->messages, r->unmatched_sends, r->unmatched_receives, r->collectives, r->incomplete_collectives);
	if (r->straggler < 0) {
		printf("straggler: none (no rank waited for another)\n");
		return;
	}
	const struct tft_ranks_rank *st = &r->ranks[r->straggler_index];
	printf("straggler: rank %d: the others waited %s for it (%.0f%% of all waiting)\n", r->straggler,
	       tft_stats_format_ns(d, sizeof(d), st->caused_ns),
	       r->wait_total_ns ? 100.0 * (double)st->caused_ns / (double)r->wait_total_ns : 0.0);
	if (r->nops)
		printf("  before the calls it was late to, it ran (self time; the ranks that waited, per rank):\n");
	for (uint32_t i = 0; i < r->nops && i < 5; i++) {
		printf("    %12s vs %12s  ", tft_stats_format_ns(d, sizeof(d), r->ops[i].straggler_ns),
		       tft_stats_format_ns(e, sizeof(e), r->ops[i].others_ns));
		size_t n;
		const char *nm = tft_session_str(s, r->ops[i].name, &n);
		print_name(nm, n);
		putchar('\n');
	}
	{
		const struct tft_ranks_coll *worst = NULL;
		for (uint32_t g = 0; g < r->ncolls; g++)
			if (!worst || r->colls[g].last_ns - r->colls[g].first_ns > worst->last_ns - worst->first_ns)
				worst = &r->colls[g];
		if (worst) {
			size_t n;
			const char *nm = tft_session_str(s, worst->name, &n);
			printf("largest collective skew: %s, ", tft_stats_format_ns(d, sizeof(d), worst->last_ns - worst->first_ns));
			print_name(nm, n);
			printf(" (comm %" PRId64 ", #%" PRId64 "), rank %d last\n", worst->comm, worst->seq, worst->last_rank);
		}
	}
}

static void print_ranks_csv(const struct tft_ranks_result *r, size_t nshow)
{
	fputs("rank,compute_ns,comm_ns,wait_ns,idle_ns,caused_ns,last_arrivals,calls,clock_offset_ns,clock_error_ns,"
	      "straggler\n",
	      stdout);
	for (size_t i = 0; i < nshow && i < r->nranks; i++) {
		const struct tft_ranks_rank *k = &r->ranks[i];
		printf("%d,%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRIu64 ",%" PRIu64 ",%" PRId64
		       ",%" PRId64 ",%d\n",
		       k->rank, k->total.compute_ns, k->total.comm_ns, k->total.wait_ns, k->total.idle_ns, k->caused_ns,
		       k->last_arrivals, k->calls, k->clock_offset_ns, k->clock_error_ns, k->rank == r->straggler);
	}
}

static int stats_by_rank(struct tft_session *s, const char *path, int out, uint64_t top)
{
	struct tft_ranks_result *r = NULL;
	struct tft_error err;
	size_t nshow;
	int rc;

	tft_error_clear(&err);
	if ((rc = tft_ranks_analyze(s, &r, &err))) {
		tft_error_set_file(&err, path);
		tft_session_close(s);
		return cli_fail_error(&err);
	}
	nshow = top && top < r->nranks ? (size_t)top : r->nranks;
	rc = 0;
	if (out == OUT_JSON) {
		struct tft_json_writer w;
		if (tft_json_write_init_file(&w, stdout)) {
			rc = TFT_ENOMEM;
		} else {
			tft_export_ranks_json(&w, s, r, 0);
			tft_json_write_raw_char(&w, '\n');
			rc = tft_json_write_finish(&w);
			tft_json_write_fini(&w);
		}
	} else if (out == OUT_CSV) {
		print_ranks_csv(r, nshow);
	} else {
		print_ranks_text(s, r, nshow);
	}
	tft_ranks_destroy(r);
	tft_session_close(s);
	if (rc || fflush(stdout) != 0 || ferror(stdout))
		return cli_fail(TFT_EXIT_FAIL, "stats: cannot write the output");
	return TFT_EXIT_OK;
}

int tft_cmd_stats(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "csv", no_argument, NULL, 'c' },
		{ "by", required_argument, NULL, 'b' },
		{ "top", required_argument, NULL, 'n' },
		{ "track", required_argument, NULL, 't' },
		{ "process", required_argument, NULL, 'p' },
		{ "all-tracks", no_argument, NULL, 'a' },
		{ "exact", no_argument, NULL, 'x' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct tft_stats_opts opts = { .group_by = TFT_STATS_BY_NAME, .track = TFT_NONE };
	struct tft_stats_result *r = NULL;
	struct tft_session *s = NULL;
	struct tft_error err;
	uint64_t top = UINT64_MAX, v;
	int out = OUT_TEXT, c, rc;
	size_t nshow;

	optind = 1;
	opterr = 0; /* (cli_bad_option says it in one line) */
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
		case 'c':
			if (out != OUT_TEXT && out != (c == 'j' ? OUT_JSON : OUT_CSV))
				return cli_fail(TFT_EXIT_BADINPUT, "stats: --json and --csv exclude each other");
			out = c == 'j' ? OUT_JSON : OUT_CSV;
			break;
		case 'b':
			opts.group_by = tft_stats_group_parse(optarg);
			if (opts.group_by < 0)
				return cli_fail(TFT_EXIT_BADINPUT,
						"stats: --by expects name, category, track, kernel, api, op or rank, not '%s'",
						optarg);
			break;
		case 'n':
			if (cli_parse_u64(optarg, 0, UINT64_MAX, &top))
				return cli_fail(TFT_EXIT_BADINPUT, "stats: --top expects a number, not '%s'", optarg);
			break;
		case 't':
			if (cli_parse_u64(optarg, 0, TFT_NONE - 1, &v))
				return cli_fail(TFT_EXIT_BADINPUT, "stats: --track expects a track id, not '%s'", optarg);
			opts.track = (uint32_t)v;
			break;
		case 'p': opts.process = optarg; break;
		case 'a': opts.derived = true; break;
		case 'x': opts.exact = true; break;
		case 'h': fputs(usage_text, stdout); return TFT_EXIT_OK;
		default: return cli_bad_option("stats", argv);
		}
	}
	if (optind != argc - 1) {
		fputs(usage_text, stderr);
		return TFT_EXIT_BADINPUT;
	}
	rc = cli_open_session(argv[optind], &s);
	if (rc)
		return rc;
	if (opts.group_by == TFT_STATS_BY_RANK) {
		if (opts.track != TFT_NONE || opts.process || opts.exact || opts.derived) {
			tft_session_close(s);
			return cli_fail(TFT_EXIT_BADINPUT, "stats: --by rank takes no --track, --process, --exact or --all-tracks");
		}
		return stats_by_rank(s, argv[optind], out, top);
	}
	if (opts.track != TFT_NONE && !tft_session_track(s, opts.track)) {
		tft_session_close(s);
		return cli_fail(TFT_EXIT_BADINPUT, "%s: no track with id %u (see 'tftracer info')",
				argv[optind], opts.track);
	}
	if (opts.process) {
		uint32_t i, n = tft_session_process_count(s);

		for (i = 0; i < n && !tft_stats_process_matches(s, i, opts.process); i++)
			;
		if (i == n) {
			tft_session_close(s);
			return cli_fail(TFT_EXIT_BADINPUT,
					"%s: no process matches '%s' (a name, a pid, #ID, host=HOST or "
					"rank=N; see 'tftracer info')",
					argv[optind], opts.process);
		}
	}
	tft_error_clear(&err);
	rc = tft_stats_compute(s, &opts, &r, &err);
	if (rc) {
		tft_error_set_file(&err, argv[optind]);
		tft_session_close(s);
		return cli_fail_error(&err);
	}
	/* --top 0: every row, as top=0 in /api/stats */
	nshow = top && top < r->nrows ? (size_t)top : r->nrows;
	rc = 0;
	if (out == OUT_JSON)
		rc = print_json(s, r, nshow, opts.group_by);
	else if (out == OUT_CSV)
		print_csv(r, nshow, opts.group_by);
	else
		print_text(r, nshow, opts.group_by);
	tft_stats_destroy(r);
	tft_session_close(s);
	if (rc || fflush(stdout) != 0 || ferror(stdout))
		return cli_fail(TFT_EXIT_FAIL, "stats: cannot write the output");
	return TFT_EXIT_OK;
}
