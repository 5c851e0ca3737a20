/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the XSpace importer into an in-memory session, on one
 * thread and on two (parallel lines; the fuzz build takes that path for
 * inputs of any size), which must accept or refuse each input alike, with
 * the same error at the same offset, and when they accept it store the same
 * session (fuzz_same.h; files in /dev/shm).
 */
#include <stddef.h>
#include <stdint.h>

#include "collect/ingest_xspace.h"
#include "store/writer.h"
#include "fuzz_same.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tft_ingest_opts o = {.threads = 2};
	const char *p1 = fuzz_same_path(0), *p2 = fuzz_same_path(1);
	struct tft_error err, err2;
	struct tft_writer *w;
	int r, r2, c1 = -1, c2 = -1;

	tft_error_clear(&err);
	w = tft_writer_open(p1, NULL, &err);
	if (!w)
		return 0;
	r = tft_xspace_ingest(w, "fuzz/host.xplane.pb", data, size, NULL, &err);
	if (r == 0)
		c1 = tft_writer_close(w, &err);
	else
		tft_writer_abort(w);

	tft_error_clear(&err2);
	w = tft_writer_open(p2, NULL, &err2);
	if (w) {
		r2 = tft_xspace_ingest(w, "fuzz/host.xplane.pb", data, size, &o, &err2);
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
	return 0;
}
