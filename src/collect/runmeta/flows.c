/* SPDX-License-Identifier: MIT */
/*
 * Send/recv flows: an input's _Send, RecvTensor (transfer) and _Recv
 * endpoints of one tensor between two devices (struct rm_comm, noted by
 * emit.c) become chains, linked into flows now when whole or within one
 * worker, else pooled on the writer until the session closes, where the
 * other workers' inputs complete them.
 */
#include <stdlib.h>
#include <string.h>

#include "collect/runmeta/rm_int.h"
#include "core/grow.h"

static int cmp_comm(const void *a, const void *b)
{
	const struct rm_comm *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->role != y->role)
		return x->role < y->role ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->seq < y->seq ? -1 : (x->seq > y->seq);
}

/*
 * A send, transfer and receive of one tensor between two devices (the i-th
 * of each of its key in one input), some missing: the input's other worker
 * may hold them. `has`: bit ROLE_x for each end present.
 */
struct rm_chain {
	uint64_t key;
	uint32_t input; /* the session's RunMetadata inputs, counted */
	uint8_t has;
	struct rm_comm end[3]; /* by role */
};

/*
 * The chains of every RunMetadata input of the session that lack a link,
 * attached to the writer and linked at close (comm_pool_close()): distributed
 * TF saves one RunMetadata per worker, a _Send in its worker's file, the
 * peer's RecvTensor and _Recv in the peer's.
 */
struct rm_pool {
	struct rm_chain *ch;
	uint32_t n, cap;
	uint32_t inputs;
	uint32_t cat;
};

#define HAS(r) (1u << (r))

static int add_flow(struct tft_writer *w, uint32_t cat, const struct rm_comm *a,
		    const struct rm_comm *b, uint64_t id)
{
	struct tft_flow fl;

	memset(&fl, 0, sizeof(fl));
	fl.flow_id = id;
	fl.name = a->tensor;
	fl.cat = cat;
	fl.src_track = a->track;
	fl.src_ts_ns = a->ts;
	fl.dst_track = b->track;
	fl.dst_ts_ns = b->ts;
	if (b->ts < a->ts && a->ts < b->end) {
		/*
		 * A _Recv waits for its _Send: it starts first. The arrow ends
		 * inside it when the send starts, bound to it (not the next slice),
		 * so that it goes forward in time, as viewers draw flows.
		 */
		fl.dst_ts_ns = a->ts;
		fl.flags = TFT_FLOWF_BIND_ENCLOSING;
	}
	return tft_writer_add_flow(w, &fl);
}

/*
 * An end whose partner never came: an unmatched flow with that end only (its
 * destination if `dst`, else its source), counted.
 */
static int add_lone(struct tft_writer *w, uint32_t cat, const struct rm_comm *c, int dst,
		    uint64_t id, int64_t *unmatched)
{
	struct tft_flow fl;

	memset(&fl, 0, sizeof(fl));
	fl.flow_id = id;
	fl.name = c->tensor;
	fl.cat = cat;
	fl.src_track = fl.dst_track = TFT_NONE;
	if (dst) {
		fl.dst_track = c->track;
		fl.dst_ts_ns = c->ts;
	} else {
		fl.src_track = c->track;
		fl.src_ts_ns = c->ts;
	}
	fl.flags = TFT_FLOWF_UNMATCHED;
	(*unmatched)++;
	return tft_writer_add_flow(w, &fl);
}

/*
 * The flows of a chain: send -> transfer -> receive, or send -> receive
 * (one worker's devices). Where the chain is open (no send before its
 * transfer or receive, no receive after its send or transfer), an
 * unmatched flow keeps that end.
 */
static int link_chain(struct tft_writer *w, uint32_t cat, const struct rm_chain *c, uint64_t id,
		      int64_t *unmatched)
{
	const struct rm_comm *s = c->has & HAS(ROLE_SEND) ? &c->end[ROLE_SEND] : NULL;
	const struct rm_comm *t = c->has & HAS(ROLE_TRANSFER) ? &c->end[ROLE_TRANSFER] : NULL;
	const struct rm_comm *v = c->has & HAS(ROLE_RECV) ? &c->end[ROLE_RECV] : NULL;
	int r = 0;

	if (t && !s && !v) /* a transfer alone: one unmatched flow, from it */
		return add_lone(w, cat, t, 0, id, unmatched);
	if (!s)
		r = add_lone(w, cat, t ? t : v, 1, id, unmatched);
	else if (t || v)
		r = add_flow(w, cat, s, t ? t : v, id);
	if (!r && t && v)
		r = add_flow(w, cat, t, v, id ^ 1);
	else if (!r && !v)
		r = add_lone(w, cat, t ? t : s, 0, id ^ 1, unmatched);
	return r;
}

/* Sorted by key, then heads (with a send) by the send's start, tails by their end. */
static int64_t chain_time(const struct rm_chain *c)
{
	if (c->has & HAS(ROLE_SEND))
		return c->end[ROLE_SEND].ts;
	return c->has & HAS(ROLE_RECV) ? c->end[ROLE_RECV].end : c->end[ROLE_TRANSFER].end;
}

static int cmp_chain(const void *a, const void *b)
{
	const struct rm_chain *x = a, *y = b;
	int hx = !!(x->has & HAS(ROLE_SEND)), hy = !!(y->has & HAS(ROLE_SEND));
	int64_t tx, ty;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (hx != hy)
		return hy - hx; /* heads first */
	tx = chain_time(x);
	ty = chain_time(y);
	if (tx != ty)
		return tx < ty ? -1 : 1;
	return x->input < y->input ? -1 : (x->input > y->input);
}

/* The last head of h[0, n) at or before index i not yet taken (left: skip links), or -1. */
static int64_t free_head(int64_t *left, int64_t i)
{
	int64_t r = i;

	while (r >= 0 && left[r] != r)
		r = left[r];
	while (i >= 0 && left[i] != i) { /* path compression */
		int64_t nx = left[i];

		left[i] = r;
		i = nx;
	}
	return r;
}

/* Heads by input, then time (their index): each input's heads together, in order. */
struct head_ord {
	uint32_t input, idx;
};

static int cmp_head_ord(const void *a, const void *b)
{
	const struct head_ord *x = a, *y = b;

	if (x->input != y->input)
		return x->input < y->input ? -1 : 1;
	return x->idx < y->idx ? -1 : (x->idx > y->idx);
}

/*
 * One key's chains: heads h[0, nh) (a send without its receiving side),
 * by send start; tails u[0, nu) (a transfer and/or receive without its
 * send), by end. Each tail takes a send that started before it ended:
 * of the latest such send's input (the nearest step), that input's
 * earliest one not yet taken (a loop's sends in order). Clocks are each
 * host's own: a receive that ended before its send started, by them, is
 * not linked.
 */
static int link_key(struct tft_writer *w, uint32_t cat, struct rm_chain *h, uint32_t nh,
		    const struct rm_chain *u, uint32_t nu, int64_t *unmatched)
{
	int64_t *left = nh ? malloc((size_t)nh * sizeof(*left)) : NULL;
	uint8_t *taken = nh ? calloc(nh, 1) : NULL;
	/*
	 * ord: the heads by input, then time; per head its place in ord and the
	 * start of its input's part of ord; per such start, the place of that
	 * input's earliest head not yet taken (a cursor that only moves on).
	 */
	struct head_ord *ord = nh ? malloc((size_t)nh * sizeof(*ord)) : NULL;
	uint32_t *pos = nh ? malloc((size_t)nh * sizeof(*pos)) : NULL;
	uint32_t *seg = nh ? malloc((size_t)nh * sizeof(*seg)) : NULL;
	uint32_t *cur = nh ? malloc((size_t)nh * sizeof(*cur)) : NULL;
	uint32_t lo = 0;
	int r = 0;

	if (nh && (!left || !taken || !ord || !pos || !seg || !cur)) {
		r = TFT_ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < nh; i++) {
		left[i] = i;
		ord[i] = (struct head_ord){ h[i].input, i };
	}
	if (nh)
		qsort(ord, nh, sizeof(*ord), cmp_head_ord);
	for (uint32_t q = 0; q < nh; q++) {
		pos[ord[q].idx] = q;
		seg[q] = q && ord[q - 1].input == ord[q].input ? seg[q - 1] : q;
		cur[q] = q;
	}
	for (uint32_t k = 0; k < nu && !r; k++) {
		int64_t end = chain_time(&u[k]), j;
		struct rm_chain c = u[k];
		uint64_t id = tft_hash_u64(u[k].key + k) & 0x7FFFFFFFFFFFFFFFull;
		uint32_t s, q;

		while (lo < nh && h[lo].end[ROLE_SEND].ts <= end)
			lo++;
		j = free_head(left, (int64_t)lo - 1);
		if (j < 0) {
			r = link_chain(w, cat, &c, id, unmatched);
			continue;
		}
		/*
		 * The earliest untaken send of that input (a loop's sends pair in
		 * order): at or before j, which is untaken.
		 */
		s = seg[pos[j]];
		for (q = cur[s]; taken[ord[q].idx]; q++)
			;
		cur[s] = q + 1;
		j = ord[q].idx;
		taken[j] = 1;
		left[j] = j - 1;
		c.has |= HAS(ROLE_SEND);
		c.end[ROLE_SEND] = h[j].end[ROLE_SEND];
		if (!(c.has & HAS(ROLE_TRANSFER)) && (h[j].has & HAS(ROLE_TRANSFER))) {
			c.has |= HAS(ROLE_TRANSFER);
			c.end[ROLE_TRANSFER] = h[j].end[ROLE_TRANSFER];
		}
		r = link_chain(w, cat, &c, id, unmatched);
	}
	for (uint32_t i = 0; i < nh && !r; i++)
		if (!taken[i])
			r = link_chain(w, cat, &h[i], tft_hash_u64(h[i].key + nu + i) & 0x7FFFFFFFFFFFFFFFull,
				       unmatched);
out:
	free(left);
	free(taken);
	free(ord);
	free(pos);
	free(seg);
	free(cur);
	return r;
}

/* At close: link the pooled chains of each key across the inputs; count what stays alone. */
static int comm_pool_close(struct tft_writer *w, void *ctx)
{
	struct rm_pool *p = ctx;
	int64_t unmatched = 0;
	uint32_t i = 0;
	int r = 0;

	if (!p->n)
		return 0;
	qsort(p->ch, p->n, sizeof(*p->ch), cmp_chain);
	while (i < p->n && !r) {
		uint32_t j = i, nh = 0;

		while (j < p->n && p->ch[j].key == p->ch[i].key)
			j++;
		while (i + nh < j && (p->ch[i + nh].has & HAS(ROLE_SEND)))
			nh++;
		r = link_key(w, p->cat, p->ch + i, nh, p->ch + i + nh, j - i - nh, &unmatched);
		i = j;
	}
	if (!r && unmatched)
		r = tft_writer_add_count(w, TFT_COUNT_UNMATCHED_FLOWS, unmatched);
	return r;
}

static void comm_pool_free(void *ctx)
{
	struct rm_pool *p = ctx;

	free(p->ch);
	free(p);
}

/* The session's pool, attached to the writer by the first input that needs it. */
static struct rm_pool *comm_pool_get(struct rm *rm)
{
	struct rm_pool *p = tft_writer_attached(rm->w, TFT_SLOT_RUNMETA_POOL);

	if (p)
		return p;
	if (!(p = calloc(1, sizeof(*p))))
		return NULL;
	p->cat = rm->flow_cat;
	if (tft_writer_attach(rm->w, TFT_SLOT_RUNMETA_POOL, p, comm_pool_close, comm_pool_free)) {
		free(p);
		return NULL;
	}
	return p;
}

/*
 * This input's send/recv ends: the i-th send of each (tensor, source,
 * destination) with its i-th transfer and i-th receive. A whole chain (or
 * a send and receive of one worker), and any chain between two devices of
 * one worker, is linked now; the others, between workers, wait in the
 * session's pool for the other workers' files.
 */
int tft_rm_emit_flows(struct rm *rm)
{
	struct rm_pool *p;
	uint32_t i = 0, input;
	int64_t local_open = 0;
	int r = 0;

	if (!rm->ncomm)
		return 0;
	if (!(p = comm_pool_get(rm)))
		return TFT_ENOMEM;
	input = p->inputs++;
	qsort(rm->comm, rm->ncomm, sizeof(*rm->comm), cmp_comm);
	while (i < rm->ncomm) {
		const struct rm_comm *c = rm->comm;
		uint32_t j = i, s0, t0, r0, ns = 0, nt = 0, nr = 0;

		while (j < rm->ncomm && c[j].key == c[i].key)
			j++;
		s0 = i;
		while (s0 + ns < j && c[s0 + ns].role == ROLE_SEND)
			ns++;
		t0 = s0 + ns;
		while (t0 + nt < j && c[t0 + nt].role == ROLE_TRANSFER)
			nt++;
		r0 = t0 + nt;
		nr = j - r0;
		for (uint32_t k = 0; k < ns || k < nt || k < nr; k++) {
			struct rm_chain ch;

			memset(&ch, 0, sizeof(ch));
			ch.key = c[i].key;
			ch.input = input;
			if (k < ns)
				ch.has |= HAS(ROLE_SEND), ch.end[ROLE_SEND] = c[s0 + k];
			if (k < nt)
				ch.has |= HAS(ROLE_TRANSFER), ch.end[ROLE_TRANSFER] = c[t0 + k];
			if (k < nr)
				ch.has |= HAS(ROLE_RECV), ch.end[ROLE_RECV] = c[r0 + k];
			if ((ch.has & HAS(ROLE_SEND)) && (ch.has & HAS(ROLE_RECV))) {
				int64_t none = 0;

				r = link_chain(rm->w, rm->flow_cat, &ch,
					       tft_hash_u64(ch.key + k) & 0x7FFFFFFFFFFFFFFFull, &none);
			} else if (!c[i].cross) {
				/* one worker's devices: no other input completes it */
				r = link_chain(rm->w, rm->flow_cat, &ch,
					       tft_hash_u64(ch.key + k) & 0x7FFFFFFFFFFFFFFFull, &local_open);
			} else {
				r = tft_grow((void **)&p->ch, &p->cap, p->n + 1, sizeof(*p->ch));
				if (!r)
					p->ch[p->n++] = ch;
			}
			if (r)
				return r;
		}
		i = j;
	}
	return local_open ? tft_writer_add_count(rm->w, TFT_COUNT_UNMATCHED_FLOWS, local_open) : 0;
}
