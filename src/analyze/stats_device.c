/* SPDX-License-Identifier: MIT */
/*
 * Statistics of device work (the seed's trace_analysis, `stats --by
 * kernel|api|op`): which slices count and under which key.
 *
 *   kernel: every slice on a GPU stream / device queue track (kernels,
 *           copies, sets, device syncs), by its name;
 *   api:    the runtime API calls on any track, by name: the categories the
 *           producers give them (Kineto cuda_runtime / cuda_driver / Runtime,
 *           HIP's, the interceptors' cuda.runtime / cuda.driver / opencl.api);
 *   op:     the slices of "kernel", by the op that launched them: the
 *           slice's "op" arg (tftracer's interceptors), else by the Kineto
 *           "External id" the kernel carries: the CPU op of that id, or the
 *           innermost op around the launch (API call) of that id; else none.
 * Bytes: a slice's "bytes" arg (copies), summed per group.
 */
#include <stdlib.h>
#include <string.h>

#include "analyze/stats_int.h"

struct tft_stats_device {
	uint32_t k_op, k_ext, k_bytes; /* arg key string ids (UINT32_MAX: not in the session) */
	bool *api_cat;                 /* [string id]: an API call category */
	uint32_t napi;
	struct tft_hmap ext;           /* External id -> CPU op name */
};

static uint32_t find_str(struct tft_session *s, const char *want)
{
	uint32_t n = tft_session_string_count(s);
	size_t len = strlen(want), l;

	for (uint32_t i = 1; i < n; i++) {
		const char *p = tft_session_str(s, i, &l);
		if (l == len && memcmp(p, want, len) == 0)
			return i;
	}
	return UINT32_MAX;
}

static bool is_api_cat(const char *c, size_t n)
{
	static const char *const cats[] = { "cuda_runtime", "cuda_driver", "Runtime", "hip_runtime",
					    "cuda.runtime", "cuda.driver", "opencl.api", "hip.runtime" };

	for (size_t i = 0; i < sizeof(cats) / sizeof(cats[0]); i++)
		if (strlen(cats[i]) == n && memcmp(c, cats[i], n) == 0)
			return true;
	return false;
}

static uint32_t hash64(int64_t v)
{
	return (uint32_t)(((uint64_t)v * UINT64_C(0x9E3779B97F4A7C15)) >> 32);
}

static int ext_put(struct tft_stats_device *d, int64_t id, uint32_t name)
{
	uint64_t k = (uint64_t)id;
	uint32_t v = name;
	int rc = tft_hmap_add(&d->ext, &k, hash64(id), &v); /* the first (outermost) op keeps it */

	return rc < 0 ? rc : 0;
}

static const struct tft_arg *arg_of(const struct tft_event *ev, uint32_t key)
{
	for (uint16_t i = 0; key != UINT32_MAX && i < ev->nargs; i++)
		if (ev->args[i].key == key)
			return &ev->args[i];
	return NULL;
}

struct prep_frame {
	int64_t end;
	uint32_t name;
	bool api;
};

struct prep_ctx {
	struct tft_stats_device *d;
	struct prep_frame stack[64]; /* by depth (deeper slices are not ops' parents here) */
	int status;
};

/*
 * A CPU track's slices with an External id: the id's op is the slice itself,
 * or for a runtime API call (a launch: newer Kineto gives kernels the
 * launch's id) the innermost op open around it.
 */
static int on_cpu_slice(void *ctx, const struct tft_event *ev)
{
	struct prep_ctx *p = ctx;
	const struct tft_arg *a;
	bool api;
	uint32_t op = 0;

	if (ev->kind != TFT_EV_SLICE)
		return 0;
	api = ev->cat < p->d->napi && p->d->api_cat[ev->cat];
	if (ev->depth < 64)
		p->stack[ev->depth] = (struct prep_frame){ ev->ts_ns + (ev->dur_ns > 0 ? ev->dur_ns : 0),
							   ev->name, api };
	a = arg_of(ev, p->d->k_ext);
	if (!a || a->type != TFT_ARG_INT)
		return 0;
	if (!api) {
		op = ev->name;
	} else {
		for (uint32_t k = ev->depth < 64 ? ev->depth : 64; k-- > 0;) {
			if (p->stack[k].end > ev->ts_ns && !p->stack[k].api) {
				op = p->stack[k].name;
				break;
			}
		}
		if (!op)
			return 0;
	}
	if (ext_put(p->d, a->v.i, op))
		return p->status = TFT_ENOMEM;
	return 0;
}

static bool device_track(const struct tft_track *tr)
{
	return tr->kind == TFT_TRACK_GPU_STREAM;
}

int tft_stats_device_prepare(struct tft_session *s, struct agg *a, struct tft_error *err)
{
	struct tft_stats_device *d = calloc(1, sizeof(*d));
	uint32_t n = tft_session_string_count(s), nt = tft_session_track_count(s);

	if (!d || !(d->api_cat = calloc(n ? n : 1, sizeof(*d->api_cat)))) {
		free(d);
		return tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
	}
	a->dev = d;
	tft_hmap_init(&d->ext, 1);
	d->napi = n;
	for (uint32_t i = 1; i < n; i++) {
		size_t l;
		const char *c = tft_session_str(s, i, &l);
		d->api_cat[i] = l < 16 && is_api_cat(c, l);
	}
	d->k_op = find_str(s, "op");
	d->k_ext = find_str(s, "External id");
	d->k_bytes = find_str(s, "bytes");
	if (a->group_by != TFT_STATS_BY_OP || d->k_ext == UINT32_MAX)
		return 0;
	for (uint32_t t = 0; t < nt; t++) {
		const struct tft_track *tr = tft_session_track(s, t);
		struct prep_ctx p = { .d = d };
		int rc;
		if (!tr || device_track(tr) || tr->kind == TFT_TRACK_COUNTER || (tr->flags & TFT_TRACKF_DERIVED))
			continue;
		rc = tft_session_scan(s, t, INT64_MIN, INT64_MAX, 0, on_cpu_slice, &p, err);
		if (p.status)
			return tft_error_set(err, p.status, -1, "out of memory reading ops");
		if (rc)
			return rc < 0 ? rc : TFT_EIO;
	}
	return 0;
}

void tft_stats_device_free(struct agg *a)
{
	if (!a->dev)
		return;
	free(a->dev->api_cat);
	tft_hmap_fini(&a->dev->ext);
	free(a->dev);
	a->dev = NULL;
}

bool tft_stats_device_track(const struct agg *a, const struct tft_track *tr)
{
	return a->group_by == TFT_STATS_BY_API ? tr->kind != TFT_TRACK_COUNTER : device_track(tr);
}

bool tft_stats_device_key(struct agg *a, const struct tft_event *ev, uint32_t *key)
{
	struct tft_stats_device *d = a->dev;
	const struct tft_arg *arg;

	switch (a->group_by) {
	case TFT_STATS_BY_KERNEL:
		*key = ev->name;
		return true;
	case TFT_STATS_BY_API:
		*key = ev->name;
		return ev->cat < d->napi && d->api_cat[ev->cat];
	default:
		*key = 0;
		if ((arg = arg_of(ev, d->k_op)) && arg->type == TFT_ARG_STR) {
			*key = arg->v.str;
		} else if ((arg = arg_of(ev, d->k_ext)) && arg->type == TFT_ARG_INT) {
			uint32_t v = tft_hmap_get1(&d->ext, (uint64_t)arg->v.i, hash64(arg->v.i));
			if (v != TFT_HMAP_EMPTY)
				*key = v;
		}
		return true;
	}
}

uint64_t tft_stats_event_bytes(const struct agg *a, const struct tft_event *ev)
{
	const struct tft_arg *arg = a->dev ? arg_of(ev, a->dev->k_bytes) : NULL;

	if (!arg)
		return 0;
	if (arg->type == TFT_ARG_INT)
		return arg->v.i > 0 ? (uint64_t)arg->v.i : 0;
	if (arg->type == TFT_ARG_DOUBLE)
		return arg->v.d > 0 && arg->v.d < 1e19 ? (uint64_t)arg->v.d : 0;
	return 0;
}
