/* SPDX-License-Identifier: MIT */
/*
 * Standalone HTML export: the web UI with a session's data inlined, one file
 * that works from file:// with no server (docs/http-api.md, "Static HTML
 * export"; tftracer export -f html, Timeline.visualize in Python).
 */
#ifndef TFT_EXPORT_EXPORT_HTML_H
#define TFT_EXPORT_EXPORT_HTML_H

#include <stddef.h>
#include <stdint.h>

#include "codec/json_write.h"
#include "core/status.h"
#include "store/session.h"

/* One web UI file (export_html_page.c takes them from the embedded table, web_assets.h). */
struct tft_html_asset {
	const char *name;          /* borrowed: "index.html", "style.css", "app.js" ... */
	const unsigned char *data; /* borrowed */
	size_t len;
	const char *csp;           /* borrowed; static-boot.js: the page's Content-Security-Policy
				    * (a <meta> at the top of its <head>), else NULL */
};

struct tft_html_opts {
	const struct tft_html_asset *assets; /* borrowed: the web UI's files */
	size_t nassets;
	/* Events inlined at most; 0 = TFT_HTML_MAX_EVENTS. Past the cap, tracks are taken
	 * in id order and each track's events in time order; the rest are counted in
	 * DATA's "truncated" (and tft_html_counts.truncated). */
	uint64_t max_events;
};

#define TFT_HTML_MAX_EVENTS 2000000u
#define TFT_HTML_MAX_GRAPH_NODES 200000u /* graph_nodes rows inlined at most */

struct tft_html_counts {
	uint64_t events;    /* slices, instants and counter samples inlined */
	uint64_t truncated; /* events left out by the cap */
	uint64_t flows;
};

/*
 * Write the page to w (a raw byte stream: the writer's JSON helpers are used
 * only for the inlined data). Fails with TFT_EFORMAT when index.html lacks
 * the <!--tft:assets--> ... <!--/tft:assets--> block, or a web file holds
 * "</script" or "<!--" (it would break the page). Memory: one track's
 * events at a time, whatever the session size.
 */
int tft_export_html(struct tft_session *s, struct tft_json_writer *w,
		    const struct tft_html_opts *o, struct tft_html_counts *n, struct tft_error *err);

/*
 * The page of `tftracer export -f html` and Timeline.visualize: tft_export_html
 * with the web UI embedded in the binary (web_assets.h), at most max_events
 * events inlined (0 = TFT_HTML_MAX_EVENTS). export_html_page.c.
 */
int tft_export_html_page(struct tft_session *s, struct tft_json_writer *w, uint64_t max_events,
			 struct tft_html_counts *n, struct tft_error *err);

#endif /* TFT_EXPORT_EXPORT_HTML_H */
