/* SPDX-License-Identifier: MIT */
/*
 * Processes, threads and their tracks: the pid / tid of each event (integer
 * or string) to the importer's proc and thread entries (found through the
 * keyed map), and the writer processes and tracks registered the first time
 * an event needs them: thread tracks, keyed counter / async / object tracks,
 * the synthetic Global process, a stream's GPU user annotations.
 */
#include "collect/chrome/chrome_int.h"

/* A new proc entry (registered with the writer only when an event needs it). */
static int new_proc(struct chrome *c, int64_t pid, uint32_t name, uint32_t *idx)
{
	if (tft_grow((void **)&c->procs, &c->cap_procs, (uint64_t)c->nprocs + 1, sizeof(*c->procs)))
		return nomem(c);
	struct proc *p = &c->procs[c->nprocs];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->id = TFT_NONE;
	p->name = name;
	p->instants = TFT_NONE;
	*idx = c->nprocs++;
	return 0;
}

/* A pid that is a number (or a string of digits): *iv; else false (*iv 0: no pid is pid 0). */
static bool pid_number(const struct xid *pid, int64_t *iv)
{
	*iv = 0;
	if (pid->kind == 1) {
		*iv = pid->i;
		return true;
	}
	if (pid->kind == 2 && digits_to_i64(&pid->s, iv))
		return true;
	*iv = 0;
	return false;
}

/* The proc entry for a pid as written (created on first sight). */
int tft_chrome_get_proc(struct chrome *c, const struct xid *pid, uint32_t *idx)
{
	struct hkey k;
	int64_t iv = 0;
	uint32_t sid = 0;
	bool is_str = false;
	int rc;

	if (!pid_number(pid, &iv) && pid->kind == 2) {
		is_str = true;
		if ((rc = intern(c, pid->s.ptr, pid->s.len, &sid)))
			return rc;
	}
	k = is_str ? mkkey(K_PROC, 1, sid, 0) : mkkey(K_PROC, 0, (uint64_t)iv, 0);
	*idx = map_get(&c->map, &k);
	if (*idx != TFT_NONE)
		return 0;
	if ((rc = new_proc(c, is_str ? SYNTH_ID_BASE + c->next_synth++ : iv, is_str ? sid : 0, idx)))
		return rc;
	if (map_put(&c->map, &k, *idx))
		return nomem(c);
	return 0;
}

/* Register the process with the writer the first time an event needs it. */
int tft_chrome_ensure_proc(struct chrome *c, uint32_t idx, uint32_t *id)
{
	struct proc *p = &c->procs[idx];

	*id = TFT_NONE;
	if (p->id == TFT_NONE) {
		struct tft_process wp;
		memset(&wp, 0, sizeof(wp));
		wp.name = p->name;
		wp.pid = p->pid;
		wp.rank = -1;
		wp.sort_index = p->sort_index;
		wp.labels = p->labels;
		p->id = tft_writer_add_process(c->w, &wp);
		if (p->id == TFT_NONE)
			return tft_error_set(c->err, TFT_ENOMEM, -1, "cannot register a process");
	}
	*id = p->id;
	return 0;
}

/* Register a track of process proc_idx (and the process, if not yet) with the writer. */
int tft_chrome_add_track(struct chrome *c, uint32_t proc_idx, uint32_t kind, uint32_t name,
			 int64_t tid, int32_t sort_index, uint32_t *track)
{
	struct tft_track t;
	uint32_t pid;
	int rc = tft_chrome_ensure_proc(c, proc_idx, &pid);

	if (rc)
		return rc;
	memset(&t, 0, sizeof(t));
	t.process = pid;
	t.kind = kind;
	t.name = name;
	t.tid = tid;
	t.sort_index = sort_index;
	*track = tft_writer_add_track(c->w, &t);
	if (*track == TFT_NONE)
		return tft_error_set(c->err, TFT_ENOMEM, -1, "cannot register a track");
	return 0;
}

/* get_thread()'s slow path: (pid, tid) looked up in the map, or added. */
int tft_chrome_find_thread(struct chrome *c, const struct xid *pid, const struct xid *tid,
			   uint32_t *idx)
{
	struct hkey k;
	uint32_t proc, sid = 0;
	int64_t iv = 0;
	bool is_str = false;
	int rc;

	/* (get_thread() found no cached entry) */
	if ((rc = tft_chrome_get_proc(c, pid, &proc)))
		return rc;
	if (tid->kind == 1) {
		iv = tid->i;
	} else if (tid->kind == 2 && !digits_to_i64(&tid->s, &iv)) {
		is_str = true;
		if ((rc = intern(c, tid->s.ptr, tid->s.len, &sid)))
			return rc;
	}
	k = is_str ? mkkey(K_THREAD, 1, proc, sid) : mkkey(K_THREAD, 0, proc, (uint64_t)iv);
	*idx = map_get(&c->map, &k);
	if (*idx == TFT_NONE) {
		if (tft_grow((void **)&c->threads, &c->cap_threads, (uint64_t)c->nthreads + 1,
			     sizeof(*c->threads)))
			return nomem(c);
		struct thread *t = &c->threads[c->nthreads];
		memset(t, 0, sizeof(*t));
		t->tid = is_str ? SYNTH_ID_BASE + c->next_synth++ : iv;
		t->proc = proc;
		t->track = TFT_NONE;
		t->ann_track = TFT_NONE;
		t->name = sid;
		*idx = c->nthreads++;
		if (map_put(&c->map, &k, *idx))
			return nomem(c);
	}
	if (pid->kind != 2 && tid->kind != 2) {
		c->last_pid = pid->kind ? pid->i : 0;
		c->last_tid = tid->kind ? tid->i : 0;
		c->last_thread = *idx;
	}
	return 0;
}

/* thread_track()'s slow path: the thread's track registered. */
int tft_chrome_new_thread_track(struct chrome *c, uint32_t idx, uint32_t *track)
{
	struct thread *t = &c->threads[idx];
	int rc = tft_chrome_add_track(c, t->proc, tft_chrome_thread_kind(c, t), t->name, t->tid,
				      t->sort_index, &t->track);

	if (rc)
		return rc;
	*track = c->threads[idx].track;
	return 0;
}

/* A keyed per-process track (counter / async / object), created on first use. */
int tft_chrome_keyed_track(struct chrome *c, const struct hkey *k, uint32_t proc, uint32_t kind,
			   uint32_t name, uint32_t *track)
{
	int rc;

	*track = map_get(&c->map, k);
	if (*track != TFT_NONE)
		return 0;
	if ((rc = tft_chrome_add_track(c, proc, kind, name, 0, 0, track)))
		return rc;
	if (map_put(&c->map, k, *track))
		return nomem(c);
	return 0;
}

/* The synthetic "Global" process's track (global instants), created on first use. */
int tft_chrome_global_track(struct chrome *c, uint32_t *track)
{
	int rc;

	if (c->global_proc == TFT_NONE) {
		uint32_t name;
		if ((rc = intern(c, "Global", 6, &name)) ||
		    (rc = new_proc(c, SYNTH_ID_BASE + c->next_synth++, name, &c->global_proc)))
			return rc;
		if ((rc = tft_chrome_add_track(c, c->global_proc, TFT_TRACK_THREAD, name, 0, 0,
						&c->global_track)))
			return rc;
	}
	*track = c->global_track;
	return 0;
}

/*
 * Is pid a process already named "Global"? A tftracer export writes each
 * input's Global process (its global instants) with its own pid and name:
 * its instants go back there, so that the workers' Global processes stay
 * apart. Other producers' global instants (Kineto's pid "Traces") go to the
 * input's synthetic Global process.
 */
bool tft_chrome_global_named(struct chrome *c, const struct xid *pid)
{
	struct hkey k;
	int64_t iv;
	uint32_t idx;
	size_t len = 0;
	const char *nm;

	if (!pid_number(pid, &iv))
		return false; /* no pid, or a string pid: not a tftracer export's */
	k = mkkey(K_PROC, 0, (uint64_t)iv, 0);
	idx = map_get(&c->map, &k);
	if (idx == TFT_NONE || idx == c->global_proc || !c->procs[idx].name)
		return false;
	nm = wstr(c, c->procs[idx].name, &len);
	return len == 6 && memcmp(nm, "Global", 6) == 0;
}

/*
 * A stream's GPU user annotations (Kineto "gpu_user_annotation"): ranges
 * that name the kernels they span, on a track of their own next to the
 * stream's, derived (aggregates leave them out: they are not work). Named in
 * finish(), when the stream's name is known.
 */
int tft_chrome_annotation_track(struct chrome *c, uint32_t tidx, uint32_t *track)
{
	struct thread *t = &c->threads[tidx];
	int rc;

	if (t->ann_track == TFT_NONE) {
		if ((rc = tft_chrome_add_track(c, t->proc, TFT_TRACK_GPU_STREAM, 0, t->tid, t->sort_index,
					       &c->threads[tidx].ann_track)))
			return rc;
		t = &c->threads[tidx];
		struct tft_track *wt = tft_writer_track(c->w, t->ann_track);
		if (wt)
			wt->flags = TFT_TRACKF_DERIVED;
	}
	*track = t->ann_track;
	return 0;
}
