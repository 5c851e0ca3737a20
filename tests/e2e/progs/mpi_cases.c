/* SPDX-License-Identifier: MIT */
/*
 * MPI programs for tests/e2e/test_mpi.py, run under Open MPI's mpirun: each
 * mode a pattern (a ring, collectives, a deliberate straggler, a
 * deadlock-free Irecv/Isend exchange with persistent requests, receives from
 * MPI_ANY_SOURCE, one-sided, communicators). Every message carries {source,
 * destination, tag, k}, k being the sender's own count of its messages to
 * that destination with that tag on that communicator, so the receiver knows
 * which message it got. Each rank writes, per MPI call it makes (in order,
 * on its main thread), one line to LOGDIR/log-<rank>.txt: the function and
 * what the program knows of it; the test checks the trace against that.
 *
 * usage: mpi_cases LOGDIR MODE[,MODE...]   (p2p coll straggler irecv anysource rma comms)
 */
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int rank, size;
static FILE *logf;

/* The sender's count of messages per (communicator slot, destination, tag). */
#define NCOMM 4
#define NTAG 32
static int sent[NCOMM][64][NTAG];

static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(logf, fmt, ap);
	va_end(ap);
	fputc('\n', logf);
}

/* A payload to world rank `to` with tag on communicator slot cs. */
static void payload(int *m, int cs, int to, int tag)
{
	m[0] = rank;
	m[1] = to;
	m[2] = tag;
	m[3] = sent[cs][to][tag]++;
}

static void usleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* ---- a ring: blocking send-receive, then sends and receives in order ---------------------- */

static void mode_p2p(void)
{
	int right = (rank + 1) % size, left = (rank + size - 1) % size;
	int out[4], in[4];

	for (int it = 0; it < 5; it++) {
		payload(out, 0, right, 1);
		MPI_Sendrecv(out, 4, MPI_INT, right, 1, in, 4, MPI_INT, left, 1, MPI_COMM_WORLD,
			     MPI_STATUS_IGNORE);
		note("MPI_Sendrecv peer=%d tag=1 k=%d recv=%d/%d/%d", right, out[3], in[0], in[2], in[3]);
		/* even ranks send first, odd ranks receive first: no deadlock */
		payload(out, 0, right, 2);
		if (rank % 2 == 0) {
			MPI_Send(out, 4, MPI_INT, right, 2, MPI_COMM_WORLD);
			note("MPI_Send peer=%d tag=2 k=%d", right, out[3]);
			MPI_Recv(in, 4, MPI_INT, left, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			note("MPI_Recv peer=%d tag=2 k=%d", in[0], in[3]);
		} else {
			MPI_Recv(in, 4, MPI_INT, left, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			note("MPI_Recv peer=%d tag=2 k=%d", in[0], in[3]);
			MPI_Send(out, 4, MPI_INT, right, 2, MPI_COMM_WORLD);
			note("MPI_Send peer=%d tag=2 k=%d", right, out[3]);
		}
	}
	MPI_Barrier(MPI_COMM_WORLD);
	note("MPI_Barrier comm=world");
}

/* ---- collectives ----------------------------------------------------------------------- */

static void mode_coll(void)
{
	int x = rank + 1, y = 0, *all = malloc(sizeof(int) * (size_t)size * 4),
	    *mine = malloc(sizeof(int) * (size_t)size * 4);
	double d[8] = { 0 }, e[8];
	MPI_Request rq;

	for (int i = 0; i < size * 4; i++)
		mine[i] = rank * 100 + i;
	for (int it = 0; it < 3; it++) {
		MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
		note("MPI_Allreduce comm=world");
		MPI_Bcast(d, 8, MPI_DOUBLE, it % size, MPI_COMM_WORLD);
		note("MPI_Bcast comm=world root=%d", it % size);
		MPI_Reduce(d, e, 8, MPI_DOUBLE, MPI_MAX, (it + 1) % size, MPI_COMM_WORLD);
		note("MPI_Reduce comm=world root=%d", (it + 1) % size);
		MPI_Allgather(&x, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
		note("MPI_Allgather comm=world");
		MPI_Gather(&x, 1, MPI_INT, all, 1, MPI_INT, 1 % size, MPI_COMM_WORLD);
		note("MPI_Gather comm=world root=%d", 1 % size);
		MPI_Scatter(mine, 1, MPI_INT, &y, 1, MPI_INT, 0, MPI_COMM_WORLD);
		note("MPI_Scatter comm=world root=0");
		MPI_Alltoall(mine, 2, MPI_INT, all, 2, MPI_INT, MPI_COMM_WORLD);
		note("MPI_Alltoall comm=world");
		MPI_Iallreduce(MPI_IN_PLACE, d, 8, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &rq);
		note("MPI_Iallreduce comm=world");
		MPI_Wait(&rq, MPI_STATUS_IGNORE);
		note("MPI_Wait");
	}
	free(all);
	free(mine);
}

/* ---- a deliberate straggler: rank 2 (or the last) computes longer before each allreduce --- */

static void mode_straggler(void)
{
	int slow = size > 2 ? 2 : size - 1, x = rank, y;

	for (int it = 0; it < 6; it++) {
		usleep_ms(rank == slow ? 60 : 5);
		MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
		note("MPI_Allreduce comm=world");
	}
}

/* ---- nonblocking neighbours, persistent requests, Waitsome and Test ------------------------- */

static void mode_irecv(void)
{
	int right = (rank + 1) % size, left = (rank + size - 1) % size;
	int out[2][4], in[2][4];
	MPI_Request rq[4];

	for (int it = 0; it < 4; it++) {
		/* receives first, then sends: deadlock-free whatever the order of arrival */
		MPI_Irecv(in[0], 4, MPI_INT, left, 5, MPI_COMM_WORLD, &rq[0]);
		note("MPI_Irecv peer=%d tag=5", left);
		MPI_Irecv(in[1], 4, MPI_INT, right, 6, MPI_COMM_WORLD, &rq[1]);
		note("MPI_Irecv peer=%d tag=6", right);
		payload(out[0], 0, right, 5);
		MPI_Isend(out[0], 4, MPI_INT, right, 5, MPI_COMM_WORLD, &rq[2]);
		note("MPI_Isend peer=%d tag=5 k=%d", right, out[0][3]);
		payload(out[1], 0, left, 6);
		MPI_Isend(out[1], 4, MPI_INT, left, 6, MPI_COMM_WORLD, &rq[3]);
		note("MPI_Isend peer=%d tag=6 k=%d", left, out[1][3]);
		MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);
		note("MPI_Waitall recv=%d/%d/%d,%d/%d/%d", in[0][0], in[0][2], in[0][3], in[1][0], in[1][2],
		     in[1][3]);
	}
	/* persistent: the same two requests started three times */
	{
		MPI_Request p[2];
		int pin[4], pout[4];
		MPI_Recv_init(pin, 4, MPI_INT, left, 7, MPI_COMM_WORLD, &p[0]);
		note("MPI_Recv_init peer=%d tag=7", left);
		MPI_Send_init(pout, 4, MPI_INT, right, 7, MPI_COMM_WORLD, &p[1]);
		note("MPI_Send_init peer=%d tag=7", right);
		for (int it = 0; it < 3; it++) {
			payload(pout, 0, right, 7);
			MPI_Startall(2, p);
			note("MPI_Startall send_k=%d", pout[3]);
			MPI_Waitall(2, p, MPI_STATUSES_IGNORE);
			note("MPI_Waitall recv=%d/%d/%d", pin[0], pin[2], pin[3]);
		}
		MPI_Request_free(&p[0]);
		note("MPI_Request_free");
		MPI_Request_free(&p[1]);
		note("MPI_Request_free");
	}
	/* Waitsome until both are done, then a Test loop */
	{
		int done = 0, idx[2], n;
		MPI_Irecv(in[0], 4, MPI_INT, left, 8, MPI_COMM_WORLD, &rq[0]);
		note("MPI_Irecv peer=%d tag=8", left);
		payload(out[0], 0, right, 8);
		MPI_Isend(out[0], 4, MPI_INT, right, 8, MPI_COMM_WORLD, &rq[1]);
		note("MPI_Isend peer=%d tag=8 k=%d", right, out[0][3]);
		while (done < 2) {
			MPI_Waitsome(2, rq, &n, idx, MPI_STATUSES_IGNORE);
			char buf[64] = "";
			for (int i = 0; i < n; i++)
				if (idx[i] == 0)
					snprintf(buf, sizeof(buf), "%d/%d/%d", in[0][0], in[0][2], in[0][3]);
			note("MPI_Waitsome recv=%s", buf);
			done += n;
		}
		int flag = 0;
		MPI_Irecv(in[1], 4, MPI_INT, left, 9, MPI_COMM_WORLD, &rq[0]);
		note("MPI_Irecv peer=%d tag=9", left);
		payload(out[1], 0, right, 9);
		MPI_Send(out[1], 4, MPI_INT, right, 9, MPI_COMM_WORLD);
		note("MPI_Send peer=%d tag=9 k=%d", right, out[1][3]);
		while (!flag) {
			MPI_Test(&rq[0], &flag, MPI_STATUS_IGNORE);
			if (flag)
				note("MPI_Test recv=%d/%d/%d", in[1][0], in[1][2], in[1][3]);
			else
				note("MPI_Test recv=");
		}
	}
}

/* ---- MPI_ANY_SOURCE / MPI_ANY_TAG at rank 0 ---------------------------------------------------- */

#define M 3

static void mode_anysource(void)
{
	int buf[4];

	if (rank == 0) {
		int n = (size - 1) * M, got[64][4];
		MPI_Request rq[64];
		for (int i = 0; i < n; i++) {
			MPI_Irecv(got[i], 4, MPI_INT, MPI_ANY_SOURCE, 20, MPI_COMM_WORLD, &rq[i]);
			note("MPI_Irecv peer=-1 tag=20");
		}
		/* completed one at a time, in whatever order they match */
		for (int i = 0; i < n; i++) {
			int idx;
			MPI_Waitany(n, rq, &idx, MPI_STATUS_IGNORE);
			note("MPI_Waitany recv=%d/%d/%d", got[idx][0], got[idx][2], got[idx][3]);
		}
		/* any source and any tag, blocking */
		for (int i = 0; i < 2 * (size - 1); i++) {
			MPI_Status st;
			MPI_Recv(buf, 4, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
			note("MPI_Recv peer=%d tag=%d k=%d", buf[0], buf[2], buf[3]);
		}
		/* a wildcard posted before a specific receive that could take the same message:
		 * the second completed first */
		if (size > 1) {
			int a[4], b[4];
			MPI_Request w, s;
			MPI_Irecv(a, 4, MPI_INT, MPI_ANY_SOURCE, 22, MPI_COMM_WORLD, &w);
			note("MPI_Irecv peer=-1 tag=22");
			MPI_Irecv(b, 4, MPI_INT, 1, 22, MPI_COMM_WORLD, &s);
			note("MPI_Irecv peer=1 tag=22");
			MPI_Barrier(MPI_COMM_WORLD); /* both posted before rank 1 sends */
			note("MPI_Barrier comm=world");
			MPI_Wait(&s, MPI_STATUS_IGNORE);
			note("MPI_Wait recv=%d/%d/%d", b[0], b[2], b[3]);
			MPI_Wait(&w, MPI_STATUS_IGNORE);
			note("MPI_Wait recv=%d/%d/%d", a[0], a[2], a[3]);
		}
	} else {
		for (int i = 0; i < M; i++) {
			payload(buf, 0, 0, 20);
			usleep_ms((rank * 7 + i * 3) % 5); /* mixes the order of arrival */
			MPI_Send(buf, 4, MPI_INT, 0, 20, MPI_COMM_WORLD);
			note("MPI_Send peer=0 tag=20 k=%d", buf[3]);
		}
		for (int t = 10; t <= 11; t++) {
			payload(buf, 0, 0, t);
			MPI_Send(buf, 4, MPI_INT, 0, t, MPI_COMM_WORLD);
			note("MPI_Send peer=0 tag=%d k=%d", t, buf[3]);
		}
		MPI_Barrier(MPI_COMM_WORLD);
		note("MPI_Barrier comm=world");
		if (rank == 1)
			for (int i = 0; i < 2; i++) {
				payload(buf, 0, 0, 22);
				MPI_Send(buf, 4, MPI_INT, 0, 22, MPI_COMM_WORLD);
				note("MPI_Send peer=0 tag=22 k=%d", buf[3]);
			}
	}
}

/* ---- one-sided: fences around a put and a get ------------------------------------------------ */

static void mode_rma(void)
{
	int right = (rank + 1) % size, left = (rank + size - 1) % size, mem[4] = { 0 }, v[4] = { 1, 2, 3, 4 };
	MPI_Win win;

	MPI_Win_create(mem, sizeof(mem), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
	note("MPI_Win_create comm=world");
	MPI_Win_fence(0, win);
	note("MPI_Win_fence");
	MPI_Put(v, 4, MPI_INT, right, 0, 4, MPI_INT, win);
	note("MPI_Put peer=%d", right);
	MPI_Win_fence(0, win);
	note("MPI_Win_fence");
	MPI_Get(v, 2, MPI_INT, left, 0, 2, MPI_INT, win);
	note("MPI_Get peer=%d", left);
	MPI_Win_fence(0, win);
	note("MPI_Win_fence");
	MPI_Win_free(&win);
	note("MPI_Win_free");
}

/* ---- communicators: split, dup, and messages and collectives on them ---------------------------- */

static void log_members(const char *name, MPI_Comm c)
{
	MPI_Group g, wg;
	int n, in[64], out[64];
	char buf[512];
	size_t k = 0;

	MPI_Comm_group(c, &g);
	MPI_Comm_group(MPI_COMM_WORLD, &wg);
	MPI_Group_size(g, &n);
	for (int i = 0; i < n; i++)
		in[i] = i;
	MPI_Group_translate_ranks(g, n, in, wg, out);
	buf[0] = 0;
	for (int i = 0; i < n && k < sizeof(buf) - 8; i++)
		k += (size_t)snprintf(buf + k, sizeof(buf) - k, "%s%d", i ? "," : "", out[i]);
	note("members %s %s", name, buf);
	MPI_Group_free(&g);
	MPI_Group_free(&wg);
}

static void mode_comms(void)
{
	MPI_Comm half, dup;
	int x = rank, y, hr, hs, out[4], in[4];

	MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
	note("MPI_Comm_split comm=world new=half");
	log_members("half", half);
	MPI_Comm_dup(MPI_COMM_WORLD, &dup);
	note("MPI_Comm_dup comm=world new=dup");
	log_members("dup", dup);
	MPI_Comm_rank(half, &hr);
	MPI_Comm_size(half, &hs);
	for (int it = 0; it < 2; it++) {
		MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, half);
		note("MPI_Allreduce comm=half");
		MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, dup);
		note("MPI_Allreduce comm=dup");
	}
	if (hs > 1) {
		/* a ring in the half: peers are world ranks in the trace */
		/* (half rank j is world rank 2j + this rank's colour) */
		int right = (hr + 1) % hs, left = (hr + hs - 1) % hs, wright = 2 * right + rank % 2;
		payload(out, 1, wright, 3);
		MPI_Sendrecv(out, 4, MPI_INT, right, 3, in, 4, MPI_INT, left, 3, half, MPI_STATUS_IGNORE);
		note("MPI_Sendrecv peer=%d tag=3 k=%d recv=%d/%d/%d", wright, out[3], in[0], in[2], in[3]);
	}
	MPI_Barrier(half);
	note("MPI_Barrier comm=half");
	MPI_Comm_free(&half);
	MPI_Comm_free(&dup);
}

int main(int argc, char **argv)
{
	char path[4096], *modes, *m;

	if (argc < 3) {
		fprintf(stderr, "usage: %s LOGDIR MODE[,MODE...]\n", argv[0]);
		return 2;
	}
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	snprintf(path, sizeof(path), "%s/log-%d.txt", argv[1], rank);
	logf = fopen(path, "w");
	if (!logf || size > 64) {
		perror(path);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	modes = strdup(argv[2]);
	for (m = strtok(modes, ","); m; m = strtok(NULL, ",")) {
		if (!strcmp(m, "p2p"))
			mode_p2p();
		else if (!strcmp(m, "coll"))
			mode_coll();
		else if (!strcmp(m, "straggler"))
			mode_straggler();
		else if (!strcmp(m, "irecv"))
			mode_irecv();
		else if (!strcmp(m, "anysource"))
			mode_anysource();
		else if (!strcmp(m, "rma"))
			mode_rma();
		else if (!strcmp(m, "comms"))
			mode_comms();
		else {
			fprintf(stderr, "unknown mode %s\n", m);
			MPI_Abort(MPI_COMM_WORLD, 2);
		}
	}
	free(modes);
	fclose(logf);
	MPI_Finalize();
	return 0;
}
