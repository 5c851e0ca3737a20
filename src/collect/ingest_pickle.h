/* SPDX-License-Identifier: MIT */
/*
 * Importer for the pickles the TF-era tracers saved: a RunMetadata pickle
 * (tfvis / tftracer Timeline.to_pickle, the tftracer "download" button) and
 * a tftracer tracing session (TracingServer.save_session, .pickle[.gz]).
 */
#ifndef TFT_COLLECT_INGEST_PICKLE_H
#define TFT_COLLECT_INGEST_PICKLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codec/source.h"
#include "collect/ingest.h"
#include "core/status.h"
#include "store/writer.h"

/* Dispatch probe: 1 if head[0..len) starts like a pickle of protocol 2..5. */
int tft_ingest_pickle_probe(const unsigned char *head, size_t len, bool at_eof);

/*
 * Import the pickle in data[0..len) (borrowed) into w. Nothing in the
 * pickle is executed (codec/pickle.h). What becomes what:
 *   RunMetadata            one traced step (the RunMetadata importer)
 *   list of RunMetadata    one traced step each
 *   TracingSource          each stored trace: a traced step named
 *                          "run R trace T"; each evicted trace (None) and
 *                          each run without a trace: an untraced step at its
 *                          date lasting the run's mean runtime; run keys,
 *                          fetches, feeds, options and statistics: session
 *                          metadata "tftracer.run.R.*"
 * `name` is the file path (errors, the session name). opts may be NULL.
 * Returns 0, TFT_EFORMAT (err: byte offset in the decompressed pickle and
 * what was expected; inside a RunMetadata, the offset of the failing byte
 * of its serialized bytes), TFT_ENOMEM or a writer status.
 */
int tft_ingest_pickle_mem(struct tft_writer *w, const char *name, const uint8_t *data, size_t len,
			  const struct tft_ingest_opts *opts, struct tft_error *err);

/* Same, reading the whole (possibly gzip'd) source first. */
int tft_ingest_pickle_source(struct tft_writer *w, struct tft_source *src,
			     const struct tft_ingest_opts *opts, struct tft_error *err);

#endif /* TFT_COLLECT_INGEST_PICKLE_H */
