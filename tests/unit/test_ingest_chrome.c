/* SPDX-License-Identifier: MIT */
/*
 * Tests for the Chrome / Kineto / tf.timeline importer: small inline
 * documents for every phase, read back through the session reader, then a
 * few real traces from the shared corpus (counts checked with python3).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "codec/json_write.h"
#include "collect/ingest.h"
#include "collect/ingest_chrome.h"
#include "export/export_chrome.h"
#include "store/session.h"
#include "store/writer.h"
#include "tap.h"

#define US INT64_C(1000) /* one microsecond in ns */

/* ---- helpers ------------------------------------------------------------- */

static char g_path[64];

static void new_path(void)
{
	snprintf(g_path, sizeof(g_path), "/tmp/tft_test_chrome_%d.tft", (int)getpid());
	unlink(g_path);
}

static struct tft_writer *open_writer(void)
{
	struct tft_error err;

	tft_error_clear(&err);
	new_path();
	return tft_writer_open(g_path, NULL, &err);
}

static struct tft_session *close_and_open(struct tft_writer *w)
{
	struct tft_error err;

	tft_error_clear(&err);
	if (tft_writer_close(w, &err)) {
		printf("# close: %s\n", err.msg);
		return NULL;
	}
	struct tft_session *s = tft_session_open(g_path, &err);
	if (!s)
		printf("# session open: %s\n", err.msg);
	return s;
}

/* Threads for import_block(): 0 = automatic, 1 = one, 2 = parser + committer. */
static int g_threads;

/*
 * Import doc with a JSON window of `block` bytes (0 = default) and open the
 * result. Returns NULL (and *rc) on an import error.
 */
static struct tft_session *import_block(const char *doc, size_t block, int *rc, struct tft_error *err)
{
	struct tft_json_reader_opts ro = { .block_size = block };
	struct tft_chrome_opts co = { .reader = block ? &ro : NULL, .threads = g_threads };
	struct tft_writer *w = open_writer();
	struct tft_source *src;

	tft_error_clear(err);
	src = tft_source_open_mem(doc, strlen(doc), "doc.json", err);
	*rc = tft_ingest_chrome_source(w, src, NULL, &co, err);
	tft_source_close(src);
	if (*rc) {
		tft_writer_abort(w);
		unlink(g_path);
		return NULL;
	}
	return close_and_open(w);
}

static struct tft_session *import(const char *doc)
{
	struct tft_error err;
	int rc;
	struct tft_session *s = import_block(doc, 0, &rc, &err);

	if (!s)
		printf("# import failed: %d %s at %lld\n", rc, err.msg, (long long)err.offset);
	return s;
}

static void done(struct tft_session *s)
{
	if (s)
		tft_session_close(s);
	unlink(g_path);
}

/* Track id by (process name or NULL, track name). */
static uint32_t find_track(struct tft_session *s, const char *proc, const char *name)
{
	for (uint32_t i = 0; i < tft_session_track_count(s); i++) {
		const struct tft_track *t = tft_session_track(s, i);
		const struct tft_process *p = tft_session_process(s, t->process);
		if (strcmp(tft_session_str(s, t->name, NULL), name) != 0)
			continue;
		if (proc && (!p || strcmp(tft_session_str(s, p->name, NULL), proc) != 0))
			continue;
		return t->id;
	}
	return UINT32_MAX;
}

/* Track id by (process pid, tid). */
static uint32_t find_tid(struct tft_session *s, int64_t pid, int64_t tid)
{
	for (uint32_t i = 0; i < tft_session_track_count(s); i++) {
		const struct tft_track *t = tft_session_track(s, i);
		const struct tft_process *p = tft_session_process(s, t->process);
		if (p && p->pid == pid && t->tid == tid)
			return t->id;
	}
	return UINT32_MAX;
}

/* Events of a track rendered as "name@ts+dur[flags]{args}" lines. */
struct dump {
	struct tft_session *s;
	char text[4096];
	size_t n;
	int count;
};

static int dump_ev(void *ctx, const struct tft_event *ev)
{
	struct dump *d = ctx;
	char args[1024];
	size_t an = 0;

	args[0] = '\0';
	for (uint16_t i = 0; i < ev->nargs && an < sizeof(args) - 100; i++) {
		const struct tft_arg *a = &ev->args[i];
		const char *k = tft_session_str(d->s, a->key, NULL);
		switch (a->type) {
		case TFT_ARG_INT:
			an += (size_t)snprintf(args + an, sizeof(args) - an, "%s%s=%lld", i ? "," : "", k,
					       (long long)a->v.i);
			break;
		case TFT_ARG_BOOL:
			an += (size_t)snprintf(args + an, sizeof(args) - an, "%s%s=%s", i ? "," : "", k,
					       a->v.i ? "true" : "false");
			break;
		case TFT_ARG_DOUBLE:
			an += (size_t)snprintf(args + an, sizeof(args) - an, "%s%s=%.17g", i ? "," : "", k,
					       a->v.d);
			break;
		case TFT_ARG_STR:
			an += (size_t)snprintf(args + an, sizeof(args) - an, "%s%s='%s'", i ? "," : "", k,
					       tft_session_str(d->s, a->v.str, NULL));
			break;
		case TFT_ARG_JSON:
			an += (size_t)snprintf(args + an, sizeof(args) - an, "%s%s=%s", i ? "," : "", k,
					       tft_session_str(d->s, a->v.str, NULL));
			break;
		default:
			an += (size_t)snprintf(args + an, sizeof(args) - an, "%s%s=null", i ? "," : "", k);
			break;
		}
	}
	char line[1400];
	int ln;
	if (ev->kind == TFT_EV_COUNTER)
		ln = snprintf(line, sizeof(line), "%lld=%g", (long long)ev->ts_ns, ev->value);
	else
		ln = snprintf(line, sizeof(line), "%s%s@%lld+%lld%s%s%s", ev->kind == TFT_EV_INSTANT ? "!" : "",
			      tft_session_str(d->s, ev->name, NULL), (long long)ev->ts_ns,
			      (long long)ev->dur_ns, ev->flags & TFT_EVF_UNCLOSED ? "[unclosed]" : "",
			      ev->flags & TFT_EVF_GLOBAL ? "[global]" : "",
			      ev->flags & TFT_EVF_PROCESS ? "[process]" : "");
	if (an && ln > 0 && (size_t)ln < sizeof(line))
		snprintf(line + ln, sizeof(line) - (size_t)ln, "{%s}", args);
	if (d->n < sizeof(d->text))
		d->n += (size_t)snprintf(d->text + d->n, sizeof(d->text) - d->n, "%s;", line);
	d->count++;
	return 0;
}

static const char *events(struct tft_session *s, uint32_t track)
{
	static struct dump d;
	struct tft_error err;

	memset(&d, 0, sizeof(d));
	d.s = s;
	if (track == UINT32_MAX)
		return "(no such track)";
	tft_error_clear(&err);
	if (tft_session_scan(s, track, INT64_MIN, INT64_MAX, 0, dump_ev, &d, &err))
		snprintf(d.text, sizeof(d.text), "(scan failed: %s)", err.msg);
	return d.text;
}

struct flows {
	struct tft_session *s;
	char text[4096];
	size_t n;
	int count;
};

static int dump_flow(void *ctx, const struct tft_flow *f)
{
	struct flows *d = ctx;

	d->n += (size_t)snprintf(d->text + d->n, sizeof(d->text) - d->n, "%s#%llu:%d@%lld->%d@%lld%s%s;",
				 tft_session_str(d->s, f->name, NULL), (unsigned long long)f->flow_id,
				 f->src_track == TFT_NONE ? -1 : (int)f->src_track, (long long)f->src_ts_ns,
				 f->dst_track == TFT_NONE ? -1 : (int)f->dst_track, (long long)f->dst_ts_ns,
				 f->flags & TFT_FLOWF_BIND_ENCLOSING ? "[e]" : "",
				 f->flags & TFT_FLOWF_UNMATCHED ? "[unmatched]" : "");
	d->count++;
	return 0;
}

static const char *flows(struct tft_session *s, int *count)
{
	static struct flows d;
	struct tft_error err;

	memset(&d, 0, sizeof(d));
	d.s = s;
	tft_error_clear(&err);
	tft_session_flows(s, dump_flow, &d, &err);
	*count = d.count;
	return d.text;
}

static long long meta_int(struct tft_session *s, const char *key)
{
	const char *v = tft_session_meta(s, key);

	return v ? atoll(v) : 0;
}

static const char *meta(struct tft_session *s, const char *key)
{
	const char *v = tft_session_meta(s, key);

	return v ? v : "(unset)";
}

/* ---- inline documents ---------------------------------------------------- */

static const char doc_slices[] =
	"{\"traceEvents\":[\n"
	" {\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"args\":{\"name\":\"proc one\"}},\n"
	" {\"ph\":\"X\",\"name\":\"a\",\"cat\":\"c\",\"pid\":1,\"tid\":2,\"ts\":1.0015,\"dur\":3,\"tts\":5,"
	"\"args\":{\"i\":5,\"d\":2.5,\"s\":\"st\\\"r\",\"b\":true,\"n\":null,\"o\":{\"x\": [1, 2]},"
	"\"big\":18446744073709551615,\"neg\":-9223372036854775808}},\n"
	" {\"ph\":\"B\",\"name\":\"outer\",\"pid\":1,\"tid\":2,\"ts\":10,\"args\":{\"k\":1,\"keep\":\"b\"}},\n"
	" {\"ph\":\"B\",\"name\":\"inner\",\"pid\":1,\"tid\":2,\"ts\":11},\n"
	" {\"ph\":\"E\",\"pid\":1,\"tid\":2,\"ts\":12,\"args\":{\"r\":\"done\"}},\n"
	" {\"ph\":\"E\",\"name\":\"different\",\"pid\":1,\"tid\":2,\"ts\":15,\"args\":{\"k\":2}},\n"
	" {\"ph\":\"E\",\"pid\":1,\"tid\":2,\"ts\":16},\n"
	" {\"ph\":\"B\",\"name\":\"open\",\"pid\":1,\"tid\":3,\"ts\":20,\"args\":{\"x\":1}},\n"
	" {\"ph\":\"X\",\"name\":\"late\",\"pid\":1,\"tid\":3,\"ts\":25,\"dur\":5, \"unknown\":{\"deep\":[[[]]]}},\n"
	" {\"ph\":\"X\",\"name\":\"neg\",\"pid\":1,\"tid\":3,\"ts\":-1.5,\"dur\":0.0001},\n"
	" {\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":2,\"args\":{\"name\":\"main\"}},\n"
	" {\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":1,\"tid\":2,\"args\":{\"sort_index\":-3}}\n"
	"]}\n";

static void test_slices(void)
{
	struct tft_session *s = import(doc_slices);
	struct tft_session_summary sum;

	ok(s != NULL, "slices doc imports");
	if (!s)
		return;
	tft_session_get_summary(s, &sum);
	is_str(sum.format, "chrome", "format chrome");
	is_int(sum.slices, 6, "6 slices (X, B/E pairs, unclosed B)");
	is_int(sum.unclosed_slices, 1, "one unclosed B");
	is_int(meta_int(s, "unmatched_ends"), 1, "one E without B");
	uint32_t t2 = find_track(s, "proc one", "main");
	ok(t2 != UINT32_MAX, "thread named by a thread_name M event after its events");
	is_str(events(s, t2),
	       "a@1002+3000{i=5,d=2.5,s='st\"r',b=true,n=null,o={\"x\": [1, 2]},big=18446744073709551615,"
	       "neg=-9223372036854775808};"
	       "outer@10000+5000{k=2,keep='b'};"
	       "inner@11000+1000{r='done'};",
	       "X args of every type; E closes the innermost B, merges its args; 1.0015 us -> 1002 ns");
	const struct tft_track *tt = tft_session_track(s, t2);
	is_int(tt ? tt->sort_index : 0, -3, "thread_sort_index");
	is_int(tt ? tt->kind : 0, TFT_TRACK_THREAD, "thread kind");
	is_str(events(s, find_tid(s, 1, 3)),
	       "neg@-1500+0;open@20000+10000[unclosed]{x=1};late@25000+5000;",
	       "unclosed B runs to the end of the trace; negative ts; 0.1 ns rounds to 0");
	done(s);
}

/*
 * The importer's string cache compares a string as its length and two words
 * (its first and last 8 bytes, or overlapping loads when shorter) plus, past
 * 16 bytes, its middle: names and arg keys that differ in one byte anywhere
 * must stay distinct strings, whatever their length.
 */
static const char doc_intern[] =
	"[\n"
	"{\"ph\":\"X\",\"name\":\"abcdefgh_X_12345678\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":0.5,"
	"\"args\":{\"key_aaaaaaaa_1_bbbbbbbb\":1}},\n"
	"{\"ph\":\"X\",\"name\":\"abcdefgh_Y_12345678\",\"pid\":1,\"tid\":1,\"ts\":2,\"dur\":0.5,"
	"\"args\":{\"key_aaaaaaaa_2_bbbbbbbb\":2}},\n"
	"{\"ph\":\"X\",\"name\":\"abcdefgh_X_12345678\",\"pid\":1,\"tid\":1,\"ts\":3,\"dur\":0.5,"
	"\"args\":{\"key_aaaaaaaa_1_bbbbbbbb\":3}},\n"
	"{\"ph\":\"X\",\"name\":\"aXb\",\"pid\":1,\"tid\":1,\"ts\":4,\"dur\":0.5},\n"
	"{\"ph\":\"X\",\"name\":\"aYb\",\"pid\":1,\"tid\":1,\"ts\":5,\"dur\":0.5},\n"
	"{\"ph\":\"X\",\"name\":\"abXde\",\"pid\":1,\"tid\":1,\"ts\":6,\"dur\":0.5},\n"
	"{\"ph\":\"X\",\"name\":\"abYde\",\"pid\":1,\"tid\":1,\"ts\":7,\"dur\":0.5},\n"
	"{\"ph\":\"X\",\"name\":\"0123456789abcdef\",\"pid\":1,\"tid\":1,\"ts\":8,\"dur\":0.5},\n"
	"{\"ph\":\"X\",\"name\":\"0123456789abcdeff\",\"pid\":1,\"tid\":1,\"ts\":9,\"dur\":0.5},\n"
	"{\"ph\":\"X\",\"name\":\"0123456789abcdef\",\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":0.5}\n"
	"]\n";

static void test_intern_cache(void)
{
	struct tft_session *s = import(doc_intern);

	ok(s != NULL, "intern doc imports");
	if (!s)
		return;
	is_str(events(s, find_tid(s, 1, 1)),
	       "abcdefgh_X_12345678@1000+500{key_aaaaaaaa_1_bbbbbbbb=1};"
	       "abcdefgh_Y_12345678@2000+500{key_aaaaaaaa_2_bbbbbbbb=2};"
	       "abcdefgh_X_12345678@3000+500{key_aaaaaaaa_1_bbbbbbbb=3};"
	       "aXb@4000+500;aYb@5000+500;abXde@6000+500;abYde@7000+500;"
	       "0123456789abcdef@8000+500;0123456789abcdeff@9000+500;0123456789abcdef@10000+500;",
	       "strings alike but for one byte (middle, short, one byte longer) stay distinct");
	done(s);
}

/* Array form, unterminated with a trailing comma, string pids. */
static const char doc_instants[] =
	"[\n"
	"{\"ph\":\"i\",\"name\":\"ti\",\"pid\":\"Proc A\",\"tid\":\"worker\",\"ts\":5,\"s\":\"t\"},\n"
	"{\"ph\":\"I\",\"name\":\"pi\",\"pid\":\"Proc A\",\"tid\":\"worker\",\"ts\":6,\"s\":\"p\"},\n"
	"{\"ph\":\"i\",\"name\":\"gi\",\"pid\":\"Proc A\",\"ts\":7,\"s\":\"g\"},\n"
	"{\"ph\":\"R\",\"name\":\"mark\",\"pid\":\"Proc A\",\"tid\":\"worker\",\"ts\":8},\n"
	"{\"ph\":\"C\",\"name\":\"mem\",\"pid\":\"Proc A\",\"ts\":10,\"args\":{\"value\":100}},\n"
	"{\"ph\":\"C\",\"name\":\"mem\",\"pid\":\"Proc A\",\"ts\":20,\"args\":{\"value\":50.5}},\n"
	"{\"ph\":\"C\",\"name\":\"ctr\",\"pid\":\"Proc A\",\"ts\":10,\"args\":{\"ctr\":1,\"other\":\"2\",\"s\":\"x\"}},\n"
	"{\"ph\":\"X\",\"name\":\"x\",\"pid\":\"7\",\"tid\":\"8\",\"ts\":\"1\",\"dur\":1},\n"
	"{\"ph\":\"P\",\"name\":\"sample\",\"pid\":1,\"tid\":1,\"ts\":1},\n"
	"{\"ph\":\"(\",\"pid\":1,\"tid\":1,\"ts\":1},\n"
	"{\"ph\":\"Z\",\"pid\":1,\"tid\":1,\"ts\":1},\n"
	"5, [1], \n"
	"{\"name\":\"no phase\"},\n";

static void test_instants_counters(void)
{
	struct tft_session *s = import(doc_instants);
	struct tft_session_summary sum;

	ok(s != NULL, "unterminated array with a trailing comma imports");
	if (!s)
		return;
	tft_session_get_summary(s, &sum);
	is_str(meta(s, "truncated"), "1", "truncated noted in meta");
	is_str(events(s, find_track(s, "Proc A", "worker")), "!ti@5000+0;!mark@8000+0;",
	       "thread instants on the string tid's track");
	is_str(events(s, find_track(s, "Proc A", "Instants")), "!pi@6000+0[process];",
	       "process-scoped instant");
	is_str(events(s, find_track(s, "Global", "Global")), "!gi@7000+0[global];", "global instant");
	is_str(events(s, find_track(s, "Proc A", "mem")), "10000=100;20000=50.5;", "counter 'mem' (key value)");
	is_str(events(s, find_track(s, "Proc A", "ctr")), "10000=1;", "counter key equal to its name");
	is_str(events(s, find_track(s, "Proc A", "ctr.other")), "10000=2;", "counter name.key, numeric string");
	ok(find_track(s, "Proc A", "ctr.s") == UINT32_MAX, "non-numeric counter arg ignored");
	const struct tft_track *t = tft_session_track(s, find_track(s, "Proc A", "mem"));
	is_int(t ? t->kind : 0, TFT_TRACK_COUNTER, "counter track kind");
	is_str(events(s, find_tid(s, 7, 8)), "x@1000+1000;", "numeric string pid/tid are integers");
	is_int(meta_int(s, "skipped_events"), 6, "P, (, unknown phase, non-objects, missing ph skipped");
	const struct tft_process *p = NULL;
	for (uint32_t i = 0; i < tft_session_process_count(s); i++) {
		const struct tft_process *q = tft_session_process(s, i);
		if (strcmp(tft_session_str(s, q->name, NULL), "Proc A") == 0)
			p = q;
	}
	ok(p && p->pid >= (INT64_C(1) << 32), "string pid gets a synthetic pid");
	is_int(sum.instants, 4, "4 instants");
	is_int(sum.counters, 4, "4 counter samples");
	done(s);
}

static const char doc_flows[] =
	"{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n"
	"{\"ph\":\"X\",\"name\":\"A\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":10},\n"
	"{\"ph\":\"X\",\"name\":\"B\",\"pid\":1,\"tid\":2,\"ts\":0,\"dur\":10},\n"
	"{\"ph\":\"X\",\"name\":\"C\",\"pid\":1,\"tid\":3,\"ts\":0,\"dur\":10},\n"
	"{\"ph\":\"s\",\"name\":\"f1\",\"cat\":\"c\",\"id\":1,\"pid\":1,\"tid\":1,\"ts\":1},\n"
	"{\"ph\":\"t\",\"name\":\"f1\",\"cat\":\"c\",\"id\":1,\"pid\":1,\"tid\":2,\"ts\":5},\n"
	"{\"ph\":\"f\",\"name\":\"f1\",\"cat\":\"c\",\"id\":1,\"pid\":1,\"tid\":3,\"ts\":9,\"bp\":\"e\"},\n"
	"{\"ph\":\"f\",\"name\":\"k\",\"cat\":\"ac2g\",\"id\":\"0x10\",\"pid\":1,\"tid\":3,\"ts\":30,\"bp\":\"e\"},\n"
	"{\"ph\":\"s\",\"name\":\"k\",\"cat\":\"ac2g\",\"id\":16,\"pid\":1,\"tid\":1,\"ts\":20},\n"
	"{\"ph\":\"s\",\"name\":\"lost\",\"cat\":\"c\",\"id\":2,\"pid\":1,\"tid\":1,\"ts\":3},\n"
	"{\"ph\":\"f\",\"name\":\"orphan\",\"cat\":\"c\",\"id\":3,\"pid\":1,\"tid\":2,\"ts\":4},\n"
	"{\"ph\":\"s\",\"name\":\"tf\",\"cat\":\"DataFlow\",\"id\":4,\"pid\":1,\"tid\":1,\"ts\":2},\n"
	"{\"ph\":\"t\",\"name\":\"tf\",\"cat\":\"DataFlow\",\"id\":4,\"pid\":1,\"tid\":2,\"ts\":6},\n"
	"{\"ph\":\"X\",\"name\":\"v2a\",\"pid\":1,\"tid\":1,\"ts\":40,\"dur\":1,\"bind_id\":\"0xab\",\"flow_out\":true},\n"
	"{\"ph\":\"X\",\"name\":\"v2b\",\"pid\":1,\"tid\":2,\"ts\":42,\"dur\":1,\"bind_id\":\"0xab\",\"flow_in\":true},\n"
	"{\"ph\":\"s\",\"name\":\"loc\",\"cat\":\"c\",\"id2\":{\"local\":\"0x1\"},\"pid\":1,\"tid\":1,\"ts\":50},\n"
	"{\"ph\":\"f\",\"name\":\"loc\",\"cat\":\"c\",\"id2\":{\"local\":\"0x1\"},\"pid\":2,\"tid\":1,\"ts\":51},\n"
	"{\"ph\":\"s\",\"name\":\"dup\",\"cat\":\"d\",\"id\":5,\"pid\":1,\"tid\":1,\"ts\":60},\n"
	"{\"ph\":\"s\",\"name\":\"dup\",\"cat\":\"d\",\"id\":5,\"pid\":1,\"tid\":1,\"ts\":61},\n"
	"{\"ph\":\"f\",\"name\":\"dup\",\"cat\":\"d\",\"id\":5,\"pid\":1,\"tid\":2,\"ts\":62},\n"
	"{\"ph\":\"f\",\"name\":\"dup\",\"cat\":\"d\",\"id\":5,\"pid\":1,\"tid\":2,\"ts\":63}\n"
	"]}";

static void test_flows(void)
{
	struct tft_session *s = import(doc_flows);
	int n = 0;

	ok(s != NULL, "flow doc imports");
	if (!s)
		return;
	uint32_t t1 = find_tid(s, 1, 1), t2 = find_tid(s, 1, 2), t3 = find_tid(s, 1, 3);
	uint32_t o1 = find_tid(s, 2, 1);
	char want[2048];
	snprintf(want, sizeof(want),
		 "f1#1:%u@1000->%u@5000;"
		 "f1#1:%u@5000->%u@9000[e];"
		 "k#16:%u@20000->%u@30000[e];"
		 "tf#4:%u@2000->%u@6000;"
		 "v2a#171:%u@40000->%u@42000;"
		 "dup#5:%u@60000->%u@62000;"
		 "dup#5:%u@61000->%u@63000;"
		 "orphan#3:-1@0->%u@4000[unmatched];"
		 "loc#1:-1@0->%u@51000[unmatched];"
		 "lost#2:%u@3000->-1@0[unmatched];"
		 "loc#1:%u@50000->-1@0[unmatched];",
		 t1, t2, t2, t3, t1, t3, t1, t2, t1, t2, t1, t2, t1, t2, t2, o1, t1, t1);
	const char *got = flows(s, &n);
	/* the store may return flows in any order: compare as sets of lines */
	int same = n == 11;
	for (const char *p = want; same && *p;) {
		const char *q = strchr(p, ';');
		char item[200];
		snprintf(item, sizeof(item), "%.*s;", (int)(q - p), p);
		if (!strstr(got, item)) {
			printf("# missing flow %s\n", item);
			same = 0;
		}
		p = q + 1;
	}
	ok(same, "flows: steps, bp e, out-of-order ac2g, hex ids, v2, id2.local, FIFO reuse, unmatched");
	if (!same)
		printf("# got %s\n", got);
	struct tft_session_summary sum;
	tft_session_get_summary(s, &sum);
	is_int(sum.unmatched_flows, 4, "4 unmatched flows");
	is_str(meta(s, "display_time_unit"), "ns", "displayTimeUnit kept as meta only");
	done(s);
}

static const char doc_async[] =
	"[\n"
	"{\"ph\":\"b\",\"name\":\"req\",\"cat\":\"net\",\"id\":1,\"pid\":1,\"ts\":10,\"args\":{\"url\":\"u\"}},\n"
	"{\"ph\":\"n\",\"name\":\"progress\",\"cat\":\"net\",\"id\":1,\"pid\":1,\"ts\":12},\n"
	"{\"ph\":\"b\",\"name\":\"req\",\"cat\":\"net\",\"id\":1,\"pid\":1,\"ts\":13},\n"
	"{\"ph\":\"e\",\"name\":\"req\",\"cat\":\"net\",\"id\":1,\"pid\":1,\"ts\":14},\n"
	"{\"ph\":\"e\",\"name\":\"req\",\"cat\":\"net\",\"id\":1,\"pid\":1,\"ts\":20,\"args\":{\"status\":200}},\n"
	"{\"ph\":\"S\",\"name\":\"old\",\"id\":\"x\",\"pid\":1,\"ts\":30},\n"
	"{\"ph\":\"T\",\"name\":\"old\",\"id\":\"x\",\"pid\":1,\"ts\":32},\n"
	"{\"ph\":\"F\",\"name\":\"old\",\"id\":\"x\",\"pid\":1,\"ts\":35},\n"
	"{\"ph\":\"b\",\"name\":\"nameless end\",\"cat\":\"net\",\"id\":3,\"pid\":1,\"ts\":36},\n"
	"{\"ph\":\"e\",\"cat\":\"net\",\"id\":3,\"pid\":1,\"ts\":37},\n"
	"{\"ph\":\"b\",\"name\":\"never\",\"cat\":\"net\",\"id\":9,\"pid\":1,\"ts\":40},\n"
	"{\"ph\":\"e\",\"name\":\"ghost\",\"cat\":\"net\",\"id\":7,\"pid\":1,\"ts\":41},\n"
	"{\"ph\":\"N\",\"name\":\"Tensor\",\"cat\":\"T\",\"id\":5,\"pid\":2,\"ts\":50},\n"
	"{\"ph\":\"O\",\"name\":\"Tensor\",\"cat\":\"T\",\"id\":5,\"pid\":2,\"ts\":55,\"args\":{\"snapshot\":{\"bytes\":64}}},\n"
	"{\"ph\":\"D\",\"name\":\"Tensor\",\"cat\":\"T\",\"id\":5,\"pid\":2,\"ts\":60},\n"
	"{\"ph\":\"N\",\"name\":\"Leak\",\"id\":\"0x6\",\"pid\":2,\"ts\":70},\n"
	"{\"ph\":\"D\",\"name\":\"Unknown\",\"id\":8,\"pid\":2,\"ts\":71},\n"
	"{\"ph\":\"X\",\"name\":\"end\",\"pid\":1,\"tid\":1,\"ts\":99,\"dur\":1}\n"
	"]";

static void test_async_objects(void)
{
	struct tft_session *s = import(doc_async);
	struct tft_session_summary sum;

	ok(s != NULL, "async/object doc imports");
	if (!s)
		return;
	tft_session_get_summary(s, &sum);
	uint32_t net = find_track(s, NULL, "net");
	const struct tft_track *t = net != UINT32_MAX ? tft_session_track(s, net) : NULL;
	is_int(t ? t->kind : 0, TFT_TRACK_ASYNC, "async track per (pid, cat)");
	is_str(events(s, net),
	       "req@10000+10000{url='u',status=200};!progress@12000+0;req@13000+1000;"
	       "nameless end@36000+1000;never@40000+60000[unclosed];",
	       "b/e nest by key, n instant, nameless e, unclosed b");
	is_str(events(s, find_track(s, NULL, "Async")), "old@30000+5000;!old@32000+0;",
	       "legacy S/T/F on the 'Async' track (no cat)");
	uint32_t tensor = find_track(s, NULL, "Tensor");
	t = tensor != UINT32_MAX ? tft_session_track(s, tensor) : NULL;
	is_int(t ? t->kind : 0, TFT_TRACK_OBJECT, "object track per (pid, name)");
	is_str(events(s, tensor),
	       "Tensor@50000+10000{id=5,snapshot={\"bytes\":64}};!Tensor@55000+0{snapshot={\"bytes\":64}};",
	       "N..D slice with id + snapshot args, O instant");
	is_str(events(s, find_track(s, NULL, "Leak")), "Leak@70000+30000[unclosed]{id='0x6'};",
	       "N without D runs to the end");
	ok(find_track(s, NULL, "Unknown") == UINT32_MAX,
	   "D without N: nothing to draw, no track (an empty one would shift track ids on a round trip)");
	is_int(sum.unclosed_slices, 1, "only the async b counts as unclosed");
	is_int(meta_int(s, "unmatched_ends"), 1, "e without b counted");
	done(s);
}

static const char doc_kineto[] =
	"{\"schemaVersion\":1,\"deviceProperties\":[ {\"id\": 0, \"name\": \"GPU\"} ],\n"
	" \"distributedInfo\":{\"backend\":\"nccl\",\"rank\":3,\"world_size\":8,\"pg_config\":[{\"x\":1}]},\n"
	" \"otherData\":{\"a\": [1, 2], \"s\": \"x y\"},\n"
	" \"host_name\":\"node7\",\n"
	" \"traceEvents\":[\n"
	"  {\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#7\",\"pid\":10,\"tid\":11,\"ts\":100,\"dur\":50},\n"
	"  {\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k1\",\"pid\":0,\"tid\":7,\"ts\":110.5,\"dur\":2.25},\n"
	"  {\"ph\":\"X\",\"cat\":\"gpu_user_annotation\",\"name\":\"ProfilerStep#7\",\"pid\":0,\"tid\":7,\"ts\":105,\"dur\":40},\n"
	"  {\"ph\":\"M\",\"name\":\"process_name\",\"pid\":0,\"args\":{\"name\":\"GPU 0\"}},\n"
	"  {\"ph\":\"M\",\"name\":\"process_labels\",\"pid\":0,\"args\":{\"labels\":\"GPU 0\"}},\n"
	"  {\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":0,\"args\":{\"sort_index\":5000000}},\n"
	"  {\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":0,\"tid\":7,\"args\":{\"name\":\"stream 7\"}},\n"
	"  {\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"nccl:all_reduce\",\"pid\":10,\"tid\":12,\"ts\":120,\"dur\":1},\n"
	"  {\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":10,\"tid\":12,\"args\":{\"name\":\"NCCL comm thread\"}},\n"
	"  {\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"c\",\"pid\":10,\"tid\":13,\"ts\":130,\"dur\":1},\n"
	"  {\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":10,\"tid\":13,\"args\":{\"name\":\"CommandBuffer\"}}\n"
	" ],\n"
	" \"systemTraceEvents\": \"# tracer: nop\\n...\",\n"
	" \"traceName\":\"t.json\",\"displayTimeUnit\":\"ms\",\"baseTimeNanoseconds\":1700000000000000000\n"
	"}\n";

static void test_kineto(void)
{
	struct tft_session *s = import(doc_kineto);
	struct tft_session_summary sum;
	const int64_t base = INT64_C(1700000000000000000);

	ok(s != NULL, "kineto doc imports");
	if (!s)
		return;
	tft_session_get_summary(s, &sum);
	is_str(sum.format, "kineto", "format kineto");
	is_str(sum.producer, "PyTorch Profiler", "producer");
	is_int(sum.steps, 1, "one step (the GPU annotation copy is not a step)");
	const struct tft_step *st = tft_session_step(s, 0);
	ok(st && st->index == 7 && st->start_ns == base + 100 * US && st->dur_ns == 50 * US && st->traced,
	   "ProfilerStep#7 -> step 7 at base + 100 us");
	uint32_t gpu = find_track(s, "GPU 0", "stream 7");
	const struct tft_track *t = gpu != UINT32_MAX ? tft_session_track(s, gpu) : NULL;
	is_int(t ? t->kind : 0, TFT_TRACK_GPU_STREAM, "'stream 7' is a GPU stream (named after its events)");
	ok(t && (t->flags & TFT_TRACKF_CONCURRENT) && !(t->flags & TFT_TRACKF_DERIVED),
	   "a GPU stream holds concurrent executions (lanes, not nesting)");
	char want[200];
	snprintf(want, sizeof(want), "k1@%lld+2250;", (long long)(base + 110500));
	is_str(events(s, gpu), want, "baseTimeNanoseconds after traceEvents shifts every ts");
	uint32_t ann = find_track(s, "GPU 0", "stream 7 annotations");
	t = ann != UINT32_MAX ? tft_session_track(s, ann) : NULL;
	ok(t && t->kind == TFT_TRACK_GPU_STREAM && t->flags == TFT_TRACKF_DERIVED,
	   "the stream's GPU user annotations: a derived track of their own");
	snprintf(want, sizeof(want), "ProfilerStep#7@%lld+40000;", (long long)(base + 105 * US));
	is_str(events(s, ann), want, "the annotation, shifted like every ts");
	t = tft_session_track(s, find_track(s, NULL, "NCCL comm thread"));
	is_int(t ? t->kind : 0, TFT_TRACK_COMM, "NCCL thread is a comm track");
	t = tft_session_track(s, find_track(s, NULL, "CommandBuffer"));
	is_int(t ? t->kind : 0, TFT_TRACK_THREAD, "'CommandBuffer' is not comm");
	const struct tft_process *p = t ? tft_session_process(s, t->process) : NULL;
	ok(p && p->rank == 3 && strcmp(tft_session_str(s, p->host, NULL), "node7") == 0,
	   "distributedInfo rank and host_name on the processes");
	p = gpu != UINT32_MAX ? tft_session_process(s, tft_session_track(s, gpu)->process) : NULL;
	ok(p && p->sort_index == 5000000 && strcmp(tft_session_str(s, p->labels, NULL), "GPU 0") == 0,
	   "process labels and sort index");
	is_str(meta(s, "world_size"), "8", "world_size");
	is_str(meta(s, "distributed_backend"), "nccl", "backend");
	is_str(meta(s, "device_properties"), "[{\"id\":0,\"name\":\"GPU\"}]", "deviceProperties compacted");
	is_str(meta(s, "other_data"), "{\"a\":[1,2],\"s\":\"x y\"}", "otherData compacted");
	is_str(meta(s, "trace_name"), "t.json", "traceName");
	is_str(meta(s, "base_time_ns"), "1700000000000000000", "base_time_ns");
	is_str(meta(s, "kineto_schema_version"), "1", "schemaVersion");
	ok(strcmp(meta(s, "system_trace_events"), "(unset)") != 0, "systemTraceEvents noted");
	done(s);
}

/* Window refills: the same documents with tiny windows give the same session. */
static void test_refills(void)
{
	static const char *docs[] = { doc_slices, doc_instants, doc_flows, doc_async, doc_kineto };
	static const size_t blocks[] = { 1, 7, 64 };

	for (size_t d = 0; d < sizeof(docs) / sizeof(docs[0]); d++) {
		struct tft_error err;
		struct tft_session_summary a, b;
		int rc, same = 1;
		struct tft_session *s = import_block(docs[d], 0, &rc, &err);
		if (!s) {
			ok(0, "doc %zu", d);
			continue;
		}
		tft_session_get_summary(s, &a);
		char ref[4096];
		snprintf(ref, sizeof(ref), "%s", events(s, 0));
		done(s);
		for (size_t i = 0; i < 2 * sizeof(blocks) / sizeof(blocks[0]); i++) {
			size_t block = blocks[i % (sizeof(blocks) / sizeof(blocks[0]))];
			g_threads = i < sizeof(blocks) / sizeof(blocks[0]) ? 1 : 2;
			s = import_block(docs[d], block, &rc, &err);
			g_threads = 0;
			if (!s) {
				printf("# block %zu: %s at %lld\n", block, err.msg, (long long)err.offset);
				same = 0;
				continue;
			}
			tft_session_get_summary(s, &b);
			if (a.slices != b.slices || a.instants != b.instants || a.counters != b.counters ||
			    a.flows != b.flows || a.tracks != b.tracks || a.start_ns != b.start_ns ||
			    a.end_ns != b.end_ns || a.steps != b.steps || strcmp(ref, events(s, 0)) != 0)
				same = 0;
			done(s);
		}
		ok(same, "doc %zu: same result with 1, 7 and 64-byte windows, on one and two threads", d);
	}
}

static void check_bad(const char *doc, int64_t offset, const char *msg, const char *what)
{
	struct tft_error err;
	struct tft_writer *w = open_writer();
	int rc = tft_ingest_mem(w, "bad.json", doc, strlen(doc), NULL, &err);

	tft_writer_abort(w);
	unlink(g_path);
	ok(rc == TFT_EFORMAT && err.offset == offset && strstr(err.msg, msg) &&
		   strcmp(err.file, "bad.json") == 0,
	   "%s: byte %lld '%s'", what, (long long)err.offset, err.msg);
}

static void test_malformed(void)
{
	check_bad("hello", 0,
		  "unrecognised format: expected a JSON trace, an XSpace (.xplane.pb), RunMetadata/StepStats "
		  "(binary or text), GraphDef, a tfprof OpLogProto (tfprof_log) or a tftracer/tfvis pickle",
		  "not JSON");
	check_bad("   x", 3, "unrecognised format", "not JSON after spaces");
	check_bad("", 0, "unrecognised format", "empty file");
	check_bad("{\"traceEvents\":[{\"ph\":\"X\",\"ts\":1,}]}", 33, "expected a string key after ','",
		  "trailing comma in an event");
	check_bad("[{\"ph\":\"X\",\"ts\":1e999}]", 16, "expected a time in microseconds",
		  "timestamp overflow");
	check_bad("{\"traceEvents\":[{\"ph\":\"X\"}", 26, "expected ',' or ']' after array element",
		  "object form cut after an event");
	check_bad("{\"traceEvents\":[{\"ph\":\"X\"}]", 27, "expected ',' or '}' after object member",
		  "object form missing its '}'");
	check_bad("[{\"ph\":\"X\",\"name\":\"a\\q\"}]", 20, "invalid escape", "bad escape in a name");
	check_bad("[{\"ph\":\"X\"} {\"ph\":\"X\"}]", 12, "expected ',' or ']' after array element",
		  "missing comma between events");
	check_bad("[{\"ph\":\"X\",\"ts\":01}]", 16, "invalid number", "leading zero");
	check_bad("\"just a string\"", 0, "unrecognised format", "top-level string");
	check_bad("[{\"ph\":\"X\"}] [", 13, "expected end of input", "garbage after the array");
	/* valid JSON that is not a trace */
	check_bad("{\"foo\": 1, \"bar\": [1, 2]}", 0, "expected a \"traceEvents\" array",
		  "object without traceEvents");
	check_bad("{\"traceEvents\": 5}", 16, "expected an array of trace events",
		  "traceEvents is a number");
	check_bad("{\"traceEvents\": {\"ph\": \"X\"}}", 16, "expected an array of trace events",
		  "traceEvents is an object");
	check_bad("[1,2,3]", 1, "expected trace event objects", "array of numbers");
	check_bad("{\"traceEvents\": [{\"a\": 1}, 7]}", 17, "expected trace event objects",
		  "events without \"ph\"");
	check_bad("{\"traceEvents\": [], \"traceEvents\": 1}", 35, "expected an array of trace events",
		  "a second traceEvents that is not an array");
	/* an event key the importer does not use is still checked to be JSON */
	check_bad("[{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1,\"zz\":[1,2 3]}]", 55,
		  "expected ',' or ']' after array element", "malformed array in an unused event key");
	check_bad("[{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1,\"zz\":{\"a\" 1}}]", 55,
		  "expected ':' after object key", "malformed object in an unused event key");
	/* a string time that holds no number: an error, never a silent 0 */
	check_bad("[{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":\"abc\",\"dur\":1}]", 43,
		  "expected a time in microseconds", "a string ts that is no number");
	check_bad("[{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":\"12\",\"dur\":\"1 \"}]", 54,
		  "expected a time in microseconds", "a string dur with a trailing space");
}

/*
 * Counters with ids are instances of their own ("name[id]", as Chrome's
 * viewer names them); non-finite counter values are no samples; a second
 * "args" replaces the first, as in JSON; an integer arg past int64 keeps
 * its digits; ids of 19 digits match as string and as number.
 */
static const char doc_review[] =
	"[{\"ph\":\"C\",\"name\":\"ctr\",\"id\":1,\"pid\":1,\"ts\":10,\"args\":{\"a\":1}},\n"
	"{\"ph\":\"C\",\"name\":\"ctr\",\"id\":\"b\",\"pid\":1,\"ts\":10,\"args\":{\"a\":100}},\n"
	"{\"ph\":\"C\",\"name\":\"ctr\",\"id\":1,\"pid\":1,\"ts\":11,\"args\":{\"a\":2}},\n"
	"{\"ph\":\"C\",\"name\":\"ctr\",\"pid\":1,\"ts\":12,\"args\":{\"value\":7}},\n"
	"{\"ph\":\"C\",\"name\":\"nf\",\"pid\":1,\"ts\":13,\"args\":{\"a\":\"NaN\",\"b\":1e400,\"c\":3}},\n"

	"{\"ph\":\"X\",\"name\":\"two\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1,\"args\":{\"x\":1},\"args\":{\"y\":2}},\n"
	"{\"ph\":\"X\",\"name\":\"S\",\"pid\":1,\"tid\":1,\"ts\":20,\"dur\":5,\"args\":{\"u\":18446744073709551615}},\n"
	"{\"ph\":\"X\",\"name\":\"D\",\"pid\":1,\"tid\":2,\"ts\":30,\"dur\":5},\n"
	"{\"ph\":\"s\",\"name\":\"f\",\"cat\":\"c\",\"id\":1234567890123456789,\"pid\":1,\"tid\":1,\"ts\":21},\n"
	"{\"ph\":\"f\",\"name\":\"f\",\"cat\":\"c\",\"id\":\"1234567890123456789\",\"pid\":1,\"tid\":2,\"ts\":31,\"bp\":\"e\"}]";

static void test_review_fixes(void)
{
	struct tft_session *s = import(doc_review);
	struct tft_session_summary sum;

	ok(s != NULL, "review cases import");
	if (!s)
		return;
	tft_session_get_summary(s, &sum);
	is_str(events(s, find_track(s, NULL, "ctr[1].a")), "10000=1;11000=2;", "counter instance ctr[1]");
	is_str(events(s, find_track(s, NULL, "ctr[b].a")), "10000=100;", "counter instance ctr[b], its own track");
	is_str(events(s, find_track(s, NULL, "ctr")), "12000=7;", "the counter without an id, apart");
	ok(find_track(s, NULL, "nf.a") == UINT32_MAX && find_track(s, NULL, "nf.b") == UINT32_MAX,
	   "non-finite counter values (\"NaN\", 1e400) are no samples");
	is_str(events(s, find_track(s, NULL, "nf.c")), "13000=3;", "the finite one of the same event is");
	is_str(events(s, find_tid(s, 1, 1)), "two@1000+1000{y=2};S@20000+5000{u=18446744073709551615};",
	       "a second args object replaces the first; an integer past int64 keeps its digits");
	is_int(sum.flows, 1, "a 19-digit id pairs as number and as string: one flow");
	is_int(meta_int(s, "unmatched_flows"), 0, "no unmatched flow end");
	done(s);
}

/* Valid traces that are empty or hold odd elements. */
static void test_empty_and_odd(void)
{
	struct tft_session_summary sum;
	struct tft_session *s = import("{\"traceEvents\": []}");

	ok(s != NULL, "empty traceEvents: an empty session");
	if (s) {
		tft_session_get_summary(s, &sum);
		ok(sum.slices == 0 && sum.tracks == 0, "  nothing in it");
	}
	done(s);
	s = import("[]");
	ok(s != NULL, "empty array: an empty session");
	done(s);
	s = import("[{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":2}, 7, [1], {}]");
	ok(s != NULL, "non-event elements next to an event are skipped");
	if (s) {
		tft_session_get_summary(s, &sum);
		ok(sum.slices == 1 && meta_int(s, "skipped_events") == 3, "  1 slice, 3 skipped");
	}
	done(s);
}

struct esc_check {
	struct tft_session *s;
	int n, bad;
};

static int check_esc(void *ctx, const struct tft_event *ev)
{
	struct esc_check *e = ctx;
	char want[64], wantv[32];
	int i = (int)(ev->ts_ns / 10000);

	snprintf(want, sizeof(want), "op\xc3\xa9\"%d", i);
	snprintf(wantv, sizeof(wantv), "v\t%d", i);
	if (strcmp(tft_session_str(e->s, ev->name, NULL), want) != 0 || ev->nargs != 1 ||
	    strcmp(tft_session_str(e->s, ev->args[0].key, NULL), "k\n") != 0 ||
	    strcmp(tft_session_str(e->s, ev->args[0].v.str, NULL), wantv) != 0)
		e->bad++;
	e->n++;
	return 0;
}

/* Escaped strings (decoded into the reader's scratch) survive batching on two threads. */
static void test_escapes_threads(void)
{
	char doc[65536];
	size_t n = 0;
	int ok_all = 1;

	n += (size_t)snprintf(doc + n, sizeof(doc) - n, "[");
	for (int i = 0; i < 300; i++)
		n += (size_t)snprintf(doc + n, sizeof(doc) - n,
				      "%s{\"ph\":\"X\",\"name\":\"op\\u00e9\\\"%d\",\"cat\":\"c\\/%d\","
				      "\"pid\":1,\"tid\":1,\"ts\":%d,\"dur\":1,\"args\":{\"k\\n\":\"v\\t%d\"}}",
				      i ? "," : "", i, i % 3, i * 10, i);
	n += (size_t)snprintf(doc + n, sizeof(doc) - n, "]");
	for (int th = 1; th <= 2; th++) {
		struct tft_error err;
		int rc;
		g_threads = th;
		struct tft_session *s = import_block(doc, 97, &rc, &err);
		g_threads = 0;
		if (!s) {
			printf("# threads %d: %s\n", th, err.msg);
			ok_all = 0;
			continue;
		}
		struct esc_check ec = { s, 0, 0 };
		tft_session_scan(s, 0, INT64_MIN, INT64_MAX, 0, check_esc, &ec, NULL);
		if (ec.n != 300 || ec.bad)
			printf("# threads %d: %d events, %d wrong\n", th, ec.n, ec.bad);
		ok_all &= ec.n == 300 && !ec.bad;
		done(s);
	}
	ok(ok_all, "escaped names decoded the same on one and two threads");

	/* a larger document: many windows, batches and a streamed key after the events */
	size_t cap = 16u << 20, m = 0;
	char *big = malloc(cap);
	if (!big) {
		ok(0, "malloc");
		return;
	}
	m += (size_t)snprintf(big + m, cap - m, "{\"schemaVersion\": 1, \"traceEvents\": [\n");
	for (int i = 0; i < 20000; i++)
		m += (size_t)snprintf(big + m, cap - m,
				      "%s{\"ph\": \"X\", \"name\": \"op%d\\n\", \"cat\": \"cpu_op\", "
				      "\"pid\": 1, \"tid\": %d, \"ts\": %d.%03d, \"dur\": %d,"
				      " \"args\": {\"a\": %d, \"d\": [%d, [1, 2.5]], \"s\": \"%*s\"}}",
				      i ? ",\n" : "", i % 97, i % 3, i * 7, i % 1000, i % 5 + 1, i, i,
				      i % 200, "x");
	m += (size_t)snprintf(big + m, cap - m,
			      "],\n\"systemTraceEvents\": \"%*s\", \"traceName\": \"big\"}", 100000, "y");
	struct tft_session_summary sums[2];
	char refs[2][4096];
	int got = 0;
	for (int th = 1; th <= 2; th++) {
		struct tft_error err;
		int rc;
		g_threads = th;
		struct tft_session *s = import_block(big, 8192, &rc, &err);
		g_threads = 0;
		if (!s) {
			printf("# threads %d: %s at %lld\n", th, err.msg, (long long)err.offset);
			continue;
		}
		tft_session_get_summary(s, &sums[th - 1]);
		snprintf(refs[th - 1], sizeof(refs[th - 1]), "%s", events(s, 1));
		got += strcmp(meta(s, "trace_name"), "big") == 0;
		done(s);
	}
	free(big);
	ok(got == 2 && sums[0].slices == 20000 && sums[1].slices == 20000 &&
		   sums[0].start_ns == sums[1].start_ns && sums[0].end_ns == sums[1].end_ns &&
		   strcmp(refs[0], refs[1]) == 0,
	   "20000 events in 8 KiB windows: the same session on one and two threads");
}

/* ---- round trip of a tftracer export -------------------------------------- */

static uint32_t track_named(struct tft_session *s, const char *name)
{
	for (uint32_t i = 0; i < tft_session_track_count(s); i++)
		if (strcmp(tft_session_str(s, tft_session_track(s, i)->name, NULL), name) == 0)
			return i;
	return UINT32_MAX;
}

/*
 * Track kinds, hosts, ranks and steps without a slice are not Chrome
 * concepts: the exporter lists them under "metadata" and the importer
 * restores them.
 */
static void test_tftracer_metadata(void)
{
	struct tft_error err;
	struct tft_writer *w = open_writer();
	struct tft_process p = { .pid = 4242, .rank = 5, .sort_index = 0 };
	struct tft_track t = { .sort_index = 0 };
	struct tft_event ev = { .dur_ns = 500, .count = 1, .kind = TFT_EV_SLICE };
	struct tft_step st = { 0 };
	static const struct { const char *name; uint32_t kind; int64_t tid; } tracks[] = {
		{ "lane a", TFT_TRACK_DEVICE, 3 },     /* a name the classifier reads as a thread */
		{ "lane b", TFT_TRACK_COMM, 4 },
		{ "stream 7", TFT_TRACK_THREAD, 7 },   /* ... and one it reads as a GPU stream */
	};
	uint32_t pid, ids[3];

	if (!w) {
		ok(0, "writer");
		return;
	}
	p.name = tft_writer_intern_cstr(w, "worker");
	p.host = tft_writer_intern_cstr(w, "node3");
	pid = tft_writer_add_process(w, &p);
	for (int i = 0; i < 3; i++) {
		t.process = pid;
		t.kind = tracks[i].kind;
		t.name = tft_writer_intern_cstr(w, tracks[i].name);
		t.tid = tracks[i].tid;
		ids[i] = tft_writer_add_track(w, &t);
		ev.track = ids[i];
		ev.name = tft_writer_intern_cstr(w, i == 0 ? "ProfilerStep#4" : "op");
		ev.ts_ns = 1000000 + 1000 * i;
		tft_writer_append(w, &ev);
	}
	/* step 4 is shown by its slice; step 9 has none (an untraced step) */
	st.index = 4;
	st.name = tft_writer_intern_cstr(w, "ProfilerStep#4");
	st.process = pid;
	st.start_ns = 1000000;
	st.dur_ns = 500;
	st.traced = true;
	tft_writer_add_step(w, &st);
	st.index = 9;
	st.name = tft_writer_intern_cstr(w, "run 9");
	st.start_ns = 5000000;
	st.dur_ns = 250000;
	st.traced = false;
	tft_writer_add_step(w, &st);
	struct tft_session *a = close_and_open(w);
	if (!a) {
		ok(0, "first session");
		return;
	}
	struct tft_json_writer jw;
	tft_json_write_init_mem(&jw);
	int rc = tft_export_chrome(a, &jw, NULL, &err);
	rc = rc ? rc : tft_json_write_finish(&jw);
	size_t len;
	const char *text = tft_json_write_borrow(&jw, &len);
	tft_session_close(a);
	ok(rc == 0 && strstr(text, "\"slice\":false"), "export lists a step without a slice");

	w = open_writer();
	rc = tft_ingest_mem(w, "export.json", text, len, NULL, &err);
	tft_json_write_fini(&jw);
	ok(rc == 0, "re-import of the export (%s)", rc ? err.msg : "ok");
	if (rc) {
		tft_writer_abort(w);
		return;
	}
	struct tft_session *b = close_and_open(w);
	if (!b) {
		ok(0, "second session");
		return;
	}
	int kinds_ok = 1;
	for (int i = 0; i < 3; i++) {
		uint32_t id = track_named(b, tracks[i].name);
		const struct tft_track *bt = id == UINT32_MAX ? NULL : tft_session_track(b, id);
		if (!bt || bt->kind != tracks[i].kind || bt->tid != tracks[i].tid) {
			printf("# track %s: kind %d tid %lld\n", tracks[i].name, bt ? (int)bt->kind : -1,
			       bt ? (long long)bt->tid : -1LL);
			kinds_ok = 0;
		}
	}
	ok(kinds_ok, "device, comm and thread kinds (and tids) restored");
	const struct tft_process *bp = tft_session_process_count(b) == 1 ? tft_session_process(b, 0) : NULL;
	ok(bp && bp->rank == 5 && bp->pid == 4242 &&
		   strcmp(tft_session_str(b, bp->host, NULL), "node3") == 0,
	   "host, rank and pid restored");
	is_int(tft_session_step_count(b), 2, "both steps come back, once each");
	int steps_ok = 0;
	for (uint32_t i = 0; i < tft_session_step_count(b); i++) {
		const struct tft_step *bs = tft_session_step(b, i);
		if (bs->index == 9 && bs->start_ns == 5000000 && bs->dur_ns == 250000 && !bs->traced &&
		    bs->process == 0 && strcmp(tft_session_str(b, bs->name, NULL), "run 9") == 0)
			steps_ok |= 1;
		if (bs->index == 4 && bs->start_ns == 1000000 && bs->dur_ns == 500 && bs->traced)
			steps_ok |= 2;
	}
	ok(steps_ok == 3, "the slice-less step and the slice step keep index, name, times, traced");
	done(b);

	/* the same keys in a file not written by tftracer are only kept as meta */
	static const char foreign[] =
		"{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1}],"
		"\"metadata\":{\"exporter\":\"other\",\"tracks\":[{\"pid\":1,\"tid\":1,\"kind\":\"device\"}],"
		"\"steps\":[{\"index\":1,\"start_ns\":0}]}}";
	b = import(foreign);
	ok(b && tft_session_track(b, 0)->kind == TFT_TRACK_THREAD && tft_session_step_count(b) == 0,
	   "metadata of another exporter is not applied");
	done(b);
}

/* Several files into one writer: formats joined with '+'. */
static void test_multi(void)
{
	struct tft_error err;
	struct tft_writer *w = open_writer();
	int rc1 = tft_ingest_mem(w, "a.json", doc_slices, strlen(doc_slices), NULL, &err);
	int rc2 = tft_ingest_mem(w, "b.json", doc_kineto, strlen(doc_kineto), NULL, &err);
	int rc3 = tft_ingest_mem(w, "c.json", doc_flows, strlen(doc_flows), NULL, &err);
	struct tft_session *s = close_and_open(w);

	ok(rc1 == 0 && rc2 == 0 && rc3 == 0 && s, "three documents into one writer");
	if (s) {
		struct tft_session_summary sum;
		tft_session_get_summary(s, &sum);
		is_str(sum.format, "chrome+kineto", "formats joined");
		ok(find_tid(s, 1, 2) != UINT32_MAX, "pid 1 of the first file kept");
	}
	done(s);
	/* a fresh writer does not inherit the previous formats */
	w = open_writer();
	rc1 = tft_ingest_mem(w, "b.json", doc_kineto, strlen(doc_kineto), NULL, &err);
	s = close_and_open(w);
	if (s) {
		struct tft_session_summary sum;
		tft_session_get_summary(s, &sum);
		is_str(sum.format, "kineto", "new writer starts a new format list");
	}
	done(s);
}

/* ---- real traces ---------------------------------------------------------- */

struct progress_rec {
	int calls;
	uint64_t last_events;
};

static void on_progress(void *ctx, uint64_t in, uint64_t total, uint64_t events)
{
	struct progress_rec *p = ctx;

	p->calls++;
	p->last_events = events;
	(void)in;
	(void)total;
}

static struct tft_session *import_file(const char *rel, struct progress_rec *pr)
{
	char path[1024];
	const char *data = getenv("TFT_DATA");
	struct tft_error err;
	struct tft_ingest_opts opts = { 0 };

	snprintf(path, sizeof(path), "%s/%s", data ? data : "../shared/data", rel);
	if (access(path, R_OK) != 0) {
		snprintf(path, sizeof(path), "/work/shared/data/%s", rel);
		if (access(path, R_OK) != 0)
			return NULL;
	}
	if (pr) {
		opts.progress = on_progress;
		opts.progress_ctx = pr;
	}
	struct tft_writer *w = open_writer();
	tft_error_clear(&err);
	int rc = tft_ingest_file(w, path, &opts, &err);
	if (rc) {
		printf("# %s: %s at %lld\n", rel, err.msg, (long long)err.offset);
		tft_writer_abort(w);
		return NULL;
	}
	return close_and_open(w);
}

static const char *data_path(const char *rel, char *path, size_t size)
{
	const char *data = getenv("TFT_DATA");

	char tmp[1024];

	snprintf(tmp, sizeof(tmp), "%s/%s", data ? data : "../shared/data", rel);
	if (access(tmp, R_OK) != 0)
		snprintf(tmp, sizeof(tmp), "/work/shared/data/%s", rel);
	if (size < PATH_MAX || !realpath(tmp, path)) /* absolute: symlinks point at it */
		return NULL;
	return path;
}

/* Import path (file or directory) into a fresh session; rc and err out. */
static struct tft_session *import_any(const char *path, int *rc, struct tft_error *err)
{
	struct tft_writer *w = open_writer();

	*rc = tft_ingest_file(w, path, NULL, err);
	if (*rc) {
		tft_writer_abort(w);
		unlink(g_path);
		return NULL;
	}
	return close_and_open(w);
}

/* gzip of data[0..len) (caller frees), or NULL. */
static unsigned char *gzip_mem(const void *data, size_t len, size_t *out_len)
{
	z_stream z;
	size_t cap = len + len / 2 + 1024;
	unsigned char *out = malloc(cap);

	memset(&z, 0, sizeof(z));
	if (!out || deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		free(out);
		return NULL;
	}
	z.next_in = (unsigned char *)(uintptr_t)data;
	z.avail_in = (uInt)len;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	int zr = deflate(&z, Z_FINISH);
	*out_len = cap - z.avail_out;
	deflateEnd(&z);
	if (zr != Z_STREAM_END) {
		free(out);
		return NULL;
	}
	return out;
}

static unsigned char *read_all(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "rb");
	unsigned char *buf = NULL;
	long n;

	if (!fp)
		return NULL;
	if (fseek(fp, 0, SEEK_END) == 0 && (n = ftell(fp)) >= 0 && fseek(fp, 0, SEEK_SET) == 0 &&
	    (buf = malloc((size_t)n + 1)) && fread(buf, 1, (size_t)n, fp) == (size_t)n) {
		*len = (size_t)n;
	} else {
		free(buf);
		buf = NULL;
	}
	fclose(fp);
	return buf;
}

/* The dispatch: protobuf (binary, text, gzip'd), directories of hosts, GraphDef, garbage. */
static void test_dispatch(void)
{
	char path[PATH_MAX], path2[PATH_MAX];
	struct tft_session_summary sum;
	struct tft_error err;
	struct tft_session *s;
	int rc;

	if (!data_path("tracelens/jax_mi300/jax08_gemm/tw003.xplane.pb", path, sizeof(path))) {
		ok(0, "tracelens/jax_mi300/jax08_gemm/tw003.xplane.pb not found (TFT_DATA)");
		return;
	}
	s = import_any(path, &rc, &err);
	ok(s != NULL, "an .xplane.pb imports (%s)", s ? "ok" : err.msg);
	if (s) {
		tft_session_get_summary(s, &sum);
		ok(strcmp(sum.format, "xspace") == 0 && sum.slices > 0, "  as xspace, %llu slices",
		   (unsigned long long)sum.slices);
	}
	done(s);

	/* the same bytes gzip'd, from memory */
	size_t len, zlen;
	unsigned char *raw = read_all(path, &len), *gz = raw ? gzip_mem(raw, len, &zlen) : NULL;
	struct tft_writer *w = open_writer();
	rc = gz ? tft_ingest_mem(w, "host.xplane.pb.gz", gz, zlen, NULL, &err) : -1;
	s = rc == 0 ? close_and_open(w) : (tft_writer_abort(w), NULL);
	ok(s != NULL, "a gzip'd XSpace from memory imports (%s)", s ? "ok" : err.msg);
	done(s);
	free(raw);
	free(gz);

	/* a profile run directory: one .xplane.pb per host, other files ignored */
	char dir[128];
	snprintf(dir, sizeof(dir), "/tmp/tft_test_run_%d", (int)getpid());
	mkdir(dir, 0700);
	snprintf(path2, sizeof(path2), "%s/hostA.xplane.pb", dir);
	symlink(path, path2);
	if (!data_path("tracelens/jax_mi300/jax08_elementwise/tw003.xplane.pb", path, sizeof(path)))
		ok(0, "tracelens/jax_mi300/jax08_elementwise/tw003.xplane.pb not found (TFT_DATA)");
	snprintf(path2, sizeof(path2), "%s/hostB.xplane.pb", dir);
	symlink(path, path2);
	snprintf(path2, sizeof(path2), "%s/notes.txt", dir);
	FILE *fp = fopen(path2, "w");
	if (fp) {
		fputs("not a trace\n", fp);
		fclose(fp);
	}
	s = import_any(dir, &rc, &err);
	ok(s != NULL, "a directory of .xplane.pb files imports (%s)", s ? "ok" : err.msg);
	if (s) {
		tft_session_get_summary(s, &sum);
		ok(sum.processes >= 2, "  processes of both hosts (%llu)", (unsigned long long)sum.processes);
	}
	done(s);
	snprintf(path2, sizeof(path2), "%s/hostA.xplane.pb", dir);
	unlink(path2);
	snprintf(path2, sizeof(path2), "%s/hostB.xplane.pb", dir);
	unlink(path2);
	s = import_any(dir, &rc, &err);
	ok(!s && rc == TFT_ENOTFOUND && strstr(err.msg, "no *.xplane.pb file"),
	   "a directory without .xplane.pb: %s", err.msg);
	snprintf(path2, sizeof(path2), "%s/notes.txt", dir);
	unlink(path2);
	rmdir(dir);

	if (data_path("xprof/test_xplanes/tpu_inference_2.xplane.pb", path, sizeof(path))) {
		s = import_any(path, &rc, &err);
		ok(!s && rc == TFT_EFORMAT && err.offset >= 0, "the corrupted tpu_inference_2.xplane.pb: %s",
		   err.msg);
	} else {
		ok(0, "xprof/test_xplanes/tpu_inference_2.xplane.pb not found (TFT_DATA)");
	}
	if (data_path("tensorboard/run_metadata_run_step99_tag_train.pbtxt", path, sizeof(path))) {
		s = import_any(path, &rc, &err);
		ok(s != NULL, "a text RunMetadata (.pbtxt) imports (%s)", s ? "ok" : err.msg);
		if (s) {
			tft_session_get_summary(s, &sum);
			ok(strcmp(sum.format, "runmeta") == 0 && sum.slices == 1, "  one node_stats");
		}
		done(s);
	} else {
		ok(0, "tensorboard/run_metadata_run_step99_tag_train.pbtxt not found (TFT_DATA)");
	}
	if (data_path("tensorboard/graphdef/graphdef_mnist.pbtxt", path, sizeof(path))) {
		s = import_any(path, &rc, &err);
		ok(s != NULL, "a text GraphDef goes to the graph importer (%s)", s ? "ok" : err.msg);
		done(s);
	} else {
		ok(0, "tensorboard/graphdef/graphdef_mnist.pbtxt not found (TFT_DATA)");
	}
	static const unsigned char junk[] = { 0xf3, 0x01, 0x02, 0x99, 0x00, 0xff };
	w = open_writer();
	rc = tft_ingest_mem(w, "junk.bin", junk, sizeof(junk), NULL, &err);
	tft_writer_abort(w);
	unlink(g_path);
	ok(rc == TFT_EFORMAT && strstr(err.msg, "unrecognised format"), "unknown binary: %s", err.msg);
}

/* Counts verified with python3's json module (see the report in the tests' header). */
static void test_real(void)
{
	struct tft_session_summary sum;
	struct progress_rec pr = { 0, 0 };
	struct tft_session *s;

	s = import_file("catapult/flow.json", NULL);
	ok(s != NULL, "catapult/flow.json");
	if (s) {
		tft_session_get_summary(s, &sum);
		/* 1625 B, 1622 E (all matched), 866 s + 886 f paired FIFO per (cat, id) */
		ok(sum.slices == 1625 && sum.unclosed_slices == 3 && sum.flows == 906 &&
			   sum.unmatched_flows == 60 && strcmp(sum.format, "chrome") == 0,
		   "flow.json: 1625 slices (3 unclosed), 906 flows (60 unmatched): got %llu/%llu/%llu/%llu",
		   (unsigned long long)sum.slices, (unsigned long long)sum.unclosed_slices,
		   (unsigned long long)sum.flows, (unsigned long long)sum.unmatched_flows);
	}
	done(s);

	s = import_file("hta/trace_filter/sampled_rank-0.json.gz", &pr);
	ok(s != NULL, "hta sampled_rank-0.json.gz (gzip)");
	if (s) {
		tft_session_get_summary(s, &sum);
		/* 4811 X + 44 M; ProfilerStep#N twice; rank 0 of 128 */
		ok(sum.slices == 4811 && sum.steps == 2 && strcmp(sum.format, "kineto") == 0,
		   "sampled_rank-0: 4811 slices, 2 steps, kineto");
		is_str(meta(s, "world_size"), "128", "world size 128");
		ok(pr.calls >= 1 && pr.last_events == 4855, "progress reported (%d calls, %llu events)",
		   pr.calls, (unsigned long long)pr.last_events);
	}
	done(s);

	s = import_file("ikhlestov-tf-profiling/GPU/timeline_01.json", NULL);
	ok(s != NULL, "tf.timeline GPU timeline_01.json");
	if (s) {
		tft_session_get_summary(s, &sum);
		/* 31 X, 2 s + 2 t (DataFlow), 15 M */
		ok(sum.slices == 31 && sum.flows == 2 && sum.unmatched_flows == 0 &&
			   strcmp(sum.format, "tf_timeline") == 0 && strcmp(sum.producer, "TensorFlow") == 0,
		   "timeline_01: 31 slices, 2 flows, tf_timeline");
		int kinds[TFT_TRACK_KIND_MAX + 1] = { 0 };
		for (uint32_t i = 0; i < tft_session_track_count(s); i++)
			kinds[tft_session_track(s, i)->kind]++;
		uint32_t dev = find_track(s, "/job:localhost/replica:0/task:0/gpu:0 Compute", "");
		uint32_t str = UINT32_MAX;
		for (uint32_t i = 0; i < tft_session_track_count(s); i++) {
			const struct tft_track *t = tft_session_track(s, i);
			const char *pn = tft_session_str(s, tft_session_process(s, t->process)->name, NULL);
			if (strcmp(pn, "/gpu:0/stream:12 Compute") == 0)
				str = t->id;
		}
		ok(dev != UINT32_MAX && tft_session_track(s, dev)->kind == TFT_TRACK_DEVICE,
		   "'/job:.../gpu:0 Compute' lanes are device tracks");
		ok(str != UINT32_MAX && tft_session_track(s, str)->kind == TFT_TRACK_GPU_STREAM,
		   "'/gpu:0/stream:12 Compute' lanes are GPU streams");
		/* TF <= 1.3 wrote CPU devices as /cpu:0: a device like /gpu:0, not a thread */
		uint32_t cpu = find_track(s, "/job:localhost/replica:0/task:0/cpu:0 Compute", "");
		ok(cpu != UINT32_MAX && tft_session_track(s, cpu)->kind == TFT_TRACK_DEVICE,
		   "'/job:.../cpu:0 Compute' lanes are device tracks");
	}
	done(s);

	s = import_file("kineto/tb_plugin_samples/resnet50_num_workers_0/worker0.pt.trace.json.gz", NULL);
	ok(s != NULL, "kineto resnet50 worker0 (old schema, string tids)");
	if (s) {
		tft_session_get_summary(s, &sum);
		/* 54320 X, 2 i, 9282 s + 10015 f (per (cat,id): 9282 pairs, 733 lone f) */
		ok(sum.slices == 54320 && sum.instants == 2 && sum.flows == 10015 &&
			   sum.unmatched_flows == 733 && sum.steps == 6 && strcmp(sum.format, "kineto") == 0,
		   "resnet50: 54320 slices, 2 instants, 10015 flows (733 unmatched), 6 steps");
		uint32_t st = find_track(s, NULL, "stream 7");
		ok(st != UINT32_MAX && tft_session_track(s, st)->kind == TFT_TRACK_GPU_STREAM,
		   "tid 'stream 7' is a GPU stream");
	}
	done(s);
}

int main(void)
{
	test_slices();
	test_intern_cache();
	test_instants_counters();
	test_flows();
	test_async_objects();
	test_kineto();
	test_refills();
	test_malformed();
	test_review_fixes();
	test_empty_and_odd();
	test_escapes_threads();
	test_tftracer_metadata();
	test_multi();
	test_real();
	test_dispatch();
	return done_testing();
}
