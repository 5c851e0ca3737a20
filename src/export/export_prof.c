/* SPDX-License-Identifier: MIT */
/*
 * Text, JSON and CSV of a tftracer prof view (export_prof.h). The text is
 * tfprof's (tfprof_show.cc FormatNode / FormatLegend, tfprof_op.cc,
 * tfprof_code.cc, tfprof_utils.cc QueryDoc and the Format* helpers), with
 * values per step that may have a fraction where tfprof's integers had none.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "export/export_prof.h"

#define SEL(o, m) (((o)->select & TFT_PROF_SEL_METRIC(m)) != 0)

/* ---- tfprof's formats ----------------------------------------------------------------------- */

static bool integral(double v)
{
	return v == floor(v) && fabs(v) < 9e15;
}

/* tfprof's scaled values: below the second unit as an integer where it is one, else %.2f of the largest unit reached. */
struct unit {
	double scale;
	const char *suffix;
};

static const char *format_scaled(char *buf, size_t size, double v, const struct unit *u, size_t n)
{
	size_t i = 0;

	while (i + 1 < n && v >= u[i + 1].scale)
		i++;
	if (i == 0 && integral(v))
		snprintf(buf, size, "%lld%s", (long long)v, u[0].suffix);
	else
		snprintf(buf, size, "%.2f%s", v / u[i].scale, u[i].suffix);
	return buf;
}

const char *tft_prof_format_number(char *buf, size_t size, double n)
{
	static const struct unit u[] = { { 1, "" }, { 1e3, "k" }, { 1e6, "m" }, { 1e9, "b" } };

	return format_scaled(buf, size, n, u, sizeof(u) / sizeof(u[0]));
}

const char *tft_prof_format_time(char *buf, size_t size, double micros)
{
	static const struct unit u[] = { { 1, "us" }, { 1e3, "ms" }, { 1e6, "sec" } };

	return format_scaled(buf, size, micros, u, sizeof(u) / sizeof(u[0]));
}

const char *tft_prof_format_memory(char *buf, size_t size, double bytes)
{
	static const struct unit u[] = { { 1, "B" }, { 1e3, "KB" }, { 1e6, "MB" } };

	return format_scaled(buf, size, bytes, u, sizeof(u) / sizeof(u[0]));
}

/* ---- a growable line --------------------------------------------------------------------------- */

struct line {
	char *p;
	size_t len, cap;
	int oom;
};

static void put(struct line *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct line *l, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(l->p ? l->p + l->len : NULL, l->p ? l->cap - l->len : 0, fmt, ap);
		va_end(ap);
		if (n < 0)
			return;
		if (l->p && (size_t)n < l->cap - l->len) {
			l->len += (size_t)n;
			return;
		}
		if (tft_grow_size_ex((void **)&l->p, &l->cap, l->len + (size_t)n + 1, 1, 256, 0)) {
			l->oom = 1;
			return;
		}

	}
}

/* "self/total" in a format, or "--/total" when the node is not accounted (tfprof's FormatNode*). */
typedef const char *(*fmt_fn)(char *, size_t, double);

static void pair(struct line *l, const struct tft_prof_node *n, int m, fmt_fn f, const char *suffix)
{
	char a[64], b[64];

	f(b, sizeof(b), n->total[m]);
	if (n->accounted)
		put(l, "%s/%s%s", f(a, sizeof(a), n->self[m]), b, suffix);
	else
		put(l, "--/%s%s", b, suffix);
}

static void sep(struct line *l, int *first)
{
	if (!*first)
		put(l, ", ");
	*first = 0;
}

/* ---- the Doc block ---------------------------------------------------------------------------------- */

static const char *const view_doc[] = {
	"scope: The nodes in the model graph are organized by their names, which is hierarchical like filesystem.",
	"graph: The nodes in the model graph are organized by their operation input and output.",
	"op: The nodes are operation kernel type, such as MatMul, Conv2D. Graph nodes belonging to the same type are aggregated together.",
	"code: When python trace is available, the nodes are python lines and their are organized by the python call stack.",
};

/* tfprof's QueryDoc: the select names in alphabetical order (a std::set), one help each. */
static void doc(struct line *l, const struct tft_prof_result *r)
{
	static const struct { const char *name; int bit; const char *help; } helps[] = {
		{ "accelerator_micros", TFT_PROF_ACCEL_MICROS, "accelerator execution time: Time spent executing on the accelerator. This is normally measured by the actual hardware library." },
		{ "bytes", TFT_PROF_BYTES, "requested bytes: The memory requested by the operation, accumulatively." },
		{ "cpu_micros", TFT_PROF_CPU_MICROS, "cpu execution time: The time from the start to the end of the operation. It's the sum of actual cpu run time plus the time that it spends waiting if part of computation is launched asynchronously." },
		{ "device", TFT_PROF_NMETRICS + 1, "device: which device is placed on." },
		{ "float_ops", TFT_PROF_FLOAT_OPS, "flops: Number of float operations. Note: Please read the implementation for the math behind it." },
		{ "input_shapes", TFT_PROF_NMETRICS + 3, "input shape: The shape of input tensors" },
		{ "micros", TFT_PROF_MICROS, "total execution time: Sum of accelerator execution time and cpu execution time.\ncpu execution time: The time from the start to the end of the operation. It's the sum of actual cpu run time plus the time that it spends waiting if part of computation is launched asynchronously.\naccelerator execution time: Time spent executing on the accelerator. This is normally measured by the actual hardware library." },
		{ "occurrence", TFT_PROF_OCCURRENCE, "occurrence: The number of times it occurs" },
		{ "op_types", TFT_PROF_NMETRICS + 2, "op_types: The attributes of the operation, includes the Kernel name device placed on and user-defined strings." },
		{ "output_bytes", TFT_PROF_OUTPUT_BYTES, "output bytes: The memory that is output from the operation (not necessarilty allocated by the operation)" },
		{ "params", TFT_PROF_PARAMS, "param: Number of parameters (in the Variable)." },
		{ "peak_bytes", TFT_PROF_PEAK_BYTES, "peak bytes: The peak amount of memory that the operation is holding at some point." },
		{ "residual_bytes", TFT_PROF_RESIDUAL_BYTES, "residual bytes: The memory not de-allocated after the operation finishes." },
		{ "tensor_value", TFT_PROF_NMETRICS, "tensor_value: Not supported now." },
	};
	int first = 1;

	put(l, "\nDoc:\n%s\n", view_doc[r->view]);
	for (size_t i = 0; i < sizeof(helps) / sizeof(helps[0]); i++)
		if (r->opts->select & (1u << helps[i].bit)) {
			put(l, "%s%s", first ? "" : "\n", helps[i].help);
			first = 0;
		}
	put(l, "\n\n");
}

/* ---- tree views -------------------------------------------------------------------------------------- */

static void legend_tree(struct line *l, const struct tft_prof_opts *o, bool code)
{
	const char *v[20];
	int n = 0;

	if (!code) {
		if (SEL(o, TFT_PROF_PARAMS))
			v[n++] = "# parameters";
		if (SEL(o, TFT_PROF_FLOAT_OPS))
			v[n++] = "# float_ops";
	}
	if (SEL(o, TFT_PROF_BYTES))
		v[n++] = "requested bytes";
	if (SEL(o, TFT_PROF_PEAK_BYTES))
		v[n++] = "peak bytes";
	if (SEL(o, TFT_PROF_RESIDUAL_BYTES))
		v[n++] = "residual bytes";
	if (SEL(o, TFT_PROF_OUTPUT_BYTES))
		v[n++] = "output bytes";
	if (SEL(o, TFT_PROF_MICROS)) {
		v[n++] = "total execution time";
		v[n++] = "accelerator execution time";
		v[n++] = "cpu execution time";
	}
	if (SEL(o, TFT_PROF_ACCEL_MICROS) && !SEL(o, TFT_PROF_MICROS))
		v[n++] = "accelerator execution time";
	if (SEL(o, TFT_PROF_CPU_MICROS) && !SEL(o, TFT_PROF_MICROS))
		v[n++] = "cpu execution time";
	if (code) {
		if (SEL(o, TFT_PROF_PARAMS))
			v[n++] = "# parameters";
		if (SEL(o, TFT_PROF_FLOAT_OPS))
			v[n++] = "# float_ops";
	}
	if (o->select & TFT_PROF_SEL_DEVICE)
		v[n++] = "assigned devices";
	if (o->select & TFT_PROF_SEL_OP_TYPES)
		v[n++] = "op types";
	if (SEL(o, TFT_PROF_OCCURRENCE))
		v[n++] = code ? "op occurrence (run|defined)" : "op count (run|defined)";
	if (o->select & TFT_PROF_SEL_INPUT_SHAPES)
		v[n++] = "input shapes";
	put(l, "node name");
	for (int i = 0; i < n; i++)
		put(l, "%s%s", i ? " | " : " | ", v[i]);
	put(l, "\n");
}

static void times(struct line *l, const struct tft_prof_node *n, const struct tft_prof_opts *o, int *first)
{
	if (SEL(o, TFT_PROF_MICROS)) {
		sep(l, first);
		pair(l, n, TFT_PROF_MICROS, tft_prof_format_time, "");
		sep(l, first);
		pair(l, n, TFT_PROF_ACCEL_MICROS, tft_prof_format_time, "");
		sep(l, first);
		pair(l, n, TFT_PROF_CPU_MICROS, tft_prof_format_time, "");
	}
	if (SEL(o, TFT_PROF_ACCEL_MICROS) && !SEL(o, TFT_PROF_MICROS)) {
		sep(l, first);
		pair(l, n, TFT_PROF_ACCEL_MICROS, tft_prof_format_time, "");
	}
	if (SEL(o, TFT_PROF_CPU_MICROS) && !SEL(o, TFT_PROF_MICROS)) {
		sep(l, first);
		pair(l, n, TFT_PROF_CPU_MICROS, tft_prof_format_time, "");
	}
}

static void params_flops(struct line *l, const struct tft_prof_node *n, const struct tft_prof_opts *o, int *first,
			 bool shape)
{
	if (SEL(o, TFT_PROF_PARAMS)) {
		if (shape && n->shape && n->shape[0]) {
			sep(l, first);
			put(l, "%s", n->shape);
		}
		sep(l, first);
		pair(l, n, TFT_PROF_PARAMS, tft_prof_format_number, " params");
	}
	if (SEL(o, TFT_PROF_FLOAT_OPS)) {
		sep(l, first);
		pair(l, n, TFT_PROF_FLOAT_OPS, tft_prof_format_number, " flops");
	}
}

static void tree_node(struct line *l, const struct tft_prof_result *r, uint32_t id, unsigned indent)
{
	const struct tft_prof_node *n = &r->nodes[id];
	const struct tft_prof_opts *o = r->opts;
	bool code = r->view == TFT_PROF_CODE;
	int first = 1;
	char a[64], b[64];

	put(l, "%*s%s (", indent, "", n->name);
	if (!code)
		params_flops(l, n, o, &first, true);
	static const int mem[4] = { TFT_PROF_BYTES, TFT_PROF_PEAK_BYTES, TFT_PROF_RESIDUAL_BYTES,
				    TFT_PROF_OUTPUT_BYTES };
	for (int i = 0; i < 4; i++)
		if (SEL(o, mem[i])) {
			sep(l, &first);
			pair(l, n, mem[i], tft_prof_format_memory, "");
		}
	times(l, n, o, &first);
	if (code)
		params_flops(l, n, o, &first, false);
	if ((o->select & TFT_PROF_SEL_DEVICE) && n->devices[0]) {
		sep(l, &first);
		put(l, "%s", n->devices);
	}
	if (o->select & TFT_PROF_SEL_OP_TYPES) {
		sep(l, &first);
		put(l, "%s", n->op_types);
	}
	if (SEL(o, TFT_PROF_OCCURRENCE)) {
		sep(l, &first);
		tft_prof_format_number(b, sizeof(b), n->total[TFT_PROF_OCCURRENCE]);
		if (n->accounted)
			put(l, "%s/%s", tft_prof_format_number(a, sizeof(a), n->self[TFT_PROF_OCCURRENCE]), b);
		else
			put(l, "--/%s", b);
		tft_prof_format_number(b, sizeof(b), (double)n->defined);
		if (n->accounted)
			put(l, "|%s/%s", tft_prof_format_number(a, sizeof(a), (double)n->self_defined), b);
		else
			put(l, "|--/%s", b);
	}
	if (o->select & TFT_PROF_SEL_INPUT_SHAPES) {
		sep(l, &first);
		put(l, "%s", n->input_shapes);
	}
	put(l, ")\n");
	for (uint32_t i = 0; i < n->nchildren; i++)
		tree_node(l, r, n->first_child + i, indent + 2);
}

/* ---- the op view ----------------------------------------------------------------------------------------- */

static void legend_op(struct line *l, const struct tft_prof_opts *o)
{
	const char *v[20];
	int n = 0;

	if (SEL(o, TFT_PROF_BYTES))
		v[n++] = "requested bytes";
	if (SEL(o, TFT_PROF_PEAK_BYTES))
		v[n++] = "peak bytes";
	if (SEL(o, TFT_PROF_RESIDUAL_BYTES))
		v[n++] = "residual bytes";
	if (SEL(o, TFT_PROF_OUTPUT_BYTES))
		v[n++] = "output bytes";
	if (SEL(o, TFT_PROF_MICROS)) {
		v[n++] = "total execution time";
		v[n++] = "accelerator execution time";
		v[n++] = "cpu execution time";
	}
	if (SEL(o, TFT_PROF_ACCEL_MICROS) && !SEL(o, TFT_PROF_MICROS))
		v[n++] = "accelerator execution time";
	if (SEL(o, TFT_PROF_CPU_MICROS) && !SEL(o, TFT_PROF_MICROS))
		v[n++] = "cpu execution time";
	if (SEL(o, TFT_PROF_PARAMS))
		v[n++] = "# parameters";
	if (SEL(o, TFT_PROF_FLOAT_OPS))
		v[n++] = "# float_ops";
	if (o->select & TFT_PROF_SEL_DEVICE)
		v[n++] = "assigned devices";
	if (o->select & TFT_PROF_SEL_OP_TYPES)
		v[n++] = "op types";
	if (SEL(o, TFT_PROF_OCCURRENCE))
		v[n++] = "op occurrence (run|defined)";
	if (o->select & TFT_PROF_SEL_INPUT_SHAPES)
		v[n++] = "input shapes";
	put(l, "node name");
	for (int i = 0; i < n; i++)
		put(l, " | %s", v[i]);
	put(l, "\n");
}

/* "%30s" of "value (cumulative %, self %)" against the root's total (tfprof_op.cc). */
static void op_cell(struct line *l, const struct tft_prof_node *n, const struct tft_prof_node *root, int m,
		    fmt_fn f, const char *suffix, bool by_cum)
{
	char v[64], cell[160];
	double accu = 0, pct = 0, gate = by_cum ? n->cum[m] : n->self[m];

	if (gate > 0 && root->total[m] > 0) {
		accu = 100.0 * n->cum[m] / root->total[m];
		pct = 100.0 * n->self[m] / root->total[m];
	}
	snprintf(cell, sizeof(cell), "%s%s (%.2f%%, %.2f%%)", f(v, sizeof(v), n->self[m]), suffix, accu, pct);
	put(l, "%30s", cell);
}

static void op_list(struct line *l, const struct tft_prof_result *r)
{
	const struct tft_prof_node *root = &r->nodes[0];
	const struct tft_prof_opts *o = r->opts;

	for (uint32_t i = 0; i < root->nchildren; i++) {
		const struct tft_prof_node *n = &r->nodes[root->first_child + i];
		int first = 1;
		static const int mem[4] = { TFT_PROF_BYTES, TFT_PROF_PEAK_BYTES, TFT_PROF_RESIDUAL_BYTES,
					    TFT_PROF_OUTPUT_BYTES };

		put(l, "%-25s", n->name);
		for (int k = 0; k < 4; k++)
			if (SEL(o, mem[k])) {
				sep(l, &first);
				op_cell(l, n, root, mem[k], tft_prof_format_memory, "", false);
			}
		if (SEL(o, TFT_PROF_MICROS)) {
			sep(l, &first);
			op_cell(l, n, root, TFT_PROF_MICROS, tft_prof_format_time, "", true);
			sep(l, &first);
			op_cell(l, n, root, TFT_PROF_ACCEL_MICROS, tft_prof_format_time, "", true);
			sep(l, &first);
			op_cell(l, n, root, TFT_PROF_CPU_MICROS, tft_prof_format_time, "", true);
		}
		if (SEL(o, TFT_PROF_ACCEL_MICROS) && !SEL(o, TFT_PROF_MICROS)) {
			sep(l, &first);
			op_cell(l, n, root, TFT_PROF_ACCEL_MICROS, tft_prof_format_time, "", true);
		}
		if (SEL(o, TFT_PROF_CPU_MICROS) && !SEL(o, TFT_PROF_MICROS)) {
			sep(l, &first);
			op_cell(l, n, root, TFT_PROF_CPU_MICROS, tft_prof_format_time, "", true);
		}
		if (SEL(o, TFT_PROF_PARAMS)) {
			sep(l, &first);
			op_cell(l, n, root, TFT_PROF_PARAMS, tft_prof_format_number, " params", true);
		}
		if (SEL(o, TFT_PROF_FLOAT_OPS)) {
			sep(l, &first);
			op_cell(l, n, root, TFT_PROF_FLOAT_OPS, tft_prof_format_number, " float_ops", true);
		}
		if (o->select & TFT_PROF_SEL_DEVICE) {
			sep(l, &first);
			put(l, "%s", n->devices);
		}
		if (o->select & TFT_PROF_SEL_OP_TYPES) {
			sep(l, &first);
			put(l, "%s", n->op_types);
		}
		if (SEL(o, TFT_PROF_OCCURRENCE)) {
			char a[64], b[64], cell[140];
			sep(l, &first);
			snprintf(cell, sizeof(cell), "%s|%s", tft_prof_format_number(a, sizeof(a), n->self[TFT_PROF_OCCURRENCE]),
				 tft_prof_format_number(b, sizeof(b), (double)n->self_defined));
			put(l, "%10s", cell);
		}
		put(l, "\n");
		if ((o->select & TFT_PROF_SEL_INPUT_SHAPES) && n->input_shapes[0])
			put(l, "\ninput_type: %s\n\n", n->input_shapes);
	}
}

int tft_export_prof_text(const struct tft_prof_result *r, FILE *fp)
{
	struct line l = { 0 };
	int rc = 0;

	doc(&l, r);
	put(&l, "Profile:\n");
	if (r->view == TFT_PROF_OP) {
		legend_op(&l, r->opts);
		op_list(&l, r);
	} else {
		legend_tree(&l, r->opts, r->view == TFT_PROF_CODE);
		tree_node(&l, r, 0, 0);
	}
	if (l.oom)
		rc = -ENOMEM;
	else if (l.len && fwrite(l.p, 1, l.len, fp) != l.len)
		rc = -EIO;
	free(l.p);
	return rc;
}

/* ---- JSON ------------------------------------------------------------------------------------------ */

static void metrics(struct tft_json_writer *w, const struct tft_prof_opts *o, const double *v)
{
	tft_json_write_begin_object(w);
	for (int m = 0; m < TFT_PROF_NMETRICS; m++)
		if (SEL(o, m)) {
			tft_json_write_key(w, tft_prof_metric_name(m));
			tft_json_write_double(w, v[m]);
		}
	tft_json_write_end_object(w);
}

static void json_node(struct tft_json_writer *w, const struct tft_prof_result *r, uint32_t id, int depth)
{
	const struct tft_prof_node *n = &r->nodes[id];
	const struct tft_prof_opts *o = r->opts;

	tft_json_write_begin_object(w);
	tft_json_write_key(w, "id");
	tft_json_write_uint(w, id);
	tft_json_write_key(w, "name");
	tft_json_write_cstr(w, n->name);
	tft_json_write_key(w, "accounted");
	tft_json_write_bool(w, n->accounted);
	tft_json_write_key(w, "self");
	metrics(w, o, n->self);
	tft_json_write_key(w, "total");
	metrics(w, o, n->total);
	if (SEL(o, TFT_PROF_OCCURRENCE)) {
		tft_json_write_key(w, "defined");
		tft_json_write_uint(w, n->defined);
	}
	if (SEL(o, TFT_PROF_PARAMS) && n->shape) {
		tft_json_write_key(w, "shape");
		tft_json_write_cstr(w, n->shape);
	}
	if (o->select & TFT_PROF_SEL_DEVICE) {
		tft_json_write_key(w, "devices");
		tft_json_write_cstr(w, n->devices);
	}
	if (o->select & TFT_PROF_SEL_OP_TYPES) {
		tft_json_write_key(w, "op_types");
		tft_json_write_cstr(w, n->op_types);
	}
	if (o->select & TFT_PROF_SEL_INPUT_SHAPES) {
		tft_json_write_key(w, "input_shapes");
		tft_json_write_cstr(w, n->input_shapes);
	}
	tft_json_write_key(w, "children");
	tft_json_write_begin_array(w);
	for (uint32_t i = 0; i < n->nchildren; i++) {
		tft_json_write_newline(w);
		json_node(w, r, n->first_child + i, depth + 1);
	}
	tft_json_write_end_array(w);
	tft_json_write_end_object(w);
}

void tft_export_prof_json(const struct tft_prof_result *r, struct tft_json_writer *w)
{
	static const char *const extra[] = { "tensor_value", "device", "op_types", "input_shapes" };

	tft_json_write_begin_object(w);
	tft_json_write_key(w, "view");
	tft_json_write_cstr(w, tft_prof_view_name(r->view));
	tft_json_write_key(w, "step");
	tft_json_write_int(w, r->step);
	tft_json_write_key(w, "steps");
	tft_json_write_uint(w, r->nsteps);
	tft_json_write_key(w, "select");
	tft_json_write_begin_array(w);
	for (int m = 0; m < TFT_PROF_NMETRICS + 4; m++)
		if (r->opts->select & (1u << m))
			tft_json_write_cstr(w, m < TFT_PROF_NMETRICS ? tft_prof_metric_name(m) : extra[m - TFT_PROF_NMETRICS]);
	tft_json_write_end_array(w);
	tft_json_write_key(w, "root");
	json_node(w, r, 0, 0);
	tft_json_write_end_object(w);
}

/* ---- CSV --------------------------------------------------------------------------------------------- */

static void csv_field(FILE *fp, const char *s)
{
	bool quote = strpbrk(s, ",\"\r\n") != NULL;

	if (quote)
		fputc('"', fp);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', fp);
		fputc(*s, fp);
	}
	if (quote)
		fputc('"', fp);
}

static void csv_node(FILE *fp, const struct tft_prof_result *r, uint32_t id)
{
	const struct tft_prof_node *n = &r->nodes[id];
	char v[64];

	fprintf(fp, "%u,", n->depth);
	csv_field(fp, n->name);
	fprintf(fp, ",%s", n->accounted ? "true" : "false");
	for (int m = 0; m < TFT_PROF_NMETRICS; m++)
		if (SEL(r->opts, m)) {
			v[tft_json_fmt_double(v, n->self[m], false)] = '\0';
			fprintf(fp, ",%s", v);
			v[tft_json_fmt_double(v, n->total[m], false)] = '\0';
			fprintf(fp, ",%s", v);
		}
	fputc('\n', fp);
	for (uint32_t i = 0; i < n->nchildren; i++)
		csv_node(fp, r, n->first_child + i);
}

int tft_export_prof_csv(const struct tft_prof_result *r, FILE *fp)
{
	fputs("depth,name,accounted", fp);
	for (int m = 0; m < TFT_PROF_NMETRICS; m++)
		if (SEL(r->opts, m))
			fprintf(fp, ",%s_self,%s_total", tft_prof_metric_name(m), tft_prof_metric_name(m));
	fputc('\n', fp);
	csv_node(fp, r, 0);
	return ferror(fp) ? -EIO : 0;
}

/* ---- the roofline table ------------------------------------------------------------------------------- */

static const char *rate(char *buf, size_t size, double v, double scale)
{
	if (isnan(v))
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "%.2f", v / scale);
	return buf;
}

int tft_export_prof_roofline_text(const struct tft_prof_roofline_row *rows, uint32_t n, FILE *fp)
{
	char a[32], b[32], c[32], d[32], e[32], f[32], g[32];

	fprintf(fp, "%-44s %-6s %-24s %10s %12s %12s %10s %10s %8s %10s %10s %7s  %s\n", "name", "kind", "device",
		"count", "time", "FLOPs", "GFLOP/s", "GB/s", "FLOP/B", "peak", "attainable", "of att.", "bound");
	for (uint32_t i = 0; i < n; i++) {
		const struct tft_prof_roofline_row *r = &rows[i];
		char name[45], dev[25], t[32];
		snprintf(name, sizeof(name), "%s", r->name);
		snprintf(dev, sizeof(dev), "%s", r->device);
		tft_prof_format_time(t, sizeof(t), r->micros);
		tft_prof_format_number(a, sizeof(a), r->flops);
		fprintf(fp, "%-44s %-6s %-24s %10.1f %12s %12s %10s %10s %8s %10s %10s %7s  %s\n", name,
			r->kernel ? "kernel" : "op", dev, r->count, t, a, rate(b, sizeof(b), r->flops_per_s, 1e9),
			rate(c, sizeof(c), r->bytes_per_s, 1e9), rate(d, sizeof(d), r->intensity, 1),
			rate(e, sizeof(e), r->peak_flops_per_s, 1e9), rate(f, sizeof(f), r->attainable_flops_per_s, 1e9),
			isnan(r->of_attainable) ? "-" : (snprintf(g, sizeof(g), "%.1f%%", 100 * r->of_attainable), g),
			r->bound);
	}
	fprintf(fp, "\nGFLOP/s, GB/s: achieved per second of the op's time (on the accelerator where it has "
		"kernels); peak and attainable (min(peak, FLOP/B x bandwidth)) in GFLOP/s from the device's datasheet "
		"(docs/cmd-prof.md); bytes: its tensors read and written once, an estimate.\n");
	return ferror(fp) ? -EIO : 0;
}

static void num_or_null(struct tft_json_writer *w, const char *key, double v)
{
	tft_json_write_key(w, key);
	if (isnan(v))
		tft_json_write_null(w);
	else
		tft_json_write_double(w, v);
}

void tft_export_prof_roofline_json(const struct tft_prof_roofline_row *rows, uint32_t n, uint32_t steps,
				   struct tft_json_writer *w)
{
	tft_json_write_begin_object(w);
	tft_json_write_key(w, "steps");
	tft_json_write_uint(w, steps);
	tft_json_write_key(w, "rows");
	tft_json_write_begin_array(w);
	for (uint32_t i = 0; i < n; i++) {
		const struct tft_prof_roofline_row *r = &rows[i];
		tft_json_write_newline(w);
		tft_json_write_begin_object(w);
		tft_json_write_key(w, "name");
		tft_json_write_cstr(w, r->name);
		tft_json_write_key(w, "kind");
		tft_json_write_cstr(w, r->kernel ? "kernel" : "op");
		tft_json_write_key(w, "device");
		tft_json_write_cstr(w, r->device);
		tft_json_write_key(w, "dtype");
		tft_json_write_cstr(w, r->dtype);
		num_or_null(w, "count", r->count);
		num_or_null(w, "micros", r->micros);
		num_or_null(w, "flops", r->flops);
		num_or_null(w, "bytes", r->bytes);
		num_or_null(w, "flops_per_s", r->flops_per_s);
		num_or_null(w, "bytes_per_s", r->bytes_per_s);
		num_or_null(w, "intensity", r->intensity);
		num_or_null(w, "peak_flops_per_s", r->peak_flops_per_s);
		num_or_null(w, "peak_bytes_per_s", r->peak_bytes_per_s);
		num_or_null(w, "attainable_flops_per_s", r->attainable_flops_per_s);
		num_or_null(w, "of_attainable", r->of_attainable);
		tft_json_write_key(w, "bound");
		tft_json_write_cstr(w, r->bound);
		tft_json_write_end_object(w);
	}
	tft_json_write_end_array(w);
	tft_json_write_end_object(w);
}

static void csv_num(FILE *fp, double v)
{
	char b[40];

	if (isnan(v)) {
		fputs(",", fp);
		return;
	}
	b[tft_json_fmt_double(b, v, false)] = '\0';
	fprintf(fp, ",%s", b);
}

int tft_export_prof_roofline_csv(const struct tft_prof_roofline_row *rows, uint32_t n, FILE *fp)
{
	fputs("name,kind,device,dtype,count,micros,flops,bytes,flops_per_s,bytes_per_s,intensity,"
	      "peak_flops_per_s,peak_bytes_per_s,attainable_flops_per_s,of_attainable,bound\n", fp);
	for (uint32_t i = 0; i < n; i++) {
		const struct tft_prof_roofline_row *r = &rows[i];
		csv_field(fp, r->name);
		fprintf(fp, ",%s,", r->kernel ? "kernel" : "op");
		csv_field(fp, r->device);
		fprintf(fp, ",%s", r->dtype);
		csv_num(fp, r->count);
		csv_num(fp, r->micros);
		csv_num(fp, r->flops);
		csv_num(fp, r->bytes);
		csv_num(fp, r->flops_per_s);
		csv_num(fp, r->bytes_per_s);
		csv_num(fp, r->intensity);
		csv_num(fp, r->peak_flops_per_s);
		csv_num(fp, r->peak_bytes_per_s);
		csv_num(fp, r->attainable_flops_per_s);
		csv_num(fp, r->of_attainable);
		fprintf(fp, ",%s\n", r->bound);
	}
	return ferror(fp) ? -EIO : 0;
}
