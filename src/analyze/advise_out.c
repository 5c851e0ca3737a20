/* SPDX-License-Identifier: MIT */
/*
 * The advisor's result: building findings, evidence and verdicts, ranking
 * them, writing them as JSON (the shape docs/cmd-advise.md documents), the
 * text helpers the checkers' sentences use, and a small id -> record map.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/advise_int.h"
#include "analyze/stats.h"

/* ---- building ------------------------------------------------------------------- */

static void out_fail(struct adv *a)
{
	a->scan_rc = a->scan_rc ? a->scan_rc : TFT_ENOMEM;
}

__attribute__((format(printf, 1, 0))) static char *vfmt(const char *fmt, va_list ap)
{
	char *p = NULL;

	if (vasprintf(&p, fmt, ap) < 0)
		return NULL;
	return p;
}

bool tft_adv_wanted(const struct adv *a, int checker)
{
	return !a->opts.checkers || (a->opts.checkers & (1u << checker));
}

struct tft_advise_finding *tft_adv_finding(struct adv *a, int checker, int64_t cost_ns, const char *title_fmt,
					   ...)
{
	struct tft_advise_result *r = a->res;
	struct tft_advise_finding *f, *nf;
	va_list ap;

	if (!tft_adv_wanted(a, checker))
		return NULL;
	nf = realloc(r->findings, (r->nfindings + 1) * sizeof(*nf));
	if (!nf) {
		out_fail(a);
		return NULL;
	}
	r->findings = nf;
	f = &nf[r->nfindings];
	memset(f, 0, sizeof(*f));
	f->checker = checker;
	f->cost_ns = cost_ns > 0 ? cost_ns : 0;
	va_start(ap, title_fmt);
	f->title = vfmt(title_fmt, ap);
	va_end(ap);
	if (!f->title) {
		out_fail(a);
		return NULL;
	}
	r->nfindings++;
	return f;
}

__attribute__((format(printf, 2, 0))) static void set_text(char **dst, const char *fmt, va_list ap)
{
	char *p = vfmt(fmt, ap);

	if (!p)
		return;
	free(*dst);
	*dst = p;
}

void tft_adv_explain(struct tft_advise_finding *f, const char *fmt, ...)
{
	va_list ap;

	if (!f)
		return;
	va_start(ap, fmt);
	set_text(&f->explanation, fmt, ap);
	va_end(ap);
}

void tft_adv_recommend(struct tft_advise_finding *f, const char *fmt, ...)
{
	va_list ap;

	if (!f)
		return;
	va_start(ap, fmt);
	set_text(&f->recommendation, fmt, ap);
	va_end(ap);
}

struct tft_advise_evidence *tft_adv_evidence(struct tft_advise_finding *f, uint32_t track, int64_t t0,
					     int64_t t1)
{
	struct tft_advise_evidence *ne, *e;

	if (!f || f->nevidence >= TFT_ADVISE_MAX_EVIDENCE)
		return NULL;
	ne = realloc(f->evidence, (f->nevidence + 1) * sizeof(*ne));
	if (!ne)
		return NULL;
	f->evidence = ne;
	e = &ne[f->nevidence++];
	memset(e, 0, sizeof(*e));
	e->track = track;
	e->t0_ns = t0;
	e->t1_ns = t1 > t0 ? t1 : t0;
	return e;
}

void tft_adv_keep_longest(struct adv_inst *top, unsigned k, const struct adv_sl *x)
{
	unsigned m = 0;

	for (unsigned i = 1; i < k; i++)
		if (top[i].dur < top[m].dur)
			m = i;
	if (top[m].dur && top[m].dur >= x->end - x->ts)
		return;
	top[m].track = x->track;
	top[m].depth = x->depth;
	top[m].ts = x->ts;
	top[m].dur = x->end - x->ts;
}

void tft_adv_evidence_top(struct tft_advise_finding *f, const struct adv_inst *top, unsigned k)
{
	for (unsigned i = 0; i < k; i++) {
		struct tft_advise_evidence *e;

		if (!top[i].dur)
			continue;
		e = tft_adv_evidence(f, top[i].track, top[i].ts, top[i].ts + top[i].dur);
		tft_adv_evidence_slice(e, top[i].track, top[i].depth, top[i].ts);
	}
}

void tft_adv_evidence_slice(struct tft_advise_evidence *e, uint32_t track, uint32_t depth, int64_t ts)
{
	struct tft_advise_slice *ns;

	if (!e || e->nslices >= TFT_ADVISE_MAX_SLICES)
		return;
	for (size_t i = 0; i < e->nslices; i++)
		if (e->slices[i].track == track && e->slices[i].ts_ns == ts && e->slices[i].depth == depth)
			return;
	ns = realloc(e->slices, (e->nslices + 1) * sizeof(*ns));
	if (!ns)
		return;
	e->slices = ns;
	ns[e->nslices].track = track;
	ns[e->nslices].depth = depth;
	ns[e->nslices].ts_ns = ts;
	e->nslices++;
}

void tft_adv_verdict(struct adv *a, int checker, const char *fmt, ...)
{
	struct tft_advise_result *r = a->res;
	struct tft_advise_verdict *nv;
	va_list ap;
	char *p;

	if (!tft_adv_wanted(a, checker))
		return;
	va_start(ap, fmt);
	p = vfmt(fmt, ap);
	va_end(ap);
	if (!p) {
		out_fail(a);
		return;
	}
	for (size_t i = 0; i < r->nchecked; i++) {
		if (r->checked[i].checker == checker) {
			free(r->checked[i].text);
			r->checked[i].text = p;
			return;
		}
	}
	nv = realloc(r->checked, (r->nchecked + 1) * sizeof(*nv));
	if (!nv) {
		free(p);
		out_fail(a);
		return;
	}
	r->checked = nv;
	nv[r->nchecked].checker = checker;
	nv[r->nchecked].text = p;
	r->nchecked++;
}

bool tft_adv_out_failed(const struct adv *a)
{
	return a->scan_rc == TFT_ENOMEM;
}

static int cmp_finding(const void *x, const void *y)
{
	const struct tft_advise_finding *p = x, *q = y;

	if (p->cost_ns != q->cost_ns)
		return p->cost_ns > q->cost_ns ? -1 : 1;
	if (p->checker != q->checker)
		return p->checker - q->checker;
	return strcmp(p->title, q->title);
}

static int cmp_verdict(const void *x, const void *y)
{
	return ((const struct tft_advise_verdict *)x)->checker - ((const struct tft_advise_verdict *)y)->checker;
}

void tft_adv_out_sort(struct adv *a)
{
	struct tft_advise_result *r = a->res;

	if (r->nfindings > 1)
		qsort(r->findings, r->nfindings, sizeof(*r->findings), cmp_finding);
	if (r->nchecked > 1)
		qsort(r->checked, r->nchecked, sizeof(*r->checked), cmp_verdict);
}

void tft_advise_destroy(struct tft_advise_result *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nfindings; i++) {
		struct tft_advise_finding *f = &r->findings[i];
		free(f->title);
		free(f->explanation);
		free(f->recommendation);
		for (size_t j = 0; j < f->nevidence; j++)
			free(f->evidence[j].slices);
		free(f->evidence);
	}
	free(r->findings);
	for (size_t i = 0; i < r->nchecked; i++)
		free(r->checked[i].text);
	free(r->checked);
	free(r->steps);
	free(r);
}

/* ---- JSON --------------------------------------------------------------------------- */

static void write_evidence(const struct tft_advise_evidence *e, struct tft_json_writer *w)
{
	char id[80];

	tft_json_write_begin_object(w);
	tft_json_write_key(w, "track");
	if (e->track == TFT_NONE)
		tft_json_write_null(w);
	else
		tft_json_write_uint(w, e->track);
	tft_json_write_key_int(w, "t0_ns", e->t0_ns);
	tft_json_write_key_int(w, "t1_ns", e->t1_ns);
	tft_json_write_key(w, "slice_ids");
	tft_json_write_begin_array(w);
	for (size_t i = 0; i < e->nslices; i++) {
		snprintf(id, sizeof(id), "%u.%lld.%u", e->slices[i].track, (long long)e->slices[i].ts_ns,
			 e->slices[i].depth);
		tft_json_write_cstr(w, id);
	}
	tft_json_write_end_array(w);
	tft_json_write_end_object(w);
}

void tft_advise_write_json(const struct tft_advise_result *r, struct tft_json_writer *w)
{
	tft_json_write_begin_object(w);
	tft_json_write_key(w, "findings");
	tft_json_write_begin_array(w);
	for (size_t i = 0; i < r->nfindings; i++) {
		const struct tft_advise_finding *f = &r->findings[i];
		tft_json_write_begin_object(w);
		tft_json_write_key(w, "checker");
		tft_json_write_cstr(w, tft_advise_checker_name(f->checker));
		tft_json_write_key(w, "title");
		tft_json_write_cstr(w, f->title);
		tft_json_write_key_int(w, "cost_ns", f->cost_ns);
		tft_json_write_key(w, "explanation");
		tft_json_write_cstr(w, f->explanation ? f->explanation : "");
		tft_json_write_key(w, "recommendation");
		tft_json_write_cstr(w, f->recommendation ? f->recommendation : "");
		tft_json_write_key(w, "evidence");
		tft_json_write_begin_array(w);
		for (size_t j = 0; j < f->nevidence; j++)
			write_evidence(&f->evidence[j], w);
		tft_json_write_end_array(w);
		tft_json_write_end_object(w);
	}
	tft_json_write_end_array(w);
	tft_json_write_key(w, "checked");
	tft_json_write_begin_array(w);
	for (size_t i = 0; i < r->nchecked; i++) {
		tft_json_write_begin_object(w);
		tft_json_write_key(w, "checker");
		tft_json_write_cstr(w, tft_advise_checker_name(r->checked[i].checker));
		tft_json_write_key(w, "verdict");
		tft_json_write_cstr(w, r->checked[i].text);
		tft_json_write_end_object(w);
	}
	tft_json_write_end_array(w);
	tft_json_write_key(w, "steps");
	tft_json_write_begin_array(w);
	for (size_t i = 0; i < r->nsteps; i++) {
		const struct tft_advise_step *st = &r->steps[i];
		tft_json_write_begin_object(w);
		tft_json_write_key_int(w, "index", st->index);
		tft_json_write_key(w, "process");
		if (st->process == TFT_NONE)
			tft_json_write_null(w);
		else
			tft_json_write_uint(w, st->process);
		tft_json_write_key_int(w, "rank", st->rank);
		tft_json_write_key_int(w, "start_ns", st->start_ns);
		tft_json_write_key_int(w, "duration_ns", st->dur_ns);
		tft_json_write_key(w, "traced");
		tft_json_write_bool(w, st->traced);
		tft_json_write_key(w, "analysed");
		tft_json_write_bool(w, st->analysed);
		tft_json_write_key(w, "breakdown");
		tft_json_write_begin_object(w);
		for (int p = 0; p < TFT_ADVISE_NPARTS; p++)
			tft_json_write_key_int(w, tft_advise_part_name(p), st->part_ns[p]);
		tft_json_write_end_object(w);
		tft_json_write_end_object(w);
	}
	tft_json_write_end_array(w);
	tft_json_write_key_uint(w, "analysed_steps", r->analysed_windows);
	tft_json_write_key_int(w, "analysed_ns", r->analysed_ns);
	tft_json_write_end_object(w);
}

/* ---- names ----------------------------------------------------------------------------- */

static const char *const checker_names[TFT_ADVISE_NCHECKERS] = {
	"step_time", "utilization", "expensive_ops", "op_config",
	"communication", "memory", "variability", "critical_path",
};

static const char *const part_names[TFT_ADVISE_NPARTS] = {
	"device_compute", "communication", "memcpy", "input", "host_compute", "idle",
};

const char *tft_advise_checker_name(int checker)
{
	return checker >= 0 && checker < TFT_ADVISE_NCHECKERS ? checker_names[checker] : NULL;
}

int tft_advise_checker_parse(const char *name, size_t len)
{
	for (int i = 0; i < TFT_ADVISE_NCHECKERS; i++)
		if (strlen(checker_names[i]) == len && !memcmp(checker_names[i], name, len))
			return i;
	return -1;
}

const char *tft_advise_part_name(int part)
{
	return part >= 0 && part < TFT_ADVISE_NPARTS ? part_names[part] : "";
}

/* ---- text --------------------------------------------------------------------------------- */

const char *tft_adv_ns(char *buf, size_t size, int64_t ns)
{
	return tft_stats_format_ns(buf, size, ns);
}

const char *tft_adv_pct(char *buf, size_t size, int64_t part, int64_t whole)
{
	double p = whole > 0 ? 100.0 * (double)part / (double)whole : 0.0;

	if (p >= 10 || p == 0)
		snprintf(buf, size, "%.0f%%", p);
	else
		snprintf(buf, size, "%.1f%%", p);
	return buf;
}

const char *tft_adv_bytes(char *buf, size_t size, double bytes)
{
	static const char *const u[] = { "B", "kB", "MB", "GB", "TB" };
	int k = 0;

	while (bytes >= 1000 && k < 4) {
		bytes /= 1000;
		k++;
	}
	snprintf(buf, size, k ? "%.1f %s" : "%.0f %s", bytes, u[k]);
	return buf;
}

/* ---- map ------------------------------------------------------------------------------------ */

/*
 * (Not core/hmap: a map to records of the caller's size that the checkers
 * iterate in slot order, and some pick the first of equal maxima in that
 * order: records in a dense array beside core/hmap would change which of two
 * equal ops advise names.)
 */

static size_t slot_of(uint32_t key, size_t cap)
{
	return (size_t)((key * 2654435761u) & (cap - 1));
}

static int map_grow(struct adv_map *m)
{
	size_t nc = m->cap ? m->cap * 2 : 64;
	uint32_t *nk = malloc(nc * sizeof(*nk));
	char *nv = calloc(nc, m->vsize);

	if (!nk || !nv) {
		free(nk);
		free(nv);
		return TFT_ENOMEM;
	}
	memset(nk, 0xff, nc * sizeof(*nk));
	for (size_t i = 0; i < m->cap; i++) {
		size_t j;
		if (m->keys[i] == UINT32_MAX)
			continue;
		for (j = slot_of(m->keys[i], nc); nk[j] != UINT32_MAX; j = (j + 1) & (nc - 1))
			;
		nk[j] = m->keys[i];
		memcpy(nv + j * m->vsize, (char *)m->vals + i * m->vsize, m->vsize);
	}
	free(m->keys);
	free(m->vals);
	m->keys = nk;
	m->vals = nv;
	m->cap = nc;
	return 0;
}

void *tft_adv_map_find(const struct adv_map *m, uint32_t key)
{
	if (!m->cap)
		return NULL;
	for (size_t j = slot_of(key, m->cap); m->keys[j] != UINT32_MAX; j = (j + 1) & (m->cap - 1))
		if (m->keys[j] == key)
			return (char *)m->vals + j * m->vsize;
	return NULL;
}

void *tft_adv_map_get(struct adv_map *m, uint32_t key)
{
	void *v = tft_adv_map_find(m, key);
	size_t j;

	if (v)
		return v;
	if ((m->n + 1) * 2 > m->cap && map_grow(m))
		return NULL;
	for (j = slot_of(key, m->cap); m->keys[j] != UINT32_MAX; j = (j + 1) & (m->cap - 1))
		;
	m->keys[j] = key;
	m->n++;
	return (char *)m->vals + j * m->vsize;
}

void *tft_adv_map_slot(const struct adv_map *m, size_t i, uint32_t *key)
{
	if (i >= m->cap || m->keys[i] == UINT32_MAX)
		return NULL;
	if (key)
		*key = m->keys[i];
	return (char *)m->vals + i * m->vsize;
}

void tft_adv_map_fini(struct adv_map *m)
{
	free(m->keys);
	free(m->vals);
	m->keys = NULL;
	m->vals = NULL;
	m->n = m->cap = 0;
}
