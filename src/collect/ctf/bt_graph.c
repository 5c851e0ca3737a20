/* SPDX-License-Identifier: MIT */
/*
 * libbabeltrace2's side: the graph (source.ctf.fs per trace,
 * filter.utils.muxer, a simple sink) whose messages go to the mapping, its
 * errors turned into one line naming the file, and the trial read of each
 * trace by the `babeltrace2` tool in a process of its own (libbabeltrace2
 * 2.0.4 aborts on some corrupt packets).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collect/ctf/ctf_int.h"

static uint32_t trace_of(struct ctf *c, const bt_trace *bt)
{
	const bt_value *v;
	const char *s;
	struct trace *t;

	for (uint32_t i = c->trace0; i < c->ntraces; i++)
		if (c->traces[i].bt == bt)
			return i;
	if (tft_grow((void **)&c->traces, &c->ctraces, c->ntraces + 1, sizeof(*c->traces))) {
		oom(c);
		return TFT_NONE;
	}
	t = &c->traces[c->ntraces];
	*t = (struct trace){ .bt = bt, .host = c->s_empty };
	v = bt_trace_borrow_environment_entry_value_by_name_const(bt, "hostname");
	if (v && bt_value_is_string(v))
		t->host = intern_cstr(c, bt_value_string_get(v));
	v = bt_trace_borrow_environment_entry_value_by_name_const(bt, "tracer_name");
	s = v && bt_value_is_string(v) ? bt_value_string_get(v) : "";
	if (strcmp(s, "otf2") == 0) {
		t->kind = TR_OTF2;
		if (!(t->otf2 = calloc(1, sizeof(*t->otf2)))) {
			oom(c);
			return TFT_NONE;
		}
		tft_ctf_otf2_init(t->otf2);
	} else {
		v = bt_trace_borrow_environment_entry_value_by_name_const(bt, "domain");
		s = v && bt_value_is_string(v) ? bt_value_string_get(v) : "";
		t->kind = strcmp(s, "kernel") == 0 ? TR_KERNEL : strcmp(s, "ust") == 0 ? TR_UST : TR_OTHER;
	}
	s = bt_trace_get_name(bt);
	t->name = intern_cstr(c, s ? base_name(s) : "CTF trace");
	if (c->rc)
		return TFT_NONE;
	return c->ntraces++;
}

static int on_event(struct ctf *c, const bt_message *msg)
{
	const bt_event *ev = bt_message_event_borrow_event_const(msg);
	const bt_event_class *ec = bt_event_borrow_class_const(ev);
	const char *name = bt_event_class_get_name(ec);
	const bt_stream *s = bt_event_borrow_stream_const(ev);
	uint32_t t = trace_of(c, bt_stream_borrow_trace_const(s));
	int64_t ts = 0;
	char buf[48];

	if (t == TFT_NONE)
		return c->rc;
	if (bt_message_event_borrow_stream_class_default_clock_class_const(msg) &&
	    bt_clock_snapshot_get_ns_from_origin(
		    bt_message_event_borrow_default_clock_snapshot_const(msg), &ts) !=
		    BT_CLOCK_SNAPSHOT_GET_NS_FROM_ORIGIN_STATUS_OK)
		return c->rc = tft_error_set(c->err, TFT_EFORMAT, -1,
					     "event %s: expected a time that fits in int64 ns from "
					     "the clock's origin", name ? name : "?");
	if (!name) {
		snprintf(buf, sizeof(buf), "event %" PRIu64, bt_event_class_get_id(ec));
		name = buf;
	}
	c->events++;
	if (ts < c->t_min)
		c->t_min = ts;
	if (ts > c->t_max)
		c->t_max = ts;
	if (c->traces[t].kind == TR_OTF2)
		return tft_ctf_otf2_event(c, t, name, bt_event_borrow_payload_field_const(ev), ts);
	return tft_ctf_lttng_event(c, t, msg, ev, name, ts);
}

static int on_message(struct ctf *c, const bt_message *msg)
{
	uint64_t n;

	switch (bt_message_get_type(msg)) {
	case BT_MESSAGE_TYPE_EVENT:
		return on_event(c, msg);
	case BT_MESSAGE_TYPE_STREAM_BEGINNING: {
		const bt_stream *s = bt_message_stream_beginning_borrow_stream_const(msg);
		const char *name = bt_stream_get_name(s);
		char *dup;
		if (!name)
			return 0;
		if (tft_grow((void **)&c->streams, &c->cstreams, c->nstreams + 1, sizeof(*c->streams)) ||
		    !(dup = strdup(name)))
			return oom(c);
		c->streams[c->nstreams].id = bt_stream_get_id(s);
		c->streams[c->nstreams++].name = dup;
		return 0;
	}
	case BT_MESSAGE_TYPE_DISCARDED_EVENTS:
		if (bt_message_discarded_events_get_count(msg, &n) == BT_PROPERTY_AVAILABILITY_AVAILABLE)
			c->dropped += n;
		return 0;
	case BT_MESSAGE_TYPE_DISCARDED_PACKETS:
		if (bt_message_discarded_packets_get_count(msg, &n) == BT_PROPERTY_AVAILABILITY_AVAILABLE)
			c->dropped_packets += n;
		else
			c->dropped_packets++;
		return 0;
	default:
		return 0;
	}
}

static bt_graph_simple_sink_component_consume_func_status consume(bt_message_iterator *it,
								   void *ud)
{
	struct ctf *c = ud;
	bt_message_array_const msgs;
	uint64_t n = 0;
	int rc = 0;

	switch (bt_message_iterator_next(it, &msgs, &n)) {
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_OK:
		break;
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_END:
		return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_END;
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_AGAIN:
		return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_AGAIN;
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_MEMORY_ERROR:
		return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_MEMORY_ERROR;
	default:
		return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_ERROR;
	}
	for (uint64_t i = 0; i < n; i++) {
		if (!rc)
			rc = on_message(c, msgs[i]);
		bt_message_put_ref(msgs[i]);
	}
	if (rc)
		return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_ERROR;
	if (c->opts && c->opts->progress && tft_ingest_progress_due(&c->last_progress, 0))
		c->opts->progress(c->opts->progress_ctx, 0, 0, c->events);
	return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_OK;
}

/* Copy msg without the "xxx-addr=0x..." noise, on one line. */
static void clean_cause(const char *msg, char *out, size_t size)
{
	size_t o = 0;

	for (const char *p = msg; *p && o + 1 < size; p++) {
		if (*p == '\n' || *p == '\t') {
			if (o && out[o - 1] != ' ')
				out[o++] = ' ';
			continue;
		}
		/* drop "name-addr=0x1234, " tokens */
		if (p == msg || p[-1] == ' ') {
			const char *eq = strchr(p, '=');
			const char *sp = strpbrk(p, " ,");
			if (eq && (!sp || eq < sp) && eq - p >= 5 && strncmp(eq - 5, "-addr", 5) == 0) {
				p = eq + 1;
				while (*p && *p != ',' && *p != ' ')
					p++;
				if (*p == ',')
					p++;
				while (*p == ' ')
					p++;
				p--;
				continue;
			}
		}
		out[o++] = *p;
	}
	while (o && (out[o - 1] == ' ' || out[o - 1] == ',' || out[o - 1] == ':'))
		o--;
	out[o] = '\0';
}

/*
 * The file a path quoted in a cause (`...`, '...' or "...") names, in the
 * user's terms (into file): a trace's directory (*trace set to its index,
 * *is_dir true) or a file inside one. false if it names none.
 */
static bool cause_file(const char *msg, const struct found *f, char *file, size_t size,
		       uint32_t *trace, bool *dir)
{
	for (const char *p = msg; *p; p++) {
		const char *q;
		size_t n;
		if (*p != '`' && *p != '\'' && *p != '"')
			continue;
		if (!(q = strchr(p + 1, *p)))
			return false;
		n = (size_t)(q - p - 1);
		for (uint32_t i = 0; i < f->n; i++) {
			size_t dl = strlen(f->real[i]);
			if (n < dl || strncmp(p + 1, f->real[i], dl) != 0 || (n > dl && p[1 + dl] != '/'))
				continue;
			if (snprintf(file, size, "%s%.*s", f->dirs[i], (int)(n - dl), p + 1 + dl) >=
			    (int)size)
				return false;
			*trace = i;
			*dir = n == dl;
			return true;
		}
		p = q;
	}
	return false;
}

/*
 * libbabeltrace2 failed (opening the traces or reading them): one line
 * naming the file and what was expected, from its error causes (index 0:
 * the root cause).
 */
static int bt_failed(struct ctf *c, const struct found *f)
{
	const bt_error *e = bt_current_thread_take_error();
	char file[4200] = "", detail[448] = "", root[400] = "";
	bool named = false, trace_level = false, dir = false;
	uint32_t trace = 0;

	if (e) {
		uint64_t n = bt_error_get_cause_count(e);
		for (uint64_t k = 0; k < n; k++) {
			const bt_error_cause *cause = bt_error_borrow_cause_by_index(e, k);
			const char *m = bt_error_cause_get_message(cause);
			if (!m)
				continue;
			if (!root[0]) {
				clean_cause(m, root, sizeof(root));
				trace_level = strncmp(m, "Cannot create trace for `", 25) == 0;
			}
			if (!named)
				named = cause_file(m, f, file, sizeof(file), &trace, &dir);
			if (!named && bt_error_cause_get_actor_type(cause) ==
					      BT_ERROR_CAUSE_ACTOR_TYPE_MESSAGE_ITERATOR) {
				/* source.ctf.fs names its ports "TRACE | STREAM-CLASS | STREAM-ID" */
				const char *port =
					bt_error_cause_message_iterator_actor_get_component_output_port_name(
						cause);
				const char *bar = port ? strrchr(port, '|') : NULL;
				char *end = NULL;
				uint64_t id = bar ? strtoull(bar + 1, &end, 10) : 0;
				for (uint32_t i = 0; bar && end != bar + 1 && !*end && i < c->nstreams && !named;
				     i++) {
					char q[4200];
					if (c->streams[i].id != id)
						continue;
					snprintf(q, sizeof(q), "`%s`", c->streams[i].name);
					named = cause_file(q, f, file, sizeof(file), &trace, &dir);
				}
			}
		}
		bt_error_release(e);
	}
	if (root[0] && !trace_level)
		snprintf(detail, sizeof(detail), "; libbabeltrace2: %s", root);
	if (!named)
		trace = 0;
	if (trace_level) /* nothing below the trace said what: its metadata */
		snprintf(file, sizeof(file), "%s/metadata", f->dirs[trace]);
	else if (!named || dir)
		snprintf(file, sizeof(file), "%s", f->dirs[trace]);
	if (trace_level)
		tft_error_set(c->err, TFT_EFORMAT, -1,
			      "expected CTF 1.8 metadata that libbabeltrace2 can parse (a TSDL error: "
			      "`babeltrace2 --log-level=E TRACE` shows its line)");
	else if (strstr(root, "timestamp is less than")) /* the muxer */
		tft_error_set(c->err, TFT_EFORMAT, -1, "expected each stream's events in time order "
			      "(a corrupt stream file?)%s", detail);
	else
		tft_error_set(c->err, TFT_EFORMAT, -1, "expected CTF packets as the metadata describes "
			      "them%s", detail);
	tft_error_set_file(c->err, file);
	return TFT_EFORMAT;
}

/* Connect every output port of src to a free input port of the muxer. */
static int connect_source(bt_graph *g, const bt_component_source *src, const bt_component_filter *mux)
{
	uint64_t n = bt_component_source_get_output_port_count(src);

	for (uint64_t i = 0; i < n; i++) {
		const bt_port_output *out = bt_component_source_borrow_output_port_by_index_const(src, i);
		const bt_port_input *in = NULL;
		uint64_t m = bt_component_filter_get_input_port_count(mux);
		for (uint64_t k = 0; k < m && !in; k++) {
			const bt_port_input *p = bt_component_filter_borrow_input_port_by_index_const(mux, k);
			if (!bt_port_is_connected(bt_port_input_as_port_const(p)))
				in = p;
		}
		if (!in || bt_graph_connect_ports(g, out, in, NULL) != BT_GRAPH_CONNECT_PORTS_STATUS_OK)
			return -1;
	}
	return 0;
}

/*
 * Trace i: source.ctf.fs -> muxer -> sink. A graph per trace: one component
 * for several traces would merge those that share a UUID and refuse those
 * without one, and the muxer refuses traces whose clocks it cannot
 * correlate; every track belongs to one trace, so their order across traces
 * does not matter.
 */
int tft_ctf_run_graph(struct ctf *c, const struct found *f, uint32_t i)
{
	const bt_plugin *ctf_pl = NULL, *utils_pl = NULL;
	const bt_component_class_source *src_cls;
	const bt_component_class_filter *mux_cls;
	const bt_component_filter *mux = NULL;
	const bt_component_sink *sink = NULL;
	bt_value *params = NULL;
	bt_graph *g = NULL;
	int rc = 0;

	c->trace0 = c->ntraces;
	for (uint32_t k = 0; k < c->nstreams; k++)
		free(c->streams[k].name);
	c->nstreams = 0;
	if (bt_plugin_find("ctf", BT_FALSE, BT_FALSE, BT_TRUE, BT_TRUE, BT_FALSE, &ctf_pl) !=
		    BT_PLUGIN_FIND_STATUS_OK ||
	    bt_plugin_find("utils", BT_FALSE, BT_FALSE, BT_TRUE, BT_TRUE, BT_FALSE, &utils_pl) !=
		    BT_PLUGIN_FIND_STATUS_OK ||
	    !(src_cls = bt_plugin_borrow_source_component_class_by_name_const(ctf_pl, "fs")) ||
	    !(mux_cls = bt_plugin_borrow_filter_component_class_by_name_const(utils_pl, "muxer"))) {
		bt_current_thread_clear_error();
		rc = tft_error_set(c->err, TFT_EIO, -1,
				   "libbabeltrace2's ctf and utils plugins were not found in its "
				   "system plugin directory (install Debian's babeltrace2 package)");
		goto out;
	}
	if (!(g = bt_graph_create(0))) {
		rc = oom(c);
		goto out;
	}
	if (bt_graph_add_filter_component(g, mux_cls, "muxer", NULL, BT_LOGGING_LEVEL_NONE, &mux) !=
		    BT_GRAPH_ADD_COMPONENT_STATUS_OK ||
	    bt_graph_add_simple_sink_component(g, "tftracer", NULL, consume, NULL, c, &sink) !=
		    BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
		bt_current_thread_clear_error();
		rc = tft_error_set(c->err, TFT_EIO, -1, "cannot set up libbabeltrace2's graph");
		goto out;
	}
	{
		const bt_component_source *src = NULL;
		bt_value *inputs = NULL;

		if (!(params = bt_value_map_create()) ||
		    bt_value_map_insert_empty_array_entry(params, "inputs", &inputs) !=
			    BT_VALUE_MAP_INSERT_ENTRY_STATUS_OK ||
		    bt_value_array_append_string_element(inputs, f->real[i]) !=
			    BT_VALUE_ARRAY_APPEND_ELEMENT_STATUS_OK) {
			rc = oom(c);
			goto out;
		}
		if (bt_graph_add_source_component(g, src_cls, "src", params, BT_LOGGING_LEVEL_NONE,
						  &src) != BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
			rc = bt_failed(c, f);
			goto out;
		}
		if (connect_source(g, src, mux)) {
			bt_current_thread_clear_error();
			rc = tft_error_set(c->err, TFT_EIO, -1, "cannot set up libbabeltrace2's graph");
			goto out;
		}
	}
	if (bt_graph_connect_ports(g, bt_component_filter_borrow_output_port_by_index_const(mux, 0),
				   bt_component_sink_borrow_input_port_by_index_const(sink, 0),
				   NULL) != BT_GRAPH_CONNECT_PORTS_STATUS_OK) {
		bt_current_thread_clear_error();
		rc = tft_error_set(c->err, TFT_EIO, -1, "cannot set up libbabeltrace2's graph");
		goto out;
	}
	for (;;) {
		bt_graph_run_status st = bt_graph_run(g);
		if (st == BT_GRAPH_RUN_STATUS_OK)
			break;
		if (st == BT_GRAPH_RUN_STATUS_AGAIN)
			continue;
		if (c->rc) { /* ours (memory, the store): not the trace's */
			bt_current_thread_clear_error();
			rc = c->rc;
		} else if (st == BT_GRAPH_RUN_STATUS_MEMORY_ERROR) {
			bt_current_thread_clear_error();
			rc = oom(c);
		} else {
			rc = bt_failed(c, f);
		}
		goto out;
	}
out:
	bt_graph_put_ref(g);
	bt_value_put_ref(params);
	bt_plugin_put_ref(ctf_pl);
	bt_plugin_put_ref(utils_pl);
	/* causes left after bt_failed() took its error (a component may append one and go on,
	 * or while it is finalized): the thread's error would outlive the import */
	bt_current_thread_clear_error();
	return rc;
}

/*
 * libbabeltrace2 2.0.4 aborts the process on some corrupt packets (an
 * assertion in its CTF message iterator, on a packet context whose sizes do
 * not fit int64: 1 of 400 random mutations of real streams). So trace i is
 * first read by `babeltrace2 --output-format=dummy TRACE` (its command-line
 * tool, the same library, in a process of its own): if that dies of a
 * signal, the trace is refused and this process lives on. What it fails on
 * cleanly, the real read fails on again, with the message. (A fork() that
 * read the trace itself could deadlock: the store's worker threads may hold
 * the allocator's lock at that moment, as ASan's showed.) Without the tool
 * the trace is read directly.
 */
int tft_ctf_trial_read(struct ctf *c, const struct found *f, uint32_t i)
{
	static char tool[] = "babeltrace2", dummy[] = "--output-format=dummy";
	char *argv[] = { tool, dummy, f->real[i], NULL };
	posix_spawn_file_actions_t fa;
	int status = 0, sig;
	pid_t pid, w;
	extern char **environ;

	if (posix_spawn_file_actions_init(&fa))
		return 0;
	if (posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0) ||
	    posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0) ||
	    posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0) ||
	    posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ)) {
		posix_spawn_file_actions_destroy(&fa);
		return 0; /* (no babeltrace2 tool: read it in place) */
	}
	posix_spawn_file_actions_destroy(&fa);
	while ((w = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
		;
	if (w != pid || !WIFSIGNALED(status))
		return 0;
	sig = WTERMSIG(status);
	if (sig == SIGKILL || sig == SIGINT || sig == SIGTERM || sig == SIGHUP)
		return 0; /* (stopped from outside, not by the trace) */
	tft_error_set(c->err, TFT_EFORMAT, -1,
		      "expected CTF packets as the metadata describes them: libbabeltrace2 "
		      "crashed reading this trace (babeltrace2: signal %d, %s; a corrupt packet "
		      "context?)", sig, strsignal(sig));
	tft_error_set_file(c->err, f->dirs[i]);
	return TFT_EFORMAT;
}
