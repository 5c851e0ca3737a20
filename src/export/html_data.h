/* SPDX-License-Identifier: MIT */
/*
 * A static HTML export's DATA (docs/http-api.md "Static HTML export") read
 * back as a session: the inlined strings, track list, events, flows and steps
 * answered through tft_session_ops, so that the code that answers the
 * server's queries (viewport, slice, search, statistics) answers the
 * exported page's over the same session API. Level 0 only (DATA holds raw
 * events, no summary levels, no chunk statistics). Meta keys: format,
 * producer, graph_nodes (the rows of DATA's "graph", which
 * tft_session_graph_lookup finds by name), static_start_ns (session.start_ns,
 * the origin of DATA's times), static_truncated and static_graph_truncated
 * (DATA's "truncated" and "graph_truncated").
 * Everything is read at open and held in memory; the document is not kept.
 */
#ifndef TFT_EXPORT_HTML_DATA_H
#define TFT_EXPORT_HTML_DATA_H

#include <stddef.h>

#include "core/status.h"
#include "store/session.h"

/*
 * Open DATA: json[0 .. len) (borrowed during the call only) must be followed
 * by a '\0' and TFT_JSON_PAD readable bytes (codec/json_read.h). `name`
 * (may be NULL) is the session's path and names the input in errors. NULL on
 * error: err says what was expected, at which byte offset of the document.
 */
struct tft_session *tft_html_data_open(const char *json, size_t len, const char *name,
				       struct tft_error *err);

/*
 * Find DATA in an exported page: the text of its
 * <script type="application/json" id="tft-data"> element, as [*off, *off + *len)
 * of html. 0, or TFT_EFORMAT (not a tftracer static export).
 */
int tft_html_data_find(const char *html, size_t len, size_t *off, size_t *dlen,
		       struct tft_error *err);

#endif /* TFT_EXPORT_HTML_DATA_H */
