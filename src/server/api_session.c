/* SPDX-License-Identifier: MIT */
/*
 * GET /api/session (the summary, in the shape of `tftracer info --json`),
 * GET /api/steps, and POST /api/refresh (pick up what a live writer
 * committed since).
 */
#include <stdlib.h>
#include <string.h>

#include "core/model.h"
#include "export/export_summary.h"
#include "server/routes.h"

static void write_str_id(struct tft_json_writer *w, struct tft_session *s, uint32_t id)
{
	size_t len = 0;
	const char *str = tft_session_str(s, id, &len);

	tft_json_write_str(w, str ? str : "", str ? len : 0);
}

static void write_step(struct tft_json_writer *w, struct tft_session *s, const struct tft_step *st)
{
	tft_json_write_begin_object(w);
	tft_json_write_key(w, "index");
	tft_json_write_int(w, st->index);
	tft_json_write_key(w, "name");
	write_str_id(w, s, st->name);
	tft_json_write_key(w, "process");
	if (st->process == TFT_NONE)
		tft_json_write_null(w);
	else
		tft_json_write_uint(w, st->process);
	tft_json_write_key(w, "start_ns");
	tft_json_write_int(w, st->start_ns);
	tft_json_write_key(w, "dur_ns");
	tft_json_write_int(w, st->dur_ns);
	tft_json_write_key(w, "traced");
	tft_json_write_bool(w, st->traced);
	tft_json_write_end_object(w);
}

static void write_steps(struct tft_json_writer *w, struct tft_session *s)
{
	uint32_t n = tft_session_step_count(s);

	tft_json_write_begin_array(w);
	for (uint32_t i = 0; i < n; i++) {
		const struct tft_step *st = tft_session_step(s, i);
		if (st)
			write_step(w, s, st);
	}
	tft_json_write_end_array(w);
}

static void write_u64(struct tft_json_writer *w, const char *key, uint64_t v)
{
	tft_json_write_key(w, key);
	tft_json_write_uint(w, v);
}

void tft_api_session_write(struct tft_session *s, struct tft_json_writer *w)
{
	uint32_t np = tft_session_process_count(s), nt = tft_session_track_count(s);

	tft_json_write_begin_object(w);
	/* The counts and span, shared with `tftracer info --json`. */
	tft_export_summary_keys(w, s);

	tft_json_write_key(w, "process_list");
	tft_json_write_begin_array(w);
	for (uint32_t i = 0; i < np; i++) {
		const struct tft_process *p = tft_session_process(s, i);
		if (!p)
			continue;
		tft_json_write_begin_object(w);
		write_u64(w, "id", p->id);
		tft_json_write_key(w, "name");
		write_str_id(w, s, p->name);
		tft_json_write_key(w, "host");
		write_str_id(w, s, p->host);
		tft_json_write_key(w, "pid");
		tft_json_write_int(w, p->pid);
		tft_json_write_key(w, "rank");
		tft_json_write_int(w, p->rank);
		tft_json_write_key(w, "sort_index");
		tft_json_write_int(w, p->sort_index);
		tft_json_write_key(w, "labels");
		write_str_id(w, s, p->labels);
		tft_json_write_end_object(w);
	}
	tft_json_write_end_array(w);

	tft_json_write_key(w, "track_list");
	tft_json_write_begin_array(w);
	for (uint32_t i = 0; i < nt; i++) {
		const struct tft_track *t = tft_session_track(s, i);
		const struct tft_process *pr;
		const char *kind;
		bool empty;

		if (!t)
			continue;
		kind = tft_track_kind_name((int)t->kind);
		empty = t->min_ts_ns > t->max_ts_ns;
		tft_json_write_begin_object(w);
		write_u64(w, "id", t->id);
		write_u64(w, "process", t->process);
		tft_json_write_key(w, "process_name");
		pr = tft_session_process(s, t->process);
		write_str_id(w, s, pr ? pr->name : 0);
		tft_json_write_key(w, "pid");
		if (pr)
			tft_json_write_int(w, pr->pid);
		else
			tft_json_write_null(w);
		tft_json_write_key(w, "kind");
		tft_json_write_cstr(w, kind ? kind : "");
		tft_json_write_key(w, "name");
		write_str_id(w, s, t->name);
		tft_json_write_key(w, "tid");
		tft_json_write_int(w, t->tid);
		tft_json_write_key(w, "sort_index");
		tft_json_write_int(w, t->sort_index);
		write_u64(w, "slices", t->slices);
		write_u64(w, "instants", t->instants);
		write_u64(w, "counters", t->counters);
		write_u64(w, "max_depth", t->max_depth);
		tft_json_write_key(w, "concurrent");
		tft_json_write_bool(w, (t->flags & TFT_TRACKF_CONCURRENT) != 0);
		tft_json_write_key(w, "derived");
		tft_json_write_bool(w, (t->flags & TFT_TRACKF_DERIVED) != 0);
		tft_json_write_key(w, "min_ts_ns");
		if (empty)
			tft_json_write_null(w);
		else
			tft_json_write_int(w, t->min_ts_ns);
		tft_json_write_key(w, "max_ts_ns");
		if (empty)
			tft_json_write_null(w);
		else
			tft_json_write_int(w, t->max_ts_ns);
		tft_json_write_end_object(w);
	}
	tft_json_write_end_array(w);

	tft_json_write_key(w, "step_list");
	write_steps(w, s);
	tft_json_write_end_object(w);
}

int tft_api_session(struct tft_http_req *r)
{
	struct tft_error err;
	struct tft_json_writer w;
	struct tft_pool_slot *slot;

	tft_error_clear(&err);
	slot = tft_pool_acquire(&r->srv->pool, &err);
	if (!slot)
		return tft_http_reply_status(r, err.code ? err.code : TFT_EIO, &err);
	tft_json_write_init_mem(&w);
	tft_api_session_write(slot->sess, &w);
	tft_pool_release(slot);
	return tft_http_reply_json(r, 200, &w);
}

int tft_api_steps(struct tft_http_req *r)
{
	struct tft_error err;
	struct tft_json_writer w;
	struct tft_pool_slot *slot;

	tft_error_clear(&err);
	slot = tft_pool_acquire(&r->srv->pool, &err);
	if (!slot)
		return tft_http_reply_status(r, err.code ? err.code : TFT_EIO, &err);
	tft_json_write_init_mem(&w);
	tft_json_write_begin_object(&w);
	tft_json_write_key(&w, "steps");
	write_steps(&w, slot->sess);
	tft_json_write_end_object(&w);
	tft_pool_release(slot);
	return tft_http_reply_json(r, 200, &w);
}

int tft_api_refresh(struct tft_http_req *r)
{
	struct tft_error err;
	struct tft_json_writer w;
	struct tft_pool_slot *slot;
	struct tft_session_summary sum;

	tft_pool_bump(&r->srv->pool);
	tft_error_clear(&err);
	/* Refresh one reader now so errors surface here; the others follow on use. */
	slot = tft_pool_acquire(&r->srv->pool, &err);
	if (!slot)
		return tft_http_reply_status(r, err.code ? err.code : TFT_EIO, &err);
	memset(&sum, 0, sizeof(sum));
	tft_session_get_summary(slot->sess, &sum);
	tft_pool_release(slot);
	tft_json_write_init_mem(&w);
	tft_json_write_begin_object(&w);
	tft_json_write_key(&w, "generation");
	tft_json_write_uint(&w, tft_pool_gen(&r->srv->pool));
	tft_json_write_key(&w, "end_ns");
	tft_json_write_int(&w, sum.end_ns);
	tft_json_write_end_object(&w);
	return tft_http_reply_json(r, 200, &w);
}
