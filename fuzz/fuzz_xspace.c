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

struct input {
	const uint8_t *data;
	size_t size;
};

static int import(struct tft_writer *w, const struct tft_ingest_opts *o, struct tft_error *err, void *ctx)
{
	const struct input *in = ctx;

	return tft_xspace_ingest(w, "fuzz/host.xplane.pb", in->data, in->size, o, err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = {data, size};

	fuzz_same_imports(import, &in);
	return 0;
}
