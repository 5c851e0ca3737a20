/* SPDX-License-Identifier: MIT */
/*
 * LTTng (and any CTF) events: names classified as entries, exits and
 * instants, the LTTng-based TensorFlow profilers' device events (HSA, HC,
 * CUDA, OpenCL kernels and copies, with their device clocks), and each
 * event's thread, CPU or stream track.
 */
#include "collect/ctf/ctf_int.h"

enum { K_INSTANT, K_BEGIN, K_END };

/*
 * Whether an event name is an entry or an exit, and the base name both share
 * (written to base): X_entry/X_exit, X_start|X_begin/X_end, and the kernel's
 * syscall_entry_X/syscall_exit_X (base syscall_X).
 */
static int classify(const char *name, char *base, size_t cap)
{
	static const struct {
		const char *suffix;
		int kind;
	} sfx[] = {
		{ "_entry", K_BEGIN }, { "_exit", K_END }, { "_start", K_BEGIN },
		{ "_begin", K_BEGIN }, { "_end", K_END },
	};
	const char *ev = strrchr(name, ':');
	size_t n = strlen(name);

	ev = ev ? ev + 1 : name;
	for (size_t i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++) {
		size_t m = strlen(sfx[i].suffix);
		if (n > m && strcmp(name + n - m, sfx[i].suffix) == 0 &&
		    (size_t)(name + n - m - ev) > 0 && n - m < cap) {
			memcpy(base, name, n - m);
			base[n - m] = '\0';
			return sfx[i].kind;
		}
	}
	/* syscall_entry_X, compat_syscall_exit_X */
	for (int k = 0; k < 2; k++) {
		const char *tok = k ? "syscall_exit_" : "syscall_entry_";
		const char *p = strstr(ev, tok);
		size_t pre, tl = strlen(tok);
		if (!p || !p[tl] || (p != ev && p[-1] != '_'))
			continue;
		pre = (size_t)(p - name);
		if (pre + 8 + strlen(p + tl) >= cap)
			return K_INSTANT;
		memcpy(base, name, pre);
		memcpy(base + pre, "syscall_", 8);
		strcpy(base + pre + 8, p + tl);
		return k ? K_END : K_BEGIN;
	}
	return K_INSTANT;
}

/* "provider" of "provider:event" (as a string id), or fallback. */
static uint32_t provider_of(struct ctf *c, const char *name, uint32_t fallback)
{
	const char *colon = strchr(name, ':');

	return colon ? intern(c, name, (size_t)(colon - name)) : fallback;
}

enum dev_time {
	T_HSA_INIT, /* `timestamp` counts from the process's hsa_init */
	T_CLOCK,    /* `timestamp` is a value of the trace's clock */
	T_US,       /* `timestamp` in microseconds since the Unix epoch */
	T_OPENCL,   /* `timestamp` on the OpenCL device's clock: offset estimated */
};

struct dev_rule {
	const char *begin, *end; /* event names */
	uint8_t time;            /* enum dev_time */
	const char *track;       /* track name ("" : from agent_handle and queue_id) */
	const char *cat;
};

static const struct dev_rule dev_rules[] = {
	{ "interceptionTracer:kernel_begin", "interceptionTracer:kernel_end", T_HSA_INIT, "", "kernel" },
	{ "hcTracer:kernel_begin", "hcTracer:kernel_end", T_CLOCK, "HC kernels", "kernel" },
	{ "hcTracer:barrier_begin", "hcTracer:barrier_end", T_CLOCK, "HC kernels", "barrier" },
	{ "hcTracer:async_memcpy_begin", "hcTracer:async_memcpy_end", T_CLOCK, "HC copies", "memcpy" },
	{ "hcTracer:async_memcpyslo_begin", "hcTracer:async_memcpyslo_end", T_CLOCK, "HC copies",
	  "memcpy" },
	{ "cudaTracer:kernel_begin", "cudaTracer:kernel_end", T_US, "CUDA kernels", "kernel" },
	{ "cudaTracer:memcpy_begin", "cudaTracer:memcpy_end", T_US, "CUDA memcpy", "memcpy" },
	{ "openclTracer:kernel_begin", "openclTracer:kernel_end", T_OPENCL, "OpenCL device", "kernel" },
	{ "openclTracer:device_begin", "openclTracer:device_end", T_OPENCL, "OpenCL device",
	  "command" },
};

/* The rule an event name begins or ends (*end set), or NULL. */
static const struct dev_rule *dev_rule(const char *name, bool *end)
{
	for (size_t i = 0; i < sizeof(dev_rules) / sizeof(dev_rules[0]); i++) {
		if (strcmp(name, dev_rules[i].begin) == 0 || strcmp(name, dev_rules[i].end) == 0) {
			*end = strcmp(name, dev_rules[i].end) == 0;
			return &dev_rules[i];
		}
	}
	return NULL;
}

/* The track an event of trace t happened on (its thread, else its CPU, else its stream). */
static uint32_t lttng_exec(struct ctf *c, uint32_t t, const bt_event *ev)
{
	const bt_field *cc = bt_event_borrow_common_context_field_const(ev);
	const bt_packet *pk = bt_event_borrow_packet_const(ev);
	const char *procname = member_str(cc, "procname");
	int64_t tid, pid, cpu;
	bool has_tid = member_int(cc, "vtid", &tid) || member_int(cc, "tid", &tid);
	bool has_pid = member_int(cc, "vpid", &pid) || member_int(cc, "pid", &pid);
	uint32_t proc, exec;
	char buf[64];

	if (has_tid) {
		uint32_t pname = intern_cstr(c, procname);
		if (has_pid)
			proc = tft_ctf_add_proc(c, t, PK_PID, (uint64_t)pid, pid, pname, -1);
		else if (procname)
			proc = tft_ctf_add_proc(c, t, PK_NAME, pname, -1, pname, -1);
		else
			proc = tft_ctf_add_proc(c, t, PK_TRACE, 0, -1, c->traces[t].name, -1);
		if (proc == TFT_NONE)
			return TFT_NONE;
		/* a process is named by its main thread once that shows up */
		if (has_pid && tid == pid && procname && !c->procs[proc].named_by_main) {
			struct tft_process *wp = tft_writer_process(c->w, c->procs[proc].id);
			if (wp)
				wp->name = pname;
			c->procs[proc].named_by_main = true;
		}
		return tft_ctf_add_exec(c, proc, E_THREAD, (uint64_t)tid, TFT_TRACK_THREAD, pname, tid, 0);
	}
	proc = tft_ctf_add_proc(c, t, PK_TRACE, 0, c->traces[t].kind == TR_KERNEL ? 0 : -1,
				c->traces[t].kind == TR_KERNEL ? intern_cstr(c, "kernel") : c->traces[t].name,
			-1);
	if (proc == TFT_NONE)
		return TFT_NONE;
	if (pk && member_int(bt_packet_borrow_context_field_const(pk), "cpu_id", &cpu)) {
		snprintf(buf, sizeof(buf), "CPU %" PRId64, cpu);
		return tft_ctf_add_exec(c, proc, E_CPU, (uint64_t)cpu, TFT_TRACK_THREAD, intern_cstr(c, buf), cpu,
					0);
	}
	const bt_stream *s = bt_event_borrow_stream_const(ev);
	uint64_t sid = bt_stream_get_id(s);
	const char *sname = bt_stream_get_name(s);
	if (!sname) {
		snprintf(buf, sizeof(buf), "stream %" PRIu64, sid);
		sname = buf;
	}
	exec = tft_ctf_add_exec(c, proc, E_STREAM, sid, TFT_TRACK_THREAD, intern_cstr(c, base_name(sname)),
				(int64_t)sid, 0);
	return exec;
}

/* Device time of a device begin/end event, by its rule; false: use the event's time. */
static bool device_time(struct ctf *c, const struct dev_rule *r, const bt_message *msg,
			const bt_field *p, const struct proc *pr, int64_t *t)
{
	int64_t v;

	if (!member_int(p, "timestamp", &v))
		return false;
	switch (r->time) {
	case T_HSA_INIT:
		if (pr->hsa_init_ns == INT64_MIN)
			return false;
		return !__builtin_add_overflow(pr->hsa_init_ns, v, t);
	case T_CLOCK: {
		const bt_clock_class *cc = bt_message_event_borrow_stream_class_default_clock_class_const(msg);
		return cc && bt_clock_class_cycles_to_ns_from_origin(cc, (uint64_t)v, t) ==
				     BT_CLOCK_CLASS_CYCLES_TO_NS_FROM_ORIGIN_STATUS_OK;
	}
	case T_US:
		if (v > INT64_MAX / 1000 || v < 0)
			return false;
		*t = v * 1000;
		return true;
	default: /* T_OPENCL: the caller converts */
		*t = v;
		return true;
	}
}

/* Hold an OpenCL device activity until the offset to trace time is known. */
static int cl_hold(struct ctf *c, uint32_t exec, int64_t dev_ts, int64_t dev_end, int64_t host_ts,
		   uint32_t name, uint32_t cat, const struct tft_arg *args, uint16_t nargs)
{
	struct proc *pr = &c->procs[c->execs[exec].proc];
	struct cl_pending *h;
	int64_t lag;

	/* the tracer emits after the end: the smallest lag is the best offset estimate */
	if (__builtin_sub_overflow(host_ts, dev_end, &lag)) { /* (no sense to make of it) */
		c->unaligned++;
		return tft_ctf_push(c, exec, TFT_EV_SLICE, host_ts, span(dev_ts, dev_end), name, cat, 0, args,
				    nargs);
	}
	if (tft_grow((void **)&c->cl, &c->ccl, c->ncl + 1, sizeof(*c->cl)))
		return oom(c);
	h = &c->cl[c->ncl];
	*h = (struct cl_pending){ .exec = exec, .dev_ts = dev_ts, .dev_dur = span(dev_ts, dev_end),
				  .name = name, .cat = cat, .nargs = nargs };
	h->args = tft_ctf_copy_args(c, args, nargs);
	if (c->rc)
		return c->rc;
	c->ncl++;
	if (!pr->cl_seen || lag < pr->cl_offset)
		pr->cl_offset = lag;
	pr->cl_seen = true;
	return 0;
}

static void kernel_op_arg(struct ctf *c, const bt_field *p)
{
	const char *op = member_str(p, "tf_name");

	if (op && *op)
		tft_ctf_add_str_arg(c, "op", intern_cstr(c, op));
}

/* A device begin/end (the profiler's kernels, copies, barriers) on its queue's track. */
static int device_event(struct ctf *c, const struct dev_rule *r, bool end, uint32_t thread,
			const bt_message *msg, const bt_field *p, int64_t ts)
{
	struct proc *pr = &c->procs[c->execs[thread].proc];
	uint32_t proc = c->execs[thread].proc, exec, name, key;
	const char *nm = member_str(p, "name");
	int64_t t = ts, agent = 0, queue = 0;
	char buf[96];
	bool aligned;

	if (r->track[0]) {
		exec = tft_ctf_add_exec(c, proc, E_QUEUE, mix64((uint64_t)(uintptr_t)r->track, 0),
					TFT_TRACK_GPU_STREAM, intern_cstr(c, r->track), 0, 100);
	} else {
		member_int(p, "agent_handle", &agent);
		member_int(p, "queue_id", &queue);
		snprintf(buf, sizeof(buf), "GPU agent 0x%" PRIx64 " queue %" PRId64, (uint64_t)agent,
			 queue);
		exec = tft_ctf_add_exec(c, proc, E_QUEUE, mix64((uint64_t)agent, (uint64_t)queue),
					TFT_TRACK_GPU_STREAM, intern_cstr(c, buf), queue, 100);
	}
	if (exec == TFT_NONE)
		return c->rc;
	aligned = device_time(c, r, msg, p, pr, &t);
	if (!aligned) {
		t = ts;
		c->unaligned++;
	}
	name = intern_cstr(c, nm && *nm ? nm : r->cat);
	key = intern_cstr(c, r->begin);
	c->nargs = 0;
	{
		static const char *const skip[] = { "name", "cat", NULL };
		tft_ctf_add_struct_args(c, p, skip);
		kernel_op_arg(c, p);
	}
	if (!end) {
		int rc = tft_ctf_open_slice(c, exec, t, key, name, name, intern_cstr(c, r->cat));
		if (!rc && r->time == T_OPENCL && aligned)
			c->execs[exec].st[c->execs[exec].n - 1].flags |= OF_CL_DEVICE;
		return rc;
	}
	int64_t i = tft_ctf_find_open(&c->execs[exec], key, name);
	if (i < 0) {
		c->unmatched_ends++;
		return tft_ctf_push(c, exec, TFT_EV_INSTANT, t, 0, name, intern_cstr(c, r->cat), 0,
				    c->args, c->nargs);
	}
	if (r->time == T_OPENCL && aligned && (c->execs[exec].st[i].flags & OF_CL_DEVICE)) {
		struct open o = c->execs[exec].st[i];
		int rc;
		memmove(&c->execs[exec].st[i], &c->execs[exec].st[i + 1],
			(size_t)(c->execs[exec].n - (uint32_t)i - 1) * sizeof(struct open));
		c->execs[exec].n--;
		rc = cl_hold(c, exec, o.ts, t, ts, o.name, o.cat, o.args, o.nargs);
		free(o.args);
		return rc;
	}
	return tft_ctf_close_slice(c, exec, (uint32_t)i, t, 0);
}

/* The category of an OpenCL command type (cl.h's CL_COMMAND_*). */
static const char *cl_command_cat(int64_t cmd)
{
	if (cmd >= 0x11F0 && cmd <= 0x11F2) /* NDRANGE_KERNEL, TASK, NATIVE_KERNEL */
		return "kernel";
	if ((cmd >= 0x11F3 && cmd <= 0x11FD) || (cmd >= 0x1201 && cmd <= 0x1203) ||
	    cmd == 0x1207 || cmd == 0x1208) /* read/write/copy/map/fill of buffers and images */
		return "memcpy";
	return "command";
}

/* openclTracer:clust_device_event: one command's device times, emitted at completion. */
static int clust_device_event(struct ctf *c, uint32_t thread, const bt_field *p, int64_t ts)
{
	uint32_t proc = c->execs[thread].proc, exec;
	int64_t queue = 0, queued = 0, submit = 0, start, end, cmd = -1;
	const char *nm = member_str(p, "name");
	char buf[64];

	if (!(member_int(p, "start_field", &start) || member_int(p, "start", &start)) ||
	    !(member_int(p, "end_field", &end) || member_int(p, "end", &end)))
		return 1; /* not the documented event: an instant */
	if (!member_int(p, "queue_field", &queue))
		member_int(p, "queue", &queue);
	if (!member_int(p, "queued_field", &queued))
		member_int(p, "queued", &queued);
	if (!member_int(p, "submit_field", &submit))
		member_int(p, "submit", &submit);
	snprintf(buf, sizeof(buf), "OpenCL queue 0x%" PRIx64, (uint64_t)queue);
	exec = tft_ctf_add_exec(c, proc, E_QUEUE, mix64((uint64_t)queue, 1), TFT_TRACK_GPU_STREAM,
				intern_cstr(c, buf), queue, 100);
	if (exec == TFT_NONE)
		return c->rc;
	c->nargs = 0;
	if (member_int(p, "command_field", &cmd) || member_int(p, "command", &cmd))
		tft_ctf_add_int_arg(c, "command", cmd);
	if (queued && queued <= start)
		tft_ctf_add_int_arg(c, "queued_to_start_ns", span(queued, start));
	if (submit && submit <= start)
		tft_ctf_add_int_arg(c, "submit_to_start_ns", span(submit, start));
	kernel_op_arg(c, p);
	return cl_hold(c, exec, start, end, ts, intern_cstr(c, nm && *nm ? nm : "command"),
		       intern_cstr(c, cl_command_cat(cmd)), c->args, c->nargs);
}

int tft_ctf_lttng_event(struct ctf *c, uint32_t t, const bt_message *msg, const bt_event *ev,
			const char *name, int64_t ts)
{
	static const char *const ctx_skip[] = { "vtid", "tid", "vpid", "pid", "procname", NULL };
	const bt_field *p = bt_event_borrow_payload_field_const(ev);
	uint32_t exec = lttng_exec(c, t, ev), key, ename, cat;
	struct exec *e;
	char base[256];
	bool dev_end;
	const struct dev_rule *dr;
	int kind;

	if (exec == TFT_NONE)
		return c->rc;
	/* the profiler's device activity and its time bases */
	if ((dr = dev_rule(name, &dev_end)))
		return device_event(c, dr, dev_end, exec, msg, p, ts);
	if (strcmp(name, "openclTracer:clust_device_event") == 0 &&
	    clust_device_event(c, exec, p, ts) <= 0)
		return c->rc;
	if (strcmp(name, "interceptionTracer:runtime_initialized") == 0)
		c->procs[c->execs[exec].proc].hsa_init_ns = ts;

	c->nargs = 0;
	tft_ctf_add_struct_args(c, p, NULL);
	tft_ctf_add_struct_args(c, bt_event_borrow_specific_context_field_const(ev), NULL);
	tft_ctf_add_struct_args(c, bt_event_borrow_common_context_field_const(ev), ctx_skip);
	if (c->rc)
		return c->rc;
	e = &c->execs[exec];
	kind = classify(name, base, sizeof(base));
	if (kind == K_INSTANT)
		return tft_ctf_push(c, exec, TFT_EV_INSTANT, ts, 0, intern_cstr(c, name),
				    provider_of(c, name, c->s_empty), 0, c->args, c->nargs);

	/* what an exit must match besides the base name, and the slice's name */
	const char *nm = member_str(p, "name"), *ct = member_str(p, "cat");
	uint64_t match = 0;
	int64_t addr;
	bool cyg = strncmp(name, "lttng_ust_cyg_profile", 21) == 0;
	bool async = strncmp(name, "tensorflowTracer:async_operation_", 33) == 0;

	key = intern_cstr(c, base);
	if (cyg && member_int(p, "addr", &addr)) {
		char buf[32];
		snprintf(buf, sizeof(buf), "0x%" PRIx64, (uint64_t)addr);
		ename = intern_cstr(c, buf);
		match = (uint64_t)addr + 1;
	} else if (nm && *nm) {
		ename = intern_cstr(c, nm);
		match = ename;
	} else if (strstr(base, "syscall_")) {
		ename = intern_cstr(c, strstr(base, "syscall_") + 8);
	} else {
		ename = key;
	}
	cat = ct && *ct ? intern_cstr(c, ct)
			: strstr(base, "syscall_") && !strchr(base, ':') ? intern_cstr(c, "syscall")
									 : provider_of(c, name, c->s_empty);
	uint32_t thread = exec;
	if (async) {
		/* TF async ops may end on another thread: a lane-packed track per process */
		exec = tft_ctf_add_exec(c, e->proc, E_ASYNC, 0, TFT_TRACK_ASYNC,
					intern_cstr(c, "TensorFlow async ops"), 0, 50);
		if (exec == TFT_NONE)
			return c->rc;
		e = &c->execs[exec];
	}
	if (kind == K_BEGIN) {
		int rc = tft_ctf_open_slice(c, exec, ts, key, match, ename, cat);
		int64_t count;
		struct open *o = rc ? NULL : &c->execs[exec].st[c->execs[exec].n - 1];
		if (o && strcmp(name, "tensorflowTracer:session_start") == 0 &&
		    member_int(p, "count", &count)) {
			o->flags |= OF_STEP;
			o->step_index = count;
		}
		if (o && nm && strcmp(nm, "hsa_init") == 0)
			o->flags |= OF_HSA_INIT;
		return rc;
	}
	int64_t i = tft_ctf_find_open(e, key, match);
	if (i < 0) { /* (an instant where it happened) */
		c->unmatched_ends++;
		return tft_ctf_push(c, thread, TFT_EV_INSTANT, ts, 0, intern_cstr(c, name),
				    provider_of(c, name, c->s_empty), 0, c->args, c->nargs);
	}
	/* hsa_init returned: the base of interceptionTracer's kernel times, unless
	 * runtime_initialized said it */
	if ((e->st[i].flags & OF_HSA_INIT) && c->procs[e->proc].hsa_init_ns == INT64_MIN)
		c->procs[e->proc].hsa_init_ns = ts;
	return tft_ctf_close_slice(c, exec, (uint32_t)i, ts, 0);
}
