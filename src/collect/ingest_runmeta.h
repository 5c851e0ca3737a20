/* SPDX-License-Identifier: MIT */
/*
 * RunMetadata / StepStats importer (TF1 FULL_TRACE output; binary or text
 * format): NodeExecStats -> slices on one track per device, network ops on
 * a separate comm track per device, send->recv flows, one step per file.
 */
#ifndef TFT_COLLECT_INGEST_RUNMETA_H
#define TFT_COLLECT_INGEST_RUNMETA_H

#include <stddef.h>
#include <stdint.h>

#include "collect/ingest.h"
#include "collect/tf_names.h"
#include "core/status.h"
#include "store/writer.h"

/*
 * Import data[0..len) (borrowed) into w: a binary RunMetadata or StepStats,
 * or their text format (.pbtxt). The kind is detected with tft_pb_sniff()
 * (name = file path, used for detection and errors). opts may be NULL.
 *
 * Returns 0, TFT_EFORMAT (err: byte offset and message path such as
 * "step_stats.dev_stats[1].node_stats[7]"), TFT_ENOMEM or a writer status.
 */
int tft_runmeta_ingest(struct tft_writer *w, const char *name, const uint8_t *data, size_t len,
		       const struct tft_ingest_opts *opts, struct tft_error *err);

/* Same, with the format given (one of the RUNMETA/STEPSTATS TFT_PB_FMT_* values). */
int tft_runmeta_ingest_as(struct tft_writer *w, const char *name, const uint8_t *data, size_t len,
			  int format, const struct tft_ingest_opts *opts, struct tft_error *err);

/*
 * Same, as step `step_index` named `step_name` (NULL: the session_metadata
 * name, else the base name of `name`): for containers holding one
 * RunMetadata per traced step (the pickle importer). tft_runmeta_ingest_as()
 * is this with step 0 and no name.
 */
int tft_runmeta_ingest_step(struct tft_writer *w, const char *name, const uint8_t *data,
			    size_t len, int format, int64_t step_index, const char *step_name,
			    const struct tft_ingest_opts *opts, struct tft_error *err);

/*
 * The earliest node start (ns) of a RunMetadata / StepStats of `format`
 * (TFT_PB_FMT_*), read without importing it; INT64_MAX if it has no node,
 * INT64_MIN if it does not parse.
 */
int64_t tft_runmeta_start(const uint8_t *data, size_t len, int format);

#endif /* TFT_COLLECT_INGEST_RUNMETA_H */
