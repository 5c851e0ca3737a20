/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the RunMetadata/StepStats importer (binary and text,
 * chosen by the first byte) plus the TF name and label parsers. Binary
 * input is also imported on two threads (the parallel device decode),
 * which must accept or refuse it as the serial import does, with the same
 * error at the same offset, and store the same session (fuzz_same.h).
 * Bit 2 of the first byte imports the input twice into one session, so the
 * pool that links sends and receives across inputs meets both.
 */
#include <stddef.h>
#include <stdint.h>

#include "collect/ingest_runmeta.h"
#include "collect/tf_names.h"
#include "store/writer.h"
#include "fuzz_same.h"

static const int formats[4] = {TFT_PB_FMT_RUNMETA, TFT_PB_FMT_STEPSTATS, TFT_PB_FMT_RUNMETA_TEXT,
			       TFT_PB_FMT_STEPSTATS_TEXT};

struct input {
	const uint8_t *data;
	size_t size;
	int fmt;
	int twice; /* a second input of the same bytes: the session's send/recv pool links across inputs */
};

static int import(struct tft_writer *w, const struct tft_ingest_opts *o, struct tft_error *err, void *ctx)
{
	const struct input *in = ctx;
	int r = tft_runmeta_ingest_as(w, "fuzz.pb", in->data, in->size, in->fmt, o, err);

	if (!r && in->twice)
		r = tft_runmeta_ingest_as(w, "fuzz2.pb", in->data, in->size, in->fmt, o, err);
	return r;
}

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
		struct input in = {data + 1, size - 1, fmt, data[0] & 4};

		fuzz_same_imports(import, &in);
		return 0;
	}
	tft_error_clear(&err);
	w = tft_writer_open(":memory:", NULL, &err);
	if (!w)
		return 0;
	r = tft_runmeta_ingest_as(w, "fuzz.pb", data + 1, size - 1, fmt, NULL, &err);
	if (r == 0 && (data[0] & 4))
		r = tft_runmeta_ingest_as(w, "fuzz2.pb", data + 1, size - 1, fmt, NULL, &err);
	if (r == 0)
		tft_writer_close(w, &err);
	else
		tft_writer_abort(w);
	return 0;
}
