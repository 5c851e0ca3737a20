/* SPDX-License-Identifier: MIT */
/*
 * Parallel lines: the threads' notes (correlation ends, groups, steps)
 * merged after each group of planes in file order, so that the result is
 * the serial import's; correlation ends on two workers, one per id parity.
 */
#include <stdlib.h>
#include <string.h>

#include "collect/xspace/xs_int.h"

/* The clone whose next group (at pos[clone]) comes first in the file; -1: none left. */
static int next_group(const struct xs *x, uint32_t n, const uint32_t *pos)
{
	uint64_t bk = 0;
	int best = -1;

	for (uint32_t i = 0; i < n; i++) {
		const struct xs *y = &x->clones[i].x;

		if (pos[i] < y->ngroups && (best < 0 || y->groups[pos[i]].first_key < bk)) {
			best = (int)i;
			bk = y->groups[pos[i]].first_key;
		}
	}
	return best;
}

/* A half's merge of the group's correlation notes (merge_half()). */
struct xs_mhalf {
	struct xs *x;
	uint32_t njobs;
	int p;
	int rc;
};

/*
 * Merge the group's correlation notes of ids of parity p into half p, in
 * file order, as note_corr() does serially: an id's entry is made by its
 * first end, and each end set by its first note. Both halves read every
 * note; each writes only its own table and bit maps.
 */
static void merge_half(void *ctx, unsigned worker)
{
	struct xs_mhalf *m = (struct xs_mhalf *)ctx + worker;
	struct xs *x = m->x;
	struct xs_halves *h = &x->halves;
	struct xs_ctab *t = &h->half[m->p];
	uint64_t *made = h->made[m->p], *more = h->more[m->p], bit = h->nbits;
	uint64_t p = (uint64_t)m->p;

	for (uint32_t k = 0; k < m->njobs; k++) {
		const struct xs_job *j = &x->jobs[k];
		const struct xs_cnote *e, *end;
		int dst = x->snaps[j->plane].device_plane; /* a device plane's ends are destinations */

		if (!j->nonempty || j->cn_lo == j->cn_hi)
			continue;
		e = &x->clones[j->clone].x.cnotes[j->cn_lo];
		end = &x->clones[j->clone].x.cnotes[j->cn_hi];
		for (; e < end; e++, bit++) {
			uint32_t n0, m0, ix;

			if ((e->id & 1) != p)
				continue;
			n0 = t->n;
			m0 = t->nmore;
			ix = tft_xs_corr_entry(t, e->id, e->id >> 1);
			if (ix == TFT_NONE || corr_end(t, ix, dst, j->track, e->ts)) {
				m->rc = TFT_ENOMEM;
				return;
			}
			made[bit >> 6] |= (uint64_t)(t->n != n0) << (bit & 63);
			more[bit >> 6] |= (uint64_t)(t->nmore != m0) << (bit & 63);
		}
	}
	m->rc = 0;
}

/* Room in the halves' bit maps for `notes` more notes, cleared. */
static int halves_reserve(struct xs_halves *h, uint64_t notes)
{
	uint64_t need = (h->nbits + notes + 63) >> 6;

	if (need > UINT32_MAX)
		return TFT_ENOMEM;
	if (need <= h->cwords)
		return 0;
	need = need > 2 * (uint64_t)h->cwords ? need : 2 * (uint64_t)h->cwords;
	if (need > UINT32_MAX)
		return TFT_ENOMEM;
	for (int p = 0; p < 2; p++) {
		uint64_t *a = realloc(h->made[p], need * sizeof(uint64_t));

		if (!a)
			return TFT_ENOMEM;
		h->made[p] = a;
		if (!(a = realloc(h->more[p], need * sizeof(uint64_t))))
			return TFT_ENOMEM;
		h->more[p] = a;
	}
	h->cwords = (uint32_t)need;
	return 0;
}

/*
 * The clones' notes into x's, in key order: what the serial import notes.
 * A job's notes lie together in its clone's lists and the jobs are in file
 * order, so correlation ends and steps are taken job by job (correlation
 * ends by two threads, see struct xs_halves); groups, which each clone
 * keeps once per id, are merged by their first key.
 */
int tft_xs_merge_notes(struct xs *x, uint32_t n, uint32_t njobs)
{
	struct xs_halves *h = &x->halves;
	struct xs_mhalf mh[2];
	uint32_t pos[PAR_MAX_THREADS];
	uint64_t notes = 0, w0, nw;
	int b;

	/* Correlation ids: half p on worker p (this thread is worker 0). */
	for (uint32_t k = 0; k < njobs; k++)
		if (x->jobs[k].nonempty)
			notes += x->jobs[k].cn_hi - x->jobs[k].cn_lo;
	if (notes) {
		if (halves_reserve(h, notes))
			return TFT_ENOMEM;
		/* New words cleared; a word in use is clear past nbits already. */
		w0 = (h->nbits + 63) >> 6;
		nw = ((h->nbits + notes + 63) >> 6) - w0;
		for (int p = 0; p < 2; p++) {
			memset(h->made[p] + w0, 0, (size_t)nw * sizeof(uint64_t));
			memset(h->more[p] + w0, 0, (size_t)nw * sizeof(uint64_t));
			mh[p] = (struct xs_mhalf){ .x = x, .njobs = njobs, .p = p };
		}
		tft_workers_run(2, merge_half, mh);
		if (mh[0].rc || mh[1].rc)
			return TFT_ENOMEM;
		h->nbits += notes;
	}
	/* Groups: first appearance order (up to MAX_GROUPS), span, last step name. */
	memset(pos, 0, sizeof(pos));
	while ((b = next_group(x, n, pos)) >= 0) {
		const struct xs_group *e = &x->clones[b].x.groups[pos[b]++];
		uint32_t ix = idmap_get(&x->group_map, e->id);
		struct xs_group *m;

		if (ix == TFT_NONE) {
			if (x->ngroups >= MAX_GROUPS)
				continue;
			if (tft_grow((void **)&x->groups, &x->cgroups, x->ngroups + 1, sizeof(*x->groups)))
				return TFT_ENOMEM;
			x->groups[x->ngroups] = *e;
			if (idmap_put(&x->group_map, e->id, x->ngroups, x->ngroups))
				return TFT_ENOMEM;
			x->ngroups++;
			continue;
		}
		m = &x->groups[ix];
		if (e->start < m->start)
			m->start = e->start;
		if (e->end > m->end)
			m->end = e->end;
		if (e->name != TFT_NONE && (m->name == TFT_NONE || e->name_key > m->name_key)) {
			m->name = e->name;
			m->name_key = e->name_key;
		}
	}
	/* Steps of Steps lines: in file order; an index by position is recounted. */
	for (uint32_t k = 0; k < njobs; k++) {
		const struct xs_job *j = &x->jobs[k];
		const struct xs *y = &x->clones[j->clone].x;

		if (!j->nonempty)
			continue;
		for (uint32_t i = j->st_lo; i < j->st_hi; i++) {
			if (tft_xs_steps_reserve(x))
				return TFT_ENOMEM;
			x->steps[x->nsteps] = y->steps[i];
			x->step_keys[x->nsteps] = y->step_keys[i];
			if (x->step_keys[x->nsteps].by_count)
				x->steps[x->nsteps].index = (int64_t)x->nsteps;
			x->nsteps++;
		}
	}
	for (uint32_t i = 0; i < n; i++) {
		struct xs *y = &x->clones[i].x;

		tft_xs_idmap_forget(&y->group_map, y->ngroups ? &y->groups[0].id : NULL, sizeof(*y->groups),
			     y->ngroups);
		y->ncnotes = y->ngroups = y->nsteps = 0;
		x->events += y->events;
	}
	return 0;
}
