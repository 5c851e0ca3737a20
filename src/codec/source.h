/* SPDX-License-Identifier: MIT */
/*
 * Byte sources: a file, a gzip file (detected by its magic bytes, decoded
 * with zlib) or a memory block, read as one decompressed byte stream in
 * large blocks. The source counts the decompressed bytes handed out, so
 * parsers can report byte offsets into the decompressed stream.
 */
#ifndef TFT_CODEC_SOURCE_H
#define TFT_CODEC_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

/* Largest look-ahead tft_source_peek() can return. */
#define TFT_SOURCE_PEEK_MAX (64u * 1024u)

struct tft_source;

/*
 * Open `path` for reading. Gzip input (1f 8b) is decompressed transparently,
 * including concatenated gzip members. Returns NULL and fills err (TFT_EIO,
 * TFT_ENOTFOUND, TFT_ENOMEM) on failure; err->file is set to path.
 */
struct tft_source *tft_source_open_file(const char *path, struct tft_error *err);

/*
 * Read from memory. `data` is borrowed and must outlive the source; `name`
 * (may be NULL) is only used in error messages. Gzip is detected as above.
 */
struct tft_source *tft_source_open_mem(const void *data, size_t len, const char *name,
				       struct tft_error *err);

/* Close and free (NULL is a no-op). */
void tft_source_close(struct tft_source *s);

/*
 * Copy up to `cap` decompressed bytes into buf. *got = 0 means end of
 * stream. Returns 0, TFT_EIO (read error) or TFT_EFORMAT (corrupt or
 * truncated gzip data; err->offset = decompressed offset where it failed).
 */
int tft_source_read(struct tft_source *s, void *buf, size_t cap, size_t *got,
		    struct tft_error *err);

/*
 * Look at the next min(want, TFT_SOURCE_PEEK_MAX) bytes without consuming
 * them (fewer at end of stream). *data is borrowed until the next call on
 * s. Returns 0 or the errors of tft_source_read().
 */
int tft_source_peek(struct tft_source *s, size_t want, const void **data, size_t *len,
		    struct tft_error *err);

/*
 * A whole plain file mapped read-only, for parsers that want it in place
 * (no read() copies): data[0 .. len) is the file, and the TFT_SOURCE_MAP_PAD
 * bytes after it read as zeros (a '\0' sentinel at data[len], room for
 * vector loads).
 */
#define TFT_SOURCE_MAP_PAD 4096u
struct tft_source_map {
	const char *data;  /* borrowed view of base */
	size_t len;
	void *base;        /* owned mapping, map_len bytes */
	size_t map_len;
	size_t released;   /* bytes at the start given back (tft_source_map_release) */
};

/*
 * Map the input of s when it is a plain file (not gzip) of which nothing
 * was read yet (a peek is fine); s then counts it as read. Returns 1 with
 * *m filled, 0 when the input cannot be mapped (s untouched), or TFT_EIO.
 */
int tft_source_map(struct tft_source *s, struct tft_source_map *m, struct tft_error *err);

/*
 * The caller is done with data[0 .. upto): its pages leave the process's
 * resident set (they are read again from the file if touched). Cheap to
 * call often: acts once a few MiB have accumulated.
 */
void tft_source_map_release(struct tft_source_map *m, size_t upto);

void tft_source_unmap(struct tft_source_map *m);

/* Decompressed bytes consumed through tft_source_read() so far. */
uint64_t tft_source_offset(const struct tft_source *s);
/* Raw (possibly compressed) input bytes consumed so far. */
uint64_t tft_source_raw_offset(const struct tft_source *s);
/* Raw input size in bytes (file size), 0 when unknown. */
uint64_t tft_source_raw_size(const struct tft_source *s);
/* True when the input is gzip-compressed. */
bool tft_source_is_gzip(const struct tft_source *s);
/* The name given at open ("" if none); borrowed. */
const char *tft_source_name(const struct tft_source *s);

#endif /* TFT_CODEC_SOURCE_H */
