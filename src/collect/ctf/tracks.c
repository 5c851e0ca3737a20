/* SPDX-License-Identifier: MIT */
/*
 * Processes, tracks (execs: threads, CPUs, streams, queues) and slices of
 * the CTF import: registered on first use, slices opened by an entry and
 * closed by its exit, every event pushed through the sorter.
 */
#include "collect/ctf/ctf_int.h"

/* The writer's track of exec x, registered with its first event (no empty tracks). */
static uint32_t exec_track(struct ctf *c, uint32_t x)
{
	struct exec *e = &c->execs[x];

	if (e->track == TFT_NONE && !c->rc) {
		e->track = tft_writer_add_track(c->w, &e->def);
		if (e->track == TFT_NONE)
			oom(c);
	}
	return e->track;
}

int tft_ctf_push(struct ctf *c, uint32_t exec, int kind, int64_t ts, int64_t dur, uint32_t name,
		 uint32_t cat, uint8_t flags, const struct tft_arg *args, uint16_t nargs)
{
	struct tft_event ev = {
		.ts_ns = ts,
		.dur_ns = dur,
		.track = exec_track(c, exec),
		.name = name,
		.cat = cat,
		.count = 1,
		.kind = (uint8_t)kind,
		.flags = flags,
		.nargs = nargs,
		.args = args,
	};
	int rc;

	if (c->rc)
		return c->rc;
	if ((rc = tft_sorter_push(c->sorter, &ev, c->err)))
		c->rc = rc;
	return rc;
}

uint32_t tft_ctf_add_proc(struct ctf *c, uint32_t trace, int kind, uint64_t key, int64_t pid,
			  uint32_t name, int32_t rank)
{
	uint32_t i = map_get(&c->proc_map, (uint64_t)kind << 32 | trace, key);
	struct tft_process p = { .name = name, .pid = pid, .rank = rank };

	if (i != TFT_NONE)
		return i;
	if (c->rc || tft_grow((void **)&c->procs, &c->cprocs, c->nprocs + 1, sizeof(*c->procs)) ||
	    map_put(&c->proc_map, (uint64_t)kind << 32 | trace, key, c->nprocs)) {
		oom(c);
		return TFT_NONE;
	}
	p.host = c->traces[trace].host;
	i = c->nprocs;
	c->procs[i] = (struct proc){ .trace = trace, .pid = pid, .hsa_init_ns = INT64_MIN };
	c->procs[i].id = tft_writer_add_process(c->w, &p);
	if (c->procs[i].id == TFT_NONE) {
		oom(c);
		return TFT_NONE;
	}
	c->nprocs++;
	return i;
}

uint32_t tft_ctf_add_exec(struct ctf *c, uint32_t proc, int kind, uint64_t key, uint32_t tkind,
			  uint32_t name, int64_t tid, int32_t sort_index)
{
	uint32_t i = map_get(&c->exec_map, (uint64_t)kind << 32 | proc, key);
	struct tft_track t = {
		.process = c->procs[proc].id, .kind = tkind, .name = name, .tid = tid,
		.sort_index = sort_index,
	};

	if (i != TFT_NONE)
		return i;
	if (tkind == TFT_TRACK_GPU_STREAM || tkind == TFT_TRACK_COMM)
		t.flags = TFT_TRACKF_CONCURRENT; /* a queue's commands, a rank's comm calls: lanes */
	if (c->rc || tft_grow((void **)&c->execs, &c->cexecs, c->nexecs + 1, sizeof(*c->execs)) ||
	    map_put(&c->exec_map, (uint64_t)kind << 32 | proc, key, c->nexecs)) {
		oom(c);
		return TFT_NONE;
	}
	i = c->nexecs++;
	c->execs[i] = (struct exec){ .proc = proc, .fifo = kind == E_QUEUE || kind == E_ASYNC,
				     .track = TFT_NONE, .def = t };
	return i;
}

int tft_ctf_open_slice(struct ctf *c, uint32_t exec, int64_t ts, uint32_t key, uint64_t match,
		       uint32_t name, uint32_t cat)
{
	struct exec *e = &c->execs[exec];
	struct open *o;

	if (c->rc)
		return c->rc;
	if (tft_grow((void **)&e->st, &e->cap, e->n + 1, sizeof(*e->st)))
		return oom(c);
	o = &e->st[e->n];
	*o = (struct open){ .ts = ts, .match = match, .key = key, .name = name, .cat = cat,
			    .nargs = c->nargs };
	o->args = tft_ctf_copy_args(c, c->args, c->nargs);
	if (c->rc)
		return c->rc;
	e->n++;
	return 0;
}

/*
 * The open slice an exit with this key and match closes: the innermost one
 * (call stacks), or the oldest one (device queues, async ops); a match of 0
 * on either side matches any. Its index, or -1.
 */
int64_t tft_ctf_find_open(const struct exec *e, uint32_t key, uint64_t match)
{
	for (uint32_t k = 0; k < e->n; k++) {
		uint32_t i = e->fifo ? k : e->n - 1 - k;
		const struct open *o = &e->st[i];
		if (o->key == key && (!match || !o->match || o->match == match))
			return i;
	}
	return -1;
}

/* Close open slice i of exec at ts: the entry's args, then the exit's (c->args) not in them. */
int tft_ctf_close_slice(struct ctf *c, uint32_t exec, uint32_t i, int64_t ts, uint8_t flags)
{
	struct exec *e = &c->execs[exec];
	struct open o = e->st[i];
	struct tft_arg merged[MAX_ARGS];
	uint16_t n = 0;
	int rc;

	memmove(&e->st[i], &e->st[i + 1], (size_t)(e->n - i - 1) * sizeof(*e->st));
	e->n--;
	for (uint16_t k = 0; k < o.nargs; k++)
		merged[n++] = o.args[k];
	for (uint16_t k = 0; k < c->nargs && n < MAX_ARGS && !(flags & TFT_EVF_UNCLOSED); k++) {
		bool dup = false;
		for (uint16_t j = 0; j < o.nargs && !dup; j++)
			dup = o.args[j].key == c->args[k].key;
		if (!dup)
			merged[n++] = c->args[k];
	}
	rc = tft_ctf_push(c, exec, TFT_EV_SLICE, o.ts, span(o.ts, ts), o.name, o.cat, flags,
			  merged, n);
	free(o.args);
	if (!rc && (o.flags & OF_STEP)) {
		struct tft_step s = {
			.index = o.step_index, .name = o.name, .process = c->procs[e->proc].id,
			.start_ns = o.ts, .dur_ns = span(o.ts, ts), .traced = true,
		};
		if (tft_grow((void **)&c->steps, &c->csteps, c->nsteps + 1, sizeof(*c->steps)))
			return oom(c);
		c->steps[c->nsteps++] = s;
	}
	return rc;
}
