/* SPDX-License-Identifier: MIT */
/*
 * Inside tftracer prof (analyze/prof*.c), not an API: the record tables the
 * scan fills, the model pass completes and the views read.
 *
 * A record is one tfprof "graph node": a TF node (by name), a PyTorch op in
 * its context (the module scope or enclosing op it ran in), a scope (an
 * nn.Module, a record_function range), a parameter, a kernel no op launched.
 * Records form the execution trie (parent = the context). A cell is what one
 * record did under one code context (its Python stack): the accumulators.
 * Strings are local ids ("lids") of the table's own string table.
 */
#ifndef TFT_ANALYZE_PROF_INT_H
#define TFT_ANALYZE_PROF_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "analyze/prof.h"
#include "core/hmap.h"
#include "core/strtab.h"

#define PROF_NONE UINT32_MAX

enum prof_rec_kind {
	REC_OP = 0,     /* an op execution's record (TF node, aten op, zone, runtime call) */
	REC_SCOPE,      /* a record_function / user annotation range */
	REC_MODULE,     /* an nn.Module (its forward call, or model_params) */
	REC_PARAM,      /* a parameter (model_params) */
	REC_KERNEL,     /* device work no op launched (its own record, by kernel name) */
	REC_BWDSEQ,     /* deferred context of backward ops: the forward op's scope, found after the scan */
	REC_KINDS
};

/* Accumulators of one cell, over the step(s) of the profile. */
struct prof_acc {
	int64_t cpu_ns;      /* self time on the host / executor */
	int64_t acc_ns;      /* kernel time on accelerators */
	int64_t runs;        /* executions (tfprof's run_count) */
	int64_t req, peak, resid, outb; /* memory, bytes */
	int64_t flops;       /* float ops the trace gave per execution (PyTorch) */
	int64_t seen;        /* executions in any step (whether the node ever ran) */
};

struct prof_rec {
	uint32_t parent;     /* context record or PROF_NONE (the root) */
	uint32_t name;       /* lid */
	uint8_t kind;        /* enum prof_rec_kind */
	uint8_t tfname;      /* a TF node name: split on '/' in the scope view */
	uint8_t bwd;         /* a backward op (autograd thread) */
	uint8_t pad;
	uint32_t op;         /* lid of the op type (0: none) */
	uint32_t cat;        /* lid of the category (0: none) */
	uint32_t device;     /* lid of the device (0: none) */
	uint32_t dims, concrete, intypes; /* lids: "Input Dims", "Concrete Inputs", "Input type" of its first execution */
	uint32_t out_arg, in_arg;         /* lids: RunMetadata "output", "inputs" args of its first execution */
	uint32_t prev;       /* the record executed just before it in the same context (first time), or PROF_NONE */
	int64_t seq;         /* REC_BWDSEQ: the forward Sequence number */
	int64_t fwd_tid;     /* REC_BWDSEQ: the forward op's thread (its track's tid) */
	uint32_t fwd;        /* REC_BWDSEQ: the forward op's context (PROF_NONE: the root) */
	uint32_t redirect;   /* PROF_NONE, or the record it was merged into */
};

struct prof_code {
	uint32_t parent;     /* code node or 0 (the root: id 0 is the root itself) */
	uint32_t name;       /* lid of the frame text as the trace has it */
};

struct prof_cell {
	uint32_t rec, code;  /* code 0: no Python stack; rec | PROF_REMOTE_BIT: another worker's cell (scan only) */
	struct prof_acc a;
};

#define PROF_REMOTE_BIT 0x80000000u

/* A kernel name launched by one cell (or run by a kernel record of its own): the roofline's per-kernel rows. */
struct prof_kcell {
	uint32_t cell;       /* the launching cell (scan: | PROF_REMOTE_BIT with the worker in `remote`) */
	uint32_t kname;      /* lid of the kernel's name */
	uint32_t device;     /* lid of its device (the stream's) */
	uint32_t remote;     /* the worker of a remote cell */
	int64_t ns, n;       /* time and executions in the step(s) */
};

struct prof_tab {
	struct tft_strtab *str;   /* owned: lids */
	struct prof_rec *recs;    /* owned */
	uint32_t nrecs, caprecs;
	struct tft_hmap rix;  /* owned: (parent, name, kind) -> rec */
	struct prof_code *codes;  /* owned; codes[0] is the root */
	uint32_t ncodes, capcodes;
	struct tft_hmap cix;  /* owned: (parent, name) -> code */
	struct prof_cell *cells;  /* owned */
	uint32_t ncells, capcells;
	struct tft_hmap kix;  /* owned: (rec, code) -> cell */
	struct prof_kcell *kcells; /* owned */
	uint32_t nkcells, capkcells;
	struct tft_hmap kcix;  /* owned: (cell, kname, remote) -> kcell */
};

int tft_prof_tab_init(struct prof_tab *t);
void tft_prof_tab_fini(struct prof_tab *t);
/* Find or add; PROF_NONE when out of memory. */
uint32_t tft_prof_rec_get(struct prof_tab *t, uint32_t parent, uint32_t name, int kind);
uint32_t tft_prof_rec_find(const struct prof_tab *t, uint32_t parent, uint32_t name, int kind);
uint32_t tft_prof_code_get(struct prof_tab *t, uint32_t parent, uint32_t name);
uint32_t tft_prof_cell_get(struct prof_tab *t, uint32_t rec, uint32_t code);
uint32_t tft_prof_kcell_get(struct prof_tab *t, uint32_t cell, uint32_t remote, uint32_t kname);
uint32_t tft_prof_lid(struct prof_tab *t, const char *s, size_t len); /* PROF_NONE when out of memory */
const char *tft_prof_str(const struct prof_tab *t, uint32_t lid);
void tft_prof_acc_add(struct prof_acc *a, const struct prof_acc *b);

/* ---- steps -------------------------------------------------------------------------- */

struct prof_span {
	int64_t start, end;  /* [start, end] */
	uint32_t process;    /* or TFT_NONE: every process */
};

struct prof_steps {
	bool all;            /* no traced steps: everything counts */
	struct prof_span *spans; /* owned: the selected steps, by start */
	uint32_t n;
	uint32_t nsteps;     /* distinct step numbers selected (the divisor) */
	uint32_t traced;     /* distinct traced step numbers in the session */
};

/* ---- flows (kernel launches) ----------------------------------------------------------- */

struct prof_flow {
	int64_t src_ts, dst_ts;
	uint32_t src_track, dst_track;
	uint32_t cell;       /* the launching op's cell in its worker's table, or PROF_NONE */
	uint16_t worker;
	uint8_t in_step;     /* the launching execution counts */
	uint8_t pad;
};

/* ---- the profile ------------------------------------------------------------------------ */

/* Static per-record values the model pass adds (indexed by record id of the merged table). */
struct prof_static {
	int64_t params;      /* -1: none */
	int64_t flops;       /* per run (TF rules or the OpLog), -1: unknown */
	uint32_t shape;      /* lid of "3x3x3x16" (a parameter's shape), 0: none */
	uint32_t types;      /* first index into prof.types (its extra op types), count in ntypes */
	uint16_t ntypes;
	uint16_t ncode;      /* TF: code frames (OpLog) */
	uint32_t code;       /* first index into prof.frames */
	uint32_t inputs;     /* first index into prof.inputs (graph view edges: record ids) */
	uint32_t ninputs;
	uint32_t in_shapes;  /* lid of "0:2x3|1:3x4", 0: none */
	uint32_t code_leaf;  /* code node of its OpLog code (TF), 0: none */
	uint32_t ptypes[2];  /* a parameter's extra op types: its dtype, _trainable_variables (lids, 0: none) */
	bool graph;          /* seen in a graph (GraphDef / OpLog) */
};

struct tft_prof {
	struct tft_session *s;          /* borrowed */
	int64_t step;
	int threads;
	struct prof_steps steps;
	struct prof_tab tab;            /* merged records, codes, cells */
	struct prof_static *st;         /* owned, nst entries (tab.nrecs after the model pass) */
	uint32_t nst, cst;
	uint32_t *types;                /* owned: lids of extra op types */
	uint32_t ntypes, captypes;
	uint32_t *frames;               /* owned: lids of code frames */
	uint32_t nframes, capframes;
	uint32_t *inputs;               /* owned: record ids */
	uint32_t ninputs, capinputs;
	struct tft_prof_info info;
	char framework[16];
	bool spec_modules;              /* model_params meta: module scopes are the python_module slices */
	bool steps_hold_nothing;        /* tft_prof_info.steps_hold_nothing */
	/* per record: self sums (metrics in ns, bytes, counts) and subtree sums */
	int64_t (*self)[TFT_PROF_NMETRICS];  /* owned, tab.nrecs */
	int64_t (*incl)[TFT_PROF_NMETRICS];  /* owned, tab.nrecs: the record and its execution subtree */
	uint32_t *order;                /* owned: live record ids, parents first */
	uint32_t norder;
	uint32_t *kids, *kid_first, *kid_n; /* owned: execution trie children per record (and the root at nrecs) */
	struct prof_flow *flows;        /* kept for tft_prof_executions: NULL after open */
	uint32_t nflows;
};

/* prof_scan.c: scan the session into p->tab (records, codes, cells) and p->info. */
int tft_prof_scan(struct tft_prof *p, struct tft_error *err);

/*
 * prof_scan.c: the second pass for tft_prof_executions: every execution of
 * a wanted record, with the record ids of p->tab.
 */
int tft_prof_scan_executions(struct tft_prof *p, const uint8_t *want, tft_prof_exec_fn fn, void *ctx,
			 struct tft_error *err);

/* prof_model.c: graphs, OpLog, model_params, FLOPs, backward placement, sums. */
int tft_prof_model(struct tft_prof *p, struct tft_error *err);

/* Push a value onto one of the profile's index arrays; returns its index or PROF_NONE. */
uint32_t tft_prof_push(uint32_t **arr, uint32_t *n, uint32_t *cap, uint32_t v);

#endif /* TFT_ANALYZE_PROF_INT_H */
