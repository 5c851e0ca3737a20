/* SPDX-License-Identifier: MIT */
/*
 * The drain's private state (runtime/rt.h, tft_rt_drain_main): the session
 * the drain thread writes and what its files share. drain.c is the loop
 * (cycles, commits, the end); drain_records.c turns each thread's ring
 * records into slices in per-thread order; drain_gev.c orders the
 * cross-thread events (flows, memory, counters, steps) by time;
 * drain_source.c runs the event sources (runtime/source.h); drain_job.c the
 * job's meta; drain_session.c creates and frees the session. The small
 * helpers of the per-event path are static inline here, so that moving
 * them between files costs no call.
 */
#ifndef TFT_RUNTIME_DRAIN_INT_H
#define TFT_RUNTIME_DRAIN_INT_H

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>

#include "core/grow.h"
#include "core/hmap.h"
#include "runtime/job.h"
#include "runtime/rt.h"
#include "runtime/source.h"
#include "store/writer.h"

#define POLL_NS 2000000             /* the drain looks at the wake flag this often */
#define WATERMARK_NS 5000000        /* cross-thread events younger than this wait a cycle */
#define PEND_MAX 16384u             /* completed slices held per thread, at most */
#define GEV_MAX (1u << 18)          /* cross-thread events held, at most */
#define FLOWS_MAX (1u << 16)        /* open flows remembered, at most */
#define ALLOCS_MAX (1u << 20)       /* live allocations remembered, at most */
#define STEPS_OPEN_MAX 16u
#define TAIL_EVERY 1024u            /* release consumed slots this often while draining */
#define NAME_MAX_BYTES 1024u

/* A completed slice or an instant, waiting until the thread's zone stack empties. */
struct pend {
	int64_t ts, dur;
	const struct tft_site *site; /* borrowed: the caller's static call site */
	uint32_t seq;   /* arrival order: ties keep it */
	uint8_t kind;   /* TFT_EV_SLICE or TFT_EV_INSTANT */
	uint8_t flags;  /* TFT_EVF_UNCLOSED */
	uint8_t split;  /* one piece of a zone split at a hold limit */
	uint8_t nrec;   /* records (events) it stands for */
	uint8_t nval;   /* counter deltas of the slice (TFT_RK_VALUES), in ds->pvals[vidx] */
	uint8_t na;     /* args of the slice (TFT_RK_ARG), ds->zargs[a0 .. a0 + na) */
	uint32_t vidx;
	uint32_t a0;
};

/* An open zone on the drain's copy of a thread's stack. */
struct frame {
	const struct tft_site *site; /* borrowed: the caller's static call site */
	int64_t ts;
	uint32_t nrec;  /* 1 until the zone is split, then 0 (its begin was written) */
	uint32_t split;
	uint32_t nval;  /* counter values taken after its begin (TFT_RK_VALUES), 0 if none */
	uint32_t a0, na; /* its args (TFT_RK_ARG) so far: ds->zargs[a0 .. a0 + na) */
	uint64_t val[TFT_RT_MAX_VALUES];
};

struct tft_rt_dthread {
	uint32_t track;        /* writer track, TFT_NONE until needed */
	uint32_t depth;        /* open frames */
	uint32_t npend, cap_pend;
	uint32_t seq;
	int64_t last_ns;       /* latest timestamp of this thread: the clamp floor */
	int64_t first_pend_ns; /* when the oldest pending entry completed */
	uint64_t base_dropped; /* the thread's drop counter when this session met it */
	int seen;              /* recorded something in this session */
	struct pend *pend;     /* owned: cap_pend entries */
	int64_t *pvals;        /* owned, NULL until needed: counter deltas of pending slices,
				* TFT_RT_MAX_VALUES per slot, cap_pend slots */
	uint32_t npvals;       /* slots used since the pending list was last written */
	uint32_t vgot;         /* values of the group being read (TFT_RK_VALUES) */
	uint64_t vcur[TFT_RT_MAX_VALUES];
	uint32_t end_nval, end_depth; /* values taken before the end of the zone at end_depth */
	uint64_t end_val[TFT_RT_MAX_VALUES];
	uint64_t base_vdropped; /* the thread's values_dropped when this session met it */
	struct tft_arg *zargs; /* owned, NULL until needed: args of open zones and pending slices */
	uint32_t nzargs, cap_zargs;
	/* Held for an import (rt.h, tft_rt_import_hold): its ring is read up to the end
	 * of step hold_step (at hold_ts) and no further until released or timed out. */
	int held;
	int64_t hold_step, hold_ts;
	struct frame stack[TFT_RT_MAX_DEPTH];
};

/* A cross-thread event: ordered by time across all threads before use. */
struct gev {
	int64_t ts;
	uint64_t a, b;               /* flow id / pointer / step index; value bits / bytes / traced */
	const struct tft_site *site; /* borrowed: static call site */
	uint32_t seq;
	uint32_t track;              /* the recording thread's track (flows) */
	uint32_t name;               /* string id (step name) */
	uint16_t kind;               /* enum tft_rt_kind */
	uint16_t nrec;
};

struct site_ent {
	uint32_t name, cat;
};

struct flow_ent {
	uint64_t id;
	int64_t ts;
	const struct tft_site *site; /* borrowed: the begin's call site (may be NULL) */
	uint32_t track;
	uint32_t used;
};

struct alloc_ent {
	uint64_t ptr; /* 0 = empty */
	uint64_t bytes;
};

struct open_step {
	int64_t index, start_ns;
	uint32_t name;
	int traced;
};

struct tft_rt_session {
	struct tft_rt_settings st;
	uint32_t generation;      /* tft_rt_src_session */
	uint32_t val_keys[TFT_RT_MAX_VALUES]; /* arg keys of counter values (0 = not interned) */
	uint64_t src_dropped;     /* events sources lost (tft_rt_src_dropped) */
	uint64_t vdropped;        /* value groups dropped (threads retired; live ones added at commit) */
	uint64_t live_vdropped;   /* value groups dropped by live threads (last cycle) */
	uint64_t rep_vdropped, clamped, rep_clamped;
	struct tft_writer *w;     /* owned; NULL after close or failure */
	struct tft_rt_clock clock;
	uint32_t process;
	uint32_t s_split, s_flow, s_memory, s_step; /* string ids */
	uint32_t mem_track;       /* TFT_NONE until the first memory event */
	uint32_t sort_next;
	int64_t *track_last;      /* owned: per track id, last timestamp appended */
	uint32_t cap_track_last;
	uint32_t *track_by_name;  /* owned: counter track per name string id */
	uint32_t cap_track_by_name;
	double *ctr_last;         /* owned: a cumulative counter's last value, per track id */
	uint32_t cap_ctr_last;
	struct site_ent *sites;   /* owned: the call sites' ids, site_ix's values index it */
	uint32_t cap_sites, nsites;
	struct tft_hmap site_ix;  /* owned: site pointer -> index in sites */
	struct tft_hmap cstrs;    /* owned: arg keys' and static values' pointers -> string id */
	char *argtext;            /* owned: TFT_RT_ARG_TEXT_MAX bytes, a text arg's bytes */
	struct gev *gev;          /* owned */
	uint32_t ngev, cap_gev, gseq;
	struct flow_ent *flows;   /* owned: open addressing on the id */
	uint32_t cap_flows, nflows;
	struct alloc_ent *allocs; /* owned: open addressing on the pointer */
	uint32_t cap_allocs, nallocs;
	int64_t mem_in_use;
	struct open_step steps[STEPS_OPEN_MAX];
	uint32_t nsteps;
	/* Accounting, in events (see docs/runtime.md, "Drop accounting"). */
	uint64_t consumed;        /* taken from the rings */
	uint64_t held;            /* consumed, waiting in a stack, pending list or gev */
	uint64_t committed;       /* durable as of the last commit */
	uint64_t lost;            /* consumed and lost (write failure, out of memory) */
	uint64_t retired_dropped; /* producer drops of threads already unmapped */
	uint64_t prod_dropped;    /* producer drops as of the last cycle (incl. retired) */
	uint64_t lost_base;       /* tft_rt_lost when the session began */
	uint64_t threads;         /* threads met */
	uint64_t unclosed, unmatched;
	uint64_t rep_dropped, rep_unclosed, rep_unmatched; /* already added to the meta counts */
	uint64_t hold_timeouts, rep_hold_timeouts; /* holds for an import that timed out */
	int no_hold;              /* the last cycle: nothing is held any more */
	uint64_t flushes, bytes;
	int64_t last_flush_ns, last_flush_unix_ns;
	int failed;               /* status that disabled the session, 0 */
};

/* ---- shared between the drain's files ------------------------------------------------ */

/* drain.c: the writer failed: stop recording, count everything not yet durable as lost. */
void tft_rt_drain_fail(struct tft_rt_session *s, int rc, const char *what, const char *msg);
/* drain.c: commit what the writer holds, publish the statistics. */
void tft_rt_drain_commit(struct tft_rt_session *s);

/* drain_records.c: records of one thread's ring into slices, per-thread order. */
void tft_rt_drain_site_ids(struct tft_rt_session *s, const struct tft_site *site, uint32_t *name,
			   uint32_t *cat);
uint32_t tft_rt_drain_thread_track(struct tft_rt_session *s, struct tft_rt_thread *t,
				   struct tft_rt_dthread *ds);
struct tft_rt_dthread *tft_rt_drain_dthread_create(uint64_t base_dropped);
void tft_rt_drain_dthread_destroy(struct tft_rt_dthread *ds);
void tft_rt_drain_split_flush(struct tft_rt_session *s, struct tft_rt_thread *t,
			      struct tft_rt_dthread *ds, int64_t T);
void tft_rt_drain_close_all(struct tft_rt_session *s, struct tft_rt_thread *t,
			    struct tft_rt_dthread *ds, int64_t end_ns);
int tft_rt_drain_hold_over(struct tft_rt_session *s, struct tft_rt_dthread *ds, int64_t now_ns);
void tft_rt_drain_consume_thread(struct tft_rt_session *s, struct tft_rt_thread *t,
				 struct tft_rt_dthread *ds);
void tft_rt_drain_retire(struct tft_rt_session *s, struct tft_rt_thread *t, struct tft_rt_thread *prev);

/* drain_gev.c: cross-thread events (flows, memory, counters, steps) in time order. */
void tft_rt_drain_add_flow(struct tft_rt_session *s, const struct tft_flow *f);
void tft_rt_drain_flow_unmatched(struct tft_rt_session *s, const struct flow_ent *fe);
void tft_rt_drain_emit_gev(struct tft_rt_session *s, int64_t upto);

/* drain_source.c: each source's collect call, at the start of a cycle. */
void tft_rt_drain_collect_sources(struct tft_rt_session *s, int final);
/* drain_job.c: the job's meta; the job a program said it is in, applied by the drain. */
int tft_rt_drain_set_job_meta(struct tft_writer *w, const struct tft_job *j);
void tft_rt_drain_apply_job(struct tft_rt_session *s);

static inline uint64_t tft_rt_drain_hash_ptr(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

static inline int64_t tft_rt_drain_clamp_track(struct tft_rt_session *s, uint32_t track, int64_t ts)
{
	if (track >= s->cap_track_last) {
		uint32_t old = s->cap_track_last;
		if (tft_grow_ex((void **)&s->track_last, &s->cap_track_last, (uint64_t)track + 1,
				sizeof(*s->track_last), 64, 0))
			return ts; /* the writer rejects an out-of-order event; we count it lost */
		for (uint32_t i = old; i < s->cap_track_last; i++)
			s->track_last[i] = INT64_MIN;
	}

	if (ts < s->track_last[track])
		ts = s->track_last[track];
	s->track_last[track] = ts;
	return ts;
}

static inline int tft_rt_drain_append(struct tft_rt_session *s, const struct tft_event *ev)
{
	int rc;

	if (!s->w)
		return TFT_EIO;
	rc = tft_writer_append(s->w, ev);
	if (rc == TFT_EINVAL) /* a timestamp the clamps did not catch: lose the one event */
		return rc;
	if (rc)
		tft_rt_drain_fail(s, rc, "appending to the session", NULL);
	return rc;
}

static inline uint32_t tft_rt_drain_intern_cstr(struct tft_rt_session *s, const char *p)
{
	size_t n = p ? strnlen(p, NAME_MAX_BYTES) : 0;
	uint32_t id = tft_writer_intern(s->w, p ? p : "", n);

	return id == UINT32_MAX ? 0 : id;
}

static inline struct gev *tft_rt_drain_gev_push(struct tft_rt_session *s)
{
	if (s->ngev == s->cap_gev) {
		uint32_t ncap = s->cap_gev ? s->cap_gev * 2 : 1024;
		struct gev *n;
		if (ncap > GEV_MAX)
			ncap = GEV_MAX;
		if (s->ngev == ncap || !(n = realloc(s->gev, (size_t)ncap * sizeof(*n)))) {
			tft_rt_drain_emit_gev(s, INT64_MAX); /* full: order what we have now */
			if (s->ngev == s->cap_gev)
				return NULL;
		} else {
			s->gev = n;
			s->cap_gev = ncap;
		}
	}
	return &s->gev[s->ngev++];
}

#endif /* TFT_RUNTIME_DRAIN_INT_H */
