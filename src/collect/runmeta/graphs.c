/* SPDX-License-Identifier: MIT */
/*
 * The graphs a RunMetadata holds: its cost_graph, partition_graphs and
 * function_graphs go to the session's graph_nodes (collect/ingest_graph.h).
 * The partition graphs' NodeDefs are also walked for their inputs, for the
 * dataflow of nodes that have no timeline_label (dataflow.c): node name ->
 * its data inputs ("x", "x:1"; control inputs "^x" name no tensor) as
 * hashes, two per input as the labels' (rm->dfh layout). The graph's own
 * importer checked and stored the graph; this walk only takes names and
 * inputs (the NodeDef and GraphDef tables: collect/tf_proto.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/runmeta/rm_int.h"
#include "core/grow.h"
#include "core/hmap.h"

static int gin_push(struct rm *rm, uint64_t h)
{
	if (rm->ngin == UINT32_MAX || tft_grow((void **)&rm->gin, &rm->cgin, rm->ngin + 1, sizeof(*rm->gin)))
		return TFT_ENOMEM;
	rm->gin[rm->ngin++] = h;
	return 0;
}

static int on_gnode_input(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct rm *rm = ctx;
	struct tft_tf_str in = { (const char *)v->p, v->len }, st;

	if (in.len && in.p[0] == '^')
		return 0;
	if (gin_push(rm, tft_hash_fast(in.p, in.len, 0)) ||
	    gin_push(rm, tft_tf_names_strip_rename(in, &st) ? tft_hash_fast(st.p, st.len, 0) : 0))
		return tft_pb_wire_fail(rm->dec, TFT_ENOMEM, v->offset, "out of memory");
	return 0;
}

static int on_gnode(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	static const struct tft_tf_node_fns fns = {on_gnode_input, NULL};
	struct rm *rm = ctx;
	struct tft_tf_node m;
	uint32_t off = rm->ngin, gi = rm->ngnodes;
	uint64_t name;
	int r;

	memset(&m, 0, sizeof(m));
	r = tft_tf_node_decode(&v->sub, ctx, &m, &fns);
	if (r)
		return r;
	name = tft_hash_fast(m.name.p, m.name.len, 0);
	if (!rm->gix.stride) /* (an rm starts zeroed) */
		tft_hmap_init(&rm->gix, 1);
	r = tft_hmap_add(&rm->gix, &name, (uint32_t)tft_hash_u64(name), &gi); /* the last node of a name wins */
	if (r == 0 && tft_grow((void **)&rm->gnodes, &rm->cgnodes, rm->ngnodes + 1, sizeof(*rm->gnodes)))
		r = TFT_ENOMEM;
	if (r < 0)
		return tft_pb_wire_fail(rm->dec, TFT_ENOMEM, v->offset, "out of memory");
	rm->ngnodes += r == 0;
	rm->gnodes[gi] = (struct rm_gnode){ name, off, (rm->ngin - off) / 2 };
	return 0;
}

/* A partition graph's nodes: their names and inputs. */
static const struct tft_tf_graph_fns ggraph_fns = {on_gnode, NULL};

/*
 * A graph of the RunMetadata (cost_graph, partition_graphs, function_graphs'
 * partition_graphs) to the session's graph_nodes, named after the input and
 * its place in it; a partition graph's nodes' inputs are kept too.
 */
int tft_rm_on_graph(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct rm *rm = ctx;
	/* The input as given, not its base name: two workers' run_meta files stay apart. */
	const char *in = rm->name ? rm->name : "";
	char gname[1200];

	if (f->num == 4) {
		rm->nfunc = v->index;
		return tft_pb_wire_decode_sub(&v->sub, &tft_rm_function_graphs_msg, NULL, ctx);
	}
	if (!rm->graphs) {
		rm->graphs = tft_graph_import_create(rm->w, rm->err);
		if (!rm->graphs)
			return tft_pb_wire_fail(rm->dec, rm->err && rm->err->code ? rm->err->code
										 : TFT_ENOMEM,
						v->offset, "could not open the graph_nodes table");
	}
	if (f->num == 2) {
		snprintf(gname, sizeof(gname), "%.1024s:cost_graph", in);
		return tft_graph_import_costgraph(rm->graphs, gname, &v->sub);
	}
	if (f->num == 1) /* FunctionGraphs.partition_graphs */
		snprintf(gname, sizeof(gname), "%.1024s:function_graphs[%u].partition_graphs[%u]", in,
			 rm->nfunc, v->index);
	else
		snprintf(gname, sizeof(gname), "%.1024s:partition_graphs[%u]", in, v->index);
	{
		int r = tft_graph_import_graphdef(rm->graphs, gname, &v->sub);

		/* (what ran: its nodes' inputs, for the nodes without a label) */
		return r ? r : tft_tf_graph_decode(&v->sub, ctx, &ggraph_fns);
	}
}

/* The partition graph node named by the hash `name`, or NULL. */
const struct rm_gnode *tft_rm_gnode_find(const struct rm *rm, uint64_t name)
{
	uint32_t gi = tft_hmap_get1(&rm->gix, name, (uint32_t)tft_hash_u64(name));

	return gi != TFT_HMAP_EMPTY ? &rm->gnodes[gi] : NULL;
}
