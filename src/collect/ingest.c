/* SPDX-License-Identifier: MIT */
/*
 * Format detection and dispatch: peek at the first bytes of the
 * (decompressed) input and hand it to the importer of its format. JSON is
 * streamed; the protobuf (XSpace, RunMetadata/StepStats, GraphDef, tfprof
 * OpLogProto) and pickle importers take the whole input in memory (a plain file is mapped,
 * a compressed one inflated). A directory is a profile run: every
 * *.xplane.pb in it, one per host.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codec/source.h"
#include "collect/ingest.h"
#include "collect/ingest_chrome.h"
#include "collect/ingest_ctf.h"
#include "collect/ingest_graph.h"
#include "collect/ingest_oplog.h"
#include "collect/ingest_pickle.h"
#include "collect/ingest_runmeta.h"
#include "collect/ingest_xspace.h"
#include "collect/tf_names.h"
#include "collect/track_roles.h"
#include "core/grow.h"

/* Bytes the probes get to look at (the source look-ahead). */
#define PROBE_BYTES 4096u
/* Inputs read whole (protobuf, pickle) may not inflate past this. */
#define WHOLE_MAX ((uint64_t)4 << 30)
#define XPLANE_SUFFIX ".xplane.pb"

static const char unrecognised[] =
	"unrecognised format: expected a JSON trace, an XSpace (.xplane.pb), RunMetadata/StepStats "
	"(binary or text), GraphDef, a tfprof OpLogProto (tfprof_log) or a tftracer/tfvis pickle";

static bool is_space(unsigned char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r';
}

/* 1 if head looks like JSON; at_eof: head is the whole input. */
static int probe_json(const unsigned char *head, size_t len, bool at_eof)
{
	size_t i = 0;

	if (len >= 3 && memcmp(head, "\xef\xbb\xbf", 3) == 0)
		i = 3; /* UTF-8 byte order mark */
	for (; i < len; i++) {
		if (is_space(head[i]))
			continue;
		return head[i] == '{' || head[i] == '[';
	}
	/* only whitespace so far: JSON if more follows (the parser decides) */
	return !at_eof;
}

/*
 * Binary protobuf whose top-level fields all parse over head: keys with a
 * field number and a wire type protobuf has (no groups), lengths inside the
 * input, the last field ending at the end of head (or, when more follows,
 * running past it), and a control byte other than tab, newline and carriage
 * return somewhere (a key such as 0x08, 0x12, 0x1a, a small length or
 * varint: every binary TF message has one; JSON text none). A binary TF
 * file whose first field is 91 or 123 bytes long starts with "\n[" or "\n{",
 * as JSON may; a short JSON text may walk as fields too (quotes, spaces,
 * braces and letters are keys of valid wire types), but has no control byte.
 */
static bool wire_walk_ok(const unsigned char *head, size_t len, bool at_eof)
{
	const uint8_t *p = head, *end = head + len;

	if (!tft_pb_has_control_byte(head, len))
		return false;

	while (p < end) {
		uint64_t key, v;

		if (tft_pb_wire_varint(&p, end, &key))
			return !at_eof && end - p < 10; /* a key cut by the end of head */
		if ((key >> 3) == 0 || (key >> 3) > 0x1FFFFFFF)
			return false;
		switch (key & 7) {
		case TFT_PB_WT_VARINT:
			if (tft_pb_wire_varint(&p, end, &v))
				return !at_eof && end - p < 10;
			break;
		case TFT_PB_WT_I64:
		case TFT_PB_WT_I32:
			v = (key & 7) == TFT_PB_WT_I64 ? 8 : 4;
			if (v > (uint64_t)(end - p))
				return !at_eof;
			p += v;
			break;
		case TFT_PB_WT_LEN:
			if (tft_pb_wire_varint(&p, end, &v))
				return !at_eof && end - p < 10;
			if (v > (uint64_t)(end - p))
				return !at_eof;
			p += v;
			break;
		default:
			return false;
		}
	}
	return true;
}

/* The whole (decompressed) input, borrowed from memory, mapped or read. */
struct whole {
	const uint8_t *data; /* borrowed from one of the below or the caller */
	size_t len;
	void *map;           /* owned mapping, map_len bytes */
	size_t map_len;
	uint8_t *buf;        /* owned copy */
};

/*
 * Unmapping a large input takes the kernel a while (a page table entry per
 * page): it is done on a thread of its own, which overlaps what the caller
 * does next (a session's commit and sync). A piece at a time: the process's
 * memory map stays locked while a piece is unmapped, and the caller's
 * threads wait for that lock to grow their heap or map memory (one munmap()
 * of a 300 MB input held a session's close up for ~25 ms).
 */
#define UNMAP_ASYNC_BYTES ((size_t)64 << 20)
#define UNMAP_PIECE_BYTES ((size_t)8 << 20)

struct unmap_job {
	void *p;
	size_t len;
};

static void *unmap_main(void *arg)
{
	struct unmap_job j = *(struct unmap_job *)arg;

	free(arg);
	while (j.len > UNMAP_PIECE_BYTES) {
		munmap(j.p, UNMAP_PIECE_BYTES);
		j.p = (char *)j.p + UNMAP_PIECE_BYTES;
		j.len -= UNMAP_PIECE_BYTES;
	}
	munmap(j.p, j.len);
	return NULL;
}

static void unmap_input(void *p, size_t len)
{
	struct unmap_job *j = len >= UNMAP_ASYNC_BYTES ? malloc(sizeof(*j)) : NULL;
	pthread_attr_t a;
	pthread_t t;

	if (j && pthread_attr_init(&a) == 0) {
		int started;

		j->p = p;
		j->len = len;
		pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
		started = pthread_create(&t, &a, unmap_main, j) == 0;
		pthread_attr_destroy(&a);
		if (started)
			return;
	}
	free(j);
	munmap(p, len);
}

static void whole_free(struct whole *wh)
{
	if (wh->map)
		unmap_input(wh->map, wh->map_len);
	free(wh->buf);
	memset(wh, 0, sizeof(*wh));
}

/*
 * mem (len bytes) is the raw input when the source reads memory, path its
 * file otherwise. Plain input is used in place (mapped); compressed input
 * is inflated through the source, whose look-ahead comes first.
 */
static int whole_input(struct tft_source *src, const char *path, const void *mem, size_t mem_len,
		       struct whole *wh, struct tft_error *err)
{
	memset(wh, 0, sizeof(*wh));
	if (!tft_source_is_gzip(src)) {
		if (mem) {
			wh->data = mem;
			wh->len = mem_len;
			return 0;
		}
		struct stat st;
		int fd = -1;

		/* (a named pipe's second open would wait for a writer that has gone) */
		if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
			goto stream;
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st) != 0) {
			int e = errno;
			if (fd >= 0)
				close(fd);
			return tft_error_set(err, TFT_EIO, -1, "cannot open: %s", strerror(e));
		}
		if (st.st_size > 0) {
			void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
			if (m != MAP_FAILED) {
				(void)madvise(m, (size_t)st.st_size, MADV_SEQUENTIAL);
				wh->map = m;
				wh->map_len = (size_t)st.st_size;
				wh->data = m;
				wh->len = (size_t)st.st_size;
				close(fd);
				return 0;
			}
		} else if (S_ISREG(st.st_mode)) {
			close(fd);
			wh->data = (const uint8_t *)"";
			return 0;
		}
		close(fd); /* not mappable: read it through the source */
	}
stream:;
	size_t cap = 1u << 20;
	uint64_t raw = tft_source_raw_size(src);
	if (raw && raw < WHOLE_MAX)
		cap = (size_t)raw + 1 > cap ? (size_t)raw + 1 : cap;
	for (;;) {
		size_t got;
		int rc;
		if (!wh->buf || wh->len == cap) {
			size_t ncap = wh->buf ? cap * 2 : cap;
			uint8_t *nb;
			if ((uint64_t)ncap > WHOLE_MAX + 1)
				ncap = (size_t)(WHOLE_MAX + 1);
			if (wh->buf && ncap <= cap) {
				whole_free(wh);
				return tft_error_set(err, TFT_EFORMAT, (int64_t)WHOLE_MAX,
						     "input larger than %llu bytes once decompressed",
						     (unsigned long long)WHOLE_MAX);
			}
			nb = realloc(wh->buf, ncap);
			if (!nb) {
				whole_free(wh);
				return tft_error_set(err, TFT_ENOMEM, -1, "out of memory reading the input");
			}
			wh->buf = nb;
			cap = ncap;
		}
		rc = tft_source_read(src, wh->buf + wh->len, cap - wh->len, &got, err);
		if (rc) {
			whole_free(wh);
			return rc;
		}
		if (got == 0)
			break;
		wh->len += got;
	}
	wh->data = wh->buf;
	return 0;
}

/* Import src (positioned at its start); name for errors; path or mem: see whole_input(). */
static int ingest_source(struct tft_writer *w, struct tft_source *src, const char *name,
			 const char *path, const void *mem, size_t mem_len,
			 const struct tft_ingest_opts *opts, struct tft_error *err)
{
	const unsigned char *head;
	const void *peek;
	struct whole wh;
	size_t len, i;
	int rc, fmt = 0, kind;
	const char *tool = tft_pb_xprof_tool_output(name);

	if (tool)
		return tft_error_set(err, TFT_EFORMAT, 0,
				     "an XProf %s result (computed from a profile, not a trace): "
				     "import the profile's .xplane.pb instead", tool);
	if ((rc = tft_source_peek(src, PROBE_BYTES, &peek, &len, err)))
		return rc;
	head = peek;
	if (probe_json(head, len, len < PROBE_BYTES) &&
	    !(len >= 2 && head[0] == '\n' && (head[1] == '[' || head[1] == '{') &&
	      tft_pb_sniff(head, len, name) != TFT_PB_FMT_UNKNOWN &&
	      wire_walk_ok(head, len, len < PROBE_BYTES)))
		return tft_ingest_chrome_source(w, src, opts, NULL, err);
	if (tft_ingest_pickle_probe(head, len, len < PROBE_BYTES)) {
		kind = 'p';
	} else {
		fmt = tft_pb_sniff(head, len, name);
		switch (fmt) {
		case TFT_PB_FMT_XSPACE:
			kind = 'x';
			break;
		case TFT_PB_FMT_RUNMETA:
		case TFT_PB_FMT_STEPSTATS:
		case TFT_PB_FMT_RUNMETA_TEXT:
		case TFT_PB_FMT_STEPSTATS_TEXT:
			kind = 'r';
			break;
		case TFT_PB_FMT_GRAPHDEF:
		case TFT_PB_FMT_GRAPHDEF_TEXT:
		case TFT_PB_FMT_COSTGRAPH:
		case TFT_PB_FMT_COSTGRAPH_TEXT:
		case TFT_PB_FMT_METAGRAPH:
		case TFT_PB_FMT_METAGRAPH_TEXT:
			kind = 'g';
			break;
		case TFT_PB_FMT_OPLOG:
		case TFT_PB_FMT_OPLOG_TEXT:
			kind = 'o';
			break;
		case TFT_PB_FMT_PROFILE:
			return tft_error_set(err, TFT_EFORMAT, 0,
					     "a tfprof ProfileProto (profile_<step>, ProfileContext's "
					     "profile of several steps), which tftracer does not read: "
					     "import the RunMetadata, GraphDef and tfprof_log it was made from");
		case TFT_PB_FMT_HLOPROTO:
			return tft_error_set(err, TFT_EFORMAT, 0,
					     "an XLA HloProto (a compiled module, what XProf's graph and "
					     "memory viewers read), not a trace: import the run's "
					     ".xplane.pb instead");
		default:
			if (len >= 16 && memcmp(head, "SQLite format 3", 16) == 0)
				return tft_error_set(err, TFT_EFORMAT, -1,
						     "a SQLite database (a tftracer session? open it with "
						     "tftracer FILE; import reads traces, not sessions)");
			for (i = 0; i < len && is_space(head[i]); i++)
				; /* point at the first significant byte */
			return tft_error_set(err, TFT_EFORMAT, (int64_t)i, "%s", unrecognised);
		}
	}
	if ((rc = whole_input(src, path, mem, mem_len, &wh, err)))
		return rc;
	if (kind == 'p')
		rc = tft_ingest_pickle_mem(w, name, wh.data, wh.len, opts, err);
	else if (kind == 'x')
		rc = tft_xspace_ingest(w, name, wh.data, wh.len, opts, err);
	else if (kind == 'g')
		rc = tft_graph_ingest(w, name, wh.data, wh.len, fmt, opts, err);
	else if (kind == 'o')
		rc = tft_oplog_ingest(w, name, wh.data, wh.len, fmt, opts, err);
	else
		rc = tft_runmeta_ingest_as(w, name, wh.data, wh.len, fmt, opts, err);
	whole_free(&wh);
	return rc;
}

/* runmeta_file_start() of a graph file: no events, it takes no part in the order. */
#define ORDER_GRAPH INT64_MAX

/*
 * The earliest node start of a RunMetadata / StepStats file; ORDER_GRAPH for
 * a GraphDef, CostGraphDef or OpLogProto; INT64_MIN for anything else (or
 * not a file).
 */
static int64_t runmeta_file_start(const char *path)
{
	struct tft_error err;
	struct tft_source *src;
	struct whole wh;
	const void *peek;
	size_t len;
	int64_t start = INT64_MIN;
	struct stat st;
	int fmt;

	/* (a pipe, <(...), would be used up: only files are read ahead) */
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return INT64_MIN;
	tft_error_clear(&err);
	if (!(src = tft_source_open_file(path, &err)))
		return INT64_MIN;
	if (tft_source_peek(src, PROBE_BYTES, &peek, &len, &err) == 0 &&
	    !probe_json(peek, len, len < PROBE_BYTES) &&
	    !tft_ingest_pickle_probe(peek, len, len < PROBE_BYTES)) {
		fmt = tft_pb_sniff(peek, len, path);
		if (fmt == TFT_PB_FMT_GRAPHDEF || fmt == TFT_PB_FMT_GRAPHDEF_TEXT ||
		    fmt == TFT_PB_FMT_COSTGRAPH || fmt == TFT_PB_FMT_COSTGRAPH_TEXT ||
		    fmt == TFT_PB_FMT_OPLOG || fmt == TFT_PB_FMT_OPLOG_TEXT ||
		    fmt == TFT_PB_FMT_METAGRAPH || fmt == TFT_PB_FMT_METAGRAPH_TEXT)
			start = ORDER_GRAPH;
		else if ((fmt == TFT_PB_FMT_RUNMETA || fmt == TFT_PB_FMT_STEPSTATS ||
		     fmt == TFT_PB_FMT_RUNMETA_TEXT || fmt == TFT_PB_FMT_STEPSTATS_TEXT) &&
		    whole_input(src, path, NULL, 0, &wh, &err) == 0) {
			start = tft_runmeta_start(wh.data, wh.len, fmt);
			whole_free(&wh);
		}
	}
	tft_source_close(src);
	return start;
}

struct order_ent {
	const char *path;
	int64_t start;
	int pos;
};

static int cmp_order(const void *a, const void *b)
{
	const struct order_ent *x = a, *y = b;
	int c;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	/* (steps of several workers at one time: by name, step_2 before step_10) */
	c = strverscmp(x->path, y->path);
	return c ? c : x->pos - y->pos;
}

void tft_ingest_order(const char **paths, int n)
{
	struct order_ent *e;
	int *slot, m = 0;

	if (n < 2)
		return;
	e = malloc((size_t)n * sizeof(*e));
	slot = malloc((size_t)n * sizeof(*slot));
	if (!e || !slot)
		goto out;
	for (int i = 0; i < n; i++) {
		int64_t start = runmeta_file_start(paths[i]);

		if (start == INT64_MIN)
			goto out; /* not all RunMetadata (or graphs): as given */
		if (start != ORDER_GRAPH) {
			slot[m] = i;
			e[m++] = (struct order_ent){ paths[i], start, i };
		}
	}
	/* The RunMetadata files in time order, in their own slots; graphs stay where they are. */
	qsort(e, (size_t)m, sizeof(*e), cmp_order);
	for (int k = 0; k < m; k++)
		paths[slot[k]] = e[k].path;
out:
	free(slot);
	free(e);
}

static int ingest_path(struct tft_writer *w, const char *path, const struct tft_ingest_opts *opts,
		       struct tft_error *err)
{
	struct tft_source *src = tft_source_open_file(path, err);
	int rc;

	if (!src)
		return err && err->code ? err->code : TFT_EIO;
	rc = ingest_source(w, src, path, path, NULL, 0, opts, err);
	if (!rc)
		rc = tft_roles_mark_tf_mirrors(w);
	if (rc)
		tft_error_set_file(err, path);
	tft_source_close(src);
	return rc;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool has_suffix(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);

	return n > m && memcmp(s + n - m, suf, m) == 0;
}

/* A profile run directory (plugins/profile/<run>/): every *.xplane.pb, in name order. */
static int ingest_dir(struct tft_writer *w, const char *dir, const struct tft_ingest_opts *opts,
		      struct tft_error *err)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **names = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;

	if (!d) {
		rc = tft_error_set(err, errno == ENOENT ? TFT_ENOTFOUND : TFT_EIO, -1,
				   "cannot open the directory: %s", strerror(errno));
		tft_error_set_file(err, dir);
		return rc;
	}
	while ((de = readdir(d)) != NULL) {
		char *full;
		struct stat st;
		if (!has_suffix(de->d_name, XPLANE_SUFFIX))
			continue;
		size_t len = strlen(dir) + 1 + strlen(de->d_name) + 1;
		full = malloc(len);
		if (!full) {
			rc = tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
			goto out;
		}
		snprintf(full, len, "%s/%s", dir, de->d_name);
		if (stat(full, &st) != 0 || !S_ISREG(st.st_mode)) {
			free(full);
			continue;
		}
		if (tft_grow_size((void **)&names, &cap, n + 1, sizeof(*names))) {
			free(full);
			rc = tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
			goto out;
		}

		names[n++] = full;
	}
	if (n == 0) {
		rc = tft_error_set(err, TFT_ENOTFOUND, -1,
				   "no *" XPLANE_SUFFIX " file in this directory: expected a trace file "
				   "or a profile run directory (plugins/profile/<run>/)");
		tft_error_set_file(err, dir);
		goto out;
	}
	qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n && !rc; i++)
		rc = ingest_path(w, names[i], opts, err); /* host: from the file name */
out:
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	closedir(d);
	return rc;
}

int tft_ingest_file(struct tft_writer *w, const char *path, const struct tft_ingest_opts *opts,
		    struct tft_error *err)
{
	struct stat st;

	tft_error_clear(err); /* err describes this call only */
	if (tft_ctf_probe(path)) /* a CTF trace (LTTng), a file in one, or traces below */
		return tft_ctf_ingest(w, path, opts, err);
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return ingest_dir(w, path, opts, err);
	return ingest_path(w, path, opts, err);
}

int tft_ingest_mem(struct tft_writer *w, const char *name, const void *data, size_t len,
		   const struct tft_ingest_opts *opts, struct tft_error *err)
{
	struct tft_source *src;
	int rc;

	tft_error_clear(err);
	src = tft_source_open_mem(data, len, name, err);
	if (!src)
		return err && err->code ? err->code : TFT_ENOMEM;
	rc = ingest_source(w, src, name ? name : "", NULL, data ? data : "", data ? len : 0, opts, err);
	if (!rc)
		rc = tft_roles_mark_tf_mirrors(w);
	if (rc)
		tft_error_set_file(err, name);
	tft_source_close(src);
	return rc;
}
