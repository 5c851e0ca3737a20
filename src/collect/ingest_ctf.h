/* SPDX-License-Identifier: MIT */
/*
 * CTF importer (docs/formats-lttng.md): traces written by LTTng (UST and
 * kernel) and other CTF 1.8 producers, read through libbabeltrace2
 * (source.ctf.fs -> filter.utils.muxer -> our sink), so that the events
 * arrive in time order whatever stream (CPU) wrote them.
 *
 * LTTng: events on a track per thread (context vtid/tid, in a process per
 * vpid/pid, else per procname), else per CPU (packet context cpu_id), else
 * per stream. `X_entry`/`X_exit`, `X_start`/`X_end`, `X_begin`/`X_end` and
 * `syscall_entry_X`/`syscall_exit_X` pairs become slices (an entry never
 * exited: an unclosed slice to the trace's end, counted), everything else
 * instants; fields become args. The LTTng-based TensorFlow profiler's
 * providers (API calls, TF ops and session runs, GPU kernels and copies
 * with device times) map onto API and op slices, steps and per-queue
 * gpu_stream tracks. OTF2 traces converted to CTF (env tracer_name "otf2")
 * map locations to threads of their rank's process.
 *
 * Timestamps: the clock snapshot's nanoseconds from the clock's origin
 * (its offset applied), what `babeltrace2 --clock-seconds` prints; for
 * LTTng that origin is the Unix epoch.
 */
#ifndef TFT_COLLECT_INGEST_CTF_H
#define TFT_COLLECT_INGEST_CTF_H

#include "collect/ingest.h"

/*
 * Whether `path` names CTF input, for tft_ingest_file(): a directory holding
 * a `metadata` file (a trace), a file inside such a directory that is its
 * `metadata` or a stream file (the CTF packet magic first), or a directory
 * with no *.xplane.pb of its own and CTF traces below it (an LTTng session's
 * output: ust/uid/0/64-bit/, kernel/ ...). 1 or 0.
 */
int tft_ctf_probe(const char *path);

/*
 * Import the CTF trace(s) `path` names (see tft_ctf_probe()). A trace that
 * libbabeltrace2 cannot read is TFT_EFORMAT with err naming the file (its
 * metadata or the stream file) and what was expected; nothing reaches the
 * writer's tracks before the whole input has been read.
 */
int tft_ctf_ingest(struct tft_writer *w, const char *path, const struct tft_ingest_opts *opts,
		   struct tft_error *err);

#endif /* TFT_COLLECT_INGEST_CTF_H */
