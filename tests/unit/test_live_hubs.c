/* SPDX-License-Identifier: MIT */
/*
 * Two live hubs in one process (server/live.h) keep their imports apart:
 * what a hub's imports made (the producer's processes and tracks, which the
 * hub's next import of the same producer continues) belongs to that hub, not
 * to the process. The same Chrome trace imported through hub A, then hub B,
 * then A again: A's two imports share one track, B's import has its own.
 * An import without a hub remembers nothing: a track of its own too.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "server/live.h"
#include "store/session.h"
#include "tap.h"
#include "tftracer/tftracer.h"

static char tmpdir[256];

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* One kernel on a GPU stream of another process (pid 4242): not the job's own threads. */
static const char trace[] =
	"{\"traceEvents\":["
	"{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":4242,\"args\":{\"name\":\"gpu0\"}},"
	"{\"ph\":\"X\",\"name\":\"kern\",\"cat\":\"kernel\",\"pid\":4242,\"tid\":7,\"ts\":10,\"dur\":5}"
	"]}";

static int import_via(struct tft_live *lv, int64_t t0)
{
	struct tft_live_import im = { .source = TFT_LIVE_SRC_TORCH, .data = trace,
				      .len = sizeof(trace) - 1, .step = -1, .name = "t",
				      .t0_ns = t0, .t1_ns = t0 + 1000000 };
	struct tft_error err;
	uint64_t events = 0;
	int rc;

	tft_error_clear(&err);
	rc = tft_live_import(lv, &im, &events, &err);
	if (rc)
		printf("# import: %s\n", err.msg);
	return rc == 0 && events == 1 ? 0 : -1;
}

/* Slices on each track of the pid-4242 process(es) named "kern"'s track, in track order. */
static int kern_tracks(const char *path, uint64_t *slices, int max)
{
	struct tft_error err;
	struct tft_session *s = tft_session_open(path, &err);
	int n = 0;

	if (!s) {
		printf("# open: %s\n", err.msg);
		return -1;
	}
	for (uint32_t i = 0; i < tft_session_track_count(s); i++) {
		const struct tft_track *t = tft_session_track(s, i);
		const struct tft_process *p = t ? tft_session_process(s, t->process) : NULL;
		if (p && p->pid == 4242 && t->slices > 0 && n < max)
			slices[n++] = t->slices;
	}
	tft_session_close(s);
	return n;
}

int main(void)
{
	struct tft_live_opts o;
	struct tft_live *a, *b;
	struct tft_error err;
	struct tft_config c;
	char path[512];
	uint64_t sl[8] = { 0 };
	int64_t t;
	int n;

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/tft-live-hubs-XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(path, sizeof(path), "%s/live.tft", tmpdir);
	tft_config_init(&c);
	c.session_path = path;
	c.exit_timeout_ms = 60000;
	if (!ok(tft_init(&c) == 0, "runtime started"))
		return done_testing();
	tft_live_opts_init(&o);
	o.server.port = 0;
	o.server.threads = 1;
	tft_error_clear(&err);
	a = tft_live_start(&o, &err);
	b = a ? tft_live_start(&o, &err) : NULL;
	if (!ok(a && b, "two hubs started (%s)", err.msg))
		return done_testing();
	ok(tft_live_port(a) != tft_live_port(b), "each on its own port");

	/* later imports start after the earlier ones end: a track can continue */
	t = mono_ns();
	ok(import_via(a, t) == 0, "import through hub A");
	ok(import_via(b, t + 1000000000LL) == 0, "the same producer through hub B");
	ok(import_via(a, t + 2000000000LL) == 0, "again through hub A");
	tft_flush(1000);
	n = kern_tracks(path, sl, 8);
	is_int(n, 2, "two tracks: A's and B's");
	is_int(sl[0], 2, "A's two imports on A's track");
	is_int(sl[1], 1, "B's import on a track of its own");

	ok(import_via(NULL, t + 3000000000LL) == 0, "an import without a hub");
	tft_flush(1000);
	n = kern_tracks(path, sl, 8);
	is_int(n, 3, "it has a track of its own");

	tft_live_stop(a);
	tft_live_stop(b);
	tft_shutdown();
	{
		char cmd[600];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd) != 0)
			printf("# cannot remove %s\n", tmpdir);
	}
	return done_testing();
}
