/* SPDX-License-Identifier: MIT */
/*
 * The host an XSpace comes from: its name (XSpace.hostnames, else the file's
 * base name, told apart from an earlier input's) and its clock (the profile
 * start of the "Task Environment" plane, which the line timestamps are
 * relative to).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/xspace/xs_int.h"

/*
 * These peeks read fields with the wire reader on a decoder that reports
 * nothing (no error sink): bytes that make no field just end the peek, and
 * the importer's own passes report them.
 */
void tft_xs_quiet_iter(struct tft_pb_dec *q, struct tft_pb_iter *it, const uint8_t *p, size_t len)
{
	tft_pb_wire_init(q, p, len, NULL);
	tft_pb_wire_iter_init(it, p, len);
}

/* The id of the stat named `name` in the stat_metadata map of the plane [p, p + len), or -1. */
static int64_t stat_id_named(const uint8_t *p, size_t len, const char *name)
{
	size_t nlen = strlen(name);
	struct tft_pb_dec q;
	struct tft_pb_iter it, e, m;
	struct tft_pb_raw f, g, h;

	tft_xs_quiet_iter(&q, &it, p, len);
	while (tft_pb_wire_iter_next(&q, &it, &f) == 1) {
		int64_t id = -1;
		int named = 0;

		if (f.num != 5 || f.wt != TFT_PB_WT_LEN)
			continue;
		/* map entry: key = 1, value = 2 (XStatMetadata: id = 1, name = 2) */
		tft_pb_wire_iter_init(&e, f.p, f.len);
		while (tft_pb_wire_iter_next(&q, &e, &g) == 1) {
			if (g.num == 1 && g.wt == TFT_PB_WT_VARINT)
				id = (int64_t)g.v;
			if (g.num != 2 || g.wt != TFT_PB_WT_LEN)
				continue;
			tft_pb_wire_iter_init(&m, g.p, g.len);
			while (tft_pb_wire_iter_next(&q, &m, &h) == 1)
				if (h.num == 2 && h.wt == TFT_PB_WT_LEN)
					named = h.len == nlen && !memcmp(h.p, name, nlen);
		}
		if (named)
			return id;
	}
	return -1;
}

/*
 * If the plane at [p, p + len) is the profiler's "Task Environment", its
 * profile_start_time stat (uint64 or int64 ns); 0 otherwise.
 */
static int64_t task_env_start(const uint8_t *p, size_t len)
{
	static const char te[] = "Task Environment";
	struct tft_pb_dec q;
	struct tft_pb_iter it, st;
	struct tft_pb_raw f, g;
	int64_t id = -1;
	int named = 0;

	/* the name (field 2, near the start): most planes stop here */
	tft_xs_quiet_iter(&q, &it, p, len);
	while (!named && tft_pb_wire_iter_next(&q, &it, &f) == 1)
		named = f.num == 2 && f.wt == TFT_PB_WT_LEN;
	if (!named || f.len != sizeof(te) - 1 || memcmp(f.p, te, f.len) != 0 ||
	    (id = stat_id_named(p, len, "profile_start_time")) < 0)
		return 0;
	tft_xs_quiet_iter(&q, &it, p, len);
	while (tft_pb_wire_iter_next(&q, &it, &f) == 1) {
		uint64_t val = 0;
		int64_t mid = -1;
		int have = 0;

		if (f.num != 6 || f.wt != TFT_PB_WT_LEN)
			continue;
		/* XStat: metadata_id = 1, uint64_value = 3, int64_value = 4 */
		tft_pb_wire_iter_init(&st, f.p, f.len);
		while (tft_pb_wire_iter_next(&q, &st, &g) == 1) {
			if (g.num == 1 && g.wt == TFT_PB_WT_VARINT)
				mid = (int64_t)g.v;
			else if ((g.num == 3 || g.num == 4) && g.wt == TFT_PB_WT_VARINT)
				val = g.v, have = 1;
		}
		if (mid == id && have && val > 0 && val <= INT64_MAX / 2)
			return (int64_t)val;
	}
	return 0;
}

int tft_xs_on_space_plane(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct xs *x = ctx;
	int64_t t;

	if (!x->clock_ns && (t = task_env_start(v->p, v->len)))
		x->clock_ns = t;
	return 0;
}

/* Host from the file name: base name without ".xplane.pb" / ".pb". */
uint32_t tft_xs_host_from_name(struct xs *x, const char *name)
{
	const char *b = name ? strrchr(name, '/') : NULL;
	size_t n;

	b = b ? b + 1 : (name ? name : "");
	n = strlen(b);
	if (n > 10 && strcmp(b + n - 10, ".xplane.pb") == 0)
		n -= 10;
	else if (n > 3 && strcmp(b + n - 3, ".pb") == 0)
		n -= 3;
	return tft_xs_intern(x, b, n);
}

/* The hosts of the session's earlier XSpace inputs (attached to the writer). */
struct xs_hosts {
	uint32_t *id;
	uint32_t n, cap;
};

static void hosts_free(void *ctx)
{
	struct xs_hosts *h = ctx;

	free(h->id);
	free(h);
}

/*
 * The host name, told apart from an earlier XSpace input's equal one
 * (containers all called "localhost", the same file twice): "HOST (FILE)",
 * numbered if that is taken too. UINT32_MAX when out of memory.
 */
uint32_t tft_xs_distinct_host(struct xs *x, const char *name)
{
	struct xs_hosts *hs = tft_writer_attached(x->w, TFT_SLOT_XSPACE_HOSTS);
	const char *base = name ? strrchr(name, '/') : NULL;
	uint32_t id = x->host;
	size_t hlen;
	const char *h = tft_writer_str(x->w, x->host, &hlen);

	if (!hs) {
		if (!(hs = calloc(1, sizeof(*hs))))
			return UINT32_MAX;
		if (tft_writer_attach(x->w, TFT_SLOT_XSPACE_HOSTS, hs, NULL, hosts_free)) {
			free(hs);
			return UINT32_MAX;
		}
	}
	base = base ? base + 1 : name ? name : "input";
	for (int k = 1;; k++) {
		char buf[512];
		uint32_t i = 0;

		while (i < hs->n && hs->id[i] != id)
			i++;
		if (i == hs->n)
			break;
		if (k == 1)
			snprintf(buf, sizeof(buf), "%.*s (%s)", (int)hlen, h, base);
		else
			snprintf(buf, sizeof(buf), "%.*s (%s #%d)", (int)hlen, h, base, k);
		id = tft_xs_intern(x, buf, strlen(buf));
		if (id == UINT32_MAX)
			return id;
	}
	if (tft_grow((void **)&hs->id, &hs->cap, hs->n + 1, sizeof(*hs->id)))
		return UINT32_MAX;
	hs->id[hs->n++] = id;
	return id;
}
