/* SPDX-License-Identifier: MIT */
/*
 * tftracer._tftracer: the CPython binding of the runtime (steps, zones,
 * tracing control), the live hub (the in-process HTTP server, imports of
 * profiler traces into the live session) and the offline helpers Timeline
 * uses (import, op times, standalone HTML). See docs/python.md.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "codec/json_write.h"
#include "collect/ingest.h"
#include "collect/ingest_runmeta.h"
#include "collect/ingest_xspace.h"
#include "core/strtab.h"
#include "export/export_html.h"
#include "runtime/source.h"
#include "server/live.h"
#include "store/session.h"
#include "store/writer.h"
#include "tftracer/tftracer.h"

/* Keyword lists: CPython takes char ** (the strings are never written). */
#define KW(s) ((char *)(s))
#define JOBS_MAX 8         /* imports waiting for the worker */
#define SITES_MAX 4096     /* distinct Python zone names */

static PyObject *TftError; /* tftracer.Error (RuntimeError) */

/*
 * While a step runs under a profiler on this thread (its on_traced returned
 * a closer) and the server has a zone_hook: zone(name) on this thread opens
 * zone_hook(name) (torch's record_function) instead of a runtime zone, so
 * that the step's zones come with its profiler trace, on one clock, nested
 * with its ops, on the thread's track (docs/python.md). Borrowed from the
 * server, which the open step holds.
 */
static _Thread_local PyObject *tls_zone_hook;

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Raise the Python exception for a C status, carrying the C message. */
static PyObject *raise_status(int rc, const struct tft_error *err, const char *what)
{
	char buf[TFT_ERROR_MSG_MAX + 600], line[TFT_ERROR_MSG_MAX + 300];
	PyObject *type = TftError;

	if (err && err->msg[0])
		tft_error_format(err, line, sizeof(line));
	else
		snprintf(line, sizeof(line), "%s", tft_strerror(rc));
	snprintf(buf, sizeof(buf), "%s: %s", what, line);
	if (rc == TFT_ENOTFOUND)
		type = PyExc_FileNotFoundError;
	else if (rc == TFT_ENOMEM)
		type = PyExc_MemoryError;
	else if (rc == TFT_EINVAL)
		type = PyExc_ValueError;
	PyErr_SetString(type, buf);
	return NULL;
}

static void warn_disabled_once(void)
{
	static int warned;
	struct tft_runtime_stats st;

	if (warned)
		return;
	memset(&st, 0, sizeof(st));
	st.struct_size = sizeof(st);
	tft_stats(&st);
	if (st.state != TFT_RUNTIME_DISABLED)
		return;
	warned = 1;
	if (PyErr_WarnFormat(PyExc_RuntimeWarning, 1,
			     "tftracer: tracing disabled itself (%s); training continues, "
			     "steps and events are no longer recorded (%llu events lost)",
			     st.disabled_reason[0] ? st.disabled_reason : "write failure",
			     (unsigned long long)st.dropped) < 0)
		PyErr_WriteUnraisable(NULL);
}

/* ==== import worker (one per server) ======================================== */

struct job {
	int source;
	char *path;       /* owned */
	void *data;       /* owned */
	size_t len;
	int64_t step, t0, t1;
	char name[128];
	bool unlink_after;
};

struct worker {
	pthread_mutex_t lock;
	pthread_cond_t cond, idle;
	struct job jobs[JOBS_MAX];
	unsigned head, n;
	bool busy, stop, running;
	pthread_t th;
	struct tft_live *lv;       /* borrowed */
	uint64_t done, failed, dropped, events;
	char last_error[TFT_ERROR_MSG_MAX + 300];
	uint64_t error_seq;
	int64_t last_error_ns; /* when (monotonic): the newer of this and a blocking import's is shown */
};

static void job_free(struct job *j)
{
	free(j->path);
	free(j->data);
	memset(j, 0, sizeof(*j));
}

static void job_run(struct worker *w, struct job *j)
{
	struct tft_live_import im = {
		.source = j->source, .path = j->path, .data = j->data, .len = j->len,
		.step = j->step, .name = j->name[0] ? j->name : NULL, .t0_ns = j->t0, .t1_ns = j->t1,
	};
	struct tft_error err;
	uint64_t events = 0;
	int rc;

	tft_error_clear(&err);
	rc = tft_live_import(w->lv, &im, &events, &err);
	if (j->unlink_after && j->path)
		unlink(j->path);
	pthread_mutex_lock(&w->lock);
	if (rc) {
		w->failed++;
		tft_error_format(&err, w->last_error, sizeof(w->last_error));
		w->error_seq++;
		w->last_error_ns = mono_ns();
	} else {
		w->done++;
		w->events += events;
	}
	pthread_mutex_unlock(&w->lock);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		struct job j;
		while (!w->n && !w->stop)
			pthread_cond_wait(&w->cond, &w->lock);
		if (!w->n)
			break; /* stop, and nothing left */
		j = w->jobs[w->head];
		memset(&w->jobs[w->head], 0, sizeof(j));
		w->head = (w->head + 1) % JOBS_MAX;
		w->n--;
		w->busy = true;
		pthread_mutex_unlock(&w->lock);
		job_run(w, &j);
		job_free(&j);
		pthread_mutex_lock(&w->lock);
		w->busy = false;
		if (!w->n)
			pthread_cond_broadcast(&w->idle);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

static int worker_start(struct worker *w, struct tft_live *lv)
{
	memset(w, 0, sizeof(*w));
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	pthread_cond_init(&w->idle, NULL);
	w->lv = lv;
	if (pthread_create(&w->th, NULL, worker_main, w) != 0)
		return -1;
	pthread_setname_np(w->th, "tft-import");
	w->running = true;
	return 0;
}

/* Finish the queued imports, then end the thread. Without the GIL. */
static void worker_stop(struct worker *w)
{
	if (!w->running)
		return;
	pthread_mutex_lock(&w->lock);
	w->stop = true;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->th, NULL);
	w->running = false;
	for (unsigned i = 0; i < JOBS_MAX; i++)
		job_free(&w->jobs[i]);
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->cond);
	pthread_cond_destroy(&w->idle);
}

/* Queue a job (taken over); false when the queue is full (the job is freed). */
static bool worker_push(struct worker *w, struct job *j)
{
	bool ok;

	pthread_mutex_lock(&w->lock);
	ok = w->running && !w->stop && w->n < JOBS_MAX;
	if (ok) {
		w->jobs[(w->head + w->n) % JOBS_MAX] = *j;
		w->n++;
		pthread_cond_signal(&w->cond);
	} else {
		w->dropped++;
	}
	pthread_mutex_unlock(&w->lock);
	if (!ok) {
		if (j->step >= 0)
			tft_live_step_import_failed(w->lv, j->step,
						    "dropped: the import queue was full");
		if (j->unlink_after && j->path)
			unlink(j->path);
		job_free(j);
	}
	return ok;
}

/* Wait until no import is queued or running; false on timeout. Without the GIL. */
static bool worker_drain(struct worker *w, int64_t timeout_ms)
{
	int64_t until = mono_ns() + timeout_ms * 1000000;
	struct timespec ts;
	bool idle;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += timeout_ms / 1000;
	ts.tv_nsec += (timeout_ms % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&w->lock);
	while ((w->n || w->busy) && mono_ns() < until)
		if (pthread_cond_timedwait(&w->idle, &w->lock, &ts) != 0)
			break;
	idle = !w->n && !w->busy;
	pthread_mutex_unlock(&w->lock);
	return idle;
}

static int source_of(const char *s)
{
	if (!strcmp(s, "torch") || !strcmp(s, "chrome") || !strcmp(s, "kineto"))
		return TFT_LIVE_SRC_TORCH;
	if (!strcmp(s, "runmetadata") || !strcmp(s, "runmeta"))
		return TFT_LIVE_SRC_RUNMETA;
	if (!strcmp(s, "xspace") || !strcmp(s, "xplane"))
		return TFT_LIVE_SRC_XSPACE;
	return -1;
}

/* ==== Server ================================================================= */

typedef struct StepObject StepObject;

typedef struct {
	PyObject_HEAD
	struct tft_live *lv;   /* owned; NULL once stopped */
	struct worker worker;
	PyObject *on_traced;   /* callable(index, name) -> closer or None; or NULL */
	StepObject *cache;     /* a reusable step context */
	uint64_t lost_steps;   /* steps not recorded: the runtime was disabled */
	pid_t owner;           /* the process that started it (a fork child only lets go) */
	PyObject *zone_hook;   /* callable(name) -> context manager, or NULL */
	/* blocking imports (import_trace(block=True)), counted under the GIL: the
	 * worker's lock may be gone (stop() in another thread) */
	uint64_t bdone, bfailed, bevents;
	char blast_error[TFT_ERROR_MSG_MAX + 300];
	int64_t blast_error_ns;
} ServerObject;

struct StepObject {
	PyObject_HEAD
	ServerObject *srv;   /* strong */
	PyObject *name;      /* strong: str or NULL */
	PyObject *closer;    /* strong: what on_traced returned, or NULL */
	int64_t index;
	bool traced, active;
	bool routed;         /* this thread's zones go to the server's zone_hook */
};

static PyTypeObject ServerType, StepType;

static int server_init(ServerObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { KW("host"), KW("port"), KW("token"), KW("path"), KW("threads"), KW("no_auth"), NULL };
	const char *host = "127.0.0.1", *token = NULL, *path = NULL;
	int port = 9999, threads = 4, no_auth = 0;
	struct tft_live_opts o;
	struct tft_error err;
	struct tft_live *lv;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "|sizzip", kwlist, &host, &port, &token, &path,
					 &threads, &no_auth))
		return -1;
	if (self->lv) {
		PyErr_SetString(PyExc_RuntimeError, "server already started");
		return -1;
	}
	tft_live_opts_init(&o);
	o.server.host = host;
	o.server.port = port;
	o.server.token = token;
	o.server.threads = (unsigned)(threads > 0 ? threads : 4);
	o.server.no_auth = no_auth != 0;
	o.path = path;
	tft_error_clear(&err);
	Py_BEGIN_ALLOW_THREADS
	lv = tft_live_start(&o, &err);
	Py_END_ALLOW_THREADS
	if (!lv) {
		raise_status(err.code ? err.code : TFT_EIO, &err, "cannot start the server");
		return -1;
	}
	if (worker_start(&self->worker, lv) != 0) {
		Py_BEGIN_ALLOW_THREADS
		tft_live_stop(lv);
		Py_END_ALLOW_THREADS
		PyErr_SetString(PyExc_RuntimeError, "cannot start the import thread");
		return -1;
	}
	self->lv = lv;
	self->owner = getpid();
	return 0;
}

static void server_stop_c(ServerObject *self)
{
	struct tft_live *lv = self->lv;

	if (!lv)
		return;
	self->lv = NULL;
	/*
	 * A fork child has a copy of the hub but none of its threads: joining
	 * them would wait for ever (a child exiting normally runs atexit). It
	 * lets go of the copy, which the parent still serves.
	 */
	if (getpid() != self->owner)
		return;
	Py_BEGIN_ALLOW_THREADS
	worker_stop(&self->worker);
	tft_live_stop(lv);
	Py_END_ALLOW_THREADS
}

static void server_dealloc(ServerObject *self)
{
	PyObject_GC_UnTrack(self);
	server_stop_c(self);
	Py_CLEAR(self->on_traced);
	Py_CLEAR(self->zone_hook);
	Py_CLEAR(self->cache);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

static int server_traverse(ServerObject *self, visitproc visit, void *arg)
{
	Py_VISIT(self->on_traced);
	Py_VISIT(self->zone_hook);
	Py_VISIT(self->cache);
	return 0;
}

static int server_clear(ServerObject *self)
{
	Py_CLEAR(self->on_traced);
	Py_CLEAR(self->zone_hook);
	Py_CLEAR(self->cache);
	return 0;
}

#define NEED_LV(self)                                                             \
	do {                                                                      \
		if (!(self)->lv) {                                                \
			PyErr_SetString(PyExc_RuntimeError, "the server is stopped"); \
			return NULL;                                              \
		}                                                                 \
	} while (0)

static PyObject *server_stop(ServerObject *self, PyObject *unused)
{
	server_stop_c(self);
	Py_RETURN_NONE;
}

static PyObject *server_url(ServerObject *self, void *closure)
{
	char buf[700];

	if (!self->lv)
		return PyUnicode_FromString("");
	tft_live_url(self->lv, buf, sizeof(buf));
	return PyUnicode_FromString(buf);
}

static PyObject *server_port(ServerObject *self, void *closure)
{
	return PyLong_FromLong(self->lv ? tft_live_port(self->lv) : 0);
}

static PyObject *server_get_on_traced(ServerObject *self, void *closure)
{
	if (!self->on_traced)
		Py_RETURN_NONE;
	Py_INCREF(self->on_traced);
	return self->on_traced;
}

static int server_set_on_traced(ServerObject *self, PyObject *v, void *closure)
{
	if (v && v != Py_None && !PyCallable_Check(v)) {
		PyErr_SetString(PyExc_TypeError, "on_traced must be callable or None");
		return -1;
	}
	Py_XINCREF(v == Py_None ? NULL : v);
	Py_XSETREF(self->on_traced, v == Py_None ? NULL : v);
	return 0;
}

static PyObject *server_get_zone_hook(ServerObject *self, void *closure)
{
	if (!self->zone_hook)
		Py_RETURN_NONE;
	Py_INCREF(self->zone_hook);
	return self->zone_hook;
}

static int server_set_zone_hook(ServerObject *self, PyObject *v, void *closure)
{
	if (v && v != Py_None && !PyCallable_Check(v)) {
		PyErr_SetString(PyExc_TypeError, "zone_hook must be callable or None");
		return -1;
	}
	Py_XINCREF(v == Py_None ? NULL : v);
	Py_XSETREF(self->zone_hook, v == Py_None ? NULL : v);
	return 0;
}

/* expect_imports(step, n=1): n profiler traces of the traced step will be imported. */
static PyObject *server_expect_imports(ServerObject *self, PyObject *args)
{
	long long step;
	int n = 1;

	if (!PyArg_ParseTuple(args, "L|i", &step, &n))
		return NULL;
	NEED_LV(self);
	tft_live_step_expect_imports(self->lv, step, n);
	Py_RETURN_NONE;
}

/* set_end_next(next): what follows the job's end, for its pages ("serve", or None). */
static PyObject *server_set_end_next(ServerObject *self, PyObject *args)
{
	const char *next = NULL;

	if (!PyArg_ParseTuple(args, "z", &next))
		return NULL;
	NEED_LV(self);
	tft_live_set_next(self->lv, next);
	Py_RETURN_NONE;
}

/* import_failed(step, why): an expected profiler trace of the step will not come. */
static PyObject *server_import_failed(ServerObject *self, PyObject *args)
{
	long long step;
	const char *why = NULL;

	if (!PyArg_ParseTuple(args, "L|z", &step, &why))
		return NULL;
	NEED_LV(self);
	tft_live_step_import_failed(self->lv, step, why);
	Py_RETURN_NONE;
}

static PyObject *server_wait(ServerObject *self, PyObject *args)
{
	double timeout = -1;
	int64_t end;
	bool stopped = false;

	if (!PyArg_ParseTuple(args, "|d", &timeout))
		return NULL;
	NEED_LV(self);
	end = timeout < 0 ? INT64_MAX : mono_ns() + (int64_t)(timeout * 1e9);
	/* In slices, so that Ctrl-C (a pending signal) gets through. */
	for (;;) {
		int64_t left = end - mono_ns(), slice = 200;
		struct tft_live *lv = self->lv;
		if (timeout >= 0 && left / 1000000 < slice)
			slice = left > 0 ? left / 1000000 : 0;
		Py_BEGIN_ALLOW_THREADS
		stopped = tft_live_wait(lv, slice);
		Py_END_ALLOW_THREADS
		if (stopped || mono_ns() >= end)
			break;
		if (PyErr_CheckSignals() < 0)
			return NULL;
	}
	return PyBool_FromLong(stopped);
}

static PyObject *server_trace_next(ServerObject *self, PyObject *args)
{
	int n = 1;

	if (!PyArg_ParseTuple(args, "|i", &n))
		return NULL;
	tft_live_trace_next(self->lv, n);
	Py_RETURN_NONE;
}

static PyObject *server_trace_every(ServerObject *self, PyObject *args)
{
	int k;

	if (!PyArg_ParseTuple(args, "i", &k))
		return NULL;
	tft_live_trace_every(self->lv, k);
	Py_RETURN_NONE;
}

static PyObject *server_set_tracing(ServerObject *self, PyObject *args)
{
	int on;

	if (!PyArg_ParseTuple(args, "p", &on))
		return NULL;
	tft_live_set_tracing(self->lv, on != 0);
	Py_RETURN_NONE;
}

#define DICT_SET(d, k, v)                                         \
	do {                                                      \
		PyObject *v_ = (v);                               \
		if (!v_ || PyDict_SetItemString((d), (k), v_)) {  \
			Py_XDECREF(v_);                           \
			Py_DECREF(d);                             \
			return NULL;                              \
		}                                                 \
		Py_DECREF(v_);                                    \
	} while (0)

static PyObject *server_status(ServerObject *self, PyObject *unused)
{
	struct tft_live_status s;
	PyObject *d;
	uint64_t done, failed, dropped, ev;
	char last[sizeof(self->worker.last_error)];

	NEED_LV(self);
	tft_live_get_status(self->lv, &s);
	pthread_mutex_lock(&self->worker.lock);
	done = self->worker.done + self->bdone;
	failed = self->worker.failed + self->bfailed;
	dropped = self->worker.dropped;
	ev = self->worker.events + self->bevents;
	if (self->blast_error_ns > self->worker.last_error_ns)
		memcpy(last, self->blast_error, sizeof(last));
	else
		memcpy(last, self->worker.last_error, sizeof(last));
	pthread_mutex_unlock(&self->worker.lock);
	d = PyDict_New();
	if (!d)
		return NULL;
	DICT_SET(d, "live", PyBool_FromLong(s.live));
	DICT_SET(d, "state", PyUnicode_FromString(s.state == TFT_RUNTIME_RUNNING    ? "running"
						  : s.state == TFT_RUNTIME_DISABLED ? "disabled"
										    : "off"));
	DICT_SET(d, "tracing", PyBool_FromLong(s.tracing));
	DICT_SET(d, "global", PyBool_FromLong(s.global));
	DICT_SET(d, "pending", PyLong_FromLongLong(s.pending));
	DICT_SET(d, "every", PyLong_FromLongLong(s.every));
	DICT_SET(d, "events", PyLong_FromUnsignedLongLong(s.events));
	DICT_SET(d, "dropped", PyLong_FromUnsignedLongLong(s.dropped));
	DICT_SET(d, "steps", PyLong_FromLongLong(s.steps));
	DICT_SET(d, "generation", PyLong_FromUnsignedLongLong(s.generation));
	DICT_SET(d, "disabled_reason", PyUnicode_DecodeUTF8(s.disabled_reason,
							    strlen(s.disabled_reason), "replace"));
	DICT_SET(d, "lost_steps", PyLong_FromUnsignedLongLong(self->lost_steps));
	DICT_SET(d, "imports", PyLong_FromUnsignedLongLong(done));
	DICT_SET(d, "import_errors", PyLong_FromUnsignedLongLong(failed));
	DICT_SET(d, "imports_dropped", PyLong_FromUnsignedLongLong(dropped));
	DICT_SET(d, "imported_events", PyLong_FromUnsignedLongLong(ev));
	DICT_SET(d, "last_import_error", PyUnicode_DecodeUTF8(last, strlen(last), "replace"));
	if (s.request.id) {
		PyObject *q = Py_BuildValue("{s:K,s:L,s:L,s:L,s:L}", "id",
					    (unsigned long long)s.request.id, "steps",
					    (long long)s.request.steps, "begun", (long long)s.request.begun,
					    "landed", (long long)s.request.landed, "failed",
					    (long long)s.request.failed);
		DICT_SET(d, "request", q);
	} else {
		Py_INCREF(Py_None);
		DICT_SET(d, "request", Py_None);
	}
	return d;
}

static PyObject *server_save(ServerObject *self, PyObject *args)
{
	const char *path = NULL;
	char out[4200];
	uint64_t bytes = 0;
	struct tft_error err;
	struct tft_live *lv;
	int rc;

	if (!PyArg_ParseTuple(args, "|z", &path))
		return NULL;
	NEED_LV(self);
	lv = self->lv;
	tft_error_clear(&err);
	Py_BEGIN_ALLOW_THREADS
	rc = tft_live_save(lv, path, out, sizeof(out), &bytes, &err);
	Py_END_ALLOW_THREADS
	if (rc)
		return raise_status(rc, &err, "cannot save the session");
	return Py_BuildValue("(sK)", out, (unsigned long long)bytes);
}

static PyObject *server_serve(ServerObject *self, PyObject *args)
{
	const char *path = NULL;
	struct tft_error err;
	struct tft_live *lv;
	int rc;

	if (!PyArg_ParseTuple(args, "|z", &path))
		return NULL;
	NEED_LV(self);
	lv = self->lv;
	tft_error_clear(&err);
	Py_BEGIN_ALLOW_THREADS
	rc = tft_live_serve(lv, path, &err);
	Py_END_ALLOW_THREADS
	if (rc)
		return raise_status(rc, &err, "cannot serve the session");
	Py_RETURN_NONE;
}

/* import_trace(source, path=None, data=None, step=-1, t0=0, t1=0, name=None, block=False,
 *              unlink=False) -> events (block) or queued (bool) */
static PyObject *server_import_trace(ServerObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { KW("source"), KW("path"), KW("data"), KW("step"), KW("t0"), KW("t1"),
				  KW("name"), KW("block"), KW("unlink"), NULL };
	const char *source, *path = NULL, *name = NULL;
	Py_buffer data = { 0 };
	long long step = -1, t0 = 0, t1 = 0;
	int block = 0, unl = 0, src;
	struct job j;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "s|zz*LLLzpp", kwlist, &source, &path, &data,
					 &step, &t0, &t1, &name, &block, &unl))
		return NULL;
	if (!self->lv) {
		PyBuffer_Release(&data);
		PyErr_SetString(PyExc_RuntimeError, "the server is stopped");
		return NULL;
	}
	src = source_of(source);
	if (src < 0 || (!path && !data.buf)) {
		PyBuffer_Release(&data);
		PyErr_SetString(PyExc_ValueError,
				"source must be torch, runmetadata or xspace, with a path or data");
		return NULL;
	}
	memset(&j, 0, sizeof(j));
	j.source = src;
	j.step = step;
	j.t0 = t0;
	j.t1 = t1;
	j.unlink_after = unl != 0;
	if (name)
		snprintf(j.name, sizeof(j.name), "%s", name);
	if (path && !(j.path = strdup(path)))
		goto nomem;
	if (!path && data.buf) {
		j.data = malloc(data.len ? (size_t)data.len : 1);
		if (!j.data)
			goto nomem;
		memcpy(j.data, data.buf, (size_t)data.len);
		j.len = (size_t)data.len;
	}
	PyBuffer_Release(&data);
	if (block) {
		struct tft_live_import im = { .source = j.source, .path = j.path, .data = j.data,
					      .len = j.len, .step = j.step, .t0_ns = j.t0, .t1_ns = j.t1,
					      .name = j.name[0] ? j.name : NULL };
		struct tft_error err;
		uint64_t events = 0;
		struct tft_live *lv = self->lv;
		int rc;

		tft_error_clear(&err);
		Py_BEGIN_ALLOW_THREADS
		rc = tft_live_import(lv, &im, &events, &err);
		Py_END_ALLOW_THREADS
		if (j.unlink_after && j.path)
			unlink(j.path);
		job_free(&j);
		/* counted with the worker's imports in status(); under the GIL */
		if (rc) {
			self->bfailed++;
			tft_error_format(&err, self->blast_error, sizeof(self->blast_error));
			self->blast_error_ns = mono_ns();
		} else {
			self->bdone++;
			self->bevents += events;
		}
		if (rc)
			return raise_status(rc, &err, "cannot import the trace");
		return PyLong_FromUnsignedLongLong(events);
	}
	return PyBool_FromLong(worker_push(&self->worker, &j));
nomem:
	PyBuffer_Release(&data);
	job_free(&j);
	return PyErr_NoMemory();
}

static PyObject *server_drain_imports(ServerObject *self, PyObject *args)
{
	double timeout = 30;
	bool idle;

	if (!PyArg_ParseTuple(args, "|d", &timeout))
		return NULL;
	NEED_LV(self);
	Py_BEGIN_ALLOW_THREADS
	idle = worker_drain(&self->worker, (int64_t)(timeout * 1000));
	Py_END_ALLOW_THREADS
	return PyBool_FromLong(idle);
}

/* ---- steps ---------------------------------------------------------------- */

static StepObject *step_new(ServerObject *srv)
{
	StepObject *s = PyObject_GC_New(StepObject, &StepType);

	if (!s)
		return NULL;
	Py_INCREF(srv);
	s->srv = srv;
	s->name = NULL;
	s->closer = NULL;
	s->index = -1;
	s->traced = s->active = s->routed = false;
	PyObject_GC_Track(s);
	return s;
}

/* step(name=None): a context manager timing one step (fast path in C). */
static PyObject *server_step(ServerObject *self, PyObject *const *args, Py_ssize_t nargs,
			     PyObject *kwnames)
{
	PyObject *name = NULL;
	StepObject *s;

	if (nargs > 1 || (kwnames && PyTuple_GET_SIZE(kwnames) > 1)) {
		PyErr_SetString(PyExc_TypeError, "step(name=None)");
		return NULL;
	}
	if (nargs == 1)
		name = args[0];
	else if (kwnames && PyTuple_GET_SIZE(kwnames) == 1) {
		if (!PyUnicode_Check(PyTuple_GET_ITEM(kwnames, 0)) ||
		    PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0), "name") != 0) {
			PyErr_SetString(PyExc_TypeError, "step(name=None)");
			return NULL;
		}
		name = args[0];
	}
	if (name == Py_None)
		name = NULL;
	if (name && !PyUnicode_Check(name)) {
		PyErr_SetString(PyExc_TypeError, "step name must be a str");
		return NULL;
	}
	/* Reuse the cached context when nobody else holds it (the common loop). */
	s = self->cache;
	if (s && Py_REFCNT(s) == 1 && !s->active) {
		Py_INCREF(s);
	} else {
		s = step_new(self);
		if (!s)
			return NULL;
		if (!self->cache) {
			Py_INCREF(s);
			self->cache = s;
		}
	}
	Py_XINCREF(name);
	Py_XSETREF(s->name, name);
	return (PyObject *)s;
}

static PyObject *step_enter(StepObject *self, PyObject *unused)
{
	ServerObject *srv = self->srv;
	const char *name = NULL;
	bool traced = false;

	if (!srv) {
		PyErr_SetString(PyExc_RuntimeError, "the server is gone");
		return NULL;
	}
	if (self->active) {
		PyErr_SetString(PyExc_RuntimeError, "this step is already open");
		return NULL;
	}
	if (self->name && !(name = PyUnicode_AsUTF8AndSize(self->name, NULL)))
		return NULL;
	self->index = tft_live_step_begin(srv->lv, name, &traced);
	self->active = true;
	self->traced = traced;
	if (self->index < 0) {
		srv->lost_steps++;
		warn_disabled_once();
		if (PyErr_Occurred())
			return NULL; /* warnings turned into errors */
	}
	if (traced && srv->on_traced) {
		PyObject *r = PyObject_CallFunction(srv->on_traced, "LO", (long long)self->index,
						    self->name ? self->name : Py_None);
		if (!r) {
			/* Tracing must never stop training: report and go on untraced. */
			PyErr_WriteUnraisable(srv->on_traced);
		} else if (r == Py_None) {
			Py_DECREF(r);
		} else {
			Py_XSETREF(self->closer, r);
			/* a profiler runs over the step: its trace is imported when it ends */
			tft_live_step_expect_imports(srv->lv, self->index, 1);
			if (srv->zone_hook) {
				tls_zone_hook = srv->zone_hook;
				self->routed = true;
			}
		}
	}
	Py_INCREF(self);
	return (PyObject *)self;
}

/* The step's zones go back to the runtime (the thread that opened it). */
static void step_unroute(StepObject *self)
{
	if (self->routed) {
		self->routed = false;
		tls_zone_hook = NULL;
	}
}

static PyObject *step_exit(StepObject *self, PyObject *const *args, Py_ssize_t nargs)
{
	PyObject *closer = self->closer;

	if (!self->active || !self->srv)
		Py_RETURN_FALSE;
	self->active = false;
	step_unroute(self);
	tft_live_step_end(self->srv->lv);
	if (closer) {
		PyObject *r;
		self->closer = NULL;
		r = PyObject_CallFunction(closer, "L", (long long)self->index);
		if (!r)
			PyErr_WriteUnraisable(closer);
		Py_XDECREF(r);
		Py_DECREF(closer);
	}
	Py_RETURN_FALSE;
}

static PyObject *step_index(StepObject *self, void *closure)
{
	return PyLong_FromLongLong(self->index);
}

static PyObject *step_traced(StepObject *self, void *closure)
{
	return PyBool_FromLong(self->traced);
}

static int step_traverse(StepObject *self, visitproc visit, void *arg)
{
	Py_VISIT(self->srv);
	Py_VISIT(self->name);
	Py_VISIT(self->closer);
	return 0;
}

static int step_clear(StepObject *self)
{
	Py_CLEAR(self->name);
	Py_CLEAR(self->closer);
	Py_CLEAR(self->srv);
	return 0;
}

static void step_dealloc(StepObject *self)
{
	PyObject_GC_UnTrack(self);
	if (self->active && self->srv) {
		step_unroute(self);
		tft_live_step_end(self->srv->lv);
	}
	step_clear(self);
	PyObject_GC_Del(self);
}

/*
 * abandon(): the open step is not one after all (`tftracer record` at exit:
 * the program's tail after its last optimizer step). It is not ended, so
 * the session never gets it; a traced step's closer is dropped uncalled.
 */
static PyObject *step_abandon(StepObject *self, PyObject *unused)
{
	PyObject *closer = self->closer;

	if (!self->active || !self->srv)
		Py_RETURN_NONE;
	self->active = false;
	step_unroute(self);
	if (self->srv->lv)
		tft_live_step_abandon(self->srv->lv);
	if (closer) {
		/* a traced step's profiler: stopped, nothing exported (index -1) */
		PyObject *r;
		self->closer = NULL;
		r = PyObject_CallFunction(closer, "L", -1LL);
		if (!r)
			PyErr_WriteUnraisable(closer);
		Py_XDECREF(r);
		Py_DECREF(closer);
	}
	Py_RETURN_NONE;
}

static PyMethodDef step_methods[] = {
	{ "__enter__", (PyCFunction)step_enter, METH_NOARGS, NULL },
	{ "__exit__", (PyCFunction)(void (*)(void))step_exit, METH_FASTCALL, NULL },
	{ "abandon", (PyCFunction)step_abandon, METH_NOARGS,
	  "abandon(): leave the open step unended: the session never records it" },
	{ NULL, NULL, 0, NULL },
};

static PyGetSetDef step_getset[] = {
	{ "index", (getter)step_index, NULL, "the step's index (-1 when not recorded)", NULL },
	{ "traced", (getter)step_traced, NULL, "op-level events are recorded for this step", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

static PyTypeObject StepType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "tftracer._tftracer.Step",
	.tp_basicsize = sizeof(StepObject),
	.tp_dealloc = (destructor)step_dealloc,
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
	.tp_doc = "A step context (TracingServer.step()).",
	.tp_traverse = (traverseproc)step_traverse,
	.tp_clear = (inquiry)step_clear,
	.tp_methods = step_methods,
	.tp_getset = step_getset,
};

static PyMethodDef server_methods[] = {
	{ "step", (PyCFunction)(void (*)(void))server_step, METH_FASTCALL | METH_KEYWORDS,
	  "step(name=None): context manager timing one step" },
	{ "stop", (PyCFunction)server_stop, METH_NOARGS, "stop the server (imports finish first)" },
	{ "wait", (PyCFunction)server_wait, METH_VARARGS,
	  "wait(timeout=-1) -> True once the server stopped" },
	{ "trace_next", (PyCFunction)server_trace_next, METH_VARARGS, "trace the next n steps" },
	{ "trace_every", (PyCFunction)server_trace_every, METH_VARARGS,
	  "trace every k-th step (0 = off)" },
	{ "set_tracing", (PyCFunction)server_set_tracing, METH_VARARGS, "global op-level tracing" },
	{ "status", (PyCFunction)server_status, METH_NOARGS, "the /api/live/status object" },
	{ "save", (PyCFunction)server_save, METH_VARARGS, "save(path=None) -> (path, bytes)" },
	{ "serve", (PyCFunction)server_serve, METH_VARARGS,
	  "serve(path=None): serve a saved session file (None: the live one again)" },
	{ "import_trace", (PyCFunction)(void (*)(void))server_import_trace,
	  METH_VARARGS | METH_KEYWORDS, "import a profiler trace into the live session" },
	{ "drain_imports", (PyCFunction)server_drain_imports, METH_VARARGS,
	  "drain_imports(timeout=30) -> True once no import is queued or running" },
	{ "expect_imports", (PyCFunction)server_expect_imports, METH_VARARGS,
	  "expect_imports(step, n=1): n profiler traces of the traced step will be imported" },
	{ "set_end_next", (PyCFunction)server_set_end_next, METH_VARARGS,
	  "set_end_next(next): what the pages are told follows the end (\"serve\" or None)" },
	{ "import_failed", (PyCFunction)server_import_failed, METH_VARARGS,
	  "import_failed(step, why=None): an expected trace of the step will not come" },
	{ NULL, NULL, 0, NULL },
};

static PyGetSetDef server_getset[] = {
	{ "url", (getter)server_url, NULL, "the URL to open", NULL },
	{ "port", (getter)server_port, NULL, "the bound port", NULL },
	{ "on_traced", (getter)server_get_on_traced, (setter)server_set_on_traced,
	  "callable(index, name) run when a traced step begins; what it returns is called "
	  "with the index when the step ends", NULL },
	{ "zone_hook", (getter)server_get_zone_hook, (setter)server_set_zone_hook,
	  "callable(name) -> context manager: zone(name) inside a step that on_traced "
	  "profiles opens it instead of a runtime zone (the profiler records it)", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

static PyTypeObject ServerType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "tftracer._tftracer.Server",
	.tp_basicsize = sizeof(ServerObject),
	.tp_dealloc = (destructor)server_dealloc,
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
	.tp_doc = "Server(host='127.0.0.1', port=9999, token=None, path=None, threads=4, "
		  "no_auth=False): the live HTTP server (C part of TracingServer).",
	.tp_traverse = (traverseproc)server_traverse,
	.tp_clear = (inquiry)server_clear,
	.tp_methods = server_methods,
	.tp_getset = server_getset,
	.tp_init = (initproc)server_init,
	.tp_new = PyType_GenericNew,
};

/* ==== zones (Python-level scopes recorded by the runtime) ======================= */

/* Sites live until exit (the runtime keeps their addresses): one per name, capped. */
static struct tft_site *sites;
static struct tft_strtab *site_names;
static pthread_mutex_t site_lock = PTHREAD_MUTEX_INITIALIZER;
static struct tft_site other_site = { "(other)", "python", NULL, 0, 0 };

static const struct tft_site *site_for(const char *name, size_t len)
{
	const struct tft_site *s = &other_site;
	uint32_t id;

	pthread_mutex_lock(&site_lock);
	if (!site_names) {
		site_names = tft_strtab_create();
		sites = calloc(SITES_MAX, sizeof(*sites));
	}
	if (site_names && sites) {
		id = tft_strtab_find(site_names, name, len);
		if (id == UINT32_MAX && tft_strtab_count(site_names) < SITES_MAX) {
			id = tft_strtab_intern(site_names, name, len);
			if (id != UINT32_MAX) {
				sites[id].name = tft_strtab_get(site_names, id, NULL);
				sites[id].cat = "python";
			}
		}
		if (id != UINT32_MAX && id < SITES_MAX)
			s = &sites[id];
	}
	pthread_mutex_unlock(&site_lock);
	return s;
}

typedef struct {
	PyObject_HEAD
	const struct tft_site *site;
	struct tft_zone z;
	PyObject *name;   /* strong: the name given */
	PyObject *cm;     /* strong: the zone_hook's context manager while open, or NULL */
} ZoneObject;

static PyTypeObject ZoneType;

static PyObject *mod_zone(PyObject *m, PyObject *arg)
{
	ZoneObject *z;
	const char *name;
	Py_ssize_t len;

	if (!PyUnicode_Check(arg)) {
		PyErr_SetString(PyExc_TypeError, "zone(name): name must be a str");
		return NULL;
	}
	if (!(name = PyUnicode_AsUTF8AndSize(arg, &len)))
		return NULL;
	z = PyObject_New(ZoneObject, &ZoneType);
	if (!z)
		return NULL;
	z->site = tft_is_tracing() ? site_for(name, (size_t)len) : &other_site;
	z->z.depth = z->z.serial = 0;
	Py_INCREF(arg);
	z->name = arg;
	z->cm = NULL;
	return (PyObject *)z;
}

static PyObject *zone_enter(ZoneObject *self, PyObject *unused)
{
	PyObject *hook = tls_zone_hook;

	if (hook && !self->cm) {
		/* the step's profiler records it (see tls_zone_hook) */
		PyObject *cm = PyObject_CallOneArg(hook, self->name), *r = NULL;
		if (cm)
			r = PyObject_CallMethod(cm, "__enter__", NULL);
		if (r) {
			Py_DECREF(r);
			self->cm = cm;
			Py_INCREF(self);
			return (PyObject *)self;
		}
		/* a hook that fails: the runtime records the zone; training goes on */
		Py_XDECREF(cm);
		PyErr_WriteUnraisable(hook);
	}
	self->z = tft_zone_begin(self->site);
	Py_INCREF(self);
	return (PyObject *)self;
}

static PyObject *zone_exit(ZoneObject *self, PyObject *const *args, Py_ssize_t nargs)
{
	PyObject *cm = self->cm;

	if (cm) {
		PyObject *r;
		self->cm = NULL;
		r = PyObject_CallMethod(cm, "__exit__", "OOO", Py_None, Py_None, Py_None);
		if (!r)
			PyErr_WriteUnraisable(cm);
		Py_XDECREF(r);
		Py_DECREF(cm);
		Py_RETURN_FALSE;
	}
	tft_zone_end(self->z);
	self->z.depth = 0;
	Py_RETURN_FALSE;
}

static void zone_dealloc(ZoneObject *self)
{
	Py_XDECREF(self->cm);
	Py_XDECREF(self->name);
	PyObject_Free(self);
}

static PyMethodDef zone_methods[] = {
	{ "__enter__", (PyCFunction)zone_enter, METH_NOARGS, NULL },
	{ "__exit__", (PyCFunction)(void (*)(void))zone_exit, METH_FASTCALL, NULL },
	{ NULL, NULL, 0, NULL },
};

static PyTypeObject ZoneType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "tftracer._tftracer.Zone",
	.tp_basicsize = sizeof(ZoneObject),
	.tp_dealloc = (destructor)zone_dealloc,
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "A timed scope recorded while op-level tracing is on (zone(name)).",
	.tp_methods = zone_methods,
};

/* ==== runtime functions ======================================================== */

static PyObject *mod_init(PyObject *m, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { KW("session"), KW("enabled"), KW("flush_ms"), KW("buffer_bytes"), NULL };
	const char *session = NULL;
	int enabled = 0;
	unsigned int flush_ms = 0;
	unsigned long long buffer_bytes = 0;
	struct tft_config cfg;
	char path[4096];
	int rc;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "|zpIK", kwlist, &session, &enabled, &flush_ms,
					 &buffer_bytes))
		return NULL;
	tft_config_init(&cfg);
	cfg.session_path = session;
	cfg.enabled = enabled != 0;
	if (flush_ms)
		cfg.flush_interval_ms = flush_ms;
	if (buffer_bytes)
		cfg.buffer_bytes = (size_t)buffer_bytes;
	Py_BEGIN_ALLOW_THREADS
	rc = tft_init(&cfg);
	Py_END_ALLOW_THREADS
	if (rc) {
		struct tft_runtime_stats st = { .struct_size = sizeof(st) };
		struct tft_error err;
		tft_stats(&st);
		tft_error_clear(&err);
		tft_error_set(&err, rc, -1, "%s",
			      rc == TFT_EINVAL && !st.disabled_reason[0] ? "already running, or bad path"
									: st.disabled_reason);
		return raise_status(rc == TFT_EINVAL ? TFT_EIO : rc, &err, "cannot start tracing");
	}
	if (tft_runtime_path(path, sizeof(path)) < 0)
		path[0] = 0;
	return PyUnicode_DecodeFSDefault(path);
}

static PyObject *mod_shutdown(PyObject *m, PyObject *unused)
{
	int rc;

	Py_BEGIN_ALLOW_THREADS
	rc = tft_shutdown();
	Py_END_ALLOW_THREADS
	return PyLong_FromLong(rc);
}

static PyObject *mod_flush(PyObject *m, PyObject *args)
{
	unsigned int ms = 1000;
	int rc;

	if (!PyArg_ParseTuple(args, "|I", &ms))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	rc = tft_flush(ms);
	Py_END_ALLOW_THREADS
	return PyBool_FromLong(rc == 0);
}

static PyObject *mod_stats(PyObject *m, PyObject *unused)
{
	struct tft_runtime_stats st;
	PyObject *d;

	memset(&st, 0, sizeof(st));
	st.struct_size = sizeof(st);
	tft_stats(&st);
	d = PyDict_New();
	if (!d)
		return NULL;
	DICT_SET(d, "state", PyUnicode_FromString(st.state == TFT_RUNTIME_RUNNING    ? "running"
						  : st.state == TFT_RUNTIME_DISABLED ? "disabled"
										     : "off"));
	DICT_SET(d, "tracing", PyBool_FromLong(st.tracing));
	DICT_SET(d, "events", PyLong_FromUnsignedLongLong(st.events));
	DICT_SET(d, "dropped", PyLong_FromUnsignedLongLong(st.dropped));
	DICT_SET(d, "bytes_written", PyLong_FromUnsignedLongLong(st.bytes_written));
	DICT_SET(d, "flushes", PyLong_FromUnsignedLongLong(st.flushes));
	DICT_SET(d, "threads", PyLong_FromUnsignedLongLong(st.threads));
	DICT_SET(d, "steps", PyLong_FromLongLong(st.steps));
	DICT_SET(d, "disabled_status", PyLong_FromLong(st.disabled_status));
	DICT_SET(d, "disabled_reason", PyUnicode_DecodeUTF8(st.disabled_reason,
							    strlen(st.disabled_reason), "replace"));
	return d;
}

static PyObject *mod_runtime_path(PyObject *m, PyObject *unused)
{
	char path[4096];

	if (tft_runtime_path(path, sizeof(path)) < 0)
		Py_RETURN_NONE;
	return PyUnicode_DecodeFSDefault(path);
}

static PyObject *mod_set_tracing(PyObject *m, PyObject *args)
{
	int on;

	if (!PyArg_ParseTuple(args, "p", &on))
		return NULL;
	tft_set_tracing(on != 0);
	Py_RETURN_NONE;
}

static PyObject *mod_trace_next(PyObject *m, PyObject *args)
{
	int n = 1;

	if (!PyArg_ParseTuple(args, "|i", &n))
		return NULL;
	tft_trace_next_steps(n);
	Py_RETURN_NONE;
}

/*
 * append_slices(kind, track, slices) -> appended: whole slices recorded in
 * Python (torch.distributed collectives, python/tftracer/_distributed.py) onto
 * a track of the running session's process (tft_rt_append_slices). kind: a
 * track kind name ("comm"); slices: (name, cat, start_ns, end_ns, args), times
 * on time.monotonic_ns(), args a dict of int, bool, str, or list/tuple/dict
 * (stored as JSON). Raises TftError when no session runs.
 */
static PyObject *mod_append_slices(PyObject *m, PyObject *a)
{
	static PyObject *dumps;
	const char *kind_name, *track;
	PyObject *list, *keep = NULL, *seq = NULL;
	struct tft_rt_slice *sl = NULL;
	struct tft_rt_arg *args = NULL;
	Py_ssize_t n, na = 0;
	uint32_t kind = 0;
	int rc;

	if (!PyArg_ParseTuple(a, "ssO", &kind_name, &track, &list))
		return NULL;
	for (uint32_t k = 1; k <= TFT_TRACK_KIND_MAX; k++)
		if (strcmp(tft_track_kind_name(k), kind_name) == 0)
			kind = k;
	if (!kind) {
		PyErr_Format(PyExc_ValueError, "append_slices: no track kind %s", kind_name);
		return NULL;
	}
	if (!dumps) {
		PyObject *json = PyImport_ImportModule("json");
		dumps = json ? PyObject_GetAttrString(json, "dumps") : NULL;
		Py_XDECREF(json);
		if (!dumps)
			return NULL;
	}
	if (!(seq = PySequence_Fast(list, "append_slices: slices must be a sequence")))
		return NULL;
	n = PySequence_Fast_GET_SIZE(seq);
	keep = PyList_New(0); /* JSON texts made here, alive until the call returns */
	sl = calloc((size_t)n + 1, sizeof(*sl));
	args = calloc((size_t)n * TFT_RT_MAX_ARGS + 1, sizeof(*args));
	if (!keep || !sl || !args) {
		PyErr_NoMemory();
		goto out;
	}
	for (Py_ssize_t i = 0; i < n; i++) {
		PyObject *t = PySequence_Fast_GET_ITEM(seq, i), *d, *key, *val;
		long long t0, t1;
		Py_ssize_t pos = 0;

		if (!PyArg_ParseTuple(t, "zzLLO!", &sl[i].name, &sl[i].cat, &t0, &t1, &PyDict_Type, &d))
			goto out;
		sl[i].ts_ns = t0;
		sl[i].dur_ns = t1 - t0;
		sl[i].args = &args[na];
		while (PyDict_Next(d, &pos, &key, &val) && sl[i].nargs < TFT_RT_MAX_ARGS) {
			struct tft_rt_arg *x = &args[na];
			Py_ssize_t len;
			if (!(x->key = PyUnicode_AsUTF8(key)))
				goto out;
			if (PyBool_Check(val)) {
				x->type = TFT_RT_ARG_BOOL;
				x->i = val == Py_True;
			} else if (PyLong_Check(val)) {
				x->type = TFT_RT_ARG_INT;
				x->i = PyLong_AsLongLong(val);
				if (x->i == -1 && PyErr_Occurred())
					goto out;
			} else if (PyUnicode_Check(val)) {
				x->type = TFT_RT_ARG_TEXT;
				if (!(x->s = PyUnicode_AsUTF8AndSize(val, &len)))
					goto out;
				x->len = (uint32_t)len;
			} else {
				PyObject *j = PyObject_CallOneArg(dumps, val);
				if (!j || PyList_Append(keep, j)) {
					Py_XDECREF(j);
					goto out;
				}
				Py_DECREF(j);
				x->type = TFT_RT_ARG_JSON;
				if (!(x->s = PyUnicode_AsUTF8AndSize(j, &len)))
					goto out;
				x->len = (uint32_t)len;
			}
			sl[i].nargs++;
			na++;
		}
	}
	Py_BEGIN_ALLOW_THREADS
	rc = tft_rt_append_slices(kind, track, sl, (uint32_t)n);
	Py_END_ALLOW_THREADS
	if (rc < 0) {
		PyErr_Format(TftError, "append_slices: %s", rc == TFT_EINVAL ? "no session runs" : tft_strerror(rc));
		goto out;
	}
	free(sl);
	free(args);
	Py_DECREF(keep);
	Py_DECREF(seq);
	return PyLong_FromLong(rc);
out:
	free(sl);
	free(args);
	Py_XDECREF(keep);
	Py_XDECREF(seq);
	return NULL;
}

/*
 * set_job(rank, size=-1, id=None) -> True, or False when no session runs: the
 * running session's process is rank `rank` of its job (tft_rt_set_job).
 */
static PyObject *mod_set_job(PyObject *m, PyObject *a)
{
	int rank, size = -1, rc;
	const char *id = NULL;

	if (!PyArg_ParseTuple(a, "i|iz", &rank, &size, &id))
		return NULL;
	rc = tft_rt_set_job(rank, size, id);
	if (rc == TFT_EINVAL) {
		PyErr_SetString(PyExc_ValueError, "set_job: a rank is >= 0");
		return NULL;
	}
	return PyBool_FromLong(rc == 0);
}

/*
 * set_meta(key, value): a session meta value (tft_set_meta); the drain writes it at
 * its next commit. True when handed over, False when no session runs.
 */
static PyObject *mod_set_meta(PyObject *m, PyObject *args)
{
	const char *key, *value;
	Py_ssize_t klen, vlen;
	int rc;

	if (!PyArg_ParseTuple(args, "s#s#", &key, &klen, &value, &vlen))
		return NULL;
	if ((size_t)klen != strlen(key) || (size_t)vlen != strlen(value)) {
		PyErr_SetString(PyExc_ValueError, "set_meta: embedded NUL character");
		return NULL;
	}
	Py_BEGIN_ALLOW_THREADS
	rc = tft_set_meta(key, value);
	Py_END_ALLOW_THREADS
	if (rc == 0)
		Py_RETURN_TRUE;
	if (rc == TFT_EAGAIN)
		Py_RETURN_FALSE;
	if (rc == TFT_EINVAL) {
		PyErr_Format(PyExc_ValueError,
			     "set_meta: bad key %R (empty, over 127 bytes, or one the session writes "
			     "itself) or a value over 64 MiB", PyTuple_GET_ITEM(args, 0));
		return NULL;
	}
	if (rc == TFT_ENOMEM)
		return PyErr_NoMemory();
	PyErr_Format(TftError, "set_meta: %s", tft_strerror(rc));
	return NULL;
}

static PyObject *mod_monotonic_ns(PyObject *m, PyObject *unused)
{
	return PyLong_FromLongLong(mono_ns());
}

/* ==== offline helpers (Timeline) ================================================== */

/* ingest(out, source, path=None, data=None): a new session file from one trace. */
static PyObject *mod_ingest(PyObject *m, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { KW("out"), KW("source"), KW("path"), KW("data"), NULL };
	const char *out, *source, *path = NULL;
	Py_buffer data = { 0 };
	struct tft_error err;
	struct tft_writer *w;
	int rc = 0, kind;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "ss|zz*", kwlist, &out, &source, &path, &data))
		return NULL;
	kind = strcmp(source, "auto") == 0 ? 0 : source_of(source);
	if (kind < 0 || (!path && !data.buf)) {
		PyBuffer_Release(&data);
		PyErr_SetString(PyExc_ValueError, "source: auto, torch, runmetadata or xspace; path or data");
		return NULL;
	}
	tft_error_clear(&err);
	Py_BEGIN_ALLOW_THREADS
	w = tft_writer_open(out, NULL, &err);
	if (w) {
		if (kind == TFT_LIVE_SRC_RUNMETA && data.buf)
			rc = tft_runmeta_ingest_as(w, "run_metadata", data.buf, (size_t)data.len,
						   TFT_PB_FMT_RUNMETA, NULL, &err);
		else if (kind == TFT_LIVE_SRC_XSPACE && data.buf)
			rc = tft_xspace_ingest(w, "xspace", data.buf, (size_t)data.len, NULL, &err);
		else if (path)
			rc = tft_ingest_file(w, path, NULL, &err);
		else
			rc = tft_ingest_mem(w, "trace", data.buf, (size_t)data.len, NULL, &err);
		if (rc) {
			tft_writer_abort(w);
			unlink(out);
		} else {
			rc = tft_writer_close(w, &err);
		}
	} else {
		rc = err.code ? err.code : TFT_EIO;
	}
	Py_END_ALLOW_THREADS
	PyBuffer_Release(&data);
	if (rc)
		return raise_status(rc, &err, "cannot import the trace");
	Py_RETURN_NONE;
}

static struct tft_session *open_session(const char *path, struct tft_error *err)
{
	tft_error_clear(err);
	return tft_session_open(path, err);
}

static PyObject *mod_summary(PyObject *m, PyObject *args)
{
	const char *path;
	struct tft_session *s;
	struct tft_session_summary sum;
	struct tft_error err;
	PyObject *d;

	if (!PyArg_ParseTuple(args, "s", &path))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	s = open_session(path, &err);
	Py_END_ALLOW_THREADS
	if (!s)
		return raise_status(err.code ? err.code : TFT_EIO, &err, "cannot open the session");
	tft_session_get_summary(s, &sum);
	d = PyDict_New();
	if (d) {
#define SETD(k, expr)                                                          \
		do {                                                           \
			PyObject *v_ = d ? (expr) : NULL;                      \
			if (d && (!v_ || PyDict_SetItemString(d, k, v_)))      \
				Py_CLEAR(d);                                   \
			Py_XDECREF(v_);                                        \
		} while (0);
		SETD("format", PyUnicode_DecodeUTF8(sum.format, strlen(sum.format), "replace"))
		SETD("producer", PyUnicode_DecodeUTF8(sum.producer, strlen(sum.producer), "replace"))
		SETD("processes", PyLong_FromUnsignedLongLong(sum.processes))
		SETD("tracks", PyLong_FromUnsignedLongLong(sum.tracks))
		SETD("slices", PyLong_FromUnsignedLongLong(sum.slices))
		SETD("instants", PyLong_FromUnsignedLongLong(sum.instants))
		SETD("counters", PyLong_FromUnsignedLongLong(sum.counters))
		SETD("flows", PyLong_FromUnsignedLongLong(sum.flows))
		SETD("steps", PyLong_FromUnsignedLongLong(sum.steps))
		SETD("start_ns", PyLong_FromLongLong(sum.start_ns))
		SETD("end_ns", PyLong_FromLongLong(sum.end_ns))
		SETD("dropped", PyLong_FromUnsignedLongLong(sum.dropped))
#undef SETD
	}
	tft_session_close(s);
	return d;
}

/* Intervals for op_times. */
struct ivl {
	int64_t a, b;
};

struct ivls {
	struct ivl *v;
	size_t n, cap;
};

static bool ivls_add(struct ivls *l, int64_t a, int64_t b)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 1024;
		struct ivl *v = realloc(l->v, cap * sizeof(*v));
		if (!v)
			return false;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = (struct ivl){ a, b };
	return true;
}

static int cmp_ivl(const void *x, const void *y)
{
	const struct ivl *a = x, *b = y;

	return a->a < b->a ? -1 : a->a > b->a;
}

/* Length of the union of the intervals. */
static int64_t ivls_union(struct ivls *l)
{
	int64_t total = 0, cs = 0, ce = 0;
	bool open = false;

	if (!l->n)
		return 0;
	qsort(l->v, l->n, sizeof(*l->v), cmp_ivl);
	for (size_t i = 0; i < l->n; i++) {
		if (open && l->v[i].a <= ce) {
			if (l->v[i].b > ce)
				ce = l->v[i].b;
			continue;
		}
		if (open)
			total += ce - cs;
		cs = l->v[i].a;
		ce = l->v[i].b;
		open = true;
	}
	if (open)
		total += ce - cs;
	return total;
}

struct op_ctx {
	struct tft_session *s;
	const char *exclude, *comm_name;
	bool comm_track;
	struct ivls all, comm;
	int64_t t0, t1, c0, c1;
	uint64_t ops, comm_ops;
	bool oom;
};

static int op_event(void *ctx, const struct tft_event *ev)
{
	struct op_ctx *c = ctx;
	const char *name;
	bool comm;

	if (ev->kind != TFT_EV_SLICE)
		return 0;
	name = tft_session_str(c->s, ev->name, NULL);
	if (c->exclude && *c->exclude && strstr(name, c->exclude))
		return 0;
	comm = c->comm_track || (c->comm_name && strcmp(name, c->comm_name) == 0) ||
	       strstr(name, "HorovodAllreduce") != NULL;
	if (!ivls_add(&c->all, ev->ts_ns, ev->ts_ns + ev->dur_ns))
		return c->oom = true, 1;
	if (!c->ops || ev->ts_ns < c->t0)
		c->t0 = ev->ts_ns;
	if (!c->ops || ev->ts_ns + ev->dur_ns > c->t1)
		c->t1 = ev->ts_ns + ev->dur_ns;
	c->ops++;
	if (comm) {
		if (!ivls_add(&c->comm, ev->ts_ns, ev->ts_ns + ev->dur_ns))
			return c->oom = true, 1;
		if (!c->comm_ops || ev->ts_ns < c->c0)
			c->c0 = ev->ts_ns;
		if (!c->comm_ops || ev->ts_ns + ev->dur_ns > c->c1)
			c->c1 = ev->ts_ns + ev->dur_ns;
		c->comm_ops++;
	}
	return 0;
}

/*
 * op_times(path, device=None, exclude=None, comm_name="RecvTensor") -> dict of ns:
 * step (first op start to last op end), comm_elapsed, comm (union of communication
 * ops), busy (union of all ops), ops, comm_ops. Ops: slices on device, stream,
 * communication and thread tracks whose track or process name contains `device`.
 */
static PyObject *mod_op_times(PyObject *m, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { KW("path"), KW("device"), KW("exclude"), KW("comm_name"), NULL };
	const char *path, *device = NULL;
	struct op_ctx c;
	struct tft_error err;
	int rc = 0;
	int64_t busy = 0, comm = 0;

	memset(&c, 0, sizeof(c));
	c.comm_name = "RecvTensor";
	if (!PyArg_ParseTupleAndKeywords(args, kw, "s|zzz", kwlist, &path, &device, &c.exclude,
					 &c.comm_name))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	c.s = open_session(path, &err);
	if (!c.s) {
		rc = err.code ? err.code : TFT_EIO;
	} else {
		uint32_t nt = tft_session_track_count(c.s);
		for (uint32_t t = 0; t < nt && !rc; t++) {
			const struct tft_track *tr = tft_session_track(c.s, t);
			const struct tft_process *p;
			/* (a derived track repeats other tracks' ops: counted there) */
			if (tr->kind == TFT_TRACK_COUNTER || tr->kind == TFT_TRACK_ASYNC ||
			    tr->kind == TFT_TRACK_OBJECT || !tr->slices || (tr->flags & TFT_TRACKF_DERIVED))
				continue;
			if (device && *device) {
				p = tft_session_process(c.s, tr->process);
				if (!strstr(tft_session_str(c.s, tr->name, NULL), device) &&
				    !(p && strstr(tft_session_str(c.s, p->name, NULL), device)))
					continue;
			}
			c.comm_track = tr->kind == TFT_TRACK_COMM;
			rc = tft_session_scan(c.s, t, INT64_MIN, INT64_MAX, 0, op_event, &c, &err);
			if (rc > 0)
				rc = TFT_ENOMEM;
		}
		if (!rc) {
			busy = ivls_union(&c.all);
			comm = ivls_union(&c.comm);
		}
		tft_session_close(c.s);
	}
	Py_END_ALLOW_THREADS
	free(c.all.v);
	free(c.comm.v);
	if (rc)
		return raise_status(rc, rc == TFT_ENOMEM ? NULL : &err, "cannot read the session");
	return Py_BuildValue("{s:L,s:L,s:L,s:L,s:K,s:K,s:L,s:L}", "step",
			     (long long)(c.ops ? c.t1 - c.t0 : 0), "comm_elapsed",
			     (long long)(c.comm_ops ? c.c1 - c.c0 : 0), "comm", (long long)comm, "busy",
			     (long long)busy, "ops", (unsigned long long)c.ops, "comm_ops",
			     (unsigned long long)c.comm_ops, "start_ns", (long long)c.t0, "end_ns",
			     (long long)c.t1);
}

struct file_sink {
	FILE *fp;
	bool failed;
};

static int file_write(void *ctx, const void *buf, size_t len)
{
	struct file_sink *f = ctx;

	if (fwrite(buf, 1, len, f->fp) != len) {
		f->failed = true;
		return TFT_EIO;
	}
	return 0;
}

/* export_html(session, out, max_events=0) -> events inlined */
static PyObject *mod_export_html(PyObject *m, PyObject *args)
{
	const char *path, *out;
	unsigned long long max_events = 0;
	struct tft_error err;
	struct tft_html_counts n = { 0 };
	char tmp[4200];
	int rc = 0;

	if (!PyArg_ParseTuple(args, "ss|K", &path, &out, &max_events))
		return NULL;
	snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", out, (long)getpid());
	tft_error_clear(&err);
	Py_BEGIN_ALLOW_THREADS
	{
		struct tft_session *s = open_session(path, &err);
		struct file_sink fs = { NULL, false };
		struct tft_json_writer w;
		if (!s) {
			rc = err.code ? err.code : TFT_EIO;
		} else if (!(fs.fp = fopen(tmp, "wb"))) {
			rc = tft_error_set(&err, TFT_EIO, -1, "cannot create %s: %s", out, strerror(errno));
		} else if (tft_json_write_init_sink(&w, file_write, &fs)) {
			rc = tft_error_set(&err, TFT_ENOMEM, -1, "out of memory");
		} else {
			rc = tft_export_html_page(s, &w, max_events, &n, &err);
			if (!rc)
				rc = tft_json_write_finish(&w);
			tft_json_write_fini(&w);
		}
		if (fs.fp) {
			if (fclose(fs.fp) != 0 && !rc)
				rc = tft_error_set(&err, TFT_EIO, -1, "cannot write %s", out);
			if (!rc && rename(tmp, out) != 0)
				rc = tft_error_set(&err, TFT_EIO, -1, "cannot write %s: %s", out,
						   strerror(errno));
			if (rc)
				unlink(tmp);
		}
		if (s)
			tft_session_close(s);
	}
	Py_END_ALLOW_THREADS
	if (rc)
		return raise_status(rc, &err, "cannot write the HTML page");
	return PyLong_FromUnsignedLongLong(n.events);
}

/* save_copy(src, dst) -> bytes: a consistent copy of a (live) session file. */
static PyObject *mod_save_copy(PyObject *m, PyObject *args)
{
	const char *src, *dst;
	struct tft_error err;
	uint64_t bytes = 0;
	int rc;

	if (!PyArg_ParseTuple(args, "ss", &src, &dst))
		return NULL;
	tft_error_clear(&err);
	Py_BEGIN_ALLOW_THREADS
	rc = tft_session_save_copy(src, dst, &bytes, &err);
	Py_END_ALLOW_THREADS
	if (rc)
		return raise_status(rc, &err, "cannot save the session");
	return PyLong_FromUnsignedLongLong(bytes);
}

/* ==== module =================================================================== */

static PyMethodDef module_methods[] = {
	{ "init", (PyCFunction)(void (*)(void))mod_init, METH_VARARGS | METH_KEYWORDS,
	  "init(session=None, enabled=False, flush_ms=0, buffer_bytes=0) -> session path" },
	{ "shutdown", mod_shutdown, METH_NOARGS, "stop the runtime (final flush)" },
	{ "flush", mod_flush, METH_VARARGS, "flush(timeout_ms=1000) -> True when committed" },
	{ "stats", mod_stats, METH_NOARGS, "the runtime's statistics" },
	{ "runtime_path", mod_runtime_path, METH_NOARGS, "the runtime's session file or None" },
	{ "set_tracing", mod_set_tracing, METH_VARARGS, "global op-level tracing on/off" },
	{ "trace_next", mod_trace_next, METH_VARARGS, "trace the next n steps" },
	{ "monotonic_ns", mod_monotonic_ns, METH_NOARGS, "CLOCK_MONOTONIC ns (the session clock)" },
	{ "set_job", mod_set_job, METH_VARARGS,
	  "set_job(rank, size=-1, id=None): the session's process is this rank of its job" },
	{ "append_slices", mod_append_slices, METH_VARARGS,
	  "append_slices(kind, track, [(name, cat, start_ns, end_ns, args)]): whole slices into the live session" },
	{ "set_meta", mod_set_meta, METH_VARARGS,
	  "set_meta(key, value) -> True, or False when no session runs: a session meta value" },
	{ "zone", mod_zone, METH_O, "zone(name): a timed scope (recorded while tracing)" },
	{ "ingest", (PyCFunction)(void (*)(void))mod_ingest, METH_VARARGS | METH_KEYWORDS,
	  "ingest(out, source, path=None, data=None): a session file from one trace" },
	{ "summary", mod_summary, METH_VARARGS, "summary(path) -> dict" },
	{ "op_times", (PyCFunction)(void (*)(void))mod_op_times, METH_VARARGS | METH_KEYWORDS,
	  "op_times(path, device=None, exclude=None, comm_name='RecvTensor') -> dict of ns" },
	{ "export_html", mod_export_html, METH_VARARGS,
	  "export_html(session, out, max_events=0) -> events inlined" },
	{ "save_copy", mod_save_copy, METH_VARARGS, "save_copy(src, dst) -> bytes" },
	{ NULL, NULL, 0, NULL },
};

static struct PyModuleDef module_def = {
	PyModuleDef_HEAD_INIT,
	.m_name = "tftracer._tftracer",
	.m_doc = "C core of tftracer: runtime, live server, importers (docs/python.md).",
	.m_size = -1,
	.m_methods = module_methods,
};

PyMODINIT_FUNC PyInit__tftracer(void);
PyMODINIT_FUNC PyInit__tftracer(void)
{
	PyObject *m;

	if (PyType_Ready(&ServerType) < 0 || PyType_Ready(&StepType) < 0 ||
	    PyType_Ready(&ZoneType) < 0)
		return NULL;
	m = PyModule_Create(&module_def);
	if (!m)
		return NULL;
	TftError = PyErr_NewExceptionWithDoc("tftracer.Error",
					     "A tftracer failure; the message is the C library's.",
					     PyExc_RuntimeError, NULL);
	if (!TftError || PyModule_AddObjectRef(m, "Error", TftError) < 0 ||
	    PyModule_AddObjectRef(m, "Server", (PyObject *)&ServerType) < 0 ||
	    PyModule_AddStringConstant(m, "VERSION", TFT_VERSION_STRING) < 0) {
		Py_DECREF(m);
		return NULL;
	}
	return m;
}
