#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# Two tftracer binaries answer the query endpoints (/api/viewport, /api/slice,
# /api/search, /api/stats) byte for byte alike: each serves the same sessions
# (imported once from real traces by the base binary), both get the same few
# hundred requests (valid ones at many windows, widths, tracks, slices, search
# terms and stats options, and invalid ones: bad integers, unknown tracks, out of
# range widths, missing or excluded parameters), and status, headers (Date
# aside) and body are compared. A tool for moves of the query code (the query
# layer, src/query/): it must change no answer.
"""Usage: http_query_same.py BASE_BIN [NEW_BIN]   (NEW_BIN: TFT_BIN or build/tftracer)

Prints the request count and every difference; exit status 1 on any difference.
Env: TFT_DATA (the trace corpus, default ../shared/data), TFT_SAME_DIR (scratch)."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_http_api as A  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
DATA = os.environ.get("TFT_DATA", os.path.join(ROOT, "..", "shared", "data"))
SOURCES = [
    "kineto/tb_plugin_samples/resnet50_num_workers_0/worker0.pt.trace.json.gz",
    "tracelens/kineto_h100/gaunernst_bert-small-uncased__1016001.json.gz",
    "tf-profiler-demo/GPU-multi-worker/34.83.195.179_6003.xplane.pb",
    "ikhlestov-tf-profiling/GPU/timeline_03_merged_5_runs.json",
    "tensorboard/run_metadata_run_step99_tag_train.pbtxt",
    "tracelens/jax_mi300/jax08_attention/tw003.xplane.pb",
    # a session with graph nodes: /api/slice lists the nodes a slice joins
    ("ikhlestov-tf-profiling/GPU/timeline_01.json", "tensorboard/graphdef/tf_graph_demo_graph.pbtxt"),
]


def serve(binary, session):
    os.environ["TFT_BIN"] = binary
    return A.Server(["serve", session, "--port", "0", "--quiet"])


def get(srv, path):
    st, hdrs, body = A.req(srv.base, path, headers={"Cookie": "tft_token=%s" % srv.token}
                           if srv.token else None)
    hdrs = {k: v for k, v in hdrs.items() if k not in ("date",)}
    return st, hdrs, body


def q(path, **kw):
    return path + ("?" + urllib.parse.urlencode(kw) if kw else "")


def requests_for(srv):
    """The request list, built from what the (base) server says about its session."""
    _, _, body = get(srv, "/api/session")
    sess = json.loads(body)
    t0, t1 = sess["start_ns"], sess["end_ns"]
    span = max(t1 - t0, 1)
    tracks = sess["track_list"]
    ids = [t["id"] for t in tracks]
    slice_tracks = [t for t in tracks if t["kind"] != "counter" and t["slices"]]
    counters = [t for t in tracks if t["kind"] == "counter"]
    out = []
    # viewport: windows from the whole span down to 1 us, widths, track lists, rel
    for k in range(0, 12, 1):
        w = span >> (k * 2)
        for frac in (0, 3, 7):
            a = t0 + (span - w) * frac // 10 if w < span else t0
            for width in (1, 97, 1500):
                out.append(q("/api/viewport", t0=a, t1=a + max(w, 1), width=width))
            out.append(q("/api/viewport", t0=a, t1=a + max(w, 1), width=800, rel=1))
    for tr in (slice_tracks[:6] + counters[:3]):
        lo = tr["min_ts_ns"] if tr["min_ts_ns"] is not None else t0
        hi = tr["max_ts_ns"] if tr["max_ts_ns"] is not None else t1
        out.append(q("/api/viewport", tracks=tr["id"], t0=lo, t1=hi + 1, width=1200))
        out.append(q("/api/viewport", tracks=tr["id"], t0=(lo + hi) // 2, t1=(lo + hi) // 2 + 5000, width=300, rel=1))
        out.append(q("/api/viewport", tracks="%d,%d" % (tr["id"], tr["id"]), t0=lo - 10**9, t1=lo))
    out.append(q("/api/viewport", tracks=",".join(str(i) for i in reversed(ids))))
    out.append(q("/api/viewport", tracks=""))
    out.append("/api/viewport")
    out.append(q("/api/viewport", t0=t0, t1=t0))
    out.append(q("/api/viewport", t0=-2**63, t1=2**63 - 1, width=10000))
    out.append(q("/api/viewport", t0=2**63 - 1, t1=2**63 - 1))
    out.append(q("/api/viewport", t0=-2**63, t1=-2**63))
    # viewport refusals
    for bad in ({"width": 0}, {"width": 10001}, {"width": "x"}, {"width": ""}, {"width": "1e3"},
                {"rel": 2}, {"rel": "yes"}, {"t0": "abc"}, {"t1": "1.5"}, {"t0": 2**63},
                {"t0": t1, "t1": t0 - 1}, {"tracks": len(ids)}, {"tracks": "0,x"},
                {"tracks": ",".join(["0"] * 4097)}, {"tracks": "0,,1"}, {"tracks": "-1"},
                {"tracks": "%d,99999999" % ids[0]}, {"width": 0, "rel": 5}, {"rel": 5, "t0": "x"},
                {"t0": "x", "tracks": "zz"}, {"tracks": "99999999", "t1": "y"}):
        out.append(q("/api/viewport", **bad))
    # search: terms from names seen, numbers, regexes, fields, paging, no hits
    names = set()
    for tr in slice_tracks[:8]:
        lo, hi = tr["min_ts_ns"], tr["max_ts_ns"]
        _, _, b = get(srv, q("/api/viewport", tracks=tr["id"], t0=lo, t1=hi + 1, width=200))
        vp = json.loads(b)
        names.update(v for v in vp["strings"].values() if v)
    terms = sorted(names)[:10] + ["conv", "Conv2D", "MEMCPY", "1", "0.5", "-", "e", "zzz_no_such_op", " "]
    first = None
    for term in terms:
        for extra in ({}, {"in": "name,cat,args,track"}, {"in": "args", "limit": 3}, {"in": "track"},
                      {"exact": 1}, {"limit": 1}, {"in": "cat", "limit": 50}):
            out.append(q("/api/search", q=term, **extra))
    for rx in ("^aten::", "conv.*bwd", "[0-9]+", "a|b", "(", "\\1", "x{1,3}"):
        out.append(q("/api/search", q=rx, regex=1))
        out.append(q("/api/search", q=rx, regex=1, **{"in": "args"}))
    _, _, b = get(srv, q("/api/search", q=terms[0], limit=5))
    res = json.loads(b).get("results", [])
    if res:
        first = res[0]
        h = res[-1]
        out.append(q("/api/search", q=terms[0], limit=5, after_ts=h["ts"], after_track=h["track"],
                     after_depth=h["depth"], after_seq=h["seq"]))
        out.append(q("/api/search", q=terms[0], limit=5, after_ts=h["ts"]))
    for bad in ({}, {"q": ""}, {"q": "x" * 257}, {"q": "x" * 300, "exact": 1}, {"q": "x" * 4097, "exact": 1},
                {"q": "a", "exact": 2}, {"q": "a", "regex": "x"}, {"q": "a", "limit": 0},
                {"q": "a", "limit": 10001}, {"q": "a", "after_ts": "x"}, {"q": "a", "after_track": -1},
                {"q": "a", "after_seq": 2**32 - 1}, {"q": "a", "in": "names"}, {"q": "a", "in": ""},
                {"q": "a", "in": "name,"}, {"q": "a", "exact": 1, "regex": 1}, {"q": "a\0b"},
                {"q": "a", "exact": 3, "in": "zz"}):
        out.append(q("/api/search", **bad))
    # slice: at search hits, by time on tracks, deepest, nav, seq
    _, _, b = get(srv, q("/api/search", q="e", limit=60, **{"in": "name,cat"}))
    hits = json.loads(b).get("results", [])
    for h in hits[::3]:
        out.append(q("/api/slice", track=h["track"], ts=h["ts"], depth=h["depth"]))
        out.append(q("/api/slice", track=h["track"], ts=h["ts"] + max(h["dur"] // 2, 0), deepest=1))
        out.append(q("/api/slice", track=h["track"], ts=h["ts"], depth=h["depth"], seq=h["seq"]))
        out.append(q("/api/slice", track=h["track"], ts=h["ts"], depth=h["depth"], nav="next"))
        out.append(q("/api/slice", track=h["track"], ts=h["ts"], depth=h["depth"], nav="prev", seq=h["seq"]))
    for tr in slice_tracks[:10]:
        lo, hi = tr["min_ts_ns"], tr["max_ts_ns"]
        for frac in (0, 1, 5, 9):
            ts = lo + (hi - lo) * frac // 10
            out.append(q("/api/slice", track=tr["id"], ts=ts, deepest=1))
            out.append(q("/api/slice", track=tr["id"], ts=ts, depth=0, nav="next"))
            out.append(q("/api/slice", track=tr["id"], ts=ts, depth=1, nav="prev"))
        out.append(q("/api/slice", track=tr["id"], ts=lo - 1, depth=0, nav="prev"))
        out.append(q("/api/slice", track=tr["id"], ts=hi + 1, depth=0, nav="next"))
        out.append(q("/api/slice", track=tr["id"], ts=lo, depth=tr["max_depth"] + 5, nav="next"))
    st = slice_tracks[0]["id"] if slice_tracks else 0
    for bad in ({}, {"track": st}, {"ts": 0}, {"track": "x", "ts": 0}, {"track": st, "ts": "y"},
                {"track": st, "ts": 0, "depth": -1}, {"track": -1, "ts": 0}, {"track": 2**32, "ts": 0},
                {"track": st, "ts": 0, "deepest": 2}, {"track": st, "ts": 0, "seq": -1},
                {"track": st, "ts": 0, "nav": "up"}, {"track": st, "ts": 0, "deepest": 1, "nav": "next"},
                {"track": st, "ts": 0, "deepest": 1, "seq": 0}, {"track": len(ids), "ts": 0},
                {"track": 99999, "ts": 0, "nav": "zz"}, {"track": st, "ts": t0 - 10**12, "depth": 0},
                {"track": st, "ts": 2**63 - 1, "depth": 0, "nav": "next"},
                {"track": st, "ts": -2**63, "depth": 0, "nav": "prev"}):
        out.append(q("/api/slice", **bad))
    # stats
    for by in (None, "name", "category", "track"):
        base = {"by": by} if by else {}
        out.append(q("/api/stats", **base))
        out.append(q("/api/stats", top=5, **base))
        out.append(q("/api/stats", t0=t0 + span // 4, t1=t0 + span // 2, **base))
        out.append(q("/api/stats", t0=t0 + span // 4, t1=t0 + span // 2, clip=1, top=3, **base))
        if slice_tracks:
            out.append(q("/api/stats", track=slice_tracks[0]["id"], **base))
            out.append(q("/api/stats", track=",".join(str(t["id"]) for t in slice_tracks[:5]),
                         t0=t0, t1=t0 + span // 3, clip=1, **base))
    for bad in ({"by": "op"}, {"by": ""}, {"t0": "x"}, {"t0": 5, "t1": 4}, {"clip": 2},
                {"top": -1}, {"top": 1000001}, {"track": len(ids)}, {"track": "1,a"},
                {"track": ",".join(["0"] * 4097)}, {"by": "zz", "top": "x"}, {"clip": 3, "top": -1},
                {"track": "99999", "top": "zz"}):
        out.append(q("/api/stats", **bad))
    return out


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    base_bin = os.path.abspath(sys.argv[1])
    new_bin = os.path.abspath(sys.argv[2] if len(sys.argv) > 2 else
                              os.environ.get("TFT_BIN", os.path.join(ROOT, "build", "tftracer")))
    work = os.environ.get("TFT_SAME_DIR") or tempfile.mkdtemp(prefix="tft-same-")
    total, diffs = 0, 0
    for src in SOURCES:
        paths = [os.path.join(DATA, p) for p in ((src,) if isinstance(src, str) else src)]
        src = "+".join(os.path.basename(p) for p in paths)
        if not all(os.path.exists(p) for p in paths):
            print("SKIP %s: not in the corpus" % src)
            continue
        tft = os.path.join(work, src + ".tft")
        subprocess.run([base_bin, "import"] + paths + ["-o", tft, "--quiet"], check=True)
        copies = []
        for tag in ("base", "new"):
            c = tft + "." + tag + ".tft"
            shutil.copyfile(tft, c)
            copies.append(c)
        sb, sn = serve(base_bin, copies[0]), serve(new_bin, copies[1])
        try:
            reqs = requests_for(sb)
            n, statuses = 0, {}
            for path_q in reqs:
                a, b = get(sb, path_q), get(sn, path_q)
                n += 1
                key = "%s %d" % (path_q.split("?")[0], a[0])
                statuses[key] = statuses.get(key, 0) + 1
                if a != b:
                    diffs += 1
                    if diffs <= 20:
                        print("DIFF %s %s\n  base %s %r\n  new  %s %r" % (src, path_q[:200], a[0],
                              a[2][:300], b[0], b[2][:300]))
            print("%s: %d requests (%s)" % (src, n, ", ".join("%s: %d" % kv for kv in sorted(statuses.items()))))
            total += n
        finally:
            sb.stop()
            sn.stop()
    print("%d requests, %d differ" % (total, diffs))
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
