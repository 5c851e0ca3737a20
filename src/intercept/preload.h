/* SPDX-License-Identifier: MIT */
/*
 * What the interceptors of libtftracer-preload.so share (preload.c): the
 * configuration read from the environment at load, the claim of the session
 * (the first use of an intercepted runtime starts the runtime, once per
 * process), the one-line messages a traced program may get on stderr, and
 * the dynamic linker's own dlopen/dlsym (the library interposes dlsym).
 * See docs/intercept.md.
 */
#ifndef TFT_INTERCEPT_PRELOAD_H
#define TFT_INTERCEPT_PRELOAD_H

#include <stdbool.h>
#include <stdint.h>

/* Symbols the program's calls must reach: everything else stays hidden. */
#define TFT_INTERPOSE __attribute__((visibility("default")))

/* Runtimes to intercept (TFT_INTERCEPT: "opencl,cuda,mpi", "none"; default all). */
enum {
	TFT_ICPT_OPENCL = 1u << 0,
	TFT_ICPT_CUDA = 1u << 1,
	TFT_ICPT_MPI = 1u << 2,
	TFT_ICPT_ALL = TFT_ICPT_OPENCL | TFT_ICPT_CUDA | TFT_ICPT_MPI,
};

struct tft_preload_cfg {
	uint32_t intercept;     /* TFT_ICPT_* */
	bool quiet;             /* TFT_RECORD_QUIET=1: no news, only failures */
	bool counters_quiet;    /* TFT_PRELOAD_COUNTERS_SAID=1: `record` said the refusals */
	const char *counters;   /* borrowed (environment): TFT_COUNTERS, NULL = none */
};

/* Filled once by the library's constructor. */
extern struct tft_preload_cfg tft_preload;

/*
 * Make sure a session runs before an intercepted call records: true when one
 * runs (the program's, or ours, started now: the first use claims the session
 * file, TFT_SESSION). Once per process: a claim that failed, or a session that
 * already ended here, is not tried again (false). Never blocks: a thread that
 * finds another one claiming gets false.
 */
bool tft_preload_claim(void);

/*
 * One line on stderr: "tftracer: PROG[PID]: MSG". `once` (may be NULL): said
 * at most once per flag. Failures are said even when quiet.
 */
void tft_preload_say(int *once, bool failure, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * The dynamic linker's dlsym and dlopen (glibc's own, whatever this library
 * interposes): for resolving the real functions of the runtimes.
 */
void *tft_preload_real_dlsym(void *handle, const char *name);
void *tft_preload_real_dlopen(const char *file, int flags);

/*
 * dlsym(handle, name) of the program found `sym` for `name` in a library it
 * opened: the interceptor's wrapper for it, or NULL (not intercepted).
 * opencl.c; NULL when OpenCL is left out.
 */
void *tft_opencl_wrap_symbol(const char *name, void *sym);

/* Set-up of the parts (called by the constructor, in this order). */
void tft_opencl_setup(void);
void tft_counters_setup(void);
void tft_cupti_setup(void);
void tft_mpi_setup(void);

#endif /* TFT_INTERCEPT_PRELOAD_H */
