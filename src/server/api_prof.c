/* SPDX-License-Identifier: MIT */
/*
 * GET /api/prof?view=scope|graph|op|code&<tfprof options>: a tftracer prof
 * view as `tftracer prof SESSION VIEW --json` writes it ({"view", "step",
 * "steps", "select", "root": NODE}, docs/cmd-prof.md). Each tfprof option
 * is a query parameter of its name without the dash (select=params,micros,
 * max_depth=4, account_type_regexes=_trainable_variables ...); -output is
 * not one (the server writes no files). analyze/prof*.c computes,
 * export/export_prof.c writes; this file parses the query.
 * With node=ID (a node's "id" in that view): the executions of that node
 * and the nodes below it as slice ids (the Analysis page selects them on
 * the Timeline). With slice=TRACK.TS.DEPTH: the graph node that slice is an
 * execution of, its FLOPs and achieved rate. With roofline=1: the roofline
 * table (`tftracer prof --roofline --json`). docs/http-api.md.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/prof.h"
#include "export/export_prof.h"
#include "server/api.h"

#define NODE_SLICES_MAX 2000

/* a node and the nodes below it: their records marked in want */
static void mark(const struct tft_prof_result *res, uint32_t id, uint8_t *want, uint32_t nrec)
{
	const struct tft_prof_node *n = &res->nodes[id];

	for (uint32_t i = 0; i < n->nexec; i++)
		if (res->contribs[n->exec_first + i].record < nrec)
			want[res->contribs[n->exec_first + i].record] = 1;
	for (uint32_t c = 0; c < n->nchildren; c++)
		mark(res, n->first_child + c, want, nrec);
}

struct node_slices {
	struct tft_json_writer *w;
	uint64_t n;
	int64_t t0, t1;
	int64_t track; /* -1: none yet, -2: several */
};

static int node_slice(void *ctx, const struct tft_prof_exec *e)
{
	struct node_slices *ns = ctx;
	char id[64];

	if (ns->n < NODE_SLICES_MAX) {
		snprintf(id, sizeof(id), "%u.%" PRId64 ".%u", e->track, e->ts_ns, e->depth);
		tft_json_write_cstr(ns->w, id);
	}
	if (!ns->n || e->ts_ns < ns->t0)
		ns->t0 = e->ts_ns;
	if (!ns->n || e->ts_ns + e->dur_ns > ns->t1)
		ns->t1 = e->ts_ns + e->dur_ns;
	ns->track = ns->track == -1 || ns->track == (int64_t)e->track ? (int64_t)e->track : -2;
	ns->n++;
	return 0;
}

/* {"node", "name", "executions", "track", "t0_ns", "t1_ns", "slice_ids": [...]} */
static int node_json(struct tft_prof *prof, const struct tft_prof_result *res, uint32_t id,
		     struct tft_json_writer *w, struct tft_error *err)
{
	uint32_t nrec = tft_prof_record_count(prof);
	uint8_t *want = calloc(nrec + 1, 1);
	struct node_slices ns = { .w = w, .track = -1 };
	int rc;

	if (!want)
		return TFT_ENOMEM;
	mark(res, id, want, nrec);
	tft_json_write_begin_object(w);
	tft_json_write_key(w, "node");
	tft_json_write_uint(w, id);
	tft_json_write_key(w, "name");
	tft_json_write_cstr(w, res->nodes[id].name);
	tft_json_write_key(w, "slice_ids");
	tft_json_write_begin_array(w);
	rc = tft_prof_executions(prof, want, node_slice, &ns, err);
	tft_json_write_end_array(w);
	free(want);
	tft_json_write_key(w, "executions");
	tft_json_write_uint(w, ns.n);
	tft_json_write_key(w, "truncated");
	tft_json_write_bool(w, ns.n > NODE_SLICES_MAX);
	tft_json_write_key(w, "track");
	if (ns.track >= 0)
		tft_json_write_uint(w, (uint64_t)ns.track);
	else
		tft_json_write_null(w);
	tft_json_write_key(w, "t0_ns");
	tft_json_write_int(w, ns.t0);
	tft_json_write_key(w, "t1_ns");
	tft_json_write_int(w, ns.t1);
	tft_json_write_end_object(w);
	return rc;
}

struct slice_find {
	uint32_t track, depth;
	int64_t ts;
	bool found, accel;
	uint32_t record;
	int64_t dur;
};

static int slice_match(void *ctx, const struct tft_prof_exec *e)
{
	struct slice_find *f = ctx;

	if (e->track != f->track || e->ts_ns != f->ts || e->depth != f->depth)
		return 0;
	f->found = true;
	f->record = e->record;
	f->accel = e->accelerator;
	f->dur = e->dur_ns;
	return 1;
}

static void num_or_null(struct tft_json_writer *w, const char *key, double v, bool known)
{
	tft_json_write_key(w, key);
	if (known)
		tft_json_write_double(w, v);
	else
		tft_json_write_null(w);
}

/*
 * {"slice", "found", "record" (its scope path), "op", "accelerator", "micros",
 * "params", "float_ops" (of one execution), "flops_per_s" (one execution's FLOPs
 * over its time on the accelerator where it has any, else over this slice)}
 */
static int slice_json(struct tft_prof *prof, const char *id, struct tft_json_writer *w, struct tft_error *err)
{
	struct slice_find f = { 0 };
	uint32_t nrec = tft_prof_record_count(prof);
	uint8_t *want;
	long long sts;
	int rc;

	if (sscanf(id, "%u.%lld.%u", &f.track, &sts, &f.depth) != 3)
		return TFT_EINVAL;
	f.ts = sts;
	want = malloc(nrec + 1);
	if (!want)
		return TFT_ENOMEM;
	memset(want, 1, nrec + 1);
	rc = tft_prof_executions(prof, want, slice_match, &f, err);
	free(want);
	if (rc < 0)
		return rc;
	tft_json_write_begin_object(w);
	tft_json_write_key(w, "slice");
	tft_json_write_cstr(w, id);
	tft_json_write_key(w, "found");
	tft_json_write_bool(w, f.found);
	if (f.found) {
		struct tft_prof_record rec;
		tft_prof_record_get(prof, f.record, &rec);
		double occ = rec.self[TFT_PROF_OCCURRENCE];
		double flops = occ > 0 ? rec.self[TFT_PROF_FLOAT_OPS] / occ : 0;
		double accel = occ > 0 ? rec.self[TFT_PROF_ACCEL_MICROS] / occ : 0;
		double secs = (accel > 0 ? accel : (double)f.dur / 1e3) / 1e6;
		tft_json_write_key(w, "record");
		tft_json_write_cstr(w, rec.name);
		tft_json_write_key(w, "op");
		tft_json_write_cstr(w, rec.op ? rec.op : "");
		tft_json_write_key(w, "accelerator");
		tft_json_write_bool(w, f.accel);
		num_or_null(w, "micros", (double)f.dur / 1e3, true);
		num_or_null(w, "params", rec.self[TFT_PROF_PARAMS], true);
		num_or_null(w, "float_ops", flops, occ > 0);
		num_or_null(w, "accelerator_micros", accel, occ > 0 && accel > 0);
		num_or_null(w, "flops_per_s", flops / secs, flops > 0 && secs > 0);
	}
	tft_json_write_end_object(w);
	return 0;
}

int tft_api_prof(struct tft_http_req *r)
{
	struct tft_prof_opts opts;
	struct tft_prof_result *res = NULL;
	struct tft_prof *prof = NULL;
	struct tft_pool_slot *slot;
	struct tft_json_writer w;
	struct tft_error err;
	size_t len;
	const char *vs = tft_query_get(&r->query, "view", &len);
	char buf[1024];
	int view = TFT_PROF_SCOPE, rc;

	if (vs) {
		snprintf(buf, sizeof(buf), "%.*s", (int)(len < sizeof(buf) ? len : sizeof(buf) - 1), vs);
		view = tft_prof_view_parse(buf);
		if (view < 0)
			return tft_http_reply_error(r, 400, "view must be scope, graph, op or code");
	}
	if (tft_query_get(&r->query, "output", NULL))
		return tft_http_reply_error(r, 400, "output is not an option of /api/prof (the server writes no files)");
	tft_prof_opts_init(&opts);
	for (int i = 0; tft_prof_opt_names[i]; i++) {
		const char *name = tft_prof_opt_names[i], *v;
		if (strcmp(name, "output") == 0)
			continue;
		v = tft_query_get(&r->query, name, &len);
		if (!v)
			continue;
		if (len >= sizeof(buf)) {
			tft_prof_opts_fini(&opts);
			return tft_http_reply_error(r, 400, "an option value is too long");
		}
		memcpy(buf, v, len);
		buf[len] = '\0';
		tft_error_clear(&err);
		/* account_displayed_op_only= alone means true, as -account_displayed_op_only alone */
		if (tft_prof_opts_set(&opts, name, len || tft_prof_opt_takes_value(name) ? buf : NULL, &err)) {
			char msg[128];
			tft_prof_opts_fini(&opts);
			/* (the message names the option, from our table, not the request's value) */
			snprintf(msg, sizeof(msg), "bad value for %s (docs/cmd-prof.md lists the options)", name);
			return tft_http_reply_error(r, 400, msg);
		}
	}
	tft_error_clear(&err);
	slot = tft_pool_acquire(&r->srv->pool, &err);
	if (!slot) {
		tft_prof_opts_fini(&opts);
		return tft_http_reply_status(r, err.code ? err.code : TFT_EIO, &err);
	}
	prof = tft_prof_open(slot->sess, opts.step, 0, &err);
	rc = prof ? 0 : err.code ? err.code : TFT_EIO;
	tft_json_write_init_mem(&w);
	if (rc == 0 && tft_query_get(&r->query, "roofline", NULL)) {
		struct tft_prof_roofline_row *rows = NULL;
		struct tft_prof_info in;
		uint32_t n = 0;
		rc = tft_prof_roofline(prof, &rows, &n);
		tft_prof_get_info(prof, &in);
		if (rc == 0)
			tft_export_prof_roofline_json(rows, n, in.nsteps, &w);
		free(rows);
	} else if (rc == 0 && tft_query_get(&r->query, "slice", &len)) {
		const char *sv = tft_query_get(&r->query, "slice", &len);
		snprintf(buf, sizeof(buf), "%.*s", (int)(len < sizeof(buf) ? len : sizeof(buf) - 1), sv);
		rc = slice_json(prof, buf, &w, &err);
		if (rc == TFT_EINVAL)
			tft_error_set(&err, TFT_EINVAL, -1, "slice must be TRACK.TS.DEPTH");
	} else if (rc == 0) {
		rc = tft_prof_view(prof, view, &opts, &res, &err);
		const char *nv = rc == 0 ? tft_query_get(&r->query, "node", &len) : NULL;
		if (nv) {
			char *end;
			unsigned long id;
			snprintf(buf, sizeof(buf), "%.*s", (int)(len < sizeof(buf) ? len : sizeof(buf) - 1), nv);
			id = strtoul(buf, &end, 10);
			if (end == buf || *end || id >= res->nnodes) {
				rc = TFT_EINVAL;
				tft_error_set(&err, TFT_EINVAL, -1, "node must be a node id of the view");
			} else {
				rc = node_json(prof, res, (uint32_t)id, &w, &err);
			}
		} else if (rc == 0) {
			tft_export_prof_json(res, &w);
		}
	}
	/* names are borrowed from the profile: write before closing it */
	tft_prof_result_free(res);
	tft_prof_close(prof);
	tft_pool_release(slot);
	tft_prof_opts_fini(&opts);
	if (rc != 0) {
		tft_json_write_fini(&w);
		return tft_http_reply_status(r, rc, &err);
	}
	return tft_http_reply_json(r, 200, &w);
}
