/* SPDX-License-Identifier: MIT */
/*
 * Backward-op placement in tftracer prof's scan (prof_scan_int.h): a backward
 * op goes into the scope of the forward op that made its autograd node, found
 * by the node's Sequence number. Each worker notes its forward ops' numbers
 * as it scans (the latest op of a number wins); a backward op that finds its
 * note in its own worker takes the forward op's context at once, one that does
 * not gets a deferred context record (REC_BWDSEQ) that the merge resolves against
 * every worker's notes left (tft_prof_seq_place).
 *
 * The notes: pages of SEQ_PAGE consecutive numbers (the forward thread
 * numbers its autograd nodes 0, 1, 2 ...), so that the notes of a long
 * forward pass and their lookups by the backward ops stay within a few
 * pages. (The page key keeps a thread too, 0 for now: traces name the
 * forward thread of a backward op in two different ways.)
 */
#include <stdlib.h>
#include <string.h>

#include "analyze/prof_scan_int.h"
#include "core/grow.h"
#include "core/hmap.h"

#define SEQ_PAGE 1024
#define SEQ_PAGES_MAX 4096u /* 4M numbers, 96 MB: past that, the notes start over */

struct seq_slot {
	int64_t ts;          /* the forward op's start */
	uint32_t ctx, code;  /* its context and code node */
	uint8_t valid;
};

struct prof_seq_page {
	int64_t tid, base;   /* the forward thread, the first number */
	uint32_t live;       /* valid slots */
	struct seq_slot e[SEQ_PAGE];
};

struct prof_seq_entry {
	int64_t seq, ts, tid;
	uint32_t ctx, code;
};

static uint32_t page_hash(int64_t tid, int64_t base)
{
	return (uint32_t)tft_hash_u64((uint64_t)tid * 0x9e3779b97f4a7c15ULL ^ (uint64_t)base);
}

static struct prof_seq_page *page_find(const struct prof_seq *q, int64_t tid, int64_t base)
{
	uint64_t k[2] = { (uint64_t)tid, (uint64_t)base };
	uint32_t id = tft_hmap_get(&q->page_ix, k, page_hash(tid, base));

	return id == TFT_HMAP_EMPTY ? NULL : q->pages[id];
}

int tft_prof_seq_take(struct prof_seq *q, int64_t tid, int64_t seq, uint32_t *ctx)
{
	struct prof_seq_page *pg = page_find(q, tid, seq - (seq % SEQ_PAGE));
	struct seq_slot *e = pg ? &pg->e[seq % SEQ_PAGE] : NULL;

	if (!e || !e->valid)
		return 0;
	*ctx = e->ctx;
	/* forgotten once its backward op took its scope */
	e->valid = 0;
	pg->live--;
	return 1;
}

static void pages_clear(struct prof_seq *q)
{
	for (uint32_t i = 0; i < q->npages; i++)
		free(q->pages[i]);
	q->npages = 0;
	tft_hmap_clear(&q->page_ix);
}

void tft_prof_seq_free(struct prof_seq *q)
{
	pages_clear(q);
	free(q->pages);
	tft_hmap_fini(&q->page_ix);
	memset(q, 0, sizeof(*q));
}

/* A new page for numbers base.. */
static struct prof_seq_page *page_add(struct prof_seq *q, int64_t base)
{
	struct prof_seq_page *pg;
	uint64_t k[2] = { 0, (uint64_t)base };

	if (!q->page_ix.stride) /* (a prof_seq starts zeroed) */
		tft_hmap_init(&q->page_ix, 2);
	if (tft_grow((void **)&q->pages, &q->cappages, q->npages + 1, sizeof(*q->pages)) ||
	    !(pg = calloc(1, sizeof(*pg))))
		return NULL;
	if (tft_hmap_put(&q->page_ix, k, page_hash(0, base), q->npages)) {
		free(pg);
		return NULL;
	}
	pg->tid = 0;
	pg->base = base;
	q->pages[q->npages++] = pg;
	return pg;
}

/*
 * A forward op's number: the latest op of a number wins (tracks are scanned
 * in time order). Notes are forgotten as their backward ops use them;
 * forward ops that never get one (inference) keep theirs: past
 * SEQ_PAGES_MAX pages the notes start over (a backward op whose note is
 * gone waits for the other workers' notes, else stays at the root).
 */
int tft_prof_seq_note(struct prof_seq *q, int64_t seq, int64_t ts, uint32_t ctx, uint32_t code)
{
	int64_t base = seq - (seq % SEQ_PAGE);
	struct prof_seq_page *pg = page_find(q, 0, base);
	struct seq_slot *e;

	if (!pg) {
		if (q->npages >= SEQ_PAGES_MAX)
			pages_clear(q);
		if (!(pg = page_add(q, base)))
			return TFT_ENOMEM;
	}
	e = &pg->e[seq % SEQ_PAGE];
	if (e->valid && ts < e->ts)
		return 0;
	if (!e->valid)
		pg->live++;
	*e = (struct seq_slot){ .ts = ts, .ctx = ctx, .code = code, .valid = 1 };
	return 0;
}

int tft_prof_seq_collect(struct prof_seq_all *all, const struct prof_seq *q, const uint32_t *rmap,
			 const uint32_t *cmap)
{
	for (uint32_t k = 0; k < q->npages; k++) {
		const struct prof_seq_page *pg = q->pages[k];
		if (!pg->live)
			continue;
		if (tft_grow((void **)&all->v, &all->cap, all->n + pg->live + 1, sizeof(*all->v)))
			return TFT_ENOMEM;
		for (uint32_t i = 0; i < SEQ_PAGE; i++) {
			const struct seq_slot *e = &pg->e[i];
			if (e->valid)
				all->v[all->n++] = (struct prof_seq_entry){ .seq = pg->base + i, .ts = e->ts, .tid = pg->tid,
									    .ctx = rmap[e->ctx], .code = cmap[e->code] };
		}
	}
	return 0;
}

static int cmp_seq(const void *a, const void *b)
{
	const struct prof_seq_entry *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return (x->ts > y->ts) - (x->ts < y->ts);
}

void tft_prof_seq_place(struct prof_tab *g, struct prof_seq_all *all)
{
	const struct prof_seq_entry *v = all->v;
	uint32_t nn = all->n;

	if (nn)
		qsort(all->v, nn, sizeof(*all->v), cmp_seq);
	for (uint32_t r = 0; r < g->nrecs; r++) {
		struct prof_rec *x = &g->recs[r];
		uint32_t lo = 0, hi = nn;
		if (x->kind != REC_BWDSEQ)
			continue;
		while (lo < hi) {
			uint32_t mid = lo + (hi - lo) / 2;
			if (v[mid].tid < x->fwd_tid || (v[mid].tid == x->fwd_tid && v[mid].seq < x->seq))
				lo = mid + 1;
			else
				hi = mid;
		}
		while (lo + 1 < nn && v[lo + 1].tid == x->fwd_tid && v[lo + 1].seq == x->seq)
			lo++; /* the latest (sorted by thread, number, then time) */
		/* (no forward op in a scope: the root) */
		x->fwd = lo < nn && v[lo].tid == x->fwd_tid && v[lo].seq == x->seq ? v[lo].ctx : PROF_NONE;
	}
	free(all->v);
	memset(all, 0, sizeof(*all));
}
