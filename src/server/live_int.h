/* SPDX-License-Identifier: MIT */
/*
 * The live hub's private state (server/live.h): the hub object and what its
 * files share. live_hub.c starts and stops it and runs the follower thread;
 * live_steps.c is the steps' hot path and the traced steps until they land;
 * live_events.c the event ring, the status and the event streams (SSE);
 * live_runs.c the per-kind aggregates and GET /api/runs; live_save.c the
 * session copies; api_live.c the controls; live_import.c the imports.
 */
#ifndef TFT_SERVER_LIVE_INT_H
#define TFT_SERVER_LIVE_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "codec/json_write.h"
#include "server/api.h"
#include "server/live.h"

#define KINDS_MAX 64          /* run kinds kept (LRU) */
#define RECENT_MAX 1000u      /* step times kept per run kind */
#define RECENT_DEFAULT 200
#define HIST_BUCKETS 1500     /* log buckets of ratio HIST_RATIO from 1 ns */
#define HIST_RATIO 1.02
#define QUEUE_MAX 4096        /* finished steps waiting for the follower */
#define LANDING_MAX 8192      /* steps waiting for the commit that holds them */
#define RING_SLOTS 1024       /* SSE events kept for replay */
#define SLOT_BYTES 1280       /* one formatted SSE message: the largest status and
				* trace events fit (sizes in BENCHMARKS.md, "Server and
				* runtime: design measurements"); a longer one is not sent */
#define STREAMS_MAX 16
#define TICK_NS (20 * 1000000LL)
#define STATUS_EVERY_NS 1000000000LL
#define BUMP_EVERY_NS (250 * 1000000LL)
#define NAME_MAX_BYTES 128
#define TSTEPS_MAX 512        /* traced steps followed until they land */
#define WHY_BYTES 160         /* an import failure's reason, as the page shows it */

struct recent_ent {
	int64_t index, start_ns, dur_ns;
	bool traced;
};

struct run_kind {
	char name[NAME_MAX_BYTES];
	uint64_t count, traced, last_seen;
	uint64_t sum_ns;
	int64_t min_ns, max_ns, last_ns;
	uint32_t *hist;             /* owned: HIST_BUCKETS counts */
	struct recent_ent *recent;  /* owned: ring of RECENT_MAX */
	uint32_t rhead, rn;
};

struct done_step {
	int64_t index, start_ns, dur_ns;
	uint64_t flush_seq; /* runtime commits when the follower saw it */
	bool traced;
	char name[NAME_MAX_BYTES];
};

/*
 * A traced step until it has landed: its runtime events in the file (the
 * follower released it) and every profiler import it expects done or given
 * up. The hub counts a trace request's steps as they land (docs/http-api.md).
 */
struct tstep {
	int64_t index;      /* -1: a free slot */
	uint64_t request;   /* the trace request it belongs to; 0 = none */
	int64_t start_ns, end_ns;
	uint64_t events;    /* imported so far */
	int32_t imports;    /* expected imports not yet done */
	bool released, failed, done;
	bool hold;          /* the runtime holds its thread until its imports are done (rt.h) */
	int source;         /* the last import's (enum tft_live_source) */
	char name[NAME_MAX_BYTES];
	char why[WHY_BYTES]; /* the first failure */
};

struct ev_slot {
	uint64_t id;
	uint32_t len;
	char text[SLOT_BYTES];
};

struct sse_client {
	struct tft_live *lv;          /* borrowed */
	struct MHD_Connection *conn;  /* borrowed: valid while the response lives */
	uint64_t cursor;              /* next event id to send */
	bool started, suspended;
	char pend[SLOT_BYTES + 64];   /* a message being written out */
	size_t pend_len, pend_off;
	struct sse_client *next, *prev;
};

struct tft_live {
	/* Set at start, then read-only. */
	struct tft_server_opts sopts;
	char token[96];
	bool live_mode;               /* following the runtime (not a file server); atomic */
	char path[4096];              /* the served file */
	char rt_path[4096];           /* the runtime's session file ("" if none) */

	pthread_mutex_t srv_lock;     /* guards srv, url, port, stopped */
	pthread_cond_t srv_cond;      /* stopped changed */
	struct tft_server *srv;       /* owned */
	struct tft_server_source src;
	char url[600];
	uint16_t port;
	bool stopped;

	/* The steps' hot path (tft_live_step_begin/end). */
	pthread_mutex_t q_lock;
	struct done_step cur;         /* the open step */
	bool cur_open;
	struct done_step *queue;      /* owned: QUEUE_MAX; the hot path appends */
	struct done_step *spare;      /* owned: QUEUE_MAX; swapped with queue by the follower */
	uint32_t nqueue;
	uint64_t queue_lost;          /* steps not aggregated: the queue was full */
	_Atomic int64_t pending;      /* traced steps requested, not yet begun */
	_Atomic int64_t every;        /* trace every k-th step, 0 = off */
	_Atomic int64_t nsteps;       /* steps begun through the hub */

	/* Traced steps and the latest trace request (ts_lock; taken after q_lock, before ev_lock). */
	pthread_mutex_t ts_lock;
	struct tstep *tsteps;         /* owned: TSTEPS_MAX, a ring in begin order */
	uint32_t ts_next;             /* where the next traced step goes */
	struct tft_live_request req;
	uint64_t req_seq;             /* request ids given out */

	/* Aggregates (the follower writes, /api/runs reads). */
	pthread_mutex_t agg_lock;
	struct run_kind kinds[KINDS_MAX];
	uint32_t nkinds;
	uint64_t evicted_kinds, seen_seq, total_steps;
	int64_t end_ns;
	char next[16];                /* the `end` event's "next" (tft_live_set_next) */

	/* Follower only. */
	struct done_step *landing;    /* owned: LANDING_MAX */
	uint32_t nlanding;
	pthread_t follower;
	bool follower_running;
	_Atomic bool stop_follower;
	_Atomic bool stop_requested;  /* POST /api/stop */
	_Atomic int64_t stop_at_ns;   /* when to stop: the reply goes out first */
	pthread_mutex_t wake_lock;
	pthread_cond_t wake_cond;

	/* Imports (live_import.c reports here). */
	struct tft_live_imports *imp; /* owned: what this hub's imports made (live_import.c) */
	_Atomic uint64_t imports, import_errors, imported_events;
	_Atomic uint64_t gen_cache;   /* the pool generation after the last bump */

	/* Event ring and streams. */
	pthread_mutex_t ev_lock;
	pthread_cond_t ev_cond;       /* a stream ended */
	struct ev_slot *ring;         /* owned: RING_SLOTS */
	uint64_t ev_first, ev_next;   /* ids in the ring: [ev_first, ev_next) */
	struct sse_client *clients;
	unsigned nclients;
	bool closing;                 /* the server is stopping: end the streams */
};

static inline int64_t tft_live_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline void tft_live_copy_name(char *dst, const char *src)
{
	size_t n = src ? strnlen(src, NAME_MAX_BYTES - 1) : 0;

	if (!n) {
		memcpy(dst, "step", 5);
		return;
	}
	memcpy(dst, src, n);
	dst[n] = 0;
}

static inline struct tft_live *tft_live_of(struct tft_http_req *r)
{
	struct tft_live *lv = r->srv->pool.src.live;

	return lv && __atomic_load_n(&lv->live_mode, __ATOMIC_RELAXED) ? lv : NULL;
}

/* ---- shared between the hub's files ------------------------------------------ */

/* live_hub.c: bump the readers' generation (srv_lock held). */
void tft_live_bump_locked(struct tft_live *lv);

/* live_events.c: the event ring and the status. */
void tft_live_push_json(struct tft_live *lv, const char *type, struct tft_json_writer *w);
void tft_live_push_status(struct tft_live *lv);
void tft_live_write_request(struct tft_json_writer *w, const struct tft_live_request *q);

/* live_runs.c: the per-kind aggregates (agg_lock taken inside). */
void tft_live_aggregate(struct tft_live *lv, const struct done_step *d);
void tft_live_kind_free(struct run_kind *k);

/* live_steps.c: the follower saw a traced step's runtime events land in the file. */
void tft_live_tstep_released(struct tft_live *lv, const struct done_step *d);
/* live_import.c: what a hub's imports made in the live session (its own map). */
struct tft_live_imports;
struct tft_live_imports *tft_live_imports_create(void); /* NULL: out of memory */
void tft_live_imports_free(struct tft_live_imports *m);  /* NULL is a no-op */
/* live_steps.c, called by live_import.c: an import landed in the file, or failed. */
void tft_live_note_import(struct tft_live *lv, const struct tft_live_import *im, int rc,
			  uint64_t events, int64_t t0, int64_t t1, const char *why);

#endif /* TFT_SERVER_LIVE_INT_H */
