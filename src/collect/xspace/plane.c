/* SPDX-License-Identifier: MIT */
/*
 * One XPlane: pass 1 (id, name, where its repeated fields lie), the later
 * passes over their spans only (stat metadata, event metadata, plane stats,
 * lines), and the metadata map entries into the plane's tables.
 */
#include <string.h>

#include "collect/xspace/xs_int.h"

/*
 * A plane field left to a later pass (num 3..6): extend its span. A span
 * starts where the field before its first value ended, so it may hold
 * other fields (the pass skips them, as it would over the whole plane);
 * what it leaves out holds none of its values.
 */
int tft_xs_on_plane_later(void *ctx, void *msg, const struct tft_pb_field *f,
			  const struct tft_pb_val *v)
{
	struct xs *x = ctx;
	uint32_t k = f->num - 3;

	if (!x->span_lo[k])
		x->span_lo[k] = x->span_last;
	x->span_last = v->p + v->len;
	x->span_hi[k] = x->span_last;
	return 0;
}

static uint8_t special_of(struct tft_pb_bytes name)
{
	if (bytes_eq(name, "correlation_id"))
		return SPECIAL_CORRELATION;
	if (bytes_eq(name, "group_id"))
		return SPECIAL_GROUP;
	if (bytes_eq(name, "step_num"))
		return SPECIAL_STEP_NUM;
	if (bytes_eq(name, "step_name"))
		return SPECIAL_STEP_NAME;
	return SPECIAL_NONE;
}

/*
 * The usual layout of a metadata map entry: key, then the value: id, name
 * and, in an event metadata entry (`event`), display_name; each at most
 * once, in field-number order, nothing else but a stat metadata's
 * description or an event metadata's metadata bytes (not used) in their
 * places. Fills the entry (zeroed by the caller) as the tables would:
 * 1 = done, 0 = another layout (the tables decode it, skipping unknown
 * fields and reporting errors). `value` is the value's struct inside it.
 */
static int fast_meta_entry(const uint8_t *p, const uint8_t *end, int event,
			   uint64_t *has, int64_t *key, uint64_t *vhas, int64_t *id,
			   struct tft_pb_bytes *name, struct tft_pb_bytes *display_name)
{
	struct tft_pb_bytes val, skip;
	const uint8_t *q, *qend;
	uint64_t v;

	if (p < end && *p == 0x08) {
		p++;
		if (tft_pb_wire_varint(&p, end, &v))
			return 0;
		*key = (int64_t)v;
		*has |= 1u << 0;
	}
	if (p < end && *p == 0x12) {
		p++;
		if (take_bytes(&p, end, &val))
			return 0;
		*has |= 1u << 1;
		q = val.p;
		qend = q + val.len;
		if (q < qend && *q == 0x08) {
			q++;
			if (tft_pb_wire_varint(&q, qend, &v))
				return 0;
			*id = (int64_t)v;
			*vhas |= 1u << 0;
		}
		if (q < qend && *q == 0x12) {
			q++;
			if (take_bytes(&q, qend, name))
				return 0;
			*vhas |= 1u << 1;
		}
		/* XStatMetadata.description (stored, unused) / XEventMetadata.metadata (skipped). */
		if (q < qend && *q == 0x1a) {
			q++;
			if (take_bytes(&q, qend, &skip))
				return 0;
			if (!event)
				*vhas |= 1u << 2;
		}
		if (event && q < qend && *q == 0x22) {
			q++;
			if (take_bytes(&q, qend, display_name))
				return 0;
			*vhas |= 1u << 2;
		}
		if (q != qend)
			return 0;
	}
	return p == end;
}

int tft_xs_on_stat_meta(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct xs *x = ctx;
	struct xs_smeta_entry e;
	struct xs_smeta *m;
	int r;

	memset(&e, 0, sizeof(e));
	if (!fast_meta_entry(v->sub.p, v->sub.p + v->sub.len, 0, &e.has, &e.key,
			     &e.value.has, &e.value.id, &e.value.name, NULL)) {
		memset(&e, 0, sizeof(e));
		r = tft_pb_wire_decode_sub(&v->sub, &tft_xs_smeta_entry_msg, &e, x);
		if (r)
			return r;
	}
	if (x->nsmeta + 1 > x->csmeta) {
		uint32_t cap = x->csmeta;
		struct xs_strcache *ns;

		if (tft_grow((void **)&x->smeta, &cap, x->nsmeta + 1, sizeof(*x->smeta)))
			return oom(x);
		ns = realloc(x->strs, (size_t)cap * sizeof(*x->strs));
		if (!ns)
			return oom(x); /* x->smeta is larger than csmeta says: harmless */
		x->strs = ns;
		x->csmeta = cap;
	}
	m = &x->smeta[x->nsmeta];
	x->strs[x->nsmeta].p = NULL;
	x->strs[x->nsmeta].len = 0;
	x->strs[x->nsmeta].id = 0;
	m->name = tft_xs_intern(x, e.value.name.p, e.value.name.len);
	if (m->name == UINT32_MAX)
		return oom(x);
	m->special = special_of(e.value.name);
	/* The map key is authoritative; fall back to the id inside. */
	if (idmap_put(&x->smeta_map, (uint64_t)((e.has & 1) ? e.key : e.value.id), x->nsmeta, x->nsmeta))
		return oom(x);
	x->nsmeta++;
	return 0;
}

int tft_xs_on_event_meta(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct xs *x = ctx;
	struct xs_emeta_entry e;
	struct xs_emeta *m;
	uint32_t args_off = x->nmeta_args;
	int r;

	memset(&e, 0, sizeof(e));
	if (!fast_meta_entry(v->sub.p, v->sub.p + v->sub.len, 1, &e.has, &e.key,
			     &e.value.has, &e.value.id, &e.value.name, &e.value.display_name)) {
		memset(&e, 0, sizeof(e));
		r = tft_pb_wire_decode_sub(&v->sub, &tft_xs_emeta_entry_msg, &e, x);
		if (r)
			return r;
	}
	if (tft_grow((void **)&x->emeta, &x->cemeta, x->nemeta + 1, sizeof(*x->emeta)))
		return oom(x);
	m = &x->emeta[x->nemeta];
	m->long_name = TFT_NONE;
	if (e.value.display_name.len) {
		m->name = tft_xs_intern(x, e.value.display_name.p, e.value.display_name.len);
		if (!bytes_eq(e.value.name, "") &&
		    !(e.value.name.len == e.value.display_name.len &&
		      memcmp(e.value.name.p, e.value.display_name.p, e.value.name.len) == 0)) {
			m->long_name = tft_xs_intern(x, e.value.name.p, e.value.name.len);
			if (m->long_name == UINT32_MAX)
				return oom(x);
		}
	} else {
		m->name = tft_xs_intern(x, e.value.name.p, e.value.name.len);
	}
	if (m->name == UINT32_MAX)
		return oom(x);
	m->args_off = args_off;
	m->nargs = x->nmeta_args - args_off;
	if (idmap_put(&x->emeta_map, (uint64_t)((e.has & 1) ? e.key : e.value.id), x->nemeta, x->nemeta))
		return oom(x);
	x->nemeta++;
	return 0;
}

/*
 * A later pass over the plane, for field num (m lists it alone, with its
 * handler): the tables over its span only. The span holds all the field's
 * values and starts at a key, so the values' indexes and the error paths
 * are those of a pass over the whole plane (same path element).
 */
static int plane_pass(struct xs *x, const struct tft_pb_sub *ps, uint32_t num,
		      const struct tft_pb_msg *m)
{
	const uint8_t *p = x->span_lo[num - 3];
	struct tft_pb_sub span;

	if (!p)
		return 0; /* none */
	span = *ps;
	span.p = p;
	span.len = (size_t)(x->span_hi[num - 3] - p);
	return tft_pb_wire_decode_sub(&span, m, NULL, x);
}

/* The plane's lines: serially, or as jobs of the group (run when it is full). */
static int plane_lines(struct xs *x, const struct tft_pb_sub *ps)
{
	int r;

	if (!x->parallel)
		return plane_pass(x, ps, 3, &tft_xs_plane_lines_msg);
	r = plane_pass(x, ps, 3, &tft_xs_plane_jobs_msg);
	/* Also after an error: the jobs queued before it need the plane's tables. */
	if (tft_xs_snap_plane(x, ps) && !r)
		r = TFT_ENOMEM;
	if (r)
		return r;
	return x->group_bytes >= x->group_max ? tft_xs_run_jobs(x, 0) : 0;
}

static int do_plane(struct xs *x, const struct tft_pb_sub *ps)
{
	int r;

	x->nsmeta = x->nemeta = x->nmeta_args = 0;
	tft_xs_idmap_clear(&x->smeta_map);
	tft_xs_idmap_clear(&x->emeta_map);
	x->process = TFT_NONE;
	x->labels = 0;
	x->labels_len = 0;
	memset(&x->plane, 0, sizeof(x->plane));
	memset(x->span_lo, 0, sizeof(x->span_lo));
	x->span_last = ps->p;
	r = tft_pb_wire_decode_sub(ps, &tft_xs_plane_msg, &x->plane, x);
	if (!r)
		r = plane_pass(x, ps, 5, &tft_xs_plane_smeta_msg);
	if (!r)
		r = plane_pass(x, ps, 4, &tft_xs_plane_emeta_msg);
	if (!r)
		r = plane_pass(x, ps, 6, &tft_xs_plane_stats_msg);
	if (r)
		return r;
	if (x->labels_len) {
		x->labels = tft_xs_intern(x, x->labels_buf, x->labels_len);
		if (x->labels == UINT32_MAX)
			return oom(x);
	}
	x->device_plane = bytes_prefix(x->plane.name, "/device:");
	return plane_lines(x, ps);
}

int tft_xs_on_plane(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct xs *x = ctx;

	x->plane_index = v->index;
	return do_plane(x, &v->sub);
}
