/* SPDX-License-Identifier: MIT */
/*
 * RunMetadata / StepStats importer (binary or text): NodeExecStats become
 * slices with every recorded field kept as args; network ops go to a comm
 * track per device and _Send -> RecvTensor -> _Recv chains become flows, as
 * do the dataflow edges timeline.py draws (producer -> consumer, from the
 * labels' inputs) and each GPU kernel's launch by its op (emit_dataflow).
 *
 * Speed (the per-node cost is the import's): binary nodes are decoded by a
 * direct reader (fast_node) that hands anything unusual back to the table
 * decoder, and what a node's label and name imply (parse, args, category,
 * flow key) is memoised per (device, node_name, timeline_label) in node
 * templates. Both give byte-for-byte what the general path gives.
 *
 * Binary input is walked twice in all: one pre-pass over the dev_stats
 * (scan_devices: are the devices unique, what each DeviceStepStats holds)
 * and the decode, whose nodes skip the table decoder when the pre-pass
 * found their DeviceStepStats simple (nodes_direct). The per-node JSON
 * records (memory, output, ...) are written with one reservation each.
 *
 * Threads: with opts->threads >= 2, binary input whose devices each appear
 * once is decoded on several threads, devices (or runs of a large device's
 * nodes) at a time, each thread storing what it decoded through a writer
 * lane; the session is the one-thread import's (see "parallel import").
 */
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define TFT_COMM_AVX2 1 /* comm_word_avx2(), chosen at run time */
#endif

#include "codec/json_write.h"
#include "codec/pb_text.h"
#include "codec/pb_wire.h"
#include "collect/ingest_runmeta.h"
#include "collect/tf_names.h"
#include "collect/tf_proto.h"
#include "core/grow.h"
#include "core/strtab.h"
#include "collect/ingest_graph.h"
#include "store/graph.h"
#include "store/sorter.h"

#define MAX_ARGS 40

/* ---- a tiny growable byte buffer for JSON-valued args ---------------------- */

struct jbuf {
	char *p; /* owned */
	size_t len, cap;
	int oom;
};

static int jb_grow(struct jbuf *b, size_t n)
{
	size_t cap;
	char *np;

	if (b->oom)
		return -1;
	cap = b->cap ? b->cap : 256;
	while (cap - b->len < n)
		cap *= 2;
	np = realloc(b->p, cap);
	if (!np) {
		b->oom = 1;
		return -1;
	}
	b->p = np;
	b->cap = cap;
	return 0;
}

/* Room for n more bytes: 0, or -1 (b->oom set) when out of memory. */
static inline int jb_reserve(struct jbuf *b, size_t n)
{
	if (__builtin_expect(b->cap - b->len >= n, 1))
		return 0;
	return jb_grow(b, n);
}

static inline void jb_raw(struct jbuf *b, const char *s, size_t n)
{
	if (!n || jb_reserve(b, n + 1))
		return;
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

static void jb_lit(struct jbuf *b, const char *s)
{
	jb_raw(b, s, strlen(s));
}

static void jb_str(struct jbuf *b, const void *s, size_t n)
{
	if (jb_reserve(b, tft_json_escape_bound(n) + 3))
		return;
	b->p[b->len++] = '"';
	b->len += tft_json_escape(b->p + b->len, s, n);
	b->p[b->len++] = '"';
}

/* Integers are formatted in place (at most 20 characters). */
static void jb_int(struct jbuf *b, int64_t v)
{
	if (jb_reserve(b, 24))
		return;
	b->len += tft_json_fmt_int(b->p + b->len, v);
}

/* ',' unless the buffer is empty or ends with an opener. */
static inline void jb_sep(struct jbuf *b)
{
	if (b->len && b->p[b->len - 1] != '[' && b->p[b->len - 1] != '{')
		jb_raw(b, ",", 1);
}

/* "key": after a separator; k is a string literal (its length is a constant). */
#define jb_key(b, k) jb_keyn((b), "\"" k "\":", sizeof("\"" k "\":") - 1)

static inline void jb_keyn(struct jbuf *b, const char *quoted, size_t n)
{
	jb_sep(b);
	jb_raw(b, quoted, n);
}

/*
 * Unchecked writers for the per-node JSON records: the caller reserves room
 * for a whole record once (a bound of everything it writes) and then writes
 * through a cursor, instead of a bounds check and a call per piece. Same
 * bytes as the jb_*() writers.
 */
#define JU_INT 21 /* '-' and 20 digits */

static inline char *ju_raw(char *o, const void *s, size_t n)
{
	if (n)
		memcpy(o, s, n);
	return o + n;
}

#define ju_lit(o, s) ju_raw((o), (s), sizeof(s) - 1)

/* "key": after ',' unless the object or array was just opened (as jb_key). */
#define ju_key(o, k) ju_keyn((o), "\"" k "\":", sizeof("\"" k "\":") - 1)

static inline char *ju_keyn(char *o, const char *quoted, size_t n)
{
	if (o[-1] != '[' && o[-1] != '{')
		*o++ = ',';
	return ju_raw(o, quoted, n);
}

static inline char *ju_int(char *o, int64_t v)
{
	return o + tft_json_fmt_int(o, v);
}

static inline char *ju_str(char *o, const void *s, size_t n)
{
	*o++ = '"';
	o += tft_json_escape(o, s, n);
	*o++ = '"';
	return o;
}

/* ---- message structs and tables -------------------------------------------- */



#define F TFT_PB_FIELD
#define H TFT_PB_HOOK

struct rm_alloc_desc {
	uint64_t has;
	int64_t requested_bytes, allocated_bytes;
	struct tft_pb_bytes allocator_name;
	int64_t allocation_id, has_single_reference;
	uint64_t ptr;
};

static const struct tft_pb_field alloc_desc_fields[] = {
	F(1, TFT_PB_INT64, 0, struct rm_alloc_desc, requested_bytes, "requested_bytes", NULL, NULL),
	F(2, TFT_PB_INT64, 0, struct rm_alloc_desc, allocated_bytes, "allocated_bytes", NULL, NULL),
	F(3, TFT_PB_STRING, 0, struct rm_alloc_desc, allocator_name, "allocator_name", NULL, NULL),
	F(4, TFT_PB_INT64, 0, struct rm_alloc_desc, allocation_id, "allocation_id", NULL, NULL),
	F(5, TFT_PB_BOOL, 0, struct rm_alloc_desc, has_single_reference, "has_single_reference", NULL, NULL),
	F(6, TFT_PB_UINT64, 0, struct rm_alloc_desc, ptr, "ptr", NULL, NULL),
};
static const struct tft_pb_msg alloc_desc_msg = {"AllocationDescription", alloc_desc_fields, 6,
						 offsetof(struct rm_alloc_desc, has)};

static int on_td_shape(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v);

struct rm_tensor_desc {
	uint64_t has;
	int64_t dtype;
	struct tft_tf_shape shape;
	struct rm_alloc_desc alloc;
};

static const struct tft_pb_field tensor_desc_fields[] = {
	F(1, TFT_PB_ENUM, 0, struct rm_tensor_desc, dtype, "dtype", NULL, &tft_tf_dtype_enum),
	H(2, TFT_PB_MESSAGE, 0, "shape", on_td_shape, NULL),
	F(4, TFT_PB_MESSAGE, 0, struct rm_tensor_desc, alloc, "allocation_description", NULL,
	  &alloc_desc_msg),
};
static const struct tft_pb_msg tensor_desc_msg = {"TensorDescription", tensor_desc_fields, 3,
						  offsetof(struct rm_tensor_desc, has)};

struct rm_output {
	uint64_t has;
	int64_t slot;
	struct rm_tensor_desc td;
};

static const struct tft_pb_field output_fields[] = {
	F(1, TFT_PB_INT32, 0, struct rm_output, slot, "slot", NULL, NULL),
	F(3, TFT_PB_MESSAGE, 0, struct rm_output, td, "tensor_description", NULL, &tensor_desc_msg),
};
static const struct tft_pb_msg output_msg = {"NodeOutput", output_fields, 2,
					     offsetof(struct rm_output, has)};

struct rm_alloc_rec {
	uint64_t has;
	int64_t alloc_micros, alloc_bytes;
};

static const struct tft_pb_field alloc_rec_fields[] = {
	F(1, TFT_PB_INT64, 0, struct rm_alloc_rec, alloc_micros, "alloc_micros", NULL, NULL),
	F(2, TFT_PB_INT64, 0, struct rm_alloc_rec, alloc_bytes, "alloc_bytes", NULL, NULL),
};
static const struct tft_pb_msg alloc_rec_msg = {"AllocationRecord", alloc_rec_fields, 2,
						offsetof(struct rm_alloc_rec, has)};

struct rm_mem_used {
	uint64_t has;
	struct tft_pb_bytes allocator_name;
	int64_t total_bytes, peak_bytes, live_bytes, allocator_bytes_in_use;
};

static int on_alloc_rec(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v);

static const struct tft_pb_field mem_used_fields[] = {
	F(1, TFT_PB_STRING, 0, struct rm_mem_used, allocator_name, "allocator_name", NULL, NULL),
	F(2, TFT_PB_INT64, 0, struct rm_mem_used, total_bytes, "total_bytes", NULL, NULL),
	F(3, TFT_PB_INT64, 0, struct rm_mem_used, peak_bytes, "peak_bytes", NULL, NULL),
	F(4, TFT_PB_INT64, 0, struct rm_mem_used, live_bytes, "live_bytes", NULL, NULL),
	F(5, TFT_PB_INT64, 0, struct rm_mem_used, allocator_bytes_in_use, "allocator_bytes_in_use",
	  NULL, NULL),
	H(6, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "allocation_records", on_alloc_rec, NULL),
};
static const struct tft_pb_msg mem_used_msg = {"AllocatorMemoryUsed", mem_used_fields, 6,
					       offsetof(struct rm_mem_used, has)};

struct rm_mem_stats {
	uint64_t has;
	int64_t temp_memory_size, device_temp_memory_size, persistent_memory_size,
		device_persistent_memory_size;
};

static int on_alloc_id(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v);

static const struct tft_pb_field mem_stats_fields[] = {
	F(1, TFT_PB_INT64, 0, struct rm_mem_stats, temp_memory_size, "temp_memory_size", NULL, NULL),
	F(2, TFT_PB_INT64, 0, struct rm_mem_stats, device_temp_memory_size, "device_temp_memory_size",
	  NULL, NULL),
	F(3, TFT_PB_INT64, 0, struct rm_mem_stats, persistent_memory_size, "persistent_memory_size",
	  NULL, NULL),
	F(4, TFT_PB_INT64, 0, struct rm_mem_stats, device_persistent_memory_size,
	  "device_persistent_memory_size", NULL, NULL),
	H(5, TFT_PB_INT64, TFT_PB_F_REPEATED, "persistent_tensor_alloc_ids", on_alloc_id, NULL),
	H(6, TFT_PB_INT64, TFT_PB_F_REPEATED, "device_persistent_tensor_alloc_ids", on_alloc_id, NULL),
};
static const struct tft_pb_msg mem_stats_msg = {"MemoryStats", mem_stats_fields, 6,
						offsetof(struct rm_mem_stats, has)};

struct rm_node {
	uint64_t has;
	struct tft_pb_bytes node_name;
	int64_t all_start_micros, op_start_rel_micros, op_end_rel_micros, all_end_rel_micros;
	struct tft_pb_bytes timeline_label;
	int64_t scheduled_micros;
	uint64_t thread_id;
	int64_t all_start_nanos, op_start_rel_nanos, op_end_rel_nanos, all_end_rel_nanos,
		scheduled_nanos;
	uint32_t nout; /* output fields (timeline.py's tensors: node_name, node_name:1, ...) */
};

static int on_memory(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v);
static int on_output(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v);
static int on_ref_tensor(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v);
static int on_mem_stats(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v);

/* Indexes into node_fields (presence bits). */
enum {
	NF_NAME, NF_ALL_START_US, NF_OP_START_US, NF_OP_END_US, NF_ALL_END_US, NF_MEMORY, NF_OUTPUT,
	NF_LABEL, NF_SCHED_US, NF_THREAD, NF_REF, NF_MEMSTATS, NF_ALL_START_NS, NF_OP_START_NS,
	NF_OP_END_NS, NF_ALL_END_NS, NF_SCHED_NS,
};

/* The sub-message fields whose JSON goes to the per-node buffers. */
#define NF_NESTED (1ull << NF_MEMORY | 1ull << NF_OUTPUT | 1ull << NF_REF | 1ull << NF_MEMSTATS)

static const struct tft_pb_field node_fields[] = {
	F(1, TFT_PB_STRING, 0, struct rm_node, node_name, "node_name", NULL, NULL),
	F(2, TFT_PB_INT64, 0, struct rm_node, all_start_micros, "all_start_micros", NULL, NULL),
	F(3, TFT_PB_INT64, 0, struct rm_node, op_start_rel_micros, "op_start_rel_micros", NULL, NULL),
	F(4, TFT_PB_INT64, 0, struct rm_node, op_end_rel_micros, "op_end_rel_micros", NULL, NULL),
	F(5, TFT_PB_INT64, 0, struct rm_node, all_end_rel_micros, "all_end_rel_micros", NULL, NULL),
	H(6, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "memory", on_memory, NULL),
	H(7, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "output", on_output, NULL),
	F(8, TFT_PB_STRING, 0, struct rm_node, timeline_label, "timeline_label", NULL, NULL),
	F(9, TFT_PB_INT64, 0, struct rm_node, scheduled_micros, "scheduled_micros", NULL, NULL),
	F(10, TFT_PB_UINT32, 0, struct rm_node, thread_id, "thread_id", NULL, NULL),
	H(11, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "referenced_tensor", on_ref_tensor, NULL),
	H(12, TFT_PB_MESSAGE, 0, "memory_stats", on_mem_stats, NULL),
	F(13, TFT_PB_INT64, 0, struct rm_node, all_start_nanos, "all_start_nanos", NULL, NULL),
	F(14, TFT_PB_INT64, 0, struct rm_node, op_start_rel_nanos, "op_start_rel_nanos", NULL, NULL),
	F(15, TFT_PB_INT64, 0, struct rm_node, op_end_rel_nanos, "op_end_rel_nanos", NULL, NULL),
	F(16, TFT_PB_INT64, 0, struct rm_node, all_end_rel_nanos, "all_end_rel_nanos", NULL, NULL),
	F(17, TFT_PB_INT64, 0, struct rm_node, scheduled_nanos, "scheduled_nanos", NULL, NULL),
};
static const struct tft_pb_msg node_msg = {"NodeExecStats", node_fields,
					   sizeof(node_fields) / sizeof(node_fields[0]),
					   offsetof(struct rm_node, has)};

struct rm_devstats {
	uint64_t has;
	struct tft_pb_bytes device;
};

static int on_node_count(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v);
static int on_node_stats(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v);
static int on_thread_name(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v);

/*
 * DeviceStepStats is walked twice: the device name and thread names first
 * (thread_names follow the nodes on the wire), then the nodes. Nothing is
 * buffered, so memory does not grow with the number of nodes. For binary
 * input the first walk is usually the pre-pass's (scan_devices), and the
 * nodes of a simple DeviceStepStats are read by nodes_direct().
 */
static const struct tft_pb_field devstats_fields[] = {
	F(1, TFT_PB_STRING, 0, struct rm_devstats, device, "device", NULL, NULL),
	H(2, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "node_stats", on_node_count, NULL),
	H(3, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "thread_names", on_thread_name, NULL),
};
static const struct tft_pb_msg devstats_msg = {"DeviceStepStats", devstats_fields, 3,
					       offsetof(struct rm_devstats, has)};
static const struct tft_pb_field devstats_nodes_fields[] = {
	H(2, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "node_stats", on_node_stats, NULL),
};
static const struct tft_pb_msg devstats_nodes_msg = {"DeviceStepStats", devstats_nodes_fields, 1,
						     TFT_PB_NOOFF};

struct rm_map_entry {
	uint64_t has;
	uint64_t key;
	struct tft_pb_bytes value;
};

static const struct tft_pb_field thread_name_fields[] = {
	F(1, TFT_PB_UINT32, 0, struct rm_map_entry, key, "key", NULL, NULL),
	F(2, TFT_PB_STRING, 0, struct rm_map_entry, value, "value", NULL, NULL),
};
static const struct tft_pb_msg thread_name_msg = {"DeviceStepStats.ThreadNamesEntry",
						  thread_name_fields, 2,
						  offsetof(struct rm_map_entry, has)};

static int on_dev_stats(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v);

static const struct tft_pb_field stepstats_fields[] = {
	H(1, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "dev_stats", on_dev_stats, NULL),
};
static const struct tft_pb_msg stepstats_msg = {"StepStats", stepstats_fields, 1, TFT_PB_NOOFF};

struct rm_session_meta {
	uint64_t has;
	struct tft_pb_bytes name;
	int64_t version;
};

static const struct tft_pb_field session_meta_fields[] = {
	F(1, TFT_PB_STRING, 0, struct rm_session_meta, name, "name", NULL, NULL),
	F(2, TFT_PB_INT64, 0, struct rm_session_meta, version, "version", NULL, NULL),
};
static const struct tft_pb_msg session_meta_msg = {"SessionMetadata", session_meta_fields, 2,
						   offsetof(struct rm_session_meta, has)};

static int on_step_stats(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v);

struct rm_runmeta {
	uint64_t has;
	struct rm_session_meta session;
};

static int on_graph(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v);

/* FunctionGraphs: only its partition_graphs (what ran) are kept. */
static const struct tft_pb_field function_graphs_fields[] = {
	H(1, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "partition_graphs", on_graph, NULL),
};
static const struct tft_pb_msg function_graphs_msg = {"RunMetadata.FunctionGraphs",
						      function_graphs_fields, 1, TFT_PB_NOOFF};

/* cost_graph and the graphs go to the session's graph_nodes (collect/ingest_graph.h). */
static const struct tft_pb_field runmeta_fields[] = {
	H(1, TFT_PB_MESSAGE, 0, "step_stats", on_step_stats, NULL),
	H(2, TFT_PB_MESSAGE, 0, "cost_graph", on_graph, NULL),
	H(3, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "partition_graphs", on_graph, NULL),
	H(4, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "function_graphs", on_graph, NULL),
	F(5, TFT_PB_MESSAGE, 0, struct rm_runmeta, session, "session_metadata", NULL, &session_meta_msg),
};
static const struct tft_pb_msg runmeta_msg = {"RunMetadata", runmeta_fields, 5,
					      offsetof(struct rm_runmeta, has)};

/* ---- importer state ----------------------------------------------------------- */

struct rm_dev {
	uint32_t name;       /* string id of the full device name */
	uint32_t process;    /* writer process id */
	uint32_t track;      /* compute/stream track */
	uint32_t comm_track; /* "<device> (comm)", TFT_NONE until needed */
	int gputrace;        /* stream/memcpy device: labels are kernels/memcpys */
	int continued;       /* its process comes from an earlier input this one continues */
	int64_t tid;         /* stream id, device index, or -1 for stream:all */
	char canon[160];     /* canonical device for send/recv matching */
	uint32_t entries;    /* dev_stats entries naming it so far */
	int tl_gputrace;     /* timeline.py's _is_gputrace_device: "/stream:" or "/memcpy" in its name */
};

struct rm_proc {
	char name[160];
	uint32_t id;
	int continued; /* an earlier input's process, continued (find_process) */
};

enum { ROLE_SEND = 0, ROLE_TRANSFER = 1, ROLE_RECV = 2 };

struct rm_comm {
	uint64_t key;   /* hash of (tensor, src device, dst device) */
	int64_t ts;
	int64_t end;    /* the op's end (ts + dur) */
	uint32_t track;
	uint32_t tensor; /* string id */
	uint8_t role;
	uint8_t cross;  /* source and destination devices of different workers (tasks) */
	uint32_t seq;   /* arrival order (stable sort) */
};

struct rm_thread {
	uint32_t tid;
	uint32_t name; /* string id */
};

/* A node event held back until its device is complete (see flush_device). */
struct rm_pend {
	struct tft_event ev; /* ev.args NULL: its args are pargs[args_off..+nargs) */
	uint32_t args_off;
	uint32_t seq;        /* arrival order, for a stable sort */
};

/*
 * A node template: what emit_node() derives from (device, node_name,
 * timeline_label) alone, memoised because a trace repeats the same nodes
 * with the same labels step after step. It holds the label's parse turned
 * into args (op, inputs, timeline_label, kernel, tensor, ...: always the
 * first args of a node, so they are copied as a block), the category, the
 * event name and the send/recv matching key, all as string ids of the
 * writer's table (stable for the whole import). A hit skips the label
 * parse, the annotation split and about ten string interns; the result is
 * the same because every value is a pure function of the key bytes, and
 * on a miss the original code runs in the original order (so string ids
 * are handed out in the same order too).
 */
#define TMPL_SLOTS 8192u   /* a power of two */
#define TMPL_WAYS 4u       /* slots per set: keys whose hashes share a set do not evict each other */
#define TMPL_SETS (TMPL_SLOTS / TMPL_WAYS)
#define TMPL_MAX_KEY 1024u /* longer node_name + label: not cached (bounds the keys' memory) */
#define TMPL_MAX_ARGS 16   /* label-derived args (at most 16 today); a multiple of 4 */

/*
 * What df_note() derives from (device, node_name, timeline_label) alone,
 * memoised with the node's template: its name's hash, a kernel's ops, and
 * up to DF_TMPL_IN inputs' hashes (timeline.py's parse of the label).
 */
#define DF_TMPL_IN 4
#define DF_NIN_MANY 255 /* more inputs than a template holds: parsed again per node */

struct rm_dft {
	uint64_t name_hash;          /* hash of its event name's bytes */
	uint32_t op, op2;            /* kernel or memcpy: the ops it names (rm_df.op, op2) */
	uint8_t recv;                /* a RecvTensor (no arrows into it) */
	uint8_t nin;                 /* inputs, or DF_NIN_MANY */
	uint64_t in[2 * DF_TMPL_IN]; /* per input: its hash, its Send/Recv-stripped name's (0: none) */
};

struct rm_tmpl {
	uint64_t hash;
	char *key;          /* owned: node_name bytes, then label bytes */
	uint32_t key_cap;
	uint32_t name_len, label_len;
	uint32_t dev;       /* index in rm->devs + 1; 0: empty slot */
	uint32_t cat, ev_name;
	uint32_t comm_tensor; /* send/recv: string id of the tensor */
	uint64_t comm_key;  /* send/recv: add_comm()'s key */
	uint8_t nargs;
	uint8_t comm;       /* emitted on the comm track */
	uint8_t has_comm;   /* adds a send/recv/transfer endpoint */
	uint8_t role;       /* ROLE_* when has_comm */
	uint8_t comm_cross; /* its source and destination are different workers */
	struct rm_dft df;   /* its dataflow part */
	struct tft_arg args[TMPL_MAX_ARGS];
};

/*
 * The JSON args of a node's repeated sub-messages (memory, output,
 * referenced_tensor, memory_stats) are a pure function of their wire bytes,
 * and a trace repeats them node after node (the same shapes, allocators and
 * sizes each step). The memo maps those bytes (one contiguous run of the
 * field, keys and lengths included, borrowed from the input) to the string
 * id of the JSON, so a hit skips building, hashing and interning it. The
 * string was interned when the entry was made, so the ids handed out, and
 * their order, stay what the plain path gives.
 */
enum { JM_MEMORY, JM_OUTPUT, JM_REF, JM_MEMSTATS, JM_KINDS };
#define JMEMO_SLOTS 8192u /* a power of two; two ways per set */

struct rm_jmemo {
	uint64_t hash;
	const uint8_t *key; /* borrowed from the input; NULL: empty */
	uint32_t len;
	uint32_t id;        /* string id of the JSON */
};

/* A node's fields of one kind as fast_node() met them. */
enum { JR_NONE, JR_RUN, JR_HIT, JR_MISS, JR_EAGER };

struct rm_jrun {
	const uint8_t *lo, *hi; /* JR_RUN, JR_MISS: the run of fields */
	struct rm_jmemo *slot;  /* JR_MISS: the entry to fill once interned, or NULL */
	uint64_t hash;          /* JR_MISS */
	uint32_t id;            /* JR_HIT */
	int state;              /* JR_*; JR_EAGER: decoded as met (more than one run) */
};

/*
 * A node as its dataflow and launch flows need it (df_note(), emit_dataflow()):
 * kept in node order, device after device, by every thread that decodes
 * (the parallel import concatenates its jobs' records in device order).
 */
struct rm_df {
	int64_t ts;               /* its slice's start (ns): where its flow ends bind */
	int64_t start_us, end_us; /* timeline.py's all_start_micros and end, for its lanes */
	uint32_t track, name;     /* its slice's track and name */
	uint32_t op, op2;         /* kernel or memcpy: string ids of the op it names (its node arg,
				   * then timeline.py's name for it when another), 0: none */
	uint32_t dev;             /* index in rm->devs */
	int32_t entry;            /* cur_entry: a repeated device's later dev_stats entry, else -1 */
	uint32_t hoff;            /* its hashes in rm->dfh: its outputs' names (its name, "name:1" ...),
				   * then per input the input's and (0 if none) its Send/Recv-stripped name's */
	uint32_t nout, nin;
	uint32_t lane;            /* timeline.py's lane (emit_dataflow) */
	uint16_t flags;           /* DF_* */
	uint16_t wk;              /* whose rm->dfh holds its hashes: 0 the driver's, else worker wk - 1's */
};

enum { DF_GPUTRACE = 1, DF_RECV = 2, DF_NOLABEL = 4 };

struct rm {
	struct tft_writer *w;       /* borrowed */
	struct tft_sorter *sorter;  /* owned */
	struct tft_pb_dec *dec;     /* borrowed */
	struct tft_error *err;      /* borrowed */
	const struct tft_ingest_opts *opts; /* borrowed, may be NULL */
	size_t input_len;
	const uint8_t *input;       /* borrowed: the whole input */
	int text, stepstats;        /* its format */
	/*
	 * The earliest node start of this input (input_start()), to tell
	 * whether it continues an earlier input's process of the same name
	 * (that worker's next steps): INT64_MIN when unsure; computed once.
	 */
	int64_t start;
	int start_known;
	int64_t step_pos; /* the position its step will have among the session's steps */

	struct rm_proc *procs; /* owned */
	uint32_t nprocs, cprocs;
	struct rm_dev *devs;   /* owned */
	uint32_t ndevs, cdevs;

	/* Current DeviceStepStats. */
	struct rm_dev *cur;
	uint64_t dev_nodes;      /* its node_stats count */
	struct rm_thread *threads; /* owned: its thread_names */
	uint32_t nthreads, cthreads;

	/* Current NodeExecStats's nested values, as JSON. */
	struct jbuf j_memory, j_output, j_ref, j_memstats, j_tmp, j_dims, j_ids, j_ids2, j_dnames;
	struct rm_jrun jrun[JM_KINDS]; /* the current node's JSON args, by the memo (fast_node) */
	struct rm_jmemo *jmemo;        /* owned, lazy: JMEMO_SLOTS entries */
	int dim_named;         /* a dim of the current shape has a name */
	uint64_t node_index;   /* position of the current node in its device's node_stats */
	struct jbuf scratch;

	/*
	 * The dev_stats entries in input order (device index each), for the
	 * tf.timeline export, which gives each entry a pair of pids: stored as
	 * session metadata when a device repeats or has no nodes (odd), and
	 * the nodes of a repeated device's later entry carry the entry's
	 * position (k_dev_entry; cur_entry, -1 otherwise).
	 */
	uint32_t *entries; /* owned */
	uint32_t nentries, centries;
	int entries_par;   /* the parallel decode noted them all */
	int entries_odd;
	int64_t cur_entry;

	struct rm_comm *comm; /* owned */
	uint32_t ncomm, ccomm;
	struct rm_df *df;     /* owned: the nodes, for the dataflow and launch flows */
	uint32_t ndf, cdf;
	uint64_t *dfh;        /* owned: their tensor and input name hashes (rm_df.hoff) */
	uint32_t ndfh, cdfh;
	/*
	 * The parallel import: df is the driver's, sized for every node of the
	 * input, each device's records at df_base + node index (df_placed);
	 * hashes stay in each worker's dfh (rm_df.wk: df_wk), handed to the
	 * driver's wkdfh after the join. All 0 / NULL otherwise.
	 */
	struct rm_gnode *gnodes; /* owned: the partition graphs' nodes (on_gnode), mask + 1 slots */
	size_t gmask, ngnodes;
	uint64_t *gin;           /* owned: their inputs' hashes */
	uint32_t ngin, cgin;
	int df_placed;
	uint64_t df_base;
	uint16_t df_wk;
	uint64_t **wkdfh;     /* owned (with the arrays): per worker */
	uint32_t nwkdfh;

	/*
	 * The current node's args: args_buf, or in direct mode the free tail of
	 * pargs (reserved before the node), so queue_event() need not copy them.
	 */
	struct tft_arg *args;
	struct tft_arg args_buf[MAX_ARGS];
	uint16_t nargs;

	struct tft_graph_import *graphs; /* owned, lazy: partition_graphs, cost_graph */
	const char *name;      /* borrowed: the input's name */
	uint32_t nfunc;        /* function_graphs seen */
	/*
	 * Devices are buffered, sorted in place when needed and appended straight
	 * to the writer (no sorter) when every device name appears once in the
	 * input (`direct`); a device larger than pend_budget bytes goes through
	 * the sorter (`spilled`).
	 */
	int direct, spilled;
	struct rm_pend *pend;  /* owned */
	uint32_t npend, cpend;
	struct tft_arg *pargs; /* owned */
	uint32_t npargs, cpargs;
	size_t pend_budget;
	int64_t step_index;    /* the step this file becomes */
	const char *step_name; /* borrowed; NULL: session name or file base name */
	int64_t min_ts, max_end;
	uint64_t nodes;
	uint32_t step_process; /* the one process seen, TFT_NONE if several */
	int procs_seen;
	struct timespec last_progress;

	/* Interned keys. */
	uint32_t k_op, k_inputs, k_label, k_all_start_us, k_op_start_us, k_op_end_us, k_all_end_us,
		k_sched_us, k_thread, k_thread_name, k_memory, k_output, k_ref, k_memstats,
		k_all_start_ns, k_op_start_ns, k_op_end_ns, k_all_end_ns, k_sched_ns, k_tensor,
		k_src_dev, k_dst_dev, k_bytes, k_regs, k_shm, k_grid, k_block, k_annotation,
		k_async, k_to_device, k_kernel, k_node, k_device, k_node_index, k_dev_entry, k_step_pos;
	uint32_t c_op, c_comm, c_kernel, c_memcpy, flow_cat, c_dataflow, c_launch;

	struct rm_tmpl *tmpl; /* owned, lazy: TMPL_SLOTS entries (their keys owned too) */
	uint64_t *tmpl_tag;   /* owned, lazy: per slot (hash ^ epoch) | 1, 0 when empty (one line per set) */
	uint8_t *tmpl_next;   /* owned, lazy: per set the way to evict next */
	uint64_t tmpl_epoch;  /* this input's: tags of an earlier input's table never match */
	struct rm_tmpl_cache *tmpl_cache; /* the session's spare table (the driving thread's rm only) */

	/* Binary input: the dev_stats the pre-pass walked (scan_devices). */
	struct rm_dinfo *dinfo; /* owned */
	uint32_t ndinfo, next_dinfo;
	/*
	 * A direct node walk (nodes_direct) that stopped hands its device to the
	 * table decoder, which skips the skip_nodes nodes already done and then
	 * reports redo_err (when not 0) at the node that failed.
	 */
	uint64_t skip_nodes;
	int redo_err;

	/*
	 * A worker of the parallel import (see "parallel import" below): the
	 * device it decodes (registered beforehand), the lane its events go
	 * through, the shared state (progress) and its pend budget; deferred
	 * is set when the device outgrows that budget (it is then redone
	 * serially). All NULL / 0 in the serial import.
	 */
	struct rm_dev *job_dev;        /* borrowed */
	struct tft_writer_lane *lane;  /* owned by the driving thread */
	struct rm_par *par;            /* borrowed */
	uint64_t par_pos;              /* input offset up to which progress was counted */
	uint64_t par_nodes;            /* rm->nodes counted into the shared progress */
	int deferred;
	int try_par;                   /* the driving import may try par_stepstats() */
};

/* par_stepstats(): the input is not for it (nothing done); decode it serially. */
#define RM_SERIAL 1

static uint32_t intern(struct rm *rm, const void *s, size_t n)
{
	if (!n)
		return 0; /* id 0 is "" (and s may be NULL) */
	return tft_writer_intern(rm->w, (const char *)s, n);
}

static uint32_t intern_c(struct rm *rm, const char *s)
{
	return tft_writer_intern_cstr(rm->w, s);
}

static void arg_int(struct rm *rm, uint32_t key, int64_t v)
{
	struct tft_arg *a;

	if (rm->nargs >= MAX_ARGS)
		return;
	a = &rm->args[rm->nargs++];
	a->key = key;
	a->type = TFT_ARG_INT;
	a->v.i = v;
}

static void arg_bool(struct rm *rm, uint32_t key, int v)
{
	arg_int(rm, key, v != 0);
	rm->args[rm->nargs - 1].type = TFT_ARG_BOOL;
}

static int arg_strn(struct rm *rm, uint32_t key, const void *s, size_t n, int type)
{
	uint32_t id;
	struct tft_arg *a;

	if (rm->nargs >= MAX_ARGS)
		return 0;
	id = intern(rm, s, n);
	if (id == UINT32_MAX)
		return TFT_ENOMEM;
	a = &rm->args[rm->nargs++];
	a->key = key;
	a->type = (uint32_t)type;
	a->v.str = id;
	return 0;
}

static int arg_tfstr(struct rm *rm, uint32_t key, struct tft_tf_str s)
{
	if (!s.len)
		return 0;
	return arg_strn(rm, key, s.p, s.len, TFT_ARG_STR);
}

/* ---- nested-message handlers (write JSON into the per-node buffers) ----------- */

static void json_dim(struct rm *rm, const struct tft_tf_dim *dim);

/* A dim of the shape decoded by the table (tft_tf_dim_fn; user: the struct rm). */
static void on_shape_dim(void *user, const struct tft_tf_dim *dim)
{
	json_dim(user, dim);
}

static int on_td_shape(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct rm_tensor_desc *td = msg;

	if (!td) /* (a table row stores nothing without a struct to fill) */
		return 0;
	return tft_tf_shape_decode(&v->sub, ctx, &td->shape, on_shape_dim, ctx);
}

/* One TensorShapeProto.Dim: its size to j_dims, its name to j_dnames. */
static void json_dim(struct rm *rm, const struct tft_tf_dim *dim)
{
	struct jbuf *d = &rm->j_dims, *nm = &rm->j_dnames;
	char *p;

	if (jb_reserve(d, 1 + JU_INT) || jb_reserve(nm, 3 + tft_json_escape_bound(dim->name.len)))
		return;
	p = d->p + d->len;
	if (d->len)
		*p++ = ','; /* (these lists hold values only: no opener to follow) */
	p = ju_int(p, dim->size);
	d->len = (size_t)(p - d->p);
	/* Dim names ("batch", ...) go to a parallel array: "shape" stays ints. */
	p = nm->p + nm->len;
	if (nm->len)
		*p++ = ',';
	p = ju_str(p, dim->name.p, dim->name.len);
	nm->len = (size_t)(p - nm->p);
	rm->dim_named |= dim->name.len != 0;
}

/* Room json_alloc_desc() needs at most. */
static inline size_t alloc_desc_bound(const struct rm_alloc_desc *a)
{
	return 256 + tft_json_escape_bound(a->allocator_name.len);
}

/* The AllocationDescription's fields at o, inside an open object. */
static char *json_alloc_desc(char *o, const struct rm_alloc_desc *a)
{
	if (a->has & (1u << 0)) {
		o = ju_key(o, "requested_bytes");
		o = ju_int(o, a->requested_bytes);
	}
	if (a->has & (1u << 1)) {
		o = ju_key(o, "allocated_bytes");
		o = ju_int(o, a->allocated_bytes);
	}
	if (a->has & (1u << 2)) {
		o = ju_key(o, "allocator_name");
		o = ju_str(o, a->allocator_name.p, a->allocator_name.len);
	}
	if (a->has & (1u << 3)) {
		o = ju_key(o, "allocation_id");
		o = ju_int(o, a->allocation_id);
	}
	if (a->has & (1u << 4)) {
		o = ju_key(o, "has_single_reference");
		o = a->has_single_reference ? ju_lit(o, "true") : ju_lit(o, "false");
	}
	if (a->has & (1u << 5)) {
		o = ju_key(o, "ptr");
		o += tft_json_fmt_uint(o, a->ptr);
	}
	return o;
}

static void json_output(struct rm *rm, const struct rm_output *o);

static int on_output(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct rm *rm = ctx;
	struct rm_output o;
	int r;

	if (((struct rm_node *)msg)->nout < UINT32_MAX)
		((struct rm_node *)msg)->nout++;
	memset(&o, 0, sizeof(o));
	rm->j_dims.len = 0;
	rm->j_dnames.len = 0;
	rm->dim_named = 0;
	r = tft_pb_wire_decode_sub(&v->sub, &output_msg, &o, ctx);
	if (r)
		return r;
	json_output(rm, &o);
	return 0;
}

/* One NodeOutput, appended to j_output (its dims are in j_dims / j_dnames). */
static void json_output(struct rm *rm, const struct rm_output *o)
{
	struct jbuf *b = &rm->j_output;
	char dbuf[48];
	const char *dname = NULL;
	size_t dlen = 0;
	char *p;

	if (o->td.has & (1u << 0)) {
		dname = tft_tf_dtype_name(o->td.dtype, dbuf, sizeof(dbuf));
		dlen = dname ? strlen(dname) : 0;
	}
	if (jb_reserve(b, 160 + dlen + rm->j_dims.len + rm->j_dnames.len +
			      alloc_desc_bound(&o->td.alloc)))
		return;
	p = b->p + b->len;
	p = b->len ? ju_lit(p, ",{") : ju_lit(p, "[{");
	p = ju_key(p, "slot");
	p = ju_int(p, o->slot);
	if (o->td.has & (1u << 0)) {
		p = ju_key(p, "dtype");
		if (dname) {
			*p++ = '"';
			p = ju_raw(p, dname, dlen);
			*p++ = '"';
		} else {
			p = ju_int(p, o->td.dtype);
		}
	}
	if (o->td.has & (1u << 1)) {
		p = ju_key(p, "shape");
		*p++ = '[';
		p = ju_raw(p, rm->j_dims.p, rm->j_dims.len);
		*p++ = ']';
		if (rm->dim_named) {
			p = ju_key(p, "dim_names");
			*p++ = '[';
			p = ju_raw(p, rm->j_dnames.p, rm->j_dnames.len);
			*p++ = ']';
		}
		if (o->td.shape.unknown_rank) {
			p = ju_key(p, "unknown_rank");
			p = ju_lit(p, "true");
		}
	}
	p = json_alloc_desc(p, &o->td.alloc);
	if ((o->td.has & (1u << 2)) && !o->td.alloc.requested_bytes && !o->td.alloc.allocated_bytes &&
	    !o->td.alloc.allocator_name.len && !o->td.alloc.allocation_id &&
	    !o->td.alloc.has_single_reference && !o->td.alloc.ptr) {
		/* present but all defaults: str(tensor_description) still prints it */
		p = ju_key(p, "allocation_description");
		p = ju_lit(p, "{}");
	}
	*p++ = '}';
	b->len = (size_t)(p - b->p);
}

static void json_ref_tensor(struct jbuf *b, const struct rm_alloc_desc *a)
{
	char *p;

	if (jb_reserve(b, 4 + alloc_desc_bound(a)))
		return;
	p = b->p + b->len;
	p = b->len ? ju_lit(p, ",{") : ju_lit(p, "[{");
	p = json_alloc_desc(p, a);
	*p++ = '}';
	b->len = (size_t)(p - b->p);
}

static int on_ref_tensor(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct rm *rm = ctx;
	struct rm_alloc_desc a;
	int r;

	memset(&a, 0, sizeof(a));
	r = tft_pb_wire_decode_sub(&v->sub, &alloc_desc_msg, &a, ctx);
	if (r)
		return r;
	json_ref_tensor(&rm->j_ref, &a);
	return 0;
}

/* One AllocationRecord, appended to j_tmp (the current AllocatorMemoryUsed's records). */
static void json_alloc_rec(struct jbuf *b, const struct rm_alloc_rec *a)
{
	char *p;

	if (jb_reserve(b, 48 + 2 * JU_INT))
		return;
	p = b->p + b->len;
	p = b->len ? ju_lit(p, ",{") : ju_lit(p, "{");
	p = ju_key(p, "alloc_micros");
	p = ju_int(p, a->alloc_micros);
	p = ju_key(p, "alloc_bytes");
	p = ju_int(p, a->alloc_bytes);
	*p++ = '}';
	b->len = (size_t)(p - b->p);
}

static int on_alloc_rec(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct rm *rm = ctx;
	struct rm_alloc_rec a;
	int r;

	memset(&a, 0, sizeof(a));
	r = tft_pb_wire_decode_sub(&v->sub, &alloc_rec_msg, &a, ctx);
	if (r)
		return r;
	json_alloc_rec(&rm->j_tmp, &a);
	return 0;
}

static void json_memory(struct rm *rm, const struct rm_mem_used *m);

static int on_memory(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct rm *rm = ctx;
	struct rm_mem_used m;
	int r;

	memset(&m, 0, sizeof(m));
	rm->j_tmp.len = 0;
	r = tft_pb_wire_decode_sub(&v->sub, &mem_used_msg, &m, ctx);
	if (r)
		return r;
	json_memory(rm, &m);
	return 0;
}

/* One AllocatorMemoryUsed, appended to j_memory (its records are in j_tmp). */
static void json_memory(struct rm *rm, const struct rm_mem_used *m)
{
	struct jbuf *b = &rm->j_memory;
	char *p;

	if (jb_reserve(b, 256 + tft_json_escape_bound(m->allocator_name.len) + rm->j_tmp.len))
		return;
	p = b->p + b->len;
	p = b->len ? ju_lit(p, ",{") : ju_lit(p, "[{");
	p = ju_key(p, "allocator_name");
	p = ju_str(p, m->allocator_name.p, m->allocator_name.len);
	if (m->has & (1u << 1)) {
		p = ju_key(p, "total_bytes");
		p = ju_int(p, m->total_bytes);
	}
	if (m->has & (1u << 2)) {
		p = ju_key(p, "peak_bytes");
		p = ju_int(p, m->peak_bytes);
	}
	if (m->has & (1u << 3)) {
		p = ju_key(p, "live_bytes");
		p = ju_int(p, m->live_bytes);
	}
	if (m->has & (1u << 4)) {
		p = ju_key(p, "allocator_bytes_in_use");
		p = ju_int(p, m->allocator_bytes_in_use);
	}
	if (rm->j_tmp.len) {
		p = ju_key(p, "allocation_records");
		*p++ = '[';
		p = ju_raw(p, rm->j_tmp.p, rm->j_tmp.len);
		*p++ = ']';
	}
	*p++ = '}';
	b->len = (size_t)(p - b->p);
}

static int on_alloc_id(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct rm *rm = ctx;
	struct jbuf *b = f->num == 5 ? &rm->j_ids : &rm->j_ids2;

	jb_sep(b);
	jb_int(b, v->n.i);
	return 0;
}

static void json_mem_stats(struct rm *rm, const struct rm_mem_stats *m);

static int on_mem_stats(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct rm *rm = ctx;
	struct rm_mem_stats m;
	int r;

	memset(&m, 0, sizeof(m));
	rm->j_ids.len = rm->j_ids2.len = 0;
	r = tft_pb_wire_decode_sub(&v->sub, &mem_stats_msg, &m, ctx);
	if (r)
		return r;
	json_mem_stats(rm, &m);
	return 0;
}

/* The MemoryStats, into j_memstats (its id lists are in j_ids / j_ids2). */
static void json_mem_stats(struct rm *rm, const struct rm_mem_stats *m)
{
	struct jbuf *b = &rm->j_memstats;

	b->len = 0;
	jb_raw(b, "{", 1);
	if (m->has & (1u << 0)) {
		jb_key(b, "temp_memory_size");
		jb_int(b, m->temp_memory_size);
	}
	if (m->has & (1u << 1)) {
		jb_key(b, "device_temp_memory_size");
		jb_int(b, m->device_temp_memory_size);
	}
	if (m->has & (1u << 2)) {
		jb_key(b, "persistent_memory_size");
		jb_int(b, m->persistent_memory_size);
	}
	if (m->has & (1u << 3)) {
		jb_key(b, "device_persistent_memory_size");
		jb_int(b, m->device_persistent_memory_size);
	}
	if (rm->j_ids.len) {
		jb_key(b, "persistent_tensor_alloc_ids");
		jb_raw(b, "[", 1);
		jb_raw(b, rm->j_ids.p, rm->j_ids.len);
		jb_raw(b, "]", 1);
	}
	if (rm->j_ids2.len) {
		jb_key(b, "device_persistent_tensor_alloc_ids");
		jb_raw(b, "[", 1);
		jb_raw(b, rm->j_ids2.p, rm->j_ids2.len);
		jb_raw(b, "]", 1);
	}
	jb_raw(b, "}", 1);
}

/* ---- fast path: NodeExecStats straight off the wire --------------------------
 *
 * The table decoder (codec/pb_wire.c) pays per field for the table lookup,
 * the error path bookkeeping and a handler call per sub-message. The
 * functions below decode a binary NodeExecStats and its sub-messages in one
 * pass with the same results: the same structs (last value wins, in-place
 * sub-messages merge, presence bits), the same JSON via the json_*()
 * writers. They only handle well-formed input with known fields and wire
 * types; on anything else (a malformed varint or length, an unknown field,
 * an unexpected wire type) they return -1 and the caller decodes the node
 * again with the table decoder, which reports errors exactly as before.
 */

/*
 * Zero a small struct with plain vector stores. GCC's generic tuning turns
 * a memset of 128 bytes or more into `rep stosq`, whose start-up cost
 * exceeds the whole store sequence; this runs twice per node.
 */
static inline void zero_small(void *p, size_t n)
{
	char *c = p;

	for (; n >= 64; c += 64, n -= 64)
		memset(c, 0, 64);
	if (n)
		memset(c, 0, n);
}

/*
 * Read a varint; -1 when it is malformed. Up to 8 bytes (56 bits: micros
 * timestamps, sizes) are decoded from one 64-bit load without a loop: the
 * first byte without its high bit ends the varint, the bytes up to it are
 * masked in and their 7-bit groups packed together in three steps. Longer
 * ones, and the last bytes of the input, take tft_pb_wire_varint().
 */
static inline int fp_varint(const uint8_t **pp, const uint8_t *end, uint64_t *v)
{
	const uint8_t *p = *pp;

	if (__builtin_expect(p < end && *p < 0x80, 1)) {
		*v = *p;
		*pp = p + 1;
		return 0;
	}
	if (end - p >= 8) {
		uint64_t w, stop, x;

		w = tft_pb_wire_le64(p); /* (one load where the host is little-endian) */
		stop = ~w & 0x8080808080808080ULL;
		if (stop) {
			x = w & (stop ^ (stop - 1)) & 0x7F7F7F7F7F7F7F7FULL;
			x = (x & 0x00FF00FF00FF00FFULL) | (x & 0xFF00FF00FF00FF00ULL) >> 1;
			x = (x & 0x0000FFFF0000FFFFULL) | (x & 0xFFFF0000FFFF0000ULL) >> 2;
			x = (x & 0x00000000FFFFFFFFULL) | (x & 0xFFFFFFFF00000000ULL) >> 4;
			*v = x;
			*pp = p + ((__builtin_ctzll(stop) + 1) >> 3);
			return 0;
		}
	}
	return tft_pb_wire_varint(pp, end, v) ? -1 : 0;
}

/* Read a length prefix and take the payload; -1 when it does not fit. */
static inline int fp_bytes(const uint8_t **pp, const uint8_t *end, struct tft_pb_bytes *b)
{
	uint64_t n;

	if (tft_pb_wire_varint(pp, end, &n) || n > (uint64_t)(end - *pp))
		return -1;
	b->p = *pp;
	b->len = (size_t)n;
	*pp += n;
	return 0;
}

/*
 * The next node_stats field (2) among a simple device's fields at *pp (all
 * length-delimited): 1, its payload and where its key is (*at, unless at is
 * NULL), 0 at the end, -1 if the fields do not read. Other fields are skipped.
 */
static inline int next_node_field(const uint8_t **pp, const uint8_t *end, struct tft_pb_bytes *b,
				  const uint8_t **at)
{
	while (*pp < end) {
		uint64_t key;

		if (at)
			*at = *pp;
		if (fp_varint(pp, end, &key) || fp_bytes(pp, end, b))
			return -1;
		if (key == (2 << 3 | TFT_PB_WT_LEN))
			return 1;
	}
	return 0;
}

static int fast_alloc_desc(const uint8_t *p, const uint8_t *end, struct rm_alloc_desc *a)
{
	while (p < end) {
		uint64_t key, v = 0;

		if (fp_varint(&p, end, &key))
			return -1;
		if ((key & 7) == TFT_PB_WT_VARINT && fp_varint(&p, end, &v))
			return -1;
		switch (key) {
		case 1 << 3:
			a->requested_bytes = (int64_t)v;
			a->has |= 1u << 0;
			break;
		case 2 << 3:
			a->allocated_bytes = (int64_t)v;
			a->has |= 1u << 1;
			break;
		case 3 << 3 | TFT_PB_WT_LEN:
			if (fp_bytes(&p, end, &a->allocator_name))
				return -1;
			a->has |= 1u << 2;
			break;
		case 4 << 3:
			a->allocation_id = (int64_t)v;
			a->has |= 1u << 3;
			break;
		case 5 << 3:
			a->has_single_reference = v != 0;
			a->has |= 1u << 4;
			break;
		case 6 << 3:
			a->ptr = v;
			a->has |= 1u << 5;
			break;
		default:
			return -1;
		}
	}
	return 0;
}

static int fast_shape(struct rm *rm, const uint8_t *p, const uint8_t *end, struct tft_tf_shape *sh)
{
	while (p < end) {
		uint64_t key, v;
		struct tft_pb_bytes b;

		if (fp_varint(&p, end, &key))
			return -1;
		if (key == (2 << 3 | TFT_PB_WT_LEN)) {
			struct tft_tf_dim dim;
			const uint8_t *q, *qe;

			if (fp_bytes(&p, end, &b))
				return -1;
			memset(&dim, 0, sizeof(dim));
			for (q = b.p, qe = b.p + b.len; q < qe;) {
				if (fp_varint(&q, qe, &key))
					return -1;
				if (key == (1 << 3)) {
					if (fp_varint(&q, qe, &v))
						return -1;
					dim.size = (int64_t)v;
				} else if (key == (2 << 3 | TFT_PB_WT_LEN)) {
					if (fp_bytes(&q, qe, &dim.name))
						return -1;
				} else {
					return -1;
				}
			}
			json_dim(rm, &dim);
			sh->has |= 1u << 0;
		} else if (key == (3 << 3)) {
			if (fp_varint(&p, end, &v))
				return -1;
			sh->unknown_rank = v != 0;
			sh->has |= 1u << 1;
		} else {
			return -1;
		}
	}
	return 0;
}

static int fast_output(struct rm *rm, const uint8_t *p, const uint8_t *end)
{
	struct rm_output o;

	zero_small(&o, sizeof(o));
	rm->j_dims.len = 0;
	rm->j_dnames.len = 0;
	rm->dim_named = 0;
	while (p < end) {
		uint64_t key, v;
		struct tft_pb_bytes b;

		if (fp_varint(&p, end, &key))
			return -1;
		if (key == (1 << 3)) {
			if (fp_varint(&p, end, &v))
				return -1;
			o.slot = (int32_t)(uint32_t)v;
			o.has |= 1u << 0;
		} else if (key == (3 << 3 | TFT_PB_WT_LEN)) {
			const uint8_t *q, *qe;

			if (fp_bytes(&p, end, &b))
				return -1;
			for (q = b.p, qe = b.p + b.len; q < qe;) {
				struct tft_pb_bytes c;

				if (fp_varint(&q, qe, &key))
					return -1;
				if (key == (1 << 3)) {
					if (fp_varint(&q, qe, &v))
						return -1;
					o.td.dtype = (int32_t)(uint32_t)v;
					o.td.has |= 1u << 0;
				} else if (key == (2 << 3 | TFT_PB_WT_LEN)) {
					if (fp_bytes(&q, qe, &c) ||
					    fast_shape(rm, c.p, c.p + c.len, &o.td.shape))
						return -1;
					o.td.has |= 1u << 1;
				} else if (key == (4 << 3 | TFT_PB_WT_LEN)) {
					if (fp_bytes(&q, qe, &c) ||
					    fast_alloc_desc(c.p, c.p + c.len, &o.td.alloc))
						return -1;
					o.td.has |= 1u << 2;
				} else {
					return -1;
				}
			}
			o.has |= 1u << 1;
		} else {
			return -1;
		}
	}
	json_output(rm, &o);
	return 0;
}

static int fast_memory(struct rm *rm, const uint8_t *p, const uint8_t *end)
{
	struct rm_mem_used m;

	memset(&m, 0, sizeof(m));
	rm->j_tmp.len = 0;
	while (p < end) {
		uint64_t key, v = 0;
		struct tft_pb_bytes b;

		if (fp_varint(&p, end, &key))
			return -1;
		if ((key & 7) == TFT_PB_WT_VARINT && fp_varint(&p, end, &v))
			return -1;
		switch (key) {
		case 1 << 3 | TFT_PB_WT_LEN:
			if (fp_bytes(&p, end, &m.allocator_name))
				return -1;
			m.has |= 1u << 0;
			break;
		case 2 << 3:
			m.total_bytes = (int64_t)v;
			m.has |= 1u << 1;
			break;
		case 3 << 3:
			m.peak_bytes = (int64_t)v;
			m.has |= 1u << 2;
			break;
		case 4 << 3:
			m.live_bytes = (int64_t)v;
			m.has |= 1u << 3;
			break;
		case 5 << 3:
			m.allocator_bytes_in_use = (int64_t)v;
			m.has |= 1u << 4;
			break;
		case 6 << 3 | TFT_PB_WT_LEN: {
			struct rm_alloc_rec a;
			const uint8_t *q, *qe;

			if (fp_bytes(&p, end, &b))
				return -1;
			memset(&a, 0, sizeof(a));
			for (q = b.p, qe = b.p + b.len; q < qe;) {
				if (fp_varint(&q, qe, &key) || fp_varint(&q, qe, &v))
					return -1;
				if (key == (1 << 3))
					a.alloc_micros = (int64_t)v;
				else if (key == (2 << 3))
					a.alloc_bytes = (int64_t)v;
				else
					return -1;
			}
			json_alloc_rec(&rm->j_tmp, &a);
			m.has |= 1u << 5;
			break;
		}
		default:
			return -1;
		}
	}
	json_memory(rm, &m);
	return 0;
}

static int fast_mem_stats(struct rm *rm, const uint8_t *p, const uint8_t *end)
{
	struct rm_mem_stats m;

	memset(&m, 0, sizeof(m));
	rm->j_ids.len = rm->j_ids2.len = 0;
	while (p < end) {
		uint64_t key, v = 0;
		struct tft_pb_bytes b;

		if (fp_varint(&p, end, &key))
			return -1;
		if ((key & 7) == TFT_PB_WT_VARINT && fp_varint(&p, end, &v))
			return -1;
		switch (key) {
		case 1 << 3:
			m.temp_memory_size = (int64_t)v;
			m.has |= 1u << 0;
			break;
		case 2 << 3:
			m.device_temp_memory_size = (int64_t)v;
			m.has |= 1u << 1;
			break;
		case 3 << 3:
			m.persistent_memory_size = (int64_t)v;
			m.has |= 1u << 2;
			break;
		case 4 << 3:
			m.device_persistent_memory_size = (int64_t)v;
			m.has |= 1u << 3;
			break;
		case 5 << 3:
		case 6 << 3:
			jb_sep(key == (5 << 3) ? &rm->j_ids : &rm->j_ids2);
			jb_int(key == (5 << 3) ? &rm->j_ids : &rm->j_ids2, (int64_t)v);
			m.has |= key == (5 << 3) ? 1u << 4 : 1u << 5;
			break;
		case 5 << 3 | TFT_PB_WT_LEN:
		case 6 << 3 | TFT_PB_WT_LEN: { /* packed */
			struct jbuf *ids = key >> 3 == 5 ? &rm->j_ids : &rm->j_ids2;
			const uint8_t *q, *qe;

			if (fp_bytes(&p, end, &b))
				return -1;
			for (q = b.p, qe = b.p + b.len; q < qe;) {
				if (fp_varint(&q, qe, &v))
					return -1;
				jb_sep(ids);
				jb_int(ids, (int64_t)v);
			}
			m.has |= key >> 3 == 5 ? 1u << 4 : 1u << 5;
			break;
		}
		default:
			return -1;
		}
	}
	json_mem_stats(rm, &m);
	return 0;
}

/* One field of JSON kind k (payload b) into the kind's buffer, as the table decoder's handler. */
static int fast_json_field(struct rm *rm, int k, const struct tft_pb_bytes *b)
{
	struct rm_alloc_desc a;

	switch (k) {
	case JM_MEMORY:
		return fast_memory(rm, b->p, b->p + b->len);
	case JM_OUTPUT:
		return fast_output(rm, b->p, b->p + b->len);
	case JM_REF:
		memset(&a, 0, sizeof(a));
		if (fast_alloc_desc(b->p, b->p + b->len, &a))
			return -1;
		json_ref_tensor(&rm->j_ref, &a);
		return 0;
	default:
		return fast_mem_stats(rm, b->p, b->p + b->len);
	}
}

/* A run of fields of kind k at p[0..end) (fast_node read them once already). */
static int fast_json_run(struct rm *rm, int k, const uint8_t *p, const uint8_t *end)
{
	while (p < end) {
		uint64_t key;
		struct tft_pb_bytes b;

		if (fp_varint(&p, end, &key) || fp_bytes(&p, end, &b) || fast_json_field(rm, k, &b))
			return -1;
	}
	return 0;
}

/*
 * A field of kind k, its key at kp and its payload b, ending at end. The
 * kind's first run of fields is only noted (fast_json_memo() takes it at
 * the node's end); a second run, rare, has the kind decoded as met: the
 * memo keys on one run of bytes.
 */
static int fast_json_note(struct rm *rm, int k, const uint8_t *kp, const uint8_t *end,
			  const struct tft_pb_bytes *b)
{
	struct rm_jrun *r = &rm->jrun[k];

	if (r->state == JR_NONE) {
		r->lo = kp;
		r->hi = end;
		r->state = JR_RUN;
		return 0;
	}
	if (r->state == JR_RUN) {
		if (r->hi == kp) {
			r->hi = end;
			return 0;
		}
		r->state = JR_EAGER;
		if (fast_json_run(rm, k, r->lo, r->hi))
			return -1;
	}
	return fast_json_field(rm, k, b);
}

/* The noted run of kind k: its string id from the memo, or decoded (and its memo entry chosen). */
static int fast_json_memo(struct rm *rm, int k)
{
	struct rm_jrun *r = &rm->jrun[k];
	size_t len = (size_t)(r->hi - r->lo);
	uint64_t h = tft_hash_fast(r->lo, len, 0);
	struct rm_jmemo *e;

	if (!rm->jmemo)
		rm->jmemo = calloc(JMEMO_SLOTS, sizeof(*rm->jmemo)); /* (none: no memo) */
	r->slot = NULL;
	r->id = UINT32_MAX;
	if (rm->jmemo && len <= UINT32_MAX) {
		e = &rm->jmemo[h & (JMEMO_SLOTS - 2)];
		for (int w = 0; w < 2; w++) {
			/* (the key's first byte is the field's tag: kinds never match each other) */
			if (e[w].hash == h && e[w].len == len && e[w].key &&
			    memcmp(e[w].key, r->lo, len) == 0) {
				r->state = JR_HIT;
				r->id = e[w].id;
				return 0;
			}
		}
		r->slot = e;
	}
	r->state = JR_MISS;
	r->hash = h;
	return fast_json_run(rm, k, r->lo, r->hi);
}

/* A missed run's JSON was interned as r->id: remember it (the set's newer way). */
static void json_memo_store(struct rm_jrun *r)
{
	struct rm_jmemo *e = r->slot;

	if (!e || r->id == UINT32_MAX)
		return;
	e[1] = e[0];
	e[0] = (struct rm_jmemo){r->hash, r->lo, (uint32_t)(r->hi - r->lo), r->id};
}

/* Decode one binary NodeExecStats into *n (zeroed) and the per-node JSON buffers. */
static int fast_node(struct rm *rm, const uint8_t *p, const uint8_t *end, struct rm_node *n)
{
	while (p < end) {
		const uint8_t *kp = p;
		uint64_t key, v = 0;
		struct tft_pb_bytes b;
		int64_t *slot;
		int fi;

		if (fp_varint(&p, end, &key))
			return -1;
		switch (key) {
		case 1 << 3 | TFT_PB_WT_LEN:
			if (fp_bytes(&p, end, &n->node_name))
				return -1;
			n->has |= 1ull << NF_NAME;
			continue;
		case 8 << 3 | TFT_PB_WT_LEN:
			if (fp_bytes(&p, end, &n->timeline_label))
				return -1;
			n->has |= 1ull << NF_LABEL;
			continue;
		case 6 << 3 | TFT_PB_WT_LEN:
			if (fp_bytes(&p, end, &b) || fast_json_note(rm, JM_MEMORY, kp, p, &b))
				return -1;
			n->has |= 1ull << NF_MEMORY;
			continue;
		case 7 << 3 | TFT_PB_WT_LEN:
			if (fp_bytes(&p, end, &b) || fast_json_note(rm, JM_OUTPUT, kp, p, &b))
				return -1;
			n->has |= 1ull << NF_OUTPUT;
			n->nout += n->nout < UINT32_MAX;
			continue;
		case 11 << 3 | TFT_PB_WT_LEN:
			if (fp_bytes(&p, end, &b) || fast_json_note(rm, JM_REF, kp, p, &b))
				return -1;
			n->has |= 1ull << NF_REF;
			continue;
		case 12 << 3 | TFT_PB_WT_LEN:
			if (fp_bytes(&p, end, &b) || fast_json_note(rm, JM_MEMSTATS, kp, p, &b))
				return -1;
			n->has |= 1ull << NF_MEMSTATS;
			continue;
		case 10 << 3:
			if (fp_varint(&p, end, &v))
				return -1;
			n->thread_id = (uint32_t)v;
			n->has |= 1ull << NF_THREAD;
			continue;
		case 2 << 3: slot = &n->all_start_micros; fi = NF_ALL_START_US; break;
		case 3 << 3: slot = &n->op_start_rel_micros; fi = NF_OP_START_US; break;
		case 4 << 3: slot = &n->op_end_rel_micros; fi = NF_OP_END_US; break;
		case 5 << 3: slot = &n->all_end_rel_micros; fi = NF_ALL_END_US; break;
		case 9 << 3: slot = &n->scheduled_micros; fi = NF_SCHED_US; break;
		case 13 << 3: slot = &n->all_start_nanos; fi = NF_ALL_START_NS; break;
		case 14 << 3: slot = &n->op_start_rel_nanos; fi = NF_OP_START_NS; break;
		case 15 << 3: slot = &n->op_end_rel_nanos; fi = NF_OP_END_NS; break;
		case 16 << 3: slot = &n->all_end_rel_nanos; fi = NF_ALL_END_NS; break;
		case 17 << 3: slot = &n->scheduled_nanos; fi = NF_SCHED_NS; break;
		default:
			return -1;
		}
		if (fp_varint(&p, end, &v))
			return -1;
		*slot = (int64_t)v;
		n->has |= 1ull << fi;
	}
	if (n->has & NF_NESTED) {
		for (int k = 0; k < JM_KINDS; k++)
			if (rm->jrun[k].state == JR_RUN && fast_json_memo(rm, k))
				return -1;
	}
	return 0;
}

/* ---- processes, devices, tracks ----------------------------------------------- */

static int64_t us_to_ns(int64_t us);

/*
 * The earliest node start of a RunMetadata/StepStats: the importer's decoder
 * over only the fields that say it (unknown fields are skipped), with the
 * importer's rule (all_start_nanos, else all_start_micros, else 0: a node
 * without a start field counts at time 0).
 */
struct ms_node {
	uint64_t has;
	int64_t us, ns;
};

static const struct tft_pb_field ms_node_fields[] = {
	F(2, TFT_PB_INT64, 0, struct ms_node, us, "all_start_micros", NULL, NULL),
	F(13, TFT_PB_INT64, 0, struct ms_node, ns, "all_start_nanos", NULL, NULL),
};
static const struct tft_pb_msg ms_node_msg = {"NodeExecStats", ms_node_fields, 2,
					      offsetof(struct ms_node, has)};

static int ms_on_node(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	int64_t *min = ctx, t;
	struct ms_node n = {0};
	int r = tft_pb_wire_decode_sub(&v->sub, &ms_node_msg, &n, ctx);

	(void)msg;
	(void)f;
	if (r)
		return r;
	t = (n.has & 2) ? n.ns : us_to_ns(n.us); /* the importer's rule */
	if (t < *min)
		*min = t;
	return 0;
}

/* A sub-message of the walk: decoded with the table its field names (aux). */
static int ms_on_sub(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	(void)msg;
	return tft_pb_wire_decode_sub(&v->sub, f->aux, NULL, ctx);
}

static const struct tft_pb_field ms_dev_fields[] = {
	H(2, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "node_stats", ms_on_node, NULL),
};
static const struct tft_pb_msg ms_dev_msg = {"DeviceStepStats", ms_dev_fields, 1, TFT_PB_NOOFF};
static const struct tft_pb_field ms_ss_fields[] = {
	H(1, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "dev_stats", ms_on_sub, &ms_dev_msg),
};
static const struct tft_pb_msg ms_ss_msg = {"StepStats", ms_ss_fields, 1, TFT_PB_NOOFF};
static const struct tft_pb_field ms_rm_fields[] = {
	H(1, TFT_PB_MESSAGE, 0, "step_stats", ms_on_sub, &ms_ss_msg),
};
static const struct tft_pb_msg ms_rm_msg = {"RunMetadata", ms_rm_fields, 1, TFT_PB_NOOFF};

/*
 * This input's earliest node start: INT64_MAX without nodes, INT64_MIN if it
 * does not decode (the import will say why). Computed once.
 */
static int64_t input_start(struct rm *rm)
{
	const struct tft_pb_msg *m = rm->stepstats ? &ms_ss_msg : &ms_rm_msg;
	struct tft_pb_dec dec;
	struct tft_error err;
	int64_t min = INT64_MAX;
	int r;

	if (rm->start_known)
		return rm->start;
	rm->start_known = 1;
	tft_error_clear(&err);
	if (rm->text) {
		r = tft_pb_text_init(&dec, rm->input, rm->input_len, &err);
		if (!r)
			r = tft_pb_text_decode(&dec, m, NULL, &min);
		tft_pb_text_fini(&dec);
	} else {
		tft_pb_wire_init(&dec, rm->input, rm->input_len, &err);
		r = tft_pb_wire_decode(&dec, m, NULL, &min);
	}
	rm->start = r ? INT64_MIN : min;
	return rm->start;
}

int64_t tft_runmeta_start(const uint8_t *data, size_t len, int format)
{
	struct rm rm;

	memset(&rm, 0, sizeof(rm));
	rm.input = data;
	rm.input_len = len;
	rm.text = format == TFT_PB_FMT_RUNMETA_TEXT || format == TFT_PB_FMT_STEPSTATS_TEXT;
	rm.stepstats = format == TFT_PB_FMT_STEPSTATS || format == TFT_PB_FMT_STEPSTATS_TEXT;
	return input_start(&rm);
}

/*
 * The latest event end of each process (INT64_MIN: no events), in one pass
 * over the tracks; NULL when out of memory.
 */
static int64_t *process_ends(struct rm *rm)
{
	uint32_t np = tft_writer_process_count(rm->w), nt = tft_writer_track_count(rm->w);
	int64_t *end = malloc((size_t)(np ? np : 1) * sizeof(*end));

	if (!end)
		return NULL;
	for (uint32_t i = 0; i < np; i++)
		end[i] = INT64_MIN;
	for (uint32_t i = 0; i < nt; i++) {
		uint32_t p = tft_writer_track_process(rm->w, i);
		int64_t e = tft_writer_track_end(rm->w, i);

		if (p < np && e > end[p])
			end[p] = e;
	}
	return end;
}

/*
 * A process named pname that an earlier input made and this input continues
 * (that worker's next steps: a tracing session pickle, one RunMetadata per
 * step), else TFT_NONE. This input must start after every event of it, so
 * that its tracks take the new events after their own; inputs that overlap
 * it (one RunMetadata per rank, all named /job:localhost/replica:0/task:0;
 * the same file twice) get a process of their own. Of several candidates,
 * the one whose events end latest.
 */
static uint32_t continued_process(struct rm *rm, const char *pname)
{
	uint32_t n = tft_writer_process_count(rm->w), best = TFT_NONE;
	int64_t best_end = INT64_MIN, start = INT64_MIN, *ends = NULL;
	int looked = 0;

	for (uint32_t i = 0; i < n; i++) {
		struct tft_process *p = tft_writer_process(rm->w, i);
		const char *s = p ? tft_writer_str(rm->w, p->name, NULL) : NULL;
		int64_t end;

		if (!s || strcmp(s, pname) != 0 || p->host != 0 || p->id >= n)
			continue;
		if (!looked) {
			start = input_start(rm);
			ends = process_ends(rm);
			looked = 1;
			if (!ends)
				break; /* out of memory: a process of its own */
		}
		end = ends[p->id];
		if (start != INT64_MIN && (end == INT64_MIN || start > end) &&
		    (best == TFT_NONE || end > best_end)) {
			best = p->id;
			best_end = end;
		}
	}
	free(ends);
	return best;
}

/* A process of this input named pname, or one of an earlier input it continues (*cont). */
static uint32_t find_process(struct rm *rm, const char *pname, int *cont)
{
	uint32_t id;

	*cont = 0;
	for (uint32_t i = 0; i < rm->nprocs; i++)
		if (strcmp(rm->procs[i].name, pname) == 0) {
			*cont = rm->procs[i].continued;
			return rm->procs[i].id;
		}
	id = continued_process(rm, pname);
	*cont = id != TFT_NONE;
	return id;
}

/*
 * A track of an earlier input in the device's (continued) process with the
 * same kind, name and tid that still takes events, else TFT_NONE.
 */
static uint32_t continued_track(struct rm *rm, const struct rm_dev *dev, uint32_t kind, uint32_t name,
				int64_t tid)
{
	uint32_t n = tft_writer_track_count(rm->w);

	if (!dev->continued)
		return TFT_NONE;
	for (uint32_t i = 0; i < n; i++) {
		const struct tft_track *t;

		if (tft_writer_track_process(rm->w, i) != dev->process)
			continue; /* (no wait for the store workers: the kind is read only here) */
		t = tft_writer_track(rm->w, i);
		if (t && t->kind == kind && t->name == name && t->tid == tid &&
		    tft_writer_track_appendable(rm->w, i))
			return i;
	}
	return TFT_NONE;
}

static struct rm_dev *get_device(struct rm *rm, const uint8_t *name, size_t len)
{
	struct tft_tf_device td;
	struct tft_process proc;
	char pname[160];
	uint32_t name_id, pid;
	struct rm_dev *dev;
	int cont;

	if (len == 0) {
		name = (const uint8_t *)"unknown device";
		len = strlen((const char *)name);
	}
	name_id = intern(rm, name, len);
	if (name_id == UINT32_MAX)
		return NULL;
	for (uint32_t i = 0; i < rm->ndevs; i++)
		if (rm->devs[i].name == name_id)
			return &rm->devs[i];
	if (tft_grow((void **)&rm->devs, &rm->cdevs, rm->ndevs + 1, sizeof(*rm->devs)))
		return NULL;
	dev = &rm->devs[rm->ndevs];
	memset(dev, 0, sizeof(*dev));
	tft_tf_names_parse_device((const char *)name, len, &td);
	tft_tf_names_process(&td, pname, sizeof(pname));
	tft_tf_names_canon_device(&td, dev->canon, sizeof(dev->canon));
	if (!dev->canon[0])
		snprintf(dev->canon, sizeof(dev->canon), "%.*s", (int)(len > 150 ? 150 : len),
			 (const char *)name);
	pid = find_process(rm, pname, &cont);
	if (pid == TFT_NONE) {
		memset(&proc, 0, sizeof(proc));
		proc.name = intern_c(rm, pname);
		proc.pid = td.task >= 0 ? td.task : 0;
		proc.rank = (td.job.len == 6 && memcmp(td.job.p, "worker", 6) == 0 && td.task >= 0)
				    ? (int32_t)td.task
				    : -1;
		proc.sort_index = (int32_t)rm->nprocs;
		pid = tft_writer_add_process(rm->w, &proc);
		if (pid == TFT_NONE)
			return NULL;
	}
	if (tft_grow((void **)&rm->procs, &rm->cprocs, rm->nprocs + 1, sizeof(*rm->procs)))
		return NULL;
	{
		int known = 0;

		for (uint32_t i = 0; i < rm->nprocs; i++)
			known |= rm->procs[i].id == pid;
		if (!known) {
			snprintf(rm->procs[rm->nprocs].name, sizeof(rm->procs[0].name), "%s", pname);
			rm->procs[rm->nprocs].continued = cont;
			rm->procs[rm->nprocs++].id = pid;
		}
	}
	dev->gputrace = (td.flags & (TFT_TF_DEV_STREAM | TFT_TF_DEV_MEMCPY)) != 0;
	dev->tl_gputrace = memmem(name, len, "/stream:", 8) != NULL || memmem(name, len, "/memcpy", 7) != NULL;
	dev->tid = td.stream >= 0 ? td.stream : (td.index >= 0 ? td.index : 0);
	if (td.flags & TFT_TF_DEV_STREAM_ALL)
		dev->tid = -1;
	dev->name = name_id;
	dev->process = pid;
	dev->continued = cont;
	dev->track = TFT_NONE;
	dev->comm_track = TFT_NONE;
	rm->ndevs++;
	return dev;
}

/* The device's compute (or stream) track, created on first use. */
static uint32_t main_track(struct rm *rm, struct rm_dev *dev)
{
	struct tft_track tr;

	if (dev->track != TFT_NONE || rm->lane)
		return dev->track; /* (a worker's tracks are registered before the lanes open) */
	memset(&tr, 0, sizeof(tr));
	tr.process = dev->process;
	tr.name = dev->name;
	tr.kind = dev->gputrace ? TFT_TRACK_GPU_STREAM : TFT_TRACK_DEVICE;
	tr.flags = TFT_TRACKF_CONCURRENT; /* an executor's inter-op threads, a stream's kernels */
	tr.tid = dev->tid;
	tr.sort_index = (int32_t)((dev - rm->devs) * 2);
	dev->track = continued_track(rm, dev, tr.kind, tr.name, tr.tid);
	if (dev->track == TFT_NONE)
		dev->track = tft_writer_add_track(rm->w, &tr);
	return dev->track;
}

static uint32_t comm_track(struct rm *rm, struct rm_dev *dev)
{
	struct tft_track tr;
	char buf[512];
	size_t n = 0;
	const char *s;

	if (dev->comm_track != TFT_NONE || rm->lane)
		return dev->comm_track;
	s = tft_writer_str(rm->w, dev->name, &n);
	snprintf(buf, sizeof(buf), "%.*s (comm)", (int)(n > 480 ? 480 : n), s ? s : "");
	memset(&tr, 0, sizeof(tr));
	tr.process = dev->process;
	tr.kind = TFT_TRACK_COMM;
	tr.flags = TFT_TRACKF_CONCURRENT; /* sends and receives overlap */
	tr.name = intern_c(rm, buf);
	tr.tid = -1;
	tr.sort_index = (int32_t)((dev - rm->devs) * 2 + 1);
	dev->comm_track = continued_track(rm, dev, tr.kind, tr.name, tr.tid);
	if (dev->comm_track == TFT_NONE)
		dev->comm_track = tft_writer_add_track(rm->w, &tr);
	return dev->comm_track;
}

/* ---- per-node conversion ------------------------------------------------------- */

static void par_progress(struct rm *rm, uint64_t pos);

static void progress(struct rm *rm, uint64_t pos)
{
	if (rm->par) {
		par_progress(rm, pos);
		return;
	}
	if (!rm->opts || !rm->opts->progress || !tft_ingest_progress_due(&rm->last_progress, 0))
		return;
	rm->opts->progress(rm->opts->progress_ctx, pos, rm->input_len, rm->nodes);
}

/* Whether two device names are on one worker (job and task: one RunMetadata file's). */
static int same_worker(const char *a, const char *b)
{
	struct tft_tf_device da, db;
	char pa[160], pb[160];

	tft_tf_names_parse_device(a, strlen(a), &da);
	tft_tf_names_parse_device(b, strlen(b), &db);
	tft_tf_names_process(&da, pa, sizeof(pa));
	tft_tf_names_process(&db, pb, sizeof(pb));
	return strcmp(pa, pb) == 0;
}

/* Record one endpoint; *added (if not NULL) is the entry, or NULL when there is none. */
static int add_comm(struct rm *rm, int role, struct tft_tf_str tensor, const char *src,
		    const char *dst, uint32_t track, int64_t ts, int64_t end, const struct rm_comm **added)
{
	struct rm_comm *c;
	struct jbuf *b = &rm->scratch;

	if (added)
		*added = NULL;
	if (!tensor.len || !src[0] || !dst[0])
		return 0;
	if (tft_grow((void **)&rm->comm, &rm->ccomm, rm->ncomm + 1, sizeof(*rm->comm)))
		return TFT_ENOMEM;
	b->len = 0;
	jb_raw(b, tensor.p, tensor.len);
	jb_raw(b, "\n", 1);
	jb_lit(b, src);
	jb_raw(b, "\n", 1);
	jb_lit(b, dst);
	if (b->oom)
		return TFT_ENOMEM;
	c = &rm->comm[rm->ncomm];
	c->cross = !same_worker(src, dst);
	c->key = tft_hash_bytes(b->p, b->len);
	c->ts = ts;
	c->end = end;
	c->track = track;
	c->role = (uint8_t)role;
	c->seq = rm->ncomm;
	c->tensor = intern(rm, tensor.p, tensor.len);
	rm->ncomm++;
	if (added)
		*added = c;
	return 0;
}

/* ts + dur, saturating. */
static int64_t end_of(int64_t ts, int64_t dur)
{
	int64_t e;

	return __builtin_add_overflow(ts, dur > 0 ? dur : 0, &e) ? INT64_MAX : e;
}

/* An endpoint whose key and tensor a template already knows. */
static int add_comm_known(struct rm *rm, const struct rm_tmpl *t, uint32_t track, int64_t ts,
			  int64_t end)
{
	struct rm_comm *c;

	if (tft_grow((void **)&rm->comm, &rm->ccomm, rm->ncomm + 1, sizeof(*rm->comm)))
		return TFT_ENOMEM;
	c = &rm->comm[rm->ncomm];
	c->key = t->comm_key;
	c->cross = t->comm_cross;
	c->ts = ts;
	c->end = end;
	c->track = track;
	c->role = t->role;
	c->seq = rm->ncomm;
	c->tensor = t->comm_tensor;
	rm->ncomm++;
	return 0;
}

/* Microseconds to ns, saturating (corrupt inputs must not overflow). */
static int64_t us_to_ns(int64_t us)
{
	int64_t r;

	if (__builtin_mul_overflow(us, (int64_t)1000, &r))
		return us < 0 ? INT64_MIN : INT64_MAX;
	return r;
}

static int str_is(struct tft_tf_str s, const char *lit)
{
	size_t n = strlen(lit);

	return s.len == n && memcmp(s.p, lit, n) == 0;
}

static void canon_of(struct tft_tf_str s, char *buf, size_t size)
{
	struct tft_tf_device td;

	buf[0] = '\0';
	if (!s.len)
		return;
	if (tft_tf_names_parse_device(s.p, s.len, &td) == 0)
		tft_tf_names_canon_device(&td, buf, size);
	if (!buf[0])
		snprintf(buf, size, "%.*s", (int)(s.len > 150 ? 150 : s.len), s.p);
}

/* Hand the buffered events of the current device to the sorter (it is too large). */
static int spill_pending(struct rm *rm)
{
	for (uint32_t i = 0; i < rm->npend; i++) {
		struct tft_event ev = rm->pend[i].ev;
		int r;

		ev.args = rm->pargs + rm->pend[i].args_off;
		r = tft_sorter_push(rm->sorter, &ev, rm->err);
		if (r)
			return r;
	}
	rm->npend = rm->npargs = 0;
	rm->spilled = 1;
	return 0;
}

static int queue_event(struct rm *rm, const struct tft_event *ev)
{
	struct rm_pend *pe;
	size_t bytes;

	if (!rm->direct || rm->spilled)
		return tft_sorter_push(rm->sorter, ev, rm->err);
	bytes = (size_t)rm->npend * sizeof(*rm->pend) + (size_t)rm->npargs * sizeof(*rm->pargs);
	if (bytes > rm->pend_budget || rm->npargs > UINT32_MAX - ev->nargs - 1) {
		int r;

		if (rm->lane) {
			/* A worker has no sorter: the device is redone serially after the join. */
			rm->deferred = 1;
			return TFT_ENOMEM;
		}
		r = spill_pending(rm);

		return r ? r : tft_sorter_push(rm->sorter, ev, rm->err);
	}
	if (tft_grow((void **)&rm->pend, &rm->cpend, rm->npend + 1, sizeof(*rm->pend)) ||
	    tft_grow((void **)&rm->pargs, &rm->cpargs, rm->npargs + ev->nargs, sizeof(*rm->pargs)))
		return TFT_ENOMEM;
	pe = &rm->pend[rm->npend];
	pe->ev = *ev;
	pe->ev.args = NULL;
	pe->args_off = rm->npargs;
	pe->seq = rm->npend++;
	if (ev->nargs && ev->args != rm->pargs + rm->npargs)
		memcpy(rm->pargs + rm->npargs, ev->args, ev->nargs * sizeof(*ev->args));
	rm->npargs += ev->nargs;
	return 0;
}

/* The writer's order per track: ts ascending, longer first, then arrival. */
static int cmp_pend(const void *a, const void *b)
{
	const struct rm_pend *x = a, *y = b;

	if (x->ev.track != y->ev.track)
		return x->ev.track < y->ev.track ? -1 : 1;
	if (x->ev.ts_ns != y->ev.ts_ns)
		return x->ev.ts_ns < y->ev.ts_ns ? -1 : 1;
	if (x->ev.dur_ns != y->ev.dur_ns)
		return x->ev.dur_ns > y->ev.dur_ns ? -1 : 1;
	return x->seq < y->seq ? -1 : (x->seq > y->seq);
}

/* The current device is complete: append its events in order (sorting only if needed). */
static int flush_device(struct rm *rm)
{
	int sorted = 1;

	if (rm->spilled || !rm->npend) {
		rm->spilled = 0;
		rm->npend = rm->npargs = 0;
		return 0;
	}
	for (uint32_t i = 1; i < rm->npend && sorted; i++)
		sorted = cmp_pend(&rm->pend[i - 1], &rm->pend[i]) < 0;
	if (!sorted)
		qsort(rm->pend, rm->npend, sizeof(*rm->pend), cmp_pend);
	for (uint32_t i = 0; i < rm->npend; i++) {
		struct tft_event ev = rm->pend[i].ev;
		int r;

		ev.args = rm->pargs + rm->pend[i].args_off;
		r = rm->lane ? tft_writer_lane_append(rm->lane, &ev) : tft_writer_append(rm->w, &ev);
		if (r)
			return r;
	}
	rm->npend = rm->npargs = 0;
	return 0;
}

/*
 * What the pre-pass (scan_devices) learned about one binary DeviceStepStats,
 * so that on_dev_stats need not walk it once more before its nodes.
 */
struct rm_dinfo {
	const uint8_t *p;           /* borrowed: the DeviceStepStats payload */
	size_t len;
	const uint8_t *at;          /* borrowed: its length prefix (the decoder's value offset) */
	struct tft_pb_bytes device; /* its last device field, as the decoder keeps it */
	uint64_t nodes;             /* node_stats fields */
	int simple;                 /* only device and node_stats fields, both length-delimited */
};

/*
 * One walk over the dev_stats of the binary StepStats in p[0..len): fills
 * rm->dinfo (each dev_stats in input order, up to the first one the walk
 * cannot take) and returns whether every dev_stats names a different
 * device: then no device's events can be split over two places and each
 * device can go straight to the writer. 0 when unsure.
 */
static int scan_devices(struct rm *rm, const uint8_t *p, size_t len)
{
	enum { MAXDEV = 4096 };
	const uint8_t *end = len ? p + len : p; /* p may be NULL when empty */
	int unique = 1;

	rm->dinfo = malloc(MAXDEV * sizeof(*rm->dinfo));
	if (!rm->dinfo)
		return 0;
	while (p < end) {
		const uint8_t *at;
		uint64_t key, l;

		if (tft_pb_wire_varint(&p, end, &key) || (key & 7) != 2 || (at = p, 0) ||
		    tft_pb_wire_varint(&p, end, &l) || l > (uint64_t)(end - p))
			return 0; /* anything but length-delimited fields: let the decoder judge */
		if (key >> 3 == 1) {
			const uint8_t *q = p, *qe = p + l;
			struct rm_dinfo *di;
			struct tft_pb_bytes nm;

			if (rm->ndinfo == MAXDEV)
				return 0;
			di = &rm->dinfo[rm->ndinfo];
			memset(di, 0, sizeof(*di));
			di->p = p;
			di->len = (size_t)l;
			di->at = at;
			di->simple = 1;
			while (q < qe) {
				uint64_t k2, v;

				/*
				 * The nodes' keys lie ~200 bytes apart and each was a
				 * cache miss (83% of this walk, ~28 ns a node on the
				 * generated 100 MB input): ask for the lines ~10 nodes
				 * ahead (the walk: 18-20 -> 10-11 ms).
				 */
				__builtin_prefetch(q + 2048);
				if (tft_pb_wire_varint(&q, qe, &k2))
					return 0;
				if ((k2 & 7) == 0) {
					if (tft_pb_wire_varint(&q, qe, &v))
						return 0;
					di->simple = 0;
				} else if ((k2 & 7) == 2) {
					if (tft_pb_wire_varint(&q, qe, &v) || v > (uint64_t)(qe - q))
						return 0;
					if (k2 >> 3 == 1) {
						di->device.p = q; /* the last one wins, empty or not */
						di->device.len = (size_t)v;
					} else if (k2 >> 3 == 2) {
						di->nodes++;
					} else {
						di->simple = 0;
					}
					q += v;
				} else {
					return 0;
				}
			}
			/* get_device()'s name for it */
			nm = di->device;
			if (!nm.len) {
				nm.p = (const uint8_t *)"unknown device";
				nm.len = 14;
			}
			for (uint32_t i = 0; i < rm->ndinfo && unique; i++) {
				struct tft_pb_bytes o = rm->dinfo[i].device;

				if (!o.len) {
					o.p = (const uint8_t *)"unknown device";
					o.len = 14;
				}
				if (o.len == nm.len && memcmp(o.p, nm.p, nm.len) == 0)
					unique = 0;
			}
			rm->ndinfo++;
		}
		p += l;
	}
	return unique;
}

/* Same for a binary RunMetadata: one step_stats, unique devices in it. */
static int runmeta_scan_devices(struct rm *rm, const uint8_t *p, size_t len)
{
	const uint8_t *end = len ? p + len : p, *ss = NULL; /* p may be NULL when empty */
	size_t ss_len = 0;
	int nss = 0;

	while (p < end) {
		uint64_t key, l;

		if (tft_pb_wire_varint(&p, end, &key))
			return 0;
		switch (key & 7) {
		case 0:
			if (tft_pb_wire_varint(&p, end, &l))
				return 0;
			break;
		case 1:
			if (end - p < 8)
				return 0;
			p += 8;
			break;
		case 5:
			if (end - p < 4)
				return 0;
			p += 4;
			break;
		case 2:
			if (tft_pb_wire_varint(&p, end, &l) || l > (uint64_t)(end - p))
				return 0;
			if (key >> 3 == 1) {
				ss = p;
				ss_len = (size_t)l;
				nss++;
			}
			p += l;
			break;
		default:
			return 0;
		}
	}
	/* (several step_stats: their dev_stats are not told apart, no dinfo) */
	return nss <= 1 && (!ss || scan_devices(rm, ss, ss_len));
}

/*
 * The template table of the session's last input, kept on the writer for
 * the next (a session pickle is thousands of small steps): taken back
 * without clearing, its tags are tied to an input (tmpl_epoch).
 */
struct rm_tmpl_cache {
	struct rm_tmpl *tmpl;
	uint64_t *tag;
	uint8_t *next;
	uint64_t epochs;
};

static void tmpl_free(struct rm_tmpl *tmpl, uint64_t *tag, uint8_t *next)
{
	if (tmpl) {
		for (uint32_t i = 0; i < TMPL_SLOTS; i++)
			free(tmpl[i].key);
		free(tmpl);
	}
	free(tag);
	free(next);
}

static void tmpl_cache_free(void *ctx)
{
	struct rm_tmpl_cache *c = ctx;

	tmpl_free(c->tmpl, c->tag, c->next);
	free(c);
}

/* The session's spare-table slot (made on first use); NULL: none. */
static struct rm_tmpl_cache *tmpl_cache_get(struct tft_writer *w)
{
	struct rm_tmpl_cache *c = tft_writer_attached(w, "runmeta.tmpl");

	if (c || !(c = calloc(1, sizeof(*c))))
		return c;
	if (tft_writer_attach(w, "runmeta.tmpl", c, NULL, tmpl_cache_free)) {
		free(c);
		return NULL;
	}
	return c;
}

/*
 * The template slot for (current device, node_name, label), or NULL when
 * the key is too long to cache or the cache could not be allocated. *hit:
 * the slot holds exactly this key; else the slot is the one to fill
 * (tmpl_store): an empty way of the key's set, or its ways in turn. The
 * tags are probed first so that a lookup reads one line, not four slots.
 */
static struct rm_tmpl *tmpl_slot(struct rm *rm, uint32_t devno, struct tft_tf_str name,
				 const struct tft_pb_bytes *label, uint64_t *hash, int *hit)
{
	struct rm_tmpl *t;
	const uint64_t *tags;
	uint64_t h;
	uint32_t set, w;

	*hit = 0;
	if (name.len + label->len > TMPL_MAX_KEY)
		return NULL;
	if (!rm->tmpl && rm->tmpl_cache && rm->tmpl_cache->tmpl) {
		struct rm_tmpl_cache *c = rm->tmpl_cache;

		rm->tmpl = c->tmpl;
		rm->tmpl_tag = c->tag;
		rm->tmpl_next = c->next;
		c->tmpl = NULL;
		c->tag = NULL;
		c->next = NULL;
		rm->tmpl_epoch = tft_hash_u64(++c->epochs) & ~1ull;
	}
	if (!rm->tmpl) {
		rm->tmpl = calloc(TMPL_SLOTS, sizeof(*rm->tmpl));
		rm->tmpl_tag = calloc(TMPL_SLOTS, sizeof(*rm->tmpl_tag));
		rm->tmpl_next = calloc(TMPL_SETS, sizeof(*rm->tmpl_next));
		if (!rm->tmpl || !rm->tmpl_tag || !rm->tmpl_next) {
			free(rm->tmpl);
			free(rm->tmpl_tag);
			free(rm->tmpl_next);
			rm->tmpl = NULL;
			rm->tmpl_tag = NULL;
			rm->tmpl_next = NULL;
			return NULL; /* run without the cache */
		}
	}
	/* Two independent hashes: the CPU overlaps them. */
	h = tft_hash_fast(label->p, label->len, devno);
	h ^= tft_hash_fast(name.p, name.len, 0) * 0x9e3779b97f4a7c15ULL;
	*hash = h;
	h ^= rm->tmpl_epoch; /* (t->hash keeps the plain hash) */
	set = (uint32_t)h & (TMPL_SETS - 1);
	tags = rm->tmpl_tag + set * TMPL_WAYS;
	for (w = 0; w < TMPL_WAYS; w++) {
		if (tags[w] != (h | 1))
			continue;
		t = &rm->tmpl[set * TMPL_WAYS + w];
		/* (absent strings have p == NULL and len 0: memcmp must not see them) */
		if (t->dev == devno && t->hash == *hash && t->name_len == name.len &&
		    t->label_len == label->len &&
		    (!name.len || memcmp(t->key, name.p, name.len) == 0) &&
		    (!label->len || memcmp(t->key + name.len, label->p, label->len) == 0)) {
			*hit = 1;
			return t;
		}
	}
	for (w = 0; w < TMPL_WAYS && tags[w]; w++)
		;
	if (w == TMPL_WAYS) {
		w = rm->tmpl_next[set];
		rm->tmpl_next[set] = (uint8_t)((w + 1) & (TMPL_WAYS - 1));
	}
	return &rm->tmpl[set * TMPL_WAYS + w];
}

/* Fill slot t with the template nt built for this key (best effort: no memory, no entry). */
static void tmpl_store(struct rm *rm, struct rm_tmpl *t, const struct rm_tmpl *nt,
		       struct tft_tf_str name, const struct tft_pb_bytes *label)
{
	size_t klen = name.len + label->len;
	char *key = t->key;
	uint32_t cap = t->key_cap;

	if (klen > cap || !key) {
		/* Powers of two: a slot that sees ever other keys reallocates rarely. */
		cap = 128;
		while (cap < klen)
			cap *= 2;
		free(key);
		key = malloc(cap);
		if (!key) {
			memset(t, 0, sizeof(*t));
			rm->tmpl_tag[t - rm->tmpl] = 0;
			return;
		}
	}
	*t = *nt;
	t->key = key;
	t->key_cap = cap;
	if (name.len)
		memcpy(key, name.p, name.len);
	if (label->len)
		memcpy(key + name.len, label->p, label->len);
	rm->tmpl_tag[t - rm->tmpl] = (nt->hash ^ rm->tmpl_epoch) | 1;
}

/*
 * A node's op type (and, on stream devices, the node named by its
 * annotation) from its name and parsed label; returns whether it goes to
 * the comm track. *op and *ann_name are {NULL, 0} when absent. Also the
 * parallel import's track prediction (predict_node), so both agree.
 */
static int node_op(int gputrace, struct tft_tf_str node_name, const struct tft_tf_label *lb,
		   struct tft_tf_str *op, struct tft_tf_str *ann_name)
{
	if (str_is(node_name, "RecvTensor")) {
		op->p = "RecvTensor";
		op->len = 10;
	} else if (lb->kind == TFT_TF_LABEL_OP || lb->kind == TFT_TF_LABEL_SEND ||
		   lb->kind == TFT_TF_LABEL_RECV) {
		*op = lb->op;
	} else if (gputrace) {
		struct tft_tf_str nm;

		if (lb->annotation.len)
			tft_tf_names_split_annotation(lb->annotation, ann_name, op);
		if (!op->len) {
			tft_tf_names_split_annotation(node_name, &nm, op);
			if (op->len)
				*ann_name = nm;
		}
	}
	return tft_tf_names_is_comm(node_name, *op);
}

/*
 * The node's JSON arg of kind k: the memo's string id, or its buffer b
 * (closed with ']' when close) interned, as arg_strn() would.
 */
static int json_arg_add(struct rm *rm, struct rm_jrun *r, struct jbuf *b, uint32_t key, int close)
{
	struct tft_arg *a;
	uint32_t id;

	if (r->state == JR_HIT) {
		id = r->id;
	} else {
		if (!b->len)
			return 0;
		if (close)
			jb_raw(b, "]", 1);
		if (rm->nargs >= MAX_ARGS)
			return 0;
		id = intern(rm, b->p, b->len);
		if (id == UINT32_MAX)
			return TFT_ENOMEM;
		r->id = id;
	}
	if (rm->nargs >= MAX_ARGS)
		return 0;
	a = &rm->args[rm->nargs++];
	a->key = key;
	a->type = TFT_ARG_JSON;
	a->v.str = id;
	return 0;
}

/* (most nodes have none of the four: one test each, inline) */
static inline int json_arg(struct rm *rm, int k, struct jbuf *b, uint32_t key, int close)
{
	struct rm_jrun *r = &rm->jrun[k];

	if (r->state != JR_HIT && !b->len)
		return 0;
	return json_arg_add(rm, r, b, key, close);
}

/* Before a node's decode: no nested values yet. */
static inline void node_begin(struct rm *rm, struct rm_node *n)
{
	zero_small(n, sizeof(*n));
	rm->j_memory.len = rm->j_output.len = rm->j_ref.len = rm->j_memstats.len = 0;
	for (int k = 0; k < JM_KINDS; k++)
		rm->jrun[k].state = JR_NONE;
}

/* Floor division by a positive b (Python's //). */
static int64_t floor_div(int64_t a, int64_t b)
{
	int64_t q = a / b;

	return (a % b != 0 && a < 0) ? q - 1 : q;
}

static int dfh_push(struct rm *rm, uint64_t h)
{
	if (rm->ndfh == UINT32_MAX ||
	    tft_grow((void **)&rm->dfh, &rm->cdfh, rm->ndfh + 1, sizeof(*rm->dfh)))
		return TFT_ENOMEM;
	rm->dfh[rm->ndfh++] = h;
	return 0;
}

/* Push one input's two hashes (the name and its Send/Recv-stripped form) onto rm->dfh. */
static int df_input(struct rm *rm, struct tft_tf_str in)
{
	struct tft_tf_str st;
	int r = dfh_push(rm, tft_hash_fast(in.p, in.len, 0));

	return r ? r : dfh_push(rm, tft_tf_names_strip_rename(in, &st) ? tft_hash_fast(st.p, st.len, 0) : 0);
}

/*
 * The dataflow part of a node's template (a miss: computed): its event's
 * name bytes (node_name, else what emit_node() named the event), the
 * kernel's op as emit_node() put it in the node arg (the args so far) and
 * timeline.py's name for it, and the inputs of its label.
 */
static int df_prep(struct rm *rm, const struct rm_dev *dev, struct tft_tf_str name,
		   const struct tft_pb_bytes *label, struct rm_dft *t)
{
	struct tft_tf_str inputs, in, k, op = { NULL, 0 };
	int done = 0;

	memset(t, 0, sizeof(*t));
	t->name_hash = tft_hash_fast(name.p, name.len, 0);
	t->recv = name.len == 10 && memcmp(name.p, "RecvTensor", 10) == 0;
	if (dev->tl_gputrace) {
		for (uint16_t i = 0; i < rm->nargs; i++)
			if (rm->args[i].key == rm->k_node && rm->args[i].type == TFT_ARG_STR)
				t->op = rm->args[i].v.str;
		if (t->op)
			op.p = tft_writer_str(rm->w, t->op, &op.len);
		tft_tf_names_timeline_kernel((const char *)label->p, label->len, name.p, name.len, &k);
		if (k.len && (k.len != op.len || memcmp(k.p, op.p, k.len)) &&
		    (t->op2 = intern(rm, k.p, k.len)) == UINT32_MAX)
			return TFT_ENOMEM;
		return 0;
	}
	if (t->recv || !label->len ||
	    !tft_tf_names_timeline_inputs((const char *)label->p, label->len, &inputs) || !inputs.len)
		return 0;
	while (tft_tf_names_timeline_next_input(&inputs, &done, &in)) {
		struct tft_tf_str st;

		if (t->nin == DF_TMPL_IN) {
			t->nin = DF_NIN_MANY;
			break;
		}
		t->in[2 * t->nin] = tft_hash_fast(in.p, in.len, 0);
		t->in[2 * t->nin + 1] = tft_tf_names_strip_rename(in, &st) ? tft_hash_fast(st.p, st.len, 0) : 0;
		t->nin++;
	}
	return 0;
}

/*
 * The node just queued as ev, for emit_dataflow(): its place, timeline.py's
 * times (as the tf.timeline export reads them back from its args), its
 * tensors' and inputs' names (t: its template's dataflow part), hashed here,
 * on the thread that decodes it. Kept at rm->df_base + its node index when
 * the parallel import placed the device's records (rm->df_placed), else
 * appended.
 */
static int df_note(struct rm *rm, const struct rm_node *n, const struct tft_event *ev,
		   struct tft_tf_str node_name, const struct rm_dft *t)
{
	const struct rm_dev *dev = rm->cur;
	struct tft_tf_str name = node_name;
	struct rm_df *d;
	int64_t dur_us;
	int r;

	if (rm->df_placed) {
		uint64_t at = rm->df_base + rm->node_index;

		if (at >= rm->ndf)
			return TFT_EFORMAT; /* (more nodes than the pre-pass counted: cannot happen) */
		d = &rm->df[at];
	} else {
		if (rm->ndf == UINT32_MAX ||
		    tft_grow((void **)&rm->df, &rm->cdf, rm->ndf + 1, sizeof(*rm->df)))
			return TFT_ENOMEM;
		d = &rm->df[rm->ndf++];
	}
	d->ts = ev->ts_ns;
	d->track = ev->track;
	d->name = ev->name;
	d->op = t->op;
	d->op2 = t->op2;
	d->dev = (uint32_t)(dev - rm->devs);
	d->entry = rm->cur_entry >= 0 && rm->cur_entry <= INT32_MAX ? (int32_t)rm->cur_entry : -1;
	d->wk = rm->df_wk;
	d->hoff = rm->ndfh;
	d->nout = n->nout;
	d->nin = 0;
	d->flags = (dev->tl_gputrace ? DF_GPUTRACE : 0) | (t->recv ? DF_RECV : 0) |
		   (n->timeline_label.len ? 0 : DF_NOLABEL);
	if (n->has & (1ull << NF_ALL_START_US)) {
		d->start_us = n->all_start_micros;
		dur_us = (n->has & (1ull << NF_ALL_END_US)) ? n->all_end_rel_micros : 0;
	} else {
		d->start_us = floor_div(ev->ts_ns, 1000);
		dur_us = floor_div(end_of(ev->ts_ns, ev->dur_ns), 1000) - d->start_us;
	}
	d->end_us = (int64_t)((uint64_t)d->start_us + (uint64_t)dur_us);
	if (d->nout && (r = dfh_push(rm, t->name_hash)))
		return r;
	if (d->nout > 1) {
		struct jbuf *b = &rm->scratch;

		if (!name.len)
			name.p = tft_writer_str(rm->w, ev->name, &name.len);
		for (uint32_t i = 1; i < d->nout; i++) {
			b->len = 0;
			jb_raw(b, name.p, name.len);
			jb_raw(b, ":", 1);
			jb_int(b, i);
			if (b->oom || (r = dfh_push(rm, tft_hash_fast(b->p, b->len, 0))))
				return TFT_ENOMEM;
		}
	}
	if (t->nin == DF_NIN_MANY) {
		struct tft_tf_str inputs, in;
		int done = 0;

		tft_tf_names_timeline_inputs((const char *)n->timeline_label.p, n->timeline_label.len,
					     &inputs);
		while (tft_tf_names_timeline_next_input(&inputs, &done, &in)) {
			if ((r = df_input(rm, in)))
				return r;
			d->nin += d->nin < UINT32_MAX;
		}
	} else {
		for (uint32_t q = 0; q < 2u * t->nin; q++)
			if ((r = dfh_push(rm, t->in[q])))
				return r;
		d->nin = t->nin;
	}
	return 0;
}

static int emit_node(struct rm *rm, struct rm_node *n)
{
	struct rm_dev *dev = rm->cur;
	uint32_t devno = (uint32_t)(dev - rm->devs) + 1;
	struct tft_tf_label lb;
	struct tft_tf_str node_name = {(const char *)n->node_name.p, n->node_name.len};
	struct tft_tf_str op = {NULL, 0}, ann_name = {NULL, 0};
	struct tft_event ev;
	struct rm_tmpl *slot, nt;
	uint64_t hash = 0;
	int64_t ts, dur;
	int comm, r, hit;
	uint32_t cat;
	struct rm_dft dft;

	rm->nargs = 0;
	rm->args = rm->args_buf;
	if (rm->direct && !rm->spilled && rm->npargs < UINT32_MAX - MAX_ARGS &&
	    !tft_grow((void **)&rm->pargs, &rm->cpargs, rm->npargs + MAX_ARGS, sizeof(*rm->pargs)))
		rm->args = rm->pargs + rm->npargs;

	/* Time: nanosecond fields when present (TF >= 1.13), else micros. */
	if (n->has & (1ull << NF_ALL_START_NS))
		ts = n->all_start_nanos;
	else
		ts = us_to_ns(n->all_start_micros);
	if ((n->has & (1ull << NF_ALL_END_NS)) && n->all_end_rel_nanos)
		dur = n->all_end_rel_nanos;
	else if (n->all_end_rel_micros)
		dur = us_to_ns(n->all_end_rel_micros);
	else if ((n->has & (1ull << NF_OP_END_NS)) && n->op_end_rel_nanos)
		dur = n->op_end_rel_nanos; /* RecvTensor: only op_end_rel is set */
	else
		dur = us_to_ns(n->op_end_rel_micros);
	if (dur < 0)
		dur = 0;
	if (ts > 0 && dur > INT64_MAX - ts)
		dur = INT64_MAX - ts; /* garbage input: keep ts + dur representable */

	slot = tmpl_slot(rm, devno, node_name, &n->timeline_label, &hash, &hit);
	if (hit) {
		/*
		 * Whole 64-byte blocks (4 args): a variable-length memcpy compiles to
		 * `rep movsq` here, slower than the few vector moves. The spare args
		 * copied past nargs fit (TMPL_MAX_ARGS and MAX_ARGS are multiples of
		 * 4) and are overwritten or ignored.
		 */
		for (uint32_t i = 0; i < slot->nargs; i += 4)
			memcpy(rm->args + i, slot->args + i, 4 * sizeof(rm->args[0]));
		rm->nargs = slot->nargs;
		comm = slot->comm;
		cat = slot->cat;
		goto per_node;
	}

	tft_tf_names_parse_label((const char *)n->timeline_label.p, n->timeline_label.len, &lb);
	comm = node_op(dev->gputrace, node_name, &lb, &op, &ann_name);

	if (op.len && (r = arg_tfstr(rm, rm->k_op, op)))
		return r;
	if (lb.inputs.len && lb.kind == TFT_TF_LABEL_OP) {
		struct tft_tf_str rest = lb.inputs, in;
		struct jbuf *b = &rm->scratch;

		b->len = 0;
		jb_raw(b, "[", 1);
		while (tft_tf_names_next_input(&rest, &in)) {
			jb_sep(b);
			jb_str(b, in.p, in.len);
		}
		jb_raw(b, "]", 1);
		if (b->oom)
			return TFT_ENOMEM;
		if ((r = arg_strn(rm, rm->k_inputs, b->p, b->len, TFT_ARG_JSON)))
			return r;
	}
	if (n->timeline_label.len &&
	    (r = arg_strn(rm, rm->k_label, n->timeline_label.p, n->timeline_label.len, TFT_ARG_STR)))
		return r;
	if (ann_name.len && dev->gputrace && (r = arg_tfstr(rm, rm->k_node, ann_name)))
		return r;
	if (lb.kind == TFT_TF_LABEL_KERNEL && (r = arg_tfstr(rm, rm->k_kernel, lb.name)))
		return r;
	if ((r = arg_tfstr(rm, rm->k_tensor, lb.tensor)) || (r = arg_tfstr(rm, rm->k_src_dev, lb.src_device)) ||
	    (r = arg_tfstr(rm, rm->k_dst_dev, lb.dst_device)) ||
	    (r = arg_tfstr(rm, rm->k_annotation, lb.annotation)) ||
	    (r = arg_tfstr(rm, rm->k_grid, lb.grid)) || (r = arg_tfstr(rm, rm->k_block, lb.block)))
		return r;
	if (lb.bytes >= 0)
		arg_int(rm, rm->k_bytes, lb.bytes);
	if (lb.regs >= 0)
		arg_int(rm, rm->k_regs, lb.regs);
	if (lb.shm >= 0)
		arg_int(rm, rm->k_shm, lb.shm);
	if (lb.kind == TFT_TF_LABEL_MEMCPY)
		arg_bool(rm, rm->k_async, lb.async);
	if (lb.to_device >= 0)
		arg_int(rm, rm->k_to_device, lb.to_device);

	if (comm)
		cat = rm->c_comm;
	else if (lb.kind == TFT_TF_LABEL_MEMCPY)
		cat = rm->c_memcpy;
	else if (dev->gputrace)
		cat = rm->c_kernel;
	else
		cat = rm->c_op;
	if (slot && rm->nargs <= TMPL_MAX_ARGS) {
		memset(&nt, 0, sizeof(nt));
		nt.hash = hash;
		nt.name_len = (uint32_t)node_name.len;
		nt.label_len = (uint32_t)n->timeline_label.len;
		nt.dev = devno;
		nt.cat = cat;
		nt.comm = (uint8_t)comm;
		nt.nargs = (uint8_t)rm->nargs;
		memcpy(nt.args, rm->args, rm->nargs * sizeof(rm->args[0]));
	} else {
		slot = NULL;
	}

per_node:
	if (n->has & (1ull << NF_ALL_START_US))
		arg_int(rm, rm->k_all_start_us, n->all_start_micros);
	if (n->has & (1ull << NF_OP_START_US))
		arg_int(rm, rm->k_op_start_us, n->op_start_rel_micros);
	if (n->has & (1ull << NF_OP_END_US))
		arg_int(rm, rm->k_op_end_us, n->op_end_rel_micros);
	if (n->has & (1ull << NF_ALL_END_US))
		arg_int(rm, rm->k_all_end_us, n->all_end_rel_micros);
	if (n->has & (1ull << NF_SCHED_US))
		arg_int(rm, rm->k_sched_us, n->scheduled_micros);
	if (n->has & (1ull << NF_ALL_START_NS))
		arg_int(rm, rm->k_all_start_ns, n->all_start_nanos);
	if (n->has & (1ull << NF_OP_START_NS))
		arg_int(rm, rm->k_op_start_ns, n->op_start_rel_nanos);
	if (n->has & (1ull << NF_OP_END_NS))
		arg_int(rm, rm->k_op_end_ns, n->op_end_rel_nanos);
	if (n->has & (1ull << NF_ALL_END_NS))
		arg_int(rm, rm->k_all_end_ns, n->all_end_rel_nanos);
	if (n->has & (1ull << NF_SCHED_NS))
		arg_int(rm, rm->k_sched_ns, n->scheduled_nanos);
	if (n->has & (1ull << NF_THREAD)) {
		arg_int(rm, rm->k_thread, (int64_t)n->thread_id);
		for (uint32_t i = 0; i < rm->nthreads; i++) {
			if (rm->threads[i].tid == n->thread_id) {
				if (rm->nargs < MAX_ARGS) {
					struct tft_arg *a = &rm->args[rm->nargs++];

					a->key = rm->k_thread_name;
					a->type = TFT_ARG_STR;
					a->v.str = rm->threads[i].name;
				}
				break;
			}
		}
	}
	/*
	 * Only these fields write the JSON buffers (both decoders set their
	 * presence bits), and a buffer out of memory failed its node already:
	 * a node without them has nothing to check here.
	 */
	if (n->has & NF_NESTED) {
		if ((r = json_arg(rm, JM_MEMORY, &rm->j_memory, rm->k_memory, 1)) ||
		    (r = json_arg(rm, JM_OUTPUT, &rm->j_output, rm->k_output, 1)) ||
		    (r = json_arg(rm, JM_REF, &rm->j_ref, rm->k_ref, 1)) ||
		    (r = json_arg(rm, JM_MEMSTATS, &rm->j_memstats, rm->k_memstats, 0)))
			return r;
		if (rm->j_memory.oom || rm->j_output.oom || rm->j_ref.oom || rm->j_memstats.oom ||
		    rm->j_tmp.oom || rm->j_dims.oom || rm->j_ids.oom || rm->j_ids2.oom ||
		    rm->j_dnames.oom)
			return TFT_ENOMEM;
		for (int k = 0; k < JM_KINDS; k++)
			if (rm->jrun[k].state == JR_MISS)
				json_memo_store(&rm->jrun[k]);
	}

	memset(&ev, 0, sizeof(ev));
	ev.kind = TFT_EV_SLICE;
	ev.ts_ns = ts;
	ev.dur_ns = dur;
	ev.track = comm ? comm_track(rm, dev) : main_track(rm, dev);
	if (ev.track == TFT_NONE)
		return TFT_ENOMEM;
	if (hit)
		ev.name = slot->ev_name;
	else if (node_name.len)
		ev.name = intern(rm, node_name.p, node_name.len);
	else if (op.len)
		ev.name = intern(rm, op.p, op.len);
	else
		ev.name = intern_c(rm, "(unnamed)");
	if (ev.name == UINT32_MAX)
		return TFT_ENOMEM;
	if (!hit) {
		struct tft_tf_str nm = node_name;

		if (!nm.len)
			nm.p = tft_writer_str(rm->w, ev.name, &nm.len);
		if ((r = df_prep(rm, dev, nm, &n->timeline_label, &dft)))
			return r;
	}
	ev.cat = cat;
	ev.count = 1;
	/* timeline.py orders a device's lanes by this position (export_tftimeline.c). */
	arg_int(rm, rm->k_node_index, (int64_t)rm->node_index);
	/* its step: the tf.timeline export's StepStats, also where a track is several steps' */
	arg_int(rm, rm->k_step_pos, rm->step_pos);
	if (rm->cur_entry >= 0)
		arg_int(rm, rm->k_dev_entry, rm->cur_entry);
	ev.nargs = rm->nargs;
	ev.args = rm->args;
	r = queue_event(rm, &ev);
	if (!r)
		r = df_note(rm, n, &ev, node_name, hit ? &slot->df : &dft);
	if (r)
		return r;

	/* Send/recv matching. */
	if (hit) {
		if (slot->has_comm && (r = add_comm_known(rm, slot, ev.track, ts, end_of(ts, ev.dur_ns))))
			return r;
	} else if (lb.kind == TFT_TF_LABEL_SEND || lb.kind == TFT_TF_LABEL_RECV ||
		   lb.kind == TFT_TF_LABEL_TRANSFER) {
		char src[160], dst[160];
		const struct rm_comm *added;
		int role;

		if (lb.kind == TFT_TF_LABEL_SEND) {
			role = ROLE_SEND;
			snprintf(src, sizeof(src), "%s", dev->canon);
			canon_of(lb.dst_device, dst, sizeof(dst));
			r = add_comm(rm, role, lb.tensor, src, dst, ev.track, ts, end_of(ts, ev.dur_ns), &added);
		} else if (lb.kind == TFT_TF_LABEL_RECV) {
			role = ROLE_RECV;
			canon_of(lb.src_device, src, sizeof(src));
			snprintf(dst, sizeof(dst), "%s", dev->canon);
			r = add_comm(rm, role, lb.tensor, src, dst, ev.track, ts, end_of(ts, ev.dur_ns), &added);
		} else {
			role = ROLE_TRANSFER;
			canon_of(lb.src_device, src, sizeof(src));
			canon_of(lb.dst_device, dst, sizeof(dst));
			r = add_comm(rm, role, tft_tf_names_rendezvous_tensor(lb.tensor), src,
				     dst, ev.track, ts, end_of(ts, ev.dur_ns), &added);
		}
		if (r)
			return r;
		if (added && added->tensor == UINT32_MAX)
			slot = NULL; /* out of memory: do not remember a bad id */
		if (slot && added) {
			nt.has_comm = 1;
			nt.role = (uint8_t)role;
			nt.comm_key = added->key;
			nt.comm_cross = added->cross;
			nt.comm_tensor = added->tensor;
		}
	}
	if (!hit && slot) {
		nt.ev_name = ev.name;
		nt.df = dft;
		tmpl_store(rm, slot, &nt, node_name, &n->timeline_label);
	}

	if (rm->nodes == 0 || ts < rm->min_ts)
		rm->min_ts = ts;
	if (rm->nodes == 0 || ts + dur > rm->max_end)
		rm->max_end = ts + dur;
	if (rm->procs_seen == 0) {
		rm->step_process = dev->process;
		rm->procs_seen = 1;
	} else if (rm->step_process != dev->process) {
		rm->step_process = TFT_NONE;
	}
	rm->nodes++;
	return 0;
}

static int node_fail(struct rm *rm, int r, const struct tft_pb_sub *s)
{
	return tft_pb_wire_fail(rm->dec, r, s->p - rm->dec->base, "%s",
				r == TFT_ENOMEM ? "out of memory" : "could not store the node");
}

static int decode_node(struct rm *rm, const struct tft_pb_sub *s)
{
	struct rm_node n;
	int r;

	node_begin(rm, &n);
	if (rm->dec->decode_text_sub || fast_node(rm, s->p, s->p + s->len, &n)) {
		/* Text input, or not the simple case: the table decoder judges. */
		node_begin(rm, &n);
		r = tft_pb_wire_decode_sub(s, &node_msg, &n, rm);
		if (r)
			return r;
	}
	r = emit_node(rm, &n);
	rm->node_index++;
	if (r)
		return node_fail(rm, r, s);
	if ((rm->nodes & 1023) == 0)
		progress(rm, (uint64_t)(s->p - rm->dec->base));
	return 0;
}

/*
 * The nodes of a DeviceStepStats the pre-pass found simple (device and
 * node_stats fields only, lengths checked), without the table decoder's
 * per-field dispatch. Returns 0, or -1 after the first node that the fast
 * reader does not take or that fails (nothing of it stored when the reader
 * refused it): the caller then runs the table decoder over the device,
 * which skips the nodes done here and goes on exactly as it would have
 * (same message paths in errors).
 */
static int nodes_direct(struct rm *rm, const struct tft_pb_sub *ds)
{
	const uint8_t *p = ds->p, *end = ds->p + ds->len;
	struct rm_node n;

	rm->skip_nodes = 0;
	rm->redo_err = 0;
	for (;;) {
		struct tft_pb_bytes b;
		int r = next_node_field(&p, end, &b, NULL);

		if (r <= 0)
			return r; /* (-1: checked by the pre-pass, cannot happen) */
		node_begin(rm, &n);
		if (fast_node(rm, b.p, b.p + b.len, &n))
			return -1;
		r = emit_node(rm, &n);
		rm->node_index++;
		if (r) {
			rm->redo_err = r;
			return -1;
		}
		rm->skip_nodes++;
		if ((rm->nodes & 1023) == 0)
			progress(rm, (uint64_t)(b.p - rm->dec->base));
	}
}

/* ---- container handlers ----------------------------------------------------------- */

static int on_node_count(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct rm *rm = ctx;

	rm->dev_nodes++;
	return 0;
}

static int on_node_stats(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct rm *rm = ctx;

	if (rm->skip_nodes) {
		rm->skip_nodes--;
		return 0;
	}
	if (rm->redo_err) {
		int r = rm->redo_err;

		rm->redo_err = 0;
		return node_fail(rm, r, &v->sub);
	}
	return decode_node(rm, &v->sub);
}

static int on_thread_name(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct rm *rm = ctx;
	struct rm_map_entry e;
	int r;

	memset(&e, 0, sizeof(e));
	r = tft_pb_wire_decode_sub(&v->sub, &thread_name_msg, &e, ctx);
	if (r)
		return r;
	if (tft_grow((void **)&rm->threads, &rm->cthreads, rm->nthreads + 1, sizeof(*rm->threads)))
		return tft_pb_wire_fail(rm->dec, TFT_ENOMEM, -1, "out of memory");
	rm->threads[rm->nthreads].tid = (uint32_t)e.key;
	rm->threads[rm->nthreads].name = intern(rm, e.value.p, e.value.len);
	if (rm->threads[rm->nthreads].name == UINT32_MAX)
		return tft_pb_wire_fail(rm->dec, TFT_ENOMEM, -1, "out of memory");
	rm->nthreads++;
	return 0;
}

/*
 * The first walk of a binary DeviceStepStats for the common shape (a
 * device name and node_stats, no thread_names): the device and the node
 * count as the table decoder would give them. -1 on anything else (thread
 * names, other fields, malformed input): the table decoder then walks it.
 */
static int fast_devstats_scan(struct rm *rm, const struct tft_pb_sub *s, struct rm_devstats *ds)
{
	const uint8_t *p = s->p, *end = s->p + s->len;

	while (p < end) {
		struct tft_pb_bytes b;
		uint64_t key;

		if (fp_varint(&p, end, &key) || fp_bytes(&p, end, &b))
			return -1;
		if (key == (2 << 3 | TFT_PB_WT_LEN)) {
			rm->dev_nodes++;
		} else if (key == (1 << 3 | TFT_PB_WT_LEN)) {
			ds->device = b;
			ds->has |= 1u << 0;
		} else {
			return -1;
		}
	}
	return 0;
}

/* The pre-pass's record of this dev_stats, or NULL (text input, or not walked). */
static const struct rm_dinfo *take_dinfo(struct rm *rm, const struct tft_pb_sub *s)
{
	const struct rm_dinfo *di;

	if (rm->next_dinfo >= rm->ndinfo)
		return NULL;
	di = &rm->dinfo[rm->next_dinfo];
	if (di->p != s->p || di->len != s->len)
		return NULL;
	rm->next_dinfo++;
	return di;
}

static int dev_stats(struct rm *rm, const struct tft_pb_val *v, const struct rm_dinfo *di);

static int on_dev_stats(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct rm *rm = ctx;

	return dev_stats(rm, v, rm->dec->decode_text_sub ? NULL : take_dinfo(rm, &v->sub));
}

/* Device dev is the next dev_stats entry's (empty: it has no nodes); sets cur_entry. */
static int note_entry(struct rm *rm, struct rm_dev *dev, int empty)
{
	rm->cur_entry = -1;
	if (tft_grow((void **)&rm->entries, &rm->centries, rm->nentries + 1, sizeof(*rm->entries)))
		return TFT_ENOMEM;
	if (dev->entries++) {
		rm->cur_entry = (int64_t)rm->nentries;
		rm->entries_odd = 1;
	}
	/* an earlier input's tracks (continued) do not sort in this one's entry order: note it */
	rm->entries_odd |= empty | dev->continued;
	rm->entries[rm->nentries++] = (uint32_t)(dev - rm->devs);
	return 0;
}

/* One DeviceStepStats; di: the pre-pass's record of it, or NULL. */
static int dev_stats(struct rm *rm, const struct tft_pb_val *v, const struct rm_dinfo *di)
{
	struct rm_devstats ds;
	int r;

	memset(&ds, 0, sizeof(ds));
	rm->dev_nodes = 0;
	rm->nthreads = 0;
	rm->node_index = 0;
	if (di && di->simple) {
		/* what fast_devstats_scan() would find, known from the pre-pass */
		ds.device = di->device;
		rm->dev_nodes = di->nodes;
	} else if (rm->dec->decode_text_sub || (di && !di->simple) ||
		   fast_devstats_scan(rm, &v->sub, &ds)) {
		memset(&ds, 0, sizeof(ds));
		rm->dev_nodes = 0;
		r = tft_pb_wire_decode_sub(&v->sub, &devstats_msg, &ds, rm);
		if (r)
			return r;
	}
	/* (a worker's device was registered, with its tracks, before the lanes opened) */
	rm->cur = rm->job_dev ? rm->job_dev : get_device(rm, ds.device.p, ds.device.len);
	if (!rm->cur)
		return tft_pb_wire_fail(rm->dec, TFT_ENOMEM, v->offset, "could not register the device");
	if (!rm->job_dev && !rm->entries_par && note_entry(rm, rm->cur, !rm->dev_nodes))
		return tft_pb_wire_fail(rm->dec, TFT_ENOMEM, v->offset, "could not register the device");
	if (!rm->dev_nodes) {
		/* timeline.py gives a device without nodes a pid too: keep an empty track. */
		if (main_track(rm, rm->cur) == TFT_NONE)
			return tft_pb_wire_fail(rm->dec, TFT_ENOMEM, v->offset,
						"could not register the device");
		return 0;
	}
	if (di && di->simple && nodes_direct(rm, &v->sub) == 0)
		r = 0;
	else
		r = tft_pb_wire_decode_sub(&v->sub, &devstats_nodes_msg, NULL, rm);
	rm->skip_nodes = 0;
	rm->redo_err = 0;
	if (!r) {
		r = flush_device(rm);
		if (r)
			r = tft_pb_wire_fail(rm->dec, r, v->offset, "could not store the device's nodes");
	}
	return r;
}

static int par_stepstats(struct rm *rm, const struct tft_pb_sub *ss);

static int on_step_stats(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct rm *rm = ctx;

	if (rm->try_par) {
		int r = par_stepstats(rm, &v->sub);

		if (r != RM_SERIAL)
			return r;
	}
	return tft_pb_wire_decode_sub(&v->sub, &stepstats_msg, NULL, ctx);
}

/*
 * The inputs of a partition graph's NodeDefs, for the dataflow of nodes
 * that have no timeline_label (emit_dataflow): node name -> its data inputs
 * ("x", "x:1"; control inputs "^x" name no tensor) as hashes, two per input
 * as the labels' (rm->dfh layout). The graph's own importer checked and
 * stored the graph; this walk only takes names and inputs.
 */
struct rm_gnode {
	uint64_t name;     /* hash of the node name; 0 with off == UINT32_MAX: empty slot */
	uint32_t off, nin; /* its hashes in rm->gin */
};

struct rm_gnode_msg {
	uint64_t has;
	struct tft_pb_bytes name;
};

static int on_gnode_input(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v);

static const struct tft_pb_field gnode_fields[] = {
	F(1, TFT_PB_STRING, 0, struct rm_gnode_msg, name, "name", NULL, NULL),
	H(3, TFT_PB_STRING, TFT_PB_F_REPEATED, "input", on_gnode_input, NULL),
};
static const struct tft_pb_msg gnode_msg = {"NodeDef", gnode_fields, 2, offsetof(struct rm_gnode_msg, has)};

static int on_gnode(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v);

static const struct tft_pb_field ggraph_fields[] = {
	H(1, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "node", on_gnode, NULL),
};
static const struct tft_pb_msg ggraph_msg = {"GraphDef", ggraph_fields, 1, TFT_PB_NOOFF};

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

static struct rm_gnode *gnode_slot(struct rm *rm, uint64_t name)
{
	size_t i = (size_t)tft_hash_u64(name) & rm->gmask;

	while (rm->gnodes[i].off != UINT32_MAX && rm->gnodes[i].name != name)
		i = (i + 1) & rm->gmask;
	return &rm->gnodes[i];
}

static int on_gnode(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct rm *rm = ctx;
	struct rm_gnode_msg m;
	struct rm_gnode *g;
	uint32_t off = rm->ngin;
	int r;

	memset(&m, 0, sizeof(m));
	r = tft_pb_wire_decode_sub(&v->sub, &gnode_msg, &m, ctx);
	if (r)
		return r;
	if (!rm->gnodes || 2 * (rm->ngnodes + 1) > rm->gmask + 1) {
		size_t cap = rm->gnodes ? 2 * (rm->gmask + 1) : 256;
		struct rm_gnode *old = rm->gnodes;
		size_t omask = rm->gmask;

		if (!(rm->gnodes = malloc(cap * sizeof(*rm->gnodes)))) {
			rm->gnodes = old;
			return tft_pb_wire_fail(rm->dec, TFT_ENOMEM, v->offset, "out of memory");
		}
		for (size_t i = 0; i < cap; i++)
			rm->gnodes[i].off = UINT32_MAX;
		rm->gmask = cap - 1;
		for (size_t i = 0; old && i <= omask; i++)
			if (old[i].off != UINT32_MAX)
				*gnode_slot(rm, old[i].name) = old[i];
		free(old);
	}
	g = gnode_slot(rm, tft_hash_fast(m.name.p, m.name.len, 0));
	rm->ngnodes += g->off == UINT32_MAX;
	*g = (struct rm_gnode){ tft_hash_fast(m.name.p, m.name.len, 0), off, (rm->ngin - off) / 2 };
	return 0;
}

static int on_graph(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct rm *rm = ctx;
	/* The input as given, not its base name: two workers' run_meta files stay apart. */
	const char *in = rm->name ? rm->name : "";
	char gname[1200];

	if (f->num == 4) {
		rm->nfunc = v->index;
		return tft_pb_wire_decode_sub(&v->sub, &function_graphs_msg, NULL, ctx);
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
		return r ? r : tft_pb_wire_decode_sub(&v->sub, &ggraph_msg, NULL, ctx);
	}
}

/* ---- parallel import: devices on several threads ------------------------------------
 *
 * With opts->threads >= 2 and binary input whose devices each appear once
 * (rm->direct), par_stepstats() decodes the dev_stats on several threads,
 * each owning whole devices: a worker decodes a device's nodes with the
 * serial code (dev_stats(), its own struct rm: scratch, templates, pend
 * buffer, comm records, counts) and appends the device's events through its
 * own writer lane, which does their store work on that thread too. The
 * session is the serial import's:
 *  - processes and tracks are registered before the lanes open, in the
 *    order the serial import registers them (same ids). Tracks are created
 *    on first use, so a first parallel walk (predict_tracks) finds which of
 *    a device's tracks its nodes use, and which first, by emit_node()'s own
 *    rule (node_op);
 *  - comm records are kept per device and concatenated in device order
 *    after the join, so the flows come out as from one thread;
 *  - each worker decodes with its own decoder, set up as the serial one is
 *    at that dev_stats (same message paths), and its own error: the error
 *    reported is the first failed device's in file order;
 *  - a device whose events outgrow the worker's share of the memory budget
 *    (what the serial pend buffer and sorter may hold), or whose parts
 *    together outgrow the whole of it, is dropped and redone serially after
 *    the join (through the sorter, as the serial import spills it); so is
 *    a device no worker reached;
 *  - a large device (more than a worker's share of the bytes or of the
 *    budget) whose DeviceStepStats holds only its name and nodes is
 *    split into runs of nodes (parts) that workers decode into pend
 *    buffers of their own; the worker that finishes the last part appends
 *    the device (the parts in order are the serial pend buffer). A part the
 *    direct reader does not take sends its device to the serial redo.
 * Anything else (a walk that cannot tell, other StepStats fields, a single
 * job) leaves the input to the serial decode.
 */

static void rm_free(struct rm *rm);

enum { PT_MAIN = 1, PT_COMM = 2, PT_COMM_FIRST = 4 }; /* a device's tracks, as used */
enum { PD_PENDING, PD_DONE, PD_FAILED, PD_DEFERRED };    /* a device's fate in the workers */

struct rm_pdev {
	uint8_t tracks;      /* PT_* (predicted) */
	uint8_t state;       /* PD_* */
	uint32_t worker;     /* PD_FAILED: the worker that holds its error */
	uint32_t job0, njobs; /* its jobs: the whole device, or its parts in order */
	uint32_t parts_left; /* (atomic) parts not decoded yet */
	uint64_t held;       /* (atomic) pend bytes of its decoded parts */
	uint64_t df_base;    /* its first node's place in the driver's rm.df */
	int bad;             /* (atomic) a part failed: the device is redone serially */
};

/*
 * One job of the decode: a whole device (dev_stats()), or one part of it
 * (a run of node_stats fields, part_nodes()), with what it produced.
 */
struct rm_job {
	uint32_t dev;
	uint32_t part;           /* its index among the device's jobs */
	const uint8_t *p, *end;  /* parts: its fields */
	uint64_t node0;          /* parts: node_stats index of its first node */
	size_t size;             /* bytes to decode (job order) */
	/* Results, when decoded. */
	uint32_t worker, comm_off, ncomm; /* its comm records in the worker's rm.comm */
	uint32_t dfh_off;        /* where its hashes start in the worker's rm.dfh */
	uint64_t nodes;          /* what emit_node() counted */
	int64_t min_ts, max_end;
	uint32_t step_process;
	int procs_seen;
	struct rm_pend *pend;    /* owned (parts, until the device is appended) */
	struct tft_arg *pargs;   /* owned (idem) */
	uint32_t npend, npargs;
	uint32_t cpend, cpargs;  /* their capacities */
};

/* A device smaller than this is never split (parts cost a buffer and a merge each). */
#define RM_PART_MIN (16u << 10)
/* A node's buffered event and args, roughly (sizeof(struct rm_pend) + 16 args): part sizing. */
#define RM_NODE_EST 320u

/* predict_node()'s memo: node_name and label bytes (borrowed from the input) -> comm. */
#define PRED_SLOTS 4096u /* a power of two; direct-mapped */

struct rm_pmemo {
	uint64_t hash;
	const uint8_t *name, *label; /* borrowed */
	uint32_t name_len, label_len;
	uint8_t used, gputrace, comm;
};

struct rm_worker {
	struct rm rm;            /* its own decode state; shares the driver's devs (read only) */
	struct rm_par *par;      /* borrowed */
	uint32_t index;
	struct tft_pb_dec dec;   /* set up per device (par_dec) */
	struct tft_error err;    /* the current device's */
	struct tft_error fail_err; /* its first failure in device order */
	uint32_t fail_dev;       /* that device, UINT32_MAX: none */
	int fail_rc;
	struct rm_pmemo *memo;   /* owned, lazy */
	size_t budget;           /* pend bytes for a device or a part */
	pthread_t th;
};

struct rm_par {
	struct rm *rm;          /* borrowed: the driving import */
	struct tft_pb_dec dec0; /* the decoder as it is in StepStats (the step_stats path pushed) */
	struct rm_pdev *pdev;   /* owned: per rm->dinfo */
	struct rm_job *job;     /* owned: the devices' jobs, device by device */
	uint32_t njob;
	uint32_t *order;        /* owned: the current phase's work (phase 0 devices,
				 * phase 1 jobs, largest first) */
	uint32_t norder;
	size_t part_bytes;      /* a device larger than this is split */
	size_t dev_budget;      /* pend bytes a device's parts may hold together */
	struct rm_worker *wk;   /* owned: nwk */
	uint32_t nwk;
	int phase;              /* 0: predict_tracks, 1: decode */
	/* Shared between the threads (atomics). */
	uint32_t next;          /* next job */
	uint32_t min_fail;      /* lowest failed device, UINT32_MAX: none */
	int unsure;             /* a prediction walk could not tell */
	uint64_t bytes, nodes;  /* progress */
	uint64_t base_pos;      /* progress: input offset of the StepStats */
	/* Pend buffers of appended parts, for the next parts (their pages are already in). */
	pthread_mutex_t pool_mu;
	struct rm_job pool[8];  /* (only pend, pargs, cpend, cpargs) */
	uint32_t npool;
};

/* A worker that gave its pend buffer to a part takes one from the pool, if any. */
static void pool_get(struct rm_par *par, struct rm *rm)
{
	if (rm->pend || rm->pargs)
		return;
	pthread_mutex_lock(&par->pool_mu);
	if (par->npool) {
		struct rm_job *b = &par->pool[--par->npool];

		rm->pend = b->pend;
		rm->cpend = b->cpend;
		rm->pargs = b->pargs;
		rm->cpargs = b->cpargs;
	}
	pthread_mutex_unlock(&par->pool_mu);
}

/* A part's buffer, appended: to the pool (or freed). */
static void pool_put(struct rm_par *par, struct rm_job *job)
{
	pthread_mutex_lock(&par->pool_mu);
	/* (one per worker at most: the pool holds no more than they use) */
	if (par->npool < par->nwk && par->npool < sizeof(par->pool) / sizeof(par->pool[0])) {
		struct rm_job *b = &par->pool[par->npool++];

		b->pend = job->pend;
		b->cpend = job->cpend;
		b->pargs = job->pargs;
		b->cpargs = job->cpargs;
		job->pend = NULL;
		job->pargs = NULL;
	}
	pthread_mutex_unlock(&par->pool_mu);
	free(job->pend);
	free(job->pargs);
	job->pend = NULL;
	job->pargs = NULL;
}

/* Largest first, then input order: the last job to start is a small one. */
static int cmp_job(const void *a, const void *b, void *ctx)
{
	const struct rm_job *job = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (job[x].size != job[y].size)
		return job[x].size > job[y].size ? -1 : 1;
	return x < y ? -1 : (x > y);
}

/*
 * Cut device k (a simple one: only device and node_stats fields) into its
 * jobs' runs of about equal bytes, each starting at a node_stats field.
 * The device keeps fewer jobs when it has fewer nodes; -1 when its fields
 * do not read (then it stays whole).
 */
static int split_device(struct rm_par *par, uint32_t k)
{
	const struct rm_dinfo *di = &par->rm->dinfo[k];
	struct rm_pdev *pd = &par->pdev[k];
	struct rm_job *job = &par->job[pd->job0];
	const uint8_t *p = di->p, *end = di->p + di->len;
	uint32_t j = 0, n = pd->njobs;
	uint64_t node = 0;

	job[0].p = p;
	job[0].node0 = 0;
	for (;;) {
		const uint8_t *at;
		struct tft_pb_bytes b;
		int r = next_node_field(&p, end, &b, &at);

		if (r < 0)
			return -1;
		if (r == 0)
			break;
		if (j + 1 < n && (size_t)(at - di->p) >= (j + 1) * (di->len / n)) {
			job[j].end = at;
			job[++j].p = at;
			job[j].node0 = node;
		}
		node++;
	}
	job[j].end = end;
	pd->njobs = j + 1;
	for (uint32_t i = 0; i <= j; i++)
		job[i].size = (size_t)(job[i].end - job[i].p);
	return 0;
}

/* Whether the four bytes at q are one of the words. */
static inline int comm_at(const uint8_t *q)
{
	static const uint32_t words[5] = {
		'S' | 'e' << 8 | 'n' << 16 | (uint32_t)'d' << 24,
		'R' | 'e' << 8 | 'c' << 16 | (uint32_t)'v' << 24,
		'N' | 'c' << 8 | 'c' << 16 | (uint32_t)'l' << 24,
		'H' | 'o' << 8 | 'r' << 16 | (uint32_t)'o' << 24,
		'C' | 'o' << 8 | 'l' << 16 | (uint32_t)'l' << 24,
	};
	uint32_t w = tft_pb_wire_le32(q);

	for (int k = 0; k < 5; k++)
		if (w == words[k])
			return 1;
	return 0;
}

/* comm_word() from offset i on (what comes before holds none). */
static int comm_word_from(const uint8_t *p, size_t n, size_t i)
{
#ifdef __SSE2__
	for (; i + 19 <= n; i += 16) {
		__m128i a = _mm_loadu_si128((const __m128i *)(p + i));
		__m128i s = _mm_cmpeq_epi8(a, _mm_set1_epi8('S'));
		__m128i r = _mm_cmpeq_epi8(a, _mm_set1_epi8('R'));
		__m128i h = _mm_cmpeq_epi8(a, _mm_set1_epi8('H'));
		__m128i nc = _mm_or_si128(_mm_cmpeq_epi8(a, _mm_set1_epi8('N')),
					  _mm_cmpeq_epi8(a, _mm_set1_epi8('C')));
		__m128i d, m;
		unsigned bits;

		/* Most blocks hold none of the five first letters: the fourth is not loaded. */
		if (!_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(s, r), _mm_or_si128(h, nc))))
			continue;
		d = _mm_loadu_si128((const __m128i *)(p + i + 3));
		s = _mm_and_si128(s, _mm_cmpeq_epi8(d, _mm_set1_epi8('d')));
		r = _mm_and_si128(r, _mm_cmpeq_epi8(d, _mm_set1_epi8('v')));
		h = _mm_and_si128(h, _mm_cmpeq_epi8(d, _mm_set1_epi8('o')));
		nc = _mm_and_si128(nc, _mm_cmpeq_epi8(d, _mm_set1_epi8('l')));
		m = _mm_or_si128(_mm_or_si128(s, r), _mm_or_si128(h, nc));
		for (bits = (unsigned)_mm_movemask_epi8(m); bits; bits &= bits - 1)
			if (comm_at(p + i + (size_t)__builtin_ctz(bits)))
				return 1;
	}
#endif
	for (; i + 4 <= n; i++)
		if (comm_at(p + i))
			return 1;
	return 0;
}

#ifdef TFT_COMM_AVX2
/*
 * The same test 32 bytes at a time where the CPU has AVX2: the parallel
 * import's track prediction runs it over whole devices (predict_tracks),
 * and the three-operand forms drop the SSE2 loop's register copies too.
 */
__attribute__((target("avx2"))) static int comm_word_avx2(const uint8_t *p, size_t n)
{
	size_t i = 0;

	for (; i + 35 <= n; i += 32) {
		__m256i a = _mm256_loadu_si256((const __m256i *)(p + i));
		__m256i s = _mm256_cmpeq_epi8(a, _mm256_set1_epi8('S'));
		__m256i r = _mm256_cmpeq_epi8(a, _mm256_set1_epi8('R'));
		__m256i h = _mm256_cmpeq_epi8(a, _mm256_set1_epi8('H'));
		__m256i nc = _mm256_or_si256(_mm256_cmpeq_epi8(a, _mm256_set1_epi8('N')),
					     _mm256_cmpeq_epi8(a, _mm256_set1_epi8('C')));
		__m256i d, m;
		uint32_t bits;

		if (!_mm256_movemask_epi8(_mm256_or_si256(_mm256_or_si256(s, r),
							  _mm256_or_si256(h, nc))))
			continue;
		d = _mm256_loadu_si256((const __m256i *)(p + i + 3));
		s = _mm256_and_si256(s, _mm256_cmpeq_epi8(d, _mm256_set1_epi8('d')));
		r = _mm256_and_si256(r, _mm256_cmpeq_epi8(d, _mm256_set1_epi8('v')));
		h = _mm256_and_si256(h, _mm256_cmpeq_epi8(d, _mm256_set1_epi8('o')));
		nc = _mm256_and_si256(nc, _mm256_cmpeq_epi8(d, _mm256_set1_epi8('l')));
		m = _mm256_or_si256(_mm256_or_si256(s, r), _mm256_or_si256(h, nc));
		for (bits = (uint32_t)_mm256_movemask_epi8(m); bits; bits &= bits - 1)
			if (comm_at(p + i + (size_t)__builtin_ctz(bits)))
				return 1;
	}
	return comm_word_from(p, n, i);
}
#endif

/*
 * Whether p[0..n) holds "Send", "Recv", "Nccl", "Horo" or "Coll": every op
 * or node name that tft_tf_names_is_comm() accepts holds one of them, and
 * node_op() takes the op from the node name or the label bytes (or is
 * "RecvTensor" when the node name is). A device whose payload holds none
 * has no comm nodes, whatever its nodes say. Candidates are found 16 (or
 * 32) bytes at a time by their first and fourth bytes (S..d, R..v, N..l,
 * H..o, C..l: far rarer in names than the first two, "Re" of "Relu" and
 * "Reshape" say), then checked.
 */
static int comm_word(const uint8_t *p, size_t n)
{
	if (n < 4)
		return 0;
#ifdef TFT_COMM_AVX2
	if (__builtin_cpu_supports("avx2"))
		return comm_word_avx2(p, n);
#endif
	return comm_word_from(p, n, 0);
}

/*
 * Whether one binary NodeExecStats goes to its device's comm track: its
 * last node_name and timeline_label (what both node decoders keep) through
 * node_op(). -1 when the walk cannot read it (the decoders would refuse it
 * or take a path this does not follow): the prediction is then unsure.
 */
static int predict_node(struct rm_worker *wk, int gputrace, const uint8_t *p, const uint8_t *end)
{
	struct tft_pb_bytes name = {NULL, 0}, label = {NULL, 0}, b;
	struct rm_pmemo *m;
	struct tft_tf_label lb;
	struct tft_tf_str nm, op = {NULL, 0}, ann = {NULL, 0};
	uint64_t h;

	while (p < end) {
		uint64_t key, v;

		if (fp_varint(&p, end, &key))
			return -1;
		switch (key & 7) {
		case TFT_PB_WT_VARINT:
			if (fp_varint(&p, end, &v))
				return -1;
			break;
		case TFT_PB_WT_I64:
			if (end - p < 8)
				return -1;
			p += 8;
			break;
		case TFT_PB_WT_I32:
			if (end - p < 4)
				return -1;
			p += 4;
			break;
		case TFT_PB_WT_LEN:
			if (fp_bytes(&p, end, &b))
				return -1;
			if (key == (1 << 3 | TFT_PB_WT_LEN))
				name = b;
			else if (key == (8 << 3 | TFT_PB_WT_LEN))
				label = b;
			break;
		default:
			return -1; /* (groups) */
		}
	}
	if (!comm_word(name.p, name.len) && !comm_word(label.p, label.len))
		return 0;
	h = tft_hash_fast(label.p, label.len, (uint64_t)gputrace);
	h ^= tft_hash_fast(name.p, name.len, 0) * 0x9e3779b97f4a7c15ULL;
	if (!wk->memo) {
		wk->memo = calloc(PRED_SLOTS, sizeof(*wk->memo));
		if (!wk->memo)
			return -1;
	}
	m = &wk->memo[h & (PRED_SLOTS - 1)];
	if (m->used && m->hash == h && m->gputrace == gputrace && m->name_len == name.len &&
	    m->label_len == label.len && (!name.len || memcmp(m->name, name.p, name.len) == 0) &&
	    (!label.len || memcmp(m->label, label.p, label.len) == 0))
		return m->comm;
	nm.p = (const char *)name.p;
	nm.len = name.len;
	tft_tf_names_parse_label((const char *)label.p, label.len, &lb);
	m->used = 1;
	m->hash = h;
	m->gputrace = (uint8_t)gputrace;
	m->name = name.p;
	m->name_len = (uint32_t)name.len;
	m->label = label.p;
	m->label_len = (uint32_t)label.len;
	m->comm = (uint8_t)node_op(gputrace, nm, &lb, &op, &ann);
	return m->comm;
}

/*
 * The tracks device k's nodes use (PT_*), as dev_stats() and emit_node()
 * create them: main and/or comm, comm first or not; a device without nodes
 * keeps an empty main track. -1 when unsure.
 */
static int predict_tracks(struct rm_worker *wk, uint32_t k)
{
	const struct rm_dinfo *di = &wk->par->rm->dinfo[k];
	const uint8_t *p = di->p, *end = di->p + di->len;
	struct tft_tf_device td;
	struct tft_pb_bytes nm = di->device;
	int seen = 0, gputrace;

	if (!di->nodes)
		return PT_MAIN;
	if (!nm.len) { /* get_device()'s name for it */
		nm.p = (const uint8_t *)"unknown device";
		nm.len = 14;
	}
	if (!comm_word(di->p, di->len))
		return PT_MAIN;
	tft_tf_names_parse_device((const char *)nm.p, nm.len, &td);
	gputrace = (td.flags & (TFT_TF_DEV_STREAM | TFT_TF_DEV_MEMCPY)) != 0;
	while (p < end) {
		struct tft_pb_bytes b;
		uint64_t key, v;
		int c;

		/* (the pre-pass checked the shape: varints and length-delimited fields) */
		if (fp_varint(&p, end, &key))
			return -1;
		if ((key & 7) == TFT_PB_WT_VARINT) {
			if (fp_varint(&p, end, &v))
				return -1;
			continue;
		}
		if ((key & 7) != TFT_PB_WT_LEN || fp_bytes(&p, end, &b))
			return -1;
		if (key != (2 << 3 | TFT_PB_WT_LEN))
			continue;
		c = predict_node(wk, gputrace, b.p, b.p + b.len);
		if (c < 0)
			return -1;
		if (!seen)
			seen = c ? PT_COMM | PT_COMM_FIRST : PT_MAIN;
		else
			seen |= c ? PT_COMM : PT_MAIN;
		if ((seen & (PT_MAIN | PT_COMM)) == (PT_MAIN | PT_COMM))
			break; /* both seen: the rest cannot change it */
	}
	return seen;
}

/* The decoder as the serial one is when it hands dev_stats[k] to on_dev_stats. */
static void par_dec(const struct rm_par *par, struct tft_pb_dec *d, struct tft_error *err,
		    uint32_t k, struct tft_pb_val *v)
{
	const struct rm_dinfo *di = &par->rm->dinfo[k];

	*d = par->dec0;
	d->err = err;
	d->cur_field = stepstats_fields[0].name;
	d->cur_index = k;
	d->cur_num = 0;
	memset(v, 0, sizeof(*v));
	v->offset = di->at - d->base;
	v->index = k;
	v->sub.dec = d;
	v->sub.p = di->p;
	v->sub.len = di->len;
	v->sub.name = stepstats_fields[0].name;
	v->sub.index = k;
}

static void par_progress(struct rm *rm, uint64_t pos)
{
	struct rm_par *par = rm->par;
	uint64_t bytes, nodes;

	bytes = __atomic_add_fetch(&par->bytes, pos - rm->par_pos, __ATOMIC_RELAXED);
	nodes = __atomic_add_fetch(&par->nodes, rm->nodes - rm->par_nodes, __ATOMIC_RELAXED);
	rm->par_pos = pos;
	rm->par_nodes = rm->nodes;
	if (!rm->opts || !rm->opts->progress || /* (only the driving thread's worker has opts) */
	    !tft_ingest_progress_due(&rm->last_progress, 0))
		return;
	rm->opts->progress(rm->opts->progress_ctx, par->base_pos + bytes, rm->input_len, nodes);
}

/* A job starts: what emit_node() counts is the job's (job_end() keeps it). */
static void job_start(struct rm_worker *wk, struct rm_job *job)
{
	struct rm *rm = &wk->rm;

	job->worker = wk->index;
	job->comm_off = rm->ncomm;
	job->dfh_off = rm->ndfh;
	rm->nodes = rm->par_nodes = 0;
	rm->procs_seen = 0;
	rm->step_process = TFT_NONE;
	rm->deferred = 0;
	rm->spilled = 0;
	rm->npend = rm->npargs = 0;
	rm->par_pos = (uint64_t)(job->p - wk->dec.base);
}

/* ok: keep the job's counts and comm records, else forget them. */
static void job_end(struct rm_worker *wk, struct rm_job *job, int ok)
{
	struct rm *rm = &wk->rm;

	par_progress(rm, (uint64_t)(job->end - wk->dec.base));
	job->nodes = ok ? rm->nodes : 0;
	job->min_ts = rm->min_ts;
	job->max_end = rm->max_end;
	job->step_process = rm->step_process;
	job->procs_seen = ok ? rm->procs_seen : 0;
	if (!ok) {
		rm->ncomm = job->comm_off;
		rm->ndfh = job->dfh_off; /* (its records are written again by the serial redo) */
	}
	job->ncomm = rm->ncomm - job->comm_off;
	rm->npend = rm->npargs = 0;
	rm->deferred = 0;
}

/* Device k failed in this worker with r (wk->err filled): keep the first failure. */
static void dev_failed(struct rm_worker *wk, uint32_t k, int r)
{
	struct rm_par *par = wk->par;
	uint32_t cur = __atomic_load_n(&par->min_fail, __ATOMIC_RELAXED);

	par->pdev[k].state = PD_FAILED;
	par->pdev[k].worker = wk->index;
	if (k < wk->fail_dev) {
		wk->fail_dev = k;
		wk->fail_err = wk->err;
		wk->fail_rc = r;
	}
	while (k < cur && !__atomic_compare_exchange_n(&par->min_fail, &cur, k, 1, __ATOMIC_RELAXED,
						      __ATOMIC_RELAXED))
		;
	tft_error_clear(&wk->err);
}

/* Decode one part of device k (its nodes only) into a pend buffer of its own. */
static int part_nodes(struct rm *rm, const struct rm_job *job)
{
	const uint8_t *p = job->p, *end = job->end;
	struct rm_node n;

	for (;;) {
		struct tft_pb_bytes b;
		int r = next_node_field(&p, end, &b, NULL);

		if (r <= 0)
			return r;
		node_begin(rm, &n);
		if (fast_node(rm, b.p, b.p + b.len, &n) || emit_node(rm, &n))
			return -1;
		rm->node_index++;
		if ((rm->nodes & 1023) == 0)
			progress(rm, (uint64_t)(b.p - rm->dec->base));
	}
}

/* The pend order (cmp_pend) without the arrival tie-break: a later part's events come after. */
static int pend_after(const struct rm_pend *x, const struct rm_pend *y)
{
	if (x->ev.track != y->ev.track)
		return x->ev.track > y->ev.track;
	if (x->ev.ts_ns != y->ev.ts_ns)
		return x->ev.ts_ns > y->ev.ts_ns;
	return x->ev.dur_ns < y->ev.dur_ns;
}

/*
 * The last part of device k is decoded: append the device (its parts'
 * buffers, in order, are what the serial import buffers for it), or leave
 * it to the serial redo when a part failed.
 */
static void dev_parts_done(struct rm_worker *wk, uint32_t k)
{
	struct rm_par *par = wk->par;
	struct rm *rm = &wk->rm;
	struct rm_pdev *pd = &par->pdev[k];
	struct rm_job *job = &par->job[pd->job0];
	const struct rm_pend *prev = NULL;
	int sorted = 1, r = 0;

	if (__atomic_load_n(&pd->bad, __ATOMIC_RELAXED)) {
		pd->state = PD_DEFERRED;
		goto out;
	}
	/* Sorted part by part and across their seams: append them as they are. */
	for (uint32_t j = 0, i; j < pd->njobs && sorted; j++) {
		for (i = 1; i < job[j].npend && sorted; i++)
			sorted = cmp_pend(&job[j].pend[i - 1], &job[j].pend[i]) < 0;
		if (sorted && job[j].npend && prev)
			sorted = !pend_after(prev, &job[j].pend[0]);
		if (job[j].npend)
			prev = &job[j].pend[job[j].npend - 1];
	}
	for (uint32_t j = 0; j < pd->njobs && sorted && !r; j++) {
		for (uint32_t i = 0; i < job[j].npend && !r; i++) {
			struct tft_event ev = job[j].pend[i].ev;

			ev.args = job[j].pargs + job[j].pend[i].args_off;
			r = tft_writer_lane_append(rm->lane, &ev);
		}
	}
	if (!sorted) {
		/* The serial buffer (arrival order numbers and all), sorted by flush_device(). */
		uint32_t np = 0, na = 0;

		for (uint32_t j = 0; j < pd->njobs && !r; j++) {
			if (tft_grow((void **)&rm->pend, &rm->cpend, np + job[j].npend, sizeof(*rm->pend)) ||
			    tft_grow((void **)&rm->pargs, &rm->cpargs, na + job[j].npargs,
				     sizeof(*rm->pargs))) {
				r = TFT_ENOMEM;
				break;
			}
			for (uint32_t i = 0; i < job[j].npend; i++) {
				rm->pend[np + i] = job[j].pend[i];
				rm->pend[np + i].seq = np + i;
				rm->pend[np + i].args_off += na;
			}
			if (job[j].npargs)
				memcpy(rm->pargs + na, job[j].pargs, job[j].npargs * sizeof(*rm->pargs));
			np += job[j].npend;
			na += job[j].npargs;
		}
		rm->npend = np;
		rm->npargs = na;
		if (!r)
			r = flush_device(rm);
		rm->npend = rm->npargs = 0;
	} else {
		rm->npend = rm->npargs = 0; /* (nothing left to flush) */
	}
	/*
	 * The device's tracks are not ended: a later input may continue them
	 * (the worker's next steps); the lane's close hands them back with
	 * their last chunk written.
	 */
	if (r) {
		struct tft_pb_val v;

		par_dec(par, &wk->dec, &wk->err, k, &v);
		tft_pb_wire_fail(&wk->dec, r, v.offset, "could not store the device's nodes");
		dev_failed(wk, k, r);
	} else {
		pd->state = PD_DONE;
	}
out:
	for (uint32_t j = 0; j < pd->njobs; j++)
		pool_put(par, &job[j]);
}

/* Decode a part into the worker's lane; the last part appends its device. */
static void par_part(struct rm_worker *wk, struct rm_job *job)
{
	struct rm_par *par = wk->par;
	struct rm *rm = &wk->rm;
	uint32_t k = job->dev;
	struct rm_pdev *pd = &par->pdev[k];
	struct tft_pb_val v;
	int ok = 0;

	if (!__atomic_load_n(&pd->bad, __ATOMIC_RELAXED) &&
	    k <= __atomic_load_n(&par->min_fail, __ATOMIC_RELAXED)) {
		par_dec(par, &wk->dec, &wk->err, k, &v);
		rm->dec = &wk->dec;
		pool_get(par, rm);
		job_start(wk, job);
		rm->pend_budget = wk->budget;
		rm->cur = &par->rm->devs[k];
		rm->nthreads = 0;
		rm->node_index = job->node0;
		rm->df_base = pd->df_base;
		ok = part_nodes(rm, job) == 0;
		/* (all the parts together: no more than the serial pend buffer and sorter hold) */
		if (ok && __atomic_add_fetch(&pd->held,
					     (uint64_t)rm->npend * sizeof(*rm->pend) +
						     (uint64_t)rm->npargs * sizeof(*rm->pargs),
					     __ATOMIC_RELAXED) > par->dev_budget)
			ok = 0;
		if (ok) { /* its buffer goes with the part */
			job->pend = rm->pend;
			job->npend = rm->npend;
			job->cpend = rm->cpend;
			job->pargs = rm->pargs;
			job->npargs = rm->npargs;
			job->cpargs = rm->cpargs;
			rm->pend = NULL;
			rm->pargs = NULL;
			rm->cpend = rm->cpargs = 0;
		}
		job_end(wk, job, ok);
		tft_error_clear(&wk->err);
	}
	if (!ok)
		__atomic_store_n(&pd->bad, 1, __ATOMIC_RELAXED);
	/* (the last part sees every part's buffer: acquire what the others released) */
	if (__atomic_sub_fetch(&pd->parts_left, 1, __ATOMIC_ACQ_REL) == 0)
		dev_parts_done(wk, k);
}

/* Decode a whole device into the worker's lane. */
static void par_decode(struct rm_worker *wk, struct rm_job *job)
{
	struct rm_par *par = wk->par;
	struct rm *rm = &wk->rm;
	uint32_t k = job->dev;
	const struct rm_dinfo *di = &par->rm->dinfo[k];
	struct rm_pdev *pd = &par->pdev[k];
	struct rm_dev *dev = &par->rm->devs[k];
	struct tft_pb_val v;
	int r;

	if (k > __atomic_load_n(&par->min_fail, __ATOMIC_RELAXED))
		return; /* an earlier device failed: its error is the one reported */
	par_dec(par, &wk->dec, &wk->err, k, &v);
	rm->dec = &wk->dec;
	rm->job_dev = dev;
	pool_get(par, rm);
	job_start(wk, job);
	rm->pend_budget = wk->budget;
	rm->df_base = pd->df_base;
	r = dev_stats(rm, &v, di);
	/* (dev_stats() appended the device's events; its tracks stay open, as above) */
	rm->npend = rm->npargs = 0;
	if (r && wk->err.code == TFT_OK)
		tft_pb_wire_fail(&wk->dec, r, v.offset, "could not store the device's nodes");
	/* A failed device is forgotten: redone serially (deferred), or its error reported. */
	if (!r)
		pd->state = PD_DONE;
	else if (rm->deferred)
		pd->state = PD_DEFERRED;
	else
		dev_failed(wk, k, r);
	job_end(wk, job, !r);
	tft_error_clear(&wk->err);
}

static void *par_run(void *arg)
{
	struct rm_worker *wk = arg;
	struct rm_par *par = wk->par;

	for (;;) {
		uint32_t j = __atomic_fetch_add(&par->next, 1, __ATOMIC_RELAXED), k;

		if (j >= par->norder)
			break;
		k = par->order[j];
		if (par->phase == 0) {
			int t;

			if (__atomic_load_n(&par->unsure, __ATOMIC_RELAXED))
				break;
			t = predict_tracks(wk, k);
			if (t < 0)
				__atomic_store_n(&par->unsure, 1, __ATOMIC_RELAXED);
			else
				par->pdev[k].tracks = (uint8_t)t;
			if (par->pdev[k].njobs > 1 && split_device(par, k)) {
				struct rm_job *job = &par->job[par->pdev[k].job0];

				par->pdev[k].njobs = 1; /* (whole, then) */
				job->p = par->rm->dinfo[k].p;
				job->end = job->p + par->rm->dinfo[k].len;
				job->size = par->rm->dinfo[k].len;
			}
		} else if (par->pdev[par->job[k].dev].njobs > 1) {
			par_part(wk, &par->job[k]);
		} else {
			par_decode(wk, &par->job[k]);
		}
	}
	return NULL;
}

/* Run the current phase's jobs on every worker: the calling thread is worker 0. */
static void par_phase(struct rm_par *par, int phase)
{
	uint32_t started = 1;

	par->phase = phase;
	par->next = 0;
	for (uint32_t i = 1; i < par->nwk; i++, started++)
		if (pthread_create(&par->wk[i].th, NULL, par_run, &par->wk[i]))
			break; /* (the threads that run take the jobs of those that do not) */
	par_run(&par->wk[0]);
	for (uint32_t i = 1; i < started; i++)
		pthread_join(par->wk[i].th, NULL);
}

static void par_free(struct rm_par *par)
{
	for (uint32_t i = 0; par->wk && i < par->nwk; i++) {
		struct rm *w = &par->wk[i].rm;

		/* (borrowed from the driver) */
		w->devs = NULL;
		w->procs = NULL;
		w->dinfo = NULL;
		w->df = NULL;
		w->sorter = NULL;
		w->graphs = NULL;
		rm_free(w);
		free(par->wk[i].memo);
	}
	for (uint32_t i = 0; par->job && i < par->njob; i++) {
		free(par->job[i].pend);
		free(par->job[i].pargs);
	}
	for (uint32_t i = 0; i < par->npool; i++) {
		free(par->pool[i].pend);
		free(par->pool[i].pargs);
	}
	pthread_mutex_destroy(&par->pool_mu);
	free(par->wk);
	free(par->pdev);
	free(par->job);
	free(par->order);
}

/* Append a decoded job's comm records to the driver's (jobs in device order). */
static int par_take_comm(struct rm *rm, const struct rm_par *par, const struct rm_job *job)
{
	const struct rm *w = &par->wk[job->worker].rm;

	if (!job->ncomm)
		return 0;
	if (tft_grow((void **)&rm->comm, &rm->ccomm, rm->ncomm + job->ncomm, sizeof(*rm->comm)))
		return TFT_ENOMEM;
	for (uint32_t i = 0; i < job->ncomm; i++) {
		rm->comm[rm->ncomm] = w->comm[job->comm_off + i];
		rm->comm[rm->ncomm].seq = rm->ncomm;
		rm->ncomm++;
	}
	return 0;
}

/* What emit_node() counted for a decoded job, as if the driver had decoded it. */
static void par_take_counts(struct rm *rm, const struct rm_job *job)
{
	if (!job->nodes)
		return;
	if (rm->nodes == 0 || job->min_ts < rm->min_ts)
		rm->min_ts = job->min_ts;
	if (rm->nodes == 0 || job->max_end > rm->max_end)
		rm->max_end = job->max_end;
	if (rm->procs_seen == 0) {
		rm->step_process = job->step_process;
		rm->procs_seen = 1;
	} else if (rm->step_process != job->step_process) {
		rm->step_process = TFT_NONE;
	}
	rm->nodes += job->nodes;
}

/*
 * Decode the StepStats ss (NULL: the whole input is one) on several threads.
 * RM_SERIAL when the input is not for it (nothing done then), else what
 * decoding it serially returns.
 */
static int par_stepstats(struct rm *rm, const struct tft_pb_sub *ss)
{
	struct rm_par par;
	const uint8_t *p, *end;
	uint32_t nwk, k, ndev = 0;
	size_t total = 0;
	int r = 0, lr = 0;

	if (!rm->direct || !rm->ndinfo || !rm->opts || rm->opts->threads < 2 ||
	    rm->dec->decode_text_sub || rm->dec->depth + 1 >= rm->dec->max_depth)
		return RM_SERIAL;
	/* Only dev_stats fields, those the pre-pass walked (then the decoder finds nothing else). */
	p = ss ? ss->p : rm->dec->base;
	end = ss ? ss->p + ss->len : rm->dec->base + rm->dec->size;
	for (k = 0; p < end; k++) {
		uint64_t key, l;

		if (tft_pb_wire_varint(&p, end, &key) || key != (1 << 3 | TFT_PB_WT_LEN) ||
		    tft_pb_wire_varint(&p, end, &l) || l > (uint64_t)(end - p) || k >= rm->ndinfo ||
		    rm->dinfo[k].p != p || rm->dinfo[k].len != l)
			return RM_SERIAL;
		p += l;
	}
	if (k != rm->ndinfo || rm->ndevs)
		return RM_SERIAL;

	memset(&par, 0, sizeof(par));
	pthread_mutex_init(&par.pool_mu, NULL);
	par.rm = rm;
	par.min_fail = UINT32_MAX;
	par.dec0 = *rm->dec;
	if (ss) { /* as tft_pb_wire_decode_sub() enters it */
		par.dec0.path[par.dec0.depth].name = ss->name;
		par.dec0.path[par.dec0.depth].index = ss->index;
		par.dec0.depth++;
	}
	par.base_pos = (uint64_t)((ss ? ss->p : rm->dec->base) - rm->dec->base);
	par.pdev = calloc(rm->ndinfo, sizeof(*par.pdev));
	if (!par.pdev)
		goto serial;
	for (k = 0; k < rm->ndinfo; k++) {
		if (rm->dinfo[k].nodes) {
			total += rm->dinfo[k].len;
			ndev++;
		} else {
			par.pdev[k].tracks = PT_MAIN;
		}
	}
	if (!ndev)
		goto serial;
	/*
	 * Jobs: a device, or the parts of one larger than a worker's even share
	 * of the bytes (so is a lone device), or whose events would likely not
	 * fit a worker's budget (at RM_NODE_EST bytes a node; parts fill two
	 * thirds of it): parts cost buffers and a merge, so only those.
	 */
	nwk = (uint32_t)rm->opts->threads;
	par.dev_budget = rm->pend_budget + (rm->opts->mem_budget ? rm->opts->mem_budget : TFT_SORTER_DEFAULT_BUDGET);
	par.part_bytes = total / nwk + 1;
	for (k = 0; k < rm->ndinfo; k++) {
		const struct rm_dinfo *di = &rm->dinfo[k];
		uint64_t est = di->nodes * RM_NODE_EST, wb = par.dev_budget / nwk;
		size_t n = 1;

		if (!di->nodes)
			continue;
		if (di->simple && di->len >= RM_PART_MIN) {
			if (di->len > par.part_bytes)
				n = (di->len + par.part_bytes - 1) / par.part_bytes;
			if (est * 3 > wb * 2 && (est * 3 + wb * 2 - 1) / (wb * 2) > n)
				n = (size_t)((est * 3 + wb * 2 - 1) / (wb * 2));
			n = n > 16 ? 16 : n;
			n = n > di->nodes ? di->nodes : n;
		}
		par.pdev[k].job0 = par.njob;
		par.pdev[k].njobs = (uint32_t)n;
		par.njob += (uint32_t)n;
	}
	if (par.njob < 2)
		goto serial;
	nwk = nwk < par.njob ? nwk : par.njob;
	par.job = calloc(par.njob, sizeof(*par.job));
	par.order = malloc((par.njob > rm->ndinfo ? par.njob : rm->ndinfo) * sizeof(*par.order));
	par.wk = calloc(nwk, sizeof(*par.wk));
	if (!par.job || !par.order || !par.wk)
		goto serial;
	for (k = 0; k < rm->ndinfo; k++) {
		const struct rm_dinfo *di = &rm->dinfo[k];
		struct rm_job *job = &par.job[par.pdev[k].job0];

		if (!di->nodes)
			continue;
		par.order[par.norder++] = k;
		for (uint32_t j = 0; j < par.pdev[k].njobs; j++) {
			job[j].dev = k;
			job[j].part = j;
			job[j].p = di->p; /* (parts: cut by split_device()) */
			job[j].end = di->p + di->len;
			job[j].size = di->len;
		}
	}
	par.nwk = nwk;
	for (uint32_t i = 0; i < nwk; i++) {
		par.wk[i].par = &par;
		par.wk[i].index = i;
		par.wk[i].fail_dev = UINT32_MAX;
	}

	/* 1. Which tracks each device uses, its parts (no writer calls: nothing to undo). */
	par_phase(&par, 0);
	if (par.unsure)
		goto serial;
	par.norder = 0;
	for (k = 0; k < rm->ndinfo; k++) {
		for (uint32_t j = 0; rm->dinfo[k].nodes && j < par.pdev[k].njobs; j++)
			par.order[par.norder++] = par.pdev[k].job0 + j;
		par.pdev[k].parts_left = par.pdev[k].njobs;
	}
	qsort_r(par.order, par.norder, sizeof(*par.order), cmp_job, par.job);

	/* 2. Processes and tracks, in the serial import's order. */
	for (k = 0; k < rm->ndinfo; k++) {
		const struct rm_dinfo *di = &rm->dinfo[k];
		struct rm_dev *dev = get_device(rm, di->device.p, di->device.len);
		int t = par.pdev[k].tracks;

		/*
		 * (a failure here leaves what was registered as the serial decode
		 * would have registered it, and that decode retries the rest)
		 */
		if (!dev || dev != &rm->devs[k])
			goto serial;
		if ((t & PT_COMM_FIRST) && comm_track(rm, dev) == TFT_NONE)
			goto serial;
		if ((t & PT_MAIN) && main_track(rm, dev) == TFT_NONE)
			goto serial;
		if ((t & PT_COMM) && comm_track(rm, dev) == TFT_NONE)
			goto serial;
	}

	/* 3. The devices, on the workers. */
	for (uint32_t i = 0; i < nwk; i++) {
		struct rm *w = &par.wk[i].rm;

		*w = *rm; /* the keys, the devices (read only), the counters' start */
		w->procs = NULL;
		w->nprocs = w->cprocs = 0;
		w->threads = NULL;
		w->nthreads = w->cthreads = 0;
		memset(&w->j_memory, 0, sizeof(w->j_memory));
		memset(&w->j_output, 0, sizeof(w->j_output));
		memset(&w->j_ref, 0, sizeof(w->j_ref));
		memset(&w->j_memstats, 0, sizeof(w->j_memstats));
		memset(&w->j_tmp, 0, sizeof(w->j_tmp));
		memset(&w->j_dims, 0, sizeof(w->j_dims));
		memset(&w->j_ids, 0, sizeof(w->j_ids));
		memset(&w->j_ids2, 0, sizeof(w->j_ids2));
		memset(&w->j_dnames, 0, sizeof(w->j_dnames));
		memset(&w->scratch, 0, sizeof(w->scratch));
		w->comm = NULL;
		w->ncomm = w->ccomm = 0;
		w->dfh = NULL; /* (its own; df is the driver's, placed, set below) */
		w->ndfh = w->cdfh = 0;
		w->df_wk = (uint16_t)(i + 1);
		w->wkdfh = NULL;
		w->nwkdfh = 0;
		w->pend = NULL;
		w->npend = w->cpend = 0;
		w->pargs = NULL;
		w->npargs = w->cpargs = 0;
		w->tmpl = NULL;
		w->tmpl_tag = NULL;
		w->tmpl_next = NULL;
		w->tmpl_cache = NULL; /* (the writer's attachments are the driving thread's) */
		w->jmemo = NULL;
		w->graphs = NULL;
		w->sorter = NULL;
		w->entries = NULL;
		w->nentries = w->centries = 0;
		w->err = &par.wk[i].err;
		w->nodes = 0;
		w->procs_seen = 0;
		w->step_process = TFT_NONE;
		/*
		 * The workers' buffers together hold at most what the serial
		 * import's pend buffer and sorter may (TFT_SORTER_DEFAULT_BUDGET
		 * by default), and so do a device's parts (par_part()).
		 */
		par.wk[i].budget = par.dev_budget / nwk;
		w->par = &par;
		w->opts = i == 0 ? rm->opts : NULL; /* progress: from the driving thread only */
	}
	/* Node records: every node's place known (device by device, node by node). */
	{
		uint64_t nrec = 0;

		for (k = 0; k < rm->ndinfo; k++) {
			par.pdev[k].df_base = nrec;
			nrec += rm->dinfo[k].nodes;
		}
		if (rm->ndf || rm->wkdfh || nrec > UINT32_MAX || nwk >= UINT16_MAX ||
		    !(rm->wkdfh = calloc(nwk, sizeof(*rm->wkdfh))) ||
		    (nrec && tft_grow((void **)&rm->df, &rm->cdf, (uint32_t)nrec, sizeof(*rm->df))))
			goto serial;
		rm->nwkdfh = nwk;
		rm->ndf = (uint32_t)nrec;
		rm->df_placed = 1;
		for (uint32_t i = 0; i < nwk; i++) {
			par.wk[i].rm.df = rm->df;
			par.wk[i].rm.ndf = rm->ndf;
			par.wk[i].rm.cdf = rm->cdf;
			par.wk[i].rm.df_placed = 1;
		}
	}
	for (uint32_t i = 0; i < nwk; i++) {
		par.wk[i].rm.lane = tft_writer_lane_open(rm->w);
		if (!par.wk[i].rm.lane) {
			/* Nothing appended yet: close them and decode serially. */
			while (i--)
				tft_writer_lane_close(par.wk[i].rm.lane);
			goto serial;
		}
	}
	par_phase(&par, 1);
	for (uint32_t i = 0; i < nwk; i++) {
		int r2 = tft_writer_lane_close(par.wk[i].rm.lane);

		par.wk[i].rm.lane = NULL;
		if (r2 && !lr)
			lr = r2;
	}
	rm->last_progress = par.wk[0].rm.last_progress;

	/* The entries, all of them (each device once; ndinfo: every dev_stats). */
	for (k = 0; k < rm->ndinfo && !lr; k++)
		if (note_entry(rm, &rm->devs[k], !rm->dinfo[k].nodes))
			lr = TFT_ENOMEM;
	rm->entries_par = 1;
	rm->cur_entry = -1;

	/* 4. The devices in order: what they counted and recorded, or serially. */
	for (k = 0; k < rm->ndinfo && !r; k++) {
		struct rm_pdev *pd = &par.pdev[k];
		struct tft_pb_dec *main_dec = rm->dec, d;
		struct tft_pb_val v;

		if (!rm->dinfo[k].nodes && rm->dinfo[k].simple)
			continue; /* (registered in 2., nothing to decode) */
		if (pd->state == PD_DONE) {
			for (uint32_t j = 0; j < pd->njobs && !r; j++) {
				par_take_counts(rm, &par.job[pd->job0 + j]);
				r = par_take_comm(rm, &par, &par.job[pd->job0 + j]);
			}
			if (r)
				r = tft_error_set(rm->err, r, -1, "out of memory");
			continue;
		}
		if (pd->state == PD_FAILED) {
			/* (the worker's first failure: an earlier one would have been met first) */
			const struct rm_worker *wk = &par.wk[pd->worker];

			if (rm->err)
				*rm->err = wk->fail_err;
			r = wk->fail_rc;
			break;
		}
		/*
		 * Deferred (too large for a worker), not reached, or without nodes
		 * but with more than a name (the decoder judges the rest): serially.
		 */
		par_dec(&par, &d, rm->err, k, &v);
		rm->dec = &d;
		rm->df_base = pd->df_base;
		r = dev_stats(rm, &v, &rm->dinfo[k]);
		rm->dec = main_dec;
	}
	rm->next_dinfo = rm->ndinfo;
	rm->df_placed = 0; /* (a second StepStats, merged into this one, appends) */
	for (uint32_t i = 0; i < nwk; i++) { /* the workers' hashes, for emit_dataflow() */
		rm->wkdfh[i] = par.wk[i].rm.dfh;
		par.wk[i].rm.dfh = NULL;
	}
	par_free(&par);
	/* (a device's failure first: the writer's may be its consequence) */
	return r ? r : lr;

serial:
	if (rm->df_placed) { /* (nothing was decoded: the serial decode appends) */
		rm->df_placed = 0;
		rm->ndf = 0;
		free(rm->wkdfh);
		rm->wkdfh = NULL;
		rm->nwkdfh = 0;
	}
	par_free(&par);
	return RM_SERIAL;
}

/* ---- flows, step, driver ------------------------------------------------------------ */

static int cmp_comm(const void *a, const void *b)
{
	const struct rm_comm *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->role != y->role)
		return x->role < y->role ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->seq < y->seq ? -1 : (x->seq > y->seq);
}

/*
 * A send, transfer and receive of one tensor between two devices (the i-th
 * of each of its key in one input), some missing: the input's other worker
 * may hold them. `has`: bit ROLE_x for each end present.
 */
struct rm_chain {
	uint64_t key;
	uint32_t input; /* the session's RunMetadata inputs, counted */
	uint8_t has;
	struct rm_comm end[3]; /* by role */
};

/*
 * The chains of every RunMetadata input of the session that lack a link,
 * attached to the writer and linked at close (comm_pool_close()): distributed
 * TF saves one RunMetadata per worker, a _Send in its worker's file, the
 * peer's RecvTensor and _Recv in the peer's.
 */
struct rm_pool {
	struct rm_chain *ch;
	uint32_t n, cap;
	uint32_t inputs;
	uint32_t cat;
};

#define RM_POOL "runmeta.comm"
#define HAS(r) (1u << (r))

static int add_flow(struct tft_writer *w, uint32_t cat, const struct rm_comm *a,
		    const struct rm_comm *b, uint64_t id)
{
	struct tft_flow fl;

	memset(&fl, 0, sizeof(fl));
	fl.flow_id = id;
	fl.name = a->tensor;
	fl.cat = cat;
	fl.src_track = a->track;
	fl.src_ts_ns = a->ts;
	fl.dst_track = b->track;
	fl.dst_ts_ns = b->ts;
	if (b->ts < a->ts && a->ts < b->end) {
		/*
		 * A _Recv waits for its _Send: it starts first. The arrow ends
		 * inside it when the send starts, bound to it (not the next slice),
		 * so that it goes forward in time, as viewers draw flows.
		 */
		fl.dst_ts_ns = a->ts;
		fl.flags = TFT_FLOWF_BIND_ENCLOSING;
	}
	return tft_writer_add_flow(w, &fl);
}

/*
 * An end whose partner never came: an unmatched flow with that end only (its
 * destination if `dst`, else its source), counted.
 */
static int add_lone(struct tft_writer *w, uint32_t cat, const struct rm_comm *c, int dst,
		    uint64_t id, int64_t *unmatched)
{
	struct tft_flow fl;

	memset(&fl, 0, sizeof(fl));
	fl.flow_id = id;
	fl.name = c->tensor;
	fl.cat = cat;
	fl.src_track = fl.dst_track = TFT_NONE;
	if (dst) {
		fl.dst_track = c->track;
		fl.dst_ts_ns = c->ts;
	} else {
		fl.src_track = c->track;
		fl.src_ts_ns = c->ts;
	}
	fl.flags = TFT_FLOWF_UNMATCHED;
	(*unmatched)++;
	return tft_writer_add_flow(w, &fl);
}

/*
 * The flows of a chain: send -> transfer -> receive, or send -> receive
 * (one worker's devices). Where the chain is open (no send before its
 * transfer or receive, no receive after its send or transfer), an
 * unmatched flow keeps that end.
 */
static int link_chain(struct tft_writer *w, uint32_t cat, const struct rm_chain *c, uint64_t id,
		      int64_t *unmatched)
{
	const struct rm_comm *s = c->has & HAS(ROLE_SEND) ? &c->end[ROLE_SEND] : NULL;
	const struct rm_comm *t = c->has & HAS(ROLE_TRANSFER) ? &c->end[ROLE_TRANSFER] : NULL;
	const struct rm_comm *v = c->has & HAS(ROLE_RECV) ? &c->end[ROLE_RECV] : NULL;
	int r = 0;

	if (t && !s && !v) /* a transfer alone: one unmatched flow, from it */
		return add_lone(w, cat, t, 0, id, unmatched);
	if (!s)
		r = add_lone(w, cat, t ? t : v, 1, id, unmatched);
	else if (t || v)
		r = add_flow(w, cat, s, t ? t : v, id);
	if (!r && t && v)
		r = add_flow(w, cat, t, v, id ^ 1);
	else if (!r && !v)
		r = add_lone(w, cat, t ? t : s, 0, id ^ 1, unmatched);
	return r;
}

/* Sorted by key, then heads (with a send) by the send's start, tails by their end. */
static int64_t chain_time(const struct rm_chain *c)
{
	if (c->has & HAS(ROLE_SEND))
		return c->end[ROLE_SEND].ts;
	return c->has & HAS(ROLE_RECV) ? c->end[ROLE_RECV].end : c->end[ROLE_TRANSFER].end;
}

static int cmp_chain(const void *a, const void *b)
{
	const struct rm_chain *x = a, *y = b;
	int hx = !!(x->has & HAS(ROLE_SEND)), hy = !!(y->has & HAS(ROLE_SEND));
	int64_t tx, ty;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (hx != hy)
		return hy - hx; /* heads first */
	tx = chain_time(x);
	ty = chain_time(y);
	if (tx != ty)
		return tx < ty ? -1 : 1;
	return x->input < y->input ? -1 : (x->input > y->input);
}

/* The last head of h[0, n) at or before index i not yet taken (left: skip links), or -1. */
static int64_t free_head(int64_t *left, int64_t i)
{
	int64_t r = i;

	while (r >= 0 && left[r] != r)
		r = left[r];
	while (i >= 0 && left[i] != i) { /* path compression */
		int64_t nx = left[i];

		left[i] = r;
		i = nx;
	}
	return r;
}

/* Heads by input, then time (their index): each input's heads together, in order. */
struct head_ord {
	uint32_t input, idx;
};

static int cmp_head_ord(const void *a, const void *b)
{
	const struct head_ord *x = a, *y = b;

	if (x->input != y->input)
		return x->input < y->input ? -1 : 1;
	return x->idx < y->idx ? -1 : (x->idx > y->idx);
}

/*
 * One key's chains: heads h[0, nh) (a send without its receiving side),
 * by send start; tails u[0, nu) (a transfer and/or receive without its
 * send), by end. Each tail takes a send that started before it ended:
 * of the latest such send's input (the nearest step), that input's
 * earliest one not yet taken (a loop's sends in order). Clocks are each
 * host's own: a receive that ended before its send started, by them, is
 * not linked.
 */
static int link_key(struct tft_writer *w, uint32_t cat, struct rm_chain *h, uint32_t nh,
		    const struct rm_chain *u, uint32_t nu, int64_t *unmatched)
{
	int64_t *left = nh ? malloc((size_t)nh * sizeof(*left)) : NULL;
	uint8_t *taken = nh ? calloc(nh, 1) : NULL;
	/*
	 * ord: the heads by input, then time; per head its place in ord and the
	 * start of its input's part of ord; per such start, the place of that
	 * input's earliest head not yet taken (a cursor that only moves on).
	 */
	struct head_ord *ord = nh ? malloc((size_t)nh * sizeof(*ord)) : NULL;
	uint32_t *pos = nh ? malloc((size_t)nh * sizeof(*pos)) : NULL;
	uint32_t *seg = nh ? malloc((size_t)nh * sizeof(*seg)) : NULL;
	uint32_t *cur = nh ? malloc((size_t)nh * sizeof(*cur)) : NULL;
	uint32_t lo = 0;
	int r = 0;

	if (nh && (!left || !taken || !ord || !pos || !seg || !cur)) {
		r = TFT_ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < nh; i++) {
		left[i] = i;
		ord[i] = (struct head_ord){ h[i].input, i };
	}
	if (nh)
		qsort(ord, nh, sizeof(*ord), cmp_head_ord);
	for (uint32_t q = 0; q < nh; q++) {
		pos[ord[q].idx] = q;
		seg[q] = q && ord[q - 1].input == ord[q].input ? seg[q - 1] : q;
		cur[q] = q;
	}
	for (uint32_t k = 0; k < nu && !r; k++) {
		int64_t end = chain_time(&u[k]), j;
		struct rm_chain c = u[k];
		uint64_t id = tft_hash_u64(u[k].key + k) & 0x7FFFFFFFFFFFFFFFull;
		uint32_t s, q;

		while (lo < nh && h[lo].end[ROLE_SEND].ts <= end)
			lo++;
		j = free_head(left, (int64_t)lo - 1);
		if (j < 0) {
			r = link_chain(w, cat, &c, id, unmatched);
			continue;
		}
		/*
		 * The earliest untaken send of that input (a loop's sends pair in
		 * order): at or before j, which is untaken.
		 */
		s = seg[pos[j]];
		for (q = cur[s]; taken[ord[q].idx]; q++)
			;
		cur[s] = q + 1;
		j = ord[q].idx;
		taken[j] = 1;
		left[j] = j - 1;
		c.has |= HAS(ROLE_SEND);
		c.end[ROLE_SEND] = h[j].end[ROLE_SEND];
		if (!(c.has & HAS(ROLE_TRANSFER)) && (h[j].has & HAS(ROLE_TRANSFER))) {
			c.has |= HAS(ROLE_TRANSFER);
			c.end[ROLE_TRANSFER] = h[j].end[ROLE_TRANSFER];
		}
		r = link_chain(w, cat, &c, id, unmatched);
	}
	for (uint32_t i = 0; i < nh && !r; i++)
		if (!taken[i])
			r = link_chain(w, cat, &h[i], tft_hash_u64(h[i].key + nu + i) & 0x7FFFFFFFFFFFFFFFull,
				       unmatched);
out:
	free(left);
	free(taken);
	free(ord);
	free(pos);
	free(seg);
	free(cur);
	return r;
}

/* At close: link the pooled chains of each key across the inputs; count what stays alone. */
static int comm_pool_close(struct tft_writer *w, void *ctx)
{
	struct rm_pool *p = ctx;
	int64_t unmatched = 0;
	uint32_t i = 0;
	int r = 0;

	if (!p->n)
		return 0;
	qsort(p->ch, p->n, sizeof(*p->ch), cmp_chain);
	while (i < p->n && !r) {
		uint32_t j = i, nh = 0;

		while (j < p->n && p->ch[j].key == p->ch[i].key)
			j++;
		while (i + nh < j && (p->ch[i + nh].has & HAS(ROLE_SEND)))
			nh++;
		r = link_key(w, p->cat, p->ch + i, nh, p->ch + i + nh, j - i - nh, &unmatched);
		i = j;
	}
	if (!r && unmatched)
		r = tft_writer_add_count(w, "unmatched_flows", unmatched);
	return r;
}

static void comm_pool_free(void *ctx)
{
	struct rm_pool *p = ctx;

	free(p->ch);
	free(p);
}

/* The session's pool, attached to the writer by the first input that needs it. */
static struct rm_pool *comm_pool_get(struct rm *rm)
{
	struct rm_pool *p = tft_writer_attached(rm->w, RM_POOL);

	if (p)
		return p;
	if (!(p = calloc(1, sizeof(*p))))
		return NULL;
	p->cat = rm->flow_cat;
	if (tft_writer_attach(rm->w, RM_POOL, p, comm_pool_close, comm_pool_free)) {
		free(p);
		return NULL;
	}
	return p;
}

/*
 * This input's send/recv ends: the i-th send of each (tensor, source,
 * destination) with its i-th transfer and i-th receive. A whole chain (or
 * a send and receive of one worker), and any chain between two devices of
 * one worker, is linked now; the others, between workers, wait in the
 * session's pool for the other workers' files.
 */
static int emit_flows(struct rm *rm)
{
	struct rm_pool *p;
	uint32_t i = 0, input;
	int64_t local_open = 0;
	int r = 0;

	if (!rm->ncomm)
		return 0;
	if (!(p = comm_pool_get(rm)))
		return TFT_ENOMEM;
	input = p->inputs++;
	qsort(rm->comm, rm->ncomm, sizeof(*rm->comm), cmp_comm);
	while (i < rm->ncomm) {
		const struct rm_comm *c = rm->comm;
		uint32_t j = i, s0, t0, r0, ns = 0, nt = 0, nr = 0;

		while (j < rm->ncomm && c[j].key == c[i].key)
			j++;
		s0 = i;
		while (s0 + ns < j && c[s0 + ns].role == ROLE_SEND)
			ns++;
		t0 = s0 + ns;
		while (t0 + nt < j && c[t0 + nt].role == ROLE_TRANSFER)
			nt++;
		r0 = t0 + nt;
		nr = j - r0;
		for (uint32_t k = 0; k < ns || k < nt || k < nr; k++) {
			struct rm_chain ch;

			memset(&ch, 0, sizeof(ch));
			ch.key = c[i].key;
			ch.input = input;
			if (k < ns)
				ch.has |= HAS(ROLE_SEND), ch.end[ROLE_SEND] = c[s0 + k];
			if (k < nt)
				ch.has |= HAS(ROLE_TRANSFER), ch.end[ROLE_TRANSFER] = c[t0 + k];
			if (k < nr)
				ch.has |= HAS(ROLE_RECV), ch.end[ROLE_RECV] = c[r0 + k];
			if ((ch.has & HAS(ROLE_SEND)) && (ch.has & HAS(ROLE_RECV))) {
				int64_t none = 0;

				r = link_chain(rm->w, rm->flow_cat, &ch,
					       tft_hash_u64(ch.key + k) & 0x7FFFFFFFFFFFFFFFull, &none);
			} else if (!c[i].cross) {
				/* one worker's devices: no other input completes it */
				r = link_chain(rm->w, rm->flow_cat, &ch,
					       tft_hash_u64(ch.key + k) & 0x7FFFFFFFFFFFFFFFull, &local_open);
			} else {
				r = tft_grow((void **)&p->ch, &p->cap, p->n + 1, sizeof(*p->ch));
				if (!r)
					p->ch[p->n++] = ch;
			}
			if (r)
				return r;
		}
		i = j;
	}
	return local_open ? tft_writer_add_count(rm->w, "unmatched_flows", local_open) : 0;
}

/* ---- dataflow and launch flows --------------------------------------------------------
 *
 * timeline.py draws a DataFlow arrow per input of every node (not on a
 * GPU stream or memcpy device, not a RecvTensor) whose label names a tensor
 * of its StepStats (node_name for output 0, node_name:N for output N; an
 * input that names none is tried again without its "/_NN" Send/Recv
 * suffix; the last node producing a name wins), when producer and consumer
 * are on different (pid, lane): pid per device, lanes first-fit per
 * dev_stats entry in node order on whole microseconds. The same edges
 * become the session's "DataFlow" flows (the tf.timeline export's s/t
 * pairs, not drawn from them), bound, as every flow of this importer, by
 * (track, start) of the two slices. A node without a label (timeline.py
 * draws nothing into it) takes its inputs from its NodeDef in the
 * RunMetadata's partition graphs (on_gnode), with the same rules. Each
 * kernel or memcpy on a /stream: or /memcpy device whose annotation names an
 * op of its GPU's executor device gets a "launch" flow from that op (its
 * last run starting at or before the kernel, else its first), as CUDA
 * launches in a Kineto trace.
 */

/* timeline.py's lanes of one dev_stats entry: a min segment tree over the lane ends. */
struct df_lanes {
	int64_t *t; /* owned: 2 * cap entries, leaves at [cap, 2 cap) */
	size_t cap, n;
};

static void df_lanes_set(struct df_lanes *l, size_t i, int64_t v)
{
	size_t k = l->cap + i;

	l->t[k] = v;
	for (k /= 2; k >= 1; k /= 2)
		l->t[k] = l->t[2 * k] < l->t[2 * k + 1] ? l->t[2 * k] : l->t[2 * k + 1];
}

static int df_lanes_reset(struct df_lanes *l)
{
	if (!l->t) {
		l->cap = 64;
		if (!(l->t = malloc(2 * l->cap * sizeof(*l->t))))
			return TFT_ENOMEM;
	}
	for (size_t i = 0; i < 2 * l->cap; i++)
		l->t[i] = INT64_MAX;
	l->n = 1;
	df_lanes_set(l, 0, 0); /* lanes = [0] */
	return 0;
}

/* _assign_lanes: the first lane whose end < start, else a new one. */
static int df_lanes_assign(struct df_lanes *l, int64_t start, int64_t end, uint32_t *lane)
{
	size_t k = 1, i;

	if (l->t[1] < start) {
		while (k < l->cap)
			k = l->t[2 * k] < start ? 2 * k : 2 * k + 1;
		i = k - l->cap;
	} else {
		if (l->n == l->cap) {
			size_t nc = l->cap * 2;
			int64_t *nt = l->n < UINT32_MAX ? malloc(2 * nc * sizeof(*nt)) : NULL;

			if (!nt)
				return TFT_ENOMEM;
			for (size_t j = 0; j < 2 * nc; j++)
				nt[j] = INT64_MAX;
			memcpy(nt + nc, l->t + l->cap, l->cap * sizeof(*nt));
			for (size_t j = nc - 1; j >= 1; j--)
				nt[j] = nt[2 * j] < nt[2 * j + 1] ? nt[2 * j] : nt[2 * j + 1];
			free(l->t);
			l->t = nt;
			l->cap = nc;
		}
		i = l->n++;
	}
	df_lanes_set(l, i, end);
	*lane = (uint32_t)i;
	return 0;
}

/* A tensor: its name's hash, the node (rm->df index + 1) producing it last and the output. */
struct df_tensor {
	uint64_t hash;
	uint32_t rec; /* 0: an empty slot */
	uint32_t out;
};

static struct df_tensor *df_find(struct df_tensor *tab, size_t mask, uint64_t h)
{
	size_t i = (size_t)tft_hash_u64(h) & mask;

	while (tab[i].rec && tab[i].hash != h)
		i = (i + 1) & mask;
	return &tab[i];
}

/*
 * The runs of the executor devices' ops, for the launch flows: grouped by
 * (device, name) through a hash table, each group's records by start.
 */
struct df_group {
	uint32_t dev, name; /* name 0: an empty slot */
	uint32_t first, n;  /* its records in df_ops.rec */
	uint32_t cur;       /* the run picked last (kernels mostly come in time order) */
};

struct df_ops {
	struct df_group *tab; /* owned: mask + 1 slots */
	size_t mask;
	uint32_t *rec;        /* owned: record indices, group by group */
	int64_t *ts;          /* owned: their starts */
	const struct rm_df *df;
};

static struct df_group *df_group_of(const struct df_ops *o, uint32_t dev, uint32_t name)
{
	size_t i = (size_t)tft_hash_u64((uint64_t)dev << 32 | name) & o->mask;

	while (o->tab[i].name && (o->tab[i].dev != dev || o->tab[i].name != name))
		i = (i + 1) & o->mask;
	return &o->tab[i];
}

static const struct rm_df *df_sort_base;

static int cmp_df_rec(const void *a, const void *b)
{
	const struct rm_df *x = &df_sort_base[*(const uint32_t *)a], *y = &df_sort_base[*(const uint32_t *)b];

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : (*(const uint32_t *)a > *(const uint32_t *)b);
}

/* Group the ops (records not on GPU stream devices) of rm by (device, name). */
static int df_ops_build(const struct rm *rm, struct df_ops *o)
{
	uint32_t nops = 0, at = 0;

	memset(o, 0, sizeof(*o));
	o->df = rm->df;
	for (uint32_t i = 0; i < rm->ndf; i++)
		nops += !(rm->df[i].flags & DF_GPUTRACE) && rm->df[i].name;
	o->mask = 15;
	while (o->mask + 1 < 2 * (size_t)nops)
		o->mask = o->mask * 2 + 1;
	o->tab = calloc(o->mask + 1, sizeof(*o->tab));
	o->rec = malloc(((size_t)nops + 1) * sizeof(*o->rec));
	o->ts = malloc(((size_t)nops + 1) * sizeof(*o->ts));
	if (!o->tab || !o->rec || !o->ts)
		return TFT_ENOMEM;
	for (uint32_t i = 0; i < rm->ndf; i++) {
		const struct rm_df *d = &rm->df[i];
		struct df_group *g;

		if ((d->flags & DF_GPUTRACE) || !d->name)
			continue;
		g = df_group_of(o, d->dev, d->name);
		g->dev = d->dev;
		g->name = d->name;
		g->n++;
	}
	for (size_t i = 0; i <= o->mask; i++) {
		o->tab[i].first = at;
		at += o->tab[i].n;
		o->tab[i].n = 0;
	}
	for (uint32_t i = 0; i < rm->ndf; i++) {
		const struct rm_df *d = &rm->df[i];
		struct df_group *g;

		if ((d->flags & DF_GPUTRACE) || !d->name)
			continue;
		g = df_group_of(o, d->dev, d->name);
		o->rec[g->first + g->n++] = i;
	}
	/* by start (a device's nodes usually are already) */
	for (size_t i = 0; i <= o->mask; i++) {
		const struct df_group *g = &o->tab[i];
		bool sorted = true;

		for (uint32_t j = 1; j < g->n && sorted; j++)
			sorted = rm->df[o->rec[g->first + j - 1]].ts <= rm->df[o->rec[g->first + j]].ts;
		if (!sorted) {
			df_sort_base = rm->df; /* (the import's thread only) */
			qsort(o->rec + g->first, g->n, sizeof(*o->rec), cmp_df_rec);
		}
		for (uint32_t j = 0; j < g->n; j++)
			o->ts[g->first + j] = rm->df[o->rec[g->first + j]].ts;
	}
	return 0;
}

static int df_flow(struct rm *rm, uint32_t cat, uint32_t name, const struct rm_df *from,
		   const struct rm_df *to, uint64_t *seq)
{
	struct tft_flow fl;

	memset(&fl, 0, sizeof(fl));
	fl.flow_id = tft_hash_u64(((uint64_t)rm->step_pos << 40) ^ (*seq)++ ^ 0x5dfull << 52) &
		     0x7FFFFFFFFFFFFFFFull;
	fl.name = name;
	fl.cat = cat;
	fl.src_track = from->track;
	fl.src_ts_ns = from->ts;
	fl.dst_track = to->track;
	fl.dst_ts_ns = to->ts;
	return tft_writer_add_flow(rm->w, &fl);
}

/* The name of output `out` of node p: its own name, or "name:out" (interned). */
static uint32_t df_tensor_name(struct rm *rm, const struct rm_df *p, uint32_t out)
{
	struct jbuf *b = &rm->scratch;
	size_t len = 0;
	const char *s;

	if (!out)
		return p->name;
	s = tft_writer_str(rm->w, p->name, &len);
	b->len = 0;
	jb_raw(b, s ? s : "", len);
	jb_raw(b, ":", 1);
	jb_int(b, out);
	return b->oom ? UINT32_MAX : intern(rm, b->p, b->len);
}

/*
 * The executor device of each GPU stream / memcpy device of this input:
 * the device it is a part of (same canonical device; a stream device named
 * without its job, "/device:GPU:0/stream:all", that of the one device
 * of the input ending the same), or UINT32_MAX.
 */
static void df_executors(const struct rm *rm, uint32_t *exec)
{
	for (uint32_t g = 0; g < rm->ndevs; g++) {
		const struct rm_dev *gd = &rm->devs[g];
		size_t gl = strlen(gd->canon);
		uint32_t found = UINT32_MAX, tail = UINT32_MAX, ntail = 0;

		exec[g] = UINT32_MAX;
		if (!gd->tl_gputrace)
			continue;
		for (uint32_t d = 0; d < rm->ndevs && found == UINT32_MAX; d++) {
			const struct rm_dev *dd = &rm->devs[d];
			size_t dl = strlen(dd->canon);

			if (dd->tl_gputrace)
				continue;
			if (dl == gl && memcmp(dd->canon, gd->canon, gl) == 0)
				found = d;
			else if (gd->canon[0] == '/' && strncmp(gd->canon, "/job:", 5) != 0 && dl > gl &&
				 memcmp(dd->canon + dl - gl, gd->canon, gl) == 0)
				tail = d, ntail++;
		}
		exec[g] = found != UINT32_MAX ? found : ntail == 1 ? tail : UINT32_MAX;
	}
}

static int emit_launches(struct rm *rm, uint64_t *seq)
{
	struct df_ops ops;
	uint32_t *exec, nk = 0;
	int r;

	for (uint32_t i = 0; i < rm->ndf; i++)
		nk += (rm->df[i].flags & DF_GPUTRACE) && (rm->df[i].op || rm->df[i].op2);
	if (!nk)
		return 0;
	exec = malloc((size_t)rm->ndevs * sizeof(*exec) + 1);
	r = df_ops_build(rm, &ops);
	if (!exec && !r)
		r = TFT_ENOMEM;
	if (r)
		goto out;
	df_executors(rm, exec);
	for (uint32_t i = 0; i < rm->ndf && !r; i++) {
		const struct rm_df *k = &rm->df[i];
		struct df_group *g = NULL;
		const int64_t *ts;
		uint32_t lo, hi;

		if (!(k->flags & DF_GPUTRACE) || exec[k->dev] == UINT32_MAX)
			continue;
		/* the runs of the op it names on its executor: its node arg's, else timeline.py's name */
		if (k->op)
			g = df_group_of(&ops, exec[k->dev], k->op);
		if ((!g || !g->name) && k->op2)
			g = df_group_of(&ops, exec[k->dev], k->op2);
		if (!g || !g->name)
			continue;
		/* the last run starting at or before k, else the first: from the last pick on */
		ts = ops.ts + g->first;
		if (ts[g->cur] <= k->ts) {
			for (lo = g->cur + 1; lo < g->n && ts[lo] <= k->ts && lo < g->cur + 8; lo++)
				;
			hi = lo < g->n && ts[lo] <= k->ts ? g->n : lo;
		} else {
			lo = 0;
			hi = g->cur;
		}
		while (lo < hi) {
			uint32_t mid = lo + (hi - lo) / 2;

			if (ts[mid] <= k->ts)
				lo = mid + 1;
			else
				hi = mid;
		}
		g->cur = lo ? lo - 1 : 0;
		r = df_flow(rm, rm->c_launch, g->name, &rm->df[ops.rec[g->first + g->cur]], k, seq);
	}
out:
	free(ops.tab);
	free(ops.rec);
	free(ops.ts);
	free(exec);
	return r;
}

/* Node d's hashes (rm_df.hoff): in its decoding thread's array. */
static const uint64_t *df_hashes(const struct rm *rm, const struct rm_df *d)
{
	return (d->wk ? rm->wkdfh[d->wk - 1] : rm->dfh) + d->hoff;
}

/* The input's dataflow and launch flows (see above), after its send/recv flows. */
static int emit_dataflow(struct rm *rm)
{
	struct df_lanes lanes = { 0 };
	struct df_tensor *tab = NULL;
	uint64_t ntensors = 0, seq = 0;
	size_t cap = 1;
	int r = 0;

	if (!rm->ndf)
		return 0;
	/* _assign_lanes: entry by entry (a device's records are one run per entry) */
	for (uint32_t i = 0; i < rm->ndf && !r; i++) {
		struct rm_df *d = &rm->df[i];

		if (i == 0 || d->dev != d[-1].dev || d->entry != d[-1].entry)
			r = df_lanes_reset(&lanes);
		if (!r)
			r = df_lanes_assign(&lanes, d->start_us, d->end_us, &d->lane);
		ntensors += d->nout;
	}
	free(lanes.t);
	/* _analyze_tensors: every output of the step, the last producer of a name winning */
	while (!r && ntensors && cap < 2 * ntensors) {
		if (cap > SIZE_MAX / 2 / sizeof(*tab))
			r = TFT_ENOMEM;
		cap *= 2;
	}
	if (!r && ntensors && !(tab = calloc(cap, sizeof(*tab))))
		r = TFT_ENOMEM;
	for (uint32_t i = 0; tab && !r && i < rm->ndf; i++) {
		const struct rm_df *d = &rm->df[i];

		for (uint32_t o = 0; o < d->nout; o++) {
			uint64_t h = df_hashes(rm, d)[o];
			struct df_tensor *t = df_find(tab, cap - 1, h);

			*t = (struct df_tensor){ h, i + 1, o };
		}
	}
	/* _show_compute: an arrow per input naming a tensor, across (pid, lane) */
	for (uint32_t i = 0; tab && !r && i < rm->ndf; i++) {
		const struct rm_df *c = &rm->df[i];
		const uint64_t *in = c->nin ? df_hashes(rm, c) + c->nout : NULL;
		uint32_t nin = c->nin;

		/* a node without a label (timeline.py draws nothing into it): its graph's inputs */
		if (!nin && rm->ngnodes && (c->flags & (DF_NOLABEL | DF_GPUTRACE | DF_RECV)) == DF_NOLABEL) {
			size_t len = 0;
			const char *nm = tft_writer_str(rm->w, c->name, &len);
			const struct rm_gnode *g = gnode_slot(rm, tft_hash_fast(nm ? nm : "", len, 0));

			if (g->off != UINT32_MAX) {
				in = rm->gin + g->off;
				nin = g->nin;
			}
		}
		for (uint32_t q = 0; q < nin && !r; q++) {
			struct df_tensor *t = df_find(tab, cap - 1, in[2 * q]);
			const struct rm_df *p;
			uint32_t name;

			if (!t->rec && in[2 * q + 1])
				t = df_find(tab, cap - 1, in[2 * q + 1]);
			if (!t->rec)
				continue; /* "Can't find tensor - removed by CSE?" */
			p = &rm->df[t->rec - 1];
			if (p->dev == c->dev && p->lane == c->lane)
				continue;
			name = df_tensor_name(rm, p, t->out);
			r = name == UINT32_MAX ? TFT_ENOMEM : df_flow(rm, rm->c_dataflow, name, p, c, &seq);
		}
	}
	free(tab);
	return r ? r : emit_launches(rm, &seq);
}

static void rm_free(struct rm *rm)
{
	if (rm->sorter)
		tft_sorter_destroy(rm->sorter);
	tft_graph_import_finish(rm->graphs, NULL); /* on success already finished (NULL) */
	free(rm->procs);
	free(rm->devs);
	free(rm->threads);
	free(rm->entries);
	free(rm->comm);
	free(rm->df);
	free(rm->dfh);
	free(rm->gnodes);
	free(rm->gin);
	for (uint32_t i = 0; i < rm->nwkdfh; i++)
		free(rm->wkdfh[i]);
	free(rm->wkdfh);
	free(rm->j_memory.p);
	free(rm->j_output.p);
	free(rm->j_ref.p);
	free(rm->j_memstats.p);
	free(rm->j_tmp.p);
	free(rm->j_dims.p);
	free(rm->j_dnames.p);
	free(rm->pend);
	free(rm->pargs);
	free(rm->j_ids.p);
	free(rm->j_ids2.p);
	free(rm->scratch.p);
	free(rm->dinfo);
	free(rm->jmemo);
	if (rm->tmpl_cache && !rm->tmpl_cache->tmpl && rm->tmpl) { /* for the next input */
		rm->tmpl_cache->tmpl = rm->tmpl;
		rm->tmpl_cache->tag = rm->tmpl_tag;
		rm->tmpl_cache->next = rm->tmpl_next;
	} else {
		tmpl_free(rm->tmpl, rm->tmpl_tag, rm->tmpl_next);
	}
}

static int intern_keys(struct rm *rm)
{
	static const struct {
		size_t off;
		const char *s;
	} keys[] = {
#define K(m, s) {offsetof(struct rm, m), s}
		K(k_op, "op"), K(k_inputs, "inputs"), K(k_label, "timeline_label"),
		K(k_all_start_us, "all_start_micros"), K(k_op_start_us, "op_start_rel_micros"),
		K(k_op_end_us, "op_end_rel_micros"), K(k_all_end_us, "all_end_rel_micros"),
		K(k_sched_us, "scheduled_micros"), K(k_thread, "thread_id"),
		K(k_thread_name, "thread_name"), K(k_memory, "memory"), K(k_output, "output"),
		K(k_ref, "referenced_tensor"), K(k_memstats, "memory_stats"),
		K(k_all_start_ns, "all_start_nanos"), K(k_op_start_ns, "op_start_rel_nanos"),
		K(k_op_end_ns, "op_end_rel_nanos"), K(k_all_end_ns, "all_end_rel_nanos"),
		K(k_sched_ns, "scheduled_nanos"), K(k_tensor, "tensor"), K(k_src_dev, "src_device"),
		K(k_dst_dev, "dst_device"), K(k_bytes, "bytes"), K(k_regs, "regs"), K(k_shm, "shm"),
		K(k_grid, "grid"), K(k_block, "block"), K(k_annotation, "annotation"),
		K(k_async, "async"), K(k_to_device, "to_device"), K(k_kernel, "kernel"),
		K(k_node, "node"), K(k_device, "device"), K(k_node_index, "node_stats_index"), K(k_dev_entry, "dev_stats_entry"),
		K(k_step_pos, "step_position"), K(c_op, "op"), K(c_comm, "comm"),
		K(c_kernel, "kernel"), K(c_memcpy, "memcpy"), K(flow_cat, "tensor"),
		K(c_dataflow, "DataFlow"), K(c_launch, "launch"),
#undef K
	};

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		uint32_t id = intern_c(rm, keys[i].s);

		if (id == UINT32_MAX)
			return TFT_ENOMEM;
		memcpy((char *)rm + keys[i].off, &id, sizeof(id));
	}
	return 0;
}

static const char *base_name(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return s ? s + 1 : (path ? path : "");
}

/*
 * The dev_stats order of the step just added, when it is not what the
 * tracks tell (a device repeated, or one without nodes): meta key
 * "tf.dev_stats.<step position>", the device names' string ids in entry
 * order, separated by spaces (docs/file-format.md).
 */
static int store_entries(struct rm *rm)
{
	char key[64], *val;
	size_t n = 0;
	int r;

	val = malloc((size_t)rm->nentries * 11 + 1);
	if (!val)
		return TFT_ENOMEM;
	for (uint32_t i = 0; i < rm->nentries; i++)
		n += (size_t)sprintf(val + n, i ? " %u" : "%u", rm->devs[rm->entries[i]].name);
	val[n] = 0;
	snprintf(key, sizeof(key), "tf.dev_stats.%u", tft_writer_step_count(rm->w) - 1);
	r = tft_writer_set_meta(rm->w, key, val);
	free(val);
	return r;
}

/*
 * Would a device of this input (rm->dinfo) continue an earlier input's
 * process? The parallel import then stays off: its lanes take only tracks
 * without events.
 */
static int continues_any(struct rm *rm)
{
	uint32_t np = tft_writer_process_count(rm->w);

	for (uint32_t d = 0; d < rm->ndinfo && np; d++) {
		struct tft_tf_device td;
		char pname[160];
		const struct tft_pb_bytes *nm = &rm->dinfo[d].device;

		tft_tf_names_parse_device(nm->len ? (const char *)nm->p : "unknown device",
					  nm->len ? nm->len : 14, &td);
		tft_tf_names_process(&td, pname, sizeof(pname));
		if (continued_process(rm, pname) != TFT_NONE)
			return 1;
	}
	return 0;
}

int tft_runmeta_ingest_as(struct tft_writer *w, const char *name, const uint8_t *data, size_t len,
			  int format, const struct tft_ingest_opts *opts, struct tft_error *err)
{
	return tft_runmeta_ingest_step(w, name, data, len, format, 0, NULL, opts, err);
}

int tft_runmeta_ingest_step(struct tft_writer *w, const char *name, const uint8_t *data,
			    size_t len, int format, int64_t step_index, const char *step_name,
			    const struct tft_ingest_opts *opts, struct tft_error *err)
{
	struct tft_pb_dec dec;
	struct rm rm;
	struct rm_runmeta meta;
	int text = format == TFT_PB_FMT_RUNMETA_TEXT || format == TFT_PB_FMT_STEPSTATS_TEXT;
	int stepstats = format == TFT_PB_FMT_STEPSTATS || format == TFT_PB_FMT_STEPSTATS_TEXT;
	int64_t graph0 = tft_graph_next_id(w); /* this input's graphs: from here on */
	int r;

	if (!w || (!data && len))
		return tft_error_set(err, TFT_EINVAL, -1, "no writer or no input");
	if (format != TFT_PB_FMT_RUNMETA && format != TFT_PB_FMT_STEPSTATS && !text)
		return tft_error_set(err, TFT_EINVAL, -1, "not a RunMetadata/StepStats format");
	memset(&rm, 0, sizeof(rm));
	memset(&meta, 0, sizeof(meta));
	rm.w = w;
	rm.err = err;
	rm.opts = opts;
	rm.input_len = len;
	rm.input = data;
	rm.text = text;
	rm.stepstats = stepstats;
	rm.step_pos = tft_writer_step_count(w);
	rm.dec = &dec;
	rm.step_process = TFT_NONE;
	rm.step_index = step_index;
	rm.cur_entry = -1;
	rm.name = name;
	rm.step_name = step_name;
	rm.tmpl_cache = tmpl_cache_get(w); /* (none: each input makes its own table) */
	clock_gettime(CLOCK_MONOTONIC, &rm.last_progress);
	if (text) {
		r = tft_pb_text_init(&dec, data, len, err);
		if (r) {
			tft_pb_text_fini(&dec);
			return r;
		}
	} else {
		tft_pb_wire_init(&dec, data, len, err);
	}
	r = intern_keys(&rm);
	if (r) {
		tft_error_set(err, r, -1, "out of memory");
		goto out;
	}
	rm.sorter = tft_sorter_create(w, opts ? opts->mem_budget : 0);
	if (!rm.sorter) {
		r = tft_error_set(err, TFT_ENOMEM, -1, "out of memory (sorter)");
		goto out;
	}
	/* Binary input with each device once: devices go straight to the writer. */
	if (!text)
		rm.direct = stepstats ? scan_devices(&rm, data, len) : runmeta_scan_devices(&rm, data, len);
	rm.pend_budget = opts && opts->mem_budget ? opts->mem_budget / 2 : (size_t)64 << 20;
	rm.try_par = rm.direct && opts && opts->threads >= 2 && !continues_any(&rm);
	if (stepstats) {
		r = rm.try_par ? par_stepstats(&rm, NULL) : RM_SERIAL;
		if (r == RM_SERIAL)
			r = tft_pb_wire_decode(&dec, &stepstats_msg, NULL, &rm);
	} else
		r = tft_pb_wire_decode(&dec, &runmeta_msg, &meta, &rm);
	if (r)
		goto out;
	r = tft_sorter_finish(rm.sorter, 0, err);
	if (r)
		goto out;
	r = tft_graph_import_finish(rm.graphs, err);
	rm.graphs = NULL;
	if (r)
		goto out;
	r = emit_flows(&rm);
	if (r) {
		tft_error_set(err, r, -1, "could not store the send/recv flows");
		goto out;
	}
	r = emit_dataflow(&rm);
	if (r) {
		tft_error_set(err, r, -1, "could not store the dataflow flows");
		goto out;
	}
	if (rm.nodes) {
		struct tft_step st;

		memset(&st, 0, sizeof(st));
		st.index = rm.step_index;
		if (rm.step_name)
			st.name = intern_c(&rm, rm.step_name);
		else if (meta.session.name.len)
			st.name = intern(&rm, meta.session.name.p, meta.session.name.len);
		else
			st.name = intern_c(&rm, base_name(name));
		st.process = rm.step_process;
		st.start_ns = rm.min_ts;
		if (__builtin_sub_overflow(rm.max_end, rm.min_ts, &st.dur_ns))
			st.dur_ns = INT64_MAX;
		st.traced = true;
		r = tft_writer_add_step(w, &st);
		if (!r && rm.entries_odd)
			r = store_entries(&rm);
		/* its partition and cost graphs belong to this step (a slice's details list them first) */
		if (!r)
			r = tft_graph_link_step(w, graph0, st.process, st.start_ns, err);
		if (r) {
			tft_error_set(err, r, -1, "could not store the step");
			goto out;
		}
	}
	r = tft_writer_join_meta(w, "format", stepstats ? "stepstats" : "runmeta", "+");
	if (!r)
		r = tft_writer_join_meta(w, "producer", "TensorFlow", " + ");
	if (r)
		tft_error_set(err, r, -1, "could not store the session metadata");
	if (!r && opts && opts->progress)
		opts->progress(opts->progress_ctx, len, len, rm.nodes);
out:
	if (r && err && err->code == TFT_OK)
		tft_error_set(err, r, -1, "%s", tft_strerror(r));
	if (r)
		tft_error_set_file(err, name);
	if (text)
		tft_pb_text_fini(&dec);
	rm_free(&rm);
	return r;
}

int tft_runmeta_ingest(struct tft_writer *w, const char *name, const uint8_t *data, size_t len,
		       const struct tft_ingest_opts *opts, struct tft_error *err)
{
	int fmt = tft_pb_sniff(data, len, name);

	if (fmt != TFT_PB_FMT_RUNMETA && fmt != TFT_PB_FMT_STEPSTATS &&
	    fmt != TFT_PB_FMT_RUNMETA_TEXT && fmt != TFT_PB_FMT_STEPSTATS_TEXT) {
		/* Default: binary RunMetadata, so malformed input gets a precise error. */
		fmt = TFT_PB_FMT_RUNMETA;
		if (len && (data[0] == ' ' || data[0] == '\n' || data[0] == '#' ||
			    (data[0] >= 'a' && data[0] <= 'z')))
			fmt = TFT_PB_FMT_RUNMETA_TEXT;
	}
	return tft_runmeta_ingest_as(w, name, data, len, fmt, opts, err);
}
