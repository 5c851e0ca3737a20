/* SPDX-License-Identifier: MIT */
/*
 * Checker 6, memory: each allocator's peak and the op at it (Kineto's
 * "[memory]" instants: Total Allocated per device; TF RunMetadata's
 * per-op AllocatorMemoryUsed: allocator_bytes_in_use; memory counters), and
 * the copies of the analysed steps: host-to-device, device-to-host and
 * device-to-device volume per step. Findings: copies from pageable host
 * memory (1% of the step or more), copies with nothing else running (10% or
 * more), and device-to-host copies in numbers (10 per step or more: each
 * usually a synchronisation).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/advise_int.h"

#define PAGEABLE_PCT 1
#define MEMCPY_PCT 10
#define DTOH_PER_STEP 10
#define MAX_ALLOC 16
#define KEEP 5

enum { K_HTOD, K_DTOH, K_DTOD, K_OTHER, NKINDS };

struct peak {
	char name[64];     /* allocator / device / counter */
	double bytes;
	int64_t ts;
	uint32_t track;
	uint32_t op;       /* name id of the op at the peak, or TFT_NONE */
	bool counter;
};

struct mem_state {
	struct peak peaks[MAX_ALLOC];
	uint32_t npeaks;
	uint64_t count[NKINDS];
	int64_t dur[NKINDS];
	double bytes[NKINDS];
	int64_t pageable_ns;
	uint64_t pageable_n;
	struct adv_inst pageable_top[KEEP], dtoh_top[KEEP], any_top[KEEP];
};

static int mem_init(struct adv *a)
{
	struct mem_state *st = calloc(1, sizeof(*st));

	if (!st)
		return TFT_ENOMEM;
	a->st[TFT_ADVISE_MEMORY] = st;
	return 0;
}

static struct peak *peak_of(struct mem_state *st, const char *name, bool counter)
{
	for (uint32_t i = 0; i < st->npeaks; i++)
		if (!strcmp(st->peaks[i].name, name))
			return &st->peaks[i];
	if (st->npeaks == MAX_ALLOC)
		return NULL;
	struct peak *p = &st->peaks[st->npeaks++];
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", name);
	p->bytes = -1;
	p->op = TFT_NONE;
	p->counter = counter;
	return p;
}

static void see(struct peak *p, double bytes, int64_t ts, uint32_t track, uint32_t op)
{
	if (p && bytes > p->bytes) {
		p->bytes = bytes;
		p->ts = ts;
		p->track = track;
		p->op = op;
	}
}

static bool memory_like(const char *s)
{
	return strstr(s, "mem") || strstr(s, "Mem") || strstr(s, "MEM") || strstr(s, "alloc") ||
	       strstr(s, "Alloc") || strstr(s, "bfc") || strstr(s, "bytes") || strstr(s, "Bytes") ||
	       strstr(s, "Reserved");
}

/* TF RunMetadata's "memory" arg: [{"allocator_name":"GPU_0_bfc",...,"allocator_bytes_in_use":N}, ...]. */
static void runmeta_memory(struct adv *a, struct mem_state *st, const char *j, const struct tft_event *ev)
{
	const char *p = j;

	while ((p = strstr(p, "\"allocator_name\":\""))) {
		char name[64];
		size_t n = 0;
		const char *obj_end, *q;

		p += 18;
		while (p[n] && p[n] != '"' && n < sizeof(name) - 1) {
			name[n] = p[n];
			n++;
		}
		name[n] = 0;
		obj_end = strchr(p, '}');
		q = strstr(p, "\"allocator_bytes_in_use\":");
		if (q && (!obj_end || q < obj_end))
			see(peak_of(st, name, false), strtod(q + 25, NULL), ev->ts_ns, a->cur_track, ev->name);
		if (!obj_end)
			break;
		p = obj_end;
	}
}

static void mem_event(struct adv *a, const struct tft_event *ev, uint32_t win)
{
	struct mem_state *st = a->st[TFT_ADVISE_MEMORY];
	uint32_t track = a->cur_track;
	char name[64];

	(void)win;
	if (ev->kind == TFT_EV_COUNTER) {
		const char *tn = tft_adv_str(a, tft_session_track(a->s, track)->name);
		const char *en = tft_adv_str(a, ev->name);
		if (!memory_like(tn) && !memory_like(en))
			return;
		snprintf(name, sizeof(name), "%s", en[0] ? en : tn);
		see(peak_of(st, name, true), ev->value, ev->ts_ns, track, TFT_NONE);
		return;
	}
	for (uint16_t i = 0; i < ev->nargs; i++) {
		const struct tft_arg *g = &ev->args[i];
		const char *k = tft_adv_str(a, g->key);
		if (tft_adv_name_bits(a, ev->name) & ADV_N_MEMEVENT) {
			/* Kineto: Total Allocated after each allocation, per device */
			if (!strcmp(k, "Total Allocated") && (g->type == TFT_ARG_INT || g->type == TFT_ARG_DOUBLE)) {
				int64_t dtype = -1, did = -1;
				for (uint16_t m = 0; m < ev->nargs; m++) {
					const char *km = tft_adv_str(a, ev->args[m].key);
					if (!strcmp(km, "Device Type") && ev->args[m].type == TFT_ARG_INT)
						dtype = ev->args[m].v.i;
					else if (!strcmp(km, "Device Id") && ev->args[m].type == TFT_ARG_INT)
						did = ev->args[m].v.i;
				}
				if (dtype == 0)
					snprintf(name, sizeof(name), "CPU");
				else
					snprintf(name, sizeof(name), "device %lld", (long long)did);
				see(peak_of(st, name, false), g->type == TFT_ARG_INT ? (double)g->v.i : g->v.d, ev->ts_ns,
				    track, TFT_NONE);
			}
		} else if (!strcmp(k, "memory") && (g->type == TFT_ARG_JSON || g->type == TFT_ARG_STR)) {
			runmeta_memory(a, st, tft_adv_str(a, g->v.str), ev);
		} else if (!strcmp(k, "bytes") && g->type == TFT_ARG_INT && a->tracks[track].role == ADV_R_DEVICE &&
			   (tft_adv_name_bits(a, ev->name) & ADV_N_MEMCPY) && win != TFT_NONE && a->win[win].analysed) {
			uint32_t nb = tft_adv_name_bits(a, ev->name);
			int kind = nb & ADV_N_HTOD ? K_HTOD : nb & ADV_N_DTOH ? K_DTOH : nb & ADV_N_DTOD ? K_DTOD : K_OTHER;
			st->bytes[kind] += (double)g->v.i;
		}
	}
}

static int mem_slab(struct adv *a, struct adv_slab *sl)
{
	struct mem_state *st = a->st[TFT_ADVISE_MEMORY];

	for (size_t i = 0; i < sl->n; i++) {
		const struct adv_sl *x = &sl->sl[i];
		uint32_t nb;
		int kind;

		if (x->cls != ADV_C_MEMCPY || !(x->flags & ADV_SL_OWN) || x->win == TFT_NONE || !a->win[x->win].analysed)
			continue;
		nb = tft_adv_name_bits(a, x->name);
		kind = nb & ADV_N_HTOD ? K_HTOD : nb & ADV_N_DTOH ? K_DTOH : nb & ADV_N_DTOD ? K_DTOD : K_OTHER;
		st->count[kind]++;
		st->dur[kind] += x->end - x->ts;
		if (kind == K_HTOD && (nb & ADV_N_PAGEABLE)) {
			st->pageable_ns += x->end - x->ts;
			st->pageable_n++;
			tft_adv_keep_longest(st->pageable_top, KEEP, x);
		}
		if (kind == K_DTOH)
			tft_adv_keep_longest(st->dtoh_top, KEEP, x);
		tft_adv_keep_longest(st->any_top, KEEP, x);
	}
	return 0;
}

struct at_ctx {
	int64_t ts;
	uint32_t name, depth;
	bool found;
};

static int on_at(void *ctx, const struct tft_event *ev)
{
	struct at_ctx *c = ctx;

	if (ev->kind == TFT_EV_SLICE && ev->ts_ns <= c->ts && ev->ts_ns + ev->dur_ns >= c->ts &&
	    (!c->found || ev->depth >= c->depth)) {
		c->name = ev->name;
		c->depth = ev->depth;
		c->found = true;
	}
	return 0;
}

static int mem_finish(struct adv *a)
{
	struct mem_state *st = a->st[TFT_ADVISE_MEMORY];
	int64_t total = tft_adv_analysed_ns(a), memcpy_part = 0;
	uint32_t n = tft_adv_analysed_count(a);
	char v[1600], b1[32], b2[32], b3[32], p1[16];
	size_t vl = 0;
	static const char *const kinds[NKINDS] = { "host to device", "device to host", "device to device", "other" };
	struct tft_advise_finding *f;

	v[0] = 0;
	/* peaks, and the op running at each (the deepest slice at the peak on its track) */
	for (uint32_t i = 0; i < st->npeaks && vl < sizeof(v) - 200; i++) {
		struct peak *p = &st->peaks[i];
		if (p->op == TFT_NONE && !p->counter) {
			struct at_ctx c = { p->ts, 0, 0, false };
			struct tft_error e2;
			tft_error_clear(&e2);
			if (!tft_session_scan(a->s, p->track, p->ts, p->ts, 0, on_at, &c, &e2) && c.found)
				p->op = c.name;
		}
		vl += (size_t)snprintf(v + vl, sizeof(v) - vl, "%speak %s %s", vl ? "; " : "", p->name,
				       p->counter ? "" : tft_adv_bytes(b1, sizeof(b1), p->bytes));
		if (p->counter)
			vl += (size_t)snprintf(v + vl, sizeof(v) - vl, "%.6g", p->bytes);
		if (p->op != TFT_NONE) {
			const char *s = tft_adv_str(a, p->op);
			if (strlen(s) > 60)
				vl += (size_t)snprintf(v + vl, sizeof(v) - vl, " in %.57s...", s);
			else
				vl += (size_t)snprintf(v + vl, sizeof(v) - vl, " in %s", s);
		}
	}
	if (!st->npeaks)
		vl += (size_t)snprintf(v + vl, sizeof(v) - vl, "no allocator data (memory profiling off)");
	if (!n || total <= 0) {
		tft_adv_verdict(a, TFT_ADVISE_MEMORY, "%s; no analysed steps", v);
		return 0;
	}
	for (uint32_t i = 0; i < a->nwin; i++)
		if (a->win[i].analysed)
			memcpy_part += a->win[i].part[TFT_ADVISE_MEMCPY];
	for (int k = 0; k < NKINDS && vl < sizeof(v) - 200; k++) {
		if (!st->count[k])
			continue;
		vl += (size_t)snprintf(v + vl, sizeof(v) - vl, "; %s copies per step: %.1f, %s", kinds[k],
				       (double)st->count[k] / n, tft_adv_ns(b1, sizeof(b1), st->dur[k] / n));
		if (st->bytes[k] > 0)
			vl += (size_t)snprintf(v + vl, sizeof(v) - vl, ", %s", tft_adv_bytes(b2, sizeof(b2), st->bytes[k] / n));
	}
	if (!st->count[K_HTOD] && !st->count[K_DTOH] && !st->count[K_DTOD] && !st->count[K_OTHER])
		vl += (size_t)snprintf(v + vl, sizeof(v) - vl, "; no device copies in the analysed steps");
	tft_adv_verdict(a, TFT_ADVISE_MEMORY, "%s", v);
	if (tft_adv_share_ge(st->pageable_ns, PAGEABLE_PCT, total) && st->pageable_ns) {
		f = tft_adv_finding(a, TFT_ADVISE_MEMORY, st->pageable_ns / n,
				    "Host-to-device copies from pageable memory: %s of the step",
				    tft_adv_pct(p1, sizeof(p1), st->pageable_ns, total));
		tft_adv_explain(f,
				"%llu copies per step read pageable (not pinned) host memory, %s per step: the driver "
				"stages them through a pinned buffer, so they run at a fraction of the bus bandwidth "
				"and cannot overlap compute.",
				(unsigned long long)(st->pageable_n / n), tft_adv_ns(b1, sizeof(b1), st->pageable_ns / n));
		tft_adv_recommend(f, "Pin the host buffers: DataLoader(pin_memory=True) and "
				     "tensor.to(device, non_blocking=True); or tensor.pin_memory() for buffers you reuse. "
				     "TensorFlow pins its host allocations itself: prefetch to the device with "
				     "tf.data.experimental.prefetch_to_device.");
		tft_adv_evidence_top(f, st->pageable_top, KEEP);
	}
	if (tft_adv_share_ge(memcpy_part, MEMCPY_PCT, total)) {
		f = tft_adv_finding(a, TFT_ADVISE_MEMORY, memcpy_part / n,
				    "Copies take %s of the step with nothing else running",
				    tft_adv_pct(p1, sizeof(p1), memcpy_part, total));
		tft_adv_explain(f,
				"For %s per step a copy or memset is the only work on the devices (the breakdown's "
				"memcpy part); host to device %s, device to host %s, device to device %s per step.",
				tft_adv_ns(b1, sizeof(b1), memcpy_part / n), tft_adv_ns(b2, sizeof(b2), st->dur[K_HTOD] / n),
				tft_adv_ns(b3, sizeof(b3), st->dur[K_DTOH] / n),
				tft_adv_ns(b1, sizeof(b1), st->dur[K_DTOD] / n));
		tft_adv_recommend(f, "Overlap copies with compute (pinned memory, non_blocking copies on a side "
				     "stream, prefetching the next batch), keep tensors on the device between steps, "
				     "and copy less (smaller dtypes, only the outputs you need).");
		tft_adv_evidence_top(f, st->any_top, KEEP);
	}
	if (st->count[K_DTOH] / n >= DTOH_PER_STEP) {
		f = tft_adv_finding(a, TFT_ADVISE_MEMORY, st->dur[K_DTOH] / n, "%llu device-to-host copies per step",
				    (unsigned long long)(st->count[K_DTOH] / n));
		tft_adv_explain(f,
				"Each step copies from the device to the host %llu times (%s per step). Such a copy "
				"usually makes the host wait for the device to finish its queue, so the host stops "
				"launching work.",
				(unsigned long long)(st->count[K_DTOH] / n), tft_adv_ns(b1, sizeof(b1), st->dur[K_DTOH] / n));
		tft_adv_recommend(f, "Read values back once per step or less: accumulate losses and metrics on the "
				     "device and call .item()/.cpu()/print only every N steps; avoid Python control flow "
				     "on tensor values inside the step.");
		tft_adv_evidence_top(f, st->dtoh_top, KEEP);
	}
	return 0;
}

static void mem_fini(struct adv *a)
{
	free(a->st[TFT_ADVISE_MEMORY]);
	a->st[TFT_ADVISE_MEMORY] = NULL;
}

const struct adv_checker tft_adv_memory = {
	.id = TFT_ADVISE_MEMORY,
	.want_names = ADV_N_MEMEVENT | ADV_N_MEMCPY,
	.want_counters = true,
	.want_executor_args = true,
	.init = mem_init,
	.event = mem_event,
	.slab = mem_slab,
	.finish = mem_finish,
	.fini = mem_fini,
};
