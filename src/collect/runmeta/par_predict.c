/* SPDX-License-Identifier: MIT */
/*
 * The parallel import's first walk: which tracks each device's nodes use
 * (main, comm, which first), told from the nodes' names and labels by the
 * emit's own rule (tft_rm_node_op), so that the tracks can be registered
 * in the serial import's order before the workers' lanes open.
 */
#include <stdlib.h>
#include <string.h>

#include "collect/runmeta/comm_word.h"
#include "collect/runmeta/par_int.h"

/*
 * Whether one binary NodeExecStats goes to its device's comm track: its
 * last node_name and timeline_label (what both node decoders keep) through
 * tft_rm_node_op(). -1 when the walk cannot read it (the decoders would refuse it
 * or take a path this does not follow): the prediction is then unsure.
 */
static int predict_node(struct rm_worker *wk, int gputrace, const uint8_t *p, const uint8_t *end)
{
	struct tft_pb_bytes name = {NULL, 0}, label = {NULL, 0}, b;
	struct rm_pmemo *m;
	struct tft_tf_label lb;
	struct tft_tf_str nm, op = {NULL, 0}, ann = {NULL, 0};
	uint64_t h;

	while (p < end) {
		uint64_t key, v;

		if (fp_varint(&p, end, &key))
			return -1;
		switch (key & 7) {
		case TFT_PB_WT_VARINT:
			if (fp_varint(&p, end, &v))
				return -1;
			break;
		case TFT_PB_WT_I64:
			if (end - p < 8)
				return -1;
			p += 8;
			break;
		case TFT_PB_WT_I32:
			if (end - p < 4)
				return -1;
			p += 4;
			break;
		case TFT_PB_WT_LEN:
			if (fp_bytes(&p, end, &b))
				return -1;
			if (key == (1 << 3 | TFT_PB_WT_LEN))
				name = b;
			else if (key == (8 << 3 | TFT_PB_WT_LEN))
				label = b;
			break;
		default:
			return -1; /* (groups) */
		}
	}
	if (!tft_rm_comm_word(name.p, name.len) && !tft_rm_comm_word(label.p, label.len))
		return 0;
	h = tft_hash_fast(label.p, label.len, (uint64_t)gputrace);
	h ^= tft_hash_fast(name.p, name.len, 0) * 0x9e3779b97f4a7c15ULL;
	if (!wk->memo) {
		wk->memo = calloc(PRED_SLOTS, sizeof(*wk->memo));
		if (!wk->memo)
			return -1;
	}
	m = &wk->memo[h & (PRED_SLOTS - 1)];
	if (m->used && m->hash == h && m->gputrace == gputrace && m->name_len == name.len &&
	    m->label_len == label.len && (!name.len || memcmp(m->name, name.p, name.len) == 0) &&
	    (!label.len || memcmp(m->label, label.p, label.len) == 0))
		return m->comm;
	nm.p = (const char *)name.p;
	nm.len = name.len;
	tft_tf_names_parse_label((const char *)label.p, label.len, &lb);
	m->used = 1;
	m->hash = h;
	m->gputrace = (uint8_t)gputrace;
	m->name = name.p;
	m->name_len = (uint32_t)name.len;
	m->label = label.p;
	m->label_len = (uint32_t)label.len;
	m->comm = (uint8_t)tft_rm_node_op(gputrace, nm, &lb, &op, &ann);
	return m->comm;
}

/*
 * The tracks device k's nodes use (PT_*), as tft_rm_dev_stats() and tft_rm_emit_node()
 * create them: main and/or comm, comm first or not; a device without nodes
 * keeps an empty main track. -1 when unsure.
 */
int tft_rm_predict_tracks(struct rm_worker *wk, uint32_t k)
{
	const struct rm_dinfo *di = &wk->par->rm->dinfo[k];
	const uint8_t *p = di->p, *end = di->p + di->len;
	struct tft_tf_device td;
	struct tft_pb_bytes nm = di->device;
	int seen = 0, gputrace;

	if (!di->nodes)
		return PT_MAIN;
	if (!nm.len) { /* tft_rm_get_device()'s name for it */
		nm.p = (const uint8_t *)"unknown device";
		nm.len = 14;
	}
	if (!tft_rm_comm_word(di->p, di->len))
		return PT_MAIN;
	tft_tf_names_parse_device((const char *)nm.p, nm.len, &td);
	gputrace = (td.flags & (TFT_TF_DEV_STREAM | TFT_TF_DEV_MEMCPY)) != 0;
	while (p < end) {
		struct tft_pb_bytes b;
		uint64_t key, v;
		int c;

		/* (the pre-pass checked the shape: varints and length-delimited fields) */
		if (fp_varint(&p, end, &key))
			return -1;
		if ((key & 7) == TFT_PB_WT_VARINT) {
			if (fp_varint(&p, end, &v))
				return -1;
			continue;
		}
		if ((key & 7) != TFT_PB_WT_LEN || fp_bytes(&p, end, &b))
			return -1;
		if (key != (2 << 3 | TFT_PB_WT_LEN))
			continue;
		c = predict_node(wk, gputrace, b.p, b.p + b.len);
		if (c < 0)
			return -1;
		if (!seen)
			seen = c ? PT_COMM | PT_COMM_FIRST : PT_MAIN;
		else
			seen |= c ? PT_COMM : PT_MAIN;
		if ((seen & (PT_MAIN | PT_COMM)) == (PT_MAIN | PT_COMM))
			break; /* both seen: the rest cannot change it */
	}
	return seen;
}
