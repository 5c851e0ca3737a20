/* SPDX-License-Identifier: MIT */
/*
 * core/lanes: timeline.py's first-fit lanes, against timeline.py's own loop
 * (a list of lane ends scanned from the start) on random slices, with enough
 * overlap to widen the tree past its first 64 lanes, and across a reset.
 */
#include <stdint.h>
#include <stdlib.h>

#include "core/lanes.h"
#include "tap.h"

#define N 20000

/* timeline.py's _assign_lanes for one slice: lanes is the list of lane ends. */
static uint32_t naive_assign(int64_t *lanes, uint32_t *n, int64_t start, int64_t end)
{
	for (uint32_t l = 0; l < *n; l++)
		if (lanes[l] < start) {
			lanes[l] = end;
			return l;
		}
	lanes[*n] = end;
	return (*n)++;
}

static int run(struct tft_lanes *l, unsigned seed, int64_t spread, uint32_t *maxlane)
{
	static int64_t naive[N + 1];
	uint32_t nn = 1, lane, bad = 0;
	int64_t t = 0;

	srand(seed);
	naive[0] = 0; /* lanes = [0] */
	if (tft_lanes_reset(l))
		return -1;
	*maxlane = 0;
	for (int i = 0; i < N; i++) {
		int64_t start = t, end = start + rand() % spread;
		uint32_t want = naive_assign(naive, &nn, start, end);
		if (tft_lanes_assign(l, start, end, &lane))
			return -1;
		bad += lane != want;
		if (lane > *maxlane)
			*maxlane = lane;
		t += rand() % 4; /* starts in order, many slices open at once */
	}
	return (int)bad;
}

int main(void)
{
	struct tft_lanes l = { 0 };
	uint32_t maxlane;

	is_int(run(&l, 1, 2000, &maxlane), 0, "random slices: every lane as timeline.py's loop gives it");
	ok(maxlane >= 200, "the tree widened past its first 64 lanes (%u lanes)", maxlane + 1);
	is_int(run(&l, 2, 50, &maxlane), 0, "after a reset: the same again, fewer lanes");
	ok(maxlane < 200, "a reset forgets the earlier lanes (%u lanes)", maxlane + 1);
	{
		uint32_t a, b, c;
		tft_lanes_reset(&l);
		ok(tft_lanes_assign(&l, 0, 10, &a) == 0 && a == 1,
		   "a slice starting at 0 does not fit lanes = [0] (end 0 is not < 0): lane 1");
		ok(tft_lanes_assign(&l, 5, 6, &b) == 0 && b == 0, "the next fits lane 0 (0 < 5)");
		ok(tft_lanes_assign(&l, 6, 11, &c) == 0 && c == 2,
		   "a start equal to the lanes' ends fits none: a new lane");
	}
	tft_lanes_free(&l);
	ok(l.t == NULL && l.cap == 0, "free leaves an empty struct");
	return done_testing();
}
