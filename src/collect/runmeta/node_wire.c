/* SPDX-License-Identifier: MIT */
/*
 * The direct reader of binary NodeExecStats (the per-node cost of the
 * import), and the memo of its sub-messages' JSON args.
 *
 * The table decoder (codec/pb_wire.c) pays per field for the table lookup,
 * the error path bookkeeping and a handler call per sub-message. The
 * functions here decode a binary NodeExecStats and its sub-messages in one
 * pass with the same results: the same structs (last value wins, in-place
 * sub-messages merge, presence bits), the same JSON via node_json.c's
 * writers. They only handle well-formed input with known fields and wire
 * types; on anything else (a malformed varint or length, an unknown field,
 * an unexpected wire type) they return -1 and the caller decodes the node
 * again with the table decoder, which reports errors exactly as before.
 */
#include <stdlib.h>
#include <string.h>

#include "collect/runmeta/rm_int.h"

static int fast_alloc_desc(const uint8_t *p, const uint8_t *end, struct rm_alloc_desc *a)
{
	while (p < end) {
		uint64_t key, v = 0;

		if (fp_varint(&p, end, &key))
			return -1;
		if ((key & 7) == TFT_PB_WT_VARINT && fp_varint(&p, end, &v))
			return -1;
		switch (key) {
		case 1 << 3:
			a->requested_bytes = (int64_t)v;
			a->has |= 1u << 0;
			break;
		case 2 << 3:
			a->allocated_bytes = (int64_t)v;
			a->has |= 1u << 1;
			break;
		case 3 << 3 | TFT_PB_WT_LEN:
			if (fp_bytes(&p, end, &a->allocator_name))
				return -1;
			a->has |= 1u << 2;
			break;
		case 4 << 3:
			a->allocation_id = (int64_t)v;
			a->has |= 1u << 3;
			break;
		case 5 << 3:
			a->has_single_reference = v != 0;
			a->has |= 1u << 4;
			break;
		case 6 << 3:
			a->ptr = v;
			a->has |= 1u << 5;
			break;
		default:
			return -1;
		}
	}
	return 0;
}

static int fast_shape(struct rm *rm, const uint8_t *p, const uint8_t *end, struct tft_tf_shape *sh)
{
	while (p < end) {
		uint64_t key, v;
		struct tft_pb_bytes b;

		if (fp_varint(&p, end, &key))
			return -1;
		if (key == (2 << 3 | TFT_PB_WT_LEN)) {
			struct tft_tf_dim dim;
			const uint8_t *q, *qe;

			if (fp_bytes(&p, end, &b))
				return -1;
			memset(&dim, 0, sizeof(dim));
			for (q = b.p, qe = b.p + b.len; q < qe;) {
				if (fp_varint(&q, qe, &key))
					return -1;
				if (key == (1 << 3)) {
					if (fp_varint(&q, qe, &v))
						return -1;
					dim.size = (int64_t)v;
				} else if (key == (2 << 3 | TFT_PB_WT_LEN)) {
					if (fp_bytes(&q, qe, &dim.name))
						return -1;
				} else {
					return -1;
				}
			}
			tft_rm_json_dim(rm, &dim);
			sh->has |= 1u << 0;
		} else if (key == (3 << 3)) {
			if (fp_varint(&p, end, &v))
				return -1;
			sh->unknown_rank = v != 0;
			sh->has |= 1u << 1;
		} else {
			return -1;
		}
	}
	return 0;
}

static int fast_output(struct rm *rm, const uint8_t *p, const uint8_t *end)
{
	struct rm_output o;

	zero_small(&o, sizeof(o));
	tft_json_write_clear(&rm->j_dims);
	tft_json_write_clear(&rm->j_dnames);
	rm->dim_named = 0;
	while (p < end) {
		uint64_t key, v;
		struct tft_pb_bytes b;

		if (fp_varint(&p, end, &key))
			return -1;
		if (key == (1 << 3)) {
			if (fp_varint(&p, end, &v))
				return -1;
			o.slot = (int32_t)(uint32_t)v;
			o.has |= 1u << 0;
		} else if (key == (3 << 3 | TFT_PB_WT_LEN)) {
			const uint8_t *q, *qe;

			if (fp_bytes(&p, end, &b))
				return -1;
			for (q = b.p, qe = b.p + b.len; q < qe;) {
				struct tft_pb_bytes c;

				if (fp_varint(&q, qe, &key))
					return -1;
				if (key == (1 << 3)) {
					if (fp_varint(&q, qe, &v))
						return -1;
					o.td.dtype = (int32_t)(uint32_t)v;
					o.td.has |= 1u << 0;
				} else if (key == (2 << 3 | TFT_PB_WT_LEN)) {
					if (fp_bytes(&q, qe, &c) ||
					    fast_shape(rm, c.p, c.p + c.len, &o.td.shape))
						return -1;
					o.td.has |= 1u << 1;
				} else if (key == (4 << 3 | TFT_PB_WT_LEN)) {
					if (fp_bytes(&q, qe, &c) ||
					    fast_alloc_desc(c.p, c.p + c.len, &o.td.alloc))
						return -1;
					o.td.has |= 1u << 2;
				} else {
					return -1;
				}
			}
			o.has |= 1u << 1;
		} else {
			return -1;
		}
	}
	tft_rm_json_output(rm, &o);
	return 0;
}

static int fast_memory(struct rm *rm, const uint8_t *p, const uint8_t *end)
{
	struct rm_mem_used m;

	memset(&m, 0, sizeof(m));
	tft_json_write_clear(&rm->j_tmp);
	while (p < end) {
		uint64_t key, v = 0;
		struct tft_pb_bytes b;

		if (fp_varint(&p, end, &key))
			return -1;
		if ((key & 7) == TFT_PB_WT_VARINT && fp_varint(&p, end, &v))
			return -1;
		switch (key) {
		case 1 << 3 | TFT_PB_WT_LEN:
			if (fp_bytes(&p, end, &m.allocator_name))
				return -1;
			m.has |= 1u << 0;
			break;
		case 2 << 3:
			m.total_bytes = (int64_t)v;
			m.has |= 1u << 1;
			break;
		case 3 << 3:
			m.peak_bytes = (int64_t)v;
			m.has |= 1u << 2;
			break;
		case 4 << 3:
			m.live_bytes = (int64_t)v;
			m.has |= 1u << 3;
			break;
		case 5 << 3:
			m.allocator_bytes_in_use = (int64_t)v;
			m.has |= 1u << 4;
			break;
		case 6 << 3 | TFT_PB_WT_LEN: {
			struct rm_alloc_rec a;
			const uint8_t *q, *qe;

			if (fp_bytes(&p, end, &b))
				return -1;
			memset(&a, 0, sizeof(a));
			for (q = b.p, qe = b.p + b.len; q < qe;) {
				if (fp_varint(&q, qe, &key) || fp_varint(&q, qe, &v))
					return -1;
				if (key == (1 << 3))
					a.alloc_micros = (int64_t)v;
				else if (key == (2 << 3))
					a.alloc_bytes = (int64_t)v;
				else
					return -1;
			}
			tft_rm_json_alloc_rec(&rm->j_tmp, &a);
			m.has |= 1u << 5;
			break;
		}
		default:
			return -1;
		}
	}
	tft_rm_json_memory(rm, &m);
	return 0;
}

static int fast_mem_stats(struct rm *rm, const uint8_t *p, const uint8_t *end)
{
	struct rm_mem_stats m;

	memset(&m, 0, sizeof(m));
	tft_json_write_clear(&rm->j_ids);
	tft_json_write_clear(&rm->j_ids2);
	while (p < end) {
		uint64_t key, v = 0;
		struct tft_pb_bytes b;

		if (fp_varint(&p, end, &key))
			return -1;
		if ((key & 7) == TFT_PB_WT_VARINT && fp_varint(&p, end, &v))
			return -1;
		switch (key) {
		case 1 << 3:
			m.temp_memory_size = (int64_t)v;
			m.has |= 1u << 0;
			break;
		case 2 << 3:
			m.device_temp_memory_size = (int64_t)v;
			m.has |= 1u << 1;
			break;
		case 3 << 3:
			m.persistent_memory_size = (int64_t)v;
			m.has |= 1u << 2;
			break;
		case 4 << 3:
			m.device_persistent_memory_size = (int64_t)v;
			m.has |= 1u << 3;
			break;
		case 5 << 3:
		case 6 << 3:
			tft_rm_json_alloc_id(key == (5 << 3) ? &rm->j_ids : &rm->j_ids2, (int64_t)v);
			m.has |= key == (5 << 3) ? 1u << 4 : 1u << 5;
			break;
		case 5 << 3 | TFT_PB_WT_LEN:
		case 6 << 3 | TFT_PB_WT_LEN: { /* packed */
			struct tft_json_writer *ids = key >> 3 == 5 ? &rm->j_ids : &rm->j_ids2;
			const uint8_t *q, *qe;

			if (fp_bytes(&p, end, &b))
				return -1;
			for (q = b.p, qe = b.p + b.len; q < qe;) {
				if (fp_varint(&q, qe, &v))
					return -1;
				tft_rm_json_alloc_id(ids, (int64_t)v);
			}
			m.has |= key >> 3 == 5 ? 1u << 4 : 1u << 5;
			break;
		}
		default:
			return -1;
		}
	}
	tft_rm_json_mem_stats(rm, &m);
	return 0;
}

/* One field of JSON kind k (payload b) into the kind's buffer, as the table decoder's handler. */
static int fast_json_field(struct rm *rm, int k, const struct tft_pb_bytes *b)
{
	struct rm_alloc_desc a;

	switch (k) {
	case JM_MEMORY:
		return fast_memory(rm, b->p, b->p + b->len);
	case JM_OUTPUT:
		return fast_output(rm, b->p, b->p + b->len);
	case JM_REF:
		memset(&a, 0, sizeof(a));
		if (fast_alloc_desc(b->p, b->p + b->len, &a))
			return -1;
		tft_rm_json_ref_tensor(&rm->j_ref, &a);
		return 0;
	default:
		return fast_mem_stats(rm, b->p, b->p + b->len);
	}
}

/* A run of fields of kind k at p[0..end) (tft_rm_fast_node read them once already). */
static int fast_json_run(struct rm *rm, int k, const uint8_t *p, const uint8_t *end)
{
	while (p < end) {
		uint64_t key;
		struct tft_pb_bytes b;

		if (fp_varint(&p, end, &key) || fp_bytes(&p, end, &b) || fast_json_field(rm, k, &b))
			return -1;
	}
	return 0;
}

/*
 * A field of kind k, its key at kp and its payload b, ending at end. The
 * kind's first run of fields is only noted (fast_json_memo() takes it at
 * the node's end); a second run, rare, has the kind decoded as met: the
 * memo keys on one run of bytes.
 */
static int fast_json_note(struct rm *rm, int k, const uint8_t *kp, const uint8_t *end,
			  const struct tft_pb_bytes *b)
{
	struct rm_jrun *r = &rm->jrun[k];

	if (r->state == JR_NONE) {
		r->lo = kp;
		r->hi = end;
		r->state = JR_RUN;
		return 0;
	}
	if (r->state == JR_RUN) {
		if (r->hi == kp) {
			r->hi = end;
			return 0;
		}
		r->state = JR_EAGER;
		if (fast_json_run(rm, k, r->lo, r->hi))
			return -1;
	}
	return fast_json_field(rm, k, b);
}

/* The noted run of kind k: its string id from the memo, or decoded (and its memo entry chosen). */
static int fast_json_memo(struct rm *rm, int k)
{
	struct rm_jrun *r = &rm->jrun[k];
	size_t len = (size_t)(r->hi - r->lo);
	uint64_t h = tft_hash_fast(r->lo, len, 0);
	struct rm_jmemo *e;

	if (!rm->jmemo)
		rm->jmemo = calloc(JMEMO_SLOTS, sizeof(*rm->jmemo)); /* (none: no memo) */
	r->slot = NULL;
	r->id = UINT32_MAX;
	if (rm->jmemo && len <= UINT32_MAX) {
		e = &rm->jmemo[h & (JMEMO_SLOTS - 2)];
		for (int w = 0; w < 2; w++) {
			/* (the key's first byte is the field's tag: kinds never match each other) */
			if (e[w].hash == h && e[w].len == len && e[w].key &&
			    memcmp(e[w].key, r->lo, len) == 0) {
				r->state = JR_HIT;
				r->id = e[w].id;
				return 0;
			}
		}
		r->slot = e;
	}
	r->state = JR_MISS;
	r->hash = h;
	return fast_json_run(rm, k, r->lo, r->hi);
}

/* A missed run's JSON was interned as r->id: remember it (the set's newer way). */
void tft_rm_json_memo_store(struct rm_jrun *r)
{
	struct rm_jmemo *e = r->slot;

	if (!e || r->id == UINT32_MAX)
		return;
	e[1] = e[0];
	e[0] = (struct rm_jmemo){r->hash, r->lo, (uint32_t)(r->hi - r->lo), r->id};
}

/* Decode one binary NodeExecStats into *n (zeroed) and the per-node JSON buffers. */
int tft_rm_fast_node(struct rm *rm, const uint8_t *p, const uint8_t *end, struct rm_node *n)
{
	while (p < end) {
		const uint8_t *kp = p;
		uint64_t key, v = 0;
		struct tft_pb_bytes b;
		int64_t *slot;
		int fi;

		if (fp_varint(&p, end, &key))
			return -1;
		switch (key) {
		case 1 << 3 | TFT_PB_WT_LEN:
			if (fp_bytes(&p, end, &n->node_name))
				return -1;
			n->has |= 1ull << NF_NAME;
			continue;
		case 8 << 3 | TFT_PB_WT_LEN:
			if (fp_bytes(&p, end, &n->timeline_label))
				return -1;
			n->has |= 1ull << NF_LABEL;
			continue;
		case 6 << 3 | TFT_PB_WT_LEN:
			if (fp_bytes(&p, end, &b) || fast_json_note(rm, JM_MEMORY, kp, p, &b))
				return -1;
			n->has |= 1ull << NF_MEMORY;
			continue;
		case 7 << 3 | TFT_PB_WT_LEN:
			if (fp_bytes(&p, end, &b) || fast_json_note(rm, JM_OUTPUT, kp, p, &b))
				return -1;
			n->has |= 1ull << NF_OUTPUT;
			n->nout += n->nout < UINT32_MAX;
			continue;
		case 11 << 3 | TFT_PB_WT_LEN:
			if (fp_bytes(&p, end, &b) || fast_json_note(rm, JM_REF, kp, p, &b))
				return -1;
			n->has |= 1ull << NF_REF;
			continue;
		case 12 << 3 | TFT_PB_WT_LEN:
			if (fp_bytes(&p, end, &b) || fast_json_note(rm, JM_MEMSTATS, kp, p, &b))
				return -1;
			n->has |= 1ull << NF_MEMSTATS;
			continue;
		case 10 << 3:
			if (fp_varint(&p, end, &v))
				return -1;
			n->thread_id = (uint32_t)v;
			n->has |= 1ull << NF_THREAD;
			continue;
		case 2 << 3: slot = &n->all_start_micros; fi = NF_ALL_START_US; break;
		case 3 << 3: slot = &n->op_start_rel_micros; fi = NF_OP_START_US; break;
		case 4 << 3: slot = &n->op_end_rel_micros; fi = NF_OP_END_US; break;
		case 5 << 3: slot = &n->all_end_rel_micros; fi = NF_ALL_END_US; break;
		case 9 << 3: slot = &n->scheduled_micros; fi = NF_SCHED_US; break;
		case 13 << 3: slot = &n->all_start_nanos; fi = NF_ALL_START_NS; break;
		case 14 << 3: slot = &n->op_start_rel_nanos; fi = NF_OP_START_NS; break;
		case 15 << 3: slot = &n->op_end_rel_nanos; fi = NF_OP_END_NS; break;
		case 16 << 3: slot = &n->all_end_rel_nanos; fi = NF_ALL_END_NS; break;
		case 17 << 3: slot = &n->scheduled_nanos; fi = NF_SCHED_NS; break;
		default:
			return -1;
		}
		if (fp_varint(&p, end, &v))
			return -1;
		*slot = (int64_t)v;
		n->has |= 1ull << fi;
	}
	if (n->has & NF_NESTED) {
		for (int k = 0; k < JM_KINDS; k++)
			if (rm->jrun[k].state == JR_RUN && fast_json_memo(rm, k))
				return -1;
	}
	return 0;
}
