/* SPDX-License-Identifier: MIT */
/*
 * The merge of tftracer prof's scan (prof_scan_int.h): each worker filled
 * tables of its own (records, code nodes, cells, kernels by name, with its
 * own string ids); they are merged into the profile's table by key, worker
 * by worker: records (parents first), then code nodes, then cells; then the
 * kernels by name and the kernels whose launch another worker scanned (both
 * need every worker's cell map); last the backward ops left to place.
 */
#include <stdlib.h>
#include <string.h>

#include "analyze/prof_scan_int.h"

struct merge {
	struct prof_tab *g;
	struct prof_worker *ws;
	int nw;
	uint32_t **rmap, **cmap, **kmap; /* per worker: its record, code, cell -> the merged one's */
};

/* The merged table's lid of worker table t's string lid (cache: t's lid -> merged lid + 1). */
static uint32_t glid(struct prof_tab *g, const struct prof_tab *t, uint32_t lid, uint32_t *cache)
{
	size_t len;
	const char *s;

	if (cache[lid])
		return cache[lid] - 1;
	s = tft_strtab_get(t->str, lid, &len);
	uint32_t r = tft_prof_lid(g, s ? s : "", s ? len : 0);
	if (r != PROF_NONE)
		cache[lid] = r + 1;
	return r;
}

/* Worker k's records: parents come first (created before their children). */
static int merge_recs(struct merge *m, int k, uint32_t *lc)
{
	struct prof_tab *g = m->g;
	const struct prof_tab *t = &m->ws[k].tab;
	uint32_t *rmap = m->rmap[k];

	for (uint32_t r = 0; r < t->nrecs; r++) {
		const struct prof_rec *lr = &t->recs[r];
		uint32_t gp = lr->parent == PROF_NONE ? PROF_NONE : rmap[lr->parent];
		uint32_t gr = tft_prof_rec_get(g, gp, glid(g, t, lr->name, lc), lr->kind);
		struct prof_rec *x;
		if (gr == PROF_NONE)
			return TFT_ENOMEM;
		x = &g->recs[gr];
		x->tfname |= lr->tfname;
		x->bwd |= lr->bwd;
		x->seq = lr->seq;
		x->fwd_tid = lr->fwd_tid;
#define COPY_LID(f) \
	if (!x->f && lr->f) \
		x->f = glid(g, t, lr->f, lc);
		COPY_LID(op)
		COPY_LID(cat)
		COPY_LID(device)
		COPY_LID(dims)
		COPY_LID(concrete)
		COPY_LID(intypes)
		COPY_LID(out_arg)
		COPY_LID(in_arg)
#undef COPY_LID
		rmap[r] = gr;
	}
	for (uint32_t r = 0; r < t->nrecs; r++) {
		const struct prof_rec *lr = &t->recs[r];
		struct prof_rec *x = &g->recs[rmap[r]];
		if (lr->prev != PROF_NONE && x->prev == PROF_NONE && rmap[lr->prev] != rmap[r])
			x->prev = rmap[lr->prev];
	}
	return 0;
}

/* Worker k's code nodes (0 is the root), parents first. */
static int merge_codes(struct merge *m, int k, uint32_t *lc)
{
	const struct prof_tab *t = &m->ws[k].tab;

	m->cmap[k][0] = 0;
	for (uint32_t c = 1; c < t->ncodes; c++) {
		const struct prof_code *lc2 = &t->codes[c];
		uint32_t gc = tft_prof_code_get(m->g, m->cmap[k][lc2->parent], glid(m->g, t, lc2->name, lc));
		if (gc == PROF_NONE)
			return TFT_ENOMEM;
		m->cmap[k][c] = gc;
	}
	return 0;
}

/* Worker k's cells, their accumulators added (a kernel's cell whose launch another worker scanned: later). */
static int merge_cells(struct merge *m, int k)
{
	const struct prof_tab *t = &m->ws[k].tab;

	for (uint32_t c = 0; c < t->ncells; c++) {
		const struct prof_cell *lk = &t->cells[c];
		uint32_t gk;
		if (lk->rec & PROF_REMOTE_BIT) {
			m->kmap[k][c] = PROF_NONE;
			continue;
		}
		gk = tft_prof_cell_get(m->g, m->rmap[k][lk->rec], m->cmap[k][lk->code]);
		if (gk == PROF_NONE)
			return TFT_ENOMEM;
		tft_prof_acc_add(&m->g->cells[gk].a, &lk->a);
		m->kmap[k][c] = gk;
	}
	return 0;
}

static int merge_worker(struct merge *m, int k)
{
	const struct prof_tab *t = &m->ws[k].tab;
	uint32_t *lc = calloc(tft_strtab_count(t->str) + 1, sizeof(uint32_t));
	int rc = TFT_ENOMEM;

	m->rmap[k] = malloc(sizeof(uint32_t) * (t->nrecs + 1));
	m->cmap[k] = malloc(sizeof(uint32_t) * (t->ncodes + 1));
	m->kmap[k] = malloc(sizeof(uint32_t) * (t->ncells + 1));
	if (lc && m->rmap[k] && m->cmap[k] && m->kmap[k])
		rc = merge_recs(m, k, lc) || merge_codes(m, k, lc) || merge_cells(m, k) ? TFT_ENOMEM : 0;
	free(lc);
	return rc;
}

/* Kernels by name: their launching cells as merged (a remote one: that worker's map). */
static int merge_kcells(struct merge *m)
{
	struct prof_tab *g = m->g;

	for (int k = 0; k < m->nw; k++) {
		const struct prof_tab *t = &m->ws[k].tab;
		uint32_t *lc = calloc(tft_strtab_count(t->str) + 1, sizeof(uint32_t));
		if (!lc)
			return TFT_ENOMEM;
		for (uint32_t i = 0; i < t->nkcells; i++) {
			const struct prof_kcell *kc = &t->kcells[i];
			int ow = kc->remote ? (int)kc->remote - 1 : k;
			uint32_t gc = ow < m->nw && kc->cell < m->ws[ow].tab.ncells ? m->kmap[ow][kc->cell] : PROF_NONE;
			uint32_t gk;
			if (gc == PROF_NONE)
				continue;
			gk = tft_prof_kcell_get(g, gc, 0, glid(g, t, kc->kname, lc));
			if (gk == PROF_NONE) {
				free(lc);
				return TFT_ENOMEM;
			}
			g->kcells[gk].ns += kc->ns;
			g->kcells[gk].n += kc->n;
			if (!g->kcells[gk].device && kc->device)
				g->kcells[gk].device = glid(g, t, kc->device, lc);
		}
		free(lc);
	}
	return 0;
}

/* Kernels whose launch another worker scanned: into that worker's cell as merged. */
static void merge_remote_cells(struct merge *m)
{
	for (int k = 0; k < m->nw; k++) {
		const struct prof_tab *t = &m->ws[k].tab;
		for (uint32_t c = 0; c < t->ncells; c++) {
			const struct prof_cell *lk = &t->cells[c];
			if (!(lk->rec & PROF_REMOTE_BIT))
				continue;
			uint32_t ow = lk->rec & ~PROF_REMOTE_BIT;
			if ((int)ow < m->nw && lk->code < m->ws[ow].tab.ncells && m->kmap[ow][lk->code] != PROF_NONE)
				tft_prof_acc_add(&m->g->cells[m->kmap[ow][lk->code]].a, &lk->a);
		}
	}
}

/* Forward Sequence numbers: the latest forward op of each gives its scope to the backward ops. */
static int merge_bwd(struct merge *m)
{
	struct prof_seq_all all = { 0 };

	for (int k = 0; k < m->nw; k++) {
		if (tft_prof_seq_collect(&all, &m->ws[k].seq, m->rmap[k], m->cmap[k])) {
			free(all.v);
			return TFT_ENOMEM;
		}
	}
	tft_prof_seq_place(m->g, &all);
	return 0;
}

int tft_prof_merge(struct tft_prof *p, struct prof_worker *ws, int nw, struct tft_error *err)
{
	struct merge m = { .g = &p->tab, .ws = ws, .nw = nw };
	int rc = TFT_ENOMEM;

	m.rmap = calloc((size_t)nw, sizeof(*m.rmap));
	m.cmap = calloc((size_t)nw, sizeof(*m.cmap));
	m.kmap = calloc((size_t)nw, sizeof(*m.kmap));
	if (!m.rmap || !m.cmap || !m.kmap)
		goto out;
	for (int k = 0; k < nw; k++)
		if (merge_worker(&m, k))
			goto out;
	if (merge_kcells(&m))
		goto out;
	merge_remote_cells(&m);
	rc = merge_bwd(&m);
out:
	for (int k = 0; k < nw; k++) {
		if (m.rmap)
			free(m.rmap[k]);
		if (m.cmap)
			free(m.cmap[k]);
		if (m.kmap)
			free(m.kmap[k]);
	}
	free(m.rmap);
	free(m.cmap);
	free(m.kmap);
	if (rc)
		tft_error_set(err, rc, -1, "out of memory");
	return rc;
}
