#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Compare what torch.profiler saw with what the preload library's CUPTI
interceptor recorded of the same program (tests/gpu/verify_cuda.sh).

  check_cuda.py TORCH_TRACE.json SESSION.tft TFTRACER_BIN

Prints PASS/FAIL lines and the numbers; exit 1 if any FAIL.
"""
import collections
import json
import sqlite3
import subprocess
import sys

LOOP_OPS = {"step", "forward", "backward", "optimizer"}
nfail = 0


def say(kind, what, detail=""):
    global nfail
    if kind == "FAIL":
        nfail += 1
    print("%s %s%s" % (kind, what, (": " + detail) if detail else ""), flush=True)


def main():
    torch_trace, sess, cli = sys.argv[1:4]
    t = json.load(open(torch_trace))
    tev = t["traceEvents"] if isinstance(t, dict) else t
    tk = collections.Counter(e["name"] for e in tev if e.get("cat") == "kernel")
    tm = sum(1 for e in tev if e.get("cat") == "gpu_memcpy")
    ts = sum(1 for e in tev if e.get("cat") == "gpu_memset")
    print("torch.profiler: %d kernels (%d distinct), %d memcpys, %d memsets" % (sum(tk.values()), len(tk), tm, ts))

    out = sess + ".json"
    subprocess.run([cli, "export", sess, "-f", "chrome", "-q", "-o", out], check=True)
    d = json.load(open(out))
    ev = d["traceEvents"] if isinstance(d, dict) else d
    db = sqlite3.connect("file:%s?mode=ro" % sess, uri=True)
    meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e.get("ph") == "M" and e.get("name") == "thread_name"}
    slices = [e for e in ev if e.get("ph") == "X"]
    kern = [e for e in slices if e.get("cat") == "cuda.kernel"]
    loop = [e for e in kern if (e.get("args") or {}).get("op") in LOOP_OPS]
    mem = [e for e in slices if e.get("cat") == "cuda.memory" and (e.get("args") or {}).get("op") in LOOP_OPS]
    api = collections.Counter(e["name"] for e in slices if e.get("cat") in ("cuda.runtime", "cuda.driver"))
    nvtx = collections.Counter(e["name"] for e in slices if e["name"] in LOOP_OPS | {"train"})
    streams = sorted(set(n for k, n in names.items() if n.startswith("CUDA ")))
    print("tftracer: %d kernels (%d in the loop, by op %r), %d memory commands in the loop" % (
        len(kern), len(loop), dict(collections.Counter(e["args"]["op"] for e in loop)), len(mem)))
    print("tftracer: stream tracks %r" % streams)
    print("tftracer: API calls %d (top: %r)" % (sum(api.values()), api.most_common(6)))
    print("tftracer: NVTX ranges as zones %r" % dict(nvtx))
    print("tftracer: meta %r" % {k: v for k, v in meta.items() if k.startswith("cuda") or k in ("dropped", "unmatched_flows", "clamped")})

    lk = collections.Counter(e["name"] for e in loop)
    if sum(lk.values()) == sum(tk.values()) and lk == tk:
        say("PASS", "kernel counts per name equal torch.profiler's (%d)" % sum(tk.values()))
    elif sum(lk.values()) == sum(tk.values()):
        say("PASS", "kernel count equals torch.profiler's (%d); names differ (mangled vs demangled?)" % sum(tk.values()),
            "only in torch: %r" % list((tk - lk).items())[:3])
    else:
        say("FAIL", "kernel count", "tftracer %d in the loop, torch.profiler %d; only in torch %r, only here %r" % (
            sum(lk.values()), sum(tk.values()), list((tk - lk).items())[:4], list((lk - tk).items())[:4]))
    if len(mem) != tm + ts:
        say("FAIL", "memcpy+memset count", "tftracer %d, torch.profiler %d" % (len(mem), tm + ts))
    else:
        say("PASS", "memcpy+memset count %d" % len(mem))
    if nvtx.get("forward") != nvtx.get("step") or not nvtx.get("train"):
        say("FAIL", "NVTX ranges", repr(dict(nvtx)))
    else:
        say("PASS", "NVTX ranges are zones (%d steps)" % nvtx.get("step"))
    flows = collections.defaultdict(dict)
    for e in ev:
        if e.get("ph") in ("s", "f"):
            flows[e["id"]][e["ph"]] = e
    launch = [f for f in flows.values() if f.get("f", {}).get("name") == "launch" or f.get("s", {}).get("name") == "launch"]
    whole = [f for f in launch if "s" in f and "f" in f]
    if len(whole) < len(kern) or int(meta.get("unmatched_flows") or 0):
        say("FAIL", "launch flows", "%d whole of %d, %d kernels, unmatched %s" % (len(whole), len(launch), len(kern), meta.get("unmatched_flows")))
    else:
        say("PASS", "a launch flow per kernel (%d)" % len(whole))
    back = [f for f in whole if f["f"]["ts"] < f["s"]["ts"]]
    if back:
        say("FAIL", "kernels before their launch", "%d, e.g. %r" % (len(back), back[0]))
    else:
        say("PASS", "every kernel starts after its launch call began")
    for k in ("cuda_dropped", "dropped"):
        if int(meta.get(k) or 0):
            say("FAIL", k, str(meta.get(k)))
    if not streams:
        say("FAIL", "no CUDA stream track")
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
