/* SPDX-License-Identifier: MIT */
/*
 * The session's graph_nodes table: written inside the writer's open
 * transaction through the graph tables the writer owns (its SQLite handle
 * stays in store/), read back with a read-only handle.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/strtab.h"
#include "store/graph.h"
#include "store/graph_tables.h"
#include "store/writer.h"

#define GRAPH_SQL                                                                        \
	"CREATE TABLE IF NOT EXISTS graph_nodes(id INTEGER PRIMARY KEY,"                 \
	" graph_id INTEGER NOT NULL, graph TEXT NOT NULL, kind TEXT NOT NULL,"           \
	" name TEXT NOT NULL, op TEXT, device TEXT, inputs TEXT, attrs TEXT,"            \
	" output_shapes TEXT, compute_cost INTEGER, temporary_memory INTEGER,"           \
	" persistent_memory INTEGER, cost TEXT, op_types TEXT, float_ops INTEGER,"       \
	" code TEXT);"                                                                   \
	"CREATE INDEX IF NOT EXISTS graph_nodes_name ON graph_nodes(name);"                \
	"CREATE TABLE IF NOT EXISTS graph_steps(graph_id INTEGER PRIMARY KEY,"            \
	" process INTEGER, step_start INTEGER NOT NULL);"

#define INSERT_SQL                                                                       \
	"INSERT INTO graph_nodes(graph_id, graph, kind, name, op, device, inputs, attrs,"  \
	" output_shapes, compute_cost, temporary_memory, persistent_memory, cost,"         \
	" op_types, float_ops, code) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"

/* The OpLogProto columns, added to a graph_nodes table of an older session. */
static const char *const oplog_cols[3][2] = {
	{ "op_types", "TEXT" }, { "float_ops", "INTEGER" }, { "code", "TEXT" },
};

/*
 * The session's graph tables, owned by the writer (tft_writer_graphs): its
 * SQLite handle, the insert statement, the next graph id (a session pickle
 * opens a store per traced step, and neither the schema nor the
 * MAX(graph_id) scan need doing again) and the graph names given so far, so
 * that each graph's name is its own (the same file imported twice, two
 * runs' partition graphs).
 */
struct tft_graph_tables {
	sqlite3 *db;              /* borrowed: the writer's handle */
	sqlite3_stmt *ins;        /* owned */
	int64_t next_graph;
	struct tft_strtab *names; /* owned: the names given (id 0, "", only once empty_used) */
	int empty_used;
};

struct tft_graph_store {
	struct tft_writer *w;         /* borrowed */
	struct tft_graph_tables *tab; /* borrowed: the writer's */
	uint64_t count;
};

void tft_graph_tables_free(struct tft_graph_tables *t)
{
	if (!t)
		return;
	sqlite3_finalize(t->ins);
	tft_strtab_destroy(t->names);
	free(t);
}

static int name_used(const struct tft_graph_tables *t, const char *name, size_t len)
{
	return len ? tft_strtab_find(t->names, name, len) != UINT32_MAX : t->empty_used;
}

/* Add name[0..len) unless there: its stored copy, or NULL on out-of-memory. */
static const char *name_add(struct tft_graph_tables *t, const char *name, size_t len)
{
	uint32_t id = tft_strtab_intern(t->names, name, len);

	if (id == UINT32_MAX)
		return NULL;
	if (!len)
		t->empty_used = 1;
	return tft_strtab_get(t->names, id, NULL);
}

static int db_err(sqlite3 *db, struct tft_error *err, const char *what)
{
	return tft_error_set(err, TFT_EIO, -1, "graph_nodes: %s: %s", what,
			     db ? sqlite3_errmsg(db) : "no database");
}

/* Which of the OpLogProto columns graph_nodes has: a bit each (oplog_cols order), or -1. */
static int oplog_columns(sqlite3 *db)
{
	sqlite3_stmt *st = NULL;
	int have = 0, rc;

	if (sqlite3_prepare_v2(db, "PRAGMA table_info(graph_nodes)", -1, &st, NULL) != SQLITE_OK)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *c = (const char *)sqlite3_column_text(st, 1);

		for (int i = 0; c && i < 3; i++)
			if (!strcmp(c, oplog_cols[i][0]))
				have |= 1 << i;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? have : -1;
}

/* The table of a session written before the OpLogProto columns gets them. */
static int add_oplog_columns(sqlite3 *db)
{
	int have = oplog_columns(db);
	char sql[128];

	if (have < 0)
		return -1;
	for (int i = 0; i < 3; i++) {
		if (have & (1 << i))
			continue;
		snprintf(sql, sizeof(sql), "ALTER TABLE graph_nodes ADD COLUMN %s %s", oplog_cols[i][0],
			 oplog_cols[i][1]);
		if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
			return -1;
	}
	return 0;
}

/* The session's state, read from the table (empty when just created). 0 or -1 (out of memory). */
static int tables_load(struct tft_graph_tables *t)
{
	sqlite3 *db = t->db;
	sqlite3_stmt *st = NULL;
	int ok = 1;

	if (!(t->names = tft_strtab_create()))
		return -1;
	/* Graph ids and names continue after those of earlier imports into this session. */
	if (sqlite3_prepare_v2(db, "SELECT COALESCE(MAX(graph_id) + 1, 0) FROM graph_nodes", -1,
			       &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		t->next_graph = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	st = NULL;
	if (sqlite3_prepare_v2(db, "SELECT DISTINCT graph FROM graph_nodes", -1, &st, NULL) ==
	    SQLITE_OK) {
		while (ok && sqlite3_step(st) == SQLITE_ROW) {
			const char *s = (const char *)sqlite3_column_text(st, 0);

			if (s && !name_add(t, s, (size_t)sqlite3_column_bytes(st, 0)))
				ok = 0;
		}
	}
	sqlite3_finalize(st);
	return ok ? 0 : -1;
}

struct tft_graph_tables *tft_graph_tables_open(struct sqlite3 *db, struct tft_error *err)
{
	struct tft_graph_tables *t = calloc(1, sizeof(*t));

	if (!t) {
		tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
		return NULL;
	}
	t->db = db;
	if (sqlite3_exec(db, GRAPH_SQL, NULL, NULL, NULL) != SQLITE_OK || add_oplog_columns(db) ||
	    sqlite3_prepare_v2(db, INSERT_SQL, -1, &t->ins, NULL) != SQLITE_OK) {
		db_err(db, err, "create");
		tft_graph_tables_free(t);
		return NULL;
	}
	if (tables_load(t)) {
		tft_graph_tables_free(t);
		tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
		return NULL;
	}
	return t;
}

struct tft_graph_store *tft_graph_store_open(struct tft_writer *w, struct tft_error *err)
{
	struct tft_graph_tables *t;
	struct tft_graph_store *gs;

	if (!w) {
		tft_error_set(err, TFT_EINVAL, -1, "graph_nodes: no writer");
		return NULL;
	}
	if (!(t = tft_writer_graphs(w, 1, err)))
		return NULL;
	gs = calloc(1, sizeof(*gs));
	if (!gs) {
		tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
		return NULL;
	}
	gs->w = w;
	gs->tab = t;
	return gs;
}

int64_t tft_graph_store_begin(struct tft_graph_store *gs, const char *name, const char **unique,
			      struct tft_error *err)
{
	struct tft_graph_tables *ss = gs->tab;
	const char *got;
	size_t len;

	if (!name)
		name = "";
	len = strlen(name);
	if (name_used(ss, name, len)) {
		/* "graph.pbtxt (2)", "(3)" ...: the first one not taken. */
		char *buf = malloc(len + 32);

		if (!buf)
			return tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
		for (unsigned long long k = 2;; k++) {
			snprintf(buf, len + 32, "%s (%llu)", name, k);
			if (!name_used(ss, buf, strlen(buf)))
				break;
		}
		got = name_add(ss, buf, strlen(buf));
		free(buf);
	} else {
		got = name_add(ss, name, len);
	}
	if (!got)
		return tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
	*unique = got;
	return ss->next_graph++;
}

static void bind_text(sqlite3_stmt *st, int i, struct tft_graph_text t)
{
	if (t.p && t.len <= (size_t)INT32_MAX)
		sqlite3_bind_text(st, i, t.p, (int)t.len, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

static void bind_cost(sqlite3_stmt *st, int i, int64_t v)
{
	if (v == TFT_GRAPH_NO_COST)
		sqlite3_bind_null(st, i);
	else
		sqlite3_bind_int64(st, i, v);
}

int tft_graph_store_add(struct tft_graph_store *gs, int64_t graph_id,
			const struct tft_graph_node *n, struct tft_error *err)
{
	static const struct tft_graph_text empty = {"", 0};
	sqlite3_stmt *st = gs->tab->ins;
	int rc;

	sqlite3_bind_int64(st, 1, graph_id);
	bind_text(st, 2, n->graph.p ? n->graph : empty);
	bind_text(st, 3, n->kind.p ? n->kind : empty);
	bind_text(st, 4, n->name.p ? n->name : empty);
	bind_text(st, 5, n->op);
	bind_text(st, 6, n->device);
	bind_text(st, 7, n->inputs);
	bind_text(st, 8, n->attrs);
	bind_text(st, 9, n->output_shapes);
	bind_cost(st, 10, n->compute_cost);
	bind_cost(st, 11, n->temporary_memory);
	bind_cost(st, 12, n->persistent_memory);
	bind_text(st, 13, n->cost);
	if (n->oplog) {
		bind_text(st, 14, n->op_types);
		bind_cost(st, 15, n->float_ops);
		bind_text(st, 16, n->code);
	} else {
		sqlite3_bind_null(st, 14);
		sqlite3_bind_null(st, 15);
		sqlite3_bind_null(st, 16);
	}
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (rc != SQLITE_DONE)
		return db_err(gs->tab->db, err, "insert");
	gs->count++;
	return 0;
}

uint64_t tft_graph_store_count(const struct tft_graph_store *gs)
{
	return gs ? gs->count : 0;
}

int tft_graph_store_close(struct tft_graph_store *gs, struct tft_error *err)
{
	int rc = 0;

	if (!gs)
		return 0;
	if (gs->count) {
		rc = tft_writer_add_count(gs->w, TFT_COUNT_GRAPH_NODES, (int64_t)gs->count);
		if (rc)
			tft_error_set(err, rc, -1, "graph_nodes: could not count the nodes");
	}
	free(gs);
	return rc;
}

int64_t tft_graph_next_id(struct tft_writer *w)
{
	const struct tft_graph_tables *t = w ? tft_writer_graphs(w, 0, NULL) : NULL;

	return t ? t->next_graph : -1;
}

int tft_graph_link_step(struct tft_writer *w, int64_t first_id, uint32_t process, int64_t start_ns,
			struct tft_error *err)
{
	const struct tft_graph_tables *ss = w ? tft_writer_graphs(w, 0, NULL) : NULL;
	sqlite3 *db = ss ? ss->db : NULL;
	sqlite3_stmt *st = NULL;
	int rc = 0;

	if (!ss)
		return 0; /* no graph in the session */
	if (first_id < 0)
		first_id = 0;
	if (first_id >= ss->next_graph)
		return 0;
	if (sqlite3_prepare_v2(db,
			       "INSERT OR REPLACE INTO graph_steps(graph_id, process, step_start)"
			       " VALUES(?,?,?)",
			       -1, &st, NULL) != SQLITE_OK)
		return db_err(db, err, "link");
	for (int64_t id = first_id; id < ss->next_graph && !rc; id++) {
		sqlite3_bind_int64(st, 1, id);
		if (process == UINT32_MAX)
			sqlite3_bind_null(st, 2);
		else
			sqlite3_bind_int64(st, 2, process);
		sqlite3_bind_int64(st, 3, start_ns);
		if (sqlite3_step(st) != SQLITE_DONE)
			rc = db_err(db, err, "link");
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	return rc;
}

/* ---- reader side ------------------------------------------------------------------ */

static int open_ro(const char *path, sqlite3 **db, struct tft_error *err)
{
	*db = NULL;
	if (!path)
		return tft_error_set(err, TFT_EINVAL, -1, "no session path");
	if (sqlite3_open_v2(path, db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		int rc = tft_error_set(err, TFT_EIO, -1, "%s: %s", path,
				       *db ? sqlite3_errmsg(*db) : "cannot open");
		sqlite3_close(*db);
		*db = NULL;
		return rc;
	}
	sqlite3_busy_timeout(*db, 2000);
	return 0;
}

/* 1 if the session has the table, 0 if not, <0 on error. */
static int has_table(sqlite3 *db, const char *table, struct tft_error *err)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", -1,
			       &st, NULL) != SQLITE_OK)
		return db_err(db, err, "schema");
	sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc == SQLITE_ROW)
		return 1;
	if (rc == SQLITE_DONE)
		return 0;
	return db_err(db, err, "schema");
}

static struct tft_graph_text col_text(sqlite3_stmt *st, int i)
{
	struct tft_graph_text t = {NULL, 0};

	if (sqlite3_column_type(st, i) != SQLITE_NULL) {
		t.p = (const char *)sqlite3_column_text(st, i);
		t.len = (size_t)sqlite3_column_bytes(st, i);
	}
	return t;
}

static int64_t col_cost(sqlite3_stmt *st, int i)
{
	if (sqlite3_column_type(st, i) == SQLITE_NULL)
		return TFT_GRAPH_NO_COST;
	return sqlite3_column_int64(st, i);
}

/* Rows of graph_nodes (all, or those named `name`) in id order to fn; see graph.h. */
static int each_row(const char *session_path, const char *name,
		    int (*fn)(void *ctx, const struct tft_graph_node *n, int64_t graph_id), void *ctx,
		    struct tft_error *err)
{
	/* with their step when the session links graphs to steps (graph_steps; newer sessions) */
	static const char cols[] = "SELECT n.graph_id, n.graph, n.kind, n.name, n.op, n.device, n.inputs,"
				   " n.attrs, n.output_shapes, n.compute_cost, n.temporary_memory,"
				   " n.persistent_memory, n.cost, ";
	/*
	 * The OpLogProto columns (newer sessions): a row's own, else those of the
	 * last "oplog" row of its name; an "oplog" row only where no other row
	 * has its name (it is attached there).
	 */
	static const char oplog_sel[] = ", COALESCE(n.op_types, o.op_types), COALESCE(n.float_ops,"
					 " o.float_ops), COALESCE(n.code, o.code)";
	static const char oplog_join[] = " LEFT JOIN graph_nodes o ON o.id = (SELECT MAX(x.id) FROM"
					  " graph_nodes x WHERE x.name = n.name AND x.kind = 'oplog')";
	static const char oplog_where[] = " NOT (n.kind = 'oplog' AND EXISTS (SELECT 1 FROM graph_nodes g"
					   " WHERE g.name = n.name AND g.kind <> 'oplog'))";
	char sql[1400];
	sqlite3 *db;
	sqlite3_stmt *st = NULL;
	int rc, n = 0, steps, oplog;

	if (!fn)
		return tft_error_set(err, TFT_EINVAL, -1, "no callback");
	if ((rc = open_ro(session_path, &db, err)))
		return rc;
	rc = has_table(db, "graph_nodes", err);
	if (rc <= 0)
		goto out;
	if ((steps = has_table(db, "graph_steps", err)) < 0) {
		rc = steps;
		goto out;
	}
	if ((oplog = oplog_columns(db)) < 0) {
		rc = db_err(db, err, "schema");
		goto out;
	}
	oplog = oplog == 7;
	snprintf(sql, sizeof(sql), "%s%s%s FROM graph_nodes n%s%s%s%s%s%s ORDER BY n.id", cols,
		 steps ? "s.process, s.step_start" : "NULL, NULL", oplog ? oplog_sel : ", NULL, NULL, NULL",
		 steps ? " LEFT JOIN graph_steps s USING (graph_id)" : "", oplog ? oplog_join : "",
		 name || oplog ? " WHERE" : "", name ? " n.name = ?" : "", name && oplog ? " AND" : "",
		 oplog ? oplog_where : "");
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		rc = db_err(db, err, "lookup");
		goto out;
	}
	if (name)
		sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct tft_graph_node node;

		node.graph = col_text(st, 1);
		node.kind = col_text(st, 2);
		node.name = col_text(st, 3);
		node.op = col_text(st, 4);
		node.device = col_text(st, 5);
		node.inputs = col_text(st, 6);
		node.attrs = col_text(st, 7);
		node.output_shapes = col_text(st, 8);
		node.compute_cost = col_cost(st, 9);
		node.temporary_memory = col_cost(st, 10);
		node.persistent_memory = col_cost(st, 11);
		node.cost = col_text(st, 12);
		node.step_process = col_cost(st, 13);
		node.step_start = col_cost(st, 14);
		node.op_types = col_text(st, 15);
		node.float_ops = col_cost(st, 16);
		node.code = col_text(st, 17);
		node.oplog = node.op_types.p || node.float_ops != TFT_GRAPH_NO_COST || node.code.p;
		n++;
		if (fn(ctx, &node, sqlite3_column_int64(st, 0)))
			break;
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		rc = db_err(db, err, "lookup");
	else
		rc = n;
out:
	sqlite3_finalize(st);
	sqlite3_close(db);
	return rc;
}

int tft_graph_lookup(const char *session_path, const char *name,
		     int (*fn)(void *ctx, const struct tft_graph_node *n, int64_t graph_id),
		     void *ctx, struct tft_error *err)
{
	if (!name)
		return tft_error_set(err, TFT_EINVAL, -1, "no node name");
	return each_row(session_path, name, fn, ctx, err);
}

int tft_graph_each(const char *session_path,
		   int (*fn)(void *ctx, const struct tft_graph_node *n, int64_t graph_id), void *ctx,
		   struct tft_error *err)
{
	return each_row(session_path, NULL, fn, ctx, err);
}

int64_t tft_graph_count(const char *session_path, struct tft_error *err)
{
	sqlite3 *db;
	sqlite3_stmt *st = NULL;
	int64_t n = 0;
	int rc;

	if ((rc = open_ro(session_path, &db, err)))
		return rc;
	rc = has_table(db, "graph_nodes", err);
	if (rc > 0) {
		if (sqlite3_prepare_v2(db, "SELECT COUNT(*) FROM graph_nodes", -1, &st, NULL) ==
			    SQLITE_OK &&
		    sqlite3_step(st) == SQLITE_ROW)
			n = sqlite3_column_int64(st, 0);
		else
			n = db_err(db, err, "count");
	} else {
		n = rc;
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
	return n;
}
