/* SPDX-License-Identifier: MIT */
/*
 * The session summary as JSON keys: the part that `tftracer info --json`
 * (cli/cmd_info.c) and GET /api/session (server/api_session.c) share, written
 * once so that the two documents cannot drift apart. Each caller opens the
 * object and adds its own keys and lists around these. Also a graph node
 * row, shared by the server's /api/slice and the HTML export.
 */
#ifndef TFT_EXPORT_EXPORT_SUMMARY_H
#define TFT_EXPORT_EXPORT_SUMMARY_H

#include "codec/json_write.h"
#include "store/graph.h"
#include "store/session.h"

/*
 * Write, as keys of the object w has open, in this order: format, producer
 * (strings, "" when unknown), processes, tracks, slices, instants, flows,
 * counters, steps (counts), start_ns, end_ns, duration_ns (0 for an empty
 * session), dropped, unmatched_flows, unclosed_slices (what was lost), from
 * tft_session_get_summary(s). Errors are the writer's (sticky: see
 * tft_json_write_finish). Same thread rules as the session.
 */
void tft_export_summary_keys(struct tft_json_writer *w, const struct tft_session *s);

/*
 * One graph_nodes row as a JSON object, as GET /api/slice's "graph" items
 * (server/api_slice.c) and the HTML export's DATA "graph" (export_html.c)
 * give it: graph_id, graph, kind, name, op, device, inputs, attrs,
 * output_shapes, compute_cost, temporary_memory, persistent_memory, cost,
 * step_process, step_start_ns (null when absent; the JSON columns checked,
 * the file being untrusted).
 */
void tft_export_graph_node(struct tft_json_writer *w, const struct tft_graph_node *n, int64_t graph_id);

#endif /* TFT_EXPORT_EXPORT_SUMMARY_H */
