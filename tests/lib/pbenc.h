/* SPDX-License-Identifier: MIT */
/*
 * Protocol-buffer wire encoding for tests: builds RunMetadata, XSpace and
 * GraphDef bytes field by field from the documented field numbers, so the
 * importers are tested on inputs independent of our own reader.
 * Allocation failure aborts (tests only).
 */
#ifndef TFT_TESTS_PBENC_H
#define TFT_TESTS_PBENC_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A growable output buffer; zero-initialise, free(e.p) when done. */
struct enc {
	uint8_t *p;
	size_t len, cap;
};

__attribute__((unused)) static void e_byte(struct enc *e, uint8_t b)
{
	if (e->len == e->cap) {
		e->cap = e->cap ? e->cap * 2 : 256;
		e->p = realloc(e->p, e->cap);
		if (!e->p)
			abort();
	}
	e->p[e->len++] = b;
}

__attribute__((unused)) static void e_varint(struct enc *e, uint64_t v)
{
	while (v >= 0x80) {
		e_byte(e, (uint8_t)(v | 0x80));
		v >>= 7;
	}
	e_byte(e, (uint8_t)v);
}

__attribute__((unused)) static void e_int(struct enc *e, uint32_t num, uint64_t v)
{
	e_varint(e, (uint64_t)num << 3);
	e_varint(e, v);
}

__attribute__((unused)) static void e_bytes(struct enc *e, uint32_t num, const void *p, size_t n)
{
	e_varint(e, (uint64_t)num << 3 | 2);
	e_varint(e, n);
	for (size_t i = 0; i < n; i++)
		e_byte(e, ((const uint8_t *)p)[i]);
}

__attribute__((unused)) static void e_str(struct enc *e, uint32_t num, const char *s)
{
	e_bytes(e, num, s, strlen(s));
}

__attribute__((unused)) static void e_msg(struct enc *e, uint32_t num, struct enc *sub)
{
	e_bytes(e, num, sub->p, sub->len);
	free(sub->p);
	memset(sub, 0, sizeof(*sub));
}

/* A double (wire type 1) as field num. */
__attribute__((unused)) static void e_f64(struct enc *e, uint32_t num, double d)
{
	uint64_t v;

	memcpy(&v, &d, 8);
	e_varint(e, (uint64_t)num << 3 | 1);
	for (int i = 0; i < 8; i++)
		e_byte(e, (uint8_t)(v >> (8 * i)));
}

#endif /* TFT_TESTS_PBENC_H */
