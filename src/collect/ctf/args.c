/* SPDX-License-Identifier: MIT */
/*
 * CTF event fields to args: integers, reals, strings, enumerations (their
 * labels), and structures, arrays and variants as JSON.
 */
#include "collect/ctf/ctf_int.h"

static bool is_hex(const bt_field *f)
{
	const bt_field_class *fc = bt_field_borrow_class_const(f);

	return bt_field_class_integer_get_preferred_display_base(fc) ==
	       BT_FIELD_CLASS_INTEGER_PREFERRED_DISPLAY_BASE_HEXADECIMAL;
}

/* The one label of an enumeration field's value, or NULL (none or several). */
static const char *enum_label(const bt_field *f)
{
	bt_field_class_enumeration_mapping_label_array labels;
	uint64_t n = 0;
	bt_field_enumeration_get_mapping_labels_status st;

	if (bt_field_class_type_is(bt_field_get_class_type(f),
				   BT_FIELD_CLASS_TYPE_UNSIGNED_ENUMERATION))
		st = bt_field_enumeration_unsigned_get_mapping_labels(f, &labels, &n);
	else
		st = bt_field_enumeration_signed_get_mapping_labels(f, &labels, &n);
	return st == BT_FIELD_ENUMERATION_GET_MAPPING_LABELS_STATUS_OK && n == 1 ? labels[0] : NULL;
}

#define JSON_DEPTH 32        /* nested fields deeper than this are null */
#define JSON_ARRAY_MAX 4096  /* array elements kept in an arg (then "(N more)") */

static void field_json(struct ctf *c, const bt_field *f, int depth)
{
	struct tft_json_writer *jw = &c->jw;
	bt_field_class_type t = bt_field_get_class_type(f);
	char buf[32];

	if (depth > JSON_DEPTH) {
		tft_json_write_null(jw);
	} else if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_ENUMERATION) && enum_label(f)) {
		tft_json_write_cstr(jw, enum_label(f));
	} else if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_UNSIGNED_INTEGER)) {
		uint64_t v = bt_field_integer_unsigned_get_value(f);
		if (is_hex(f)) {
			snprintf(buf, sizeof(buf), "0x%" PRIx64, v);
			tft_json_write_cstr(jw, buf);
		} else {
			tft_json_write_uint(jw, v);
		}
	} else if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_SIGNED_INTEGER)) {
		tft_json_write_int(jw, bt_field_integer_signed_get_value(f));
	} else if (t == BT_FIELD_CLASS_TYPE_BOOL) {
		tft_json_write_bool(jw, bt_field_bool_get_value(f));
	} else if (t == BT_FIELD_CLASS_TYPE_BIT_ARRAY) {
		tft_json_write_uint(jw, bt_field_bit_array_get_value_as_integer(f));
	} else if (t == BT_FIELD_CLASS_TYPE_SINGLE_PRECISION_REAL) {
		tft_json_write_double(jw, bt_field_real_single_precision_get_value(f));
	} else if (t == BT_FIELD_CLASS_TYPE_DOUBLE_PRECISION_REAL) {
		tft_json_write_double(jw, bt_field_real_double_precision_get_value(f));
	} else if (t == BT_FIELD_CLASS_TYPE_STRING) {
		tft_json_write_str(jw, bt_field_string_get_value(f), bt_field_string_get_length(f));
	} else if (t == BT_FIELD_CLASS_TYPE_STRUCTURE) {
		const bt_field_class *fc = bt_field_borrow_class_const(f);
		uint64_t n = bt_field_class_structure_get_member_count(fc);
		tft_json_write_begin_object(jw);
		for (uint64_t i = 0; i < n; i++) {
			const bt_field_class_structure_member *m =
				bt_field_class_structure_borrow_member_by_index_const(fc, i);
			tft_json_write_key(jw, bt_field_class_structure_member_get_name(m));
			field_json(c, bt_field_structure_borrow_member_field_by_index_const(f, i), depth + 1);
		}
		tft_json_write_end_object(jw);
	} else if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_ARRAY)) {
		uint64_t n = bt_field_array_get_length(f);
		tft_json_write_begin_array(jw);
		for (uint64_t i = 0; i < n && i < JSON_ARRAY_MAX; i++)
			field_json(c, bt_field_array_borrow_element_field_by_index_const(f, i), depth + 1);
		if (n > JSON_ARRAY_MAX) {
			snprintf(buf, sizeof(buf), "(%" PRIu64 " more)", n - JSON_ARRAY_MAX);
			tft_json_write_cstr(jw, buf);
		}
		tft_json_write_end_array(jw);
	} else if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_OPTION)) {
		const bt_field *o = bt_field_option_borrow_field_const(f);
		if (o)
			field_json(c, o, depth + 1);
		else
			tft_json_write_null(jw);
	} else if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_VARIANT)) {
		field_json(c, bt_field_variant_borrow_selected_option_field_const(f), depth + 1);
	} else {
		tft_json_write_null(jw);
	}
}

/* Append one field as an arg named key. */
static void add_arg(struct ctf *c, const char *key, const bt_field *f)
{
	struct tft_arg *a;
	bt_field_class_type t = bt_field_get_class_type(f);
	char buf[32];

	if (c->nargs >= MAX_ARGS || c->rc)
		return;
	a = &c->args[c->nargs];
	a->key = intern_cstr(c, key);
	if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_ENUMERATION) && enum_label(f)) {
		a->type = TFT_ARG_STR;
		a->v.str = intern_cstr(c, enum_label(f));
	} else if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_UNSIGNED_INTEGER)) {
		uint64_t v = bt_field_integer_unsigned_get_value(f);
		if (is_hex(f) || v > (uint64_t)INT64_MAX) {
			snprintf(buf, sizeof(buf), is_hex(f) ? "0x%" PRIx64 : "%" PRIu64, v);
			a->type = TFT_ARG_STR;
			a->v.str = intern_cstr(c, buf);
		} else {
			a->type = TFT_ARG_INT;
			a->v.i = (int64_t)v;
		}
	} else if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_SIGNED_INTEGER)) {
		a->type = TFT_ARG_INT;
		a->v.i = bt_field_integer_signed_get_value(f);
	} else if (t == BT_FIELD_CLASS_TYPE_BOOL) {
		a->type = TFT_ARG_BOOL;
		a->v.i = bt_field_bool_get_value(f) ? 1 : 0;
	} else if (t == BT_FIELD_CLASS_TYPE_BIT_ARRAY) {
		a->type = TFT_ARG_INT;
		a->v.i = (int64_t)bt_field_bit_array_get_value_as_integer(f);
	} else if (t == BT_FIELD_CLASS_TYPE_SINGLE_PRECISION_REAL) {
		a->type = TFT_ARG_DOUBLE;
		a->v.d = bt_field_real_single_precision_get_value(f);
	} else if (t == BT_FIELD_CLASS_TYPE_DOUBLE_PRECISION_REAL) {
		a->type = TFT_ARG_DOUBLE;
		a->v.d = bt_field_real_double_precision_get_value(f);
	} else if (t == BT_FIELD_CLASS_TYPE_STRING) {
		a->type = TFT_ARG_STR;
		a->v.str = intern(c, bt_field_string_get_value(f), bt_field_string_get_length(f));
	} else {
		const char *json;
		size_t len;
		tft_json_write_fini(&c->jw);
		tft_json_write_init_mem(&c->jw);
		field_json(c, f, 0);
		if (tft_json_write_finish(&c->jw)) {
			oom(c);
			return;
		}
		json = tft_json_write_borrow(&c->jw, &len);
		a->type = TFT_ARG_JSON;
		a->v.str = intern(c, json, len);
	}
	c->nargs++;
}

/* Every member of a structure field as an arg, but those named in skip (NULL-terminated). */
void tft_ctf_add_struct_args(struct ctf *c, const bt_field *st, const char *const *skip)
{
	const bt_field_class *fc;
	uint64_t n;

	if (!st || bt_field_get_class_type(st) != BT_FIELD_CLASS_TYPE_STRUCTURE)
		return;
	fc = bt_field_borrow_class_const(st);
	n = bt_field_class_structure_get_member_count(fc);
	for (uint64_t i = 0; i < n; i++) {
		const char *name = bt_field_class_structure_member_get_name(
			bt_field_class_structure_borrow_member_by_index_const(fc, i));
		bool skipped = false;
		for (const char *const *s = skip; s && *s && !skipped; s++)
			skipped = strcmp(name, *s) == 0;
		if (!skipped)
			add_arg(c, name, bt_field_structure_borrow_member_field_by_index_const(st, i));
	}
}

void tft_ctf_add_int_arg(struct ctf *c, const char *key, int64_t v)
{
	if (c->nargs >= MAX_ARGS || c->rc)
		return;
	c->args[c->nargs] = (struct tft_arg){ .key = intern_cstr(c, key), .type = TFT_ARG_INT };
	c->args[c->nargs++].v.i = v;
}

void tft_ctf_add_str_arg(struct ctf *c, const char *key, uint32_t str)
{
	if (c->nargs >= MAX_ARGS || c->rc)
		return;
	c->args[c->nargs] = (struct tft_arg){ .key = intern_cstr(c, key), .type = TFT_ARG_STR };
	c->args[c->nargs++].v.str = str;
}

struct tft_arg *tft_ctf_copy_args(struct ctf *c, const struct tft_arg *a, uint16_t n)
{
	struct tft_arg *p;

	if (!n)
		return NULL;
	p = malloc((size_t)n * sizeof(*p));
	if (!p) {
		oom(c);
		return NULL;
	}
	memcpy(p, a, (size_t)n * sizeof(*p));
	return p;
}
