/* SPDX-License-Identifier: MIT */
/*
 * tftracer public header: version and status codes shared by every layer.
 * The in-process runtime API (steps, zones, counters) joins this header with
 * the live-tracing work; today it holds what the library and CLI share.
 */
#ifndef TFTRACER_TFTRACER_H
#define TFTRACER_TFTRACER_H

#ifdef __cplusplus
extern "C" {
#endif

#define TFT_VERSION_MAJOR 0
#define TFT_VERSION_MINOR 1
#define TFT_VERSION_PATCH 0
#define TFT_VERSION_STRING "0.1.0"

#if defined(__GNUC__)
#define TFT_API __attribute__((visibility("default")))
#else
#define TFT_API
#endif

/* Every fallible library call returns 0 or one of these (negative). */
enum tft_status {
	TFT_OK = 0,
	TFT_ENOMEM = -1,    /* allocation failed */
	TFT_EINVAL = -2,    /* bad argument or usage */
	TFT_EIO = -3,       /* read/write/database failure */
	TFT_EFORMAT = -4,   /* malformed input */
	TFT_EVERSION = -5,  /* file written by an unknown format version */
	TFT_EAGAIN = -6,    /* would block; try later */
	TFT_ENOSPC = -7,    /* buffer or disk full */
	TFT_ENOTFOUND = -8, /* no such file, track, key ... */
};

/* A static, human-readable string for a tft_status; never NULL. */
TFT_API const char *tft_strerror(int status);

#ifdef __cplusplus
}
#endif
#endif /* TFTRACER_TFTRACER_H */
