/* SPDX-License-Identifier: MIT */
/*
 * The layout of the tf.timeline export (tl_int.h): the session's traced
 * steps become StepStats (groups), its tracks devices, each device its pair
 * of pids ("<device> Compute", "<device> Tensors") in timeline.py's order; a
 * track several steps share is split by the events' step_position.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "core/strtab.h"
#include "export/tftimeline/tl_int.h"

/* ---- grouping: traced steps -> StepStats, tracks -> devices ---------------------------- */

static uint32_t step_of_track(struct tl *t, const struct tft_track *tr, uint32_t *cursor)
{
	uint32_t n = tft_session_step_count(t->s);

	/* Steps and tracks are both stored in import order: prefer the next step on. */
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t i = pass ? 0 : *cursor; i < n; i++) {
			const struct tft_step *st = tft_session_step(t->s, i);
			int64_t end;

			if (!st || !st->traced)
				continue;
			if (__builtin_add_overflow(st->start_ns, st->dur_ns, &end))
				end = INT64_MAX;
			if (st->start_ns <= tr->min_ts_ns && tr->max_ts_ns <= end) {
				*cursor = i;
				return i;
			}
		}
	}
	return TFT_NONE;
}

struct dev_key {
	struct tl *t;
	uint32_t group, process;
	const char *name;
	size_t len;
};

static bool dev_eq(const void *ctx, const void *key, uint32_t idx)
{
	const struct dev_key *k = key;
	const struct tl_dev *d = &k->t->devs[idx];

	(void)ctx;
	return d->group == k->group && d->process == k->process && d->name_len == k->len &&
	       memcmp(d->name, k->name, k->len) == 0;
}

static int cmp_tracks(const void *a, const void *b)
{
	const struct tl_track *x = a, *y = b;

	if (x->group != y->group)
		return x->group < y->group ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static uint32_t dev_hash(const struct dev_key *k)
{
	return (uint32_t)(tft_hash_bytes(k->name, k->len) ^ tft_hash_u64(k->process));
}

/* A device of k->group, last in t->devs (its pids: new_pids(), or an entry's). */
static int new_dev(struct tl *t, const struct dev_key *k)
{
	struct tl_dev *dv;

	if (tft_grow_size((void **)&t->devs, &t->cdevs, t->ndevs + 1, sizeof(*t->devs)))
		return TFT_ENOMEM;
	dv = &t->devs[t->ndevs];
	memset(dv, 0, sizeof(*dv));
	dv->group = k->group;
	dv->process = k->process;
	dv->name = k->name;
	dv->name_len = k->len;
	dv->gputrace = contains(dv->name, dv->name_len, "/stream:") ||
		       contains(dv->name, dv->name_len, "/memcpy");
	dv->primary = (uint32_t)t->ndevs;
	t->groups[k->group].ndevs++;
	t->ndevs++;
	return 0;
}

/* The next pair of pids, named after dv, which takes it. */
static int new_pids(struct tl *t, struct tl_dev *dv)
{
	struct tl_pids *pp;

	if (tft_grow_size((void **)&t->pids, &t->cpids, t->npids + 1, sizeof(*t->pids)))
		return TFT_ENOMEM;
	pp = &t->pids[t->npids++];
	pp->name = dv->name;
	pp->name_len = dv->name_len;
	pp->compute_pid = dv->compute_pid = t->next_pid++;
	pp->tensors_pid = dv->tensors_pid = t->next_pid++;
	return 0;
}

/*
 * The dev_stats entries of group g's StepStats, when the importer stored
 * them (meta "tf.dev_stats.<step>": a device repeated, or one without
 * nodes): timeline.py's _allocate_pids gives every entry a pair of pids in
 * entry order, and a device's events go to its last entry's pair; its
 * _assign_lanes and _show_compute take entry by entry. So each entry is a
 * device here, in entry order, a repeated one with the first's name in m
 * (its nodes carry their entry: on_event()). Not stored, or not valid
 * (a damaged file): the tracks' devices, one pair each.
 */
int tft_tl_entry_devs(struct tl *t, uint32_t g, struct tft_hmap *m)
{
	struct tl_group *gr = &t->groups[g];
	const struct tft_step *st = gr->step != TFT_NONE ? tft_session_step(t->s, gr->step) : NULL;
	uint32_t nstr = tft_session_string_count(t->s), n = 0;
	char key[64];
	const char *v, *p;

	if (!st)
		return 0;
	snprintf(key, sizeof(key), "tf.dev_stats.%u", gr->step);
	v = tft_session_meta(t->s, key);
	if (!v)
		return 0;
	for (p = v; *p;) { /* check: ids separated by single spaces */
		char *e;
		unsigned long id;

		if (*p < '0' || *p > '9')
			return 0;
		errno = 0;
		id = strtoul(p, &e, 10);
		if (errno || id >= nstr || (*e && *e != ' ') || (*e == ' ' && !e[1]))
			return 0;
		p = *e ? e + 1 : e;
		n++;
	}
	if (!n || tft_grow_size((void **)&t->ents, &t->cents, t->nents + n, sizeof(*t->ents)))
		return n ? TFT_ENOMEM : 0;
	gr->first_ent = (uint32_t)t->nents;
	gr->nents = n;
	for (p = v; *p;) {
		char *e;
		uint32_t id = (uint32_t)strtoul(p, &e, 10), d;
		struct dev_key k = { t, g, TFT_NONE, NULL, 0 };
		uint32_t h;

		p = *e ? e + 1 : e;
		k.name = sstr(t, id, &k.len);
		h = dev_hash(&k);
		d = tft_hmap_get(m, &k, h);
		if (new_dev(t, &k) || (d == NOSTR && tft_hmap_put(m, &k, h, (uint32_t)t->ndevs - 1)))
			return TFT_ENOMEM;
		if (d != NOSTR)
			t->devs[t->ndevs - 1].primary = d;
		t->ents[t->nents++] = (uint32_t)t->ndevs - 1;
	}
	/* pids: a pair per entry; every entry of a device gets its last pair */
	for (uint32_t i = 0; i < n; i++) {
		struct tl_dev *dv = &t->devs[t->ents[gr->first_ent + i]];

		if (new_pids(t, dv))
			return TFT_ENOMEM;
		t->devs[dv->primary].compute_pid = dv->compute_pid;
		t->devs[dv->primary].tensors_pid = dv->tensors_pid;
	}
	for (uint32_t i = 0; i < n; i++) {
		struct tl_dev *dv = &t->devs[t->ents[gr->first_ent + i]];

		dv->compute_pid = t->devs[dv->primary].compute_pid;
		dv->tensors_pid = t->devs[dv->primary].tensors_pid;
	}
	return 0;
}

/* One track (or a part of it, see struct tl_track) into the group of step `step`. */
static int add_entry(struct tl *t, uint32_t id, const struct tft_track *tr, uint32_t step,
		     const struct tl_track *part)
{
	struct tl_track *tt;
	uint32_t g;
	const char *name;
	size_t len = 0;

	g = t->ngroups && t->groups[t->ngroups - 1].step == step ? (uint32_t)t->ngroups - 1 : 0;
	for (; g < t->ngroups && t->groups[g].step != step; g++)
		;
	if (g == t->ngroups) {
		if (tft_grow_size((void **)&t->groups, &t->cgroups, t->ngroups + 1, sizeof(*t->groups)))
			return nomem(t);
		memset(&t->groups[g], 0, sizeof(t->groups[g]));
		t->groups[g].step = step;
		t->ngroups++;
	}
	if (tft_grow_size((void **)&t->tracks, &t->ctracks, t->ntracks + 1, sizeof(*t->tracks)))
		return nomem(t);
	tt = &t->tracks[t->ntracks++];
	if (part)
		*tt = *part;
	else
		memset(tt, 0, sizeof(*tt));
	tt->id = id;
	tt->group = g;
	name = sstr(t, tr->name, &len);
	/* The RunMetadata importer keeps comm ops of a device on "<device> (comm)". */
	if (tr->kind == TFT_TRACK_COMM && len > 7 && memcmp(name + len - 7, " (comm)", 7) == 0)
		len -= 7;
	if (!len) {
		/* An unnamed track (a tf.timeline JSON import): its process, "<device> Compute". */
		const struct tft_process *pr = tft_session_process(t->s, tr->process);

		name = pr ? sstr(t, pr->name, &len) : "";
		if (len > 8 && memcmp(name + len - 8, " Compute", 8) == 0)
			len -= 8;
	}
	tt->dev_name = name;
	tt->dev_len = len;
	return 0;
}

static int cmp_group_step(const void *a, const void *b)
{
	const uint32_t *x = a, *y = b; /* {step, index} */

	if (x[0] != y[0])
		return x[0] < y[0] ? -1 : 1;
	return x[1] < y[1] ? -1 : (x[1] > y[1]);
}

/* Sort the groups by step (TFT_NONE last), keeping the tracks' group indexes right. */
static int order_groups(struct tl *t)
{
	size_t n = t->ngroups;
	uint32_t (*k)[2];
	uint32_t *to;
	struct tl_group *g;

	if (n < 2)
		return 0; /* one group, or none (a session without slices) */
	k = malloc(n * sizeof(*k));
	to = malloc(n * sizeof(*to));
	g = malloc(n * sizeof(*g));
	if (!k || !to || !g) {
		free(k);
		free(to);
		free(g);
		return nomem(t);
	}
	for (size_t i = 0; i < n; i++) {
		k[i][0] = t->groups[i].step;
		k[i][1] = (uint32_t)i;
	}
	qsort(k, n, sizeof(*k), cmp_group_step);
	for (size_t i = 0; i < n; i++) {
		to[k[i][1]] = (uint32_t)i;
		g[i] = t->groups[k[i][1]];
	}
	memcpy(t->groups, g, n * sizeof(*g));
	for (size_t i = 0; i < t->ntracks; i++)
		t->tracks[i].group = to[t->tracks[i].group];
	free(k);
	free(to);
	free(g);
	return 0;
}

/* The event's step_position arg (the RunMetadata importer's), or -1. */
int64_t tft_tl_event_step_pos(struct tl *t, const struct tft_event *ev)
{
	for (uint16_t i = 0; i < ev->nargs; i++)
		if (ev->args[i].type == TFT_ARG_INT && ev->args[i].v.i >= 0 &&
		    tft_tl_key_class(t, ev->args[i].key) == K_STEPPOS)
			return ev->args[i].v.i;
	return -1;
}

static int on_pos(void *ctx, const struct tft_event *ev)
{
	struct tl *t = ctx;
	int64_t p;

	if (ev->kind != TFT_EV_SLICE || (ev->flags & TFT_EVF_SUMMARY))
		return 0;
	p = tft_tl_event_step_pos(t, ev);
	if (p < 0 || p >= tft_session_step_count(t->s)) {
		t->pos_missing = true;
		return 1; /* the track goes by time */
	}
	for (size_t i = t->npos_seen; i-- > 0;) /* usually the last one */
		if (t->pos_seen[i] == (uint32_t)p)
			return 0;
	if (tft_grow_size((void **)&t->pos_seen, &t->cpos_seen, t->npos_seen + 1, sizeof(*t->pos_seen)))
		return nomem(t);
	t->pos_seen[t->npos_seen++] = (uint32_t)p;
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * A track whose every event names its step (step_position: a RunMetadata
 * importer's, also where a worker's steps share the track): an entry per
 * step, each taking that step's events. *done = false when some event has
 * no step position (an older session, another source): the track then goes
 * by time.
 */
static int split_by_pos(struct tl *t, uint32_t id, const struct tft_track *tr, bool *done)
{
	struct tl_track part;
	int r;

	*done = false;
	t->npos_seen = 0;
	t->pos_missing = false;
	r = tft_session_scan(t->s, id, INT64_MIN, INT64_MAX, 0, on_pos, t, t->err);
	if (r < 0)
		return r;
	if (r > 0 && !t->pos_missing)
		return r; /* nomem() from on_pos */
	if (t->pos_missing || !t->npos_seen)
		return 0;
	qsort(t->pos_seen, t->npos_seen, sizeof(*t->pos_seen), cmp_u32);
	for (size_t i = 0; i < t->npos_seen; i++) {
		memset(&part, 0, sizeof(part));
		part.by_pos = true;
		part.pos = t->pos_seen[i];
		if ((r = add_entry(t, id, tr, t->pos_seen[i], &part)))
			return r;
	}
	*done = true;
	return 0;
}

int tft_tl_build_layout(struct tl *t)
{
	uint32_t nt = tft_session_track_count(t->s), cursor = 0;
	/* Steps split a session into StepStats only when it came from StepStats. */
	bool by_step = tft_tftimeline_is_stepstats(t->s);
	struct tft_hmap m; /* a group's devices: dev_key -> index in devs */
	int r = 0;

	tft_hmap_init_ext(&m, dev_eq, NULL);

	/* Pass 1: the tracks with slices and their StepStats. */
	for (uint32_t id = 0; id < nt; id++) {
		const struct tft_track *tr = tft_session_track(t->s, id);
		uint32_t step;

		if (!tr || !tr->slices)
			continue;
		if (by_step) {
			bool done;

			if ((r = split_by_pos(t, id, tr, &done)))
				return r;
			if (done)
				continue;
		}
		/* else the step whose time span holds the track (none: the step-less StepStats) */
		step = by_step ? step_of_track(t, tr, &cursor) : TFT_NONE;
		if ((r = add_entry(t, id, tr, step, NULL)))
			return r;
	}
	/* StepStats in step order (tracks several steps share list them out of it); the step-less last. */
	if ((r = order_groups(t)))
		return r;
	/* Pass 2: devices, group by group, in track order (tracks sorted by group, then id). */
	if (t->ntracks)
		qsort(t->tracks, t->ntracks, sizeof(*t->tracks), cmp_tracks);
	for (size_t i = 0; i < t->ntracks; i++) {
		struct tl_track *tt = &t->tracks[i];
		uint32_t g = tt->group;
		const struct tft_track *tr = tft_session_track(t->s, tt->id);
		struct dev_key k = { t, g, tr->process, tt->dev_name, tt->dev_len };
		uint32_t d;

		if (i == 0 || t->tracks[i - 1].group != g) {
			t->groups[g].first_dev = (uint32_t)t->ndevs;
			t->groups[g].first_track = (uint32_t)i;
			tft_hmap_clear(&m);
			if ((r = tft_tl_entry_devs(t, g, &m)))
				goto out;
		}
		t->groups[g].ntracks++;
		if (t->groups[g].nents)
			k.process = TFT_NONE; /* devices named by the entries: by name */
		d = tft_hmap_get(&m, &k, dev_hash(&k));
		if (d == NOSTR) {
			d = (uint32_t)t->ndevs;
			if (new_dev(t, &k) || tft_hmap_put(&m, &k, dev_hash(&k), d) || new_pids(t, &t->devs[d])) {
				r = nomem(t);
				goto out;
			}
		}
		tt->dev = d;
	}
out:
	tft_hmap_fini(&m);
	return r;
}
