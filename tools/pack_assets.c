/* SPDX-License-Identifier: MIT */
/*
 * pack_assets WEB_DIR OUT.c: embed every file under WEB_DIR into a C source
 * defining the table of src/export/web_assets.h (path, content type, ETag, bytes
 * and a gzip copy). Build-time tool; output is deterministic (sorted paths).
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <zlib.h>

#define MAX_FILES 4096
#define MAX_FILE_BYTES (64u << 20)

struct file {
	char *csp;       /* HTML only: Content-Security-Policy with inline-script hashes */
	char rel[1024];  /* path under WEB_DIR */
	char url[1100];  /* URL path */
	unsigned char *data;
	size_t len;
	unsigned char *gz;
	size_t gz_len;
	uint64_t hash;
	const char *type;
};

static struct file files[MAX_FILES];
static size_t nfiles;

__attribute__((format(printf, 1, 2))) static int fail(const char *fmt, ...)
{
	va_list ap;

	fputs("pack_assets: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

static const char *content_type(const char *name)
{
	static const struct {
		const char *ext, *type;
	} types[] = {
		{ ".html", "text/html; charset=utf-8" },
		{ ".htm", "text/html; charset=utf-8" },
		{ ".js", "text/javascript; charset=utf-8" },
		{ ".mjs", "text/javascript; charset=utf-8" },
		{ ".css", "text/css; charset=utf-8" },
		{ ".json", "application/json; charset=utf-8" },
		{ ".map", "application/json; charset=utf-8" },
		{ ".svg", "image/svg+xml" },
		{ ".png", "image/png" },
		{ ".ico", "image/x-icon" },
		{ ".gif", "image/gif" },
		{ ".jpg", "image/jpeg" },
		{ ".webp", "image/webp" },
		{ ".woff2", "font/woff2" },
		{ ".woff", "font/woff" },
		{ ".ttf", "font/ttf" },
		{ ".wasm", "application/wasm" },
		{ ".txt", "text/plain; charset=utf-8" },
		{ ".md", "text/plain; charset=utf-8" },
	};
	const char *dot = strrchr(name, '.');

	if (dot)
		for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
			if (strcmp(dot, types[i].ext) == 0)
				return types[i].type;
	return "application/octet-stream";
}

static int compressible(const char *type)
{
	return strncmp(type, "text/", 5) == 0 || strstr(type, "json") || strstr(type, "svg") ||
	       strstr(type, "wasm");
}

/* URL-safe names only, so the generated C strings need no escaping. */
static int name_ok(const char *s)
{
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      *s == '.' || *s == '-' || *s == '_' || *s == '/'))
			return 0;
	return 1;
}

static int read_file(const char *path, struct file *f)
{
	FILE *fp = fopen(path, "rb");
	struct stat st;

	if (!fp)
		return fail("cannot open %s", path);
	if (fstat(fileno(fp), &st) != 0 || st.st_size < 0 || (size_t)st.st_size > MAX_FILE_BYTES) {
		fclose(fp);
		return fail("%s: unreadable or too large", path);
	}
	f->len = (size_t)st.st_size;
	f->data = malloc(f->len + 1);
	if (!f->data || fread(f->data, 1, f->len, fp) != f->len) {
		fclose(fp);
		return fail("%s: read failed", path);
	}
	fclose(fp);
	return 0;
}

static void gzip_file(struct file *f)
{
	z_stream z;
	size_t cap = f->len + f->len / 100 + 64;

	f->gz = NULL;
	f->gz_len = 0;
	if (!compressible(f->type) || f->len < 256)
		return;
	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, 9, Z_DEFLATED, 31, 9, Z_DEFAULT_STRATEGY) != Z_OK)
		return;
	f->gz = malloc(cap);
	if (!f->gz) {
		deflateEnd(&z);
		return;
	}
	z.next_in = f->data;
	z.avail_in = (uInt)f->len;
	z.next_out = f->gz;
	z.avail_out = (uInt)cap;
	if (deflate(&z, Z_FINISH) != Z_STREAM_END || z.total_out >= f->len * 9 / 10) {
		free(f->gz);
		f->gz = NULL;
	} else {
		f->gz_len = z.total_out;
	}
	deflateEnd(&z);
}

static uint64_t fnv1a(const unsigned char *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* ---- SHA-256 (FIPS 180-4), for the CSP hashes of inline scripts ---------- */

static const uint32_t K256[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static uint32_t ror(uint32_t x, int n)
{
	return (x >> n) | (x << (32 - n));
}

static void sha256_block(uint32_t h[8], const unsigned char *p)
{
	uint32_t w[64], a, b, c, d, e, f, g, hh;

	for (int i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 |
		       p[4 * i + 3];
	for (int i = 16; i < 64; i++) {
		uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
		uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10);
		w[i] = w[i - 16] + s0 + w[i - 7] + s1;
	}
	a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
	for (int i = 0; i < 64; i++) {
		uint32_t t1 = hh + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) + K256[i] + w[i];
		uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
		hh = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
	}
	h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += hh;
}

static void sha256(const unsigned char *p, size_t n, unsigned char out[32])
{
	uint32_t h[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
			  0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 };
	unsigned char tail[128];
	size_t full = n / 64 * 64, rest = n - full, tl;
	uint64_t bits = (uint64_t)n * 8;

	for (size_t i = 0; i < full; i += 64)
		sha256_block(h, p + i);
	memset(tail, 0, sizeof(tail));
	memcpy(tail, p + full, rest);
	tail[rest] = 0x80;
	tl = rest + 1 + 8 <= 64 ? 64 : 128;
	for (int i = 0; i < 8; i++)
		tail[tl - 1 - i] = (unsigned char)(bits >> (8 * i));
	for (size_t i = 0; i < tl; i += 64)
		sha256_block(h, tail + i);
	for (int i = 0; i < 8; i++) {
		out[4 * i] = (unsigned char)(h[i] >> 24);
		out[4 * i + 1] = (unsigned char)(h[i] >> 16);
		out[4 * i + 2] = (unsigned char)(h[i] >> 8);
		out[4 * i + 3] = (unsigned char)h[i];
	}
}

static void base64(const unsigned char *p, size_t n, char *out)
{
	static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t o = 0;

	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) |
			     (i + 2 < n ? p[i + 2] : 0);
		out[o++] = tab[v >> 18 & 63];
		out[o++] = tab[v >> 12 & 63];
		out[o++] = i + 1 < n ? tab[v >> 6 & 63] : '=';
		out[o++] = i + 2 < n ? tab[v & 63] : '=';
	}
	out[o] = '\0';
}

static const unsigned char *find_icase(const unsigned char *p, const unsigned char *end, const char *s)
{
	size_t n = strlen(s);

	for (; p + n <= end; p++)
		if (strncasecmp((const char *)p, s, n) == 0)
			return p;
	return NULL;
}

/*
 * The page's Content-Security-Policy: scripts from this server only, plus
 * each inline <script> of this HTML file by its SHA-256 (so the UI may keep
 * a small inline bootstrap without 'unsafe-inline').
 */
static char *make_csp(const struct file *f)
{
	static const char head[] = "default-src 'self'; img-src 'self' data: blob:; "
				   "style-src 'self' 'unsafe-inline'; script-src 'self'";
	static const char tail[] = "; worker-src 'self' blob:; connect-src 'self'; object-src 'none'; "
				   "base-uri 'none'; form-action 'self'; frame-ancestors 'none'";
	const unsigned char *p = f->data, *end = f->data + f->len;
	size_t cap = sizeof(head) + sizeof(tail) + 64, len;
	char *csp = malloc(cap);

	if (!csp)
		return NULL;
	len = (size_t)snprintf(csp, cap, "%s", head);
	while ((p = find_icase(p, end, "<script")) != NULL) {
		const unsigned char *gt = memchr(p, '>', (size_t)(end - p)), *close;
		unsigned char digest[32];
		char b64[48];
		int has_src;

		if (!gt)
			break;
		has_src = find_icase(p, gt, " src=") != NULL;
		close = find_icase(gt + 1, end, "</script");
		if (!close)
			break;
		if (!has_src) {
			char *nc;
			sha256(gt + 1, (size_t)(close - gt - 1), digest);
			base64(digest, 32, b64);
			nc = realloc(csp, cap + 64);
			if (!nc) {
				free(csp);
				return NULL;
			}
			csp = nc;
			cap += 64;
			len += (size_t)snprintf(csp + len, cap - len, " 'sha256-%s'", b64);
		}
		p = close + 8;
	}
	if (len + sizeof(tail) > cap) {
		char *nc = realloc(csp, len + sizeof(tail));
		if (!nc) {
			free(csp);
			return NULL;
		}
		csp = nc;
		cap = len + sizeof(tail);
	}
	snprintf(csp + len, cap - len, "%s", tail);
	return csp;
}

/*
 * The static HTML export's policy, set on static-boot.js (docs/http-api.md,
 * "Static HTML export"): nothing from the network, inline scripts only by
 * their SHA-256 (index.html's, which the page keeps, and the boot script,
 * inlined whole), the UI's modules and worker as the blob: URLs the boot
 * script makes of their inlined texts, and WebAssembly compiled from bytes
 * ('wasm-unsafe-eval': the query engine, inlined; no eval of script text). No frame-ancestors: a <meta> policy
 * cannot carry it (the browser would log an error).
 */
static char *make_static_csp(const struct file *index, const struct file *boot)
{
	static const char head[] = "default-src 'none'; img-src data: blob:; style-src 'unsafe-inline'; "
				   "script-src blob: 'wasm-unsafe-eval'";
	static const char tail[] = "; worker-src blob:; connect-src blob: data:; object-src 'none'; "
				   "base-uri 'none'; form-action 'none'";
	char *page = make_csp(index), *out, *p, *q;
	unsigned char digest[32];
	char b64[48];
	size_t cap;

	if (!page)
		return NULL;
	cap = strlen(page) + sizeof(head) + sizeof(tail) + 64;
	out = malloc(cap);
	if (!out) {
		free(page);
		return NULL;
	}
	/* index.html's script hashes: the part of its policy's script-src after 'self' */
	p = strstr(page, "script-src 'self'");
	q = p ? strchr(p, ';') : NULL;
	sha256(boot->data, boot->len, digest);
	base64(digest, 32, b64);
	snprintf(out, cap, "%s%.*s 'sha256-%s'%s", head,
		 p && q ? (int)(q - p - 17) : 0, p ? p + 17 : "", b64, tail);
	free(page);
	return out;
}

/* The file `full` as the asset `sub` (its path under the web directory; name: its last part). */
static int add_file(const char *full, const char *sub, const char *name, const char *root)
{
	struct file *f;
	const char *u;

	if (!name_ok(sub))
		return fail("%s: only [A-Za-z0-9._-/] are allowed in asset names", sub);
	if (nfiles == MAX_FILES)
		return fail("more than 4096 files under %s", root);
	f = &files[nfiles++];
	snprintf(f->rel, sizeof(f->rel), "%s", sub);
	u = strncmp(sub, "assets/", 7) == 0 ? sub + 7 : sub;
	if (strcmp(sub, "index.html") == 0)
		snprintf(f->url, sizeof(f->url), "/");
	else
		snprintf(f->url, sizeof(f->url), "/assets/%s", u);
	f->type = content_type(name);
	if (read_file(full, f) != 0)
		return 1;
	f->hash = fnv1a(f->data, f->len);
	gzip_file(f);
	if (strncmp(f->type, "text/html", 9) == 0) {
		f->csp = make_csp(f);
		if (!f->csp)
			return fail("%s: out of memory", sub);
	}
	return 0;
}

static int walk(const char *root, const char *rel)
{
	char dir[2048];
	struct dirent **ents;
	int n, rc = 0;

	snprintf(dir, sizeof(dir), "%s%s%s", root, rel[0] ? "/" : "", rel);
	n = scandir(dir, &ents, NULL, alphasort);
	if (n < 0)
		return errno == ENOENT && !rel[0] ? 0 : fail("cannot read directory %s", dir);
	for (int i = 0; i < n; i++) {
		const char *name = ents[i]->d_name;
		char sub[1024], full[3100];
		struct stat st;
		size_t nl = strlen(name);

		if (rc || name[0] == '.' || (nl && name[nl - 1] == '~')) /* hidden, editor backups */
			goto next;
		if ((size_t)snprintf(sub, sizeof(sub), "%s%s%s", rel, rel[0] ? "/" : "", name) >= sizeof(sub)) {
			rc = fail("path too long under %s", dir);
			goto next;
		}
		snprintf(full, sizeof(full), "%s/%s", root, sub);
		if (stat(full, &st) != 0) {
			rc = fail("cannot stat %s", full);
		} else if (S_ISDIR(st.st_mode)) {
			rc = walk(root, sub);
		} else if (S_ISREG(st.st_mode)) {
			rc = add_file(full, sub, name, root);
		}
next:
		free(ents[i]);
	}
	free(ents);
	return rc;
}

static int cmp_url(const void *a, const void *b)
{
	return strcmp(((const struct file *)a)->url, ((const struct file *)b)->url);
}

static void emit_bytes(FILE *out, const char *name, size_t idx, const unsigned char *p, size_t n)
{
	fprintf(out, "static const unsigned char %s%zu[%zu] = {", name, idx, n ? n : 1);
	if (n == 0)
		fputs("0", out);
	for (size_t i = 0; i < n; i++)
		fprintf(out, "%s%u,", i % 24 == 0 ? "\n" : "", p[i]);
	fputs("\n};\n", out);
}

int main(int argc, char **argv)
{
	FILE *out;

	if (argc < 3) {
		fputs("usage: pack_assets WEB_DIR OUT.c [FILE...]\n", stderr);
		return 2;
	}
	if (walk(argv[1], "") != 0)
		return 1;
	/* built files served beside web/'s (the static export's query engine, tftracer.wasm) */
	for (int i = 3; i < argc; i++) {
		const char *base = strrchr(argv[i], '/');
		base = base ? base + 1 : argv[i];
		if (add_file(argv[i], base, base, argv[i]) != 0)
			return 1;
	}
	{
		struct file *index = NULL, *boot = NULL;

		for (size_t i = 0; i < nfiles; i++) {
			if (strcmp(files[i].url, "/") == 0)
				index = &files[i];
			else if (strcmp(files[i].url, "/assets/static-boot.js") == 0)
				boot = &files[i];
		}
		if (index && boot && !(boot->csp = make_static_csp(index, boot)))
			return fail("out of memory");
	}
	qsort(files, nfiles, sizeof(files[0]), cmp_url);
	for (size_t i = 1; i < nfiles; i++)
		if (strcmp(files[i].url, files[i - 1].url) == 0)
			return fail("two files map to the URL %s", files[i].url);
	out = fopen(argv[2], "w");
	if (!out)
		return fail("cannot create %s", argv[2]);
	fputs("/* SPDX-License-Identifier: MIT */\n"
	      "/* GENERATED by tools/pack_assets.c from web/: do not edit. */\n"
	      "#include <string.h>\n\n#include \"export/web_assets.h\"\n\n",
	      out);
	for (size_t i = 0; i < nfiles; i++) {
		fprintf(out, "/* %s */\n", files[i].rel);
		emit_bytes(out, "d", i, files[i].data, files[i].len);
		if (files[i].gz)
			emit_bytes(out, "z", i, files[i].gz, files[i].gz_len);
	}
	fputs("\nconst struct tft_asset tft_assets[] = {\n", out);
	for (size_t i = 0; i < nfiles; i++) {
		const struct file *f = &files[i];
		fprintf(out, "\t{ \"%s\", \"%s\", \"\\\"%016llx\\\"\", d%zu, %zu, ", f->url, f->type,
			(unsigned long long)f->hash, i, f->len);
		if (f->gz)
			fprintf(out, "z%zu, %zu, ", i, f->gz_len);
		else
			fputs("NULL, 0, ", out);
		if (f->csp)
			fprintf(out, "\"%s\" },\n", f->csp);
		else
			fputs("NULL },\n", out);
	}
	if (nfiles == 0)
		fputs("\t{ NULL, NULL, NULL, NULL, 0, NULL, 0, NULL },\n", out);
	fprintf(out, "};\n\nconst size_t tft_assets_count = %zu;\n\n", nfiles);
	fputs("const struct tft_asset *tft_assets_find(const char *path, size_t len)\n"
	      "{\n"
	      "\tsize_t lo = 0, hi = tft_assets_count;\n\n"
	      "\twhile (lo < hi) {\n"
	      "\t\tsize_t mid = lo + (hi - lo) / 2;\n"
	      "\t\tconst char *p = tft_assets[mid].path;\n"
	      "\t\tsize_t pl = strlen(p);\n"
	      "\t\tint c = memcmp(p, path, pl < len ? pl : len);\n\n"
	      "\t\tif (c == 0)\n"
	      "\t\t\tc = pl < len ? -1 : pl > len ? 1 : 0;\n"
	      "\t\tif (c == 0)\n"
	      "\t\t\treturn &tft_assets[mid];\n"
	      "\t\tif (c < 0)\n"
	      "\t\t\tlo = mid + 1;\n"
	      "\t\telse\n"
	      "\t\t\thi = mid;\n"
	      "\t}\n"
	      "\treturn NULL;\n"
	      "}\n",
	      out);
	if (fclose(out) != 0)
		return fail("cannot write %s", argv[2]);
	return 0;
}
