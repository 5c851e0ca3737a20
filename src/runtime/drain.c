/* SPDX-License-Identifier: MIT */
/*
 * The drain thread: consumes every thread's ring, turns records into model
 * events (slices in per-thread order, process-wide counters, flows, memory
 * in use, steps), appends them to the session writer and commits at least
 * every flush interval. It also creates the session and closes it at the end.
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
	const struct tft_site *site; /* borrowed key; NULL = empty slot */
	uint32_t name, cat;
};

struct cstr_ent {
	const char *p; /* borrowed key (a static string of an arg); NULL = empty slot */
	uint32_t id;
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
	struct site_ent *sites;   /* owned: open addressing on the site pointer */
	uint32_t cap_sites, nsites;
	struct cstr_ent *cstrs;   /* owned: arg keys and static values, open addressing on the pointer */
	uint32_t cap_cstrs, ncstrs;
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

/* ---- small helpers ------------------------------------------------------------------ */

static uint64_t hash_ptr(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

static uint64_t dropped_now(const struct tft_rt_session *s)
{
	return s->prod_dropped + (atomic_load_explicit(&tft_rt_lost, memory_order_relaxed) -
				  s->lost_base) + s->lost + s->src_dropped;
}

static void publish_stats(struct tft_rt_session *s)
{
	struct tft_rt_snapshot snap = {
		.events = s->committed,
		.dropped = dropped_now(s),
		.bytes = s->bytes,
		.flushes = s->flushes,
		.threads = s->threads,
		.last_flush_ns = s->last_flush_ns,
		.last_flush_unix_ns = s->last_flush_unix_ns,
	};
	tft_rt_publish_stats(&snap);
}

/* The writer failed: stop recording, count everything not yet durable as lost. */
static void fail(struct tft_rt_session *s, int rc, const char *what, const char *msg)
{
	char reason[200];

	if (s->failed)
		return;
	s->failed = rc ? rc : TFT_EIO;
	s->lost = s->consumed - s->committed;
	s->held = 0;
	s->ngev = 0;
	if (s->w) {
		tft_writer_abort(s->w);
		s->w = NULL;
	}
	snprintf(reason, sizeof(reason), "%s: %s", what, msg && *msg ? msg : tft_strerror(rc));
	tft_rt_disable(s->failed, reason);
}

static int64_t clamp_track(struct tft_rt_session *s, uint32_t track, int64_t ts)
{
	if (track >= s->cap_track_last) {
		uint32_t ncap = s->cap_track_last ? s->cap_track_last : 64;
		int64_t *n;
		while (ncap <= track)
			ncap *= 2;
		n = realloc(s->track_last, (size_t)ncap * sizeof(*n));
		if (!n)
			return ts; /* the writer rejects an out-of-order event; we count it lost */
		for (uint32_t i = s->cap_track_last; i < ncap; i++)
			n[i] = INT64_MIN;
		s->track_last = n;
		s->cap_track_last = ncap;
	}
	if (ts < s->track_last[track])
		ts = s->track_last[track];
	s->track_last[track] = ts;
	return ts;
}

static int append(struct tft_rt_session *s, const struct tft_event *ev)
{
	int rc;

	if (!s->w)
		return TFT_EIO;
	rc = tft_writer_append(s->w, ev);
	if (rc == TFT_EINVAL) /* a timestamp the clamps did not catch: lose the one event */
		return rc;
	if (rc)
		fail(s, rc, "appending to the session", NULL);
	return rc;
}

/* ---- sites ------------------------------------------------------------------------- */

static uint32_t intern_cstr(struct tft_rt_session *s, const char *p)
{
	size_t n = p ? strnlen(p, NAME_MAX_BYTES) : 0;
	uint32_t id = tft_writer_intern(s->w, p ? p : "", n);

	return id == UINT32_MAX ? 0 : id;
}

static int sites_grow(struct tft_rt_session *s)
{
	uint32_t ncap = s->cap_sites ? s->cap_sites * 2 : 256;
	struct site_ent *n = calloc(ncap, sizeof(*n));

	if (!n)
		return TFT_ENOMEM;
	for (uint32_t i = 0; i < s->cap_sites; i++) {
		const struct site_ent *e = &s->sites[i];
		uint32_t j;
		if (!e->site)
			continue;
		for (j = (uint32_t)hash_ptr((uintptr_t)e->site) & (ncap - 1); n[j].site;
		     j = (j + 1) & (ncap - 1))
			;
		n[j] = *e;
	}
	free(s->sites);
	s->sites = n;
	s->cap_sites = ncap;
	return 0;
}

/* Name and category ids of a call site, interned once per site. */
static void site_ids(struct tft_rt_session *s, const struct tft_site *site, uint32_t *name,
		     uint32_t *cat)
{
	uint32_t j;

	if (!site) {
		*name = s->s_flow;
		*cat = 0;
		return;
	}
	if (s->nsites * 2 >= s->cap_sites && sites_grow(s)) {
		*name = intern_cstr(s, site->name); /* no cache: still correct */
		*cat = intern_cstr(s, site->cat);
		return;
	}
	for (j = (uint32_t)hash_ptr((uintptr_t)site) & (s->cap_sites - 1); s->sites[j].site;
	     j = (j + 1) & (s->cap_sites - 1)) {
		if (s->sites[j].site == site) {
			*name = s->sites[j].name;
			*cat = s->sites[j].cat;
			return;
		}
	}
	s->sites[j].site = site;
	s->sites[j].name = *name = intern_cstr(s, site->name);
	s->sites[j].cat = *cat = intern_cstr(s, site->cat);
	s->nsites++;
}

/* The string id of a static string (an arg's key or value), interned once per pointer. */
static uint32_t cstr_id(struct tft_rt_session *s, const char *p)
{
	uint32_t j;

	if (!p)
		return 0;
	if (s->ncstrs * 2 >= s->cap_cstrs) {
		uint32_t ncap = s->cap_cstrs ? s->cap_cstrs * 2 : 256;
		struct cstr_ent *n = calloc(ncap, sizeof(*n));
		if (!n)
			return intern_cstr(s, p); /* no cache: still correct */
		for (uint32_t i = 0; i < s->cap_cstrs; i++) {
			if (!s->cstrs[i].p)
				continue;
			for (j = (uint32_t)hash_ptr((uintptr_t)s->cstrs[i].p) & (ncap - 1); n[j].p;
			     j = (j + 1) & (ncap - 1))
				;
			n[j] = s->cstrs[i];
		}
		free(s->cstrs);
		s->cstrs = n;
		s->cap_cstrs = ncap;
	}
	for (j = (uint32_t)hash_ptr((uintptr_t)p) & (s->cap_cstrs - 1); s->cstrs[j].p;
	     j = (j + 1) & (s->cap_cstrs - 1))
		if (s->cstrs[j].p == p)
			return s->cstrs[j].id;
	s->cstrs[j].p = p;
	s->cstrs[j].id = intern_cstr(s, p);
	s->ncstrs++;
	return s->cstrs[j].id;
}

/* ---- tracks ------------------------------------------------------------------------ */

static uint32_t thread_track(struct tft_rt_session *s, struct tft_rt_thread *t,
			     struct tft_rt_dthread *ds)
{
	struct tft_track tr;
	char name[64];

	if (ds->track != TFT_NONE || !s->w)
		return ds->track;
	/* A profiler import made it first (server/live_import.c): the first thread
	 * track of this OS thread in our process is the thread's. */
	for (uint32_t i = 0, n = tft_writer_track_count(s->w); i < n; i++) {
		const struct tft_track *x;
		if (tft_writer_track_process(s->w, i) != s->process)
			continue;
		x = tft_writer_track(s->w, i);
		if (x && x->kind == TFT_TRACK_THREAD && x->tid == t->tid)
			return ds->track = i;
	}
	memset(&tr, 0, sizeof(tr));
	if (t->comm[0])
		snprintf(name, sizeof(name), "%s", t->comm);
	else
		snprintf(name, sizeof(name), "thread %" PRId64, t->tid);
	tr.process = s->process;
	tr.kind = TFT_TRACK_THREAD;
	tr.name = intern_cstr(s, name);
	tr.tid = t->tid;
	tr.sort_index = (int32_t)s->sort_next++;
	ds->track = tft_writer_add_track(s->w, &tr);
	if (ds->track == TFT_NONE)
		fail(s, TFT_ENOMEM, "adding a thread track", NULL);
	return ds->track;
}

static uint32_t counter_track(struct tft_rt_session *s, uint32_t name)
{
	struct tft_track tr;
	uint32_t id;

	if (name >= s->cap_track_by_name) {
		uint32_t ncap = s->cap_track_by_name ? s->cap_track_by_name : 256;
		uint32_t *n;
		while (ncap <= name)
			ncap *= 2;
		n = realloc(s->track_by_name, (size_t)ncap * sizeof(*n));
		if (!n)
			return TFT_NONE;
		for (uint32_t i = s->cap_track_by_name; i < ncap; i++)
			n[i] = TFT_NONE;
		s->track_by_name = n;
		s->cap_track_by_name = ncap;
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

/* ---- per-thread ordering ------------------------------------------------------------ */

static struct tft_rt_dthread *dthread_create(uint64_t base_dropped)
{
	struct tft_rt_dthread *ds = malloc(sizeof(*ds));

	if (!ds)
		return NULL;
	memset(ds, 0, offsetof(struct tft_rt_dthread, stack));
	ds->track = TFT_NONE;
	ds->last_ns = INT64_MIN;
	ds->base_dropped = base_dropped;
	/* PEND_MAX plus room for one segment per open zone and the entry being added;
	 * malloc leaves untouched pages unmapped, so the bound costs nothing until used. */
	ds->cap_pend = PEND_MAX + TFT_RT_MAX_DEPTH + 2;
	ds->pend = malloc((size_t)ds->cap_pend * sizeof(*ds->pend));
	if (!ds->pend) {
		free(ds);
		return NULL;
	}
	return ds;
}

static void dthread_destroy(struct tft_rt_dthread *ds)
{
	if (ds) {
		free(ds->zargs);
		free(ds->pvals);
		free(ds->pend);
		free(ds);
	}
}

static int cmp_pend(const void *a, const void *b)
{
	const struct pend *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->dur != y->dur) /* parents (longer) first */
		return x->dur > y->dur ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Sort the thread's pending slices and instants and append them. */
/* Arg keys of the counter values (tft_rt_counters_describe), interned once per session. */
static uint32_t value_key(struct tft_rt_session *s, uint32_t i)
{
	/* Acquire: pairs with the release store of the count (tft_rt_counters_describe). */
	uint32_t n = atomic_load_explicit(&tft_rt_value_count, memory_order_acquire);
	const char *const *names = atomic_load_explicit(&tft_rt_value_names, memory_order_relaxed);

	if (i >= n || !names)
		return 0;
	if (!s->val_keys[i])
		s->val_keys[i] = intern_cstr(s, names[i]);
	return s->val_keys[i];
}

/*
 * The pending slices are written: keep only the args of the zones still open,
 * moved to the front of the arena (in stack order, so each zone's stay together).
 */
static void zargs_compact(struct tft_rt_dthread *ds)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < ds->depth; i++) {
		struct frame *f = &ds->stack[i];
		if (!f->na)
			continue;
		if (f->a0 != n)
			memmove(&ds->zargs[n], &ds->zargs[f->a0], f->na * sizeof(*ds->zargs));
		f->a0 = n;
		n += f->na;
	}
	ds->nzargs = n;
}

static void flush_pend(struct tft_rt_session *s, struct tft_rt_thread *t,
		       struct tft_rt_dthread *ds)
{
	struct tft_arg args[1 + TFT_RT_MAX_VALUES + TFT_RT_MAX_ARGS];
	struct tft_event ev;
	uint32_t track;

	if (!ds->npend)
		return;
	track = thread_track(s, t, ds);
	if (track == TFT_NONE || s->failed) {
		ds->npend = 0;
		ds->npvals = 0;
		return;
	}
	qsort(ds->pend, ds->npend, sizeof(*ds->pend), cmp_pend);
	for (uint32_t i = 0; i < ds->npend && !s->failed; i++) {
		const struct pend *p = &ds->pend[i];
		uint16_t na = 0;
		memset(&ev, 0, sizeof(ev));
		ev.ts_ns = clamp_track(s, track, p->ts);
		ev.dur_ns = p->dur - (ev.ts_ns - p->ts) > 0 ? p->dur - (ev.ts_ns - p->ts) : 0;
		ev.kind = p->kind;
		ev.flags = p->flags;
		ev.track = track;
		ev.count = 1;
		site_ids(s, p->site, &ev.name, &ev.cat);
		if (p->split) {
			args[na].key = s->s_split;
			args[na].type = TFT_ARG_BOOL;
			args[na++].v.i = 1;
		}
		for (uint32_t k = 0; k < p->nval && ds->pvals; k++) {
			uint32_t key = value_key(s, k);
			if (!key)
				continue;
			args[na].key = key;
			args[na].type = TFT_ARG_INT;
			args[na++].v.i = ds->pvals[(size_t)p->vidx * TFT_RT_MAX_VALUES + k];
		}
		for (uint32_t k = 0; k < p->na && ds->zargs; k++)
			args[na++] = ds->zargs[p->a0 + k];
		ev.nargs = na;
		ev.args = na ? args : NULL;
		if (append(s, &ev) == TFT_EINVAL)
			s->lost += p->nrec;
		s->held -= p->nrec;
	}
	ds->npend = 0;
	ds->npvals = 0;
	ds->seq = 0;
	zargs_compact(ds);
}

static void pend_push(struct tft_rt_dthread *ds, uint8_t kind, int64_t ts, int64_t dur,
		      const struct tft_site *site, uint32_t nrec, uint32_t split, uint8_t flags)
{
	struct pend *p;

	if (!ds->npend)
		ds->first_pend_ns = ts + dur;
	p = &ds->pend[ds->npend++];
	p->ts = ts;
	p->dur = dur;
	p->site = site;
	p->seq = ds->seq++;
	p->kind = kind;
	p->flags = flags;
	p->split = (uint8_t)(split != 0);
	p->nrec = (uint8_t)nrec;
	p->nval = 0;
	p->vidx = 0;
	p->na = 0;
	p->a0 = 0;
}

/* The slice just pushed is the zone of frame f: it takes the zone's args. */
static void pend_args(struct tft_rt_dthread *ds, const struct frame *f)
{
	struct pend *p = &ds->pend[ds->npend - 1];

	p->a0 = f->a0;
	p->na = (uint8_t)f->na;
}

/* Room in the args arena for `need` more. 0 or -1 (out of memory). */
static int zargs_room(struct tft_rt_dthread *ds, uint32_t need)
{
	uint32_t ncap = ds->cap_zargs ? ds->cap_zargs : 64;
	struct tft_arg *n;

	if (ds->nzargs + need <= ds->cap_zargs)
		return 0;
	while (ncap < ds->nzargs + need)
		ncap *= 2;
	n = realloc(ds->zargs, (size_t)ncap * sizeof(*n));
	if (!n)
		return -1;
	ds->zargs = n;
	ds->cap_zargs = ncap;
	return 0;
}

/*
 * An arg (TFT_RK_ARG) of the zone at `depth`, the innermost open one: added to
 * its frame's args (kept together at the arena's end). Others are ignored (the
 * zone began before this session, or ended already).
 */
static void take_arg(struct tft_rt_session *s, struct tft_rt_dthread *ds,
		     const struct tft_rt_rec *r, const char *text, size_t len)
{
	uint32_t depth = TFT_RT_ARG_DEPTH(r->aux), type = TFT_RT_ARG_TYPE(r->aux);
	struct frame *f;
	struct tft_arg *a;
	uint32_t key, id;

	if (!depth || depth != ds->depth || s->failed || !s->w)
		return;
	f = &ds->stack[depth - 1];
	if (f->na >= TFT_RT_MAX_ARGS || zargs_room(ds, f->na + 1))
		return;
	if (f->na && f->a0 + f->na != ds->nzargs) { /* not at the end: move them there */
		memcpy(&ds->zargs[ds->nzargs], &ds->zargs[f->a0], f->na * sizeof(*ds->zargs));
		f->a0 = ds->nzargs;
		ds->nzargs += f->na;
	}
	key = cstr_id(s, (const char *)(uintptr_t)r->p0);
	if (!key)
		return;
	if (!f->na)
		f->a0 = ds->nzargs;
	a = &ds->zargs[ds->nzargs];
	a->key = key;
	switch (type) {
	case TFT_RT_ARG_INT:
	case TFT_RT_ARG_BOOL:
		a->type = type == TFT_RT_ARG_INT ? TFT_ARG_INT : TFT_ARG_BOOL;
		a->v.i = (int64_t)r->p1;
		break;
	case TFT_RT_ARG_STR:
		a->type = TFT_ARG_STR;
		a->v.str = cstr_id(s, (const char *)(uintptr_t)r->p1);
		break;
	case TFT_RT_ARG_TEXT:
	case TFT_RT_ARG_JSON:
		id = tft_writer_intern(s->w, text, len);
		if (id == UINT32_MAX)
			return;
		a->type = type == TFT_RT_ARG_TEXT ? TFT_ARG_STR : TFT_ARG_JSON;
		a->v.str = id;
		break;
	default:
		return;
	}
	ds->nzargs++;
	f->na++;
}

/*
 * The zone ending now (the frame just popped) had counter values taken after
 * its begin and before its end: its slice (the entry just pushed) gets the
 * differences as args. A zone split at a hold limit gets none (the pieces
 * would each claim the whole zone's counts).
 */
static void pend_values(struct tft_rt_dthread *ds, const struct frame *f, uint32_t depth)
{
	struct pend *p = &ds->pend[ds->npend - 1];
	uint32_t n = ds->end_nval;

	ds->end_nval = 0;
	if (!n || n != f->nval || ds->end_depth != depth || f->split)
		return;
	if (!ds->pvals) {
		ds->pvals = malloc((size_t)ds->cap_pend * TFT_RT_MAX_VALUES * sizeof(*ds->pvals));
		if (!ds->pvals)
			return;
	}
	p->vidx = ds->npvals++;
	p->nval = (uint8_t)n;
	for (uint32_t k = 0; k < n; k++)
		ds->pvals[(size_t)p->vidx * TFT_RT_MAX_VALUES + k] =
			(int64_t)(ds->end_val[k] - f->val[k]);
}

/* A TFT_RK_VALUES record: gather its group; the last one places the values. */
static void take_values(struct tft_rt_dthread *ds, const struct tft_rt_rec *r)
{
	uint32_t i = TFT_RT_VAL_I(r->aux), n = TFT_RT_VAL_N(r->aux);
	uint32_t depth = TFT_RT_VAL_DEPTH(r->aux);

	if (n == 0 || n > TFT_RT_MAX_VALUES || 2 * i >= n)
		return;
	if (i == 0)
		ds->vgot = 0;
	ds->vcur[2 * i] = r->p0;
	if (2 * i + 1 < n)
		ds->vcur[2 * i + 1] = r->p1;
	ds->vgot += 2 * i + 1 < n ? 2 : 1;
	if (2 * i + 2 < n) /* more records of the group follow */
		return;
	if (ds->vgot != n)
		return;
	if (TFT_RT_VAL_PHASE(r->aux) == 0) {
		if (depth && depth == ds->depth) {
			struct frame *f = &ds->stack[depth - 1];
			memcpy(f->val, ds->vcur, n * sizeof(*f->val));
			f->nval = n;
		}
	} else {
		memcpy(ds->end_val, ds->vcur, n * sizeof(*ds->end_val));
		ds->end_nval = n;
		ds->end_depth = depth;
	}
}

/*
 * Bound the pending list: cut every open zone at T (the newest timestamp of
 * the thread), write the pieces [begin, T] with everything pending, and let
 * the zones go on from T. Later events start at or after T, so the track
 * stays in order. Both pieces carry the arg split=true.
 */
static void split_flush(struct tft_rt_session *s, struct tft_rt_thread *t,
			struct tft_rt_dthread *ds, int64_t T)
{
	for (uint32_t i = 0; i < ds->depth; i++) {
		struct frame *f = &ds->stack[i];
		if (f->ts >= T)
			continue;
		pend_push(ds, TFT_EV_SLICE, f->ts, T - f->ts, f->site, f->nrec, 1, 0);
		f->ts = T;
		f->nrec = 0;
		f->split = 1;
	}
	flush_pend(s, t, ds);
}

/* After adding to the pending list: write it when the stack is empty or it is full. */
static void pend_settle(struct tft_rt_session *s, struct tft_rt_thread *t,
			struct tft_rt_dthread *ds, int64_t ts)
{
	if (!ds->depth)
		flush_pend(s, t, ds);
	else if (ds->npend >= PEND_MAX)
		split_flush(s, t, ds, ts);
}

/* Close every open zone at end_ns, flagged unclosed, and write everything. */
static void close_all(struct tft_rt_session *s, struct tft_rt_thread *t,
		      struct tft_rt_dthread *ds, int64_t end_ns)
{
	while (ds->depth) {
		struct frame *f = &ds->stack[--ds->depth];
		int64_t end = end_ns > f->ts ? end_ns : f->ts;
		pend_push(ds, TFT_EV_SLICE, f->ts, end - f->ts, f->site, f->nrec, f->split,
			  TFT_EVF_UNCLOSED);
		pend_args(ds, f);
		s->unclosed++;
	}
	flush_pend(s, t, ds);
}

/* ---- cross-thread events ------------------------------------------------------------ */

static int cmp_gev(const void *a, const void *b)
{
	const struct gev *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void add_flow(struct tft_rt_session *s, const struct tft_flow *f)
{
	if (s->w && !s->failed) {
		int rc = tft_writer_add_flow(s->w, f);
		if (rc && rc != TFT_EINVAL)
			fail(s, rc, "writing a flow", NULL);
	}
}

static void flow_unmatched(struct tft_rt_session *s, const struct flow_ent *fe)
{
	struct tft_flow f = { .flow_id = fe->id, .src_track = fe->track, .src_ts_ns = fe->ts,
			      .dst_track = TFT_NONE, .flags = TFT_FLOWF_UNMATCHED };

	site_ids(s, fe->site, &f.name, &f.cat);
	add_flow(s, &f);
	s->unmatched++;
}

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
			for (j = (uint32_t)hash_ptr(s->flows[i].id) & (ncap - 1); n[j].used;
			     j = (j + 1) & (ncap - 1))
				;
			n[j] = s->flows[i];
		}
		free(s->flows);
		s->flows = n;
		s->cap_flows = ncap;
	}
	for (j = (uint32_t)hash_ptr(id) & (s->cap_flows - 1); s->flows[j].used;
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
	TABLE_REMOVE(s->flows, s->cap_flows, (uint32_t)(fe - s->flows), id, FLOW_USED, hash_ptr);
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
			for (j = (uint32_t)hash_ptr(s->allocs[i].ptr) & (ncap - 1); n[j].ptr;
			     j = (j + 1) & (ncap - 1))
				;
			n[j] = s->allocs[i];
		}
		free(s->allocs);
		s->allocs = n;
		s->cap_allocs = ncap;
	}
	for (j = (uint32_t)hash_ptr(ptr) & (s->cap_allocs - 1); s->allocs[j].ptr;
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
	ev.ts_ns = clamp_track(s, s->mem_track, ts);
	ev.value = (double)s->mem_in_use;
	ev.name = s->s_memory;
	ev.count = 1;
	append(s, &ev);
}

/*
 * A cumulative counter's sample: never below the track's last (samples read
 * on two threads can arrive in the opposite order of their reads).
 */
static double monotonic_value(struct tft_rt_session *s, uint32_t track, double v)
{
	if (track >= s->cap_ctr_last) {
		uint32_t ncap = s->cap_ctr_last ? s->cap_ctr_last : 64;
		double *n;
		while (ncap <= track)
			ncap *= 2;
		if (!(n = realloc(s->ctr_last, (size_t)ncap * sizeof(*n))))
			return v;
		for (uint32_t i = s->cap_ctr_last; i < ncap; i++)
			n[i] = -1e308;
		s->ctr_last = n;
		s->cap_ctr_last = ncap;
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
		site_ids(s, g->site, &ev.name, &ev.cat);
		track = counter_track(s, ev.name);
		if (track == TFT_NONE) {
			s->lost++;
			break;
		}
		ev.kind = TFT_EV_COUNTER;
		ev.track = track;
		ev.ts_ns = clamp_track(s, track, g->ts);
		memcpy(&ev.value, &g->b, sizeof(ev.value));
		ev.count = 1;
		if (g->site && (g->site->flags & TFT_SITE_MONOTONIC))
			ev.value = monotonic_value(s, track, ev.value);
		if (append(s, &ev) == TFT_EINVAL)
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
				     ALLOC_USED, hash_ptr);
			s->nallocs--;
			mem_sample(s, g->ts);
		}
		break;
	case TFT_RK_FLOW_BEGIN:
		fe = flow_find(s, g->a, 0);
		if (fe) /* the id was reused before its end: the old flow dangles */
			flow_unmatched(s, fe);
		else
			fe = flow_find(s, g->a, 1);
		if (fe) {
			fe->ts = g->ts;
			fe->site = g->site;
			fe->track = g->track;
		} else {
			struct flow_ent tmp = { .id = g->a, .ts = g->ts, .site = g->site,
						.track = g->track };
			flow_unmatched(s, &tmp); /* table full: written at once, unmatched */
		}
		break;
	case TFT_RK_FLOW_END: {
		struct tft_flow f = { .flow_id = g->a, .dst_track = g->track, .dst_ts_ns = g->ts,
				      .flags = TFT_FLOWF_BIND_ENCLOSING };
		fe = flow_find(s, g->a, 0);
		if (fe) {
			f.src_track = fe->track;
			f.src_ts_ns = fe->ts;
			site_ids(s, fe->site ? fe->site : g->site, &f.name, &f.cat);
			flow_remove(s, fe);
		} else {
			f.src_track = TFT_NONE;
			f.flags |= TFT_FLOWF_UNMATCHED;
			site_ids(s, g->site, &f.name, &f.cat);
			s->unmatched++;
		}
		add_flow(s, &f);
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
					fail(s, rc, "writing a step", NULL);
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
static void emit_gev(struct tft_rt_session *s, int64_t upto)
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

static struct gev *gev_push(struct tft_rt_session *s)
{
	if (s->ngev == s->cap_gev) {
		uint32_t ncap = s->cap_gev ? s->cap_gev * 2 : 1024;
		struct gev *n;
		if (ncap > GEV_MAX)
			ncap = GEV_MAX;
		if (s->ngev == ncap || !(n = realloc(s->gev, (size_t)ncap * sizeof(*n)))) {
			emit_gev(s, INT64_MAX); /* full: order what we have now */
			if (s->ngev == s->cap_gev)
				return NULL;
		} else {
			s->gev = n;
			s->cap_gev = ncap;
		}
	}
	return &s->gev[s->ngev++];
}

/* ---- consuming rings ---------------------------------------------------------------- */

static int is_text_kind(uint32_t kind)
{
	return kind == TFT_RK_STEP_BEGIN || kind == TFT_RK_THREAD_NAME ||
	       kind == TFT_RK_PROCESS_NAME;
}

static void apply_name(struct tft_rt_session *s, struct tft_rt_thread *t,
		       struct tft_rt_dthread *ds, uint32_t kind, const char *text, size_t len)
{
	uint32_t id = tft_writer_intern(s->w, text, len);

	if (id == UINT32_MAX)
		return;
	if (kind == TFT_RK_THREAD_NAME) {
		uint32_t track = thread_track(s, t, ds);
		struct tft_track *tr = track != TFT_NONE ? tft_writer_track(s->w, track) : NULL;
		if (tr)
			tr->name = id;
	} else {
		struct tft_process *p = tft_writer_process(s->w, s->process);
		if (p)
			p->name = id;
	}
}

static void handle(struct tft_rt_session *s, struct tft_rt_thread *t, struct tft_rt_dthread *ds,
		   const struct tft_rt_rec *r, const char *text, size_t len)
{
	int64_t ts;
	struct frame *f;
	struct gev *g;

	if (r->kind == TFT_RK_VALUES) { /* values of a zone (no time of their own): not an event */
		take_values(ds, r);
		return;
	}
	if (r->kind == TFT_RK_ARG) { /* an arg of a zone: not an event either */
		take_arg(s, ds, r, text, len);
		return;
	}
	ts = tft_rt_clock_ns(&s->clock, r->tick);
	if (ts < ds->last_ns) /* per-thread time never goes back */
		ts = ds->last_ns;
	ds->last_ns = ts;
	if (r->kind == TFT_RK_THREAD_NAME || r->kind == TFT_RK_PROCESS_NAME) {
		/* Metadata, not an event: not counted. */
		if (!s->failed)
			apply_name(s, t, ds, r->kind, text, len);
		return;
	}
	if (!ds->seen) {
		ds->seen = 1;
		s->threads++;
	}
	s->consumed++;
	if (s->failed) {
		s->lost++;
		return;
	}
	switch (r->kind) {
	case TFT_RK_ZONE_BEGIN:
		if (ds->depth == TFT_RT_MAX_DEPTH) { /* cannot happen: the producer caps depth */
			s->lost++;
			break;
		}
		f = &ds->stack[ds->depth++];
		f->site = (const struct tft_site *)(uintptr_t)r->p0;
		f->ts = ts;
		f->nrec = 1;
		f->split = 0;
		f->nval = 0;
		f->na = 0;
		f->a0 = 0;
		s->held++;
		break;
	case TFT_RK_ZONE_END:
		if (!ds->depth) /* its begin predates this session */
			break;
		f = &ds->stack[--ds->depth];
		pend_push(ds, TFT_EV_SLICE, f->ts, ts - f->ts, f->site, f->nrec + 1, f->split, 0);
		pend_args(ds, f);
		if (ds->end_nval)
			pend_values(ds, f, ds->depth + 1);
		s->held++;
		pend_settle(s, t, ds, ts);
		break;
	case TFT_RK_INSTANT:
		pend_push(ds, TFT_EV_INSTANT, ts, 0, (const struct tft_site *)(uintptr_t)r->p0, 1, 0,
			  0);
		s->held++;
		pend_settle(s, t, ds, ts);
		break;
	case TFT_RK_COUNTER:
	case TFT_RK_FLOW_BEGIN:
	case TFT_RK_FLOW_END:
	case TFT_RK_MEM_ALLOC:
	case TFT_RK_MEM_FREE:
	case TFT_RK_STEP_BEGIN:
	case TFT_RK_STEP_END:
		g = gev_push(s);
		if (!g) {
			s->lost++;
			break;
		}
		g->ts = ts;
		g->a = r->kind == TFT_RK_FLOW_BEGIN || r->kind == TFT_RK_FLOW_END ? r->p1 : r->p0;
		g->b = r->kind == TFT_RK_FLOW_BEGIN || r->kind == TFT_RK_FLOW_END ? 0 : r->p1;
		g->site = r->kind == TFT_RK_COUNTER || r->kind == TFT_RK_FLOW_BEGIN ||
					  r->kind == TFT_RK_FLOW_END
				  ? (const struct tft_site *)(uintptr_t)r->p0
				  : NULL;
		g->seq = s->gseq++;
		g->track = r->kind == TFT_RK_FLOW_BEGIN || r->kind == TFT_RK_FLOW_END
				   ? thread_track(s, t, ds)
				   : TFT_NONE;
		g->name = r->kind == TFT_RK_STEP_BEGIN
				  ? (len ? tft_writer_intern(s->w, text, len) : s->s_step)
				  : 0;
		if (g->name == UINT32_MAX)
			g->name = 0;
		g->kind = (uint16_t)r->kind;
		g->nrec = 1;
		s->held++;
		if (r->kind == TFT_RK_STEP_END && (r->p1 & TFT_RT_STEP_HOLD) && s->st.import_hold_ms &&
		    !s->no_hold) {
			/* its trace will be imported: read no further until it is in (rt.h) */
			ds->held = 1;
			ds->hold_step = (int64_t)r->p0;
			ds->hold_ts = ts;
		}
		break;
	default: /* unknown kind: count it, ignore it */
		break;
	}
}

/*
 * Is a hold for an import over? Released (the trace is in, or will not come),
 * or older than import_hold_ms at now_ns (INT64_MIN: not checked), counted.
 */
static int hold_over(struct tft_rt_session *s, struct tft_rt_dthread *ds, int64_t now_ns)
{
	if (tft_rt_import_released(ds->hold_step)) {
		ds->held = 0;
	} else if (now_ns != INT64_MIN &&
		   now_ns - ds->hold_ts > (int64_t)s->st.import_hold_ms * 1000000) {
		ds->held = 0;
		s->hold_timeouts++; /* the import lands beside the thread's track (live_import.c) */
	}
	return !ds->held;
}

static void consume_thread(struct tft_rt_session *s, struct tft_rt_thread *t,
			   struct tft_rt_dthread *ds)
{
	uint64_t tail = atomic_load_explicit(&t->tail, memory_order_relaxed); /* ours alone */
	/* Acquire: slots below head are filled; pairs with publish()'s release store (emit.c). */
	uint64_t head = atomic_load_explicit(&t->head, memory_order_acquire);
	uint64_t since = 0;
	char text[TFT_RT_TEXT_SLOTS(TFT_RT_TEXT_MAX) * TFT_RT_REC_BYTES];

	if (head - tail > t->mask + 1) /* impossible unless memory was corrupted: skip it all */
		tail = head;
	while (tail != head) {
		const struct tft_rt_rec *r = &t->ring[tail & t->mask];
		uint64_t nslots = 1;
		size_t len = 0;
		const char *txt = text;

		if (!ds && r->kind != TFT_RK_THREAD_NAME && r->kind != TFT_RK_PROCESS_NAME &&
		    r->kind != TFT_RK_VALUES && r->kind != TFT_RK_ARG) {
			s->consumed++; /* no memory for this thread's state: lost */
			s->lost++;
		}
		if (is_text_kind(r->kind)) {
			len = r->aux < TFT_RT_TEXT_MAX ? r->aux : TFT_RT_TEXT_MAX;
			nslots += TFT_RT_TEXT_SLOTS(len);
			if (nslots > head - tail)
				break; /* cannot happen: a record and its text are published together */
			for (uint64_t i = 1; i < nslots; i++) {
				size_t off = (size_t)(i - 1) * TFT_RT_REC_BYTES;
				size_t n = len - off < TFT_RT_REC_BYTES ? len - off : TFT_RT_REC_BYTES;
				memcpy(text + off, &t->ring[(tail + i) & t->mask], n);
			}
		} else if (r->kind == TFT_RK_ARG && (TFT_RT_ARG_TYPE(r->aux) == TFT_RT_ARG_TEXT ||
						     TFT_RT_ARG_TYPE(r->aux) == TFT_RT_ARG_JSON)) {
			/* an arg's text: up to TFT_RT_ARG_TEXT_MAX bytes, into the session's buffer */
			len = TFT_RT_ARG_LEN(r->aux);
			if (len > TFT_RT_ARG_TEXT_MAX)
				len = TFT_RT_ARG_TEXT_MAX; /* cannot happen: the producer cuts it */
			nslots += TFT_RT_TEXT_SLOTS(len);
			if (nslots > head - tail)
				break; /* cannot happen: a record and its text are published together */
			if (!s->argtext)
				s->argtext = malloc(TFT_RT_ARG_TEXT_MAX);
			if (s->argtext) {
				for (uint64_t i = 1; i < nslots; i++) {
					size_t off = (size_t)(i - 1) * TFT_RT_REC_BYTES;
					size_t n = len - off < TFT_RT_REC_BYTES ? len - off : TFT_RT_REC_BYTES;
					memcpy(s->argtext + off, &t->ring[(tail + i) & t->mask], n);
				}
			}
			txt = s->argtext;
		}
		if (ds && txt)
			handle(s, t, ds, r, txt, len);
		tail += nslots;
		since += nslots;
		if (since >= TAIL_EVERY) {
			/* Release: see below; hands slots back early during a long drain. */
			atomic_store_explicit(&t->tail, tail, memory_order_release);
			since = 0;
		}
		/* Held for an import: the records after the step's end wait in the ring
		 * (unless the import came in already). */
		if (ds && ds->held && !hold_over(s, ds, INT64_MIN))
			break;
	}
	/*
	 * Release: our reads of the consumed slots happen before the producer
	 * reuses them; pairs with the acquire loads of tail in emit.c
	 * (refresh_tail, wake_drain).
	 */
	atomic_store_explicit(&t->tail, tail, memory_order_release);
}

/* Unlink an exited, drained thread from the list and unmap it. */
static void retire(struct tft_rt_session *s, struct tft_rt_thread *t, struct tft_rt_thread *prev)
{
	struct tft_rt_thread *nx = atomic_load_explicit(&t->next, memory_order_relaxed);
	struct tft_rt_dthread *ds = t->ds;

	if (ds) {
		close_all(s, t, ds, ds->last_ns);
		s->retired_dropped +=
			atomic_load_explicit(&t->dropped, memory_order_relaxed) - ds->base_dropped;
		s->vdropped += atomic_load_explicit(&t->values_dropped, memory_order_relaxed) -
			       ds->base_vdropped;
		dthread_destroy(ds);
		t->ds = NULL;
	} else {
		s->retired_dropped += atomic_load_explicit(&t->dropped, memory_order_relaxed);
	}
	if (prev) {
		atomic_store_explicit(&prev->next, nx, memory_order_relaxed);
	} else {
		struct tft_rt_thread *expect = t;
		/* Only the drain unlinks; producers only push at the head. */
		if (!atomic_compare_exchange_strong_explicit(&tft_rt_threads, &expect, nx,
							     memory_order_acq_rel,
							     memory_order_acquire)) {
			struct tft_rt_thread *p = expect;
			while (p && atomic_load_explicit(&p->next, memory_order_relaxed) != t)
				p = atomic_load_explicit(&p->next, memory_order_relaxed);
			if (p)
				atomic_store_explicit(&p->next, nx, memory_order_relaxed);
		}
	}
	atomic_fetch_sub_explicit(&tft_rt_nthreads, 1, memory_order_relaxed);
	tft_rt_thread_free(t);
}

/* The job's rank, size and id as meta (a process of a distributed job). */
static int set_job_meta(struct tft_writer *w, const struct tft_job *j)
{
	char num[24];

	if (j->rank < 0)
		return 0;
	snprintf(num, sizeof(num), "%d", j->rank);
	if (tft_writer_set_meta(w, "job_rank", num))
		return TFT_EIO;
	snprintf(num, sizeof(num), "%d", j->size);
	if (j->size >= 0 && tft_writer_set_meta(w, "job_size", num))
		return TFT_EIO;
	return tft_writer_set_meta(w, "job_id", j->id) ? TFT_EIO : 0;
}

/* ---- event sources (runtime/source.h) ------------------------------------------------- */

#define SOURCES_MAX 8u

static pthread_mutex_t src_lock = PTHREAD_MUTEX_INITIALIZER; /* tft_rt_source_add only */
static struct tft_rt_source sources[SOURCES_MAX];
static _Atomic uint32_t nsources;
static _Atomic uint32_t generations; /* tft_rt_src_session */

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

static void collect_sources(struct tft_rt_session *s, int final)
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
		site_ids(io->s, site, &name, &cat);
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
	tr.name = intern_cstr(s, name);
	tr.tid = tid;
	tr.sort_index = (int32_t)s->sort_next++;
	id = tft_writer_add_track(s->w, &tr);
	if (id == TFT_NONE)
		fail(s, TFT_ENOMEM, "adding a track", NULL);
	return id;
}

int tft_rt_src_append(struct tft_rt_src *io, const struct tft_event *ev)
{
	struct tft_rt_session *s = io->s;
	struct tft_event e = *ev;
	int rc;

	if (!s->w || s->failed)
		return TFT_EIO;
	e.ts_ns = clamp_track(s, ev->track, ev->ts_ns);
	if (e.ts_ns != ev->ts_ns) {
		s->clamped++;
		e.dur_ns = ev->dur_ns - (e.ts_ns - ev->ts_ns) > 0 ? ev->dur_ns - (e.ts_ns - ev->ts_ns) : 0;
	}
	if (!e.count)
		e.count = 1;
	s->consumed++; /* committed with the next commit, like an event of a ring */
	rc = append(s, &e);
	if (rc == TFT_EINVAL)
		s->lost++;
	return rc;
}

void tft_rt_src_flow_end(struct tft_rt_src *io, uint64_t id, uint32_t track, int64_t ts)
{
	struct tft_rt_session *s = io->s;
	struct gev *g;

	if (s->failed || !(g = gev_push(s)))
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
			f.src_track = thread_track(s, t, t->ds);
			break;
		}
	}
	if (f.src_track == TFT_NONE) {
		f.flags |= TFT_FLOWF_UNMATCHED;
		s->unmatched++;
	}
	site_ids(s, site, &f.name, &f.cat);
	add_flow(s, &f);
}

void tft_rt_src_counter(struct tft_rt_src *io, const struct tft_site *site, int64_t ts,
			double value)
{
	struct tft_rt_session *s = io->s;
	struct gev *g;

	if (s->failed)
		return;
	s->consumed++;
	if (!(g = gev_push(s))) {
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
	if (set_job_meta(s->w, &j))
		fail(s, TFT_EIO, "writing the job's meta", NULL);
}

/*
 * The job a program says it is in after its session began (tft_rt_set_job):
 * handed to the drain, which applies it at its next cycle. Try-locks only: a
 * fork child that inherits it held gets TFT_EAGAIN, never a hang.
 */
static pthread_mutex_t job_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	int set, rank, size;
	char id[128];
} job_pending;

TFT_API int tft_rt_set_job(int rank, int size, const char *id)
{
	if (rank < 0)
		return TFT_EINVAL;
	if (!(tft_rt_state_load() & TFT_RT_STEPS))
		return TFT_EAGAIN;
	if (pthread_mutex_trylock(&job_lock) != 0)
		return TFT_EAGAIN;
	job_pending.rank = rank;
	job_pending.size = size > 0 ? size : -1;
	snprintf(job_pending.id, sizeof(job_pending.id), "%s", id ? id : "");
	job_pending.set = 1;
	pthread_mutex_unlock(&job_lock);
	return 0;
}

static void apply_job(struct tft_rt_session *s)
{
	struct tft_process *p;
	struct tft_job j;

	if (!job_pending.set || pthread_mutex_trylock(&job_lock) != 0)
		return;
	memset(&j, 0, sizeof(j));
	j.rank = job_pending.rank;
	j.size = job_pending.size;
	memcpy(j.id, job_pending.id, sizeof(j.id));
	job_pending.set = 0;
	pthread_mutex_unlock(&job_lock);
	if (!s->w || s->failed)
		return;
	if (!j.id[0]) { /* no id given: the launcher's, if any */
		struct tft_job env;
		tft_job_from_env(&env);
		memcpy(j.id, env.id, sizeof(j.id));
	}
	if ((p = tft_writer_process(s->w, s->process)) != NULL)
		p->rank = j.rank;
	if (set_job_meta(s->w, &j))
		fail(s, TFT_EIO, "writing the job's meta", NULL);
}

void tft_rt_src_dropped(struct tft_rt_src *io, uint64_t n)
{
	io->s->src_dropped += n;
}

bool tft_rt_src_failed(struct tft_rt_src *io)
{
	return io->s->failed != 0 || !io->s->w;
}

enum { CYCLE_PLAIN = 0, CYCLE_FORCE = 1, CYCLE_FINAL = 2 };

static void drain_cycle(struct tft_rt_session *s, int mode)
{
	int64_t now_ns, hold_ns = (int64_t)s->st.hold_ms * 1000000;
	int64_t upto, held_from = INT64_MAX; /* the earliest step end a thread is held at */
	uint64_t live_dropped = 0, live_vdropped = 0;
	struct tft_rt_thread *t, *prev = NULL, *next;

	tft_rt_clock_refine(&s->clock);
	apply_job(s);
	/*
	 * Sources first: a command a source sees was enqueued (its flow begun
	 * on its thread's ring) before, so the rings read below hold every flow
	 * begin that an end collected here refers to.
	 */
	collect_sources(s, mode == CYCLE_FINAL);
	now_ns = tft_rt_clock_ns(&s->clock, tft_rt_clock_now(&s->clock));
	/* Acquire: pairs with the release CAS that pushed each thread (emit.c). */
	for (t = atomic_load_explicit(&tft_rt_threads, memory_order_acquire); t; t = next) {
		/* Acquire: pairs with the exit destructor's release store (emit.c);
		 * loaded before head so that an exited thread's last records are seen. */
		int exited = atomic_load_explicit(&t->exited, memory_order_acquire);
		struct tft_rt_dthread *ds = t->ds;

		next = atomic_load_explicit(&t->next, memory_order_acquire);
		if (!ds)
			ds = t->ds = dthread_create(0); /* a thread born in this session */
		if (ds && ds->held && (s->no_hold || hold_over(s, ds, now_ns)))
			ds->held = 0;
		if (!ds || !ds->held)
			consume_thread(s, t, ds);
		if (ds && ds->held) {
			/* waiting for an import: even an exited thread keeps its ring until then */
			if (ds->hold_ts < held_from)
				held_from = ds->hold_ts;
		} else if (exited) {
			retire(s, t, prev);
			continue;
		}
		if (ds) {
			live_dropped += atomic_load_explicit(&t->dropped, memory_order_relaxed) -
					ds->base_dropped;
			live_vdropped += atomic_load_explicit(&t->values_dropped, memory_order_relaxed) -
					 ds->base_vdropped;
			/* Hold limit: slices waiting too long for their zones get them split. */
			if (ds->npend && !s->failed && now_ns - ds->first_pend_ns > hold_ns)
				split_flush(s, t, ds, ds->last_ns);
		}
		prev = t;
	}
	s->prod_dropped = s->retired_dropped + live_dropped; /* retired: this cycle's too */
	s->live_vdropped = live_vdropped;
	/* A held thread's later records are not read yet: cross-thread events after
	 * its hold wait for them, so that they stay in time order. */
	upto = mode != CYCLE_PLAIN ? INT64_MAX : now_ns - WATERMARK_NS;
	emit_gev(s, held_from < upto ? held_from : upto);
}

static uint64_t file_bytes(const char *path)
{
	char wal[4200];
	struct stat st;
	uint64_t n = 0;

	if (stat(path, &st) == 0)
		n += (uint64_t)st.st_size;
	snprintf(wal, sizeof(wal), "%s-wal", path);
	if (stat(wal, &st) == 0)
		n += (uint64_t)st.st_size;
	return n;
}

static void update_counts(struct tft_rt_session *s)
{
	uint64_t d = dropped_now(s);

	if (d > s->rep_dropped &&
	    !tft_writer_add_count(s->w, TFT_COUNT_DROPPED, (int64_t)(d - s->rep_dropped)))
		s->rep_dropped = d;
	if (s->unclosed > s->rep_unclosed &&
	    !tft_writer_add_count(s->w, TFT_COUNT_UNCLOSED_SLICES,
				  (int64_t)(s->unclosed - s->rep_unclosed)))
		s->rep_unclosed = s->unclosed;
	if (s->unmatched > s->rep_unmatched &&
	    !tft_writer_add_count(s->w, TFT_COUNT_UNMATCHED_FLOWS,
				  (int64_t)(s->unmatched - s->rep_unmatched)))
		s->rep_unmatched = s->unmatched;
	if (s->clamped > s->rep_clamped &&
	    !tft_writer_add_count(s->w, TFT_COUNT_CLAMPED, (int64_t)(s->clamped - s->rep_clamped)))
		s->rep_clamped = s->clamped;
	if (s->hold_timeouts > s->rep_hold_timeouts &&
	    !tft_writer_add_count(s->w, TFT_COUNT_IMPORT_HOLD_TIMEOUTS,
				  (int64_t)(s->hold_timeouts - s->rep_hold_timeouts)))
		s->rep_hold_timeouts = s->hold_timeouts;
	d = s->vdropped + s->live_vdropped;
	if (d > s->rep_vdropped &&
	    !tft_writer_add_count(s->w, TFT_COUNT_VALUES_DROPPED, (int64_t)(d - s->rep_vdropped)))
		s->rep_vdropped = d;
}

static void commit(struct tft_rt_session *s)
{
	struct tft_error err;
	int rc;

	if (!s->failed && s->w) {
		update_counts(s);
		tft_rt_meta_apply(s->w); /* tft_set_meta values (lost only if out of memory) */
		tft_error_clear(&err);
		rc = tft_writer_commit(s->w, &err);
		if (rc) {
			fail(s, rc, "committing the session", err.msg);
		} else {
			s->committed = s->consumed - s->held - s->lost;
			s->flushes++;
			s->last_flush_ns = tft_rt_mono_ns();
			s->last_flush_unix_ns = tft_rt_real_ns();
			s->bytes = file_bytes(s->st.path);
		}
	}
	publish_stats(s);
}

/* The last cycle: everything out of the rings, zones closed, session finished. */
static int finish(struct tft_rt_session *s)
{
	struct tft_error err;
	int64_t end_ns;
	int rc = 0;

	s->no_hold = 1; /* the session ends: no import comes after this */
	drain_cycle(s, CYCLE_FINAL);
	end_ns = tft_rt_clock_ns(&s->clock, tft_rt_clock_now(&s->clock));
	for (struct tft_rt_thread *t = atomic_load_explicit(&tft_rt_threads, memory_order_acquire);
	     t; t = atomic_load_explicit(&t->next, memory_order_acquire)) {
		if (t->ds && !s->failed)
			close_all(s, t, t->ds, end_ns > t->ds->last_ns ? end_ns : t->ds->last_ns);
	}
	emit_gev(s, INT64_MAX);
	for (uint32_t i = 0; i < s->cap_flows && !s->failed; i++)
		if (s->flows[i].used)
			flow_unmatched(s, &s->flows[i]);
	s->nflows = 0;
	commit(s);
	if (s->w) {
		tft_error_clear(&err);
		rc = tft_writer_close(s->w, &err);
		s->w = NULL;
		if (rc) {
			fail(s, rc, "closing the session", err.msg);
		} else {
			s->committed = s->consumed - s->lost;
			s->bytes = file_bytes(s->st.path);
		}
	}
	rc = s->failed;
	/* The per-thread state belongs to this session; live rings stay for the next one. */
	for (struct tft_rt_thread *t = atomic_load_explicit(&tft_rt_threads, memory_order_acquire);
	     t; t = atomic_load_explicit(&t->next, memory_order_acquire)) {
		dthread_destroy(t->ds);
		t->ds = NULL;
	}
	publish_stats(s);
	return rc;
}

void *tft_rt_drain_main(void *arg)
{
	struct tft_rt_session *s = arg;
	int64_t flush_ns = (int64_t)s->st.flush_ms * 1000000;
	int64_t now = tft_rt_mono_ns(), next_commit = now + flush_ns;
	uint64_t seq = 0;
	int rc;

	tft_rt_emit_mark_internal();
	for (;;) {
		int64_t until = now + POLL_NS < next_commit ? now + POLL_NS : next_commit;
		int f = tft_rt_drain_wait(until, &seq);
		int wake;

		if (f & TFT_RT_WAIT_STOP)
			break;
		now = tft_rt_mono_ns();
		wake = atomic_exchange_explicit(&tft_rt_wake, 0, memory_order_relaxed);
		tft_rt_work_begin();
		if (wake || (f & TFT_RT_WAIT_FLUSH) || now >= next_commit)
			drain_cycle(s, (f & TFT_RT_WAIT_FLUSH) ? CYCLE_FORCE : CYCLE_PLAIN);
		if ((f & TFT_RT_WAIT_FLUSH) || now >= next_commit) {
			commit(s);
			now = tft_rt_mono_ns();
			next_commit = now + flush_ns;
		}
		tft_rt_work_end();
		if (f & TFT_RT_WAIT_FLUSH)
			tft_rt_drain_done(seq, 0, s->failed);
	}
	tft_rt_work_begin();
	rc = finish(s);
	tft_rt_work_end();
	tft_rt_drain_done(seq, 1, rc);
	return NULL;
}

/* ---- session ------------------------------------------------------------------------ */

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
	p.name = intern_cstr(s, program_invocation_short_name);
	p.host = intern_cstr(s, host);
	p.pid = (int64_t)getpid();
	p.rank = tft_job_from_env(&job);
	p.labels = 0;
	s->process = tft_writer_add_process(s->w, &p);
	s->s_split = intern_cstr(s, "split");
	s->s_flow = intern_cstr(s, "flow");
	s->s_memory = intern_cstr(s, "memory in use");
	s->s_step = intern_cstr(s, "step");
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
	    set_job_meta(s->w, &job) ||
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
		dthread_destroy(t->ds);
		t->ds = dthread_create(atomic_load_explicit(&t->dropped, memory_order_relaxed));
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
		fail(s, rc, "importing into the session", NULL);
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
		clamp_track(s, track, ts); /* the track's last start is at least ts now */
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
	free(s->cstrs);
	free(s->argtext);
	free(s->gev);
	free(s->flows);
	free(s->allocs);
	free(s);
}
