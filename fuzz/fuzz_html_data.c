/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for a static HTML export's DATA read back as a session
 * (export/html_data.c): the input is the DATA text; when it opens, every
 * track is scanned in a few windows (args included), the flows, steps,
 * summary and the one raw chunk of each track are read. Errors are fine,
 * crashes are not.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codec/json_read.h"
#include "export/html_data.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int count_ev(void *ctx, const struct tft_event *ev)
{
	uint64_t *n = ctx;

	for (uint16_t i = 0; i < ev->nargs; i++)
		*n += ev->args[i].key + ev->args[i].type;
	return ++*n > 1000000; /* bound the work per input */
}

static int count_flow(void *ctx, const struct tft_flow *f)
{
	return ++*(uint64_t *)ctx > 100000 + f->name;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + TFT_JSON_PAD + 1);
	struct tft_session_summary sum;
	struct tft_error err;
	struct tft_session *s;
	uint64_t n = 0;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	memset(buf + size, 0, TFT_JSON_PAD + 1);
	tft_error_clear(&err);
	s = tft_html_data_open(buf, size, "fuzz.html", &err);
	free(buf); /* the session holds no pointer into the document */
	if (!s)
		return 0;
	tft_session_get_summary(s, &sum);
	for (uint32_t t = 0; t < tft_session_track_count(s); t++) {
		const struct tft_track *tr = tft_session_track(s, t);
		int64_t mid = tr->min_ts_ns / 2 + tr->max_ts_ns / 2;
		tft_session_scan(s, t, INT64_MIN, INT64_MAX, 0, count_ev, &n, &err);
		tft_session_scan(s, t, mid, mid, 0, count_ev, &n, &err);
		tft_session_scan(s, t, sum.start_ns, mid, 1000, count_ev, &n, &err);
		if (tft_session_raw_chunk_count(s, t))
			tft_session_scan_raw_chunk(s, t, 0, count_ev, &n, &err);
		tft_session_str(s, tr->name, NULL);
	}
	tft_session_flows(s, count_flow, &n, &err);
	for (uint32_t i = 0; i < tft_session_step_count(s); i++)
		tft_session_str(s, tft_session_step(s, i)->name, NULL);
	for (uint32_t i = 0; i < tft_session_process_count(s); i++)
		tft_session_str(s, tft_session_process(s, i)->host, NULL);
	tft_session_close(s);
	return 0;
}
