/* SPDX-License-Identifier: MIT */
/*
 * A distributed job as JSON: the per-rank analysis (analyze/ranks.h) that
 * GET /api/ranks and `stats --by rank --json` print. The shapes are in
 * docs/http-api.md ("Ranks"). (The session summary's "job" key is
 * export_summary.c's.)
 */
#ifndef TFT_EXPORT_EXPORT_RANKS_H
#define TFT_EXPORT_EXPORT_RANKS_H

#include <stdbool.h>
#include <stdint.h>

#include "analyze/ranks.h"
#include "codec/json_write.h"
#include "store/session.h"

/*
 * The analysis as one object. At most max_colls collectives are listed (the
 * largest skews; 0: all), with "collectives_total" saying how many there are.
 */
void tft_export_ranks_json(struct tft_json_writer *w, struct tft_session *s, const struct tft_ranks_result *r,
			   uint32_t max_colls);

#endif /* TFT_EXPORT_EXPORT_RANKS_H */
