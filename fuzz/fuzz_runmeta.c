/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the RunMetadata/StepStats importer (binary and text,
 * chosen by the first byte) plus the TF name and label parsers. Binary
 * input is also imported on two threads (the parallel device decode),
 * which must accept or refuse it as the serial import does, with the same
 * error at the same offset, and store the same session (fuzz_same.h).
 */
#include <stddef.h>
#include <stdint.h>

#include "collect/ingest_runmeta.h"
#include "collect/tf_names.h"
#include "store/writer.h"
#include "fuzz_same.h"

static const int formats[4] = {TFT_PB_FMT_RUNMETA, TFT_PB_FMT_STEPSTATS, TFT_PB_FMT_RUNMETA_TEXT,
			       TFT_PB_FMT_STEPSTATS_TEXT};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tft_error err;
	struct tft_writer *w;
	struct tft_tf_device dev;
	struct tft_tf_label lb;
	char buf[128];
	int fmt, r;

	if (!size)
		return 0;
	/* The parsers on the raw bytes. */
	tft_tf_names_parse_device((const char *)data, size, &dev);
	tft_tf_names_process(&dev, buf, sizeof(buf));
	tft_tf_names_canon_device(&dev, buf, sizeof(buf));
	tft_tf_names_parse_label((const char *)data, size, &lb);
	tft_pb_sniff(data, size, "fuzz.pb");

	fmt = formats[data[0] & 3];
	if (fmt == TFT_PB_FMT_RUNMETA || fmt == TFT_PB_FMT_STEPSTATS) {
		/* binary: serial and two threads, compared (fuzz_same.h) */
		struct tft_ingest_opts o = {.threads = 2};
		const char *p1 = fuzz_same_path(0), *p2 = fuzz_same_path(1);
		struct tft_error err2;
		int r2, c1 = -1, c2 = -1;

		tft_error_clear(&err);
		w = tft_writer_open(p1, NULL, &err);
		if (!w)
			return 0;
		r = tft_runmeta_ingest_as(w, "fuzz.pb", data + 1, size - 1, fmt, NULL, &err);
		if (r == 0)
			c1 = tft_writer_close(w, &err);
		else
			tft_writer_abort(w);
		tft_error_clear(&err2);
		w = tft_writer_open(p2, NULL, &err2);
		if (w) {
			r2 = tft_runmeta_ingest_as(w, "fuzz.pb", data + 1, size - 1, fmt, &o, &err2);
			if (r2 == 0)
				c2 = tft_writer_close(w, &err2);
			else
				tft_writer_abort(w);
			fuzz_same_outcome(r, &err, r2, &err2);
			if (c1 == 0 && c2 == 0)
				fuzz_same_sessions(p1, p2);
		}
		unlink(p1);
		unlink(p2);
		return 0;
	}
	tft_error_clear(&err);
	w = tft_writer_open(":memory:", NULL, &err);
	if (!w)
		return 0;
	r = tft_runmeta_ingest_as(w, "fuzz.pb", data + 1, size - 1, fmt, NULL, &err);
	if (r == 0)
		tft_writer_close(w, &err);
	else
		tft_writer_abort(w);
	return 0;
}
