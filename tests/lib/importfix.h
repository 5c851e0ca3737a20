/* SPDX-License-Identifier: MIT */
/*
 * Test fixture: run an importer into a fresh session file under a test's
 * temporary directory and reopen it for reading. Header-only, like tap.h.
 */
#ifndef TFT_TEST_IMPORTFIX_H
#define TFT_TEST_IMPORTFIX_H

#include <stdio.h>
#include <unistd.h>

#include "store/session.h"
#include "store/writer.h"

/* Feeds the writer; returns 0 or a status with err filled. */
typedef int (*tft_test_ingest_fn)(struct tft_writer *w, void *ctx, struct tft_error *err);

/*
 * Import through fn into DIR/sN.tft (N counts calls) and open the result.
 * NULL on failure, with *rc the importer's (or writer's) status and err its
 * message; a failed import leaves no file.
 */
static inline struct tft_session *tft_test_import(const char *dir, tft_test_ingest_fn fn, void *ctx,
						  int *rc, struct tft_error *err)
{
	static int seq;
	char path[512];
	struct tft_writer *w;
	int r;

	snprintf(path, sizeof(path), "%s/s%d.tft", dir, seq++);
	tft_error_clear(err);
	w = tft_writer_open(path, NULL, err);
	if (!w) {
		*rc = err->code;
		return NULL;
	}
	r = fn(w, ctx, err);
	*rc = r;
	if (r) {
		tft_writer_abort(w);
		unlink(path);
		return NULL;
	}
	r = tft_writer_close(w, err);
	if (r) {
		*rc = r;
		return NULL;
	}
	return tft_session_open(path, err);
}

#endif /* TFT_TEST_IMPORTFIX_H */
