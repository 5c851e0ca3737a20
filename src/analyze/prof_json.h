/* SPDX-License-Identifier: MIT */
/*
 * A small JSON tree for the values prof reads from a session: slice args
 * ("Input Dims", "Concrete Inputs", RunMetadata's "memory" and "output"),
 * graph node columns (attrs, inputs, output shapes, op types, code) and the
 * model_params meta. The text is untrusted: any input gives a tree or NULL
 * (nesting capped at 64), never a crash. Not for large documents: every
 * value is one node of an arena.
 */
#ifndef TFT_ANALYZE_PROF_JSON_H
#define TFT_ANALYZE_PROF_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum pj_type { PJ_NULL, PJ_FALSE, PJ_TRUE, PJ_NUM, PJ_STR, PJ_ARR, PJ_OBJ };

struct pj {
	uint8_t type;        /* enum pj_type */
	bool is_int;         /* PJ_NUM without fraction or exponent, within int64 */
	int64_t i;           /* PJ_NUM: the integer value (truncated when !is_int) */
	double d;            /* PJ_NUM */
	const char *s;       /* PJ_STR: decoded, NUL-terminated (arena); object members: the key */
	size_t len;          /* PJ_STR: bytes */
	const char *key;     /* this node as an object member: its key (arena), else NULL */
	struct pj *child;    /* PJ_ARR / PJ_OBJ: first element or member */
	struct pj *next;     /* next sibling */
	uint32_t n;          /* PJ_ARR / PJ_OBJ: number of children */
};

struct pj_doc;

/* Parse text[0..len). Returns the document (free with tft_pj_free) or NULL (bad JSON, no memory). */
struct pj_doc *tft_pj_parse(const char *text, size_t len);
const struct pj *tft_pj_root(const struct pj_doc *d);
void tft_pj_free(struct pj_doc *d);

/* Member `key` of an object, or NULL. */
const struct pj *tft_pj_get(const struct pj *o, const char *key);
/* Element i of an array, or NULL. */
const struct pj *tft_pj_at(const struct pj *a, uint32_t i);
/* An integer value (a number, or a bool as 0/1); def when v is not one. */
int64_t tft_pj_int(const struct pj *v, int64_t def);

/*
 * A shape: an array of integer dims into dims[0..max). Returns the number
 * of dims (0 for []), -1 when v is not an array of integers (or longer
 * than max).
 */
int tft_pj_dims(const struct pj *v, int64_t *dims, int max);

#endif /* TFT_ANALYZE_PROF_JSON_H */
