/* SPDX-License-Identifier: MIT */
/*
 * Pass 2 over a line: its XEvents decoded (the usual layout on the fast
 * path, any other by the tables), named through the event metadata, timed
 * on the host's clock and stored: straight to the writer when pass 1 found
 * them in order, else held back (pend.c). Also the optimistic storing of
 * the parallel lines (a line stored before its header is known complete).
 * The per-event path stays in this file (no LTO: it must inline).
 */
#include <stdio.h>
#include <string.h>

#include "collect/xspace/xs_int.h"

static inline uint32_t smeta_index(const struct xs *x, uint64_t id)
{
	return idmap_get(&x->smeta_map, id);
}

/* tft_xs_intern() for a str_value of stat metadata mi, through its one-entry cache. */
static inline uint32_t intern_str_stat(struct xs *x, uint32_t mi, const uint8_t *p, size_t n)
{
	struct xs_strcache *c = &x->strs[mi];
	uint32_t id;

	if (c->p && n == c->len && memcmp(p, c->p, n) == 0)
		return c->id;
	id = tft_xs_intern(x, p, n);
	if (id != UINT32_MAX && n <= UINT32_MAX) {
		c->p = p;
		c->len = (uint32_t)n;
		c->id = id;
	}
	return id;
}

/* Note a stat with a meaning (tft_xs_add_event_stat's switch). */
static inline void note_special(struct xs *x, uint8_t special, const struct tft_arg *a)
{
	switch (special) {
	case SPECIAL_CORRELATION:
		if (a->type == TFT_ARG_INT) {
			x->ev_corr = (uint64_t)a->v.i;
			x->has_corr = 1;
		}
		break;
	case SPECIAL_GROUP:
		if (a->type == TFT_ARG_INT) {
			x->ev_group = (uint64_t)a->v.i;
			x->has_group = 1;
		}
		break;
	case SPECIAL_STEP_NUM:
		if (a->type == TFT_ARG_INT) {
			x->ev_step_num = (uint64_t)a->v.i;
			x->has_step_num = 1;
		}
		break;
	case SPECIAL_STEP_NAME:
		if (a->type == TFT_ARG_STR)
			x->ev_step_name = a->v.str;
		break;
	default:
		break;
	}
}

/*
 * The value of an event stat whose metadata_id was `mid`, at p (its key)
 * up to end, in the usual layout: one int64/uint64/double/str/ref value,
 * then the end. Fills *a as tft_xs_add_event_stat() would. 2 = *a filled, 1 = no
 * arg (as stat_to_arg() skips it), 0 = another layout (the event then
 * goes to the tables), TFT_ENOMEM.
 */
static inline __attribute__((always_inline)) int tight_value(struct xs *x, const uint8_t *p,
							     const uint8_t *end, uint64_t mid,
							     struct tft_arg *a)
{
	const struct xs_smeta *m;
	uint64_t v;
	uint32_t mi;
	uint8_t k;

	if (tft_unlikely(p >= end))
		return 0;
	k = *p++;
	if (tft_likely((k & 7) == TFT_PB_WT_VARINT)) {
		/* int64_value, uint64_value, ref_value: one varint, then the end. */
		if (tft_pb_wire_varint(&p, end, &v) || p != end)
			return 0;
		mi = smeta_index(x, mid);
		a->v.i = (int64_t)v;
		a->type = TFT_ARG_INT;
		if (tft_unlikely(k != 0x20)) {
			if (k == 0x18) {
				if (v > (uint64_t)INT64_MAX)
					return 0; /* text, on the general path */
			} else if (k == 0x38) {
				uint32_t ri;

				if (mi == TFT_NONE)
					return 1;
				ri = smeta_index(x, v);
				if (ri == TFT_NONE) /* a ref to nothing: stat_to_arg() skips it */
					return 1;
				a->type = TFT_ARG_STR;
				a->v.i = 0;
				a->v.str = x->smeta[ri].name;
			} else {
				return 0; /* metadata_id again, or an unknown field */
			}
		}
	} else if (k == 0x11) { /* double_value */
		if (end - p != 8)
			return 0;
		v = (uint64_t)load_le32(p) | (uint64_t)load_le32(p + 4) << 32;
		a->type = TFT_ARG_DOUBLE;
		memcpy(&a->v.d, &v, sizeof(a->v.d));
		mi = smeta_index(x, mid);
	} else if (k == 0x2a) { /* str_value */
		if (tft_pb_wire_varint(&p, end, &v) || v != (uint64_t)(end - p))
			return 0;
		mi = smeta_index(x, mid);
		if (mi == TFT_NONE)
			return 1;
		a->type = TFT_ARG_STR;
		a->v.i = 0;
		a->v.str = intern_str_stat(x, mi, p, (size_t)v);
		if (a->v.str == UINT32_MAX)
			return TFT_ENOMEM;
	} else {
		return 0;
	}
	if (mi == TFT_NONE)
		return 1; /* stat without metadata: nothing to name it by */
	m = &x->smeta[mi];
	a->key = m->name;
	if (tft_unlikely(m->special))
		note_special(x, m->special, a);
	return 2;
}

/* Read a varint field value if the next key byte is `key`. */
#define TAKE_VARINT(key, dst, bit)                                                      \
	if (p < end && *p == (key)) {                                                   \
		p++;                                                                    \
		if (tft_pb_wire_varint(&p, end, &v))                                    \
			return 0;                                                       \
		(dst) = (int64_t)v;                                                     \
		e->has |= 1u << (bit);                                                  \
	}

/*
 * fast_event() from the event's stats at p on (the fields before them in *e):
 * the stats, then a num_occurrences that may follow them.
 */
static inline __attribute__((always_inline)) int fast_stats(struct xs *x, const uint8_t *p,
							    const uint8_t *end, struct xs_event *e)
{
	/* The next arg; past MAX_ARGS the spare slot is overwritten. */
	struct tft_arg *a = x->args, *last = x->args + MAX_ARGS;
	uint64_t v;
	int r;

	while (p < end && *p == 0x22) {
		const uint8_t *q;
		uint64_t mid = 0;

		p++;
		if (tft_pb_wire_varint(&p, end, &v) || v > (uint64_t)(end - p))
			return 0;
		q = p;
		p += v;
		r = 0;
		if (q < p && *q == 0x08) {
			const uint8_t *t = q + 1;

			if (!tft_pb_wire_varint(&t, p, &mid))
				r = tight_value(x, t, p, mid, a);
		}
		if (tft_likely(r == 2))
			a += a < last;
		else if (tft_unlikely(r <= 0))
			return r; /* another layout: the tables decode the event */
	}
	TAKE_VARINT(0x28, e->num_occurrences, XE_NUMOCC)
	x->nargs = (uint32_t)(a - x->args);
	return p == end; /* anything else in another order: the tables handle it */
}

/*
 * 1 = decoded (stats added as args), 0 = use the tables, <0 = out of memory.
 * Fields are tried in the order writers emit them (metadata_id, offset_ps,
 * duration_ps, stats...), which keeps the branches predictable. Stats in
 * the usual layout take tight_value(); any other sends the event to the
 * tables.
 *
 * scan_event() accepts the same event-level layout: pass 1 orders a line by
 * the times it reads there, so both must see the same fields (the tables,
 * when a stat sends the event to them, then find exactly those too). It
 * notes them (struct xs_head), and pass 2 then starts at the stats.
 */
static inline __attribute__((always_inline)) int fast_event(struct xs *x, const uint8_t *p,
							    const uint8_t *end, struct xs_event *e)
{
	uint64_t v;

	TAKE_VARINT(0x08, e->metadata_id, XE_META)
	TAKE_VARINT(0x10, e->offset_ps, XE_OFFSET)
	TAKE_VARINT(0x28, e->num_occurrences, XE_NUMOCC)
	TAKE_VARINT(0x18, e->duration_ps, XE_DURATION)
	return fast_stats(x, p, end, e);
}

/* fast_event() of the event `index` of the line, from pass 1's notes if it has them. */
static inline __attribute__((always_inline)) int noted_event(struct xs *x, const uint8_t *p,
							     const uint8_t *end, uint32_t index,
							     struct xs_event *e)
{
	const struct xs_head *h;

	if (index >= x->nheads)
		return fast_event(x, p, end, e);
	h = &x->heads[index];
	e->has = h->has;
	e->metadata_id = h->metadata_id;
	e->offset_ps = h->offset_ps;
	e->num_occurrences = h->num_occurrences;
	e->duration_ps = h->duration_ps;
	return fast_stats(x, h->stats, end, e);
}
#undef TAKE_VARINT

static void event_reset(struct xs *x, struct xs_event *e)
{
	e->has = 0;
	e->metadata_id = e->offset_ps = e->duration_ps = e->num_occurrences = 0;
	x->nargs = 0;
	x->has_corr = x->has_group = x->has_step_num = 0;
	x->ev_step_name = TFT_NONE;
}

/* Decode an event with the tables (any layout; errors reported with its path). */
static int __attribute__((noinline)) table_event(struct xs *x, const uint8_t *p, size_t len,
						  uint32_t index, struct xs_event *e)
{
	struct tft_pb_sub es = {x->dec, p, len, "events", index};

	event_reset(x, e);
	return tft_pb_wire_decode_sub(&es, &tft_xs_event_msg, e, x);
}

/* One event of the line, the events field's payload p[0..len). */
static inline __attribute__((always_inline)) int line_event(struct xs *x, const uint8_t *p,
							    size_t len, uint32_t index)
{
	struct xs_event e;
	struct tft_event ev;
	uint32_t mi, n, nev;
	int64_t start_ps, start, end;
	int r;

	event_reset(x, &e);
	r = noted_event(x, p, p + len, index, &e);
	if (tft_unlikely(r <= 0)) {
		if (r < 0)
			return oom(x);
		r = table_event(x, p, len, index, &e);
		if (r)
			return r;
	}
	if (tft_unlikely(x->track == TFT_NONE)) {
		r = tft_xs_line_track(x);
		if (r)
			return r;
	}
	memset(&ev, 0, sizeof(ev));
	mi = idmap_get(&x->emeta_map, (uint64_t)e.metadata_id);
	n = nev = x->nargs;
	if (tft_likely(mi != TFT_NONE)) {
		const struct xs_emeta *m = &x->emeta[mi];

		ev.name = m->name;
		/* Metadata-level stats, unless the event has its own value. */
		if (tft_unlikely(m->nargs)) {
			for (uint32_t k = 0; k < m->nargs && n < MAX_ARGS; k++) {
				const struct tft_arg *a = &x->meta_args[m->args_off + k];
				uint32_t j = 0;

				while (j < nev && x->args[j].key != a->key)
					j++;
				if (j == nev)
					x->args[n++] = *a;
			}
		}
		if (m->long_name != TFT_NONE && n < MAX_ARGS) {
			struct tft_arg *a = &x->args[n++];

			a->key = x->k_long_name;
			a->type = TFT_ARG_STR;
			a->v.str = m->long_name;
		}
	} else {
		int k = snprintf(x->scratch, sizeof(x->scratch), "#%lld", (long long)e.metadata_id);

		ev.name = tft_xs_intern(x, x->scratch, (size_t)k);
		if (ev.name == UINT32_MAX)
			return oom(x);
		if (n < MAX_ARGS) {
			struct tft_arg *a = &x->args[n++];

			a->key = x->k_metadata_id;
			a->type = TFT_ARG_INT;
			a->v.i = e.metadata_id;
		}
	}
	if ((e.has & (1u << XE_NUMOCC)) && n < MAX_ARGS) {
		struct tft_arg *a = &x->args[n++];

		a->key = x->k_num_occ;
		a->type = TFT_ARG_INT;
		a->v.i = e.num_occurrences;
	}
	x->nargs = n;
	/* offset_ps and num_occurrences share a oneof: aggregated events sit at line start. */
	start_ps = (e.has & (1u << XE_OFFSET)) ? e.offset_ps : 0;
	start = sat_add(x->line_ts_ns, ps_to_ns(start_ps));
	end = sat_add(x->line_ts_ns, ps_to_ns(sat_add(start_ps, e.duration_ps > 0 ? e.duration_ps : 0)));
	ev.ts_ns = start;
	ev.kind = e.duration_ps > 0 ? TFT_EV_SLICE : TFT_EV_INSTANT;
	ev.dur_ns = e.duration_ps > 0 && end > start ? end - start : 0;
	if (x->optimistic) { /* out of the writer's order: the line is sorted after all */
		if (ev.ts_ns < x->opt_ts || (ev.ts_ns == x->opt_ts && ev.dur_ns > x->opt_dur))
			return XS_REDO;
		x->opt_ts = ev.ts_ns;
		x->opt_dur = ev.dur_ns;
	}
	ev.track = x->track;
	ev.cat = x->c_event;
	ev.count = 1;
	ev.nargs = (uint16_t)n;
	ev.args = x->args;
	x->ev_key = x->key_line | index;
	if (x->direct) {
		r = xs_append(x, &ev);
		if (r) {
			x->store_err = r;
			return r;
		}
	} else {
		r = tft_xs_queue_event(x, &ev);
		if (r)
			return tft_pb_wire_fail(x->dec, r, p - x->dec->base,
						"could not store the event");
	}
	if (x->has_corr && note_corr(x, x->track, ev.ts_ns))
		return oom(x);
	if (x->has_group && note_group(x, ev.ts_ns, ev.ts_ns + ev.dur_ns))
		return oom(x);
	if (x->steps_line && tft_xs_add_step_marker(x, &ev))
		return oom(x);
	if ((++x->events & 0xFFFF) == 0)
		tft_xs_progress(x, (uint64_t)(p - x->dec->base));
	return 0;
}

/*
 * Optimistic storing (xs.optimistic): a header field after the events, at
 * *pp (its key). Noted in opt_tail; XS_REDO for anything tft_xs_line_peek() does
 * not take (the serial way then checks it and reports any error).
 */
static int opt_field(struct xs *x, const uint8_t **pp, const uint8_t *end, int after)
{
	const uint8_t *p = *pp;
	struct xs_line *t = &x->opt_tail;
	uint8_t k = *p++;
	uint64_t v;

	if (k == 0x12 || k == 0x5a) {
		if (tft_pb_wire_varint(&p, end, &v) || v > (uint64_t)(end - p))
			return XS_REDO;
		if (after && k == 0x12) {
			t->name.p = p;
			t->name.len = (size_t)v;
			t->has |= 1u << LN_NAME;
		} else if (after) {
			t->display_name.p = p;
			t->display_name.len = (size_t)v;
			t->has |= 1u << LN_DISPLAY_NAME;
		}
		p += v;
	} else if (k == 0x08 || k == 0x18 || k == 0x48 || k == 0x50) {
		if (tft_pb_wire_varint(&p, end, &v))
			return XS_REDO;
		if (after) {
			switch (k) {
			case 0x08: t->id = (int64_t)v; t->has |= 1u << LN_ID; break;
			case 0x18: return XS_REDO; /* the events' times were taken from the earlier one */
			case 0x48: t->duration_ps = (int64_t)v; t->has |= 1u << LN_DUR; break;
			default: t->display_id = (int64_t)v; t->has |= 1u << LN_DISPLAY_ID; break;
			}
		}
	} else {
		return XS_REDO;
	}
	*pp = p;
	return 0;
}

/*
 * Optimistic storing: the line's events were in order; its header is the
 * peeked one with the fields after the events. XS_REDO if those change
 * what the events became (a Steps line or not), else the track renamed if
 * its name or tid changed.
 */
static int opt_finish(struct xs *x, const struct xs_job *j)
{
	struct xs_line ln = j->hdr;
	const struct xs_line *t = &x->opt_tail;
	struct xs_job k = *j;

	if (!t->has)
		return 0;
	if (t->has & (1u << LN_NAME))
		ln.name = t->name;
	if (t->has & (1u << LN_DISPLAY_NAME))
		ln.display_name = t->display_name;
	if (t->has & (1u << LN_ID))
		ln.id = t->id;
	if (t->has & (1u << LN_DISPLAY_ID))
		ln.display_id = t->display_id;
	ln.has |= t->has;
	k.tname = ln.display_name.len ? ln.display_name : ln.name;
	k.tid = (ln.has & (1u << LN_DISPLAY_ID)) ? ln.display_id : ln.id;
	if (bytes_eq(k.tname, "Steps") != j->steps)
		return XS_REDO;
	/* a name that changes how the events nest (a stream's lanes): stored again */
	if (tft_track_lanes((uint32_t)tft_xs_line_kind(x, k.tname), tft_xs_line_flags(x, tft_xs_line_kind(x, k.tname), k.tname)) !=
	    tft_track_lanes((uint32_t)tft_xs_line_kind(x, j->tname), tft_xs_line_flags(x, tft_xs_line_kind(x, j->tname), j->tname)))
		return XS_REDO;
	if (bytes_same(k.tname, j->tname) && k.tid == j->tid)
		return 0;
	return tft_xs_line_rename(x, &k);
}

/*
 * Pass 2 over a line: its events (field 4), with this line on the error
 * path. j->sub.dec must be x->dec. The track is j's, or registered with
 * the first event (no empty tracks). With x->optimistic, XS_REDO when the
 * line must be stored the serial way after all (nothing is ended then).
 */
/*
 * A line field other than an event with the one-byte key (already checked
 * by pass 1): skipped, or an event whose key is a longer varint (A2 00).
 */
static __attribute__((noinline, cold)) int other_field(struct xs *x, const uint8_t **pp,
						       const uint8_t *end, uint32_t *index)
{
	struct tft_pb_dec *d = x->dec;
	struct tft_pb_iter it;
	struct tft_pb_raw f;
	int r;

	tft_pb_wire_iter_init(&it, *pp, (size_t)(end - *pp));
	r = tft_pb_wire_iter_next(d, &it, &f);
	d->cur_field = NULL;
	if (r < 0)
		return r;
	*pp = it.p;
	if (f.num == 4 && f.wt == TFT_PB_WT_LEN) {
		d->cur_field = "events";
		d->cur_index = *index;
		return line_event(x, f.p, f.len, (*index)++);
	}
	return 0;
}

__attribute__((hot)) int tft_xs_line_body(struct xs *x, const struct xs_job *j)
{
	const struct tft_pb_sub *ls = &j->sub;
	struct tft_pb_dec *d = x->dec;
	const uint8_t *p = ls->p, *end = ls->p + ls->len;
	uint32_t index = 0;
	int r = 0;

	x->pending = j->pending;
	x->track = j->track;
	x->line_ts_ns = j->ts_ns;
	x->steps_line = j->steps;
	x->key_line = j->key_line;
	x->npend = x->npargs = 0;
	x->spilled = x->unsorted = 0;
	x->direct = j->sorted;
	x->store_err = 0;
	x->opt_ts = INT64_MIN;
	x->opt_dur = INT64_MAX;
	x->opt_tail.has = 0;
	if (x->heads_line != ls->p || x->heads_len != ls->len)
		x->nheads = 0; /* notes on another line (or none) */

	if (d->depth >= d->max_depth)
		return tft_pb_wire_fail(d, TFT_EFORMAT, ls->p - d->base, "messages nested too deep");
	d->path[d->depth].name = ls->name;
	d->path[d->depth].index = ls->index;
	d->depth++;
	while (p < end) {
		if (*p == 0x22) {
			const uint8_t *q = p + 1;
			uint64_t n;

			if (tft_pb_wire_varint(&q, end, &n) == 0 && n <= (uint64_t)(end - q)) {
				r = line_event(x, q, (size_t)n, index++);
				if (r)
					break;
				p = q + n;
				continue;
			}
			d->cur_field = "events";
			d->cur_index = index;
		}
		if (x->optimistic) {
			r = opt_field(x, &p, end, index > 0);
			if (r)
				break;
			continue;
		}
		r = other_field(x, &p, end, &index);
		if (r)
			break;
	}
	d->depth--;
	x->nheads = 0;
	if (x->optimistic) {
		/* Any failure is reported the serial way, which may find another one first. */
		if (r || x->store_err) {
			d->cur_field = NULL;
			return XS_REDO;
		}
		r = opt_finish(x, j);
		if (r)
			return r;
	}
	if (x->store_err) {
		r = tft_pb_wire_fail(d, x->store_err, ls->p - d->base,
				     "could not store the line's events: %s", tft_strerror(x->store_err));
	} else if (!r) {
		int spilled = x->spilled;

		r = tft_xs_flush_line(x);
		/*
		 * The line's track gets no more events (one track per line):
		 * the writer can store and free it now. Not when the line went
		 * through the sorter, which appends its events at the end.
		 */
		if (!r && !spilled && x->track != TFT_NONE)
			r = xs_end_track(x, x->track);
		if (r)
			r = tft_pb_wire_fail(d, r, ls->p - d->base, "could not store the line's events: %s",
					     tft_strerror(r));
	}
	return r;
}

static int do_line(struct xs *x, const struct tft_pb_sub *ls)
{
	struct xs_job j;
	int r = tft_xs_line_scan(x, ls, &j, 1);

	if (!r)
		r = tft_xs_line_pending(x, &j);
	if (r)
		return r;
	j.key_line = (uint64_t)x->nlines_seen++ << 32;
	return tft_xs_line_body(x, &j);
}

int tft_xs_on_line(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	return do_line(ctx, &v->sub);
}
