/* SPDX-License-Identifier: MIT */
/* Sets of time as sorted, disjoint intervals (ivset.h). */
#include <stdlib.h>
#include <string.h>

#include "analyze/ivset.h"
#include "core/grow.h"
#include "core/status.h"

void tft_ivset_fini(struct tft_ivset *s)
{
	free(s->v);
	free(s->pre);
	memset(s, 0, sizeof(*s));
}

void tft_ivset_clear(struct tft_ivset *s)
{
	s->n = 0;
	s->npre = 0;
	s->oom = false;
}

static bool reserve(struct tft_ivset *s, size_t need)
{
	if (tft_grow_size_ex((void **)&s->v, &s->cap, need, sizeof(*s->v), 64, 0)) {
		s->oom = true;
		return false;
	}
	return true;

}

void tft_ivset_add(struct tft_ivset *s, int64_t a, int64_t b)
{
	if (b <= a || !reserve(s, s->n + 1))
		return;
	s->v[s->n].a = a;
	s->v[s->n].b = b;
	s->n++;
	s->npre = 0;
}

void tft_ivset_add_sorted(struct tft_ivset *s, int64_t a, int64_t b)
{
	if (b <= a)
		return;
	if (s->n && a <= s->v[s->n - 1].b) {
		if (b > s->v[s->n - 1].b)
			s->v[s->n - 1].b = b;
		s->npre = 0;
		return;
	}
	tft_ivset_add(s, a, b);
}

static int cmp_iv(const void *x, const void *y)
{
	const struct tft_iv *p = x, *q = y;

	if (p->a != q->a)
		return p->a < q->a ? -1 : 1;
	return (p->b > q->b) - (p->b < q->b);
}

void tft_ivset_normalize(struct tft_ivset *s)
{
	size_t k = 0;
	bool sorted = true;

	for (size_t i = 1; i < s->n && sorted; i++)
		sorted = s->v[i - 1].a <= s->v[i].a;
	if (!sorted)
		qsort(s->v, s->n, sizeof(*s->v), cmp_iv);
	for (size_t i = 0; i < s->n; i++) {
		if (k && s->v[i].a <= s->v[k - 1].b) {
			if (s->v[i].b > s->v[k - 1].b)
				s->v[k - 1].b = s->v[i].b;
		} else {
			s->v[k++] = s->v[i];
		}
	}
	s->n = k;
	s->npre = 0;
}

int tft_ivset_index(struct tft_ivset *s)
{
	int64_t *np;

	if (s->npre == s->n + 1)
		return 0;
	np = realloc(s->pre, (s->n + 1) * sizeof(*np));
	if (!np)
		return TFT_ENOMEM;
	s->pre = np;
	np[0] = 0;
	for (size_t i = 0; i < s->n; i++)
		np[i + 1] = np[i] + (s->v[i].b - s->v[i].a);
	s->npre = s->n + 1;
	return 0;
}

int tft_ivset_union(struct tft_ivset *out, const struct tft_ivset *x, const struct tft_ivset *y)
{
	size_t i = 0, j = 0;

	tft_ivset_clear(out);
	if (!reserve(out, x->n + y->n))
		return TFT_ENOMEM;
	while (i < x->n || j < y->n) {
		const struct tft_iv *p = j >= y->n || (i < x->n && x->v[i].a <= y->v[j].a) ? &x->v[i++] : &y->v[j++];
		tft_ivset_add_sorted(out, p->a, p->b);
	}
	return out->oom ? TFT_ENOMEM : 0;
}

int64_t tft_ivset_measure(const struct tft_ivset *s)
{
	int64_t t = 0;

	if (s->npre == s->n + 1)
		return s->pre[s->n];
	for (size_t i = 0; i < s->n; i++)
		t += s->v[i].b - s->v[i].a;
	return t;
}

size_t tft_ivset_find(const struct tft_ivset *s, int64_t t)
{
	size_t lo = 0, hi = s->n;

	/* disjoint and sorted: the ends are sorted too */
	while (lo < hi) {
		size_t m = lo + (hi - lo) / 2;
		if (s->v[m].b <= t)
			lo = m + 1;
		else
			hi = m;
	}
	return lo;
}

int64_t tft_ivset_measure_in(const struct tft_ivset *s, int64_t a, int64_t b)
{
	size_t i, j;
	int64_t t = 0;

	if (b <= a || !s->n)
		return 0;
	i = tft_ivset_find(s, a);
	if (i >= s->n || s->v[i].a >= b)
		return 0;
	if (s->npre == s->n + 1) {
		/* j = the first interval starting at or after b */
		size_t lo = i, hi = s->n;
		while (lo < hi) {
			size_t m = lo + (hi - lo) / 2;
			if (s->v[m].a < b)
				lo = m + 1;
			else
				hi = m;
		}
		j = lo; /* intervals i..j-1 meet [a, b) */
		t = s->pre[j] - s->pre[i];
		if (s->v[i].a < a)
			t -= a - s->v[i].a;
		if (s->v[j - 1].b > b)
			t -= s->v[j - 1].b - b;
		return t;
	}
	for (; i < s->n && s->v[i].a < b; i++) {
		int64_t x = s->v[i].a > a ? s->v[i].a : a, y = s->v[i].b < b ? s->v[i].b : b;
		t += y - x;
	}
	return t;
}

int64_t tft_ivset_first_in(const struct tft_ivset *s, int64_t a, int64_t b)
{
	size_t i;

	if (b <= a)
		return INT64_MAX;
	i = tft_ivset_find(s, a);
	if (i >= s->n || s->v[i].a >= b)
		return INT64_MAX;
	return s->v[i].a > a ? s->v[i].a : a;
}
