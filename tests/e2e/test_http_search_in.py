#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# /api/search over more than names (docs/http-api.md, /api/search and item 11):
# `in=name,cat,args,track` on a session imported from a real Kineto trace, every
# count checked against an independent count made here from the trace JSON; the
# `field` of each result, the default (names only) unchanged, exact totals and
# paging, 400s for a bad `in`, and the static HTML export's JavaScript
# (web/staticapi.js, run by node) answering exactly as the server.
"""Usage: test_http_search_in.py [SUBSTRING...]   one PASS/FAIL/SKIP line per test.

Env: TFT_BIN (the CLI, default build/tftracer), TFT_DATA (the trace corpus), NODE."""
import collections
import gzip
import json
import os
import re
import shutil
import sys
import tempfile
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "corpus"))
import tft_harness as H  # noqa: E402
from test_http_api import Server, T, expect, get_json, req  # noqa: E402

# Kineto (H100): kernels with grid/block arrays, correlation ids, float occupancy args,
# categories kernel / cpu_op / cuda_runtime, a GPU stream track and python3 processes.
SOURCE = "tracelens/kineto_h100/gaunernst_bert-small-uncased__1016001.json.gz"
FIELDS = ("name", "cat", "args", "track")


# ---- the independent model: events and matching from the trace JSON -------------

class Model:
    """The trace's slices and instants with their track, and the matching rules of
    docs/http-api.md written again in Python."""

    def __init__(self, path):
        with gzip.open(path, "rt", encoding="utf-8") as fp:
            doc = json.load(fp)
        evs = doc["traceEvents"]
        self.proc_name, self.thread_name, labels = {}, {}, {}
        for e in evs:
            if e.get("ph") == "M" and e.get("name") == "process_name":
                self.proc_name[e["pid"]] = (e.get("args") or {}).get("name", "")
            if e.get("ph") == "M" and e.get("name") == "process_labels":
                labels[e["pid"]] = (e.get("args") or {}).get("labels", "")
            if e.get("ph") == "M" and e.get("name") == "thread_name":
                self.thread_name[(e["pid"], e["tid"])] = (e.get("args") or {}).get("name", "")
        self.events = [e for e in evs if e.get("ph") in ("X", "i", "I")]
        # The importer's device naming (docs/formats-kineto): a process that ran GPU
        # activity and is labelled "GPU N" is "GPU N (<deviceProperties name>)"; a
        # stream's gpu_user_annotation ranges are on "<stream> annotations".
        models = {p.get("id"): p.get("name") for p in doc.get("deviceProperties", [])}
        gpu_pids = {e["pid"] for e in self.events if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")}
        for pid in gpu_pids:
            lab = labels.get(pid, "")
            if lab.startswith("GPU ") and lab[4:].isdigit():
                n = int(lab[4:])
                self.proc_name[pid] = "GPU %d" % n + (" (%s)" % models[n] if models.get(n) else "")
        for e in self.events:
            if e.get("cat") == "gpu_user_annotation":
                k = (e["pid"], e["tid"])
                self.thread_name[k + ("ann",)] = self.thread_name.get(k, "").rstrip(" ") + " annotations"

    @staticmethod
    def text(v):
        """An argument value as searched: None for booleans and null."""
        if v is None or isinstance(v, bool):
            return None
        if isinstance(v, int):
            return str(v)
        if isinstance(v, float):
            return str(int(v)) if v.is_integer() and abs(v) < 1e15 else repr(v)
        if isinstance(v, str):
            return v
        return json.dumps(v, separators=(",", ":"), ensure_ascii=False)

    @staticmethod
    def matcher(q, regex=False):
        if regex:
            r = re.compile(q, re.I)
            return lambda s: s is not None and r.search(s) is not None
        ql = q.lower()
        return lambda s: s is not None and ql in s.lower()

    def thread_key(self, e):
        """(pid, tid) of a thread-named track (plus "ann" for a GPU annotation's own
        track); None for global instants."""
        if e.get("s") == "g":
            return None
        return (e["pid"], e["tid"]) + (("ann",) if e.get("cat") == "gpu_user_annotation" else ())

    def track_matches(self, e, test):
        k = self.thread_key(e)
        if k is None or k not in self.thread_name:
            return False
        return test(self.thread_name[k]) or test(self.proc_name.get(k[0]))

    def field(self, e, test, fields):
        """The first field of e that matches, or None."""
        if "name" in fields and test(e.get("name", "")):
            return "name"
        if "cat" in fields and test(e.get("cat") or ""):
            return "cat"
        if "args" in fields and any(test(self.text(v)) for v in (e.get("args") or {}).values()):
            return "args"
        if "track" in fields and self.track_matches(e, test):
            return "track"
        return None

    def total(self, q, fields):
        """The exact total: matching events, or with in=track alone the matching tracks."""
        if tuple(fields) != ("track",):
            return sum(self.fields_of(q, fields).values())
        test = self.matcher(q)
        return len({self.thread_key(e) for e in self.events if self.track_matches(e, test)})

    def fields_of(self, q, fields, regex=False):
        test = self.matcher(q, regex)
        return collections.Counter(f for f in (self.field(e, test, fields) for e in self.events) if f)


def search(s, **params):
    return get_json(s.base, "/api/search?" + urllib.parse.urlencode(params))


def sin(s, q, fields, **params):
    return search(s, q=q, **dict(params, **{"in": ",".join(fields)}))


def check_list(r, limit, probs, what):
    """Shape of one answer: sorted, cut at limit, every result with a known field."""
    res = r["results"]
    expect(len(res) == min(r["total"], limit), "%s: %d results of total %d (limit %d)"
           % (what, len(res), r["total"], limit), probs)
    keys = [(x["ts"], x["track"], x["depth"]) for x in res]
    expect(keys == sorted(keys), "%s: results not in (ts, track, depth) order" % what, probs)
    expect(all(x.get("field") in FIELDS for x in res), "%s: a result without a known field" % what, probs)


# ---- the checks ------------------------------------------------------------------

def check_default(s, m):
    """No in= searches names only, as before, and says so in `field`."""
    probs = []
    for q in ("aten::", "cudaLaunchKernel", "cpu_op", "8218"):
        want = m.fields_of(q, ("name",))["name"]
        r = search(s, q=q, limit=10000)
        r2 = sin(s, q, ("name",), limit=10000)
        expect(r["total"] == want, "default q=%r: total %d, independent count %d" % (q, r["total"], want), probs)
        expect(r == r2, "default q=%r differs from in=name" % q, probs)
        expect(all(x.get("field") == "name" for x in r["results"]), "default q=%r: field is not name" % q, probs)
        check_list(r, 10000, probs, "default q=%r" % q)
    # a category and an argument value are not names
    expect(search(s, q="cpu_op")["total"] == 0, "default search matched a category", probs)
    return probs


def check_args(s, m):
    probs = []
    kern = next(e for e in m.events if e.get("cat") == "kernel")
    corr = str(kern["args"]["correlation"])
    grid = json.dumps(kern["args"]["grid"], separators=(",", ":"))
    for q in (corr, grid, "[128,1,1]", "17.09", "c10::BFloat16", "float", "1"):
        want = m.fields_of(q, ("args",))["args"]
        r = sin(s, q, ("args",), limit=10000)
        expect(want > 0, "args q=%r: the trace has no such value (the test is wrong)" % q, probs)
        expect(r["total"] == want, "args q=%r: total %d, independent count %d" % (q, r["total"], want), probs)
        expect(all(x["field"] == "args" for x in r["results"]), "args q=%r: a field is not args" % q, probs)
        check_list(r, 10000, probs, "args q=%r" % q)
    # a correlation id is on the kernel and on its launch: both found, the kernel by name
    r = sin(s, corr, ("args",))
    expect(kern["name"] in [x["name"] for x in r["results"]], "args q=%s: the kernel is not a result" % corr, probs)
    # regex over argument text (POSIX ERE and Python agree on this one)
    want = m.fields_of(r"^\[564,", ("args",), regex=True)["args"]
    r = sin(s, r"^\[564,", ("args",), regex=1, limit=10000)
    expect(want > 0 and r["total"] == want, "args regex: total %d, independent count %d" % (r["total"], want), probs)
    # a word that cannot be a number skips number formatting and still finds strings
    want = m.fields_of("BFloat16", ("args",))["args"]
    expect(sin(s, "bfloat16", ("args",))["total"] == want, "args q=bfloat16: total differs", probs)
    return probs


def check_cat(s, m):
    probs = []
    for q in ("kernel", "cpu_op", "CUDA", "python_function"):
        want = m.fields_of(q, ("cat",))["cat"]
        r = sin(s, q, ("cat",), limit=10000)
        expect(want > 0 and r["total"] == want,
               "cat q=%r: total %d, independent count %d" % (q, r["total"], want), probs)
        expect(all(x["field"] == "cat" for x in r["results"]), "cat q=%r: a field is not cat" % q, probs)
        check_list(r, 10000, probs, "cat q=%r" % q)
    return probs


def check_track(s, m):
    probs = []
    # in=track alone: one result per matching track, its first event
    stream = [e for e in m.events if m.thread_key(e) == (0, 7)]
    expect(m.thread_name.get((0, 7), "").startswith("stream 7"), "no stream 7 track in the trace", probs)
    first = min(stream, key=lambda e: e["ts"])
    r = sin(s, "stream 7", ("track",))
    want = m.total("stream 7", ("track",))  # the stream and its annotations' track
    expect(want == 2 and r["total"] == want and len(r["results"]) == want,
           "in=track q='stream 7': total %d, %d results, independent %d" % (r["total"], len(r["results"]), want),
           probs)
    kernels = [x for x in r["results"] if x["name"] == first["name"]]
    if kernels:
        x = kernels[0]
        expect(x["field"] == "track" and x["name"] == first["name"] and x["dur"] == round(first["dur"] * 1000),
               "in=track: the result is not the track's first event: %r vs %r" % (x, first["name"]), probs)
    # the process name counts too: every track of the python3 process, and the thread
    # Kineto files under GPU 0's pid that is named after python3
    pyt = {m.thread_key(e) for e in m.events if m.track_matches(e, m.matcher("python3"))}
    r = sin(s, "python3", ("track",))
    expect(len(pyt) >= 2 and r["total"] == len(pyt) == len(r["results"]),
           "in=track q=python3: total %d, independent %d tracks" % (r["total"], len(pyt)), probs)
    tracks = [x["track"] for x in r["results"]]
    expect(len(set(tracks)) == len(tracks), "in=track: two results on one track", probs)
    # with other fields: every event of a matching track matches
    for q in ("stream 7", "19392"):
        want = m.fields_of(q, ("name", "track"))
        r = sin(s, q, ("name", "track"), limit=10000)
        expect(want["track"] > 0 and r["total"] == sum(want.values()),
               "in=name,track q=%r: total %d, independent %d" % (q, r["total"], sum(want.values())), probs)
        got = collections.Counter(x["field"] for x in r["results"])
        expect(got == want, "in=name,track q=%r: fields %s, independent %s" % (q, dict(got), dict(want)), probs)
        check_list(r, 10000, probs, "in=name,track q=%r" % q)
    return probs


def check_fields(s, m):
    """All four fields: the exact total and, per result, the first field that matched."""
    probs = []
    for q in ("7", "cuda", "stream", "aten::mm", "float"):
        want = m.fields_of(q, FIELDS)
        r = sin(s, q, FIELDS, limit=10000)
        expect(r["total"] == sum(want.values()), "all fields q=%r: total %d, independent %d"
               % (q, r["total"], sum(want.values())), probs)
        got = collections.Counter(x["field"] for x in r["results"])
        expect(r["total"] > 10000 or got == want, "all fields q=%r: fields %s, independent %s"
               % (q, dict(got), dict(want)), probs)
        check_list(r, 10000, probs, "all fields q=%r" % q)
    return probs


def check_paging(s, m):
    """total is exact whatever the limit; the cursor walks the full list."""
    probs = []
    for q, fields in (("1", ("args",)), ("stream", FIELDS), ("python3", ("track",)), ("kernel", ("cat", "args"))):
        full = sin(s, q, fields, limit=10000)
        lim = sin(s, q, fields, limit=7)
        want = m.total(q, fields)
        expect(full["total"] == want, "q=%r in=%s: total %d, independent %d" % (q, fields, full["total"], want), probs)
        expect(lim["total"] == full["total"], "q=%r in=%s: total %d with limit 7, %d without"
               % (q, fields, lim["total"], full["total"]), probs)
        expect(lim["results"] == full["results"][:7], "q=%r in=%s: limit=7 is not a prefix" % (q, fields), probs)
        expect(lim["more"] == (full["total"] > 7), "q=%r in=%s: more %r" % (q, fields, lim["more"]), probs)
        paged, cur = [], {}
        for _ in range(8):
            pg = sin(s, q, fields, limit=2 if fields == ("track",) else 40, **cur)
            expect(pg["total"] == full["total"], "q=%r in=%s: total changes while paging" % (q, fields), probs)
            paged += pg["results"]
            if not pg["results"]:
                break
            last = pg["results"][-1]
            cur = {"after_ts": last["ts"], "after_track": last["track"], "after_depth": last["depth"]}
        n = min(len(full["results"]), 320 if fields != ("track",) else 16)
        expect(paged[:n] == full["results"][:n] and len(paged) >= n,
               "q=%r in=%s: paging does not follow the full list" % (q, fields), probs)
    return probs


def check_exact(s, m):
    """exact=1: every slice with exactly this name, case included, for names past the
    256 bytes a substring or regex query may have (C++ kernel names: the longest here
    are 284-495 bytes); the highlight and the duration histogram of the UI use it."""
    probs = []
    names = sorted({e.get("name", "") for e in m.events}, key=len)
    count = collections.Counter(e.get("name", "") for e in m.events)
    for q in names[-5:] + ["cudaLaunchKernel", "aten::mm"]:
        r = search(s, q=q, exact=1, limit=10000)
        expect(r["total"] == count[q] and len(r["results"]) == min(count[q], 10000),
               "exact %d-byte name: total %d, %d results; independent count %d"
               % (len(q), r["total"], len(r["results"]), count[q]), probs)
        expect(all(x["name"] == q and x["field"] == "name" for x in r["results"]),
               "exact %d-byte name: a result with another name" % len(q), probs)
    long = names[-1]
    expect(len(long.encode()) > 256, "the longest name is %d bytes" % len(long), probs)
    st, _, _ = req(s.base, "/api/search?" + urllib.parse.urlencode({"q": long}))
    expect(st == 400, "a %d-byte substring query: status %d, want 400" % (len(long), st), probs)
    expect(search(s, q="CUDALAUNCHKERNEL", exact=1)["total"] == 0, "exact=1 ignored case", probs)
    expect(search(s, q="cudaLaunch", exact=1)["total"] == 0, "exact=1 matched a part of a name", probs)
    for q in ({"q": "a", "exact": "1", "regex": "1"}, {"q": "a" * 4097, "exact": "1"},
              {"q": "a", "exact": "2"}):
        st, _, _ = req(s.base, "/api/search?" + urllib.parse.urlencode(q))
        expect(st == 400, "search %r: status %d, want 400" % ({k: v[:20] for k, v in q.items()}, st), probs)
    return probs


def check_errors(s):
    probs = []
    for q in ("q=a&in=bogus", "q=a&in=", "q=a&in=name,", "q=a&in=,name", "q=a&in=name,,cat",
              "q=a&in=NAME", "q=a&in=name%20cat", "q=a&in=name;cat", "q=a&in=name%00",
              "q=a&in=tracks", "q=(&regex=1&in=args", "in=args", "q=a&in=args&limit=0"):
        st, hd, body = req(s.base, "/api/search?" + q)
        expect(st == 400, "search?%s: status %d, want 400" % (q, st), probs)
        try:
            j = json.loads(body)
            ok = list(j) == ["error"] and isinstance(j["error"], str) and "\n" not in j["error"]
        except ValueError:
            ok = False
        expect(ok and hd.get("content-type", "").startswith("application/json"),
               "search?%s: not a one-line JSON error: %r" % (q, body[:120]), probs)
        expect(b"bogus" not in body and b"NAME" not in body, "search?%s: input echoed" % q, probs)
    # valid lists: any order, repeats
    for q in ("q=a&in=track,name", "q=a&in=args,args", "q=zzzz_no_such&in=name,cat,args,track"):
        st, _, _ = req(s.base, "/api/search?" + q)
        expect(st == 200, "search?%s: status %d, want 200" % (q, st), probs)
    return probs


NODE_DRIVER = r"""const out = queries.map((q) => {
	// a cursor is an absolute time of the server's: the same offset from this page's start_ns
	if (q.after_ts !== undefined) q = { ...q, after_ts: String(BigInt(q.after_ts) - BigInt(startNs) + sess.T0) };
	try { return { status: 200, body: sess.query('api/search', q) }; }
	catch (e) { return { status: e.status || 500, body: { error: String(e.message) } }; }
});
// start_ns as this JavaScript read it: node before 21 cannot read it exactly (no JSON.parse
// source access), so the caller compares offsets from it
const bigText = (k, v) => (typeof v === 'bigint' ? v.toString() : v);
process.stdout.write(JSON.stringify({ t0: sess.T0, answers: out }, bigText));
"""


def first_diff(got, want):
    for i, (a, b) in enumerate(zip(got, want)):
        if a != b:
            return "result %d: %r vs %r" % (i, a, b)
    return "%d results vs %d" % (len(got), len(want))


def check_static(s, session, tmp):
    """The offline HTML export answers in= exactly as the server does."""
    node = os.environ.get("NODE") or shutil.which("node")
    if not node:
        return ("skip", "node is not installed")
    probs = []
    html = os.path.join(tmp, "s.html")
    r = H.run([H.tft_bin(), "export", session, "-f", "html", "-o", html], timeout=300)
    if r.rc != 0:
        return ["export -f html: exit %d: %s" % (r.rc, r.err[-300:])]
    queries = []
    for q, fields, extra in (("8218", "args", {}), ("[128,1,1]", "args", {}), ("17.09", "args", {}),
                             ("kernel", "cat", {}), ("stream 7", "track", {}), ("python3", "track", {}),
                             ("stream 7", "name,track", {}), ("7", "name,cat,args,track", {}),
                             ("cuda", "name,cat,args,track", {"limit": "25"}),
                             (r"^\[564,", "args", {"regex": "1"}), ("aten::", None, {}),
                             ("1", "args", {"limit": "30"}), ("x", "bogus", {}), ("x", "", {}),
                             ("cudaLaunchKernel", None, {"exact": "1"}),
                             ("cudaLaunchKernel", None, {"exact": "1", "regex": "1"})):
        p = dict(extra, q=q)
        if fields is not None:
            p["in"] = fields
        queries.append(p)
    # a page after a cursor, taken from the server's first page
    first = search(s, q="1", limit=30, **{"in": "args"})["results"][-1]
    queries.append({"q": "1", "in": "args", "limit": "30", "after_ts": str(first["ts"]),
                    "after_track": str(first["track"]), "after_depth": str(first["depth"])})
    longest = max({x for x in (e.get("name", "") for e in Model(os.path.join(H.data_dir(), SOURCE)).events)}, key=len)
    queries.append({"q": longest, "exact": "1", "limit": "50"})
    start_ns = get_json(s.base, "/api/session")["start_ns"]
    doc = H.run_static_session(node, NODE_DRIVER, html, start_ns, queries, tmp)
    if isinstance(doc, str):
        return [doc]
    answers, shift = doc["answers"], start_ns - int(doc["t0"])
    for qp, a in zip(queries, answers):
        st, _, body = req(s.base, "/api/search?" + urllib.parse.urlencode(qp))
        want = json.loads(body)
        if st != 200:
            expect(a["status"] == st, "static %r: status %d, server %d" % (qp, a["status"], st), probs)
            continue
        got = a["body"]
        for x in got.get("results", []):
            x["ts"] = int(x["ts"]) + shift
        same = (a["status"] == 200 and got.get("total") == want["total"] and got.get("more") == want["more"]
                and got.get("results") == want["results"])
        expect(same, "static %r: total %s more %s, server total %d more %s%s"
               % (qp, got.get("total"), got.get("more"), want["total"], want["more"],
                  "" if got.get("results") == want["results"] else " (first difference: %s)"
                  % first_diff(got.get("results") or [], want["results"])), probs)
    return probs


def main():
    filters = sys.argv[1:]
    rep = H.Reporter("http_search_in")
    path = os.path.join(H.data_dir(), SOURCE)
    if not os.path.exists(path):
        rep.skip("all", "missing data: %s" % path)
        return rep.finish()
    tmp = tempfile.mkdtemp(prefix="tft-search-in-")
    t = T(rep, filters)
    server = None
    try:
        m = Model(path)
        session = os.path.join(tmp, "s.tft")
        H.cli_import(H.tft_bin(), [path], session)
        try:
            server = Server(["serve", session, "--port", "0", "--quiet"])
        except RuntimeError as e:
            rep.fail("start", e)
            return rep.finish()
        t.run("default_name", lambda: check_default(server, m))
        t.run("args", lambda: check_args(server, m))
        t.run("cat", lambda: check_cat(server, m))
        t.run("track", lambda: check_track(server, m))
        t.run("fields", lambda: check_fields(server, m))
        t.run("paging", lambda: check_paging(server, m))
        t.run("exact", lambda: check_exact(server, m))
        t.run("errors", lambda: check_errors(server))
        t.run("static_export", lambda: check_static(server, session, tmp))
        srv, server = server, None
        rc = srv.stop()
        # not a test of its own (it passes without in=): a line only when the server misbehaved
        if rc != 0 or H.SANITIZER_RE.search(srv.stderr()):
            rep.fail("shutdown", "SIGTERM: exit %r: %s" % (rc, srv.stderr()[-400:]))
    except H.CliError as e:
        rep.fail("setup", e)
    finally:
        if server:
            server.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return rep.finish()


if __name__ == "__main__":
    sys.exit(H.main_guard(main))
