/* SPDX-License-Identifier: MIT */
/*
 * Inside the tf.timeline export (export/export_tftimeline.h), not an API:
 * the model its files share. export_tftimeline.c writes the compute events
 * and drives the groups; tl_layout.c (steps -> StepStats, tracks ->
 * devices and pids), tl_nodes.c (a group's node events), tl_labels.c (labels
 * and the "output" arg), tl_memory.c (tensors, allocators' memory),
 * tl_dataflow.c (DataFlow flows) and tl_containers.c do the rest. The JSON
 * is Python's json.dumps(indent=4) text (codec/json_write.h, tft_json_py).
 */
#ifndef TFT_EXPORT_TFTIMELINE_TL_INT_H
#define TFT_EXPORT_TFTIMELINE_TL_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "codec/json_write.h"
#include "core/arena.h"
#include "core/hmap.h"
#include "core/lanes.h"
#include "export/export_tftimeline.h"

#define NOSTR UINT32_MAX

/* ---- small containers (tl_containers.c) ---- */


/* Growable text buffer. */
struct buf {
	char *p; /* owned */
	size_t len, cap;
	int oom;
};

/* First-fit lanes: a min segment tree over the lane end times. */
/* ---- output: Python json.dumps(indent=4), codec/json_write.h ---- */

struct pyj {
	struct tft_json_py py;
	uint64_t events;
};

/* The common head of _create_event: ph, cat, name, pid, tid, ts. */
static inline void pyj_event(struct pyj *j, const char *ph, const char *cat, const char *name,
		      size_t name_len, int64_t pid, int64_t tid, int64_t ts)
{
	tft_json_py_item(&j->py);
	tft_json_py_open(&j->py, '{');
	tft_json_py_key_str(&j->py, "ph", ph, 1);
	tft_json_py_key_str(&j->py, "cat", cat, strlen(cat));
	tft_json_py_key_str(&j->py, "name", name, name_len);
	tft_json_py_key_int(&j->py, "pid", pid);
	tft_json_py_key_int(&j->py, "tid", tid);
	tft_json_py_key_int(&j->py, "ts", ts);
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
	struct tft_hmap tmap; /* tensor name -> index in tensors (tft_tl_tensors_init) */
	struct tft_arena names;
	struct tft_lanes lanes;
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

/* ---- labels (tl_labels.c) ---- */

struct slice {
	const char *p;
	size_t len;
};

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

static inline int nomem(struct tl *t)
{
	return tft_error_set(t->err, TFT_ENOMEM, -1, "tf-timeline: out of memory");
}

static inline const char *sstr(struct tl *t, uint32_t id, size_t *len)
{
	return tft_session_str(t->s, id, len);
}

static inline bool contains(const char *s, size_t n, const char *needle)
{
	size_t m = strlen(needle);

	for (size_t i = 0; i + m <= n; i++)
		if (memcmp(s + i, needle, m) == 0)
			return true;
	return false;
}

/* Python's a // b (rounds toward minus infinity). */
static inline int64_t floor_div(int64_t a, int64_t b)
{
	int64_t q = a / b;

	return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* ---- tl_containers.c ---- */

void tft_tl_buf_add(struct buf *b, const char *s, size_t n);
void tft_tl_buf_cstr(struct buf *b, const char *s);
void tft_tl_buf_int(struct buf *b, int64_t v);

/* ---- tl_layout.c ---- */

int tft_tl_build_layout(struct tl *t);
int tft_tl_entry_devs(struct tl *t, uint32_t g, struct tft_hmap *m);
int64_t tft_tl_event_step_pos(struct tl *t, const struct tft_event *ev);

/* ---- tl_nodes.c ---- */

int tft_tl_key_class(struct tl *t, uint32_t id);
int tft_tl_load_group(struct tl *t, uint32_t g);

/* ---- tl_labels.c ---- */

bool tft_tl_jp_lit(struct jp *j, char c);
size_t tft_tl_json_unescape(struct slice in, char *out, size_t cap);
bool tft_tl_next_input(struct slice *rest, bool *done, struct slice *out);
bool tft_tl_parse_op_label(const char *s, size_t len, struct slice *op, struct slice *inputs);
bool tft_tl_parse_output(struct jp *j, struct out_desc *o);
bool tft_tl_slice_is(struct slice s, const char *lit);
void tft_tl_tensor_text(struct buf *b, const struct out_desc *o);

/* ---- tl_memory.c ---- */

int tft_tl_analyze_tensors(struct tl *t, uint32_t g);
uint32_t tft_tl_find_tensor(struct tl *t, const char *p, size_t len);
void tft_tl_tensors_init(struct tl *t);
int tft_tl_show_memory(struct tl *t, uint32_t g);

/* ---- tl_dataflow.c ---- */

int tft_tl_load_dflows(struct tl *t);
const struct tl_input *tft_tl_node_input(const struct tl *t, const struct tl_node *n, int64_t want);
void tft_tl_show_node_dflows(struct tl *t, const struct tl_node *n, const struct tl_dev *dv);

#endif
