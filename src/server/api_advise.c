/* SPDX-License-Identifier: MIT */
/*
 * GET /api/advise?step=N|all_steps=1&checker=NAME[,NAME...]: the advisor's
 * findings, verdicts and step breakdowns, the JSON of `tftracer advise
 * --json` (analyze/advise.c computes; docs/cmd-advise.md has the shape). This
 * file parses the query and writes the JSON.
 */
#include <string.h>

#include "analyze/advise.h"
#include "server/api.h"

int tft_api_advise(struct tft_http_req *r)
{
	static const char *const names[TFT_ADVISE_NCHECKERS] = {
		"step_time", "utilization", "expensive_ops", "op_config",
		"communication", "memory", "variability", "critical_path",
	};
	struct tft_advise_opts opts = { 0 };
	struct tft_advise_result *res = NULL;
	struct tft_pool_slot *slot;
	struct tft_json_writer w;
	struct tft_error err;
	size_t clen;
	int64_t all;
	unsigned mask = 0;
	int rc;
	const char *cl = tft_query_get(&r->query, "checker", &clen);

	if (tft_query_get(&r->query, "step", NULL)) {
		if (tft_query_get_i64(&r->query, "step", INT64_MIN, INT64_MAX, 0, &opts.step) != 0)
			return tft_http_reply_error(r, 400, "step must be an integer step number");
		opts.one_step = true;
	}
	if (tft_query_get_i64(&r->query, "all_steps", 0, 1, 0, &all) != 0)
		return tft_http_reply_error(r, 400, "all_steps must be 0 or 1");
	opts.all_steps = all == 1;
	if (opts.one_step && opts.all_steps)
		return tft_http_reply_error(r, 400, "step and all_steps exclude each other");
	if (cl) {
		if (tft_query_parse_words(cl, clen, names, TFT_ADVISE_NCHECKERS, &mask) != 0)
			return tft_http_reply_error(r, 400,
						    "checker must list step_time, utilization, expensive_ops, op_config, "
						    "communication, memory, variability or critical_path");
		opts.checkers = mask;
	}
	tft_error_clear(&err);
	slot = tft_pool_acquire(&r->srv->pool, &err);
	if (!slot)
		return tft_http_reply_status(r, err.code ? err.code : TFT_EIO, &err);
	rc = tft_advise_run(slot->sess, &opts, &res, &err);
	tft_json_write_init_mem(&w);
	if (rc == 0)
		tft_advise_write_json(res, &w);
	/* (the result holds no pointer into the session: it may outlive the slot) */
	tft_pool_release(slot);
	tft_advise_destroy(res);
	if (rc != 0) {
		tft_json_write_fini(&w);
		return tft_http_reply_status(r, rc, &err);
	}
	return tft_http_reply_json(r, 200, &w);
}
