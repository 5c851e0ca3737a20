/* SPDX-License-Identifier: MIT */
/*
 * Store micro-benchmark: writes a generated Kineto-like session (CPU threads
 * with nested ops, GPU streams with kernels, few args; one step's program
 * replayed with jitter, as in a training loop), then reports append
 * rate, bytes per slice, reopen time and first-query latency; optionally the
 * sorter path. One JSON line per result on stdout.
 *
 *   cc -O2 -std=c11 -D_GNU_SOURCE -Iinclude -Isrc bench/bench_store.c \
 *      build/libtftracer.a -lsqlite3 -lzstd -lz -lm -lpthread -o bench_store
 *   bench_store [-n EVENTS] [-z LEVEL] [-s] [-o PATH] [-k] [-d]
 *     -n  slices to generate (default 10000000)   -z  zstd level (default 3)
 *     -s  feed through the sorter (shuffled within windows) instead of in order
 *     -o  session path (default $TMPDIR/tft-bench-store.tft)   -k  keep the file
 *     -W  write only (skip the read measurements)
 *     -d  dry run: generate events without storing them (the generator's cost)
 *   bench_store -r SESSION [-R REPS] [-P 1|2|3]
 *     replay: load the raw events of an existing session into memory, then time
 *     the store's per-event codec alone (no SQLite, no zstd, no writer): "enc"
 *     feeds every event to a chunk encoder per track (payload built per full
 *     chunk), "lod" feeds them to the LOD builder with a counting emit, "lod_enc"
 *     encodes the LOD blocks too. Best CPU time of REPS (default 3) runs; "hash"
 *     is an FNV-1a over every chunk payload in order, "hash_lod" over the LOD
 *     blocks in emission order: equal hashes from two builds mean
 *     byte-identical chunks and the same LOD output.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "store/chunk.h"
#include "store/lod.h"
#include "store/schema.h"
#include "store/session.h"
#include "store/sorter.h"
#include "store/writer.h"

#define CPU_TRACKS 8
#define GPU_TRACKS 8
#define CPU_NAMES 300
#define GPU_NAMES 500

static uint64_t rng = 0x853c49e6748fea9bULL;
static inline uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Zipf-ish pick in [0, n): small ids are much more frequent. */
static inline uint32_t zipf(uint32_t n)
{
	double u = (double)(rnd() >> 11) * (1.0 / 9007199254740992.0);
	return (uint32_t)((double)n * u * u * u);
}

/* Log-uniform duration in [lo, hi) ns. */
static inline int64_t logdur(double lo, double hi)
{
	double u = (double)(rnd() >> 11) * (1.0 / 9007199254740992.0);
	return (int64_t)(lo * pow(hi / lo, u));
}

struct gen {
	int dry; /* generate only: measures the generator's own cost */
	struct tft_writer *w;
	struct tft_sorter *sorter;
	uint32_t cpu_names[CPU_NAMES], gpu_names[GPU_NAMES], dims[200], grids[50];
	uint32_t k_dims, k_corr, k_grid, c_op, c_kernel;
	uint64_t slices;
	int64_t corr;
};

/* Sorter input is shuffled within windows of this many events (local disorder). */
#define SHUFFLE_WINDOW 256

static struct {
	struct tft_event ev[SHUFFLE_WINDOW];
	struct tft_arg args[SHUFFLE_WINDOW][2];
	int n;
} win;

static int drain(struct gen *g)
{
	struct tft_error err;

	for (int i = win.n - 1; i > 0; i--) {
		int j = (int)(rnd() % (uint64_t)(i + 1));
		struct tft_event t = win.ev[i];
		win.ev[i] = win.ev[j];
		win.ev[j] = t;
	}
	for (int i = 0; i < win.n; i++) {
		tft_error_clear(&err);
		if (tft_sorter_push(g->sorter, &win.ev[i], &err)) {
			fprintf(stderr, "bench_store: sorter push: %s\n", err.msg);
			exit(1);
		}
	}
	win.n = 0;
	return 0;
}

static int emit(struct gen *g, struct tft_event *ev)
{
	int rc;

	g->slices++;
	if (g->dry)
		return 0;
	if (g->sorter) {
		struct tft_event *e = &win.ev[win.n];
		*e = *ev;
		for (int i = 0; i < ev->nargs && i < 2; i++)
			win.args[win.n][i] = ev->args[i];
		e->args = win.args[win.n];
		if (++win.n == SHUFFLE_WINDOW)
			drain(g);
		return 0;
	} else {
		rc = tft_writer_append(g->w, ev);
	}
	if (rc) {
		fprintf(stderr, "bench_store: append failed: %s\n", tft_strerror(rc));
		exit(1);
	}
	return 0;
}

/*
 * Training traces repeat one program per step: the same ops and kernels in
 * the same order with similar timings. Each track gets a template that is
 * replayed with jitter (ns-granular, so timestamps keep their noise).
 */
#define GPU_SLOTS 400
#define CPU_TREES 40
#define MAX_NODES 64

struct node {
	uint32_t name, arg; /* arg: 0 = none, else the "Input Dims" string */
	int64_t off, dur;   /* relative to the tree's start */
};

struct tree {
	struct node n[MAX_NODES];
	int nn;
	int64_t dur, gap;
};

static void tree_build(struct gen *g, struct tree *t, int64_t off, int64_t dur, int depth)
{
	struct node *nd;
	int nkids;

	if (t->nn >= MAX_NODES)
		return;
	nd = &t->n[t->nn++];
	nd->name = g->cpu_names[zipf(CPU_NAMES)];
	nd->arg = rnd() % 5 == 0 ? g->dims[zipf(200)] : 0;
	nd->off = off;
	nd->dur = dur;
	nkids = depth < 5 && dur > 4000 ? (int)(rnd() % 4) : 0;
	int64_t t0 = off + 200 + (int64_t)(rnd() % 300);
	for (int k = 0; k < nkids; k++) {
		int64_t room = off + dur - t0;
		if (room < 1000)
			break;
		int64_t d = room / (nkids - k) - 300;
		if (d < 500)
			break;
		d = d / 2 + (int64_t)(rnd() % (uint64_t)(d / 2));
		tree_build(g, t, t0, d, depth + 1);
		t0 += d + 100 + (int64_t)(rnd() % 500);
	}
}

/* A uniform time scale keeps a tree's nesting; floor() keeps children inside. */
static inline int64_t scaled(int64_t x, double f)
{
	return (int64_t)floor((double)x * f);
}

static void gen_cpu(struct gen *g, uint32_t track, uint64_t n)
{
	static struct tree trees[CPU_TREES];
	int64_t ts = 1700000000000000000LL + (int64_t)(rnd() % 1000000);
	struct tft_arg arg;

	for (int i = 0; i < CPU_TREES; i++) {
		trees[i].nn = 0;
		trees[i].dur = logdur(2000, 2000000);
		trees[i].gap = 500 + (int64_t)(rnd() % 20000);
		tree_build(g, &trees[i], 0, trees[i].dur, 0);
	}
	while (n) {
		for (int i = 0; i < CPU_TREES && n; i++) {
			const struct tree *t = &trees[i];
			double f = 1.0 + ((double)(rnd() % 2001) - 1000.0) * 0.00005; /* +-5% */
			for (int j = 0; j < t->nn && n; j++) {
				const struct node *nd = &t->n[j];
				int64_t s0 = scaled(nd->off, f), s1 = scaled(nd->off + nd->dur, f);
				struct tft_event ev = { .track = track, .ts_ns = ts + s0, .dur_ns = s1 - s0,
							.name = nd->name, .cat = g->c_op, .count = 1 };
				if (nd->arg) {
					arg = (struct tft_arg){ .key = g->k_dims, .type = TFT_ARG_JSON,
								.v.str = nd->arg };
					ev.nargs = 1;
					ev.args = &arg;
				}
				emit(g, &ev);
				n--;
			}
			ts += scaled(t->dur, f) + t->gap + (int64_t)(rnd() % 1000);
		}
	}
}

static void gen_gpu(struct gen *g, uint32_t track, uint64_t n)
{
	static struct { uint32_t name, grid; int64_t dur, gap; } slot[GPU_SLOTS];
	int64_t ts = 1700000000000000000LL + 50000 + (int64_t)(rnd() % 1000000);
	struct tft_arg args[2];

	for (int i = 0; i < GPU_SLOTS; i++) {
		slot[i].name = g->gpu_names[zipf(GPU_NAMES)];
		slot[i].grid = g->grids[zipf(50)];
		slot[i].dur = logdur(1500, 400000);
		slot[i].gap = logdur(1000, 10000);
	}
	for (uint64_t i = 0; i < n; i++) {
		int k = (int)(i % GPU_SLOTS);
		int64_t d = slot[k].dur, gap = slot[k].gap;
		struct tft_event ev = { .track = track, .ts_ns = ts,
					.dur_ns = d - d / 20 + (int64_t)(rnd() % (uint64_t)(d / 10 + 1)),
					.name = slot[k].name, .cat = g->c_kernel, .count = 1, .nargs = 2,
					.args = args };
		g->corr += 1 + (int64_t)(rnd() % 4);
		args[0] = (struct tft_arg){ .key = g->k_corr, .type = TFT_ARG_INT, .v.i = g->corr };
		args[1] = (struct tft_arg){ .key = g->k_grid, .type = TFT_ARG_STR, .v.str = slot[k].grid };
		emit(g, &ev);
		ts += ev.dur_ns + gap - gap / 5 + (int64_t)(rnd() % (uint64_t)(gap * 2 / 5 + 1));
	}
}

static void setup(struct gen *g)
{
	char buf[256];
	uint32_t p = tft_writer_add_process(g->w, &(struct tft_process){
		.name = tft_writer_intern_cstr(g->w, "python"), .pid = 1234, .rank = 0 });
	uint32_t pg = tft_writer_add_process(g->w, &(struct tft_process){
		.name = tft_writer_intern_cstr(g->w, "GPU 0"), .pid = 0, .rank = 0 });

	for (int i = 0; i < CPU_TRACKS; i++) {
		snprintf(buf, sizeof(buf), "thread %d", 1000 + i);
		tft_writer_add_track(g->w, &(struct tft_track){ .process = p, .kind = TFT_TRACK_THREAD,
								.name = tft_writer_intern_cstr(g->w, buf),
								.tid = 1000 + i });
	}
	for (int i = 0; i < GPU_TRACKS; i++) {
		snprintf(buf, sizeof(buf), "stream %d", 7 + i);
		tft_writer_add_track(g->w, &(struct tft_track){ .process = pg, .kind = TFT_TRACK_GPU_STREAM,
								.name = tft_writer_intern_cstr(g->w, buf),
								.tid = 7 + i });
	}
	for (int i = 0; i < CPU_NAMES; i++) {
		snprintf(buf, sizeof(buf), "aten::op_%d_%s", i, i % 3 ? "forward" : "backward");
		g->cpu_names[i] = tft_writer_intern_cstr(g->w, buf);
	}
	for (int i = 0; i < GPU_NAMES; i++) {
		snprintf(buf, sizeof(buf),
			 "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_%d<"
			 "at::native::BinaryFunctor<float, float, float, at::native::binary_internal::"
			 "MulFunctor<float> > > >(int, %d)", i, i * 7);
		g->gpu_names[i] = tft_writer_intern_cstr(g->w, buf);
	}
	for (int i = 0; i < 200; i++) {
		snprintf(buf, sizeof(buf), "[[%d, %d], [%d]]", 1 + i % 64, 128 * (1 + i % 8), 1 + i);
		g->dims[i] = tft_writer_intern_cstr(g->w, buf);
	}
	for (int i = 0; i < 50; i++) {
		snprintf(buf, sizeof(buf), "[%d, 1, 1]", 32 * (i + 1));
		g->grids[i] = tft_writer_intern_cstr(g->w, buf);
	}
	g->k_dims = tft_writer_intern_cstr(g->w, "Input Dims");
	g->k_corr = tft_writer_intern_cstr(g->w, "correlation");
	g->k_grid = tft_writer_intern_cstr(g->w, "grid");
	g->c_op = tft_writer_intern_cstr(g->w, "cpu_op");
	g->c_kernel = tft_writer_intern_cstr(g->w, "kernel");
}

struct qstat {
	uint64_t n;
};

static int count_fn(void *ctx, const struct tft_event *ev)
{
	(void)ev;
	((struct qstat *)ctx)->n++;
	return 0;
}

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double rss_mb(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_maxrss / 1024.0;
}

/* ---- replay: the codec alone on a session's events ----------------------------------- */

struct replay {
	struct tft_event *ev; /* all tracks, track by track; args point into `args` */
	size_t n, cap;
	struct tft_arg *args;
	size_t nargs, cap_args;
	uint32_t *track_end; /* events of track t: [track_end[t-1], track_end[t]) */
	uint32_t ntracks;
	/* per run */
	struct tft_chunk_enc enc[TFT_STORE_LEVELS];
	struct tft_chunk_buf payload;
	uint64_t hash, ehash, lod_events, chunks;
	int encode_lod, hashing;
};

static int replay_collect(void *ctx, const struct tft_event *ev)
{
	struct replay *r = ctx;

	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 1 << 16;
		r->ev = realloc(r->ev, r->cap * sizeof(*r->ev));
		if (!r->ev)
			exit(1);
	}
	if (r->nargs + ev->nargs > r->cap_args) {
		while (r->nargs + ev->nargs > r->cap_args)
			r->cap_args = r->cap_args ? r->cap_args * 2 : 1 << 16;
		r->args = realloc(r->args, r->cap_args * sizeof(*r->args));
		if (!r->args)
			exit(1);
	}
	r->ev[r->n] = *ev;
	/* args are relinked after loading (the array moves): keep the offset */
	r->ev[r->n].args = (const struct tft_arg *)(uintptr_t)r->nargs;
	if (ev->nargs)
		memcpy(&r->args[r->nargs], ev->args, ev->nargs * sizeof(*ev->args));
	r->nargs += ev->nargs;
	r->n++;
	return 0;
}

static void replay_chunk_done(struct replay *r, struct tft_chunk_enc *e)
{
	if (tft_chunk_enc_payload(e, &r->payload)) {
		fprintf(stderr, "bench_store: payload failed\n");
		exit(1);
	}
	r->chunks++;
	if (r->hashing)
		for (size_t i = 0; i < r->payload.len; i++)
			r->hash = (r->hash ^ r->payload.p[i]) * 0x100000001b3ULL;
	tft_chunk_enc_reset(e, 0);
}

static void replay_add(struct replay *r, int level, const struct tft_event *ev)
{
	struct tft_chunk_enc *e = &r->enc[level];

	if (tft_chunk_enc_add(e, ev)) {
		fprintf(stderr, "bench_store: encode failed\n");
		exit(1);
	}
	if (tft_chunk_enc_is_full(e, TFT_STORE_DEFAULT_CHUNK_EVENTS))
		replay_chunk_done(r, e);
}

static int replay_emit(void *ctx, int level, const struct tft_event *ev)
{
	struct replay *r = ctx;

	r->lod_events++;
	if (r->hashing) {
		/* the emission order itself, across levels */
		uint64_t v[8] = { (uint64_t)level, (uint64_t)ev->ts_ns, (uint64_t)ev->dur_ns, 0,
				  ev->name | (uint64_t)ev->cat << 32, ev->depth | (uint64_t)ev->count << 32,
				  ev->kind | (uint64_t)ev->flags << 8 | (uint64_t)ev->nargs << 16, ev->track };
		memcpy(&v[3], &ev->value, sizeof(v[3]));
		for (int i = 0; i < 8; i++)
			r->ehash = (r->ehash ^ v[i]) * 0x100000001b3ULL;
	}
	if (r->encode_lod)
		replay_add(r, level, ev);
	return 0;
}

/* One pass over every track: raw encode (do_enc) and/or LOD (do_lod). CPU seconds. */
static double replay_run(struct replay *r, int do_enc, int do_lod)
{
	double c0 = cpu_now();

	r->lod_events = r->chunks = 0;
	r->hash = r->ehash = 0xcbf29ce484222325ULL;
	for (uint32_t t = 0, i = 0; t < r->ntracks; t++) {
		struct tft_lod lod;

		tft_lod_init(&lod, t);
		for (int k = 0; k < TFT_STORE_LEVELS; k++)
			tft_chunk_enc_init(&r->enc[k]);
		for (; i < r->track_end[t]; i++) {
			if (do_enc)
				replay_add(r, 0, &r->ev[i]);
			if (do_lod) {
				struct tft_event e = r->ev[i];
				e.nargs = 0;
				e.args = NULL;
				if (tft_lod_add(&lod, &e, replay_emit, r))
					exit(1);
			}
		}
		if (do_lod && tft_lod_flush(&lod, replay_emit, r))
			exit(1);
		for (int k = 0; k < TFT_STORE_LEVELS; k++) {
			if (r->enc[k].n)
				replay_chunk_done(r, &r->enc[k]);
			tft_chunk_enc_fini(&r->enc[k]);
		}
		tft_lod_fini(&lod);
	}
	return cpu_now() - c0;
}

static int replay_main(const char *path, int reps, int only)
{
	struct replay r = { 0 };
	struct tft_error err;
	struct tft_session *s;
	double best[3] = { 1e9, 1e9, 1e9 };
	uint64_t h_enc, h_all;

	tft_error_clear(&err);
	s = tft_session_open(path, &err);
	if (!s) {
		fprintf(stderr, "bench_store: %s\n", err.msg);
		return 1;
	}
	r.ntracks = tft_session_track_count(s);
	r.track_end = calloc(r.ntracks ? r.ntracks : 1, sizeof(*r.track_end));
	for (uint32_t t = 0; t < r.ntracks; t++) {
		if (tft_session_scan(s, t, INT64_MIN, INT64_MAX, 0, replay_collect, &r, &err)) {
			fprintf(stderr, "bench_store: scan: %s\n", err.msg);
			return 1;
		}
		r.track_end[t] = (uint32_t)r.n;
	}
	tft_session_close(s);
	for (size_t i = 0; i < r.n; i++)
		r.ev[i].args = r.ev[i].nargs ? &r.args[(uintptr_t)r.ev[i].args] : NULL;
	for (int rep = 0; rep < reps; rep++) {
		double c;
		r.encode_lod = 0;
		if ((!only || only == 1) && (c = replay_run(&r, 1, 0)) < best[0])
			best[0] = c;
		if ((!only || only == 2) && (c = replay_run(&r, 0, 1)) < best[1])
			best[1] = c;
		r.encode_lod = 1;
		if ((!only || only == 3) && (c = replay_run(&r, 0, 1)) < best[2])
			best[2] = c;
	}
	if (only)
		return 0;
	r.hashing = 1;
	r.encode_lod = 0;
	replay_run(&r, 1, 0);
	h_enc = r.hash;
	r.encode_lod = 1;
	replay_run(&r, 1, 1);
	h_all = r.hash;
	printf("{\"bench\":\"store_replay\",\"events\":%zu,\"args\":%zu,\"lod_events\":%llu,"
	       "\"chunks\":%llu,\"enc_ns\":%.1f,\"lod_ns\":%.1f,\"lod_enc_ns\":%.1f,"
	       "\"hash_raw\":\"%016llx\",\"hash_all\":\"%016llx\",\"hash_lod\":\"%016llx\"}\n",
	       r.n, r.nargs, (unsigned long long)r.lod_events, (unsigned long long)r.chunks,
	       best[0] * 1e9 / (double)r.n, best[1] * 1e9 / (double)r.n,
	       best[2] * 1e9 / (double)r.n, (unsigned long long)h_enc, (unsigned long long)h_all,
	       (unsigned long long)r.ehash);
	tft_chunk_buf_free(&r.payload);
	free(r.ev);
	free(r.args);
	free(r.track_end);
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t n = 10000000;
	int level = 3, use_sorter = 0, keep = 0, opt;
	char path[1024];
	struct tft_writer_opts wo = { 0 };
	struct tft_error err;
	struct gen g = { 0 };
	double t0, t1, t2;
	struct stat st;

	snprintf(path, sizeof(path), "%s/tft-bench-store.tft", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	int write_only = 0, reps = 3, only = 0;
	const char *replay_path = NULL;

	while ((opt = getopt(argc, argv, "n:z:so:kdWr:R:P:")) != -1) {
		switch (opt) {
		case 'r': replay_path = optarg; break;
		case 'R': reps = atoi(optarg) > 0 ? atoi(optarg) : 1; break;
		case 'P': only = atoi(optarg); break;
		case 'W': write_only = 1; break;
		case 'd': g.dry = 1; break;
		case 'n': n = strtoull(optarg, NULL, 10); break;
		case 'z': level = atoi(optarg); break;
		case 's': use_sorter = 1; break;
		case 'o': snprintf(path, sizeof(path), "%s", optarg); break;
		case 'k': keep = 1; break;
		default: return 2;
		}
	}
	if (replay_path)
		return replay_main(replay_path, reps, only);
	unlink(path);
	wo.zstd_level = level;
	tft_error_clear(&err);
	g.w = tft_writer_open(path, &wo, &err);
	if (!g.w) {
		fprintf(stderr, "bench_store: %s\n", err.msg);
		return 1;
	}
	setup(&g);
	if (use_sorter)
		g.sorter = tft_sorter_create(g.w, 0);
	double c0 = cpu_now();
	t0 = now();
	/* 40% CPU ops, 60% kernels; generated track by track like the sorter's output. */
	for (uint32_t t = 0; t < CPU_TRACKS; t++)
		gen_cpu(&g, t, n * 4 / 10 / CPU_TRACKS);
	for (uint32_t t = 0; t < GPU_TRACKS; t++)
		gen_gpu(&g, CPU_TRACKS + t, n * 6 / 10 / GPU_TRACKS);
	if (g.sorter) {
		drain(&g);
		if (tft_sorter_finish(g.sorter, 0, &err)) {
			fprintf(stderr, "bench_store: sorter: %s\n", err.msg);
			return 1;
		}
		tft_sorter_destroy(g.sorter);
	}
	t1 = now();
	if (tft_writer_close(g.w, &err)) {
		fprintf(stderr, "bench_store: close: %s\n", err.msg);
		return 1;
	}
	t2 = now();
	double c2 = cpu_now();
	stat(path, &st);
	printf("{\"bench\":\"store_write\",\"sorter\":%d,\"zstd_level\":%d,\"slices\":%llu,"
	       "\"seconds\":%.3f,\"cpu_s\":%.3f,\"events_per_cpu_s\":%.0f,\"events_per_s\":%.0f,\"close_s\":%.3f,\"file_bytes\":%lld,"
	       "\"bytes_per_slice\":%.2f,\"out_mb_per_s\":%.1f,\"max_rss_mb\":%.1f}\n",
	       use_sorter, level, (unsigned long long)g.slices, t2 - t0, c2 - c0,
	       (double)g.slices / (c2 - c0), (double)g.slices / (t2 - t0),
	       t2 - t1, (long long)st.st_size, (double)st.st_size / (double)g.slices,
	       (double)st.st_size / 1e6 / (t2 - t0), rss_mb());

	if (write_only) {
		if (!keep)
			unlink(path);
		return 0;
	}
	/* Reopen + first window query (cold process state, warm page cache). */
	double r0 = now();
	struct tft_session *s = tft_session_open(path, &err);
	double r1 = now();
	if (!s) {
		fprintf(stderr, "bench_store: reopen: %s\n", err.msg);
		return 1;
	}
	const struct tft_track *gt = tft_session_track(s, CPU_TRACKS);
	int64_t mid = gt->min_ts_ns + (gt->max_ts_ns - gt->min_ts_ns) / 2;
	struct qstat q1 = { 0 }, q2 = { 0 }, q3 = { 0 };
	tft_session_scan(s, CPU_TRACKS, mid, mid + 1000000, 0, count_fn, &q1, &err);
	double r2 = now();
	tft_session_scan(s, 0, INT64_MIN, INT64_MAX, (tft_session_track(s, 0)->max_ts_ns -
						       tft_session_track(s, 0)->min_ts_ns) / 2000,
			 count_fn, &q2, &err);
	double r3 = now();
	for (uint32_t t = 0; t < tft_session_track_count(s); t++) {
		const struct tft_track *tt = tft_session_track(s, t);
		tft_session_scan(s, t, tt->min_ts_ns, tt->max_ts_ns, 0, count_fn, &q3, &err);
	}
	double r4 = now();
	printf("{\"bench\":\"store_read\",\"open_s\":%.4f,\"first_window_s\":%.5f,\"window_events\":%llu,"
	       "\"overview_s\":%.5f,\"overview_events\":%llu,\"full_scan_s\":%.3f,"
	       "\"full_scan_events_per_s\":%.0f}\n",
	       r1 - r0, r2 - r1, (unsigned long long)q1.n, r3 - r2, (unsigned long long)q2.n, r4 - r3,
	       (double)q3.n / (r4 - r3));
	tft_session_close(s);
	if (!keep)
		unlink(path);
	return 0;
}
