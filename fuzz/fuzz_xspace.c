/* SPDX-License-Identifier: MIT */
/* libFuzzer target: the XSpace importer into an in-memory session. */
#include <stddef.h>
#include <stdint.h>

#include "collect/ingest_xspace.h"
#include "store/writer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tft_error err;
	struct tft_writer *w;

	tft_error_clear(&err);
	w = tft_writer_open(":memory:", NULL, &err);
	if (!w)
		return 0;
	if (tft_xspace_ingest(w, "fuzz/host.xplane.pb", data, size, NULL, &err) == 0)
		tft_writer_close(w, &err);
	else
		tft_writer_abort(w);
	return 0;
}
