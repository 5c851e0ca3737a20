/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the Chrome/Kineto importer, tft_ingest_mem() into a
 * writer on ":memory:"; small inputs are imported a second time through a
 * tiny JSON window to exercise the refill/replay paths.
 */
#include <stddef.h>
#include <stdint.h>

#include "collect/ingest.h"
#include "collect/ingest_chrome.h"
#include "store/writer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tft_error err;
	struct tft_ingest_opts opts = { .mem_budget = 1 << 20 };
	struct tft_writer *w;

	tft_error_clear(&err);
	w = tft_writer_open(":memory:", NULL, &err);
	if (!w)
		return 0;
	if (tft_ingest_mem(w, "fuzz", data, size, &opts, &err) == 0)
		tft_writer_close(w, &err);
	else
		tft_writer_abort(w);

	if (size > 0 && size < 4096) {
		struct tft_json_reader_opts ro = { .block_size = 1 + data[0] % 61 };
		struct tft_source *src;
		tft_error_clear(&err);
		w = tft_writer_open(":memory:", NULL, &err);
		if (!w)
			return 0;
		src = tft_source_open_mem(data, size, "fuzz", &err);
		if (src && tft_ingest_chrome_source(w, src, &opts, &ro, &err) == 0)
			tft_writer_close(w, &err);
		else
			tft_writer_abort(w);
		tft_source_close(src);
	}
	return 0;
}
