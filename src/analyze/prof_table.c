/* SPDX-License-Identifier: MIT */
/*
 * prof's record, code and cell tables (prof_int.h): arrays with open
 * addressing hash indexes over them, so that the scan finds a record by
 * (context, name, kind) in one probe on average and never allocates per
 * event.
 */
#include <stdlib.h>
#include <string.h>

#include "analyze/prof_int.h"
#include "core/grow.h"

static uint64_t mix3(uint32_t a, uint32_t b, uint32_t c)
{
	return tft_hash_u64(((uint64_t)a << 32 | b) ^ ((uint64_t)c * 0x9e3779b97f4a7c15ULL));
}

static int index_grow(struct prof_index *ix, uint32_t n, uint64_t (*hash)(const void *, uint32_t),
		      const void *arr)
{
	uint32_t cap = ix->cap ? ix->cap * 2 : 1024, *slot;

	while (cap < n * 2)
		cap *= 2;
	slot = calloc(cap, sizeof(uint32_t));
	if (!slot)
		return TFT_ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t h = (uint32_t)hash(arr, i) & (cap - 1);
		while (slot[h])
			h = (h + 1) & (cap - 1);
		slot[h] = i + 1;
	}
	free(ix->slot);
	ix->slot = slot;
	ix->cap = cap;
	return 0;
}

static uint64_t rec_hash(const void *arr, uint32_t i)
{
	const struct prof_rec *r = (const struct prof_rec *)arr + i;

	return mix3(r->parent, r->name, r->kind);
}

static uint64_t code_hash(const void *arr, uint32_t i)
{
	const struct prof_code *c = (const struct prof_code *)arr + i;

	return mix3(c->parent, c->name, 7);
}

static uint64_t cell_hash(const void *arr, uint32_t i)
{
	const struct prof_cell *c = (const struct prof_cell *)arr + i;

	return mix3(c->rec, c->code, 11);
}

static uint64_t kcell_hash(const void *arr, uint32_t i)
{
	const struct prof_kcell *c = (const struct prof_kcell *)arr + i;

	return mix3(c->cell, c->kname, 13 + c->remote);
}

uint32_t tft_prof_kcell_get(struct prof_tab *t, uint32_t cell, uint32_t remote, uint32_t kname)
{
	uint32_t h, id;

	if (t->kcix.cap) {
		h = (uint32_t)mix3(cell, kname, 13 + remote) & (t->kcix.cap - 1);
		while ((id = t->kcix.slot[h])) {
			const struct prof_kcell *c = &t->kcells[id - 1];
			if (c->cell == cell && c->kname == kname && c->remote == remote)
				return id - 1;
			h = (h + 1) & (t->kcix.cap - 1);
		}
	}
	if ((t->nkcells + 1) * 2 > t->kcix.cap && index_grow(&t->kcix, t->nkcells, kcell_hash, t->kcells))
		return PROF_NONE;
	if (tft_grow((void **)&t->kcells, &t->capkcells, t->nkcells + 1, sizeof(*t->kcells)))
		return PROF_NONE;
	memset(&t->kcells[t->nkcells], 0, sizeof(t->kcells[0]));
	t->kcells[t->nkcells].cell = cell;
	t->kcells[t->nkcells].kname = kname;
	t->kcells[t->nkcells].remote = remote;
	h = (uint32_t)mix3(cell, kname, 13 + remote) & (t->kcix.cap - 1);
	while (t->kcix.slot[h])
		h = (h + 1) & (t->kcix.cap - 1);
	t->kcix.slot[h] = ++t->nkcells;
	return t->nkcells - 1;
}

int tft_prof_tab_init(struct prof_tab *t)
{
	memset(t, 0, sizeof(*t));
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
	free(t->rix.slot);
	free(t->codes);
	free(t->cix.slot);
	free(t->cells);
	free(t->kix.slot);
	free(t->kcells);
	free(t->kcix.slot);
	memset(t, 0, sizeof(*t));
}

uint32_t tft_prof_rec_find(const struct prof_tab *t, uint32_t parent, uint32_t name, int kind)
{
	uint32_t h, id;

	if (!t->rix.cap)
		return PROF_NONE;
	h = (uint32_t)mix3(parent, name, (uint32_t)kind) & (t->rix.cap - 1);
	while ((id = t->rix.slot[h])) {
		const struct prof_rec *r = &t->recs[id - 1];
		if (r->parent == parent && r->name == name && r->kind == kind)
			return id - 1;
		h = (h + 1) & (t->rix.cap - 1);
	}
	return PROF_NONE;
}

uint32_t tft_prof_rec_get(struct prof_tab *t, uint32_t parent, uint32_t name, int kind)
{
	uint32_t id = tft_prof_rec_find(t, parent, name, kind), h;
	struct prof_rec *r;

	if (id != PROF_NONE)
		return id;
	if (t->nrecs >= PROF_REMOTE_BIT - 1)
		return PROF_NONE;
	if ((t->nrecs + 1) * 2 > t->rix.cap && index_grow(&t->rix, t->nrecs, rec_hash, t->recs))
		return PROF_NONE;
	if (tft_grow((void **)&t->recs, &t->caprecs, t->nrecs + 1, sizeof(*t->recs)))
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
	h = (uint32_t)mix3(parent, name, (uint32_t)kind) & (t->rix.cap - 1);
	while (t->rix.slot[h])
		h = (h + 1) & (t->rix.cap - 1);
	t->rix.slot[h] = ++t->nrecs;
	return t->nrecs - 1;
}

uint32_t tft_prof_code_get(struct prof_tab *t, uint32_t parent, uint32_t name)
{
	uint32_t h, id;

	if (t->cix.cap) {
		h = (uint32_t)mix3(parent, name, 7) & (t->cix.cap - 1);
		while ((id = t->cix.slot[h])) {
			const struct prof_code *c = &t->codes[id - 1];
			if (c->parent == parent && c->name == name)
				return id - 1;
			h = (h + 1) & (t->cix.cap - 1);
		}
	}
	if ((t->ncodes + 1) * 2 > t->cix.cap && index_grow(&t->cix, t->ncodes, code_hash, t->codes))
		return PROF_NONE;
	if (tft_grow((void **)&t->codes, &t->capcodes, t->ncodes + 1, sizeof(*t->codes)))
		return PROF_NONE;
	t->codes[t->ncodes].parent = parent;
	t->codes[t->ncodes].name = name;
	h = (uint32_t)mix3(parent, name, 7) & (t->cix.cap - 1);
	while (t->cix.slot[h])
		h = (h + 1) & (t->cix.cap - 1);
	t->cix.slot[h] = ++t->ncodes;
	return t->ncodes - 1;
}

uint32_t tft_prof_cell_get(struct prof_tab *t, uint32_t rec, uint32_t code)
{
	uint32_t h, id;

	if (t->kix.cap) {
		h = (uint32_t)mix3(rec, code, 11) & (t->kix.cap - 1);
		while ((id = t->kix.slot[h])) {
			const struct prof_cell *c = &t->cells[id - 1];
			if (c->rec == rec && c->code == code)
				return id - 1;
			h = (h + 1) & (t->kix.cap - 1);
		}
	}
	if ((t->ncells + 1) * 2 > t->kix.cap && index_grow(&t->kix, t->ncells, cell_hash, t->cells))
		return PROF_NONE;
	if (tft_grow((void **)&t->cells, &t->capcells, t->ncells + 1, sizeof(*t->cells)))
		return PROF_NONE;
	memset(&t->cells[t->ncells], 0, sizeof(t->cells[0]));
	t->cells[t->ncells].rec = rec;
	t->cells[t->ncells].code = code;
	h = (uint32_t)mix3(rec, code, 11) & (t->kix.cap - 1);
	while (t->kix.slot[h])
		h = (h + 1) & (t->kix.cap - 1);
	t->kix.slot[h] = ++t->ncells;
	return t->ncells - 1;
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
