/* SPDX-License-Identifier: MIT */
/*
 * Session store: chunk and flow-chunk codecs (round trip, corruption),
 * writer -> reader round trip of every field, depth/lanes, window queries,
 * the LOD rule (long slices stand alone) and level selection, error paths
 * (order, corrupt blob, newer schema, truncation), strings loaded on demand,
 * the chunk cache under any budget, live mode, store worker threads,
 * writer lanes (parallel importers: same session as one thread, refusals),
 * the write-combining VFS (against a model of the file, and the same file
 * as the default VFS), and writes that fail (a file size limit): the
 * writer's close says so.
 */
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zstd.h>

#include "core/strtab.h"
#include "store/chunk.h"
#include "store/graph.h"
#include "store/lod.h"
#include "store/schema.h"
#include "store/session.h"
#include "store/wc_vfs.h"
#include "store/writer.h"
#include "tap.h"

static char tmpdir[256];

static const char *tpath(const char *name)
{
	static char buf[4][512];
	static int k;
	char *p = buf[k++ & 3];

	snprintf(p, 512, "%s/%s", tmpdir, name);
	return p;
}

static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* ---- expected events ------------------------------------------------------------ */

#define MAXA 8
struct xev {
	struct tft_event ev;
	struct tft_arg args[MAXA];
};

static int arg_eq(const struct tft_arg *a, const struct tft_arg *b)
{
	if (a->key != b->key || a->type != b->type)
		return 0;
	switch (a->type) {
	case TFT_ARG_NULL: return 1;
	case TFT_ARG_BOOL: return !!a->v.i == !!b->v.i;
	case TFT_ARG_INT: return a->v.i == b->v.i;
	case TFT_ARG_DOUBLE: return memcmp(&a->v.d, &b->v.d, sizeof(double)) == 0;
	default: return a->v.str == b->v.str;
	}
}

static int ev_eq(const struct tft_event *a, const struct tft_event *b, int check_depth)
{
	if (a->ts_ns != b->ts_ns || a->dur_ns != b->dur_ns || a->name != b->name ||
	    a->cat != b->cat || a->count != b->count || a->kind != b->kind ||
	    a->flags != b->flags || a->nargs != b->nargs ||
	    memcmp(&a->value, &b->value, sizeof(double)) != 0)
		return 0;
	if (check_depth && a->depth != b->depth)
		return 0;
	for (int i = 0; i < a->nargs; i++)
		if (!arg_eq(&a->args[i], &b->args[i]))
			return 0;
	return 1;
}

struct collect {
	struct xev *ev;
	size_t n, cap;
	int64_t last_ts;
	int sorted;
};

static int collect_fn(void *ctx, const struct tft_event *ev)
{
	struct collect *c = ctx;

	if (c->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 256;
		c->ev = realloc(c->ev, c->cap * sizeof(*c->ev));
		for (size_t i = 0; i < c->n; i++) /* the array moved: re-point the args */
			c->ev[i].ev.args = c->ev[i].args;
	}
	if (c->n && ev->ts_ns < c->last_ts)
		c->sorted = 0;
	c->last_ts = ev->ts_ns;
	c->ev[c->n].ev = *ev;
	for (int i = 0; i < ev->nargs && i < MAXA; i++)
		c->ev[c->n].args[i] = ev->args[i];
	c->ev[c->n].ev.args = c->ev[c->n].args;
	c->n++;
	return 0;
}

static void collect_reset(struct collect *c)
{
	c->n = 0;
	c->sorted = 1;
}

/* ---- chunk codec ------------------------------------------------------------------- */

static void random_event(struct xev *x, int64_t *ts, int with_args)
{
	struct tft_event *e = &x->ev;

	memset(x, 0, sizeof(*x));
	*ts += (int64_t)(rnd() % 5000);
	e->ts_ns = *ts;
	e->kind = (uint8_t)(rnd() % 3);
	e->dur_ns = e->kind == TFT_EV_SLICE ? (int64_t)(rnd() % 100000) : 0;
	e->name = (uint32_t)(rnd() % 50);
	e->cat = (uint32_t)(rnd() % 4);
	e->depth = (uint32_t)(rnd() % 6);
	e->count = rnd() % 10 == 0 ? (uint32_t)(rnd() % 100000) : 1;
	e->flags = rnd() % 7 == 0 ? TFT_EVF_UNCLOSED : 0;
	e->value = e->kind == TFT_EV_COUNTER ? (double)(rnd() % 1000000) / 7.0 : 0.0;
	if (with_args && rnd() % 3 == 0) {
		e->nargs = (uint16_t)(1 + rnd() % MAXA);
		for (int i = 0; i < e->nargs; i++) {
			struct tft_arg *a = &x->args[i];
			a->key = (uint32_t)(1 + rnd() % 12);
			a->type = (uint32_t)(rnd() % 6);
			switch (a->type) {
			case TFT_ARG_BOOL: a->v.i = (int64_t)(rnd() & 1); break;
			case TFT_ARG_INT: a->v.i = (int64_t)rnd(); break;
			case TFT_ARG_DOUBLE: a->v.d = (double)(int64_t)rnd() / 3.0; break;
			case TFT_ARG_STR:
			case TFT_ARG_JSON: a->v.str = (uint32_t)(rnd() % 40); break;
			default: break;
			}
		}
	}
	e->args = x->args;
}

static void test_chunk_codec(void)
{
	enum { N = 3000 };
	struct xev *xs = calloc(N, sizeof(*xs));
	struct tft_chunk_enc enc;
	struct tft_chunk_dec dec;
	struct tft_chunk_buf payload = { 0 }, blob = { 0 }, scratch = { 0 };
	struct tft_error err;
	int64_t ts = -123456789;
	int bad = 0;
	void *cctx = NULL;

	tft_chunk_enc_init(&enc);
	tft_chunk_dec_init(&dec);
	for (int i = 0; i < N; i++) {
		random_event(&xs[i], &ts, 1);
		if (i == 17) /* exercise a negative delta (LOD streams are not sorted) */
			xs[i].ev.ts_ns -= 1000000;
		if (tft_chunk_enc_add(&enc, &xs[i].ev))
			bad++;
	}
	is_int(bad, 0, "chunk: every event added");
	ok(tft_chunk_enc_payload(&enc, &payload) == 0, "chunk: payload built");
	tft_error_clear(&err);
	is_int(tft_chunk_decode_payload(&dec, payload.p, payload.len, 1, &err), 0,
	       "chunk: payload decodes");
	is_int(dec.n, N, "chunk: event count");
	bad = 0;
	for (uint32_t i = 0; i < dec.n && i < N; i++)
		if (!ev_eq(&dec.ev[i], &xs[i].ev, 1))
			bad++;
	is_int(bad, 0, "chunk: every field of every event round-trips");
	ok(dec.t_min == enc.t_min && dec.t_max == enc.t_max, "chunk: t_min/t_max agree");

	/* Without args (a LOD rebuild's decode): every other field the same, no args. */
	{
		struct tft_chunk_dec d2;
		int bad2 = 0;
		tft_chunk_dec_init(&d2);
		d2.no_args = 1;
		tft_error_clear(&err);
		is_int(tft_chunk_decode_payload(&d2, payload.p, payload.len, 1, &err), 0,
		       "chunk: payload decodes without args");
		is_int(d2.n, N, "chunk: event count without args");
		for (uint32_t i = 0; i < d2.n && i < N; i++) {
			struct tft_event want = xs[i].ev;
			want.nargs = 0;
			want.args = NULL;
			bad2 += !ev_eq(&d2.ev[i], &want, 1) || d2.ev[i].args != NULL;
		}
		is_int(bad2, 0, "chunk: without args, every other field round-trips");
		ok(d2.nargs == 0 && d2.t_min == enc.t_min && d2.t_max == enc.t_max &&
			   d2.kind_mask == dec.kind_mask,
		   "chunk: without args, no args and the same extent");
		tft_chunk_dec_fini(&d2);
	}

	/* Compressed, and lazy columns: a chunk of plain slices has no args/value columns. */
	{
		struct tft_chunk_enc e2;
		tft_chunk_enc_init(&e2);
		for (int i = 0; i < 100; i++) {
			struct tft_event ev = { .ts_ns = i * 10, .dur_ns = 5, .name = 3, .count = 1 };
			tft_chunk_enc_add(&e2, &ev);
		}
		ok(!(e2.present & (1u << TFT_CHUNK_COL_VALUE)) &&
			   !(e2.present & (1u << TFT_CHUNK_COL_NARGS)) &&
			   !(e2.present & (1u << TFT_CHUNK_COL_COUNT)),
		   "chunk: default-valued columns are left out");
		cctx = ZSTD_createCCtx();
		ok(tft_chunk_enc_finish(&e2, cctx, 3, &scratch, &blob) == 0, "chunk: compress");
		tft_error_clear(&err);
		is_int(tft_chunk_decode(&dec, blob.p, blob.len, 2, &err), 0, "chunk: blob decodes");
		ok(dec.n == 100 && dec.ev[99].ts_ns == 990 && dec.ev[5].dur_ns == 5 &&
			   dec.ev[5].count == 1 && dec.ev[5].name == 3,
		   "chunk: compressed round trip");
		tft_chunk_enc_fini(&e2);
	}

	/* Value column modes: integers as deltas, switching to raw bits mid-chunk. */
	{
		static const double vals[] = { 0, 5, 1e15, -3, 0, 9007199254740992.0, 7, 0.5,
					       -0.0, 12, 1e300, 3 };
		struct tft_chunk_enc e3;
		int bad3 = 0;
		for (int variant = 0; variant < 3; variant++) {
			size_t nv = variant == 0 ? 7 : variant == 1 ? 12 : 1;
			tft_chunk_enc_init(&e3);
			for (size_t i = 0; i < nv; i++) {
				struct tft_event ev = { .ts_ns = (int64_t)i, .count = 1, .kind = TFT_EV_COUNTER,
							.value = variant == 2 ? -0.0 : vals[i] };
				bad3 += tft_chunk_enc_add(&e3, &ev) != 0;
			}
			bad3 += variant == 0 && !e3.value_int;
			bad3 += variant != 0 && e3.value_int;
			tft_chunk_enc_payload(&e3, &payload);
			tft_error_clear(&err);
			bad3 += tft_chunk_decode_payload(&dec, payload.p, payload.len, 3, &err) != 0;
			for (size_t i = 0; i < nv && i < dec.n; i++) {
				double want = variant == 2 ? -0.0 : vals[i];
				bad3 += memcmp(&dec.ev[i].value, &want, sizeof(double)) != 0;
			}
			tft_chunk_enc_fini(&e3);
		}
		is_int(bad3, 0, "chunk: value column int mode, raw mode, switch mid-chunk, -0.0");
	}

	/* Invalid events are refused and leave the chunk unchanged. */
	{
		uint32_t n0 = enc.n;
		struct tft_arg a = { .key = 1, .type = 9 };
		struct tft_event e = { .ts_ns = 1, .dur_ns = -1 };
		is_int(tft_chunk_enc_add(&enc, &e), TFT_EINVAL, "chunk: negative dur refused");
		e.dur_ns = 1;
		e.nargs = 1;
		e.args = &a;
		is_int(tft_chunk_enc_add(&enc, &e), TFT_EINVAL, "chunk: bad arg type refused");
		e = (struct tft_event){ .ts_ns = INT64_MAX - 1, .dur_ns = 5 };
		is_int(tft_chunk_enc_add(&enc, &e), TFT_EINVAL, "chunk: ts + dur overflow refused");
		is_int(enc.n, n0, "chunk: unchanged after refusals");
	}

	/* Corruption: flips and truncations of payload and blob never crash. */
	{
		uint8_t *copy = malloc(payload.len);
		int crashes_avoided = 0, fmt_errors = 0;
		for (int it = 0; it < 3000; it++) {
			size_t len = payload.len;
			memcpy(copy, payload.p, len);
			int nflip = 1 + (int)(rnd() % 4);
			for (int f = 0; f < nflip; f++)
				copy[rnd() % len] ^= (uint8_t)(1u << (rnd() % 8));
			if (rnd() % 4 == 0)
				len = rnd() % len;
			tft_error_clear(&err);
			int rc = tft_chunk_decode_payload(&dec, copy, len, 77, &err);
			if (rc == TFT_EFORMAT) {
				fmt_errors++;
				if (!strstr(err.msg, "chunk 77"))
					crashes_avoided = -100000;
			} else if (rc != 0) {
				crashes_avoided = -100000;
			}
			crashes_avoided++;
		}
		/* Flips inside value bytes decode to other values: only most are caught. */
		ok(crashes_avoided == 3000 && fmt_errors > 1000,
		   "chunk: corrupt payloads give 0 or TFT_EFORMAT naming the chunk (%d of 3000 refused)",
		   fmt_errors);
		free(copy);
		copy = malloc(blob.len);
		for (int it = 0; it < 500; it++) {
			memcpy(copy, blob.p, blob.len);
			copy[rnd() % blob.len] ^= (uint8_t)(1u << (rnd() % 8));
			tft_error_clear(&err);
			int rc = tft_chunk_decode(&dec, copy, blob.len - (rnd() % 2), 5, &err);
			if (rc != 0 && rc != TFT_EFORMAT)
				crashes_avoided = -1;
		}
		ok(crashes_avoided != -1, "chunk: corrupt blobs give 0 or TFT_EFORMAT");
		free(copy);
	}
	tft_chunk_buf_free(&payload);
	tft_chunk_buf_free(&blob);
	tft_chunk_buf_free(&scratch);
	tft_chunk_enc_fini(&enc);
	tft_chunk_dec_fini(&dec);
	ZSTD_freeCCtx(cctx);
	free(xs);
}

/*
 * The encoder's fast path takes an event whose args all hit their position's
 * cached columns; one that misses after earlier args hit takes those args'
 * writes back (an int column's previous value too) and goes the slow way.
 * Recurring arg patterns with occasional deviations at any position, ints
 * with large deltas, one column used twice in an event, and more columns
 * per position than the cache holds: every event must round-trip.
 */
static void test_chunk_fast_path(void)
{
	enum { N = 20000 };
	static const struct {
		uint32_t key, type;
	} pat[][4] = {
		{ { 1, TFT_ARG_INT }, { 2, TFT_ARG_STR }, { 3, TFT_ARG_DOUBLE } },
		{ { 1, TFT_ARG_INT }, { 4, TFT_ARG_INT }, { 3, TFT_ARG_DOUBLE } },
		{ { 1, TFT_ARG_INT }, { 2, TFT_ARG_STR }, { 5, TFT_ARG_BOOL } },  /* misses at 2 */
		{ { 1, TFT_ARG_INT }, { 1, TFT_ARG_INT } },                      /* one column twice */
		{ { 6, TFT_ARG_INT }, { 7, TFT_ARG_JSON }, { 8, TFT_ARG_INT }, { 4, TFT_ARG_INT } },
		{ { 1, TFT_ARG_INT }, { 4, TFT_ARG_INT }, { 3, TFT_ARG_INT } },   /* key 3, other type */
	};
	static const int npat[] = { 3, 3, 3, 2, 4, 3 };
	struct xev *xs = calloc(N, sizeof(*xs));
	struct tft_chunk_enc enc;
	struct tft_chunk_dec dec;
	struct tft_chunk_buf payload = { 0 };
	struct tft_error err;
	int bad = 0, refused = 0;

	tft_chunk_enc_init(&enc);
	tft_chunk_dec_init(&dec);
	for (int i = 0; i < N; i++) {
		struct tft_event *e = &xs[i].ev;
		uint32_t r = (uint32_t)(rnd() % 100);
		int p = r < 45 ? 0 : r < 85 ? 1 : 2 + (int)(r % 4); /* mostly the first two */

		e->ts_ns = (int64_t)i * 1000;
		e->dur_ns = 500;
		e->name = (uint32_t)(p + 1);
		e->count = 1;
		e->nargs = (uint16_t)npat[p];
		e->args = xs[i].args;
		for (int k = 0; k < npat[p]; k++) {
			struct tft_arg *a = &xs[i].args[k];

			a->key = pat[p][k].key;
			a->type = pat[p][k].type;
			switch (a->type) {
			case TFT_ARG_INT: a->v.i = (int64_t)(rnd() - (rnd() << 20)); break; /* wraps: any int64 */
			case TFT_ARG_BOOL: a->v.i = (int64_t)(rnd() & 1); break;
			case TFT_ARG_DOUBLE: a->v.d = (double)(int64_t)rnd() / 7.0; break;
			default: a->v.str = (uint32_t)(rnd() % 300); break;
			}
		}
		refused += tft_chunk_enc_add(&enc, e) != 0;
	}
	is_int(refused, 0, "chunk fast path: every event added");
	ok(tft_chunk_enc_payload(&enc, &payload) == 0, "chunk fast path: payload built");
	tft_error_clear(&err);
	is_int(tft_chunk_decode_payload(&dec, payload.p, payload.len, 1, &err), 0,
	       "chunk fast path: payload decodes");
	is_int(dec.n, N, "chunk fast path: event count");
	for (uint32_t i = 0; i < dec.n && i < N; i++)
		if (!ev_eq(&dec.ev[i], &xs[i].ev, 1))
			bad++;
	is_int(bad, 0, "chunk fast path: args taken back on a miss; every event round-trips");
	tft_chunk_buf_free(&payload);
	tft_chunk_enc_fini(&enc);
	tft_chunk_dec_fini(&dec);
	free(xs);
}

/* ---- writer / reader round trip ----------------------------------------------- */

struct fixture {
	uint32_t thread, async, counter, gpu, big;
	uint32_t s_args[8];
	struct xev *thread_ev; /* expected, with depths */
	size_t nthread;
	struct xev big_ev[1];
};

/* Thread track: nested slices, instants, an unclosed slice, args of every type. */
static const struct {
	int64_t ts, dur;
	int kind;
	uint32_t depth;
} thread_spec[] = {
	{ 1000, 1000, TFT_EV_SLICE, 0 },   /* A [1000, 2000] */
	{ 1000, 400, TFT_EV_SLICE, 1 },    /*  B [1000, 1400] (same start, shorter) */
	{ 1100, 100, TFT_EV_SLICE, 2 },    /*   C */
	{ 1200, 0, TFT_EV_INSTANT, 2 },    /*   instant inside B */
	{ 1400, 100, TFT_EV_SLICE, 1 },    /*  D starts where B ends */
	{ 1500, 0, TFT_EV_SLICE, 1 },      /*  zero-length E */
	{ 1500, 0, TFT_EV_INSTANT, 1 },    /*  instant at E's end: E popped */
	{ 2000, 500, TFT_EV_SLICE, 0 },    /* F starts where A ends */
	{ 3000, 0, TFT_EV_INSTANT, 0 },    /* instant at top level */
	{ 4000, 99000, TFT_EV_SLICE, 0 },  /* unclosed slice */
};

static void test_roundtrip(void)
{
	const char *path = tpath("rt.tft");
	struct tft_error err;
	struct tft_writer *w;
	struct tft_session *s;
	struct tft_writer_opts opts = { .chunk_events = 64 };
	struct xev th[sizeof(thread_spec) / sizeof(thread_spec[0])];
	size_t nth = sizeof(thread_spec) / sizeof(thread_spec[0]);
	struct xev *gpu_ev;
	size_t ngpu = 1000;
	uint32_t p0, p1, t_thread, t_async, t_counter, t_gpu;
	uint32_t k_int, k_dbl, k_str, k_json, k_bool, k_null, v_str, v_json, n_op, c_cpu;
	struct collect col = { 0 };

	tft_error_clear(&err);
	w = tft_writer_open(path, &opts, &err);
	ok(w != NULL, "writer: open %s", path);
	if (!w)
		return;
	tft_error_clear(&err);
	ok(tft_writer_open(path, NULL, &err) == NULL && err.code == TFT_EINVAL,
	   "writer: an existing path is refused");

	p0 = tft_writer_add_process(w, &(struct tft_process){
					       .name = tft_writer_intern_cstr(w, "python"),
					       .host = tft_writer_intern_cstr(w, "node7"),
					       .pid = 4242,
					       .rank = 3,
					       .sort_index = -2,
					       .labels = tft_writer_intern_cstr(w, "train"),
				       });
	p1 = tft_writer_add_process(w, &(struct tft_process){ .pid = -1, .rank = -1 });
	ok(p0 == 0 && p1 == 1, "writer: process ids");
	ok(tft_writer_add_track(w, &(struct tft_track){ .process = 9, .kind = 1 }) == TFT_NONE,
	   "writer: track of an unknown process refused");
	t_thread = tft_writer_add_track(w, &(struct tft_track){
						   .process = p0,
						   .kind = TFT_TRACK_THREAD,
						   .name = tft_writer_intern_cstr(w, "MainThread"),
						   .tid = 77,
						   .sort_index = 5,
					   });
	t_async = tft_writer_add_track(w, &(struct tft_track){ .process = p0, .kind = TFT_TRACK_ASYNC,
							       .name = tft_writer_intern_cstr(w, "async") });
	t_counter = tft_writer_add_track(w, &(struct tft_track){ .process = p1, .kind = TFT_TRACK_COUNTER,
								 .name = tft_writer_intern_cstr(w, "mem") });
	t_gpu = tft_writer_add_track(w, &(struct tft_track){ .process = p1, .kind = TFT_TRACK_GPU_STREAM,
							     .name = tft_writer_intern_cstr(w, "stream 7"),
							     .tid = 7 });
	ok(t_thread == 0 && t_async == 1 && t_counter == 2 && t_gpu == 3, "writer: track ids");

	k_int = tft_writer_intern_cstr(w, "bytes");
	k_dbl = tft_writer_intern_cstr(w, "ratio");
	k_str = tft_writer_intern_cstr(w, "device");
	k_json = tft_writer_intern_cstr(w, "Input Dims");
	k_bool = tft_writer_intern_cstr(w, "sync");
	k_null = tft_writer_intern_cstr(w, "nothing");
	v_str = tft_writer_intern_cstr(w, "cuda:0");
	v_json = tft_writer_intern_cstr(w, "[[1, 2], [3]]");
	n_op = tft_writer_intern_cstr(w, "aten::mm");
	c_cpu = tft_writer_intern_cstr(w, "cpu_op");
	/* A string with an embedded NUL and invalid UTF-8 survives. */
	uint32_t weird = tft_writer_intern(w, "a\0b\xff", 4);

	for (size_t i = 0; i < nth; i++) {
		struct xev *x = &th[i];
		memset(x, 0, sizeof(*x));
		x->ev.ts_ns = thread_spec[i].ts;
		x->ev.dur_ns = thread_spec[i].dur;
		x->ev.kind = (uint8_t)thread_spec[i].kind;
		x->ev.track = t_thread;
		x->ev.name = i == 2 ? weird : n_op;
		x->ev.cat = c_cpu;
		x->ev.count = 1;
		x->ev.depth = thread_spec[i].depth;
		x->ev.args = x->args;
		if (i == nth - 1)
			x->ev.flags = TFT_EVF_UNCLOSED;
		if (i == 8)
			x->ev.flags = TFT_EVF_GLOBAL;
		if (i % 2 == 0) {
			x->ev.nargs = 6;
			x->args[0] = (struct tft_arg){ .key = k_int, .type = TFT_ARG_INT, .v.i = -5 + (int64_t)i * 1000000007LL };
			x->args[1] = (struct tft_arg){ .key = k_dbl, .type = TFT_ARG_DOUBLE, .v.d = 0.1 * (double)i };
			x->args[2] = (struct tft_arg){ .key = k_str, .type = TFT_ARG_STR, .v.str = v_str };
			x->args[3] = (struct tft_arg){ .key = k_json, .type = TFT_ARG_JSON, .v.str = v_json };
			x->args[4] = (struct tft_arg){ .key = k_bool, .type = TFT_ARG_BOOL, .v.i = (int64_t)(i % 4 == 0) };
			x->args[5] = (struct tft_arg){ .key = k_null, .type = TFT_ARG_NULL };
		} else if (i == 3) {
			/* different order and a repeated key */
			x->ev.nargs = 3;
			x->args[0] = (struct tft_arg){ .key = k_str, .type = TFT_ARG_STR, .v.str = weird };
			x->args[1] = (struct tft_arg){ .key = k_int, .type = TFT_ARG_INT, .v.i = INT64_MIN };
			x->args[2] = (struct tft_arg){ .key = k_int, .type = TFT_ARG_INT, .v.i = INT64_MAX };
		}
	}
	int bad = 0;
	for (size_t i = 0; i < nth; i++)
		bad += tft_writer_append(w, &th[i].ev) != 0;
	is_int(bad, 0, "writer: thread events appended");
	{
		struct tft_event e = { .track = t_thread, .ts_ns = 3999, .dur_ns = 1, .count = 1 };
		is_int(tft_writer_append(w, &e), TFT_EINVAL, "writer: out-of-order ts refused");
		e.ts_ns = 5000;
		e.track = 99;
		is_int(tft_writer_append(w, &e), TFT_EINVAL, "writer: unknown track refused");
		e.track = t_thread;
		e.name = 1000000;
		is_int(tft_writer_append(w, &e), TFT_EINVAL, "writer: unknown string id refused");
	}

	/* Async lanes: [0,100) [10,50) [20,200) [60,70) [100,150) [300,310) */
	static const int64_t as[][3] = { { 0, 100, 0 },  { 10, 40, 1 },  { 20, 180, 2 },
					 { 60, 10, 1 },  { 100, 50, 0 }, { 300, 10, 0 } };
	for (size_t i = 0; i < 6; i++) {
		struct tft_event e = { .track = t_async, .ts_ns = as[i][0], .dur_ns = as[i][1],
				       .name = n_op, .count = 1 };
		tft_writer_append(w, &e);
	}
	/* Counter samples with awkward doubles. */
	static const double cv[] = { 0.0, -0.0, 1e300, -2.5, NAN, INFINITY, 12345.678 };
	for (size_t i = 0; i < 7; i++) {
		struct tft_event e = { .track = t_counter, .ts_ns = 100 * (int64_t)i, .value = cv[i],
				       .kind = TFT_EV_COUNTER, .name = tft_writer_intern_cstr(w, "bytes"),
				       .count = 1 };
		tft_writer_append(w, &e);
	}
	/* GPU stream: 1000 kernels over many chunks (chunk_events = 64). */
	gpu_ev = calloc(ngpu, sizeof(*gpu_ev));
	{
		int64_t ts = 10000;
		for (size_t i = 0; i < ngpu; i++) {
			struct tft_event *e = &gpu_ev[i].ev;
			e->track = t_gpu;
			e->ts_ns = ts;
			e->dur_ns = 100 + (int64_t)(i % 7) * 50;
			e->name = n_op;
			e->count = 1;
			ts += e->dur_ns + (i % 10 == 9 ? 50000 : 300);
			tft_writer_append(w, e);
		}
	}
	ok(tft_writer_add_flow(w, &(struct tft_flow){ .flow_id = UINT64_MAX - 3, .name = n_op, .cat = c_cpu,
						       .src_track = t_thread, .src_ts_ns = 1000,
						       .dst_track = t_gpu, .dst_ts_ns = 10000,
						       .flags = TFT_FLOWF_BIND_ENCLOSING }) == 0 &&
		   tft_writer_add_flow(w, &(struct tft_flow){ .flow_id = 5, .src_track = TFT_NONE,
							       .src_ts_ns = 0, .dst_track = t_gpu,
							       .dst_ts_ns = 20000,
							       .flags = TFT_FLOWF_UNMATCHED }) == 0,
	   "writer: flows added");
	ok(tft_writer_add_step(w, &(struct tft_step){ .index = 7, .name = tft_writer_intern_cstr(w, "ProfilerStep#7"),
						       .process = p0, .start_ns = 1000, .dur_ns = 5000, .traced = true }) == 0 &&
		   tft_writer_add_step(w, &(struct tft_step){ .index = 8, .process = TFT_NONE, .start_ns = 6000,
							       .dur_ns = 100 }) == 0,
	   "writer: steps added");
	tft_writer_set_meta(w, "format", "kineto");
	tft_writer_set_meta(w, "producer", "PyTorch Profiler");
	tft_writer_set_meta(w, "producer", "PyTorch Profiler (0.4)");
	tft_writer_add_count(w, TFT_COUNT_DROPPED, 3);
	tft_writer_add_count(w, TFT_COUNT_DROPPED, 4);
	tft_writer_add_count(w, TFT_COUNT_UNMATCHED_FLOWS, 1);
	tft_writer_add_count(w, TFT_COUNT_UNCLOSED_SLICES, 1);
	/* Metadata arriving late: rename a track after its events. */
	tft_writer_track(w, t_gpu)->sort_index = 42;
	tft_writer_process(w, p1)->name = tft_writer_intern_cstr(w, "GPU 0");
	tft_error_clear(&err);
	is_int(tft_writer_close(w, &err), 0, "writer: close");

	tft_error_clear(&err);
	s = tft_session_open(path, &err);
	ok(s != NULL, "reader: open (%s)", err.msg);
	if (!s)
		return;
	struct tft_session_summary sum;
	tft_session_get_summary(s, &sum);
	is_str(sum.format, "kineto", "summary: format");
	is_str(sum.producer, "PyTorch Profiler (0.4)", "summary: producer (last value wins)");
	ok(sum.processes == 2 && sum.tracks == 4, "summary: processes and tracks");
	is_int(sum.slices, 7 + 6 + 1000, "summary: slices");
	is_int(sum.instants, 3, "summary: instants");
	is_int(sum.counters, 7, "summary: counters");
	is_int(sum.flows, 2, "summary: flows");
	is_int(sum.steps, 2, "summary: steps");
	is_int(sum.dropped, 7, "summary: dropped accumulates");
	ok(sum.unmatched_flows == 1 && sum.unclosed_slices == 1, "summary: loss counters");
	is_int(sum.start_ns, 0, "summary: start");
	is_int(sum.end_ns, gpu_ev[ngpu - 1].ev.ts_ns + gpu_ev[ngpu - 1].ev.dur_ns, "summary: end");
	is_int(strtol(tft_session_meta(s, "schema_version") ? tft_session_meta(s, "schema_version") : "0",
		      NULL, 10), TFT_SCHEMA_VERSION, "meta: schema_version");
	ok(tft_session_meta(s, "created_by") && strncmp(tft_session_meta(s, "created_by"), "tftracer", 8) == 0,
	   "meta: created_by");

	const struct tft_process *pp = tft_session_process(s, 0);
	ok(pp && pp->pid == 4242 && pp->rank == 3 && pp->sort_index == -2 &&
		   strcmp(tft_session_str(s, pp->name, NULL), "python") == 0 &&
		   strcmp(tft_session_str(s, pp->host, NULL), "node7") == 0 &&
		   strcmp(tft_session_str(s, pp->labels, NULL), "train") == 0,
	   "reader: process fields");
	is_str(tft_session_str(s, tft_session_process(s, 1)->name, NULL), "GPU 0", "reader: late process rename");
	const struct tft_track *tt = tft_session_track(s, t_thread);
	ok(tt && tt->kind == TFT_TRACK_THREAD && tt->tid == 77 && tt->sort_index == 5 &&
		   tt->slices == 7 && tt->instants == 3 && tt->counters == 0 &&
		   tt->min_ts_ns == 1000 && tt->max_ts_ns == 103000 && tt->max_depth == 2,
	   "reader: thread track stats");
	is_int(tft_session_track(s, t_gpu)->sort_index, 42, "reader: late track change");
	is_int(tft_session_track(s, t_async)->max_depth, 2, "reader: async max lane");
	{
		size_t len;
		const char *ws = tft_session_str(s, weird, &len);
		ok(len == 4 && memcmp(ws, "a\0b\xff", 4) == 0, "reader: binary string round trip");
		is_str(tft_session_str(s, 999999, NULL), "", "reader: unknown string id is \"\"");
	}

	/* Thread track: every field and the depths. */
	collect_reset(&col);
	tft_error_clear(&err);
	is_int(tft_session_scan(s, t_thread, INT64_MIN, INT64_MAX, 0, collect_fn, &col, &err), 0,
	       "scan: thread track");
	is_int(col.n, nth, "scan: thread event count");
	bad = 0;
	for (size_t i = 0; i < col.n && i < nth; i++) {
		if (!ev_eq(&col.ev[i].ev, &th[i].ev, 1)) {
			bad++;
			printf("# event %zu: got ts %lld dur %lld depth %u flags %u nargs %u\n", i,
			       (long long)col.ev[i].ev.ts_ns, (long long)col.ev[i].ev.dur_ns,
			       col.ev[i].ev.depth, col.ev[i].ev.flags, col.ev[i].ev.nargs);
		}
		if (col.ev[i].ev.track != t_thread)
			bad++;
	}
	is_int(bad, 0, "scan: every field round-trips, depths by stack nesting");

	/* Async lanes. */
	collect_reset(&col);
	tft_session_scan(s, t_async, INT64_MIN, INT64_MAX, 0, collect_fn, &col, &err);
	bad = col.n != 6;
	for (size_t i = 0; i < col.n && i < 6; i++)
		bad += col.ev[i].ev.depth != (uint32_t)as[i][2];
	is_int(bad, 0, "scan: async slices lane-packed (first free lane)");

	/* Counter values bit-exact. */
	collect_reset(&col);
	tft_session_scan(s, t_counter, INT64_MIN, INT64_MAX, 0, collect_fn, &col, &err);
	bad = col.n != 7;
	for (size_t i = 0; i < col.n && i < 7; i++)
		bad += memcmp(&col.ev[i].ev.value, &cv[i], sizeof(double)) != 0 ||
		       col.ev[i].ev.kind != TFT_EV_COUNTER || col.ev[i].ev.depth != 0;
	is_int(bad, 0, "scan: counter values bit-exact (-0.0, NaN, inf)");

	/* Window edges on the thread track: [2000, 2000] touches A's end and F's start. */
	collect_reset(&col);
	tft_session_scan(s, t_thread, 2000, 2000, 0, collect_fn, &col, &err);
	ok(col.n == 2 && col.ev[0].ev.ts_ns == 1000 && col.ev[0].ev.dur_ns == 1000 &&
		   col.ev[1].ev.ts_ns == 2000,
	   "window: inclusive at both ends (%zu events)", col.n);
	collect_reset(&col);
	tft_session_scan(s, t_thread, 2501, 2999, 0, collect_fn, &col, &err);
	is_int(col.n, 0, "window: a gap returns nothing");
	collect_reset(&col);
	tft_session_scan(s, t_thread, 50000, 50001, 0, collect_fn, &col, &err);
	ok(col.n == 1 && col.ev[0].ev.flags == TFT_EVF_UNCLOSED, "window: a long slice found from inside");

	/* GPU track: random windows against brute force, across chunk boundaries. */
	bad = 0;
	for (int it = 0; it < 200; it++) {
		int64_t span = gpu_ev[ngpu - 1].ev.ts_ns;
		int64_t t0 = (int64_t)(rnd() % (uint64_t)span), t1 = t0 + (int64_t)(rnd() % 200000);
		size_t want = 0, first = SIZE_MAX;
		if (it == 0) {
			t0 = gpu_ev[100].ev.ts_ns + gpu_ev[100].ev.dur_ns; /* exactly an end */
			t1 = gpu_ev[300].ev.ts_ns;                         /* exactly a start */
		}
		for (size_t i = 0; i < ngpu; i++)
			if (gpu_ev[i].ev.ts_ns <= t1 && gpu_ev[i].ev.ts_ns + gpu_ev[i].ev.dur_ns >= t0) {
				want++;
				if (first == SIZE_MAX)
					first = i;
			}
		collect_reset(&col);
		tft_session_scan(s, t_gpu, t0, t1, 0, collect_fn, &col, &err);
		if (col.n != want || !col.sorted || (want && !ev_eq(&col.ev[0].ev, &gpu_ev[first].ev, 0)))
			bad++;
	}
	is_int(bad, 0, "window: 200 random windows match brute force");

	tft_session_close(s);
	free(gpu_ev);
	free(col.ev);
}

struct flows {
	struct tft_flow f[8];
	int n;
};

static int stop_after_3(void *ctx, const struct tft_flow *f)
{
	(void)f;
	return ++*(int *)ctx >= 3 ? 7 : 0;
}

static int copy_file(const char *from, const char *to, long truncate_to);
static void sql_exec(const char *path, const char *sql);

static int flow_fn(void *ctx, const struct tft_flow *f)
{
	struct flows *fl = ctx;

	if (fl->n < 8)
		fl->f[fl->n] = *f;
	fl->n++;
	return 0;
}

static int stop_fn(void *ctx, const struct tft_event *ev)
{
	(void)ev;
	return ++*(int *)ctx >= 3 ? 42 : 0;
}

static void test_flows_steps(void)
{
	struct tft_error err;
	struct tft_session *s;
	struct flows fl = { .n = 0 };
	int cnt = 0;

	tft_error_clear(&err);
	s = tft_session_open(tpath("rt.tft"), &err);
	if (!ok(s != NULL, "reader: reopen"))
		return;
	is_int(tft_session_flows(s, flow_fn, &fl, &err), 0, "flows: iterate");
	ok(fl.n == 2 && fl.f[0].flow_id == UINT64_MAX - 3 && fl.f[0].src_track == 0 &&
		   fl.f[0].src_ts_ns == 1000 && fl.f[0].dst_track == 3 && fl.f[0].dst_ts_ns == 10000 &&
		   fl.f[0].flags == TFT_FLOWF_BIND_ENCLOSING &&
		   strcmp(tft_session_str(s, fl.f[0].name, NULL), "aten::mm") == 0,
	   "flows: fields round-trip (64-bit id)");
	ok(fl.n == 2 && fl.f[1].src_track == TFT_NONE && fl.f[1].flags == TFT_FLOWF_UNMATCHED,
	   "flows: missing end is TFT_NONE");
	is_int(tft_session_step_count(s), 2, "steps: count");
	const struct tft_step *st = tft_session_step(s, 0);
	ok(st && st->index == 7 && st->process == 0 && st->start_ns == 1000 && st->dur_ns == 5000 &&
		   st->traced && strcmp(tft_session_str(s, st->name, NULL), "ProfilerStep#7") == 0,
	   "steps: fields round-trip");
	st = tft_session_step(s, 1);
	ok(st && st->process == TFT_NONE && !st->traced, "steps: no process");
	is_int(tft_session_scan(s, 3, INT64_MIN, INT64_MAX, 0, stop_fn, &cnt, &err), 42,
	       "scan: the callback's non-zero return stops the scan");
	is_int(cnt, 3, "scan: stopped after 3 events");
	tft_error_clear(&err);
	is_int(tft_session_scan(s, 99, 0, 1, 0, stop_fn, &cnt, &err), TFT_EINVAL, "scan: unknown track");
	tft_session_close(s);
}

/* ---- flow chunks ------------------------------------------------------------------ */

static int flow_eq(const struct tft_flow *a, const struct tft_flow *b)
{
	return a->flow_id == b->flow_id && a->name == b->name && a->cat == b->cat &&
	       a->src_track == b->src_track && a->src_ts_ns == b->src_ts_ns &&
	       a->dst_track == b->dst_track && a->dst_ts_ns == b->dst_ts_ns && a->flags == b->flags;
}

static void random_flow(struct tft_flow *f, int64_t *ts, uint32_t ntracks)
{
	*ts += (int64_t)(rnd() % 3000);
	memset(f, 0, sizeof(*f));
	f->flow_id = rnd() % 8 == 0 ? rnd() : (uint64_t)(*ts / 7);
	f->name = (uint32_t)(rnd() % 5);
	f->cat = (uint32_t)(rnd() % 3);
	f->src_track = rnd() % 10 == 0 ? TFT_NONE : (uint32_t)(rnd() % ntracks);
	f->dst_track = rnd() % 10 == 0 ? TFT_NONE : (uint32_t)(rnd() % ntracks);
	f->src_ts_ns = f->src_track == TFT_NONE ? (rnd() % 2 ? 0 : *ts - 5) : *ts;
	f->dst_ts_ns = f->dst_track == TFT_NONE ? 0 : *ts + (int64_t)(rnd() % 100000) - 1000;
	f->flags = (f->src_track == TFT_NONE || f->dst_track == TFT_NONE ? TFT_FLOWF_UNMATCHED : 0) |
		   (rnd() % 3 == 0 ? TFT_FLOWF_BIND_ENCLOSING : 0);
}

static int cmp_time_idx(const void *a, const void *b)
{
	const int64_t *x = a, *y = b;

	if (x[0] != y[0])
		return x[0] < y[0] ? -1 : 1;
	return x[1] < y[1] ? -1 : x[1] > y[1];
}

/* Runs and ties: the chunk's order is a stable sort by time (ties in input order). */
static void test_flow_order(void)
{
	enum { N = 3000 };
	struct tft_flow *f = calloc(N, sizeof(*f));
	int64_t (*key)[2] = calloc(N, sizeof(*key));
	struct tft_flow_dec d;
	struct tft_chunk_buf scratch = { 0 }, blob = { 0 };
	struct tft_error err;
	void *cctx = ZSTD_createCCtx();
	int64_t t_min, t_max;
	int same = 1;

	for (int i = 0; i < N; i++) {
		/* 5 ascending runs, times in steps of 10 so that many collide */
		int run = i / (N / 5), k = i % (N / 5);
		f[i].flow_id = (uint64_t)i;
		f[i].src_track = i % 3 == 0 ? TFT_NONE : 1; /* no source: dst time is the key */
		f[i].src_ts_ns = f[i].src_track == TFT_NONE ? 0 : (int64_t)(k / 3) * 10 + run;
		f[i].dst_track = 2;
		f[i].dst_ts_ns = (int64_t)(k / 3) * 10 + (run & 1);
		key[i][0] = tft_flow_time(&f[i]);
		key[i][1] = i;
	}
	qsort(key, N, sizeof(*key), cmp_time_idx);
	tft_flow_dec_init(&d);
	ok(tft_flow_chunk_encode(f, N, cctx, 1, &scratch, &blob, &t_min, &t_max) == 0 &&
		   tft_flow_chunk_decode(&d, blob.p, blob.len, 1, &err) == 0 && d.n == N,
	   "flow order: encode and decode 5 runs with ties");
	for (uint32_t i = 0; same && i < d.n; i++)
		same = d.f[i].flow_id == (uint64_t)key[i][1];
	ok(same, "flow order: a stable sort by time (ties keep input order)");
	is_int(t_min, key[0][0], "flow order: t_min");
	is_int(t_max, key[N - 1][0], "flow order: t_max");
	tft_flow_dec_fini(&d);
	tft_chunk_buf_free(&scratch);
	tft_chunk_buf_free(&blob);
	ZSTD_freeCCtx(cctx);
	free(key);
	free(f);
}

static void test_flow_codec(void)
{
	enum { N = 5000 };
	struct tft_flow *f = calloc(N, sizeof(*f));
	struct tft_flow_dec d;
	struct tft_chunk_buf scratch = { 0 }, blob = { 0 };
	struct tft_error err;
	void *cctx = ZSTD_createCCtx();
	int64_t ts = -1000000, t_min, t_max;
	int bad = 0, sorted = 1, errors = 0;

	for (int i = 0; i < N; i++) {
		random_flow(&f[i], &ts, 40);
		if (i % 97 == 0) /* out of order input */
			f[i].src_ts_ns -= 100000;
	}
	f[7].src_ts_ns = INT64_MIN; /* extremes: deltas wrap */
	f[7].dst_ts_ns = INT64_MAX;
	f[8].flow_id = UINT64_MAX;
	f[9].name = UINT32_MAX - 1;
	tft_flow_dec_init(&d);
	ok(tft_flow_chunk_encode(f, N, cctx, 3, &scratch, &blob, &t_min, &t_max) == 0, "flow chunk: encode");
	tft_error_clear(&err);
	is_int(tft_flow_chunk_decode(&d, blob.p, blob.len, 1, &err), 0, "flow chunk: decode");
	is_int(d.n, N, "flow chunk: count");
	/* every input flow comes back once; the output is sorted by time, ties in input order */
	char *used = calloc(N, 1);
	for (uint32_t i = 0; i < d.n; i++) {
		int found = 0;
		if (i && tft_flow_time(&d.f[i]) < tft_flow_time(&d.f[i - 1]))
			sorted = 0;
		for (int j = 0; j < N && !found; j++)
			if (!used[j] && flow_eq(&d.f[i], &f[j]))
				used[j] = 1, found = 1;
		bad += !found;
	}
	is_int(bad, 0, "flow chunk: every field of every flow round-trips");
	ok(sorted && t_min == tft_flow_time(&d.f[0]) && t_max == tft_flow_time(&d.f[N - 1]),
	   "flow chunk: sorted by time, range returned");
	/* every truncation and many byte flips of the payload: errors, never a crash */
	struct tft_chunk_buf payload = { 0 };
	tft_chunk_buf_reserve(&payload, scratch.len);
	memcpy(payload.p, scratch.p, scratch.len);
	payload.len = scratch.len;
	for (size_t cut = 0; cut < payload.len; cut += 1 + cut / 16) {
		tft_error_clear(&err);
		errors += tft_flow_chunk_decode_payload(&d, payload.p, cut, 1, &err) == TFT_EFORMAT;
	}
	ok(errors > 0 && strstr(err.msg, "flow chunk 1") != NULL, "flow chunk: truncations refused (%s)",
	   err.msg);
	int odd = 0;
	for (int i = 0; i < 2000; i++) {
		size_t at = rnd() % payload.len;
		uint8_t old = payload.p[at];
		int r;
		payload.p[at] ^= (uint8_t)(1 + rnd() % 255);
		tft_error_clear(&err);
		r = tft_flow_chunk_decode_payload(&d, payload.p, payload.len, 1, &err);
		odd += !(r == 0 || (r == TFT_EFORMAT && strstr(err.msg, "flow chunk 1")));
		payload.p[at] = old;
	}
	is_int(odd, 0, "flow chunk: byte flips decode, or fail as a format error naming the chunk");
	tft_chunk_buf_free(&payload);
	free(used);
	tft_flow_dec_fini(&d);
	tft_chunk_buf_free(&scratch);
	tft_chunk_buf_free(&blob);
	ZSTD_freeCCtx(cctx);
	free(f);
}

struct flowlist {
	struct tft_flow *f;
	size_t n, cap;
};

static int flowlist_fn(void *ctx, const struct tft_flow *f)
{
	struct flowlist *l = ctx;

	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 1024;
		l->f = realloc(l->f, l->cap * sizeof(*l->f));
	}
	l->f[l->n++] = *f;
	return 0;
}

static int cmp_flow_id(const void *a, const void *b)
{
	const struct tft_flow *x = a, *y = b;

	if (x->flow_id != y->flow_id)
		return x->flow_id < y->flow_id ? -1 : 1;
	return (x->src_ts_ns > y->src_ts_ns) - (x->src_ts_ns < y->src_ts_ns);
}

/* More flows than one chunk holds, through the writer and reader (and live mode). */
static void test_flows_many(void)
{
	enum { N = 40000 };
	struct tft_flow *f = calloc(N, sizeof(*f));
	struct flowlist got = { 0 };
	struct tft_error err;
	int bad = 0;

	for (int live = 0; live < 2; live++) {
		const char *path = tpath(live ? "flows-live.tft" : "flows.tft");
		struct tft_writer_opts o = { .flush_partial = live };
		struct tft_writer *w = tft_writer_open(path, &o, &err);
		struct tft_session *s;
		int64_t ts = 1000;
		uint32_t tr[4];
		int nbad = 0;

		if (!ok(w != NULL, "flows: writer open"))
			return;
		tft_writer_add_process(w, &(struct tft_process){ .rank = -1 });
		for (int i = 0; i < 4; i++)
			tr[i] = tft_writer_add_track(w, &(struct tft_track){ .kind = TFT_TRACK_THREAD });
		for (int i = 0; i < 5; i++)
			tft_writer_intern_cstr(w, i == 0 ? "" : i == 1 ? "ac2g" : i == 2 ? "fwdbwd" : i == 3 ? "x" : "y");
		(void)tr;
		for (int i = 0; i < N; i++) {
			random_flow(&f[i], &ts, 4);
			nbad += tft_writer_add_flow(w, &f[i]) != 0;
			if (live && i % 10000 == 9999)
				nbad += tft_writer_commit(w, &err) != 0;
		}
		ok(nbad == 0, "flows: %d added%s", N, live ? " (live, committed in between)" : "");
		ok(tft_writer_add_flow(w, &(struct tft_flow){ .src_track = 4, .dst_track = TFT_NONE }) ==
			   TFT_EINVAL,
		   "flows: unknown track refused");
		is_int(tft_writer_close(w, &err), 0, "flows: close");
		s = tft_session_open(path, &err);
		if (!ok(s != NULL, "flows: reopen"))
			return;
		struct tft_session_summary sum;
		tft_session_get_summary(s, &sum);
		is_int(sum.flows, N, "flows: summary count");
		got.n = 0;
		is_int(tft_session_flows(s, flowlist_fn, &got, &err), 0, "flows: iterate");
		is_int(got.n, N, "flows: all come back");
		/* compare as multisets */
		struct tft_flow *want = malloc(N * sizeof(*want));
		memcpy(want, f, N * sizeof(*want));
		qsort(want, N, sizeof(*want), cmp_flow_id);
		qsort(got.f, got.n, sizeof(*got.f), cmp_flow_id);
		bad = 0;
		for (size_t i = 0; i < got.n && i < N; i++)
			bad += !flow_eq(&got.f[i], &want[i]);
		is_int(bad, 0, "flows: every field round-trips");
		free(want);
		int cnt = 0;
		is_int(tft_session_flows(s, stop_after_3, &cnt, &err), 7, "flows: callback stops the iteration");
		tft_session_close(s);

		sqlite3 *db;
		sqlite3_stmt *st;
		sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL);
		sqlite3_prepare_v2(db, "SELECT count(*), sum(n), min(t_min) <= max(t_max) FROM flow_chunks", -1, &st,
				   NULL);
		int row = sqlite3_step(st) == SQLITE_ROW, nchunks = row ? sqlite3_column_int(st, 0) : 0;
		ok(row && nchunks >= 3 && sqlite3_column_int(st, 1) == N && sqlite3_column_int(st, 2) == 1,
		   "flows: stored in %d chunks", nchunks);
		sqlite3_finalize(st);
		sqlite3_close(db);
	}
	/* A damaged flow chunk is TFT_EFORMAT naming it. */
	const char *bad_path = tpath("flows-bad.tft");
	copy_file(tpath("flows.tft"), bad_path, -1);
	sql_exec(bad_path, "UPDATE flow_chunks SET n = n + 1 WHERE id = (SELECT max(id) FROM flow_chunks)");
	struct tft_session *s = tft_session_open(bad_path, &err);
	if (s) {
		got.n = 0;
		tft_error_clear(&err);
		ok(tft_session_flows(s, flowlist_fn, &got, &err) == TFT_EFORMAT &&
			   strstr(err.msg, "flow chunk") != NULL,
		   "flows: bad chunk row is TFT_EFORMAT (%s)", err.msg);
		tft_session_close(s);
	}
	free(got.f);
	free(f);
}

/* ---- LOD -------------------------------------------------------------------------- */

struct lodsum {
	uint64_t count, n, summaries;
	double busy;
	int64_t last_ts;
	int sorted;
	uint32_t max_depth;
};

static int lod_fn(void *ctx, const struct tft_event *ev)
{
	struct lodsum *l = ctx;

	if (l->n && ev->ts_ns < l->last_ts)
		l->sorted = 0;
	l->last_ts = ev->ts_ns;
	l->n++;
	l->count += ev->count;
	if (ev->flags & TFT_EVF_SUMMARY) {
		l->summaries++;
		l->busy += ev->value;
	} else {
		l->busy += (double)ev->dur_ns;
	}
	if (ev->depth > l->max_depth)
		l->max_depth = ev->depth;
	return 0;
}

static void test_lod(void)
{
	const char *path = tpath("lod.tft");
	struct tft_error err;
	struct tft_writer *w;
	struct tft_session *s;
	uint32_t t, tc, names[5];
	uint64_t n = 0;
	double busy = 0;
	int64_t ts = 0, mid_ts = 0;

	tft_error_clear(&err);
	w = tft_writer_open(path, NULL, &err);
	if (!ok(w != NULL, "lod: writer open"))
		return;
	tft_writer_add_process(w, &(struct tft_process){ .rank = -1 });
	t = tft_writer_add_track(w, &(struct tft_track){ .kind = TFT_TRACK_THREAD });
	tc = tft_writer_add_track(w, &(struct tft_track){ .kind = TFT_TRACK_COUNTER });
	for (int i = 0; i < 5; i++) {
		char nm[16];
		snprintf(nm, sizeof(nm), "op%d", i);
		names[i] = tft_writer_intern_cstr(w, nm);
	}
	/* 100k parents with a child each; gaps 200 ns, and a 100 us gap every 1000. */
	for (int i = 0; i < 100000; i++) {
		struct tft_event p = { .track = t, .ts_ns = ts, .dur_ns = 800 + (int64_t)(rnd() % 400),
				       .name = names[i % 5], .count = 1 };
		struct tft_event c = { .track = t, .ts_ns = ts + 100, .dur_ns = 300, .name = names[0], .count = 1 };
		tft_writer_append(w, &p);
		tft_writer_append(w, &c);
		n += 2;
		busy += (double)(p.dur_ns + c.dur_ns);
		if (i == 50500)
			mid_ts = ts;
		ts += p.dur_ns + (i % 1000 == 999 ? 100000 : 200);
		if (i % 10 == 0) {
			struct tft_event cs = { .track = tc, .ts_ns = ts, .value = (double)(i % 977),
						.kind = TFT_EV_COUNTER, .count = 1 };
			tft_writer_append(w, &cs);
		}
	}
	is_int(tft_writer_close(w, &err), 0, "lod: close");
	s = tft_session_open(path, &err);
	if (!ok(s != NULL, "lod: reopen"))
		return;

	struct lodsum raw = { .sorted = 1 }, l1 = { .sorted = 1 }, coarse = { .sorted = 1 };
	tft_session_scan(s, t, INT64_MIN, INT64_MAX, 0, lod_fn, &raw, &err);
	is_int(raw.n, n, "lod: resolution 0 returns raw events");
	is_int(raw.summaries, 0, "lod: no summaries at resolution 0");
	/* 1 us: parents >= 1 us stand alone there, so level 1 is not a quarter of the
	 * raw events and is not stored; 4 us merges each burst per depth. */
	tft_session_scan(s, t, INT64_MIN, INT64_MAX, 4000, lod_fn, &l1, &err);
	ok(l1.summaries == l1.n && l1.n > 0 && l1.n <= n / 4, "lod: 4 us resolution gives summaries (%llu)",
	   (unsigned long long)l1.n);
	is_int(l1.count, n, "lod: summary counts add up to the raw events");
	ok(fabs(l1.busy - busy) < 1, "lod: busy time adds up");
	ok(l1.sorted, "lod: summaries come in start order");
	ok(l1.max_depth == 1, "lod: depths kept");
	tft_session_scan(s, t, INT64_MIN, INT64_MAX, 1000000, lod_fn, &coarse, &err);
	/* 1 ms picks the 256 us level: the 100 us pauses merge too */
	ok(coarse.n == 2 && coarse.count == n,
	   "lod: 1 ms resolution: one block per depth (%llu blocks), counts still add up",
	   (unsigned long long)coarse.n);
	/* the 100 us gaps separate blocks at levels with gap <= 64 us; 4^4 us = 256 us merges them */
	struct lodsum mid = { .sorted = 1 };
	tft_session_scan(s, t, INT64_MIN, INT64_MAX, 64000, lod_fn, &mid, &err);
	is_int(mid.n, 200, "lod: 64 us resolution: one block per burst per depth");
	struct lodsum wide = { .sorted = 1 };
	tft_session_scan(s, t, INT64_MIN, INT64_MAX, INT64_MAX, lod_fn, &wide, &err);
	ok(wide.n <= 2 && wide.count == n, "lod: coarsest level: one block per depth (%llu)",
	   (unsigned long long)wide.n);
	/* a window in the middle at 64 us resolution: a couple of bursts */
	struct lodsum win = { .sorted = 1 };
	tft_session_scan(s, t, mid_ts, mid_ts + 1, 64000, lod_fn, &win, &err);
	ok(win.n == 2 && win.summaries == win.n && win.count == 2000,
	   "lod: window inside a burst at 64 us: its two blocks (%llu)",
	   (unsigned long long)win.n);
	/* counters: peak-preserving buckets */
	struct lodsum cr = { .sorted = 1 }, cl = { .sorted = 1 };
	tft_session_scan(s, tc, INT64_MIN, INT64_MAX, 0, lod_fn, &cr, &err);
	tft_session_scan(s, tc, INT64_MIN, INT64_MAX, 100000000, lod_fn, &cl, &err);
	ok(cr.n == 10000 && cl.n < cr.n / 4 && cl.count == cr.n && cl.summaries == cl.n,
	   "lod: counter buckets (%llu of %llu samples)", (unsigned long long)cl.n,
	   (unsigned long long)cr.n);
	tft_session_close(s);

	/* The lod table: every stored level has at most a quarter of the events of the finer one. */
	sqlite3 *db;
	sqlite3_stmt *st;
	int ok_levels = 1, nlev = 0;
	int64_t prev_n = -1;
	sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL);
	sqlite3_prepare_v2(db, "SELECT level, gap_ns, n FROM lod WHERE track = 0 ORDER BY level", -1, &st, NULL);
	while (sqlite3_step(st) == SQLITE_ROW) {
		int lv = sqlite3_column_int(st, 0);
		int64_t gap = sqlite3_column_int64(st, 1), ln = sqlite3_column_int64(st, 2);
		if (lv > 0 && (gap != (int64_t)1000 << (2 * (lv - 1)) || ln * 4 > prev_n))
			ok_levels = 0;
		prev_n = ln;
		nlev++;
	}
	sqlite3_finalize(st);
	ok(ok_levels && nlev >= 3, "lod: each stored level has at most a quarter of the finer (%d levels)",
	   nlev);
	sqlite3_prepare_v2(db, "SELECT count(*) FROM chunks c WHERE level > 0 AND NOT EXISTS"
			   " (SELECT 1 FROM lod l WHERE l.track = c.track AND l.level = c.level)", -1, &st, NULL);
	sqlite3_step(st);
	is_int(sqlite3_column_int(st, 0), 0, "lod: dropped levels leave no chunks");
	sqlite3_finalize(st);
	sqlite3_prepare_v2(db, "SELECT count(*) FROM track_view WHERE kind = 'thread'", -1, &st, NULL);
	ok(sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0) == 1, "sql: track_view works");
	sqlite3_finalize(st);
	sqlite3_close(db);
}

/*
 * The LOD rule, checked on the builder at every level against a direct
 * computation from the raw events: at level k (gap G), a slice lasting >= G
 * stands alone (count 1); shorter slices and instants merge while they start
 * less than G after the open block's end.
 */
struct blk {
	int level;
	uint32_t depth, count, name;
	int64_t ts, dur, busy;
};

struct blks {
	struct blk *b;
	size_t n, cap;
};

static void blks_add(struct blks *l, struct blk b)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 1024;
		l->b = realloc(l->b, l->cap * sizeof(*l->b));
	}
	l->b[l->n++] = b;
}

static int blk_emit(void *ctx, int level, const struct tft_event *ev)
{
	blks_add(ctx, (struct blk){ level, ev->depth, ev->count, ev->name, ev->ts_ns, ev->dur_ns,
				    (int64_t)ev->value });
	return 0;
}

static int cmp_blk(const void *a, const void *b)
{
	const struct blk *x = a, *y = b;

	if (x->level != y->level)
		return x->level < y->level ? -1 : 1;
	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return (x->dur > y->dur) - (x->dur < y->dur);
}

/* The rule applied directly to the raw events of one depth, at every level. */
static void lod_direct(const struct tft_event *ev, size_t n, struct blks *out)
{
	for (int k = 1; k <= TFT_LOD_LEVELS; k++) {
		int64_t gap = tft_lod_gap_ns(k);
		struct blk open = { 0 };
		int64_t longest = -1;
		int have = 0;
		for (size_t i = 0; i < n; i++) {
			const struct tft_event *e = &ev[i];
			int64_t end = e->ts_ns + e->dur_ns, busy = e->kind == TFT_EV_SLICE ? e->dur_ns : 0;
			int is_long = e->kind == TFT_EV_SLICE && e->dur_ns >= gap;
			if (have && !is_long && e->ts_ns - (open.ts + open.dur) < gap) {
				if (end > open.ts + open.dur)
					open.dur = end - open.ts;
				open.count++;
				open.busy += busy;
				if (e->dur_ns > longest) {
					longest = e->dur_ns;
					open.name = e->name;
				}
				continue;
			}
			if (have)
				blks_add(out, open);
			open = (struct blk){ k, e->depth, 1, e->name, e->ts_ns, e->dur_ns, busy };
			longest = e->dur_ns;
			have = 1;
			if (is_long) {
				blks_add(out, open);
				have = 0;
			}
		}
		if (have)
			blks_add(out, open);
	}
}

static void test_lod_rule(void)
{
	enum { N = 20000 };
	struct tft_event *ev = calloc(N, sizeof(*ev));
	struct blks got = { 0 }, want = { 0 };
	struct tft_lod lod;
	int64_t ts = 0;
	int bad = 0, rounds = 0;

	/* Random mixes on one depth: durations and gaps log-spread over 1 ns .. 1 s. */
	for (int round = 0; round < 6; round++, rounds++) {
		got.n = want.n = 0;
		tft_lod_init(&lod, 0);
		for (int i = 0; i < N; i++) {
			int64_t dscale = (int64_t)1 << (rnd() % (round < 3 ? 31 : 14));
			int64_t gscale = (int64_t)1 << (rnd() % 28);
			ev[i] = (struct tft_event){ .ts_ns = ts, .dur_ns = (int64_t)(rnd() % (uint64_t)dscale),
						    .name = (uint32_t)(rnd() % 7), .count = 1,
						    .kind = rnd() % 10 == 0 ? TFT_EV_INSTANT : TFT_EV_SLICE };
			if (ev[i].kind == TFT_EV_INSTANT)
				ev[i].dur_ns = 0;
			tft_lod_add(&lod, &ev[i], blk_emit, &got);
			ts += ev[i].dur_ns + (int64_t)(rnd() % (uint64_t)gscale);
		}
		tft_lod_flush(&lod, blk_emit, &got);
		tft_lod_fini(&lod);
		lod_direct(ev, N, &want);
		qsort(got.b, got.n, sizeof(*got.b), cmp_blk);
		qsort(want.b, want.n, sizeof(*want.b), cmp_blk);
		if (got.n != want.n) {
			printf("# round %d: %zu blocks, want %zu\n", round, got.n, want.n);
			bad++;
			continue;
		}
		for (size_t i = 0; i < got.n; i++)
			if (memcmp(&got.b[i], &want.b[i], sizeof(got.b[i])) != 0) {
				bad++;
				break;
			}
	}
	ok(bad == 0, "lod rule: cascaded levels equal the rule applied to the raw events (%d mixes)",
	   rounds);

	/* Six back-to-back 150 ms steps: separate at every level whose gap is <= 150 ms. */
	got.n = 0;
	tft_lod_init(&lod, 0);
	for (int i = 0; i < 6; i++) {
		struct tft_event e = { .ts_ns = i * 150000000LL, .dur_ns = 150000000LL, .name = 10 + (uint32_t)i,
				       .count = 1 };
		tft_lod_add(&lod, &e, blk_emit, &got);
	}
	tft_lod_flush(&lod, blk_emit, &got);
	tft_lod_fini(&lod);
	int sep_ok = 1, merged_ok = 1;
	for (int k = 1; k <= TFT_LOD_LEVELS; k++) {
		size_t nk = 0, cnt = 0;
		for (size_t i = 0; i < got.n; i++)
			if (got.b[i].level == k) {
				nk++;
				cnt += got.b[i].count;
				if (tft_lod_gap_ns(k) <= 150000000LL &&
				    (got.b[i].count != 1 || got.b[i].dur != 150000000LL ||
				     got.b[i].name != 10 + (uint32_t)(got.b[i].ts / 150000000LL)))
					sep_ok = 0;
			}
		if (tft_lod_gap_ns(k) <= 150000000LL && nk != 6)
			sep_ok = 0;
		if (tft_lod_gap_ns(k) > 150000000LL && (nk != 1 || cnt != 6))
			merged_ok = 0;
	}
	ok(sep_ok, "lod rule: adjacent long slices stay separate (count 1, own name) at levels 1-10");
	ok(merged_ok, "lod rule: they merge at levels whose gap exceeds their duration");

	/* A run of tiny slices merges into one block per level. */
	got.n = 0;
	tft_lod_init(&lod, 0);
	for (int i = 0; i < 10000; i++) {
		struct tft_event e = { .ts_ns = i * 150LL, .dur_ns = 100, .count = 1 };
		tft_lod_add(&lod, &e, blk_emit, &got);
	}
	tft_lod_flush(&lod, blk_emit, &got);
	tft_lod_fini(&lod);
	int run_ok = got.n == TFT_LOD_LEVELS;
	for (size_t i = 0; i < got.n; i++)
		run_ok &= got.b[i].count == 10000 && got.b[i].busy == 1000000;
	ok(run_ok, "lod rule: a run of tiny slices is one block at every level (%zu blocks)", got.n);

	/* Mixed: tiny runs between long slices; the long ones split the runs. */
	got.n = 0;
	tft_lod_init(&lod, 0);
	ts = 0;
	for (int i = 0; i < 4; i++) {
		struct tft_event big = { .ts_ns = ts, .dur_ns = 10000, .name = 1, .count = 1 };
		tft_lod_add(&lod, &big, blk_emit, &got);
		ts += 10100;
		for (int j = 0; j < 20; j++, ts += 200) {
			struct tft_event e = { .ts_ns = ts, .dur_ns = 100, .name = 2, .count = 1 };
			tft_lod_add(&lod, &e, blk_emit, &got);
		}
	}
	tft_lod_flush(&lod, blk_emit, &got);
	tft_lod_fini(&lod);
	size_t n1 = 0, n3 = 0, long1 = 0;
	for (size_t i = 0; i < got.n; i++) {
		n1 += got.b[i].level == 1;
		n3 += got.b[i].level == 3;
		long1 += got.b[i].level == 1 && got.b[i].count == 1 && got.b[i].dur == 10000;
	}
	/* level 1 (1 us): 4 long + 4 runs; level 3 (16 us): the 10 us slices are short, all merge */
	ok(n1 == 8 && long1 == 4 && n3 == 1, "lod rule: mixed long slices and tiny runs (%zu, %zu blocks)",
	   n1, n3);
	free(got.b);
	free(want.b);
	free(ev);
}

/*
 * The same through the writer and reader: whatever level a resolution picks,
 * every slice at least as long as the resolution comes back as itself.
 */
struct longchk {
	int64_t res;
	size_t seen_long, bad;
	uint64_t count;
};

static int longchk_fn(void *ctx, const struct tft_event *ev)
{
	struct longchk *c = ctx;

	c->count += ev->count;
	/* a 1-event block at least res long is a raw slice that long: all of them must be there */
	if (ev->kind == TFT_EV_SLICE && ev->dur_ns >= c->res && ev->count == 1)
		c->seen_long++;
	return 0;
}

static void test_lod_long(void)
{
	const char *path = tpath("lodlong.tft");
	struct tft_error err;
	struct tft_writer *w;
	struct tft_session *s;
	uint32_t t, step_name[6], op;
	uint64_t n = 0;
	int64_t ts = 0;
	int bad = 0, bad_steps = 0;
	size_t nlong[14] = { 0 };
	static const int64_t durs[] = { 150000000LL, 20000000LL, 3000000LL, 500000LL, 70000LL, 9000LL };

	tft_error_clear(&err);
	w = tft_writer_open(path, NULL, &err);
	if (!ok(w != NULL, "lod long: writer open"))
		return;
	tft_writer_add_process(w, &(struct tft_process){ .rank = -1 });
	t = tft_writer_add_track(w, &(struct tft_track){ .kind = TFT_TRACK_THREAD });
	op = tft_writer_intern_cstr(w, "aten::add");
	for (int i = 0; i < 6; i++) {
		char nm[32];
		snprintf(nm, sizeof(nm), "ProfilerStep#%d", i);
		step_name[i] = tft_writer_intern_cstr(w, nm);
	}
	/* Six back-to-back 150 ms steps, each full of ops of spread lengths. */
	for (int i = 0; i < 6; i++) {
		int64_t end = ts + 150000000LL;
		tft_writer_append(w, &(struct tft_event){ .track = t, .ts_ns = ts, .dur_ns = 150000000LL,
							  .name = step_name[i], .count = 1 });
		n++;
		for (int64_t x = ts + 1000; ; n++) {
			int64_t d = rnd() % 100 < 97 ? 200 + (int64_t)(rnd() % 1800)
						     : durs[1 + rnd() % 5] / (1 + (int64_t)(rnd() % 8));
			if (x + d > end)
				break;
			tft_writer_append(w, &(struct tft_event){ .track = t, .ts_ns = x, .dur_ns = d,
								  .name = op, .count = 1 });
			for (int k = 0; k < 14; k++)
				nlong[k] += d >= (k ? tft_lod_gap_ns(k) : 1);
			x += d + 100 + (int64_t)(rnd() % 3000);
		}
		ts = end;
	}
	is_int(tft_writer_close(w, &err), 0, "lod long: close");
	s = tft_session_open(path, &err);
	if (!ok(s != NULL, "lod long: reopen"))
		return;
	for (int k = 1; k <= 13; k++) {
		struct longchk c = { .res = tft_lod_gap_ns(k) };
		struct collect col = { .sorted = 1 };
		tft_session_scan(s, t, INT64_MIN, INT64_MAX, c.res, longchk_fn, &c, &err);
		/* every op >= the resolution, plus the 6 steps while they are that long */
		size_t want = nlong[k] + (c.res <= 150000000LL ? 6 : 0);
		if (c.bad || c.seen_long != want || c.count != n) {
			printf("# resolution %lld: %zu long alone (want %zu), count %llu of %llu\n",
			       (long long)c.res, c.seen_long, want, (unsigned long long)c.count,
			       (unsigned long long)n);
			bad++;
		}
		collect_reset(&col);
		tft_session_scan(s, t, INT64_MIN, INT64_MAX, c.res, collect_fn, &col, &err);
		size_t steps = 0;
		for (size_t i = 0; i < col.n; i++)
			if (col.ev[i].ev.depth == 0 && col.ev[i].ev.dur_ns == 150000000LL &&
			    col.ev[i].ev.count == 1 &&
			    col.ev[i].ev.name == step_name[col.ev[i].ev.ts_ns / 150000000LL])
				steps++;
		if (c.res <= 150000000LL && steps != 6)
			bad_steps++;
		free(col.ev);
	}
	is_int(bad, 0, "lod long: at every resolution, slices at least that long come back alone");
	{
		sqlite3 *db;
		sqlite3_stmt *st;
		int nlev = 0;
		sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL);
		sqlite3_prepare_v2(db, "SELECT count(*) FROM lod WHERE level > 0", -1, &st, NULL);
		if (sqlite3_step(st) == SQLITE_ROW)
			nlev = sqlite3_column_int(st, 0);
		sqlite3_finalize(st);
		sqlite3_close(db);
		ok(nlev >= 2, "lod long: %d LOD levels stored (%llu events)", nlev, (unsigned long long)n);
	}
	is_int(bad_steps, 0, "lod long: the six 150 ms steps stay six (own names) up to 150 ms resolution");
	tft_session_close(s);
}

/*
 * Levels predicted to be dropped are not encoded while appending; one that
 * the final counts keep after all is rebuilt at close. The session must be
 * the same as one written without prediction (live mode never predicts).
 */
struct evlist {
	struct tft_event ev[4096];
	size_t n;
};

static int list_fn(void *ctx, const struct tft_event *ev)
{
	struct evlist *l = ctx;

	if (l->n < 4096)
		l->ev[l->n] = *ev;
	l->n++;
	return 0;
}

static void test_lod_rebuild(void)
{
	const char *paths[2] = { tpath("skip.tft"), tpath("noskip.tft") };
	struct tft_error err;
	struct evlist *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	int bad = 0, nlev[2] = { 0, 0 };

	for (int v = 0; v < 2; v++) {
		struct tft_writer_opts o = { .flush_partial = v };
		struct tft_writer *w = tft_writer_open(paths[v], &o, &err);
		int64_t ts = 0;
		if (!w)
			return;
		tft_writer_add_process(w, &(struct tft_process){ .rank = -1 });
		uint32_t t = tft_writer_add_track(w, &(struct tft_track){ .kind = TFT_TRACK_GPU_STREAM });
		uint32_t kn[3] = { tft_writer_intern_cstr(w, "k0"), tft_writer_intern_cstr(w, "k1"),
				   tft_writer_intern_cstr(w, "k2") };
		int nbad = 0;
		/* 20000 sparse kernels (level 1 = every kernel: predicted dropped), then
		 * 100000 dense ones (level 1 ends far below half: kept after all). */
		for (int i = 0; i < 120000; i++) {
			struct tft_event e = { .track = t, .ts_ns = ts, .dur_ns = 500 + i % 300, .count = 1,
					       .name = kn[i % 3] };
			nbad += tft_writer_append(w, &e) != 0;
			ts += e.dur_ns + (i < 20000 ? 3000 : 100);
			if (i % 30000 == 29999) /* live: partial chunks; batch: staged LOD survives commits */
				nbad += tft_writer_commit(w, &err) != 0;
		}
		is_int(nbad, 0, "lod rebuild: appends");
		tft_writer_close(w, &err);
	}
	struct tft_session *s0 = tft_session_open(paths[0], &err), *s1 = tft_session_open(paths[1], &err);
	if (!ok(s0 && s1, "lod rebuild: both sessions open"))
		return;
	for (int k = 0; k <= 13; k++) {
		int64_t res = k ? (int64_t)1000 << (2 * (k - 1)) : 0;
		a->n = b->n = 0;
		tft_session_scan(s0, 0, INT64_MIN, INT64_MAX, res, list_fn, a, &err);
		tft_session_scan(s1, 0, INT64_MIN, INT64_MAX, res, list_fn, b, &err);
		if (a->n != b->n) {
			bad++;
			printf("# resolution %lld: %zu vs %zu events\n", (long long)res, a->n, b->n);
			continue;
		}
		for (size_t i = 0; i < a->n && i < 4096; i++)
			bad += !ev_eq(&a->ev[i], &b->ev[i], 1);
	}
	is_int(bad, 0, "lod rebuild: every resolution answers the same with and without prediction");
	for (int v = 0; v < 2; v++) {
		sqlite3 *db;
		sqlite3_stmt *st;
		sqlite3_open_v2(paths[v], &db, SQLITE_OPEN_READONLY, NULL);
		sqlite3_prepare_v2(db, "SELECT count(*) FROM lod WHERE level = 1", -1, &st, NULL);
		if (sqlite3_step(st) == SQLITE_ROW)
			nlev[v] = sqlite3_column_int(st, 0);
		sqlite3_finalize(st);
		sqlite3_close(db);
	}
	ok(nlev[0] == 1 && nlev[1] == 1, "lod rebuild: level 1 kept in both (%d, %d)", nlev[0], nlev[1]);
	tft_session_close(s0);
	tft_session_close(s1);
	free(a);
	free(b);
}

/*
 * A bulk import holds a track's raw events back from the LOD builder until it
 * has the raw events a kept level needs (TFT_LOD_MIN_RAW_EVENTS), drops them
 * if it never gets there (no summary is built), and gives them to the builder
 * when it does, or when the open chunks' memory budget is reached. Live mode
 * builds summaries as events come. Both sessions must answer the same at every
 * resolution: tracks just under, at and over the threshold, alone (the held-
 * back events are built when the threshold is crossed) and among enough
 * interleaved tracks that the held-back events pass the budget (48 MB).
 */
enum { HB_LONG = 5, HB_SHORT = 420 };

static void held_back_write(const char *path, int live, uint32_t nshort)
{
	static const uint32_t long_n[HB_LONG] = { TFT_LOD_MIN_RAW_EVENTS - 1, TFT_LOD_MIN_RAW_EVENTS,
						  TFT_LOD_MIN_RAW_EVENTS + 1, 9000, 40000 };
	struct tft_writer_opts o = { .flush_partial = live };
	struct tft_error err;
	struct tft_writer *w = tft_writer_open(path, &o, &err);
	uint32_t name[4];
	int64_t ts = 0;
	int nbad = 0;

	if (!w)
		return;
	tft_writer_add_process(w, &(struct tft_process){ .rank = -1 });
	for (uint32_t i = 0; i < HB_LONG + nshort; i++)
		tft_writer_add_track(w, &(struct tft_track){ .kind = TFT_TRACK_THREAD });
	for (int i = 0; i < 4; i++) {
		char nm[16];
		snprintf(nm, sizeof(nm), "op%d", i);
		name[i] = tft_writer_intern_cstr(w, nm);
	}
	/*
	 * Round robin over the tracks (as a time-sorted import sees them). The
	 * long tracks have bursts of 8 slices 100 ns apart, 50 us between bursts:
	 * level 1 merges each burst and is kept as encoded (never predicted
	 * away), so its held-back part must be there. The short ones are sparse:
	 * most levels keep most events, and their held-back summaries outnumber
	 * the raw ones.
	 */
	for (uint32_t i = 0; i < 40000; i++) {
		for (uint32_t t = 0; t < HB_LONG + nshort; t++) {
			uint32_t want = t < HB_LONG ? long_n[t] : 3000 + t % 7;
			if (i >= want)
				continue;
			struct tft_event e = { .track = t, .count = 1, .name = name[(i + t) % 4] };
			if (t < HB_LONG) {
				e.ts_ns = (int64_t)(i / 8) * 50000 + (int64_t)(i % 8) * 400 + (int64_t)t * 3;
				e.dur_ns = 300;
			} else {
				e.ts_ns = ts + (int64_t)t * 7;
				e.dur_ns = 300 + (int64_t)((i * 7 + t) % 900);
			}
			nbad += tft_writer_append(w, &e) != 0;
		}
		ts += 40000 + (int64_t)(i % 5) * 20000;
	}
	is_int(nbad, 0, "held-back lod: appends");
	is_int(tft_writer_close(w, &err), 0, "held-back lod: close");
}

/* One checksum of a query's integer rows. */
static uint64_t held_back_sum(const char *path, const char *sql)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	uint64_t r = 0;

	sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL);
	sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	while (sqlite3_step(st) == SQLITE_ROW)
		for (int i = 0; i < sqlite3_column_count(st); i++)
			r = r * 1000003 + (uint64_t)sqlite3_column_int64(st, i);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return r;
}

static void test_lod_held_back(void)
{
	struct evlist *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));

	for (int pressure = 0; pressure < 2; pressure++) {
		const char *p0 = tpath(pressure ? "held_p.tft" : "held.tft");
		const char *p1 = tpath(pressure ? "held_p_live.tft" : "held_live.tft");
		uint32_t nshort = pressure ? HB_SHORT : 0;
		struct tft_error err;
		uint64_t l0, l1;
		int bad = 0;

		held_back_write(p0, 0, nshort);
		held_back_write(p1, 1, nshort);
		struct tft_session *s0 = tft_session_open(p0, &err), *s1 = tft_session_open(p1, &err);
		if (!ok(s0 && s1, "held-back lod: both sessions open"))
			break;
		for (uint32_t t = 0; t < HB_LONG + nshort; t += t < HB_LONG ? 1 : 37) {
			for (int k = 0; k <= 13; k++) {
				int64_t res = k ? tft_lod_gap_ns(k) : 0;
				a->n = b->n = 0;
				tft_session_scan(s0, t, INT64_MIN, INT64_MAX, res, list_fn, a, &err);
				tft_session_scan(s1, t, INT64_MIN, INT64_MAX, res, list_fn, b, &err);
				if (a->n != b->n) {
					bad++;
					printf("# track %u resolution %lld: %zu vs %zu events\n", t, (long long)res,
					       a->n, b->n);
					continue;
				}
				for (size_t i = 0; i < a->n && i < 4096; i++)
					bad += !ev_eq(&a->ev[i], &b->ev[i], 1);
			}
		}
		is_int(bad, 0, pressure ? "held-back lod, over the memory budget: every resolution as live mode"
					: "held-back lod: every resolution answers as live mode (no holding back)");
		l0 = held_back_sum(p0, "SELECT track, level, n FROM lod WHERE level > 0 ORDER BY track, level");
		l1 = held_back_sum(p1, "SELECT track, level, n FROM lod WHERE level > 0 ORDER BY track, level");
		ok(l0 == l1 && held_back_sum(p0, "SELECT count(*) FROM lod WHERE level = 1") == 4,
		   pressure ? "held-back lod, over the memory budget: the same levels kept (level 1 on 4 tracks)"
			    : "held-back lod: the same levels kept (level 1 on 4 tracks)");
		if (!pressure) {
			/* Not committed, so live mode also fills each level's chunks in order:
			 * the held-back part's summaries went first into the same chunks. */
			static const char *q = "SELECT track, level, t_min, t_max, n FROM chunks WHERE level > 0"
					       " ORDER BY track, level, t_min, t_max";
			ok(held_back_sum(p0, q) == held_back_sum(p1, q),
			   "held-back lod: the same summary chunks (time ranges, counts) as live mode");
		}
		tft_session_close(s0);
		tft_session_close(s1);
	}
	free(a);
	free(b);
}

/* ---- strings (loaded on demand) and the chunk cache ---------------------------- */

static void test_strings_lazy(void)
{
	enum { NS = 5000 };
	const char *path = tpath("strs.tft");
	struct tft_error err;
	struct tft_writer *w = tft_writer_open(path, NULL, &err);
	struct tft_session *s;
	static const char *ptr[NS + 3];
	uint32_t ids[NS + 3], big_id, nul_id;
	char buf[64];
	char *big = malloc((3u << 20) + 1);
	int bad = 0;

	if (!ok(w != NULL, "strings: writer open"))
		return;
	tft_writer_add_process(w, &(struct tft_process){ .rank = -1 });
	uint32_t t = tft_writer_add_track(w, &(struct tft_track){ .kind = TFT_TRACK_THREAD });
	for (int i = 0; i < NS; i++) {
		snprintf(buf, sizeof(buf), "op_%d", i);
		ids[i] = tft_writer_intern_cstr(w, buf);
		tft_writer_append(w, &(struct tft_event){ .track = t, .ts_ns = i, .name = ids[i], .count = 1 });
	}
	memset(big, 'b', 3u << 20); /* longer than an arena block */
	big[3u << 20] = 0;
	big_id = tft_writer_intern(w, big, 3u << 20);
	nul_id = tft_writer_intern(w, "a\0b", 3);
	is_int(tft_writer_close(w, &err), 0, "strings: close");
	s = tft_session_open(path, &err);
	if (!ok(s != NULL, "strings: reopen"))
		return;
	/* random order, twice: same content, same pointer */
	for (int pass = 0; pass < 2; pass++)
		for (int k = 0; k < NS; k++) {
			int i = (int)(rnd() % NS);
			const char *p = tft_session_str(s, ids[i], NULL);
			snprintf(buf, sizeof(buf), "op_%d", i);
			if (strcmp(p, buf) != 0 || (ptr[i] && ptr[i] != p))
				bad++;
			ptr[i] = p;
		}
	is_int(bad, 0, "strings: loaded on demand, stable pointers, right content");
	size_t len = 0;
	const char *p = tft_session_str(s, big_id, &len);
	ok(len == 3u << 20 && p[0] == 'b' && p[len - 1] == 'b' && p[len] == 0, "strings: a 3 MiB string");
	p = tft_session_str(s, nul_id, &len);
	ok(len == 3 && memcmp(p, "a\0b", 3) == 0, "strings: embedded NUL kept");
	p = tft_session_str(s, nul_id + 1, &len);
	ok(*p == 0 && len == 0, "strings: unknown id is \"\"");
	p = tft_session_str(s, UINT32_MAX, &len);
	ok(*p == 0 && len == 0, "strings: UINT32_MAX is \"\"");
	tft_session_close(s);

	/* damaged tables */
	const char *dp = tpath("strs-bad.tft");
	copy_file(path, dp, -1);
	sql_exec(dp, "DELETE FROM strings WHERE id BETWEEN 2000 AND 2100");
	s = tft_session_open(dp, &err);
	ok(s != NULL, "strings: a gap in the table still opens");
	if (s) {
		ok(*tft_session_str(s, 2050, NULL) == 0 && strcmp(tft_session_str(s, 1999, NULL), "op_1998") == 0,
		   "strings: missing rows read as \"\", the others are fine");
		tft_session_close(s);
	}
	unlink(dp);
	copy_file(path, dp, -1);
	sql_exec(dp, "DELETE FROM strings WHERE id = 0");
	tft_error_clear(&err);
	s = tft_session_open(dp, &err);
	ok(!s && err.code == TFT_EFORMAT, "strings: no id 0 is TFT_EFORMAT (%s)", err.msg);
	tft_session_close(s);
	unlink(dp);
	copy_file(path, dp, -1);
	sql_exec(dp, "INSERT INTO strings(id, s) VALUES(4000000000, 'far')");
	tft_error_clear(&err);
	s = tft_session_open(dp, &err);
	ok(!s && err.code == TFT_EFORMAT, "strings: ids far beyond the file size are TFT_EFORMAT (%s)", err.msg);
	tft_session_close(s);
	free(big);
}

struct cache_ctx {
	struct tft_session *s;
	uint32_t ntracks, nested_every;
	uint64_t sum, n, nested;
	int depth;
};

static int cache_fn(void *vctx, const struct tft_event *ev)
{
	struct cache_ctx *c = vctx;

	c->sum = c->sum * 31 + (uint64_t)ev->ts_ns * 7 + (uint64_t)ev->dur_ns + ev->name + ev->depth +
		 ev->count;
	c->n++;
	/* scan another track from inside the callback: the running chunk is pinned */
	if (c->nested_every && c->depth == 0 && c->n % c->nested_every == 0) {
		struct tft_error err;
		c->depth++;
		tft_session_scan(c->s, (ev->track + 1 + (uint32_t)(c->n % 5)) % c->ntracks,
				 ev->ts_ns - 200000, ev->ts_ns + 200000, (c->n / 3) % 2 ? 0 : 5000, cache_fn, c,
				 &err);
		c->depth--;
		c->nested++;
	}
	return 0;
}

static void test_cache(void)
{
	enum { NT = 24, NE = 12000 };
	const char *path = tpath("cache.tft");
	struct tft_writer_opts o = { .chunk_events = 256 };
	struct tft_error err;
	struct tft_writer *w = tft_writer_open(path, &o, &err);
	static const size_t budgets[] = { 0, 1, 100000, 4u << 20 };
	uint64_t ref_sum = 0, ref_n = 0;
	int bad = 0;

	if (!ok(w != NULL, "cache: writer open"))
		return;
	tft_writer_add_process(w, &(struct tft_process){ .rank = -1 });
	for (int t = 0; t < NT; t++)
		tft_writer_add_track(w, &(struct tft_track){ .kind = TFT_TRACK_GPU_STREAM });
	uint32_t nm = tft_writer_intern_cstr(w, "k");
	for (int t = 0; t < NT; t++) {
		int64_t ts = t * 1000;
		for (int i = 0; i < NE; i++) {
			struct tft_event e = { .track = (uint32_t)t, .ts_ns = ts, .dur_ns = 100 + (int64_t)(rnd() % 3000),
					       .name = nm, .count = 1 };
			tft_writer_append(w, &e);
			ts += e.dur_ns + (int64_t)(rnd() % 2000);
		}
	}
	is_int(tft_writer_close(w, &err), 0, "cache: close");
	for (size_t b = 0; b < sizeof(budgets) / sizeof(budgets[0]); b++) {
		struct tft_session *s = tft_session_open(path, &err);
		struct cache_ctx c = { .s = s, .ntracks = NT, .nested_every = 97 };
		uint64_t r = 0x1234567;
		if (!s)
			return;
		tft_session_set_cache_bytes(s, budgets[b]);
		/* viewports over every track (many chunks each: some scans stream), panned */
		for (int v = 0; v < 60; v++) {
			r = r * 6364136223846793005ULL + 1442695040888963407ULL;
			int64_t t0 = (int64_t)(r >> 40) % 20000000, width = v % 3 == 0 ? 20000000 : 300000;
			for (uint32_t t = 0; t < NT; t++)
				tft_session_scan(s, t, t0, t0 + width, v % 2 ? 0 : 4000, cache_fn, &c, &err);
		}
		if (b == 0) {
			ref_sum = c.sum;
			ref_n = c.n;
		} else if (c.sum != ref_sum || c.n != ref_n) {
			printf("# budget %zu: %llu events, want %llu\n", budgets[b], (unsigned long long)c.n,
			       (unsigned long long)ref_n);
			bad++;
		}
		if (b == 0)
			ok(c.nested > 100 && c.n > 100000, "cache: %llu events, %llu nested scans",
			   (unsigned long long)c.n, (unsigned long long)c.nested);
		tft_session_close(s);
	}
	is_int(bad, 0, "cache: same answers whatever the budget (1 B .. 64 MiB), nested scans included");
}

/* ---- errors ------------------------------------------------------------------------ */

static int copy_file(const char *from, const char *to, long truncate_to)
{
	FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
	char buf[65536];
	size_t r;
	long total = 0;

	if (!a || !b)
		return -1;
	while ((r = fread(buf, 1, sizeof(buf), a)) > 0) {
		if (truncate_to >= 0 && total + (long)r > truncate_to)
			r = (size_t)(truncate_to - total);
		fwrite(buf, 1, r, b);
		total += (long)r;
		if (truncate_to >= 0 && total >= truncate_to)
			break;
	}
	fclose(a);
	fclose(b);
	return 0;
}

static int count_fn(void *ctx, const struct tft_event *ev)
{
	(void)ev;
	++*(uint64_t *)ctx;
	return 0;
}

static void sql_exec(const char *path, const char *sql)
{
	sqlite3 *db;

	sqlite3_open(path, &db);
	sqlite3_exec(db, sql, NULL, NULL, NULL);
	sqlite3_close(db);
}

static void test_errors(void)
{
	struct tft_error err;
	struct tft_session *s;
	uint64_t cnt = 0;
	char corrupt[512], newer[512];

	snprintf(corrupt, sizeof(corrupt), "%s", tpath("corrupt.tft"));
	snprintf(newer, sizeof(newer), "%s", tpath("newer.tft"));

	/* Corrupt blob. */
	copy_file(tpath("rt.tft"), corrupt, -1);
	sql_exec(corrupt, "UPDATE chunks SET data = X'28b52ffd2000' || randomblob(40) WHERE id = "
			  "(SELECT min(id) FROM chunks WHERE track = 3 AND level = 0)");
	tft_error_clear(&err);
	s = tft_session_open(corrupt, &err);
	ok(s != NULL, "corrupt: opens (the directory is fine)");
	if (s) {
		tft_error_clear(&err);
		int rc = tft_session_scan(s, 3, INT64_MIN, INT64_MAX, 0, count_fn, &cnt, &err);
		is_int(rc, TFT_EFORMAT, "corrupt: scan gives TFT_EFORMAT");
		ok(strstr(err.msg, "chunk ") != NULL, "corrupt: message names the chunk (%s)", err.msg);
		/* Another track still reads fine. */
		cnt = 0;
		tft_error_clear(&err);
		ok(tft_session_scan(s, 0, INT64_MIN, INT64_MAX, 0, count_fn, &cnt, &err) == 0 && cnt == 10,
		   "corrupt: other tracks unaffected");
		tft_session_close(s);
	}
	/* A valid blob whose names point outside the string table. */
	snprintf(corrupt, sizeof(corrupt), "%s", tpath("corrupt2.tft"));
	copy_file(tpath("rt.tft"), corrupt, -1);
	sql_exec(corrupt, "DELETE FROM strings WHERE id > 5");
	tft_error_clear(&err);
	s = tft_session_open(corrupt, &err);
	if (s) {
		tft_error_clear(&err);
		int rc = tft_session_scan(s, 3, INT64_MIN, INT64_MAX, 0, count_fn, &cnt, &err);
		is_int(rc, TFT_EFORMAT, "corrupt: string id out of range is TFT_EFORMAT");
		tft_session_close(s);
	} else {
		ok(err.code == TFT_EFORMAT, "corrupt: string id out of range is TFT_EFORMAT (at open)");
	}
	/* A version-1 session (before tracks.flags) opens, its tracks without flags. */
	copy_file(tpath("rt.tft"), newer, -1);
	sql_exec(newer, "UPDATE tracks SET flags = 3");
	sql_exec(newer, "ALTER TABLE tracks DROP COLUMN flags");
	sql_exec(newer, "UPDATE meta SET value = 1 WHERE key = 'schema_version'");
	tft_error_clear(&err);
	s = tft_session_open(newer, &err);
	ok(s && tft_session_track_count(s) > 0 && tft_session_track(s, 0)->flags == 0,
	   "schema version 1: opens, tracks without flags (%s)", err.msg);
	tft_session_close(s);
	unlink(newer);
	/* Newer schema. */
	copy_file(tpath("rt.tft"), newer, -1);
	{
		char sql[96];
		snprintf(sql, sizeof(sql), "UPDATE meta SET value = %d WHERE key = 'schema_version'",
			 TFT_SCHEMA_VERSION + 1);
		sql_exec(newer, sql);
	}
	tft_error_clear(&err);
	s = tft_session_open(newer, &err);
	ok(s == NULL && err.code == TFT_EVERSION, "newer schema_version: TFT_EVERSION (%s)", err.msg);
	tft_session_close(s);
	/* Not a session. */
	sql_exec(tpath("other.db"), "CREATE TABLE x(y)");
	tft_error_clear(&err);
	s = tft_session_open(tpath("other.db"), &err);
	ok(s == NULL && err.code == TFT_EFORMAT, "not a session: TFT_EFORMAT (%s)", err.msg);
	tft_error_clear(&err);
	s = tft_session_open(tpath("nonexistent.tft"), &err);
	ok(s == NULL && err.code == TFT_ENOTFOUND, "missing file: TFT_ENOTFOUND");
	/* Truncations at many sizes: errors, never a crash. */
	{
		FILE *f = fopen(tpath("rt.tft"), "rb");
		long size;
		int errors = 0, opened = 0;
		fseek(f, 0, SEEK_END);
		size = ftell(f);
		fclose(f);
		for (int i = 0; i < 12; i++) {
			long cut = i == 0 ? 0 : i == 1 ? 100 : size * i / 12;
			const char *tp = tpath("trunc.tft");
			unlink(tp);
			copy_file(tpath("rt.tft"), tp, cut);
			tft_error_clear(&err);
			s = tft_session_open(tp, &err);
			if (!s) {
				errors += err.code != 0;
				continue;
			}
			opened++;
			for (uint32_t t = 0; t < tft_session_track_count(s); t++) {
				tft_error_clear(&err);
				tft_session_scan(s, t, INT64_MIN, INT64_MAX, 0, count_fn, &cnt, &err);
			}
			tft_session_close(s);
		}
		ok(errors + opened == 12 && errors >= 1, "truncated files: errors, no crash (%d refused)", errors);
	}
	/* A writer on an unwritable path. */
	tft_error_clear(&err);
	ok(tft_writer_open("/nonexistent-dir/x.tft", NULL, &err) == NULL && err.code == TFT_EIO,
	   "writer: unwritable path is TFT_EIO");
}

/* ---- the write-combining VFS ------------------------------------------------ */

#define WCM_SPAN (3 << 20) /* the model's file: the ops stay below this */

/*
 * Random writes (block-aligned pages mostly; unaligned ones, ones larger than
 * the window, which SQLite never makes), reads (inside, across and outside what the window holds, past
 * the end), sizes, truncations, syncs and locks on a file of the VFS, each
 * checked against a model of the file; then the file on disk against it.
 */
static int wc_model(const char *path, int flags)
{
	sqlite3_vfs *v = sqlite3_vfs_find(TFT_WC_VFS_NAME);
	sqlite3_file *f = v ? calloc(1, (size_t)v->szOsFile) : NULL;
	unsigned char *model = calloc(1, WCM_SPAN + (2 << 20));
	unsigned char *tmp = malloc(2 << 20);
	sqlite3_filename name = sqlite3_create_filename(path, "", "", 0, NULL);
	sqlite3_int64 size = 0, got, near = 0;
	int out_flags, bad = 0, open = 0;

	unlink(path);
	if (!f || !model || !tmp || !name)
		goto out;
	if (v->xOpen(v, name, f, flags | SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, &out_flags) !=
	    SQLITE_OK)
		goto out;
	open = 1;
	rng = 0x5eedULL;
	{
		/*
		 * First, writes at the window's ends (it starts TFT_WC_VFS_BUF_BYTES / 16
		 * before the write that opens it): a page before its start, its first and
		 * last pages written, then writes across each end over them.
		 */
		const sqlite3_int64 x = 1 << 20, lead = TFT_WC_VFS_BUF_BYTES / 16;
		const sqlite3_int64 end = x - lead + TFT_WC_VFS_BUF_BYTES;
		const struct { sqlite3_int64 off; int amt; } dw[] = {
			{x, 4096}, {end - 4096, 4096}, {end - 4096, 8192}, {x, 4096},
			{x - 4096, 4096}, {x - lead, 4096}, {x - lead - 4096, 8192},
			{x, 4096}, {end - 8192, 4096}, {end - 4096, 4096}, {end, 4096},
			{end - 8192, 12288}, {x, 4096}, {x - lead, 8192}, {x - lead - 4096, 12288},
		};
		for (size_t k = 0; k < sizeof(dw) / sizeof(dw[0]); k++) {
			for (int j = 0; j < dw[k].amt; j++)
				tmp[j] = (unsigned char)rnd();
			bad |= f->pMethods->xWrite(f, tmp, dw[k].amt, dw[k].off) != SQLITE_OK;
			memcpy(model + dw[k].off, tmp, (size_t)dw[k].amt);
			if (dw[k].off + dw[k].amt > size)
				size = dw[k].off + dw[k].amt;
		}
		/* Read back (from the window and the file) before anything writes it out. */
		for (size_t k = 0; k < sizeof(dw) / sizeof(dw[0]) && !bad; k++) {
			int rc = f->pMethods->xRead(f, tmp, dw[k].amt, dw[k].off);
			bad |= rc != SQLITE_OK || memcmp(tmp, model + dw[k].off, (size_t)dw[k].amt) != 0;
		}
		if (bad)
			printf("# the writes at the window's ends\n");
	}
	for (int i = 0; i < 20000 && !bad; i++) {
		int op = (int)(rnd() % 100), amt, rc;
		sqlite3_int64 off;

		if (op < 55) { /* write */
			if (rnd() % 50 == 0) /* the window writes it in pieces; the base VFS cannot */
				amt = flags & SQLITE_OPEN_MAIN_DB ? (1 << 20) + 4096 * (int)(rnd() % 64) : 65536;
			else if (rnd() % 5 == 0)
				amt = 1 + (int)(rnd() % 9000);
			else
				amt = 4096 * (1 + (int)(rnd() % (rnd() % 4 ? 4 : 16)));
			/* Mostly near one place (1.5 MB, moving now and then), so that a
			 * window fills and writes cross its ends. */
			if (i % 500 == 0)
				near = (sqlite3_int64)(rnd() % (WCM_SPAN / 4096 / 2)) * 4096;
			off = rnd() % 8 ? near + (sqlite3_int64)(rnd() % 384) * 4096
					: (sqlite3_int64)(rnd() % (WCM_SPAN / 4096)) * 4096;
			if (rnd() % 3 == 0 && size < WCM_SPAN) /* near the end: what SQLite does */
				off = size > 8192 ? size - 8192 + 4096 * (int)(rnd() % 3) : 0;
			if (amt % 4096 && rnd() % 2)
				off += (sqlite3_int64)(rnd() % 4096);
			for (int k = 0; k < amt; k++)
				tmp[k] = (unsigned char)rnd();
			rc = f->pMethods->xWrite(f, tmp, amt, off);
			bad |= rc != SQLITE_OK;
			memcpy(model + off, tmp, (size_t)amt);
			if (off + amt > size)
				size = off + amt;
		} else if (op < 90) { /* read */
			int want;
			amt = rnd() % 4 ? 4096 : 1 + (int)(rnd() % 20000);
			off = (sqlite3_int64)(rnd() % (WCM_SPAN + 65536));
			if (rnd() % 2)
				off -= off % 4096;
			if (rnd() % 3 == 0 && size > 4096) /* what was just written */
				off = size - 4096 * (1 + (sqlite3_int64)(rnd() % 8));
			if (off < 0)
				off = 0;
			rc = f->pMethods->xRead(f, tmp, amt, off);
			want = off + amt > size ? SQLITE_IOERR_SHORT_READ : SQLITE_OK;
			bad |= rc != want || memcmp(tmp, model + off, (size_t)amt) != 0;
			if (bad)
				printf("# op %d: read %d at %lld: rc %d (want %d)\n", i, amt, (long long)off, rc, want);
		} else if (op < 94) {
			bad |= f->pMethods->xFileSize(f, &got) != SQLITE_OK || got != size;
		} else if (op < 96) { /* truncate, shorter or longer */
			sqlite3_int64 to = (sqlite3_int64)(rnd() % (WCM_SPAN / 512)) * 512;
			bad |= f->pMethods->xTruncate(f, to) != SQLITE_OK;
			if (to < size)
				memset(model + to, 0, (size_t)(size - to));
			size = to;
		} else if (op < 98) {
			bad |= f->pMethods->xSync(f, SQLITE_SYNC_NORMAL) != SQLITE_OK;
		} else {
			bad |= f->pMethods->xLock(f, SQLITE_LOCK_SHARED) != SQLITE_OK ||
			       f->pMethods->xUnlock(f, SQLITE_LOCK_NONE) != SQLITE_OK;
		}
		if (bad)
			printf("# op %d (%d) failed, size %lld\n", i, op, (long long)size);
	}
	bad |= f->pMethods->xClose(f) != SQLITE_OK;
	open = 0;
	{ /* the file on disk is the model */
		FILE *fp = fopen(path, "rb");
		size_t n = fp ? fread(tmp, 1, 1, fp) : 0;
		struct stat st;
		(void)n;
		bad |= !fp || stat(path, &st) != 0 || st.st_size != size;
		if (fp) {
			unsigned char *disk = malloc((size_t)size + 1);
			rewind(fp);
			bad |= !disk || fread(disk, 1, (size_t)size, fp) != (size_t)size ||
			       memcmp(disk, model, (size_t)size) != 0;
			free(disk);
			fclose(fp);
		}
	}
out:
	if (open)
		f->pMethods->xClose(f);
	sqlite3_free_filename(name);
	free(f);
	free(model);
	free(tmp);
	unlink(path);
	return !bad && v && name;
}

/*
 * A fixed SQLite workload (inserts, deletes, updates, rollbacks, a cache of
 * 8 pages so pages are spilled and read back, auto_vacuum truncations) into
 * path through vfs (NULL: the default). Returns a digest of what it reads
 * back, 0 on failure.
 */
static uint64_t wc_workload(const char *path, const char *vfs, const char *journal)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *ins = NULL, *sum = NULL;
	unsigned char *blob = malloc(40000);
	char sql[300];
	uint64_t digest = 0;
	int bad = 0;

	unlink(path);
	if (!blob || sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, vfs) != SQLITE_OK)
		goto out;
	snprintf(sql, sizeof(sql),
		 "PRAGMA page_size=4096; PRAGMA auto_vacuum=FULL; PRAGMA journal_mode=%s;"
		 " PRAGMA synchronous=OFF; PRAGMA cache_size=8;"
		 " CREATE TABLE t(id INTEGER PRIMARY KEY, b BLOB)", journal);
	bad |= sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK;
	bad |= sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO t(id, b) VALUES(?, ?)", -1, &ins, NULL) != SQLITE_OK;
	bad |= sqlite3_prepare_v2(db, "SELECT id, b FROM t ORDER BY id", -1, &sum, NULL) != SQLITE_OK;
	rng = 0xab1eULL;
	for (int round = 0; round < 8 && !bad; round++) {
		int rollback = round == 5 && strcmp(journal, "OFF") != 0;
		bad |= sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK;
		for (int i = 0; i < 300 && !bad; i++) {
			int n = 1 + (int)(rnd() % (rnd() % 4 ? 3000 : 40000));
			for (int k = 0; k < n; k++)
				blob[k] = (unsigned char)rnd();
			sqlite3_bind_int64(ins, 1, (sqlite3_int64)(rnd() % 1500));
			sqlite3_bind_blob(ins, 2, blob, n, SQLITE_STATIC);
			bad |= sqlite3_step(ins) != SQLITE_DONE;
			sqlite3_reset(ins);
		}
		snprintf(sql, sizeof(sql), "DELETE FROM t WHERE id %% 5 = %d", round % 5);
		bad |= sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK;
		bad |= sqlite3_exec(db, rollback ? "ROLLBACK" : "COMMIT", NULL, NULL, NULL) != SQLITE_OK;
	}
	while (!bad && sqlite3_step(sum) == SQLITE_ROW) {
		const unsigned char *b = sqlite3_column_blob(sum, 1);
		int n = sqlite3_column_bytes(sum, 1);
		digest = digest * 1000003 + (uint64_t)sqlite3_column_int64(sum, 0);
		for (int k = 0; k < n; k++)
			digest = (digest ^ b[k]) * 0x100000001b3ULL;
	}
	sqlite3_finalize(sum);
	sum = NULL;
	if (!bad && sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &sum, NULL) == SQLITE_OK &&
	    sqlite3_step(sum) == SQLITE_ROW)
		bad |= strcmp((const char *)sqlite3_column_text(sum, 0), "ok") != 0;
	else
		bad = 1;
out:
	sqlite3_finalize(ins);
	sqlite3_finalize(sum);
	bad |= sqlite3_close(db) != SQLITE_OK;
	free(blob);
	return bad ? 0 : digest | 1;
}

static int files_same(const char *a, const char *b)
{
	FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
	int same = fa && fb, ca, cb;

	while (same) {
		ca = getc(fa);
		cb = getc(fb);
		same = ca == cb;
		if (ca == EOF)
			break;
	}
	if (fa)
		fclose(fa);
	if (fb)
		fclose(fb);
	return same;
}

static void test_wc_vfs(void)
{
	is_int(tft_wc_vfs_register(), 0, "wc vfs: registers");
	is_int(tft_wc_vfs_register(), 0, "wc vfs: registers again (once)");
	ok(sqlite3_vfs_find(NULL) != sqlite3_vfs_find(TFT_WC_VFS_NAME), "wc vfs: not the default");
	ok(wc_model(tpath("wcm.db"), SQLITE_OPEN_MAIN_DB), "wc vfs: a main database file is its model");
	ok(wc_model(tpath("wcm.db"), SQLITE_OPEN_TEMP_DB), "wc vfs: a temporary file (passed through) is its model");
	for (int j = 0; j < 2; j++) {
		const char *journal = j ? "DELETE" : "OFF";
		uint64_t d0 = wc_workload(tpath("wcw0.db"), NULL, journal);
		uint64_t d1 = wc_workload(tpath("wcw1.db"), TFT_WC_VFS_NAME, journal);
		ok(d0 && d1 == d0, "wc vfs: journal_mode=%s: the workload reads back the same", journal);
		ok(files_same(tpath("wcw0.db"), tpath("wcw1.db")),
		   "wc vfs: journal_mode=%s: the file is the default VFS's, byte for byte", journal);
	}
}

/* ---- failed writes ---------------------------------------------------------- */

/*
 * Writes a session of ~nev events; with limit > 0 in a child process whose
 * files may not grow past limit bytes (SIGXFSZ ignored: a write past it
 * fails with EFBIG or comes up short). Returns 0 if every call succeeded,
 * 1 if one reported an error, -1 if the child did not finish. Bulk mode
 * writes through the write-combining VFS, which holds up to 1 MB of pages
 * back: a write of them that fails must still fail the close.
 */
static int write_limited(const char *path, int bulk, int threads, int nev, long limit)
{
	pid_t pid;
	int status;

	unlink(path);
	fflush(stdout); /* (or the child prints it again) */
	pid = limit > 0 ? fork() : 0;
	if (pid < 0)
		return -1;
	if (pid == 0) {
		struct tft_writer_opts o = {.bulk = bulk, .threads = threads, .chunk_events = 1024};
		struct tft_error err;
		struct tft_writer *w;
		uint32_t tr[3];
		int64_t ts[3] = {0};
		int rc = 0;

		if (limit > 0) {
			struct rlimit rl = {.rlim_cur = (rlim_t)limit, .rlim_max = (rlim_t)limit};
			signal(SIGXFSZ, SIG_IGN);
			if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
				_exit(3);
		}
		tft_error_clear(&err);
		w = tft_writer_open(path, &o, &err);
		if (!w) {
			rc = 1;
			goto done;
		}
		for (int i = 0; i < 60; i++) {
			char b[16];
			snprintf(b, sizeof(b), "s%d", i);
			tft_writer_intern_cstr(w, b);
		}
		struct tft_process pr = {.name = 1, .rank = -1};
		uint32_t pid_ = tft_writer_add_process(w, &pr);
		for (int i = 0; i < 3; i++) {
			struct tft_track t = {.process = pid_, .name = (uint32_t)(1 + i), .tid = i,
					      .kind = TFT_TRACK_THREAD};
			tr[i] = tft_writer_add_track(w, &t);
		}
		rng = 0xfeedULL;
		for (int i = 0; i < nev && !rc; i++) {
			struct xev x;
			int k = i % 3;
			random_event(&x, &ts[k], 1);
			x.ev.track = tr[k];
			x.ev.kind = TFT_EV_INSTANT; /* no nesting to keep */
			x.ev.dur_ns = 0;
			x.ev.depth = 0;
			if (tft_writer_append(w, &x.ev) != 0)
				rc = 1;
		}
		if (rc) {
			tft_writer_abort(w);
			goto done;
		}
		tft_error_clear(&err);
		rc = tft_writer_close(w, &err) != 0;
	done:
		fflush(stdout);
		if (limit > 0)
			_exit(rc);
		return rc;
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) > 1)
		return -1;
	return WEXITSTATUS(status);
}

static void test_write_failure(void)
{
	const char *path = tpath("limited.tft");
	struct stat st;
	long size;
	const int nev = 200000;

	/* Reference: no limit. Its size says where the limits below cut. */
	is_int(write_limited(path, 1, 0, nev, 0), 0, "write failure: the session without a limit");
	size = stat(path, &st) == 0 ? (long)st.st_size : 0;
	ok(size > (2 << 20), "write failure: the session is larger than the page cache and the window (%ld bytes)",
	   size);
	if (size <= 0)
		return;
	is_int(write_limited(path, 1, 0, nev, size + (1 << 20)), 0,
	       "write failure: a limit above the session's size fails nothing");
	/*
	 * Cuts early (pages written while the events go in), near the end (the
	 * last pages go out at the final COMMIT) and everywhere between, with
	 * and without store workers; then the same with the default VFS (live
	 * mode: WAL, no window).
	 */
	for (int mode = 0; mode < 3; mode++) {
		int bulk = mode < 2, threads = mode == 1 ? 2 : 0, reported = 0, n = 0;
		long msize = size;

		/* Store workers and the live VFS lay the file out in their own way: the
		 * cut below its last page is measured on this mode's own file. */
		if (mode > 0 && write_limited(path, bulk, threads, nev, 0) == 0 && stat(path, &st) == 0)
			msize = (long)st.st_size;
		printf("# %s, %d threads: %ld bytes without a limit\n", bulk ? "bulk" : "live", threads, msize);
		for (long cut = 98304 + 1000; cut < msize; cut += msize / 7, n++) {
			int r = write_limited(path, bulk, threads, nev, cut);
			reported += r == 1;
			if (r != 1)
				printf("# %s, %d threads: the limit %ld bytes (of %ld) -> %d\n",
				       bulk ? "bulk" : "live", threads, cut, msize, r);
		}
		{
			/* only the final COMMIT's last page does not fit: a write cut short
			 * leaves a file of exactly `cut` bytes, not a whole number of pages */
			long cut = msize - 4096 + 512;
			int r = write_limited(path, bulk, threads, nev, cut);
			/* Store workers' page order varies from run to run: a file that came
			 * out a page smaller (whole pages) fits the limit, and nothing failed. */
			reported += r == 1 || (r == 0 && stat(path, &st) == 0 && st.st_size < cut && st.st_size % 4096 == 0);
			n++;
			if (r != 1)
				printf("# the limit %ld bytes (of %ld) -> %d (file %ld bytes)\n", cut, msize, r,
				       stat(path, &st) == 0 ? (long)st.st_size : -1L);
		}
		ok(reported == n, "write failure: %s mode, %d store threads: a file size limit fails the writer (%d of %d limits)",
		   bulk ? "bulk" : "live", threads, reported, n);
	}
	unlink(path);
}

/* ---- live mode and :memory: ----------------------------------------------- */

static void test_live(void)
{
	const char *path = tpath("live.tft");
	struct tft_writer_opts opts = { .flush_partial = 1 };
	struct tft_error err;
	struct tft_writer *w;
	struct tft_session *s;
	uint64_t cnt = 0;
	uint32_t t;

	tft_error_clear(&err);
	w = tft_writer_open(path, &opts, &err);
	if (!ok(w != NULL, "live: writer open"))
		return;
	tft_writer_add_process(w, &(struct tft_process){ .rank = -1 });
	t = tft_writer_add_track(w, &(struct tft_track){ .kind = TFT_TRACK_THREAD,
							  .name = tft_writer_intern_cstr(w, "T") });
	for (int i = 0; i < 100; i++)
		tft_writer_append(w, &(struct tft_event){ .track = t, .ts_ns = i * 10, .dur_ns = 5,
							  .name = tft_writer_intern_cstr(w, "early"), .count = 1 });
	is_int(tft_writer_commit(w, &err), 0, "live: commit");
	s = tft_session_open(path, &err);
	ok(s != NULL, "live: reader opens while the writer is open (%s)", err.msg);
	if (s) {
		tft_session_scan(s, t, INT64_MIN, INT64_MAX, 0, count_fn, &cnt, &err);
		is_int(cnt, 100, "live: committed events visible");
	}
	for (int i = 100; i < 250; i++)
		tft_writer_append(w, &(struct tft_event){ .track = t, .ts_ns = i * 10, .dur_ns = 5,
							  .name = tft_writer_intern_cstr(w, "late"), .count = 1 });
	uint32_t t2 = tft_writer_add_track(w, &(struct tft_track){ .kind = TFT_TRACK_THREAD });
	tft_writer_append(w, &(struct tft_event){ .track = t2, .ts_ns = 5, .count = 1 });
	is_int(tft_writer_commit(w, &err), 0, "live: second commit");
	if (s) {
		tft_error_clear(&err);
		is_int(tft_session_refresh(s, &err), 0, "live: refresh");
		cnt = 0;
		tft_session_scan(s, t, INT64_MIN, INT64_MAX, 0, count_fn, &cnt, &err);
		is_int(cnt, 250, "live: new events after refresh");
		is_int(tft_session_track_count(s), 2, "live: new track after refresh");
		struct collect c = { .sorted = 1 };
		tft_session_scan(s, t, 2400, 2402, 0, collect_fn, &c, &err);
		ok(c.n == 1 && strcmp(tft_session_str(s, c.ev[0].ev.name, NULL), "late") == 0,
		   "live: new strings after refresh");
		free(c.ev);
	}
	is_int(tft_writer_close(w, &err), 0, "live: close with a reader attached");
	if (s) {
		is_int(tft_session_refresh(s, &err), 0, "live: refresh after close");
		tft_session_close(s);
	}

	/* :memory: sessions work (fuzzers, tests). */
	tft_error_clear(&err);
	w = tft_writer_open(":memory:", NULL, &err);
	ok(w != NULL, "memory: writer opens");
	if (w) {
		tft_writer_add_process(w, &(struct tft_process){ .rank = -1 });
		t = tft_writer_add_track(w, &(struct tft_track){ .kind = TFT_TRACK_THREAD });
		for (int i = 0; i < 10000; i++)
			tft_writer_append(w, &(struct tft_event){ .track = t, .ts_ns = i, .count = 1 });
		is_int(tft_writer_close(w, &err), 0, "memory: close");
	}
	/* abort leaves the file as last committed */
	w = tft_writer_open(tpath("abort.tft"), NULL, &err);
	if (w) {
		tft_writer_add_process(w, &(struct tft_process){ .rank = -1 });
		tft_writer_commit(w, &err);
		tft_writer_add_track(w, &(struct tft_track){ .kind = TFT_TRACK_THREAD });
		tft_writer_abort(w);
		s = tft_session_open(tpath("abort.tft"), &err);
		ok(s && tft_session_process_count(s) == 1 && tft_session_track_count(s) == 0,
		   "abort: file as of the last commit");
		tft_session_close(s);
	}
}

/* ---- threaded writer ------------------------------------------------------------------ */

/* What the writer computed for a track: the same in two sessions? */
static int track_stats_eq(const struct tft_track *x, const struct tft_track *y)
{
	return x->slices == y->slices && x->instants == y->instants && x->counters == y->counters &&
	       x->max_depth == y->max_depth && x->sort_index == y->sort_index &&
	       x->min_ts_ns == y->min_ts_ns && x->max_ts_ns == y->max_ts_ns;
}

/* Write the same stream with `threads` store workers (threads < 0: none, and
 * track 3 is left open instead of ended); returns the path. */
static int ev_eq_text(struct tft_session *sa, const struct tft_event *a, struct tft_session *sb,
		      const struct tft_event *b);

/*
 * Track t of two sessions: the same raw events, then the same coarse view
 * served from the LOD levels. Events compare by string id, or by text where
 * the two sessions interned in another order (by_text; *other_ids counts the
 * events named by another id then).
 */
static int track_events_same(struct tft_session *s0, struct tft_session *s1, uint32_t t,
			     struct collect *a, struct collect *b, int by_text, size_t *other_ids)
{
	struct tft_error err;
	int same = 1;

	for (int64_t res = 0; same && res <= 1000000; res += 1000000) {
		collect_reset(a);
		collect_reset(b);
		same = tft_session_scan(s0, t, INT64_MIN, INT64_MAX, res, collect_fn, a, &err) == 0 &&
		       tft_session_scan(s1, t, INT64_MIN, INT64_MAX, res, collect_fn, b, &err) == 0 &&
		       a->n == b->n && a->n > 0;
		for (size_t i = 0; same && i < a->n; i++) {
			same = by_text ? ev_eq_text(s0, &a->ev[i].ev, s1, &b->ev[i].ev)
				       : ev_eq(&a->ev[i].ev, &b->ev[i].ev, 1);
			if (!same)
				printf("# track %u res %lld: event %zu differs\n", t, (long long)res, i);
			if (other_ids)
				*other_ids += a->ev[i].ev.name != b->ev[i].ev.name;
		}
		if (!same)
			printf("# track %u res %lld: %zu vs %zu events\n", t, (long long)res, a->n, b->n);
	}
	return same;
}

static const char *write_threaded(int threads)
{
	int end = threads >= 0;

	static char path[512];
	struct tft_writer_opts o = {.threads = threads, .chunk_events = 512, .bulk = threads == 3};
	struct tft_error err;
	struct tft_writer *w;
	int64_t ts[7] = {0};
	uint32_t tr[7];
	int bad = 0;

	snprintf(path, sizeof(path), "%s",
		 tpath(threads < 0 ? "thr0n.tft" : threads == 0 ? "thr0.tft" : threads == 1 ? "thr1.tft" : "thr3.tft"));
	if (threads < 0)
		o.threads = 0;
	w = tft_writer_open(path, &o, &err);
	if (!w)
		return NULL;
	for (int i = 0; i < 60; i++) {
		char b[16];
		snprintf(b, sizeof(b), "s%d", i);
		tft_writer_intern_cstr(w, b);
	}
	struct tft_process p = {.name = 1, .rank = -1};
	uint32_t pid = tft_writer_add_process(w, &p);
	for (int i = 0; i < 7; i++) {
		struct tft_track t = {.process = pid, .name = (uint32_t)(2 + i), .tid = i,
				      .kind = i == 5 ? TFT_TRACK_ASYNC : i == 6 ? TFT_TRACK_COUNTER : TFT_TRACK_THREAD};
		tr[i] = tft_writer_add_track(w, &t);
	}
	rng = 0x1234567ULL;
	for (int i = 0; i < 150000 && !bad; i++) {
		struct xev x;
		int k = (int)(rnd() % 7);
		random_event(&x, &ts[k], 1);
		x.ev.track = tr[k];
		if (k == 6) {
			x.ev.kind = TFT_EV_COUNTER;
			x.ev.dur_ns = 0;
		}
		if (k == 3 && i > 100000) { /* ended: refused, threads or not */
			bad |= end && tft_writer_append(w, &x.ev) != TFT_EINVAL;
			continue;
		}
		bad |= tft_writer_append(w, &x.ev) != 0;
		if (i == 100000 && end) /* its chunks and LOD written now, encoders freed */
			bad |= tft_writer_end_track(w, tr[3]) != 0 || tft_writer_end_track(w, tr[3]) != 0;
		if (i == 70000) {
			tft_writer_track(w, tr[2])->sort_index = 5; /* waits for the workers */
			bad |= tft_writer_commit(w, &err) != 0;
		}
		if (i % 4 == 0) { /* ~37k flows: full chunks go to a store worker */
			struct tft_flow f = {.src_track = tr[0], .dst_track = tr[1], .src_ts_ns = ts[0],
					     .dst_ts_ns = ts[1], .flow_id = (uint64_t)i, .name = 3};
			bad |= tft_writer_add_flow(w, &f) != 0;
		}
	}
	/* An out-of-order event is refused at once, threads or not. */
	{
		struct tft_event e = {.track = tr[0], .ts_ns = ts[0] - 1, .count = 1};
		bad |= tft_writer_append(w, &e) != TFT_EINVAL;
	}
	bad |= tft_writer_close(w, &err) != 0;
	return bad ? NULL : path;
}

static void test_threads(void)
{
	struct collect a = {0}, b = {0};
	struct tft_error err;
	char p0[512];
	const char *p;

	p = write_threaded(0);
	ok(p != NULL, "threads: write without workers");
	if (!p)
		return;
	snprintf(p0, sizeof(p0), "%s", p);
	for (int n = -1; n <= 3; n += 2) {
		struct tft_session *s0, *s1;
		int same = 1;
		p = write_threaded(n);
		ok(p != NULL, "threads: write with %d worker(s)%s", n < 0 ? 0 : n, n < 0 ? ", track 3 not ended" : "");
		if (!p)
			continue;
		s0 = tft_session_open(p0, &err);
		s1 = tft_session_open(p, &err);
		ok(s0 && s1, "threads: both sessions open");
		if (!s0 || !s1) {
			tft_session_close(s0);
			tft_session_close(s1);
			continue;
		}
		same = tft_session_track_count(s0) == tft_session_track_count(s1);
		for (uint32_t t = 0; same && t < tft_session_track_count(s0); t++)
			same = track_stats_eq(tft_session_track(s0, t), tft_session_track(s1, t)) &&
			       track_events_same(s0, s1, t, &a, &b, 0, NULL);
		{
			/* Flows: the same, in the same chunk order (full chunks went to worker 0). */
			struct flowlist f0 = {0}, f1 = {0};
			int fsame = tft_session_flows(s0, flowlist_fn, &f0, &err) == 0 &&
				    tft_session_flows(s1, flowlist_fn, &f1, &err) == 0 && f0.n == f1.n &&
				    f0.n > 30000;

			for (size_t i = 0; fsame && i < f0.n; i++) {
				const struct tft_flow *x = &f0.f[i], *y = &f1.f[i];

				fsame = x->flow_id == y->flow_id && x->src_track == y->src_track &&
					x->dst_track == y->dst_track && x->src_ts_ns == y->src_ts_ns &&
					x->dst_ts_ns == y->dst_ts_ns && x->name == y->name &&
					x->cat == y->cat && x->flags == y->flags;
			}

			ok(fsame, "threads: the same %zu flows in the same order", f0.n);
			free(f0.f);
			free(f1.f);
		}
		ok(same, "threads: %s",
		   n < 0 ? "a track ended early (tft_writer_end_track) stores what ending it at close stores" :
		   n == 1 ? "1 worker stores exactly what the caller's thread stores" :
			    "3 workers (bulk mode) store exactly what the caller's thread stores");
		is_int(tft_session_track(s1, 2)->sort_index, 5, "threads: track change after a sync kept");
		tft_session_close(s0);
		tft_session_close(s1);
	}
	free(a.ev);
	free(b.ev);
}

/* ---- writer lanes ------------------------------------------------------------------ */

/*
 * Lanes: the same per-track streams stored on one thread (tft_writer_append)
 * and through 2 or 3 lanes on their own threads, with and without store
 * workers. Tracks: 0 appended by the driving thread only (before the lanes
 * open and after they close: with workers, its batches are stored while the
 * lanes run); 1-6 by the lanes, where 3 is ended mid-way (later appends
 * refused), 4 is not ended by its lane (handed back at lane close, then
 * finished by the driving thread), 5 is async and 6 a counter track. Every
 * 4th event is named by a string interned on the appending thread, and a
 * string argument names a string every lane interns: ids then depend on how
 * the threads interleave, so sessions are compared by string text.
 */
enum { LN_TRACKS = 7, LN_EVENTS = 12000, LN_END3 = LN_EVENTS * 3 / 4, LN_HAND4 = LN_EVENTS * 2 / 3 };

static struct xev *lane_ev[LN_TRACKS]; /* the streams, generated once */

static void lane_streams(void)
{
	rng = 0x7a11e5ULL;
	for (int k = 0; k < LN_TRACKS; k++) {
		int64_t ts = 0;
		lane_ev[k] = malloc(LN_EVENTS * sizeof(*lane_ev[k]));
		for (int j = 0; j < LN_EVENTS; j++) {
			struct xev *x = &lane_ev[k][j];
			random_event(x, &ts, 1);
			if (k == 6) {
				x->ev.kind = TFT_EV_COUNTER;
				x->ev.dur_ns = 0;
			}
		}
	}
}

/* Event j of track k, its strings interned on the calling thread; *bad on a
 * string that does not read back (tft_writer_str while others intern). */
static void lane_event(struct tft_writer *w, uint32_t track, int k, int j, struct xev *out,
		       int *bad)
{
	char b[32];
	size_t len;
	const char *s;

	*out = lane_ev[k][j];
	out->ev.args = out->args;
	out->ev.track = track;
	if (j % 4 == 0) {
		snprintf(b, sizeof(b), "t%d-op%d", k, j); /* new: the table grows */
		out->ev.name = tft_writer_intern_cstr(w, b);
		s = tft_writer_str(w, out->ev.name, &len);
		*bad |= !s || len != strlen(b) || strcmp(s, b) != 0;
	}
	if (out->ev.nargs && (out->args[0].type == TFT_ARG_STR || out->args[0].type == TFT_ARG_JSON)) {
		snprintf(b, sizeof(b), "shared-%d", j % 997);
		out->args[0].v.str = tft_writer_intern_cstr(w, b);
		s = tft_writer_str(w, out->args[0].v.str, NULL);
		*bad |= !s || strcmp(s, b) != 0;
	}
}

/* How many events of track k a lane appends (track 4: the rest after close). */
static int lane_count(int k)
{
	return k == 4 ? LN_HAND4 : LN_EVENTS;
}

struct lane_job {
	struct tft_writer *w;
	struct tft_writer_lane *l;
	const uint32_t *tr;
	int idx, nlanes;
	int bad;       /* an unexpected status */
	int refused;   /* appends to track 3 after its end refused (TFT_EINVAL) */
	pthread_t thread;
};

/* A lane's thread: tracks 1-6 with (k - 1) % nlanes == idx, interleaved. */
static void *lane_main(void *arg)
{
	struct lane_job *jb = arg;
	struct xev x;

	for (int j = 0; j < LN_EVENTS; j++) {
		for (int k = 1; k < LN_TRACKS; k++) {
			if ((k - 1) % jb->nlanes != jb->idx || j >= lane_count(k))
				continue;
			lane_event(jb->w, jb->tr[k], k, j, &x, &jb->bad);
			if (k == 3 && j >= LN_END3) {
				jb->refused += tft_writer_lane_append(jb->l, &x.ev) == TFT_EINVAL;
				continue;
			}
			jb->bad |= tft_writer_lane_append(jb->l, &x.ev) != 0;
			if (k == 3 && j == LN_END3 - 1) /* ended twice: the second is a no-op */
				jb->bad |= tft_writer_lane_end_track(jb->l, jb->tr[3]) != 0 ||
					   tft_writer_lane_end_track(jb->l, jb->tr[3]) != 0;
		}
	}
	/* 4 is handed back; the others end here. */
	for (int k = 1; k < LN_TRACKS; k++)
		if ((k - 1) % jb->nlanes == jb->idx && k != 4 && k != 3)
			jb->bad |= tft_writer_lane_end_track(jb->l, jb->tr[k]) != 0;
	return NULL;
}

/*
 * Write the streams: nlanes = 0 on the calling thread only, else through
 * nlanes lanes; `threads` store workers. Returns the path or NULL (diagnosed).
 */
static const char *write_lanes(int nlanes, int threads)
{
	static char path[512];
	struct tft_writer_opts o = {.threads = threads, .chunk_events = 512};
	struct lane_job jb[3];
	struct tft_error err;
	struct tft_writer *w;
	uint32_t tr[LN_TRACKS];
	struct xev x;
	int bad = 0, refused = 0;
	char name[64];

	snprintf(name, sizeof(name), "lanes%d-thr%d.tft", nlanes, threads);
	snprintf(path, sizeof(path), "%s", tpath(name));
	w = tft_writer_open(path, &o, &err);
	if (!w) {
		printf("# open %s: %s\n", name, err.msg);
		return NULL;
	}
	for (int i = 0; i < 60; i++) {
		char b[16];
		snprintf(b, sizeof(b), "s%d", i);
		tft_writer_intern_cstr(w, b);
	}
	uint32_t pid = tft_writer_add_process(w, &(struct tft_process){ .name = 1, .rank = -1 });
	for (int k = 0; k < LN_TRACKS; k++) {
		struct tft_track t = {.process = pid, .name = (uint32_t)(2 + k), .tid = k,
				      .kind = k == 5 ? TFT_TRACK_ASYNC : k == 6 ? TFT_TRACK_COUNTER : TFT_TRACK_THREAD};
		tr[k] = tft_writer_add_track(w, &t);
	}
	/* Track 0, first half: queued to a worker that stores it while the lanes run. */
	for (int j = 0; j < LN_EVENTS / 2; j++) {
		lane_event(w, tr[0], 0, j, &x, &bad);
		bad |= tft_writer_append(w, &x.ev) != 0;
	}
	if (nlanes == 0) {
		for (int j = 0; j < LN_EVENTS; j++) {
			for (int k = 1; k < LN_TRACKS; k++) {
				lane_event(w, tr[k], k, j, &x, &bad);
				if (k == 3 && j >= LN_END3) {
					refused += tft_writer_append(w, &x.ev) == TFT_EINVAL;
					continue;
				}
				bad |= tft_writer_append(w, &x.ev) != 0;
				if (k == 3 && j == LN_END3 - 1)
					bad |= tft_writer_end_track(w, tr[3]) != 0;
			}
		}
		for (int k = 1; k < LN_TRACKS; k++)
			if (k != 4 && k != 3)
				bad |= tft_writer_end_track(w, tr[k]) != 0;
	} else {
		/* Open every lane first, then start the threads (writer.h). */
		for (int i = 0; i < nlanes; i++) {
			jb[i] = (struct lane_job){ .w = w, .l = tft_writer_lane_open(w), .tr = tr, .idx = i,
						   .nlanes = nlanes };
			bad |= jb[i].l == NULL;
		}
		if (bad) {
			printf("# %s: lane open failed\n", name);
			for (int i = 0; i < nlanes; i++)
				tft_writer_lane_close(jb[i].l);
			tft_writer_abort(w);
			return NULL;
		}
		for (int i = 0; i < nlanes; i++)
			if (pthread_create(&jb[i].thread, NULL, lane_main, &jb[i]))
				abort();
		/* The driving thread interns too while the lanes run. */
		for (int i = 0; i < 2000; i++) {
			char b[32];
			snprintf(b, sizeof(b), i & 1 ? "drv-%d" : "shared-%d", i & 1 ? i : i % 997);
			uint32_t id = tft_writer_intern_cstr(w, b);
			const char *s = tft_writer_str(w, id, NULL);
			bad |= !s || strcmp(s, b) != 0;
		}
		/* Each lane closed once its thread is joined, the later ones still running. */
		for (int i = 0; i < nlanes; i++) {
			pthread_join(jb[i].thread, NULL);
			bad |= jb[i].bad || tft_writer_lane_close(jb[i].l) != 0;
			if (jb[i].bad)
				printf("# %s: lane %d saw an unexpected status\n", name, i);
			refused += jb[i].refused;
		}
	}
	/* After the lanes: the rest of track 0 and of the handed-back track 4. */
	for (int j = LN_EVENTS / 2; j < LN_EVENTS; j++) {
		lane_event(w, tr[0], 0, j, &x, &bad);
		bad |= tft_writer_append(w, &x.ev) != 0;
	}
	if (nlanes) {
		for (int j = LN_HAND4; j < LN_EVENTS; j++) {
			lane_event(w, tr[4], 4, j, &x, &bad);
			bad |= tft_writer_append(w, &x.ev) != 0;
		}
	}
	{	/* out of order on the handed-back track: refused */
		struct tft_event e = lane_ev[4][LN_EVENTS - 1].ev;
		e.track = tr[4];
		e.nargs = 0;
		e.ts_ns--;
		bad |= tft_writer_append(w, &e) != TFT_EINVAL;
	}
	tft_writer_track(w, tr[2])->sort_index = 7;
	bad |= tft_writer_commit(w, &err) != 0;
	if (refused != LN_EVENTS - LN_END3) {
		printf("# %s: %d appends after the end of track 3 refused, want %d\n", name, refused,
		       LN_EVENTS - LN_END3);
		bad = 1;
	}
	if (tft_writer_close(w, &err) != 0) {
		printf("# %s: close: %s\n", name, err.msg);
		bad = 1;
	}
	return bad ? NULL : path;
}

/* a and b (from sessions sa and sb) equal, their strings compared by text. */
static int str_eq(struct tft_session *sa, uint32_t a, struct tft_session *sb, uint32_t b)
{
	size_t la, lb;
	const char *x = tft_session_str(sa, a, &la), *y = tft_session_str(sb, b, &lb);

	return la == lb && memcmp(x, y, la) == 0;
}

static int ev_eq_text(struct tft_session *sa, const struct tft_event *a, struct tft_session *sb,
		      const struct tft_event *b)
{
	if (a->ts_ns != b->ts_ns || a->dur_ns != b->dur_ns || a->count != b->count ||
	    a->kind != b->kind || a->flags != b->flags || a->nargs != b->nargs ||
	    a->depth != b->depth || memcmp(&a->value, &b->value, sizeof(double)) != 0 ||
	    !str_eq(sa, a->name, sb, b->name) || !str_eq(sa, a->cat, sb, b->cat))
		return 0;
	for (int i = 0; i < a->nargs && i < MAXA; i++) {
		const struct tft_arg *x = &a->args[i], *y = &b->args[i];
		if (x->type != y->type || !str_eq(sa, x->key, sb, y->key))
			return 0;
		if (x->type == TFT_ARG_STR || x->type == TFT_ARG_JSON) {
			if (!str_eq(sa, x->v.str, sb, y->v.str))
				return 0;
		} else if (!arg_eq(x, y)) {
			return 0;
		}
	}
	return 1;
}

/* Compare two sessions of ntracks tracks each, track by track: stats, kind, name, tid,
 * raw events and the LOD view, strings by their text. */
static int sessions_same(const char *p0, const char *p1, uint32_t ntracks)
{
	struct collect a = {0}, b = {0};
	struct tft_session *s0, *s1;
	struct tft_error err;
	size_t other_ids = 0; /* events named by another id (interning order) */
	int same;

	s0 = tft_session_open(p0, &err);
	s1 = tft_session_open(p1, &err);
	same = s0 && s1 && tft_session_track_count(s0) == tft_session_track_count(s1) &&
	       tft_session_track_count(s0) == ntracks;
	for (uint32_t t = 0; same && t < tft_session_track_count(s0); t++) {
		const struct tft_track *x = tft_session_track(s0, t), *y = tft_session_track(s1, t);
		same = track_stats_eq(x, y) && x->kind == y->kind && x->tid == y->tid &&
		       str_eq(s0, x->name, s1, y->name);
		if (!same)
			printf("# track %u: stats differ\n", t);
		same = same && track_events_same(s0, s1, t, &a, &b, 1, &other_ids);
	}
	if (same)
		printf("# %zu events named by another string id than on one thread\n", other_ids);
	if (s0)
		tft_session_close(s0);
	if (s1)
		tft_session_close(s1);
	free(a.ev);
	free(b.ev);
	return same;
}

static void *lane_claim_a(void *arg)
{
	struct lane_job *jb = arg;
	struct tft_event e = {.track = jb->tr[0], .ts_ns = 100, .count = 1};

	jb->bad = tft_writer_lane_append(jb->l, &e);
	return NULL;
}

/* The refusals, each leaving the track as it was. */
static void test_lane_refusals(void)
{
	const char *path = tpath("lanes-refuse.tft");
	struct tft_writer *w;
	struct tft_writer_lane *l1, *l2;
	struct tft_session *s;
	struct tft_error err;
	struct lane_job jb = {0};
	uint32_t tr[4], name;

	w = tft_writer_open(path, NULL, &err);
	if (!ok(w != NULL, "lanes: refusals: writer open"))
		return;
	name = tft_writer_intern_cstr(w, "op");
	tft_writer_add_process(w, &(struct tft_process){ .rank = -1 });
	for (int k = 0; k < 4; k++)
		tr[k] = tft_writer_add_track(w, &(struct tft_track){ .kind = TFT_TRACK_THREAD, .tid = k });
	/* 1: has events from tft_writer_append; 2: ended before the lanes. */
	is_int(tft_writer_append(w, &(struct tft_event){ .track = tr[1], .ts_ns = 10, .name = name, .count = 1 }),
	       0, "lanes: refusals: an event appended before the lanes");
	is_int(tft_writer_end_track(w, tr[2]), 0, "lanes: refusals: a track ended before the lanes");
	l1 = tft_writer_lane_open(w);
	l2 = tft_writer_lane_open(w);
	if (!ok(l1 && l2, "lanes: refusals: two lanes open")) {
		tft_writer_lane_close(l1);
		tft_writer_lane_close(l2);
		tft_writer_abort(w);
		return;
	}
	/* l1 claims track 0 on a thread of its own. */
	jb = (struct lane_job){ .w = w, .l = l1, .tr = tr };
	if (pthread_create(&jb.thread, NULL, lane_claim_a, &jb))
		abort();
	pthread_join(jb.thread, NULL);
	is_int(jb.bad, 0, "lanes: refusals: lane 1 claims track 0 by appending to it");
	is_int(tft_writer_lane_append(l2, &(struct tft_event){ .track = tr[0], .ts_ns = 200, .count = 1 }),
	       TFT_EINVAL, "lanes: refusals: a second lane appending to a claimed track");
	is_int(tft_writer_lane_end_track(l2, tr[0]), TFT_EINVAL,
	       "lanes: refusals: a second lane ending a claimed track");
	is_int(tft_writer_lane_append(l1, &(struct tft_event){ .track = tr[1], .ts_ns = 20, .count = 1 }),
	       TFT_EINVAL, "lanes: refusals: a lane appending to a track with events from tft_writer_append");
	is_int(tft_writer_lane_end_track(l2, tr[1]), TFT_EINVAL,
	       "lanes: refusals: a lane ending a track with events from tft_writer_append");
	is_int(tft_writer_lane_append(l1, &(struct tft_event){ .track = tr[2], .ts_ns = 20, .count = 1 }),
	       TFT_EINVAL, "lanes: refusals: a lane appending to a track ended before");
	is_int(tft_writer_lane_append(l1, &(struct tft_event){ .track = tr[0], .ts_ns = 99, .count = 1 }),
	       TFT_EINVAL, "lanes: refusals: out-of-order ts in a lane");
	is_int(tft_writer_lane_append(l1, &(struct tft_event){ .track = tr[0], .ts_ns = 100, .name = 999, .count = 1 }),
	       TFT_EINVAL, "lanes: refusals: an unknown string in a lane");
	is_int(tft_writer_lane_append(l1, &(struct tft_event){ .track = 99, .ts_ns = 100, .count = 1 }),
	       TFT_EINVAL, "lanes: refusals: an unknown track in a lane");
	/* l2 may still claim a fresh track; l1 then may not. */
	is_int(tft_writer_lane_append(l2, &(struct tft_event){ .track = tr[3], .ts_ns = 5, .count = 1 }),
	       0, "lanes: refusals: the second lane claims a fresh track");
	is_int(tft_writer_lane_append(l1, &(struct tft_event){ .track = tr[3], .ts_ns = 6, .count = 1 }),
	       TFT_EINVAL, "lanes: refusals: the first lane then may not append to it");
	is_int(tft_writer_lane_append(l1, &(struct tft_event){ .track = tr[0], .ts_ns = 150, .count = 1 }),
	       0, "lanes: refusals: the owner appends on after the refusals");
	is_int(tft_writer_lane_close(l1), 0, "lanes: refusals: lane 1 closes");
	is_int(tft_writer_lane_close(l2), 0, "lanes: refusals: lane 2 closes");
	/* Handed back: the driving thread appends on, in order only. */
	is_int(tft_writer_append(w, &(struct tft_event){ .track = tr[0], .ts_ns = 149, .count = 1 }),
	       TFT_EINVAL, "lanes: refusals: out of order on a handed-back track");
	is_int(tft_writer_append(w, &(struct tft_event){ .track = tr[0], .ts_ns = 300, .count = 1 }),
	       0, "lanes: refusals: the driving thread appends on to a handed-back track");
	/* A closed lane's tracks cannot be claimed by a later lane. */
	l1 = tft_writer_lane_open(w);
	is_int(l1 ? tft_writer_lane_append(l1, &(struct tft_event){ .track = tr[3], .ts_ns = 50, .count = 1 }) : -1,
	       TFT_EINVAL, "lanes: refusals: a later lane may not claim a handed-back track");
	is_int(tft_writer_lane_close(l1), 0, "lanes: refusals: the later lane closes");
	is_int(tft_writer_close(w, &err), 0, "lanes: refusals: writer close");
	s = tft_session_open(path, &err);
	if (!ok(s != NULL, "lanes: refusals: session opens"))
		return;
	ok(tft_session_track(s, tr[0])->slices + tft_session_track(s, tr[0])->instants == 3 &&
	   tft_session_track(s, tr[0])->min_ts_ns == 100 && tft_session_track(s, tr[0])->max_ts_ns == 300,
	   "lanes: refusals: track 0 holds exactly its 3 accepted events");
	ok(tft_session_track(s, tr[1])->slices + tft_session_track(s, tr[1])->instants == 1 &&
	   tft_session_track(s, tr[1])->max_ts_ns == 10, "lanes: refusals: track 1 holds only its first event");
	ok(tft_session_track(s, tr[2])->slices + tft_session_track(s, tr[2])->instants == 0,
	   "lanes: refusals: track 2 (ended) stays empty");
	ok(tft_session_track(s, tr[3])->slices + tft_session_track(s, tr[3])->instants == 1 &&
	   tft_session_track(s, tr[3])->min_ts_ns == 5, "lanes: refusals: track 3 holds lane 2's event only");
	tft_session_close(s);
}

/* Two lanes race to claim the same fresh tracks: each track goes to exactly one. */
enum { LR_TRACKS = 32, LR_ROUNDS = 100 };

struct lane_racer {
	struct tft_writer_lane *l;
	const uint32_t *tr;
	pthread_barrier_t *start;
	int rev;
	int got[LR_TRACKS], refused[LR_TRACKS], other;
	pthread_t thread;
};

static void *lane_race_main(void *arg)
{
	struct lane_racer *r = arg;

	pthread_barrier_wait(r->start);
	for (int n = 0; n < LR_ROUNDS; n++) {
		for (int i = 0; i < LR_TRACKS; i++) {
			int k = r->rev ? LR_TRACKS - 1 - i : i;
			int rc = tft_writer_lane_append(r->l, &(struct tft_event){ .track = r->tr[k],
						.ts_ns = n * 10, .dur_ns = 5, .count = 1 });
			r->got[k] += rc == 0;
			r->refused[k] += rc == TFT_EINVAL;
			r->other += rc != 0 && rc != TFT_EINVAL;
		}
	}
	return NULL;
}

static void test_lane_race(void)
{
	const char *path = tpath("lanes-race.tft");
	struct tft_writer_opts o = {.chunk_events = 16};
	struct lane_racer r[2] = {0};
	pthread_barrier_t start;
	struct tft_session *s;
	struct tft_error err;
	struct tft_writer *w;
	uint32_t tr[LR_TRACKS];
	int one = 1, stored = 1;

	w = tft_writer_open(path, &o, &err);
	if (!ok(w != NULL, "lanes: race: writer open"))
		return;
	tft_writer_add_process(w, &(struct tft_process){ .rank = -1 });
	for (int k = 0; k < LR_TRACKS; k++)
		tr[k] = tft_writer_add_track(w, &(struct tft_track){ .kind = TFT_TRACK_THREAD, .tid = k });
	pthread_barrier_init(&start, NULL, 2);
	for (int i = 0; i < 2; i++) {
		r[i].l = tft_writer_lane_open(w);
		r[i].tr = tr;
		r[i].start = &start;
		r[i].rev = i;
	}
	for (int i = 0; i < 2; i++)
		if (pthread_create(&r[i].thread, NULL, lane_race_main, &r[i]))
			abort();
	for (int i = 0; i < 2; i++) {
		pthread_join(r[i].thread, NULL);
		is_int(tft_writer_lane_close(r[i].l), 0, "lanes: race: lane closes");
	}
	pthread_barrier_destroy(&start);
	for (int k = 0; k < LR_TRACKS; k++) {
		int a = r[0].got[k] == LR_ROUNDS && r[1].refused[k] == LR_ROUNDS;
		int b = r[1].got[k] == LR_ROUNDS && r[0].refused[k] == LR_ROUNDS;
		if (a == b) {
			printf("# track %d: lane 0 stored %d refused %d, lane 1 stored %d refused %d\n", k,
			       r[0].got[k], r[0].refused[k], r[1].got[k], r[1].refused[k]);
			one = 0;
		}
	}
	ok(one && !r[0].other && !r[1].other,
	   "lanes: race: every contended track went to one lane, the other lane refused (TFT_EINVAL)");
	is_int(tft_writer_close(w, &err), 0, "lanes: race: writer close");
	s = tft_session_open(path, &err);
	if (!ok(s != NULL, "lanes: race: session opens"))
		return;
	for (int k = 0; k < LR_TRACKS; k++)
		stored &= tft_session_track(s, tr[k])->slices == LR_ROUNDS &&
			  tft_session_track(s, tr[k])->max_ts_ns == (LR_ROUNDS - 1) * 10 + 5;
	ok(stored, "lanes: race: each track holds its winner's events once");
	tft_session_close(s);
}

/*
 * An importer's optimistic track (see tft_writer_lane_reset_track): a lane
 * stores a stream on track 0 (several chunks and staged LOD chunks), forgets
 * it and stores another, then renames the track. The session must be what
 * storing only the second stream under the new name gives; track 1 beside
 * it is untouched.
 */
static const char *write_reset(int reset)
{
	static char path[2][512];
	struct tft_writer_opts o = {.chunk_events = 512};
	struct tft_writer *w;
	struct tft_writer_lane *l, *l2;
	struct tft_error err;
	uint32_t tr[2];
	struct xev x;
	int bad = 0;

	snprintf(path[reset], sizeof(path[reset]), "%s", tpath(reset ? "lane-reset.tft" : "lane-once.tft"));
	w = tft_writer_open(path[reset], &o, &err);
	if (!w)
		return NULL;
	for (int i = 0; i < 60; i++) { /* the streams' string ids */
		char b[16];
		snprintf(b, sizeof(b), "s%d", i);
		tft_writer_intern_cstr(w, b);
	}
	tft_writer_add_process(w, &(struct tft_process){ .rank = -1 });
	tr[0] = tft_writer_add_track(w, &(struct tft_track){ .kind = reset ? TFT_TRACK_THREAD : TFT_TRACK_GPU_STREAM,
		.tid = reset ? 1 : 9, .name = tft_writer_intern_cstr(w, reset ? "first" : "second") });
	tr[1] = tft_writer_add_track(w, &(struct tft_track){ .kind = TFT_TRACK_THREAD, .tid = 2,
		.name = tft_writer_intern_cstr(w, "keep") });
	l = tft_writer_lane_open(w);
	l2 = tft_writer_lane_open(w);
	bad |= !l || !l2;
	/* The first stream: the same events (so it stages the level of detail that is
	 * kept in the end), then some of stream 1. */
	for (int j = 0; l && reset && j < LN_EVENTS; j++) {
		lane_event(w, tr[0], 3, j, &x, &bad);
		bad |= tft_writer_lane_append(l, &x.ev) != 0;
	}
	for (int j = 0; l && reset && j < LN_EVENTS / 4; j++) {
		lane_event(w, tr[0], 1, j, &x, &bad);
		x.ev.ts_ns += lane_ev[3][LN_EVENTS - 1].ev.ts_ns; /* after the first part */
		bad |= tft_writer_lane_append(l, &x.ev) != 0;
	}
	for (int j = 0; l && j < LN_EVENTS; j++) {
		lane_event(w, tr[1], 2, j, &x, &bad);
		bad |= tft_writer_lane_append(l, &x.ev) != 0;
	}
	if (l && reset) {
		bad |= tft_writer_lane_reset_track(l2, tr[0]) != TFT_EINVAL; /* l's track */
		bad |= tft_writer_lane_reset_track(l, 99) != TFT_EINVAL;
		bad |= tft_writer_lane_reset_track(l, tr[0]) != 0;
	}
	for (int j = 0; l && j < LN_EVENTS; j++) {
		lane_event(w, tr[0], 3, j, &x, &bad);
		bad |= tft_writer_lane_append(l, &x.ev) != 0;
	}
	if (l && reset) {
		bad |= tft_writer_lane_name_track(l, tr[0], TFT_TRACK_ASYNC, 0, 0, 9) != TFT_EINVAL;
		bad |= tft_writer_lane_name_track(l, tr[0], TFT_TRACK_GPU_STREAM, TFT_TRACKF_CONCURRENT,
						  0, 9) != TFT_EINVAL; /* lanes: not after the events */
		bad |= tft_writer_lane_name_track(l, tr[0], TFT_TRACK_GPU_STREAM, 0, 1u << 30, 9) != TFT_EINVAL;
		bad |= tft_writer_lane_name_track(l, tr[0], TFT_TRACK_GPU_STREAM, TFT_TRACKF_DERIVED,
						  tft_writer_intern_cstr(w, "second"), 9) != 0;
	}
	bad |= l && tft_writer_lane_end_track(l, tr[0]) != 0;
	bad |= l && tft_writer_lane_end_track(l, tr[1]) != 0;
	bad |= l && reset && tft_writer_lane_reset_track(l, tr[0]) != TFT_EINVAL; /* ended */
	bad |= l && tft_writer_lane_close(l) != 0;
	bad |= l2 && tft_writer_lane_close(l2) != 0;
	if (bad) {
		tft_writer_abort(w);
		return NULL;
	}
	return tft_writer_close(w, &err) == 0 ? path[reset] : NULL;
}

/* The session's chunk rows per track and level (count, events), as text. */
static void chunk_rows(const char *path, char *out, size_t size)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	size_t n = 0;

	out[0] = 0;
	if (sqlite3_open(path, &db) != SQLITE_OK)
		return;
	if (sqlite3_prepare_v2(db, "SELECT track, level, count(*), sum(n) FROM chunks GROUP BY track, level",
			       -1, &st, NULL) == SQLITE_OK) {
		while (sqlite3_step(st) == SQLITE_ROW && n + 64 < size)
			n += (size_t)snprintf(out + n, size - n, "%lld/%lld:%lld,%lld ",
					      sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
					      sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3));
		sqlite3_finalize(st);
	}
	sqlite3_close(db);
}

static void test_lane_reset(void)
{
	const char *p0 = write_reset(0), *p1 = write_reset(1);
	char r0[2048], r1[2048];

	ok(p0 && p1, "lanes: reset: a track stored, forgotten and stored again; the refusals");
	ok(p0 && p1 && sessions_same(p0, p1, 2),
	   "lanes: reset: the session is what storing only the later events under the new name gives");
	int lod0 = 0;

	chunk_rows(p0 ? p0 : "", r0, sizeof(r0));
	chunk_rows(p1 ? p1 : "", r1, sizeof(r1));
	for (const char *q = r0; *q;) { /* track 0 keeps a level of detail (its chunks were staged) */
		long long t, lv;
		int used = 0;

		if (sscanf(q, "%lld/%lld:%*[0-9,] %n", &t, &lv, &used) < 2 || used == 0)
			break;
		lod0 |= t == 0 && lv > 0;
		q += used;
	}
	if (!ok(p0 && p1 && lod0 && strcmp(r0, r1) == 0,
		"lanes: reset: the same chunk rows per level of detail (no forgotten one kept)"))
		printf("#   %s\n#   %s\n", r0, r1);
}

/*
 * An event may start at INT64_MAX: the track is not ended by it, and once
 * ended (by the driving thread or a lane) nothing more is appended, not
 * even at INT64_MAX.
 */
/*
 * Events at INT64_MIN still count as events: a lane may not claim a track
 * the driving thread stored them on (with a store worker, both would store
 * it at once), nor one a closed lane stored them on.
 */
static void test_claim_at_min(void)
{
	const char *path = tpath("claim-at-min.tft");
	struct tft_writer_opts o = { .threads = 1, .bulk = 1 };
	struct tft_writer *w;
	struct tft_writer_lane *l;
	struct tft_session *s;
	struct tft_error err;
	const struct tft_event at_min = { .ts_ns = INT64_MIN, .kind = TFT_EV_INSTANT, .count = 1 };
	struct tft_event ev = at_min;
	uint32_t tr[2];
	int appended = 0;

	w = tft_writer_open(path, &o, &err);
	if (!ok(w != NULL, "claim at INT64_MIN: writer open (one store worker)"))
		return;
	tft_writer_add_process(w, &(struct tft_process){ .rank = -1 });
	for (int k = 0; k < 2; k++)
		tr[k] = tft_writer_add_track(w, &(struct tft_track){ .kind = TFT_TRACK_THREAD, .tid = k });
	ev.track = tr[0];
	for (int i = 0; i < 3 * 4096 + 1; i++) /* batches reach the worker */
		appended += tft_writer_append(w, &ev) == 0;
	is_int(appended, 3 * 4096 + 1, "claim at INT64_MIN: the driving thread's instants at INT64_MIN");
	l = tft_writer_lane_open(w);
	ev.ts_ns = 1000;
	is_int(l ? tft_writer_lane_append(l, &ev) : -1, TFT_EINVAL,
	       "claim at INT64_MIN: a lane may not claim the track");
	ev = at_min;
	ev.track = tr[1];
	is_int(l ? tft_writer_lane_append(l, &ev) : -1, 0, "claim at INT64_MIN: a lane's instant at INT64_MIN");
	is_int(tft_writer_lane_close(l), 0, "claim at INT64_MIN: the lane closes");
	l = tft_writer_lane_open(w);
	ev.ts_ns = 1000;
	is_int(l ? tft_writer_lane_append(l, &ev) : -1, TFT_EINVAL,
	       "claim at INT64_MIN: nor a track a closed lane stored events on");
	is_int(tft_writer_lane_close(l), 0, "claim at INT64_MIN: the second lane closes");
	is_int(tft_writer_close(w, &err), 0, "claim at INT64_MIN: writer close");
	s = tft_session_open(path, &err);
	if (!ok(s != NULL, "claim at INT64_MIN: session opens"))
		return;
	ok(tft_session_track(s, tr[0])->instants == 3 * 4096 + 1 &&
	   tft_session_track(s, tr[1])->instants == 1,
	   "claim at INT64_MIN: each track has exactly its own events");
	tft_session_close(s);
}

/* Two instants whose summary block spans more than INT64_MAX ns (the LOD saturates its duration). */
static void test_lod_span_overflow(void)
{
	const char *path = tpath("lod-span-overflow.tft");
	struct tft_writer_opts o = { .flush_partial = 1 }; /* summaries as events come */
	struct tft_writer *w;
	struct tft_session *s;
	struct tft_error err;
	uint32_t tr;

	w = tft_writer_open(path, &o, &err);
	if (!ok(w != NULL, "LOD span overflow: writer open"))
		return;
	tft_writer_add_process(w, &(struct tft_process){ .rank = -1 });
	tr = tft_writer_add_track(w, &(struct tft_track){ .kind = TFT_TRACK_THREAD });
	is_int(tft_writer_append(w, &(struct tft_event){ .track = tr, .ts_ns = INT64_MIN, .dur_ns = INT64_MAX,
						      .kind = TFT_EV_INSTANT, .count = 1 }), 0,
	       "LOD span overflow: an instant from INT64_MIN lasting INT64_MAX");
	is_int(tft_writer_append(w, &(struct tft_event){ .track = tr, .ts_ns = 0, .dur_ns = INT64_MAX,
						      .kind = TFT_EV_INSTANT, .count = 1 }), 0,
	       "LOD span overflow: one from 0 lasting INT64_MAX (the two join in one block)");
	is_int(tft_writer_close(w, &err), 0, "LOD span overflow: writer close");
	s = tft_session_open(path, &err);
	if (!ok(s != NULL, "LOD span overflow: session opens"))
		return;
	is_int(tft_session_track(s, tr)->instants, 2, "LOD span overflow: both instants kept");
	tft_session_close(s);
}

static int count_ev(void *ctx, const struct tft_event *ev)
{
	(void)ev;
	++*(int *)ctx;
	return 0;
}

/*
 * A live writer deletes the chunks of a level it drops, and SQLite may give
 * a deleted rowid to a later chunk of another track. A reader whose
 * directory is older must not decode that chunk as its own (same event
 * count, other events): it gets TFT_EAGAIN, and after a refresh reads
 * right. The reuse is made here: track A's chunk deleted, track B's chunk
 * moved to its rowid.
 */
static void test_reused_rowid(void)
{
	const char *path = tpath("reused.tft");
	struct tft_error err;
	struct tft_writer *w;
	struct tft_session *s;
	uint32_t ta, tb;
	sqlite3 *db = NULL;
	uint64_t cnt = 0;
	int rc;

	tft_error_clear(&err);
	w = tft_writer_open(path, NULL, &err);
	if (!ok(w != NULL, "reused rowid: writer open"))
		return;
	tft_writer_add_process(w, &(struct tft_process){ .rank = -1 });
	ta = tft_writer_add_track(w, &(struct tft_track){ .kind = TFT_TRACK_THREAD });
	tb = tft_writer_add_track(w, &(struct tft_track){ .kind = TFT_TRACK_THREAD, .tid = 1 });
	for (int i = 0; i < 10; i++) {
		tft_writer_append(w, &(struct tft_event){ .track = ta, .ts_ns = i * 10, .dur_ns = 5,
							  .name = tft_writer_intern_cstr(w, "a"), .count = 1 });
		tft_writer_append(w, &(struct tft_event){ .track = tb, .ts_ns = 1000 + i * 10, .dur_ns = 5,
							  .name = tft_writer_intern_cstr(w, "b"), .count = 1 });
	}
	is_int(tft_writer_close(w, &err), 0, "reused rowid: written");
	s = tft_session_open(path, &err);
	if (!ok(s != NULL, "reused rowid: reader open"))
		return;
	ok(sqlite3_open(path, &db) == SQLITE_OK &&
		   sqlite3_exec(db,
				"CREATE TEMP TABLE a AS SELECT id FROM chunks WHERE track = 0;"
				"DELETE FROM chunks WHERE track = 0;"
				"UPDATE chunks SET id = (SELECT id FROM a) WHERE track = 1;",
				NULL, NULL, NULL) == SQLITE_OK,
	   "reused rowid: track B's chunk under track A's rowid");
	sqlite3_close(db);
	tft_error_clear(&err);
	rc = tft_session_scan(s, ta, INT64_MIN, INT64_MAX, 0, count_fn, &cnt, &err);
	ok(rc == TFT_EAGAIN && cnt == 0, "reused rowid: TFT_EAGAIN, no events of track B (rc %d, %llu events)",
	   rc, (unsigned long long)cnt);
	is_int(tft_session_refresh(s, &err), 0, "reused rowid: refresh");
	cnt = 0;
	is_int(tft_session_scan(s, ta, INT64_MIN, INT64_MAX, 0, count_fn, &cnt, &err), 0, "track A scans");
	is_int(cnt, 0, "track A: no chunks now");
	cnt = 0;
	is_int(tft_session_scan(s, tb, INT64_MIN, INT64_MAX, 0, count_fn, &cnt, &err), 0, "track B scans");
	is_int(cnt, 10, "track B: its events");
	tft_session_close(s);
}


/*
 * A refresh that fails half way (a damaged steps row) leaves a session with
 * no tracks, not tracks without their chunk directories (the next scan read
 * a NULL directory).
 */
static void test_refresh_failure(void)
{
	const char *path = tpath("refresh-fail.tft");
	struct tft_writer *w;
	struct tft_session *s;
	struct tft_error err;
	sqlite3 *db;
	uint32_t tr;
	int n = 0;

	w = tft_writer_open(path, NULL, &err);
	if (!ok(w != NULL, "refresh failure: writer open"))
		return;
	tft_writer_add_process(w, &(struct tft_process){ .rank = -1 });
	tr = tft_writer_add_track(w, &(struct tft_track){ .kind = TFT_TRACK_THREAD });
	for (int i = 0; i < 10; i++)
		tft_writer_append(w, &(struct tft_event){ .track = tr, .ts_ns = i * 10, .dur_ns = 5,
							  .kind = TFT_EV_SLICE, .count = 1 });
	tft_writer_add_step(w, &(struct tft_step){ .index = 1, .process = TFT_NONE, .start_ns = 0, .dur_ns = 100 });
	is_int(tft_writer_close(w, &err), 0, "refresh failure: writer close");
	s = tft_session_open(path, &err);
	if (!ok(s != NULL, "refresh failure: session opens"))
		return;
	ok(sqlite3_open(path, &db) == SQLITE_OK &&
	   sqlite3_exec(db, "UPDATE steps SET name = 99999999", NULL, NULL, NULL) == SQLITE_OK,
	   "refresh failure: a step's name made a string id that does not exist");
	sqlite3_close(db);
	ok(tft_session_refresh(s, &err) != 0, "refresh failure: the refresh fails (%s)", err.msg);
	is_int(tft_session_track_count(s), 0, "refresh failure: no tracks are left to scan");
	ok(tft_session_scan(s, tr, INT64_MIN, INT64_MAX, 0, count_ev, &n, &err) != 0 && n == 0,
	   "refresh failure: a scan is refused, no crash");
	tft_session_close(s);
}

static void test_end_at_max(void)
{
	const char *path = tpath("end-at-max.tft");
	struct tft_writer *w;
	struct tft_writer_lane *l;
	struct tft_session *s;
	struct tft_error err;
	uint32_t tr[2];

	w = tft_writer_open(path, NULL, &err);
	if (!ok(w != NULL, "end at INT64_MAX: writer open"))
		return;
	tft_writer_add_process(w, &(struct tft_process){ .rank = -1 });
	for (int k = 0; k < 2; k++)
		tr[k] = tft_writer_add_track(w, &(struct tft_track){ .kind = TFT_TRACK_THREAD, .tid = k });
	is_int(tft_writer_append(w, &(struct tft_event){ .track = tr[0], .ts_ns = INT64_MAX, .kind = TFT_EV_INSTANT, .count = 1 }), 0,
	       "end at INT64_MAX: an instant at INT64_MAX");
	is_int(tft_writer_append(w, &(struct tft_event){ .track = tr[0], .ts_ns = INT64_MAX, .kind = TFT_EV_INSTANT, .count = 1 }), 0,
	       "end at INT64_MAX: another one (the track is not ended by them)");
	is_int(tft_writer_end_track(w, tr[0]), 0, "end at INT64_MAX: the track ends");
	is_int(tft_writer_append(w, &(struct tft_event){ .track = tr[0], .ts_ns = INT64_MAX, .kind = TFT_EV_INSTANT, .count = 1 }),
	       TFT_EINVAL, "end at INT64_MAX: no event after the end");
	l = tft_writer_lane_open(w);
	is_int(l ? tft_writer_lane_append(l, &(struct tft_event){ .track = tr[1], .ts_ns = INT64_MAX, .kind = TFT_EV_INSTANT, .count = 1 }) : -1,
	       0, "end at INT64_MAX: a lane's instant at INT64_MAX");
	is_int(l ? tft_writer_lane_name_track(l, tr[1], TFT_TRACK_DEVICE, 0, 0, 5) : -1, 0,
	       "end at INT64_MAX: the lane's track is not ended by it");
	is_int(l ? tft_writer_lane_end_track(l, tr[1]) : -1, 0, "end at INT64_MAX: the lane ends its track");
	is_int(l ? tft_writer_lane_append(l, &(struct tft_event){ .track = tr[1], .ts_ns = INT64_MAX, .kind = TFT_EV_INSTANT, .count = 1 }) : -1,
	       TFT_EINVAL, "end at INT64_MAX: no lane event after the end");
	is_int(l ? tft_writer_lane_reset_track(l, tr[1]) : -1, TFT_EINVAL,
	       "end at INT64_MAX: an ended track is not reset");
	is_int(tft_writer_lane_close(l), 0, "end at INT64_MAX: the lane closes");
	is_int(tft_writer_append(w, &(struct tft_event){ .track = tr[1], .ts_ns = INT64_MAX, .kind = TFT_EV_INSTANT, .count = 1 }),
	       TFT_EINVAL, "end at INT64_MAX: no event after the lane's end");
	is_int(tft_writer_close(w, &err), 0, "end at INT64_MAX: writer close");
	s = tft_session_open(path, &err);
	if (!ok(s != NULL, "end at INT64_MAX: session opens"))
		return;
	ok(tft_session_track(s, tr[0])->instants == 2 && tft_session_track(s, tr[1])->instants == 1 &&
	   tft_session_track(s, tr[1])->kind == TFT_TRACK_DEVICE && tft_session_track(s, tr[1])->tid == 5,
	   "end at INT64_MAX: the tracks hold 2 and 1 instants, the lane's one renamed");
	tft_session_close(s);
}

static void test_lanes(void)
{
	char p0[512];
	const char *p;

	lane_streams();
	p = write_lanes(0, 0);
	ok(p != NULL, "lanes: write on one thread");
	if (p) {
		snprintf(p0, sizeof(p0), "%s", p);
		for (int threads = 0; threads <= 2; threads += 2) {
			for (int n = 2; n <= 3; n++) {
				p = write_lanes(n, threads);
				ok(p != NULL, "lanes: write through %d lanes, %d store workers", n, threads);
				if (p)
					ok(sessions_same(p0, p, LN_TRACKS),
					   "lanes: %d lanes, %d store workers store what one thread stores",
					   n, threads);
			}
		}
	}
	test_lane_reset();
	for (int k = 0; k < LN_TRACKS; k++) {
		free(lane_ev[k]);
		lane_ev[k] = NULL;
	}
	test_lane_refusals();
	test_lane_race();
	test_end_at_max();
	test_claim_at_min();
	test_lod_span_overflow();
	test_refresh_failure();
	test_reused_rowid();
}

/* The writer's typed side doors: slots, counters, graph tables (#22). */
static int slot_closes[4], slot_nclose, slot_frees;

static int slot_on_close(struct tft_writer *w, void *ctx)
{
	(void)w;
	slot_closes[slot_nclose++ & 3] = *(int *)ctx;
	return 0;
}

static void slot_free(void *ctx)
{
	(void)ctx;
	slot_frees++;
}

static void test_side_doors(void)
{
	struct tft_error err;
	struct tft_writer *w;
	struct tft_session *s;
	struct tft_graph_store *gs;
	static int a = 1, b = 2, c = 3;
	const char *path = tpath("side-doors.tft");

	tft_error_clear(&err);
	w = tft_writer_open(path, NULL, &err);
	ok(w != NULL, "side doors: open (%s)", err.msg);
	if (!w)
		return;
	/* Slots: one state each, found again, closed in attach order. */
	ok(tft_writer_attached(w, TFT_SLOT_XSPACE_HOSTS) == NULL, "slot: empty at first");
	is_int(tft_writer_attach(w, TFT_SLOT_XSPACE_HOSTS, &a, slot_on_close, slot_free), 0,
	       "slot: attach");
	is_int(tft_writer_attach(w, TFT_SLOT_XSPACE_HOSTS, &b, NULL, NULL), TFT_EINVAL,
	       "slot: a taken slot is refused");
	is_int(tft_writer_attach(w, TFT_SLOT_COUNT, &b, NULL, NULL), TFT_EINVAL,
	       "slot: an unknown slot is refused");
	is_int(tft_writer_attach(w, TFT_SLOT_RUNMETA_TMPL, &b, slot_on_close, slot_free), 0,
	       "slot: another slot");
	ok(tft_writer_attached(w, TFT_SLOT_XSPACE_HOSTS) == &a &&
		   tft_writer_attached(w, TFT_SLOT_RUNMETA_TMPL) == &b &&
		   tft_writer_attached(w, TFT_SLOT_RUNMETA_POOL) == NULL,
	   "slot: each finds its own state");
	is_int(tft_writer_attach(w, TFT_SLOT_RUNMETA_POOL, &c, slot_on_close, slot_free), 0,
	       "slot: attach the third");
	/* Counters by enum; runtime sources name their own. */
	is_int(tft_writer_count(w, TFT_COUNT_DROPPED), 0, "counter: unset is 0");
	ok(tft_writer_add_count(w, TFT_COUNT_DROPPED, 5) == 0 &&
		   tft_writer_add_count(w, TFT_COUNT_DROPPED, 2) == 0,
	   "counter: add");
	is_int(tft_writer_count(w, TFT_COUNT_DROPPED), 7, "counter: accumulates");
	is_int(tft_writer_add_count(w, TFT_COUNT_NUM, 1), TFT_EINVAL, "counter: unknown refused");
	ok(tft_counter_name(TFT_COUNT_NUM) == NULL, "counter: unknown has no name");
	is_str(tft_counter_name(TFT_COUNT_XSPACE_WARNINGS), "xspace_warnings", "counter: its meta key");
	{
		int named = 0;
		for (int i = 0; i < TFT_COUNT_NUM; i++)
			named += tft_counter_name((enum tft_counter)i) != NULL;
		is_int(named, TFT_COUNT_NUM, "counter: every one has a name");
	}
	is_int(tft_writer_add_named_count(w, "cuda_kernels", 4), 0, "counter: a source's own");
	is_int(tft_writer_add_count(w, TFT_COUNT_UNMATCHED_FLOWS, 3), 0, "counter: add another");
	is_int(tft_writer_count(w, TFT_COUNT_UNMATCHED_FLOWS), 3, "counter: ... is the enum's");
	/* Graph tables: none until the first graph store, then the writer's own. */
	ok(tft_writer_graphs(w, 0, NULL) == NULL, "graphs: none at first");
	is_int((int)tft_graph_next_id(w), -1, "graphs: no next id yet");
	tft_error_clear(&err);
	gs = tft_graph_store_open(w, &err);
	ok(gs != NULL && tft_writer_graphs(w, 0, NULL) != NULL, "graphs: made by the first store");
	if (gs) {
		const char *u = NULL;
		struct tft_graph_node n = { .name = { "MatMul", 6 }, .compute_cost = TFT_GRAPH_NO_COST,
					    .temporary_memory = TFT_GRAPH_NO_COST,
					    .persistent_memory = TFT_GRAPH_NO_COST };
		int64_t id = tft_graph_store_begin(gs, "g", &u, &err);
		ok(id == 0 && tft_graph_store_add(gs, id, &n, &err) == 0, "graphs: a node added");
		is_int(tft_graph_store_close(gs, &err), 0, "graphs: store closed");
		is_int((int)tft_graph_next_id(w), 1, "graphs: next id");
	}
	tft_error_clear(&err);
	is_int(tft_writer_close(w, &err), 0, "side doors: close");
	ok(slot_nclose == 3 && slot_closes[0] == 1 && slot_closes[1] == 2 && slot_closes[2] == 3,
	   "slot: on_close in attach order (%d: %d %d %d)", slot_nclose, slot_closes[0],
	   slot_closes[1], slot_closes[2]);
	is_int(slot_frees, 3, "slot: each state freed");
	is_int(tft_graph_count(path, &err), 1, "graphs: the node is in the session");
	s = tft_session_open(path, &err);
	ok(s != NULL, "side doors: reopen");
	if (s) {
		is_str(tft_session_meta(s, "dropped"), "7", "counter: stored under its name");
		is_str(tft_session_meta(s, "cuda_kernels"), "4", "counter: a source's stored");
		is_str(tft_session_meta(s, "graph_nodes"), "1", "counter: graph_nodes");
		tft_session_close(s);
	}
}

int main(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "%s/tft-store-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	test_chunk_codec();
	test_chunk_fast_path();
	test_roundtrip();
	test_flows_steps();
	test_flow_codec();
	test_flow_order();
	test_flows_many();
	test_lod();
	test_lod_rule();
	test_lod_long();
	test_lod_rebuild();
	test_lod_held_back();
	test_errors();
	test_wc_vfs();
	test_write_failure();
	test_strings_lazy();
	test_cache();
	test_live();
	test_threads();
	test_lanes();
	test_side_doors();
	{
		char cmd[600];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd) != 0)
			printf("# could not remove %s\n", tmpdir);
	}
	return done_testing();
}
