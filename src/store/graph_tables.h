/* SPDX-License-Identifier: MIT */
/*
 * Private to store/: the session's graph tables as the writer holds them
 * (graph.c opens them on the writer's SQLite handle when
 * tft_writer_graphs() first asks, the writer frees them before it closes
 * that handle). Nothing outside store/ sees the handle.
 */
#ifndef TFT_STORE_GRAPH_TABLES_H
#define TFT_STORE_GRAPH_TABLES_H

#include "core/status.h"

struct sqlite3;
struct tft_graph_tables;

/* Create graph_nodes/graph_steps if needed and load what earlier inputs stored. NULL + err on failure. */
struct tft_graph_tables *tft_graph_tables_open(struct sqlite3 *db, struct tft_error *err);
/* Finalize and free (t may be NULL). */
void tft_graph_tables_free(struct tft_graph_tables *t);

#endif /* TFT_STORE_GRAPH_TABLES_H */
