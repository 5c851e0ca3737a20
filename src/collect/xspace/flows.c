/* SPDX-License-Identifier: MIT */
/*
 * Launch -> kernel flows: the correlation ids' table (its inline notes in
 * xs_int.h) and, after the XSpace, a flow from each launch to each device
 * event of its correlation id, written straight into the writer's buffer.
 */
#include <stdlib.h>

#include "collect/xspace/xs_int.h"

/* The entry of correlation id `id` (map key `key`), made if new; TFT_NONE when out of memory. */
uint32_t tft_xs_corr_entry(struct xs_ctab *t, uint64_t id, uint64_t key)
{
	uint32_t i = idmap_get(&t->map, key);
	struct xs_corr *c;

	if (i != TFT_NONE)
		return i;
	if (tft_grow((void **)&t->corr, &t->cap, t->n + 1, sizeof(*t->corr)))
		return TFT_NONE;
	i = t->n;
	c = &t->corr[i];
	c->id = id;
	c->src_track = c->dst_track = TFT_NONE;
	c->src_ts = c->dst_ts = 0;
	if (idmap_put(&t->map, key, i, i))
		return TFT_NONE;
	t->n++;
	return i;
}

/*
 * A correlation end of entry i, on a device plane (dst) or not: the first
 * source counts; every destination does (one launch, several kernels).
 */
__attribute__((noinline, cold)) int tft_xs_corr_more_add(struct xs_ctab *t, uint32_t i,
							  uint32_t track, int64_t ts)
{
	if (tft_grow((void **)&t->more, &t->cmore, t->nmore + 1, sizeof(*t->more)))
		return TFT_ENOMEM;
	t->more[t->nmore++] = (struct xs_corr_dst){ i, track, ts };
	return 0;
}

void tft_xs_ctab_free(struct xs_ctab *t)
{
	tft_xs_idmap_free(&t->map);
	free(t->corr);
	free(t->more);
}

/* Flows written straight into the writer's buffer (tft_writer_flow_room()). */
struct xs_fout {
	struct tft_flow *f;
	uint32_t k, room; /* filled, room at f */
};

/* The flows filled so far to the writer, and room for more. */
static int __attribute__((noinline)) fout_refill(struct xs *x, struct xs_fout *o)
{
	int r;

	if (o->k && (r = tft_writer_flows_add(x->w, o->k)))
		return r;
	o->k = 0;
	return tft_writer_flow_room(x->w, &o->f, &o->room);
}

static inline int add_launch_flow(struct xs *x, struct xs_fout *o, const struct xs_corr *c,
				  uint32_t track, int64_t ts)
{
	int r;

	if (tft_unlikely(o->k == o->room) && (r = fout_refill(x, o)))
		return r;
	o->f[o->k++] = (struct tft_flow){ .flow_id = c->id, .name = x->flow_name, .cat = x->flow_cat,
					   .src_track = c->src_track, .src_ts_ns = c->src_ts,
					   .dst_track = track, .dst_ts_ns = ts };
	return 0;
}

/* A flow from each launch to each device event of its correlation id. */
int tft_xs_emit_flows(struct xs *x)
{
	const struct xs_ctab *t = &x->corr;
	const struct xs_halves *h = &x->halves;
	struct xs_fout o = { NULL, 0, 0 };
	uint32_t cur[2] = { 0, 0 };
	int r;

	/* The serial lines' table; then the halves', in the order one table would have. */
	for (uint32_t i = 0; i < t->n; i++) {
		const struct xs_corr *c = &t->corr[i];

		if (c->src_track != TFT_NONE && c->dst_track != TFT_NONE &&
		    (r = add_launch_flow(x, &o, c, c->dst_track, c->dst_ts)))
			return r;
	}
	for (uint64_t w = 0; w < (h->nbits + 63) >> 6; w++) {
		uint64_t one = h->made[1][w], all = h->made[0][w] | one;

		while (all) {
			int p = (int)((one >> __builtin_ctzll(all)) & 1);
			const struct xs_corr *c = &h->half[p].corr[cur[p]++];

			all &= all - 1;
			if (c->src_track != TFT_NONE && c->dst_track != TFT_NONE &&
			    (r = add_launch_flow(x, &o, c, c->dst_track, c->dst_ts)))
				return r;
		}
	}
	for (uint32_t i = 0; i < t->nmore; i++) {
		const struct xs_corr_dst *m = &t->more[i];
		const struct xs_corr *c = &t->corr[m->corr];

		if (c->src_track != TFT_NONE && (r = add_launch_flow(x, &o, c, m->track, m->ts)))
			return r;
	}
	cur[0] = cur[1] = 0;
	for (uint64_t w = 0; w < (h->nbits + 63) >> 6; w++) {
		uint64_t one = h->more[1][w], all = h->more[0][w] | one;

		while (all) {
			int p = (int)((one >> __builtin_ctzll(all)) & 1);
			const struct xs_corr_dst *m = &h->half[p].more[cur[p]++];
			const struct xs_corr *c = &h->half[p].corr[m->corr];

			all &= all - 1;
			if (c->src_track != TFT_NONE && (r = add_launch_flow(x, &o, c, m->track, m->ts)))
				return r;
		}
	}
	return o.k ? tft_writer_flows_add(x->w, o.k) : 0;
}
