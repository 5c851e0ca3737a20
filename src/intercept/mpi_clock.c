/* SPDX-License-Identifier: MIT */
/*
 * The MPI interceptor's clock exchange (docs/intercept.md, "MPI"): at
 * MPI_Init and at MPI_Finalize, rank 0 and each other rank k play R rounds
 * of ping-pong on a private duplicate of MPI_COMM_WORLD (the program's
 * messages are untouched): rank 0 sends its clock t0, k answers with its
 * clock, rank 0 notes t1 when the answer arrives; then rank 0 sends k the
 * rounds. Every time is on the session's clock (CLOCK_MONOTONIC, plus the
 * test skew). Each rank keeps the rows it took part in (rank 0: every k's,
 * with "peer") as the session's meta clock_sync, from which the job layer
 * estimates each rank's offset: local - (ref_t0 + ref_t1) / 2 for the round
 * with the smallest ref_t1 - ref_t0, error (ref_t1 - ref_t0) / 2.
 *
 * Every rank that runs the interceptor takes part (also one whose session
 * could not be made), so that the exchange never waits for a rank that
 * follows the same rules; a job whose ranks run with and without the
 * interceptor must turn it off (TFT_MPI_CLOCK_SYNC=0).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(TFT_HAVE_MPI)

#include "intercept/mpi_icpt.h"
#include "runtime/clock.h"

#define TAG_PING 1
#define TAG_ROWS 2
#define ROUNDS_MAX 100
#define JSON_MAX ((size_t)64 << 20)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char *json;        /* owned: {"reference_rank": 0, "points": [...]} */
static size_t json_len, json_cap;
static uint64_t json_gen;
static MPI_Comm priv;     /* the private duplicate of the world */
static int have_priv;

static int rounds(void)
{
	const char *v = getenv("TFT_MPI_CLOCK_ROUNDS");
	long n = v && *v ? strtol(v, NULL, 10) : 10;

	return n < 1 ? 1 : n > ROUNDS_MAX ? ROUNDS_MAX : (int)n;
}

int tft_mpi_clock_enabled(void)
{
	const char *v = getenv("TFT_MPI_CLOCK_SYNC");

	return !(v && strcmp(v, "0") == 0);
}

/* Append text to the JSON (under lock); 0, or -1 out of memory / too big. */
static int put(const char *s, size_t n)
{
	if (json_len + n + 1 > json_cap) {
		size_t cap = json_cap ? json_cap : 4096;
		char *p;
		while (cap < json_len + n + 1)
			cap *= 2;
		if (cap > JSON_MAX || !(p = realloc(json, cap)))
			return -1;
		json = p;
		json_cap = cap;
	}
	memcpy(json + json_len, s, n);
	json_len += n;
	json[json_len] = 0;
	return 0;
}

/* Add the rows of one exchange (peer < 0: this rank's own rows with rank 0). */
static void add_rows(const char *at, int peer, const int64_t *rows, int r)
{
	static const char empty[] = "{\"reference_rank\":0,\"points\":[]}";
	char buf[256];

	pthread_mutex_lock(&lock);
	if (!json_len && put(empty, sizeof(empty) - 1)) {
		pthread_mutex_unlock(&lock);
		return;
	}
	json_len -= 2; /* the closing "]}" */
	for (int i = 0; i < r; i++) {
		int n;
		if (peer >= 0)
			n = snprintf(buf, sizeof(buf),
				     "%s{\"at\":\"%s\",\"peer\":%d,\"ref_t0\":%" PRId64 ",\"ref_t1\":%" PRId64
				     ",\"local\":%" PRId64 "}",
				     json[json_len - 1] == '[' ? "" : ",", at, peer, rows[3 * i],
				     rows[3 * i + 1], rows[3 * i + 2]);
		else
			n = snprintf(buf, sizeof(buf),
				     "%s{\"at\":\"%s\",\"ref_t0\":%" PRId64 ",\"ref_t1\":%" PRId64
				     ",\"local\":%" PRId64 "}",
				     json[json_len - 1] == '[' ? "" : ",", at, rows[3 * i], rows[3 * i + 1],
				     rows[3 * i + 2]);
		if (put(buf, (size_t)n))
			break;
	}
	put("]}", 2);
	json_gen++;
	pthread_mutex_unlock(&lock);
}

void tft_mpi_clock_sync(const char *at)
{
	struct tft_mpi_real *R = &tft_mpi_real_fns;
	int nr = rounds();
	int64_t rows[3 * ROUNDS_MAX];
	MPI_Status st;

	if (!tft_mpi_clock_enabled() || !MREAL(PMPI_Send) || !MREAL(PMPI_Recv) || !MREAL(PMPI_Comm_dup))
		return;
	if (!have_priv) {
		if (R->PMPI_Comm_dup(tft_mpi.world, &priv) != MPI_SUCCESS)
			return;
		have_priv = 1;
	}
	if (tft_mpi.rank == 0) {
		for (int k = 1; k < tft_mpi.size; k++) {
			for (int i = 0; i < nr; i++) {
				int64_t t0 = tft_rt_session_now_ns(), tk = 0, t1;
				R->PMPI_Send(&t0, 8, tft_mpi.byte, k, TAG_PING, priv);
				R->PMPI_Recv(&tk, 8, tft_mpi.byte, k, TAG_PING, priv, &st);
				t1 = tft_rt_session_now_ns();
				rows[3 * i] = t0;
				rows[3 * i + 1] = t1;
				rows[3 * i + 2] = tk;
			}
			R->PMPI_Send(rows, 3 * nr * 8, tft_mpi.byte, k, TAG_ROWS, priv);
			add_rows(at, k, rows, nr);
		}
	} else {
		for (int i = 0; i < nr; i++) {
			int64_t t0 = 0, tk;
			R->PMPI_Recv(&t0, 8, tft_mpi.byte, 0, TAG_PING, priv, &st);
			tk = tft_rt_session_now_ns();
			R->PMPI_Send(&tk, 8, tft_mpi.byte, 0, TAG_PING, priv);
		}
		if (R->PMPI_Recv(rows, 3 * nr * 8, tft_mpi.byte, 0, TAG_ROWS, priv, &st) == MPI_SUCCESS)
			add_rows(at, -1, rows, nr);
	}
}

char *tft_mpi_clock_json(uint64_t *gen)
{
	char *copy = NULL;

	pthread_mutex_lock(&lock);
	if (json_gen != *gen && json_len && (copy = malloc(json_len + 1)) != NULL) {
		memcpy(copy, json, json_len + 1);
		*gen = json_gen;
	}
	pthread_mutex_unlock(&lock);
	return copy;
}

void tft_mpi_clock_fini(void)
{
	if (have_priv && MREAL(PMPI_Comm_free))
		tft_mpi_real_fns.PMPI_Comm_free(&priv);
	have_priv = 0;
}

#endif /* TFT_HAVE_MPI */
