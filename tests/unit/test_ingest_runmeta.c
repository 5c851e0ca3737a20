/* SPDX-License-Identifier: MIT */
/* Unit tests for the RunMetadata/StepStats importer and the TF name helpers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collect/ingest.h"
#include "collect/ingest_runmeta.h"
#include "collect/tf_names.h"
#include "store/session.h"
#include "store/writer.h"
#include "importfix.h"
#include "pbenc.h"
#include "tap.h"

/* ---- encoder (wire format from step_stats.proto / config.proto) -------------------- */

/* NodeExecStats with the common fields; label may be NULL. */
static void node(struct enc *dev, const char *name, int64_t start_us, int64_t end_rel_us,
		 const char *label, struct enc *extra)
{
	struct enc n = {0};

	e_str(&n, 1, name);
	e_int(&n, 2, (uint64_t)start_us);
	e_int(&n, 3, 1);
	/* end_rel_us < 0: like the RPC logger, only op_end_rel_micros (2 us) */
	e_int(&n, 4, (uint64_t)(end_rel_us < 0 ? 2 : end_rel_us > 1 ? end_rel_us - 1 : 0));
	if (end_rel_us >= 0)
		e_int(&n, 5, (uint64_t)end_rel_us);
	if (label)
		e_str(&n, 8, label);
	if (extra) {
		for (size_t i = 0; i < extra->len; i++)
			e_byte(&n, extra->p[i]);
		free(extra->p);
		memset(extra, 0, sizeof(*extra));
	}
	e_msg(dev, 2, &n);
}

#define W0 "/job:worker/replica:0/task:0"
#define W1 "/job:worker/replica:0/task:1"
#define T0 1500000000000000LL

static void build_runmeta(struct enc *rm)
{
	struct enc ss = {0}, dev = {0}, ex = {0}, m = {0}, rec = {0}, out = {0}, td = {0}, shape = {0},
		   dim = {0}, ad = {0}, ms = {0}, tn = {0}, pk = {0};

	/* GPU:0 compute: MatMul with every nested field. */
	e_str(&dev, 1, W0 "/device:GPU:0");
	/* memory { allocator_name total peak live allocation_records {..} allocator_bytes_in_use } */
	e_str(&m, 1, "GPU_0_bfc");
	e_int(&m, 2, 4096);
	e_int(&m, 3, 8192);
	e_int(&m, 4, 1024);
	e_int(&rec, 1, (uint64_t)(T0 + 12));
	e_int(&rec, 2, 4096);
	e_msg(&m, 6, &rec);
	e_int(&rec, 1, (uint64_t)(T0 + 40));
	e_int(&rec, 2, (uint64_t)-3072);
	e_msg(&m, 6, &rec);
	e_int(&m, 5, 65536);
	e_msg(&ex, 6, &m);
	/* output { slot tensor_description { dtype shape { dim dim } allocation_description } } */
	e_int(&out, 1, 0);
	e_int(&td, 1, 1); /* DT_FLOAT */
	e_int(&dim, 1, 32);
	e_msg(&shape, 2, &dim);
	e_int(&dim, 1, 10);
	e_msg(&shape, 2, &dim);
	e_msg(&td, 2, &shape);
	e_int(&ad, 1, 1280);
	e_int(&ad, 2, 1536);
	e_str(&ad, 3, "GPU_0_bfc");
	e_int(&ad, 4, 77);
	e_int(&ad, 5, 1);
	e_msg(&td, 4, &ad);
	e_msg(&out, 3, &td);
	e_msg(&ex, 7, &out);
	e_int(&ex, 9, (uint64_t)(T0 + 5));   /* scheduled_micros */
	e_int(&ex, 10, 4242);                /* thread_id */
	e_int(&ad, 1, 64);
	e_str(&ad, 3, "cpu");
	e_msg(&ex, 11, &ad);                 /* referenced_tensor */
	e_int(&ms, 1, 100);
	e_int(&ms, 3, 200);
	e_varint(&pk, 5);
	e_varint(&pk, 6);
	e_msg(&ms, 5, &pk);                  /* packed persistent_tensor_alloc_ids */
	e_msg(&ex, 12, &ms);
	node(&dev, "dense/MatMul", T0 + 10, 35,
	     "[GPU_0_bfc 0.1MB 0.1MB] dense/MatMul = MatMul(x, dense/kernel/read, ^ctrl)", &ex);
	/* A node with nanosecond times (TF >= 1.13). */
	e_int(&ex, 13, (uint64_t)(T0 * 1000 + 60123));
	e_int(&ex, 16, 2500);
	node(&dev, "dense/BiasAdd", T0 + 60, 2, "dense/BiasAdd = BiasAdd(dense/MatMul, dense/bias/read)", &ex);
	/* Horovod on GPU:0: comm. */
	node(&dev, "hvd/allreduce", T0 + 100, 30, "hvd/allreduce = HorovodAllreduce(grad)", NULL);
	e_int(&tn, 1, 4242);
	e_str(&tn, 2, "tf_executor_3");
	e_msg(&dev, 3, &tn);                 /* thread_names map (after node_stats) */
	e_msg(&ss, 1, &dev);

	/* GPU tracer pseudo-devices. */
	e_str(&dev, 1, W0 "/device:GPU:0/stream:all");
	node(&dev, "dense/MatMul:MatMul", T0 + 20, 12,
	     "volta_sgemm_128x64_nn regs:64 shm:1024 grid:4,1,1 block:256,1,1@@dense/MatMul:MatMul", NULL);
	e_msg(&ss, 1, &dev);
	e_str(&dev, 1, W0 "/device:GPU:0/stream:14");
	node(&dev, "dense/MatMul:MatMul", T0 + 20, 12,
	     "volta_sgemm_128x64_nn regs:64 shm:1024 grid:4,1,1 block:256,1,1@@dense/MatMul:MatMul", NULL);
	e_msg(&ss, 1, &dev);
	e_str(&dev, 1, W0 "/device:GPU:0/memcpy");
	node(&dev, "edge_7_x:MEMCPYHtoD", T0 + 2, 3, "MEMCPYHtoD bytes:4096 async to device:0", NULL);
	e_msg(&ss, 1, &dev);

	/* CPU:0 of task 0 sends edge_5_x to task 1. */
	e_str(&dev, 1, W0 "/device:CPU:0");
	node(&dev, "x/_1", T0 + 1, 1, "x/_1 = _Send(edge_5_x @" W1 "/device:CPU:0", NULL);
	e_msg(&ss, 1, &dev);

	/* Task 1: RecvTensor (no all_end_rel_micros) and the matching _Recv. */
	node(&dev, "RecvTensor", T0 + 3, -1,
	     "[4096B] " W0 "/device:CPU:0;0000000000000001;" W1 "/device:CPU:0;edge_5_x;0:0 from " W0
	     "/device:CPU:0 to " W1 "/device:CPU:0",
	     NULL);
	node(&dev, "x/_2", T0 + 2, 60, "x/_2 = _Recv(edge_5_x @" W0 "/device:CPU:0", NULL);
	e_str(&dev, 1, W1 "/device:CPU:0"); /* device name after the nodes */
	e_msg(&ss, 1, &dev);

	e_msg(rm, 1, &ss);
	/* cost_graph and partition_graphs go to graph_nodes (tested in test_ingest_graph). */
	e_str(&dev, 1, "x/_1");
	e_int(&dev, 9, 5);
	e_msg(&ss, 1, &dev);
	e_msg(rm, 2, &ss);
	e_str(&dev, 1, "x/_1");
	e_str(&dev, 2, "_Send");
	e_msg(&ss, 1, &dev);
	e_msg(rm, 3, &ss);
}

/* ---- session helpers ------------------------------------------------------------------- */

static char tmpdir[256];

struct mem_input {
	const char *name;
	const void *p;
	size_t n;
};

static int ingest_mem(struct tft_writer *w, void *ctx, struct tft_error *err)
{
	const struct mem_input *in = ctx;

	return tft_runmeta_ingest(w, in->name, in->p, in->n, NULL, err);
}

static struct tft_session *import_mem(const char *name, const void *p, size_t n, int *rc,
				      struct tft_error *err)
{
	struct mem_input in = { name, p, n };

	return tft_test_import(tmpdir, ingest_mem, &in, rc, err);
}

struct got_ev {
	int64_t ts, dur;
	char name[64], cat[32];
	int nargs;
	struct {
		char key[40];
		int type;
		int64_t i;
		char s[400];
	} args[40];
};

struct evlist {
	struct tft_session *s;
	struct got_ev ev[16];
	int n;
};

static int collect_ev(void *ctx, const struct tft_event *ev)
{
	struct evlist *l = ctx;
	struct got_ev *g;

	if (l->n >= 16)
		return 0;
	g = &l->ev[l->n++];
	memset(g, 0, sizeof(*g));
	g->ts = ev->ts_ns;
	g->dur = ev->dur_ns;
	snprintf(g->name, sizeof(g->name), "%s", tft_session_str(l->s, ev->name, NULL));
	snprintf(g->cat, sizeof(g->cat), "%s", tft_session_str(l->s, ev->cat, NULL));
	for (int i = 0; i < ev->nargs && i < 40; i++) {
		const struct tft_arg *a = &ev->args[i];

		snprintf(g->args[i].key, sizeof(g->args[i].key), "%s", tft_session_str(l->s, a->key, NULL));
		g->args[i].type = (int)a->type;
		if (a->type == TFT_ARG_INT || a->type == TFT_ARG_BOOL)
			g->args[i].i = a->v.i;
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

static void events_of(struct tft_session *s, const char *track, struct evlist *l)
{
	const struct tft_track *t = track_named(s, track);
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

static int arg_of(const struct got_ev *g, const char *key)
{
	for (int i = 0; g && i < g->nargs; i++)
		if (strcmp(g->args[i].key, key) == 0)
			return i;
	return -1;
}

static int arg_int_is(const struct got_ev *g, const char *key, int64_t v)
{
	int k = arg_of(g, key);

	return k >= 0 && g->args[k].i == v;
}

static int arg_str_is(const struct got_ev *g, const char *key, const char *v)
{
	int k = arg_of(g, key);

	return k >= 0 && strcmp(g->args[k].s, v) == 0;
}

static int arg_has(const struct got_ev *g, const char *key, const char *part)
{
	int k = arg_of(g, key);

	return k >= 0 && strstr(g->args[k].s, part) != NULL;
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

/* NodeExecStats in a binary RunMetadata, counted by tests/corpus/pbdecode.py; -1 if unavailable. */
static long pbdecode_nodes(const uint8_t *p, size_t n)
{
	char path[300], cmd[600], line[256];
	FILE *f;
	long nodes = -1;

	if (access("tests/corpus/pbdecode.py", R_OK) != 0)
		return -1;
	snprintf(path, sizeof(path), "%s/runmeta.pb", tmpdir);
	f = fopen(path, "wb");
	if (!f)
		return -1;
	fwrite(p, 1, n, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "python3 tests/corpus/pbdecode.py runmeta '%s' 2>/dev/null", path);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	if (fgets(line, sizeof(line), f)) {
		const char *e = strstr(line, "nodes=");

		if (e)
			nodes = atol(e + 6);
	}
	pclose(f);
	return nodes;
}

/* ---- tests ------------------------------------------------------------------------------ */

static void test_binary(void)
{
	struct enc rm = {0};
	struct tft_error err;
	struct tft_session *s;
	struct evlist *l = calloc(1, sizeof(*l));
	struct flowlist fl = {0};
	const struct got_ev *g;
	const struct tft_track *t;
	int rc, w0 = -1, w1 = -1;

	build_runmeta(&rm);
	is_int(tft_pb_sniff(rm.p, rm.len, "run_metadata_step3.pb"), TFT_PB_FMT_RUNMETA,
	       "sniff: binary RunMetadata");
	s = import_mem("step3.pb", rm.p, rm.len, &rc, &err);
	if (!ok(s != NULL, "binary RunMetadata imports")) {
		printf("#   rc %d: %s at %lld\n", rc, err.msg, (long long)err.offset);
		free(rm.p);
		free(l);
		return;
	}
	is_int(tft_session_process_count(s), 2, "one process per worker task");
	for (uint32_t i = 0; i < tft_session_process_count(s); i++) {
		const struct tft_process *p = tft_session_process(s, i);
		const char *nm = tft_session_str(s, p->name, NULL);

		if (!strcmp(nm, W0))
			w0 = (int)i;
		if (!strcmp(nm, W1))
			w1 = (int)i;
	}
	ok(w0 >= 0 && w1 >= 0, "processes named /job:worker/replica:0/task:N");
	if (w0 >= 0 && w1 >= 0)
		ok(tft_session_process(s, (uint32_t)w0)->rank == 0 &&
			   tft_session_process(s, (uint32_t)w1)->rank == 1,
		   "worker task -> rank");

	t = track_named(s, W0 "/device:GPU:0");
	ok(t && t->kind == TFT_TRACK_DEVICE, "GPU:0 compute track (device)");
	t = track_named(s, W0 "/device:GPU:0/stream:all");
	ok(t && t->kind == TFT_TRACK_GPU_STREAM, "stream:all track kept (gpu_stream)");
	t = track_named(s, W0 "/device:GPU:0/stream:14");
	ok(t && t->kind == TFT_TRACK_GPU_STREAM && t->tid == 14, "stream:14 track, tid 14");
	t = track_named(s, W0 "/device:GPU:0/memcpy");
	ok(t && t->kind == TFT_TRACK_GPU_STREAM, "memcpy track (gpu_stream)");
	t = track_named(s, W0 "/device:GPU:0 (comm)");
	ok(t && t->kind == TFT_TRACK_COMM, "Horovod goes to the GPU's comm track");
	t = track_named(s, W0 "/device:CPU:0 (comm)");
	ok(t && t->kind == TFT_TRACK_COMM, "_Send goes to a comm track");
	ok(track_named(s, W0 "/device:CPU:0") == NULL, "no empty compute track for a comm-only device");
	t = track_named(s, W1 "/device:CPU:0 (comm)");
	ok(t && t->kind == TFT_TRACK_COMM, "RecvTensor/_Recv comm track of task 1 (device named late)");

	events_of(s, W0 "/device:GPU:0", l);
	is_int(l->n, 2, "two compute ops on GPU:0");
	g = find_ev(l, "dense/MatMul");
	ok(g && g->ts == (T0 + 10) * 1000 && g->dur == 35000, "MatMul ts/dur from micros");
	ok(g && !strcmp(g->cat, "op"), "cat op");
	ok(arg_str_is(g, "op", "MatMul"), "op parsed from the label");
	ok(arg_str_is(g, "inputs", "[\"x\",\"dense/kernel/read\",\"^ctrl\"]"), "inputs as a JSON array");
	ok(arg_has(g, "timeline_label", "[GPU_0_bfc 0.1MB 0.1MB] dense/MatMul = MatMul("), "timeline_label kept");
	ok(arg_int_is(g, "all_start_micros", T0 + 10) && arg_int_is(g, "op_start_rel_micros", 1) &&
		   arg_int_is(g, "op_end_rel_micros", 34) && arg_int_is(g, "all_end_rel_micros", 35),
	   "all_start/op_start/op_end/all_end kept");
	ok(arg_int_is(g, "scheduled_micros", T0 + 5), "scheduled_micros");
	ok(arg_int_is(g, "thread_id", 4242) && arg_str_is(g, "thread_name", "tf_executor_3"),
	   "thread_id and its thread_names entry");
	ok(arg_has(g, "memory",
		   "[{\"allocator_name\":\"GPU_0_bfc\",\"total_bytes\":4096,\"peak_bytes\":8192,"
		   "\"live_bytes\":1024,\"allocator_bytes_in_use\":65536,\"allocation_records\":"
		   "[{\"alloc_micros\":1500000000000012,\"alloc_bytes\":4096},"
		   "{\"alloc_micros\":1500000000000040,\"alloc_bytes\":-3072}]}]"),
	   "memory: allocator usage + allocation records");
	ok(arg_has(g, "output",
		   "[{\"slot\":0,\"dtype\":\"DT_FLOAT\",\"shape\":[32,10],\"requested_bytes\":1280,"
		   "\"allocated_bytes\":1536,\"allocator_name\":\"GPU_0_bfc\",\"allocation_id\":77,"
		   "\"has_single_reference\":true}]"),
	   "output: slot, dtype, shape, allocation");
	ok(arg_has(g, "referenced_tensor", "[{\"requested_bytes\":64,\"allocator_name\":\"cpu\"}]"),
	   "referenced_tensor");
	ok(arg_has(g, "memory_stats",
		   "{\"temp_memory_size\":100,\"persistent_memory_size\":200,"
		   "\"persistent_tensor_alloc_ids\":[5,6]}"),
	   "memory_stats with packed ids");
	{
		int k = arg_of(g, "memory");

		ok(k >= 0 && g->args[k].type == TFT_ARG_JSON, "nested values are JSON args");
	}
	g = find_ev(l, "dense/BiasAdd");
	ok(g && g->ts == T0 * 1000 + 60123 && g->dur == 2500, "nanosecond fields win over micros");
	ok(arg_int_is(g, "all_start_nanos", T0 * 1000 + 60123) && arg_int_is(g, "all_end_rel_nanos", 2500),
	   "nanos kept as args");

	events_of(s, W0 "/device:GPU:0 (comm)", l);
	g = find_ev(l, "hvd/allreduce");
	ok(g && arg_str_is(g, "op", "HorovodAllreduce") && !strcmp(g->cat, "comm"), "HorovodAllreduce on comm");

	events_of(s, W0 "/device:GPU:0/stream:all", l);
	g = find_ev(l, "dense/MatMul:MatMul");
	ok(g && !strcmp(g->cat, "kernel"), "kernel on stream:all, cat kernel");
	ok(arg_str_is(g, "op", "MatMul") && arg_str_is(g, "node", "dense/MatMul"),
	   "kernel op/node from the @@annotation");
	ok(arg_str_is(g, "kernel", "volta_sgemm_128x64_nn") && arg_int_is(g, "regs", 64) &&
		   arg_int_is(g, "shm", 1024) && arg_str_is(g, "grid", "4,1,1") &&
		   arg_str_is(g, "block", "256,1,1") && arg_str_is(g, "annotation", "dense/MatMul:MatMul"),
	   "kernel label fields");

	events_of(s, W0 "/device:GPU:0/memcpy", l);
	g = find_ev(l, "edge_7_x:MEMCPYHtoD");
	ok(g && !strcmp(g->cat, "memcpy") && arg_int_is(g, "bytes", 4096) && arg_int_is(g, "async", 1) &&
		   arg_int_is(g, "to_device", 0) && arg_str_is(g, "op", "MEMCPYHtoD"),
	   "memcpy: bytes, async, to_device, op from node name");

	events_of(s, W1 "/device:CPU:0 (comm)", l);
	g = find_ev(l, "RecvTensor");
	ok(g && g->ts == (T0 + 3) * 1000 && g->dur == 2000, "RecvTensor: duration from op_end_rel_micros");
	ok(arg_str_is(g, "src_device", W0 "/device:CPU:0") && arg_str_is(g, "dst_device", W1 "/device:CPU:0") &&
		   arg_int_is(g, "bytes", 4096) && arg_str_is(g, "op", "RecvTensor"),
	   "RecvTensor: src/dst device and bytes from the label");
	g = find_ev(l, "x/_2");
	ok(g && arg_str_is(g, "op", "_Recv") && arg_str_is(g, "tensor", "edge_5_x") &&
		   arg_str_is(g, "src_device", W0 "/device:CPU:0"),
	   "_Recv label without closing paren");

	tft_session_flows(s, collect_flow, &fl, &err);
	{
		int tensor = 0, launch = 0, other = 0;
		const struct tft_track *gpu = track_named(s, W0 "/device:GPU:0");

		for (int i = 0; i < fl.n; i++) {
			const char *cat = tft_session_str(s, fl.f[i].cat, NULL);

			if (!strcmp(cat, "tensor"))
				tensor++;
			else if (!strcmp(cat, "launch") && gpu && fl.f[i].src_track == gpu->id &&
				 fl.f[i].src_ts_ns == (T0 + 10) * 1000 && fl.f[i].dst_ts_ns == (T0 + 20) * 1000 &&
				 !strcmp(tft_session_str(s, fl.f[i].name, NULL), "dense/MatMul"))
				launch++;
			else
				other++;
		}
		is_int(tensor, 2, "two send/recv flows: _Send -> RecvTensor -> _Recv");
		is_int(launch, 2, "two launch flows: dense/MatMul to its kernel on stream:all and stream:14");
		is_int(other, 0, "no other flow (BiasAdd reads MatMul on its lane; the memcpy names no op)");
	}
	{
		const struct tft_track *send = track_named(s, W0 "/device:CPU:0 (comm)");
		const struct tft_track *recv = track_named(s, W1 "/device:CPU:0 (comm)");
		int a = 0, b = 0;

		for (int i = 0; i < fl.n && send && recv; i++) {
			if (fl.f[i].src_track == send->id && fl.f[i].dst_track == recv->id &&
			    fl.f[i].src_ts_ns == (T0 + 1) * 1000 && fl.f[i].dst_ts_ns == (T0 + 3) * 1000)
				a = 1;
			/* the _Recv (from T0 + 2) waited: the arrow ends in it at T0 + 3, bound to it */
			if (fl.f[i].src_track == recv->id && fl.f[i].dst_track == recv->id &&
			    fl.f[i].src_ts_ns == (T0 + 3) * 1000 && fl.f[i].dst_ts_ns == (T0 + 3) * 1000 &&
			    (fl.f[i].flags & TFT_FLOWF_BIND_ENCLOSING))
				b = 1;
		}
		ok(a, "flow from the _Send on task 0 to the RecvTensor on task 1");
		ok(b, "flow from the RecvTensor into the _Recv that waited for it (forward in time)");
		ok(fl.n > 0 && !strcmp(tft_session_str(s, fl.f[0].name, NULL), "edge_5_x"),
		   "flow named after the tensor");
	}
	is_int(tft_session_step_count(s), 1, "one step per RunMetadata");
	if (tft_session_step_count(s)) {
		const struct tft_step *st = tft_session_step(s, 0);

		ok(st->index == 0 && st->traced && st->start_ns == (T0 + 1) * 1000 &&
			   st->dur_ns == (T0 + 100 + 30) * 1000 - (T0 + 1) * 1000 &&
			   st->process == TFT_NONE,
		   "step spans min..max of the node stats over both workers");
	}
	is_str(tft_session_meta(s, "format"), "runmeta", "meta format");
	is_str(tft_session_meta(s, "producer"), "TensorFlow", "meta producer");
	{
		/* Independent count of NodeExecStats (tests/corpus/pbdecode.py). */
		struct tft_session_summary sum;
		long want = pbdecode_nodes(rm.p, rm.len);

		tft_session_get_summary(s, &sum);
		if (want < 0) /* the reference is missing: nothing checks the count */
			ok(0, "every NodeExecStats is a slice: python3 tests/corpus/pbdecode.py gave no count");
		else
			is_int((long)(sum.slices + sum.instants), want,
			       "every NodeExecStats (counted by pbdecode.py) is a slice");
	}
	tft_session_close(s);

	/* Errors: truncation and a bad nested field, with offsets and paths. */
	{
		struct tft_writer *w = tft_writer_open(":memory:", NULL, &err);
		int r, bad = 0;

		tft_error_clear(&err);
		r = tft_runmeta_ingest_as(w, "cut.pb", rm.p, rm.len - 3, TFT_PB_FMT_RUNMETA, NULL, &err);
		ok(r == TFT_EFORMAT && err.offset > 0 && strstr(err.msg, "partition_graphs[0]: length"),
		   "truncated RunMetadata refused: %s", err.msg);
		tft_writer_abort(w);
		for (size_t cut = 0; cut < rm.len; cut += 7) {
			w = tft_writer_open(":memory:", NULL, &err);
			tft_error_clear(&err);
			r = tft_runmeta_ingest_as(w, "cut.pb", rm.p, cut, TFT_PB_FMT_RUNMETA, NULL, &err);
			if (r != 0 && r != TFT_EFORMAT)
				bad++;
			tft_writer_abort(w);
		}
		is_int(bad, 0, "every truncation: imported or EFORMAT");
	}
	free(rm.p);
	free(l);
}

static void test_nested_error_path(void)
{
	struct enc rm = {0}, ss = {0}, dev = {0}, n = {0};
	struct tft_writer *w;
	struct tft_error err;
	int r;

	e_str(&dev, 1, "/cpu:0");
	node(&dev, "a", 1, 1, NULL, NULL);
	e_str(&n, 1, "b");
	e_int(&n, 2, 5);
	e_varint(&n, 3 << 3);
	e_byte(&n, 0xff); /* truncated op_start_rel_micros */
	e_msg(&dev, 2, &n);
	e_msg(&ss, 1, &dev);
	e_msg(&rm, 1, &ss);
	w = tft_writer_open(":memory:", NULL, &err);
	tft_error_clear(&err);
	r = tft_runmeta_ingest_as(w, "bad.pb", rm.p, rm.len, TFT_PB_FMT_RUNMETA, NULL, &err);
	ok(r == TFT_EFORMAT, "bad varint in a node refused");
	ok(strstr(err.msg, "step_stats.dev_stats[0].node_stats[1].op_start_rel_micros") != NULL,
	   "path names the node: %s", err.msg);
	is_int(err.offset, (int64_t)rm.len - 1, "offset of the bad byte");
	tft_writer_abort(w);
	free(rm.p);
}

static void test_text(const char *data)
{
	char path[1024];
	struct tft_error err;
	struct tft_session *s;
	struct evlist *l = calloc(1, sizeof(*l));
	const struct got_ev *g;
	FILE *f;
	char buf[4096];
	size_t n;
	int rc;

	snprintf(path, sizeof(path), "%s/tensorboard/run_metadata_run_step99_tag_train.pbtxt", data);
	f = fopen(path, "rb");
	if (!f) {
		ok(0, "%s not found (TFT_DATA)", path);
	} else {
		n = fread(buf, 1, sizeof(buf), f);
		fclose(f);
		is_int(tft_pb_sniff((const uint8_t *)buf, n, path), TFT_PB_FMT_RUNMETA_TEXT,
		       "sniff: text RunMetadata");
		s = import_mem(path, buf, n, &rc, &err);
		if (!ok(s != NULL, "real text RunMetadata imports"))
			printf("#   %s at %lld\n", err.msg, (long long)err.offset);
		if (s) {
			ok(tft_session_process_count(s) == 1 &&
				   !strcmp(tft_session_str(s, tft_session_process(s, 0)->name, NULL),
					   "/job:localhost/replica:0/task:0"),
			   "process /job:localhost/replica:0/task:0");
			events_of(s, "/job:localhost/replica:0/task:0/cpu:0", l);
			g = find_ev(l, "_SOURCE");
			ok(l->n == 1 && g && g->ts == 1459365298611334LL * 1000 && g->dur == 52000,
			   "the one node_stats: ts and dur");
			ok(arg_str_is(g, "op", "NoOp") && arg_int_is(g, "scheduled_micros", 1459365298611291LL) &&
				   arg_has(g, "memory", "\"allocator_name\":\"cpu\""),
			   "op, scheduled_micros, memory from the text file");
			tft_session_close(s);
		}
	}

	/* Text StepStats with legacy device names and every text syntax used by TF. */
	{
		static const char doc[] =
			"# StepStats from TF 1.2\n"
			"dev_stats {\n"
			"  device: \"/gpu:0/stream:12\"\n"
			"  node_stats {\n"
			"    node_name: \"conv1/Conv2D:Conv2D\"\n"
			"    all_start_micros: 1000 op_end_rel_micros: 7 all_end_rel_micros: 9\n"
			"    timeline_label: \"maxwell_scudnn regs:80 shm:9000 grid:1,2,3 block:128,1,1@@conv1/Conv2D:Conv2D\"\n"
			"    output { slot: 0 tensor_description { dtype: DT_FLOAT_REF shape { dim { size: -1 } unknown_rank: false } } }\n"
			"    output { slot: 1 tensor_description { dtype: DT_FLOAT8_E5M2FNUZ } }\n"
			"    output { slot: 2 tensor_description { dtype: DT_UINT2_REF } }\n"
			"  }\n"
			"}\n"
			"dev_stats < device: '/cpu:0' node_stats < node_name: 'n' all_start_micros: 1001\n"
			"  timeline_label: 'n = Identity(a)' thread_id: 3 > >\n";

		is_int(tft_pb_sniff((const uint8_t *)doc, sizeof(doc) - 1, "x.pbtxt"), TFT_PB_FMT_STEPSTATS_TEXT,
		       "sniff: text StepStats");
		s = import_mem("x.pbtxt", doc, sizeof(doc) - 1, &rc, &err);
		if (!ok(s != NULL, "text StepStats imports"))
			printf("#   %s at %lld\n", err.msg, (long long)err.offset);
		if (s) {
			ok(tft_session_process_count(s) == 1 &&
				   !strcmp(tft_session_str(s, tft_session_process(s, 0)->name, NULL), "localhost"),
			   "legacy device names -> process localhost");
			events_of(s, "/gpu:0/stream:12", l);
			g = find_ev(l, "conv1/Conv2D:Conv2D");
			ok(g && g->ts == 1000000 && g->dur == 9000 && arg_str_is(g, "op", "Conv2D") &&
				   arg_has(g, "output", "\"dtype\":\"DT_FLOAT_REF\",\"shape\":[-1]"),
			   "legacy stream kernel with enum name from text");
			/* DataTypes of current TF (FNUZ floats, 2-bit ints): named, not 999 */
			ok(g && arg_has(g, "output", "\"dtype\":\"DT_FLOAT8_E5M2FNUZ\"") &&
				   arg_has(g, "output", "\"dtype\":\"DT_UINT2_REF\""),
			   "current DataType names from text");
			ok(track_named(s, "/gpu:0/stream:12")->kind == TFT_TRACK_GPU_STREAM,
			   "legacy stream track is a gpu_stream");
			events_of(s, "/cpu:0", l);
			ok(l->n == 1 && arg_str_is(&l->ev[0], "op", "Identity") && arg_int_is(&l->ev[0], "thread_id", 3),
			   "angle-bracket messages");
			is_str(tft_session_meta(s, "format"), "stepstats", "meta format stepstats");
			tft_session_close(s);
		}
	}

	/* Text error: offset and path. */
	{
		static const char bad[] = "step_stats { dev_stats { node_stats { all_start_micros: x } } }";
		struct tft_writer *w = tft_writer_open(":memory:", NULL, &err);
		int r;

		tft_error_clear(&err);
		r = tft_runmeta_ingest(w, "bad.pbtxt", (const uint8_t *)bad, sizeof(bad) - 1, NULL, &err);
		ok(r == TFT_EFORMAT && err.offset == 56 &&
			   strstr(err.msg, "step_stats.dev_stats[0].node_stats[0].all_start_micros"),
		   "text error: offset and path (%lld: %s)", (long long)err.offset, err.msg);
		tft_writer_abort(w);
	}
	free(l);
}

static void test_binary_stepstats(void)
{
	struct enc ss = {0}, dev = {0};
	struct tft_error err;
	struct tft_session *s;
	int rc;

	e_str(&dev, 1, "/job:localhost/replica:0/task:0/device:CPU:0");
	node(&dev, "a", 10, 5, "a = Const()", NULL);
	node(&dev, "b", 12, 1, "b = Add(a, a)", NULL);
	e_msg(&ss, 1, &dev);
	is_int(tft_pb_sniff(ss.p, ss.len, "step_stats.pb"), TFT_PB_FMT_STEPSTATS, "sniff: binary StepStats");
	s = import_mem("step_stats.pb", ss.p, ss.len, &rc, &err);
	ok(s != NULL, "binary StepStats imports");
	if (s) {
		struct tft_session_summary sum;

		tft_session_get_summary(s, &sum);
		is_int(sum.slices, 2, "two slices");
		is_str(tft_session_meta(s, "format"), "stepstats", "format stepstats");
		tft_session_close(s);
	}
	free(ss.p);
}

/* A device field repeated with an empty last value: the decoder keeps the
 * last (empty: "unknown device"), so both DeviceStepStats are the same device. */
static void test_repeated_empty_device(void)
{
	struct enc ss = {0}, dev = {0};
	struct tft_error err;
	struct tft_session *s;
	int rc;

	e_str(&dev, 1, "/job:localhost/replica:0/task:0/device:GPU:0");
	node(&dev, "a", 20, 5, "a = Const()", NULL);
	e_str(&dev, 1, "");
	e_msg(&ss, 1, &dev);
	e_str(&dev, 1, "/job:localhost/replica:0/task:0/device:CPU:0");
	node(&dev, "b", 10, 1, "b = Add(a, a)", NULL);
	node(&dev, "c", 30, 1, "c = Add(b, b)", NULL);
	e_str(&dev, 1, "");
	e_msg(&ss, 1, &dev);
	s = import_mem("dupdev_step_stats.pb", ss.p, ss.len, &rc, &err);
	ok(s != NULL, "repeated device field, empty last: imports%s%s", s ? "" : ": ", s ? "" : err.msg);
	if (s) {
		struct tft_session_summary sum;

		tft_session_get_summary(s, &sum);
		is_int(sum.slices, 3, "repeated device field: three slices");
		tft_session_close(s);
	}
	free(ss.p);
}

/*
 * A binary RunMetadata whose step_stats is 91 or 123 bytes long starts with
 * "\n[" or "\n{", as JSON may: the input's format is still told right.
 */
static int ingest_auto(struct tft_writer *w, void *ctx, struct tft_error *err)
{
	const struct mem_input *in = ctx;

	return tft_ingest_mem(w, in->name, in->p, in->n, NULL, err);
}

static void test_json_lookalike(void)
{
	for (int want = 91; want <= 123; want += 32) {
		char name[80];
		struct enc rm = {0}, ss = {0}, dev = {0};
		struct tft_error err;
		struct tft_session *s;
		struct mem_input in = { "step.pb", NULL, 0 };
		int rc;

		/* pad the node name until the StepStats has the wanted length */
		for (size_t pad = 1; pad < 79; pad++) {
			memset(name, 'n', pad);
			name[pad] = 0;
			free(ss.p), free(dev.p);
			memset(&ss, 0, sizeof(ss)), memset(&dev, 0, sizeof(dev));
			e_str(&dev, 1, "/job:localhost/replica:0/task:0/device:CPU:0");
			node(&dev, name, 10, 5, NULL, NULL);
			e_msg(&ss, 1, &dev);
			if (ss.len == (size_t)want)
				break;
		}
		e_msg(&rm, 1, &ss);
		ok(rm.len > 2 && rm.p[0] == '\n' && rm.p[1] == (want == 91 ? '[' : '{'),
		   "RunMetadata starting with \"\\n%c\"", want == 91 ? '[' : '{');
		in.p = rm.p;
		in.n = rm.len;
		s = tft_test_import(tmpdir, ingest_auto, &in, &rc, &err);
		ok(s != NULL, "... imports as RunMetadata%s%s", s ? "" : ": ", s ? "" : err.msg);
		if (s) {
			is_str(tft_session_meta(s, "format"), "runmeta", "... format runmeta");
			tft_session_close(s);
		}
		free(rm.p);
		free(ss.p);
		free(dev.p);
	}
}

/*
 * The other way round: small JSON traces starting with "\n{" or "\n[" whose
 * text also walks as protobuf fields (quotes, spaces, braces and letters are
 * keys of valid wire types) stay JSON; and a binary RunMetadata whose first
 * bytes read "\nX\n:" (a text-format field name, then ':') is binary.
 */
static void test_lookalike_the_other_way(void)
{
	static const char *const json[] = {
		"\n{\n\"displayTimeUnit\": \"ns\", \"traceEvents\": [\n{\"name\": \"matmulx\", \"ph\": \"X\", "
		"\"ts\": 334428, \"dur\": 68, \"pid\": 1, \"tid\": 2}\n]}\n\n",
		"\n[\n  {\"name\": \"aten::addxxxxxxxx\", \"ph\": \"X\", \"ts\": 64246, \"dur\": 14, \"pid\": 1, "
		"\"tid\": 0}\n] \n",
	};
	static const uint8_t text_like[] = {
		0x0a, 0x58, 0x0a, 0x3a, 0x0a, 0x18, 0x2f, 0x64, 0x65, 0x76, 0x69, 0x63, 0x65, 0x3a, 0x47,
		0x50, 0x55, 0x3a, 0x30, 0x2f, 0x73, 0x74, 0x72, 0x65, 0x61, 0x6d, 0x3a, 0x61, 0x6c, 0x6c,
		0x12, 0x1e, 0x0a, 0x01, 0x61, 0x10, 0x91, 0x08, 0x28, 0x06, 0x42, 0x14, 0x6b, 0x65, 0x72,
		0x6e, 0x40, 0x40, 0x61, 0x3a, 0x4d, 0x61, 0x74, 0x4d, 0x75, 0x6c, 0x23, 0x69, 0x64, 0x3d,
		0x33, 0x23, 0x0a, 0x1a, 0x0a, 0x18, 0x2f, 0x64, 0x65, 0x76, 0x69, 0x63, 0x65, 0x3a, 0x47,
		0x50, 0x55, 0x3a, 0x30, 0x2f, 0x73, 0x74, 0x72, 0x65, 0x61, 0x6d, 0x3a, 0x61, 0x6c, 0x6c,
	};
	struct tft_error err;
	struct tft_session *s;
	int rc;

	for (size_t i = 0; i < sizeof(json) / sizeof(json[0]); i++) {
		struct mem_input in = { "trace.json", json[i], strlen(json[i]) };

		s = tft_test_import(tmpdir, ingest_auto, &in, &rc, &err);
		ok(s != NULL, "JSON starting with \"\\n%c\" imports as JSON%s%s", json[i][1], s ? "" : ": ",
		   s ? "" : err.msg);
		if (s) {
			is_str(tft_session_meta(s, "format"), "chrome", "... format chrome");
			tft_session_close(s);
		}
	}
	{
		struct mem_input in = { "run.pb", text_like, sizeof(text_like) };

		is_int(tft_pb_sniff(text_like, sizeof(text_like), "run.pb"), TFT_PB_FMT_RUNMETA,
		       "binary RunMetadata starting \"\\nX\\n:\": sniffed binary");
		s = tft_test_import(tmpdir, ingest_auto, &in, &rc, &err);
		ok(s != NULL, "... and imports%s%s", s ? "" : ": ", s ? "" : err.msg);
		if (s)
			tft_session_close(s);
	}
}

/* Several inputs into one session: the format and producer list each, once. */
static int ingest_three(struct tft_writer *w, void *ctx, struct tft_error *err)
{
	const struct mem_input *in = ctx;
	static const char json[] = "[{\"ph\":\"X\",\"name\":\"a\",\"ts\":1,\"dur\":2,\"pid\":1,\"tid\":1}]";
	int r = tft_ingest_mem(w, in->name, in->p, in->n, NULL, err);

	if (!r)
		r = tft_ingest_mem(w, "t.json", json, sizeof(json) - 1, NULL, err);
	if (!r)
		r = tft_ingest_mem(w, in->name, in->p, in->n, NULL, err);
	return r;
}

static void test_formats_joined(void)
{
	struct enc rm = {0}, ss = {0}, dev = {0};
	struct tft_error err;
	struct tft_session *s;
	struct mem_input in = { "run.pb", NULL, 0 };
	int rc;

	e_str(&dev, 1, "/job:localhost/replica:0/task:0/device:CPU:0");
	node(&dev, "a", 10, 5, "a = Const()", NULL);
	e_msg(&ss, 1, &dev);
	e_msg(&rm, 1, &ss);
	in.p = rm.p;
	in.n = rm.len;
	s = tft_test_import(tmpdir, ingest_three, &in, &rc, &err);
	ok(s != NULL, "runmeta + JSON + runmeta into one session%s%s", s ? "" : ": ", s ? "" : err.msg);
	if (s) {
		is_str(tft_session_meta(s, "format"), "runmeta+chrome", "format lists each input's once");
		is_str(tft_session_meta(s, "producer"), "TensorFlow", "producer: the one that says");
		tft_session_close(s);
	}
	free(rm.p);
	free(ss.p);
	free(dev.p);
}

/* ---- parallel import (opts.threads >= 2): the serial import's session ------------------ */

struct opts_input {
	const char *name;
	const void *p;
	size_t n;
	struct tft_ingest_opts opts;
};

static int ingest_opts(struct tft_writer *w, void *ctx, struct tft_error *err)
{
	const struct opts_input *in = ctx;

	return tft_runmeta_ingest(w, in->name, in->p, in->n, &in->opts, err);
}

static int dump_ev(void *ctx, const struct tft_event *ev)
{
	void **a = ctx;
	FILE *f = a[0];
	struct tft_session *s = a[1];

	fprintf(f, "  ev %lld %lld d%u k%u f%u c%u %s [%s]", (long long)ev->ts_ns, (long long)ev->dur_ns,
		ev->depth, ev->kind, ev->flags, ev->count, tft_session_str(s, ev->name, NULL),
		tft_session_str(s, ev->cat, NULL));
	for (int i = 0; i < ev->nargs; i++) {
		const struct tft_arg *g = &ev->args[i];

		fprintf(f, " %s:%u=", tft_session_str(s, g->key, NULL), g->type);
		if (g->type == TFT_ARG_STR || g->type == TFT_ARG_JSON)
			fprintf(f, "'%s'", tft_session_str(s, g->v.str, NULL));
		else
			fprintf(f, "%lld", (long long)g->v.i);
	}
	fputc('\n', f);
	return 0;
}

static int dump_flow(void *ctx, const struct tft_flow *fl)
{
	void **a = ctx;

	fprintf(a[0], "flow %llu %s/%s %u@%lld -> %u@%lld f%u\n", (unsigned long long)fl->flow_id,
		tft_session_str(a[1], fl->name, NULL), tft_session_str(a[1], fl->cat, NULL),
		fl->src_track, (long long)fl->src_ts_ns, fl->dst_track, (long long)fl->dst_ts_ns,
		fl->flags);
	return 0;
}

/* Everything a session holds, with strings resolved (their ids may differ); owned text. */
static char *session_text(struct tft_session *s)
{
	struct tft_session_summary sum;
	struct tft_error err;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	void *a[2] = {f, s};

	tft_session_get_summary(s, &sum);
	fprintf(f, "slices %llu flows %llu\n", (unsigned long long)sum.slices,
		(unsigned long long)sum.flows);
	for (uint32_t i = 0; i < tft_session_process_count(s); i++) {
		const struct tft_process *p = tft_session_process(s, i);

		fprintf(f, "process %u %s host %s pid %lld rank %d sort %d\n", p->id,
			tft_session_str(s, p->name, NULL), tft_session_str(s, p->host, NULL),
			(long long)p->pid, p->rank, p->sort_index);
	}
	for (uint32_t i = 0; i < tft_session_track_count(s); i++) {
		const struct tft_track *t = tft_session_track(s, i);

		fprintf(f, "track %u p%u k%u %s tid %lld sort %d n %llu depth %u %lld..%lld\n", t->id,
			t->process, t->kind, tft_session_str(s, t->name, NULL), (long long)t->tid,
			t->sort_index, (unsigned long long)t->slices, t->max_depth,
			(long long)t->min_ts_ns, (long long)t->max_ts_ns);
		tft_session_scan(s, t->id, INT64_MIN, INT64_MAX, 0, dump_ev, a, &err);
	}
	tft_session_flows(s, dump_flow, a, &err);
	for (uint32_t i = 0; i < tft_session_step_count(s); i++) {
		const struct tft_step *st = tft_session_step(s, i);

		fprintf(f, "step %lld %s p%u %lld+%lld %d\n", (long long)st->index,
			tft_session_str(s, st->name, NULL), st->process, (long long)st->start_ns,
			(long long)st->dur_ns, st->traced);
	}
	fprintf(f, "format %s\n", tft_session_meta(s, "format"));
	fclose(f);
	return buf;
}

/* Import with `threads` (and a pend budget); the session as text, or the error as text. */
static char *import_text(const char *name, const struct enc *in, int threads, size_t mem_budget)
{
	struct opts_input oi = {name, in->p, in->len, {0}};
	struct tft_error err;
	struct tft_session *s;
	char *t;
	int rc;

	oi.opts.threads = threads;
	oi.opts.mem_budget = mem_budget;
	s = tft_test_import(tmpdir, ingest_opts, &oi, &rc, &err);
	if (!s) {
		if (asprintf(&t, "error %d at %lld: %s (%s)", rc, (long long)err.offset, err.msg,
			     err.file) < 0)
			abort();
		return t;
	}
	t = session_text(s);
	tft_session_close(s);
	return t;
}

/* A pseudo-random generator, so that inputs are the same on every run. */
static uint64_t prng(uint64_t *st)
{
	*st = *st * 6364136223846793005ULL + 1442695040888963407ULL;
	return *st >> 33;
}

/*
 * A StepStats of many devices: compute and comm nodes in every order (comm
 * first, comm last, comm only, neither), stream kernels whose annotations
 * name NCCL ops, a device without nodes, thread_names, fields the direct
 * reader does not take, send/recv pairs across devices; with jitter, times
 * out of order.
 */
static void build_par_stepstats(struct enc *ss, int nodes, int jitter)
{
	static const char *const devs[] = {
		W0 "/device:GPU:0", W0 "/device:CPU:0", W0 "/device:GPU:0/stream:all",
		W1 "/device:CPU:0", W1 "/device:GPU:0", W0 "/device:GPU:0/stream:7",
		W1 "/device:GPU:1", W0 "/device:GPU:0/memcpy", "", W1 "/device:GPU:1/stream:3",
	};
	uint64_t st = 42;
	char name[96], label[256];

	for (int d = 0; d < (int)(sizeof(devs) / sizeof(devs[0])); d++) {
		struct enc dev = {0}, tn = {0};
		int n = d == 4 ? 0 : nodes / (1 + d % 3);

		if (d != 3) /* (W1 CPU:0: device name after the nodes) */
			e_str(&dev, 1, devs[d]);
		for (int i = 0; i < n; i++) {
			int64_t ts = T0 + 100 * i + (jitter ? (int64_t)(prng(&st) % 300) : 0);
			int kind = (int)(prng(&st) % 16);
			struct enc ex = {0};

			snprintf(name, sizeof(name), "blk%d/op%d", (int)(prng(&st) % 5), (int)(prng(&st) % 7));
			if ((d == 1 && i == 0) || (d == 3 && kind < 8)) {
				snprintf(label, sizeof(label), "%s = _Send(t%d @%s/device:CPU:0", name,
					 (int)(prng(&st) % 9), d == 1 ? W1 : W0);
			} else if (d == 1 && kind == 3) {
				snprintf(label, sizeof(label), "%s = _Recv(t%d @" W1 "/device:CPU:0", name,
					 (int)(prng(&st) % 9));
			} else if (d == 3) {
				snprintf(name, sizeof(name), "RecvTensor");
				snprintf(label, sizeof(label),
					 "[64B] " W1 "/device:CPU:0;01;" W0 "/device:CPU:0;t%d;0:0 from " W1
					 "/device:CPU:0 to " W0 "/device:CPU:0",
					 (int)(prng(&st) % 9));
			} else if ((d == 2 || d == 5 || d == 9) && kind == 5) {
				snprintf(label, sizeof(label), "nccl_kernel regs:32@@%s:NcclAllReduce", name);
			} else if (d == 2 || d == 5 || d == 9) {
				snprintf(label, sizeof(label), "sgemm_%d regs:64 grid:1,1,1@@%s:MatMul",
					 kind, name);
			} else if (d == 7) {
				snprintf(label, sizeof(label), "MEMCPYHtoD bytes:%d async", 64 * kind);
			} else if (d == 0 && i == n / 2) {
				snprintf(label, sizeof(label), "%s = HorovodAllreduce(g)", name);
			} else {
				snprintf(label, sizeof(label), "%s = %s(a%d, b)", name,
					 kind < 4 ? "Relu" : kind < 9 ? "Conv2D" : "Const", kind);
			}
			if (d == 6 && kind == 1)
				e_int(&ex, 99, 7); /* an unknown field: the table decoder's node */
			if (kind == 2) {
				e_int(&ex, 10, 4242); /* thread_id */
				e_int(&ex, 13, (uint64_t)(ts * 1000 + 17));
			}
			node(&dev, name, ts, (int64_t)(prng(&st) % 50), label, ex.len ? &ex : NULL);
			free(ex.p);
		}
		if (d == 6 || d == 8) {
			e_int(&tn, 1, 4242);
			e_str(&tn, 2, "pool_3");
			e_msg(&dev, 3, &tn);
		}
		if (d == 3)
			e_str(&dev, 1, devs[d]);
		e_msg(ss, 1, &dev);
		free(tn.p);
	}
}

/* One input, serially and on 2, 3 and 4 threads: the same session, or the same error. */
static int same_par(const char *what, const char *name, const struct enc *in, size_t budget)
{
	char *base = import_text(name, in, 0, budget);
	int same = 1;

	for (int t = 2; t <= 4; t++) {
		char *got = import_text(name, in, t, budget);

		if (strcmp(base, got) != 0) {
			size_t k = 0;

			while (base[k] && base[k] == got[k])
				k++;
			while (k && base[k - 1] != '\n')
				k--;
			printf("# %s, %d threads: differs at\n#   serial:   %.200s\n#   parallel: %.200s\n",
			       what, t, base + k, got + k);
			same = 0;
		}
		free(got);
	}
	free(base);
	return same;
}

static void test_parallel(void)
{
	struct enc ss = {0}, rm = {0}, bad = {0}, dev = {0}, n = {0};
	uint64_t st = 7;
	char *t;
	int same, flips = 0;

	build_par_stepstats(&ss, 400, 0);
	ok(same_par("StepStats in order", "par_step_stats.pb", &ss, 0),
	   "StepStats in time order on 2-4 threads: the serial session");
	ok(same_par("StepStats in order, small budget", "par_step_stats.pb", &ss, 96 << 10),
	   "StepStats in time order, devices in parts: the serial session");
	free(ss.p);
	memset(&ss, 0, sizeof(ss));
	build_par_stepstats(&ss, 400, 1);
	t = import_text("par_step_stats.pb", &ss, 2, 0);
	ok(strncmp(t, "slices ", 7) == 0, "many-device StepStats imports on 2 threads%s%.200s",
	   strncmp(t, "slices ", 7) ? ": " : "", strncmp(t, "slices ", 7) ? t : "");
	free(t);
	ok(same_par("StepStats", "par_step_stats.pb", &ss, 0),
	   "StepStats on 2-4 threads: the serial session, event for event");
	/* A budget that the large devices outgrow: redone serially, spilled to the sorter. */
	ok(same_par("StepStats, small budget", "par_step_stats.pb", &ss, 64 << 10),
	   "devices over a worker's budget: the serial session");

	/* Errors: the first in file order, with its offset and path. */
	same = 1;
	for (size_t cut = 1; cut < ss.len && same; cut += ss.len / 41 + 1) {
		struct enc c = {ss.p, cut, cut};

		same = same_par("truncated", "cut.pb", &c, 0);
	}
	ok(same, "truncated StepStats: the serial error (or session)");
	bad.p = malloc(ss.len);
	bad.len = bad.cap = ss.len;
	for (same = 1; flips < 30 && same; flips++) {
		size_t a = prng(&st) % ss.len, b = prng(&st) % ss.len;

		memcpy(bad.p, ss.p, ss.len);
		bad.p[a] ^= (uint8_t)(1u << (prng(&st) % 8));
		bad.p[b] ^= 0xff;
		same = same_par("bit flips", "flip.pb", &bad, 0);
	}
	ok(same, "StepStats with flipped bits (%d inputs): the serial error (or session)", flips);
	free(bad.p);

	/* One large device: its nodes in parts on the threads. */
	{
		struct enc one = {0}, d1 = {0};
		char label[96];

		e_str(&d1, 1, W0 "/device:GPU:0");
		for (int i = 0; i < 3000; i++) {
			snprintf(label, sizeof(label), "n%d = %s(a)", i % 17, i % 5 ? "MatMul" : "Relu");
			node(&d1, "n", T0 + 10 * i + (int64_t)(prng(&st) % 20), 7, label, NULL);
		}
		e_msg(&one, 1, &d1);
		ok(same_par("one device", "one_step_stats.pb", &one, 0),
		   "a lone large device on 2-4 threads: the serial session");
		/* Each part within a worker's budget, all of them over the whole of it. */
		ok(same_par("one device, small budget", "one_step_stats.pb", &one, 256 << 10),
		   "a lone device whose parts outgrow the budget: the serial session");
		free(one.p);
	}

	/* In a RunMetadata, between graphs (e_msg() takes ss). */
	e_str(&n, 1, "x/_1");
	e_int(&n, 9, 5);
	e_msg(&dev, 1, &n);
	e_msg(&rm, 2, &dev);
	e_msg(&rm, 1, &ss);
	e_str(&n, 1, "x/_2");
	e_msg(&dev, 1, &n);
	e_msg(&rm, 3, &dev);
	ok(same_par("RunMetadata", "par_run_metadata.pb", &rm, 0),
	   "RunMetadata on 2-4 threads: the serial session");
	free(rm.p);
	memset(&rm, 0, sizeof(rm));
	build_runmeta(&rm);
	ok(same_par("test RunMetadata", "step3.pb", &rm, 0),
	   "the binary test RunMetadata on 2-4 threads: the serial session");
	free(rm.p);
}

/* Several inputs in one session: each mem_input in turn, into one writer. */
struct mem_inputs {
	const struct mem_input *in;
	int n;
};

static int ingest_all(struct tft_writer *w, void *ctx, struct tft_error *err)
{
	const struct mem_inputs *all = ctx;
	int r = 0;

	for (int i = 0; i < all->n && !r; i++)
		r = tft_runmeta_ingest(w, all->in[i].name, all->in[i].p, all->in[i].n, NULL, err);
	return r;
}

/* One worker's step at t (us): its CPU:0 sends edge_5_x to task 1. */
static void sender_step(struct enc *rm, int64_t t)
{
	struct enc ss = {0}, dev = {0};

	e_str(&dev, 1, W0 "/device:CPU:0");
	node(&dev, "x", t, 1, "x = Const()", NULL);
	node(&dev, "x/_1", t + 1, 1, "x/_1 = _Send(edge_5_x @" W1 "/device:CPU:0", NULL);
	e_msg(&ss, 1, &dev);
	e_msg(rm, 1, &ss);
}

/*
 * The receiving worker's step at t: the RPC logger's RecvTensor and the
 * _Recv; with `busy`, a node that keeps the worker busy that long (us).
 */
static void receiver_step_busy(struct enc *rm, int64_t t, int64_t busy)
{
	struct enc ss = {0}, dev = {0};

	e_str(&dev, 1, W1 "/device:CPU:0");
	if (busy)
		node(&dev, "busy", t, busy, "busy = MatMul(a, a)", NULL);
	node(&dev, "RecvTensor", t + 3, -1,
	     "[4096B] " W0 "/device:CPU:0;0000000000000001;" W1 "/device:CPU:0;edge_5_x;0:0 from " W0
	     "/device:CPU:0 to " W1 "/device:CPU:0",
	     NULL);
	node(&dev, "x/_2", t + 2, 60, "x/_2 = _Recv(edge_5_x @" W0 "/device:CPU:0", NULL);
	e_msg(&ss, 1, &dev);
	e_msg(rm, 1, &ss);
}

static void receiver_step(struct enc *rm, int64_t t)
{
	receiver_step_busy(rm, t, 0);
}

/*
 * One file per worker and step (how distributed TF saves them): a _Send in
 * worker 0's file, its RecvTensor and _Recv in worker 1's. The session links
 * them across the files, within the step whose files overlap in time: worker
 * 0's first step, whose partner file is missing, stays unmatched (not linked
 * to the next step's receive), whatever the order of the inputs.
 */
static void test_flows_across_files(void)
{
	struct enc s1 = {0}, s2 = {0}, r2 = {0};
	const int64_t t2 = T0 + 1000000;

	sender_step(&s1, T0);
	sender_step(&s2, t2);
	receiver_step(&r2, t2);
	for (int order = 0; order < 2; order++) {
		struct mem_input in[3] = { { "w0-step1.pb", s1.p, s1.len },
					   { "w0-step2.pb", s2.p, s2.len },
					   { "w1-step2.pb", r2.p, r2.len } };
		struct mem_inputs all = { in, 3 };
		struct flowlist fl = {0};
		struct tft_session_summary sum;
		struct tft_error err;
		struct tft_session *s;
		int rc, send2 = 0, recv = 0, lone1 = 0;

		if (order) { /* the receiver's file first */
			struct mem_input t = in[0];
			in[0] = in[2];
			in[2] = t;
		}
		s = tft_test_import(tmpdir, ingest_all, &all, &rc, &err);
		if (!ok(s != NULL, "flows across files (order %d): imported (%s)", order, err.msg))
			continue;
		tft_session_flows(s, collect_flow, &fl, &err);
		tft_session_get_summary(s, &sum);
		ok(fl.n == 3, "flows across files (order %d): send -> RecvTensor -> recv, and a lone send (%d)",
		   order, fl.n);
		ok(sum.unmatched_flows == 1, "flows across files (order %d): one unmatched, the first step's send (%llu)",
		   order, (unsigned long long)sum.unmatched_flows);
		for (int i = 0; i < fl.n; i++) {
			const struct tft_flow *f = &fl.f[i];

			if (f->src_ts_ns == (t2 + 1) * 1000 && f->dst_ts_ns == (t2 + 3) * 1000 &&
			    !(f->flags & TFT_FLOWF_UNMATCHED))
				send2 = 1;
			if (f->src_ts_ns == (t2 + 3) * 1000 && (f->flags & TFT_FLOWF_BIND_ENCLOSING))
				recv = 1;
			if (f->src_ts_ns == (T0 + 1) * 1000 && f->dst_track == TFT_NONE &&
			    (f->flags & TFT_FLOWF_UNMATCHED))
				lone1 = 1;
		}
		ok(send2, "flows across files (order %d): the second step's send to the peer's RecvTensor", order);
		ok(recv, "flows across files (order %d): the RecvTensor into the _Recv", order);
		ok(lone1, "flows across files (order %d): the first step's send, one end", order);
		tft_session_close(s);
	}
	free(s1.p);
	free(s2.p);
	free(r2.p);
}

/* The flows of a session of mem_inputs, and its unmatched count. */
static int import_flows(const struct mem_input *in, int n, struct flowlist *fl, uint64_t *unmatched)
{
	struct mem_inputs all = { in, n };
	struct tft_session_summary sum;
	struct tft_error err;
	struct tft_session *s;
	int rc;

	memset(fl, 0, sizeof(*fl));
	s = tft_test_import(tmpdir, ingest_all, &all, &rc, &err);
	if (!s)
		return -1;
	tft_session_flows(s, collect_flow, fl, &err);
	tft_session_get_summary(s, &sum);
	*unmatched = sum.unmatched_flows;
	tft_session_close(s);
	return 0;
}

static int has_flow(const struct flowlist *fl, int64_t src_us, int64_t dst_us)
{
	for (int i = 0; i < fl->n; i++)
		if (fl->f[i].src_ts_ns == src_us * 1000 && fl->f[i].dst_ts_ns == dst_us * 1000 &&
		    !(fl->f[i].flags & TFT_FLOWF_UNMATCHED))
			return 1;
	return 0;
}

/*
 * Per-worker files whose spans do not tell the steps apart: a _Send does
 * not wait, so the peer's step may start after the sender's ended; a
 * receiver busy longer than a step overlaps the sender's next step, whose
 * first file is missing. Each receive still takes the send of its step
 * (the latest that started before it ended), never one of another step,
 * never backwards in time.
 */
static void test_flows_across_steps(void)
{
	struct enc s0 = {0}, r0 = {0}, s1 = {0}, s2 = {0}, b0 = {0}, b1 = {0}, b2 = {0};
	struct flowlist fl;
	uint64_t un = 0;

	sender_step(&s0, T0);
	receiver_step(&r0, T0 + 10); /* after the sender's step ended (T0 + 3) */
	{
		struct mem_input in[2] = { { "w0.pb", s0.p, s0.len }, { "w1.pb", r0.p, r0.len } };
		int rc = import_flows(in, 2, &fl, &un);

		ok(rc == 0 && has_flow(&fl, T0 + 1, T0 + 13) && un == 0,
		   "async send: linked to the peer's later RecvTensor (%d flows, %llu unmatched)", fl.n,
		   (unsigned long long)un);
	}
	/* steps every 1000 us; worker 1 busy 1500 us per step; worker 0's first file missing */
	sender_step(&s1, T0 + 1000);
	sender_step(&s2, T0 + 2000);
	receiver_step_busy(&b0, T0 + 10, 1500);
	receiver_step_busy(&b1, T0 + 1010, 1500);
	receiver_step_busy(&b2, T0 + 2010, 1500);
	{
		struct mem_input in[5] = { { "w0-1.pb", s1.p, s1.len }, { "w0-2.pb", s2.p, s2.len },
					   { "w1-0.pb", b0.p, b0.len }, { "w1-1.pb", b1.p, b1.len },
					   { "w1-2.pb", b2.p, b2.len } };

		int rc = import_flows(in, 5, &fl, &un);

		ok(rc == 0 && has_flow(&fl, T0 + 1001, T0 + 1013) &&
			   has_flow(&fl, T0 + 2001, T0 + 2013) && !has_flow(&fl, T0 + 1001, T0 + 13) && un == 1,
		   "overlapping steps, a file missing: each send to its own step's RecvTensor, "
		   "the first step's unmatched (%d flows, %llu unmatched)", fl.n, (unsigned long long)un);
	}
	/*
	 * Two of worker 0's files overlap in time (A sends at +10 and +30, B at
	 * +20); worker 1 receives three times. Once B's send is taken, the next
	 * receive still takes A's earliest send, not its later one: no crossing.
	 */
	{
		struct enc a = {0}, b = {0}, c = {0}, ss = {0}, dev = {0};
		static const char send_label[] = "x/_1 = _Send(e @" W1 "/device:CPU:0";
		static const char recv_label[] = "x/_2 = _Recv(e @" W0 "/device:CPU:0";

		e_str(&dev, 1, W0 "/device:CPU:0");
		node(&dev, "x/_1", T0 + 10, 1, send_label, NULL);
		node(&dev, "x/_1", T0 + 30, 1, send_label, NULL);
		e_msg(&ss, 1, &dev);
		e_msg(&a, 1, &ss);
		e_str(&dev, 1, W0 "/device:CPU:0");
		node(&dev, "x/_1", T0 + 20, 1, send_label, NULL);
		e_msg(&ss, 1, &dev);
		e_msg(&b, 1, &ss);
		e_str(&dev, 1, W1 "/device:CPU:0");
		node(&dev, "x/_2", T0 + 21, 4, recv_label, NULL);
		node(&dev, "x/_2", T0 + 31, 9, recv_label, NULL);
		node(&dev, "x/_2", T0 + 32, 18, recv_label, NULL);
		e_msg(&ss, 1, &dev);
		e_msg(&c, 1, &ss);
		{
			struct mem_input in[3] = { { "w0-a.pb", a.p, a.len }, { "w0-b.pb", b.p, b.len },
						   { "w1.pb", c.p, c.len } };
			int rc = import_flows(in, 3, &fl, &un);

			ok(rc == 0 && has_flow(&fl, T0 + 10, T0 + 31) && has_flow(&fl, T0 + 30, T0 + 32) && un == 0,
			   "one worker's overlapping files: its sends taken in order, no crossing arrows "
			   "(%d flows, %llu unmatched)", fl.n, (unsigned long long)un);
		}
		free(a.p);
		free(b.p);
		free(c.p);
	}
	/*
	 * Two ranks' files, both /job:localhost/replica:0/task:0 at one time: a
	 * send between one worker's devices is completed in its own file or not
	 * at all, never by another rank's receive.
	 */
	{
		struct enc a = {0}, b = {0}, ss = {0}, dev = {0};

		e_str(&dev, 1, "/job:localhost/replica:0/task:0/device:CPU:0");
		node(&dev, "x/_1", T0 + 5, 1, "x/_1 = _Send(e @/job:localhost/replica:0/task:0/device:GPU:0", NULL);
		e_msg(&ss, 1, &dev);
		e_msg(&a, 1, &ss);
		e_str(&dev, 1, "/job:localhost/replica:0/task:0/device:GPU:0");
		node(&dev, "x/_2", T0 + 2, 60, "x/_2 = _Recv(e @/job:localhost/replica:0/task:0/device:CPU:0", NULL);
		e_msg(&ss, 1, &dev);
		e_msg(&b, 1, &ss);
		{
			struct mem_input in[2] = { { "rank0.pb", a.p, a.len }, { "rank1.pb", b.p, b.len } };
			int rc = import_flows(in, 2, &fl, &un);

			ok(rc == 0 && fl.n == 2 && un == 2,
			   "two ranks, one name: one worker's send not linked to another rank's receive "
			   "(%d flows, %llu unmatched)", fl.n, (unsigned long long)un);
		}
		free(a.p);
		free(b.p);
	}
	free(s0.p);
	free(r0.p);
	free(s1.p);
	free(s2.p);
	free(b0.p);
	free(b1.p);
	free(b2.p);
}

static void test_names(void)
{
	struct tft_tf_device d;
	struct tft_tf_label lb;
	char buf[256];
	struct tft_tf_str rest, in, a, b;
	const char *s;

	s = "/job:worker/replica:0/task:3/device:GPU:1/stream:14MemcpyH2D";
	tft_tf_names_parse_device(s, strlen(s), &d);
	ok(d.task == 3 && d.replica == 0 && d.index == 1 && d.stream == 14 &&
		   d.stream_suffix.len == 9 && (d.flags & TFT_TF_DEV_STREAM),
	   "device with stream id and type suffix");
	tft_tf_names_process(&d, buf, sizeof(buf));
	is_str(buf, "/job:worker/replica:0/task:3", "process of a job device");
	tft_tf_names_canon_device(&d, buf, sizeof(buf));
	is_str(buf, "/job:worker/replica:0/task:3/device:GPU:1", "canonical device");
	s = "/job:localhost/replica:0/task:0/gpu:0";
	tft_tf_names_parse_device(s, strlen(s), &d);
	tft_tf_names_canon_device(&d, buf, sizeof(buf));
	is_str(buf, "/job:localhost/replica:0/task:0/device:GPU:0", "legacy lower-case type canonicalised");
	s = "/gpu:0/stream:all";
	tft_tf_names_parse_device(s, strlen(s), &d);
	tft_tf_names_process(&d, buf, sizeof(buf));
	ok((d.flags & TFT_TF_DEV_STREAM_ALL) && (d.flags & TFT_TF_DEV_LEGACY) && !strcmp(buf, "localhost"),
	   "legacy stream:all -> localhost");
	s = "/device:GPU:0/memcpy";
	tft_tf_names_parse_device(s, strlen(s), &d);
	ok((d.flags & TFT_TF_DEV_MEMCPY) && d.index == 0, "memcpy pseudo-device");
	s = "/device:GPU:2/sync";
	tft_tf_names_parse_device(s, strlen(s), &d);
	ok((d.flags & TFT_TF_DEV_SYNC) && d.index == 2, "sync pseudo-device");
	s = "/host:CPU";
	tft_tf_names_parse_device(s, strlen(s), &d);
	ok(d.flags & TFT_TF_DEV_HOST, "host:CPU");
	s = "device:SYCL:0";
	tft_tf_names_parse_device(s, strlen(s), &d);
	ok(d.index == 0 && d.type.len == 4 && !memcmp(d.type.p, "SYCL", 4), "device:SYCL:0 without slash");
	ok(tft_tf_names_parse_device("garbage", 7, &d) == -1, "not a device");

	s = "[cpu 0.1MB 0.2MB] [GPU_0_bfc 1.0MB] n = Op(a, b:1, ^c)";
	tft_tf_names_parse_label(s, strlen(s), &lb);
	ok(lb.kind == TFT_TF_LABEL_OP && lb.name.len == 1 && lb.op.len == 2 && lb.mem.len == 35,
	   "op label with two allocator prefixes");
	rest = lb.inputs;
	ok(tft_tf_names_next_input(&rest, &in) && in.len == 1 && tft_tf_names_next_input(&rest, &in) &&
		   in.len == 3 && tft_tf_names_next_input(&rest, &in) && in.len == 2 && in.p[0] == '^' &&
		   !tft_tf_names_next_input(&rest, &in),
	   "inputs iterate a, b:1, ^c");
	s = "[1.5MB] key from /a:0 to /b:1";
	tft_tf_names_parse_label(s, strlen(s), &lb);
	ok(lb.kind == TFT_TF_LABEL_TRANSFER && lb.bytes == 1572864 && lb.src_device.len == 4 &&
		   lb.dst_device.len == 4,
	   "transfer label with MB size");
	s = "k ThreadId 5";
	tft_tf_names_parse_label("ThreadId 77", 11, &lb);
	ok(lb.kind == TFT_TF_LABEL_SYNC && lb.thread_id == 77, "sync label");
	tft_tf_names_parse_label("MemcpyDtoH bytes:12 aync", 24, &lb);
	ok(lb.kind == TFT_TF_LABEL_MEMCPY && lb.bytes == 12 && lb.async, "memcpy label (TF's 'aync' spelling)");
	s = "outer:Func::inner/op:MatMul#id=1#";
	rest.p = s;
	rest.len = strlen(s);
	tft_tf_names_split_annotation(rest, &a, &b);
	ok(a.len == 8 && !memcmp(a.p, "inner/op", 8) && b.len == 6 && !memcmp(b.p, "MatMul", 6),
	   "annotation: innermost scope, TraceMe metadata dropped");
	rest.p = "a;b;c;edge_1;0:0";
	rest.len = strlen(rest.p);
	a = tft_tf_names_rendezvous_tensor(rest);
	ok(a.len == 6 && !memcmp(a.p, "edge_1", 6), "rendezvous key -> tensor");
	{
		struct tft_tf_str nn = {"RecvTensor", 10}, none = {NULL, 0}, op = {"NcclAllReduce", 13},
				  mm = {"MatMul", 6};

		ok(tft_tf_names_is_comm(nn, none) && tft_tf_names_is_comm(none, op) &&
			   !tft_tf_names_is_comm(mm, mm),
		   "communication detection");
	}
	is_int(tft_pb_sniff((const uint8_t *)"node { name: 'a' op: 'Const' }", 30, "g.pbtxt"),
	       TFT_PB_FMT_GRAPHDEF_TEXT, "sniff: text GraphDef");
	is_int(tft_pb_sniff((const uint8_t *)"\x0a\x0c\x0a\x01" "a\x12\x05" "Const", 14, "graph.pb"),
	       TFT_PB_FMT_GRAPHDEF, "sniff: binary GraphDef");
	/* NodeDef { name: "a" op: "MatMul" input: "b" } vs HloModuleProto { name,
	 * entry_computation_name, computations { name } }: the same first keys */
	is_int(tft_pb_sniff((const uint8_t *)"\x0a\x0e\x0a\x01" "a\x12\x06" "MatMul\x1a\x01" "b", 16, "g.pb"),
	       TFT_PB_FMT_GRAPHDEF, "sniff: binary GraphDef with an input");
	is_int(tft_pb_sniff((const uint8_t *)"\x0a\x12\x0a\x01" "m\x12\x06" "main.4\x1a\x05\x0a\x03" "c.1", 20,
			    "module.pb"),
	       TFT_PB_FMT_HLOPROTO, "sniff: HloProto by content");
	is_int(tft_pb_sniff((const uint8_t *)"\x0a\x0e\x0a\x01" "a\x12\x06" "MatMul\x1a\x01" "b", 16,
			    "dir/jit_f(1).hlo_proto.pb"),
	       TFT_PB_FMT_HLOPROTO, "sniff: HloProto by name");
	is_str(tft_pb_xprof_tool_output("run/host.overview_page.pb"), "overview page", "XProf tool output by name");
	ok(tft_pb_xprof_tool_output("run/host.xplane.pb") == NULL && tft_pb_xprof_tool_output(NULL) == NULL,
	   "a trace is no XProf tool output");

	is_int(tft_pb_sniff((const uint8_t *)"\xff\xff", 2, "x.bin"), TFT_PB_FMT_UNKNOWN, "sniff: junk");
	is_int(tft_pb_sniff((const uint8_t *)"\x00", 1, "a/b/host.xplane.pb"), TFT_PB_FMT_XSPACE,
	       "sniff: .xplane.pb by name");
	is_str(tft_tf_names_format_name(TFT_PB_FMT_STEPSTATS_TEXT), "stepstats_text", "format name");
}

int main(void)
{
	const char *data = getenv("TFT_DATA");
	char tmpl[] = "/tmp/tft-runmeta-XXXXXX";

	if (!data)
		data = "../shared/data";
	if (!mkdtemp(tmpl)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(tmpdir, sizeof(tmpdir), "%s", tmpl);
	test_names();
	test_flows_across_files();
	test_flows_across_steps();
	test_binary();
	test_nested_error_path();
	test_binary_stepstats();
	test_repeated_empty_device();
	test_json_lookalike();
	test_lookalike_the_other_way();
	test_formats_joined();
	test_parallel();
	test_text(data);
	{
		char cmd[400];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd) != 0)
			printf("# could not remove %s\n", tmpdir);
	}
	return done_testing();
}
