/* SPDX-License-Identifier: MIT */
/*
 * A safe reader for Python pickles (protocols 2-5): builds an inert value
 * tree and never runs anything. Class references (GLOBAL, STACK_GLOBAL) are
 * accepted only from a fixed allow-list (the classes TensorFlow-era tracer
 * files contain) and become plain "object(class, args, state)" nodes.
 */
#ifndef TFT_CODEC_PICKLE_H
#define TFT_CODEC_PICKLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

struct tft_hmap;

enum tft_pickle_type {
	TFT_PICKLE_NONE = 1,
	TFT_PICKLE_BOOL,   /* u.i is 0 or 1 */
	TFT_PICKLE_INT,    /* u.i */
	TFT_PICKLE_BIGINT, /* an int beyond int64: u.s = little-endian two's complement bytes */
	TFT_PICKLE_FLOAT,  /* u.d */
	TFT_PICKLE_STR,    /* Python 3 str: u.s = its UTF-8 bytes (not validated) */
	TFT_PICKLE_BYTES,  /* bytes, bytearray, Python 2 str: u.s */
	TFT_PICKLE_TUPLE,  /* u.items[0..n) */
	TFT_PICKLE_LIST,   /* u.items[0..n) */
	TFT_PICKLE_DICT,   /* u.items[0..2n): key, value, key, value ... (insertion order) */
	TFT_PICKLE_SET,    /* set / frozenset: u.items[0..n) */
	TFT_PICKLE_CLASS,  /* a reference to an allowed global: cls */
	TFT_PICKLE_OBJECT, /* an instance of an allowed class: cls, u.obj.args, u.obj.state */
};

/* The allow-list. Anything else in a GLOBAL/STACK_GLOBAL is rejected. */
enum tft_pickle_class {
	TFT_PICKLE_CLS_NONE = 0,
	TFT_PICKLE_CLS_ORDERED_DICT,   /* collections.OrderedDict: instances are DICTs */
	TFT_PICKLE_CLS_DATETIME,       /* datetime.datetime: args (10-byte state[, tzinfo]) */
	TFT_PICKLE_CLS_DATE,           /* datetime.date: args (4-byte state) */
	TFT_PICKLE_CLS_TIMEDELTA,      /* datetime.timedelta: args (days, seconds, microseconds) */
	TFT_PICKLE_CLS_RECONSTRUCTOR,  /* copyreg._reconstructor (protocol < 2 objects) */
	TFT_PICKLE_CLS_OBJECT,         /* builtins.object */
	TFT_PICKLE_CLS_CODECS_ENCODE,  /* _codecs.encode: bytes pickled by protocol 2 */
	TFT_PICKLE_CLS_BYTES,          /* builtins.bytes: empty bytes pickled by protocol 2 */
	TFT_PICKLE_CLS_RUN_METADATA,   /* tensorflow.core.protobuf.config_pb2.RunMetadata */
	TFT_PICKLE_CLS_STEP_STATS,     /* tensorflow.core.framework.step_stats_pb2.StepStats */
	TFT_PICKLE_CLS_TRACING_SOURCE, /* tftracer.tracing_server.TracingSource */
};
#define TFT_PICKLE_CLS_MAX TFT_PICKLE_CLS_TRACING_SOURCE

/*
 * One value. Plain data: read the fields directly. Every pointer is
 * borrowed from the document (tft_pickle_destroy frees them all); string
 * bytes may point into the input buffer, which must outlive the document.
 * Values can be shared (the pickle memo), so the tree is a DAG; the parser
 * rejects cycles.
 */
struct tft_pickle_value {
	uint8_t type;   /* enum tft_pickle_type */
	uint8_t cls;    /* CLASS, OBJECT: enum tft_pickle_class; DICT: ORDERED_DICT or NONE */
	uint8_t state_; /* private: graph check */
	uint32_t n;     /* TUPLE, LIST, SET: items; DICT: key/value pairs */
	uint32_t cap_;  /* private: allocated item slots */
	uint32_t height_; /* private: graph check */
	int64_t offset; /* byte offset of the opcode that made the value */
	struct tft_hmap *index_; /* private: DICT key -> pair index (large dicts) */
	union {
		int64_t i;
		double d;
		struct {
			const uint8_t *p; /* borrowed */
			size_t len;
		} s;
		struct tft_pickle_value **items; /* borrowed */
		struct {
			struct tft_pickle_value *args;  /* borrowed; NULL if none */
			struct tft_pickle_value *state; /* borrowed; NULL until BUILD */
		} obj;
	} u;
};

struct tft_pickle_opts {
	uint32_t max_values; /* values + container slots + stack entries; 0 = 4M */
	uint32_t max_depth;  /* object-graph nesting; 0 = 100 */
};

struct tft_pickle;

/*
 * Parse data[0..len) (borrowed; must outlive the document) up to its STOP
 * opcode. Returns NULL and fills err on failure: TFT_EFORMAT with the byte
 * offset of the offending opcode ("pickle: class os.system is not allowed",
 * "pickle: truncated ..."), TFT_ENOMEM, or TFT_EFORMAT when a limit of opts
 * (NULL = defaults) is exceeded.
 */
struct tft_pickle *tft_pickle_parse(const uint8_t *data, size_t len,
				    const struct tft_pickle_opts *opts, struct tft_error *err);
void tft_pickle_destroy(struct tft_pickle *p);

/* The unpickled value (what pickle.load returns); borrowed from p. */
const struct tft_pickle_value *tft_pickle_root(const struct tft_pickle *p);
/* The protocol from the PROTO opcode (0 when absent). */
int tft_pickle_protocol(const struct tft_pickle *p);
/* Bytes consumed up to and including STOP. */
size_t tft_pickle_size(const struct tft_pickle *p);

/* 1 if head[0..len) starts like a pickle of protocol 2..5 (0x80, version). */
int tft_pickle_probe(const uint8_t *head, size_t len);

/* "collections.OrderedDict" ... ("" for NONE / unknown). */
const char *tft_pickle_class_name(int cls);
/* "none", "bool", "int" ... for messages. */
const char *tft_pickle_type_name(int type);

/*
 * Dictionary lookups (the last pair with the key wins, as in Python).
 * STR and BYTES keys compare by their bytes, so Python 2 keys match too.
 * dict may be NULL or not a DICT: the result is then NULL. Constant time
 * on large dicts (they are hashed once, after parsing).
 */
const struct tft_pickle_value *tft_pickle_dict_get(const struct tft_pickle_value *dict,
						   const char *key);
const struct tft_pickle_value *tft_pickle_dict_get_int(const struct tft_pickle_value *dict,
						       int64_t key);

/*
 * An attribute of an OBJECT: a key of its BUILD state dict (or of the dict
 * in a (dict, slots) state tuple). NULL if absent.
 */
const struct tft_pickle_value *tft_pickle_attr(const struct tft_pickle_value *obj,
					       const char *name);

/* True if v is a STR or BYTES equal to s. */
bool tft_pickle_str_is(const struct tft_pickle_value *v, const char *s);

#endif /* TFT_CODEC_PICKLE_H */
