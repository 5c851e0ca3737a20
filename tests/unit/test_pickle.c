/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for the safe pickle reader: pickles built byte by byte from the
 * protocol (pickletools opcode table), allowed object graphs, forbidden
 * classes, truncation, bit flips, nesting bombs and huge length fields.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/pickle.h"
#include "tap.h"

/* A pickle literal (may contain NUL bytes). */
#define PK(lit) (const uint8_t *)(lit), sizeof(lit) - 1

static struct tft_error err;

static struct tft_pickle *parse(const uint8_t *p, size_t n)
{
	tft_error_clear(&err);
	return tft_pickle_parse(p, n, NULL, &err);
}

/* Parse must fail with TFT_EFORMAT, a message containing `what`, at byte `off` (-2: any). */
static void fails(const char *name, const uint8_t *p, size_t n, const char *what, int64_t off)
{
	struct tft_pickle *pk = parse(p, n);

	ok(pk == NULL, "%s: rejected", name);
	tft_pickle_destroy(pk);
	if (!ok(err.code == TFT_EFORMAT && strstr(err.msg, what) != NULL, "%s: says '%s'", name, what))
		printf("#   code %d msg \"%s\"\n", err.code, err.msg);
	if (off != -2)
		is_int(err.offset, off, "error offset");
}

static void test_scalars(void)
{
	struct tft_pickle *pk;
	const struct tft_pickle_value *v;

	pk = parse(PK("\x80\x02N."));
	ok(pk && tft_pickle_root(pk)->type == TFT_PICKLE_NONE, "NONE");
	is_int(tft_pickle_protocol(pk), 2, "protocol");
	is_int(tft_pickle_size(pk), 4, "size through STOP");
	tft_pickle_destroy(pk);

	/* (BININT1 200, BININT2 0xbeef, BININT -5, LONG1 -1, LONG1 int64 min, True, False, 1.5) */
	pk = parse(PK("\x80\x02(K\xc8M\xef\xbeJ\xfb\xff\xff\xff\x8a\x01\xff"
		      "\x8a\x08\x00\x00\x00\x00\x00\x00\x00\x80\x88\x89G\x3f\xf8\x00\x00\x00\x00\x00\x00t."));
	ok(pk != NULL, "scalar tuple parses");
	v = tft_pickle_root(pk);
	if (pk && v->type == TFT_PICKLE_TUPLE && v->n == 8) {
		is_int(v->u.items[0]->u.i, 200, "BININT1 unsigned");
		is_int(v->u.items[1]->u.i, 0xbeef, "BININT2 unsigned");
		is_int(v->u.items[2]->u.i, -5, "BININT signed");
		is_int(v->u.items[3]->u.i, -1, "LONG1 sign-extended");
		ok(v->u.items[4]->type == TFT_PICKLE_INT && v->u.items[4]->u.i == INT64_MIN, "LONG1 int64 min");
		ok(v->u.items[5]->type == TFT_PICKLE_BOOL && v->u.items[5]->u.i == 1, "NEWTRUE");
		ok(v->u.items[6]->type == TFT_PICKLE_BOOL && v->u.items[6]->u.i == 0, "NEWFALSE");
		ok(v->u.items[7]->type == TFT_PICKLE_FLOAT && v->u.items[7]->u.d == 1.5, "BINFLOAT big-endian");
	} else {
		ok(0, "scalar tuple shape");
	}
	tft_pickle_destroy(pk);

	/* LONG1 of 9 bytes: beyond int64 -> BIGINT, bytes kept */
	pk = parse(PK("\x80\x02\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x00\x01."));
	ok(pk && tft_pickle_root(pk)->type == TFT_PICKLE_BIGINT && tft_pickle_root(pk)->u.s.len == 9,
	   "LONG1 of 9 bytes is a BIGINT");
	tft_pickle_destroy(pk);

	/* every string/bytes opcode */
	pk = parse(PK("\x80\x04(\x8c\x02hiX\x03\x00\x00\x00" "abc\x8d\x01\x00\x00\x00\x00\x00\x00\x00z"
		      "C\x02\x00\x01" "B\x01\x00\x00\x00\xff\x8e\x00\x00\x00\x00\x00\x00\x00\x00"
		      "U\x03py2T\x01\x00\x00\x00q\x96\x01\x00\x00\x00\x00\x00\x00\x00\x07l."));
	v = tft_pickle_root(pk);
	if (ok(pk && v->type == TFT_PICKLE_LIST && v->n == 9, "string opcodes -> LIST of 9")) {
		ok(v->u.items[0]->type == TFT_PICKLE_STR && tft_pickle_str_is(v->u.items[0], "hi"), "SHORT_BINUNICODE");
		ok(tft_pickle_str_is(v->u.items[1], "abc"), "BINUNICODE");
		ok(tft_pickle_str_is(v->u.items[2], "z"), "BINUNICODE8");
		ok(v->u.items[3]->type == TFT_PICKLE_BYTES && v->u.items[3]->u.s.len == 2 &&
		   v->u.items[3]->u.s.p[1] == 1, "SHORT_BINBYTES keeps NUL bytes");
		ok(v->u.items[4]->u.s.len == 1 && v->u.items[4]->u.s.p[0] == 0xff, "BINBYTES");
		ok(v->u.items[5]->type == TFT_PICKLE_BYTES && v->u.items[5]->u.s.len == 0, "BINBYTES8 empty");
		ok(v->u.items[6]->type == TFT_PICKLE_BYTES && tft_pickle_str_is(v->u.items[6], "py2"),
		   "SHORT_BINSTRING is bytes");
		ok(tft_pickle_str_is(v->u.items[7], "q"), "BINSTRING");
		ok(v->u.items[8]->type == TFT_PICKLE_BYTES && v->u.items[8]->u.s.p[0] == 7, "BYTEARRAY8");
	}
	tft_pickle_destroy(pk);
}

static void test_containers(void)
{
	struct tft_pickle *pk;
	const struct tft_pickle_value *v, *d;

	/* [1, 2, 3] via EMPTY_LIST, APPEND, MARK..APPENDS; {a: 1, b: 2, a: 3} via SETITEM(S) */
	pk = parse(PK("\x80\x02(]K\x01" "a(K\x02K\x03" "e}X\x01\x00\x00\x00" "aK\x01s(X\x01\x00\x00\x00" "bK\x02"
		      "X\x01\x00\x00\x00" "aK\x03u)\x85\x8f(K\x09\x90\x86\x87t."));
	v = tft_pickle_root(pk);
	if (!ok(pk && v->type == TFT_PICKLE_TUPLE && v->n == 1, "nested containers parse")) {
		printf("#   %s\n", err.msg);
		tft_pickle_destroy(pk);
		return;
	}
	v = v->u.items[0]; /* TUPLE3 (list, dict, TUPLE2(...)) ... see below */
	ok(v->type == TFT_PICKLE_TUPLE && v->n == 3, "TUPLE3");
	d = v->u.items[0];
	ok(d->type == TFT_PICKLE_LIST && d->n == 3 && d->u.items[2]->u.i == 3, "APPEND + APPENDS");
	d = v->u.items[1];
	ok(d->type == TFT_PICKLE_DICT && d->n == 3, "SETITEM + SETITEMS keep 3 pairs");
	ok(tft_pickle_dict_get(d, "a")->u.i == 3, "the last value of a key wins");
	ok(tft_pickle_dict_get(d, "b")->u.i == 2, "dict_get b");
	ok(tft_pickle_dict_get(d, "zz") == NULL, "dict_get missing");
	d = v->u.items[2];
	ok(d->type == TFT_PICKLE_TUPLE && d->n == 2 && d->u.items[0]->type == TFT_PICKLE_TUPLE &&
	   d->u.items[0]->n == 1 && d->u.items[0]->u.items[0]->n == 0, "EMPTY_TUPLE, TUPLE1, TUPLE2");
	ok(d->u.items[1]->type == TFT_PICKLE_SET && d->u.items[1]->n == 1, "EMPTY_SET + ADDITEMS");
	tft_pickle_destroy(pk);

	/* DICT / LIST / TUPLE from MARK, POP, POP_MARK, DUP */
	pk = parse(PK("\x80\x02(K\x01K\x02" "dK\x07(K\x05K\x06" "1(K\x08l0(K\x01K\x02t2\x86."));
	v = tft_pickle_root(pk);
	if (ok(pk && v->type == TFT_PICKLE_TUPLE && v->n == 2, "POP/POP_MARK/DUP program")) {
		ok(v->u.items[0] == v->u.items[1] && v->u.items[0]->n == 2, "DUP pushes the same value");
	}
	tft_pickle_destroy(pk);
	pk = parse(PK("\x80\x02(K\x01K\x02" "d."));
	ok(pk && tft_pickle_dict_get_int(tft_pickle_root(pk), 1)->u.i == 2, "DICT from MARK, int key");
	tft_pickle_destroy(pk);

	/* memo: BINPUT/BINGET share one value; LONG_BINPUT/LONG_BINGET; MEMOIZE with FRAME */
	pk = parse(PK("\x80\x02]q\x01h\x01r\x05\x00\x00\x00j\x05\x00\x00\x00\x87."));
	v = tft_pickle_root(pk);
	ok(pk && v->n == 3 && v->u.items[0] == v->u.items[1] && v->u.items[1] == v->u.items[2],
	   "BINGET/LONG_BINGET return the stored value");
	tft_pickle_destroy(pk);
	pk = parse(PK("\x80\x04\x95\x0a\x00\x00\x00\x00\x00\x00\x00\x8c\x01x\x94K\x01\x94h\x00h\x01\x86."));
	v = tft_pickle_root(pk);
	ok(pk && tft_pickle_protocol(pk) == 4 && v->n == 2 && tft_pickle_str_is(v->u.items[0], "x") &&
	   v->u.items[1]->u.i == 1, "MEMOIZE numbers entries 0, 1, ...");
	tft_pickle_destroy(pk);
	/* shared sub-values (a DAG) are fine */
	pk = parse(PK("\x80\x02]q\x00h\x00h\x00\x86."));
	ok(pk != NULL, "a value referenced twice is accepted");
	tft_pickle_destroy(pk);
}

/* Large dicts are looked up through a hash index: same answers as a scan. */
static void test_big_dict(void)
{
	uint8_t b[4096];
	size_t n = 0;
	struct tft_pickle *pk;
	const struct tft_pickle_value *d, *v;
	int good = 1;

	b[n++] = 0x80, b[n++] = 2, b[n++] = '(', b[n++] = '}', b[n++] = '(';
	for (int i = 0; i < 100; i++) { /* "kNN": NN, then 1000 + NN for N < 10 */
		b[n++] = 'U', b[n++] = 3, b[n++] = 'k', b[n++] = (uint8_t)('0' + i / 10),
		b[n++] = (uint8_t)('0' + i % 10), b[n++] = 'K', b[n++] = (uint8_t)i;
	}
	for (int i = 0; i < 10; i++)
		b[n++] = 'X', b[n++] = 3, b[n++] = 0, b[n++] = 0, b[n++] = 0, b[n++] = 'k', b[n++] = '0',
		b[n++] = (uint8_t)('0' + i), b[n++] = 'M', b[n++] = (uint8_t)((1000 + i) & 0xff),
		b[n++] = (uint8_t)((1000 + i) >> 8);
	b[n++] = 'u', b[n++] = '}', b[n++] = '(';
	for (int i = 0; i < 60; i++)
		b[n++] = 'K', b[n++] = (uint8_t)i, b[n++] = 'K', b[n++] = (uint8_t)(i + 1);
	b[n++] = 'u', b[n++] = 'l', b[n++] = '.';
	pk = parse(b, n);
	if (!ok(pk != NULL, "big dicts parse")) {
		printf("#   %s\n", err.msg);
		return;
	}
	d = tft_pickle_root(pk)->u.items[0];
	is_int(d->n, 110, "110 pairs kept");
	for (int i = 0; i < 100; i++) {
		char key[4] = { 'k', (char)('0' + i / 10), (char)('0' + i % 10), 0 };

		v = tft_pickle_dict_get(d, key);
		good &= v && v->u.i == (i < 10 ? 1000 + i : i);
	}
	ok(good, "every key found; the later pair wins (str and py2 bytes keys alike)");
	ok(tft_pickle_dict_get(d, "k100") == NULL && tft_pickle_dict_get(d, "") == NULL, "absent keys");
	ok(tft_pickle_dict_get_int(d, 5) == NULL, "int lookup in a str-keyed dict");
	d = tft_pickle_root(pk)->u.items[1];
	good = 1;
	for (int i = 0; i < 60; i++)
		good &= tft_pickle_dict_get_int(d, i) && tft_pickle_dict_get_int(d, i)->u.i == i + 1;
	ok(good && tft_pickle_dict_get_int(d, 60) == NULL && tft_pickle_dict_get(d, "0") == NULL,
	   "int-keyed dict");
	tft_pickle_destroy(pk);
}

/* RunMetadata as Message.__reduce__ pickles it: (cls, (), {'serialized': b'...'}) */
static void test_allowed(void)
{
	struct tft_pickle *pk;
	const struct tft_pickle_value *v, *s;

	/* protocol 2/3 layout: GLOBAL + EMPTY_TUPLE + REDUCE + dict + BUILD */
	pk = parse(PK("\x80\x03" "ctensorflow.core.protobuf.config_pb2\nRunMetadata\nq\x00)Rq\x01}q\x02"
		      "X\x0a\x00\x00\x00serializedq\x03" "C\x03\x0a\x01\x00sb."));
	v = tft_pickle_root(pk);
	ok(pk && v->type == TFT_PICKLE_OBJECT && v->cls == TFT_PICKLE_CLS_RUN_METADATA,
	   "RunMetadata (GLOBAL, REDUCE, BUILD)");
	s = tft_pickle_attr(v, "serialized");
	ok(s && s->type == TFT_PICKLE_BYTES && s->u.s.len == 3 && s->u.s.p[0] == 0x0a,
	   "its state's serialized bytes");
	is_str(tft_pickle_class_name(v ? v->cls : 0), "tensorflow.core.protobuf.config_pb2.RunMetadata",
	       "class name");
	tft_pickle_destroy(pk);

	/* protocol 4: STACK_GLOBAL */
	pk = parse(PK("\x80\x04\x8c#tensorflow.core.protobuf.config_pb2\x94\x8c\x0bRunMetadata\x94\x93\x94"
		      ")R\x94}\x94\x8c\x0aserialized\x94" "C\x00\x94sb."));
	v = tft_pickle_root(pk);
	ok(pk && v->cls == TFT_PICKLE_CLS_RUN_METADATA && tft_pickle_attr(v, "serialized")->u.s.len == 0,
	   "RunMetadata via STACK_GLOBAL");
	tft_pickle_destroy(pk);

	/* protocol 2 bytes: _codecs.encode('\xe2\x0b', 'latin1') inside datetime.datetime(...) */
	pk = parse(PK("\x80\x02" "cdatetime\ndatetime\nq\x00" "c_codecs\nencode\nq\x01"
		      "X\x0b\x00\x00\x00\x07\xc3\xa2\x0b\x1e\x0c\x00\x01\x00\x00\x05q\x02"
		      "X\x06\x00\x00\x00latin1q\x03\x86q\x04Rq\x05\x85q\x06Rq\x07."));
	v = tft_pickle_root(pk);
	if (ok(pk && v->type == TFT_PICKLE_OBJECT && v->cls == TFT_PICKLE_CLS_DATETIME,
	       "datetime via _codecs.encode")) {
		s = v->u.obj.args->u.items[0];
		ok(s->type == TFT_PICKLE_BYTES && s->u.s.len == 10 && s->u.s.p[0] == 7 && s->u.s.p[1] == 0xe2,
		   "latin-1 text decoded to the 10 state bytes");
	} else {
		printf("#   %s\n", err.msg);
	}
	tft_pickle_destroy(pk);

	/* OrderedDict: REDUCE with () then SETITEMS; TracingSource: NEWOBJ + BUILD */
	pk = parse(PK("\x80\x03" "ctftracer.tracing_server\nTracingSource\nq\x00)\x81q\x01}q\x02("
		      "X\x0c\x00\x00\x00_run_profileq\x03" "ccollections\nOrderedDict\nq\x04)Rq\x05"
		      "X\x01\x00\x00\x00kq\x06K\x01sX\x07\x00\x00\x00runningq\x07\x89ub."));
	v = tft_pickle_root(pk);
	if (ok(pk && v->cls == TFT_PICKLE_CLS_TRACING_SOURCE, "TracingSource via NEWOBJ + BUILD")) {
		s = tft_pickle_attr(v, "_run_profile");
		ok(s && s->type == TFT_PICKLE_DICT && s->cls == TFT_PICKLE_CLS_ORDERED_DICT && s->n == 1,
		   "OrderedDict is a DICT filled by SETITEM");
		ok(tft_pickle_attr(v, "running")->type == TFT_PICKLE_BOOL, "attribute running");
	} else {
		printf("#   %s\n", err.msg);
	}
	tft_pickle_destroy(pk);

	/* copyreg._reconstructor(cls, object, None) and builtins.bytes() (protocol 2, empty bytes) */
	pk = parse(PK("\x80\x02(ccopy_reg\n_reconstructor\nctftracer.tracing_server\nTracingSource\n"
		      "c__builtin__\nobject\nN\x87Rc__builtin__\nbytes\n)Rt."));
	v = tft_pickle_root(pk);
	if (ok(pk && v->n == 2, "_reconstructor and bytes()")) {
		ok(v->u.items[0]->type == TFT_PICKLE_OBJECT &&
		   v->u.items[0]->cls == TFT_PICKLE_CLS_TRACING_SOURCE, "_reconstructor makes the object");
		ok(v->u.items[1]->type == TFT_PICKLE_BYTES && v->u.items[1]->u.s.len == 0, "bytes() is empty bytes");
	} else {
		printf("#   %s\n", err.msg);
	}
	tft_pickle_destroy(pk);

	ok(tft_pickle_probe(PK("\x80\x03")) && tft_pickle_probe(PK("\x80\x05")), "probe 3, 5");
	ok(!tft_pickle_probe(PK("\x80\x06")) && !tft_pickle_probe(PK("(lp0")) && !tft_pickle_probe(PK("\x80")),
	   "probe rejects protocol 6, protocol 0, 1 byte");
}

static void test_forbidden(void)
{
	fails("os.system", PK("\x80\x02" "cos\nsystem\nq\x00X\x02\x00\x00\x00idq\x01\x85Rq\x02."),
	      "class os.system is not allowed", 2);
	fails("posix.system", PK("\x80\x02" "cposix\nsystem\n."), "class posix.system is not allowed", 2);
	fails("builtins.eval", PK("\x80\x03" "cbuiltins\neval\nX\x01\x00\x00\x00" "1\x85R."),
	      "class builtins.eval is not allowed", 2);
	fails("subprocess.Popen via STACK_GLOBAL",
	      PK("\x80\x04\x8c\x0asubprocess\x8c\x05Popen\x93."), "class subprocess.Popen is not allowed", 21);
	fails("builtins.getattr", PK("\x80\x04\x8c\x08" "builtins\x8c\x07getattr\x93."),
	      "class builtins.getattr is not allowed", -2);
	fails("a dotted qualname", PK("\x80\x04\x8c\x0b" "collections\x8c\x14OrderedDict.fromkeys\x93."),
	      "not allowed", -2);
	fails("hostile bytes in the name", PK("\x80\x02" "c\x01\xff\nx\n."), "class \\x01\\xff.x is not allowed", 2);
	fails("GLOBAL without newline", PK("\x80\x02" "cos"), "not terminated by a newline", 2);
	fails("REDUCE on a str", PK("\x80\x02X\x01\x00\x00\x00x)R."), "REDUCE: cannot call a str", 9);
	fails("REDUCE with non-tuple args", PK("\x80\x02" "cdatetime\ndatetime\nNR."),
	      "arguments must be a tuple", -2);
	fails("_codecs.encode with a bad encoding",
	      PK("\x80\x02" "c_codecs\nencode\nX\x01\x00\x00\x00" "aX\x04\x00\x00\x00utf8\x86R."),
	      "expected (str, 'latin1')", -2);
	fails("NEWOBJ of a callable", PK("\x80\x02" "c_codecs\nencode\n)\x81."), "cannot instantiate", -2);
	fails("STACK_GLOBAL of ints", PK("\x80\x04K\x01K\x02\x93."), "must be str", -2);
	fails("BUILD on a list", PK("\x80\x02]}b."), "BUILD: cannot set the state of a list", -2);
	fails("SETITEM on a list", PK("\x80\x02]K\x01K\x02s."), "target is a list, expected a dict", -2);
	fails("APPEND on a dict", PK("\x80\x02}K\x01" "a."), "target is a dict", -2);
	fails("odd SETITEMS", PK("\x80\x02}(K\x01u."), "odd number of items", -2);
	fails("EXT1", PK("\x80\x02\x82\x01."), "extension-registry", 2);
	fails("PERSID", PK("\x80\x02Q."), "persistent ids", 2);
	fails("INST", PK("\x80\x02(i__main__\nX\n."), "instance opcode", 3);
	fails("NEXT_BUFFER", PK("\x80\x05\x97."), "out-of-band", 2);
	fails("text opcode", PK("\x80\x02I1\n."), "unsupported opcode 0x49 ('I')", 2);
	fails("unknown opcode", PK("\x80\x02\xff."), "unsupported opcode 0xff", 2);
}

static void test_malformed(void)
{
	fails("not a pickle", PK("(lp0\n."), "expected byte 0x80", 0);
	fails("protocol 6", PK("\x80\x06N."), "unsupported protocol 6", 0);
	fails("no STOP", PK("\x80\x02N"), "no STOP opcode", 3);
	fails("empty stack at STOP", PK("\x80\x02."), "STOP with an empty stack", 2);
	fails("underflow", PK("\x80\x02\x86."), "TUPLE2: stack underflow", 2);
	fails("underflow across a MARK", PK("\x80\x02K\x01(a."), "APPEND: stack underflow", 5);
	fails("APPENDS without MARK", PK("\x80\x02]e."), "no MARK", 3);
	fails("BINGET never stored", PK("\x80\x02h\x05."), "memo index 5 was never stored", 2);
	fails("LONG_BINPUT huge index", PK("\x80\x02N" "r\xff\xff\xff\xff."), "too large", 3);
	fails("BINUNICODE8 huge length",
	      PK("\x80\x04\x8d\xff\xff\xff\xff\xff\xff\xff\x7f" "abc."), "truncated input", 2);
	fails("BINBYTES 4 GiB", PK("\x80\x03" "B\xff\xff\xff\xff" "ab."), "truncated input", 2);
	fails("BINSTRING negative", PK("\x80\x02T\xff\xff\xff\xff."), "negative length", 2);
	fails("LONG4 negative", PK("\x80\x02\x8b\x00\x00\x00\x80."), "negative length", 2);
	fails("LONG4 huge", PK("\x80\x02\x8b\xff\xff\xff\x7f."), "truncated input", 2);
	fails("FRAME too long", PK("\x80\x04\x95\x00\x01\x00\x00\x00\x00\x00\x00N."), "FRAME longer", 2);
	fails("short BININT", PK("\x80\x02J\x01\x02"), "BININT needs 4 more bytes", 2);
	fails("self-referencing list", PK("\x80\x02]q\x00h\x00" "a."), "self-referencing", 2);
	fails("dict holding itself", PK("\x80\x02}q\x00K\x01h\x00s."), "self-referencing", 2);
}

static void test_bombs(void)
{
	struct tft_pickle_opts small = { 1000, 10 };
	struct tft_pickle *pk;
	uint8_t *b;
	size_t n, depth = 200;

	/* 200 nested lists (']' * 200 + 'a' * 199) > 100 levels */
	b = malloc(2 * depth + 3);
	n = 0;
	b[n++] = 0x80, b[n++] = 2;
	for (size_t i = 0; i < depth; i++)
		b[n++] = ']';
	for (size_t i = 1; i < depth; i++)
		b[n++] = 'a';
	b[n++] = '.';
	fails("nesting bomb", b, n, "nested deeper than 100 levels", -2);
	/* 10 deep is fine by default and too deep for max_depth 9 */
	n = 2;
	for (int i = 0; i < 10; i++)
		b[n++] = ']';
	for (int i = 1; i < 10; i++)
		b[n++] = 'a';
	b[n++] = '.';
	pk = parse(b, n);
	ok(pk != NULL, "10 levels parse");
	tft_pickle_destroy(pk);
	small.max_depth = 9;
	tft_error_clear(&err);
	pk = tft_pickle_parse(b, n, &small, &err);
	ok(!pk && strstr(err.msg, "nested deeper than 9"), "max_depth option");
	tft_pickle_destroy(pk);
	free(b);

	/* a billion-laughs DAG: each level holds the previous twice; memory stays linear */
	{
		char *lol = malloc(4096);
		size_t k = 0;

		k += (size_t)sprintf(lol + k, "\x80\x02]q%c", 0);
		for (int i = 1; i < 60; i++)
			k += (size_t)sprintf(lol + k, "h%ch%c\x86q%c", i - 1, i - 1, i);
		lol[k++] = '.';
		pk = parse((const uint8_t *)lol, k);
		ok(pk != NULL, "a 2^59-path DAG of 60 levels parses in linear memory");
		tft_pickle_destroy(pk);
		free(lol);
	}

	/* value budget: 2000 MARKs / EMPTY_LISTs with max_values 1000 */
	b = malloc(4004);
	n = 0;
	b[n++] = 0x80, b[n++] = 2;
	for (int i = 0; i < 2000; i++)
		b[n++] = ']';
	b[n++] = '.';
	tft_error_clear(&err);
	small.max_depth = 0;
	pk = tft_pickle_parse(b, n, &small, &err);
	ok(!pk && strstr(err.msg, "too many values (limit 1000)"), "value budget");
	tft_pickle_destroy(pk);
	n = 2;
	for (int i = 0; i < 2000; i++)
		b[n++] = '(';
	b[n++] = '.';
	tft_error_clear(&err);
	pk = tft_pickle_parse(b, n, &small, &err);
	ok(!pk && strstr(err.msg, "too many MARKs"), "MARK budget");
	tft_pickle_destroy(pk);
	/* BINGET pushes cost no values but are bounded by the stack limit */
	n = 0;
	b[n++] = 0x80, b[n++] = 2, b[n++] = 'N', b[n++] = 'q', b[n++] = 0;
	for (int i = 0; i < 1998; i++)
		b[n++] = 'h', b[n++] = 0;
	b[n++] = '.';
	tft_error_clear(&err);
	pk = tft_pickle_parse(b, n, &small, &err);
	ok(!pk && strstr(err.msg, "stack too deep"), "stack budget");
	tft_pickle_destroy(pk);
	free(b);
}

/* Every prefix and every single-bit flip of a real-shaped pickle: no crash, no leak. */
static void test_mutations(void)
{
	static const uint8_t good[] =
		"\x80\x03" "ctftracer.tracing_server\nTracingSource\nq\x00)\x81q\x01}q\x02("
		"X\x0c\x00\x00\x00_run_profileq\x03" "ccollections\nOrderedDict\nq\x04)Rq\x05"
		"X\x01\x00\x00\x00kq\x06}q\x07(X\x06\x00\x00\x00run_idq\x08K\x00X\x05\x00\x00\x00statsq\x09"
		"}q\x0aX\x08\x00\x00\x00runtimesq\x0b" "cdatetime\ntimedelta\nq\x0cK\x00K\x01M\xe8\x03\x87Rq\x0dsus"
		"X\x07\x00\x00\x00_tracesq\x0e}q\x0fK\x00]q\x10(" "ctensorflow.core.protobuf.config_pb2\n"
		"RunMetadata\nq\x11)Rq\x12}q\x13X\x0a\x00\x00\x00serializedq\x14" "C\x02\x0a\x00q\x15sbNesub.";
	size_t n = sizeof(good) - 1;
	uint8_t *b = malloc(n);
	int crashes = 0, accepted = 0;
	struct tft_pickle *pk = parse(good, n);

	if (!ok(pk != NULL, "mutation base parses"))
		printf("#   %s at %lld\n", err.msg, (long long)err.offset);
	tft_pickle_destroy(pk);
	for (size_t len = 0; len < n; len++) {
		memcpy(b, good, len);
		pk = parse(b, len);
		if (pk)
			accepted++;
		else if (err.code != TFT_EFORMAT)
			crashes++;
		tft_pickle_destroy(pk);
	}
	ok(accepted == 0 && crashes == 0, "all %zu truncations rejected with TFT_EFORMAT", n);
	accepted = 0;
	for (size_t i = 0; i < n; i++) {
		for (int bit = 0; bit < 8; bit++) {
			memcpy(b, good, n);
			b[i] ^= (uint8_t)(1u << bit);
			pk = parse(b, n);
			if (pk)
				accepted++;
			else if (err.code != TFT_EFORMAT || !err.msg[0])
				crashes++;
			tft_pickle_destroy(pk);
		}
	}
	ok(crashes == 0, "%zu bit flips: errors are TFT_EFORMAT with a message (%d parsed)", n * 8, accepted);
	free(b);
}

int main(void)
{
	test_scalars();
	test_containers();
	test_big_dict();
	test_allowed();
	test_forbidden();
	test_malformed();
	test_bombs();
	test_mutations();
	return done_testing();
}
