/* SPDX-License-Identifier: MIT */
/*
 * tf.timeline exporter: rebuilds TensorFlow's timeline.py Chrome trace
 * (pids, first-fit lanes, op args, DataFlow flows, tensor objects, memory
 * counters and their peaks) from the node events of a session.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "core/strtab.h"
#include "export/export_tftimeline.h"

#define NOSTR UINT32_MAX
#define MAX_NEST 8

/* ---- small containers ------------------------------------------------------ */


/* Byte arena: blocks never move, so slices into it stay valid. */
struct arena_block {
	struct arena_block *next; /* owned */
	size_t used, cap;
	char data[];
};

struct arena {
	struct arena_block *head; /* owned list, newest first */
};

static char *arena_put(struct arena *a, const char *s, size_t n)
{
	struct arena_block *b = a->head;

	if (!b || b->cap - b->used < n) {
		size_t cap = n > 65536 ? n : 65536;

		b = malloc(sizeof(*b) + cap);
		if (!b)
			return NULL;
		b->next = a->head;
		b->used = 0;
		b->cap = cap;
		a->head = b;
	}
	memcpy(b->data + b->used, s, n);
	b->used += n;
	return b->data + b->used - n;
}

static void arena_free(struct arena *a)
{
	while (a->head) {
		struct arena_block *n = a->head->next;

		free(a->head);
		a->head = n;
	}
}

/* Growable text buffer. */
struct buf {
	char *p; /* owned */
	size_t len, cap;
	int oom;
};

static void buf_add(struct buf *b, const char *s, size_t n)
{
	if (b->oom || tft_grow_size((void **)&b->p, &b->cap, b->len + n + 1, 1)) {
		b->oom = 1;
		return;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

static void buf_cstr(struct buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

static void buf_int(struct buf *b, int64_t v)
{
	char tmp[24];

	buf_add(b, tmp, tft_json_fmt_int(tmp, v));
}

/* Open-addressing set of indices; hash and equality come from the caller. */
struct imap {
	uint32_t *slot; /* owned: index + 1, 0 = empty */
	uint64_t *hash; /* owned */
	size_t cap, n;
};

typedef bool (*imap_eq_fn)(void *ctx, uint32_t idx);

static uint32_t imap_find(const struct imap *m, uint64_t h, imap_eq_fn eq, void *ctx)
{
	if (!m->cap)
		return NOSTR;
	for (size_t i = h & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (!m->slot[i])
			return NOSTR;
		if (m->hash[i] == h && eq(ctx, m->slot[i] - 1))
			return m->slot[i] - 1;
	}
}

static int imap_add(struct imap *m, uint64_t h, uint32_t idx)
{
	if ((m->n + 1) * 2 > m->cap) {
		size_t nc = m->cap ? m->cap * 2 : 64;
		uint32_t *ns = calloc(nc, sizeof(*ns));
		uint64_t *nh = malloc(nc * sizeof(*nh));

		if (!ns || !nh) {
			free(ns);
			free(nh);
			return TFT_ENOMEM;
		}
		for (size_t i = 0; i < m->cap; i++) {
			size_t j;

			if (!m->slot[i])
				continue;
			for (j = m->hash[i] & (nc - 1); ns[j]; j = (j + 1) & (nc - 1))
				;
			ns[j] = m->slot[i];
			nh[j] = m->hash[i];
		}
		free(m->slot);
		free(m->hash);
		m->slot = ns;
		m->hash = nh;
		m->cap = nc;
	}
	for (size_t i = h & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (!m->slot[i]) {
			m->slot[i] = idx + 1;
			m->hash[i] = h;
			m->n++;
			return 0;
		}
	}
}

static void imap_clear(struct imap *m)
{
	if (m->cap)
		memset(m->slot, 0, m->cap * sizeof(*m->slot));
	m->n = 0;
}

static void imap_free(struct imap *m)
{
	free(m->slot);
	free(m->hash);
	memset(m, 0, sizeof(*m));
}

/* First-fit lanes: a min segment tree over the lane end times. */
struct lanes {
	int64_t *t; /* owned: 2 * cap entries, leaves at [cap, 2 cap) */
	size_t cap, n;
};

static void lanes_set(struct lanes *l, size_t i, int64_t v)
{
	size_t k = l->cap + i;

	l->t[k] = v;
	for (k /= 2; k >= 1; k /= 2)
		l->t[k] = l->t[2 * k] < l->t[2 * k + 1] ? l->t[2 * k] : l->t[2 * k + 1];
}

static int lanes_reset(struct lanes *l)
{
	if (!l->t) {
		l->cap = 64;
		l->t = malloc(2 * l->cap * sizeof(*l->t));
		if (!l->t)
			return TFT_ENOMEM;
	}
	for (size_t i = 0; i < 2 * l->cap; i++)
		l->t[i] = INT64_MAX;
	l->n = 1;
	lanes_set(l, 0, 0); /* timeline.py: lanes = [0] */
	return 0;
}

/* timeline.py's _assign_lanes step: the first lane whose end < start, else a new one. */
static int lanes_assign(struct lanes *l, int64_t start, int64_t end, uint32_t *lane)
{
	size_t k = 1, i;

	if (l->t[1] < start) {
		while (k < l->cap)
			k = l->t[2 * k] < start ? 2 * k : 2 * k + 1;
		i = k - l->cap;
	} else {
		if (l->n == l->cap) {
			size_t nc = l->cap * 2;
			int64_t *nt = malloc(2 * nc * sizeof(*nt));

			if (!nt || l->n >= UINT32_MAX) {
				free(nt);
				return TFT_ENOMEM;
			}
			for (size_t j = 0; j < 2 * nc; j++)
				nt[j] = INT64_MAX;
			memcpy(nt + nc, l->t + l->cap, l->cap * sizeof(*nt));
			for (size_t j = nc - 1; j >= 1; j--)
				nt[j] = nt[2 * j] < nt[2 * j + 1] ? nt[2 * j] : nt[2 * j + 1];
			free(l->t);
			l->t = nt;
			l->cap = nc;
		}
		i = l->n++;
	}
	lanes_set(l, i, end);
	*lane = (uint32_t)i;
	return 0;
}

/* ---- Python json.dumps(indent=4) output ------------------------------------- */

struct pyj {
	struct tft_json_writer *w; /* borrowed */
	int depth;
	bool first[MAX_NEST + 1];
	uint64_t events;
};

static void pyj_newline(struct pyj *j)
{
	static const char spaces[] = "                                        ";

	tft_json_write_raw_char(j->w, '\n');
	tft_json_write_raw(j->w, spaces, (size_t)(4 * j->depth));
}

static void pyj_open(struct pyj *j, char c)
{
	tft_json_write_raw_char(j->w, c);
	j->depth++;
	j->first[j->depth] = true;
}

static void pyj_close(struct pyj *j, char c)
{
	bool empty = j->first[j->depth];

	j->depth--;
	if (!empty)
		pyj_newline(j);
	tft_json_write_raw_char(j->w, c);
}

static void pyj_item(struct pyj *j)
{
	if (!j->first[j->depth])
		tft_json_write_raw_char(j->w, ',');
	j->first[j->depth] = false;
	pyj_newline(j);
}

/* A UTF-8 code point at s[*i] (advanced); invalid bytes give U+FFFD, one byte each. */
static uint32_t utf8_next(const unsigned char *s, size_t len, size_t *i)
{
	unsigned char c = s[*i];
	uint32_t cp, min;
	size_t n, k;

	if (c < 0x80) {
		(*i)++;
		return c;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		n = 1, cp = c & 0x1f, min = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 2, cp = c & 0x0f, min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 3, cp = c & 0x07, min = 0x10000;
	} else {
		(*i)++;
		return 0xfffd;
	}
	for (k = 1; k <= n; k++) {
		if (*i + k >= len || (s[*i + k] & 0xc0) != 0x80) {
			(*i)++;
			return 0xfffd;
		}
		cp = cp << 6 | (s[*i + k] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
		(*i)++;
		return 0xfffd;
	}
	*i += n + 1;
	return cp;
}

/* A string as Python's json.dumps writes it (ensure_ascii: only ' '..'~' unescaped). */
static void pyj_str(struct pyj *j, const char *str, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;

	tft_json_write_raw_char(j->w, '"');
	while (i < len) {
		size_t run = i;
		uint32_t cp;
		char e[12];

		while (run < len && s[run] >= 0x20 && s[run] <= 0x7e && s[run] != '"' && s[run] != '\\')
			run++;
		if (run > i) {
			tft_json_write_raw(j->w, str + i, run - i);
			i = run;
			continue;
		}
		cp = utf8_next(s, len, &i);
		switch (cp) {
		case '"': tft_json_write_raw(j->w, "\\\"", 2); continue;
		case '\\': tft_json_write_raw(j->w, "\\\\", 2); continue;
		case '\n': tft_json_write_raw(j->w, "\\n", 2); continue;
		case '\r': tft_json_write_raw(j->w, "\\r", 2); continue;
		case '\t': tft_json_write_raw(j->w, "\\t", 2); continue;
		case '\b': tft_json_write_raw(j->w, "\\b", 2); continue;
		case '\f': tft_json_write_raw(j->w, "\\f", 2); continue;
		default: break;
		}
		if (cp >= 0x10000) {
			uint32_t v = cp - 0x10000, hi = 0xd800 | (v >> 10), lo = 0xdc00 | (v & 0x3ff);

			e[0] = '\\', e[1] = 'u', e[2] = hex[hi >> 12], e[3] = hex[(hi >> 8) & 15],
			e[4] = hex[(hi >> 4) & 15], e[5] = hex[hi & 15];
			e[6] = '\\', e[7] = 'u', e[8] = hex[lo >> 12], e[9] = hex[(lo >> 8) & 15],
			e[10] = hex[(lo >> 4) & 15], e[11] = hex[lo & 15];
			tft_json_write_raw(j->w, e, 12);
		} else {
			e[0] = '\\', e[1] = 'u', e[2] = hex[cp >> 12], e[3] = hex[(cp >> 8) & 15],
			e[4] = hex[(cp >> 4) & 15], e[5] = hex[cp & 15];
			tft_json_write_raw(j->w, e, 6);
		}
	}
	tft_json_write_raw_char(j->w, '"');
}

static void pyj_key(struct pyj *j, const char *k)
{
	pyj_item(j);
	pyj_str(j, k, strlen(k));
	tft_json_write_raw(j->w, ": ", 2);
}

static void pyj_kint(struct pyj *j, const char *k, int64_t v)
{
	pyj_key(j, k);
	tft_json_write_raw_int(j->w, v);
}

static void pyj_kstr(struct pyj *j, const char *k, const char *s, size_t n)
{
	pyj_key(j, k);
	pyj_str(j, s, n);
}

/* The common head of _create_event: ph, cat, name, pid, tid, ts. */
static void pyj_event(struct pyj *j, const char *ph, const char *cat, const char *name,
		      size_t name_len, int64_t pid, int64_t tid, int64_t ts)
{
	pyj_item(j);
	pyj_open(j, '{');
	pyj_kstr(j, "ph", ph, 1);
	pyj_kstr(j, "cat", cat, strlen(cat));
	pyj_kstr(j, "name", name, name_len);
	pyj_kint(j, "pid", pid);
	pyj_kint(j, "tid", tid);
	pyj_kint(j, "ts", ts);
	j->events++;
}

/* ---- model --------------------------------------------------------------------- */

enum {
	K_UNKNOWN = 0, K_OTHER, K_LABEL, K_OUTPUT, K_START_US, K_END_REL_US, K_INDEX, K_OP, K_NAME,
	K_INPUT, /* "input<N>" (a tf.timeline JSON import) */
	K_ENTRY, /* "dev_stats_entry": the node's dev_stats entry, when its device repeats */
	K_STEPPOS, /* "step_position": the session step the node's RunMetadata became */
};

struct tl_node {
	int64_t start_us, dur_us; /* timeline.py's all_start_micros, all_end_rel_micros */
	int64_t ts_ns, dur_ns;
	int64_t stats_index;      /* node_stats_index arg, -1 if absent */
	int64_t entry;            /* dev_stats_entry arg, -1 if absent */
	uint64_t seq;             /* load order */
	uint32_t dev;
	uint32_t name;            /* string ids (session) */
	uint32_t label;           /* NOSTR: no timeline_label arg */
	uint32_t output;          /* the "output" JSON arg, NOSTR if none */
	uint32_t op_arg, name_arg;
	uint32_t in_first, in_count; /* "input<N>" args in t->inputs (no label only) */
	int64_t track_tid;        /* the tid of its track */
	uint32_t track;           /* session track id */
	uint32_t lane;
	bool by_index; /* its device orders nodes by node_stats_index */
};

struct tl_input {
	int64_t index; /* N of "input<N>" */
	uint32_t str;  /* string id */
};

/*
 * A track in a StepStats (group). A track that several steps share (a
 * worker's device continued over the session's RunMetadata) is one entry
 * per step, each taking the events whose step_position arg is its step.
 */
struct tl_track {
	uint32_t id;
	uint32_t group; /* index into groups */
	uint32_t dev;   /* index into devs */
	const char *dev_name; /* borrowed (session) */
	size_t dev_len;
	bool by_pos;    /* only the events whose step_position arg is pos */
	int64_t pos;
};

struct tl_dev {
	uint32_t group;
	uint32_t process;
	const char *name; /* borrowed (session) */
	size_t name_len;
	int64_t compute_pid, tensors_pid;
	bool gputrace;
	bool all_indexed;
	bool any_label; /* some node has a timeline_label or node_stats_index (StepStats): lanes are computed */
	uint32_t first, count; /* its nodes in the group's sorted array */
	uint32_t primary;      /* a repeated device's later dev_stats entry: its first entry's dev */
};

/* A pair of pids and its process names ("<device> Compute", "<device> Tensors"). */
struct tl_pids {
	const char *name; /* borrowed (session) */
	size_t name_len;
	int64_t compute_pid, tensors_pid;
};

struct tl_group {
	uint32_t step; /* session step index, TFT_NONE */
	uint32_t first_dev, ndevs;
	uint32_t first_track, ntracks; /* in the sorted t->tracks */
	uint32_t first_ent, nents;     /* its dev_stats entries' devs in t->ents (0: not stored) */
};

struct tl_tensor {
	const char *name; /* arena */
	size_t name_len;
	int64_t object_id;
	int64_t create_us;
	int64_t pid;
	const char *alloc; /* arena; allocator name */
	size_t alloc_len;
	int64_t bytes;
	int64_t last_unref;
	int64_t flow_ts, flow_pid;
	uint32_t flow_tid;
};

/* A DataFlow flow of the session (a tf.timeline JSON import's arrows), both ends seen. */
struct tl_dflow {
	uint32_t src_track, dst_track;
	int64_t src_ts_ns, dst_ts_ns;
	uint32_t name;
	uint32_t used; /* written once */
	uint64_t seq;  /* session order */
};

struct tl_alloc_ev {
	int64_t time, bytes;
	const char *name; /* borrowed: the tensor's name (arena) */
	size_t name_len;
	uint32_t tensor;
};

struct tl {
	struct tft_session *s;   /* borrowed */
	struct tft_error *err;   /* borrowed */
	struct pyj *out;         /* borrowed; NULL: analysis only */
	bool show_dataflow, show_memory;
	bool track_tensors; /* something needs the tensors */
	struct tft_tftimeline_counts counts;

	uint8_t *keyclass; /* owned: K_* per string id (0 = not looked at yet) */
	size_t nkeyclass;

	struct tl_track *tracks; /* owned */
	size_t ntracks, ctracks;
	struct tl_dev *devs; /* owned */
	size_t ndevs, cdevs;
	struct tl_group *groups; /* owned */
	size_t ngroups, cgroups;
	struct tl_pids *pids; /* owned: in pid order */
	size_t npids, cpids;
	uint32_t *ents; /* owned: per group, the dev of each dev_stats entry (when stored) */
	size_t nents, cents;
	uint32_t load_group;

	/* per group */
	struct tl_node *nodes; /* owned */
	size_t nnodes, cnodes;
	struct tl_input *inputs; /* owned */
	size_t ninputs, cinputs;
	uint32_t load_dev, load_track;
	int64_t load_tid;
	const struct tl_track *load_entry; /* the entry being loaded */
	uint32_t *pos_seen;  /* owned: scan_pos(): the step positions a track's events carry */
	size_t npos_seen, cpos_seen;
	bool pos_missing;    /* scan_pos(): an event without one */
	struct tl_dflow *dflows; /* owned: sorted by destination (dataflow of label-less nodes) */
	size_t ndflows, cdflows;
	bool dflows_loaded;
	struct tl_tensor *tensors; /* owned */
	size_t ntensors, ctensors;
	struct imap tmap;
	struct arena names;
	struct lanes lanes;
	struct tl_alloc_ev *aev; /* owned */
	size_t naev, caev;
	const char **peak_names; /* owned */
	size_t cpeak_names;
	uint8_t *live; /* owned: per tensor, live at the peak */
	size_t clive;
	uint32_t *aorder; /* owned: first tensor of each allocator */
	size_t caorder;
	struct buf tmp;

	int64_t next_pid, next_flow, object_base;
	tft_tftimeline_peak_fn peak_fn;
	void *peak_ctx;
	int stop; /* non-zero value a callback returned */
};

static int nomem(struct tl *t)
{
	return tft_error_set(t->err, TFT_ENOMEM, -1, "tf-timeline: out of memory");
}

static const char *sstr(struct tl *t, uint32_t id, size_t *len)
{
	return tft_session_str(t->s, id, len);
}

static int key_class(struct tl *t, uint32_t id)
{
	static const struct {
		const char *k;
		int c;
	} keys[] = {
		{ "timeline_label", K_LABEL },   { "output", K_OUTPUT },
		{ "all_start_micros", K_START_US }, { "all_end_rel_micros", K_END_REL_US },
		{ "node_stats_index", K_INDEX }, { "op", K_OP },
		{ "name", K_NAME }, { "dev_stats_entry", K_ENTRY }, { "step_position", K_STEPPOS },
	};
	const char *s;

	if (id >= t->nkeyclass) {
		size_t old = t->nkeyclass;

		if (tft_grow_size((void **)&t->keyclass, &t->nkeyclass, (size_t)id + 1, 1))
			return K_OTHER; /* classify as unknown without caching */
		memset(t->keyclass + old, 0, t->nkeyclass - old);
	}
	if (t->keyclass[id])
		return t->keyclass[id];
	s = sstr(t, id, NULL);
	t->keyclass[id] = K_OTHER;
	if (strncmp(s, "input", 5) == 0 && s[5] >= '0' && s[5] <= '9' && strlen(s) < 16 &&
	    strspn(s + 5, "0123456789") == strlen(s + 5))
		t->keyclass[id] = K_INPUT;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (strcmp(s, keys[i].k) == 0)
			t->keyclass[id] = (uint8_t)keys[i].c;
	return t->keyclass[id];
}

static bool contains(const char *s, size_t n, const char *needle)
{
	size_t m = strlen(needle);

	for (size_t i = 0; i + m <= n; i++)
		if (memcmp(s + i, needle, m) == 0)
			return true;
	return false;
}

/* ---- grouping: traced steps -> StepStats, tracks -> devices ---------------------------- */

static uint32_t step_of_track(struct tl *t, const struct tft_track *tr, uint32_t *cursor)
{
	uint32_t n = tft_session_step_count(t->s);

	/* Steps and tracks are both stored in import order: prefer the next step on. */
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t i = pass ? 0 : *cursor; i < n; i++) {
			const struct tft_step *st = tft_session_step(t->s, i);
			int64_t end;

			if (!st || !st->traced)
				continue;
			if (__builtin_add_overflow(st->start_ns, st->dur_ns, &end))
				end = INT64_MAX;
			if (st->start_ns <= tr->min_ts_ns && tr->max_ts_ns <= end) {
				*cursor = i;
				return i;
			}
		}
	}
	return TFT_NONE;
}

struct dev_key {
	struct tl *t;
	uint32_t group, process;
	const char *name;
	size_t len;
};

static bool dev_eq(void *ctx, uint32_t idx)
{
	struct dev_key *k = ctx;
	const struct tl_dev *d = &k->t->devs[idx];

	return d->group == k->group && d->process == k->process && d->name_len == k->len &&
	       memcmp(d->name, k->name, k->len) == 0;
}

static int cmp_tracks(const void *a, const void *b)
{
	const struct tl_track *x = a, *y = b;

	if (x->group != y->group)
		return x->group < y->group ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static uint64_t dev_hash(const struct dev_key *k)
{
	return tft_hash_bytes(k->name, k->len) ^ tft_hash_u64(k->process);
}

/* A device of k->group, last in t->devs (its pids: new_pids(), or an entry's). */
static int new_dev(struct tl *t, const struct dev_key *k)
{
	struct tl_dev *dv;

	if (tft_grow_size((void **)&t->devs, &t->cdevs, t->ndevs + 1, sizeof(*t->devs)))
		return TFT_ENOMEM;
	dv = &t->devs[t->ndevs];
	memset(dv, 0, sizeof(*dv));
	dv->group = k->group;
	dv->process = k->process;
	dv->name = k->name;
	dv->name_len = k->len;
	dv->gputrace = contains(dv->name, dv->name_len, "/stream:") ||
		       contains(dv->name, dv->name_len, "/memcpy");
	dv->primary = (uint32_t)t->ndevs;
	t->groups[k->group].ndevs++;
	t->ndevs++;
	return 0;
}

/* The next pair of pids, named after dv, which takes it. */
static int new_pids(struct tl *t, struct tl_dev *dv)
{
	struct tl_pids *pp;

	if (tft_grow_size((void **)&t->pids, &t->cpids, t->npids + 1, sizeof(*t->pids)))
		return TFT_ENOMEM;
	pp = &t->pids[t->npids++];
	pp->name = dv->name;
	pp->name_len = dv->name_len;
	pp->compute_pid = dv->compute_pid = t->next_pid++;
	pp->tensors_pid = dv->tensors_pid = t->next_pid++;
	return 0;
}

/*
 * The dev_stats entries of group g's StepStats, when the importer stored
 * them (meta "tf.dev_stats.<step>": a device repeated, or one without
 * nodes): timeline.py's _allocate_pids gives every entry a pair of pids in
 * entry order, and a device's events go to its last entry's pair; its
 * _assign_lanes and _show_compute take entry by entry. So each entry is a
 * device here, in entry order, a repeated one with the first's name in m
 * (its nodes carry their entry: on_event()). Not stored, or not valid
 * (a damaged file): the tracks' devices, one pair each.
 */
static int entry_devs(struct tl *t, uint32_t g, struct imap *m)
{
	struct tl_group *gr = &t->groups[g];
	const struct tft_step *st = gr->step != TFT_NONE ? tft_session_step(t->s, gr->step) : NULL;
	uint32_t nstr = tft_session_string_count(t->s), n = 0;
	char key[64];
	const char *v, *p;

	if (!st)
		return 0;
	snprintf(key, sizeof(key), "tf.dev_stats.%u", gr->step);
	v = tft_session_meta(t->s, key);
	if (!v)
		return 0;
	for (p = v; *p;) { /* check: ids separated by single spaces */
		char *e;
		unsigned long id;

		if (*p < '0' || *p > '9')
			return 0;
		errno = 0;
		id = strtoul(p, &e, 10);
		if (errno || id >= nstr || (*e && *e != ' ') || (*e == ' ' && !e[1]))
			return 0;
		p = *e ? e + 1 : e;
		n++;
	}
	if (!n || tft_grow_size((void **)&t->ents, &t->cents, t->nents + n, sizeof(*t->ents)))
		return n ? TFT_ENOMEM : 0;
	gr->first_ent = (uint32_t)t->nents;
	gr->nents = n;
	for (p = v; *p;) {
		char *e;
		uint32_t id = (uint32_t)strtoul(p, &e, 10), d;
		struct dev_key k = { t, g, TFT_NONE, NULL, 0 };
		uint64_t h;

		p = *e ? e + 1 : e;
		k.name = sstr(t, id, &k.len);
		h = dev_hash(&k);
		d = imap_find(m, h, dev_eq, &k);
		if (new_dev(t, &k) || (d == NOSTR && imap_add(m, h, (uint32_t)t->ndevs - 1)))
			return TFT_ENOMEM;
		if (d != NOSTR)
			t->devs[t->ndevs - 1].primary = d;
		t->ents[t->nents++] = (uint32_t)t->ndevs - 1;
	}
	/* pids: a pair per entry; every entry of a device gets its last pair */
	for (uint32_t i = 0; i < n; i++) {
		struct tl_dev *dv = &t->devs[t->ents[gr->first_ent + i]];

		if (new_pids(t, dv))
			return TFT_ENOMEM;
		t->devs[dv->primary].compute_pid = dv->compute_pid;
		t->devs[dv->primary].tensors_pid = dv->tensors_pid;
	}
	for (uint32_t i = 0; i < n; i++) {
		struct tl_dev *dv = &t->devs[t->ents[gr->first_ent + i]];

		dv->compute_pid = t->devs[dv->primary].compute_pid;
		dv->tensors_pid = t->devs[dv->primary].tensors_pid;
	}
	return 0;
}

/* One track (or a part of it, see struct tl_track) into the group of step `step`. */
static int add_entry(struct tl *t, uint32_t id, const struct tft_track *tr, uint32_t step,
		     const struct tl_track *part)
{
	struct tl_track *tt;
	uint32_t g;
	const char *name;
	size_t len = 0;

	g = t->ngroups && t->groups[t->ngroups - 1].step == step ? (uint32_t)t->ngroups - 1 : 0;
	for (; g < t->ngroups && t->groups[g].step != step; g++)
		;
	if (g == t->ngroups) {
		if (tft_grow_size((void **)&t->groups, &t->cgroups, t->ngroups + 1, sizeof(*t->groups)))
			return nomem(t);
		memset(&t->groups[g], 0, sizeof(t->groups[g]));
		t->groups[g].step = step;
		t->ngroups++;
	}
	if (tft_grow_size((void **)&t->tracks, &t->ctracks, t->ntracks + 1, sizeof(*t->tracks)))
		return nomem(t);
	tt = &t->tracks[t->ntracks++];
	if (part)
		*tt = *part;
	else
		memset(tt, 0, sizeof(*tt));
	tt->id = id;
	tt->group = g;
	name = sstr(t, tr->name, &len);
	/* The RunMetadata importer keeps comm ops of a device on "<device> (comm)". */
	if (tr->kind == TFT_TRACK_COMM && len > 7 && memcmp(name + len - 7, " (comm)", 7) == 0)
		len -= 7;
	if (!len) {
		/* An unnamed track (a tf.timeline JSON import): its process, "<device> Compute". */
		const struct tft_process *pr = tft_session_process(t->s, tr->process);

		name = pr ? sstr(t, pr->name, &len) : "";
		if (len > 8 && memcmp(name + len - 8, " Compute", 8) == 0)
			len -= 8;
	}
	tt->dev_name = name;
	tt->dev_len = len;
	return 0;
}

static int cmp_group_step(const void *a, const void *b)
{
	const uint32_t *x = a, *y = b; /* {step, index} */

	if (x[0] != y[0])
		return x[0] < y[0] ? -1 : 1;
	return x[1] < y[1] ? -1 : (x[1] > y[1]);
}

/* Sort the groups by step (TFT_NONE last), keeping the tracks' group indexes right. */
static int order_groups(struct tl *t)
{
	size_t n = t->ngroups;
	uint32_t (*k)[2];
	uint32_t *to;
	struct tl_group *g;

	if (n < 2)
		return 0; /* one group, or none (a session without slices) */
	k = malloc(n * sizeof(*k));
	to = malloc(n * sizeof(*to));
	g = malloc(n * sizeof(*g));
	if (!k || !to || !g) {
		free(k);
		free(to);
		free(g);
		return nomem(t);
	}
	for (size_t i = 0; i < n; i++) {
		k[i][0] = t->groups[i].step;
		k[i][1] = (uint32_t)i;
	}
	qsort(k, n, sizeof(*k), cmp_group_step);
	for (size_t i = 0; i < n; i++) {
		to[k[i][1]] = (uint32_t)i;
		g[i] = t->groups[k[i][1]];
	}
	memcpy(t->groups, g, n * sizeof(*g));
	for (size_t i = 0; i < t->ntracks; i++)
		t->tracks[i].group = to[t->tracks[i].group];
	free(k);
	free(to);
	free(g);
	return 0;
}

/* The event's step_position arg (the RunMetadata importer's), or -1. */
static int64_t event_step_pos(struct tl *t, const struct tft_event *ev)
{
	for (uint16_t i = 0; i < ev->nargs; i++)
		if (ev->args[i].type == TFT_ARG_INT && ev->args[i].v.i >= 0 &&
		    key_class(t, ev->args[i].key) == K_STEPPOS)
			return ev->args[i].v.i;
	return -1;
}

static int on_pos(void *ctx, const struct tft_event *ev)
{
	struct tl *t = ctx;
	int64_t p;

	if (ev->kind != TFT_EV_SLICE || (ev->flags & TFT_EVF_SUMMARY))
		return 0;
	p = event_step_pos(t, ev);
	if (p < 0 || p >= tft_session_step_count(t->s)) {
		t->pos_missing = true;
		return 1; /* the track goes by time */
	}
	for (size_t i = t->npos_seen; i-- > 0;) /* usually the last one */
		if (t->pos_seen[i] == (uint32_t)p)
			return 0;
	if (tft_grow_size((void **)&t->pos_seen, &t->cpos_seen, t->npos_seen + 1, sizeof(*t->pos_seen)))
		return nomem(t);
	t->pos_seen[t->npos_seen++] = (uint32_t)p;
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * A track whose every event names its step (step_position: a RunMetadata
 * importer's, also where a worker's steps share the track): an entry per
 * step, each taking that step's events. *done = false when some event has
 * no step position (an older session, another source): the track then goes
 * by time.
 */
static int split_by_pos(struct tl *t, uint32_t id, const struct tft_track *tr, bool *done)
{
	struct tl_track part;
	int r;

	*done = false;
	t->npos_seen = 0;
	t->pos_missing = false;
	r = tft_session_scan(t->s, id, INT64_MIN, INT64_MAX, 0, on_pos, t, t->err);
	if (r < 0)
		return r;
	if (r > 0 && !t->pos_missing)
		return r; /* nomem() from on_pos */
	if (t->pos_missing || !t->npos_seen)
		return 0;
	qsort(t->pos_seen, t->npos_seen, sizeof(*t->pos_seen), cmp_u32);
	for (size_t i = 0; i < t->npos_seen; i++) {
		memset(&part, 0, sizeof(part));
		part.by_pos = true;
		part.pos = t->pos_seen[i];
		if ((r = add_entry(t, id, tr, t->pos_seen[i], &part)))
			return r;
	}
	*done = true;
	return 0;
}

static int build_layout(struct tl *t)
{
	uint32_t nt = tft_session_track_count(t->s), cursor = 0;
	/* Steps split a session into StepStats only when it came from StepStats. */
	bool by_step = tft_tftimeline_is_stepstats(t->s);
	struct imap m = { 0 };
	int r = 0;

	/* Pass 1: the tracks with slices and their StepStats. */
	for (uint32_t id = 0; id < nt; id++) {
		const struct tft_track *tr = tft_session_track(t->s, id);
		uint32_t step;

		if (!tr || !tr->slices)
			continue;
		if (by_step) {
			bool done;

			if ((r = split_by_pos(t, id, tr, &done)))
				return r;
			if (done)
				continue;
		}
		/* else the step whose time span holds the track (none: the step-less StepStats) */
		step = by_step ? step_of_track(t, tr, &cursor) : TFT_NONE;
		if ((r = add_entry(t, id, tr, step, NULL)))
			return r;
	}
	/* StepStats in step order (tracks several steps share list them out of it); the step-less last. */
	if ((r = order_groups(t)))
		return r;
	/* Pass 2: devices, group by group, in track order (tracks sorted by group, then id). */
	if (t->ntracks)
		qsort(t->tracks, t->ntracks, sizeof(*t->tracks), cmp_tracks);
	for (size_t i = 0; i < t->ntracks; i++) {
		struct tl_track *tt = &t->tracks[i];
		uint32_t g = tt->group;
		const struct tft_track *tr = tft_session_track(t->s, tt->id);
		struct dev_key k = { t, g, tr->process, tt->dev_name, tt->dev_len };
		uint32_t d;

		if (i == 0 || t->tracks[i - 1].group != g) {
			t->groups[g].first_dev = (uint32_t)t->ndevs;
			t->groups[g].first_track = (uint32_t)i;
			imap_clear(&m);
			if ((r = entry_devs(t, g, &m)))
				goto out;
		}
		t->groups[g].ntracks++;
		if (t->groups[g].nents)
			k.process = TFT_NONE; /* devices named by the entries: by name */
		d = imap_find(&m, dev_hash(&k), dev_eq, &k);
		if (d == NOSTR) {
			d = (uint32_t)t->ndevs;
			if (new_dev(t, &k) || imap_add(&m, dev_hash(&k), d) || new_pids(t, &t->devs[d])) {
				r = nomem(t);
				goto out;
			}
		}
		tt->dev = d;
	}
out:
	imap_free(&m);
	return r;
}

/* ---- loading a group's nodes ------------------------------------------------------- */

static int64_t floor_div(int64_t a, int64_t b)
{
	int64_t q = a / b;

	return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

static int on_event(void *ctx, const struct tft_event *ev)
{
	struct tl *t = ctx;
	struct tl_node *n;
	bool has_start = false;
	int64_t end_ns;

	if (ev->kind != TFT_EV_SLICE || (ev->flags & TFT_EVF_SUMMARY))
		return 0;
	if (t->load_entry && t->load_entry->by_pos && event_step_pos(t, ev) != t->load_entry->pos)
		return 0;
	if (tft_grow_size((void **)&t->nodes, &t->cnodes, t->nnodes + 1, sizeof(*t->nodes)))
		return nomem(t);
	n = &t->nodes[t->nnodes];
	memset(n, 0, sizeof(*n));
	n->ts_ns = ev->ts_ns;
	n->dur_ns = ev->dur_ns;
	n->stats_index = -1;
	n->entry = -1;
	n->seq = t->nnodes;
	n->dev = t->load_dev;
	n->track_tid = t->load_tid;
	n->track = t->load_track;
	n->name = ev->name;
	n->label = n->output = n->op_arg = n->name_arg = NOSTR;
	n->in_first = (uint32_t)t->ninputs;
	for (uint16_t i = 0; i < ev->nargs; i++) {
		const struct tft_arg *a = &ev->args[i];

		switch (key_class(t, a->key)) {
		case K_LABEL:
			if (a->type == TFT_ARG_STR)
				n->label = a->v.str;
			break;
		case K_OUTPUT:
			if (a->type == TFT_ARG_JSON || a->type == TFT_ARG_STR)
				n->output = a->v.str;
			break;
		case K_START_US:
			if (a->type == TFT_ARG_INT) {
				n->start_us = a->v.i;
				has_start = true;
			}
			break;
		case K_END_REL_US:
			if (a->type == TFT_ARG_INT)
				n->dur_us = a->v.i;
			break;
		case K_INDEX:
			if (a->type == TFT_ARG_INT && a->v.i >= 0)
				n->stats_index = a->v.i;
			break;
		case K_ENTRY:
			if (a->type == TFT_ARG_INT && a->v.i >= 0)
				n->entry = a->v.i;
			break;
		case K_OP:
			if (a->type == TFT_ARG_STR)
				n->op_arg = a->v.str;
			break;
		case K_NAME:
			if (a->type == TFT_ARG_STR)
				n->name_arg = a->v.str;
			break;
		case K_INPUT:
			if (a->type != TFT_ARG_STR)
				break;
			if (tft_grow_size((void **)&t->inputs, &t->cinputs, t->ninputs + 1, sizeof(*t->inputs)))
				return nomem(t);
			t->inputs[t->ninputs].index = strtoll(sstr(t, a->key, NULL) + 5, NULL, 10);
			t->inputs[t->ninputs++].str = a->v.str;
			n->in_count++;
			break;
		default:
			break;
		}
	}
	if (n->entry >= 0) {
		/* A repeated device's later entry: that entry's device (entry_devs()). */
		const struct tl_group *gr = &t->groups[t->load_group];

		if ((uint64_t)n->entry < gr->nents) {
			uint32_t d = t->ents[gr->first_ent + (uint32_t)n->entry];

			if (t->devs[d].primary == n->dev)
				n->dev = d;
		}
	}
	if (!has_start) {
		/* Not from StepStats: whole microseconds of the event itself. */
		n->start_us = floor_div(ev->ts_ns, 1000);
		if (__builtin_add_overflow(ev->ts_ns, ev->dur_ns, &end_ns))
			end_ns = INT64_MAX;
		n->dur_us = floor_div(end_ns, 1000) - n->start_us;
	}
	t->nnodes++;
	return 0;
}

static int cmp_nodes(const void *a, const void *b)
{
	const struct tl_node *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->by_index && x->stats_index != y->stats_index)
		return x->stats_index < y->stats_index ? -1 : 1;
	if (!x->by_index) {
		if (x->ts_ns != y->ts_ns)
			return x->ts_ns < y->ts_ns ? -1 : 1;
		if (x->dur_ns != y->dur_ns)
			return x->dur_ns > y->dur_ns ? -1 : 1;
	}
	return x->seq < y->seq ? -1 : (x->seq > y->seq);
}

static int load_group(struct tl *t, uint32_t g)
{
	const struct tl_group *gr = &t->groups[g];
	int r;

	t->nnodes = 0;
	t->ninputs = 0;
	t->load_group = g;
	for (size_t i = gr->first_track; i < (size_t)gr->first_track + gr->ntracks; i++) {
		const struct tl_track *tt = &t->tracks[i];

		t->load_dev = tt->dev;
		t->load_track = tt->id;
		t->load_tid = tft_session_track(t->s, tt->id)->tid;
		t->load_entry = tt;
		r = tft_session_scan(t->s, tt->id, INT64_MIN, INT64_MAX, 0, on_event, t, t->err);
		if (r)
			return r;
	}
	for (uint32_t d = gr->first_dev; d < gr->first_dev + gr->ndevs; d++) {
		t->devs[d].all_indexed = true;
		t->devs[d].any_label = false;
	}
	for (size_t i = 0; i < t->nnodes; i++) {
		if (t->nodes[i].stats_index < 0)
			t->devs[t->nodes[i].dev].all_indexed = false;
		if (t->nodes[i].label != NOSTR || t->nodes[i].stats_index >= 0)
			t->devs[t->nodes[i].dev].any_label = true;
	}
	for (size_t i = 0; i < t->nnodes; i++)
		t->nodes[i].by_index = t->devs[t->nodes[i].dev].all_indexed;
	if (t->nnodes)
		qsort(t->nodes, t->nnodes, sizeof(*t->nodes), cmp_nodes);
	for (uint32_t d = gr->first_dev; d < gr->first_dev + gr->ndevs; d++)
		t->devs[d].count = 0;
	for (size_t i = t->nnodes; i-- > 0;) {
		t->devs[t->nodes[i].dev].first = (uint32_t)i;
		t->devs[t->nodes[i].dev].count++;
	}
	/* _assign_lanes */
	for (uint32_t d = gr->first_dev; d < gr->first_dev + gr->ndevs; d++) {
		struct tl_dev *dv = &t->devs[d];

		if (!dv->any_label) {
			/* not StepStats (e.g. a tf.timeline JSON): keep the lanes (tids) it came with */
			for (uint32_t i = dv->first; i < dv->first + dv->count; i++) {
				int64_t tid = t->nodes[i].track_tid;

				t->nodes[i].lane = tid >= 0 && tid <= INT32_MAX ? (uint32_t)tid : 0;
			}
			continue;
		}
		if (lanes_reset(&t->lanes))
			return nomem(t);
		for (uint32_t i = dv->first; i < dv->first + dv->count; i++) {
			struct tl_node *n = &t->nodes[i];
			int64_t end = (int64_t)((uint64_t)n->start_us + (uint64_t)n->dur_us);

			if (lanes_assign(&t->lanes, n->start_us, end, &n->lane))
				return nomem(t);
		}
	}
	return 0;
}

/* ---- labels ---------------------------------------------------------------------- */

struct slice {
	const char *p;
	size_t len;
};

/*
 * re.match(r"(.*) = (.*)\((.*)\)", label) with Python's backtracking: '.'
 * stops at a newline; the last ')' closes the inputs, the last '(' before
 * it opens them, the last " = " before that ends the name.
 */
static bool parse_op_label(const char *s, size_t len, struct slice *op, struct slice *inputs)
{
	const char *nl = memchr(s, '\n', len);
	size_t n = nl ? (size_t)(nl - s) : len, k, j, i;

	for (k = n; k > 0 && s[k - 1] != ')'; k--)
		;
	if (!k)
		return false;
	k--; /* s[k] == ')' */
	for (j = k; j > 0 && s[j - 1] != '('; j--)
		;
	if (!j)
		return false;
	j--; /* s[j] == '(' */
	if (j < 3)
		return false;
	for (i = j - 3 + 1; i > 0; i--)
		if (memcmp(s + i - 1, " = ", 3) == 0)
			break;
	if (!i)
		return false;
	i--; /* " = " at s[i] */
	op->p = s + i + 3;
	op->len = j - (i + 3);
	inputs->p = s + j + 1;
	inputs->len = k - (j + 1);
	return true;
}

/* inputs.split(", ") (nothing for an empty string): next piece, 0 when done. */
static bool next_input(struct slice *rest, bool *done, struct slice *out)
{
	const char *p = rest->p;
	size_t n = rest->len;

	if (*done)
		return false;
	for (size_t i = 0; i + 1 < n; i++) {
		if (p[i] == ',' && p[i + 1] == ' ') {
			out->p = p;
			out->len = i;
			rest->p = p + i + 2;
			rest->len = n - i - 2;
			return true;
		}
	}
	out->p = p;
	out->len = n;
	*done = true;
	return true;
}

/* _parse_kernel_label: node_name from between "@@" and the first '#', then name:op. */
static void parse_kernel_label(const char *label, size_t llen, const char *node, size_t nlen,
			       struct slice *name, struct slice *op)
{
	const char *at = NULL, *hash = memchr(label, '#', llen);
	const char *c1, *c2;

	for (size_t i = 0; i + 1 < llen; i++)
		if (label[i] == '@' && label[i + 1] == '@') {
			at = label + i;
			break;
		}
	if (at && hash && at + 2 < hash) {
		node = at + 2;
		nlen = (size_t)(hash - node);
	}
	c1 = memchr(node, ':', nlen);
	if (!c1) {
		name->p = node, name->len = nlen;
		op->p = "unknown", op->len = 7;
		return;
	}
	name->p = node, name->len = (size_t)(c1 - node);
	c2 = memchr(c1 + 1, ':', nlen - (size_t)(c1 + 1 - node));
	op->p = c1 + 1;
	op->len = c2 ? (size_t)(c2 - op->p) : nlen - (size_t)(op->p - node);
}

/* ---- the "output" arg (JSON written by the RunMetadata importer) ------------------- */

struct out_desc {
	bool has_dtype, dtype_is_name, has_shape, unknown_rank, has_single_ref;
	struct slice dtype_name, shape, allocator; /* shape: the text inside [...] */
	int64_t dtype, requested, allocated, alloc_id;
	uint64_t ptr;
	bool has_ptr;
	bool alloc_present; /* an allocation_description whose fields are all defaults */
};

struct jp {
	const char *p, *end;
};

static void jp_ws(struct jp *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\n' || *j->p == '\t' || *j->p == '\r'))
		j->p++;
}

static bool jp_lit(struct jp *j, char c)
{
	jp_ws(j);
	if (j->p < j->end && *j->p == c) {
		j->p++;
		return true;
	}
	return false;
}

/* A string; out = raw bytes between the quotes (escapes left as written). */
static bool jp_string(struct jp *j, struct slice *out)
{
	const char *q;

	jp_ws(j);
	if (j->p >= j->end || *j->p != '"')
		return false;
	for (q = j->p + 1; q < j->end && *q != '"'; q++)
		if (*q == '\\')
			q++;
	if (q >= j->end)
		return false;
	out->p = j->p + 1;
	out->len = (size_t)(q - out->p);
	j->p = q + 1;
	return true;
}

static bool jp_int(struct jp *j, int64_t *v)
{
	bool neg = false;
	uint64_t u = 0;
	const char *start;

	jp_ws(j);
	if (j->p < j->end && *j->p == '-')
		neg = true, j->p++;
	start = j->p;
	while (j->p < j->end && *j->p >= '0' && *j->p <= '9') {
		u = u * 10 + (uint64_t)(*j->p - '0');
		j->p++;
	}
	if (j->p == start)
		return false;
	/* fractions / exponents are not expected; skip them */
	while (j->p < j->end && (*j->p == '.' || *j->p == 'e' || *j->p == 'E' || *j->p == '+' ||
				 *j->p == '-' || (*j->p >= '0' && *j->p <= '9')))
		j->p++;
	*v = neg ? (int64_t)(0 - u) : (int64_t)u;
	return true;
}

/* Skip any value (bounded nesting). */
static bool jp_skip(struct jp *j, int depth)
{
	struct slice s;
	int64_t v;

	jp_ws(j);
	if (j->p >= j->end || depth > 32)
		return false;
	switch (*j->p) {
	case '"':
		return jp_string(j, &s);
	case '[':
	case '{': {
		char close = *j->p == '[' ? ']' : '}';
		bool obj = close == '}';

		j->p++;
		if (jp_lit(j, close))
			return true;
		do {
			if (obj && (!jp_string(j, &s) || !jp_lit(j, ':')))
				return false;
			if (!jp_skip(j, depth + 1))
				return false;
		} while (jp_lit(j, ','));
		return jp_lit(j, close);
	}
	case 't':
	case 'f':
	case 'n': {
		const char *w = *j->p == 't' ? "true" : *j->p == 'f' ? "false" : "null";
		size_t n = strlen(w);

		if ((size_t)(j->end - j->p) < n || memcmp(j->p, w, n) != 0)
			return false;
		j->p += n;
		return true;
	}
	default:
		return jp_int(j, &v);
	}
}

static bool jp_bool(struct jp *j, bool *v)
{
	jp_ws(j);
	if ((size_t)(j->end - j->p) >= 4 && memcmp(j->p, "true", 4) == 0) {
		j->p += 4;
		*v = true;
		return true;
	}
	if ((size_t)(j->end - j->p) >= 5 && memcmp(j->p, "false", 5) == 0) {
		j->p += 5;
		*v = false;
		return true;
	}
	return false;
}

static bool slice_is(struct slice s, const char *lit)
{
	return s.len == strlen(lit) && memcmp(s.p, lit, s.len) == 0;
}

/* One NodeOutput object of the "output" array. */
static bool parse_output(struct jp *j, struct out_desc *o)
{
	struct slice key;

	memset(o, 0, sizeof(*o));
	if (!jp_lit(j, '{'))
		return false;
	if (jp_lit(j, '}'))
		return true;
	do {
		bool ok;

		if (!jp_string(j, &key) || !jp_lit(j, ':'))
			return false;
		if (slice_is(key, "dtype")) {
			jp_ws(j);
			o->has_dtype = true;
			o->dtype_is_name = j->p < j->end && *j->p == '"';
			ok = o->dtype_is_name ? jp_string(j, &o->dtype_name) : jp_int(j, &o->dtype);
		} else if (slice_is(key, "shape")) {
			const char *start;

			jp_ws(j);
			start = j->p + 1;
			ok = j->p < j->end && *j->p == '[' && jp_skip(j, 0);
			if (ok) {
				o->has_shape = true;
				o->shape.p = start;
				o->shape.len = (size_t)(j->p - 1 - start);
			}
		} else if (slice_is(key, "unknown_rank")) {
			ok = jp_bool(j, &o->unknown_rank);
		} else if (slice_is(key, "requested_bytes")) {
			ok = jp_int(j, &o->requested);
		} else if (slice_is(key, "allocated_bytes")) {
			ok = jp_int(j, &o->allocated);
		} else if (slice_is(key, "allocator_name")) {
			ok = jp_string(j, &o->allocator);
		} else if (slice_is(key, "allocation_id")) {
			ok = jp_int(j, &o->alloc_id);
		} else if (slice_is(key, "has_single_reference")) {
			ok = jp_bool(j, &o->has_single_ref);
		} else if (slice_is(key, "allocation_description")) {
			o->alloc_present = true;
			ok = jp_skip(j, 1);
		} else if (slice_is(key, "ptr")) {
			int64_t v = 0;

			ok = jp_int(j, &v);
			o->ptr = (uint64_t)v;
			o->has_ptr = v != 0;
		} else {
			ok = jp_skip(j, 1);
		}
		if (!ok)
			return false;
	} while (jp_lit(j, ','));
	return jp_lit(j, '}');
}

/* JSON string escapes of the importer's text, undone (for allocator names). */
static size_t json_unescape(struct slice in, char *out, size_t cap)
{
	size_t j = 0;

	for (size_t i = 0; i < in.len && j < cap; i++) {
		char c = in.p[i];

		if (c == '\\' && i + 1 < in.len) {
			c = in.p[++i];
			switch (c) {
			case 'n': c = '\n'; break;
			case 't': c = '\t'; break;
			case 'r': c = '\r'; break;
			case 'b': c = '\b'; break;
			case 'f': c = '\f'; break;
			case 'u': {
				unsigned v = 0;

				for (int k = 0; k < 4 && i + 1 < in.len; k++) {
					char h = in.p[++i];

					v = v * 16 + (unsigned)(h >= 'a' ? h - 'a' + 10 : h >= 'A' ? h - 'A' + 10 : h - '0');
				}
				if (v < 0x80) {
					c = (char)v;
				} else if (v < 0x800 && j + 1 < cap) {
					out[j++] = (char)(0xc0 | (v >> 6));
					c = (char)(0x80 | (v & 0x3f));
				} else if (j + 2 < cap) {
					out[j++] = (char)(0xe0 | (v >> 12));
					out[j++] = (char)(0x80 | ((v >> 6) & 0x3f));
					c = (char)(0x80 | (v & 0x3f));
				}
				break;
			}
			default: break;
			}
		}
		out[j++] = c;
	}
	return j;
}

/* protobuf text_format's string escaping (CEscape), then timeline.py drops the quotes. */
static void text_escape(struct buf *b, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		char e[5];

		switch (c) {
		case '\n': buf_add(b, "\\n", 2); break;
		case '\r': buf_add(b, "\\r", 2); break;
		case '\t': buf_add(b, "\\t", 2); break;
		case '"': buf_add(b, "\\", 1); break; /* the quote itself is removed */
		case '\'': buf_add(b, "\\'", 2); break;
		case '\\': buf_add(b, "\\\\", 2); break;
		default:
			if (c < 0x20 || c >= 0x7f) {
				e[0] = '\\';
				e[1] = (char)('0' + (c >> 6));
				e[2] = (char)('0' + ((c >> 3) & 7));
				e[3] = (char)('0' + (c & 7));
				buf_add(b, e, 4);
			} else {
				buf_add(b, (const char *)&c, 1);
			}
		}
	}
}

/* str(output.tensor_description).replace('"', '') from the importer's JSON. */
static void tensor_text(struct buf *b, const struct out_desc *o)
{
	char tmp[512];

	b->len = 0;
	if (o->has_dtype && !(o->dtype_is_name ? slice_is(o->dtype_name, "DT_INVALID") : o->dtype == 0)) {
		buf_cstr(b, "dtype: ");
		if (o->dtype_is_name)
			buf_add(b, o->dtype_name.p, o->dtype_name.len);
		else
			buf_int(b, o->dtype);
		buf_cstr(b, "\n");
	}
	if (o->has_shape) {
		struct jp j = { o->shape.p, o->shape.p + o->shape.len };
		int64_t v;

		buf_cstr(b, "shape {\n");
		while (jp_int(&j, &v)) {
			buf_cstr(b, "  dim {\n");
			if (v) {
				buf_cstr(b, "    size: ");
				buf_int(b, v);
				buf_cstr(b, "\n");
			}
			buf_cstr(b, "  }\n");
			if (!jp_lit(&j, ','))
				break;
		}
		if (o->unknown_rank)
			buf_cstr(b, "  unknown_rank: true\n");
		buf_cstr(b, "}\n");
	}
	if (o->requested || o->allocated || o->allocator.len || o->alloc_id || o->has_single_ref ||
	    o->has_ptr || o->alloc_present) {
		buf_cstr(b, "allocation_description {\n");
		if (o->requested) {
			buf_cstr(b, "  requested_bytes: ");
			buf_int(b, o->requested);
			buf_cstr(b, "\n");
		}
		if (o->allocated) {
			buf_cstr(b, "  allocated_bytes: ");
			buf_int(b, o->allocated);
			buf_cstr(b, "\n");
		}
		if (o->allocator.len) {
			buf_cstr(b, "  allocator_name: ");
			text_escape(b, tmp, json_unescape(o->allocator, tmp, sizeof(tmp)));
			buf_cstr(b, "\n");
		}
		if (o->alloc_id) {
			buf_cstr(b, "  allocation_id: ");
			buf_int(b, o->alloc_id);
			buf_cstr(b, "\n");
		}
		if (o->has_single_ref)
			buf_cstr(b, "  has_single_reference: true\n");
		if (o->has_ptr) {
			char u[24];

			buf_cstr(b, "  ptr: ");
			buf_add(b, u, tft_json_fmt_uint(u, o->ptr));
			buf_cstr(b, "\n");
		}
		buf_cstr(b, "}\n");
	}
}

/* ---- tensors ------------------------------------------------------------------------- */

struct tname {
	struct tl *t;
	const char *p;
	size_t len;
};

static bool tensor_eq(void *ctx, uint32_t idx)
{
	const struct tname *k = ctx;
	const struct tl_tensor *x = &k->t->tensors[idx];

	return x->name_len == k->len && memcmp(x->name, k->p, k->len) == 0;
}

static uint32_t find_tensor(struct tl *t, const char *p, size_t len)
{
	struct tname k = { t, p, len };

	return imap_find(&t->tmap, tft_hash_bytes(p, len), tensor_eq, &k);
}

/* _produce_tensor: a new tracker under `name` (replacing an older one in place). */
static int produce_tensor(struct tl *t, const char *name, size_t len, const struct tl_node *n,
			  const struct tl_dev *dv, const struct out_desc *o, uint32_t *out)
{
	uint32_t idx = find_tensor(t, name, len);
	struct tl_tensor *x;
	char tmp[512];
	size_t alen = json_unescape(o->allocator, tmp, sizeof(tmp) - 1);
	int64_t object_id = t->object_base + (int64_t)t->ntensors; /* len(self._tensors) */

	if (idx == NOSTR) {
		const char *copy = arena_put(&t->names, name, len + 1); /* with the NUL of tmp */

		if (!copy || tft_grow_size((void **)&t->tensors, &t->ctensors, t->ntensors + 1, sizeof(*t->tensors)) ||
		    imap_add(&t->tmap, tft_hash_bytes(name, len), (uint32_t)t->ntensors))
			return nomem(t);
		idx = (uint32_t)t->ntensors++;
		t->tensors[idx].name = copy;
		t->tensors[idx].name_len = len;
	}
	x = &t->tensors[idx];
	x->object_id = object_id;
	x->create_us = n->start_us;
	x->pid = dv->tensors_pid;
	tmp[alen < sizeof(tmp) ? alen : sizeof(tmp) - 1] = '\0';
	if (!(x->alloc = arena_put(&t->names, tmp, alen + 1)))
		return nomem(t);
	x->alloc_len = alen;
	x->bytes = o->requested;
	x->last_unref = (int64_t)((uint64_t)n->start_us + (uint64_t)n->dur_us);
	x->flow_ts = x->last_unref;
	x->flow_pid = dv->compute_pid;
	x->flow_tid = n->lane;
	*out = idx;
	t->counts.tensors++;
	return 0;
}

/* _analyze_tensors */
static int analyze_tensors(struct tl *t, uint32_t g)
{
	const struct tl_group *gr = &t->groups[g];
	struct pyj *j = t->out;

	for (uint32_t d = gr->first_dev; d < gr->first_dev + gr->ndevs; d++) {
		const struct tl_dev *dv = &t->devs[d];

		for (uint32_t i = dv->first; i < dv->first + dv->count; i++) {
			const struct tl_node *n = &t->nodes[i];
			size_t olen, nlen;
			const char *otext, *nname;
			struct jp jpo;
			uint32_t index = 0;

			if (n->output == NOSTR)
				continue;
			otext = sstr(t, n->output, &olen);
			nname = sstr(t, n->name, &nlen);
			jpo.p = otext;
			jpo.end = otext + olen;
			if (!jp_lit(&jpo, '[') || jp_lit(&jpo, ']'))
				continue;
			do {
				struct out_desc o;
				uint32_t x = 0;
				int r;

				if (!parse_output(&jpo, &o))
					break;
				t->tmp.len = 0;
				buf_add(&t->tmp, nname, nlen);
				if (index) {
					buf_cstr(&t->tmp, ":");
					buf_int(&t->tmp, index);
				}
				buf_add(&t->tmp, "", 1); /* NUL, not counted */
				t->tmp.len--;
				if (t->tmp.oom)
					return nomem(t);
				if ((r = produce_tensor(t, t->tmp.p, t->tmp.len, n, dv, &o, &x)))
					return r;
				if (j && t->show_memory) {
					const struct tl_tensor *tx = &t->tensors[x];

					pyj_event(j, "N", "Tensor", tx->name, tx->name_len, dv->tensors_pid, n->lane,
						  n->start_us);
					pyj_kint(j, "id", tx->object_id);
					pyj_close(j, '}');
					pyj_event(j, "O", "Tensor", tx->name, tx->name_len, dv->tensors_pid, n->lane,
						  tx->last_unref - 1);
					pyj_kint(j, "id", tx->object_id);
					pyj_key(j, "args");
					pyj_open(j, '{');
					pyj_key(j, "snapshot");
					pyj_open(j, '{');
					tensor_text(&t->tmp, &o);
					if (t->tmp.oom)
						return nomem(t);
					pyj_kstr(j, "tensor_description", t->tmp.p ? t->tmp.p : "", t->tmp.len);
					pyj_close(j, '}');
					pyj_close(j, '}');
					pyj_close(j, '}');
				}
				index++;
			} while (jp_lit(&jpo, ','));
		}
	}
	return 0;
}

/* ---- dataflow of a session that is not StepStats ------------------------------------ */

/* A label-less node's input<want> arg, or NULL (inputs are numbered from 0, without gaps). */
static const struct tl_input *node_input(const struct tl *t, const struct tl_node *n, int64_t want)
{
	for (uint32_t q = 0; q < n->in_count; q++)
		if (t->inputs[n->in_first + q].index == want)
			return &t->inputs[n->in_first + q];
	return NULL;
}

static int on_dflow(void *ctx, const struct tft_flow *f)
{
	struct tl *t = ctx;
	size_t len;
	const char *cat;

	if (f->src_track == TFT_NONE || f->dst_track == TFT_NONE)
		return 0;
	cat = sstr(t, f->cat, &len);
	if (len != 8 || memcmp(cat, "DataFlow", 8) != 0)
		return 0;
	if (tft_grow_size((void **)&t->dflows, &t->cdflows, t->ndflows + 1, sizeof(*t->dflows)))
		return nomem(t);
	t->dflows[t->ndflows] = (struct tl_dflow){
		.src_track = f->src_track, .dst_track = f->dst_track,
		.src_ts_ns = f->src_ts_ns, .dst_ts_ns = f->dst_ts_ns,
		.name = f->name, .seq = t->ndflows,
	};
	t->ndflows++;
	return 0;
}

static int cmp_dflow(const void *a, const void *b)
{
	const struct tl_dflow *x = a, *y = b;

	if (x->dst_track != y->dst_track)
		return x->dst_track < y->dst_track ? -1 : 1;
	if (x->dst_ts_ns != y->dst_ts_ns)
		return x->dst_ts_ns < y->dst_ts_ns ? -1 : 1;
	return x->seq < y->seq ? -1 : (x->seq > y->seq);
}

/* The session's DataFlow flows (what a tf.timeline JSON import keeps of its arrows), by destination. */
static int load_dflows(struct tl *t)
{
	int r;

	t->dflows_loaded = true;
	r = tft_session_flows(t->s, on_dflow, t, t->err);
	if (r)
		return r; /* a read error, or nomem() from on_dflow */
	if (t->ndflows)
		qsort(t->dflows, t->ndflows, sizeof(*t->dflows), cmp_dflow);
	return 0;
}

/* Write one DataFlow arrow from f's source into node n (of device dv) if its source
 * is on a label-less device; marks f written. */
static void dflow_emit(struct tl *t, struct tl_dflow *f, const struct tl_node *n, const struct tl_dev *dv)
{
	uint32_t pos = NOSTR;
	const struct tl_dev *sd;
	int64_t tid, id;
	size_t len;
	const char *name;

	f->used = 1;
	/*
	 * The source's entry, whatever its StepStats (the arrow then crosses
	 * them, as it did in the file the session came from). DataFlow flows
	 * come from tf.timeline JSON imports, whose tracks are never split.
	 */
	for (uint32_t i = 0; i < t->ntracks && pos == NOSTR; i++)
		if (t->tracks[i].id == f->src_track)
			pos = i;
	if (pos == NOSTR)
		return;
	sd = &t->devs[t->tracks[pos].dev];
	if (sd->any_label)
		return; /* StepStats lanes: its arrows come from the labels */
	tid = tft_session_track(t->s, f->src_track)->tid;
	tid = tid >= 0 && tid <= INT32_MAX ? tid : 0; /* as load_group() takes the lane */
	name = sstr(t, f->name, &len);
	id = t->next_flow++;
	pyj_event(t->out, "s", "DataFlow", name, len, sd->compute_pid, (uint32_t)tid,
		  floor_div(f->src_ts_ns, 1000));
	pyj_kint(t->out, "id", id);
	pyj_close(t->out, '}');
	pyj_event(t->out, "t", "DataFlow", name, len, dv->compute_pid, n->lane, n->start_us);
	pyj_kint(t->out, "id", id);
	pyj_close(t->out, '}');
	t->counts.flows++;
}

/*
 * The arrows into a label-less node (--show-dataflow): the session's DataFlow
 * flows that end in it, in the order of its input<N> args (timeline.py writes
 * a node's arrows in input order), then any others in session order.
 */
static void show_node_dflows(struct tl *t, const struct tl_node *n, const struct tl_dev *dv)
{
	struct tl_dflow key = { .dst_track = n->track, .dst_ts_ns = n->ts_ns };
	size_t lo = 0, hi = t->ndflows, end;
	const struct tl_input *x;
	int64_t last;

	if (__builtin_add_overflow(n->ts_ns, n->dur_ns, &last))
		last = INT64_MAX;
	while (lo < hi) { /* first flow into n's track at or after its start */
		size_t mid = lo + (hi - lo) / 2;

		if (cmp_dflow(&t->dflows[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (end = lo; end < t->ndflows && t->dflows[end].dst_track == n->track &&
		       t->dflows[end].dst_ts_ns <= last;
	     end++)
		;
	for (int64_t want = 0; (x = node_input(t, n, want)) != NULL; want++)
		for (size_t i = lo; i < end; i++)
			if (!t->dflows[i].used && t->dflows[i].name == x->str) {
				dflow_emit(t, &t->dflows[i], n, dv);
				break;
			}
	for (size_t i = lo; i < end; i++)
		if (!t->dflows[i].used)
			dflow_emit(t, &t->dflows[i], n, dv);
}

/* _emit_op + the dataflow of _show_compute */
static int show_compute(struct tl *t, uint32_t g)
{
	const struct tl_group *gr = &t->groups[g];
	struct pyj *j = t->out;
	int r;

	if (j && t->show_dataflow && !t->dflows_loaded && (r = load_dflows(t)))
		return r;
	for (uint32_t d = gr->first_dev; d < gr->first_dev + gr->ndevs; d++) {
		const struct tl_dev *dv = &t->devs[d];

		for (uint32_t i = dv->first; i < dv->first + dv->count; i++) {
			const struct tl_node *n = &t->nodes[i];
			size_t nlen, llen = 0;
			const char *nname = sstr(t, n->name, &nlen);
			const char *label = n->label != NOSTR ? sstr(t, n->label, &llen) : "";
			struct slice name = { nname, nlen }, op = { "unknown", 7 }, inputs = { "", 0 };
			bool recv = slice_is(name, "RecvTensor"), has_inputs = false;
			int64_t end = (int64_t)((uint64_t)n->start_us + (uint64_t)n->dur_us);

			if (n->label == NOSTR && n->stats_index < 0 &&
			    (n->op_arg != NOSTR || n->name_arg != NOSTR)) {
				/*
				 * Not from StepStats (a tf.timeline JSON import ...): its op/name
				 * args. A StepStats node (it has its node_stats_index) without a
				 * label goes the way timeline.py takes it, with an empty label.
				 */
				if (n->op_arg != NOSTR)
					op.p = sstr(t, n->op_arg, &op.len);
				else
					op = name;
				if (n->name_arg != NOSTR)
					name.p = sstr(t, n->name_arg, &name.len);
				recv = true; /* no dataflow */
			} else if (n->label == NOSTR && n->stats_index < 0) {
				/* Not from TensorFlow at all (Kineto, Chrome): the slice is its op. */
				op = name;
				recv = true;
			} else if (dv->gputrace) {
				parse_kernel_label(label, llen, nname, nlen, &name, &op);
			} else if (recv) {
				op.p = "RecvTensor", op.len = 10;
			} else {
				has_inputs = parse_op_label(label, llen, &op, &inputs);
			}
			if (j) {
				struct slice rest = inputs, in;
				bool done = !has_inputs || inputs.len == 0;
				const struct tl_input *arg;
				char key[32];

				pyj_event(j, "X", "Op", op.p, op.len, dv->compute_pid, n->lane, n->start_us);
				pyj_kint(j, "dur", n->dur_us);
				pyj_key(j, "args");
				pyj_open(j, '{');
				pyj_kstr(j, "name", name.p, name.len);
				pyj_kstr(j, "op", op.p, op.len);
				for (int k = 0; next_input(&rest, &done, &in); k++) {
					memcpy(key, "input", 5);
					key[5 + tft_json_fmt_int(key + 5, k)] = '\0';
					pyj_kstr(j, key, in.p, in.len);
				}
				/* input<N> args of a label-less node, by N */
				for (int64_t want = 0; (arg = node_input(t, n, want)) != NULL; want++) {
					memcpy(key, "input", 5);
					key[5 + tft_json_fmt_int(key + 5, want)] = '\0';
					in.p = sstr(t, arg->str, &in.len);
					pyj_kstr(j, key, in.p, in.len);
				}
				pyj_close(j, '}');
				pyj_close(j, '}');
				t->counts.ops++;
				if (t->show_dataflow && t->ndflows && n->label == NOSTR && n->stats_index < 0)
					show_node_dflows(t, n, dv);
			}
			if (dv->gputrace || recv || !has_inputs || inputs.len == 0 || !t->track_tensors)
				continue;
			{
				struct slice rest = inputs, in;
				bool done = false;

				while (next_input(&rest, &done, &in)) {
					uint32_t x = find_tensor(t, in.p, in.len);
					struct tl_tensor *tx;

					if (x == NOSTR) {
						/* Send/Recv renames: strip the "/_NN" suffix (rfind > 0) */
						for (size_t k = in.len; k-- > 1;)
							if (in.p[k - 1] == '/' && in.p[k] == '_') {
								if (k - 1 > 0)
									in.len = k - 1;
								break;
							}
						x = find_tensor(t, in.p, in.len);
					}
					if (x == NOSTR)
						continue; /* "Can't find tensor - removed by CSE?" */
					tx = &t->tensors[x];
					if (end - 1 > tx->last_unref)
						tx->last_unref = end - 1;
					if (j && t->show_dataflow &&
					    (tx->flow_pid != dv->compute_pid || tx->flow_tid != n->lane)) {
						int64_t id = t->next_flow++;

						pyj_event(j, "s", "DataFlow", in.p, in.len, tx->flow_pid, tx->flow_tid,
							  tx->flow_ts);
						pyj_kint(j, "id", id);
						pyj_close(j, '}');
						pyj_event(j, "t", "DataFlow", in.p, in.len, dv->compute_pid, n->lane,
							  n->start_us);
						pyj_kint(j, "id", id);
						pyj_close(j, '}');
						t->counts.flows++;
					}
				}
			}
		}
	}
	return 0;
}

/* ---- memory counters ------------------------------------------------------------------ */

/* Python's sort of (time, num_bytes, name) tuples. */
static int cmp_alloc_ev(const void *a, const void *b)
{
	const struct tl_alloc_ev *x = a, *y = b;
	size_t n;
	int c;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? -1 : 1;
	n = x->name_len < y->name_len ? x->name_len : y->name_len;
	c = memcmp(x->name, y->name, n);
	if (c)
		return c;
	return x->name_len < y->name_len ? -1 : x->name_len > y->name_len;
}

static int cmp_cstr(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static bool same_alloc(const struct tl_tensor *a, const struct tl_tensor *b)
{
	return a->alloc_len == b->alloc_len && memcmp(a->alloc, b->alloc, a->alloc_len) == 0;
}

/* The peak of one allocator: replay the sorted events up to it for the live set. */
static int report_peak(struct tl *t, uint32_t g, const struct tl_tensor *a, size_t peak_at,
		       int64_t peak_ts, int64_t peak_bytes)
{
	struct tft_tftimeline_peak pk;
	size_t nlive = 0;
	int r;

	if (tft_grow_size((void **)&t->peak_names, &t->cpeak_names, t->ntensors + 1, sizeof(*t->peak_names)) ||
	    tft_grow_size((void **)&t->live, &t->clive, t->ntensors + 1, 1))
		return nomem(t);
	memset(t->live, 0, t->ntensors);
	/* a set of names: add on an allocation, discard on a free */
	for (size_t i = 0; peak_at != SIZE_MAX && i <= peak_at; i++)
		t->live[t->aev[i].tensor] = t->aev[i].bytes >= 0;
	for (size_t i = 0; i < t->ntensors; i++)
		if (t->live[i])
			t->peak_names[nlive++] = t->tensors[i].name;
	qsort(t->peak_names, nlive, sizeof(*t->peak_names), cmp_cstr);
	memset(&pk, 0, sizeof(pk));
	pk.allocator = a->alloc;
	pk.step = t->groups[g].step;
	pk.ts_us = peak_ts;
	pk.bytes = peak_bytes;
	pk.ntensors = (uint32_t)nlive;
	pk.tensors = t->peak_names;
	r = t->peak_fn(t->peak_ctx, &pk);
	if (r)
		t->stop = r;
	return r;
}

/* _show_memory_counters (and the AllocationMaximum per allocator) */
static int show_memory(struct tl *t, uint32_t g)
{
	struct pyj *j = t->show_memory ? t->out : NULL;
	size_t nalloc = 0;
	int r;

	for (size_t i = 0; j && i < t->ntensors; i++) {
		const struct tl_tensor *x = &t->tensors[i];

		pyj_event(j, "D", "Tensor", x->name, x->name_len, x->pid, 0, x->last_unref);
		pyj_kint(j, "id", x->object_id);
		pyj_close(j, '}');
	}
	/* allocators in order of their first tensor (peak_names: scratch list of them) */
	for (size_t i = 0; i < t->ntensors; i++) {
		size_t k;

		for (k = 0; k < nalloc; k++)
			if (same_alloc(&t->tensors[i], &t->tensors[t->aorder[k]]))
				break;
		if (k < nalloc)
			continue;
		if (tft_grow_size((void **)&t->aorder, &t->caorder, nalloc + 1, sizeof(*t->aorder)))
			return nomem(t);
		t->aorder[nalloc++] = (uint32_t)i;
	}
	for (size_t k = 0; k < nalloc; k++) {
		const struct tl_tensor *a = &t->tensors[t->aorder[k]];
		int64_t total = 0, peak_bytes = 0, peak_ts = 0;
		size_t peak_at = SIZE_MAX;

		t->naev = 0;
		for (size_t i = t->aorder[k]; i < t->ntensors; i++) {
			const struct tl_tensor *x = &t->tensors[i];

			if (!same_alloc(x, a))
				continue;
			if (tft_grow_size((void **)&t->aev, &t->caev, t->naev + 2, sizeof(*t->aev)))
				return nomem(t);
			t->aev[t->naev++] = (struct tl_alloc_ev){ x->create_us, x->bytes, x->name,
								  x->name_len, (uint32_t)i };
			t->aev[t->naev++] = (struct tl_alloc_ev){ x->last_unref,
								  (int64_t)(0 - (uint64_t)x->bytes),
								  x->name, x->name_len, (uint32_t)i };
		}
		qsort(t->aev, t->naev, sizeof(*t->aev), cmp_alloc_ev);
		for (size_t i = 0; i < t->naev; i++) {
			total = (int64_t)((uint64_t)total + (uint64_t)t->aev[i].bytes);
			if (total > peak_bytes) {
				peak_bytes = total;
				peak_ts = t->aev[i].time;
				peak_at = i;
			}
			if (j) {
				pyj_event(j, "C", "Memory", a->alloc, a->alloc_len, 0, 0, t->aev[i].time);
				pyj_key(j, "args");
				pyj_open(j, '{');
				pyj_item(j);
				pyj_str(j, a->alloc, a->alloc_len);
				tft_json_write_raw(j->w, ": ", 2);
				tft_json_write_raw_int(j->w, total);
				pyj_close(j, '}');
				pyj_close(j, '}');
				t->counts.counters++;
			}
		}
		if (t->peak_fn && (r = report_peak(t, g, a, peak_at, peak_ts, peak_bytes)))
			return r;
	}
	return 0;
}

/* ---- driver ------------------------------------------------------------------------ */

static void tl_free(struct tl *t)
{
	free(t->keyclass);
	free(t->tracks);
	free(t->devs);
	free(t->groups);
	free(t->pids);
	free(t->ents);
	free(t->nodes);
	free(t->inputs);
	free(t->tensors);
	imap_free(&t->tmap);
	arena_free(&t->names);
	free(t->lanes.t);
	free(t->aev);
	free(t->peak_names);
	free(t->live);
	free(t->aorder);
	free(t->dflows);
	free(t->pos_seen);
	free(t->tmp.p);
}

static int run_groups(struct tl *t)
{
	int r = 0;

	for (uint32_t g = 0; g < t->ngroups && !r; g++) {
		t->ntensors = 0;
		imap_clear(&t->tmap);
		/* tensors feed only flows, objects, counters and peaks */
		t->track_tensors = t->show_dataflow || t->show_memory || t->peak_fn;
		if ((r = load_group(t, g)) || (t->track_tensors && (r = analyze_tensors(t, g))) ||
		    (r = show_compute(t, g)))
			break;
		if (t->show_memory || t->peak_fn)
			r = show_memory(t, g);
		t->object_base += (int64_t)t->ntensors;
		t->counts.steps++;
		if (t->out && t->out->w->status) {
			r = tft_error_set(t->err, t->out->w->status, -1, "cannot write the output: %s",
					  tft_strerror(t->out->w->status));
			break;
		}
	}
	return r;
}

int tft_export_tftimeline(struct tft_session *s, struct tft_json_writer *w,
			  const struct tft_tftimeline_opts *opts, struct tft_tftimeline_counts *counts,
			  struct tft_error *err)
{
	struct tl t;
	struct pyj j;
	int r;

	memset(&t, 0, sizeof(t));
	memset(&j, 0, sizeof(j));
	t.s = s;
	t.err = err;
	t.out = &j;
	t.show_dataflow = opts && opts->show_dataflow;
	t.show_memory = opts && opts->show_memory;
	j.w = w;
	t.next_pid = 1; /* pid 0: Allocators */
	r = build_layout(&t);
	if (!r) {
		pyj_open(&j, '{');
		pyj_key(&j, "traceEvents");
		pyj_open(&j, '[');
		/* all "M" events first, as format_to_string puts _metadata first */
		pyj_item(&j);
		pyj_open(&j, '{');
		pyj_kstr(&j, "name", "process_name", 12);
		pyj_kstr(&j, "ph", "M", 1);
		pyj_kint(&j, "pid", 0);
		pyj_key(&j, "args");
		pyj_open(&j, '{');
		pyj_kstr(&j, "name", "Allocators", 10);
		pyj_close(&j, '}');
		pyj_close(&j, '}');
		j.events++;
		for (size_t d = 0; d < t.npids; d++) {
			for (int k = 0; k < 2; k++) {
				const struct tl_pids *pp = &t.pids[d];

				pyj_item(&j);
				pyj_open(&j, '{');
				pyj_kstr(&j, "name", "process_name", 12);
				pyj_kstr(&j, "ph", "M", 1);
				pyj_kint(&j, "pid", k ? pp->tensors_pid : pp->compute_pid);
				pyj_key(&j, "args");
				pyj_open(&j, '{');
				t.tmp.len = 0;
				buf_add(&t.tmp, pp->name, pp->name_len);
				buf_cstr(&t.tmp, k ? " Tensors" : " Compute");
				if (t.tmp.oom) {
					r = nomem(&t);
					break;
				}
				pyj_kstr(&j, "name", t.tmp.p, t.tmp.len);
				pyj_close(&j, '}');
				pyj_close(&j, '}');
				j.events++;
			}
		}
		if (!r)
			r = run_groups(&t);
		if (!r) {
			pyj_close(&j, ']');
			pyj_close(&j, '}');
		}
	}
	t.counts.events = j.events;
	if (counts)
		*counts = t.counts;
	if (!r && w->status)
		r = tft_error_set(err, w->status, -1, "cannot write the output: %s", tft_strerror(w->status));
	tl_free(&t);
	return r;
}

int tft_tftimeline_peak_memory(struct tft_session *s, tft_tftimeline_peak_fn fn, void *ctx,
			       struct tft_error *err)
{
	struct tl t;
	int r;

	if (!fn)
		return tft_error_set(err, TFT_EINVAL, -1, "no callback");
	memset(&t, 0, sizeof(t));
	t.s = s;
	t.err = err;
	t.peak_fn = fn;
	t.peak_ctx = ctx;
	t.next_pid = 1;
	r = build_layout(&t);
	if (!r)
		r = run_groups(&t);
	if (t.stop)
		r = t.stop;
	tl_free(&t);
	return r;
}

bool tft_tftimeline_is_stepstats(struct tft_session *s)
{
	const char *f = tft_session_meta(s, "format");

	return f && (strstr(f, "runmeta") || strstr(f, "stepstats") || strstr(f, "pickle"));
}
