/* SPDX-License-Identifier: MIT */
/*
 * Async slices (b/e, S/F and their instants) and objects (N/O/D): spans open
 * under their key until their end arrives (spans with the same key stack up),
 * each kind on a per-process track of its own.
 */
#include "collect/chrome/chrome_int.h"

static int span_alloc(struct chrome *c, uint32_t *idx)
{
	*idx = TFT_NONE;
	if (c->free_span != TFT_NONE) {
		*idx = c->free_span;
		c->free_span = c->spans[*idx].next_free;
	} else {
		if (tft_grow((void **)&c->spans, &c->cap_spans, (uint64_t)c->nspans + 1, sizeof(*c->spans)))
			return nomem(c);
		*idx = c->nspans++;
		c->spans[*idx].args = NULL;
		c->spans[*idx].cap_args = 0;
	}
	struct span *s = &c->spans[*idx];
	s->nargs = 0;
	s->prev = TFT_NONE;
	s->seq = c->span_seq++;
	return 0;
}

static void span_free(struct chrome *c, uint32_t idx)
{
	struct span *s = &c->spans[idx];

	s->kind = SPAN_FREE;
	s->nargs = 0;
	s->next_free = c->free_span;
	c->free_span = idx;
}

/* Open a span under key k (spans with the same key stack up). */
static int span_open(struct chrome *c, const struct hkey *k, uint8_t kind, int64_t ts, uint32_t track,
		     uint32_t name, uint32_t cat, uint32_t proc, uint64_t id, uint32_t *out)
{
	uint32_t idx;
	int rc = span_alloc(c, &idx);

	if (rc)
		return rc;
	struct span *s = &c->spans[idx];
	s->key = *k;
	s->kind = kind;
	s->ts = ts;
	s->track = track;
	s->name = name;
	s->cat = cat;
	s->proc = proc;
	s->id = id;
	s->prev = map_get(&c->map, k);
	if (map_put(&c->map, k, idx))
		return nomem(c);
	*out = idx;
	return 0;
}

/* Unlink span idx (the newest under its key) from the map. */
static int span_unlink(struct chrome *c, uint32_t idx)
{
	struct span *s = &c->spans[idx];
	struct hkey k = s->key;

	if (s->prev == TFT_NONE) {
		tft_hmap_del(&c->map, &k, hkey_hash(&k));
		return 0;
	}
	if (map_put(&c->map, &k, s->prev))
		return nomem(c);
	return 0;
}

/* The process's async track of category cat ("Async" without one). */
static int async_track(struct chrome *c, uint32_t pidx, uint32_t cat, uint32_t *track)
{
	struct hkey k = mkkey(K_ASYNC_TRACK, pidx, cat, 0);
	uint32_t tname = cat;
	int rc;

	if (cat == 0 && (rc = intern(c, "Async", 5, &tname)))
		return rc;
	return tft_chrome_keyed_track(c, &k, pidx, TFT_TRACK_ASYNC, tname, track);
}

/* b / e, S / F and the async instants n / T / p on the process's async track of the category. */
int tft_chrome_do_async(struct chrome *c, const struct cev *e, char ph, uint32_t name, uint32_t cat)
{
	uint32_t pidx, track, si;
	uint64_t id = xid_value(&e->id);
	int rc;

	if ((rc = tft_chrome_get_proc(c, &e->pid, &pidx)) || (rc = async_track(c, pidx, cat, &track)) ||
	    (rc = tft_chrome_intern_args(c)))
		return rc;
	if (ph == 'n' || ph == 'T' || ph == 'p')
		return push(c, track, TFT_EV_INSTANT, 0, e->ts, 0, 0, name, cat, c->args, c->nargs);
	struct hkey k = mkkey(K_ASYNC, pidx, ((uint64_t)cat << 32) | name, id);
	if (ph == 'b' || ph == 'S') {
		if ((rc = span_open(c, &k, SPAN_ASYNC, e->ts, track, name, cat, pidx, id, &si)))
			return rc;
		struct span *s = &c->spans[si];
		return tft_chrome_merge_args(c, &s->args, &s->nargs, &s->cap_args, c->args, c->nargs);
	}
	/* 'e' / 'F' */
	si = map_get(&c->map, &k);
	if (si == TFT_NONE && e->name.len == 0) {
		/* an end without a name closes the newest open span with that id */
		uint64_t best = 0;
		for (uint32_t i = 0; i < c->nspans; i++) {
			const struct span *s = &c->spans[i];
			if (s->kind == SPAN_ASYNC && s->proc == pidx && s->cat == cat && s->id == id &&
			    (si == TFT_NONE || s->seq > best)) {
				/* only the newest under its own key can be closed */
				if (map_get(&c->map, &s->key) != i)
					continue;
				si = i;
				best = s->seq;
			}
		}
	}
	if (si == TFT_NONE) {
		c->unmatched_ends++;
		return 0;
	}
	struct span *s = &c->spans[si];
	if ((rc = tft_chrome_merge_args(c, &s->args, &s->nargs, &s->cap_args, c->args, c->nargs)))
		return rc;
	s = &c->spans[si];
	if ((rc = push(c, s->track, TFT_EV_SLICE, 0, s->ts, span_ns(s->ts, e->ts), 0, s->name, s->cat, s->args,
		       s->nargs)))
		return rc;
	if ((rc = span_unlink(c, si)))
		return rc;
	span_free(c, si);
	return 0;
}

/* N / O / D: an object's life as a slice on the track of its name, its snapshots as instants. */
int tft_chrome_do_object(struct chrome *c, const struct cev *e, char ph, uint32_t name,
			 uint32_t cat)
{
	uint32_t pidx, track, si;
	uint64_t id = xid_value(&e->id);
	int rc;

	if ((rc = tft_chrome_get_proc(c, &e->pid, &pidx)))
		return rc;
	struct hkey k = mkkey(K_OBJ, pidx, name, id);
	si = map_get(&c->map, &k);
	/* 'D' without 'N': the object predates the trace; nothing to draw (and no track for it) */
	if (ph == 'D' && si == TFT_NONE)
		return 0;
	struct hkey tk = mkkey(K_OBJ_TRACK, pidx, name, 0);
	if ((rc = tft_chrome_keyed_track(c, &tk, pidx, TFT_TRACK_OBJECT, name, &track)) ||
	    (rc = tft_chrome_intern_args(c)))
		return rc;
	if (ph == 'N') {
		struct tft_arg ida;
		if ((rc = span_open(c, &k, SPAN_OBJECT, e->ts, track, name, cat, pidx, id, &si)))
			return rc;
		ida.key = c->s_id;
		if (e->id.kind == 2) {
			ida.type = TFT_ARG_STR;
			if ((rc = intern(c, e->id.s.ptr, e->id.s.len, &ida.v.str)))
				return rc;
		} else {
			ida.type = TFT_ARG_INT;
			ida.v.i = e->id.i;
		}
		struct span *s = &c->spans[si];
		if ((rc = tft_chrome_merge_args(c, &s->args, &s->nargs, &s->cap_args, &ida, 1)))
			return rc;
		s = &c->spans[si];
		return tft_chrome_merge_args(c, &s->args, &s->nargs, &s->cap_args, c->args, c->nargs);
	}
	if (ph == 'O') {
		if ((rc = push(c, track, TFT_EV_INSTANT, 0, e->ts, 0, 0, name, cat, c->args, c->nargs)))
			return rc;
		if (si != TFT_NONE) {
			struct span *s = &c->spans[si];
			return tft_chrome_merge_args(c, &s->args, &s->nargs, &s->cap_args, c->args, c->nargs);
		}
		return 0;
	}
	struct span *s = &c->spans[si];
	if ((rc = tft_chrome_merge_args(c, &s->args, &s->nargs, &s->cap_args, c->args, c->nargs)))
		return rc;
	s = &c->spans[si];
	if ((rc = push(c, s->track, TFT_EV_SLICE, 0, s->ts, span_ns(s->ts, e->ts), 0, s->name, s->cat, s->args,
		       s->nargs)))
		return rc;
	if ((rc = span_unlink(c, si)))
		return rc;
	span_free(c, si);
	return 0;
}
