/* SPDX-License-Identifier: MIT */
/*
 * Steps through the hub (live_int.h): the hot path (tft_live_step_begin/end,
 * called by the training loop: a lock held for a copy, never for I/O), the
 * trace requests, and each traced step followed until it has landed (its
 * runtime events in the file and every profiler import it expects done or
 * given up), with the `trace` events that say so.
 */
#include <stdio.h>
#include <stdlib.h>

#include "runtime/rt.h"
#include "server/live_int.h"

const char *tft_live_source_name(int source)
{
	switch (source) {
	case TFT_LIVE_SRC_RUNTIME: return "runtime";
	case TFT_LIVE_SRC_TORCH: return "torch";
	case TFT_LIVE_SRC_RUNMETA: return "runmetadata";
	case TFT_LIVE_SRC_XSPACE: return "xspace";
	default: return "import";
	}
}

/*
 * A trace event to send once ts_lock is released (sse_read takes ev_lock,
 * then ts_lock through the status: never push under ts_lock).
 */
struct trace_note {
	bool push;
	int64_t step;            /* -1: none */
	int source;
	int64_t t0, t1;
	uint64_t events;
	bool complete;           /* every part of the step is in the file */
	bool has_req;
	struct tft_live_request req; /* the request it belongs to, as counted now */
	char name[NAME_MAX_BYTES];
	char why[WHY_BYTES];     /* "" unless an import of it failed */
};

static void copy_why(char *dst, const char *why)
{
	size_t n = why ? strnlen(why, WHY_BYTES - 1) : 0;

	/* one line: the page shows it as is */
	for (size_t i = 0; i < n; i++)
		dst[i] = why[i] == '\n' || why[i] == '\r' ? ' ' : why[i];
	dst[n] = 0;
}

/* Traced step `index` (newest first), or NULL; ts_lock held. */
static struct tstep *tstep_find(struct tft_live *lv, int64_t index)
{
	for (uint32_t i = 1; i <= TSTEPS_MAX; i++) {
		struct tstep *t = &lv->tsteps[(lv->ts_next + TSTEPS_MAX - i) % TSTEPS_MAX];
		if (t->index == index)
			return t;
	}
	return NULL;
}

/* Count a landed step for its request (ts_lock held). */
static void tstep_count(struct tft_live *lv, const struct tstep *t)
{
	if (t->request && t->request == lv->req.id) {
		lv->req.landed++;
		lv->req.failed += t->failed;
	}
}

/* If every part of t is in: done, counted, and *n says so (ts_lock held). */
static void tstep_settle(struct tft_live *lv, struct tstep *t, struct trace_note *n)
{
	if (t->done || !t->released || t->imports > 0)
		return;
	t->done = true;
	tstep_count(lv, t);
	n->complete = true;
	n->push = true;
	n->step = t->index;
	n->source = t->source;
	n->t0 = t->start_ns;
	n->t1 = t->end_ns;
	n->events = t->events;
	memcpy(n->name, t->name, sizeof(n->name));
	memcpy(n->why, t->why, sizeof(n->why));
	n->has_req = t->request != 0;
	n->req = lv->req;
	if (t->request != lv->req.id) /* an older request's step: its id, nothing else */
		n->req = (struct tft_live_request){ .id = t->request };
}

/*
 * A `trace` event: something of a traced step (or a trace) landed in the
 * file. complete: all of it is in (the page calls it landed); request: the
 * trace request the step belongs to, counted as of now; error: why its
 * profiler trace is missing.
 */
static void push_note(struct tft_live *lv, const struct trace_note *n)
{
	struct tft_json_writer w;

	tft_json_write_init_mem(&w);
	tft_json_write_begin_object(&w);
	tft_json_write_key(&w, "step");
	if (n->step >= 0)
		tft_json_write_int(&w, n->step);
	else
		tft_json_write_null(&w);
	tft_json_write_key(&w, "name");
	tft_json_write_cstr(&w, n->name[0] ? n->name : tft_live_source_name(n->source));
	tft_json_write_key(&w, "start_ns");
	tft_json_write_int(&w, n->t0);
	tft_json_write_key(&w, "end_ns");
	tft_json_write_int(&w, n->t1);
	tft_json_write_key(&w, "source");
	tft_json_write_cstr(&w, tft_live_source_name(n->source));
	tft_json_write_key(&w, "events");
	tft_json_write_uint(&w, n->events);
	tft_json_write_key(&w, "complete");
	tft_json_write_bool(&w, n->complete);
	tft_json_write_key(&w, "request");
	if (n->has_req)
		tft_live_write_request(&w, &n->req);
	else
		tft_json_write_null(&w);
	if (n->why[0]) {
		tft_json_write_key(&w, "error");
		tft_json_write_cstr(&w, n->why);
	}
	tft_json_write_end_object(&w);
	tft_live_push_json(lv, "trace", &w);
}

/* A traced step began (the hot path: only traced steps come here). */
static void tstep_begin(struct tft_live *lv, int64_t index, const char *name, int64_t now,
			bool asked)
{
	struct tstep *t;
	int64_t unhold = -1;

	pthread_mutex_lock(&lv->ts_lock);
	t = &lv->tsteps[lv->ts_next++ % TSTEPS_MAX];
	if (t->index >= 0 && !t->done) {
		/* Followed too long (over TSTEPS_MAX traced steps since): given up on. */
		t->failed = true;
		tstep_count(lv, t);
		if (t->hold)
			unhold = t->index;
	}
	memset(t, 0, sizeof(*t));
	t->index = index;
	t->start_ns = t->end_ns = now;
	t->source = TFT_LIVE_SRC_RUNTIME;
	tft_live_copy_name(t->name, name);
	if (asked && lv->req.id && lv->req.steps > 0) {
		t->request = lv->req.id;
		lv->req.begun++;
	}
	pthread_mutex_unlock(&lv->ts_lock);
	if (unhold >= 0)
		tft_rt_import_release(unhold);
}

/*
 * An expected import of t is done (landed or failed): once none is left, the
 * runtime lets its thread go on (ts_lock held). Returns the step to release
 * (after unlocking), or -1.
 */
static int64_t tstep_import_done(struct tstep *t)
{
	if (t->imports > 0)
		t->imports--;
	if (t->imports > 0 || !t->hold)
		return -1;
	t->hold = false;
	return t->index;
}

/* The open step was abandoned: it never happened. */
static void tstep_abandon(struct tft_live *lv, int64_t index)
{
	struct tstep *t;
	int64_t unhold = -1;

	pthread_mutex_lock(&lv->ts_lock);
	t = tstep_find(lv, index);
	if (t && !t->done) {
		if (t->request && t->request == lv->req.id && lv->req.begun > 0)
			lv->req.begun--;
		if (t->hold)
			unhold = t->index; /* (no end: nothing was held; the release is forgotten) */
		t->index = -1;
	}
	pthread_mutex_unlock(&lv->ts_lock);
	if (unhold >= 0)
		tft_rt_import_release(unhold);
}

/* The follower: a traced step's runtime events are in the file. */
void tft_live_tstep_released(struct tft_live *lv, const struct done_step *d)
{
	struct trace_note n = { .step = d->index };
	struct tstep *t;

	pthread_mutex_lock(&lv->ts_lock);
	t = tstep_find(lv, d->index);
	if (t && !t->done) {
		t->released = true;
		t->start_ns = d->start_ns;
		t->end_ns = d->start_ns + d->dur_ns;
		tstep_settle(lv, t, &n);
	} else if (!t) {
		/* not followed (given up on): what it was */
		n = (struct trace_note){ .push = true, .step = d->index, .complete = true,
					 .source = TFT_LIVE_SRC_RUNTIME, .t0 = d->start_ns,
					 .t1 = d->start_ns + d->dur_ns };
		memcpy(n.name, d->name, sizeof(n.name));
	}
	pthread_mutex_unlock(&lv->ts_lock);
	if (n.push)
		push_note(lv, &n);
}

void tft_live_step_expect_imports(struct tft_live *lv, int64_t step, int k)
{
	struct tstep *t;

	if (!lv || k <= 0)
		return;
	pthread_mutex_lock(&lv->ts_lock);
	t = tstep_find(lv, step);
	if (t && !t->done) {
		t->imports += k;
		/* the open step: its thread's later records wait for the trace (rt.h) */
		if (!t->hold && tft_rt_import_hold(step) == 0)
			t->hold = true;
	}
	pthread_mutex_unlock(&lv->ts_lock);
}

void tft_live_step_import_failed(struct tft_live *lv, int64_t step, const char *why)
{
	struct trace_note n = { .step = step };
	struct tstep *t;
	int64_t unhold = -1;

	if (!lv)
		return;
	pthread_mutex_lock(&lv->ts_lock);
	t = tstep_find(lv, step);
	if (t && !t->done && t->imports > 0) {
		unhold = tstep_import_done(t);
		if (!t->failed) {
			t->failed = true;
			copy_why(t->why, why && *why ? why : "the profiler trace did not come");
		}
		tstep_settle(lv, t, &n);
	}
	pthread_mutex_unlock(&lv->ts_lock);
	if (unhold >= 0)
		tft_rt_import_release(unhold);
	if (n.push)
		push_note(lv, &n);
}

int64_t tft_live_step_begin(struct tft_live *lv, const char *name, bool *traced)
{
	int64_t idx;
	bool tr, asked = false;

	/* Runtime off (never started, disabled, or a fork child): record nothing and
	 * leave the hub alone (its locks may be a forked copy). */
	if (!(__atomic_load_n(&tft_rt_state, __ATOMIC_RELAXED) & TFT_RT_STEPS)) {
		if (traced)
			*traced = false;
		return -1;
	}
	if (lv) {
		int64_t every = atomic_load_explicit(&lv->every, memory_order_relaxed);
		int64_t n = atomic_fetch_add_explicit(&lv->nsteps, 1, memory_order_relaxed);
		int64_t p = atomic_load_explicit(&lv->pending, memory_order_relaxed);
		if (p > 0)
			asked = atomic_fetch_sub_explicit(&lv->pending, 1, memory_order_relaxed) > 0;
		else if (every > 0 && n % every == 0)
			tft_trace_next_steps(1);
	}
	idx = tft_step_begin(name);
	tr = tft_is_tracing();
	if (traced)
		*traced = tr && idx >= 0;
	if (lv && idx >= 0) {
		int64_t now = tft_live_mono_ns();
		pthread_mutex_lock(&lv->q_lock);
		lv->cur.index = idx;
		lv->cur.start_ns = now;
		lv->cur.traced = tr;
		tft_live_copy_name(lv->cur.name, name);
		lv->cur_open = true;
		pthread_mutex_unlock(&lv->q_lock);
		if (tr)
			tstep_begin(lv, idx, name, now, asked);
	}
	return idx;
}

int64_t tft_live_step_end(struct tft_live *lv)
{
	int64_t idx = tft_step_end();

	if (lv && idx >= 0) {
		int64_t now = tft_live_mono_ns();
		pthread_mutex_lock(&lv->q_lock);
		if (lv->cur_open && idx == lv->cur.index) {
			if (lv->nqueue < QUEUE_MAX) {
				struct done_step *d = &lv->queue[lv->nqueue++];
				*d = lv->cur;
				d->dur_ns = now - lv->cur.start_ns;
				/* (traced as it began: see drain_gev.c) */
			} else {
				lv->queue_lost++;
			}
		}
		lv->cur_open = false;
		pthread_mutex_unlock(&lv->q_lock);
	}
	return idx;
}

int64_t tft_live_step_abandon(struct tft_live *lv)
{
	int64_t idx = tft_step_abandon();

	if (lv && idx >= 0) {
		pthread_mutex_lock(&lv->q_lock);
		lv->cur_open = false;
		pthread_mutex_unlock(&lv->q_lock);
		tstep_abandon(lv, idx);
	}
	return idx;
}

uint64_t tft_live_trace_next(struct tft_live *lv, int n)
{
	uint64_t id = 0;

	if (n < 0)
		n = 0;
	if (lv) {
		pthread_mutex_lock(&lv->ts_lock);
		if (n > 0)
			lv->req = (struct tft_live_request){ .id = ++lv->req_seq, .steps = n };
		else
			lv->req.steps = 0; /* cancelled: what began of it still lands */
		id = lv->req.id;
		atomic_store(&lv->pending, n);
		pthread_mutex_unlock(&lv->ts_lock);
	}
	tft_trace_next_steps(n);
	return id;
}

void tft_live_trace_every(struct tft_live *lv, int k)
{
	if (lv)
		atomic_store(&lv->every, k > 0 ? k : 0);
}

void tft_live_set_tracing(struct tft_live *lv, bool on)
{
	tft_set_tracing(on);
}

/* live_import.c: an import landed in the file (the readers must see it), or failed. */
void tft_live_note_import(struct tft_live *lv, const struct tft_live_import *im, int rc,
			  uint64_t events, int64_t t0, int64_t t1, const char *why)
{
	struct trace_note n = { .step = im->step, .source = im->source, .t0 = t0, .t1 = t1,
				.events = events, .push = rc == 0, .complete = true };
	struct tstep *t = NULL;
	int64_t unhold = -1;

	if (!lv)
		return;
	if (rc != 0)
		atomic_fetch_add(&lv->import_errors, 1);
	else
		atomic_fetch_add(&lv->imports, 1);
	atomic_fetch_add(&lv->imported_events, events);
	tft_live_copy_name(n.name, im->name ? im->name : tft_live_source_name(im->source));
	if (rc != 0)
		copy_why(n.why, why && *why ? why : "the import failed");
	pthread_mutex_lock(&lv->ts_lock);
	if (im->step >= 0)
		t = tstep_find(lv, im->step);
	if (t && !t->done && t->imports > 0) {
		/* one of the imports the step waits for */
		unhold = tstep_import_done(t);
		t->events += events;
		t->source = im->source;
		if (rc == 0 && events) {
			if (t0 < t->start_ns)
				t->start_ns = t0;
			if (t1 > t->end_ns)
				t->end_ns = t1;
		}
		if (rc != 0 && !t->failed) {
			t->failed = true;
			memcpy(t->why, n.why, sizeof(t->why));
		}
		n.complete = false;
		n.push = false;
		tstep_settle(lv, t, &n);
		if (!n.complete && rc == 0) {
			/* landed, the step not yet whole: said, not counted */
			n.push = true;
			n.t0 = t0;
			n.t1 = t1;
			n.events = events;
			n.has_req = t->request != 0;
			n.req = (struct tft_live_request){ .id = t->request };
		}
	} else if (rc != 0) {
		n.push = false; /* counted in the status; nobody waits for it */
	}
	pthread_mutex_unlock(&lv->ts_lock);
	if (unhold >= 0)
		tft_rt_import_release(unhold);
	if (rc == 0) {
		pthread_mutex_lock(&lv->srv_lock);
		tft_live_bump_locked(lv);
		pthread_mutex_unlock(&lv->srv_lock);
	}
	if (n.push)
		push_note(lv, &n);
}
