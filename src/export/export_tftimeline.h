/* SPDX-License-Identifier: MIT */
/*
 * tf.timeline-compatible Chrome trace: what TensorFlow's timeline.py
 * (Timeline(step_stats).generate_chrome_trace_format()) writes for the
 * same StepStats, rebuilt from a session, and its per-allocator peak memory.
 */
#ifndef TFT_EXPORT_EXPORT_TFTIMELINE_H
#define TFT_EXPORT_EXPORT_TFTIMELINE_H

#include <stdbool.h>
#include <stdint.h>

#include "codec/json_write.h"
#include "core/status.h"
#include "store/session.h"

struct tft_tftimeline_opts {
	bool show_dataflow; /* "s"/"t" DataFlow flows between producer and consumer lanes */
	bool show_memory;   /* tensor N/O/D objects and the Allocators memory counters */
};

/* What an export wrote. */
struct tft_tftimeline_counts {
	uint64_t events;   /* traceEvents entries, "M" included */
	uint64_t ops;      /* "X" */
	uint64_t flows;    /* "s"/"t" pairs */
	uint64_t tensors;  /* tensors tracked (NodeOutputs) */
	uint64_t counters; /* "C" */
	uint32_t steps;    /* StepStats reproduced (see below) */
};

/*
 * Write the session as timeline.py does, into w (sink or memory mode; the
 * caller finishes it): {"traceEvents": [...]} pretty printed like
 * json.dumps(indent=4) (keys in timeline.py's order, non-ASCII escaped).
 * Per StepStats: pid 0 "Allocators"; per device (in file order) a
 * "<device> Compute" and a "<device> Tensors" process; ops as "X" events
 * named after the op type on first-fit lanes, args {name, op, input0..};
 * tensors from NodeOutputs. See docs/formats-tensorflow.md.
 *
 * Each traced step of the session is one StepStats (the tracks whose
 * events lie inside it); several are written one after the other with
 * pids, flow ids and object ids continuing (Allocators stays pid 0).
 * Times come from the stored all_start_micros / all_end_rel_micros args
 * (else from the event, in whole microseconds). opts NULL = both off.
 *
 * Returns 0, TFT_ENOMEM, the sink's error or a session read error (err
 * filled).
 */
int tft_export_tftimeline(struct tft_session *s, struct tft_json_writer *w,
			  const struct tft_tftimeline_opts *opts, struct tft_tftimeline_counts *counts,
			  struct tft_error *err);

/* timeline.py's AllocationMaximum for one allocator of one StepStats. */
struct tft_tftimeline_peak {
	const char *allocator;      /* borrowed (valid during the callback) */
	uint32_t step;              /* index for tft_session_step(), TFT_NONE if none */
	int64_t ts_us;              /* when the maximum was first reached */
	int64_t bytes;              /* live bytes then (requested_bytes of the tensors) */
	uint32_t ntensors;
	const char *const *tensors; /* the live tensors, sorted; borrowed */
};

/* Return non-zero to stop (tft_tftimeline_peak_memory returns it). */
typedef int (*tft_tftimeline_peak_fn)(void *ctx, const struct tft_tftimeline_peak *peak);

/*
 * Call fn once per allocator and StepStats, in timeline.py's order, with
 * the peak of its memory counter (the analysis of analyze_step_stats; the
 * lifetime of a tensor runs from its producer's start to its last
 * consumer's end). Nothing is called for a session without NodeOutputs.
 * Returns 0, fn's non-zero value, TFT_ENOMEM or a session read error.
 */
int tft_tftimeline_peak_memory(struct tft_session *s, tft_tftimeline_peak_fn fn, void *ctx,
			       struct tft_error *err);

/*
 * True if the session came from TensorFlow StepStats (RunMetadata,
 * StepStats or a pickle of them): cheap, from the session metadata. Callers
 * that must stay fast on big sessions (info) check this before calling
 * tft_tftimeline_peak_memory, which reads every event.
 */
bool tft_tftimeline_is_stepstats(struct tft_session *s);

#endif /* TFT_EXPORT_EXPORT_TFTIMELINE_H */
