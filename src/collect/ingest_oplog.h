/* SPDX-License-Identifier: MIT */
/*
 * tfprof OpLogProto importer (`tfprof_log`, written by
 * tf.profiler.write_op_log; binary or its text format): what it says of
 * each op (custom op types such as _trainable_variables, float ops, the
 * Python code that created it) goes to the session's graph_nodes table as
 * rows of kind "oplog", which readers attach to the graph nodes of the
 * same name (store/graph.h), whatever the order of the inputs.
 */
#ifndef TFT_COLLECT_INGEST_OPLOG_H
#define TFT_COLLECT_INGEST_OPLOG_H

#include <stddef.h>
#include <stdint.h>

#include "collect/ingest.h"
#include "core/status.h"
#include "store/writer.h"

/*
 * Import the OpLogProto data[0..len) (borrowed) into w. format:
 * TFT_PB_FMT_OPLOG or TFT_PB_FMT_OPLOG_TEXT (tft_pb_sniff); any other value
 * is detected from the data (binary unless it reads as the text format).
 * Entries of one name are merged as tfprof merges them (types in order of
 * first appearance, each once; the last non-zero float_ops; the last
 * code_def). Trace strings come from id_to_string (older files: the trace's
 * own file/function strings). Returns 0, TFT_EFORMAT (err: byte offset,
 * message path and what was expected; also a trace naming a string id the
 * table lacks), TFT_ENOMEM or TFT_EIO.
 */
int tft_oplog_ingest(struct tft_writer *w, const char *name, const uint8_t *data, size_t len,
		     int format, const struct tft_ingest_opts *opts, struct tft_error *err);

#endif /* TFT_COLLECT_INGEST_OPLOG_H */
