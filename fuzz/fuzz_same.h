/* SPDX-License-Identifier: MIT */
/*
 * Fuzz helper: an importer run on one thread and on several must agree on
 * each input: both accept it, or both refuse it with the same status,
 * message and byte offset (out of memory may strike either alone); and
 * when both accept it, the two sessions must hold the same thing (strings
 * compared by their text: ids follow the order the threads interned them;
 * each text once in each session, though the serial import may keep a text
 * no event uses, such as the name of a line without events).
 * Aborts, printing both, so that libFuzzer keeps the input.
 */
#ifndef TFT_FUZZ_SAME_H
#define TFT_FUZZ_SAME_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/status.h"
#include "store/session.h"

static inline void fuzz_same_outcome(int r, const struct tft_error *e, int r2,
				     const struct tft_error *e2)
{
	if (r2 == r && (!r || r == TFT_ENOMEM ||
			(e->offset == e2->offset && strcmp(e->msg, e2->msg) == 0)))
		return;
	fprintf(stderr, "serial %d at %lld: %s\nparallel %d at %lld: %s\n", r, (long long)e->offset,
		e->msg, r2, (long long)e2->offset, e2->msg);
	abort();
}

/* The session file of run k (0 serial, 1 parallel) of this process (tmpfs when there is one). */
static inline const char *fuzz_same_path(int k)
{
	static char path[2][96];

	if (!path[k][0])
		snprintf(path[k], sizeof(path[k]), "%s/tft-fuzz-%d-%d.tft",
			 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp", (int)getpid(), k);
	unlink(path[k]);
	return path[k];
}

struct fuzz_digest {
	const struct tft_session *s;
	uint64_t h, n;
};

static inline uint64_t fuzz_fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	return h;
}

/* A string by its text (and whether it exists). */
static inline uint64_t fuzz_fnv_str(uint64_t h, const struct tft_session *s, uint32_t id)
{
	size_t len = 0;
	const char *t = tft_session_str(s, id, &len);

	h = fuzz_fnv(h, &len, sizeof(len));
	return t ? fuzz_fnv(h, t, len) : fuzz_fnv(h, "\xff", 1);
}

static inline int fuzz_digest_ev(void *ctx, const struct tft_event *ev)
{
	struct fuzz_digest *d = ctx;
	uint64_t h = d->h;

	h = fuzz_fnv(h, &ev->ts_ns, sizeof(ev->ts_ns));
	h = fuzz_fnv(h, &ev->dur_ns, sizeof(ev->dur_ns));
	h = fuzz_fnv(h, &ev->kind, sizeof(ev->kind));
	h = fuzz_fnv(h, &ev->depth, sizeof(ev->depth));
	h = fuzz_fnv(h, &ev->flags, sizeof(ev->flags));
	h = fuzz_fnv(h, &ev->count, sizeof(ev->count));
	h = fuzz_fnv(h, &ev->value, sizeof(ev->value));
	h = fuzz_fnv_str(h, d->s, ev->name);
	h = fuzz_fnv_str(h, d->s, ev->cat);
	for (uint16_t i = 0; i < ev->nargs; i++) {
		const struct tft_arg *a = &ev->args[i];

		h = fuzz_fnv_str(h, d->s, a->key);
		h = fuzz_fnv(h, &a->type, sizeof(a->type));
		if (a->type == TFT_ARG_STR || a->type == TFT_ARG_JSON)
			h = fuzz_fnv_str(h, d->s, a->v.str);
		else
			h = fuzz_fnv(h, &a->v, sizeof(a->v));
	}
	d->h = h;
	d->n++;
	return 0;
}

static inline int fuzz_digest_flow(void *ctx, const struct tft_flow *f)
{
	struct fuzz_digest *d = ctx;

	d->h = fuzz_fnv(d->h, &f->flow_id, sizeof(f->flow_id));
	d->h = fuzz_fnv(d->h, &f->src_track, sizeof(f->src_track));
	d->h = fuzz_fnv(d->h, &f->src_ts_ns, sizeof(f->src_ts_ns));
	d->h = fuzz_fnv(d->h, &f->dst_track, sizeof(f->dst_track));
	d->h = fuzz_fnv(d->h, &f->dst_ts_ns, sizeof(f->dst_ts_ns));
	d->h = fuzz_fnv(d->h, &f->flags, sizeof(f->flags));
	d->h = fuzz_fnv_str(d->h, d->s, f->name);
	d->h = fuzz_fnv_str(d->h, d->s, f->cat);
	d->n++;
	return 0;
}

struct fuzz_text {
	const char *p;
	size_t n;
};

static inline int fuzz_text_cmp(const void *a, const void *b)
{
	const struct fuzz_text *x = a, *y = b;
	int c = memcmp(x->p, y->p, x->n < y->n ? x->n : y->n);

	return c ? c : (x->n > y->n) - (x->n < y->n);
}

/* Each text once: threads interning the same text must get one id. */
static inline void fuzz_strings_unique(const struct tft_session *s, const char *path)
{
	uint32_t n = tft_session_string_count(s), k = 0;
	struct fuzz_text *t = malloc((size_t)n * sizeof(*t) + 1);

	if (!t)
		return;
	for (uint32_t i = 0; i < n; i++) {
		t[k].p = tft_session_str(s, i, &t[k].n);
		k += t[k].p != NULL;
	}
	qsort(t, k, sizeof(*t), fuzz_text_cmp);
	for (uint32_t i = 1; i < k; i++) {
		if (fuzz_text_cmp(&t[i - 1], &t[i]) == 0) {
			fprintf(stderr, "%s: the text \"%.*s\" has two string ids\n", path,
				(int)t[i].n, t[i].p);
			abort();
		}
	}
	free(t);
}

/*
 * A digest of a session: processes, tracks and their stats, every event
 * (raw and the 1 us summaries), flows, steps. 0 if it does not open.
 */
static inline uint64_t fuzz_session_digest(const char *path, uint64_t *nev)
{
	struct tft_session_summary sum;
	struct tft_error err;
	struct tft_session *s = tft_session_open(path, &err);
	struct fuzz_digest d = {s, 0xcbf29ce484222325ULL, 0};

	*nev = 0;
	if (!s)
		return 0;
	tft_session_get_summary(s, &sum);
	d.h = fuzz_fnv(d.h, &sum.slices, sizeof(sum.slices) * 5);
	fuzz_strings_unique(s, path);
	for (uint32_t i = 0; i < tft_session_process_count(s); i++) {
		const struct tft_process *p = tft_session_process(s, i);

		d.h = fuzz_fnv_str(d.h, s, p->name);
		d.h = fuzz_fnv_str(d.h, s, p->host);
		d.h = fuzz_fnv_str(d.h, s, p->labels);
		d.h = fuzz_fnv(d.h, &p->pid, sizeof(p->pid));
		d.h = fuzz_fnv(d.h, &p->sort_index, sizeof(p->sort_index));
	}
	for (uint32_t i = 0; i < tft_session_track_count(s); i++) {
		const struct tft_track *t = tft_session_track(s, i);

		d.h = fuzz_fnv_str(d.h, s, t->name);
		d.h = fuzz_fnv(d.h, &t->process, sizeof(t->process));
		d.h = fuzz_fnv(d.h, &t->kind, sizeof(t->kind));
		d.h = fuzz_fnv(d.h, &t->tid, sizeof(t->tid));
		d.h = fuzz_fnv(d.h, &t->sort_index, sizeof(t->sort_index));
		d.h = fuzz_fnv(d.h, &t->slices, sizeof(t->slices));
		d.h = fuzz_fnv(d.h, &t->instants, sizeof(t->instants));
		d.h = fuzz_fnv(d.h, &t->min_ts_ns, sizeof(t->min_ts_ns));
		d.h = fuzz_fnv(d.h, &t->max_ts_ns, sizeof(t->max_ts_ns));
		d.h = fuzz_fnv(d.h, &t->max_depth, sizeof(t->max_depth));
		tft_session_scan(s, i, INT64_MIN, INT64_MAX, 0, fuzz_digest_ev, &d, &err);
		tft_session_scan(s, i, INT64_MIN, INT64_MAX, 1000, fuzz_digest_ev, &d, &err);
	}
	tft_session_flows(s, fuzz_digest_flow, &d, &err);
	for (uint32_t i = 0; i < tft_session_step_count(s); i++) {
		const struct tft_step *st = tft_session_step(s, i);

		d.h = fuzz_fnv(d.h, &st->index, sizeof(st->index));
		d.h = fuzz_fnv_str(d.h, s, st->name);
		d.h = fuzz_fnv(d.h, &st->process, sizeof(st->process));
		d.h = fuzz_fnv(d.h, &st->start_ns, sizeof(st->start_ns));
		d.h = fuzz_fnv(d.h, &st->dur_ns, sizeof(st->dur_ns));
	}
	tft_session_close(s);
	*nev = d.n;
	return d.h ? d.h : 1;
}

/* Both runs accepted the input: their sessions must be the same (see above). */
static inline void fuzz_same_sessions(const char *serial, const char *parallel)
{
	uint64_t n1, n2, h1 = fuzz_session_digest(serial, &n1), h2 = fuzz_session_digest(parallel, &n2);

	if (h1 && h1 == h2 && n1 == n2)
		return;
	fprintf(stderr, "the serial and parallel sessions differ: %llu and %llu events, digests %016llx %016llx\n",
		(unsigned long long)n1, (unsigned long long)n2, (unsigned long long)h1,
		(unsigned long long)h2);
	abort();
}

#endif /* TFT_FUZZ_SAME_H */
