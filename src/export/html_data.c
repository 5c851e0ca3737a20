/* SPDX-License-Identifier: MIT */
/*
 * A static HTML export's DATA as a session (html_data.h): the session ops over
 * what html_data_read.c read, and where DATA is in a page.
 */
#include <stdlib.h>
#include <string.h>

#include "codec/json_read.h"
#include "export/html_data_int.h"

/* ---- the session ops ---------------------------------------------------------------------- */

static void hd_close(void *impl)
{
	tft_hd_free(impl);
}

static int hd_refresh(void *impl, struct tft_error *err)
{
	return 0;
}

static void hd_get_summary(void *impl, struct tft_session_summary *out)
{
	const struct hd *h = impl;

	*out = h->sum;
	out->format = tft_strtab_get(h->strs, h->sum_format, NULL);
	out->producer = tft_strtab_get(h->strs, h->sum_producer, NULL);
	out->processes = h->nprocs;
	out->tracks = h->ntracks;
	out->slices = out->instants = out->counters = 0;
	out->start_ns = out->end_ns = 0;
	tft_session_summary_tracks(out, h->tracks, h->ntracks);
	out->steps = h->nsteps;
}

static uint32_t hd_process_count(void *impl)
{
	return ((const struct hd *)impl)->nprocs;
}

static const struct tft_process *hd_process(void *impl, uint32_t id)
{
	const struct hd *h = impl;

	return id < h->nprocs ? &h->procs[id] : NULL;
}

static uint32_t hd_track_count(void *impl)
{
	return ((const struct hd *)impl)->ntracks;
}

static const struct tft_track *hd_track(void *impl, uint32_t id)
{
	const struct hd *h = impl;

	return id < h->ntracks ? &h->tracks[id] : NULL;
}

static const char *hd_str(void *impl, uint32_t id, size_t *len)
{
	const char *p = tft_strtab_get(((const struct hd *)impl)->strs, id, len);

	if (!p) {
		if (len)
			*len = 0;
		return "";
	}
	return p;
}

static uint32_t hd_string_count(void *impl)
{
	return tft_strtab_count(((const struct hd *)impl)->strs);
}

static const char *hd_meta(void *impl, const char *key)
{
	const struct hd *h = impl;

	if (strcmp(key, "format") == 0)
		return tft_strtab_get(h->strs, h->sum_format, NULL);
	if (strcmp(key, "producer") == 0)
		return tft_strtab_get(h->strs, h->sum_producer, NULL);
	if (strcmp(key, "graph_nodes") == 0)
		return h->have_graph ? h->graph_count : NULL;
	/* what the exporter's caps left out: events, graph rows (the page's banner) */
	if (strcmp(key, "static_start_ns") == 0)
		return h->start;
	if (strcmp(key, "static_truncated") == 0)
		return h->truncated[0] ? h->truncated : "0";
	if (strcmp(key, "static_graph_truncated") == 0)
		return h->graph_truncated[0] ? h->graph_truncated : "0";
	return NULL;
}

/* Event i of e as a tft_event (args borrowed from e). */
static void fill_event(const struct hd_events *e, uint32_t track, uint32_t i, struct tft_event *ev)
{
	*ev = (struct tft_event){
		.ts_ns = e->ts[i],
		.dur_ns = e->dur[i],
		.value = e->value[i],
		.track = track,
		.name = e->name[i],
		.cat = e->cat[i],
		.depth = e->depth[i],
		.count = 1,
		.kind = e->kind[i],
		.flags = e->flags[i],
		.nargs = (uint16_t)(e->arg0[i + 1] - e->arg0[i]),
		.args = e->args ? e->args + e->arg0[i] : NULL,
	};
}

/* The events that overlap [t0, t1], in start order: as a session file's level 0. */
static int hd_scan(void *impl, uint32_t track, int64_t t0, int64_t t1, int64_t resolution_ns,
		   tft_event_fn fn, void *ctx, struct tft_error *err)
{
	const struct hd *h = impl;
	const struct hd_events *e;
	uint32_t lo = 0, hi;
	int rc = 0;

	if (track >= h->ntracks || !fn)
		return tft_error_set(err, TFT_EINVAL, -1, "unknown track %u", track);
	e = &h->ev[track];
	if (t1 < t0)
		return 0;
	/* the first event whose running maximum end reaches t0 */
	for (hi = e->n; lo < hi;) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (e->maxend[mid] < t0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (uint32_t i = lo; i < e->n && !rc; i++) {
		struct tft_event ev;
		int64_t end;
		if (e->ts[i] > t1)
			break;
		if (__builtin_add_overflow(e->ts[i], e->dur[i], &end))
			end = INT64_MAX;
		if (end < t0)
			continue;
		fill_event(e, track, i, &ev);
		rc = fn(ctx, &ev);
	}
	return rc;
}

static int hd_flows(void *impl, tft_flow_fn fn, void *ctx, struct tft_error *err)
{
	const struct hd *h = impl;
	int rc = 0;

	for (size_t i = 0; i < h->nflows && !rc; i++)
		rc = fn(ctx, &h->flows[i]);
	return rc;
}

static void hd_set_cache_bytes(void *impl, size_t bytes)
{
}

/* One raw chunk per track that has events: all of them. */
static uint32_t hd_raw_chunk_count(void *impl, uint32_t track)
{
	const struct hd *h = impl;

	return track < h->ntracks && h->ev[track].n ? 1 : 0;
}

static void hd_raw_chunk(void *impl, uint32_t track, uint32_t i, int64_t *t_min, int64_t *t_max,
			 uint32_t *n)
{
	const struct hd_events *e = &((const struct hd *)impl)->ev[track];

	*t_min = e->ts[0];
	*t_max = e->maxend[e->n - 1];
	*n = e->n;
}

static int hd_scan_raw_chunk(void *impl, uint32_t track, uint32_t i, tft_event_fn fn, void *ctx,
			     struct tft_error *err)
{
	const struct hd *h = impl;
	int rc = 0;

	if (track >= h->ntracks || i != 0 || !h->ev[track].n)
		return tft_error_set(err, TFT_EINVAL, -1, "no raw chunk %u of track %u", i, track);
	for (uint32_t j = 0; j < h->ev[track].n && !rc; j++) {
		struct tft_event ev;
		fill_event(&h->ev[track], track, j, &ev);
		rc = fn(ctx, &ev);
	}
	return rc;
}

/* DATA holds no chunk statistics: readers compute from the events. */
static int hd_has_chunk_stats(void *impl)
{
	return 0;
}

static int hd_track_stats(void *impl, uint32_t track, tft_chunk_stats_fn fn, void *ctx,
			  struct tft_error *err)
{
	return 1;
}

static int hd_chunk_stats_complete(void *impl, uint32_t track, struct tft_error *err)
{
	return 0;
}

static int hd_chunk_stats(void *impl, uint32_t track, tft_chunk_stats_fn fn, void *ctx,
			  struct tft_error *err)
{
	return 0;
}

static uint32_t hd_step_count(void *impl)
{
	return ((const struct hd *)impl)->nsteps;
}

static const struct tft_step *hd_step(void *impl, uint32_t i)
{
	const struct hd *h = impl;

	return i < h->nsteps ? &h->steps[i] : NULL;
}

/* The rows of DATA's "graph" named `name`, in insertion order (as the file's graph_nodes). */
static int hd_graph_lookup(void *impl, const char *name, tft_graph_node_fn fn, void *ctx, struct tft_error *err)
{
	struct hd *h = impl;
	size_t len = strlen(name);
	uint64_t key = tft_hd_name_hash(name, len);
	int n = 0;

	if (!h->have_graph)
		return 0;
	for (uint32_t i = tft_hmap_get1(&h->gbyname, key, (uint32_t)tft_hash_u64(key)); i != TFT_HMAP_EMPTY;
	     i = h->gnext[i]) {
		const struct tft_graph_text *t = &h->gn[i].name;
		if (t->len != len || (len && memcmp(t->p, name, len)))
			continue;
		n++;
		if (fn(ctx, &h->gn[i], h->gid[i]))
			break;
	}
	return n;
}

static const struct tft_session_ops hd_ops = {
	.close = hd_close,
	.refresh = hd_refresh,
	.get_summary = hd_get_summary,
	.process_count = hd_process_count,
	.process = hd_process,
	.track_count = hd_track_count,
	.track = hd_track,
	.str = hd_str,
	.string_count = hd_string_count,
	.meta = hd_meta,
	.scan = hd_scan,
	.flows = hd_flows,
	.set_cache_bytes = hd_set_cache_bytes,
	.raw_chunk_count = hd_raw_chunk_count,
	.raw_chunk = hd_raw_chunk,
	.scan_raw_chunk = hd_scan_raw_chunk,
	.has_chunk_stats = hd_has_chunk_stats,
	.track_stats = hd_track_stats,
	.chunk_stats_complete = hd_chunk_stats_complete,
	.chunk_stats = hd_chunk_stats,
	.step_count = hd_step_count,
	.step = hd_step,
	.graph_lookup = hd_graph_lookup,
};

struct tft_session *tft_html_data_open(const char *json, size_t len, const char *name,
				       struct tft_error *err)
{
	struct hd *h = calloc(1, sizeof(*h));

	if (!h || !(h->strs = tft_strtab_create()) || !(h->other = tft_strtab_create())) {
		tft_hd_free(h);
		tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
		return NULL;
	}
	if (tft_hd_read(h, json, len, name, err)) {
		tft_hd_free(h);
		return NULL;
	}
	return tft_session_open_ops(&hd_ops, h, name, err);
}

/* ---- finding DATA in a page ---------------------------------------------------------------- */

int tft_html_data_find(const char *html, size_t len, size_t *off, size_t *dlen, struct tft_error *err)
{
	static const char open[] = "<script type=\"application/json\" id=\"tft-data\">";
	static const char close[] = "</script>";
	const char *b = memmem(html, len, open, sizeof(open) - 1), *e;

	if (!b)
		return tft_error_set(err, TFT_EFORMAT, 0,
				     "not a tftracer static export (no <script id=\"tft-data\">)");
	b += sizeof(open) - 1;
	e = memmem(b, len - (size_t)(b - html), close, sizeof(close) - 1);
	if (!e)
		return tft_error_set(err, TFT_EFORMAT, (int64_t)(b - html),
				     "the tft-data script element is not closed");
	*off = (size_t)(b - html);
	*dlen = (size_t)(e - b);
	return 0;
}
