/* SPDX-License-Identifier: MIT */
/*
 * tf.timeline exporter: rebuilds TensorFlow's timeline.py Chrome trace
 * (pids, first-fit lanes, op args, DataFlow flows, tensor objects, memory
 * counters and their peaks) from the node events of a session. This file
 * writes each group's compute events and drives the groups; the rest is in
 * src/export/tftimeline/ (tl_int.h says which file does what).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/tf_names.h"
#include "core/grow.h"
#include "core/strtab.h"
#include "export/export_tftimeline.h"
#include "export/tftimeline/tl_int.h"

/* _emit_op + the dataflow of _show_compute */
static int show_compute(struct tl *t, uint32_t g)
{
	const struct tl_group *gr = &t->groups[g];
	struct pyj *j = t->out;
	int r;

	if (j && t->show_dataflow && !t->dflows_loaded && (r = tft_tl_load_dflows(t)))
		return r;
	for (uint32_t d = gr->first_dev; d < gr->first_dev + gr->ndevs; d++) {
		const struct tl_dev *dv = &t->devs[d];

		for (uint32_t i = dv->first; i < dv->first + dv->count; i++) {
			const struct tl_node *n = &t->nodes[i];
			size_t nlen, llen = 0;
			const char *nname = sstr(t, n->name, &nlen);
			const char *label = n->label != NOSTR ? sstr(t, n->label, &llen) : "";
			struct slice name = { nname, nlen }, op = { "unknown", 7 }, inputs = { "", 0 };
			bool recv = tft_tl_slice_is(name, "RecvTensor"), has_inputs = false;
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
				struct tft_tf_str kn, ko;

				tft_tf_names_timeline_kernel(label, llen, nname, nlen, &kn, &ko);
				name = (struct slice){ kn.p, kn.len };
				op = (struct slice){ ko.p, ko.len };
			} else if (recv) {
				op.p = "RecvTensor", op.len = 10;
			} else {
				has_inputs = tft_tl_parse_op_label(label, llen, &op, &inputs);
			}
			if (j) {
				struct slice rest = inputs, in;
				bool done = !has_inputs || inputs.len == 0;
				const struct tl_input *arg;
				char key[32];

				pyj_event(j, "X", "Op", op.p, op.len, dv->compute_pid, n->lane, n->start_us);
				tft_json_py_key_int(&j->py, "dur", n->dur_us);
				tft_json_py_key(&j->py, "args");
				tft_json_py_open(&j->py, '{');
				tft_json_py_key_str(&j->py, "name", name.p, name.len);
				tft_json_py_key_str(&j->py, "op", op.p, op.len);
				for (int k = 0; tft_tl_next_input(&rest, &done, &in); k++) {
					memcpy(key, "input", 5);
					key[5 + tft_json_fmt_int(key + 5, k)] = '\0';
					tft_json_py_key_str(&j->py, key, in.p, in.len);
				}
				/* input<N> args of a label-less node, by N */
				for (int64_t want = 0; (arg = tft_tl_node_input(t, n, want)) != NULL; want++) {
					memcpy(key, "input", 5);
					key[5 + tft_json_fmt_int(key + 5, want)] = '\0';
					in.p = sstr(t, arg->str, &in.len);
					tft_json_py_key_str(&j->py, key, in.p, in.len);
				}
				tft_json_py_close(&j->py, '}');
				tft_json_py_close(&j->py, '}');
				t->counts.ops++;
				if (t->show_dataflow && t->ndflows && n->label == NOSTR && n->stats_index < 0)
					tft_tl_show_node_dflows(t, n, dv);
			}
			if (dv->gputrace || recv || !has_inputs || inputs.len == 0 || !t->track_tensors)
				continue;
			{
				struct slice rest = inputs, in;
				bool done = false;

				while (tft_tl_next_input(&rest, &done, &in)) {
					uint32_t x = tft_tl_find_tensor(t, in.p, in.len);
					struct tl_tensor *tx;

					if (x == NOSTR) {
						/* Send/Recv renames: strip the "/_NN" suffix (rfind > 0) */
						for (size_t k = in.len; k-- > 1;)
							if (in.p[k - 1] == '/' && in.p[k] == '_') {
								if (k - 1 > 0)
									in.len = k - 1;
								break;
							}
						x = tft_tl_find_tensor(t, in.p, in.len);
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
						tft_json_py_key_int(&j->py, "id", id);
						tft_json_py_close(&j->py, '}');
						pyj_event(j, "t", "DataFlow", in.p, in.len, dv->compute_pid, n->lane,
							  n->start_us);
						tft_json_py_key_int(&j->py, "id", id);
						tft_json_py_close(&j->py, '}');
						t->counts.flows++;
					}
				}
			}
		}
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
	tft_hmap_fini(&t->tmap);
	tft_arena_free(&t->names);
	tft_lanes_free(&t->lanes);
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
		tft_hmap_clear(&t->tmap);
		/* tensors feed only flows, objects, counters and peaks */
		t->track_tensors = t->show_dataflow || t->show_memory || t->peak_fn;
		if ((r = tft_tl_load_group(t, g)) || (t->track_tensors && (r = tft_tl_analyze_tensors(t, g))) ||
		    (r = show_compute(t, g)))
			break;
		if (t->show_memory || t->peak_fn)
			r = tft_tl_show_memory(t, g);
		t->object_base += (int64_t)t->ntensors;
		t->counts.steps++;
		if (t->out && t->out->py.w->status) {
			r = tft_error_set(t->err, t->out->py.w->status, -1, "cannot write the output: %s",
					  tft_strerror(t->out->py.w->status));
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
	tft_tl_tensors_init(&t);
	memset(&j, 0, sizeof(j));
	t.s = s;
	t.err = err;
	t.out = &j;
	t.show_dataflow = opts && opts->show_dataflow;
	t.show_memory = opts && opts->show_memory;
	j.py.w = w;
	t.next_pid = 1; /* pid 0: Allocators */
	r = tft_tl_build_layout(&t);
	if (!r) {
		tft_json_py_open(&j.py, '{');
		tft_json_py_key(&j.py, "traceEvents");
		tft_json_py_open(&j.py, '[');
		/* all "M" events first, as format_to_string puts _metadata first */
		tft_json_py_item(&j.py);
		tft_json_py_open(&j.py, '{');
		tft_json_py_key_str(&j.py, "name", "process_name", 12);
		tft_json_py_key_str(&j.py, "ph", "M", 1);
		tft_json_py_key_int(&j.py, "pid", 0);
		tft_json_py_key(&j.py, "args");
		tft_json_py_open(&j.py, '{');
		tft_json_py_key_str(&j.py, "name", "Allocators", 10);
		tft_json_py_close(&j.py, '}');
		tft_json_py_close(&j.py, '}');
		j.events++;
		for (size_t d = 0; d < t.npids; d++) {
			for (int k = 0; k < 2; k++) {
				const struct tl_pids *pp = &t.pids[d];

				tft_json_py_item(&j.py);
				tft_json_py_open(&j.py, '{');
				tft_json_py_key_str(&j.py, "name", "process_name", 12);
				tft_json_py_key_str(&j.py, "ph", "M", 1);
				tft_json_py_key_int(&j.py, "pid", k ? pp->tensors_pid : pp->compute_pid);
				tft_json_py_key(&j.py, "args");
				tft_json_py_open(&j.py, '{');
				t.tmp.len = 0;
				tft_tl_buf_add(&t.tmp, pp->name, pp->name_len);
				tft_tl_buf_cstr(&t.tmp, k ? " Tensors" : " Compute");
				if (t.tmp.oom) {
					r = nomem(&t);
					break;
				}
				tft_json_py_key_str(&j.py, "name", t.tmp.p, t.tmp.len);
				tft_json_py_close(&j.py, '}');
				tft_json_py_close(&j.py, '}');
				j.events++;
			}
		}
		if (!r)
			r = run_groups(&t);
		if (!r) {
			tft_json_py_close(&j.py, ']');
			tft_json_py_close(&j.py, '}');
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
	tft_tl_tensors_init(&t);
	t.s = s;
	t.err = err;
	t.peak_fn = fn;
	t.peak_ctx = ctx;
	t.next_pid = 1;
	r = tft_tl_build_layout(&t);
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
