/* SPDX-License-Identifier: MIT */
/*
 * The query layer (src/query/) on its own, with no server: the four
 * answers (viewport, slice, search, stats) on a session imported from a
 * real Kineto trace, their refusals (status, text, and which one wins when
 * several parameters are bad), that each *_check refuses exactly what its
 * answer refuses before reading the session, the state objects (a flow
 * index built once by tft_qry_flows_own, a search index whose argument part
 * only a query asking for args builds), and the library-status mapping of
 * struct tft_qry_err. tests/e2e/http_query_same.py checks that the server
 * answers as before, byte for byte.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collect/ingest.h"
#include "query/search.h"
#include "query/slice.h"
#include "query/stats.h"
#include "query/viewport.h"
#include "store/session.h"
#include "store/writer.h"
#include "tap.h"

#define TRACE "tracelens/kineto_h100/gaunernst_bert-small-uncased__1016001.json.gz"

static char dir[] = "/tmp/tft-qry-XXXXXX";
static struct tft_session *sess;
static struct tft_qry_viewport_scratch *vsc;
static struct tft_qry_flows *fx;
static struct tft_qry_search_index *six;

enum { VIEWPORT, SLICE, SEARCH, STATS };

/* One answer: its status (0 ok), its text in out (malloc'd) or the error message. */
static int answer(int which, const char *qs, char **out)
{
	struct tft_query q;
	struct tft_json_writer w;
	struct tft_qry_err e = { 0, "" };
	size_t len = 0;
	int rc;

	if (tft_query_parse(&q, qs, strlen(qs)) != 0) {
		*out = strdup("(bad query string)");
		return -1;
	}
	tft_json_write_init_mem(&w);
	switch (which) {
	case VIEWPORT: rc = tft_qry_viewport(sess, vsc, &q, &w, &e); break;
	case SLICE: rc = tft_qry_slice(sess, tft_qry_flows_own, &fx, &q, &w, &e); break;
	case SEARCH: rc = tft_qry_search(sess, six, &q, &w, &e); break;
	default: rc = tft_qry_stats(sess, &q, &w, &e); break;
	}
	if (rc == 0) {
		const char *t = tft_json_write_borrow(&w, &len);
		*out = strndup(t, len);
	} else {
		*out = strdup(e.msg);
		if ((unsigned)rc != e.status)
			printf("# returned %d, e.status %u\n", rc, e.status);
	}
	tft_json_write_fini(&w);
	return rc;
}

/* The session-free check of `which`: 0 or the status. */
static int check(int which, const char *qs, struct tft_qry_err *e)
{
	struct tft_query q;

	if (tft_query_parse(&q, qs, strlen(qs)) != 0)
		return -1;
	switch (which) {
	case VIEWPORT: return tft_qry_viewport_check(&q, e);
	case SLICE: return tft_qry_slice_check(&q, e);
	case SEARCH: return tft_qry_search_check(&q, e);
	default: return tft_qry_stats_check(&q, e);
	}
}

struct refusal {
	int which;
	const char *qs;
	int status;
	const char *msg;
	bool before_session; /* the check refuses it too */
};

static const struct refusal refusals[] = {
	{ VIEWPORT, "width=0", 400, "width must be an integer in 1..10000", true },
	{ VIEWPORT, "width=10001&rel=7", 400, "width must be an integer in 1..10000", true },
	{ VIEWPORT, "rel=2&t0=x", 400, "rel must be 0 or 1", true },
	{ VIEWPORT, "t0=x&tracks=zz", 400, "t0 and t1 must be integer nanoseconds", false },
	{ VIEWPORT, "t0=5&t1=4", 400, "t1 must not be before t0", false },
	{ VIEWPORT, "tracks=999999", 404, "no such track", false },
	{ VIEWPORT, "tracks=1,x,999999", 400, "tracks must be a comma-separated list of track ids", false },
	{ SLICE, "track=1", 400, "track and ts are required", true },
	{ SLICE, "track=x&ts=0&deepest=5", 400, "track, ts and depth must be integers", true },
	{ SLICE, "track=1&ts=0&deepest=2", 400, "deepest must be 0 or 1", true },
	{ SLICE, "track=1&ts=0&seq=-1&nav=up", 400, "seq must be a non-negative integer", true },
	{ SLICE, "track=1&ts=0&nav=up&deepest=1", 400, "nav must be next or prev", true },
	{ SLICE, "track=1&ts=0&nav=next&deepest=1", 400, "deepest=1 and nav exclude each other", true },
	{ SLICE, "track=1&ts=0&seq=0&deepest=1", 400, "deepest=1 and seq exclude each other", true },
	{ SLICE, "track=999999&ts=0", 404, "no such track", false },
	{ SLICE, "track=0&ts=-9000000000000000000&depth=0", 404, "no slice at this time and depth", false },
	{ SLICE, "track=0&ts=-9000000000000000000&depth=0&nav=prev", 404, "no earlier slice at this depth", false },
	{ SEARCH, "limit=0", 400, "q is required", true },
	{ SEARCH, "q=a&exact=2&regex=3", 400, "exact must be 0 or 1", true },
	{ SEARCH, "q=a&regex=1&exact=1", 400, "exact=1 and regex=1 exclude each other", true },
	{ SEARCH, "q=a&limit=0&in=zz", 400,
	  "regex, limit, after_ts, after_track, after_depth, after_seq must be integers in range", true },
	{ SEARCH, "q=a&in=name,", 400, "in must be a comma-separated list of name, cat, args, track", true },
	{ SEARCH, "q=(a)%5C1&regex=1", 400, "back-references (\\1 to \\9) are not supported in a regex", true },
	{ SEARCH, "q=(&regex=1", 400, "not a valid POSIX extended regular expression", true },
	{ STATS, "by=op&t0=x", 400, "by must be name, category or track", true },
	{ STATS, "t0=5&t1=4&clip=9", 400, "t0 and t1 must be integer nanoseconds, t0 <= t1", true },
	{ STATS, "clip=2&top=-1", 400, "clip must be 0 or 1", true },
	{ STATS, "top=1000001", 400, "top must be an integer in 0..1000000", true },
	{ STATS, "track=999999", 404, "no such track", false },
	{ STATS, "track=1,,2", 400, "track must be a comma-separated list of track ids", false },
};

static void test_refusals(void)
{
	char big[300];

	for (size_t i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++) {
		const struct refusal *r = &refusals[i];
		struct tft_qry_err e = { 0, "" };
		char *out = NULL;
		int rc = answer(r->which, r->qs, &out), crc = check(r->which, r->qs, &e);

		ok(rc == r->status && strcmp(out, r->msg) == 0, "refuses %s: %d %s (got %d %s)", r->qs,
		   r->status, r->msg, rc, out);
		if (r->before_session)
			ok(crc == r->status && strcmp(e.msg, r->msg) == 0, "check refuses %s too", r->qs);
		else
			ok(crc == 0, "check lets %s through (it needs the session)", r->qs);
		free(out);
	}
	snprintf(big, sizeof(big), "q=%0257d", 0);
	{
		char *out = NULL;
		int rc = answer(SEARCH, big, &out);
		ok(rc == 400 && !strcmp(out, "q is limited to 256 bytes of text"), "search: 257-byte q refused");
		free(out);
	}
}

static void test_answers(void)
{
	char *a = NULL, *b = NULL, qs[256];
	const char *p;
	long long ts = 0;
	unsigned track = 0, depth = 0;
	const struct tft_qry_flows *first;

	ok(answer(VIEWPORT, "width=800", &a) == 0 && !strncmp(a, "{\"t0\":", 6) &&
	   strstr(a, "\"tracks\":[{\"id\":0,") && strstr(a, "\"strings\":{"), "viewport: every track");
	free(a);
	p = answer(VIEWPORT, "tracks=2,2&rel=1&width=50", &a) == 0 ? strstr(a, "\"rel\":1,\"tracks\":[{\"id\":2,")
								   : NULL;
	ok(p && !strstr(strstr(p, "{\"id\":") + 1, "{\"id\":"), "viewport: one track, listed twice, answered once");
	free(a);

	/* search, then the slice at its first hit */
	ok(answer(SEARCH, "q=aten::&limit=3", &a) == 0 && strstr(a, "\"results\":[{\"track\":"), "search: hits");
	p = a ? strstr(a, "\"track\":") : NULL;
	ok(p && sscanf(p, "\"track\":%u,\"ts\":%lld,\"dur\":%*d,\"depth\":%u", &track, &ts, &depth) == 3,
	   "search: a hit's track, ts, depth");
	free(a);
	ok(fx == NULL, "no flow index before a slice is found");
	snprintf(qs, sizeof(qs), "track=%u&ts=%lld&depth=%u", track, ts, depth);
	ok(answer(SLICE, qs, &a) == 0 && strstr(a, "\"name\":\"aten::") && strstr(a, "\"flows_out\":["),
	   "slice at the hit: %s", qs);
	ok(fx != NULL, "the flow index is built for the first slice found");
	first = fx;
	free(a);
	snprintf(qs, sizeof(qs), "track=%u&ts=%lld&depth=%u&nav=next", track, ts, depth);
	ok(answer(SLICE, qs, &a) == 0 && fx == first, "slice nav=next: the same flow index");
	free(a);

	/* args: the index's argument part, built by the answer itself or prepared first */
	ok(answer(SEARCH, "q=128&in=args&limit=2", &a) == 0 && strstr(a, "\"field\":\"args\""), "search in args");
	{
		struct tft_error err;
		struct tft_query q;
		struct tft_qry_search_index *ix2;
		struct tft_json_writer w;
		struct tft_qry_err e;
		size_t len = 0;

		tft_error_clear(&err);
		ix2 = tft_qry_search_index_new(sess, &err);
		tft_query_parse(&q, "q=128&in=args&limit=2", 21);
		ok(ix2 && tft_qry_search_prepare(ix2, sess, &q, &err) == 0, "prepare builds the argument part");
		tft_json_write_init_mem(&w);
		ok(ix2 && tft_qry_search(sess, ix2, &q, &w, &e) == 0 &&
		   !strcmp(tft_json_write_borrow(&w, &len), a), "a prepared index answers the same");
		tft_json_write_fini(&w);
		tft_qry_search_index_free(ix2);
	}
	free(a);

	ok(answer(STATS, "by=track&top=2", &a) == 0 && strstr(a, "\"group_by\":\"track\"") &&
	   strstr(a, "\"track_id\":"), "stats by track");
	free(a);
	ok(answer(STATS, "t0=0&t1=0&clip=1", &a) == 0 && strstr(a, "\"slices\":0,"), "stats: an empty window");
	free(a);
	ok(answer(STATS, "top=1", &a) == 0 && answer(STATS, "top=1", &b) == 0 && !strcmp(a, b),
	   "stats: the same answer twice");
	free(a);
	free(b);
}

static void test_status_map(void)
{
	struct tft_qry_err e;
	struct tft_error err;

	tft_error_clear(&err);
	snprintf(err.msg, sizeof(err.msg), "chunk 3: bad block");
	ok(tft_qry_fail_status(&e, TFT_EINVAL, &err) == 400 && !strcmp(e.msg, "chunk 3: bad block"), "EINVAL: 400");
	ok(tft_qry_fail_status(&e, TFT_ENOTFOUND, &err) == 404, "ENOTFOUND: 404");
	ok(tft_qry_fail_status(&e, TFT_ENOMEM, &err) == 503 && !strcmp(e.msg, "out of memory"), "ENOMEM: 503");
	ok(tft_qry_fail_status(&e, TFT_EAGAIN, &err) == 503 && !strcmp(e.msg, "busy; try again"), "EAGAIN: 503");
	ok(tft_qry_fail_status(&e, TFT_EIO, NULL) == 500 && !strcmp(e.msg, tft_strerror(TFT_EIO)),
	   "EIO without a message: 500, the status's text");
}

int main(void)
{
	const char *data = getenv("TFT_DATA");
	char in[1024], path[600];
	struct tft_error err;
	struct tft_writer *w;

	test_status_map();
	snprintf(in, sizeof(in), "%s/%s", data ? data : "../shared/data", TRACE);
	if (access(in, R_OK) != 0 || !mkdtemp(dir)) {
		tap_skip("no %s", in);
		return done_testing();
	}
	snprintf(path, sizeof(path), "%s/s.tft", dir);
	tft_error_clear(&err);
	w = tft_writer_open(path, NULL, &err);
	if (!w || tft_ingest_file(w, in, NULL, &err) || tft_writer_close(w, &err)) {
		ok(0, "import %s: %s", in, err.msg);
		return done_testing();
	}
	sess = tft_session_open(path, &err);
	vsc = tft_qry_viewport_scratch_new();
	six = sess ? tft_qry_search_index_new(sess, &err) : NULL;
	ok(sess && vsc && six, "session, viewport scratch, search index");
	if (sess && vsc && six) {
		test_refusals();
		test_answers();
	}
	tft_qry_flows_free(fx);
	tft_qry_search_index_free(six);
	tft_qry_viewport_scratch_free(vsc);
	if (sess)
		tft_session_close(sess);
	unlink(path);
	rmdir(dir);
	return done_testing();
}
