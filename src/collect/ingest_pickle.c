/* SPDX-License-Identifier: MIT */
/*
 * Pickled RunMetadata and tftracer tracing sessions -> session: the pickle
 * is read by the safe reader (codec/pickle.h), each RunMetadata's
 * serialized bytes go to the RunMetadata importer, the run statistics of a
 * TracingSource become untraced steps and metadata.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/json_write.h"
#include "codec/pb_wire.h"
#include "codec/pickle.h"
#include "collect/ingest_pickle.h"
#include "collect/ingest_runmeta.h"
#include "collect/tf_names.h"
#include "core/grow.h"

#define US_PER_DAY (86400LL * 1000000LL)
#define QUARTER_HOUR_US (900LL * 1000000LL)

struct pk_ing {
	struct tft_writer *w;                /* borrowed */
	const char *name;                    /* borrowed: the file path */
	const struct tft_ingest_opts *opts;  /* borrowed, may be NULL */
	struct tft_error *err;               /* borrowed */
	const uint8_t *data;                 /* borrowed: the whole pickle */
	size_t len;
	int64_t next_step;                   /* index for the next step */
	int64_t local_offset_us;             /* naive local time minus UTC */
	bool local_offset_known;
	uint64_t traced, untraced, evicted;
	/* progress relay for the RunMetadata importer */
	struct tft_ingest_opts sub_opts;
	uint64_t sub_base;
	/* the session's format and producer before this file (owned): the RunMetadata
	 * importer notes "runmeta", the pickle then says what it was */
	char *fmt_before, *prod_before;
	/*
	 * A tracing session's steps, gathered (defer) and then stored in time
	 * order: its runs' traces interleave in time (train and eval runs, say),
	 * and a worker's next trace continues its tracks only when it comes
	 * after them (collect/runmeta/devices.c).
	 */
	bool defer;
	struct pk_job *jobs; /* owned */
	size_t njobs, cjobs;
};

/* A deferred step: a traced RunMetadata / StepStats with nodes (obj), or an untraced step. */
struct pk_job {
	const struct tft_pickle_value *obj; /* borrowed; NULL: untraced */
	char label[300];
	int64_t start_ns, dur_ns; /* untraced: its times */
	int64_t sort_ns;          /* when it starts */
	size_t seq;
};

/* ---- small helpers ----------------------------------------------------------- */

static int set_meta(struct pk_ing *g, const char *key, const char *value)
{
	int r = tft_writer_set_meta(g->w, key, value);

	if (r)
		return tft_error_set(g->err, r, -1, "could not store the session metadata");
	return 0;
}

/* The session's format (and producer, if not NULL) gain this file's, in place of what
 * the RunMetadata importer noted for the protos inside. */
static int set_format(struct pk_ing *g, const char *fmt, const char *producer)
{
	int r = tft_writer_set_meta(g->w, "format", g->fmt_before ? g->fmt_before : "");

	if (!r)
		r = tft_writer_join_meta(g->w, "format", fmt, "+");
	if (!r && producer) {
		r = tft_writer_set_meta(g->w, "producer", g->prod_before ? g->prod_before : "");
		if (!r)
			r = tft_writer_join_meta(g->w, "producer", producer, " + ");
	}
	if (r)
		return tft_error_set(g->err, r, -1, "could not store the session metadata");
	return 0;
}

static int set_meta_int(struct pk_ing *g, const char *key, int64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRId64, v);
	return set_meta(g, key, buf);
}

static bool int_of(const struct tft_pickle_value *v, int64_t *out)
{
	if (!v || (v->type != TFT_PICKLE_INT && v->type != TFT_PICKLE_BOOL))
		return false;
	*out = v->u.i;
	return true;
}

static const char *base_name(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return s ? s + 1 : (path ? path : "");
}

static const char *what_is(const struct tft_pickle_value *v)
{
	if (!v)
		return "nothing";
	if (v->type == TFT_PICKLE_OBJECT || v->type == TFT_PICKLE_CLASS)
		return tft_pickle_class_name(v->cls);
	return tft_pickle_type_name(v->type);
}

/* ---- datetime / timedelta ------------------------------------------------------------ */

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	int64_t era;
	unsigned yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = (unsigned)(y - era * 400);
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

/* The first argument of a datetime/date object: its packed state bytes. */
static const struct tft_pickle_value *date_state(const struct tft_pickle_value *v, int cls)
{
	const struct tft_pickle_value *a;

	if (!v || v->type != TFT_PICKLE_OBJECT || v->cls != cls || !(a = v->u.obj.args) ||
	    a->type != TFT_PICKLE_TUPLE || a->n < 1)
		return NULL;
	a = a->u.items[0];
	return a->type == TFT_PICKLE_BYTES ? a : NULL;
}

/*
 * datetime.datetime -> microseconds since the epoch of its naive (wall
 * clock) time read as UTC. State: year (2 bytes, big-endian), month, day,
 * hour, minute, second, microsecond (3 bytes, big-endian).
 */
static bool datetime_us(const struct tft_pickle_value *v, int64_t *us)
{
	const struct tft_pickle_value *st = date_state(v, TFT_PICKLE_CLS_DATETIME);
	const uint8_t *b;
	unsigned year, mon, day, hh, mm, ss, usec;

	if (!st || st->u.s.len != 10)
		return false;
	b = st->u.s.p;
	year = (unsigned)b[0] << 8 | b[1];
	mon = b[2] & 0x7f; /* bit 7: the "fold" flag */
	day = b[3];
	hh = b[4];
	mm = b[5];
	ss = b[6];
	usec = (unsigned)b[7] << 16 | (unsigned)b[8] << 8 | b[9];
	if (year < 1 || year > 9999 || mon < 1 || mon > 12 || day < 1 || day > 31 || hh > 23 ||
	    mm > 59 || ss > 59 || usec > 999999)
		return false;
	*us = days_from_civil(year, mon, day) * US_PER_DAY +
	      ((int64_t)hh * 3600 + mm * 60 + ss) * 1000000LL + usec;
	return true;
}

/* datetime.timedelta(days, seconds, microseconds) -> microseconds (saturating). */
static bool timedelta_us(const struct tft_pickle_value *v, int64_t *us)
{
	const struct tft_pickle_value *a;
	int64_t d, s, u, t;

	if (!v || v->type != TFT_PICKLE_OBJECT || v->cls != TFT_PICKLE_CLS_TIMEDELTA ||
	    !(a = v->u.obj.args) || a->type != TFT_PICKLE_TUPLE || a->n != 3 ||
	    !int_of(a->u.items[0], &d) || !int_of(a->u.items[1], &s) || !int_of(a->u.items[2], &u))
		return false;
	if (__builtin_mul_overflow(d, US_PER_DAY, &t) || __builtin_add_overflow(t, s * 1000000LL, &t) ||
	    __builtin_add_overflow(t, u, &t))
		t = d < 0 ? INT64_MIN : INT64_MAX;
	*us = t;
	return true;
}

static void fmt_datetime(int64_t us, char *buf, size_t size)
{
	int64_t days = us >= 0 ? us / US_PER_DAY : -((-us + US_PER_DAY - 1) / US_PER_DAY);
	int64_t rem = us - days * US_PER_DAY;
	/* civil_from_days */
	int64_t z = days + 719468, era = (z >= 0 ? z : z - 146096) / 146097;
	unsigned doe = (unsigned)(z - era * 146097);
	unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int64_t y = (int64_t)yoe + era * 400;
	unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	unsigned mp = (5 * doy + 2) / 153;
	unsigned d = doy - (153 * mp + 2) / 5 + 1;
	unsigned m = mp + (mp < 10 ? 3 : -9);

	y += m <= 2;
	snprintf(buf, size, "%04" PRId64 "-%02u-%02u %02u:%02u:%02u.%06u", y, m, d,
		 (unsigned)(rem / 3600000000LL), (unsigned)(rem / 60000000LL % 60),
		 (unsigned)(rem / 1000000 % 60), (unsigned)(rem % 1000000));
}

static int64_t us_to_ns(int64_t us)
{
	int64_t ns;

	if (__builtin_mul_overflow(us, (int64_t)1000, &ns))
		ns = us < 0 ? INT64_MIN : INT64_MAX;
	return ns;
}

/* Naive local datetime (minus `back_us`) -> ns since the epoch, with the estimated UTC offset. */
static int64_t local_us_to_ns(const struct pk_ing *g, int64_t us, int64_t back_us)
{
	int64_t t;

	if (__builtin_sub_overflow(us, back_us, &t) || __builtin_sub_overflow(t, g->local_offset_us, &t))
		return 0;
	return us_to_ns(t);
}

/* ---- RunMetadata ------------------------------------------------------------------- */

struct rm_span {
	uint64_t nodes;
	int64_t min_us, max_end_us;
};

/* Time span of one NodeExecStats (micros, else nanos / 1000). */
static void node_span(struct tft_pb_dec *d, const uint8_t *p, size_t len, struct rm_span *sp)
{
	int64_t start_us = 0, end_rel_us = 0, start_ns = 0, end_rel_ns = 0, end;
	bool has_us = false, has_ns = false;
	struct tft_pb_iter it;
	struct tft_pb_raw f;

	tft_pb_wire_iter_init(&it, p, len);
	while (tft_pb_wire_iter_next(d, &it, &f) > 0) {
		if (f.wt != TFT_PB_WT_VARINT)
			continue;
		switch (f.num) {
		case 2: start_us = (int64_t)f.v; has_us = true; break;
		case 5: end_rel_us = (int64_t)f.v; break;
		case 13: start_ns = (int64_t)f.v; has_ns = true; break;
		case 16: end_rel_ns = (int64_t)f.v; break;
		default: break;
		}
	}
	if (!has_us && has_ns) {
		start_us = start_ns / 1000;
		end_rel_us = end_rel_ns / 1000;
	}
	if (__builtin_add_overflow(start_us, end_rel_us > 0 ? end_rel_us : 0, &end))
		end = INT64_MAX;
	if (!sp->nodes || start_us < sp->min_us)
		sp->min_us = start_us;
	if (!sp->nodes || end > sp->max_end_us)
		sp->max_end_us = end;
	sp->nodes++;
}

/*
 * A quick walk of RunMetadata.step_stats.dev_stats[].node_stats[] for the
 * node count and the time span. The importer does the real decoding and
 * reports malformed input; this walk just stops there.
 */
static void runmeta_span(const uint8_t *p, size_t len, struct rm_span *sp)
{
	static const uint32_t path[2] = { 1, 1 }; /* step_stats, dev_stats */
	struct tft_pb_dec d;
	struct tft_pb_iter it[3];
	struct tft_pb_raw f;
	int depth = 0;

	memset(sp, 0, sizeof(*sp));
	tft_pb_wire_init(&d, p, len, NULL);
	tft_pb_wire_iter_init(&it[0], p, len);
	for (;;) {
		int r = tft_pb_wire_iter_next(&d, &it[depth], &f);

		if (r < 0)
			return;
		if (r == 0) {
			if (depth == 0)
				return;
			depth--;
		} else if (f.wt != TFT_PB_WT_LEN) {
			continue;
		} else if (depth < 2 && f.num == path[depth]) {
			depth++;
			tft_pb_wire_iter_init(&it[depth], f.p, f.len);
		} else if (depth == 2 && f.num == 2) {
			node_span(&d, f.p, f.len, sp);
		}
	}
}

/* The serialized bytes of a pickled protobuf message (state {'serialized': b'...'}). */
static int proto_bytes(struct tft_error *err, const struct tft_pickle_value *obj,
		       const uint8_t **p, size_t *len)
{
	const struct tft_pickle_value *st = obj->u.obj.state, *ser;

	*p = NULL;
	*len = 0;
	if (!st || st->type == TFT_PICKLE_NONE)
		return 0; /* an empty message */
	ser = tft_pickle_attr(obj, "serialized");
	if (!ser || (ser->type != TFT_PICKLE_BYTES && ser->type != TFT_PICKLE_STR))
		return tft_error_set(err, TFT_EFORMAT, obj->offset,
				     "pickle: %s state has no 'serialized' bytes (found %s)",
				     tft_pickle_class_name(obj->cls), what_is(ser));
	*p = ser->u.s.p;
	*len = ser->u.s.len;
	return 0;
}

static void relay_progress(void *ctx, uint64_t in, uint64_t total, uint64_t events)
{
	struct pk_ing *g = ctx;

	(void)total;
	g->opts->progress(g->opts->progress_ctx, g->sub_base + in, g->len, events);
}

static int defer_job(struct pk_ing *g, const struct tft_pickle_value *obj, const char *label,
		     int64_t start_ns, int64_t dur_ns, int64_t sort_ns)
{
	struct pk_job *j;

	if (tft_grow_size((void **)&g->jobs, &g->cjobs, g->njobs + 1, sizeof(*g->jobs)))
		return tft_error_set(g->err, TFT_ENOMEM, -1, "out of memory");
	j = &g->jobs[g->njobs];
	j->obj = obj;
	snprintf(j->label, sizeof(j->label), "%s", label);
	j->start_ns = start_ns;
	j->dur_ns = dur_ns;
	j->sort_ns = sort_ns;
	j->seq = g->njobs++;
	return 0;
}

static int add_step(struct pk_ing *g, const char *name, int64_t start_ns, int64_t dur_ns,
		    bool traced)
{
	struct tft_step st;
	int r;

	if (g->defer && !traced)
		return defer_job(g, NULL, name, start_ns, dur_ns, start_ns);

	memset(&st, 0, sizeof(st));
	st.index = g->next_step++;
	st.name = tft_writer_intern_cstr(g->w, name);
	if (st.name == UINT32_MAX)
		return tft_error_set(g->err, TFT_ENOMEM, -1, "out of memory");
	st.process = TFT_NONE;
	st.start_ns = start_ns;
	st.dur_ns = dur_ns > 0 ? dur_ns : 0;
	st.traced = traced;
	r = tft_writer_add_step(g->w, &st);
	if (r)
		return tft_error_set(g->err, r, -1, "could not store the step");
	if (!traced)
		g->untraced++;
	return 0;
}

/* Store a pickled RunMetadata / StepStats that has nodes as a traced step named `label`. */
static int store_proto(struct pk_ing *g, const struct tft_pickle_value *obj, const char *label)
{
	const uint8_t *p;
	size_t len;
	struct tft_error ierr;
	int fmt = obj->cls == TFT_PICKLE_CLS_STEP_STATS ? TFT_PB_FMT_STEPSTATS : TFT_PB_FMT_RUNMETA;
	char input[1200];
	int r;

	if ((r = proto_bytes(g->err, obj, &p, &len)))
		return r;
	tft_error_clear(&ierr);
	g->sub_base = p >= g->data && p < g->data + g->len ? (uint64_t)(p - g->data) : 0;
	/* the input's name (its graphs are named after it): the pickle's, and the step's */
	snprintf(input, sizeof(input), "%.900s%s%.200s", g->name, g->name[0] ? ":" : "", label);
	r = tft_runmeta_ingest_step(g->w, input, p, len, fmt, g->next_step, label, &g->sub_opts,
				    &ierr);
	if (r) {
		int64_t off = obj->offset;

		/* Offsets inside the serialized bytes map back to the pickle when they lie in it. */
		if (ierr.offset >= 0 && p >= g->data && p < g->data + g->len)
			off = (int64_t)(p - g->data) + ierr.offset;
		return tft_error_set(g->err, r, off, "pickle: %s (%s bytes at pickle offset %lld): %s",
				     label, tft_pickle_class_name(obj->cls),
				     (long long)(p >= g->data && p < g->data + g->len ? p - g->data : -1),
				     ierr.msg);
	}
	g->next_step++; /* the importer added the step */
	g->traced++;
	return 0;
}

/*
 * Import one pickled RunMetadata / StepStats object as a traced step named
 * `label` (gathered, while g->defer, to be stored in time order). A message
 * without nodes becomes an untraced step at fallback_ns.
 */
static int import_proto(struct pk_ing *g, const struct tft_pickle_value *obj, const char *label,
			int64_t fallback_ns, int64_t fallback_dur_ns)
{
	const uint8_t *p;
	size_t len;
	struct rm_span sp;
	int r;

	if ((r = proto_bytes(g->err, obj, &p, &len)))
		return r;
	if (obj->cls == TFT_PICKLE_CLS_STEP_STATS)
		sp.nodes = 1, sp.min_us = 0; /* the importer decides */
	else
		runmeta_span(p, len, &sp);
	if (!sp.nodes) {
		char nm[300];

		snprintf(nm, sizeof(nm), "%s (no step_stats)", label);
		return add_step(g, nm, fallback_ns, fallback_dur_ns, false);
	}
	if (g->defer) {
		int64_t at = fallback_ns;

		if (obj->cls == TFT_PICKLE_CLS_STEP_STATS) {
			int64_t t = tft_runmeta_start(p, len, TFT_PB_FMT_STEPSTATS);

			if (t != INT64_MIN && t != INT64_MAX)
				at = t; /* (none or a bad one: the importer says so, in place) */
		} else if (__builtin_mul_overflow(sp.min_us, (int64_t)1000, &at)) {
			at = sp.min_us < 0 ? INT64_MIN : INT64_MAX;
		}
		return defer_job(g, obj, label, fallback_ns, fallback_dur_ns, at);
	}
	return store_proto(g, obj, label);
}

/* ---- tftracer TracingSource --------------------------------------------------------- */

struct run_traces {
	int64_t run_id;
	uint32_t pos; /* position in the dict: the last of equal keys wins */
	const struct tft_pickle_value *list; /* borrowed: [RunMetadata | None, ...] */
	bool seen;
};

static int cmp_run_traces(const void *a, const void *b)
{
	const struct run_traces *x = a, *y = b;

	if (x->run_id != y->run_id)
		return x->run_id < y->run_id ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static struct run_traces *find_run(struct run_traces *v, uint32_t n, int64_t run_id)
{
	uint32_t lo = 0, hi = n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (v[mid].run_id < run_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo >= n || v[lo].run_id != run_id)
		return NULL;
	while (lo + 1 < n && v[lo + 1].run_id == run_id)
		lo++;
	return &v[lo];
}

static const struct tft_pickle_value *list_at(const struct tft_pickle_value *l, int64_t i)
{
	if (!l || (l->type != TFT_PICKLE_LIST && l->type != TFT_PICKLE_TUPLE) || i < 0 || i >= l->n)
		return NULL;
	return l->u.items[i];
}

static bool is_proto(const struct tft_pickle_value *v)
{
	return v && v->type == TFT_PICKLE_OBJECT &&
	       (v->cls == TFT_PICKLE_CLS_RUN_METADATA || v->cls == TFT_PICKLE_CLS_STEP_STATS);
}

/*
 * Naive local time minus UTC, from the first trace whose date (taken right
 * after the traced run) and RunMetadata (epoch microseconds) are both
 * known, rounded to a quarter hour.
 */
static void estimate_local_offset(struct pk_ing *g, const struct tft_pickle_value *profiles,
				  struct run_traces *runs, uint32_t nruns)
{
	for (uint32_t i = 0; i < profiles->n; i++) {
		const struct tft_pickle_value *prof = profiles->u.items[2 * i + 1];
		const struct tft_pickle_value *traces = tft_pickle_dict_get(prof, "traces");
		struct run_traces *rt;
		int64_t run_id;

		if (!int_of(tft_pickle_dict_get(prof, "run_id"), &run_id) ||
		    !(rt = find_run(runs, nruns, run_id)))
			continue;
		for (int64_t t = 0; traces && t < (int64_t)traces->n && t < 64; t++) {
			const struct tft_pickle_value *e = list_at(traces, t), *rm;
			int64_t tid = t, date_us, off, q;
			struct rm_span sp;
			const uint8_t *p;
			size_t len;

			int_of(tft_pickle_dict_get(e, "trace_id"), &tid);
			rm = list_at(rt->list, tid);
			if (!is_proto(rm) || rm->cls != TFT_PICKLE_CLS_RUN_METADATA ||
			    !datetime_us(tft_pickle_dict_get(e, "date"), &date_us))
				continue;
			if (proto_bytes(NULL, rm, &p, &len))
				continue;
			runmeta_span(p, len, &sp);
			if (!sp.nodes || __builtin_sub_overflow(date_us, sp.max_end_us, &off))
				continue;
			q = (off >= 0 ? off + QUARTER_HOUR_US / 2 : off - QUARTER_HOUR_US / 2) /
			    QUARTER_HOUR_US * QUARTER_HOUR_US;
			if (q > 26 * 3600 * 1000000LL || q < -26 * 3600 * 1000000LL)
				continue;
			g->local_offset_us = q;
			g->local_offset_known = true;
			return;
		}
	}
}

/* A STR/BYTES value as a JSON member (absent: ""). */
static void json_kstr(struct tft_json_writer *w, const char *key, const struct tft_pickle_value *v)
{
	tft_json_write_key(w, key);
	if (v && (v->type == TFT_PICKLE_STR || v->type == TFT_PICKLE_BYTES))
		tft_json_write_str(w, (const char *)v->u.s.p, v->u.s.len);
	else
		tft_json_write_str(w, "", 0);
}

/*
 * One run's profile as the metadata value "tftracer.run.<run_id>": a JSON
 * object {key, fetches, feeds, options, runs, traces, runtime_avg_us,
 * first_run, last_run} (times as tftracer shows them: local wall clock).
 */
static int run_meta(struct pk_ing *g, int64_t run_id, const struct tft_pickle_value *prof,
		    int64_t ntraces)
{
	const struct tft_pickle_value *info = tft_pickle_dict_get(prof, "info");
	const struct tft_pickle_value *stats = tft_pickle_dict_get(prof, "stats");
	static const char *const info_keys[] = { "fetches", "feeds", "options" };
	static const char *const times[] = { "first_run", "last_run" };
	struct tft_json_writer w;
	char key[64], buf[64];
	const char *text;
	int64_t v;
	int r;

	tft_json_write_init_mem(&w);
	tft_json_write_begin_object(&w);
	json_kstr(&w, "key", tft_pickle_dict_get(prof, "key"));
	for (int k = 0; k < 3; k++)
		json_kstr(&w, info_keys[k], tft_pickle_dict_get(info, info_keys[k]));
	if (int_of(tft_pickle_dict_get(stats, "runs"), &v)) {
		tft_json_write_key(&w, "runs");
		tft_json_write_int(&w, v);
	}
	tft_json_write_key(&w, "traces");
	tft_json_write_int(&w, ntraces);
	if (timedelta_us(tft_pickle_dict_get(stats, "runtimes"), &v)) {
		tft_json_write_key(&w, "runtime_avg_us");
		tft_json_write_int(&w, v);
	}
	for (int k = 0; k < 2; k++) {
		if (!datetime_us(tft_pickle_dict_get(stats, times[k]), &v))
			continue;
		fmt_datetime(v, buf, sizeof(buf));
		tft_json_write_key(&w, times[k]);
		tft_json_write_cstr(&w, buf);
	}
	tft_json_write_end_object(&w);
	text = tft_json_write_borrow(&w, NULL);
	snprintf(key, sizeof(key), "tftracer.run.%" PRId64, run_id);
	r = w.status ? tft_error_set(g->err, TFT_ENOMEM, -1, "out of memory") : set_meta(g, key, text);
	tft_json_write_fini(&w);
	return r;
}

static int import_profile(struct pk_ing *g, const struct tft_pickle_value *prof, int64_t run_id,
			  struct run_traces *rt)
{
	const struct tft_pickle_value *stats = tft_pickle_dict_get(prof, "stats");
	const struct tft_pickle_value *traces = tft_pickle_dict_get(prof, "traces");
	const struct tft_pickle_value *list = rt ? rt->list : NULL;
	int64_t runtime_us = 0, first_us = 0, n = 0;
	bool has_first;
	int64_t ntr, nlist;
	char buf[64];
	int r = 0;

	if (rt)
		rt->seen = true;
	timedelta_us(tft_pickle_dict_get(stats, "runtimes"), &runtime_us);
	has_first = datetime_us(tft_pickle_dict_get(stats, "first_run"), &first_us);
	/* Traces: profile["traces"][i] = {trace_id, date} pairs with _traces[run_id][trace_id]. */
	ntr = traces && (traces->type == TFT_PICKLE_LIST || traces->type == TFT_PICKLE_TUPLE)
		      ? traces->n
		      : 0;
	nlist = list && (list->type == TFT_PICKLE_LIST || list->type == TFT_PICKLE_TUPLE) ? list->n : 0;
	for (int64_t i = 0; i < (ntr > nlist ? ntr : nlist); i++) {
		const struct tft_pickle_value *e = list_at(traces, i), *rm;
		int64_t tid = i, date_us = 0, start_ns;
		bool has_date = datetime_us(tft_pickle_dict_get(e, "date"), &date_us);
		char label[96];

		int_of(tft_pickle_dict_get(e, "trace_id"), &tid);
		rm = list_at(list, tid);
		snprintf(label, sizeof(label), "run %" PRId64 " trace %" PRId64, run_id, tid);
		/* The date is taken when the traced run returned. */
		start_ns = has_date ? local_us_to_ns(g, date_us, runtime_us)
				    : (has_first ? local_us_to_ns(g, first_us, 0) : 0);
		n++;
		if (is_proto(rm)) {
			r = import_proto(g, rm, label, start_ns, us_to_ns(runtime_us));
		} else {
			char nm[128];

			snprintf(nm, sizeof(nm), "%s (not kept)", label);
			g->evicted++;
			r = add_step(g, nm, start_ns, us_to_ns(runtime_us), false);
		}
		if (r)
			return r;
	}
	if (n == 0) {
		snprintf(buf, sizeof(buf), "run %" PRId64, run_id);
		r = add_step(g, buf, has_first ? local_us_to_ns(g, first_us, 0) : 0,
			     us_to_ns(runtime_us), false);
	}
	return r ? r : run_meta(g, run_id, prof, n);
}

/* Deferred steps by start, then as gathered (runs in order, their traces in order). */
static int cmp_job(const void *a, const void *b)
{
	const struct pk_job *x = a, *y = b;

	if (x->sort_ns != y->sort_ns)
		return x->sort_ns < y->sort_ns ? -1 : 1;
	return x->seq < y->seq ? -1 : (x->seq > y->seq);
}

/* Store the deferred steps in time order (each worker's later step then continues its process). */
static int store_jobs(struct pk_ing *g)
{
	int r = 0;

	g->defer = false;
	if (g->njobs)
		qsort(g->jobs, g->njobs, sizeof(*g->jobs), cmp_job);
	for (size_t i = 0; i < g->njobs && !r; i++) {
		const struct pk_job *j = &g->jobs[i];

		r = j->obj ? store_proto(g, j->obj, j->label) : add_step(g, j->label, j->start_ns, j->dur_ns, false);
	}
	return r;
}

static int import_session(struct pk_ing *g, const struct tft_pickle_value *src)
{
	const struct tft_pickle_value *profiles = tft_pickle_attr(src, "_run_profile");
	const struct tft_pickle_value *traces = tft_pickle_attr(src, "_traces");
	struct run_traces *runs = NULL;
	uint32_t nruns = 0;
	int64_t v;
	int r = 0;

	if (!profiles || profiles->type != TFT_PICKLE_DICT)
		return tft_error_set(g->err, TFT_EFORMAT, src->offset,
				     "pickle: TracingSource has no _run_profile dict (found %s)",
				     what_is(profiles));
	if (traces && traces->type != TFT_PICKLE_DICT && traces->type != TFT_PICKLE_NONE)
		return tft_error_set(g->err, TFT_EFORMAT, traces->offset,
				     "pickle: TracingSource._traces is a %s, expected a dict",
				     what_is(traces));
	if (traces && traces->type == TFT_PICKLE_DICT && traces->n) {
		runs = calloc(traces->n, sizeof(*runs));
		if (!runs)
			return tft_error_set(g->err, TFT_ENOMEM, -1, "out of memory");
		for (uint32_t i = 0; i < traces->n; i++) {
			if (!int_of(traces->u.items[2 * i], &v))
				continue;
			runs[nruns].run_id = v;
			runs[nruns].pos = i;
			runs[nruns++].list = traces->u.items[2 * i + 1];
		}
		qsort(runs, nruns, sizeof(*runs), cmp_run_traces);
	}
	estimate_local_offset(g, profiles, runs, nruns);

	g->defer = true;
	for (uint32_t i = 0; i < profiles->n && !r; i++) {
		const struct tft_pickle_value *prof = profiles->u.items[2 * i + 1];
		int64_t run_id = i;

		if (prof->type != TFT_PICKLE_DICT) {
			r = tft_error_set(g->err, TFT_EFORMAT, prof->offset,
					  "pickle: run profile %u is a %s, expected a dict", i, what_is(prof));
			break;
		}
		int_of(tft_pickle_dict_get(prof, "run_id"), &run_id);
		r = import_profile(g, prof, run_id, find_run(runs, nruns, run_id));
	}
	/* Traces of runs without a profile (not written by tftracer, but keep them). */
	for (uint32_t i = 0; i < nruns && !r; i++) {
		const struct tft_pickle_value *l = runs[i].list;

		if (runs[i].seen)
			continue;
		for (int64_t t = 0; l && (l->type == TFT_PICKLE_LIST || l->type == TFT_PICKLE_TUPLE) &&
				    t < (int64_t)l->n && !r;
		     t++) {
			char label[96];

			if (!is_proto(l->u.items[t]))
				continue;
			snprintf(label, sizeof(label), "run %" PRId64 " trace %" PRId64, runs[i].run_id, t);
			r = import_proto(g, l->u.items[t], label, 0, 0);
		}
	}
	free(runs);
	if (!r)
		r = store_jobs(g);
	if (r)
		return r;

	if ((r = set_format(g, "tftracer-session-pickle", "tftracer (TracingServer.save_session)")) ||
	    (r = set_meta_int(g, "tftracer.runs", profiles->n)) ||
	    (r = set_meta_int(g, "tftracer.traces", (int64_t)g->traced)) ||
	    (r = set_meta_int(g, "tftracer.traces_not_kept", (int64_t)g->evicted)))
		return r;
	if (int_of(tft_pickle_attr(src, "_keep_traces"), &v) &&
	    (r = set_meta_int(g, "tftracer.keep_traces", v)))
		return r;
	if (int_of(tft_pickle_attr(src, "global_tracing"), &v) &&
	    (r = set_meta(g, "tftracer.global_tracing", v ? "true" : "false")))
		return r;
	if (int_of(tft_pickle_attr(src, "running"), &v) &&
	    (r = set_meta(g, "tftracer.running", v ? "true" : "false")))
		return r;
	if (g->local_offset_known)
		r = set_meta_int(g, "tftracer.local_time_offset_s", g->local_offset_us / 1000000);
	else
		r = set_meta(g, "tftracer.local_time_offset_s", "unknown (local times taken as UTC)");
	return r;
}

/* ---- entry points ---------------------------------------------------------------------- */

int tft_ingest_pickle_probe(const unsigned char *head, size_t len, bool at_eof)
{
	(void)at_eof;
	return tft_pickle_probe(head, len);
}

static int ingest_root(struct pk_ing *g, const struct tft_pickle_value *root, int protocol)
{
	char buf[300];
	int r = 0;

	snprintf(buf, sizeof(buf), "%d", protocol);
	if ((r = set_meta(g, "pickle.protocol", buf)))
		return r;
	if (root->type == TFT_PICKLE_OBJECT && root->cls == TFT_PICKLE_CLS_TRACING_SOURCE) {
		r = import_session(g, root);
	} else if (is_proto(root)) {
		r = import_proto(g, root, base_name(g->name), 0, 0);
		if (!r)
			r = set_format(g, root->cls == TFT_PICKLE_CLS_STEP_STATS ? "stepstats-pickle"
										 : "runmeta-pickle",
				       NULL);
	} else if ((root->type == TFT_PICKLE_LIST || root->type == TFT_PICKLE_TUPLE) && root->n) {
		g->defer = true; /* (stored in time order, whatever the list's order) */
		for (uint32_t i = 0; i < root->n && !r; i++) {
			const struct tft_pickle_value *v = root->u.items[i];

			if (v->type == TFT_PICKLE_NONE)
				continue;
			if (!is_proto(v))
				return tft_error_set(g->err, TFT_EFORMAT, v->offset,
						     "pickle: item %u of the list is a %s, expected a RunMetadata",
						     i, what_is(v));
			snprintf(buf, sizeof(buf), "trace %u", i);
			r = import_proto(g, v, buf, 0, 0);
		}
		if (!r)
			r = store_jobs(g);
		if (!r)
			r = set_format(g, "runmeta-pickle", NULL);
	} else {
		return tft_error_set(g->err, TFT_EFORMAT, root->offset,
				     "pickle: expected a RunMetadata (Timeline.to_pickle) or a tftracer "
				     "TracingSource (save_session), found %s",
				     what_is(root));
	}
	if (!r) {
		const char *b = base_name(g->name);
		size_t n = strlen(b);

		/* session name: the file name without .pickle[.gz] */
		if (n > 3 && strcmp(b + n - 3, ".gz") == 0)
			n -= 3;
		if (n > 7 && strncmp(b + n - 7, ".pickle", 7) == 0)
			n -= 7;
		else if (n > 4 && strncmp(b + n - 4, ".pkl", 4) == 0)
			n -= 4;
		snprintf(buf, sizeof(buf), "%.*s", (int)n, b);
		r = set_meta(g, "session.name", buf);
	}
	return r;
}

int tft_ingest_pickle_mem(struct tft_writer *w, const char *name, const uint8_t *data, size_t len,
			  const struct tft_ingest_opts *opts, struct tft_error *err)
{
	struct tft_pickle *pk;
	struct pk_ing g;
	int r;

	if (!w || (!data && len))
		return tft_error_set(err, TFT_EINVAL, -1, "no writer or no input");
	pk = tft_pickle_parse(data, len, NULL, err);
	if (!pk) {
		r = err && err->code ? err->code : TFT_EFORMAT;
		tft_error_set_file(err, name);
		return r;
	}
	memset(&g, 0, sizeof(g));
	g.w = w;
	g.name = name ? name : "";
	g.opts = opts;
	g.err = err;
	g.data = data;
	g.len = len;
	if (opts)
		g.sub_opts = *opts;
	if (opts && opts->progress) {
		g.sub_opts.progress = relay_progress;
		g.sub_opts.progress_ctx = &g;
	}
	{
		const char *f = tft_writer_meta(w, "format"), *p = tft_writer_meta(w, "producer");

		g.fmt_before = f ? strdup(f) : NULL;
		g.prod_before = p ? strdup(p) : NULL;
	}
	r = ingest_root(&g, tft_pickle_root(pk), tft_pickle_protocol(pk));
	free(g.fmt_before);
	free(g.prod_before);
	free(g.jobs);
	if (!r && opts && opts->progress)
		opts->progress(opts->progress_ctx, len, len, g.traced + g.untraced);
	tft_pickle_destroy(pk);
	if (r) {
		if (err && err->code == TFT_OK)
			tft_error_set(err, r, -1, "%s", tft_strerror(r));
		tft_error_set_file(err, name);
	}
	return r;
}

int tft_ingest_pickle_source(struct tft_writer *w, struct tft_source *src,
			     const struct tft_ingest_opts *opts, struct tft_error *err)
{
	uint64_t raw = tft_source_raw_size(src);
	size_t len = 0, cap = (size_t)1 << 20;
	uint8_t *buf;
	int r;

	/* The whole (decompressed) pickle: values point into it. */
	if (raw && raw < ((uint64_t)1 << 40))
		cap = (size_t)raw * (tft_source_is_gzip(src) ? 4 : 1) + 1;
	buf = malloc(cap);
	if (!buf)
		return tft_error_set(err, TFT_ENOMEM, -1, "out of memory reading the pickle");
	for (;;) {
		size_t got = 0;

		if (tft_grow_size((void **)&buf, &cap, len + 1, 1)) {
			free(buf);
			return tft_error_set(err, TFT_ENOMEM, -1, "out of memory reading the pickle");
		}

		r = tft_source_read(src, buf + len, cap - len, &got, err);
		if (r) {
			free(buf);
			return r;
		}
		if (!got)
			break;
		len += got;
	}
	r = tft_ingest_pickle_mem(w, tft_source_name(src), buf, len, opts, err);
	free(buf);
	return r;
}
