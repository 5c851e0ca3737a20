/* SPDX-License-Identifier: MIT */
/*
 * The live hub (server/live.h) and the live endpoints of docs/http-api.md:
 * server-sent events (GET /api/live), run statistics (GET /api/runs), the
 * status probe and the controls (trace, tracing, save, stop).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "codec/json_read.h"
#include "codec/source.h"
#include "runtime/rt.h"
#include "server/live.h"
#include "server/api.h"

#define KINDS_MAX 64          /* run kinds kept (LRU) */
#define RECENT_MAX 1000u      /* step times kept per run kind */
#define RECENT_DEFAULT 200
#define HIST_BUCKETS 1500     /* log buckets of ratio HIST_RATIO from 1 ns */
#define HIST_RATIO 1.02
#define QUEUE_MAX 4096        /* finished steps waiting for the follower */
#define LANDING_MAX 8192      /* steps waiting for the commit that holds them */
#define RING_SLOTS 1024       /* SSE events kept for replay */
#define SLOT_BYTES 1280       /* one formatted SSE message: the status object with a
				* 255-byte session name, a 199-byte disabled reason, its
				* request and 20-digit counters is ~1060 bytes; a trace
				* event with a 127-byte name and a 159-byte reason ~700
				* (a longer one is not sent) */
#define STREAMS_MAX 16
#define TICK_NS (20 * 1000000LL)
#define STATUS_EVERY_NS 1000000000LL
#define BUMP_EVERY_NS (250 * 1000000LL)
#define NAME_MAX_BYTES 128
#define TSTEPS_MAX 512        /* traced steps followed until they land */
#define WHY_BYTES 160         /* an import failure's reason, as the page shows it */

/* ---- hub state ---------------------------------------------------------- */

struct recent_ent {
	int64_t index, start_ns, dur_ns;
	bool traced;
};

struct run_kind {
	char name[NAME_MAX_BYTES];
	uint64_t count, traced, last_seen;
	uint64_t sum_ns;
	int64_t min_ns, max_ns, last_ns;
	uint32_t *hist;             /* owned: HIST_BUCKETS counts */
	struct recent_ent *recent;  /* owned: ring of RECENT_MAX */
	uint32_t rhead, rn;
};

struct done_step {
	int64_t index, start_ns, dur_ns;
	uint64_t flush_seq; /* runtime commits when the follower saw it */
	bool traced;
	char name[NAME_MAX_BYTES];
};

/*
 * A traced step until it has landed: its runtime events in the file (the
 * follower released it) and every profiler import it expects done or given
 * up. The hub counts a trace request's steps as they land (docs/http-api.md).
 */
struct tstep {
	int64_t index;      /* -1: a free slot */
	uint64_t request;   /* the trace request it belongs to; 0 = none */
	int64_t start_ns, end_ns;
	uint64_t events;    /* imported so far */
	int32_t imports;    /* expected imports not yet done */
	bool released, failed, done;
	bool hold;          /* the runtime holds its thread until its imports are done (rt.h) */
	int source;         /* the last import's (enum tft_live_source) */
	char name[NAME_MAX_BYTES];
	char why[WHY_BYTES]; /* the first failure */
};

struct ev_slot {
	uint64_t id;
	uint32_t len;
	char text[SLOT_BYTES];
};

struct sse_client {
	struct tft_live *lv;          /* borrowed */
	struct MHD_Connection *conn;  /* borrowed: valid while the response lives */
	uint64_t cursor;              /* next event id to send */
	bool started, suspended;
	char pend[SLOT_BYTES + 64];   /* a message being written out */
	size_t pend_len, pend_off;
	struct sse_client *next, *prev;
};

struct tft_live {
	/* Set at start, then read-only. */
	struct tft_server_opts sopts;
	char token[96];
	bool live_mode;               /* following the runtime (not a file server); atomic */
	char path[4096];              /* the served file */
	char rt_path[4096];           /* the runtime's session file ("" if none) */

	pthread_mutex_t srv_lock;     /* guards srv, url, port, stopped */
	pthread_cond_t srv_cond;      /* stopped changed */
	struct tft_server *srv;       /* owned */
	struct tft_server_source src;
	char url[600];
	uint16_t port;
	bool stopped;

	/* The steps' hot path (tft_live_step_begin/end). */
	pthread_mutex_t q_lock;
	struct done_step cur;         /* the open step */
	bool cur_open;
	struct done_step *queue;      /* owned: QUEUE_MAX; the hot path appends */
	struct done_step *spare;      /* owned: QUEUE_MAX; swapped with queue by the follower */
	uint32_t nqueue;
	uint64_t queue_lost;          /* steps not aggregated: the queue was full */
	_Atomic int64_t pending;      /* traced steps requested, not yet begun */
	_Atomic int64_t every;        /* trace every k-th step, 0 = off */
	_Atomic int64_t nsteps;       /* steps begun through the hub */

	/* Traced steps and the latest trace request (ts_lock; taken after q_lock, before ev_lock). */
	pthread_mutex_t ts_lock;
	struct tstep *tsteps;         /* owned: TSTEPS_MAX, a ring in begin order */
	uint32_t ts_next;             /* where the next traced step goes */
	struct tft_live_request req;
	uint64_t req_seq;             /* request ids given out */

	/* Aggregates (the follower writes, /api/runs reads). */
	pthread_mutex_t agg_lock;
	struct run_kind kinds[KINDS_MAX];
	uint32_t nkinds;
	uint64_t evicted_kinds, seen_seq, total_steps;
	int64_t end_ns;
	char next[16];                /* the `end` event's "next" (tft_live_set_next) */

	/* Follower only. */
	struct done_step *landing;    /* owned: LANDING_MAX */
	uint32_t nlanding;
	pthread_t follower;
	bool follower_running;
	_Atomic bool stop_follower;
	_Atomic bool stop_requested;  /* POST /api/stop */
	_Atomic int64_t stop_at_ns;   /* when to stop: the reply goes out first */
	pthread_mutex_t wake_lock;
	pthread_cond_t wake_cond;

	/* Imports (live_import.c reports here). */
	_Atomic uint64_t imports, import_errors, imported_events;
	_Atomic uint64_t gen_cache;   /* the pool generation after the last bump */

	/* Event ring and streams. */
	pthread_mutex_t ev_lock;
	pthread_cond_t ev_cond;       /* a stream ended */
	struct ev_slot *ring;         /* owned: RING_SLOTS */
	uint64_t ev_first, ev_next;   /* ids in the ring: [ev_first, ev_next) */
	struct sse_client *clients;
	unsigned nclients;
	bool closing;                 /* the server is stopping: end the streams */
};

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void copy_name(char *dst, const char *src)
{
	size_t n = src ? strnlen(src, NAME_MAX_BYTES - 1) : 0;

	if (!n) {
		memcpy(dst, "step", 5);
		return;
	}
	memcpy(dst, src, n);
	dst[n] = 0;
}

const char *tft_live_source_name(int source)
{
	switch (source) {
	case TFT_LIVE_SRC_RUNTIME: return "runtime";
	case TFT_LIVE_SRC_TORCH: return "torch";
	case TFT_LIVE_SRC_RUNMETA: return "runmetadata";
	case TFT_LIVE_SRC_XSPACE: return "xspace";
	default: return "import";
	}
}

/* ---- the event ring ------------------------------------------------------ */

static void wake_streams_locked(struct tft_live *lv)
{
	for (struct sse_client *c = lv->clients; c; c = c->next)
		if (c->suspended) {
			c->suspended = false;
			tft_http_resume(c->conn);
		}
}

/* Append one SSE message (event type + JSON data) to the ring and wake the streams. */
static void push_event(struct tft_live *lv, const char *type, const char *json, size_t len)
{
	struct ev_slot *s;
	int n;

	pthread_mutex_lock(&lv->ev_lock);
	if (lv->ev_next - lv->ev_first == RING_SLOTS)
		lv->ev_first++;
	s = &lv->ring[lv->ev_next % RING_SLOTS];
	n = snprintf(s->text, sizeof(s->text), "id: %llu\nevent: %s\ndata: %.*s\n\n",
		     (unsigned long long)lv->ev_next, type, (int)len, json);
	if (n < 0 || (size_t)n >= sizeof(s->text))
		n = snprintf(s->text, sizeof(s->text), "id: %llu\nevent: %s\ndata: {}\n\n",
			     (unsigned long long)lv->ev_next, type);
	s->len = (uint32_t)n;
	s->id = lv->ev_next++;
	wake_streams_locked(lv);
	pthread_mutex_unlock(&lv->ev_lock);
}

/* ---- status ----------------------------------------------------------- */

static const char *state_name(int st)
{
	return st == TFT_RUNTIME_RUNNING ? "running" : st == TFT_RUNTIME_DISABLED ? "disabled" : "off";
}

/* Bump the readers' generation (srv_lock held). */
static void bump_locked(struct tft_live *lv)
{
	if (lv->srv) {
		tft_pool_bump(&lv->srv->pool);
		atomic_store(&lv->gen_cache, tft_pool_gen(&lv->srv->pool));
	}
}

void tft_live_get_status(struct tft_live *lv, struct tft_live_status *o)
{
	struct tft_runtime_stats st;
	const char *base;

	memset(o, 0, sizeof(*o));
	memset(&st, 0, sizeof(st));
	st.struct_size = sizeof(st);
	tft_stats(&st);
	o->live = __atomic_load_n(&lv->live_mode, __ATOMIC_RELAXED);
	o->state = st.state;
	o->tracing = st.tracing;
	/* The switch alone: `tracing` is also true inside a requested step, so a page
	 * that did not flip the switch could not tell it from the status. */
	o->global = (__atomic_load_n(&tft_rt_state, __ATOMIC_RELAXED) & TFT_RT_TRACING) != 0;
	o->pending = atomic_load(&lv->pending);
	o->every = atomic_load(&lv->every);
	o->events = st.events;
	o->dropped = st.dropped;
	o->flushes = st.flushes;
	o->bytes_written = st.bytes_written;
	o->threads = st.threads;
	o->steps = st.steps;
	o->imports = atomic_load(&lv->imports);
	o->import_errors = atomic_load(&lv->import_errors);
	o->imported_events = atomic_load(&lv->imported_events);
	pthread_mutex_lock(&lv->ts_lock);
	o->request = lv->req;
	pthread_mutex_unlock(&lv->ts_lock);
	snprintf(o->disabled_reason, sizeof(o->disabled_reason), "%s", st.disabled_reason);
	pthread_mutex_lock(&lv->agg_lock); /* path: tft_live_serve() may switch it */
	base = strrchr(lv->path, '/');
	snprintf(o->session, sizeof(o->session), "%.255s", base ? base + 1 : lv->path);
	o->end_ns = lv->end_ns;
	pthread_mutex_unlock(&lv->agg_lock);
	/* Never srv_lock here: request handlers call this while a restart waits for them. */
	o->generation = atomic_load(&lv->gen_cache);
}

static void write_request(struct tft_json_writer *w, const struct tft_live_request *q)
{
	if (!q->id) {
		tft_json_write_null(w);
		return;
	}
	tft_json_write_begin_object(w);
	tft_json_write_key(w, "id");
	tft_json_write_uint(w, q->id);
	tft_json_write_key(w, "steps");
	tft_json_write_int(w, q->steps);
	tft_json_write_key(w, "begun");
	tft_json_write_int(w, q->begun);
	tft_json_write_key(w, "landed");
	tft_json_write_int(w, q->landed);
	tft_json_write_key(w, "failed");
	tft_json_write_int(w, q->failed);
	tft_json_write_end_object(w);
}

static void write_status(struct tft_json_writer *w, const struct tft_live_status *s)
{
	tft_json_write_begin_object(w);
	tft_json_write_key(w, "live");
	tft_json_write_bool(w, s->live);
	tft_json_write_key(w, "state");
	tft_json_write_cstr(w, state_name(s->state));
	tft_json_write_key(w, "tracing");
	tft_json_write_bool(w, s->tracing);
	tft_json_write_key(w, "global");
	tft_json_write_bool(w, s->global);
	tft_json_write_key(w, "pending");
	tft_json_write_int(w, s->pending);
	tft_json_write_key(w, "every");
	tft_json_write_int(w, s->every);
	tft_json_write_key(w, "events");
	tft_json_write_uint(w, s->events);
	tft_json_write_key(w, "dropped");
	tft_json_write_uint(w, s->dropped);
	tft_json_write_key(w, "steps");
	tft_json_write_int(w, s->steps);
	tft_json_write_key(w, "flushes");
	tft_json_write_uint(w, s->flushes);
	tft_json_write_key(w, "bytes_written");
	tft_json_write_uint(w, s->bytes_written);
	tft_json_write_key(w, "threads");
	tft_json_write_uint(w, s->threads);
	tft_json_write_key(w, "generation");
	tft_json_write_uint(w, s->generation);
	tft_json_write_key(w, "end_ns");
	tft_json_write_int(w, s->end_ns);
	tft_json_write_key(w, "session");
	tft_json_write_cstr(w, s->session);
	tft_json_write_key(w, "imports");
	tft_json_write_uint(w, s->imports);
	tft_json_write_key(w, "import_errors");
	tft_json_write_uint(w, s->import_errors);
	tft_json_write_key(w, "request");
	write_request(w, &s->request);
	tft_json_write_key(w, "disabled_reason");
	tft_json_write_cstr(w, s->disabled_reason);
	tft_json_write_end_object(w);
}

/* The status object as one JSON line into buf; its length, 0 on failure. */
static size_t format_status(struct tft_live *lv, char *buf, size_t size)
{
	struct tft_live_status s;
	struct tft_json_writer w;
	const char *p;
	size_t len = 0;

	tft_live_get_status(lv, &s);
	tft_json_write_init_mem(&w);
	write_status(&w, &s);
	p = tft_json_write_borrow(&w, &len);
	if (w.status || len >= size)
		len = 0;
	else
		memcpy(buf, p, len);
	tft_json_write_fini(&w);
	return len;
}

static void push_status(struct tft_live *lv)
{
	char buf[SLOT_BYTES];
	size_t n = format_status(lv, buf, sizeof(buf) - 64);

	if (n)
		push_event(lv, "status", buf, n);
}

/* ---- aggregates -------------------------------------------------------- */

static uint32_t hist_bucket(int64_t ns)
{
	double b;

	if (ns <= 1)
		return 0;
	b = log((double)ns) / log(HIST_RATIO);
	return b >= HIST_BUCKETS - 1 ? HIST_BUCKETS - 1 : (uint32_t)b;
}

static int64_t hist_value(uint32_t b)
{
	/* The geometric middle of [ratio^b, ratio^(b+1)). */
	return (int64_t)llround(pow(HIST_RATIO, (double)b + 0.5));
}

static void kind_free(struct run_kind *k)
{
	free(k->hist);
	free(k->recent);
	memset(k, 0, sizeof(*k));
}

/* The kind for name (created, evicting the least recently seen when full); agg_lock held. */
static struct run_kind *kind_get(struct tft_live *lv, const char *name)
{
	struct run_kind *k = NULL;
	uint32_t lru = 0;

	for (uint32_t i = 0; i < lv->nkinds; i++) {
		if (strcmp(lv->kinds[i].name, name) == 0)
			return &lv->kinds[i];
		if (lv->kinds[i].last_seen < lv->kinds[lru].last_seen)
			lru = i;
	}
	if (lv->nkinds < KINDS_MAX) {
		k = &lv->kinds[lv->nkinds++];
	} else {
		k = &lv->kinds[lru];
		kind_free(k);
		lv->evicted_kinds++;
	}
	k->hist = calloc(HIST_BUCKETS, sizeof(*k->hist));
	k->recent = calloc(RECENT_MAX, sizeof(*k->recent));
	if (!k->hist || !k->recent) {
		kind_free(k);
		if (k == &lv->kinds[lv->nkinds - 1])
			lv->nkinds--;
		return NULL;
	}
	snprintf(k->name, sizeof(k->name), "%s", name);
	k->min_ns = INT64_MAX;
	return k;
}

static void aggregate(struct tft_live *lv, const struct done_step *d)
{
	struct run_kind *k;

	pthread_mutex_lock(&lv->agg_lock);
	lv->total_steps++;
	k = kind_get(lv, d->name);
	if (k) {
		struct recent_ent *r = &k->recent[k->rhead];
		k->count++;
		k->traced += d->traced;
		k->last_seen = ++lv->seen_seq;
		k->sum_ns += (uint64_t)(d->dur_ns > 0 ? d->dur_ns : 0);
		if (d->dur_ns < k->min_ns)
			k->min_ns = d->dur_ns;
		if (d->dur_ns > k->max_ns)
			k->max_ns = d->dur_ns;
		k->last_ns = d->dur_ns;
		k->hist[hist_bucket(d->dur_ns)]++;
		r->index = d->index;
		r->start_ns = d->start_ns;
		r->dur_ns = d->dur_ns;
		r->traced = d->traced;
		k->rhead = (k->rhead + 1) % RECENT_MAX;
		if (k->rn < RECENT_MAX)
			k->rn++;
	}
	pthread_mutex_unlock(&lv->agg_lock);
}

static int64_t hist_rank(const struct run_kind *k, double q)
{
	uint64_t want = (uint64_t)ceil(q * (double)k->count), seen = 0;

	if (want < 1)
		want = 1;
	for (uint32_t b = 0; b < HIST_BUCKETS; b++) {
		seen += k->hist[b];
		if (seen >= want) {
			int64_t v = hist_value(b);
			/* Never outside the exact extremes. */
			return v < k->min_ns ? k->min_ns : v > k->max_ns ? k->max_ns : v;
		}
	}
	return k->max_ns;
}

/* ---- traced steps until they land ------------------------------------------------ */

/*
 * A trace event to send once ts_lock is released (sse_read takes ev_lock,
 * then ts_lock through the status: never push under ts_lock).
 */
struct trace_note {
	bool push;
	int64_t step;            /* -1: none */
	int source;
	int64_t t0, t1;
	uint64_t events;
	bool complete;           /* every part of the step is in the file */
	bool has_req;
	struct tft_live_request req; /* the request it belongs to, as counted now */
	char name[NAME_MAX_BYTES];
	char why[WHY_BYTES];     /* "" unless an import of it failed */
};

static void copy_why(char *dst, const char *why)
{
	size_t n = why ? strnlen(why, WHY_BYTES - 1) : 0;

	/* one line: the page shows it as is */
	for (size_t i = 0; i < n; i++)
		dst[i] = why[i] == '\n' || why[i] == '\r' ? ' ' : why[i];
	dst[n] = 0;
}

/* Traced step `index` (newest first), or NULL; ts_lock held. */
static struct tstep *tstep_find(struct tft_live *lv, int64_t index)
{
	for (uint32_t i = 1; i <= TSTEPS_MAX; i++) {
		struct tstep *t = &lv->tsteps[(lv->ts_next + TSTEPS_MAX - i) % TSTEPS_MAX];
		if (t->index == index)
			return t;
	}
	return NULL;
}

/* Count a landed step for its request (ts_lock held). */
static void tstep_count(struct tft_live *lv, const struct tstep *t)
{
	if (t->request && t->request == lv->req.id) {
		lv->req.landed++;
		lv->req.failed += t->failed;
	}
}

/* If every part of t is in: done, counted, and *n says so (ts_lock held). */
static void tstep_settle(struct tft_live *lv, struct tstep *t, struct trace_note *n)
{
	if (t->done || !t->released || t->imports > 0)
		return;
	t->done = true;
	tstep_count(lv, t);
	n->complete = true;
	n->push = true;
	n->step = t->index;
	n->source = t->source;
	n->t0 = t->start_ns;
	n->t1 = t->end_ns;
	n->events = t->events;
	memcpy(n->name, t->name, sizeof(n->name));
	memcpy(n->why, t->why, sizeof(n->why));
	n->has_req = t->request != 0;
	n->req = lv->req;
	if (t->request != lv->req.id) /* an older request's step: its id, nothing else */
		n->req = (struct tft_live_request){ .id = t->request };
}

static void push_note(struct tft_live *lv, const struct trace_note *n);

/* A traced step began (the hot path: only traced steps come here). */
static void tstep_begin(struct tft_live *lv, int64_t index, const char *name, int64_t now,
			bool asked)
{
	struct tstep *t;
	int64_t unhold = -1;

	pthread_mutex_lock(&lv->ts_lock);
	t = &lv->tsteps[lv->ts_next++ % TSTEPS_MAX];
	if (t->index >= 0 && !t->done) {
		/* Followed too long (over TSTEPS_MAX traced steps since): given up on. */
		t->failed = true;
		tstep_count(lv, t);
		if (t->hold)
			unhold = t->index;
	}
	memset(t, 0, sizeof(*t));
	t->index = index;
	t->start_ns = t->end_ns = now;
	t->source = TFT_LIVE_SRC_RUNTIME;
	copy_name(t->name, name);
	if (asked && lv->req.id && lv->req.steps > 0) {
		t->request = lv->req.id;
		lv->req.begun++;
	}
	pthread_mutex_unlock(&lv->ts_lock);
	if (unhold >= 0)
		tft_rt_import_release(unhold);
}

/*
 * An expected import of t is done (landed or failed): once none is left, the
 * runtime lets its thread go on (ts_lock held). Returns the step to release
 * (after unlocking), or -1.
 */
static int64_t tstep_import_done(struct tstep *t)
{
	if (t->imports > 0)
		t->imports--;
	if (t->imports > 0 || !t->hold)
		return -1;
	t->hold = false;
	return t->index;
}

/* The open step was abandoned: it never happened. */
static void tstep_abandon(struct tft_live *lv, int64_t index)
{
	struct tstep *t;
	int64_t unhold = -1;

	pthread_mutex_lock(&lv->ts_lock);
	t = tstep_find(lv, index);
	if (t && !t->done) {
		if (t->request && t->request == lv->req.id && lv->req.begun > 0)
			lv->req.begun--;
		if (t->hold)
			unhold = t->index; /* (no end: nothing was held; the release is forgotten) */
		t->index = -1;
	}
	pthread_mutex_unlock(&lv->ts_lock);
	if (unhold >= 0)
		tft_rt_import_release(unhold);
}

/* The follower: a traced step's runtime events are in the file. */
static void tstep_released(struct tft_live *lv, const struct done_step *d)
{
	struct trace_note n = { .step = d->index };
	struct tstep *t;

	pthread_mutex_lock(&lv->ts_lock);
	t = tstep_find(lv, d->index);
	if (t && !t->done) {
		t->released = true;
		t->start_ns = d->start_ns;
		t->end_ns = d->start_ns + d->dur_ns;
		tstep_settle(lv, t, &n);
	} else if (!t) {
		/* not followed (given up on): what it was */
		n = (struct trace_note){ .push = true, .step = d->index, .complete = true,
					 .source = TFT_LIVE_SRC_RUNTIME, .t0 = d->start_ns,
					 .t1 = d->start_ns + d->dur_ns };
		memcpy(n.name, d->name, sizeof(n.name));
	}
	pthread_mutex_unlock(&lv->ts_lock);
	if (n.push)
		push_note(lv, &n);
}

void tft_live_step_expect_imports(struct tft_live *lv, int64_t step, int k)
{
	struct tstep *t;

	if (!lv || k <= 0)
		return;
	pthread_mutex_lock(&lv->ts_lock);
	t = tstep_find(lv, step);
	if (t && !t->done) {
		t->imports += k;
		/* the open step: its thread's later records wait for the trace (rt.h) */
		if (!t->hold && tft_rt_import_hold(step) == 0)
			t->hold = true;
	}
	pthread_mutex_unlock(&lv->ts_lock);
}

void tft_live_step_import_failed(struct tft_live *lv, int64_t step, const char *why)
{
	struct trace_note n = { .step = step };
	struct tstep *t;
	int64_t unhold = -1;

	if (!lv)
		return;
	pthread_mutex_lock(&lv->ts_lock);
	t = tstep_find(lv, step);
	if (t && !t->done && t->imports > 0) {
		unhold = tstep_import_done(t);
		if (!t->failed) {
			t->failed = true;
			copy_why(t->why, why && *why ? why : "the profiler trace did not come");
		}
		tstep_settle(lv, t, &n);
	}
	pthread_mutex_unlock(&lv->ts_lock);
	if (unhold >= 0)
		tft_rt_import_release(unhold);
	if (n.push)
		push_note(lv, &n);
}

/* ---- the hot path ---------------------------------------------------------- */

int64_t tft_live_step_begin(struct tft_live *lv, const char *name, bool *traced)
{
	int64_t idx;
	bool tr, asked = false;

	/* Runtime off (never started, disabled, or a fork child): record nothing and
	 * leave the hub alone (its locks may be a forked copy). */
	if (!(__atomic_load_n(&tft_rt_state, __ATOMIC_RELAXED) & TFT_RT_STEPS)) {
		if (traced)
			*traced = false;
		return -1;
	}
	if (lv) {
		int64_t every = atomic_load_explicit(&lv->every, memory_order_relaxed);
		int64_t n = atomic_fetch_add_explicit(&lv->nsteps, 1, memory_order_relaxed);
		int64_t p = atomic_load_explicit(&lv->pending, memory_order_relaxed);
		if (p > 0)
			asked = atomic_fetch_sub_explicit(&lv->pending, 1, memory_order_relaxed) > 0;
		else if (every > 0 && n % every == 0)
			tft_trace_next_steps(1);
	}
	idx = tft_step_begin(name);
	tr = tft_is_tracing();
	if (traced)
		*traced = tr && idx >= 0;
	if (lv && idx >= 0) {
		int64_t now = mono_ns();
		pthread_mutex_lock(&lv->q_lock);
		lv->cur.index = idx;
		lv->cur.start_ns = now;
		lv->cur.traced = tr;
		copy_name(lv->cur.name, name);
		lv->cur_open = true;
		pthread_mutex_unlock(&lv->q_lock);
		if (tr)
			tstep_begin(lv, idx, name, now, asked);
	}
	return idx;
}

int64_t tft_live_step_end(struct tft_live *lv)
{
	int64_t idx = tft_step_end();

	if (lv && idx >= 0) {
		int64_t now = mono_ns();
		pthread_mutex_lock(&lv->q_lock);
		if (lv->cur_open && idx == lv->cur.index) {
			if (lv->nqueue < QUEUE_MAX) {
				struct done_step *d = &lv->queue[lv->nqueue++];
				*d = lv->cur;
				d->dur_ns = now - lv->cur.start_ns;
				/* (traced as it began: see drain.c) */
			} else {
				lv->queue_lost++;
			}
		}
		lv->cur_open = false;
		pthread_mutex_unlock(&lv->q_lock);
	}
	return idx;
}

int64_t tft_live_step_abandon(struct tft_live *lv)
{
	int64_t idx = tft_step_abandon();

	if (lv && idx >= 0) {
		pthread_mutex_lock(&lv->q_lock);
		lv->cur_open = false;
		pthread_mutex_unlock(&lv->q_lock);
		tstep_abandon(lv, idx);
	}
	return idx;
}

uint64_t tft_live_trace_next(struct tft_live *lv, int n)
{
	uint64_t id = 0;

	if (n < 0)
		n = 0;
	if (lv) {
		pthread_mutex_lock(&lv->ts_lock);
		if (n > 0)
			lv->req = (struct tft_live_request){ .id = ++lv->req_seq, .steps = n };
		else
			lv->req.steps = 0; /* cancelled: what began of it still lands */
		id = lv->req.id;
		atomic_store(&lv->pending, n);
		pthread_mutex_unlock(&lv->ts_lock);
	}
	tft_trace_next_steps(n);
	return id;
}

void tft_live_trace_every(struct tft_live *lv, int k)
{
	if (lv)
		atomic_store(&lv->every, k > 0 ? k : 0);
}

void tft_live_set_tracing(struct tft_live *lv, bool on)
{
	tft_set_tracing(on);
}

/* ---- the follower ------------------------------------------------------------ */

static void write_run(struct tft_json_writer *w, const struct done_step *d)
{
	tft_json_write_begin_object(w);
	tft_json_write_key(w, "index");
	tft_json_write_int(w, d->index);
	tft_json_write_key(w, "name");
	tft_json_write_cstr(w, d->name);
	tft_json_write_key(w, "start_ns");
	tft_json_write_int(w, d->start_ns);
	tft_json_write_key(w, "dur_ns");
	tft_json_write_int(w, d->dur_ns);
	tft_json_write_key(w, "traced");
	tft_json_write_bool(w, d->traced);
	tft_json_write_end_object(w);
}

static void push_json(struct tft_live *lv, const char *type, struct tft_json_writer *w)
{
	size_t len;
	const char *p = tft_json_write_borrow(w, &len);

	if (!w->status)
		push_event(lv, type, p, len);
	tft_json_write_fini(w);
}

/*
 * A `trace` event: something of a traced step (or a trace) landed in the
 * file. complete: all of it is in (the page calls it landed); request: the
 * trace request the step belongs to, counted as of now; error: why its
 * profiler trace is missing.
 */
static void push_note(struct tft_live *lv, const struct trace_note *n)
{
	struct tft_json_writer w;

	tft_json_write_init_mem(&w);
	tft_json_write_begin_object(&w);
	tft_json_write_key(&w, "step");
	if (n->step >= 0)
		tft_json_write_int(&w, n->step);
	else
		tft_json_write_null(&w);
	tft_json_write_key(&w, "name");
	tft_json_write_cstr(&w, n->name[0] ? n->name : tft_live_source_name(n->source));
	tft_json_write_key(&w, "start_ns");
	tft_json_write_int(&w, n->t0);
	tft_json_write_key(&w, "end_ns");
	tft_json_write_int(&w, n->t1);
	tft_json_write_key(&w, "source");
	tft_json_write_cstr(&w, tft_live_source_name(n->source));
	tft_json_write_key(&w, "events");
	tft_json_write_uint(&w, n->events);
	tft_json_write_key(&w, "complete");
	tft_json_write_bool(&w, n->complete);
	tft_json_write_key(&w, "request");
	if (n->has_req)
		write_request(&w, &n->req);
	else
		tft_json_write_null(&w);
	if (n->why[0]) {
		tft_json_write_key(&w, "error");
		tft_json_write_cstr(&w, n->why);
	}
	tft_json_write_end_object(&w);
	push_json(lv, "trace", &w);
}

/* live_import.c: an import landed in the file (the readers must see it), or failed. */
void tft_live_note_import(struct tft_live *lv, const struct tft_live_import *im, int rc,
			  uint64_t events, int64_t t0, int64_t t1, const char *why);
void tft_live_note_import(struct tft_live *lv, const struct tft_live_import *im, int rc,
			  uint64_t events, int64_t t0, int64_t t1, const char *why)
{
	struct trace_note n = { .step = im->step, .source = im->source, .t0 = t0, .t1 = t1,
				.events = events, .push = rc == 0, .complete = true };
	struct tstep *t = NULL;
	int64_t unhold = -1;

	if (!lv)
		return;
	if (rc != 0)
		atomic_fetch_add(&lv->import_errors, 1);
	else
		atomic_fetch_add(&lv->imports, 1);
	atomic_fetch_add(&lv->imported_events, events);
	copy_name(n.name, im->name ? im->name : tft_live_source_name(im->source));
	if (rc != 0)
		copy_why(n.why, why && *why ? why : "the import failed");
	pthread_mutex_lock(&lv->ts_lock);
	if (im->step >= 0)
		t = tstep_find(lv, im->step);
	if (t && !t->done && t->imports > 0) {
		/* one of the imports the step waits for */
		unhold = tstep_import_done(t);
		t->events += events;
		t->source = im->source;
		if (rc == 0 && events) {
			if (t0 < t->start_ns)
				t->start_ns = t0;
			if (t1 > t->end_ns)
				t->end_ns = t1;
		}
		if (rc != 0 && !t->failed) {
			t->failed = true;
			memcpy(t->why, n.why, sizeof(t->why));
		}
		n.complete = false;
		n.push = false;
		tstep_settle(lv, t, &n);
		if (!n.complete && rc == 0) {
			/* landed, the step not yet whole: said, not counted */
			n.push = true;
			n.t0 = t0;
			n.t1 = t1;
			n.events = events;
			n.has_req = t->request != 0;
			n.req = (struct tft_live_request){ .id = t->request };
		}
	} else if (rc != 0) {
		n.push = false; /* counted in the status; nobody waits for it */
	}
	pthread_mutex_unlock(&lv->ts_lock);
	if (unhold >= 0)
		tft_rt_import_release(unhold);
	if (rc == 0) {
		pthread_mutex_lock(&lv->srv_lock);
		bump_locked(lv);
		pthread_mutex_unlock(&lv->srv_lock);
	}
	if (n.push)
		push_note(lv, &n);
}

static void stop_server_locked(struct tft_live *lv)
{
	if (lv->srv) {
		tft_server_stop(lv->srv);
		lv->srv = NULL;
	}
	lv->url[0] = 0;
	lv->stopped = true;
	pthread_cond_broadcast(&lv->srv_cond);
}

/*
 * One round of the follower: the finished steps from the hot path, the ones
 * now in the file out to the streams, the status now and then. final: the
 * runtime was just flushed, every step taken is in the file.
 */
static void follower_tick(struct tft_live *lv, int64_t now, int64_t *last_status,
			  int64_t *last_bump, uint64_t *last_events, bool final)
{
	struct tft_runtime_stats st;
	struct done_step *taken;
	uint32_t n, released = 0;
	bool running;

	memset(&st, 0, sizeof(st));
	st.struct_size = sizeof(st);
	tft_stats(&st);
	running = st.state == TFT_RUNTIME_RUNNING;

	/* Take the finished steps from the hot path's queue (swap the buffers: the
	 * hot path waits for a pointer swap, never for the aggregation). */
	pthread_mutex_lock(&lv->q_lock);
	taken = lv->queue;
	lv->queue = lv->spare;
	lv->spare = taken;
	n = lv->nqueue;
	lv->nqueue = 0;
	pthread_mutex_unlock(&lv->q_lock);
	for (uint32_t i = 0; i < n; i++) {
		struct done_step *d = &taken[i];
		d->flush_seq = st.flushes;
		aggregate(lv, d);
		if (lv->nlanding < LANDING_MAX)
			lv->landing[lv->nlanding++] = *d;
	}

	/* A step is in the file two commits after it ended (the drain holds the youngest
	 * cross-thread records one cycle). */
	while (released < lv->nlanding &&
	       (final || !running || st.flushes >= lv->landing[released].flush_seq + 2))
		released++;
	if (released || (st.events != *last_events && now - *last_bump >= BUMP_EVERY_NS)) {
		pthread_mutex_lock(&lv->srv_lock);
		bump_locked(lv);
		pthread_mutex_unlock(&lv->srv_lock);
		*last_bump = now;
		*last_events = st.events;
	}
	for (uint32_t i = 0; i < released; i++) {
		const struct done_step *d = &lv->landing[i];
		struct tft_json_writer w;
		tft_json_write_init_mem(&w);
		write_run(&w, d);
		push_json(lv, "run", &w);
		if (d->traced)
			tstep_released(lv, d);
		pthread_mutex_lock(&lv->agg_lock);
		lv->end_ns = d->start_ns + d->dur_ns;
		pthread_mutex_unlock(&lv->agg_lock);
	}
	if (released) {
		memmove(lv->landing, lv->landing + released,
			(lv->nlanding - released) * sizeof(*lv->landing));
		lv->nlanding -= released;
	}
	if (now - *last_status >= STATUS_EVERY_NS) {
		push_status(lv);
		*last_status = now;
	}
}

/*
 * The streams' last events: every step recorded until now (the runtime is
 * flushed first), the status, then `end` (reason: "stop", the job stopped
 * its server; "api", POST /api/stop; "serve", another file is served). Called
 * by the follower, or once it has stopped.
 */
static void live_end(struct tft_live *lv, const char *reason)
{
	struct tft_runtime_stats st = { .struct_size = sizeof(st) };
	int64_t last_status = 0, last_bump = 0;
	uint64_t last_events = 0;
	struct tft_json_writer w;
	char session[256];
	const char *base;

	tft_stats(&st);
	if (st.state == TFT_RUNTIME_RUNNING)
		tft_flush(1000);
	follower_tick(lv, mono_ns(), &last_status, &last_bump, &last_events, true);
	pthread_mutex_lock(&lv->agg_lock);
	base = strrchr(lv->path, '/');
	snprintf(session, sizeof(session), "%.255s", base ? base + 1 : lv->path);
	tft_json_write_init_mem(&w);
	tft_json_write_begin_object(&w);
	tft_json_write_key(&w, "reason");
	tft_json_write_cstr(&w, reason);
	tft_json_write_key(&w, "steps");
	tft_json_write_uint(&w, lv->total_steps);
	tft_json_write_key(&w, "session");
	tft_json_write_cstr(&w, session);
	if (lv->next[0] && strcmp(reason, "stop") == 0) {
		tft_json_write_key(&w, "next");
		tft_json_write_cstr(&w, lv->next);
	}
	tft_json_write_end_object(&w);
	pthread_mutex_unlock(&lv->agg_lock);
	push_json(lv, "end", &w);
}

void tft_live_set_next(struct tft_live *lv, const char *next)
{
	pthread_mutex_lock(&lv->agg_lock);
	snprintf(lv->next, sizeof(lv->next), "%s", next ? next : "");
	pthread_mutex_unlock(&lv->agg_lock);
}

static void *follower_main(void *arg)
{
	struct tft_live *lv = arg;
	int64_t last_status = 0, last_bump = 0;
	uint64_t last_events = 0;

	while (!atomic_load(&lv->stop_follower)) {
		int64_t now = mono_ns(), until = now + TICK_NS;
		struct timespec ts = { until / 1000000000, until % 1000000000 };

		follower_tick(lv, now, &last_status, &last_bump, &last_events, false);
		if (atomic_load(&lv->stop_requested) && now >= atomic_load(&lv->stop_at_ns)) {
			atomic_store(&lv->stop_requested, false);
			live_end(lv, "api");
			pthread_mutex_lock(&lv->srv_lock);
			stop_server_locked(lv);
			pthread_mutex_unlock(&lv->srv_lock);
		}
		pthread_mutex_lock(&lv->wake_lock);
		if (!atomic_load(&lv->stop_follower))
			pthread_cond_timedwait(&lv->wake_cond, &lv->wake_lock, &ts);
		pthread_mutex_unlock(&lv->wake_lock);
	}
	return NULL;
}

static void wake_follower(struct tft_live *lv)
{
	pthread_mutex_lock(&lv->wake_lock);
	pthread_cond_signal(&lv->wake_cond);
	pthread_mutex_unlock(&lv->wake_lock);
}

/* ---- start / stop --------------------------------------------------------- */

void tft_live_opts_init(struct tft_live_opts *o)
{
	memset(o, 0, sizeof(*o));
	tft_server_opts_init(&o->server);
}

static void cond_init_mono(pthread_cond_t *c)
{
	pthread_condattr_t a;

	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(c, &a);
	pthread_condattr_destroy(&a);
}

static void live_free(struct tft_live *lv)
{
	for (uint32_t i = 0; i < lv->nkinds; i++)
		kind_free(&lv->kinds[i]);
	free(lv->queue);
	free(lv->spare);
	free(lv->landing);
	free(lv->ring);
	free(lv->tsteps);
	pthread_mutex_destroy(&lv->ts_lock);
	pthread_mutex_destroy(&lv->srv_lock);
	pthread_cond_destroy(&lv->srv_cond);
	pthread_mutex_destroy(&lv->q_lock);
	pthread_mutex_destroy(&lv->agg_lock);
	pthread_mutex_destroy(&lv->wake_lock);
	pthread_cond_destroy(&lv->wake_cond);
	pthread_mutex_destroy(&lv->ev_lock);
	pthread_cond_destroy(&lv->ev_cond);
	free(lv);
}

/* (Re)start the server on lv->path; srv_lock held. */
static int start_server_locked(struct tft_live *lv, struct tft_error *err)
{
	struct tft_server_opts o = lv->sopts;

	memset(&lv->src, 0, sizeof(lv->src));
	lv->src.path = lv->path;
	lv->src.live = lv;
	if (lv->token[0])
		o.token = lv->token;
	if (lv->port)
		o.port = lv->port; /* a restart keeps the port */
	lv->srv = tft_server_start(&o, &lv->src, err);
	if (!lv->srv)
		return err && err->code ? err->code : TFT_EIO;
	lv->port = tft_server_port(lv->srv);
	atomic_store(&lv->gen_cache, 0);
	snprintf(lv->url, sizeof(lv->url), "%s", tft_server_url(lv->srv));
	if (tft_server_token(lv->srv))
		snprintf(lv->token, sizeof(lv->token), "%s", tft_server_token(lv->srv));
	lv->stopped = false;
	return 0;
}

struct tft_live *tft_live_start(const struct tft_live_opts *o, struct tft_error *err)
{
	struct tft_live_opts def;
	struct tft_live *lv;
	int n;

	if (!o) {
		tft_live_opts_init(&def);
		o = &def;
	}
	lv = calloc(1, sizeof(*lv));
	if (!lv) {
		tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&lv->srv_lock, NULL);
	cond_init_mono(&lv->srv_cond);
	pthread_mutex_init(&lv->q_lock, NULL);
	pthread_mutex_init(&lv->agg_lock, NULL);
	pthread_mutex_init(&lv->wake_lock, NULL);
	cond_init_mono(&lv->wake_cond);
	pthread_mutex_init(&lv->ev_lock, NULL);
	cond_init_mono(&lv->ev_cond);
	pthread_mutex_init(&lv->ts_lock, NULL);
	lv->sopts = o->server;
	lv->sopts.token = NULL;
	if (o->server.token)
		snprintf(lv->token, sizeof(lv->token), "%s", o->server.token);
	lv->queue = calloc(QUEUE_MAX, sizeof(*lv->queue));
	lv->spare = calloc(QUEUE_MAX, sizeof(*lv->spare));
	lv->landing = calloc(LANDING_MAX, sizeof(*lv->landing));
	lv->ring = calloc(RING_SLOTS, sizeof(*lv->ring));
	lv->tsteps = calloc(TSTEPS_MAX, sizeof(*lv->tsteps));
	if (!lv->queue || !lv->spare || !lv->landing || !lv->ring || !lv->tsteps) {
		tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
		live_free(lv);
		return NULL;
	}
	for (uint32_t i = 0; i < TSTEPS_MAX; i++)
		lv->tsteps[i].index = -1;
	n = tft_runtime_path(lv->rt_path, sizeof(lv->rt_path));
	if (n < 0 || (size_t)n >= sizeof(lv->rt_path))
		lv->rt_path[0] = 0;
	if (o->path) {
		snprintf(lv->path, sizeof(lv->path), "%s", o->path);
		lv->live_mode = false;
	} else {
		struct tft_runtime_stats st = { .struct_size = sizeof(st) };
		tft_stats(&st);
		if (!lv->rt_path[0] || st.state != TFT_RUNTIME_RUNNING) {
			tft_error_set(err, TFT_EINVAL, -1, "no runtime session is running (tft_init)");
			live_free(lv);
			return NULL;
		}
		snprintf(lv->path, sizeof(lv->path), "%s", lv->rt_path);
		lv->live_mode = true;
	}
	pthread_mutex_lock(&lv->srv_lock);
	if (start_server_locked(lv, err) != 0) {
		pthread_mutex_unlock(&lv->srv_lock);
		live_free(lv);
		return NULL;
	}
	pthread_mutex_unlock(&lv->srv_lock);
	if (pthread_create(&lv->follower, NULL, follower_main, lv) != 0) {
		tft_error_set(err, TFT_ENOMEM, -1, "cannot start the follower thread");
		pthread_mutex_lock(&lv->srv_lock);
		stop_server_locked(lv);
		pthread_mutex_unlock(&lv->srv_lock);
		live_free(lv);
		return NULL;
	}
	pthread_setname_np(lv->follower, "tft-live");
	lv->follower_running = true;
	return lv;
}

void tft_live_stop(struct tft_live *lv)
{
	bool serving;

	if (!lv)
		return;
	if (lv->follower_running) {
		atomic_store(&lv->stop_follower, true);
		wake_follower(lv);
		pthread_join(lv->follower, NULL);
		lv->follower_running = false;
	}
	pthread_mutex_lock(&lv->srv_lock);
	serving = lv->srv != NULL;
	pthread_mutex_unlock(&lv->srv_lock);
	if (serving) /* (not after POST /api/stop: its `end` went out then) */
		live_end(lv, "stop");
	pthread_mutex_lock(&lv->srv_lock);
	stop_server_locked(lv);
	pthread_mutex_unlock(&lv->srv_lock);
	live_free(lv);
}

void tft_live_url(struct tft_live *lv, char *buf, size_t size)
{
	pthread_mutex_lock(&lv->srv_lock);
	snprintf(buf, size, "%s", lv->url);
	pthread_mutex_unlock(&lv->srv_lock);
}

uint16_t tft_live_port(const struct tft_live *lv)
{
	return lv->port;
}

bool tft_live_wait(struct tft_live *lv, int64_t timeout_ms)
{
	int64_t until = mono_ns() + timeout_ms * 1000000;
	struct timespec ts = { until / 1000000000, until % 1000000000 };
	bool stopped;

	pthread_mutex_lock(&lv->srv_lock);
	while (!lv->stopped) {
		if (timeout_ms < 0)
			pthread_cond_wait(&lv->srv_cond, &lv->srv_lock);
		else if (pthread_cond_timedwait(&lv->srv_cond, &lv->srv_lock, &ts) != 0)
			break;
	}
	stopped = lv->stopped;
	pthread_mutex_unlock(&lv->srv_lock);
	return stopped;
}

int tft_live_serve(struct tft_live *lv, const char *path, struct tft_error *err)
{
	int rc;

	if (!path && !lv->rt_path[0])
		return tft_error_set(err, TFT_EINVAL, -1, "no runtime session to serve");
	pthread_mutex_lock(&lv->srv_lock);
	if (lv->srv && __atomic_load_n(&lv->live_mode, __ATOMIC_RELAXED)) {
		/* the live pages: this server stops following the job (their streams end) */
		struct tft_json_writer w;
		tft_json_write_init_mem(&w);
		tft_json_write_begin_object(&w);
		tft_json_write_key(&w, "reason");
		tft_json_write_cstr(&w, "serve");
		tft_json_write_end_object(&w);
		push_json(lv, "end", &w);
	}
	if (lv->srv) {
		tft_server_stop(lv->srv);
		lv->srv = NULL;
	}
	pthread_mutex_lock(&lv->agg_lock); /* status and save read the path meanwhile */
	snprintf(lv->path, sizeof(lv->path), "%s", path ? path : lv->rt_path);
	__atomic_store_n(&lv->live_mode, path == NULL, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&lv->agg_lock);
	rc = start_server_locked(lv, err);
	if (rc != 0) {
		lv->url[0] = 0;
		lv->stopped = true;
		pthread_cond_broadcast(&lv->srv_cond);
	}
	pthread_mutex_unlock(&lv->srv_lock);
	return rc;
}

/* ---- saving ------------------------------------------------------------------ */

int tft_session_save_copy(const char *src, const char *path, uint64_t *bytes,
			  struct tft_error *err)
{
	sqlite3 *in = NULL, *out = NULL;
	sqlite3_backup *bk;
	size_t n = path ? strlen(path) : 0;
	struct stat sb;
	int fd, rc = 0;

	if (n < 5 || strcmp(path + n - 4, ".tft") != 0)
		return tft_error_set(err, TFT_EINVAL, -1, "the path must end in .tft");
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return tft_error_set(err, errno == EEXIST ? TFT_EINVAL : TFT_EIO, -1, "cannot create %s: %s",
				     path, errno == EEXIST ? "the file exists" : strerror(errno));
	close(fd);
	if (sqlite3_open_v2(src, &in, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		rc = tft_error_set(err, TFT_EIO, -1, "cannot open %s: %s", src,
				   in ? sqlite3_errmsg(in) : "out of memory");
		goto out;
	}
	sqlite3_busy_timeout(in, 2000);
	if (sqlite3_open_v2(path, &out, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
		rc = tft_error_set(err, TFT_EIO, -1, "cannot open %s: %s", path,
				   out ? sqlite3_errmsg(out) : "out of memory");
		goto out;
	}
	/* One step: a read transaction on the source, so the copy is one commit's snapshot. */
	bk = sqlite3_backup_init(out, "main", in, "main");
	if (!bk) {
		rc = tft_error_set(err, TFT_EIO, -1, "backup: %s", sqlite3_errmsg(out));
		goto out;
	}
	n = (size_t)sqlite3_backup_step(bk, -1);
	sqlite3_backup_finish(bk);
	if ((int)n != SQLITE_DONE) {
		rc = tft_error_set(err, TFT_EIO, -1, "copying the session: %s", sqlite3_errstr((int)n));
		goto out;
	}
	/* The copy is a plain file (no -wal side file needed to read it). */
	if (sqlite3_exec(out, "PRAGMA journal_mode=DELETE", NULL, NULL, NULL) != SQLITE_OK) {
		rc = tft_error_set(err, TFT_EIO, -1, "finishing the copy: %s", sqlite3_errmsg(out));
		goto out;
	}
out:
	if (in)
		sqlite3_close(in);
	if (out && sqlite3_close(out) != SQLITE_OK && !rc)
		rc = tft_error_set(err, TFT_EIO, -1, "closing the copy");
	if (rc) {
		unlink(path);
		return rc;
	}
	if (bytes)
		*bytes = stat(path, &sb) == 0 ? (uint64_t)sb.st_size : 0;
	return 0;
}

int tft_live_save(struct tft_live *lv, const char *path, char *out, size_t out_size,
		  uint64_t *bytes, struct tft_error *err)
{
	char def[4200], src[sizeof(lv->path)];
	bool live;
	int rc;

	pthread_mutex_lock(&lv->agg_lock); /* tft_live_serve() may switch the file meanwhile */
	snprintf(src, sizeof(src), "%s", lv->path);
	live = __atomic_load_n(&lv->live_mode, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&lv->agg_lock);
	if (!path) {
		size_t n = strlen(src);
		if (n > 4 && strcmp(src + n - 4, ".tft") == 0)
			n -= 4;
		snprintf(def, sizeof(def), "%.*s-%lld.tft", (int)n, src, (long long)time(NULL));
		path = def;
	}
	if (live)
		tft_flush(1000); /* best effort: what the job did until now */
	rc = tft_session_save_copy(src, path, bytes, err);
	if (rc == 0 && out)
		snprintf(out, out_size, "%s", path);
	return rc;
}

/* ---- request bodies ---------------------------------------------------------- */

/* One member of a flat JSON object body. */
struct body_field {
	const char *key;
	int type;       /* TFT_JSON_NUMBER, TFT_JSON_TRUE (a boolean), TFT_JSON_STRING */
	bool present;
	int64_t i;
	bool b;
	char s[4200];
};

/* Read the body (a JSON object) or the query parameters into fields. 0 or TFT_EINVAL. */
static int parse_body(struct tft_http_req *r, struct body_field *f, size_t nf)
{
	for (size_t i = 0; i < nf; i++) {
		size_t len;
		const char *v = tft_query_get(&r->query, f[i].key, &len);
		if (!v)
			continue;
		f[i].present = true;
		if (f[i].type == TFT_JSON_NUMBER) {
			if (tft_query_parse_i64(v, len, &f[i].i) != 0)
				return TFT_EINVAL;
		} else if (f[i].type == TFT_JSON_TRUE) {
			if (len == 4 && memcmp(v, "true", 4) == 0)
				f[i].b = true;
			else if ((len == 5 && memcmp(v, "false", 5) == 0))
				f[i].b = false;
			else if (len == 1 && (v[0] == '0' || v[0] == '1'))
				f[i].b = v[0] == '1';
			else
				return TFT_EINVAL;
		} else {
			if (len >= sizeof(f[i].s) || memchr(v, 0, len))
				return TFT_EINVAL;
			memcpy(f[i].s, v, len);
			f[i].s[len] = 0;
		}
	}
	if (r->body_bytes > TFT_HTTP_KEEP_BODY)
		return TFT_EINVAL;
	if (!r->body_len)
		return 0;
	{
		struct tft_source *src = tft_source_open_mem(r->body, r->body_len, "body", NULL);
		struct tft_json_reader_opts ro = { .block_size = 8192, .max_buffer = 8192, .max_depth = 8 };
		struct tft_json_reader jr;
		struct tft_json_value v;
		struct tft_json_str key;
		int rc = TFT_EINVAL, c;

		if (!src)
			return TFT_EINVAL;
		if (tft_json_reader_init(&jr, src, &ro, NULL) != 0) {
			tft_source_close(src);
			return TFT_EINVAL;
		}
		tft_json_mark(&jr);
		if (tft_json_peek(&jr, &c, NULL) != 0 || c != '{' || tft_json_read(&jr, &v, NULL) != 0)
			goto done;
		for (;;) {
			int k = tft_json_next_member(&jr, &key, &v, NULL);
			size_t i;
			if (k == 0)
				break;
			if (k != 1)
				goto done;
			for (i = 0; i < nf; i++)
				if (strlen(f[i].key) == key.len && memcmp(f[i].key, key.ptr, key.len) == 0)
					break;
			if (v.type == TFT_JSON_OBJECT || v.type == TFT_JSON_ARRAY) {
				if (i < nf || tft_json_skip(&jr, NULL, NULL) != 0)
					goto done;
				continue;
			}
			if (i == nf)
				continue; /* unknown members are ignored */
			f[i].present = true;
			if (f[i].type == TFT_JSON_NUMBER) {
				if (v.type != TFT_JSON_NUMBER || tft_json_value_to_i64(&v, &f[i].i) != 0)
					goto done;
			} else if (f[i].type == TFT_JSON_TRUE) {
				if (v.type != TFT_JSON_TRUE && v.type != TFT_JSON_FALSE)
					goto done;
				f[i].b = v.type == TFT_JSON_TRUE;
			} else {
				if (v.type == TFT_JSON_NULL) {
					f[i].present = false;
					continue;
				}
				if (v.type != TFT_JSON_STRING || v.len >= sizeof(f[i].s) ||
				    memchr(v.ptr, 0, v.len))
					goto done;
				memcpy(f[i].s, v.ptr, v.len);
				f[i].s[v.len] = 0;
			}
		}
		if (tft_json_peek(&jr, &c, NULL) == 0 && c == -1)
			rc = 0;
done:
		tft_json_reader_fini(&jr);
		tft_source_close(src);
		return rc;
	}
}

/* ---- endpoints ---------------------------------------------------------------- */

static struct tft_live *live_of(struct tft_http_req *r)
{
	struct tft_live *lv = r->srv->pool.src.live;

	return lv && __atomic_load_n(&lv->live_mode, __ATOMIC_RELAXED) ? lv : NULL;
}

int tft_api_live_status(struct tft_http_req *r)
{
	struct tft_live *lv = r->srv->pool.src.live;
	struct tft_json_writer w;

	tft_json_write_init_mem(&w);
	if (!lv) {
		tft_json_write_begin_object(&w);
		tft_json_write_key(&w, "live");
		tft_json_write_bool(&w, false);
		tft_json_write_key(&w, "generation");
		tft_json_write_uint(&w, tft_pool_gen(&r->srv->pool));
		tft_json_write_end_object(&w);
	} else {
		struct tft_live_status s;
		tft_live_get_status(lv, &s);
		s.generation = tft_pool_gen(&r->srv->pool);
		write_status(&w, &s);
	}
	return tft_http_reply_json(r, 200, &w);
}

/* Format the next message for c into c->pend; false when there is none. ev_lock held. */
static bool next_message(struct sse_client *c)
{
	struct tft_live *lv = c->lv;

	c->pend_off = c->pend_len = 0;
	if (!c->started) {
		int n = snprintf(c->pend, sizeof(c->pend), "retry: 2000\n\nevent: status\ndata: ");
		size_t s = format_status(lv, c->pend + n, sizeof(c->pend) - (size_t)n - 3);
		c->started = true;
		if (!s) {
			c->pend_len = (size_t)snprintf(c->pend, sizeof(c->pend), "retry: 2000\n\n");
			return true;
		}
		memcpy(c->pend + n + s, "\n\n", 2);
		c->pend_len = (size_t)n + s + 2;
		return true;
	}
	if (c->cursor < lv->ev_first) {
		c->pend_len = (size_t)snprintf(c->pend, sizeof(c->pend), "event: reset\ndata: {}\n\n");
		c->cursor = lv->ev_first;
		return true;
	}
	if (c->cursor < lv->ev_next) {
		const struct ev_slot *s = &lv->ring[c->cursor % RING_SLOTS];
		memcpy(c->pend, s->text, s->len);
		c->pend_len = s->len;
		c->cursor++;
		return true;
	}
	return false;
}

static long sse_read(void *ctx, uint64_t pos, char *buf, size_t max)
{
	struct sse_client *c = ctx;
	struct tft_live *lv = c->lv;
	size_t n = 0;

	pthread_mutex_lock(&lv->ev_lock);
	while (n < max) {
		size_t take;
		if (c->pend_off == c->pend_len && !next_message(c))
			break;
		take = c->pend_len - c->pend_off;
		if (take > max - n)
			take = max - n;
		memcpy(buf + n, c->pend + c->pend_off, take);
		c->pend_off += take;
		n += take;
	}
	if (n == 0 && lv->closing) {
		/* The server is stopping and this stream has had every event: it ends. */
		pthread_mutex_unlock(&lv->ev_lock);
		return -1;
	}
	if (n == 0) {
		/* Nothing to send: leave the event loop until push_event resumes us. */
		c->suspended = true;
		tft_http_suspend(c->conn);
	}
	pthread_mutex_unlock(&lv->ev_lock);
	return (long)n;
}

static void sse_free(void *ctx)
{
	struct sse_client *c = ctx;
	struct tft_live *lv = c->lv;

	pthread_mutex_lock(&lv->ev_lock);
	if (c->prev)
		c->prev->next = c->next;
	else
		lv->clients = c->next;
	if (c->next)
		c->next->prev = c->prev;
	lv->nclients--;
	pthread_cond_broadcast(&lv->ev_cond);
	pthread_mutex_unlock(&lv->ev_lock);
	free(c);
}

int tft_api_live(struct tft_http_req *r)
{
	struct tft_live *lv = live_of(r);
	struct sse_client *c;
	const char *last;
	int64_t since = -1;

	if (!lv)
		return tft_http_reply_error(r, 404, "not a live session");
	if (tft_query_get_i64(&r->query, "since", 0, INT64_MAX, -1, &since) != 0)
		return tft_http_reply_error(r, 400, "bad since");
	last = tft_http_header(r, "Last-Event-ID");
	if (last && since < 0) {
		int64_t v;
		if (tft_query_parse_i64(last, strlen(last), &v) == 0 && v >= 0)
			since = v;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return tft_http_reply_error(r, 503, "out of memory");
	c->lv = lv;
	c->conn = r->conn;
	pthread_mutex_lock(&lv->ev_lock);
	if (lv->closing || lv->nclients >= STREAMS_MAX) {
		pthread_mutex_unlock(&lv->ev_lock);
		free(c);
		return tft_http_reply_error(r, 503, "too many event streams");
	}
	/* Replay what follows `since` (a reset first if it is gone), else only new events. */
	c->cursor = since >= 0 ? (uint64_t)since + 1 : lv->ev_next;
	if (c->cursor > lv->ev_next)
		c->cursor = lv->ev_next;
	c->next = lv->clients;
	if (lv->clients)
		lv->clients->prev = c;
	lv->clients = c;
	lv->nclients++;
	pthread_mutex_unlock(&lv->ev_lock);
	return tft_http_reply_events(r, sse_read, c, sse_free);
}

void tft_api_live_closing(struct tft_server *srv)
{
	struct tft_live *lv = srv->pool.src.live;
	int64_t until = mono_ns() + 2000000000LL;
	struct timespec ts = { until / 1000000000, until % 1000000000 };

	if (!lv)
		return;
	pthread_mutex_lock(&lv->ev_lock);
	lv->closing = true;
	wake_streams_locked(lv);
	/* Each stream reads once more, ends, and its response is freed. */
	while (lv->nclients > 0)
		if (pthread_cond_timedwait(&lv->ev_cond, &lv->ev_lock, &ts) != 0)
			break;
	wake_streams_locked(lv); /* never leave one suspended for MHD_stop_daemon */
	lv->closing = false;     /* a restarted server streams again */
	pthread_mutex_unlock(&lv->ev_lock);
}

/* /api/runs from a session file's steps: exact statistics. */
/* A kind of step of a file session: its steps are refs[lo, lo + n) (by position). */
struct file_kind {
	uint32_t name;
	uint32_t first; /* position of its first step: ties in count keep file order */
	uint64_t lo, n, traced;
	__int128 sum_ns; /* no overflow, whatever the durations */
};

/* A step's kind and position: sorted, the steps of each kind lie together, in order. */
struct step_ref {
	uint32_t name, pos;
};

static int cmp_step_ref(const void *a, const void *b)
{
	const struct step_ref *x = a, *y = b;

	if (x->name != y->name)
		return x->name < y->name ? -1 : 1;
	return (x->pos > y->pos) - (x->pos < y->pos);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static int cmp_kind_count(const void *a, const void *b)
{
	const struct file_kind *x = a, *y = b;

	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	return (x->first > y->first) - (x->first < y->first);
}

static int64_t rank_of(const int64_t *sorted, uint64_t n, double q)
{
	uint64_t k = (uint64_t)ceil(q * (double)n);

	return sorted[(k ? k : 1) - 1];
}

static void write_run_stats(struct tft_json_writer *w, const char *name, uint64_t count,
			    uint64_t traced, int64_t mean, int64_t mn, int64_t mx, int64_t p50,
			    int64_t p99, int64_t last)
{
	tft_json_write_key(w, "name");
	tft_json_write_cstr(w, name);
	tft_json_write_key(w, "count");
	tft_json_write_uint(w, count);
	tft_json_write_key(w, "traced");
	tft_json_write_uint(w, traced);
	tft_json_write_key(w, "mean_ns");
	tft_json_write_int(w, mean);
	tft_json_write_key(w, "min_ns");
	tft_json_write_int(w, mn);
	tft_json_write_key(w, "max_ns");
	tft_json_write_int(w, mx);
	tft_json_write_key(w, "p50_ns");
	tft_json_write_int(w, p50);
	tft_json_write_key(w, "p99_ns");
	tft_json_write_int(w, p99);
	tft_json_write_key(w, "last_ns");
	tft_json_write_int(w, last);
}

static void write_recent(struct tft_json_writer *w, int64_t index, int64_t start, int64_t dur,
			 bool traced)
{
	tft_json_write_begin_object(w);
	tft_json_write_key(w, "index");
	tft_json_write_int(w, index);
	tft_json_write_key(w, "start_ns");
	tft_json_write_int(w, start);
	tft_json_write_key(w, "dur_ns");
	tft_json_write_int(w, dur);
	tft_json_write_key(w, "traced");
	tft_json_write_bool(w, traced);
	tft_json_write_end_object(w);
}

/*
 * /api/runs of a file session: the steps grouped by kind (name) with one
 * sort, so that many kinds (Kineto's ProfilerStep#N: one per step) cost
 * n log n, not n per kind.
 */
static int runs_from_file(struct tft_http_req *r, int64_t recent)
{
	struct tft_error err;
	struct tft_pool_slot *slot;
	struct tft_session *s;
	struct file_kind *k = NULL;
	struct step_ref *refs = NULL;
	int64_t *durs = NULL;
	uint32_t nk = 0, n;
	struct tft_json_writer w;
	int rc = 0;

	tft_error_clear(&err);
	slot = tft_pool_acquire(&r->srv->pool, &err);
	if (!slot)
		return tft_http_reply_status(r, err.code ? err.code : TFT_EIO, &err);
	s = slot->sess;
	n = tft_session_step_count(s);
	if (n) {
		refs = malloc((size_t)n * sizeof(*refs));
		durs = malloc((size_t)n * sizeof(*durs));
		k = malloc((size_t)n * sizeof(*k)); /* at most one kind per step */
		if (!refs || !durs || !k)
			rc = TFT_ENOMEM;
	}
	if (!rc && n) {
		for (uint32_t i = 0; i < n; i++)
			refs[i] = (struct step_ref){ tft_session_step(s, i)->name, i };
		qsort(refs, n, sizeof(*refs), cmp_step_ref);
		for (uint32_t i = 0; i < n; i++) {
			const struct tft_step *st = tft_session_step(s, refs[i].pos);

			if (!i || refs[i].name != refs[i - 1].name)
				k[nk++] = (struct file_kind){ .name = refs[i].name, .first = refs[i].pos, .lo = i };
			k[nk - 1].n++;
			k[nk - 1].traced += st->traced;
			k[nk - 1].sum_ns += st->dur_ns;
			durs[i] = st->dur_ns;
		}
		qsort(k, nk, sizeof(*k), cmp_kind_count);
	}
	tft_json_write_init_mem(&w);
	if (!rc) {
		tft_json_write_begin_object(&w);
		tft_json_write_key(&w, "live");
		tft_json_write_bool(&w, false);
		tft_json_write_key(&w, "steps");
		tft_json_write_uint(&w, n);
		tft_json_write_key(&w, "generation");
		tft_json_write_uint(&w, tft_pool_gen(&r->srv->pool));
		tft_json_write_key(&w, "evicted_kinds");
		tft_json_write_uint(&w, 0);
		tft_json_write_key(&w, "runs");
		tft_json_write_begin_array(&w);
		for (uint32_t j = 0; j < nk; j++) {
			const struct step_ref *kr = refs + k[j].lo;
			int64_t *kd = durs + k[j].lo, last = kd[k[j].n - 1];
			uint64_t skip = k[j].n > (uint64_t)recent ? k[j].n - (uint64_t)recent : 0;

			tft_json_write_begin_object(&w);
			/* the last `recent` steps of the kind, in file order; then the ranks */
			tft_json_write_key(&w, "recent");
			tft_json_write_begin_array(&w);
			for (uint64_t i = skip; i < k[j].n; i++) {
				const struct tft_step *st = tft_session_step(s, kr[i].pos);

				write_recent(&w, st->index, st->start_ns, st->dur_ns, st->traced);
			}
			tft_json_write_end_array(&w);
			qsort(kd, k[j].n, sizeof(int64_t), cmp_i64);
			write_run_stats(&w, tft_session_str(s, k[j].name, NULL), k[j].n, k[j].traced,
					(int64_t)(k[j].sum_ns / (__int128)k[j].n), kd[0], kd[k[j].n - 1],
					rank_of(kd, k[j].n, 0.5), rank_of(kd, k[j].n, 0.99), last);
			tft_json_write_end_object(&w);
		}
		tft_json_write_end_array(&w);
		tft_json_write_end_object(&w);
	}
	tft_pool_release(slot);
	free(k);
	free(refs);
	free(durs);
	if (rc) {
		tft_json_write_fini(&w);
		return tft_http_reply_error(r, 503, "out of memory");
	}
	return tft_http_reply_json(r, 200, &w);
}

int tft_api_runs(struct tft_http_req *r)
{
	struct tft_live *lv = live_of(r);
	struct tft_json_writer w;
	int64_t recent;
	uint32_t order[KINDS_MAX];

	if (tft_query_get_i64(&r->query, "recent", 0, RECENT_MAX, RECENT_DEFAULT, &recent) != 0)
		return tft_http_reply_error(r, 400, "bad recent (0..1000)");
	if (!lv)
		return runs_from_file(r, recent);
	tft_json_write_init_mem(&w);
	pthread_mutex_lock(&lv->agg_lock);
	tft_json_write_begin_object(&w);
	tft_json_write_key(&w, "live");
	tft_json_write_bool(&w, true);
	tft_json_write_key(&w, "steps");
	tft_json_write_uint(&w, lv->total_steps);
	tft_json_write_key(&w, "generation");
	tft_json_write_uint(&w, tft_pool_gen(&r->srv->pool));
	tft_json_write_key(&w, "evicted_kinds");
	tft_json_write_uint(&w, lv->evicted_kinds);
	tft_json_write_key(&w, "runs");
	tft_json_write_begin_array(&w);
	for (uint32_t i = 0; i < lv->nkinds; i++)
		order[i] = i;
	/* By count, descending (insertion sort: at most 64 kinds). */
	for (uint32_t i = 1; i < lv->nkinds; i++) {
		uint32_t v = order[i], j = i;
		while (j > 0 && lv->kinds[order[j - 1]].count < lv->kinds[v].count) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = v;
	}
	for (uint32_t i = 0; i < lv->nkinds; i++) {
		const struct run_kind *k = &lv->kinds[order[i]];
		uint32_t m = k->rn < (uint32_t)recent ? k->rn : (uint32_t)recent;
		if (!k->count)
			continue;
		tft_json_write_begin_object(&w);
		write_run_stats(&w, k->name, k->count, k->traced, (int64_t)(k->sum_ns / k->count),
				k->min_ns, k->max_ns, hist_rank(k, 0.5), hist_rank(k, 0.99), k->last_ns);
		tft_json_write_key(&w, "recent");
		tft_json_write_begin_array(&w);
		for (uint32_t j = 0; j < m; j++) {
			const struct recent_ent *e =
				&k->recent[(k->rhead + RECENT_MAX - m + j) % RECENT_MAX];
			write_recent(&w, e->index, e->start_ns, e->dur_ns, e->traced);
		}
		tft_json_write_end_array(&w);
		tft_json_write_end_object(&w);
	}
	tft_json_write_end_array(&w);
	tft_json_write_end_object(&w);
	pthread_mutex_unlock(&lv->agg_lock);
	return tft_http_reply_json(r, 200, &w);
}

int tft_api_trace(struct tft_http_req *r)
{
	struct tft_live *lv = live_of(r);
	struct body_field f[2] = { { .key = "steps", .type = TFT_JSON_NUMBER },
				   { .key = "every", .type = TFT_JSON_NUMBER } };
	struct tft_json_writer w;
	uint64_t req = 0;

	if (!lv)
		return tft_http_reply_error(r, 404, "not a live session");
	if (parse_body(r, f, 2) != 0)
		return tft_http_reply_error(r, 400, "bad request body");
	if (!f[0].present && !f[1].present)
		return tft_http_reply_error(r, 400, "give steps or every");
	if ((f[0].present && (f[0].i < 0 || f[0].i > 100000)) ||
	    (f[1].present && (f[1].i < 0 || f[1].i > 1000000)))
		return tft_http_reply_error(r, 400, "steps must be 0..100000, every 0..1000000");
	if (f[0].present)
		req = tft_live_trace_next(lv, (int)f[0].i);
	if (f[1].present)
		tft_live_trace_every(lv, (int)f[1].i);
	tft_json_write_init_mem(&w);
	tft_json_write_begin_object(&w);
	tft_json_write_key(&w, "request");
	if (req)
		tft_json_write_uint(&w, req);
	else
		tft_json_write_null(&w);
	tft_json_write_key(&w, "pending");
	tft_json_write_int(&w, atomic_load(&lv->pending));
	tft_json_write_key(&w, "every");
	tft_json_write_int(&w, atomic_load(&lv->every));
	tft_json_write_end_object(&w);
	return tft_http_reply_json(r, 200, &w);
}

int tft_api_tracing(struct tft_http_req *r)
{
	struct tft_live *lv = live_of(r);
	struct body_field f[1] = { { .key = "on", .type = TFT_JSON_TRUE } };
	struct tft_json_writer w;

	if (!lv)
		return tft_http_reply_error(r, 404, "not a live session");
	if (parse_body(r, f, 1) != 0 || !f[0].present)
		return tft_http_reply_error(r, 400, "give on: true or false");
	tft_live_set_tracing(lv, f[0].b);
	tft_json_write_init_mem(&w);
	tft_json_write_begin_object(&w);
	tft_json_write_key(&w, "tracing");
	tft_json_write_bool(&w, f[0].b);
	tft_json_write_end_object(&w);
	return tft_http_reply_json(r, 200, &w);
}

int tft_api_save(struct tft_http_req *r)
{
	struct tft_live *lv = live_of(r);
	struct body_field *f;
	struct tft_json_writer w;
	struct tft_error err;
	char out[4200];
	uint64_t bytes = 0;
	bool given;
	int rc;

	if (!lv)
		return tft_http_reply_error(r, 404, "not a live session");
	f = calloc(1, sizeof(*f));
	if (!f)
		return tft_http_reply_error(r, 503, "out of memory");
	f->key = "path";
	f->type = TFT_JSON_STRING;
	if (parse_body(r, f, 1) != 0) {
		free(f);
		return tft_http_reply_error(r, 400, "bad request body");
	}
	tft_error_clear(&err);
	given = f->present && f->s[0];
	rc = tft_live_save(lv, given ? f->s : NULL, out, sizeof(out), &bytes, &err);
	free(f);
	if (rc == TFT_EINVAL)
		/* Fixed text: the message would echo the requested path. */
		return tft_http_reply_error(r, 400, "bad path: it must end in .tft and not exist");
	if (rc)
		return tft_http_reply_error(r, 500, "the copy failed");
	tft_json_write_init_mem(&w);
	tft_json_write_begin_object(&w);
	/* The path only when the server chose it (request input is never echoed). */
	tft_json_write_key(&w, "path");
	tft_json_write_cstr(&w, given ? NULL : out);
	tft_json_write_key(&w, "bytes");
	tft_json_write_uint(&w, bytes);
	tft_json_write_end_object(&w);
	return tft_http_reply_json(r, 200, &w);
}

int tft_api_stop(struct tft_http_req *r)
{
	struct tft_live *lv = r->srv->pool.src.live;
	struct tft_json_writer w;

	if (!lv)
		return tft_http_reply_error(r, 404, "not a live session");
	/* The follower stops the server a moment later, once this reply is out. */
	atomic_store(&lv->stop_at_ns, mono_ns() + 200 * 1000000LL);
	atomic_store(&lv->stop_requested, true);
	tft_json_write_init_mem(&w);
	tft_json_write_begin_object(&w);
	tft_json_write_key(&w, "stopping");
	tft_json_write_bool(&w, true);
	tft_json_write_end_object(&w);
	return tft_http_reply_json(r, 200, &w);
}
