/* SPDX-License-Identifier: MIT */
/* Unit tests for the XSpace importer (collect/ingest_xspace.h, collect/xspace/). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collect/ingest_xspace.h"
#include "store/session.h"
#include "store/writer.h"
#include "importfix.h"
#include "pbenc.h"
#include "session_digest.h"
#include "tap.h"

/* ---- encoder ------------------------------------------------------------------- */

/* XStat into field `num` of e. kind: 'i' int64, 'u' uint64, 'd' double, 's' str, 'r' ref, 'b' bytes. */
static void x_stat(struct enc *e, uint32_t num, int64_t meta, char kind, uint64_t iv, double dv,
		   const char *sv)
{
	struct enc s = {0};

	e_int(&s, 1, (uint64_t)meta);
	switch (kind) {
	case 'i': e_int(&s, 4, iv); break;
	case 'u': e_int(&s, 3, iv); break;
	case 'd': e_f64(&s, 2, dv); break;
	case 's': e_str(&s, 5, sv); break;
	case 'b': e_str(&s, 6, sv); break;
	case 'r': e_int(&s, 7, iv); break;
	}
	e_msg(e, num, &s);
}

static void stat_meta(struct enc *plane, int64_t id, const char *name)
{
	struct enc v = {0}, ent = {0};

	e_int(&v, 1, (uint64_t)id);
	e_str(&v, 2, name);
	e_int(&ent, 1, (uint64_t)id);
	e_msg(&ent, 2, &v);
	e_msg(plane, 5, &ent);
}

static void event_meta(struct enc *plane, int64_t id, const char *name, const char *display,
		       struct enc *stats)
{
	struct enc v = {0}, ent = {0};

	e_int(&v, 1, (uint64_t)id);
	e_str(&v, 2, name);
	if (display)
		e_str(&v, 4, display);
	if (stats && stats->len) {
		/* stats already hold encoded field-5 entries */
		for (size_t i = 0; i < stats->len; i++)
			e_byte(&v, stats->p[i]);
		free(stats->p);
		memset(stats, 0, sizeof(*stats));
	}
	e_int(&ent, 1, (uint64_t)id);
	e_msg(&ent, 2, &v);
	e_msg(plane, 4, &ent);
}

/* ---- session helpers ----------------------------------------------------------------- */

static char tmpdir[256];

static struct tft_session *import_mem_opts(const char *name, const uint8_t *p, size_t n,
					   const struct tft_ingest_opts *opts, int *rc,
					   struct tft_error *err);

static struct tft_session *import_mem(const char *name, const uint8_t *p, size_t n, int *rc,
				      struct tft_error *err)
{
	return import_mem_opts(name, p, n, NULL, rc, err);
}

struct mem_input {
	const char *name;
	const uint8_t *p;
	size_t n;
	const struct tft_ingest_opts *opts;
};

static int ingest_mem(struct tft_writer *w, void *ctx, struct tft_error *err)
{
	const struct mem_input *in = ctx;

	return tft_xspace_ingest(w, in->name, in->p, in->n, in->opts, err);
}

static struct tft_session *import_mem_opts(const char *name, const uint8_t *p, size_t n,
					   const struct tft_ingest_opts *opts, int *rc,
					   struct tft_error *err)
{
	struct mem_input in = { name, p, n, opts };
	const char *dump = getenv("TFT_XSPACE_DUMP");

	/* TFT_XSPACE_DUMP=DIR: each generated input also to DIR/NNNN.xplane.pb (same-output checks) */
	if (dump && *dump) {
		static unsigned seq;
		char path[512];
		FILE *f;

		snprintf(path, sizeof(path), "%s/%04u.xplane.pb", dump, seq++);
		f = fopen(path, "wb");
		if (f) {
			if (n)
				fwrite(p, 1, n, f);
			fclose(f);
		}
	}
	return tft_test_import(tmpdir, ingest_mem, &in, rc, err);
}

struct got_ev {
	int64_t ts, dur;
	int kind;
	char name[96];
	int nargs;
	struct {
		char key[32];
		int type;
		int64_t i;
		double d;
		char s[96];
	} args[16];
};

struct evlist {
	struct tft_session *s;
	struct got_ev ev[64];
	int n;
};

static int collect_ev(void *ctx, const struct tft_event *ev)
{
	struct evlist *l = ctx;
	struct got_ev *g;

	if (l->n >= 64)
		return 0;
	g = &l->ev[l->n++];
	memset(g, 0, sizeof(*g));
	g->ts = ev->ts_ns;
	g->dur = ev->dur_ns;
	g->kind = ev->kind;
	snprintf(g->name, sizeof(g->name), "%s", tft_session_str(l->s, ev->name, NULL));
	for (int i = 0; i < ev->nargs && i < 16; i++) {
		const struct tft_arg *a = &ev->args[i];

		snprintf(g->args[i].key, sizeof(g->args[i].key), "%s", tft_session_str(l->s, a->key, NULL));
		g->args[i].type = (int)a->type;
		if (a->type == TFT_ARG_INT || a->type == TFT_ARG_BOOL)
			g->args[i].i = a->v.i;
		else if (a->type == TFT_ARG_DOUBLE)
			g->args[i].d = a->v.d;
		else if (a->type == TFT_ARG_STR || a->type == TFT_ARG_JSON)
			snprintf(g->args[i].s, sizeof(g->args[i].s), "%s",
				 tft_session_str(l->s, a->v.str, NULL));
		g->nargs++;
	}
	return 0;
}

static const struct tft_track *track_named(struct tft_session *s, const char *name)
{
	for (uint32_t i = 0; i < tft_session_track_count(s); i++) {
		const struct tft_track *t = tft_session_track(s, i);

		if (t && strcmp(tft_session_str(s, t->name, NULL), name) == 0)
			return t;
	}
	return NULL;
}

static void events_of(struct tft_session *s, const struct tft_track *t, struct evlist *l)
{
	struct tft_error err;

	l->s = s;
	l->n = 0;
	if (t)
		tft_session_scan(s, t->id, INT64_MIN, INT64_MAX, 0, collect_ev, l, &err);
}

static const struct got_ev *find_ev(const struct evlist *l, const char *name)
{
	for (int i = 0; i < l->n; i++)
		if (strcmp(l->ev[i].name, name) == 0)
			return &l->ev[i];
	return NULL;
}

/* Index of arg `key` in g, or -1. */
static int arg_of(const struct got_ev *g, const char *key)
{
	for (int i = 0; g && i < g->nargs; i++)
		if (strcmp(g->args[i].key, key) == 0)
			return i;
	return -1;
}

struct flowlist {
	struct tft_flow f[16];
	int n;
};

static int collect_flow(void *ctx, const struct tft_flow *f)
{
	struct flowlist *l = ctx;

	if (l->n < 16)
		l->f[l->n++] = *f;
	return 0;
}

/* ---- synthetic XSpace ------------------------------------------------------------------ */

static void build_space(struct enc *space)
{
	struct enc host = {0}, gpu = {0}, gpu1 = {0}, line = {0}, ev = {0}, st = {0};

	/* Host plane: lines first (wire order), metadata after. */
	e_int(&host, 1, 7);
	e_str(&host, 2, "/host:CPU");
	e_int(&line, 1, 11);
	e_str(&line, 2, "python");
	e_int(&line, 3, 1000);
	/* e1: launch, corr 42 */
	e_int(&ev, 1, 1);
	e_int(&ev, 2, 1500);
	e_int(&ev, 3, 3000000);
	x_stat(&ev, 4, 1, 'u', 42, 0, NULL);
	x_stat(&ev, 4, 2, 's', 0, 0, "model/dense");
	e_msg(&line, 4, &ev);
	/* e2: instant with group_id and an override of a metadata stat */
	e_int(&ev, 1, 2);
	e_int(&ev, 2, 10000000);
	x_stat(&ev, 4, 3, 'i', 5, 0, NULL);
	x_stat(&ev, 4, 5, 'i', 200, 0, NULL);
	e_msg(&line, 4, &ev);
	/* e3: aggregated (num_occurrences) */
	e_int(&ev, 1, 2);
	e_int(&ev, 5, 3);
	e_int(&ev, 3, 2000000);
	e_msg(&line, 4, &ev);
	/* e4: unknown metadata */
	e_int(&ev, 1, 99);
	e_int(&ev, 2, 20000000);
	e_int(&ev, 3, 1000);
	e_msg(&line, 4, &ev);
	e_msg(&host, 3, &line);
	e_int(&line, 1, 12);
	e_str(&line, 2, "tf_Compute/1");
	e_msg(&host, 3, &line); /* no events: no track */
	e_int(&line, 1, 13);
	e_str(&line, 2, "collective_ops/5");
	e_int(&line, 3, 0);
	e_int(&ev, 1, 1);
	e_int(&ev, 2, 5000);
	e_int(&ev, 3, 1000);
	e_msg(&line, 4, &ev);
	e_msg(&host, 3, &line);
	x_stat(&st, 5, 5, 'i', 100, 0, NULL); /* metadata-level flops = 100 */
	event_meta(&host, 1, "cuLaunchKernel", NULL, NULL);
	event_meta(&host, 2, "model/dense/MatMul:MatMul", "MatMul", &st);
	stat_meta(&host, 1, "correlation_id");
	stat_meta(&host, 2, "tf_op");
	stat_meta(&host, 3, "group_id");
	stat_meta(&host, 5, "flops");
	e_msg(space, 1, &host);

	/* GPU plane. */
	e_int(&gpu, 1, 1);
	e_str(&gpu, 2, "/device:GPU:0");
	e_int(&line, 1, 7);
	e_str(&line, 2, "Stream #7(Compute)");
	e_int(&line, 3, 5000);
	e_int(&ev, 1, 1);
	e_int(&ev, 2, 2000);
	e_int(&ev, 3, 1499);
	x_stat(&ev, 4, 1, 'u', 42, 0, NULL);
	x_stat(&ev, 4, 2, 'r', 3, 0, NULL);
	x_stat(&ev, 4, 6, 'd', 0, 1.5, NULL);
	x_stat(&ev, 4, 8, 'u', 18446744073709551615ull, 0, NULL);
	x_stat(&ev, 4, 9, 'b', 0, 0, "\x01\x02");
	e_msg(&line, 4, &ev);
	e_msg(&gpu, 3, &line);
	e_int(&line, 1, 8);
	e_str(&line, 2, "XLA Ops");
	e_int(&line, 3, 5000);
	e_int(&ev, 1, 3);
	e_int(&ev, 3, 1000000);
	e_msg(&line, 4, &ev);
	e_msg(&gpu, 3, &line);
	e_int(&line, 1, 9);
	e_str(&line, 2, "Steps");
	e_int(&line, 3, 5000);
	e_int(&ev, 1, 2);
	e_int(&ev, 3, 10000000);
	x_stat(&ev, 4, 4, 'i', 5, 0, NULL);
	x_stat(&ev, 4, 5, 'i', 12, 0, NULL);
	e_msg(&line, 4, &ev);
	e_msg(&gpu, 3, &line);
	e_int(&line, 1, 10);
	e_str(&line, 2, "NCCL kernels");
	e_int(&line, 3, 5000);
	e_int(&ev, 1, 1);
	e_int(&ev, 3, 5000);
	e_msg(&line, 4, &ev);
	e_msg(&gpu, 3, &line);
	event_meta(&gpu, 1, "kernel_a", NULL, NULL);
	event_meta(&gpu, 2, "12", NULL, NULL);
	event_meta(&gpu, 3, "fusion.1", "fusion.1", NULL);
	stat_meta(&gpu, 1, "correlation_id");
	stat_meta(&gpu, 2, "kernel_details");
	stat_meta(&gpu, 3, "regs:32 static_shared:0");
	stat_meta(&gpu, 4, "group_id");
	stat_meta(&gpu, 5, "step_num");
	stat_meta(&gpu, 6, "bytes_accessed");
	stat_meta(&gpu, 7, "memory_bandwidth");
	stat_meta(&gpu, 8, "big");
	stat_meta(&gpu, 9, "blob");
	x_stat(&gpu, 6, 7, 'u', 900000000000ull, 0, NULL);
	e_msg(space, 1, &gpu);

	/* A GPU without lines: no process. */
	e_int(&gpu1, 1, 2);
	e_str(&gpu1, 2, "/device:GPU:1");
	stat_meta(&gpu1, 1, "clock_rate");
	e_msg(space, 1, &gpu1);

	e_str(space, 2, "an error");
	e_str(space, 4, "hostA");
}

static void test_synthetic(void)
{
	struct enc sp = {0};
	struct tft_error err;
	struct tft_session *s;
	const struct tft_track *t;
	const struct got_ev *g;
	struct evlist *l = calloc(1, sizeof(*l));
	struct flowlist fl = {0};
	int rc, k, hostp = -1, gpup = -1;

	build_space(&sp);
	s = import_mem("/some/dir/other.xplane.pb", sp.p, sp.len, &rc, &err);
	if (!ok(s != NULL && rc == 0, "synthetic XSpace imports")) {
		printf("#   rc %d: %s at %lld\n", rc, err.msg, (long long)err.offset);
		free(sp.p);
		free(l);
		return;
	}
	is_int(tft_session_process_count(s), 2, "two processes (plane without lines skipped)");
	for (uint32_t i = 0; i < tft_session_process_count(s); i++) {
		const struct tft_process *p = tft_session_process(s, i);
		const char *nm = tft_session_str(s, p->name, NULL);

		if (!strcmp(nm, "/host:CPU"))
			hostp = (int)i;
		if (!strcmp(nm, "/device:GPU:0"))
			gpup = (int)i;
	}
	ok(hostp >= 0 && gpup >= 0, "processes named after planes");
	if (hostp >= 0 && gpup >= 0) {
		const struct tft_process *hp = tft_session_process(s, (uint32_t)hostp);
		const struct tft_process *gp = tft_session_process(s, (uint32_t)gpup);

		is_str(tft_session_str(s, hp->host, NULL), "hostA", "host from XSpace.hostnames");
		is_int(hp->pid, 7, "pid = plane id");
		is_int(gp->pid, 1, "GPU pid = plane id");
		ok(strstr(tft_session_str(s, gp->labels, NULL), "memory_bandwidth=900000000000") != NULL,
		   "plane stats in the process labels");
	}
	is_int(tft_session_track_count(s), 6, "six tracks (line without events skipped)");
	t = track_named(s, "python");
	ok(t && t->kind == TFT_TRACK_THREAD && t->tid == 11, "host line -> thread track, tid = line id");
	t = track_named(s, "collective_ops/5");
	ok(t && t->kind == TFT_TRACK_COMM, "collective line -> comm track");
	t = track_named(s, "Stream #7(Compute)");
	ok(t && t->kind == TFT_TRACK_GPU_STREAM, "stream line -> gpu_stream track");
	t = track_named(s, "XLA Ops");
	ok(t && t->kind == TFT_TRACK_DEVICE, "XLA Ops -> device track");
	t = track_named(s, "Steps");
	ok(t && t->kind == TFT_TRACK_DEVICE, "Steps -> device track");
	t = track_named(s, "NCCL kernels");
	ok(t && t->kind == TFT_TRACK_COMM, "nccl line -> comm track");

	events_of(s, track_named(s, "python"), l);
	is_int(l->n, 4, "four events on the python line");
	g = find_ev(l, "cuLaunchKernel");
	ok(g && g->ts == 1002 && g->dur == 3000 && g->kind == TFT_EV_SLICE,
	   "slice: ts = line ts + round(1.5 ns), end rounded (3001.5 -> 3002)");
	k = arg_of(g, "correlation_id");
	ok(k >= 0 && g->args[k].type == TFT_ARG_INT && g->args[k].i == 42, "uint64 stat -> int arg");
	k = arg_of(g, "tf_op");
	ok(k >= 0 && !strcmp(g->args[k].s, "model/dense"), "str stat -> string arg");
	g = NULL;
	for (int i = 0; i < l->n; i++)
		if (!strcmp(l->ev[i].name, "MatMul") && l->ev[i].kind == TFT_EV_INSTANT)
			g = &l->ev[i];
	ok(g && g->ts == 11000 && g->dur == 0, "zero duration -> instant, named by display_name");
	k = arg_of(g, "flops");
	ok(k >= 0 && g->args[k].i == 200, "event stat overrides the metadata-level stat");
	ok(arg_of(g, "flops") == k && g && g->nargs >= 3, "no duplicate arg for an overridden stat");
	k = arg_of(g, "long_name");
	ok(k >= 0 && !strcmp(g->args[k].s, "model/dense/MatMul:MatMul"), "long_name arg");
	g = NULL;
	for (int i = 0; i < l->n; i++)
		if (!strcmp(l->ev[i].name, "MatMul") && l->ev[i].kind == TFT_EV_SLICE)
			g = &l->ev[i];
	ok(g && g->ts == 1000 && g->dur == 2000, "aggregated event at line start");
	k = arg_of(g, "num_occurrences");
	ok(k >= 0 && g->args[k].i == 3, "num_occurrences arg");
	k = arg_of(g, "flops");
	ok(k >= 0 && g->args[k].i == 100, "metadata-level stat as arg");
	g = find_ev(l, "#99");
	k = arg_of(g, "metadata_id");
	ok(g && k >= 0 && g->args[k].i == 99, "unknown metadata -> #id name + metadata_id arg");

	events_of(s, track_named(s, "Stream #7(Compute)"), l);
	g = find_ev(l, "kernel_a");
	ok(g && g->ts == 5002 && g->dur == 1, "kernel ts/dur rounded from ps (2.0 .. 3.499 ns)");
	k = arg_of(g, "kernel_details");
	ok(k >= 0 && !strcmp(g->args[k].s, "regs:32 static_shared:0"), "ref stat resolved via stat metadata");
	k = arg_of(g, "bytes_accessed");
	ok(k >= 0 && g->args[k].type == TFT_ARG_DOUBLE && g->args[k].d == 1.5, "double stat");
	k = arg_of(g, "big");
	ok(k >= 0 && !strcmp(g->args[k].s, "18446744073709551615"), "uint64 above INT64_MAX as text");
	k = arg_of(g, "blob");
	ok(k >= 0 && !strcmp(g->args[k].s, "<2 bytes>"), "binary bytes stat summarised");

	events_of(s, track_named(s, "XLA Ops"), l);
	ok(l->n == 1 && !strcmp(l->ev[0].name, "fusion.1") && arg_of(&l->ev[0], "long_name") < 0,
	   "display_name equal to name: no long_name");

	tft_session_flows(s, collect_flow, &fl, &err);
	is_int(fl.n, 1, "one launch flow (correlation_id 42)");
	if (fl.n == 1) {
		ok(fl.f[0].flow_id == 42 && fl.f[0].src_track == track_named(s, "python")->id &&
			   fl.f[0].dst_track == track_named(s, "Stream #7(Compute)")->id &&
			   fl.f[0].src_ts_ns == 1002 && fl.f[0].dst_ts_ns == 5002,
		   "flow host launch -> device kernel");
		is_str(tft_session_str(s, fl.f[0].cat, NULL), "launch", "flow cat");
	}
	is_int(tft_session_step_count(s), 1, "one step from the Steps line");
	if (tft_session_step_count(s) == 1) {
		const struct tft_step *st = tft_session_step(s, 0);

		ok(st->index == 12 && st->start_ns == 5000 && st->dur_ns == 10000 && st->traced,
		   "step index from step_num, span from the Steps event");
		is_str(tft_session_str(s, st->name, NULL), "12", "step name");
	}
	is_str(tft_session_meta(s, "xspace_error_messages"), "an error", "the profiler's error text kept");
	is_str(tft_session_meta(s, "xspace_errors"), "1", "... and counted");
	is_str(tft_session_meta(s, "format"), "xspace", "meta format");
	is_str(tft_session_meta(s, "producer"), "TensorFlow/JAX profiler", "meta producer");
	tft_session_close(s);

	/* Without hostnames: host from the file name. */
	{
		struct enc sp2 = {0}, pl = {0}, ln = {0}, e1 = {0};

		e_str(&pl, 2, "/host:CPU");
		e_int(&ln, 1, 1);
		e_str(&ln, 2, "main");
		e_int(&e1, 1, 1);
		e_int(&e1, 3, 10);
		e_msg(&ln, 4, &e1);
		e_msg(&pl, 3, &ln);
		e_msg(&sp2, 1, &pl);
		s = import_mem("/x/y/worker-3.xplane.pb", sp2.p, sp2.len, &rc, &err);
		ok(s && tft_session_process_count(s) == 1 &&
			   !strcmp(tft_session_str(s, tft_session_process(s, 0)->host, NULL), "worker-3"),
		   "host from the file name");
		if (s)
			tft_session_close(s);
		free(sp2.p);
	}
	free(sp.p);
	free(l);
}

/* ---- real files ------------------------------------------------------------------------ */

static const char *real_files[] = {
	"tracelens/jax_mi300/jax08_attention/tw003.xplane.pb",
	"tracelens/jax_mi300/jax08_elementwise/tw003.xplane.pb",
	"tracelens/jax_mi300/jax08_gemm/tw003.xplane.pb",
	"tracelens/jax_mi300/jax_conv_minimal_legacy/chi-mi300x-013.ord.vultr.cpe.ice.amd.com.xplane.pb",
	"tf-profiler-demo/GPU-multi-worker/34.83.195.179_6003.xplane.pb",
};
static const long real_events[] = {4380, 4623, 3782, 6024, 23128}; /* CATALOGUE.md */

static uint8_t *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *p;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	p = malloc(n > 0 ? (size_t)n : 1);
	if (p && fread(p, 1, (size_t)n, f) != (size_t)n) {
		free(p);
		p = NULL;
	}
	fclose(f);
	*len = (size_t)n;
	return p;
}

/* Independent count from tests/corpus/pbdecode.py; -1 if python is not available. */
static long pbdecode_events(const char *path)
{
	char cmd[1024], line[256];
	FILE *f;
	long n = -1;

	if (access("tests/corpus/pbdecode.py", R_OK) != 0)
		return -1;
	snprintf(cmd, sizeof(cmd), "python3 tests/corpus/pbdecode.py xspace '%.900s' 2>/dev/null", path);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	if (fgets(line, sizeof(line), f)) {
		const char *e = strstr(line, "events=");

		if (e)
			n = atol(e + 7);
	}
	pclose(f);
	return n;
}

static int import_quiet(const uint8_t *p, size_t n, struct tft_error *err)
{
	struct tft_writer *w;
	int r;

	tft_error_clear(err); /* tft_error_set keeps the first error: start clean */
	w = tft_writer_open(":memory:", NULL, err);
	if (!w)
		return err->code;
	r = tft_xspace_ingest(w, "mutant.xplane.pb", p, n, NULL, err);
	tft_writer_abort(w);
	return r;
}

/*
 * Two hosts' XSpaces concatenated (`cat a.xplane.pb b.xplane.pb`): each
 * host's planes carry its own host name, and its launch flows and steps are
 * its own (both hosts use correlation id 42).
 */
static void test_concatenated(void)
{
	struct enc a = {0}, b = {0};
	struct tft_error err;
	struct tft_session *s;
	struct flowlist fl = {0};
	uint8_t *both;
	int rc, na = 0, nb = 0, same = 0;

	build_space(&a);
	build_space(&b);
	memcpy(b.p + b.len - 5, "hostB", 5); /* the hostnames field comes last */
	both = malloc(a.len + (a.len > b.len ? a.len : b.len));
	memcpy(both, a.p, a.len);
	memcpy(both + a.len, b.p, b.len);
	s = import_mem("two.xplane.pb", both, a.len + b.len, &rc, &err);
	if (!ok(s != NULL, "concatenated XSpaces: imported (%s)", err.msg))
		goto out;
	for (uint32_t i = 0; i < tft_session_process_count(s); i++) {
		const char *h = tft_session_str(s, tft_session_process(s, i)->host, NULL);

		na += !strcmp(h, "hostA");
		nb += !strcmp(h, "hostB");
	}
	ok(na == 2 && nb == 2, "concatenated XSpaces: each host's planes carry its name (%d, %d)", na, nb);
	tft_session_flows(s, collect_flow, &fl, &err);
	for (int i = 0; i < fl.n; i++) {
		const struct tft_process *src =
			tft_session_process(s, tft_session_track(s, fl.f[i].src_track)->process);
		const struct tft_process *dst =
			tft_session_process(s, tft_session_track(s, fl.f[i].dst_track)->process);

		same += src->host == dst->host;
	}
	ok(fl.n == 2 && same == 2, "concatenated XSpaces: a launch flow per host, within it (%d, %d)",
	   fl.n, same);
	is_int(tft_session_step_count(s), 2, "concatenated XSpaces: a step per host");
	if (tft_session_step_count(s) == 2)
		ok(tft_session_step(s, 0)->process != tft_session_step(s, 1)->process,
		   "concatenated XSpaces: each step on its host");
	tft_session_close(s);
	/* the same host twice: the second one told apart by the file name */
	memcpy(both + a.len, a.p, a.len);
	s = import_mem("twice.xplane.pb", both, 2 * a.len, &rc, &err);
	if (ok(s != NULL, "the same host twice: imported (%s)", err.msg)) {
		na = nb = 0;
		for (uint32_t i = 0; i < tft_session_process_count(s); i++) {
			const char *h = tft_session_str(s, tft_session_process(s, i)->host, NULL);

			na += !strcmp(h, "hostA");
			nb += !strcmp(h, "hostA (twice.xplane.pb)");
		}
		ok(na == 2 && nb == 2, "the same host twice: the second named after its file (%d, %d)", na, nb);
		tft_session_close(s);
	}
out:
	free(both);
	free(a.p);
	free(b.p);
}

/*
 * The profiler saves line timestamps relative to the profile's start and
 * the start itself in its "Task Environment" plane: the host's clock is
 * that start plus the line's time (a line that began before the profile,
 * which TF does not normalize, keeps its epoch time).
 */
static void test_host_clock(void)
{
	const int64_t start = 1771595650217823548LL;
	struct enc sp = {0}, te = {0}, host = {0}, line = {0}, ev = {0};
	struct tft_error err;
	struct tft_session *s;
	struct evlist *l = calloc(1, sizeof(*l));
	const struct got_ev *a, *b;
	int rc;

	e_int(&host, 1, 1);
	e_str(&host, 2, "/host:CPU");
	e_int(&line, 1, 1);
	e_str(&line, 2, "main");
	e_int(&line, 3, 0); /* normalized */
	e_int(&ev, 1, 1);
	e_int(&ev, 2, 1000); /* 1 ns */
	e_int(&ev, 3, 5000);
	e_msg(&line, 4, &ev);
	e_msg(&host, 3, &line);
	e_int(&line, 1, 2);
	e_str(&line, 2, "other");
	e_int(&line, 3, (uint64_t)(start - 2000)); /* began before the profile: not normalized */
	e_int(&ev, 1, 2);
	e_int(&ev, 3, 5000);
	e_msg(&line, 4, &ev);
	e_msg(&host, 3, &line);
	event_meta(&host, 1, "a", NULL, NULL);
	event_meta(&host, 2, "b", NULL, NULL);
	e_msg(&sp, 1, &host);
	/* (after the planes it applies to, as TF adds it) */
	e_int(&te, 1, 9);
	e_str(&te, 2, "Task Environment");
	stat_meta(&te, 3, "profile_start_time");
	stat_meta(&te, 4, "profile_stop_time");
	x_stat(&te, 6, 4, 'u', (uint64_t)(start + 1000000), 0, NULL);
	x_stat(&te, 6, 3, 'u', (uint64_t)start, 0, NULL);
	e_msg(&sp, 1, &te);
	e_str(&sp, 4, "hostA");
	s = import_mem("clock.xplane.pb", sp.p, sp.len, &rc, &err);
	if (ok(s != NULL, "host clock: imported (%s)", err.msg)) {
		events_of(s, track_named(s, "main"), l);
		a = find_ev(l, "a");
		ok(a && a->ts == start + 1, "host clock: a normalized line on the host's clock (%lld)",
		   a ? (long long)a->ts : -1LL);
		events_of(s, track_named(s, "other"), l);
		b = find_ev(l, "b");
		ok(b && b->ts == start - 2000, "host clock: a line that began before the profile keeps its "
		   "epoch time (%lld)", b ? (long long)b->ts : -1LL);
		tft_session_close(s);
	}
	free(sp.p);
	free(l);
}

/* An event whose field key is a longer varint (A2 00, valid protobuf) is still an event. */
static void test_padded_event_key(void)
{
	struct enc sp = {0}, host = {0}, line = {0}, ev = {0};
	struct tft_error err;
	struct tft_session *s;
	int rc;

	e_int(&host, 1, 1);
	e_str(&host, 2, "/host:CPU");
	e_int(&line, 1, 1);
	e_str(&line, 2, "main");
	for (int i = 0; i < 3; i++) {
		e_int(&ev, 1, 1);
		e_int(&ev, 2, (uint64_t)i * 10000);
		e_int(&ev, 3, 5000);
		if (i == 1) { /* field 4, LEN, as the two-byte varint A2 00 */
			e_byte(&line, 0xA2);
			e_byte(&line, 0x00);
			e_varint(&line, ev.len);
			for (size_t k = 0; k < ev.len; k++)
				e_byte(&line, ev.p[k]);
			free(ev.p);
			memset(&ev, 0, sizeof(ev));
		} else {
			e_msg(&line, 4, &ev);
		}
	}
	e_msg(&host, 3, &line);
	event_meta(&host, 1, "a", NULL, NULL);
	e_msg(&sp, 1, &host);
	s = import_mem("padded.xplane.pb", sp.p, sp.len, &rc, &err);
	if (ok(s != NULL, "padded event key: imported (%s)", err.msg)) {
		struct tft_session_summary sum;

		tft_session_get_summary(s, &sum);
		ok(sum.slices == 3, "padded event key: all three events (%llu)", (unsigned long long)sum.slices);
		tft_session_close(s);
	}
	free(sp.p);
}

/* One launch, two device events with its correlation id (a CUDA graph): a flow to each. */
static void test_launch_to_many(void)
{
	struct enc sp = {0}, host = {0}, gpu = {0}, line = {0}, ev = {0};
	struct tft_error err;
	struct tft_session *s;
	struct flowlist fl = {0};
	int rc;

	e_int(&host, 1, 1);
	e_str(&host, 2, "/host:CPU");
	e_int(&line, 1, 1);
	e_str(&line, 2, "main");
	e_int(&ev, 1, 1);
	e_int(&ev, 3, 5000);
	x_stat(&ev, 4, 1, 'u', 43, 0, NULL);
	e_msg(&line, 4, &ev);
	e_msg(&host, 3, &line);
	event_meta(&host, 1, "cudaGraphLaunch", NULL, NULL);
	stat_meta(&host, 1, "correlation_id");
	e_msg(&sp, 1, &host);
	e_int(&gpu, 1, 2);
	e_str(&gpu, 2, "/device:GPU:0");
	e_int(&line, 1, 7);
	e_str(&line, 2, "Stream #7(Compute)");
	for (int i = 0; i < 2; i++) {
		e_int(&ev, 1, 1);
		e_int(&ev, 2, 10000000 + (uint64_t)i * 3000000);
		e_int(&ev, 3, 2000000);
		x_stat(&ev, 4, 1, 'u', 43, 0, NULL);
		e_msg(&line, 4, &ev);
	}
	e_msg(&gpu, 3, &line);
	event_meta(&gpu, 1, "graph_kernel", NULL, NULL);
	stat_meta(&gpu, 1, "correlation_id");
	e_msg(&sp, 1, &gpu);
	s = import_mem("graph.xplane.pb", sp.p, sp.len, &rc, &err);
	if (ok(s != NULL, "launch to many: imported (%s)", err.msg)) {
		tft_session_flows(s, collect_flow, &fl, &err);
		ok(fl.n == 2 && fl.f[0].src_ts_ns == fl.f[1].src_ts_ns &&
			   ((fl.f[0].dst_ts_ns == 10000 && fl.f[1].dst_ts_ns == 13000) ||
			    (fl.f[0].dst_ts_ns == 13000 && fl.f[1].dst_ts_ns == 10000)),
		   "launch to many: a flow from the launch to each kernel (%d)", fl.n);
		tft_session_close(s);
	}
	free(sp.p);
}

static void test_real(const char *data)
{
	char path[2048];
	struct tft_error err;
	uint64_t rng = 0x9E3779B97F4A7C15ull;

	for (size_t i = 0; i < sizeof(real_files) / sizeof(real_files[0]); i++) {
		struct tft_session_summary sum;
		struct tft_session *s;
		uint8_t *buf, *copy;
		size_t len;
		long want;
		int rc, bad = 0, refused = 0, trials;

		snprintf(path, sizeof(path), "%s/%s", data, real_files[i]);
		buf = read_file(path, &len);
		if (!buf) {
			ok(0, "%s not found (TFT_DATA)", real_files[i]);
			continue;
		}
		s = import_mem(path, buf, len, &rc, &err);
		if (!ok(s != NULL, "import %s", real_files[i]))
			printf("#   %s at %lld\n", err.msg, (long long)err.offset);
		if (s) {
			tft_session_get_summary(s, &sum);
			want = pbdecode_events(path);
			if (want < 0) { /* the independent reference is missing: a failure */
				ok(0, "%s: python3 tests/corpus/pbdecode.py gave no count", real_files[i]);
				want = real_events[i];
			}
			if (!ok((long)(sum.slices + sum.instants) == want, "%s: %ld XEvents -> slices+instants",
				real_files[i], want))
				printf("#   got %llu slices + %llu instants\n", (unsigned long long)sum.slices,
				       (unsigned long long)sum.instants);
			is_str(tft_session_meta(s, "format"), "xspace", "format meta");
			tft_session_close(s);
		}
		/* Truncated and bit-flipped copies: refused (EFORMAT) or imported, never a crash. */
		copy = malloc(len);
		trials = len > 1000000 ? 12 : 24;
		for (int k = 0; k < trials; k++) {
			size_t cut = (size_t)((double)len * (k + 1) / (trials + 1));
			int r;

			r = import_quiet(buf, cut, &err);
			if (r != 0 && r != TFT_EFORMAT)
				bad++;
			if (r == TFT_EFORMAT && (err.offset < 0 || err.offset > (int64_t)cut))
				bad++;
			refused += r == TFT_EFORMAT;
		}
		for (int k = 0; k < trials; k++) {
			size_t pos;
			int r;

			memcpy(copy, buf, len);
			for (int f = 0; f < 1 + k % 3; f++) {
				rng ^= rng << 13;
				rng ^= rng >> 7;
				rng ^= rng << 17;
				pos = (size_t)(rng % len);
				copy[pos] ^= (uint8_t)(1u << (rng >> 60 & 7));
			}
			r = import_quiet(copy, len, &err);
			if (r != 0 && r != TFT_EFORMAT)
				bad++;
		}
		ok(bad == 0, "%s: %d truncations + %d bit flips refused or imported (%d refused)",
		   real_files[i], trials, trials, refused);
		free(copy);
		free(buf);
	}
}

static void test_corrupt(const char *data)
{
	char path[2048];
	struct tft_error err;
	uint8_t *buf;
	size_t len;
	int r;

	snprintf(path, sizeof(path), "%s/xprof/test_xplanes/tpu_inference_2.xplane.pb", data);
	buf = read_file(path, &len);
	if (!buf) {
		ok(0, "xprof/test_xplanes/tpu_inference_2.xplane.pb not found (TFT_DATA)");
		return;
	}
	r = import_quiet(buf, len, &err);
	is_int(r, TFT_EFORMAT, "corrupted tpu_inference_2.xplane.pb refused");
	ok(err.offset >= 0 && err.offset < (int64_t)len, "error has a byte offset (%lld)",
	   (long long)err.offset);
	ok(strstr(err.msg, "planes[") != NULL, "error has a message path: %s", err.msg);
	free(buf);
}

/*
 * A line whose events arrive out of order (and with ties): sorted in place
 * when the line is held, or through the sorter when it is too large to hold
 * (mem_budget 1); both give the writer's order.
 */
static void test_line_order(void)
{
	static const int64_t off_ps[] = {5000000, 1000000, 1000000, 0, 1000000};
	static const int64_t dur_ps[] = {1000000, 500000, 2000000, 0, 500000};
	static const char *const want[] = {"#4", "#3", "#2", "#5", "#1"};
	struct enc sp = {0}, plane = {0}, line = {0}, ev = {0};

	e_int(&line, 1, 1);
	e_str(&line, 2, "thread");
	e_int(&line, 3, 1000);
	for (int i = 0; i < 5; i++) {
		e_int(&ev, 1, (uint64_t)i + 1);
		if (off_ps[i])
			e_int(&ev, 2, (uint64_t)off_ps[i]);
		if (dur_ps[i])
			e_int(&ev, 3, (uint64_t)dur_ps[i]);
		e_msg(&line, 4, &ev);
	}
	e_int(&plane, 1, 1);
	e_str(&plane, 2, "/host:CPU");
	e_msg(&plane, 3, &line);
	e_msg(&sp, 1, &plane);
	for (int pass = 0; pass < 2; pass++) {
		struct tft_ingest_opts opts = {0};
		struct tft_error err;
		struct tft_session *s;
		struct evlist *l = calloc(1, sizeof(*l));
		int rc, good = 1;

		opts.mem_budget = pass ? 1 : 0;
		s = import_mem_opts("order.xplane.pb", sp.p, sp.len, &opts, &rc, &err);
		if (!ok(s != NULL, pass ? "unsorted line imports (spilled to the sorter)"
					: "unsorted line imports (sorted in place)")) {
			free(l);
			continue;
		}
		events_of(s, track_named(s, "thread"), l);
		is_int(l->n, 5, "five events on the line's track");
		for (int i = 0; i < l->n && i < 5; i++)
			good &= strcmp(l->ev[i].name, want[i]) == 0;
		ok(good && l->n == 5 && l->ev[1].ts == 2000 && l->ev[1].dur == 2000 && l->ev[2].dur == 500,
		   "ts ascending, longer first, then arrival order");
		tft_session_close(s);
		free(l);
	}
	free(sp.p);
}

static void test_garbage(void)
{
	static const uint8_t empty[1];
	struct tft_error err;
	const uint8_t junk[] = {0x0a, 0x05, 0x12, 0x03, 'a'};
	int r;

	r = import_quiet(empty, 0, &err);
	is_int(r, 0, "empty XSpace imports (nothing in it)");
	r = import_quiet(junk, sizeof(junk), &err);
	ok(r == TFT_EFORMAT && strstr(err.msg, "planes[0]"), "truncated plane name: %s", err.msg);
}

/* ---- parallel lines ------------------------------------------------------------------ */

/*
 * A generated XSpace of a few MB that exercises what parallel lines must
 * merge: correlation ids whose source and destination lines are read by
 * different threads (some ids seen twice, on several planes), group ids
 * spread over lines with step names that change, a Steps line with and
 * without numeric names, a line out of order, one whose events start in
 * pairs (the longer one sorts first), str stats that miss the per-stat
 * cache, planes with one, three and six lines, and lines with
 * header fields after their events (name, display_id, display_name, one
 * that makes the line a Steps line, the timestamp again, the timestamp only
 * there). Without the Steps line, the groups (and their last step names)
 * become the steps: a line stored optimistically and redone (its timestamp
 * came late) must leave no group note timed from the header it first saw.
 */
static void build_big(struct enc *space, int with_steps)
{
	static const char *const ops[] = {"conv", "relu", "matmul", "add", "softmax", "reduce", "cast"};
	uint64_t rng = 12345;

	for (int pl = 0; pl < 6; pl++) {
		struct enc plane = {0}, line = {0}, ev = {0}, st = {0};
		int host = pl % 3 == 0, nlines = host ? 6 : pl == 4 ? 1 : 3;
		char buf[64];

		e_int(&plane, 1, (uint64_t)pl + 1);
		snprintf(buf, sizeof(buf), host ? "/host:CPU" : "/device:GPU:%d", pl);
		e_str(&plane, 2, buf);
		for (int ln = 0; ln < nlines; ln++) {
			int n = 3000 + 500 * ln, steps = with_steps && !host && ln == 2;

			/* header fields after the events: name (and display_id), a display
			 * name, a display name that makes it a Steps line, the timestamp again */
			int name_late = pl == 1 && ln == 0, rename = pl == 2 && ln == 1;
			int to_steps = with_steps && pl == 5 && ln == 0, ts_again = host && ln == 4;
			int ts_late = host && ln == 2;

			e_int(&line, 1, (uint64_t)ln + 100);
			snprintf(buf, sizeof(buf), steps ? "Steps" : host ? "thread %d" : "Stream #%d", ln);
			if (!name_late)
				e_str(&line, 2, buf);
			if (!ts_late) /* ts_again: a first timestamp far off the one that counts */
				e_int(&line, 3, ts_again ? 1 : 1000000 + (uint64_t)pl * 7);
			for (int i = 0; i < n; i++) {
				/* line 3 of a host plane: pairs swapped (held back, sorted) */
				int k = host && ln == 3 ? (i ^ 1) : i;
				uint64_t corr = (uint64_t)(k * nlines + ln) % 9000 + 1;

				rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
				e_int(&ev, 1, (uint64_t)(k % 40) + 1);
				/* line 5 of a host plane: some events start with the one before
				 * (the longer one sorts first) */
				e_int(&ev, 2, (uint64_t)(host && ln == 5 && k % 10 == 1 ? k - 1 : k) * 2000000 + 1000);
				e_int(&ev, 3, k % 17 ? 1500000 + (rng >> 60) * 1000 : 0);
				if (steps) {
					/* some with a group, some a step_num, some neither
					 * (then the step index is the name, or the position) */
					if (k % 2 == 0)
						x_stat(&ev, 4, 3, 'u', (uint64_t)k / 4, 0, NULL);
					if (k % 3 == 0)
						x_stat(&ev, 4, 6, 'i', (uint64_t)k, 0, NULL);
				} else {
					x_stat(&ev, 4, 1, 'u', corr, 0, NULL);
					if (k % 5 == 0)
						x_stat(&ev, 4, 2, 'i', (uint64_t)(k / 50), 0, NULL);
					if (k % 7 == 0) {
						snprintf(buf, sizeof(buf), "step %d", (int)(rng >> 58));
						x_stat(&ev, 4, 4, 's', 0, 0, buf);
					}
					x_stat(&ev, 4, 5, 's', 0, 0, ops[(rng >> 33) % 7]);
					x_stat(&ev, 4, 7, 'd', 0, (double)(rng >> 40) / 7.0, NULL);
				}
				e_msg(&line, 4, &ev);
			}
			if (name_late) {
				e_str(&line, 2, buf);
				e_int(&line, 10, 7000 + (uint64_t)ln);
			}
			if (rename)
				e_str(&line, 11, "renamed stream");
			if (to_steps)
				e_str(&line, 11, "Steps");
			if (ts_again) /* the last one counts, for every event */
				e_int(&line, 3, 3000000 + (uint64_t)pl * 7);
			if (ts_late)
				e_int(&line, 3, 2000000000 + (uint64_t)pl * 7);
			e_msg(&plane, 3, &line);
		}
		for (int m = 1; m <= 40; m++) {
			snprintf(buf, sizeof(buf), m % 4 ? "op_%d" : "%d", m + pl);
			event_meta(&plane, m, buf, NULL, NULL);
		}
		stat_meta(&plane, 1, "correlation_id");
		stat_meta(&plane, 2, "group_id");
		stat_meta(&plane, 3, "group_id");
		stat_meta(&plane, 4, "step_name");
		stat_meta(&plane, 5, "tf_op");
		stat_meta(&plane, 6, "step_num");
		stat_meta(&plane, 7, "flops");
		x_stat(&st, 6, 7, 'i', (uint64_t)pl * 11, 0, NULL);
		for (size_t i = 0; i < st.len; i++)
			e_byte(&plane, st.p[i]);
		free(st.p);
		e_msg(space, 1, &plane);
	}
	/*
	 * A long line in bursts (level 1 of the LOD keeps 1 event in 8, so chunks
	 * of it are staged while the line is stored) whose last event is out of
	 * order: the line is forgotten and stored again, sorted, and what it had
	 * staged must go with it.
	 */
	{
		struct enc plane = {0}, line = {0}, ev = {0};

		e_int(&plane, 1, 7);
		e_str(&plane, 2, "/device:GPU:6");
		e_int(&line, 1, 300);
		e_str(&line, 2, "Stream #300");
		e_int(&line, 3, 5000000);
		for (int k = 0; k <= 40000; k++) {
			/* ps: bursts of 8 slices of 300 ns, 100 ns apart, 50 us between bursts */
			uint64_t at = k < 40000 ? (uint64_t)(k / 8) * 50000000 + (uint64_t)(k % 8) * 400000
						: 50000000 + 1; /* the last one: back in time */
			e_int(&ev, 1, 1);
			e_int(&ev, 2, at);
			e_int(&ev, 3, 300000);
			e_msg(&line, 4, &ev);
		}
		e_msg(&plane, 3, &line);
		event_meta(&plane, 1, "burst", NULL, NULL);
		e_msg(space, 1, &plane);
	}
}

/* Field at *pp (key, then payload [*v, *v + *n) for length-delimited): 0, or -1 at the end/bad. */
static int wire_field(const uint8_t **pp, const uint8_t *end, uint64_t *key, const uint8_t **v, uint64_t *n)
{
	const uint8_t *p = *pp;
	uint64_t x = 0;

	for (int i = 0; p < end && i < 10; i++, p++) {
		x |= (uint64_t)(*p & 0x7f) << (7 * i);
		if (!(*p & 0x80))
			break;
	}
	if (p++ >= end)
		return -1;
	*key = x;
	if ((x & 7) == 2) {
		uint64_t l = 0;

		for (int i = 0; p < end && i < 10; i++, p++) {
			l |= (uint64_t)(*p & 0x7f) << (7 * i);
			if (!(*p & 0x80))
				break;
		}
		if (p++ >= end || l > (uint64_t)(end - p))
			return -1;
		*v = p;
		*n = l;
		*pp = p + l;
		return 0;
	}
	if ((x & 7) == 0) {
		while (p < end && (*p & 0x80))
			p++;
		if (p++ >= end)
			return -1;
	} else {
		p += (x & 7) == 1 ? 8 : 4;
	}
	*v = *pp;
	*n = 0;
	*pp = p;
	return p > end ? -1 : 0;
}

/* A copy of the XSpace in p[0..n) without its lines named "Steps" (malloc'd), or NULL. */
static uint8_t *without_steps_lines(const uint8_t *p, size_t n, size_t *out_len)
{
	struct enc out = {0};
	const uint8_t *q = p, *end = p + n, *v;
	uint64_t key, len;

	while (q < end) {
		const uint8_t *at = q;

		if (wire_field(&q, end, &key, &v, &len))
			goto fail;
		if (key == (1 << 3 | 2)) { /* a plane: its fields, less the Steps lines */
			struct enc plane = {0};
			const uint8_t *r = v, *pend = v + len, *lv;
			uint64_t k2, l2;

			while (r < pend) {
				const uint8_t *fat = r;
				int skip = 0;

				if (wire_field(&r, pend, &k2, &lv, &l2)) {
					free(plane.p);
					goto fail;
				}
				if (k2 == (3 << 3 | 2)) {
					const uint8_t *t = lv, *lend = lv + l2, *nv;
					uint64_t k3, l3;

					while (t < lend && !wire_field(&t, lend, &k3, &nv, &l3))
						if (k3 == (2 << 3 | 2))
							skip = l3 == 5 && memcmp(nv, "Steps", 5) == 0;
				}
				if (!skip)
					for (const uint8_t *b = fat; b < r; b++)
						e_byte(&plane, *b);
			}
			e_msg(&out, 1, &plane);
		} else {
			for (const uint8_t *b = at; b < q; b++)
				e_byte(&out, *b);
		}
	}
	*out_len = out.len;
	return out.p;
fail:
	free(out.p);
	return NULL;
}

static void test_parallel(const char *data)
{
	struct enc big = {0}, big2 = {0};
	char path[2048];
	uint8_t *real, *triple = NULL;
	size_t rlen = 0;
	struct {
		const char *name;
		const uint8_t *p;
		size_t n;
	} in[4];
	uint8_t *nosteps = NULL;
	size_t nlen = 0;
	int nin = 0;

	build_big(&big, 1);
	in[nin].name = "generated";
	in[nin].p = big.p;
	in[nin++].n = big.len;
	build_big(&big2, 0);
	in[nin].name = "generated, steps from groups";
	in[nin].p = big2.p;
	in[nin++].n = big2.len;
	/* The real GPU profile three times over: three hosts' planes, ids repeated. */
	snprintf(path, sizeof(path), "%s/%s", data, real_files[4]);
	real = read_file(path, &rlen);
	if (real && (triple = malloc(rlen * 3))) {
		for (int i = 0; i < 3; i++)
			memcpy(triple + (size_t)i * rlen, real, rlen);
		in[nin].name = "real GPU profile x3";
		in[nin].p = triple;
		in[nin++].n = rlen * 3;
		/* Without its Steps lines: steps from the group ids, which the lines meet out of order. */
		if ((nosteps = without_steps_lines(real, rlen, &nlen)) != NULL) {
			in[nin].name = "real GPU profile, no Steps line";
			in[nin].p = nosteps;
			in[nin++].n = nlen;
		}
	} else {
		ok(0, "%s not found (TFT_DATA)", real_files[4]);
	}
	ok(big.len > (2u << 20), "generated XSpace of %zu bytes", big.len);
	for (int i = 0; i < nin; i++) {
		uint64_t h0 = 0, n0 = 0;

		for (int v = 0; v < 5; v++) {
			/* threads 0; 2; 3; 2 with lines spilled to the sorter and one-plane
			 * groups; 2 with groups of a plane or two */
			static const int th[] = {0, 2, 3, 2, 2};
			static const size_t budget[] = {0, 0, 0, 4096, 2u << 20};
			/* par_min_bytes 1: the parallel path, whatever the size */
			struct tft_ingest_opts o = {.threads = th[v], .mem_budget = budget[v],
						    .par_min_bytes = 1};
			struct tft_error err;
			struct tft_session *s;
			uint64_t h, n = 0;
			int rc;

			s = import_mem_opts(in[i].name, in[i].p, in[i].n, &o, &rc, &err);
			if (!ok(s != NULL, "%s: import with %d thread(s)%s", in[i].name, th[v],
				v == 3 ? ", lines spilled" : "")) {
				printf("#   %s\n", err.msg);
				continue;
			}
			h = session_digest(s, DIGEST_STRING_COUNT | DIGEST_LOD_1MS, &n);
			if (v == 0 || v == 2) {
				uint32_t k = 1, ns = tft_session_step_count(s), bad = 0;

				for (; k < ns; k++) { /* a process's steps in time order */
					const struct tft_step *p = tft_session_step(s, k - 1), *q = tft_session_step(s, k);

					bad += p->process == q->process && p->start_ns > q->start_ns;
				}
				ok(ns > 1 && !bad, "%s, %d thread(s): each process's %u steps in time order",
				   in[i].name, th[v], ns);
			}
			tft_session_close(s);
			if (v == 0) {
				h0 = h;
				n0 = n;
				ok(n0 > 10000, "%s: %llu events", in[i].name, (unsigned long long)n0);
			} else {
				ok(h == h0 && n == n0,
				   "%s: %d threads (memory budget %zu) store exactly what one thread stores (%llu events)",
				   in[i].name, th[v], budget[v], (unsigned long long)n);
			}
		}
	}
	/* Errors: the one the serial import reports, at the same offset. */
	for (int i = 0; i < nin; i++) {
		uint8_t *copy = malloc(in[i].n);
		uint64_t r = 0x2545F4914F6CDD1DULL;
		int same = 1, refused = 0;

		for (int k = 0; k < 40 && copy; k++) {
			struct tft_ingest_opts o0 = {0}, o2 = {.threads = 2, .par_min_bytes = 1};
			struct tft_error e0, e2;
			struct tft_writer *w;
			size_t len = in[i].n;
			int r0, r2;

			memcpy(copy, in[i].p, len);
			r ^= r << 13;
			r ^= r >> 7;
			r ^= r << 17;
			if (k % 2)
				len = (size_t)(r % len);
			else
				for (int f = 0; f < 1 + k % 5; f++) {
					r ^= r << 13;
					r ^= r >> 7;
					r ^= r << 17;
					copy[r % len] ^= (uint8_t)(1u << (r >> 61));
				}
			tft_error_clear(&e0);
			tft_error_clear(&e2);
			w = tft_writer_open(":memory:", NULL, &e0);
			r0 = tft_xspace_ingest(w, "m.xplane.pb", copy, len, &o0, &e0);
			tft_writer_abort(w);
			w = tft_writer_open(":memory:", NULL, &e2);
			r2 = tft_xspace_ingest(w, "m.xplane.pb", copy, len, &o2, &e2);
			tft_writer_abort(w);
			refused += r0 != 0;
			if (r0 != r2 || (r0 && (e0.offset != e2.offset || strcmp(e0.msg, e2.msg)))) {
				same = 0;
				printf("#   serial %d at %lld: %s\n#   parallel %d at %lld: %s\n", r0,
				       (long long)e0.offset, e0.msg, r2, (long long)e2.offset, e2.msg);
			}
		}
		ok(same && refused > 0, "%s: 40 damaged copies: parallel reports the serial error (%d refused)",
		   in[i].name, refused);
		free(copy);
	}
	free(big.p);
	free(big2.p);
	free(real);
	free(nosteps);
	free(triple);
}

int main(void)
{
	const char *data = getenv("TFT_DATA");
	char tmpl[] = "/tmp/tft-xspace-XXXXXX";

	if (!data)
		data = "../shared/data";
	if (!mkdtemp(tmpl)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(tmpdir, sizeof(tmpdir), "%s", tmpl);
	test_synthetic();
	test_concatenated();
	test_host_clock();
	test_padded_event_key();
	test_launch_to_many();
	test_line_order();
	test_garbage();
	test_corrupt(data);
	test_real(data);
	test_parallel(data);
	{
		char cmd[400];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd) != 0)
			printf("# could not remove %s\n", tmpdir);
	}
	return done_testing();
}
