/* SPDX-License-Identifier: MIT */
/*
 * The writer's small tables: steps, session metadata (key/value),
 * the counters of lost data kept as integer meta values, and importers'
 * state attached to the writer until close.
 */
#include <pthread.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "core/strtab.h"
#include "store/writer/writer_int.h"

int tft_writer_add_step(struct tft_writer *w, const struct tft_step *s)
{
	sqlite3_stmt *st = w->st[ST_STEP];
	int rc;

	if (failed_now(w))
		return failed_now(w);
	if ((s->process != TFT_NONE && s->process >= w->nprocs) || !str_ok(w, s->name))
		return TFT_EINVAL;
	if (w->nwk)
		pthread_mutex_lock(&w->db_mu);
	sqlite3_bind_int64(st, 1, s->index);
	sqlite3_bind_int64(st, 2, s->name);
	if (s->process == TFT_NONE)
		sqlite3_bind_null(st, 3);
	else
		sqlite3_bind_int64(st, 3, s->process);
	sqlite3_bind_int64(st, 4, s->start_ns);
	sqlite3_bind_int64(st, 5, s->dur_ns);
	sqlite3_bind_int(st, 6, s->traced ? 1 : 0);
	rc = tft_wr_step_reset(w, st, "insert step");
	if (!rc)
		w->nsteps++;
	if (w->nwk)
		pthread_mutex_unlock(&w->db_mu);
	return rc;
}

uint32_t tft_writer_step_count(const struct tft_writer *w)
{
	return w->nsteps;
}

static uint32_t meta_find(const struct tft_writer *w, const char *key)
{
	uint32_t id = w->meta_keys ? tft_strtab_find(w->meta_keys, key, strlen(key)) : UINT32_MAX;

	return id == UINT32_MAX || id == 0 ? UINT32_MAX : id - 1;
}

static struct meta_ent *meta_get(struct tft_writer *w, const char *key)
{
	struct meta_ent *m;
	uint32_t i = meta_find(w, key);

	if (i != UINT32_MAX)
		return &w->meta[i];
	if (!*key || (!w->meta_keys && !(w->meta_keys = tft_strtab_create())))
		return NULL;
	if (tft_grow((void **)&w->meta, &w->cap_meta, (uint64_t)w->nmeta + 1, sizeof(*w->meta)))
		return NULL;

	m = &w->meta[w->nmeta];
	memset(m, 0, sizeof(*m));
	m->key = strdup(key);
	if (!m->key || tft_strtab_intern(w->meta_keys, key, strlen(key)) != w->nmeta + 1) {
		free(m->key);
		return NULL;
	}
	w->nmeta++;
	return m;
}

int tft_writer_set_meta(struct tft_writer *w, const char *key, const char *value)
{
	struct meta_ent *m;
	char *text;

	if (!key || !*key || !value)
		return TFT_EINVAL;
	text = strdup(value);
	if (!text)
		return TFT_ENOMEM;
	m = meta_get(w, key);
	if (!m) {
		free(text);
		return TFT_ENOMEM;
	}
	free(m->text);
	m->text = text;
	m->dirty = 1;
	return 0;
}

int tft_writer_join_meta(struct tft_writer *w, const char *key, const char *item, const char *sep)
{
	struct meta_ent *m;
	size_t n, k, ls;
	char *text;

	if (!key || !*key || !item || !*item || !sep)
		return TFT_EINVAL;
	m = meta_get(w, key);
	if (!m)
		return TFT_ENOMEM;
	if (!m->text || !*m->text)
		return tft_writer_set_meta(w, key, item);
	/* already listed? */
	n = strlen(item);
	ls = strlen(sep);
	for (const char *p = m->text;;) {
		const char *q = ls ? strstr(p, sep) : NULL;

		k = q ? (size_t)(q - p) : strlen(p);
		if (k == n && memcmp(p, item, n) == 0)
			return 0;
		if (!q)
			break;
		p = q + ls;
	}
	k = strlen(m->text);
	text = malloc(k + ls + n + 1);
	if (!text)
		return TFT_ENOMEM;
	memcpy(text, m->text, k);
	memcpy(text + k, sep, ls);
	memcpy(text + k + ls, item, n + 1);
	{
		int rc = tft_writer_set_meta(w, key, text);

		free(text);
		return rc;
	}
}

const char *tft_writer_meta(struct tft_writer *w, const char *key)
{
	uint32_t i = meta_find(w, key);

	return i == UINT32_MAX ? NULL : w->meta[i].text;
}

static const char *const counter_names[TFT_COUNT_NUM] = {
	[TFT_COUNT_SCHEMA_VERSION] = "schema_version",
	[TFT_COUNT_FLOW_COUNT] = "flow_count",
	[TFT_COUNT_GRAPH_NODES] = "graph_nodes",
	[TFT_COUNT_DROPPED] = "dropped",
	[TFT_COUNT_UNMATCHED_FLOWS] = "unmatched_flows",
	[TFT_COUNT_UNCLOSED_SLICES] = "unclosed_slices",
	[TFT_COUNT_UNMATCHED_ENDS] = "unmatched_ends",
	[TFT_COUNT_SKIPPED_EVENTS] = "skipped_events",
	[TFT_COUNT_DROPPED_PACKETS] = "dropped_packets",
	[TFT_COUNT_DEVICE_TIMES_UNALIGNED] = "device_times_unaligned",
	[TFT_COUNT_CLAMPED] = "clamped",
	[TFT_COUNT_IMPORT_HOLD_TIMEOUTS] = "import_hold_timeouts",
	[TFT_COUNT_VALUES_DROPPED] = "values_dropped",
	[TFT_COUNT_REALTIME_OFFSET_NS] = "realtime_offset_ns",
	[TFT_COUNT_SESSION_START_NS] = "session_start_ns",
	[TFT_COUNT_IMPORTS_BESIDE] = "imports_beside",
	[TFT_COUNT_XSPACE_ERRORS] = "xspace_errors",
	[TFT_COUNT_XSPACE_WARNINGS] = "xspace_warnings",
};

const char *tft_counter_name(enum tft_counter c)
{
	return (unsigned)c < TFT_COUNT_NUM ? counter_names[c] : NULL;
}

int64_t tft_writer_count(const struct tft_writer *w, enum tft_counter c)
{
	const char *key = tft_counter_name(c);
	uint32_t i = key ? meta_find(w, key) : UINT32_MAX;

	if (i == UINT32_MAX)
		return 0;
	return w->meta[i].text ? strtoll(w->meta[i].text, NULL, 10) : w->meta[i].ival;
}

int tft_writer_add_named_count(struct tft_writer *w, const char *key, int64_t delta)
{
	struct meta_ent *m;

	if (!key || !*key)
		return TFT_EINVAL;
	m = meta_get(w, key);
	if (!m)
		return TFT_ENOMEM;
	if (m->text) { /* a text value set earlier: count on from its number */
		m->ival = strtoll(m->text, NULL, 10);
		free(m->text);
		m->text = NULL;
	}
	m->ival = __builtin_add_overflow(m->ival, delta, &m->ival) ? INT64_MAX : m->ival;
	m->dirty = 1;
	return 0;
}

int tft_writer_add_count(struct tft_writer *w, enum tft_counter c, int64_t delta)
{
	const char *key = tft_counter_name(c);

	return key ? tft_writer_add_named_count(w, key, delta) : TFT_EINVAL;
}

/* ---- importers' state ------------------------------------------------------------- */

int tft_writer_attach(struct tft_writer *w, enum tft_writer_slot slot, void *ctx,
			int (*on_close)(struct tft_writer *w, void *ctx),
			void (*free_ctx)(void *ctx))
{
	struct wattach *a;

	if ((unsigned)slot >= TFT_SLOT_COUNT || w->att[slot].used)
		return TFT_EINVAL;
	a = &w->att[slot];
	a->ctx = ctx;
	a->on_close = on_close;
	a->free_ctx = free_ctx;
	a->used = 1;
	w->att_order[w->natt++] = (uint8_t)slot;
	return 0;
}

void *tft_writer_attached(const struct tft_writer *w, enum tft_writer_slot slot)
{
	return (unsigned)slot < TFT_SLOT_COUNT ? w->att[slot].ctx : NULL;
}

/* Run the attached states' close steps, in attach order. */
int tft_wr_close_attached(struct tft_writer *w)
{
	int rc = 0;

	for (uint32_t i = 0; i < w->natt && !rc; i++) {
		const struct wattach *a = &w->att[w->att_order[i]];
		if (a->on_close)
			rc = a->on_close(w, a->ctx);
	}
	return rc;
}

