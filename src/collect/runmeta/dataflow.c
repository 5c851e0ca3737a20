/* SPDX-License-Identifier: MIT */
/*
 * DataFlow and launch flows. Each node is noted as it is emitted (its
 * place, timeline.py's times, its tensors' and inputs' names hashed:
 * struct rm_df), and the input's flows are made once it is decoded.
 *
 * timeline.py draws a DataFlow arrow per input of every node (not on a
 * GPU stream or memcpy device, not a RecvTensor) whose label names a tensor
 * of its StepStats (node_name for output 0, node_name:N for output N; an
 * input that names none is tried again without its "/_NN" Send/Recv
 * suffix; the last node producing a name wins), when producer and consumer
 * are on different (pid, lane): pid per device, lanes first-fit per
 * dev_stats entry in node order on whole microseconds. The same edges
 * become the session's "DataFlow" flows (the tf.timeline export's s/t
 * pairs, not drawn from them), bound, as every flow of this importer, by
 * (track, start) of the two slices. A node without a label (timeline.py
 * draws nothing into it) takes its inputs from its NodeDef in the
 * RunMetadata's partition graphs (on_gnode), with the same rules. Each
 * kernel or memcpy on a /stream: or /memcpy device whose annotation names an
 * op of its GPU's executor device gets a "launch" flow from that op (its
 * last run starting at or before the kernel, else its first), as CUDA
 * launches in a Kineto trace.
 */

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "collect/runmeta/rm_int.h"
#include "core/grow.h"
#include "core/hmap.h"
#include "core/lanes.h"

/* Floor division by a positive b (Python's //). */
static int64_t floor_div(int64_t a, int64_t b)
{
	int64_t q = a / b;

	return (a % b != 0 && a < 0) ? q - 1 : q;
}

static inline int dfh_push(struct rm *rm, uint64_t h)
{
	if (rm->ndfh == UINT32_MAX ||
	    tft_grow((void **)&rm->dfh, &rm->cdfh, rm->ndfh + 1, sizeof(*rm->dfh)))
		return TFT_ENOMEM;
	rm->dfh[rm->ndfh++] = h;
	return 0;
}

/* Push one input's two hashes (the name and its Send/Recv-stripped form) onto rm->dfh. */
static int df_input(struct rm *rm, struct tft_tf_str in)
{
	struct tft_tf_str st;
	int r = dfh_push(rm, tft_hash_fast(in.p, in.len, 0));

	return r ? r : dfh_push(rm, tft_tf_names_strip_rename(in, &st) ? tft_hash_fast(st.p, st.len, 0) : 0);
}

/*
 * The dataflow part of a node's template (a miss: computed): its event's
 * name bytes (node_name, else what tft_rm_emit_node() named the event), the
 * kernel's op as tft_rm_emit_node() put it in the node arg (the args so far) and
 * timeline.py's name for it, and the inputs of its label.
 */
int tft_rm_df_prep(struct rm *rm, const struct rm_dev *dev, struct tft_tf_str name,
		   const struct tft_pb_bytes *label, struct rm_dft *t)
{
	struct tft_tf_str inputs, in, k, op = { NULL, 0 };
	int done = 0;

	memset(t, 0, sizeof(*t));
	t->name_hash = tft_hash_fast(name.p, name.len, 0);
	t->recv = name.len == 10 && memcmp(name.p, "RecvTensor", 10) == 0;
	if (dev->tl_gputrace) {
		for (uint16_t i = 0; i < rm->nargs; i++)
			if (rm->args[i].key == rm->k_node && rm->args[i].type == TFT_ARG_STR)
				t->op = rm->args[i].v.str;
		if (t->op)
			op.p = tft_writer_str(rm->w, t->op, &op.len);
		tft_tf_names_timeline_kernel((const char *)label->p, label->len, name.p, name.len, &k, NULL);
		if (k.len && (k.len != op.len || memcmp(k.p, op.p, k.len)) &&
		    (t->op2 = intern(rm, k.p, k.len)) == UINT32_MAX)
			return TFT_ENOMEM;
		return 0;
	}
	if (t->recv || !label->len ||
	    !tft_tf_names_timeline_inputs((const char *)label->p, label->len, &inputs) || !inputs.len)
		return 0;
	while (tft_tf_names_timeline_next_input(&inputs, &done, &in)) {
		struct tft_tf_str st;

		if (t->nin == DF_TMPL_IN) {
			t->nin = DF_NIN_MANY;
			break;
		}
		t->in[2 * t->nin] = tft_hash_fast(in.p, in.len, 0);
		t->in[2 * t->nin + 1] = tft_tf_names_strip_rename(in, &st) ? tft_hash_fast(st.p, st.len, 0) : 0;
		t->nin++;
	}
	return 0;
}

/*
 * The node just queued as ev, for tft_rm_emit_dataflow(): its place, timeline.py's
 * times (as the tf.timeline export reads them back from its args), its
 * tensors' and inputs' names (t: its template's dataflow part), hashed here,
 * on the thread that decodes it. Kept at rm->df_base + its node index when
 * the parallel import placed the device's records (rm->df_placed), else
 * appended.
 */
int tft_rm_df_note(struct rm *rm, const struct rm_node *n, const struct tft_event *ev,
		   struct tft_tf_str node_name, const struct rm_dft *t)
{
	const struct rm_dev *dev = rm->cur;
	struct tft_tf_str name = node_name;
	struct rm_df *d;
	int64_t dur_us;
	int r;

	if (rm->df_placed) {
		uint64_t at = rm->df_base + rm->node_index;

		if (at >= rm->ndf)
			return TFT_EFORMAT; /* (more nodes than the pre-pass counted: cannot happen) */
		d = &rm->df[at];
	} else {
		if (rm->ndf == UINT32_MAX ||
		    tft_grow((void **)&rm->df, &rm->cdf, rm->ndf + 1, sizeof(*rm->df)))
			return TFT_ENOMEM;
		d = &rm->df[rm->ndf++];
	}
	d->ts = ev->ts_ns;
	d->track = ev->track;
	d->name = ev->name;
	d->op = t->op;
	d->op2 = t->op2;
	d->dev = (uint32_t)(dev - rm->devs);
	d->entry = rm->cur_entry >= 0 && rm->cur_entry <= INT32_MAX ? (int32_t)rm->cur_entry : -1;
	d->wk = rm->df_wk;
	d->hoff = rm->ndfh;
	d->nout = n->nout;
	d->nin = 0;
	d->flags = (dev->tl_gputrace ? DF_GPUTRACE : 0) | (t->recv ? DF_RECV : 0) |
		   (n->timeline_label.len ? 0 : DF_NOLABEL);
	if (n->has & (1ull << NF_ALL_START_US)) {
		d->start_us = n->all_start_micros;
		dur_us = (n->has & (1ull << NF_ALL_END_US)) ? n->all_end_rel_micros : 0;
	} else {
		d->start_us = floor_div(ev->ts_ns, 1000);
		dur_us = floor_div(end_of(ev->ts_ns, ev->dur_ns), 1000) - d->start_us;
	}
	d->end_us = (int64_t)((uint64_t)d->start_us + (uint64_t)dur_us);
	if (d->nout && (r = dfh_push(rm, t->name_hash)))
		return r;
	if (d->nout > 1) {
		struct tft_json_writer *b = &rm->scratch;
		const char *s;
		size_t len;

		if (!name.len)
			name.p = tft_writer_str(rm->w, ev->name, &name.len);
		for (uint32_t i = 1; i < d->nout; i++) {
			tft_json_write_clear(b);
			tft_json_write_raw(b, name.p, name.len);
			tft_json_write_raw_char(b, ':');
			tft_json_write_raw_int(b, i);
			s = tft_json_write_data(b, &len);
			if (tft_json_write_failed(b) || (r = dfh_push(rm, tft_hash_fast(s, len, 0))))
				return TFT_ENOMEM;
		}
	}
	if (t->nin == DF_NIN_MANY) {
		struct tft_tf_str inputs, in;
		int done = 0;

		tft_tf_names_timeline_inputs((const char *)n->timeline_label.p, n->timeline_label.len,
					     &inputs);
		while (tft_tf_names_timeline_next_input(&inputs, &done, &in)) {
			if ((r = df_input(rm, in)))
				return r;
			d->nin += d->nin < UINT32_MAX;
		}
	} else {
		for (uint32_t q = 0; q < 2u * t->nin; q++)
			if ((r = dfh_push(rm, t->in[q])))
				return r;
		d->nin = t->nin;
	}
	return 0;
}

/* A tensor (its name's hash in rm_tensors' map): the node (rm->df index) producing it last and the output. */
struct df_tensor {
	uint32_t rec;
	uint32_t out;
};

/*
 * The runs of the executor devices' ops, for the launch flows: grouped by
 * (device, name) through a hash table, each group's records by start.
 */
struct df_group {
	uint32_t dev, name;
	uint32_t first, n;  /* its records in df_ops.rec */
	uint32_t cur;       /* the run picked last (kernels mostly come in time order) */
};

struct df_ops {
	struct df_group *g;   /* owned: the groups */
	uint32_t ng;
	struct tft_hmap ix;   /* owned: (dev, name) -> index in g */
	uint32_t *rec;        /* owned: record indices, group by group */
	int64_t *ts;          /* owned: their starts */
	const struct rm_df *df;
};

static struct df_group *df_group_of(const struct df_ops *o, uint32_t dev, uint32_t name)
{
	uint64_t k = (uint64_t)dev << 32 | name;
	uint32_t i = tft_hmap_get1(&o->ix, k, (uint32_t)tft_hash_u64(k));

	return i == TFT_HMAP_EMPTY ? NULL : &o->g[i];
}

static const struct rm_df *df_sort_base;

static int cmp_df_rec(const void *a, const void *b)
{
	const struct rm_df *x = &df_sort_base[*(const uint32_t *)a], *y = &df_sort_base[*(const uint32_t *)b];

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : (*(const uint32_t *)a > *(const uint32_t *)b);
}

/* Group the ops (records not on GPU stream devices) of rm by (device, name). */
static int df_ops_build(const struct rm *rm, struct df_ops *o)
{
	uint32_t nops = 0, at = 0;

	memset(o, 0, sizeof(*o));
	tft_hmap_init(&o->ix, 1);
	o->df = rm->df;
	for (uint32_t i = 0; i < rm->ndf; i++)
		nops += !(rm->df[i].flags & DF_GPUTRACE) && rm->df[i].name;
	o->g = calloc((size_t)nops + 1, sizeof(*o->g));
	o->rec = malloc(((size_t)nops + 1) * sizeof(*o->rec));
	o->ts = malloc(((size_t)nops + 1) * sizeof(*o->ts));
	if (!o->g || !o->rec || !o->ts || tft_hmap_reserve(&o->ix, nops))
		return TFT_ENOMEM;
	for (uint32_t i = 0; i < rm->ndf; i++) {
		const struct rm_df *d = &rm->df[i];
		uint64_t k = (uint64_t)d->dev << 32 | d->name;
		uint32_t gi = o->ng;
		int r;

		if ((d->flags & DF_GPUTRACE) || !d->name)
			continue;
		r = tft_hmap_add(&o->ix, &k, (uint32_t)tft_hash_u64(k), &gi);
		if (r < 0)
			return TFT_ENOMEM;
		if (r == 0)
			o->g[o->ng++] = (struct df_group){ .dev = d->dev, .name = d->name };
		o->g[gi].n++;
	}
	for (uint32_t i = 0; i < o->ng; i++) {
		o->g[i].first = at;
		at += o->g[i].n;
		o->g[i].n = 0;
	}
	for (uint32_t i = 0; i < rm->ndf; i++) {
		const struct rm_df *d = &rm->df[i];
		struct df_group *g;

		if ((d->flags & DF_GPUTRACE) || !d->name)
			continue;
		g = df_group_of(o, d->dev, d->name);
		o->rec[g->first + g->n++] = i;
	}
	/* by start (a device's nodes usually are already) */
	for (uint32_t i = 0; i < o->ng; i++) {
		const struct df_group *g = &o->g[i];
		bool sorted = true;

		for (uint32_t j = 1; j < g->n && sorted; j++)
			sorted = rm->df[o->rec[g->first + j - 1]].ts <= rm->df[o->rec[g->first + j]].ts;
		if (!sorted) {
			df_sort_base = rm->df; /* (the import's thread only) */
			qsort(o->rec + g->first, g->n, sizeof(*o->rec), cmp_df_rec);
		}
		for (uint32_t j = 0; j < g->n; j++)
			o->ts[g->first + j] = rm->df[o->rec[g->first + j]].ts;
	}
	return 0;
}

static int df_flow(struct rm *rm, uint32_t cat, uint32_t name, const struct rm_df *from,
		   const struct rm_df *to, uint64_t *seq)
{
	struct tft_flow fl;

	memset(&fl, 0, sizeof(fl));
	fl.flow_id = tft_hash_u64(((uint64_t)rm->step_pos << 40) ^ (*seq)++ ^ 0x5dfull << 52) &
		     0x7FFFFFFFFFFFFFFFull;
	fl.name = name;
	fl.cat = cat;
	fl.src_track = from->track;
	fl.src_ts_ns = from->ts;
	fl.dst_track = to->track;
	fl.dst_ts_ns = to->ts;
	return tft_writer_add_flow(rm->w, &fl);
}

/* The name of output `out` of node p: its own name, or "name:out" (interned). */
static uint32_t df_tensor_name(struct rm *rm, const struct rm_df *p, uint32_t out)
{
	struct tft_json_writer *b = &rm->scratch;
	size_t len = 0;
	const char *s;

	if (!out)
		return p->name;
	s = tft_writer_str(rm->w, p->name, &len);
	tft_json_write_clear(b);
	tft_json_write_raw(b, s ? s : "", len);
	tft_json_write_raw_char(b, ':');
	tft_json_write_raw_int(b, out);
	if (tft_json_write_failed(b))
		return UINT32_MAX;
	s = tft_json_write_data(b, &len);
	return intern(rm, s, len);
}

/*
 * The executor device of each GPU stream / memcpy device of this input:
 * the device it is a part of (same canonical device; a stream device named
 * without its job, "/device:GPU:0/stream:all", that of the one device
 * of the input ending the same), or UINT32_MAX.
 */
static void df_executors(const struct rm *rm, uint32_t *exec)
{
	for (uint32_t g = 0; g < rm->ndevs; g++) {
		const struct rm_dev *gd = &rm->devs[g];
		size_t gl = strlen(gd->canon);
		uint32_t found = UINT32_MAX, tail = UINT32_MAX, ntail = 0;

		exec[g] = UINT32_MAX;
		if (!gd->tl_gputrace)
			continue;
		for (uint32_t d = 0; d < rm->ndevs && found == UINT32_MAX; d++) {
			const struct rm_dev *dd = &rm->devs[d];
			size_t dl = strlen(dd->canon);

			if (dd->tl_gputrace)
				continue;
			if (dl == gl && memcmp(dd->canon, gd->canon, gl) == 0)
				found = d;
			else if (gd->canon[0] == '/' && strncmp(gd->canon, "/job:", 5) != 0 && dl > gl &&
				 memcmp(dd->canon + dl - gl, gd->canon, gl) == 0)
				tail = d, ntail++;
		}
		exec[g] = found != UINT32_MAX ? found : ntail == 1 ? tail : UINT32_MAX;
	}
}

static int emit_launches(struct rm *rm, uint64_t *seq)
{
	struct df_ops ops;
	uint32_t *exec, nk = 0;
	int r;

	for (uint32_t i = 0; i < rm->ndf; i++)
		nk += (rm->df[i].flags & DF_GPUTRACE) && (rm->df[i].op || rm->df[i].op2);
	if (!nk)
		return 0;
	exec = malloc((size_t)rm->ndevs * sizeof(*exec) + 1);
	r = df_ops_build(rm, &ops);
	if (!exec && !r)
		r = TFT_ENOMEM;
	if (r)
		goto out;
	df_executors(rm, exec);
	for (uint32_t i = 0; i < rm->ndf && !r; i++) {
		const struct rm_df *k = &rm->df[i];
		struct df_group *g = NULL;
		const int64_t *ts;
		uint32_t lo, hi;

		if (!(k->flags & DF_GPUTRACE) || exec[k->dev] == UINT32_MAX)
			continue;
		/* the runs of the op it names on its executor: its node arg's, else timeline.py's name */
		if (k->op)
			g = df_group_of(&ops, exec[k->dev], k->op);
		if ((!g || !g->name) && k->op2)
			g = df_group_of(&ops, exec[k->dev], k->op2);
		if (!g || !g->name)
			continue;
		/* the last run starting at or before k, else the first: from the last pick on */
		ts = ops.ts + g->first;
		if (ts[g->cur] <= k->ts) {
			for (lo = g->cur + 1; lo < g->n && ts[lo] <= k->ts && lo < g->cur + 8; lo++)
				;
			hi = lo < g->n && ts[lo] <= k->ts ? g->n : lo;
		} else {
			lo = 0;
			hi = g->cur;
		}
		while (lo < hi) {
			uint32_t mid = lo + (hi - lo) / 2;

			if (ts[mid] <= k->ts)
				lo = mid + 1;
			else
				hi = mid;
		}
		g->cur = lo ? lo - 1 : 0;
		r = df_flow(rm, rm->c_launch, g->name, &rm->df[ops.rec[g->first + g->cur]], k, seq);
	}
out:
	free(ops.g);
	tft_hmap_fini(&ops.ix);
	free(ops.rec);
	free(ops.ts);
	free(exec);
	return r;
}

/* Node d's hashes (rm_df.hoff): in its decoding thread's array. */
static const uint64_t *df_hashes(const struct rm *rm, const struct rm_df *d)
{
	return (d->wk ? rm->wkdfh[d->wk - 1] : rm->dfh) + d->hoff;
}

/* The input's dataflow and launch flows (see above), after its send/recv flows. */
int tft_rm_emit_dataflow(struct rm *rm)
{
	struct tft_lanes lanes = { 0 };
	struct df_tensor *tab = NULL; /* the tensors, tix's values index it */
	struct tft_hmap tix;          /* name hash -> tensor */
	uint64_t ntensors = 0, seq = 0;
	uint32_t nt = 0;
	int r = 0;

	if (!rm->ndf)
		return 0;
	/* _assign_lanes: entry by entry (a device's records are one run per entry) */
	for (uint32_t i = 0; i < rm->ndf && !r; i++) {
		struct rm_df *d = &rm->df[i];

		if (i == 0 || d->dev != d[-1].dev || d->entry != d[-1].entry)
			r = tft_lanes_reset(&lanes);
		if (!r)
			r = tft_lanes_assign(&lanes, d->start_us, d->end_us, &d->lane);
		ntensors += d->nout;
	}
	tft_lanes_free(&lanes);
	/* _analyze_tensors: every output of the step, the last producer of a name winning */
	tft_hmap_init(&tix, 1);
	if (!r && ntensors > UINT32_MAX / 2)
		r = TFT_ENOMEM;
	if (!r && ntensors &&
	    (!(tab = malloc((size_t)ntensors * sizeof(*tab))) || tft_hmap_reserve(&tix, (uint32_t)ntensors)))
		r = TFT_ENOMEM;
	for (uint32_t i = 0; tab && !r && i < rm->ndf; i++) {
		const struct rm_df *d = &rm->df[i];

		for (uint32_t o = 0; o < d->nout && !r; o++) {
			uint64_t h = df_hashes(rm, d)[o];
			uint32_t ti = nt;

			if (tft_hmap_add(&tix, &h, (uint32_t)tft_hash_u64(h), &ti) < 0)
				r = TFT_ENOMEM;
			else
				nt += ti == nt;
			tab[ti] = (struct df_tensor){ i, o };
		}
	}
	/* _show_compute: an arrow per input naming a tensor, across (pid, lane) */
	for (uint32_t i = 0; tab && !r && i < rm->ndf; i++) {
		const struct rm_df *c = &rm->df[i];
		const uint64_t *in = c->nin ? df_hashes(rm, c) + c->nout : NULL;
		uint32_t nin = c->nin;

		/* a node without a label (timeline.py draws nothing into it): its graph's inputs */
		if (!nin && rm->ngnodes && (c->flags & (DF_NOLABEL | DF_GPUTRACE | DF_RECV)) == DF_NOLABEL) {
			size_t len = 0;
			const char *nm = tft_writer_str(rm->w, c->name, &len);
			const struct rm_gnode *g = tft_rm_gnode_find(rm, tft_hash_fast(nm ? nm : "", len, 0));

			if (g) {
				in = rm->gin + g->off;
				nin = g->nin;
			}
		}
		for (uint32_t q = 0; q < nin && !r; q++) {
			uint32_t ti = tft_hmap_get1(&tix, in[2 * q], (uint32_t)tft_hash_u64(in[2 * q]));
			const struct df_tensor *t;
			const struct rm_df *p;
			uint32_t name;

			if (ti == TFT_HMAP_EMPTY && in[2 * q + 1])
				ti = tft_hmap_get1(&tix, in[2 * q + 1], (uint32_t)tft_hash_u64(in[2 * q + 1]));
			if (ti == TFT_HMAP_EMPTY)
				continue; /* "Can't find tensor - removed by CSE?" */
			t = &tab[ti];
			p = &rm->df[t->rec];
			if (p->dev == c->dev && p->lane == c->lane)
				continue;
			name = df_tensor_name(rm, p, t->out);
			r = name == UINT32_MAX ? TFT_ENOMEM : df_flow(rm, rm->c_dataflow, name, p, c, &seq);
		}
	}
	free(tab);
	tft_hmap_fini(&tix);
	return r ? r : emit_launches(rm, &seq);
}
