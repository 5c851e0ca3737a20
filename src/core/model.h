/* SPDX-License-Identifier: MIT */
/*
 * The trace model shared by every layer: processes, tracks, events (slices,
 * instants, counter samples), flows, steps and their arguments.
 *
 * Time is int64 nanoseconds everywhere. Strings are uint32 ids into the
 * session's string table (id 0 = ""). These are plain value types: who owns
 * a struct is the caller that declared it; pointers inside are borrowed.
 */
#ifndef TFT_CORE_MODEL_H
#define TFT_CORE_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#define TFT_NONE UINT32_MAX /* "no id" for track/process/string references */

enum tft_track_kind {
	TFT_TRACK_THREAD = 1,     /* a CPU thread (nested slices) */
	TFT_TRACK_DEVICE = 2,     /* a device's compute lane (TF /device:GPU:0 ...) */
	TFT_TRACK_GPU_STREAM = 3, /* a GPU stream / queue / memcpy engine */
	TFT_TRACK_COMM = 4,       /* communication: send/recv, collectives */
	TFT_TRACK_COUNTER = 5,    /* counter samples (memory, ...) */
	TFT_TRACK_ASYNC = 6,      /* async slices (b/e, s/f spans); lane-packed */
	TFT_TRACK_OBJECT = 7,     /* object lifetimes (N/O/D) */
};
#define TFT_TRACK_KIND_MAX 7

/*
 * tft_track.flags: how a track's slices relate to each other and to other
 * tracks. The kind says what a track is; these say how to count it.
 */
enum {
	/*
	 * Concurrent executions, not a call stack: a TF device's executor (ops
	 * of its inter-op threads), a GPU stream or copy engine, a comm track.
	 * Each slice takes the first lane free at its start (depth = lane) and
	 * is never a child of another: self time = duration. Async and object
	 * tracks are lane-packed whatever their flags.
	 */
	TFT_TRACKF_CONCURRENT = 1u << 0,
	/*
	 * Repeats or summarises work recorded on other tracks: TF's
	 * /stream:all and /memcpy (copies of the /stream:N kernels and copies),
	 * XProf's derived lines on a GPU (TF ops, name scopes, steps), GPU user
	 * annotations. The Timeline shows it; aggregates (stats, prof, advise)
	 * leave it out unless it is asked for by name, so that one execution is
	 * counted once.
	 */
	TFT_TRACKF_DERIVED = 1u << 1,
};
#define TFT_TRACKF_ALL 3u

/* Stable lower-case name ("thread", "device", "gpu_stream", ...). */
const char *tft_track_kind_name(int kind);
/* Inverse of tft_track_kind_name; 0 if unknown. */
int tft_track_kind_parse(const char *s);

enum tft_event_kind {
	TFT_EV_SLICE = 0,
	TFT_EV_INSTANT = 1,
	TFT_EV_COUNTER = 2,
};

/* tft_event.flags */
enum {
	TFT_EVF_UNCLOSED = 1u << 0, /* B without E (or b without e): dur runs to trace end */
	TFT_EVF_SUMMARY = 1u << 1,  /* a level-of-detail block standing for `count` events */
	TFT_EVF_GLOBAL = 1u << 2,   /* instant with global scope ("s":"g") */
	TFT_EVF_PROCESS = 1u << 3,  /* instant with process scope ("s":"p") */
};

enum tft_arg_type {
	TFT_ARG_NULL = 0,
	TFT_ARG_BOOL = 1,   /* v.i is 0 or 1 */
	TFT_ARG_INT = 2,    /* v.i */
	TFT_ARG_DOUBLE = 3, /* v.d */
	TFT_ARG_STR = 4,    /* v.str: string id */
	TFT_ARG_JSON = 5,   /* v.str: string id of raw JSON text (arrays, objects) */
};

struct tft_arg {
	uint32_t key;  /* string id */
	uint32_t type; /* enum tft_arg_type */
	union {
		int64_t i;
		double d;
		uint32_t str;
	} v;
};

/*
 * One event as producers hand it to the store and readers return it.
 * For a slice: ts_ns + dur_ns. For an instant: dur_ns = 0. For a counter
 * sample: ts_ns + value. For a level-of-detail summary block (flag SUMMARY):
 * name = the longest slice in the block, dur_ns the block's extent, value
 * the busy nanoseconds, count the number of events merged.
 */
struct tft_event {
	int64_t ts_ns;
	int64_t dur_ns;
	double value;
	uint32_t track; /* track id */
	uint32_t name;  /* string id */
	uint32_t cat;   /* string id */
	uint32_t depth; /* nesting depth / lane; filled by the store */
	uint32_t count; /* 1, or events merged into a summary block */
	uint8_t kind;   /* enum tft_event_kind */
	uint8_t flags;  /* TFT_EVF_* */
	uint16_t nargs;
	const struct tft_arg *args; /* borrowed; nargs entries */
};

struct tft_process {
	uint32_t id;     /* assigned by the store */
	uint32_t name;   /* string id ("" if unnamed) */
	uint32_t host;   /* string id ("" if unknown) */
	int64_t pid;     /* OS pid or the producer's numeric id */
	int32_t rank;    /* distributed rank, -1 if unknown */
	int32_t sort_index;
	uint32_t labels; /* string id */
};

struct tft_track {
	uint32_t id;      /* assigned by the store */
	uint32_t process; /* process id */
	uint32_t kind;    /* enum tft_track_kind */
	uint32_t name;    /* string id */
	int64_t tid;      /* OS tid, stream id, lane ... */
	int32_t sort_index;
	uint32_t flags;   /* TFT_TRACKF_* */
	/* Filled by the store when the session is written: */
	uint64_t slices, instants, counters;
	int64_t min_ts_ns, max_ts_ns; /* INT64_MAX/INT64_MIN when empty */
	uint32_t max_depth;
};

/*
 * Whether slices on a track of this kind and these flags nest as a call
 * stack (depth = nesting level); otherwise depth is a lane (async, object,
 * concurrent tracks) or 0 (counters).
 */
static inline bool tft_track_nests(uint32_t kind, uint32_t flags)
{
	return kind != TFT_TRACK_ASYNC && kind != TFT_TRACK_OBJECT && kind != TFT_TRACK_COUNTER &&
	       !(flags & TFT_TRACKF_CONCURRENT);
}

/* Lane-packed: depth is the first lane free at a slice's start. */
static inline bool tft_track_lanes(uint32_t kind, uint32_t flags)
{
	return kind == TFT_TRACK_ASYNC || kind == TFT_TRACK_OBJECT ||
	       (kind != TFT_TRACK_COUNTER && (flags & TFT_TRACKF_CONCURRENT));
}

/* A flow arrow between two points on two tracks (bound to the slices there). */
struct tft_flow {
	uint64_t flow_id;    /* producer's id (Chrome "id", correlation id ...) */
	uint32_t name, cat;  /* string ids */
	uint32_t src_track;  /* TFT_NONE when the start was never seen */
	int64_t src_ts_ns;
	uint32_t dst_track;  /* TFT_NONE when the end was never seen */
	int64_t dst_ts_ns;
	uint32_t flags;      /* TFT_FLOWF_* */
};

enum {
	TFT_FLOWF_BIND_ENCLOSING = 1u << 0, /* dst binds to the enclosing slice ("bp":"e") */
	TFT_FLOWF_UNMATCHED = 1u << 1,      /* one end is missing */
};

struct tft_step {
	int64_t index;    /* step number (ProfilerStep#N -> N) */
	uint32_t name;    /* string id */
	uint32_t process; /* process id or TFT_NONE */
	int64_t start_ns;
	int64_t dur_ns;
	bool traced;      /* op-level events were recorded for this step */
};

#endif /* TFT_CORE_MODEL_H */
