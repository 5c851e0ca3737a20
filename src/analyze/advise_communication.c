/* SPDX-License-Identifier: MIT */
/*
 * Checker 5, communication: time in collectives, send/recv and RecvTensor
 * over the analysed steps, how much of it overlaps compute (device compute,
 * or host compute without a device; HTA's communication/computation
 * overlap) and the exposed rest; per comm op its bytes and the bandwidth it
 * reached where the trace says how much it moved (Kineto's "In msg nelems"
 * and dtype, a "bytes" arg). Exposed communication of 10% of the step time
 * or more is a finding.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/advise_int.h"

#define EXPOSED_PCT 10
#define KEEP 8

struct cm_rec {
	uint64_t count, nbytes_ops;
	int64_t dur, exposed, bytes_dur;
	double bytes;
};

struct cm_top {
	uint32_t track, depth;
	int64_t ts, end, exposed;
};

struct cm_state {
	int64_t comm_ns, overlap_ns;
	struct adv_map ops;   /* name id -> struct cm_rec */
	struct cm_top top[KEEP];
	uint32_t ntop;
};

static int cm_init(struct adv *a)
{
	struct cm_state *st = calloc(1, sizeof(*st));

	if (!st)
		return TFT_ENOMEM;
	st->ops.vsize = sizeof(struct cm_rec);
	a->st[TFT_ADVISE_COMMUNICATION] = st;
	return 0;
}

static int dtype_size(const char *s)
{
	if (!strcmp(s, "Half") || !strcmp(s, "BFloat16") || !strcmp(s, "half") || !strcmp(s, "bfloat16") ||
	    !strcmp(s, "Short"))
		return 2;
	if (!strcmp(s, "Double") || !strcmp(s, "double") || !strcmp(s, "Long") || !strcmp(s, "int64"))
		return 8;
	if (!strcmp(s, "Byte") || !strcmp(s, "Char") || !strcmp(s, "Bool") || !strcmp(s, "uint8") ||
	    !strcmp(s, "int8"))
		return 1;
	return 4; /* Float, Int, float32 ... */
}

static void cm_event(struct adv *a, const struct tft_event *ev, uint32_t win)
{
	struct cm_state *st = a->st[TFT_ADVISE_COMMUNICATION];
	int64_t in = -1, out = -1, bytes = -1;
	int dsize = 4;
	struct cm_rec *r;

	if (ev->kind != TFT_EV_SLICE || win == TFT_NONE || !a->win[win].analysed || !ev->nargs)
		return;
	for (uint16_t i = 0; i < ev->nargs; i++) {
		const struct tft_arg *g = &ev->args[i];
		const char *k = tft_adv_str(a, g->key);
		int64_t v = g->type == TFT_ARG_INT ? g->v.i : g->type == TFT_ARG_DOUBLE ? (int64_t)g->v.d : -1;
		if (!strcmp(k, "In msg nelems") || !strcmp(k, "In msg size"))
			in = v;
		else if (!strcmp(k, "Out msg nelems") || !strcmp(k, "Out msg size"))
			out = v;
		else if (!strcmp(k, "bytes") || !strcmp(k, "Bytes") || !strcmp(k, "bytes_transferred"))
			bytes = v;
		else if (!strcmp(k, "dtype") && g->type == TFT_ARG_STR)
			dsize = dtype_size(tft_adv_str(a, g->v.str));
	}
	if (bytes < 0 && (in > 0 || out > 0))
		bytes = (in > out ? in : out) * dsize;
	if (bytes <= 0 || !(r = tft_adv_map_get(&st->ops, ev->name)))
		return;
	r->bytes += (double)bytes;
	r->nbytes_ops++;
	r->bytes_dur += ev->dur_ns;
}

static void keep_top(struct cm_state *st, const struct adv_sl *x, int64_t exposed)
{
	uint32_t m = 0;

	if (st->ntop < KEEP) {
		m = st->ntop++;
	} else {
		for (uint32_t k = 1; k < KEEP; k++)
			if (st->top[k].exposed < st->top[m].exposed)
				m = k;
		if (st->top[m].exposed >= exposed)
			return;
	}
	st->top[m].track = x->track;
	st->top[m].depth = x->depth;
	st->top[m].ts = x->ts;
	st->top[m].end = x->end;
	st->top[m].exposed = exposed;
}

static int cm_slab(struct adv *a, struct adv_slab *sl)
{
	struct cm_state *st = a->st[TFT_ADVISE_COMMUNICATION];
	const struct tft_ivset *comm = &sl->cls[ADV_C_COMM];
	const struct tft_ivset *comp = &sl->cls[a->has_device ? ADV_C_DEVICE : ADV_C_HOST];

	if (!comm->n)
		return 0;
	for (uint32_t i = sl->w0; i < sl->w1; i++) {
		const struct adv_win *w = &a->win[i];
		int64_t pa = w->t0 > sl->a ? w->t0 : sl->a, pb = w->t1 < sl->b ? w->t1 : sl->b;
		if (!w->analysed || pb <= pa)
			continue;
		st->comm_ns += tft_ivset_measure_in(comm, pa, pb);
		for (size_t k = tft_ivset_find(comm, pa); k < comm->n && comm->v[k].a < pb; k++) {
			int64_t x = comm->v[k].a > pa ? comm->v[k].a : pa, y = comm->v[k].b < pb ? comm->v[k].b : pb;
			st->overlap_ns += tft_ivset_measure_in(comp, x, y);
		}
	}
	for (size_t i = 0; i < sl->n; i++) {
		const struct adv_sl *x = &sl->sl[i];
		struct cm_rec *r;
		int64_t p, q, exposed;

		if (x->cls != ADV_C_COMM || !(x->flags & ADV_SL_OWN) || x->win == TFT_NONE || !a->win[x->win].analysed)
			continue;
		p = x->ts > sl->a ? x->ts : sl->a;
		q = x->end < sl->b ? x->end : sl->b;
		exposed = q > p ? (q - p) - tft_ivset_measure_in(comp, p, q) : 0;
		if (!(r = tft_adv_map_get(&st->ops, x->name)))
			return TFT_ENOMEM;
		r->count++;
		r->dur += x->end - x->ts;
		r->exposed += exposed;
		if (exposed > 0)
			keep_top(st, x, exposed);
	}
	return 0;
}

struct row {
	uint32_t name;
	const struct cm_rec *r;
};

static int cmp_row(const void *x, const void *y)
{
	const struct row *p = x, *q = y;

	if (p->r->exposed != q->r->exposed)
		return p->r->exposed > q->r->exposed ? -1 : 1;
	if (p->r->dur != q->r->dur)
		return p->r->dur > q->r->dur ? -1 : 1;
	return (p->name > q->name) - (p->name < q->name);
}

static int cm_finish(struct adv *a)
{
	struct cm_state *st = a->st[TFT_ADVISE_COMMUNICATION];
	int64_t total = tft_adv_analysed_ns(a), exposed;
	uint32_t n = tft_adv_analysed_count(a), nrows = 0;
	char ops[900], b1[32], b2[32], b3[32], p1[16], p2[16], p3[16], nm[64];
	size_t ol = 0;
	struct row *rows;
	struct tft_advise_finding *f;

	if (!n || total <= 0 || st->comm_ns <= 0) {
		tft_adv_verdict(a, TFT_ADVISE_COMMUNICATION, "no communication in the analysed steps%s",
				a->has_comm ? " (only outside them)" : ": no collectives, send/recv or RecvTensor");
		return 0;
	}
	exposed = st->comm_ns - st->overlap_ns;
	rows = malloc((st->ops.n ? st->ops.n : 1) * sizeof(*rows));
	if (!rows)
		return TFT_ENOMEM;
	for (size_t i = 0; i < st->ops.cap; i++) {
		uint32_t key;
		const struct cm_rec *r = tft_adv_map_slot(&st->ops, i, &key);
		if (r && r->count) {
			rows[nrows].name = key;
			rows[nrows++].r = r;
		}
	}
	qsort(rows, nrows, sizeof(*rows), cmp_row);
	ops[0] = 0;
	for (uint32_t i = 0; i < nrows && i < 4; i++) {
		const struct cm_rec *r = rows[i].r;
		const char *s = tft_adv_str(a, rows[i].name);
		if (strlen(s) > 60)
			snprintf(nm, sizeof(nm), "%.57s...", s);
		else
			snprintf(nm, sizeof(nm), "%s", s);
		ol += (size_t)snprintf(ops + ol, sizeof(ops) - ol, "%s%s %llux, %s, %s exposed", i ? "; " : "", nm,
				       (unsigned long long)r->count, tft_adv_ns(b1, sizeof(b1), r->dur),
				       tft_adv_ns(b2, sizeof(b2), r->exposed));
		if (r->nbytes_ops && r->bytes_dur > 0)
			ol += (size_t)snprintf(ops + ol, sizeof(ops) - ol, ", %s at %.1f GB/s",
					       tft_adv_bytes(b3, sizeof(b3), r->bytes),
					       r->bytes / (double)r->bytes_dur);
		if (ol >= sizeof(ops))
			ol = sizeof(ops) - 1;
	}
	tft_adv_verdict(a, TFT_ADVISE_COMMUNICATION,
			"communication %s of step time, %s of it overlapped with compute, exposed %s of step time (%s)",
			tft_adv_pct(p1, sizeof(p1), st->comm_ns, total), tft_adv_pct(p2, sizeof(p2), st->overlap_ns, st->comm_ns),
			tft_adv_pct(p3, sizeof(p3), exposed, total), ops);
	if (tft_adv_share_ge(exposed, EXPOSED_PCT, total)) {
		f = tft_adv_finding(a, TFT_ADVISE_COMMUNICATION, exposed / n,
				    "Exposed communication: %s of the step waits for collectives or transfers",
				    tft_adv_pct(p1, sizeof(p1), exposed, total));
		tft_adv_explain(f,
				"Communication takes %s per step, and only %s of it overlaps %s; the other %s per "
				"step nothing else runs (HTA's overlap: computation during communication over "
				"communication time). By op: %s. A collective's time includes waiting for the "
				"slowest rank.",
				tft_adv_ns(b1, sizeof(b1), st->comm_ns / n), tft_adv_pct(p2, sizeof(p2), st->overlap_ns, st->comm_ns),
				a->has_device ? "device compute" : "host compute", tft_adv_ns(b2, sizeof(b2), exposed / n), ops);
		tft_adv_recommend(f, "Overlap communication with compute: DDP overlaps the gradient all-reduce with "
				     "the backward pass (check bucket_cap_mb and that nothing synchronises in between; "
				     "gradient_as_bucket_view=True), FSDP prefetches (backward_prefetch, "
				     "forward_prefetch), and TF's MultiWorkerMirroredStrategy packs gradients "
				     "(CommunicationOptions). If ranks wait for one another, see the straggler "
				     "finding; if the bandwidth is low, check the interconnect and NCCL settings "
				     "(NCCL_DEBUG=INFO), and send fewer bytes (bf16 gradients, compression).");
		for (uint32_t k = 0; k < st->ntop; k++) {
			uint32_t best = 0;
			for (uint32_t j = 1; j < st->ntop; j++)
				if (st->top[j].exposed > st->top[best].exposed)
					best = j;
			if (st->top[best].exposed <= 0)
				break;
			struct tft_advise_evidence *e = tft_adv_evidence(f, st->top[best].track, st->top[best].ts,
									  st->top[best].end);
			tft_adv_evidence_slice(e, st->top[best].track, st->top[best].depth, st->top[best].ts);
			st->top[best].exposed = 0;
			if (k >= 4)
				break;
		}
	}
	free(rows);
	return 0;
}

static void cm_fini(struct adv *a)
{
	struct cm_state *st = a->st[TFT_ADVISE_COMMUNICATION];

	if (!st)
		return;
	tft_adv_map_fini(&st->ops);
	free(st);
	a->st[TFT_ADVISE_COMMUNICATION] = NULL;
}

const struct adv_checker tft_adv_communication = {
	.id = TFT_ADVISE_COMMUNICATION,
	.want_names = ADV_N_COMM,
	.init = cm_init,
	.event = cm_event,
	.slab = cm_slab,
	.finish = cm_finish,
	.fini = cm_fini,
};
