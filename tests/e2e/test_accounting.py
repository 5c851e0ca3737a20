#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# Accounting on the real traces: `tftracer stats` per name against an
# independent computation from the trace JSON, with the rules a framework's own
# tools follow (PyTorch profiler / HTA, timeline.py / tfprof):
#   - one execution is counted once: TF's /stream:all and /memcpy repeat the
#     /stream:N kernels and copies; Kineto's gpu_user_annotation ranges and the
#     profiler's own span ("Spans"/"Traces") are not work;
#   - concurrency is not nesting: on a GPU stream (a track with kernels, copies,
#     sets or device syncs, or named "stream N") and on a TF device executor
#     ("<device> Compute") self = duration;
#   - a CPU thread is a call stack: in (ts, longer first) order a slice is the
#     child of the innermost open one it starts in; self = duration minus its
#     direct children's durations clipped to it.
# Times are the importer's: exact decimal microseconds to ns, half away from zero.
"""Usage: test_accounting.py [SUBSTRING...]   (one PASS/FAIL line per trace)"""
import decimal
import gzip
import json
import math
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "corpus"))
import tft_harness as H  # noqa: E402

GPU_CATS = {"kernel", "gpu_memcpy", "gpu_memset", "cuda_sync", "Kernel", "Memcpy", "Memset"}
STREAM_RE = re.compile(r"stream[ #:]*(\d|all)", re.I)
TF_DEVICE_RE = re.compile(r"(^|/)(device:[A-Za-z_]+:\d+|[a-z]+:\d+)$")
TF_GPU_COPY_RE = re.compile(r"^(.*)/(stream:all|memcpy|stream:(\d+)\S*)$")

# Traces of the formats whose accounting rules are the frameworks' (Kineto and
# tf.timeline); catapult's browser traces have no devices to account for.
DIRS = ("hta", "kineto", "tracelens", "ikhlestov-tf-profiling")
NOT_TRACE = ("_et.json", "rocprof/", "memory_timeline", "gpu_metrics_input")


def to_ns(v):
    if isinstance(v, bool) or v is None:
        return 0
    if isinstance(v, str):
        try:
            v = decimal.Decimal(v)
        except decimal.InvalidOperation:
            return 0
    d = decimal.Decimal(v) * 1000
    return int(d.to_integral_value(rounding=decimal.ROUND_HALF_UP))


def norm_id(v):
    if isinstance(v, str) and v.isdigit():
        return int(v)
    return v


def load(path):
    raw = gzip.open(path).read() if path.endswith(".gz") else open(path, "rb").read()
    doc = json.loads(raw, parse_float=decimal.Decimal)
    return doc.get("traceEvents") if isinstance(doc, dict) else doc


def expected(events):
    pname, tname = {}, {}
    threads = {}  # (pid, tid) -> {"x": [(ts, dur, seq, name)], "gpu": bool}
    seq = 0
    for e in events:
        if not isinstance(e, dict):
            continue
        ph = e.get("ph")
        pid, tid = norm_id(e.get("pid")), norm_id(e.get("tid"))
        if ph == "M":
            a = e.get("args") or {}
            if e.get("name") == "process_name":
                pname[pid] = str(a.get("name", ""))
            elif e.get("name") == "thread_name":
                tname[(pid, tid)] = str(a.get("name", ""))
            continue
        if ph != "X":
            continue
        seq += 1
        cat = e.get("cat", "")
        t = threads.setdefault((pid, tid), {"x": [], "gpu": False, "ann": []})
        dur = max(0, to_ns(e.get("dur", 0)))
        ev = (to_ns(e.get("ts", 0)), dur, seq, e.get("name", ""))
        if cat == "gpu_user_annotation":
            t["ann"].append(ev)  # derived: a range over kernels, not work
            continue
        if cat in GPU_CATS:
            t["gpu"] = True
        t["x"].append(ev)
    # TF GPU-tracer mirrors: /stream:all and /memcpy where the device has /stream:N
    tf_streams = set()
    for pid, n in pname.items():
        m = TF_GPU_COPY_RE.match(n[:-8] if n.endswith(" Compute") else n)
        if m and m.group(3) is not None:
            tf_streams.add(m.group(1))
    rows = {}
    for (pid, tid), t in threads.items():
        pn, tn = pname.get(pid, ""), tname.get((pid, tid), "")
        if pid in ("Spans", "Traces"):
            continue  # the profiler's own span
        dev = pn[:-8] if pn.endswith(" Compute") else None
        if dev is not None:
            m = TF_GPU_COPY_RE.match(dev)
            if m and m.group(3) is None and m.group(1) in tf_streams:
                continue  # /stream:all or /memcpy: copies of /stream:N
        concurrent = (t["gpu"] or STREAM_RE.search(tn) or STREAM_RE.search(pn) or "/memcpy" in pn or
                      (dev is not None and TF_DEVICE_RE.search(dev)))
        evs = sorted(t["x"], key=lambda x: (x[0], -x[1], x[2]))
        selfs = [d for (_, d, _, _) in evs]
        if not concurrent:
            stack = []  # indices of open slices
            for i, (ts, dur, _, _) in enumerate(evs):
                while stack and evs[stack[-1]][0] + evs[stack[-1]][1] <= ts:
                    stack.pop()
                if stack:
                    p = stack[-1]
                    pend = evs[p][0] + evs[p][1]
                    selfs[p] -= min(ts + dur, pend) - ts
                stack.append(i)
        for (ts, dur, _, name), sf in zip(evs, selfs):
            r = rows.setdefault(name, [0, 0, 0, []])
            r[0] += 1
            r[1] += dur
            r[2] += sf
            r[3].append(dur)
    out = {}
    for name, (n, tot, sf, durs) in rows.items():
        durs.sort()
        rank = lambda p: durs[max(1, math.ceil(p / 100 * n)) - 1]  # noqa: E731
        out[name] = {"count": n, "total_ns": tot, "self_ns": sf, "min_ns": durs[0], "max_ns": durs[-1],
                     "p50_ns": rank(50), "p99_ns": rank(99)}
    return out


def check(path, tmp):
    events = load(path)
    if not isinstance(events, list):
        return None
    want = expected(events)
    binary = H.bin_for(path)
    sess = os.path.join(tmp, "a.tft")
    if os.path.exists(sess):
        os.unlink(sess)
    H.cli_import(binary, path, sess)
    js = H.cli_json(binary, ["stats", sess, "--json", "--top", "0"])
    got = {r["name"]: r for r in js["rows"]}
    probs = []
    # a large session is answered from its stored statistics (item 4), not by a scan
    if js.get("slices", 0) > 262144 and js.get("stored_tracks", 0) != js.get("tracks"):
        probs.append("%d slices: %s of %s tracks from stored statistics, want all" %
                     (js.get("slices"), js.get("stored_tracks"), js.get("tracks")))
    for name in sorted(set(want) | set(got), key=str):
        w, g = want.get(name), got.get(name)
        if w is None or g is None:
            probs.append("%r: %s" % (name, "not expected" if w is None else "missing"))
            continue
        exact = g.get("exact", True)
        for k, v in w.items():
            if k in ("p50_ns", "p99_ns") and not exact:
                err = g.get("percentile_error", 0.01)
                if abs(g[k] - v) > v * err + 1:
                    probs.append("%r %s %s, want %s within %.2f%%" % (name, k, g[k], v, 100 * err))
            elif g.get(k) != v:
                probs.append("%r %s %s, want %s" % (name, k, g.get(k), v))
        if len(probs) > 8:
            break
    return probs


def main(argv):
    rep = H.Reporter("accounting")
    root = H.data_dir()
    files = []
    for d in DIRS:
        for dp, _, fs in os.walk(os.path.join(root, d)):
            for f in fs:
                p = os.path.join(dp, f)
                rel = os.path.relpath(p, root)
                if f.endswith((".json", ".json.gz")) and not any(s in rel for s in NOT_TRACE):
                    files.append(rel)
    files.sort()
    if argv:
        files = [f for f in files if any(a in f for a in argv)]
    if not files:
        rep.fail("files", "no Kineto or tf.timeline trace found under %s" % root)
    with tempfile.TemporaryDirectory(prefix="tft-acct-") as tmp:
        for rel in files:
            try:
                probs = check(os.path.join(root, rel), tmp)
            except H.CliError as e:
                probs = [str(e)]
            if probs is None:
                rep.fail(rel, "not a trace event list")
            else:
                rep.check(rel, probs)
    return rep.finish()


if __name__ == "__main__":
    sys.exit(H.main_guard(lambda: main(sys.argv[1:])))
