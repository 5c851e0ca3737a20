/* SPDX-License-Identifier: MIT */
/*
 * Fuzz helper: an importer run on one thread and on several must agree on
 * each input: both accept it, or both refuse it with the same status,
 * message and byte offset (out of memory may strike either alone). Aborts,
 * printing both, so that libFuzzer keeps the input.
 */
#ifndef TFT_FUZZ_SAME_H
#define TFT_FUZZ_SAME_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"

static inline void fuzz_same_outcome(int r, const struct tft_error *e, int r2,
				     const struct tft_error *e2)
{
	if (r2 == r && (!r || r == TFT_ENOMEM ||
			(e->offset == e2->offset && strcmp(e->msg, e2->msg) == 0)))
		return;
	fprintf(stderr, "serial %d at %lld: %s\nparallel %d at %lld: %s\n", r, (long long)e->offset,
		e->msg, r2, (long long)e2->offset, e2->msg);
	abort();
}

#endif /* TFT_FUZZ_SAME_H */
