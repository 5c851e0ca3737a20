#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Live tracing cost in a real PyTorch training loop (BENCHMARKS.md, "Live tracing").

1. Untraced steps: the same loop (examples/pytorch/train_mlp.py's model and data)
   timed without tftracer and with every step in `with server.step("train")`.
   (a) step pairs: single steps alternate plain / in server.step() (2000 pairs,
   the order flipped every pair), each timed; overhead = median(traced) /
   median(plain) - 1 and the median of the per-pair ratios. Both runs see the same
   machine load, so this holds up on a shared machine. (b) blocks: runs of N
   steps interleaved (A B, B A, ...), the median of the per-pair ratios of the
   process's CPU time (all its threads: the runtime's drain and the server's
   follower included). (c) an A/A control: (a) with both steps plain, the noise
   floor of (a). (d) the bare cost of `with server.step():` around nothing, over
   the median plain step: the overhead without the machine's noise. The target
   (<= 0.5%) is checked on (d) and on (a)'s median pair ratio.
2. A traced step: one step run under torch.profiler alone (profile + export of its
   Chrome trace) against the same step traced by tftracer (profile + export + the
   hand-off to the import thread; the import itself runs after, off the training
   thread). Interleaved pairs, median ratio. Target <= 1.1x.

    PYTHONPATH=build/python /usr/bin/python3 bench/bench_python.py [--pairs 9] [--steps 200]
        [--traced-pairs 9] [--json OUT]
"""
import argparse
import contextlib
import json
import os
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples", "pytorch"))

import torch  # noqa: E402
import train_mlp  # noqa: E402
import tftracer  # noqa: E402


def setup():
    torch.manual_seed(0)
    x, y = train_mlp.make_data()
    model = train_mlp.make_model(x.shape[1])
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    return x, y, model, opt, torch.nn.MSELoss()


def one_step(st, i, batch=64):
    x, y, model, opt, loss_fn = st
    j = (i * batch) % (x.shape[0] - batch)
    loss = loss_fn(model(x[j:j + batch]), y[j:j + batch])
    opt.zero_grad()
    loss.backward()
    opt.step()


def loop_plain(st, n):
    c, t = time.process_time(), time.perf_counter()
    for i in range(n):
        one_step(st, i)
    return time.process_time() - c, time.perf_counter() - t


def loop_traced(st, n, srv):
    c, t = time.process_time(), time.perf_counter()
    for i in range(n):
        with srv.step("train"):
            one_step(st, i)
    return time.process_time() - c, time.perf_counter() - t


def step_pairs(st, srv, n):
    """Single steps alternating plain / traced: per-step wall times."""
    plain, traced, ratios = [], [], []
    pc = time.perf_counter_ns
    for i in range(n):
        if i % 2 == 0:
            t = pc()
            one_step(st, 2 * i)
            a = pc() - t
            t = pc()
            with srv.step("train"):
                one_step(st, 2 * i + 1)
            b = pc() - t
        else:
            t = pc()
            with srv.step("train"):
                one_step(st, 2 * i)
            b = pc() - t
            t = pc()
            one_step(st, 2 * i + 1)
            a = pc() - t
        plain.append(a)
        traced.append(b)
        ratios.append(b / a)
    return plain, traced, ratios


def step_cost_ns(srv, n=200000):
    """The bare cost of `with srv.step():` around nothing."""
    t = time.perf_counter_ns()
    for _ in range(n):
        with srv.step("train"):
            pass
    return (time.perf_counter_ns() - t) / n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=41)
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--traced-pairs", type=int, default=15)
    ap.add_argument("--step-pairs", type=int, default=2000)
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    torch.set_num_threads(1)
    tmp = tempfile.mkdtemp(prefix="tft-bench-py-")
    srv = tftracer.TracingServer(port=0, session=os.path.join(tmp, "bench-%p.tft"), keep_traces=0)
    st = setup()
    loop_plain(st, 20)           # warm-up
    loop_traced(st, 20, srv)

    class _Plain:
        def step(self, name):
            return contextlib.nullcontext()
    ap_, at_, ar_ = step_pairs(st, _Plain(), a.step_pairs)
    aa = (statistics.median(ar_) - 1) * 100
    sp, stt, sr = step_pairs(st, srv, a.step_pairs)
    ov_med = (statistics.median(stt) / statistics.median(sp) - 1) * 100
    ov_ratio = (statistics.median(sr) - 1) * 100
    print("untraced steps, %d single-step pairs: plain %.3f ms, in server.step() %.3f ms "
          "(medians): overhead %+.3f%%; median of pair ratios %+.3f%%" % (
              a.step_pairs, statistics.median(sp) / 1e6, statistics.median(stt) / 1e6, ov_med,
              ov_ratio))
    print("  A/A control (both plain, nullcontext): median of pair ratios %+.3f%%" % aa)
    ratios, wratios, plain_t = [], [], []
    for p in range(a.pairs):
        if p % 2 == 0:
            tp = loop_plain(st, a.steps)
            tt = loop_traced(st, a.steps, srv)
        else:
            tt = loop_traced(st, a.steps, srv)
            tp = loop_plain(st, a.steps)
        ratios.append(tt[0] / tp[0])
        wratios.append(tt[1] / tp[1])
        plain_t.append(tp[1])
    overhead = (statistics.median(ratios) - 1) * 100
    woverhead = (statistics.median(wratios) - 1) * 100
    bare = step_cost_ns(srv)
    step_ms = statistics.median(plain_t) / a.steps * 1e3
    print("untraced steps, blocks: %d pairs x %d steps, step %.3f ms (wall); median overhead %+.3f%% "
          "CPU time, %+.3f%% wall; `with server.step()` alone %.0f ns" % (
              a.pairs, a.steps, step_ms, overhead, woverhead, bare))
    bound = bare / (statistics.median(sp)) * 100
    print("  bare step cost / median plain step: %.4f%%" % bound)

    # ---- a traced step vs torch.profiler alone ----
    from torch.profiler import ProfilerActivity, profile
    prof_t, tft_t, tr = [], [], []
    trace = os.path.join(tmp, "alone.json")
    k = 0

    def alone():
        nonlocal k
        t = time.process_time()
        with profile(activities=[ProfilerActivity.CPU]) as pr:
            one_step(st, k)
        pr.export_chrome_trace(trace)
        d = time.process_time() - t
        os.unlink(trace)
        k += 1
        return d

    def traced():
        nonlocal k
        srv.trace_next(1)
        t = time.process_time()
        with srv.step("train") as s:
            one_step(st, k)
        d = time.process_time() - t
        assert s.traced
        k += 1
        srv.wait_imports()   # the import runs off the training thread; keep pairs apart
        return d

    alone()
    traced()
    for p in range(a.traced_pairs):
        if p % 2 == 0:
            x1, x2 = alone(), traced()
        else:
            x2, x1 = traced(), alone()
        prof_t.append(x1)
        tft_t.append(x2)
        tr.append(x2 / x1)
    ratio = statistics.median(tr)
    t0 = time.perf_counter()
    srv.trace_next(1)
    with srv.step("train"):
        one_step(st, k)
    srv.wait_imports()
    imp = time.perf_counter() - t0
    s = srv.status()
    print("traced step (CPU time): torch.profiler alone %.1f ms, tftracer %.1f ms (medians); median ratio "
          "%.3fx (pairs: %s); step + import into the live session %.1f ms; imports %d, errors %d" % (
              statistics.median(prof_t) * 1e3, statistics.median(tft_t) * 1e3, ratio,
              " ".join("%.2f" % r for r in tr), imp * 1e3, s["imports"], s["import_errors"]))
    res = {"step_pairs_overhead_pct": ov_med, "step_pairs_ratio_pct": ov_ratio,
           "aa_ratio_pct": aa, "bare_bound_pct": bound,
           "untraced_overhead_pct": overhead, "untraced_overhead_wall_pct": woverhead,
           "untraced_pairs": ratios, "step_ms": step_ms,
           "step_ctx_ns": bare, "traced_ratio": ratio, "traced_pairs": tr,
           "profiler_alone_ms": statistics.median(prof_t) * 1e3,
           "tftracer_traced_ms": statistics.median(tft_t) * 1e3, "traced_with_import_ms": imp * 1e3}
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)
    srv.stop()
    ok = bound <= 0.5 and ov_ratio <= 0.5 and ratio <= 1.1
    print("targets (<= 0.5%%, <= 1.1x): %s" % ("met" if ok else "NOT met"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
