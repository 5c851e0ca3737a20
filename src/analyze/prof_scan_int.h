/* SPDX-License-Identifier: MIT */
/*
 * Inside the scan of tftracer prof, not an API: what its files share.
 * prof_scan.c reads one track's slices into a worker's tables (the per-event
 * path), prof_scan_run.c splits the tracks over the workers and runs the two
 * phases, prof_flows.c indexes the launch flows by track, prof_bwd.c keeps the
 * forward ops' Sequence numbers that place backward ops, prof_merge.c merges
 * the workers' tables into the profile's.
 */
#ifndef TFT_ANALYZE_PROF_SCAN_INT_H
#define TFT_ANALYZE_PROF_SCAN_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "analyze/prof_int.h"
#include "core/hmap.h"

/* ---- prof_flows.c: the launch flows (host -> accelerator) by track ---------------------------- */

/* Flows sorted by (src_track, src_ts) in by_src, by (dst_track, dst_ts) in by_dst. */
struct prof_flow_index {
	struct prof_flow **by_src, **by_dst; /* owned arrays of pointers into p->flows */
	uint32_t n;
};

/* A track the scan counts: not derived (one execution counts once), not counters or objects. */
bool tft_prof_countable(const struct tft_track *t);

/* Read the session's launch flows into p->flows (replacing any) and index them in fx. */
int tft_prof_flows_load(struct tft_prof *p, struct prof_flow_index *fx, struct tft_error *err);
void tft_prof_flows_free(struct prof_flow_index *fx);

/* The flows starting (src) or ending (!src) on track, in time order: their first, and their count in *n. */
struct prof_flow **tft_prof_flows_of(const struct prof_flow_index *fx, uint32_t track, bool src, uint32_t *n);

/* ---- prof_bwd.c: forward ops' Sequence numbers, for placing backward ops ------------------------ */

/* One worker's notes: pages of consecutive numbers, hashed by (thread, first number). */
struct prof_seq {
	struct prof_seq_page **pages; /* owned */
	uint32_t npages, cappages;
	struct tft_hmap page_ix;      /* owned: (tid, base) -> index in pages (zeroed until the first page) */
};

/* Note a forward op's number (the latest op of a number wins); 0 or TFT_ENOMEM. */
int tft_prof_seq_note(struct prof_seq *q, int64_t seq, int64_t ts, uint32_t ctx, uint32_t code);

/* The context of the forward op of number seq on thread tid in *ctx, and 1 (the note is used up), or 0. */
int tft_prof_seq_take(struct prof_seq *q, int64_t tid, int64_t seq, uint32_t *ctx);

void tft_prof_seq_free(struct prof_seq *q);

/* Every worker's notes left, in the merged table's records and codes (rmap, cmap of each worker). */
struct prof_seq_all {
	struct prof_seq_entry *v; /* owned */
	uint32_t n, cap;
};

int tft_prof_seq_collect(struct prof_seq_all *all, const struct prof_seq *q, const uint32_t *rmap,
			 const uint32_t *cmap);

/* Each REC_BWDSEQ record of g takes the context of the latest forward op of its number; frees all. */
void tft_prof_seq_place(struct prof_tab *g, struct prof_seq_all *all);

/* ---- prof_scan.c: one worker, one track at a time ------------------------------------------------- */

/* What a phase's workers share. */
struct prof_phase {
	struct tft_prof *p;
	const struct prof_flow_index *fx;
	const struct prof_span **spans; /* every selected span, by start */
	uint32_t nspans;
};

struct frame;
struct active;
struct memo;

struct prof_worker {
	struct tft_prof *p;
	int id;
	struct tft_session *s;     /* borrowed (worker 0) or owned */
	bool own_session;
	struct prof_tab tab;
	uint32_t nstr;
	uint32_t *lid_of;          /* owned: session string id -> lid + 1 */
	uint32_t *stack_code;      /* owned, lazily: "Call stack" string id -> code node + 1 */
	uint8_t *ncls, *ccls, *kcls; /* owned: name / category / arg key classes per string id */
	/* (not core/hmap: fixed-size caches that forget on a full neighbourhood, of records) */
	struct memo *flops_memo, *mem_memo; /* owned: open-addressing caches */
	uint32_t memo_cap;
	struct frame *fr;          /* owned: the stack */
	uint32_t nfr, capfr;
	struct active *act;        /* owned */
	uint32_t nact, capact;
	struct prof_seq seq;       /* forward ops' Sequence numbers */
	uint32_t *tracks;          /* owned: this phase's tracks */
	uint32_t ntracks;
	/* the track being scanned */
	uint32_t track, track_dev, track_proc, root_last_op;
	bool nests, accel;
	struct prof_flow **fsrc;   /* flows starting on this track, by src_ts (borrowed) */
	uint32_t nfsrc, fi;
	struct prof_flow **fdst;   /* flows ending on this track, by dst_ts (borrowed) */
	uint32_t nfdst, fj;
	const struct prof_span **spans; /* the step spans of this track's process, by start */
	uint32_t nspans, si;
	uint64_t executions, outside, linked, unlinked;
	bool has_code, framework_tf, framework_torch;
	uint8_t bwd_next;          /* the op being pushed is a backward op placed by its forward op */
	/* the second pass */
	const uint8_t *want;
	tft_prof_exec_fn fn;
	void *fn_ctx;
	uint32_t *gmap;            /* local record -> merged record + 1 (second pass) */
	uint32_t ngmap;
	int rc;
	struct tft_error err;
};

/* Worker id's tables and session handle (worker 0: p's; others open their own); fini after a failure too. */
int tft_prof_worker_init(struct prof_worker *w, struct tft_prof *p, int id);
void tft_prof_worker_fini(struct prof_worker *w);

/* Scan track tid into w's tables; w->rc. */
int tft_prof_scan_track(struct prof_worker *w, const struct prof_phase *ph, uint32_t tid);

/* ---- prof_merge.c ------------------------------------------------------------------------------- */

/* Merge the nw workers' tables into p->tab by key. */
int tft_prof_merge(struct tft_prof *p, struct prof_worker *ws, int nw, struct tft_error *err);

#endif
