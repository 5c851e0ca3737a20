/* SPDX-License-Identifier: MIT */
/*
 * Session readers for the server's worker threads. A tft_session is not
 * thread-safe: each slot holds one reader and a mutex, and a request works
 * on the slot it acquired. With a borrowed shared session there is one slot,
 * so requests are serialised; otherwise there is one reader per worker. A
 * job directory (job/job.h) is opened once, its ranks matched and aligned
 * once, and each reader is a view of it.
 */
#include <stdlib.h>
#include <string.h>

#include "job/job.h"
#include "query/viewport.h"
#include "server/api.h"

static struct tft_session *open_reader(struct tft_pool *p, struct tft_error *err)
{
	if (p->src.open)
		return p->src.open(p->src.ctx, err);
	if (p->job)
		return tft_job_view(p->job, atomic_load(&p->raw), false, err);
	if (p->src.path)
		return tft_session_open(p->src.path, err);
	tft_error_set(err, TFT_EINVAL, -1, "the server has no session to serve");
	return NULL;
}

static void close_reader(struct tft_pool *p, struct tft_session *s)
{
	if (!s)
		return;
	if (p->src.close)
		p->src.close(p->src.ctx, s);
	else
		tft_session_close(s);
}

int tft_pool_init(struct tft_pool *p, const struct tft_server_source *src, unsigned n,
		  struct tft_error *err)
{
	memset(p, 0, sizeof(*p));
	p->src = *src;
	p->shared = src->session != NULL;
	if (!p->shared && !src->open && !src->path)
		return tft_error_set(err, TFT_EINVAL, -1, "the server has no session to serve");
	p->n = p->shared ? 1 : (n ? n : 1);
	p->slots = calloc(p->n, sizeof(*p->slots));
	if (!p->slots)
		return tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
	for (unsigned i = 0; i < p->n; i++) {
		pthread_mutex_init(&p->slots[i].lock, NULL);
		p->slots[i].pool = p;
	}
	atomic_init(&p->next, 0);
	atomic_init(&p->gen, 0);
	atomic_init(&p->raw, false);
	if (p->shared) {
		p->slots[0].sess = src->session;
		return 0;
	}
	if (!src->open && src->path && tft_job_is_dir(src->path)) {
		p->job = tft_job_open(src->path, NULL, err);
		if (!p->job) {
			tft_pool_fini(p);
			return err && err->code ? err->code : TFT_EIO;
		}
	}
	/* Open the first reader now, so a bad file fails at start, not at the first request. */
	p->slots[0].sess = open_reader(p, err);
	if (!p->slots[0].sess) {
		tft_pool_fini(p);
		return err && err->code ? err->code : TFT_EIO;
	}
	return 0;
}

void tft_pool_fini(struct tft_pool *p)
{
	if (!p->slots)
		return;
	for (unsigned i = 0; i < p->n; i++) {
		struct tft_pool_slot *s = &p->slots[i];
		if (!p->shared)
			close_reader(p, s->sess);
		tft_qry_viewport_scratch_free(s->scratch);
		pthread_mutex_destroy(&s->lock);
	}
	free(p->slots);
	p->slots = NULL;
	tft_job_close(p->job); /* (after its views) */
	p->job = NULL;
}

struct tft_pool_slot *tft_pool_acquire(struct tft_pool *p, struct tft_error *err)
{
	unsigned start = atomic_fetch_add(&p->next, 1) % p->n;
	struct tft_pool_slot *s = NULL;
	uint64_t gen;

	for (unsigned i = 0; i < p->n; i++) {
		struct tft_pool_slot *c = &p->slots[(start + i) % p->n];
		if (pthread_mutex_trylock(&c->lock) == 0) {
			s = c;
			break;
		}
	}
	if (!s) {
		s = &p->slots[start];
		pthread_mutex_lock(&s->lock);
	}
	if (!s->sess) {
		uint64_t g = tft_pool_gen(p); /* before: the reader holds at least this generation */

		s->sess = open_reader(p, err);
		if (!s->sess) {
			pthread_mutex_unlock(&s->lock);
			return NULL;
		}
		s->gen = g;
	}
	gen = tft_pool_gen(p);
	if (s->gen != gen && p->job && tft_job_view_is_raw(s->sess) != atomic_load(&p->raw)) {
		/* the clock changed: a view on the other one */
		struct tft_session *v = open_reader(p, err);
		if (!v) {
			pthread_mutex_unlock(&s->lock);
			return NULL;
		}
		close_reader(p, s->sess);
		s->sess = v;
	}
	if (s->gen != gen) {
		int rc = tft_session_refresh(s->sess, err);
		if (rc != 0) {
			pthread_mutex_unlock(&s->lock);
			return NULL;
		}
		s->gen = gen;
	}
	return s;
}

void tft_pool_release(struct tft_pool_slot *s)
{
	if (s)
		pthread_mutex_unlock(&s->lock);
}

void tft_pool_bump(struct tft_pool *p)
{
	atomic_fetch_add(&p->gen, 1);
}

bool tft_pool_can_open(const struct tft_pool *p)
{
	return p->src.open || p->src.path;
}

struct tft_session *tft_pool_open_private(struct tft_pool *p, struct tft_error *err)
{
	return open_reader(p, err); /* a fresh reader sees everything committed */
}

void tft_pool_close_private(struct tft_pool *p, struct tft_session *s)
{
	close_reader(p, s);
}

bool tft_pool_set_raw(struct tft_pool *p, bool raw)
{
	if (!p->job)
		return false;
	if (atomic_exchange(&p->raw, raw) != raw)
		tft_pool_bump(p);
	return true;
}
