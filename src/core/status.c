/* SPDX-License-Identifier: MIT */
/* Status strings and the tft_error helpers. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"

const char *tft_strerror(int status)
{
	switch (status) {
	case TFT_OK: return "success";
	case TFT_ENOMEM: return "out of memory";
	case TFT_EINVAL: return "invalid argument";
	case TFT_EIO: return "input/output error";
	case TFT_EFORMAT: return "malformed input";
	case TFT_EVERSION: return "unsupported format version";
	case TFT_EAGAIN: return "try again";
	case TFT_ENOSPC: return "no space left";
	case TFT_ENOTFOUND: return "not found";
	}
	return "unknown error";
}

void tft_error_clear(struct tft_error *err)
{
	if (!err)
		return;
	err->code = TFT_OK;
	err->offset = -1;
	err->file[0] = '\0';
	err->msg[0] = '\0';
}

int tft_error_set(struct tft_error *err, int code, int64_t offset, const char *fmt, ...)
{
	va_list ap;

	if (!err || err->code != TFT_OK)
		return code;
	err->code = code;
	err->offset = offset;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return code;
}

void tft_error_set_file(struct tft_error *err, const char *file)
{
	if (!err || err->file[0] || !file)
		return;
	snprintf(err->file, sizeof(err->file), "%s", file);
}

const char *tft_error_format(const struct tft_error *err, char *buf, size_t size)
{
	size_t n = 0;

	buf[0] = '\0';
	if (err->file[0])
		n += (size_t)snprintf(buf + n, size - n, "%s: ", err->file);
	if (n < size && err->offset >= 0)
		n += (size_t)snprintf(buf + n, size - n, "byte %lld: ", (long long)err->offset);
	if (n < size)
		snprintf(buf + n, size - n, "%s", err->msg[0] ? err->msg : tft_strerror(err->code));
	return buf;
}

void tft_assert_fail(const char *expr, const char *file, int line, const char *func)
{
	fprintf(stderr, "tftracer: assertion failed: %s (%s:%d in %s)\n", expr, file, line, func);
	abort();
}
