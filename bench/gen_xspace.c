/* SPDX-License-Identifier: MIT */
/*
 * Benchmark input generator: writes a synthetic XSpace (.xplane.pb) of about
 * SIZE_MB megabytes, shaped like a TF2 GPU profile: a /host:CPU plane with
 * executor threads (TraceContext steps > ops > cudaLaunchKernel with
 * correlation ids) and GPU planes with two kernel streams, an "XLA Ops" and a
 * "Steps" line; stats of every value kind (uint64, int64, double, str, ref).
 * With --runmeta it writes a binary RunMetadata instead (TF1 FULL_TRACE
 * shape: two workers, executor ops with memory/output records, GPU tracer
 * kernels on stream:all and stream:N, memcpys, _Send/RecvTensor/_Recv).
 * Deterministic (fixed seed).
 * Usage: gen_xspace SIZE_MB OUT.xplane.pb | gen_xspace --runmeta SIZE_MB OUT.pb
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NGPU 4
#define NSTREAM 2
#define NTHREAD 8
#define NOPS 400      /* distinct op names */
#define OPS_PER_STEP 2000

/* Stat metadata ids, shared by every plane. */
enum {
	S_CORR = 1, S_GROUP, S_STEP_NUM, S_TF_OP, S_KERNEL_DETAILS, S_HLO_OP, S_HLO_MODULE,
	S_FLOPS, S_BYTES, S_OCC, S_MEMCPY, S_NSTATS,
};
static const char *const stat_names[S_NSTATS] = {
	NULL, "correlation_id", "group_id", "step_num", "tf_op", "kernel_details", "hlo_op",
	"hlo_module", "flops", "bytes_accessed", "occupancy_pct", "memcpy_details",
};
/* Ref targets (strings stored as stat metadata) start here. */
#define REF_BASE 1000

struct buf {
	uint8_t *p; /* owned */
	size_t len, cap;
};

static void reserve(struct buf *b, size_t n)
{
	if (b->cap - b->len >= n)
		return;
	while (b->cap - b->len < n)
		b->cap = b->cap ? b->cap * 2 : 4096;
	b->p = realloc(b->p, b->cap);
	if (!b->p) {
		fprintf(stderr, "gen_xspace: out of memory\n");
		exit(1);
	}
}

static void put_varint(struct buf *b, uint64_t v)
{
	reserve(b, 10);
	while (v >= 0x80) {
		b->p[b->len++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	b->p[b->len++] = (uint8_t)v;
}

static size_t varint_len(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static void put_raw(struct buf *b, const void *p, size_t n)
{
	reserve(b, n);
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

static void put_int(struct buf *b, uint32_t num, uint64_t v)
{
	put_varint(b, (uint64_t)num << 3);
	put_varint(b, v);
}

static void put_double(struct buf *b, uint32_t num, double d)
{
	uint64_t v;

	memcpy(&v, &d, 8);
	put_varint(b, (uint64_t)num << 3 | 1);
	reserve(b, 8);
	for (int i = 0; i < 8; i++)
		b->p[b->len++] = (uint8_t)(v >> (8 * i));
}

static void put_bytes(struct buf *b, uint32_t num, const void *p, size_t n)
{
	put_varint(b, (uint64_t)num << 3 | 2);
	put_varint(b, n);
	put_raw(b, p, n);
}

static void put_str(struct buf *b, uint32_t num, const char *s)
{
	put_bytes(b, num, s, strlen(s));
}

/* Append sub as field num of b (sub is reset for reuse). */
static void put_msg(struct buf *b, uint32_t num, struct buf *sub)
{
	put_bytes(b, num, sub->p, sub->len);
	sub->len = 0;
}

static uint64_t rng = 0x243F6A8885A308D3ull;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* XStat kinds: 'u' uint64, 'i' int64, 'd' double, 's' str, 'r' ref. */
static void stat(struct buf *ev, struct buf *tmp, int meta, char kind, uint64_t v, double d,
		 const char *s)
{
	put_int(tmp, 1, (uint64_t)meta);
	switch (kind) {
	case 'u': put_int(tmp, 3, v); break;
	case 'i': put_int(tmp, 4, v); break;
	case 'd': put_double(tmp, 2, d); break;
	case 's': put_str(tmp, 5, s); break;
	case 'r': put_int(tmp, 7, v); break;
	}
	put_msg(ev, 4, tmp);
}

struct line {
	struct buf events; /* encoded field-4 entries */
	int64_t id;
	char name[64];
	int64_t ts_ns;
	int64_t cursor_ps; /* next free time on this line */
};

struct plane {
	int64_t id;
	char name[32];
	struct line *lines;
	int nlines;
	struct buf meta; /* encoded field-4/5 map entries */
};

static void stat_meta(struct buf *meta, struct buf *tmp, struct buf *ent, int64_t id, const char *name)
{
	put_int(tmp, 1, (uint64_t)id);
	put_str(tmp, 2, name);
	put_int(ent, 1, (uint64_t)id);
	put_msg(ent, 2, tmp);
	put_msg(meta, 5, ent);
}

static void event_meta(struct buf *meta, struct buf *tmp, struct buf *ent, int64_t id,
		       const char *name, const char *display)
{
	put_int(tmp, 1, (uint64_t)id);
	put_str(tmp, 2, name);
	if (display)
		put_str(tmp, 4, display);
	put_int(ent, 1, (uint64_t)id);
	put_msg(ent, 2, tmp);
	put_msg(meta, 4, ent);
}

static void event(struct line *l, struct buf *tmp, int64_t meta, int64_t start_ps, int64_t dur_ps)
{
	put_int(tmp, 1, (uint64_t)meta);
	put_int(tmp, 2, (uint64_t)(start_ps - l->ts_ns * 1000));
	if (dur_ps)
		put_int(tmp, 3, (uint64_t)dur_ps);
}

static size_t msg_size(size_t payload, uint32_t num)
{
	return varint_len((uint64_t)num << 3 | 2) + varint_len(payload) + payload;
}

static size_t line_payload(const struct line *l)
{
	size_t n = 0;

	n += 1 + varint_len((uint64_t)l->id);
	n += msg_size(strlen(l->name), 2);
	n += 1 + varint_len((uint64_t)l->ts_ns);
	n += l->events.len;
	n += msg_size(strlen(l->name), 11);
	return n;
}

static size_t plane_payload(const struct plane *p)
{
	size_t n = 0;

	if (p->id)
		n += 1 + varint_len((uint64_t)p->id);
	n += msg_size(strlen(p->name), 2);
	for (int i = 0; i < p->nlines; i++)
		n += msg_size(line_payload(&p->lines[i]), 3);
	n += p->meta.len;
	return n;
}

static void out(FILE *fp, const void *p, size_t n)
{
	if (n && fwrite(p, 1, n, fp) != n) {
		perror("gen_xspace: write");
		exit(1);
	}
}

static void out_varint(FILE *fp, uint64_t v)
{
	struct buf b = {0};

	put_varint(&b, v);
	out(fp, b.p, b.len);
	free(b.p);
}

static void write_line(FILE *fp, const struct line *l)
{
	struct buf h = {0}, t = {0};

	out_varint(fp, 3 << 3 | 2);
	out_varint(fp, line_payload(l));
	put_int(&h, 1, (uint64_t)l->id);
	put_str(&h, 2, l->name);
	put_int(&h, 3, (uint64_t)l->ts_ns);
	out(fp, h.p, h.len);
	out(fp, l->events.p, l->events.len);
	put_str(&t, 11, l->name);
	out(fp, t.p, t.len);
	free(h.p);
	free(t.p);
}

static void write_plane(FILE *fp, const struct plane *p)
{
	struct buf h = {0};

	out_varint(fp, 1 << 3 | 2);
	out_varint(fp, plane_payload(p));
	if (p->id)
		put_int(&h, 1, (uint64_t)p->id);
	put_str(&h, 2, p->name);
	out(fp, h.p, h.len);
	for (int i = 0; i < p->nlines; i++)
		write_line(fp, &p->lines[i]);
	out(fp, p->meta.p, p->meta.len);
	free(h.p);
}

/* ---- RunMetadata ------------------------------------------------------------ */

#define RM_DEVICES 6

static const char *const rm_devices[RM_DEVICES] = {
	"/job:worker/replica:0/task:0/device:GPU:0",
	"/job:worker/replica:0/task:0/device:GPU:0/stream:all",
	"/job:worker/replica:0/task:0/device:GPU:0/stream:14",
	"/job:worker/replica:0/task:0/device:GPU:0/memcpy",
	"/job:worker/replica:0/task:0/device:CPU:0",
	"/job:worker/replica:0/task:1/device:CPU:0",
};

static void rm_node(struct buf *dev, struct buf *n, struct buf *tmp, const char *name, int64_t start_us,
		    int64_t dur_us, const char *label, int full)
{
	put_str(n, 1, name);
	put_int(n, 2, (uint64_t)start_us);
	put_int(n, 3, 1);
	put_int(n, 4, (uint64_t)(dur_us - 1));
	put_int(n, 5, (uint64_t)dur_us);
	if (full) {
		struct buf m = {0}, o = {0}, td = {0}, sh = {0}, d = {0}, ad = {0};

		put_str(&m, 1, "GPU_0_bfc");
		put_int(&m, 2, 4096);
		put_int(&m, 3, 8192);
		put_int(&m, 4, 4096);
		put_msg(n, 6, &m);
		put_int(&o, 1, 0);
		put_int(&td, 1, 1);
		put_int(&d, 1, 128);
		put_msg(&sh, 2, &d);
		put_int(&d, 1, 1024);
		put_msg(&sh, 2, &d);
		put_msg(&td, 2, &sh);
		put_int(&ad, 1, 524288);
		put_int(&ad, 2, 524288);
		put_str(&ad, 3, "GPU_0_bfc");
		put_msg(&td, 4, &ad);
		put_msg(&o, 3, &td);
		put_msg(n, 7, &o);
		free(m.p);
		free(o.p);
		free(td.p);
		free(sh.p);
		free(d.p);
		free(ad.p);
	}
	put_str(n, 8, label);
	put_int(n, 9, (uint64_t)(start_us - 3));
	put_int(n, 10, 4100 + (uint64_t)(next_rand() % 8));
	put_msg(dev, 2, n);
	(void)tmp;
}

static int gen_runmeta(uint64_t target, const char *path)
{
	struct buf dev[RM_DEVICES], n = {0}, tmp = {0}, ss = {0}, rm = {0};
	uint64_t total = 0, nodes = 0;
	int64_t t = 1500000000000000LL;
	char label[256], name[128];
	FILE *fp;

	memset(dev, 0, sizeof(dev));
	for (int i = 0; i < RM_DEVICES; i++)
		put_str(&dev[i], 1, rm_devices[i]);
	while (total < target) {
		int o = (int)(next_rand() % NOPS);
		int64_t dur = 5 + (int64_t)(next_rand() % 40);
		size_t before = 0, after = 0;

		for (int i = 0; i < RM_DEVICES; i++)
			before += dev[i].len;
		snprintf(name, sizeof(name), "model/block_%d/layer_%d/MatMul", o / 8, o % 8);
		snprintf(label, sizeof(label), "[GPU_0_bfc 0.5MB 0.5MB] %s = MatMul(model/block_%d/layer_%d/Relu, model/block_%d/layer_%d/kernel/read)",
			 name, o / 8, o % 8, o / 8, o % 8);
		rm_node(&dev[0], &n, &tmp, name, t, dur, label, 1);
		snprintf(label, sizeof(label),
			 "volta_sgemm_128x64_nn regs:%d shm:%d grid:%d,1,1 block:256,1,1@@%s:MatMul", 64 + o % 64,
			 (o % 5) * 4096, 1 + o % 128, name);
		snprintf(name, sizeof(name), "model/block_%d/layer_%d/MatMul:MatMul", o / 8, o % 8);
		rm_node(&dev[1], &n, &tmp, name, t + 2, dur - 2, label, 0);
		rm_node(&dev[2], &n, &tmp, name, t + 2, dur - 2, label, 0);
		nodes += 3;
		if (o % 4 == 0) {
			snprintf(name, sizeof(name), "edge_%d_x:MEMCPYHtoD", o);
			rm_node(&dev[3], &n, &tmp, name, t, 2, "MEMCPYHtoD bytes:4096 async to device:0", 0);
			nodes++;
		}
		if (o % 8 == 0) {
			snprintf(name, sizeof(name), "x/_%d", o);
			snprintf(label, sizeof(label),
				 "x/_%d = _Send(edge_%d_x @/job:worker/replica:0/task:1/device:CPU:0", o, o);
			rm_node(&dev[4], &n, &tmp, name, t, 1, label, 0);
			snprintf(label, sizeof(label),
				 "[4096B] /job:worker/replica:0/task:0/device:CPU:0;0000000000000001;"
				 "/job:worker/replica:0/task:1/device:CPU:0;edge_%d_x;0:0 from "
				 "/job:worker/replica:0/task:0/device:CPU:0 to "
				 "/job:worker/replica:0/task:1/device:CPU:0",
				 o);
			rm_node(&dev[5], &n, &tmp, "RecvTensor", t + 1, 3, label, 0);
			nodes += 2;
		}
		t += dur + 1;
		for (int i = 0; i < RM_DEVICES; i++)
			after += dev[i].len;
		total += after - before;
	}
	for (int i = 0; i < RM_DEVICES; i++)
		put_msg(&ss, 1, &dev[i]);
	put_msg(&rm, 1, &ss);
	fp = fopen(path, "wb");
	if (!fp) {
		perror(path);
		return 1;
	}
	out(fp, rm.p, rm.len);
	if (fclose(fp) != 0) {
		perror("gen_xspace: close");
		return 1;
	}
	fprintf(stderr, "gen_xspace: %s: %" PRIu64 " NodeExecStats, ~%.1f MB\n", path, nodes,
		(double)rm.len / 1e6);
	for (int i = 0; i < RM_DEVICES; i++)
		free(dev[i].p);
	free(n.p);
	free(tmp.p);
	free(ss.p);
	free(rm.p);
	return 0;
}

int main(int argc, char **argv)
{
	struct plane planes[1 + NGPU];
	struct buf tmp = {0}, tmp2 = {0}, ent = {0};
	uint64_t target, total = 0, events = 0, corr = 1;
	int64_t t_ps = 1000000;
	int step = 0;
	FILE *fp;
	char name[128];

	if (argc == 4 && strcmp(argv[1], "--runmeta") == 0 && atof(argv[2]) > 0)
		return gen_runmeta((uint64_t)(atof(argv[2]) * 1e6), argv[3]);
	if (argc != 3 || atof(argv[1]) <= 0) {
		fprintf(stderr, "usage: gen_xspace SIZE_MB OUT.xplane.pb\n"
				"       gen_xspace --runmeta SIZE_MB OUT.pb\n");
		return 2;
	}
	target = (uint64_t)(atof(argv[1]) * 1e6);
	memset(planes, 0, sizeof(planes));

	/* Host plane. */
	snprintf(planes[0].name, sizeof(planes[0].name), "/host:CPU");
	planes[0].nlines = NTHREAD;
	planes[0].lines = calloc(NTHREAD, sizeof(struct line));
	for (int t = 0; t < NTHREAD; t++) {
		struct line *l = &planes[0].lines[t];

		l->id = 4100 + t;
		snprintf(l->name, sizeof(l->name), "tf_Compute/%d", 4100 + t);
		l->ts_ns = 1000;
	}
	/* GPU planes. */
	for (int g = 0; g < NGPU; g++) {
		struct plane *p = &planes[1 + g];

		p->id = 1 + g;
		snprintf(p->name, sizeof(p->name), "/device:GPU:%d", g);
		p->nlines = NSTREAM + 2;
		p->lines = calloc((size_t)p->nlines, sizeof(struct line));
		for (int s = 0; s < NSTREAM; s++) {
			p->lines[s].id = 10 + s;
			snprintf(p->lines[s].name, sizeof(p->lines[s].name), "Stream #%d(Compute)", 10 + s);
			p->lines[s].ts_ns = 2000;
		}
		p->lines[NSTREAM].id = 1000;
		snprintf(p->lines[NSTREAM].name, sizeof(p->lines[0].name), "XLA Ops");
		p->lines[NSTREAM].ts_ns = 2000;
		p->lines[NSTREAM + 1].id = 1001;
		snprintf(p->lines[NSTREAM + 1].name, sizeof(p->lines[0].name), "Steps");
		p->lines[NSTREAM + 1].ts_ns = 2000;
	}
	/* Metadata: every plane has the stat names; ref targets are kernel details. */
	for (int i = 0; i <= NGPU; i++) {
		struct plane *p = &planes[i];

		for (int s = 1; s < S_NSTATS; s++)
			stat_meta(&p->meta, &tmp, &ent, s, stat_names[s]);
		if (i == 0) {
			event_meta(&p->meta, &tmp, &ent, 1, "TraceContext", NULL);
			event_meta(&p->meta, &tmp, &ent, 2, "cudaLaunchKernel", NULL);
			for (int o = 0; o < NOPS; o++) {
				snprintf(name, sizeof(name), "model/block_%d/layer_%d/MatMul:MatMul", o / 8, o % 8);
				event_meta(&p->meta, &tmp, &ent, 100 + o, name, "MatMul");
			}
		} else {
			for (int o = 0; o < NOPS; o++) {
				snprintf(name, sizeof(name),
					 "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_%dx%d_32x3_nn>(Params)",
					 64 << (o % 3), 64 << (o % 2));
				event_meta(&p->meta, &tmp, &ent, 100 + o, name, NULL);
				snprintf(name, sizeof(name), "fusion.%d", o);
				event_meta(&p->meta, &tmp, &ent, 1000 + o, name, name);
				snprintf(name, sizeof(name), "regs:%d shm:%d grid:%d,1,1 block:256,1,1", 32 + o % 64,
					 (o % 5) * 4096, 1 + o % 128);
				stat_meta(&p->meta, &tmp, &ent, REF_BASE + o, name);
				snprintf(name, sizeof(name), "%%fusion.%d = f32[128,%d] fusion(...)", o, o + 1);
				stat_meta(&p->meta, &tmp, &ent, REF_BASE + NOPS + o, name);
			}
			event_meta(&p->meta, &tmp, &ent, 5000, "step", NULL);
		}
		total += p->meta.len;
	}

	/* Steps of ops until the target size is reached. */
	while (total < target) {
		int64_t step_start = t_ps, gpu_t[NGPU][NSTREAM];
		uint64_t before = 0, after = 0;

		for (int i = 0; i <= NGPU; i++)
			for (int l = 0; l < planes[i].nlines; l++)
				before += planes[i].lines[l].events.len;
		for (int g = 0; g < NGPU; g++)
			for (int s = 0; s < NSTREAM; s++)
				gpu_t[g][s] = t_ps + 20000000;
		for (int t = 0; t < NTHREAD; t++) {
			/* The step marker on every executor thread. */
			struct line *l = &planes[0].lines[t];

			event(l, &tmp, 1, t_ps, (int64_t)OPS_PER_STEP / NTHREAD * 9000000 + 5000000);
			stat(&tmp, &tmp2, S_STEP_NUM, 'i', (uint64_t)step, 0, NULL);
			stat(&tmp, &tmp2, S_GROUP, 'i', (uint64_t)step, 0, NULL);
			put_msg(&l->events, 4, &tmp);
			events++;
			l->cursor_ps = t_ps + 1000000;
		}
		for (int k = 0; k < OPS_PER_STEP; k++) {
			int t = k % NTHREAD, g = k % NGPU, s = (k / NGPU) % NSTREAM;
			int o = (int)(next_rand() % NOPS);
			struct line *hl = &planes[0].lines[t];
			struct plane *gp = &planes[1 + g];
			int64_t op_start = hl->cursor_ps, op_dur = 6000000 + (int64_t)(next_rand() % 3000000);
			int64_t launch = op_start + 2000000, kdur = 3000000 + (int64_t)(next_rand() % 40000000);
			int64_t kstart;

			/* Host: op > launch. */
			event(hl, &tmp, 100 + o, op_start, op_dur);
			stat(&tmp, &tmp2, S_GROUP, 'i', (uint64_t)step, 0, NULL);
			put_msg(&hl->events, 4, &tmp);
			event(hl, &tmp, 2, launch, 3000000);
			stat(&tmp, &tmp2, S_CORR, 'u', corr, 0, NULL);
			stat(&tmp, &tmp2, S_GROUP, 'i', (uint64_t)step, 0, NULL);
			put_msg(&hl->events, 4, &tmp);
			hl->cursor_ps = op_start + op_dur + 500000;
			/* GPU: kernel on a stream + the XLA op. */
			kstart = gpu_t[g][s] > launch + 4000000 ? gpu_t[g][s] : launch + 4000000;
			event(&gp->lines[s], &tmp, 100 + o, kstart, kdur);
			stat(&tmp, &tmp2, S_CORR, 'u', corr, 0, NULL);
			stat(&tmp, &tmp2, S_KERNEL_DETAILS, 'r', (uint64_t)(REF_BASE + o), 0, NULL);
			stat(&tmp, &tmp2, S_HLO_OP, 'r', (uint64_t)(REF_BASE + NOPS + o), 0, NULL);
			stat(&tmp, &tmp2, S_FLOPS, 'i', (uint64_t)(2 * 128 * (o + 1) * 512), 0, NULL);
			stat(&tmp, &tmp2, S_BYTES, 'i', (uint64_t)(4 * 128 * (o + 1)), 0, NULL);
			stat(&tmp, &tmp2, S_OCC, 'd', 0, 12.5 + o % 50, NULL);
			stat(&tmp, &tmp2, S_GROUP, 'i', (uint64_t)step, 0, NULL);
			put_msg(&gp->lines[s].events, 4, &tmp);
			if (s == 0) {
				event(&gp->lines[NSTREAM], &tmp, 1000 + o, kstart, kdur);
				stat(&tmp, &tmp2, S_TF_OP, 's', 0, 0, "model/block/layer/MatMul");
				put_msg(&gp->lines[NSTREAM].events, 4, &tmp);
				events++;
			}
			gpu_t[g][s] = kstart + kdur + 1000000;
			corr++;
			events += 3;
		}
		for (int g = 0; g < NGPU; g++) {
			struct line *l = &planes[1 + g].lines[NSTREAM + 1];
			int64_t end = gpu_t[g][0] > gpu_t[g][1] ? gpu_t[g][0] : gpu_t[g][1];

			event(l, &tmp, 5000, step_start + 20000000, end - step_start - 20000000);
			stat(&tmp, &tmp2, S_STEP_NUM, 'i', (uint64_t)step, 0, NULL);
			stat(&tmp, &tmp2, S_GROUP, 'i', (uint64_t)step, 0, NULL);
			put_msg(&l->events, 4, &tmp);
			events++;
			if (end > t_ps)
				t_ps = end;
		}
		for (int t = 0; t < NTHREAD; t++)
			if (planes[0].lines[t].cursor_ps > t_ps)
				t_ps = planes[0].lines[t].cursor_ps;
		t_ps += 10000000;
		for (int i = 0; i <= NGPU; i++)
			for (int l = 0; l < planes[i].nlines; l++)
				after += planes[i].lines[l].events.len;
		total += after - before;
		step++;
	}

	fp = fopen(argv[2], "wb");
	if (!fp) {
		perror(argv[2]);
		return 1;
	}
	for (int i = 0; i <= NGPU; i++)
		write_plane(fp, &planes[i]);
	{
		struct buf h = {0};

		put_str(&h, 4, "gen-host-0");
		out(fp, h.p, h.len);
		free(h.p);
	}
	if (fclose(fp) != 0) {
		perror("gen_xspace: close");
		return 1;
	}
	fprintf(stderr, "gen_xspace: %s: %" PRIu64 " XEvents, %d steps, ~%.1f MB\n", argv[2], events,
		step, (double)total / 1e6);
	for (int i = 0; i <= NGPU; i++) {
		for (int l = 0; l < planes[i].nlines; l++)
			free(planes[i].lines[l].events.p);
		free(planes[i].lines);
		free(planes[i].meta.p);
	}
	free(tmp.p);
	free(tmp2.p);
	free(ent.p);
	return 0;
}
