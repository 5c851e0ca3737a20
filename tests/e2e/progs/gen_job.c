/* SPDX-License-Identifier: MIT */
/*
 * gen_job DIR [--ranks N] [--steps S] [--fillers F] [--straggler R] [--straggle-ns NS]
 *             [--skew R:NS]... [--no-pingpong] [--no-steps] [--seed N]
 * A generated MPI job (tests/lib/jobgen.h): DIR/rank-<N>.tft written as the capture
 * spec says. Prints one JSON line with the truth (messages, collectives per rank,
 * events). Built by the tests that need it (e2e, browser) against libtftracer.a.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobgen.h"

int main(int argc, char **argv)
{
	struct jobgen_opts o = { .ranks = 4, .steps = 6, .fillers = 10, .straggler = -1, .straggle_ns = 300000,
				 .pingpong = true, .steps_recorded = true, .seed = 1 };
	static int64_t skew[65536];
	struct jobgen_truth t;
	const char *dir = NULL;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--ranks") && v)
			o.ranks = (uint32_t)atoi(v), i++;
		else if (!strcmp(a, "--steps") && v)
			o.steps = (uint32_t)atoi(v), i++;
		else if (!strcmp(a, "--fillers") && v)
			o.fillers = (uint32_t)atoi(v), i++;
		else if (!strcmp(a, "--straggler") && v)
			o.straggler = atoi(v), i++;
		else if (!strcmp(a, "--straggle-ns") && v)
			o.straggle_ns = atoll(v), i++;
		else if (!strcmp(a, "--seed") && v)
			o.seed = (uint32_t)atoi(v), i++;
		else if (!strcmp(a, "--skew") && v && strchr(v, ':')) {
			int r = atoi(v);
			if (r >= 0 && r < 65536)
				skew[r] = atoll(strchr(v, ':') + 1);
			i++;
		} else if (!strcmp(a, "--no-pingpong"))
			o.pingpong = false;
		else if (!strcmp(a, "--no-steps"))
			o.steps_recorded = false;
		else if (a[0] != '-' && !dir)
			dir = a;
		else {
			fprintf(stderr, "gen_job: bad argument '%s'\n", a);
			return 2;
		}
	}
	if (!dir || o.ranks < 1 || o.ranks > 65536) {
		fprintf(stderr, "usage: gen_job DIR [--ranks N] [--steps S] [--fillers F] [--straggler R] ...\n");
		return 2;
	}
	o.skew_ns = skew;
	if (jobgen_write(&o, dir, &t))
		return 1;
	printf("{\"ranks\": %u, \"steps\": %u, \"messages\": %llu, \"collectives\": %llu, \"events\": %llu}\n", o.ranks,
	       o.steps, (unsigned long long)t.messages, (unsigned long long)t.collectives, (unsigned long long)t.events);
	return 0;
}
