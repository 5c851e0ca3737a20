/* SPDX-License-Identifier: MIT */
/*
 * XSpace importer: walks planes (two passes: metadata first, then lines,
 * since the wire order puts lines before the metadata maps), resolves event
 * and stat metadata, and streams XEvents to the writer.
 *
 * Each line is read twice: pass 1 takes its header (name, ids, which come
 * after the events on the wire) and checks, from the events' times alone,
 * whether they are already in the writer's order; pass 2 decodes the
 * events. An ordered line (the usual case) goes straight to the writer as
 * it is decoded; any other line is held back, sorted and then written, or
 * goes through the sorter when it is too large to hold. The hot paths
 * (fast_line_header(), fast_event()) accept the canonical encoding only
 * and hand anything else to the table decoder, which checks it and reports
 * errors with their message path.
 *
 * A plane is walked in passes too (stat metadata, event metadata, stats,
 * lines): its pass 1 checks every field and notes where each repeated
 * field lies, so each later pass walks only its own span (plane_pass()),
 * and the metadata map entries take a fast path (fast_meta_entry()) in
 * their usual layout; real profiles carry much metadata (a third of the
 * bytes of a TF GPU profile).
 */
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "codec/pb_wire.h"
#include "collect/ingest_xspace.h"
#include "core/grow.h"
#include "core/strtab.h"
#include "store/sorter.h"

#define MAX_ARGS 64
#define XS_REDO 1 /* line_body(): store the line again, the serial way (see xs.optimistic) */
#define MAX_GROUPS (1u << 20)
#define HEADS_MAX (1u << 16) /* events of a line whose fields pass 1 notes for pass 2 */

/* ---- u64 -> u32 map: a dense array for small keys, a hash for the rest ------ */

#define DENSE_MAX (1u << 23) /* keys below this may live in the dense array (32 MiB) */

struct idmap_slot {
	uint64_t key;
	uint32_t val; /* TFT_NONE = empty */
};

struct idmap {
	uint32_t *dense;          /* owned: dense[key] for key < ndense (TFT_NONE = absent) */
	uint32_t ndense;
	struct idmap_slot *slots; /* owned: keys >= ndense; cap is a power of two or 0 */
	uint32_t cap, count;
};

static void idmap_clear(struct idmap *m)
{
	for (uint32_t i = 0; i < m->ndense; i++)
		m->dense[i] = TFT_NONE;
	for (uint32_t i = 0; i < m->cap; i++)
		m->slots[i].val = TFT_NONE;
	m->count = 0;
}

static void idmap_free(struct idmap *m)
{
	free(m->dense);
	free(m->slots);
}

static inline uint32_t idmap_get(const struct idmap *m, uint64_t key)
{
	uint32_t mask, i;

	if (key < m->ndense)
		return m->dense[key];
	if (!m->count)
		return TFT_NONE;
	mask = m->cap - 1;
	i = (uint32_t)tft_hash_u64(key) & mask;
	for (;;) {
		const struct idmap_slot *s = &m->slots[i];

		if (s->val == TFT_NONE)
			return TFT_NONE;
		if (s->key == key)
			return s->val;
		i = (i + 1) & mask;
	}
}

static int hash_put(struct idmap *m, uint64_t key, uint32_t val);

/* Rebuild the hash part with capacity ncap, moving keys < ndense to the dense part. */
static int idmap_rehash(struct idmap *m, uint32_t ncap)
{
	struct idmap_slot *old = m->slots, *ns;
	uint32_t ocap = m->cap;

	ns = malloc((size_t)ncap * sizeof(*ns));
	if (!ns)
		return TFT_ENOMEM;
	for (uint32_t k = 0; k < ncap; k++)
		ns[k].val = TFT_NONE;
	m->slots = ns;
	m->cap = ncap;
	m->count = 0;
	for (uint32_t k = 0; k < ocap; k++) {
		if (old[k].val == TFT_NONE)
			continue;
		if (old[k].key < m->ndense)
			m->dense[old[k].key] = old[k].val;
		else
			hash_put(m, old[k].key, old[k].val);
	}
	free(old);
	return 0;
}

static int hash_put(struct idmap *m, uint64_t key, uint32_t val)
{
	uint32_t mask, i;

	if ((m->count + 1) * 4 >= m->cap * 3) {
		uint32_t ncap = m->cap ? m->cap * 2 : 64;

		if (ncap > (1u << 30) || idmap_rehash(m, ncap))
			return TFT_ENOMEM;
	}
	mask = m->cap - 1;
	i = (uint32_t)tft_hash_u64(key) & mask;
	for (;;) {
		struct idmap_slot *s = &m->slots[i];

		if (s->val == TFT_NONE) {
			s->key = key;
			s->val = val;
			m->count++;
			return 0;
		}
		if (s->key == key) {
			s->val = val;
			return 0;
		}
		i = (i + 1) & mask;
	}
}

/* idmap_put() for a key past the dense array. */
static int __attribute__((noinline)) idmap_put_slow(struct idmap *m, uint64_t key, uint32_t val,
						     uint32_t live)
{
	/*
	 * Ids are usually small and dense (1..N; correlation ids interleaved
	 * across threads): grow the array while it stays within 16 slots per
	 * live entry.
	 */
	if (key < DENSE_MAX && key <= 16 * (uint64_t)live + 65536) {
		uint32_t n = m->ndense ? m->ndense : 256, *nd;

		while (n <= key)
			n *= 2;
		nd = realloc(m->dense, (size_t)n * sizeof(*nd));
		if (!nd)
			return TFT_ENOMEM;
		for (uint32_t i = m->ndense; i < n; i++)
			nd[i] = TFT_NONE;
		m->dense = nd;
		m->ndense = n;
		if (m->count && idmap_rehash(m, m->cap))
			return TFT_ENOMEM;
		m->dense[key] = val;
		return 0;
	}
	return hash_put(m, key, val);
}

/* Insert or replace. 0 or TFT_ENOMEM. `live` = entries in the map (density check). */
static inline int idmap_put(struct idmap *m, uint64_t key, uint32_t val, uint32_t live)
{
	if (tft_likely(key < m->ndense)) { /* new correlation ids, mostly: no call */
		m->dense[key] = val;
		return 0;
	}
	return idmap_put_slow(m, key, val, live);
}

/* ---- message structs and tables ------------------------------------------------ */

#define F TFT_PB_FIELD
#define H TFT_PB_HOOK

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

static const struct tft_pb_field stat_fields[] = {
	F(1, TFT_PB_INT64, 0, struct xs_stat, metadata_id, "metadata_id", NULL, NULL),
	F(2, TFT_PB_DOUBLE, 0, struct xs_stat, d, "double_value", NULL, NULL),
	F(3, TFT_PB_UINT64, 0, struct xs_stat, u, "uint64_value", NULL, NULL),
	F(4, TFT_PB_INT64, 0, struct xs_stat, i, "int64_value", NULL, NULL),
	F(5, TFT_PB_STRING, 0, struct xs_stat, str, "str_value", NULL, NULL),
	F(6, TFT_PB_BYTES, 0, struct xs_stat, bytes, "bytes_value", NULL, NULL),
	F(7, TFT_PB_UINT64, 0, struct xs_stat, ref, "ref_value", NULL, NULL),
};
static const struct tft_pb_msg stat_msg = {"XStat", stat_fields, 7, offsetof(struct xs_stat, has)};

struct xs_event {
	uint64_t has;
	int64_t metadata_id, offset_ps, duration_ps, num_occurrences;
};

enum { XE_META, XE_OFFSET, XE_DURATION, XE_STATS, XE_NUMOCC };

static int on_event_stat(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v);

static const struct tft_pb_field event_fields[] = {
	F(1, TFT_PB_INT64, 0, struct xs_event, metadata_id, "metadata_id", NULL, NULL),
	F(2, TFT_PB_INT64, 0, struct xs_event, offset_ps, "offset_ps", NULL, NULL),
	F(3, TFT_PB_INT64, 0, struct xs_event, duration_ps, "duration_ps", NULL, NULL),
	H(4, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "stats", on_event_stat, NULL),
	F(5, TFT_PB_INT64, 0, struct xs_event, num_occurrences, "num_occurrences", NULL, NULL),
};
static const struct tft_pb_msg event_msg = {"XEvent", event_fields, 5, offsetof(struct xs_event, has)};

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

static int on_event_later(void *ctx, void *msg, const struct tft_pb_field *f,
			  const struct tft_pb_val *v)
{
	return 0; /* pass 2 (do_line) decodes the events */
}

/*
 * Pass 1 over a line: everything but the events, which pass 2 walks since
 * the name and display_name come after them in the wire order.
 */
static const struct tft_pb_field line_hdr_fields[] = {
	F(1, TFT_PB_INT64, 0, struct xs_line, id, "id", NULL, NULL),
	F(2, TFT_PB_STRING, 0, struct xs_line, name, "name", NULL, NULL),
	F(3, TFT_PB_INT64, 0, struct xs_line, timestamp_ns, "timestamp_ns", NULL, NULL),
	H(4, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "events", on_event_later, NULL),
	F(9, TFT_PB_INT64, 0, struct xs_line, duration_ps, "duration_ps", NULL, NULL),
	F(10, TFT_PB_INT64, 0, struct xs_line, display_id, "display_id", NULL, NULL),
	F(11, TFT_PB_STRING, 0, struct xs_line, display_name, "display_name", NULL, NULL),
};
static const struct tft_pb_msg line_hdr_msg = {"XLine", line_hdr_fields, 7, offsetof(struct xs_line, has)};

struct xs_stat_meta {
	uint64_t has;
	int64_t id;
	struct tft_pb_bytes name, description;
};

static const struct tft_pb_field stat_meta_fields[] = {
	F(1, TFT_PB_INT64, 0, struct xs_stat_meta, id, "id", NULL, NULL),
	F(2, TFT_PB_STRING, 0, struct xs_stat_meta, name, "name", NULL, NULL),
	F(3, TFT_PB_STRING, 0, struct xs_stat_meta, description, "description", NULL, NULL),
};
static const struct tft_pb_msg stat_meta_msg = {"XStatMetadata", stat_meta_fields, 3,
						offsetof(struct xs_stat_meta, has)};

struct xs_smeta_entry {
	uint64_t has;
	int64_t key;
	struct xs_stat_meta value;
};

static const struct tft_pb_field smeta_entry_fields[] = {
	F(1, TFT_PB_INT64, 0, struct xs_smeta_entry, key, "key", NULL, NULL),
	F(2, TFT_PB_MESSAGE, 0, struct xs_smeta_entry, value, "value", NULL, &stat_meta_msg),
};
static const struct tft_pb_msg smeta_entry_msg = {"XPlane.StatMetadataEntry", smeta_entry_fields, 2,
						  offsetof(struct xs_smeta_entry, has)};

struct xs_event_meta_raw {
	uint64_t has;
	int64_t id;
	struct tft_pb_bytes name, display_name;
};

static int on_meta_stat(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v);

static const struct tft_pb_field event_meta_fields[] = {
	F(1, TFT_PB_INT64, 0, struct xs_event_meta_raw, id, "id", NULL, NULL),
	F(2, TFT_PB_STRING, 0, struct xs_event_meta_raw, name, "name", NULL, NULL),
	F(4, TFT_PB_STRING, 0, struct xs_event_meta_raw, display_name, "display_name", NULL, NULL),
	H(5, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "stats", on_meta_stat, NULL),
};
static const struct tft_pb_msg event_meta_msg = {"XEventMetadata", event_meta_fields, 4,
						 offsetof(struct xs_event_meta_raw, has)};

struct xs_emeta_entry {
	uint64_t has;
	int64_t key;
	struct xs_event_meta_raw value;
};

static const struct tft_pb_field emeta_entry_fields[] = {
	F(1, TFT_PB_INT64, 0, struct xs_emeta_entry, key, "key", NULL, NULL),
	F(2, TFT_PB_MESSAGE, 0, struct xs_emeta_entry, value, "value", NULL, &event_meta_msg),
};
static const struct tft_pb_msg emeta_entry_msg = {"XPlane.EventMetadataEntry", emeta_entry_fields, 2,
						  offsetof(struct xs_emeta_entry, has)};

struct xs_plane {
	uint64_t has;
	int64_t id;
	struct tft_pb_bytes name;
};

/*
 * Containers are walked in several passes, one table per pass, because the
 * wire order puts what is needed first last (lines before the metadata maps,
 * planes before the hostnames). A pass skips what it does not list; nothing
 * is buffered, so memory does not grow with the number of entries.
 */
static int on_space_plane(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v);
static int on_stat_meta(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v);
static int on_event_meta(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v);
static int on_plane_stat(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v);
static int on_line(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v);

static int on_plane_later(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v);

/*
 * Plane pass 1: id and name; the rest is checked for its wire type only,
 * and where each repeated field lies is noted (on_plane_later()) so that
 * the later passes walk only that part of the plane.
 */
static const struct tft_pb_field plane_fields[] = {
	F(1, TFT_PB_INT64, 0, struct xs_plane, id, "id", NULL, NULL),
	F(2, TFT_PB_STRING, 0, struct xs_plane, name, "name", NULL, NULL),
	H(3, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "lines", on_plane_later, NULL),
	H(4, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "event_metadata", on_plane_later, NULL),
	H(5, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "stat_metadata", on_plane_later, NULL),
	H(6, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "stats", on_plane_later, NULL),
};
static const struct tft_pb_msg plane_msg = {"XPlane", plane_fields, 6, offsetof(struct xs_plane, has)};

/* Passes 2-5: stat metadata, event metadata (their stats need the stat names), stats, lines. */
static const struct tft_pb_field plane_smeta_fields[] = {
	H(5, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "stat_metadata", on_stat_meta, NULL),
};
static const struct tft_pb_msg plane_smeta_msg = {"XPlane", plane_smeta_fields, 1, TFT_PB_NOOFF};
static const struct tft_pb_field plane_emeta_fields[] = {
	H(4, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "event_metadata", on_event_meta, NULL),
};
static const struct tft_pb_msg plane_emeta_msg = {"XPlane", plane_emeta_fields, 1, TFT_PB_NOOFF};
static const struct tft_pb_field plane_stats_fields[] = {
	H(6, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "stats", on_plane_stat, NULL),
};
static const struct tft_pb_msg plane_stats_msg = {"XPlane", plane_stats_fields, 1, TFT_PB_NOOFF};
static const struct tft_pb_field plane_lines_fields[] = {
	H(3, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "lines", on_line, NULL),
};
static const struct tft_pb_msg plane_lines_msg = {"XPlane", plane_lines_fields, 1, TFT_PB_NOOFF};

static int on_space_field(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v);
static int on_plane(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v);

/* XSpace pass 1: hostnames, errors, warnings (after the planes on the wire), the host's clock. */
static const struct tft_pb_field space_fields[] = {
	H(1, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "planes", on_space_plane, NULL),
	H(2, TFT_PB_STRING, TFT_PB_F_REPEATED, "errors", on_space_field, NULL),
	H(3, TFT_PB_STRING, TFT_PB_F_REPEATED, "warnings", on_space_field, NULL),
	H(4, TFT_PB_STRING, TFT_PB_F_REPEATED, "hostnames", on_space_field, NULL),
};
static const struct tft_pb_msg space_msg = {"XSpace", space_fields, 4, TFT_PB_NOOFF};
/* Pass 2: the planes. */
static const struct tft_pb_field space_planes_fields[] = {
	H(1, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "planes", on_plane, NULL),
};
static const struct tft_pb_msg space_planes_msg = {"XSpace", space_planes_fields, 1, TFT_PB_NOOFF};

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
 * (run_jobs()) merge what each thread noted in file order, so that the
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

/* A correlation end a clone noted (merged by merge_notes()); its job gives the track and the side. */
struct xs_cnote {
	uint64_t id;
	int64_t ts;
};

/* Correlation ids with their ends (corr_entry(), corr_end()). All owned. */
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
 * further destination, so emit_flows() interleaves the halves in the order
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

/* A line of the plane: scanned by line_scan(), its track by line_pending(). */
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
	int peeked;               /* header from line_peek(): stored optimistically */
	int need_scan;            /* line_peek() could not tell: line_scan() it */
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
	const uint8_t *lim;         /* borrowed: end of the whole input (see xs_varint) */
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
	 * flush_line() would.
	 */
	int direct;
	int store_err;
	/*
	 * Parallel lines: the line's events are stored as they are decoded
	 * before its header is known to be complete (line_peek()); line_body()
	 * checks their order and the header fields after them, and returns
	 * XS_REDO when the line must be stored the serial way after all.
	 */
	int optimistic;
	int64_t opt_ts, opt_dur; /* the previous event's, in the writer's order */
	struct xs_line opt_tail; /* header fields seen after the events */

	/*
	 * Pass 1's notes on the line it read last (heads_line, heads_len):
	 * the fields before the stats of its first nheads events, for pass 2
	 * of that line only (line_body() drops them).
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
	struct xs_halves halves;  /* the parallel lines' (merge_notes()) */
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
	uint32_t next_job;   /* atomic: the next job to take */
	uint32_t fail_job;   /* atomic: lowest job index that failed (UINT32_MAX: none) */
	uint32_t jobs_end;   /* the threads take jobs [0, jobs_end) */
	int scanning;        /* the threads scan the jobs (line_scan()), else store them */
	pthread_mutex_t sorter_mu;
	/* In a clone: */
	struct xs *parent;              /* borrowed; NULL in the importer's own state */
	struct tft_writer_lane *lane;   /* borrowed; NULL: append to the writer */
	struct xs_icache *icache;       /* owned: ICACHE_SLOTS entries (see intern()) */
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
	pthread_t thread;
	int started;
	uint32_t base_depth; /* dec.depth outside any plane */
	uint32_t cur_plane;  /* snapshot loaded, UINT32_MAX: none */
	uint32_t fail_job; /* the job this clone failed on, UINT32_MAX: none */
	int fail_rc;
};

static int oom(struct xs *x)
{
	return tft_pb_wire_fail(x->dec, TFT_ENOMEM, -1, "out of memory");
}

/* Store through the clone's lane, or the writer. */
static inline int xs_append(struct xs *x, const struct tft_event *ev)
{
	return x->lane ? tft_writer_lane_append(x->lane, ev) : tft_writer_append(x->w, ev);
}

static int xs_end_track(struct xs *x, uint32_t track)
{
	return x->lane ? tft_writer_lane_end_track(x->lane, track) : tft_writer_end_track(x->w, track);
}

/* The sorter is shared by the clones. */
static int sorter_push(struct xs *x, const struct tft_event *ev)
{
	pthread_mutex_t *mu = x->parent ? &x->parent->sorter_mu : NULL;
	int r;

	if (mu)
		pthread_mutex_lock(mu);
	r = tft_sorter_push(x->sorter, ev, x->err);
	if (mu)
		pthread_mutex_unlock(mu);
	return r;
}

/*
 * A clone's interned strings of the input (a direct-mapped cache in front of
 * the writer's table, whose lock the threads would otherwise take for every
 * string stat of a real profile: kernel details, op names ...). A real TF GPU
 * host profile has ~7 k distinct string stat values (5.3 k kernel names, 1.5 k
 * tf_op names), and the hosts of one job share most of them: 4096 slots
 * missed most; 16 Ki (256 KiB per thread) keeps them as well as 64 Ki did
 * (as many calls to the writer on the real profile x5). The table is zeroed
 * for every XSpace (calloc clears a reused heap block: at 1 MiB per thread
 * and host that was 3% of the real profile's instructions), and this size
 * fits the L2 cache beside the rest.
 */
#define ICACHE_SLOTS 16384u /* a power of two */

struct xs_icache {
	const uint8_t *p; /* borrowed: inside the input; NULL = empty */
	uint32_t len, id;
};

/*
 * The cache slot of b[0, n): a long string by its length and three of its
 * words (first, middle, last), not all its bytes (real stat values are
 * kernel names of a hundred bytes and more; the writer hashes a miss in full
 * anyway). Strings that agree there share a slot: a miss, never a wrong id.
 */
static inline uint32_t icache_slot(const uint8_t *b, size_t n)
{
	uint64_t w0, w1, w2;

	if (n < 24)
		return (uint32_t)tft_hash_fast(b, n, 0) & (ICACHE_SLOTS - 1);
	memcpy(&w0, b, 8);
	memcpy(&w1, b + n / 2 - 4, 8);
	memcpy(&w2, b + n - 8, 8);
	return (uint32_t)tft_hash_u64(w0 ^ (w1 * 0x9e3779b97f4a7c15ULL) ^
				      ((w2 ^ n) * 0xbf58476d1ce4e5b9ULL)) & (ICACHE_SLOTS - 1);
}

static uint32_t intern(struct xs *x, const void *s, size_t n)
{
	const uint8_t *b = s;
	struct xs_icache *c;
	uint32_t id;

	if (!n)
		return 0; /* id 0 is "" (and s may be NULL) */
	if (!x->icache || b < x->dec->base || b + n > x->lim || n > UINT32_MAX)
		return tft_writer_intern(x->w, (const char *)s, n);
	c = &x->icache[icache_slot(b, n)];
	if (c->p && c->len == n && memcmp(c->p, b, n) == 0)
		return c->id;
	id = tft_writer_intern(x->w, (const char *)s, n);
	if (id != UINT32_MAX) {
		c->p = b;
		c->len = (uint32_t)n;
		c->id = id;
	}
	return id;
}

static int has_ci(const uint8_t *s, size_t n, const char *needle)
{
	size_t k = strlen(needle);

	for (size_t i = 0; i + k <= n; i++) {
		size_t j = 0;

		for (; j < k; j++) {
			uint8_t c = s[i + j];

			if (c >= 'A' && c <= 'Z')
				c = (uint8_t)(c - 'A' + 'a');
			if (c != (uint8_t)needle[j])
				break;
		}
		if (j == k)
			return 1;
	}
	return 0;
}

static int bytes_eq(struct tft_pb_bytes b, const char *lit)
{
	size_t n = strlen(lit);

	return b.len == n && (!n || memcmp(b.p, lit, n) == 0); /* b.p may be NULL when empty */
}

static int bytes_same(struct tft_pb_bytes a, struct tft_pb_bytes b)
{
	return a.len == b.len && (!a.len || memcmp(a.p, b.p, a.len) == 0);
}

static int bytes_prefix(struct tft_pb_bytes b, const char *lit)
{
	size_t n = strlen(lit);

	return b.len >= n && memcmp(b.p, lit, n) == 0;
}

/* ---- stats -> args -------------------------------------------------------------------- */

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

static int printable_utf8ish(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] < 0x20 && p[i] != '\t' && p[i] != '\n')
			return 0;
	return 1;
}

/* v in decimal, as "%llu" writes it, at buf (room for 20 digits); returns the length. */
static size_t fmt_u64(char *buf, uint64_t v)
{
	char tmp[20];
	size_t n = 0;

	do {
		tmp[sizeof(tmp) - 1 - n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	memcpy(buf, tmp + sizeof(tmp) - n, n);
	return n;
}

/* Convert a decoded XStat into *a; 1 = filled, 0 = skip, <0 error. */
static int stat_to_arg(struct xs *x, const struct xs_stat *s, struct tft_arg *a,
		       const struct xs_smeta **meta_out)
{
	uint32_t mi = idmap_get(&x->smeta_map, (uint64_t)s->metadata_id);
	const struct xs_smeta *m;
	uint32_t id;

	*meta_out = NULL;
	if (mi == TFT_NONE)
		return 0; /* stat without metadata: nothing to name it by */
	m = &x->smeta[mi];
	*meta_out = m;
	a->key = m->name;
	if (s->has & (1u << XS_INT)) {
		a->type = TFT_ARG_INT;
		a->v.i = s->i;
	} else if (s->has & (1u << XS_UINT)) {
		if (s->u <= (uint64_t)INT64_MAX) {
			a->type = TFT_ARG_INT;
			a->v.i = (int64_t)s->u;
		} else {
			/* Text, as "%llu" would write it (snprintf costs ten times more). */
			id = intern(x, x->scratch, fmt_u64(x->scratch, s->u));
			if (id == UINT32_MAX)
				return TFT_ENOMEM;
			a->type = TFT_ARG_STR;
			a->v.str = id;
		}
	} else if (s->has & (1u << XS_DOUBLE)) {
		a->type = TFT_ARG_DOUBLE;
		a->v.d = s->d;
	} else if (s->has & (1u << XS_STR)) {
		id = intern(x, s->str.p, s->str.len);
		if (id == UINT32_MAX)
			return TFT_ENOMEM;
		a->type = TFT_ARG_STR;
		a->v.str = id;
	} else if (s->has & (1u << XS_REF)) {
		uint32_t ri = idmap_get(&x->smeta_map, s->ref);

		if (ri == TFT_NONE)
			return 0;
		a->type = TFT_ARG_STR;
		a->v.str = x->smeta[ri].name;
	} else if (s->has & (1u << XS_BYTES)) {
		if (s->bytes.len <= 256 && printable_utf8ish(s->bytes.p, s->bytes.len)) {
			id = intern(x, s->bytes.p, s->bytes.len);
		} else {
			/* "<%zu bytes>" */
			size_t n = 1;

			x->scratch[0] = '<';
			n += fmt_u64(x->scratch + 1, s->bytes.len);
			memcpy(x->scratch + n, " bytes>", 7);
			id = intern(x, x->scratch, n + 7);
		}
		if (id == UINT32_MAX)
			return TFT_ENOMEM;
		a->type = TFT_ARG_STR;
		a->v.str = id;
	} else {
		return 0; /* no value set */
	}
	return 1;
}

static int decode_stat(struct xs *x, const struct tft_pb_val *v, struct xs_stat *s)
{
	s->has = 0;
	s->metadata_id = 0; /* proto3 default when absent; values are read by presence bit */
	return tft_pb_wire_decode_sub(&v->sub, &stat_msg, s, x);
}

/* Turn a decoded event stat into an arg, noting the stats with a meaning. */
static int add_event_stat(struct xs *x, const struct xs_stat *s)
{
	const struct xs_smeta *m;
	struct tft_arg a;
	int r;

	r = stat_to_arg(x, s, &a, &m);
	if (r <= 0)
		return r;
	switch (m->special) {
	case SPECIAL_CORRELATION:
		if (a.type == TFT_ARG_INT) {
			x->ev_corr = (uint64_t)a.v.i;
			x->has_corr = 1;
		}
		break;
	case SPECIAL_GROUP:
		if (a.type == TFT_ARG_INT) {
			x->ev_group = (uint64_t)a.v.i;
			x->has_group = 1;
		}
		break;
	case SPECIAL_STEP_NUM:
		if (a.type == TFT_ARG_INT) {
			x->ev_step_num = (uint64_t)a.v.i;
			x->has_step_num = 1;
		}
		break;
	case SPECIAL_STEP_NAME:
		if (a.type == TFT_ARG_STR)
			x->ev_step_name = a.v.str;
		break;
	default:
		break;
	}
	if (x->nargs < MAX_ARGS)
		x->args[x->nargs++] = a;
	return 0;
}

static int on_event_stat(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct xs *x = ctx;
	struct xs_stat s;
	int r;

	r = decode_stat(x, v, &s);
	if (r)
		return r;
	if (add_event_stat(x, &s) < 0)
		return oom(x);
	return 0;
}

/*
 * Fast paths for the two hottest messages (XStat, XEvent). They accept the
 * canonical encoding (one-byte keys of the known fields) and return 0 on
 * anything else; the caller then decodes the event again with the field
 * tables, which skip unknown fields and report errors with their path.
 */
static int fast_stat(const uint8_t *p, const uint8_t *end, struct xs_stat *s)
{
	uint64_t v;

	s->has = 0;
	s->metadata_id = 0;
	/* The usual shape: metadata_id, then one value. */
	if (p < end && *p == 0x08) {
		p++;
		if (tft_pb_wire_varint(&p, end, &v))
			return 0;
		s->metadata_id = (int64_t)v;
		s->has = 1u << XS_META;
		if (p < end && (*p == 0x18 || *p == 0x20 || *p == 0x38)) {
			uint8_t k = *p++;

			if (tft_pb_wire_varint(&p, end, &v))
				return 0;
			if (k == 0x18) {
				s->u = v;
				s->has |= 1u << XS_UINT;
			} else if (k == 0x20) {
				s->i = (int64_t)v;
				s->has |= 1u << XS_INT;
			} else {
				s->ref = v;
				s->has |= 1u << XS_REF;
			}
			if (p == end)
				return 1;
		}
	}
	while (p < end) {
		switch (*p++) {
		case 0x08:
			if (tft_pb_wire_varint(&p, end, &v))
				return 0;
			s->metadata_id = (int64_t)v;
			s->has |= 1u << XS_META;
			break;
		case 0x11:
			if (end - p < 8)
				return 0;
			v = tft_pb_wire_le64(p);
			memcpy(&s->d, &v, sizeof(s->d));
			p += 8;
			s->has |= 1u << XS_DOUBLE;
			break;
		case 0x18:
			if (tft_pb_wire_varint(&p, end, &s->u))
				return 0;
			s->has |= 1u << XS_UINT;
			break;
		case 0x20:
			if (tft_pb_wire_varint(&p, end, &v))
				return 0;
			s->i = (int64_t)v;
			s->has |= 1u << XS_INT;
			break;
		case 0x2a:
			if (tft_pb_wire_varint(&p, end, &v) || v > (uint64_t)(end - p))
				return 0;
			s->str.p = p;
			s->str.len = (size_t)v;
			p += v;
			s->has |= 1u << XS_STR;
			break;
		case 0x32:
			if (tft_pb_wire_varint(&p, end, &v) || v > (uint64_t)(end - p))
				return 0;
			s->bytes.p = p;
			s->bytes.len = (size_t)v;
			p += v;
			s->has |= 1u << XS_BYTES;
			break;
		case 0x38:
			if (tft_pb_wire_varint(&p, end, &s->ref))
				return 0;
			s->has |= 1u << XS_REF;
			break;
		default:
			return 0;
		}
	}
	return 1;
}

/* Four input bytes as a little-endian number, in one load where the CPU allows. */
static inline uint32_t load_le32(const uint8_t *p)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
#else
	return tft_pb_wire_le32(p);
#endif
}

/*
 * A varint of 1..8 bytes at p, from eight bytes loaded at once (the caller
 * checked that they lie before the end of the whole input): the value and
 * its length, without a branch per byte; 0 if it is longer, -1 if it runs
 * past `end` (the end of the message).
 */
static inline __attribute__((always_inline)) int varint8(const uint8_t *p, const uint8_t *end,
							 uint64_t *out)
{
	uint64_t w, stop;
	unsigned n;

	memcpy(&w, p, 8); /* p[0] in the low byte (little-endian only) */
	stop = ~w & 0x8080808080808080ull;
	if (tft_unlikely(!stop))
		return 0;
	n = ((unsigned)__builtin_ctzll(stop) >> 3) + 1; /* bytes, 1..8 */
	if (tft_unlikely((size_t)(end - p) < n))
		return -1; /* truncated by the message end */
	/* Its n bytes without their continuation bits: n 7-bit groups. */
	w &= (stop ^ (stop - 1)) & 0x7f7f7f7f7f7f7f7full;
	/* Join neighbours (each lane's value only shrinks: no borrow). */
	w -= (w & 0x7f007f007f007f00ull) >> 1;       /* 16-bit lanes: a + 128 b */
	w -= ((w & 0x3fff00003fff0000ull) >> 2) * 3; /* 32-bit lanes: a + 2^14 b */
	*out = (w & 0xffffffffull) | (w >> 32) << 28; /* a + 2^28 b */
	return (int)n;
}

/*
 * Varint reader for the hot loops: one byte, else eight bytes decoded at
 * once without a branch per byte, when eight can be loaded before `lim`
 * (the end of the whole input, which may lie past `end`, the end of the
 * message). Longer varints and the last bytes of the input go to
 * tft_pb_wire_varint(); the results and returns are the same as its.
 */
static inline __attribute__((always_inline)) int xs_varint(const uint8_t **pp, const uint8_t *end,
							   const uint8_t *lim, uint64_t *out)
{
	const uint8_t *p = *pp;

	if (tft_likely(p < end && *p < 0x80)) {
		*out = *p;
		*pp = p + 1;
		return 0;
	}
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (tft_likely(p < end && lim - p >= 8)) {
		uint64_t w;
		int n;

		memcpy(&w, p, 8);
		if (!(w & 0x8000)) { /* two bytes (ids, small counts): short path */
			if (tft_unlikely(end - p < 2))
				return -1;
			*out = (w & 0x7f) | (w >> 1 & 0x3f80);
			*pp = p + 2;
			return 0;
		}
		n = varint8(p, end, out);
		if (tft_likely(n > 0)) {
			*pp = p + n;
			return 0;
		}
		if (n < 0)
			return -1;
	}
#else
	(void)lim;
#endif
	return tft_pb_wire_varint(pp, end, out);
}

/*
 * xs_varint() for values that mostly take several bytes (times in ps):
 * straight to the eight-byte path, which takes one or two bytes as well.
 * Same results and returns.
 */
static inline __attribute__((always_inline)) int xs_varint_wide(const uint8_t **pp,
								const uint8_t *end,
								const uint8_t *lim, uint64_t *out)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	const uint8_t *p = *pp;

	if (tft_likely(p < end && lim - p >= 8)) {
		int n = varint8(p, end, out);

		if (tft_likely(n > 0)) {
			*pp = p + n;
			return 0;
		}
		if (n < 0)
			return -1;
	}
#endif
	return xs_varint(pp, end, lim, out);
}

/* Skip a varint as xs_varint() would read it (same checks and returns; inlined,
 * the value's arithmetic is dropped). */
static inline __attribute__((always_inline)) int xs_skip_varint(const uint8_t **pp,
								const uint8_t *end,
								const uint8_t *lim)
{
	uint64_t v;

	return xs_varint(pp, end, lim, &v);
}

static inline __attribute__((always_inline)) int xs_skip_varint_wide(const uint8_t **pp,
								     const uint8_t *end,
								     const uint8_t *lim)
{
	uint64_t v;

	return xs_varint_wide(pp, end, lim, &v);
}

/*
 * Where an event sorts in its line: the writer's order (cmp_pend) without
 * the arrival index. The duration only breaks ties, so it is read only for
 * them (order_dur()).
 */
struct xs_order {
	int64_t ts;             /* ns, as line_event() computes it */
	int64_t off;            /* offset_ps, 0 if absent */
	const uint8_t *dp;      /* borrowed: the duration_ps varint (checked), NULL if absent */
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

/*
 * The start of an event as line_event() computes it, from the layout
 * fast_event() accepts at the event level (keep the two in step): its stats
 * are skipped whole, since a stat that fast_event() does not take sends
 * the event to the tables, which then find the same metadata_id, offset_ps,
 * num_occurrences and duration_ps fields (each once, or num_occurrences
 * twice in the places both take it, the last one counting). 1 = *o and *h
 * filled, 0 = another layout (the line is then held back and sorted if need
 * be, as any line could be).
 */
static inline __attribute__((always_inline)) int scan_event(const uint8_t *p, const uint8_t *end,
							    const uint8_t *lim, int64_t line_ts,
							    struct xs_order *o, struct xs_head *h)
{
	uint64_t v = 0;
	uint32_t has = 0;

	h->metadata_id = h->num_occurrences = h->duration_ps = 0;
	if (p < end && *p == 0x08) {
		p++;
		if (xs_varint(&p, end, lim, &v))
			return 0;
		h->metadata_id = (int64_t)v;
		has |= 1u << XE_META;
		v = 0;
	}
	if (p < end && *p == 0x10) {
		p++;
		if (xs_varint_wide(&p, end, lim, &v))
			return 0;
		has |= 1u << XE_OFFSET;
	}
	o->off = h->offset_ps = (int64_t)v;
	if (p < end && *p == 0x28) {
		p++;
		if (xs_varint(&p, end, lim, &v))
			return 0;
		h->num_occurrences = (int64_t)v;
		has |= 1u << XE_NUMOCC;
	}
	o->dp = NULL;
	if (p < end && *p == 0x18) {
		o->dp = ++p;
		if (xs_varint_wide(&p, end, lim, &v))
			return 0;
		h->duration_ps = (int64_t)v;
		has |= 1u << XE_DURATION;
	}
	h->stats = p;
	h->has = has;
	/* The stats: key and a length below 128 in one load (most stats are short). */
	if (tft_likely(lim - end >= 2)) { /* no bounds check per load */
		while (p < end) {
			uint32_t head = (uint32_t)p[0] | (uint32_t)p[1] << 8;

			if (tft_unlikely((head & 0x80ff) != 0x22))
				break;
			p += 2 + (head >> 8);
		}
		if (tft_unlikely(p > end)) /* the last one ran past the event */
			return 0;
	}
	while (p < end && *p == 0x22) {
		p++;
		if (xs_varint(&p, end, lim, &v) || v > (uint64_t)(end - p))
			return 0;
		p += v;
	}
	if (p < end && *p == 0x28) {
		p++;
		if (xs_skip_varint(&p, end, lim))
			return 0;
	}
	o->ts = sat_add(line_ts, ps_to_ns(o->off));
	return p == end;
}

/* The duration of a scanned event, in ns, as line_event() computes it. */
static int64_t order_dur(const struct xs_order *o, int64_t line_ts, const uint8_t *lim)
{
	const uint8_t *p = o->dp;
	int64_t dur = 0, stop;
	uint64_t v;

	/* It ends inside its event (scan_event() skipped it): lim bounds it as well. */
	if (p && !xs_varint(&p, lim, lim, &v))
		dur = (int64_t)v;
	stop = sat_add(line_ts, ps_to_ns(sat_add(o->off, dur > 0 ? dur : 0)));
	return dur > 0 && stop > o->ts ? stop - o->ts : 0;
}

static inline uint32_t smeta_index(const struct xs *x, uint64_t id)
{
	return idmap_get(&x->smeta_map, id);
}

/* intern() for a str_value of stat metadata mi, through its one-entry cache. */
static inline uint32_t intern_str_stat(struct xs *x, uint32_t mi, const uint8_t *p, size_t n)
{
	struct xs_strcache *c = &x->strs[mi];
	uint32_t id;

	if (c->p && n == c->len && memcmp(p, c->p, n) == 0)
		return c->id;
	id = intern(x, p, n);
	if (id != UINT32_MAX && n <= UINT32_MAX) {
		c->p = p;
		c->len = (uint32_t)n;
		c->id = id;
	}
	return id;
}

/* Note a stat with a meaning (add_event_stat's switch). */
static inline void note_special(struct xs *x, uint8_t special, const struct tft_arg *a)
{
	switch (special) {
	case SPECIAL_CORRELATION:
		if (a->type == TFT_ARG_INT) {
			x->ev_corr = (uint64_t)a->v.i;
			x->has_corr = 1;
		}
		break;
	case SPECIAL_GROUP:
		if (a->type == TFT_ARG_INT) {
			x->ev_group = (uint64_t)a->v.i;
			x->has_group = 1;
		}
		break;
	case SPECIAL_STEP_NUM:
		if (a->type == TFT_ARG_INT) {
			x->ev_step_num = (uint64_t)a->v.i;
			x->has_step_num = 1;
		}
		break;
	case SPECIAL_STEP_NAME:
		if (a->type == TFT_ARG_STR)
			x->ev_step_name = a->v.str;
		break;
	default:
		break;
	}
}

/*
 * The value of an event stat whose metadata_id was `mid`, at p (its key)
 * up to end, in the usual layout: one int64/uint64/double/str/ref value,
 * then the end. Fills *a as add_event_stat() would. 2 = *a filled, 1 = no
 * arg (as stat_to_arg() skips it), 0 = another layout (the caller tries
 * fast_stat()), TFT_ENOMEM.
 */
static inline __attribute__((always_inline)) int tight_value(struct xs *x, const uint8_t *p,
							     const uint8_t *end, uint64_t mid,
							     struct tft_arg *a)
{
	const struct xs_smeta *m;
	uint64_t v;
	uint32_t mi;
	uint8_t k;

	if (tft_unlikely(p >= end))
		return 0;
	k = *p++;
	if (tft_likely((k & 7) == TFT_PB_WT_VARINT)) {
		/* int64_value, uint64_value, ref_value: one varint, then the end. */
		if (xs_varint(&p, end, x->lim, &v) || p != end)
			return 0;
		mi = smeta_index(x, mid);
		a->v.i = (int64_t)v;
		a->type = TFT_ARG_INT;
		if (tft_unlikely(k != 0x20)) {
			if (k == 0x18) {
				if (v > (uint64_t)INT64_MAX)
					return 0; /* text, on the general path */
			} else if (k == 0x38) {
				uint32_t ri;

				if (mi == TFT_NONE)
					return 1;
				ri = smeta_index(x, v);
				if (ri == TFT_NONE) /* a ref to nothing: stat_to_arg() skips it */
					return 1;
				a->type = TFT_ARG_STR;
				a->v.i = 0;
				a->v.str = x->smeta[ri].name;
			} else {
				return 0; /* metadata_id again, or an unknown field */
			}
		}
	} else if (k == 0x11) { /* double_value */
		if (end - p != 8)
			return 0;
		v = (uint64_t)load_le32(p) | (uint64_t)load_le32(p + 4) << 32;
		a->type = TFT_ARG_DOUBLE;
		memcpy(&a->v.d, &v, sizeof(a->v.d));
		mi = smeta_index(x, mid);
	} else if (k == 0x2a) { /* str_value */
		if (xs_varint(&p, end, x->lim, &v) || v != (uint64_t)(end - p))
			return 0;
		mi = smeta_index(x, mid);
		if (mi == TFT_NONE)
			return 1;
		a->type = TFT_ARG_STR;
		a->v.i = 0;
		a->v.str = intern_str_stat(x, mi, p, (size_t)v);
		if (a->v.str == UINT32_MAX)
			return TFT_ENOMEM;
	} else {
		return 0;
	}
	if (mi == TFT_NONE)
		return 1; /* stat without metadata: nothing to name it by */
	m = &x->smeta[mi];
	a->key = m->name;
	if (tft_unlikely(m->special))
		note_special(x, m->special, a);
	return 2;
}

/* Read a varint field value if the next key byte is `key`. */
#define TAKE_VARINT(key, dst, bit, read)                                                \
	if (p < end && *p == (key)) {                                                   \
		p++;                                                                    \
		if (read(&p, end, lim, &v))                                             \
			return 0;                                                       \
		(dst) = (int64_t)v;                                                     \
		e->has |= 1u << (bit);                                                  \
	}

/*
 * fast_event() from the event's stats at p on (the fields before them in *e):
 * the stats, then a num_occurrences that may follow them.
 */
static inline __attribute__((always_inline)) int fast_stats(struct xs *x, const uint8_t *p,
							    const uint8_t *end, struct xs_event *e)
{
	const uint8_t *lim = x->lim;
	/* The next arg; past MAX_ARGS the spare slot is overwritten. */
	struct tft_arg *a = x->args, *last = x->args + MAX_ARGS;
	uint64_t v;
	int r;

	while (p < end) {
		const uint8_t *q;
		uint32_t head;

		/*
		 * The usual stat head in one load: the key, a length below 128,
		 * metadata_id's key and a metadata_id below 128.
		 */
		head = lim - p >= 4 ? load_le32(p) : 0;
		if (tft_likely((head & 0x80ff80ffu) == 0x00080022u)) {
			q = p + 2;
			p = q + (head >> 8 & 0xff);
			if (tft_unlikely(p > end))
				return 0;
			r = tight_value(x, q + 2, p, head >> 24, a);
		} else {
			uint64_t mid = 0;

			if (*p != 0x22)
				break;
			p++;
			if (xs_varint(&p, end, lim, &v) || v > (uint64_t)(end - p))
				return 0;
			q = p;
			p += v;
			r = 0;
			if (q < p && *q == 0x08) {
				const uint8_t *t = q + 1;

				if (!xs_varint(&t, p, lim, &mid))
					r = tight_value(x, t, p, mid, a);
			}
		}
		if (tft_likely(r == 2)) {
			a += a < last;
		} else if (tft_unlikely(r <= 0)) {
			struct xs_stat s;

			if (r < 0)
				return r;
			if (!fast_stat(q, p, &s))
				return 0;
			x->nargs = (uint32_t)(a - x->args);
			r = add_event_stat(x, &s);
			a = x->args + x->nargs;
			if (r < 0)
				return r;
		}
	}
	TAKE_VARINT(0x28, e->num_occurrences, XE_NUMOCC, xs_varint)
	x->nargs = (uint32_t)(a - x->args);
	return p == end; /* anything else in another order: the tables handle it */
}

/*
 * 1 = decoded (stats added as args), 0 = use the tables, <0 = out of memory.
 * Fields are tried in the order writers emit them (metadata_id, offset_ps,
 * duration_ps, stats...), which keeps the branches predictable. Stats in
 * the usual layout take tight_value(), the others fast_stat().
 *
 * scan_event() accepts the same event-level layout: pass 1 orders a line by
 * the times it reads there, so both must see the same fields (the tables,
 * when a stat sends the event to them, then find exactly those too). It
 * notes them (struct xs_head), and pass 2 then starts at the stats.
 */
static inline __attribute__((always_inline)) int fast_event(struct xs *x, const uint8_t *p,
							    const uint8_t *end, struct xs_event *e)
{
	const uint8_t *lim = x->lim;
	uint64_t v;

	TAKE_VARINT(0x08, e->metadata_id, XE_META, xs_varint)
	TAKE_VARINT(0x10, e->offset_ps, XE_OFFSET, xs_varint_wide)
	TAKE_VARINT(0x28, e->num_occurrences, XE_NUMOCC, xs_varint)
	TAKE_VARINT(0x18, e->duration_ps, XE_DURATION, xs_varint_wide)
	return fast_stats(x, p, end, e);
}

/* fast_event() of the event `index` of the line, from pass 1's notes if it has them. */
static inline __attribute__((always_inline)) int noted_event(struct xs *x, const uint8_t *p,
							     const uint8_t *end, uint32_t index,
							     struct xs_event *e)
{
	const struct xs_head *h;

	if (index >= x->nheads)
		return fast_event(x, p, end, e);
	h = &x->heads[index];
	e->has = h->has;
	e->metadata_id = h->metadata_id;
	e->offset_ps = h->offset_ps;
	e->num_occurrences = h->num_occurrences;
	e->duration_ps = h->duration_ps;
	return fast_stats(x, h->stats, end, e);
}
#undef TAKE_VARINT

static int on_meta_stat(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct xs *x = ctx;
	const struct xs_smeta *m;
	struct xs_stat s;
	struct tft_arg a;
	int r;

	r = decode_stat(x, v, &s);
	if (r)
		return r;
	r = stat_to_arg(x, &s, &a, &m);
	if (r < 0)
		return oom(x);
	if (!r)
		return 0;
	if (tft_grow((void **)&x->meta_args, &x->cmeta_args, x->nmeta_args + 1, sizeof(*x->meta_args)))
		return oom(x);
	x->meta_args[x->nmeta_args++] = a;
	return 0;
}

/* ---- plane-level decoding --------------------------------------------------------------- */

/* ---- the host's clock ----------------------------------------------------------- */

/*
 * These peeks read fields with the wire reader on a decoder that reports
 * nothing (no error sink): bytes that make no field just end the peek, and
 * the importer's own passes report them.
 */
static void quiet_iter(struct tft_pb_dec *q, struct tft_pb_iter *it, const uint8_t *p, size_t len)
{
	tft_pb_wire_init(q, p, len, NULL);
	tft_pb_wire_iter_init(it, p, len);
}

/* The id of the stat named `name` in the stat_metadata map of the plane [p, p + len), or -1. */
static int64_t stat_id_named(const uint8_t *p, size_t len, const char *name)
{
	size_t nlen = strlen(name);
	struct tft_pb_dec q;
	struct tft_pb_iter it, e, m;
	struct tft_pb_raw f, g, h;

	quiet_iter(&q, &it, p, len);
	while (tft_pb_wire_iter_next(&q, &it, &f) == 1) {
		int64_t id = -1;
		int named = 0;

		if (f.num != 5 || f.wt != TFT_PB_WT_LEN)
			continue;
		/* map entry: key = 1, value = 2 (XStatMetadata: id = 1, name = 2) */
		tft_pb_wire_iter_init(&e, f.p, f.len);
		while (tft_pb_wire_iter_next(&q, &e, &g) == 1) {
			if (g.num == 1 && g.wt == TFT_PB_WT_VARINT)
				id = (int64_t)g.v;
			if (g.num != 2 || g.wt != TFT_PB_WT_LEN)
				continue;
			tft_pb_wire_iter_init(&m, g.p, g.len);
			while (tft_pb_wire_iter_next(&q, &m, &h) == 1)
				if (h.num == 2 && h.wt == TFT_PB_WT_LEN)
					named = h.len == nlen && !memcmp(h.p, name, nlen);
		}
		if (named)
			return id;
	}
	return -1;
}

/*
 * If the plane at [p, p + len) is the profiler's "Task Environment", its
 * profile_start_time stat (uint64 or int64 ns); 0 otherwise.
 */
static int64_t task_env_start(const uint8_t *p, size_t len)
{
	static const char te[] = "Task Environment";
	struct tft_pb_dec q;
	struct tft_pb_iter it, st;
	struct tft_pb_raw f, g;
	int64_t id = -1;
	int named = 0;

	/* the name (field 2, near the start): most planes stop here */
	quiet_iter(&q, &it, p, len);
	while (!named && tft_pb_wire_iter_next(&q, &it, &f) == 1)
		named = f.num == 2 && f.wt == TFT_PB_WT_LEN;
	if (!named || f.len != sizeof(te) - 1 || memcmp(f.p, te, f.len) != 0 ||
	    (id = stat_id_named(p, len, "profile_start_time")) < 0)
		return 0;
	quiet_iter(&q, &it, p, len);
	while (tft_pb_wire_iter_next(&q, &it, &f) == 1) {
		uint64_t val = 0;
		int64_t mid = -1;
		int have = 0;

		if (f.num != 6 || f.wt != TFT_PB_WT_LEN)
			continue;
		/* XStat: metadata_id = 1, uint64_value = 3, int64_value = 4 */
		tft_pb_wire_iter_init(&st, f.p, f.len);
		while (tft_pb_wire_iter_next(&q, &st, &g) == 1) {
			if (g.num == 1 && g.wt == TFT_PB_WT_VARINT)
				mid = (int64_t)g.v;
			else if ((g.num == 3 || g.num == 4) && g.wt == TFT_PB_WT_VARINT)
				val = g.v, have = 1;
		}
		if (mid == id && have && val > 0 && val <= INT64_MAX / 2)
			return (int64_t)val;
	}
	return 0;
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

static int on_space_plane(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct xs *x = ctx;
	int64_t t;

	if (!x->clock_ns && (t = task_env_start(v->p, v->len)))
		x->clock_ns = t;
	return 0;
}

/*
 * A plane field left to a later pass (num 3..6): extend its span. A span
 * starts where the field before its first value ended, so it may hold
 * other fields (the pass skips them, as it would over the whole plane);
 * what it leaves out holds none of its values.
 */
static int on_plane_later(void *ctx, void *msg, const struct tft_pb_field *f,
			  const struct tft_pb_val *v)
{
	struct xs *x = ctx;
	uint32_t k = f->num - 3;

	if (!x->span_lo[k])
		x->span_lo[k] = x->span_last;
	x->span_last = v->p + v->len;
	x->span_hi[k] = x->span_last;
	return 0;
}

static uint8_t special_of(struct tft_pb_bytes name)
{
	if (bytes_eq(name, "correlation_id"))
		return SPECIAL_CORRELATION;
	if (bytes_eq(name, "group_id"))
		return SPECIAL_GROUP;
	if (bytes_eq(name, "step_num"))
		return SPECIAL_STEP_NUM;
	if (bytes_eq(name, "step_name"))
		return SPECIAL_STEP_NAME;
	return SPECIAL_NONE;
}

/* Read a length-delimited value at *pp (after its key) that fits before end. */
static inline __attribute__((always_inline)) int take_bytes(const uint8_t **pp, const uint8_t *end, const uint8_t *lim,
			     struct tft_pb_bytes *b)
{
	uint64_t n;

	if (xs_varint(pp, end, lim, &n) || n > (uint64_t)(end - *pp))
		return -1;
	b->p = *pp;
	b->len = (size_t)n;
	*pp += n;
	return 0;
}

/*
 * The usual layout of a metadata map entry: key, then the value: id, name
 * and, in an event metadata entry (`event`), display_name; each at most
 * once, in field-number order, nothing else but a stat metadata's
 * description or an event metadata's metadata bytes (not used) in their
 * places. Fills the entry (zeroed by the caller) as the tables would:
 * 1 = done, 0 = another layout (the tables decode it, skipping unknown
 * fields and reporting errors). `value` is the value's struct inside it.
 */
static int fast_meta_entry(const uint8_t *p, const uint8_t *end, const uint8_t *lim, int event,
			   uint64_t *has, int64_t *key, uint64_t *vhas, int64_t *id,
			   struct tft_pb_bytes *name, struct tft_pb_bytes *display_name)
{
	struct tft_pb_bytes val, skip;
	const uint8_t *q, *qend;
	uint64_t v;

	if (p < end && *p == 0x08) {
		p++;
		if (xs_varint(&p, end, lim, &v))
			return 0;
		*key = (int64_t)v;
		*has |= 1u << 0;
	}
	if (p < end && *p == 0x12) {
		p++;
		if (take_bytes(&p, end, lim, &val))
			return 0;
		*has |= 1u << 1;
		q = val.p;
		qend = q + val.len;
		if (q < qend && *q == 0x08) {
			q++;
			if (xs_varint(&q, qend, lim, &v))
				return 0;
			*id = (int64_t)v;
			*vhas |= 1u << 0;
		}
		if (q < qend && *q == 0x12) {
			q++;
			if (take_bytes(&q, qend, lim, name))
				return 0;
			*vhas |= 1u << 1;
		}
		/* XStatMetadata.description (stored, unused) / XEventMetadata.metadata (skipped). */
		if (q < qend && *q == 0x1a) {
			q++;
			if (take_bytes(&q, qend, lim, &skip))
				return 0;
			if (!event)
				*vhas |= 1u << 2;
		}
		if (event && q < qend && *q == 0x22) {
			q++;
			if (take_bytes(&q, qend, lim, display_name))
				return 0;
			*vhas |= 1u << 2;
		}
		if (q != qend)
			return 0;
	}
	return p == end;
}

static int on_stat_meta(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct xs *x = ctx;
	struct xs_smeta_entry e;
	struct xs_smeta *m;
	int r;

	memset(&e, 0, sizeof(e));
	if (!fast_meta_entry(v->sub.p, v->sub.p + v->sub.len, x->lim, 0, &e.has, &e.key,
			     &e.value.has, &e.value.id, &e.value.name, NULL)) {
		memset(&e, 0, sizeof(e));
		r = tft_pb_wire_decode_sub(&v->sub, &smeta_entry_msg, &e, x);
		if (r)
			return r;
	}
	if (x->nsmeta + 1 > x->csmeta) {
		uint32_t cap = x->csmeta;
		struct xs_strcache *ns;

		if (tft_grow((void **)&x->smeta, &cap, x->nsmeta + 1, sizeof(*x->smeta)))
			return oom(x);
		ns = realloc(x->strs, (size_t)cap * sizeof(*x->strs));
		if (!ns)
			return oom(x); /* x->smeta is larger than csmeta says: harmless */
		x->strs = ns;
		x->csmeta = cap;
	}
	m = &x->smeta[x->nsmeta];
	x->strs[x->nsmeta].p = NULL;
	x->strs[x->nsmeta].len = 0;
	x->strs[x->nsmeta].id = 0;
	m->name = intern(x, e.value.name.p, e.value.name.len);
	if (m->name == UINT32_MAX)
		return oom(x);
	m->special = special_of(e.value.name);
	/* The map key is authoritative; fall back to the id inside. */
	if (idmap_put(&x->smeta_map, (uint64_t)((e.has & 1) ? e.key : e.value.id), x->nsmeta, x->nsmeta))
		return oom(x);
	x->nsmeta++;
	return 0;
}

static int on_event_meta(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct xs *x = ctx;
	struct xs_emeta_entry e;
	struct xs_emeta *m;
	uint32_t args_off = x->nmeta_args;
	int r;

	memset(&e, 0, sizeof(e));
	if (!fast_meta_entry(v->sub.p, v->sub.p + v->sub.len, x->lim, 1, &e.has, &e.key,
			     &e.value.has, &e.value.id, &e.value.name, &e.value.display_name)) {
		memset(&e, 0, sizeof(e));
		r = tft_pb_wire_decode_sub(&v->sub, &emeta_entry_msg, &e, x);
		if (r)
			return r;
	}
	if (tft_grow((void **)&x->emeta, &x->cemeta, x->nemeta + 1, sizeof(*x->emeta)))
		return oom(x);
	m = &x->emeta[x->nemeta];
	m->long_name = TFT_NONE;
	if (e.value.display_name.len) {
		m->name = intern(x, e.value.display_name.p, e.value.display_name.len);
		if (!bytes_eq(e.value.name, "") &&
		    !(e.value.name.len == e.value.display_name.len &&
		      memcmp(e.value.name.p, e.value.display_name.p, e.value.name.len) == 0)) {
			m->long_name = intern(x, e.value.name.p, e.value.name.len);
			if (m->long_name == UINT32_MAX)
				return oom(x);
		}
	} else {
		m->name = intern(x, e.value.name.p, e.value.name.len);
	}
	if (m->name == UINT32_MAX)
		return oom(x);
	m->args_off = args_off;
	m->nargs = x->nmeta_args - args_off;
	if (idmap_put(&x->emeta_map, (uint64_t)((e.has & 1) ? e.key : e.value.id), x->nemeta, x->nemeta))
		return oom(x);
	x->nemeta++;
	return 0;
}

/* Plane stats (device capabilities) -> the process labels, "k=v, k=v". */
static int on_plane_stat(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct xs *x = ctx;
	char *buf = x->labels_buf;
	size_t size = sizeof(x->labels_buf), n = x->labels_len;
	const struct xs_smeta *m;
	struct xs_stat s;
	struct tft_arg a;
	const char *key, *sv;
	int k, r;

	r = decode_stat(x, v, &s);
	if (r)
		return r;
	r = stat_to_arg(x, &s, &a, &m);
	if (r < 0)
		return oom(x);
	if (r == 0 || n + 2 >= size)
		return 0;
	key = tft_writer_str(x->w, a.key, NULL);
	if (!key)
		return 0;
	switch (a.type) {
	case TFT_ARG_INT:
		k = snprintf(buf + n, size - n, "%s%s=%lld", n ? ", " : "", key, (long long)a.v.i);
		break;
	case TFT_ARG_DOUBLE:
		k = snprintf(buf + n, size - n, "%s%s=%g", n ? ", " : "", key, a.v.d);
		break;
	default:
		sv = tft_writer_str(x->w, a.v.str, NULL);
		k = snprintf(buf + n, size - n, "%s%s=%s", n ? ", " : "", key, sv ? sv : "");
		break;
	}
	if (k > 0)
		n += (size_t)k;
	x->labels_len = n < size ? n : size - 1;
	return 0;
}

/* Register a plane's process (the first one named /host:CPU is the host's). */
static uint32_t add_plane_process(struct xs *x, struct tft_pb_bytes name, int64_t id,
				  uint32_t index, uint32_t labels)
{
	struct tft_process p;
	uint32_t proc;

	memset(&p, 0, sizeof(p));
	p.name = intern(x, name.p, name.len);
	p.host = x->host;
	p.pid = id;
	p.rank = -1;
	p.sort_index = (int32_t)index;
	p.labels = labels;
	if (p.name == UINT32_MAX)
		return TFT_NONE;
	proc = tft_writer_add_process(x->w, &p);
	if (proc != TFT_NONE && x->host_process == TFT_NONE && bytes_prefix(name, "/host:CPU"))
		x->host_process = proc;
	return proc;
}

static int ensure_process(struct xs *x)
{
	if (x->process != TFT_NONE)
		return 0;
	x->process = add_plane_process(x, x->plane.name, x->plane.id, x->plane_index, x->labels);
	return x->process == TFT_NONE ? oom(x) : 0;
}

static int line_kind(const struct xs *x, struct tft_pb_bytes name)
{
	if (has_ci(name.p, name.len, "nccl") || has_ci(name.p, name.len, "rccl") ||
	    has_ci(name.p, name.len, "collective"))
		return TFT_TRACK_COMM;
	if (!x->device_plane)
		return TFT_TRACK_THREAD;
	if (bytes_prefix(name, "Stream #") || has_ci(name.p, name.len, "stream") ||
	    has_ci(name.p, name.len, "memcpy"))
		return TFT_TRACK_GPU_STREAM;
	return TFT_TRACK_DEVICE;
}

/*
 * XProf derives lines on a device plane from its kernels or ops: they repeat
 * that time (a step, a module, a name scope, a TF op spans the kernels it
 * ran), so aggregates count them out (TFT_TRACKF_DERIVED). "XLA Ops" is the
 * ops themselves on a plane without streams (a TPU), derived from the
 * kernels where the plane has streams: decided in mark_derived_lines().
 */
static bool derived_line_name(struct tft_pb_bytes n)
{
	static const char *const names[] = {
		"Steps", "XLA Modules", "TensorFlow Ops", "Framework Ops", "TensorFlow Name Scope",
		"Framework Name Scope", "Source code", "Launch Stats", "Sparse Core Steps",
		"XLA TraceMe",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (bytes_eq(n, names[i]))
			return true;
	return false;
}

/* The flags of a line's track (see line_kind()). */
static uint32_t line_flags(const struct xs *x, int kind, struct tft_pb_bytes name)
{
	if (kind == TFT_TRACK_GPU_STREAM || (kind == TFT_TRACK_COMM && x->device_plane))
		return TFT_TRACKF_CONCURRENT; /* a stream's (or comm engine's) kernels */
	if (x->device_plane && derived_line_name(name))
		return TFT_TRACKF_DERIVED;
	return 0;
}

static void progress(struct xs *x, uint64_t pos)
{
	if (!x->opts || !x->opts->progress || x->quiet ||
	    !tft_ingest_progress_due(&x->last_progress, 0))
		return;
	/* A clone's count plus what the groups before it stored. */
	x->opts->progress(x->opts->progress_ctx, pos, x->input_len,
			  x->events + (x->parent ? x->parent->events : 0));
}

/* The entry of correlation id, made (no ends yet) by its first note; TFT_NONE: out of memory. */
/* The entry of correlation id `id` (map key `key`), made if new; TFT_NONE when out of memory. */
static uint32_t corr_entry(struct xs_ctab *t, uint64_t id, uint64_t key)
{
	uint32_t i = idmap_get(&t->map, key);
	struct xs_corr *c;

	if (i != TFT_NONE)
		return i;
	if (tft_grow((void **)&t->corr, &t->cap, t->n + 1, sizeof(*t->corr)))
		return TFT_NONE;
	i = t->n;
	c = &t->corr[i];
	c->id = id;
	c->src_track = c->dst_track = TFT_NONE;
	c->src_ts = c->dst_ts = 0;
	if (idmap_put(&t->map, key, i, i))
		return TFT_NONE;
	t->n++;
	return i;
}

/*
 * A correlation end of entry i, on a device plane (dst) or not: the first
 * source counts; every destination does (one launch, several kernels).
 */
static __attribute__((noinline, cold)) int corr_more_add(struct xs_ctab *t, uint32_t i,
							  uint32_t track, int64_t ts)
{
	if (tft_grow((void **)&t->more, &t->cmore, t->nmore + 1, sizeof(*t->more)))
		return TFT_ENOMEM;
	t->more[t->nmore++] = (struct xs_corr_dst){ i, track, ts };
	return 0;
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
		return corr_more_add(t, i, track, ts);
	}
	return 0;
}

static void ctab_free(struct xs_ctab *t)
{
	idmap_free(&t->map);
	free(t->corr);
	free(t->more);
}

static inline __attribute__((always_inline)) int note_corr(struct xs *x, uint32_t track, int64_t ts)
{
	uint32_t i;

	if (x->parent) { /* a clone: note it, merge_notes() keeps the first of each end */
		struct xs_cnote *n;

		if (tft_grow((void **)&x->cnotes, &x->ccnotes, x->ncnotes + 1, sizeof(*x->cnotes)))
			return TFT_ENOMEM;
		n = &x->cnotes[x->ncnotes++];
		n->id = x->ev_corr;
		n->ts = ts;
		return 0;
	}
	i = corr_entry(&x->corr, x->ev_corr, x->ev_corr);
	if (i == TFT_NONE)
		return TFT_ENOMEM;
	return corr_end(&x->corr, i, x->device_plane, track, ts);
}

/* group_add() of a group not in the table yet. */
static int __attribute__((noinline)) group_new(struct idmap *map, struct xs_group **groups,
						uint32_t *n, uint32_t *cap, const struct xs_group *e)
{
	uint32_t i;

	if (*n >= MAX_GROUPS)
		return 0;
	if (tft_grow((void **)groups, cap, *n + 1, sizeof(**groups)))
		return TFT_ENOMEM;
	i = (*n)++;
	(*groups)[i] = *e;
	return idmap_put(map, e->id, i, i) ? TFT_ENOMEM : 0;
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
		return group_new(map, groups, n, cap, e);
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

static void idmap_forget(struct idmap *m, const void *ids, size_t stride, uint32_t n);

/* The line's group notes into the clone's groups (commit) or gone (redo). */
static int line_groups_end(struct xs *x, int commit)
{
	int r = 0;

	for (uint32_t i = 0; commit && i < x->nlgroups && !r; i++)
		r = group_add(&x->group_map, &x->groups, &x->ngroups, &x->cgroups, &x->lgroups[i]);
	idmap_forget(&x->lgroup_map, x->nlgroups ? &x->lgroups[0].id : NULL, sizeof(*x->lgroups),
		     x->nlgroups);
	x->nlgroups = 0;
	return r;
}

/* Room for one more step (and its key). */
static int steps_reserve(struct xs *x)
{
	if (tft_grow((void **)&x->steps, &x->csteps, x->nsteps + 1, sizeof(*x->steps)) ||
	    tft_grow((void **)&x->step_keys, &x->cstep_keys, x->nsteps + 1, sizeof(*x->step_keys)))
		return TFT_ENOMEM;
	return 0;
}

static int add_step_marker(struct xs *x, const struct tft_event *ev)
{
	struct tft_step *st;
	const char *nm;
	size_t nlen = 0;

	if (steps_reserve(x))
		return TFT_ENOMEM;
	x->step_keys[x->nsteps].key = x->ev_key;
	x->step_keys[x->nsteps].by_count = 0;
	st = &x->steps[x->nsteps];
	memset(st, 0, sizeof(*st));
	st->name = x->ev_step_name != TFT_NONE ? x->ev_step_name : ev->name;
	if (x->has_step_num) {
		st->index = (int64_t)x->ev_step_num;
	} else if (x->has_group) {
		st->index = (int64_t)x->ev_group;
	} else {
		char *end;
		long long v;

		nm = tft_writer_str(x->w, ev->name, &nlen);
		v = nm && nlen ? strtoll(nm, &end, 10) : 0;
		st->index = (nm && nlen && *end == '\0') ? v : (int64_t)x->nsteps;
		x->step_keys[x->nsteps].by_count = !(nm && nlen && *end == '\0');
	}
	st->process = x->process;
	st->start_ns = ev->ts_ns;
	st->dur_ns = ev->dur_ns;
	st->traced = true;
	x->nsteps++;
	return 0;
}

static void event_reset(struct xs *x, struct xs_event *e)
{
	e->has = 0;
	e->metadata_id = e->offset_ps = e->duration_ps = e->num_occurrences = 0;
	x->nargs = 0;
	x->has_corr = x->has_group = x->has_step_num = 0;
	x->ev_step_name = TFT_NONE;
}

/* The line's track, registered with its first event. */
static int line_track(struct xs *x)
{
	int r;

	if (x->track != TFT_NONE)
		return 0;
	r = ensure_process(x);
	if (r)
		return r;
	x->pending.process = x->process;
	x->track = tft_writer_add_track(x->w, &x->pending);
	if (x->track == TFT_NONE)
		return tft_pb_wire_fail(x->dec, TFT_ENOMEM, -1, "could not register a track");
	return 0;
}

/* The writer's order within a track: ts ascending, longer first, then arrival. */
static int cmp_pend(const void *a, const void *b)
{
	const struct xs_pend *p = a, *q = b;

	if (p->ev.ts_ns != q->ev.ts_ns)
		return p->ev.ts_ns < q->ev.ts_ns ? -1 : 1;
	if (p->ev.dur_ns != q->ev.dur_ns)
		return p->ev.dur_ns > q->ev.dur_ns ? -1 : 1;
	return p->seq < q->seq ? -1 : (p->seq > q->seq);
}

/* A held-back event's args (NULL when the line has none: no pointer arithmetic on NULL). */
static inline const struct tft_arg *pend_args(const struct xs *x, const struct xs_pend *pe)
{
	return x->pargs ? x->pargs + pe->args_off : NULL;
}

/* The line is too large to hold: its events so far, and the rest, go through the sorter. */
static int spill_line(struct xs *x)
{
	for (uint32_t i = 0; i < x->npend; i++) {
		struct tft_event ev = x->pend[i].ev;
		int r;

		ev.args = pend_args(x, &x->pend[i]);
		r = sorter_push(x, &ev);
		if (r)
			return r;
	}
	x->npend = x->npargs = 0;
	x->spilled = 1;
	return 0;
}

static int queue_event(struct xs *x, const struct tft_event *ev)
{
	struct xs_pend *pe;

	if (x->spilled)
		return sorter_push(x, ev);
	if ((size_t)x->npend * sizeof(*x->pend) + (size_t)x->npargs * sizeof(*x->pargs) >
		    x->pend_budget ||
	    x->npargs > UINT32_MAX - MAX_ARGS - 1 || x->npend == UINT32_MAX - 1) {
		int r = spill_line(x);

		return r ? r : sorter_push(x, ev);
	}
	if (tft_grow((void **)&x->pend, &x->cpend, x->npend + 1, sizeof(*x->pend)) ||
	    tft_grow((void **)&x->pargs, &x->cpargs, x->npargs + ev->nargs, sizeof(*x->pargs)))
		return TFT_ENOMEM;
	pe = &x->pend[x->npend];
	pe->ev = *ev;
	pe->ev.args = NULL;
	pe->args_off = x->npargs;
	pe->seq = x->npend;
	if (x->npend && !x->unsorted && cmp_pend(pe - 1, pe) > 0)
		x->unsorted = 1;
	x->npend++;
	if (ev->nargs)
		memcpy(x->pargs + x->npargs, ev->args, ev->nargs * sizeof(*ev->args));
	x->npargs += ev->nargs;
	return 0;
}

/* The line is complete: append its events to the writer in order. */
static int flush_line(struct xs *x)
{
	int r = 0;

	if (!x->spilled && x->npend) {
		if (x->unsorted)
			qsort(x->pend, x->npend, sizeof(*x->pend), cmp_pend);
		for (uint32_t i = 0; i < x->npend && !r; i++) {
			struct tft_event ev = x->pend[i].ev;

			ev.args = pend_args(x, &x->pend[i]);
			r = xs_append(x, &ev);
		}
	}
	x->npend = x->npargs = 0;
	x->spilled = x->unsorted = 0;
	return r;
}

/* Decode an event with the tables (any layout; errors reported with its path). */
static int __attribute__((noinline)) table_event(struct xs *x, const uint8_t *p, size_t len,
						  uint32_t index, struct xs_event *e)
{
	struct tft_pb_sub es = {x->dec, p, len, "events", index};

	event_reset(x, e);
	return tft_pb_wire_decode_sub(&es, &event_msg, e, x);
}

/* One event of the line, the events field's payload p[0..len). */
static inline __attribute__((always_inline)) int line_event(struct xs *x, const uint8_t *p,
							    size_t len, uint32_t index)
{
	struct xs_event e;
	struct tft_event ev;
	uint32_t mi, n, nev;
	int64_t start_ps, start, end;
	int r;

	event_reset(x, &e);
	r = noted_event(x, p, p + len, index, &e);
	if (tft_unlikely(r <= 0)) {
		if (r < 0)
			return oom(x);
		r = table_event(x, p, len, index, &e);
		if (r)
			return r;
	}
	if (tft_unlikely(x->track == TFT_NONE)) {
		r = line_track(x);
		if (r)
			return r;
	}
	memset(&ev, 0, sizeof(ev));
	mi = idmap_get(&x->emeta_map, (uint64_t)e.metadata_id);
	n = nev = x->nargs;
	if (tft_likely(mi != TFT_NONE)) {
		const struct xs_emeta *m = &x->emeta[mi];

		ev.name = m->name;
		/* Metadata-level stats, unless the event has its own value. */
		if (tft_unlikely(m->nargs)) {
			for (uint32_t k = 0; k < m->nargs && n < MAX_ARGS; k++) {
				const struct tft_arg *a = &x->meta_args[m->args_off + k];
				uint32_t j = 0;

				while (j < nev && x->args[j].key != a->key)
					j++;
				if (j == nev)
					x->args[n++] = *a;
			}
		}
		if (m->long_name != TFT_NONE && n < MAX_ARGS) {
			struct tft_arg *a = &x->args[n++];

			a->key = x->k_long_name;
			a->type = TFT_ARG_STR;
			a->v.str = m->long_name;
		}
	} else {
		int k = snprintf(x->scratch, sizeof(x->scratch), "#%lld", (long long)e.metadata_id);

		ev.name = intern(x, x->scratch, (size_t)k);
		if (ev.name == UINT32_MAX)
			return oom(x);
		if (n < MAX_ARGS) {
			struct tft_arg *a = &x->args[n++];

			a->key = x->k_metadata_id;
			a->type = TFT_ARG_INT;
			a->v.i = e.metadata_id;
		}
	}
	if ((e.has & (1u << XE_NUMOCC)) && n < MAX_ARGS) {
		struct tft_arg *a = &x->args[n++];

		a->key = x->k_num_occ;
		a->type = TFT_ARG_INT;
		a->v.i = e.num_occurrences;
	}
	x->nargs = n;
	/* offset_ps and num_occurrences share a oneof: aggregated events sit at line start. */
	start_ps = (e.has & (1u << XE_OFFSET)) ? e.offset_ps : 0;
	start = sat_add(x->line_ts_ns, ps_to_ns(start_ps));
	end = sat_add(x->line_ts_ns, ps_to_ns(sat_add(start_ps, e.duration_ps > 0 ? e.duration_ps : 0)));
	ev.ts_ns = start;
	ev.kind = e.duration_ps > 0 ? TFT_EV_SLICE : TFT_EV_INSTANT;
	ev.dur_ns = e.duration_ps > 0 && end > start ? end - start : 0;
	if (x->optimistic) { /* out of the writer's order: the line is sorted after all */
		if (ev.ts_ns < x->opt_ts || (ev.ts_ns == x->opt_ts && ev.dur_ns > x->opt_dur))
			return XS_REDO;
		x->opt_ts = ev.ts_ns;
		x->opt_dur = ev.dur_ns;
	}
	ev.track = x->track;
	ev.cat = x->c_event;
	ev.count = 1;
	ev.nargs = (uint16_t)n;
	ev.args = x->args;
	x->ev_key = x->key_line | index;
	if (x->direct) {
		r = xs_append(x, &ev);
		if (r) {
			x->store_err = r;
			return r;
		}
	} else {
		r = queue_event(x, &ev);
		if (r)
			return tft_pb_wire_fail(x->dec, r, p - x->dec->base,
						"could not store the event");
	}
	if (x->has_corr && note_corr(x, x->track, ev.ts_ns))
		return oom(x);
	if (x->has_group && note_group(x, ev.ts_ns, ev.ts_ns + ev.dur_ns))
		return oom(x);
	if (x->steps_line && add_step_marker(x, &ev))
		return oom(x);
	if ((++x->events & 0xFFFF) == 0)
		progress(x, (uint64_t)(p - x->dec->base));
	return 0;
}

/*
 * Pass 1 fast path: the line's own fields, skipping the events. 0 on
 * anything unusual (the table decoder then checks and reports it).
 * While it skips the events it also checks whether they are already in the
 * writer's order (*sorted = 1; the events' bytes are being read anyway).
 * That needs the line's timestamp before the first event, where the
 * field-number order of the wire puts it. The fields before the stats of
 * its first events, up to cap of them, go to heads (*nheads: how many).
 */
static __attribute__((hot)) int fast_line_header(const uint8_t *p, const uint8_t *end,
						  const uint8_t *lim, struct xs_line *ln,
						  int *sorted, int *nonempty,
						  struct xs_head *heads, uint32_t cap,
						  uint32_t *nheads)
{
	struct xs_order prev = {0, 0, NULL}, cur;
	struct xs_head spare;
	int seen_event = 0, in_order = 1;
	uint32_t nh = 0;
	uint64_t v;

	*sorted = 0;
	while (p < end) {
		uint8_t k = *p++;

		/* A run of events while they are in order: the hot loop of this pass. */
		while (k == 0x22 && in_order) {
			/* Its fields noted for pass 2 while there is room. */
			struct xs_head *h = nh < cap ? &heads[nh] : &spare;

			if (xs_varint(&p, end, lim, &v) || v > (uint64_t)(end - p))
				return 0;
			if (!scan_event(p, p + v, lim, ln->timestamp_ns, &cur, h)) {
				in_order = 0; /* no later event is noted either */
			} else {
				nh += h != &spare;
				if (seen_event && (cur.ts < prev.ts ||
						   (cur.ts == prev.ts &&
						    order_dur(&cur, ln->timestamp_ns, lim) >
							    order_dur(&prev, ln->timestamp_ns, lim))))
					in_order = 0; /* would sort before the previous event */
			}
			prev = cur;
			seen_event = 1;
			p += v;
			if (p >= end)
				goto done;
			k = *p++;
		}
		if (k == 0x22 || k == 0x12 || k == 0x5a) {
			if (xs_varint(&p, end, lim, &v) || v > (uint64_t)(end - p))
				return 0;
			if (k == 0x22) {
				seen_event = 1; /* out of order: skipped whole */
				cap = 0;
			} else if (k == 0x12) {
				ln->name.p = p;
				ln->name.len = (size_t)v;
				ln->has |= 1u << LN_NAME;
			} else if (k == 0x5a) {
				ln->display_name.p = p;
				ln->display_name.len = (size_t)v;
				ln->has |= 1u << LN_DISPLAY_NAME;
			}
			p += v;
		} else if (k == 0x08 || k == 0x18 || k == 0x48 || k == 0x50) {
			if (xs_varint(&p, end, lim, &v))
				return 0;
			switch (k) {
			case 0x08: ln->id = (int64_t)v; ln->has |= 1u << LN_ID; break;
			case 0x18:
				ln->timestamp_ns = (int64_t)v;
				ln->has |= 1u << LN_TS;
				if (seen_event)
					in_order = 0;
				break;
			case 0x48: ln->duration_ps = (int64_t)v; ln->has |= 1u << LN_DUR; break;
			default: ln->display_id = (int64_t)v; ln->has |= 1u << LN_DISPLAY_ID; break;
			}
		} else {
			return 0;
		}
	}
done:
	*sorted = in_order;
	*nonempty = seen_event;
	*nheads = nh;
	return 1;
}

/*
 * Pass 1 over a line: its header and whether its events are in the
 * writer's order, into j; nothing interned or registered (line_pending()
 * does that), so that threads can scan lines (parallel lines). With
 * `note`, its events' fields for the line_body() that follows (x->heads).
 */
static int line_scan(struct xs *x, const struct tft_pb_sub *ls, struct xs_job *j, int note)
{
	/* Room to note every event of the line (each takes two bytes or more), up to HEADS_MAX. */
	uint32_t want = ls->len / 2 < HEADS_MAX ? (uint32_t)(ls->len / 2) : HEADS_MAX;
	struct xs_line ln;
	int sorted, nonempty, r;

	if (!note)
		want = 0;
	else if (tft_grow((void **)&x->heads, &x->cheads, want, sizeof(*x->heads)))
		want = x->cheads; /* fewer notes: pass 2 reads the rest itself */
	x->heads_line = ls->p;
	x->heads_len = ls->len;
	memset(&ln, 0, sizeof(ln));
	if (!fast_line_header(ls->p, ls->p + ls->len, x->lim, &ln, &sorted, &nonempty, x->heads,
			      want, &x->nheads)) {
		x->nheads = 0;
		sorted = 0;
		memset(&ln, 0, sizeof(ln));
		r = tft_pb_wire_decode_sub(ls, &line_hdr_msg, &ln, x);
		if (r)
			return r;
		nonempty = (ln.has & (1u << LN_EVENTS)) != 0;
	}
	j->tname = ln.display_name.len ? ln.display_name : ln.name;
	j->tid = (ln.has & (1u << LN_DISPLAY_ID)) ? ln.display_id : ln.id;
	j->sub = *ls;
	j->track = TFT_NONE;
	j->ts_ns = line_clock(x, ln.timestamp_ns);
	j->steps = bytes_eq(j->tname, "Steps");
	j->sorted = sorted;
	j->nonempty = nonempty;
	return 0;
}

/* The scanned line's track, ready to register (x: on the line's plane). */
static int line_pending(struct xs *x, struct xs_job *j)
{
	memset(&j->pending, 0, sizeof(j->pending));
	j->pending.kind = (uint32_t)line_kind(x, j->tname);
	j->pending.flags = line_flags(x, (int)j->pending.kind, j->tname);
	j->pending.name = intern(x, j->tname.p, j->tname.len);
	if (j->pending.name == UINT32_MAX)
		return oom(x);
	j->pending.tid = j->tid;
	j->pending.sort_index = (int32_t)(j->sub.index == TFT_PB_SINGULAR ? 0 : j->sub.index);
	return 0;
}

/*
 * Optimistic storing (xs.optimistic): a header field after the events, at
 * *pp (its key). Noted in opt_tail; XS_REDO for anything line_peek() does
 * not take (the serial way then checks it and reports any error).
 */
static int opt_field(struct xs *x, const uint8_t **pp, const uint8_t *end, int after)
{
	const uint8_t *p = *pp;
	struct xs_line *t = &x->opt_tail;
	uint8_t k = *p++;
	uint64_t v;

	if (k == 0x12 || k == 0x5a) {
		if (xs_varint(&p, end, x->lim, &v) || v > (uint64_t)(end - p))
			return XS_REDO;
		if (after && k == 0x12) {
			t->name.p = p;
			t->name.len = (size_t)v;
			t->has |= 1u << LN_NAME;
		} else if (after) {
			t->display_name.p = p;
			t->display_name.len = (size_t)v;
			t->has |= 1u << LN_DISPLAY_NAME;
		}
		p += v;
	} else if (k == 0x08 || k == 0x18 || k == 0x48 || k == 0x50) {
		if (xs_varint(&p, end, x->lim, &v))
			return XS_REDO;
		if (after) {
			switch (k) {
			case 0x08: t->id = (int64_t)v; t->has |= 1u << LN_ID; break;
			case 0x18: return XS_REDO; /* the events' times were taken from the earlier one */
			case 0x48: t->duration_ps = (int64_t)v; t->has |= 1u << LN_DUR; break;
			default: t->display_id = (int64_t)v; t->has |= 1u << LN_DISPLAY_ID; break;
			}
		}
	} else {
		return XS_REDO;
	}
	*pp = p;
	return 0;
}

/* Name the line's track as j says (it was registered under another name). */
static int line_rename(struct xs *x, const struct xs_job *j)
{
	uint32_t name = intern(x, j->tname.p, j->tname.len);
	int r, kind;

	if (name == UINT32_MAX)
		return oom(x);
	kind = line_kind(x, j->tname);
	r = tft_writer_lane_name_track(x->lane, j->track, (uint32_t)kind,
				       line_flags(x, kind, j->tname), name, j->tid);
	return r ? tft_pb_wire_fail(x->dec, r, j->sub.p - x->dec->base,
				    "could not name the line's track: %s", tft_strerror(r))
		 : 0;
}

/*
 * Optimistic storing: the line's events were in order; its header is the
 * peeked one with the fields after the events. XS_REDO if those change
 * what the events became (a Steps line or not), else the track renamed if
 * its name or tid changed.
 */
static int opt_finish(struct xs *x, const struct xs_job *j)
{
	struct xs_line ln = j->hdr;
	const struct xs_line *t = &x->opt_tail;
	struct xs_job k = *j;

	if (!t->has)
		return 0;
	if (t->has & (1u << LN_NAME))
		ln.name = t->name;
	if (t->has & (1u << LN_DISPLAY_NAME))
		ln.display_name = t->display_name;
	if (t->has & (1u << LN_ID))
		ln.id = t->id;
	if (t->has & (1u << LN_DISPLAY_ID))
		ln.display_id = t->display_id;
	ln.has |= t->has;
	k.tname = ln.display_name.len ? ln.display_name : ln.name;
	k.tid = (ln.has & (1u << LN_DISPLAY_ID)) ? ln.display_id : ln.id;
	if (bytes_eq(k.tname, "Steps") != j->steps)
		return XS_REDO;
	/* a name that changes how the events nest (a stream's lanes): stored again */
	if (tft_track_lanes((uint32_t)line_kind(x, k.tname), line_flags(x, line_kind(x, k.tname), k.tname)) !=
	    tft_track_lanes((uint32_t)line_kind(x, j->tname), line_flags(x, line_kind(x, j->tname), j->tname)))
		return XS_REDO;
	if (bytes_same(k.tname, j->tname) && k.tid == j->tid)
		return 0;
	return line_rename(x, &k);
}

/*
 * Pass 2 over a line: its events (field 4), with this line on the error
 * path. j->sub.dec must be x->dec. The track is j's, or registered with
 * the first event (no empty tracks). With x->optimistic, XS_REDO when the
 * line must be stored the serial way after all (nothing is ended then).
 */
/*
 * A line field other than an event with the one-byte key (already checked
 * by pass 1): skipped, or an event whose key is a longer varint (A2 00).
 */
static __attribute__((noinline, cold)) int other_field(struct xs *x, const uint8_t **pp,
						       const uint8_t *end, uint32_t *index)
{
	struct tft_pb_dec *d = x->dec;
	struct tft_pb_iter it;
	struct tft_pb_raw f;
	int r;

	tft_pb_wire_iter_init(&it, *pp, (size_t)(end - *pp));
	r = tft_pb_wire_iter_next(d, &it, &f);
	d->cur_field = NULL;
	if (r < 0)
		return r;
	*pp = it.p;
	if (f.num == 4 && f.wt == TFT_PB_WT_LEN) {
		d->cur_field = "events";
		d->cur_index = *index;
		return line_event(x, f.p, f.len, (*index)++);
	}
	return 0;
}

static __attribute__((hot)) int line_body(struct xs *x, const struct xs_job *j)
{
	const struct tft_pb_sub *ls = &j->sub;
	struct tft_pb_dec *d = x->dec;
	const uint8_t *p = ls->p, *end = ls->p + ls->len;
	uint32_t index = 0;
	int r = 0;

	x->pending = j->pending;
	x->track = j->track;
	x->line_ts_ns = j->ts_ns;
	x->steps_line = j->steps;
	x->key_line = j->key_line;
	x->npend = x->npargs = 0;
	x->spilled = x->unsorted = 0;
	x->direct = j->sorted;
	x->store_err = 0;
	x->opt_ts = INT64_MIN;
	x->opt_dur = INT64_MAX;
	x->opt_tail.has = 0;
	if (x->heads_line != ls->p || x->heads_len != ls->len)
		x->nheads = 0; /* notes on another line (or none) */

	if (d->depth >= d->max_depth)
		return tft_pb_wire_fail(d, TFT_EFORMAT, ls->p - d->base, "messages nested too deep");
	d->path[d->depth].name = ls->name;
	d->path[d->depth].index = ls->index;
	d->depth++;
	while (p < end) {
		if (*p == 0x22) {
			const uint8_t *q = p + 1;
			uint64_t n;

			if (xs_varint(&q, end, x->lim, &n) == 0 && n <= (uint64_t)(end - q)) {
				r = line_event(x, q, (size_t)n, index++);
				if (r)
					break;
				p = q + n;
				continue;
			}
			d->cur_field = "events";
			d->cur_index = index;
		}
		if (x->optimistic) {
			r = opt_field(x, &p, end, index > 0);
			if (r)
				break;
			continue;
		}
		r = other_field(x, &p, end, &index);
		if (r)
			break;
	}
	d->depth--;
	x->nheads = 0;
	if (x->optimistic) {
		/* Any failure is reported the serial way, which may find another one first. */
		if (r || x->store_err) {
			d->cur_field = NULL;
			return XS_REDO;
		}
		r = opt_finish(x, j);
		if (r)
			return r;
	}
	if (x->store_err) {
		r = tft_pb_wire_fail(d, x->store_err, ls->p - d->base,
				     "could not store the line's events: %s", tft_strerror(x->store_err));
	} else if (!r) {
		int spilled = x->spilled;

		r = flush_line(x);
		/*
		 * The line's track gets no more events (one track per line):
		 * the writer can store and free it now. Not when the line went
		 * through the sorter, which appends its events at the end.
		 */
		if (!r && !spilled && x->track != TFT_NONE)
			r = xs_end_track(x, x->track);
		if (r)
			r = tft_pb_wire_fail(d, r, ls->p - d->base, "could not store the line's events: %s",
					     tft_strerror(r));
	}
	return r;
}

/*
 * Parallel lines: the header fields before a line's first event, into j as
 * line_scan() would fill it, without walking the events: j->nonempty says
 * whether an event follows (then j->peeked: its events are stored
 * optimistically, line_body() checking the rest). 0 on anything else: the
 * line is then scanned.
 */
static int line_peek(struct xs *x, const struct tft_pb_sub *ls, struct xs_job *j)
{
	const uint8_t *p = ls->p, *end = ls->p + ls->len;
	struct xs_line ln;
	int events = 0;

	memset(&ln, 0, sizeof(ln));
	while (p < end) {
		uint8_t k = *p++;
		uint64_t v;

		if (k == 0x22) {
			events = 1;
			break;
		}
		if (k == 0x12 || k == 0x5a) {
			if (xs_varint(&p, end, x->lim, &v) || v > (uint64_t)(end - p))
				return 0;
			if (k == 0x12) {
				ln.name.p = p;
				ln.name.len = (size_t)v;
				ln.has |= 1u << LN_NAME;
			} else {
				ln.display_name.p = p;
				ln.display_name.len = (size_t)v;
				ln.has |= 1u << LN_DISPLAY_NAME;
			}
			p += v;
		} else if (k == 0x08 || k == 0x18 || k == 0x48 || k == 0x50) {
			if (xs_varint(&p, end, x->lim, &v))
				return 0;
			switch (k) {
			case 0x08: ln.id = (int64_t)v; ln.has |= 1u << LN_ID; break;
			case 0x18: ln.timestamp_ns = (int64_t)v; ln.has |= 1u << LN_TS; break;
			case 0x48: ln.duration_ps = (int64_t)v; ln.has |= 1u << LN_DUR; break;
			default: ln.display_id = (int64_t)v; ln.has |= 1u << LN_DISPLAY_ID; break;
			}
		} else {
			return 0;
		}
	}
	j->hdr = ln;
	j->tname = ln.display_name.len ? ln.display_name : ln.name;
	j->tid = (ln.has & (1u << LN_DISPLAY_ID)) ? ln.display_id : ln.id;
	j->track = TFT_NONE;
	j->ts_ns = line_clock(x, ln.timestamp_ns);
	j->steps = bytes_eq(j->tname, "Steps");
	j->sorted = 1;
	j->nonempty = events;
	j->peeked = events;
	return 1;
}

static int do_line(struct xs *x, const struct tft_pb_sub *ls)
{
	struct xs_job j;
	int r = line_scan(x, ls, &j, 1);

	if (!r)
		r = line_pending(x, &j);
	if (r)
		return r;
	j.key_line = (uint64_t)x->nlines_seen++ << 32;
	return line_body(x, &j);
}

static int on_line(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	return do_line(ctx, &v->sub);
}

/*
 * A later pass over the plane, for field num (m lists it alone, with its
 * handler): over its span only, handing each value to the handler as the
 * table decoder would. Pass 1 has checked every field's key, wire type and
 * length, so the fields around it can only be skipped, without error; the
 * values' indexes and the error paths are those of a pass over the whole
 * plane (same path element, all the field's values inside).
 */
static int plane_pass(struct xs *x, const struct tft_pb_sub *ps, uint32_t num,
		      const struct tft_pb_msg *m)
{
	struct tft_pb_dec *d = x->dec;
	const struct tft_pb_field *f = &m->fields[0];
	const uint8_t *p = x->span_lo[num - 3], *end = x->span_hi[num - 3];
	const char *saved = d->cur_field;
	uint32_t saved_index = d->cur_index, index = 0;
	int r = 0;

	if (!p)
		return 0; /* none */
	/* What tft_pb_wire_decode_sub(span, m, NULL, x) does, without the table walk. */
	if (d->depth >= d->max_depth)
		return tft_pb_wire_fail(d, TFT_EFORMAT, p - d->base, "messages nested deeper than %u",
					d->max_depth);
	d->path[d->depth].name = ps->name;
	d->path[d->depth].index = ps->index;
	d->depth++;
	d->cur_field = NULL;
	while (p < end) {
		const uint8_t *key_at = p;
		struct tft_pb_val v;
		struct tft_pb_bytes b;
		uint64_t key;

		if (xs_varint(&p, end, x->lim, &key) || (key & 7) != TFT_PB_WT_LEN || key >> 3 != num ||
		    (v.offset = p - d->base, take_bytes(&p, end, x->lim, &b))) {
			/*
			 * Another field: skip it. (Pass 1 has checked every key
			 * and length; were one bad, the iterator would report
			 * it as the tables do.)
			 */
			struct tft_pb_iter it;
			struct tft_pb_raw raw;

			tft_pb_wire_iter_init(&it, key_at, (size_t)(end - key_at));
			r = tft_pb_wire_iter_next(d, &it, &raw);
			if (r < 0)
				break;
			r = 0;
			p = it.p;
			continue;
		}
		/* v.offset: the length's, as the tables give it. */
		v.index = index;
		v.p = b.p;
		v.len = b.len;
		v.sub.dec = d;
		v.sub.p = b.p;
		v.sub.len = b.len;
		v.sub.name = f->name;
		v.sub.index = index++;
		d->cur_field = f->name;
		d->cur_index = v.index;
		r = f->fn(x, NULL, f, &v);
		if (r < 0) {
			r = tft_pb_wire_fail(d, r, v.offset, "%s", tft_strerror(r));
			break;
		}
		r = 0;
	}
	d->depth--;
	d->cur_field = saved;
	d->cur_index = saved_index;
	return r;
}

/* ---- parallel lines ------------------------------------------------------------ */

/*
 * With opts->threads >= 2 and a host's XSpace of opts->par_min_bytes or
 * more (0: PAR_MIN_BYTES), lines are
 * decoded and stored by several threads at once. The planes are read in
 * groups: for each plane of a group this thread does the plane passes and
 * its metadata, keeps the metadata in a snapshot and notes each line as a
 * job, without reading it. Then (run_jobs()):
 *   1. this thread peeks at each line's header fields up to its first
 *      event (line_peek()); the threads scan (line_scan()) the few lines
 *      whose start is unusual;
 *   2. this thread registers the tracks of the lines with events, and each
 *      plane's process with its first one, in line order, so ids are those
 *      of the serial import;
 *   3. the threads decode and store the lines, each line by one thread
 *      through its own writer lane. A peeked line is stored optimistically
 *      (xs.optimistic): its events as they come, their order checked; the
 *      header fields after them (display name and id, usually) rename its
 *      track. Anything else (events out of order, an error, the timestamp
 *      after the events) forgets the track (tft_writer_lane_reset_track)
 *      and stores the line the serial way: scan, then events.
 * A group ends with the input or when its snapshots hold PAR_GROUP_BYTES
 * (half of opts->mem_budget when set): lines of different planes balance
 * each other, and memory stays bounded.
 *
 * What the events note for the whole file (correlation ids, groups,
 * steps) is noted per thread and merged by key after each group
 * (merge_notes()). The error reported is the serial import's: the reading
 * of the group stops at its first error; a line whose scan fails stops the
 * group there (the lines before it are still stored); and the first
 * failing line's error comes first, then that scan's, then the reading's.
 */
/*
 * The default. Measured (session 11, 2 cores): a real TF2 GPU profile's 3 MB
 * hosts (23 k events on 37 tracks) import 17-27% faster serially; generated
 * 4-20 MB hosts the same either way; a 300 MB one 1.2-1.4x faster in parallel.
 */
#ifndef TFT_XSPACE_PAR_MIN_BYTES /* the fuzz build sets 0: every input takes the parallel path */
#define TFT_XSPACE_PAR_MIN_BYTES ((size_t)16 << 20)
#endif
#define PAR_MIN_BYTES ((size_t)TFT_XSPACE_PAR_MIN_BYTES)
#define PAR_GROUP_BYTES ((size_t)48 << 20)
#define PAR_MAX_THREADS 16

/* Move the plane's metadata (as do_plane() left it) into a new snapshot. */
static int snap_plane(struct xs *x, const struct tft_pb_sub *ps)
{
	struct xs_psnap *sn;

	if (tft_grow((void **)&x->snaps, &x->csnaps, x->nsnaps + 1, sizeof(*x->snaps)))
		return oom(x);
	sn = &x->snaps[x->nsnaps++];
	memset(sn, 0, sizeof(*sn));
	sn->smeta = x->smeta;
	sn->strs = x->strs;
	sn->nsmeta = x->nsmeta;
	sn->smeta_map = x->smeta_map;
	sn->emeta = x->emeta;
	sn->nemeta = x->nemeta;
	sn->emeta_map = x->emeta_map;
	sn->meta_args = x->meta_args;
	sn->nmeta_args = x->nmeta_args;
	sn->process = x->process;
	sn->device_plane = x->device_plane;
	sn->name = x->plane.name;
	sn->id = x->plane.id;
	sn->plane_index = x->plane_index;
	sn->labels = x->labels;
	sn->ps = *ps;
	sn->bytes = (size_t)x->csmeta * (sizeof(*x->smeta) + sizeof(*x->strs)) +
		    (size_t)x->cemeta * sizeof(*x->emeta) + (size_t)x->cmeta_args * sizeof(*x->meta_args) +
		    ((size_t)x->smeta_map.ndense + x->emeta_map.ndense) * sizeof(uint32_t) +
		    ((size_t)x->smeta_map.cap + x->emeta_map.cap) * sizeof(struct idmap_slot);
	x->group_bytes += sn->bytes;
	/* The next plane starts from empty tables. */
	x->smeta = NULL;
	x->strs = NULL;
	x->nsmeta = x->csmeta = 0;
	memset(&x->smeta_map, 0, sizeof(x->smeta_map));
	x->emeta = NULL;
	x->nemeta = x->cemeta = 0;
	memset(&x->emeta_map, 0, sizeof(x->emeta_map));
	x->meta_args = NULL;
	x->nmeta_args = x->cmeta_args = 0;
	return 0;
}

static void snaps_free(struct xs *x)
{
	for (uint32_t i = 0; i < x->nsnaps; i++) {
		struct xs_psnap *sn = &x->snaps[i];

		free(sn->smeta);
		free(sn->strs);
		idmap_free(&sn->smeta_map);
		free(sn->emeta);
		idmap_free(&sn->emeta_map);
		free(sn->meta_args);
	}
	x->nsnaps = 0;
	x->group_bytes = 0;
}

/* Reading handler: each line becomes a job (run_jobs() scans it, then stores it). */
static int on_line_job(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct xs *x = ctx;
	struct xs_job *j;

	if (tft_grow((void **)&x->jobs, &x->cjobs, x->njobs + 1, sizeof(*x->jobs)))
		return oom(x);
	j = &x->jobs[x->njobs++];
	memset(j, 0, sizeof(*j));
	j->sub = v->sub;
	j->track = TFT_NONE;
	j->plane = x->nsnaps; /* the snapshot snap_plane() is about to make */
	j->key_line = (uint64_t)x->nlines_seen++ << 32;
	return 0;
}

static const struct tft_pb_field plane_jobs_fields[] = {
	H(3, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "lines", on_line_job, NULL),
};
static const struct tft_pb_msg plane_jobs_msg = {"XPlane", plane_jobs_fields, 1, TFT_PB_NOOFF};

/* Empty a map of the keys ids[0..n) (stride apart) and of its hashed part. */
static void idmap_forget(struct idmap *m, const void *ids, size_t stride, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		uint64_t id;

		memcpy(&id, (const char *)ids + (size_t)i * stride, sizeof(id));
		if (id < m->ndense)
			m->dense[id] = TFT_NONE;
	}
	if (m->count) {
		for (uint32_t i = 0; i < m->cap; i++)
			m->slots[i].val = TFT_NONE;
		m->count = 0;
	}
}

/* Ready clone i for a group: x's state, its own buffers, notes and decoder. */
static void clone_begin(struct xs_clone *c, struct xs *x, uint32_t i)
{
	struct xs *y = &c->x;
	struct xs keep = *y;

	*y = *x;
	y->strs = keep.strs;
	y->csmeta = keep.csmeta;
	y->pend = keep.pend;
	y->cpend = keep.cpend;
	y->pargs = keep.pargs;
	y->cpargs = keep.cpargs;
	y->npend = y->npargs = 0;
	memset(&y->corr, 0, sizeof(y->corr)); /* a clone notes ends instead */
	memset(&y->halves, 0, sizeof(y->halves));
	y->cnotes = keep.cnotes;
	y->ccnotes = keep.ccnotes;
	y->ncnotes = 0;
	y->group_map = keep.group_map;
	y->groups = keep.groups;
	y->cgroups = keep.cgroups;
	y->ngroups = 0;
	y->lgroup_map = keep.lgroup_map;
	y->lgroups = keep.lgroups;
	y->clgroups = keep.clgroups;
	y->nlgroups = 0;
	y->steps = keep.steps;
	y->step_keys = keep.step_keys;
	y->cstep_keys = keep.cstep_keys;
	y->csteps = keep.csteps;
	y->nsteps = 0;
	y->icache = keep.icache; /* ids stay valid: the writer's table only grows */
	y->heads = keep.heads;
	y->cheads = keep.cheads;
	y->nheads = 0;
	y->heads_line = NULL;
	/* The plane's tables come from the jobs' snapshots (clone_plane()). */
	y->smeta = NULL;
	y->nsmeta = 0;
	memset(&y->smeta_map, 0, sizeof(y->smeta_map));
	y->emeta = NULL;
	y->nemeta = 0;
	memset(&y->emeta_map, 0, sizeof(y->emeta_map));
	y->meta_args = NULL;
	y->nmeta_args = 0;
	y->jobs = NULL;
	y->njobs = y->cjobs = 0;
	y->snaps = NULL;
	y->nsnaps = y->csnaps = 0;
	y->clones = NULL;
	y->nclones = 0;
	y->parent = x;
	y->lane = NULL;
	y->quiet = i != 0;
	y->events = 0;
	y->dec = &c->dec;
	y->err = &c->err;
	c->base_depth = x->dec->depth;
	c->cur_plane = UINT32_MAX;
	c->dec = *x->dec;
	c->dec.err = &c->err;
	tft_error_clear(&c->err);
	c->fail_job = UINT32_MAX;
	c->fail_rc = 0;
}

/* Load snapshot k (the plane of the clone's next job) into the clone. */
static int clone_plane(struct xs_clone *c, uint32_t k)
{
	struct xs *y = &c->x;
	const struct xs_psnap *sn;

	if (c->cur_plane == k)
		return 0;
	if (k >= y->parent->nsnaps)
		return TFT_ENOMEM; /* snap_plane() could not keep it */
	sn = &y->parent->snaps[k];
	if (sn->nsmeta > y->csmeta) {
		struct xs_strcache *ns = realloc(y->strs, (size_t)sn->nsmeta * sizeof(*ns));

		if (!ns)
			return TFT_ENOMEM;
		y->strs = ns;
		y->csmeta = sn->nsmeta;
	}
	if (sn->nsmeta)
		memset(y->strs, 0, (size_t)sn->nsmeta * sizeof(*y->strs));
	y->smeta = sn->smeta;
	y->nsmeta = sn->nsmeta;
	y->smeta_map = sn->smeta_map;
	y->emeta = sn->emeta;
	y->nemeta = sn->nemeta;
	y->emeta_map = sn->emeta_map;
	y->meta_args = sn->meta_args;
	y->nmeta_args = sn->nmeta_args;
	y->process = sn->process;
	y->device_plane = sn->device_plane;
	/* The decoder as plane_pass() has it: the plane on the path. */
	c->dec.depth = c->base_depth;
	c->dec.path[c->dec.depth].name = sn->ps.name;
	c->dec.path[c->dec.depth].index = sn->ps.index;
	c->dec.depth++;
	c->cur_plane = k;
	return 0;
}

static void clone_free(struct xs_clone *c)
{
	struct xs *y = &c->x;

	free(y->strs);
	free(y->pend);
	free(y->pargs);
	free(y->cnotes);
	idmap_free(&y->group_map);
	free(y->groups);
	idmap_free(&y->lgroup_map);
	free(y->lgroups);
	free(y->steps);
	free(y->step_keys);
	free(y->icache);
	free(y->heads);
}

/* A thread's loop: the next job until none is left or one before it failed. */
/*
 * A line stored optimistically must be stored the serial way: its track and
 * notes forgotten, the line scanned (which reports the serial error, if
 * any), the track renamed if the scan says so, the events stored again.
 */
static int line_redo(struct xs *y, struct xs_job *j, const struct xs_job *noted, uint64_t events)
{
	struct tft_pb_bytes tname = j->tname;
	int64_t tid = j->tid;
	uint32_t track = j->track;
	int r = tft_writer_lane_reset_track(y->lane, track);

	tft_error_clear(y->err); /* what the optimistic pass reported does not count */
	y->dec->cur_field = j->sub.name;
	y->dec->cur_index = j->sub.index;
	if (r)
		return tft_pb_wire_fail(y->dec, r, j->sub.p - y->dec->base,
					"could not store the line's events: %s", tft_strerror(r));
	y->ncnotes = noted->cn_lo;
	y->nsteps = noted->st_lo;
	line_groups_end(y, 0); /* timed from the header as peeked: noted again */
	y->events = events;
	r = line_scan(y, &j->sub, j, 1);
	j->track = track;
	if (!r && (!bytes_same(j->tname, tname) || j->tid != tid))
		r = line_rename(y, j);
	return r ? r : line_body(y, j);
}

static void *clone_main(void *arg)
{
	struct xs_clone *c = arg;
	struct xs *y = &c->x, *x = y->parent;

	for (;;) {
		uint32_t k = __atomic_fetch_add(&x->next_job, 1, __ATOMIC_RELAXED);
		uint32_t cur;
		struct xs_job j;
		int r;

		if (k >= x->jobs_end || k > __atomic_load_n(&x->fail_job, __ATOMIC_RELAXED))
			break;
		j = x->jobs[k];
		if (!x->scanning && !j.nonempty)
			continue;
		r = clone_plane(c, j.plane);
		if (!r) {
			j.sub.dec = &c->dec;
			c->dec.cur_field = j.sub.name; /* as plane_pass() calls the handler */
			c->dec.cur_index = j.sub.index;
			if (x->scanning) {
				if (!j.need_scan)
					continue;
				r = line_scan(y, &j.sub, &j, 0); /* stored later, maybe by another thread */
				if (!r) {
					j.sub.dec = x->jobs[k].sub.dec;
					x->jobs[k] = j; /* this thread's job: no other writes it */
				}
			} else {
				struct xs_job *out = &x->jobs[k]; /* this thread's job: no other writes it */
				uint64_t events = y->events;

				out->clone = (uint32_t)(c - x->clones);
				out->cn_lo = y->ncnotes;
				out->st_lo = y->nsteps;
				y->optimistic = j.peeked;
				r = line_body(y, &j);
				y->optimistic = 0;
				if (r == XS_REDO)
					r = line_redo(y, &j, out, events);
				if (!r && line_groups_end(y, 1))
					r = oom(y);
				out->cn_hi = y->ncnotes;
				out->st_hi = y->nsteps;
			}
		} else {
			r = oom(y);
		}
		if (!r)
			continue;
		c->fail_job = k;
		c->fail_rc = r;
		cur = __atomic_load_n(&x->fail_job, __ATOMIC_RELAXED);
		while (k < cur && !__atomic_compare_exchange_n(&x->fail_job, &cur, k, 0,
							       __ATOMIC_RELAXED, __ATOMIC_RELAXED))
			;
		break; /* its later jobs come after this failure */
	}
	return NULL;
}

/*
 * Run clone_main() on n threads (this one included) over jobs [0, end),
 * scanning or storing them. The lowest failing job, UINT32_MAX if none,
 * is in x->fail_job, its clone's error in that clone.
 */
static void run_clones(struct xs *x, uint32_t n, uint32_t end, int scanning)
{
	x->next_job = 0;
	x->fail_job = UINT32_MAX;
	x->jobs_end = end;
	x->scanning = scanning;
	for (uint32_t i = 0; i < n; i++) {
		x->clones[i].fail_job = UINT32_MAX;
		x->clones[i].fail_rc = 0;
		x->clones[i].cur_plane = UINT32_MAX; /* reload: registration sets processes */
	}
	for (uint32_t i = 1; i < n; i++)
		x->clones[i].started =
			pthread_create(&x->clones[i].thread, NULL, clone_main, &x->clones[i]) == 0;
	clone_main(&x->clones[0]); /* threads that did not start: this one does their share */
	for (uint32_t i = 1; i < n; i++)
		if (x->clones[i].started)
			pthread_join(x->clones[i].thread, NULL);
}

/* The clone that failed on job k (run_clones() left k in x->fail_job). */
static struct xs_clone *failed_clone(struct xs *x, uint32_t n, uint32_t k)
{
	for (uint32_t i = 0; i < n; i++)
		if (x->clones[i].fail_job == k)
			return &x->clones[i];
	return NULL;
}

/*
 * Register the tracks of the scanned jobs [0, end) with events, in line
 * order (the serial import's ids), each plane's process with its first.
 * Returns the job that failed (out of memory; its error in x), or end.
 */
static uint32_t register_jobs(struct xs *x, uint32_t end)
{
	uint32_t k;

	for (k = 0; k < end; k++) {
		struct xs_job *j = &x->jobs[k];
		struct xs_psnap *sn = &x->snaps[j->plane];

		if (!j->nonempty)
			continue;
		if (sn->process == TFT_NONE) {
			sn->process = add_plane_process(x, sn->name, sn->id, sn->plane_index, sn->labels);
			if (sn->process == TFT_NONE) {
				oom(x);
				break;
			}
		}
		x->device_plane = sn->device_plane; /* line_kind() */
		if (line_pending(x, j))
			break;
		j->pending.process = sn->process;
		j->track = tft_writer_add_track(x->w, &j->pending);
		if (j->track == TFT_NONE) {
			tft_pb_wire_fail(x->dec, TFT_ENOMEM, -1, "could not register a track");
			break;
		}
	}
	return k;
}

/* The clone whose next group (at pos[clone]) comes first in the file; -1: none left. */
static int next_group(const struct xs *x, uint32_t n, const uint32_t *pos)
{
	uint64_t bk = 0;
	int best = -1;

	for (uint32_t i = 0; i < n; i++) {
		const struct xs *y = &x->clones[i].x;

		if (pos[i] < y->ngroups && (best < 0 || y->groups[pos[i]].first_key < bk)) {
			best = (int)i;
			bk = y->groups[pos[i]].first_key;
		}
	}
	return best;
}

/* A half's merge of the group's correlation notes (merge_half()). */
struct xs_mhalf {
	struct xs *x;
	uint32_t njobs;
	int p;
	int rc;
	pthread_t thread;
};

/*
 * Merge the group's correlation notes of ids of parity p into half p, in
 * file order, as note_corr() does serially: an id's entry is made by its
 * first end, and each end set by its first note. Both halves read every
 * note; each writes only its own table and bit maps.
 */
static void *merge_half(void *arg)
{
	struct xs_mhalf *m = arg;
	struct xs *x = m->x;
	struct xs_halves *h = &x->halves;
	struct xs_ctab *t = &h->half[m->p];
	uint64_t *made = h->made[m->p], *more = h->more[m->p], bit = h->nbits;
	uint64_t p = (uint64_t)m->p;

	for (uint32_t k = 0; k < m->njobs; k++) {
		const struct xs_job *j = &x->jobs[k];
		const struct xs_cnote *e, *end;
		int dst = x->snaps[j->plane].device_plane; /* a device plane's ends are destinations */

		if (!j->nonempty || j->cn_lo == j->cn_hi)
			continue;
		e = &x->clones[j->clone].x.cnotes[j->cn_lo];
		end = &x->clones[j->clone].x.cnotes[j->cn_hi];
		for (; e < end; e++, bit++) {
			uint32_t n0, m0, ix;

			if ((e->id & 1) != p)
				continue;
			n0 = t->n;
			m0 = t->nmore;
			ix = corr_entry(t, e->id, e->id >> 1);
			if (ix == TFT_NONE || corr_end(t, ix, dst, j->track, e->ts)) {
				m->rc = TFT_ENOMEM;
				return NULL;
			}
			made[bit >> 6] |= (uint64_t)(t->n != n0) << (bit & 63);
			more[bit >> 6] |= (uint64_t)(t->nmore != m0) << (bit & 63);
		}
	}
	m->rc = 0;
	return NULL;
}

/* Room in the halves' bit maps for `notes` more notes, cleared. */
static int halves_reserve(struct xs_halves *h, uint64_t notes)
{
	uint64_t need = (h->nbits + notes + 63) >> 6;

	if (need > UINT32_MAX)
		return TFT_ENOMEM;
	if (need <= h->cwords)
		return 0;
	need = need > 2 * (uint64_t)h->cwords ? need : 2 * (uint64_t)h->cwords;
	if (need > UINT32_MAX)
		return TFT_ENOMEM;
	for (int p = 0; p < 2; p++) {
		uint64_t *a = realloc(h->made[p], need * sizeof(uint64_t));

		if (!a)
			return TFT_ENOMEM;
		h->made[p] = a;
		if (!(a = realloc(h->more[p], need * sizeof(uint64_t))))
			return TFT_ENOMEM;
		h->more[p] = a;
	}
	h->cwords = (uint32_t)need;
	return 0;
}

/*
 * The clones' notes into x's, in key order: what the serial import notes.
 * A job's notes lie together in its clone's lists and the jobs are in file
 * order, so correlation ends and steps are taken job by job (correlation
 * ends by two threads, see struct xs_halves); groups, which each clone
 * keeps once per id, are merged by their first key.
 */
static int merge_notes(struct xs *x, uint32_t n, uint32_t njobs)
{
	struct xs_halves *h = &x->halves;
	struct xs_mhalf mh[2];
	uint32_t pos[PAR_MAX_THREADS];
	uint64_t notes = 0, w0, nw;
	int b, started;

	/* Correlation ids: half 1 on a thread of its own, half 0 on this one. */
	for (uint32_t k = 0; k < njobs; k++)
		if (x->jobs[k].nonempty)
			notes += x->jobs[k].cn_hi - x->jobs[k].cn_lo;
	if (notes) {
		if (halves_reserve(h, notes))
			return TFT_ENOMEM;
		/* New words cleared; a word in use is clear past nbits already. */
		w0 = (h->nbits + 63) >> 6;
		nw = ((h->nbits + notes + 63) >> 6) - w0;
		for (int p = 0; p < 2; p++) {
			memset(h->made[p] + w0, 0, (size_t)nw * sizeof(uint64_t));
			memset(h->more[p] + w0, 0, (size_t)nw * sizeof(uint64_t));
			mh[p] = (struct xs_mhalf){ .x = x, .njobs = njobs, .p = p };
		}
		started = pthread_create(&mh[1].thread, NULL, merge_half, &mh[1]) == 0;
		merge_half(&mh[0]);
		if (started)
			pthread_join(mh[1].thread, NULL);
		else
			merge_half(&mh[1]);
		if (mh[0].rc || mh[1].rc)
			return TFT_ENOMEM;
		h->nbits += notes;
	}
	/* Groups: first appearance order (up to MAX_GROUPS), span, last step name. */
	memset(pos, 0, sizeof(pos));
	while ((b = next_group(x, n, pos)) >= 0) {
		const struct xs_group *e = &x->clones[b].x.groups[pos[b]++];
		uint32_t ix = idmap_get(&x->group_map, e->id);
		struct xs_group *m;

		if (ix == TFT_NONE) {
			if (x->ngroups >= MAX_GROUPS)
				continue;
			if (tft_grow((void **)&x->groups, &x->cgroups, x->ngroups + 1, sizeof(*x->groups)))
				return TFT_ENOMEM;
			x->groups[x->ngroups] = *e;
			if (idmap_put(&x->group_map, e->id, x->ngroups, x->ngroups))
				return TFT_ENOMEM;
			x->ngroups++;
			continue;
		}
		m = &x->groups[ix];
		if (e->start < m->start)
			m->start = e->start;
		if (e->end > m->end)
			m->end = e->end;
		if (e->name != TFT_NONE && (m->name == TFT_NONE || e->name_key > m->name_key)) {
			m->name = e->name;
			m->name_key = e->name_key;
		}
	}
	/* Steps of Steps lines: in file order; an index by position is recounted. */
	for (uint32_t k = 0; k < njobs; k++) {
		const struct xs_job *j = &x->jobs[k];
		const struct xs *y = &x->clones[j->clone].x;

		if (!j->nonempty)
			continue;
		for (uint32_t i = j->st_lo; i < j->st_hi; i++) {
			if (steps_reserve(x))
				return TFT_ENOMEM;
			x->steps[x->nsteps] = y->steps[i];
			x->step_keys[x->nsteps] = y->step_keys[i];
			if (x->step_keys[x->nsteps].by_count)
				x->steps[x->nsteps].index = (int64_t)x->nsteps;
			x->nsteps++;
		}
	}
	for (uint32_t i = 0; i < n; i++) {
		struct xs *y = &x->clones[i].x;

		idmap_forget(&y->group_map, y->ngroups ? &y->groups[0].id : NULL, sizeof(*y->groups),
			     y->ngroups);
		y->ncnotes = y->ngroups = y->nsteps = 0;
		x->events += y->events;
	}
	return 0;
}

/*
 * Decode and store the group's jobs on up to opts->threads threads (this
 * one included), then merge their notes. `err_r`: the status of the
 * reading that ended the group (0 if none), reported unless a job failed.
 */
static int run_jobs(struct xs *x, int err_r)
{
	uint32_t n = (uint32_t)x->opts->threads, lr = 0, scan_fail, body_end;
	struct xs_clone *failed = NULL;
	struct tft_error scan_err;
	int r = 0, scan_rc = 0;

	if (n > x->njobs)
		n = x->njobs;
	if (n > PAR_MAX_THREADS)
		n = PAR_MAX_THREADS;
	if (n < 1)
		n = 1;
	if (x->nclones < n) {
		struct xs_clone *nc = realloc(x->clones, (size_t)n * sizeof(*nc));

		if (!nc)
			return oom(x);
		memset(nc + x->nclones, 0, (size_t)(n - x->nclones) * sizeof(*nc));
		x->clones = nc;
		x->nclones = n;
	}
	for (uint32_t i = 0; i < n && !r; i++) {
		struct xs_clone *c = &x->clones[i];

		c->started = 0;
		clone_begin(c, x, i);
		c->x.pend_budget = x->pend_budget / n; /* the threads' held lines share the budget */
		if (!c->x.icache && !(c->x.icache = calloc(ICACHE_SLOTS, sizeof(*c->x.icache))))
			r = TFT_ENOMEM;
	}
	if (r) {
		x->njobs = 0;
		snaps_free(x);
		return oom(x);
	}
	/*
	 * 1. Peek at each line's header; the threads scan the lines whose start
	 * is unusual. A failing scan is the serial import's error at that line:
	 * the lines before it are still stored, and their errors come first.
	 */
	tft_error_clear(&scan_err);
	{
		uint32_t nscan = 0;

		for (uint32_t k = 0; k < x->njobs; k++) {
			struct xs_job *j = &x->jobs[k];

			j->need_scan = !line_peek(x, &j->sub, j);
			nscan += (uint32_t)j->need_scan;
		}
		x->fail_job = UINT32_MAX;
		if (nscan)
			run_clones(x, n, x->njobs, 1);
	}
	scan_fail = x->fail_job;
	if (scan_fail != UINT32_MAX) {
		failed = failed_clone(x, n, scan_fail);
		scan_err = failed->err;
		scan_rc = failed->fail_rc;
		failed = NULL;
	}
	/* 2. Register the tracks in line order (no lanes open yet). */
	body_end = scan_fail < x->njobs ? scan_fail : x->njobs;
	{
		uint32_t k = register_jobs(x, body_end);

		if (k < body_end) {
			body_end = k;
			scan_rc = TFT_ENOMEM;
			if (x->err)
				scan_err = *x->err;
		}
	}
	/* 3. Decode and store the lines' events, each line through one lane. */
	for (uint32_t i = 0; i < n && !r; i++) {
		struct xs_clone *c = &x->clones[i];

		tft_error_clear(&c->err);
		if (!(c->x.lane = tft_writer_lane_open(x->w)))
			r = TFT_ENOMEM;
	}
	if (!r)
		run_clones(x, n, body_end, 0);
	for (uint32_t i = 0; i < n; i++) {
		struct xs_clone *c = &x->clones[i];
		int cr = c->x.lane ? tft_writer_lane_close(c->x.lane) : 0;

		c->x.lane = NULL;
		if (cr && !lr)
			lr = (uint32_t)-cr;
	}
	if (!r && x->fail_job != UINT32_MAX)
		failed = failed_clone(x, n, x->fail_job);
	if (!r && !failed && !scan_rc && !err_r && !lr && merge_notes(x, n, body_end))
		r = TFT_ENOMEM;
	x->njobs = 0;
	snaps_free(x);
	if (r)
		return oom(x);
	if (failed) {
		if (x->err)
			*x->err = failed->err;
		return failed->fail_rc;
	}
	if (scan_rc) {
		if (x->err)
			*x->err = scan_err;
		return scan_rc;
	}
	if (err_r)
		return err_r;
	if (lr)
		return tft_pb_wire_fail(x->dec, -(int)lr, -1, "could not store the lines' events: %s",
					tft_strerror(-(int)lr));
	return 0;
}

/* The plane's lines: serially, or as jobs of the group (run when it is full). */
static int plane_lines(struct xs *x, const struct tft_pb_sub *ps)
{
	int r;

	if (!x->parallel)
		return plane_pass(x, ps, 3, &plane_lines_msg);
	r = plane_pass(x, ps, 3, &plane_jobs_msg);
	/* Also after an error: the jobs queued before it need the plane's tables. */
	if (snap_plane(x, ps) && !r)
		r = TFT_ENOMEM;
	if (r)
		return r;
	return x->group_bytes >= x->group_max ? run_jobs(x, 0) : 0;
}

static int fast_plane_fields(struct xs *x, const uint8_t *p, const uint8_t *end)
{
	const uint8_t *lim = x->lim;
	struct tft_pb_bytes b;
	uint64_t v;

	while (p < end) {
		const uint8_t *at = p;
		uint8_t k = *p++;

		if (k == 0x08) {
			if (xs_varint(&p, end, lim, &v))
				return 0;
			x->plane.id = (int64_t)v;
			x->plane.has |= 1u << 0;
		} else if (k == 0x12) {
			if (take_bytes(&p, end, lim, &x->plane.name))
				return 0;
			x->plane.has |= 1u << 1;
		} else if (k == 0x1a || k == 0x22 || k == 0x2a || k == 0x32) {
			uint32_t i = (k >> 3) - 3; /* lines, event_metadata, stat_metadata, stats */

			if (take_bytes(&p, end, lim, &b))
				return 0;
			if (!x->span_lo[i])
				x->span_lo[i] = at;
			x->span_hi[i] = p;
			x->plane.has |= 1u << (i + 2);
		} else {
			return 0;
		}
	}
	return 1;
}

static int do_plane(struct xs *x, const struct tft_pb_sub *ps)
{
	int r;

	x->nsmeta = x->nemeta = x->nmeta_args = 0;
	idmap_clear(&x->smeta_map);
	idmap_clear(&x->emeta_map);
	x->process = TFT_NONE;
	x->labels = 0;
	x->labels_len = 0;
	memset(&x->plane, 0, sizeof(x->plane));
	memset(x->span_lo, 0, sizeof(x->span_lo));
	r = 0;
	if (!fast_plane_fields(x, ps->p, ps->p + ps->len)) {
		memset(&x->plane, 0, sizeof(x->plane));
		memset(x->span_lo, 0, sizeof(x->span_lo));
		x->span_last = ps->p;
		r = tft_pb_wire_decode_sub(ps, &plane_msg, &x->plane, x);
	}
	if (!r)
		r = plane_pass(x, ps, 5, &plane_smeta_msg);
	if (!r)
		r = plane_pass(x, ps, 4, &plane_emeta_msg);
	if (!r)
		r = plane_pass(x, ps, 6, &plane_stats_msg);
	if (r)
		return r;
	if (x->labels_len) {
		x->labels = intern(x, x->labels_buf, x->labels_len);
		if (x->labels == UINT32_MAX)
			return oom(x);
	}
	x->device_plane = bytes_prefix(x->plane.name, "/device:");
	return plane_lines(x, ps);
}

static int on_plane(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct xs *x = ctx;

	x->plane_index = v->index;
	return do_plane(x, &v->sub);
}

/*
 * Keep one of the profiler's own error or warning texts ("CUPTI could not
 * be loaded", dropped events): joined, distinct, one per line, as meta
 * `key`; the first XS_MSG_MAX, each cut at XS_MSG_LEN bytes.
 */
#define XS_MSG_MAX 16
#define XS_MSG_LEN 400
static int keep_message(struct xs *x, const char *key, int64_t n, const struct tft_pb_val *v)
{
	char text[XS_MSG_LEN + 4];
	size_t k = 0;
	int r;

	if (n > XS_MSG_MAX || !v->len)
		return 0;
	for (size_t i = 0; i < v->len && k < XS_MSG_LEN; i++) {
		unsigned char c = v->p[i];

		text[k++] = c == '\n' || c == '\r' || c == '\t' ? ' ' : c ? (char)c : '?';
	}
	if (v->len > XS_MSG_LEN)
		memcpy(text + k, "...", 3), k += 3;
	text[k] = 0;
	r = tft_writer_join_meta(x->w, key, text, "\n");
	return r == TFT_ENOMEM ? oom(x) : 0;
}

static int on_space_field(void *ctx, void *msg, const struct tft_pb_field *f, const struct tft_pb_val *v)
{
	struct xs *x = ctx;

	switch (f->num) {
	case 2:
		return keep_message(x, "xspace_error_messages", ++x->nerrors, v);
	case 3:
		return keep_message(x, "xspace_warning_messages", ++x->nwarnings, v);
	case 4:
		if (!x->have_host && v->len) {
			x->host = intern(x, v->p, v->len);
			if (x->host == UINT32_MAX)
				return oom(x);
			x->have_host = 1;
		}
		break;
	}
	return 0;
}

/* Flows written straight into the writer's buffer (tft_writer_flow_room()). */
struct xs_fout {
	struct tft_flow *f;
	uint32_t k, room; /* filled, room at f */
};

/* The flows filled so far to the writer, and room for more. */
static int __attribute__((noinline)) fout_refill(struct xs *x, struct xs_fout *o)
{
	int r;

	if (o->k && (r = tft_writer_flows_add(x->w, o->k)))
		return r;
	o->k = 0;
	return tft_writer_flow_room(x->w, &o->f, &o->room);
}

static inline int add_launch_flow(struct xs *x, struct xs_fout *o, const struct xs_corr *c,
				  uint32_t track, int64_t ts)
{
	int r;

	if (tft_unlikely(o->k == o->room) && (r = fout_refill(x, o)))
		return r;
	o->f[o->k++] = (struct tft_flow){ .flow_id = c->id, .name = x->flow_name, .cat = x->flow_cat,
					   .src_track = c->src_track, .src_ts_ns = c->src_ts,
					   .dst_track = track, .dst_ts_ns = ts };
	return 0;
}

/* A flow from each launch to each device event of its correlation id. */
static int emit_flows(struct xs *x)
{
	const struct xs_ctab *t = &x->corr;
	const struct xs_halves *h = &x->halves;
	struct xs_fout o = { NULL, 0, 0 };
	uint32_t cur[2] = { 0, 0 };
	int r;

	/* The serial lines' table; then the halves', in the order one table would have. */
	for (uint32_t i = 0; i < t->n; i++) {
		const struct xs_corr *c = &t->corr[i];

		if (c->src_track != TFT_NONE && c->dst_track != TFT_NONE &&
		    (r = add_launch_flow(x, &o, c, c->dst_track, c->dst_ts)))
			return r;
	}
	for (uint64_t w = 0; w < (h->nbits + 63) >> 6; w++) {
		uint64_t one = h->made[1][w], all = h->made[0][w] | one;

		while (all) {
			int p = (int)((one >> __builtin_ctzll(all)) & 1);
			const struct xs_corr *c = &h->half[p].corr[cur[p]++];

			all &= all - 1;
			if (c->src_track != TFT_NONE && c->dst_track != TFT_NONE &&
			    (r = add_launch_flow(x, &o, c, c->dst_track, c->dst_ts)))
				return r;
		}
	}
	for (uint32_t i = 0; i < t->nmore; i++) {
		const struct xs_corr_dst *m = &t->more[i];
		const struct xs_corr *c = &t->corr[m->corr];

		if (c->src_track != TFT_NONE && (r = add_launch_flow(x, &o, c, m->track, m->ts)))
			return r;
	}
	cur[0] = cur[1] = 0;
	for (uint64_t w = 0; w < (h->nbits + 63) >> 6; w++) {
		uint64_t one = h->more[1][w], all = h->more[0][w] | one;

		while (all) {
			int p = (int)((one >> __builtin_ctzll(all)) & 1);
			const struct xs_corr_dst *m = &h->half[p].more[cur[p]++];
			const struct xs_corr *c = &h->half[p].corr[m->corr];

			all &= all - 1;
			if (c->src_track != TFT_NONE && (r = add_launch_flow(x, &o, c, m->track, m->ts)))
				return r;
		}
	}
	return o.k ? tft_writer_flows_add(x->w, o.k) : 0;
}

struct xs_posstep {
	struct tft_step st;
	uint32_t pos; /* as noted */
};

static int cmp_posstep(const void *a, const void *b)
{
	const struct xs_posstep *x = a, *y = b;

	if (x->st.start_ns != y->st.start_ns)
		return x->st.start_ns < y->st.start_ns ? -1 : 1;
	return x->pos < y->pos ? -1 : (x->pos > y->pos);
}

/* Group steps by start, then group id (the map's order is the lines' order). */
static int cmp_group(const void *a, const void *b)
{
	const struct xs_group *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->id < y->id ? -1 : (x->id > y->id);
}

static int emit_steps(struct xs *x)
{
	struct xs_group *sorted;
	int r = 0;

	if (x->nsteps) {
		/* The Steps lines' steps in time order (then as noted): lines and planes come in any order. */
		struct xs_posstep *v = malloc((size_t)x->nsteps * sizeof(*v));

		if (!v)
			return TFT_ENOMEM;
		for (uint32_t i = 0; i < x->nsteps; i++)
			v[i] = (struct xs_posstep){ x->steps[i], i };
		qsort(v, x->nsteps, sizeof(*v), cmp_posstep);
		for (uint32_t i = 0; i < x->nsteps && !r; i++)
			r = tft_writer_add_step(x->w, &v[i].st);
		free(v);
		return r;
	}
	/* No Steps line: one step per group_id (xprof's step grouping), in time order. */
	sorted = x->ngroups ? malloc((size_t)x->ngroups * sizeof(*sorted)) : NULL;
	if (x->ngroups && !sorted)
		return TFT_ENOMEM;
	if (x->ngroups) {
		memcpy(sorted, x->groups, (size_t)x->ngroups * sizeof(*sorted));
		qsort(sorted, x->ngroups, sizeof(*sorted), cmp_group);
	}
	for (uint32_t i = 0; i < x->ngroups; i++) {
		const struct xs_group *g = &sorted[i];
		struct tft_step st;

		memset(&st, 0, sizeof(st));
		st.index = (int64_t)g->id;
		if (g->name != TFT_NONE) {
			st.name = g->name;
		} else {
			int n = snprintf(x->scratch, sizeof(x->scratch), "%lld", (long long)g->id);

			st.name = intern(x, x->scratch, (size_t)n);
		}
		st.process = x->host_process;
		st.start_ns = g->start;
		if (__builtin_sub_overflow(g->end, g->start, &st.dur_ns))
			st.dur_ns = INT64_MAX;
		st.traced = true;
		r = tft_writer_add_step(x->w, &st);
		if (r)
			break;
	}
	free(sorted);
	return r;
}

static void xs_free(struct xs *x)
{
	if (x->sorter)
		tft_sorter_destroy(x->sorter);
	free(x->smeta);
	free(x->strs);
	idmap_free(&x->smeta_map);
	free(x->emeta);
	idmap_free(&x->emeta_map);
	free(x->meta_args);
	ctab_free(&x->corr);
	for (int p = 0; p < 2; p++) {
		ctab_free(&x->halves.half[p]);
		free(x->halves.made[p]);
		free(x->halves.more[p]);
	}
	idmap_free(&x->group_map);
	free(x->groups);
	free(x->steps);
	free(x->step_keys);
	free(x->pend);
	free(x->pargs);
	free(x->heads);
	for (uint32_t i = 0; i < x->nclones; i++)
		clone_free(&x->clones[i]);
	free(x->clones);
	free(x->jobs);
	snaps_free(x);
	free(x->snaps);
	pthread_mutex_destroy(&x->sorter_mu);
}

/* Host from the file name: base name without ".xplane.pb" / ".pb". */
static uint32_t host_from_name(struct xs *x, const char *name)
{
	const char *b = name ? strrchr(name, '/') : NULL;
	size_t n;

	b = b ? b + 1 : (name ? name : "");
	n = strlen(b);
	if (n > 10 && strcmp(b + n - 10, ".xplane.pb") == 0)
		n -= 10;
	else if (n > 3 && strcmp(b + n - 3, ".pb") == 0)
		n -= 3;
	return intern(x, b, n);
}

/* The hosts of the session's earlier XSpace inputs (attached to the writer). */
struct xs_hosts {
	uint32_t *id;
	uint32_t n, cap;
};

static void hosts_free(void *ctx)
{
	struct xs_hosts *h = ctx;

	free(h->id);
	free(h);
}

/*
 * The host name, told apart from an earlier XSpace input's equal one
 * (containers all called "localhost", the same file twice): "HOST (FILE)",
 * numbered if that is taken too. UINT32_MAX when out of memory.
 */
static uint32_t distinct_host(struct xs *x, const char *name)
{
	struct xs_hosts *hs = tft_writer_attached(x->w, "xspace.hosts");
	const char *base = name ? strrchr(name, '/') : NULL;
	uint32_t id = x->host;
	size_t hlen;
	const char *h = tft_writer_str(x->w, x->host, &hlen);

	if (!hs) {
		if (!(hs = calloc(1, sizeof(*hs))))
			return UINT32_MAX;
		if (tft_writer_attach(x->w, "xspace.hosts", hs, NULL, hosts_free)) {
			free(hs);
			return UINT32_MAX;
		}
	}
	base = base ? base + 1 : name ? name : "input";
	for (int k = 1;; k++) {
		char buf[512];
		uint32_t i = 0;

		while (i < hs->n && hs->id[i] != id)
			i++;
		if (i == hs->n)
			break;
		if (k == 1)
			snprintf(buf, sizeof(buf), "%.*s (%s)", (int)hlen, h, base);
		else
			snprintf(buf, sizeof(buf), "%.*s (%s #%d)", (int)hlen, h, base, k);
		id = intern(x, buf, strlen(buf));
		if (id == UINT32_MAX)
			return id;
	}
	if (tft_grow((void **)&hs->id, &hs->cap, hs->n + 1, sizeof(*hs->id)))
		return UINT32_MAX;
	hs->id[hs->n++] = id;
	return id;
}

/* One XSpace message: data[0, len) at byte `base` of the input. */
static int ingest_space(struct tft_writer *w, const char *name, const uint8_t *data, size_t len,
			const struct tft_ingest_opts *opts, struct tft_error *err)
{
	struct tft_pb_dec dec;
	struct xs x;
	int r;

	if (!w || (!data && len))
		return tft_error_set(err, TFT_EINVAL, -1, "no writer or no input");
	memset(&x, 0, sizeof(x));
	x.w = w;
	x.dec = &dec;
	x.err = err;
	x.opts = opts;
	x.input_len = len;
	x.host_process = TFT_NONE;
	pthread_mutex_init(&x.sorter_mu, NULL);
	clock_gettime(CLOCK_MONOTONIC, &x.last_progress);
	tft_pb_wire_init(&dec, data, len, err);
	x.lim = len ? data + len : data; /* data may be NULL when empty */
	x.k_long_name = tft_writer_intern_cstr(w, "long_name");
	x.k_num_occ = tft_writer_intern_cstr(w, "num_occurrences");
	x.k_metadata_id = tft_writer_intern_cstr(w, "metadata_id");
	x.c_event = tft_writer_intern_cstr(w, "xevent");
	x.flow_cat = tft_writer_intern_cstr(w, "launch");
	x.flow_name = tft_writer_intern_cstr(w, "launch");
	if (x.k_long_name == UINT32_MAX || x.k_num_occ == UINT32_MAX ||
	    x.k_metadata_id == UINT32_MAX || x.c_event == UINT32_MAX || x.flow_cat == UINT32_MAX ||
	    x.flow_name == UINT32_MAX) {
		r = tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
		goto out;
	}
	x.pend_budget = opts && opts->mem_budget ? opts->mem_budget / 2 : (size_t)64 << 20;
	x.sorter = tft_sorter_create(w, opts ? opts->mem_budget : 0);
	if (!x.sorter) {
		r = tft_error_set(err, TFT_ENOMEM, -1, "out of memory (sorter)");
		goto out;
	}
	/* Pass 1: hostnames, errors, warnings (they come after the planes). */
	r = tft_pb_wire_decode(&dec, &space_msg, NULL, &x);
	if (r)
		goto out;
	if (!x.have_host) {
		x.host = host_from_name(&x, name);
		if (x.host == UINT32_MAX) {
			r = tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
			goto out;
		}
	}
	x.host = distinct_host(&x, name);
	if (x.host == UINT32_MAX) {
		r = tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
		goto out;
	}
	/* Pass 2: the planes, one at a time. */
	x.parallel = opts && opts->threads >= 2 &&
		     len >= (opts->par_min_bytes ? opts->par_min_bytes : PAR_MIN_BYTES);
	x.group_max = opts && opts->mem_budget ? opts->mem_budget / 2 : PAR_GROUP_BYTES;
	r = tft_pb_wire_decode(&dec, &space_planes_msg, NULL, &x);
	if (x.parallel && (x.njobs || x.nsnaps))
		r = run_jobs(&x, r); /* the last group; an error of its reading comes after its jobs' */
	if (r)
		goto out;
	r = tft_sorter_finish(x.sorter, 0, err);
	if (r)
		goto out;
	r = emit_flows(&x);
	if (!r)
		r = emit_steps(&x);
	if (!r && (x.nerrors || x.nwarnings)) {
		r = tft_writer_add_count(w, "xspace_errors", x.nerrors);
		if (!r)
			r = tft_writer_add_count(w, "xspace_warnings", x.nwarnings);
	}
	if (!r)
		r = tft_writer_join_meta(w, "format", "xspace", "+");
	if (!r)
		r = tft_writer_join_meta(w, "producer", "TensorFlow/JAX profiler", " + ");
	if (r) {
		tft_error_set(err, r, -1, "could not store flows, steps or metadata");
		goto out;
	}
	if (opts && opts->progress)
		opts->progress(opts->progress_ctx, len, len, x.events);
out:
	if (r && err && err->code == TFT_OK)
		tft_error_set(err, r, -1, "%s", tft_strerror(r));
	if (r)
		tft_error_set_file(err, name);
	xs_free(&x);
	return r;
}

/*
 * Where the next XSpace of concatenated ones starts (`cat a.xplane.pb
 * b.xplane.pb`, which protobuf reads as one XSpace whose planes and
 * hostnames are both hosts'): serializers write the fields in number order,
 * so a plane after an errors, warnings or hostnames field, when planes came
 * before, starts the next host's XSpace. `len` if there is none, or where
 * the fields stop making sense (the decoder then reports that).
 */
static size_t next_space(const uint8_t *data, size_t len)
{
	struct tft_pb_dec q;
	struct tft_pb_iter it;
	struct tft_pb_raw f;
	int planes = 0, tail = 0;

	quiet_iter(&q, &it, data, len);
	while (tft_pb_wire_iter_next(&q, &it, &f) == 1) {
		if (f.num == 1) {
			if (planes && tail)
				return (size_t)f.offset;
			planes = 1;
		} else if (f.num >= 2 && f.num <= 4) {
			tail = 1;
		}
	}
	return len;
}

/*
 * After an XSpace: on a device plane that has stream lines, every other line
 * (XLA Ops included) is derived from the kernels. Tracks from `first` on are
 * this input's.
 */
static void mark_derived_lines(struct tft_writer *w, uint32_t first)
{
	uint32_t n = tft_writer_track_count(w);
	uint32_t np = tft_writer_process_count(w);
	uint8_t *streams = calloc(np ? np : 1, 1);

	if (!streams)
		return; /* the flags sharpen the accounting only */
	for (uint32_t i = first; i < n; i++) {
		const struct tft_track *t = tft_writer_track(w, i);
		if (t && t->kind == TFT_TRACK_GPU_STREAM && t->process < np)
			streams[t->process] = 1;
	}
	for (uint32_t i = first; i < n; i++) {
		struct tft_track *t = tft_writer_track(w, i);
		if (t && t->kind == TFT_TRACK_DEVICE && t->process < np && streams[t->process])
			t->flags |= TFT_TRACKF_DERIVED;
	}
	free(streams);
}

int tft_xspace_ingest(struct tft_writer *w, const char *name, const uint8_t *data, size_t len,
		      const struct tft_ingest_opts *opts, struct tft_error *err)
{
	size_t at = 0;
	uint32_t first = tft_writer_track_count(w);

	/* Each XSpace of a concatenation is its host's: own host name, clock, flows, steps. */
	do {
		size_t n = len ? next_space(data + at, len - at) : 0;
		int r = ingest_space(w, name, data ? data + at : data, n, opts, err);

		if (r) {
			if (err && err->offset >= 0)
				err->offset += (int64_t)at;
			return r;
		}
		at += n;
	} while (at < len);
	mark_derived_lines(w, first);
	return 0;
}
