/* SPDX-License-Identifier: MIT */
/*
 * Consistent copies of a session (server/live.h, tft_live_save and
 * tft_session_save_copy): a runtime flush, then the SQLite backup API.
 */
#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/rt.h"
#include "server/live_int.h"

int tft_session_save_copy(const char *src, const char *path, uint64_t *bytes,
			  struct tft_error *err)
{
	sqlite3 *in = NULL, *out = NULL;
	sqlite3_backup *bk;
	size_t n = path ? strlen(path) : 0;
	struct stat sb;
	int fd, rc = 0;

	if (n < 5 || strcmp(path + n - 4, ".tft") != 0)
		return tft_error_set(err, TFT_EINVAL, -1, "the path must end in .tft");
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return tft_error_set(err, errno == EEXIST ? TFT_EINVAL : TFT_EIO, -1, "cannot create %s: %s",
				     path, errno == EEXIST ? "the file exists" : strerror(errno));
	close(fd);
	if (sqlite3_open_v2(src, &in, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		rc = tft_error_set(err, TFT_EIO, -1, "cannot open %s: %s", src,
				   in ? sqlite3_errmsg(in) : "out of memory");
		goto out;
	}
	sqlite3_busy_timeout(in, 2000);
	if (sqlite3_open_v2(path, &out, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
		rc = tft_error_set(err, TFT_EIO, -1, "cannot open %s: %s", path,
				   out ? sqlite3_errmsg(out) : "out of memory");
		goto out;
	}
	/* One step: a read transaction on the source, so the copy is one commit's snapshot. */
	bk = sqlite3_backup_init(out, "main", in, "main");
	if (!bk) {
		rc = tft_error_set(err, TFT_EIO, -1, "backup: %s", sqlite3_errmsg(out));
		goto out;
	}
	n = (size_t)sqlite3_backup_step(bk, -1);
	sqlite3_backup_finish(bk);
	if ((int)n != SQLITE_DONE) {
		rc = tft_error_set(err, TFT_EIO, -1, "copying the session: %s", sqlite3_errstr((int)n));
		goto out;
	}
	/* The copy is a plain file (no -wal side file needed to read it). */
	if (sqlite3_exec(out, "PRAGMA journal_mode=DELETE", NULL, NULL, NULL) != SQLITE_OK) {
		rc = tft_error_set(err, TFT_EIO, -1, "finishing the copy: %s", sqlite3_errmsg(out));
		goto out;
	}
out:
	if (in)
		sqlite3_close(in);
	if (out && sqlite3_close(out) != SQLITE_OK && !rc)
		rc = tft_error_set(err, TFT_EIO, -1, "closing the copy");
	if (rc) {
		unlink(path);
		return rc;
	}
	if (bytes)
		*bytes = stat(path, &sb) == 0 ? (uint64_t)sb.st_size : 0;
	return 0;
}

int tft_live_save(struct tft_live *lv, const char *path, char *out, size_t out_size,
		  uint64_t *bytes, struct tft_error *err)
{
	char def[4200], src[sizeof(lv->path)];
	bool live;
	int rc;

	pthread_mutex_lock(&lv->agg_lock); /* tft_live_serve() may switch the file meanwhile */
	snprintf(src, sizeof(src), "%s", lv->path);
	live = __atomic_load_n(&lv->live_mode, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&lv->agg_lock);
	if (!path) {
		size_t n = strlen(src);
		if (n > 4 && strcmp(src + n - 4, ".tft") == 0)
			n -= 4;
		snprintf(def, sizeof(def), "%.*s-%lld.tft", (int)n, src, (long long)time(NULL));
		path = def;
	}
	if (live)
		tft_flush(1000); /* best effort: what the job did until now */
	rc = tft_session_save_copy(src, path, bytes, err);
	if (rc == 0 && out)
		snprintf(out, out_size, "%s", path);
	return rc;
}
