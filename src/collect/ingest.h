/* SPDX-License-Identifier: MIT */
/*
 * Importers: turn a trace file of a known format into session events.
 * tft_ingest_file() detects the format (gzip is transparent) and dispatches
 * to the format's importer (collect/ingest_<fmt>.c).
 *
 * On malformed input an importer returns TFT_EFORMAT with err->offset set to
 * the byte offset (in the decompressed stream) and err->msg saying what was
 * expected; the writer is then left in an unspecified state and the caller
 * aborts it and removes the output file.
 */
#ifndef TFT_COLLECT_INGEST_H
#define TFT_COLLECT_INGEST_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "core/status.h"
#include "store/writer.h"

struct tft_ingest_opts {
	size_t mem_budget; /* sorter budget in bytes; 0 = default */
	/* Threads an importer that splits its input (XSpace lines, RunMetadata
	 * devices) may use at once, through writer lanes; 0 or 1 = only the
	 * calling thread. The session holds the same events either way. */
	int threads;
	/* XSpace: a host's XSpace of fewer bytes is decoded on the calling
	 * thread (the writer's store workers still store it), a larger one by
	 * `threads` threads; 0 = the default, 16 MB: below it the parallel
	 * path's cost per host (metadata snapshots, peeks, per-group merges)
	 * outweighs what it gains on a real profile's many small tracks. */
	size_t par_min_bytes;
	/* Called now and then (never more than ~10 times a second); may be NULL. */
	void (*progress)(void *ctx, uint64_t bytes_in, uint64_t bytes_total, uint64_t events);
	void *progress_ctx;
};

/*
 * For importers: whether a progress call is due, 100 ms after the last one
 * (*last, CLOCK_MONOTONIC), which is then moved on; `force`: due now.
 */
static inline int tft_ingest_progress_due(struct timespec *last, int force)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	if (!force && (int64_t)(now.tv_sec - last->tv_sec) * 1000000000LL +
			      (now.tv_nsec - last->tv_nsec) < 100000000LL)
		return 0;
	*last = now;
	return 1;
}

/*
 * Import one file into w. Several files may be imported into one writer.
 * A directory is a profile run: each *.xplane.pb in it (one per host).
 */
int tft_ingest_file(struct tft_writer *w, const char *path, const struct tft_ingest_opts *opts,
		    struct tft_error *err);

/*
 * Order a session's inputs for import: when every one is a RunMetadata or
 * StepStats file (one step each, as distributed TF and per-step tracing
 * save them) or a GraphDef, the RunMetadata files by their earliest node
 * start, so that each worker's steps continue its process whatever order a
 * shell glob gave (step_10 before step_2); the graphs keep their places.
 * Anything else stays as given.
 */
void tft_ingest_order(const char **paths, int n);

/* Import from memory (tests, fuzzing); `name` is used in error messages. */
int tft_ingest_mem(struct tft_writer *w, const char *name, const void *data, size_t len,
		   const struct tft_ingest_opts *opts, struct tft_error *err);

#endif /* TFT_COLLECT_INGEST_H */
