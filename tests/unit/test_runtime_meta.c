/* SPDX-License-Identifier: MIT */
/*
 * tft_set_meta: values reach the session's meta table through the drain
 * (after a flush, at shutdown), a later value replaces an earlier one, bad
 * and reserved keys are refused, nothing is accepted while no session runs,
 * several threads
 * may set values while the drain commits, and a fork child neither
 * deadlocks nor writes the parent's values.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "store/session.h"
#include "tap.h"
#include "tftracer/tftracer.h"

static char tmpdir[256];

static const char *tpath(const char *name)
{
	static char buf[4][512];
	static int k;
	char *p = buf[k++ & 3];

	snprintf(p, 512, "%s/%s", tmpdir, name);
	return p;
}

static int start(const char *path)
{
	struct tft_config c;

	tft_config_init(&c);
	c.exit_timeout_ms = 60000; /* a loaded machine */
	c.session_path = path;
	c.enabled = false;
	return tft_init(&c);
}

/* A meta value of a session file, copied (NULL when unset or unreadable). */
static char *meta_of(const char *path, const char *key)
{
	struct tft_error err;
	struct tft_session *s = tft_session_open(path, &err);
	const char *v;
	char *out;

	if (!s)
		return NULL;
	v = tft_session_meta(s, key);
	out = v ? strdup(v) : NULL;
	tft_session_close(s);
	return out;
}

static void test_refused(void)
{
	char big[200];

	is_int(tft_set_meta("model", "x"), TFT_EAGAIN, "no session: refused (TFT_EAGAIN)");
	is_int(start(tpath("refused.tft")), 0, "init");
	is_int(tft_set_meta(NULL, "x"), TFT_EINVAL, "NULL key");
	is_int(tft_set_meta("k", NULL), TFT_EINVAL, "NULL value");
	is_int(tft_set_meta("", "x"), TFT_EINVAL, "empty key");
	memset(big, 'k', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	is_int(tft_set_meta(big, "x"), TFT_EINVAL, "a key over 127 bytes");
	big[127] = 0;
	is_int(tft_set_meta(big, "x"), 0, "a key of 127 bytes");
	is_int(tft_set_meta("format", "mine"), TFT_EINVAL, "reserved key: format");
	is_int(tft_set_meta("dropped", "0"), TFT_EINVAL, "reserved key: dropped");
	is_int(tft_set_meta("clock", "x"), TFT_EINVAL, "reserved key: clock");
	is_int(tft_shutdown(), 0, "shutdown");
	{
		char *f = meta_of(tpath("refused.tft"), "format");
		char *d = meta_of(tpath("refused.tft"), big);
		is_str(f, "tftracer-runtime", "the session's own format stays");
		is_str(d, "x", "the 127-byte key was written");
		free(f);
		free(d);
	}
}

static void test_flush_replace_shutdown(void)
{
	const char *p = tpath("values.tft");
	char *v;

	is_int(start(p), 0, "init");
	is_int(tft_set_meta("model_params", "{\"v\":1}"), 0, "set");
	is_int(tft_flush(10000), 0, "flush");
	v = meta_of(p, "model_params");
	is_str(v, "{\"v\":1}", "in the file after a flush (read while the session runs)");
	free(v);
	is_int(tft_set_meta("model_params", "{\"v\":2}"), 0, "set again");
	is_int(tft_set_meta("model_params", "{\"v\":3}"), 0, "and again before the drain ran");
	is_int(tft_set_meta("run", "b"), 0, "another key");
	is_int(tft_shutdown(), 0, "shutdown (no flush before it)");
	v = meta_of(p, "model_params");
	is_str(v, "{\"v\":3}", "the last value, written by the final commit");
	free(v);
	v = meta_of(p, "run");
	is_str(v, "b", "the other key too");
	free(v);
	is_int(tft_set_meta("late", "x"), TFT_EAGAIN, "after shutdown: refused");
}

#define NTHREADS 4
#define NSETS 2000

static void *setter(void *arg)
{
	long id = (long)arg;
	char key[32], val[64];

	snprintf(key, sizeof(key), "thread%ld", id);
	for (int i = 0; i < NSETS; i++) {
		snprintf(val, sizeof(val), "%ld:%d", id, i);
		while (tft_set_meta(key, val) == TFT_EAGAIN) /* (64 keys at most: never here) */
			usleep(100);
	}
	return NULL;
}

static void test_threads(void)
{
	const char *p = tpath("threads.tft");
	pthread_t th[NTHREADS];
	int good = 1;

	is_int(start(p), 0, "init");
	for (long i = 0; i < NTHREADS; i++)
		pthread_create(&th[i], NULL, setter, (void *)i);
	for (int i = 0; i < 20; i++)
		tft_flush(10000); /* commits racing the setters */
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);
	is_int(tft_shutdown(), 0, "shutdown");
	for (long i = 0; i < NTHREADS; i++) {
		char key[32], want[64], *v;
		snprintf(key, sizeof(key), "thread%ld", i);
		snprintf(want, sizeof(want), "%ld:%d", i, NSETS - 1);
		v = meta_of(p, key);
		if (!v || strcmp(v, want) != 0) {
			good = 0;
			printf("#   %s = %s, want %s\n", key, v ? v : "(none)", want);
		}
		free(v);
	}
	ok(good, "%d threads x %d values while the drain commits: each key's last value", NTHREADS,
	   NSETS);
}

static void test_fork(void)
{
	const char *p = tpath("fork.tft");
	pid_t pid;
	int status = -1;
	char *v;

	is_int(start(p), 0, "init");
	is_int(tft_set_meta("parent", "1"), 0, "parent sets a value");
	pid = fork();
	if (pid == 0) {
		/* the child runs no session: refused at once, no deadlock */
		int rc = tft_set_meta("child", "1");
		_exit(rc == TFT_EAGAIN ? 0 : 3);
	}
	waitpid(pid, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "fork child: tft_set_meta refused (status %d)",
	   status);
	is_int(tft_shutdown(), 0, "shutdown");
	v = meta_of(p, "parent");
	is_str(v, "1", "the parent's value is in the parent's session");
	free(v);
	v = meta_of(p, "child");
	ok(v == NULL, "nothing from the child");
	free(v);
}

int main(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/tft-test-meta-XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	test_refused();
	test_flush_replace_shutdown();
	test_threads();
	test_fork();
	{
		char cmd[600];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd) != 0)
			fprintf(stderr, "# could not remove %s\n", tmpdir);
	}
	return done_testing();
}
