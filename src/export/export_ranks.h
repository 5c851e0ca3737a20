/* SPDX-License-Identifier: MIT */
/*
 * A distributed job as JSON: the "job" key of the session summary (`info
 * --json`, GET /api/session: ranks, clocks, matching) and the per-rank
 * analysis (analyze/ranks.h) that GET /api/ranks and `stats --by rank
 * --json` print. The shapes are in docs/http-api.md ("Ranks").
 */
#ifndef TFT_EXPORT_EXPORT_RANKS_H
#define TFT_EXPORT_EXPORT_RANKS_H

#include <stdbool.h>
#include <stdint.h>

#include "analyze/ranks.h"
#include "codec/json_write.h"
#include "store/session.h"

/*
 * "job": {...} for a session that is a job (a job view, or a merged job:
 * meta job_ranks), or nothing: ranks, size, id, clock (meta job_clock, the
 * alignment applied; null when the times are raw), clock_estimate (the
 * alignment estimated, applied or not), comm (the matching's counts),
 * clock_switchable (a job view: its ranks can be shown on their own clocks).
 */
void tft_export_job_keys(struct tft_json_writer *w, const struct tft_session *s);

/*
 * The analysis as one object. At most max_colls collectives are listed (the
 * largest skews; 0: all), with "collectives_total" saying how many there are.
 */
void tft_export_ranks_json(struct tft_json_writer *w, struct tft_session *s, const struct tft_ranks_result *r,
			   uint32_t max_colls);

#endif /* TFT_EXPORT_EXPORT_RANKS_H */
