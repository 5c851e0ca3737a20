/* SPDX-License-Identifier: MIT */
/*
 * Minimal TAP producer for unit tests: plan-less, each test binary ends with
 * done_testing(), which prints "1..N" and returns the exit code.
 *   ok(cond, fmt, ...)         one test point
 *   is_int(got, want, msg)     prints both values on failure
 *   is_str(got, want, msg)
 *   tap_skip(fmt, ...)         one test point not run: "ok N # SKIP reason",
 *                              which tests/run.sh reports and counts as a skip
 * A skip is only for a reason outside the tree and the shared data (the CPU
 * has no AVX2). A missing input file or a missing independent reference (a
 * count from tests/corpus/pbdecode.py) is a failure: ok(0, ...) naming it. A
 * skip written as ok(1, "# SKIP ...") would count as a pass: ok() fails it.
 */
#ifndef TFT_TESTS_TAP_H
#define TFT_TESTS_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int tap_n, tap_failed, tap_skipped;

__attribute__((format(printf, 2, 3), unused)) static int ok(int cond, const char *fmt, ...)
{
	va_list ap;
	int fake_skip = strncmp(fmt, "# SKIP", 6) == 0; /* a skip passed off as a pass */

	if (fake_skip)
		cond = 0;
	tap_n++;
	printf("%sok %d - ", cond ? "" : "not ", tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (fake_skip)
		printf("#   ok(1, \"# SKIP ...\") counts as a pass: use tap_skip(), or fail\n");
	if (!cond)
		tap_failed++;
	fflush(stdout);
	return cond;
}

#define is_int(got, want, msg)                                                          \
	do {                                                                            \
		long long g_ = (long long)(got), w_ = (long long)(want);                 \
		if (!ok(g_ == w_, "%s", msg))                                          \
			printf("#   got %lld, want %lld (%s:%d)\n", g_, w_, __FILE__, __LINE__); \
	} while (0)

#define is_str(got, want, msg)                                                          \
	do {                                                                            \
		const char *g_ = (got), *w_ = (want);                                   \
		if (!ok(g_ && w_ && strcmp(g_, w_) == 0, "%s", msg))                    \
			printf("#   got \"%s\", want \"%s\" (%s:%d)\n", g_ ? g_ : "(null)", \
			       w_ ? w_ : "(null)", __FILE__, __LINE__);                  \
	} while (0)

__attribute__((format(printf, 1, 2), unused)) static void tap_skip(const char *fmt, ...)
{
	va_list ap;

	tap_n++;
	tap_skipped++;
	printf("ok %d # SKIP ", tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

__attribute__((unused)) static int done_testing(void)
{
	printf("1..%d\n", tap_n);
	if (tap_skipped)
		printf("# skipped %d of %d\n", tap_skipped, tap_n);
	if (tap_failed)
		printf("# failed %d of %d\n", tap_failed, tap_n);
	return tap_failed ? 1 : 0;
}

#endif /* TFT_TESTS_TAP_H */
