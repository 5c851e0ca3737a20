/* SPDX-License-Identifier: MIT */
/*
 * The four views of tftracer prof, made as tfprof makes them
 * (tfprof_scope.cc, tfprof_graph.cc, tfprof_op.cc, tfprof_code.cc,
 * tfprof_show.cc): build the view's nodes from the profile's records, then
 * account (a node's total = its own values if its types match
 * -account_type_regexes, plus its accounted children's totals; a node that
 * does not match is kept only for accounted nodes below it), start at
 * -start_name_regexes, show by the name regexes, -max_depth and the
 * -min_* thresholds (a hidden node's shown descendants take its place),
 * order siblings by -order_by, and with -account_displayed_op_only count
 * the shown nodes only. The shown tree becomes a tft_prof_result.
 */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/prof_int.h"
#include "core/grow.h"
#include "core/hmap.h"

struct u32v {
	uint32_t *v;
	uint32_t n, cap;
};

static int u32v_push(struct u32v *a, uint32_t x)
{
	if (tft_grow((void **)&a->v, &a->cap, a->n + 1, sizeof(*a->v)))
		return TFT_ENOMEM;
	a->v[a->n++] = x;
	return 0;
}

/* What one record (or one record under one code node) gives a view node. */
struct contrib {
	uint32_t rec;
	double v[TFT_PROF_NMETRICS];
};

struct vnode {
	char *name;                 /* owned */
	double self[TFT_PROF_NMETRICS], total[TFT_PROF_NMETRICS], incl[TFT_PROF_NMETRICS];
	bool account, shown;
	struct u32v kids;           /* the view's structure (graph view: inputs) */
	struct u32v show;           /* accounted children, then shown children */
	struct u32v contribs;       /* indices into view.contribs */
	uint64_t self_defined, defined;
	uint32_t parent;            /* in the structure (PROF_NONE: the root) */
	uint32_t code;              /* code view: the code node */
	uint32_t rec;               /* op view: unused; others: a record that made it, or PROF_NONE */
};

struct view {
	struct tft_prof *p;
	const struct tft_prof_opts *o;
	int kind;
	struct vnode *n;
	uint32_t nn, capn;
	struct contrib *c;
	uint32_t nc, capc;
	/* child lookup: (parent, lid) -> node */
	uint32_t *slot;
	uint32_t cap;
	int8_t *type_match;         /* per lid: -1 unknown, 0, 1 */
	uint32_t ntm;
	uint8_t *visit;             /* graph view */
	bool by_name;               /* sort by name whatever -order_by says (the graph view's roots) */
	struct tft_error *err;
	int rc;
};

#define ROOT_NAME "_TFProfRoot"

static double scale(const struct tft_prof *p, int k, int64_t v)
{
	double d = (double)v;

	if (k == TFT_PROF_PARAMS)
		return d;
	d /= p->steps.nsteps;
	if (k == TFT_PROF_MICROS || k == TFT_PROF_ACCEL_MICROS || k == TFT_PROF_CPU_MICROS)
		d /= 1000.0;
	return d;
}

static uint32_t new_node(struct view *v, const char *name, size_t len, uint32_t parent)
{
	struct vnode *n;

	if (tft_grow((void **)&v->n, &v->capn, v->nn + 1, sizeof(*v->n))) {
		v->rc = TFT_ENOMEM;
		return PROF_NONE;
	}
	n = &v->n[v->nn];
	memset(n, 0, sizeof(*n));
	n->name = malloc(len + 1);
	if (!n->name) {
		v->rc = TFT_ENOMEM;
		return PROF_NONE;
	}
	memcpy(n->name, name, len);
	n->name[len] = '\0';
	n->parent = parent;
	n->rec = PROF_NONE;
	return v->nn++;
}

/* ---- child lookup by (parent, lid) --------------------------------------------------------- */

/* A core/hmap of one-word keys: (parent << 32 | lid) -> node. */
static uint32_t cmap_find(const struct tft_hmap *m, uint32_t parent, uint32_t lid)
{
	uint64_t k = (uint64_t)parent << 32 | lid;

	return tft_hmap_get1(m, k, (uint32_t)tft_hash_u64(k)); /* (TFT_HMAP_EMPTY is PROF_NONE) */
}

static int cmap_put(struct tft_hmap *m, uint32_t parent, uint32_t lid, uint32_t node)
{
	uint64_t k = (uint64_t)parent << 32 | lid;

	return tft_hmap_put(m, &k, (uint32_t)tft_hash_u64(k), node);
}

/* The child of `parent` named by lid `lid` (display name: parent's + "/" + segment), created. */
static uint32_t child(struct view *v, struct tft_hmap *m, uint32_t parent, uint32_t lid, const char *seg, size_t sl)
{
	uint32_t c = cmap_find(m, parent, lid);
	char *buf;
	size_t pl;

	if (c != PROF_NONE)
		return c;
	pl = parent == 0 ? 0 : strlen(v->n[parent].name);
	buf = malloc(pl + sl + 2);
	if (!buf) {
		v->rc = TFT_ENOMEM;
		return PROF_NONE;
	}
	if (pl) {
		memcpy(buf, v->n[parent].name, pl);
		buf[pl] = '/';
		memcpy(buf + pl + 1, seg, sl);
		buf[pl + sl + 1] = '\0';
	} else {
		memcpy(buf, seg, sl);
		buf[sl] = '\0';
	}
	c = new_node(v, buf, strlen(buf), parent);
	free(buf);
	if (c == PROF_NONE || cmap_put(m, parent, lid, c) || u32v_push(&v->n[parent].kids, c)) {
		v->rc = TFT_ENOMEM;
		return PROF_NONE;
	}
	return c;
}

static int add_contrib(struct view *v, uint32_t node, uint32_t rec, const int64_t *vals)
{
	struct contrib *c;

	if (tft_grow((void **)&v->c, &v->capc, v->nc + 1, sizeof(*v->c)) ||
	    u32v_push(&v->n[node].contribs, v->nc))
		return v->rc = TFT_ENOMEM;
	c = &v->c[v->nc++];
	c->rec = rec;
	for (int k = 0; k < TFT_PROF_NMETRICS; k++)
		c->v[k] = scale(v->p, k, vals[k]);
	if (v->n[node].rec == PROF_NONE)
		v->n[node].rec = rec;
	return 0;
}

/* ---- accounting --------------------------------------------------------------------------- */

static bool rx_match(const struct tft_prof_regexes *r, const char *s)
{
	const regex_t *re = r->compiled;

	for (uint32_t i = 0; i < r->n; i++)
		if (regexec(&re[i], s, 0, NULL, 0) == 0)
			return true;
	return false;
}

/* Whether record r's types match -account_type_regexes (tfprof's ReAccount). */
static bool rec_matches(struct view *v, uint32_t r)
{
	const struct tft_prof *p = v->p;
	const struct prof_static *st = &p->st[r];

	if (v->o->account_type.all)
		return true;
	for (uint32_t i = 0; i < st->ntypes; i++) {
		uint32_t t = p->types[st->types + i];
		if (t >= v->ntm) {
			uint32_t old = v->ntm;
			if (tft_grow_ex((void **)&v->type_match, &v->ntm, (uint64_t)t + 1, 1, 256, 0))
				return false;
			memset(v->type_match + old, -1, v->ntm - old);
		}

		if (v->type_match[t] < 0)
			v->type_match[t] = rx_match(&v->o->account_type, tft_prof_str(&p->tab, t));
		if (v->type_match[t])
			return true;
	}
	return false;
}

/* The node's own values from its matching contributions; whether it is accounted. */
static bool reaccount(struct view *v, struct vnode *n)
{
	bool any = v->o->account_type.all;
	uint32_t last = PROF_NONE;

	memset(n->self, 0, sizeof(n->self));
	memset(n->incl, 0, sizeof(n->incl));
	n->self_defined = 0;
	for (uint32_t i = 0; i < n->contribs.n; i++) {
		const struct contrib *c = &v->c[n->contribs.v[i]];
		if (!rec_matches(v, c->rec))
			continue;
		any = true;
		for (int k = 0; k < TFT_PROF_NMETRICS; k++)
			n->self[k] += c->v[k];
		if (c->rec != last)
			n->self_defined++;
		last = c->rec;
		if (v->kind == TFT_PROF_OP)
			for (int k = 0; k < TFT_PROF_NMETRICS; k++)
				n->incl[k] += scale(v->p, k, v->p->incl[c->rec][k]);
	}
	return any;
}

static void add_self_to_total(struct vnode *n)
{
	if (!n->account)
		return;
	for (int k = 0; k < TFT_PROF_NMETRICS; k++)
		n->total[k] += n->self[k];
	n->defined += n->self_defined;
}

static void aggregate(struct vnode *n, const struct vnode *c)
{
	for (int k = 0; k < TFT_PROF_NMETRICS; k++)
		n->total[k] += c->total[k];
	n->defined += c->defined;
}

static void reset_total(struct vnode *n)
{
	memset(n->total, 0, sizeof(n->total));
	n->defined = 0;
}

#define MAX_RECURSION 20000

/* Scope and code views: tfprof's Account. Returns the accounted nodes among ids. */
static int account_tree(struct view *v, const struct u32v *ids, struct u32v *out, int depth)
{
	for (uint32_t i = 0; i < ids->n && !v->rc; i++) {
		uint32_t id = ids->v[i];
		struct u32v act = { 0 };

		if (depth < MAX_RECURSION)
			account_tree(v, &v->n[id].kids, &act, depth + 1);
		struct vnode *n = &v->n[id];
		n->account = reaccount(v, n);
		if (n->account || act.n) {
			reset_total(n);
			add_self_to_total(n);
			free(n->show.v);
			n->show = act;
			for (uint32_t j = 0; j < act.n; j++)
				aggregate(n, &v->n[act.v[j]]);
			if (u32v_push(out, id))
				v->rc = TFT_ENOMEM;
		} else {
			free(act.v);
		}
	}
	return v->rc;
}

/* Graph view: tfprof's Account over inputs, each node once; an unaccounted node passes its inputs up. */
static int account_graph(struct view *v, const struct u32v *ids, struct u32v *out, int depth)
{
	for (uint32_t i = 0; i < ids->n && !v->rc; i++) {
		uint32_t id = ids->v[i];
		struct u32v act = { 0 };

		if (v->visit[id])
			continue;
		v->visit[id] = 1;
		if (depth < MAX_RECURSION)
			account_graph(v, &v->n[id].kids, &act, depth + 1);
		struct vnode *n = &v->n[id];
		n->account = reaccount(v, n);
		if (n->account) {
			reset_total(n);
			add_self_to_total(n);
			free(n->show.v);
			n->show = act;
			for (uint32_t j = 0; j < act.n; j++)
				aggregate(n, &v->n[act.v[j]]);
			if (u32v_push(out, id))
				v->rc = TFT_ENOMEM;
		} else {
			for (uint32_t j = 0; j < act.n && !v->rc; j++)
				if (u32v_push(out, act.v[j]))
					v->rc = TFT_ENOMEM;
			free(act.v);
		}
	}
	return v->rc;
}

/* ---- showing ------------------------------------------------------------------------------------ */

static bool name_show(struct view *v, const struct vnode *n)
{
	if (!v->o->show_name.all && !rx_match(&v->o->show_name, n->name))
		return false;
	return !rx_match(&v->o->hide_name, n->name);
}

/*
 * tfprof's ShouldShow. The thresholds compare totals, except that a tree
 * view (scope, graph) compares a node's own parameters, float ops and
 * occurrence, and the op view its own values (an op type has no subtree).
 */
static bool should_show(struct view *v, const struct vnode *n, int depth)
{
	const struct tft_prof_opts *o = v->o;
	const double *t = v->kind == TFT_PROF_OP ? n->self : n->total;
	const double *own = v->kind == TFT_PROF_CODE ? n->total : n->self;

	if (n->parent == PROF_NONE && n == &v->n[0])
		return true;
	if (t[TFT_PROF_BYTES] < (double)o->min_bytes || t[TFT_PROF_PEAK_BYTES] < (double)o->min_peak_bytes ||
	    t[TFT_PROF_RESIDUAL_BYTES] < (double)o->min_residual_bytes ||
	    t[TFT_PROF_OUTPUT_BYTES] < (double)o->min_output_bytes || t[TFT_PROF_MICROS] < (double)o->min_micros ||
	    t[TFT_PROF_ACCEL_MICROS] < (double)o->min_accelerator_micros ||
	    t[TFT_PROF_CPU_MICROS] < (double)o->min_cpu_micros || own[TFT_PROF_PARAMS] < (double)o->min_params ||
	    own[TFT_PROF_FLOAT_OPS] < (double)o->min_float_ops ||
	    own[TFT_PROF_OCCURRENCE] < (double)o->min_occurrence || depth > o->max_depth)
		return false;
	return name_show(v, n);
}

static bool should_trim(struct view *v, const struct vnode *n)
{
	return rx_match(&v->o->trim_name, n->name);
}

static __thread struct view *tls_view; /* (qsort has no context argument) */

static int metric_of_order(int order)
{
	switch (order) {
	case TFT_PROF_ORDER_BYTES: return TFT_PROF_BYTES;
	case TFT_PROF_ORDER_PEAK_BYTES: return TFT_PROF_PEAK_BYTES;
	case TFT_PROF_ORDER_RESIDUAL_BYTES: return TFT_PROF_RESIDUAL_BYTES;
	case TFT_PROF_ORDER_OUTPUT_BYTES: return TFT_PROF_OUTPUT_BYTES;
	case TFT_PROF_ORDER_MICROS: return TFT_PROF_MICROS;
	case TFT_PROF_ORDER_ACCEL_MICROS: return TFT_PROF_ACCEL_MICROS;
	case TFT_PROF_ORDER_CPU_MICROS: return TFT_PROF_CPU_MICROS;
	case TFT_PROF_ORDER_PARAMS: return TFT_PROF_PARAMS;
	case TFT_PROF_ORDER_FLOAT_OPS: return TFT_PROF_FLOAT_OPS;
	case TFT_PROF_ORDER_OCCURRENCE: return TFT_PROF_OCCURRENCE;
	default: return -1;
	}
}

struct sort_item {
	uint32_t id, pos;
};

static int cmp_nodes(const void *a, const void *b)
{
	const struct sort_item *x = a, *y = b;
	const struct view *v = tls_view;
	const struct vnode *n1 = &v->n[x->id], *n2 = &v->n[y->id];
	int m = v->by_name ? -1 : metric_of_order(v->o->order_by), c;

	if (m >= 0) {
		/* descending by total (the op view: an op type's own value) */
		double a1 = v->kind == TFT_PROF_OP ? n1->self[m] : n1->total[m];
		double a2 = v->kind == TFT_PROF_OP ? n2->self[m] : n2->total[m];
		if (a1 != a2)
			return a1 > a2 ? -1 : 1;
		return x->pos < y->pos ? -1 : x->pos > y->pos; /* (a stable sort, as tfprof's) */
	}
	c = strcmp(n1->name, n2->name);
	if (c)
		return c;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static int sort_ids(struct view *v, struct u32v *ids)
{
	struct sort_item *it;

	if (ids->n < 2)
		return 0;
	it = malloc(sizeof(*it) * ids->n);
	if (!it)
		return v->rc = TFT_ENOMEM;
	for (uint32_t i = 0; i < ids->n; i++)
		it[i] = (struct sort_item){ .id = ids->v[i], .pos = i };
	tls_view = v;
	qsort(it, ids->n, sizeof(*it), cmp_nodes);
	for (uint32_t i = 0; i < ids->n; i++)
		ids->v[i] = it[i].id;
	free(it);
	return 0;
}

/* tfprof's PrintScope / PrintGraph / (code view) PrintScope: the shown nodes among ids. */
static void print_tree(struct view *v, const struct u32v *ids, struct u32v *out, int depth)
{
	bool code = v->kind == TFT_PROF_CODE, graph = v->kind == TFT_PROF_GRAPH;

	for (uint32_t i = 0; i < ids->n && !v->rc; i++) {
		uint32_t id = ids->v[i];
		struct u32v kids = { 0 };
		bool show, trim;

		if (graph) {
			if (v->visit[id])
				continue;
			v->visit[id] = 1;
		}
		trim = should_trim(v, &v->n[id]);
		if (code && (trim || depth > v->o->max_depth))
			continue;
		show = should_show(v, &v->n[id], depth);
		if ((code || !trim) && depth <= v->o->max_depth && depth < MAX_RECURSION) {
			struct u32v sh = v->n[id].show;
			print_tree(v, &sh, &kids, depth + 1);
		}
		struct vnode *n = &v->n[id];
		if (show) {
			sort_ids(v, &kids);
			if (v->o->account_displayed_op_only && !code) {
				reset_total(n);
				add_self_to_total(n);
				for (uint32_t j = 0; j < kids.n; j++)
					aggregate(n, &v->n[kids.v[j]]);
			}
			free(n->show.v);
			n->show = kids;
			n->shown = true;
			if (u32v_push(out, id))
				v->rc = TFT_ENOMEM;
		} else {
			for (uint32_t j = 0; j < kids.n && !v->rc; j++)
				if (u32v_push(out, kids.v[j]))
					v->rc = TFT_ENOMEM;
			free(kids.v);
		}
	}
}

/* tfprof's SearchRoot: the first nodes on each branch whose name matches -start_name_regexes. */
static void search_root(struct view *v, const struct u32v *ids, struct u32v *out, int depth)
{
	for (uint32_t i = 0; i < ids->n && !v->rc; i++) {
		uint32_t id = ids->v[i];
		if (v->kind == TFT_PROF_GRAPH) {
			if (v->visit[id])
				continue;
			v->visit[id] = 1;
		}
		if (rx_match(&v->o->start_name, v->n[id].name)) {
			if (u32v_push(out, id))
				v->rc = TFT_ENOMEM;
			continue;
		}
		if (depth < MAX_RECURSION) {
			struct u32v sh = v->n[id].show;
			search_root(v, &sh, out, depth + 1);
		}
	}
}

/* ---- building each view's nodes ------------------------------------------------------------------ */

static int build_scope(struct view *v)
{
	struct tft_prof *p = v->p;
	struct tft_hmap m;
	uint32_t *at = malloc(sizeof(uint32_t) * (p->tab.nrecs + 1));

	tft_hmap_init(&m, 1);
	if (!at)
		return v->rc = TFT_ENOMEM;
	for (uint32_t r = 0; r < p->tab.nrecs; r++)
		at[r] = PROF_NONE;
	for (uint32_t i = 0; i < p->norder && !v->rc; i++) {
		uint32_t r = p->order[i], par = p->tab.recs[r].parent, node = par == PROF_NONE ? 0 : at[par];
		if (node == PROF_NONE)
			continue; /* (its context is no node: never, the model pass placed every record) */
		const struct prof_rec *x = &p->tab.recs[r];
		const char *name = tft_prof_str(&p->tab, x->name);
		size_t len = strlen(name);

		if (x->tfname) {
			/* a TF node name: one level per '/'-separated part, as tfprof's scope view */
			const char *s = name;
			while (len && node != PROF_NONE) {
				const char *slash = memchr(s, '/', len);
				size_t sl = slash ? (size_t)(slash - s) : len;
				node = child(v, &m, node, tft_prof_lid(&p->tab, s, sl), s, sl);
				if (!slash)
					break;
				s = slash + 1;
				len -= sl + 1;
			}
		} else {
			node = child(v, &m, node, x->name, name, len);
		}
		if (node == PROF_NONE)
			break;
		at[r] = node;
		add_contrib(v, node, r, p->self[r]);
	}
	free(at);
	tft_hmap_fini(&m);
	return v->rc;
}

static int build_op(struct view *v)
{
	struct tft_prof *p = v->p;
	struct tft_hmap m;

	tft_hmap_init(&m, 1);
	for (uint32_t i = 0; i < p->norder && !v->rc; i++) {
		uint32_t r = p->order[i];
		const struct prof_rec *x = &p->tab.recs[r];
		uint32_t t = x->op ? x->op : x->name, node;

		if (x->kind == REC_SCOPE || x->kind == REC_MODULE)
			continue; /* scopes are no graph nodes */
		node = cmap_find(&m, 0, t);
		if (node == PROF_NONE) {
			const char *name = tft_prof_str(&p->tab, t);
			node = new_node(v, name, strlen(name), 0);
			if (node == PROF_NONE || cmap_put(&m, 0, t, node) || u32v_push(&v->n[0].kids, node)) {
				v->rc = TFT_ENOMEM;
				break;
			}
		}
		add_contrib(v, node, r, p->self[r]);
	}
	tft_hmap_fini(&m);
	return v->rc;
}

static int build_graph(struct view *v)
{
	struct tft_prof *p = v->p;
	uint32_t *at = malloc(sizeof(uint32_t) * (p->tab.nrecs + 1));
	uint8_t *input = calloc(p->tab.nrecs + 1, 1);

	if (!at || !input) {
		free(at);
		free(input);
		return v->rc = TFT_ENOMEM;
	}
	for (uint32_t r = 0; r < p->tab.nrecs; r++)
		at[r] = PROF_NONE;
	for (uint32_t i = 0; i < p->norder && !v->rc; i++) {
		uint32_t r = p->order[i];
		const struct prof_rec *x = &p->tab.recs[r];
		if (x->kind == REC_SCOPE || x->kind == REC_MODULE)
			continue;
		const char *name = tft_prof_str(&p->tab, x->name);
		uint32_t node = new_node(v, name, strlen(name), 0);
		if (node == PROF_NONE)
			break;
		at[r] = node;
		add_contrib(v, node, r, p->self[r]);
	}
	for (uint32_t i = 0; i < p->norder && !v->rc; i++) {
		uint32_t r = p->order[i];
		const struct prof_static *st = &p->st[r];
		if (at[r] == PROF_NONE)
			continue;
		for (uint32_t k = 0; k < st->ninputs; k++) {
			uint32_t in = p->inputs[st->inputs + k];
			if (in < p->tab.nrecs && at[in] != PROF_NONE && at[in] != at[r]) {
				input[in] = 1;
				if (u32v_push(&v->n[at[r]].kids, at[in]))
					v->rc = TFT_ENOMEM;
			}
		}
	}
	/* roots: the nodes no node takes as input, by name */
	for (uint32_t i = 0; i < p->norder && !v->rc; i++) {
		uint32_t r = p->order[i];
		if (at[r] != PROF_NONE && !input[r] && u32v_push(&v->n[0].kids, at[r]))
			v->rc = TFT_ENOMEM;
	}
	free(at);
	free(input);
	if (!v->rc) {
		v->by_name = true; /* (tfprof keeps its nodes in a map by name) */
		sort_ids(v, &v->n[0].kids);
		v->by_name = false;
	}
	return v->rc;
}

/* "path/file.py(62): func" (Kineto) or "file.py:62:func" -> file, line, function. */
static void split_frame(const char *s, char *file, size_t fs, int64_t *line, char *func, size_t fns)
{
	const char *paren = strstr(s, "("), *close = paren ? strstr(paren, "): ") : NULL;

	*line = 0;
	if (paren && close) {
		snprintf(file, fs, "%.*s", (int)(paren - s), s);
		*line = strtoll(paren + 1, NULL, 10);
		snprintf(func, fns, "%s", close + 3);
		return;
	}
	const char *c1 = strchr(s, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
	if (c1 && c2) {
		snprintf(file, fs, "%.*s", (int)(c1 - s), s);
		*line = strtoll(c1 + 1, NULL, 10);
		snprintf(func, fns, "%s", c2 + 1);
		return;
	}
	snprintf(file, fs, "%s", "");
	snprintf(func, fns, "%s", s);
}

static const char *base_name(const char *f)
{
	const char *b = strrchr(f, '/');

	return b ? b + 1 : f;
}

/* The code view's node of code node c (and its parents), created. */
static uint32_t code_node(struct view *v, struct tft_hmap *m, uint32_t c)
{
	struct tft_prof *p = v->p;
	uint32_t parent, node;
	char file[512], func[512], name[1100];
	int64_t line;

	if (c == 0)
		return 0;
	node = cmap_find(m, 1, c);
	if (node != PROF_NONE)
		return node;
	parent = code_node(v, m, p->tab.codes[c].parent);
	if (parent == PROF_NONE)
		return PROF_NONE;
	split_frame(tft_prof_str(&p->tab, p->tab.codes[c].name), file, sizeof(file), &line, func, sizeof(func));
	int n = snprintf(name, sizeof(name), "%s:%lld:%s", base_name(file), (long long)line, func);
	if (!file[0])
		n = snprintf(name, sizeof(name), "%s", func);
	node = new_node(v, name, (size_t)n < sizeof(name) ? (size_t)n : sizeof(name) - 1, parent);
	if (node == PROF_NONE || cmap_put(m, 1, c, node) || u32v_push(&v->n[parent].kids, node)) {
		v->rc = TFT_ENOMEM;
		return PROF_NONE;
	}
	v->n[node].code = c;
	return node;
}

static int build_code(struct view *v)
{
	struct tft_prof *p = v->p;
	struct tft_hmap m;
	uint8_t *params_done = calloc(p->tab.nrecs + 1, 1);

	tft_hmap_init(&m, 1);
	if (!params_done)
		return v->rc = TFT_ENOMEM;
	for (uint32_t c = 0; c < p->tab.ncells && !v->rc; c++) {
		const struct prof_cell *k = &p->tab.cells[c];
		uint32_t r = k->rec, code, node;
		int64_t vals[TFT_PROF_NMETRICS] = { 0 };

		while (r != PROF_NONE && p->tab.recs[r].redirect != PROF_NONE)
			r = p->tab.recs[r].redirect;
		if (r == PROF_NONE || r >= p->tab.nrecs || p->tab.recs[r].kind == REC_BWDSEQ)
			continue;
		code = k->code ? k->code : p->st[r].code_leaf;
		if (!code)
			continue; /* no Python stack: not in the code view (tfprof: no trace) */
		node = code_node(v, &m, code);
		if (node == PROF_NONE)
			break;
		vals[TFT_PROF_CPU_MICROS] = k->a.cpu_ns;
		vals[TFT_PROF_ACCEL_MICROS] = k->a.acc_ns;
		vals[TFT_PROF_MICROS] = k->a.cpu_ns + k->a.acc_ns;
		vals[TFT_PROF_OCCURRENCE] = k->a.runs;
		vals[TFT_PROF_BYTES] = k->a.req;
		vals[TFT_PROF_PEAK_BYTES] = k->a.peak;
		vals[TFT_PROF_RESIDUAL_BYTES] = k->a.resid;
		vals[TFT_PROF_OUTPUT_BYTES] = k->a.outb;
		vals[TFT_PROF_FLOAT_OPS] = k->a.flops + (p->st[r].flops > 0 ? p->st[r].flops * k->a.runs : 0);
		if (!params_done[r]) {
			params_done[r] = 1;
			vals[TFT_PROF_PARAMS] = p->st[r].params > 0 ? p->st[r].params : 0;
		}
		add_contrib(v, node, r, vals);
	}
	/* TF records with OpLog code that never ran (variables): their static values */
	for (uint32_t i = 0; i < p->norder && !v->rc; i++) {
		uint32_t r = p->order[i], node;
		if (params_done[r] || !p->st[r].code_leaf)
			continue;
		node = code_node(v, &m, p->st[r].code_leaf);
		if (node == PROF_NONE)
			break;
		params_done[r] = 1;
		add_contrib(v, node, r, p->self[r]);
	}
	free(params_done);
	tft_hmap_fini(&m);
	return v->rc;
}

/* ---- the op view ---------------------------------------------------------------------------------- */

static int show_op(struct view *v, struct u32v *shown)
{
	struct vnode *root = &v->n[0];
	struct u32v acc = { 0 };
	uint32_t start = 0;
	int depth = 0;

	for (uint32_t i = 0; i < root->kids.n; i++) {
		struct vnode *n = &v->n[root->kids.v[i]];
		n->account = reaccount(v, n);
		reset_total(n);
		add_self_to_total(n);
		if (n->account && u32v_push(&acc, root->kids.v[i]))
			return v->rc = TFT_ENOMEM;
	}
	sort_ids(v, &acc);
	/* tfprof's SearchRoot: the first accounted op type matching -start_name_regexes */
	if (!v->o->start_name.all) {
		for (start = 0; start < acc.n; start++)
			if (rx_match(&v->o->start_name, v->n[acc.v[start]].name))
				break;
	}
	reset_total(root);
	for (uint32_t i = 0; i < acc.n; i++)
		aggregate(root, &v->n[acc.v[i]]);
	for (uint32_t i = start; i < acc.n; i++, depth++) {
		struct vnode *n = &v->n[acc.v[i]];
		if (should_trim(v, n) || depth > v->o->max_depth)
			break;
		if (should_show(v, n, depth)) {
			n->shown = true;
			if (u32v_push(shown, acc.v[i]))
				return v->rc = TFT_ENOMEM;
		}
	}
	if (v->o->account_displayed_op_only) {
		reset_total(root);
		for (uint32_t i = 0; i < shown->n; i++)
			aggregate(root, &v->n[shown->v[i]]);
	}
	/* tfprof's cumulative column: an op type and the accounted ones after it in this order */
	{
		const struct u32v *list = v->o->account_displayed_op_only ? shown : &acc;
		double cum[TFT_PROF_NMETRICS] = { 0 };
		for (uint32_t i = list->n; i-- > 0;) {
			struct vnode *n = &v->n[list->v[i]];
			for (int k = 0; k < TFT_PROF_NMETRICS; k++)
				cum[k] += n->self[k];
			memcpy(n->total, cum, sizeof(cum)); /* (tfprof keeps the cumulative sum as total) */
		}
	}
	free(acc.v);
	return v->rc;
}

/* ---- the result ------------------------------------------------------------------------------------ */

struct arena {
	char *p;
	size_t len, cap;
	struct arena *next;
};

static char *arena_dup(struct tft_prof_result *r, const char *s, size_t len)
{
	struct arena *a = r->arena;

	if (!a || a->cap - a->len < len + 1) {
		size_t cap = len + 1 > 65536 ? len + 1 : 65536;
		struct arena *na = malloc(sizeof(*na) + cap);
		if (!na)
			return NULL;
		na->p = (char *)(na + 1);
		na->len = 0;
		na->cap = cap;
		na->next = a;
		r->arena = a = na;
	}
	char *d = a->p + a->len;
	memcpy(d, s, len);
	d[len] = '\0';
	a->len += len + 1;
	return d;
}

/* '|'-joined distinct lids of the given kind from the node's contributing records. */
static const char *joined(struct view *v, struct tft_prof_result *r, const struct vnode *n, int what)
{
	struct tft_prof *p = v->p;
	uint32_t seen[64], ns = 0;
	char buf[2048];
	size_t bl = 0;

	buf[0] = '\0';
	for (uint32_t i = 0; i < n->contribs.n; i++) {
		uint32_t rec = v->c[n->contribs.v[i]].rec;
		const struct prof_static *st = &p->st[rec];
		uint32_t list[64], nl = 0;
		if (what == 0) {
			if (p->tab.recs[rec].device)
				list[nl++] = p->tab.recs[rec].device;
		} else if (what == 1) {
			for (uint32_t k = 0; k < st->ntypes && nl < 64; k++)
				list[nl++] = p->types[st->types + k];
		} else if (what == 2) {
			if (st->in_shapes)
				list[nl++] = st->in_shapes;
		}
		for (uint32_t k = 0; k < nl; k++) {
			bool dup = false;
			for (uint32_t j = 0; j < ns; j++)
				dup |= seen[j] == list[k];
			if (dup || ns >= 64)
				continue;
			seen[ns++] = list[k];
			if (bl < sizeof(buf))
				bl += (size_t)snprintf(buf + bl, sizeof(buf) - bl, "%s%s", bl ? (what == 2 ? "; " : "|") : "",
						       tft_prof_str(&p->tab, list[k]));
		}
	}
	if (bl >= sizeof(buf))
		bl = sizeof(buf) - 1;
	return arena_dup(r, buf, bl);
}

struct cvec {
	struct tft_prof_contrib *v;
	uint32_t n, cap;
};

/* Contributions of node id and of its hidden descendants (graph view: as traversed), to out. */
static int collect_records(struct view *v, uint32_t id, struct cvec *out, uint8_t *seen, int depth)
{
	const struct vnode *n = &v->n[id];

	for (uint32_t i = 0; i < n->contribs.n; i++) {
		const struct contrib *c = &v->c[n->contribs.v[i]];
		if (!rec_matches(v, c->rec))
			continue;
		if (tft_grow((void **)&out->v, &out->cap, out->n + 1, sizeof(*out->v)))
			return v->rc = TFT_ENOMEM;
		out->v[out->n].record = c->rec;
		memcpy(out->v[out->n].v, c->v, sizeof(c->v));
		out->n++;
	}
	for (uint32_t i = 0; i < n->kids.n && depth < MAX_RECURSION; i++) {
		uint32_t k = n->kids.v[i];
		if (v->n[k].shown || seen[k])
			continue;
		seen[k] = 1;
		collect_records(v, k, out, seen, depth + 1);
	}
	return v->rc;
}

static int make_result(struct view *v, struct tft_prof_result *r)
{
	uint32_t head = 0;
	struct u32v order = { 0 };
	struct cvec recs = { 0 };
	uint32_t *depth_of = NULL;
	uint8_t *seen = calloc(v->nn + 1, 1);

	if (!seen || u32v_push(&order, 0))
		goto oom;
	/* breadth first: every node's shown children are contiguous */
	while (head < order.n) {
		uint32_t id = order.v[head++];
		for (uint32_t j = 0; j < v->n[id].show.n; j++)
			if (u32v_push(&order, v->n[id].show.v[j]))
				goto oom;
	}
	r->nodes = calloc(order.n, sizeof(*r->nodes));
	depth_of = calloc(v->nn + 1, sizeof(uint32_t));
	if (!r->nodes || !depth_of)
		goto oom;
	r->nnodes = order.n;
	uint32_t next_child = 1;
	for (uint32_t i = 0; i < order.n; i++) {
		const struct vnode *n = &v->n[order.v[i]];
		struct tft_prof_node *o = &r->nodes[i];
		o->name = arena_dup(r, n->name, strlen(n->name));
		if (!o->name)
			goto oom;
		memcpy(o->self, n->self, sizeof(o->self));
		if (!n->account)
			memset(o->self, 0, sizeof(o->self));
		memcpy(o->total, v->kind == TFT_PROF_OP && i ? n->incl : n->total, sizeof(o->total));
		memcpy(o->cum, n->total, sizeof(o->cum));
		o->accounted = n->account;
		o->depth = depth_of[order.v[i]];
		o->first_child = next_child;
		o->nchildren = n->show.n;
		for (uint32_t j = 0; j < n->show.n; j++)
			depth_of[n->show.v[j]] = o->depth + 1;
		next_child += n->show.n;
		o->self_defined = n->account ? n->self_defined : 0;
		o->defined = n->defined;
		if (v->kind == TFT_PROF_OP && i) {
			/* an op type's total: its executions' inclusive values; runs and parameters its own */
			o->defined = n->self_defined;
			o->total[TFT_PROF_OCCURRENCE] = o->self[TFT_PROF_OCCURRENCE];
			o->total[TFT_PROF_PARAMS] = o->self[TFT_PROF_PARAMS];
		}
		o->devices = joined(v, r, n, 0);
		o->op_types = joined(v, r, n, 1);
		o->input_shapes = joined(v, r, n, 2);
		o->shape = v->kind != TFT_PROF_OP && n->rec != PROF_NONE && v->p->st[n->rec].shape
				   ? tft_prof_str(&v->p->tab, v->p->st[n->rec].shape)
				   : NULL;
		if (o->shape && !(o->shape = arena_dup(r, o->shape, strlen(o->shape))))
			goto oom;
		if (!o->devices || !o->op_types || !o->input_shapes)
			goto oom;
		if (v->kind == TFT_PROF_CODE && n->code) {
			char file[512], func[512];
			int64_t line;
			split_frame(tft_prof_str(&v->p->tab, v->p->tab.codes[n->code].name), file, sizeof(file), &line, func,
				    sizeof(func));
			o->file = arena_dup(r, file, strlen(file));
			o->function = arena_dup(r, func, strlen(func));
			o->line = line;
		}
		/* the records counted here and not in a shown child */
		o->exec_first = recs.n;
		if (collect_records(v, order.v[i], &recs, seen, 0))
			goto oom;
		o->nexec = recs.n - o->exec_first;
	}
	r->contribs = recs.v;
	r->ncontribs = recs.n;
	free(order.v);
	free(depth_of);
	free(seen);
	return 0;
oom:
	free(order.v);
	free(recs.v);
	free(depth_of);
	free(seen);
	return v->rc = TFT_ENOMEM;
}

static void view_free(struct view *v)
{
	for (uint32_t i = 0; i < v->nn; i++) {
		free(v->n[i].name);
		free(v->n[i].kids.v);
		free(v->n[i].show.v);
		free(v->n[i].contribs.v);
	}
	free(v->n);
	free(v->c);
	free(v->type_match);
	free(v->visit);
}

int tft_prof_view(struct tft_prof *p, int view, const struct tft_prof_opts *opts, struct tft_prof_result **out,
		  struct tft_error *err)
{
	struct view v = { .p = p, .o = opts, .kind = view, .err = err };
	struct tft_prof_result *r;
	struct u32v roots = { 0 }, shown = { 0 };

	*out = NULL;
	if (view < 0 || view > TFT_PROF_CODE)
		return tft_error_set(err, TFT_EINVAL, -1, "unknown view %d", view);
	if (new_node(&v, ROOT_NAME, strlen(ROOT_NAME), PROF_NONE) != 0)
		goto oom;
	switch (view) {
	case TFT_PROF_SCOPE: build_scope(&v); break;
	case TFT_PROF_GRAPH: build_graph(&v); break;
	case TFT_PROF_OP: build_op(&v); break;
	case TFT_PROF_CODE: build_code(&v); break;
	}
	if (v.rc)
		goto oom;
	if (view == TFT_PROF_GRAPH && !(v.visit = calloc(v.nn + 1, 1)))
		goto oom;
	struct vnode *root = &v.n[0];
	if (view == TFT_PROF_OP) {
		if (show_op(&v, &shown))
			goto oom;
		free(root->show.v);
		root->show = shown;
		shown = (struct u32v){ 0 };
		root->account = false;
		memset(root->self, 0, sizeof(root->self));
		root->shown = true;
	} else {
		/* account from the root's children, then the root sums them */
		if (view == TFT_PROF_GRAPH)
			account_graph(&v, &root->kids, &roots, 0);
		else
			account_tree(&v, &root->kids, &roots, 0);
		if (v.rc)
			goto oom;
		root = &v.n[0];
		reset_total(root);
		root->account = false; /* (tfprof never accounts the root: "--") */
		memset(root->self, 0, sizeof(root->self));
		for (uint32_t i = 0; i < roots.n; i++)
			aggregate(root, &v.n[roots.v[i]]);
		if (!v.o->start_name.all) {
			struct u32v found = { 0 };
			free(root->show.v);
			root->show = roots;
			roots = (struct u32v){ 0 };
			if (view == TFT_PROF_GRAPH)
				memset(v.visit, 0, v.nn + 1);
			search_root(&v, &v.n[0].show, &found, 0);
			free(v.n[0].show.v);
			v.n[0].show = found;
		} else {
			free(root->show.v);
			root->show = roots;
			roots = (struct u32v){ 0 };
		}
		if (view == TFT_PROF_GRAPH)
			memset(v.visit, 0, v.nn + 1);
		/* the root at depth 1, as tfprof's PrintScope({root}, opts, 1, 0) */
		struct u32v top = { 0 }, res = { 0 };
		if (u32v_push(&top, 0))
			goto oom;
		v.n[0].parent = PROF_NONE;
		print_tree(&v, &top, &res, 1);
		free(top.v);
		free(res.v);
		if (v.rc)
			goto oom;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		goto oom;
	r->view = view;
	r->step = p->step;
	r->nsteps = p->steps.nsteps;
	r->opts = opts;
	r->prof = p;
	if (make_result(&v, r)) {
		tft_prof_result_free(r);
		goto oom;
	}
	free(roots.v);
	free(shown.v);
	view_free(&v);
	*out = r;
	return 0;
oom:
	free(roots.v);
	free(shown.v);
	view_free(&v);
	return tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
}

void tft_prof_result_free(struct tft_prof_result *r)
{
	struct arena *a;

	if (!r)
		return;
	free(r->nodes);
	free(r->contribs);
	a = r->arena;
	while (a) {
		struct arena *n = a->next;
		free(a);
		a = n;
	}
	free(r);
}
