/* SPDX-License-Identifier: MIT */
/*
 * Track roles for accounting: which tracks hold concurrent executions
 * (TFT_TRACKF_CONCURRENT) and which repeat work recorded elsewhere
 * (TFT_TRACKF_DERIVED), decided from what the importers know of the
 * producers. The rules, for every importer:
 *
 *   - A TF device's executor track (RunMetadata device, tf.timeline
 *     "<device> Compute") runs ops on several inter-op threads: concurrent.
 *   - GPU streams, copy engines and device comm tracks: concurrent.
 *   - TF's GPU tracer saves every kernel twice (/stream:all and /stream:N)
 *     and every copy twice (/memcpy and /stream:N): where a device has
 *     /stream:N tracks, its /stream:all and /memcpy tracks are derived.
 *   - CPU threads hold call stacks: neither.
 * XSpace lines and Kineto categories have rules of their own in their
 * importers (collect/xspace/, collect/chrome/), which use the flags below.
 */
#ifndef TFT_COLLECT_TRACK_ROLES_H
#define TFT_COLLECT_TRACK_ROLES_H

#include <stdint.h>

#include "store/writer.h"

/* The flags a track of `kind` gets unless its importer knows better. */
uint32_t tft_roles_default_flags(uint32_t kind);

/*
 * Mark TF GPU-tracer mirror tracks (/stream:all, /memcpy) of the writer's
 * tracks derived where their device has /stream:N tracks. The device is
 * read from the track's name (RunMetadata) or its process's name without
 * " Compute" (tf.timeline). Idempotent; run after each input (collect/ingest.c),
 * with no lane open. Returns 0.
 */
int tft_roles_mark_tf_mirrors(struct tft_writer *w);

#endif /* TFT_COLLECT_TRACK_ROLES_H */
