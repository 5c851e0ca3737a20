/* SPDX-License-Identifier: MIT */
/*
 * The tfprof> shell of `tftracer prof SESSION` (tfprof's interactive mode):
 * a command per line, `scope|graph|op|code [options]` shows a view, `set
 * [options]` keeps options for the following commands, an empty line prints
 * the options, `help`, `quit`. On a terminal, libedit gives line editing,
 * history (~/.tfprof_history.txt, or $TFT_PROF_HISTORY; "" for none) and
 * completion of commands and -options; otherwise commands are read from
 * standard input one per line, without a prompt (a script).
 */
#include <editline/readline.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cmd_prof.h"

static const char *const commands[] = { "scope", "graph", "op", "code", "set", "help", "quit", NULL };

static const char help_text[] =
	"Commands:\n"
	"  scope [options]   the name-scope tree (TF names by '/', PyTorch modules)\n"
	"  graph [options]   the graph by inputs\n"
	"  op [options]      per op type\n"
	"  code [options]    per Python line, as the call tree\n"
	"  set [options]     keep options for the commands after it\n"
	"  (empty line)      print the options\n"
	"  help              this help\n"
	"  quit              leave (also exit, Ctrl-D)\n"
	"Options are tfprof's, e.g. -max_depth 4 -select params,micros -order_by micros\n"
	"-account_type_regexes _trainable_variables -step 0 -output pprof:outfile=p.pb.gz\n"
	"(tftracer prof --help lists them).\n";

/* ---- completion ----------------------------------------------------------------------------------- */

static char *complete_word(const char *text, int state)
{
	static int i, phase;
	size_t len = strlen(text);

	if (!state) {
		i = 0;
		phase = text[0] == '-' ? 1 : 0;
	}
	if (phase == 0) {
		while (commands[i]) {
			const char *c = commands[i++];
			if (strncmp(c, text, len) == 0)
				return strdup(c);
		}
		return NULL;
	}
	while (tft_prof_opt_names[i]) {
		const char *o = tft_prof_opt_names[i++];
		const char *t = text;
		while (*t == '-')
			t++;
		if (strncmp(o, t, strlen(t)) == 0) {
			char *m = malloc(strlen(o) + 2);
			if (m)
				sprintf(m, "-%s", o);
			return m;
		}
	}
	return NULL;
}

static char **complete(const char *text, int start, int end)
{
	(void)start;
	(void)end;
	return rl_completion_matches(text, complete_word);
}

/* ---- one command ---------------------------------------------------------------------------------------- */

#define MAX_WORDS 256

static int split(char *line, char **words)
{
	int n = 0;
	char *save = NULL;

	for (char *w = strtok_r(line, " \t\r\n", &save); w && n < MAX_WORDS; w = strtok_r(NULL, " \t\r\n", &save))
		words[n++] = w;
	return n;
}

/* Returns an exit code for the command; *quit set by quit/exit. */
static int command(struct prof_cli *c, struct tft_prof_opts *opts, char *line, bool *quit)
{
	char *words[MAX_WORDS];
	int n = split(line, words), view;
	struct tft_error err;
	char buf[4096];

	if (n == 0) {
		tft_prof_opts_format(opts, buf, sizeof(buf));
		fputs(buf, stdout);
		return 0;
	}
	if (strcmp(words[0], "quit") == 0 || strcmp(words[0], "exit") == 0 || strcmp(words[0], "q") == 0) {
		*quit = true;
		return 0;
	}
	if (strcmp(words[0], "help") == 0) {
		fputs(help_text, stdout);
		return 0;
	}
	tft_error_clear(&err);
	if (strcmp(words[0], "set") == 0) {
		struct tft_prof_opts next;
		if (tft_prof_opts_copy(&next, opts))
			return cli_fail(TFT_EXIT_FAIL, "out of memory");
		if (prof_cli_parse(n - 1, words + 1, &next, NULL, 0, NULL, &err)) {
			tft_prof_opts_fini(&next);
			return cli_fail(TFT_EXIT_BADINPUT, "prof: %s", err.msg);
		}
		tft_prof_opts_fini(opts);
		*opts = next;
		return 0;
	}
	view = tft_prof_view_parse(words[0]);
	if (view < 0)
		return cli_fail(TFT_EXIT_BADINPUT, "prof: unknown command '%s' (scope, graph, op, code, set, help, quit)",
				words[0]);
	{
		struct tft_prof_opts once;
		int rc;
		if (tft_prof_opts_copy(&once, opts))
			return cli_fail(TFT_EXIT_FAIL, "out of memory");
		if (prof_cli_parse(n - 1, words + 1, &once, NULL, 0, NULL, &err)) {
			tft_prof_opts_fini(&once);
			return cli_fail(TFT_EXIT_BADINPUT, "prof: %s", err.msg);
		}
		rc = prof_cli_run(c, view, &once);
		tft_prof_opts_fini(&once);
		fflush(stdout);
		return rc;
	}
}

static const char *history_path(char *buf, size_t size)
{
	const char *h = getenv("TFT_PROF_HISTORY");

	if (h)
		return h[0] ? h : NULL;
	h = getenv("HOME");
	if (!h || !h[0])
		return NULL;
	snprintf(buf, size, "%s/.tfprof_history.txt", h);
	return buf;
}

int prof_shell(struct prof_cli *c, struct tft_prof_opts *opts, bool interactive)
{
	int worst = 0;
	bool quit = false;

	if (!interactive) {
		char *line = NULL;
		size_t cap = 0;
		while (!quit && getline(&line, &cap, stdin) >= 0) {
			int rc = command(c, opts, line, &quit);
			if (rc > worst)
				worst = rc;
			fflush(stdout);
		}
		free(line);
		return worst;
	}
	char hist[4200];
	const char *hp = history_path(hist, sizeof(hist));

	rl_readline_name = "tfprof";
	rl_attempted_completion_function = complete;
	using_history();
	if (hp)
		read_history(hp);
	printf("Profiling %s. Type help for the commands, an empty line for the options, quit to leave.\n",
	       c->path);
	fflush(stdout);
	while (!quit) {
		char *line = readline("tfprof> ");
		if (!line) {
			putchar('\n');
			break;
		}
		if (line[0])
			add_history(line);
		int rc = command(c, opts, line, &quit);
		if (rc > worst)
			worst = rc;
		free(line);
	}
	if (hp)
		write_history(hp);
	return 0;
}
