/* SPDX-License-Identifier: MIT */
/*
 * The XSpace importer's entry (collect/ingest_xspace.h): each XSpace of the
 * input (a concatenation holds one per host) read in two passes (its
 * hostnames, errors and clock; then its planes), then its flows, steps and
 * metadata stored.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/xspace/xs_int.h"

void tft_xs_progress(struct xs *x, uint64_t pos)
{
	if (!x->opts || !x->opts->progress || x->quiet ||
	    !tft_ingest_progress_due(&x->last_progress, 0))
		return;
	/* A clone's count plus what the groups before it stored. */
	x->opts->progress(x->opts->progress_ctx, pos, x->input_len,
			  x->events + (x->parent ? x->parent->events : 0));
}

/*
 * Keep one of the profiler's own error or warning texts ("CUPTI could not
 * be loaded", dropped events): joined, distinct, one per line, as meta
 * `key`; the first XS_MSG_MAX, each cut at XS_MSG_LEN bytes.
 */
#define XS_MSG_MAX 16
#define XS_MSG_LEN 400
static int keep_message(struct xs *x, const char *key, int64_t n, const struct tft_pb_val *v)
{
	char text[XS_MSG_LEN + 4];
	size_t k = 0;
	int r;

	if (n > XS_MSG_MAX || !v->len)
		return 0;
	for (size_t i = 0; i < v->len && k < XS_MSG_LEN; i++) {
		unsigned char c = v->p[i];

		text[k++] = c == '\n' || c == '\r' || c == '\t' ? ' ' : c ? (char)c : '?';
	}
	if (v->len > XS_MSG_LEN)
		memcpy(text + k, "...", 3), k += 3;
	text[k] = 0;
	r = tft_writer_join_meta(x->w, key, text, "\n");
	return r == TFT_ENOMEM ? oom(x) : 0;
}

int tft_xs_on_space_field(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct xs *x = ctx;

	switch (f->num) {
	case 2:
		return keep_message(x, "xspace_error_messages", ++x->nerrors, v);
	case 3:
		return keep_message(x, "xspace_warning_messages", ++x->nwarnings, v);
	case 4:
		if (!x->have_host && v->len) {
			x->host = tft_xs_intern(x, v->p, v->len);
			if (x->host == UINT32_MAX)
				return oom(x);
			x->have_host = 1;
		}
		break;
	}
	return 0;
}

static void xs_free(struct xs *x)
{
	if (x->sorter)
		tft_sorter_destroy(x->sorter);
	free(x->smeta);
	free(x->strs);
	tft_xs_idmap_free(&x->smeta_map);
	free(x->emeta);
	tft_xs_idmap_free(&x->emeta_map);
	free(x->meta_args);
	tft_xs_ctab_free(&x->corr);
	for (int p = 0; p < 2; p++) {
		tft_xs_ctab_free(&x->halves.half[p]);
		free(x->halves.made[p]);
		free(x->halves.more[p]);
	}
	tft_xs_idmap_free(&x->group_map);
	free(x->groups);
	free(x->steps);
	free(x->step_keys);
	free(x->pend);
	free(x->pargs);
	free(x->heads);
	for (uint32_t i = 0; i < x->nclones; i++)
		tft_xs_clone_free(&x->clones[i]);
	free(x->clones);
	free(x->jobs);
	tft_xs_snaps_free(x);
	free(x->snaps);
	pthread_mutex_destroy(&x->sorter_mu);
}

/* One XSpace message: data[0, len) at byte `base` of the input. */
static int ingest_space(struct tft_writer *w, const char *name, const uint8_t *data, size_t len,
			const struct tft_ingest_opts *opts, struct tft_error *err)
{
	struct tft_pb_dec dec;
	struct xs x;
	int r;

	if (!w || (!data && len))
		return tft_error_set(err, TFT_EINVAL, -1, "no writer or no input");
	memset(&x, 0, sizeof(x));
	x.w = w;
	x.dec = &dec;
	x.err = err;
	x.opts = opts;
	x.input_len = len;
	x.host_process = TFT_NONE;
	pthread_mutex_init(&x.sorter_mu, NULL);
	clock_gettime(CLOCK_MONOTONIC, &x.last_progress);
	tft_pb_wire_init(&dec, data, len, err);
	x.lim = len ? data + len : data; /* data may be NULL when empty */
	x.k_long_name = tft_writer_intern_cstr(w, "long_name");
	x.k_num_occ = tft_writer_intern_cstr(w, "num_occurrences");
	x.k_metadata_id = tft_writer_intern_cstr(w, "metadata_id");
	x.c_event = tft_writer_intern_cstr(w, "xevent");
	x.flow_cat = tft_writer_intern_cstr(w, "launch");
	x.flow_name = tft_writer_intern_cstr(w, "launch");
	if (x.k_long_name == UINT32_MAX || x.k_num_occ == UINT32_MAX ||
	    x.k_metadata_id == UINT32_MAX || x.c_event == UINT32_MAX || x.flow_cat == UINT32_MAX ||
	    x.flow_name == UINT32_MAX) {
		r = tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
		goto out;
	}
	x.pend_budget = opts && opts->mem_budget ? opts->mem_budget / 2 : (size_t)64 << 20;
	x.sorter = tft_sorter_create(w, opts ? opts->mem_budget : 0);
	if (!x.sorter) {
		r = tft_error_set(err, TFT_ENOMEM, -1, "out of memory (sorter)");
		goto out;
	}
	/* Pass 1: hostnames, errors, warnings (they come after the planes). */
	r = tft_pb_wire_decode(&dec, &tft_xs_space_msg, NULL, &x);
	if (r)
		goto out;
	if (!x.have_host) {
		x.host = tft_xs_host_from_name(&x, name);
		if (x.host == UINT32_MAX) {
			r = tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
			goto out;
		}
	}
	x.host = tft_xs_distinct_host(&x, name);
	if (x.host == UINT32_MAX) {
		r = tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
		goto out;
	}
	/* Pass 2: the planes, one at a time. */
	x.parallel = opts && opts->threads >= 2 &&
		     len >= (opts->par_min_bytes ? opts->par_min_bytes : PAR_MIN_BYTES);
	x.group_max = opts && opts->mem_budget ? opts->mem_budget / 2 : PAR_GROUP_BYTES;
	r = tft_pb_wire_decode(&dec, &tft_xs_space_planes_msg, NULL, &x);
	if (x.parallel && (x.njobs || x.nsnaps))
		r = tft_xs_run_jobs(&x, r); /* the last group; an error of its reading comes after its jobs' */
	if (r)
		goto out;
	r = tft_sorter_finish(x.sorter, 0, err);
	if (r)
		goto out;
	r = tft_xs_emit_flows(&x);
	if (!r)
		r = tft_xs_emit_steps(&x);
	if (!r && (x.nerrors || x.nwarnings)) {
		r = tft_writer_add_count(w, TFT_COUNT_XSPACE_ERRORS, x.nerrors);
		if (!r)
			r = tft_writer_add_count(w, TFT_COUNT_XSPACE_WARNINGS, x.nwarnings);
	}
	if (!r)
		r = tft_writer_join_meta(w, "format", "xspace", "+");
	if (!r)
		r = tft_writer_join_meta(w, "producer", "TensorFlow/JAX profiler", " + ");
	if (r) {
		tft_error_set(err, r, -1, "could not store flows, steps or metadata");
		goto out;
	}
	if (opts && opts->progress)
		opts->progress(opts->progress_ctx, len, len, x.events);
out:
	if (r && err && err->code == TFT_OK)
		tft_error_set(err, r, -1, "%s", tft_strerror(r));
	if (r)
		tft_error_set_file(err, name);
	xs_free(&x);
	return r;
}

/*
 * Where the next XSpace of concatenated ones starts (`cat a.xplane.pb
 * b.xplane.pb`, which protobuf reads as one XSpace whose planes and
 * hostnames are both hosts'): serializers write the fields in number order,
 * so a plane after an errors, warnings or hostnames field, when planes came
 * before, starts the next host's XSpace. `len` if there is none, or where
 * the fields stop making sense (the decoder then reports that).
 */
static size_t next_space(const uint8_t *data, size_t len)
{
	struct tft_pb_dec q;
	struct tft_pb_iter it;
	struct tft_pb_raw f;
	int planes = 0, tail = 0;

	tft_xs_quiet_iter(&q, &it, data, len);
	while (tft_pb_wire_iter_next(&q, &it, &f) == 1) {
		if (f.num == 1) {
			if (planes && tail)
				return (size_t)f.offset;
			planes = 1;
		} else if (f.num >= 2 && f.num <= 4) {
			tail = 1;
		}
	}
	return len;
}

int tft_xspace_ingest(struct tft_writer *w, const char *name, const uint8_t *data, size_t len,
		      const struct tft_ingest_opts *opts, struct tft_error *err)
{
	size_t at = 0;
	uint32_t first = tft_writer_track_count(w);

	/* Each XSpace of a concatenation is its host's: own host name, clock, flows, steps. */
	do {
		size_t n = len ? next_space(data + at, len - at) : 0;
		int r = ingest_space(w, name, data ? data + at : data, n, opts, err);

		if (r) {
			if (err && err->offset >= 0)
				err->offset += (int64_t)at;
			return r;
		}
		at += n;
	} while (at < len);
	tft_xs_mark_derived_lines(w, first);
	return 0;
}
