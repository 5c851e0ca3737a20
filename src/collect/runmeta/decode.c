/* SPDX-License-Identifier: MIT */
/*
 * The serial decode of a StepStats: each DeviceStepStats (its device and
 * thread names first, then its nodes) and each NodeExecStats, through the
 * table decoder (codec/pb_wire.c with schema.c's tables), which also reports
 * every error with its byte offset and message path.
 */
#include <stdlib.h>
#include <string.h>

#include "collect/runmeta/rm_int.h"
#include "core/grow.h"

/* Progress to the caller's callback (the parallel import counts its workers' together). */
void tft_rm_progress(struct rm *rm, uint64_t pos)
{
	if (rm->par) {
		tft_rm_par_progress(rm, pos);
		return;
	}
	if (!rm->opts || !rm->opts->progress || !tft_ingest_progress_due(&rm->last_progress, 0))
		return;
	rm->opts->progress(rm->opts->progress_ctx, pos, rm->input_len, rm->nodes);
}

static int node_fail(struct rm *rm, int r, const struct tft_pb_sub *s)
{
	return tft_pb_wire_fail(rm->dec, r, s->p - rm->dec->base, "%s",
				r == TFT_ENOMEM ? "out of memory" : "could not store the node");
}

static int decode_node(struct rm *rm, const struct tft_pb_sub *s)
{
	struct rm_node n;
	int r;

	node_begin(rm, &n);
	r = tft_pb_wire_decode_sub(s, &tft_rm_node_msg, &n, rm);
	if (r)
		return r;
	r = tft_rm_emit_node(rm, &n);
	rm->node_index++;
	if (r)
		return node_fail(rm, r, s);
	if ((rm->nodes & 1023) == 0)
		tft_rm_progress(rm, (uint64_t)(s->p - rm->dec->base));
	return 0;
}

int tft_rm_on_node_count(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct rm *rm = ctx;

	rm->dev_nodes++;
	return 0;
}

int tft_rm_on_node_stats(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct rm *rm = ctx;

	return decode_node(rm, &v->sub);
}

int tft_rm_on_thread_name(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct rm *rm = ctx;
	struct rm_map_entry e;
	int r;

	memset(&e, 0, sizeof(e));
	r = tft_pb_wire_decode_sub(&v->sub, &tft_rm_thread_name_msg, &e, ctx);
	if (r)
		return r;
	if (tft_grow((void **)&rm->threads, &rm->cthreads, rm->nthreads + 1, sizeof(*rm->threads)))
		return tft_pb_wire_fail(rm->dec, TFT_ENOMEM, -1, "out of memory");
	rm->threads[rm->nthreads].tid = (uint32_t)e.key;
	rm->threads[rm->nthreads].name = intern(rm, e.value.p, e.value.len);
	if (rm->threads[rm->nthreads].name == UINT32_MAX)
		return tft_pb_wire_fail(rm->dec, TFT_ENOMEM, -1, "out of memory");
	rm->nthreads++;
	return 0;
}

/*
 * The first walk of a binary DeviceStepStats for the common shape (a
 * device name and node_stats, no thread_names): the device and the node
 * count as the table decoder would give them. -1 on anything else (thread
 * names, other fields, malformed input): the table decoder then walks it.
 */
static int fast_devstats_scan(struct rm *rm, const struct tft_pb_sub *s, struct rm_devstats *ds)
{
	const uint8_t *p = s->p, *end = s->p + s->len;

	while (p < end) {
		struct tft_pb_bytes b;
		uint64_t key;

		if (fp_varint(&p, end, &key) || fp_bytes(&p, end, &b))
			return -1;
		if (key == (2 << 3 | TFT_PB_WT_LEN)) {
			rm->dev_nodes++;
		} else if (key == (1 << 3 | TFT_PB_WT_LEN)) {
			ds->device = b;
			ds->has |= 1u << 0;
		} else {
			return -1;
		}
	}
	return 0;
}

/* The pre-pass's record of this dev_stats, or NULL (text input, or not walked). */
static const struct rm_dinfo *take_dinfo(struct rm *rm, const struct tft_pb_sub *s)
{
	const struct rm_dinfo *di;

	if (rm->next_dinfo >= rm->ndinfo)
		return NULL;
	di = &rm->dinfo[rm->next_dinfo];
	if (di->p != s->p || di->len != s->len)
		return NULL;
	rm->next_dinfo++;
	return di;
}

int tft_rm_on_dev_stats(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct rm *rm = ctx;

	return tft_rm_dev_stats(rm, v, rm->dec->decode_text_sub ? NULL : take_dinfo(rm, &v->sub));
}

/* Device dev is the next dev_stats entry's (empty: it has no nodes); sets cur_entry. */
int tft_rm_note_entry(struct rm *rm, struct rm_dev *dev, int empty)
{
	rm->cur_entry = -1;
	if (tft_grow((void **)&rm->entries, &rm->centries, rm->nentries + 1, sizeof(*rm->entries)))
		return TFT_ENOMEM;
	if (dev->entries++) {
		rm->cur_entry = (int64_t)rm->nentries;
		rm->entries_odd = 1;
	}
	/* an earlier input's tracks (continued) do not sort in this one's entry order: note it */
	rm->entries_odd |= empty | dev->continued;
	rm->entries[rm->nentries++] = (uint32_t)(dev - rm->devs);
	return 0;
}

/* One DeviceStepStats; di: the pre-pass's record of it, or NULL. */
int tft_rm_dev_stats(struct rm *rm, const struct tft_pb_val *v, const struct rm_dinfo *di)
{
	struct rm_devstats ds;
	int r;

	memset(&ds, 0, sizeof(ds));
	rm->dev_nodes = 0;
	rm->nthreads = 0;
	rm->node_index = 0;
	if (di && di->simple) {
		/* what fast_devstats_scan() would find, known from the pre-pass */
		ds.device = di->device;
		rm->dev_nodes = di->nodes;
	} else if (rm->dec->decode_text_sub || (di && !di->simple) ||
		   fast_devstats_scan(rm, &v->sub, &ds)) {
		memset(&ds, 0, sizeof(ds));
		rm->dev_nodes = 0;
		r = tft_pb_wire_decode_sub(&v->sub, &tft_rm_devstats_msg, &ds, rm);
		if (r)
			return r;
	}
	/* (a worker's device was registered, with its tracks, before the lanes opened) */
	rm->cur = rm->job_dev ? rm->job_dev : tft_rm_get_device(rm, ds.device.p, ds.device.len);
	if (!rm->cur)
		return tft_pb_wire_fail(rm->dec, TFT_ENOMEM, v->offset, "could not register the device");
	if (!rm->job_dev && !rm->entries_par && tft_rm_note_entry(rm, rm->cur, !rm->dev_nodes))
		return tft_pb_wire_fail(rm->dec, TFT_ENOMEM, v->offset, "could not register the device");
	if (!rm->dev_nodes) {
		/* timeline.py gives a device without nodes a pid too: keep an empty track. */
		if (tft_rm_main_track(rm, rm->cur) == TFT_NONE)
			return tft_pb_wire_fail(rm->dec, TFT_ENOMEM, v->offset,
						"could not register the device");
		return 0;
	}
	r = tft_pb_wire_decode_sub(&v->sub, &tft_rm_devstats_nodes_msg, NULL, rm);
	if (!r) {
		r = tft_rm_flush_device(rm);
		if (r)
			r = tft_pb_wire_fail(rm->dec, r, v->offset, "could not store the device's nodes");
	}
	return r;
}

int tft_rm_on_step_stats(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct rm *rm = ctx;

	if (rm->try_par) {
		int r = tft_rm_par_stepstats(rm, &v->sub);

		if (r != RM_SERIAL)
			return r;
	}
	return tft_pb_wire_decode_sub(&v->sub, &tft_rm_stepstats_msg, NULL, ctx);
}
