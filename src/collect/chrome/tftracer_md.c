/* SPDX-License-Identifier: MIT */
/*
 * What a tftracer export wrote under "metadata" (track kinds, hosts, ranks,
 * steps without a slice: what Chrome's fields cannot carry), parsed when
 * the key is read and applied at the end of the import.
 */
#include "collect/chrome/chrome_int.h"

/* One object of metadata.processes / .tracks / .steps (entered); which: 'p', 't', 's'. */
static int md_entry(struct chrome *c, struct tft_json_reader *r, char which)
{
	struct md_proc mp = { .rank = -1 };
	struct md_track mt = { 0 };
	struct tft_step st = { .process = TFT_NONE };
	int64_t step_pid = INT64_MIN, iv;
	bool has_pid = false, has_tid = false, has_index = false, has_start = false;
	struct tft_json_value v;
	struct tft_json_str k;
	char kind[16] = "";
	int rc;

	while ((rc = tft_json_next_member(r, &k, &v, NULL)) == 1) {
		if (is_container(&v)) {
			if ((rc = tft_json_skip(r, NULL, NULL)))
				return rc;
			continue;
		}
		if (STR_EQ(&k, "pid")) {
			if (md_int(&v, &iv)) {
				has_pid = true;
				mp.pid = mt.pid = step_pid = iv;
			}
		} else if (STR_EQ(&k, "source_pid")) {
			mp.has_source_pid = md_int(&v, &mp.source_pid);
		} else if (STR_EQ(&k, "host") && v.type == TFT_JSON_STRING && v.len) {
			if ((rc = intern(c, v.ptr, v.len, &mp.host)))
				return rc;
			mp.has_host = true;
		} else if (STR_EQ(&k, "rank")) {
			if (md_int(&v, &iv) && iv >= INT32_MIN && iv <= INT32_MAX) {
				mp.rank = (int32_t)iv;
				mp.has_rank = true;
			}
		} else if (STR_EQ(&k, "labels") && v.type == TFT_JSON_STRING && which == 'p') {
			/* the process's own labels: process_labels adds host and rank */
			mp.labels = 0;
			if (v.len && (rc = intern(c, v.ptr, v.len, &mp.labels)))
				return rc;
			mp.has_labels = true;
		} else if (STR_EQ(&k, "sort_index") && which == 'p') {
			if (md_int(&v, &iv) && iv >= INT32_MIN && iv <= INT32_MAX) {
				mp.sort_index = (int32_t)iv;
				mp.has_sort_index = true;
			}
		} else if (STR_EQ(&k, "tid")) {
			has_tid = md_int(&v, &mt.tid);
		} else if (STR_EQ(&k, "source_tid")) {
			mt.has_source_tid = md_int(&v, &mt.source_tid);
		} else if ((STR_EQ(&k, "concurrent") || STR_EQ(&k, "derived")) &&
			   (v.type == TFT_JSON_TRUE || v.type == TFT_JSON_FALSE)) {
			uint32_t f = STR_EQ(&k, "concurrent") ? TFT_TRACKF_CONCURRENT : TFT_TRACKF_DERIVED;
			mt.flags = v.type == TFT_JSON_TRUE ? mt.flags | f : mt.flags & ~f;
			mt.has_flags = true;
		} else if (STR_EQ(&k, "kind") && v.type == TFT_JSON_STRING && v.len < sizeof(kind)) {
			memcpy(kind, v.ptr, v.len);
			kind[v.len] = '\0';
		} else if (STR_EQ(&k, "index")) {
			has_index = md_int(&v, &st.index);
		} else if (STR_EQ(&k, "name") && v.type == TFT_JSON_STRING && which == 's') {
			if ((rc = intern(c, v.ptr, v.len, &st.name)))
				return rc;
		} else if (STR_EQ(&k, "start_ns")) {
			has_start = md_int(&v, &st.start_ns);
		} else if (STR_EQ(&k, "dur_ns")) {
			if (!md_int(&v, &st.dur_ns) || st.dur_ns < 0)
				st.dur_ns = 0;
		} else if (STR_EQ(&k, "traced")) {
			st.traced = v.type == TFT_JSON_TRUE;
		}
	}
	if (rc < 0)
		return rc;
	if (which == 'p' && has_pid) {
		if (tft_grow((void **)&c->md_procs, &c->md_cap_procs, (uint64_t)c->md_nprocs + 1,
			     sizeof(*c->md_procs)))
			return nomem(c);
		c->md_procs[c->md_nprocs++] = mp;
	} else if (which == 't' && has_pid && has_tid) {
		mt.kind = (uint32_t)tft_track_kind_parse(kind);
		if (tft_grow((void **)&c->md_tracks, &c->md_cap_tracks, (uint64_t)c->md_ntracks + 1,
			     sizeof(*c->md_tracks)))
			return nomem(c);
		c->md_tracks[c->md_ntracks++] = mt;
	} else if (which == 's' && has_index && has_start) {
		if (tft_grow((void **)&c->md_steps, &c->md_cap_steps, (uint64_t)c->md_nsteps + 1,
			     sizeof(*c->md_steps)) ||
		    tft_grow((void **)&c->md_step_pid, &c->md_cap_step_pid, (uint64_t)c->md_nsteps + 1,
			     sizeof(*c->md_step_pid)))
			return nomem(c);
		c->md_step_pid[c->md_nsteps] = step_pid;
		c->md_steps[c->md_nsteps++] = st;
	}
	return 0;
}

/*
 * The "metadata" object (validated JSON text): a tftracer export lists what
 * Chrome's fields cannot carry (track kinds, hosts, ranks, steps without a
 * slice); keep it for finish(). Anything unexpected is ignored.
 */
int tft_chrome_md_parse(struct chrome *c, const char *text, size_t len)
{
	struct tft_json_reader_opts ro = { .block_size = len + 1, .max_buffer = len + 1 };
	struct tft_source *src = tft_source_open_mem(text, len, "metadata", NULL);
	struct tft_json_reader r;
	struct tft_json_value v;
	struct tft_json_str k;
	int rc;

	if (!src)
		return nomem(c);
	if ((rc = tft_json_reader_init(&r, src, &ro, NULL))) {
		tft_source_close(src);
		return rc == TFT_ENOMEM ? nomem(c) : 0;
	}
	if (tft_json_read(&r, &v, NULL) || v.type != TFT_JSON_OBJECT)
		goto out;
	while ((rc = tft_json_next_member(&r, &k, &v, NULL)) == 1) {
		char which = STR_EQ(&k, "processes") ? 'p' : STR_EQ(&k, "tracks") ? 't'
			   : STR_EQ(&k, "steps") ? 's' : 0;
		if (STR_EQ(&k, "exporter")) {
			if (v.type == TFT_JSON_STRING && v.len >= 8 && memcmp(v.ptr, "tftracer", 8) == 0)
				c->md_tftracer = true;
			continue;
		}
		if (!is_container(&v))
			continue;
		if (!which || v.type != TFT_JSON_ARRAY) {
			if (tft_json_skip(&r, NULL, NULL))
				break;
			continue;
		}
		if (which == 's')
			c->md_has_steps = true;
		if (tft_json_read(&r, &v, NULL))
			break;
		while ((rc = tft_json_next_item(&r, 0, NULL)) == 1) {
			bool is_obj;
			if ((rc = tft_json_read(&r, &v, NULL)))
				break;
			is_obj = v.type == TFT_JSON_OBJECT;
			if (v.type == TFT_JSON_ARRAY)
				rc = tft_json_skip_rest(&r, NULL);
			else if (is_obj)
				rc = md_entry(c, &r, which);
			if (rc)
				break;
		}
		if (rc == TFT_ENOMEM)
			break;
		if (rc)
			goto out;
	}
out:
	tft_json_reader_fini(&r);
	tft_source_close(src);
	return rc == TFT_ENOMEM ? rc : 0;
}

/* Apply the process and track fields a tftracer export listed under "metadata" (md_parse). */
void tft_chrome_apply_md(struct chrome *c)
{
	for (uint32_t i = 0; i < c->md_nprocs; i++) {
		const struct md_proc *m = &c->md_procs[i];
		struct hkey k = mkkey(K_PROC, 0, (uint64_t)m->pid, 0);
		uint32_t idx = map_get(&c->map, &k);
		struct tft_process *wp;
		if (idx == TFT_NONE || c->procs[idx].id == TFT_NONE ||
		    !(wp = tft_writer_process(c->w, c->procs[idx].id)))
			continue;
		if (m->has_source_pid)
			wp->pid = m->source_pid;
		if (m->has_host)
			wp->host = m->host;
		if (m->has_rank)
			wp->rank = m->rank;
		if (m->has_labels)
			wp->labels = m->labels;
		if (m->has_sort_index)
			wp->sort_index = m->sort_index;
	}
	for (uint32_t i = 0; i < c->md_ntracks; i++) {
		const struct md_track *m = &c->md_tracks[i];
		struct hkey pk = mkkey(K_PROC, 0, (uint64_t)m->pid, 0);
		uint32_t pidx = map_get(&c->map, &pk), tidx;
		struct tft_track *wt;
		if (pidx == TFT_NONE)
			continue;
		struct hkey tk = mkkey(K_THREAD, 0, pidx, (uint64_t)m->tid);
		tidx = map_get(&c->map, &tk);
		/* thread-like tracks only: counter/async/object tracks are re-created by kind */
		if (tidx == TFT_NONE || c->threads[tidx].track == TFT_NONE ||
		    !(wt = tft_writer_track(c->w, c->threads[tidx].track)))
			continue;
		if (m->kind == TFT_TRACK_THREAD || m->kind == TFT_TRACK_DEVICE ||
		    m->kind == TFT_TRACK_GPU_STREAM || m->kind == TFT_TRACK_COMM)
			wt->kind = m->kind;
		if (m->has_flags)
			wt->flags = m->flags;
		if (m->has_source_tid)
			wt->tid = m->source_tid;
	}
}

/*
 * A tftracer export lists every step (with or without a slice): they
 * replace the ones found from ProfilerStep#N slices, which the list
 * includes. Its times are absolute (a tftracer export has no time shift).
 */
int tft_chrome_add_md_steps(struct chrome *c)
{
	int rc;

	for (uint32_t i = 0; i < c->md_nsteps; i++) {
		struct tft_step s = c->md_steps[i];
		s.process = TFT_NONE;
		if (c->md_step_pid[i] != INT64_MIN) {
			struct hkey k = mkkey(K_PROC, 0, (uint64_t)c->md_step_pid[i], 0);
			uint32_t idx = map_get(&c->map, &k);
			if (idx != TFT_NONE && (rc = tft_chrome_ensure_proc(c, idx, &s.process)))
				return rc;
		}
		if ((rc = tft_writer_add_step(c->w, &s)))
			return rc;
	}
	return 0;
}
