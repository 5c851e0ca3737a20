/* SPDX-License-Identifier: MIT */
/*
 * A session, whatever answers it: every tft_session_* call goes to the ops
 * the session was opened with. A session file (session_file.c, SQLite and
 * zstd) is one implementation; a job directory's view (job/job_view.c) is
 * another. This file knows neither, so the readers above (statistics, the
 * queries, the exports) build against sessions without any storage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/session.h"

struct tft_session {
	const struct tft_session_ops *ops; /* borrowed: what answers */
	void *impl;                        /* owned through ops->close */
	char path[4096];
};

struct tft_session *tft_session_open_ops(const struct tft_session_ops *ops, void *impl,
					 const char *path, struct tft_error *err)
{
	struct tft_session *s = calloc(1, sizeof(*s));

	if (!s) {
		ops->close(impl);
		tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
		return NULL;
	}
	s->ops = ops;
	s->impl = impl;
	snprintf(s->path, sizeof(s->path), "%s", path ? path : "");
	return s;
}

void *tft_session_ops_impl(const struct tft_session *s, const struct tft_session_ops *ops)
{
	return s && s->ops == ops ? s->impl : NULL;
}

void tft_session_close(struct tft_session *s)
{
	if (!s)
		return;
	s->ops->close(s->impl);
	free(s);
}

int tft_session_refresh(struct tft_session *s, struct tft_error *err)
{
	return s->ops->refresh(s->impl, err);
}

const char *tft_session_path(const struct tft_session *s)
{
	return s->path;
}

/* ---- what the session holds --------------------------------------------------------- */

void tft_session_summary_tracks(struct tft_session_summary *out, const struct tft_track *tracks, uint32_t n)
{
	bool any = false;

	for (uint32_t i = 0; i < n; i++) {
		const struct tft_track *t = &tracks[i];

		out->slices += t->slices;
		out->instants += t->instants;
		out->counters += t->counters;
		if (t->min_ts_ns > t->max_ts_ns)
			continue;
		if (!any || t->min_ts_ns < out->start_ns)
			out->start_ns = t->min_ts_ns;
		if (!any || t->max_ts_ns > out->end_ns)
			out->end_ns = t->max_ts_ns;
		any = true;
	}
}

void tft_session_get_summary(const struct tft_session *s, struct tft_session_summary *out)
{
	s->ops->get_summary(s->impl, out);
}

uint32_t tft_session_process_count(const struct tft_session *s)
{
	return s->ops->process_count(s->impl);
}

const struct tft_process *tft_session_process(const struct tft_session *s, uint32_t id)
{
	return s->ops->process(s->impl, id);
}

uint32_t tft_session_track_count(const struct tft_session *s)
{
	return s->ops->track_count(s->impl);
}

const struct tft_track *tft_session_track(const struct tft_session *s, uint32_t id)
{
	return s->ops->track(s->impl, id);
}

const char *tft_session_str(const struct tft_session *s, uint32_t id, size_t *len)
{
	return s->ops->str(s->impl, id, len);
}

uint32_t tft_session_string_count(const struct tft_session *s)
{
	return s->ops->string_count(s->impl);
}

const char *tft_session_meta(const struct tft_session *s, const char *key)
{
	return s->ops->meta(s->impl, key);
}

uint32_t tft_session_step_count(const struct tft_session *s)
{
	return s->ops->step_count(s->impl);
}

const struct tft_step *tft_session_step(const struct tft_session *s, uint32_t i)
{
	return s->ops->step(s->impl, i);
}

int tft_session_graph_lookup(struct tft_session *s, const char *name, tft_graph_node_fn fn, void *ctx,
			     struct tft_error *err)
{
	return s->ops->graph_lookup(s->impl, name, fn, ctx, err);
}

void tft_session_set_cache_bytes(struct tft_session *s, size_t bytes)
{
	s->ops->set_cache_bytes(s->impl, bytes);
}

/* ---- events, flows, statistics ------------------------------------------------------- */

int tft_session_scan(struct tft_session *s, uint32_t track, int64_t t0_ns, int64_t t1_ns,
		     int64_t resolution_ns, tft_event_fn fn, void *ctx, struct tft_error *err)
{
	return s->ops->scan(s->impl, track, t0_ns, t1_ns, resolution_ns, fn, ctx, err);
}

int tft_session_flows(struct tft_session *s, tft_flow_fn fn, void *ctx, struct tft_error *err)
{
	return s->ops->flows(s->impl, fn, ctx, err);
}

uint32_t tft_session_raw_chunk_count(const struct tft_session *s, uint32_t track)
{
	return s->ops->raw_chunk_count(s->impl, track);
}

void tft_session_raw_chunk(const struct tft_session *s, uint32_t track, uint32_t i, int64_t *t_min,
			   int64_t *t_max, uint32_t *n)
{
	s->ops->raw_chunk(s->impl, track, i, t_min, t_max, n);
}

int tft_session_scan_raw_chunk(struct tft_session *s, uint32_t track, uint32_t i, tft_event_fn fn,
			       void *ctx, struct tft_error *err)
{
	return s->ops->scan_raw_chunk(s->impl, track, i, fn, ctx, err);
}

int tft_session_has_chunk_stats(const struct tft_session *s)
{
	return s->ops->has_chunk_stats(s->impl);
}

int tft_session_track_stats(struct tft_session *s, uint32_t track, tft_chunk_stats_fn fn, void *ctx,
			    struct tft_error *err)
{
	return s->ops->track_stats(s->impl, track, fn, ctx, err);
}

int tft_session_chunk_stats_complete(struct tft_session *s, uint32_t track, struct tft_error *err)
{
	return s->ops->chunk_stats_complete(s->impl, track, err);
}

int tft_session_chunk_stats(struct tft_session *s, uint32_t track, tft_chunk_stats_fn fn, void *ctx,
			    struct tft_error *err)
{
	return s->ops->chunk_stats(s->impl, track, fn, ctx, err);
}
