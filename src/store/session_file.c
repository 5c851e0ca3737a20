/* SPDX-License-Identifier: MIT */
/*
 * The session file (SQLite + zstd chunks) as a session (the ops of
 * store/session.c; tft_session_open): loads the tables and the chunk
 * directory at open (one read transaction, so a live writer's commit is seen
 * whole), then answers window queries by decoding only the overlapping chunks
 * (kept in an LRU cache sized in bytes). Strings are loaded on demand, in
 * blocks of consecutive ids.
 */
#include <errno.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zstd.h>

#include "core/grow.h"
#include "core/strtab.h"
#include "store/chunk.h"
#include "store/graph.h"
#include "store/schema.h"
#include "store/session.h"
#include "store/session_int.h"

static const struct tft_session_ops file_ops;
static const char *file_meta(void *impl, const char *key);
static void file_close(void *impl);

/* ---- errors ------------------------------------------------------------------------ */

static int db_err(struct tft_sess_file *s, struct tft_error *err, const char *what)
{
	int code = sqlite3_errcode(s->db) & 0xff;
	int st = code == SQLITE_CORRUPT || code == SQLITE_NOTADB || code == SQLITE_FORMAT ||
				 code == SQLITE_SCHEMA || code == SQLITE_MISMATCH || code == SQLITE_RANGE
			 ? TFT_EFORMAT
		 : code == SQLITE_NOMEM ? TFT_ENOMEM
					: TFT_EIO;

	if (code == SQLITE_NOTADB)
		/* (a trace file given where a session is wanted: say what to do) */
		tft_error_set(err, st, -1,
			      "not a tftracer session (a trace? import it first: tftracer import FILE -o "
			      "run.tft; or view it: tftracer FILE)");
	else
		tft_error_set(err, st, -1, "%s: %s", what, sqlite3_errmsg(s->db));
	tft_error_set_file(err, s->path);
	return st;
}

static int fmt_err(struct tft_sess_file *s, struct tft_error *err, const char *what,
		   const char *detail)
{
	tft_error_set(err, TFT_EFORMAT, -1, "%s%s", what, detail);
	tft_error_set_file(err, s->path);
	return TFT_EFORMAT;
}

static int nomem(struct tft_sess_file *s, struct tft_error *err)
{
	tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
	tft_error_set_file(err, s->path);
	return TFT_ENOMEM;
}

/* ---- loading ------------------------------------------------------------------------ */

static int prepare(struct tft_sess_file *s, const char *sql, sqlite3_stmt **st, struct tft_error *err)
{
	if (sqlite3_prepare_v2(s->db, sql, -1, st, NULL) != SQLITE_OK)
		return db_err(s, err, "query");
	return 0;
}

/* The tables we read must be plain tables (a crafted file could make them views). */
static int check_tables(struct tft_sess_file *s, struct tft_error *err)
{
	static const char *const names[] = { "meta",        "strings", "processes", "tracks",
					     "flow_chunks", "steps",   "chunks",    "lod" };
	sqlite3_stmt *st;
	int rc;

	if ((rc = prepare(s, "SELECT type FROM sqlite_master WHERE name = ?", &st, err)))
		return rc;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const unsigned char *type;
		sqlite3_bind_text(st, 1, names[i], -1, SQLITE_STATIC);
		rc = sqlite3_step(st);
		if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
			rc = db_err(s, err, "reading the schema");
			sqlite3_finalize(st);
			return rc;
		}
		type = rc == SQLITE_ROW ? sqlite3_column_text(st, 0) : NULL;
		if (!type || strcmp((const char *)type, "table") != 0) {
			sqlite3_finalize(st);
			return fmt_err(s, err, "not a tftracer session: missing table ", names[i]);
		}
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	return 0;
}

static void free_meta(struct tft_sess_file *s)
{
	for (uint32_t i = 0; i < s->nmeta; i++) {
		free(s->meta[i].key);
		free(s->meta[i].value);
	}
	free(s->meta);
	s->meta = NULL;
	s->nmeta = 0;
}

static int load_meta(struct tft_sess_file *s, struct tft_error *err)
{
	sqlite3_stmt *st;
	uint32_t cap = 0;
	int rc;

	free_meta(s);
	if ((rc = prepare(s, "SELECT key, value FROM meta", &st, err)))
		return rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *k = (const char *)sqlite3_column_text(st, 0);
		const char *v = (const char *)sqlite3_column_text(st, 1);
		if (!k)
			continue;
		if (tft_grow((void **)&s->meta, &cap, (uint64_t)s->nmeta + 1, sizeof(*s->meta)))
			goto oom;
		s->meta[s->nmeta].key = strdup(k);
		s->meta[s->nmeta].value = strdup(v ? v : "");
		if (!s->meta[s->nmeta].key || !s->meta[s->nmeta].value) {
			free(s->meta[s->nmeta].key);
			free(s->meta[s->nmeta].value);
			goto oom;
		}
		s->nmeta++;
	}
	if (rc != SQLITE_DONE) {
		rc = db_err(s, err, "reading meta");
		sqlite3_finalize(st);
		return rc;
	}
	sqlite3_finalize(st);
	return 0;
oom:
	sqlite3_finalize(st);
	return nomem(s, err);
}

static int check_version(struct tft_sess_file *s, struct tft_error *err)
{
	const char *v = file_meta(s, "schema_version");
	char *end;
	long long ver;

	if (!v)
		return fmt_err(s, err, "not a tftracer session: ", "no schema_version");
	errno = 0;
	ver = strtoll(v, &end, 10);
	if (errno || end == v || *end || ver < 1)
		return fmt_err(s, err, "bad schema_version ", v);
	if (ver > TFT_SCHEMA_VERSION) {
		tft_error_set(err, TFT_EVERSION, -1,
			      "session schema version %lld is newer than this reader (%d)", ver,
			      TFT_SCHEMA_VERSION);
		tft_error_set_file(err, s->path);
		return TFT_EVERSION;
	}
	s->version = (int)ver;
	return 0;
}

static const char *str_copy(struct tft_sess_file *s, const char *p, size_t len)
{
	struct str_block *b = s->blocks;
	char *out;

	if (!b || b->cap - b->used < len + 1) {
		size_t cap = len + 1 > STR_BLOCK ? len + 1 : STR_BLOCK;
		b = malloc(sizeof(*b) + cap);
		if (!b)
			return NULL;
		b->next = s->blocks;
		b->used = 0;
		b->cap = cap;
		s->blocks = b;
	}
	out = b->data + b->used;
	if (len)
		memcpy(out, p, len);
	out[len] = '\0';
	b->used += len + 1;
	return out;
}

/*
 * Strings are loaded lazily: open only learns how many there are (max id + 1;
 * ids are dense, so the count is bounded by the database size) and that id 0
 * exists. Strings are append-only, so a refresh only raises the count.
 */
static int load_strings(struct tft_sess_file *s, struct tft_error *err)
{
	sqlite3_stmt *st;
	int64_t maxid, db_bytes;
	int has0, rc;

	if ((rc = prepare(s,
			  "SELECT (SELECT max(id) FROM strings), EXISTS(SELECT 1 FROM strings WHERE"
			  " id = 0), (SELECT page_count FROM pragma_page_count()) *"
			  " (SELECT page_size FROM pragma_page_size())",
			  &st, err)))
		return rc;
	if (sqlite3_step(st) != SQLITE_ROW) {
		rc = db_err(s, err, "reading strings");
		sqlite3_finalize(st);
		return rc;
	}
	maxid = sqlite3_column_int64(st, 0);
	has0 = sqlite3_column_int(st, 1);
	db_bytes = sqlite3_column_int64(st, 2);
	sqlite3_finalize(st);
	if (!has0)
		return fmt_err(s, err, "strings table: no id 0", "");
	/* A row takes at least 4 bytes of the file: more ids than that cannot be dense. */
	if (maxid < 0 || maxid >= (int64_t)UINT32_MAX - 1 || maxid > db_bytes / 4)
		return fmt_err(s, err, "strings table: ids are not dense", "");
	uint32_t n = (uint32_t)maxid + 1, nb = (n + STR_IDS - 1) >> STR_IDS_LOG2;
	if (tft_grow_ex((void **)&s->sblk, &s->nsblk, nb, sizeof(*s->sblk), nb, 1))
		return nomem(s, err);
	if (n > s->nstr)
		s->nstr = n;
	return 0;
}

/* Load the strings of block bi (ids bi * STR_IDS ...) not loaded yet. */
static void load_str_block(struct tft_sess_file *s, uint32_t bi)
{
	uint32_t lo = bi << STR_IDS_LOG2, hi = lo + STR_IDS;
	struct str_ent *b = s->sblk[bi];
	int rc;

	if (hi > s->nstr || hi < lo)
		hi = s->nstr;
	if (!b) {
		b = calloc(STR_IDS, sizeof(*b));
		if (!b)
			return;
		s->sblk[bi] = b;
	}
	if (!s->get_strs && sqlite3_prepare_v3(s->db, "SELECT id, s FROM strings WHERE id >= ? AND id < ?",
					       -1, SQLITE_PREPARE_PERSISTENT, &s->get_strs,
					       NULL) != SQLITE_OK)
		return;
	sqlite3_bind_int64(s->get_strs, 1, lo);
	sqlite3_bind_int64(s->get_strs, 2, hi);
	while ((rc = sqlite3_step(s->get_strs)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(s->get_strs, 0);
		const char *p = (const char *)sqlite3_column_text(s->get_strs, 1);
		size_t len = p ? (size_t)sqlite3_column_bytes(s->get_strs, 1) : 0;
		struct str_ent *e;

		if (id < lo || id >= hi)
			continue;
		e = &b[id - lo];
		if (e->p || len > UINT32_MAX)
			continue;
		e->p = str_copy(s, p ? p : "", len);
		if (!e->p) {
			rc = SQLITE_NOMEM;
			break;
		}
		e->len = (uint32_t)len;
	}
	sqlite3_reset(s->get_strs);
	if (rc != SQLITE_DONE)
		return; /* try again on the next lookup */
	/* Ids below the count without a row: a damaged table. They read as "". */
	for (uint32_t id = lo; id < hi; id++)
		if (!b[id - lo].p) {
			b[id - lo].p = "";
			b[id - lo].len = 0;
		}
}

static int str_id(const struct tft_sess_file *s, sqlite3_stmt *st, int col, uint32_t *out)
{
	int64_t v = sqlite3_column_int64(st, col);

	if (v < 0 || v >= (int64_t)s->nstr)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

static int count_rows(struct tft_sess_file *s, const char *sql, uint32_t *out, struct tft_error *err)
{
	sqlite3_stmt *st;
	int rc;

	if ((rc = prepare(s, sql, &st, err)))
		return rc;
	if (sqlite3_step(st) != SQLITE_ROW) {
		rc = db_err(s, err, "counting rows");
		sqlite3_finalize(st);
		return rc;
	}
	int64_t n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (n < 0 || n >= (int64_t)UINT32_MAX)
		return fmt_err(s, err, "too many rows", "");
	*out = (uint32_t)n;
	return 0;
}

static int load_processes(struct tft_sess_file *s, struct tft_error *err)
{
	sqlite3_stmt *st;
	uint32_t n, i = 0;
	int rc;

	if ((rc = count_rows(s, "SELECT count(*) FROM processes", &n, err)))
		return rc;
	free(s->procs);
	s->procs = calloc(n ? n : 1, sizeof(*s->procs));
	s->nprocs = 0;
	if (!s->procs)
		return nomem(s, err);
	if ((rc = prepare(s,
			  "SELECT id, name, host, pid, rank, sort_index, labels FROM processes"
			  " ORDER BY id",
			  &st, err)))
		return rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct tft_process *p = &s->procs[i];
		if (i >= n || sqlite3_column_int64(st, 0) != i || str_id(s, st, 1, &p->name) ||
		    str_id(s, st, 2, &p->host) || str_id(s, st, 6, &p->labels)) {
			sqlite3_finalize(st);
			return fmt_err(s, err, "processes table: bad row", "");
		}
		p->id = i;
		p->pid = sqlite3_column_int64(st, 3);
		p->rank = (int32_t)sqlite3_column_int64(st, 4);
		p->sort_index = (int32_t)sqlite3_column_int64(st, 5);
		i++;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_err(s, err, "reading processes");
	s->nprocs = i;
	return 0;
}

static int load_tracks(struct tft_sess_file *s, struct tft_error *err)
{
	sqlite3_stmt *st;
	uint32_t n, i = 0;
	int rc;

	if ((rc = count_rows(s, "SELECT count(*) FROM tracks", &n, err)))
		return rc;
	free(s->tracks);
	s->tracks = calloc(n ? n : 1, sizeof(*s->tracks));
	s->ntracks = 0;
	if (!s->tracks)
		return nomem(s, err);
	if ((rc = prepare(s,
			  s->version >= 2
				  ? "SELECT id, process, kind, name, tid, sort_index, slices, instants,"
				    " counters, min_ts, max_ts, max_depth, flags FROM tracks ORDER BY id"
				  : "SELECT id, process, kind, name, tid, sort_index, slices, instants,"
				    " counters, min_ts, max_ts, max_depth, 0 FROM tracks ORDER BY id",
			  &st, err)))
		return rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct tft_track *t = &s->tracks[i];
		int64_t proc = sqlite3_column_int64(st, 1), kind = sqlite3_column_int64(st, 2);
		int64_t md = sqlite3_column_int64(st, 11), fl = sqlite3_column_int64(st, 12);

		if (i >= n || sqlite3_column_int64(st, 0) != i || proc < 0 ||
		    proc >= (int64_t)s->nprocs || kind < 1 || kind > TFT_TRACK_KIND_MAX ||
		    fl < 0 || fl > (int64_t)TFT_TRACKF_ALL ||
		    str_id(s, st, 3, &t->name) || md < 0 || md > UINT32_MAX) {
			sqlite3_finalize(st);
			return fmt_err(s, err, "tracks table: bad row", "");
		}
		t->id = i;
		t->process = (uint32_t)proc;
		t->kind = (uint32_t)kind;
		t->tid = sqlite3_column_int64(st, 4);
		t->sort_index = (int32_t)sqlite3_column_int64(st, 5);
		t->slices = (uint64_t)sqlite3_column_int64(st, 6);
		t->instants = (uint64_t)sqlite3_column_int64(st, 7);
		t->counters = (uint64_t)sqlite3_column_int64(st, 8);
		if (sqlite3_column_type(st, 9) == SQLITE_NULL || sqlite3_column_type(st, 10) == SQLITE_NULL) {
			t->min_ts_ns = INT64_MAX;
			t->max_ts_ns = INT64_MIN;
		} else {
			t->min_ts_ns = sqlite3_column_int64(st, 9);
			t->max_ts_ns = sqlite3_column_int64(st, 10);
		}
		t->max_depth = (uint32_t)md;
		t->flags = (uint32_t)fl;
		i++;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_err(s, err, "reading tracks");
	s->ntracks = i;
	return 0;
}

static int load_steps(struct tft_sess_file *s, struct tft_error *err)
{
	sqlite3_stmt *st;
	uint32_t n, i = 0;
	int rc;

	if ((rc = count_rows(s, "SELECT count(*) FROM steps", &n, err)))
		return rc;
	free(s->steps);
	s->steps = calloc(n ? n : 1, sizeof(*s->steps));
	s->nsteps = 0;
	if (!s->steps)
		return nomem(s, err);
	if ((rc = prepare(s,
			  "SELECT idx, name, process, start_ns, dur_ns, traced FROM steps"
			  " ORDER BY rowid",
			  &st, err)))
		return rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct tft_step *p = &s->steps[i];
		int64_t proc = sqlite3_column_int64(st, 2);
		int null_proc = sqlite3_column_type(st, 2) == SQLITE_NULL;

		if (i >= n || str_id(s, st, 1, &p->name) ||
		    (!null_proc && (proc < 0 || proc >= (int64_t)s->nprocs))) {
			sqlite3_finalize(st);
			return fmt_err(s, err, "steps table: bad row", "");
		}
		p->index = sqlite3_column_int64(st, 0);
		p->process = null_proc ? TFT_NONE : (uint32_t)proc;
		p->start_ns = sqlite3_column_int64(st, 3);
		p->dur_ns = sqlite3_column_int64(st, 4);
		p->traced = sqlite3_column_int64(st, 5) != 0;
		i++;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_err(s, err, "reading steps");
	s->nsteps = i;
	return 0;
}

static void free_dirs(struct tft_sess_file *s, uint32_t ntracks)
{
	if (!s->dirs)
		return;
	for (uint32_t t = 0; t < ntracks; t++)
		for (int k = 0; k < TFT_STORE_LEVELS; k++)
			free(s->dirs[t][k].e);
	free(s->dirs);
	s->dirs = NULL;
}

static int load_dirs(struct tft_sess_file *s, struct tft_error *err)
{
	sqlite3_stmt *st;
	int rc;

	s->dirs = calloc(s->ntracks ? s->ntracks : 1, sizeof(*s->dirs));
	if (!s->dirs)
		return nomem(s, err);
	/* Covered by the chunks_by_track index: the blobs are not read. */
	if ((rc = prepare(s,
			  "SELECT track, level, t_min, t_max, n, id FROM chunks"
			  " ORDER BY track, level, t_min, id",
			  &st, err)))
		return rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t track = sqlite3_column_int64(st, 0), level = sqlite3_column_int64(st, 1);
		int64_t n = sqlite3_column_int64(st, 4);
		struct dir_ent *e;
		struct level_dir *ld;

		if (track < 0 || track >= (int64_t)s->ntracks || level < 0 ||
		    level >= TFT_STORE_LEVELS || n < 0 || n > TFT_CHUNK_MAX_EVENTS) {
			sqlite3_finalize(st);
			return fmt_err(s, err, "chunks table: bad directory row", "");
		}
		ld = &s->dirs[track][level];
		if (tft_grow((void **)&ld->e, &ld->cap, (uint64_t)ld->n + 1, sizeof(*ld->e))) {
			sqlite3_finalize(st);
			return nomem(s, err);
		}
		e = &ld->e[ld->n];
		e->t_min = sqlite3_column_int64(st, 2);
		e->t_max = sqlite3_column_int64(st, 3);
		e->n = (uint32_t)n;
		e->rowid = sqlite3_column_int64(st, 5);
		e->track = (uint32_t)track;
		e->level = (uint32_t)level;
		e->runmax = ld->n && ld->e[ld->n - 1].runmax > e->t_max ? ld->e[ld->n - 1].runmax
									: e->t_max;
		ld->n++;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_err(s, err, "reading the chunk directory");
	if ((rc = prepare(s, "SELECT track, level, gap_ns FROM lod", &st, err)))
		return rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t track = sqlite3_column_int64(st, 0), level = sqlite3_column_int64(st, 1);
		int64_t gap = sqlite3_column_int64(st, 2);
		if (track < 0 || track >= (int64_t)s->ntracks || level < 0 ||
		    level >= TFT_STORE_LEVELS || gap < 0 || (level > 0 && gap == 0))
			continue; /* unknown level: ignored, the reader falls back to finer ones */
		s->dirs[track][level].stored = 1;
		s->dirs[track][level].gap_ns = gap;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_err(s, err, "reading the lod table");
	return 0;
}

static int load_flow_count(struct tft_sess_file *s, struct tft_error *err)
{
	const char *v = file_meta(s, "flow_count");
	uint32_t n;
	int rc;

	if (v) {
		long long x = strtoll(v, NULL, 10);
		s->nflows = x > 0 ? (uint64_t)x : 0;
		return 0;
	}
	if ((rc = count_rows(s, "SELECT coalesce(sum(n), 0) FROM flow_chunks", &n, err)))
		return rc;
	s->nflows = n;
	return 0;
}

/* Everything but strings is reloaded whole; one read transaction = one snapshot. */
/* Whether the session has a chunk_stats table (schema version 2). */
static int load_cstats_flag(struct tft_sess_file *s, struct tft_error *err)
{
	sqlite3_stmt *st;
	int rc;

	if ((rc = prepare(s, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'chunk_stats'",
			  &st, err)))
		return rc;
	s->has_cstats = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return 0;
}

static int load_all(struct tft_sess_file *s, struct tft_error *err)
{
	uint32_t old_ntracks = s->ntracks;
	int rc;

	if (sqlite3_exec(s->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
		return db_err(s, err, "begin");
	free_dirs(s, old_ntracks);
	s->ntracks = 0;
	if ((rc = load_meta(s, err)) || (rc = check_version(s, err)) ||
	    (rc = load_strings(s, err)) || (rc = load_processes(s, err)) ||
	    (rc = load_tracks(s, err)) || (rc = load_steps(s, err)) || (rc = load_dirs(s, err)) ||
	    (rc = load_flow_count(s, err)) || (rc = load_cstats_flag(s, err))) {
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
		/*
		 * Half loaded (tracks without their chunk directories, say): show no
		 * tracks rather than a session whose next scan would read what is
		 * not there. The caller may refresh again or close it.
		 */
		free_dirs(s, s->ntracks);
		s->ntracks = 0;
		tft_sess_cache_clear(s);
		return rc;
	}
	sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL);
	tft_sess_cache_clear(s);
	return 0;
}

/* ---- open / close ------------------------------------------------------------------ */

bool tft_session_is_file(const struct tft_session *s)
{
	return tft_session_ops_impl(s, &file_ops) != NULL;
}

struct tft_session *tft_session_open(const char *path, struct tft_error *err)
{
	struct tft_sess_file *s;
	struct stat sb;

	if (!path) {
		tft_error_set(err, TFT_EINVAL, -1, "no session path");
		return NULL;
	}
	if (stat(path, &sb) != 0) {
		int e = errno;
		tft_error_set(err, e == ENOENT ? TFT_ENOTFOUND : TFT_EIO, -1, "%s", strerror(e));
		tft_error_set_file(err, path);
		return NULL;
	}
	if (!S_ISREG(sb.st_mode)) {
		tft_error_set(err, TFT_EINVAL, -1, "not a regular file");
		tft_error_set_file(err, path);
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
		return NULL;
	}
	snprintf(s->path, sizeof(s->path), "%s", path);
	s->cache_budget = CACHE_BYTES_DEFAULT;
	if (sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		if (s->db)
			db_err(s, err, "cannot open session");
		else
			nomem(s, err);
		goto fail;
	}
	/* A session file is untrusted input. */
	sqlite3_db_config(s->db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
	sqlite3_db_config(s->db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
	sqlite3_exec(s->db, "PRAGMA cell_size_check=ON", NULL, NULL, NULL);
	if (check_tables(s, err) || load_all(s, err))
		goto fail;
	if (prepare(s, "SELECT data, track, level, t_min, t_max, n FROM chunks WHERE id = ?", &s->get_chunk, err))
		goto fail;
	return tft_session_open_ops(&file_ops, s, path, err);
fail:
	file_close(s);
	return NULL;
}

static void file_close(void *impl)
{
	struct tft_sess_file *s = impl;

	if (!s)
		return;
	sqlite3_finalize(s->get_chunk);
	sqlite3_finalize(s->get_strs);
	sqlite3_finalize(s->get_cstats);
	free(s->cstats_buf);
	if (s->db)
		sqlite3_close(s->db);
	free_meta(s);
	for (struct str_block *b = s->blocks, *n; b; b = n) {
		n = b->next;
		free(b);
	}
	for (uint32_t i = 0; i < s->nsblk; i++)
		free(s->sblk[i]);
	free(s->sblk);
	free(s->procs);
	free_dirs(s, s->ntracks);
	free(s->tracks);
	free(s->steps);
	for (struct cache_ent *c = s->lru_head, *nx; c; c = nx) {
		nx = c->next;
		tft_sess_ent_free(c);
	}
	free(s->htab);
	if (s->dctx)
		ZSTD_freeDCtx(s->dctx);
	tft_chunk_buf_free(&s->raw);
	free(s->lodbuf);
	free(s);
}

static int file_refresh(void *impl, struct tft_error *err)
{
	return load_all(impl, err);
}

/* ---- accessors ------------------------------------------------------------------ */

static void file_get_summary(void *impl, struct tft_session_summary *out)
{
	const struct tft_sess_file *s = impl;
	const char *v;

	memset(out, 0, sizeof(*out));
	out->format = (v = file_meta(impl, "format")) ? v : "";
	out->producer = (v = file_meta(impl, "producer")) ? v : "";
	out->processes = s->nprocs;
	out->tracks = s->ntracks;
	tft_session_summary_tracks(out, s->tracks, s->ntracks);
	out->flows = s->nflows;
	out->steps = s->nsteps;
#define META_U64(field, key)                                                  \
	if ((v = file_meta(impl, key))) {                                  \
		long long x_ = strtoll(v, NULL, 10);                           \
		out->field = x_ > 0 ? (uint64_t)x_ : 0;                        \
	}
	META_U64(dropped, "dropped")
	META_U64(unmatched_flows, "unmatched_flows")
	META_U64(unclosed_slices, "unclosed_slices")
#undef META_U64
}

static uint32_t file_process_count(void *impl)
{
	const struct tft_sess_file *s = impl;

	return s->nprocs;
}

static const struct tft_process *file_process(void *impl, uint32_t id)
{
	const struct tft_sess_file *s = impl;

	return id < s->nprocs ? &s->procs[id] : NULL;
}

static uint32_t file_track_count(void *impl)
{
	const struct tft_sess_file *s = impl;

	return s->ntracks;
}

static const struct tft_track *file_track(void *impl, uint32_t id)
{
	const struct tft_sess_file *s = impl;

	return id < s->ntracks ? &s->tracks[id] : NULL;
}

static const char *file_str(void *impl, uint32_t id, size_t *len)
{
	/* Strings are a cache filled here. */
	struct tft_sess_file *s = impl;
	const struct str_ent *e = NULL;

	if (id < s->nstr) {
		uint32_t bi = id >> STR_IDS_LOG2;
		if (!s->sblk[bi] || !s->sblk[bi][id & (STR_IDS - 1)].p)
			load_str_block(s, bi);
		if (s->sblk[bi] && s->sblk[bi][id & (STR_IDS - 1)].p)
			e = &s->sblk[bi][id & (STR_IDS - 1)];
	}
	if (!e) {
		if (len)
			*len = 0;
		return "";
	}
	if (len)
		*len = e->len;
	return e->p;
}

static uint32_t file_string_count(void *impl)
{
	const struct tft_sess_file *s = impl;

	return s->nstr;
}

static const char *file_meta(void *impl, const char *key)
{
	const struct tft_sess_file *s = impl;

	for (uint32_t i = 0; i < s->nmeta; i++)
		if (strcmp(s->meta[i].key, key) == 0)
			return s->meta[i].value;
	return NULL;
}

static uint32_t file_step_count(void *impl)
{
	const struct tft_sess_file *s = impl;

	return s->nsteps;
}

static const struct tft_step *file_step(void *impl, uint32_t i)
{
	const struct tft_sess_file *s = impl;

	return i < s->nsteps ? &s->steps[i] : NULL;
}

/* ---- chunk access ---------------------------------------------------------------- */

static int get_chunk(struct tft_sess_file *s, const struct dir_ent *de, int streaming,
		     struct cache_ent **out, struct tft_error *err)
{
	struct cache_ent *c = tft_sess_cache_find(s, de->rowid);
	int rc;

	if (c) {
		if (!streaming && c != s->lru_head) {
			tft_sess_lru_unlink(s, c);
			tft_sess_lru_push_front(s, c);
		}
		*out = c;
		return 0;
	}
	/* Make room first (estimated from the event count): the least recently
	 * used entry lends its buffers, so a full cache decodes into warm memory
	 * instead of freeing one entry and allocating another for every miss. */
	size_t est = sizeof(*c) + (size_t)de->n * sizeof(struct tft_event);
	if (streaming && s->stream_ent && !s->stream_ent->pins) {
		c = s->stream_ent;
		tft_sess_cache_detach(s, c);
	}
	while (s->cache_bytes + est > s->cache_budget) {
		struct cache_ent *v = tft_sess_cache_take_lru(s, NULL);
		if (!v)
			break;
		if (c)
			tft_sess_ent_free(c);
		c = v;
	}
	if (!c) {
		c = calloc(1, sizeof(*c));
		if (!c)
			return nomem(s, err);
		tft_chunk_dec_init(&c->dec);
	}
	c->rowid = -1;
	sqlite3_bind_int64(s->get_chunk, 1, de->rowid);
	rc = sqlite3_step(s->get_chunk);
	if (rc != SQLITE_ROW) {
		rc = rc == SQLITE_DONE ? fmt_err(s, err, "a chunk listed in the directory is missing", "")
				       : db_err(s, err, "reading a chunk");
		sqlite3_reset(s->get_chunk);
		tft_sess_ent_free(c);
		return rc;
	}
	/*
	 * The row must be the chunk the directory lists: a live writer deletes
	 * the chunks of levels it drops, and SQLite may give a deleted rowid to
	 * a new chunk of another track or level. Then the directory is stale:
	 * refresh and try again.
	 */
	if (sqlite3_column_int64(s->get_chunk, 1) != de->track ||
	    sqlite3_column_int64(s->get_chunk, 2) != de->level ||
	    sqlite3_column_int64(s->get_chunk, 3) != de->t_min ||
	    sqlite3_column_int64(s->get_chunk, 4) != de->t_max ||
	    sqlite3_column_int64(s->get_chunk, 5) != de->n) {
		sqlite3_reset(s->get_chunk);
		tft_sess_ent_free(c);
		tft_error_set(err, TFT_EAGAIN, -1,
			      "chunk %lld is not the one the directory lists (the session changed): refresh",
			      (long long)de->rowid);
		tft_error_set_file(err, s->path);
		return TFT_EAGAIN;
	}
	rc = tft_chunk_decode_ext(&c->dec, &s->dctx, &s->raw, sqlite3_column_blob(s->get_chunk, 0),
				  (size_t)sqlite3_column_bytes(s->get_chunk, 0), de->rowid, err);
	sqlite3_reset(s->get_chunk);
	if (!rc && (c->dec.n != de->n || (c->dec.n && c->dec.max_str >= s->nstr))) {
		tft_error_set(err, TFT_EFORMAT, -1, "chunk %lld: %s", (long long)de->rowid,
			      c->dec.n != de->n ? "event count differs from the directory"
						: "string id out of range");
		rc = TFT_EFORMAT;
	}
	if (rc) {
		tft_error_set_file(err, s->path);
		tft_sess_ent_free(c);
		return rc;
	}
	c->rowid = de->rowid;
	if (tft_sess_hash_insert(s, c)) {
		tft_sess_ent_free(c);
		return nomem(s, err);
	}
	c->bytes = sizeof(*c) + tft_chunk_dec_bytes(&c->dec) - sizeof(c->dec);
	s->cache_bytes += c->bytes;
	s->nent++;
	if (streaming) {
		tft_sess_lru_push_back(s, c);
		s->stream_ent = c;
	} else {
		tft_sess_lru_push_front(s, c);
	}
	tft_sess_cache_trim(s, c);
	*out = c;
	return 0;
}

/* First directory entry whose extent can reach t0 (runmax is non-decreasing). */
static uint32_t first_reaching(const struct level_dir *ld, int64_t t0)
{
	uint32_t lo = 0, hi = ld->n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (ld->e[mid].runmax < t0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int cmp_start(const void *a, const void *b)
{
	const struct tft_event *x = a, *y = b;

	if (x->ts_ns != y->ts_ns)
		return x->ts_ns < y->ts_ns ? -1 : 1;
	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	return 0;
}

static int scan_level(struct tft_sess_file *s, uint32_t track, int level, int64_t t0, int64_t t1,
		      tft_event_fn fn, void *ctx, struct tft_error *err)
{
	const struct level_dir *ld = &s->dirs[track][level];
	uint32_t first = first_reaching(ld, t0), end = first;
	size_t ngather = 0;
	int rc = 0, streaming;

	/* end: past the last chunk starting at or before t1 (sorted by t_min) */
	for (uint32_t hi = ld->n; end < hi;) {
		uint32_t mid = end + (hi - end) / 2;
		if (ld->e[mid].t_min <= t1)
			end = mid + 1;
		else
			hi = mid;
	}
	streaming = end - first > STREAM_CHUNKS;
	for (uint32_t i = first; i < end; i++) {
		const struct dir_ent *de = &ld->e[i];
		struct cache_ent *c = NULL;

		if (de->t_max < t0)
			continue;
		if ((rc = get_chunk(s, de, streaming, &c, err)))
			return rc;
		if (level == 0) {
			/* Raw events are stored in start order: stream them. */
			c->pins++;
			for (uint32_t j = 0; j < c->dec.n && !rc; j++) {
				struct tft_event *ev = &c->dec.ev[j];
				if (ev->ts_ns > t1)
					break;
				if (ev->ts_ns + ev->dur_ns < t0)
					continue;
				ev->track = track;
				rc = fn(ctx, ev);
			}
			c->pins--;
			if (rc)
				return rc;
			continue;
		}
		/* Summary blocks close out of start order across depths: gather, then sort. */
		for (uint32_t j = 0; j < c->dec.n; j++) {
			const struct tft_event *ev = &c->dec.ev[j];
			if (ev->ts_ns > t1 || ev->ts_ns + ev->dur_ns < t0)
				continue;
			if (tft_grow_size_ex((void **)&s->lodbuf, &s->cap_lodbuf, (size_t)ngather + 1,
					     sizeof(*s->lodbuf), 256, 0))
				return nomem(s, err);

			s->lodbuf[ngather] = *ev;
			s->lodbuf[ngather].track = track;
			s->lodbuf[ngather].nargs = 0;
			s->lodbuf[ngather].args = NULL;
			ngather++;
		}
	}
	if (level == 0 || !ngather)
		return 0;
	qsort(s->lodbuf, ngather, sizeof(*s->lodbuf), cmp_start);
	/* The callback may scan again (and reuse lodbuf): hand out a private copy. */
	struct tft_event *evs = malloc(ngather * sizeof(*evs));
	if (!evs)
		return nomem(s, err);
	memcpy(evs, s->lodbuf, ngather * sizeof(*evs));
	for (size_t j = 0; j < ngather && !rc; j++)
		rc = fn(ctx, &evs[j]);
	free(evs);
	return rc;
}

static int file_scan(void *impl, uint32_t track, int64_t t0_ns, int64_t t1_ns,
		     int64_t resolution_ns, tft_event_fn fn, void *ctx, struct tft_error *err)
{
	struct tft_sess_file *s = impl;
	int level = 0;

	if (track >= s->ntracks || !fn) {
		tft_error_set(err, TFT_EINVAL, -1, "unknown track %u", track);
		return TFT_EINVAL;
	}
	if (t1_ns < t0_ns)
		return 0;
	if (resolution_ns > 0) {
		for (int k = TFT_STORE_LEVELS - 1; k >= 1; k--) {
			const struct level_dir *ld = &s->dirs[track][k];
			if (ld->stored && ld->gap_ns <= resolution_ns) {
				level = k;
				break;
			}
		}
	}
	return scan_level(s, track, level, t0_ns, t1_ns, fn, ctx, err);
}

/* ---- raw chunks and their statistics ------------------------------------------------ */

static uint32_t file_raw_chunk_count(void *impl, uint32_t track)
{
	const struct tft_sess_file *s = impl;
	return track < s->ntracks ? s->dirs[track][0].n : 0;
}

static void file_raw_chunk(void *impl, uint32_t track, uint32_t i, int64_t *t_min,
			   int64_t *t_max, uint32_t *n)
{
	const struct tft_sess_file *s = impl;
	const struct dir_ent *de = &s->dirs[track][0].e[i];

	*t_min = de->t_min;
	*t_max = de->t_max;
	*n = de->n;
}

static int file_scan_raw_chunk(void *impl, uint32_t track, uint32_t i, tft_event_fn fn,
			       void *ctx, struct tft_error *err)
{
	struct tft_sess_file *s = impl;
	struct cache_ent *c = NULL;
	int rc;

	if (track >= s->ntracks || i >= s->dirs[track][0].n)
		return tft_error_set(err, TFT_EINVAL, -1, "no raw chunk %u of track %u", i, track);
	if ((rc = get_chunk(s, &s->dirs[track][0].e[i], 0, &c, err)))
		return rc;
	c->pins++;
	for (uint32_t j = 0; j < c->dec.n && !rc; j++) {
		c->dec.ev[j].track = track;
		rc = fn(ctx, &c->dec.ev[j]);
	}
	c->pins--;
	return rc;
}

static int file_has_chunk_stats(void *impl)
{
	const struct tft_sess_file *s = impl;
	return s->has_cstats;
}

/* A zstd frame z[0..zlen) into s->cstats_buf: its length, or a negative status. */
static int64_t unpack_stats(struct tft_sess_file *s, const void *z, size_t zlen, struct tft_error *err)
{
	unsigned long long want = z ? ZSTD_getFrameContentSize(z, zlen) : ZSTD_CONTENTSIZE_ERROR;
	size_t len;

	if (want == ZSTD_CONTENTSIZE_ERROR || want == ZSTD_CONTENTSIZE_UNKNOWN || want > ((size_t)64 << 20))
		return fmt_err(s, err, "statistics: a blob is not a zstd frame", "");
	if (want > s->cap_cstats_buf) {
		uint8_t *nb = realloc(s->cstats_buf, want ? want : 1);
		if (!nb)
			return nomem(s, err);
		s->cstats_buf = nb;
		s->cap_cstats_buf = want;
	}
	if (!s->dctx && !(s->dctx = ZSTD_createDCtx()))
		return nomem(s, err);
	len = ZSTD_decompressDCtx(s->dctx, s->cstats_buf, s->cap_cstats_buf, z, zlen);
	if (ZSTD_isError(len) || len != want)
		return fmt_err(s, err, "statistics: a blob does not decompress", "");
	return (int64_t)len;
}

static int file_track_stats(void *impl, uint32_t track, tft_chunk_stats_fn fn, void *ctx,
			    struct tft_error *err)
{
	struct tft_sess_file *s = impl;
	sqlite3_stmt *st;
	int64_t len;
	int rc;

	if (track >= s->ntracks)
		return tft_error_set(err, TFT_EINVAL, -1, "unknown track %u", track);
	if (!s->has_cstats)
		return 1;
	if ((rc = prepare(s, "SELECT data FROM track_stats WHERE track = ?", &st, err)))
		return rc;
	sqlite3_bind_int64(st, 1, track);
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		sqlite3_finalize(st);
		return rc == SQLITE_DONE ? 1 : db_err(s, err, "reading track statistics");
	}
	len = unpack_stats(s, sqlite3_column_blob(st, 0), (size_t)sqlite3_column_bytes(st, 0), err);
	rc = len < 0 ? (int)len : fn(ctx, 0, s->cstats_buf, (size_t)len);
	sqlite3_finalize(st);
	return rc;
}

static int file_chunk_stats_complete(void *impl, uint32_t track, struct tft_error *err)
{
	struct tft_sess_file *s = impl;
	const struct level_dir *ld;
	int64_t max = INT64_MIN, n = -1;
	sqlite3_stmt *st;
	int rc;

	if (track >= s->ntracks)
		return tft_error_set(err, TFT_EINVAL, -1, "unknown track %u", track);
	ld = &s->dirs[track][0];
	if (!s->has_cstats)
		return 0;
	if (!ld->n)
		return 1;
	for (uint32_t i = 0; i < ld->n; i++)
		if (ld->e[i].rowid > max)
			max = ld->e[i].rowid;
	/* rows for chunks a live writer added since the directory was read have larger ids */
	if ((rc = prepare(s, "SELECT count(*) FROM chunk_stats WHERE track = ? AND chunk <= ?", &st, err)))
		return rc;
	sqlite3_bind_int64(st, 1, track);
	sqlite3_bind_int64(st, 2, max);
	if (sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (n < 0)
		return db_err(s, err, "counting chunk statistics");
	return n == (int64_t)ld->n;
}

struct rowid_ix {
	int64_t rowid;
	uint32_t i;
};

static int cmp_rowid_ix(const void *a, const void *b)
{
	const struct rowid_ix *x = a, *y = b;

	return (x->rowid > y->rowid) - (x->rowid < y->rowid);
}

static int file_chunk_stats(void *impl, uint32_t track, tft_chunk_stats_fn fn, void *ctx,
			    struct tft_error *err)
{
	struct tft_sess_file *s = impl;
	const struct level_dir *ld;
	struct rowid_ix *ix = NULL;
	int rc = 0, cb = 0;

	if (track >= s->ntracks)
		return tft_error_set(err, TFT_EINVAL, -1, "unknown track %u", track);
	ld = &s->dirs[track][0];
	if (!s->has_cstats || !ld->n)
		return 0;
	if (!s->get_cstats &&
	    (rc = prepare(s, "SELECT chunk, data FROM chunk_stats WHERE track = ? ORDER BY chunk",
			  &s->get_cstats, err)))
		return rc;
	/* a row's chunk -> the chunk's place in the directory (start order) */
	ix = malloc((size_t)ld->n * sizeof(*ix));
	if (!ix)
		return nomem(s, err);
	for (uint32_t i = 0; i < ld->n; i++)
		ix[i] = (struct rowid_ix){ ld->e[i].rowid, i };
	qsort(ix, ld->n, sizeof(*ix), cmp_rowid_ix);
	sqlite3_bind_int64(s->get_cstats, 1, track);
	while (!cb && (rc = sqlite3_step(s->get_cstats)) == SQLITE_ROW) {
		struct rowid_ix key = { sqlite3_column_int64(s->get_cstats, 0), 0 };
		struct rowid_ix *hit = bsearch(&key, ix, ld->n, sizeof(*ix), cmp_rowid_ix);
		int64_t len;

		if (!hit)
			continue; /* a chunk written after the directory was read (live) */
		len = unpack_stats(s, sqlite3_column_blob(s->get_cstats, 1),
				   (size_t)sqlite3_column_bytes(s->get_cstats, 1), err);
		if (len < 0) {
			rc = (int)len;
			break;
		}
		cb = fn(ctx, hit->i, s->cstats_buf, (size_t)len);
	}
	sqlite3_reset(s->get_cstats);
	free(ix);
	if (cb)
		return cb;
	if (rc != SQLITE_DONE && rc != SQLITE_ROW && rc != 0)
		return rc < 0 ? rc : db_err(s, err, "reading chunk statistics");
	return rc < 0 ? rc : 0;
}

static int file_flows(void *impl, tft_flow_fn fn, void *ctx, struct tft_error *err)
{
	struct tft_sess_file *s = impl;
	struct tft_flow_dec d;
	sqlite3_stmt *st;
	int rc, cb = 0;

	if ((rc = prepare(s, "SELECT id, n, data FROM flow_chunks ORDER BY id", &st, err)))
		return rc;
	tft_flow_dec_init(&d);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0), n = sqlite3_column_int64(st, 1);

		rc = tft_flow_chunk_decode(&d, sqlite3_column_blob(st, 2),
					   (size_t)sqlite3_column_bytes(st, 2), id, err);
		if (!rc && (d.n != n || d.max_track > s->ntracks || d.max_str >= s->nstr)) {
			rc = tft_error_set(err, TFT_EFORMAT, -1, "flow chunk %lld: %s", (long long)id,
					   d.n != n ? "flow count differs from its row"
					   : d.max_track > s->ntracks ? "track id out of range"
								       : "string id out of range");
		}
		if (rc) {
			tft_error_set_file(err, s->path);
			break;
		}
		for (uint32_t i = 0; i < d.n && !cb; i++)
			cb = fn(ctx, &d.f[i]);
		if (cb)
			break;
	}
	if (!cb && rc == SQLITE_DONE)
		rc = 0;
	else if (!cb && rc > 0)
		rc = db_err(s, err, "reading flows");
	sqlite3_finalize(st);
	tft_flow_dec_fini(&d);
	return cb ? cb : rc;
}

static int file_graph_lookup(void *impl, const char *name, tft_graph_node_fn fn, void *ctx,
			     struct tft_error *err)
{
	return tft_graph_lookup(((struct tft_sess_file *)impl)->path, name, fn, ctx, err);
}

static const struct tft_session_ops file_ops = {
	.close = file_close,
	.refresh = file_refresh,
	.get_summary = file_get_summary,
	.process_count = file_process_count,
	.process = file_process,
	.track_count = file_track_count,
	.track = file_track,
	.str = file_str,
	.string_count = file_string_count,
	.meta = file_meta,
	.scan = file_scan,
	.flows = file_flows,
	.set_cache_bytes = tft_sess_set_cache_bytes,
	.raw_chunk_count = file_raw_chunk_count,
	.raw_chunk = file_raw_chunk,
	.scan_raw_chunk = file_scan_raw_chunk,
	.has_chunk_stats = file_has_chunk_stats,
	.track_stats = file_track_stats,
	.chunk_stats_complete = file_chunk_stats_complete,
	.chunk_stats = file_chunk_stats,
	.step_count = file_step_count,
	.step = file_step,
	.graph_lookup = file_graph_lookup,
};
