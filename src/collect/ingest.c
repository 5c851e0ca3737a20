/* SPDX-License-Identifier: MIT */
/*
 * Format detection and dispatch: peek at the first bytes of the
 * (decompressed) input and hand the source to the first importer whose
 * probe accepts them. New formats add one row to `formats`.
 */
#include <string.h>

#include "codec/source.h"
#include "collect/ingest.h"
#include "collect/ingest_chrome.h"

/* Bytes the probes get to look at (the source look-ahead). */
#define PROBE_BYTES 4096u

struct ingest_format {
	const char *name;
	/* 1 if head[0..len) looks like this format; at_eof: len is the whole input */
	int (*probe)(const unsigned char *head, size_t len, bool at_eof);
	int (*import)(struct tft_writer *w, struct tft_source *src,
		      const struct tft_ingest_opts *opts, struct tft_error *err);
};

static int probe_json(const unsigned char *head, size_t len, bool at_eof)
{
	size_t i = 0;

	if (len >= 3 && memcmp(head, "\xef\xbb\xbf", 3) == 0)
		i = 3; /* UTF-8 byte order mark */
	for (; i < len; i++) {
		unsigned char ch = head[i];
		if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r')
			continue;
		return ch == '{' || ch == '[';
	}
	/* only whitespace so far: JSON if more follows (the parser decides) */
	return !at_eof;
}

static int import_chrome(struct tft_writer *w, struct tft_source *src,
			 const struct tft_ingest_opts *opts, struct tft_error *err)
{
	return tft_ingest_chrome_source(w, src, opts, NULL, err);
}

static const struct ingest_format formats[] = {
	{ "chrome", probe_json, import_chrome },
};

static int ingest_source(struct tft_writer *w, struct tft_source *src,
			 const struct tft_ingest_opts *opts, struct tft_error *err)
{
	const void *head;
	size_t len, i;
	int rc = tft_source_peek(src, PROBE_BYTES, &head, &len, err);

	if (rc)
		return rc;
	for (i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		if (formats[i].probe(head, len, len < PROBE_BYTES))
			return formats[i].import(w, src, opts, err);
	/* point at the first significant byte */
	for (i = 0; i < len; i++) {
		unsigned char ch = ((const unsigned char *)head)[i];
		if (ch != ' ' && ch != '\t' && ch != '\n' && ch != '\r')
			break;
	}
	return tft_error_set(err, TFT_EFORMAT, (int64_t)i,
			     "unrecognised format: expected a JSON trace ('{' or '[')");
}

int tft_ingest_file(struct tft_writer *w, const char *path, const struct tft_ingest_opts *opts,
		    struct tft_error *err)
{
	struct tft_source *src;
	int rc;

	tft_error_clear(err); /* err describes this call only */
	src = tft_source_open_file(path, err);
	if (!src)
		return err && err->code ? err->code : TFT_EIO;
	rc = ingest_source(w, src, opts, err);
	if (rc)
		tft_error_set_file(err, path);
	tft_source_close(src);
	return rc;
}

int tft_ingest_mem(struct tft_writer *w, const char *name, const void *data, size_t len,
		   const struct tft_ingest_opts *opts, struct tft_error *err)
{
	struct tft_source *src;
	int rc;

	tft_error_clear(err);
	src = tft_source_open_mem(data, len, name, err);
	if (!src)
		return err && err->code ? err->code : TFT_ENOMEM;
	rc = ingest_source(w, src, opts, err);
	if (rc)
		tft_error_set_file(err, name);
	tft_source_close(src);
	return rc;
}
