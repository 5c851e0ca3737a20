/* SPDX-License-Identifier: MIT */
/*
 * A line's events held back until the line ends (its events out of the
 * writer's order): sorted in place and written, or through the sorter
 * (shared by the threads) when the line is too large to hold.
 */
#include <stdlib.h>
#include <string.h>

#include "collect/xspace/xs_int.h"

/* The sorter is shared by the clones. */
static int sorter_push(struct xs *x, const struct tft_event *ev)
{
	pthread_mutex_t *mu = x->parent ? &x->parent->sorter_mu : NULL;
	int r;

	if (mu)
		pthread_mutex_lock(mu);
	r = tft_sorter_push(x->sorter, ev, x->err);
	if (mu)
		pthread_mutex_unlock(mu);
	return r;
}

/* The writer's order within a track: ts ascending, longer first, then arrival. */
static int cmp_pend(const void *a, const void *b)
{
	const struct xs_pend *p = a, *q = b;

	if (p->ev.ts_ns != q->ev.ts_ns)
		return p->ev.ts_ns < q->ev.ts_ns ? -1 : 1;
	if (p->ev.dur_ns != q->ev.dur_ns)
		return p->ev.dur_ns > q->ev.dur_ns ? -1 : 1;
	return p->seq < q->seq ? -1 : (p->seq > q->seq);
}

/* A held-back event's args (NULL when the line has none: no pointer arithmetic on NULL). */
static inline const struct tft_arg *pend_args(const struct xs *x, const struct xs_pend *pe)
{
	return x->pargs ? x->pargs + pe->args_off : NULL;
}

/* The line is too large to hold: its events so far, and the rest, go through the sorter. */
static int spill_line(struct xs *x)
{
	for (uint32_t i = 0; i < x->npend; i++) {
		struct tft_event ev = x->pend[i].ev;
		int r;

		ev.args = pend_args(x, &x->pend[i]);
		r = sorter_push(x, &ev);
		if (r)
			return r;
	}
	x->npend = x->npargs = 0;
	x->spilled = 1;
	return 0;
}

int tft_xs_queue_event(struct xs *x, const struct tft_event *ev)
{
	struct xs_pend *pe;

	if (x->spilled)
		return sorter_push(x, ev);
	if ((size_t)x->npend * sizeof(*x->pend) + (size_t)x->npargs * sizeof(*x->pargs) >
		    x->pend_budget ||
	    x->npargs > UINT32_MAX - MAX_ARGS - 1 || x->npend == UINT32_MAX - 1) {
		int r = spill_line(x);

		return r ? r : sorter_push(x, ev);
	}
	if (tft_grow((void **)&x->pend, &x->cpend, x->npend + 1, sizeof(*x->pend)) ||
	    tft_grow((void **)&x->pargs, &x->cpargs, x->npargs + ev->nargs, sizeof(*x->pargs)))
		return TFT_ENOMEM;
	pe = &x->pend[x->npend];
	pe->ev = *ev;
	pe->ev.args = NULL;
	pe->args_off = x->npargs;
	pe->seq = x->npend;
	if (x->npend && !x->unsorted && cmp_pend(pe - 1, pe) > 0)
		x->unsorted = 1;
	x->npend++;
	if (ev->nargs)
		memcpy(x->pargs + x->npargs, ev->args, ev->nargs * sizeof(*ev->args));
	x->npargs += ev->nargs;
	return 0;
}

/* The line is complete: append its events to the writer in order. */
int tft_xs_flush_line(struct xs *x)
{
	int r = 0;

	if (!x->spilled && x->npend) {
		if (x->unsorted)
			qsort(x->pend, x->npend, sizeof(*x->pend), cmp_pend);
		for (uint32_t i = 0; i < x->npend && !r; i++) {
			struct tft_event ev = x->pend[i].ev;

			ev.args = pend_args(x, &x->pend[i]);
			r = xs_append(x, &ev);
		}
	}
	x->npend = x->npargs = 0;
	x->spilled = x->unsorted = 0;
	return r;
}
