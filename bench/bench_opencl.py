#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""What capturing OpenCL from below costs (BENCHMARKS.md "Capture from below").

  /usr/bin/python3 bench/bench_opencl.py [--build build] [--pairs 15] [--batches 201]

1. Per call, in one run under `tftracer record` (tracing on): the interposed
   call against the ICD loader's own function on the same queue
   (bench_opencl calls; see bench/bench_opencl.c), and the same program
   without the library: an A/A control of the two paths (the noise floor).
2. A kernel-heavy loop (2-3 ms kernels on PoCL here, clFinish every 8): wall time with
   and without `record`, in interleaved pairs, median ratio.
Needs an OpenCL device (PoCL) and the build's libtftracer-preload.so.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def run_json(cmd, env=None):
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
    if r.returncode:
        sys.exit("bench_opencl: %s: %s" % (" ".join(cmd), r.stderr[-500:]))
    return [json.loads(l) for l in r.stdout.splitlines() if l.startswith("{")]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--pairs", type=int, default=15)
    ap.add_argument("--batches", type=int, default=201)
    ap.add_argument("--calls", type=int, default=256)
    ap.add_argument("--kernels", type=int, default=400)
    a = ap.parse_args()
    cli = os.path.join(a.build, "tftracer")
    tmp = tempfile.mkdtemp(prefix="tft-bench-opencl-")
    exe = os.path.join(tmp, "bench_opencl")
    subprocess.run(["cc", "-O2", "-o", exe, os.path.join(HERE, "bench_opencl.c"), "-lOpenCL", "-ldl"], check=True)
    n = 0

    def rec(args):
        nonlocal n
        n += 1
        return [cli, "record", "-q", "--port", "0", "-o", os.path.join(tmp, "s%d.tft" % n), "--", exe] + args

    calls = ["calls", "-n", str(a.calls), "-r", str(a.batches)]
    traced = {j["call"]: j for j in run_json(rec(calls))}
    plain = {j["call"]: j for j in run_json([exe] + calls)}
    print("| call | interposed (ns) | un-intercepted, same run (ns) | added per call (wall) | added (CPU of "
          "the calling thread) | added incl. completion (the clFinish after) | A/A: the same without the "
          "library (wall, CPU) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for c, j in traced.items():
        q = plain[c]
        print("| `%s` | %.0f | %.0f | **%+.0f ns** | %+.0f ns | %+.0f ns | %+.0f ns, %+.0f ns |" % (
            c, j["interposed_ns"], j["raw_ns"], j["added_ns"], j["cpu_added_ns"], j["with_finish_added_ns"],
            q["added_ns"], q["cpu_added_ns"]))
    ratios, cratios, w_on, w_off, c_on, c_off = [], [], [], [], [], []
    loop = ["loop", "-k", str(a.kernels)]

    for i in range(a.pairs):
        order = (True, False) if i % 2 == 0 else (False, True)
        got, used = {}, {}
        for on in order:
            j = run_json(rec(loop) if on else [exe] + loop)[0]
            got[on], used[on] = j["wall_ms"], j["cpu_ms"]
        w_on.append(got[True])
        w_off.append(got[False])
        c_on.append(used[True])
        c_off.append(used[False])
        ratios.append(got[True] / got[False])
        cratios.append(used[True] / used[False])
    print()
    print("kernel-heavy loop (%d kernels of 2-3 ms, clFinish every 8; %d interleaved pairs):" % (a.kernels, a.pairs))
    print("  wall: with record %.1f ms, without %.1f ms (medians); median pair ratio %+.2f %% (pairs %+.1f .. %+.1f %%)" % (
        statistics.median(w_on), statistics.median(w_off), (statistics.median(ratios) - 1) * 100,
        (min(ratios) - 1) * 100, (max(ratios) - 1) * 100))
    print("  CPU time of the process over the loop (every thread: the program's, PoCL's, the tracer's): "
          "%.0f ms vs %.0f ms (medians); "
          "median pair ratio %+.2f %% (pairs %+.1f .. %+.1f %%)" % (
              statistics.median(c_on), statistics.median(c_off), (statistics.median(cratios) - 1) * 100,
              (min(cratios) - 1) * 100, (max(cratios) - 1) * 100))


if __name__ == "__main__":
    main()
