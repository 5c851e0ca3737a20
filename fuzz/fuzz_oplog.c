/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the tfprof OpLogProto importer (binary or text, chosen
 * by the first byte's low bit) into a session's graph_nodes table, and the
 * sniffer that tells it from a GraphDef, CostGraphDef and ProfileProto.
 */
#include <stddef.h>
#include <stdint.h>

#include "collect/ingest_oplog.h"
#include "collect/tf_names.h"
#include "store/writer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int fmts[2] = {TFT_PB_FMT_OPLOG, TFT_PB_FMT_OPLOG_TEXT};
	struct tft_error err;
	struct tft_writer *w;
	int fmt;

	if (!size)
		return 0;
	fmt = fmts[data[0] & 1];
	tft_pb_sniff(data + 1, size - 1, "tfprof_log");
	tft_pb_sniff(data + 1, size - 1, "graph.pb");
	tft_error_clear(&err);
	w = tft_writer_open(":memory:", NULL, &err);
	if (!w)
		return 0;
	if (tft_oplog_ingest(w, "tfprof_log", data + 1, size - 1, fmt, NULL, &err) == 0)
		tft_writer_close(w, &err);
	else
		tft_writer_abort(w);
	return 0;
}
