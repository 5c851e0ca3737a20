/* SPDX-License-Identifier: MIT */
/*
 * prof's record, code and cell tables (prof_int.h): arrays with core/hmap
 * indexes over them, so that the scan finds a record by
 * (context, name, kind) in one probe on average and never allocates per
 * event.
 */
#include <stdlib.h>
#include <string.h>

#include "analyze/prof_int.h"
#include "core/grow.h"
#include "core/hmap.h"

static uint64_t mix3(uint32_t a, uint32_t b, uint32_t c)
{
	return tft_hash_u64(((uint64_t)a << 32 | b) ^ ((uint64_t)c * 0x9e3779b97f4a7c15ULL));
}

uint32_t tft_prof_kcell_get(struct prof_tab *t, uint32_t cell, uint32_t remote, uint32_t kname)
{
	uint64_t k[2] = { (uint64_t)cell << 32 | kname, remote };
	uint32_t h = (uint32_t)mix3(cell, kname, 13 + remote), id = tft_hmap_get(&t->kcix, k, h);

	if (id != TFT_HMAP_EMPTY)
		return id;
	if (tft_grow((void **)&t->kcells, &t->capkcells, t->nkcells + 1, sizeof(*t->kcells)))
		return PROF_NONE;
	if (tft_hmap_put(&t->kcix, k, h, t->nkcells))
		return PROF_NONE;
	memset(&t->kcells[t->nkcells], 0, sizeof(t->kcells[0]));
	t->kcells[t->nkcells].cell = cell;
	t->kcells[t->nkcells].kname = kname;
	t->kcells[t->nkcells].remote = remote;
	return t->nkcells++;
}

int tft_prof_tab_init(struct prof_tab *t)
{
	memset(t, 0, sizeof(*t));
	tft_hmap_init(&t->rix, 2);
	tft_hmap_init(&t->cix, 1);
	tft_hmap_init(&t->kix, 1);
	tft_hmap_init(&t->kcix, 2);
	t->str = tft_strtab_create();
	if (!t->str)
		return TFT_ENOMEM;
	/* code 0 is the root of the code tree */
	if (tft_prof_code_get(t, PROF_NONE, 0) != 0) {
		tft_prof_tab_fini(t);
		return TFT_ENOMEM;
	}
	return 0;
}

void tft_prof_tab_fini(struct prof_tab *t)
{
	if (t->str)
		tft_strtab_destroy(t->str);
	free(t->recs);
	tft_hmap_fini(&t->rix);
	free(t->codes);
	tft_hmap_fini(&t->cix);
	free(t->cells);
	tft_hmap_fini(&t->kix);
	free(t->kcells);
	tft_hmap_fini(&t->kcix);
	memset(t, 0, sizeof(*t));
}

uint32_t tft_prof_rec_find(const struct prof_tab *t, uint32_t parent, uint32_t name, int kind)
{
	uint64_t k[2] = { (uint64_t)parent << 32 | name, (uint64_t)(uint32_t)kind };
	uint32_t id = tft_hmap_get(&t->rix, k, (uint32_t)mix3(parent, name, (uint32_t)kind));

	return id == TFT_HMAP_EMPTY ? PROF_NONE : id;
}

uint32_t tft_prof_rec_get(struct prof_tab *t, uint32_t parent, uint32_t name, int kind)
{
	uint64_t k[2] = { (uint64_t)parent << 32 | name, (uint64_t)(uint32_t)kind };
	uint32_t h = (uint32_t)mix3(parent, name, (uint32_t)kind), id = tft_hmap_get(&t->rix, k, h);
	struct prof_rec *r;

	if (id != TFT_HMAP_EMPTY)
		return id;
	if (t->nrecs >= PROF_REMOTE_BIT - 1)
		return PROF_NONE;
	if (tft_grow((void **)&t->recs, &t->caprecs, t->nrecs + 1, sizeof(*t->recs)))
		return PROF_NONE;
	if (tft_hmap_put(&t->rix, k, h, t->nrecs))
		return PROF_NONE;
	r = &t->recs[t->nrecs];
	memset(r, 0, sizeof(*r));
	r->parent = parent;
	r->name = name;
	r->kind = (uint8_t)kind;
	r->prev = PROF_NONE;
	r->redirect = PROF_NONE;
	r->fwd = PROF_NONE;
	r->seq = -1;
	return t->nrecs++;
}

uint32_t tft_prof_code_get(struct prof_tab *t, uint32_t parent, uint32_t name)
{
	uint64_t k = (uint64_t)parent << 32 | name;
	uint32_t h = (uint32_t)mix3(parent, name, 7), id = tft_hmap_get1(&t->cix, k, h);

	if (id != TFT_HMAP_EMPTY)
		return id;
	if (tft_grow((void **)&t->codes, &t->capcodes, t->ncodes + 1, sizeof(*t->codes)))
		return PROF_NONE;
	if (tft_hmap_put(&t->cix, &k, h, t->ncodes))
		return PROF_NONE;
	t->codes[t->ncodes].parent = parent;
	t->codes[t->ncodes].name = name;
	return t->ncodes++;
}

uint32_t tft_prof_cell_get(struct prof_tab *t, uint32_t rec, uint32_t code)
{
	uint64_t k = (uint64_t)rec << 32 | code;
	uint32_t h = (uint32_t)mix3(rec, code, 11), id = tft_hmap_get1(&t->kix, k, h);

	if (id != TFT_HMAP_EMPTY)
		return id;
	if (tft_grow((void **)&t->cells, &t->capcells, t->ncells + 1, sizeof(*t->cells)))
		return PROF_NONE;
	if (tft_hmap_put(&t->kix, &k, h, t->ncells))
		return PROF_NONE;
	memset(&t->cells[t->ncells], 0, sizeof(t->cells[0]));
	t->cells[t->ncells].rec = rec;
	t->cells[t->ncells].code = code;
	return t->ncells++;
}

uint32_t tft_prof_lid(struct prof_tab *t, const char *s, size_t len)
{
	return tft_strtab_intern(t->str, s, len);
}

const char *tft_prof_str(const struct prof_tab *t, uint32_t lid)
{
	const char *s = tft_strtab_get(t->str, lid, NULL);

	return s ? s : "";
}

void tft_prof_acc_add(struct prof_acc *a, const struct prof_acc *b)
{
	a->cpu_ns += b->cpu_ns;
	a->acc_ns += b->acc_ns;
	a->runs += b->runs;
	a->req += b->req;
	a->peak += b->peak;
	a->resid += b->resid;
	a->outb += b->outb;
	a->flops += b->flops;
	a->seen += b->seen;
}

uint32_t tft_prof_push(uint32_t **arr, uint32_t *n, uint32_t *cap, uint32_t v)
{
	if (tft_grow((void **)arr, cap, *n + 1, sizeof(**arr)))
		return PROF_NONE;
	(*arr)[*n] = v;
	return (*n)++;
}
