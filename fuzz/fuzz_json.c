/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the streaming JSON reader alone. The first byte picks
 * the window size (so refills and replays happen at every boundary) and
 * how values are consumed; the second how objects are walked
 * (tft_json_next_key or tft_json_next_members) and refilled (in place, or
 * from windows filled here as the importer's reader thread does).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codec/json_read.h"
#include "codec/source.h"

static unsigned g_mode2; /* bit 0: next_members; bit 1: refill_from; bits 2-3: max - 1 */

/* Refill in place, or from a window filled here with some room in front. */
static int refill(struct tft_json_reader *r, struct tft_error *err)
{
	struct tft_json_window w;
	size_t head = (g_mode2 >> 4) & 7, block = 1 + ((g_mode2 >> 7) ? 31 : 3), n = 0, got;
	bool eof = false;
	int rc;

	if (!(g_mode2 & 2))
		return tft_json_refill(r, err);
	w.cap = head + block;
	w.buf = malloc(w.cap + TFT_JSON_PAD);
	if (!w.buf)
		return TFT_ENOMEM;
	memset(w.buf, 0xa5, w.cap + TFT_JSON_PAD); /* stale bytes must not matter */
	while (n < block) {
		if ((rc = tft_source_read(r->src, w.buf + head + n, block - n, &got, err))) {
			free(w.buf);
			return rc;
		}
		if (!got) {
			eof = true;
			break;
		}
		n += got;
	}
	rc = tft_json_refill_from(r, &w, head, n, eof, err);
	tft_json_window_free(&w);
	return rc;
}

/* Run one reader operation, refilling and replaying it on TFT_JSON_MORE. */
#define OP(r, err, call)                                                    \
	({                                                                  \
		int rc_;                                                    \
		for (;;) {                                                  \
			tft_json_mark(r);                                   \
			rc_ = (call);                                       \
			if (rc_ != TFT_JSON_MORE)                           \
				break;                                      \
			if ((rc_ = refill(r, err)) != 0)                    \
				break;                                      \
		}                                                           \
		rc_;                                                        \
	})

static void touch(const char *p, size_t n)
{
	volatile unsigned char sink = 0;

	for (size_t i = 0; i < n; i++)
		sink ^= (unsigned char)p[i];
	(void)sink;
}

static int walk(struct tft_json_reader *r, unsigned mode, struct tft_error *err)
{
	struct tft_json_value v;
	struct tft_json_str k, raw;
	uint32_t top = r->depth;
	int rc;

	if (mode & 1) {
		rc = OP(r, err, tft_json_skip_checked(r, &raw, err));
		if (rc == 0)
			touch(raw.ptr, raw.len);
		return rc;
	}
	if (mode & 2) {
		rc = OP(r, err, tft_json_skip(r, &raw, err));
		if (rc == 0)
			touch(raw.ptr, raw.len);
		return rc;
	}
	rc = OP(r, err, tft_json_read(r, &v, err));
	for (;;) {
		if (rc)
			return rc;
		if (v.type == TFT_JSON_STRING) {
			touch(v.ptr, v.len);
		} else if (v.type == TFT_JSON_NUMBER) {
			int64_t ns, i;
			double d;
			(void)tft_json_number_to_ns(v.ptr, v.len, &ns);
			(void)tft_json_number_to_i64(v.ptr, v.len, &i);
			(void)tft_json_number_to_double(v.ptr, v.len, &d);
		} else if ((v.type == TFT_JSON_OBJECT || v.type == TFT_JSON_ARRAY) && v.ptr) {
			touch(v.ptr, v.len); /* read_flat: verbatim text */
		}
		if (r->depth <= top)
			return 0;
		if (r->level[r->depth] & 1) {
			rc = OP(r, err, tft_json_next_item(r, (mode & 4) ? TFT_JSON_EOF_ENDS_ARRAY : 0, err));
		} else if (g_mode2 & 1) {
			struct tft_json_member ms[4];
			unsigned n = 0;
			bool ended = false;
			rc = OP(r, err, tft_json_next_members(r, ms, 1 + ((g_mode2 >> 2) & 3), &n, &ended, err));
			if (rc)
				return rc;
			for (unsigned i = 0; i < n; i++) {
				touch(ms[i].key.ptr, ms[i].key.len);
				if (ms[i].v.type == TFT_JSON_STRING || ms[i].v.type == TFT_JSON_NUMBER)
					touch(ms[i].v.ptr, ms[i].v.len);
				if (ms[i].v.type == TFT_JSON_NUMBER) {
					int64_t x;
					(void)tft_json_value_to_ns(&ms[i].v, &x);
					(void)tft_json_value_to_i64(&ms[i].v, &x);
				}
			}
			if (n && (ms[n - 1].v.type == TFT_JSON_OBJECT || ms[n - 1].v.type == TFT_JSON_ARRAY)) {
				rc = OP(r, err, tft_json_read(r, &v, err)); /* enter it */
				continue;
			}
			v.type = 0;
			v.ptr = NULL;
			continue;
		} else {
			rc = OP(r, err, tft_json_next_key(r, &k, err));
			if (rc == 1)
				touch(k.ptr, k.len);
		}
		if (rc < 0)
			return rc;
		if (rc == 1) {
			rc = (mode & 8) ? OP(r, err, tft_json_read_flat(r, &v, mode & 16, err))
					: OP(r, err, tft_json_read(r, &v, err));
		} else {
			v.type = 0;
			v.ptr = NULL;
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tft_error err;
	struct tft_json_reader r;
	struct tft_json_reader_opts opts;
	struct tft_source *src;
	unsigned mode;

	if (size < 2)
		return 0;
	mode = data[0];
	g_mode2 = data[1];
	data++;
	size--;
	memset(&opts, 0, sizeof(opts));
	opts.block_size = (mode & 0xe0) ? (size_t)(mode >> 5) * 3 : 4096;
	opts.max_buffer = 1 << 16;
	tft_error_clear(&err);
	src = tft_source_open_mem(data + 1, size - 1, "fuzz", &err);
	if (!src)
		return 0;
	if (tft_json_reader_init(&r, src, &opts, &err) == 0) {
		int rc = walk(&r, mode, &err);
		if (rc == 0)
			rc = OP(&r, &err, tft_json_finish(&r, &err));
		if (rc == 0 && (mode & 1)) {
			char *out = malloc(size);
			if (out) {
				(void)tft_json_compact((const char *)data + 1, size - 1, out);
				free(out);
			}
		}
	}
	tft_json_reader_fini(&r);
	tft_source_close(src);
	return 0;
}
