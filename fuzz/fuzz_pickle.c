/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the safe pickle reader and the pickle importer (inputs
 * whose first byte & 3 != 3, e.g. every real pickle: 0x80), and the
 * tf-timeline exporter's label and "output" parsers (first byte & 3 == 3:
 * the rest is "<timeline_label>\n<output JSON>", put on two events of a
 * small session that is then exported and analysed for peak memory).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codec/json_write.h"
#include "codec/pickle.h"
#include "collect/ingest_pickle.h"
#include "export/export_tftimeline.h"
#include "store/session.h"
#include "store/writer.h"

static int on_peak(void *ctx, const struct tft_tftimeline_peak *p)
{
	(void)ctx;
	for (uint32_t i = 0; i < p->ntensors; i++)
		if (!p->tensors[i])
			abort();
	return 0;
}

static volatile uint8_t sink;

/* Walk what an importer looks at, to catch bad pointers in the value tree. */
static void walk(const struct tft_pickle_value *v, int depth)
{
	if (!v || depth > 200)
		return;
	switch (v->type) {
	case TFT_PICKLE_TUPLE:
	case TFT_PICKLE_LIST:
	case TFT_PICKLE_SET:
		for (uint32_t i = 0; i < v->n; i++)
			walk(v->u.items[i], depth + 1);
		break;
	case TFT_PICKLE_DICT:
		for (uint32_t i = 0; i < 2 * v->n; i++)
			walk(v->u.items[i], depth + 1);
		tft_pickle_dict_get(v, "serialized");
		break;
	case TFT_PICKLE_OBJECT:
		walk(v->u.obj.args, depth + 1);
		walk(v->u.obj.state, depth + 1);
		tft_pickle_attr(v, "_run_profile");
		break;
	case TFT_PICKLE_STR:
	case TFT_PICKLE_BYTES:
	case TFT_PICKLE_BIGINT:
		if (v->u.s.len)
			sink ^= v->u.s.p[0] ^ v->u.s.p[v->u.s.len - 1];
		break;
	default:
		break;
	}
}

static void fuzz_pickle(const uint8_t *data, size_t size)
{
	struct tft_pickle_opts small = { 4096, 40 };
	struct tft_error err;
	struct tft_writer *w;
	struct tft_pickle *pk;

	tft_error_clear(&err);
	pk = tft_pickle_parse(data, size, &small, &err);
	if (!pk)
		return; /* the importer would stop at the same error; skip the costly writer */
	walk(tft_pickle_root(pk), 0);
	tft_pickle_destroy(pk);
	tft_error_clear(&err);
	w = tft_writer_open(":memory:", NULL, &err);
	if (!w)
		return;
	if (tft_ingest_pickle_mem(w, "fuzz.pickle", data, size, NULL, &err) == 0)
		tft_writer_close(w, &err);
	else
		tft_writer_abort(w);
}

static void fuzz_export(const uint8_t *data, size_t size)
{
	char path[64];
	const uint8_t *nl = memchr(data, '\n', size);
	size_t llen = nl ? (size_t)(nl - data) : size;
	struct tft_error err;
	struct tft_writer *w;
	struct tft_session *s;
	struct tft_process p = { 0 };
	struct tft_track tr = { 0 };
	struct tft_json_writer jw;
	struct tft_tftimeline_opts o = { true, true };
	uint32_t track, k_label, k_output, k_start, k_end, label, output;

	snprintf(path, sizeof(path), "/tmp/fuzz-tftimeline-%d.tft", (int)getpid());
	unlink(path);
	tft_error_clear(&err);
	w = tft_writer_open(path, NULL, &err);
	if (!w)
		return;
	p.name = tft_writer_intern_cstr(w, "p");
	tr.process = tft_writer_add_process(w, &p);
	tr.kind = TFT_TRACK_DEVICE;
	tr.name = tft_writer_intern(w, (const char *)data, llen > 64 ? 64 : llen); /* device name */
	track = tft_writer_add_track(w, &tr);
	k_label = tft_writer_intern_cstr(w, "timeline_label");
	k_output = tft_writer_intern_cstr(w, "output");
	k_start = tft_writer_intern_cstr(w, "all_start_micros");
	k_end = tft_writer_intern_cstr(w, "all_end_rel_micros");
	label = tft_writer_intern(w, (const char *)data, llen);
	output = nl ? tft_writer_intern(w, (const char *)nl + 1, size - llen - 1)
		    : tft_writer_intern_cstr(w, "[]");
	for (int i = 0; i < 2; i++) {
		struct tft_arg a[4] = {
			{ k_label, TFT_ARG_STR, { .str = label } },
			{ k_output, TFT_ARG_JSON, { .str = output } },
			{ k_start, TFT_ARG_INT, { .i = 10 + i * 3 } },
			{ k_end, TFT_ARG_INT, { .i = 5 } },
		};
		struct tft_event ev = { 0 };

		ev.kind = TFT_EV_SLICE;
		ev.ts_ns = (10 + i * 3) * 1000;
		ev.dur_ns = 5000;
		ev.track = track;
		ev.name = i ? label : tft_writer_intern_cstr(w, "a");
		ev.count = 1;
		ev.nargs = 4;
		ev.args = a;
		tft_writer_append(w, &ev);
	}
	if (tft_writer_close(w, &err) == 0 && (s = tft_session_open(path, &err)) != NULL) {
		tft_json_write_init_mem(&jw);
		tft_export_tftimeline(s, &jw, &o, NULL, &err);
		tft_json_write_fini(&jw);
		tft_tftimeline_peak_memory(s, on_peak, NULL, &err);
		tft_session_close(s);
	}
	unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size && (data[0] & 3) == 3)
		fuzz_export(data + 1, size - 1);
	else
		fuzz_pickle(data, size);
	return 0;
}
