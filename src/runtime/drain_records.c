/* SPDX-License-Identifier: MIT */
/*
 * One thread's ring records into model events (drain_int.h): call sites and
 * static strings interned once, the thread's track, the drain's copy of its
 * zone stack, completed slices and instants held until the stack empties
 * (so a thread's events reach the writer in order), zone args and counter
 * values, splits at the hold limit, holds for an import (rt.h).
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

#include "core/grow.h"
#include "runtime/drain_int.h"

/* Name and category ids of a call site, interned once per site. */
void tft_rt_drain_site_ids(struct tft_rt_session *s, const struct tft_site *site, uint32_t *name,
			   uint32_t *cat)
{
	uint64_t k = (uint64_t)(uintptr_t)site;
	uint32_t h, i;

	if (!site) {
		*name = s->s_flow;
		*cat = 0;
		return;
	}
	h = (uint32_t)tft_rt_drain_hash_ptr(k);
	i = tft_hmap_get1(&s->site_ix, k, h);
	if (i != TFT_HMAP_EMPTY) {
		*name = s->sites[i].name;
		*cat = s->sites[i].cat;
		return;
	}
	*name = tft_rt_drain_intern_cstr(s, site->name);
	*cat = tft_rt_drain_intern_cstr(s, site->cat);
	if (tft_grow((void **)&s->sites, &s->cap_sites, s->nsites + 1, sizeof(*s->sites)) ||
	    tft_hmap_put(&s->site_ix, &k, h, s->nsites))
		return; /* no cache: still correct */
	s->sites[s->nsites++] = (struct site_ent){ *name, *cat };
}

/* The string id of a static string (an arg's key or value), interned once per pointer. */
static uint32_t cstr_id(struct tft_rt_session *s, const char *p)
{
	uint64_t k = (uint64_t)(uintptr_t)p;
	uint32_t h, id;

	if (!p)
		return 0;
	h = (uint32_t)tft_rt_drain_hash_ptr(k);
	id = tft_hmap_get1(&s->cstrs, k, h);
	if (id != TFT_HMAP_EMPTY)
		return id;
	id = tft_rt_drain_intern_cstr(s, p);
	if (id != TFT_HMAP_EMPTY)
		tft_hmap_put(&s->cstrs, &k, h, id); /* (no memory: no cache, still correct) */
	return id;
}

uint32_t tft_rt_drain_thread_track(struct tft_rt_session *s, struct tft_rt_thread *t,
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
	tr.name = tft_rt_drain_intern_cstr(s, name);
	tr.tid = t->tid;
	tr.sort_index = (int32_t)s->sort_next++;
	ds->track = tft_writer_add_track(s->w, &tr);
	if (ds->track == TFT_NONE)
		tft_rt_drain_fail(s, TFT_ENOMEM, "adding a thread track", NULL);
	return ds->track;
}

struct tft_rt_dthread *tft_rt_drain_dthread_create(uint64_t base_dropped)
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

void tft_rt_drain_dthread_destroy(struct tft_rt_dthread *ds)
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
		s->val_keys[i] = tft_rt_drain_intern_cstr(s, names[i]);
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
	track = tft_rt_drain_thread_track(s, t, ds);
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
		ev.ts_ns = tft_rt_drain_clamp_track(s, track, p->ts);
		ev.dur_ns = p->dur - (ev.ts_ns - p->ts) > 0 ? p->dur - (ev.ts_ns - p->ts) : 0;
		ev.kind = p->kind;
		ev.flags = p->flags;
		ev.track = track;
		ev.count = 1;
		tft_rt_drain_site_ids(s, p->site, &ev.name, &ev.cat);
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
		if (tft_rt_drain_append(s, &ev) == TFT_EINVAL)
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
	return tft_grow_ex((void **)&ds->zargs, &ds->cap_zargs, (uint64_t)ds->nzargs + need, sizeof(*ds->zargs), 64, 0)
		       ? -1
		       : 0;
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
void tft_rt_drain_split_flush(struct tft_rt_session *s, struct tft_rt_thread *t,
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
		tft_rt_drain_split_flush(s, t, ds, ts);
}

/* Close every open zone at end_ns, flagged unclosed, and write everything. */
void tft_rt_drain_close_all(struct tft_rt_session *s, struct tft_rt_thread *t,
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
		uint32_t track = tft_rt_drain_thread_track(s, t, ds);
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
		g = tft_rt_drain_gev_push(s);
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
				   ? tft_rt_drain_thread_track(s, t, ds)
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
int tft_rt_drain_hold_over(struct tft_rt_session *s, struct tft_rt_dthread *ds, int64_t now_ns)
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

void tft_rt_drain_consume_thread(struct tft_rt_session *s, struct tft_rt_thread *t,
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
		if (ds && ds->held && !tft_rt_drain_hold_over(s, ds, INT64_MIN))
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
void tft_rt_drain_retire(struct tft_rt_session *s, struct tft_rt_thread *t, struct tft_rt_thread *prev)
{
	struct tft_rt_thread *nx = atomic_load_explicit(&t->next, memory_order_relaxed);
	struct tft_rt_dthread *ds = t->ds;

	if (ds) {
		tft_rt_drain_close_all(s, t, ds, ds->last_ns);
		s->retired_dropped +=
			atomic_load_explicit(&t->dropped, memory_order_relaxed) - ds->base_dropped;
		s->vdropped += atomic_load_explicit(&t->values_dropped, memory_order_relaxed) -
			       ds->base_vdropped;
		tft_rt_drain_dthread_destroy(ds);
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
