/* SPDX-License-Identifier: MIT */
/* Unit tests for core/strtab (interning) and core/status (error formatting). */
#include <stdio.h>
#include <string.h>

#include "core/model.h"
#include "core/status.h"
#include "core/strtab.h"
#include "tap.h"

static void test_intern(void)
{
	struct tft_strtab *t = tft_strtab_create();
	char buf[32];
	size_t len;

	ok(t != NULL, "create");
	is_int(tft_strtab_intern(t, "", 0), 0, "empty string is id 0");
	uint32_t a = tft_strtab_intern(t, "aten::addmm", 11);
	uint32_t b = tft_strtab_intern(t, "aten::mm", 8);
	ok(a != b && a != 0 && b != 0, "distinct ids");
	is_int(tft_strtab_intern(t, "aten::addmm", 11), a, "same string, same id");
	is_int(tft_strtab_find(t, "aten::mm", 8), b, "find existing");
	is_int(tft_strtab_find(t, "aten::bmm", 9), UINT32_MAX, "find missing");
	/* embedded NUL and prefix strings are different keys */
	uint32_t c = tft_strtab_intern(t, "ab\0cd", 5);
	uint32_t d = tft_strtab_intern(t, "ab", 2);
	ok(c != d, "embedded NUL distinguishes");
	const char *s = tft_strtab_get(t, c, &len);
	ok(len == 5 && memcmp(s, "ab\0cd", 5) == 0, "get returns exact bytes");
	ok(tft_strtab_get(t, 999999, NULL) == NULL, "get out of range is NULL");

	/* growth: 200k strings keep ids stable and pointers valid */
	const char *first = tft_strtab_get(t, a, NULL);
	int good = 1;
	for (int i = 0; i < 200000; i++) {
		int n = snprintf(buf, sizeof(buf), "op_%d", i);
		uint32_t id = tft_strtab_intern(t, buf, (size_t)n);
		if (id != tft_strtab_intern(t, buf, (size_t)n))
			good = 0;
	}
	ok(good, "200k interns stable");
	for (int i = 0; i < 200000; i += 997) {
		int n = snprintf(buf, sizeof(buf), "op_%d", i);
		uint32_t id = tft_strtab_find(t, buf, (size_t)n);
		const char *g = tft_strtab_get(t, id, &len);
		if (!g || len != (size_t)n || memcmp(g, buf, len))
			good = 0;
	}
	ok(good, "lookups after growth");
	ok(first == tft_strtab_get(t, a, NULL), "borrowed pointer survives growth");
	is_int(tft_strtab_count(t), 200000 + 5, "count");
	tft_strtab_destroy(t);
}

static void test_error(void)
{
	struct tft_error e;
	char buf[512];

	tft_error_clear(&e);
	is_int(tft_error_set(&e, TFT_EFORMAT, 42, "expected '%c'", ':'), TFT_EFORMAT, "set returns code");
	tft_error_set(&e, TFT_EIO, 7, "second error ignored");
	tft_error_set_file(&e, "trace.json");
	is_str(tft_error_format(&e, buf, sizeof(buf)), "trace.json: byte 42: expected ':'",
	       "one-line format with file and offset");
	tft_error_clear(&e);
	tft_error_set(&e, TFT_ENOMEM, -1, "%s", "");
	is_str(tft_error_format(&e, buf, sizeof(buf)), "out of memory", "falls back to strerror");
	is_str(tft_track_kind_name(TFT_TRACK_GPU_STREAM), "gpu_stream", "kind name");
	is_int(tft_track_kind_parse("comm"), TFT_TRACK_COMM, "kind parse");
	is_int(tft_track_kind_parse("nope"), 0, "kind parse unknown");
}

int main(void)
{
	test_intern();
	test_error();
	return done_testing();
}
