/* SPDX-License-Identifier: MIT */
/*
 * Cross-thread events (drain_int.h): flows, allocations (memory in use),
 * counter samples and steps, recorded on any thread, held and ordered by
 * time across threads before they are appended (a watermark keeps the
 * youngest a cycle).
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

static uint32_t counter_track(struct tft_rt_session *s, uint32_t name)
{
	struct tft_track tr;
	uint32_t id;

	if (name >= s->cap_track_by_name) {
		uint32_t old = s->cap_track_by_name;
		if (tft_grow_ex((void **)&s->track_by_name, &s->cap_track_by_name, (uint64_t)name + 1,
				sizeof(*s->track_by_name), 256, 0))
			return TFT_NONE;
		for (uint32_t i = old; i < s->cap_track_by_name; i++)
			s->track_by_name[i] = TFT_NONE;
	}
	if (s->track_by_name[name] != TFT_NONE)
		return s->track_by_name[name];
	memset(&tr, 0, sizeof(tr));
	tr.process = s->process;
	tr.kind = TFT_TRACK_COUNTER;
	tr.name = name;
	tr.sort_index = (int32_t)s->sort_next++;
	id = tft_writer_add_track(s->w, &tr);
	s->track_by_name[name] = id;
	return id;
}

static int cmp_gev(const void *a, const void *b)
{
	const struct gev *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void tft_rt_drain_add_flow(struct tft_rt_session *s, const struct tft_flow *f)
{
	if (s->w && !s->failed) {
		int rc = tft_writer_add_flow(s->w, f);
		if (rc && rc != TFT_EINVAL)
			tft_rt_drain_fail(s, rc, "writing a flow", NULL);
	}
}

void tft_rt_drain_flow_unmatched(struct tft_rt_session *s, const struct flow_ent *fe)
{
	struct tft_flow f = { .flow_id = fe->id, .src_track = fe->track, .src_ts_ns = fe->ts,
			      .dst_track = TFT_NONE, .flags = TFT_FLOWF_UNMATCHED };

	tft_rt_drain_site_ids(s, fe->site, &f.name, &f.cat);
	tft_rt_drain_add_flow(s, &f);
	s->unmatched++;
}

/*
 * The open flows and the live allocations: open addressing over the entries
 * themselves, removed by backward shift.
 * (Not core/hmap: the entries are records that come and go all the time, and
 * the flows left at the end are written in slot order (drain.c): on core/hmap
 * with a dense array the removals would move entries and that order change.)
 */
static struct flow_ent *flow_find(struct tft_rt_session *s, uint64_t id, int insert)
{
	uint32_t j;

	if (!s->cap_flows) {
		if (!insert)
			return NULL;
		s->flows = calloc(1024, sizeof(*s->flows));
		if (!s->flows)
			return NULL;
		s->cap_flows = 1024;
	}
	if (insert && s->nflows * 2 >= s->cap_flows) {
		uint32_t ncap = s->cap_flows * 2;
		struct flow_ent *n;
		if (s->nflows >= FLOWS_MAX || !(n = calloc(ncap, sizeof(*n))))
			return NULL;
		for (uint32_t i = 0; i < s->cap_flows; i++) {
			if (!s->flows[i].used)
				continue;
			for (j = (uint32_t)tft_rt_drain_hash_ptr(s->flows[i].id) & (ncap - 1); n[j].used;
			     j = (j + 1) & (ncap - 1))
				;
			n[j] = s->flows[i];
		}
		free(s->flows);
		s->flows = n;
		s->cap_flows = ncap;
	}
	for (j = (uint32_t)tft_rt_drain_hash_ptr(id) & (s->cap_flows - 1); s->flows[j].used;
	     j = (j + 1) & (s->cap_flows - 1))
		if (s->flows[j].id == id)
			return &s->flows[j];
	if (!insert)
		return NULL;
	s->flows[j].used = 1;
	s->flows[j].id = id;
	s->nflows++;
	return &s->flows[j];
}

/* Remove a used slot of an open-addressing table (backward shift: no tombstones). */
#define TABLE_REMOVE(arr, cap, idx, keyfield, usedexpr, hashfn)                             \
	do {                                                                                 \
		uint32_t i_ = (idx), j_ = (idx);                                             \
		for (;;) {                                                                   \
			j_ = (j_ + 1) & ((cap) - 1);                                         \
			if (!(usedexpr(arr[j_])))                                            \
				break;                                                       \
			uint32_t h_ = (uint32_t)hashfn(arr[j_].keyfield) & ((cap) - 1);      \
			if ((j_ > i_ && (h_ <= i_ || h_ > j_)) ||                            \
			    (j_ < i_ && (h_ <= i_ && h_ > j_))) {                            \
				arr[i_] = arr[j_];                                           \
				i_ = j_;                                                     \
			}                                                                    \
		}                                                                            \
		memset(&arr[i_], 0, sizeof(arr[i_]));                                        \
	} while (0)
#define FLOW_USED(e) ((e).used)
#define ALLOC_USED(e) ((e).ptr != 0)

static void flow_remove(struct tft_rt_session *s, struct flow_ent *fe)
{
	TABLE_REMOVE(s->flows, s->cap_flows, (uint32_t)(fe - s->flows), id, FLOW_USED, tft_rt_drain_hash_ptr);
	s->nflows--;
}

static struct alloc_ent *alloc_find(struct tft_rt_session *s, uint64_t ptr, int insert)
{
	uint32_t j;

	if (!ptr)
		return NULL;
	if (!s->cap_allocs) {
		if (!insert)
			return NULL;
		s->allocs = calloc(4096, sizeof(*s->allocs));
		if (!s->allocs)
			return NULL;
		s->cap_allocs = 4096;
	}
	if (insert && s->nallocs * 2 >= s->cap_allocs) {
		uint32_t ncap = s->cap_allocs * 2;
		struct alloc_ent *n;
		if (s->nallocs >= ALLOCS_MAX || !(n = calloc(ncap, sizeof(*n))))
			return NULL;
		for (uint32_t i = 0; i < s->cap_allocs; i++) {
			if (!s->allocs[i].ptr)
				continue;
			for (j = (uint32_t)tft_rt_drain_hash_ptr(s->allocs[i].ptr) & (ncap - 1); n[j].ptr;
			     j = (j + 1) & (ncap - 1))
				;
			n[j] = s->allocs[i];
		}
		free(s->allocs);
		s->allocs = n;
		s->cap_allocs = ncap;
	}
	for (j = (uint32_t)tft_rt_drain_hash_ptr(ptr) & (s->cap_allocs - 1); s->allocs[j].ptr;
	     j = (j + 1) & (s->cap_allocs - 1))
		if (s->allocs[j].ptr == ptr)
			return &s->allocs[j];
	if (!insert)
		return NULL;
	s->allocs[j].ptr = ptr;
	s->allocs[j].bytes = 0;
	s->nallocs++;
	return &s->allocs[j];
}

static void mem_sample(struct tft_rt_session *s, int64_t ts)
{
	struct tft_event ev;

	if (s->mem_track == TFT_NONE) {
		s->mem_track = counter_track(s, s->s_memory);
		if (s->mem_track == TFT_NONE)
			return;
	}
	memset(&ev, 0, sizeof(ev));
	ev.kind = TFT_EV_COUNTER;
	ev.track = s->mem_track;
	ev.ts_ns = tft_rt_drain_clamp_track(s, s->mem_track, ts);
	ev.value = (double)s->mem_in_use;
	ev.name = s->s_memory;
	ev.count = 1;
	tft_rt_drain_append(s, &ev);
}

/*
 * A cumulative counter's sample: never below the track's last (samples read
 * on two threads can arrive in the opposite order of their reads).
 */
static double monotonic_value(struct tft_rt_session *s, uint32_t track, double v)
{
	if (track >= s->cap_ctr_last) {
		uint32_t old = s->cap_ctr_last;
		if (tft_grow_ex((void **)&s->ctr_last, &s->cap_ctr_last, (uint64_t)track + 1, sizeof(*s->ctr_last),
				64, 0))
			return v;
		for (uint32_t i = old; i < s->cap_ctr_last; i++)
			s->ctr_last[i] = -1e308;
	}

	if (v < s->ctr_last[track])
		v = s->ctr_last[track];
	s->ctr_last[track] = v;
	return v;
}

static void process_gev(struct tft_rt_session *s, const struct gev *g)
{
	struct tft_event ev;
	struct flow_ent *fe;
	struct alloc_ent *ae;
	uint32_t track;

	switch (g->kind) {
	case TFT_RK_COUNTER:
		memset(&ev, 0, sizeof(ev));
		tft_rt_drain_site_ids(s, g->site, &ev.name, &ev.cat);
		track = counter_track(s, ev.name);
		if (track == TFT_NONE) {
			s->lost++;
			break;
		}
		ev.kind = TFT_EV_COUNTER;
		ev.track = track;
		ev.ts_ns = tft_rt_drain_clamp_track(s, track, g->ts);
		memcpy(&ev.value, &g->b, sizeof(ev.value));
		ev.count = 1;
		if (g->site && (g->site->flags & TFT_SITE_MONOTONIC))
			ev.value = monotonic_value(s, track, ev.value);
		if (tft_rt_drain_append(s, &ev) == TFT_EINVAL)
			s->lost++;
		break;
	case TFT_RK_MEM_ALLOC:
		ae = alloc_find(s, g->a, 1);
		if (ae) {
			s->mem_in_use -= (int64_t)ae->bytes; /* a pointer allocated twice: the last wins */
			ae->bytes = g->b;
		}
		s->mem_in_use += (int64_t)g->b; /* untracked (table full): counted, never freed */
		mem_sample(s, g->ts);
		break;
	case TFT_RK_MEM_FREE:
		ae = alloc_find(s, g->a, 0);
		if (ae) {
			s->mem_in_use -= (int64_t)ae->bytes;
			TABLE_REMOVE(s->allocs, s->cap_allocs, (uint32_t)(ae - s->allocs), ptr,
				     ALLOC_USED, tft_rt_drain_hash_ptr);
			s->nallocs--;
			mem_sample(s, g->ts);
		}
		break;
	case TFT_RK_FLOW_BEGIN:
		fe = flow_find(s, g->a, 0);
		if (fe) /* the id was reused before its end: the old flow dangles */
			tft_rt_drain_flow_unmatched(s, fe);
		else
			fe = flow_find(s, g->a, 1);
		if (fe) {
			fe->ts = g->ts;
			fe->site = g->site;
			fe->track = g->track;
		} else {
			struct flow_ent tmp = { .id = g->a, .ts = g->ts, .site = g->site,
						.track = g->track };
			tft_rt_drain_flow_unmatched(s, &tmp); /* table full: written at once, unmatched */
		}
		break;
	case TFT_RK_FLOW_END: {
		struct tft_flow f = { .flow_id = g->a, .dst_track = g->track, .dst_ts_ns = g->ts,
				      .flags = TFT_FLOWF_BIND_ENCLOSING };
		fe = flow_find(s, g->a, 0);
		if (fe) {
			f.src_track = fe->track;
			f.src_ts_ns = fe->ts;
			tft_rt_drain_site_ids(s, fe->site ? fe->site : g->site, &f.name, &f.cat);
			flow_remove(s, fe);
		} else {
			f.src_track = TFT_NONE;
			f.flags |= TFT_FLOWF_UNMATCHED;
			tft_rt_drain_site_ids(s, g->site, &f.name, &f.cat);
			s->unmatched++;
		}
		tft_rt_drain_add_flow(s, &f);
		break;
	}
	case TFT_RK_STEP_BEGIN:
		if (s->nsteps == STEPS_OPEN_MAX) { /* never ended: forget the oldest */
			memmove(&s->steps[0], &s->steps[1], sizeof(s->steps[0]) * (STEPS_OPEN_MAX - 1));
			s->nsteps--;
		}
		s->steps[s->nsteps].index = (int64_t)g->a;
		s->steps[s->nsteps].start_ns = g->ts;
		s->steps[s->nsteps].name = g->name;
		s->steps[s->nsteps].traced = g->b != 0;
		s->nsteps++;
		break;
	case TFT_RK_STEP_END:
		for (uint32_t i = 0; i < s->nsteps; i++) {
			struct open_step *o = &s->steps[i];
			struct tft_step st;
			if (o->index != (int64_t)g->a)
				continue;
			memset(&st, 0, sizeof(st));
			st.index = o->index;
			st.name = o->name;
			st.process = s->process;
			st.start_ns = o->start_ns;
			st.dur_ns = g->ts > o->start_ns ? g->ts - o->start_ns : 0;
			/*
			 * Traced: op-level tracing was on when it began, as
			 * tft_step_begin's caller was told (a profiler started for
			 * it then). Turned on mid-step, the step keeps what it
			 * recorded from there, but is not called traced: its ops
			 * are not all there (a Python step's, none).
			 */
			st.traced = o->traced;
			if (s->w && !s->failed) {
				int rc = tft_writer_add_step(s->w, &st);
				if (rc)
					tft_rt_drain_fail(s, rc, "writing a step", NULL);
			}
			memmove(o, o + 1, sizeof(*o) * (s->nsteps - i - 1));
			s->nsteps--;
			break;
		}
		break;
	default:
		break;
	}
}

/* Process the cross-thread events up to `upto` ns in time order; keep the younger. */
void tft_rt_drain_emit_gev(struct tft_rt_session *s, int64_t upto)
{
	uint32_t n = 0;

	if (!s->ngev)
		return;
	qsort(s->gev, s->ngev, sizeof(*s->gev), cmp_gev);
	while (n < s->ngev && s->gev[n].ts <= upto)
		n++;
	for (uint32_t i = 0; i < n && !s->failed; i++) {
		process_gev(s, &s->gev[i]);
		s->held -= s->gev[i].nrec;
	}
	if (s->failed) {
		s->ngev = 0;
		return;
	}
	memmove(s->gev, s->gev + n, (size_t)(s->ngev - n) * sizeof(*s->gev));
	s->ngev -= n;
}
