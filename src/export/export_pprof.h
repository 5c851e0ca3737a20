/* SPDX-License-Identifier: MIT */
/*
 * tftracer prof's `-output pprof:outfile=F`: a view as a gzipped pprof
 * profile.proto (github.com/google/pprof, proto/profile.proto), which
 * `go tool pprof` reads: one sample per graph node (record) counted at a
 * shown node, its stack the shown nodes from that one up to the root's
 * child, values [count, the -select metric] (tfprof_code.cc's layout;
 * times in nanoseconds).
 */
#ifndef TFT_EXPORT_EXPORT_PPROF_H
#define TFT_EXPORT_EXPORT_PPROF_H

#include <stdio.h>

#include "analyze/prof.h"
#include "core/status.h"

/*
 * Write r to fp (gzip). The view's -select must name exactly one numeric
 * metric (TFT_EINVAL otherwise, err says so). Returns 0, TFT_EINVAL,
 * TFT_ENOMEM or TFT_EIO.
 */
int tft_export_pprof(const struct tft_prof_result *r, FILE *fp, struct tft_error *err);

#endif /* TFT_EXPORT_EXPORT_PPROF_H */
