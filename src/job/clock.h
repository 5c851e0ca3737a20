/* SPDX-License-Identifier: MIT */
/*
 * Clock alignment of a job's ranks (docs/distributed.md, "Clocks"): each
 * rank's clock is the reference rank's plus an offset that may drift
 * linearly; both are estimated from the job itself and come with a bound on
 * their error.
 *
 * Every source is a set of "A happened before B" pairs across two ranks,
 * each of which bounds the difference of their offsets (o_b - o_a <= t_B -
 * t_A in raw times):
 *   - the MPI ping-pong at MPI_Init / MPI_Finalize (meta clock_sync): the
 *     reference's send before the rank's reply, the reply before the
 *     reference's receive;
 *   - messages: a send starts before its receive ends;
 *   - collectives: no member leaves before the members whose data it needs
 *     have arrived (all for allreduce, barrier, allgather, alltoall; the
 *     root for bcast/scatter; the root leaves after all for reduce/gather).
 * The tightest bounds of each rank's offset against the reference follow by
 * shortest paths over these differences; the offset is the middle of that
 * interval and the error its half width, so the true offset lies within
 * offset ± error as long as the pairs really are ordered. Drift: the same
 * over four time windows, a line through them when it moves more than the
 * windows' errors, then the interval over all of it on drift-corrected times.
 */
#ifndef TFT_JOB_CLOCK_H
#define TFT_JOB_CLOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "job/comm.h"

/* tft_clock_map.method: what bounded the rank's offset */
enum {
	TFT_CLOCK_REFERENCE = 1u << 0,   /* the reference rank itself */
	TFT_CLOCK_PINGPONG = 1u << 1,
	TFT_CLOCK_COLLECTIVES = 1u << 2,
	TFT_CLOCK_MESSAGES = 1u << 3,
	TFT_CLOCK_INCONSISTENT = 1u << 4, /* the pairs contradict each other: no bound */
};

/*
 * A rank's clock against the reference: raw = true + offset_ns +
 * drift * (raw - ref_ns) (drift in ns per ns: 1e-6 is 1 µs per second).
 */
struct tft_clock_map {
	int64_t offset_ns;
	double drift;
	int64_t ref_ns;    /* the raw time offset_ns holds at */
	int64_t error_ns;  /* |offset - true offset| <= error_ns; -1 unknown */
	uint32_t method;   /* TFT_CLOCK_* */
	uint32_t pairs;    /* ordered pairs that touched the rank */
};

/* The identity map (no shift). */
static inline struct tft_clock_map tft_clock_identity(void)
{
	struct tft_clock_map m = { 0, 0.0, 0, 0, 0, 0 };

	return m;
}

/* Raw time to the reference's (aligned); INT64_MIN / INT64_MAX stay. */
static inline int64_t tft_clock_aligned(const struct tft_clock_map *m, int64_t raw)
{
	int64_t d, corr, out;

	if (raw == INT64_MIN || raw == INT64_MAX || (m->offset_ns == 0 && m->drift == 0.0))
		return raw;
	if (__builtin_sub_overflow(raw, m->ref_ns, &d))
		return raw;
	corr = m->offset_ns + (int64_t)(m->drift * (double)d + (d >= 0 ? 0.5 : -0.5));
	if (__builtin_sub_overflow(raw, corr, &out))
		return corr > 0 ? INT64_MIN : INT64_MAX;
	return out;
}

/* Aligned time back to the rank's raw clock (the inverse, within 1 ns). */
static inline int64_t tft_clock_raw(const struct tft_clock_map *m, int64_t aligned)
{
	int64_t r, back;

	if (aligned == INT64_MIN || aligned == INT64_MAX || (m->offset_ns == 0 && m->drift == 0.0))
		return aligned;
	if (__builtin_add_overflow(aligned, m->offset_ns, &r))
		return m->offset_ns > 0 ? INT64_MAX : INT64_MIN;
	/* one Newton step on aligned(r) = aligned (drift is tiny) */
	back = tft_clock_aligned(m, r);
	if (back == INT64_MIN || back == INT64_MAX || __builtin_sub_overflow(r, back - aligned, &r))
		return r;
	return r;
}

/* One row of the ping-pong (meta clock_sync): the rank's clock read between the reference's two. */
struct tft_clock_sync {
	int32_t rank;      /* the rank that replied (rank number) */
	int32_t ref_rank;  /* the reference rank (rank number) */
	int64_t ref_t0, ref_t1; /* the reference's send and receive */
	int64_t local;     /* the rank's clock when it replied */
};

/*
 * Parse a session's meta clock_sync (the capture spec: {"reference_rank":
 * R, "points": [{"at": ..., "ref_t0": ns, "ref_t1": ns, "local": ns,
 * "peer": k}, ...]}; a row without "peer" is own_rank's) and append its
 * rows to *rows (realloc'd, *n of *cap used). 0, TFT_ENOMEM, or
 * TFT_EFORMAT (err says where).
 */
int tft_clock_parse_sync(const char *json, int32_t own_rank, struct tft_clock_sync **rows, uint32_t *n,
			 uint32_t *cap, struct tft_error *err);

/* A rank's clock as meta job_clock records it. */
struct tft_clock_rank {
	int32_t rank;
	struct tft_clock_map map;
};

/*
 * Parse meta job_clock ({"reference_rank": R, "applied": b, "ranks": [{"rank",
 * "offset_ns", "drift_ppm", "ref_ns", "error_ns", "method": [...]}, ...]},
 * written by job/job.c) into a new array *out of *n (free it). *applied says
 * whether the session's times are already aligned. 0, TFT_ENOMEM or
 * TFT_EFORMAT.
 */
int tft_clock_parse_job(const char *json, struct tft_clock_rank **out, uint32_t *n, bool *applied,
			struct tft_error *err);

/*
 * Estimate out[0 .. cs->nranks) (one map per rank index of cs) from the
 * ping-pong rows and the matched communication in cs (raw times, each rank
 * on its own clock), against rank index `ref`. 0 or TFT_ENOMEM.
 */
int tft_clock_estimate(const struct tft_comm_set *cs, const struct tft_clock_sync *rows, uint32_t nrows,
		       uint32_t ref, struct tft_clock_map *out);

/* A rank's clock methods (TFT_CLOCK_* bits) as a JSON array of their names, as meta job_clock has them. */
struct tft_json_writer;
void tft_clock_write_methods(struct tft_json_writer *w, uint32_t m);

/*
 * Meta job_clock: the maps of ranks[0 .. n) as JSON (the shape
 * tft_clock_parse_job reads), applied saying whether the session's times are
 * aligned by them. malloc'd; NULL on out-of-memory.
 */
char *tft_clock_json(const int32_t *ranks, const struct tft_clock_map *m, uint32_t n, bool applied);

#endif /* TFT_JOB_CLOCK_H */
