/* SPDX-License-Identifier: MIT */
/*
 * The drain's session (rt.h): created with its file before the drain thread
 * starts, the threads already running adopted, the writer lent to imports
 * between cycles (tft_rt_session_with_writer), freed after the thread ends.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/drain_int.h"

static _Atomic uint32_t generations; /* tft_rt_src_session */

struct tft_rt_session *tft_rt_session_create(const struct tft_rt_settings *st,
					     struct tft_error *err)
{
	struct tft_writer_opts wo = { .flush_partial = 1 };
	struct tft_rt_session *s = calloc(1, sizeof(*s));
	struct tft_process p;
	struct tft_job job;
	char host[256], buf[64];
	int64_t mono, real;

	if (!s) {
		tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
		return NULL;
	}
	s->st = *st;
	s->generation = atomic_fetch_add_explicit(&generations, 1, memory_order_relaxed) + 1;
	s->mem_track = TFT_NONE;
	tft_hmap_init(&s->site_ix, 1);
	tft_hmap_init(&s->cstrs, 1);
	s->lost_base = atomic_load_explicit(&tft_rt_lost, memory_order_relaxed);
	tft_rt_clock_init(&s->clock, st->want_tsc);
	s->w = tft_writer_open(st->path, &wo, err);
	if (!s->w) {
		free(s);
		return NULL;
	}
	if (gethostname(host, sizeof(host)) != 0)
		host[0] = 0;
	host[sizeof(host) - 1] = 0;
	memset(&p, 0, sizeof(p));
	p.name = tft_rt_drain_intern_cstr(s, program_invocation_short_name);
	p.host = tft_rt_drain_intern_cstr(s, host);
	p.pid = (int64_t)getpid();
	p.rank = tft_job_from_env(&job);
	p.labels = 0;
	s->process = tft_writer_add_process(s->w, &p);
	s->s_split = tft_rt_drain_intern_cstr(s, "split");
	s->s_flow = tft_rt_drain_intern_cstr(s, "flow");
	s->s_memory = tft_rt_drain_intern_cstr(s, "memory in use");
	s->s_step = tft_rt_drain_intern_cstr(s, "step");
	mono = tft_rt_mono_ns();
	real = tft_rt_real_ns();
	snprintf(buf, sizeof(buf), "%.0f", s->clock.hz);
	if (s->process == TFT_NONE || tft_writer_set_meta(s->w, "format", "tftracer-runtime") ||
	    tft_writer_set_meta(s->w, "producer", "tftracer runtime " TFT_VERSION_STRING) ||
	    tft_writer_set_meta(s->w, "clock", s->clock.tsc ? "tsc" : "monotonic") ||
	    tft_writer_set_meta(s->w, "clock_domain", "CLOCK_MONOTONIC") ||
	    tft_writer_set_meta(s->w, "tsc_hz", s->clock.tsc ? buf : "0") ||
	    tft_writer_add_count(s->w, TFT_COUNT_REALTIME_OFFSET_NS, real - mono) ||
	    /* (the test skew moves the session's times, not its wall-clock offset: a
	     * host whose clocks are off) */
	    tft_writer_add_count(s->w, TFT_COUNT_SESSION_START_NS, mono + s->clock.skew_ns) ||
	    tft_rt_drain_set_job_meta(s->w, &job) ||
	    tft_writer_add_count(s->w, TFT_COUNT_DROPPED, 0) || tft_writer_commit(s->w, err)) {
		tft_error_set(err, TFT_EIO, -1, "cannot initialise the session file");
		tft_writer_abort(s->w);
		tft_session_file_remove(st->path);
		free(s);
		return NULL;
	}
	atomic_store_explicit(&tft_rt_use_tsc, s->clock.tsc, memory_order_relaxed);
	return s;
}

void tft_rt_session_adopt_threads(struct tft_rt_session *s)
{
	for (struct tft_rt_thread *t = atomic_load_explicit(&tft_rt_threads, memory_order_acquire);
	     t; t = atomic_load_explicit(&t->next, memory_order_acquire)) {
		/* Acquire: pairs with publish(); what the ring holds predates the session. */
		uint64_t head = atomic_load_explicit(&t->head, memory_order_acquire);
		/* Release: we are the consumer until the drain starts; pairs with reserve. */
		atomic_store_explicit(&t->tail, head, memory_order_release);
		tft_rt_drain_dthread_destroy(t->ds);
		t->ds = tft_rt_drain_dthread_create(atomic_load_explicit(&t->dropped, memory_order_relaxed));
		if (t->ds)
			t->ds->base_vdropped =
				atomic_load_explicit(&t->values_dropped, memory_order_relaxed);
	}
}

int tft_rt_session_with_writer(struct tft_rt_session *s,
			       int (*fn)(void *ctx, struct tft_writer *w), void *ctx)
{
	int rc;

	if (!s->w)
		return TFT_EIO;
	rc = fn(ctx, s->w);
	if (rc == TFT_EIO)
		tft_rt_drain_fail(s, rc, "importing into the session", NULL);
	return rc;
}

int64_t tft_rt_session_thread_floor(struct tft_rt_session *s, int64_t tid)
{
	int64_t floor = INT64_MAX;

	(void)s;
	/* Acquire: pairs with the release CAS that pushed each thread (emit.c). */
	for (struct tft_rt_thread *t = atomic_load_explicit(&tft_rt_threads, memory_order_acquire);
	     t; t = atomic_load_explicit(&t->next, memory_order_acquire)) {
		const struct tft_rt_dthread *ds = t->ds;
		if (t->tid != tid || !ds)
			continue;
		for (uint32_t i = 0; i < ds->depth; i++)
			if (ds->stack[i].ts < floor)
				floor = ds->stack[i].ts;
		for (uint32_t i = 0; i < ds->npend; i++)
			if (ds->pend[i].ts < floor)
				floor = ds->pend[i].ts;
	}
	return floor;
}

void tft_rt_session_track_appended(struct tft_rt_session *s, uint32_t track, int64_t ts)
{
	if (s->w && track != TFT_NONE)
		tft_rt_drain_clamp_track(s, track, ts); /* the track's last start is at least ts now */
}

void tft_rt_session_destroy(struct tft_rt_session *s)
{
	if (!s)
		return;
	if (s->w)
		tft_writer_abort(s->w);
	free(s->track_last);
	free(s->track_by_name);
	free(s->ctr_last);
	free(s->sites);
	tft_hmap_fini(&s->site_ix);
	tft_hmap_fini(&s->cstrs);
	free(s->argtext);
	free(s->gev);
	free(s->flows);
	free(s->allocs);
	free(s);
}
