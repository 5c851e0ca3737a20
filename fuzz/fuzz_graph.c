/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the GraphDef / CostGraphDef importer (binary or text,
 * chosen by the first byte's low bits) into a session's graph_nodes table.
 */
#include <stddef.h>
#include <stdint.h>

#include "collect/ingest_graph.h"
#include "collect/tf_names.h"
#include "store/writer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int fmts[4] = {TFT_PB_FMT_GRAPHDEF, TFT_PB_FMT_GRAPHDEF_TEXT,
				    TFT_PB_FMT_COSTGRAPH, TFT_PB_FMT_COSTGRAPH_TEXT};
	struct tft_error err;
	struct tft_writer *w;
	int fmt;

	if (!size)
		return 0;
	fmt = fmts[data[0] & 3];
	tft_pb_sniff(data + 1, size - 1, "fuzz.pbtxt"); /* (the GraphDef / CostGraphDef tell) */
	tft_error_clear(&err);
	w = tft_writer_open(":memory:", NULL, &err);
	if (!w)
		return 0;
	if (tft_graph_ingest(w, "fuzz.pbtxt", data + 1, size - 1, fmt, NULL, &err) == 0)
		tft_writer_close(w, &err);
	else
		tft_writer_abort(w);
	return 0;
}
