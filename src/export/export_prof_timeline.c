/* SPDX-License-Identifier: MIT */
/*
 * The timeline of a prof view (export_prof_timeline.h): a second scan of
 * the session (tft_prof_executions) streamed as Chrome trace events, the
 * track and process names written as metadata before a track's first
 * slice, as export_chrome.c writes them.
 */
#include <stdlib.h>
#include <string.h>

#include "export/export_prof_timeline.h"
#include "store/session.h"

struct tl {
	const struct tft_prof_result *r;
	struct tft_session *s;
	struct tft_json_writer *w;
	uint8_t *track_done, *proc_done; /* owned */
	uint64_t events;
};

static void meta(struct tl *t, const char *what, uint32_t pid, int64_t tid, bool thread, const char *name)
{
	struct tft_json_writer *w = t->w;

	tft_json_write_newline(w);
	tft_json_write_begin_object(w);
	tft_json_write_key(w, "ph");
	tft_json_write_cstr(w, "M");
	tft_json_write_key(w, "name");
	tft_json_write_cstr(w, what);
	tft_json_write_key_uint(w, "pid", pid);
	if (thread)
		tft_json_write_key_int(w, "tid", tid);
	tft_json_write_key(w, "args");
	tft_json_write_begin_object(w);
	tft_json_write_key(w, "name");
	tft_json_write_cstr(w, name);
	tft_json_write_end_object(w);
	tft_json_write_end_object(w);
}

static int on_exec(void *ctx, const struct tft_prof_exec *e)
{
	struct tl *t = ctx;
	struct tft_json_writer *w = t->w;
	const struct tft_track *tr = tft_session_track(t->s, e->track);
	struct tft_prof_record rec;
	size_t len;
	const char *name;

	if (!tr)
		return 0;
	if (!t->proc_done[tr->process]) {
		const struct tft_process *p = tft_session_process(t->s, tr->process);
		t->proc_done[tr->process] = 1;
		meta(t, "process_name", tr->process, 0, false, p ? tft_session_str(t->s, p->name, NULL) : "");
	}
	if (!t->track_done[e->track]) {
		t->track_done[e->track] = 1;
		meta(t, "thread_name", tr->process, e->track, true, tft_session_str(t->s, tr->name, NULL));
	}
	tft_prof_record_get(t->r->prof, e->record, &rec);
	name = e->accelerator ? tft_session_str(t->s, e->name, &len) : rec.name;
	tft_json_write_newline(w);
	tft_json_write_begin_object(w);
	tft_json_write_key(w, "ph");
	tft_json_write_cstr(w, "X");
	tft_json_write_key(w, "name");
	if (e->accelerator)
		tft_json_write_str(w, name, len);
	else
		tft_json_write_cstr(w, name);
	tft_json_write_key(w, "cat");
	tft_json_write_cstr(w, e->accelerator ? "Kernel" : "Op");
	tft_json_write_key_uint(w, "pid", tr->process);
	tft_json_write_key_int(w, "tid", e->track);
	tft_json_write_key(w, "ts");
	tft_json_write_ns_us(w, e->ts_ns);
	tft_json_write_key(w, "dur");
	tft_json_write_ns_us(w, e->dur_ns > 0 ? e->dur_ns : 0);
	tft_json_write_key(w, "args");
	tft_json_write_begin_object(w);
	tft_json_write_key(w, "name");
	tft_json_write_cstr(w, rec.name);
	tft_json_write_key(w, "op");
	tft_json_write_cstr(w, rec.op && rec.op[0] ? rec.op : rec.name);
	tft_json_write_end_object(w);
	tft_json_write_end_object(w);
	t->events++;
	return w->status;
}

int tft_export_prof_timeline(const struct tft_prof_result *r, struct tft_json_writer *w, uint64_t *events,
			     struct tft_error *err)
{
	struct tft_session *s = tft_prof_session(r->prof);
	uint32_t nrec = tft_prof_record_count(r->prof);
	struct tl t = { .r = r, .s = s, .w = w };
	uint8_t *want = calloc(nrec + 1, 1);
	int rc;

	t.track_done = calloc(tft_session_track_count(s) + 1, 1);
	t.proc_done = calloc(tft_session_process_count(s) + 1, 1);
	if (!want || !t.track_done || !t.proc_done) {
		rc = tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
		goto out;
	}
	for (uint32_t i = 0; i < r->ncontribs; i++)
		if (r->contribs[i].record < nrec)
			want[r->contribs[i].record] = 1;
	tft_json_write_begin_object(w);
	tft_json_write_key(w, "traceEvents");
	tft_json_write_begin_array(w);
	rc = tft_prof_executions(r->prof, want, on_exec, &t, err);
	if (rc > 0)
		rc = w->status ? w->status : TFT_EIO;
	tft_json_write_raw(w, "\n", 1);
	tft_json_write_end_array(w);
	tft_json_write_key(w, "displayTimeUnit");
	tft_json_write_cstr(w, "ns");
	tft_json_write_end_object(w);
	tft_json_write_raw_char(w, '\n');
	if (events)
		*events = t.events;
out:
	free(want);
	free(t.track_done);
	free(t.proc_done);
	return rc;
}
