/* SPDX-License-Identifier: MIT */
/*
 * The parallel import's shared state (parallel.c drives it, par_jobs.c
 * runs on the workers, par_predict.c tells each device's tracks first).
 *
 * With opts->threads >= 2 and binary input whose devices each appear once
 * (rm->direct), tft_rm_par_stepstats() decodes the dev_stats on several threads,
 * each owning whole devices: a worker decodes a device's nodes with the
 * serial code (tft_rm_dev_stats(), its own struct rm: scratch, templates, pend
 * buffer, comm records, counts) and appends the device's events through its
 * own writer lane, which does their store work on that thread too. The
 * session is the serial import's:
 *  - processes and tracks are registered before the lanes open, in the
 *    order the serial import registers them (same ids). Tracks are created
 *    on first use, so a first parallel walk (tft_rm_predict_tracks) finds which of
 *    a device's tracks its nodes use, and which first, by tft_rm_emit_node()'s own
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
#ifndef TFT_COLLECT_RUNMETA_PAR_INT_H
#define TFT_COLLECT_RUNMETA_PAR_INT_H

#include <pthread.h>

#include "collect/runmeta/rm_int.h"
#include "core/workers.h"

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
 * One job of the decode: a whole device (tft_rm_dev_stats()), or one part of it
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
	uint64_t nodes;          /* what tft_rm_emit_node() counted */
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

/*
 * predict_node()'s memo (par_predict.c): node_name and label bytes (borrowed from the input) -> comm.
 * (Not core/hmap: a direct-mapped memo whose entries overwrite each other, not a map.)
 */
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
	int phase;              /* 0: tft_rm_predict_tracks, 1: decode */
	/* Shared between the threads (atomics). */
	struct tft_jobq q;      /* the current phase's work: indices into order */
	uint32_t min_fail;      /* lowest failed device, UINT32_MAX: none */
	int unsure;             /* a prediction walk could not tell */
	uint64_t bytes, nodes;  /* progress */
	uint64_t base_pos;      /* progress: input offset of the StepStats */
	/* Pend buffers of appended parts, for the next parts (their pages are already in). */
	pthread_mutex_t pool_mu;
	struct rm_job pool[8];  /* (only pend, pargs, cpend, cpargs) */
	uint32_t npool;
};

/* par_jobs.c: a worker's loop over the current phase's jobs (tft_workers_run's fn; ctx: the rm_par). */
void tft_rm_par_run(void *ctx, unsigned worker);
/* The decoder as the serial one is when it hands dev_stats[k] to on_dev_stats, and that value. */
void tft_rm_par_dec(const struct rm_par *par, struct tft_pb_dec *d, struct tft_error *err,
		    uint32_t k, struct tft_pb_val *v);

/* par_predict.c: the tracks device k's nodes use (PT_*), -1 when unsure. */
int tft_rm_predict_tracks(struct rm_worker *wk, uint32_t k);

#endif /* TFT_COLLECT_RUNMETA_PAR_INT_H */
