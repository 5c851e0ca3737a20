/* SPDX-License-Identifier: MIT */
/*
 * Loading one StepStats (group) of the tf.timeline export (tl_int.h): the
 * node events of its tracks with the args timeline.py reads (timeline_label,
 * all_start_micros, node_stats_index, output, input<N>), sorted as
 * timeline.py visits them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "core/strtab.h"
#include "export/tftimeline/tl_int.h"

int tft_tl_key_class(struct tl *t, uint32_t id)
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

/* ---- loading a group's nodes ------------------------------------------------------- */

static int on_event(void *ctx, const struct tft_event *ev)
{
	struct tl *t = ctx;
	struct tl_node *n;
	bool has_start = false;
	int64_t end_ns;

	if (ev->kind != TFT_EV_SLICE || (ev->flags & TFT_EVF_SUMMARY))
		return 0;
	if (t->load_entry && t->load_entry->by_pos && tft_tl_event_step_pos(t, ev) != t->load_entry->pos)
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

		switch (tft_tl_key_class(t, a->key)) {
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
		/* A repeated device's later entry: that entry's device (tft_tl_entry_devs()). */
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

int tft_tl_load_group(struct tl *t, uint32_t g)
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
		if (tft_lanes_reset(&t->lanes))
			return nomem(t);
		for (uint32_t i = dv->first; i < dv->first + dv->count; i++) {
			struct tl_node *n = &t->nodes[i];
			int64_t end = (int64_t)((uint64_t)n->start_us + (uint64_t)n->dur_us);

			if (tft_lanes_assign(&t->lanes, n->start_us, end, &n->lane))
				return nomem(t);
		}
	}
	return 0;
}
