/* SPDX-License-Identifier: MIT */
/*
 * Planes and lines -> processes and tracks: a plane's process (the first
 * /host:CPU is the host's), a line's track kind (thread, GPU stream, device,
 * communication) and flags (concurrent kernels, lines derived from others),
 * registered with the line's first event.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "collect/xspace/xs_int.h"

static int has_ci(const uint8_t *s, size_t n, const char *needle)
{
	size_t k = strlen(needle);

	for (size_t i = 0; i + k <= n; i++) {
		size_t j = 0;

		for (; j < k; j++) {
			uint8_t c = s[i + j];

			if (c >= 'A' && c <= 'Z')
				c = (uint8_t)(c - 'A' + 'a');
			if (c != (uint8_t)needle[j])
				break;
		}
		if (j == k)
			return 1;
	}
	return 0;
}

/* Register a plane's process (the first one named /host:CPU is the host's). */
uint32_t tft_xs_add_plane_process(struct xs *x, struct tft_pb_bytes name, int64_t id,
				  uint32_t index, uint32_t labels)
{
	struct tft_process p;
	uint32_t proc;

	memset(&p, 0, sizeof(p));
	p.name = tft_xs_intern(x, name.p, name.len);
	p.host = x->host;
	p.pid = id;
	p.rank = -1;
	p.sort_index = (int32_t)index;
	p.labels = labels;
	if (p.name == UINT32_MAX)
		return TFT_NONE;
	proc = tft_writer_add_process(x->w, &p);
	if (proc != TFT_NONE && x->host_process == TFT_NONE && bytes_prefix(name, "/host:CPU"))
		x->host_process = proc;
	return proc;
}

static int ensure_process(struct xs *x)
{
	if (x->process != TFT_NONE)
		return 0;
	x->process = tft_xs_add_plane_process(x, x->plane.name, x->plane.id, x->plane_index, x->labels);
	return x->process == TFT_NONE ? oom(x) : 0;
}

int tft_xs_line_kind(const struct xs *x, struct tft_pb_bytes name)
{
	if (has_ci(name.p, name.len, "nccl") || has_ci(name.p, name.len, "rccl") ||
	    has_ci(name.p, name.len, "collective"))
		return TFT_TRACK_COMM;
	if (!x->device_plane)
		return TFT_TRACK_THREAD;
	if (bytes_prefix(name, "Stream #") || has_ci(name.p, name.len, "stream") ||
	    has_ci(name.p, name.len, "memcpy"))
		return TFT_TRACK_GPU_STREAM;
	return TFT_TRACK_DEVICE;
}

/*
 * XProf derives lines on a device plane from its kernels or ops: they repeat
 * that time (a step, a module, a name scope, a TF op spans the kernels it
 * ran), so aggregates count them out (TFT_TRACKF_DERIVED). "XLA Ops" is the
 * ops themselves on a plane without streams (a TPU), derived from the
 * kernels where the plane has streams: decided in tft_xs_mark_derived_lines().
 */
static bool derived_line_name(struct tft_pb_bytes n)
{
	static const char *const names[] = {
		"Steps", "XLA Modules", "TensorFlow Ops", "Framework Ops", "TensorFlow Name Scope",
		"Framework Name Scope", "Source code", "Launch Stats", "Sparse Core Steps",
		"XLA TraceMe",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (bytes_eq(n, names[i]))
			return true;
	return false;
}

/* The flags of a line's track (see tft_xs_line_kind()). */
uint32_t tft_xs_line_flags(const struct xs *x, int kind, struct tft_pb_bytes name)
{
	if (kind == TFT_TRACK_GPU_STREAM || (kind == TFT_TRACK_COMM && x->device_plane))
		return TFT_TRACKF_CONCURRENT; /* a stream's (or comm engine's) kernels */
	if (x->device_plane && derived_line_name(name))
		return TFT_TRACKF_DERIVED;
	return 0;
}

/* The line's track, registered with its first event. */
int tft_xs_line_track(struct xs *x)
{
	int r;

	if (x->track != TFT_NONE)
		return 0;
	r = ensure_process(x);
	if (r)
		return r;
	x->pending.process = x->process;
	x->track = tft_writer_add_track(x->w, &x->pending);
	if (x->track == TFT_NONE)
		return tft_pb_wire_fail(x->dec, TFT_ENOMEM, -1, "could not register a track");
	return 0;
}

/* The scanned line's track, ready to register (x: on the line's plane). */
int tft_xs_line_pending(struct xs *x, struct xs_job *j)
{
	memset(&j->pending, 0, sizeof(j->pending));
	j->pending.kind = (uint32_t)tft_xs_line_kind(x, j->tname);
	j->pending.flags = tft_xs_line_flags(x, (int)j->pending.kind, j->tname);
	j->pending.name = tft_xs_intern(x, j->tname.p, j->tname.len);
	if (j->pending.name == UINT32_MAX)
		return oom(x);
	j->pending.tid = j->tid;
	j->pending.sort_index = (int32_t)(j->sub.index == TFT_PB_SINGULAR ? 0 : j->sub.index);
	return 0;
}

/* Name the line's track as j says (it was registered under another name). */
int tft_xs_line_rename(struct xs *x, const struct xs_job *j)
{
	uint32_t name = tft_xs_intern(x, j->tname.p, j->tname.len);
	int r, kind;

	if (name == UINT32_MAX)
		return oom(x);
	kind = tft_xs_line_kind(x, j->tname);
	r = tft_writer_lane_name_track(x->lane, j->track, (uint32_t)kind,
				       tft_xs_line_flags(x, kind, j->tname), name, j->tid);
	return r ? tft_pb_wire_fail(x->dec, r, j->sub.p - x->dec->base,
				    "could not name the line's track: %s", tft_strerror(r))
		 : 0;
}

/*
 * After an XSpace: on a device plane that has stream lines, every other line
 * (XLA Ops included) is derived from the kernels. Tracks from `first` on are
 * this input's.
 */
void tft_xs_mark_derived_lines(struct tft_writer *w, uint32_t first)
{
	uint32_t n = tft_writer_track_count(w);
	uint32_t np = tft_writer_process_count(w);
	uint8_t *streams = calloc(np ? np : 1, 1);

	if (!streams)
		return; /* the flags sharpen the accounting only */
	for (uint32_t i = first; i < n; i++) {
		const struct tft_track *t = tft_writer_track(w, i);
		if (t && t->kind == TFT_TRACK_GPU_STREAM && t->process < np)
			streams[t->process] = 1;
	}
	for (uint32_t i = first; i < n; i++) {
		struct tft_track *t = tft_writer_track(w, i);
		if (t && t->kind == TFT_TRACK_DEVICE && t->process < np && streams[t->process])
			t->flags |= TFT_TRACKF_DERIVED;
	}
	free(streams);
}
