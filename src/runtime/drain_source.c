/* SPDX-License-Identifier: MIT */
/*
 * Event sources (runtime/source.h): the interceptors' collect calls at the
 * start of each drain cycle, and what they may do through tft_rt_src (tracks,
 * slices, flows, counters, meta, the job) in the drain's session.
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

#define SOURCES_MAX 8u

static pthread_mutex_t src_lock = PTHREAD_MUTEX_INITIALIZER; /* tft_rt_source_add only */

static struct tft_rt_source sources[SOURCES_MAX];

static _Atomic uint32_t nsources;

struct tft_rt_src {
	struct tft_rt_session *s; /* borrowed: the drain's session */
};

int tft_rt_source_add(const struct tft_rt_source *src)
{
	uint32_t n;

	pthread_mutex_lock(&src_lock);
	n = atomic_load_explicit(&nsources, memory_order_relaxed);
	if (n == SOURCES_MAX) {
		pthread_mutex_unlock(&src_lock);
		return TFT_ENOSPC;
	}
	sources[n] = *src;
	/* Release: the entry is written before it is counted; pairs with collect_sources. */
	atomic_store_explicit(&nsources, n + 1, memory_order_release);
	pthread_mutex_unlock(&src_lock);
	return 0;
}

void tft_rt_drain_collect_sources(struct tft_rt_session *s, int final)
{
	/* Acquire: pairs with the release store in tft_rt_source_add. */
	uint32_t n = atomic_load_explicit(&nsources, memory_order_acquire);
	struct tft_rt_src io = { s };

	for (uint32_t i = 0; i < n && !s->failed; i++)
		sources[i].collect(sources[i].ctx, &io, final);
}

int64_t tft_rt_src_ns(struct tft_rt_src *io, uint64_t tick)
{
	return tft_rt_clock_ns(&io->s->clock, tick);
}

int64_t tft_rt_src_now_ns(struct tft_rt_src *io)
{
	return tft_rt_clock_ns(&io->s->clock, tft_rt_clock_now(&io->s->clock));
}

uint32_t tft_rt_src_session(struct tft_rt_src *io)
{
	return io->s->generation;
}

uint32_t tft_rt_src_intern(struct tft_rt_src *io, const char *str, size_t len)
{
	uint32_t id;

	if (!io->s->w)
		return 0;
	id = tft_writer_intern(io->s->w, str ? str : "", str ? len : 0);
	return id == UINT32_MAX ? 0 : id;
}

uint32_t tft_rt_src_site_name(struct tft_rt_src *io, const struct tft_site *site)
{
	uint32_t name = 0, cat = 0;

	if (io->s->w && site)
		tft_rt_drain_site_ids(io->s, site, &name, &cat);
	return name;
}

uint32_t tft_rt_src_track(struct tft_rt_src *io, uint32_t kind, const char *name, int64_t tid)
{
	struct tft_rt_session *s = io->s;
	struct tft_track tr;
	uint32_t id;

	if (!s->w || s->failed)
		return TFT_NONE;
	memset(&tr, 0, sizeof(tr));
	tr.process = s->process;
	tr.kind = kind;
	/* a device queue's or stream's commands are concurrent executions: lanes, self = duration */
	tr.flags = kind == TFT_TRACK_GPU_STREAM || kind == TFT_TRACK_DEVICE ? TFT_TRACKF_CONCURRENT : 0;
	tr.name = tft_rt_drain_intern_cstr(s, name);
	tr.tid = tid;
	tr.sort_index = (int32_t)s->sort_next++;
	id = tft_writer_add_track(s->w, &tr);
	if (id == TFT_NONE)
		tft_rt_drain_fail(s, TFT_ENOMEM, "adding a track", NULL);
	return id;
}

int tft_rt_src_append(struct tft_rt_src *io, const struct tft_event *ev)
{
	struct tft_rt_session *s = io->s;
	struct tft_event e = *ev;
	int rc;

	if (!s->w || s->failed)
		return TFT_EIO;
	e.ts_ns = tft_rt_drain_clamp_track(s, ev->track, ev->ts_ns);
	if (e.ts_ns != ev->ts_ns) {
		s->clamped++;
		e.dur_ns = ev->dur_ns - (e.ts_ns - ev->ts_ns) > 0 ? ev->dur_ns - (e.ts_ns - ev->ts_ns) : 0;
	}
	if (!e.count)
		e.count = 1;
	s->consumed++; /* committed with the next commit, like an event of a ring */
	rc = tft_rt_drain_append(s, &e);
	if (rc == TFT_EINVAL)
		s->lost++;
	return rc;
}

void tft_rt_src_flow_end(struct tft_rt_src *io, uint64_t id, uint32_t track, int64_t ts)
{
	struct tft_rt_session *s = io->s;
	struct gev *g;

	if (s->failed || !(g = tft_rt_drain_gev_push(s)))
		return;
	memset(g, 0, sizeof(*g));
	g->ts = ts;
	g->a = id;
	g->seq = s->gseq++;
	g->track = track;
	g->kind = TFT_RK_FLOW_END;
	g->nrec = 0; /* part of the source's event, not an event of its own */
}

void tft_rt_src_flow(struct tft_rt_src *io, uint64_t id, const struct tft_site *site,
		     int64_t src_tid, int64_t src_ts, uint32_t dst_track, int64_t dst_ts)
{
	struct tft_rt_session *s = io->s;
	struct tft_flow f = { .flow_id = id, .src_track = TFT_NONE, .src_ts_ns = src_ts,
			      .dst_track = dst_track, .dst_ts_ns = dst_ts,
			      .flags = TFT_FLOWF_BIND_ENCLOSING };

	if (s->failed || !s->w)
		return;
	/* Acquire: pairs with the release CAS that pushed each thread (emit.c). */
	for (struct tft_rt_thread *t = atomic_load_explicit(&tft_rt_threads, memory_order_acquire);
	     t; t = atomic_load_explicit(&t->next, memory_order_acquire)) {
		if (t->tid == src_tid && t->ds) {
			f.src_track = tft_rt_drain_thread_track(s, t, t->ds);
			break;
		}
	}
	if (f.src_track == TFT_NONE) {
		f.flags |= TFT_FLOWF_UNMATCHED;
		s->unmatched++;
	}
	tft_rt_drain_site_ids(s, site, &f.name, &f.cat);
	tft_rt_drain_add_flow(s, &f);
}

void tft_rt_src_counter(struct tft_rt_src *io, const struct tft_site *site, int64_t ts,
			double value)
{
	struct tft_rt_session *s = io->s;
	struct gev *g;

	if (s->failed)
		return;
	s->consumed++;
	if (!(g = tft_rt_drain_gev_push(s))) {
		s->lost++;
		return;
	}
	memset(g, 0, sizeof(*g));
	g->ts = ts;
	memcpy(&g->b, &value, sizeof(g->b));
	g->site = site;
	g->seq = s->gseq++;
	g->track = TFT_NONE;
	g->kind = TFT_RK_COUNTER;
	g->nrec = 1;
	s->held++;
}

void tft_rt_src_count(struct tft_rt_src *io, const char *key, int64_t delta)
{
	if (io->s->w && !io->s->failed && delta)
		tft_writer_add_named_count(io->s->w, key, delta);
}

void tft_rt_src_meta(struct tft_rt_src *io, const char *key, const char *value)
{
	if (io->s->w && !io->s->failed)
		tft_writer_set_meta(io->s->w, key, value);
}

void tft_rt_src_job(struct tft_rt_src *io, int rank, int size)
{
	struct tft_rt_session *s = io->s;
	struct tft_process *p;
	struct tft_job j;

	if (!s->w || s->failed || rank < 0)
		return;
	tft_job_from_env(&j);
	j.rank = rank;
	if (size > 0)
		j.size = size;
	if ((p = tft_writer_process(s->w, s->process)) != NULL)
		p->rank = rank;
	if (tft_rt_drain_set_job_meta(s->w, &j))
		tft_rt_drain_fail(s, TFT_EIO, "writing the job's meta", NULL);
}

void tft_rt_src_dropped(struct tft_rt_src *io, uint64_t n)
{
	io->s->src_dropped += n;
}

bool tft_rt_src_failed(struct tft_rt_src *io)
{
	return io->s->failed != 0 || !io->s->w;
}
