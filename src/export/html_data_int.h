/* SPDX-License-Identifier: MIT */
/*
 * Private to the static export's DATA session (html_data.c, the session ops;
 * html_data_read.c, reading the document): what it holds.
 */
#ifndef TFT_EXPORT_HTML_DATA_INT_H
#define TFT_EXPORT_HTML_DATA_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/arena.h"
#include "core/hmap.h"
#include "core/model.h"
#include "core/strtab.h"
#include "export/html_data.h"
#include "store/graph.h"

/* One track's events, as DATA's arrays (ts absolute). */
struct hd_events {
	int64_t *ts, *dur;
	int64_t *maxend; /* running max of ts + dur (saturated) over [0 .. i] */
	double *value;
	uint32_t *depth, *name, *cat;
	uint8_t *flags, *kind;
	uint32_t *arg0;        /* [n + 1]: event i's args are args[arg0[i] .. arg0[i + 1]) */
	struct tft_arg *args;
	uint32_t n, nargs;
	size_t cap_args;
	bool present;          /* the track had an entry in "tracks" */
};

struct hd {
	struct tft_strtab *strs;   /* DATA's strings (ids = indexes), then the others */
	struct tft_strtab *other;  /* the other strings until DATA's are read */
	struct tft_session_summary sum;
	uint32_t sum_format, sum_producer; /* string ids */
	struct tft_process *procs;
	uint32_t nprocs, cap_procs;
	struct tft_track *tracks;
	uint32_t ntracks, cap_tracks;
	struct hd_events *ev; /* [ntracks] */
	struct tft_step *steps;
	uint32_t nsteps, cap_steps;
	struct tft_flow *flows;
	size_t nflows, cap_flows;
	uint32_t nstrings;      /* DATA's "strings" (ids 0 .. nstrings - 1) */
	bool have_session, have_strings;
	int64_t origin;         /* session.start_ns: DATA's times are offsets from it */
	char *argbuf;           /* scratch: an args object given as its JSON text */
	size_t cap_argbuf;
	/* "graph": the rows, their graph ids, and by name (a hash of it -> the first
	 * row, then next[] in insertion order); texts in the arena */
	struct tft_graph_node *gn;
	int64_t *gid;
	uint32_t *gnext;
	size_t ngn, cap_gn;
	bool have_graph;
	char graph_count[24];   /* meta graph_nodes */
	char truncated[24], graph_truncated[24]; /* meta static_truncated, static_graph_truncated */
	char start[24];         /* meta static_start_ns: the origin of DATA's times */
	struct tft_hmap gbyname;
	struct tft_arena garena;
};

/* Read DATA json[0 .. len) (padded: codec/json_read.h) into h (zeroed, strs and other
 * created): 0, or a status with err naming the byte offset (file: name). */
int tft_hd_read(struct hd *h, const char *json, size_t len, const char *name, struct tft_error *err);
/* Free h and all it holds (NULL: nothing). */
void tft_hd_free(struct hd *h);

/* The hash a graph row's name is indexed by. */
static inline uint32_t tft_hd_name_hash(const char *p, size_t len)
{
	return (uint32_t)tft_hash_fast(p, len, 0x67726170);
}

#endif /* TFT_EXPORT_HTML_DATA_INT_H */
