/* SPDX-License-Identifier: MIT */
/*
 * The web UI embedded in the binary. $(O)/gen/assets.c is GENERATED from
 * web/ by tools/pack_assets.c at build time (see the Makefile's web UI
 * block): web/index.html is served at "/", every other file web/REL at
 * "/assets/REL" (a leading "assets/" in REL is dropped). Nothing is read
 * from disk at run time. The table lives in the export layer: the server
 * serves it (server/routes.c) and the standalone HTML export inlines it
 * (export/export_html_page.c).
 */
#ifndef TFT_EXPORT_WEB_ASSETS_H
#define TFT_EXPORT_WEB_ASSETS_H

#include <stddef.h>

struct tft_asset {
	const char *path;         /* URL path; static storage */
	const char *content_type; /* e.g. "text/html; charset=utf-8"; static storage */
	const char *etag;         /* quoted strong validator, e.g. "\"9f3c...\""; static */
	const unsigned char *data; /* static: the file's bytes */
	size_t len;
	const unsigned char *gz;  /* static: gzip-encoded copy, NULL when not worth it */
	size_t gz_len;
	const char *csp;          /* HTML: Content-Security-Policy (inline scripts allowed
				   * by their SHA-256); static-boot.js: the static HTML
				   * export's policy (export_html.c); NULL for other files;
				   * static */
};

/* The table, sorted by path (byte order); tft_assets_count entries. */
extern const struct tft_asset tft_assets[];
extern const size_t tft_assets_count;

/* Exact lookup of path[0..len) (no decoding, no normalisation); NULL if absent. */
const struct tft_asset *tft_assets_find(const char *path, size_t len);

#endif /* TFT_EXPORT_WEB_ASSETS_H */
