/* SPDX-License-Identifier: MIT */
/*
 * `tftracer record`: capture from below (docs/cmd-record.md, docs/intercept.md).
 * The program runs with libtftracer-preload.so (found next to this binary)
 * first in LD_PRELOAD and, for CUDA, as the CUDA driver's and NVTX's
 * injection library; the interceptors claim the session when the program
 * first uses a runtime they intercept. Counters asked for are checked here
 * first, so that a refusal is said once for the whole command. A command
 * none of whose processes recorded anything still gets a session: its run
 * (command, time span, exit status, resource use from getrusage).
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/record_intercept.h"
#include "intercept/perf.h"
#include "runtime/job.h"
#include "store/writer.h"

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void tft_rec_icpt_init(struct tft_rec_icpt *o)
{
	memset(o, 0, sizeof(*o));
}

int tft_rec_icpt_option(struct tft_rec_icpt *o, int code, const char *arg)
{
	uint32_t mask;
	const char *bad;
	size_t badlen;

	switch (code) {
	case TFT_REC_OPT_NO_INTERCEPT:
		o->off = 1;
		return 0;
	case TFT_REC_OPT_INTERCEPT:
		for (const char *p = arg; *p;) {
			size_t k = strcspn(p, ",");
			if (!((k == 6 && !strncmp(p, "opencl", 6)) || (k == 4 && !strncmp(p, "cuda", 4)) ||
			      (k == 3 && !strncmp(p, "mpi", 3)) || (k == 3 && !strncmp(p, "all", 3)) ||
			      (k == 4 && !strncmp(p, "none", 4))))
				return cli_fail(TFT_EXIT_BADINPUT,
						"record: --intercept takes opencl, cuda, mpi, all or none "
						"(comma-separated), not '%.*s'",
						(int)k, p);
			p += k;
			if (*p == ',')
				p++;
		}
		if (!*arg || strlen(arg) >= sizeof(o->intercept))
			return cli_fail(TFT_EXIT_BADINPUT, "record: --intercept needs a list of runtimes");
		snprintf(o->intercept, sizeof(o->intercept), "%s", arg);
		return 0;
	case TFT_REC_OPT_COUNTERS:
		if (!arg || !*arg)
			arg = "default";
		if (strlen(arg) >= sizeof(o->counters))
			return cli_fail(TFT_EXIT_BADINPUT, "record: --counters: the list is too long");
		if (tft_perf_parse(arg, &mask, &bad, &badlen))
			return cli_fail(TFT_EXIT_BADINPUT,
					"record: --counters: no counter named '%.*s' (cycles, instructions, "
					"cache-misses, branch-misses, task-clock, page-faults, "
					"context-switches, all)",
					(int)badlen, bad);
		snprintf(o->counters, sizeof(o->counters), "%s", arg);
		return 0;
	default:
		return TFT_EXIT_BADINPUT;
	}
}

#if defined(__SANITIZE_ADDRESS__)
/* An ASan build's library needs the sanitizer runtime first: the one this binary uses. */
static int find_asan(struct dl_phdr_info *info, size_t size, void *data)
{
	char *out = data;

	(void)size;
	if (info->dlpi_name && strstr(info->dlpi_name, "/libasan.so")) {
		snprintf(out, PATH_MAX, "%s", info->dlpi_name);
		return 1;
	}
	return 0;
}
#endif

void tft_rec_icpt_prepare(struct tft_rec_icpt *o, int quiet)
{
	char exe[PATH_MAX], *slash;
	ssize_t n;
	uint32_t mask = 0;
	const char *bad;
	size_t badlen;
	char refused[1024] = "", why[256];
	size_t nref = 0;

	o->t0_ns = mono_ns();
	if (o->off)
		return;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = 0;
		if ((slash = strrchr(exe, '/')) != NULL) {
			*slash = 0;
			if ((size_t)snprintf(o->preload, sizeof(o->preload), "%s/libtftracer-preload.so",
					     exe) >= sizeof(o->preload) ||
			    access(o->preload, R_OK) != 0 || strchr(o->preload, ':') || strchr(o->preload, ' '))
				o->preload[0] = 0;
		}
	}
#ifdef TFT_LIBDIR
	/* installed (make install, the .deb): in the install's library directory */
	if (!o->preload[0] &&
	    ((size_t)snprintf(o->preload, sizeof(o->preload), "%s/libtftracer-preload.so", TFT_LIBDIR) >=
		     sizeof(o->preload) ||
	     access(o->preload, R_OK) != 0 || strchr(o->preload, ':') || strchr(o->preload, ' ')))
		o->preload[0] = 0;
#else
#define TFT_LIBDIR "(no install directory)"
#endif
	if (!o->preload[0]) {
		if (!quiet)
			fprintf(stderr, "tftracer: record: no libtftracer-preload.so next to this binary "
					"or in " TFT_LIBDIR ": OpenCL, CUDA and counters are not recorded\n");
		return;
	}
#if defined(__SANITIZE_ADDRESS__)
	dl_iterate_phdr(find_asan, o->sanitizer);
#endif
#if !defined(TFT_RECORD_CUPTI)
	if (o->intercept[0] && strstr(o->intercept, "cuda") && !quiet)
		fprintf(stderr, "tftracer: record: this build has no CUDA interceptor (no CUPTI headers "
				"when it was built): CUDA is not recorded\n");
#endif
	/* The counters the kernel refuses, said here once for every process of the command. */
	if (o->counters[0] && tft_perf_parse(o->counters, &mask, &bad, &badlen) == 0) {
		for (uint32_t i = 0; i < tft_perf_ndefs; i++) {
			int fd, user_only;
			if (!(mask & (1u << i)))
				continue;
			fd = tft_perf_open_any(&tft_perf_defs[i], 0, &user_only);
			if (fd >= 0) {
				close(fd);
				continue;
			}
			tft_perf_refusal(why, sizeof(why), -fd);
			nref += (size_t)snprintf(refused + nref, sizeof(refused) - nref, "%s%s: %s",
						 nref ? "; " : "", tft_perf_defs[i].name, why);
			if (nref >= sizeof(refused))
				nref = sizeof(refused) - 1;
		}
		if (refused[0])
			fprintf(stderr, "tftracer: record: counters not recorded: %s\n", refused);
		o->counters_said = 1;
	}
}

/* NAME=<first>[:<old value>] */
static int prepend(const char *name, const char *first, const char *sep)
{
	const char *old = getenv(name);
	size_t n;
	char *v;
	int rc;

	if (!old || !*old)
		return setenv(name, first, 1);
	n = strlen(first) + strlen(old) + strlen(sep) + 1;
	v = malloc(n);
	if (!v)
		return -1;
	snprintf(v, n, "%s%s%s", first, sep, old);
	rc = setenv(name, v, 1);
	free(v);
	return rc;
}

int tft_rec_icpt_child_env(const struct tft_rec_icpt *o)
{
	char num[32];

	/* the caller's (a record around this one) are not this run's */
	unsetenv("TFT_INTERCEPT");
	unsetenv("TFT_COUNTERS");
	unsetenv("TFT_PRELOAD_START");
	unsetenv("TFT_PRELOAD_COUNTERS_SAID");
	snprintf(num, sizeof(num), "%ld", (long)getpid()); /* (the program keeps this pid) */
	if (setenv("TFT_RECORD_ROOT", num, 1))
		return -1;
	if (o->off || !o->preload[0])
		return 0;
	if (prepend("LD_PRELOAD", o->preload, ":"))
		return -1;
	if (o->sanitizer[0]) {
		/* the ASan runtime first; leaks of the program are not this run's business */
		if (prepend("LD_PRELOAD", o->sanitizer, ":") || prepend("ASAN_OPTIONS", "detect_leaks=0", ":"))
			return -1;
	}
	if (o->intercept[0] && setenv("TFT_INTERCEPT", o->intercept, 1))
		return -1;
#if defined(TFT_RECORD_CUPTI)
	if (!o->intercept[0] || strstr(o->intercept, "cuda") || strstr(o->intercept, "all")) {
		/* a profiler the caller set up (nsys ...) keeps its injection */
		if (!getenv("CUDA_INJECTION64_PATH") && setenv("CUDA_INJECTION64_PATH", o->preload, 1))
			return -1;
		if (!getenv("NVTX_INJECTION64_PATH") && setenv("NVTX_INJECTION64_PATH", o->preload, 1))
			return -1;
	}
#endif
	/*
	 * (The counters are read in whichever process takes the session; a
	 * command none of whose processes does gets the resource use of all of
	 * them in the session of its run.)
	 */
	if (o->counters[0]) {
		if (setenv("TFT_COUNTERS", o->counters, 1) ||
		    (o->counters_said && setenv("TFT_PRELOAD_COUNTERS_SAID", "1", 1)))
			return -1;
	}
	return 0;
}

/* ---- the session of a program that left none ------------------------------------------ */

static int64_t tv_ns(struct timeval tv)
{
	return (int64_t)tv.tv_sec * 1000000000 + (int64_t)tv.tv_usec * 1000;
}

static int write_run(const struct tft_rec_icpt *o, const char *path, char **cmd, pid_t pid,
		     int code, struct tft_error *err)
{
	struct tft_writer_opts wo = { 0 };
	struct tft_writer *w;
	struct tft_process p;
	struct tft_track t;
	struct tft_event ev;
	struct tft_arg args[10];
	struct rusage ru;
	struct tft_job job;
	char line[4096], host[256], note[160], num[24];
	const char *base = strrchr(cmd[0], '/') ? strrchr(cmd[0], '/') + 1 : cmd[0];
	size_t n = 0;
	int64_t t1 = mono_ns();
	struct timespec rt;
	uint32_t na = 0, track;
	int rc;

	line[0] = 0;
	for (int i = 0; cmd[i] && n + 2 < sizeof(line); i++)
		n += (size_t)snprintf(line + n, sizeof(line) - n, "%s%s", i ? " " : "", cmd[i]);
	if (n >= sizeof(line))
		n = sizeof(line) - 1;
	/* (the children waited for: the program, and its own children it waited for) */
	if (getrusage(RUSAGE_CHILDREN, &ru) != 0)
		memset(&ru, 0, sizeof(ru));
	if (gethostname(host, sizeof(host)) != 0)
		host[0] = 0;
	host[sizeof(host) - 1] = 0;
	clock_gettime(CLOCK_REALTIME, &rt);
	w = tft_writer_open(path, &wo, err);
	if (!w)
		return err->code ? err->code : TFT_EIO;
	memset(&p, 0, sizeof(p));
	p.name = tft_writer_intern_cstr(w, base);
	p.host = tft_writer_intern_cstr(w, host);
	p.pid = pid;
	p.rank = tft_job_from_env(&job); /* (a rank of a job: its launcher said so) */
	memset(&t, 0, sizeof(t));
	t.process = tft_writer_add_process(w, &p);
	t.kind = TFT_TRACK_THREAD;
	t.name = p.name;
	t.tid = pid;
	track = t.process == TFT_NONE ? TFT_NONE : tft_writer_add_track(w, &t);
	if (track == TFT_NONE) {
		tft_writer_abort(w);
		cli_remove_session_file(path);
		return tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
	}
#define ARG_INT(k, val)                                              \
	do {                                                         \
		args[na].key = tft_writer_intern_cstr(w, k);         \
		args[na].type = TFT_ARG_INT;                         \
		args[na++].v.i = (int64_t)(val);                     \
	} while (0)
	args[na].key = tft_writer_intern_cstr(w, "command");
	args[na].type = TFT_ARG_STR;
	args[na++].v.str = tft_writer_intern(w, line, n);
	ARG_INT("exit_status", code);
	ARG_INT("user_time_ns", tv_ns(ru.ru_utime));
	ARG_INT("system_time_ns", tv_ns(ru.ru_stime));
	ARG_INT("max_rss_kb", ru.ru_maxrss);
	ARG_INT("minor_faults", ru.ru_minflt);
	ARG_INT("major_faults", ru.ru_majflt);
	ARG_INT("voluntary_switches", ru.ru_nvcsw);
	ARG_INT("involuntary_switches", ru.ru_nivcsw);
#undef ARG_INT
	memset(&ev, 0, sizeof(ev));
	ev.kind = TFT_EV_SLICE;
	ev.track = track;
	ev.ts_ns = o->t0_ns;
	ev.dur_ns = t1 > o->t0_ns ? t1 - o->t0_ns : 0;
	ev.name = p.name;
	ev.cat = tft_writer_intern_cstr(w, "record");
	ev.count = 1;
	ev.nargs = (uint16_t)na;
	ev.args = args;
	snprintf(note, sizeof(note), "no process of the command recorded anything: its run only");
	rc = tft_writer_append(w, &ev);
	if (!rc)
		rc = tft_writer_set_meta(w, "format", "tftracer-record");
	if (!rc)
		rc = tft_writer_set_meta(w, "producer", "tftracer record " TFT_VERSION_STRING);
	if (!rc)
		rc = tft_writer_set_meta(w, "clock_domain", "CLOCK_MONOTONIC");
	if (!rc)
		rc = tft_writer_set_meta(w, "record_note", note);
	if (!rc && job.rank >= 0) {
		snprintf(num, sizeof(num), "%d", job.rank);
		rc = tft_writer_set_meta(w, "job_rank", num);
		snprintf(num, sizeof(num), "%d", job.size);
		if (!rc && job.size >= 0)
			rc = tft_writer_set_meta(w, "job_size", num);
		if (!rc)
			rc = tft_writer_set_meta(w, "job_id", job.id);
	}
	if (!rc)
		rc = tft_writer_add_count(w, TFT_COUNT_REALTIME_OFFSET_NS,
					  ((int64_t)rt.tv_sec * 1000000000 + rt.tv_nsec) - t1);
	if (!rc)
		rc = tft_writer_add_count(w, TFT_COUNT_DROPPED, 0);
	if (rc) {
		tft_writer_abort(w);
		cli_remove_session_file(path);
		return tft_error_set(err, rc, -1, "cannot write the session");
	}
	rc = tft_writer_close(w, err);
	if (rc)
		cli_remove_session_file(path);
	return rc;
}

int tft_rec_icpt_finish(const struct tft_rec_icpt *o, const char *path, char **cmd, pid_t pid,
			int code, int quiet)
{
	struct tft_error err;

	if (access(path, F_OK) == 0)
		return 0; /* a process of the command recorded */
	tft_error_clear(&err);
	if (write_run(o, path, cmd, pid, code, &err)) {
		if (!quiet)
			fprintf(stderr, "tftracer: record: cannot write the session of the run to %s: %s\n",
				path, err.msg[0] ? err.msg : tft_strerror(err.code));
		return -1;
	}
	return 1;
}
