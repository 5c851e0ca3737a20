/* SPDX-License-Identifier: MIT */
/*
 * Byte sources: plain files are read straight into the caller's buffer;
 * gzip (magic 1f 8b, possibly several concatenated members) is inflated
 * with zlib from a 256 KiB input buffer; memory blocks are copied out.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "codec/source.h"

#define RAW_BLOCK (256u * 1024u)

struct tft_source {
	int fd;                         /* owned; -1 for memory sources */
	const unsigned char *mem;       /* borrowed; memory source data */
	size_t mem_len, mem_pos;
	bool raw_eof;                   /* no more raw input */
	bool gzip;
	bool z_ready;                   /* inflateInit2 done */
	bool z_done;                    /* last gzip member ended; rest ignored */
	bool z_member_end;              /* between members (EOF here is clean) */
	z_stream z;
	unsigned char *raw;             /* owned; RAW_BLOCK raw input bytes (files) */
	size_t raw_pos, raw_len;        /* unconsumed raw bytes are raw[raw_pos..raw_len) */
	unsigned char *peek;            /* owned; look-ahead, TFT_SOURCE_PEEK_MAX bytes */
	size_t peek_pos, peek_len;
	uint64_t offset;                /* decompressed bytes handed out by read() */
	uint64_t produced;              /* decompressed bytes produced (incl. peek) */
	uint64_t raw_offset, raw_size;
	char name[256];
};

static void set_name(struct tft_source *s, const char *name)
{
	snprintf(s->name, sizeof(s->name), "%s", name ? name : "");
}

/* Raw bytes for a file source: refill s->raw (keeping unconsumed bytes). */
static int raw_refill(struct tft_source *s, struct tft_error *err)
{
	if (s->raw_pos > 0 && s->raw_pos < s->raw_len)
		memmove(s->raw, s->raw + s->raw_pos, s->raw_len - s->raw_pos);
	s->raw_len -= s->raw_pos;
	s->raw_pos = 0;
	while (!s->raw_eof && s->raw_len < RAW_BLOCK) {
		ssize_t n = read(s->fd, s->raw + s->raw_len, RAW_BLOCK - s->raw_len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			tft_error_set(err, TFT_EIO, -1, "read failed: %s", strerror(errno));
			tft_error_set_file(err, s->name);
			return TFT_EIO;
		}
		if (n == 0) {
			s->raw_eof = true;
			break;
		}
		s->raw_len += (size_t)n;
		s->raw_offset += (uint64_t)n;
		break; /* one read per refill keeps latency low; callers loop */
	}
	return 0;
}

/* Make raw input available to zlib (avail_in stays 0 at the end of input). */
static int z_feed(struct tft_source *s, struct tft_error *err)
{
	if (s->z.avail_in > 0)
		return 0;
	if (s->fd < 0) {
		/* memory: hand zlib the next piece (it counts in uInt) */
		size_t n = s->mem_len - s->mem_pos;
		if (n > (1u << 30))
			n = 1u << 30;
		s->z.next_in = (unsigned char *)(uintptr_t)(s->mem + s->mem_pos);
		s->z.avail_in = (uInt)n;
		s->mem_pos += n;
		s->raw_offset += n;
		return 0;
	}
	s->raw_pos = s->raw_len; /* zlib consumed it all */
	int rc = raw_refill(s, err);
	if (rc)
		return rc;
	s->z.next_in = s->raw;
	s->z.avail_in = (uInt)s->raw_len;
	s->raw_pos = s->raw_len;
	return 0;
}

static int bad_gzip(struct tft_source *s, struct tft_error *err, const char *what)
{
	tft_error_set(err, TFT_EFORMAT, (int64_t)s->produced, "%s", what);
	tft_error_set_file(err, s->name);
	return TFT_EFORMAT;
}

/* Inflate into buf; *got = 0 at the end of the last member. */
static int fill_gzip(struct tft_source *s, unsigned char *buf, size_t cap, size_t *got,
		     struct tft_error *err)
{
	size_t out = 0;

	*got = 0;
	if (s->z_done)
		return 0;
	while (out < cap) {
		int rc = z_feed(s, err);
		if (rc)
			return rc;
		if (s->z.avail_in == 0) {
			if (s->z_member_end) {
				s->z_done = true;
				break;
			}
			if (out > 0)
				break; /* report the truncation on the next call */
			return bad_gzip(s, err, "truncated gzip stream: unexpected end of compressed data");
		}
		if (s->z_member_end) {
			/* Another member follows only if it starts with the magic. */
			if (s->z.avail_in < 2 && s->fd < 0 && s->mem_pos < s->mem_len) {
				/* memory pieces: the byte after the lone one is contiguous */
				s->z.avail_in++;
				s->mem_pos++;
				s->raw_offset++;
				continue;
			}
			if (s->z.avail_in < 2 && s->fd >= 0 && !s->raw_eof) {
				/* keep the lone byte and read more behind it */
				s->raw_pos = (size_t)(s->z.next_in - s->raw);
				rc = raw_refill(s, err);
				if (rc)
					return rc;
				s->z.next_in = s->raw;
				s->z.avail_in = (uInt)s->raw_len;
				s->raw_pos = s->raw_len;
				continue;
			}
			if (s->z.avail_in < 2 || s->z.next_in[0] != 0x1f || s->z.next_in[1] != 0x8b) {
				s->z_done = true; /* trailing bytes after the last member: ignored */
				break;
			}
			if (inflateReset(&s->z) != Z_OK)
				return bad_gzip(s, err, "gzip: cannot reset decoder");
			s->z_member_end = false;
		}
		size_t chunk = cap - out;
		if (chunk > (1u << 30))
			chunk = 1u << 30;
		s->z.next_out = buf + out;
		s->z.avail_out = (uInt)chunk;
		int zr = inflate(&s->z, Z_NO_FLUSH);
		size_t made = chunk - s->z.avail_out;
		out += made;
		s->produced += made;
		if (zr == Z_STREAM_END) {
			s->z_member_end = true;
			continue;
		}
		if (zr == Z_OK)
			continue;
		if (zr == Z_BUF_ERROR && s->z.avail_in == 0)
			continue; /* needs input */
		if (zr == Z_MEM_ERROR) {
			tft_error_set(err, TFT_ENOMEM, -1, "gzip: out of memory");
			return TFT_ENOMEM;
		}
		if (out > 0)
			break; /* zlib keeps failing: reported on the next call */
		{
			char msg[128];
			snprintf(msg, sizeof(msg), "corrupt gzip data: %s",
				 s->z.msg ? s->z.msg : "invalid stream");
			return bad_gzip(s, err, msg);
		}
	}
	*got = out;
	return 0;
}

/* Produce decompressed bytes from the underlying input (not the peek buffer). */
static int fill(struct tft_source *s, unsigned char *buf, size_t cap, size_t *got,
		struct tft_error *err)
{
	*got = 0;
	if (cap == 0)
		return 0;
	if (s->gzip)
		return fill_gzip(s, buf, cap, got, err);
	if (s->fd < 0) {
		size_t n = s->mem_len - s->mem_pos;
		if (n > cap)
			n = cap;
		memcpy(buf, s->mem + s->mem_pos, n);
		s->mem_pos += n;
		s->raw_offset += n;
		s->produced += n;
		*got = n;
		return 0;
	}
	/* Plain file: first the bytes read for format detection, then read(2). */
	if (s->raw_pos < s->raw_len) {
		size_t n = s->raw_len - s->raw_pos;
		if (n > cap)
			n = cap;
		memcpy(buf, s->raw + s->raw_pos, n);
		s->raw_pos += n;
		s->produced += n;
		*got = n;
		return 0;
	}
	size_t done = 0;
	while (done < cap && !s->raw_eof) {
		ssize_t n = read(s->fd, buf + done, cap - done);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (done)
				break;
			tft_error_set(err, TFT_EIO, (int64_t)s->produced, "read failed: %s",
				      strerror(errno));
			tft_error_set_file(err, s->name);
			return TFT_EIO;
		}
		if (n == 0) {
			s->raw_eof = true;
			break;
		}
		done += (size_t)n;
		s->raw_offset += (uint64_t)n;
	}
	s->produced += done;
	*got = done;
	return 0;
}

static int start_gzip(struct tft_source *s, struct tft_error *err)
{
	memset(&s->z, 0, sizeof(s->z));
	if (inflateInit2(&s->z, 15 + 16) != Z_OK) {
		tft_error_set(err, TFT_ENOMEM, -1, "gzip: cannot initialise zlib");
		return TFT_ENOMEM;
	}
	s->z_ready = true;
	s->gzip = true;
	if (s->fd < 0) {
		s->mem_pos = 0; /* fed piecewise by z_feed() */
	} else {
		s->z.next_in = s->raw + s->raw_pos;
		s->z.avail_in = (uInt)(s->raw_len - s->raw_pos);
		s->raw_pos = s->raw_len;
	}
	return 0;
}

static struct tft_source *alloc_source(const char *name, struct tft_error *err)
{
	struct tft_source *s = calloc(1, sizeof(*s));

	if (!s) {
		tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
		return NULL;
	}
	s->fd = -1;
	set_name(s, name);
	return s;
}

struct tft_source *tft_source_open_file(const char *path, struct tft_error *err)
{
	struct tft_source *s = alloc_source(path, err);
	struct stat st;

	if (!s)
		return NULL;
	s->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (s->fd < 0) {
		int e = errno;
		tft_error_set(err, e == ENOENT ? TFT_ENOTFOUND : TFT_EIO, -1, "cannot open: %s",
			      strerror(e));
		tft_error_set_file(err, path);
		goto fail;
	}
	if (fstat(s->fd, &st) == 0) {
		if (S_ISDIR(st.st_mode)) {
			tft_error_set(err, TFT_EIO, -1, "is a directory");
			tft_error_set_file(err, path);
			goto fail;
		}
		if (S_ISREG(st.st_mode))
			s->raw_size = (uint64_t)st.st_size;
	}
#ifdef POSIX_FADV_SEQUENTIAL
	(void)posix_fadvise(s->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
	s->raw = malloc(RAW_BLOCK);
	if (!s->raw) {
		tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
		goto fail;
	}
	/* Read until at least the 2 magic bytes are in (or EOF). */
	while (s->raw_len < 2 && !s->raw_eof)
		if (raw_refill(s, err))
			goto fail;
	if (s->raw_len >= 2 && s->raw[0] == 0x1f && s->raw[1] == 0x8b && start_gzip(s, err))
		goto fail;
	return s;
fail:
	tft_source_close(s);
	return NULL;
}

struct tft_source *tft_source_open_mem(const void *data, size_t len, const char *name,
				       struct tft_error *err)
{
	struct tft_source *s = alloc_source(name, err);

	if (!s)
		return NULL;
	s->mem = data;
	s->mem_len = data ? len : 0;
	s->raw_size = s->mem_len;
	s->raw_eof = true;
	if (s->mem_len >= 2 && s->mem[0] == 0x1f && s->mem[1] == 0x8b && start_gzip(s, err)) {
		tft_source_close(s);
		return NULL;
	}
	return s;
}

void tft_source_close(struct tft_source *s)
{
	if (!s)
		return;
	if (s->z_ready)
		inflateEnd(&s->z);
	if (s->fd >= 0)
		close(s->fd);
	free(s->raw);
	free(s->peek);
	free(s);
}

int tft_source_read(struct tft_source *s, void *buf, size_t cap, size_t *got,
		    struct tft_error *err)
{
	size_t n = 0;
	int rc;

	*got = 0;
	if (s->peek_pos < s->peek_len) {
		n = s->peek_len - s->peek_pos;
		if (n > cap)
			n = cap;
		memcpy(buf, s->peek + s->peek_pos, n);
		s->peek_pos += n;
		s->offset += n;
		*got = n;
		return 0;
	}
	rc = fill(s, buf, cap, &n, err);
	if (rc)
		return rc;
	s->offset += n;
	*got = n;
	return 0;
}

int tft_source_peek(struct tft_source *s, size_t want, const void **data, size_t *len,
		    struct tft_error *err)
{
	if (want > TFT_SOURCE_PEEK_MAX)
		want = TFT_SOURCE_PEEK_MAX;
	if (!s->peek) {
		s->peek = malloc(TFT_SOURCE_PEEK_MAX);
		if (!s->peek) {
			tft_error_set(err, TFT_ENOMEM, -1, "out of memory");
			return TFT_ENOMEM;
		}
	}
	if (s->peek_pos > 0) {
		memmove(s->peek, s->peek + s->peek_pos, s->peek_len - s->peek_pos);
		s->peek_len -= s->peek_pos;
		s->peek_pos = 0;
	}
	while (s->peek_len < want) {
		size_t n;
		int rc = fill(s, s->peek + s->peek_len, want - s->peek_len, &n, err);
		if (rc)
			return rc;
		if (n == 0)
			break;
		s->peek_len += n;
	}
	*data = s->peek;
	*len = s->peek_len;
	return 0;
}

int tft_source_map(struct tft_source *s, struct tft_source_map *m, struct tft_error *err)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), len, total;
	void *base, *f;

	memset(m, 0, sizeof(*m));
	if (s->fd < 0 || s->gzip || s->offset != 0 || s->raw_size == 0 ||
	    s->raw_size > (uint64_t)SIZE_MAX / 2)
		return 0;
	len = (size_t)s->raw_size;
	/* zeros after the file: the file's last page is zero-filled past its end
	 * and an anonymous mapping follows it */
	total = (len + TFT_SOURCE_MAP_PAD + page - 1) / page * page + page;
	base = mmap(NULL, total, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		return 0;
	f = mmap(base, len, PROT_READ, MAP_PRIVATE | MAP_FIXED, s->fd, 0);
	if (f == MAP_FAILED) {
		munmap(base, total);
		return 0;
	}
	(void)madvise(base, len, MADV_SEQUENTIAL);
	(void)madvise(base, len < (64u << 20) ? len : (64u << 20), MADV_WILLNEED);
	m->base = base;
	m->map_len = total;
	m->data = base;
	m->len = len;
	/* the whole file is the caller's now */
	s->offset = s->produced = len;
	s->raw_offset = s->raw_size;
	s->peek_pos = s->peek_len = 0;
	s->raw_pos = s->raw_len = 0;
	s->raw_eof = true;
	(void)err;
	return 1;
}

void tft_source_map_release(struct tft_source_map *m, size_t upto)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	if (!m->base || upto > m->len)
		return;
	upto = upto / page * page;
	if (upto < m->released + (8u << 20))
		return;
	(void)madvise((char *)m->base + m->released, upto - m->released, MADV_DONTNEED);
	m->released = upto;
	/* ask for what comes next */
	size_t ahead = m->len - upto < (64u << 20) ? m->len - upto : (64u << 20);
	(void)madvise((char *)m->base + upto, ahead, MADV_WILLNEED);
}

void tft_source_unmap(struct tft_source_map *m)
{
	if (m->base)
		munmap(m->base, m->map_len);
	memset(m, 0, sizeof(*m));
}

uint64_t tft_source_offset(const struct tft_source *s)
{
	return s->offset;
}

uint64_t tft_source_raw_offset(const struct tft_source *s)
{
	return s->raw_offset;
}

uint64_t tft_source_raw_size(const struct tft_source *s)
{
	return s->raw_size;
}

bool tft_source_is_gzip(const struct tft_source *s)
{
	return s->gzip;
}

const char *tft_source_name(const struct tft_source *s)
{
	return s->name;
}
