/* SPDX-License-Identifier: MIT */
/*
 * A RunMetadata node -> its event: a slice on its device's compute/stream
 * track or comm track, every recorded field kept as an arg, the label's
 * parse (op, inputs, kernel, tensor, devices, ...) as args too, and the
 * send/recv/transfer endpoints that flows.c links. What a node's
 * (device, node_name, label) imply is memoised in templates (templates.c);
 * a hit gives byte for byte what the miss computes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/runmeta/rm_int.h"
#include "core/grow.h"

static void arg_int(struct rm *rm, uint32_t key, int64_t v)
{
	struct tft_arg *a;

	if (rm->nargs >= MAX_ARGS)
		return;
	a = &rm->args[rm->nargs++];
	a->key = key;
	a->type = TFT_ARG_INT;
	a->v.i = v;
}

static void arg_bool(struct rm *rm, uint32_t key, int v)
{
	arg_int(rm, key, v != 0);
	rm->args[rm->nargs - 1].type = TFT_ARG_BOOL;
}

static int arg_strn(struct rm *rm, uint32_t key, const void *s, size_t n, int type)
{
	uint32_t id;
	struct tft_arg *a;

	if (rm->nargs >= MAX_ARGS)
		return 0;
	id = intern(rm, s, n);
	if (id == UINT32_MAX)
		return TFT_ENOMEM;
	a = &rm->args[rm->nargs++];
	a->key = key;
	a->type = (uint32_t)type;
	a->v.str = id;
	return 0;
}

static int arg_tfstr(struct rm *rm, uint32_t key, struct tft_tf_str s)
{
	if (!s.len)
		return 0;
	return arg_strn(rm, key, s.p, s.len, TFT_ARG_STR);
}

/* Whether two device names are on one worker (job and task: one RunMetadata file's). */
static int same_worker(const char *a, const char *b)
{
	struct tft_tf_device da, db;
	char pa[160], pb[160];

	tft_tf_names_parse_device(a, strlen(a), &da);
	tft_tf_names_parse_device(b, strlen(b), &db);
	tft_tf_names_process(&da, pa, sizeof(pa));
	tft_tf_names_process(&db, pb, sizeof(pb));
	return strcmp(pa, pb) == 0;
}

/* Record one endpoint; *added (if not NULL) is the entry, or NULL when there is none. */
static int add_comm(struct rm *rm, int role, struct tft_tf_str tensor, const char *src,
		    const char *dst, uint32_t track, int64_t ts, int64_t end, const struct rm_comm **added)
{
	struct rm_comm *c;
	struct tft_json_writer *b = &rm->scratch;
	const char *key;
	size_t klen;

	if (added)
		*added = NULL;
	if (!tensor.len || !src[0] || !dst[0])
		return 0;
	if (tft_grow((void **)&rm->comm, &rm->ccomm, rm->ncomm + 1, sizeof(*rm->comm)))
		return TFT_ENOMEM;
	tft_json_write_clear(b);
	tft_json_write_raw(b, tensor.p, tensor.len);
	tft_json_write_raw_char(b, '\n');
	tft_json_write_raw(b, src, strlen(src));
	tft_json_write_raw_char(b, '\n');
	tft_json_write_raw(b, dst, strlen(dst));
	if (tft_json_write_failed(b))
		return TFT_ENOMEM;
	key = tft_json_write_data(b, &klen);
	c = &rm->comm[rm->ncomm];
	c->cross = !same_worker(src, dst);
	c->key = tft_hash_bytes(key, klen);
	c->ts = ts;
	c->end = end;
	c->track = track;
	c->role = (uint8_t)role;
	c->seq = rm->ncomm;
	c->tensor = intern(rm, tensor.p, tensor.len);
	rm->ncomm++;
	if (added)
		*added = c;
	return 0;
}


/* An endpoint whose key and tensor a template already knows. */
static int add_comm_known(struct rm *rm, const struct rm_tmpl *t, uint32_t track, int64_t ts,
			  int64_t end)
{
	struct rm_comm *c;

	if (tft_grow((void **)&rm->comm, &rm->ccomm, rm->ncomm + 1, sizeof(*rm->comm)))
		return TFT_ENOMEM;
	c = &rm->comm[rm->ncomm];
	c->key = t->comm_key;
	c->cross = t->comm_cross;
	c->ts = ts;
	c->end = end;
	c->track = track;
	c->role = t->role;
	c->seq = rm->ncomm;
	c->tensor = t->comm_tensor;
	rm->ncomm++;
	return 0;
}



static int str_is(struct tft_tf_str s, const char *lit)
{
	size_t n = strlen(lit);

	return s.len == n && memcmp(s.p, lit, n) == 0;
}

static void canon_of(struct tft_tf_str s, char *buf, size_t size)
{
	struct tft_tf_device td;

	buf[0] = '\0';
	if (!s.len)
		return;
	if (tft_tf_names_parse_device(s.p, s.len, &td) == 0)
		tft_tf_names_canon_device(&td, buf, size);
	if (!buf[0])
		snprintf(buf, size, "%.*s", (int)(s.len > 150 ? 150 : s.len), s.p);
}

/*
 * A node's op type (and, on stream devices, the node named by its
 * annotation) from its name and parsed label; returns whether it goes to
 * the comm track. *op and *ann_name are {NULL, 0} when absent. Also the
 * parallel import's track prediction (par_predict.c), so both agree.
 */
int tft_rm_node_op(int gputrace, struct tft_tf_str node_name, const struct tft_tf_label *lb,
		   struct tft_tf_str *op, struct tft_tf_str *ann_name)
{
	if (str_is(node_name, "RecvTensor")) {
		op->p = "RecvTensor";
		op->len = 10;
	} else if (lb->kind == TFT_TF_LABEL_OP || lb->kind == TFT_TF_LABEL_SEND ||
		   lb->kind == TFT_TF_LABEL_RECV) {
		*op = lb->op;
	} else if (gputrace) {
		struct tft_tf_str nm;

		if (lb->annotation.len)
			tft_tf_names_split_annotation(lb->annotation, ann_name, op);
		if (!op->len) {
			tft_tf_names_split_annotation(node_name, &nm, op);
			if (op->len)
				*ann_name = nm;
		}
	}
	return tft_tf_names_is_comm(node_name, *op);
}

/* The node's JSON arg in b (closed with ']' when close), interned, as arg_strn() would. */
static int json_arg_add(struct rm *rm, struct tft_json_writer *b, uint32_t key, int close)
{
	struct tft_arg *a;
	const char *s;
	size_t len;
	uint32_t id;

	if (close)
		tft_json_write_raw_char(b, ']');
	if (rm->nargs >= MAX_ARGS)
		return 0;
	if (tft_json_write_failed(b))
		return TFT_ENOMEM;
	s = tft_json_write_data(b, &len);
	id = intern(rm, s, len);
	if (id == UINT32_MAX)
		return TFT_ENOMEM;
	a = &rm->args[rm->nargs++];
	a->key = key;
	a->type = TFT_ARG_JSON;
	a->v.str = id;
	return 0;
}

/* (most nodes have none of the four: one test each, inline) */
static inline int json_arg(struct rm *rm, struct tft_json_writer *b, uint32_t key, int close)
{
	if (!tft_json_write_bytes(b))
		return 0;
	return json_arg_add(rm, b, key, close);
}


/*
 * The node's args go to args_buf, or in direct mode to the free tail of
 * pargs (reserved before the node), so that tft_rm_queue_event() need not copy them.
 */
static inline void node_args_begin(struct rm *rm)
{
	rm->nargs = 0;
	rm->args = rm->args_buf;
	if (rm->direct && !rm->spilled && rm->npargs < UINT32_MAX - MAX_ARGS &&
	    !tft_grow((void **)&rm->pargs, &rm->cpargs, rm->npargs + MAX_ARGS, sizeof(*rm->pargs)))
		rm->args = rm->pargs + rm->npargs;
}

/* The slice's start and duration: nanosecond fields when present (TF >= 1.13), else micros. */
static inline void node_time(const struct rm_node *n, int64_t *ts_out, int64_t *dur_out)
{
	int64_t ts, dur;

	if (n->has & (1ull << NF_ALL_START_NS))
		ts = n->all_start_nanos;
	else
		ts = us_to_ns(n->all_start_micros);
	if ((n->has & (1ull << NF_ALL_END_NS)) && n->all_end_rel_nanos)
		dur = n->all_end_rel_nanos;
	else if (n->all_end_rel_micros)
		dur = us_to_ns(n->all_end_rel_micros);
	else if ((n->has & (1ull << NF_OP_END_NS)) && n->op_end_rel_nanos)
		dur = n->op_end_rel_nanos; /* RecvTensor: only op_end_rel is set */
	else
		dur = us_to_ns(n->op_end_rel_micros);
	if (dur < 0)
		dur = 0;
	if (ts > 0 && dur > INT64_MAX - ts)
		dur = INT64_MAX - ts; /* garbage input: keep ts + dur representable */
	*ts_out = ts;
	*dur_out = dur;
}

/*
 * A template hit: its args. Whole 64-byte blocks (4 args): a
 * variable-length memcpy compiles to `rep movsq` here, slower than the few
 * vector moves. The spare args copied past nargs fit (TMPL_MAX_ARGS and
 * MAX_ARGS are multiples of 4) and are overwritten or ignored.
 */
static inline void tmpl_args(struct rm *rm, const struct rm_tmpl *t)
{
	for (uint32_t i = 0; i < t->nargs; i += 4)
		memcpy(rm->args + i, t->args + i, 4 * sizeof(rm->args[0]));
	rm->nargs = t->nargs;
}

/* The label's inputs as a JSON list of strings (the "inputs" arg). */
static int inputs_arg(struct rm *rm, struct tft_tf_str inputs)
{
	struct tft_json_writer *b = &rm->scratch;
	struct tft_tf_str rest = inputs, in;
	const char *s;
	size_t len;

	tft_json_write_clear(b);
	tft_json_write_raw_char(b, '[');
	while (tft_tf_names_next_input(&rest, &in)) {
		tft_json_write_raw_sep(b);
		tft_json_write_raw_str(b, in.p, in.len);
	}
	tft_json_write_raw_char(b, ']');
	if (tft_json_write_failed(b))
		return TFT_ENOMEM;
	s = tft_json_write_data(b, &len);
	return arg_strn(rm, rm->k_inputs, s, len, TFT_ARG_JSON);
}

/*
 * A template miss: what the node's name and label say, as its first args
 * (op, inputs, timeline_label, node, kernel, tensor, ...: what a template
 * keeps), its category and whether it goes to the comm track (*comm).
 * *lb: the parsed label; *op: the op (for the event's name).
 */
static int node_label_args(struct rm *rm, const struct rm_dev *dev, const struct rm_node *n,
			   struct tft_tf_label *lb, struct tft_tf_str *op, int *comm, uint32_t *cat)
{
	struct tft_tf_str node_name = {(const char *)n->node_name.p, n->node_name.len};
	struct tft_tf_str ann_name = {NULL, 0};
	int r;

	tft_tf_names_parse_label((const char *)n->timeline_label.p, n->timeline_label.len, lb);
	*comm = tft_rm_node_op(dev->gputrace, node_name, lb, op, &ann_name);

	if (op->len && (r = arg_tfstr(rm, rm->k_op, *op)))
		return r;
	if (lb->inputs.len && lb->kind == TFT_TF_LABEL_OP && (r = inputs_arg(rm, lb->inputs)))
		return r;
	if (n->timeline_label.len &&
	    (r = arg_strn(rm, rm->k_label, n->timeline_label.p, n->timeline_label.len, TFT_ARG_STR)))
		return r;
	if (ann_name.len && dev->gputrace && (r = arg_tfstr(rm, rm->k_node, ann_name)))
		return r;
	if (lb->kind == TFT_TF_LABEL_KERNEL && (r = arg_tfstr(rm, rm->k_kernel, lb->name)))
		return r;
	if ((r = arg_tfstr(rm, rm->k_tensor, lb->tensor)) ||
	    (r = arg_tfstr(rm, rm->k_src_dev, lb->src_device)) ||
	    (r = arg_tfstr(rm, rm->k_dst_dev, lb->dst_device)) ||
	    (r = arg_tfstr(rm, rm->k_annotation, lb->annotation)) ||
	    (r = arg_tfstr(rm, rm->k_grid, lb->grid)) || (r = arg_tfstr(rm, rm->k_block, lb->block)))
		return r;
	if (lb->bytes >= 0)
		arg_int(rm, rm->k_bytes, lb->bytes);
	if (lb->regs >= 0)
		arg_int(rm, rm->k_regs, lb->regs);
	if (lb->shm >= 0)
		arg_int(rm, rm->k_shm, lb->shm);
	if (lb->kind == TFT_TF_LABEL_MEMCPY)
		arg_bool(rm, rm->k_async, lb->async);
	if (lb->to_device >= 0)
		arg_int(rm, rm->k_to_device, lb->to_device);

	if (*comm)
		*cat = rm->c_comm;
	else if (lb->kind == TFT_TF_LABEL_MEMCPY)
		*cat = rm->c_memcpy;
	else if (dev->gputrace)
		*cat = rm->c_kernel;
	else
		*cat = rm->c_op;
	return 0;
}

/* A template for this key from what a miss computed so far (the rest: after its event). */
static void tmpl_begin(struct rm_tmpl *nt, const struct rm *rm, const struct rm_node *n,
		       uint64_t hash, uint32_t devno, uint32_t cat, int comm)
{
	memset(nt, 0, sizeof(*nt));
	nt->hash = hash;
	nt->name_len = (uint32_t)n->node_name.len;
	nt->label_len = (uint32_t)n->timeline_label.len;
	nt->dev = devno;
	nt->cat = cat;
	nt->comm = (uint8_t)comm;
	nt->nargs = (uint8_t)rm->nargs;
	memcpy(nt->args, rm->args, rm->nargs * sizeof(rm->args[0]));
}

/* The fields each node has values of its own: times, thread (and its name). */
static inline void node_field_args(struct rm *rm, const struct rm_node *n)
{
	if (n->has & (1ull << NF_ALL_START_US))
		arg_int(rm, rm->k_all_start_us, n->all_start_micros);
	if (n->has & (1ull << NF_OP_START_US))
		arg_int(rm, rm->k_op_start_us, n->op_start_rel_micros);
	if (n->has & (1ull << NF_OP_END_US))
		arg_int(rm, rm->k_op_end_us, n->op_end_rel_micros);
	if (n->has & (1ull << NF_ALL_END_US))
		arg_int(rm, rm->k_all_end_us, n->all_end_rel_micros);
	if (n->has & (1ull << NF_SCHED_US))
		arg_int(rm, rm->k_sched_us, n->scheduled_micros);
	if (n->has & (1ull << NF_ALL_START_NS))
		arg_int(rm, rm->k_all_start_ns, n->all_start_nanos);
	if (n->has & (1ull << NF_OP_START_NS))
		arg_int(rm, rm->k_op_start_ns, n->op_start_rel_nanos);
	if (n->has & (1ull << NF_OP_END_NS))
		arg_int(rm, rm->k_op_end_ns, n->op_end_rel_nanos);
	if (n->has & (1ull << NF_ALL_END_NS))
		arg_int(rm, rm->k_all_end_ns, n->all_end_rel_nanos);
	if (n->has & (1ull << NF_SCHED_NS))
		arg_int(rm, rm->k_sched_ns, n->scheduled_nanos);
	if (n->has & (1ull << NF_THREAD)) {
		arg_int(rm, rm->k_thread, (int64_t)n->thread_id);
		for (uint32_t i = 0; i < rm->nthreads; i++) {
			if (rm->threads[i].tid == n->thread_id) {
				if (rm->nargs < MAX_ARGS) {
					struct tft_arg *a = &rm->args[rm->nargs++];

					a->key = rm->k_thread_name;
					a->type = TFT_ARG_STR;
					a->v.str = rm->threads[i].name;
				}
				break;
			}
		}
	}
}

/*
 * The sub-messages' JSON args (memory, output, referenced_tensor,
 * memory_stats). Only these fields write the JSON writers, and a writer out of memory failed its node
 * already: a node without them has nothing to check here.
 */
static int node_json_args(struct rm *rm)
{
	int r;

	if ((r = json_arg(rm, &rm->j_memory, rm->k_memory, 1)) ||
	    (r = json_arg(rm, &rm->j_output, rm->k_output, 1)) ||
	    (r = json_arg(rm, &rm->j_ref, rm->k_ref, 1)) ||
	    (r = json_arg(rm, &rm->j_memstats, rm->k_memstats, 0)))
		return r;
	if (tft_json_write_failed(&rm->j_memory) || tft_json_write_failed(&rm->j_output) ||
	    tft_json_write_failed(&rm->j_ref) || tft_json_write_failed(&rm->j_memstats) ||
	    tft_json_write_failed(&rm->j_tmp) || tft_json_write_failed(&rm->j_dims) ||
	    tft_json_write_failed(&rm->j_ids) || tft_json_write_failed(&rm->j_ids2) ||
	    tft_json_write_failed(&rm->j_dnames))
		return TFT_ENOMEM;
	return 0;
}

/* A template miss: the event's name (node_name, else the op, else "(unnamed)"); UINT32_MAX: no memory. */
static uint32_t node_event_name(struct rm *rm, struct tft_tf_str node_name, struct tft_tf_str op)
{
	if (node_name.len)
		return intern(rm, node_name.p, node_name.len);
	if (op.len)
		return intern(rm, op.p, op.len);
	return intern_c(rm, "(unnamed)");
}

/*
 * A template miss: the node's send, receive or transfer endpoint when its
 * label says one, noted in nt (when not NULL) for the next hits. *bad:
 * the endpoint's tensor could not be interned (the template must not keep it).
 */
static int node_comm(struct rm *rm, const struct rm_dev *dev, const struct tft_tf_label *lb,
		     uint32_t track, int64_t ts, int64_t end, struct rm_tmpl *nt, int *bad)
{
	char src[160], dst[160];
	const struct rm_comm *added;
	struct tft_tf_str tensor = lb->tensor;
	int role, r;

	if (lb->kind == TFT_TF_LABEL_SEND) {
		role = ROLE_SEND;
		snprintf(src, sizeof(src), "%s", dev->canon);
		canon_of(lb->dst_device, dst, sizeof(dst));
	} else if (lb->kind == TFT_TF_LABEL_RECV) {
		role = ROLE_RECV;
		canon_of(lb->src_device, src, sizeof(src));
		snprintf(dst, sizeof(dst), "%s", dev->canon);
	} else {
		role = ROLE_TRANSFER;
		canon_of(lb->src_device, src, sizeof(src));
		canon_of(lb->dst_device, dst, sizeof(dst));
		tensor = tft_tf_names_rendezvous_tensor(lb->tensor);
	}
	r = add_comm(rm, role, tensor, src, dst, track, ts, end, &added);
	if (r)
		return r;
	if (added && added->tensor == UINT32_MAX)
		*bad = 1; /* out of memory: do not remember a bad id */
	else if (nt && added) {
		nt->has_comm = 1;
		nt->role = (uint8_t)role;
		nt->comm_key = added->key;
		nt->comm_cross = added->cross;
		nt->comm_tensor = added->tensor;
	}
	return 0;
}

/* What the step is made of: its time span, its nodes, its one process (if one). */
static inline void node_count(struct rm *rm, const struct rm_dev *dev, int64_t ts, int64_t dur)
{
	if (rm->nodes == 0 || ts < rm->min_ts)
		rm->min_ts = ts;
	if (rm->nodes == 0 || ts + dur > rm->max_end)
		rm->max_end = ts + dur;
	if (rm->procs_seen == 0) {
		rm->step_process = dev->process;
		rm->procs_seen = 1;
	} else if (rm->step_process != dev->process) {
		rm->step_process = TFT_NONE;
	}
	rm->nodes++;
}

/*
 * One decoded node (rm->cur's, at rm->node_index) -> its slice, queued for
 * its device's track, with every recorded field as an arg; its dataflow
 * record; its send/recv endpoint. What (device, node_name, label) imply
 * comes from its template when one matches, else is computed (and kept).
 */
int tft_rm_emit_node(struct rm *rm, struct rm_node *n)
{
	struct rm_dev *dev = rm->cur;
	uint32_t devno = (uint32_t)(dev - rm->devs) + 1;
	struct tft_tf_label lb;
	struct tft_tf_str node_name = {(const char *)n->node_name.p, n->node_name.len};
	struct tft_tf_str op = {NULL, 0};
	struct tft_event ev;
	struct rm_tmpl *slot, nt;
	struct rm_dft dft;
	uint64_t hash = 0;
	int64_t ts, dur;
	int comm, r, hit, bad = 0;
	uint32_t cat;

	node_args_begin(rm);
	node_time(n, &ts, &dur);
	slot = tft_rm_tmpl_slot(rm, devno, node_name, &n->timeline_label, &hash, &hit);
	if (hit) {
		tmpl_args(rm, slot);
		comm = slot->comm;
		cat = slot->cat;
	} else {
		if ((r = node_label_args(rm, dev, n, &lb, &op, &comm, &cat)))
			return r;
		if (slot && rm->nargs <= TMPL_MAX_ARGS)
			tmpl_begin(&nt, rm, n, hash, devno, cat, comm);
		else
			slot = NULL;
	}
	node_field_args(rm, n);
	if ((n->has & NF_NESTED) && (r = node_json_args(rm)))
		return r;

	memset(&ev, 0, sizeof(ev));
	ev.kind = TFT_EV_SLICE;
	ev.ts_ns = ts;
	ev.dur_ns = dur;
	ev.track = comm ? tft_rm_comm_track(rm, dev) : tft_rm_main_track(rm, dev);
	if (ev.track == TFT_NONE)
		return TFT_ENOMEM;
	ev.name = hit ? slot->ev_name : node_event_name(rm, node_name, op);
	if (ev.name == UINT32_MAX)
		return TFT_ENOMEM;
	if (!hit) {
		struct tft_tf_str nm = node_name;

		if (!nm.len)
			nm.p = tft_writer_str(rm->w, ev.name, &nm.len);
		if ((r = tft_rm_df_prep(rm, dev, nm, &n->timeline_label, &dft)))
			return r;
	}
	ev.cat = cat;
	ev.count = 1;
	/* timeline.py orders a device's lanes by this position (export_tftimeline.c). */
	arg_int(rm, rm->k_node_index, (int64_t)rm->node_index);
	/* its step: the tf.timeline export's StepStats, also where a track is several steps' */
	arg_int(rm, rm->k_step_pos, rm->step_pos);
	if (rm->cur_entry >= 0)
		arg_int(rm, rm->k_dev_entry, rm->cur_entry);
	ev.nargs = rm->nargs;
	ev.args = rm->args;
	r = tft_rm_queue_event(rm, &ev);
	if (!r)
		r = tft_rm_df_note(rm, n, &ev, node_name, hit ? &slot->df : &dft);
	if (r)
		return r;

	/* Send/recv matching. */
	if (hit) {
		if (slot->has_comm && (r = add_comm_known(rm, slot, ev.track, ts, end_of(ts, ev.dur_ns))))
			return r;
	} else if (lb.kind == TFT_TF_LABEL_SEND || lb.kind == TFT_TF_LABEL_RECV ||
		   lb.kind == TFT_TF_LABEL_TRANSFER) {
		r = node_comm(rm, dev, &lb, ev.track, ts, end_of(ts, ev.dur_ns), slot ? &nt : NULL, &bad);
		if (r)
			return r;
		if (bad)
			slot = NULL;
	}
	if (!hit && slot) {
		nt.ev_name = ev.name;
		nt.df = dft;
		tft_rm_tmpl_store(rm, slot, &nt, node_name, &n->timeline_label);
	}
	node_count(rm, dev, ts, dur);
	return 0;
}
