/* SPDX-License-Identifier: MIT */
/*
 * The RunMetadata / StepStats messages the importer reads, as tables for
 * the table decoder (codec/pb_wire.h, binary and text): what a node's
 * fields are stored as (rm_int.h) and which handler takes the rest.
 */
#include <stddef.h>

#include "collect/runmeta/rm_int.h"

#define F TFT_PB_FIELD
#define H TFT_PB_HOOK

static const struct tft_pb_field alloc_desc_fields[] = {
	F(1, TFT_PB_INT64, 0, struct rm_alloc_desc, requested_bytes, "requested_bytes", NULL, NULL),
	F(2, TFT_PB_INT64, 0, struct rm_alloc_desc, allocated_bytes, "allocated_bytes", NULL, NULL),
	F(3, TFT_PB_STRING, 0, struct rm_alloc_desc, allocator_name, "allocator_name", NULL, NULL),
	F(4, TFT_PB_INT64, 0, struct rm_alloc_desc, allocation_id, "allocation_id", NULL, NULL),
	F(5, TFT_PB_BOOL, 0, struct rm_alloc_desc, has_single_reference, "has_single_reference", NULL, NULL),
	F(6, TFT_PB_UINT64, 0, struct rm_alloc_desc, ptr, "ptr", NULL, NULL),
};
const struct tft_pb_msg tft_rm_alloc_desc_msg = {"AllocationDescription", alloc_desc_fields, 6,
						 offsetof(struct rm_alloc_desc, has)};

static const struct tft_pb_field tensor_desc_fields[] = {
	F(1, TFT_PB_ENUM, 0, struct rm_tensor_desc, dtype, "dtype", NULL, &tft_tf_dtype_enum),
	H(2, TFT_PB_MESSAGE, 0, "shape", tft_rm_on_td_shape, NULL),
	F(4, TFT_PB_MESSAGE, 0, struct rm_tensor_desc, alloc, "allocation_description", NULL,
	  &tft_rm_alloc_desc_msg),
};
static const struct tft_pb_msg tensor_desc_msg = {"TensorDescription", tensor_desc_fields, 3,
						  offsetof(struct rm_tensor_desc, has)};

static const struct tft_pb_field output_fields[] = {
	F(1, TFT_PB_INT32, 0, struct rm_output, slot, "slot", NULL, NULL),
	F(3, TFT_PB_MESSAGE, 0, struct rm_output, td, "tensor_description", NULL, &tensor_desc_msg),
};
const struct tft_pb_msg tft_rm_output_msg = {"NodeOutput", output_fields, 2,
					     offsetof(struct rm_output, has)};

static const struct tft_pb_field alloc_rec_fields[] = {
	F(1, TFT_PB_INT64, 0, struct rm_alloc_rec, alloc_micros, "alloc_micros", NULL, NULL),
	F(2, TFT_PB_INT64, 0, struct rm_alloc_rec, alloc_bytes, "alloc_bytes", NULL, NULL),
};
const struct tft_pb_msg tft_rm_alloc_rec_msg = {"AllocationRecord", alloc_rec_fields, 2,
						offsetof(struct rm_alloc_rec, has)};

static const struct tft_pb_field mem_used_fields[] = {
	F(1, TFT_PB_STRING, 0, struct rm_mem_used, allocator_name, "allocator_name", NULL, NULL),
	F(2, TFT_PB_INT64, 0, struct rm_mem_used, total_bytes, "total_bytes", NULL, NULL),
	F(3, TFT_PB_INT64, 0, struct rm_mem_used, peak_bytes, "peak_bytes", NULL, NULL),
	F(4, TFT_PB_INT64, 0, struct rm_mem_used, live_bytes, "live_bytes", NULL, NULL),
	F(5, TFT_PB_INT64, 0, struct rm_mem_used, allocator_bytes_in_use, "allocator_bytes_in_use",
	  NULL, NULL),
	H(6, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "allocation_records", tft_rm_on_alloc_rec, NULL),
};
const struct tft_pb_msg tft_rm_mem_used_msg = {"AllocatorMemoryUsed", mem_used_fields, 6,
					       offsetof(struct rm_mem_used, has)};

static const struct tft_pb_field mem_stats_fields[] = {
	F(1, TFT_PB_INT64, 0, struct rm_mem_stats, temp_memory_size, "temp_memory_size", NULL, NULL),
	F(2, TFT_PB_INT64, 0, struct rm_mem_stats, device_temp_memory_size, "device_temp_memory_size",
	  NULL, NULL),
	F(3, TFT_PB_INT64, 0, struct rm_mem_stats, persistent_memory_size, "persistent_memory_size",
	  NULL, NULL),
	F(4, TFT_PB_INT64, 0, struct rm_mem_stats, device_persistent_memory_size,
	  "device_persistent_memory_size", NULL, NULL),
	H(5, TFT_PB_INT64, TFT_PB_F_REPEATED, "persistent_tensor_alloc_ids", tft_rm_on_alloc_id, NULL),
	H(6, TFT_PB_INT64, TFT_PB_F_REPEATED, "device_persistent_tensor_alloc_ids", tft_rm_on_alloc_id, NULL),
};
const struct tft_pb_msg tft_rm_mem_stats_msg = {"MemoryStats", mem_stats_fields, 6,
						offsetof(struct rm_mem_stats, has)};

static const struct tft_pb_field node_fields[] = {
	F(1, TFT_PB_STRING, 0, struct rm_node, node_name, "node_name", NULL, NULL),
	F(2, TFT_PB_INT64, 0, struct rm_node, all_start_micros, "all_start_micros", NULL, NULL),
	F(3, TFT_PB_INT64, 0, struct rm_node, op_start_rel_micros, "op_start_rel_micros", NULL, NULL),
	F(4, TFT_PB_INT64, 0, struct rm_node, op_end_rel_micros, "op_end_rel_micros", NULL, NULL),
	F(5, TFT_PB_INT64, 0, struct rm_node, all_end_rel_micros, "all_end_rel_micros", NULL, NULL),
	H(6, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "memory", tft_rm_on_memory, NULL),
	H(7, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "output", tft_rm_on_output, NULL),
	F(8, TFT_PB_STRING, 0, struct rm_node, timeline_label, "timeline_label", NULL, NULL),
	F(9, TFT_PB_INT64, 0, struct rm_node, scheduled_micros, "scheduled_micros", NULL, NULL),
	F(10, TFT_PB_UINT32, 0, struct rm_node, thread_id, "thread_id", NULL, NULL),
	H(11, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "referenced_tensor", tft_rm_on_ref_tensor, NULL),
	H(12, TFT_PB_MESSAGE, 0, "memory_stats", tft_rm_on_mem_stats, NULL),
	F(13, TFT_PB_INT64, 0, struct rm_node, all_start_nanos, "all_start_nanos", NULL, NULL),
	F(14, TFT_PB_INT64, 0, struct rm_node, op_start_rel_nanos, "op_start_rel_nanos", NULL, NULL),
	F(15, TFT_PB_INT64, 0, struct rm_node, op_end_rel_nanos, "op_end_rel_nanos", NULL, NULL),
	F(16, TFT_PB_INT64, 0, struct rm_node, all_end_rel_nanos, "all_end_rel_nanos", NULL, NULL),
	F(17, TFT_PB_INT64, 0, struct rm_node, scheduled_nanos, "scheduled_nanos", NULL, NULL),
};
const struct tft_pb_msg tft_rm_node_msg = {"NodeExecStats", node_fields,
					   sizeof(node_fields) / sizeof(node_fields[0]),
					   offsetof(struct rm_node, has)};

/*
 * DeviceStepStats is walked twice: the device name and thread names first
 * (thread_names follow the nodes on the wire), then the nodes. Nothing is
 * buffered, so memory does not grow with the number of nodes. For binary
 * input the first walk is usually the pre-pass's (tft_rm_scan_devices), and the
 * nodes of a simple DeviceStepStats are read by nodes_direct() in decode.c.
 */
static const struct tft_pb_field devstats_fields[] = {
	F(1, TFT_PB_STRING, 0, struct rm_devstats, device, "device", NULL, NULL),
	H(2, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "node_stats", tft_rm_on_node_count, NULL),
	H(3, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "thread_names", tft_rm_on_thread_name, NULL),
};
const struct tft_pb_msg tft_rm_devstats_msg = {"DeviceStepStats", devstats_fields, 3,
					       offsetof(struct rm_devstats, has)};
static const struct tft_pb_field devstats_nodes_fields[] = {
	H(2, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "node_stats", tft_rm_on_node_stats, NULL),
};
const struct tft_pb_msg tft_rm_devstats_nodes_msg = {"DeviceStepStats", devstats_nodes_fields, 1,
						     TFT_PB_NOOFF};

static const struct tft_pb_field thread_name_fields[] = {
	F(1, TFT_PB_UINT32, 0, struct rm_map_entry, key, "key", NULL, NULL),
	F(2, TFT_PB_STRING, 0, struct rm_map_entry, value, "value", NULL, NULL),
};
const struct tft_pb_msg tft_rm_thread_name_msg = {"DeviceStepStats.ThreadNamesEntry",
						  thread_name_fields, 2,
						  offsetof(struct rm_map_entry, has)};

static const struct tft_pb_field stepstats_fields[] = {
	H(1, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "dev_stats", tft_rm_on_dev_stats, NULL),
};
const struct tft_pb_msg tft_rm_stepstats_msg = {"StepStats", stepstats_fields, 1, TFT_PB_NOOFF};

static const struct tft_pb_field session_meta_fields[] = {
	F(1, TFT_PB_STRING, 0, struct rm_session_meta, name, "name", NULL, NULL),
	F(2, TFT_PB_INT64, 0, struct rm_session_meta, version, "version", NULL, NULL),
};
static const struct tft_pb_msg session_meta_msg = {"SessionMetadata", session_meta_fields, 2,
						   offsetof(struct rm_session_meta, has)};

/* FunctionGraphs: only its partition_graphs (what ran) are kept. */
static const struct tft_pb_field function_graphs_fields[] = {
	H(1, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "partition_graphs", tft_rm_on_graph, NULL),
};
const struct tft_pb_msg tft_rm_function_graphs_msg = {"RunMetadata.FunctionGraphs",
						      function_graphs_fields, 1, TFT_PB_NOOFF};

/* cost_graph and the graphs go to the session's graph_nodes (collect/ingest_graph.h). */
static const struct tft_pb_field runmeta_fields[] = {
	H(1, TFT_PB_MESSAGE, 0, "step_stats", tft_rm_on_step_stats, NULL),
	H(2, TFT_PB_MESSAGE, 0, "cost_graph", tft_rm_on_graph, NULL),
	H(3, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "partition_graphs", tft_rm_on_graph, NULL),
	H(4, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "function_graphs", tft_rm_on_graph, NULL),
	F(5, TFT_PB_MESSAGE, 0, struct rm_runmeta, session, "session_metadata", NULL, &session_meta_msg),
};
const struct tft_pb_msg tft_rm_runmeta_msg = {"RunMetadata", runmeta_fields, 5,
					      offsetof(struct rm_runmeta, has)};
