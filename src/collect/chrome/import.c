/* SPDX-License-Identifier: MIT */
/*
 * Chrome trace event format importer (Chrome JSON, PyTorch Kineto,
 * tf.timeline): walks the document one event at a time, maps pids/tids to
 * processes and tracks, pairs B/E, b/e, N/D and flow events, and pushes
 * every event through the sorter (the input is not ordered).
 *
 * Stages: the parser (JSON -> batches of parsed events whose strings are
 * borrowed from the JSON window: decode.c) and the committer (batches ->
 * tracks, pairing, sorter, writer: commit.c). On a large input the
 * committer runs on a second thread, and the input is either mapped whole
 * (a plain file: the window is the file, its pages released behind the
 * committer) or read and inflated ahead by a third thread into windows that
 * circulate with the batches (pipeline.c). Only the committer touches the
 * writer and the importer's tables, except for the few top-level keys,
 * which the parser handles after waiting for the committer to go idle
 * (document.c). Flow points are kept to the end and paired in time order
 * (flows.c). This file: the import's entry point and its end of input
 * (open slices closed, tracks classified, steps, counts, format).
 */
#include "collect/chrome/chrome_int.h"

/* B slices and spans still open at the end: closed at the trace's end, flagged unclosed. */
static int close_open(struct chrome *c)
{
	int64_t end = c->have_end ? c->trace_end : 0;
	int rc;

	for (uint32_t i = 0; i < c->nthreads; i++) {
		struct thread *t = &c->threads[i];
		for (uint32_t j = 0; j < t->nopen; j++) {
			const struct open_slice *o = &t->open[j];
			uint32_t na = (j + 1 < t->nopen ? t->open[j + 1].args_start : t->nargs) -
				      o->args_start;
			if ((rc = push(c, t->track, TFT_EV_SLICE, TFT_EVF_UNCLOSED, o->ts,
				       span_ns(o->ts, end), 0, o->name, o->cat,
				       na ? t->args + o->args_start : NULL, na)))
				return rc;
			c->unclosed++;
		}
		t->nopen = 0;
		t->nargs = 0;
	}
	for (uint32_t i = 0; i < c->nspans; i++) {
		struct span *s = &c->spans[i];
		if (s->kind == SPAN_FREE)
			continue;
		if ((rc = push(c, s->track, TFT_EV_SLICE, TFT_EVF_UNCLOSED, s->ts,
			       span_ns(s->ts, end), 0, s->name, s->cat, s->args, s->nargs)))
			return rc;
		if (s->kind == SPAN_ASYNC)
			c->unclosed++;
	}
	return 0;
}

static int finish(struct chrome *c)
{
	int rc;

	if ((rc = close_open(c)))
		return rc;
	/* names may have arrived after the events: classify once more */
	if ((rc = tft_chrome_classify_threads(c)))
		return rc;
	for (uint32_t i = 0; i < c->nprocs; i++) {
		struct proc *p = &c->procs[i];
		struct tft_process *wp;
		if (p->id == TFT_NONE || !(wp = tft_writer_process(c->w, p->id)))
			continue;
		if (c->has_rank)
			wp->rank = c->rank;
		if (c->host)
			wp->host = c->host;
	}
	/* tftracer metadata: after the kinds, ranks and hosts set above */
	if (c->md_tftracer)
		tft_chrome_apply_md(c);
	if (c->shift_ns && c->have_end) {
		int64_t t;
		if (__builtin_add_overflow(c->trace_start, c->shift_ns, &t) ||
		    __builtin_add_overflow(c->trace_end, c->shift_ns, &t))
			return tft_error_set(c->err, TFT_EFORMAT, -1,
					     "baseTimeNanoseconds moves timestamps out of the int64 range");
	}
	if ((rc = tft_sorter_finish(c->sorter, c->shift_ns, c->err)))
		return rc;
	if ((rc = tft_chrome_emit_flows(c)))
		return rc;
	if (c->md_tftracer && c->md_has_steps) {
		c->nsteps = 0;
		if ((rc = tft_chrome_add_md_steps(c)))
			return rc;
	}
	for (uint32_t i = 0; i < c->nsteps; i++) {
		struct tft_step s = c->steps[i];
		s.start_ns += c->shift_ns;
		if (c->step_proc[i] != TFT_NONE && (rc = tft_chrome_ensure_proc(c, c->step_proc[i], &s.process)))
			return rc;
		if ((rc = tft_writer_add_step(c->w, &s)))
			return rc;
	}
	if ((c->unmatched_ends && (rc = tft_writer_add_count(c->w, TFT_COUNT_UNMATCHED_ENDS, c->unmatched_ends))) ||
	    (c->unclosed && (rc = tft_writer_add_count(c->w, TFT_COUNT_UNCLOSED_SLICES, c->unclosed))) ||
	    (c->unmatched_flows &&
	     (rc = tft_writer_add_count(c->w, TFT_COUNT_UNMATCHED_FLOWS, c->unmatched_flows))) ||
	    (c->skipped && (rc = tft_writer_add_count(c->w, TFT_COUNT_SKIPPED_EVENTS, c->skipped))))
		return rc;
	if (c->truncated && (rc = tft_writer_set_meta(c->w, "truncated", "1")))
		return rc;
	const char *fmt = c->kineto ? "kineto" : c->tf_timeline ? "tf_timeline" : "chrome";
	/* (several inputs into one session: "kineto+xspace"; producers likewise) */
	if ((rc = tft_writer_join_meta(c->w, "format", fmt, "+")))
		return rc;
	if (c->kineto)
		rc = tft_writer_join_meta(c->w, "producer", "PyTorch Profiler", " + ");
	else if (c->tf_timeline)
		rc = tft_writer_join_meta(c->w, "producer", "TensorFlow", " + ");
	return rc;
}

static void destroy(struct chrome *c)
{
	for (uint32_t i = 0; i < c->nthreads; i++) {
		free(c->threads[i].open);
		free(c->threads[i].args);
	}
	for (uint32_t i = 0; i < c->nspans; i++)
		free(c->spans[i].args);
	free(c->threads);
	free(c->procs);
	free(c->cat_cls);
	free(c->spans);
	free(c->fpoints);
	free(c->fkey_ids);
	free(c->steps);
	free(c->step_proc);
	free(c->args);
	tft_hmap_fini(&c->map);
	free(c->icache);
	free(c->md_procs);
	free(c->md_tracks);
	free(c->md_steps);
	free(c->md_step_pid);
	tft_sorter_destroy(c->sorter);
}

int tft_ingest_chrome_source(struct tft_writer *w, struct tft_source *src,
			     const struct tft_ingest_opts *opts, const struct tft_chrome_opts *copts,
			     struct tft_error *err)
{
	struct chrome c;
	int rc;

	memset(&c, 0, sizeof(c));
	c.w = w;
	c.src = src;
	c.opts = opts;
	c.err = err;
	c.last_thread = TFT_NONE;
	c.global_proc = TFT_NONE;
	c.global_track = TFT_NONE;
	c.free_span = TFT_NONE;
	c.last_cat_checked = TFT_NONE;
	tft_hmap_init(&c.map, 3);
	clock_gettime(CLOCK_MONOTONIC, &c.last_progress);
	c.icache = calloc(1u << ICACHE_BITS, sizeof(*c.icache));
	if (!c.icache) {
		rc = tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
		goto out;
	}
	c.sorter = tft_sorter_create(w, opts ? opts->mem_budget : 0);
	if (!c.sorter) {
		rc = tft_error_set(err, TFT_ENOMEM, -1, "cannot create the event sorter");
		goto out;
	}
	if ((rc = intern(&c, "id", 2, &c.s_id)))
		goto out;
	if ((rc = tft_chrome_parse_all(&c, src, copts, err)))
		goto out;
	rc = finish(&c);
	c.raw_offset = tft_source_raw_offset(src);
	tft_chrome_progress(&c, true);
out:
	if (rc)
		tft_error_set_file(err, tft_source_name(src));
	destroy(&c);
	return rc;
}
