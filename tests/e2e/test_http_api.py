#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# HTTP API end to end: `tftracer serve` on a free loopback port, on a session
# imported from real traces; every endpoint, error codes, limits, auth on a
# non-loopback bind (127.0.0.2), path traversal, no reflected input, TLS,
# clean shutdown (docs/http-api.md, docs/cmd-serve.md).
"""Usage: test_http_api.py [SUBSTRING...]   one PASS/FAIL/SKIP line per test.

Env: TFT_BIN (the CLI, default build/tftracer), TFT_DATA (the trace corpus)."""
import base64
import gzip
import hashlib
import http.client
import json
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "corpus"))
import tft_harness as H  # noqa: E402

SOURCES = (
    "tracelens/kineto_h100/gaunernst_bert-small-uncased__1016001.json.gz",  # Kineto: steps, kernels
    "catapult/simple_trace.json",                                          # counters, instants
    "catapult/flow.json",                                                  # matched flows
)
START_TIMEOUT = 120  # seconds for the server to print its URL (ASan builds are slow)
# Payloads that must never come back in a response body.
EVIL = ("<script>alert(1)</script>", "\"><img src=x onerror=alert(1)>", "';--\\u0000",
        "${jndi:ldap://x}", "%3Cscript%3E")


class Server:
    """A `tftracer serve` child; .url is what it printed (token included)."""

    def __init__(self, args, env=None):
        self.argv = [H.tft_bin()] + args
        self.proc = subprocess.Popen(self.argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     env=env)
        self.err_lines = []
        self.url = None
        self._err_thread = threading.Thread(target=self._drain_err, daemon=True)
        self._err_thread.start()
        line = self._readline(START_TIMEOUT)
        m = re.search(r"(https?://\S+)", line or "")
        if not m:
            self.stop()
            raise RuntimeError("serve printed no URL (stdout %r, stderr %r, rc %s)" %
                               (line, self.stderr()[-400:], self.proc.returncode))
        self.url = m.group(1)
        u = urllib.parse.urlsplit(self.url)
        self.host, self.port = u.hostname, u.port
        q = urllib.parse.parse_qs(u.query)
        self.token = q.get("token", [None])[0]
        self.base = "%s://%s:%d" % (u.scheme, self.host, self.port)

    def _drain_err(self):
        for line in self.proc.stderr:
            self.err_lines.append(line.decode("utf-8", "replace"))

    def _readline(self, timeout):
        out = []

        def rd():
            out.append(self.proc.stdout.readline().decode("utf-8", "replace"))
        t = threading.Thread(target=rd, daemon=True)
        t.start()
        t.join(timeout)
        return out[0] if out else None

    def stderr(self):
        return "".join(self.err_lines)

    def stop(self, sig=signal.SIGTERM, timeout=30):
        """Signal the server; returns its exit status (None if it had to be killed)."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                return None
        self._err_thread.join(5)
        return self.proc.returncode


def req(base, path, method="GET", headers=None, body=None, timeout=60, context=None):
    """One request with http.client (the path is sent exactly as given).
    Returns (status, headers dict lower-cased, body bytes)."""
    u = urllib.parse.urlsplit(base)
    if u.scheme == "https":
        conn = http.client.HTTPSConnection(u.hostname, u.port, timeout=timeout, context=context)
    else:
        conn = http.client.HTTPConnection(u.hostname, u.port, timeout=timeout)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        r = conn.getresponse()
        data = r.read()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, data
    finally:
        conn.close()


def get_json(base, path, **kw):
    st, hd, body = req(base, path, **kw)
    if st != 200:
        raise AssertionError("GET %s: status %d: %r" % (path, st, body[:200]))
    if not hd.get("content-type", "").startswith("application/json"):
        raise AssertionError("GET %s: content-type %r" % (path, hd.get("content-type")))
    return json.loads(body)


def raw_request(host, port, data, timeout=30):
    """Send raw bytes, return the raw response (for requests http.client refuses to send).
    A 'Connection: close' header is added so the server ends the exchange."""
    if b"\r\nHost:" in data and b"Connection:" not in data:
        data = data.replace(b"\r\nHost:", b"\r\nConnection: close\r\nHost:", 1)
    s = socket.create_connection((host, port), timeout=timeout)
    try:
        s.sendall(data)
        chunks = []
        while True:
            try:
                c = s.recv(65536)
            except socket.timeout:
                break
            if not c:
                break
            chunks.append(c)
        return b"".join(chunks)
    finally:
        s.close()


def status_of(raw):
    m = re.match(rb"HTTP/1\.[01] (\d{3})", raw)
    return int(m.group(1)) if m else None


class T:
    """Runs named checks; an exception or a returned problem list fails the test."""

    def __init__(self, rep, filters):
        self.rep, self.filters = rep, filters

    def run(self, name, fn):
        if self.filters and not any(f in name for f in self.filters):
            return
        try:
            probs = fn()
        except AssertionError as e:
            probs = [str(e)]
        except Exception as e:  # noqa: BLE001 - any error is this test's failure
            probs = ["%s: %s" % (type(e).__name__, e)]
        if probs == "skip" or (isinstance(probs, tuple) and probs and probs[0] == "skip"):
            self.rep.skip(name, probs[1] if isinstance(probs, tuple) else "")
        else:
            self.rep.check(name, probs or [])


def expect(cond, msg, probs):
    if not cond:
        probs.append(msg)


# ---- the checks -------------------------------------------------------------------

def check_static(s):
    probs = []
    st, hd, body = req(s.base, "/")
    expect(st == 200, "GET / status %d" % st, probs)
    expect(hd.get("content-type", "").startswith("text/html"), "GET / type %r" % hd.get("content-type"), probs)
    csp = hd.get("content-security-policy", "")
    expect("script-src" in csp and "'unsafe-inline'" not in csp.split("script-src")[1].split(";")[0],
           "GET / CSP %r" % csp, probs)
    for m in re.finditer(rb"<script>(.*?)</script", body, re.S | re.I):
        h = "'sha256-%s'" % base64.b64encode(hashlib.sha256(m.group(1)).digest()).decode()
        expect(h in csp, "inline script hash %s not in the CSP" % h, probs)
    for k in ("x-content-type-options", "referrer-policy", "x-frame-options"):
        expect(k in hd, "GET / lacks %s" % k, probs)
    etag = hd.get("etag")
    expect(etag and etag.startswith('"'), "GET / etag %r" % etag, probs)
    if etag:
        st2, _, b2 = req(s.base, "/", headers={"If-None-Match": etag})
        expect(st2 == 304 and not b2, "If-None-Match: status %d, %d bytes" % (st2, len(b2)), probs)
    st3, hd3, b3 = req(s.base, "/", headers={"Accept-Encoding": "gzip"})
    if hd3.get("content-encoding") == "gzip":
        expect(gzip.decompress(b3) == body, "gzip body differs from the plain one", probs)
    # every asset the page and its modules reference
    refs = set(m.decode() for m in re.findall(rb'(?:src|href)="(assets/[^"#?]+)"', body))
    seen = set()
    while refs:
        ref = refs.pop()
        if ref in seen:
            continue
        seen.add(ref)
        st, hd, b = req(s.base, "/" + ref)
        if st != 200:
            probs.append("GET /%s: %d" % (ref, st))
            continue
        ctype = hd.get("content-type", "")
        if ref.endswith(".js"):
            expect("javascript" in ctype, "/%s type %r" % (ref, ctype), probs)
            for imp in re.findall(rb"""(?:import|from)\s*\(?\s*['"]\./([\w./-]+\.js)['"]""", b):
                refs.add("assets/" + imp.decode())
            for imp in re.findall(rb"""new URL\(\s*['"]\./([\w./-]+\.js)['"]""", b):
                refs.add("assets/" + imp.decode())
        elif ref.endswith(".css"):
            expect("text/css" in ctype, "/%s type %r" % (ref, ctype), probs)
    expect(len(seen) >= 1 or b"<script" not in body, "index.html references no assets/", probs)
    return probs


def check_session(s, info):
    probs = []
    j = get_json(s.base, "/api/session")
    for k in ("format", "producer", "processes", "tracks", "slices", "instants", "flows",
              "counters", "steps", "start_ns", "end_ns", "duration_ns", "dropped",
              "unmatched_flows", "unclosed_slices", "process_list", "track_list", "step_list"):
        expect(k in j, "no %r" % k, probs)
        if k in j and k in info and not k.endswith("_list"):
            expect(j[k] == info[k], "%s: api %r, info --json %r" % (k, j[k], info[k]), probs)
    probs += H.info_consistency(j)
    for a, b in zip(j.get("track_list", []), info.get("track_list", [])):
        for k in ("id", "kind", "name", "tid", "slices", "instants", "counters", "max_depth"):
            if a.get(k) != b.get(k):
                probs.append("track %s: %s api %r info %r" % (a.get("id"), k, a.get(k), b.get(k)))
                break
        for k in ("process", "sort_index", "min_ts_ns", "max_ts_ns"):
            expect(k in a, "track_list item lacks %r" % k, probs)
    for p in j.get("process_list", []):
        for k in ("id", "name", "host", "pid", "rank", "sort_index"):
            expect(k in p, "process_list item lacks %r" % k, probs)
    st = get_json(s.base, "/api/steps")
    expect(st.get("steps") == j.get("step_list"), "/api/steps differs from step_list", probs)
    expect(len(st.get("steps", [])) == info["steps"], "steps count", probs)
    return probs


def viewport(s, **params):
    return get_json(s.base, "/api/viewport?" + urllib.parse.urlencode(params))


def check_viewport(s, sess):
    probs = []
    tracks = sess["track_list"]
    t0, t1 = sess["start_ns"], sess["end_ns"]
    v = viewport(s, t0=t0, t1=t1, width=1000)
    expect(v["t0"] == t0 and v["t1"] == t1, "t0/t1 not echoed", probs)
    expect(v["resolution_ns"] == max(1, (t1 - t0) // 1000), "resolution_ns %r" % v["resolution_ns"], probs)
    expect(len(v["tracks"]) == len(tracks), "default tracks: %d of %d" % (len(v["tracks"]), len(tracks)), probs)
    names = set()
    for vt, tr in zip(v["tracks"], tracks):
        expect(vt["id"] == tr["id"] and vt["kind"] == tr["kind"], "track order/kind", probs)
        if tr["kind"] == "counter":
            n = len(vt["ts"])
            expect(all(len(vt[k]) == n for k in ("value", "min", "max")), "counter columns", probs)
            expect(0 < n <= tr["counters"], "counter track %d: %d samples of %d" % (tr["id"], n, tr["counters"]), probs)
            expect(all(lo <= x <= hi for lo, x, hi in zip(vt["min"], vt["value"], vt["max"])),
                   "counter min <= value <= max", probs)
            continue
        n = len(vt["ts"])
        for k in ("dur", "depth", "name", "count", "flags", "ekind"):
            expect(len(vt.get(k, ())) == n, "track %d column %s length" % (tr["id"], k), probs)
        # Every event overlaps the whole-session window: the counts must add up exactly.
        want = tr["slices"] + tr["instants"]
        expect(sum(vt["count"]) == want, "track %d: counts sum to %d, want %d" %
               (tr["id"], sum(vt["count"]), want), probs)
        expect(vt["ts"] == sorted(vt["ts"]), "track %d: ts not in start order" % tr["id"], probs)
        names.update(vt["name"])
    missing = [n for n in names if str(n) not in v["strings"]]
    expect(not missing, "strings lacks ids %s" % missing[:5], probs)
    # Size stays small at width 1500 over all tracks.
    st, _, body = req(s.base, "/api/viewport?t0=%d&t1=%d&width=1500" % (t0, t1))
    expect(st == 200 and len(body) < 200000, "whole-trace response is %d bytes" % len(body), probs)
    # rel=1: offsets from t0, same content.
    busiest = max((t for t in tracks if t["kind"] != "counter"), key=lambda t: t["slices"])
    a = viewport(s, tracks=busiest["id"], t0=busiest["min_ts_ns"], t1=busiest["max_ts_ns"], width=500)
    b = viewport(s, tracks=busiest["id"], t0=busiest["min_ts_ns"], t1=busiest["max_ts_ns"], width=500, rel=1)
    expect(b.get("rel") == 1, "rel=1 not acknowledged", probs)
    expect([x + busiest["min_ts_ns"] for x in b["tracks"][0]["ts"]] == a["tracks"][0]["ts"],
           "rel=1 ts are not offsets from t0", probs)
    expect(sum(a["tracks"][0]["count"]) == busiest["slices"] + busiest["instants"],
           "busiest track: counts do not add up over its own span", probs)
    # A narrow window at a fine resolution returns raw events (count 1).
    tr0 = a["tracks"][0]
    mid = tr0["ts"][len(tr0["ts"]) // 2]
    f = viewport(s, tracks=busiest["id"], t0=mid, t1=mid + 2000, width=2000)["tracks"][0]
    expect(f["ts"] and all(c == 1 for c in f["count"]), "fine window: merged items %r" % f["count"][:10], probs)
    # A counter holds its value: a window opens with the sample in force at t0 (before
    # it), even a window with no sample of its own.
    for tr in (t for t in tracks if t["kind"] == "counter" and t["counters"] > 1):
        full = viewport(s, tracks=tr["id"], t0=tr["min_ts_ns"], t1=tr["max_ts_ns"], width=10000)["tracks"][0]
        pairs = list(zip(full["ts"], full["value"]))
        for (a_ts, a_v), (b_ts, _) in zip(pairs, pairs[1:]):
            if b_ts - a_ts < 4:
                continue
            w = viewport(s, tracks=tr["id"], t0=a_ts + 1, t1=a_ts + 2 + (b_ts - a_ts) // 2, width=100)["tracks"][0]
            expect(len(w["ts"]) == 1 and w["ts"][0] == a_ts and w["value"][0] == a_v,
                   "counter %d: window (%d, %d) between samples gives %r, want the sample at %d = %r" %
                   (tr["id"], a_ts + 1, b_ts, list(zip(w["ts"], w["value"])), a_ts, a_v), probs)
            break
        w = viewport(s, tracks=tr["id"], t0=tr["min_ts_ns"] - 1000, t1=tr["min_ts_ns"] - 1, width=10)["tracks"][0]
        expect(w["ts"] == [], "counter %d: a window before its first sample is not empty" % tr["id"], probs)
        # after its last sample, that sample is in force (found from the track's end, not
        # by scanning back from the window)
        last = (full["ts"][-1], full["value"][-1]) if full["ts"] else None
        w = viewport(s, tracks=tr["id"], t0=tr["max_ts_ns"] + 10 ** 9, t1=tr["max_ts_ns"] + 2 * 10 ** 9,
                     width=100)["tracks"][0]
        expect(last is None or (len(w["ts"]) == 1 and w["value"][0] == last[1] and
                                last[0] <= w["ts"][0] <= tr["max_ts_ns"]),
               "counter %d: a window after its last sample gives %r, want its last value %r" % (
                   tr["id"], list(zip(w["ts"], w["value"])), last[1] if last else None), probs)
    return probs


def check_viewport_errors(s, sess):
    probs = []
    nt = len(sess["track_list"])
    for q, want in (("width=0", 400), ("width=10001", 400), ("width=abc", 400), ("width=1e3", 400),
                    ("t0=10&t1=5", 400), ("t0=x", 400), ("tracks=abc", 400), ("tracks=1,,2", 400),
                    ("tracks=%d" % nt, 404), ("tracks=0,%d" % nt, 404), ("tracks=-1", 400),
                    ("tracks=99999999999", 400), ("tracks=%d,x" % nt, 400),
                    ("t0=-9223372036854775808&t1=9223372036854775807&width=10000", 200),
                    ("t0=99999999999999999999", 400), ("rel=2", 400), ("tracks=", 200)):
        st, hd, body = req(s.base, "/api/viewport?" + q)
        expect(st == want, "viewport?%s: %d, want %d" % (q, st, want), probs)
        if st != 200:
            try:
                expect("error" in json.loads(body), "viewport?%s: no error key" % q, probs)
            except ValueError:
                probs.append("viewport?%s: error body is not JSON" % q)
    # repeated ids: each track once, in the order of first mention
    a = viewport(s, tracks="1,0", width=500)
    b = viewport(s, tracks="1,0,1,0," + ",".join(["1"] * 2000), width=500)
    expect(a == b, "tracks=1,0 repeated 1000 times is not tracks=1,0 (%d bytes vs %d)" %
           (len(json.dumps(b)), len(json.dumps(a))), probs)
    return probs


def search(s, **params):
    return get_json(s.base, "/api/search?" + urllib.parse.urlencode(params))


def check_search(s, stats):
    probs = []
    rows = stats["rows"]
    name = max(rows, key=lambda r: r["count"])["name"]
    exact = "^%s$" % re.escape(name)
    r = search(s, q=exact, regex=1, limit=10000)
    expect(r["total"] >= next(x["count"] for x in rows if x["name"] == name),
           "total %d < stats count for %r" % (r["total"], name), probs)
    expect(len(r["results"]) == min(r["total"], 10000), "results %d of total %d" % (len(r["results"]), r["total"]), probs)
    expect(all(x["name"] == name for x in r["results"]), "regex ^name$ matched other names", probs)
    keys = [(x["ts"], x["track"], x["depth"]) for x in r["results"]]
    expect(keys == sorted(keys), "results not in (ts, track, depth) order", probs)
    # substring search, case-insensitive; total is exact even when limit cuts
    sub = name[len(name) // 3: len(name) // 3 + 4] or name
    full = search(s, q=sub.upper(), limit=10000)
    lim = search(s, q=sub.upper(), limit=7)
    expect(lim["total"] == full["total"], "total changes with limit: %d vs %d" % (lim["total"], full["total"]), probs)
    expect(lim["results"] == full["results"][:7], "limit=7 is not a prefix of the full list", probs)
    expect(all(sub.lower() in x["name"].lower() for x in full["results"]), "substring mismatch", probs)
    # paging with the cursor (after_ts, after_track, after_depth) walks the full list
    paged, cur = [], {}
    for _ in range(6):
        pg = search(s, q=sub.upper(), limit=5, **cur)
        paged += pg["results"]
        if not pg["results"]:
            break
        last = pg["results"][-1]
        cur = {"after_ts": last["ts"], "after_track": last["track"], "after_depth": last["depth"]}
    expect(paged == full["results"][:len(paged)] and len(paged) == min(30, len(full["results"])),
           "paging does not follow the full list", probs)
    # back-references: refused (glibc matches them in exponential time; this one took 30 s
    # per 80-byte name); an escaped backslash before a digit is no back-reference
    backref = urllib.parse.quote("(.*)(.*)(.*)(.*)(.*)(.*)(.*)\\7\\6\\5\\4\\3\\2\\1x")
    literal = urllib.parse.quote("a\\\\1")
    for q, want in (("q=", 400), ("", 400), ("q=" + "a" * 300, 400), ("q=(&regex=1", 400),
                    ("q=a&limit=0", 400), ("q=a&limit=abc", 400), ("q=a&regex=3", 400),
                    ("q=zzzzzz_no_such_name", 200), ("q=%s&regex=1" % backref, 400),
                    ("q=%s&regex=1" % literal, 200)):
        st, _, _ = req(s.base, "/api/search?" + q)
        expect(st == want, "search?%s: %d, want %d" % (q[:40], st, want), probs)
    return probs


def check_slice(s, stats, sess):
    probs = []
    name = max(stats["rows"], key=lambda r: r["count"])["name"]
    hits = search(s, q="^%s$" % re.escape(name), regex=1, limit=50)["results"]
    expect(hits, "no search hits for %r" % name, probs)
    for h in hits[:10]:
        j = get_json(s.base, "/api/slice?track=%d&ts=%d&depth=%d" % (h["track"], h["ts"], h["depth"]))
        expect(j["name"] == name and j["ts"] == h["ts"] and j["dur"] == h["dur"] and j["depth"] == h["depth"],
               "slice %r != search hit %r" % ({k: j.get(k) for k in ("name", "ts", "dur", "depth")}, h), probs)
        expect(0 <= j["self_ns"] <= j["dur"], "self_ns %d outside [0, dur %d]" % (j["self_ns"], j["dur"]), probs)
        expect(isinstance(j["args"], dict), "args is not an object", probs)
        expect(j["track"]["id"] == h["track"] and "kind" in j["track"], "track object", probs)
        expect({"id", "name", "pid", "rank"} <= set(j["process"]), "process object", probs)
        for k in ("cat", "step", "flows_out", "flows_in"):
            expect(k in j, "slice lacks %r" % k, probs)
        if j["dur"] > 2:
            mid = get_json(s.base, "/api/slice?track=%d&ts=%d&depth=%d" %
                           (h["track"], h["ts"] + j["dur"] // 2, h["depth"]))
            expect(mid["ts"] == j["ts"], "a ts inside the slice finds another slice", probs)
    # flows: at least one slice somewhere has flows, and their other ends are real tracks
    flows = 0
    for tr in sess["track_list"]:
        if tr["kind"] == "counter" or not tr["slices"]:
            continue
        v = viewport(s, tracks=tr["id"], t0=tr["min_ts_ns"], t1=tr["max_ts_ns"] + 1, width=10000)["tracks"][0]
        for ts, d, c in list(zip(v["ts"], v["depth"], v["count"]))[:60]:
            if c != 1:
                continue
            j = get_json(s.base, "/api/slice?track=%d&ts=%d&depth=%d" % (tr["id"], ts, d))
            for f in j["flows_out"] + j["flows_in"]:
                flows += 1
                if f["track"] is not None:
                    expect(0 <= f["track"] < len(sess["track_list"]), "flow end on unknown track", probs)
    expect(flows > 0 or sess["flows"] == 0, "no slice lists a flow (session has %d)" % sess["flows"], probs)
    # ancestors, deepest=1, nav=next|prev against the full-resolution viewport of a deep track
    deep = max((t for t in sess["track_list"] if t["kind"] == "thread"), key=lambda t: t["max_depth"])
    v = viewport(s, tracks=deep["id"], t0=deep["min_ts_ns"], t1=deep["max_ts_ns"] + 1, width=10000)["tracks"][0]
    # (slices: deepest=1 never answers an instant, a flow end binds to slices only)
    items = [(ts, d, dur) for ts, d, dur, c, ek in zip(v["ts"], v["depth"], v["dur"], v["count"], v["ekind"])
             if c == 1 and ek == 0]
    target = max(items, key=lambda x: x[1]) if items else None
    if target and target[1] > 0:
        ts, d, dur = target
        j = get_json(s.base, "/api/slice?track=%d&ts=%d&depth=%d" % (deep["id"], ts, d))
        anc = j.get("ancestors")
        deps = [a["depth"] for a in anc] if isinstance(anc, list) else None
        # (a depth may hold nothing above it: Kineto python stacks skip lanes)
        expect(deps and deps == sorted(set(deps)) and deps[0] == 0 and deps[-1] == d - 1,
               "ancestors of a depth-%d slice: depths %r" % (d, deps), probs)
        for a in anc or []:
            expect(a["ts"] <= ts and a["ts"] + a["dur"] >= ts + dur, "ancestor %r does not enclose" % a, probs)
        j = get_json(s.base, "/api/slice?track=%d&ts=%d&deepest=1" % (deep["id"], ts))
        expect(j["depth"] >= d and j["ts"] <= ts, "deepest=1 at a depth-%d slice's start: depth %d" % (d, j["depth"]), probs)
        # the slice deepest=1 finds, described as when asked at its own depth: also a parent
        # (at its start, where its child starts later), whose children are a depth below it
        starts = [ts] + [x["ts"] for x in anc or [] if x["ts"] < ts and x["depth"] >= 1]
        for at in starts:
            j = get_json(s.base, "/api/slice?track=%d&ts=%d&deepest=1" % (deep["id"], at))
            k = get_json(s.base, "/api/slice?track=%d&ts=%d&depth=%d" % (deep["id"], at, j["depth"]))
            for key in ("ts", "dur", "self_ns", "children", "flows_in", "flows_out", "ancestors"):
                expect(j.get(key) == k.get(key), "deepest=1 at %d vs depth=%d: %s %r != %r" % (
                    at, j["depth"], key, j.get(key), k.get(key)), probs)
        # the truth at 10 ns per bucket around it (nothing merged)
        w0, w1 = max(deep["min_ts_ns"], ts - 50000), min(deep["max_ts_ns"] + 1, ts + 50000)
        f = viewport(s, tracks=deep["id"], t0=w0, t1=w1, width=max(1, (w1 - w0) // 10))["tracks"][0]
        same = sorted(x for x, dd in zip(f["ts"], f["depth"]) if dd == d)
        i = same.index(ts)
        for nav, want in (("next", same[i + 1] if i + 1 < len(same) else None), ("prev", same[i - 1] if i else None)):
            st, _, body = req(s.base, "/api/slice?track=%d&ts=%d&depth=%d&nav=%s" % (deep["id"], ts, d, nav))
            if want is None:
                expect(st in (200, 404), "nav=%s: %d" % (nav, st), probs)
            else:
                got = json.loads(body) if st == 200 else {}
                expect(got.get("ts") == want and got.get("depth") == d,
                       "nav=%s from %d: %r, want %d" % (nav, ts, got.get("ts"), want), probs)
    # a depth the track never reaches: nothing next or before, at once
    st, _, _ = req(s.base, "/api/slice?track=%d&ts=%d&depth=%d&nav=next" % (deep["id"], deep["min_ts_ns"],
                                                                          deep["max_depth"] + 5))
    expect(st == 404, "nav=next below the track's deepest depth: %d, want 404" % st, probs)
    for q in ("nav=sideways", "deepest=2", "deepest=1&nav=next"):
        st, _, _ = req(s.base, "/api/slice?track=0&ts=1&" + q)
        expect(st == 400, "slice?%s: %d, want 400" % (q, st), probs)
    st, _, _ = req(s.base, "/api/slice?track=0&ts=%d&depth=0" % (sess["start_ns"] - 10 ** 6))
    expect(st == 404, "slice before the trace: %d, want 404" % st, probs)
    for q, want in (("", 400), ("track=0", 400), ("track=x&ts=1", 400), ("track=999999&ts=1", 404),
                    ("track=0&ts=1&depth=-1", 400), ("track=0&ts=99999999999999999999", 400)):
        st, _, _ = req(s.base, "/api/slice?" + q)
        expect(st == want, "slice?%s: %d, want %d" % (q, st, want), probs)
    return probs


def row_key(r):
    return (r["count"], r["total_ns"], r["self_ns"], r["min_ns"], r["max_ns"], r["p50_ns"], r["p99_ns"])


def check_stats(s, cli_stats, sess):
    probs = []
    j = get_json(s.base, "/api/stats")
    expect(j.get("total_ns") == cli_stats.get("total_ns") and j.get("slices") == cli_stats.get("slices"),
           "totals differ from stats --json", probs)
    a = {r["name"]: row_key(r) for r in j["rows"]}
    b = {r["name"]: row_key(r) for r in cli_stats["rows"]}
    expect(a == b, "rows differ from stats --json (%d vs %d)" % (len(a), len(b)), probs)
    for r in j["rows"][:3]:
        for k in ("name", "count", "total_ns", "self_ns", "mean_ns", "min_ns", "max_ns", "p50_ns", "p99_ns", "share"):
            expect(k in r, "row lacks %r" % k, probs)
    # The server's own aggregation (window / several tracks) agrees with analyze/stats.c.
    ids = ",".join(str(t["id"]) for t in sess["track_list"] if not t.get("derived"))
    w = get_json(s.base, "/api/stats?t0=%d&t1=%d&track=%s" % (sess["start_ns"], sess["end_ns"], ids))
    c = {r["name"]: row_key(r) for r in w["rows"]}
    bad = [n for n in b if c.get(n) != b[n]][:3]
    expect(not bad and len(c) == len(b), "windowed rows differ, e.g. %s" %
           ["%s: %s vs %s" % (n, c.get(n), b[n]) for n in bad], probs)
    t = get_json(s.base, "/api/stats?top=3")
    expect(len(t["rows"]) == min(3, len(b)), "top=3 gave %d rows" % len(t["rows"]), probs)
    for by in ("category", "track"):
        g = get_json(s.base, "/api/stats?by=" + by)
        expect(sum(r["count"] for r in g["rows"]) == cli_stats["slices"], "by=%s counts" % by, probs)
    busy = max(sess["track_list"], key=lambda t: t["slices"])
    st, _, _ = req(s.base, "/api/stats?track=%d" % len(sess["track_list"]))
    expect(st == 404, "stats?track=<no such track>: %d, want 404" % st, probs)
    one = get_json(s.base, "/api/stats?track=%d" % busy["id"])
    expect(sum(r["count"] for r in one["rows"]) == busy["slices"], "track=ID counts", probs)
    mid = (busy["min_ts_ns"] + busy["max_ts_ns"]) // 2
    part = get_json(s.base, "/api/stats?track=%d&t0=%d&t1=%d" % (busy["id"], busy["min_ts_ns"], mid))
    expect(0 < sum(r["count"] for r in part["rows"]) <= busy["slices"], "half-window counts", probs)
    # A track named many times counts once (it used to count, and cost, once per mention).
    many = get_json(s.base, "/api/stats?track=%s" % ",".join([str(busy["id"])] * 2000))
    expect(many["slices"] == one["slices"] and many["rows"] == one["rows"],
           "track=ID x2000: %d slices, want %d" % (many["slices"], one["slices"]), probs)
    for q, want in (("by=foo", 400), ("t0=5&t1=1", 400), ("top=-1", 400), ("track=abc", 400)):
        st, _, _ = req(s.base, "/api/stats?" + q)
        expect(st == want, "stats?%s: %d, want %d" % (q, st, want), probs)
    return probs


def check_downloads(s, session_path, tmp):
    probs = []
    st, hd, body = req(s.base, "/download/session")
    expect(st == 200 and body == open(session_path, "rb").read(), "/download/session differs from the file", probs)
    expect("attachment" in hd.get("content-disposition", ""), "no attachment disposition", probs)
    st, hd, body = req(s.base, "/download/chrome", timeout=300)
    expect(st == 200, "/download/chrome status %d" % st, probs)
    out = os.path.join(tmp, "cli.json")
    H.cli_export(H.tft_bin(), session_path, out)
    try:
        expect(json.loads(body) == json.load(open(out)), "/download/chrome differs from `export`", probs)
    except ValueError as e:
        probs.append("/download/chrome is not JSON: %s" % e)
    # a client that goes away mid-download must not hurt the server
    raw_request(s.host, s.port, b"GET /download/chrome HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", timeout=0.05)
    st, _, _ = req(s.base, "/api/steps")
    expect(st == 200, "server unwell after an aborted download", probs)
    return probs


def check_errors(s):
    probs = []
    for path, want in (("/nope", 404), ("/api", 404), ("/api/", 404), ("/assets/", 404),
                       ("/assets/nope.js", 404), ("/index.html", 404), ("/API/SESSION", 404)):
        st, hd, body = req(s.base, path)
        expect(st == want, "%s: %d, want %d" % (path, st, want), probs)
        expect(hd.get("content-type", "").startswith("application/json") and "error" in json.loads(body),
               "%s: error body" % path, probs)
    for method, path, want in (("POST", "/api/session", 405), ("PUT", "/api/session", 405),
                               ("DELETE", "/", 405), ("GET", "/api/refresh", 405),
                               ("POST", "/", 405), ("OPTIONS", "/api/session", 405)):
        st, _, _ = req(s.base, path, method=method, body=b"" if method in ("POST", "PUT") else None)
        expect(st == want, "%s %s: %d, want %d" % (method, path, st, want), probs)
    st, _, body = req(s.base, "/api/refresh", method="POST", body=b"")
    expect(st == 200 and "generation" in json.loads(body), "POST /api/refresh: %d" % st, probs)
    try:
        st = req(s.base, "/api/refresh", method="POST", body=b"x" * (200 << 10))[0]
    except (http.client.HTTPException, OSError):
        st = "closed"  # refused while the body was still being sent
    expect(st in (413, "closed"), "POST with a 200 KiB body: %s, want 413" % st, probs)
    st, _, _ = req(s.base, "/api/refresh", method="POST", body=b"",
                   headers={"Origin": "http://evil.example"})
    expect(st == 403, "cross-origin POST: %d, want 403" % st, probs)
    st, _, _ = req(s.base, "/api/refresh", method="POST", body=b"",
                   headers={"Origin": "http://127.0.0.1:%d" % s.port})
    expect(st == 200, "same-origin POST: %d, want 200" % st, probs)
    # DNS rebinding: a loopback server without a token only answers loopback Host names
    st, _, _ = req(s.base, "/api/session", headers={"Host": "evil.example"})
    expect(st == 403, "Host: evil.example: %d, want 403" % st, probs)
    st, _, _ = req(s.base, "/api/session", headers={"Host": "localhost:%d" % s.port})
    expect(st == 200, "Host: localhost: %d, want 200" % st, probs)
    return probs


def check_limits(s):
    probs = []
    st, _, _ = req(s.base, "/api/viewport?x=" + "a" * 9000)
    expect(st == 414, "9 KB query: %d, want 414" % st, probs)
    st, _, _ = req(s.base, "/api/viewport?" + "&".join("k%d=1" % i for i in range(40)))
    expect(st == 414, "40 parameters: %d, want 414" % st, probs)
    st, _, _ = req(s.base, "/api/viewport?width=100&pad=" + "b" * 7000)
    expect(st == 200, "7 KB query: %d, want 200" % st, probs)
    raw = raw_request(s.host, s.port, b"GET /?" + b"a" * 200000 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    expect(status_of(raw) in (400, 414, 431, None), "200 KB request line: %r" % raw[:40], probs)
    raw = raw_request(s.host, s.port, b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"c" * 100000 + b"\r\n\r\n")
    expect(status_of(raw) in (400, 413, 431, None), "100 KB header: %r" % raw[:40], probs)
    for bad in (b"GET /%zz HTTP/1.1", b"GET /api/session?q=%G0 HTTP/1.1", b"GET relative HTTP/1.1",
                b"GET /api/session?\x01 HTTP/1.1"):
        raw = raw_request(s.host, s.port, bad + b"\r\nHost: 127.0.0.1\r\n\r\n")
        expect(status_of(raw) in (400, 404, None), "%r: %r" % (bad, raw[:40]), probs)
    # many connections at once: served or refused, never a crash
    socks = []
    for _ in range(80):
        try:
            socks.append(socket.create_connection((s.host, s.port), timeout=5))
        except OSError:
            break
    for c in socks:
        c.close()
    st, _, _ = req(s.base, "/api/steps")
    expect(st == 200, "server unwell after the limit tests: %d" % st, probs)
    return probs


TRAVERSALS = ("/../../../../etc/passwd", "/assets/../../../etc/passwd", "/assets/..%2f..%2fetc%2fpasswd",
              "/assets/%2e%2e/%2e%2e/etc/passwd", "//etc/passwd", "/assets//etc/passwd",
              "/assets/....//....//etc/passwd", "/assets/%252e%252e/etc/passwd", "/%2e%2e/%2e%2e/etc/passwd",
              "/assets/..\\..\\etc\\passwd", "/assets/app.js%00.html", "/./", "/assets/./app.js",
              "/download/../../etc/passwd", "/api/../api/session", "/assets/../index.html")


def check_traversal(s):
    probs = []
    for path in TRAVERSALS:
        st, hd, body = req(s.base, path)
        expect(st in (400, 404), "%s: %d" % (path, st), probs)
        expect(b"root:" not in body and b"<html" not in body.lower(), "%s: served content" % path, probs)
    for path in (b"GET ../../etc/passwd HTTP/1.1", b"GET /assets/../../etc/passwd HTTP/1.0",
                 b"GET http://127.0.0.1/../../etc/passwd HTTP/1.1"):
        raw = raw_request(s.host, s.port, path + b"\r\nHost: 127.0.0.1\r\n\r\n")
        expect(status_of(raw) in (400, 404, None) and b"root:" not in raw, "%r: %r" % (path, raw[:60]), probs)
    return probs


def check_no_reflection(s):
    probs = []
    for p in EVIL:
        q = urllib.parse.quote(p, safe="")
        for path in ("/api/viewport?width=" + q, "/api/viewport?tracks=" + q, "/api/slice?track=" + q + "&ts=1",
                     "/api/search?q=x&limit=" + q, "/api/search?q=" + q + "&regex=1",
                     "/api/stats?by=" + q, "/api/" + q, "/assets/" + q, "/" + q, "/?token=" + q):
            try:
                st, hd, body = req(s.base, path)
            except (http.client.HTTPException, ValueError, OSError):
                continue  # http.client refused to send it: nothing to reflect
            if st == 200 and path.startswith("/?"):
                continue  # the static page itself
            expect(p.encode() not in body and q.encode() not in body, "%s reflected (%d)" % (path[:50], st), probs)
            expect(not hd.get("content-type", "").startswith("text/html") or st == 200,
                   "%s: HTML error page" % path[:50], probs)
    return probs


def check_concurrency(s, sess):
    probs = []
    paths = ["/api/viewport?width=%d" % w for w in (300, 700, 1500)] + \
            ["/api/search?q=a&limit=50", "/api/stats?top=5", "/api/session"]
    want = {p: req(s.base, p)[2] for p in paths}
    errors = []

    def worker(k):
        for i in range(12):
            p = paths[(k + i) % len(paths)]
            try:
                st, _, body = req(s.base, p)
                if st != 200 or body != want[p]:
                    errors.append("%s: %d, %s" % (p, st, "same" if body == want[p] else "different body"))
            except Exception as e:  # noqa: BLE001
                errors.append("%s: %s" % (p, e))
    ths = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
    for t in ths:
        t.start()
    for t in ths:
        t.join()
    expect(not errors, "%d errors, e.g. %s" % (len(errors), errors[:3]), probs)
    return probs


def check_auth(session):
    """A non-loopback bind (127.0.0.2) with a token, a generated token, and --no-auth."""
    probs = []
    tok = "test-token_0123456789"
    s = Server(["serve", session, "--host", "127.0.0.2", "--port", "0", "--token", tok, "--quiet"])
    try:
        expect(s.token == tok and s.host == "127.0.0.2", "URL %r lacks the token" % s.url, probs)
        for path in ("/", "/api/session", "/api/viewport", "/download/session", "/assets/app.js", "/nope"):
            st, _, body = req(s.base, path)
            expect(st == 401, "%s without a token: %d, want 401" % (path, st), probs)
            expect(tok.encode() not in body, "%s: the 401 body holds the token" % path, probs)
        st, hd, _ = req(s.base, "/?token=" + tok)
        cookie = hd.get("set-cookie", "")
        expect(st == 200 and "tft_token=" + tok in cookie and "HttpOnly" in cookie and "SameSite=Strict" in cookie,
               "?token=: %d, Set-Cookie %r" % (st, cookie), probs)
        for hdrs in ({"Cookie": "a=b; tft_token=" + tok}, {"X-TFT-Token": tok}):
            st, _, _ = req(s.base, "/api/session", headers=hdrs)
            expect(st == 200, "%s: %d, want 200" % (list(hdrs)[0], st), probs)
        for bad in ({"X-TFT-Token": tok + "x"}, {"X-TFT-Token": tok[:-1]}, {"Cookie": "tft_token=nope"}):
            st, _, _ = req(s.base, "/api/session", headers=bad)
            expect(st == 401, "wrong token %r: %d, want 401" % (bad, st), probs)
        st, _, _ = req(s.base, "/api/session?token=" + tok[:-1])
        expect(st == 401, "wrong ?token=: %d" % st, probs)
        st, _, _ = req(s.base, "/api/refresh", method="POST", body=b"", headers={"X-TFT-Token": tok})
        expect(st == 200, "POST with the token: %d" % st, probs)
        st, _, _ = req(s.base, "/api/refresh", method="POST", body=b"")
        expect(st == 401, "POST without the token: %d" % st, probs)
        st, _, _ = req(s.base, "/api/refresh", method="POST", body=b"",
                       headers={"X-TFT-Token": tok, "Origin": "http://evil.example"})
        expect(st == 403, "cross-origin POST with the token: %d" % st, probs)
        st, _, _ = req(s.base, "/api/session", headers={"X-TFT-Token": tok, "Host": "evil.example"})
        expect(st == 200, "with a token the Host header is not checked: %d" % st, probs)
    finally:
        rc = s.stop()
        expect(rc == 0, "token server exit %r: %s" % (rc, s.stderr()[-300:]), probs)
    s = Server(["serve", session, "--host", "127.0.0.2", "--port", "0", "--quiet"])
    try:
        expect(s.token and re.fullmatch(r"[0-9a-f]{32}", s.token), "generated token %r" % s.token, probs)
        st, _, _ = req(s.base, "/api/session")
        expect(st == 401, "generated token: no token: %d" % st, probs)
        st, _, _ = req(s.base, "/api/session?token=" + (s.token or ""))
        expect(st == 200, "generated token: with token: %d" % st, probs)
    finally:
        expect(s.stop() == 0, "generated-token server exit", probs)
    s = Server(["serve", session, "--host", "127.0.0.2", "--port", "0", "--no-auth", "--quiet"])
    try:
        expect(s.token is None, "--no-auth URL has a token", probs)
        st, _, _ = req(s.base, "/api/session")
        expect(st == 200, "--no-auth: %d" % st, probs)
    finally:
        expect(s.stop() == 0, "--no-auth server exit", probs)
    s = Server(["serve", session, "--port", "0", "--token", tok, "--quiet"])
    try:
        st, _, _ = req(s.base, "/api/session")
        expect(st == 401, "loopback with --token: no token: %d, want 401" % st, probs)
    finally:
        expect(s.stop() == 0, "loopback token server exit", probs)
    return probs


def check_bad_options(session, tmp):
    probs = []
    for args, want in ((["--port", "70000"], 2), (["--port", "x"], 2), (["--tls-cert", "a.pem"], 2),
                       (["--token", "short"], 2), (["--token", "bad token!"], 2), (["--threads", "0"], 2),
                       (["--host", "not-an-address"], 2), (["--bogus"], 2)):
        r = H.run([H.tft_bin(), "serve", session] + args, timeout=60)
        expect(r.rc == want and not r.crashed, "serve %s: exit %d, want %d (%s)" %
               (" ".join(args), r.rc, want, r.err.strip()[:100]), probs)
    r = H.run([H.tft_bin(), "serve", os.path.join(tmp, "missing.tft")], timeout=60)
    expect(r.rc == 2, "missing file: exit %d" % r.rc, probs)
    r = H.run([H.tft_bin(), "serve"], timeout=60)
    expect(r.rc == 2, "no file: exit %d" % r.rc, probs)
    # port in use
    s = Server(["serve", session, "--port", "0", "--quiet"])
    try:
        r = H.run([H.tft_bin(), "serve", session, "--port", str(s.port)], timeout=60)
        expect(r.rc == 1 and not r.crashed, "port in use: exit %d (%s)" % (r.rc, r.err.strip()[:100]), probs)
    finally:
        s.stop()
    return probs


def check_tls(session, tmp):
    if not shutil.which("openssl"):
        return ("skip", "openssl not installed")
    probs = []
    cert, key = os.path.join(tmp, "cert.pem"), os.path.join(tmp, "key.pem")
    r = H.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
               "/CN=127.0.0.1", "-keyout", key, "-out", cert], timeout=120)
    if r.rc != 0:
        return ["openssl req failed: %s" % r.err[:200]]
    s = Server(["serve", session, "--port", "0", "--tls-cert", cert, "--tls-key", key, "--quiet"])
    try:
        expect(s.url.startswith("https://"), "TLS URL %r" % s.url, probs)
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        j = json.loads(req(s.base, "/api/session", context=ctx)[2])
        expect("tracks" in j, "HTTPS /api/session", probs)
        st, hd, _ = req(s.base, "/?token=x", context=ctx)
        expect(st == 200, "HTTPS /: %d" % st, probs)
        raw = raw_request(s.host, s.port, b"GET /api/session HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", timeout=5)
        expect(b'"tracks"' not in raw, "plain HTTP answered on the TLS port", probs)
    finally:
        expect(s.stop() == 0, "TLS server exit %r" % s.proc.returncode, probs)
    r = H.run([H.tft_bin(), "serve", session, "--port", "0", "--tls-cert", cert, "--tls-key",
               os.path.join(tmp, "missing.pem")], timeout=60)
    expect(r.rc in (1, 2) and not r.crashed, "missing key file: exit %d" % r.rc, probs)
    return probs


def check_serve_traces(paths, tmp, info):
    """`serve TRACE...` imports into a temporary session, removed at shutdown."""
    probs = []
    tdir = os.path.join(tmp, "servetmp")
    os.makedirs(tdir, exist_ok=True)
    env = dict(os.environ, TMPDIR=tdir)
    s = Server(["serve"] + paths + ["--port", "0"], env=env)
    try:
        j = get_json(s.base, "/api/session")
        probs += H.diff_counts(j, info)
        expect(os.listdir(tdir), "no temporary session in TMPDIR", probs)
    finally:
        rc = s.stop(signal.SIGINT)
    expect(rc == 0, "SIGINT: exit %r (%s)" % (rc, s.stderr()[-300:]), probs)
    expect(not os.listdir(tdir), "temporary files left: %s" % os.listdir(tdir), probs)
    expect(not H.SANITIZER_RE.search(s.stderr()), "sanitizer: %s" % s.stderr()[-300:], probs)
    return probs


def check_runs_file(tmp):
    """/api/runs of a file session: one kind per ProfilerStep#N (20000 kinds) answers in one
    sort, not a scan per kind (26 s for 30000 kinds before); durations near INT64_MAX/2 sum
    without overflow."""
    probs = []
    ev = [{"ph": "X", "name": "ProfilerStep#%d" % i, "pid": 1, "tid": 1, "ts": i * 10, "dur": 9,
           "cat": "user_annotation"} for i in range(20000)]
    big = 5000000000000000  # us: 5e18 ns, twice
    ev += [{"ph": "X", "name": "ProfilerStep#100000", "pid": p, "tid": 1, "ts": 300000, "dur": big,
            "cat": "user_annotation"} for p in (2, 3)]
    ev.append({"ph": "X", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 1, "dur": 1, "cat": "cpu_op"})
    src, session = os.path.join(tmp, "steps.json"), os.path.join(tmp, "steps.tft")
    with open(src, "w") as f:
        json.dump({"traceEvents": ev}, f)
    H.cli_import(H.tft_bin(), [src], session)
    s = Server(["serve", session, "--port", "0", "--quiet"])
    try:
        t0 = time.monotonic()
        j = get_json(s.base, "/api/runs?recent=2")
        took = time.monotonic() - t0
        runs = {r["name"]: r for r in j["runs"]}
        expect(j["steps"] == 20002 and len(runs) == 20001, "%d steps, %d kinds" % (j["steps"], len(runs)), probs)
        expect(took < 10, "/api/runs took %.1f s for 20001 kinds" % took, probs)
        b = runs.get("ProfilerStep#100000", {})
        expect(b.get("count") == 2 and b.get("mean_ns") == big * 1000 and b.get("max_ns") == big * 1000,
               "the two 5e18 ns steps: %s" % {k: b.get(k) for k in ("count", "mean_ns", "max_ns")}, probs)
        expect(j["runs"][0]["name"] == "ProfilerStep#100000", "the kind with most steps first: %s" %
               j["runs"][0]["name"], probs)
        one = runs.get("ProfilerStep#7", {})
        expect(one.get("count") == 1 and [x["dur_ns"] for x in one.get("recent", [])] == [9000],
               "ProfilerStep#7: %s" % one, probs)
    finally:
        rc = s.stop()
    expect(rc == 0 and not H.SANITIZER_RE.search(s.stderr()), "exit %r: %s" % (rc, s.stderr()[-300:]), probs)
    return probs


def check_bare_form(session):
    probs = []
    s = Server([session, "--port", "0", "--quiet"])
    try:
        st, _, _ = req(s.base, "/api/session")
        expect(st == 200, "`tftracer FILE`: %d" % st, probs)
    finally:
        expect(s.stop() == 0, "bare form exit", probs)
    return probs


def main():
    filters = sys.argv[1:]
    rep = H.Reporter("http")
    root = H.data_dir()
    paths = [os.path.join(root, p) for p in SOURCES]
    missing = [p for p in paths if not os.path.exists(p)]
    if missing:
        rep.skip("all", "missing data: %s" % missing)
        return rep.finish()
    tmp = tempfile.mkdtemp(prefix="tft-http-")
    t = T(rep, filters)
    server = None
    try:
        session = os.path.join(tmp, "s.tft")
        H.cli_import(H.tft_bin(), paths, session)
        info = H.cli_info(H.tft_bin(), session)
        cli_stats = H.cli_stats(H.tft_bin(), session)
        try:
            server = Server(["serve", session, "--port", "0", "--quiet"])
        except RuntimeError as e:
            rep.fail("start", e)
            return rep.finish()
        rep.ok("start")
        sess = get_json(server.base, "/api/session")
        t.run("static", lambda: check_static(server))
        t.run("session", lambda: check_session(server, info))
        t.run("viewport", lambda: check_viewport(server, sess))
        t.run("viewport_errors", lambda: check_viewport_errors(server, sess))
        t.run("search", lambda: check_search(server, cli_stats))
        t.run("slice", lambda: check_slice(server, cli_stats, sess))
        t.run("stats", lambda: check_stats(server, cli_stats, sess))
        t.run("downloads", lambda: check_downloads(server, session, tmp))
        t.run("errors", lambda: check_errors(server))
        t.run("limits", lambda: check_limits(server))
        t.run("traversal", lambda: check_traversal(server))
        t.run("no_reflection", lambda: check_no_reflection(server))
        t.run("concurrency", lambda: check_concurrency(server, sess))
        srv, server = server, None
        rc = srv.stop()
        t.run("shutdown", lambda: [] if rc == 0 and not H.SANITIZER_RE.search(srv.stderr())
              else ["SIGTERM: exit %r: %s" % (rc, srv.stderr()[-400:])])
        t.run("auth", lambda: check_auth(session))
        t.run("bad_options", lambda: check_bad_options(session, tmp))
        t.run("tls", lambda: check_tls(session, tmp))
        t.run("serve_traces", lambda: check_serve_traces(paths, tmp, info))
        t.run("bare_form", lambda: check_bare_form(session))
        t.run("runs_file", lambda: check_runs_file(tmp))
    except H.CliError as e:
        rep.fail("setup", e)
    finally:
        if server:
            server.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return rep.finish()


if __name__ == "__main__":
    sys.exit(H.main_guard(main))
