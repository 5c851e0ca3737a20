/* SPDX-License-Identifier: MIT */
/*
 * Chrome trace event JSON importer (also Kineto and tf.timeline output),
 * called by the format dispatch in ingest.c. Internal to src/collect.
 */
#ifndef TFT_COLLECT_INGEST_CHROME_H
#define TFT_COLLECT_INGEST_CHROME_H

#include "codec/json_read.h"
#include "codec/source.h"
#include "collect/ingest.h"
#include "core/status.h"
#include "store/writer.h"

/* Knobs for tests, fuzzers and benchmarks; NULL = defaults. */
struct tft_chrome_opts {
	/* JSON window (NULL = defaults); tests and fuzzers shrink it to exercise refills */
	const struct tft_json_reader_opts *reader;
	/*
	 * 0 = automatic: for inputs of 4 MiB or more, compressed inputs and
	 * pipes, parsing stays on the caller's thread while another commits
	 * (tracks, sorting, writing) and, unless the file is mapped, a third
	 * reads and inflates ahead; 1 = everything on the caller's thread;
	 * 2 = always threads.
	 */
	int threads;
};

/*
 * Import the JSON document in src (borrowed, positioned at its start; a
 * plain file of 4 MiB or more is mapped and read in place, unless
 * copts->reader sets a window size) into w. opts and copts may be NULL. The document must be a Chrome trace: an
 * object with a "traceEvents" array, or an array, holding event objects
 * (an empty array is an empty trace). A tftracer export's "metadata"
 * (track kinds, hosts, ranks, steps) is restored. Returns 0, TFT_EFORMAT
 * (err->offset = byte offset in the decompressed stream), TFT_ENOMEM,
 * TFT_EIO or a store error. Uses (and joins) a thread of its own when
 * copts->threads allows; w is only used by one thread at a time.
 */
int tft_ingest_chrome_source(struct tft_writer *w, struct tft_source *src,
			     const struct tft_ingest_opts *opts, const struct tft_chrome_opts *copts,
			     struct tft_error *err);

#endif /* TFT_COLLECT_INGEST_CHROME_H */
