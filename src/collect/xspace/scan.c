/* SPDX-License-Identifier: MIT */
/*
 * Pass 1 over a line: its header fields (which come after the events on the
 * wire) and whether its events are already in the writer's order, read
 * from their times alone; the fields before each event's stats noted for
 * pass 2. Nothing interned or registered, so threads can scan lines.
 */
#include <string.h>

#include "collect/xspace/xs_int.h"

/*
 * Where an event sorts in its line: the writer's order (cmp_pend) without
 * the arrival index. The duration only breaks ties, so it is read only for
 * them (order_dur()).
 */
struct xs_order {
	int64_t ts;             /* ns, as line_event() computes it */
	int64_t off;            /* offset_ps, 0 if absent */
	const uint8_t *dp;      /* borrowed: the duration_ps varint (checked), NULL if absent */
};

/*
 * The start of an event as line_event() computes it, from the layout
 * fast_event() accepts at the event level (keep the two in step): its stats
 * are skipped whole, since a stat that fast_event() does not take sends
 * the event to the tables, which then find the same metadata_id, offset_ps,
 * num_occurrences and duration_ps fields (each once, or num_occurrences
 * twice in the places both take it, the last one counting). 1 = *o and *h
 * filled, 0 = another layout (the line is then held back and sorted if need
 * be, as any line could be).
 */
static inline __attribute__((always_inline)) int scan_event(const uint8_t *p, const uint8_t *end,
							    int64_t line_ts,
							    struct xs_order *o, struct xs_head *h)
{
	uint64_t v = 0;
	uint32_t has = 0;

	h->metadata_id = h->num_occurrences = h->duration_ps = 0;
	if (p < end && *p == 0x08) {
		p++;
		if (tft_pb_wire_varint(&p, end, &v))
			return 0;
		h->metadata_id = (int64_t)v;
		has |= 1u << XE_META;
		v = 0;
	}
	if (p < end && *p == 0x10) {
		p++;
		if (tft_pb_wire_varint(&p, end, &v))
			return 0;
		has |= 1u << XE_OFFSET;
	}
	o->off = h->offset_ps = (int64_t)v;
	if (p < end && *p == 0x28) {
		p++;
		if (tft_pb_wire_varint(&p, end, &v))
			return 0;
		h->num_occurrences = (int64_t)v;
		has |= 1u << XE_NUMOCC;
	}
	o->dp = NULL;
	if (p < end && *p == 0x18) {
		o->dp = ++p;
		if (tft_pb_wire_varint(&p, end, &v))
			return 0;
		h->duration_ps = (int64_t)v;
		has |= 1u << XE_DURATION;
	}
	h->stats = p;
	h->has = has;
	while (p < end && *p == 0x22) {
		p++;
		if (tft_pb_wire_varint(&p, end, &v) || v > (uint64_t)(end - p))
			return 0;
		p += v;
	}
	if (p < end && *p == 0x28) {
		p++;
		if (tft_pb_wire_varint(&p, end, &v))
			return 0;
	}
	o->ts = sat_add(line_ts, ps_to_ns(o->off));
	return p == end;
}

/* The duration of a scanned event, in ns, as line_event() computes it. */
static int64_t order_dur(const struct xs_order *o, int64_t line_ts, const uint8_t *lim)
{
	const uint8_t *p = o->dp;
	int64_t dur = 0, stop;
	uint64_t v;

	/* It ends inside its event (scan_event() skipped it): lim bounds it as well. */
	if (p && !tft_pb_wire_varint(&p, lim, &v))
		dur = (int64_t)v;
	stop = sat_add(line_ts, ps_to_ns(sat_add(o->off, dur > 0 ? dur : 0)));
	return dur > 0 && stop > o->ts ? stop - o->ts : 0;
}

/*
 * Pass 1 fast path: the line's own fields, skipping the events. 0 on
 * anything unusual (the table decoder then checks and reports it).
 * While it skips the events it also checks whether they are already in the
 * writer's order (*sorted = 1; the events' bytes are being read anyway).
 * That needs the line's timestamp before the first event, where the
 * field-number order of the wire puts it. The fields before the stats of
 * its first events, up to cap of them, go to heads (*nheads: how many).
 */
static __attribute__((hot)) int fast_line_header(const uint8_t *p, const uint8_t *end,
						  const uint8_t *lim, struct xs_line *ln,
						  int *sorted, int *nonempty,
						  struct xs_head *heads, uint32_t cap,
						  uint32_t *nheads)
{
	struct xs_order prev = {0, 0, NULL}, cur;
	struct xs_head spare;
	int seen_event = 0, in_order = 1;
	uint32_t nh = 0;
	uint64_t v;

	*sorted = 0;
	while (p < end) {
		uint8_t k = *p++;

		/* A run of events while they are in order: the hot loop of this pass. */
		while (k == 0x22 && in_order) {
			/* Its fields noted for pass 2 while there is room. */
			struct xs_head *h = nh < cap ? &heads[nh] : &spare;

			if (tft_pb_wire_varint(&p, end, &v) || v > (uint64_t)(end - p))
				return 0;
			if (!scan_event(p, p + v, ln->timestamp_ns, &cur, h)) {
				in_order = 0; /* no later event is noted either */
			} else {
				nh += h != &spare;
				if (seen_event && (cur.ts < prev.ts ||
						   (cur.ts == prev.ts &&
						    order_dur(&cur, ln->timestamp_ns, lim) >
							    order_dur(&prev, ln->timestamp_ns, lim))))
					in_order = 0; /* would sort before the previous event */
			}
			prev = cur;
			seen_event = 1;
			p += v;
			if (p >= end)
				goto done;
			k = *p++;
		}
		if (k == 0x22 || k == 0x12 || k == 0x5a) {
			if (tft_pb_wire_varint(&p, end, &v) || v > (uint64_t)(end - p))
				return 0;
			if (k == 0x22) {
				seen_event = 1; /* out of order: skipped whole */
				cap = 0;
			} else if (k == 0x12) {
				ln->name.p = p;
				ln->name.len = (size_t)v;
				ln->has |= 1u << LN_NAME;
			} else if (k == 0x5a) {
				ln->display_name.p = p;
				ln->display_name.len = (size_t)v;
				ln->has |= 1u << LN_DISPLAY_NAME;
			}
			p += v;
		} else if (k == 0x08 || k == 0x18 || k == 0x48 || k == 0x50) {
			if (tft_pb_wire_varint(&p, end, &v))
				return 0;
			switch (k) {
			case 0x08: ln->id = (int64_t)v; ln->has |= 1u << LN_ID; break;
			case 0x18:
				ln->timestamp_ns = (int64_t)v;
				ln->has |= 1u << LN_TS;
				if (seen_event)
					in_order = 0;
				break;
			case 0x48: ln->duration_ps = (int64_t)v; ln->has |= 1u << LN_DUR; break;
			default: ln->display_id = (int64_t)v; ln->has |= 1u << LN_DISPLAY_ID; break;
			}
		} else {
			return 0;
		}
	}
done:
	*sorted = in_order;
	*nonempty = seen_event;
	*nheads = nh;
	return 1;
}

/*
 * Pass 1 over a line: its header and whether its events are in the
 * writer's order, into j; nothing interned or registered (tft_xs_line_pending()
 * does that), so that threads can scan lines (parallel lines). With
 * `note`, its events' fields for the tft_xs_line_body() that follows (x->heads).
 */
int tft_xs_line_scan(struct xs *x, const struct tft_pb_sub *ls, struct xs_job *j, int note)
{
	/* Room to note every event of the line (each takes two bytes or more), up to HEADS_MAX. */
	uint32_t want = ls->len / 2 < HEADS_MAX ? (uint32_t)(ls->len / 2) : HEADS_MAX;
	struct xs_line ln;
	int sorted, nonempty, r;

	if (!note)
		want = 0;
	else if (tft_grow((void **)&x->heads, &x->cheads, want, sizeof(*x->heads)))
		want = x->cheads; /* fewer notes: pass 2 reads the rest itself */
	x->heads_line = ls->p;
	x->heads_len = ls->len;
	memset(&ln, 0, sizeof(ln));
	if (!fast_line_header(ls->p, ls->p + ls->len, x->lim, &ln, &sorted, &nonempty, x->heads,
			      want, &x->nheads)) {
		x->nheads = 0;
		sorted = 0;
		memset(&ln, 0, sizeof(ln));
		r = tft_pb_wire_decode_sub(ls, &tft_xs_line_hdr_msg, &ln, x);
		if (r)
			return r;
		nonempty = (ln.has & (1u << LN_EVENTS)) != 0;
	}
	j->tname = ln.display_name.len ? ln.display_name : ln.name;
	j->tid = (ln.has & (1u << LN_DISPLAY_ID)) ? ln.display_id : ln.id;
	j->sub = *ls;
	j->track = TFT_NONE;
	j->ts_ns = line_clock(x, ln.timestamp_ns);
	j->steps = bytes_eq(j->tname, "Steps");
	j->sorted = sorted;
	j->nonempty = nonempty;
	return 0;
}

/*
 * Parallel lines: the header fields before a line's first event, into j as
 * tft_xs_line_scan() would fill it, without walking the events: j->nonempty says
 * whether an event follows (then j->peeked: its events are stored
 * optimistically, tft_xs_line_body() checking the rest). 0 on anything else: the
 * line is then scanned.
 */
int tft_xs_line_peek(struct xs *x, const struct tft_pb_sub *ls, struct xs_job *j)
{
	const uint8_t *p = ls->p, *end = ls->p + ls->len;
	struct xs_line ln;
	int events = 0;

	memset(&ln, 0, sizeof(ln));
	while (p < end) {
		uint8_t k = *p++;
		uint64_t v;

		if (k == 0x22) {
			events = 1;
			break;
		}
		if (k == 0x12 || k == 0x5a) {
			if (tft_pb_wire_varint(&p, end, &v) || v > (uint64_t)(end - p))
				return 0;
			if (k == 0x12) {
				ln.name.p = p;
				ln.name.len = (size_t)v;
				ln.has |= 1u << LN_NAME;
			} else {
				ln.display_name.p = p;
				ln.display_name.len = (size_t)v;
				ln.has |= 1u << LN_DISPLAY_NAME;
			}
			p += v;
		} else if (k == 0x08 || k == 0x18 || k == 0x48 || k == 0x50) {
			if (tft_pb_wire_varint(&p, end, &v))
				return 0;
			switch (k) {
			case 0x08: ln.id = (int64_t)v; ln.has |= 1u << LN_ID; break;
			case 0x18: ln.timestamp_ns = (int64_t)v; ln.has |= 1u << LN_TS; break;
			case 0x48: ln.duration_ps = (int64_t)v; ln.has |= 1u << LN_DUR; break;
			default: ln.display_id = (int64_t)v; ln.has |= 1u << LN_DISPLAY_ID; break;
			}
		} else {
			return 0;
		}
	}
	j->hdr = ln;
	j->tname = ln.display_name.len ? ln.display_name : ln.name;
	j->tid = (ln.has & (1u << LN_DISPLAY_ID)) ? ln.display_id : ln.id;
	j->track = TFT_NONE;
	j->ts_ns = line_clock(x, ln.timestamp_ns);
	j->steps = bytes_eq(j->tname, "Steps");
	j->sorted = 1;
	j->nonempty = events;
	j->peeked = events;
	return 1;
}
