/* SPDX-License-Identifier: MIT */
/*
 * tftracer serve FILE... (and the bare form `tftracer FILE`): serve a
 * session, or trace files imported into a temporary session, to the web UI
 * until SIGINT/SIGTERM.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#include "cli/cli.h"
#include "job/job.h"
#include "collect/ingest.h"
#include "server/http.h"
#include "store/writer.h"

static const char usage_text[] =
	"usage: tftracer serve FILE... [--port N] [--host ADDR] [--token T] [--no-auth]\n"
	"                              [--tls-cert F --tls-key F] [--open] [--threads N] [--quiet]\n"
	"       tftracer FILE...         (the same as serve)\n"
	"\n"
	"Serve the web UI for a session file (.tft), a job directory (rank-<N>.tft files:\n"
	"every rank read in place as one session, clocks aligned; docs/distributed.md), or\n"
	"for trace files and profile run directories (whatever `tftracer import` reads;\n"
	"gzip ok), which are first imported into a temporary session.\n"
	"Runs until interrupted (Ctrl+C, SIGTERM).\n"
	"\n"
	"  -p, --port N          TCP port (default 9999; 0 = any free port)\n"
	"  -H, --host ADDR       address to bind (default 127.0.0.1). Any address other\n"
	"                        than 127.0.0.1/::1/localhost requires a token\n"
	"      --token T         access token (8-64 of [A-Za-z0-9._~-]); default: random\n"
	"                        when one is needed. The URL printed carries it\n"
	"      --no-auth         serve a non-loopback address without a token (unsafe)\n"
	"      --tls-cert FILE   PEM certificate: serve HTTPS (with --tls-key)\n"
	"      --tls-key FILE    PEM private key\n"
	"      --open            open the URL in a browser (xdg-open)\n"
	"      --threads N       worker threads (1-16, default 4)\n"
	"  -q, --quiet           print only the URL\n"
	"  -h, --help            this help\n"
	"\n"
	"Exit status: 0 after a clean shutdown, 1 failure (port in use ...), 2 bad input\n"
	"or usage.\n";

static int is_session_file(const char *path)
{
	static const char magic[16] = "SQLite format 3";
	char head[16];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return 0;
	n = read(fd, head, sizeof(head));
	close(fd);
	return n == (ssize_t)sizeof(head) && memcmp(head, magic, sizeof(head)) == 0;
}

struct tmp_session {
	char dir[4096];
	char path[4400];
};

static void tmp_remove(struct tmp_session *t)
{
	if (!t->dir[0])
		return;
	cli_remove_session_file(t->path);
	rmdir(t->dir);
	t->dir[0] = '\0';
	cli_cleanup_on_signal(NULL, NULL);
}

/* Import the inputs into DIR/<first input>.tft in a new temporary directory. */
static int import_inputs(char **inputs, int n, struct tmp_session *t, int quiet)
{
	const char *tmpdir = getenv("TMPDIR");
	const char *base = strrchr(inputs[0], '/');
	size_t blen;
	struct tft_error err;
	struct tft_writer_opts wopts = {0};
	struct tft_writer *w;
	int rc;

	base = base ? base + 1 : inputs[0];
	blen = strlen(base);
	if (!blen) { /* "DIR/": the directory's own name */
		const char *end = inputs[0] + strlen(inputs[0]);

		while (end > inputs[0] && end[-1] == '/')
			end--;
		base = end;
		while (base > inputs[0] && base[-1] != '/')
			base--;
		blen = (size_t)(end - base);
	}
	if (!tmpdir || !*tmpdir)
		tmpdir = "/tmp";
	if ((size_t)snprintf(t->dir, sizeof(t->dir), "%s/tftracer-serve-XXXXXX", tmpdir) >= sizeof(t->dir) ||
	    !mkdtemp(t->dir)) {
		t->dir[0] = '\0';
		return cli_fail(TFT_EXIT_FAIL, "serve: cannot create a temporary directory in %s", tmpdir);
	}
	snprintf(t->path, sizeof(t->path), "%s/%.*s.tft", t->dir, (int)(blen > 200 ? 200 : blen), base);
	cli_cleanup_on_signal(t->path, t->dir); /* a Ctrl+C during the import leaves nothing */
	if (!quiet && n == 1)
		fprintf(stderr, "tftracer: importing %s...\n", inputs[0]);
	else if (!quiet)
		fprintf(stderr, "tftracer: importing %s and %d more...\n", inputs[0], n - 1);
	tft_error_clear(&err);
	wopts.zstd_level = TFT_IMPORT_ZSTD_LEVEL;
	wopts.threads = tft_writer_default_threads();
	wopts.bulk = 1; /* a temporary name, renamed only on success */
	w = tft_writer_open(t->path, &wopts, &err);
	if (!w) {
		tmp_remove(t);
		return cli_fail_error(&err);
	}
	struct tft_ingest_opts iopts = {.threads = wopts.threads}; /* as `import` parses */

	tft_ingest_order((const char **)inputs, n); /* (one RunMetadata per step: in time order) */
	for (int i = 0; i < n; i++) {
		rc = tft_ingest_file(w, inputs[i], &iopts, &err);
		if (rc != 0) {
			tft_error_set_file(&err, inputs[i]);
			tft_writer_abort(w);
			tmp_remove(t);
			return cli_fail_error(&err);
		}
	}
	if (tft_writer_close(w, &err) != 0) {
		tmp_remove(t);
		return cli_fail_error(&err);
	}
	return TFT_EXIT_OK;
}

/* Start xdg-open URL (stdio to /dev/null): its pid, or -1. */
static pid_t open_browser(const char *url)
{
	posix_spawn_file_actions_t fa;
	char prog[] = "xdg-open";
	char *argv[] = { prog, (char *)url, NULL };
	pid_t pid;
	int rc;

	if (posix_spawn_file_actions_init(&fa) != 0)
		return -1;
	posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
	rc = posix_spawnp(&pid, "xdg-open", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	return rc == 0 ? pid : -1;
}

int tft_cmd_serve(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "port", required_argument, NULL, 'p' },
		{ "host", required_argument, NULL, 'H' },
		{ "token", required_argument, NULL, 't' },
		{ "no-auth", no_argument, NULL, 'N' },
		{ "tls-cert", required_argument, NULL, 'C' },
		{ "tls-key", required_argument, NULL, 'K' },
		{ "open", no_argument, NULL, 'o' },
		{ "threads", required_argument, NULL, 'T' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct tft_server_opts opts;
	struct tft_server_source src;
	struct tmp_session tmp = { "", "" };
	struct tft_server *srv;
	struct tft_error err;
	sigset_t set;
	uint64_t v;
	int c, nsessions = 0, quiet = 0, want_open = 0, sig = 0;
	pid_t browser = -1;
	const char *path;

	tft_server_opts_init(&opts);
	optind = 1;
	opterr = 0; /* (cli_bad_option says it in one line) */
	while ((c = getopt_long(argc, argv, "p:H:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (cli_parse_u64(optarg, 0, 65535, &v) != 0)
				return cli_fail(TFT_EXIT_BADINPUT, "serve: --port expects 0..65535");
			opts.port = (int)v;
			break;
		case 'H': opts.host = optarg; break;
		case 't': opts.token = optarg; break;
		case 'N': opts.no_auth = true; break;
		case 'C': opts.tls_cert_file = optarg; break;
		case 'K': opts.tls_key_file = optarg; break;
		case 'o': want_open = 1; break;
		case 'T':
			if (cli_parse_u64(optarg, 1, 16, &v) != 0)
				return cli_fail(TFT_EXIT_BADINPUT, "serve: --threads expects 1..16");
			opts.threads = (unsigned)v;
			break;
		case 'q': quiet = 1; break;
		case 'h': fputs(usage_text, stdout); return TFT_EXIT_OK;
		default: return cli_bad_option("serve", argv);
		}
	}
	if (optind >= argc) {
		fputs(usage_text, stderr);
		return TFT_EXIT_BADINPUT;
	}
	if (!opts.tls_cert_file != !opts.tls_key_file)
		return cli_fail(TFT_EXIT_BADINPUT, "serve: --tls-cert and --tls-key go together");
	for (int i = optind; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) != 0)
			return cli_fail(TFT_EXIT_BADINPUT, "%s: cannot open: no such file", argv[i]);
		/*
		 * A directory is a profile run (plugins/profile/<run>/), a pipe (`<(zcat
		 * t.json.gz)`) a trace: both imported as `import` does. Only a regular
		 * file is looked at for a session (reading a pipe would consume it).
		 */
		if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode) && !S_ISFIFO(st.st_mode) &&
		    !S_ISCHR(st.st_mode))
			return cli_fail(TFT_EXIT_BADINPUT, "%s: not a file, a directory or a pipe", argv[i]);
		/* a job directory (rank-<N>.tft files) is one session too */
		nsessions += (S_ISREG(st.st_mode) && is_session_file(argv[i])) ||
			     (S_ISDIR(st.st_mode) && tft_job_is_dir(argv[i]));
	}
	if (nsessions && argc - optind > 1)
		return cli_fail(TFT_EXIT_BADINPUT,
				"serve: give one session file (.tft) or job directory, or trace files to import");
	if (nsessions) {
		path = argv[optind];
	} else {
		int rc = import_inputs(argv + optind, argc - optind, &tmp, quiet);
		if (rc != TFT_EXIT_OK)
			return rc;
		path = tmp.path;
	}

	/* Block the stop signals before the server threads exist, so they inherit the mask. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);

	memset(&src, 0, sizeof(src));
	src.path = path;
	tft_error_clear(&err);
	srv = tft_server_start(&opts, &src, &err);
	if (!srv) {
		tmp_remove(&tmp);
		if (err.code == TFT_EFORMAT || err.code == TFT_EVERSION || err.code == TFT_ENOTFOUND)
			tft_error_set_file(&err, path); /* the session itself is at fault */
		return cli_fail_error(&err);
	}
	if (quiet)
		printf("%s\n", tft_server_url(srv));
	else
		printf("tftracer: serving %s at %s\ntftracer: press Ctrl+C to stop\n", argv[optind],
		       tft_server_url(srv));
	fflush(stdout);
	if (want_open && (browser = open_browser(tft_server_url(srv))) < 0 && !quiet)
		fprintf(stderr, "tftracer: cannot run xdg-open; open the URL yourself\n");

	while (sigwait(&set, &sig) != 0)
		;
	tft_server_stop(srv);
	tmp_remove(&tmp);
	if (browser > 0)
		waitpid(browser, NULL, WNOHANG);
	if (!quiet)
		fprintf(stderr, "tftracer: stopped (%s)\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
	return TFT_EXIT_OK;
}
