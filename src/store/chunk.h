/* SPDX-License-Identifier: MIT */
/*
 * Chunk codec: a run of events of one track as a columnar, zstd-compressed
 * blob (layout in docs/file-format.md, "Chunk payload"). The encoder builds
 * its columns incrementally as events are added; the decoder validates every
 * byte and never trusts a count it has not bounded.
 */
#ifndef TFT_STORE_CHUNK_H
#define TFT_STORE_CHUNK_H

#include <stddef.h>
#include <stdint.h>

#include "core/hmap.h"
#include "core/model.h"
#include "core/status.h"

#define TFT_CHUNK_MAGIC 0xC7
#define TFT_CHUNK_VERSION 1
/* Hard limits a decoder enforces (an encoder never produces more). */
#define TFT_CHUNK_MAX_EVENTS (1u << 20)
#define TFT_CHUNK_MAX_PAYLOAD_BYTES ((size_t)64 << 20)
#define TFT_CHUNK_MAX_ARG_COLS (1u << 17)
/* Soft limits: past these an encoder reports itself full (see _is_full). */
#define TFT_CHUNK_SOFT_BYTES ((size_t)4 << 20)
#define TFT_CHUNK_SOFT_ARG_COLS 4096u

/* Payload columns, in payload order. TS is always present; the others are
 * "lazy": absent from a chunk where every event has the default value. */
enum {
	TFT_CHUNK_COL_TS = 0, /* zigzag delta from the previous start (first: from base_ts) */
	TFT_CHUNK_COL_DUR,    /* zigzag; default 0 */
	TFT_CHUNK_COL_NAME,   /* string id; default 0 */
	TFT_CHUNK_COL_CAT,    /* string id; default 0 */
	TFT_CHUNK_COL_DEPTH,  /* default 0 */
	TFT_CHUNK_COL_KIND,   /* enum tft_event_kind; default 0 (slice) */
	TFT_CHUNK_COL_FLAGS,  /* TFT_EVF_*; default 0 */
	TFT_CHUNK_COL_COUNT,  /* default 1 */
	TFT_CHUNK_COL_VALUE,  /* zigzag int deltas, or 8 bytes LE XOR (see enc flags); default 0.0 */
	TFT_CHUNK_COL_NARGS,  /* args per event; default 0 */
	TFT_CHUNK_COL_ARGREF, /* per arg, in event order: its arg column index */
	TFT_CHUNK_NCOLS
};

/* Header enc_flags. */
enum {
	/* Every value in the chunk is an integer (|v| <= 2^53, not -0.0): the value
	 * column holds zigzag varint deltas of (int64)value instead of raw bits. */
	TFT_CHUNK_ENC_VALUE_INT = 1u << 0,
};

/* Arg column tags: enum tft_arg_type, except that a bool's value is in its
 * tag, so bool columns store nothing beyond presence. */
enum {
	TFT_CHUNK_TAG_NULL = 0,
	TFT_CHUNK_TAG_FALSE = 1,
	TFT_CHUNK_TAG_INT = 2,    /* zigzag delta from the column's previous value */
	TFT_CHUNK_TAG_DOUBLE = 3, /* 8 bytes LE */
	TFT_CHUNK_TAG_STR = 4,    /* string id */
	TFT_CHUNK_TAG_JSON = 5,   /* string id */
	TFT_CHUNK_TAG_TRUE = 6,
	TFT_CHUNK_TAG_MAX = 6
};

/* A growable byte buffer. */
struct tft_chunk_buf {
	uint8_t *p; /* owned */
	size_t len, cap;
};

int tft_chunk_buf_reserve(struct tft_chunk_buf *b, size_t extra);
/* out (its old bytes dropped) = in compressed with zstd context cctx at level. 0, TFT_ENOMEM or TFT_EIO. */
int tft_chunk_compress(void *cctx, int level, const struct tft_chunk_buf *in, struct tft_chunk_buf *out);
void tft_chunk_buf_free(struct tft_chunk_buf *b);

struct tft_chunk_acol {
	uint32_t key;   /* string id */
	uint32_t tag;   /* TFT_CHUNK_TAG_* */
	int64_t prev_i; /* last int value (delta base) */
	struct tft_chunk_buf data;
};

/*
 * The arg columns used at one arg position by recent events (a cache): way 0
 * the latest lookup's, then older ones (code UINT64_MAX: none); a hit of the
 * encoder's fast path leaves them in place. Four ways, as a track often
 * mixes several kinds of events (a real GPU profile's host threads interleave
 * ops, launches, memcpys and syncs, each with its own stats).
 */
#define TFT_CHUNK_AWAYS 4
struct tft_chunk_aslot {
	uint64_t code[TFT_CHUNK_AWAYS]; /* the head of an arg of the column (see arg_code in chunk.c) */
	uint32_t idx[TFT_CHUNK_AWAYS];  /* index into acols */
};

/* An open chunk being filled. Plain struct: init/fini in caller storage. */
struct tft_chunk_enc {
	uint32_t n;         /* events added */
	uint32_t kind_mask; /* bit k set when an event of kind k was added */
	uint32_t present;   /* bit per TFT_CHUNK_COL_* holding data */
	/* The event's words from dur_ns (see chunk.c) masked to the fields of
	 * absent columns. */
	uint64_t absent_word[5];
	int64_t base_ts, prev_ts;
	int64_t t_min, t_max; /* smallest start, largest end (ts + dur) */
	uint64_t prev_value_bits; /* raw value mode: XOR base */
	int64_t prev_value_i;     /* int value mode: delta base */
	uint32_t value_int;       /* the value column is in int mode */
	uint32_t room;            /* events that fit every present column without a check */
	size_t bytes; /* bytes buffered in all columns */
	struct tft_chunk_buf col[TFT_CHUNK_NCOLS];
	struct tft_chunk_acol *acols; /* owned, nacols used */
	uint32_t nacols, cap_acols;
	uint32_t nacols_buf; /* acols[0, nacols_buf) own data buffers (kept by reset) */
	struct tft_hmap ahash; /* owned: column code (key << 3 | tag) -> index into acols */
	/* Arg position i of recent events used the columns of aslot[i] (i <
	 * naslots): events of one kind repeat their arg keys, so most args skip
	 * the hash. Emptied with acols. */
	struct tft_chunk_aslot *aslot; /* owned */
	uint32_t naslots, cap_aslots;
};

void tft_chunk_enc_init(struct tft_chunk_enc *e);
void tft_chunk_enc_fini(struct tft_chunk_enc *e);
/* Empty the chunk. release != 0 also frees the column buffers. */
void tft_chunk_enc_reset(struct tft_chunk_enc *e, int release);

/*
 * Add one event (ev->depth is stored as given; ev->track is not stored).
 * Returns 0, TFT_EINVAL (bad kind or arg type, dur < 0, ts + dur overflows)
 * or TFT_ENOMEM. On failure the chunk is unchanged.
 */
int tft_chunk_enc_add(struct tft_chunk_enc *e, const struct tft_event *ev);

/* True when the chunk holds max_events events or reached a soft limit. */
static inline int tft_chunk_enc_is_full(const struct tft_chunk_enc *e, uint32_t max_events)
{
	return e->n >= max_events || e->bytes >= TFT_CHUNK_SOFT_BYTES ||
	       e->nacols >= TFT_CHUNK_SOFT_ARG_COLS;
}

/* Serialize the uncompressed payload into out (replacing its contents). */
int tft_chunk_enc_payload(const struct tft_chunk_enc *e, struct tft_chunk_buf *out);

/*
 * Serialize and compress: out receives the blob stored in chunks.data.
 * cctx is a ZSTD_CCtx owned by the caller (reused across chunks); scratch
 * holds the payload in between. 0, TFT_ENOMEM or TFT_EIO (zstd failure).
 */
int tft_chunk_enc_finish(const struct tft_chunk_enc *e, void *cctx, int level,
			 struct tft_chunk_buf *scratch, struct tft_chunk_buf *out);

/* A decoded chunk, reusable across decodes. */
struct tft_chunk_dec {
	struct tft_event *ev; /* owned, n used; args point into `args` */
	uint32_t n, cap_ev;
	struct tft_arg *args; /* owned */
	size_t nargs, cap_args;
	struct tft_chunk_buf raw; /* decompressed payload */
	void *dctx;               /* owned ZSTD_DCtx, created on first use */
	uint32_t kind_mask;
	uint32_t max_str;     /* largest string id referenced (0 if none) */
	int64_t t_min, t_max; /* smallest start, largest end; 0,0 when empty */
	/* Set by the caller: the events come without their args (nargs 0), which
	 * are neither read nor checked (a LOD rebuild from its own chunks). */
	int no_args;
};

void tft_chunk_dec_init(struct tft_chunk_dec *d);
void tft_chunk_dec_fini(struct tft_chunk_dec *d);

/*
 * Decode a compressed blob. chunk_id names the chunk in error messages
 * ("chunk 12: ..."); err->offset is a byte offset in the decompressed
 * payload. Events get track = TFT_NONE. Returns 0, TFT_EFORMAT or
 * TFT_ENOMEM. String ids are not range-checked (the caller knows the
 * table: compare max_str with it).
 */
int tft_chunk_decode(struct tft_chunk_dec *d, const void *blob, size_t len, int64_t chunk_id,
		     struct tft_error *err);

/* Decode an uncompressed payload (what tft_chunk_enc_payload produces). */
int tft_chunk_decode_payload(struct tft_chunk_dec *d, const void *payload, size_t len,
			     int64_t chunk_id, struct tft_error *err);

/*
 * tft_chunk_decode with a caller-owned ZSTD_DCtx (*dctx, created on first
 * use) and payload buffer, shared by many decoders (a reader's chunk cache):
 * d->dctx and d->raw are then left unused.
 */
int tft_chunk_decode_ext(struct tft_chunk_dec *d, void **dctx, struct tft_chunk_buf *raw,
			 const void *blob, size_t len, int64_t chunk_id, struct tft_error *err);

/* Heap bytes held by a decoder (events, args, payload buffer; not its dctx). */
size_t tft_chunk_dec_bytes(const struct tft_chunk_dec *d);

/* ---- flow chunks ------------------------------------------------------------
 * The flows of a session, columnar in zstd blobs of up to TFT_FLOW_CHUNK_FLOWS
 * flows sorted by time (layout in docs/file-format.md, "Flow chunks"). A
 * flow's time is its src_ts, or its dst_ts when only the destination is known.
 */
#define TFT_FLOW_CHUNK_MAGIC 0xF1
#define TFT_FLOW_CHUNK_VERSION 1
#define TFT_FLOW_CHUNK_FLOWS 16384u          /* what the writer puts in a chunk */
#define TFT_FLOW_CHUNK_MAX_FLOWS (1u << 20)  /* what a decoder accepts */

/* Payload columns, in payload order; an absent column reads as all zeros. */
enum {
	TFT_FLOW_COL_TS = 0,    /* zigzag(t - previous t), t = the flow's time (first: from base); always present */
	TFT_FLOW_COL_SRC_TS,    /* zigzag(src_ts - t); without a src_track: zigzag(src_ts) */
	TFT_FLOW_COL_DST_TS,    /* zigzag(dst_ts - t); without a dst_track: zigzag(dst_ts) */
	TFT_FLOW_COL_SRC_TRACK, /* track id + 1, 0 = none */
	TFT_FLOW_COL_DST_TRACK, /* track id + 1, 0 = none */
	TFT_FLOW_COL_ID,        /* zigzag delta of the 64-bit flow id from the previous (first: from 0) */
	TFT_FLOW_COL_NAME,      /* string id */
	TFT_FLOW_COL_CAT,       /* string id */
	TFT_FLOW_COL_FLAGS,     /* TFT_FLOWF_* */
	TFT_FLOW_NCOLS
};

/* A flow's time: src_ts, or dst_ts when only the destination's track is known. */
int64_t tft_flow_time(const struct tft_flow *f);

/*
 * Encode n (1..TFT_FLOW_CHUNK_MAX_FLOWS) flows, stored sorted by time (ties
 * in the given order), into one compressed blob in out (scratch: the sort
 * keys, then the payload; out also holds the columns before the blob; both
 * are reused across calls; cctx: a ZSTD_CCtx). The smallest and largest
 * time are returned. 0, TFT_EINVAL, TFT_ENOMEM or TFT_EIO.
 */
int tft_flow_chunk_encode(const struct tft_flow *f, uint32_t n, void *cctx, int level,
			  struct tft_chunk_buf *scratch, struct tft_chunk_buf *out, int64_t *t_min,
			  int64_t *t_max);

/* Decoded flows, reusable across decodes. */
struct tft_flow_dec {
	struct tft_flow *f; /* owned, n used */
	uint32_t n, cap;
	uint32_t max_str;   /* largest string id referenced */
	uint32_t max_track; /* largest track id referenced + 1 (0: none) */
	struct tft_chunk_buf raw;
	void *dctx; /* owned ZSTD_DCtx */
};

void tft_flow_dec_init(struct tft_flow_dec *d);
void tft_flow_dec_fini(struct tft_flow_dec *d);
/* Decode a blob / an uncompressed payload: 0, TFT_EFORMAT ("flow chunk <id>: ...",
 * payload byte offset) or TFT_ENOMEM. Ids are not range-checked (see max_*). */
int tft_flow_chunk_decode(struct tft_flow_dec *d, const void *blob, size_t len, int64_t chunk_id,
			  struct tft_error *err);
int tft_flow_chunk_decode_payload(struct tft_flow_dec *d, const void *payload, size_t len,
				  int64_t chunk_id, struct tft_error *err);

#endif /* TFT_STORE_CHUNK_H */
