/* SPDX-License-Identifier: MIT */
/*
 * TensorFlow device names, timeline_label parsing, communication-op
 * detection and TF protobuf format sniffing.
 */
#include <stdio.h>
#include <string.h>

#include "codec/pb_wire.h"
#include "collect/tf_names.h"

static struct tft_tf_str mkstr(const char *p, size_t len)
{
	struct tft_tf_str s = {p, len};

	return s;
}

static int str_eq(struct tft_tf_str s, const char *lit)
{
	size_t n = strlen(lit);

	return s.len == n && memcmp(s.p, lit, n) == 0;
}

static int str_prefix(struct tft_tf_str s, const char *lit)
{
	size_t n = strlen(lit);

	return s.len >= n && memcmp(s.p, lit, n) == 0;
}

static int ieq(const char *a, size_t n, const char *lit)
{
	if (strlen(lit) != n)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = a[i];

		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (c != lit[i])
			return 0;
	}
	return 1;
}

static const char *find(const char *p, size_t len, const char *needle)
{
	size_t n = strlen(needle);

	if (n > len)
		return NULL;
	return memmem(p, len, needle, n);
}

static struct tft_tf_str trim(struct tft_tf_str s)
{
	while (s.len && (s.p[0] == ' ' || s.p[0] == '\t'))
		s.p++, s.len--;
	while (s.len && (s.p[s.len - 1] == ' ' || s.p[s.len - 1] == '\t'))
		s.len--;
	return s;
}

/* Decimal digits at p[0..len): value and count (0 if none; capped at 18 digits). */
static size_t parse_digits(const char *p, size_t len, int64_t *v)
{
	size_t i = 0;
	int64_t x = 0;

	while (i < len && i < 18 && p[i] >= '0' && p[i] <= '9')
		x = x * 10 + (p[i++] - '0');
	*v = x;
	return i;
}

static int is_all_digits(const char *p, size_t len)
{
	if (!len)
		return 0;
	for (size_t i = 0; i < len; i++)
		if (p[i] < '0' || p[i] > '9')
			return 0;
	return 1;
}

int tft_tf_names_parse_device(const char *name, size_t len, struct tft_tf_device *d)
{
	size_t i = 0;
	int found = 0;

	memset(d, 0, sizeof(*d));
	d->replica = d->task = d->index = d->stream = -1;
	while (i < len) {
		size_t s, e;
		const char *c, *colon;
		size_t clen;

		while (i < len && name[i] == '/')
			i++;
		s = i;
		while (i < len && name[i] != '/')
			i++;
		e = i;
		if (e == s)
			continue;
		c = name + s;
		clen = e - s;
		colon = memchr(c, ':', clen);
		if (!colon) {
			if (ieq(c, clen, "memcpy")) {
				d->flags |= TFT_TF_DEV_MEMCPY;
				found = 1;
			} else if (ieq(c, clen, "sync")) {
				d->flags |= TFT_TF_DEV_SYNC;
				found = 1;
			}
			continue;
		}
		{
			struct tft_tf_str key = mkstr(c, (size_t)(colon - c));
			struct tft_tf_str val = mkstr(colon + 1, clen - (size_t)(colon - c) - 1);
			int64_t n;
			size_t k;

			if (str_eq(key, "job")) {
				d->job = val;
				d->flags |= TFT_TF_DEV_HAS_JOB;
				found = 1;
			} else if (str_eq(key, "replica")) {
				if (parse_digits(val.p, val.len, &n) == val.len && val.len)
					d->replica = n;
			} else if (str_eq(key, "task")) {
				if (parse_digits(val.p, val.len, &n) == val.len && val.len)
					d->task = n;
			} else if (str_eq(key, "device")) {
				/* device:TYPE:N */
				const char *c2 = memchr(val.p, ':', val.len);

				if (c2) {
					d->type = mkstr(val.p, (size_t)(c2 - val.p));
					if (parse_digits(c2 + 1, val.len - (size_t)(c2 + 1 - val.p), &n) &&
					    is_all_digits(c2 + 1, val.len - (size_t)(c2 + 1 - val.p)))
						d->index = n;
				} else {
					d->type = val;
				}
				found = 1;
			} else if (str_eq(key, "stream")) {
				d->flags |= TFT_TF_DEV_STREAM;
				if (ieq(val.p, val.len, "all")) {
					d->flags |= TFT_TF_DEV_STREAM_ALL;
				} else {
					k = parse_digits(val.p, val.len, &n);
					if (k)
						d->stream = n;
					d->stream_suffix = trim(mkstr(val.p + k, val.len - k));
				}
				found = 1;
			} else if (str_eq(key, "host")) {
				d->flags |= TFT_TF_DEV_HOST;
				d->type = val;
				found = 1;
			} else if (is_all_digits(val.p, val.len) && key.len && key.len <= 16) {
				/* Legacy "cpu:0", "gpu:1", or "GPU:0" without "device:". */
				parse_digits(val.p, val.len, &n);
				d->type = key;
				d->index = n;
				d->flags |= TFT_TF_DEV_LEGACY;
				found = 1;
			}
		}
	}
	return found ? 0 : -1;
}

/* Append lit then s[0..len) at buf+n (bounded); returns the new length (may exceed size). */
static size_t append(char *buf, size_t size, size_t n, const char *lit, const char *s, size_t len)
{
	size_t k = strlen(lit);

	for (size_t i = 0; i < k; i++, n++)
		if (n < size)
			buf[n] = lit[i];
	for (size_t i = 0; i < len; i++, n++)
		if (n < size)
			buf[n] = s[i];
	return n;
}

static size_t finish(char *buf, size_t size, size_t n)
{
	if (!size)
		return 0;
	if (n >= size)
		n = size - 1;
	buf[n] = '\0';
	return n;
}

size_t tft_tf_names_process(const struct tft_tf_device *d, char *buf, size_t size)
{
	size_t n = 0;
	char num[32];

	if (!size)
		return 0;
	buf[0] = '\0';
	if (!(d->flags & TFT_TF_DEV_HAS_JOB)) {
		n = append(buf, size, 0, "localhost", "", 0);
		return finish(buf, size, n);
	}
	n = append(buf, size, n, "/job:", d->job.p, d->job.len);
	if (d->replica >= 0) {
		snprintf(num, sizeof(num), "%lld", (long long)d->replica);
		n = append(buf, size, n, "/replica:", num, strlen(num));
	}
	if (d->task >= 0) {
		snprintf(num, sizeof(num), "%lld", (long long)d->task);
		n = append(buf, size, n, "/task:", num, strlen(num));
	}
	return finish(buf, size, n);
}

size_t tft_tf_names_canon_device(const struct tft_tf_device *d, char *buf, size_t size)
{
	size_t n = 0;
	char type[32];
	size_t tl = d->type.len < sizeof(type) - 1 ? d->type.len : sizeof(type) - 1;

	if (!size)
		return 0;
	buf[0] = '\0';
	if (d->flags & TFT_TF_DEV_HAS_JOB) {
		n = tft_tf_names_process(d, buf, size);
	}
	for (size_t i = 0; i < tl; i++) {
		char c = d->type.p[i];

		type[i] = (c >= 'a' && c <= 'z') ? (char)(c - 'a' + 'A') : c;
	}
	type[tl] = '\0';
	if (d->flags & TFT_TF_DEV_HOST) {
		n = append(buf, size, n, "/host:", type, tl);
	} else if (tl) {
		char num[32];

		snprintf(num, sizeof(num), "%lld", (long long)(d->index < 0 ? 0 : d->index));
		n = append(buf, size, n, "/device:", type, tl);
		n = append(buf, size, n, ":", num, strlen(num));
	}
	return finish(buf, size, n);
}

/* "123B", "1.5MB", "12.0KB" -> bytes; -1 if the text is not a size. */
static int64_t parse_size(struct tft_tf_str s)
{
	int64_t whole = 0, frac = 0, scale = 1;
	size_t i = 0, k;
	int64_t mult;

	k = parse_digits(s.p, s.len, &whole);
	if (!k)
		return -1;
	i = k;
	if (i < s.len && s.p[i] == '.') {
		size_t j = ++i;

		while (i < s.len && s.p[i] >= '0' && s.p[i] <= '9' && i - j < 6) {
			frac = frac * 10 + (s.p[i] - '0');
			scale *= 10;
			i++;
		}
	}
	if (i + 1 == s.len && s.p[i] == 'B')
		mult = 1;
	else if (i + 2 == s.len && s.p[i + 1] == 'B' && s.p[i] == 'K')
		mult = 1024;
	else if (i + 2 == s.len && s.p[i + 1] == 'B' && s.p[i] == 'M')
		mult = 1048576;
	else if (i + 2 == s.len && s.p[i + 1] == 'B' && s.p[i] == 'G')
		mult = 1073741824;
	else
		return -1;
	return whole * mult + frac * mult / scale;
}

/* Positions of the tokens that tell label shapes apart (NULL if absent). */
struct landmarks {
	const char *eq;    /* " = " */
	const char *at2;   /* "@@" */
	const char *from;  /* " from " */
	const char *regs, *shm, *grid, *block; /* " regs:" ... */
	const char *bytes; /* "bytes:" at the start or after a space */
};

/* One pass over s recording the first occurrence of each landmark. */
static void scan_landmarks(struct tft_tf_str s, struct landmarks *m)
{
	const char *p = s.p, *end = s.p + s.len;

	memset(m, 0, sizeof(*m));
	if (s.len >= 6 && memcmp(p, "bytes:", 6) == 0)
		m->bytes = p;
	for (; p < end; p++) {
		size_t left = (size_t)(end - p);

		if (*p == '@') {
			if (!m->at2 && left >= 2 && p[1] == '@')
				m->at2 = p;
			continue;
		}
		if (*p != ' ' || left < 3)
			continue;
		switch (p[1]) {
		case '=':
			if (!m->eq && p[2] == ' ')
				m->eq = p;
			break;
		case 'f':
			if (!m->from && left >= 6 && memcmp(p + 1, "from ", 5) == 0)
				m->from = p;
			break;
		case 'r':
			if (!m->regs && left >= 6 && memcmp(p + 1, "regs:", 5) == 0)
				m->regs = p;
			break;
		case 's':
			if (!m->shm && left >= 5 && memcmp(p + 1, "shm:", 4) == 0)
				m->shm = p;
			break;
		case 'g':
			if (!m->grid && left >= 6 && memcmp(p + 1, "grid:", 5) == 0)
				m->grid = p;
			break;
		case 'b':
			if (!m->block && left >= 7 && memcmp(p + 1, "block:", 6) == 0)
				m->block = p;
			else if (!m->bytes && left >= 7 && memcmp(p + 1, "bytes:", 6) == 0)
				m->bytes = p + 1;
			break;
		default:
			break;
		}
	}
}

/* Integer right after `at + skip`; -1 if none. */
static int64_t int_at(struct tft_tf_str s, const char *at, size_t skip)
{
	int64_t v;
	size_t off;

	if (!at)
		return -1;
	off = (size_t)(at - s.p) + skip;
	if (off > s.len)
		return -1;
	return parse_digits(s.p + off, s.len - off, &v) ? v : -1;
}

/* Text right after `at + skip` up to a space or '@'. */
static struct tft_tf_str text_at(struct tft_tf_str s, const char *at, size_t skip)
{
	size_t off, e;

	if (!at)
		return mkstr(NULL, 0);
	off = (size_t)(at - s.p) + skip;
	if (off > s.len)
		return mkstr(NULL, 0);
	e = off;
	while (e < s.len && s.p[e] != ' ' && s.p[e] != '@')
		e++;
	return mkstr(s.p + off, e - off);
}

static void parse_kernel(struct tft_tf_str s, const struct landmarks *m, struct tft_tf_label *o)
{
	const char *limit = m->at2 ? m->at2 : s.p + s.len;
	const char *keys[4] = {m->regs, m->shm, m->grid, m->block};
	const char *cut = limit;

	o->kind = TFT_TF_LABEL_KERNEL;
	if (m->at2)
		o->annotation = mkstr(m->at2 + 2, s.len - (size_t)(m->at2 + 2 - s.p));
	/* Only the fields before "@@" belong to the kernel. */
	for (int i = 0; i < 4; i++) {
		if (keys[i] && keys[i] >= limit)
			keys[i] = NULL;
		if (keys[i] && keys[i] < cut)
			cut = keys[i];
	}
	o->name = trim(mkstr(s.p, (size_t)(cut - s.p)));
	o->regs = int_at(s, keys[0], 6);
	o->shm = int_at(s, keys[1], 5);
	o->grid = text_at(s, keys[2], 6);
	o->block = text_at(s, keys[3], 7);
}

static int parse_memcpy(struct tft_tf_str s, const struct landmarks *m, struct tft_tf_label *o)
{
	int64_t v = int_at(s, m->bytes, 6);
	size_t off;
	struct tft_tf_str rest;

	if (v < 0)
		return 0;
	off = (size_t)(m->bytes - s.p) + 6;
	o->kind = TFT_TF_LABEL_MEMCPY;
	o->name = trim(mkstr(s.p, (size_t)(m->bytes - s.p)));
	o->bytes = v;
	rest = mkstr(s.p + off, s.len - off);
	o->async = find(rest.p, rest.len, " async") != NULL || find(rest.p, rest.len, " aync") != NULL;
	{
		const char *td = find(rest.p, rest.len, "to device:");

		o->to_device = int_at(rest, td, 10);
	}
	return 1;
}

void tft_tf_names_parse_label(const char *label, size_t len, struct tft_tf_label *o)
{
	struct tft_tf_str s = mkstr(label, len);
	struct landmarks m;
	const char *eq;

	memset(o, 0, sizeof(*o));
	o->bytes = o->regs = o->shm = o->to_device = o->thread_id = -1;
	if (!len)
		return;
	/* Leading "[...] " groups: allocator usage or a transfer size. */
	{
		const char *mem_start = NULL, *mem_end = NULL;

		while (s.len && s.p[0] == '[') {
			const char *close = memchr(s.p, ']', s.len);
			struct tft_tf_str inner;

			if (!close)
				break;
			inner = mkstr(s.p + 1, (size_t)(close - s.p - 1));
			if (!memchr(inner.p, ' ', inner.len) && parse_size(inner) >= 0) {
				o->bytes = parse_size(inner);
			} else {
				if (!mem_start)
					mem_start = s.p;
				mem_end = close + 1;
			}
			s.len -= (size_t)(close + 1 - s.p);
			s.p = close + 1;
			while (s.len && s.p[0] == ' ')
				s.p++, s.len--;
		}
		if (mem_start)
			o->mem = mkstr(mem_start, (size_t)(mem_end - mem_start));
	}
	scan_landmarks(s, &m);
	eq = m.eq;
	if (eq) {
		struct tft_tf_str rhs = mkstr(eq + 3, s.len - (size_t)(eq + 3 - s.p));
		const char *open = memchr(rhs.p, '(', rhs.len);

		o->name = trim(mkstr(s.p, (size_t)(eq - s.p)));
		o->kind = TFT_TF_LABEL_OP;
		if (!open) {
			o->op = trim(rhs);
			return;
		}
		o->op = trim(mkstr(rhs.p, (size_t)(open - rhs.p)));
		if (rhs.len && rhs.p[rhs.len - 1] == ')')
			o->inputs = mkstr(open + 1, (size_t)(rhs.p + rhs.len - 1 - (open + 1)));
		else
			o->inputs = mkstr(open + 1, (size_t)(rhs.p + rhs.len - (open + 1)));
		if (str_eq(o->op, "_Send") || str_eq(o->op, "_HostSend") || str_eq(o->op, "_Recv") ||
		    str_eq(o->op, "_HostRecv")) {
			int send = str_eq(o->op, "_Send") || str_eq(o->op, "_HostSend");
			const char *at = find(o->inputs.p, o->inputs.len, " @");

			if (at) {
				struct tft_tf_str peer =
					trim(mkstr(at + 2, o->inputs.len - (size_t)(at + 2 - o->inputs.p)));

				if (peer.len && peer.p[peer.len - 1] == ')')
					peer.len--;
				o->tensor = trim(mkstr(o->inputs.p, (size_t)(at - o->inputs.p)));
				if (send)
					o->dst_device = peer;
				else
					o->src_device = peer;
			} else {
				o->tensor = trim(o->inputs);
			}
			o->kind = send ? TFT_TF_LABEL_SEND : TFT_TF_LABEL_RECV;
		}
		return;
	}
	{
		const char *from = m.from;

		if (from) {
			const char *rest = from + 6;
			size_t rlen = s.len - (size_t)(rest - s.p);
			const char *to = find(rest, rlen, " to ");

			if (to) {
				o->kind = TFT_TF_LABEL_TRANSFER;
				o->tensor = trim(mkstr(s.p, (size_t)(from - s.p)));
				o->src_device = trim(mkstr(rest, (size_t)(to - rest)));
				o->dst_device = trim(mkstr(to + 4, rlen - (size_t)(to + 4 - rest)));
				return;
			}
		}
	}
	if (m.at2 || m.regs || m.grid) {
		parse_kernel(s, &m, o);
		return;
	}
	if (m.bytes && parse_memcpy(s, &m, o))
		return;
	if (str_prefix(s, "ThreadId ")) {
		int64_t v;

		if (parse_digits(s.p + 9, s.len - 9, &v)) {
			o->kind = TFT_TF_LABEL_SYNC;
			o->thread_id = v;
			return;
		}
	}
	o->kind = TFT_TF_LABEL_OTHER;
	o->name = trim(s);
}

int tft_tf_names_next_input(struct tft_tf_str *rest, struct tft_tf_str *out)
{
	const char *comma;
	size_t n;

	*rest = trim(*rest);
	if (!rest->len)
		return 0;
	comma = memchr(rest->p, ',', rest->len);
	n = comma ? (size_t)(comma - rest->p) : rest->len;
	*out = trim(mkstr(rest->p, n));
	if (comma) {
		rest->p = comma + 1;
		rest->len -= n + 1;
	} else {
		rest->p += n;
		rest->len = 0;
	}
	return 1;
}

struct tft_tf_str tft_tf_names_rendezvous_tensor(struct tft_tf_str key)
{
	const char *p = key.p;
	size_t left = key.len;

	for (int i = 0; i < 3; i++) {
		const char *semi = memchr(p, ';', left);

		if (!semi)
			return key;
		left -= (size_t)(semi + 1 - p);
		p = semi + 1;
	}
	{
		const char *semi = memchr(p, ';', left);

		return mkstr(p, semi ? (size_t)(semi - p) : left);
	}
}

void tft_tf_names_split_annotation(struct tft_tf_str ann, struct tft_tf_str *name,
				   struct tft_tf_str *op)
{
	const char *hash = memchr(ann.p ? ann.p : "", '#', ann.len);
	struct tft_tf_str s = mkstr(ann.p, hash ? (size_t)(hash - ann.p) : ann.len);
	const char *last = NULL;

	/* Innermost scope: after the last "::". */
	for (size_t i = 0; i + 1 < s.len; i++)
		if (s.p[i] == ':' && s.p[i + 1] == ':')
			last = s.p + i + 2;
	if (last) {
		s.len -= (size_t)(last - s.p);
		s.p = last;
	}
	{
		const char *colon = NULL;

		for (size_t i = 0; i < s.len; i++)
			if (s.p[i] == ':')
				colon = s.p + i;
		if (colon) {
			*name = mkstr(s.p, (size_t)(colon - s.p));
			*op = mkstr(colon + 1, s.len - (size_t)(colon + 1 - s.p));
		} else {
			*name = s;
			*op = mkstr(NULL, 0);
		}
	}
}

int tft_tf_names_is_comm(struct tft_tf_str node_name, struct tft_tf_str op)
{
	static const char *const exact[] = {"RecvTensor", "_Send", "_Recv", "_HostSend", "_HostRecv"};
	static const char *const prefix[] = {"Horovod", "Collective", "Nccl", "_Nccl"};
	struct tft_tf_str cand[2] = {op, node_name};

	for (int c = 0; c < 2; c++) {
		struct tft_tf_str s = cand[c];

		if (!s.len)
			continue;
		for (size_t i = 0; i < sizeof(exact) / sizeof(exact[0]); i++)
			if (str_eq(s, exact[i]))
				return 1;
		/* The node name only counts when it is the op itself (RecvTensor). */
		if (c == 1)
			break;
		for (size_t i = 0; i < sizeof(prefix) / sizeof(prefix[0]); i++)
			if (str_prefix(s, prefix[i]))
				return 1;
	}
	return 0;
}

/* ---- timeline.py's dataflow parse ------------------------------------------ */

/*
 * re.match(r"(.*) = (.*)\((.*)\)", label) with Python's backtracking: '.'
 * stops at a newline; the last ')' closes the inputs, the last '(' before
 * it opens them, the last " = " ending at or before that '(' ends the name
 * (the tf.timeline export parses labels the same way).
 */
int tft_tf_names_timeline_inputs(const char *s, size_t len, struct tft_tf_str *inputs)
{
	const char *nl = len ? memchr(s, '\n', len) : NULL;
	size_t n = nl ? (size_t)(nl - s) : len, k, j, i;

	for (k = n; k > 0 && s[k - 1] != ')'; k--)
		;
	if (!k)
		return 0;
	k--; /* s[k] == ')' */
	for (j = k; j > 0 && s[j - 1] != '('; j--)
		;
	if (!j)
		return 0;
	j--; /* s[j] == '(' */
	if (j < 3)
		return 0;
	for (i = j - 3 + 1; i > 0; i--)
		if (memcmp(s + i - 1, " = ", 3) == 0)
			break;
	if (!i)
		return 0;
	*inputs = mkstr(s + j + 1, k - (j + 1));
	return 1;
}

int tft_tf_names_timeline_next_input(struct tft_tf_str *rest, int *done, struct tft_tf_str *out)
{
	const char *p = rest->p;
	size_t n = rest->len;

	if (*done)
		return 0;
	for (size_t i = 0; i + 1 < n; i++) {
		if (p[i] == ',' && p[i + 1] == ' ') {
			*out = mkstr(p, i);
			*rest = mkstr(p + i + 2, n - i - 2);
			return 1;
		}
	}
	*out = mkstr(p, n);
	*done = 1;
	return 1;
}

void tft_tf_names_timeline_kernel(const char *label, size_t llen, const char *node, size_t nlen,
				  struct tft_tf_str *name, struct tft_tf_str *op)
{
	const char *at = NULL, *hash = llen ? memchr(label, '#', llen) : NULL, *c1, *c2;

	for (size_t i = 0; i + 1 < llen; i++)
		if (label[i] == '@' && label[i + 1] == '@') {
			at = label + i;
			break;
		}
	if (at && hash && at + 2 < hash) {
		node = at + 2;
		nlen = (size_t)(hash - node);
	}
	c1 = nlen ? memchr(node, ':', nlen) : NULL;
	*name = mkstr(node, c1 ? (size_t)(c1 - node) : nlen);
	if (!op)
		return;
	if (!c1) {
		*op = mkstr("unknown", 7);
		return;
	}
	c2 = memchr(c1 + 1, ':', nlen - (size_t)(c1 + 1 - node));
	*op = mkstr(c1 + 1, c2 ? (size_t)(c2 - (c1 + 1)) : nlen - (size_t)(c1 + 1 - node));
}

int tft_tf_names_strip_rename(struct tft_tf_str in, struct tft_tf_str *out)
{
	for (size_t k = in.len; k-- > 1;) {
		if (in.p[k - 1] == '/' && in.p[k] == '_') {
			if (k - 1 == 0)
				return 0;
			*out = mkstr(in.p, k - 1);
			return 1;
		}
	}
	return 0;
}

/* ---- sniffing ------------------------------------------------------------- */

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

static int contains_ci(const char *s, const char *needle)
{
	size_t n = strlen(s), k = strlen(needle);

	for (size_t i = 0; i + k <= n; i++)
		if (ieq(s + i, k, needle))
			return 1;
	return 0;
}

/*
 * First top-level identifier of a text proto (after whitespace and #
 * comments); *value: the offset of the ':', '{' or '<' after it.
 */
static int text_first_field(const uint8_t *p, size_t len, char *out, size_t size, size_t *value)
{
	size_t i = 0, n = 0;

	for (;;) {
		while (i < len && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r'))
			i++;
		if (i < len && p[i] == '#') {
			while (i < len && p[i] != '\n')
				i++;
			continue;
		}
		break;
	}
	if (i >= len || !((p[i] >= 'a' && p[i] <= 'z') || (p[i] >= 'A' && p[i] <= 'Z') || p[i] == '_'))
		return 0;
	while (i < len && n + 1 < size &&
	       ((p[i] >= 'a' && p[i] <= 'z') || (p[i] >= 'A' && p[i] <= 'Z') || p[i] == '_' ||
		(p[i] >= '0' && p[i] <= '9')))
		out[n++] = (char)p[i++];
	out[n] = '\0';
	while (i < len && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r'))
		i++;
	if (i >= len || (p[i] != ':' && p[i] != '{' && p[i] != '<'))
		return 0;
	*value = i;
	return 1;
}

static int text_ident(uint8_t c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (c >= '0' && c <= '9');
}

/* Skip whitespace, # comments and separators (',' ';') from p[i]; the new offset. */
static size_t text_skip_ws(const uint8_t *p, size_t len, size_t i)
{
	while (i < len) {
		if (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r' || p[i] == ',' ||
		    p[i] == ';') {
			i++;
		} else if (p[i] == '#') {
			while (i < len && p[i] != '\n')
				i++;
		} else {
			break;
		}
	}
	return i;
}

/* Skip a quoted string at p[i]; the offset after it, or len. */
static size_t text_skip_string(const uint8_t *p, size_t len, size_t i)
{
	uint8_t q = p[i++];

	while (i < len && p[i] != q && p[i] != '\n')
		i += p[i] == '\\' ? 2 : 1;
	return i < len ? i + 1 : len;
}

/*
 * Skip one field value at p[i] (after the name): an optional ':' then a
 * block or [list] (brackets balanced, strings and comments skipped), string
 * literals (adjacent ones concatenate) or a scalar token. The offset after
 * it, or len when the prefix ends first.
 */
static size_t text_skip_value(const uint8_t *p, size_t len, size_t i)
{
	uint32_t level = 0;

	i = text_skip_ws(p, len, i);
	if (i < len && p[i] == ':')
		i = text_skip_ws(p, len, i + 1);
	if (i >= len)
		return len;
	if (p[i] == '{' || p[i] == '<' || p[i] == '[') {
		while (i < len) {
			if (p[i] == '"' || p[i] == '\'') {
				i = text_skip_string(p, len, i);
			} else if (p[i] == '#') {
				i = text_skip_ws(p, len, i);
			} else if (p[i] == '{' || p[i] == '<' || p[i] == '[') {
				level++;
				i++;
			} else if (p[i] == '}' || p[i] == '>' || p[i] == ']') {
				i++;
				if (!--level)
					return i;
			} else {
				i++;
			}
		}
		return len;
	}
	if (p[i] == '"' || p[i] == '\'') {
		for (;;) {
			size_t j;

			i = text_skip_string(p, len, i);
			j = text_skip_ws(p, len, i);
			if (j >= len || (p[j] != '"' && p[j] != '\''))
				return i;
			i = j;
		}
	}
	while (i < len && !strchr(" \t\r\n,;{}<>[]#\"'", p[i]))
		i++;
	return i;
}

/*
 * GraphDef and CostGraphDef both start with `node {`: a NodeDef has op,
 * input and attr, a CostGraphDef.Node id, input_info, output_info, costs
 * and sizes, both a name and a device. Which kind the first node at p[i]
 * (its ':', '{' or '<') is: TFT_PB_FMT_COSTGRAPH_TEXT or
 * TFT_PB_FMT_GRAPHDEF_TEXT: the first node (of those in the prefix) with an
 * op or a node field, or a cost field, tells; failing that, a node that
 * ended with neither makes a cost graph; undecided is a GraphDef, as before
 * cost graphs were told apart.
 */
static int text_node_kind(const uint8_t *p, size_t len, size_t i)
{
	static const char *const cost[] = {
		"id", "input_info", "output_info", "temporary_memory_size", "is_final",
		"control_input", "compute_cost", "host_temp_memory_size", "device_temp_memory_size",
		"persistent_memory_size", "compute_time", "memory_time",
		"device_persistent_memory_size", "inaccurate",
	};
	static const char *const node[] = {"op", "input", "attr", "experimental_debug_info",
					   "experimental_type"};
	bool opless = false; /* a node ended with neither an op nor a cost field */

	/* Node after node (the prefix's `node` fields) until one tells. */
	for (;;) {
		if (i < len && p[i] == ':')
			i = text_skip_ws(p, len, i + 1);
		if (i >= len || (p[i] != '{' && p[i] != '<'))
			break;
		for (i++;;) {
			size_t start, n;

			i = text_skip_ws(p, len, i);
			if (i < len && (p[i] == '}' || p[i] == '>')) {
				opless = true;
				i++;
				break;
			}
			if (i >= len || !text_ident(p[i]))
				return opless ? TFT_PB_FMT_COSTGRAPH_TEXT : TFT_PB_FMT_GRAPHDEF_TEXT;
			for (start = i; i < len && text_ident(p[i]); i++)
				;
			n = i - start;
			for (size_t k = 0; k < sizeof(cost) / sizeof(cost[0]); k++)
				if (strlen(cost[k]) == n && !memcmp(p + start, cost[k], n))
					return TFT_PB_FMT_COSTGRAPH_TEXT;
			for (size_t k = 0; k < sizeof(node) / sizeof(node[0]); k++)
				if (strlen(node[k]) == n && !memcmp(p + start, node[k], n))
					return TFT_PB_FMT_GRAPHDEF_TEXT;
			i = text_skip_value(p, len, i);
		}
		/* the next top-level field: another node, or the end of what tells */
		i = text_skip_ws(p, len, i);
		if (len - i < 4 || memcmp(p + i, "node", 4) || (i + 4 < len && text_ident(p[i + 4])))
			break;
		i = text_skip_ws(p, len, i + 4);
	}
	/*
	 * A node that ended with no op is a cost node (a NodeDef always has one;
	 * TF writes _SOURCE first, with only a name and a device when its cost
	 * rounds to 0 us, proto3 leaving the zeros out).
	 */
	return opless ? TFT_PB_FMT_COSTGRAPH_TEXT : TFT_PB_FMT_GRAPHDEF_TEXT;
}

/*
 * First field of a wire range: 1 and *f, or 0 if it does not parse. A
 * length-delimited payload running past the range is clipped (the sniffer
 * may only see a prefix of the file).
 */
static int first_field(const uint8_t *p, size_t len, struct tft_pb_raw *f)
{
	const uint8_t *q = p, *end = len ? p + len : p; /* p may be NULL when empty */
	uint64_t key, v;

	if (tft_pb_wire_varint(&q, end, &key) || (key >> 3) == 0 || (key >> 3) > 0x1FFFFFFF)
		return 0;
	memset(f, 0, sizeof(*f));
	f->num = (uint32_t)(key >> 3);
	f->wt = (uint8_t)(key & 7);
	switch (f->wt) {
	case TFT_PB_WT_VARINT:
		if (tft_pb_wire_varint(&q, end, &v))
			return 0;
		f->v = v;
		return 1;
	case TFT_PB_WT_I64:
		return end - q >= 8;
	case TFT_PB_WT_I32:
		return end - q >= 4;
	case TFT_PB_WT_LEN:
		if (tft_pb_wire_varint(&q, end, &v))
			return 0;
		f->p = q;
		f->len = v < (uint64_t)(end - q) ? (size_t)v : (size_t)(end - q);
		return 1;
	default:
		return 0;
	}
}

static int printable(const uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] < 0x20 || p[i] == 0x7f)
			return 0;
	return 1;
}

int tft_pb_has_control_byte(const uint8_t *data, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (data[i] < 0x20 && data[i] != '\t' && data[i] != '\n' && data[i] != '\r')
			return 1;
	return 0;
}

/*
 * Is the message p[0..len) (the first field of the file, a NodeDef or not)
 * an xla.HloModuleProto? Both start with a name (1) and a string (2: op,
 * entry_computation_name); a NodeDef's field 3 is a printable input name,
 * a module's is a computation (a message, with keys and lengths).
 */
static int hlo_module(const uint8_t *p, size_t len)
{
	struct tft_pb_raw f;

	for (int i = 0; i < 4 && len && first_field(p, len, &f); i++) {
		size_t used;

		if (f.wt != TFT_PB_WT_LEN)
			return 0; /* NodeDef and a module's first fields are all strings/messages */
		if (f.num == 3)
			return !printable(f.p, f.len);
		used = (size_t)(f.p - p) + f.len;
		if (used >= len)
			return 0;
		p += used;
		len -= used;
	}
	return 0;
}

/*
 * The first message of a binary file's field 1 (`node`): a NodeDef (only
 * strings and messages: name, op, input, device, attr) or a
 * CostGraphDef.Node (name, device "/...", then the varints id, sizes,
 * costs, and messages input_info/output_info that start with a varint)?
 * 1 for a cost node; 0 for a NodeDef or undecided.
 */
static int wire_cost_node(const uint8_t *p, size_t len)
{
	struct tft_pb_raw f, in;

	for (int i = 0; i < 16 && len && first_field(p, len, &f); i++) {
		size_t used;

		if (f.wt != TFT_PB_WT_LEN)
			return 1;
		if (f.num == 2 && f.len)
			return f.p[0] == '/'; /* a device, not an op */
		if (f.num == 3)
			return 0; /* NodeDef.input (CostGraphDef.Node.id is a varint) */
		if (f.num == 4 && f.len)
			return !printable(f.p, f.len); /* input_info, not a device */
		if (f.num == 5 && f.len && first_field(f.p, f.len, &in))
			return in.wt == TFT_PB_WT_VARINT; /* output_info.size, not an attr key */
		used = (size_t)(f.p - p) + f.len;
		if (used >= len)
			return 0;
		p += used;
		len -= used;
	}
	return 0;
}

/*
 * Does the message p[0..len), the first message of field 1 of a file, read
 * as an OpLogEntry (1) or as a NodeDef / CostGraphDef.Node (0), or does it
 * not tell (-1: only a name)? See tft_pb_sniff().
 */
static int oplog_entry(const uint8_t *p, size_t len)
{
	struct tft_pb_raw f, in;

	for (int i = 0; i < 16 && len && first_field(p, len, &f); i++) {
		size_t used;

		switch (f.num) {
		case 1:
			if (f.wt != TFT_PB_WT_LEN)
				return 0;
			break;
		case 2: /* float_ops, or a NodeDef's op / a cost node's device */
			return f.wt == TFT_PB_WT_VARINT;
		case 3: /* types (before any op: no NodeDef), or a cost node's id (a varint) */
			return f.wt == TFT_PB_WT_LEN && printable(f.p, f.len);
		case 4: /* code_def { traces {...} }, or a NodeDef's device / a cost node's input_info */
			return f.wt == TFT_PB_WT_LEN && f.len && first_field(f.p, f.len, &in) &&
			       in.num == 1 && in.wt == TFT_PB_WT_LEN;
		default:
			return 0;
		}
		used = f.wt == TFT_PB_WT_LEN ? (size_t)(f.p - p) + f.len : len;
		if (used >= len)
			return -1;
		p += used;
		len -= used;
	}
	return -1;
}

/*
 * An OpLogProto (1), not one (0), or undecided (-1) from its top-level
 * fields in data[0..len): log_entries (1), id_to_string map entries (2,
 * key 1 a varint, value 2 a string); a GraphDef has a library (2), version
 * (3) and versions (4).
 */
static int oplog_guess(const uint8_t *data, size_t len)
{
	const uint8_t *p = data;
	struct tft_pb_raw f, in;

	for (int i = 0; i < 64 && len && first_field(p, len, &f); i++) {
		size_t used;
		int e;

		if (f.wt != TFT_PB_WT_LEN)
			return 0;
		if (f.num == 1) {
			if ((e = oplog_entry(f.p, f.len)) >= 0)
				return e;
		} else if (f.num == 2) {
			if (!f.len || !first_field(f.p, f.len, &in))
				return 0;
			return (in.num == 1 && in.wt == TFT_PB_WT_VARINT) ||
			       (in.num == 2 && in.wt == TFT_PB_WT_LEN && printable(in.p, in.len));
		} else {
			return 0;
		}
		used = (size_t)(f.p - p) + f.len;
		if (used >= len)
			return -1;
		p += used;
		len -= used;
	}
	return -1;
}

/*
 * A tfprof ProfileProto (profile_<step>): nodes, a map<int64, ProfileNode>,
 * first: an entry whose key (1) is a varint and value (2) a message starting
 * with the node's name, where an XPlane has its id (1) and name (2, text).
 */
static int profile_proto(const uint8_t *p, size_t len)
{
	struct tft_pb_raw f, in;

	const uint8_t *q = p;
	uint64_t key, v;

	/* the key: field 1, a varint (first_field() does not say where it ends) */
	if (!len || tft_pb_wire_varint(&q, p + len, &key) || key != (1 << 3 | TFT_PB_WT_VARINT) ||
	    tft_pb_wire_varint(&q, p + len, &v))
		return 0;
	len -= (size_t)(q - p);
	p = q;
	return len && first_field(p, len, &f) && f.num == 2 && f.wt == TFT_PB_WT_LEN && f.len &&
	       !printable(f.p, f.len) && first_field(f.p, f.len, &in) && in.num == 1 &&
	       in.wt == TFT_PB_WT_LEN;
}

/*
 * Is p[0..len), the first message of a file's field 1, a MetaGraphDef's
 * meta_info_def? Its stripped_op_list (2) is a message of OpDefs (1), each
 * a name then messages (input_arg 2, output_arg 3, attr 4 ...); a
 * DeviceStepStats's node_stats (2) has a NodeExecStats there, whose field 2
 * is a varint, a NodeDef's field 2 is its op (text).
 */
static int meta_info(const uint8_t *p, size_t len)
{
	struct tft_pb_raw f, op, g;

	for (int i = 0; i < 8 && len && first_field(p, len, &f); i++) {
		size_t used;

		if (f.num == 2) {
			const uint8_t *q;
			size_t n;

			if (f.wt != TFT_PB_WT_LEN || !f.len || printable(f.p, f.len) ||
			    !first_field(f.p, f.len, &op) || op.num != 1 || op.wt != TFT_PB_WT_LEN ||
			    !op.len || !first_field(op.p, op.len, &g) || g.num != 1 || g.wt != TFT_PB_WT_LEN ||
			    !printable(g.p, g.len))
				return 0;
			/* the OpDef's second field: a message (arg, attr, summary ...) */
			q = g.p + g.len;
			n = op.len - (size_t)(q - op.p);
			return q < op.p + op.len && first_field(q, n, &g) && g.num >= 2 && g.num <= 16 &&
			       g.wt == TFT_PB_WT_LEN;
		}
		if (f.wt != TFT_PB_WT_LEN || f.num != 1 || !printable(f.p, f.len))
			return 0; /* (meta_graph_version first, then the op list) */
		used = (size_t)(f.p - p) + f.len;
		if (used >= len)
			return 0;
		p += used;
		len -= used;
	}
	return 0;
}

static int wire_guess(const uint8_t *data, size_t len)
{
	struct tft_pb_raw top, in, in2;

	if (!first_field(data, len, &top))
		return TFT_PB_FMT_UNKNOWN;
	/* An OpLogProto without entries: its string table alone (a map entry, not a library). */
	if (top.num == 2 && top.wt == TFT_PB_WT_LEN && oplog_guess(data, len) > 0)
		return TFT_PB_FMT_OPLOG;
	if (top.num >= 2 && top.num <= 5 && top.wt == TFT_PB_WT_LEN) {
		/* RunMetadata without step_stats (cost graph / partition graphs first)
		 * or a GraphDef starting with library/versions: ambiguous. */
		return TFT_PB_FMT_UNKNOWN;
	}
	if (top.num != 1 || top.wt != TFT_PB_WT_LEN)
		return TFT_PB_FMT_UNKNOWN;
	if (!top.len)
		return TFT_PB_FMT_UNKNOWN;
	if (!first_field(top.p, top.len, &in))
		return TFT_PB_FMT_UNKNOWN;
	/* XPlane: id (1, varint) or name (2, "/..."), lines (3). */
	if (in.num == 1 && in.wt == TFT_PB_WT_VARINT)
		return profile_proto(top.p, top.len) ? TFT_PB_FMT_PROFILE : TFT_PB_FMT_XSPACE;
	if (in.num == 2 && in.wt == TFT_PB_WT_LEN && in.len && in.p[0] == '/' && printable(in.p, in.len))
		return TFT_PB_FMT_XSPACE;
	if (in.num == 1 && in.wt == TFT_PB_WT_LEN) {
		/* DeviceStepStats.device ("/job:...", "/gpu:0") or NodeDef.name. */
		if (in.len && printable(in.p, in.len)) {
			if (in.p[0] == '/')
				return TFT_PB_FMT_STEPSTATS;
			if (meta_info(top.p, top.len))
				return TFT_PB_FMT_METAGRAPH;
			if (hlo_module(top.p, top.len))
				return TFT_PB_FMT_HLOPROTO;
			if (oplog_guess(data, len) > 0)
				return TFT_PB_FMT_OPLOG;
			return wire_cost_node(top.p, top.len) ? TFT_PB_FMT_COSTGRAPH : TFT_PB_FMT_GRAPHDEF;
		}
		/* StepStats.dev_stats inside RunMetadata.step_stats: a DeviceStepStats
		 * starting with its device name or (device written last) a node. */
		if (first_field(in.p, in.len, &in2) && in2.wt == TFT_PB_WT_LEN &&
		    ((in2.num == 1 && printable(in2.p, in2.len)) || in2.num == 2))
			return TFT_PB_FMT_RUNMETA;
	}
	if (in.num == 2 && in.wt == TFT_PB_WT_LEN) {
		if (meta_info(top.p, top.len))
			return TFT_PB_FMT_METAGRAPH;
		/* DeviceStepStats without a device name: node_stats first. */
		if (first_field(in.p, in.len, &in2) && in2.num == 1 && in2.wt == TFT_PB_WT_LEN)
			return TFT_PB_FMT_STEPSTATS;
	}
	return TFT_PB_FMT_UNKNOWN;
}

int tft_pb_sniff(const uint8_t *data, size_t len, const char *filename)
{
	const char *base = filename ? filename : "";
	const char *slash = strrchr(base, '/');
	char first[64];
	size_t value;
	int g;

	if (slash)
		base = slash + 1;
	if (ends_with(base, ".xplane.pb") || ends_with(base, ".xspace.pb"))
		return TFT_PB_FMT_XSPACE;
	if (ends_with(base, ".hlo_proto.pb") || ends_with(base, ".hlo.pb"))
		return TFT_PB_FMT_HLOPROTO;
	if (!data || !len)
		return TFT_PB_FMT_UNKNOWN;
	if (len > 4096)
		len = 4096; /* a bounded prefix is enough */
	/*
	 * Text format: a known first field name. Binary data may look like
	 * one ("\nX\n:" is field 1 of 88 bytes, then field 1 of 58): then it
	 * holds a control byte (a key, a length) text never has.
	 */
	if (text_first_field(data, len, first, sizeof(first), &value)) {
		int text = TFT_PB_FMT_UNKNOWN;

		if (!strcmp(first, "step_stats") || !strcmp(first, "cost_graph") ||
		    !strcmp(first, "partition_graphs") || !strcmp(first, "function_graphs") ||
		    !strcmp(first, "session_metadata"))
			text = TFT_PB_FMT_RUNMETA_TEXT;
		else if (!strcmp(first, "dev_stats"))
			text = TFT_PB_FMT_STEPSTATS_TEXT;
		else if (!strcmp(first, "node"))
			text = text_node_kind(data, len, value);
		else if (!strcmp(first, "versions") || !strcmp(first, "library") || !strcmp(first, "version"))
			text = TFT_PB_FMT_GRAPHDEF_TEXT;
		else if (!strcmp(first, "cost")) /* CostGraphDef.cost (AggregatedCost) */
			text = TFT_PB_FMT_COSTGRAPH_TEXT;
		else if (!strcmp(first, "log_entries") || !strcmp(first, "id_to_string"))
			text = TFT_PB_FMT_OPLOG_TEXT;
		else if (!strcmp(first, "meta_info_def") || !strcmp(first, "graph_def"))
			text = TFT_PB_FMT_METAGRAPH_TEXT;
		if (!tft_pb_has_control_byte(data, len))
			return text;
		/*
		 * Text with a control byte in it is binary if it reads as binary;
		 * otherwise text after all, damaged (a NUL): the text reader then
		 * says where, not "unrecognised format".
		 */
		g = wire_guess(data, len);
		if (g != TFT_PB_FMT_UNKNOWN || text == TFT_PB_FMT_UNKNOWN)
			goto binary;
		return text;
	}
	g = wire_guess(data, len);
binary:
	/* Entries that hold only names tell nothing: tfprof names its file tfprof_log. */
	if (g == TFT_PB_FMT_GRAPHDEF && (contains_ci(base, "tfprof_log") || contains_ci(base, "op_log") ||
					 contains_ci(base, "oplog")) &&
	    oplog_guess(data, len) < 0)
		g = TFT_PB_FMT_OPLOG;
	if (g == TFT_PB_FMT_UNKNOWN && (data[0] == 0x12 || data[0] == 0x1a || data[0] == 0x22) &&
	    (contains_ci(base, "run_meta") || contains_ci(base, "runmeta") ||
	     contains_ci(base, "run_metadata"))) {
		struct tft_pb_raw top;

		if (first_field(data, len, &top))
			return TFT_PB_FMT_RUNMETA;
	}
	return g;
}

const char *tft_pb_xprof_tool_output(const char *filename)
{
	static const struct {
		const char *suffix, *what;
	} tools[] = {
		{ ".overview_page.pb", "overview page" },
		{ ".overview_page.json", "overview page" },
		{ ".input_pipeline.pb", "input pipeline analysis" },
		{ ".input_pipeline.json", "input pipeline analysis" },
		{ ".tensorflow_stats.pb", "TensorFlow stats" },
		{ ".kernel_stats.pb", "kernel stats" },
		{ ".pod_viewer.json", "pod viewer" },
		{ ".memory_profile.json", "memory profile" },
		{ ".memory_profile.json.gz", "memory profile" },
		{ ".op_profile.json", "op profile" },
		{ ".memory_viewer.json", "memory viewer" },
		{ ".tf_data_bottleneck_analysis.json", "tf.data bottleneck analysis" },
	};
	const char *base = filename ? filename : "", *slash = strrchr(base, '/');

	if (slash)
		base = slash + 1;
	for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++)
		if (ends_with(base, tools[i].suffix))
			return tools[i].what;
	return NULL;
}

const char *tft_tf_names_format_name(int fmt)
{
	switch (fmt) {
	case TFT_PB_FMT_XSPACE: return "xspace";
	case TFT_PB_FMT_RUNMETA: return "runmeta";
	case TFT_PB_FMT_STEPSTATS: return "stepstats";
	case TFT_PB_FMT_RUNMETA_TEXT: return "runmeta_text";
	case TFT_PB_FMT_STEPSTATS_TEXT: return "stepstats_text";
	case TFT_PB_FMT_GRAPHDEF: return "graphdef";
	case TFT_PB_FMT_GRAPHDEF_TEXT: return "graphdef_text";
	case TFT_PB_FMT_HLOPROTO: return "hloproto";
	case TFT_PB_FMT_COSTGRAPH: return "costgraph";
	case TFT_PB_FMT_COSTGRAPH_TEXT: return "costgraph_text";
	case TFT_PB_FMT_OPLOG: return "oplog";
	case TFT_PB_FMT_OPLOG_TEXT: return "oplog_text";
	case TFT_PB_FMT_PROFILE: return "profile";
	case TFT_PB_FMT_METAGRAPH: return "metagraph";
	case TFT_PB_FMT_METAGRAPH_TEXT: return "metagraph_text";
	default: return "unknown";
	}
}

/* ---- DataType ---------------------------------------------------------------- */

static const struct tft_pb_enum_val dtype_vals[] = {
	{"DT_INVALID", 0},    {"DT_FLOAT", 1},     {"DT_DOUBLE", 2},     {"DT_INT32", 3},
	{"DT_UINT8", 4},      {"DT_INT16", 5},     {"DT_INT8", 6},       {"DT_STRING", 7},
	{"DT_COMPLEX64", 8},  {"DT_INT64", 9},     {"DT_BOOL", 10},      {"DT_QINT8", 11},
	{"DT_QUINT8", 12},    {"DT_QINT32", 13},   {"DT_BFLOAT16", 14},  {"DT_QINT16", 15},
	{"DT_QUINT16", 16},   {"DT_UINT16", 17},   {"DT_COMPLEX128", 18}, {"DT_HALF", 19},
	{"DT_RESOURCE", 20},  {"DT_VARIANT", 21},  {"DT_UINT32", 22},    {"DT_UINT64", 23},
	{"DT_FLOAT8_E5M2", 24}, {"DT_FLOAT8_E4M3FN", 25}, {"DT_FLOAT8_E4M3FNUZ", 26},
	{"DT_FLOAT8_E4M3B11FNUZ", 27}, {"DT_FLOAT8_E5M2FNUZ", 28}, {"DT_INT4", 29},
	{"DT_UINT4", 30},     {"DT_INT2", 31},     {"DT_UINT2", 32},
};
#define NDTYPES (sizeof(dtype_vals) / sizeof(dtype_vals[0]))

/* "DT_FLOAT_REF" -> 101; other unknown DT_* names -> TFT_TF_DT_UNKNOWN. */
static int64_t dtype_lookup(const char *name, size_t len)
{
	if (len > 4 && memcmp(name + len - 4, "_REF", 4) == 0) {
		for (size_t i = 0; i < NDTYPES; i++)
			if (strlen(dtype_vals[i].name) == len - 4 &&
			    memcmp(dtype_vals[i].name, name, len - 4) == 0)
				return dtype_vals[i].value + 100;
	}
	if (len > 3 && memcmp(name, "DT_", 3) == 0)
		return TFT_TF_DT_UNKNOWN;
	return -1;
}

const struct tft_pb_enum tft_tf_dtype_enum = {dtype_vals, NDTYPES, dtype_lookup};

const char *tft_tf_dtype_name(int64_t v, char *buf, size_t size)
{
	int64_t base = v >= 100 && v < 200 ? v - 100 : v;

	for (size_t i = 0; i < NDTYPES; i++)
		if (dtype_vals[i].value == base) {
			/* As snprintf("%s%s") would, without printf (once per tensor on import). */
			const char *name = dtype_vals[i].name;
			size_t n = strlen(name), k = 0;

			if (!size)
				return buf;
			for (size_t j = 0; j < n && k + 1 < size; j++)
				buf[k++] = name[j];
			for (size_t j = 0; v != base && j < 4 && k + 1 < size; j++)
				buf[k++] = "_REF"[j];
			buf[k] = '\0';
			return buf;
		}
	return NULL;
}
