/* SPDX-License-Identifier: MIT */
/*
 * libtftracer-preload.so: what the library does in any program it is loaded
 * into (LD_PRELOAD, set by `tftracer record`; docs/intercept.md). At load it
 * reads its configuration and sets the interceptors up; the session is
 * claimed by the first use of an intercepted runtime (or at load, for a
 * program that links the runtime itself or when asked). It interposes dlsym
 * so that runtimes the program dlopen()s reach the interceptors too, and the
 * exec family so that a process replacing itself closes its session first
 * (_exit is left alone: it may come from a signal handler, where waiting for
 * the drain could hang the program). A program it cannot trace runs as without it, told so in one line.
 */
#include <alloca.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "intercept/preload.h"
#include "runtime/job.h"
#include "runtime/source.h"

extern char **environ;

struct tft_preload_cfg tft_preload = { .intercept = TFT_ICPT_ALL };

/* ---- the dynamic linker's own functions ------------------------------------------------- */

typedef void *(*dlsym_fn)(void *, const char *);
typedef void *(*dlopen_fn)(const char *, int);

/* glibc's dlsym (read by the x86_64 trampoline below: hidden, so RIP-relative). */
__attribute__((visibility("hidden"))) dlsym_fn tft_preload_dlsym_next;
static _Atomic(dlopen_fn) real_dlopen_fn;

static dlsym_fn resolve_dlsym(void)
{
	dlsym_fn fn = __atomic_load_n(&tft_preload_dlsym_next, __ATOMIC_ACQUIRE);

	if (!fn) {
		/* dlvsym is not interposed: RTLD_NEXT from here is the C library's. */
		fn = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
		if (!fn)
			fn = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
		__atomic_store_n(&tft_preload_dlsym_next, fn, __ATOMIC_RELEASE);
	}
	return fn;
}

void *tft_preload_real_dlsym(void *handle, const char *name)
{
	dlsym_fn fn = resolve_dlsym();

	return fn ? fn(handle, name) : NULL;
}

void *tft_preload_real_dlopen(const char *file, int flags)
{
	dlopen_fn fn = atomic_load_explicit(&real_dlopen_fn, memory_order_acquire);

	if (!fn) {
		fn = (dlopen_fn)dlvsym(RTLD_NEXT, "dlopen", "GLIBC_2.34");
		if (!fn)
			fn = (dlopen_fn)dlvsym(RTLD_NEXT, "dlopen", "GLIBC_2.2.5");
		atomic_store_explicit(&real_dlopen_fn, fn, memory_order_release);
	}
	return fn ? fn(file, flags) : NULL;
}

/*
 * dlsym(handle, name) for a real handle (not RTLD_NEXT / RTLD_DEFAULT, which
 * the trampoline hands straight to glibc so that glibc sees the program's
 * return address): glibc's answer, or the interceptor's wrapper for it.
 */
__attribute__((visibility("hidden"))) void *tft_preload_dlsym_handle(void *handle,
								     const char *name);
void *tft_preload_dlsym_handle(void *handle, const char *name)
{
	void *sym = tft_preload_real_dlsym(handle, name);
	void *wrap;

	if (sym && name && name[0] == 'c' && name[1] == 'l' &&
	    (tft_preload.intercept & TFT_ICPT_OPENCL) &&
	    (wrap = tft_opencl_wrap_symbol(name, sym)) != NULL)
		return wrap;
	return sym;
}

/* dlsym called before the constructor resolved glibc's: resolve, then ask it (the
 * return address glibc sees is then ours; only possible in other libraries' constructors). */
__attribute__((visibility("hidden"))) void *tft_preload_dlsym_early(void *handle,
								    const char *name);
void *tft_preload_dlsym_early(void *handle, const char *name)
{
	return tft_preload_real_dlsym(handle, name);
}

#if defined(__x86_64__)
/*
 * dlsym itself. RTLD_NEXT (-1) and RTLD_DEFAULT (0) depend on who calls: they
 * go to glibc by a jump, with the caller's return address still on the stack.
 */
__asm__(".text\n"
	".globl dlsym\n"
	".type dlsym, @function\n"
	"dlsym:\n"
	"	cmpq $-1, %rdi\n"
	"	je 1f\n"
	"	testq %rdi, %rdi\n"
	"	je 1f\n"
	"	jmp tft_preload_dlsym_handle\n"
	"1:	movq tft_preload_dlsym_next(%rip), %rax\n"
	"	testq %rax, %rax\n"
	"	je 2f\n"
	"	jmp *%rax\n"
	"2:	jmp tft_preload_dlsym_early\n"
	".size dlsym, .-dlsym\n");
#endif

/* ---- messages ---------------------------------------------------------------------- */

void tft_preload_say(int *once, bool failure, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n, e = errno;

	if ((once && __atomic_exchange_n(once, 1, __ATOMIC_RELAXED)) || (!failure && tft_preload.quiet)) {
		errno = e;
		return;
	}
	n = snprintf(line, sizeof(line), "tftracer: %s[%ld]: ", program_invocation_short_name,
		     (long)getpid());
	va_start(ap, fmt);
	if (n > 0 && (size_t)n < sizeof(line))
		n += vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if ((size_t)n >= sizeof(line) - 1)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	if (write(2, line, (size_t)n) < 0) {
		/* nowhere to say it */
	}
	errno = e;
}

/* ---- the session ------------------------------------------------------------------- */

enum { CLAIM_NONE = 0, CLAIM_BUSY = 1, CLAIM_DONE = 2 };
static _Atomic int claim_state;
static int claim_said;

/*
 * A rank of a job whose command named a job directory (TFT_JOB_DIR, set by
 * `tftracer record`): its session is <dir>/rank-<N>.tft, the directory made
 * when absent ('%' doubled for the runtime's path template). 1 when the
 * process is such a rank (path filled in), 0 when not, -1 when its rank's
 * file is a process above it's (TFT_JOB_RANK_TAKEN: a child that inherited
 * its parent's rank is not that rank).
 */
static int job_session(char *path, size_t size)
{
	const char *dir = getenv("TFT_JOB_DIR"), *taken = getenv("TFT_JOB_RANK_TAKEN");
	char raw[4096];
	struct tft_job job;
	size_t n = 0;

	if (!dir || !*dir || tft_job_from_env(&job) < 0)
		return 0;
	if (taken && *taken && strtol(taken, NULL, 10) == job.rank)
		return -1;
	if (tft_job_rank_path(raw, sizeof(raw), dir, job.rank))
		return 0;
	if (mkdir(dir, 0777) != 0 && errno != EEXIST)
		return 0; /* (the runtime then says why the file cannot be made) */
	for (const char *p = raw; *p && n + 3 < size; p++) {
		if (*p == '%')
			path[n++] = '%';
		path[n++] = *p;
	}
	path[n] = 0;
	return 1;
}

bool tft_preload_claim(void)
{
	struct tft_config cfg;
	int expect = CLAIM_NONE, rc, job;
	const char *rec;
	char path[8200];

	if (tft_rt_running())
		return true;
	if (atomic_load_explicit(&claim_state, memory_order_acquire) != CLAIM_NONE)
		return false;
	if (!atomic_compare_exchange_strong_explicit(&claim_state, &expect, CLAIM_BUSY,
						     memory_order_acq_rel, memory_order_acquire))
		return tft_rt_running(); /* another thread is claiming: this call goes untraced */
	rec = getenv("TFT_RECORD");
	job = job_session(path, sizeof(path));
	if (tft_rt_sessions_begun() > 0) {
		/* This process had a session and ended it (the program gave it back): it
		 * is not taken again behind the program's back. */
		rc = 1;
	} else if (job < 0 || (job == 0 && rec && strcmp(rec, "started") == 0)) {
		/* Another process of the command took the session (tftracer record); a rank
		 * of a job directory has a file of its own, unless its parent is that rank. */
		rc = 1;
	} else {
		tft_config_init(&cfg);
		if (job > 0)
			cfg.session_path = path;
		rc = tft_rt_init_owned(&cfg);
		if (rc) {
			struct tft_runtime_stats st = { .struct_size = sizeof(st) };
			tft_stats(&st);
			tft_preload_say(&claim_said, true, "runs untraced: %s",
					st.disabled_reason[0] ? st.disabled_reason : tft_strerror(rc));
		}
	}
	atomic_store_explicit(&claim_state, CLAIM_DONE, memory_order_release);
	return rc == 0 && tft_rt_running();
}

/* A process that replaces or ends itself first closes the session it started. */
static void end_own_session(void)
{
	int e = errno;

	if (tft_rt_running() && tft_rt_session_pid() == (int64_t)getpid())
		tft_rt_shutdown_owned();
	errno = e;
}

/* ---- exec ---------------------------------------------------------------- */

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execv_fn)(const char *, char *const[]);
typedef int (*execvpe_fn)(const char *, char *const[], char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);
typedef int (*execveat_fn)(int, const char *, char *const[], char *const[], int);

static void *next_fn(const char *name)
{
	return tft_preload_real_dlsym(RTLD_NEXT, name);
}

/* argv of an execl-style call: arg0 and the variadic list up to NULL, on the stack
 * (alloca: the caller's frame lives until the exec). */
#define EXECL_ARGV(argv, arg0, ap)                                                        \
	do {                                                                              \
		va_list c_;                                                               \
		size_t n_ = 1;                                                            \
		va_copy(c_, ap);                                                          \
		while (va_arg(c_, const char *) != NULL)                                  \
			n_++;                                                             \
		va_end(c_);                                                               \
		argv = alloca((n_ + 1) * sizeof(char *));                                 \
		argv[0] = (char *)(arg0);                                                 \
		for (size_t i_ = 1; i_ <= n_; i_++)                                       \
			argv[i_] = va_arg(ap, char *);                                    \
	} while (0)

TFT_INTERPOSE int execve(const char *path, char *const argv[], char *const envp[])
{
	execve_fn fn = (execve_fn)next_fn("execve");

	if (!fn) {
		errno = ENOSYS;
		return -1;
	}
	end_own_session();
	return fn(path, argv, envp);
}

TFT_INTERPOSE int execv(const char *path, char *const argv[])
{
	execv_fn fn = (execv_fn)next_fn("execv");

	if (!fn) {
		errno = ENOSYS;
		return -1;
	}
	end_own_session();
	return fn(path, argv);
}

TFT_INTERPOSE int execvp(const char *file, char *const argv[])
{
	execv_fn fn = (execv_fn)next_fn("execvp");

	if (!fn) {
		errno = ENOSYS;
		return -1;
	}
	end_own_session();
	return fn(file, argv);
}

TFT_INTERPOSE int execvpe(const char *file, char *const argv[], char *const envp[])
{
	execvpe_fn fn = (execvpe_fn)next_fn("execvpe");

	if (!fn) {
		errno = ENOSYS;
		return -1;
	}
	end_own_session();
	return fn(file, argv, envp);
}

TFT_INTERPOSE int fexecve(int fd, char *const argv[], char *const envp[])
{
	fexecve_fn fn = (fexecve_fn)next_fn("fexecve");

	if (!fn) {
		errno = ENOSYS;
		return -1;
	}
	end_own_session();
	return fn(fd, argv, envp);
}

TFT_INTERPOSE int execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
			   int flags)
{
	execveat_fn fn = (execveat_fn)next_fn("execveat");

	if (!fn) {
		errno = ENOSYS;
		return -1;
	}
	end_own_session();
	return fn(dirfd, path, argv, envp, flags);
}

TFT_INTERPOSE int execl(const char *path, const char *arg, ...)
{
	char **argv;
	va_list ap;

	va_start(ap, arg);
	EXECL_ARGV(argv, arg, ap);
	va_end(ap);
	return execv(path, argv);
}

TFT_INTERPOSE int execlp(const char *file, const char *arg, ...)
{
	char **argv;
	va_list ap;

	va_start(ap, arg);
	EXECL_ARGV(argv, arg, ap);
	va_end(ap);
	return execvp(file, argv);
}

TFT_INTERPOSE int execle(const char *path, const char *arg, ...)
{
	char **argv, **envp = NULL;
	va_list ap;

	va_start(ap, arg);
	EXECL_ARGV(argv, arg, ap);
	envp = va_arg(ap, char **); /* after the NULL that ends the arguments */
	va_end(ap);
	return execve(path, argv, envp);
}

/* ---- set-up ---------------------------------------------------------------------- */

static uint32_t parse_intercept(const char *v)
{
	uint32_t mask = 0;

	if (!v || !*v)
		return TFT_ICPT_ALL;
	while (*v) {
		size_t n = strcspn(v, ",");
		if (n == 6 && strncmp(v, "opencl", 6) == 0)
			mask |= TFT_ICPT_OPENCL;
		else if (n == 4 && strncmp(v, "cuda", 4) == 0)
			mask |= TFT_ICPT_CUDA;
		else if (n == 3 && strncmp(v, "mpi", 3) == 0)
			mask |= TFT_ICPT_MPI;
		else if (n == 3 && strncmp(v, "all", 3) == 0)
			mask |= TFT_ICPT_ALL;
		/* "none" and unknown names add nothing (`record` checks the names) */
		v += n;
		if (*v == ',')
			v++;
	}
	return mask;
}

__attribute__((constructor)) static void preload_init(void)
{
	const char *start = getenv("TFT_PRELOAD_START");
	const char *root = getenv("TFT_RECORD_ROOT");
	const char *q = getenv("TFT_RECORD_QUIET");
	const char *cs = getenv("TFT_PRELOAD_COUNTERS_SAID");
	int is_root = !root || !*root || strtol(root, NULL, 10) == (long)getpid();
	int e = errno;

	resolve_dlsym();
	tft_preload.intercept = parse_intercept(getenv("TFT_INTERCEPT"));
	tft_preload.quiet = q && strcmp(q, "1") == 0;
	tft_preload.counters_quiet = cs && strcmp(cs, "1") == 0;
	tft_preload.counters = getenv("TFT_COUNTERS");
	if (tft_preload.counters && !*tft_preload.counters)
		tft_preload.counters = NULL;
	tft_opencl_setup();
	tft_counters_setup();
	tft_cupti_setup();
	tft_mpi_setup();
	/*
	 * At load rather than at first use: when asked (counters of the whole
	 * run, in the command's own process), or when the program links the
	 * runtime itself (its zones and steps need the session from the start:
	 * its tft_* calls reach this library's runtime, which comes first).
	 */
	if ((start && strcmp(start, "load") == 0 && is_root) ||
	    tft_preload_real_dlsym(RTLD_NEXT, "tft_init") != NULL)
		tft_preload_claim();
	errno = e;
}
