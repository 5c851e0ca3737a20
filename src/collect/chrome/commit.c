/* SPDX-License-Identifier: MIT */
/*
 * The committer: each parsed event of a batch to the model. Dispatches on the
 * phase; complete (X), begin / end (B / E, paired on the thread's stack),
 * instant and counter events; their args interned; ProfilerStep#N slices and
 * a tftracer export's step slices become steps. Async, object, flow and
 * metadata events go to spans.c, flows.c and naming.c.
 */
#include <math.h>
#include <stdio.h>

#include "collect/chrome/chrome_int.h"

/* intern()'s miss: the writer's table, and the string into the cache entry e. */
int tft_chrome_intern_miss(struct chrome *c, struct icache_ent *e, const char *s, size_t len,
			   uint64_t w0, uint64_t w1, uint32_t *id)
{
	uint32_t v = tft_writer_intern(c->w, s, len);
	size_t l2;
	const char *copy;

	*id = v;
	if (v == UINT32_MAX)
		return nomem(c);
	copy = tft_writer_str(c->w, v, &l2);
	if (copy && l2 == len && len <= UINT32_MAX) {
		e->w0 = w0;
		e->w1 = w1;
		e->s = copy;
		e->len = (uint32_t)len;
		e->id = v;
	}
	return 0;
}

/* Intern the current event's parsed args into c->args. */
int tft_chrome_intern_args(struct chrome *c)
{
	int rc;

	c->nargs = 0;
	if (c->npargs == 0)
		return 0;
	if (tft_grow((void **)&c->args, &c->cap_args, c->npargs, sizeof(*c->args)))
		return nomem(c);
	for (uint32_t i = 0; i < c->npargs; i++) {
		const struct parg *p = &c->pargs[i];
		struct tft_arg *a = &c->args[i];
		if ((rc = intern(c, p->key.ptr, p->key.len, &a->key)))
			return rc;
		a->type = p->type;
		switch (p->type) {
		case TFT_ARG_STR:
		case TFT_ARG_JSON:
			if ((rc = intern(c, p->s.ptr, p->s.len, &a->v.str)))
				return rc;
			break;
		case TFT_ARG_DOUBLE:
			a->v.d = parg_double(p);
			break;
		default:
			a->v.i = p->i;
			break;
		}
	}
	c->nargs = c->npargs;
	return 0;
}

/* Merge `add` into the arg array *args (same key: replaced). */
int tft_chrome_merge_args(struct chrome *c, struct tft_arg **args, uint32_t *n, uint32_t *cap,
			  const struct tft_arg *add, uint32_t nadd)
{
	for (uint32_t i = 0; i < nadd; i++) {
		uint32_t j;
		for (j = 0; j < *n; j++)
			if ((*args)[j].key == add[i].key)
				break;
		if (j == *n) {
			if (*n >= MAX_ARGS)
				continue;
			if (tft_grow((void **)args, cap, (uint64_t)*n + 1, sizeof(**args)))
				return nomem(c);
			(*n)++;
		}
		(*args)[j] = add[i];
	}
	return 0;
}

/* The current event's parsed arg named key, or NULL. */
const struct parg *tft_chrome_find_parg(const struct chrome *c, const char *key)
{
	size_t n = strlen(key);

	for (uint32_t i = 0; i < c->npargs; i++)
		if (str_eq(&c->pargs[i].key, key, n))
			return &c->pargs[i];
	return NULL;
}

/* Room for one more step (zeroed), its proc slot TFT_NONE; NULL: out of memory. */
static struct tft_step *push_step(struct chrome *c)
{
	struct tft_step *s;

	if (tft_grow((void **)&c->steps, &c->cap_steps, (uint64_t)c->nsteps + 1, sizeof(*c->steps)) ||
	    tft_grow((void **)&c->step_proc, &c->cap_step_proc, (uint64_t)c->nsteps + 1,
		     sizeof(*c->step_proc)))
		return NULL;
	c->step_proc[c->nsteps] = TFT_NONE;
	s = &c->steps[c->nsteps++];
	memset(s, 0, sizeof(*s));
	return s;
}

/*
 * A tftracer export's step drawn as a slice (cat "tftracer.step") is a step
 * again, not a slice. Its process is registered only if the step stays:
 * the export's metadata.steps, when the file has it, replaces these steps
 * at the end (as it replaces ProfilerStep#N ones), and a process made only
 * for steps without one ("Steps") must not appear on a round trip.
 */
static int tracer_step(struct chrome *c, const struct cev *e)
{
	const struct parg *a;
	uint32_t name = 0, idx;
	int rc;

	if ((e->name.len && (rc = intern(c, e->name.ptr, e->name.len, &name))) ||
	    (rc = tft_chrome_get_proc(c, &e->pid, &idx)))
		return rc;
	struct tft_step *s = push_step(c);

	if (!s)
		return nomem(c);
	a = tft_chrome_find_parg(c, "step");
	s->index = a && a->type == TFT_ARG_INT ? a->i : (int64_t)c->nsteps - 1;
	a = tft_chrome_find_parg(c, "traced");
	s->traced = a && a->type == TFT_ARG_BOOL && a->i;
	s->name = name;
	s->process = TFT_NONE;
	s->start_ns = e->ts;
	s->dur_ns = e->dur < 0 ? 0 : e->dur;
	c->step_proc[c->nsteps - 1] = idx;
	return 0;
}

/* Kineto's ProfilerStep#N slices become steps. */
static int maybe_step(struct chrome *c, const char *name, size_t len, const struct tft_json_str *cat,
		      uint32_t name_id, uint32_t proc_idx, int64_t ts, int64_t dur)
{
	static const char pfx[] = "ProfilerStep#";
	int64_t idx;
	uint32_t pid;
	int rc;

	if (len <= sizeof(pfx) - 1 || memcmp(name, pfx, sizeof(pfx) - 1) != 0)
		return 0;
	if (cat && contains(cat->ptr, cat->len, "gpu"))
		return 0; /* the GPU-side copy of the annotation */
	if (tft_json_number_to_i64(name + sizeof(pfx) - 1, len - (sizeof(pfx) - 1), &idx) || idx < 0)
		return 0;
	if ((rc = tft_chrome_ensure_proc(c, proc_idx, &pid)))
		return rc;
	struct tft_step *s = push_step(c);
	if (!s)
		return nomem(c);
	s->index = idx;
	s->name = name_id;
	s->process = pid;
	s->start_ns = ts;
	s->dur_ns = dur < 0 ? 0 : dur;
	s->traced = true;
	return 0;
}

/* X: a complete slice on its thread's track (or its stream's annotations track). */
static int do_complete(struct chrome *c, const struct cev *e, uint32_t name, uint32_t cat)
{
	uint32_t track, tidx;
	uint8_t cls;
	int rc;

	if ((rc = get_thread(c, &e->pid, &e->tid, &tidx)) || (rc = tft_chrome_intern_args(c)) ||
	    (rc = cat_class(c, cat, &e->cat, &cls)))
		return rc;
	if (cls == CAT_GPU)
		c->threads[tidx].gpu_events++;
	rc = cls == CAT_GPU_ANNOTATION ? tft_chrome_annotation_track(c, tidx, &track)
				       : thread_track(c, tidx, &track);
	if (rc)
		return rc;
	if ((rc = push(c, track, TFT_EV_SLICE, 0, e->ts, e->dur, 0, name, cat, c->args, c->nargs)))
		return rc;
	if (e->name.len > 13 && e->name.ptr[0] == 'P' &&
	    (rc = maybe_step(c, e->name.ptr, e->name.len, &e->cat, name, c->threads[tidx].proc, e->ts,
			     e->dur)))
		return rc;
	/* Flow events v2: bind_id + flow_in / flow_out on the slice itself. */
	if (e->bind_id.kind && (e->flow_in || e->flow_out)) {
		uint64_t id = xid_value(&e->bind_id);
		struct hkey k = mkkey(K_FLOW, 1ULL << 40, 0, id); /* v2 ids: own namespace */
		uint8_t ph = e->flow_in && e->flow_out ? FP_T : e->flow_in ? FP_F : FP_S;
		if ((rc = tft_chrome_flow_point(c, &k, id, ph, track, e->ts, name, cat, 0)))
			return rc;
	}
	return 0;
}

/* B: pushed on the thread's stack of open slices, with its args. */
static int do_begin(struct chrome *c, const struct cev *e, uint32_t name, uint32_t cat)
{
	uint32_t track, tidx;
	int rc;

	if ((rc = event_track(c, e, &track, &tidx)) || (rc = tft_chrome_intern_args(c)))
		return rc;
	struct thread *t = &c->threads[tidx];
	if (tft_grow((void **)&t->open, &t->cap_open, (uint64_t)t->nopen + 1, sizeof(*t->open)) ||
	    tft_grow((void **)&t->args, &t->cap_args, (uint64_t)t->nargs + c->nargs, sizeof(*t->args)))
		return nomem(c);
	struct open_slice *o = &t->open[t->nopen++];
	o->ts = e->ts;
	o->name = name;
	o->cat = cat;
	o->args_start = t->nargs;
	if (c->nargs)
		memcpy(t->args + t->nargs, c->args, c->nargs * sizeof(*c->args));
	t->nargs += c->nargs;
	return 0;
}

/* E: closes the thread's newest open slice, its args joining the B's. */
static int do_end(struct chrome *c, const struct cev *e)
{
	uint32_t track, tidx, nargs;
	int rc;

	if ((rc = event_track(c, e, &track, &tidx)) || (rc = tft_chrome_intern_args(c)))
		return rc;
	struct thread *t = &c->threads[tidx];
	if (t->nopen == 0) {
		c->unmatched_ends++;
		return 0;
	}
	struct open_slice o = t->open[--t->nopen];
	/* E's args join the slice's: the open B's args sit on top of the stack */
	if (tft_grow((void **)&t->args, &t->cap_args, (uint64_t)t->nargs + c->nargs, sizeof(*t->args)))
		return nomem(c);
	nargs = t->nargs - o.args_start;
	for (uint32_t i = 0; i < c->nargs; i++) {
		struct tft_arg *base = t->args + o.args_start;
		uint32_t j;
		for (j = 0; j < nargs; j++)
			if (base[j].key == c->args[i].key)
				break;
		if (j == nargs) {
			if (nargs >= MAX_ARGS)
				continue;
			nargs++;
		}
		base[j] = c->args[i];
	}
	rc = push(c, track, TFT_EV_SLICE, 0, o.ts, span_ns(o.ts, e->ts), 0, o.name, o.cat,
		  nargs ? t->args + o.args_start : NULL, nargs);
	t->nargs = o.args_start;
	if (rc)
		return rc;
	size_t nl;
	const char *nm = wstr(c, o.name, &nl);
	if (nl > 13 && nm[0] == 'P') {
		size_t cl;
		const char *cs = wstr(c, o.cat, &cl);
		struct tft_json_str cj = { cs, cl };
		return maybe_step(c, nm, nl, &cj, o.name, t->proc, o.ts, span_ns(o.ts, e->ts));
	}
	return 0;
}

/* i / I / R: an instant on its thread, its process's "Instants" or the Global track. */
static int do_instant(struct chrome *c, const struct cev *e, uint32_t name, uint32_t cat)
{
	uint32_t track;
	uint8_t flags = 0;
	int rc;

	if (e->s.len == 1 && e->s.ptr[0] == 'g') {
		flags = TFT_EVF_GLOBAL;
		rc = tft_chrome_global_named(c, &e->pid) ? event_track(c, e, &track, NULL)
							 : tft_chrome_global_track(c, &track);
	} else if (e->s.len == 1 && e->s.ptr[0] == 'p') {
		uint32_t pidx;
		flags = TFT_EVF_PROCESS;
		if ((rc = tft_chrome_get_proc(c, &e->pid, &pidx)))
			return rc;
		if (c->procs[pidx].instants == TFT_NONE) {
			uint32_t tn, tr;
			if ((rc = intern(c, "Instants", 8, &tn)) ||
			    (rc = tft_chrome_add_track(c, pidx, TFT_TRACK_THREAD, tn, 0, 0, &tr)))
				return rc;
			c->procs[pidx].instants = tr;
		}
		track = c->procs[pidx].instants;
	} else {
		rc = event_track(c, e, &track, NULL);
	}
	if (rc || (rc = tft_chrome_intern_args(c)))
		return rc;
	return push(c, track, TFT_EV_INSTANT, flags, e->ts, 0, 0, name, cat, c->args, c->nargs);
}

static int counter_series(struct chrome *c, const struct cev *e, const struct tft_json_str *nm,
			  uint32_t pidx, uint32_t name, uint32_t cname, uint32_t cat)
{
	int rc;

	for (uint32_t i = 0; i < c->npargs; i++) {
		const struct parg *p = &c->pargs[i];
		double v;
		uint32_t key, tname, track;
		if (p->type == TFT_ARG_INT)
			v = (double)p->i;
		else if (p->type == TFT_ARG_DOUBLE)
			v = parg_double(p);
		else if (p->type == TFT_ARG_STR && p->s.len > 0 &&
			 tft_json_number_to_double(p->s.ptr, p->s.len, &v) == 0)
			;
		else
			continue;
		if (!isfinite(v)) /* inf or NaN (1e400, "NaN"): no sample to draw, as for text */
			continue;
		if ((rc = intern(c, p->key.ptr, p->key.len, &key)))
			return rc;
		struct hkey k = mkkey(K_COUNTER, pidx, cname, key);
		track = map_get(&c->map, &k);
		if (track == TFT_NONE) {
			/* (empty names may have NULL pointers: no memcmp/memcpy on them) */
			if ((p->key.len == e->name.len &&
			     (!e->name.len || memcmp(p->key.ptr, e->name.ptr, e->name.len) == 0)) ||
			    STR_EQ(&p->key, "value")) {
				tname = cname;
			} else {
				size_t n = nm->len + 1 + p->key.len;
				char *tmp = malloc(n);
				if (!tmp)
					return nomem(c);
				if (nm->len)
					memcpy(tmp, nm->ptr, nm->len);
				tmp[nm->len] = '.';
				if (p->key.len)
					memcpy(tmp + nm->len + 1, p->key.ptr, p->key.len);
				rc = intern(c, tmp, n, &tname);
				free(tmp);
				if (rc)
					return rc;
			}
			if ((rc = tft_chrome_keyed_track(c, &k, pidx, TFT_TRACK_COUNTER, tname, &track)))
				return rc;
		}
		if ((rc = push(c, track, TFT_EV_COUNTER, 0, e->ts, 0, v, name, cat, NULL, 0)))
			return rc;
	}
	return 0;
}

/*
 * A counter event: one series per numeric arg, each on its own counter
 * track ("name.key", or "name" for a key named "value" or like the
 * counter). A counter with an id is an instance of its own, "name[id]", as
 * Chrome's viewer names it: instances never share a track.
 */
static int do_counter(struct chrome *c, const struct cev *e, uint32_t name, uint32_t cat)
{
	struct tft_json_str nm = e->name; /* the series' prefix */
	uint32_t pidx, cname = name;
	char small[256], *inst = NULL;
	int rc;

	if ((rc = tft_chrome_get_proc(c, &e->pid, &pidx)))
		return rc;
	if (e->id.kind) {
		char num[24];
		const char *ip = num;
		size_t il;

		if (e->id.kind == 2) {
			ip = e->id.s.ptr;
			il = e->id.s.len;
		} else {
			il = (size_t)snprintf(num, sizeof(num), "%lld", (long long)e->id.i);
		}
		/* counters with ids are sampled often: no allocation for the usual short names */
		inst = e->name.len + il + 3 <= sizeof(small) ? small : malloc(e->name.len + il + 3);
		if (!inst)
			return nomem(c);
		if (e->name.len)
			memcpy(inst, e->name.ptr, e->name.len);
		inst[e->name.len] = '[';
		if (il)
			memcpy(inst + e->name.len + 1, ip, il);
		inst[e->name.len + 1 + il] = ']';
		nm.ptr = inst;
		nm.len = e->name.len + il + 2;
		rc = intern(c, nm.ptr, nm.len, &cname);
		if (rc) {
			if (inst != small)
				free(inst);
			return rc;
		}
	}
	rc = counter_series(c, e, &nm, pidx, name, cname, cat);
	if (inst != small)
		free(inst);
	return rc;
}

/* One parsed event to the model, by phase. */
static int commit(struct chrome *c, const struct cev *e)
{
	uint32_t name = 0, cat = 0;
	char ph;
	int rc;

	/* a tftracer export's steps, drawn as slices: steps again (tracer_step) */
	if (e->ph.len == 1 && e->ph.ptr[0] == 'X' && STR_EQ(&e->cat, "tftracer.step"))
		return tracer_step(c, e);
	c->events++;
	if (e->ph.len != 1) {
		c->skipped++;
		return 0;
	}
	ph = e->ph.ptr[0];
	if (ph == 'M')
		return tft_chrome_do_meta(c, e);
	note_end(c, e->ts, ph == 'X' ? e->dur : 0); /* no ts: 0 */
	if (!strchr("XBEiIRCstfbeSTFnpNOD", ph) || ph == '\0') {
		c->skipped++;
		return 0;
	}
	if ((e->name.len && (rc = intern(c, e->name.ptr, e->name.len, &name))) ||
	    (e->cat.len && (rc = intern(c, e->cat.ptr, e->cat.len, &cat))))
		return rc;
	if (!c->kineto && cat && cat != c->last_cat_checked) {
		c->last_cat_checked = cat;
		if (tft_chrome_is_kineto_cat(e->cat.ptr, e->cat.len))
			c->kineto = true;
	}
	switch (ph) {
	case 'X': return do_complete(c, e, name, cat);
	case 'B': return do_begin(c, e, name, cat);
	case 'E': return do_end(c, e);
	case 'i': case 'I': case 'R': return do_instant(c, e, name, cat);
	case 'C': return do_counter(c, e, name, cat);
	case 's': case 't': case 'f': return tft_chrome_do_flow(c, e, ph, name, cat);
	case 'N': case 'O': case 'D': return tft_chrome_do_object(c, e, ph, name, cat);
	default: return tft_chrome_do_async(c, e, ph, name, cat);
	}
}

/* Report progress to the caller (at most every so often, or now when forced). */
void tft_chrome_progress(struct chrome *c, bool force)
{
	if (!c->opts || !c->opts->progress || !tft_ingest_progress_due(&c->last_progress, force))
		return;
	c->opts->progress(c->opts->progress_ctx, c->raw_offset, tft_source_raw_size(c->src),
			  c->events);
}

/* Commit every event of b in order; errors name the event's offset. */
int tft_chrome_commit_batch(struct chrome *c, const struct batch *b)
{
	int rc;

	c->raw_offset = b->raw_offset;
	for (uint32_t i = 0; i < b->nev; i++) {
		const struct pev *pe = &b->ev[i];
		c->pargs = pe->npargs ? b->pargs + pe->parg0 : NULL;
		c->npargs = pe->npargs;
		if ((rc = commit(c, &pe->e))) {
			tft_error_set(c->err, rc, pe->e.offset, "cannot import the event at this offset");
			return rc;
		}
		if ((c->events & (PROGRESS_EVERY - 1)) == 0)
			tft_chrome_progress(c, false);
	}
	c->pargs = NULL;
	c->npargs = 0;
	return 0;
}
