/* SPDX-License-Identifier: MIT */
/*
 * tftracer record [options] -- CMD [ARGS...]: run a program with the tracer
 * inside it, without changing the program (docs/cmd-record.md).
 *
 * The program runs as a child with TFT_SESSION (the session file, chosen
 * here and checked not to exist) and the TFT_RECORD_* variables set. A
 * Python program also gets a sitecustomize.py (written to a temporary
 * directory put first on PYTHONPATH, next to the tftracer package built
 * with this binary) that waits for torch.optim and then starts a
 * TracingServer (python/tftracer/_record.py): the web UI is live at
 * --host:--port while it runs, and each PyTorch optimizer step ends a step.
 * A native program that uses the C runtime records into the same session.
 * Any program also runs with the preload library's interceptors (OpenCL,
 * CUDA, counters; record_intercept.c), and a command that left no session
 * gets one of its run.
 *
 * This process waits. Ctrl+C reaches the program from the terminal (both
 * get it; this one ignores a SIGINT or SIGQUIT from the terminal and passes
 * on one that a process sent it); SIGTERM and SIGHUP are passed on. Signals
 * stay blocked from before the hook directory exists until the child's pid
 * is known, so none is lost and the directory never leaks. The exit status
 * is the program's.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
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
#include "cli/record_intercept.h"
#include "cli/record_job.h"

extern char **environ;

static const char usage_text[] =
	"usage: tftracer record [options] -- CMD [ARGS...]\n"
	"\n"
	"Run CMD with the tracer inside it. A Python program that uses PyTorch gets a\n"
	"tracing server (the web UI, live, at http://HOST:PORT/) and one step per\n"
	"optimizer step, without changing a line; a native program that uses the C\n"
	"runtime records into the same session file.\n"
	"\n"
	"options:\n"
	"  -o, --session FILE   the session file, taken as written (default\n"
	"                       tftracer-<pid>.tft here, <pid> this command's); must not exist\n"
	"  -o JOBDIR            a job directory, when a launcher put a rank in the environment\n"
	"                       (mpirun ... tftracer record -o JOBDIR -- prog), or when it ends\n"
	"                       with '/' or is one: each rank writes JOBDIR/rank-<N>.tft\n"
	"  -p, --port N         the UI's port (default 9999; 0, or when taken: any free port)\n"
	"  -H, --host ADDR      address to bind (default 127.0.0.1; others need a token)\n"
	"      --token T        access token (default: generated when the host needs one)\n"
	"      --trace-every K  record the ops of every K-th step (default: none until asked)\n"
	"      --trace-next N   record the ops of the first N steps\n"
	"      --serve          when CMD ends, serve the session (as `tftracer FILE`)\n"
	"      --no-intercept   no interceptors (the program runs without the preload library)\n"
	"      --intercept=LIST the runtimes to intercept: opencl,cuda,mpi (default: all)\n"
	"      --counters[=LIST] hardware and OS counters per op and per step: cycles,\n"
	"                       instructions,cache-misses,branch-misses,task-clock,\n"
	"                       page-faults,context-switches (default: all)\n"
	"  -q, --quiet          no message of its own\n"
	"  -h, --help           this help\n"
	"\n"
	"exit status: CMD's (128+N when signal N ended it); 127 CMD cannot be run;\n"
	"2 bad usage (nothing is run); 1 record itself failed.\n";

static volatile sig_atomic_t child_pid;

/* SIGTERM, SIGHUP: passed on. SIGINT, SIGQUIT: passed on when a process sent them
 * (the terminal sends them to the program itself). */
static void pass_on(int sig, siginfo_t *si, void *uc)
{
	int e = errno;

	(void)uc;
	if (child_pid > 0 &&
	    ((sig != SIGINT && sig != SIGQUIT) || si->si_code == SI_USER || si->si_code == SI_QUEUE))
		kill((pid_t)child_pid, sig);
	errno = e;
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
	/* (a ':' cannot be in a PYTHONPATH entry: the installed package is used then) */
	if (access(probe, R_OK) == 0 && !strchr(exe, ':') && strlen(exe) + 8 <= size)
		snprintf(out, size, "%.*s/python", (int)(size - 8), exe);
}

/*
 * sitecustomize.py for the program: runs the sitecustomize it hides (Debian's,
 * a virtualenv's; never another `tftracer record`'s, which would find this one
 * again), then, where TFT_RECORD=1, installs the tracer's hooks.
 */
#define HOOK_MARK "# Written by `tftracer record`"
static const char sitecustomize[] =
	HOOK_MARK " for the program it runs; removed when it ends.\n"
	"import os as _os, sys as _sys\n"
	"def _chain():\n"
	"    import importlib.machinery, importlib.util\n"
	"    for p in _sys.path:\n"
	"        spec = importlib.machinery.PathFinder.find_spec('sitecustomize', [p or '.'])\n"
	"        if spec is None or spec.loader is None or not spec.origin:\n"
	"            continue\n"
	"        try:\n"
	"            with open(spec.origin, 'rb') as f:\n"
	"                if f.read(" "30" ") == b'" HOOK_MARK "':\n"
	"                    continue\n"
	"        except OSError:\n"
	"            continue\n"
	"        mod = importlib.util.module_from_spec(spec)\n"
	"        spec.loader.exec_module(mod)\n"
	"        _sys.modules['sitecustomize'] = mod\n"
	"        return\n"
	"try:\n"
	"    _chain()\n"
	"except Exception as _e:\n"
	"    _sys.stderr.write('tftracer record: the program\\'s sitecustomize failed: %s\\n' % (_e,))\n"
	"if _os.environ.get('TFT_RECORD') in ('1', 'started'):\n"
	"    try:\n"
	"        from tftracer import _record\n"
	"        _record.install()\n"
	"    except Exception as _e:\n"
	"        _os.environ['TFT_RECORD'] = 'failed'\n"
	"        _sys.stderr.write('tftracer record: tracing is off (%s); the program runs untraced\\n' % (_e,))\n";

_Static_assert(sizeof(HOOK_MARK) - 1 == 30, "the hook reads its mark's 30 bytes");

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

/* The hook and the bytecode interpreters cached for it (__pycache__; a grandchild may
 * still be writing one, hence the tries). */
static void remove_hook(const char *dir)
{
	char path[PATH_MAX + 64], f[2 * PATH_MAX];

	for (int tries = 0; tries < 5; tries++) {
		DIR *d;
		struct dirent *e;

		snprintf(path, sizeof(path), "%s/__pycache__", dir);
		if ((d = opendir(path)) != NULL) {
			while ((e = readdir(d)) != NULL) {
				if (e->d_name[0] == '.')
					continue;
				snprintf(f, sizeof(f), "%s/%s", path, e->d_name);
				unlink(f);
			}
			closedir(d);
			rmdir(path);
		}
		snprintf(path, sizeof(path), "%s/sitecustomize.py", dir);
		unlink(path);
		if (rmdir(dir) == 0 || errno == ENOENT)
			return;
		usleep(20000);
	}
}

/* A temporary directory for the hook under TMPDIR, else /tmp; 0 or -errno. */
static int make_hook_dir(char *out, size_t size)
{
	const char *tmp = getenv("TMPDIR");
	const char *dirs[2] = { tmp && *tmp && !strchr(tmp, ':') ? tmp : "/tmp", "/tmp" };
	int rc = -EINVAL;

	for (int i = 0; i < 2; i++) {
		if (i == 1 && strcmp(dirs[0], "/tmp") == 0)
			break;
		if ((size_t)snprintf(out, size, "%s/tftracer-record-XXXXXX", dirs[i]) >= size)
			continue;
		if (!mkdtemp(out)) {
			rc = -errno;
			continue;
		}
		if ((rc = write_hook(out)) == 0)
			return 0;
		remove_hook(out);
	}
	out[0] = 0;
	return rc;
}

/* The session path (absolute) and its text for TFT_SESSION ('%' doubled: the runtime
 * expands %p and %%, and the file must be the one named here). */
static int session_paths(const char *session, const char *cwd, char *path, size_t psize,
			 char *env, size_t esize)
{
	size_t n = 0;

	if (session) {
		if ((size_t)snprintf(path, psize, "%s%s%s", session[0] == '/' ? "" : cwd,
				     session[0] == '/' ? "" : "/", session) >= psize)
			return -ENAMETOOLONG;
		if (access(path, F_OK) == 0)
			return -EEXIST;
	} else {
		/* tftracer-<pid>.tft, or -2, -3 ... when a file has that name (pids repeat in containers) */
		for (int k = 1;; k++) {
			char sfx[24] = "";

			if (k > 1)
				snprintf(sfx, sizeof(sfx), "-%d", k);
			if ((size_t)snprintf(path, psize, "%s/tftracer-%ld%s.tft", cwd, (long)getpid(), sfx) >=
			    psize)
				return -ENAMETOOLONG;
			if (access(path, F_OK) != 0)
				break;
		}
	}
	for (const char *p = path; *p; p++) {
		if (n + 3 >= esize)
			return -ENAMETOOLONG;
		if (*p == '%')
			env[n++] = '%';
		env[n++] = *p;
	}
	env[n] = 0;
	return 0;
}

/* In the child: the environment the program runs with. */
static int child_env(const char *session_env, const char *hook, const char *pkg, const char *host,
		     uint64_t port, const char *token, uint64_t every, uint64_t next, int quiet,
		     int serve)
{
	const char *old = getenv("PYTHONPATH");
	char num[32], *pp;
	size_t n;

	/* the caller's TFT_RECORD_* (a record around this one, a stale shell) are not this run's */
	for (int again = 1; again;) {
		again = 0;
		for (char **e = environ; *e; e++) {
			if (strncmp(*e, "TFT_RECORD", 10) == 0) {
				char name[128];
				size_t k = strcspn(*e, "=");

				if (k < sizeof(name)) {
					memcpy(name, *e, k);
					name[k] = 0;
					unsetenv(name);
					again = 1;
					break;
				}
			}
		}
	}
	n = strlen(hook) + strlen(pkg) + (old ? strlen(old) : 0) + 3;
	pp = malloc(n);
	if (!pp)
		return -1;
	snprintf(pp, n, "%s%s%s%s%s", hook, hook[0] && pkg[0] ? ":" : "", pkg,
		 old && *old && (hook[0] || pkg[0]) ? ":" : "", old && *old ? old : "");
	if ((pp[0] && setenv("PYTHONPATH", pp, 1)) || setenv("TFT_SESSION", session_env, 1) ||
	    setenv("TFT_RECORD", hook[0] ? "1" : "off", 1) || setenv("TFT_RECORD_HOST", host, 1))
		return -1;
	snprintf(num, sizeof(num), "%llu", (unsigned long long)port);
	if (setenv("TFT_RECORD_PORT", num, 1))
		return -1;
	snprintf(num, sizeof(num), "%llu", (unsigned long long)every);
	if (setenv("TFT_RECORD_TRACE_EVERY", num, 1))
		return -1;
	snprintf(num, sizeof(num), "%llu", (unsigned long long)next);
	if (setenv("TFT_RECORD_TRACE_NEXT", num, 1) || (token && setenv("TFT_RECORD_TOKEN", token, 1)) ||
	    (quiet && setenv("TFT_RECORD_QUIET", "1", 1)) ||
	    /* the live page, when the job ends, can say the session is served next */
	    (serve && setenv("TFT_RECORD_SERVE", "1", 1)))
		return -1;
	return 0;
}

/* The signals passed on to the program. */
static const int fwd[] = { SIGINT, SIGQUIT, SIGTERM, SIGHUP };

/* One record: its options, and the files and environment the program runs with. */
struct rec {
	const char *session, *host, *token;
	uint64_t port, every, next;
	int serve, quiet;
	struct tft_rec_icpt icpt;
	struct tft_rec_job job;
	char pkg[PATH_MAX], hook[PATH_MAX], cwd[PATH_MAX], path[PATH_MAX + 64], session_env[2 * PATH_MAX + 128];
};

#define GO_ON (-1) /* (not an exit status) */

/* The options up to CMD: GO_ON, or the exit status to end with. */
static int parse_options(struct rec *r, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "session", required_argument, NULL, 'o' }, { "port", required_argument, NULL, 'p' },
		{ "host", required_argument, NULL, 'H' },    { "token", required_argument, NULL, 'T' },
		{ "trace-every", required_argument, NULL, 'E' },
		{ "trace-next", required_argument, NULL, 'N' },
		{ "serve", no_argument, NULL, 'S' },         { "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },          TFT_REC_ICPT_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};
	int c, rc;

	optind = 1;
	opterr = 0; /* (cli_bad_option says it in one line) */
	/* '+': options end at CMD (its own options are its own) */
	while ((c = getopt_long(argc, argv, "+o:p:H:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			if (!optarg[0])
				return cli_fail(TFT_EXIT_BADINPUT, "record: -o needs a file name");
			r->session = optarg;
			break;
		case 'p':
			if (cli_parse_u64(optarg, 0, 65535, &r->port))
				return cli_fail(TFT_EXIT_BADINPUT, "record: --port takes 0 to 65535, not '%s'", optarg);
			break;
		case 'H': r->host = optarg; break;
		case 'T': r->token = optarg; break;
		case 'E':
			if (cli_parse_u64(optarg, 0, 1000000000, &r->every))
				return cli_fail(TFT_EXIT_BADINPUT, "record: --trace-every takes a number of steps, not '%s'", optarg);
			break;
		case 'N':
			if (cli_parse_u64(optarg, 0, 1000000000, &r->next))
				return cli_fail(TFT_EXIT_BADINPUT, "record: --trace-next takes a number of steps, not '%s'", optarg);
			break;
		case 'S': r->serve = 1; break;
		case 'q': r->quiet = 1; break;
		case 'h': fputs(usage_text, stdout); return TFT_EXIT_OK;
		case TFT_REC_OPT_NO_INTERCEPT:
		case TFT_REC_OPT_INTERCEPT:
		case TFT_REC_OPT_COUNTERS:
			if ((rc = tft_rec_icpt_option(&r->icpt, c, optarg)) != 0)
				return rc;
			break;
		default: return cli_bad_option("record", argv);
		}
	}
	if (optind >= argc) {
		fputs(usage_text, stderr);
		return cli_fail(TFT_EXIT_BADINPUT, "record: no command to run");
	}
	if (!r->host[0] || (r->token && !r->token[0]))
		return cli_fail(TFT_EXIT_BADINPUT, "record: an empty --host or --token");
	return GO_ON;
}

/* The session file (a job directory's rank or launcher file, or -o, or a new name): GO_ON or the exit status. */
static int choose_session(struct rec *r)
{
	int rc;

	if (!getcwd(r->cwd, sizeof(r->cwd)))
		return cli_fail(TFT_EXIT_FAIL, "record: cannot read the working directory: %s", strerror(errno));
	/* a job directory: this command's file in it (a rank's, or the launcher's) */
	if ((rc = tft_rec_job_prepare(&r->job, r->session, r->cwd, r->path, sizeof(r->path))) != 0)
		return rc;
	if (r->job.on) {
		char own[sizeof(r->path)];
		snprintf(own, sizeof(own), "%s", r->path);
		rc = session_paths(own, r->cwd, r->path, sizeof(r->path), r->session_env, sizeof(r->session_env));
	} else {
		rc = session_paths(r->session, r->cwd, r->path, sizeof(r->path), r->session_env,
				   sizeof(r->session_env));
	}
	if (rc == -EEXIST)
		return cli_fail(TFT_EXIT_BADINPUT, "record: %s exists; choose a new session file", r->path);
	if (rc)
		return cli_fail(TFT_EXIT_BADINPUT, "record: the session file's name is too long");
	return GO_ON;
}

/* In the child: its environment, then the program; never returns. */
static void exec_child(struct rec *r, char **cmd, int pipefd[2], const struct sigaction *old_chld,
		       const sigset_t *oldmask)
{
	int e;

	close(pipefd[0]);
	for (int i = 0; i < 4; i++)
		signal(fwd[i], SIG_DFL);
	sigaction(SIGCHLD, old_chld, NULL);
	signal(SIGXFSZ, SIG_DFL);
	sigprocmask(SIG_SETMASK, oldmask, NULL);
	if (child_env(r->session_env, r->hook, r->pkg, r->host, r->port, r->token, r->every, r->next, r->quiet,
		      r->serve) ||
	    tft_rec_icpt_child_env(&r->icpt) || tft_rec_job_child_env(&r->job)) {
		e = ENOMEM;
	} else {
		execvp(cmd[0], cmd);
		e = errno;
	}
	/* the parent tells "cannot run" from the program's own exit status 127 */
	if (write(pipefd[1], &e, sizeof(e)) < 0)
		_exit(127);
	_exit(127);
}

/* Run cmd as the child and wait for it, signals passed on: GO_ON with its pid, wait status and (where
 * it could not be run) exec errno, or the exit status to end with. */
static int run_child(struct rec *r, char **cmd, pid_t *pidp, int *status, int *exec_errno)
{
	struct sigaction sa, old[4], old_chld;
	sigset_t block, oldmask;
	int pipefd[2], rc;
	ssize_t got;
	pid_t pid;

	if (pipe2(pipefd, O_CLOEXEC) != 0)
		return cli_fail(TFT_EXIT_FAIL, "record: cannot make a pipe to the program: %s", strerror(errno));
	/* Signals wait until the child's pid is known (and the hook directory is never left). */
	sigemptyset(&block);
	for (int i = 0; i < 4; i++)
		sigaddset(&block, fwd[i]);
	sigprocmask(SIG_BLOCK, &block, &oldmask);
	if ((rc = make_hook_dir(r->hook, sizeof(r->hook))) != 0 && !r->quiet)
		fprintf(stderr, "tftracer: record: cannot write the Python hook (%s): a Python program "
				"runs untraced\n", strerror(-rc));
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sa.sa_sigaction = pass_on;
	for (int i = 0; i < 4; i++)
		sigaction(fwd[i], &sa, &old[i]);
	/* an inherited SIG_IGN would reap the child before its status is read */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigaction(SIGCHLD, &sa, &old_chld);

	tft_rec_icpt_prepare(&r->icpt, r->quiet);
	pid = fork();
	if (pid == 0)
		exec_child(r, cmd, pipefd, &old_chld, &oldmask);
	if (pid > 0)
		child_pid = pid;
	close(pipefd[1]);
	sigprocmask(SIG_SETMASK, &oldmask, NULL); /* a pending signal is passed on now */
	if (pid < 0) {
		int e = errno;
		close(pipefd[0]);
		if (r->hook[0])
			remove_hook(r->hook);
		return cli_fail(TFT_EXIT_FAIL, "record: cannot start %s: %s", cmd[0], strerror(e));
	}
	do
		got = read(pipefd[0], exec_errno, sizeof(*exec_errno));
	while (got < 0 && errno == EINTR);
	close(pipefd[0]);
	while ((rc = (int)waitpid(pid, status, 0)) < 0 && errno == EINTR)
		;
	if (rc < 0) {
		int e = errno;
		if (r->hook[0])
			remove_hook(r->hook);
		return cli_fail(TFT_EXIT_FAIL, "record: lost %s: %s", cmd[0], strerror(e));
	}
	child_pid = 0;
	for (int i = 0; i < 4; i++)
		sigaction(fwd[i], &old[i], NULL);
	sigaction(SIGCHLD, &old_chld, NULL);
	if (r->hook[0])
		remove_hook(r->hook);
	if (got == (ssize_t)sizeof(*exec_errno))
		return cli_fail(127, "record: cannot run %s: %s", cmd[0], strerror(*exec_errno));
	*pidp = pid;
	return GO_ON;
}

/* Serve the session just recorded (its own messages; the status stays the program's). */
static void serve_session(struct rec *r)
{
	char portbuf[24], a0[] = "serve", a1[] = "--port", a2[] = "--host", a3[] = "--token";
	char *sargv[9];
	int n = 0;

	snprintf(portbuf, sizeof(portbuf), "%llu", (unsigned long long)r->port);
	sargv[n++] = a0;
	sargv[n++] = a1;
	sargv[n++] = portbuf;
	sargv[n++] = a2;
	sargv[n++] = (char *)r->host;
	if (r->token) {
		sargv[n++] = a3;
		sargv[n++] = (char *)r->token;
	}
	sargv[n++] = r->path;
	sargv[n] = NULL;
	(void)tft_cmd_serve(n, sargv);
}

/* After the program: its ranks' files, the session left (serve it with --serve); returns rc, the program's status. */
static int after_run(struct rec *r, char **cmd, pid_t pid, int rc)
{
	const char *ranks_dir = "";
	int nranks;

	tft_rec_job_children(&r->job, r->path);
	nranks = r->job.rank < 0 ? tft_rec_job_ranks(&r->job, &ranks_dir) : 0;
	if (r->job.on && nranks > 0) {
		/* a launcher below record: its ranks wrote their files */
		if (!r->quiet)
			fprintf(stderr, "tftracer: record: %s ended (status %d); job directory %s: %d "
					"rank file%s\n"
					"tftracer: open it with: tftracer %s\n",
				cmd[0], rc, r->job.dir, nranks, nranks == 1 ? "" : "s", r->job.dir);
		return rc;
	}
	if (nranks > 0 && !r->quiet) /* ranks a recorded process started, beside its session */
		fprintf(stderr, "tftracer: record: its ranks wrote %d file%s in %s\n", nranks,
			nranks == 1 ? "" : "s", ranks_dir);
	tft_rec_icpt_finish(&r->icpt, r->path, cmd, pid, rc, r->quiet); /* a session, whatever ran */
	/* (the file did not exist before: if it does now, this run wrote it) */
	if (access(r->path, F_OK) != 0) {
		if (!r->quiet)
			fprintf(stderr, "tftracer: record: %s ended (status %d) without a session file "
					"(no PyTorch optimizer step, no use of the runtime)\n",
				cmd[0], rc);
		return rc;
	}
	if (!r->quiet)
		fprintf(stderr, "tftracer: record: %s ended (status %d); session %s\n", cmd[0], rc, r->path);
	if (r->serve) {
		serve_session(r);
		return rc;
	}
	if (!r->quiet)
		fprintf(stderr, "tftracer: open it with: tftracer %s\n", r->path);
	return rc;
}

int tft_cmd_record(int argc, char **argv)
{
	struct rec r;
	int status = 0, exec_errno = 0, rc;
	pid_t pid = 0;

	memset(&r, 0, sizeof(r));
	r.host = "127.0.0.1";
	r.port = 9999;
	tft_rec_icpt_init(&r.icpt);
	if ((rc = parse_options(&r, argc, argv)) != GO_ON || (rc = choose_session(&r)) != GO_ON)
		return rc;
	package_dir(r.pkg, sizeof(r.pkg));
	if ((rc = run_child(&r, argv + optind, &pid, &status, &exec_errno)) != GO_ON)
		return rc;
	rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	return after_run(&r, argv + optind, pid, rc);
}
