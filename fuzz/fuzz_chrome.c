/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the Chrome/Kineto importer, tft_ingest_mem() into a
 * writer on ":memory:"; small inputs are imported a second time through a
 * tiny JSON window (one or two threads) to exercise the refill/replay and
 * batching paths, and both runs must agree.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "collect/ingest.h"
#include "collect/ingest_chrome.h"
#include "store/writer.h"

/*
 * Opening a writer runs the session schema through SQLite, whose many small
 * allocations dominate an input's cost under ASan (stack capture and
 * quarantine per malloc: ~45 inputs/s). SQLite is not what is fuzzed here,
 * so its heap bypasses the sanitizer: glibc's own entry points, with a
 * size header for xSize. Everything tftracer allocates is still checked.
 */
extern void *__libc_malloc(size_t n);
extern void *__libc_realloc(void *p, size_t n);
extern void __libc_free(void *p);

#define HDR 16 /* keeps SQLite's 8-byte alignment */

static void *sq_malloc(int n)
{
	unsigned char *p = __libc_malloc((size_t)n + HDR);

	if (!p)
		return NULL;
	memcpy(p, &n, sizeof(n));
	return p + HDR;
}

static void sq_free(void *p)
{
	if (p)
		__libc_free((unsigned char *)p - HDR);
}

static void *sq_realloc(void *p, int n)
{
	unsigned char *q = __libc_realloc((unsigned char *)p - HDR, (size_t)n + HDR);

	if (!q)
		return NULL;
	memcpy(q, &n, sizeof(n));
	return q + HDR;
}

static int sq_size(void *p)
{
	int n;

	memcpy(&n, (unsigned char *)p - HDR, sizeof(n));
	return n;
}

static int sq_roundup(int n)
{
	return (n + 7) & ~7;
}

static int sq_init(void *ctx)
{
	(void)ctx;
	return SQLITE_OK;
}

static void sq_shutdown(void *ctx)
{
	(void)ctx;
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const sqlite3_mem_methods mem = { sq_malloc, sq_free,  sq_realloc, sq_size,
						 sq_roundup, sq_init, sq_shutdown, NULL };

	(void)argc;
	(void)argv;
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	sqlite3_config(SQLITE_CONFIG_MALLOC, &mem);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tft_error err, err2;
	struct tft_ingest_opts opts = { .mem_budget = 1 << 20 };
	struct tft_writer *w;
	int rc;

	tft_error_clear(&err);
	w = tft_writer_open(":memory:", NULL, &err);
	if (!w)
		return 0;
	rc = tft_ingest_mem(w, "fuzz", data, size, &opts, &err);

	if (size > 0 && size < 4096) {
		struct tft_json_reader_opts ro = { .block_size = 1 + data[0] % 61 };
		struct tft_chrome_opts co = { .reader = &ro, .threads = 1 + (data[0] >> 7) };
		struct tft_source *src;
		int rc2;

		/* a successful import leaves the writer usable for another one */
		if (rc != 0) {
			tft_writer_abort(w);
			tft_error_clear(&err2);
			w = tft_writer_open(":memory:", NULL, &err2);
			if (!w)
				return 0;
		}
		tft_error_clear(&err2);
		src = tft_source_open_mem(data, size, "fuzz", &err2);
		if (!src) {
			tft_writer_abort(w);
			return 0;
		}
		/* JSON only: the dispatch sent anything else elsewhere */
		const void *head;
		size_t hl;
		if (tft_source_peek(src, 1, &head, &hl, &err2) == 0 && hl &&
		    (*(const char *)head == '{' || *(const char *)head == '[')) {
			rc2 = tft_ingest_chrome_source(w, src, &opts, &co, &err2);
			/* the window size and the threads change nothing in the outcome */
			if ((rc == 0) != (rc2 == 0) ||
			    (rc && rc2 && (rc != rc2 || err.offset != err2.offset)))
				abort();
		} else {
			rc2 = rc;
		}
		tft_source_close(src);
		rc = rc2;
	}
	if (rc == 0)
		tft_writer_close(w, &err);
	else
		tft_writer_abort(w);
	return 0;
}
