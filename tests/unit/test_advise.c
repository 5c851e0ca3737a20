/* SPDX-License-Identifier: MIT */
/*
 * The advisor (analyze/advise.c and its checkers) on sessions made here:
 *  - analyze/ivset.c against a brute-force bitmap;
 *  - the step-time breakdown of a step laid out by hand, part by part, to the ns;
 *  - the breakdown of steps too big for one slab (more than ADV_SLAB_SLICES
 *    slices, split into pieces) and of a session without steps, against the
 *    definition computed here by brute force;
 *  - TF RunMetadata built with tests/lib/pbenc.h (the .proto field numbers):
 *    LayoutOptimizer transposes around NHWC convolutions in float32, a float64
 *    op on the GPU (its GraphDef dtype), an input-bound step (IteratorGetNext),
 *    a CPU op beside the GPU; each against the same steps without the problem.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/advise.h"
#include "analyze/ivset.h"
#include "collect/ingest.h"
#include "collect/ingest_runmeta.h"
#include "collect/tf_names.h"
#include "store/session.h"
#include "store/writer.h"
#include "pbenc.h"
#include "tap.h"

static char tmpdir[256];
static int seq;

static uint64_t rng = 88172645463325252ULL;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* ---- ivset ---------------------------------------------------------------------------- */

static void test_ivset(void)
{
	enum { W = 2000 };
	static unsigned char x[W], y[W];
	struct tft_ivset a = { 0 }, b = { 0 }, u = { 0 };
	bool good = true;

	for (int round = 0; round < 50 && good; round++) {
		memset(x, 0, sizeof(x));
		memset(y, 0, sizeof(y));
		tft_ivset_clear(&a);
		tft_ivset_clear(&b);
		for (int i = 0; i < 40; i++) {
			int64_t p = (int64_t)(rnd() % W), q = p + (int64_t)(rnd() % 80);
			if (q > W)
				q = W;
			tft_ivset_add(i & 1 ? &a : &b, p, q);
			for (int64_t k = p; k < q; k++)
				(i & 1 ? x : y)[k] = 1;
		}
		tft_ivset_normalize(&a);
		tft_ivset_normalize(&b);
		tft_ivset_union(&u, &a, &b);
		for (int idx = 0; idx < 2; idx++) {
			if (idx && (tft_ivset_index(&a) || tft_ivset_index(&u)))
				good = false;
			for (int q = 0; q < 40 && good; q++) {
				int64_t p0 = (int64_t)(rnd() % W), p1 = p0 + (int64_t)(rnd() % 500), want = 0, wu = 0, first = INT64_MAX;
				for (int64_t k = p0; k < p1 && k < W; k++) {
					want += x[k];
					wu += x[k] | y[k];
					if (x[k] && first == INT64_MAX)
						first = k;
				}
				if (tft_ivset_measure_in(&a, p0, p1) != want || tft_ivset_measure_in(&u, p0, p1) != wu ||
				    tft_ivset_first_in(&a, p0, p1) != first)
					good = false;
			}
		}
		for (size_t i = 1; i < u.n; i++)
			if (u.v[i].a <= u.v[i - 1].b)
				good = false;
	}
	ok(good, "ivset: union, measure in a window (indexed and not), first point: as a bitmap says");
	tft_ivset_fini(&a);
	tft_ivset_fini(&b);
	tft_ivset_fini(&u);
}

/* ---- sessions written here -------------------------------------------------------------- */

struct built {
	struct tft_writer *w;
	char path[512];
	uint32_t proc, host, stream, comm, cat_op, cat_k;
};

static bool begin(struct built *b)
{
	struct tft_error err;
	struct tft_process p = { .rank = -1, .pid = 1 };
	struct tft_track t = { .tid = 1 };

	snprintf(b->path, sizeof(b->path), "%s/s%d.tft", tmpdir, seq++);
	tft_error_clear(&err);
	b->w = tft_writer_open(b->path, NULL, &err);
	if (!b->w)
		return false;
	p.name = tft_writer_intern_cstr(b->w, "python3");
	b->proc = tft_writer_add_process(b->w, &p);
	t.process = b->proc;
	t.kind = TFT_TRACK_THREAD;
	t.name = tft_writer_intern_cstr(b->w, "main");
	b->host = tft_writer_add_track(b->w, &t);
	t.kind = TFT_TRACK_GPU_STREAM;
	t.flags = TFT_TRACKF_CONCURRENT;
	t.tid = 7;
	t.name = tft_writer_intern_cstr(b->w, "stream 7");
	b->stream = tft_writer_add_track(b->w, &t);
	t.kind = TFT_TRACK_COMM;
	t.tid = 9;
	t.name = tft_writer_intern_cstr(b->w, "nccl");
	b->comm = tft_writer_add_track(b->w, &t);
	b->cat_op = tft_writer_intern_cstr(b->w, "cpu_op");
	b->cat_k = tft_writer_intern_cstr(b->w, "kernel");
	return true;
}

static void put(struct built *b, uint32_t track, const char *name, uint32_t cat, int64_t ts, int64_t dur)
{
	struct tft_event ev = { .track = track, .cat = cat, .count = 1, .kind = TFT_EV_SLICE, .ts_ns = ts, .dur_ns = dur };

	ev.name = tft_writer_intern_cstr(b->w, name);
	tft_writer_append(b->w, &ev);
}

static void step(struct built *b, int64_t index, int64_t start, int64_t dur)
{
	struct tft_step st = { .index = index, .process = b->proc, .start_ns = start, .dur_ns = dur, .traced = true };
	char name[32];

	snprintf(name, sizeof(name), "ProfilerStep#%lld", (long long)index);
	st.name = tft_writer_intern_cstr(b->w, name);
	tft_writer_add_step(b->w, &st);
}

static struct tft_session *finish(struct built *b)
{
	struct tft_error err;

	tft_error_clear(&err);
	if (tft_writer_close(b->w, &err)) {
		printf("# close: %s\n", err.msg);
		return NULL;
	}
	return tft_session_open(b->path, &err);
}

static struct tft_advise_result *run(struct tft_session *s, const struct tft_advise_opts *o)
{
	struct tft_advise_result *r = NULL;
	struct tft_error err;

	tft_error_clear(&err);
	if (tft_advise_run(s, o, &r, &err)) {
		printf("# advise: %s\n", err.msg);
		return NULL;
	}
	return r;
}

static const struct tft_advise_finding *find(const struct tft_advise_result *r, int checker, const char *words)
{
	for (size_t i = 0; r && i < r->nfindings; i++)
		if (r->findings[i].checker == checker && strstr(r->findings[i].title, words))
			return &r->findings[i];
	return NULL;
}

static bool sums(const struct tft_advise_result *r)
{
	for (size_t i = 0; r && i < r->nsteps; i++) {
		int64_t t = 0;
		for (int p = 0; p < TFT_ADVISE_NPARTS; p++)
			t += r->steps[i].part_ns[p];
		if (t != r->steps[i].dur_ns) {
			printf("# step %zu: parts sum to %lld, duration %lld\n", i, (long long)t, (long long)r->steps[i].dur_ns);
			return false;
		}
	}
	return r != NULL;
}

/*
 * One step [1000, 2000): its first 100 ns empty (then the loader: input), the loader
 * [1100, 1300), a host op [1300, 1500) with a kernel [1400, 1700) under it, an
 * all-reduce on the comm track [1650, 1800), a copy [1800, 1850), then nothing.
 */
static void test_breakdown_by_hand(void)
{
	struct built b;
	struct tft_session *s;
	struct tft_advise_result *r;
	static const int64_t want[TFT_ADVISE_NPARTS] = { 300, 100, 50, 300, 100, 150 };

	if (!begin(&b)) {
		ok(0, "breakdown by hand: writer");
		return;
	}
	put(&b, b.host, "ProfilerStep#1", tft_writer_intern_cstr(b.w, "user_annotation"), 1000, 1000);
	put(&b, b.host, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
	    tft_writer_intern_cstr(b.w, "user_annotation"), 1100, 200);
	put(&b, b.host, "aten::mm", b.cat_op, 1300, 200);
	put(&b, b.stream, "ampere_sgemm_128x128_nn", b.cat_k, 1400, 300);
	put(&b, b.stream, "Memcpy DtoH (Device -> Pinned)", tft_writer_intern_cstr(b.w, "gpu_memcpy"), 1800, 50);
	put(&b, b.comm, "nccl:all_reduce", b.cat_op, 1650, 150);
	step(&b, 1, 1000, 1000);
	s = finish(&b);
	r = s ? run(s, NULL) : NULL;
	ok(r && r->nsteps == 1 && r->steps[0].analysed, "breakdown by hand: one analysed step");
	if (r && r->nsteps == 1) {
		bool same = true;
		for (int p = 0; p < TFT_ADVISE_NPARTS; p++) {
			if (r->steps[0].part_ns[p] != want[p]) {
				printf("# %s: %lld, want %lld\n", tft_advise_part_name(p), (long long)r->steps[0].part_ns[p],
				       (long long)want[p]);
				same = false;
			}
		}
		ok(same, "breakdown by hand: device 300, comm 100, memcpy 50, input 300 (leading gap + loader), host 100, idle 150");
		ok(r->nchecked == TFT_ADVISE_NCHECKERS, "breakdown by hand: every checker has a verdict (%zu)", r->nchecked);
	} else {
		ok(0, "breakdown by hand: parts");
		ok(0, "breakdown by hand: verdicts");
	}
	tft_advise_destroy(r);
	if (s)
		tft_session_close(s);
}

/* ---- big steps: the slab pieces against brute force ------------------------------------- */

struct ref_iv {
	int64_t a, b;
	int cls;
};

static int cmp_ref(const void *x, const void *y)
{
	const struct ref_iv *p = x, *q = y;

	return (p->a > q->a) - (p->a < q->a);
}

/* Length of the union of class <= k intervals inside [w0, w1). */
static int64_t ref_measure(struct ref_iv *v, size_t n, int k, int64_t w0, int64_t w1)
{
	int64_t total = 0, ca = 0, cb = 0;
	bool open = false;

	for (size_t i = 0; i < n; i++) {
		int64_t a = v[i].a > w0 ? v[i].a : w0, bb = v[i].b < w1 ? v[i].b : w1;
		if (v[i].cls > k || bb <= a)
			continue;
		if (open && a <= cb) {
			if (bb > cb)
				cb = bb;
		} else {
			if (open)
				total += cb - ca;
			ca = a;
			cb = bb;
			open = true;
		}
	}
	if (open)
		total += cb - ca;
	return total;
}

static void test_big_steps(void)
{
	enum { N = 1100000 };
	struct built b;
	struct tft_session *s;
	struct tft_advise_result *r;
	struct ref_iv *v = malloc(N * sizeof(*v));
	size_t n = 0;
	int64_t steps[2][2] = { { 0, 0 }, { 0, 0 } }, t, tk;
	bool same = true;

	if (!v || !begin(&b)) {
		ok(0, "big steps: writer");
		free(v);
		return;
	}
	/* host ops (class host) and kernels (class device), random, over a small step and a big one */
	t = 1000000;
	tk = 1000000;
	for (int st = 0; st < 2; st++) {
		int64_t start = t, count = st == 1 ? 600000 : 100000;
		for (int64_t i = 0; i < count && n + 2 < N; i++) {
			int64_t d = 50 + (int64_t)(rnd() % 400), gap = (int64_t)(rnd() % 300);
			put(&b, b.host, i % 3 ? "aten::add" : "aten::mul", b.cat_op, t, d);
			v[n++] = (struct ref_iv){ t, t + d, 4 };
			t += d + gap;
			if (rnd() % 2) {
				int64_t kd = 20 + (int64_t)(rnd() % 900), kts = tk > t - 200 ? tk : t - 200;
				put(&b, b.stream, "kernel_k", b.cat_k, kts, kd);
				v[n++] = (struct ref_iv){ kts, kts + kd, 0 };
				tk = kts + kd + (int64_t)(rnd() % 100);
			}
		}
		steps[st][0] = start;
		steps[st][1] = (t > tk ? t : tk) + 500 - start;
		step(&b, st, start, steps[st][1]);
		t = start + steps[st][1] + 1000;
		tk = t;
	}
	s = finish(&b);
	{
		struct tft_advise_opts o = { .all_steps = true, .checkers = 1u << TFT_ADVISE_STEP_TIME };
		r = s ? run(s, &o) : NULL;
	}
	qsort(v, n, sizeof(*v), cmp_ref);
	ok(r && r->nsteps == 2, "big steps: 2 steps (%zu slices, ~900k in the second)", n);
	ok(r && r->slabs == 3, "big steps: read in %u slabs (want 3: the second step in two pieces)", r ? r->slabs : 0);
	for (size_t i = 0; r && i < r->nsteps && i < 2; i++) {
		int64_t w0 = steps[i][0], w1 = steps[i][0] + steps[i][1];
		int64_t dev = ref_measure(v, n, 0, w0, w1), all = ref_measure(v, n, 4, w0, w1), first = INT64_MAX;
		for (size_t k = 0; k < n; k++)
			if (v[k].b > w0 && v[k].a < w1) {
				first = v[k].a > w0 ? v[k].a : w0;
				break;
			}
		int64_t lead = first == INT64_MAX ? 0 : first - w0;
		if (r->steps[i].part_ns[TFT_ADVISE_DEVICE_COMPUTE] != dev ||
		    r->steps[i].part_ns[TFT_ADVISE_HOST_COMPUTE] != all - dev ||
		    r->steps[i].part_ns[TFT_ADVISE_INPUT] != lead ||
		    r->steps[i].part_ns[TFT_ADVISE_IDLE] != (w1 - w0) - all - lead) {
			printf("# step %zu: device %lld want %lld, host %lld want %lld, input %lld want %lld\n", i,
			       (long long)r->steps[i].part_ns[0], (long long)dev, (long long)r->steps[i].part_ns[4],
			       (long long)(all - dev), (long long)r->steps[i].part_ns[3], (long long)lead);
			same = false;
		}
	}
	ok(r && same, "big steps: each part as the definition computes it, the big step read in pieces");
	ok(sums(r), "big steps: the parts sum to each step's duration");
	tft_advise_destroy(r);
	if (s)
		tft_session_close(s);
	free(v);
}

/* ---- TF RunMetadata ------------------------------------------------------------------------ */

#define T0 1500000000000000LL
#define CPU "/job:localhost/replica:0/task:0/device:CPU:0"
#define GPU "/job:localhost/replica:0/task:0/device:GPU:0"

/* A NodeExecStats (times in us). */
static void node(struct enc *dev, const char *name, int64_t start, int64_t dur, const char *label)
{
	struct enc n = { 0 };

	e_str(&n, 1, name);
	e_int(&n, 2, (uint64_t)start);
	e_int(&n, 3, 0);
	e_int(&n, 4, (uint64_t)dur);
	e_int(&n, 5, (uint64_t)dur);
	if (label)
		e_str(&n, 8, label);
	e_msg(dev, 2, &n);
}

static void device(struct enc *ss, const char *name, struct enc *dev)
{
	struct enc d = { 0 };

	e_str(&d, 1, name);
	for (size_t i = 0; i < dev->len; i++)
		e_byte(&d, dev->p[i]);
	free(dev->p);
	memset(dev, 0, sizeof(*dev));
	e_msg(ss, 1, &d);
}

/* A GraphDef NodeDef (name 1, op 2, device 4, attr 5: key 1, AttrValue 2 {s 2 | type 6}). */
static void gnode(struct enc *g, const char *name, const char *op, const char *dev, const char *fmt, int dtype)
{
	struct enc n = { 0 }, entry = { 0 }, val = { 0 };

	e_str(&n, 1, name);
	e_str(&n, 2, op);
	e_str(&n, 4, dev);
	if (fmt) {
		e_str(&val, 2, fmt);
		e_str(&entry, 1, "data_format");
		e_msg(&entry, 2, &val);
		e_msg(&n, 5, &entry);
	}
	if (dtype) {
		e_int(&val, 6, (uint64_t)dtype);
		e_str(&entry, 1, "T");
		e_msg(&entry, 2, &val);
		e_msg(&n, 5, &entry);
	}
	e_msg(g, 1, &n);
}

enum { DT_FLOAT = 1, DT_DOUBLE = 2 };

struct tf_case {
	bool transposes;   /* LayoutOptimizer transposes around the convs */
	int conv_dtype;    /* the convs' dtype in the graph */
	bool f64_op;       /* "scale" (Mul) on the GPU is float64 */
	int64_t loader_us; /* IteratorGetNext on the CPU */
	bool cpu_op;       /* a 3 ms SparseToDense on the CPU */
};

/* One step (a RunMetadata) starting at T0 + at us: 4 convs on the GPU, then a Mul. */
static struct enc tf_step(const struct tf_case *c, int64_t at)
{
	struct enc rm = { 0 }, ss = { 0 }, dev = { 0 }, g = { 0 };
	int64_t t = T0 + at, k;

	node(&dev, "IteratorGetNext", t, c->loader_us, "IteratorGetNext = IteratorGetNext(Iterator)");
	t += c->loader_us + 10;
	if (c->cpu_op) {
		node(&dev, "labels/SparseToDense", t, 3000, "labels/SparseToDense = SparseToDense(a, b, c)");
		t += 3010;
	}
	device(&ss, CPU, &dev);
	k = t + 20;
	for (int i = 0; i < 4; i++) {
		char nm[64], lb[160];
		snprintf(nm, sizeof(nm), "conv%d/Conv2D", i);
		snprintf(lb, sizeof(lb), "%s = Conv2D(x, w%d)", nm, i);
		node(&dev, nm, t + i * 15, 10, lb);
	}
	node(&dev, "scale", t + 70, 10, "scale = Mul(conv3/Conv2D, s)");
	device(&ss, GPU, &dev);
	for (int i = 0; i < 4; i++) {
		char lb[200];
		if (c->transposes) {
			snprintf(lb, sizeof(lb), "void tensorflow::functor::SwapDimension1And2InTensor3UsingTiles<float>@@conv%d/Conv2D-0-TransposeNHWCToNCHW-LayoutOptimizer:Transpose", i);
			node(&dev, "conv-0-TransposeNHWCToNCHW-LayoutOptimizer:Transpose", k, 300, lb);
			k += 300;
		}
		snprintf(lb, sizeof(lb), "volta_scudnn_128x64_relu_interior_nn_v1@@conv%d/Conv2D:Conv2D", i);
		{
			char nm[64];
			snprintf(nm, sizeof(nm), "conv%d/Conv2D:Conv2D", i);
			node(&dev, nm, k, 1000, lb);
		}
		k += 1000;
		if (!c->transposes)
			k += 300;
	}
	node(&dev, "scale:Mul", k, 800, "void Eigen::internal::EigenMetaKernel<Mul>@@scale:Mul");
	device(&ss, "/job:localhost/replica:0/task:0/device:GPU:0/stream:7", &dev);
	e_msg(&rm, 1, &ss);
	for (int i = 0; i < 4; i++) {
		char nm[64];
		snprintf(nm, sizeof(nm), "conv%d/Conv2D", i);
		gnode(&g, nm, "Conv2D", GPU, "NHWC", c->conv_dtype);
	}
	gnode(&g, "scale", "Mul", GPU, NULL, c->f64_op ? DT_DOUBLE : DT_FLOAT);
	gnode(&g, "IteratorGetNext", "IteratorGetNext", CPU, NULL, 0);
	e_msg(&rm, 3, &g);
	return rm;
}

static struct tft_session *tf_session(const struct tf_case *c)
{
	char path[512];
	struct tft_error err;
	struct tft_writer *w;
	int rc = 0;

	snprintf(path, sizeof(path), "%s/tf%d.tft", tmpdir, seq++);
	tft_error_clear(&err);
	if (!(w = tft_writer_open(path, NULL, &err)))
		return NULL;
	for (int i = 0; i < 3 && !rc; i++) {
		struct enc rm = tf_step(c, (int64_t)i * 100000);
		char name[32];
		snprintf(name, sizeof(name), "step%d.pb", i);
		rc = tft_runmeta_ingest_as(w, name, rm.p, rm.len, TFT_PB_FMT_RUNMETA, NULL, &err);
		free(rm.p);
	}
	if (rc) {
		printf("# import: %s\n", err.msg);
		tft_writer_abort(w);
		return NULL;
	}
	if (tft_writer_close(w, &err))
		return NULL;
	return tft_session_open(path, &err);
}

static void tf_pair(const char *what, struct tf_case bad, struct tf_case good, int checker, const char *words,
		    const char *advice)
{
	struct tft_session *s1 = tf_session(&bad), *s2 = tf_session(&good);
	struct tft_advise_opts o = { .all_steps = true };
	struct tft_advise_result *r1 = s1 ? run(s1, &o) : NULL, *r2 = s2 ? run(s2, &o) : NULL;
	const struct tft_advise_finding *f = find(r1, checker, words);

	if (!f)
		for (size_t i = 0; r1 && i < r1->nfindings; i++)
			printf("#   found: %s: %s\n", tft_advise_checker_name(r1->findings[i].checker), r1->findings[i].title);
	ok(f != NULL, "TF %s: '%s' found", what, words);
	ok(r2 && !find(r2, checker, words), "TF %s: not found without the problem", what);
	if (advice)
		ok(f && f->recommendation && strstr(f->recommendation, advice), "TF %s: the advice says %s", what, advice);
	ok(f && f->nevidence > 0, "TF %s: with evidence", what);
	ok(sums(r1) && sums(r2), "TF %s: every step's parts sum to its duration", what);
	tft_advise_destroy(r1);
	tft_advise_destroy(r2);
	if (s1)
		tft_session_close(s1);
	if (s2)
		tft_session_close(s2);
}

static void test_tf(void)
{
	struct tf_case base = { .conv_dtype = DT_FLOAT, .loader_us = 20 };
	struct tf_case bad;

	bad = base;
	bad.transposes = true;
	tf_pair("NHWC convolutions in float32", bad, base, TFT_ADVISE_OP_CONFIG, "Layout conversions", "channels_first");
	bad = base;
	bad.f64_op = true;
	tf_pair("float64 on the GPU", bad, base, TFT_ADVISE_OP_CONFIG, "float64 ops run on the accelerator", NULL);
	bad = base;
	bad.loader_us = 6000;
	tf_pair("input-bound", bad, base, TFT_ADVISE_STEP_TIME, "Input-pipeline bound", "tf.data");
	bad = base;
	bad.cpu_op = true;
	tf_pair("CPU op beside the GPU", bad, base, TFT_ADVISE_EXPENSIVE, "run on the CPU although", NULL);
}

int main(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/tft-test-advise-XXXXXX");
	if (!mkdtemp(tmpdir))
		return 1;
	test_ivset();
	test_breakdown_by_hand();
	test_big_steps();
	test_tf();
	{
		char cmd[600];
		if (getenv("KEEP")) return done_testing();
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd) != 0)
			printf("# could not remove %s\n", tmpdir);
	}
	return done_testing();
}
