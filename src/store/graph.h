/* SPDX-License-Identifier: MIT */
/*
 * Graph nodes in a session: the "graph_nodes" table (docs/file-format.md)
 * holding TF GraphDef / CostGraphDef nodes next to the trace, so a slice can
 * be joined to its node by name (op, inputs, attrs, shapes, cost), and what
 * a tfprof OpLogProto says of nodes (op types, float ops, code traces): rows
 * of kind "oplog" that readers attach to the graph rows of their name.
 */
#ifndef TFT_STORE_GRAPH_H
#define TFT_STORE_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/status.h"
#include "store/writer.h"

/* A text value: p[0..len) (borrowed, not NUL-terminated); p NULL = SQL NULL. */
struct tft_graph_text {
	const char *p; /* borrowed */
	size_t len;
};

#define TFT_GRAPH_NO_COST INT64_MIN /* an absent cost column (SQL NULL) */

/* One node row as producers hand it over and readers return it. */
struct tft_graph_node {
	struct tft_graph_text graph;  /* graph name: tft_graph_store_begin()'s *unique */
	struct tft_graph_text kind;   /* "graphdef", "costgraph", "function", "function_node" */
	struct tft_graph_text name, op, device;
	struct tft_graph_text inputs; /* JSON array of input names ("^ctrl", "x:1" kept as is) */
	struct tft_graph_text attrs;  /* JSON object */
	struct tft_graph_text output_shapes; /* JSON array of shapes (arrays of dims, -1 unknown) */
	struct tft_graph_text cost;   /* JSON object: the rest of a CostGraphDef.Node */
	int64_t compute_cost;         /* us, or TFT_GRAPH_NO_COST */
	int64_t temporary_memory;     /* bytes, or TFT_GRAPH_NO_COST */
	int64_t persistent_memory;    /* bytes, or TFT_GRAPH_NO_COST */
	/*
	 * What a tfprof OpLogProto says of the node (tfprof_log): written with a
	 * row of kind "oplog" when `oplog` is set (else the three are NULL).
	 * Readers return them on every row of the node's name: a graph row
	 * carries those of the session's last "oplog" row of its name, and an
	 * "oplog" row is returned only when no other row has its name.
	 */
	bool oplog;
	struct tft_graph_text op_types; /* JSON array of strings ("_trainable_variables" ...) */
	int64_t float_ops;              /* or TFT_GRAPH_NO_COST */
	struct tft_graph_text code;     /* JSON array of "file:line:function" frames, outermost first */
	/* Readers: the step the graph came with (graph_steps), or TFT_GRAPH_NO_COST each. */
	int64_t step_process;         /* its process id (TFT_GRAPH_NO_COST: several) */
	int64_t step_start;           /* its start_ns */
};

struct tft_graph_store;

/*
 * Start adding nodes to the session being written by w: creates the table
 * if needed (inside the writer's open transaction; nodes become durable with
 * the writer's next commit/close). Close the store before the writer.
 * Returns NULL and fills err on failure.
 */
struct tft_graph_store *tft_graph_store_open(struct tft_writer *w, struct tft_error *err);

/*
 * Start a graph named `name` (NUL-terminated): returns its id (graph_id
 * column, 0, 1, ... per session) and sets *unique to the name its rows are
 * to carry: `name`, or `name (2)`, `name (3)` ... when an earlier graph of
 * this session has that name (the same file imported twice), so that a
 * graph name stands for one graph. *unique is owned by the session's writer
 * and valid until it closes. A negative status (err filled, *unique left
 * as it was) on failure.
 */
int64_t tft_graph_store_begin(struct tft_graph_store *gs, const char *name, const char **unique,
			      struct tft_error *err);

/* Add one node of graph `graph_id`. 0 or a negative status (err filled). */
int tft_graph_store_add(struct tft_graph_store *gs, int64_t graph_id,
			const struct tft_graph_node *n, struct tft_error *err);

/*
 * The graph id the session's next graph gets, or -1 before its first graph
 * store: an importer notes it before an input whose graphs come with a step.
 */
int64_t tft_graph_next_id(struct tft_writer *w);

/*
 * Link the graphs from first_id on (those of the input just imported) to
 * its step (graph_steps: process, or UINT32_MAX for several, and start), so
 * that a slice's details can list its own step's graph rows first.
 */
int tft_graph_link_step(struct tft_writer *w, int64_t first_id, uint32_t process, int64_t start_ns,
			struct tft_error *err);

/* Nodes added through this store. */
uint64_t tft_graph_store_count(const struct tft_graph_store *gs);

/*
 * Finish: adds the nodes to the session counter "graph_nodes" (meta) and
 * frees the store. Returns 0 or a negative status. gs may be NULL.
 */
int tft_graph_store_close(struct tft_graph_store *gs, struct tft_error *err);

/*
 * Reader side: open the session file read-only and call fn for every node
 * named `name` (all graphs, every kind, in insertion order; "oplog" rows
 * attached as above). The row's strings are valid during the call only.
 * fn returns 0 to go on, non-zero to stop. Returns the number of rows
 * visited (0: none, or no graph_nodes table), or a negative status (err
 * filled).
 */
int tft_graph_lookup(const char *session_path, const char *name,
		     int (*fn)(void *ctx, const struct tft_graph_node *n, int64_t graph_id),
		     void *ctx, struct tft_error *err);

/* The same for every node of the session, in insertion order. */
int tft_graph_each(const char *session_path,
		   int (*fn)(void *ctx, const struct tft_graph_node *n, int64_t graph_id), void *ctx,
		   struct tft_error *err);

/* Number of graph nodes in a session file (0 when it has none), or a negative status. */
int64_t tft_graph_count(const char *session_path, struct tft_error *err);

#endif /* TFT_STORE_GRAPH_H */
