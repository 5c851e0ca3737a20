/* SPDX-License-Identifier: MIT */
/*
 * Profiler traces into the live session (server/live.h, tft_live_import):
 * a torch.profiler Chrome trace, a TF RunMetadata or an XSpace is imported
 * into a temporary session, then copied, shifted onto the runtime's clock,
 * into the runtime's writer between two drain cycles.
 *
 * What the trace says ran in this process (its pid: a Kineto trace's CPU
 * ops, python functions, annotations) lands on the runtime's own process,
 * each thread's events on the thread track the runtime has for that OS
 * thread (made here when it has none yet; the drain adopts it), so that a
 * traced step's ops sit with the step and the thread's zones. The runtime
 * holds the thread's records after a traced step's end until its trace is in
 * (rt.h, tft_rt_import_hold; the hub releases it, live_steps.c), so the track
 * is ready for it. A thread track that holds events later than the trace's
 * first all the same (the hold timed out, the runtime recorded the thread
 * during the step, an import of a later step came first), or a thread with a
 * zone still open from before the trace (an outer zone: the drain appends it
 * later, before the ops in time), cannot take them in order: they go to a
 * track of their own beside it, "<thread> (profiler)", counted in the meta
 * count `imports_beside`. Other processes of the trace (GPUs, TF devices)
 * keep their own.
 *
 * TFT_TEST_IMPORT_GATE=<file> (tests only): each import waits until that
 * file exists before it reads the trace, so that a test can make the program
 * go on meanwhile (tests/e2e/test_python.py, case live_hold).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "collect/ingest.h"
#include "collect/ingest_runmeta.h"
#include "collect/ingest_xspace.h"
#include "core/grow.h"
#include "runtime/rt.h"
#include "server/live_int.h"
#include "store/session.h"
#include "store/writer.h"

#define MAP_PROCS 256   /* imported processes remembered across imports */
#define MAP_TRACKS 4096 /* imported tracks remembered across imports */
#define MAX_TRACE_BYTES ((size_t)1 << 30)
#define MODULE_PREFIX "nn.Module: " /* python/tftracer/_models.py's scopes */
#define MODULE_PREFIX_LEN (sizeof(MODULE_PREFIX) - 1)

struct map_proc {
	uint32_t name, host; /* live string ids */
	int64_t pid;
	uint32_t id;         /* live process id */
};

struct map_track {
	uint32_t process, kind, name; /* live ids */
	int64_t tid;
	uint32_t id;                  /* live track id */
	int64_t last_ts;              /* last timestamp appended */
	bool companion;               /* "<thread> (profiler)": beside a runtime thread track */
};

/*
 * What earlier imports through one hub created in the live session, so that
 * the next import of the same producer lands on the same tracks (bounded:
 * beyond the caps an import gets new tracks). Reset when the runtime's writer
 * changes. Each hub has its own (live_int.h): two hubs in one process keep
 * their imports apart; an import without a hub gets a fresh one.
 */
struct tft_live_imports {
	pthread_mutex_t lock;       /* imports through one hub run one at a time */
	const struct tft_writer *w; /* the writer these ids belong to (compared only) */
	uint32_t rt_process;        /* the runtime's own process (this pid), or TFT_NONE */
	struct map_proc procs[MAP_PROCS];
	uint32_t nprocs;
	struct map_track *tracks;   /* owned: MAP_TRACKS */
	uint32_t ntracks;
	uint64_t seq;               /* temporary file names */
};

struct tft_live_imports *tft_live_imports_create(void)
{
	struct tft_live_imports *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->tracks = calloc(MAP_TRACKS, sizeof(*m->tracks));
	if (!m->tracks) {
		free(m);
		return NULL;
	}
	m->rt_process = TFT_NONE;
	pthread_mutex_init(&m->lock, NULL);
	return m;
}

void tft_live_imports_free(struct tft_live_imports *m)
{
	if (!m)
		return;
	pthread_mutex_destroy(&m->lock);
	free(m->tracks);
	free(m);
}

static int64_t clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- the copy (runs under the runtime's work lock) --------------------------------- */

/* The runtime's process: the first with this pid (the drain adds it before anything). */
static uint32_t runtime_process(struct tft_live_imports *m, struct tft_writer *w)
{
	int64_t pid = (int64_t)getpid();
	uint32_t n = tft_writer_process_count(w);

	if (m->rt_process != TFT_NONE)
		return m->rt_process;
	for (uint32_t i = 0; i < n; i++) {
		const struct tft_process *p = tft_writer_process(w, i);
		if (p && p->pid == pid) {
			m->rt_process = i;
			break;
		}
	}
	return m->rt_process;
}

/* The thread track of OS thread tid in the runtime's process (`own`: not one of ours), or TFT_NONE. */
static uint32_t thread_track_of(struct tft_live_imports *m, struct tft_writer *w, uint32_t proc,
				int64_t tid)
{
	uint32_t n = tft_writer_track_count(w);

	for (uint32_t i = 0; i < n; i++) {
		const struct tft_track *t;
		bool ours = false;
		if (tft_writer_track_process(w, i) != proc)
			continue;
		t = tft_writer_track(w, i);
		if (!t || t->kind != TFT_TRACK_THREAD || t->tid != tid)
			continue;
		for (uint32_t j = 0; j < m->ntracks && !ours; j++)
			ours = m->tracks[j].id == i && m->tracks[j].companion;
		if (!ours)
			return i;
	}
	return TFT_NONE;
}

/* A thread's name as the runtime names its track (prctl's name), or "thread <tid>". */
static void thread_name(int64_t tid, char *buf, size_t size)
{
	char path[64];
	ssize_t n = -1;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%lld/comm", (long long)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, buf, size - 1);
		close(fd);
	}
	if (n > 0 && buf[n - 1] == '\n')
		n--;
	if (n <= 0) {
		snprintf(buf, size, "thread %lld", (long long)tid);
		return;
	}
	buf[n] = 0;
}

struct copy_ctx {
	struct tft_live_imports *m; /* borrowed: the hub's map (its lock held) */
	struct tft_session *s;   /* borrowed: the temporary session */
	struct tft_writer *w;    /* borrowed: the live writer (during the copy) */
	int64_t shift;           /* ns added to every timestamp */
	uint32_t *track_map;     /* owned: temporary track id -> live track id */
	uint32_t ntracks;
	struct map_track *cur;   /* the map entry of the track being copied, or NULL */
	uint32_t cur_track;
	int64_t cur_last;
	uint32_t cat_ua, cat_mod; /* live ids: "user_annotation", "python_module" */
	struct tft_arg *args;    /* owned scratch */
	size_t cap_args;
	uint64_t events;
	int64_t t0, t1;          /* extent copied (live clock) */
	struct tft_error *err;
};

static uint32_t intern_from(struct copy_ctx *c, uint32_t id)
{
	size_t len;
	const char *p;

	if (id == 0)
		return 0;
	p = tft_session_str(c->s, id, &len);
	return tft_writer_intern(c->w, p, len);
}

static uint32_t live_process(struct copy_ctx *c, uint32_t tmp_id, uint32_t rt_proc)
{
	const struct tft_process *p = tft_session_process(c->s, tmp_id);
	struct tft_live_imports *m = c->m;
	struct tft_process np;
	uint32_t name, host;

	if (!p)
		return TFT_NONE;
	if (rt_proc != TFT_NONE && p->pid == (int64_t)getpid())
		return rt_proc; /* this job: the runtime's process */
	name = intern_from(c, p->name);
	host = intern_from(c, p->host);
	if (name == UINT32_MAX || host == UINT32_MAX)
		return TFT_NONE;
	for (uint32_t i = 0; i < m->nprocs; i++)
		if (m->procs[i].name == name && m->procs[i].host == host && m->procs[i].pid == p->pid)
			return m->procs[i].id;
	np = *p;
	np.name = name;
	np.host = host;
	np.labels = intern_from(c, p->labels);
	np.id = tft_writer_add_process(c->w, &np);
	if (np.id != TFT_NONE && m->nprocs < MAP_PROCS)
		m->procs[m->nprocs++] = (struct map_proc){ name, host, p->pid, np.id };
	return np.id;
}

static int copy_event(void *ctx, const struct tft_event *ev)
{
	struct copy_ctx *c = ctx;
	struct tft_event e = *ev;
	int rc;

	if (ev->nargs) {
		if (tft_grow_size((void **)&c->args, &c->cap_args, ev->nargs, sizeof(*c->args)))
			return tft_error_set(c->err, TFT_ENOMEM, -1, "out of memory");
		for (uint16_t i = 0; i < ev->nargs; i++) {
			c->args[i] = ev->args[i];
			c->args[i].key = intern_from(c, ev->args[i].key);
			if (ev->args[i].type == TFT_ARG_STR || ev->args[i].type == TFT_ARG_JSON)
				c->args[i].v.str = intern_from(c, ev->args[i].v.str);
		}
		e.args = c->args;
	}
	e.track = c->cur_track;
	e.name = intern_from(c, ev->name);
	e.cat = intern_from(c, ev->cat);
	if (e.cat == c->cat_ua && e.cat != 0) {
		/* A module's forward (the Python module's scopes, a Kineto trace's
		 * record_function "nn.Module: <path>"): category python_module, as
		 * python/tftracer/_torchtrace.py writes it without Kineto. */
		size_t len = 0;
		const char *n = tft_session_str(c->s, ev->name, &len);
		if (n && len > MODULE_PREFIX_LEN && memcmp(n, MODULE_PREFIX, MODULE_PREFIX_LEN) == 0)
			e.cat = c->cat_mod;
	}
	e.depth = 0;
	e.count = 1;
	e.flags &= (uint8_t)~TFT_EVF_SUMMARY;
	if (__builtin_add_overflow(e.ts_ns, c->shift, &e.ts_ns))
		return tft_error_set(c->err, TFT_EFORMAT, -1, "timestamps out of range");
	if (e.ts_ns < c->cur_last)
		e.ts_ns = c->cur_last; /* rounding in the source: keep the track ordered */
	rc = tft_writer_append(c->w, &e);
	if (rc)
		return tft_error_set(c->err, rc, -1, "appending an imported event");
	c->cur_last = e.ts_ns;
	if (!c->events || e.ts_ns < c->t0)
		c->t0 = e.ts_ns;
	if (e.ts_ns + e.dur_ns > c->t1)
		c->t1 = e.ts_ns + e.dur_ns;
	c->events++;
	return 0;
}

static int copy_flow(void *ctx, const struct tft_flow *f)
{
	struct copy_ctx *c = ctx;
	struct tft_flow nf = *f;

	nf.name = intern_from(c, f->name);
	nf.cat = intern_from(c, f->cat);
	nf.src_track = f->src_track < c->ntracks ? c->track_map[f->src_track] : TFT_NONE;
	nf.dst_track = f->dst_track < c->ntracks ? c->track_map[f->dst_track] : TFT_NONE;
	if (nf.src_track == TFT_NONE && nf.dst_track == TFT_NONE)
		return 0;
	if (nf.src_track == TFT_NONE || nf.dst_track == TFT_NONE)
		nf.flags |= TFT_FLOWF_UNMATCHED;
	nf.src_ts_ns += c->shift;
	nf.dst_ts_ns += c->shift;
	return tft_writer_add_flow(c->w, &nf) ? tft_error_set(c->err, TFT_EIO, -1, "adding a flow") : 0;
}

static int copy_all(void *ctx, struct tft_writer *w)
{
	struct copy_ctx *c = ctx;
	struct tft_live_imports *m = c->m;
	uint32_t rt_proc;
	int rc = 0;

	c->w = w;
	if (m->w != w) { /* a new runtime session: forget the old ids */
		m->w = w;
		m->nprocs = 0;
		m->ntracks = 0;
		m->rt_process = TFT_NONE;
	}
	rt_proc = runtime_process(m, w);
	c->cat_ua = tft_writer_intern_cstr(w, "user_annotation");
	c->cat_mod = tft_writer_intern_cstr(w, "python_module");
	if (c->cat_ua == UINT32_MAX || c->cat_mod == UINT32_MAX)
		return tft_error_set(c->err, TFT_ENOMEM, -1, "out of memory");
	for (uint32_t t = 0; t < c->ntracks && !rc; t++) {
		const struct tft_track *tr = tft_session_track(c->s, t);
		struct tft_track nt;
		uint32_t proc, name;
		bool companion;

		c->track_map[t] = TFT_NONE;
		if (!tr || tr->slices + tr->instants + tr->counters == 0)
			continue;
		proc = live_process(c, tr->process, rt_proc);
		name = intern_from(c, tr->name);
		if (proc == TFT_NONE || name == UINT32_MAX)
			return tft_error_set(c->err, TFT_ENOMEM, -1, "out of memory");
		c->cur = NULL;
		companion = false;
		if (proc == rt_proc && tr->kind == TFT_TRACK_THREAD) {
			/* the job's own thread: the runtime's track of it, if it can take them */
			uint32_t own = thread_track_of(m, w, proc, tr->tid);
			char tn[64], cn[96];
			if (own == TFT_NONE) {
				/* none yet: one as the runtime would make it (the drain adopts it) */
				struct tft_track nt2 = { .process = proc, .kind = TFT_TRACK_THREAD,
							 .tid = tr->tid, .sort_index = tr->sort_index };
				thread_name(tr->tid, tn, sizeof(tn));
				nt2.name = tft_writer_intern_cstr(w, tn);
				own = nt2.name == UINT32_MAX ? TFT_NONE : tft_writer_add_track(w, &nt2);
				if (own == TFT_NONE)
					return tft_error_set(c->err, TFT_ENOMEM, -1, "cannot add a track");
			}
			if (tft_writer_track_appendable(w, own) &&
			    tft_writer_track_end(w, own) <= tr->min_ts_ns + c->shift &&
			    tft_rt_thread_floor(tr->tid) >= tr->max_ts_ns + c->shift) {
				c->cur_track = own;
				c->cur_last = INT64_MIN;
				c->track_map[t] = own;
				rc = tft_session_scan(c->s, t, INT64_MIN, INT64_MAX, 0, copy_event, c, c->err);
				/* the drain's next events of the thread start no earlier */
				if (c->cur_last != INT64_MIN)
					tft_rt_track_appended(own, c->cur_last);
				continue;
			}
			if (tft_writer_add_count(w, TFT_COUNT_IMPORTS_BESIDE, 1))
				return tft_error_set(c->err, TFT_ENOMEM, -1, "out of memory");
			/* it holds later events: a track beside it */
			const struct tft_track *ot = tft_writer_track(w, own);
			size_t len = 0;
			const char *on = ot ? tft_writer_str(w, ot->name, &len) : NULL;
			snprintf(cn, sizeof(cn), "%.*s (profiler)", on ? (int)(len < 64 ? len : 64) : 0,
				 on ? on : "");
			name = tft_writer_intern_cstr(w, cn);
			if (name == UINT32_MAX)
				return tft_error_set(c->err, TFT_ENOMEM, -1, "out of memory");
			companion = true;
		}
		for (uint32_t i = 0; i < m->ntracks; i++) {
			struct map_track *e = &m->tracks[i];
			if (e->process == proc && e->kind == tr->kind && e->name == name &&
			    e->tid == tr->tid && e->last_ts <= tr->min_ts_ns + c->shift) {
				c->cur = e;
				break;
			}
		}
		if (c->cur) {
			c->cur_track = c->cur->id;
			c->cur_last = c->cur->last_ts;
		} else {
			nt = *tr;
			nt.process = proc;
			nt.name = name;
			c->cur_track = tft_writer_add_track(w, &nt);
			if (c->cur_track == TFT_NONE)
				return tft_error_set(c->err, TFT_ENOMEM, -1, "cannot add a track");
			c->cur_last = INT64_MIN;
			if (m->ntracks < MAP_TRACKS) {
				c->cur = &m->tracks[m->ntracks++];
				*c->cur = (struct map_track){ proc, tr->kind, name, tr->tid, c->cur_track,
							      INT64_MIN, companion };
			}
		}
		c->track_map[t] = c->cur_track;
		rc = tft_session_scan(c->s, t, INT64_MIN, INT64_MAX, 0, copy_event, c, c->err);
		if (c->cur)
			c->cur->last_ts = c->cur_last;
	}
	if (!rc)
		rc = tft_session_flows(c->s, copy_flow, c, c->err);
	if (!rc) {
		/* the live session lists what was imported into it, as `import a b` does */
		const char *f = tft_session_meta(c->s, "format"), *p = tft_session_meta(c->s, "producer");

		if ((f && *f && tft_writer_join_meta(w, "format", f, "+")) ||
		    (p && *p && tft_writer_join_meta(w, "producer", p, " + ")))
			rc = tft_error_set(c->err, TFT_ENOMEM, -1, "out of memory");
	}
	if (!rc)
		rc = tft_writer_commit(w, c->err);
	/* TFT_EIO (the writer failed) disables the runtime; anything else leaves a partial
	 * import that the next drain commit makes durable. */
	return rc;
}

/* ---- the temporary session ----------------------------------------------------------- */

static int read_file(const char *path, uint8_t **out, size_t *len, struct tft_error *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat sb;
	size_t got = 0;
	uint8_t *buf;

	if (fd < 0)
		return tft_error_set(err, errno == ENOENT ? TFT_ENOTFOUND : TFT_EIO, -1, "cannot open %s: %s",
				     path, strerror(errno));
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || (uint64_t)sb.st_size > MAX_TRACE_BYTES) {
		close(fd);
		return tft_error_set(err, TFT_EINVAL, -1, "%s: not a regular file of at most 1 GiB", path);
	}
	buf = malloc((size_t)sb.st_size + 1);
	if (!buf) {
		close(fd);
		return tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
	}
	while (got < (size_t)sb.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)sb.st_size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	*out = buf;
	*len = got;
	return 0;
}

static int ingest_tmp(const struct tft_live_import *im, const char *tmp, struct tft_error *err)
{
	/* Inside the traced job: no extra store threads competing with training. */
	struct tft_writer_opts wo = {.bulk = 1};
	struct tft_writer *w = tft_writer_open(tmp, &wo, err);
	const char *name = im->path ? im->path : im->name ? im->name : "trace";
	const uint8_t *data = im->data;
	size_t len = im->len;
	uint8_t *owned = NULL;
	int rc;

	if (!w)
		return err && err->code ? err->code : TFT_EIO;
	if (im->source != TFT_LIVE_SRC_TORCH && im->path) {
		rc = read_file(im->path, &owned, &len, err);
		if (rc) {
			tft_writer_abort(w);
			return rc;
		}
		data = owned;
	}
	switch (im->source) {
	case TFT_LIVE_SRC_TORCH:
		rc = im->path ? tft_ingest_file(w, im->path, NULL, err)
			      : tft_ingest_mem(w, name, im->data, im->len, NULL, err);
		break;
	case TFT_LIVE_SRC_RUNMETA:
		/* binary or text format, RunMetadata or a bare StepStats: as `import` tells them */
		rc = tft_runmeta_ingest(w, name, data, len, NULL, err);
		break;
	case TFT_LIVE_SRC_XSPACE:
		rc = tft_xspace_ingest(w, name, data, len, NULL, err);
		break;
	default:
		rc = tft_error_set(err, TFT_EINVAL, -1, "unknown import source");
	}
	free(owned);
	if (rc) {
		tft_writer_abort(w);
		return rc;
	}
	return tft_writer_close(w, err);
}

/*
 * TFT_TEST_IMPORT_GATE (tests only, see the top of this file): wait until
 * that file exists, 120 s at most.
 */
static void test_gate(void)
{
	const char *path = getenv("TFT_TEST_IMPORT_GATE");
	struct timespec ts = { 0, 5000000 };

	if (!path || !*path)
		return;
	for (int i = 0; i < 24000 && access(path, F_OK) != 0; i++)
		nanosleep(&ts, NULL);
}

/* Where the temporary session goes: next to the live file (same disk), else /tmp. */
/* (pid, map, seq): unique among the imports under way, whichever hub runs them. */
static void tmp_path(char *buf, size_t size, const struct tft_live_imports *m, uint64_t seq)
{
	char rt[4096];
	int n = tft_runtime_path(rt, sizeof(rt));
	unsigned long id = (unsigned long)(uintptr_t)m;

	if (n > 0 && (size_t)n < sizeof(rt))
		snprintf(buf, size, "%s.import-%ld-%lx-%llu.tft", rt, (long)getpid(), id,
			 (unsigned long long)seq);
	else
		snprintf(buf, size, "/tmp/tftracer-import-%ld-%lx-%llu.tft", (long)getpid(), id,
			 (unsigned long long)seq);
}

int tft_live_import(struct tft_live *lv, const struct tft_live_import *im, uint64_t *events,
		    struct tft_error *err)
{
	struct tft_session_summary sum;
	struct tft_live_imports *own = NULL;
	struct copy_ctx c;
	char tmp[4300];
	int rc;

	if (events)
		*events = 0;
	if (!im || (!im->path && !im->data) || im->source == TFT_LIVE_SRC_RUNTIME)
		return tft_error_set(err, TFT_EINVAL, -1, "nothing to import");
	test_gate();
	memset(&c, 0, sizeof(c));
	c.err = err;
	/* the hub's map, or one for this import alone */
	c.m = lv ? lv->imp : (own = tft_live_imports_create());
	if (!c.m)
		return tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
	pthread_mutex_lock(&c.m->lock);
	tmp_path(tmp, sizeof(tmp), c.m, ++c.m->seq);
	tft_session_file_remove(tmp);
	rc = ingest_tmp(im, tmp, err);
	if (!rc) {
		c.s = tft_session_open(tmp, err);
		rc = c.s ? 0 : err && err->code ? err->code : TFT_EIO;
	}
	if (!rc) {
		tft_session_get_summary(c.s, &sum);
		/* Onto the runtime's clock (CLOCK_MONOTONIC): epoch-based traces by the
		 * clocks' offset now; relative ones from the profiler's start. */
		if (sum.start_ns > 100000000000000000LL)
			c.shift = clock_ns(CLOCK_MONOTONIC) - clock_ns(CLOCK_REALTIME);
		else if (sum.start_ns >= 0 && sum.start_ns <= im->t1_ns - im->t0_ns)
			c.shift = im->t0_ns;
		else
			c.shift = im->t0_ns - sum.start_ns;
		c.ntracks = tft_session_track_count(c.s);
		c.track_map = calloc(c.ntracks ? c.ntracks : 1, sizeof(*c.track_map));
		if (!c.track_map)
			rc = tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
	}
	if (!rc) {
		/* Commit what the runtime holds first (the step this trace belongs to), so
		 * the step is in the file no later than its ops. */
		tft_flush(1000);
		rc = tft_rt_with_writer(copy_all, &c);
		if (rc == TFT_EINVAL)
			tft_error_set(err, rc, -1, "no runtime session is running");
		else if (rc == TFT_EIO)
			tft_error_set(err, rc, -1, "the live session's writer failed");
	}
	pthread_mutex_unlock(&c.m->lock);
	tft_live_imports_free(own);
	if (c.s)
		tft_session_close(c.s);
	tft_session_file_remove(tmp);
	free(c.track_map);
	free(c.args);
	if (events)
		*events = c.events;
	if (rc) {
		char why[300];
		tft_live_note_import(lv, im, rc, c.events, c.t0, c.t1,
				     err ? tft_error_format(err, why, sizeof(why)) : NULL);
	} else {
		tft_live_note_import(lv, im, rc, c.events, c.t0, c.t1, NULL);
	}
	return rc;
}
