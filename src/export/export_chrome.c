/* SPDX-License-Identifier: MIT */
/*
 * Chrome trace JSON exporter. Hot path: every string id is escaped once into
 * a cache, every track's ',"pid":P,"tid":T' fragment is built once, and an
 * event is assembled with memcpy into a reserved stretch of the writer's
 * buffer.
 */
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "core/hmap.h"
#include "core/strtab.h"
#include "export/export_chrome.h"

/* String ids at or above this, and strings longer than this, are not cached. */
#define STR_CACHE_IDS (1u << 24)
#define STR_CACHE_LEN 4096
#define FRAG_MAX 64

struct track_out {
	int64_t tid;            /* Chrome tid */
	uint32_t kind;          /* enum tft_track_kind */
	uint8_t frag_len;
	uint8_t pid_len;        /* the ,"pid":P part of frag */
	char frag[FRAG_MAX];    /* ,"pid":P,"tid":T */
};

struct chrome {
	struct tft_session *s;    /* borrowed */
	struct tft_json_writer *w; /* borrowed */
	struct tft_export_counts n;
	/* escaped, quoted strings by id; len 0 = not cached yet */
	uint32_t *str_off, *str_len; /* owned */
	size_t str_cap;
	char *arena;                 /* owned */
	size_t arena_len, arena_cap;
	int64_t *pids;               /* owned; Chrome pid per process id */
	int32_t *sort;               /* owned; process_sort_index per process id (worker-major) */
	uint32_t nprocs;
	struct track_out *tracks;    /* owned; per track id */
	uint32_t ntracks;
	const struct track_out *cur; /* borrowed: tracks[i] being scanned (or a stub) */
	uint32_t cur_name;           /* its name string id */
	char *cnt_buf;               /* owned; current counter track: "name":"A" then "B": */
	size_t cnt_cap, cnt_name_len, cnt_key_len;
	bool cnt_ready;              /* cnt_buf describes the current track */
	uint64_t next_id;            /* ids for b/e, n and N/D */
	bool first;                  /* no traceEvents entry written yet */
	int status;                  /* first internal error (TFT_ENOMEM), 0 if none */
	/* steps: start_ns -> step index + 1 (open addressing) */
	uint32_t *step_slots;        /* owned */
	uint32_t step_mask;
	bool *step_seen;             /* owned; represented by a slice */
	uint32_t nsteps;
	struct tft_json_memo json_ok; /* JSON arg texts checked, by string id */
};

/* ---- string cache ------------------------------------------------------ */

static int cache_str(struct chrome *c, uint32_t id)
{
	size_t len, need;
	const char *s = tft_session_str(c->s, id, &len);

	if (id >= c->str_cap) {
		/* two arrays of one capacity (str_len zero-filled): str_cap moves when both grew */
		size_t co = c->str_cap, cl = c->str_cap;
		if (tft_grow_size_ex((void **)&c->str_off, &co, (size_t)id + 1, sizeof(*c->str_off), 1024, 0) ||
		    tft_grow_size_ex((void **)&c->str_len, &cl, (size_t)id + 1, sizeof(*c->str_len), 1024, 1))
			return TFT_ENOMEM;
		c->str_cap = cl;
	}
	need = tft_json_escape_bound(len) + 2;
	if (c->arena_cap - c->arena_len < need) {
		size_t ncap = c->arena_cap ? c->arena_cap * 2 : (1u << 16);
		while (ncap - c->arena_len < need)
			ncap *= 2;
		if (ncap > UINT32_MAX)
			return 1; /* arena full: stop caching, escape directly */
		char *na = realloc(c->arena, ncap);
		if (!na)
			return TFT_ENOMEM;
		c->arena = na;
		c->arena_cap = ncap;
	}
	char *o = c->arena + c->arena_len;
	o[0] = '"';
	need = 1 + tft_json_escape(o + 1, s, len);
	o[need++] = '"';
	c->str_off[id] = (uint32_t)c->arena_len;
	c->str_len[id] = (uint32_t)need;
	c->arena_len += need;
	return 0;
}

/* The quoted, escaped string for id, or NULL if it is not cacheable. */
static inline const char *get_str(struct chrome *c, uint32_t id, size_t *len)
{
	if (tft_likely(id < c->str_cap && c->str_len[id])) {
		*len = c->str_len[id];
		return c->arena + c->str_off[id];
	}
	if (id >= STR_CACHE_IDS)
		return NULL;
	size_t raw_len;
	tft_session_str(c->s, id, &raw_len);
	if (raw_len > STR_CACHE_LEN)
		return NULL;
	int rc = cache_str(c, id);
	if (rc) {
		if (rc < 0)
			c->status = rc;
		return NULL;
	}
	*len = c->str_len[id];
	return c->arena + c->str_off[id];
}

static void put_str(struct chrome *c, uint32_t id)
{
	size_t len;
	const char *p = get_str(c, id, &len);

	if (p) {
		tft_json_write_raw(c->w, p, len);
	} else {
		const char *s = tft_session_str(c->s, id, &len);
		tft_json_write_raw_str(c->w, s, len);
	}
}

#define PUT(c, lit) tft_json_write_raw((c)->w, lit, sizeof(lit) - 1)

/* ---- event pieces ------------------------------------------------------ */

static void begin_event(struct chrome *c)
{
	if (c->first)
		c->first = false;
	else
		PUT(c, ",\n");
	c->n.events++;
}

static void put_args(struct chrome *c, const struct tft_event *ev)
{
	PUT(c, ",\"args\":{");
	for (uint16_t i = 0; i < ev->nargs; i++) {
		const struct tft_arg *a = &ev->args[i];
		if (i)
			PUT(c, ",");
		put_str(c, a->key);
		PUT(c, ":");
		switch (a->type) {
		case TFT_ARG_BOOL:
			if (a->v.i)
				PUT(c, "true");
			else
				PUT(c, "false");
			break;
		case TFT_ARG_INT:
			tft_json_write_raw_int(c->w, a->v.i);
			break;
		case TFT_ARG_DOUBLE:
			/* keep_point: 1.0 stays a double when read back */
			tft_json_write_raw_double(c->w, a->v.d, true);
			break;
		case TFT_ARG_STR:
			put_str(c, a->v.str);
			break;
		case TFT_ARG_JSON: {
			/* A JSON value from the file: checked, as a session file is untrusted
			 * (text that is no JSON value, or not UTF-8, goes out as a string). */
			size_t len;
			const char *s = tft_session_str(c->s, a->v.str, &len);
			if (!len)
				PUT(c, "null");
			else if (tft_json_memo_is_value(&c->json_ok, a->v.str, s, len))
				tft_json_write_raw(c->w, s, len);
			else
				tft_json_write_raw_str(c->w, s, len);
			break;
		}
		default: /* TFT_ARG_NULL and unknown types */
			PUT(c, "null");
		}
	}
	PUT(c, "}");
}

/*
 * {"ph":"<ph>","name":N[,"cat":C],"pid":P,"tid":T,"ts":us
 * The fast path reserves once and copies the cached pieces.
 */
static void put_head(struct chrome *c, const char *ph, uint32_t name, uint32_t cat, int64_t ts)
{
	struct tft_json_writer *w = c->w;
	size_t nlen = 0, clen = 0;
	const char *np, *cp = "";

	/* Caching cat may move the arena: look the name up again afterwards. */
	np = get_str(c, name, &nlen);
	if (cat) {
		cp = get_str(c, cat, &clen);
		if (np)
			np = get_str(c, name, &nlen);
	}
	if (tft_likely(np && cp && tft_json_write_reserve(w, 96 + nlen + clen + c->cur->frag_len))) {
		char *o = w->buf + w->len;
		memcpy(o, "{\"ph\":\"", 7);
		o += 7;
		*o++ = ph[0];
		memcpy(o, "\",\"name\":", 9);
		o += 9;
		memcpy(o, np, nlen);
		o += nlen;
		if (cat) {
			memcpy(o, ",\"cat\":", 7);
			o += 7;
			memcpy(o, cp, clen);
			o += clen;
		}
		memcpy(o, c->cur->frag, c->cur->frag_len);
		o += c->cur->frag_len;
		memcpy(o, ",\"ts\":", 6);
		o += 6;
		o += tft_json_fmt_ns_us(o, ts);
		w->len = (size_t)(o - w->buf);
		return;
	}
	PUT(c, "{\"ph\":\"");
	tft_json_write_raw(w, ph, 1);
	PUT(c, "\",\"name\":");
	put_str(c, name);
	if (cat) {
		PUT(c, ",\"cat\":");
		put_str(c, cat);
	}
	tft_json_write_raw(w, c->cur->frag, c->cur->frag_len);
	PUT(c, ",\"ts\":");
	tft_json_write_raw_ns_us(w, ts);
}

static void put_id(struct chrome *c, uint64_t id)
{
	PUT(c, ",\"id\":");
	tft_json_write_raw_uint(c->w, id);
}

/* ---- per-kind emitters -------------------------------------------------- */

static int64_t end_ns(const struct tft_event *ev)
{
	int64_t r;

	if (__builtin_add_overflow(ev->ts_ns, ev->dur_ns, &r))
		r = ev->dur_ns > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

/* (steps by start. Not core/hmap: a multimap, steps may share a start; core/hmap holds one value a key) */
static void mark_step(struct chrome *c, const struct tft_event *ev)
{
	uint32_t h = (uint32_t)tft_hash_u64((uint64_t)ev->ts_ns) & c->step_mask;
	uint32_t si;

	while ((si = c->step_slots[h]) != 0) {
		const struct tft_step *st = tft_session_step(c->s, si - 1);
		/* (the same start and name: a node that merely spans the step, a
		 * RunMetadata's _SOURCE, does not stand for it) */
		if (st && st->start_ns == ev->ts_ns && st->name == ev->name)
			c->step_seen[si - 1] = true;
		h = (h + 1) & c->step_mask;
	}
}

static void emit_nested(struct chrome *c, const struct tft_event *ev)
{
	if (ev->kind == TFT_EV_SLICE) {
		c->n.slices++;
		if (c->nsteps)
			mark_step(c, ev);
		begin_event(c);
		if (ev->flags & TFT_EVF_UNCLOSED) {
			/* B without E: an importer counts it as unclosed again. */
			put_head(c, "B", ev->name, ev->cat, ev->ts_ns);
		} else {
			put_head(c, "X", ev->name, ev->cat, ev->ts_ns);
			PUT(c, ",\"dur\":");
			tft_json_write_raw_ns_us(c->w, ev->dur_ns);
		}
	} else {
		c->n.instants++;
		begin_event(c);
		put_head(c, "i", ev->name, ev->cat, ev->ts_ns);
		if (ev->flags & TFT_EVF_GLOBAL)
			PUT(c, ",\"s\":\"g\"");
		else if (ev->flags & TFT_EVF_PROCESS)
			PUT(c, ",\"s\":\"p\"");
		else
			PUT(c, ",\"s\":\"t\"");
	}
	if (ev->nargs)
		put_args(c, ev);
	PUT(c, "}");
}

/*
 * Async tracks: slices as b/e, instants as n, cat = the track name (an
 * importer keys async tracks by (pid, cat)). Object tracks: slices as N/D,
 * instants as O snapshots, cat = the event's own (importers key object
 * tracks by (pid, name)). Every pair gets an id unique in the file.
 */
static void emit_async(struct chrome *c, const struct tft_event *ev)
{
	bool object = c->cur->kind == TFT_TRACK_OBJECT;
	uint32_t cat = object ? ev->cat : c->cur_name;
	uint64_t id = c->next_id++;

	begin_event(c);
	if (ev->kind != TFT_EV_SLICE) {
		c->n.instants++;
		put_head(c, object ? "O" : "n", ev->name, cat, ev->ts_ns);
		put_id(c, id);
		if (ev->nargs)
			put_args(c, ev);
		PUT(c, "}");
		return;
	}
	c->n.slices++;
	put_head(c, object ? "N" : "b", ev->name, cat, ev->ts_ns);
	put_id(c, id);
	if (ev->nargs)
		put_args(c, ev);
	PUT(c, "}");
	if (ev->flags & TFT_EVF_UNCLOSED)
		return; /* b without e / N without D */
	begin_event(c);
	put_head(c, object ? "D" : "e", ev->name, cat, end_ns(ev));
	put_id(c, id);
	PUT(c, "}");
}

/* Build the "name":"A" and "B": pieces of the current counter track. */
/*
 * The counter's name and series key from its track name, which the Chrome
 * importer made "name.key" ("name" for a key "value" or equal to the name):
 * the samples' own event name says where the name ends, so that "gpu.mem"
 * {value} and "gpu" {mem} stay two counters; without it, the name ends at
 * the last dot.
 */
static int setup_counter_track(struct chrome *c, const struct tft_event *ev)
{
	size_t len, key_len, name_len, need, elen = 0;
	const char *name = tft_session_str(c->s, c->cur_name, &len), *key;
	const char *en = ev->name ? tft_session_str(c->s, ev->name, &elen) : NULL;

	if (!name) {
		name = "";
		len = 0;
	}
	if (en && elen && elen == len && memcmp(en, name, len) == 0) {
		name_len = len; /* the key is the name, as for a track without a dot */
		key = name;
		key_len = len;
	} else if (en && elen && elen + 1 < len && memcmp(en, name, elen) == 0 && name[elen] == '.') {
		name_len = elen;
		key = name + elen + 1;
		key_len = len - elen - 1;
	} else {
		name_len = tft_export_chrome_counter_split(name, len, &key, &key_len);
	}
	need = tft_json_escape_bound(name_len) + tft_json_escape_bound(key_len) + 16;
	if (need > c->cnt_cap) {
		char *nb = realloc(c->cnt_buf, need);
		if (!nb)
			return c->status = TFT_ENOMEM;
		c->cnt_buf = nb;
		c->cnt_cap = need;
	}
	char *o = c->cnt_buf;
	memcpy(o, "\"name\":\"", 8);
	o += 8;
	o += tft_json_escape(o, name, name_len);
	*o++ = '"';
	c->cnt_name_len = (size_t)(o - c->cnt_buf);
	*o++ = '"';
	o += tft_json_escape(o, key, key_len);
	memcpy(o, "\":", 2);
	o += 2;
	c->cnt_key_len = (size_t)(o - c->cnt_buf) - c->cnt_name_len;
	c->cnt_ready = true;
	return 0;
}

/* {"ph":"C","name":A,"pid":P,"ts":us,"args":{B:v}} */
static void emit_counter(struct chrome *c, const struct tft_event *ev)
{
	if (!c->cnt_ready && setup_counter_track(c, ev))
		return;
	c->n.counters++;
	begin_event(c);
	PUT(c, "{\"ph\":\"C\",");
	tft_json_write_raw(c->w, c->cnt_buf, c->cnt_name_len);
	if (ev->cat) {
		PUT(c, ",\"cat\":");
		put_str(c, ev->cat);
	}
	/* Counters are process-scoped in Chrome: pid only. */
	tft_json_write_raw(c->w, c->cur->frag, c->cur->pid_len);
	PUT(c, ",\"ts\":");
	tft_json_write_raw_ns_us(c->w, ev->ts_ns);
	PUT(c, ",\"args\":{");
	tft_json_write_raw(c->w, c->cnt_buf + c->cnt_name_len, c->cnt_key_len);
	tft_json_write_raw_double(c->w, ev->value, false);
	PUT(c, "}}");
}

static int on_event(void *ctx, const struct tft_event *ev)
{
	struct chrome *c = ctx;

	if (ev->flags & TFT_EVF_SUMMARY)
		return 0;
	switch (c->cur->kind) {
	case TFT_TRACK_ASYNC:
	case TFT_TRACK_OBJECT:
		if (ev->kind == TFT_EV_COUNTER)
			emit_counter(c, ev);
		else
			emit_async(c, ev);
		break;
	default:
		if (ev->kind == TFT_EV_COUNTER)
			emit_counter(c, ev);
		else
			emit_nested(c, ev);
	}
	if (tft_unlikely(c->w->status || c->status))
		return 1;
	return 0;
}

/* ---- ids: Chrome pids and tids ----------------------------------------- */

size_t tft_export_chrome_counter_split(const char *name, size_t len, const char **key,
				       size_t *key_len)
{
	const char *dot = NULL;

	for (size_t i = len; i > 0; i--)
		if (name[i - 1] == '.') {
			dot = name + i - 1;
			break;
		}
	if (!dot || dot == name || dot == name + len - 1) {
		*key = name;
		*key_len = len;
		return len;
	}
	*key = dot + 1;
	*key_len = len - (size_t)(dot + 1 - name);
	return (size_t)(dot - name);
}

static bool is_nested_kind(uint32_t kind)
{
	return kind == TFT_TRACK_THREAD || kind == TFT_TRACK_DEVICE || kind == TFT_TRACK_GPU_STREAM ||
	       kind == TFT_TRACK_COMM;
}

struct idkey {
	int64_t group; /* process id for tids; 0 for pids */
	int64_t v;
	uint32_t owner;
};

static int cmp_idkey(const void *pa, const void *pb)
{
	const struct idkey *a = pa, *b = pb;

	if (a->group != b->group)
		return a->group < b->group ? -1 : 1;
	if (a->v != b->v)
		return a->v < b->v ? -1 : 1;
	return a->owner < b->owner ? -1 : a->owner > b->owner;
}

static int64_t next_free(int64_t max_used, uint64_t *k)
{
	/* Synthetic ids go above the largest id in use (wrapping is not a concern
	 * for real traces; saturate to stay defined). */
	int64_t r;

	if (__builtin_add_overflow(max_used, (int64_t)++*k, &r))
		r = INT64_MIN + (int64_t)*k;
	return r;
}

/*
 * Pids: a process keeps its pid unless an earlier process has it. Tids:
 * thread/device/stream/comm tracks keep theirs unless an earlier track of the
 * same process has it; counter, async and object tracks and the duplicates
 * get synthetic ids above the largest in use, so every track is one (pid, tid).
 */
static int assign_ids(struct chrome *c)
{
	uint32_t np = c->nprocs, nt = c->ntracks;
	size_t nk = (np > nt ? np : nt) + 1;
	struct idkey *keys = malloc(nk * sizeof(*keys));
	bool *keep = calloc(nk, 1);
	int64_t *maxtid = NULL;
	uint64_t k = 0;
	int64_t maxpid = 0;
	size_t n = 0;

	if (!keys || !keep)
		goto oom;
	for (uint32_t i = 0; i < np; i++) {
		const struct tft_process *p = tft_session_process(c->s, i);
		keys[n++] = (struct idkey){ 0, p ? p->pid : 0, i };
	}
	qsort(keys, n, sizeof(*keys), cmp_idkey);
	for (size_t i = 0; i < n; i++) {
		keep[keys[i].owner] = i == 0 || keys[i].v != keys[i - 1].v;
		if (i == 0 || keys[i].v > maxpid)
			maxpid = keys[i].v;
	}
	for (uint32_t i = 0; i < np; i++) {
		const struct tft_process *p = tft_session_process(c->s, i);
		c->pids[i] = keep[i] && p ? p->pid : next_free(maxpid, &k);
	}

	maxtid = calloc(np + 1, sizeof(*maxtid));
	if (!maxtid)
		goto oom;
	memset(keep, 0, nk);
	n = 0;
	for (uint32_t i = 0; i < nt; i++) {
		const struct tft_track *t = tft_session_track(c->s, i);
		if (t && is_nested_kind(t->kind) && t->process < np)
			keys[n++] = (struct idkey){ t->process, t->tid, i };
	}
	qsort(keys, n, sizeof(*keys), cmp_idkey);
	for (size_t i = 0; i < n; i++) {
		bool first_of_group = i == 0 || keys[i].group != keys[i - 1].group;
		keep[keys[i].owner] = first_of_group || keys[i].v != keys[i - 1].v;
		if (first_of_group || keys[i].v > maxtid[keys[i].group])
			maxtid[keys[i].group] = keys[i].v;
	}
	/* Per process, count synthetic tids from the top of that process's range. */
	uint64_t *ks = calloc(np + 1, sizeof(*ks));
	if (!ks)
		goto oom;
	for (uint32_t i = 0; i < nt; i++) {
		const struct tft_track *t = tft_session_track(c->s, i);
		struct track_out *to = &c->tracks[i];
		uint32_t proc = t && t->process < np ? t->process : np;
		int64_t pid = proc < np ? c->pids[proc] : -1;
		char *o = to->frag;

		to->kind = t ? t->kind : TFT_TRACK_THREAD;
		to->tid = keep[i] && t ? t->tid : next_free(maxtid[proc], &ks[proc]);
		memcpy(o, ",\"pid\":", 7);
		o += 7;
		o += tft_json_fmt_int(o, pid);
		to->pid_len = (uint8_t)(o - to->frag);
		memcpy(o, ",\"tid\":", 7);
		o += 7;
		o += tft_json_fmt_int(o, to->tid);
		to->frag_len = (uint8_t)(o - to->frag);
	}
	free(ks);
	free(maxtid);
	free(keys);
	free(keep);
	return 0;
oom:
	free(maxtid);
	free(keys);
	free(keep);
	return TFT_ENOMEM;
}

/* ---- metadata events ---------------------------------------------------- */

static void put_meta_head(struct chrome *c, const char *what, int64_t pid)
{
	begin_event(c);
	PUT(c, "{\"ph\":\"M\",\"name\":\"");
	tft_json_write_raw(c->w, what, strlen(what));
	PUT(c, "\",\"pid\":");
	tft_json_write_raw_int(c->w, pid);
}

/* A process's labels as viewers show them: its own, then its host and rank (those it has). */
static void put_labels(struct chrome *c, const struct tft_process *p)
{
	size_t n = 0;
	const char *own = p->labels ? tft_session_str(c->s, p->labels, &n) : "";
	const char *host = p->host ? tft_session_str(c->s, p->host, NULL) : "";
	char buf[1024];
	size_t k;

	k = (size_t)snprintf(buf, sizeof(buf), "%.*s", (int)(n > 600 ? 600 : n), own);
	if (host[0])
		k += (size_t)snprintf(buf + k, sizeof(buf) - k, "%shost %.*s", k ? ", " : "", 300, host);
	if (p->rank >= 0 && k < sizeof(buf))
		k += (size_t)snprintf(buf + k, sizeof(buf) - k, "%srank %d", k ? ", " : "", (int)p->rank);
	tft_json_write_raw_str(c->w, buf, k < sizeof(buf) ? k : sizeof(buf) - 1);
}

/* Processes by worker ((host, rank) of its first process), then sort index, then id. */
struct sort_key {
	uint32_t worker, id;
	int32_t sort_index;
};

static int cmp_sort_key(const void *a, const void *b)
{
	const struct sort_key *x = a, *y = b;

	if (x->worker != y->worker)
		return x->worker < y->worker ? -1 : 1;
	if (x->sort_index != y->sort_index)
		return x->sort_index < y->sort_index ? -1 : 1;
	return x->id < y->id ? -1 : (x->id > y->id);
}

/*
 * process_sort_index per process: its own, unless the session merges
 * several workers (hosts or ranks); then each worker's processes together,
 * workers in the order of their first process (Chrome and Perfetto order
 * processes by sort index, and the workers' own indexes repeat).
 */
static int plan_sort(struct chrome *c)
{
	struct sort_key *k;
	uint32_t nworkers = 0;

	if (!c->nprocs)
		return 0;
	c->sort = malloc((size_t)c->nprocs * sizeof(*c->sort));
	k = malloc((size_t)c->nprocs * sizeof(*k));
	if (!c->sort || !k) {
		free(k);
		return TFT_ENOMEM;
	}
	for (uint32_t i = 0; i < c->nprocs; i++) {
		const struct tft_process *p = tft_session_process(c->s, i);
		uint32_t w = 0;

		c->sort[i] = p ? p->sort_index : 0;
		for (; w < i; w++) { /* the worker of the first process with the same host and rank */
			const struct tft_process *q = tft_session_process(c->s, w);

			if (p && q && q->host == p->host && q->rank == p->rank)
				break;
		}
		k[i] = (struct sort_key){ w == i ? nworkers++ : k[w].worker, i, p ? p->sort_index : 0 };
	}
	if (nworkers > 1) {
		qsort(k, c->nprocs, sizeof(*k), cmp_sort_key);
		for (uint32_t i = 0; i < c->nprocs; i++)
			c->sort[k[i].id] = (int32_t)i;
	}
	free(k);
	return 0;
}

static void emit_metadata_events(struct chrome *c)
{
	for (uint32_t i = 0; i < c->nprocs; i++) {
		const struct tft_process *p = tft_session_process(c->s, i);
		if (!p)
			continue;
		if (p->name) {
			put_meta_head(c, "process_name", c->pids[i]);
			PUT(c, ",\"args\":{\"name\":");
			put_str(c, p->name);
			PUT(c, "}}");
		}
		if (p->labels || p->host || p->rank >= 0) {
			/* host and rank where viewers show them (metadata keeps them apart) */
			put_meta_head(c, "process_labels", c->pids[i]);
			PUT(c, ",\"args\":{\"labels\":");
			put_labels(c, p);
			PUT(c, "}}");
		}
		put_meta_head(c, "process_sort_index", c->pids[i]);
		PUT(c, ",\"args\":{\"sort_index\":");
		tft_json_write_raw_int(c->w, c->sort ? c->sort[i] : p->sort_index);
		PUT(c, "}}");
	}
	for (uint32_t i = 0; i < c->ntracks; i++) {
		const struct tft_track *t = tft_session_track(c->s, i);
		if (!t || t->process >= c->nprocs)
			continue;
		if (t->name) {
			put_meta_head(c, "thread_name", c->pids[t->process]);
			PUT(c, ",\"tid\":");
			tft_json_write_raw_int(c->w, c->tracks[i].tid);
			PUT(c, ",\"args\":{\"name\":");
			put_str(c, t->name);
			PUT(c, "}}");
		}
		put_meta_head(c, "thread_sort_index", c->pids[t->process]);
		PUT(c, ",\"tid\":");
		tft_json_write_raw_int(c->w, c->tracks[i].tid);
		PUT(c, ",\"args\":{\"sort_index\":");
		tft_json_write_raw_int(c->w, t->sort_index);
		PUT(c, "}}");
	}
}

/* ---- flows -------------------------------------------------------------- */

struct flow_ctx {
	struct chrome *c; /* borrowed */
	struct tft_hmap ids; /* owned: the set of ids written */
	uint64_t max_id;
	uint64_t next_synth;
	struct tft_flow *dups; /* owned; flows whose id was taken, written last */
	size_t ndups, cap_dups;
};

/* Insert id; false if it was already there (or out of memory: c->status). */
static bool id_insert(struct flow_ctx *f, uint64_t id)
{
	uint32_t v = 0;
	int rc = tft_hmap_add(&f->ids, &id, (uint32_t)tft_hash_u64(id), &v);

	if (rc < 0)
		f->c->status = TFT_ENOMEM;
	return rc == 0;
}

static void put_flow_end(struct chrome *c, const struct tft_flow *fl, uint64_t id, bool start)
{
	uint32_t track = start ? fl->src_track : fl->dst_track;
	const struct track_out *saved = c->cur;

	c->cur = &c->tracks[track];
	begin_event(c);
	put_head(c, start ? "s" : "f", fl->name, 0, start ? fl->src_ts_ns : fl->dst_ts_ns);
	c->cur = saved;
	PUT(c, ",\"cat\":");
	put_str(c, fl->cat);
	put_id(c, id);
	if (!start && (fl->flags & TFT_FLOWF_BIND_ENCLOSING))
		PUT(c, ",\"bp\":\"e\"");
	PUT(c, "}");
}

static void put_flow(struct chrome *c, const struct tft_flow *fl, uint64_t id)
{
	bool has_src = fl->src_track < c->ntracks, has_dst = fl->dst_track < c->ntracks;

	if (!has_src && !has_dst)
		return;
	c->n.flows++;
	if (has_src)
		put_flow_end(c, fl, id, true);
	if (has_dst)
		put_flow_end(c, fl, id, false);
}

static int on_flow(void *ctx, const struct tft_flow *fl)
{
	struct flow_ctx *f = ctx;

	if (fl->flow_id > f->max_id)
		f->max_id = fl->flow_id;
	if (id_insert(f, fl->flow_id)) {
		put_flow(f->c, fl, fl->flow_id);
	} else {
		if (f->c->status)
			return 1;
		/* A repeated id (merged inputs): renumber it after the scan. */
		if (tft_grow_size_ex((void **)&f->dups, &f->cap_dups, f->ndups + 1, sizeof(*f->dups), 64, 0)) {
			f->c->status = TFT_ENOMEM;
			return 1;
		}

		f->dups[f->ndups++] = *fl;
	}
	return f->c->w->status ? 1 : 0;
}

static int emit_flows(struct chrome *c, struct tft_error *err)
{
	struct flow_ctx f = { .c = c };
	int rc;

	tft_hmap_init(&f.ids, 1);
	rc = tft_session_flows(c->s, on_flow, &f, err);

	if (rc == 0 && !c->status) {
		f.next_synth = f.max_id;
		for (size_t i = 0; i < f.ndups && !c->w->status; i++) {
			uint64_t id;
			do
				id = ++f.next_synth;
			while (!id_insert(&f, id) && !c->status);
			put_flow(c, &f.dups[i], id);
		}
	}
	tft_hmap_fini(&f.ids);
	free(f.dups);
	return rc;
}

/* ---- steps ------------------------------------------------------------- */

static int index_steps(struct chrome *c)
{
	uint32_t n = tft_session_step_count(c->s);
	uint32_t cap = 16;

	if (n == 0)
		return 0;
	while (cap < 2 * n)
		cap *= 2;
	c->step_slots = calloc(cap, sizeof(*c->step_slots));
	c->step_seen = calloc(n, sizeof(*c->step_seen));
	if (!c->step_slots || !c->step_seen)
		return TFT_ENOMEM;
	c->step_mask = cap - 1;
	c->nsteps = n;
	for (uint32_t i = 0; i < n; i++) {
		const struct tft_step *st = tft_session_step(c->s, i);
		if (!st)
			continue;
		uint32_t h = (uint32_t)tft_hash_u64((uint64_t)st->start_ns) & c->step_mask;
		while (c->step_slots[h])
			h = (h + 1) & c->step_mask;
		c->step_slots[h] = i + 1;
	}
	return 0;
}

static void put_kv_str(struct tft_json_writer *w, const char *k, const char *v)
{
	tft_json_write_key(w, k);
	tft_json_write_cstr(w, v ? v : "");
}

static void emit_trailer(struct chrome *c)
{
	struct tft_json_writer *w = c->w;
	struct tft_session_summary sum;

	tft_session_get_summary(c->s, &sum);
	tft_json_write_key(w, "displayTimeUnit");
	tft_json_write_cstr(w, "ns");
	tft_json_write_key(w, "metadata");
	tft_json_write_begin_object(w);
	put_kv_str(w, "exporter", "tftracer " TFT_VERSION_STRING);
	put_kv_str(w, "source_format", sum.format);
	put_kv_str(w, "producer", sum.producer);
	tft_json_write_key(w, "start_ns");
	tft_json_write_int(w, sum.start_ns);
	tft_json_write_key(w, "end_ns");
	tft_json_write_int(w, sum.end_ns);
	tft_json_write_key(w, "dropped");
	tft_json_write_uint(w, sum.dropped);
	tft_json_write_key(w, "unmatched_flows");
	tft_json_write_uint(w, sum.unmatched_flows);
	tft_json_write_key(w, "unclosed_slices");
	tft_json_write_uint(w, sum.unclosed_slices);

	/* What Chrome's fields cannot carry: host, rank, track kinds, steps. */
	tft_json_write_key(w, "processes");
	tft_json_write_begin_array(w);
	for (uint32_t i = 0; i < c->nprocs; i++) {
		const struct tft_process *p = tft_session_process(c->s, i);
		if (!p)
			continue;
		tft_json_write_begin_object(w);
		tft_json_write_key(w, "pid");
		tft_json_write_int(w, c->pids[i]);
		tft_json_write_key(w, "source_pid");
		tft_json_write_int(w, p->pid);
		put_kv_str(w, "name", tft_session_str(c->s, p->name, NULL));
		put_kv_str(w, "host", tft_session_str(c->s, p->host, NULL));
		tft_json_write_key(w, "rank");
		tft_json_write_int(w, p->rank);
		/* the process's own labels and sort index (the events show them with host and rank) */
		put_kv_str(w, "labels", tft_session_str(c->s, p->labels, NULL));
		tft_json_write_key(w, "sort_index");
		tft_json_write_int(w, p->sort_index);
		tft_json_write_end_object(w);
	}
	tft_json_write_end_array(w);
	tft_json_write_key(w, "tracks");
	tft_json_write_begin_array(w);
	for (uint32_t i = 0; i < c->ntracks; i++) {
		const struct tft_track *t = tft_session_track(c->s, i);
		if (!t || t->process >= c->nprocs)
			continue;
		tft_json_write_begin_object(w);
		tft_json_write_key(w, "pid");
		tft_json_write_int(w, c->pids[t->process]);
		tft_json_write_key(w, "tid");
		tft_json_write_int(w, c->tracks[i].tid);
		tft_json_write_key(w, "source_tid");
		tft_json_write_int(w, t->tid);
		put_kv_str(w, "name", tft_session_str(c->s, t->name, NULL));
		put_kv_str(w, "kind", tft_track_kind_name((int)t->kind));
		if (t->flags & TFT_TRACKF_CONCURRENT) {
			tft_json_write_key(w, "concurrent");
			tft_json_write_bool(w, true);
		}
		if (t->flags & TFT_TRACKF_DERIVED) {
			tft_json_write_key(w, "derived");
			tft_json_write_bool(w, true);
		}
		tft_json_write_end_object(w);
	}
	tft_json_write_end_array(w);
	tft_json_write_key(w, "steps");
	tft_json_write_begin_array(w);
	for (uint32_t i = 0; i < c->nsteps; i++) {
		const struct tft_step *st = tft_session_step(c->s, i);
		if (!st)
			continue;
		tft_json_write_begin_object(w);
		tft_json_write_key(w, "index");
		tft_json_write_int(w, st->index);
		put_kv_str(w, "name", tft_session_str(c->s, st->name, NULL));
		tft_json_write_key(w, "pid");
		if (st->process < c->nprocs)
			tft_json_write_int(w, c->pids[st->process]);
		else
			tft_json_write_null(w);
		tft_json_write_key(w, "start_ns");
		tft_json_write_int(w, st->start_ns);
		tft_json_write_key(w, "dur_ns");
		tft_json_write_int(w, st->dur_ns);
		tft_json_write_key(w, "traced");
		tft_json_write_bool(w, st->traced);
		tft_json_write_key(w, "slice");
		tft_json_write_bool(w, c->step_seen[i]);
		tft_json_write_end_object(w);
		if (!c->step_seen[i])
			c->n.steps_in_metadata++;
	}
	tft_json_write_end_array(w);
	tft_json_write_end_object(w);
}

/*
 * Steps no slice stands for (a runtime's, a RunMetadata's): X events,
 * category "tftracer.step", so that Perfetto and chrome://tracing show them,
 * on "Steps" threads of their process: first-fit lanes, a thread each, so
 * that no two overlap on one thread (X events must nest). Steps that name
 * no process get a process "Steps" of their own. The importer takes these
 * events as steps again (metadata.steps replaces them when present).
 */
#define STEP_LANES_MAX 1024

struct step_ref {
	uint32_t group; /* process index, or nprocs: none */
	uint32_t step;
	int64_t start, end;
};

static int cmp_step_ref(const void *a, const void *b)
{
	const struct step_ref *x = a, *y = b;

	if (x->group != y->group)
		return x->group < y->group ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end > y->end ? -1 : x->end < y->end; /* longer first */
}

static int emit_step_events(struct chrome *c)
{
	uint32_t np = c->nprocs, n = 0;
	struct step_ref *refs;
	int64_t *tmin, *tmax, *lane_end = NULL, none_pid = 0, base = 0, pid = 0;
	uint8_t *has;
	int rc = 0;

	if (!c->nsteps)
		return 0;
	refs = malloc((size_t)c->nsteps * sizeof(*refs));
	tmin = calloc((size_t)np + 1, sizeof(*tmin));
	tmax = calloc((size_t)np + 1, sizeof(*tmax));
	has = calloc((size_t)np + 1, 1);
	lane_end = malloc(STEP_LANES_MAX * sizeof(*lane_end));
	if (!refs || !tmin || !tmax || !has || !lane_end) {
		rc = TFT_ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < c->nsteps; i++) {
		const struct tft_step *st = tft_session_step(c->s, i);

		if (!st || c->step_seen[i])
			continue;
		refs[n].group = st->process < np ? st->process : np;
		refs[n].step = i;
		refs[n].start = st->start_ns;
		if (__builtin_add_overflow(st->start_ns, st->dur_ns, &refs[n].end))
			refs[n].end = INT64_MAX;
		n++;
	}
	if (!n)
		goto out;
	qsort(refs, n, sizeof(*refs), cmp_step_ref);
	/* each process's tids in use: the lanes go above them (or below, at the top of the range) */
	for (uint32_t i = 0; i < c->ntracks; i++) {
		const struct tft_track *t = tft_session_track(c->s, i);
		int64_t tid = c->tracks[i].tid;

		if (!t || t->process >= np)
			continue;
		if (!has[t->process] || tid < tmin[t->process])
			tmin[t->process] = tid;
		if (!has[t->process] || tid > tmax[t->process])
			tmax[t->process] = tid;
		has[t->process] = 1;
	}
	for (uint32_t i = 0; i < np; i++)
		if (c->pids[i] >= none_pid)
			none_pid = c->pids[i] < INT64_MAX ? c->pids[i] + 1 : c->pids[i];
	for (uint32_t k = 0, nlanes = 0; k < n && !c->w->status; k++) {
		const struct step_ref *r = &refs[k];
		const struct tft_step *st = tft_session_step(c->s, r->step);
		uint32_t lane;

		if (k == 0 || r->group != refs[k - 1].group) {
			uint32_t g = r->group;

			nlanes = 0;
			pid = g < np ? c->pids[g] : none_pid;
			if (!has[g])
				base = 0;
			else if (tmax[g] <= INT64_MAX - STEP_LANES_MAX)
				base = tmax[g] + 1;
			else if (tmin[g] >= INT64_MIN + STEP_LANES_MAX)
				base = tmin[g] - STEP_LANES_MAX;
			else
				base = 0; /* (tids at both ends of the range: shared, never seen) */
			if (g == np) {
				put_meta_head(c, "process_name", pid);
				PUT(c, ",\"args\":{\"name\":\"Steps\"}}");
			}
		}
		for (lane = 0; lane < nlanes && lane_end[lane] > r->start; lane++)
			;
		if (lane == nlanes) {
			if (nlanes == STEP_LANES_MAX) {
				lane = nlanes - 1; /* (so many overlapping: they share the last) */
			} else {
				nlanes++;
				put_meta_head(c, "thread_name", pid);
				PUT(c, ",\"tid\":");
				tft_json_write_raw_int(c->w, base + lane);
				PUT(c, ",\"args\":{\"name\":\"Steps\"}}");
			}
		}
		lane_end[lane] = r->end;
		begin_event(c);
		PUT(c, "{\"ph\":\"X\",\"cat\":\"tftracer.step\",\"name\":");
		put_str(c, st->name);
		PUT(c, ",\"pid\":");
		tft_json_write_raw_int(c->w, pid);
		PUT(c, ",\"tid\":");
		tft_json_write_raw_int(c->w, base + lane);
		PUT(c, ",\"ts\":");
		tft_json_write_raw_ns_us(c->w, st->start_ns);
		PUT(c, ",\"dur\":");
		tft_json_write_raw_ns_us(c->w, st->dur_ns);
		PUT(c, ",\"args\":{\"step\":");
		tft_json_write_raw_int(c->w, st->index);
		if (st->traced) /* (PUT takes a literal: its length is its size) */
			PUT(c, ",\"traced\":true}}");
		else
			PUT(c, ",\"traced\":false}}");
	}
out:
	free(refs);
	free(tmin);
	free(tmax);
	free(has);
	free(lane_end);
	return rc;
}

/* ---- driver ------------------------------------------------------------- */

int tft_export_chrome(struct tft_session *s, struct tft_json_writer *w,
		      struct tft_export_counts *counts, struct tft_error *err)
{
	struct chrome c = { .s = s, .w = w, .first = true, .next_id = 1 };
	struct track_out none = { .tid = 0, .kind = TFT_TRACK_THREAD };
	int rc = 0;

	c.nprocs = tft_session_process_count(s);
	c.ntracks = tft_session_track_count(s);
	c.pids = calloc(c.nprocs + 1, sizeof(*c.pids));
	c.tracks = calloc(c.ntracks + 1, sizeof(*c.tracks));
	if (!c.pids || !c.tracks || assign_ids(&c) || index_steps(&c) || plan_sort(&c)) {
		rc = tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
		goto out;
	}
	c.cur = &none;

	tft_json_write_begin_object(w);
	tft_json_write_key(w, "traceEvents");
	tft_json_write_begin_array(w);
	PUT(&c, "\n");
	emit_metadata_events(&c);

	for (uint32_t i = 0; i < c.ntracks && !w->status && !c.status; i++) {
		const struct tft_track *t = tft_session_track(s, i);
		if (!t)
			continue;
		c.cur = &c.tracks[i];
		c.cur_name = t->name;
		c.cnt_ready = false;
		rc = tft_session_scan(s, i, INT64_MIN, INT64_MAX, 0, on_event, &c, err);
		if (rc && !w->status && !c.status)
			goto out; /* the scan's own error */
		rc = 0;
	}
	c.cur = &none;
	if (!w->status && !c.status) {
		rc = emit_flows(&c, err);
		if (rc && !w->status && !c.status)
			goto out;
		rc = 0;
	}
	if (!w->status && !c.status && emit_step_events(&c))
		c.status = TFT_ENOMEM;
	PUT(&c, "\n");
	tft_json_write_end_array(w);
	emit_trailer(&c);
	tft_json_write_end_object(w);
	PUT(&c, "\n");

	if (c.status)
		rc = tft_error_set(err, c.status, -1, "out of memory");
	else if (w->status)
		rc = tft_error_set(err, w->status, -1, "writing the Chrome trace: %s",
				   tft_strerror(w->status));
out:
	if (counts)
		*counts = c.n;
	free(c.pids);
	free(c.sort);
	free(c.tracks);
	free(c.str_off);
	free(c.str_len);
	free(c.arena);
	free(c.step_slots);
	free(c.step_seen);
	free(c.cnt_buf);
	tft_json_memo_free(&c.json_ok);
	return rc;
}
