/* SPDX-License-Identifier: MIT */
/*
 * Flow events (s / t / f, and flow v2's bind_id on slices): every point kept
 * under its key to the end of the input, then paired per key in timestamp
 * order (producers write them in any order) and handed to the writer.
 */
#include "collect/chrome/chrome_int.h"

/* Keep a flow point under key k (flow id `id`) for tft_chrome_emit_flows(). */
int tft_chrome_flow_point(struct chrome *c, const struct hkey *k, uint64_t id, uint8_t ph,
			  uint32_t track, int64_t ts, uint32_t name, uint32_t cat, uint32_t flags)
{
	uint32_t key = map_get(&c->map, k);

	if (key == TFT_NONE) {
		if (tft_grow((void **)&c->fkey_ids, &c->cap_fkeys, (uint64_t)c->nfkeys + 1,
			     sizeof(*c->fkey_ids)))
			return nomem(c);
		key = c->nfkeys++;
		c->fkey_ids[key] = id;
		if (map_put(&c->map, k, key))
			return nomem(c);
	}
	if (tft_unlikely(c->nfpoints == c->cap_fpoints) &&
	    tft_grow((void **)&c->fpoints, &c->cap_fpoints, (uint64_t)c->nfpoints + 1, sizeof(*c->fpoints)))
		return nomem(c);
	c->fpoints[c->nfpoints++] = (struct fpoint){ .ts = ts, .key = key, .track = track, .name = name,
						     .cat = cat, .ph = ph, .flags = (uint8_t)flags };
	return 0;
}

/* s / t / f: a flow point under (cat, scope, id), plus the process for id2.local ids. */
int tft_chrome_do_flow(struct chrome *c, const struct cev *e, char ph, uint32_t name, uint32_t cat)
{
	uint32_t track, scope = 0, pidx = 0;
	uint64_t id = xid_value(&e->id);
	uint32_t bind = STR_EQ(&e->bp, "e") ? TFT_FLOWF_BIND_ENCLOSING : 0;
	int rc;

	if ((rc = event_track(c, e, &track, NULL)))
		return rc;
	if (e->scope.len && (rc = intern(c, e->scope.ptr, e->scope.len, &scope)))
		return rc;
	if (e->id_local && (rc = tft_chrome_get_proc(c, &e->pid, &pidx)))
		return rc;
	/* key: (cat, scope, id), plus the process for id2.local ids */
	struct hkey k = mkkey(K_FLOW, e->id_local ? (uint64_t)pidx + 1 : 0,
			      ((uint64_t)cat << 32) | scope, id);
	return tft_chrome_flow_point(c, &k, id, ph == 's' ? FP_S : ph == 't' ? FP_T : FP_F, track,
				     e->ts, name,
				     cat, ph == 's' ? 0 : bind);
}

/* One flow to the writer: from point `from` (NULL: never seen) to point `to` (NULL: never seen). */
static int put_flow(struct chrome *c, const struct fpoint *from, const struct fpoint *to)
{
	const struct fpoint *named = from ? from : to;
	struct tft_flow f;

	memset(&f, 0, sizeof(f));
	f.flow_id = c->fkey_ids[named->key];
	f.name = named->name;
	f.cat = named->cat;
	f.src_track = from ? from->track : TFT_NONE;
	f.src_ts_ns = from ? from->ts + c->shift_ns : 0;
	f.dst_track = to ? to->track : TFT_NONE;
	f.dst_ts_ns = to ? to->ts + c->shift_ns : 0;
	f.flags = to ? to->flags : 0;
	if (!from || !to) {
		f.flags |= TFT_FLOWF_UNMATCHED;
		c->unmatched_flows++;
	}
	return tft_writer_add_flow(c->w, &f);
}

/* Points of one key sort by (ts, s < t < f, input order). */
struct fp_ord {
	int64_t ts;
	uint32_t idx;
	uint8_t ph;
};

static int fp_cmp(const void *a, const void *b)
{
	const struct fp_ord *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->ph != y->ph)
		return x->ph < y->ph ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/*
 * Pair the flow points of each key in timestamp order: an s opens a
 * segment (and ends the chains left open by a t); a t ends the oldest open
 * segment (one flow) and opens the next; an f ends the oldest open segment,
 * or is an unmatched flow when none is open. An s never ended is an
 * unmatched flow; a trailing t ends its chain. Reused ids thus pair first
 * in, first out. Flows go to the writer, shifted by shift_ns.
 */
int tft_chrome_emit_flows(struct chrome *c)
{
	uint32_t n = c->nfpoints, nk = c->nfkeys;
	uint32_t *start = NULL, *order = NULL, *open = NULL;
	struct fp_ord *seg = NULL;
	uint32_t cap_seg = 0;
	int rc = 0;

	if (!n)
		return 0;
	start = calloc((size_t)nk + 1, sizeof(*start));
	order = malloc((size_t)n * sizeof(*order));
	open = malloc((size_t)n * sizeof(*open));
	if (!start || !order || !open) {
		rc = nomem(c);
		goto out;
	}
	/* group by key (counting sort: input order kept within a key) */
	for (uint32_t i = 0; i < n; i++)
		start[c->fpoints[i].key + 1]++;
	for (uint32_t k = 0; k < nk; k++)
		start[k + 1] += start[k];
	for (uint32_t i = 0; i < n; i++)
		order[start[c->fpoints[i].key]++] = i;
	for (uint32_t k = nk; k > 0; k--) /* the cursors moved each start to the next key's */
		start[k] = start[k - 1];
	start[0] = 0;
	for (uint32_t k = 0; k < nk && !rc; k++) {
		uint32_t lo = start[k], m = start[k + 1] - lo, head = 0, nopen = 0;
		if (m > cap_seg) {
			struct fp_ord *ns = realloc(seg, (size_t)m * sizeof(*seg));
			if (!ns) {
				rc = nomem(c);
				break;
			}
			seg = ns;
			cap_seg = m;
		}
		for (uint32_t j = 0; j < m; j++) {
			const struct fpoint *p = &c->fpoints[order[lo + j]];
			seg[j] = (struct fp_ord){ p->ts, order[lo + j], p->ph };
		}
		if (m > 16) {
			qsort(seg, m, sizeof(*seg), fp_cmp);
		} else {
			for (uint32_t j = 1; j < m; j++) /* mostly 2 points: insertion sort */
				for (uint32_t i = j; i > 0 && fp_cmp(&seg[i], &seg[i - 1]) < 0; i--) {
					struct fp_ord t = seg[i];
					seg[i] = seg[i - 1];
					seg[i - 1] = t;
				}
		}
		/* open[head .. nopen): open points of this key, oldest first */
		for (uint32_t j = 0; j < m && !rc; j++) {
			const struct fpoint *p = &c->fpoints[seg[j].idx];
			if (p->ph == FP_S) {
				uint32_t w = head;
				for (uint32_t i = head; i < nopen; i++) /* chains ended by a t are done */
					if (c->fpoints[open[i]].ph == FP_S)
						open[w++] = open[i];
				nopen = w;
				open[nopen++] = seg[j].idx;
				continue;
			}
			if (head < nopen)
				rc = put_flow(c, &c->fpoints[open[head++]], p);
			else if (p->ph == FP_F)
				rc = put_flow(c, NULL, p);
			if (p->ph == FP_T)
				open[nopen++] = seg[j].idx;
		}
		for (uint32_t i = head; i < nopen && !rc; i++)
			if (c->fpoints[open[i]].ph == FP_S)
				rc = put_flow(c, &c->fpoints[open[i]], NULL);
	}
out:
	free(start);
	free(order);
	free(open);
	free(seg);
	return rc;
}
