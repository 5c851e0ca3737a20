/* SPDX-License-Identifier: MIT */
/*
 * The RunMetadata / StepStats importer's private header: the decoded
 * messages (schema.c holds their tables), the import's state (struct rm)
 * and what its files call of each other. The per-node helpers are static
 * inline here: a node goes through several files (decode, emit) and
 * there is no LTO.
 *
 * The files (one concept each; ingest_runmeta.h is the interface):
 *   import.c      the entry points, a step per input, state set-up/free
 *   schema.c      message tables (NodeExecStats, DeviceStepStats, ...)
 *   scan.c        the binary pre-pass over the dev_stats
 *   decode.c      DeviceStepStats and their nodes, serially
 *   node_json.c   a node's sub-messages (memory, output, ...) as JSON args
 *   emit.c        a node -> its slice event, args and send/recv endpoints
 *   templates.c   the per-(device, name, label) node template cache
 *   pend.c        a device's events held until it is complete
 *   devices.c     processes, devices and tracks (continued across inputs)
 *   graphs.c      partition / cost / function graphs, their nodes' inputs
 *   flows.c       send -> transfer -> recv flows, across workers' inputs
 *   dataflow.c    timeline.py's DataFlow arrows and GPU launch flows
 *   parallel.c, par_jobs.c, par_predict.c, comm_word.c: the parallel import
 */
#ifndef TFT_COLLECT_RUNMETA_RM_INT_H
#define TFT_COLLECT_RUNMETA_RM_INT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "codec/json_write.h"
#include "codec/pb_wire.h"
#include "collect/ingest.h"
#include "collect/ingest_graph.h"
#include "collect/tf_names.h"
#include "collect/tf_proto.h"
#include "core/hmap.h"
#include "core/strtab.h"
#include "store/sorter.h"
#include "store/writer.h"

#define MAX_ARGS 40

/* ---- decoded messages (tables in schema.c) ---------------------------------- */

struct rm_alloc_desc {
	uint64_t has;
	int64_t requested_bytes, allocated_bytes;
	struct tft_pb_bytes allocator_name;
	int64_t allocation_id, has_single_reference;
	uint64_t ptr;
};

struct rm_tensor_desc {
	uint64_t has;
	int64_t dtype;
	struct tft_tf_shape shape;
	struct rm_alloc_desc alloc;
};

struct rm_output {
	uint64_t has;
	int64_t slot;
	struct rm_tensor_desc td;
};

struct rm_alloc_rec {
	uint64_t has;
	int64_t alloc_micros, alloc_bytes;
};

struct rm_mem_used {
	uint64_t has;
	struct tft_pb_bytes allocator_name;
	int64_t total_bytes, peak_bytes, live_bytes, allocator_bytes_in_use;
};

struct rm_mem_stats {
	uint64_t has;
	int64_t temp_memory_size, device_temp_memory_size, persistent_memory_size,
		device_persistent_memory_size;
};

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

/* Indexes into node_fields (presence bits). */
enum {
	NF_NAME, NF_ALL_START_US, NF_OP_START_US, NF_OP_END_US, NF_ALL_END_US, NF_MEMORY, NF_OUTPUT,
	NF_LABEL, NF_SCHED_US, NF_THREAD, NF_REF, NF_MEMSTATS, NF_ALL_START_NS, NF_OP_START_NS,
	NF_OP_END_NS, NF_ALL_END_NS, NF_SCHED_NS,
};

/* The sub-message fields whose JSON goes to the per-node buffers. */
#define NF_NESTED (1ull << NF_MEMORY | 1ull << NF_OUTPUT | 1ull << NF_REF | 1ull << NF_MEMSTATS)

struct rm_devstats {
	uint64_t has;
	struct tft_pb_bytes device;
};

struct rm_map_entry {
	uint64_t has;
	uint64_t key;
	struct tft_pb_bytes value;
};

struct rm_session_meta {
	uint64_t has;
	struct tft_pb_bytes name;
	int64_t version;
};

struct rm_runmeta {
	uint64_t has;
	struct rm_session_meta session;
};

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

/* A node event held back until its device is complete (see tft_rm_flush_device). */
struct rm_pend {
	struct tft_event ev; /* ev.args NULL: its args are pargs[args_off..+nargs) */
	uint32_t args_off;
	uint32_t seq;        /* arrival order, for a stable sort */
};

/*
 * A node template: what tft_rm_emit_node() derives from (device, node_name,
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
 * What tft_rm_df_note() derives from (device, node_name, timeline_label) alone,
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
 * A node as its dataflow and launch flows need it (tft_rm_df_note(), tft_rm_emit_dataflow()):
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
	uint32_t lane;            /* timeline.py's lane (tft_rm_emit_dataflow) */
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
	struct tft_json_writer j_memory, j_output, j_ref, j_memstats, j_tmp, j_dims, j_ids, j_ids2,
		j_dnames; /* memory mode, each */
	int dim_named;         /* a dim of the current shape has a name */
	uint64_t node_index;   /* position of the current node in its device's node_stats */
	struct tft_json_writer scratch; /* keys and names built per node */

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
	struct rm_gnode *gnodes; /* owned: the partition graphs' nodes (on_gnode) */
	uint32_t ngnodes, cgnodes;
	struct tft_hmap gix;     /* owned: name hash -> index in gnodes (zeroed until the first node) */
	uint64_t *gin;           /* owned: their inputs' hashes */
	uint32_t ngin, cgin;
	int df_placed;
	uint64_t df_base;
	uint16_t df_wk;
	uint64_t **wkdfh;     /* owned (with the arrays): per worker */
	uint32_t nwkdfh;

	/*
	 * The current node's args: args_buf, or in direct mode the free tail of
	 * pargs (reserved before the node), so tft_rm_queue_event() need not copy them.
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

	/* Binary input: the dev_stats the pre-pass walked (tft_rm_scan_devices). */
	struct rm_dinfo *dinfo; /* owned */
	uint32_t ndinfo, next_dinfo;

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
	int try_par;                   /* the driving import may try tft_rm_par_stepstats() */
};

/*
 * What the pre-pass (tft_rm_scan_devices) learned about one binary DeviceStepStats,
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
 * The inputs of a partition graph's NodeDefs, for the dataflow of nodes
 * that have no timeline_label (tft_rm_emit_dataflow): node name -> its data inputs
 * ("x", "x:1"; control inputs "^x" name no tensor) as hashes, two per input
 * as the labels' (rm->dfh layout). The graph's own importer checked and
 * stored the graph; this walk only takes names and inputs.
 */
struct rm_gnode {
	uint64_t name;     /* hash of the node name */
	uint32_t off, nin; /* its hashes in rm->gin */
};

/* tft_rm_par_stepstats(): the input is not for it (nothing done); decode it serially. */
#define RM_SERIAL 1

/* ---- per-node helpers -------------------------------------------------------- */

static inline uint32_t intern(struct rm *rm, const void *s, size_t n)
{
	if (!n)
		return 0; /* id 0 is "" (and s may be NULL) */
	return tft_writer_intern(rm->w, (const char *)s, n);
}

static inline uint32_t intern_c(struct rm *rm, const char *s)
{
	return tft_writer_intern_cstr(rm->w, s);
}

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
/* (forced inline: GCC kept it out of line in par_predict.c, a call per field) */
static inline __attribute__((always_inline)) int fp_varint(const uint8_t **pp, const uint8_t *end, uint64_t *v)
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
static inline __attribute__((always_inline)) int fp_bytes(const uint8_t **pp, const uint8_t *end, struct tft_pb_bytes *b)
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

/* ts + dur, saturating. */
static inline int64_t end_of(int64_t ts, int64_t dur)
{
	int64_t e;

	return __builtin_add_overflow(ts, dur > 0 ? dur : 0, &e) ? INT64_MAX : e;
}


/* Microseconds to ns, saturating (corrupt inputs must not overflow). */
static inline int64_t us_to_ns(int64_t us)
{
	int64_t r;

	if (__builtin_mul_overflow(us, (int64_t)1000, &r))
		return us < 0 ? INT64_MIN : INT64_MAX;
	return r;
}

/* Before a node's decode: no nested values yet. */
static inline void node_begin(struct rm *rm, struct rm_node *n)
{
	zero_small(n, sizeof(*n));
	tft_json_write_clear(&rm->j_memory);
	tft_json_write_clear(&rm->j_output);
	tft_json_write_clear(&rm->j_ref);
	tft_json_write_clear(&rm->j_memstats);
}

/* ---- across the files (tft_rm_: libtftracer is linked into users' programs) --- */

/* schema.c: the message tables. */
extern const struct tft_pb_msg tft_rm_alloc_desc_msg, tft_rm_output_msg, tft_rm_alloc_rec_msg,
	tft_rm_mem_used_msg, tft_rm_mem_stats_msg, tft_rm_node_msg, tft_rm_devstats_msg,
	tft_rm_devstats_nodes_msg, tft_rm_thread_name_msg, tft_rm_stepstats_msg,
	tft_rm_function_graphs_msg, tft_rm_runmeta_msg;

/* The tables' handlers (ctx: the struct rm). */
int tft_rm_on_td_shape(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v);
int tft_rm_on_alloc_rec(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v);
int tft_rm_on_alloc_id(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v);
int tft_rm_on_memory(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v);
int tft_rm_on_output(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v);
int tft_rm_on_ref_tensor(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v);
int tft_rm_on_mem_stats(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v);
int tft_rm_on_node_count(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v);
int tft_rm_on_node_stats(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v);
int tft_rm_on_thread_name(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v);
int tft_rm_on_dev_stats(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v);
int tft_rm_on_step_stats(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v);
int tft_rm_on_graph(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v);

/* emit.c */
int tft_rm_emit_node(struct rm *rm, struct rm_node *n);
int tft_rm_node_op(int gputrace, struct tft_tf_str node_name, const struct tft_tf_label *lb,
		   struct tft_tf_str *op, struct tft_tf_str *ann_name);

/* templates.c */
struct rm_tmpl_cache *tft_rm_tmpl_cache_get(struct tft_writer *w);
struct rm_tmpl *tft_rm_tmpl_slot(struct rm *rm, uint32_t devno, struct tft_tf_str name,
				 const struct tft_pb_bytes *label, uint64_t *hash, int *hit);
void tft_rm_tmpl_store(struct rm *rm, struct rm_tmpl *t, const struct rm_tmpl *nt,
		       struct tft_tf_str name, const struct tft_pb_bytes *label);
void tft_rm_tmpl_release(struct rm *rm);

/* pend.c */
int tft_rm_queue_event(struct rm *rm, const struct tft_event *ev);
int tft_rm_flush_device(struct rm *rm);
int tft_rm_cmp_pend(const void *a, const void *b);

/* devices.c */
struct rm_dev *tft_rm_get_device(struct rm *rm, const uint8_t *name, size_t len);
uint32_t tft_rm_main_track(struct rm *rm, struct rm_dev *dev);
uint32_t tft_rm_comm_track(struct rm *rm, struct rm_dev *dev);
int tft_rm_continues_any(struct rm *rm);

/* scan.c */
int tft_rm_scan_devices(struct rm *rm, const uint8_t *p, size_t len);
int tft_rm_runmeta_scan_devices(struct rm *rm, const uint8_t *p, size_t len);

/* decode.c */
void tft_rm_progress(struct rm *rm, uint64_t pos);
int tft_rm_dev_stats(struct rm *rm, const struct tft_pb_val *v, const struct rm_dinfo *di);
int tft_rm_note_entry(struct rm *rm, struct rm_dev *dev, int empty);

/* graphs.c */
const struct rm_gnode *tft_rm_gnode_find(const struct rm *rm, uint64_t name);

/* dataflow.c */
int tft_rm_df_prep(struct rm *rm, const struct rm_dev *dev, struct tft_tf_str name,
		   const struct tft_pb_bytes *label, struct rm_dft *t);
int tft_rm_df_note(struct rm *rm, const struct rm_node *n, const struct tft_event *ev,
		   struct tft_tf_str node_name, const struct rm_dft *t);
int tft_rm_emit_dataflow(struct rm *rm);

/* flows.c */
int tft_rm_emit_flows(struct rm *rm);

/* parallel.c, par_jobs.c */
int tft_rm_par_stepstats(struct rm *rm, const struct tft_pb_sub *ss);
void tft_rm_par_progress(struct rm *rm, uint64_t pos);

/* import.c */
void tft_rm_free(struct rm *rm);

#endif /* TFT_COLLECT_RUNMETA_RM_INT_H */
