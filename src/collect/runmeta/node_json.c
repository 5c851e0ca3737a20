/* SPDX-License-Identifier: MIT */
/*
 * A NodeExecStats's sub-messages (memory, output, referenced_tensor,
 * memory_stats) as the JSON text of its args, in the per-node writers of
 * struct rm, written by the table decoder's handlers here. Each record is written
 * through one reservation (codec/json_write.h's cursor writes).
 */
#include <stdlib.h>
#include <string.h>

#include "collect/runmeta/rm_int.h"

static void json_dim(struct rm *rm, const struct tft_tf_dim *dim);
static void json_output(struct rm *rm, const struct rm_output *o);
static void json_ref_tensor(struct tft_json_writer *b, const struct rm_alloc_desc *a);
static void json_alloc_rec(struct tft_json_writer *b, const struct rm_alloc_rec *a);
static void json_memory(struct rm *rm, const struct rm_mem_used *m);
static void json_mem_stats(struct rm *rm, const struct rm_mem_stats *m);
static void json_alloc_id(struct tft_json_writer *ids, int64_t id);

/* A dim of the shape decoded by the table (tft_tf_dim_fn; user: the struct rm). */
static void on_shape_dim(void *user, const struct tft_tf_dim *dim)
{
	json_dim(user, dim);
}

int tft_rm_on_td_shape(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct rm_tensor_desc *td = msg;

	if (!td) /* (a table row stores nothing without a struct to fill) */
		return 0;
	return tft_tf_shape_decode(&v->sub, ctx, &td->shape, on_shape_dim, ctx);
}

/* One TensorShapeProto.Dim: its size to j_dims, its name to j_dnames. */
static void json_dim(struct rm *rm, const struct tft_tf_dim *dim)
{
	struct tft_json_writer *d = &rm->j_dims, *nm = &rm->j_dnames;
	char *p = tft_json_write_cursor(d, 1 + TFT_JSON_INT_MAX), *q;

	if (!p || !(q = tft_json_write_cursor(nm, 3 + tft_json_escape_bound(dim->name.len))))
		return;
	if (tft_json_write_bytes(d))
		*p++ = ','; /* (these lists hold values only: no opener to follow) */
	p = tft_json_put_int(p, dim->size);
	tft_json_write_commit(d, p);
	/* Dim names ("batch", ...) go to a parallel array: "shape" stays ints. */
	p = q;
	if (tft_json_write_bytes(nm))
		*p++ = ',';
	p = tft_json_put_str(p, dim->name.p, dim->name.len);
	tft_json_write_commit(nm, p);
	rm->dim_named |= dim->name.len != 0;
}

/* Room json_alloc_desc() needs at most. */
static inline size_t alloc_desc_bound(const struct rm_alloc_desc *a)
{
	return 256 + tft_json_escape_bound(a->allocator_name.len);
}

/* The AllocationDescription's fields at o, inside an open object. */
static char *json_alloc_desc(char *o, const struct rm_alloc_desc *a)
{
	if (a->has & (1u << 0)) {
		o = tft_json_put_key(o, "requested_bytes");
		o = tft_json_put_int(o, a->requested_bytes);
	}
	if (a->has & (1u << 1)) {
		o = tft_json_put_key(o, "allocated_bytes");
		o = tft_json_put_int(o, a->allocated_bytes);
	}
	if (a->has & (1u << 2)) {
		o = tft_json_put_key(o, "allocator_name");
		o = tft_json_put_str(o, a->allocator_name.p, a->allocator_name.len);
	}
	if (a->has & (1u << 3)) {
		o = tft_json_put_key(o, "allocation_id");
		o = tft_json_put_int(o, a->allocation_id);
	}
	if (a->has & (1u << 4)) {
		o = tft_json_put_key(o, "has_single_reference");
		o = a->has_single_reference ? tft_json_put_lit(o, "true") : tft_json_put_lit(o, "false");
	}
	if (a->has & (1u << 5)) {
		o = tft_json_put_key(o, "ptr");
		o = tft_json_put_uint(o, a->ptr);
	}
	return o;
}

int tft_rm_on_output(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct rm *rm = ctx;
	struct rm_output o;
	int r;

	if (((struct rm_node *)msg)->nout < UINT32_MAX)
		((struct rm_node *)msg)->nout++;
	memset(&o, 0, sizeof(o));
	tft_json_write_clear(&rm->j_dims);
	tft_json_write_clear(&rm->j_dnames);
	rm->dim_named = 0;
	r = tft_pb_wire_decode_sub(&v->sub, &tft_rm_output_msg, &o, ctx);
	if (r)
		return r;
	json_output(rm, &o);
	return 0;
}

/* One NodeOutput, appended to j_output (its dims are in j_dims / j_dnames). */
static void json_output(struct rm *rm, const struct rm_output *o)
{
	struct tft_json_writer *b = &rm->j_output;
	char dbuf[48];
	const char *dname = NULL, *dims, *dnames;
	size_t dlen = 0, ndims, ndnames;
	char *p;

	if (o->td.has & (1u << 0)) {
		dname = tft_tf_dtype_name(o->td.dtype, dbuf, sizeof(dbuf));
		dlen = dname ? strlen(dname) : 0;
	}
	dims = tft_json_write_data(&rm->j_dims, &ndims);
	dnames = tft_json_write_data(&rm->j_dnames, &ndnames);
	p = tft_json_write_cursor(b, 160 + dlen + ndims + ndnames + alloc_desc_bound(&o->td.alloc));
	if (!p)
		return;
	p = tft_json_write_bytes(b) ? tft_json_put_lit(p, ",{") : tft_json_put_lit(p, "[{");
	p = tft_json_put_key(p, "slot");
	p = tft_json_put_int(p, o->slot);
	if (o->td.has & (1u << 0)) {
		p = tft_json_put_key(p, "dtype");
		if (dname) {
			*p++ = '"';
			p = tft_json_put_raw(p, dname, dlen);
			*p++ = '"';
		} else {
			p = tft_json_put_int(p, o->td.dtype);
		}
	}
	if (o->td.has & (1u << 1)) {
		p = tft_json_put_key(p, "shape");
		*p++ = '[';
		p = tft_json_put_raw(p, dims, ndims);
		*p++ = ']';
		if (rm->dim_named) {
			p = tft_json_put_key(p, "dim_names");
			*p++ = '[';
			p = tft_json_put_raw(p, dnames, ndnames);
			*p++ = ']';
		}
		if (o->td.shape.unknown_rank) {
			p = tft_json_put_key(p, "unknown_rank");
			p = tft_json_put_lit(p, "true");
		}
	}
	p = json_alloc_desc(p, &o->td.alloc);
	if ((o->td.has & (1u << 2)) && !o->td.alloc.requested_bytes && !o->td.alloc.allocated_bytes &&
	    !o->td.alloc.allocator_name.len && !o->td.alloc.allocation_id &&
	    !o->td.alloc.has_single_reference && !o->td.alloc.ptr) {
		/* present but all defaults: str(tensor_description) still prints it */
		p = tft_json_put_key(p, "allocation_description");
		p = tft_json_put_lit(p, "{}");
	}
	*p++ = '}';
	tft_json_write_commit(b, p);
}

static void json_ref_tensor(struct tft_json_writer *b, const struct rm_alloc_desc *a)
{
	char *p;

	p = tft_json_write_cursor(b, 4 + alloc_desc_bound(a));
	if (!p)
		return;
	p = tft_json_write_bytes(b) ? tft_json_put_lit(p, ",{") : tft_json_put_lit(p, "[{");
	p = json_alloc_desc(p, a);
	*p++ = '}';
	tft_json_write_commit(b, p);
}

int tft_rm_on_ref_tensor(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct rm *rm = ctx;
	struct rm_alloc_desc a;
	int r;

	memset(&a, 0, sizeof(a));
	r = tft_pb_wire_decode_sub(&v->sub, &tft_rm_alloc_desc_msg, &a, ctx);
	if (r)
		return r;
	json_ref_tensor(&rm->j_ref, &a);
	return 0;
}

/* One AllocationRecord, appended to j_tmp (the current AllocatorMemoryUsed's records). */
static void json_alloc_rec(struct tft_json_writer *b, const struct rm_alloc_rec *a)
{
	char *p;

	p = tft_json_write_cursor(b, 48 + 2 * TFT_JSON_INT_MAX);
	if (!p)
		return;
	p = tft_json_write_bytes(b) ? tft_json_put_lit(p, ",{") : tft_json_put_lit(p, "{");
	p = tft_json_put_key(p, "alloc_micros");
	p = tft_json_put_int(p, a->alloc_micros);
	p = tft_json_put_key(p, "alloc_bytes");
	p = tft_json_put_int(p, a->alloc_bytes);
	*p++ = '}';
	tft_json_write_commit(b, p);
}

int tft_rm_on_alloc_rec(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct rm *rm = ctx;
	struct rm_alloc_rec a;
	int r;

	memset(&a, 0, sizeof(a));
	r = tft_pb_wire_decode_sub(&v->sub, &tft_rm_alloc_rec_msg, &a, ctx);
	if (r)
		return r;
	json_alloc_rec(&rm->j_tmp, &a);
	return 0;
}

int tft_rm_on_memory(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct rm *rm = ctx;
	struct rm_mem_used m;
	int r;

	memset(&m, 0, sizeof(m));
	tft_json_write_clear(&rm->j_tmp);
	r = tft_pb_wire_decode_sub(&v->sub, &tft_rm_mem_used_msg, &m, ctx);
	if (r)
		return r;
	json_memory(rm, &m);
	return 0;
}

/* One AllocatorMemoryUsed, appended to j_memory (its records are in j_tmp). */
static void json_memory(struct rm *rm, const struct rm_mem_used *m)
{
	struct tft_json_writer *b = &rm->j_memory;
	size_t nrec;
	const char *rec = tft_json_write_data(&rm->j_tmp, &nrec);
	char *p = tft_json_write_cursor(b, 256 + tft_json_escape_bound(m->allocator_name.len) + nrec);

	if (!p)
		return;
	p = tft_json_write_bytes(b) ? tft_json_put_lit(p, ",{") : tft_json_put_lit(p, "[{");
	p = tft_json_put_key(p, "allocator_name");
	p = tft_json_put_str(p, m->allocator_name.p, m->allocator_name.len);
	if (m->has & (1u << 1)) {
		p = tft_json_put_key(p, "total_bytes");
		p = tft_json_put_int(p, m->total_bytes);
	}
	if (m->has & (1u << 2)) {
		p = tft_json_put_key(p, "peak_bytes");
		p = tft_json_put_int(p, m->peak_bytes);
	}
	if (m->has & (1u << 3)) {
		p = tft_json_put_key(p, "live_bytes");
		p = tft_json_put_int(p, m->live_bytes);
	}
	if (m->has & (1u << 4)) {
		p = tft_json_put_key(p, "allocator_bytes_in_use");
		p = tft_json_put_int(p, m->allocator_bytes_in_use);
	}
	if (nrec) {
		p = tft_json_put_key(p, "allocation_records");
		*p++ = '[';
		p = tft_json_put_raw(p, rec, nrec);
		*p++ = ']';
	}
	*p++ = '}';
	tft_json_write_commit(b, p);
}

int tft_rm_on_alloc_id(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct rm *rm = ctx;

	json_alloc_id(f->num == 5 ? &rm->j_ids : &rm->j_ids2, v->n.i);
	return 0;
}

/* One id of a MemoryStats id list (j_ids, j_ids2). */
static void json_alloc_id(struct tft_json_writer *ids, int64_t id)
{
	tft_json_write_raw_sep(ids);
	tft_json_write_raw_int(ids, id);
}

int tft_rm_on_mem_stats(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct rm *rm = ctx;
	struct rm_mem_stats m;
	int r;

	memset(&m, 0, sizeof(m));
	tft_json_write_clear(&rm->j_ids);
	tft_json_write_clear(&rm->j_ids2);
	r = tft_pb_wire_decode_sub(&v->sub, &tft_rm_mem_stats_msg, &m, ctx);
	if (r)
		return r;
	json_mem_stats(rm, &m);
	return 0;
}

/* "key": after a ',' unless the buffer is empty or was just opened (k: a string literal). */
#define raw_key(b, k)                                                                           \
	do {                                                                                    \
		tft_json_write_raw_sep(b);                                                      \
		tft_json_write_raw((b), "\"" k "\":", sizeof("\"" k "\":") - 1);                  \
	} while (0)

/* One id list as "key":[...] (k: a string literal); nothing when empty. */
#define raw_ids(b, k, ids)                                                                      \
	do {                                                                                    \
		size_t n_;                                                                      \
		const char *s_ = tft_json_write_data((ids), &n_);                               \
		if (n_) {                                                                       \
			raw_key((b), k);                                                        \
			tft_json_write_raw_char((b), '[');                                      \
			tft_json_write_raw((b), s_, n_);                                        \
			tft_json_write_raw_char((b), ']');                                      \
		}                                                                               \
	} while (0)

/* The MemoryStats, into j_memstats (its id lists are in j_ids / j_ids2). */
static void json_mem_stats(struct rm *rm, const struct rm_mem_stats *m)
{
	struct tft_json_writer *b = &rm->j_memstats;

	tft_json_write_clear(b);
	tft_json_write_raw_char(b, '{');
	if (m->has & (1u << 0)) {
		raw_key(b, "temp_memory_size");
		tft_json_write_raw_int(b, m->temp_memory_size);
	}
	if (m->has & (1u << 1)) {
		raw_key(b, "device_temp_memory_size");
		tft_json_write_raw_int(b, m->device_temp_memory_size);
	}
	if (m->has & (1u << 2)) {
		raw_key(b, "persistent_memory_size");
		tft_json_write_raw_int(b, m->persistent_memory_size);
	}
	if (m->has & (1u << 3)) {
		raw_key(b, "device_persistent_memory_size");
		tft_json_write_raw_int(b, m->device_persistent_memory_size);
	}
	raw_ids(b, "persistent_tensor_alloc_ids", &rm->j_ids);
	raw_ids(b, "device_persistent_tensor_alloc_ids", &rm->j_ids2);
	tft_json_write_raw_char(b, '}');
}
