/* SPDX-License-Identifier: MIT */
/*
 * The model pass of tftracer prof, after the scan: what a session says of
 * its graph nodes besides their executions. TF: the GraphDef's nodes (those
 * that never ran too: variables), their inputs (the graph view), parameters
 * from a variable's shape, float ops by tfprof's rules or the OpLog's, the
 * OpLog's op types and code. PyTorch: the model_params meta (docs
 * /work/notes: one record per module and parameter), backward ops placed
 * in their forward op's scope. Then each record's per-step sums and its
 * execution subtree's.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/prof_int.h"
#include "analyze/prof_json.h"
#include "analyze/tf_costs.h"
#include "core/grow.h"
#include "store/graph.h"

/* What the graph says of one record (lids of the global string table, 0 = none). */
struct ginfo {
	uint32_t attrs, inputs, out_shapes, op_types, code;
	int64_t float_ops;   /* the OpLog's, or -1 */
	bool graph;
};

struct model {
	struct tft_prof *p;
	struct ginfo *gi;    /* owned, per record */
	uint32_t capgi;
	struct tft_error *err;
	int rc;
};

static struct ginfo *ginfo(struct model *m, uint32_t r)
{
	if (r >= m->capgi) {
		uint32_t old = m->capgi;
		if (tft_grow_ex((void **)&m->gi, &m->capgi, (uint64_t)r + 1, sizeof(*m->gi), 1024, 0))
			return NULL;
		for (uint32_t i = old; i < m->capgi; i++)
			m->gi[i] = (struct ginfo){ .float_ops = -1 };
	}

	return &m->gi[r];
}

static uint32_t lid(struct tft_prof *p, const char *s, size_t len)
{
	return s ? tft_prof_lid(&p->tab, s, len) : 0;
}

static uint32_t lidz(struct tft_prof *p, const char *s)
{
	return s ? tft_prof_lid(&p->tab, s, strlen(s)) : 0;
}

/* ---- backward ops: into their forward op's scope -------------------------------------- */

static uint32_t final_rec(const struct prof_tab *t, uint32_t r)
{
	while (r != PROF_NONE && t->recs[r].redirect != PROF_NONE)
		r = t->recs[r].redirect;
	return r;
}

static int place_backward(struct tft_prof *p)
{
	struct prof_tab *t = &p->tab;
	uint32_t n = t->nrecs;

	for (uint32_t r = 0; r < n; r++) {
		struct prof_rec x = t->recs[r];
		uint32_t np, nr;

		if (x.kind == REC_BWDSEQ || x.parent == PROF_NONE)
			continue;
		if (t->recs[x.parent].kind == REC_BWDSEQ)
			np = t->recs[x.parent].fwd;
		else if (t->recs[x.parent].redirect != PROF_NONE)
			np = final_rec(t, x.parent);
		else
			continue;
		nr = tft_prof_rec_get(t, np, x.name, x.kind);
		if (nr == PROF_NONE)
			return TFT_ENOMEM;
		if (nr == r)
			continue;
		struct prof_rec *y = &t->recs[nr], *old = &t->recs[r];
		if (!y->device) {
			y->device = old->device;
			y->op = old->op;
			y->cat = old->cat;
			y->dims = old->dims;
			y->concrete = old->concrete;
			y->intypes = old->intypes;
		}
		y->bwd = 1;
		y->tfname |= old->tfname;
		old->redirect = nr;
	}
	/* the cells of moved records */
	uint32_t nc = t->ncells;
	for (uint32_t c = 0; c < nc; c++) {
		uint32_t fr = final_rec(t, t->cells[c].rec);
		if (fr == t->cells[c].rec)
			continue;
		uint32_t k = tft_prof_cell_get(t, fr, t->cells[c].code);
		if (k == PROF_NONE)
			return TFT_ENOMEM;
		tft_prof_acc_add(&t->cells[k].a, &t->cells[c].a);
		memset(&t->cells[c].a, 0, sizeof(t->cells[c].a));
	}
	for (uint32_t r = 0; r < t->nrecs; r++)
		if (t->recs[r].prev != PROF_NONE)
			t->recs[r].prev = final_rec(t, t->recs[r].prev);
	return 0;
}

/* ---- TF graphs ---------------------------------------------------------------------- */

static bool text_eq(const struct tft_graph_text *t, const char *s)
{
	return t->p && t->len == strlen(s) && memcmp(t->p, s, t->len) == 0;
}

static uint32_t text_lid(struct tft_prof *p, const struct tft_graph_text *t)
{
	return t->p && t->len ? lid(p, t->p, t->len) : 0;
}

static int on_graph_node(void *ctx, const struct tft_graph_node *n, int64_t graph_id)
{
	struct model *m = ctx;
	struct tft_prof *p = m->p;
	uint32_t r, nl;
	struct ginfo *g;
	bool oplog = text_eq(&n->kind, "oplog");

	(void)graph_id;
	if (!n->name.p || !n->name.len)
		return 0;
	if (!oplog && !text_eq(&n->kind, "graphdef") && !text_eq(&n->kind, "function_node"))
		return 0; /* cost nodes and function signatures are no graph nodes of their own */
	nl = lid(p, n->name.p, n->name.len);
	if (oplog) {
		/* tfprof attaches an OpLog entry only to a node the graph or the run has */
		r = tft_prof_rec_find(&p->tab, PROF_NONE, nl, REC_OP);
		p->info.has_oplog = true;
		if (r == PROF_NONE)
			return 0;
	} else {
		r = tft_prof_rec_get(&p->tab, PROF_NONE, nl, REC_OP);
		p->info.has_graph = true;
	}
	if (r == PROF_NONE || !(g = ginfo(m, r))) {
		m->rc = TFT_ENOMEM;
		return 1;
	}
	struct prof_rec *x = &p->tab.recs[r];
	x->tfname = 1;
	if (!x->op && n->op.p)
		x->op = text_lid(p, &n->op);
	if (!x->device && n->device.p && n->device.len)
		x->device = text_lid(p, &n->device);
	if (!oplog) {
		g->graph = true;
		if (!g->attrs)
			g->attrs = text_lid(p, &n->attrs);
		if (!g->inputs)
			g->inputs = text_lid(p, &n->inputs);
		if (!g->out_shapes)
			g->out_shapes = text_lid(p, &n->output_shapes);
	}
	/* readers give a graph row the OpLog's columns of its name too */
	if (!g->op_types && n->op_types.p)
		g->op_types = text_lid(p, &n->op_types);
	if (!g->code && n->code.p)
		g->code = text_lid(p, &n->code);
	if (g->float_ops < 0 && n->float_ops != TFT_GRAPH_NO_COST)
		g->float_ops = n->float_ops;
	return 0;
}

static struct pj_doc *parse_lid(struct tft_prof *p, uint32_t l)
{
	size_t len;
	const char *s;

	if (!l)
		return NULL;
	s = tft_strtab_get(p->tab.str, l, &len);
	return s ? tft_pj_parse(s, len) : NULL;
}

/* A shape from a JSON value: dims array (-1 unknown) or null. */
static void shape_of(const struct pj *v, struct tft_shape *s)
{
	memset(s, 0, sizeof(*s));
	if (!v || v->type != PJ_ARR)
		return;
	s->n = tft_pj_dims(v, s->d, TFT_SHAPE_MAX_DIMS);
	s->known = s->n >= 0;
	if (!s->known)
		s->n = 0;
}

/* Output `port` of record r: from the graph's _output_shapes, else the run's "output" arg. */
static void output_shape(struct model *m, uint32_t r, int port, struct tft_shape *s)
{
	struct tft_prof *p = m->p;
	struct pj_doc *d;

	memset(s, 0, sizeof(*s));
	if (r == PROF_NONE)
		return;
	if (r < m->capgi && m->gi[r].out_shapes && (d = parse_lid(p, m->gi[r].out_shapes))) {
		shape_of(tft_pj_at(tft_pj_root(d), (uint32_t)port), s);
		tft_pj_free(d);
		if (s->known && tft_shape_numel(s) >= 0)
			return;
	}
	if (p->tab.recs[r].out_arg && (d = parse_lid(p, p->tab.recs[r].out_arg))) {
		for (const struct pj *o = tft_pj_root(d)->type == PJ_ARR ? tft_pj_root(d)->child : NULL; o; o = o->next)
			if (tft_pj_int(tft_pj_get(o, "slot"), 0) == port) {
				struct tft_shape t;
				shape_of(tft_pj_get(o, "shape"), &t);
				if (t.known)
					*s = t;
				break;
			}
		tft_pj_free(d);
	}
}

/* "name:1" -> name, port 1; "^ctrl" -> skipped (returns false); "f:out:0" (a function body) -> f, 0. */
static bool parse_input(const char *in, size_t len, size_t *name_len, int *port)
{
	const char *colon;

	if (!len || in[0] == '^')
		return false;
	colon = memchr(in, ':', len);
	*port = 0;
	*name_len = len;
	if (colon) {
		*name_len = (size_t)(colon - in);
		const char *c2 = memchr(colon + 1, ':', len - *name_len - 1);
		if (!c2)
			*port = atoi(colon + 1);
	}
	return true;
}

static void format_shape(const struct tft_shape *s, char *buf, size_t size)
{
	size_t n = 0;

	buf[0] = '\0';
	if (s->known && s->n == 0)
		snprintf(buf, size, "1"); /* tfprof: a scalar's shape is [1] */
	for (int i = 0; i < s->n && n < size; i++)
		n += (size_t)snprintf(buf + n, size - n, "%s%" PRId64, i ? "x" : "", s->d[i]);
}

static int add_type(struct tft_prof *p, uint32_t r, uint32_t t)
{
	struct prof_static *st = &p->st[r];

	if (!t)
		return 0;
	for (uint32_t i = 0; i < st->ntypes; i++)
		if (p->types[st->types + i] == t)
			return 0;
	if (!st->ntypes)
		st->types = p->ntypes;
	else if (st->types + st->ntypes != p->ntypes)
		return 0; /* (types are added record by record) */
	if (tft_prof_push(&p->types, &p->ntypes, &p->captypes, t) == PROF_NONE)
		return TFT_ENOMEM;
	st->ntypes++;
	return 0;
}

/* Inputs, shapes, parameters, float ops and types of TF record r. */
static int tf_record(struct model *m, uint32_t r)
{
	struct tft_prof *p = m->p;
	struct prof_rec *x = &p->tab.recs[r];
	struct prof_static *st = &p->st[r];
	struct ginfo *g = r < m->capgi ? &m->gi[r] : NULL;
	struct pj_doc *attrs = NULL, *inputs = NULL;
	struct tft_shape in[16], out;
	int nin = 0;
	char buf[1024], sh[128];
	size_t bl = 0;
	const char *op = x->op ? tft_prof_str(&p->tab, x->op) : "";

	if (g && g->attrs)
		attrs = parse_lid(p, g->attrs);
	inputs = parse_lid(p, g && g->inputs ? g->inputs : x->in_arg);
	buf[0] = '\0';
	for (const struct pj *i = inputs && tft_pj_root(inputs)->type == PJ_ARR ? tft_pj_root(inputs)->child : NULL; i;
	     i = i->next) {
		size_t nl;
		int port;
		uint32_t src, l;
		if (i->type != PJ_STR || !parse_input(i->s, i->len, &nl, &port))
			continue;
		l = tft_strtab_find(p->tab.str, i->s, nl);
		src = l == UINT32_MAX ? PROF_NONE : tft_prof_rec_find(&p->tab, PROF_NONE, l, REC_OP);
		if (src != PROF_NONE && src != r) {
			if (!st->ninputs)
				st->inputs = p->ninputs;
			if (st->inputs + st->ninputs == p->ninputs &&
			    tft_prof_push(&p->inputs, &p->ninputs, &p->capinputs, src) != PROF_NONE)
				st->ninputs++;
		}
		if (nin < 16) {
			output_shape(m, src, port, &in[nin]);
			format_shape(&in[nin], sh, sizeof(sh));
			if (bl < sizeof(buf))
				bl += (size_t)snprintf(buf + bl, sizeof(buf) - bl, "%s%d:%s", bl ? "|" : "", nin,
						       in[nin].known && tft_shape_numel(&in[nin]) >= 0 ? sh : "unknown");
			nin++;
		}
	}
	if (bl >= sizeof(buf))
		bl = sizeof(buf) - 1;
	if (bl)
		st->in_shapes = lid(p, buf, bl);
	/* parameters: a variable's "shape" attr, as tfprof (a scalar is 1, an unknown dim 0) */
	if (tft_tf_is_variable(op) && attrs) {
		struct tft_shape vs;
		shape_of(tft_pj_get(tft_pj_root(attrs), "shape"), &vs);
		int64_t n = vs.known ? tft_shape_numel(&vs) : -1;
		st->params = n >= 0 ? n : 0;
		if (vs.known) {
			format_shape(&vs, sh, sizeof(sh));
			st->shape = lidz(p, sh);
		}
	}
	/* float ops: the OpLog's (what write_op_log computed), else tfprof's rules */
	if (g && g->float_ops >= 0) {
		st->flops = g->float_ops;
	} else if (tft_tf_has_flops(op)) {
		output_shape(m, r, 0, &out);
		st->flops = tft_tf_flops(op, attrs ? tft_pj_root(attrs) : NULL, in, nin, &out);
	}
	tft_pj_free(attrs);
	tft_pj_free(inputs);
	/* op types: the op, its device, and what the OpLog adds (_trainable_variables ...) */
	if (add_type(p, r, x->op) || add_type(p, r, x->device))
		return TFT_ENOMEM;
	if (g && g->op_types) {
		struct pj_doc *d = parse_lid(p, g->op_types);
		for (const struct pj *t = d && tft_pj_root(d)->type == PJ_ARR ? tft_pj_root(d)->child : NULL; t; t = t->next)
			if (t->type == PJ_STR && add_type(p, r, lid(p, t->s, t->len))) {
				tft_pj_free(d);
				return TFT_ENOMEM;
			}
		tft_pj_free(d);
	}
	return 0;
}

/* "path/to/file.py:42:func" -> "file.py:42:func" (tfprof's code view names a frame by its file's base name) */
static uint32_t frame_lid(struct tft_prof *p, const char *s, size_t len, const char *suffix)
{
	char buf[1024];
	const char *colon = memchr(s, ':', len), *base = s;

	for (const char *q = s; q < (colon ? colon : s + len); q++)
		if (*q == '/')
			base = q + 1;
	int n = snprintf(buf, sizeof(buf), "%.*s%s", (int)(len - (size_t)(base - s)), base, suffix);
	return lid(p, buf, n < (int)sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

/* The code path of TF record r from its OpLog frames (outermost first). */
static uint32_t code_path(struct tft_prof *p, uint32_t code_json, const char *suffix)
{
	struct pj_doc *d = parse_lid(p, code_json);
	uint32_t c = 0;

	for (const struct pj *f = d && tft_pj_root(d)->type == PJ_ARR ? tft_pj_root(d)->child : NULL; f; f = f->next) {
		if (f->type != PJ_STR)
			continue;
		uint32_t nc = tft_prof_code_get(&p->tab, c, frame_lid(p, f->s, f->len, suffix));
		if (nc == PROF_NONE)
			break;
		c = nc;
	}
	tft_pj_free(d);
	return c;
}

/* tfprof's IsGradNode: "...gradients/X_grad/..." is X's gradient. */
static bool grad_forward(const char *name, const char **fwd, size_t *len)
{
	const char *g = strstr(name, "gradients/"), *e = strstr(name, "_grad/");

	if (!g || !e || e <= g + 10)
		return false;
	*fwd = g + 10;
	*len = (size_t)(e - *fwd);
	return true;
}

static int tf_code(struct model *m)
{
	struct tft_prof *p = m->p;
	uint32_t n = p->tab.nrecs;

	for (uint32_t r = 0; r < n && r < m->capgi; r++)
		if (m->gi[r].code) {
			p->st[r].code_leaf = code_path(p, m->gi[r].code, "");
			p->info.has_code = true;
		}
	for (uint32_t r = 0; r < n; r++) {
		const char *fwd;
		size_t fl;
		if (p->st[r].code_leaf || !p->tab.recs[r].tfname)
			continue;
		if (!grad_forward(tft_prof_str(&p->tab, p->tab.recs[r].name), &fwd, &fl))
			continue;
		uint32_t l = tft_strtab_find(p->tab.str, fwd, fl);
		uint32_t f = l == UINT32_MAX ? PROF_NONE : tft_prof_rec_find(&p->tab, PROF_NONE, l, REC_OP);
		if (f != PROF_NONE && f < m->capgi && m->gi[f].code)
			p->st[r].code_leaf = code_path(p, m->gi[f].code, " (gradient)");
	}
	return 0;
}

/* ---- PyTorch: model_params ----------------------------------------------------------------- */

/* The record of a model's root module "name": where the trace has it, else at the root. */
static uint32_t model_root(struct tft_prof *p, const char *name)
{
	uint32_t l = lidz(p, name);

	for (uint32_t r = 0; r < p->tab.nrecs; r++) {
		const struct prof_rec *x = &p->tab.recs[r];
		if (x->kind == REC_MODULE && x->name == l && x->redirect == PROF_NONE &&
		    (x->parent == PROF_NONE || p->tab.recs[x->parent].kind != REC_MODULE))
			return r;
	}
	return tft_prof_rec_get(&p->tab, PROF_NONE, l, REC_MODULE);
}

static int grow_static(struct tft_prof *p, uint32_t n)
{
	static const struct prof_static init = { .params = -1, .flops = -1 };
	struct prof_static *st;

	if (p->st && n < p->nst)
		return 0;
	if (tft_grow((void **)&p->st, &p->cst, (uint64_t)n + 1, sizeof(*st)))
		return TFT_ENOMEM;
	st = p->st;
	for (uint32_t i = p->nst; i <= n; i++)
		st[i] = init;
	p->nst = n + 1;
	return 0;
}

static int torch_params(struct model *m, const char *meta)
{
	struct tft_prof *p = m->p;
	struct pj_doc *d = tft_pj_parse(meta, strlen(meta));
	const struct pj *models;
	int rc = 0;

	if (!d)
		return 0; /* unreadable: the views go on without parameters */
	models = tft_pj_get(tft_pj_root(d), "models");
	for (const struct pj *md = models && models->type == PJ_ARR ? models->child : NULL; md && !rc; md = md->next) {
		const struct pj *nm = tft_pj_get(md, "name"), *mods = tft_pj_get(md, "modules"), *cls = tft_pj_get(md, "class");
		uint32_t root = model_root(p, nm && nm->type == PJ_STR ? nm->s : "model");

		if (root == PROF_NONE || grow_static(p, p->tab.nrecs)) {
			rc = TFT_ENOMEM;
			break;
		}
		if (cls && cls->type == PJ_STR && !p->tab.recs[root].op)
			p->tab.recs[root].op = lid(p, cls->s, cls->len);
		p->info.has_model_params = true;
		if (!p->framework[0])
			snprintf(p->framework, sizeof(p->framework), "pytorch");
		for (const struct pj *mo = mods && mods->type == PJ_ARR ? mods->child : NULL; mo && !rc; mo = mo->next) {
			const struct pj *path = tft_pj_get(mo, "path"), *mc = tft_pj_get(mo, "class"), *params = tft_pj_get(mo, "parameters");
			uint32_t r = root;
			const char *x = path && path->type == PJ_STR ? path->s : "";
			size_t len = strlen(x);

			while (len && r != PROF_NONE) {
				const char *dot = memchr(x, '.', len);
				size_t sl = dot ? (size_t)(dot - x) : len;
				r = tft_prof_rec_get(&p->tab, r, lid(p, x, sl), REC_MODULE);
				if (!dot)
					break;
				x = dot + 1;
				len -= sl + 1;
			}
			if (r == PROF_NONE || grow_static(p, p->tab.nrecs)) {
				rc = TFT_ENOMEM;
				break;
			}
			if (mc && mc->type == PJ_STR && !p->tab.recs[r].op)
				p->tab.recs[r].op = lid(p, mc->s, mc->len);
			if (!params || params->type != PJ_ARR) {
				int64_t own = tft_pj_int(tft_pj_get(mo, "params"), 0);
				if (own > 0)
					p->st[r].params = own;
				continue;
			}
			for (const struct pj *pa = params->child; pa && !rc; pa = pa->next) {
				const struct pj *pn = tft_pj_get(pa, "name"), *shape = tft_pj_get(pa, "shape"), *dt = tft_pj_get(pa, "dtype");
				const struct pj *tr = tft_pj_get(pa, "trainable");
				uint32_t q;
				struct tft_shape s;
				char sh[128];
				if (!pn || pn->type != PJ_STR)
					continue;
				q = tft_prof_rec_get(&p->tab, r, lid(p, pn->s, pn->len), REC_PARAM);
				if (q == PROF_NONE || grow_static(p, p->tab.nrecs)) {
					rc = TFT_ENOMEM;
					break;
				}
				shape_of(shape, &s);
				p->st[q].params = tft_pj_int(tft_pj_get(pa, "numel"), s.known ? tft_shape_numel(&s) : 0);
				if (s.known) {
					format_shape(&s, sh, sizeof(sh));
					p->st[q].shape = lidz(p, sh);
				}
				p->tab.recs[q].op = lidz(p, "Parameter");
				p->tab.recs[q].device = p->tab.recs[r].device;
				p->st[q].ptypes[0] = dt && dt->type == PJ_STR ? lid(p, dt->s, dt->len) : 0;
				p->st[q].ptypes[1] = tr && tr->type == PJ_FALSE ? 0 : lidz(p, "_trainable_variables");
			}
		}
	}
	tft_pj_free(d);
	return rc;
}

/* ---- PyTorch (and other traces): inputs by order, input shapes, types --------------------------- */

static int trace_record(struct tft_prof *p, uint32_t r)
{
	struct prof_rec *x = &p->tab.recs[r];
	struct prof_static *st = &p->st[r];

	if (x->prev != PROF_NONE && !x->tfname) {
		st->inputs = p->ninputs;
		if (tft_prof_push(&p->inputs, &p->ninputs, &p->capinputs, x->prev) == PROF_NONE)
			return TFT_ENOMEM;
		st->ninputs = 1;
	}
	if (x->dims && !st->in_shapes) {
		struct pj_doc *d = parse_lid(p, x->dims);
		char buf[1024], sh[128];
		size_t bl = 0;
		uint32_t i = 0;
		for (const struct pj *e = d && tft_pj_root(d)->type == PJ_ARR ? tft_pj_root(d)->child : NULL; e; e = e->next, i++) {
			struct tft_shape s;
			shape_of(e, &s);
			if (!s.known || !s.n)
				continue; /* not a tensor (a scalar argument, None) */
			format_shape(&s, sh, sizeof(sh));
			if (bl < sizeof(buf))
				bl += (size_t)snprintf(buf + bl, sizeof(buf) - bl, "%s%u:%s", bl ? "|" : "", i, sh);
		}
		tft_pj_free(d);
		if (bl >= sizeof(buf))
			bl = sizeof(buf) - 1;
		if (bl)
			st->in_shapes = lid(p, buf, bl);
	}
	if (add_type(p, r, x->op ? x->op : x->kind == REC_KERNEL || x->kind == REC_OP ? x->name : 0) ||
	    add_type(p, r, x->device) || add_type(p, r, x->cat))
		return TFT_ENOMEM;
	if (x->kind == REC_MODULE && add_type(p, r, lidz(p, "nn.Module")))
		return TFT_ENOMEM;
	if (add_type(p, r, st->ptypes[0]) || add_type(p, r, st->ptypes[1]))
		return TFT_ENOMEM;
	return 0;
}

/* ---- sums ------------------------------------------------------------------------------------------ */

static int sums(struct tft_prof *p)
{
	struct prof_tab *t = &p->tab;
	uint32_t n = t->nrecs;
	int64_t *seen = calloc(n + 1, sizeof(int64_t));

	free(p->self);
	free(p->incl);
	free(p->order);
	free(p->kids);
	free(p->kid_first);
	free(p->kid_n);
	p->self = calloc(n + 1, sizeof(*p->self));
	p->incl = calloc(n + 1, sizeof(*p->incl));
	p->order = malloc(sizeof(uint32_t) * (n + 1));
	p->kids = malloc(sizeof(uint32_t) * (n + 1));
	p->kid_first = calloc(n + 2, sizeof(uint32_t));
	p->kid_n = calloc(n + 2, sizeof(uint32_t));
	if (!seen || !p->self || !p->incl || !p->order || !p->kids || !p->kid_first || !p->kid_n) {
		free(seen);
		return TFT_ENOMEM;
	}
	for (uint32_t c = 0; c < t->ncells; c++) {
		const struct prof_cell *k = &t->cells[c];
		uint32_t r = final_rec(t, k->rec);
		if (r == PROF_NONE || r >= n)
			continue;
		int64_t *m = p->self[r];
		m[TFT_PROF_CPU_MICROS] += k->a.cpu_ns;
		m[TFT_PROF_ACCEL_MICROS] += k->a.acc_ns;
		m[TFT_PROF_OCCURRENCE] += k->a.runs;
		m[TFT_PROF_BYTES] += k->a.req;
		m[TFT_PROF_PEAK_BYTES] += k->a.peak;
		m[TFT_PROF_RESIDUAL_BYTES] += k->a.resid;
		m[TFT_PROF_OUTPUT_BYTES] += k->a.outb;
		m[TFT_PROF_FLOAT_OPS] += k->a.flops;
		seen[r] += k->a.seen;
	}
	/*
	 * A record is a node of the views when it ran in the step(s), or the
	 * graph or the model has it (a variable, a parameter), or a node below
	 * it is one: an op seen only outside the step(s) is not.
	 */
	uint8_t *alive = calloc(n + 1, 1);
	if (!alive) {
		free(seen);
		return TFT_ENOMEM;
	}
	for (uint32_t r = 0; r < n; r++) {
		const struct prof_rec *x = &t->recs[r];
		const int64_t *m = p->self[r];
		if (x->redirect != PROF_NONE || x->kind == REC_BWDSEQ)
			continue;
		alive[r] = m[TFT_PROF_OCCURRENCE] || m[TFT_PROF_CPU_MICROS] || m[TFT_PROF_ACCEL_MICROS] ||
			   p->st[r].graph || p->st[r].params >= 0 || x->kind == REC_PARAM;
	}
	for (uint32_t r = n; r-- > 0;)
		if (alive[r] && t->recs[r].parent != PROF_NONE)
			alive[t->recs[r].parent] = 1;
	p->norder = 0;
	for (uint32_t r = 0; r < n; r++) {
		const struct prof_rec *x = &t->recs[r];
		int64_t *m = p->self[r];
		if (x->redirect != PROF_NONE || x->kind == REC_BWDSEQ || !alive[r])
			continue;
		m[TFT_PROF_MICROS] = m[TFT_PROF_CPU_MICROS] + m[TFT_PROF_ACCEL_MICROS];
		if (p->st[r].params > 0)
			m[TFT_PROF_PARAMS] = p->st[r].params;
		if (p->st[r].flops > 0) {
			/* tfprof: float_ops x run count; a node that never ran keeps its static count (once) */
			if (seen[r])
				m[TFT_PROF_FLOAT_OPS] += p->st[r].flops * m[TFT_PROF_OCCURRENCE];
			else
				m[TFT_PROF_FLOAT_OPS] += p->st[r].flops * (int64_t)p->steps.nsteps;
		}
		p->order[p->norder++] = r;
	}
	free(seen);
	free(alive);
	/* the execution trie: children lists (the root at index n) */
	for (uint32_t i = 0; i < p->norder; i++) {
		uint32_t r = p->order[i], par = t->recs[r].parent;
		p->kid_n[par == PROF_NONE ? n : par]++;
	}
	for (uint32_t i = 0, acc = 0; i <= n; i++) {
		p->kid_first[i] = acc;
		acc += p->kid_n[i];
		p->kid_n[i] = 0;
	}
	for (uint32_t i = 0; i < p->norder; i++) {
		uint32_t r = p->order[i], par = t->recs[r].parent, slot = par == PROF_NONE ? n : par;
		p->kids[p->kid_first[slot] + p->kid_n[slot]++] = r;
	}
	/* inclusive sums: children come after their parents in `order` */
	memcpy(p->incl, p->self, sizeof(*p->incl) * n);
	for (uint32_t i = p->norder; i-- > 0;) {
		uint32_t r = p->order[i], par = t->recs[r].parent;
		if (par == PROF_NONE)
			continue;
		for (int k = 0; k < TFT_PROF_NMETRICS; k++)
			p->incl[par][k] += p->incl[r][k];
	}
	return 0;
}

int tft_prof_model(struct tft_prof *p, struct tft_error *err)
{
	struct model m = { .p = p, .err = err };
	const char *meta;
	int rc;

	if ((rc = place_backward(p)))
		goto out;
	/* TF graphs (GraphDef, partition graphs, OpLog) */
	rc = tft_session_is_file(p->s) ? tft_graph_each(tft_session_path(p->s), on_graph_node, &m, err)
					: 0; /* (a job's ranks: TF graphs are read from a merged file) */
	if (rc < 0)
		goto out;
	if ((rc = m.rc))
		goto out;
	if ((rc = grow_static(p, p->tab.nrecs)))
		goto out;
	if (p->info.has_graph && !p->framework[0])
		snprintf(p->framework, sizeof(p->framework), "tensorflow");
	/* PyTorch: the model's modules and parameters */
	meta = tft_session_meta(p->s, "model_params");
	if (meta && (rc = torch_params(&m, meta)))
		goto out;
	if ((rc = grow_static(p, p->tab.nrecs)))
		goto out;
	for (uint32_t r = 0; r < p->tab.nrecs; r++) {
		const struct prof_rec *x = &p->tab.recs[r];
		if (x->redirect != PROF_NONE || x->kind == REC_BWDSEQ)
			continue;
		p->st[r].graph = r < m.capgi && m.gi[r].graph;
		if ((rc = x->tfname ? tf_record(&m, r) : trace_record(p, r)))
			goto out;
	}
	if ((rc = tf_code(&m)))
		goto out;
	rc = sums(p);
out:
	free(m.gi);
	if (rc && !err->code)
		tft_error_set(err, rc, -1, rc == TFT_ENOMEM ? "out of memory" : "cannot read the session's graph");
	return rc < 0 ? rc : 0;
}
