/* SPDX-License-Identifier: MIT */
/*
 * Chrome trace JSON exporter: streams a whole session as
 * {"traceEvents":[...],"displayTimeUnit":"ns","metadata":{...}} through a
 * JSON writer. The mapping (docs/cmd-export.md) is chosen so that importing
 * the output again recreates the same tracks, slices, instants, counter
 * samples, flows and steps.
 */
#ifndef TFT_EXPORT_EXPORT_CHROME_H
#define TFT_EXPORT_EXPORT_CHROME_H

#include <stdint.h>

#include "codec/json_write.h"
#include "core/status.h"
#include "store/session.h"

/* What an export wrote (for progress lines and benchmarks). */
struct tft_export_counts {
	uint64_t events;    /* traceEvents entries, metadata events included */
	uint64_t slices, instants, counters, flows;
	uint64_t steps_in_metadata; /* steps not represented by a slice */
};

/*
 * Write the session to w (sink or memory mode; not finished or flushed at
 * the end: the caller calls tft_json_write_finish). counts may be NULL.
 * Returns 0, TFT_ENOMEM, the writer's sink error, or what the session scan
 * returns (err filled).
 */
int tft_export_chrome(struct tft_session *s, struct tft_json_writer *w,
		      struct tft_export_counts *counts, struct tft_error *err);

/*
 * Counter-track naming rule shared with the Chrome importer: a counter track
 * named "A.B" is written as {"ph":"C","name":"A","args":{"B":v}}; a name
 * without '.' (or ending in '.', or starting with it) as
 * {"name":"A","args":{"A":v}}. Importing C events names a track "<name>.<key>",
 * or "<name>" when key == name (or key == "value"), so the round trip keeps
 * the track name.
 * Returns the length of the "name" part; the key part goes to
 * *key and *key_len.
 */
size_t tft_export_chrome_counter_split(const char *track_name, size_t len, const char **key,
				       size_t *key_len);

#endif /* TFT_EXPORT_EXPORT_CHROME_H */
