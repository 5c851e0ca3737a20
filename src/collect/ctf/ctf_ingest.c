/* SPDX-License-Identifier: MIT */
/*
 * CTF traces (LTTng UST and kernel, OTF2 converted to CTF, any CTF 1.8)
 * through libbabeltrace2: source.ctf.fs reads each trace, filter.utils.muxer
 * puts every stream's messages in time order, and a simple sink hands them
 * to the mapping (lttng.c, otf2.c). libbabeltrace2 parses every byte
 * (metadata, packets, events); these files only walk the decoded trace IR.
 * The mapping is documented in docs/formats-lttng.md.
 *
 * Slices close when their exit arrives, so they reach the writer out of
 * start order: every event goes through the sorter, which also means
 * nothing reaches the writer's tracks before the whole input was read.
 *
 * libbabeltrace2 2.0.4 hangs on a packetized metadata file cut short and
 * aborts on some corrupt packets: the metadata framing is checked first
 * (find.c) and each trace is read once by the `babeltrace2` tool in a
 * process of its own before this one reads it (bt_graph.c). This file: the
 * entry point and the end of the import.
 */
#include "collect/ctf/ctf_int.h"

static int finish(struct ctf *c)
{
	int rc;

	/* entries never exited: unclosed slices to the trace's end */
	for (uint32_t x = 0; x < c->nexecs && !c->rc; x++) {
		while (c->execs[x].n && !c->rc) {
			c->nargs = 0;
			tft_ctf_close_slice(c, x, c->execs[x].n - 1, c->t_max, TFT_EVF_UNCLOSED);
			c->unclosed++;
		}
	}
	/* OpenCL device activity, moved onto the trace's clock */
	for (uint32_t i = 0; i < c->ncl && !c->rc; i++) {
		struct cl_pending *h = &c->cl[i];
		int64_t t;
		if (__builtin_add_overflow(h->dev_ts, c->procs[c->execs[h->exec].proc].cl_offset, &t)) {
			t = h->dev_ts; /* (a device time that cannot be moved: left as it is) */
			c->unaligned++;
		}
		tft_ctf_push(c, h->exec, TFT_EV_SLICE, t, h->dev_dur, h->name, h->cat, 0, h->args, h->nargs);
	}
	if (c->rc)
		return c->rc;
	if ((rc = tft_sorter_finish(c->sorter, 0, c->err)))
		return rc;
	for (uint32_t i = 0; i < c->nsteps; i++)
		if ((rc = tft_writer_add_step(c->w, &c->steps[i])))
			return rc;
	if ((c->unclosed && (rc = tft_writer_add_count(c->w, TFT_COUNT_UNCLOSED_SLICES, (int64_t)c->unclosed))) ||
	    (c->unmatched_ends &&
	     (rc = tft_writer_add_count(c->w, TFT_COUNT_UNMATCHED_ENDS, (int64_t)c->unmatched_ends))) ||
	    (c->dropped && (rc = tft_writer_add_count(c->w, TFT_COUNT_DROPPED, (int64_t)c->dropped))) ||
	    (c->dropped_packets &&
	     (rc = tft_writer_add_count(c->w, TFT_COUNT_DROPPED_PACKETS, (int64_t)c->dropped_packets))) ||
	    (c->unaligned &&
	     (rc = tft_writer_add_count(c->w, TFT_COUNT_DEVICE_TIMES_UNALIGNED, (int64_t)c->unaligned))))
		return rc;
	bool otf2 = false, lttng = false;
	for (uint32_t i = 0; i < c->ntraces; i++) {
		otf2 |= c->traces[i].kind == TR_OTF2;
		lttng |= c->traces[i].kind == TR_UST || c->traces[i].kind == TR_KERNEL;
	}
	if ((rc = tft_writer_join_meta(c->w, "format", "ctf", "+")))
		return rc;
	if (lttng && (rc = tft_writer_join_meta(c->w, "producer", "LTTng", " + ")))
		return rc;
	if (otf2 && (rc = tft_writer_join_meta(c->w, "producer", "OTF2", " + ")))
		return rc;
	return 0;
}

int tft_ctf_ingest(struct tft_writer *w, const char *path, const struct tft_ingest_opts *opts,
		   struct tft_error *err)
{
	struct ctf c = {
		.w = w, .opts = opts, .err = err, .t_min = INT64_MAX, .t_max = INT64_MIN,
	};
	struct found f = {0};
	char dir[4096];
	int rc;

	if (tft_ctf_is_dir(path)) {
		if ((rc = tft_ctf_find_traces(path, 0, &f)))
			return tft_error_set(err, rc, -1, "out of memory");
	} else if (tft_ctf_trace_of_file(path, dir, sizeof(dir))) {
		if ((rc = tft_ctf_find_traces(dir, FIND_DEPTH, &f)))
			return tft_error_set(err, rc, -1, "out of memory");
	}
	if (f.n == 0) {
		tft_ctf_found_free(&f);
		rc = tft_error_set(err, TFT_ENOTFOUND, -1,
				   "no CTF trace here: expected a directory holding a `metadata` file");
		tft_error_set_file(err, path);
		return rc;
	}
	if (f.overflow) {
		rc = tft_error_set(err, TFT_EFORMAT, -1,
				   "more than %d CTF traces or %d directories below this directory: "
				   "import a part at a time", MAX_TRACES, MAX_VISIT);
		tft_error_set_file(err, path);
		tft_ctf_found_free(&f);
		return rc;
	}
	tft_ctf_found_sort(&f);
	tft_hmap_init(&c.proc_map, 2);
	tft_hmap_init(&c.exec_map, 2);
	tft_json_write_init_mem(&c.jw);
	clock_gettime(CLOCK_MONOTONIC, &c.last_progress);
	c.s_empty = intern_cstr(&c, "");
	if (!c.rc && !(c.sorter = tft_sorter_create(w, opts ? opts->mem_budget : 0)))
		oom(&c);
	rc = c.rc;
	for (uint32_t i = 0; i < f.n && !rc; i++)
		rc = tft_ctf_check_metadata(&c, f.dirs[i]);
	for (uint32_t i = 0; i < f.n && !rc; i++)
		if (!(rc = tft_ctf_trial_read(&c, &f, i)))
			rc = tft_ctf_run_graph(&c, &f, i);
	if (!rc)
		rc = finish(&c);
	if (rc && !err->file[0] && f.n)
		tft_error_set_file(err, f.dirs[0]);

	tft_sorter_destroy(c.sorter);
	tft_json_write_fini(&c.jw);
	for (uint32_t i = 0; i < c.nexecs; i++) {
		for (uint32_t k = 0; k < c.execs[i].n; k++)
			free(c.execs[i].st[k].args);
		free(c.execs[i].st);
	}
	for (uint32_t i = 0; i < c.ncl; i++)
		free(c.cl[i].args);
	for (uint32_t i = 0; i < c.ntraces; i++)
		tft_ctf_otf2_free(c.traces[i].otf2);
	free(c.traces);
	free(c.procs);
	free(c.execs);
	free(c.cl);
	free(c.steps);
	for (uint32_t i = 0; i < c.nstreams; i++)
		free(c.streams[i].name);
	free(c.streams);
	tft_hmap_fini(&c.proc_map);
	tft_hmap_fini(&c.exec_map);
	tft_ctf_found_free(&f);
	return rc;
}
