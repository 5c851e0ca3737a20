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

/*
 * Import the JSON document in src (borrowed, positioned at its start) into
 * w. opts may be NULL; ropts (NULL = defaults) sizes the JSON window, which
 * tests and fuzzers shrink to exercise refills. Returns 0, TFT_EFORMAT (err->offset = byte offset in
 * the decompressed stream), TFT_ENOMEM, TFT_EIO or a store error.
 */
int tft_ingest_chrome_source(struct tft_writer *w, struct tft_source *src,
			     const struct tft_ingest_opts *opts,
			     const struct tft_json_reader_opts *ropts, struct tft_error *err);

#endif /* TFT_COLLECT_INGEST_CHROME_H */
