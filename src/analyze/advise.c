/* SPDX-License-Identifier: MIT */
/*
 * The advisor's engine: decides how each track counts, groups tracks into
 * workers (scopes: a rank, a host, a TF task), turns the session's steps
 * into windows, reads the launch flows, then reads each worker's events once,
 * a slab at a time (advise_int.h), computes every step's breakdown and
 * hands each slab to the checkers. Definitions and thresholds:
 * docs/cmd-advise.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/advise_int.h"
#include "core/grow.h"

static const struct adv_checker *const checkers[TFT_ADVISE_NCHECKERS] = {
	&tft_adv_step_time, &tft_adv_utilization, &tft_adv_expensive, &tft_adv_op_config,
	&tft_adv_communication, &tft_adv_memory, &tft_adv_variability, &tft_adv_critical_path,
};

/* ---- strings and classes ----------------------------------------------------------- */

const char *tft_adv_str(struct adv *a, uint32_t id)
{
	return tft_session_str(a->s, id, NULL);
}

static bool is_step_name(const struct adv *a, uint32_t name)
{
	uint32_t lo = 0, hi = a->nstep_names;

	while (lo < hi) {
		uint32_t m = lo + (hi - lo) / 2;
		if (a->step_names[m] < name)
			lo = m + 1;
		else
			hi = m;
	}
	return lo < a->nstep_names && a->step_names[lo] == name;
}

uint32_t tft_adv_name_bits(struct adv *a, uint32_t name)
{
	uint32_t b;
	size_t len;
	const char *p;

	if (name >= a->nstrings)
		return 0;
	b = a->nbits[name];
	if (b)
		return b & ~(uint32_t)ADV_N_DONE;
	p = tft_session_str(a->s, name, &len);
	b = tft_adv_classify_name(p, len);
	if (is_step_name(a, name))
		b |= ADV_N_STEP;
	a->nbits[name] = b | ADV_N_DONE;
	return b;
}

uint32_t tft_adv_cat_bits(struct adv *a, uint32_t cat)
{
	uint32_t b;

	if (cat >= a->nstrings)
		return 0;
	b = a->kbits[cat];
	if (b)
		return b & ~(uint32_t)ADV_K_DONE;
	b = tft_adv_classify_cat(tft_session_str(a->s, cat, NULL));
	a->kbits[cat] = b | ADV_K_DONE;
	return b;
}

int tft_adv_classify(struct adv *a, uint32_t track, uint32_t name, uint32_t cat)
{
	uint32_t nb = tft_adv_name_bits(a, name), kb;

	switch (a->tracks[track].role) {
	case ADV_R_DEVICE:
		if (nb & ADV_N_STEP)
			return ADV_C_IGNORE;
		kb = tft_adv_cat_bits(a, cat);
		if (kb & (ADV_K_ANNOT | ADV_K_SYNC))
			return ADV_C_IGNORE;
		if (nb & ADV_N_COMM)
			return ADV_C_COMM;
		if ((kb & ADV_K_MEMCPY) || (nb & ADV_N_MEMCPY))
			return ADV_C_MEMCPY;
		return ADV_C_DEVICE;
	case ADV_R_COMM:
		return ADV_C_COMM;
	case ADV_R_HOST:
		if (nb & ADV_N_STEP)
			return ADV_C_IGNORE;
		if (nb & ADV_N_INPUT)
			return ADV_C_INPUT;
		kb = tft_adv_cat_bits(a, cat);
		if ((kb & (ADV_K_PYFUNC | ADV_K_ANNOT)) || (nb & ADV_N_PYFRAME))
			return ADV_C_IGNORE;
		if ((nb & ADV_N_COMM) && !(kb & ADV_K_RUNTIME))
			return ADV_C_COMM;
		return ADV_C_HOST;
	default:
		return ADV_C_IGNORE;
	}
}

bool tft_adv_is_op(struct adv *a, const struct adv_sl *x)
{
	return a->tracks[x->track].executor || (tft_adv_cat_bits(a, x->cat) & ADV_K_OP) ||
	       (tft_adv_name_bits(a, x->name) & ADV_N_FWOP);
}

/* ---- launch flows ------------------------------------------------------------------------ */

static int on_flow(void *ctx, const struct tft_flow *f)
{
	struct adv *a = ctx;
	struct adv_launches *l;

	a->nflows++;
	if (f->src_track >= a->ntracks || f->dst_track >= a->ntracks)
		return 0;
	if (a->tracks[f->src_track].role != ADV_R_HOST || a->tracks[f->dst_track].role != ADV_R_DEVICE)
		return 0;
	l = &a->launches[f->dst_track];
	if (tft_grow_size_ex((void **)&l->v, &l->cap, l->n + 1, sizeof(*l->v), 256, 0))
		return TFT_ENOMEM;
	l->v[l->n].dst_ts = f->dst_ts_ns;
	l->v[l->n].src_ts = f->src_ts_ns;
	l->n++;
	a->nlaunch++;
	/* and where it starts, on its host track */
	{
		struct adv_srcs *h = &a->srcs[f->src_track];
		if (tft_grow_size_ex((void **)&h->v, &h->cap, h->n + 1, sizeof(*h->v), 256, 0))
			return TFT_ENOMEM;
		h->v[h->n++] = f->src_ts_ns;
	}
	return 0;
}

static int cmp_i64(const void *x, const void *y)
{
	int64_t p = *(const int64_t *)x, q = *(const int64_t *)y;

	return (p > q) - (p < q);
}

static int cmp_launch(const void *x, const void *y)
{
	const struct adv_launch *p = x, *q = y;

	if (p->dst_ts != q->dst_ts)
		return p->dst_ts < q->dst_ts ? -1 : 1;
	return (p->src_ts > q->src_ts) - (p->src_ts < q->src_ts);
}

/*
 * The launch flows into each device track, by their work's start. The flows come
 * chunk by chunk in about time order, and a stream runs its work in launch order,
 * so each track's list is mostly sorted already: sorted only when it is not.
 */
static int load_launches(struct adv *a)
{
	int rc;

	a->launches = calloc(a->ntracks ? a->ntracks : 1, sizeof(*a->launches));
	a->srcs = calloc(a->ntracks ? a->ntracks : 1, sizeof(*a->srcs));
	if (!a->launches || !a->srcs)
		return TFT_ENOMEM;
	rc = tft_session_flows(a->s, on_flow, a, a->err);
	if (rc)
		return rc < 0 ? rc : TFT_EIO;
	for (uint32_t t = 0; t < a->ntracks; t++) {
		struct adv_launches *l = &a->launches[t];
		bool sorted = true;
		for (size_t i = 1; i < l->n && sorted; i++)
			sorted = cmp_launch(&l->v[i - 1], &l->v[i]) <= 0;
		if (!sorted)
			qsort(l->v, l->n, sizeof(*l->v), cmp_launch);
		sorted = true;
		for (size_t i = 1; i < a->srcs[t].n && sorted; i++)
			sorted = a->srcs[t].v[i - 1] <= a->srcs[t].v[i];
		if (!sorted)
			qsort(a->srcs[t].v, a->srcs[t].n, sizeof(*a->srcs[t].v), cmp_i64);
	}
	return 0;
}

/*
 * The host slices of a run where launch flows start: at each flow's start, the
 * latest-starting slice of the run that holds it (the deepest, on a call stack).
 */
static void slab_sources(struct adv_slab *sl, const struct adv_run *run, const struct adv_srcs *h)
{
	size_t lo = 0, hi = h->n, i = run->lo;

	while (lo < hi) {
		size_t m = lo + (hi - lo) / 2;
		if (h->v[m] < sl->sl[run->lo].ts)
			lo = m + 1;
		else
			hi = m;
	}
	for (size_t k = lo; k < h->n; k++) {
		int64_t t = h->v[k];
		if (t > sl->sl[run->hi - 1].end && t > sl->sl[run->hi - 1].ts)
			break;
		while (i + 1 < run->hi && sl->sl[i + 1].ts <= t)
			i++;
		for (size_t j = i + 1, tries = 0; j-- > run->lo && tries < 16; tries++) {
			if (sl->sl[j].ts <= t && sl->sl[j].end >= t) {
				sl->sl[j].flags |= ADV_SL_LAUNCH;
				break;
			}
		}
	}
}

/* Each device slice of the slab: the start of the launch call of the flow into it. */
static void slab_launches(struct adv *a, struct adv_slab *sl)
{
	for (size_t r = 0; r < sl->nruns; r++) {
		const struct adv_run *run = &sl->runs[r];
		const struct adv_launches *l = &a->launches[run->track];
		size_t j = 0, lo = 0, hi = l->n;

		for (size_t i = run->lo; i < run->hi; i++)
			sl->launch[i] = INT64_MIN;
		if (a->tracks[run->track].role == ADV_R_HOST && a->srcs[run->track].n)
			slab_sources(sl, run, &a->srcs[run->track]);
		if (!l->n || a->tracks[run->track].role != ADV_R_DEVICE)
			continue;
		/* the first flow at or after the run's first slice, then a merge */
		while (lo < hi) {
			size_t m = lo + (hi - lo) / 2;
			if (l->v[m].dst_ts < sl->sl[run->lo].ts)
				lo = m + 1;
			else
				hi = m;
		}
		j = lo;
		for (size_t i = run->lo; i < run->hi && j < l->n; i++) {
			int64_t ts = sl->sl[i].ts;
			while (j < l->n && l->v[j].dst_ts < ts)
				j++;
			if (j < l->n && l->v[j].dst_ts == ts)
				sl->launch[i] = l->v[j].src_ts;
		}
	}
}

/* ---- tracks, devices, scopes ------------------------------------------------------------ */

static bool names_accelerator(const char *s)
{
	return strstr(s, "GPU") || strstr(s, "gpu:") || strstr(s, "TPU") || strstr(s, "XLA_") ||
	       strstr(s, "/device:MTIA") || strstr(s, "SYCL");
}

/* The device a device-role track belongs to: its process name without stream suffixes. */
static void device_key(struct adv *a, const struct tft_track *t, char *out, size_t size)
{
	const struct tft_process *p = tft_session_process(a->s, t->process);
	const char *pn = p ? tft_adv_str(a, p->name) : "";
	const char *cut[] = { "/stream:", "/memcpy", " Compute", NULL };
	size_t n = strlen(pn);

	for (int i = 0; cut[i]; i++) {
		const char *c = strstr(pn, cut[i]);
		if (c && (size_t)(c - pn) < n)
			n = (size_t)(c - pn);
	}
	if (!n) {
		pn = tft_adv_str(a, t->name);
		n = strlen(pn);
	}
	if (n >= size)
		n = size - 1;
	memcpy(out, pn, n);
	out[n] = 0;
}

/* The worker key of a process: its rank, host, or TF task. */
static void scope_key(struct adv *a, uint32_t pid, char *out, size_t size, int32_t *rank)
{
	const struct tft_process *p = tft_session_process(a->s, pid);
	const char *host, *name, *job, *task, *end;

	*rank = -1;
	out[0] = 0;
	if (!p)
		return;
	if (p->rank >= 0) {
		*rank = p->rank;
		snprintf(out, size, "rank %d", p->rank);
		return;
	}
	host = tft_adv_str(a, p->host);
	if (host[0]) {
		snprintf(out, size, "host %s", host);
		return;
	}
	name = tft_adv_str(a, p->name);
	job = strstr(name, "/job:");
	task = job ? strstr(job, "/task:") : NULL;
	if (task) {
		end = task + 6;
		while (*end >= '0' && *end <= '9')
			end++;
		snprintf(out, size, "%.*s", (int)(end - job), job);
	}
}

static int setup_tracks(struct adv *a)
{
	bool streams = false;

	a->tracks = calloc(a->ntracks ? a->ntracks : 1, sizeof(*a->tracks));
	if (!a->tracks)
		return TFT_ENOMEM;
	for (uint32_t i = 0; i < a->ntracks; i++) {
		const struct tft_track *t = tft_session_track(a->s, i);
		if (t->kind == TFT_TRACK_GPU_STREAM && !(t->flags & TFT_TRACKF_DERIVED) && t->slices)
			streams = true;
	}
	a->has_streams = streams;
	for (uint32_t i = 0; i < a->ntracks; i++) {
		const struct tft_track *t = tft_session_track(a->s, i);
		const struct tft_process *p = tft_session_process(a->s, t->process);
		struct adv_track *at = &a->tracks[i];

		at->scope = TFT_NONE;
		at->device = TFT_NONE;
		at->nests = tft_track_nests(t->kind, t->flags);
		if (t->flags & TFT_TRACKF_DERIVED)
			continue;
		switch (t->kind) {
		case TFT_TRACK_THREAD:
			at->role = ADV_R_HOST;
			at->serial = true;
			break;
		case TFT_TRACK_GPU_STREAM:
			at->role = ADV_R_DEVICE;
			at->serial = true;
			break;
		case TFT_TRACK_DEVICE: {
			const char *pn = p ? tft_adv_str(a, p->name) : "";
			bool acc = names_accelerator(pn) || names_accelerator(tft_adv_str(a, t->name));
			at->role = acc && !streams ? ADV_R_DEVICE : ADV_R_HOST;
			at->executor = true;
			at->accel = acc;
			break;
		}
		case TFT_TRACK_COMM:
			at->role = ADV_R_COMM;
			break;
		case TFT_TRACK_COUNTER:
			at->role = ADV_R_COUNTER;
			break;
		default:
			break;
		}
		if (at->role == ADV_R_DEVICE && t->slices) {
			char key[96];
			uint32_t d;
			device_key(a, t, key, sizeof(key));
			for (d = 0; d < a->ndevices && strcmp(a->devices[d].name, key); d++)
				;
			if (d == a->ndevices) {
				struct adv_device *nd;

				if (tft_grow((void **)&a->devices, &a->cdevices, a->ndevices + 1, sizeof(*nd)))
					return TFT_ENOMEM;
				nd = a->devices;
				memset(&nd[d], 0, sizeof(nd[d]));
				snprintf(nd[d].name, sizeof(nd[d].name), "%s", key);
				nd[d].first_track = i;
				nd[d].scope = TFT_NONE;
				a->ndevices++;
			}
			at->device = d;
			a->has_device = true;
		}
	}
	return 0;
}

static uint32_t find_scope(struct adv *a, const char *key, int32_t rank)
{
	struct adv_scope *ns;

	for (uint32_t i = 0; i < a->nscopes; i++)
		if (!strcmp(a->scopes[i].key, key))
			return i;
	if (tft_grow((void **)&a->scopes, &a->cscopes, a->nscopes + 1, sizeof(*ns)))
		return TFT_NONE;
	ns = a->scopes;
	memset(&ns[a->nscopes], 0, sizeof(ns[0]));
	snprintf(ns[a->nscopes].key, sizeof(ns[0].key), "%s", key);
	ns[a->nscopes].rank = rank;
	return a->nscopes++;
}

static int scope_add_track(struct adv_scope *sc, uint32_t t)
{
	if (tft_grow((void **)&sc->tracks, &sc->ctracks, sc->ntracks + 1, sizeof(*sc->tracks)))
		return TFT_ENOMEM;
	sc->tracks[sc->ntracks++] = t;
	return 0;
}

/*
 * Scopes: one for the whole session when a step names no process, else one
 * per worker key that steps or (without steps) tracks have.
 */
static int setup_scopes(struct adv *a, uint32_t *step_scope)
{
	uint32_t nsteps = tft_session_step_count(a->s);
	bool whole = false;
	uint32_t nproc = tft_session_process_count(a->s);
	uint32_t *proc_scope = malloc((nproc ? nproc : 1) * sizeof(*proc_scope));

	if (!proc_scope)
		return TFT_ENOMEM;
	for (uint32_t i = 0; i < nsteps; i++)
		if (tft_session_step(a->s, i)->process >= nproc)
			whole = true;
	/* a process without a key joins the one key the others have (TF streams beside a task) */
	char only[160] = "";
	int32_t only_rank = -1;
	bool one = true;
	for (uint32_t p = 0; p < nproc && one; p++) {
		char key[160];
		int32_t rank;
		scope_key(a, p, key, sizeof(key), &rank);
		if (!key[0])
			continue;
		if (only[0] && strcmp(only, key))
			one = false;
		snprintf(only, sizeof(only), "%s", key);
		only_rank = rank;
	}
	for (uint32_t p = 0; p < nproc; p++) {
		char key[160];
		int32_t rank;
		scope_key(a, p, key, sizeof(key), &rank);
		if (!key[0] && one && only[0]) {
			snprintf(key, sizeof(key), "%s", only);
			rank = only_rank;
		}
		proc_scope[p] = whole ? find_scope(a, "", -1) : find_scope(a, key, rank);
		if (proc_scope[p] == TFT_NONE) {
			free(proc_scope);
			return TFT_ENOMEM;
		}
	}
	for (uint32_t i = 0; i < a->ntracks; i++) {
		const struct tft_track *t = tft_session_track(a->s, i);
		struct adv_track *at = &a->tracks[i];
		if (at->role == ADV_R_NONE || t->process >= nproc)
			continue;
		at->scope = proc_scope[t->process];
		if (scope_add_track(&a->scopes[at->scope], i)) {
			free(proc_scope);
			return TFT_ENOMEM;
		}
		if (at->device != TFT_NONE) {
			a->devices[at->device].scope = at->scope;
			a->scopes[at->scope].ndevices++;
		}
	}
	for (uint32_t i = 0; i < nsteps; i++) {
		const struct tft_step *st = tft_session_step(a->s, i);
		step_scope[i] = st->process < nproc ? proc_scope[st->process] : (a->nscopes ? 0 : TFT_NONE);
	}
	free(proc_scope);
	return 0;
}

/* ---- windows ----------------------------------------------------------------------------- */

static int cmp_win(const void *x, const void *y)
{
	const struct adv_win *p = x, *q = y;

	if (p->scope != q->scope)
		return p->scope < q->scope ? -1 : 1;
	if (p->t0 != q->t0)
		return p->t0 < q->t0 ? -1 : 1;
	return (p->step > q->step) - (p->step < q->step);
}

static int64_t sat_end(int64_t t, int64_t d)
{
	int64_t r;

	if (d < 0)
		d = 0;
	return __builtin_add_overflow(t, d, &r) ? INT64_MAX : r;
}

static int setup_windows(struct adv *a)
{
	uint32_t nsteps = tft_session_step_count(a->s);
	uint32_t *step_scope = malloc((nsteps ? nsteps : 1) * sizeof(*step_scope));
	struct tft_advise_result *r = a->res;
	bool any_traced = false, found = false;
	int rc;

	if (!step_scope)
		return TFT_ENOMEM;
	if ((rc = setup_scopes(a, step_scope))) {
		free(step_scope);
		return rc;
	}
	r->steps = calloc(nsteps ? nsteps : 1, sizeof(*r->steps));
	a->win = calloc(nsteps ? nsteps : (a->nscopes ? a->nscopes : 1), sizeof(*a->win));
	if (!r->steps || !a->win) {
		free(step_scope);
		return TFT_ENOMEM;
	}
	r->nsteps = nsteps;
	for (uint32_t i = 0; i < nsteps; i++) {
		const struct tft_step *st = tft_session_step(a->s, i);
		const struct tft_process *p = tft_session_process(a->s, st->process);
		struct tft_advise_step *rs = &r->steps[i];
		rs->index = st->index;
		rs->process = p ? st->process : TFT_NONE;
		rs->rank = p ? p->rank : -1;
		rs->start_ns = st->start_ns;
		rs->dur_ns = st->dur_ns;
		rs->traced = st->traced;
		if (step_scope[i] == TFT_NONE)
			continue;
		struct adv_win *w = &a->win[a->nwin++];
		w->t0 = st->start_ns;
		w->t1 = sat_end(st->start_ns, st->dur_ns);
		w->scope = step_scope[i];
		w->step = i;
		w->traced = st->traced;
		w->first_act = INT64_MAX;
		any_traced |= st->traced;
	}
	free(step_scope);
	if (!nsteps) {
		/* no steps: each worker's span is one window */
		for (uint32_t sc = 0; sc < a->nscopes; sc++) {
			int64_t lo = INT64_MAX, hi = INT64_MIN;
			for (uint32_t k = 0; k < a->scopes[sc].ntracks; k++) {
				const struct tft_track *t = tft_session_track(a->s, a->scopes[sc].tracks[k]);
				if (!t->slices || a->tracks[t->id].role == ADV_R_COUNTER)
					continue;
				lo = t->min_ts_ns < lo ? t->min_ts_ns : lo;
				hi = t->max_ts_ns > hi ? t->max_ts_ns : hi;
			}
			if (lo >= hi)
				continue;
			struct adv_win *w = &a->win[a->nwin++];
			w->t0 = lo;
			w->t1 = hi;
			w->scope = sc;
			w->step = TFT_NONE;
			w->traced = true;
			w->first_act = INT64_MAX;
			any_traced = true;
		}
	}
	qsort(a->win, a->nwin, sizeof(*a->win), cmp_win);
	for (uint32_t i = 0; i < a->nwin; i++) {
		struct adv_scope *sc = &a->scopes[a->win[i].scope];
		if (i == 0 || a->win[i - 1].scope != a->win[i].scope)
			sc->w0 = i;
		sc->w1 = i + 1;
	}
	/* which windows count in the findings */
	for (uint32_t i = 0; i < a->nwin; i++) {
		struct adv_win *w = &a->win[i];
		if (a->opts.one_step) {
			w->analysed = w->step != TFT_NONE && r->steps[w->step].index == a->opts.step;
			found |= w->analysed;
		} else {
			w->analysed = w->traced || !any_traced;
		}
	}
	if (a->opts.one_step && !found) {
		int64_t lo = INT64_MAX, hi = INT64_MIN;
		for (size_t i = 0; i < r->nsteps; i++) {
			lo = r->steps[i].index < lo ? r->steps[i].index : lo;
			hi = r->steps[i].index > hi ? r->steps[i].index : hi;
		}
		if (!r->nsteps)
			return tft_error_set(a->err, TFT_ENOTFOUND, -1, "no step %lld: the session has no steps",
					     (long long)a->opts.step);
		return tft_error_set(a->err, TFT_ENOTFOUND, -1, "no step %lld (steps %lld..%lld)",
				     (long long)a->opts.step, (long long)lo, (long long)hi);
	}
	if (!a->opts.one_step && !a->opts.all_steps && nsteps) {
		/* each worker's first step pays one-time costs (allocation, autotuning, compilation) */
		for (uint32_t sc = 0; sc < a->nscopes; sc++) {
			uint32_t n = 0, first = TFT_NONE;
			for (uint32_t i = a->scopes[sc].w0; i < a->scopes[sc].w1; i++) {
				if (!a->win[i].analysed)
					continue;
				if (first == TFT_NONE)
					first = i;
				n++;
			}
			if (n >= 3)
				a->win[first].analysed = false;
		}
	}
	for (uint32_t i = 0; i < a->nwin; i++) {
		if (a->win[i].step != TFT_NONE)
			r->steps[a->win[i].step].analysed = a->win[i].analysed;
		if (a->win[i].analysed) {
			r->analysed_windows++;
			r->analysed_ns += a->win[i].t1 - a->win[i].t0;
		}
	}
	{
		int32_t ranks[64];
		uint32_t nr = 0;
		for (uint32_t sc = 0; sc < a->nscopes; sc++) {
			bool seen = false, analysed = false;
			for (uint32_t i = a->scopes[sc].w0; i < a->scopes[sc].w1; i++)
				analysed |= a->win[i].analysed;
			if (!analysed)
				continue;
			a->analysed_scopes++;
			if (a->scopes[sc].rank < 0)
				continue;
			for (uint32_t k = 0; k < nr; k++)
				seen |= ranks[k] == a->scopes[sc].rank;
			if (!seen && nr < 64)
				ranks[nr++] = a->scopes[sc].rank;
		}
		a->nranks = nr;
	}
	return 0;
}

uint32_t tft_adv_window_at(const struct adv *a, uint32_t scope, int64_t t)
{
	const struct adv_scope *sc;
	uint32_t lo, hi;

	if (scope >= a->nscopes)
		return TFT_NONE;
	sc = &a->scopes[scope];
	lo = sc->w0;
	hi = sc->w1;
	/* the last window starting at or before t */
	while (lo < hi) {
		uint32_t m = lo + (hi - lo) / 2;
		if (a->win[m].t0 <= t)
			lo = m + 1;
		else
			hi = m;
	}
	/* windows of a worker rarely overlap: look back a few for one holding t */
	for (uint32_t k = 0; k < 4 && lo > sc->w0; k++, lo--)
		if (t < a->win[lo - 1].t1)
			return lo - 1;
	return TFT_NONE;
}

int64_t tft_adv_analysed_overlap(const struct adv *a, uint32_t scope, int64_t t0, int64_t t1)
{
	const struct adv_scope *sc;
	int64_t sum = 0;
	uint32_t lo, hi;

	if (scope >= a->nscopes || t1 <= t0)
		return 0;
	sc = &a->scopes[scope];
	lo = sc->w0;
	hi = sc->w1;
	while (lo < hi) {
		uint32_t m = lo + (hi - lo) / 2;
		if (a->win[m].t1 <= t0)
			lo = m + 1;
		else
			hi = m;
	}
	/* (windows sorted by start; an overlapping earlier one is caught by the step back) */
	if (lo > sc->w0)
		lo--;
	for (uint32_t i = lo; i < sc->w1 && a->win[i].t0 < t1; i++) {
		const struct adv_win *w = &a->win[i];
		int64_t x = w->t0 > t0 ? w->t0 : t0, y = w->t1 < t1 ? w->t1 : t1;
		if (w->analysed && y > x)
			sum += y - x;
	}
	return sum;
}

uint32_t tft_adv_analysed_count(const struct adv *a)
{
	return a->res->analysed_windows;
}

int64_t tft_adv_analysed_ns(const struct adv *a)
{
	return a->res->analysed_ns;
}

void tft_adv_window_label(const struct adv *a, uint32_t w, char *out, size_t size)
{
	const struct adv_win *win = &a->win[w];
	const struct adv_scope *sc = &a->scopes[win->scope];

	if (win->step == TFT_NONE) {
		if (a->analysed_scopes > 1 && sc->key[0])
			snprintf(out, size, "the trace (%s)", sc->key);
		else
			snprintf(out, size, "the trace");
		return;
	}
	if (a->analysed_scopes > 1 && sc->key[0])
		snprintf(out, size, "step %lld (%s)", (long long)a->res->steps[win->step].index, sc->key);
	else
		snprintf(out, size, "step %lld", (long long)a->res->steps[win->step].index);
}

const char *tft_adv_track_label(struct adv *a, uint32_t t)
{
	const struct tft_track *tr = tft_session_track(a->s, t);
	const struct tft_process *p;
	const char *n;

	if (!tr)
		return "";
	n = tft_adv_str(a, tr->name);
	while (*n == ' ')
		n++;
	if (*n)
		return n;
	p = tft_session_process(a->s, tr->process);
	return p ? tft_adv_str(a, p->name) : "";
}

/* ---- the slab scan ------------------------------------------------------------------------- */

struct chunk_pt {
	int64_t t;
	uint64_t n;
};

static int cmp_pt(const void *x, const void *y)
{
	const struct chunk_pt *p = x, *q = y;

	return (p->t > q->t) - (p->t < q->t);
}

/* Events of the scope's chunks starting in [t0, t1): pre[] is the prefix sum over pts. */
static uint64_t est_events(const struct chunk_pt *pts, const uint64_t *pre, size_t n, int64_t t0, int64_t t1)
{
	size_t lo = 0, hi = n, i, j;

	while (lo < hi) {
		size_t m = lo + (hi - lo) / 2;
		if (pts[m].t < t0)
			lo = m + 1;
		else
			hi = m;
	}
	i = lo;
	hi = n;
	while (lo < hi) {
		size_t m = lo + (hi - lo) / 2;
		if (pts[m].t < t1)
			lo = m + 1;
		else
			hi = m;
	}
	j = lo;
	return pre[j] - pre[i];
}

static int on_event(void *ctx, const struct tft_event *ev)
{
	struct adv *a = ctx;
	struct adv_slab *sl = a->cur;
	uint32_t track = a->cur_track, win = TFT_NONE, nb;
	const struct adv_track *at = &a->tracks[track];
	bool own = ev->ts_ns >= sl->own_a && ev->ts_ns < sl->own_b && ev->ts_ns >= sl->a && ev->ts_ns < sl->b;
	struct adv_sl *x;
	int cls;

	if (own) {
		/* (a track's events come in start order: most fall in the window the last one did) */
		uint32_t c = a->cur_win;
		if (c != TFT_NONE && ev->ts_ns >= a->win[c].t0 && ev->ts_ns < a->win[c].t1 &&
		    (c + 1 >= a->scopes[sl->scope].w1 || a->win[c + 1].t0 > ev->ts_ns))
			win = c;
		else
			win = a->cur_win = tft_adv_window_at(a, sl->scope, ev->ts_ns);
	}
	if (a->no_hooks)
		own = false; /* (counted nowhere: a checker's own scan) */
	if (ev->kind == TFT_EV_COUNTER) {
		if (own)
			for (int c = 0; c < TFT_ADVISE_NCHECKERS; c++)
				if (checkers[c]->want_counters && checkers[c]->event)
					checkers[c]->event(a, ev, win);
		return 0;
	}
	if (ev->flags & TFT_EVF_SUMMARY)
		return 0;
	nb = tft_adv_name_bits(a, ev->name);
	if (own && nb)
		for (int c = 0; c < TFT_ADVISE_NCHECKERS; c++)
			if ((checkers[c]->want_names & nb) && checkers[c]->event)
				checkers[c]->event(a, ev, win);
	if (own && ev->nargs && ev->kind == TFT_EV_SLICE && a->tracks[track].executor)
		for (int c = 0; c < TFT_ADVISE_NCHECKERS; c++)
			if (checkers[c]->want_executor_args && checkers[c]->event)
				checkers[c]->event(a, ev, win);
	if (ev->kind != TFT_EV_SLICE || at->role == ADV_R_COUNTER)
		return 0;
	cls = tft_adv_classify(a, track, ev->name, ev->cat);
	if (cls == ADV_C_IGNORE)
		return 0;
	if (sl->max_n && sl->n >= sl->max_n)
		return TFT_ENOSPC;
	if (sl->n == sl->cap && tft_grow_size_ex((void **)&sl->sl, &sl->cap, sl->n + 1, sizeof(*sl->sl), 4096, 0))
		return TFT_ENOMEM;
	x = &sl->sl[sl->n++];
	x->ts = ev->ts_ns;
	x->end = sat_end(ev->ts_ns, ev->dur_ns);
	x->track = track;
	x->name = ev->name;
	x->cat = ev->cat;
	x->win = win;
	x->depth = ev->depth > UINT16_MAX ? UINT16_MAX : (uint16_t)ev->depth;
	x->cls = (uint8_t)cls;
	x->flags = own || (a->no_hooks && ev->ts_ns >= sl->a) ? ADV_SL_OWN : 0;
	if (at->role == ADV_R_HOST && (nb & ADV_N_LAUNCH))
		x->flags |= ADV_SL_LAUNCH;
	if (cls == ADV_C_COMM)
		a->has_comm = true;
	return 0;
}

/* Class unions of the slab over [a, b), then the cumulative ones, indexed. */
static int build_unions(struct adv *a, struct adv_slab *sl, struct tft_ivset *tmp, struct tft_ivset *spare)
{
	for (int c = 0; c < ADV_NCLASSES; c++) {
		tft_ivset_clear(&sl->cls[c]);
		tft_ivset_clear(&sl->cum[c]);
	}
	for (size_t r = 0; r < sl->nruns; r++) {
		const struct adv_run *run = &sl->runs[r];
		for (int c = 0; c < ADV_NCLASSES; c++)
			tft_ivset_clear(&tmp[c]);
		for (size_t i = run->lo; i < run->hi; i++) {
			const struct adv_sl *x = &sl->sl[i];
			int64_t p = x->ts > sl->a ? x->ts : sl->a, q = x->end < sl->b ? x->end : sl->b;
			tft_ivset_add_sorted(&tmp[x->cls], p, q);
		}
		for (int c = 0; c < ADV_NCLASSES; c++) {
			struct tft_ivset t;
			if (!tmp[c].n)
				continue;
			if (tmp[c].oom || tft_ivset_union(spare, &sl->cls[c], &tmp[c]))
				return TFT_ENOMEM;
			t = sl->cls[c];
			sl->cls[c] = *spare;
			*spare = t;
		}
	}
	(void)a;
	for (int c = 0; c < ADV_NCLASSES; c++) {
		if (c == 0) {
			tft_ivset_clear(&sl->cum[0]);
			for (size_t i = 0; i < sl->cls[0].n; i++)
				tft_ivset_add(&sl->cum[0], sl->cls[0].v[i].a, sl->cls[0].v[i].b);
		} else if (tft_ivset_union(&sl->cum[c], &sl->cum[c - 1], &sl->cls[c])) {
			return TFT_ENOMEM;
		}
		if (sl->cum[c].oom || tft_ivset_index(&sl->cum[c]) || tft_ivset_index(&sl->cls[c]))
			return TFT_ENOMEM;
	}
	return 0;
}

/* Each window's breakdown over its part inside the slab. */
static void breakdown(struct adv *a, struct adv_slab *sl)
{
	for (uint32_t i = sl->w0; i < sl->w1; i++) {
		struct adv_win *w = &a->win[i];
		int64_t pa = w->t0 > sl->a ? w->t0 : sl->a, pb = w->t1 < sl->b ? w->t1 : sl->b;
		int64_t prev = 0, m, first;

		if (pb <= pa)
			continue;
		for (int c = 0; c < ADV_NCLASSES; c++) {
			m = tft_ivset_measure_in(&sl->cum[c], pa, pb);
			w->part[c] += m - prev;
			prev = m;
		}
		w->part[TFT_ADVISE_IDLE] += (pb - pa) - prev;
		if (w->seen)
			continue;
		/* the gap before the step's first activity is the wait for its input */
		first = tft_ivset_first_in(&sl->cum[ADV_NCLASSES - 1], pa, pb);
		if (first == INT64_MAX) {
			w->pending += pb - pa;
			continue;
		}
		w->pending += first - pa;
		w->part[TFT_ADVISE_IDLE] -= w->pending;
		w->part[TFT_ADVISE_INPUT] += w->pending;
		w->pending = 0;
		w->seen = true;
		w->first_act = first;
	}
}

/*
 * Per run: each slice's self time (its duration minus its direct children's,
 * each clipped to it), whether a counted slice encloses it (TOP when none),
 * and whether it or a slice inside it starts a launch (LAUNCHED).
 */
static int derive(struct adv *a, struct adv_slab *sl)
{
	size_t stack[256];

	if (sl->n > sl->capself) {
		int64_t *ns = realloc(sl->self, sl->n * sizeof(*ns)), *nl;
		if (!ns)
			return TFT_ENOMEM;
		sl->self = ns;
		nl = realloc(sl->launch, sl->n * sizeof(*nl));
		if (!nl)
			return TFT_ENOMEM;
		sl->launch = nl;
		sl->capself = sl->n;
	}
	slab_launches(a, sl);
	for (size_t r = 0; r < sl->nruns; r++) {
		const struct adv_run *run = &sl->runs[r];
		bool nests = a->tracks[run->track].nests;
		size_t top = 0;

		for (size_t i = run->lo; i < run->hi; i++) {
			struct adv_sl *x = &sl->sl[i];
			sl->self[i] = x->end - x->ts;
			if (!nests) {
				x->flags |= ADV_SL_TOP;
				if (x->flags & ADV_SL_LAUNCH)
					x->flags |= ADV_SL_LAUNCHED;
				continue;
			}
			/* pop what ended before it or is not above it */
			while (top && (sl->sl[stack[top - 1]].depth >= x->depth || sl->sl[stack[top - 1]].end <= x->ts))
				top--;
			if (!top) {
				x->flags |= ADV_SL_TOP;
			} else {
				struct adv_sl *p = &sl->sl[stack[top - 1]];
				if (p->depth + 1 == x->depth)
					sl->self[stack[top - 1]] -= (x->end < p->end ? x->end : p->end) - x->ts;
			}
			if (x->flags & ADV_SL_LAUNCH) {
				x->flags |= ADV_SL_LAUNCHED;
				for (size_t k = 0; k < top; k++)
					sl->sl[stack[k]].flags |= ADV_SL_LAUNCHED;
			}
			if (top < sizeof(stack) / sizeof(stack[0]))
				stack[top++] = i;
		}
	}
	for (size_t i = 0; i < sl->n; i++)
		if (sl->self[i] < 0)
			sl->self[i] = 0;
	return 0;
}

int tft_adv_slab_fill(struct adv *a, struct adv_slab *sl)
{
	const struct adv_scope *sc = &a->scopes[sl->scope];
	int rc;

	sl->n = 0;
	sl->nruns = 0;
	a->cur = sl;
	for (uint32_t k = 0; k < sc->ntracks; k++) {
		uint32_t t = sc->tracks[k];
		const struct tft_track *tt = tft_session_track(a->s, t);
		size_t lo = sl->n;

		if (tt->min_ts_ns > sl->b || tt->max_ts_ns < sl->a || !(tt->slices || tt->counters || tt->instants))
			continue;
		a->cur_track = t;
		a->cur_win = TFT_NONE;
		rc = tft_session_scan(a->s, t, sl->a, sl->b - 1, 0, on_event, a, a->err);
		if (rc == TFT_ENOSPC && sl->max_n)
			return rc;
		if (rc)
			return rc < 0 ? rc : TFT_EIO;
		if (sl->n > lo) {
			if (tft_grow_size_ex((void **)&sl->runs, &sl->capruns, sl->nruns + 1, sizeof(*sl->runs), 64, 0))
				return TFT_ENOMEM;
			sl->runs[sl->nruns].track = t;
			sl->runs[sl->nruns].lo = lo;
			sl->runs[sl->nruns].hi = sl->n;
			sl->nruns++;
		}
	}
	return derive(a, sl);
}

void tft_adv_slab_free(struct adv_slab *sl)
{
	free(sl->sl);
	free(sl->runs);
	free(sl->self);
	free(sl->launch);
	for (int c = 0; c < ADV_NCLASSES; c++) {
		tft_ivset_fini(&sl->cls[c]);
		tft_ivset_fini(&sl->cum[c]);
	}
	memset(sl, 0, sizeof(*sl));
}

static int run_slab(struct adv *a, struct adv_slab *sl, struct tft_ivset *tmp, struct tft_ivset *spare)
{
	int rc;

	if ((rc = tft_adv_slab_fill(a, sl)))
		return rc;
	a->res->slabs++;
	if ((rc = build_unions(a, sl, tmp, spare)))
		return rc;
	breakdown(a, sl);
	for (int c = 0; c < TFT_ADVISE_NCHECKERS; c++)
		if (checkers[c]->slab && (rc = checkers[c]->slab(a, sl)))
			return rc;
	return 0;
}

/* A slab unit: a window, or a piece of one too big for a slab. */
struct unit {
	int64_t t0, t1;
	uint32_t w;
	uint64_t est;
};

static int scan_scope(struct adv *a, uint32_t scope, struct adv_slab *sl, struct tft_ivset *tmp,
		      struct tft_ivset *spare)
{
	const struct adv_scope *sc = &a->scopes[scope];
	struct chunk_pt *pts = NULL;
	uint64_t *pre = NULL;
	struct unit *units = NULL;
	size_t npts = 0, nunits = 0, capunits = 0;
	int rc = 0;

	if (sc->w0 >= sc->w1)
		return 0;
	for (uint32_t k = 0; k < sc->ntracks; k++)
		npts += tft_session_raw_chunk_count(a->s, sc->tracks[k]);
	pts = malloc((npts + 1) * sizeof(*pts));
	pre = malloc((npts + 1) * sizeof(*pre));
	if (!pts || !pre) {
		rc = TFT_ENOMEM;
		goto out;
	}
	npts = 0;
	for (uint32_t k = 0; k < sc->ntracks; k++) {
		uint32_t t = sc->tracks[k], nc = tft_session_raw_chunk_count(a->s, t);
		for (uint32_t i = 0; i < nc; i++) {
			int64_t lo, hi;
			uint32_t n;
			tft_session_raw_chunk(a->s, t, i, &lo, &hi, &n);
			pts[npts].t = lo;
			pts[npts].n = n;
			npts++;
		}
	}
	qsort(pts, npts, sizeof(*pts), cmp_pt);
	pre[0] = 0;
	for (size_t i = 0; i < npts; i++)
		pre[i + 1] = pre[i] + pts[i].n;
	/* units: windows, the big ones cut where the chunks' starts pass the budget */
	for (uint32_t w = sc->w0; w < sc->w1; w++) {
		int64_t t0 = a->win[w].t0, t1 = a->win[w].t1;
		uint64_t est = est_events(pts, pre, npts, t0, t1);
		while (t0 < t1) {
			int64_t cut = t1;
			if (est > ADV_SLAB_SLICES) {
				/* the chunk start where ADV_SLAB_SLICES events have begun */
				size_t lo = 0, hi = npts, i;
				uint64_t acc = 0;
				while (lo < hi) {
					size_t m = lo + (hi - lo) / 2;
					if (pts[m].t <= t0)
						lo = m + 1;
					else
						hi = m;
				}
				for (i = lo; i < npts && pts[i].t < t1; i++) {
					acc += pts[i].n;
					if (acc >= ADV_SLAB_SLICES && pts[i].t > t0) {
						cut = pts[i].t;
						break;
					}
				}
			}
			if (tft_grow_size_ex((void **)&units, &capunits, nunits + 1, sizeof(*units), 64, 0)) {
				rc = TFT_ENOMEM;
				goto out;
			}

			units[nunits].t0 = t0;
			units[nunits].t1 = cut;
			units[nunits].w = w;
			units[nunits].est = est_events(pts, pre, npts, t0, cut);
			nunits++;
			est = est_events(pts, pre, npts, cut, t1);
			t0 = cut;
		}
	}
	/* slabs: consecutive units while they fit */
	for (size_t u = 0; u < nunits && !rc;) {
		size_t v = u + 1;
		uint64_t sum = units[u].est;
		int64_t hi = units[u].t1;
		while (v < nunits && units[v].w != units[v - 1].w && sum + units[v].est <= ADV_SLAB_SLICES) {
			sum += units[v].est;
			hi = units[v].t1 > hi ? units[v].t1 : hi;
			v++;
		}
		/* a window cut in pieces: each piece its own slab */
		sl->scope = scope;
		sl->a = units[u].t0;
		sl->b = hi;
		sl->w0 = units[u].w;
		sl->w1 = units[v - 1].w + 1;
		sl->own_a = sl->a;
		sl->own_b = v < nunits ? units[v].t0 : INT64_MAX;
		if (sl->own_b < sl->own_a)
			sl->own_b = sl->own_a;
		if (sl->b > sl->a)
			rc = run_slab(a, sl, tmp, spare);
		u = v;
	}
out:
	free(pts);
	free(pre);
	free(units);
	return rc;
}

/* ---- the run ------------------------------------------------------------------------------- */

static int cmp_u32(const void *x, const void *y)
{
	uint32_t p = *(const uint32_t *)x, q = *(const uint32_t *)y;

	return (p > q) - (p < q);
}

static void adv_fini(struct adv *a)
{
	for (int c = 0; c < TFT_ADVISE_NCHECKERS; c++)
		if (checkers[c]->fini)
			checkers[c]->fini(a);
	for (uint32_t i = 0; i < a->nscopes; i++)
		free(a->scopes[i].tracks);
	free(a->scopes);
	free(a->tracks);
	free(a->devices);
	free(a->win);
	free(a->nbits);
	free(a->kbits);
	free(a->step_names);
	for (uint32_t t = 0; a->launches && t < a->ntracks; t++)
		free(a->launches[t].v);
	for (uint32_t t = 0; a->srcs && t < a->ntracks; t++)
		free(a->srcs[t].v);
	free(a->launches);
	free(a->srcs);
	tft_advise_destroy(a->res);
}

int tft_advise_run(struct tft_session *s, const struct tft_advise_opts *opts, struct tft_advise_result **out,
		   struct tft_error *err)
{
	struct adv a;
	struct adv_slab sl;
	struct tft_ivset tmp[ADV_NCLASSES], spare;
	uint32_t nsteps;
	int rc = 0;

	*out = NULL;
	memset(&a, 0, sizeof(a));
	memset(&sl, 0, sizeof(sl));
	memset(tmp, 0, sizeof(tmp));
	memset(&spare, 0, sizeof(spare));
	a.s = s;
	a.err = err;
	if (opts)
		a.opts = *opts;
	a.ntracks = tft_session_track_count(s);
	a.nstrings = tft_session_string_count(s);
	a.res = calloc(1, sizeof(*a.res));
	a.nbits = calloc(a.nstrings ? a.nstrings : 1, sizeof(*a.nbits));
	a.kbits = calloc(a.nstrings ? a.nstrings : 1, sizeof(*a.kbits));
	nsteps = tft_session_step_count(s);
	a.step_names = malloc((nsteps ? nsteps : 1) * sizeof(*a.step_names));
	if (!a.res || !a.nbits || !a.kbits || !a.step_names) {
		rc = TFT_ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < nsteps; i++)
		a.step_names[a.nstep_names++] = tft_session_step(s, i)->name;
	qsort(a.step_names, a.nstep_names, sizeof(*a.step_names), cmp_u32);
	if ((rc = setup_tracks(&a)) || (rc = setup_windows(&a)) || (rc = load_launches(&a)))
		goto out;
	for (int c = 0; c < TFT_ADVISE_NCHECKERS; c++)
		if (checkers[c]->init && (rc = checkers[c]->init(&a)))
			goto out;
	for (uint32_t sc = 0; sc < a.nscopes && !rc; sc++)
		rc = scan_scope(&a, sc, &sl, tmp, &spare);
	if (rc)
		goto out;
	/*
	 * Each step's parts: its window's (the slabs cover it exactly, so they sum to its
	 * duration); a step of no duration or a negative one (a damaged trace) is all idle.
	 * (A step with nothing recorded keeps its leading gap as idle: pending.)
	 */
	for (uint32_t i = 0; i < a.res->nsteps; i++)
		a.res->steps[i].part_ns[TFT_ADVISE_IDLE] = a.res->steps[i].dur_ns;
	for (uint32_t i = 0; i < a.nwin; i++) {
		struct adv_win *w = &a.win[i];
		if (w->step != TFT_NONE && a.res->steps[w->step].dur_ns > 0)
			memcpy(a.res->steps[w->step].part_ns, w->part, sizeof(w->part));
	}
	for (int c = 0; c < TFT_ADVISE_NCHECKERS && !rc; c++)
		if (checkers[c]->finish)
			rc = checkers[c]->finish(&a);
	if (!rc && tft_adv_out_failed(&a))
		rc = TFT_ENOMEM;
	if (!rc) {
		tft_adv_out_sort(&a);
		*out = a.res;
		a.res = NULL;
	}
out:
	if (rc == TFT_ENOMEM)
		tft_error_set(err, rc, -1, "out of memory");
	tft_adv_slab_free(&sl);
	for (int c = 0; c < ADV_NCLASSES; c++)
		tft_ivset_fini(&tmp[c]);
	tft_ivset_fini(&spare);
	adv_fini(&a);
	return rc;
}
