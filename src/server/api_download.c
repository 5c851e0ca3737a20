/* SPDX-License-Identifier: MIT */
/*
 * GET /download/session (the session file, sent from its descriptor, whole
 * or as the byte range the request asks for: tft_http_reply_file) and
 * GET /download/chrome (the session as Chrome trace JSON, streamed: an
 * exporter thread writes into a pipe that the response reads, chunked, so
 * the document is never held in memory).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "export/export_chrome.h"
#include "server/api.h"

#define PIPE_BYTES (1 << 20)

/* "dir/run.tft" -> "run.tft" + suffix, or `fallback` when it has unsafe characters. */
static void download_name(const char *path, const char *suffix, const char *fallback, char *out,
			  size_t size)
{
	const char *base = path ? strrchr(path, '/') : NULL;

	base = base ? base + 1 : path;
	if (base && *base && strlen(base) + strlen(suffix) < size && strlen(base) < 128) {
		const char *p;
		for (p = base; *p; p++)
			if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			      (*p >= '0' && *p <= '9') || *p == '.' || *p == '-' || *p == '_'))
				break;
		if (!*p && base[0] != '.') {
			size_t bl = strlen(base), sl = strlen(suffix);
			memcpy(out, base, bl);
			memcpy(out + bl, suffix, sl + 1);
			return;
		}
	}
	snprintf(out, size, "%s", fallback);
}

int tft_api_download_session(struct tft_http_req *r)
{
	const char *path = r->srv->pool.src.path;
	char name[160];
	struct stat st;
	int fd;

	if (!path)
		return tft_http_reply_error(r, 404, "this server has no session file to send");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return tft_http_reply_error(r, 500, "cannot open the session file");
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return tft_http_reply_error(r, 500, "cannot read the session file");
	}
	download_name(path, "", "session.tft", name, sizeof(name));
	return tft_http_reply_file(r, fd, (uint64_t)st.st_size, "application/octet-stream", name);
}

struct export_job {
	struct tft_server *srv;   /* borrowed */
	struct tft_session *sess; /* owned: a private reader */
	int fd;                   /* owned: write end of the pipe */
};

/* Write everything to fd (a pipe or a file); EPIPE when the client went away. */
static int fd_sink(void *ctx, const void *buf, size_t len)
{
	int fd = *(const int *)ctx;
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return TFT_EIO;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int export_to_fd(struct tft_session *s, int *fd, struct tft_error *err)
{
	struct tft_json_writer w;
	int rc = tft_json_write_init_sink(&w, fd_sink, fd);

	if (rc == 0) {
		rc = tft_export_chrome(s, &w, NULL, err);
		if (rc == 0)
			rc = tft_json_write_finish(&w);
	}
	tft_json_write_fini(&w);
	return rc;
}

static void *export_main(void *arg)
{
	struct export_job *job = arg;
	struct tft_error err;
	sigset_t set;

	/* A client that disconnects closes the read end: get EPIPE, not a SIGPIPE. */
	sigemptyset(&set);
	sigaddset(&set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	tft_error_clear(&err);
	/* On failure the stream just ends early: the client sees a truncated document. */
	export_to_fd(job->sess, &job->fd, &err);
	close(job->fd);
	tft_pool_close_private(&job->srv->pool, job->sess);
	tft_http_job_end(job->srv);
	free(job);
	return NULL;
}

/* Stream from an exporter thread with a reader of its own, through a pipe. */
static int download_streamed(struct tft_http_req *r, const char *name)
{
	struct tft_server *srv = r->srv;
	struct export_job *job = NULL;
	struct tft_error err;
	pthread_attr_t attr;
	pthread_t th;
	int fds[2] = { -1, -1 }, rc;

	if (!tft_http_job_begin(srv))
		return tft_http_reply_error(r, 503, "too many downloads in progress; try again");
	tft_error_clear(&err);
	job = calloc(1, sizeof(*job));
	if (!job) {
		rc = tft_http_reply_error(r, 503, "out of memory");
		goto fail;
	}
	job->srv = srv;
	job->sess = tft_pool_open_private(&srv->pool, &err);
	if (!job->sess) {
		rc = tft_http_reply_status(r, err.code ? err.code : TFT_EIO, &err);
		goto fail;
	}
	if (pipe2(fds, O_CLOEXEC) != 0) {
		rc = tft_http_reply_error(r, 503, "cannot create a pipe");
		goto fail;
	}
	fcntl(fds[1], F_SETPIPE_SZ, PIPE_BYTES); /* fewer wake-ups; best effort */
	job->fd = fds[1];
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	rc = pthread_create(&th, &attr, export_main, job);
	pthread_attr_destroy(&attr);
	if (rc != 0) {
		rc = tft_http_reply_error(r, 503, "cannot start the export");
		goto fail;
	}
	/* The job owns fds[1], the session and the job count now. */
	return tft_http_reply_stream(r, fds[0], "application/json; charset=utf-8", name);
fail:
	if (fds[0] >= 0) {
		close(fds[0]);
		close(fds[1]);
	}
	if (job && job->sess)
		tft_pool_close_private(&srv->pool, job->sess);
	free(job);
	tft_http_job_end(srv);
	return rc;
}

/*
 * Only a borrowed shared session: export under its lock into an unlinked
 * temporary file, then send the file. (Streaming from a thread holding the
 * lock could deadlock: the worker that drains the pipe may itself be
 * waiting for the lock.)
 */
static int download_spooled(struct tft_http_req *r, const char *name)
{
	const char *dir = getenv("TMPDIR");
	struct tft_pool_slot *slot;
	struct tft_error err;
	struct stat st;
	int fd, rc;

	if (!dir || !*dir)
		dir = "/tmp";
	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0)
		return tft_http_reply_error(r, 503, "cannot create a temporary file");
	tft_error_clear(&err);
	slot = tft_pool_acquire(&r->srv->pool, &err);
	if (!slot) {
		close(fd);
		return tft_http_reply_status(r, err.code ? err.code : TFT_EIO, &err);
	}
	rc = export_to_fd(slot->sess, &fd, &err);
	tft_pool_release(slot);
	if (rc != 0 || fstat(fd, &st) != 0 || lseek(fd, 0, SEEK_SET) != 0) {
		close(fd);
		return tft_http_reply_status(r, rc ? rc : TFT_EIO, &err);
	}
	return tft_http_reply_file(r, fd, (uint64_t)st.st_size, "application/json; charset=utf-8", name);
}

int tft_api_download_chrome(struct tft_http_req *r)
{
	char name[160];

	download_name(r->srv->pool.src.path, ".json", "session.json", name, sizeof(name));
	if (tft_pool_can_open(&r->srv->pool))
		return download_streamed(r, name);
	return download_spooled(r, name);
}
