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
#include <sys/mman.h>
#include <unistd.h>
#include <zstd.h>

#include "core/grow.h"
#include "store/chunk.h"
#include "store/sorter.h"

#define DEFAULT_BUDGET TFT_SORTER_DEFAULT_BUDGET
#define MIN_BUDGET ((size_t)16 << 10)
#define RUN_CHUNK_EVENTS 4096u
#define SPILL_ZSTD_LEVEL 1
#define NIL UINT32_MAX /* no record */
/* A track whose events came in more ascending runs than this is sorted, not merged. */
#define MERGE_MAX_RUNS 1024u
#define MAP_MIN ((size_t)1 << 20) /* first mapping of a record or args array */

struct srec {
	int64_t ts, dur;
	double value;
	uint32_t track, name, cat, count;
	uint32_t args_off; /* index into the args arena */
	uint32_t next;     /* the track's next record in arrival order, or NIL */
	uint16_t nargs;
	uint8_t kind, flags;
};

/* A track's records in the buffer: a list in arrival order, made of `nruns` ascending runs. */
struct strack {
	uint32_t head, tail, n, nruns;
	int64_t last_ts, last_dur; /* key of the tail */
};

/* Sort key of a track in disorder; idx is the record's position = arrival order. */
struct skey {
	int64_t ts, dur;
	uint32_t idx, pad;
};

/* Bytes charged per buffered event: its record (a track sorted instead of
 * merged also takes two sort keys per event while it is sorted). */
#define REC_COST sizeof(struct srec)

/*
 * An array in its own anonymous mapping: grown with mremap(), which moves
 * page table entries instead of copying (a realloc() copy would touch every
 * page twice, and a first touch is what the buffer costs most).
 */
struct marr {
	void *p;    /* owned mapping, cap bytes; NULL before the first reserve */
	size_t cap;
};

static int marr_reserve(struct marr *a, size_t bytes)
{
	size_t ncap;
	void *np;

	if (bytes <= a->cap)
		return 0;
	ncap = a->cap ? a->cap : MAP_MIN;
	while (ncap < bytes)
		ncap *= 2;
	np = a->p ? mremap(a->p, a->cap, ncap, MREMAP_MAYMOVE)
		  : mmap(NULL, ncap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (np == MAP_FAILED)
		return TFT_ENOMEM;
	a->p = np;
	a->cap = ncap;
	return 0;
}

static void marr_free(struct marr *a)
{
	if (a->p)
		munmap(a->p, a->cap);
	a->p = NULL;
	a->cap = 0;
}

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
	struct marr recs_m, args_m;
	struct srec *recs;     /* recs_m.p */
	size_t n;
	struct tft_arg *args;  /* args_m.p: the args arena */
	size_t nargs;
	struct strack *tracks; /* owned: [cap_tracks], the first ntracks in use */
	uint32_t ntracks, cap_tracks; /* ntracks: 1 + largest track id buffered */
	uint32_t track_end; /* 1 + largest track id pushed since the last finish (the runs') */
	uint64_t seq;     /* events pushed since the last finish */
	uint64_t base_seq; /* seq of recs[0] */
	int fd;            /* scratch file, -1 until the first spill */
	uint64_t file_off;
	struct spill_chunk *chunks; /* owned */
	size_t nchunks, cap_chunks;
	struct run *runs; /* owned */
	size_t nruns, cap_runs;
	ZSTD_CCtx *cctx; /* owned, created on first spill */
	struct skey *keys, *tmp; /* owned sort buffers of a track in disorder, cap_keys each */
	size_t cap_keys;
	uint32_t *merge;         /* owned merge state: 3 arrays of cap_merge + 1 */
	size_t cap_merge;
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

/* The buffer's memory, given back (its records were spilled or appended). */
static void release_buffer(struct tft_sorter *s)
{
	marr_free(&s->recs_m);
	marr_free(&s->args_m);
	s->recs = NULL;
	s->args = NULL;
	s->n = s->nargs = 0;
	free(s->tracks);
	s->tracks = NULL;
	s->ntracks = s->cap_tracks = 0;
	free(s->keys);
	free(s->tmp);
	s->keys = s->tmp = NULL;
	s->cap_keys = 0;
	free(s->merge);
	s->merge = NULL;
	s->cap_merge = 0;
}

static void release_all(struct tft_sorter *s)
{
	release_buffer(s);
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
	s->seq = s->base_seq = 0;
	s->track_end = 0;
	tft_chunk_enc_reset(&s->enc, 1);
	tft_chunk_buf_free(&s->scratch);
	tft_chunk_buf_free(&s->blob);
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

/* ---- ordering a track ------------------------------------------------------------ */

static inline int key_lt(const struct skey *a, const struct skey *b)
{
	if (a->ts != b->ts)
		return a->ts < b->ts;
	if (a->dur != b->dur)
		return a->dur > b->dur; /* parents before children */
	return a->idx < b->idx;
}

/* Records x before y: the sort key, then arrival order. */
static inline int rec_lt(const struct srec *recs, uint32_t x, uint32_t y)
{
	const struct srec *a = &recs[x], *b = &recs[y];

	if (a->ts != b->ts)
		return a->ts < b->ts;
	if (a->dur != b->dur)
		return a->dur > b->dur;
	return x < y;
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

/* Receives a track's records in order (spill or append). */
typedef int (*rec_fn)(struct tft_sorter *s, uint32_t idx, void *ctx);

/* A track in many runs: its keys sorted. */
static int order_sorted(struct tft_sorter *s, const struct strack *st, rec_fn fn, void *ctx,
			struct tft_error *err)
{
	size_t n = 0;
	int rc = 0;

	if (st->n > s->cap_keys) {
		free(s->keys);
		free(s->tmp);
		s->keys = malloc(st->n * sizeof(*s->keys));
		s->tmp = malloc(st->n * sizeof(*s->tmp));
		s->cap_keys = s->keys && s->tmp ? st->n : 0;
		if (!s->cap_keys)
			return tft_error_set(err, TFT_ENOMEM, -1, "sorter: out of memory");
	}
	for (uint32_t i = st->head; i != NIL; i = s->recs[i].next)
		s->keys[n++] = (struct skey){ s->recs[i].ts, s->recs[i].dur, i, 0 };
	sort_keys(s->keys, s->tmp, n);
	for (size_t i = 0; i < n && !rc; i++)
		rc = fn(s, s->keys[i].idx, ctx);
	return rc;
}

static void heap_down_idx(const struct srec *recs, uint32_t *h, const uint32_t *cur, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < n && rec_lt(recs, cur[h[l]], cur[h[m]]))
			m = l;
		if (r < n && rec_lt(recs, cur[h[r]], cur[h[m]]))
			m = r;
		if (m == i)
			return;
		uint32_t t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

/*
 * A track in a few ascending runs (a Kineto trace lists a thread's CPU ops,
 * then its Python functions, then its runtime calls, each in time order):
 * the runs merged, without sort keys. Run r is the list from cur[r] up to
 * end[r], the next run's head.
 */
static int order_merged(struct tft_sorter *s, const struct strack *st, rec_fn fn, void *ctx,
			struct tft_error *err)
{
	const struct srec *recs = s->recs;
	uint32_t nr = 0, *cur, *end, *heap;
	size_t nh;
	int rc = 0;

	if (st->nruns > s->cap_merge) {
		free(s->merge);
		s->merge = malloc(3 * ((size_t)st->nruns + 1) * sizeof(*s->merge));
		s->cap_merge = s->merge ? st->nruns : 0;
		if (!s->merge)
			return tft_error_set(err, TFT_ENOMEM, -1, "sorter: out of memory");
	}
	cur = s->merge;
	end = cur + s->cap_merge + 1;
	heap = end + s->cap_merge + 1;
	/* the runs' heads, walking the list once */
	cur[nr++] = st->head;
	for (uint32_t p = st->head, i = recs[p].next; i != NIL; p = i, i = recs[i].next)
		if (recs[i].ts < recs[p].ts || (recs[i].ts == recs[p].ts && recs[i].dur > recs[p].dur))
			cur[nr++] = i;
	for (uint32_t r = 0; r < nr; r++) {
		end[r] = r + 1 < nr ? cur[r + 1] : NIL;
		heap[r] = r;
	}
	nh = nr;
	for (size_t i = nh; i-- > 0;)
		heap_down_idx(recs, heap, cur, nh, i);
	while (nh && !rc) {
		uint32_t r = heap[0], i = cur[r], next = recs[i].next;
		rc = fn(s, i, ctx);
		if (next != end[r])
			cur[r] = next;
		else
			heap[0] = heap[--nh]; /* run r is done */
		if (nh > 1)
			heap_down_idx(recs, heap, cur, nh, 0);
	}
	return rc;
}

/* Track t's buffered records to fn in order: ts ascending, dur descending, arrival. */
static int order_track(struct tft_sorter *s, uint32_t t, rec_fn fn, void *ctx,
		       struct tft_error *err)
{
	const struct strack *st = &s->tracks[t];
	int rc = 0;

	if (st->n == 0)
		return 0;
	if (st->nruns == 1) {
		for (uint32_t i = st->head; i != NIL && !rc; i = s->recs[i].next)
			rc = fn(s, i, ctx);
		return rc;
	}
	if (st->nruns <= MERGE_MAX_RUNS)
		return order_merged(s, st, fn, ctx, err);
	return order_sorted(s, st, fn, ctx, err);
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
	if (tft_grow_size_ex((void **)&s->chunks, &s->cap_chunks, s->nchunks + 1, sizeof(*s->chunks), 64, 0))
		return tft_error_set(err, TFT_ENOMEM, -1, "sorter: out of memory");
	s->chunks[s->nchunks++] = (struct spill_chunk){ track, s->enc.n, s->file_off,
							(uint32_t)s->blob.len };
	s->file_off += s->blob.len;
	tft_chunk_enc_reset(&s->enc, 0);
	return 0;
}

/* A record into the run being spilled (ctx: the error). */
static int spill_rec(struct tft_sorter *s, uint32_t idx, void *ctx)
{
	struct tft_error *err = ctx;
	struct tft_event ev = rec_event(s, &s->recs[idx]);
	int rc;

	ev.depth = idx; /* the run stores arrival order in the depth column */
	rc = tft_chunk_enc_add(&s->enc, &ev);
	if (rc)
		return tft_error_set(err, rc, -1, "sorter: cannot encode a run");
	if (s->enc.n >= RUN_CHUNK_EVENTS || s->enc.bytes >= TFT_CHUNK_SOFT_BYTES ||
	    s->enc.nacols >= TFT_CHUNK_SOFT_ARG_COLS)
		return flush_run_chunk(s, s->recs[idx].track, err);
	return 0;
}

/* The buffer is empty: its tracks too (the mappings stay, for the next events). */
static void buffer_reset(struct tft_sorter *s)
{
	s->base_seq += s->n;
	s->n = 0;
	s->nargs = 0;
	for (uint32_t t = 0; t < s->ntracks; t++)
		s->tracks[t].n = 0;
	s->ntracks = 0;
}

static int spill(struct tft_sorter *s, struct tft_error *err)
{
	int rc;

	if (!s->n)
		return 0;
	if (s->fd < 0 && (rc = open_scratch(s, err)))
		return rc;
	if (tft_grow_size_ex((void **)&s->runs, &s->cap_runs, s->nruns + 1, sizeof(*s->runs), 8, 0))
		return tft_error_set(err, TFT_ENOMEM, -1, "sorter: out of memory");
	s->runs[s->nruns] = (struct run){ s->base_seq, s->nchunks, s->nchunks };
	rc = 0;
	for (uint32_t t = 0; t < s->ntracks && !rc; t++) {
		rc = order_track(s, t, spill_rec, err, err);
		if (!rc)
			rc = flush_run_chunk(s, t, err);
	}
	if (rc) {
		tft_chunk_enc_reset(&s->enc, 0);
		return rc;
	}
	s->runs[s->nruns].end = s->nchunks;
	s->nruns++;
	buffer_reset(s);
	return 0;
}

/* ---- push ------------------------------------------------------------------------ */

int tft_sorter_push(struct tft_sorter *s, const struct tft_event *ev, struct tft_error *err)
{
	size_t need = REC_COST + (size_t)ev->nargs * sizeof(struct tft_arg);
	size_t used = s->n * REC_COST + s->nargs * sizeof(struct tft_arg);
	int64_t end;
	struct strack *st;
	struct srec *r;
	uint32_t idx;
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
	if (s->n >= NIL - 1)
		return tft_error_set(err, TFT_ENOSPC, -1, "sorter: too many events in one buffer");
	if (ev->track >= s->cap_tracks &&
	    tft_grow((void **)&s->tracks, &s->cap_tracks, (uint64_t)ev->track + 1, sizeof(*s->tracks)))
		return tft_error_set(err, TFT_ENOMEM, -1, "sorter: out of memory");

	if (ev->track >= s->ntracks) {
		for (uint32_t t = s->ntracks; t <= ev->track; t++)
			s->tracks[t].n = 0;
		s->ntracks = ev->track + 1;
		if (s->ntracks > s->track_end)
			s->track_end = s->ntracks;
	}
	if (marr_reserve(&s->recs_m, (s->n + 1) * sizeof(*s->recs)) ||
	    (ev->nargs && marr_reserve(&s->args_m, (s->nargs + ev->nargs) * sizeof(*s->args))))
		return tft_error_set(err, TFT_ENOMEM, -1, "sorter: out of memory");
	s->recs = s->recs_m.p;
	s->args = s->args_m.p;
	if (s->nargs > UINT32_MAX - ev->nargs)
		return tft_error_set(err, TFT_ENOSPC, -1, "sorter: args arena full");
	idx = (uint32_t)s->n++;
	r = &s->recs[idx];
	*r = (struct srec){
		.ts = ev->ts_ns,
		.dur = ev->dur_ns,
		.value = ev->value,
		.track = ev->track,
		.name = ev->name,
		.cat = ev->cat,
		.count = ev->count,
		.args_off = (uint32_t)s->nargs,
		.next = NIL,
		.nargs = ev->nargs,
		.kind = ev->kind,
		.flags = ev->flags,
	};
	if (ev->nargs) {
		memcpy(&s->args[s->nargs], ev->args, ev->nargs * sizeof(*ev->args));
		s->nargs += ev->nargs;
	}
	st = &s->tracks[ev->track];
	if (st->n == 0) {
		st->head = idx;
		st->nruns = 1;
	} else {
		s->recs[st->tail].next = idx;
		/* a new ascending run when the key goes back (ts up, then dur down) */
		if (ev->ts_ns < st->last_ts || (ev->ts_ns == st->last_ts && ev->dur_ns > st->last_dur))
			st->nruns++;
	}
	st->tail = idx;
	st->last_ts = ev->ts_ns;
	st->last_dur = ev->dur_ns;
	st->n++;
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
	for (uint32_t t = 0; t < s->track_end && !rc; t++) {
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

/* A record to the writer (ctx: the shift and the error). */
struct append_ctx {
	int64_t shift_ns;
	struct tft_error *err;
};

static int append_rec(struct tft_sorter *s, uint32_t idx, void *ctx)
{
	struct append_ctx *a = ctx;
	struct tft_event ev = rec_event(s, &s->recs[idx]);

	return append_shifted(s, &ev, a->shift_ns, a->err);
}

int tft_sorter_finish(struct tft_sorter *s, int64_t shift_ns, struct tft_error *err)
{
	int rc = 0;

	if (s->nruns == 0) {
		struct append_ctx a = { shift_ns, err };
		for (uint32_t t = 0; t < s->ntracks && !rc; t++)
			rc = order_track(s, t, append_rec, &a, err);
	} else {
		rc = spill(s, err);
		/* The buffer is empty now: give its memory back before the writer works. */
		release_buffer(s);
		if (!rc)
			rc = merge_runs(s, shift_ns, err);
	}
	release_all(s);
	return rc;
}
