#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# /api/slice lookup, stepping and flow binding, and the counter value carried into a
# viewport, on small sessions built for the cases (docs/http-api.md): a previous slice
# or sample further back than 2^60 ns, slices starting together, a flow end at an
# instant or where two kernels touch (the Kineto ResNet-50 trace). Each answer of the
# server is also asked of the static export's own JavaScript (web/staticapi.js, run by
# node), which must agree.
"""Usage: test_http_slice_nav.py [SUBSTRING...]   one PASS/FAIL/SKIP line per test.

Env: TFT_BIN (the CLI, default build/tftracer), NODE (default: node on PATH)."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "corpus"))
import tft_harness as H  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_http_api import Server, T, expect, req  # noqa: E402

# Sessions built here: name -> Chrome JSON events.
SESSIONS = {
    # a slice and a counter sample at 0, the next ones at 1.5e18 ns (epoch time)
    "epochgap": [
        {"ph": "X", "name": "Z", "pid": 1, "tid": 3, "ts": "0", "dur": 1},
        {"ph": "X", "name": "EPOCH", "pid": 1, "tid": 3, "ts": "1500000000000000", "dur": 1},
        {"ph": "C", "name": "K", "pid": 1, "ts": "0", "args": {"v": 7}},
        {"ph": "C", "name": "K", "pid": 1, "ts": "1500000000000000", "args": {"v": 8}},
    ],
    # A [0, 100 us] > B [50, 60] > C [55, 56]; a flow from tid 2 ends in B (52 us)
    "nest": [
        {"ph": "X", "name": "A", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
        {"ph": "X", "name": "B", "pid": 1, "tid": 1, "ts": 50, "dur": 10},
        {"ph": "X", "name": "C", "pid": 1, "tid": 1, "ts": 55, "dur": 1},
        {"ph": "X", "name": "E", "pid": 1, "tid": 2, "ts": 20, "dur": 10},
        {"ph": "s", "name": "fl", "cat": "c", "id": 7, "pid": 1, "tid": 2, "ts": 25},
        {"ph": "f", "bp": "e", "name": "fl", "cat": "c", "id": 7, "pid": 1, "tid": 1, "ts": 52},
    ],
    # runs of slices starting together at one depth: on tid 1 (depth 0) four zero-duration
    # slices at 100 us and three instants at 150 us between a and b; on tid 2 (depth 1,
    # inside P) a zero-duration slice and four instants at 50 us
    "same": [
        {"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 10, "dur": 5},
    ] + [{"ph": "X", "name": "z%d" % i, "pid": 1, "tid": 1, "ts": 100, "dur": 0} for i in range(4)] + [
        {"ph": "i", "s": "t", "name": "i%d" % i, "pid": 1, "tid": 1, "ts": 150} for i in range(3)] + [
        {"ph": "X", "name": "b", "pid": 1, "tid": 1, "ts": 200, "dur": 5},
        {"ph": "X", "name": "P", "pid": 1, "tid": 2, "ts": 0, "dur": 100},
        {"ph": "X", "name": "Pz", "pid": 1, "tid": 2, "ts": 50, "dur": 0},
    ] + [{"ph": "i", "s": "t", "name": "Pi%d" % i, "pid": 1, "tid": 2, "ts": 50} for i in range(4)],
    # two flows ending in A [0, 100 us], the first one in the file ending later: both the
    # server and the page list a slice's flows by the time of their end there
    "floworder": [
        {"ph": "X", "name": "A", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
        {"ph": "X", "name": "S", "pid": 1, "tid": 2, "ts": 0, "dur": 100},
        {"ph": "s", "name": "f1", "cat": "c", "id": 100, "pid": 1, "tid": 2, "ts": 5},
        {"ph": "f", "bp": "e", "name": "f1", "cat": "c", "id": 100, "pid": 1, "tid": 1, "ts": 60},
        {"ph": "s", "name": "f2", "cat": "c", "id": 103, "pid": 1, "tid": 2, "ts": 6},
        {"ph": "f", "bp": "e", "name": "f2", "cat": "c", "id": 103, "pid": 1, "tid": 1, "ts": 20},
    ],
    # A [0, 100 us] holds an instant I at 50 us, where a flow from tid 2 ends
    "inst": [
        {"ph": "X", "name": "A", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
        {"ph": "i", "s": "t", "name": "I", "pid": 1, "tid": 1, "ts": 50},
        {"ph": "X", "name": "E", "pid": 1, "tid": 2, "ts": 20, "dur": 10},
        {"ph": "s", "name": "fl", "cat": "c", "id": 7, "pid": 1, "tid": 2, "ts": 25},
        {"ph": "f", "bp": "e", "name": "fl", "cat": "c", "id": 7, "pid": 1, "tid": 1, "ts": 50},
    ],
    # children: P holds C, a zero-duration Z and instants; Q, starting where P ends, holds
    # D (which starts at P's end too); an object and nestable async slices on lanes
    "kids": [
        {"ph": "X", "name": "P", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
        {"ph": "X", "name": "C", "pid": 1, "tid": 1, "ts": 10, "dur": 10},
        {"ph": "X", "name": "Z", "pid": 1, "tid": 1, "ts": 30, "dur": 0},
    ] + [{"ph": "i", "s": "t", "name": "I%d" % k, "pid": 1, "tid": 1, "ts": 40} for k in range(3)] + [
        {"ph": "X", "name": "Q", "pid": 1, "tid": 1, "ts": 100, "dur": 100},
        {"ph": "X", "name": "D", "pid": 1, "tid": 1, "ts": 100, "dur": 50},
        {"ph": "N", "name": "obj", "pid": 1, "id": "0x1", "ts": 0},
        {"ph": "O", "name": "obj", "pid": 1, "id": "0x1", "ts": 5, "args": {"snapshot": {"a": 1}}},
        {"ph": "D", "name": "obj", "pid": 1, "id": "0x1", "ts": 10},
        {"ph": "b", "name": "A1", "cat": "c", "pid": 1, "id": 1, "ts": 0},
        {"ph": "b", "name": "A2", "cat": "c", "pid": 1, "id": 1, "ts": 2},
        {"ph": "e", "name": "A2", "cat": "c", "pid": 1, "id": 1, "ts": 4},
        {"ph": "e", "name": "A1", "cat": "c", "pid": 1, "id": 1, "ts": 8},
        {"ph": "b", "name": "B1", "cat": "c", "pid": 1, "id": 2, "ts": 1},
        {"ph": "e", "name": "B1", "cat": "c", "pid": 1, "id": 2, "ts": 9},
    ],
    # a counter sampled every 1 us for 60 ms (value: the microsecond modulo 1000, so 0 at
    # each whole ms), enough for level-of-detail summaries; a slice at 20 s
    "counter": [{"ph": "C", "name": "K", "pid": 1, "ts": i, "args": {"v": i % 1000}} for i in range(60000)] + [
        {"ph": "X", "name": "late", "pid": 1, "tid": 1, "ts": 20000000, "dur": 1}],
    # arguments and a flow id beyond 2^53 (64-bit ids): BIG holds some, SAFE none, DIGITS
    # only a string of 20 digits, FRAC doubles with 17 digits; a flow with a 61-bit id
    # from E (tid 2) ends in BIG
    "bigint": [
        {"ph": "X", "name": "BIG", "pid": 1, "tid": 1, "ts": 0, "dur": 10,
         "args": {"max": 2 ** 63 - 1, "neg": -(2 ** 62) - 3, "edge": 2 ** 53 + 1, "safe": 2 ** 53 - 1,
                  "obj": {"id": 2 ** 60 + 7, "l": [2 ** 54 + 1, 3]}, "f": 1.5}},
        {"ph": "X", "name": "SAFE", "pid": 1, "tid": 1, "ts": 20, "dur": 10, "args": {"n": 2 ** 53 - 1, "s": "x"}},
        {"ph": "X", "name": "DIGITS", "pid": 1, "tid": 1, "ts": 40, "dur": 10, "args": {"s": "12345678901234567890"}},
        {"ph": "X", "name": "FRAC", "pid": 1, "tid": 1, "ts": 60, "dur": 10,
         "args": {"bw": 0.09696969696969697, "e": 1.2345678901234567e+300}},
        {"ph": "X", "name": "E", "pid": 1, "tid": 2, "ts": 0, "dur": 10},
        {"ph": "s", "name": "fl", "cat": "c", "id": 2 ** 60 + 9, "pid": 1, "tid": 2, "ts": 5},
        {"ph": "f", "bp": "e", "name": "fl", "cat": "c", "id": 2 ** 60 + 9, "pid": 1, "tid": 1, "ts": 5},
    ],
    # slices at the two ends of the int64 range
    "extreme": [
        {"ph": "X", "name": "MIN", "pid": 1, "tid": 1, "ts": "-9223372036854775.808", "dur": 1},
        {"ph": "X", "name": "MAXEND", "pid": 1, "tid": 1, "ts": "9223372036854775.000", "dur": "0.807"},
    ],
}

# A real trace: kernels on a stream that touch (one ends where the next starts, where a
# launch flow ends), Python stacks with flows.
KINETO = "kineto/tb_plugin_samples/resnet50_num_workers_0/worker0.pt.trace.json.gz"

NODE_DRIVER = r"""// times are sent as offsets from the exact start_ns and placed on the page's own origin
// (node before 21 reads start_ns rounded: no JSON.parse source access); answers' times
// come back as offsets from that origin
const at = (v) => String(BigInt(v) - BigInt(startNs) + sess.T0);
const rel = (k, v) => (typeof v === 'bigint' ? String(v - sess.T0) : v);
const TIMES = ['ts', 't0', 't1'];
const out = queries.map(([path, q]) => {
	q = { ...q };
	for (const k of TIMES) if (q[k] !== undefined && /^-?\d+$/.test(q[k])) q[k] = at(q[k]);
	try { return { status: 200, body: sess.query(path, q) }; }
	catch (e) { return { status: e.status || 500, body: { error: String(e.message) } }; }
});
process.stdout.write(JSON.stringify(out, rel));
"""


class Session:
    """One imported session: its server, its static page, and queries to both."""

    def __init__(self, name, events, tmp):
        """events: Chrome JSON events, the path of a trace, or a list of paths."""
        self.name, self.tmp = name, tmp
        if isinstance(events, str):
            srcs = [events]
        elif events and all(isinstance(e, str) for e in events):
            srcs = events
        else:
            srcs = [os.path.join(tmp, name + ".json")]
            with open(srcs[0], "w") as fp:
                json.dump({"traceEvents": events}, fp)
        self.tft = os.path.join(tmp, name + ".tft")
        self.html = os.path.join(tmp, name + ".html")
        H.cli_import(H.bin_for(srcs[0]), srcs, self.tft)
        self.server = Server(["serve", self.tft, "--port", "0", "--quiet"])
        self.base = self.server.base
        self.sess = self.get("session")[1]
        self.start_ns = self.sess["start_ns"]
        self.exported = None

    def get(self, path, **q):
        """(status, body) of GET /api/PATH?q from the server."""
        st, _, body = req(self.base, "/api/%s?%s" % (path, urllib.parse.urlencode(q)))
        return st, json.loads(body)

    def export(self):
        """Export the static page once: None, or why it failed."""
        if self.exported is None:
            r = H.run([H.bin_for(self.tft), "export", self.tft, "-f", "html", "-o", self.html], timeout=300)
            self.exported = None if r.rc == 0 else "export -f html: " + r.why()
        return self.exported

    def data(self):
        """The static page's DATA (docs/http-api.md), parsed."""
        err = self.export()
        if err:
            raise RuntimeError(err)
        with open(self.html, encoding="utf-8") as fp:
            page = fp.read()
        m = re.search(r'<script type="application/json" id="tft-data">(.*?)</script>', page, re.S)
        return json.loads(m.group(1))

    def static(self, queries):
        """The static page's answers to [(path, q)...], times as offsets from start_ns
        (absolute times in a body are offsets too), or an error string."""
        node = os.environ.get("NODE") or shutil.which("node")
        if not node:
            return None
        if self.export():
            return self.export()
        qs = [["api/" + p, {k: str(v) for k, v in q.items()}] for p, q in queries]
        return H.run_static_session(node, NODE_DRIVER, self.html, self.start_ns, qs, self.tmp)

    def stop(self):
        return self.server.stop()


def name_of(st_body):
    st, body = st_body
    return body.get("name") if st == 200 else st


# ---- a previous slice or sample more than 2^60 ns back -----------------------------

def check_far_back(ss):
    probs = []
    s = ss["epochgap"]
    # track 0: Z at 0, EPOCH at 1.5e18; track 1: the counter K
    got = name_of(s.get("slice", track=0, ts=1500000000000000000, nav="prev"))
    expect(got == "Z", "epochgap: nav=prev from EPOCH: %r, want Z (1.5e18 ns back)" % got, probs)
    for t0 in (1400000000000000000, 1000000000000000000):
        st, v = s.get("viewport", tracks=1, t0=t0, t1=t0 + 100, width=100)
        tr = v["tracks"][0] if st == 200 else {}
        expect(tr.get("ts") == [0] and tr.get("value") == [7],
               "epochgap: viewport at %d: the counter's carried sample %r %r, want ts [0] value [7]" %
               (t0, tr.get("ts"), tr.get("value")), probs)
    e = ss["extreme"]
    for ts in (9223372036854775000, -9223372036854775807):
        got = name_of(e.get("slice", track=0, ts=ts, nav="prev"))
        expect(got == "MIN", "extreme: nav=prev from %d: %r, want MIN (at INT64_MIN)" % (ts, got), probs)
    a = s.static([("slice", {"track": 0, "ts": 1500000000000000000, "nav": "prev"}),
                  ("viewport", {"tracks": 1, "t0": 1400000000000000000, "t1": 1400000000000000100,
                                "width": 100})])
    if isinstance(a, str):
        probs.append(a)
    elif a is not None:
        expect(a[0]["body"].get("name") == "Z", "static: nav=prev from EPOCH: %r" % a[0], probs)
        expect(a[1]["body"]["tracks"][0]["value"] == [7], "static: carried counter %r" % a[1], probs)
    return probs


# ---- stepping through slices that start together ---------------------------------

# track -> depth -> the names at that depth in order ("same": tid 1 is track 0, tid 2 track 1)
SAME_ORDER = {0: {0: ["a", "z0", "z1", "z2", "z3", "i0", "i1", "i2", "b"]},
              1: {0: ["P"], 1: ["Pz", "Pi0", "Pi1", "Pi2", "Pi3"]}}


def walk(s, track, depth, nav, ts):
    """Step with nav from ts, passing each answer's ts and seq back: [(query, answer)...]."""
    steps, q = [], {"track": track, "ts": ts, "depth": depth, "nav": nav}
    for _ in range(40):
        st, j = s.get("slice", **q)
        steps.append((dict(q), (st, j)))
        if st != 200:
            break
        q = {"track": track, "ts": j["ts"], "depth": depth, "nav": nav, "seq": j.get("seq")}
    return steps


def check_same_start(ss):
    probs = []
    s = ss["same"]
    asked = []  # every (query, server answer), asked of the static page too
    for track, depths in SAME_ORDER.items():
        for depth, names in depths.items():
            fwd = walk(s, track, depth, "next", -1)
            back = walk(s, track, depth, "prev", 10 ** 6)
            asked += fwd + back
            got = [j["name"] for _, (st, j) in fwd if st == 200]
            expect(got == names, "track %d depth %d: nav=next visits %s, want %s" % (track, depth, got, names), probs)
            got = [j["name"] for _, (st, j) in back if st == 200]
            expect(got == names[::-1], "track %d depth %d: nav=prev visits %s, want %s" %
                   (track, depth, got, names[::-1]), probs)
            # every slice by (ts, seq); seq counts within its run of equal starts
            for _, (st, j) in fwd:
                if st != 200:
                    continue
                q = {"track": track, "ts": j["ts"], "depth": depth, "seq": j.get("seq")}
                st2, k = s.get("slice", **q)
                asked.append((q, (st2, k)))
                expect(st2 == 200 and k["name"] == j["name"],
                       "slice %r: %r, want %s" % (q, k.get("name"), j["name"]), probs)
    # a lookup without seq where several start together: the last of them, and its seq
    for track, depth, ts, name, seq in ((0, 0, 100000, "z3", 3), (0, 0, 150000, "i2", 2), (1, 1, 50000, "Pi3", 4)):
        q = {"track": track, "ts": ts, "depth": depth}
        st, j = s.get("slice", **q)
        asked.append((q, (st, j)))
        expect(st == 200 and (j["name"], j.get("seq")) == (name, seq),
               "slice %r: %r, want %s seq %d" % (q, (j.get("name"), j.get("seq")), name, seq), probs)
    # nav without seq from a run's start steps over the whole run (as before seq existed)
    for q, want in ((dict(track=0, ts=100000, nav="next"), "i0"), (dict(track=0, ts=100000, nav="prev"), "a"),
                    (dict(track=0, ts=100000, seq=9, nav="next"), "i0"),
                    (dict(track=0, ts=100000, seq=9, nav="prev"), "z3"),
                    (dict(track=0, ts=100000, seq=4), 404), (dict(track=0, ts=100001, seq=0), 404)):
        st, j = s.get("slice", **q)
        asked.append((q, (st, j)))
        expect((j["name"] if st == 200 else st) == want, "slice %r: %s, want %s" % (q, j.get("name", st), want), probs)
    a = s.static([("slice", q) for q, _ in asked])
    if isinstance(a, str):
        return probs + [a]
    for (q, (st, j)), x in zip(asked, a or []):
        want = (st, j.get("name"), j.get("seq"), j.get("error"))
        got = (x["status"], x["body"].get("name"), x["body"].get("seq"), x["body"].get("error"))
        expect(got == want, "static slice %r: %r, server %r" % (q, got, want), probs)
    return probs


# ---- flow binding: one slice per flow end, the one deepest=1 finds ------------------

def flow_ids(body, key):
    return [f["flow_id"] for f in body.get(key) or []]


def check_end(s, track, ts, fid, which, asked):
    """A flow end (track, ts) of flow fid ('src' or 'dst'): listed by the slice deepest=1
    finds there and by no other slice holding ts. Returns problems."""
    key = "flows_out" if which == "src" else "flows_in"
    ask = lambda **q: asked.append((q, s.get("slice", **q))) or asked[-1][1]  # noqa: E731
    st, d = ask(track=track, ts=ts, deepest=1)
    want = [(d["depth"], d["ts"], d.get("seq"))] if st == 200 and fid in flow_ids(d, key) else []
    if not want:
        return ["flow %d: its %s end (track %d, %d) is not listed by deepest=1 there (%d %r)" %
                (fid, which, track, ts, st, d.get("name", d.get("error")))]
    depth = next(t["max_depth"] for t in s.sess["track_list"] if t["id"] == track)
    holders = []
    for dep in range(depth + 1):
        st, j = ask(track=track, ts=ts, depth=dep)
        for _ in range(8):  # the slices at this depth holding ts: the latest-starting one, back
            if st != 200 or j["ts"] + j["dur"] < ts:
                break
            if fid in flow_ids(j, key):
                holders.append((j["depth"], j["ts"], j.get("seq")))
            st, j = ask(track=track, ts=j["ts"], depth=dep, nav="prev", seq=j.get("seq"))
    if holders != want:
        return ["flow %d: its %s end (track %d, %d) is listed by the slices (depth, ts, seq) %s, want %s" %
                (fid, which, track, ts, holders, want)]
    return []


def same_answers(s, asked, probs, fields=("name", "ts", "depth", "seq", "flows_in", "flows_out")):
    """The static page answers `asked` [(q, (status, body))...] as the server did."""
    a = s.static([("slice", q) for q, _ in asked])
    if a is None or isinstance(a, str):
        if a:
            probs.append(a)
        return
    def off(v):  # the server's times are absolute, the static page's offsets (as text)
        return None if v is None else int(v) - (s.start_ns if isinstance(v, int) else 0)

    def norm(body):
        out = {}
        for k in fields:
            v = body.get(k)
            if k == "ts":
                v = off(v)
            elif k == "ancestors" and v is not None:
                v = [dict(a, ts=off(a["ts"])) for a in v]
            elif k in ("flows_in", "flows_out") and v is not None:
                v = [(f["flow_id"], f["track"], off(f["ts"]) if f["track"] is not None else None, f["unmatched"])
                     for f in v]
            out[k] = v
        return out
    bad = 0
    for (q, (st, j)), x in zip(asked, a):
        want = (st, norm(j) if st == 200 else j.get("error"))
        got = (x["status"], norm(x["body"]) if x["status"] == 200 else x["body"].get("error"))
        if got != want:
            bad += 1
            if bad <= 3 and got[0] == want[0] == 200:
                diff = {k: (got[1][k], want[1][k]) for k in fields if got[1][k] != want[1][k]}
                probs.append("static slice %r: (static, server) %r" % (q, diff))
            elif bad <= 3:
                probs.append("static slice %r: %r, server %r" % (q, got, want))
    if bad > 3:
        probs.append("... %d static answers differ from the server's" % bad)


def check_binding(ss):
    probs = []
    # B, not A, holds the flow ending at 52 us; the instant I holds none, A holds its flow
    for name, track, ts, holder in (("nest", 0, 52000, "B"), ("inst", 0, 50000, "A")):
        s, asked = ss[name], []
        st, d = s.get("slice", track=track, ts=ts, deepest=1)
        asked.append(({"track": track, "ts": ts, "deepest": 1}, (st, d)))
        expect(st == 200 and d["name"] == holder and flow_ids(d, "flows_in") == [7],
               "%s: deepest=1 at %d: %s %r, want %s with flow 7" % (name, ts, d.get("name"), flow_ids(d, "flows_in"),
                                                                   holder), probs)
        probs += check_end(s, track, ts, 7, "dst", asked)
        q = {"track": track, "ts": ts, "depth": 1}
        asked.append((q, s.get("slice", **q)))
        same_answers(s, asked, probs)
    st, d = ss["inst"].get("slice", track=0, ts=50000, depth=1)
    expect(st == 200 and d["kind"] == "instant" and d["flows_in"] == [],
           "inst: the instant I lists flows %r (a flow binds to the slice holding it)" % d.get("flows_in"), probs)
    return probs


def check_binding_kineto(ss):
    """Kernels across the stream and kernels that start where the one before ends (a
    launch flow ending there): each end of their flows is listed by one slice, the one
    deepest=1 finds; the static page answers the same."""
    s = ss.get("kineto")
    if s is None:
        return ("skip", "no %s" % KINETO)
    probs, asked = [], []
    stream = next(t for t in s.sess["track_list"] if t["kind"] == "gpu_stream" and t["slices"])
    # every kernel (the export's data: offsets from start_ns), and those starting where one ends
    d = s.data()
    t = next(x for x in d["tracks"] if x["id"] == stream["id"])
    t0 = d["session"]["start_ns"]
    starts = [(t0 + a, t0 + a + b) for a, b in zip(t["ts"], t["dur"])]
    touching = [k for p, k in zip(starts, starts[1:]) if p[1] == k[0]]
    expect(len(touching) >= 25, "only %d of %d kernels touch the one before" % (len(touching), len(starts)), probs)
    kernels = []
    for ts, _ in starts[:: max(1, len(starts) // 15)] + touching[:: max(1, len(touching) // 25)]:
        st, j = s.get("slice", track=stream["id"], ts=ts, depth=0)
        if st == 200:
            kernels.append(j)
    ends = set()
    for k in kernels:
        for f in k["flows_in"]:
            if f["track"] is None:
                continue
            # the launch: its slice lists where the flow lands on the stream
            probs += check_end(s, f["track"], f["ts"], f["flow_id"], "src", asked)
            st, src = s.get("slice", track=f["track"], ts=f["ts"], deepest=1)
            for g in (src.get("flows_out") or []) if st == 200 else []:
                if g["flow_id"] == f["flow_id"] and g["track"] is not None:
                    ends.add((g["track"], g["ts"], g["flow_id"]))
        if len(probs) > 5:
            break
    expect(len(ends) >= 20, "only %d flow ends on the stream checked" % len(ends), probs)
    for track, ts, fid in sorted(ends):
        probs += check_end(s, track, ts, fid, "dst", asked)
        if len(probs) > 5:
            break
    same_answers(s, asked, probs)
    H.note("binding_kineto: %d kernels (%d touching the one before), %d flows, %d answers compared with the static page"
           % (len(kernels), len(touching), len(ends), len(asked)))
    return probs


# ---- children and the whole answer: the static page answers as the server ------------

def check_children(ss):
    probs = []
    s = ss["kids"]
    asked = []
    tracks = {t["name"] or t["kind"]: t for t in s.sess["track_list"]}
    thread = next(t for t in s.sess["track_list"] if t["kind"] == "thread")
    # (track, ts, depth) -> (name, children, self_ns): C only is P's child (a zero-duration
    # slice, instants and Q's child D starting at P's end are not); lanes are not nesting
    want = [((thread["id"], 0, 0), ("P", 1, 90000)), ((thread["id"], 100000, 0), ("Q", 1, 50000)),
            ((thread["id"], 40000, 1), ("I2", 0, 0))]
    for t in s.sess["track_list"]:
        if t["kind"] in ("async", "object"):
            for d in range(t["max_depth"] + 1):
                st, j = s.get("slice", track=t["id"], ts=t["min_ts_ns"] + 2000, depth=d)
                if st == 200:
                    want.append(((t["id"], t["min_ts_ns"] + 2000, d), (j["name"], 0, j["dur"])))
    expect(len(want) >= 5, "only %d slices on async and object tracks (%s)" % (len(want) - 3, sorted(tracks)), probs)
    for (track, ts, depth), w in want:
        q = {"track": track, "ts": ts, "depth": depth}
        st, j = s.get("slice", **q)
        asked.append((q, (st, j)))
        got = (j.get("name"), j.get("children"), j.get("self_ns")) if st == 200 else st
        expect(got == w, "slice %r: (name, children, self_ns) %r, want %r" % (q, got, w), probs)
    same_answers(s, asked, probs, FIELDS)
    return probs


# Every field of /api/slice, times as offsets from start_ns
FIELDS = ("name", "cat", "kind", "ts", "dur", "depth", "seq", "self_ns", "children", "unclosed", "ancestors",
          "track", "process", "args", "step", "flows_in", "flows_out", "graph")


# ---- the graph nodes a slice joins ---------------------------------------------------

GRAPH_RUN = '''step_stats {
  dev_stats { device: "/job:localhost/replica:0/task:0/device:CPU:0"
    node_stats { node_name: "x" all_start_micros: 1000 all_end_rel_micros: 5 timeline_label: "x = Placeholder()" }
    node_stats { node_name: "lonely" all_start_micros: 1010 all_end_rel_micros: 5 timeline_label: "lonely = NoOp()" } }
  dev_stats { device: "/job:localhost/replica:0/task:0/device:GPU:0/stream:14"
    node_stats { node_name: "MatMul:MatMul" all_start_micros: 1020 all_end_rel_micros: 4
      timeline_label: "volta_sgemm_128x64_nn regs:128 shm:0 grid:4,1,1 block:256,1,1@@MatMul:MatMul" }
    node_stats { node_name: "conv1/Conv2D:Conv2D" all_start_micros: 1030 all_end_rel_micros: 4
      timeline_label: "maxwell_scudnn regs:80 shm:9000 grid:1,2,3 block:128,1,1" } }
}
'''
GRAPH_DEF = '''node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "MatMul" op: "MatMul" input: "x" input: "x" device: "/device:GPU:0" }
node { name: "conv1/Conv2D" op: "Conv2D" input: "x" attr { key: "data_format" value { s: "NHWC" } } }
node { name: "Cast" op: "Cast" input: "x" attr { key: "DstT" value { type: DT_INT32 } } }
node { name: "emb/GatherV2/Cast" op: "Cast" input: "x" attr { key: "DstT" value { type: DT_INT64 } } }
node { name: "Mul" op: "Mul" input: "x" input: "x" }
node { name: "random_normal/mul" op: "Mul" input: "x" input: "MatMul" }
'''
# slices named by op type, as XSpace (long_name, tf_op) and tf.timeline (args.name) name
# them: they join their node, not the node that happens to be called after the type; a
# name with a NUL byte joins nothing
GRAPH_OPS = [
    {"ph": "X", "name": "Cast", "pid": 7, "tid": 1, "ts": 2000, "dur": 5,
     "args": {"long_name": "emb/GatherV2/Cast:Cast"}},
    {"ph": "X", "name": "Cast", "pid": 7, "tid": 1, "ts": 2010, "dur": 5,
     "args": {"tf_op": "emb/GatherV2/Cast:Cast"}},
    {"ph": "X", "name": "Mul", "pid": 7, "tid": 1, "ts": 2020, "dur": 5,
     "args": {"name": "random_normal/mul", "op": "Mul"}},
    {"ph": "X", "name": "Cast", "pid": 7, "tid": 1, "ts": 2030, "dur": 5,
     "args": {"long_name": "not/in/graph:Cast"}},
    {"ph": "X", "name": "MatMul\u0000x", "pid": 7, "tid": 1, "ts": 2040, "dur": 5},
]



def graph_inputs(tmp):
    run, graph = os.path.join(tmp, "run.pbtxt"), os.path.join(tmp, "graph.pbtxt")
    ops = os.path.join(tmp, "ops.json")
    with open(run, "w") as f:
        f.write(GRAPH_RUN)
    with open(graph, "w") as f:
        f.write(GRAPH_DEF)
    with open(ops, "w") as f:
        json.dump({"traceEvents": GRAPH_OPS}, f)
    return [run, graph, ops]


STEP_RUN = '''step_stats { dev_stats { device: "/job:worker/replica:0/task:%d/device:CPU:0"
  node_stats { node_name: "x" all_start_micros: %d all_end_rel_micros: 5 timeline_label: "x = MatMul()" } } }
cost_graph { node { name: "x" device: "/cpu:0" id: 0 compute_cost: %d } }
session_metadata { name: "train" }
'''


def step_inputs(tmp, base_us=0, sub="w"):
    """Two workers' RunMetadata step files, named alike (w0/step_1.pbtxt, w1/step_1.pbtxt ...)
    and all in a session named "train", each with its cost graph: x costs 10 w + k us in
    worker w's step k. base_us: added to every start (epoch times: beyond 2^53 ns)."""
    out = []
    for w in (0, 1):
        os.makedirs(os.path.join(tmp, "%s%d" % (sub, w)), exist_ok=True)
        for k in (1, 2, 3):
            p = os.path.join(tmp, "%s%d" % (sub, w), "step_%d.pbtxt" % k)
            with open(p, "w") as f:
                f.write(STEP_RUN % (w, base_us + 1000 * k + 100 * w, 10 * w + k))
            out.append(p)
    return out


def check_graph_own_step(ss):
    """In a session of several workers' RunMetadata steps, each bringing its graphs with the
    same node names (files named alike, steps all named after the session), a slice lists
    the rows of its own step's graphs first (its step's compute_cost), on the server and
    the static page alike."""
    probs = []
    s = ss["steps"]
    d = s.data()
    asked = []
    for t in d["tracks"]:
        for i in range(len(t.get("ts", []))):
            q = {"track": t["id"], "ts": d["session"]["start_ns"] + t["ts"][i], "depth": 0}
            st, body = s.get("slice", **q)
            asked.append((q, (st, body)))
            rows = body.get("graph") or []
            us = q["ts"] // 1000
            w, k = us % 1000 // 100, us // 1000
            first = rows[0] if rows else {}
            expect(len(rows) == 6 and first.get("compute_cost") == 10 * w + k and
                   first.get("graph", "").endswith("w%d/step_%d.pbtxt:cost_graph" % (w, k)),
                   "worker %d step %d: graph rows %r" % (w, k, [(g.get("graph"), g.get("compute_cost"))
                                                            for g in rows]), probs)
    expect(len(asked) == 6, "steps: %d slices, want 6" % len(asked), probs)
    same_answers(s, asked, probs, FIELDS)
    return probs


def check_search_paging(ss):
    """Paging /api/search one result at a time with each result's cursor (its seq too)
    visits every slice of a run starting together (four z's at 100 us, three instants at
    150 us), in the store's order, on the server and on the static page; a result's seq
    opens that slice."""
    probs = []
    s = ss["same"]
    want = ["z0", "z1", "z2", "z3"]

    def walk(ask, q):
        got, cur = [], {}
        for _ in range(20):
            st, body = ask(dict(q, limit=1, **cur))
            if st != 200 or not body.get("results"):
                break
            r = body["results"][0]
            got.append(r)
            cur = {"after_ts": r["ts"], "after_track": r["track"], "after_depth": r["depth"],
                   "after_seq": r["seq"]}
        return got

    got = walk(lambda q: s.get("search", **q), {"q": "^z", "regex": 1})
    names = [r["name"] for r in got]
    expect(names == want, "server: paging visits %r, want %r" % (names, want), probs)
    for r in got:
        st, body = s.get("slice", track=r["track"], ts=r["ts"], depth=r["depth"], seq=r["seq"])
        expect(st == 200 and body.get("name") == r["name"],
               "server: the result %s (seq %s) opens %r" % (r["name"], r["seq"], body.get("name")), probs)
    inst = [r["name"] for r in walk(lambda q: s.get("search", **q), {"q": "^i", "regex": 1})]
    expect(inst == ["i0", "i1", "i2"], "server: instants paged %r" % inst, probs)
    # the static page, query by query with the cursor of its own answers
    cur, names = {}, []
    for _ in range(6):
        a = s.static([("search", dict({"q": "^z", "regex": 1, "limit": 1}, **cur))])
        if isinstance(a, str):
            probs.append(a)
            break
        if a is None:
            break
        res = a[0]["body"].get("results") or []
        if not res:
            break
        r = res[0]
        names.append(r["name"])
        cur = {"after_ts": s.start_ns + int(r["ts"]), "after_track": r["track"], "after_depth": r["depth"],
               "after_seq": r["seq"]}
    if names:
        expect(names == want, "static: paging visits %r, want %r" % (names, want), probs)
    return probs


def check_graph(ss):
    """A slice of a session with a GraphDef lists the nodes it joins by name: by the
    kernel's node arg (MatMul:MatMul), by its name (x), by the name without its :Op
    suffix (conv1/Conv2D:Conv2D); none for a name the graph lacks; no "graph" key at
    all in a session without graph nodes. The static page answers the same."""
    probs = []
    s = ss["graph"]
    want = {"x": "Placeholder", "MatMul:MatMul": "MatMul", "conv1/Conv2D:Conv2D": "Conv2D", "lonely": None}
    # the op-type named slices: the node names they must join, by their start (us)
    by_ts = {2000000: ["emb/GatherV2/Cast"], 2010000: ["emb/GatherV2/Cast"],
             2020000: ["random_normal/mul"], 2030000: [], 2040000: []}
    d = s.data()
    asked = []
    seen = 0
    for t in d["tracks"]:
        for i in range(len(t.get("ts", []))):
            q = {"track": t["id"], "ts": d["session"]["start_ns"] + t["ts"][i], "depth": 0}
            st, body = s.get("slice", **q)
            asked.append((q, (st, body)))
            name = body.get("name")
            ns = q["ts"]
            if ns in by_ts:
                seen += 1
                got = [g.get("name") for g in body.get("graph", [])]
                expect(got == by_ts[ns], "%s at %d ns (args %r): joins %r, want %r" % (
                    name, ns, body.get("args"), got, by_ts[ns]), probs)
                continue
            if name not in want:
                continue
            ops = [g.get("op") for g in body.get("graph", [])]
            exp = [want[name]] if want[name] else []
            expect(ops == exp, "%s: graph ops %r, want %r" % (name, ops, exp), probs)
            if name == "conv1/Conv2D:Conv2D" and body.get("graph"):
                g = body["graph"][0]
                expect(g.get("attrs", {}).get("data_format") == "NHWC" and g.get("inputs") == ["x"],
                       "conv1/Conv2D: attrs %r inputs %r" % (g.get("attrs"), g.get("inputs")), probs)
    expect(len(asked) >= 9 and seen == 5, "graph: %d slices, %d op-type named; want 9, 5" % (len(asked), seen), probs)
    st, body = ss["nest"].get("slice", track=0, ts=52000)
    expect(st == 200 and "graph" not in body, "a session without a graph: \"graph\" in %r" % body, probs)
    same_answers(s, asked, probs, FIELDS)
    return probs


def check_static_matches(ss):
    """Lookups at each event's start, end and either side of them, deepest=1 there and
    halfway, nav=next|prev with and without seq: the static page's whole answer is the
    server's, on every session here (the Kineto trace: a sample) whose times the page
    holds exactly (offsets from the start under 2^53 ns: they are JavaScript numbers)."""
    probs = []
    n = 0
    for name, s in ss.items():
        if s.sess["end_ns"] - s.sess["start_ns"] >= 2 ** 53 or name in ("bigint", "bigsteps"):
            continue  # (big_ints compares those, exactly where node's JSON.parse can)
        d = s.data()
        asked = []
        for t in d["tracks"]:
            if "dur" not in t:
                continue
            k = len(t["ts"])
            for i in range(0, k, max(1, k // 60)):
                ts = d["session"]["start_ns"] + t["ts"][i]
                end, dep = ts + t["dur"][i], t.get("depth", [0] * k)[i]
                qs = [{"ts": x, "depth": dep} for x in (ts - 1, ts, end, end + 1)]
                qs += [{"ts": x, "deepest": 1} for x in (ts, ts + t["dur"][i] // 2)]
                qs += [{"ts": ts, "depth": dep, "nav": nav} for nav in ("next", "prev")]
                qs += [{"ts": ts, "depth": dep, "nav": nav, "seq": 0} for nav in ("next", "prev")]
                for q in qs:
                    q["track"] = t["id"]
                    asked.append((q, s.get("slice", **q)))
        n += len(asked)
        before = len(probs)
        same_answers(s, asked, probs, FIELDS)
        probs[before:] = ["%s: %s" % (name, p) for p in probs[before:]]
    H.note("static_matches: %d answers compared" % n)
    return probs


# ---- integers beyond 2^53 in the static page ------------------------------------------

# The static page's /api/slice answers as exact JSON text (BigInt as its digits)
BIG_DRIVER = r"""const big = [];
const out = queries.map(([path, q]) => {
	try { return { status: 200, body: sess.query(path, q) }; }
	catch (e) { return { status: e.status || 500, body: { error: String(e.message) } }; }
});
const text = JSON.stringify(out, (k, v) => (typeof v === 'bigint' ? `\u0000big${big.push(String(v)) - 1}\u0000` : v));
let exact = false;
JSON.parse('1', (k, v, c) => { exact = !!(c && c.source); return v; });
process.stdout.write(JSON.stringify({ exact, text: text.replace(/"\\u0000big(\d+)\\u0000"/g, (m, i) => big[+i]) }));
"""


def check_big_ints(ss):
    """Arguments and flow ids beyond 2^53 (an XSpace trace's 64-bit ids): the server
    answers them exactly; the export writes an event's args object holding a run of 16
    digits, and such a flow id, as its JSON text (a string, docs/http-api.md "Static
    HTML export"), the other args as objects; the texts are the server's values exactly.
    The static page's own /api/slice (node) answers the server's args and flow ids,
    exactly where node's JSON.parse gives the source text (node 21+; the browser test
    static-live.test.mjs checks this in Chromium)."""
    probs = []
    s = ss["bigint"]
    d = s.data()
    t0 = d["session"]["start_ns"]
    want = {"BIG": {"max": 2 ** 63 - 1, "neg": -(2 ** 62) - 3, "edge": 2 ** 53 + 1, "safe": 2 ** 53 - 1,
                    "obj": {"id": 2 ** 60 + 7, "l": [2 ** 54 + 1, 3]}, "f": 1.5},
            "SAFE": {"n": 2 ** 53 - 1, "s": "x"}, "DIGITS": {"s": "12345678901234567890"},
            "FRAC": {"bw": 0.09696969696969697, "e": 1.2345678901234567e+300}}
    text = {"BIG": True, "SAFE": False, "DIGITS": True, "FRAC": False}  # written as JSON text
    asked, seen = [], set()
    for t in d["tracks"]:
        for i in range(len(t.get("ts", []))):
            q = {"track": t["id"], "ts": t0 + t["ts"][i], "depth": 0}
            st, body = s.get("slice", **q)
            name = body.get("name")
            if name not in want:
                continue
            seen.add(name)
            asked.append((q, body))
            expect(body.get("args") == want[name], "server: %s args %r, want %r" % (name, body.get("args"), want[name]), probs)
            a = (t.get("args") or [None] * (i + 1))[i]
            expect(isinstance(a, str) == text[name], "DATA: %s args %r: %s" % (
                name, a, "want its JSON text (a string)" if text[name] else "want an object"), probs)
            expect((json.loads(a) if isinstance(a, str) else a) == body.get("args"),
                   "DATA: %s args %r, server %r" % (name, a, body.get("args")), probs)
            if name == "BIG":
                fid = [f.get("flow_id") for f in body.get("flows_in", [])]
                expect(fid == [2 ** 60 + 9], "server: BIG's flows_in ids %r, want [%d]" % (fid, 2 ** 60 + 9), probs)
    expect(seen == set(want), "slices found: %r, want %r" % (sorted(seen), sorted(want)), probs)
    # graph rows (their step_start_ns is absolute): an object never holds an integer beyond
    # 2^53 - 1; a text is JSON
    def unsafe(v):
        if isinstance(v, dict):
            return any(unsafe(x) for x in v.values())
        if isinstance(v, list):
            return any(unsafe(x) for x in v)
        return isinstance(v, int) and not isinstance(v, bool) and abs(v) > 2 ** 53 - 1
    texts = {}
    for name in ("graph", "steps", "bigsteps"):
        for row in ss[name].data().get("graph", []):
            if isinstance(row, str):
                texts[name] = texts.get(name, 0) + 1
                try:
                    json.loads(row)
                except ValueError:
                    probs.append("DATA: %s: graph row text %r is not JSON" % (name, row[:80]))
            else:
                expect(not unsafe(row), "DATA: %s: graph row %r holds an integer beyond 2^53 - 1" % (name, row), probs)
    H.note("big_ints: graph rows as JSON text: %r" % texts)
    # bigsteps (epoch times): every row is linked to its step, and the server's rows of a
    # slice are the texts of DATA, exactly
    b = ss["bigsteps"]
    bd = b.data()
    rows = [json.loads(r) if isinstance(r, str) else r for r in bd.get("graph", [])]
    expect(rows and all(isinstance(r, str) for r in bd["graph"]) and all(r.get("step_start_ns", 0) > 2 ** 53 for r in rows),
           "DATA: bigsteps: graph rows %r, want texts with step_start_ns beyond 2^53" % bd.get("graph"), probs)
    joined = 0
    for t in bd["tracks"]:
        for i in range(len(t.get("ts", []))):
            st, body = b.get("slice", track=t["id"], ts=bd["session"]["start_ns"] + t["ts"][i], depth=0)
            for g in body.get("graph", []) if st == 200 else []:
                joined += 1
                expect(g in rows, "bigsteps: the server's graph row %r is not in DATA exactly" % g, probs)
    expect(joined > 0, "bigsteps: no slice joins a graph row", probs)
    ids = [f.get("id") for f in d.get("flows", [])]
    expect(ids == [str(2 ** 60 + 9)], "DATA: flow ids %r, want [\"%d\"] (its digits, a string)" % (ids, 2 ** 60 + 9), probs)
    node = os.environ.get("NODE") or shutil.which("node")
    if not node or probs:
        return probs
    r = H.run_static_session(node, BIG_DRIVER, s.html, s.start_ns,
                             [["api/slice", {k: str(v) for k, v in q.items()}] for q, _ in asked], s.tmp)
    if isinstance(r, str):
        return probs + [r]
    got = json.loads(r["text"])
    for (q, body), x in zip(asked, got):
        sb = x["body"] if x["status"] == 200 else {}
        pairs = [("args", sb.get("args"), body["args"]),
                 ("flows_in ids", [f.get("flow_id") for f in sb.get("flows_in", [])],
                  [f.get("flow_id") for f in body.get("flows_in", [])])]
        for what, g, w in pairs:
            same = g == w if r["exact"] else json.loads(json.dumps(g), parse_int=float) == json.loads(json.dumps(w), parse_int=float)
            expect(same, "static: %s %s %r, server %r" % (body["name"], what, g, w), probs)
    if not r["exact"]:
        H.note("big_ints: node %s reads JSON without the source text: the static answers compared as doubles" %
               subprocess.run([node, "--version"], capture_output=True, text=True).stdout.strip())
    return probs


# ---- the counter value carried into a zoomed-out viewport --------------------------

def check_counter_carry(ss):
    """A window from 30.0005 ms to 20 s (20 ms a pixel: the store's summaries answer):
    its first item is the sample in force at t0 (0, at 30 ms), not the maximum of the
    summary block that holds it and reaches past t0; that block counts from t0."""
    probs = []
    s = ss["counter"]
    k = next(t for t in s.sess["track_list"] if t["kind"] == "counter")
    t0 = s.start_ns + 30000500
    q = {"tracks": k["id"], "t0": t0, "t1": s.start_ns + 20000000000, "width": 1000}
    st, v = s.get("viewport", **q)
    tr = v["tracks"][0] if st == 200 else {}
    expect(tr.get("lod", 0) > 0, "the window is not answered from summaries (lod %r)" % tr.get("lod"), probs)
    first = [tr.get(c, [None])[0] for c in ("ts", "value", "min", "max")]
    expect(first == [s.start_ns + 30000000, 0, 0, 0],
           "first item (ts, value, min, max) %r, want the sample at 30 ms: [%d, 0, 0, 0]" %
           (first, s.start_ns + 30000000), probs)
    expect(len(tr.get("ts", [])) > 1 and tr["ts"][1] >= t0,
           "second item at %r, want at or after t0 %d" % (tr.get("ts", [None] * 2)[1:2], t0), probs)
    a = s.static([("viewport", dict(q, rel=1))])
    if isinstance(a, str):
        probs.append(a)
    elif a is not None:
        sv = a[0]["body"]["tracks"][0]
        got = [sv[c][0] for c in ("ts", "value", "min", "max")]
        expect(got == [-500, 0, 0, 0], "static: first item %r, want [-500, 0, 0, 0]" % got, probs)
    return probs


# ---- parameters: the static page checks them as the server does ----------------------

# (query, status) of /api/slice on "nest" (track 0: A > B > C; 52 us is inside B)
VALIDATION = [
    ("track=0&ts=52000", 200), ("track=0&ts=52000&deepest=01", 200), ("track=0&ts=52000&depth=01", 200),
    ("track=0&ts=52000&depth=-0", 200), ("track=0&ts=10000&depth=1&deepest=0&nav=next", 200),
    ("track=0&ts=52000&deepest=2", 400), ("track=0&ts=52000&deepest=true", 400),
    ("track=0&ts=52000&deepest=", 400), ("track=0&ts=52000&deepest=-1", 400),
    ("track=0&ts=52000&nav=", 400), ("track=0&ts=52000&nav=NEXT", 400),
    ("track=0&ts=52000&deepest=1&nav=next", 400), ("track=0&ts=52000&deepest=1&nav=", 400),
    ("track=0&ts=52000&nav=prev&depth=4294967295", 400), ("track=0&ts=52000&depth=4294967294&nav=prev", 404),
    ("track=0&ts=52000&depth=", 400), ("track=0&ts=52000&depth=+1", 400), ("track=0&ts=52000&depth=1.0", 400),
    ("track=0&ts=52000&depth=0000000000000000000001", 400), ("track=0&ts=", 400), ("track=0&ts=5e4", 400),
    ("track=0&ts=99999999999999999999", 400), ("track=0&ts=-9223372036854775809", 400),
    ("track=0&ts=9223372036854775807&nav=next", 404), ("track=0&ts=-9223372036854775808&nav=prev", 404),
    ("track=&ts=1", 400), ("track=x&ts=1", 400), ("track=4294967295&ts=1", 400), ("track=999&ts=1", 404),
    ("ts=1", 400), ("track=0", 400), ("", 400), ("track=0&ts=200000", 404), ("track=0&ts=52000&depth=3", 404),
    ("track=0&ts=50000&depth=1&seq=0", 200), ("track=0&ts=50000&depth=1&seq=1", 404),
    ("track=0&ts=50000&depth=1&seq=9223372036854775807&nav=prev", 200), ("track=0&ts=52000&seq=", 400),
    ("track=0&ts=52000&seq=-1", 400), ("track=0&ts=52000&seq=x", 400),
    ("track=0&ts=52000&seq=9223372036854775808", 400),
    ("track=0&ts=52000&deepest=1&seq=0", 400), ("track=0&ts=52000&deepest=0&seq=0&nav=next", 404),
    ("track=0&ts=52000&seq=x&nav=x", 400), ("track=0&ts=52000&deepest=1&seq=0&nav=next", 400),
    ("track=0&ts=60000&depth=1&nav=next", 404), ("track=0&ts=50000&depth=1&nav=prev", 404),
]


def check_validation(ss):
    probs = []
    s = ss["nest"]
    server = []
    for q, want in VALIDATION:
        st, _, body = req(s.base, "/api/slice?" + q)
        j = json.loads(body)
        server.append((st, j))
        expect(st == want, "slice?%s: %d, want %d" % (q, st, want), probs)
    a = s.static([("slice", dict(urllib.parse.parse_qsl(q, keep_blank_values=True))) for q, _ in VALIDATION])
    if a is None:
        return probs or ("skip", "node is not installed")
    if isinstance(a, str):
        return probs + [a]
    for (q, _), (st, j), x in zip(VALIDATION, server, a):
        if st != 200:
            expect((x["status"], x["body"].get("error")) == (st, j.get("error")),
                   "static slice?%s: %d %r, server %d %r" %
                   (q, x["status"], x["body"].get("error"), st, j.get("error")),
                   probs)
        else:
            expect(x["status"] == 200 and x["body"].get("name") == j["name"],
                   "static slice?%s: %d %r, server 200 %r" % (q, x["status"], x["body"].get("name"), j["name"]), probs)
    return probs


def main():
    filters = sys.argv[1:]
    rep = H.Reporter("http_slice_nav")
    tmp = tempfile.mkdtemp(prefix="tft-slice-nav-")
    t = T(rep, filters)
    ss = {}
    try:
        for name, events in SESSIONS.items():
            ss[name] = Session(name, events, tmp)
        ss["graph"] = Session("graph", graph_inputs(tmp), tmp)
        ss["steps"] = Session("steps", step_inputs(tmp), tmp)
        ss["bigsteps"] = Session("bigsteps", step_inputs(tmp, 1700000000000000, "e"), tmp)
        kineto = os.path.join(H.data_dir(), KINETO)
        if os.path.exists(kineto):
            ss["kineto"] = Session("kineto", kineto, tmp)
        t.run("far_back", lambda: check_far_back(ss))
        t.run("validation", lambda: check_validation(ss))
        t.run("same_start", lambda: check_same_start(ss))
        t.run("binding", lambda: check_binding(ss))
        t.run("binding_kineto", lambda: check_binding_kineto(ss))
        t.run("children", lambda: check_children(ss))
        t.run("static_matches", lambda: check_static_matches(ss))
        t.run("big_ints", lambda: check_big_ints(ss))
        t.run("counter_carry", lambda: check_counter_carry(ss))
        t.run("graph", lambda: check_graph(ss))
        t.run("search_paging", lambda: check_search_paging(ss))
        t.run("graph_own_step", lambda: check_graph_own_step(ss))
        for name, s in ss.items():
            rc = s.stop()
            err = s.server.stderr()
            t.run("shutdown/" + name, lambda rc=rc, err=err: [] if rc == 0 and not H.SANITIZER_RE.search(err)
                  else ["SIGTERM: exit %r: %s" % (rc, err[-400:])])
        ss = {}
    except (H.CliError, RuntimeError) as e:
        rep.fail("setup", e)
    finally:
        for s in ss.values():
            s.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return rep.finish()


if __name__ == "__main__":
    sys.exit(H.main_guard(main))
