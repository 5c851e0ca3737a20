#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# `tftracer stats --by kernel|api|op` (the seed's textual statistics of device work)
# on real Kineto GPU traces, against an independent count from the trace JSON:
#   kernel: every slice on a GPU stream (a track with kernel / gpu_memcpy / gpu_memset /
#           cuda_sync slices), by name, but the gpu_user_annotation ranges (derived);
#   api:    slices of category cuda_runtime / cuda_driver / Runtime, by name;
#   op:     those kernels by the CPU op whose External id they carry, or by the innermost
#           op (a non-API slice) open around the launch (API call) of that id;
#   bytes:  the slices' "bytes" args summed; GB/s = bytes / total ns.
"""Usage: test_stats_device.py [SUBSTRING...]"""
import decimal
import gzip
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "corpus"))
import tft_harness as H  # noqa: E402

TRACES = (
    "hta/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz",
    "hta/with_gpu_user_annotation/step_based_trace_2543932.json.gz",
    "tracelens/kineto_h100/gaunernst_bert-small-uncased__1016001.json.gz",
    "kineto/tb_plugin_samples/resnet50_num_workers_0/worker0.pt.trace.json.gz",
)
GPU_CATS = {"kernel", "gpu_memcpy", "gpu_memset", "cuda_sync", "Kernel", "Memcpy", "Memset"}
API_CATS = {"cuda_runtime", "cuda_driver", "Runtime"}


def ns(v):
    d = decimal.Decimal(str(v)) * 1000
    return int(d.to_integral_value(rounding=decimal.ROUND_HALF_UP))


def norm(v):
    return int(v) if isinstance(v, str) and v.isdigit() else v


def expected(path):
    doc = json.loads(gzip.open(path).read(), parse_float=decimal.Decimal)
    ev = [e for e in doc["traceEvents"] if isinstance(e, dict) and e.get("ph") == "X"]
    gpu = {(norm(e["pid"]), norm(e["tid"])) for e in ev if e.get("cat") in GPU_CATS}
    kernels = [e for e in ev if (norm(e["pid"]), norm(e["tid"])) in gpu and e.get("cat") != "gpu_user_annotation"]
    # External id -> op: the op itself, or the innermost non-API slice around an API call
    ext = {}
    by_thread = {}
    for e in ev:
        k = (norm(e["pid"]), norm(e["tid"]))
        if k not in gpu:
            by_thread.setdefault(k, []).append(e)
    for k, es in by_thread.items():
        es.sort(key=lambda e: (ns(e["ts"]), -ns(e.get("dur", 0))))
        stack = []
        for e in es:
            ts, end = ns(e["ts"]), ns(e["ts"]) + max(0, ns(e.get("dur", 0)))
            while stack and stack[-1][0] <= ts:
                stack.pop()
            api = e.get("cat") in API_CATS
            xid = (e.get("args") or {}).get("External id")
            if isinstance(xid, int) and not isinstance(xid, bool):
                if not api:
                    ext.setdefault(xid, e["name"])
                else:
                    op = next((n for (_, n, a) in reversed(stack) if not a), None)
                    if op is not None:
                        ext.setdefault(xid, op)
            stack.append((end, e["name"], api))

    def agg(items, key):
        out = {}
        for e in items:
            k = key(e)
            r = out.setdefault(k, [0, 0, 0])
            r[0] += 1
            r[1] += max(0, ns(e.get("dur", 0)))
            b = (e.get("args") or {}).get("bytes")
            r[2] += int(b) if isinstance(b, (int, decimal.Decimal)) and b > 0 else 0
        return out

    return {
        "kernel": agg(kernels, lambda e: e["name"]),
        "api": agg([e for e in ev if e.get("cat") in API_CATS], lambda e: e["name"]),
        "op": agg(kernels, lambda e: ext.get((e.get("args") or {}).get("External id"), "")),
    }


def check(path, tmp):
    want = expected(path)
    b = H.bin_for(path)
    sess = os.path.join(tmp, "d.tft")
    if os.path.exists(sess):
        os.unlink(sess)
    H.cli_import(b, path, sess)
    probs = []
    for by in ("kernel", "api", "op"):
        js = H.cli_json(b, ["stats", sess, "--by", by, "--json", "--top", "0"])
        got = {r["name"]: (r["count"], r["total_ns"], r["bytes"]) for r in js["rows"]}
        w = {k: tuple(v) for k, v in want[by].items()}
        if not w:
            probs.append("--by %s: the trace has none (a test input without them)" % by)
        for k in sorted(set(got) | set(w), key=str):
            if got.get(k) != w.get(k):
                probs.append("--by %s %r: (count, total, bytes) %s, want %s" % (by, k, got.get(k), w.get(k)))
        for r in js["rows"]:
            bw = r["bytes"] / r["total_ns"] if r["bytes"] and r["total_ns"] else 0.0
            if abs(r["bandwidth_gbps"] - bw) > 1e-9 * max(1.0, bw):
                probs.append("--by %s %r: bandwidth %s, want %s" % (by, r["name"], r["bandwidth_gbps"], bw))
        csv = H.run([b, "stats", sess, "--by", by, "--csv"])
        if csv.rc or not csv.out.startswith("name,count,total_ns,self_ns,mean_ns,min_ns,max_ns,p50_ns,p99_ns,"
                                             "share,bytes,bandwidth_gbps\n"):
            probs.append("--by %s --csv: header %r" % (by, csv.out[:120]))
        if len(probs) > 6:
            break
    return probs


def main(argv):
    rep = H.Reporter("stats_device")
    root = H.data_dir()
    with tempfile.TemporaryDirectory(prefix="tft-sdev-") as tmp:
        for rel in TRACES:
            if argv and not any(a in rel for a in argv):
                continue
            path = os.path.join(root, rel)
            if not os.path.exists(path):
                rep.fail(rel, "missing input %s" % path)
                continue
            try:
                rep.check(rel, check(path, tmp))
            except H.CliError as e:
                rep.fail(rel, str(e))
        # bad usage: one line, exit 2
        r = H.run([H.tft_bin(), "stats", "/nonexistent.tft", "--by", "kernels"])
        rep.check("bad --by", [] if r.rc == 2 and "--by expects" in r.err and r.err.count("\n") == 1
                  else ["exit %d, stderr %r" % (r.rc, r.err)])
    return rep.finish()


if __name__ == "__main__":
    sys.exit(H.main_guard(lambda: main(sys.argv[1:])))
