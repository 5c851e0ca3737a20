/* SPDX-License-Identifier: MIT */
/*
 * The standalone HTML page from the web UI embedded in the binary
 * (export_html.h, tft_export_html_page): the embedded table (web_assets.h)
 * as export_html.c's file list. `tftracer export -f html` and the Python
 * module's Timeline.visualize call it; no server is involved.
 */
#include <stdlib.h>
#include <string.h>

#include "export/export_html.h"
#include "export/web_assets.h"

int tft_export_html_page(struct tft_session *s, struct tft_json_writer *w, uint64_t max_events,
			 struct tft_html_counts *n, struct tft_error *err)
{
	struct tft_html_asset *a = calloc(tft_assets_count ? tft_assets_count : 1, sizeof(*a));
	struct tft_html_opts o = { .max_events = max_events };
	size_t na = 0;
	int rc;

	if (!a)
		return tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
	/* "/" is web/index.html, "/assets/REL" is web/REL. */
	for (size_t i = 0; i < tft_assets_count; i++) {
		const struct tft_asset *x = &tft_assets[i];
		if (strcmp(x->path, "/") == 0)
			a[na].name = "index.html";
		else if (strncmp(x->path, "/assets/", 8) == 0)
			a[na].name = x->path + 8;
		else
			continue;
		a[na].data = x->data;
		a[na].len = x->len;
		a[na].csp = strcmp(a[na].name, "static-boot.js") == 0 ? x->csp : NULL;
		na++;
	}
	o.assets = a;
	o.nassets = na;
	rc = tft_export_html(s, w, &o, n, err);
	free(a);
	return rc;
}
