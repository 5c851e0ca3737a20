/* SPDX-License-Identifier: MIT */
/*
 * The live hub's life (server/live.h): start, stop, serving another file,
 * and the follower thread, which takes the finished steps from the hot path,
 * aggregates them, sends each out once it is in the file, the status now and
 * then, and the streams' `end`.
 */
#include <stdio.h>
#include <stdlib.h>

#include "runtime/rt.h"
#include "server/live_int.h"

/* Bump the readers' generation (srv_lock held). */
void tft_live_bump_locked(struct tft_live *lv)
{
	if (lv->srv) {
		tft_pool_bump(&lv->srv->pool);
		atomic_store(&lv->gen_cache, tft_pool_gen(&lv->srv->pool));
	}
}

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
		tft_live_aggregate(lv, d);
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
		tft_live_bump_locked(lv);
		pthread_mutex_unlock(&lv->srv_lock);
		*last_bump = now;
		*last_events = st.events;
	}
	for (uint32_t i = 0; i < released; i++) {
		const struct done_step *d = &lv->landing[i];
		struct tft_json_writer w;
		tft_json_write_init_mem(&w);
		write_run(&w, d);
		tft_live_push_json(lv, "run", &w);
		if (d->traced)
			tft_live_tstep_released(lv, d);
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
		tft_live_push_status(lv);
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
	follower_tick(lv, tft_live_mono_ns(), &last_status, &last_bump, &last_events, true);
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
	tft_live_push_json(lv, "end", &w);
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
		int64_t now = tft_live_mono_ns(), until = now + TICK_NS;
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
		tft_live_kind_free(&lv->kinds[i]);
	free(lv->queue);
	free(lv->spare);
	free(lv->landing);
	free(lv->ring);
	free(lv->tsteps);
	tft_live_imports_free(lv->imp);
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
	lv->imp = tft_live_imports_create();
	if (!lv->queue || !lv->spare || !lv->landing || !lv->ring || !lv->tsteps || !lv->imp) {
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
	int64_t until = tft_live_mono_ns() + timeout_ms * 1000000;
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
		tft_live_push_json(lv, "end", &w);
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
