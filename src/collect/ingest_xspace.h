/* SPDX-License-Identifier: MIT */
/*
 * XSpace importer (TF2/JAX profiler *.xplane.pb): planes -> processes,
 * lines -> tracks, XEvents -> slices/instants with resolved stats as args,
 * launch->kernel flows by correlation_id, steps from the Steps line.
 */
#ifndef TFT_COLLECT_INGEST_XSPACE_H
#define TFT_COLLECT_INGEST_XSPACE_H

#include <stddef.h>
#include <stdint.h>

#include "collect/ingest.h"
#include "collect/tf_names.h"
#include "core/status.h"
#include "store/writer.h"

/*
 * Import one binary XSpace data[0..len) (borrowed; e.g. the mmapped file)
 * into w. `name` is the file path or host name (used in errors and, when
 * XSpace.hostnames is empty, as the host: its base name without
 * ".xplane.pb"). opts may be NULL. Several files (hosts) may be imported
 * into one writer; each host keeps its own clock.
 *
 * Times: ts = line.timestamp_ns + offset_ps/1000 and end = ts + duration_ps/1000,
 * both rounded to the nearest ns (so nesting survives rounding);
 * duration_ps 0 gives an instant.
 *
 * Returns 0, TFT_EFORMAT (err: byte offset and message path such as
 * "planes[3].lines[7].events[12]"), TFT_ENOMEM or a writer status.
 */
int tft_xspace_ingest(struct tft_writer *w, const char *name, const uint8_t *data, size_t len,
		      const struct tft_ingest_opts *opts, struct tft_error *err);

#endif /* TFT_COLLECT_INGEST_XSPACE_H */
