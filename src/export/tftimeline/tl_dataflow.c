/* SPDX-License-Identifier: MIT */
/*
 * DataFlow flows of the tf.timeline export (tl_int.h): timeline.py's arrows
 * from the node that produced a tensor to each node that took it as an
 * input; a session that is not StepStats (a tf.timeline JSON import) has its
 * own flows, written back as they were.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "core/strtab.h"
#include "export/tftimeline/tl_int.h"

/* ---- dataflow of a session that is not StepStats ------------------------------------ */

/* A label-less node's input<want> arg, or NULL (inputs are numbered from 0, without gaps). */
const struct tl_input *tft_tl_node_input(const struct tl *t, const struct tl_node *n, int64_t want)
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
int tft_tl_load_dflows(struct tl *t)
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
	tid = tid >= 0 && tid <= INT32_MAX ? tid : 0; /* as tft_tl_load_group() takes the lane */
	name = sstr(t, f->name, &len);
	id = t->next_flow++;
	pyj_event(t->out, "s", "DataFlow", name, len, sd->compute_pid, (uint32_t)tid,
		  floor_div(f->src_ts_ns, 1000));
	tft_json_py_key_int(&t->out->py, "id", id);
	tft_json_py_close(&t->out->py, '}');
	pyj_event(t->out, "t", "DataFlow", name, len, dv->compute_pid, n->lane, n->start_us);
	tft_json_py_key_int(&t->out->py, "id", id);
	tft_json_py_close(&t->out->py, '}');
	t->counts.flows++;
}

/*
 * The arrows into a label-less node (--show-dataflow): the session's DataFlow
 * flows that end in it, in the order of its input<N> args (timeline.py writes
 * a node's arrows in input order), then any others in session order.
 */
void tft_tl_show_node_dflows(struct tl *t, const struct tl_node *n, const struct tl_dev *dv)
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
	for (int64_t want = 0; (x = tft_tl_node_input(t, n, want)) != NULL; want++)
		for (size_t i = lo; i < end; i++)
			if (!t->dflows[i].used && t->dflows[i].name == x->str) {
				dflow_emit(t, &t->dflows[i], n, dv);
				break;
			}
	for (size_t i = lo; i < end; i++)
		if (!t->dflows[i].used)
			dflow_emit(t, &t->dflows[i], n, dv);
}
