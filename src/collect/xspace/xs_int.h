/* SPDX-License-Identifier: MIT */
/*
 * The XSpace importer's shared state (private to src/collect/xspace/):
 * the decoded message structs, the importer's and its clones' state, the
 * small per-event helpers (inline: there is no LTO) and the functions the
 * files of the importer call in each other.
 *
 * How it reads an XSpace: it walks planes (two passes: metadata first, then
 * lines, since the wire order puts lines before the metadata maps),
 * resolves event and stat metadata, and streams XEvents to the writer.
 *
 * Each line is read twice: pass 1 (scan.c) takes its header (name, ids,
 * which come after the events on the wire) and checks, from the events'
 * times alone, whether they are already in the writer's order; pass 2
 * (line.c) decodes the events. An ordered line (the usual case) goes
 * straight to the writer as it is decoded; any other line is held back,
 * sorted and then written, or goes through the sorter when it is too large
 * to hold (pend.c). The hot paths (fast_line_header(), fast_event()) accept
 * the canonical encoding only and hand anything else to the table decoder
 * (schema.c), which checks it and reports errors with their message path.
 *
 * A plane is walked in passes too (plane.c: stat metadata, event metadata,
 * stats, lines): its pass 1 checks every field and notes where each
 * repeated field lies, so each later pass walks only its own span, and the
 * metadata map entries take a fast path in their usual layout (a real
 * profile's metadata is a large part of its bytes).
 *
 * Files: space.c (the entry, one XSpace after another), host.c (the host's
 * name and clock), plane.c, scan.c, line.c, stats.c (XStat -> arg),
 * tft_xs_intern.c, pend.c, tracks.c (planes and lines -> processes and tracks),
 * flows.c (correlation ids -> launch flows), steps.c (Steps lines and
 * group ids -> steps), parallel.c (lines on several threads), merge.c
 * (the threads' notes merged in file order), schema.c, idmap.c.
 */
#ifndef TFT_COLLECT_XSPACE_XS_INT_H
#define TFT_COLLECT_XSPACE_XS_INT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "codec/pb_wire.h"
#include "collect/ingest_xspace.h"
#include "collect/xspace/idmap.h"
#include "collect/xspace/xs_wire.h"
#include "core/grow.h"
#include "core/strtab.h"
#include "core/workers.h"
#include "store/sorter.h"

#define MAX_ARGS 64
#define XS_REDO 1 /* tft_xs_line_body(): store the line again, the serial way (see xs.optimistic) */
#define MAX_GROUPS (1u << 20)
#define HEADS_MAX (1u << 16) /* events of a line whose fields pass 1 notes for pass 2 */

/*
 * Parallel lines (parallel.c): a host's XSpace of opts->par_min_bytes or
 * more (0: PAR_MIN_BYTES) takes them with opts->threads >= 2; the default
 * is where the parallel import starts to gain (BENCHMARKS.md, "XSpace
 * importer: design measurements").
 */
#ifndef TFT_XSPACE_PAR_MIN_BYTES /* the fuzz build sets 0: every input takes the parallel path */
#define TFT_XSPACE_PAR_MIN_BYTES ((size_t)16 << 20)
#endif
#define PAR_MIN_BYTES ((size_t)TFT_XSPACE_PAR_MIN_BYTES)
#define PAR_GROUP_BYTES ((size_t)48 << 20)
#define PAR_MAX_THREADS 16

/* ---- decoded messages (their tables: schema.c) ---------------------------------- */

struct xs_stat {
	uint64_t has;
	int64_t metadata_id;
	double d;
	uint64_t u;
	int64_t i;
	struct tft_pb_bytes str, bytes;
	uint64_t ref;
};

enum { XS_META, XS_DOUBLE, XS_UINT, XS_INT, XS_STR, XS_BYTES, XS_REF };

struct xs_event {
	uint64_t has;
	int64_t metadata_id, offset_ps, duration_ps, num_occurrences;
};

enum { XE_META, XE_OFFSET, XE_DURATION, XE_STATS, XE_NUMOCC };

struct xs_line {
	uint64_t has;
	int64_t id;
	struct tft_pb_bytes name;
	int64_t timestamp_ns;
	int64_t duration_ps, display_id;
	struct tft_pb_bytes display_name;
};

/* Presence bits of struct xs_line (indexes in line_hdr_fields). */
enum { LN_ID, LN_NAME, LN_TS, LN_EVENTS, LN_DUR, LN_DISPLAY_ID, LN_DISPLAY_NAME };

struct xs_stat_meta {
	uint64_t has;
	int64_t id;
	struct tft_pb_bytes name, description;
};

struct xs_smeta_entry {
	uint64_t has;
	int64_t key;
	struct xs_stat_meta value;
};

struct xs_event_meta_raw {
	uint64_t has;
	int64_t id;
	struct tft_pb_bytes name, display_name;
};

struct xs_emeta_entry {
	uint64_t has;
	int64_t key;
	struct xs_event_meta_raw value;
};

struct xs_plane {
	uint64_t has;
	int64_t id;
	struct tft_pb_bytes name;
};

extern const struct tft_pb_msg tft_xs_stat_msg, tft_xs_event_msg, tft_xs_line_hdr_msg;
extern const struct tft_pb_msg tft_xs_smeta_entry_msg, tft_xs_emeta_entry_msg;
/* Plane pass 1 (id, name, where the rest lies), then one table per later pass. */
extern const struct tft_pb_msg tft_xs_plane_msg, tft_xs_plane_smeta_msg, tft_xs_plane_emeta_msg,
	tft_xs_plane_stats_msg, tft_xs_plane_lines_msg, tft_xs_plane_jobs_msg;
/* XSpace pass 1 (hostnames, errors, warnings, the clock), pass 2 (the planes). */
extern const struct tft_pb_msg tft_xs_space_msg, tft_xs_space_planes_msg;

/* ---- importer state ----------------------------------------------------------------- */

enum {
	SPECIAL_NONE = 0,
	SPECIAL_CORRELATION,
	SPECIAL_GROUP,
	SPECIAL_STEP_NUM,
	SPECIAL_STEP_NAME,
};

struct xs_smeta {
	uint32_t name;   /* string id of the stat name (also the value of a ref) */
	uint8_t special; /* SPECIAL_* */
};

/*
 * The last str_value interned for a stat (xs.strs[i] goes with xs.smeta[i])
 * and its id: a stat such as tf_op or hlo_module often repeats its value
 * from event to event, and comparing the bytes is cheaper than hashing them
 * again. Kept apart from xs_smeta so that the table the refs look into
 * stays small.
 */
struct xs_strcache {
	const uint8_t *p; /* borrowed: inside the input; NULL = none yet */
	uint32_t len, id;
};

struct xs_emeta {
	uint32_t name;      /* slice name: display_name, else name */
	uint32_t long_name; /* name when display_name was used, else TFT_NONE */
	uint32_t args_off, nargs; /* metadata-level stats in xs.meta_args */
};

/*
 * Keys order what the events note by their place in the file: (line number
 * in the file << 32 | event index in the line). Parallel lines
 * (tft_xs_run_jobs()) merge what each thread noted in file order, so that the
 * result is the serial one (first source and every destination of each
 * correlation id, last step name of each group, order of first
 * appearance): correlation ends and steps line by line, groups (one entry
 * per id and thread) by these keys.
 */
struct xs_corr {
	uint64_t id; /* correlation id */
	uint32_t src_track, dst_track;
	int64_t src_ts, dst_ts;
};

/* A further device event of a correlation id (a CUDA graph's kernels share their launch's). */
struct xs_corr_dst {
	uint32_t corr; /* index in xs.corr */
	uint32_t track;
	int64_t ts;
};

/* A correlation end a clone noted (merged by tft_xs_merge_notes()); its job gives the track and the side. */
struct xs_cnote {
	uint64_t id;
	int64_t ts;
};

/* Correlation ids with their ends (tft_xs_corr_entry(), corr_end()). All owned. */
struct xs_ctab {
	struct idmap map;         /* key -> index in corr (the id, or a half's id >> 1) */
	struct xs_corr *corr;     /* in order of first appearance */
	uint32_t n, cap;
	struct xs_corr_dst *more; /* device ends after each id's first, in file order */
	uint32_t nmore, cmore;
};

/*
 * Parallel lines: the threads' correlation notes are merged on two threads,
 * each taking the ids of one parity (half[id & 1], keyed by id >> 1). Over
 * the notes in file order (all groups), made[p] has a bit for each note
 * that made an entry of half p and more[p] one for each that added a
 * further destination, so tft_xs_emit_flows() interleaves the halves in the order
 * of one serial table. All owned.
 */
struct xs_halves {
	struct xs_ctab half[2];
	uint64_t *made[2], *more[2];
	uint64_t nbits;   /* notes merged so far */
	uint32_t cwords;  /* words of each bit map */
};

struct xs_group {
	uint64_t id; /* group_id */
	int64_t start, end;
	uint32_t name; /* step_name or TFT_NONE */
	uint64_t first_key, name_key;
};

/* A step of a Steps line: where it was noted, and whether its index is its position. */
struct xs_stepkey {
	uint64_t key;
	int by_count;
};

/* A line of the plane: scanned by tft_xs_line_scan(), its track by tft_xs_line_pending(). */
struct xs_job {
	struct tft_pb_sub sub;    /* sub.dec: the reading thread's; a thread uses its own */
	uint32_t plane;           /* parallel lines: its plane's snapshot (xs.snaps) */
	struct tft_pb_bytes tname; /* the track's name (display_name, else name), in the input */
	int64_t tid;               /* display_id, else id */
	struct tft_track pending; /* the line's track, before it is registered */
	uint32_t track;           /* TFT_NONE: registered with the first event (serial) */
	uint64_t key_line;        /* file line number << 32 */
	int64_t ts_ns;
	int sorted, steps, nonempty;
	int peeked;               /* header from tft_xs_line_peek(): stored optimistically */
	int need_scan;            /* tft_xs_line_peek() could not tell: tft_xs_line_scan() it */
	struct xs_line hdr;       /* peeked: the header fields before the events */
	/* Stored by clone `clone`: its notes [cn_lo, cn_hi) and steps [st_lo, st_hi). */
	uint32_t clone, cn_lo, cn_hi, st_lo, st_hi;
};

/* A plane's tables, kept for its lines' jobs (parallel lines). All owned. */
struct xs_psnap {
	struct xs_smeta *smeta;
	struct xs_strcache *strs; /* the reading thread's cache, freed with the rest */
	uint32_t nsmeta;
	struct idmap smeta_map;
	struct xs_emeta *emeta;
	uint32_t nemeta;
	struct idmap emeta_map;
	struct tft_arg *meta_args;
	uint32_t nmeta_args;
	uint32_t process;          /* TFT_NONE until a line of the plane registers its track */
	int device_plane;
	struct tft_pb_bytes name;  /* the plane's, in the input: for its process */
	int64_t id;
	uint32_t plane_index, labels;
	struct tft_pb_sub ps; /* the plane, for the error path */
	size_t bytes;
};

struct xs_clone;

/* An event held back until its line is complete. */
struct xs_pend {
	struct tft_event ev; /* ev.args NULL: its args are pargs[args_off..+nargs) */
	uint32_t args_off;
	uint32_t seq;        /* arrival order, for a stable sort */
};

struct xs {
	struct tft_writer *w;       /* borrowed */
	struct tft_sorter *sorter;  /* owned */
	struct tft_pb_dec *dec;     /* borrowed */
	const uint8_t *lim;         /* borrowed: end of the whole input */
	struct tft_error *err;      /* borrowed */
	const struct tft_ingest_opts *opts; /* borrowed */
	size_t input_len;

	/* XSpace level. */
	uint32_t host;   /* string id */
	int have_host;
	int64_t nerrors, nwarnings;

	/* Current plane. */
	struct xs_smeta *smeta; /* owned */
	struct xs_strcache *strs; /* owned: csmeta entries */
	uint32_t nsmeta, csmeta;
	struct idmap smeta_map;
	struct xs_emeta *emeta; /* owned */
	uint32_t nemeta, cemeta;
	struct idmap emeta_map;
	struct tft_arg *meta_args; /* owned: metadata-level stats of this plane */
	uint32_t nmeta_args, cmeta_args;
	uint32_t process;     /* TFT_NONE until a line needs it */
	uint32_t labels;      /* string id of the plane stats ("k=v, ..."), 0 if none */
	char labels_buf[1024];
	size_t labels_len;
	struct xs_plane plane;
	uint32_t plane_index;
	int device_plane;     /* /device:... */
	/*
	 * Where the plane's lines, event_metadata, stat_metadata and stats
	 * (fields 3..6, [num - 3]) lie: from the end of the field before the
	 * first one (or the plane start) to the end of the last one, NULL if
	 * none; a key boundary at each end. Noted by plane pass 1.
	 */
	const uint8_t *span_lo[4], *span_hi[4];
	const uint8_t *span_last; /* end of the last field noted so far */

	/* Current line. */
	uint32_t track;           /* TFT_NONE until the line's first event */
	struct tft_track pending; /* the line's track, before it is registered */
	int64_t line_ts_ns;
	int steps_line;
	/*
	 * The host's profile start (Task Environment's profile_start_time, ns
	 * since the epoch), 0 if the file has none: the profiler saves line
	 * timestamps relative to it, and adding it back keeps each host's clock.
	 */
	int64_t clock_ns;
	/*
	 * The line's events wait in pend/pargs until the line ends; then they
	 * go straight to the writer, sorted in place first only if they came out
	 * of order (`unsorted`). A line larger than pend_budget bytes goes
	 * through the sorter instead (`spilled`).
	 */
	struct xs_pend *pend;  /* owned */
	uint32_t npend, cpend;
	struct tft_arg *pargs; /* owned */
	uint32_t npargs, cpargs;
	size_t pend_budget;
	int spilled, unsorted;
	/*
	 * Pass 1 found the line's events already in the writer's order: they
	 * go to the writer as they are decoded, nothing is held back. A writer
	 * failure is kept in store_err and reported once the line is done, as
	 * tft_xs_flush_line() would.
	 */
	int direct;
	int store_err;
	/*
	 * Parallel lines: the line's events are stored as they are decoded
	 * before its header is known to be complete (tft_xs_line_peek()); tft_xs_line_body()
	 * checks their order and the header fields after them, and returns
	 * XS_REDO when the line must be stored the serial way after all.
	 */
	int optimistic;
	int64_t opt_ts, opt_dur; /* the previous event's, in the writer's order */
	struct xs_line opt_tail; /* header fields seen after the events */

	/*
	 * Pass 1's notes on the line it read last (heads_line, heads_len):
	 * the fields before the stats of its first nheads events, for pass 2
	 * of that line only (tft_xs_line_body() drops them).
	 */
	struct xs_head *heads; /* owned: cheads entries, at most HEADS_MAX */
	uint32_t nheads, cheads;
	const uint8_t *heads_line; /* borrowed */
	size_t heads_len;

	/* Current event. */
	struct tft_arg args[MAX_ARGS + 1]; /* the extra slot takes the stats past MAX_ARGS */
	uint32_t nargs;
	int collecting_meta;  /* stats go to meta_args instead of args */
	uint64_t ev_corr, ev_group, ev_step_num;
	int has_corr, has_group, has_step_num;
	uint32_t ev_step_name;

	/* Whole file. */
	struct xs_ctab corr;      /* the serial lines' correlation ids */
	struct xs_halves halves;  /* the parallel lines' (tft_xs_merge_notes()) */
	struct idmap group_map;
	struct xs_group *groups; /* owned */
	uint32_t ngroups, cgroups;
	struct tft_step *steps;  /* owned: from Steps lines */
	uint32_t nsteps, csteps;
	uint32_t host_process;   /* first /host:CPU process, for group steps */
	uint64_t events;
	struct timespec last_progress;
	char scratch[128];

	uint32_t k_long_name, k_num_occ, k_metadata_id, c_event, flow_cat, flow_name;

	/* Keys (see struct xs_corr). */
	uint32_t nlines_seen; /* lines of the file so far */
	uint64_t key_line;    /* the current line's, << 32 */
	uint64_t ev_key;      /* the current event's */
	struct xs_stepkey *step_keys; /* owned: with steps (nsteps used) */
	uint32_t cstep_keys;

	/*
	 * Parallel lines. In the importer's own state: the plane's line jobs
	 * and the threads' states (clones[0] runs on the calling thread). A
	 * clone is a copy of the plane's state with its own buffers, maps and
	 * decoder; it appends through its lane and notes into its own maps.
	 */
	int parallel;        /* lines as jobs (see "parallel lines") */
	struct xs_job *jobs; /* owned: the group's */
	uint32_t njobs, cjobs;
	struct xs_psnap *snaps; /* owned: the group's planes */
	uint32_t nsnaps, csnaps;
	size_t group_bytes;  /* held by snaps */
	size_t group_max;    /* a group ends past this (PAR_GROUP_BYTES, or half the memory budget) */
	struct xs_clone *clones; /* owned: nclones */
	uint32_t nclones;
	struct tft_jobq jobq; /* the workers take jobs [0, jobq.n) */
	uint32_t fail_job;   /* atomic: lowest job index that failed (UINT32_MAX: none) */
	int scanning;        /* the threads scan the jobs (tft_xs_line_scan()), else store them */
	pthread_mutex_t sorter_mu;
	/* In a clone: */
	struct xs *parent;              /* borrowed; NULL in the importer's own state */
	struct tft_writer_lane *lane;   /* borrowed; NULL: append to the writer */
	struct xs_icache *icache;       /* owned: ICACHE_SLOTS entries (see tft_xs_intern()) */
	struct xs_cnote *cnotes;        /* owned: correlation ends noted, each job's together */
	uint32_t ncnotes, ccnotes;
	/*
	 * The current line's group notes (note_group()), added to groups when
	 * the line is stored and dropped when it must be redone: a line stored
	 * optimistically may have timed its events from a header that was not
	 * complete yet.
	 */
	struct idmap lgroup_map;
	struct xs_group *lgroups;       /* owned */
	uint32_t nlgroups, clgroups;
	int quiet;                      /* no progress calls (not the calling thread) */
};

struct xs_clone {
	struct xs x;
	struct tft_pb_dec dec;
	struct tft_error err;
	uint32_t base_depth; /* dec.depth outside any plane */
	uint32_t cur_plane;  /* snapshot loaded, UINT32_MAX: none */
	uint32_t fail_job; /* the job this clone failed on, UINT32_MAX: none */
	int fail_rc;
};

/*
 * An event's fields before its stats as fast_event() reads them, noted by
 * pass 1 (which reads them anyway) for pass 2 to start at the stats.
 */
struct xs_head {
	int64_t metadata_id, offset_ps, num_occurrences, duration_ps;
	const uint8_t *stats; /* borrowed: where its stats start */
	uint32_t has;         /* XE_* bits, as fast_event() sets them */
};

/* ---- small helpers (inline: called per event) ------------------------------------ */

/* Their slow paths (flows.c, steps.c). */
uint32_t tft_xs_corr_entry(struct xs_ctab *t, uint64_t id, uint64_t key);
int tft_xs_corr_more_add(struct xs_ctab *t, uint32_t i, uint32_t track, int64_t ts);
int tft_xs_group_new(struct idmap *map, struct xs_group **groups, uint32_t *n, uint32_t *cap,
		     const struct xs_group *e);

static inline int oom(struct xs *x)
{
	return tft_pb_wire_fail(x->dec, TFT_ENOMEM, -1, "out of memory");
}

/* Store through the clone's lane, or the writer. */
static inline int xs_append(struct xs *x, const struct tft_event *ev)
{
	return x->lane ? tft_writer_lane_append(x->lane, ev) : tft_writer_append(x->w, ev);
}

static inline int xs_end_track(struct xs *x, uint32_t track)
{
	return x->lane ? tft_writer_lane_end_track(x->lane, track) : tft_writer_end_track(x->w, track);
}

static inline int bytes_eq(struct tft_pb_bytes b, const char *lit)
{
	size_t n = strlen(lit);

	return b.len == n && (!n || memcmp(b.p, lit, n) == 0); /* b.p may be NULL when empty */
}

static inline int bytes_same(struct tft_pb_bytes a, struct tft_pb_bytes b)
{
	return a.len == b.len && (!a.len || memcmp(a.p, b.p, a.len) == 0);
}

static inline int bytes_prefix(struct tft_pb_bytes b, const char *lit)
{
	size_t n = strlen(lit);

	return b.len >= n && memcmp(b.p, lit, n) == 0;
}

/* Round ps to the nearest ns (floor division, no overflow). */
static inline int64_t ps_to_ns(int64_t ps)
{
	int64_t q, r;

	/* The usual case: floor((ps + 500) / 1000), unsigned (a multiply, no sign fix-up). */
	if (tft_likely(ps >= 0 && ps <= INT64_MAX - 500))
		return (int64_t)(((uint64_t)ps + 500) / 1000);
	q = ps / 1000;
	r = ps % 1000;

	if (r < 0) {
		q--;
		r += 1000;
	}
	return r >= 500 ? q + 1 : q;
}

static inline int64_t sat_add(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

/*
 * A line's timestamp on its host's clock (see xs.clock_ns). TF's
 * NormalizeTimestamps subtracts the profile start from the lines that began
 * at or after it; a line that began before keeps its epoch time. So a
 * relative time is small and an epoch time is near the start: below half
 * the start (the profile would span decades otherwise), it is relative.
 */
static inline int64_t line_clock(const struct xs *x, int64_t ts)
{
	return x->clock_ns && ts >= 0 && ts < x->clock_ns / 2 ? ts + x->clock_ns : ts;
}

static inline int corr_end(struct xs_ctab *t, uint32_t i, int dst, uint32_t track, int64_t ts)
{
	struct xs_corr *c = &t->corr[i];

	if (dst && c->dst_track == TFT_NONE) {
		c->dst_track = track;
		c->dst_ts = ts;
	} else if (!dst && c->src_track == TFT_NONE) {
		c->src_track = track;
		c->src_ts = ts;
	} else if (dst) {
		return tft_xs_corr_more_add(t, i, track, ts);
	}
	return 0;
}

static inline __attribute__((always_inline)) int note_corr(struct xs *x, uint32_t track, int64_t ts)
{
	uint32_t i;

	if (x->parent) { /* a clone: note it, tft_xs_merge_notes() keeps the first of each end */
		struct xs_cnote *n;

		if (tft_grow((void **)&x->cnotes, &x->ccnotes, x->ncnotes + 1, sizeof(*x->cnotes)))
			return TFT_ENOMEM;
		n = &x->cnotes[x->ncnotes++];
		n->id = x->ev_corr;
		n->ts = ts;
		return 0;
	}
	i = tft_xs_corr_entry(&x->corr, x->ev_corr, x->ev_corr);
	if (i == TFT_NONE)
		return TFT_ENOMEM;
	return corr_end(&x->corr, i, x->device_plane, track, ts);
}

/*
 * Note a group (its id, span and step name; first_key and name_key its
 * event's key) in a group table: the file's (x->groups) or a clone's line
 * table (x->lgroups). Up to MAX_GROUPS groups; a name noted later wins.
 */
static inline __attribute__((always_inline)) int group_add(struct idmap *map, struct xs_group **groups,
							   uint32_t *n, uint32_t *cap,
							   const struct xs_group *e)
{
	uint32_t i = idmap_get(map, e->id);
	struct xs_group *g;

	if (tft_unlikely(i == TFT_NONE))
		return tft_xs_group_new(map, groups, n, cap, e);
	g = &(*groups)[i];
	if (e->start < g->start)
		g->start = e->start;
	if (e->end > g->end)
		g->end = e->end;
	if (e->name != TFT_NONE) {
		g->name = e->name;
		g->name_key = e->name_key;
	}
	return 0;
}

static inline __attribute__((always_inline)) int note_group(struct xs *x, int64_t start, int64_t end)
{
	struct xs_group e = {
		.id = x->ev_group,
		.start = start,
		.end = end,
		.name = x->ev_step_name,
		.first_key = x->ev_key,
		.name_key = x->ev_step_name != TFT_NONE ? x->ev_key : 0,
	};

	if (x->parent) /* a clone: the line's table until the line is stored */
		return group_add(&x->lgroup_map, &x->lgroups, &x->nlgroups, &x->clgroups, &e);
	return group_add(&x->group_map, &x->groups, &x->ngroups, &x->cgroups, &e);
}

/* ---- the importer's files ---------------------------------------------------------- */

/* tft_xs_intern.c */
struct xs_icache *tft_xs_icache_new(void);
uint32_t tft_xs_intern(struct xs *x, const void *s, size_t n);

/* stats.c */
int tft_xs_add_event_stat(struct xs *x, const struct xs_stat *s);
int tft_xs_on_event_stat(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v);
int tft_xs_on_meta_stat(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v);
int tft_xs_on_plane_stat(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v);

/* host.c */
void tft_xs_quiet_iter(struct tft_pb_dec *q, struct tft_pb_iter *it, const uint8_t *p, size_t len);
int tft_xs_on_space_plane(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v);
uint32_t tft_xs_host_from_name(struct xs *x, const char *name);
uint32_t tft_xs_distinct_host(struct xs *x, const char *name);

/* plane.c */
int tft_xs_on_plane(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v);
int tft_xs_on_plane_later(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v);
int tft_xs_on_stat_meta(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v);
int tft_xs_on_event_meta(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v);

/* tracks.c */
uint32_t tft_xs_add_plane_process(struct xs *x, struct tft_pb_bytes name, int64_t id, uint32_t index,
				  uint32_t labels);
int tft_xs_line_kind(const struct xs *x, struct tft_pb_bytes name);
uint32_t tft_xs_line_flags(const struct xs *x, int kind, struct tft_pb_bytes name);
int tft_xs_line_track(struct xs *x);
int tft_xs_line_pending(struct xs *x, struct xs_job *j);
int tft_xs_line_rename(struct xs *x, const struct xs_job *j);
void tft_xs_mark_derived_lines(struct tft_writer *w, uint32_t first);

/* scan.c */
int tft_xs_line_scan(struct xs *x, const struct tft_pb_sub *ls, struct xs_job *j, int note);
int tft_xs_line_peek(struct xs *x, const struct tft_pb_sub *ls, struct xs_job *j);

/* line.c */
int tft_xs_line_body(struct xs *x, const struct xs_job *j);
int tft_xs_on_line(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v);

/* pend.c */
int tft_xs_queue_event(struct xs *x, const struct tft_event *ev);
int tft_xs_flush_line(struct xs *x);

/* flows.c */
void tft_xs_ctab_free(struct xs_ctab *t);
int tft_xs_emit_flows(struct xs *x);

/* steps.c */
int tft_xs_line_groups_end(struct xs *x, int commit);
int tft_xs_steps_reserve(struct xs *x);
int tft_xs_add_step_marker(struct xs *x, const struct tft_event *ev);
int tft_xs_emit_steps(struct xs *x);

/* parallel.c */
int tft_xs_snap_plane(struct xs *x, const struct tft_pb_sub *ps);
void tft_xs_snaps_free(struct xs *x);
int tft_xs_on_line_job(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v);
void tft_xs_clone_free(struct xs_clone *c);
int tft_xs_run_jobs(struct xs *x, int err_r);

/* merge.c */
int tft_xs_merge_notes(struct xs *x, uint32_t n, uint32_t njobs);

/* space.c */
void tft_xs_progress(struct xs *x, uint64_t pos);
int tft_xs_on_space_field(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v);

#endif /* TFT_COLLECT_XSPACE_XS_INT_H */
