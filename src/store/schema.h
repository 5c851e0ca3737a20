/* SPDX-License-Identifier: MIT */
/*
 * Session file schema (version 1): the SQL that creates a session and the
 * limits the writer and reader share. docs/file-format.md is the reference;
 * change both together and bump TFT_SCHEMA_VERSION on any incompatible change.
 */
#ifndef TFT_STORE_SCHEMA_H
#define TFT_STORE_SCHEMA_H

#include "store/lod.h"

#define TFT_SCHEMA_VERSION 2
/* The oldest version the reader opens (version 1: no tracks.flags column, no
 * chunk_stats table: statistics are then computed from the events). */
#define TFT_SCHEMA_VERSION_MIN 1

/* Chunk streams per track: level 0 (raw events) + the LOD levels. */
#define TFT_STORE_LEVELS (1 + TFT_LOD_LEVELS)
/* Nesting depth / lanes are capped: deeper slices share the last depth. */
#define TFT_STORE_MAX_DEPTH 1024u
#define TFT_STORE_MAX_LANES 1024u
#define TFT_STORE_DEFAULT_CHUNK_EVENTS 4096u
/* LOD levels kept at close: only for tracks with at least this many raw events
 * (one chunk answers any query on a smaller track fast), and a level only when
 * it has at most 1/TFT_LOD_KEEP_DIV of the events of the finer stored level. */
#define TFT_LOD_MIN_RAW_EVENTS 4096u
#define TFT_LOD_KEEP_DIV 4u
#define TFT_STORE_MAX_CHUNK_EVENTS 65536u
/* Open (not yet written) chunk bytes of a writer before it flushes them all
 * (overridable at build time so that tests can exercise the flush). */
#ifndef TFT_STORE_OPEN_BYTES_MAX
#define TFT_STORE_OPEN_BYTES_MAX ((size_t)48 << 20)
#endif

#define TFT_SCHEMA_SQL                                                                      \
	"CREATE TABLE meta(key TEXT PRIMARY KEY NOT NULL, value) WITHOUT ROWID;\n"           \
	"CREATE TABLE strings(id INTEGER PRIMARY KEY, s TEXT NOT NULL);\n"                    \
	"CREATE TABLE processes(id INTEGER PRIMARY KEY, name INTEGER NOT NULL,"              \
	" host INTEGER NOT NULL, pid INTEGER NOT NULL, rank INTEGER NOT NULL,"               \
	" sort_index INTEGER NOT NULL, labels INTEGER NOT NULL);\n"                          \
	"CREATE TABLE tracks(id INTEGER PRIMARY KEY, process INTEGER NOT NULL,"              \
	" kind INTEGER NOT NULL, name INTEGER NOT NULL, tid INTEGER NOT NULL,"               \
	" sort_index INTEGER NOT NULL, slices INTEGER NOT NULL, instants INTEGER NOT NULL,"  \
	" counters INTEGER NOT NULL, min_ts INTEGER, max_ts INTEGER,"                        \
	" max_depth INTEGER NOT NULL, flags INTEGER NOT NULL DEFAULT 0);\n"                  \
	"CREATE TABLE flow_chunks(id INTEGER PRIMARY KEY, n INTEGER NOT NULL,"               \
	" t_min INTEGER NOT NULL, t_max INTEGER NOT NULL, data BLOB NOT NULL);\n"            \
	"CREATE TABLE steps(idx INTEGER NOT NULL, name INTEGER NOT NULL, process INTEGER,"   \
	" start_ns INTEGER NOT NULL, dur_ns INTEGER NOT NULL, traced INTEGER NOT NULL);\n"   \
	"CREATE TABLE chunks(id INTEGER PRIMARY KEY, track INTEGER NOT NULL,"                \
	" level INTEGER NOT NULL, t_min INTEGER NOT NULL, t_max INTEGER NOT NULL,"           \
	" n INTEGER NOT NULL, data BLOB NOT NULL);\n"                                        \
	"CREATE INDEX chunks_by_track ON chunks(track, level, t_min, t_max, n);\n"                     \
	"CREATE TABLE chunk_stats(chunk INTEGER PRIMARY KEY, track INTEGER NOT NULL,"       \
	" data BLOB NOT NULL);\n"                                                            \
	"CREATE INDEX chunk_stats_by_track ON chunk_stats(track, chunk);\n"                  \
	"CREATE TABLE track_stats(track INTEGER PRIMARY KEY, data BLOB NOT NULL);\n"          \
	"CREATE TABLE lod(track INTEGER NOT NULL, level INTEGER NOT NULL,"                   \
	" gap_ns INTEGER NOT NULL, n INTEGER NOT NULL, PRIMARY KEY(track, level))"           \
	" WITHOUT ROWID;\n"                                                                  \
	"CREATE VIEW track_kind_names(kind, name) AS VALUES (1,'thread'),(2,'device'),"      \
	"(3,'gpu_stream'),(4,'comm'),(5,'counter'),(6,'async'),(7,'object');\n"             \
	"CREATE VIEW process_view AS SELECT p.id, n.s AS name, h.s AS host, p.pid, p.rank," \
	" p.sort_index, l.s AS labels FROM processes p LEFT JOIN strings n ON n.id = p.name" \
	" LEFT JOIN strings h ON h.id = p.host LEFT JOIN strings l ON l.id = p.labels;\n"   \
	"CREATE VIEW track_view AS SELECT t.id, t.process, pn.s AS process_name, p.pid,"    \
	" k.name AS kind, n.s AS name, t.tid, t.sort_index, t.slices, t.instants,"           \
	" t.counters, t.min_ts, t.max_ts, t.max_depth, t.flags FROM tracks t"                         \
	" LEFT JOIN processes p ON p.id = t.process LEFT JOIN strings pn ON pn.id = p.name" \
	" LEFT JOIN track_kind_names k ON k.kind = t.kind"                                   \
	" LEFT JOIN strings n ON n.id = t.name;\n"                                           \
	"CREATE VIEW step_view AS SELECT s.idx, n.s AS name, s.process, s.start_ns,"        \
	" s.dur_ns, s.traced FROM steps s LEFT JOIN strings n ON n.id = s.name;\n"          \
	"CREATE VIEW chunk_view AS SELECT c.id, c.track, n.s AS track_name, c.level,"       \
	" c.t_min, c.t_max, c.n, length(c.data) AS bytes FROM chunks c"                      \
	" LEFT JOIN tracks t ON t.id = c.track LEFT JOIN strings n ON n.id = t.name;\n"

#endif /* TFT_STORE_SCHEMA_H */
