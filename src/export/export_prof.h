/* SPDX-License-Identifier: MIT */
/*
 * tftracer prof's outputs of a view (analyze/prof.h), shared by the CLI
 * (cli/cmd_prof.c, the tfprof> shell) and the HTTP API (server/api_prof.c):
 * tfprof's text layout, the JSON document scripts rely on
 * ({"view", "step", "root": NODE}, docs/cmd-prof.md), CSV, and the
 * per-op roofline table.
 */
#ifndef TFT_EXPORT_EXPORT_PROF_H
#define TFT_EXPORT_EXPORT_PROF_H

#include <stdio.h>

#include "analyze/prof.h"
#include "codec/json_write.h"

/*
 * tfprof's text: the "Doc:" block (what the view and each selected column
 * mean), "Profile:", the legend line, then the tree (scope, graph, code:
 * "name (self/total unit, ...)", indented two spaces a level) or the list
 * (op: "name  value (cumulative %, self %), ..."). Returns 0 or -errno.
 */
int tft_export_prof_text(const struct tft_prof_result *r, FILE *fp);

/*
 * The JSON document: {"view": V, "step": S, "steps": N, "select": [...],
 * "root": NODE}, NODE = {"id" (its index in the view: /api/prof?node=), "name", "accounted", "self": {metric: v},
 * "total": {metric: v}, ["shape", "devices", "op_types", "input_shapes",]
 * "children": [NODE ...]} with the selected metrics' names as keys. Written
 * as one value into w (its errors are sticky: tft_json_write_finish).
 */
void tft_export_prof_json(const struct tft_prof_result *r, struct tft_json_writer *w);

/*
 * CSV: a header line, then one line per shown node in the text's order:
 * depth,name,accounted, then <metric>_self,<metric>_total per selected metric.
 */
int tft_export_prof_csv(const struct tft_prof_result *r, FILE *fp);

/*
 * The roofline table (tft_prof_roofline): text (a table, rates in
 * GFLOP/s and GB/s), JSON ({"steps": N, "rows": [{"name", "kind": "op" or
 * "kernel", "device", "dtype", "count", "micros", "flops", "bytes",
 * "flops_per_s", "bytes_per_s", "intensity", "peak_flops_per_s",
 * "peak_bytes_per_s", "attainable_flops_per_s", "of_attainable", "bound"}]},
 * unknown values null) or CSV (those keys as columns).
 */
int tft_export_prof_roofline_text(const struct tft_prof_roofline_row *rows, uint32_t n, FILE *fp);
void tft_export_prof_roofline_json(const struct tft_prof_roofline_row *rows, uint32_t n, uint32_t steps,
				   struct tft_json_writer *w);
int tft_export_prof_roofline_csv(const struct tft_prof_roofline_row *rows, uint32_t n, FILE *fp);

/* tfprof's number formats (for the shell and tests): "930.58k", "1.72sec", "1584.00MB". */
const char *tft_prof_format_number(char *buf, size_t size, double v);
const char *tft_prof_format_time(char *buf, size_t size, double micros);
const char *tft_prof_format_memory(char *buf, size_t size, double bytes);

#endif /* TFT_EXPORT_EXPORT_PROF_H */
