/* SPDX-License-Identifier: MIT */
/*
 * Processes, devices and tracks of a RunMetadata input: a process per TF
 * worker (job, replica, task), a device's compute or stream track and its
 * comm track, created on first use. An input that starts after an earlier
 * input's process of the same name ended continues it (that worker's next
 * steps), tracks and all.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/pb_text.h"
#include "collect/ingest_runmeta.h"
#include "collect/runmeta/rm_int.h"
#include "core/grow.h"

#define F TFT_PB_FIELD
#define H TFT_PB_HOOK

/*
 * The earliest node start of a RunMetadata/StepStats: the importer's decoder
 * over only the fields that say it (unknown fields are skipped), with the
 * importer's rule (all_start_nanos, else all_start_micros, else 0: a node
 * without a start field counts at time 0).
 */
struct ms_node {
	uint64_t has;
	int64_t us, ns;
};

static const struct tft_pb_field ms_node_fields[] = {
	F(2, TFT_PB_INT64, 0, struct ms_node, us, "all_start_micros", NULL, NULL),
	F(13, TFT_PB_INT64, 0, struct ms_node, ns, "all_start_nanos", NULL, NULL),
};
static const struct tft_pb_msg ms_node_msg = {"NodeExecStats", ms_node_fields, 2,
					      offsetof(struct ms_node, has)};

static int ms_on_node(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	int64_t *min = ctx, t;
	struct ms_node n = {0};
	int r = tft_pb_wire_decode_sub(&v->sub, &ms_node_msg, &n, ctx);

	(void)msg;
	(void)f;
	if (r)
		return r;
	t = (n.has & 2) ? n.ns : us_to_ns(n.us); /* the importer's rule */
	if (t < *min)
		*min = t;
	return 0;
}

/* A sub-message of the walk: decoded with the table its field names (aux). */
static int ms_on_sub(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	(void)msg;
	return tft_pb_wire_decode_sub(&v->sub, f->aux, NULL, ctx);
}

static const struct tft_pb_field ms_dev_fields[] = {
	H(2, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "node_stats", ms_on_node, NULL),
};
static const struct tft_pb_msg ms_dev_msg = {"DeviceStepStats", ms_dev_fields, 1, TFT_PB_NOOFF};
static const struct tft_pb_field ms_ss_fields[] = {
	H(1, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "dev_stats", ms_on_sub, &ms_dev_msg),
};
static const struct tft_pb_msg ms_ss_msg = {"StepStats", ms_ss_fields, 1, TFT_PB_NOOFF};
static const struct tft_pb_field ms_rm_fields[] = {
	H(1, TFT_PB_MESSAGE, 0, "step_stats", ms_on_sub, &ms_ss_msg),
};
static const struct tft_pb_msg ms_rm_msg = {"RunMetadata", ms_rm_fields, 1, TFT_PB_NOOFF};

/*
 * This input's earliest node start: INT64_MAX without nodes, INT64_MIN if it
 * does not decode (the import will say why). Computed once.
 */
static int64_t input_start(struct rm *rm)
{
	const struct tft_pb_msg *m = rm->stepstats ? &ms_ss_msg : &ms_rm_msg;
	struct tft_pb_dec dec;
	struct tft_error err;
	int64_t min = INT64_MAX;
	int r;

	if (rm->start_known)
		return rm->start;
	rm->start_known = 1;
	tft_error_clear(&err);
	r = tft_pb_dec_init(&dec, rm->text, rm->input, rm->input_len, &err);
	if (!r)
		r = tft_pb_wire_decode(&dec, m, NULL, &min); /* (text too: through the decoder's text hook) */
	tft_pb_text_fini(&dec);
	rm->start = r ? INT64_MIN : min;
	return rm->start;
}

int64_t tft_runmeta_start(const uint8_t *data, size_t len, int format)
{
	struct rm rm;

	memset(&rm, 0, sizeof(rm));
	rm.input = data;
	rm.input_len = len;
	rm.text = format == TFT_PB_FMT_RUNMETA_TEXT || format == TFT_PB_FMT_STEPSTATS_TEXT;
	rm.stepstats = format == TFT_PB_FMT_STEPSTATS || format == TFT_PB_FMT_STEPSTATS_TEXT;
	return input_start(&rm);
}

/*
 * The latest event end of each process (INT64_MIN: no events), in one pass
 * over the tracks; NULL when out of memory.
 */
static int64_t *process_ends(struct rm *rm)
{
	uint32_t np = tft_writer_process_count(rm->w), nt = tft_writer_track_count(rm->w);
	int64_t *end = malloc((size_t)(np ? np : 1) * sizeof(*end));

	if (!end)
		return NULL;
	for (uint32_t i = 0; i < np; i++)
		end[i] = INT64_MIN;
	for (uint32_t i = 0; i < nt; i++) {
		uint32_t p = tft_writer_track_process(rm->w, i);
		int64_t e = tft_writer_track_end(rm->w, i);

		if (p < np && e > end[p])
			end[p] = e;
	}
	return end;
}

/*
 * A process named pname that an earlier input made and this input continues
 * (that worker's next steps: a tracing session pickle, one RunMetadata per
 * step), else TFT_NONE. This input must start after every event of it, so
 * that its tracks take the new events after their own; inputs that overlap
 * it (one RunMetadata per rank, all named /job:localhost/replica:0/task:0;
 * the same file twice) get a process of their own. Of several candidates,
 * the one whose events end latest.
 */
static uint32_t continued_process(struct rm *rm, const char *pname)
{
	uint32_t n = tft_writer_process_count(rm->w), best = TFT_NONE;
	int64_t best_end = INT64_MIN, start = INT64_MIN, *ends = NULL;
	int looked = 0;

	for (uint32_t i = 0; i < n; i++) {
		struct tft_process *p = tft_writer_process(rm->w, i);
		const char *s = p ? tft_writer_str(rm->w, p->name, NULL) : NULL;
		int64_t end;

		if (!s || strcmp(s, pname) != 0 || p->host != 0 || p->id >= n)
			continue;
		if (!looked) {
			start = input_start(rm);
			ends = process_ends(rm);
			looked = 1;
			if (!ends)
				break; /* out of memory: a process of its own */
		}
		end = ends[p->id];
		if (start != INT64_MIN && (end == INT64_MIN || start > end) &&
		    (best == TFT_NONE || end > best_end)) {
			best = p->id;
			best_end = end;
		}
	}
	free(ends);
	return best;
}

/* A process of this input named pname, or one of an earlier input it continues (*cont). */
static uint32_t find_process(struct rm *rm, const char *pname, int *cont)
{
	uint32_t id;

	*cont = 0;
	for (uint32_t i = 0; i < rm->nprocs; i++)
		if (strcmp(rm->procs[i].name, pname) == 0) {
			*cont = rm->procs[i].continued;
			return rm->procs[i].id;
		}
	id = continued_process(rm, pname);
	*cont = id != TFT_NONE;
	return id;
}

/*
 * A track of an earlier input in the device's (continued) process with the
 * same kind, name and tid that still takes events, else TFT_NONE.
 */
static uint32_t continued_track(struct rm *rm, const struct rm_dev *dev, uint32_t kind, uint32_t name,
				int64_t tid)
{
	uint32_t n = tft_writer_track_count(rm->w);

	if (!dev->continued)
		return TFT_NONE;
	for (uint32_t i = 0; i < n; i++) {
		const struct tft_track *t;

		if (tft_writer_track_process(rm->w, i) != dev->process)
			continue; /* (no wait for the store workers: the kind is read only here) */
		t = tft_writer_track(rm->w, i);
		if (t && t->kind == kind && t->name == name && t->tid == tid &&
		    tft_writer_track_appendable(rm->w, i))
			return i;
	}
	return TFT_NONE;
}

struct rm_dev *tft_rm_get_device(struct rm *rm, const uint8_t *name, size_t len)
{
	struct tft_tf_device td;
	struct tft_process proc;
	char pname[160];
	uint32_t name_id, pid;
	struct rm_dev *dev;
	int cont;

	if (len == 0) {
		name = (const uint8_t *)"unknown device";
		len = strlen((const char *)name);
	}
	name_id = intern(rm, name, len);
	if (name_id == UINT32_MAX)
		return NULL;
	for (uint32_t i = 0; i < rm->ndevs; i++)
		if (rm->devs[i].name == name_id)
			return &rm->devs[i];
	if (tft_grow((void **)&rm->devs, &rm->cdevs, rm->ndevs + 1, sizeof(*rm->devs)))
		return NULL;
	dev = &rm->devs[rm->ndevs];
	memset(dev, 0, sizeof(*dev));
	tft_tf_names_parse_device((const char *)name, len, &td);
	tft_tf_names_process(&td, pname, sizeof(pname));
	tft_tf_names_canon_device(&td, dev->canon, sizeof(dev->canon));
	if (!dev->canon[0])
		snprintf(dev->canon, sizeof(dev->canon), "%.*s", (int)(len > 150 ? 150 : len),
			 (const char *)name);
	pid = find_process(rm, pname, &cont);
	if (pid == TFT_NONE) {
		memset(&proc, 0, sizeof(proc));
		proc.name = intern_c(rm, pname);
		proc.pid = td.task >= 0 ? td.task : 0;
		proc.rank = (td.job.len == 6 && memcmp(td.job.p, "worker", 6) == 0 && td.task >= 0)
				    ? (int32_t)td.task
				    : -1;
		proc.sort_index = (int32_t)rm->nprocs;
		pid = tft_writer_add_process(rm->w, &proc);
		if (pid == TFT_NONE)
			return NULL;
	}
	if (tft_grow((void **)&rm->procs, &rm->cprocs, rm->nprocs + 1, sizeof(*rm->procs)))
		return NULL;
	{
		int known = 0;

		for (uint32_t i = 0; i < rm->nprocs; i++)
			known |= rm->procs[i].id == pid;
		if (!known) {
			snprintf(rm->procs[rm->nprocs].name, sizeof(rm->procs[0].name), "%s", pname);
			rm->procs[rm->nprocs].continued = cont;
			rm->procs[rm->nprocs++].id = pid;
		}
	}
	dev->gputrace = (td.flags & (TFT_TF_DEV_STREAM | TFT_TF_DEV_MEMCPY)) != 0;
	dev->tl_gputrace = memmem(name, len, "/stream:", 8) != NULL || memmem(name, len, "/memcpy", 7) != NULL;
	dev->tid = td.stream >= 0 ? td.stream : (td.index >= 0 ? td.index : 0);
	if (td.flags & TFT_TF_DEV_STREAM_ALL)
		dev->tid = -1;
	dev->name = name_id;
	dev->process = pid;
	dev->continued = cont;
	dev->track = TFT_NONE;
	dev->comm_track = TFT_NONE;
	rm->ndevs++;
	return dev;
}

/* The device's compute (or stream) track, created on first use. */
uint32_t tft_rm_main_track(struct rm *rm, struct rm_dev *dev)
{
	struct tft_track tr;

	if (dev->track != TFT_NONE || rm->lane)
		return dev->track; /* (a worker's tracks are registered before the lanes open) */
	memset(&tr, 0, sizeof(tr));
	tr.process = dev->process;
	tr.name = dev->name;
	tr.kind = dev->gputrace ? TFT_TRACK_GPU_STREAM : TFT_TRACK_DEVICE;
	tr.flags = TFT_TRACKF_CONCURRENT; /* an executor's inter-op threads, a stream's kernels */
	tr.tid = dev->tid;
	tr.sort_index = (int32_t)((dev - rm->devs) * 2);
	dev->track = continued_track(rm, dev, tr.kind, tr.name, tr.tid);
	if (dev->track == TFT_NONE)
		dev->track = tft_writer_add_track(rm->w, &tr);
	return dev->track;
}

uint32_t tft_rm_comm_track(struct rm *rm, struct rm_dev *dev)
{
	struct tft_track tr;
	char buf[512];
	size_t n = 0;
	const char *s;

	if (dev->comm_track != TFT_NONE || rm->lane)
		return dev->comm_track;
	s = tft_writer_str(rm->w, dev->name, &n);
	snprintf(buf, sizeof(buf), "%.*s (comm)", (int)(n > 480 ? 480 : n), s ? s : "");
	memset(&tr, 0, sizeof(tr));
	tr.process = dev->process;
	tr.kind = TFT_TRACK_COMM;
	tr.flags = TFT_TRACKF_CONCURRENT; /* sends and receives overlap */
	tr.name = intern_c(rm, buf);
	tr.tid = -1;
	tr.sort_index = (int32_t)((dev - rm->devs) * 2 + 1);
	dev->comm_track = continued_track(rm, dev, tr.kind, tr.name, tr.tid);
	if (dev->comm_track == TFT_NONE)
		dev->comm_track = tft_writer_add_track(rm->w, &tr);
	return dev->comm_track;
}

/*
 * Would a device of this input (rm->dinfo) continue an earlier input's
 * process? The parallel import then stays off: its lanes take only tracks
 * without events.
 */
int tft_rm_continues_any(struct rm *rm)
{
	uint32_t np = tft_writer_process_count(rm->w);

	for (uint32_t d = 0; d < rm->ndinfo && np; d++) {
		struct tft_tf_device td;
		char pname[160];
		const struct tft_pb_bytes *nm = &rm->dinfo[d].device;

		tft_tf_names_parse_device(nm->len ? (const char *)nm->p : "unknown device",
					  nm->len ? nm->len : 14, &td);
		tft_tf_names_process(&td, pname, sizeof(pname));
		if (continued_process(rm, pname) != TFT_NONE)
			return 1;
	}
	return 0;
}
