/* SPDX-License-Identifier: MIT */
/*
 * The write-combining VFS (wc_vfs.h). Every method of the default VFS and of
 * its files is forwarded, except that a main database file opened through
 * it gathers writes in a window: TFT_WC_VFS_BUF_BYTES of the file, held in
 * memory with a bit per 512-byte block saying which blocks were written.
 *
 *   - A write of whole blocks inside the window goes into it. SQLite writes
 *     whole pages, and a bulk import's pages mostly go out near each other:
 *     a blob's overflow pages, then the leaf page just before them (so the
 *     window starts a little before the first write it gets).
 *   - Any other write, and every call that sizes, syncs, truncates, locks,
 *     unlocks or asks a file control of the file, first writes the window
 *     out: each run of written blocks through the base file's xWrite, 64
 *     KiB at a time. The file and what the base VFS sees then agree. (A
 *     write that is not whole blocks, or larger than the window, then goes
 *     to the file at once, also 64 KiB at a time.)
 *   - A read of blocks all written in the window is answered from it; a
 *     read that overlaps written blocks otherwise writes the window out
 *     first, and so does one that comes up short while the window holds
 *     writes (the file would be longer: a hole reads as zeros, not short).
 *
 * Nothing reaches the window's part of the file while it holds writes, and
 * a block holds the last bytes written to it, so the file is the one the
 * default VFS writes, byte for byte. Temporary files and journals are not
 * buffered: they are read back soon after they are written.
 *
 * Errors: a write that fails when the window goes out is returned by the
 * call that wrote it out, and from then on by every call that reads or
 * writes the file (the bytes are gone, the file is not what SQLite thinks).
 * SQLite ignores the result of xClose, but the window is always empty by
 * then: each transaction ends in SQLITE_FCNTL_COMMIT_PHASETWO and xUnlock,
 * whose errors fail the COMMIT.
 *
 * One thread at a time uses a connection's file (SQLite's connection
 * mutex), so a file needs no lock of its own.
 */
#include <errno.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdint.h>
#include <string.h>

#include "core/status.h"
#include "store/wc_vfs.h"

#define WC_BLOCK 512 /* SQLite's smallest page */
#define WC_NBLOCKS (TFT_WC_VFS_BUF_BYTES / WC_BLOCK)
_Static_assert(TFT_WC_VFS_BUF_BYTES % (64 * WC_BLOCK) == 0, "the window is whole words of blocks");
/* The window starts this far before the write that opens it (a leaf page before its overflow). */
#define WC_LEAD (TFT_WC_VFS_BUF_BYTES / 16)

/*
 * The most one xWrite of the base file is given: the unix VFS keeps only the
 * low 17 bits of a write's length (a 128 KiB write would write nothing), and
 * 64 KiB is SQLite's largest page, which every VFS writes whole.
 */
#define WC_WRITE_MAX 65536

struct wc_file {
	sqlite3_file io;    /* first: what SQLite sees; io.pMethods = &wc_methods */
	sqlite3_file *real; /* the base VFS's file, in the same allocation after this one */
	unsigned char *buf; /* owned (sqlite3_malloc): the window; NULL: calls pass straight through */
	sqlite3_int64 off;  /* file offset of buf[0] (a multiple of WC_BLOCK) */
	int lo, hi;         /* written blocks are in [lo, hi); lo == hi: the window is empty */
	int failed;         /* sticky: the SQLite code of a write-out that failed, 0 */
	int failed_errno;   /* its errno (ENOSPC, EFBIG), given back with it */
	uint64_t dirty[WC_NBLOCKS / 64]; /* bit b: block b of the window was written */
};

static sqlite3_vfs wc_vfs;
static pthread_once_t wc_once = PTHREAD_ONCE_INIT;
static int wc_status; /* tft_wc_vfs_register()'s result, set once */

#define BASE_VFS(v) ((sqlite3_vfs *)(v)->pAppData)
#define REAL(f) (((struct wc_file *)(f))->real)
#define RM(f) (REAL(f)->pMethods)

static int is_dirty(const struct wc_file *f, int b)
{
	return (int)(f->dirty[b >> 6] >> (b & 63)) & 1;
}

/*
 * The failed write-out's code, again, with errno as that write left it: SQLite
 * asks the VFS for errno right after a failed call (xGetLastError), and the
 * user's message ("disk I/O error (File too large)") comes from it.
 */
static int sticky(const struct wc_file *f)
{
	errno = f->failed_errno;
	return f->failed;
}

/* Writes p[0..n) at off through the base file, WC_WRITE_MAX at a time. */
static int write_out(struct wc_file *f, const unsigned char *p, int n, sqlite3_int64 off)
{
	int rc = SQLITE_OK;

	for (int i = 0; i < n && rc == SQLITE_OK; i += WC_WRITE_MAX)
		rc = f->real->pMethods->xWrite(f->real, p + i, n - i < WC_WRITE_MAX ? n - i : WC_WRITE_MAX,
					       off + i);
	return rc;
}

/* Writes the window's runs of written blocks out; the window is empty afterwards either way. */
static int wc_flush(struct wc_file *f)
{
	int rc = SQLITE_OK;

	if (f->failed)
		return sticky(f);
	if (f->lo == f->hi)
		return SQLITE_OK;
	for (int b = f->lo; b < f->hi && rc == SQLITE_OK;) {
		int e = b;
		if (!is_dirty(f, b)) {
			b++;
			continue;
		}
		while (e < f->hi && is_dirty(f, e))
			e++;
		rc = write_out(f, f->buf + b * WC_BLOCK, (e - b) * WC_BLOCK, f->off + b * WC_BLOCK);
		b = e;
	}
	memset(f->dirty, 0, sizeof(f->dirty));
	f->lo = f->hi = 0;
	if (rc != SQLITE_OK) {
		f->failed = rc;
		f->failed_errno = errno;
	}
	return rc;
}

static int wc_close(sqlite3_file *p)
{
	struct wc_file *f = (struct wc_file *)p;
	int rc = f->buf ? wc_flush(f) : SQLITE_OK;
	int rc2 = f->real->pMethods->xClose(f->real);

	sqlite3_free(f->buf);
	f->buf = NULL;
	return rc != SQLITE_OK ? rc : rc2;
}

static int wc_read(sqlite3_file *p, void *out, int amt, sqlite3_int64 off)
{
	struct wc_file *f = (struct wc_file *)p;
	int rc;

	if (f->buf && f->failed)
		return sticky(f);
	if (f->buf && f->lo < f->hi && off < f->off + (sqlite3_int64)f->hi * WC_BLOCK &&
	    off + amt > f->off + (sqlite3_int64)f->lo * WC_BLOCK) {
		int all = off >= f->off && off + amt <= f->off + TFT_WC_VFS_BUF_BYTES;
		int b0 = all ? (int)((off - f->off) / WC_BLOCK) : 0;
		int b1 = all ? (int)((off + amt - 1 - f->off) / WC_BLOCK) : -1;

		for (int b = b0; b <= b1 && all; b++)
			all = is_dirty(f, b);
		if (all) {
			memcpy(out, f->buf + (off - f->off), (size_t)amt);
			return SQLITE_OK;
		}
		/* Partly in the window: read the file once the window is in it. */
		rc = wc_flush(f);
		if (rc != SQLITE_OK)
			return rc;
	}
	rc = RM(p)->xRead(REAL(p), out, amt, off);
	if (rc == SQLITE_IOERR_SHORT_READ && f->buf && f->lo < f->hi) {
		/* A hole below what the window holds is zeros, but not a short read: ask again. */
		rc = wc_flush(f);
		if (rc == SQLITE_OK)
			rc = RM(p)->xRead(REAL(p), out, amt, off);
	}
	return rc;
}

static int wc_write(sqlite3_file *p, const void *data, int amt, sqlite3_int64 off)
{
	struct wc_file *f = (struct wc_file *)p;
	int rc, b0, b1;

	if (!f->buf)
		return RM(p)->xWrite(REAL(p), data, amt, off);
	if (f->failed)
		return sticky(f);
	/* Not whole blocks, or larger than the window (SQLite's pages are 64 KiB at most). */
	if (off % WC_BLOCK || amt % WC_BLOCK || amt <= 0 || amt > TFT_WC_VFS_BUF_BYTES - WC_LEAD) {
		rc = wc_flush(f);
		return rc != SQLITE_OK ? rc : write_out(f, data, amt, off);
	}
	if (f->lo < f->hi && (off < f->off || off + amt > f->off + TFT_WC_VFS_BUF_BYTES)) {
		/* Outside the window: what it holds goes first, in SQLite's order. */
		rc = wc_flush(f);
		if (rc != SQLITE_OK)
			return rc;
	}
	if (f->lo == f->hi)
		f->off = off > WC_LEAD ? off - WC_LEAD : 0;
	b0 = (int)((off - f->off) / WC_BLOCK);
	b1 = b0 + amt / WC_BLOCK;
	memcpy(f->buf + (off - f->off), data, (size_t)amt);
	for (int b = b0; b < b1; b++)
		f->dirty[b >> 6] |= (uint64_t)1 << (b & 63);
	if (f->lo == f->hi) {
		f->lo = b0;
		f->hi = b1;
	} else {
		f->lo = b0 < f->lo ? b0 : f->lo;
		f->hi = b1 > f->hi ? b1 : f->hi;
	}
	return SQLITE_OK;
}

/* The calls below see the file as it is on disk: the buffer goes out first. */
#define FLUSH_FIRST(p)                                                                   \
	do {                                                                             \
		struct wc_file *f_ = (struct wc_file *)(p);                              \
		if (f_->buf) {                                                           \
			int rc_ = wc_flush(f_);                                          \
			if (rc_ != SQLITE_OK)                                            \
				return rc_;                                              \
		}                                                                        \
	} while (0)

static int wc_truncate(sqlite3_file *p, sqlite3_int64 size)
{
	FLUSH_FIRST(p);
	return RM(p)->xTruncate(REAL(p), size);
}

static int wc_sync(sqlite3_file *p, int flags)
{
	FLUSH_FIRST(p);
	return RM(p)->xSync(REAL(p), flags);
}

static int wc_file_size(sqlite3_file *p, sqlite3_int64 *size)
{
	FLUSH_FIRST(p);
	return RM(p)->xFileSize(REAL(p), size);
}

/* Another connection may read the file once a lock changes: it must be whole. */
static int wc_lock(sqlite3_file *p, int lock)
{
	FLUSH_FIRST(p);
	return RM(p)->xLock(REAL(p), lock);
}

/* Unlocks even if the write-out failed: SQLite's idea of the lock must hold. */
static int wc_unlock(sqlite3_file *p, int lock)
{
	struct wc_file *f = (struct wc_file *)p;
	int rc = f->buf ? wc_flush(f) : SQLITE_OK;
	int rc2 = RM(p)->xUnlock(REAL(p), lock);

	return rc != SQLITE_OK ? rc : rc2;
}

static int wc_check_reserved(sqlite3_file *p, int *out)
{
	FLUSH_FIRST(p);
	return RM(p)->xCheckReservedLock(REAL(p), out);
}

/*
 * Every file control writes the buffer out first, SQLITE_FCNTL_COMMIT_PHASETWO
 * included: at the end of each transaction, it reports a failed write-out.
 */
static int wc_file_control(sqlite3_file *p, int op, void *arg)
{
	FLUSH_FIRST(p);
	return RM(p)->xFileControl(REAL(p), op, arg);
}

static int wc_sector_size(sqlite3_file *p)
{
	return RM(p)->xSectorSize(REAL(p));
}

static int wc_device_characteristics(sqlite3_file *p)
{
	return RM(p)->xDeviceCharacteristics(REAL(p));
}

/*
 * Shared memory (WAL) and memory mapping, versions 2 and 3 of the methods.
 * The default VFS has both; a base without them answers as SQLite would.
 */
static int wc_shm_map(sqlite3_file *p, int pg, int pgsz, int extend, void volatile **pp)
{
	if (RM(p)->iVersion < 2 || !RM(p)->xShmMap)
		return SQLITE_IOERR_SHMMAP;
	return RM(p)->xShmMap(REAL(p), pg, pgsz, extend, pp);
}

static int wc_shm_lock(sqlite3_file *p, int offset, int n, int flags)
{
	if (RM(p)->iVersion < 2 || !RM(p)->xShmLock)
		return SQLITE_IOERR_SHMLOCK;
	return RM(p)->xShmLock(REAL(p), offset, n, flags);
}

static void wc_shm_barrier(sqlite3_file *p)
{
	if (RM(p)->iVersion >= 2 && RM(p)->xShmBarrier)
		RM(p)->xShmBarrier(REAL(p));
}

static int wc_shm_unmap(sqlite3_file *p, int del)
{
	if (RM(p)->iVersion < 2 || !RM(p)->xShmUnmap)
		return SQLITE_OK;
	return RM(p)->xShmUnmap(REAL(p), del);
}

/*
 * A buffered file maps nothing (*pp NULL: SQLite reads the page with xRead
 * instead): a mapped page would not show the buffer.
 */
static int wc_fetch(sqlite3_file *p, sqlite3_int64 off, int amt, void **pp)
{
	*pp = NULL;
	if (((struct wc_file *)p)->buf || RM(p)->iVersion < 3 || !RM(p)->xFetch)
		return SQLITE_OK;
	return RM(p)->xFetch(REAL(p), off, amt, pp);
}

static int wc_unfetch(sqlite3_file *p, sqlite3_int64 off, void *pg)
{
	if (RM(p)->iVersion < 3 || !RM(p)->xUnfetch)
		return SQLITE_OK;
	return RM(p)->xUnfetch(REAL(p), off, pg);
}

static const sqlite3_io_methods wc_methods = {
	.iVersion = 3,
	.xClose = wc_close,
	.xRead = wc_read,
	.xWrite = wc_write,
	.xTruncate = wc_truncate,
	.xSync = wc_sync,
	.xFileSize = wc_file_size,
	.xLock = wc_lock,
	.xUnlock = wc_unlock,
	.xCheckReservedLock = wc_check_reserved,
	.xFileControl = wc_file_control,
	.xSectorSize = wc_sector_size,
	.xDeviceCharacteristics = wc_device_characteristics,
	.xShmMap = wc_shm_map,
	.xShmLock = wc_shm_lock,
	.xShmBarrier = wc_shm_barrier,
	.xShmUnmap = wc_shm_unmap,
	.xFetch = wc_fetch,
	.xUnfetch = wc_unfetch,
};

static int wc_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *p, int flags, int *out_flags)
{
	struct wc_file *f = (struct wc_file *)p;
	int rc;

	memset(f, 0, sizeof(*f));
	f->real = (sqlite3_file *)(f + 1);
	rc = BASE_VFS(vfs)->xOpen(BASE_VFS(vfs), name, f->real, flags, out_flags);
	/* SQLite closes a file whose pMethods is set, even when xOpen failed. */
	f->io.pMethods = f->real->pMethods ? &wc_methods : NULL;
	if (rc != SQLITE_OK || !f->real->pMethods)
		return rc;
	/* No buffer, no harm: the file is then written page by page. */
	if (flags & SQLITE_OPEN_MAIN_DB)
		f->buf = sqlite3_malloc(TFT_WC_VFS_BUF_BYTES);
	return SQLITE_OK;
}

/* ---- the rest of the VFS is the base's -------------------------------------- */

static int wc_delete(sqlite3_vfs *v, const char *name, int sync_dir)
{
	return BASE_VFS(v)->xDelete(BASE_VFS(v), name, sync_dir);
}

static int wc_access(sqlite3_vfs *v, const char *name, int flags, int *out)
{
	return BASE_VFS(v)->xAccess(BASE_VFS(v), name, flags, out);
}

static int wc_full_pathname(sqlite3_vfs *v, const char *name, int n, char *out)
{
	return BASE_VFS(v)->xFullPathname(BASE_VFS(v), name, n, out);
}

static void *wc_dl_open(sqlite3_vfs *v, const char *name)
{
	return BASE_VFS(v)->xDlOpen(BASE_VFS(v), name);
}

static void wc_dl_error(sqlite3_vfs *v, int n, char *msg)
{
	BASE_VFS(v)->xDlError(BASE_VFS(v), n, msg);
}

static void (*wc_dl_sym(sqlite3_vfs *v, void *h, const char *sym))(void)
{
	return BASE_VFS(v)->xDlSym(BASE_VFS(v), h, sym);
}

static void wc_dl_close(sqlite3_vfs *v, void *h)
{
	BASE_VFS(v)->xDlClose(BASE_VFS(v), h);
}

static int wc_randomness(sqlite3_vfs *v, int n, char *out)
{
	return BASE_VFS(v)->xRandomness(BASE_VFS(v), n, out);
}

static int wc_sleep(sqlite3_vfs *v, int us)
{
	return BASE_VFS(v)->xSleep(BASE_VFS(v), us);
}

static int wc_current_time(sqlite3_vfs *v, double *out)
{
	return BASE_VFS(v)->xCurrentTime(BASE_VFS(v), out);
}

static int wc_get_last_error(sqlite3_vfs *v, int n, char *out)
{
	return BASE_VFS(v)->xGetLastError ? BASE_VFS(v)->xGetLastError(BASE_VFS(v), n, out) : 0;
}

static int wc_current_time_i64(sqlite3_vfs *v, sqlite3_int64 *out)
{
	return BASE_VFS(v)->xCurrentTimeInt64(BASE_VFS(v), out);
}

static int wc_set_system_call(sqlite3_vfs *v, const char *name, sqlite3_syscall_ptr fn)
{
	return BASE_VFS(v)->xSetSystemCall(BASE_VFS(v), name, fn);
}

static sqlite3_syscall_ptr wc_get_system_call(sqlite3_vfs *v, const char *name)
{
	return BASE_VFS(v)->xGetSystemCall(BASE_VFS(v), name);
}

static const char *wc_next_system_call(sqlite3_vfs *v, const char *name)
{
	return BASE_VFS(v)->xNextSystemCall(BASE_VFS(v), name);
}

static void wc_register_once(void)
{
	sqlite3_vfs *base = sqlite3_vfs_find(NULL);

	if (!base) {
		wc_status = TFT_EIO;
		return;
	}
	wc_vfs.iVersion = base->iVersion;
	wc_vfs.szOsFile = (int)sizeof(struct wc_file) + base->szOsFile;
	wc_vfs.mxPathname = base->mxPathname;
	wc_vfs.zName = TFT_WC_VFS_NAME;
	wc_vfs.pAppData = base;
	wc_vfs.xOpen = wc_open;
	wc_vfs.xDelete = wc_delete;
	wc_vfs.xAccess = wc_access;
	wc_vfs.xFullPathname = wc_full_pathname;
	wc_vfs.xDlOpen = base->xDlOpen ? wc_dl_open : NULL;
	wc_vfs.xDlError = base->xDlError ? wc_dl_error : NULL;
	wc_vfs.xDlSym = base->xDlSym ? wc_dl_sym : NULL;
	wc_vfs.xDlClose = base->xDlClose ? wc_dl_close : NULL;
	wc_vfs.xRandomness = wc_randomness;
	wc_vfs.xSleep = wc_sleep;
	wc_vfs.xCurrentTime = wc_current_time;
	wc_vfs.xGetLastError = wc_get_last_error;
	/* Version 2 and 3 methods only where the base has them. */
	if (base->iVersion >= 2 && base->xCurrentTimeInt64)
		wc_vfs.xCurrentTimeInt64 = wc_current_time_i64;
	if (base->iVersion >= 3) {
		wc_vfs.xSetSystemCall = base->xSetSystemCall ? wc_set_system_call : NULL;
		wc_vfs.xGetSystemCall = base->xGetSystemCall ? wc_get_system_call : NULL;
		wc_vfs.xNextSystemCall = base->xNextSystemCall ? wc_next_system_call : NULL;
	}
	wc_status = sqlite3_vfs_register(&wc_vfs, 0) == SQLITE_OK ? 0 : TFT_EIO;
}

int tft_wc_vfs_register(void)
{
	pthread_once(&wc_once, wc_register_once);
	return wc_status;
}
