/* SPDX-License-Identifier: MIT */
/*
 * tfprof's views over a session (docs/cmd-prof.md): the scope, graph, op and
 * code views of TensorFlow's profiler, with its options (-select, -order_by,
 * -max_depth, the -min_* thresholds, -step, the name and type regexes,
 * -account_displayed_op_only), computed from a session's slices, its graphs
 * (GraphDef, OpLogProto) and its model parameters (PyTorch's model_params).
 *
 * A profile (tft_prof_open) scans the session once for the step(s) asked for
 * and keeps one record per graph node (a TF node, a PyTorch op in its module
 * scope, a zone): its executions, time on the CPU and on accelerators,
 * memory, parameters and float operations. A view (tft_prof_view) arranges
 * those records as tfprof does and applies the display options; it can be
 * asked again with other options without a new scan (the interactive shell,
 * the HTTP API), as long as -step stays the same.
 *
 * Not thread-safe: one profile per thread (the scan itself may run on
 * several threads of its own, each with its own session handle).
 */
#ifndef TFT_ANALYZE_PROF_H
#define TFT_ANALYZE_PROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/status.h"
#include "store/session.h"

enum tft_prof_view_kind {
	TFT_PROF_SCOPE = 0,
	TFT_PROF_GRAPH = 1,
	TFT_PROF_OP = 2,
	TFT_PROF_CODE = 3,
};

/* The numeric metrics, in the order of tfprof's columns; names = the -select names. */
enum tft_prof_metric {
	TFT_PROF_BYTES = 0,       /* requested bytes */
	TFT_PROF_PEAK_BYTES,      /* peak bytes */
	TFT_PROF_RESIDUAL_BYTES,  /* bytes not freed when the op ended */
	TFT_PROF_OUTPUT_BYTES,    /* bytes of the op's outputs */
	TFT_PROF_MICROS,          /* accelerator + cpu time, us */
	TFT_PROF_ACCEL_MICROS,    /* kernel time on accelerators, us */
	TFT_PROF_CPU_MICROS,      /* time of the op on the host / executor, us */
	TFT_PROF_PARAMS,          /* parameters */
	TFT_PROF_FLOAT_OPS,       /* float operations */
	TFT_PROF_OCCURRENCE,      /* executions (runs) */
	TFT_PROF_NMETRICS
};

/* -select bits: the metrics above, then the attributes. */
enum {
	TFT_PROF_SEL_TENSOR_VALUE = 1u << TFT_PROF_NMETRICS,
	TFT_PROF_SEL_DEVICE = 1u << (TFT_PROF_NMETRICS + 1),
	TFT_PROF_SEL_OP_TYPES = 1u << (TFT_PROF_NMETRICS + 2),
	TFT_PROF_SEL_INPUT_SHAPES = 1u << (TFT_PROF_NMETRICS + 3),
};
#define TFT_PROF_SEL_METRIC(m) (1u << (m))

enum tft_prof_order {
	TFT_PROF_ORDER_NAME = 0,
	TFT_PROF_ORDER_DEPTH,
	TFT_PROF_ORDER_BYTES,
	TFT_PROF_ORDER_PEAK_BYTES,
	TFT_PROF_ORDER_RESIDUAL_BYTES,
	TFT_PROF_ORDER_OUTPUT_BYTES,
	TFT_PROF_ORDER_MICROS,
	TFT_PROF_ORDER_ACCEL_MICROS,
	TFT_PROF_ORDER_CPU_MICROS,
	TFT_PROF_ORDER_PARAMS,
	TFT_PROF_ORDER_FLOAT_OPS,
	TFT_PROF_ORDER_OCCURRENCE,
};

enum tft_prof_output {
	TFT_PROF_OUT_STDOUT = 0,
	TFT_PROF_OUT_FILE,     /* file:outfile=F (text) */
	TFT_PROF_OUT_TIMELINE, /* timeline:outfile=F (Chrome trace of the shown nodes) */
	TFT_PROF_OUT_PPROF,    /* pprof:outfile=F (gzipped profile.proto) */
	TFT_PROF_OUT_NONE,
};

/* A comma-separated list of regular expressions, each matched against a whole name. */
struct tft_prof_regexes {
	char *text;      /* owned: the option's value as given (tfprof's quotes stripped) */
	void *compiled;  /* owned: regex_t[n] */
	uint32_t n;
	bool all;        /* the list is exactly ".*" (matches everything, as tfprof tests it) */
};

/*
 * The options, with tfprof's names and meaning (docs/cmd-prof.md). Initialise
 * with tft_prof_opts_init (tfprof's command-line defaults), change with
 * tft_prof_opts_set, free with tft_prof_opts_fini.
 */
struct tft_prof_opts {
	int max_depth;                     /* 10 */
	int64_t min_bytes, min_peak_bytes, min_residual_bytes, min_output_bytes;
	int64_t min_micros, min_accelerator_micros, min_cpu_micros;
	int64_t min_params, min_float_ops, min_occurrence;
	int64_t step;                      /* -1: the average over the traced steps */
	int order_by;                      /* enum tft_prof_order; name */
	struct tft_prof_regexes account_type, start_name, trim_name, show_name, hide_name;
	bool account_displayed_op_only;
	uint32_t select;                   /* TFT_PROF_SEL_* bits; micros */
	int output;                        /* enum tft_prof_output */
	char *outfile;                     /* owned; for file/timeline/pprof */
};

void tft_prof_opts_init(struct tft_prof_opts *o);
void tft_prof_opts_fini(struct tft_prof_opts *o);
/* Deep copy (dst initialised or not; its old contents are not freed). 0 or TFT_ENOMEM. */
int tft_prof_opts_copy(struct tft_prof_opts *dst, const struct tft_prof_opts *src);

/*
 * Set option `name` (tfprof's, e.g. "max_depth", "select", with or without
 * its leading '-' or "--", '-' and '_' alike inside it) to `value` (NULL for
 * account_displayed_op_only given alone). Returns 0, or TFT_EINVAL with a
 * one-line message in err (unknown option, bad number, a select or order_by
 * name tfprof does not have, a regular expression that does not compile, a
 * bad -output).
 */
int tft_prof_opts_set(struct tft_prof_opts *o, const char *name, const char *value,
		      struct tft_error *err);
/* Whether option `name` takes a value (account_displayed_op_only: optional). -1 if unknown. */
int tft_prof_opt_takes_value(const char *name);
/* The option names, NULL-terminated (for help and completion). */
extern const char *const tft_prof_opt_names[];
/* Print the options as tfprof's "set" listing does: one "-name value" line each, into buf. */
size_t tft_prof_opts_format(const struct tft_prof_opts *o, char *buf, size_t size);

const char *tft_prof_view_name(int view);
int tft_prof_view_parse(const char *s);        /* -1 if unknown */
const char *tft_prof_metric_name(int metric); /* the -select name */
const char *tft_prof_order_name(int order);

/* ---- the profile ------------------------------------------------------------------- */

struct tft_prof;

/*
 * Scan session s (not modified; it must stay open while the profile is used:
 * tft_prof_view reads strings from it) for `step` (-1: every traced step,
 * averaged; a session without traced steps is one step). threads <= 0 picks
 * the number of online CPUs (at most 8); the scan opens one more read-only
 * handle on the session file per extra thread. Returns the profile or NULL
 * with err filled (TFT_ENOTFOUND: no traced step `step`; TFT_ENOMEM; what
 * the session returns).
 */
struct tft_prof *tft_prof_open(struct tft_session *s, int64_t step, int threads, struct tft_error *err);
void tft_prof_close(struct tft_prof *p);

/* What the scan found (for the footer lines and tests). */
struct tft_prof_info {
	int64_t step;           /* as asked */
	uint32_t nsteps;        /* steps averaged (1 without traced steps) */
	uint32_t traced_steps;  /* distinct traced step numbers in the session */
	uint64_t executions;    /* slices counted (ops, kernels) */
	uint64_t outside_steps; /* executions left out: outside the step(s) asked for */
	bool steps_hold_nothing;/* the traced steps held no execution: the session profiled as one step */
	uint32_t derived_tracks;/* tracks left out (TFT_TRACKF_DERIVED) */
	uint64_t kernels_linked, kernels_unlinked; /* accelerator executions and whether an op launched them */
	uint32_t graph_nodes;   /* nodes of the profile (graph nodes, ops in scopes, parameters) */
	bool has_graph, has_oplog, has_model_params, has_code;
	const char *framework;  /* "tensorflow", "pytorch" or "" (borrowed) */
};
void tft_prof_get_info(const struct tft_prof *p, struct tft_prof_info *out);

/* ---- a view ------------------------------------------------------------------------ */

/*
 * One node of a shown view. Values are per step: sums over the step(s)
 * divided by the number of steps; times in microseconds (ns precision).
 * self: the node's own values (0 when it is not accounted); total: self
 * plus the accounted nodes below it (in the op view: an op type's total is
 * the inclusive time of its executions, ops nested in them included, and
 * the root's total sums the op types' self values, so that each
 * nanosecond counts once).
 */
struct tft_prof_node {
	const char *name;          /* borrowed from the view */
	double self[TFT_PROF_NMETRICS], total[TFT_PROF_NMETRICS];
	double cum[TFT_PROF_NMETRICS]; /* the op view: self of this op type and those after it (tfprof's first %) */
	bool accounted;            /* its type matched -account_type_regexes (tfprof's "--" otherwise) */
	uint32_t depth;            /* 0 = the root (_TFProfRoot) */
	uint32_t first_child, nchildren; /* children: nodes[first_child .. +nchildren) */
	uint64_t defined;          /* graph nodes counted in total (tfprof's "defined") */
	uint64_t self_defined;     /* graph nodes of its own (op view: of that type) */
	const char *shape;         /* a parameter's shape "3x3x3x16", or NULL (borrowed) */
	const char *devices;       /* '|'-joined, or "" (borrowed) */
	const char *op_types;      /* '|'-joined, or "" (borrowed) */
	const char *input_shapes;  /* "0:2x3|1:3x4", or "" (borrowed) */
	uint32_t exec_first, nexec;/* its contributions: result.contribs[exec_first .. +nexec) */
	/* the code view: a Python frame (file, line, function) for pprof */
	const char *file, *function; /* borrowed or NULL */
	int64_t line;
};

struct tft_prof_result {
	int view;
	int64_t step;       /* as asked (-1: averaged) */
	uint32_t nsteps;
	struct tft_prof_node *nodes; /* owned; nodes[0] is the root; children contiguous */
	uint32_t nnodes;
	const struct tft_prof_opts *opts; /* borrowed: the options it was made with */
	struct tft_prof *prof;            /* borrowed */
	/*
	 * What each shown node counts and no shown child of it does: records
	 * (graph nodes) with their values in this node (per step; in the code
	 * view a record's part under that line). Owned; see exec_first.
	 */
	struct tft_prof_contrib {
		uint32_t record;
		double v[TFT_PROF_NMETRICS];
	} *contribs;
	uint32_t ncontribs;
	void *arena;        /* owned: names and joined strings */
};

/*
 * Make view `view` with opts (the profile's step; opts->step is not
 * consulted). Returns 0 and *out (free with tft_prof_result_free), or
 * TFT_ENOMEM / TFT_EINVAL (err filled).
 */
int tft_prof_view(struct tft_prof *p, int view, const struct tft_prof_opts *opts,
		  struct tft_prof_result **out, struct tft_error *err);
void tft_prof_result_free(struct tft_prof_result *r);

/* ---- records and executions (timeline and pprof output, the HTTP API) --------------- */

/* One record of the profile: a graph node with its per-step values. */
struct tft_prof_record {
	const char *name;     /* full name (borrowed) */
	const char *op;       /* op type (borrowed) */
	double self[TFT_PROF_NMETRICS]; /* per step, as in tft_prof_node.self */
};
uint32_t tft_prof_record_count(const struct tft_prof *p);
void tft_prof_record_get(const struct tft_prof *p, uint32_t id, struct tft_prof_record *out);

/*
 * Call fn for every execution (a slice of an op, or a kernel it launched)
 * of the records marked in want[record id] (nonzero), in the step(s) of
 * the profile, track by track in time order. Runs a second scan of the
 * session (one thread). fn returns non-zero to stop (returned).
 */
struct tft_prof_exec {
	uint32_t record;   /* record id */
	uint32_t track;    /* session track id */
	int64_t ts_ns, dur_ns;
	uint32_t name;     /* session string id of the slice's name */
	uint32_t depth;    /* its depth on the track (a slice id: track, ts, depth) */
	bool accelerator;  /* a kernel / device execution */
};
typedef int (*tft_prof_exec_fn)(void *ctx, const struct tft_prof_exec *e);
int tft_prof_executions(struct tft_prof *p, const uint8_t *want, tft_prof_exec_fn fn, void *ctx,
			struct tft_error *err);

/* ---- the roofline table ---------------------------------------------------------- */

/*
 * One row: an op type (the op view's) or a kernel name, with its achieved
 * rates per step against its device's peak where the device is known
 * (docs/cmd-prof.md lists the datasheet peaks). NAN where a value is unknown.
 */
struct tft_prof_roofline_row {
	const char *name;        /* borrowed from the profile */
	bool kernel;             /* a kernel name (else an op type) */
	const char *device;      /* borrowed; "" if none */
	const char *dtype;       /* "fp32", "fp16/bf16", "" (the peak used) */
	double count;            /* executions per step */
	double micros;           /* its time per step: on the accelerator if it has any, else on the host */
	double flops;            /* float ops per step (a kernel: its share of its ops' by time) */
	double bytes;            /* per step, its tensors each read or written once (an estimate): TF inputs + outputs,
				  * PyTorch its tensor inputs (Kineto records no outputs) */
	double flops_per_s, bytes_per_s, intensity; /* achieved FLOP/s, B/s, FLOP per byte */
	double peak_flops_per_s, peak_bytes_per_s;  /* the device's, or NAN */
	double attainable_flops_per_s;              /* min(peak, intensity x bandwidth), or NAN */
	double of_attainable;    /* achieved / attainable, 0..1+, or NAN */
	const char *bound;       /* "compute", "memory" or "" */
};

/*
 * The roofline rows of the profile: op types, then kernel names, each by
 * time (largest first). *rows owned by the caller (free()); the strings
 * stay the profile's. 0 or TFT_ENOMEM.
 */
int tft_prof_roofline(struct tft_prof *p, struct tft_prof_roofline_row **rows, uint32_t *n);

/* A device's peak FLOP/s (fp32 or 16-bit) and bytes/s from its name; false when unknown. */
bool tft_prof_device_peak(const char *device, bool half, double *flops_per_s, double *bytes_per_s);

/* The session the profile was made from (borrowed). */
struct tft_session *tft_prof_session(const struct tft_prof *p);

#endif /* TFT_ANALYZE_PROF_H */
