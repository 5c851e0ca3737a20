/* SPDX-License-Identifier: MIT */
/*
 * Sorter: fixed-size records + an args arena under a memory budget; a full
 * buffer is sorted per track and spilled as chunk-encoded runs to an
 * unlinked temp file; finish() k-way merges each track's runs into the writer.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "store/chunk.h"
#include "store/sorter.h"

#define DEFAULT_BUDGET TFT_SORTER_DEFAULT_BUDGET
#define MIN_BUDGET ((size_t)16 << 10)
#define RUN_CHUNK_EVENTS 4096u
#define SPILL_ZSTD_LEVEL 1

struct srec {
	int64_t ts, dur;
	double value;
	uint32_t track, name, cat, count;
	uint32_t args_off; /* index into the args arena */
	uint16_t nargs;
	uint8_t kind, flags;
};

/* Sort key; idx is the record's position = arrival order within the buffer. */
struct skey {
	int64_t ts, dur;
	uint32_t idx, pad;
};

/* Bytes charged per buffered event: the record plus two sort keys. */
#define REC_COST (sizeof(struct srec) + 2 * sizeof(struct skey))

struct spill_chunk {
	uint32_t track, n;
	uint64_t off; /* in the scratch file */
	uint32_t len;
};

struct run {
	uint64_t base_seq;    /* seq of the buffer's first event */
	size_t first, end;    /* its chunks in s->chunks[first..end) */
};

struct tft_sorter {
	struct tft_writer *w; /* borrowed */
	size_t budget;
	struct srec *recs; /* owned */
	size_t n, cap;
	struct tft_arg *args; /* owned arena */
	size_t nargs, cap_args;
	uint32_t ntracks; /* 1 + largest track id buffered */
	uint64_t seq;     /* events pushed since the last finish */
	uint64_t base_seq; /* seq of recs[0] */
	int fd;            /* scratch file, -1 until the first spill */
	uint64_t file_off;
	struct spill_chunk *chunks; /* owned */
	size_t nchunks, cap_chunks;
	struct run *runs; /* owned */
	size_t nruns, cap_runs;
	ZSTD_CCtx *cctx; /* owned, created on first spill */
	struct skey *keys, *tmp; /* owned sort buffers, cap_keys each; kept across spills */
	size_t cap_keys;
	struct tft_chunk_enc enc;
	struct tft_chunk_buf scratch, blob;
};

struct tft_sorter *tft_sorter_create(struct tft_writer *w, size_t mem_budget)
{
	struct tft_sorter *s;

	if (!w)
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->w = w;
	s->budget = mem_budget ? mem_budget : DEFAULT_BUDGET;
	if (s->budget < MIN_BUDGET)
		s->budget = MIN_BUDGET;
	s->fd = -1;
	tft_chunk_enc_init(&s->enc);
	return s;
}

static void release_all(struct tft_sorter *s)
{
	free(s->recs);
	s->recs = NULL;
	s->n = s->cap = 0;
	free(s->args);
	s->args = NULL;
	s->nargs = s->cap_args = 0;
	free(s->chunks);
	s->chunks = NULL;
	s->nchunks = s->cap_chunks = 0;
	free(s->runs);
	s->runs = NULL;
	s->nruns = s->cap_runs = 0;
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	s->file_off = 0;
	s->ntracks = 0;
	s->seq = s->base_seq = 0;
	tft_chunk_enc_reset(&s->enc, 1);
	tft_chunk_buf_free(&s->scratch);
	tft_chunk_buf_free(&s->blob);
	free(s->keys);
	free(s->tmp);
	s->keys = s->tmp = NULL;
	s->cap_keys = 0;
}

void tft_sorter_destroy(struct tft_sorter *s)
{
	if (!s)
		return;
	release_all(s);
	tft_chunk_enc_fini(&s->enc);
	if (s->cctx)
		ZSTD_freeCCtx(s->cctx);
	free(s);
}

uint64_t tft_sorter_count(const struct tft_sorter *s)
{
	return s->seq;
}

/* ---- sorting --------------------------------------------------------------------- */

static inline int key_lt(const struct skey *a, const struct skey *b)
{
	if (a->ts != b->ts)
		return a->ts < b->ts;
	if (a->dur != b->dur)
		return a->dur > b->dur; /* parents before children */
	return a->idx < b->idx;
}

/* Stable bottom-up merge sort; O(n) on already sorted input. Result in a. */
static void sort_keys(struct skey *a, struct skey *tmp, size_t n)
{
	const size_t run = 32;
	struct skey *src = a, *dst = tmp;
	size_t i;

	for (i = 1; i < n && !key_lt(&a[i], &a[i - 1]); i++)
		;
	if (i >= n)
		return;
	for (size_t lo = 0; lo < n; lo += run) { /* insertion sort small blocks */
		size_t hi = lo + run < n ? lo + run : n;
		for (size_t j = lo + 1; j < hi; j++) {
			struct skey k = a[j];
			size_t m = j;
			while (m > lo && key_lt(&k, &a[m - 1])) {
				a[m] = a[m - 1];
				m--;
			}
			a[m] = k;
		}
	}
	for (size_t width = run; width < n; width *= 2) {
		/* Locally disordered input is sorted after a few passes: stop there. */
		for (i = 1; i < n && !key_lt(&src[i], &src[i - 1]); i++)
			;
		if (i >= n)
			break;
		for (size_t lo = 0; lo < n; lo += 2 * width) {
			size_t mid = lo + width < n ? lo + width : n;
			size_t hi = lo + 2 * width < n ? lo + 2 * width : n;
			size_t l = lo, r = mid, o = lo;
			if (mid >= hi || !key_lt(&src[mid], &src[mid - 1])) {
				memcpy(&dst[lo], &src[lo], (hi - lo) * sizeof(*src));
				continue;
			}
			while (l < mid && r < hi)
				dst[o++] = key_lt(&src[r], &src[l]) ? src[r++] : src[l++];
			while (l < mid)
				dst[o++] = src[l++];
			while (r < hi)
				dst[o++] = src[r++];
		}
		struct skey *t = src;
		src = dst;
		dst = t;
	}
	if (src != a)
		memcpy(a, src, n * sizeof(*a));
}

/*
 * Sort the buffer: keys grouped by track (counting sort), each group sorted.
 * *keys_out (s->keys, borrowed) holds the order; starts[t]..starts[t+1] is
 * track t (caller frees starts).
 */
static int sort_buffer(struct tft_sorter *s, struct skey **keys_out, size_t **starts_out)
{
	struct skey *keys, *tmp;
	size_t *starts;

	if (s->n > s->cap_keys) {
		/* Sized once for the whole buffer (charged in REC_COST), reused per spill. */
		size_t cap = s->cap > s->n ? s->cap : s->n;
		free(s->keys);
		free(s->tmp);
		s->keys = malloc(cap * sizeof(*s->keys));
		s->tmp = malloc(cap * sizeof(*s->tmp));
		s->cap_keys = s->keys && s->tmp ? cap : 0;
		if (!s->cap_keys)
			return TFT_ENOMEM;
	}
	keys = s->keys;
	tmp = s->tmp;
	starts = calloc((size_t)s->ntracks + 1, sizeof(*starts));
	if (!starts)
		return TFT_ENOMEM;
	for (size_t i = 0; i < s->n; i++)
		starts[s->recs[i].track + 1]++;
	for (uint32_t t = 0; t < s->ntracks; t++)
		starts[t + 1] += starts[t];
	/* Scatter with a moving cursor per track: stable, so idx stays ascending. */
	size_t *cur = malloc(((size_t)s->ntracks + 1) * sizeof(*cur));
	if (!cur) {
		free(starts);
		return TFT_ENOMEM;
	}
	memcpy(cur, starts, ((size_t)s->ntracks + 1) * sizeof(*cur));
	for (size_t i = 0; i < s->n; i++) {
		const struct srec *r = &s->recs[i];
		keys[cur[r->track]++] = (struct skey){ r->ts, r->dur, (uint32_t)i, 0 };
	}
	free(cur);
	for (uint32_t t = 0; t < s->ntracks; t++)
		if (starts[t + 1] - starts[t] > 1)
			sort_keys(&keys[starts[t]], &tmp[starts[t]], starts[t + 1] - starts[t]);
	*keys_out = keys;
	*starts_out = starts;
	return 0;
}

static struct tft_event rec_event(const struct tft_sorter *s, const struct srec *r)
{
	return (struct tft_event){
		.ts_ns = r->ts,
		.dur_ns = r->dur,
		.value = r->value,
		.track = r->track,
		.name = r->name,
		.cat = r->cat,
		.count = r->count,
		.kind = r->kind,
		.flags = r->flags,
		.nargs = r->nargs,
		.args = r->nargs ? &s->args[r->args_off] : NULL,
	};
}

/* ---- spilling ------------------------------------------------------------------- */

static int open_scratch(struct tft_sorter *s, struct tft_error *err)
{
	const char *dir = getenv("TMPDIR");
	char path[4096];

	if (!dir || !*dir)
		dir = "/tmp";
	snprintf(path, sizeof(path), "%s/tftracer-sort-XXXXXX", dir);
	s->fd = mkstemp(path);
	if (s->fd < 0)
		return tft_error_set(err, TFT_EIO, -1, "sorter: cannot create a scratch file in %s: %s",
				     dir, strerror(errno));
	unlink(path); /* anonymous: gone when closed, whatever happens */
	if (!s->cctx && !(s->cctx = ZSTD_createCCtx()))
		return tft_error_set(err, TFT_ENOMEM, -1, "sorter: out of memory");
	return 0;
}

static int write_all(int fd, const void *p, size_t len, uint64_t off)
{
	const uint8_t *b = p;

	while (len) {
		ssize_t r = pwrite(fd, b, len, (off_t)off);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		b += r;
		len -= (size_t)r;
		off += (uint64_t)r;
	}
	return 0;
}

static int flush_run_chunk(struct tft_sorter *s, uint32_t track, struct tft_error *err)
{
	int rc;

	if (!s->enc.n)
		return 0;
	rc = tft_chunk_enc_finish(&s->enc, s->cctx, SPILL_ZSTD_LEVEL, &s->scratch, &s->blob);
	if (rc)
		return tft_error_set(err, rc, -1, "sorter: cannot encode a run");
	if (write_all(s->fd, s->blob.p, s->blob.len, s->file_off))
		return tft_error_set(err, TFT_EIO, -1, "sorter: scratch write failed: %s",
				     strerror(errno));
	if (s->nchunks == s->cap_chunks) {
		size_t ncap = s->cap_chunks ? s->cap_chunks * 2 : 64;
		struct spill_chunk *nc = realloc(s->chunks, ncap * sizeof(*nc));
		if (!nc)
			return tft_error_set(err, TFT_ENOMEM, -1, "sorter: out of memory");
		s->chunks = nc;
		s->cap_chunks = ncap;
	}
	s->chunks[s->nchunks++] = (struct spill_chunk){ track, s->enc.n, s->file_off,
							(uint32_t)s->blob.len };
	s->file_off += s->blob.len;
	tft_chunk_enc_reset(&s->enc, 0);
	return 0;
}

static int spill(struct tft_sorter *s, struct tft_error *err)
{
	struct skey *keys;
	size_t *starts;
	int rc;

	if (!s->n)
		return 0;
	if (s->fd < 0 && (rc = open_scratch(s, err)))
		return rc;
	if (sort_buffer(s, &keys, &starts))
		return tft_error_set(err, TFT_ENOMEM, -1, "sorter: out of memory");
	if (s->nruns == s->cap_runs) {
		size_t ncap = s->cap_runs ? s->cap_runs * 2 : 8;
		struct run *nr = realloc(s->runs, ncap * sizeof(*nr));
		if (!nr) {
			rc = tft_error_set(err, TFT_ENOMEM, -1, "sorter: out of memory");
			goto out;
		}
		s->runs = nr;
		s->cap_runs = ncap;
	}
	s->runs[s->nruns] = (struct run){ s->base_seq, s->nchunks, s->nchunks };
	rc = 0;
	for (uint32_t t = 0; t < s->ntracks && !rc; t++) {
		for (size_t i = starts[t]; i < starts[t + 1] && !rc; i++) {
			struct tft_event ev = rec_event(s, &s->recs[keys[i].idx]);
			ev.depth = keys[i].idx; /* the run stores arrival order in the depth column */
			rc = tft_chunk_enc_add(&s->enc, &ev);
			if (rc)
				rc = tft_error_set(err, rc, -1, "sorter: cannot encode a run");
			else if (s->enc.n >= RUN_CHUNK_EVENTS || s->enc.bytes >= TFT_CHUNK_SOFT_BYTES ||
				 s->enc.nacols >= TFT_CHUNK_SOFT_ARG_COLS)
				rc = flush_run_chunk(s, t, err);
		}
		if (!rc)
			rc = flush_run_chunk(s, t, err);
	}
	if (rc) {
		tft_chunk_enc_reset(&s->enc, 0);
		goto out;
	}
	s->runs[s->nruns].end = s->nchunks;
	s->nruns++;
	s->base_seq += s->n;
	s->n = 0;
	s->nargs = 0;
out:
	free(starts);
	return rc;
}

/* ---- push ------------------------------------------------------------------------ */

int tft_sorter_push(struct tft_sorter *s, const struct tft_event *ev, struct tft_error *err)
{
	size_t need = REC_COST + (size_t)ev->nargs * sizeof(struct tft_arg);
	size_t used = s->n * REC_COST + s->nargs * sizeof(struct tft_arg);
	int64_t end;
	struct srec *r;
	int rc;

	if (ev->track >= tft_writer_track_count(s->w) || ev->kind > TFT_EV_COUNTER ||
	    ev->dur_ns < 0 || __builtin_add_overflow(ev->ts_ns, ev->dur_ns, &end) ||
	    (ev->nargs && !ev->args))
		return tft_error_set(err, TFT_EINVAL, -1, "sorter: bad event (track %u, ts %lld)",
				     ev->track, (long long)ev->ts_ns);
	for (uint16_t i = 0; i < ev->nargs; i++)
		if (ev->args[i].type > TFT_ARG_JSON)
			return tft_error_set(err, TFT_EINVAL, -1, "sorter: bad arg type %u",
					     ev->args[i].type);
	if (s->n && used + need > s->budget && (rc = spill(s, err)))
		return rc;
	if (s->n == UINT32_MAX)
		return tft_error_set(err, TFT_ENOSPC, -1, "sorter: too many events in one buffer");
	if (s->n == s->cap) {
		size_t max = s->budget / REC_COST + 1;
		size_t ncap = s->cap ? s->cap * 2 : 1024;
		if (ncap > max && max > s->cap)
			ncap = max;
		if (ncap <= s->cap)
			ncap = s->cap + 1;
		struct srec *nr = realloc(s->recs, ncap * sizeof(*nr));
		if (!nr)
			return tft_error_set(err, TFT_ENOMEM, -1, "sorter: out of memory");
		s->recs = nr;
		s->cap = ncap;
	}
	if (ev->nargs && s->nargs + ev->nargs > s->cap_args) {
		size_t ncap = s->cap_args ? s->cap_args * 2 : 1024;
		while (ncap < s->nargs + ev->nargs)
			ncap *= 2;
		struct tft_arg *na = realloc(s->args, ncap * sizeof(*na));
		if (!na)
			return tft_error_set(err, TFT_ENOMEM, -1, "sorter: out of memory");
		s->args = na;
		s->cap_args = ncap;
	}
	if (s->nargs > UINT32_MAX - ev->nargs)
		return tft_error_set(err, TFT_ENOSPC, -1, "sorter: args arena full");
	r = &s->recs[s->n++];
	*r = (struct srec){
		.ts = ev->ts_ns,
		.dur = ev->dur_ns,
		.value = ev->value,
		.track = ev->track,
		.name = ev->name,
		.cat = ev->cat,
		.count = ev->count,
		.args_off = (uint32_t)s->nargs,
		.nargs = ev->nargs,
		.kind = ev->kind,
		.flags = ev->flags,
	};
	if (ev->nargs) {
		memcpy(&s->args[s->nargs], ev->args, ev->nargs * sizeof(*ev->args));
		s->nargs += ev->nargs;
	}
	if (ev->track >= s->ntracks)
		s->ntracks = ev->track + 1;
	s->seq++;
	return 0;
}

/* ---- finish ------------------------------------------------------------------ */

static int append_shifted(struct tft_sorter *s, struct tft_event *ev, int64_t shift_ns,
			  struct tft_error *err)
{
	int rc;

	if (__builtin_add_overflow(ev->ts_ns, shift_ns, &ev->ts_ns))
		return tft_error_set(err, TFT_EINVAL, -1, "sorter: timestamp overflow after shift");
	rc = tft_writer_append(s->w, ev);
	if (rc)
		return tft_error_set(err, rc, -1, "sorter: writer rejected an event of track %u at %lld ns: %s",
				     ev->track, (long long)ev->ts_ns, tft_strerror(rc));
	return 0;
}

struct cursor {
	struct run *run;      /* borrowed */
	size_t next;          /* next chunk index to load */
	size_t end;           /* end of this track's chunks in the run */
	struct tft_chunk_dec dec;
	uint32_t pos;
	uint64_t seq; /* of dec.ev[pos] */
};

static inline int cur_lt(const struct cursor *a, const struct cursor *b)
{
	const struct tft_event *x = &a->dec.ev[a->pos], *y = &b->dec.ev[b->pos];

	if (x->ts_ns != y->ts_ns)
		return x->ts_ns < y->ts_ns;
	if (x->dur_ns != y->dur_ns)
		return x->dur_ns > y->dur_ns;
	return a->seq < b->seq;
}

/* Load the cursor's next chunk. 1 when exhausted, 0 when loaded, < 0 on error. */
static int cursor_load(struct tft_sorter *s, struct cursor *c, struct tft_error *err)
{
	const struct spill_chunk *sc;
	ssize_t got;
	int rc;

	if (c->next >= c->end)
		return 1;
	sc = &s->chunks[c->next++];
	s->blob.len = 0;
	if (tft_chunk_buf_reserve(&s->blob, sc->len))
		return tft_error_set(err, TFT_ENOMEM, -1, "sorter: out of memory");
	got = pread(s->fd, s->blob.p, sc->len, (off_t)sc->off);
	if (got != (ssize_t)sc->len)
		return tft_error_set(err, TFT_EIO, -1, "sorter: scratch read failed");
	rc = tft_chunk_decode(&c->dec, s->blob.p, sc->len, (int64_t)(c->next - 1), err);
	if (rc)
		return rc;
	if (c->dec.n == 0)
		return tft_error_set(err, TFT_EIO, -1, "sorter: empty run chunk");
	c->pos = 0;
	c->seq = c->run->base_seq + c->dec.ev[0].depth;
	return 0;
}

static void heap_down(struct cursor **h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < n && cur_lt(h[l], h[m]))
			m = l;
		if (r < n && cur_lt(h[r], h[m]))
			m = r;
		if (m == i)
			return;
		struct cursor *t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

static int merge_runs(struct tft_sorter *s, int64_t shift_ns, struct tft_error *err)
{
	struct cursor *curs = calloc(s->nruns, sizeof(*curs));
	struct cursor **heap = calloc(s->nruns, sizeof(*heap));
	size_t *pos = calloc(s->nruns, sizeof(*pos)); /* per run: next unmerged chunk */
	int rc = 0;

	if (!curs || !heap || !pos) {
		rc = tft_error_set(err, TFT_ENOMEM, -1, "sorter: out of memory");
		goto out;
	}
	for (size_t r = 0; r < s->nruns; r++) {
		tft_chunk_dec_init(&curs[r].dec);
		curs[r].run = &s->runs[r];
		pos[r] = s->runs[r].first;
	}
	for (uint32_t t = 0; t < s->ntracks && !rc; t++) {
		size_t nh = 0;

		/* Runs list their tracks in ascending order: advance each run to track t. */
		for (size_t r = 0; r < s->nruns && !rc; r++) {
			struct cursor *c = &curs[r];
			size_t e = pos[r];
			while (e < s->runs[r].end && s->chunks[e].track == t)
				e++;
			if (e == pos[r])
				continue;
			c->next = pos[r];
			c->end = e;
			pos[r] = e;
			rc = cursor_load(s, c, err);
			if (rc < 0)
				break;
			rc = 0;
			heap[nh++] = c;
		}
		if (rc)
			break;
		for (size_t i = nh; i-- > 0;)
			heap_down(heap, nh, i);
		while (nh && !rc) {
			struct cursor *c = heap[0];
			struct tft_event ev = c->dec.ev[c->pos];
			ev.track = t;
			rc = append_shifted(s, &ev, shift_ns, err);
			if (rc)
				break;
			if (++c->pos < c->dec.n) {
				c->seq = c->run->base_seq + c->dec.ev[c->pos].depth;
			} else {
				rc = cursor_load(s, c, err);
				if (rc < 0)
					break;
				if (rc == 1)
					heap[0] = heap[--nh];
				rc = 0;
			}
			heap_down(heap, nh, 0);
		}
	}
out:
	if (curs)
		for (size_t r = 0; r < s->nruns; r++)
			tft_chunk_dec_fini(&curs[r].dec);
	free(curs);
	free(heap);
	free(pos);
	return rc;
}

int tft_sorter_finish(struct tft_sorter *s, int64_t shift_ns, struct tft_error *err)
{
	int rc = 0;

	if (s->nruns == 0) {
		struct skey *keys;
		size_t *starts;

		if (s->n) {
			if (sort_buffer(s, &keys, &starts)) {
				rc = tft_error_set(err, TFT_ENOMEM, -1, "sorter: out of memory");
				goto out;
			}
			for (uint32_t t = 0; t < s->ntracks && !rc; t++)
				for (size_t i = starts[t]; i < starts[t + 1] && !rc; i++) {
					struct tft_event ev = rec_event(s, &s->recs[keys[i].idx]);
					rc = append_shifted(s, &ev, shift_ns, err);
				}
			free(starts);
		}
	} else {
		rc = spill(s, err);
		/* The buffer is empty now: give its memory back before the writer works. */
		free(s->recs);
		free(s->args);
		free(s->keys);
		free(s->tmp);
		s->recs = NULL;
		s->args = NULL;
		s->keys = s->tmp = NULL;
		s->cap = s->cap_args = s->cap_keys = 0;
		if (!rc)
			rc = merge_runs(s, shift_ns, err);
	}
out:
	release_all(s);
	return rc;
}
