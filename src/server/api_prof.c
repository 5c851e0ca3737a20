/* SPDX-License-Identifier: MIT */
/*
 * GET /api/prof?view=scope|graph|op|code&<tfprof options>: a tftracer prof
 * view as `tftracer prof SESSION VIEW --json` writes it ({"view", "step",
 * "steps", "select", "root": NODE}, docs/cmd-prof.md). Each tfprof option
 * is a query parameter of its name without the dash (select=params,micros,
 * max_depth=4, account_type_regexes=_trainable_variables ...); -output is
 * not one (the server writes no files). analyze/prof*.c computes,
 * export/export_prof.c writes; this file parses the query.
 */
#include <stdlib.h>
#include <string.h>

#include "analyze/prof.h"
#include "export/export_prof.h"
#include "server/routes.h"

int tft_api_prof(struct tft_http_req *r)
{
	struct tft_prof_opts opts;
	struct tft_prof_result *res = NULL;
	struct tft_prof *prof = NULL;
	struct tft_pool_slot *slot;
	struct tft_json_writer w;
	struct tft_error err;
	size_t len;
	const char *vs = tft_query_get(&r->query, "view", &len);
	char buf[1024];
	int view = TFT_PROF_SCOPE, rc;

	if (vs) {
		snprintf(buf, sizeof(buf), "%.*s", (int)(len < sizeof(buf) ? len : sizeof(buf) - 1), vs);
		view = tft_prof_view_parse(buf);
		if (view < 0)
			return tft_http_reply_error(r, 400, "view must be scope, graph, op or code");
	}
	if (tft_query_get(&r->query, "output", NULL))
		return tft_http_reply_error(r, 400, "output is not an option of /api/prof (the server writes no files)");
	tft_prof_opts_init(&opts);
	for (int i = 0; tft_prof_opt_names[i]; i++) {
		const char *name = tft_prof_opt_names[i], *v;
		if (strcmp(name, "output") == 0)
			continue;
		v = tft_query_get(&r->query, name, &len);
		if (!v)
			continue;
		if (len >= sizeof(buf)) {
			tft_prof_opts_fini(&opts);
			return tft_http_reply_error(r, 400, "an option value is too long");
		}
		memcpy(buf, v, len);
		buf[len] = '\0';
		tft_error_clear(&err);
		/* account_displayed_op_only= alone means true, as -account_displayed_op_only alone */
		if (tft_prof_opts_set(&opts, name, len || tft_prof_opt_takes_value(name) ? buf : NULL, &err)) {
			char msg[128];
			tft_prof_opts_fini(&opts);
			/* (the message names the option, from our table, not the request's value) */
			snprintf(msg, sizeof(msg), "bad value for %s (docs/cmd-prof.md lists the options)", name);
			return tft_http_reply_error(r, 400, msg);
		}
	}
	tft_error_clear(&err);
	slot = tft_pool_acquire(&r->srv->pool, &err);
	if (!slot) {
		tft_prof_opts_fini(&opts);
		return tft_http_reply_status(r, err.code ? err.code : TFT_EIO, &err);
	}
	prof = tft_prof_open(slot->sess, opts.step, 0, &err);
	rc = prof ? tft_prof_view(prof, view, &opts, &res, &err) : err.code ? err.code : TFT_EIO;
	tft_json_write_init_mem(&w);
	if (rc == 0)
		tft_export_prof_json(res, &w);
	/* names are borrowed from the profile: write before closing it */
	tft_prof_result_free(res);
	tft_prof_close(prof);
	tft_pool_release(slot);
	tft_prof_opts_fini(&opts);
	if (rc != 0) {
		tft_json_write_fini(&w);
		return tft_http_reply_status(r, rc, &err);
	}
	return tft_http_reply_json(r, 200, &w);
}
