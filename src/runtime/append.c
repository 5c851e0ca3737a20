/* SPDX-License-Identifier: MIT */
/*
 * Slices recorded elsewhere, whole, into the running session
 * (tft_rt_append_slices, runtime/source.h): what a recorder learns only when
 * an operation ends on another thread (a torch.distributed collective
 * completed by its backend) goes, with its args, to a track of its own in the
 * runtime's process, between two drain cycles (tft_rt_with_writer).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/clock.h"
#include "runtime/rt.h"
#include "runtime/source.h"
#include "store/writer.h"

#define TRACKS_MAX 64u

/* The tracks made so far in the running session (under the runtime's locks: fn below). */
static struct {
	const struct tft_writer *w; /* the session they belong to (compared only) */
	uint32_t n;
	struct {
		uint32_t kind, id;
		int64_t last;
		char name[64];
	} t[TRACKS_MAX];
} tracks;

struct job {
	uint32_t kind;
	const char *track;
	const struct tft_rt_slice *s;
	uint32_t n;
	uint32_t appended;
};

static int cmp_ts(const void *a, const void *b)
{
	const struct tft_rt_slice *x = *(const struct tft_rt_slice *const *)a;
	const struct tft_rt_slice *y = *(const struct tft_rt_slice *const *)b;

	return x->ts_ns < y->ts_ns ? -1 : x->ts_ns > y->ts_ns;
}

static uint32_t intern(struct tft_writer *w, const char *s, size_t len)
{
	uint32_t id = tft_writer_intern(w, s ? s : "", s ? len : 0);

	return id == UINT32_MAX ? 0 : id;
}

static int append(void *ctx, struct tft_writer *w)
{
	struct job *j = ctx;
	const struct tft_rt_slice **order;
	struct tft_arg args[TFT_RT_MAX_ARGS];
	int64_t pid = (int64_t)getpid(), skew = tft_rt_test_skew_ns();
	uint32_t proc = TFT_NONE, k;
	int rc = 0;

	if (tracks.w != w) {
		memset(&tracks, 0, sizeof(tracks));
		tracks.w = w;
	}
	for (k = 0; k < tracks.n; k++)
		if (tracks.t[k].kind == j->kind && strcmp(tracks.t[k].name, j->track) == 0)
			break;
	if (k < tracks.n) {
		/* (a new session's writer at the old one's address: its tracks are not ours) */
		const struct tft_track *t = tft_writer_track(w, tracks.t[k].id);
		if (!t || t->kind != j->kind || t->tid != -1 - (int64_t)k) {
			memset(&tracks, 0, sizeof(tracks));
			tracks.w = w;
			k = 0;
		}
	}
	if (k == tracks.n) {
		struct tft_track tr;
		if (k == TRACKS_MAX)
			return TFT_ENOSPC;
		for (uint32_t i = 0, n = tft_writer_process_count(w); i < n; i++) {
			const struct tft_process *p = tft_writer_process(w, i);
			if (p && p->pid == pid) {
				proc = i;
				break;
			}
		}
		if (proc == TFT_NONE)
			return TFT_EINVAL;
		memset(&tr, 0, sizeof(tr));
		tr.process = proc;
		tr.kind = j->kind;
		tr.flags = TFT_TRACKF_CONCURRENT; /* operations in flight at once: lanes */
		tr.name = intern(w, j->track, strlen(j->track));
		tr.tid = -1 - (int64_t)k;
		tr.sort_index = 1000000 + (int32_t)k;
		tracks.t[k].id = tft_writer_add_track(w, &tr);
		if (tracks.t[k].id == TFT_NONE)
			return TFT_ENOMEM;
		tracks.t[k].kind = j->kind;
		tracks.t[k].last = INT64_MIN;
		snprintf(tracks.t[k].name, sizeof(tracks.t[k].name), "%s", j->track);
		tracks.n++;
	}
	order = malloc(j->n * sizeof(*order));
	if (!order)
		return TFT_ENOMEM;
	for (uint32_t i = 0; i < j->n; i++)
		order[i] = &j->s[i];
	qsort(order, j->n, sizeof(*order), cmp_ts);
	for (uint32_t i = 0; i < j->n && !rc; i++) {
		const struct tft_rt_slice *s = order[i];
		struct tft_event ev;
		uint32_t na = 0;

		memset(&ev, 0, sizeof(ev));
		ev.kind = TFT_EV_SLICE;
		ev.track = tracks.t[k].id;
		ev.ts_ns = s->ts_ns + skew;
		ev.dur_ns = s->dur_ns > 0 ? s->dur_ns : 0;
		if (ev.ts_ns < tracks.t[k].last) { /* (the caller hands them in order of start) */
			ev.dur_ns = ev.ts_ns + ev.dur_ns > tracks.t[k].last ? ev.ts_ns + ev.dur_ns - tracks.t[k].last : 0;
			ev.ts_ns = tracks.t[k].last;
		}
		ev.name = intern(w, s->name, s->name ? strlen(s->name) : 0);
		ev.cat = intern(w, s->cat, s->cat ? strlen(s->cat) : 0);
		ev.count = 1;
		for (uint32_t a = 0; a < s->nargs && na < TFT_RT_MAX_ARGS; a++) {
			const struct tft_rt_arg *x = &s->args[a];
			struct tft_arg *y = &args[na];
			y->key = intern(w, x->key, x->key ? strlen(x->key) : 0);
			switch (x->type) {
			case TFT_RT_ARG_INT:
			case TFT_RT_ARG_BOOL:
				y->type = x->type == TFT_RT_ARG_INT ? TFT_ARG_INT : TFT_ARG_BOOL;
				y->v.i = x->i;
				break;
			case TFT_RT_ARG_STR:
				y->type = TFT_ARG_STR;
				y->v.str = intern(w, x->s, x->s ? strlen(x->s) : 0);
				break;
			case TFT_RT_ARG_TEXT:
			case TFT_RT_ARG_JSON:
				y->type = x->type == TFT_RT_ARG_TEXT ? TFT_ARG_STR : TFT_ARG_JSON;
				y->v.str = intern(w, x->s, x->len);
				break;
			default:
				continue;
			}
			na++;
		}
		ev.nargs = (uint16_t)na;
		ev.args = na ? args : NULL;
		rc = tft_writer_append(w, &ev);
		if (rc == TFT_EINVAL) { /* one bad event: lost, the rest go on */
			rc = 0;
			continue;
		}
		if (!rc) {
			tracks.t[k].last = ev.ts_ns;
			j->appended++;
		}
	}
	free(order);
	return rc;
}

TFT_API int tft_rt_append_slices(uint32_t kind, const char *track, const struct tft_rt_slice *s,
				 uint32_t n)
{
	struct job j = { kind, track, s, n, 0 };
	int rc;

	if (!track || !*track || (!s && n) || kind == 0 || kind > TFT_TRACK_KIND_MAX ||
	    kind == TFT_TRACK_COUNTER)
		return TFT_EINVAL;
	if (!n)
		return 0;
	rc = tft_rt_with_writer(append, &j);
	return rc ? rc : (int)j.appended;
}
