/* SPDX-License-Identifier: MIT */
/*
 * TensorFlow naming helpers shared by the RunMetadata and XSpace importers:
 * device names of every TF era, timeline_label formats, communication-op
 * detection, and a cheap detector for TF protobuf files.
 */
#ifndef TFT_COLLECT_TF_NAMES_H
#define TFT_COLLECT_TF_NAMES_H

#include <stddef.h>
#include <stdint.h>

#include "codec/pb_wire.h"

/* A borrowed slice of some input text (not NUL-terminated). */
struct tft_tf_str {
	const char *p; /* borrowed; NULL when absent */
	size_t len;
};

/* ---- device names --------------------------------------------------------- */

enum {
	TFT_TF_DEV_HAS_JOB = 1u << 0,    /* /job:... present */
	TFT_TF_DEV_LEGACY = 1u << 1,     /* TF <= 1.3 form: /cpu:0, /gpu:0 */
	TFT_TF_DEV_HOST = 1u << 2,       /* /host:CPU (host tracer) */
	TFT_TF_DEV_STREAM = 1u << 3,     /* .../stream:N */
	TFT_TF_DEV_STREAM_ALL = 1u << 4, /* .../stream:all (aggregate of all kernels) */
	TFT_TF_DEV_MEMCPY = 1u << 5,     /* .../memcpy */
	TFT_TF_DEV_SYNC = 1u << 6,       /* .../sync */
};

/*
 * A parsed device name. Accepts /job:J/replica:R/task:T/device:GPU:0,
 * /job:J/replica:R/task:T/gpu:0, /gpu:0, /cpu:0, /device:GPU:0/stream:N,
 * /gpu:0/stream:all, /device:GPU:0/memcpy, /device:GPU:0/sync,
 * /device:GPU:0/stream:14MemcpyH2D, /host:CPU, device:SYCL:0 ...
 * Unknown components are ignored.
 */
struct tft_tf_device {
	struct tft_tf_str job;    /* "" when absent */
	int64_t replica, task;    /* -1 when absent */
	struct tft_tf_str type;   /* as written: "GPU", "gpu", "CPU", "SYCL" ... */
	int64_t index;            /* device index, -1 when absent */
	int64_t stream;           /* stream id, -1 when absent or "all" */
	struct tft_tf_str stream_suffix; /* text after the stream id ("MemcpyH2D") */
	uint32_t flags;           /* TFT_TF_DEV_* */
};

/* Parse name[0..len). Returns 0, or -1 if nothing device-like was found. */
int tft_tf_names_parse_device(const char *name, size_t len, struct tft_tf_device *d);

/*
 * The process a device belongs to: "/job:J/replica:R/task:T" (the parts
 * present), or "localhost" for names without a job. Writes a NUL-terminated
 * string into buf; returns its length (truncated to size-1).
 */
size_t tft_tf_names_process(const struct tft_tf_device *d, char *buf, size_t size);

/*
 * Canonical device (no stream/memcpy part, upper-case type), for matching
 * the same device written in different ways: "/job:w/replica:0/task:1/device:GPU:0",
 * "/device:CPU:0". Returns the length written (NUL-terminated).
 */
size_t tft_tf_names_canon_device(const struct tft_tf_device *d, char *buf, size_t size);

/* ---- timeline_label ----------------------------------------------------- */

enum tft_tf_label_kind {
	TFT_TF_LABEL_NONE = 0,  /* empty label */
	TFT_TF_LABEL_OP,        /* "name = Op(a, b, ^ctrl)" */
	TFT_TF_LABEL_SEND,      /* "name = _Send(tensor @recv_device" (no closing paren) */
	TFT_TF_LABEL_RECV,      /* "name = _Recv(tensor @send_device" */
	TFT_TF_LABEL_TRANSFER,  /* RecvTensor: "[NB] key from SRC to DST" */
	TFT_TF_LABEL_KERNEL,    /* "kernel regs:R shm:S grid:x,y,z block:x,y,z@@annotation" */
	TFT_TF_LABEL_MEMCPY,    /* "name bytes:N[ async][ to device:D]" */
	TFT_TF_LABEL_SYNC,      /* "ThreadId N" */
	TFT_TF_LABEL_OTHER,     /* anything else (whole text in name) */
};

/* A parsed timeline_label; every slice borrows from the label. */
struct tft_tf_label {
	int kind;                    /* enum tft_tf_label_kind */
	struct tft_tf_str mem;       /* allocator prefix "[cpu 1.2MB 3.4MB]..." (executor labels) */
	struct tft_tf_str name;      /* node name (left of " = "), kernel or memcpy name */
	struct tft_tf_str op;        /* op type ("MatMul", "_Send", "HorovodAllreduce") */
	struct tft_tf_str inputs;    /* raw text inside the parentheses */
	struct tft_tf_str tensor;    /* send/recv: tensor_name attr; transfer: rendezvous key */
	struct tft_tf_str src_device, dst_device; /* transfer both; send: dst; recv: src */
	struct tft_tf_str annotation; /* text after "@@" */
	struct tft_tf_str grid, block; /* "x,y,z" */
	int64_t bytes;               /* "[NB]", "[N.NMB]" (approx.), "bytes:N"; -1 if none */
	int64_t regs, shm;           /* kernel registers / shared memory; -1 if none */
	int64_t to_device;           /* memcpy "to device:N"; -1 if none */
	int64_t thread_id;           /* sync "ThreadId N"; -1 if none */
	int async;                   /* memcpy " async" */
};

/* Parse label[0..len). Never fails; unknown shapes give TFT_TF_LABEL_OTHER. */
void tft_tf_names_parse_label(const char *label, size_t len, struct tft_tf_label *out);

/*
 * Iterate op inputs ("a, b, ^ctrl"): takes the next one off *rest into *out.
 * Returns 1, or 0 when none are left.
 */
int tft_tf_names_next_input(struct tft_tf_str *rest, struct tft_tf_str *out);

/* Tensor name inside a rendezvous key "src;incarnation;dst;tensor;frame:iter" (or key itself). */
struct tft_tf_str tft_tf_names_rendezvous_tensor(struct tft_tf_str key);

/*
 * Split a GPU annotation ("outer:Op::inner/name:OpType#k=v#") into the
 * innermost scope's node name and op type (timeline.py's "name:op").
 */
void tft_tf_names_split_annotation(struct tft_tf_str ann, struct tft_tf_str *name,
				   struct tft_tf_str *op);

/*
 * True for communication ops: RecvTensor, _Send/_Recv/_HostSend/_HostRecv,
 * Horovod*, Collective*, Nccl* (op may be empty; node_name is checked too).
 */
int tft_tf_names_is_comm(struct tft_tf_str node_name, struct tft_tf_str op);

/*
 * timeline.py's own label parse, for its DataFlow arrows (the RunMetadata
 * importer's dataflow flows are the tf.timeline export's arrows):
 * _parse_op_label's re.match(r"(.*) = (.*)\((.*)\)", label), exactly
 * (backtracking, '.' not matching a newline). Returns 1 and the inputs
 * text (group 3, borrowed from label), or 0 when the label does not match.
 */
int tft_tf_names_timeline_inputs(const char *label, size_t len, struct tft_tf_str *inputs);

/*
 * inputs.split(", "), one piece a call: 1 and *out, or 0 after the last
 * (*done: start at 0; set once the last piece was taken). "" gives one
 * empty piece, as Python's split does.
 */
int tft_tf_names_timeline_next_input(struct tft_tf_str *rest, int *done, struct tft_tf_str *out);

/*
 * timeline.py's _parse_kernel_label for a GPU stream or memcpy node: the
 * text between "@@" and the first '#' of its label when there is such (else
 * its node_name) is "name:op[:...]"; *name is up to the first ':', *op (when
 * op is not NULL) from there to the next ':', "unknown" without a ':'.
 * Borrowed. The RunMetadata importer's dataflow and the tf.timeline export.
 */
void tft_tf_names_timeline_kernel(const char *label, size_t llen, const char *node, size_t nlen,
				  struct tft_tf_str *name, struct tft_tf_str *op);

/*
 * timeline.py's fallback for an input that names no tensor (a Send/Recv
 * pair partitioning inserted): the name up to its last "/_", when that is
 * not at the start. 1 and *out (borrowed), or 0 when there is none.
 */
int tft_tf_names_strip_rename(struct tft_tf_str in, struct tft_tf_str *out);

/* ---- format detection ------------------------------------------------------ */

enum tft_pb_format {
	TFT_PB_FMT_UNKNOWN = 0,
	TFT_PB_FMT_XSPACE,         /* binary tensorflow.profiler.XSpace (.xplane.pb) */
	TFT_PB_FMT_RUNMETA,        /* binary tensorflow.RunMetadata */
	TFT_PB_FMT_STEPSTATS,      /* binary tensorflow.StepStats */
	TFT_PB_FMT_RUNMETA_TEXT,   /* text RunMetadata (step_stats { ... }) */
	TFT_PB_FMT_STEPSTATS_TEXT, /* text StepStats (dev_stats { ... }) */
	TFT_PB_FMT_GRAPHDEF,       /* binary GraphDef */
	TFT_PB_FMT_GRAPHDEF_TEXT,  /* text GraphDef */
	TFT_PB_FMT_HLOPROTO,       /* binary xla.HloProto (a compiled XLA module, not a trace) */
	TFT_PB_FMT_COSTGRAPH,      /* binary CostGraphDef on its own (RunMetadata.cost_graph) */
	TFT_PB_FMT_COSTGRAPH_TEXT, /* text CostGraphDef (str(run_metadata.cost_graph)) */
	TFT_PB_FMT_OPLOG,          /* binary tfprof OpLogProto (tfprof_log: op types, float ops, code) */
	TFT_PB_FMT_OPLOG_TEXT,     /* text OpLogProto (str(op_log)) */
	TFT_PB_FMT_PROFILE,        /* binary tfprof ProfileProto (profile_<step>: not read, refused) */
	TFT_PB_FMT_METAGRAPH,      /* binary MetaGraphDef (model.ckpt.meta): its graph_def is read */
	TFT_PB_FMT_METAGRAPH_TEXT, /* text MetaGraphDef (tf.train.export_meta_graph(as_text=True)) */
};

/*
 * A byte below 0x20 other than tab, newline and carriage return in
 * data[0..len): every binary TF message has one near its start (a key such
 * as 0x08 or 0x12, a small length), JSON and protobuf text never do.
 */
int tft_pb_has_control_byte(const uint8_t *data, size_t len);

/*
 * Which TF protobuf format data[0..len) looks like, from the file name
 * (may be NULL; ".xplane.pb", ".pbtxt", "run_meta", "step_stats",
 * "graph", "tfprof_log" ...) and a trial parse of the first fields. A file
 * named *.xplane.pb is reported as XSPACE even when it does not parse, so
 * the importer can say where it is broken. Cheap: looks at a bounded prefix.
 * A GraphDef and a tfprof OpLogProto both start with messages in field 1
 * whose field 1 is a name: a NodeDef's op (field 2) is a string written
 * before its inputs (3), an OpLogEntry's float_ops (2) a varint, its types
 * (3) come without an op, its code_def (4) is a message; an OpLogProto's
 * field 2 is its string table (map entries), a GraphDef's its library.
 */
int tft_pb_sniff(const uint8_t *data, size_t len, const char *filename);

/*
 * What an output of XProf's tools is, from its file name (overview_page.pb,
 * input_pipeline.pb, tensorflow_stats.pb, kernel_stats.pb, memory_profile,
 * pod_viewer ...: results derived from a profile, not traces), else NULL.
 */
const char *tft_pb_xprof_tool_output(const char *filename);

/* Stable name of a tft_pb_format ("xspace", "runmeta", ...). */
const char *tft_tf_names_format_name(int fmt);

/*
 * TensorFlow's DataType enum for the protobuf readers (wire and text): DT_*
 * names, "DT_X_REF" = base + 100, and any other DT_* name -> TFT_TF_DT_UNKNOWN
 * (newer TF versions add types; their tensors are still readable).
 */
#define TFT_TF_DT_UNKNOWN 999
extern const struct tft_pb_enum tft_tf_dtype_enum;

/* "DT_FLOAT", "DT_FLOAT_REF" ... for a DataType value; NULL if unknown. */
const char *tft_tf_dtype_name(int64_t v, char *buf, size_t size);

#endif /* TFT_COLLECT_TF_NAMES_H */
