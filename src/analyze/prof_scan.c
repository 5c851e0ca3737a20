/* SPDX-License-Identifier: MIT */
/*
 * The scan of tftracer prof: one pass over the session's slices that fills
 * the record tables (prof_int.h). Which slices are ops, scopes and code
 * frames is told by their category and name (docs/cmd-prof.md, "What is a
 * node"); ops on a call-stack track take the enclosing scope and op as
 * context, their self time is their duration minus their children's, and a
 * kernel's time goes to the op that launched it (the flow from its launch:
 * RunMetadata's "launch" arrows, CUDA's ac2g correlations), else to the op
 * its annotation names, else to a record of its own.
 *
 * This file is one worker's part (prof_scan_int.h): one track's slices into
 * the worker's own tables, the per-event path. The tracks are split over the
 * workers and scanned in two phases by prof_scan_run.c (host tracks first:
 * they resolve the launch flows, prof_flows.c, to the launching op's cell;
 * then accelerator tracks), backward ops are placed by their forward op's
 * Sequence number (prof_bwd.c), and the workers' tables are merged by key
 * (prof_merge.c). Derived tracks (TFT_TRACKF_DERIVED) are left out: one
 * execution counts once.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/prof_scan_int.h"
#include "analyze/prof_json.h"
#include "analyze/torch_costs.h"
#include "core/grow.h"

/* ---- classes of strings, cached per session string id --------------------------------- */

enum name_class { NC_PLAIN = 1, NC_STEP, NC_MODULE, NC_MEMORY, NC_BACKWARD, NC_RANGE };
enum cat_class { CC_OP = 1, CC_PYFUNC, CC_ANNOT, CC_RUNTIME, CC_SKIP };
enum key_class {
	KC_OTHER = 1, KC_OP, KC_NAME, KC_DIMS, KC_CONCRETE, KC_INTYPE, KC_FLOPS, KC_SEQ, KC_FWD_TID,
	KC_MEMORY, KC_MEMSTATS, KC_OUTPUT, KC_INPUTS, KC_NODE, KC_TF_OP, KC_BYTES, KC_STACK,
};
enum slice_class { SC_OP = 1, SC_LAUNCH, SC_MODULE, SC_SCOPE, SC_CODE, SC_STEP };

static const char MODULE_PREFIX[] = "nn.Module: ";
static const char BACKWARD_PREFIX[] = "autograd::engine::evaluate_function: ";

/* What one slice's args say (session string ids; 0 = absent). */
struct argv {
	uint32_t op, name, dims, concrete, intypes, mem, memstats, output, inputs, node, tf_op, stack;
	int64_t flops, seq, fwd_tid, bytes;
	bool has_flops, has_seq, has_fwd_tid, has_bytes;
};

/* An open slice on a call-stack track. */
struct frame {
	int64_t start, end;
	int64_t child_ns;       /* its direct children's time, each clipped to it */
	int64_t mem_cum, mem_peak, mem_req;
	uint32_t ctx;           /* the context its children take (record, PROF_NONE = root) */
	uint32_t code;          /* the code node its children take */
	uint32_t cell;          /* an op's cell, else PROF_NONE */
	uint32_t rec;           /* its own record (op, scope, module) or PROF_NONE */
	uint32_t last_op;       /* the last op record started in it (graph view order) */
	uint32_t name;          /* session string id of its name (a module's path) */
	uint8_t cls;            /* enum slice_class */
	uint8_t counted;        /* in the step(s) */
};

/* A slice of a concurrent (lane) track, kept while flows may start in it. */
struct active {
	int64_t start, end;
	uint32_t cell;
	uint8_t counted;
};

struct memo {                 /* a small cache: 3 keys -> 4 values */
	uint32_t k[3];
	uint32_t used;
	int64_t v[4];
};


static int oom(struct prof_worker *w)
{
	if (!w->rc)
		w->rc = tft_error_set(&w->err, TFT_ENOMEM, -1, "out of memory");
	return w->rc;
}

/* The session string of id sid (NUL-terminated). */
static const char *sstr(struct prof_worker *w, uint32_t sid, size_t *len)
{
	size_t l;
	const char *s = tft_session_str(w->s, sid, &l);

	if (len)
		*len = l;
	return s;
}

/* Local id of session string sid. */
static uint32_t lid_of(struct prof_worker *w, uint32_t sid)
{
	size_t len;
	const char *s;
	uint32_t lid;

	if (sid < w->nstr && w->lid_of[sid])
		return w->lid_of[sid] - 1;
	s = sstr(w, sid, &len);
	lid = tft_prof_lid(&w->tab, s, len);
	if (lid == PROF_NONE) {
		oom(w);
		return 0;
	}
	if (sid < w->nstr)
		w->lid_of[sid] = lid + 1;
	return lid;
}

static bool has_prefix(const char *s, size_t len, const char *prefix, size_t plen)
{
	return len >= plen && memcmp(s, prefix, plen) == 0;
}

static int name_class(struct prof_worker *w, uint32_t sid)
{
	size_t len;
	const char *s;
	int c = NC_PLAIN;

	if (sid < w->nstr && w->ncls[sid])
		return w->ncls[sid];
	s = sstr(w, sid, &len);
	if (has_prefix(s, len, "ProfilerStep#", 13))
		c = NC_STEP;
	else if (has_prefix(s, len, MODULE_PREFIX, sizeof(MODULE_PREFIX) - 1))
		c = NC_MODULE;
	else if (len == 8 && memcmp(s, "[memory]", 8) == 0)
		c = NC_MEMORY;
	else if (has_prefix(s, len, BACKWARD_PREFIX, sizeof(BACKWARD_PREFIX) - 1))
		c = NC_BACKWARD;
	else if (memchr(s, '#', len) && !memmem(s, len, "::", 2))
		c = NC_RANGE; /* PyTorch's own record_function ranges: "Optimizer.step#SGD.step", "enumerate(DataLoader)#..." */
	if (sid < w->nstr)
		w->ncls[sid] = (uint8_t)c;
	return c;
}

static int cat_class(struct prof_worker *w, uint32_t sid)
{
	static const char *const annot[] = { "user_annotation", "record_function", "gpu_user_annotation",
					     "Annotation", "annotation" };
	static const char *const runtime[] = { "cuda_runtime", "Runtime", "cuda_driver", "mtia_runtime",
					       "hip_runtime", "privateuse1_runtime", "xpu_runtime" };
	size_t len;
	const char *s;
	int c = CC_OP;

	if (sid < w->nstr && w->ccls[sid])
		return w->ccls[sid];
	s = sstr(w, sid, &len);
	if (strcmp(s, "python_function") == 0)
		c = CC_PYFUNC;
	else if (strcmp(s, "Trace") == 0)
		c = CC_SKIP;
	for (size_t i = 0; c == CC_OP && i < sizeof(annot) / sizeof(annot[0]); i++)
		if (strcmp(s, annot[i]) == 0)
			c = CC_ANNOT;
	for (size_t i = 0; c == CC_OP && i < sizeof(runtime) / sizeof(runtime[0]); i++)
		if (strcmp(s, runtime[i]) == 0)
			c = CC_RUNTIME;
	if (sid < w->nstr)
		w->ccls[sid] = (uint8_t)c;
	return c;
}

static int key_class(struct prof_worker *w, uint32_t sid)
{
	static const struct { const char *k; int c; } keys[] = {
		{ "op", KC_OP }, { "name", KC_NAME }, { "Input Dims", KC_DIMS },
		{ "Input dims", KC_DIMS }, /* (Kineto before PyTorch 1.10) */
		{ "Concrete Inputs", KC_CONCRETE }, { "Input type", KC_INTYPE }, { "flops", KC_FLOPS },
		{ "Sequence number", KC_SEQ }, { "Fwd thread id", KC_FWD_TID }, { "memory", KC_MEMORY },
		{ "memory_stats", KC_MEMSTATS }, { "output", KC_OUTPUT }, { "inputs", KC_INPUTS },
		{ "node", KC_NODE }, { "tf_op", KC_TF_OP }, { "Bytes", KC_BYTES }, { "Call stack", KC_STACK },
	};
	const char *s;
	int c = KC_OTHER;

	if (sid < w->nstr && w->kcls[sid])
		return w->kcls[sid];
	s = sstr(w, sid, NULL);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (strcmp(s, keys[i].k) == 0)
			c = keys[i].c;
	if (sid < w->nstr)
		w->kcls[sid] = (uint8_t)c;
	return c;
}

static void read_args(struct prof_worker *w, const struct tft_event *ev, struct argv *a)
{
	memset(a, 0, sizeof(*a));
	for (uint16_t i = 0; i < ev->nargs; i++) {
		const struct tft_arg *g = &ev->args[i];
		bool str = g->type == TFT_ARG_STR || g->type == TFT_ARG_JSON;
		bool num = g->type == TFT_ARG_INT || g->type == TFT_ARG_BOOL;
		int64_t iv = num ? g->v.i : g->type == TFT_ARG_DOUBLE ? (int64_t)g->v.d : 0;

		switch (key_class(w, g->key)) {
		case KC_OP: if (g->type == TFT_ARG_STR) a->op = g->v.str; break;
		case KC_NAME: if (g->type == TFT_ARG_STR) a->name = g->v.str; break;
		case KC_DIMS: if (str) a->dims = g->v.str; break;
		case KC_CONCRETE: if (str) a->concrete = g->v.str; break;
		case KC_INTYPE: if (str) a->intypes = g->v.str; break;
		case KC_FLOPS: if (num || g->type == TFT_ARG_DOUBLE) a->flops = iv, a->has_flops = true; break;
		case KC_SEQ: if (num) a->seq = iv, a->has_seq = true; break;
		case KC_FWD_TID: if (num) a->fwd_tid = iv, a->has_fwd_tid = true; break;
		case KC_MEMORY: if (str) a->mem = g->v.str; break;
		case KC_MEMSTATS: if (str) a->memstats = g->v.str; break;
		case KC_OUTPUT: if (str) a->output = g->v.str; break;
		case KC_INPUTS: if (str) a->inputs = g->v.str; break;
		case KC_NODE: if (g->type == TFT_ARG_STR) a->node = g->v.str; break;
		case KC_TF_OP: if (g->type == TFT_ARG_STR) a->tf_op = g->v.str; break;
		case KC_BYTES: if (num || g->type == TFT_ARG_DOUBLE) a->bytes = iv, a->has_bytes = true; break;
		case KC_STACK: if (g->type == TFT_ARG_STR) a->stack = g->v.str; break;
		default: break;
		}
	}
}

/* ---- caches of parsed args ---------------------------------------------------------- */

static struct memo *memo_slot(struct prof_worker *w, struct memo **tab, const uint32_t k[3], bool *found)
{
	uint32_t h;

	if (!*tab) {
		w->memo_cap = 1024;
		if (!(w->flops_memo = calloc(w->memo_cap, sizeof(struct memo))) ||
		    !(w->mem_memo = calloc(w->memo_cap, sizeof(struct memo))))
			return NULL;
	}
	h = (uint32_t)tft_hash_u64(((uint64_t)k[0] << 32 | k[1]) ^ ((uint64_t)k[2] << 17)) & (w->memo_cap - 1);
	for (uint32_t n = 0; n < 16; n++, h = (h + 1) & (w->memo_cap - 1)) {
		struct memo *m = &(*tab)[h];
		if (m->used && m->k[0] == k[0] && m->k[1] == k[1] && m->k[2] == k[2]) {
			*found = true;
			return m;
		}
		if (!m->used) {
			*found = false;
			return m;
		}
	}
	/* a full neighbourhood: overwrite the home slot (a cache may forget) */
	*found = false;
	return &(*tab)[(uint32_t)tft_hash_u64(((uint64_t)k[0] << 32 | k[1]) ^ ((uint64_t)k[2] << 17)) &
		       (w->memo_cap - 1)];
}

/* PyTorch flops of one call from its Input Dims (and Concrete Inputs), -1 when not counted. */
static int64_t torch_flops(struct prof_worker *w, uint32_t name, uint32_t dims, uint32_t concrete)
{
	uint32_t k[3] = { name, dims, concrete };
	struct pj_doc *d = NULL, *c = NULL;
	struct memo *m;
	const char *op;
	bool found;
	int64_t f = -1;
	size_t len;

	if (!dims)
		return -1;
	if (!(m = memo_slot(w, &w->flops_memo, k, &found))) {
		oom(w);
		return -1;
	}
	if (found)
		return m->v[0];
	op = sstr(w, name, NULL);
	if (tft_torch_has_flops(op)) {
		const char *t = sstr(w, dims, &len);
		d = tft_pj_parse(t, len);
		if (concrete) {
			t = sstr(w, concrete, &len);
			c = tft_pj_parse(t, len);
		}
		if (d)
			f = tft_torch_flops(op, tft_pj_root(d), c ? tft_pj_root(c) : NULL);
		tft_pj_free(d);
		tft_pj_free(c);
	}
	memcpy(m->k, k, sizeof(k));
	m->used = 1;
	m->v[0] = f;
	return f;
}

/*
 * tfprof's memory of one TF execution (ExecStep::AddMemoryStats): requested =
 * sum of the allocators' total_bytes + temp + persistent; peak = sum of
 * peak_bytes + temp + persistent; residual = sum of live_bytes + persistent;
 * output = sum over outputs of max(allocated, requested) bytes.
 */
static const int64_t *tf_memory(struct prof_worker *w, const struct argv *a)
{
	uint32_t k[3] = { a->mem, a->memstats, a->output };
	struct memo *m;
	bool found;
	int64_t req = 0, peak = 0, resid = 0, outb = 0, temp = 0, pers = 0;
	size_t len;
	const char *t;
	struct pj_doc *d;

	if (!(m = memo_slot(w, &w->mem_memo, k, &found))) {
		oom(w);
		return NULL;
	}
	if (found)
		return m->v;
	if (a->mem && (t = sstr(w, a->mem, &len)) && (d = tft_pj_parse(t, len))) {
		for (const struct pj *e = tft_pj_root(d)->type == PJ_ARR ? tft_pj_root(d)->child : NULL; e; e = e->next) {
			req += tft_pj_int(tft_pj_get(e, "total_bytes"), 0);
			peak += tft_pj_int(tft_pj_get(e, "peak_bytes"), 0);
			resid += tft_pj_int(tft_pj_get(e, "live_bytes"), 0);
		}
		tft_pj_free(d);
	}
	if (a->memstats && (t = sstr(w, a->memstats, &len)) && (d = tft_pj_parse(t, len))) {
		temp = tft_pj_int(tft_pj_get(tft_pj_root(d), "temp_memory_size"), 0);
		pers = tft_pj_int(tft_pj_get(tft_pj_root(d), "persistent_memory_size"), 0);
		tft_pj_free(d);
	}
	if (a->output && (t = sstr(w, a->output, &len)) && (d = tft_pj_parse(t, len))) {
		for (const struct pj *e = tft_pj_root(d)->type == PJ_ARR ? tft_pj_root(d)->child : NULL; e; e = e->next) {
			int64_t r = tft_pj_int(tft_pj_get(e, "requested_bytes"), 0), al = tft_pj_int(tft_pj_get(e, "allocated_bytes"), 0);
			outb += r > al ? r : al;
		}
		tft_pj_free(d);
	}
	memcpy(m->k, k, sizeof(k));
	m->used = 1;
	m->v[0] = req + temp + pers;
	m->v[1] = peak + temp + pers;
	m->v[2] = resid + pers;
	m->v[3] = outb;
	return m->v;
}

/* ---- steps ------------------------------------------------------------------------- */

/* Whether an execution starting at ts counts (the track's spans, by cursor: ts never goes back). */
static bool in_step(struct prof_worker *w, int64_t ts)
{
	if (w->p->steps.all)
		return true;
	while (w->si < w->nspans && w->spans[w->si]->end < ts)
		w->si++;
	/* spans may overlap (workers' steps): look at the few that start by ts */
	for (uint32_t i = w->si; i < w->nspans && w->spans[i]->start <= ts; i++)
		if (ts <= w->spans[i]->end)
			return true;
	return false;
}

/* ---- records ---------------------------------------------------------------------------- */

/* Record fields from the first execution that creates it. */
static void init_rec(struct prof_worker *w, uint32_t r, const struct argv *a, uint32_t op_sid, uint32_t cat_sid)
{
	struct prof_rec *rec = &w->tab.recs[r];

	if (rec->device)
		return; /* initialised (device is set on the first execution) */
	rec->device = w->track_dev;
	if (op_sid)
		rec->op = lid_of(w, op_sid);
	if (cat_sid)
		rec->cat = lid_of(w, cat_sid);
	if (a) {
		if (a->dims)
			rec->dims = lid_of(w, a->dims);
		if (a->concrete)
			rec->concrete = lid_of(w, a->concrete);
		if (a->intypes)
			rec->intypes = lid_of(w, a->intypes);
		if (a->output)
			rec->out_arg = lid_of(w, a->output);
		if (a->inputs)
			rec->in_arg = lid_of(w, a->inputs);
	}
}

static void emit(struct prof_worker *w, uint32_t rec, const struct tft_event *ev, bool accel);

/* The cell of an op at push: its record in context ctx and code node code. */
static uint32_t op_cell(struct prof_worker *w, const struct tft_event *ev, const struct argv *a, uint32_t ctx,
			uint32_t code, uint32_t *rec_out)
{
	uint32_t name_sid = ev->name, op_sid = ev->name, r, c;
	bool tf = a->op != 0;

	if (tf) {
		/* a TF op (RunMetadata, tf.timeline): named by its node, typed by its op, global */
		if (a->name)
			name_sid = a->name;
		op_sid = a->op;
		ctx = PROF_NONE;
		w->framework_tf = true;
	}
	r = tft_prof_rec_get(&w->tab, ctx, lid_of(w, name_sid), REC_OP);
	if (r == PROF_NONE) {
		oom(w);
		return PROF_NONE;
	}
	if (tf)
		w->tab.recs[r].tfname = 1;
	init_rec(w, r, a, op_sid, ev->cat);
	c = tft_prof_cell_get(&w->tab, r, code);
	if (c == PROF_NONE)
		oom(w);
	*rec_out = r;
	return c;
}

/* Count one execution of cell c (an op on the host): runs, flops, TF memory. */
static void count_op(struct prof_worker *w, uint32_t c, const struct tft_event *ev, const struct argv *a, bool counted)
{
	struct prof_acc *acc = &w->tab.cells[c].a;

	acc->seen++;
	if (!counted) {
		w->outside++;
		return;
	}
	w->executions++;
	acc->runs++;
	if (a->has_flops) {
		acc->flops += a->flops;
		w->framework_torch = true;
	} else if (a->dims) {
		int64_t f = torch_flops(w, ev->name, a->dims, a->concrete);
		if (f > 0)
			acc->flops += f;
	}
	if (a->mem || a->memstats || a->output) {
		const int64_t *m = tf_memory(w, a);
		if (m) {
			acc->req += m[0];
			acc->peak += m[1];
			acc->resid += m[2];
			acc->outb += m[3];
		}
	}
}

/* ---- flows: resolving a launch to the op that made it ------------------------------------ */

static void resolve_flow_stack(struct prof_worker *w, struct prof_flow *f)
{
	uint32_t launch = PROF_NONE;
	uint8_t launch_counted = 0;

	for (uint32_t i = w->nfr; i-- > 0;) {
		const struct frame *fr = &w->fr[i];
		if (fr->end < f->src_ts || fr->start > f->src_ts)
			continue;
		if (fr->cls == SC_OP) {
			f->cell = fr->cell;
			f->in_step = fr->counted;
			f->worker = (uint16_t)w->id;
			return;
		}
		if (fr->cls == SC_LAUNCH && launch == PROF_NONE) {
			launch = fr->cell;
			launch_counted = fr->counted;
		}
	}
	if (launch != PROF_NONE) {
		/* a runtime call outside any op (a bare cudaMemcpy): its own record takes the kernel */
		f->cell = launch;
		f->in_step = launch_counted;
		f->worker = (uint16_t)w->id;
	}
}

static void resolve_flow_lanes(struct prof_worker *w, struct prof_flow *f)
{
	const struct active *best = NULL;

	for (uint32_t i = 0; i < w->nact; i++) {
		const struct active *a = &w->act[i];
		if (a->start > f->src_ts || a->end < f->src_ts)
			continue;
		if (!best || (a->start == f->src_ts && best->start != f->src_ts) ||
		    (a->start > best->start && best->start != f->src_ts))
			best = a;
	}
	if (best) {
		f->cell = best->cell;
		f->in_step = best->counted;
		f->worker = (uint16_t)w->id;
	}
}

/* Resolve the flows of this track that start before ts (strictly, or at ts too with `incl`). */
static void resolve_flows(struct prof_worker *w, int64_t ts, bool incl)
{
	while (w->fi < w->nfsrc && (w->fsrc[w->fi]->src_ts < ts || (incl && w->fsrc[w->fi]->src_ts == ts))) {
		if (w->nests)
			resolve_flow_stack(w, w->fsrc[w->fi]);
		else
			resolve_flow_lanes(w, w->fsrc[w->fi]);
		w->fi++;
	}
}

/* ---- call-stack tracks --------------------------------------------------------------------- */

static void pop_frame(struct prof_worker *w)
{
	struct frame *fr = &w->fr[--w->nfr];

	if ((fr->cls == SC_OP || fr->cls == SC_LAUNCH) && fr->cell != PROF_NONE && fr->counted) {
		struct prof_acc *a = &w->tab.cells[fr->cell].a;
		int64_t self = fr->end - fr->start - fr->child_ns;
		a->cpu_ns += self > 0 ? self : 0;
		a->req += fr->mem_req;
		a->peak += fr->mem_peak;
		a->resid += fr->mem_cum > 0 ? fr->mem_cum : 0;
	}
}

static struct frame *push_frame(struct prof_worker *w)
{
	if (tft_grow((void **)&w->fr, &w->capfr, w->nfr + 1, sizeof(*w->fr))) {
		oom(w);
		return NULL;
	}
	memset(&w->fr[w->nfr], 0, sizeof(w->fr[0]));
	return &w->fr[w->nfr++];
}

/* The module path of frame fr's slice ("layer1.0" of "nn.Module: layer1.0"). */
static const char *module_path(struct prof_worker *w, uint32_t name_sid, size_t *len)
{
	size_t l;
	const char *s = sstr(w, name_sid, &l);

	*len = l - (sizeof(MODULE_PREFIX) - 1);
	return s + sizeof(MODULE_PREFIX) - 1;
}

/*
 * The record of an "nn.Module: X" slice in context ctx: X without the
 * enclosing module's path (and its '.'), each remaining '.'-separated part
 * one level (a module whose parents' forward calls were not traced still
 * lands at its path).
 */
static uint32_t module_rec(struct prof_worker *w, uint32_t ctx, uint32_t name_sid, const struct frame *enclosing)
{
	size_t len, plen;
	const char *x = module_path(w, name_sid, &len);
	uint32_t r = ctx;

	if (enclosing) {
		const char *px = module_path(w, enclosing->name, &plen);
		if (plen && len > plen && memcmp(x, px, plen) == 0 && x[plen] == '.') {
			x += plen + 1;
			len -= plen + 1;
		}
	}
	if (!len)
		return tft_prof_rec_get(&w->tab, ctx, tft_prof_lid(&w->tab, "(module)", 8), REC_MODULE);
	while (len) {
		const char *dot = memchr(x, '.', len);
		size_t sl = dot ? (size_t)(dot - x) : len;
		uint32_t lid = tft_prof_lid(&w->tab, x, sl);
		if (lid == PROF_NONE || (r = tft_prof_rec_get(&w->tab, r, lid, REC_MODULE)) == PROF_NONE) {
			oom(w);
			return PROF_NONE;
		}
		if (!w->tab.recs[r].device)
			w->tab.recs[r].device = w->track_dev;
		if (!dot)
			break;
		x = dot + 1;
		len -= sl + 1;
	}
	return r;
}

/*
 * The code node of an older Kineto trace's "Call stack" arg ("file(line):
 * func;..." innermost first), under `code` (the Python frames around the op,
 * usually none then).
 */
static uint32_t stack_code(struct prof_worker *w, uint32_t sid, uint32_t code)
{
	size_t len;
	const char *s, *end;
	uint32_t c = code;

	if (code == 0 && sid < w->nstr && w->stack_code && w->stack_code[sid])
		return w->stack_code[sid] - 1;
	s = sstr(w, sid, &len);
	end = s + len;
	/* outermost first: walk the frames from the end */
	while (end > s) {
		const char *b = end;
		while (b > s && b[-1] != ';')
			b--;
		if (end > b) {
			uint32_t lid = tft_prof_lid(&w->tab, b, (size_t)(end - b));
			uint32_t n = lid == PROF_NONE ? PROF_NONE : tft_prof_code_get(&w->tab, c, lid);
			if (n == PROF_NONE) {
				oom(w);
				return code;
			}
			c = n;
		}
		end = b > s ? b - 1 : s;
	}
	if (code == 0 && sid < w->nstr) {
		if (!w->stack_code && !(w->stack_code = calloc(w->nstr, sizeof(uint32_t))))
			return c;
		w->stack_code[sid] = c + 1;
	}
	w->has_code = true;
	return c;
}

static void memory_instant(struct prof_worker *w, const struct tft_event *ev)
{
	struct argv a;

	read_args(w, ev, &a);
	if (!a.has_bytes || !a.bytes)
		return;
	for (uint32_t i = w->nfr; i-- > 0;) {
		struct frame *fr = &w->fr[i];
		if (fr->end < ev->ts_ns || fr->start > ev->ts_ns)
			continue;
		if (fr->cls != SC_OP && fr->cls != SC_LAUNCH)
			continue;
		fr->mem_cum += a.bytes;
		if (a.bytes > 0)
			fr->mem_req += a.bytes;
		if (fr->mem_cum > fr->mem_peak)
			fr->mem_peak = fr->mem_cum;
		return;
	}
}

static int slice_class(struct prof_worker *w, const struct tft_event *ev)
{
	int nc = name_class(w, ev->name), cc = ev->cat ? cat_class(w, ev->cat) : CC_OP;

	if (nc == NC_STEP)
		return SC_STEP;
	if (nc == NC_MODULE)
		/*
		 * A session with model_params has the Python module's "nn.Module: <path>"
		 * slices (python_module): Kineto's own "nn.Module: Linear_0" frames
		 * (python_function, with_stack) are then code, not a second module tree.
		 */
		return cc == CC_PYFUNC && w->p->spec_modules ? SC_CODE : SC_MODULE;
	if (nc == NC_RANGE && cc != CC_PYFUNC)
		return SC_SCOPE;
	switch (cc) {
	case CC_PYFUNC: return SC_CODE;
	case CC_ANNOT: return SC_SCOPE;
	case CC_RUNTIME: return SC_LAUNCH;
	case CC_SKIP: return 0;
	default: return SC_OP;
	}
}

static void nest_slice(struct prof_worker *w, const struct tft_event *ev)
{
	int64_t end = ev->ts_ns + (ev->dur_ns > 0 ? ev->dur_ns : 0);
	struct frame *top = NULL, *fr, *enclosing_module = NULL;
	uint32_t ctx = PROF_NONE, code = 0, module_at = PROF_NONE;
	int cls;
	struct argv a;

	resolve_flows(w, ev->ts_ns, false);
	while (w->nfr > ev->depth)
		pop_frame(w);
	cls = slice_class(w, ev);
	if (!cls)
		return;
	if (w->nfr) {
		top = &w->fr[w->nfr - 1];
		int64_t c = (end < top->end ? end : top->end) - ev->ts_ns;
		top->child_ns += c > 0 ? c : 0;
		ctx = top->ctx;
		code = top->code;
		for (uint32_t i = w->nfr; i-- > 0;)
			if (w->fr[i].cls == SC_MODULE) {
				module_at = i;
				break;
			}
	}
	if (!(fr = push_frame(w)))
		return;
	/* (push_frame may have moved the stack) */
	top = w->nfr > 1 ? &w->fr[w->nfr - 2] : NULL;
	enclosing_module = module_at != PROF_NONE ? &w->fr[module_at] : NULL;
	fr->start = ev->ts_ns;
	fr->end = end;
	fr->ctx = ctx;
	fr->code = code;
	fr->cell = PROF_NONE;
	fr->rec = PROF_NONE;
	fr->last_op = PROF_NONE;
	fr->name = ev->name;
	fr->cls = (uint8_t)cls;
	switch (cls) {
	case SC_STEP:
		return;
	case SC_CODE:
		fr->code = tft_prof_code_get(&w->tab, code, lid_of(w, ev->name));
		if (fr->code == PROF_NONE)
			oom(w), fr->code = code;
		w->has_code = true;
		return;
	case SC_MODULE:
		fr->rec = module_rec(w, ctx, ev->name, enclosing_module);
		if (fr->rec != PROF_NONE)
			fr->ctx = fr->rec;
		w->framework_torch = true;
		return;
	case SC_SCOPE:
		fr->rec = tft_prof_rec_get(&w->tab, ctx, lid_of(w, ev->name), REC_SCOPE);
		if (fr->rec == PROF_NONE) {
			oom(w);
			return;
		}
		init_rec(w, fr->rec, NULL, 0, ev->cat);
		fr->ctx = fr->rec;
		return;
	default:
		break;
	}
	/* an op or a runtime call */
	read_args(w, ev, &a);
	if (ctx == PROF_NONE && a.has_seq && a.seq >= 0 && !a.op &&
	    (name_class(w, ev->name) == NC_BACKWARD || (a.has_fwd_tid && a.fwd_tid > 0))) {
		/*
		 * A backward op: in the scope of its forward op. Known here when the
		 * forward thread was scanned first (this worker's tracks of a process,
		 * in time order); otherwise placed after the scan, through a
		 * deferred context record (REC_BWDSEQ).
		 */
		/*
		 * (By number alone: "Fwd thread id" is the OS thread in newer traces and
		 * the profiler's own thread number in older ones.)
		 */
		int64_t ftid = 0;
		if (tft_prof_seq_take(&w->seq, ftid, a.seq, &ctx)) {
			w->bwd_next = 1;
		} else {
			char buf[40];
			int n = snprintf(buf, sizeof(buf), "#seq %" PRId64 ":%" PRId64, ftid, a.seq);
			ctx = tft_prof_rec_get(&w->tab, PROF_NONE, tft_prof_lid(&w->tab, buf, (size_t)n), REC_BWDSEQ);
			if (ctx == PROF_NONE) {
				oom(w);
				return;
			}
			w->tab.recs[ctx].seq = a.seq;
			w->tab.recs[ctx].fwd_tid = ftid;
		}
	}
	if (a.stack)
		fr->code = code = stack_code(w, a.stack, code);
	fr->counted = in_step(w, ev->ts_ns);
	fr->cell = op_cell(w, ev, &a, ctx, code, &fr->rec);
	if (fr->cell == PROF_NONE)
		return;
	fr->ctx = fr->rec;
	if (w->bwd_next || (ctx != PROF_NONE && w->tab.recs[ctx].kind == REC_BWDSEQ))
		w->tab.recs[fr->rec].bwd = 1;
	else if (a.has_seq && a.seq >= 0 && !(a.has_fwd_tid && a.fwd_tid > 0) && cls == SC_OP && ctx != PROF_NONE &&
		 (w->tab.recs[ctx].kind == REC_MODULE || w->tab.recs[ctx].kind == REC_SCOPE))
		/*
		 * A forward op in a scope: its backward ops go there. (An op nested in
		 * another shares its number; so does an op that makes no autograd node
		 * with the next one that does: the latest of a number is taken.)
		 */
		if (tft_prof_seq_note(&w->seq, a.seq, ev->ts_ns, ctx, code))
			oom(w);
	w->bwd_next = 0;
	/* the order of ops in their context (the graph view of a trace without a graph) */
	{
		uint32_t *last = top ? &top->last_op : &w->root_last_op;
		struct prof_rec *r = &w->tab.recs[fr->rec];
		if (r->prev == PROF_NONE && *last != PROF_NONE && *last != fr->rec)
			r->prev = *last;
		*last = fr->rec;
	}
	count_op(w, fr->cell, ev, &a, fr->counted);
	if (fr->counted)
		emit(w, fr->rec, ev, false);
}

/* ---- lane tracks (TF executors) --------------------------------------------------------------- */

static void lane_slice(struct prof_worker *w, const struct tft_event *ev)
{
	int64_t end = ev->ts_ns + (ev->dur_ns > 0 ? ev->dur_ns : 0);
	uint32_t rec, cell;
	struct argv a;
	int cls = slice_class(w, ev);
	bool counted;

	resolve_flows(w, ev->ts_ns, false);
	/* forget slices that ended before this one: no flow can start in them any more */
	for (uint32_t i = 0; i < w->nact;) {
		if (w->act[i].end < ev->ts_ns)
			w->act[i] = w->act[--w->nact];
		else
			i++;
	}
	if (cls != SC_OP && cls != SC_LAUNCH)
		return;
	read_args(w, ev, &a);
	counted = in_step(w, ev->ts_ns);
	cell = op_cell(w, ev, &a, PROF_NONE, 0, &rec);
	if (cell == PROF_NONE)
		return;
	if (w->root_last_op != PROF_NONE && w->root_last_op != rec && w->tab.recs[rec].prev == PROF_NONE &&
	    !w->tab.recs[rec].tfname)
		w->tab.recs[rec].prev = w->root_last_op;
	w->root_last_op = rec;
	count_op(w, cell, ev, &a, counted);
	if (counted) {
		w->tab.cells[cell].a.cpu_ns += end - ev->ts_ns;
		emit(w, rec, ev, false);
	}
	if (tft_grow((void **)&w->act, &w->capact, w->nact + 1, sizeof(*w->act))) {
		oom(w);
		return;
	}
	w->act[w->nact++] = (struct active){ .start = ev->ts_ns, .end = end, .cell = cell, .counted = counted };
	resolve_flows(w, ev->ts_ns, true);
}

/* ---- accelerator tracks --------------------------------------------------------------------- */

static void kernel_slice(struct prof_worker *w, const struct tft_event *ev)
{
	int64_t end = ev->ts_ns + (ev->dur_ns > 0 ? ev->dur_ns : 0);
	const struct prof_flow *f = NULL;
	uint32_t cell = PROF_NONE, rec = PROF_NONE;
	bool counted;
	struct argv a;

	while (w->fj < w->nfdst && w->fdst[w->fj]->dst_ts < ev->ts_ns)
		w->fj++;
	if (w->fj < w->nfdst && w->fdst[w->fj]->dst_ts <= end) {
		f = w->fdst[w->fj++];
		if (f->cell == PROF_NONE)
			f = NULL;
	}
	if (f) {
		/* the launching op's cell, in the worker that scanned its track */
		cell = f->worker == w->id ? f->cell
					  : tft_prof_cell_get(&w->tab, PROF_REMOTE_BIT | f->worker, f->cell);
		if (cell == PROF_NONE) {
			oom(w);
			return;
		}
		rec = f->worker == w->id ? w->tab.cells[cell].rec : PROF_NONE;
		counted = f->in_step;
		w->linked++;
	} else {
		uint32_t node;
		read_args(w, ev, &a);
		node = a.name ? a.name : a.node ? a.node : a.tf_op;
		if (node) {
			/* an annotation naming its TF node ("name" of tf.timeline, "node", XSpace's "tf_op" name:Op) */
			size_t len;
			const char *s = sstr(w, node, &len);
			const char *colon = node == a.tf_op ? memchr(s, ':', len) : NULL;
			uint32_t lid = tft_prof_lid(&w->tab, s, colon ? (size_t)(colon - s) : len);
			rec = lid == PROF_NONE ? PROF_NONE : tft_prof_rec_get(&w->tab, PROF_NONE, lid, REC_OP);
			if (rec != PROF_NONE) {
				w->tab.recs[rec].tfname = 1;
				if (!w->tab.recs[rec].op && a.op)
					w->tab.recs[rec].op = lid_of(w, a.op);
				w->linked++;
			}
		} else {
			rec = tft_prof_rec_get(&w->tab, PROF_NONE, lid_of(w, ev->name), REC_KERNEL);
			if (rec != PROF_NONE) {
				init_rec(w, rec, &a, ev->name, ev->cat);
				w->unlinked++;
			}
		}
		if (rec == PROF_NONE) {
			oom(w);
			return;
		}
		if (!w->tab.recs[rec].device)
			w->tab.recs[rec].device = w->track_dev;
		cell = tft_prof_cell_get(&w->tab, rec, 0);
		if (cell == PROF_NONE) {
			oom(w);
			return;
		}
		counted = in_step(w, ev->ts_ns);
	}
	w->tab.cells[cell].a.seen++;
	if (!counted) {
		w->outside++;
		return;
	}
	w->executions++;
	w->tab.cells[cell].a.acc_ns += end - ev->ts_ns;
	{
		/* the kernel by name under its launching cell (the roofline's kernel rows) */
		bool remote = f && f->worker != w->id;
		uint32_t kc = tft_prof_kcell_get(&w->tab, remote ? f->cell : cell, remote ? f->worker + 1u : 0,
					     lid_of(w, ev->name));
		if (kc == PROF_NONE) {
			oom(w);
			return;
		}
		w->tab.kcells[kc].ns += end - ev->ts_ns;
		w->tab.kcells[kc].n++;
		if (!w->tab.kcells[kc].device)
			w->tab.kcells[kc].device = w->track_dev;
	}
	if (rec != PROF_NONE)
		emit(w, rec, ev, true);
}

/* ---- the second pass: executions of wanted records ------------------------------------------- */

/*
 * The merged record of local record r, or PROF_NONE. A backward op's
 * deferred context record (REC_BWDSEQ) stands for the forward op's context that the model
 * pass put its records under.
 */
static uint32_t global_rec(struct prof_worker *w, uint32_t r)
{
	const struct prof_tab *g = &w->p->tab;
	const struct prof_rec *lr;
	uint32_t gp = PROF_NONE, lid, gr;
	const char *s;
	size_t len;

	if (r < w->ngmap && w->gmap[r])
		return w->gmap[r] - 1;
	lr = &w->tab.recs[r];
	s = tft_strtab_get(w->tab.str, lr->name, &len);
	lid = s ? tft_strtab_find(g->str, s, len) : UINT32_MAX;
	if (lid == UINT32_MAX || lr->kind == REC_BWDSEQ)
		return PROF_NONE;
	if (lr->parent != PROF_NONE) {
		const struct prof_rec *lp = &w->tab.recs[lr->parent];
		if (lp->kind == REC_BWDSEQ) {
			const char *ps = tft_strtab_get(w->tab.str, lp->name, &len);
			uint32_t plid = ps ? tft_strtab_find(g->str, ps, len) : UINT32_MAX;
			uint32_t gph = plid == UINT32_MAX ? PROF_NONE : tft_prof_rec_find(g, PROF_NONE, plid, REC_BWDSEQ);
			if (gph == PROF_NONE)
				return PROF_NONE;
			gp = g->recs[gph].fwd;
		} else if ((gp = global_rec(w, lr->parent)) == PROF_NONE) {
			return PROF_NONE;
		}
	}
	gr = tft_prof_rec_find(g, gp, lid, lr->kind);
	while (gr != PROF_NONE && g->recs[gr].redirect != PROF_NONE)
		gr = g->recs[gr].redirect;
	if (gr == PROF_NONE)
		return PROF_NONE;
	if (r >= w->ngmap && tft_grow_ex((void **)&w->gmap, &w->ngmap, (uint64_t)r + 1, sizeof(*w->gmap), 1024, 1))
		return gr;

	w->gmap[r] = gr + 1;
	return gr;
}

static void emit(struct prof_worker *w, uint32_t rec, const struct tft_event *ev, bool accel)
{
	struct tft_prof_exec e;
	uint32_t g;

	if (!w->fn || w->rc)
		return;
	g = global_rec(w, rec);
	if (g == PROF_NONE || !w->want[g])
		return;
	e = (struct tft_prof_exec){ .record = g, .track = w->track, .ts_ns = ev->ts_ns, .dur_ns = ev->dur_ns,
				    .name = ev->name, .depth = ev->depth, .accelerator = accel };
	w->rc = w->fn(w->fn_ctx, &e);
}

/* ---- one track ------------------------------------------------------------------------------ */

static int on_event(void *ctx, const struct tft_event *ev)
{
	struct prof_worker *w = ctx;

	if (ev->flags & TFT_EVF_SUMMARY)
		return 0;
	if (ev->kind == TFT_EV_INSTANT) {
		if (w->nests && name_class(w, ev->name) == NC_MEMORY)
			memory_instant(w, ev);
		return w->rc;
	}
	if (ev->kind != TFT_EV_SLICE)
		return 0;
	if (w->accel)
		kernel_slice(w, ev);
	else if (w->nests)
		nest_slice(w, ev);
	else
		lane_slice(w, ev);
	return w->rc;
}

/* The device a track's executions ran on. */
static uint32_t track_device(struct prof_worker *w, const struct tft_track *t)
{
	const struct tft_process *pr = tft_session_process(w->s, t->process);
	const char *tn = sstr(w, t->name, NULL), *pn = pr ? sstr(w, pr->name, NULL) : "";
	char buf[512];
	const char *src;
	size_t n;

	if (t->kind == TFT_TRACK_THREAD || t->kind == TFT_TRACK_ASYNC)
		return tft_prof_lid(&w->tab, "cpu", 3);
	src = tn[0] == '/' ? tn : pn[0] ? pn : tn;
	snprintf(buf, sizeof(buf), "%s", src);
	/* "/gpu:0/stream:12 Compute" (tf.timeline), "/device:GPU:0/stream:7", "... /memcpy" */
	n = strlen(buf);
	if (n > 8 && strcmp(buf + n - 8, " Compute") == 0)
		buf[n -= 8] = '\0';
	char *st = strstr(buf, "/stream:");
	if (!st)
		st = strstr(buf, "/memcpy");
	if (st && buf[0] == '/')
		*st = '\0';
	n = strlen(buf);
	return tft_prof_lid(&w->tab, buf, n);
}

int tft_prof_scan_track(struct prof_worker *w, const struct prof_phase *ph, uint32_t tid)
{
	const struct tft_track *t = tft_session_track(w->s, tid);
	int rc;

	w->track = tid;
	w->accel = t->kind == TFT_TRACK_GPU_STREAM;
	w->nests = tft_track_nests(t->kind, t->flags);
	w->track_dev = track_device(w, t);
	w->track_proc = t->process;
	w->root_last_op = PROF_NONE;
	w->nfr = w->nact = 0;
	/* flows starting here (host tracks) and ending here (accelerator tracks) */
	w->fsrc = tft_prof_flows_of(ph->fx, tid, true, &w->nfsrc);
	w->fi = 0;
	w->fdst = tft_prof_flows_of(ph->fx, tid, false, &w->nfdst);
	w->fj = 0;
	/* the step spans of its process (accelerator tracks: any process's, see in_step_any) */
	free(w->spans);
	w->spans = NULL;
	w->nspans = 0;
	w->si = 0;
	if (!w->p->steps.all) {
		w->spans = malloc(sizeof(*w->spans) * (ph->nspans + 1));
		if (!w->spans)
			return oom(w);
		/* an accelerator track counts by time in any process's steps (a GPU is a process of its own) */
		for (uint32_t k = 0; k < ph->nspans; k++)
			if (w->accel || ph->spans[k]->process == TFT_NONE || ph->spans[k]->process == t->process)
				w->spans[w->nspans++] = ph->spans[k];
	}
	rc = tft_session_scan(w->s, tid, INT64_MIN, INT64_MAX, 0, on_event, w, &w->err);
	if (rc < 0 && !w->rc)
		w->rc = rc;
	if (w->rc)
		return w->rc;
	resolve_flows(w, INT64_MAX, true);
	while (w->nfr)
		pop_frame(w);
	return w->rc;
}

/* ---- workers --------------------------------------------------------------------------------- */

int tft_prof_worker_init(struct prof_worker *w, struct tft_prof *p, int id)
{
	memset(w, 0, sizeof(*w));
	w->p = p;
	w->id = id;
	tft_error_clear(&w->err);
	if (id == 0) {
		w->s = p->s;
	} else {
		w->s = tft_session_open(tft_session_path(p->s), &w->err);
		if (!w->s)
			return w->err.code ? w->err.code : TFT_EIO;
		w->own_session = true;
	}
	if (tft_prof_tab_init(&w->tab))
		return TFT_ENOMEM;
	w->nstr = tft_session_string_count(w->s);
	w->lid_of = calloc(w->nstr ? w->nstr : 1, sizeof(uint32_t));
	w->ncls = calloc(w->nstr ? w->nstr : 1, 1);
	w->ccls = calloc(w->nstr ? w->nstr : 1, 1);
	w->kcls = calloc(w->nstr ? w->nstr : 1, 1);
	if (!w->lid_of || !w->ncls || !w->ccls || !w->kcls)
		return TFT_ENOMEM;
	return 0;
}

void tft_prof_worker_fini(struct prof_worker *w)
{
	if (w->own_session)
		tft_session_close(w->s);
	tft_prof_tab_fini(&w->tab);
	free(w->lid_of);
	free(w->stack_code);
	free(w->ncls);
	free(w->ccls);
	free(w->kcls);
	free(w->flops_memo);
	free(w->mem_memo);
	free(w->fr);
	free(w->act);
	tft_prof_seq_free(&w->seq);
	free(w->tracks);
	free(w->spans);
	free(w->gmap);
}

