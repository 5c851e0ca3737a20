/* SPDX-License-Identifier: MIT */
/*
 * tfprof's options (prof.h): names, defaults (those of tfprof's command-line
 * tool, profiler.cc), parsing of one option with its value as the CLI, the
 * tfprof> shell and the HTTP API give it, and the listing `set` prints.
 * Regular expressions are POSIX extended ones matched against the whole name,
 * as tfprof's RE2::FullMatch matches them.
 */
#include <errno.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "analyze/prof.h"

const char *const tft_prof_opt_names[] = {
	"max_depth", "min_bytes", "min_peak_bytes", "min_residual_bytes", "min_output_bytes",
	"min_micros", "min_accelerator_micros", "min_cpu_micros", "min_params", "min_float_ops",
	"min_occurrence", "step", "order_by", "account_type_regexes", "start_name_regexes",
	"trim_name_regexes", "show_name_regexes", "hide_name_regexes", "account_displayed_op_only",
	"select", "output", NULL,
};

enum {
	O_MAX_DEPTH, O_MIN_BYTES, O_MIN_PEAK_BYTES, O_MIN_RESIDUAL_BYTES, O_MIN_OUTPUT_BYTES,
	O_MIN_MICROS, O_MIN_ACCEL_MICROS, O_MIN_CPU_MICROS, O_MIN_PARAMS, O_MIN_FLOAT_OPS,
	O_MIN_OCCURRENCE, O_STEP, O_ORDER_BY, O_ACCOUNT_TYPE, O_START_NAME, O_TRIM_NAME,
	O_SHOW_NAME, O_HIDE_NAME, O_ACCOUNT_DISPLAYED, O_SELECT, O_OUTPUT, O_COUNT
};

static const char *const metric_names[TFT_PROF_NMETRICS] = {
	"bytes", "peak_bytes", "residual_bytes", "output_bytes", "micros", "accelerator_micros",
	"cpu_micros", "params", "float_ops", "occurrence",
};

static const char *const order_names[] = {
	"name", "depth", "bytes", "peak_bytes", "residual_bytes", "output_bytes", "micros",
	"accelerator_micros", "cpu_micros", "params", "float_ops", "occurrence",
};

static const char *const view_names[] = { "scope", "graph", "op", "code" };

const char *tft_prof_view_name(int view)
{
	return view >= 0 && view < 4 ? view_names[view] : "?";
}

int tft_prof_view_parse(const char *s)
{
	for (int i = 0; s && i < 4; i++)
		if (strcmp(s, view_names[i]) == 0)
			return i;
	return -1;
}

const char *tft_prof_metric_name(int metric)
{
	return metric >= 0 && metric < TFT_PROF_NMETRICS ? metric_names[metric] : "?";
}

const char *tft_prof_order_name(int order)
{
	return order >= 0 && order < (int)(sizeof(order_names) / sizeof(order_names[0])) ? order_names[order]
											     : "?";
}

/* ---- regular expression lists ------------------------------------------------------- */

static void regexes_free(struct tft_prof_regexes *r)
{
	regex_t *re = r->compiled;

	for (uint32_t i = 0; i < r->n; i++)
		regfree(&re[i]);
	free(r->compiled);
	free(r->text);
	memset(r, 0, sizeof(*r));
}

/* tfprof's StripQuote: the value without the quotes around it. */
static void strip_quotes(const char *s, const char **b, size_t *n)
{
	size_t len = strlen(s), i = 0, j = len;

	while (i < len && (s[i] == '"' || s[i] == '\''))
		i++;
	while (j > i && (s[j - 1] == '"' || s[j - 1] == '\''))
		j--;
	*b = s + i;
	*n = j - i;
}

static int regexes_set(struct tft_prof_regexes *r, const char *opt, const char *value, struct tft_error *err)
{
	struct tft_prof_regexes nr = { 0 };
	const char *b;
	size_t n, cap = 1;
	char *p, *save = NULL;

	strip_quotes(value, &b, &n);
	if (!(nr.text = malloc(n + 1)))
		return tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
	memcpy(nr.text, b, n);
	nr.text[n] = '\0';
	for (size_t i = 0; i < n; i++)
		cap += b[i] == ',';
	if (!(nr.compiled = calloc(cap, sizeof(regex_t)))) {
		free(nr.text);
		return tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
	}
	char *tmp = strdup(nr.text);
	if (!tmp) {
		regexes_free(&nr);
		return tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
	}
	/* tfprof splits on ',' and skips empty pieces */
	for (p = strtok_r(tmp, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
		size_t pl = strlen(p);
		char *full = malloc(pl + 5);
		int rc;

		if (!full) {
			free(tmp);
			regexes_free(&nr);
			return tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
		}
		snprintf(full, pl + 5, "^(%s)$", p);
		rc = regcomp(&((regex_t *)nr.compiled)[nr.n], full, REG_EXTENDED | REG_NOSUB);
		free(full);
		if (rc) {
			char why[160];
			regerror(rc, &((regex_t *)nr.compiled)[nr.n], why, sizeof(why));
			regfree(&((regex_t *)nr.compiled)[nr.n]);
			tft_error_set(err, TFT_EINVAL, -1, "-%s: '%s' is not a regular expression (%s)", opt, p, why);
			free(tmp);
			regexes_free(&nr);
			return TFT_EINVAL;
		}
		nr.n++;
	}
	free(tmp);
	nr.all = strcmp(nr.text, ".*") == 0;
	regexes_free(r);
	*r = nr;
	return 0;
}

/* ---- defaults ---------------------------------------------------------------------- */

void tft_prof_opts_init(struct tft_prof_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->max_depth = 10;
	o->step = -1;
	o->order_by = TFT_PROF_ORDER_NAME;
	o->select = TFT_PROF_SEL_METRIC(TFT_PROF_MICROS);
	o->output = TFT_PROF_OUT_STDOUT;
	/* ".*" for the account, start and show lists; empty trim and hide lists (these cannot fail) */
	regexes_set(&o->account_type, "account_type_regexes", ".*", NULL);
	regexes_set(&o->start_name, "start_name_regexes", ".*", NULL);
	regexes_set(&o->show_name, "show_name_regexes", ".*", NULL);
	regexes_set(&o->trim_name, "trim_name_regexes", "", NULL);
	regexes_set(&o->hide_name, "hide_name_regexes", "", NULL);
}

void tft_prof_opts_fini(struct tft_prof_opts *o)
{
	regexes_free(&o->account_type);
	regexes_free(&o->start_name);
	regexes_free(&o->trim_name);
	regexes_free(&o->show_name);
	regexes_free(&o->hide_name);
	free(o->outfile);
	o->outfile = NULL;
}

int tft_prof_opts_copy(struct tft_prof_opts *dst, const struct tft_prof_opts *src)
{
	struct tft_prof_regexes *d[5] = { &dst->account_type, &dst->start_name, &dst->trim_name,
					  &dst->show_name, &dst->hide_name };
	const struct tft_prof_regexes *s[5] = { &src->account_type, &src->start_name, &src->trim_name,
						&src->show_name, &src->hide_name };

	*dst = *src;
	for (int i = 0; i < 5; i++)
		memset(d[i], 0, sizeof(*d[i]));
	dst->outfile = NULL;
	for (int i = 0; i < 5; i++)
		if (regexes_set(d[i], "x", s[i]->text ? s[i]->text : "", NULL))
			goto fail;
	if (src->outfile && !(dst->outfile = strdup(src->outfile)))
		goto fail;
	return 0;
fail:
	tft_prof_opts_fini(dst);
	return TFT_ENOMEM;
}

/* ---- setting one option --------------------------------------------------------------- */

/* "--max-depth", "-max_depth", "max_depth" -> index into tft_prof_opt_names, or -1. */
static int opt_index(const char *name)
{
	char buf[64];
	size_t n = 0;

	if (!name)
		return -1;
	while (*name == '-')
		name++;
	for (; *name && n < sizeof(buf) - 1; name++)
		buf[n++] = *name == '-' ? '_' : *name;
	buf[n] = '\0';
	for (int i = 0; tft_prof_opt_names[i]; i++)
		if (strcmp(buf, tft_prof_opt_names[i]) == 0)
			return i;
	return -1;
}

int tft_prof_opt_takes_value(const char *name)
{
	int i = opt_index(name);

	if (i < 0)
		return -1;
	return i == O_ACCOUNT_DISPLAYED ? 0 : 1;
}

static int parse_i64(const char *s, int64_t *out)
{
	char *end;
	long long v;

	if (!s || !*s || *s == ' ')
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

/* tfprof's StringToBool: true/t/yes/y/1, false/f/no/n/0, any case. */
static int parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = { "true", "t", "yes", "y", "1" }, *const no[] = { "false", "f", "no", "n", "0" };

	for (int i = 0; i < 5; i++) {
		if (strcasecmp(s, yes[i]) == 0)
			return *out = true, 0;
		if (strcasecmp(s, no[i]) == 0)
			return *out = false, 0;
	}
	return -1;
}

static int set_select(struct tft_prof_opts *o, const char *value, struct tft_error *err)
{
	static const struct { const char *name; uint32_t bit; } extra[] = {
		{ "tensor_value", TFT_PROF_SEL_TENSOR_VALUE }, { "device", TFT_PROF_SEL_DEVICE },
		{ "op_types", TFT_PROF_SEL_OP_TYPES }, { "input_shapes", TFT_PROF_SEL_INPUT_SHAPES },
	};
	const char *b;
	size_t n;
	uint32_t sel = 0;

	strip_quotes(value, &b, &n);
	while (n) {
		const char *c = memchr(b, ',', n);
		size_t l = c ? (size_t)(c - b) : n;
		bool found = false;

		if (l) {
			for (int m = 0; m < TFT_PROF_NMETRICS && !found; m++)
				if (strlen(metric_names[m]) == l && memcmp(metric_names[m], b, l) == 0)
					sel |= TFT_PROF_SEL_METRIC(m), found = true;
			for (size_t k = 0; k < sizeof(extra) / sizeof(extra[0]) && !found; k++)
				if (strlen(extra[k].name) == l && memcmp(extra[k].name, b, l) == 0)
					sel |= extra[k].bit, found = true;
			if (!found)
				return tft_error_set(err, TFT_EINVAL, -1,
						     "-select: '%.*s' is none of bytes, peak_bytes, residual_bytes, "
						     "output_bytes, micros, accelerator_micros, cpu_micros, params, "
						     "float_ops, occurrence, tensor_value, device, op_types, input_shapes",
						     (int)l, b);
		}
		if (!c)
			break;
		n -= l + 1;
		b = c + 1;
	}
	o->select = sel;
	return 0;
}

/* tfprof's ParseOutput: "stdout", "none", or "TYPE:outfile=F" (file, timeline, pprof). */
static int set_output(struct tft_prof_opts *o, const char *value, struct tft_error *err)
{
	static const char *const types[] = { "stdout", "file", "timeline", "pprof", "none" };
	const char *colon = strchr(value, ':'), *b;
	size_t tl = colon ? (size_t)(colon - value) : strlen(value);
	int type = -1;
	char *file = NULL;

	for (int i = 0; i < 5; i++)
		if (strlen(types[i]) == tl && memcmp(types[i], value, tl) == 0)
			type = i;
	if (type < 0)
		return tft_error_set(err, TFT_EINVAL, -1,
				     "-output: expected stdout, none, file:outfile=F, timeline:outfile=F or "
				     "pprof:outfile=F, not '%s'", value);
	if (type == TFT_PROF_OUT_STDOUT || type == TFT_PROF_OUT_NONE) {
		if (colon)
			return tft_error_set(err, TFT_EINVAL, -1, "-output: %s takes no options ('%s')",
					     types[type], value);
	} else {
		/* options "key=value,key=value"; outfile is the one each type needs */
		b = colon ? colon + 1 : "";
		while (*b) {
			const char *eq = strchr(b, '='), *comma = strchr(b, ',');
			size_t kl;
			if (!eq || (comma && comma < eq)) {
				free(file);
				return tft_error_set(err, TFT_EINVAL, -1, "-output: expected key=value in '%s'", value);
			}
			kl = (size_t)(eq - b);
			const char *v = eq + 1;
			size_t vl = comma ? (size_t)(comma - v) : strlen(v);
			if (kl == 7 && memcmp(b, "outfile", 7) == 0) {
				free(file);
				file = strndup(v, vl);
				if (!file)
					return tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
			} else {
				free(file);
				return tft_error_set(err, TFT_EINVAL, -1, "-output: unknown option '%.*s' of %s",
						     (int)kl, b, types[type]);
			}
			b = comma ? comma + 1 : v + vl;
		}
		if (!file || !*file) {
			free(file);
			return tft_error_set(err, TFT_EINVAL, -1, "-output: %s needs outfile=FILE ('%s:outfile=F')",
					     types[type], types[type]);
		}
	}
	free(o->outfile);
	o->outfile = file;
	o->output = type;
	return 0;
}

int tft_prof_opts_set(struct tft_prof_opts *o, const char *name, const char *value, struct tft_error *err)
{
	int i = opt_index(name);
	int64_t v = 0;

	if (i < 0)
		return tft_error_set(err, TFT_EINVAL, -1, "unknown option '%s'", name ? name : "");
	if (i == O_ACCOUNT_DISPLAYED) {
		bool b = true;
		if (value && parse_bool(value, &b))
			return tft_error_set(err, TFT_EINVAL, -1,
					     "-account_displayed_op_only: expected true or false, not '%s'", value);
		o->account_displayed_op_only = b;
		return 0;
	}
	if (!value)
		return tft_error_set(err, TFT_EINVAL, -1, "-%s needs a value", tft_prof_opt_names[i]);
	if (i <= O_STEP) {
		if (parse_i64(value, &v))
			return tft_error_set(err, TFT_EINVAL, -1, "-%s: expected an integer, not '%s'",
					     tft_prof_opt_names[i], value);
		if (i != O_STEP && v < 0 && i != O_MAX_DEPTH)
			return tft_error_set(err, TFT_EINVAL, -1, "-%s: expected a number >= 0, not '%s'",
					     tft_prof_opt_names[i], value);
		if (i == O_STEP && v < -1)
			return tft_error_set(err, TFT_EINVAL, -1, "-step: expected a step number or -1, not '%s'",
					     value);
	}
	switch (i) {
	case O_MAX_DEPTH:
		if (v < -1 || v > 1000000000)
			return tft_error_set(err, TFT_EINVAL, -1, "-max_depth: expected 0 .. 1000000000, not '%s'",
					     value);
		o->max_depth = (int)v;
		return 0;
	case O_MIN_BYTES: o->min_bytes = v; return 0;
	case O_MIN_PEAK_BYTES: o->min_peak_bytes = v; return 0;
	case O_MIN_RESIDUAL_BYTES: o->min_residual_bytes = v; return 0;
	case O_MIN_OUTPUT_BYTES: o->min_output_bytes = v; return 0;
	case O_MIN_MICROS: o->min_micros = v; return 0;
	case O_MIN_ACCEL_MICROS: o->min_accelerator_micros = v; return 0;
	case O_MIN_CPU_MICROS: o->min_cpu_micros = v; return 0;
	case O_MIN_PARAMS: o->min_params = v; return 0;
	case O_MIN_FLOAT_OPS: o->min_float_ops = v; return 0;
	case O_MIN_OCCURRENCE: o->min_occurrence = v; return 0;
	case O_STEP: o->step = v; return 0;
	case O_ORDER_BY:
		for (size_t k = 0; k < sizeof(order_names) / sizeof(order_names[0]); k++)
			if (strcmp(order_names[k], value) == 0)
				return o->order_by = (int)k, 0;
		return tft_error_set(err, TFT_EINVAL, -1,
				     "-order_by: '%s' is none of name, depth, bytes, peak_bytes, residual_bytes, "
				     "output_bytes, micros, accelerator_micros, cpu_micros, params, float_ops, "
				     "occurrence", value);
	case O_ACCOUNT_TYPE: return regexes_set(&o->account_type, tft_prof_opt_names[i], value, err);
	case O_START_NAME: return regexes_set(&o->start_name, tft_prof_opt_names[i], value, err);
	case O_TRIM_NAME: return regexes_set(&o->trim_name, tft_prof_opt_names[i], value, err);
	case O_SHOW_NAME: return regexes_set(&o->show_name, tft_prof_opt_names[i], value, err);
	case O_HIDE_NAME: return regexes_set(&o->hide_name, tft_prof_opt_names[i], value, err);
	case O_SELECT: return set_select(o, value, err);
	case O_OUTPUT: return set_output(o, value, err);
	}
	return tft_error_set(err, TFT_EINVAL, -1, "unknown option '%s'", name);
}

/* ---- the listing ----------------------------------------------------------------------- */

static void append(char *buf, size_t size, size_t *len, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void append(char *buf, size_t size, size_t *len, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*len >= size)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *len, size - *len, fmt, ap);
	va_end(ap);
	if (n > 0)
		*len += (size_t)n < size - *len ? (size_t)n : size - *len - 1;
}

size_t tft_prof_opts_format(const struct tft_prof_opts *o, char *buf, size_t size)
{
	static const char *const outs[] = { "stdout", "file", "timeline", "pprof", "none" };
	size_t len = 0;
	char sel[256] = "";
	size_t sl = 0;

	if (size)
		buf[0] = '\0';
	for (int m = 0; m < TFT_PROF_NMETRICS + 4; m++) {
		static const char *const extra[] = { "tensor_value", "device", "op_types", "input_shapes" };
		if (!(o->select & (1u << m)))
			continue;
		sl += (size_t)snprintf(sel + sl, sizeof(sel) - sl, "%s%s", sl ? "," : "",
				       m < TFT_PROF_NMETRICS ? metric_names[m] : extra[m - TFT_PROF_NMETRICS]);
		if (sl >= sizeof(sel))
			sl = sizeof(sel) - 1;
	}
	append(buf, size, &len, "%-28s%d\n", "-max_depth", o->max_depth);
	append(buf, size, &len, "%-28s%lld\n", "-min_bytes", (long long)o->min_bytes);
	append(buf, size, &len, "%-28s%lld\n", "-min_peak_bytes", (long long)o->min_peak_bytes);
	append(buf, size, &len, "%-28s%lld\n", "-min_residual_bytes", (long long)o->min_residual_bytes);
	append(buf, size, &len, "%-28s%lld\n", "-min_output_bytes", (long long)o->min_output_bytes);
	append(buf, size, &len, "%-28s%lld\n", "-min_micros", (long long)o->min_micros);
	append(buf, size, &len, "%-28s%lld\n", "-min_accelerator_micros", (long long)o->min_accelerator_micros);
	append(buf, size, &len, "%-28s%lld\n", "-min_cpu_micros", (long long)o->min_cpu_micros);
	append(buf, size, &len, "%-28s%lld\n", "-min_params", (long long)o->min_params);
	append(buf, size, &len, "%-28s%lld\n", "-min_float_ops", (long long)o->min_float_ops);
	append(buf, size, &len, "%-28s%lld\n", "-min_occurrence", (long long)o->min_occurrence);
	append(buf, size, &len, "%-28s%lld\n", "-step", (long long)o->step);
	append(buf, size, &len, "%-28s%s\n", "-order_by", tft_prof_order_name(o->order_by));
	append(buf, size, &len, "%-28s%s\n", "-account_type_regexes", o->account_type.text ? o->account_type.text : "");
	append(buf, size, &len, "%-28s%s\n", "-start_name_regexes", o->start_name.text ? o->start_name.text : "");
	append(buf, size, &len, "%-28s%s\n", "-trim_name_regexes", o->trim_name.text ? o->trim_name.text : "");
	append(buf, size, &len, "%-28s%s\n", "-show_name_regexes", o->show_name.text ? o->show_name.text : "");
	append(buf, size, &len, "%-28s%s\n", "-hide_name_regexes", o->hide_name.text ? o->hide_name.text : "");
	append(buf, size, &len, "%-28s%s\n", "-account_displayed_op_only",
	       o->account_displayed_op_only ? "true" : "false");
	append(buf, size, &len, "%-28s%s\n", "-select", sel);
	if (o->output == TFT_PROF_OUT_STDOUT || o->output == TFT_PROF_OUT_NONE)
		append(buf, size, &len, "%-28s%s\n", "-output", outs[o->output]);
	else
		append(buf, size, &len, "%-28s%s:outfile=%s\n", "-output", outs[o->output],
		       o->outfile ? o->outfile : "");
	return len;
}
