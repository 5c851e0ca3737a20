/* SPDX-License-Identifier: MIT */
/*
 * tftracer prof's `-output timeline:outfile=F`: a Chrome trace (the
 * chrome://tracing and Perfetto JSON that `export -f chrome` writes, and
 * that `tftracer import` reads back) of the executions of the graph nodes a
 * view shows, in the profile's step(s): host ops on their thread or device
 * track, kernels on their stream, each slice's args naming its graph node
 * and op type.
 */
#ifndef TFT_EXPORT_EXPORT_PROF_TIMELINE_H
#define TFT_EXPORT_EXPORT_PROF_TIMELINE_H

#include <stdint.h>

#include "analyze/prof.h"
#include "codec/json_write.h"

/* Write the trace to w (not finished). *events gets the slices written. 0 or a tft_status (err filled). */
int tft_export_prof_timeline(const struct tft_prof_result *r, struct tft_json_writer *w, uint64_t *events,
			     struct tft_error *err);

#endif /* TFT_EXPORT_EXPORT_PROF_TIMELINE_H */
