/* SPDX-License-Identifier: MIT */
/*
 * The live hub's events (live_int.h): the ring of server-sent events kept
 * for replay, the status object (GET /api/live/status, the `status` event)
 * and the event streams (GET /api/live), which suspend while there is
 * nothing to send and end when the server stops.
 */
#include <stdio.h>
#include <stdlib.h>

#include "runtime/rt.h"
#include "server/live_int.h"

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

static const char *state_name(int st)
{
	return st == TFT_RUNTIME_RUNNING ? "running" : st == TFT_RUNTIME_DISABLED ? "disabled" : "off";
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

void tft_live_write_request(struct tft_json_writer *w, const struct tft_live_request *q)
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
	tft_live_write_request(w, &s->request);
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

void tft_live_push_status(struct tft_live *lv)
{
	char buf[SLOT_BYTES];
	size_t n = format_status(lv, buf, sizeof(buf) - 64);

	if (n)
		push_event(lv, "status", buf, n);
}

void tft_live_push_json(struct tft_live *lv, const char *type, struct tft_json_writer *w)
{
	size_t len;
	const char *p = tft_json_write_borrow(w, &len);

	if (!w->status)
		push_event(lv, type, p, len);
	tft_json_write_fini(w);
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
	struct tft_live *lv = tft_live_of(r);
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

/*
 * POST /api/live/ended: a page read its stream's `end` and will ask nothing
 * more. The server's stop waits for these (tft_server_stop), so that what a
 * page asked before it read `end` is answered, not refused.
 */
int tft_api_live_ended(struct tft_http_req *r)
{
	struct tft_server *srv = r->srv;
	struct tft_json_writer w;

	pthread_mutex_lock(&srv->job_lock);
	srv->end_read++;
	pthread_cond_broadcast(&srv->job_cond);
	pthread_mutex_unlock(&srv->job_lock);
	tft_json_write_init_mem(&w);
	tft_json_write_begin_object(&w);
	tft_json_write_end_object(&w);
	return tft_http_reply_json(r, 200, &w);
}

void tft_api_live_closing(struct tft_server *srv)
{
	struct tft_live *lv = srv->pool.src.live;
	int64_t until = tft_live_mono_ns() + 2000000000LL;
	struct timespec ts = { until / 1000000000, until % 1000000000 };

	if (!lv)
		return;
	pthread_mutex_lock(&lv->ev_lock);
	lv->closing = true;
	/*
	 * Each open stream is sent its `end`: the stop waits for as many pages to
	 * say they read it (end_read counts from the server's start: a page may
	 * read an `end` pushed before this stop began, and say so before now).
	 */
	pthread_mutex_lock(&srv->job_lock);
	srv->end_sent = lv->nclients;
	pthread_mutex_unlock(&srv->job_lock);
	wake_streams_locked(lv);
	/* Each stream reads once more, ends, and its response is freed. */
	while (lv->nclients > 0)
		if (pthread_cond_timedwait(&lv->ev_cond, &lv->ev_lock, &ts) != 0)
			break;
	wake_streams_locked(lv); /* never leave one suspended for MHD_stop_daemon */
	lv->closing = false;     /* a restarted server streams again */
	pthread_mutex_unlock(&lv->ev_lock);
}
