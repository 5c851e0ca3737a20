/* SPDX-License-Identifier: MIT */
/*
 * Private to the session file reader (session_file.c, session_cache.c): the
 * file's structs and the chunk cache's functions. (session.c, the dispatch,
 * knows none of it.)
 */
#ifndef TFT_STORE_SESSION_INT_H
#define TFT_STORE_SESSION_INT_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "store/chunk.h"
#include "store/schema.h"
#include "store/session.h"


#define STR_BLOCK ((size_t)1 << 20) /* string arena block bytes */
#define STR_IDS_LOG2 10              /* strings are loaded 1024 ids at a time */
#define STR_IDS (1u << STR_IDS_LOG2)
#define CACHE_BYTES_DEFAULT ((size_t)64 << 20)
/* A scan over more chunks than this streams: its chunks go to the cold end of
 * the cache and recycle one buffer, so an export or a statistics pass neither
 * flushes the viewport's working set nor faults in fresh memory per chunk. */
#define STREAM_CHUNKS 16

struct dir_ent {
	int64_t t_min, t_max;
	int64_t runmax; /* max t_max over this and all earlier entries of the level */
	int64_t rowid;
	uint32_t n;
	uint32_t track, level; /* checked on reading (a live writer may reuse a deleted chunk's rowid) */
};

struct level_dir {
	struct dir_ent *e; /* owned; sorted by t_min */
	uint32_t n, cap;
	int64_t gap_ns; /* from the lod table; 0 when the level is not stored */
	int stored;
};

struct str_ent {
	const char *p; /* borrowed from a string block; NULL until loaded */
	uint32_t len;
};

struct str_block {
	struct str_block *next; /* owned */
	size_t used, cap;
	char data[];
};

/* A decoded chunk in the cache: in the rowid hash (unless detached by a
 * refresh) and in the LRU list. */
struct cache_ent {
	int64_t rowid;                 /* -1: detached, not in the hash */
	struct cache_ent *hnext;       /* borrowed: next in the hash chain */
	struct cache_ent *prev, *next; /* borrowed: LRU list, most recent first */
	size_t bytes;                  /* memory held, as counted in cache_bytes */
	int pins;                      /* scans iterating over it right now */
	struct tft_chunk_dec dec;
};

struct meta_kv {
	char *key, *value; /* owned */
};

struct tft_sess_file {
	sqlite3 *db;             /* owned */
	sqlite3_stmt *get_chunk; /* owned */
	char path[4096];
	struct str_ent **sblk; /* owned: [id >> STR_IDS_LOG2], each owned (NULL until used) */
	uint32_t nstr;         /* ids 0..nstr-1 exist (max id + 1) */
	uint32_t nsblk;        /* entries allocated in sblk */
	sqlite3_stmt *get_strs; /* owned: one block of strings by id range */
	struct str_block *blocks; /* owned list, newest first */
	struct meta_kv *meta;     /* owned */
	uint32_t nmeta;
	struct tft_process *procs; /* owned */
	uint32_t nprocs;
	struct tft_track *tracks; /* owned */
	uint32_t ntracks;
	struct level_dir (*dirs)[TFT_STORE_LEVELS]; /* owned: [track][level] */
	struct tft_step *steps;                      /* owned */
	uint32_t nsteps;
	uint64_t nflows;
	int version;             /* schema_version */
	int has_cstats;          /* a chunk_stats table */
	sqlite3_stmt *get_cstats; /* owned, lazy: a track's chunk statistics */
	uint8_t *cstats_buf;     /* owned: a decompressed statistics blob */
	size_t cap_cstats_buf;
	struct cache_ent **htab; /* owned: rowid hash buckets (chains of borrowed entries) */
	uint32_t hcap, nent;     /* buckets (power of 2), entries in the cache */
	struct cache_ent *lru_head, *lru_tail; /* owned: every entry, most recent first */
	size_t cache_bytes, cache_budget;
	struct cache_ent *stream_ent; /* borrowed: the last chunk a streaming scan decoded */
	void *dctx;                 /* owned ZSTD_DCtx shared by the cache's decodes */
	struct tft_chunk_buf raw;   /* decompressed payload scratch */
	struct tft_event *lodbuf; /* owned: summary events gathered by a LOD scan */
	size_t cap_lodbuf;
};

/* session_cache.c: decoded chunks by rowid, in an LRU list sized in bytes. */
struct cache_ent *tft_sess_cache_find(const struct tft_sess_file *s, int64_t rowid);
int tft_sess_hash_insert(struct tft_sess_file *s, struct cache_ent *c);
void tft_sess_lru_unlink(struct tft_sess_file *s, struct cache_ent *c);
void tft_sess_lru_push_back(struct tft_sess_file *s, struct cache_ent *c);
void tft_sess_lru_push_front(struct tft_sess_file *s, struct cache_ent *c);
void tft_sess_cache_detach(struct tft_sess_file *s, struct cache_ent *c);
struct cache_ent *tft_sess_cache_take_lru(struct tft_sess_file *s, const struct cache_ent *keep);
void tft_sess_ent_free(struct cache_ent *c);
void tft_sess_cache_trim(struct tft_sess_file *s, const struct cache_ent *keep);
void tft_sess_cache_clear(struct tft_sess_file *s);
/* The file's tft_session_set_cache_bytes (its ops' set_cache_bytes). */
void tft_sess_set_cache_bytes(void *impl, size_t bytes);

#endif /* TFT_STORE_SESSION_INT_H */
