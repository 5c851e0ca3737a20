#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# More of the HTTP API end to end (docs/http-api.md): categories in /api/viewport
# checked against the categories of the source traces, byte ranges on the downloads
# checked against the file's bytes, and the live status's `global` switch (a
# TracingServer of the Python module in a child process, without PyTorch).
"""Usage: test_http_more.py [SUBSTRING...]   one PASS/FAIL/SKIP line per test.

Env: TFT_BIN (the CLI, default build/tftracer), TFT_DATA (the trace corpus),
TFT_BUILD_DIR (where the Python module was built; default: the directory of
TFT_BIN_BIG, else build)."""
import collections
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "corpus"))
import tft_harness as H  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_http_api import Server, T, expect, get_json, raw_request, req, status_of  # noqa: E402

SOURCES = (
    "tracelens/kineto_h100/gaunernst_bert-small-uncased__1016001.json.gz",    # cpu_op, kernel, ...
    "kineto/tb_plugin_samples/resnet50_num_workers_0/worker0.pt.trace.json.gz",  # Operator, Kernel;
                                                                               # tracks with LOD levels
    "catapult/simple_trace.json",                                            # PERF, PREF
)
EVF_SUMMARY = 2


def load_events(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        j = json.load(f)
    return j["traceEvents"] if isinstance(j, dict) else j


def categories_by_name(paths):
    """name -> the set of categories its slices and instants have in the sources
    ("" for none). An E event takes its B's name and category, so only B, X, i, I."""
    m = collections.defaultdict(set)
    for p in paths:
        for e in load_events(p):
            if isinstance(e, dict) and e.get("ph") in ("B", "X", "i", "I"):
                m[str(e.get("name", ""))].add(str(e.get("cat") or ""))
    return m


# ---- categories in /api/viewport ------------------------------------------------

def check_track_cats(v, cats, probs, where):
    """Every item's category is one its name has in the sources; returns
    (category texts seen, tracks with `cat`, tracks without, merged items checked)."""
    strings = v["strings"]
    seen, with_cat, without, merged = set(), 0, 0, 0
    for t in v["tracks"]:
        if t["kind"] == "counter":
            expect("cat" not in t, "%s: counter track %d has cat" % (where, t["id"]), probs)
            continue
        n = len(t["ts"])
        if "cat" not in t:
            without += 1
            # left out only when no item has a category in the source
            named = [strings[str(x)] for x in t["name"]]
            bad = [nm for nm in named if cats.get(nm, {""}) - {""}]
            expect(not bad, "%s: track %d has no cat but %r has %s in the source" %
                   (where, t["id"], bad[:1], sorted(cats.get(bad[0], ())) if bad else ""), probs)
            continue
        with_cat += 1
        expect(len(t["cat"]) == n, "%s: track %d: %d cats for %d items" % (where, t["id"], len(t["cat"]), n), probs)
        for i in range(min(n, len(t["cat"]))):
            cid = str(t["cat"][i])
            if cid not in strings:
                probs.append("%s: cat id %s not in strings" % (where, cid))
                return seen, with_cat, without, merged
            name, cat = strings[str(t["name"][i])], strings[cid]
            seen.add(cat)
            if t["flags"][i] & EVF_SUMMARY:
                merged += 1
            if cat not in cats.get(name, set()):
                probs.append("%s: track %d item %d %r has category %r, the source says %s" %
                             (where, t["id"], i, name, cat, sorted(cats.get(name, ()))))
                return seen, with_cat, without, merged
    return seen, with_cat, without, merged


def track_window(s, tr, width):
    """The viewport of one track over its own span (the sources' clocks differ)."""
    return get_json(s.base, "/api/viewport?" + urllib.parse.urlencode(
        {"tracks": tr["id"], "t0": tr["min_ts_ns"], "t1": tr["max_ts_ns"], "width": width, "rel": 1}))


def check_viewport_cat(s, sess, cats):
    probs = []
    tracks = [tr for tr in sess["track_list"] if tr["slices"] + tr["instants"] > 0]
    seen, with_cat, without, merged, lod_cat, checked = set(), 0, 0, 0, 0, 0
    for tr in tracks:
        # 10000 px: mostly single events
        v = track_window(s, tr, 10000)
        sn, wc, wo, _ = check_track_cats(v, cats, probs, "track %d fine" % tr["id"])
        seen |= sn
        with_cat += wc
        without += wo
        # exact per event: /api/slice (another code path) names the same category
        t = v["tracks"][0]
        for i in range(0, len(t["ts"]), max(1, len(t["ts"]) // 5)) if "cat" in t else ():
            if t["count"][i] != 1:
                continue
            st, _, body = req(s.base, "/api/slice?track=%d&ts=%d&depth=%d" % (
                t["id"], v["t0"] + t["ts"][i], t["depth"][i]))
            if st != 200:
                probs.append("/api/slice track %d ts %d: %d" % (t["id"], v["t0"] + t["ts"][i], st))
                continue
            sl = json.loads(body)
            if sl["name"] == v["strings"][str(t["name"][i])]:
                checked += 1
                got = v["strings"][str(t["cat"][i])]
                expect(sl["cat"] == got, "track %d: viewport cat %r, /api/slice cat %r for %r" %
                       (t["id"], got, sl["cat"], sl["name"]), probs)
        # coarse: merged blocks and the store's summaries carry their longest event's category
        for width in (40, 200):
            v = track_window(s, tr, width)
            _, _, _, m = check_track_cats(v, cats, probs, "track %d width %d" % (tr["id"], width))
            merged += m
            lod_cat += sum(1 for t in v["tracks"] if t["lod"] > 0 and "cat" in t)
        if len(probs) > 5:
            break
    for want in ("kernel", "cpu_op", "cuda_runtime", "python_function", "Operator", "Kernel",
                 "Runtime", "PERF", "PREF"):
        expect(want in seen, "no %r among the viewport's categories %s" % (want, sorted(seen)), probs)
    expect(with_cat >= 6, "only %d slice tracks carry cat" % with_cat, probs)
    expect(without >= 1, "every track carries cat (the Kineto instants without a category "
           "should leave it out)", probs)
    expect(checked >= 10, "only %d items cross-checked with /api/slice" % checked, probs)
    expect(merged >= 20, "only %d merged blocks checked" % merged, probs)
    expect(lod_cat >= 3, "only %d level-of-detail answers carry cat" % lod_cat, probs)
    H.note("viewport cat: %d tracks with, %d without; %d merged blocks; %d items vs /api/slice; %s" %
           (with_cat, without, merged, checked, ", ".join(sorted(seen))))
    return probs


# ---- byte ranges on downloads ---------------------------------------------------

def check_range(s, session_path):
    probs = []
    data = open(session_path, "rb").read()
    size = len(data)
    url = "/download/session"

    st, hd, body = req(s.base, url)
    expect(st == 200 and body == data, "full GET: %d, %d bytes of %d" % (st, len(body), size), probs)
    expect(hd.get("accept-ranges") == "bytes", "full GET: Accept-Ranges %r" % hd.get("accept-ranges"), probs)
    etag = hd.get("etag")
    expect(etag and etag.startswith('"'), "full GET: ETag %r" % etag, probs)

    # (Range value, first, last) -> 206 with exactly those bytes of the file
    cases = [("bytes=0-0", 0, 0), ("bytes=10-19", 10, 19), ("bytes=100-", 100, size - 1),
             ("bytes=-5", size - 5, size - 1), ("bytes=-%d" % (size + 10), 0, size - 1),
             ("bytes=%d-%d" % (size - 3, size + 1000), size - 3, size - 1),
             ("bytes=%d-" % (size - 1), size - 1, size - 1), ("BYTES=4-7", 4, 7),
             ("bytes=0-99999999999999999999999", 0, size - 1), ("bytes= 3-5", 3, 5),
             ("bytes=1000-1999, ,", 1000, 1999)]
    for rng, a, b in cases:
        st, hd, body = req(s.base, url, headers={"Range": rng})
        want_cr = "bytes %d-%d/%d" % (a, b, size)
        if st != 206 or body != data[a:b + 1] or hd.get("content-range") != want_cr:
            probs.append("%s: %d, %d bytes, Content-Range %r (want 206, %d bytes, %r)" %
                         (rng, st, len(body), hd.get("content-range"), b - a + 1, want_cr))
        elif hd.get("content-length") != str(b - a + 1):
            probs.append("%s: Content-Length %r" % (rng, hd.get("content-length")))

    # unsatisfiable: 416, Content-Range: bytes */SIZE, a JSON error
    for rng in ("bytes=%d-" % size, "bytes=%d-%d" % (size + 5, size + 10), "bytes=-0",
                "bytes=99999999999999999999999-", "bytes=%d-,%d-" % (size, size + 1)):
        st, hd, body = req(s.base, url, headers={"Range": rng})
        expect(st == 416 and hd.get("content-range") == "bytes */%d" % size,
               "%s: %d, Content-Range %r (want 416, bytes */%d)" % (rng, st, hd.get("content-range"), size), probs)
        if st == 416:
            try:
                expect("error" in json.loads(body), "%s: 416 body %r" % (rng, body[:80]), probs)
            except ValueError:
                probs.append("%s: 416 body is not JSON: %r" % (rng, body[:80]))

    # several ranges (answered whole, RFC 9110 allows it) and ranges to ignore: 200, whole file
    for rng in ("bytes=0-1,5-6", "bytes=0-1,%d-" % size, "bytes=5-3", "items=0-1", "bytes=abc",
                "bytes=", "bytes=1-2x", "bytes=--5"):
        st, hd, body = req(s.base, url, headers={"Range": rng})
        expect(st == 200 and body == data and "content-range" not in hd,
               "%s: %d, %d bytes (want 200 with the whole file)" % (rng, st, len(body)), probs)

    # If-Range: our ETag honours the range; any other validator gets the whole file
    if etag:
        st, hd, body = req(s.base, url, headers={"Range": "bytes=7-9", "If-Range": etag})
        expect(st == 206 and body == data[7:10], "If-Range (same ETag): %d, %r" % (st, body[:8]), probs)
    for other in ('"other"', "Wed, 21 Oct 2015 07:28:00 GMT"):
        st, hd, body = req(s.base, url, headers={"Range": "bytes=7-9", "If-Range": other})
        expect(st == 200 and body == data, "If-Range %r: %d, %d bytes" % (other, st, len(body)), probs)

    # HEAD: the headers GET would send, no body
    st, hd, body = req(s.base, url, method="HEAD")
    expect(st == 200 and hd.get("content-length") == str(size) and hd.get("accept-ranges") == "bytes",
           "HEAD: %d, Content-Length %r, Accept-Ranges %r" % (st, hd.get("content-length"), hd.get("accept-ranges")), probs)
    raw = raw_request(s.host, s.port, b"HEAD /download/session HTTP/1.1\r\nRange: bytes=-7\r\n"
                      b"Host: 127.0.0.1\r\n\r\n")
    head, _, rest = raw.partition(b"\r\n\r\n")
    expect(status_of(raw) == 206 and b"\r\nContent-Length: 7" in head and
           ("\r\nContent-Range: bytes %d-%d/%d" % (size - 7, size - 1, size)).encode() in head and rest == b"",
           "HEAD with Range: %r" % raw[:300], probs)
    raw = raw_request(s.host, s.port, b"HEAD /download/session HTTP/1.1\r\nRange: bytes=%d-\r\n"
                      b"Host: 127.0.0.1\r\n\r\n" % size)
    expect(status_of(raw) == 416 and raw.partition(b"\r\n\r\n")[2] == b"", "HEAD, unsatisfiable: %r" % raw[:200], probs)

    # the Chrome download is produced as it is sent: a Range is ignored, and said so
    st, hd, body = req(s.base, "/download/chrome", headers={"Range": "bytes=0-9"}, timeout=300)
    expect(st == 200 and hd.get("accept-ranges") == "none" and len(body) > 10,
           "/download/chrome with Range: %d, Accept-Ranges %r, %d bytes" % (st, hd.get("accept-ranges"), len(body)), probs)
    try:
        json.loads(body)
    except ValueError as e:
        probs.append("/download/chrome with Range is not whole JSON: %s" % e)
    # still serving after all that
    st, _, _ = req(s.base, "/api/steps")
    expect(st == 200, "server unwell after the range requests: %d" % st, probs)
    return probs


# ---- the live status's `global` ---------------------------------------------------

LIVE_CHILD = r'''
import http.client, json, os, sys, urllib.request
import tftracer

srv = tftracer.TracingServer(port=0, session=os.path.join(sys.argv[1], "live-%p.tft"),
                             torch_profile=False)
base = "http://127.0.0.1:%d" % srv.port

def call(path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    rq = urllib.request.Request(base + path, data=data, method="POST" if data else "GET",
                                headers={"Content-Type": "application/json"} if data else {})
    with urllib.request.urlopen(rq, timeout=10) as r:
        return json.loads(r.read())

def first_sse_status():
    c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=10)
    c.request("GET", "/api/live")
    r = c.getresponse()
    ev = None
    try:
        while True:
            line = r.readline().decode().rstrip("\n")
            if line.startswith("event: "):
                ev = line[7:]
            elif line.startswith("data: ") and ev == "status":
                return json.loads(line[6:])
    finally:
        c.close()

out = {}
with srv.step("warm"):
    pass
out["start"] = call("/api/live/status")
out["post_on"] = call("/api/tracing", {"on": True})
out["on"] = call("/api/live/status")
out["sse_on"] = first_sse_status()
call("/api/tracing", {"on": False})
out["off"] = call("/api/live/status")
out["sse_off"] = first_sse_status()
call("/api/trace", {"steps": 1})
with srv.step("traced"):
    out["in_step"] = call("/api/live/status")
out["after_step"] = call("/api/live/status")
srv.stop()
print("RESULT " + json.dumps(out), flush=True)
'''


def python_dir():
    build = os.environ.get("TFT_BUILD_DIR")
    if build:
        build = build if os.path.isabs(build) else os.path.join(H.REPO, build)
    else:
        build = os.path.dirname(H.tft_bin_big())
    return os.path.join(build, "python")


def check_live_global(tmp):
    pydir = python_dir()
    if not os.path.isdir(os.path.join(pydir, "tftracer")):
        return ("skip", "the Python module is not built in %s" % pydir)
    env = dict(os.environ, PYTHONPATH=pydir, PYTHONDONTWRITEBYTECODE="1")
    r = subprocess.run(["/usr/bin/python3", "-c", LIVE_CHILD, tmp], env=env, capture_output=True,
                       text=True, timeout=120)
    line = [ln for ln in r.stdout.splitlines() if ln.startswith("RESULT ")]
    if r.returncode != 0 or not line:
        return ["child exit %d: %s" % (r.returncode, " | ".join(r.stderr.strip().splitlines()[-4:]))]
    o = json.loads(line[0][7:])
    probs = []

    def want(key, tracing, glob):
        s = o[key]
        if s.get("tracing") is not tracing or s.get("global") is not glob:
            probs.append("%s: tracing %r global %r (want %r, %r)" % (key, s.get("tracing"), s.get("global"), tracing, glob))
        if not s.get("live"):
            probs.append("%s: not live" % key)
    want("start", False, False)
    want("on", True, True)
    want("sse_on", True, True)
    want("off", False, False)
    want("sse_off", False, False)
    want("in_step", True, False)     # a requested step is traced; the switch stays off
    want("after_step", False, False)
    expect(o["post_on"] == {"tracing": True}, "POST /api/tracing reply %r" % o["post_on"], probs)
    return probs


def check_serve_dir():
    """`tftracer serve DIR` (and `tftracer DIR`): a profile run directory is imported as
    `import DIR` does (every *.xplane.pb in it) and served."""
    d = os.path.join(H.data_dir(), "tracelens", "jax_mi300", "jax08_gemm")
    if not os.path.isdir(d):
        return ("skip", "missing data: %s" % d)
    probs = []
    srv = Server([d, "--port", "0", "--quiet"])
    try:
        sess = get_json(srv.base, "/api/session")
        expect(sess.get("format") == "xspace" and sess.get("slices", 0) > 0,
               "serve DIR: %r" % {k: sess.get(k) for k in ("format", "slices", "tracks")}, probs)
    finally:
        rc = srv.stop()
    expect(rc == 0, "serve DIR: exit %r" % rc, probs)
    # a pipe (`tftracer <(zcat t.json.gz)`) is a trace to import, as for `import`
    import threading
    tmp = tempfile.mkdtemp(prefix="tft-fifo-")
    try:
        fifo = os.path.join(tmp, "t.json")
        os.mkfifo(fifo)
        doc = json.dumps({"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": 2, "pid": 1, "tid": 1}]})

        def feed():
            with open(fifo, "w") as f:
                f.write(doc)
        th = threading.Thread(target=feed, daemon=True)
        th.start()
        srv = Server(["serve", fifo, "--port", "0", "--quiet"])
        try:
            sess = get_json(srv.base, "/api/session")
            expect(sess.get("slices") == 1, "serve FIFO: %r" % sess.get("slices"), probs)
        finally:
            srv.stop()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return probs


def main():
    filters = sys.argv[1:]
    rep = H.Reporter("http_more")
    root = H.data_dir()
    paths = [os.path.join(root, p) for p in SOURCES]
    missing = [p for p in paths if not os.path.exists(p)]
    tmp = tempfile.mkdtemp(prefix="tft-http-more-")
    t = T(rep, filters)
    server = None
    try:
        if missing:
            rep.skip("viewport_cat", "missing data: %s" % missing)
            rep.skip("range", "missing data: %s" % missing)
        else:
            session = os.path.join(tmp, "s.tft")
            H.cli_import(H.tft_bin_big(), paths, session)  # 12 MB of JSON: the fast build
            cats = categories_by_name(paths)
            try:
                server = Server(["serve", session, "--port", "0", "--quiet"])
            except RuntimeError as e:
                rep.fail("start", e)
                return rep.finish()
            sess = get_json(server.base, "/api/session")
            t.run("viewport_cat", lambda: check_viewport_cat(server, sess, cats))
            t.run("range", lambda: check_range(server, session))
            srv, server = server, None
            rc = srv.stop()
            t.run("shutdown", lambda: [] if rc == 0 and not H.SANITIZER_RE.search(srv.stderr())
                  else ["SIGTERM: exit %r: %s" % (rc, srv.stderr()[-400:])])
        t.run("live_global", lambda: check_live_global(tmp))
        t.run("serve_profile_dir", check_serve_dir)
    except H.CliError as e:
        rep.fail("setup", e)
    finally:
        if server:
            server.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return rep.finish()


if __name__ == "__main__":
    sys.exit(H.main_guard(main))
