#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# /api/stats?...&t0=&t1=&clip=1 (docs/http-api.md, /api/stats and item 9): range
# aggregations clipped to the window, on sessions imported from real Kineto traces.
# Exact numbers for windows inside a long ProfilerStep and around one of its
# children; every row of many windows checked against an independent aggregation
# written here in Python from the slices of the session's HTML export, and against
# the static export's own JavaScript (web/staticapi.js, run by node), which the UI
# uses offline; clip=0 and no clip unchanged; 400s for bad clip, t0 and t1.
"""Usage: test_http_stats_clip.py [SUBSTRING...]   one PASS/FAIL/SKIP line per test.

Env: TFT_BIN (the CLI, default build/tftracer), TFT_BIN_BIG (for the larger trace),
TFT_DATA (the trace corpus), NODE."""
import json
import os
import random
import re
import shutil
import sys
import tempfile
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "corpus"))
import tft_harness as H  # noqa: E402
from test_http_api import Server, T, expect, get_json, req  # noqa: E402

# BERT (H100): one ProfilerStep, nesting 43 deep on the main thread, a GPU stream.
SMALL = "tracelens/kineto_h100/gaunernst_bert-small-uncased__1016001.json.gz"
# ResNet-50: six ProfilerStep#N of ~150 ms (the "58 us range inside a 159 ms step" case).
RESNET = "kineto/tb_plugin_samples/resnet50_num_workers_0/worker0.pt.trace.json.gz"
NESTING = ("thread", "device", "gpu_stream", "comm")
KEYS = ("count", "total_ns", "self_ns", "min_ns", "max_ns", "p50_ns", "p99_ns")


def stats(s, **q):
    return get_json(s.base, "/api/stats?" + urllib.parse.urlencode(q))


def rows_by_name(j):
    return {(r["name"], r.get("track_id")): tuple(r[k] for k in KEYS) for r in j["rows"]}


def row(j, name):
    return next((r for r in j["rows"] if r["name"] == name), None)


def diff_rows(got, want, limit=3):
    """'name: got G want W' for rows that differ (tuples of KEYS)."""
    bad = sorted(k for k in set(got) | set(want) if got.get(k) != want.get(k))
    return ["%s: %s vs %s" % (k[0], got.get(k), want.get(k)) for k in bad[:limit]]


# ---- the independent aggregation: the definitions of docs/cmd-stats.md ------------

class Slices:
    """The session's slices per track, from its HTML export (DATA: raw events with
    their depth, times as offsets from session.start_ns), and the statistics of a
    window computed from the written definitions, not from the server's code."""

    def __init__(self, html):
        with open(html, encoding="utf-8") as fp:
            page = fp.read()
        m = re.search(r'<script type="application/json" id="tft-data">(.*?)</script>', page, re.S)
        data = json.loads(m.group(1))
        if data.get("truncated"):
            raise AssertionError("the export left out %d events" % data["truncated"])
        sess = data["session"]
        self.start = sess["start_ns"]
        self.strings = data["strings"]
        info = {t["id"]: t for t in sess["track_list"]}
        self.tracks = []
        for t in data["tracks"]:
            ti = info[t["id"]]
            if ti["kind"] == "counter":
                continue
            n = len(t["ts"])
            ek = t.get("ekind") or [0] * n
            cat = t.get("cat") or [0] * n
            sl = [(self.start + t["ts"][i], t["dur"][i], t["depth"][i], t["name"][i], cat[i])
                  for i in range(n) if ek[i] == 0]
            # depth is nesting on call-stack tracks, a lane on concurrent ones (self = dur)
            nesting = ti["kind"] in NESTING and not ti.get("concurrent")
            self.tracks.append((t["id"], ti["name"], nesting, sl, bool(ti.get("derived"))))

    def aggregate(self, t0, t1, clip, by="name", tracks=None):
        """{(name, track_id or None): KEYS tuple} for slices overlapping [t0, t1]."""
        groups = {}
        for tid, tname, nesting, sl, derived in self.tracks:
            if tracks is not None and tid not in tracks:
                continue
            if tracks is None and derived:
                continue  # repeats other tracks' work: counted once, there
            # direct children: one level deeper, starting inside the parent (start order)
            kids = [[] for _ in sl]
            last = {}
            for i, (ts, dur, depth, _, _) in enumerate(sl):
                p = last.get(depth - 1)
                if nesting and depth > 0 and p is not None and ts < sl[p][0] + sl[p][1]:
                    kids[p].append(i)
                last[depth] = i
            for i, (ts, dur, depth, name, cat) in enumerate(sl):
                end = ts + dur
                if ts > t1 or end < t0:
                    continue
                lo, hi = (max(ts, t0), min(end, t1)) if clip else (ts, end)
                d = hi - lo
                if nesting:
                    # union of the children's parts inside the parent (and the window)
                    parts = sorted((max(sl[c][0], lo), min(sl[c][0] + sl[c][1], hi)) for c in kids[i])
                    covered, reach = 0, lo
                    for a, b in parts:
                        a = max(a, reach)
                        if b > a:
                            covered += b - a
                            reach = b
                    self_t = d - covered
                else:
                    self_t = d
                key = {"name": (self.strings[name], None), "category": (self.strings[cat], None),
                       "track": (tname, tid)}[by]
                g = groups.setdefault(key, [0, 0, []])
                g[0] += d
                g[1] += self_t
                g[2].append(d)
        out = {}
        for key, (total, self_t, durs) in groups.items():
            durs.sort()
            n = len(durs)
            rank = lambda p: durs[max(1, (p * n + 99) // 100) - 1]  # noqa: E731
            out[key] = (n, total, self_t, durs[0], durs[-1], rank(50), rank(99))
        return out


def windows(sess, m, seed, n):
    """Windows over the session: random spans of every scale, ones starting and
    ending exactly on slice boundaries, empty ones, and ones past either end."""
    rnd = random.Random(seed)
    s0, s1 = sess["start_ns"], sess["end_ns"]
    bounds = sorted({x for _, _, _, sl, _ in m.tracks for ts, dur, _, _, _ in sl for x in (ts, ts + dur)})
    out = [(s0, s1), (s0 - 10**9, s1 + 10**9), (s0 - 10**6, s0 - 1), (s1 + 1, s1 + 10**6)]
    for _ in range(n):
        a = rnd.randint(s0 - 1000, s1)
        out.append((a, a + rnd.choice((0, 1, 10**3, 58000, 10**5, 10**6, 10**7, 10**8, 10**9))))
        b = rnd.randrange(len(bounds))
        c = min(len(bounds) - 1, b + rnd.choice((0, 1, 2, 10, 100, 1000)))
        out.append((bounds[b], bounds[c]))
    return out


# ---- the checks -----------------------------------------------------------------------

def find_slice(s, name):
    """(track, ts, dur) of the slice named exactly `name` (the first one)."""
    j = get_json(s.base, "/api/search?" + urllib.parse.urlencode({"q": name, "limit": 100}))
    hits = [r for r in j["results"] if r["name"] == name]
    if not hits:
        raise AssertionError("no slice named %r" % name)
    return hits[0]["track"], hits[0]["ts"], hits[0]["dur"], hits[0]["depth"]


def check_inside_step(s, m):
    """A 58 us window strictly inside the 159 ms ProfilerStep#5: it counts 58 us."""
    probs = []
    track, ts, dur, _ = find_slice(s, "ProfilerStep#5")
    expect(dur == 159174000, "ProfilerStep#5 lasts %d ns, the trace says 159174000" % dur, probs)
    t0, t1 = ts + 1000000, ts + 1000000 + 58000
    c = stats(s, track=track, t0=t0, t1=t1, clip=1)
    r = row(c, "ProfilerStep#5")
    want = m.aggregate(t0, t1, True, tracks={track})
    expect(r is not None and (r["count"], r["total_ns"], r["min_ns"], r["max_ns"], r["p50_ns"], r["p99_ns"])
           == (1, 58000, 58000, 58000, 58000, 58000),
           "clip=1: ProfilerStep#5 %r, want count 1 and 58000 ns everywhere" % (r,), probs)
    step_self = want[("ProfilerStep#5", None)][2]
    expect(r is not None and r["self_ns"] == step_self and step_self < 58000,
           "clip=1: ProfilerStep#5 self %s, want %d (the window less its children's part)"
           % (r and r["self_ns"], step_self), probs)
    # every row: nothing longer than the window; the whole answer is the reference's
    expect(all(x["max_ns"] <= 58000 and x["total_ns"] <= x["count"] * 58000 for x in c["rows"]),
           "clip=1: a row longer than the window", probs)
    probs += ["clip=1 " + d for d in diff_rows(rows_by_name(c), want)]
    # the same window unclipped counts the step whole, and clip=0 is the same answer
    u = stats(s, track=track, t0=t0, t1=t1)
    ru = row(u, "ProfilerStep#5")
    expect(ru is not None and ru["total_ns"] == dur, "no clip: ProfilerStep#5 %r, want %d" % (ru, dur), probs)
    expect(stats(s, track=track, t0=t0, t1=t1, clip=0) == u, "clip=0 differs from no clip", probs)
    probs += ["no clip " + d for d in diff_rows(rows_by_name(u), m.aggregate(t0, t1, False, tracks={track}))]
    return probs


def check_child_window(s, m):
    """Windows on one direct child of a step: its parent keeps no self time there;
    the gap between two children is all the parent's."""
    probs = []
    track, ts, dur, depth = find_slice(s, "ProfilerStep#5")
    sl = next(x for x in m.tracks if x[0] == track)[3]
    kids = [x for x in sl if x[2] == depth + 1 and ts <= x[0] < ts + dur and x[1] > 0]
    expect(len(kids) >= 2, "ProfilerStep#5 has %d children" % len(kids), probs)
    if len(kids) < 2:
        return probs
    name = lambda x: m.strings[x[3]]  # noqa: E731
    c0, c1 = kids[0], kids[1]
    j = stats(s, track=track, t0=c0[0], t1=c0[0] + c0[1], clip=1)
    st, ch = row(j, "ProfilerStep#5"), row(j, name(c0))
    expect(st is not None and st["total_ns"] == c0[1] and st["self_ns"] == 0,
           "window = child %s: step %r, want total %d self 0" % (name(c0), st, c0[1]), probs)
    expect(ch is not None and ch["total_ns"] >= c0[1], "window = child: child row %r" % (ch,), probs)
    probs += diff_rows(rows_by_name(j), m.aggregate(c0[0], c0[0] + c0[1], True, tracks={track}))
    gap0, gap1 = c0[0] + c0[1], c1[0]
    if gap1 > gap0:
        j = stats(s, track=track, t0=gap0, t1=gap1, clip=1)
        st = row(j, "ProfilerStep#5")
        expect(st is not None and st["total_ns"] == gap1 - gap0 and st["self_ns"] == gap1 - gap0,
               "gap between children: step %r, want total = self = %d" % (st, gap1 - gap0), probs)
    # the child and the gap after it: the parent loses only the child's part
    j = stats(s, track=track, t0=c0[0], t1=gap1, clip=1)
    st = row(j, "ProfilerStep#5")
    expect(st is not None and st["total_ns"] == gap1 - c0[0] and st["self_ns"] == gap1 - gap0,
           "child + gap: step %r, want total %d self %d" % (st, gap1 - c0[0], gap1 - gap0), probs)
    return probs


def check_reference(s, sess, m, seed, n):
    """Every row of many windows (by name, category and track; one track, several,
    all) as the independent aggregation computes it, clipped and not."""
    probs = []
    ids = [x[0] for x in m.tracks]
    rnd = random.Random(seed)
    nonempty = 0
    for i, (t0, t1) in enumerate(windows(sess, m, seed, n)):
        by = ("name", "category", "track")[i % 3]
        sel = None if i % 4 == 0 else set(rnd.sample(ids, rnd.randint(1, len(ids))))
        q = {"by": by, "t0": t0, "t1": t1}
        if sel is not None:
            q["track"] = ",".join(str(x) for x in sorted(sel))
        for clip in (1, 0):
            got = stats(s, clip=clip, **q)
            want = m.aggregate(t0, t1, clip == 1, by, sel)
            nonempty += bool(want)
            d = diff_rows(rows_by_name(got), want, 2)
            if d:
                probs.append("%s clip=%d: %s" % (q, clip, "; ".join(d)))
            total = sum(w[1] for w in want.values())
            if got["total_ns"] != total or got["slices"] != sum(w[0] for w in want.values()):
                probs.append("%s clip=%d: total %d slices %d, want %d %d" % (
                    q, clip, got["total_ns"], got["slices"], total, sum(w[0] for w in want.values())))
        if len(probs) >= 4:
            break
    expect(nonempty >= n, "only %d non-empty windows" % nonempty, probs)
    # a window over everything: clipping changes nothing, and it is the session's statistics
    whole = rows_by_name(stats(s))
    for clip in (1, 0):
        w = rows_by_name(stats(s, t0=sess["start_ns"], t1=sess["end_ns"], clip=clip))
        probs += ["whole window clip=%d: %s" % (clip, d) for d in diff_rows(w, whole)]
    expect(rows_by_name(stats(s, clip=1)) == whole, "clip=1 without a window changes the answer", probs)
    return probs


NODE_DRIVER = r"""// node before 21 reads start_ns rounded (no JSON.parse source access): times are sent
// as offsets from the exact start and placed on the page's own origin
const at = (v) => String(BigInt(v) - BigInt(startNs) + sess.T0);
const out = queries.map((q) => {
	q = { ...q };
	if (q.t0 !== undefined) q.t0 = at(q.t0);
	if (q.t1 !== undefined) q.t1 = at(q.t1);
	try { return { status: 200, body: sess.query('api/stats', q) }; }
	catch (e) { return { status: e.status || 500, body: { error: String(e.message) } }; }
});
process.stdout.write(JSON.stringify(out));
"""


def check_static(s, sess, m, html, tmp, seed, n):
    """The offline HTML export's JavaScript gives the server's numbers, clipped and not."""
    node = os.environ.get("NODE") or shutil.which("node")
    if not node:
        return ("skip", "node is not installed")
    probs = []
    ids = [x[0] for x in m.tracks]
    rnd = random.Random(seed)
    queries = []
    for i, (t0, t1) in enumerate(windows(sess, m, seed, n)):
        # clipped and not: unclipped, a parent in the window loses its children wherever they lie
        q = {"by": ("name", "category", "track")[i % 3], "t0": str(t0), "t1": str(t1), "clip": "01"[i % 2]}
        if i % 4:
            q["track"] = ",".join(str(x) for x in sorted(rnd.sample(ids, rnd.randint(1, len(ids)))))
        queries.append(q)
    queries.append({"t0": str(sess["start_ns"] + 1000), "clip": "1"})
    queries.append({"t1": str(sess["end_ns"] - 1000), "clip": "1", "by": "track"})
    answers = H.run_static_session(node, NODE_DRIVER, html, sess["start_ns"], queries, tmp)
    if isinstance(answers, str):
        return [answers]
    for q, a in zip(queries, answers):
        got = stats(s, **q)
        if a["status"] != 200:
            probs.append("static %r: status %d (%s)" % (q, a["status"], a["body"].get("error")))
            continue
        want = a["body"]
        d = diff_rows(rows_by_name(got), rows_by_name(want), 2)
        if d or got["total_ns"] != want["total_ns"] or got["slices"] != want["slices"]:
            probs.append("%r: server total %d slices %d, static %d %d; %s" % (
                q, got["total_ns"], got["slices"], want["total_ns"], want["slices"], "; ".join(d)))
        if len(probs) >= 4:
            break
    return probs


def check_errors(s, sess):
    probs = []
    t0, t1 = sess["start_ns"], sess["end_ns"]
    for q, want in (("clip=2", 400), ("clip=-1", 400), ("clip=x", 400), ("clip=", 400),
                    ("clip=1.0", 400), ("clip=true", 400), ("clip=01x", 400),
                    ("t0=x&clip=1", 400), ("t0=%d&t1=%d&clip=1" % (t1, t0), 400),
                    ("t1=99999999999999999999&clip=1", 400), ("t0=&clip=1", 400),
                    ("track=abc&t0=%d&clip=1" % t0, 400), ("by=foo&clip=1", 400),
                    ("clip=%3Cscript%3E", 400),
                    ("clip=0", 200), ("clip=1", 200), ("t0=%d&t1=%d&clip=1" % (t0, t0), 200),
                    ("t0=-9223372036854775808&t1=9223372036854775807&clip=1", 200)):
        st, hd, body = req(s.base, "/api/stats?" + q)
        if st != want:
            probs.append("stats?%s: %d, want %d" % (q, st, want))
            continue
        if st != 200:
            try:
                err = json.loads(body)["error"]
                expect(isinstance(err, str) and "\n" not in err and "script" not in err,
                       "stats?%s: error %r" % (q, err), probs)
            except (ValueError, KeyError):
                probs.append("stats?%s: body %r is not {\"error\": ...}" % (q, body[:100]))
            expect(hd.get("content-type", "").startswith("application/json"),
                   "stats?%s: content-type %r" % (q, hd.get("content-type")), probs)
    return probs


def serve(binary, session):
    """A Server (which runs $TFT_BIN) running `binary`: the larger trace is served by
    the normal build, like its import."""
    saved = os.environ.get("TFT_BIN")
    os.environ["TFT_BIN"] = binary
    try:
        return Server(["serve", session, "--port", "0", "--quiet"])
    finally:
        if saved is None:
            del os.environ["TFT_BIN"]
        else:
            os.environ["TFT_BIN"] = saved


def run_session(rep, t, name, path, tmp, tests):
    """Import `path`, serve it and export it as HTML, then run `tests`."""
    binary = H.bin_for(path)
    session, html = os.path.join(tmp, name + ".tft"), os.path.join(tmp, name + ".html")
    server = None
    try:
        H.cli_import(binary, [path], session)
        r = H.run([binary, "export", session, "-f", "html", "-o", html], timeout=300)
        if r.rc != 0 or r.crashed:
            rep.fail(name + "/setup", "export -f html: " + r.why())
            return
        m = Slices(html)
        try:
            server = serve(binary, session)
        except RuntimeError as e:
            rep.fail(name + "/start", e)
            return
        sess = get_json(server.base, "/api/session")
        for tname, fn in tests:
            t.run(name + "/" + tname, lambda fn=fn: fn(server, sess, m, html))
        srv, server = server, None
        rc = srv.stop()
        # not a test of its own: a line only when the server misbehaved
        if rc != 0 or H.SANITIZER_RE.search(srv.stderr()):
            rep.fail(name + "/shutdown", "SIGTERM: exit %r: %s" % (rc, srv.stderr()[-400:]))
    except H.CliError as e:
        rep.fail(name + "/setup", e)
    finally:
        if server:
            server.stop()


def main():
    filters = sys.argv[1:]
    rep = H.Reporter("http_stats_clip")
    root = H.data_dir()
    tmp = tempfile.mkdtemp(prefix="tft-stats-clip-")
    t = T(rep, filters)
    try:
        small, resnet = os.path.join(root, SMALL), os.path.join(root, RESNET)
        if not os.path.exists(small):
            rep.skip("bert", "missing data: %s" % small)
        else:
            run_session(rep, t, "bert", small, tmp, (
                ("reference", lambda s, sess, m, html: check_reference(s, sess, m, 11, 40)),
                ("static_export", lambda s, sess, m, html: check_static(s, sess, m, html, tmp, 12, 40)),
                ("errors", lambda s, sess, m, html: check_errors(s, sess)),
            ))
        if not os.path.exists(resnet):
            rep.skip("resnet", "missing data: %s" % resnet)
        else:
            run_session(rep, t, "resnet", resnet, tmp, (
                ("inside_step", lambda s, sess, m, html: check_inside_step(s, m)),
                ("child_window", lambda s, sess, m, html: check_child_window(s, m)),
                ("reference", lambda s, sess, m, html: check_reference(s, sess, m, 21, 12)),
                ("static_export", lambda s, sess, m, html: check_static(s, sess, m, html, tmp, 22, 20)),
            ))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return rep.finish()


if __name__ == "__main__":
    sys.exit(H.main_guard(main))
