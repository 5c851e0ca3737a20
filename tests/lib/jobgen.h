/* SPDX-License-Identifier: MIT */
/*
 * A generated MPI job: one session file per rank (JOBDIR/rank-<N>.tft),
 * written with the store API the way the capture spec says the MPI
 * interceptor writes them (docs/distributed.md, "What each rank records"),
 * from a simulated run whose true times are known:
 *
 *   MPI_Init (the clock ping-pong of rank 0 with every rank, meta clock_sync)
 *   per step: "compute" (fillers "op_<k>" and "slow_op"; the straggler's
 *             slow_op lasts straggle_ns longer), a ring exchange (MPI_Irecv
 *             from r-1, MPI_Isend to r+1, MPI_Waitall), a report to rank 0
 *             (MPI_Send; rank 0 MPI_Recv from each rank in turn; every other
 *             step with MPI_ANY_SOURCE), "optimizer", MPI_Allreduce, and
 *             every other step MPI_Bcast from rank 0
 *   MPI_Finalize (the ping-pong again)
 *
 * Every timestamp rank r records is true + skew_ns[r] + drift[r] * (true -
 * T0): what the capture's TEST-ONLY TFT_TEST_CLOCK_SKEW_NS does (plus a
 * drift). The truth (message counts, collectives, the straggler) is in
 * struct jobgen_truth. Header-only: tests and benchmarks include it and
 * link libtftracer.a.
 */
#ifndef TFT_TESTS_JOBGEN_H
#define TFT_TESTS_JOBGEN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "store/writer.h"

#define JOBGEN_T0 1700000000000000000LL

struct jobgen_opts {
	uint32_t ranks;
	uint32_t steps;
	uint32_t fillers;         /* "op_<k>" slices per step and rank (the event volume) */
	int32_t straggler;        /* its slow_op is late by straggle_ns; -1: none */
	int64_t straggle_ns;
	const int64_t *skew_ns;   /* [ranks] or NULL */
	const double *drift;      /* [ranks] ns per ns, or NULL */
	bool pingpong;            /* meta clock_sync (MPI_Init / MPI_Finalize) */
	bool steps_recorded;      /* tft_step rows */
	int64_t latency_ns;       /* one message's latency (0: 2000) */
	uint32_t seed;
};

struct jobgen_truth {
	uint64_t messages;        /* point-to-point messages sent */
	uint64_t collectives;     /* collective calls per rank */
	uint64_t events;          /* slices written, all ranks */
};

struct jobgen_rng {
	uint64_t s;
};

static inline uint64_t jobgen_next(struct jobgen_rng *r)
{
	r->s ^= r->s << 13;
	r->s ^= r->s >> 7;
	r->s ^= r->s << 17;
	return r->s;
}

static inline int64_t jobgen_jit(struct jobgen_rng *r, int64_t max)
{
	return max > 0 ? (int64_t)(jobgen_next(r) % (uint64_t)max) : 0;
}

struct jobgen_rank {
	struct tft_writer *w;
	uint32_t track, proc;
	int64_t skew;
	double drift;
	uint32_t k_comm, k_comm_size, k_rank_in_comm, k_peer, k_tag, k_bytes, k_seq, k_coll_seq, k_root,
		k_request, k_completes, k_datatype, k_count, k_op, v_byte, v_sum;
	uint32_t cat_mpi, cat_op;
	int64_t seq_to[2];        /* (unused) */
	uint64_t events;
	int status;
};

static inline int64_t jobgen_raw(const struct jobgen_rank *r, int64_t t)
{
	return t + r->skew + (int64_t)(r->drift * (double)(t - JOBGEN_T0));
}

static inline void jobgen_slice(struct jobgen_rank *r, const char *name, uint32_t cat, int64_t t0, int64_t t1,
				const struct tft_arg *args, uint16_t nargs)
{
	struct tft_event ev;
	int64_t a = jobgen_raw(r, t0), b = jobgen_raw(r, t1);

	if (r->status)
		return;
	memset(&ev, 0, sizeof(ev));
	ev.kind = TFT_EV_SLICE;
	ev.track = r->track;
	ev.ts_ns = a;
	ev.dur_ns = b > a ? b - a : 0;
	ev.name = tft_writer_intern_cstr(r->w, name);
	ev.cat = cat;
	ev.count = 1;
	ev.nargs = nargs;
	ev.args = args;
	r->status = tft_writer_append(r->w, &ev);
	r->events++;
}

static inline struct tft_arg jobgen_int(uint32_t key, int64_t v)
{
	struct tft_arg a = { .key = key, .type = TFT_ARG_INT };
	a.v.i = v;
	return a;
}

static inline struct tft_arg jobgen_str(uint32_t key, uint32_t s, uint32_t type)
{
	struct tft_arg a = { .key = key, .type = type };
	a.v.str = s;
	return a;
}

/* An MPI point-to-point call's args. */
static inline uint16_t jobgen_p2p_args(struct jobgen_rank *r, struct tft_arg *a, uint32_t n, uint32_t me,
				       int64_t peer, int64_t tag, int64_t bytes, int64_t seq, int64_t request)
{
	uint16_t k = 0;

	a[k++] = jobgen_int(r->k_comm, 0);
	a[k++] = jobgen_int(r->k_comm_size, n);
	a[k++] = jobgen_int(r->k_rank_in_comm, me);
	a[k++] = jobgen_int(r->k_peer, peer);
	a[k++] = jobgen_int(r->k_tag, tag);
	a[k++] = jobgen_int(r->k_bytes, bytes);
	a[k++] = jobgen_int(r->k_count, bytes);
	a[k++] = jobgen_str(r->k_datatype, r->v_byte, TFT_ARG_STR);
	if (seq >= 0)
		a[k++] = jobgen_int(r->k_seq, seq);
	if (request >= 0)
		a[k++] = jobgen_int(r->k_request, request);
	return k;
}

static inline uint16_t jobgen_coll_args(struct jobgen_rank *r, struct tft_arg *a, uint32_t n, uint32_t me,
					int64_t coll_seq, int64_t bytes, int64_t root)
{
	uint16_t k = 0;

	a[k++] = jobgen_int(r->k_comm, 0);
	a[k++] = jobgen_int(r->k_comm_size, n);
	a[k++] = jobgen_int(r->k_rank_in_comm, me);
	a[k++] = jobgen_int(r->k_coll_seq, coll_seq);
	a[k++] = jobgen_int(r->k_bytes, bytes);
	if (root >= 0)
		a[k++] = jobgen_int(r->k_root, root);
	else
		a[k++] = jobgen_str(r->k_op, r->v_sum, TFT_ARG_STR);
	return k;
}

/* A JSON text arg (interned). */
static inline struct tft_arg jobgen_json(struct jobgen_rank *r, uint32_t key, const char *json)
{
	return jobgen_str(key, tft_writer_intern_cstr(r->w, json), TFT_ARG_JSON);
}

/* Append a clock_sync row to buf (JSON object text). */
static inline void jobgen_sync_row(char **buf, size_t *len, size_t *cap, const char *at, int64_t t0, int64_t t1,
				   int64_t local, int64_t peer)
{
	char row[256];
	int n = peer >= 0 ? snprintf(row, sizeof(row),
				     "%s{\"at\": \"%s\", \"peer\": %lld, \"ref_t0\": %lld, \"ref_t1\": %lld, \"local\": %lld}",
				     *len ? ", " : "", at, (long long)peer, (long long)t0, (long long)t1, (long long)local)
			  : snprintf(row, sizeof(row),
				     "%s{\"at\": \"%s\", \"ref_t0\": %lld, \"ref_t1\": %lld, \"local\": %lld}",
				     *len ? ", " : "", at, (long long)t0, (long long)t1, (long long)local);
	if (*len + (size_t)n + 1 > *cap) {
		*cap = (*cap + (size_t)n + 1) * 2;
		*buf = realloc(*buf, *cap);
	}
	memcpy(*buf + *len, row, (size_t)n + 1);
	*len += (size_t)n;
}

/*
 * Write the job into dir (created if absent; rank files must not exist).
 * Returns 0, or -1 with a line on stderr.
 */
static inline int jobgen_write(const struct jobgen_opts *o, const char *dir, struct jobgen_truth *truth)
{
	uint32_t n = o->ranks, S = o->steps;
	int64_t lat = o->latency_ns ? o->latency_ns : 2000;
	struct jobgen_rank *R = calloc(n, sizeof(*R));
	int64_t *t = calloc(n, sizeof(int64_t)), *send_start = calloc(n, sizeof(int64_t));
	int64_t *rep_start = calloc(n, sizeof(int64_t)), *arr = calloc(n, sizeof(int64_t));
	char **sync = calloc(n, sizeof(char *));
	size_t *slen = calloc(n, sizeof(size_t)), *scap = calloc(n, sizeof(size_t));
	int64_t *recv_seq = calloc(n, sizeof(int64_t)), *send_seq = calloc(n, sizeof(int64_t));
	struct jobgen_rng rng = { 0x9E3779B97F4A7C15ULL ^ o->seed };
	struct tft_error err;
	int rc = 0;

	if (!R || !t || !send_start || !rep_start || !arr || !sync || !slen || !scap || !recv_seq || !send_seq)
		return -1;
	if (truth)
		memset(truth, 0, sizeof(*truth));
	mkdir(dir, 0777);
	for (uint32_t r = 0; r < n; r++) {
		char path[4096], host[32];
		struct tft_writer_opts wo = { .zstd_level = 1 };
		struct tft_process p = { .rank = (int32_t)r, .pid = 1000 + r };
		struct tft_track tr = { .kind = TFT_TRACK_THREAD, .tid = 1000 + r };
		struct jobgen_rank *x = &R[r];

		snprintf(path, sizeof(path), "%s/rank-%u.tft", dir, r);
		tft_error_clear(&err);
		x->w = tft_writer_open(path, &wo, &err);
		if (!x->w) {
			fprintf(stderr, "jobgen: %s: %s\n", path, err.msg);
			return -1;
		}
		x->skew = o->skew_ns ? o->skew_ns[r] : 0;
		x->drift = o->drift ? o->drift[r] : 0;
		snprintf(host, sizeof(host), "node%u", r / 8);
		p.name = tft_writer_intern_cstr(x->w, "mpi_prog");
		p.host = tft_writer_intern_cstr(x->w, host);
		x->proc = tft_writer_add_process(x->w, &p);
		tr.process = x->proc;
		tr.name = tft_writer_intern_cstr(x->w, "main");
		x->track = tft_writer_add_track(x->w, &tr);
		x->k_comm = tft_writer_intern_cstr(x->w, "comm");
		x->k_comm_size = tft_writer_intern_cstr(x->w, "comm_size");
		x->k_rank_in_comm = tft_writer_intern_cstr(x->w, "rank_in_comm");
		x->k_peer = tft_writer_intern_cstr(x->w, "peer");
		x->k_tag = tft_writer_intern_cstr(x->w, "tag");
		x->k_bytes = tft_writer_intern_cstr(x->w, "bytes");
		x->k_seq = tft_writer_intern_cstr(x->w, "seq");
		x->k_coll_seq = tft_writer_intern_cstr(x->w, "coll_seq");
		x->k_root = tft_writer_intern_cstr(x->w, "root");
		x->k_request = tft_writer_intern_cstr(x->w, "request");
		x->k_completes = tft_writer_intern_cstr(x->w, "completes");
		x->k_datatype = tft_writer_intern_cstr(x->w, "datatype");
		x->k_count = tft_writer_intern_cstr(x->w, "count");
		x->k_op = tft_writer_intern_cstr(x->w, "op");
		x->v_byte = tft_writer_intern_cstr(x->w, "MPI_BYTE");
		x->v_sum = tft_writer_intern_cstr(x->w, "MPI_SUM");
		x->cat_mpi = tft_writer_intern_cstr(x->w, "mpi");
		x->cat_op = tft_writer_intern_cstr(x->w, "op");
		t[r] = JOBGEN_T0 + (int64_t)r * 300 + jobgen_jit(&rng, 500);
	}
	/* ---- MPI_Init: rank 0 ping-pongs with every rank, 10 rounds each ---- */
	{
		int64_t cur = JOBGEN_T0 + 20000, init_end;
		for (uint32_t k = 1; o->pingpong && k < n; k++)
			for (int i = 0; i < 10; i++) {
				int64_t t0 = cur, loc = t0 + lat / 2 + jobgen_jit(&rng, lat), t1 = loc + lat / 2 + jobgen_jit(&rng, lat);
				jobgen_sync_row(&sync[0], &slen[0], &scap[0], "init", jobgen_raw(&R[0], t0), jobgen_raw(&R[0], t1),
						jobgen_raw(&R[k], loc), k);
				jobgen_sync_row(&sync[k], &slen[k], &scap[k], "init", jobgen_raw(&R[0], t0), jobgen_raw(&R[0], t1),
						jobgen_raw(&R[k], loc), -1);
				cur = t1 + 200;
			}
		init_end = cur + 10000;
		for (uint32_t r = 0; r < n; r++) {
			jobgen_slice(&R[r], "MPI_Init", R[r].cat_mpi, t[r], init_end + jobgen_jit(&rng, 300), NULL, 0);
			t[r] = init_end + 1000 + jobgen_jit(&rng, 500);
		}
	}
	for (uint32_t s = 0; s < S; s++) {
		int64_t *step_start = arr; /* (reused below as arrivals) */
		int64_t starts[4096];
		struct tft_arg a[16];
		char js[128];
		(void)step_start;
		for (uint32_t r = 0; r < n && r < 4096; r++)
			starts[r] = t[r];
		/* compute: fillers then slow_op */
		for (uint32_t r = 0; r < n; r++) {
			struct jobgen_rank *x = &R[r];
			int64_t c0 = t[r], c = c0 + 500, slow = 50000 + jobgen_jit(&rng, 5000) +
							     ((int32_t)r == o->straggler ? o->straggle_ns : 0);
			int64_t total = 500 + (int64_t)o->fillers * 1200 + slow + 500;
			jobgen_slice(x, "compute", x->cat_op, c0, c0 + total, NULL, 0);
			for (uint32_t k = 0; k < o->fillers; k++) {
				char nm[32];
				snprintf(nm, sizeof(nm), "op_%u", k % 16);
				jobgen_slice(x, nm, x->cat_op, c, c + 1000, NULL, 0);
				c += 1200;
			}
			jobgen_slice(x, "slow_op", x->cat_op, c, c + slow, NULL, 0);
			t[r] = c0 + total + 300;
		}
		/* ring: Irecv from r-1, Isend to r+1, Waitall */
		for (uint32_t r = 0; r < n && n > 1; r++) {
			struct jobgen_rank *x = &R[r];
			uint32_t from = (r + n - 1) % n, to = (r + 1) % n;
			uint16_t k = jobgen_p2p_args(x, a, n, r, from, 7, 1 << 20, (int64_t)s, 2 * (int64_t)s);
			jobgen_slice(x, "MPI_Irecv", x->cat_mpi, t[r], t[r] + 800, a, k);
			t[r] += 1000;
			k = jobgen_p2p_args(x, a, n, r, to, 7, 1 << 20, (int64_t)s, 2 * (int64_t)s + 1);
			send_start[r] = t[r];
			jobgen_slice(x, "MPI_Isend", x->cat_mpi, t[r], t[r] + 900, a, k);
			t[r] += 1100;
			if (truth)
				truth->messages++;
		}
		for (uint32_t r = 0; r < n && n > 1; r++) {
			struct jobgen_rank *x = &R[r];
			uint32_t from = (r + n - 1) % n;
			int64_t arrive = send_start[from] + lat + 300, end = (arrive > t[r] ? arrive : t[r]) + 500;
			uint16_t k = 0;
			snprintf(js, sizeof(js), "[%lld, %lld]", 2 * (long long)s, 2 * (long long)s + 1);
			a[k++] = jobgen_json(x, x->k_completes, js);
			snprintf(js, sizeof(js), "[%u, null]", from);
			a[k++] = jobgen_json(x, x->k_peer, js);
			a[k++] = jobgen_json(x, x->k_tag, "[7, null]");
			a[k++] = jobgen_json(x, x->k_bytes, "[1048576, null]");
			jobgen_slice(x, "MPI_Waitall", x->cat_mpi, t[r], end, a, k);
			t[r] = end + 400;
		}
		/* report to rank 0: MPI_Send; rank 0 MPI_Recv from each in turn */
		for (uint32_t r = 1; r < n; r++) {
			struct jobgen_rank *x = &R[r];
			uint16_t k = jobgen_p2p_args(x, a, n, r, 0, 9, 64, send_seq[r]++, -1);
			rep_start[r] = t[r];
			jobgen_slice(x, "MPI_Send", x->cat_mpi, t[r], t[r] + 1500, a, k);
			t[r] += 1800;
			if (truth)
				truth->messages++;
		}
		for (uint32_t r = 1; r < n; r++) {
			struct jobgen_rank *x = &R[0];
			bool any = s % 2 == 1; /* MPI_ANY_SOURCE: the source from the status */
			int64_t arrive = rep_start[r] + lat, end = (arrive > t[0] ? arrive : t[0]) + 700;
			uint16_t k = jobgen_p2p_args(x, a, n, 0, r, 9, 64, any ? -1 : recv_seq[r], -1);
			recv_seq[r]++;
			jobgen_slice(x, "MPI_Recv", x->cat_mpi, t[0], end, a, k);
			t[0] = end + 200;
		}
		/* optimizer, then MPI_Allreduce: everyone leaves after the last arrival */
		{
			int64_t last = INT64_MIN, exit_t;
			for (uint32_t r = 0; r < n; r++) {
				jobgen_slice(&R[r], "optimizer", R[r].cat_op, t[r], t[r] + 5000, NULL, 0);
				arr[r] = t[r] + 5300;
				if (arr[r] > last)
					last = arr[r];
			}
			exit_t = last + lat * 3;
			for (uint32_t r = 0; r < n; r++) {
				uint16_t k = jobgen_coll_args(&R[r], a, n, r, 2 * (int64_t)s, 4096, -1);
				int64_t e = exit_t + jobgen_jit(&rng, 300);
				jobgen_slice(&R[r], "MPI_Allreduce", R[r].cat_mpi, arr[r], e, a, k);
				t[r] = e + 300;
			}
			if (truth)
				truth->collectives++;
		}
		/* every other step MPI_Bcast from rank 0 */
		if (s % 2 == 0) {
			int64_t root_at = t[0] + 2000;
			for (uint32_t r = 0; r < n; r++) {
				int64_t at = r == 0 ? root_at : t[r] + jobgen_jit(&rng, 1000);
				int64_t e = r == 0 ? at + 3000 : (at > root_at + lat ? at : root_at + lat) + 800;
				uint16_t k = jobgen_coll_args(&R[r], a, n, r, 2 * (int64_t)s + 1, 65536, 0);
				jobgen_slice(&R[r], "MPI_Bcast", R[r].cat_mpi, at, e, a, k);
				t[r] = e + 500;
			}
			if (truth)
				truth->collectives++;
		}
		for (uint32_t r = 0; r < n; r++) {
			if (o->steps_recorded) {
				struct tft_step st = { .index = s, .process = R[r].proc, .traced = true };
				st.start_ns = jobgen_raw(&R[r], starts[r < 4096 ? r : 0]);
				st.dur_ns = jobgen_raw(&R[r], t[r]) - st.start_ns;
				st.name = tft_writer_intern_cstr(R[r].w, "step");
				tft_writer_add_step(R[r].w, &st);
			}
			t[r] += 1000;
		}
	}
	/* ---- MPI_Finalize: the ping-pong again ---- */
	{
		int64_t cur = INT64_MIN, fin_end;
		for (uint32_t r = 0; r < n; r++)
			if (t[r] > cur)
				cur = t[r];
		cur += 5000;
		for (uint32_t r = 0; r < n; r++)
			jobgen_slice(&R[r], "MPI_Finalize", R[r].cat_mpi, t[r], t[r] + 100, NULL, 0), t[r] += 200;
		for (uint32_t k = 1; o->pingpong && k < n; k++)
			for (int i = 0; i < 10; i++) {
				int64_t t0 = cur, loc = t0 + lat / 2 + jobgen_jit(&rng, lat), t1 = loc + lat / 2 + jobgen_jit(&rng, lat);
				jobgen_sync_row(&sync[0], &slen[0], &scap[0], "finalize", jobgen_raw(&R[0], t0),
						jobgen_raw(&R[0], t1), jobgen_raw(&R[k], loc), k);
				jobgen_sync_row(&sync[k], &slen[k], &scap[k], "finalize", jobgen_raw(&R[0], t0),
						jobgen_raw(&R[0], t1), jobgen_raw(&R[k], loc), -1);
				cur = t1 + 200;
			}
		fin_end = cur;
		(void)fin_end;
	}
	for (uint32_t r = 0; r < n; r++) {
		struct jobgen_rank *x = &R[r];
		char v[32];
		snprintf(v, sizeof(v), "%u", r);
		tft_writer_set_meta(x->w, "job_rank", v);
		snprintf(v, sizeof(v), "%u", n);
		tft_writer_set_meta(x->w, "job_size", v);
		tft_writer_set_meta(x->w, "job_id", "jobgen-1");
		tft_writer_set_meta(x->w, "format", "tftracer");
		if (o->pingpong && n > 1) {
			size_t need = slen[r] + 64;
			char *js = malloc(need);
			snprintf(js, need, "{\"reference_rank\": 0, \"points\": [%s]}", sync[r] ? sync[r] : "");
			tft_writer_set_meta(x->w, "clock_sync", js);
			free(js);
		}
		if (truth)
			truth->events += x->events;
		tft_error_clear(&err);
		if (x->status || tft_writer_close(x->w, &err)) {
			fprintf(stderr, "jobgen: rank %u: %s\n", r, x->status ? "append failed" : err.msg);
			rc = -1;
		}
		free(sync[r]);
	}
	free(R);
	free(t);
	free(send_start);
	free(rep_start);
	free(arr);
	free(sync);
	free(slen);
	free(scap);
	free(recv_seq);
	free(send_seq);
	return rc;
}

#endif /* TFT_TESTS_JOBGEN_H */
