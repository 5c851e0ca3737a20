/* SPDX-License-Identifier: MIT */
/*
 * Steps: the events of a device plane's "Steps" line, or else one step per
 * group_id (xprof's step grouping) spanning its events; stored in time order
 * after the XSpace.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/xspace/xs_int.h"

/* group_add() of a group not in the table yet. */
int __attribute__((noinline)) tft_xs_group_new(struct idmap *map, struct xs_group **groups,
						uint32_t *n, uint32_t *cap, const struct xs_group *e)
{
	uint32_t i;

	if (*n >= MAX_GROUPS)
		return 0;
	if (tft_grow((void **)groups, cap, *n + 1, sizeof(**groups)))
		return TFT_ENOMEM;
	i = (*n)++;
	(*groups)[i] = *e;
	return idmap_put(map, e->id, i, i) ? TFT_ENOMEM : 0;
}

/* The line's group notes into the clone's groups (commit) or gone (redo). */
int tft_xs_line_groups_end(struct xs *x, int commit)
{
	int r = 0;

	for (uint32_t i = 0; commit && i < x->nlgroups && !r; i++)
		r = group_add(&x->group_map, &x->groups, &x->ngroups, &x->cgroups, &x->lgroups[i]);
	tft_xs_idmap_forget(&x->lgroup_map, x->nlgroups ? &x->lgroups[0].id : NULL, sizeof(*x->lgroups),
		     x->nlgroups);
	x->nlgroups = 0;
	return r;
}

/* Room for one more step (and its key). */
int tft_xs_steps_reserve(struct xs *x)
{
	if (tft_grow((void **)&x->steps, &x->csteps, x->nsteps + 1, sizeof(*x->steps)) ||
	    tft_grow((void **)&x->step_keys, &x->cstep_keys, x->nsteps + 1, sizeof(*x->step_keys)))
		return TFT_ENOMEM;
	return 0;
}

int tft_xs_add_step_marker(struct xs *x, const struct tft_event *ev)
{
	struct tft_step *st;
	const char *nm;
	size_t nlen = 0;

	if (tft_xs_steps_reserve(x))
		return TFT_ENOMEM;
	x->step_keys[x->nsteps].key = x->ev_key;
	x->step_keys[x->nsteps].by_count = 0;
	st = &x->steps[x->nsteps];
	memset(st, 0, sizeof(*st));
	st->name = x->ev_step_name != TFT_NONE ? x->ev_step_name : ev->name;
	if (x->has_step_num) {
		st->index = (int64_t)x->ev_step_num;
	} else if (x->has_group) {
		st->index = (int64_t)x->ev_group;
	} else {
		char *end;
		long long v;

		nm = tft_writer_str(x->w, ev->name, &nlen);
		v = nm && nlen ? strtoll(nm, &end, 10) : 0;
		st->index = (nm && nlen && *end == '\0') ? v : (int64_t)x->nsteps;
		x->step_keys[x->nsteps].by_count = !(nm && nlen && *end == '\0');
	}
	st->process = x->process;
	st->start_ns = ev->ts_ns;
	st->dur_ns = ev->dur_ns;
	st->traced = true;
	x->nsteps++;
	return 0;
}

struct xs_posstep {
	struct tft_step st;
	uint32_t pos; /* as noted */
};

static int cmp_posstep(const void *a, const void *b)
{
	const struct xs_posstep *x = a, *y = b;

	if (x->st.start_ns != y->st.start_ns)
		return x->st.start_ns < y->st.start_ns ? -1 : 1;
	return x->pos < y->pos ? -1 : (x->pos > y->pos);
}

/* Group steps by start, then group id (the map's order is the lines' order). */
static int cmp_group(const void *a, const void *b)
{
	const struct xs_group *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->id < y->id ? -1 : (x->id > y->id);
}

int tft_xs_emit_steps(struct xs *x)
{
	struct xs_group *sorted;
	int r = 0;

	if (x->nsteps) {
		/* The Steps lines' steps in time order (then as noted): lines and planes come in any order. */
		struct xs_posstep *v = malloc((size_t)x->nsteps * sizeof(*v));

		if (!v)
			return TFT_ENOMEM;
		for (uint32_t i = 0; i < x->nsteps; i++)
			v[i] = (struct xs_posstep){ x->steps[i], i };
		qsort(v, x->nsteps, sizeof(*v), cmp_posstep);
		for (uint32_t i = 0; i < x->nsteps && !r; i++)
			r = tft_writer_add_step(x->w, &v[i].st);
		free(v);
		return r;
	}
	/* No Steps line: one step per group_id (xprof's step grouping), in time order. */
	sorted = x->ngroups ? malloc((size_t)x->ngroups * sizeof(*sorted)) : NULL;
	if (x->ngroups && !sorted)
		return TFT_ENOMEM;
	if (x->ngroups) {
		memcpy(sorted, x->groups, (size_t)x->ngroups * sizeof(*sorted));
		qsort(sorted, x->ngroups, sizeof(*sorted), cmp_group);
	}
	for (uint32_t i = 0; i < x->ngroups; i++) {
		const struct xs_group *g = &sorted[i];
		struct tft_step st;

		memset(&st, 0, sizeof(st));
		st.index = (int64_t)g->id;
		if (g->name != TFT_NONE) {
			st.name = g->name;
		} else {
			int n = snprintf(x->scratch, sizeof(x->scratch), "%lld", (long long)g->id);

			st.name = tft_xs_intern(x, x->scratch, (size_t)n);
		}
		st.process = x->host_process;
		st.start_ns = g->start;
		if (__builtin_sub_overflow(g->end, g->start, &st.dur_ns))
			st.dur_ns = INT64_MAX;
		st.traced = true;
		r = tft_writer_add_step(x->w, &st);
		if (r)
			break;
	}
	free(sorted);
	return r;
}
