/* SPDX-License-Identifier: MIT */
/*
 * Fuzz helper: an importer run on one thread and on several must agree on
 * each input: both accept it, or both refuse it with the same status,
 * message and byte offset (out of memory may strike either alone); and
 * when both accept it, the two sessions must hold the same thing (strings
 * compared by their text: ids follow the order the threads interned them;
 * each text once in each session, though the serial import may keep a text
 * no event uses, such as the name of a line without events).
 * Aborts, printing both, so that libFuzzer keeps the input.
 */
#ifndef TFT_FUZZ_SAME_H
#define TFT_FUZZ_SAME_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/status.h"
#include "collect/ingest.h"
#include "store/session.h"
#include "store/writer.h"
#include "../tests/lib/session_digest.h"

static inline void fuzz_same_outcome(int r, const struct tft_error *e, int r2,
				     const struct tft_error *e2)
{
	if (r2 == r && (!r || r == TFT_ENOMEM ||
			(e->offset == e2->offset && strcmp(e->msg, e2->msg) == 0)))
		return;
	fprintf(stderr, "serial %d at %lld: %s\nparallel %d at %lld: %s\n", r, (long long)e->offset,
		e->msg, r2, (long long)e2->offset, e2->msg);
	abort();
}

/* The session file of run k (0 serial, 1 parallel) of this process (tmpfs when there is one). */
static inline const char *fuzz_same_path(int k)
{
	static char path[2][96];

	if (!path[k][0])
		snprintf(path[k], sizeof(path[k]), "%s/tft-fuzz-%d-%d.tft",
			 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp", (int)getpid(), k);
	unlink(path[k]);
	return path[k];
}

struct fuzz_text {
	const char *p;
	size_t n;
};

static inline int fuzz_text_cmp(const void *a, const void *b)
{
	const struct fuzz_text *x = a, *y = b;
	int c = memcmp(x->p, y->p, x->n < y->n ? x->n : y->n);

	return c ? c : (x->n > y->n) - (x->n < y->n);
}

/* Each text once: threads interning the same text must get one id. */
static inline void fuzz_strings_unique(const struct tft_session *s, const char *path)
{
	uint32_t n = tft_session_string_count(s), k = 0;
	struct fuzz_text *t = malloc((size_t)n * sizeof(*t) + 1);

	if (!t)
		return;
	for (uint32_t i = 0; i < n; i++) {
		t[k].p = tft_session_str(s, i, &t[k].n);
		k += t[k].p != NULL;
	}
	qsort(t, k, sizeof(*t), fuzz_text_cmp);
	for (uint32_t i = 1; i < k; i++) {
		if (fuzz_text_cmp(&t[i - 1], &t[i]) == 0) {
			fprintf(stderr, "%s: the text \"%.*s\" has two string ids\n", path,
				(int)t[i].n, t[i].p);
			abort();
		}
	}
	free(t);
}

/* The digest (tests/lib/session_digest.h) of the session at path, each text checked once; 0 if it does not open. */
static inline uint64_t fuzz_session_digest(const char *path, uint64_t *nev)
{
	struct tft_error err;
	struct tft_session *s = tft_session_open(path, &err);
	uint64_t h;

	*nev = 0;
	if (!s)
		return 0;
	fuzz_strings_unique(s, path);
	h = session_digest(s, 0, nev);
	tft_session_close(s);
	return h;
}

/* Both runs accepted the input: their sessions must be the same (see above). */
static inline void fuzz_same_sessions(const char *serial, const char *parallel)
{
	uint64_t n1, n2, h1 = fuzz_session_digest(serial, &n1), h2 = fuzz_session_digest(parallel, &n2);

	if (h1 && h1 == h2 && n1 == n2)
		return;
	fprintf(stderr, "the serial and parallel sessions differ: %llu and %llu events, digests %016llx %016llx\n",
		(unsigned long long)n1, (unsigned long long)n2, (unsigned long long)h1,
		(unsigned long long)h2);
	abort();
}

/* One import into w with opts o (NULL: serial); the importer's status. */
typedef int (*fuzz_import_fn)(struct tft_writer *w, const struct tft_ingest_opts *o, struct tft_error *err,
			      void *ctx);

/*
 * Import serially and on two threads, each into a session file of its own,
 * and require the same outcome and, when both succeed, the same session.
 */
static inline void fuzz_same_imports(fuzz_import_fn import, void *ctx)
{
	struct tft_ingest_opts o = {.threads = 2};
	const char *p1 = fuzz_same_path(0), *p2 = fuzz_same_path(1);
	struct tft_error err, err2;
	struct tft_writer *w;
	int r, r2, c1 = -1, c2 = -1;

	tft_error_clear(&err);
	w = tft_writer_open(p1, NULL, &err);
	if (!w)
		return;
	r = import(w, NULL, &err, ctx);
	if (r == 0)
		c1 = tft_writer_close(w, &err);
	else
		tft_writer_abort(w);
	tft_error_clear(&err2);
	w = tft_writer_open(p2, NULL, &err2);
	if (w) {
		r2 = import(w, &o, &err2, ctx);
		if (r2 == 0)
			c2 = tft_writer_close(w, &err2);
		else
			tft_writer_abort(w);
		fuzz_same_outcome(r, &err, r2, &err2);
		if (c1 == 0 && c2 == 0)
			fuzz_same_sessions(p1, p2);
	}
	unlink(p1);
	unlink(p2);
}

#endif /* TFT_FUZZ_SAME_H */
