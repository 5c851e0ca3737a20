/* SPDX-License-Identifier: MIT */
/*
 * Runtime control: tft_init / tft_shutdown / tft_flush, the state word the
 * inline gates read, steps and on-demand tracing, statistics, and the fork
 * and exit handlers. Nothing here is on the recording hot path.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "runtime/rt.h"
#include "runtime/source.h"

/* ---- globals shared with emit.c and drain.c (see rt.h) ----------------------------- */

TFT_API int tft_rt_state;
_Atomic int tft_rt_use_tsc;
struct tft_rt_thread *_Atomic tft_rt_threads;
_Atomic uint64_t tft_rt_lost;
_Atomic int tft_rt_wake;
_Atomic size_t tft_rt_ring_bytes;
_Atomic uint32_t tft_rt_max_threads;
_Atomic uint32_t tft_rt_nthreads;
_Atomic uint32_t tft_rt_generation;
pthread_key_t tft_rt_key;
_Atomic(tft_rt_zone_hook_fn) tft_rt_zone_hook;
_Atomic(tft_rt_step_hook_fn) tft_rt_step_hook;
const char *const *_Atomic tft_rt_value_names;
_Atomic uint32_t tft_rt_value_count;

#define DEF_FLUSH_MS 100u
#define MAX_FLUSH_MS 250u
#define DEF_RING_BYTES ((size_t)1 << 20)
#define MIN_RING_BYTES ((size_t)4 << 10)
#define MAX_RING_BYTES ((size_t)1 << 30)
#define DEF_MAX_THREADS 256u
#define DEF_EXIT_MS 1000u
#define DEF_HOLD_MS 1000u
#define DEF_IMPORT_HOLD_MS 10000u
#define MAX_IMPORT_HOLD_MS 600000u
#define RELEASED_MAX 64u

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int once_rc;

/*
 * Lock order: ctl_lock, work_lock, drain_lock, stats_lock, hold_lock, then meta.c's
 * (fork_prepare takes all six). The recording path takes none of them.
 */
static pthread_mutex_t ctl_lock = PTHREAD_MUTEX_INITIALIZER; /* init, shutdown, fork */
static pthread_mutex_t work_lock = PTHREAD_MUTEX_INITIALIZER; /* held by the drain while it works */
static pthread_mutex_t drain_lock = PTHREAD_MUTEX_INITIALIZER; /* the drain handshake below */
static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER; /* the stats block below */
static pthread_mutex_t hold_lock = PTHREAD_MUTEX_INITIALIZER; /* the releases below */
static pthread_cond_t drain_cond; /* drain waits: stop / flush request (CLOCK_MONOTONIC) */
static pthread_cond_t done_cond;  /* shutdown / flush wait: work done (CLOCK_MONOTONIC) */

/* Control, under ctl_lock. */
static struct {
	struct tft_rt_session *s; /* owned while a session runs (the drain borrows it) */
	pthread_t drain;
	uint32_t exit_timeout_ms;
	int atexit_done;
	int owned; /* the session was started by tft_rt_init_owned (the preload library) */
	_Atomic int64_t pid; /* the process that started the running session, 0 when none */
	struct tft_rt_thread *orphans; /* fork child: the parent's rings, unmapped at next init */
} ctl;

static _Atomic uint32_t sessions_begun; /* tft_rt_sessions_begun */

/* Drain handshake, under drain_lock. */
static struct {
	int running;   /* a drain thread exists (maybe orphaned by a timed-out shutdown) */
	int stop;      /* asked to finish */
	int finished;  /* finish() returned */
	int orphaned;  /* shutdown gave up waiting: the drain frees its session itself */
	int final_rc;
	int flush_rc;
	uint64_t flush_req, flush_served;
	struct tft_rt_session *s; /* the running drain's session (for orphan cleanup) */
} dr;

/* Statistics, under stats_lock. */
static struct {
	struct tft_rt_snapshot snap;
	int state;
	int status;
	char reason[200];
	char path[4096];
	int have_path;
} st;

static _Atomic int64_t step_next;
static _Atomic int64_t step_cur = -1;
static _Atomic int demand_left;

/*
 * Holds for imports (tft_rt_import_hold): the open step whose end holds its
 * thread (-1: none), whether the running session holds at all, and the
 * releases the drain has not met yet (under hold_lock, oldest first).
 */
static _Atomic int64_t hold_step = -1;
static _Atomic int hold_on;
static struct {
	int64_t step[RELEASED_MAX];
	uint32_t n;
} rel;

/* ---- state word ---------------------------------------------------------------------- */

/*
 * Set and clear bits of tft_rt_state, keeping TFT_RT_OPS = STEPS && (TRACING
 * || DEMAND). Release: what was set up before (ring size, key, clock) is
 * visible to a registering thread's acquire load (emit.c, thread_register).
 */
static unsigned state_update(unsigned set, unsigned clear)
{
	int old = __atomic_load_n(&tft_rt_state, __ATOMIC_RELAXED), nw;

	do {
		unsigned v = (((unsigned)old & ~clear) | set) & ~TFT_RT_OPS;
		if ((v & TFT_RT_STEPS) && (v & (TFT_RT_TRACING | TFT_RT_DEMAND)))
			v |= TFT_RT_OPS;
		nw = (int)v;
	} while (!__atomic_compare_exchange_n(&tft_rt_state, &old, nw, 1, __ATOMIC_RELEASE,
					      __ATOMIC_RELAXED));
	return (unsigned)nw;
}

/* ---- time helpers ------------------------------------------------------------------- */

static void deadline_after(struct timespec *ts, int64_t ns_from_now)
{
	int64_t t = tft_rt_mono_ns() + ns_from_now;

	ts->tv_sec = t / 1000000000;
	ts->tv_nsec = t % 1000000000;
}

static void set_reason(int state, int status, const char *reason)
{
	size_t n = reason ? strnlen(reason, sizeof(st.reason) - 1) : 0;

	pthread_mutex_lock(&stats_lock);
	st.state = state;
	st.status = status;
	memcpy(st.reason, reason ? reason : "", n);
	st.reason[n] = 0;
	pthread_mutex_unlock(&stats_lock);
}

/* ---- fork and exit --------------------------------------------------------------------- */

/*
 * Every runtime lock is held across fork (in lock order), so the child gets
 * them all unlocked and consistent: no init/shutdown in flight, no drain
 * cycle mid-call (SQLite's state and its mutexes are copied at rest).
 */
static void fork_prepare(void)
{
	pthread_mutex_lock(&ctl_lock);
	pthread_mutex_lock(&work_lock);
	pthread_mutex_lock(&drain_lock);
	pthread_mutex_lock(&stats_lock);
	pthread_mutex_lock(&hold_lock);
	tft_rt_meta_lock();
}

static void fork_parent(void)
{
	tft_rt_meta_unlock();
	pthread_mutex_unlock(&hold_lock);
	pthread_mutex_unlock(&stats_lock);
	pthread_mutex_unlock(&drain_lock);
	pthread_mutex_unlock(&work_lock);
	pthread_mutex_unlock(&ctl_lock);
}

static void cond_init(pthread_cond_t *c)
{
	pthread_condattr_t a;

	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(c, &a);
	pthread_condattr_destroy(&a);
}

static void fork_child(void)
{
	struct tft_rt_thread *list;

	/*
	 * Only this thread exists here: the drain thread and every ring belong
	 * to the parent. Stop recording, forget them (the rings are unmapped at
	 * the next tft_init; the writer and its file descriptors are the
	 * parent's and are never touched), and start from scratch.
	 */
	__atomic_store_n(&tft_rt_state, 0, __ATOMIC_RELAXED);
	tft_rt_emit_forget_self();
	list = atomic_exchange_explicit(&tft_rt_threads, NULL, memory_order_relaxed);
	if (list) {
		struct tft_rt_thread *last = list;
		while (atomic_load_explicit(&last->next, memory_order_relaxed))
			last = atomic_load_explicit(&last->next, memory_order_relaxed);
		atomic_store_explicit(&last->next, ctl.orphans, memory_order_relaxed);
		ctl.orphans = list;
	}
	atomic_store_explicit(&tft_rt_nthreads, 0, memory_order_relaxed);
	atomic_store_explicit(&tft_rt_wake, 0, memory_order_relaxed);
	ctl.s = NULL;
	ctl.owned = 0;
	atomic_store_explicit(&ctl.pid, 0, memory_order_relaxed);
	memset(&dr, 0, sizeof(dr));
	atomic_store_explicit(&step_cur, -1, memory_order_relaxed);
	atomic_store_explicit(&demand_left, 0, memory_order_relaxed);
	atomic_store_explicit(&hold_step, -1, memory_order_relaxed);
	atomic_store_explicit(&hold_on, 0, memory_order_relaxed);
	rel.n = 0;
	/* The parent's drain thread may have been waiting on these: start afresh. */
	cond_init(&drain_cond);
	cond_init(&done_cond);
	st.state = TFT_RUNTIME_OFF;
	tft_rt_meta_unlock(); /* (the parent's values waiting are forgotten at the next init) */
	pthread_mutex_unlock(&hold_lock);
	pthread_mutex_unlock(&stats_lock);
	pthread_mutex_unlock(&drain_lock);
	pthread_mutex_unlock(&work_lock);
	pthread_mutex_unlock(&ctl_lock);
}

static int shutdown_session(void);

static void at_exit(void)
{
	shutdown_session(); /* whoever started it: the process ends */
}

static void global_init(void)
{
	cond_init(&drain_cond);
	cond_init(&done_cond);
	if (pthread_key_create(&tft_rt_key, tft_rt_thread_exit) != 0) {
		once_rc = TFT_ENOMEM;
		return;
	}
	if (pthread_atfork(fork_prepare, fork_parent, fork_child) != 0)
		once_rc = TFT_ENOMEM;
}

/* ---- drain handshake (called by the drain thread) ------------------------------------------ */

void tft_rt_work_begin(void)
{
	pthread_mutex_lock(&work_lock);
}

void tft_rt_work_end(void)
{
	pthread_mutex_unlock(&work_lock);
}

int tft_rt_drain_wait(int64_t until_ns, uint64_t *flush_seq)
{
	struct timespec ts = { until_ns / 1000000000, until_ns % 1000000000 };
	int flags;

	pthread_mutex_lock(&drain_lock);
	while (!dr.stop && dr.flush_req == dr.flush_served && tft_rt_mono_ns() < until_ns)
		if (pthread_cond_timedwait(&drain_cond, &drain_lock, &ts) == ETIMEDOUT)
			break;
	flags = (dr.stop ? TFT_RT_WAIT_STOP : 0) |
		(dr.flush_req != dr.flush_served ? TFT_RT_WAIT_FLUSH : 0);
	*flush_seq = dr.flush_req;
	pthread_mutex_unlock(&drain_lock);
	return flags;
}

void tft_rt_drain_done(uint64_t seq, int final, int rc)
{
	struct tft_rt_session *orphan = NULL;

	pthread_mutex_lock(&drain_lock);
	if (seq > dr.flush_served) {
		dr.flush_served = seq;
		dr.flush_rc = rc;
	}
	if (final) {
		dr.finished = 1;
		dr.final_rc = rc;
		if (dr.orphaned) { /* nobody will join us: clean up and leave */
			orphan = dr.s;
			dr.s = NULL;
			dr.running = 0;
		}
	}
	pthread_cond_broadcast(&done_cond);
	pthread_mutex_unlock(&drain_lock);
	tft_rt_session_destroy(orphan);
}

void tft_rt_publish_stats(const struct tft_rt_snapshot *snap)
{
	pthread_mutex_lock(&stats_lock);
	st.snap = *snap;
	pthread_mutex_unlock(&stats_lock);
}

void tft_rt_disable(int status, const char *reason)
{
	/* The reason first: whoever sees tracing stop finds it in tft_stats. */
	set_reason(TFT_RUNTIME_DISABLED, status, reason);
	state_update(0, TFT_RT_STEPS | TFT_RT_OPS);
}

/* The session of the tft_rt_with_writer call running on this thread, or NULL. */
static _Thread_local struct tft_rt_session *with_s;

int tft_rt_with_writer(int (*fn)(void *ctx, struct tft_writer *w), void *ctx)
{
	int rc;

	pthread_mutex_lock(&ctl_lock);
	if (!ctl.s) {
		pthread_mutex_unlock(&ctl_lock);
		return TFT_EINVAL;
	}
	pthread_mutex_lock(&work_lock);
	with_s = ctl.s;
	rc = tft_rt_session_with_writer(ctl.s, fn, ctx);
	with_s = NULL;
	pthread_mutex_unlock(&work_lock);
	pthread_mutex_unlock(&ctl_lock);
	return rc;
}

/* Inside fn of tft_rt_with_writer (with_s is this thread's): the drain is excluded. */
int64_t tft_rt_thread_floor(int64_t tid)
{
	struct tft_rt_session *s = with_s;

	return s ? tft_rt_session_thread_floor(s, tid) : INT64_MAX;
}

void tft_rt_track_appended(uint32_t track, int64_t ts)
{
	struct tft_rt_session *s = with_s;

	if (s)
		tft_rt_session_track_appended(s, track, ts);
}

/* ---- holding a thread for an import (rt.h) ------------------------------------------------ */

int tft_rt_import_hold(int64_t step)
{
	if (step < 0 || !atomic_load_explicit(&hold_on, memory_order_relaxed) ||
	    !(tft_rt_state_load() & TFT_RT_STEPS) ||
	    atomic_load_explicit(&step_cur, memory_order_relaxed) != step)
		return TFT_EINVAL;
	atomic_store_explicit(&hold_step, step, memory_order_relaxed);
	/* (the step may have ended meanwhile: its end took no hold, the next step's
	 * index differs, and tft_step_end compares) */
	return 0;
}

void tft_rt_import_release(int64_t step)
{
	if (step < 0)
		return;
	pthread_mutex_lock(&hold_lock);
	if (rel.n == RELEASED_MAX) { /* never met: the oldest goes */
		memmove(&rel.step[0], &rel.step[1], sizeof(rel.step[0]) * (RELEASED_MAX - 1));
		rel.n--;
	}
	rel.step[rel.n++] = step;
	pthread_mutex_unlock(&hold_lock);
	/* A hint the drain polls every 2 ms: the held thread goes on at once. */
	atomic_store_explicit(&tft_rt_wake, 1, memory_order_relaxed);
}

int tft_rt_import_released(int64_t step)
{
	int found = 0;

	pthread_mutex_lock(&hold_lock);
	for (uint32_t i = 0; i < rel.n; i++) {
		if (rel.step[i] == step) {
			memmove(&rel.step[i], &rel.step[i + 1], sizeof(rel.step[0]) * (rel.n - i - 1));
			rel.n--;
			found = 1;
			break;
		}
	}
	pthread_mutex_unlock(&hold_lock);
	return found;
}

/* ---- configuration ----------------------------------------------------------------- */

TFT_API void tft_config_init(struct tft_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->struct_size = sizeof(*cfg);
	cfg->flush_interval_ms = DEF_FLUSH_MS;
	cfg->buffer_bytes = DEF_RING_BYTES;
	cfg->enabled = true;
	cfg->max_threads = DEF_MAX_THREADS;
	cfg->exit_timeout_ms = DEF_EXIT_MS;
	cfg->max_hold_ms = DEF_HOLD_MS;
	cfg->clock = TFT_CLOCK_AUTO;
}

/* Expand "%p" (pid) and "%%" in a session path template. */
static int expand_path(char *out, size_t size, const char *tmpl)
{
	size_t n = 0;

	for (const char *p = tmpl; *p; p++) {
		char num[32];
		const char *add = num;
		size_t len;
		if (p[0] == '%' && p[1] == 'p') {
			snprintf(num, sizeof(num), "%ld", (long)getpid());
			p++;
		} else if (p[0] == '%' && p[1] == '%') {
			num[0] = '%';
			num[1] = 0;
			p++;
		} else {
			num[0] = *p;
			num[1] = 0;
		}
		len = strlen(add);
		if (n + len >= size)
			return TFT_EINVAL;
		memcpy(out + n, add, len);
		n += len;
	}
	out[n] = 0;
	return n ? 0 : TFT_EINVAL;
}

static size_t ring_size(size_t want)
{
	size_t n = MIN_RING_BYTES;

	if (want == 0)
		want = DEF_RING_BYTES;
	if (want > MAX_RING_BYTES)
		want = MAX_RING_BYTES;
	while (n < want)
		n <<= 1;
	return n;
}

static int settings_from(const struct tft_config *c, struct tft_rt_settings *s)
{
	const char *path = c->session_path;
	const char *env_clock = getenv("TFT_CLOCK");
	const char *env_hold = getenv("TFT_IMPORT_HOLD_MS");
	int mode = c->clock;

	memset(s, 0, sizeof(*s));
	if (!path || !*path)
		path = getenv("TFT_SESSION");
	if (!path || !*path)
		path = "tftracer-%p.tft";
	if (expand_path(s->path, sizeof(s->path), path))
		return TFT_EINVAL;
	s->flush_ms = c->flush_interval_ms ? c->flush_interval_ms : DEF_FLUSH_MS;
	if (s->flush_ms > MAX_FLUSH_MS)
		s->flush_ms = MAX_FLUSH_MS;
	s->hold_ms = c->max_hold_ms ? c->max_hold_ms : DEF_HOLD_MS;
	s->exit_timeout_ms = c->exit_timeout_ms ? c->exit_timeout_ms : DEF_EXIT_MS;
	s->ring_bytes = ring_size(c->buffer_bytes);
	s->import_hold_ms = DEF_IMPORT_HOLD_MS;
	if (env_hold && *env_hold) {
		char *end;
		unsigned long v;
		errno = 0;
		v = strtoul(env_hold, &end, 10);
		if (!errno && !*end && env_hold[0] != '-')
			s->import_hold_ms = v > MAX_IMPORT_HOLD_MS ? MAX_IMPORT_HOLD_MS : (uint32_t)v;
	}
	if (mode == TFT_CLOCK_AUTO && env_clock) {
		if (strcmp(env_clock, "monotonic") == 0)
			mode = TFT_CLOCK_MONOTONIC;
		else if (strcmp(env_clock, "tsc") == 0)
			mode = TFT_CLOCK_TSC;
	}
	s->want_tsc = mode != TFT_CLOCK_MONOTONIC;
	return 0;
}

/* ---- init / shutdown / flush ---------------------------------------------------------- */

static void free_orphans(void)
{
	struct tft_rt_thread *t = ctl.orphans, *n;

	for (; t; t = n) {
		n = atomic_load_explicit(&t->next, memory_order_relaxed);
		/* t->ds belongs to the parent's drain session: leaked with it, never used. */
		tft_rt_thread_free(t);
	}
	ctl.orphans = NULL;
}

static int init_session(const struct tft_config *cfg, int owned);

TFT_API int tft_init(const struct tft_config *cfg)
{
	return init_session(cfg, 0);
}

int tft_rt_init_owned(const struct tft_config *cfg)
{
	return init_session(cfg, 1);
}

static int init_session(const struct tft_config *cfg, int owned)
{
	struct tft_config c;
	struct tft_rt_settings set;
	struct tft_rt_session *s;
	struct tft_error err;
	sigset_t all, old;
	int rc, busy;

	pthread_once(&once, global_init);
	if (once_rc) {
		set_reason(TFT_RUNTIME_DISABLED, once_rc, "cannot create the thread key");
		return once_rc;
	}
	if (cfg && cfg->struct_size < offsetof(struct tft_config, max_threads)) {
		set_reason(TFT_RUNTIME_DISABLED, TFT_EINVAL, "tft_config.struct_size too small");
		return TFT_EINVAL;
	}
	tft_config_init(&c);
	if (cfg)
		memcpy(&c, cfg, cfg->struct_size < sizeof(c) ? cfg->struct_size : sizeof(c));
	if (settings_from(&c, &set)) {
		set_reason(TFT_RUNTIME_DISABLED, TFT_EINVAL, "bad session path");
		return TFT_EINVAL;
	}

	pthread_mutex_lock(&ctl_lock);
	if (ctl.s && ctl.owned && !owned) {
		/*
		 * The preload library (tftracer record) started the session before
		 * the program did: the program's zones and steps join it, and its
		 * wish for op-level tracing is applied.
		 */
		if (c.enabled)
			state_update(TFT_RT_TRACING, 0);
		else
			state_update(0, TFT_RT_TRACING);
		pthread_mutex_unlock(&ctl_lock);
		return 0;
	}
	if (ctl.s) {
		pthread_mutex_unlock(&ctl_lock);
		return TFT_EINVAL; /* already running: the running session's stats stay */
	}
	pthread_mutex_lock(&drain_lock);
	busy = dr.running;
	pthread_mutex_unlock(&drain_lock);
	if (busy) {
		pthread_mutex_unlock(&ctl_lock);
		return TFT_EAGAIN;
	}
	free_orphans();
	tft_rt_meta_clear(); /* tft_set_meta values of an earlier session that missed it */

	tft_error_clear(&err);
	s = tft_rt_session_create(&set, &err);
	if (!s) {
		char reason[4800];
		rc = err.code ? err.code : TFT_EIO;
		snprintf(reason, sizeof(reason), "cannot create session %s: %s", set.path, err.msg);
		set_reason(TFT_RUNTIME_DISABLED, rc, reason);
		pthread_mutex_unlock(&ctl_lock);
		return rc;
	}
	pthread_mutex_lock(&stats_lock);
	memset(&st.snap, 0, sizeof(st.snap));
	st.state = TFT_RUNTIME_RUNNING;
	st.status = 0;
	st.reason[0] = 0;
	snprintf(st.path, sizeof(st.path), "%s", set.path);
	st.have_path = 1;
	pthread_mutex_unlock(&stats_lock);

	atomic_store_explicit(&tft_rt_ring_bytes, set.ring_bytes, memory_order_relaxed);
	atomic_store_explicit(&tft_rt_max_threads, c.max_threads ? c.max_threads : DEF_MAX_THREADS,
			      memory_order_relaxed);
	atomic_store_explicit(&step_next, 0, memory_order_relaxed);
	atomic_store_explicit(&step_cur, -1, memory_order_relaxed);
	atomic_store_explicit(&demand_left, 0, memory_order_relaxed);
	atomic_store_explicit(&hold_step, -1, memory_order_relaxed);
	atomic_store_explicit(&hold_on, set.import_hold_ms > 0, memory_order_relaxed);
	pthread_mutex_lock(&hold_lock);
	rel.n = 0;
	pthread_mutex_unlock(&hold_lock);
	tft_rt_session_adopt_threads(s);

	pthread_mutex_lock(&drain_lock);
	memset(&dr, 0, sizeof(dr));
	dr.running = 1;
	dr.s = s;
	pthread_mutex_unlock(&drain_lock);
	/* The drain thread never runs the host's signal handlers. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&ctl.drain, NULL, tft_rt_drain_main, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		pthread_mutex_lock(&drain_lock);
		dr.running = 0;
		dr.s = NULL;
		pthread_mutex_unlock(&drain_lock);
		tft_rt_session_destroy(s);
		unlink(set.path);
		set_reason(TFT_RUNTIME_DISABLED, TFT_ENOMEM, "cannot start the drain thread");
		pthread_mutex_unlock(&ctl_lock);
		return TFT_ENOMEM;
	}
	pthread_setname_np(ctl.drain, "tft-drain");
	ctl.s = s;
	ctl.owned = owned;
	atomic_store_explicit(&ctl.pid, (int64_t)getpid(), memory_order_relaxed);
	atomic_fetch_add_explicit(&sessions_begun, 1, memory_order_relaxed);
	ctl.exit_timeout_ms = set.exit_timeout_ms;
	atomic_fetch_add_explicit(&tft_rt_generation, 1, memory_order_relaxed); /* ends refusals */
	state_update(TFT_RT_STEPS | (c.enabled ? TFT_RT_TRACING : 0),
		     TFT_RT_TRACING | TFT_RT_DEMAND);
	if (!ctl.atexit_done && atexit(at_exit) == 0)
		ctl.atexit_done = 1;
	pthread_mutex_unlock(&ctl_lock);
	return 0;
}

TFT_API int tft_shutdown(void)
{
	uint32_t wait_ms;

	pthread_mutex_lock(&ctl_lock);
	if (ctl.s && ctl.owned) {
		/* The preload library's session outlives the program's use of it: commit only. */
		wait_ms = ctl.exit_timeout_ms;
		pthread_mutex_unlock(&ctl_lock);
		return tft_flush(wait_ms) == TFT_EAGAIN ? TFT_EAGAIN : 0;
	}
	pthread_mutex_unlock(&ctl_lock);
	return shutdown_session();
}

int tft_rt_shutdown_owned(void)
{
	return shutdown_session();
}

uint32_t tft_rt_sessions_begun(void)
{
	return atomic_load_explicit(&sessions_begun, memory_order_relaxed);
}

int64_t tft_rt_session_pid(void)
{
	/* (read without the lock: a vfork child's exec must not wait on its parent's lock) */
	return atomic_load_explicit(&ctl.pid, memory_order_relaxed);
}

bool tft_rt_running(void)
{
	return (tft_rt_state_load() & TFT_RT_STEPS) != 0;
}

void tft_rt_set_hooks(tft_rt_zone_hook_fn zone, tft_rt_step_hook_fn step)
{
	atomic_store_explicit(&tft_rt_zone_hook, zone, memory_order_relaxed);
	atomic_store_explicit(&tft_rt_step_hook, step, memory_order_relaxed);
}

void tft_rt_counters_describe(const char *const *names, uint32_t n)
{
	if (n > TFT_RT_MAX_VALUES)
		n = TFT_RT_MAX_VALUES;
	/* Release: the names are visible before their count; pairs with the drain's acquire. */
	atomic_store_explicit(&tft_rt_value_names, names, memory_order_relaxed);
	atomic_store_explicit(&tft_rt_value_count, n, memory_order_release);
}

static int shutdown_session(void)
{
	struct timespec dl;
	int64_t end;
	int rc, done;

	pthread_mutex_lock(&ctl_lock);
	if (!ctl.s) {
		pthread_mutex_unlock(&ctl_lock);
		return 0;
	}
	state_update(0, TFT_RT_STEPS | TFT_RT_OPS | TFT_RT_DEMAND);
	end = tft_rt_mono_ns() + (int64_t)ctl.exit_timeout_ms * 1000000;
	deadline_after(&dl, (int64_t)ctl.exit_timeout_ms * 1000000);
	pthread_mutex_lock(&drain_lock);
	dr.stop = 1;
	pthread_cond_signal(&drain_cond);
	while (!dr.finished && tft_rt_mono_ns() < end)
		if (pthread_cond_timedwait(&done_cond, &drain_lock, &dl) == ETIMEDOUT)
			break;
	done = dr.finished;
	if (done) {
		rc = dr.final_rc ? TFT_EIO : 0;
	} else {
		dr.orphaned = 1; /* the drain frees the session when it is done */
		rc = TFT_EAGAIN;
	}
	pthread_mutex_unlock(&drain_lock);
	if (done) {
		pthread_join(ctl.drain, NULL);
		tft_rt_session_destroy(ctl.s);
		pthread_mutex_lock(&drain_lock);
		dr.running = 0;
		dr.s = NULL;
		pthread_mutex_unlock(&drain_lock);
	} else {
		pthread_detach(ctl.drain);
	}
	ctl.s = NULL;
	ctl.owned = 0;
	atomic_store_explicit(&ctl.pid, 0, memory_order_relaxed);
	pthread_mutex_lock(&stats_lock);
	if (st.state == TFT_RUNTIME_RUNNING)
		st.state = TFT_RUNTIME_OFF;
	if (rc == TFT_EAGAIN && !st.status) {
		st.status = TFT_EAGAIN;
		snprintf(st.reason, sizeof(st.reason),
			 "shutdown timed out: the data up to the last commit is in the session");
	}
	pthread_mutex_unlock(&stats_lock);
	pthread_mutex_unlock(&ctl_lock);
	return rc;
}

TFT_API int tft_flush(uint32_t timeout_ms)
{
	struct timespec dl;
	int64_t end = tft_rt_mono_ns() + (int64_t)timeout_ms * 1000000;
	uint64_t seq;
	int rc;

	pthread_once(&once, global_init);
	deadline_after(&dl, (int64_t)timeout_ms * 1000000);
	pthread_mutex_lock(&drain_lock);
	if (!dr.running || dr.stop || dr.orphaned) {
		pthread_mutex_unlock(&drain_lock);
		return TFT_EINVAL;
	}
	seq = ++dr.flush_req;
	pthread_cond_signal(&drain_cond);
	while (dr.flush_served < seq && !dr.finished && tft_rt_mono_ns() < end)
		if (pthread_cond_timedwait(&done_cond, &drain_lock, &dl) == ETIMEDOUT)
			break;
	if (dr.flush_served >= seq)
		rc = dr.flush_rc ? TFT_EIO : 0;
	else
		rc = dr.finished ? TFT_EINVAL : TFT_EAGAIN;
	pthread_mutex_unlock(&drain_lock);
	return rc;
}

/* ---- steps and tracing control ---------------------------------------------------------- */

/* The step hook (runtime/source.h): counters sampled at step boundaries. */
static void step_hook(uint32_t phase)
{
	tft_rt_step_hook_fn fn = atomic_load_explicit(&tft_rt_step_hook, memory_order_relaxed);

	if (fn)
		fn(phase);
}

TFT_API void tft_set_tracing(bool on)
{
	if (on)
		state_update(TFT_RT_TRACING, 0);
	else
		state_update(0, TFT_RT_TRACING);
}

TFT_API void tft_trace_next_steps(int n)
{
	if (n <= 0) {
		atomic_store_explicit(&demand_left, 0, memory_order_relaxed);
		state_update(0, TFT_RT_DEMAND);
	} else {
		atomic_store_explicit(&demand_left, n, memory_order_relaxed);
	}
}

TFT_API int64_t tft_step_begin(const char *name)
{
	int64_t idx;
	unsigned state;
	int left;

	if (!(tft_rt_state_load() & TFT_RT_STEPS))
		return -1;
	if (atomic_load_explicit(&step_cur, memory_order_relaxed) >= 0)
		tft_step_end();
	step_hook(0);
	idx = atomic_fetch_add_explicit(&step_next, 1, memory_order_relaxed);
	left = atomic_load_explicit(&demand_left, memory_order_relaxed);
	while (left > 0 && !atomic_compare_exchange_weak_explicit(&demand_left, &left, left - 1,
								  memory_order_relaxed,
								  memory_order_relaxed))
		;
	state = left > 0 ? state_update(TFT_RT_DEMAND, 0) : state_update(0, TFT_RT_DEMAND);
	tft_rt_emit_text(TFT_RK_STEP_BEGIN, (uint64_t)idx, (state & TFT_RT_OPS) != 0,
			 name && *name ? name : "step");
	atomic_store_explicit(&step_cur, idx, memory_order_relaxed);
	return idx;
}

TFT_API int64_t tft_step_end(void)
{
	int64_t idx = atomic_exchange_explicit(&step_cur, -1, memory_order_relaxed);
	int hold;

	if (idx < 0 || !(tft_rt_state_load() & TFT_RT_STEPS))
		return -1;
	step_hook(1);
	/* Its trace will be imported: the thread's later records wait for it (rt.h). */
	hold = atomic_load_explicit(&hold_step, memory_order_relaxed) == idx &&
	       atomic_exchange_explicit(&hold_step, -1, memory_order_relaxed) == idx;
	tft_rt_emit_text(TFT_RK_STEP_END, (uint64_t)idx,
			 ((tft_rt_state_load() & TFT_RT_OPS) != 0) | (hold ? TFT_RT_STEP_HOLD : 0u),
			 NULL);
	/* The last step of an on-demand window ends the window. */
	if (atomic_load_explicit(&demand_left, memory_order_relaxed) == 0 &&
	    (tft_rt_state_load() & TFT_RT_DEMAND))
		state_update(0, TFT_RT_DEMAND);
	return idx;
}

TFT_API int64_t tft_step_abandon(void)
{
	int64_t idx = atomic_exchange_explicit(&step_cur, -1, memory_order_relaxed);

	if (idx < 0 || !(tft_rt_state_load() & TFT_RT_STEPS))
		return -1;
	/* No end record: the drain keeps the begin as an open step, never stored. */
	if (atomic_load_explicit(&hold_step, memory_order_relaxed) == idx)
		atomic_store_explicit(&hold_step, -1, memory_order_relaxed);
	if (atomic_load_explicit(&demand_left, memory_order_relaxed) == 0 &&
	    (tft_rt_state_load() & TFT_RT_DEMAND))
		state_update(0, TFT_RT_DEMAND);
	return idx;
}

TFT_API int tft_thread_name(const char *name)
{
	if (!name)
		return TFT_EINVAL;
	if (!(tft_rt_state_load() & TFT_RT_STEPS))
		return TFT_EAGAIN;
	return tft_rt_emit_text(TFT_RK_THREAD_NAME, 0, 0, name);
}

TFT_API int tft_process_name(const char *name)
{
	if (!name)
		return TFT_EINVAL;
	if (!(tft_rt_state_load() & TFT_RT_STEPS))
		return TFT_EAGAIN;
	return tft_rt_emit_text(TFT_RK_PROCESS_NAME, 0, 0, name);
}

/* ---- statistics --------------------------------------------------------------------- */

TFT_API int tft_stats(struct tft_runtime_stats *out)
{
	struct tft_runtime_stats full;
	uint32_t size;

	if (!out || out->struct_size < offsetof(struct tft_runtime_stats, bytes_written))
		return TFT_EINVAL;
	size = out->struct_size < sizeof(full) ? out->struct_size : (uint32_t)sizeof(full);
	memset(&full, 0, sizeof(full));
	pthread_mutex_lock(&stats_lock);
	full.state = st.state;
	full.events = st.snap.events;
	full.dropped = st.snap.dropped;
	full.bytes_written = st.snap.bytes;
	full.flushes = st.snap.flushes;
	full.threads = st.snap.threads;
	full.last_flush_ns = st.snap.last_flush_ns;
	full.last_flush_unix_ns = st.snap.last_flush_unix_ns;
	full.disabled_status = st.status;
	snprintf(full.disabled_reason, sizeof(full.disabled_reason), "%s", st.reason);
	pthread_mutex_unlock(&stats_lock);
	full.tracing = tft_is_tracing();
	full.steps = atomic_load_explicit(&step_next, memory_order_relaxed);
	memcpy(out, &full, size);
	out->struct_size = size;
	return 0;
}

TFT_API int tft_runtime_path(char *buf, size_t size)
{
	int n;

	pthread_mutex_lock(&stats_lock);
	if (!st.have_path) {
		pthread_mutex_unlock(&stats_lock);
		return TFT_ENOTFOUND;
	}
	n = (int)strlen(st.path);
	if (buf && size)
		snprintf(buf, size, "%s", st.path);
	pthread_mutex_unlock(&stats_lock);
	return n;
}
