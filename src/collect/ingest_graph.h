/* SPDX-License-Identifier: MIT */
/*
 * GraphDef (binary or .pbtxt) and CostGraphDef importer: nodes go to the
 * session's graph_nodes table (store/graph.h), to be joined to slices by name.
 */
#ifndef TFT_COLLECT_INGEST_GRAPH_H
#define TFT_COLLECT_INGEST_GRAPH_H

#include <stddef.h>
#include <stdint.h>

#include "codec/pb_wire.h"
#include "collect/ingest.h"
#include "core/status.h"
#include "store/writer.h"

/*
 * Import a GraphDef or CostGraphDef file data[0..len) (borrowed) into w's
 * graph_nodes. format: TFT_PB_FMT_GRAPHDEF(_TEXT) or
 * TFT_PB_FMT_COSTGRAPH(_TEXT) (tft_pb_sniff); any other value is detected
 * from the data and name. The graph is named
 * `name` as given (made unique in the session, store/graph.h). Returns 0, TFT_EFORMAT (err: byte offset and
 * message path such as "node[12].attr[3].value"), TFT_ENOMEM or TFT_EIO.
 */
int tft_graph_ingest(struct tft_writer *w, const char *name, const uint8_t *data, size_t len,
		     int format, const struct tft_ingest_opts *opts, struct tft_error *err);

/*
 * For importers whose input embeds graphs (RunMetadata.partition_graphs,
 * cost_graph): a context that stores the nodes of several graphs.
 */
struct tft_graph_import;

struct tft_graph_import *tft_graph_import_create(struct tft_writer *w, struct tft_error *err);

/*
 * Decode sub-message s (wire or text) as a GraphDef / CostGraphDef named
 * graph_name (made unique in the session: store/graph.h).
 */
int tft_graph_import_graphdef(struct tft_graph_import *gi, const char *graph_name,
			      const struct tft_pb_sub *s);
int tft_graph_import_costgraph(struct tft_graph_import *gi, const char *graph_name,
			       const struct tft_pb_sub *s);

/* Nodes stored so far. */
uint64_t tft_graph_import_count(const struct tft_graph_import *gi);

/* Count the nodes into the session ("graph_nodes" meta) and free gi (may be NULL). */
int tft_graph_import_finish(struct tft_graph_import *gi, struct tft_error *err);

#endif /* TFT_COLLECT_INGEST_GRAPH_H */
