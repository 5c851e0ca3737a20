/* SPDX-License-Identifier: MIT */
/*
 * XStats -> args: an event's, an event metadata's and a plane's stats
 * resolved through the plane's stat metadata, on the general path (the
 * usual layout of an event stat takes line.c's tight_value() instead), and
 * the stats with a meaning (correlation_id, group_id, step_num, step_name)
 * noted on the event.
 */
#include <stdio.h>
#include <string.h>

#include "collect/xspace/xs_int.h"

static int printable_utf8ish(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] < 0x20 && p[i] != '\t' && p[i] != '\n')
			return 0;
	return 1;
}

/* v in decimal, as "%llu" writes it, at buf (room for 20 digits); returns the length. */
static size_t fmt_u64(char *buf, uint64_t v)
{
	char tmp[20];
	size_t n = 0;

	do {
		tmp[sizeof(tmp) - 1 - n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	memcpy(buf, tmp + sizeof(tmp) - n, n);
	return n;
}

/* Convert a decoded XStat into *a; 1 = filled, 0 = skip, <0 error. */
static int stat_to_arg(struct xs *x, const struct xs_stat *s, struct tft_arg *a,
		       const struct xs_smeta **meta_out)
{
	uint32_t mi = idmap_get(&x->smeta_map, (uint64_t)s->metadata_id);
	const struct xs_smeta *m;
	uint32_t id;

	*meta_out = NULL;
	if (mi == TFT_NONE)
		return 0; /* stat without metadata: nothing to name it by */
	m = &x->smeta[mi];
	*meta_out = m;
	a->key = m->name;
	if (s->has & (1u << XS_INT)) {
		a->type = TFT_ARG_INT;
		a->v.i = s->i;
	} else if (s->has & (1u << XS_UINT)) {
		if (s->u <= (uint64_t)INT64_MAX) {
			a->type = TFT_ARG_INT;
			a->v.i = (int64_t)s->u;
		} else {
			/* Text, as "%llu" would write it (snprintf costs much more). */
			id = tft_xs_intern(x, x->scratch, fmt_u64(x->scratch, s->u));
			if (id == UINT32_MAX)
				return TFT_ENOMEM;
			a->type = TFT_ARG_STR;
			a->v.str = id;
		}
	} else if (s->has & (1u << XS_DOUBLE)) {
		a->type = TFT_ARG_DOUBLE;
		a->v.d = s->d;
	} else if (s->has & (1u << XS_STR)) {
		id = tft_xs_intern(x, s->str.p, s->str.len);
		if (id == UINT32_MAX)
			return TFT_ENOMEM;
		a->type = TFT_ARG_STR;
		a->v.str = id;
	} else if (s->has & (1u << XS_REF)) {
		uint32_t ri = idmap_get(&x->smeta_map, s->ref);

		if (ri == TFT_NONE)
			return 0;
		a->type = TFT_ARG_STR;
		a->v.str = x->smeta[ri].name;
	} else if (s->has & (1u << XS_BYTES)) {
		if (s->bytes.len <= 256 && printable_utf8ish(s->bytes.p, s->bytes.len)) {
			id = tft_xs_intern(x, s->bytes.p, s->bytes.len);
		} else {
			/* "<%zu bytes>" */
			size_t n = 1;

			x->scratch[0] = '<';
			n += fmt_u64(x->scratch + 1, s->bytes.len);
			memcpy(x->scratch + n, " bytes>", 7);
			id = tft_xs_intern(x, x->scratch, n + 7);
		}
		if (id == UINT32_MAX)
			return TFT_ENOMEM;
		a->type = TFT_ARG_STR;
		a->v.str = id;
	} else {
		return 0; /* no value set */
	}
	return 1;
}

static int decode_stat(struct xs *x, const struct tft_pb_val *v, struct xs_stat *s)
{
	s->has = 0;
	s->metadata_id = 0; /* proto3 default when absent; values are read by presence bit */
	return tft_pb_wire_decode_sub(&v->sub, &tft_xs_stat_msg, s, x);
}

/* Turn a decoded event stat into an arg, noting the stats with a meaning. */
int tft_xs_add_event_stat(struct xs *x, const struct xs_stat *s)
{
	const struct xs_smeta *m;
	struct tft_arg a;
	int r;

	r = stat_to_arg(x, s, &a, &m);
	if (r <= 0)
		return r;
	switch (m->special) {
	case SPECIAL_CORRELATION:
		if (a.type == TFT_ARG_INT) {
			x->ev_corr = (uint64_t)a.v.i;
			x->has_corr = 1;
		}
		break;
	case SPECIAL_GROUP:
		if (a.type == TFT_ARG_INT) {
			x->ev_group = (uint64_t)a.v.i;
			x->has_group = 1;
		}
		break;
	case SPECIAL_STEP_NUM:
		if (a.type == TFT_ARG_INT) {
			x->ev_step_num = (uint64_t)a.v.i;
			x->has_step_num = 1;
		}
		break;
	case SPECIAL_STEP_NAME:
		if (a.type == TFT_ARG_STR)
			x->ev_step_name = a.v.str;
		break;
	default:
		break;
	}
	if (x->nargs < MAX_ARGS)
		x->args[x->nargs++] = a;
	return 0;
}

int tft_xs_on_event_stat(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct xs *x = ctx;
	struct xs_stat s;
	int r;

	r = decode_stat(x, v, &s);
	if (r)
		return r;
	if (tft_xs_add_event_stat(x, &s) < 0)
		return oom(x);
	return 0;
}

int tft_xs_on_meta_stat(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct xs *x = ctx;
	const struct xs_smeta *m;
	struct xs_stat s;
	struct tft_arg a;
	int r;

	r = decode_stat(x, v, &s);
	if (r)
		return r;
	r = stat_to_arg(x, &s, &a, &m);
	if (r < 0)
		return oom(x);
	if (!r)
		return 0;
	if (tft_grow((void **)&x->meta_args, &x->cmeta_args, x->nmeta_args + 1, sizeof(*x->meta_args)))
		return oom(x);
	x->meta_args[x->nmeta_args++] = a;
	return 0;
}

/* Plane stats (device capabilities) -> the process labels, "k=v, k=v". */
int tft_xs_on_plane_stat(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct xs *x = ctx;
	char *buf = x->labels_buf;
	size_t size = sizeof(x->labels_buf), n = x->labels_len;
	const struct xs_smeta *m;
	struct xs_stat s;
	struct tft_arg a;
	const char *key, *sv;
	int k, r;

	r = decode_stat(x, v, &s);
	if (r)
		return r;
	r = stat_to_arg(x, &s, &a, &m);
	if (r < 0)
		return oom(x);
	if (r == 0 || n + 2 >= size)
		return 0;
	key = tft_writer_str(x->w, a.key, NULL);
	if (!key)
		return 0;
	switch (a.type) {
	case TFT_ARG_INT:
		k = snprintf(buf + n, size - n, "%s%s=%lld", n ? ", " : "", key, (long long)a.v.i);
		break;
	case TFT_ARG_DOUBLE:
		k = snprintf(buf + n, size - n, "%s%s=%g", n ? ", " : "", key, a.v.d);
		break;
	default:
		sv = tft_writer_str(x->w, a.v.str, NULL);
		k = snprintf(buf + n, size - n, "%s%s=%s", n ? ", " : "", key, sv ? sv : "");
		break;
	}
	if (k > 0)
		n += (size_t)k;
	x->labels_len = n < size ? n : size - 1;
	return 0;
}
