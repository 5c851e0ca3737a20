/* SPDX-License-Identifier: MIT */
/*
 * RunMetadata / StepStats importer (binary or text; TF1 FULL_TRACE output,
 * and each step of a tracing session's pickle): the entry points. One
 * input is one step: its devices' nodes become slices (decode.c, emit.c),
 * then its send/recv flows (flows.c) and dataflow and launch flows
 * (dataflow.c) are added, then the step. Binary input is walked twice in
 * all: a pre-pass over the dev_stats (scan.c) and the decode, serial or,
 * with opts->threads >= 2 and each device once, parallel (parallel.c).
 * rm_int.h lists the files.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "codec/pb_text.h"
#include "collect/ingest_runmeta.h"
#include "collect/runmeta/rm_int.h"
#include "store/graph.h"

void tft_rm_free(struct rm *rm)
{
	if (rm->sorter)
		tft_sorter_destroy(rm->sorter);
	tft_graph_import_finish(rm->graphs, NULL); /* on success already finished (NULL) */
	free(rm->procs);
	free(rm->devs);
	free(rm->threads);
	free(rm->entries);
	free(rm->comm);
	free(rm->df);
	free(rm->dfh);
	free(rm->gnodes);
	tft_hmap_fini(&rm->gix);
	free(rm->gin);
	for (uint32_t i = 0; i < rm->nwkdfh; i++)
		free(rm->wkdfh[i]);
	free(rm->wkdfh);
	tft_json_write_fini(&rm->j_memory);
	tft_json_write_fini(&rm->j_output);
	tft_json_write_fini(&rm->j_ref);
	tft_json_write_fini(&rm->j_memstats);
	tft_json_write_fini(&rm->j_tmp);
	tft_json_write_fini(&rm->j_dims);
	tft_json_write_fini(&rm->j_dnames);
	tft_json_write_fini(&rm->j_ids);
	tft_json_write_fini(&rm->j_ids2);
	tft_json_write_fini(&rm->scratch);
	free(rm->pend);
	free(rm->pargs);
	free(rm->dinfo);
	tft_rm_tmpl_release(rm); /* (kept for the next input) */
}

static int intern_keys(struct rm *rm)
{
	static const struct {
		size_t off;
		const char *s;
	} keys[] = {
#define K(m, s) {offsetof(struct rm, m), s}
		K(k_op, "op"), K(k_inputs, "inputs"), K(k_label, "timeline_label"),
		K(k_all_start_us, "all_start_micros"), K(k_op_start_us, "op_start_rel_micros"),
		K(k_op_end_us, "op_end_rel_micros"), K(k_all_end_us, "all_end_rel_micros"),
		K(k_sched_us, "scheduled_micros"), K(k_thread, "thread_id"),
		K(k_thread_name, "thread_name"), K(k_memory, "memory"), K(k_output, "output"),
		K(k_ref, "referenced_tensor"), K(k_memstats, "memory_stats"),
		K(k_all_start_ns, "all_start_nanos"), K(k_op_start_ns, "op_start_rel_nanos"),
		K(k_op_end_ns, "op_end_rel_nanos"), K(k_all_end_ns, "all_end_rel_nanos"),
		K(k_sched_ns, "scheduled_nanos"), K(k_tensor, "tensor"), K(k_src_dev, "src_device"),
		K(k_dst_dev, "dst_device"), K(k_bytes, "bytes"), K(k_regs, "regs"), K(k_shm, "shm"),
		K(k_grid, "grid"), K(k_block, "block"), K(k_annotation, "annotation"),
		K(k_async, "async"), K(k_to_device, "to_device"), K(k_kernel, "kernel"),
		K(k_node, "node"), K(k_device, "device"), K(k_node_index, "node_stats_index"), K(k_dev_entry, "dev_stats_entry"),
		K(k_step_pos, "step_position"), K(c_op, "op"), K(c_comm, "comm"),
		K(c_kernel, "kernel"), K(c_memcpy, "memcpy"), K(flow_cat, "tensor"),
		K(c_dataflow, "DataFlow"), K(c_launch, "launch"),
#undef K
	};

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		uint32_t id = intern_c(rm, keys[i].s);

		if (id == UINT32_MAX)
			return TFT_ENOMEM;
		memcpy((char *)rm + keys[i].off, &id, sizeof(id));
	}
	return 0;
}

static const char *base_name(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return s ? s + 1 : (path ? path : "");
}

/*
 * The dev_stats order of the step just added, when it is not what the
 * tracks tell (a device repeated, or one without nodes): meta key
 * "tf.dev_stats.<step position>", the device names' string ids in entry
 * order, separated by spaces (docs/file-format.md).
 */
static int store_entries(struct rm *rm)
{
	char key[64], *val;
	size_t n = 0;
	int r;

	val = malloc((size_t)rm->nentries * 11 + 1);
	if (!val)
		return TFT_ENOMEM;
	for (uint32_t i = 0; i < rm->nentries; i++)
		n += (size_t)sprintf(val + n, i ? " %u" : "%u", rm->devs[rm->entries[i]].name);
	val[n] = 0;
	snprintf(key, sizeof(key), "tf.dev_stats.%u", tft_writer_step_count(rm->w) - 1);
	r = tft_writer_set_meta(rm->w, key, val);
	free(val);
	return r;
}

/* The step this input becomes (it has nodes); its graphs (from graph0 on) are linked to it. */
static int add_step(struct rm *rm, const struct rm_runmeta *meta, int64_t graph0)
{
	struct tft_step st;
	int r;

	memset(&st, 0, sizeof(st));
	st.index = rm->step_index;
	if (rm->step_name)
		st.name = intern_c(rm, rm->step_name);
	else if (meta->session.name.len)
		st.name = intern(rm, meta->session.name.p, meta->session.name.len);
	else
		st.name = intern_c(rm, base_name(rm->name));
	st.process = rm->step_process;
	st.start_ns = rm->min_ts;
	if (__builtin_sub_overflow(rm->max_end, rm->min_ts, &st.dur_ns))
		st.dur_ns = INT64_MAX;
	st.traced = true;
	r = tft_writer_add_step(rm->w, &st);
	if (!r && rm->entries_odd)
		r = store_entries(rm);
	/* its partition and cost graphs belong to this step (a slice's details list them first) */
	if (!r)
		r = tft_graph_link_step(rm->w, graph0, st.process, st.start_ns, rm->err);
	return r;
}

int tft_runmeta_ingest_as(struct tft_writer *w, const char *name, const uint8_t *data, size_t len,
			  int format, const struct tft_ingest_opts *opts, struct tft_error *err)
{
	return tft_runmeta_ingest_step(w, name, data, len, format, 0, NULL, opts, err);
}

int tft_runmeta_ingest_step(struct tft_writer *w, const char *name, const uint8_t *data,
			    size_t len, int format, int64_t step_index, const char *step_name,
			    const struct tft_ingest_opts *opts, struct tft_error *err)
{
	struct tft_pb_dec dec;
	struct rm rm;
	struct rm_runmeta meta;
	int text = format == TFT_PB_FMT_RUNMETA_TEXT || format == TFT_PB_FMT_STEPSTATS_TEXT;
	int stepstats = format == TFT_PB_FMT_STEPSTATS || format == TFT_PB_FMT_STEPSTATS_TEXT;
	int64_t graph0 = tft_graph_next_id(w); /* this input's graphs: from here on */
	int r;

	if (!w || (!data && len))
		return tft_error_set(err, TFT_EINVAL, -1, "no writer or no input");
	if (format != TFT_PB_FMT_RUNMETA && format != TFT_PB_FMT_STEPSTATS && !text)
		return tft_error_set(err, TFT_EINVAL, -1, "not a RunMetadata/StepStats format");
	memset(&rm, 0, sizeof(rm));
	memset(&meta, 0, sizeof(meta));
	rm.w = w;
	rm.err = err;
	rm.opts = opts;
	rm.input_len = len;
	rm.input = data;
	rm.text = text;
	rm.stepstats = stepstats;
	rm.step_pos = tft_writer_step_count(w);
	rm.dec = &dec;
	rm.step_process = TFT_NONE;
	rm.step_index = step_index;
	rm.cur_entry = -1;
	rm.name = name;
	rm.step_name = step_name;
	rm.tmpl_cache = tft_rm_tmpl_cache_get(w); /* (none: each input makes its own table) */
	clock_gettime(CLOCK_MONOTONIC, &rm.last_progress);
	r = tft_pb_dec_init(&dec, text, data, len, err);
	if (r)
		return r;
	r = intern_keys(&rm);
	if (r) {
		tft_error_set(err, r, -1, "out of memory");
		goto out;
	}
	rm.sorter = tft_sorter_create(w, opts ? opts->mem_budget : 0);
	if (!rm.sorter) {
		r = tft_error_set(err, TFT_ENOMEM, -1, "out of memory (sorter)");
		goto out;
	}
	/* Binary input with each device once: devices go straight to the writer. */
	if (!text)
		rm.direct = stepstats ? tft_rm_scan_devices(&rm, data, len) : tft_rm_runmeta_scan_devices(&rm, data, len);
	rm.pend_budget = opts && opts->mem_budget ? opts->mem_budget / 2 : (size_t)64 << 20;
	rm.try_par = rm.direct && opts && opts->threads >= 2 && !tft_rm_continues_any(&rm);
	if (stepstats) {
		r = rm.try_par ? tft_rm_par_stepstats(&rm, NULL) : RM_SERIAL;
		if (r == RM_SERIAL)
			r = tft_pb_wire_decode(&dec, &tft_rm_stepstats_msg, NULL, &rm);
	} else
		r = tft_pb_wire_decode(&dec, &tft_rm_runmeta_msg, &meta, &rm);
	if (r)
		goto out;
	r = tft_sorter_finish(rm.sorter, 0, err);
	if (r)
		goto out;
	r = tft_graph_import_finish(rm.graphs, err);
	rm.graphs = NULL;
	if (r)
		goto out;
	r = tft_rm_emit_flows(&rm);
	if (r) {
		tft_error_set(err, r, -1, "could not store the send/recv flows");
		goto out;
	}
	r = tft_rm_emit_dataflow(&rm);
	if (r) {
		tft_error_set(err, r, -1, "could not store the dataflow flows");
		goto out;
	}
	if (rm.nodes && (r = add_step(&rm, &meta, graph0))) {
		tft_error_set(err, r, -1, "could not store the step");
		goto out;
	}
	r = tft_writer_join_meta(w, "format", stepstats ? "stepstats" : "runmeta", "+");
	if (!r)
		r = tft_writer_join_meta(w, "producer", "TensorFlow", " + ");
	if (r)
		tft_error_set(err, r, -1, "could not store the session metadata");
	if (!r && opts && opts->progress)
		opts->progress(opts->progress_ctx, len, len, rm.nodes);
out:
	if (r && err && err->code == TFT_OK)
		tft_error_set(err, r, -1, "%s", tft_strerror(r));
	if (r)
		tft_error_set_file(err, name);
	if (text)
		tft_pb_text_fini(&dec);
	tft_rm_free(&rm);
	return r;
}

int tft_runmeta_ingest(struct tft_writer *w, const char *name, const uint8_t *data, size_t len,
		       const struct tft_ingest_opts *opts, struct tft_error *err)
{
	int fmt = tft_pb_sniff(data, len, name);

	if (fmt != TFT_PB_FMT_RUNMETA && fmt != TFT_PB_FMT_STEPSTATS &&
	    fmt != TFT_PB_FMT_RUNMETA_TEXT && fmt != TFT_PB_FMT_STEPSTATS_TEXT) {
		/* Default: binary RunMetadata, so malformed input gets a precise error. */
		fmt = TFT_PB_FMT_RUNMETA;
		if (len && (data[0] == ' ' || data[0] == '\n' || data[0] == '#' ||
			    (data[0] >= 'a' && data[0] <= 'z')))
			fmt = TFT_PB_FMT_RUNMETA_TEXT;
	}
	return tft_runmeta_ingest_as(w, name, data, len, fmt, opts, err);
}
