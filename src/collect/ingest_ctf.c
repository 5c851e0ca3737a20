/* SPDX-License-Identifier: MIT */
/*
 * CTF traces (LTTng UST and kernel, OTF2 converted to CTF, any CTF 1.8)
 * through libbabeltrace2: source.ctf.fs reads each trace, filter.utils.muxer
 * puts every stream's messages in time order, and a simple sink hands them
 * to the mapping below. libbabeltrace2 parses every byte (metadata, packets,
 * events); this file only walks the decoded trace IR. The mapping is
 * documented in docs/formats-lttng.md.
 *
 * Slices close when their exit arrives, so they reach the writer out of
 * start order: every event goes through the sorter, which also means
 * nothing reaches the writer's tracks before the whole input was read.
 *
 * libbabeltrace2 2.0.4 hangs on a packetized metadata file cut short and
 * aborts on some corrupt packets: the metadata framing is checked first
 * (codec/ctf_meta.c) and each trace is read once by the `babeltrace2` tool in
 * a process of its own before this one reads it (trial_read()).
 */
#include <babeltrace2/babeltrace.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "codec/ctf_meta.h"
#include "codec/json_write.h"
#include "collect/ingest_ctf.h"
#include "core/grow.h"
#include "core/hmap.h"
#include "store/sorter.h"

#define MAX_ARGS 96        /* args kept per event (fields beyond are left out) */
#define FIND_DEPTH 8       /* directory levels searched for traces below a path */
#define MAX_TRACES 256     /* traces one import reads */
#define MAX_VISIT 20000    /* directories searched for them */
#define CTF_PACKET_MAGIC 0xC1FC1FC1u
#define TSDL_PACKET_MAGIC 0x75D11D57u

/* ---- keyed tables: (a, b) -> index, in a core/hmap map ----------------------- */

static uint64_t mix64(uint64_t a, uint64_t b)
{
	uint64_t h = a * 0x9E3779B97F4A7C15ull ^ (b + 0x632BE59BD9B4E019ull + (a << 6) + (a >> 2));

	h ^= h >> 33;
	h *= 0xFF51AFD7ED558CCDull;
	h ^= h >> 33;
	return h;
}

static inline uint32_t map_get(const struct tft_hmap *m, uint64_t a, uint64_t b)
{
	const uint64_t k[2] = { a, b };

	return tft_hmap_get(m, k, (uint32_t)mix64(a, b));
}

static inline int map_put(struct tft_hmap *m, uint64_t a, uint64_t b, uint32_t v)
{
	const uint64_t k[2] = { a, b };

	return tft_hmap_put(m, k, (uint32_t)mix64(a, b), v);
}

/* ---- state ---------------------------------------------------------------------- */

enum trace_kind { TR_OTHER, TR_UST, TR_KERNEL, TR_OTF2 };

/* Keys of processes (map a = kind << 32 | trace) and tracks (a = kind << 32 | process). */
enum { PK_PID = 1, PK_NAME, PK_TRACE, PK_OTF2 };
enum { E_THREAD = 1, E_CPU, E_STREAM, E_QUEUE, E_ASYNC, E_COMM };

struct trace {
	const bt_trace *bt;  /* borrowed: identity only */
	int kind;            /* enum trace_kind */
	uint32_t host;       /* string id of env hostname ("" if none) */
	uint32_t name;       /* the trace's name (its directory) */
	struct otf2 *otf2;   /* owned; OTF2 definitions */
};

struct proc {
	uint32_t id;          /* writer's */
	uint32_t trace;
	int64_t pid;
	bool named_by_main;   /* its name is its main thread's (tid == pid) */
	int64_t hsa_init_ns;  /* interceptionTracer kernel times' base; INT64_MIN: none yet */
	int64_t cl_offset;    /* OpenCL device -> trace time: min(emission - device end) */
	bool cl_seen;
};

/* An open slice: an entry waiting for its exit. */
struct open {
	int64_t ts;
	uint64_t match;        /* what the exit must carry too (name id, address); 0: anything */
	uint32_t key;          /* pairing key: string id of the base name */
	uint32_t name, cat;
	struct tft_arg *args;  /* owned */
	uint16_t nargs;
	uint8_t flags;         /* OF_* */
	int64_t step_index;    /* OF_STEP: the session run's count */
};

enum {
	OF_STEP = 1,      /* a TF session run: also a step */
	OF_HSA_INIT = 2,  /* the hsa_init call: its return is the kernel times' base */
	OF_CL_DEVICE = 4, /* OpenCL device times: held until the offset is known */
};

struct exec {
	uint32_t track;    /* writer's; TFT_NONE until its first event */
	struct tft_track def; /* what it is registered as */
	uint32_t proc;     /* index into procs */
	bool fifo;         /* device queues, async ops: an exit closes the oldest match */
	struct open *st;   /* owned; open slices, oldest first */
	uint32_t n, cap;
};

/* An OpenCL device activity, held until the process's clock offset is known. */
struct cl_pending {
	uint32_t exec;
	int64_t dev_ts, dev_dur;
	uint32_t name, cat;
	struct tft_arg *args; /* owned */
	uint16_t nargs;
};

struct ctf {
	struct tft_writer *w;
	struct tft_sorter *sorter;
	const struct tft_ingest_opts *opts;
	struct tft_error *err;
	int rc;                    /* first failure of ours (not libbabeltrace2's) */

	struct trace *traces;
	uint32_t ntraces, ctraces;
	uint32_t trace0;           /* the first of the current graph's (earlier graphs' are freed) */
	struct proc *procs;
	uint32_t nprocs, cprocs;
	struct exec *execs;
	uint32_t nexecs, cexecs;
	struct tft_hmap proc_map, exec_map; /* (kind << 32 | trace/process, key) -> index */
	struct cl_pending *cl;
	uint32_t ncl, ccl;
	struct tft_step *steps;
	uint32_t nsteps, csteps;
	struct {
		uint64_t id;  /* stream instance id (LTTng: the CPU) */
		char *name;   /* owned; source.ctf.fs: the stream file's path */
	} *streams;
	uint32_t nstreams, cstreams;

	/* the event being mapped */
	struct tft_arg args[MAX_ARGS];
	uint16_t nargs;
	struct tft_json_writer jw;

	int64_t t_min, t_max;     /* the trace's extent (ns), over every event */
	uint64_t events, unclosed, unmatched_ends, dropped, dropped_packets, unaligned;
	struct timespec last_progress;

	uint32_t s_empty; /* "" */
};

/* ---- small helpers ---------------------------------------------------------------- */

static int oom(struct ctf *c)
{
	if (!c->rc)
		c->rc = tft_error_set(c->err, TFT_ENOMEM, -1, "out of memory reading the CTF trace");
	return c->rc;
}

static uint32_t intern(struct ctf *c, const char *s, size_t len)
{
	uint32_t id = tft_writer_intern(c->w, s, len);

	if (id == UINT32_MAX) {
		oom(c);
		return 0;
	}
	return id;
}

static uint32_t intern_cstr(struct ctf *c, const char *s)
{
	return intern(c, s ? s : "", s ? strlen(s) : 0);
}

static const bt_field *member(const bt_field *st, const char *name)
{
	if (!st || bt_field_get_class_type(st) != BT_FIELD_CLASS_TYPE_STRUCTURE)
		return NULL;
	return bt_field_structure_borrow_member_field_by_name_const(st, name);
}

/* An integer field's value (enumerations too); false if f is not one. */
static bool int_value(const bt_field *f, int64_t *v)
{
	bt_field_class_type t;

	if (!f)
		return false;
	t = bt_field_get_class_type(f);
	if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_UNSIGNED_INTEGER)) {
		*v = (int64_t)bt_field_integer_unsigned_get_value(f);
		return true;
	}
	if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_SIGNED_INTEGER)) {
		*v = bt_field_integer_signed_get_value(f);
		return true;
	}
	return false;
}

static bool member_int(const bt_field *st, const char *name, int64_t *v)
{
	return int_value(member(st, name), v);
}

/* A string member's value, NULL if absent or not a string. */
static const char *member_str(const bt_field *st, const char *name)
{
	const bt_field *f = member(st, name);

	if (!f || bt_field_get_class_type(f) != BT_FIELD_CLASS_TYPE_STRING)
		return NULL;
	return bt_field_string_get_value(f);
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s && s[1] ? s + 1 : path;
}

/* b - a, or 0 when b <= a; INT64_MAX when it does not fit (times are any int64). */
static int64_t span(int64_t a, int64_t b)
{
	int64_t d;

	if (b <= a)
		return 0;
	return __builtin_sub_overflow(b, a, &d) ? INT64_MAX : d;
}

/* ---- fields to args ------------------------------------------------------------- */

static void field_json(struct ctf *c, const bt_field *f, int depth);

static bool is_hex(const bt_field *f)
{
	const bt_field_class *fc = bt_field_borrow_class_const(f);

	return bt_field_class_integer_get_preferred_display_base(fc) ==
	       BT_FIELD_CLASS_INTEGER_PREFERRED_DISPLAY_BASE_HEXADECIMAL;
}

/* The one label of an enumeration field's value, or NULL (none or several). */
static const char *enum_label(const bt_field *f)
{
	bt_field_class_enumeration_mapping_label_array labels;
	uint64_t n = 0;
	bt_field_enumeration_get_mapping_labels_status st;

	if (bt_field_class_type_is(bt_field_get_class_type(f),
				   BT_FIELD_CLASS_TYPE_UNSIGNED_ENUMERATION))
		st = bt_field_enumeration_unsigned_get_mapping_labels(f, &labels, &n);
	else
		st = bt_field_enumeration_signed_get_mapping_labels(f, &labels, &n);
	return st == BT_FIELD_ENUMERATION_GET_MAPPING_LABELS_STATUS_OK && n == 1 ? labels[0] : NULL;
}

#define JSON_DEPTH 32        /* nested fields deeper than this are null */
#define JSON_ARRAY_MAX 4096  /* array elements kept in an arg (then "(N more)") */

static void field_json(struct ctf *c, const bt_field *f, int depth)
{
	struct tft_json_writer *jw = &c->jw;
	bt_field_class_type t = bt_field_get_class_type(f);
	char buf[32];

	if (depth > JSON_DEPTH) {
		tft_json_write_null(jw);
	} else if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_ENUMERATION) && enum_label(f)) {
		tft_json_write_cstr(jw, enum_label(f));
	} else if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_UNSIGNED_INTEGER)) {
		uint64_t v = bt_field_integer_unsigned_get_value(f);
		if (is_hex(f)) {
			snprintf(buf, sizeof(buf), "0x%" PRIx64, v);
			tft_json_write_cstr(jw, buf);
		} else {
			tft_json_write_uint(jw, v);
		}
	} else if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_SIGNED_INTEGER)) {
		tft_json_write_int(jw, bt_field_integer_signed_get_value(f));
	} else if (t == BT_FIELD_CLASS_TYPE_BOOL) {
		tft_json_write_bool(jw, bt_field_bool_get_value(f));
	} else if (t == BT_FIELD_CLASS_TYPE_BIT_ARRAY) {
		tft_json_write_uint(jw, bt_field_bit_array_get_value_as_integer(f));
	} else if (t == BT_FIELD_CLASS_TYPE_SINGLE_PRECISION_REAL) {
		tft_json_write_double(jw, bt_field_real_single_precision_get_value(f));
	} else if (t == BT_FIELD_CLASS_TYPE_DOUBLE_PRECISION_REAL) {
		tft_json_write_double(jw, bt_field_real_double_precision_get_value(f));
	} else if (t == BT_FIELD_CLASS_TYPE_STRING) {
		tft_json_write_str(jw, bt_field_string_get_value(f), bt_field_string_get_length(f));
	} else if (t == BT_FIELD_CLASS_TYPE_STRUCTURE) {
		const bt_field_class *fc = bt_field_borrow_class_const(f);
		uint64_t n = bt_field_class_structure_get_member_count(fc);
		tft_json_write_begin_object(jw);
		for (uint64_t i = 0; i < n; i++) {
			const bt_field_class_structure_member *m =
				bt_field_class_structure_borrow_member_by_index_const(fc, i);
			tft_json_write_key(jw, bt_field_class_structure_member_get_name(m));
			field_json(c, bt_field_structure_borrow_member_field_by_index_const(f, i), depth + 1);
		}
		tft_json_write_end_object(jw);
	} else if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_ARRAY)) {
		uint64_t n = bt_field_array_get_length(f);
		tft_json_write_begin_array(jw);
		for (uint64_t i = 0; i < n && i < JSON_ARRAY_MAX; i++)
			field_json(c, bt_field_array_borrow_element_field_by_index_const(f, i), depth + 1);
		if (n > JSON_ARRAY_MAX) {
			snprintf(buf, sizeof(buf), "(%" PRIu64 " more)", n - JSON_ARRAY_MAX);
			tft_json_write_cstr(jw, buf);
		}
		tft_json_write_end_array(jw);
	} else if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_OPTION)) {
		const bt_field *o = bt_field_option_borrow_field_const(f);
		if (o)
			field_json(c, o, depth + 1);
		else
			tft_json_write_null(jw);
	} else if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_VARIANT)) {
		field_json(c, bt_field_variant_borrow_selected_option_field_const(f), depth + 1);
	} else {
		tft_json_write_null(jw);
	}
}

/* Append one field as an arg named key. */
static void add_arg(struct ctf *c, const char *key, const bt_field *f)
{
	struct tft_arg *a;
	bt_field_class_type t = bt_field_get_class_type(f);
	char buf[32];

	if (c->nargs >= MAX_ARGS || c->rc)
		return;
	a = &c->args[c->nargs];
	a->key = intern_cstr(c, key);
	if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_ENUMERATION) && enum_label(f)) {
		a->type = TFT_ARG_STR;
		a->v.str = intern_cstr(c, enum_label(f));
	} else if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_UNSIGNED_INTEGER)) {
		uint64_t v = bt_field_integer_unsigned_get_value(f);
		if (is_hex(f) || v > (uint64_t)INT64_MAX) {
			snprintf(buf, sizeof(buf), is_hex(f) ? "0x%" PRIx64 : "%" PRIu64, v);
			a->type = TFT_ARG_STR;
			a->v.str = intern_cstr(c, buf);
		} else {
			a->type = TFT_ARG_INT;
			a->v.i = (int64_t)v;
		}
	} else if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_SIGNED_INTEGER)) {
		a->type = TFT_ARG_INT;
		a->v.i = bt_field_integer_signed_get_value(f);
	} else if (t == BT_FIELD_CLASS_TYPE_BOOL) {
		a->type = TFT_ARG_BOOL;
		a->v.i = bt_field_bool_get_value(f) ? 1 : 0;
	} else if (t == BT_FIELD_CLASS_TYPE_BIT_ARRAY) {
		a->type = TFT_ARG_INT;
		a->v.i = (int64_t)bt_field_bit_array_get_value_as_integer(f);
	} else if (t == BT_FIELD_CLASS_TYPE_SINGLE_PRECISION_REAL) {
		a->type = TFT_ARG_DOUBLE;
		a->v.d = bt_field_real_single_precision_get_value(f);
	} else if (t == BT_FIELD_CLASS_TYPE_DOUBLE_PRECISION_REAL) {
		a->type = TFT_ARG_DOUBLE;
		a->v.d = bt_field_real_double_precision_get_value(f);
	} else if (t == BT_FIELD_CLASS_TYPE_STRING) {
		a->type = TFT_ARG_STR;
		a->v.str = intern(c, bt_field_string_get_value(f), bt_field_string_get_length(f));
	} else {
		const char *json;
		size_t len;
		tft_json_write_fini(&c->jw);
		tft_json_write_init_mem(&c->jw);
		field_json(c, f, 0);
		if (tft_json_write_finish(&c->jw)) {
			oom(c);
			return;
		}
		json = tft_json_write_borrow(&c->jw, &len);
		a->type = TFT_ARG_JSON;
		a->v.str = intern(c, json, len);
	}
	c->nargs++;
}

/* Every member of a structure field as an arg, but those named in skip (NULL-terminated). */
static void add_struct_args(struct ctf *c, const bt_field *st, const char *const *skip)
{
	const bt_field_class *fc;
	uint64_t n;

	if (!st || bt_field_get_class_type(st) != BT_FIELD_CLASS_TYPE_STRUCTURE)
		return;
	fc = bt_field_borrow_class_const(st);
	n = bt_field_class_structure_get_member_count(fc);
	for (uint64_t i = 0; i < n; i++) {
		const char *name = bt_field_class_structure_member_get_name(
			bt_field_class_structure_borrow_member_by_index_const(fc, i));
		bool skipped = false;
		for (const char *const *s = skip; s && *s && !skipped; s++)
			skipped = strcmp(name, *s) == 0;
		if (!skipped)
			add_arg(c, name, bt_field_structure_borrow_member_field_by_index_const(st, i));
	}
}

static void add_int_arg(struct ctf *c, const char *key, int64_t v)
{
	if (c->nargs >= MAX_ARGS || c->rc)
		return;
	c->args[c->nargs] = (struct tft_arg){ .key = intern_cstr(c, key), .type = TFT_ARG_INT };
	c->args[c->nargs++].v.i = v;
}

static void add_str_arg(struct ctf *c, const char *key, uint32_t str)
{
	if (c->nargs >= MAX_ARGS || c->rc)
		return;
	c->args[c->nargs] = (struct tft_arg){ .key = intern_cstr(c, key), .type = TFT_ARG_STR };
	c->args[c->nargs++].v.str = str;
}

static struct tft_arg *copy_args(struct ctf *c, const struct tft_arg *a, uint16_t n)
{
	struct tft_arg *p;

	if (!n)
		return NULL;
	p = malloc((size_t)n * sizeof(*p));
	if (!p) {
		oom(c);
		return NULL;
	}
	memcpy(p, a, (size_t)n * sizeof(*p));
	return p;
}

/* ---- output ----------------------------------------------------------------------- */

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

static int push(struct ctf *c, uint32_t exec, int kind, int64_t ts, int64_t dur, uint32_t name,
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

/* ---- processes and tracks --------------------------------------------------------- */

static uint32_t add_proc(struct ctf *c, uint32_t trace, int kind, uint64_t key, int64_t pid,
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

static uint32_t add_exec(struct ctf *c, uint32_t proc, int kind, uint64_t key, uint32_t tkind,
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

/* ---- slices: entries and exits ------------------------------------------------------ */

static int open_slice(struct ctf *c, uint32_t exec, int64_t ts, uint32_t key, uint64_t match,
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
	o->args = copy_args(c, c->args, c->nargs);
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
static int64_t find_open(const struct exec *e, uint32_t key, uint64_t match)
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
static int close_slice(struct ctf *c, uint32_t exec, uint32_t i, int64_t ts, uint8_t flags)
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
	rc = push(c, exec, TFT_EV_SLICE, o.ts, span(o.ts, ts), o.name, o.cat, flags,
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

/* ---- event names: entries, exits, instants ------------------------------------------- */

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

/* ---- the LTTng-based TensorFlow profiler's device activity (docs/formats-lttng.md) --- */

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

/* ---- OTF2 traces converted to CTF ----------------------------------------------------- */

struct otf2_def {
	uint32_t name;   /* string ref (OTF2 string id) */
	uint32_t extra;  /* region: paradigm; location: its group; group: type */
	uint32_t extra2; /* group: paradigm */
};

struct otf2 {
	struct tft_hmap strings;   /* OTF2 string id -> index into str */
	uint32_t *str;        /* our string ids */
	uint32_t nstr, cstr;
	struct tft_hmap regions, locations, groups_loc, paradigms, comms, groups;
	struct otf2_def *defs;
	uint32_t ndefs, cdefs;
	struct tft_hmap rank_of;   /* location -> rank (MPI_COMM_WORLD's locations) */
};

#define OTF2_UNDEF32 0xFFFFFFFFu
#define OTF2_GROUP_COMM_LOCATIONS 4
#define OTF2_PARADIGM_MPI 4

static const char *const otf2_collectives[] = {
	"barrier", "bcast", "gather", "gatherv", "scatter", "scatterv", "allgather",
	"allgatherv", "alltoall", "alltoallv", "alltoallw", "allreduce", "reduce",
	"reduce_scatter", "scan", "exscan", "reduce_scatter_block", "create_handle",
	"destroy_handle", "allocate", "deallocate", "create_handle_and_allocate",
	"destroy_handle_and_deallocate",
};

static void otf2_init(struct otf2 *o)
{
	struct tft_hmap *maps[] = { &o->strings, &o->regions, &o->locations, &o->groups_loc,
				    &o->paradigms, &o->comms, &o->groups, &o->rank_of };

	for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++)
		tft_hmap_init(maps[i], 2);
}

static void otf2_free(struct otf2 *o)
{
	if (!o)
		return;
	tft_hmap_fini(&o->strings);
	free(o->str);
	tft_hmap_fini(&o->regions);
	tft_hmap_fini(&o->locations);
	tft_hmap_fini(&o->groups_loc);
	tft_hmap_fini(&o->paradigms);
	tft_hmap_fini(&o->comms);
	tft_hmap_fini(&o->groups);
	free(o->defs);
	tft_hmap_fini(&o->rank_of);
	free(o);
}

/* Our string id of OTF2 string ref s, or TFT_NONE. */
static uint32_t otf2_str(const struct otf2 *o, int64_t s)
{
	uint32_t i = map_get(&o->strings, (uint64_t)s, 0);

	return i == TFT_NONE ? TFT_NONE : o->str[i];
}

static int otf2_def(struct ctf *c, struct otf2 *o, struct tft_hmap *m, int64_t self, struct otf2_def d)
{
	if (tft_grow((void **)&o->defs, &o->cdefs, o->ndefs + 1, sizeof(*o->defs)) ||
	    map_put(m, (uint64_t)self, 0, o->ndefs))
		return oom(c);
	o->defs[o->ndefs++] = d;
	return 0;
}

static const struct otf2_def *otf2_get(const struct otf2 *o, const struct tft_hmap *m, int64_t self)
{
	uint32_t i = map_get(m, (uint64_t)self, 0);

	return i == TFT_NONE ? NULL : &o->defs[i];
}

/* A GlobalDef_* event: remember what naming needs. */
static int otf2_definition(struct ctf *c, struct otf2 *o, const char *name, const bt_field *p)
{
	int64_t self = 0, a = 0, b = 0, d = 0;
	const char *s;

	if (strcmp(name, "GlobalDef_String") == 0) {
		if (!member_int(p, "self", &self) || !(s = member_str(p, "stringValue")))
			return 0;
		if (tft_grow((void **)&o->str, &o->cstr, o->nstr + 1, sizeof(*o->str)) ||
		    map_put(&o->strings, (uint64_t)self, 0, o->nstr))
			return oom(c);
		o->str[o->nstr++] = intern_cstr(c, s);
		return c->rc;
	}
	if (!member_int(p, "self", &self) && strcmp(name, "GlobalDef_GroupMember") != 0 &&
	    strcmp(name, "GlobalDef_Paradigm") != 0)
		return 0;
	if (strcmp(name, "GlobalDef_Region") == 0 && member_int(p, "name", &a)) {
		member_int(p, "paradigm", &b);
		return otf2_def(c, o, &o->regions, self, (struct otf2_def){ (uint32_t)a, (uint32_t)b, 0 });
	}
	if (strcmp(name, "GlobalDef_Paradigm") == 0 && member_int(p, "paradigm", &self) &&
	    member_int(p, "name", &a))
		return otf2_def(c, o, &o->paradigms, self, (struct otf2_def){ (uint32_t)a, 0, 0 });
	if (strcmp(name, "GlobalDef_LocationGroup") == 0 && member_int(p, "name", &a))
		return otf2_def(c, o, &o->groups_loc, self, (struct otf2_def){ (uint32_t)a, 0, 0 });
	if (strcmp(name, "GlobalDef_Location") == 0 && member_int(p, "name", &a) &&
	    member_int(p, "locationGroup", &b))
		return otf2_def(c, o, &o->locations, self,
				(struct otf2_def){ (uint32_t)a, (uint32_t)b, 0 });
	if (strcmp(name, "GlobalDef_Comm") == 0 && member_int(p, "name", &a))
		return otf2_def(c, o, &o->comms, self, (struct otf2_def){ (uint32_t)a, 0, 0 });
	if (strcmp(name, "GlobalDef_Group") == 0 && member_int(p, "groupType", &b) &&
	    member_int(p, "paradigm", &d)) {
		member_int(p, "name", &a);
		return otf2_def(c, o, &o->groups, self,
				(struct otf2_def){ (uint32_t)a, (uint32_t)b, (uint32_t)d });
	}
	if (strcmp(name, "GlobalDef_GroupMember") == 0 && member_int(p, "group", &self) &&
	    member_int(p, "rank", &a) && member_int(p, "location", &b)) {
		const struct otf2_def *g = otf2_get(o, &o->groups, self);
		if (g && g->extra == OTF2_GROUP_COMM_LOCATIONS && g->extra2 == OTF2_PARADIGM_MPI &&
		    map_get(&o->rank_of, (uint64_t)b, 0) == TFT_NONE &&
		    map_put(&o->rank_of, (uint64_t)b, 0, (uint32_t)a))
			return oom(c);
	}
	return 0;
}

/* The thread track of OTF2 location loc (in its location group's process). */
static uint32_t otf2_exec(struct ctf *c, uint32_t trace, int64_t loc)
{
	struct otf2 *o = c->traces[trace].otf2;
	const struct otf2_def *l = otf2_get(o, &o->locations, loc);
	int64_t group = l ? l->extra : loc;
	const struct otf2_def *g = otf2_get(o, &o->groups_loc, group);
	uint32_t rank = map_get(&o->rank_of, (uint64_t)loc, 0);
	uint32_t pname = g ? otf2_str(o, g->name) : TFT_NONE;
	uint32_t tname = l ? otf2_str(o, l->name) : TFT_NONE;
	uint32_t proc;
	char buf[48];

	if (pname == TFT_NONE) {
		snprintf(buf, sizeof(buf), "location group %" PRId64, group);
		pname = intern_cstr(c, buf);
	}
	proc = add_proc(c, trace, PK_OTF2, (uint64_t)group, group, pname,
			rank == TFT_NONE ? -1 : (int32_t)rank);
	if (proc == TFT_NONE)
		return TFT_NONE;
	if (tname == TFT_NONE) {
		snprintf(buf, sizeof(buf), "location %" PRId64, loc);
		tname = intern_cstr(c, buf);
	}
	return add_exec(c, proc, E_THREAD, (uint64_t)loc, TFT_TRACK_THREAD, tname, loc, 0);
}

static int otf2_event(struct ctf *c, uint32_t trace, const char *name, const bt_field *p,
		      int64_t ts)
{
	struct otf2 *o = c->traces[trace].otf2;
	static const char *const skip_loc[] = { "locationID", NULL };
	int64_t loc, v;
	uint32_t exec, key;

	if (strncmp(name, "GlobalDef", 9) == 0)
		return otf2_definition(c, o, name, p);
	if (!member_int(p, "locationID", &loc))
		loc = -1;
	if ((exec = otf2_exec(c, trace, loc)) == TFT_NONE)
		return c->rc;
	if (strcmp(name, "Event_Enter") == 0 || strcmp(name, "Event_Leave") == 0) {
		const struct otf2_def *r;
		int64_t region = -1;
		uint32_t rname, cat = c->s_empty;
		char buf[32];

		member_int(p, "region", &region);
		key = intern_cstr(c, "Event_Enter");
		if (strcmp(name, "Event_Leave") == 0) {
			int64_t i = find_open(&c->execs[exec], key, (uint64_t)region + 1);
			c->nargs = 0;
			if (i >= 0)
				return close_slice(c, exec, (uint32_t)i, ts, 0);
			c->unmatched_ends++;
			add_struct_args(c, p, skip_loc);
			return push(c, exec, TFT_EV_INSTANT, ts, 0,
				    intern_cstr(c, name), c->s_empty, 0, c->args, c->nargs);
		}
		r = otf2_get(o, &o->regions, region);
		rname = r ? otf2_str(o, r->name) : TFT_NONE;
		if (rname == TFT_NONE) {
			snprintf(buf, sizeof(buf), "region %" PRId64, region);
			rname = intern_cstr(c, buf);
		}
		if (r) {
			const struct otf2_def *pd = otf2_get(o, &o->paradigms, r->extra);
			uint32_t pn = pd ? otf2_str(o, pd->name) : TFT_NONE;
			if (pn != TFT_NONE)
				cat = pn;
		}
		c->nargs = 0;
		return open_slice(c, exec, ts, key, (uint64_t)region + 1, rname, cat);
	}
	if (strcmp(name, "Event_ProgramBegin") == 0 || strcmp(name, "Event_ProgramEnd") == 0) {
		key = intern_cstr(c, "Event_Program");
		c->nargs = 0;
		if (strcmp(name, "Event_ProgramEnd") == 0) {
			int64_t i = find_open(&c->execs[exec], key, 0);
			if (member_int(p, "exitStatus", &v) && v != INT64_MIN)
				add_int_arg(c, "exit_status", v);
			if (i >= 0)
				return close_slice(c, exec, (uint32_t)i, ts, 0);
			c->unmatched_ends++;
			return push(c, exec, TFT_EV_INSTANT, ts, 0,
				    intern_cstr(c, name), c->s_empty, 0, c->args, c->nargs);
		}
		uint32_t prog = member_int(p, "programName", &v) ? otf2_str(o, v) : TFT_NONE;
		uint32_t pname = c->s_empty;
		if (prog != TFT_NONE) {
			const char *full = tft_writer_str(c->w, prog, NULL);
			pname = intern_cstr(c, base_name(full));
			add_str_arg(c, "program", prog);
		}
		return open_slice(c, exec, ts, key, 0, pname, intern_cstr(c, "program"));
	}
	if (strcmp(name, "Event_MpiCollectiveBegin") == 0 ||
	    strcmp(name, "Event_MpiCollectiveEnd") == 0) {
		uint32_t comm = add_exec(c, c->execs[exec].proc, E_COMM, (uint64_t)loc,
					 TFT_TRACK_COMM, intern_cstr(c, "MPI collectives"), loc, 1);
		if (comm == TFT_NONE)
			return c->rc;
		key = intern_cstr(c, "Event_MpiCollective");
		c->nargs = 0;
		if (strcmp(name, "Event_MpiCollectiveBegin") == 0)
			return open_slice(c, comm, ts, key, 0, c->s_empty, intern_cstr(c, "mpi_collective"));
		int64_t i = find_open(&c->execs[comm], key, 0);
		if (member_int(p, "communicator", &v)) {
			const struct otf2_def *cm = otf2_get(o, &o->comms, v);
			uint32_t cn = cm ? otf2_str(o, cm->name) : TFT_NONE;
			if (cn != TFT_NONE && cn != c->s_empty)
				add_str_arg(c, "communicator", cn);
			else
				add_int_arg(c, "communicator", v);
		}
		if (member_int(p, "root", &v) && (uint64_t)v != OTF2_UNDEF32)
			add_int_arg(c, "root", v);
		if (member_int(p, "sizeSent", &v))
			add_int_arg(c, "bytes_sent", v);
		if (member_int(p, "sizeReceived", &v))
			add_int_arg(c, "bytes_received", v);
		if (i < 0) {
			c->unmatched_ends++;
			return push(c, comm, TFT_EV_INSTANT, ts, 0,
				    intern_cstr(c, name), c->s_empty, 0, c->args, c->nargs);
		}
		/* the slice is named by the operation, which its end tells */
		if (member_int(p, "collectiveOp", &v) && v >= 0 &&
		    (size_t)v < sizeof(otf2_collectives) / sizeof(otf2_collectives[0]))
			c->execs[comm].st[i].name = intern_cstr(c, otf2_collectives[v]);
		else
			c->execs[comm].st[i].name = intern_cstr(c, "collective");
		return close_slice(c, comm, (uint32_t)i, ts, 0);
	}
	/* anything else that happened at a location: an instant with its fields */
	static const char *const skip[] = { "locationID", NULL };
	c->nargs = 0;
	add_struct_args(c, p, skip);
	return push(c, exec, TFT_EV_INSTANT, ts, 0, intern_cstr(c, name), c->s_empty,
		    0, c->args, c->nargs);
}

/* ---- LTTng (and any CTF) events ------------------------------------------------------- */

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
			proc = add_proc(c, t, PK_PID, (uint64_t)pid, pid, pname, -1);
		else if (procname)
			proc = add_proc(c, t, PK_NAME, pname, -1, pname, -1);
		else
			proc = add_proc(c, t, PK_TRACE, 0, -1, c->traces[t].name, -1);
		if (proc == TFT_NONE)
			return TFT_NONE;
		/* a process is named by its main thread once that shows up */
		if (has_pid && tid == pid && procname && !c->procs[proc].named_by_main) {
			struct tft_process *wp = tft_writer_process(c->w, c->procs[proc].id);
			if (wp)
				wp->name = pname;
			c->procs[proc].named_by_main = true;
		}
		return add_exec(c, proc, E_THREAD, (uint64_t)tid, TFT_TRACK_THREAD, pname, tid, 0);
	}
	proc = add_proc(c, t, PK_TRACE, 0, c->traces[t].kind == TR_KERNEL ? 0 : -1,
			c->traces[t].kind == TR_KERNEL ? intern_cstr(c, "kernel") : c->traces[t].name,
			-1);
	if (proc == TFT_NONE)
		return TFT_NONE;
	if (pk && member_int(bt_packet_borrow_context_field_const(pk), "cpu_id", &cpu)) {
		snprintf(buf, sizeof(buf), "CPU %" PRId64, cpu);
		return add_exec(c, proc, E_CPU, (uint64_t)cpu, TFT_TRACK_THREAD, intern_cstr(c, buf), cpu,
				0);
	}
	const bt_stream *s = bt_event_borrow_stream_const(ev);
	uint64_t sid = bt_stream_get_id(s);
	const char *sname = bt_stream_get_name(s);
	if (!sname) {
		snprintf(buf, sizeof(buf), "stream %" PRIu64, sid);
		sname = buf;
	}
	exec = add_exec(c, proc, E_STREAM, sid, TFT_TRACK_THREAD, intern_cstr(c, base_name(sname)),
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
		return push(c, exec, TFT_EV_SLICE, host_ts, span(dev_ts, dev_end), name, cat, 0, args,
			    nargs);
	}
	if (tft_grow((void **)&c->cl, &c->ccl, c->ncl + 1, sizeof(*c->cl)))
		return oom(c);
	h = &c->cl[c->ncl];
	*h = (struct cl_pending){ .exec = exec, .dev_ts = dev_ts, .dev_dur = span(dev_ts, dev_end),
				  .name = name, .cat = cat, .nargs = nargs };
	h->args = copy_args(c, args, nargs);
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
		add_str_arg(c, "op", intern_cstr(c, op));
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
		exec = add_exec(c, proc, E_QUEUE, mix64((uint64_t)(uintptr_t)r->track, 0),
				TFT_TRACK_GPU_STREAM, intern_cstr(c, r->track), 0, 100);
	} else {
		member_int(p, "agent_handle", &agent);
		member_int(p, "queue_id", &queue);
		snprintf(buf, sizeof(buf), "GPU agent 0x%" PRIx64 " queue %" PRId64, (uint64_t)agent,
			 queue);
		exec = add_exec(c, proc, E_QUEUE, mix64((uint64_t)agent, (uint64_t)queue),
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
		add_struct_args(c, p, skip);
		kernel_op_arg(c, p);
	}
	if (!end) {
		int rc = open_slice(c, exec, t, key, name, name, intern_cstr(c, r->cat));
		if (!rc && r->time == T_OPENCL && aligned)
			c->execs[exec].st[c->execs[exec].n - 1].flags |= OF_CL_DEVICE;
		return rc;
	}
	int64_t i = find_open(&c->execs[exec], key, name);
	if (i < 0) {
		c->unmatched_ends++;
		return push(c, exec, TFT_EV_INSTANT, t, 0, name, intern_cstr(c, r->cat), 0,
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
	return close_slice(c, exec, (uint32_t)i, t, 0);
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
	exec = add_exec(c, proc, E_QUEUE, mix64((uint64_t)queue, 1), TFT_TRACK_GPU_STREAM,
			intern_cstr(c, buf), queue, 100);
	if (exec == TFT_NONE)
		return c->rc;
	c->nargs = 0;
	if (member_int(p, "command_field", &cmd) || member_int(p, "command", &cmd))
		add_int_arg(c, "command", cmd);
	if (queued && queued <= start)
		add_int_arg(c, "queued_to_start_ns", span(queued, start));
	if (submit && submit <= start)
		add_int_arg(c, "submit_to_start_ns", span(submit, start));
	kernel_op_arg(c, p);
	return cl_hold(c, exec, start, end, ts, intern_cstr(c, nm && *nm ? nm : "command"),
		       intern_cstr(c, cl_command_cat(cmd)), c->args, c->nargs);
}

static int lttng_event(struct ctf *c, uint32_t t, const bt_message *msg, const bt_event *ev,
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
	add_struct_args(c, p, NULL);
	add_struct_args(c, bt_event_borrow_specific_context_field_const(ev), NULL);
	add_struct_args(c, bt_event_borrow_common_context_field_const(ev), ctx_skip);
	if (c->rc)
		return c->rc;
	e = &c->execs[exec];
	kind = classify(name, base, sizeof(base));
	if (kind == K_INSTANT)
		return push(c, exec, TFT_EV_INSTANT, ts, 0, intern_cstr(c, name),
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
		exec = add_exec(c, e->proc, E_ASYNC, 0, TFT_TRACK_ASYNC,
				intern_cstr(c, "TensorFlow async ops"), 0, 50);
		if (exec == TFT_NONE)
			return c->rc;
		e = &c->execs[exec];
	}
	if (kind == K_BEGIN) {
		int rc = open_slice(c, exec, ts, key, match, ename, cat);
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
	int64_t i = find_open(e, key, match);
	if (i < 0) { /* (an instant where it happened) */
		c->unmatched_ends++;
		return push(c, thread, TFT_EV_INSTANT, ts, 0, intern_cstr(c, name),
			    provider_of(c, name, c->s_empty), 0, c->args, c->nargs);
	}
	/* hsa_init returned: the base of interceptionTracer's kernel times, unless
	 * runtime_initialized said it */
	if ((e->st[i].flags & OF_HSA_INIT) && c->procs[e->proc].hsa_init_ns == INT64_MIN)
		c->procs[e->proc].hsa_init_ns = ts;
	return close_slice(c, exec, (uint32_t)i, ts, 0);
}

/* ---- messages ------------------------------------------------------------------------------ */

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
		otf2_init(t->otf2);
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
		return otf2_event(c, t, name, bt_event_borrow_payload_field_const(ev), ts);
	return lttng_event(c, t, msg, ev, name, ts);
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

/* ---- the end of the input ------------------------------------------------------------------ */

static int finish(struct ctf *c)
{
	int rc;

	/* entries never exited: unclosed slices to the trace's end */
	for (uint32_t x = 0; x < c->nexecs && !c->rc; x++) {
		while (c->execs[x].n && !c->rc) {
			c->nargs = 0;
			close_slice(c, x, c->execs[x].n - 1, c->t_max, TFT_EVF_UNCLOSED);
			c->unclosed++;
		}
	}
	/* OpenCL device activity, moved onto the trace's clock */
	for (uint32_t i = 0; i < c->ncl && !c->rc; i++) {
		struct cl_pending *h = &c->cl[i];
		int64_t t;
		if (__builtin_add_overflow(h->dev_ts, c->procs[c->execs[h->exec].proc].cl_offset, &t)) {
			t = h->dev_ts; /* (a device time that cannot be moved: left as it is) */
			c->unaligned++;
		}
		push(c, h->exec, TFT_EV_SLICE, t, h->dev_dur, h->name, h->cat, 0, h->args, h->nargs);
	}
	if (c->rc)
		return c->rc;
	if ((rc = tft_sorter_finish(c->sorter, 0, c->err)))
		return rc;
	for (uint32_t i = 0; i < c->nsteps; i++)
		if ((rc = tft_writer_add_step(c->w, &c->steps[i])))
			return rc;
	if ((c->unclosed && (rc = tft_writer_add_count(c->w, "unclosed_slices", (int64_t)c->unclosed))) ||
	    (c->unmatched_ends &&
	     (rc = tft_writer_add_count(c->w, "unmatched_ends", (int64_t)c->unmatched_ends))) ||
	    (c->dropped && (rc = tft_writer_add_count(c->w, "dropped", (int64_t)c->dropped))) ||
	    (c->dropped_packets &&
	     (rc = tft_writer_add_count(c->w, "dropped_packets", (int64_t)c->dropped_packets))) ||
	    (c->unaligned &&
	     (rc = tft_writer_add_count(c->w, "device_times_unaligned", (int64_t)c->unaligned))))
		return rc;
	bool otf2 = false, lttng = false;
	for (uint32_t i = 0; i < c->ntraces; i++) {
		otf2 |= c->traces[i].kind == TR_OTF2;
		lttng |= c->traces[i].kind == TR_UST || c->traces[i].kind == TR_KERNEL;
	}
	if ((rc = tft_writer_join_meta(c->w, "format", "ctf", "+")))
		return rc;
	if (lttng && (rc = tft_writer_join_meta(c->w, "producer", "LTTng", " + ")))
		return rc;
	if (otf2 && (rc = tft_writer_join_meta(c->w, "producer", "OTF2", " + ")))
		return rc;
	return 0;
}

/* ---- finding traces ---------------------------------------------------------------------- */

static bool is_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static bool is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool has_metadata(const char *dir)
{
	char p[4096];

	return snprintf(p, sizeof(p), "%s/metadata", dir) < (int)sizeof(p) && is_file(p);
}

static bool has_xplane(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	bool found = false;

	if (!d)
		return false;
	while (!found && (de = readdir(d))) {
		size_t n = strlen(de->d_name);
		found = n > 10 && strcmp(de->d_name + n - 10, ".xplane.pb") == 0;
	}
	closedir(d);
	return found;
}

/* The traces an import reads: as the user named them, and their real paths (libbabeltrace2's). */
struct found {
	char **dirs, **real;
	uint32_t n, cap, rcap;
	uint32_t visited;  /* directories looked into */
	bool first_only;   /* stop at the first trace (a probe) */
	bool overflow;     /* more than MAX_TRACES traces or MAX_VISIT directories */
};

/* The CTF traces at or below dir (a directory holding `metadata` is one; not searched further). */
static int find_traces(const char *dir, int depth, struct found *f)
{
	DIR *d;
	struct dirent *de;
	int rc = 0;

	if (has_metadata(dir)) {
		if (f->n >= MAX_TRACES) {
			f->overflow = true;
			return 0;
		}
		if (tft_grow((void **)&f->dirs, &f->cap, f->n + 1, sizeof(*f->dirs)) ||
		    tft_grow((void **)&f->real, &f->rcap, f->n + 1, sizeof(*f->real)))
			return TFT_ENOMEM;
		f->dirs[f->n] = strdup(dir);
		f->real[f->n] = realpath(dir, NULL);
		if (!f->dirs[f->n] || !f->real[f->n]) {
			free(f->dirs[f->n]);
			free(f->real[f->n]);
			return TFT_ENOMEM;
		}
		f->n++;
		return 0;
	}
	if (depth >= FIND_DEPTH || (f->first_only && f->n) || !(d = opendir(dir)))
		return 0;
	if (++f->visited > MAX_VISIT) {
		f->overflow = true;
		closedir(d);
		return 0;
	}
	while (!rc && !f->overflow && !(f->first_only && f->n) && (de = readdir(d))) {
		char sub[4096];
		struct stat st;
		if (de->d_name[0] == '.')
			continue;
		if (snprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name) >= (int)sizeof(sub) ||
		    lstat(sub, &st) != 0 || !S_ISDIR(st.st_mode)) /* (no symlinks: no loops) */
			continue;
		rc = find_traces(sub, depth + 1, f);
	}
	closedir(d);
	return rc;
}

static void found_free(struct found *f)
{
	for (uint32_t i = 0; i < f->n; i++) {
		free(f->dirs[i]);
		free(f->real[i]);
	}
	free(f->dirs);
	free(f->real);
	memset(f, 0, sizeof(*f));
}

/* Sort the traces by the user's names (an import's order does not depend on readdir's). */
static void found_sort(struct found *f)
{
	for (uint32_t i = 1; i < f->n; i++)
		for (uint32_t k = i; k > 0 && strcmp(f->dirs[k - 1], f->dirs[k]) > 0; k--) {
			char *t = f->dirs[k];
			f->dirs[k] = f->dirs[k - 1];
			f->dirs[k - 1] = t;
			t = f->real[k];
			f->real[k] = f->real[k - 1];
			f->real[k - 1] = t;
		}
}

/* Whether the file starts with the CTF packet magic (either byte order). */
static bool ctf_stream_file(const char *path)
{
	unsigned char b[4];
	FILE *fp = fopen(path, "rb");
	bool ok;

	if (!fp)
		return false;
	ok = fread(b, 1, 4, fp) == 4 &&
	     ((b[0] == 0xC1 && b[1] == 0x1F && b[2] == 0xFC && b[3] == 0xC1) ||
	      (b[0] == 0xC1 && b[1] == 0xFC && b[2] == 0x1F && b[3] == 0xC1));
	fclose(fp);
	return ok;
}

/* The directory of a file path (into buf), false if it does not fit. */
static bool dir_of(const char *path, char *buf, size_t size)
{
	const char *s = strrchr(path, '/');
	size_t n = s ? (size_t)(s - path) : 1;

	if (n >= size)
		return false;
	if (!s)
		memcpy(buf, ".", 2);
	else if (n == 0)
		memcpy(buf, "/", 2);
	else {
		memcpy(buf, path, n);
		buf[n] = '\0';
	}
	return true;
}

/*
 * The trace directory of a file inside one (into dir): its `metadata`, a
 * stream file, or an LTTng index file (TRACE/index/STREAM.idx). false if
 * the file is none of these.
 */
static bool trace_of_file(const char *path, char *dir, size_t size)
{
	size_t n = strlen(path);

	if (!is_file(path) || !dir_of(path, dir, size))
		return false;
	if (has_metadata(dir))
		return strcmp(base_name(path), "metadata") == 0 || ctf_stream_file(path);
	if (n > 4 && strcmp(path + n - 4, ".idx") == 0 && strcmp(base_name(dir), "index") == 0) {
		char up[4096];
		if (dir_of(dir, up, sizeof(up)) && has_metadata(up) && strlen(up) < size) {
			strcpy(dir, up);
			return true;
		}
	}
	return false;
}

int tft_ctf_probe(const char *path)
{
	char dir[4096];
	struct found f = { .first_only = true };
	int yes;

	if (is_dir(path)) {
		if (has_xplane(path))
			return 0;
		if (has_metadata(path))
			return 1;
		yes = find_traces(path, 0, &f) == 0 && f.n > 0;
		found_free(&f);
		return yes;
	}
	return trace_of_file(path, dir, sizeof(dir));
}

/* ---- metadata framing, before libbabeltrace2 reads it ------------------------------------ */

#define META_MAX ((size_t)1 << 30)

static int check_metadata(struct ctf *c, const char *dir)
{
	char path[4200];
	struct stat st;
	uint8_t *buf = NULL;
	FILE *fp;
	int rc = 0;

	snprintf(path, sizeof(path), "%s/metadata", dir);
	if (!(fp = fopen(path, "rb")) || fstat(fileno(fp), &st) != 0) {
		rc = tft_error_set(c->err, TFT_EIO, -1, "cannot open: %s", strerror(errno));
		goto out;
	}
	if ((size_t)st.st_size > META_MAX) {
		rc = tft_error_set(c->err, TFT_EFORMAT, -1,
				   "expected CTF metadata of at most %zu bytes, found %lld", META_MAX,
				   (long long)st.st_size);
		goto out;
	}
	if (st.st_size && !(buf = malloc((size_t)st.st_size))) {
		rc = oom(c);
		goto out;
	}
	if (st.st_size && fread(buf, 1, (size_t)st.st_size, fp) != (size_t)st.st_size) {
		rc = tft_error_set(c->err, TFT_EIO, -1, "cannot read: %s", strerror(errno));
		goto out;
	}
	rc = tft_ctf_meta_check(buf, (size_t)st.st_size, c->err);
out:
	if (rc)
		tft_error_set_file(c->err, path);
	if (fp)
		fclose(fp);
	free(buf);
	return rc;
}

/* ---- libbabeltrace2's errors ---------------------------------------------------------------- */

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

/* ---- the graph -------------------------------------------------------------------------------- */

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
static int run_graph(struct ctf *c, const struct found *f, uint32_t i)
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

/* ---- a trial read by another process -------------------------------------------------------- */

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
static int trial_read(struct ctf *c, const struct found *f, uint32_t i)
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

/* ---- entry point ------------------------------------------------------------------------------- */

int tft_ctf_ingest(struct tft_writer *w, const char *path, const struct tft_ingest_opts *opts,
		   struct tft_error *err)
{
	struct ctf c = {
		.w = w, .opts = opts, .err = err, .t_min = INT64_MAX, .t_max = INT64_MIN,
	};
	struct found f = {0};
	char dir[4096];
	int rc;

	if (is_dir(path)) {
		if ((rc = find_traces(path, 0, &f)))
			return tft_error_set(err, rc, -1, "out of memory");
	} else if (trace_of_file(path, dir, sizeof(dir))) {
		if ((rc = find_traces(dir, FIND_DEPTH, &f)))
			return tft_error_set(err, rc, -1, "out of memory");
	}
	if (f.n == 0) {
		found_free(&f);
		rc = tft_error_set(err, TFT_ENOTFOUND, -1,
				   "no CTF trace here: expected a directory holding a `metadata` file");
		tft_error_set_file(err, path);
		return rc;
	}
	if (f.overflow) {
		rc = tft_error_set(err, TFT_EFORMAT, -1,
				   "more than %d CTF traces or %d directories below this directory: "
				   "import a part at a time", MAX_TRACES, MAX_VISIT);
		tft_error_set_file(err, path);
		found_free(&f);
		return rc;
	}
	found_sort(&f);
	tft_hmap_init(&c.proc_map, 2);
	tft_hmap_init(&c.exec_map, 2);
	tft_json_write_init_mem(&c.jw);
	clock_gettime(CLOCK_MONOTONIC, &c.last_progress);
	c.s_empty = intern_cstr(&c, "");
	if (!c.rc && !(c.sorter = tft_sorter_create(w, opts ? opts->mem_budget : 0)))
		oom(&c);
	rc = c.rc;
	for (uint32_t i = 0; i < f.n && !rc; i++)
		rc = check_metadata(&c, f.dirs[i]);
	for (uint32_t i = 0; i < f.n && !rc; i++)
		if (!(rc = trial_read(&c, &f, i)))
			rc = run_graph(&c, &f, i);
	if (!rc)
		rc = finish(&c);
	if (rc && !err->file[0] && f.n)
		tft_error_set_file(err, f.dirs[0]);

	tft_sorter_destroy(c.sorter);
	tft_json_write_fini(&c.jw);
	for (uint32_t i = 0; i < c.nexecs; i++) {
		for (uint32_t k = 0; k < c.execs[i].n; k++)
			free(c.execs[i].st[k].args);
		free(c.execs[i].st);
	}
	for (uint32_t i = 0; i < c.ncl; i++)
		free(c.cl[i].args);
	for (uint32_t i = 0; i < c.ntraces; i++)
		otf2_free(c.traces[i].otf2);
	free(c.traces);
	free(c.procs);
	free(c.execs);
	free(c.cl);
	free(c.steps);
	for (uint32_t i = 0; i < c.nstreams; i++)
		free(c.streams[i].name);
	free(c.streams);
	tft_hmap_fini(&c.proc_map);
	tft_hmap_fini(&c.exec_map);
	found_free(&f);
	return rc;
}
