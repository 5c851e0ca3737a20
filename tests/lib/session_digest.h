/* SPDX-License-Identifier: MIT */
/*
 * A digest of a whole session for comparing two imports of one input (the
 * serial and the parallel import, in test_ingest_xspace and the
 * differential fuzzers): processes, tracks and their stats, every event
 * (raw and the 1 us summaries; the 1 ms ones too with DIGEST_LOD_1MS),
 * flows and steps, strings by their text (ids follow the order in which
 * the threads interned them), and the number of strings with
 * DIGEST_STRING_COUNT. Header-only: tests and fuzzers include it.
 */
#ifndef TFT_TESTS_SESSION_DIGEST_H
#define TFT_TESTS_SESSION_DIGEST_H

#include <stdint.h>
#include <string.h>

#include "store/session.h"

enum { DIGEST_STRING_COUNT = 1, DIGEST_LOD_1MS = 2 };

struct session_digest {
	const struct tft_session *s;
	uint64_t h, n;
};

static inline uint64_t digest_fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	return h;
}

/* A string by its text (and whether it exists). */
static inline uint64_t digest_fnv_str(uint64_t h, const struct tft_session *s, uint32_t id)
{
	size_t len = 0;
	const char *t = tft_session_str(s, id, &len);

	h = digest_fnv(h, &len, sizeof(len));
	return t ? digest_fnv(h, t, len) : digest_fnv(h, "\xff", 1);
}

static inline int digest_ev(void *ctx, const struct tft_event *ev)
{
	struct session_digest *d = ctx;
	uint64_t h = d->h;

	h = digest_fnv(h, &ev->ts_ns, sizeof(ev->ts_ns));
	h = digest_fnv(h, &ev->dur_ns, sizeof(ev->dur_ns));
	h = digest_fnv(h, &ev->kind, sizeof(ev->kind));
	h = digest_fnv(h, &ev->depth, sizeof(ev->depth));
	h = digest_fnv(h, &ev->flags, sizeof(ev->flags));
	h = digest_fnv(h, &ev->count, sizeof(ev->count));
	h = digest_fnv(h, &ev->value, sizeof(ev->value));
	h = digest_fnv_str(h, d->s, ev->name);
	h = digest_fnv_str(h, d->s, ev->cat);
	for (uint16_t i = 0; i < ev->nargs; i++) {
		const struct tft_arg *a = &ev->args[i];

		h = digest_fnv_str(h, d->s, a->key);
		h = digest_fnv(h, &a->type, sizeof(a->type));
		if (a->type == TFT_ARG_STR || a->type == TFT_ARG_JSON)
			h = digest_fnv_str(h, d->s, a->v.str);
		else
			h = digest_fnv(h, &a->v, sizeof(a->v));
	}
	d->h = h;
	d->n++;
	return 0;
}

static inline int digest_flow(void *ctx, const struct tft_flow *f)
{
	struct session_digest *d = ctx;

	d->h = digest_fnv(d->h, &f->flow_id, sizeof(f->flow_id));
	d->h = digest_fnv(d->h, &f->src_track, sizeof(f->src_track));
	d->h = digest_fnv(d->h, &f->src_ts_ns, sizeof(f->src_ts_ns));
	d->h = digest_fnv(d->h, &f->dst_track, sizeof(f->dst_track));
	d->h = digest_fnv(d->h, &f->dst_ts_ns, sizeof(f->dst_ts_ns));
	d->h = digest_fnv(d->h, &f->flags, sizeof(f->flags));
	d->h = digest_fnv_str(d->h, d->s, f->name);
	d->h = digest_fnv_str(d->h, d->s, f->cat);
	d->n++;
	return 0;
}

/* The digest of an open session (see above); *nev: events and flows hashed. */
static inline uint64_t session_digest(struct tft_session *s, unsigned flags, uint64_t *nev)
{
	struct tft_session_summary sum;
	struct tft_error err;
	struct session_digest d = {s, 0xcbf29ce484222325ULL, 0};

	tft_session_get_summary(s, &sum);
	d.h = digest_fnv(d.h, &sum.slices, sizeof(sum.slices) * 5);
	if (flags & DIGEST_STRING_COUNT) { /* one id per text, however the threads interned it */
		uint32_t nstr = tft_session_string_count(s);

		d.h = digest_fnv(d.h, &nstr, sizeof(nstr));
	}
	for (uint32_t i = 0; i < tft_session_process_count(s); i++) {
		const struct tft_process *p = tft_session_process(s, i);

		d.h = digest_fnv_str(d.h, s, p->name);
		d.h = digest_fnv_str(d.h, s, p->host);
		d.h = digest_fnv_str(d.h, s, p->labels);
		d.h = digest_fnv(d.h, &p->pid, sizeof(p->pid));
		d.h = digest_fnv(d.h, &p->sort_index, sizeof(p->sort_index));
	}
	for (uint32_t i = 0; i < tft_session_track_count(s); i++) {
		const struct tft_track *t = tft_session_track(s, i);

		d.h = digest_fnv_str(d.h, s, t->name);
		d.h = digest_fnv(d.h, &t->process, sizeof(t->process));
		d.h = digest_fnv(d.h, &t->kind, sizeof(t->kind));
		d.h = digest_fnv(d.h, &t->tid, sizeof(t->tid));
		d.h = digest_fnv(d.h, &t->sort_index, sizeof(t->sort_index));
		d.h = digest_fnv(d.h, &t->slices, sizeof(t->slices));
		d.h = digest_fnv(d.h, &t->instants, sizeof(t->instants));
		d.h = digest_fnv(d.h, &t->min_ts_ns, sizeof(t->min_ts_ns));
		d.h = digest_fnv(d.h, &t->max_ts_ns, sizeof(t->max_ts_ns));
		d.h = digest_fnv(d.h, &t->max_depth, sizeof(t->max_depth));
		tft_session_scan(s, i, INT64_MIN, INT64_MAX, 0, digest_ev, &d, &err);
		tft_session_scan(s, i, INT64_MIN, INT64_MAX, 1000, digest_ev, &d, &err);
		if (flags & DIGEST_LOD_1MS)
			tft_session_scan(s, i, INT64_MIN, INT64_MAX, 1000000, digest_ev, &d, &err);
	}
	tft_session_flows(s, digest_flow, &d, &err);
	for (uint32_t i = 0; i < tft_session_step_count(s); i++) {
		const struct tft_step *st = tft_session_step(s, i);

		d.h = digest_fnv(d.h, &st->index, sizeof(st->index));
		d.h = digest_fnv_str(d.h, s, st->name);
		d.h = digest_fnv(d.h, &st->process, sizeof(st->process));
		d.h = digest_fnv(d.h, &st->start_ns, sizeof(st->start_ns));
		d.h = digest_fnv(d.h, &st->dur_ns, sizeof(st->dur_ns));
	}
	*nev = d.n;
	return d.h ? d.h : 1;
}

#endif /* TFT_TESTS_SESSION_DIGEST_H */
