/* SPDX-License-Identifier: MIT */
/*
 * A device's node events, held until the device is complete: when every
 * device of the input appears once (rm->direct), they are sorted in place
 * if needed and appended straight to the writer (or a worker's lane); a
 * device larger than the budget, or any device otherwise, goes through the
 * sorter.
 */
#include <stdlib.h>
#include <string.h>

#include "collect/runmeta/rm_int.h"
#include "core/grow.h"

/* Hand the buffered events of the current device to the sorter (it is too large). */
static int spill_pending(struct rm *rm)
{
	for (uint32_t i = 0; i < rm->npend; i++) {
		struct tft_event ev = rm->pend[i].ev;
		int r;

		ev.args = rm->pargs + rm->pend[i].args_off;
		r = tft_sorter_push(rm->sorter, &ev, rm->err);
		if (r)
			return r;
	}
	rm->npend = rm->npargs = 0;
	rm->spilled = 1;
	return 0;
}

int tft_rm_queue_event(struct rm *rm, const struct tft_event *ev)
{
	struct rm_pend *pe;
	size_t bytes;

	if (!rm->direct || rm->spilled)
		return tft_sorter_push(rm->sorter, ev, rm->err);
	bytes = (size_t)rm->npend * sizeof(*rm->pend) + (size_t)rm->npargs * sizeof(*rm->pargs);
	if (bytes > rm->pend_budget || rm->npargs > UINT32_MAX - ev->nargs - 1) {
		int r;

		if (rm->lane) {
			/* A worker has no sorter: the device is redone serially after the join. */
			rm->deferred = 1;
			return TFT_ENOMEM;
		}
		r = spill_pending(rm);

		return r ? r : tft_sorter_push(rm->sorter, ev, rm->err);
	}
	if (tft_grow((void **)&rm->pend, &rm->cpend, rm->npend + 1, sizeof(*rm->pend)) ||
	    tft_grow((void **)&rm->pargs, &rm->cpargs, rm->npargs + ev->nargs, sizeof(*rm->pargs)))
		return TFT_ENOMEM;
	pe = &rm->pend[rm->npend];
	pe->ev = *ev;
	pe->ev.args = NULL;
	pe->args_off = rm->npargs;
	pe->seq = rm->npend++;
	if (ev->nargs && ev->args != rm->pargs + rm->npargs)
		memcpy(rm->pargs + rm->npargs, ev->args, ev->nargs * sizeof(*ev->args));
	rm->npargs += ev->nargs;
	return 0;
}

/* The writer's order per track: ts ascending, longer first, then arrival. */
int tft_rm_cmp_pend(const void *a, const void *b)
{
	const struct rm_pend *x = a, *y = b;

	if (x->ev.track != y->ev.track)
		return x->ev.track < y->ev.track ? -1 : 1;
	if (x->ev.ts_ns != y->ev.ts_ns)
		return x->ev.ts_ns < y->ev.ts_ns ? -1 : 1;
	if (x->ev.dur_ns != y->ev.dur_ns)
		return x->ev.dur_ns > y->ev.dur_ns ? -1 : 1;
	return x->seq < y->seq ? -1 : (x->seq > y->seq);
}

/* The current device is complete: append its events in order (sorting only if needed). */
int tft_rm_flush_device(struct rm *rm)
{
	int sorted = 1;

	if (rm->spilled || !rm->npend) {
		rm->spilled = 0;
		rm->npend = rm->npargs = 0;
		return 0;
	}
	for (uint32_t i = 1; i < rm->npend && sorted; i++)
		sorted = tft_rm_cmp_pend(&rm->pend[i - 1], &rm->pend[i]) < 0;
	if (!sorted)
		qsort(rm->pend, rm->npend, sizeof(*rm->pend), tft_rm_cmp_pend);
	for (uint32_t i = 0; i < rm->npend; i++) {
		struct tft_event ev = rm->pend[i].ev;
		int r;

		ev.args = rm->pargs + rm->pend[i].args_off;
		r = rm->lane ? tft_writer_lane_append(rm->lane, &ev) : tft_writer_append(rm->w, &ev);
		if (r)
			return r;
	}
	rm->npend = rm->npargs = 0;
	return 0;
}
