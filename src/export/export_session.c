/* SPDX-License-Identifier: MIT */
/*
 * The session object (export_session.h): GET /api/session's body and the
 * HTML export's DATA "session", written once for both.
 */
#include <stdlib.h>
#include <string.h>

#include "core/model.h"
#include "export/export_session.h"
#include "export/export_summary.h"

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

void tft_export_steps_write(struct tft_json_writer *w, struct tft_session *s)
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

void tft_export_session_write(struct tft_session *s, struct tft_json_writer *w)
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
	tft_export_steps_write(w, s);
	tft_json_write_end_object(w);
}
