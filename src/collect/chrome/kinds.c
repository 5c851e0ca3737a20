/* SPDX-License-Identifier: MIT */
/*
 * What a track is: thread-like tracks typed from their process and thread
 * names (GPU stream, TF device, communication, thread), Kineto's categories
 * (device activity, GPU user annotations), and at the end the kinds, flags
 * and names of every thread-like track and GPU process (classify_threads).
 */
#include <stdio.h>
#include <strings.h>

#include "collect/chrome/chrome_int.h"
#include "collect/tf_names.h"
#include "collect/track_roles.h"
#include "core/grow.h"

static bool contains_ci(const char *s, size_t n, const char *needle)
{
	size_t m = strlen(needle);

	for (size_t i = 0; i + m <= n; i++) {
		size_t j = 0;
		while (j < m && (s[i + j] | 0x20) == needle[j])
			j++;
		if (j == m)
			return true;
	}
	return false;
}

static bool is_alpha(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
}

/* "comm" as a whole word ("comm", "comm 3", "rank_comm") but not "command". */
static bool has_comm_word(const char *s, size_t n)
{
	for (size_t i = 0; i + 4 <= n; i++) {
		if (memcmp(s + i, "comm", 4) && memcmp(s + i, "Comm", 4))
			continue;
		bool before = i == 0 || !is_alpha(s[i - 1]);
		size_t k = i + 4;
		if (k < n && s[k] == 's')
			k++;
		bool after = k >= n || !is_alpha(s[k]);
		if (before && after)
			return true;
	}
	return false;
}

/*
 * The track-kind classifier for thread-like tracks, from the process and
 * thread names (either may be empty).
 */
/*
 * A tf.timeline "DEVICE Compute" process of any TF era: /device:GPU:0,
 * /gpu:0, /cpu:0 (TF <= 1.3), device:SYCL:0 ..., with or without /job.
 */
static bool is_tf_device(const char *name, size_t len)
{
	struct tft_tf_device d;

	return tft_tf_names_parse_device(name, len, &d) == 0 && d.type.len && d.index >= 0;
}

/*
 * A GPU stream's or queue's name: "stream 7" (Kineto), "Stream #7",
 * "/gpu:0/stream:12", "stream:all" (TF), "Stream 101 Submission Queue"
 * (MTIA): "stream" then optional ' ', '#' or ':' and a digit or "all".
 * Not a thread that merely has the word in its name (ScriptStreamerThread).
 */
static bool has_stream_id(const char *s, size_t n)
{
	for (size_t i = 0; i + 6 <= n; i++) {
		size_t k = i + 6;

		if ((s[i] | 0x20) != 's' || strncasecmp(s + i, "stream", 6) != 0)
			continue;
		while (k < n && (s[k] == ' ' || s[k] == '#' || s[k] == ':'))
			k++;
		if (k < n && s[k] >= '0' && s[k] <= '9')
			return true;
		if (k + 3 <= n && strncasecmp(s + k, "all", 3) == 0)
			return true;
	}
	return false;
}

static uint32_t classify_track(const char *pn, size_t pl, const char *tn, size_t tl)
{
	if (has_stream_id(tn, tl) || has_stream_id(pn, pl) || contains(pn, pl, "/memcpy") ||
	    contains(tn, tl, "/memcpy"))
		return TFT_TRACK_GPU_STREAM;
	if (ends_with(pn, pl, " Compute") && is_tf_device(pn, pl - 8))
		return TFT_TRACK_DEVICE;
	if (contains_ci(tn, tl, "nccl") || contains_ci(tn, tl, "rccl") || contains(tn, tl, "Send") ||
	    contains(tn, tl, "Recv") || contains_ci(tn, tl, "collective") ||
	    contains_ci(tn, tl, "communicat") || has_comm_word(tn, tl))
		return TFT_TRACK_COMM;
	return TFT_TRACK_THREAD;
}

/* The kind of thread t's track from its process's and its own names. */
uint32_t tft_chrome_thread_kind(struct chrome *c, const struct thread *t)
{
	size_t pl, tl;
	const char *pn = wstr(c, c->procs[t->proc].name, &pl);
	const char *tn = wstr(c, t->name, &tl);

	return classify_track(pn, pl, tn, tl);
}

static uint8_t cat_class_of(const char *s, size_t n)
{
	static const char *const gpu[] = { "kernel", "gpu_memcpy", "gpu_memset", "cuda_sync",
					   "Kernel", "Memcpy", "Memset" };

	if (n == 19 && memcmp(s, "gpu_user_annotation", 19) == 0)
		return CAT_GPU_ANNOTATION;
	for (size_t i = 0; i < sizeof(gpu) / sizeof(gpu[0]); i++)
		if (strlen(gpu[i]) == n && memcmp(s, gpu[i], n) == 0)
			return CAT_GPU;
	return CAT_OTHER;
}

/* cat_class()'s slow path: the class of category string id `cat` (0: none), kept by id. */
int tft_chrome_cat_class(struct chrome *c, uint32_t cat, const struct tft_json_str *text,
			 uint8_t *cls)
{
	*cls = CAT_OTHER;
	if (!cat)
		return 0;
	if (cat >= c->ncat_cls) {
		if (tft_grow_ex((void **)&c->cat_cls, &c->ncat_cls, (uint64_t)cat + 1, 1, 64, 1))
			return nomem(c);
	}
	if (c->cat_cls[cat] == CAT_UNSEEN)
		c->cat_cls[cat] = cat_class_of(text->ptr, text->len);
	*cls = c->cat_cls[cat];
	return 0;
}

/* A category only Kineto writes (either schema): the input is a Kineto trace. */
bool tft_chrome_is_kineto_cat(const char *s, size_t n)
{
	switch (n) {
	case 4: return memcmp(s, "ac2g", 4) == 0;
	case 6: return memcmp(s, "cpu_op", 6) == 0 || memcmp(s, "kernel", 6) == 0 ||
		       memcmp(s, "Kernel", 6) == 0;
	case 7: return memcmp(s, "Runtime", 7) == 0;
	case 8: return memcmp(s, "Operator", 8) == 0;
	case 12: return memcmp(s, "cuda_runtime", 12) == 0;
	default: return false;
	}
}

/*
 * The model name deviceProperties gives GPU `id` (Kineto:
 * [{"id": 0, "name": "NVIDIA A100-SXM4-80GB", ...}]), into buf; false if none.
 */
static bool device_model(struct chrome *c, int64_t id, char *buf, size_t size)
{
	const char *text = tft_writer_meta(c->w, "device_properties");
	struct tft_json_reader_opts ro;
	struct tft_source *src;
	struct tft_json_reader r;
	struct tft_json_value v;
	bool found = false;

	if (!text || text[0] != '[')
		return false;
	ro = (struct tft_json_reader_opts){ .block_size = strlen(text) + 1,
					    .max_buffer = strlen(text) + 1 };
	if (!(src = tft_source_open_mem(text, strlen(text), "deviceProperties", NULL)))
		return false;
	if (tft_json_reader_init(&r, src, &ro, NULL)) {
		tft_source_close(src);
		return false;
	}
	if (tft_json_read(&r, &v, NULL) == 0 && v.type == TFT_JSON_ARRAY) {
		while (!found && tft_json_next_item(&r, 0, NULL) == 1) {
			struct tft_json_str k, name = { 0 };
			int64_t iv = INT64_MIN;
			if (tft_json_read(&r, &v, NULL))
				break;
			if (v.type != TFT_JSON_OBJECT) {
				if (is_container(&v) && tft_json_skip_rest(&r, NULL))
					break;
				continue;
			}
			while (tft_json_next_member(&r, &k, &v, NULL) == 1) {
				if (is_container(&v)) {
					if (tft_json_skip(&r, NULL, NULL))
						break;
				} else if (STR_EQ(&k, "id")) {
					md_int(&v, &iv);
				} else if (STR_EQ(&k, "name") && v.type == TFT_JSON_STRING && v.len < size) {
					name = (struct tft_json_str){ v.ptr, v.len };
					memcpy(buf, name.ptr, name.len);
					buf[name.len] = '\0';
				}
			}
			found = iv == id && name.len;
		}
	}
	tft_json_reader_fini(&r);
	tft_source_close(src);
	return found;
}

/* "GPU N": a process's labels (Kineto: "GPU 0"), N in *n; false otherwise. */
static bool gpu_label(struct chrome *c, const struct proc *p, int64_t *n)
{
	size_t len;
	const char *s = p->labels ? wstr(c, p->labels, &len) : "";

	if (!p->labels || len < 5 || memcmp(s, "GPU ", 4) != 0)
		return false;
	*n = 0;
	for (size_t i = 4; i < len; i++) {
		if (s[i] < '0' || s[i] > '9' || *n > 100000000)
			return false;
		*n = *n * 10 + (s[i] - '0');
	}
	return true;
}

/*
 * Kinds, flags and names of the thread-like tracks, once every name and
 * category is known (they may come after the events). A track that ran
 * device activity (kernels, copies: Kineto's categories) is a GPU stream
 * whatever its names say, named "stream N" when unnamed; its process, when
 * unnamed or labelled "GPU N" (Kineto names a GPU after the host process),
 * becomes "GPU N" with the model deviceProperties gives. GPU streams and TF
 * device executors hold concurrent executions; the profiler's own span
 * ("Spans"/"Traces": "PyTorch Profiler") is derived, not work.
 */
int tft_chrome_classify_threads(struct chrome *c)
{
	uint8_t *gpu_proc = calloc(c->nprocs ? c->nprocs : 1, 1);
	char buf[320], model[200];
	int rc = 0;

	if (!gpu_proc)
		return nomem(c);
	for (uint32_t i = 0; i < c->nthreads && !rc; i++) {
		struct thread *t = &c->threads[i];
		struct tft_track *wt;
		size_t pl;
		const char *pn;
		if (t->track == TFT_NONE || !(wt = tft_writer_track(c->w, t->track)))
			continue;
		wt->kind = t->gpu_events ? TFT_TRACK_GPU_STREAM : tft_chrome_thread_kind(c, t);
		wt->flags = tft_roles_default_flags(wt->kind);
		pn = wstr(c, c->procs[t->proc].name, &pl);
		if (c->procs[t->proc].pid >= SYNTH_ID_BASE &&
		    ((pl == 5 && memcmp(pn, "Spans", 5) == 0) || (pl == 6 && memcmp(pn, "Traces", 6) == 0)))
			wt->flags |= TFT_TRACKF_DERIVED;
		if (t->gpu_events)
			gpu_proc[t->proc] = 1;
		if (t->gpu_events && !wt->name) {
			snprintf(buf, sizeof(buf), "stream %lld", (long long)t->tid);
			if ((rc = intern(c, buf, strlen(buf), &wt->name)))
				break;
		}
	}
	for (uint32_t i = 0; i < c->nthreads && !rc; i++) {
		struct thread *t = &c->threads[i];
		struct tft_track *at, *wt;
		uint32_t nid;
		size_t nl;
		const char *nm;
		if (t->ann_track == TFT_NONE || !(at = tft_writer_track(c->w, t->ann_track)))
			continue;
		wt = t->track != TFT_NONE ? tft_writer_track(c->w, t->track) : NULL;
		nid = wt && wt->name ? wt->name : t->name;
		nm = nid ? wstr(c, nid, &nl) : "";
		if (!nid)
			nl = 0;
		while (nl && nm[nl - 1] == ' ')
			nl--;
		if (nl >= 11 && memcmp(nm + nl - 11, "annotations", 11) == 0)
			snprintf(buf, sizeof(buf), "%.*s", (int)(nl > 300 ? 300 : nl), nm); /* an export's */
		else if (nl)
			snprintf(buf, sizeof(buf), "%.*s annotations", (int)(nl > 256 ? 256 : nl), nm);
		else
			snprintf(buf, sizeof(buf), "stream %lld annotations", (long long)t->tid);
		rc = intern(c, buf, strlen(buf), &at->name);
	}
	for (uint32_t i = 0; i < c->nprocs && !rc; i++) {
		struct proc *p = &c->procs[i];
		struct tft_process *wp;
		int64_t n = p->pid;
		size_t pl;
		const char *pn;
		if (!gpu_proc[i] || p->id == TFT_NONE || !(wp = tft_writer_process(c->w, p->id)))
			continue;
		if (!gpu_label(c, p, &n) && p->name)
			continue; /* a GPU with a name of its own */
		snprintf(buf, sizeof(buf), "GPU %lld", (long long)n);
		pn = p->name ? wstr(c, p->name, &pl) : "";
		if (!p->name)
			pl = 0;
		if (pl >= strlen(buf) && memcmp(pn, buf, strlen(buf)) == 0)
			continue; /* named so already (a tftracer export) */
		if (device_model(c, n, model, sizeof(model)))
			snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), " (%s)", model);
		if ((rc = intern(c, buf, strlen(buf), &wp->name)))
			break;
	}
	free(gpu_proc);
	return rc;
}
