/* SPDX-License-Identifier: MIT */
/*
 * Tensors and memory of the tf.timeline export (tl_int.h): the tensor
 * objects the nodes' outputs make (created, referenced, last unreferenced),
 * and per allocator the memory counter over time with its peak (what is
 * live at it): timeline.py's show_memory, and tft_tftimeline_peak_memory.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "core/strtab.h"
#include "export/tftimeline/tl_int.h"

/* ---- tensors ------------------------------------------------------------------------- */

struct tname {
	struct tl *t;
	const char *p;
	size_t len;
};

static bool tensor_eq(const void *ctx, const void *key, uint32_t idx)
{
	const struct tname *k = key;
	const struct tl_tensor *x = &k->t->tensors[idx];

	(void)ctx;
	return x->name_len == k->len && memcmp(x->name, k->p, k->len) == 0;
}

void tft_tl_tensors_init(struct tl *t)
{
	tft_hmap_init_ext(&t->tmap, tensor_eq, NULL);
}

uint32_t tft_tl_find_tensor(struct tl *t, const char *p, size_t len)
{
	struct tname k = { t, p, len };

	return tft_hmap_get(&t->tmap, &k, (uint32_t)tft_hash_bytes(p, len));
}

/* _produce_tensor: a new tracker under `name` (replacing an older one in place). */
static int produce_tensor(struct tl *t, const char *name, size_t len, const struct tl_node *n,
			  const struct tl_dev *dv, const struct out_desc *o, uint32_t *out)
{
	uint32_t idx = tft_tl_find_tensor(t, name, len);
	struct tl_tensor *x;
	char tmp[512];
	size_t alen = tft_tl_json_unescape(o->allocator, tmp, sizeof(tmp) - 1);
	int64_t object_id = t->object_base + (int64_t)t->ntensors; /* len(self._tensors) */

	if (idx == NOSTR) {
		const char *copy = tft_arena_dup(&t->names, name, len + 1); /* with the NUL of tmp */
		struct tname k = { t, name, len };

		if (!copy || tft_grow_size((void **)&t->tensors, &t->ctensors, t->ntensors + 1, sizeof(*t->tensors)) ||
		    tft_hmap_put(&t->tmap, &k, (uint32_t)tft_hash_bytes(name, len), (uint32_t)t->ntensors))
			return nomem(t);
		idx = (uint32_t)t->ntensors++;
		t->tensors[idx].name = copy;
		t->tensors[idx].name_len = len;
	}
	x = &t->tensors[idx];
	x->object_id = object_id;
	x->create_us = n->start_us;
	x->pid = dv->tensors_pid;
	tmp[alen < sizeof(tmp) ? alen : sizeof(tmp) - 1] = '\0';
	if (!(x->alloc = tft_arena_dup(&t->names, tmp, alen + 1)))
		return nomem(t);
	x->alloc_len = alen;
	x->bytes = o->requested;
	x->last_unref = (int64_t)((uint64_t)n->start_us + (uint64_t)n->dur_us);
	x->flow_ts = x->last_unref;
	x->flow_pid = dv->compute_pid;
	x->flow_tid = n->lane;
	*out = idx;
	t->counts.tensors++;
	return 0;
}

/* _analyze_tensors */
int tft_tl_analyze_tensors(struct tl *t, uint32_t g)
{
	const struct tl_group *gr = &t->groups[g];
	struct pyj *j = t->out;

	for (uint32_t d = gr->first_dev; d < gr->first_dev + gr->ndevs; d++) {
		const struct tl_dev *dv = &t->devs[d];

		for (uint32_t i = dv->first; i < dv->first + dv->count; i++) {
			const struct tl_node *n = &t->nodes[i];
			size_t olen, nlen;
			const char *otext, *nname;
			struct jp jpo;
			uint32_t index = 0;

			if (n->output == NOSTR)
				continue;
			otext = sstr(t, n->output, &olen);
			nname = sstr(t, n->name, &nlen);
			jpo.p = otext;
			jpo.end = otext + olen;
			if (!tft_tl_jp_lit(&jpo, '[') || tft_tl_jp_lit(&jpo, ']'))
				continue;
			do {
				struct out_desc o;
				uint32_t x = 0;
				int r;

				if (!tft_tl_parse_output(&jpo, &o))
					break;
				t->tmp.len = 0;
				tft_tl_buf_add(&t->tmp, nname, nlen);
				if (index) {
					tft_tl_buf_cstr(&t->tmp, ":");
					tft_tl_buf_int(&t->tmp, index);
				}
				tft_tl_buf_add(&t->tmp, "", 1); /* NUL, not counted */
				t->tmp.len--;
				if (t->tmp.oom)
					return nomem(t);
				if ((r = produce_tensor(t, t->tmp.p, t->tmp.len, n, dv, &o, &x)))
					return r;
				if (j && t->show_memory) {
					const struct tl_tensor *tx = &t->tensors[x];

					pyj_event(j, "N", "Tensor", tx->name, tx->name_len, dv->tensors_pid, n->lane,
						  n->start_us);
					tft_json_py_key_int(&j->py, "id", tx->object_id);
					tft_json_py_close(&j->py, '}');
					pyj_event(j, "O", "Tensor", tx->name, tx->name_len, dv->tensors_pid, n->lane,
						  tx->last_unref - 1);
					tft_json_py_key_int(&j->py, "id", tx->object_id);
					tft_json_py_key(&j->py, "args");
					tft_json_py_open(&j->py, '{');
					tft_json_py_key(&j->py, "snapshot");
					tft_json_py_open(&j->py, '{');
					tft_tl_tensor_text(&t->tmp, &o);
					if (t->tmp.oom)
						return nomem(t);
					tft_json_py_key_str(&j->py, "tensor_description", t->tmp.p ? t->tmp.p : "", t->tmp.len);
					tft_json_py_close(&j->py, '}');
					tft_json_py_close(&j->py, '}');
					tft_json_py_close(&j->py, '}');
				}
				index++;
			} while (tft_tl_jp_lit(&jpo, ','));
		}
	}
	return 0;
}

/* ---- memory counters ------------------------------------------------------------------ */

/* Python's sort of (time, num_bytes, name) tuples. */
static int cmp_alloc_ev(const void *a, const void *b)
{
	const struct tl_alloc_ev *x = a, *y = b;
	size_t n;
	int c;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? -1 : 1;
	n = x->name_len < y->name_len ? x->name_len : y->name_len;
	c = memcmp(x->name, y->name, n);
	if (c)
		return c;
	return x->name_len < y->name_len ? -1 : x->name_len > y->name_len;
}

static int cmp_cstr(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static bool same_alloc(const struct tl_tensor *a, const struct tl_tensor *b)
{
	return a->alloc_len == b->alloc_len && memcmp(a->alloc, b->alloc, a->alloc_len) == 0;
}

/* The peak of one allocator: replay the sorted events up to it for the live set. */
static int report_peak(struct tl *t, uint32_t g, const struct tl_tensor *a, size_t peak_at,
		       int64_t peak_ts, int64_t peak_bytes)
{
	struct tft_tftimeline_peak pk;
	size_t nlive = 0;
	int r;

	if (tft_grow_size((void **)&t->peak_names, &t->cpeak_names, t->ntensors + 1, sizeof(*t->peak_names)) ||
	    tft_grow_size((void **)&t->live, &t->clive, t->ntensors + 1, 1))
		return nomem(t);
	memset(t->live, 0, t->ntensors);
	/* a set of names: add on an allocation, discard on a free */
	for (size_t i = 0; peak_at != SIZE_MAX && i <= peak_at; i++)
		t->live[t->aev[i].tensor] = t->aev[i].bytes >= 0;
	for (size_t i = 0; i < t->ntensors; i++)
		if (t->live[i])
			t->peak_names[nlive++] = t->tensors[i].name;
	qsort(t->peak_names, nlive, sizeof(*t->peak_names), cmp_cstr);
	memset(&pk, 0, sizeof(pk));
	pk.allocator = a->alloc;
	pk.step = t->groups[g].step;
	pk.ts_us = peak_ts;
	pk.bytes = peak_bytes;
	pk.ntensors = (uint32_t)nlive;
	pk.tensors = t->peak_names;
	r = t->peak_fn(t->peak_ctx, &pk);
	if (r)
		t->stop = r;
	return r;
}

/* _show_memory_counters (and the AllocationMaximum per allocator) */
int tft_tl_show_memory(struct tl *t, uint32_t g)
{
	struct pyj *j = t->show_memory ? t->out : NULL;
	size_t nalloc = 0;
	int r;

	for (size_t i = 0; j && i < t->ntensors; i++) {
		const struct tl_tensor *x = &t->tensors[i];

		pyj_event(j, "D", "Tensor", x->name, x->name_len, x->pid, 0, x->last_unref);
		tft_json_py_key_int(&j->py, "id", x->object_id);
		tft_json_py_close(&j->py, '}');
	}
	/* allocators in order of their first tensor (peak_names: scratch list of them) */
	for (size_t i = 0; i < t->ntensors; i++) {
		size_t k;

		for (k = 0; k < nalloc; k++)
			if (same_alloc(&t->tensors[i], &t->tensors[t->aorder[k]]))
				break;
		if (k < nalloc)
			continue;
		if (tft_grow_size((void **)&t->aorder, &t->caorder, nalloc + 1, sizeof(*t->aorder)))
			return nomem(t);
		t->aorder[nalloc++] = (uint32_t)i;
	}
	for (size_t k = 0; k < nalloc; k++) {
		const struct tl_tensor *a = &t->tensors[t->aorder[k]];
		int64_t total = 0, peak_bytes = 0, peak_ts = 0;
		size_t peak_at = SIZE_MAX;

		t->naev = 0;
		for (size_t i = t->aorder[k]; i < t->ntensors; i++) {
			const struct tl_tensor *x = &t->tensors[i];

			if (!same_alloc(x, a))
				continue;
			if (tft_grow_size((void **)&t->aev, &t->caev, t->naev + 2, sizeof(*t->aev)))
				return nomem(t);
			t->aev[t->naev++] = (struct tl_alloc_ev){ x->create_us, x->bytes, x->name,
								  x->name_len, (uint32_t)i };
			t->aev[t->naev++] = (struct tl_alloc_ev){ x->last_unref,
								  (int64_t)(0 - (uint64_t)x->bytes),
								  x->name, x->name_len, (uint32_t)i };
		}
		qsort(t->aev, t->naev, sizeof(*t->aev), cmp_alloc_ev);
		for (size_t i = 0; i < t->naev; i++) {
			total = (int64_t)((uint64_t)total + (uint64_t)t->aev[i].bytes);
			if (total > peak_bytes) {
				peak_bytes = total;
				peak_ts = t->aev[i].time;
				peak_at = i;
			}
			if (j) {
				pyj_event(j, "C", "Memory", a->alloc, a->alloc_len, 0, 0, t->aev[i].time);
				tft_json_py_key(&j->py, "args");
				tft_json_py_open(&j->py, '{');
				tft_json_py_item(&j->py);
				tft_json_py_str(&j->py, a->alloc, a->alloc_len);
				tft_json_write_raw(j->py.w, ": ", 2);
				tft_json_write_raw_int(j->py.w, total);
				tft_json_py_close(&j->py, '}');
				tft_json_py_close(&j->py, '}');
				t->counts.counters++;
			}
		}
		if (t->peak_fn && (r = report_peak(t, g, a, peak_at, peak_ts, peak_bytes)))
			return r;
	}
	return 0;
}
