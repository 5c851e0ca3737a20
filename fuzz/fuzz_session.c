/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the session reader: the input is written to a temp
 * file and opened as a session; every track is scanned at several
 * resolutions, flows and steps are read. Errors are fine, crashes are not.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/session.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int count_ev(void *ctx, const struct tft_event *ev)
{
	uint64_t *n = ctx;

	*n += 1 + (uint64_t)ev->nargs;
	return *n > 1000000; /* bound the work per input */
}

static int count_flow(void *ctx, const struct tft_flow *f)
{
	(void)f;
	return ++*(uint64_t *)ctx > 100000;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64], side[80];
	struct tft_error err;
	struct tft_session *s;
	struct tft_session_summary sum;
	uint64_t n = 0;
	FILE *f;
	int fd;

	snprintf(path, sizeof(path), "/tmp/fuzz-session-XXXXXX");
	fd = mkstemp(path);
	if (fd < 0)
		return 0;
	f = fdopen(fd, "wb");
	if (!f) {
		close(fd);
		unlink(path);
		return 0;
	}
	if (size)
		fwrite(data, 1, size, f);
	fclose(f);
	tft_error_clear(&err);
	s = tft_session_open(path, &err);
	if (s) {
		tft_session_get_summary(s, &sum);
		for (uint32_t t = 0; t < tft_session_track_count(s) && t < 64; t++) {
			const struct tft_track *tr = tft_session_track(s, t);
			static const int64_t res[] = { 0, 1000, 64000, 1000000000 };
			for (int r = 0; r < 4; r++) {
				tft_error_clear(&err);
				tft_session_scan(s, t, INT64_MIN, INT64_MAX, res[r], count_ev, &n, &err);
			}
			if (tr->min_ts_ns <= tr->max_ts_ns) {
				int64_t mid = tr->min_ts_ns / 2 + tr->max_ts_ns / 2;
				tft_session_scan(s, t, mid, mid, 0, count_ev, &n, &err);
			}
		}
		tft_error_clear(&err);
		tft_session_flows(s, count_flow, &n, &err);
		for (uint32_t i = 0; i < tft_session_step_count(s); i++)
			n += (uint64_t)tft_session_step(s, i)->start_ns;
		tft_error_clear(&err);
		tft_session_refresh(s, &err);
		tft_session_close(s);
	}
	unlink(path);
	snprintf(side, sizeof(side), "%s-wal", path);
	unlink(side);
	snprintf(side, sizeof(side), "%s-shm", path);
	unlink(side);
	snprintf(side, sizeof(side), "%s-journal", path);
	unlink(side);
	return 0;
}
