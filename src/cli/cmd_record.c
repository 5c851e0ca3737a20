/* SPDX-License-Identifier: MIT */
/*
 * tftracer record [options] -- CMD [ARGS...]: run a program with the tracer
 * inside it, without changing the program (docs/cmd-record.md).
 *
 * The program runs as a child with TFT_SESSION (the session file) and the
 * TFT_RECORD_* variables set. A Python program also gets a sitecustomize.py
 * (written to a temporary directory put first on PYTHONPATH, next to the
 * tftracer package built with this binary) that starts a TracingServer
 * before its first line (python/tftracer/_record.py): the web UI is live at
 * --host:--port while it runs, and each PyTorch optimizer step ends a step.
 * A native program that uses the C runtime records into the same session.
 * This process waits: Ctrl+C reaches the program (the terminal sends it to
 * both), SIGTERM and SIGHUP are passed on; it exits with the program's status.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"

static const char usage_text[] =
	"usage: tftracer record [options] -- CMD [ARGS...]\n"
	"\n"
	"Run CMD with the tracer inside it. A Python program gets a tracing server\n"
	"(the web UI, live, at http://HOST:PORT/) and one step per PyTorch optimizer\n"
	"step, without changing a line; a native program that uses the C runtime\n"
	"records into the same session file.\n"
	"\n"
	"options:\n"
	"  -o, --session FILE   the session file (default tftracer-<pid>.tft; must not exist)\n"
	"  -p, --port N         the UI's port (default 9999; 0: any free port)\n"
	"  -H, --host ADDR      address to bind (default 127.0.0.1; others need a token)\n"
	"      --token T        access token (default: generated when the host needs one)\n"
	"      --trace-every K  record the ops of every K-th step (default: none until asked)\n"
	"      --trace-next N   record the ops of the next N steps from the start\n"
	"      --serve          when CMD ends, serve the session (as `tftracer FILE`)\n"
	"  -q, --quiet          no message of its own\n"
	"\n"
	"exit status: CMD's (128+N when a signal N ended it); 2 bad usage; 127 CMD not found.\n";

static volatile sig_atomic_t child_pid;

static void pass_on(int sig)
{
	if (child_pid > 0)
		kill((pid_t)child_pid, sig);
}

/* The directory of this binary's tftracer Python package (build/python), or "". */
static void package_dir(char *out, size_t size)
{
	char exe[PATH_MAX], probe[PATH_MAX + 64];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	out[0] = 0;
	if (n <= 0)
		return;
	exe[n] = 0;
	slash = strrchr(exe, '/');
	if (!slash)
		return;
	*slash = 0;
	snprintf(probe, sizeof(probe), "%s/python/tftracer/_record.py", exe);
	if (access(probe, R_OK) == 0 && strlen(exe) + 8 <= size)
		snprintf(out, size, "%.*s/python", (int)(size - 8), exe);
}

/*
 * sitecustomize.py for the program: starts the tracer, then runs the
 * sitecustomize it hides (Debian's, a virtualenv's), if any.
 */
static const char sitecustomize[] =
	"# Written by `tftracer record` for the program it runs; removed when it ends.\n"
	"import os as _os, sys as _sys\n"
	"_here = _os.path.dirname(_os.path.abspath(__file__))\n"
	"def _chain():\n"
	"    import importlib.machinery, importlib.util\n"
	"    path = [p for p in _sys.path if _os.path.abspath(p or '.') != _here]\n"
	"    spec = importlib.machinery.PathFinder.find_spec('sitecustomize', path)\n"
	"    if spec is not None and spec.loader is not None:\n"
	"        mod = importlib.util.module_from_spec(spec)\n"
	"        spec.loader.exec_module(mod)\n"
	"try:\n"
	"    _chain()\n"
	"except Exception as _e:\n"
	"    _sys.stderr.write('tftracer record: the program\\'s sitecustomize failed: %s\\n' % (_e,))\n"
	"try:\n"
	"    from tftracer import _record\n"
	"    _record.start()\n"
	"except Exception as _e:\n"
	"    if _os.environ.get('TFT_RECORD') == '1':\n"
	"        _os.environ['TFT_RECORD'] = 'failed'\n"
	"        _sys.stderr.write('tftracer record: tracing is off (%s); the program runs untraced\\n' % (_e,))\n";

static int write_hook(const char *dir)
{
	char path[PATH_MAX + 32];
	int fd;
	size_t len = sizeof(sitecustomize) - 1;

	snprintf(path, sizeof(path), "%s/sitecustomize.py", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	if (write(fd, sitecustomize, len) != (ssize_t)len) {
		int e = errno ? errno : EIO;
		close(fd);
		return -e;
	}
	return close(fd) ? -errno : 0;
}

/* The hook and the bytecode the interpreter may have cached for it (__pycache__). */
static void remove_hook(const char *dir)
{
	char path[PATH_MAX + 64], f[2 * PATH_MAX];
	DIR *d;
	struct dirent *e;

	snprintf(path, sizeof(path), "%s/__pycache__", dir);
	if ((d = opendir(path)) != NULL) {
		while ((e = readdir(d)) != NULL) {
			if (strncmp(e->d_name, "sitecustomize.", 14) != 0)
				continue;
			snprintf(f, sizeof(f), "%s/%s", path, e->d_name);
			unlink(f);
		}
		closedir(d);
		rmdir(path);
	}
	snprintf(path, sizeof(path), "%s/sitecustomize.py", dir);
	unlink(path);
	rmdir(dir);
}

static int setenv_u64(const char *key, uint64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
	return setenv(key, buf, 1);
}

int tft_cmd_record(int argc, char **argv)
{
	const char *session = NULL, *host = "127.0.0.1", *token = NULL;
	uint64_t port = 9999, every = 0, next = 0;
	int serve = 0, quiet = 0, i, status = 0, rc;
	char pkg[PATH_MAX], hook[PATH_MAX], path[PATH_MAX + 64], cwd[PATH_MAX];
	const char *tmp = getenv("TMPDIR");
	struct sigaction sa, old_int, old_term, old_hup, old_quit;
	pid_t pid;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		if (cli_is_help(a)) {
			fputs(usage_text, stdout);
			return TFT_EXIT_OK;
		}
		if ((!strcmp(a, "-o") || !strcmp(a, "--session")) && v && *v) {
			session = v, i++;
		} else if ((!strcmp(a, "-p") || !strcmp(a, "--port")) && v) {
			if (cli_parse_u64(v, 0, 65535, &port))
				return cli_fail(TFT_EXIT_BADINPUT, "record: bad port '%s'", v);
			i++;
		} else if ((!strcmp(a, "-H") || !strcmp(a, "--host")) && v && *v) {
			host = v, i++;
		} else if (!strcmp(a, "--token") && v && *v) {
			token = v, i++;
		} else if (!strcmp(a, "--trace-every") && v) {
			if (cli_parse_u64(v, 0, 1000000000, &every))
				return cli_fail(TFT_EXIT_BADINPUT, "record: bad --trace-every '%s'", v);
			i++;
		} else if (!strcmp(a, "--trace-next") && v) {
			if (cli_parse_u64(v, 0, 1000000000, &next))
				return cli_fail(TFT_EXIT_BADINPUT, "record: bad --trace-next '%s'", v);
			i++;
		} else if (!strcmp(a, "--serve")) {
			serve = 1;
		} else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
			quiet = 1;
		} else if (a[0] == '-') {
			fputs(usage_text, stderr);
			return cli_fail(TFT_EXIT_BADINPUT, "record: unknown or incomplete option '%s'", a);
		} else {
			break; /* CMD without "--" */
		}
	}
	if (i >= argc) {
		fputs(usage_text, stderr);
		return cli_fail(TFT_EXIT_BADINPUT, "record: no command to run");
	}
	if (!getcwd(cwd, sizeof(cwd)))
		return cli_fail(TFT_EXIT_FAIL, "record: cannot read the working directory: %s",
				strerror(errno));
	if (session && access(session, F_OK) == 0)
		return cli_fail(TFT_EXIT_BADINPUT, "record: %s exists; choose a new session file", session);

	package_dir(pkg, sizeof(pkg));
	snprintf(hook, sizeof(hook), "%s/tftracer-record-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(hook))
		return cli_fail(TFT_EXIT_FAIL, "record: cannot make a temporary directory: %s",
				strerror(errno));
	if ((rc = write_hook(hook)) != 0) {
		remove_hook(hook);
		return cli_fail(TFT_EXIT_FAIL, "record: cannot write %s/sitecustomize.py: %s", hook,
				strerror(-rc));
	}

	/* Ctrl+C reaches the program from the terminal; this process waits for it to end. */
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGQUIT, &sa, &old_quit);
	sa.sa_handler = pass_on;
	sigaction(SIGTERM, &sa, &old_term);
	sigaction(SIGHUP, &sa, &old_hup);

	pid = fork();
	if (pid < 0) {
		remove_hook(hook);
		return cli_fail(TFT_EXIT_FAIL, "record: cannot start %s: %s", argv[i], strerror(errno));
	}
	if (pid == 0) {
		char pp[3 * PATH_MAX];
		const char *old = getenv("PYTHONPATH");

		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGQUIT, &old_quit, NULL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		signal(SIGXFSZ, SIG_DFL);
		if (session)
			snprintf(path, sizeof(path), "%s%s%s", session[0] == '/' ? "" : cwd,
				 session[0] == '/' ? "" : "/", session);
		else
			snprintf(path, sizeof(path), "%s/tftracer-%ld.tft", cwd, (long)getpid());
		snprintf(pp, sizeof(pp), "%s%s%s%s%s", hook, pkg[0] ? ":" : "", pkg,
			 old && *old ? ":" : "", old && *old ? old : "");
		if (setenv("TFT_SESSION", path, 1) || setenv("TFT_RECORD", "1", 1) ||
		    setenv("TFT_RECORD_HOST", host, 1) || setenv_u64("TFT_RECORD_PORT", port) ||
		    setenv_u64("TFT_RECORD_TRACE_EVERY", every) ||
		    setenv_u64("TFT_RECORD_TRACE_NEXT", next) ||
		    (token && setenv("TFT_RECORD_TOKEN", token, 1)) ||
		    (quiet && setenv("TFT_RECORD_QUIET", "1", 1)) || setenv("PYTHONPATH", pp, 1)) {
			fprintf(stderr, "tftracer: record: cannot set the environment\n");
			_exit(TFT_EXIT_FAIL);
		}
		execvp(argv[i], argv + i);
		fprintf(stderr, "tftracer: record: cannot run %s: %s\n", argv[i], strerror(errno));
		_exit(127);
	}
	child_pid = pid;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	child_pid = 0;
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGHUP, &old_hup, NULL);
	remove_hook(hook);

	if (session)
		snprintf(path, sizeof(path), "%s%s%s", session[0] == '/' ? "" : cwd,
			 session[0] == '/' ? "" : "/", session);
	else
		snprintf(path, sizeof(path), "%s/tftracer-%ld.tft", cwd, (long)pid);
	rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	if (access(path, F_OK) != 0) {
		if (!quiet && rc != 127)
			fprintf(stderr, "tftracer: record: %s ended (status %d) without a session file\n",
				argv[i], rc);
		return rc;
	}
	if (!quiet)
		fprintf(stderr, "tftracer: record: %s ended (status %d); session %s\n", argv[i], rc, path);
	if (serve) {
		char serve_cmd[] = "serve";
		char *sargv[] = { serve_cmd, path, NULL };

		return tft_cmd_serve(2, sargv);
	}
	if (!quiet)
		fprintf(stderr, "tftracer: open it with: tftracer %s\n", path);
	return rc;
}
