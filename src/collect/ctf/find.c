/* SPDX-License-Identifier: MIT */
/*
 * Finding the CTF traces below a path (directories holding a `metadata`
 * file, a stream file's trace), the format probe, and the metadata framing
 * checked before libbabeltrace2 reads it (codec/ctf_meta.c: 2.0.4 hangs on
 * a packetized metadata file cut short).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codec/ctf_meta.h"
#include "collect/ctf/ctf_int.h"

static bool is_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

bool tft_ctf_is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool has_metadata(const char *dir)
{
	char p[4096];

	return snprintf(p, sizeof(p), "%s/metadata", dir) < (int)sizeof(p) && is_file(p);
}

static bool has_xplane(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	bool found = false;

	if (!d)
		return false;
	while (!found && (de = readdir(d))) {
		size_t n = strlen(de->d_name);
		found = n > 10 && strcmp(de->d_name + n - 10, ".xplane.pb") == 0;
	}
	closedir(d);
	return found;
}

/* The CTF traces at or below dir (a directory holding `metadata` is one; not searched further). */
int tft_ctf_find_traces(const char *dir, int depth, struct found *f)
{
	DIR *d;
	struct dirent *de;
	int rc = 0;

	if (has_metadata(dir)) {
		if (f->n >= MAX_TRACES) {
			f->overflow = true;
			return 0;
		}
		if (tft_grow((void **)&f->dirs, &f->cap, f->n + 1, sizeof(*f->dirs)) ||
		    tft_grow((void **)&f->real, &f->rcap, f->n + 1, sizeof(*f->real)))
			return TFT_ENOMEM;
		f->dirs[f->n] = strdup(dir);
		f->real[f->n] = realpath(dir, NULL);
		if (!f->dirs[f->n] || !f->real[f->n]) {
			free(f->dirs[f->n]);
			free(f->real[f->n]);
			return TFT_ENOMEM;
		}
		f->n++;
		return 0;
	}
	if (depth >= FIND_DEPTH || (f->first_only && f->n) || !(d = opendir(dir)))
		return 0;
	if (++f->visited > MAX_VISIT) {
		f->overflow = true;
		closedir(d);
		return 0;
	}
	while (!rc && !f->overflow && !(f->first_only && f->n) && (de = readdir(d))) {
		char sub[4096];
		struct stat st;
		if (de->d_name[0] == '.')
			continue;
		if (snprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name) >= (int)sizeof(sub) ||
		    lstat(sub, &st) != 0 || !S_ISDIR(st.st_mode)) /* (no symlinks: no loops) */
			continue;
		rc = tft_ctf_find_traces(sub, depth + 1, f);
	}
	closedir(d);
	return rc;
}

void tft_ctf_found_free(struct found *f)
{
	for (uint32_t i = 0; i < f->n; i++) {
		free(f->dirs[i]);
		free(f->real[i]);
	}
	free(f->dirs);
	free(f->real);
	memset(f, 0, sizeof(*f));
}

/* Sort the traces by the user's names (an import's order does not depend on readdir's). */
void tft_ctf_found_sort(struct found *f)
{
	for (uint32_t i = 1; i < f->n; i++)
		for (uint32_t k = i; k > 0 && strcmp(f->dirs[k - 1], f->dirs[k]) > 0; k--) {
			char *t = f->dirs[k];
			f->dirs[k] = f->dirs[k - 1];
			f->dirs[k - 1] = t;
			t = f->real[k];
			f->real[k] = f->real[k - 1];
			f->real[k - 1] = t;
		}
}

/* Whether the file starts with the CTF packet magic (either byte order). */
static bool ctf_stream_file(const char *path)
{
	unsigned char b[4];
	FILE *fp = fopen(path, "rb");
	bool ok;

	if (!fp)
		return false;
	ok = fread(b, 1, 4, fp) == 4 &&
	     ((b[0] == 0xC1 && b[1] == 0x1F && b[2] == 0xFC && b[3] == 0xC1) ||
	      (b[0] == 0xC1 && b[1] == 0xFC && b[2] == 0x1F && b[3] == 0xC1));
	fclose(fp);
	return ok;
}

/* The directory of a file path (into buf), false if it does not fit. */
static bool dir_of(const char *path, char *buf, size_t size)
{
	const char *s = strrchr(path, '/');
	size_t n = s ? (size_t)(s - path) : 1;

	if (n >= size)
		return false;
	if (!s)
		memcpy(buf, ".", 2);
	else if (n == 0)
		memcpy(buf, "/", 2);
	else {
		memcpy(buf, path, n);
		buf[n] = '\0';
	}
	return true;
}

/*
 * The trace directory of a file inside one (into dir): its `metadata`, a
 * stream file, or an LTTng index file (TRACE/index/STREAM.idx). false if
 * the file is none of these.
 */
bool tft_ctf_trace_of_file(const char *path, char *dir, size_t size)
{
	size_t n = strlen(path);

	if (!is_file(path) || !dir_of(path, dir, size))
		return false;
	if (has_metadata(dir))
		return strcmp(base_name(path), "metadata") == 0 || ctf_stream_file(path);
	if (n > 4 && strcmp(path + n - 4, ".idx") == 0 && strcmp(base_name(dir), "index") == 0) {
		char up[4096];
		if (dir_of(dir, up, sizeof(up)) && has_metadata(up) && strlen(up) < size) {
			strcpy(dir, up);
			return true;
		}
	}
	return false;
}

int tft_ctf_probe(const char *path)
{
	char dir[4096];
	struct found f = { .first_only = true };
	int yes;

	if (tft_ctf_is_dir(path)) {
		if (has_xplane(path))
			return 0;
		if (has_metadata(path))
			return 1;
		yes = tft_ctf_find_traces(path, 0, &f) == 0 && f.n > 0;
		tft_ctf_found_free(&f);
		return yes;
	}
	return tft_ctf_trace_of_file(path, dir, sizeof(dir));
}

#define META_MAX ((size_t)1 << 30)

int tft_ctf_check_metadata(struct ctf *c, const char *dir)
{
	char path[4200];
	struct stat st;
	uint8_t *buf = NULL;
	FILE *fp;
	int rc = 0;

	snprintf(path, sizeof(path), "%s/metadata", dir);
	if (!(fp = fopen(path, "rb")) || fstat(fileno(fp), &st) != 0) {
		rc = tft_error_set(c->err, TFT_EIO, -1, "cannot open: %s", strerror(errno));
		goto out;
	}
	if ((size_t)st.st_size > META_MAX) {
		rc = tft_error_set(c->err, TFT_EFORMAT, -1,
				   "expected CTF metadata of at most %zu bytes, found %lld", META_MAX,
				   (long long)st.st_size);
		goto out;
	}
	if (st.st_size && !(buf = malloc((size_t)st.st_size))) {
		rc = oom(c);
		goto out;
	}
	if (st.st_size && fread(buf, 1, (size_t)st.st_size, fp) != (size_t)st.st_size) {
		rc = tft_error_set(c->err, TFT_EIO, -1, "cannot read: %s", strerror(errno));
		goto out;
	}
	rc = tft_ctf_meta_check(buf, (size_t)st.st_size, c->err);
out:
	if (rc)
		tft_error_set_file(c->err, path);
	if (fp)
		fclose(fp);
	free(buf);
	return rc;
}
