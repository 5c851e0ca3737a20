/* SPDX-License-Identifier: MIT */
/*
 * The reader / parser / committer pipeline: batches of parsed events (and the
 * decoded strings they own), the committer thread that commits them in
 * order, the reader thread that reads and inflates ahead into windows that
 * circulate with the batches, and the parser's side of it (flush, refill,
 * drain). parse_all() runs the parser over a document with whichever of
 * these threads the input is worth.
 */
#include <pthread.h>

#include "collect/chrome/chrome_int.h"

static struct batch *batch_new(void)
{
	return calloc(1, sizeof(struct batch));
}

/* Empty the batch for reuse (its window must have been taken). */
static void batch_reset(struct batch *b)
{
	struct sblock *k = b->strs;

	if (k) {
		for (struct sblock *o = k->next, *n; o; o = n) {
			n = o->next;
			free(o);
		}
		k->next = NULL;
		k->used = 0;
	}
	b->nev = 0;
	b->npargs = 0;
}

static void batch_free(struct batch *b)
{
	if (!b)
		return;
	for (struct sblock *k = b->strs, *n; k; k = n) {
		n = k->next;
		free(k);
	}
	tft_json_window_free(&b->win);
	free(b->ev);
	free(b->pargs);
	free(b);
}

/* Copy s into the batch (s then points at the copy). 0 or TFT_ENOMEM. */
int tft_chrome_batch_keep(struct batch *b, struct tft_json_str *s)
{
	struct sblock *k = b->strs;

	if (!k || k->cap - k->used < s->len) {
		size_t cap = s->len > STR_BLOCK ? s->len : STR_BLOCK;
		struct sblock *nk = malloc(sizeof(*nk) + cap);
		if (!nk)
			return TFT_ENOMEM;
		nk->next = k;
		nk->cap = cap;
		nk->used = 0;
		b->strs = k = nk;
	}
	memcpy(k->data + k->used, s->ptr, s->len);
	s->ptr = k->data + k->used;
	k->used += s->len;
	return 0;
}

/*
 * With threads, the parser (the caller's thread) only parses. A reader
 * thread reads (and inflates) the input into windows ahead of it; the
 * parser takes a filled window at each refill and hands the previous one
 * on with its last batch; a committer thread commits batches in order and
 * puts their windows in the pool the reader fills again. Batches and
 * windows are few and recycled, so memory stays bounded.
 */
#define READ_AHEAD 2u                  /* filled windows waiting for the parser */
#define MAX_WINDOWS (MAX_BATCHES + 4u) /* windows in circulation (see reader_main) */

/* A window filled by the reader: new bytes at buf[at .. at + n). */
struct filled {
	struct tft_json_window win;
	size_t at, n;
	bool eof;
	uint64_t raw_offset; /* raw input bytes read so far (progress) */
};

/* All fields below are guarded by mu. */
struct pipe {
	struct chrome *c;            /* borrowed */
	struct tft_source *src;      /* borrowed; read by the reader thread only while it runs */
	pthread_t committer, reader;
	bool have_reader;
	pthread_mutex_t mu;
	pthread_cond_t work;         /* committer waits: a batch queued, or done */
	pthread_cond_t idle;         /* parser waits: a batch freed, the queue drained */
	pthread_cond_t filled_cv;    /* parser waits: a window filled */
	pthread_cond_t room;         /* reader waits: a window free and room to fill it */
	struct batch *head, *tail;   /* owned; queued, oldest first */
	struct batch *free;          /* owned; free list */
	struct tft_json_window pool[MAX_WINDOWS]; /* owned; empty windows */
	unsigned npool, nwindows;    /* in the pool; allocated by the reader, in all */
	struct filled ready[READ_AHEAD]; /* owned; filled, oldest first */
	unsigned nready;
	size_t win_size, win_head;   /* reader windows: bytes, room kept in front */
	bool busy;                   /* the committer holds a batch */
	bool done;                   /* no more batches will come; the reader stops too */
	bool read_end;               /* the reader has stopped (end of input or error) */
	int rc;                      /* the committer's first error (message in c->err) */
	int64_t done_off;            /* input before this offset is committed */
	int read_rc;                 /* the reader's error, after the windows it filled */
	struct tft_error read_err;
};

static void *committer_main(void *arg)
{
	struct pipe *q = arg;

	pthread_mutex_lock(&q->mu);
	for (;;) {
		struct batch *b;
		int rc;
		while (!q->head && !q->done)
			pthread_cond_wait(&q->work, &q->mu);
		if (!q->head)
			break;
		b = q->head;
		q->head = b->next;
		if (!q->head)
			q->tail = NULL;
		q->busy = true;
		rc = q->rc;
		pthread_mutex_unlock(&q->mu);

		if (!rc) /* after a failure batches are only recycled */
			rc = tft_chrome_commit_batch(q->c, b);
		struct tft_json_window win = b->win;
		b->win.buf = NULL;
		b->win.cap = 0;
		batch_reset(b);

		pthread_mutex_lock(&q->mu);
		if (rc && !q->rc)
			q->rc = rc;
		q->done_off = b->end_off;
		if (win.buf && q->npool < MAX_WINDOWS) {
			q->pool[q->npool++] = win;
			pthread_cond_signal(&q->room);
		} else {
			tft_json_window_free(&win);
		}
		b->next = q->free;
		q->free = b;
		q->busy = false;
		pthread_cond_signal(&q->idle);
	}
	pthread_mutex_unlock(&q->mu);
	return NULL;
}

/*
 * Fill windows ahead of the parser until the input ends, fails, or the
 * parser is done. Windows in circulation: the parser's, one per queued or
 * committing batch (MAX_BATCHES), READ_AHEAD filled ones, and the one
 * being filled: MAX_WINDOWS is enough for the reader never to wait on a
 * window that only the parser could release.
 */
static void *reader_main(void *arg)
{
	struct pipe *q = arg;

	pthread_mutex_lock(&q->mu);
	while (!q->done) {
		struct filled f;
		memset(&f, 0, sizeof(f));
		if (q->nready >= READ_AHEAD || (!q->npool && q->nwindows >= MAX_WINDOWS)) {
			pthread_cond_wait(&q->room, &q->mu);
			continue;
		}
		if (q->npool)
			f.win = q->pool[--q->npool];
		else
			q->nwindows++;
		pthread_mutex_unlock(&q->mu);

		int rc = 0;
		if (!f.win.buf || f.win.cap < q->win_head + 1) {
			tft_json_window_free(&f.win);
			f.win.buf = malloc(q->win_size + TFT_JSON_PAD);
			f.win.cap = q->win_size;
			if (f.win.buf)
				memset(f.win.buf + f.win.cap, 0, TFT_JSON_PAD);
			else
				rc = tft_error_set(&q->read_err, TFT_ENOMEM, -1, "out of memory for a JSON window");
		}
		f.at = q->win_head;
		while (!rc && f.at + f.n < f.win.cap) {
			size_t got;
			rc = tft_source_read(q->src, f.win.buf + f.at + f.n, f.win.cap - f.at - f.n, &got,
					     &q->read_err);
			if (!rc && got == 0) {
				f.eof = true;
				break;
			}
			f.n += got;
		}
		f.raw_offset = tft_source_raw_offset(q->src);

		pthread_mutex_lock(&q->mu);
		if (rc) {
			q->read_rc = rc;
			if (f.win.buf && q->npool < MAX_WINDOWS)
				q->pool[q->npool++] = f.win;
			else
				tft_json_window_free(&f.win);
		} else {
			q->ready[q->nready++] = f;
		}
		pthread_cond_signal(&q->filled_cv);
		if (rc || f.eof)
			break;
	}
	q->read_end = true;
	pthread_cond_signal(&q->filled_cv);
	pthread_mutex_unlock(&q->mu);
	return NULL;
}

static void pipe_destroy(struct pipe *q)
{
	for (struct batch *b = q->free, *n; b; b = n) {
		n = b->next;
		batch_free(b);
	}
	for (struct batch *b = q->head, *n; b; b = n) {
		n = b->next;
		batch_free(b);
	}
	for (unsigned i = 0; i < q->npool; i++)
		tft_json_window_free(&q->pool[i]);
	for (unsigned i = 0; i < q->nready; i++)
		tft_json_window_free(&q->ready[i].win);
	pthread_cond_destroy(&q->work);
	pthread_cond_destroy(&q->idle);
	pthread_cond_destroy(&q->filled_cv);
	pthread_cond_destroy(&q->room);
	pthread_mutex_destroy(&q->mu);
	free(q);
}

/* Let the threads finish (the committer: what is queued) and join them; the committer's error or 0. */
static int pipe_stop(struct pipe *q)
{
	pthread_mutex_lock(&q->mu);
	q->done = true;
	pthread_cond_signal(&q->work);
	pthread_cond_signal(&q->room);
	pthread_mutex_unlock(&q->mu);
	pthread_join(q->committer, NULL);
	if (q->have_reader)
		pthread_join(q->reader, NULL);
	return q->rc;
}

/*
 * Start the committer (and, unless the reader r has seen the whole input,
 * the reader) for c; NULL when that is not possible (run on one thread).
 */
static struct pipe *pipe_start(struct chrome *c, const struct tft_json_reader *r)
{
	struct pipe *q = calloc(1, sizeof(*q));

	if (!q)
		return NULL;
	q->c = c;
	q->src = r->src;
	/* reader windows: the parser's block size, plus room for a cut event in front */
	q->win_head = r->cap / 8 < 8 ? 8 : r->cap / 8 > (64u << 10) ? (64u << 10) : r->cap / 8;
	q->win_size = q->win_head + r->cap;
	if (pthread_mutex_init(&q->mu, NULL)) {
		free(q);
		return NULL;
	}
	if (pthread_cond_init(&q->work, NULL) || pthread_cond_init(&q->idle, NULL) ||
	    pthread_cond_init(&q->filled_cv, NULL) || pthread_cond_init(&q->room, NULL)) {
		/* (a failed pthread_cond_init leaves nothing to destroy on Linux) */
		pthread_mutex_destroy(&q->mu);
		free(q);
		return NULL;
	}
	/* MAX_BATCHES - 1 on the free list: the parser holds the other one */
	for (unsigned i = 0; i + 1 < MAX_BATCHES; i++) {
		struct batch *b = batch_new();
		if (!b) {
			pipe_destroy(q);
			return NULL;
		}
		b->next = q->free;
		q->free = b;
	}
	if (pthread_create(&q->committer, NULL, committer_main, q)) {
		pipe_destroy(q);
		return NULL;
	}
	if (!r->eof) {
		if (pthread_create(&q->reader, NULL, reader_main, q) == 0) {
			q->have_reader = true;
		} else {
			pipe_stop(q);
			pipe_destroy(q);
			return NULL;
		}
	}
	return q;
}

/* Queue b; returns a free batch in *next (waits for one), or the committer's error. */
static int pipe_put(struct pipe *q, struct batch *b, struct batch **next)
{
	int rc;

	pthread_mutex_lock(&q->mu);
	b->next = NULL;
	if (q->tail)
		q->tail->next = b;
	else
		q->head = b;
	q->tail = b;
	pthread_cond_signal(&q->work);
	while (!q->free)
		pthread_cond_wait(&q->idle, &q->mu);
	*next = q->free;
	q->free = (*next)->next;
	rc = q->rc;
	pthread_mutex_unlock(&q->mu);
	return rc;
}

/* Wait until every queued batch is committed; the committer's error or 0. */
static int pipe_wait_idle(struct pipe *q)
{
	int rc;

	pthread_mutex_lock(&q->mu);
	while (q->head || q->busy)
		pthread_cond_wait(&q->idle, &q->mu);
	rc = q->rc;
	pthread_mutex_unlock(&q->mu);
	return rc;
}

/* The next filled window (waits for it); 0, or the reader's error (in *err). */
static int pipe_take_filled(struct pipe *q, struct filled *f, struct tft_error *err)
{
	int rc = 0;

	pthread_mutex_lock(&q->mu);
	while (!q->nready && !q->read_end)
		pthread_cond_wait(&q->filled_cv, &q->mu);
	if (q->nready) {
		*f = q->ready[0];
		memmove(q->ready, q->ready + 1, (q->nready - 1) * sizeof(*q->ready));
		q->nready--;
		pthread_cond_signal(&q->room);
	} else {
		rc = q->read_rc ? q->read_rc : TFT_EIO;
		if (err)
			*err = q->read_err;
		if (!q->read_rc)
			tft_error_set(err, TFT_EIO, -1, "input reader stopped");
	}
	pthread_mutex_unlock(&q->mu);
	return rc;
}

/* Input before this offset is committed (its strings are no longer needed). */
static size_t pipe_done_off(struct pipe *q)
{
	int64_t off;

	pthread_mutex_lock(&q->mu);
	off = q->done_off;
	pthread_mutex_unlock(&q->mu);
	return off > 0 ? (size_t)off : 0;
}

/* Give an unused window back to the pool. */
static void pipe_put_window(struct pipe *q, struct tft_json_window *w)
{
	pthread_mutex_lock(&q->mu);
	if (w->buf && q->npool < MAX_WINDOWS) {
		q->pool[q->npool++] = *w;
		pthread_cond_signal(&q->room);
	} else {
		tft_json_window_free(w);
	}
	w->buf = NULL;
	w->cap = 0;
	pthread_mutex_unlock(&q->mu);
}

/* Hand the current batch over: commit it now, or queue it for the committer. */
int tft_chrome_p_flush(struct parser *p)
{
	struct batch *b = p->cur;
	int rc;

	b->end_off = tft_json_offset(&p->r); /* its events all end before this */
	if (p->map.base)
		b->raw_offset = (uint64_t)b->end_off;
	else
		b->raw_offset = p->pipe ? p->raw_offset : tft_source_raw_offset(p->r.src);
	if (!p->pipe) {
		rc = tft_chrome_commit_batch(p->c, b);
		batch_reset(b);
		tft_source_map_release(&p->map, (size_t)b->end_off);
		return rc;
	}
	rc = pipe_put(p->pipe, b, &p->cur);
	if (p->map.base)
		tft_source_map_release(&p->map, pipe_done_off(p->pipe));
	return rc;
}

/*
 * After TFT_JSON_MORE (nothing since the mark is kept): read more input.
 * On one thread the batch is committed first and the window refilled in
 * place. With threads the reader has filled the next window; the previous
 * one, which the batch borrows from, leaves with the batch.
 */
int tft_chrome_p_refill(struct parser *p)
{
	struct filled f;
	int rc;

	if (!p->pipe) {
		if (p->cur->nev && (rc = tft_chrome_p_flush(p)))
			return rc;
		return tft_json_refill(&p->r, p->err);
	}
	if ((rc = pipe_take_filled(p->pipe, &f, p->err)))
		return rc;
	rc = tft_json_refill_from(&p->r, &f.win, f.at, f.n, f.eof, p->err);
	if (rc) {
		pipe_put_window(p->pipe, &f.win);
		return rc;
	}
	p->raw_offset = f.raw_offset;
	p->cur->win = f.win; /* the previous window, released with the batch */
	return tft_chrome_p_flush(p);
}

/* tft_chrome_p_refill() as the reader's refill hook (tft_json_skip_stream refills by itself). */
static int p_refill_hook(void *ctx, struct tft_error *err)
{
	(void)err; /* the parser's own: p->err */
	return tft_chrome_p_refill(ctx);
}

/* Commit everything parsed so far; afterwards the parser may touch c and the writer. */
int tft_chrome_p_drain(struct parser *p)
{
	int rc;

	if (p->cur->nev == 0 && !p->cur->win.buf && !p->pipe)
		return 0;
	if ((p->cur->nev || p->cur->win.buf) && (rc = tft_chrome_p_flush(p)))
		return rc;
	return p->pipe ? pipe_wait_idle(p->pipe) : 0;
}

/* Run the parser over the document (the committer, if any, on a second thread). */
int tft_chrome_parse_all(struct chrome *c, struct tft_source *src,
			 const struct tft_chrome_opts *copts, struct tft_error *err)
{
	struct parser p;
	int threads = copts ? copts->threads : 0;
	int rc;

	memset(&p, 0, sizeof(p));
	p.c = c;
	p.err = err;
	p.cur = batch_new();
	if (!p.cur)
		return tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
	if (threads == 0) {
		/* worth threads: large or compressed inputs (known size 0: a pipe) */
		uint64_t size = tft_source_raw_size(src);
		threads = tft_source_is_gzip(src) || size == 0 || size >= PIPELINE_MIN_BYTES ? 2 : 1;
	}
	struct tft_json_reader_opts ro = { 0 };
	if (copts && copts->reader)
		ro = *copts->reader;
	/* a plain file: parsed in place, mapped (no read() copies, no windows) */
	if (!ro.block_size && tft_source_raw_size(src) >= PIPELINE_MIN_BYTES &&
	    (rc = tft_source_map(src, &p.map, err)) != 0) {
		if (rc < 0)
			goto out;
		tft_json_reader_init_mem(&p.r, p.map.data, p.map.len, src, &ro);
		rc = 0;
	} else {
		if (threads > 1 && !ro.block_size)
			ro.block_size = PIPE_BLOCK;
		if ((rc = tft_json_reader_init(&p.r, src, &ro, err)))
			goto out;
	}
	/*
	 * Store errors go to berr: the committer works on input that precedes
	 * what the parser is reading, so its error (once everything parsed
	 * before a parse error is committed) is the first one in the input,
	 * whatever the batch boundaries and threads.
	 */
	tft_error_clear(&c->berr);
	c->err = &c->berr;
	if (threads > 1)
		p.pipe = pipe_start(c, &p.r); /* NULL: one thread after all */
	p.r.refill_hook = p_refill_hook;
	p.r.refill_ctx = &p;
	rc = tft_chrome_read_document(&p);
	if (rc)
		(void)tft_chrome_p_drain(&p);
	if (p.pipe) {
		pipe_stop(p.pipe);
		pipe_destroy(p.pipe);
	}
	c->err = err;
	if (c->berr.code) {
		if (err)
			*err = c->berr;
		rc = c->berr.code;
	}
	c->truncated = p.r.truncated;
	c->events += p.nonobj;
	c->skipped += (int64_t)p.nonobj;
out:
	batch_free(p.cur);
	tft_json_reader_fini(&p.r);
	tft_source_unmap(&p.map);
	return rc;
}
