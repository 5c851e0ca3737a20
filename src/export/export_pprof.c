/* SPDX-License-Identifier: MIT */
/*
 * pprof profile.proto writer (export_pprof.h): a protobuf wire encoder for
 * the few messages a profile has, then gzip through zlib's deflate.
 * Field numbers are those of perftools.profiles.Profile: sample_type 1,
 * sample 2, location 4, function 5, string_table 6, comment 13,
 * default_sample_type 14; ValueType {type 1, unit 2}; Sample {location_id 1,
 * value 2, label 3}; Label {key 1, str 2}; Location {id 1, line 4};
 * Line {function_id 1, line 2}; Function {id 1, name 2, system_name 3,
 * filename 4, start_line 5}.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "core/grow.h"
#include "core/strtab.h"
#include "export/export_pprof.h"

struct buf {
	uint8_t *p;
	size_t len, cap;
	int oom;
};

static void b_put(struct buf *b, const void *p, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n > b->cap && tft_grow_size_ex((void **)&b->p, &b->cap, b->len + n, 1, 4096, 0)) {
		b->oom = 1;
		return;
	}

	memcpy(b->p + b->len, p, n);
	b->len += n;
}

static void b_varint(struct buf *b, uint64_t v)
{
	uint8_t t[10];
	size_t n = 0;

	while (v >= 0x80) {
		t[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	t[n++] = (uint8_t)v;
	b_put(b, t, n);
}

static void b_int(struct buf *b, uint32_t field, uint64_t v)
{
	b_varint(b, (uint64_t)field << 3);
	b_varint(b, v);
}

static void b_bytes(struct buf *b, uint32_t field, const void *p, size_t n)
{
	b_varint(b, (uint64_t)field << 3 | 2);
	b_varint(b, n);
	b_put(b, p, n);
}

static void b_msg(struct buf *b, uint32_t field, struct buf *sub)
{
	b_bytes(b, field, sub->p, sub->len);
	if (sub->oom)
		b->oom = 1;
	sub->len = 0;
}

/* A packed repeated varint field. */
static void b_packed(struct buf *b, uint32_t field, const uint64_t *v, size_t n, struct buf *tmp)
{
	tmp->len = 0;
	for (size_t i = 0; i < n; i++)
		b_varint(tmp, v[i]);
	b_msg(b, field, tmp);
}

struct strings {
	struct tft_strtab *t;
};

static int64_t sid(struct strings *s, const char *str)
{
	uint32_t id = tft_strtab_intern(s->t, str, strlen(str));

	return id == UINT32_MAX ? 0 : id;
}

static int gzip_write(FILE *fp, const uint8_t *p, size_t n)
{
	z_stream z;
	uint8_t out[65536];
	int rc;

	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return TFT_ENOMEM;
	z.next_in = (Bytef *)p;
	z.avail_in = (uInt)n;
	do {
		z.next_out = out;
		z.avail_out = sizeof(out);
		rc = deflate(&z, Z_FINISH);
		if (rc == Z_STREAM_ERROR) {
			deflateEnd(&z);
			return TFT_EIO;
		}
		size_t have = sizeof(out) - z.avail_out;
		if (have && fwrite(out, 1, have, fp) != have) {
			deflateEnd(&z);
			return TFT_EIO;
		}
	} while (rc != Z_STREAM_END);
	deflateEnd(&z);
	return 0;
}

static const char *unit_of(int m)
{
	switch (m) {
	case TFT_PROF_MICROS:
	case TFT_PROF_ACCEL_MICROS:
	case TFT_PROF_CPU_MICROS: return "nanoseconds";
	case TFT_PROF_BYTES:
	case TFT_PROF_PEAK_BYTES:
	case TFT_PROF_RESIDUAL_BYTES:
	case TFT_PROF_OUTPUT_BYTES: return "bytes";
	default: return "count";
	}
}

static const char *comment_of(int m)
{
	switch (m) {
	case TFT_PROF_MICROS: return "Sum of accelerator execution time and cpu execution time.";
	case TFT_PROF_ACCEL_MICROS: return "Accelerator execution time.";
	case TFT_PROF_CPU_MICROS: return "CPU execution time.";
	case TFT_PROF_BYTES: return "Sum of operation total memory requests, excluding deallocations.";
	case TFT_PROF_PEAK_BYTES: return "Sum of operation peak memory usage.";
	case TFT_PROF_RESIDUAL_BYTES: return "Sum of operation allocated memory after finish.";
	case TFT_PROF_OUTPUT_BYTES: return "Sum of operation output size.";
	case TFT_PROF_PARAMS: return "Model parameters.";
	case TFT_PROF_FLOAT_OPS: return "Model float operations (Only available if defined).";
	default: return "Executions per step.";
	}
}

int tft_export_pprof(const struct tft_prof_result *r, FILE *fp, struct tft_error *err)
{
	struct strings st = { 0 };
	struct buf out = { 0 }, sub = { 0 }, sub2 = { 0 }, tmp = { 0 };
	uint32_t *parent = NULL, *stack = NULL;
	uint64_t *ids = NULL;
	int metric = -1, nsel = 0, rc = 0;

	for (int m = 0; m < TFT_PROF_NMETRICS; m++)
		if (r->opts->select & TFT_PROF_SEL_METRIC(m)) {
			metric = m;
			nsel++;
		}
	if (nsel != 1)
		return tft_error_set(err, TFT_EINVAL, -1,
				     "pprof output takes exactly one metric in -select (micros, accelerator_micros, "
				     "cpu_micros, bytes, peak_bytes, residual_bytes, output_bytes, params, float_ops or "
				     "occurrence), not %d", nsel);
	st.t = tft_strtab_create();
	parent = malloc(sizeof(uint32_t) * (r->nnodes + 1));
	stack = malloc(sizeof(uint32_t) * (r->nnodes + 1));
	ids = malloc(sizeof(uint64_t) * (r->nnodes + 1));
	if (!st.t || !parent || !stack || !ids) {
		rc = TFT_ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < r->nnodes; i++)
		parent[i] = UINT32_MAX;
	for (uint32_t i = 0; i < r->nnodes; i++)
		for (uint32_t k = 0; k < r->nodes[i].nchildren; k++)
			parent[r->nodes[i].first_child + k] = i;
	/* sample types: [count, the metric]; string 0 is "" (pprof requires it) */
	sid(&st, "");
	b_int(&sub, 1, (uint64_t)sid(&st, "count"));
	b_int(&sub, 2, (uint64_t)sid(&st, "count"));
	b_msg(&out, 1, &sub);
	b_int(&sub, 1, (uint64_t)sid(&st, tft_prof_metric_name(metric)));
	b_int(&sub, 2, (uint64_t)sid(&st, unit_of(metric)));
	b_msg(&out, 1, &sub);
	/* samples: each contribution at its node, the stack up to (not including) the root */
	for (uint32_t i = 1; i < r->nnodes; i++) {
		const struct tft_prof_node *n = &r->nodes[i];
		uint32_t depth = 0;
		for (uint32_t j = i; j != 0 && j != UINT32_MAX; j = parent[j])
			stack[depth++] = j;
		for (uint32_t d = 0; d < depth; d++)
			ids[d] = stack[d] + 1; /* location id = node index + 1, leaf first */
		for (uint32_t k = 0; k < n->nexec; k++) {
			const struct tft_prof_contrib *c = &r->contribs[n->exec_first + k];
			struct tft_prof_record rec;
			double v = c->v[metric];
			uint64_t vals[2];
			if (metric == TFT_PROF_MICROS || metric == TFT_PROF_ACCEL_MICROS || metric == TFT_PROF_CPU_MICROS)
				v *= 1000.0;
			vals[0] = 1;
			vals[1] = (uint64_t)(int64_t)llround(v);
			b_packed(&sub, 1, ids, depth, &tmp);
			b_packed(&sub, 2, vals, 2, &tmp);
			tft_prof_record_get(r->prof, c->record, &rec);
			b_int(&sub2, 1, (uint64_t)sid(&st, "graph node:"));
			b_int(&sub2, 2, (uint64_t)sid(&st, rec.name ? rec.name : ""));
			b_msg(&sub, 3, &sub2);
			b_msg(&out, 2, &sub);
		}
	}
	/* a location and a function per shown node */
	for (uint32_t i = 1; i < r->nnodes; i++) {
		const struct tft_prof_node *n = &r->nodes[i];
		char name[1200];
		const char *file = n->file ? n->file : "";
		if (n->function) {
			/* tfprof: "<file base name without its extension>:<function>" */
			const char *base = strrchr(file, '/');
			base = base ? base + 1 : file;
			const char *dot = strrchr(base, '.');
			snprintf(name, sizeof(name), "%.*s:%s", (int)(dot ? (size_t)(dot - base) : strlen(base)), base,
				 n->function);
		} else {
			snprintf(name, sizeof(name), "%s", n->name);
		}
		b_int(&sub2, 1, i + 1);
		b_int(&sub2, 2, (uint64_t)n->line);
		b_int(&sub, 1, i + 1);
		b_msg(&sub, 4, &sub2);
		b_msg(&out, 4, &sub);
		b_int(&sub, 1, i + 1);
		b_int(&sub, 2, (uint64_t)sid(&st, name));
		b_int(&sub, 3, (uint64_t)sid(&st, name));
		b_int(&sub, 4, (uint64_t)sid(&st, file));
		b_msg(&out, 5, &sub);
	}
	b_int(&out, 13, (uint64_t)sid(&st, comment_of(metric)));
	b_int(&out, 14, (uint64_t)sid(&st, tft_prof_metric_name(metric)));
	for (uint32_t i = 0; i < tft_strtab_count(st.t); i++) {
		size_t len;
		const char *s = tft_strtab_get(st.t, i, &len);
		b_bytes(&out, 6, s ? s : "", s ? len : 0);
	}
	if (out.oom || sub.oom || sub2.oom || tmp.oom) {
		rc = TFT_ENOMEM;
		goto out;
	}
	rc = gzip_write(fp, out.p, out.len);
out:
	if (st.t)
		tft_strtab_destroy(st.t);
	free(out.p);
	free(sub.p);
	free(sub2.p);
	free(tmp.p);
	free(parent);
	free(stack);
	free(ids);
	if (rc)
		tft_error_set(err, rc, -1, rc == TFT_ENOMEM ? "out of memory" : "cannot write the pprof file");
	return rc;
}
