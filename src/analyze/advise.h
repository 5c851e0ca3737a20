/* SPDX-License-Identifier: MIT */
/*
 * The advisor: finds what slows a session's steps, says what to change and
 * points at the slices that show it. Eight checkers (docs/cmd-advise.md has
 * each one's rule and thresholds) read one pass over the session's events;
 * each adds findings (a problem, its cost per step, the evidence and a
 * recommendation) or a verdict saying what it found instead. Every step of
 * the session also gets its step-time breakdown (device compute,
 * communication, memcpy, input, host compute, idle), which sums to the
 * step's duration to the nanosecond.
 *
 * Used by `tftracer advise`, GET /api/advise and the HTML export. Not
 * thread-safe (it uses the session, which is one thread's at a time).
 */
#ifndef TFT_ANALYZE_ADVISE_H
#define TFT_ANALYZE_ADVISE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codec/json_write.h"
#include "core/status.h"
#include "store/session.h"

enum tft_advise_checker {
	TFT_ADVISE_STEP_TIME = 0,     /* step-time breakdown, input-pipeline bound */
	TFT_ADVISE_UTILIZATION = 1,   /* accelerator busy time, idle split (HTA) */
	TFT_ADVISE_EXPENSIVE = 2,     /* ops with the largest self time; CPU ops beside a GPU */
	TFT_ADVISE_OP_CONFIG = 3,     /* layouts, float64, tiny kernels and ops, launch delay */
	TFT_ADVISE_COMMUNICATION = 4, /* collectives/send/recv, overlap, exposed time, bandwidth */
	TFT_ADVISE_MEMORY = 5,        /* allocator peaks, memcpy volume and kind */
	TFT_ADVISE_VARIABILITY = 6,   /* step-time spread, outlier steps, straggler ranks */
	TFT_ADVISE_CRITICAL_PATH = 7, /* the dependency chain that ends a step */
};
#define TFT_ADVISE_NCHECKERS 8

/* The step-time breakdown's parts, in the order each nanosecond is claimed. */
enum tft_advise_part {
	TFT_ADVISE_DEVICE_COMPUTE = 0, /* a kernel / device op runs */
	TFT_ADVISE_COMM = 1,           /* else a collective, send/recv or RecvTensor runs */
	TFT_ADVISE_MEMCPY = 2,         /* else a device copy or memset runs */
	TFT_ADVISE_INPUT = 3,          /* else the host waits for data (loader ops; a step's leading gap) */
	TFT_ADVISE_HOST_COMPUTE = 4,   /* else a host op runs */
	TFT_ADVISE_IDLE = 5,           /* else nothing is recorded */
};
#define TFT_ADVISE_NPARTS 6

struct tft_advise_opts {
	bool one_step;      /* only the steps with index `step` */
	int64_t step;
	bool all_steps;     /* every traced step (default: without each worker's first, warm-up
			     * step when it has 3 or more) */
	unsigned checkers;  /* bit (1u << checker) per checker to run; 0 = all */
};

/* A slice the UI can open: track, start and depth (lane) ("TRACK.TS.DEPTH" in JSON). */
struct tft_advise_slice {
	uint32_t track;
	uint32_t depth;
	int64_t ts_ns;
};

struct tft_advise_evidence {
	uint32_t track;                  /* TFT_NONE: no one track (a step, a range) */
	int64_t t0_ns, t1_ns;            /* the time range that shows the problem */
	struct tft_advise_slice *slices; /* owned; nslices entries, at most TFT_ADVISE_MAX_SLICES */
	size_t nslices;
};
#define TFT_ADVISE_MAX_SLICES 64
#define TFT_ADVISE_MAX_EVIDENCE 8

struct tft_advise_finding {
	int checker;          /* enum tft_advise_checker */
	char *title;          /* owned, one line */
	char *explanation;    /* owned, one paragraph with the numbers */
	char *recommendation; /* owned: what to change in the program */
	int64_t cost_ns;      /* what it costs per analysed step (ns) */
	struct tft_advise_evidence *evidence; /* owned; nevidence entries */
	size_t nevidence;
};

struct tft_advise_verdict {
	int checker; /* enum tft_advise_checker */
	char *text;  /* owned, one line */
};

struct tft_advise_step {
	int64_t index;      /* the step's number */
	uint32_t process;   /* its process (TFT_NONE: the whole session) */
	int32_t rank;       /* its process's rank, -1 if none */
	int64_t start_ns, dur_ns;
	bool traced;        /* op-level events were recorded for it */
	bool analysed;      /* its time counts in the findings */
	int64_t part_ns[TFT_ADVISE_NPARTS]; /* sums to dur_ns */
};

struct tft_advise_result {
	struct tft_advise_finding *findings; /* owned; by cost_ns, largest first */
	size_t nfindings;
	struct tft_advise_verdict *checked;  /* owned; one per checker run, in checker order */
	size_t nchecked;
	struct tft_advise_step *steps;       /* owned; every step of the session, in its order */
	size_t nsteps;
	uint32_t analysed_windows;           /* steps analysed (or worker spans without steps) */
	uint32_t slabs;                      /* slabs the session was read in (not in the JSON) */
	int64_t analysed_ns;                 /* their summed duration */
};

/*
 * Run the checkers of opts (NULL: defaults) over s. On success *out is a new
 * result to free with tft_advise_destroy. Returns 0, TFT_ENOTFOUND (no step
 * with opts->step; err says which exist), TFT_ENOMEM, or what a session read
 * returns. Memory: bounded by the events of a slab of the session (about
 * 512 k slices at a time, ~24 MB), plus ~24 bytes per launch flow and small
 * per-name tables.
 */
int tft_advise_run(struct tft_session *s, const struct tft_advise_opts *opts,
		   struct tft_advise_result **out, struct tft_error *err);

void tft_advise_destroy(struct tft_advise_result *r);

/*
 * The result as JSON (docs/cmd-advise.md): {"findings": [...], "checked":
 * [...], "steps": [...], "analysed_steps", "analysed_ns"}.
 */
void tft_advise_write_json(const struct tft_advise_result *r, struct tft_json_writer *w);

/* "step_time", "utilization", ...; NULL for an unknown one. */
const char *tft_advise_checker_name(int checker);
/* Inverse of tft_advise_checker_name; -1 if unknown. */
int tft_advise_checker_parse(const char *name, size_t len);
/* "device_compute", "communication", "memcpy", "input", "host_compute", "idle". */
const char *tft_advise_part_name(int part);

#endif /* TFT_ANALYZE_ADVISE_H */
