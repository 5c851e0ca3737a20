#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# `tftracer advise` end to end (docs/cmd-advise.md):
#   - traces built to hold one known problem (hand-made Kineto JSON: a launch-bound loop
#     of tiny kernels, NCHW convolutions transposed around cuDNN, float64 kernels,
#     pageable copies, an input-bound step, a CPU op beside the GPU, exposed all-reduce,
#     a straggler rank among four, a slow step) give that finding, and the same traces
#     without the problem do not;
#   - the real traces of ../shared/data (Kineto, XSpace, tf.timeline, multi-rank HTA
#     traces): every checker reports a verdict, findings have evidence, and each step's
#     breakdown sums to its duration to the nanosecond; ResNet-50 with num_workers=0 is
#     input-bound and with num_workers=4 is not;
#   - PyTorch (Debian's, /usr/bin/python3) loops generated here: an input-bound DataLoader
#     and a loop of tiny ops, against their fixed twins (tests/python/gen_advise_traces.py);
#   - the --json shape, --step, --all-steps, --checker, and bad usage (exit 2, one line).
"""Usage: test_advise.py [SUBSTRING...]   one PASS/FAIL/SKIP line per test.

Env: TFT_BIN (the CLI, default build/tftracer), TFT_DATA (the trace corpus)."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "corpus"))
sys.path.insert(0, HERE)
import tft_harness as H  # noqa: E402
import kineto_gen as K  # noqa: E402

CHECKERS = ["step_time", "utilization", "expensive_ops", "op_config", "communication", "memory",
            "variability", "critical_path"]
PARTS = ["device_compute", "communication", "memcpy", "input", "host_compute", "idle"]
SLICE_ID = re.compile(r"^(\d+)\.(-?\d+)\.(\d+)$")

results = {"pass": 0, "fail": 0, "skip": 0}


def report(kind, name, why=""):
    results[kind] += 1
    print("%s %s%s" % (kind.upper(), name, (" (%s)" % why) if why else ""), flush=True)


def advise(binary, session, *args):
    return H.cli_json(binary, ["advise", session, "--json"] + list(args), timeout=600)


def shape_problems(j, nsteps=None):
    """The documented --json shape; every step's breakdown sums to its duration."""
    probs = []
    for k in ("findings", "checked", "steps", "analysed_steps", "analysed_ns"):
        if k not in j:
            probs.append("no key %s" % k)
    if probs:
        return probs
    for f in j["findings"]:
        for k in ("checker", "title", "cost_ns", "explanation", "recommendation", "evidence"):
            if k not in f:
                probs.append("finding lacks %s: %r" % (k, f.get("title")))
        if f.get("checker") not in CHECKERS:
            probs.append("unknown checker %r" % f.get("checker"))
        if not f.get("evidence"):
            probs.append("finding without evidence: %r" % f.get("title"))
        if not f.get("recommendation"):
            probs.append("finding without a recommendation: %r" % f.get("title"))
        for e in f.get("evidence", []):
            if set(e) != {"track", "t0_ns", "t1_ns", "slice_ids"}:
                probs.append("evidence keys %s" % sorted(e))
            elif e["t1_ns"] < e["t0_ns"]:
                probs.append("evidence range reversed in %r" % f["title"])
            for sid in e.get("slice_ids", []):
                if not SLICE_ID.match(sid):
                    probs.append("bad slice id %r" % sid)
    costs = [f["cost_ns"] for f in j["findings"]]
    if costs != sorted(costs, reverse=True):
        probs.append("findings not ranked by cost: %s" % costs)
    for c in j["checked"]:
        if set(c) != {"checker", "verdict"} or c["checker"] not in CHECKERS or not c["verdict"]:
            probs.append("bad checked entry %r" % c)
    if nsteps is not None and len(j["steps"]) != nsteps:
        probs.append("%d steps, the session has %d" % (len(j["steps"]), nsteps))
    for st in j["steps"]:
        b = st.get("breakdown", {})
        if sorted(b) != sorted(PARTS):
            probs.append("step %s breakdown keys %s" % (st.get("index"), sorted(b)))
            continue
        if sum(b.values()) != st["duration_ns"]:
            probs.append("step %s: breakdown sums to %d, duration %d" % (st["index"], sum(b.values()), st["duration_ns"]))
        if any(v < 0 for v in b.values()) and st["duration_ns"] >= 0:
            probs.append("step %s: a negative part %s" % (st["index"], b))
    return probs


def has(j, checker, pattern):
    rx = re.compile(pattern)
    return [f for f in j["findings"] if f["checker"] == checker and rx.search(f["title"])]


def titles(j):
    return ["%s: %s" % (f["checker"], f["title"]) for f in j["findings"]]


def import_traces(binary, tmp, name, traces):
    paths = []
    for i, t in enumerate(traces):
        paths.append(t.write(os.path.join(tmp, "%s_%d.json" % (name, i))))
    out = os.path.join(tmp, name + ".tft")
    H.cli_import(binary, paths, out)
    return out


# ---- hand-made traces with one problem, and without it ------------------------------------

SCENARIOS = [
    # name, builder(bad) -> [Trace], checker, title pattern
    ("launch-bound tiny kernels", lambda bad: [K.launch_bound(bad)], "op_config", r"^Launch-bound"),
    ("launch-bound critical path", lambda bad: [K.launch_bound(bad)], "critical_path", r"runs .* on host ops"),
    ("GPU idle", lambda bad: [K.launch_bound(bad)], "utilization", r"is idle"),
    ("NCHW convolutions", lambda bad: [K.nchw_convs(bad)], "op_config", r"Layout conversions between NCHW and NHWC"),
    ("float64 on the GPU", lambda bad: [K.float64(bad)], "op_config", r"^float64 ops run on the accelerator"),
    ("pageable copies", lambda bad: [K.pageable(bad)], "memory", r"pageable memory"),
    ("input-bound step", lambda bad: [K.input_bound(bad)], "step_time", r"^Input-pipeline bound"),
    ("CPU op beside the GPU", lambda bad: [K.cpu_op(bad)], "expensive_ops", r"run on the CPU although an accelerator"),
    ("exposed all-reduce", lambda bad: [K.exposed_comm(bad)], "communication", r"^Exposed communication"),
    ("straggler rank", lambda bad: [K.straggler(r, 2 if bad else None) for r in range(4)], "variability",
     r"^Rank 2 is a straggler"),
    ("slow step", lambda bad: [K.slow_steps(bad)], "variability", r"slow step"),
]


def test_scenarios(binary, tmp, want):
    for name, build, checker, pattern in SCENARIOS:
        if want and not any(w in name for w in want):
            continue
        try:
            got = {}
            for bad in (True, False):
                s = import_traces(binary, tmp, re.sub(r"\W+", "_", name) + ("_bad" if bad else "_ok"), build(bad))
                j = advise(binary, s)
                probs = shape_problems(j)
                if probs:
                    raise AssertionError("; ".join(probs[:3]))
                got[bad] = has(j, checker, pattern)
                if bad and not got[bad]:
                    raise AssertionError("no %s finding /%s/ in the trace with the problem: %s" % (checker, pattern, titles(j)))
                if not bad and got[bad]:
                    raise AssertionError("%s finding /%s/ in the trace without the problem: %s" % (checker, pattern, titles(j)))
            report("pass", "scenario/" + name)
        except (AssertionError, H.CliError) as e:
            report("fail", "scenario/" + name, str(e)[:400])


def test_scenario_details(binary, tmp):
    """What the findings say and point at, beyond their titles."""
    try:
        s = import_traces(binary, tmp, "detail_straggler", [K.straggler(r, 2) for r in range(4)])
        j = advise(binary, s)
        f = has(j, "variability", r"^Rank 2 is a straggler")[0]
        info = H.cli_info(binary, s)
        procs = {p["id"]: p for p in info["process_list"]}
        tracks = {t["id"]: t for t in info["track_list"]}
        # the evidence: rank 2's steps (no one track) and another rank's wait in its all-reduce
        waits = [e for e in f["evidence"] if e["track"] is not None]
        if not waits or not all(procs[tracks[e["track"]]["process_id"]].get("rank") != 2 for e in waits):
            raise AssertionError("the wait shown is not another rank's: %s" % waits)
        names = set()
        for e in waits:
            for sid in e["slice_ids"]:
                m = SLICE_ID.match(sid)
                names.add(int(m.group(1)))
        # the per-step cost is the slow rank's lead: 4 ms of extra compute per step
        if not 3500000 <= f["cost_ns"] <= 4500000:
            raise AssertionError("straggler cost %d ns, want ~4 ms" % f["cost_ns"])
        e = has(j, "communication", r"^Exposed communication")
        if not e:
            raise AssertionError("the other ranks' wait is not exposed communication: %s" % titles(j))
        # nchw: the cost is the transposes' time, 10 x 400 us per step
        s = import_traces(binary, tmp, "detail_nchw", [K.nchw_convs(True)])
        j = advise(binary, s)
        f = has(j, "op_config", r"Layout conversions")[0]
        if f["cost_ns"] != 4000000:
            raise AssertionError("layout conversions cost %d ns per step, want 4000000" % f["cost_ns"])
        if "channels_last" not in f["recommendation"]:
            raise AssertionError("the half-precision conv's advice is not channels_last: %r" % f["recommendation"])
        ev_names = set()
        for e in f["evidence"]:
            ev_names |= set(e["slice_ids"])
        if not ev_names:
            raise AssertionError("no transpose kernel in the evidence")
        # input-bound: 4 ms of DataLoader per step, 44% of the step
        s = import_traces(binary, tmp, "detail_input", [K.input_bound(True)])
        j = advise(binary, s)
        f = has(j, "step_time", r"^Input-pipeline bound")[0]
        if not 3900000 <= f["cost_ns"] <= 4100000:
            raise AssertionError("input cost %d ns per step, want ~4 ms" % f["cost_ns"])
        analysed = [st for st in j["steps"] if st["analysed"]]
        if len(analysed) != K.STEPS - 1 or j["steps"][0]["analysed"]:
            raise AssertionError("the first (warm-up) step should be left out: %s" % [st["analysed"] for st in j["steps"]])
        for st in analysed:
            if not 3990000 <= st["breakdown"]["input"] <= 4010000:
                raise AssertionError("step %d input %d, want 4 ms" % (st["index"], st["breakdown"]["input"]))
        report("pass", "scenario details: costs, evidence, warm-up step")
    except (AssertionError, H.CliError, IndexError, KeyError) as e:
        report("fail", "scenario details: costs, evidence, warm-up step", str(e)[:400])


# ---- the real traces ----------------------------------------------------------------------

REAL = [
    ["kineto/tb_plugin_samples/resnet50_num_workers_0/worker0.pt.trace.json.gz"],
    ["kineto/tb_plugin_samples/resnet50_num_workers_4/worker0.pt.trace.json.gz"],
    ["hta/trace_filter/sampled_rank-0.json.gz", "hta/trace_filter/sampled_rank-1.json.gz"],
    ["hta/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz"],
    ["hta/nccl_parser_config/nccl_data.json.gz"],
    ["hta/cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz"],
    ["tf-profiler-demo/GPU-multi-worker/34.83.195.179_6003.xplane.pb"],
    ["tracelens/jax_mi300/jax08_gemm/tw003.xplane.pb"],
    ["ikhlestov-tf-profiling/GPU/timeline_03_merged_5_runs.json"],
    ["ikhlestov-tf-profiling/CPU/timeline_02_step_0.json"],
    ["tracelens/kineto_mi300/ddp_resnet18_no_pool/train_resnet18.json.gz"],
    ["hta/with_gpu_user_annotation/step_based_trace_2543932.json.gz"],
    ["tensorboard/run_metadata_run_step99_tag_train.pbtxt"],
    ["catapult/big_trace.json"],
]


def test_real(binary, tmp, want):
    data = H.data_dir()
    for files in REAL:
        name = "real/" + files[0] + (" +%d" % (len(files) - 1) if len(files) > 1 else "")
        if want and not any(w in name for w in want):
            continue
        paths = [os.path.join(data, f) for f in files]
        missing = [p for p in paths if not os.path.exists(p)]
        if missing:
            report("fail", name, "input missing: %s" % missing[0])
            continue
        try:
            out = os.path.join(tmp, "real_%d.tft" % REAL.index(files))
            b = H.bin_for(paths[0])
            H.cli_import(b, paths, out)
            info = H.cli_info(b, out)
            j = advise(b, out)
            probs = shape_problems(j, nsteps=info["steps"])
            got = [c["checker"] for c in j["checked"]]
            if got != CHECKERS:
                probs.append("checked %s, want every checker once" % got)
            ntracks = info["tracks"]
            for f in j["findings"]:
                for e in f["evidence"]:
                    if e["track"] is not None and not 0 <= e["track"] < ntracks:
                        probs.append("evidence track %s of %d" % (e["track"], ntracks))
            if probs:
                raise AssertionError("; ".join(probs[:4]))
            report("pass", name, "%d findings, %d steps" % (len(j["findings"]), len(j["steps"])))
        except (AssertionError, H.CliError) as e:
            report("fail", name, str(e)[:400])


def test_resnet_workers(binary, tmp):
    """The tb_plugin samples: num_workers=0 waits for its DataLoader, num_workers=4 does not."""
    data = H.data_dir()
    name = "real ResNet-50: num_workers=0 input-bound, num_workers=4 not"
    try:
        verdicts = []
        for w, bad in ((0, True), (4, False)):
            p = os.path.join(data, "kineto/tb_plugin_samples/resnet50_num_workers_%d/worker0.pt.trace.json.gz" % w)
            out = os.path.join(tmp, "resnet%d.tft" % w)
            H.cli_import(H.bin_for(p), p, out)
            j = advise(H.bin_for(p), out)
            f = has(j, "step_time", r"^Input-pipeline bound")
            verdicts.append(next(c["verdict"] for c in j["checked"] if c["checker"] == "step_time"))
            if bool(f) != bad:
                raise AssertionError("num_workers=%d: input-bound finding %s; %s" % (w, bool(f), verdicts[-1]))
            if bad:
                ev = f[0]["evidence"]
                if not ev or not ev[0]["slice_ids"]:
                    raise AssertionError("the input-bound finding shows no DataLoader slice")
        report("pass", name)
    except (AssertionError, H.CliError) as e:
        report("fail", name, str(e)[:400])


# ---- PyTorch-generated loops --------------------------------------------------------------

def test_torch(binary, tmp):
    gen = os.path.join(HERE, "..", "python", "gen_advise_traces.py")
    outdir = os.path.join(tmp, "torch")
    r = H.run(["/usr/bin/python3", gen, outdir], timeout=900)
    if r.rc == 77:
        report("skip", "torch loops", "torch not importable by /usr/bin/python3")
        return
    if r.rc != 0:
        report("fail", "torch loops", "gen_advise_traces.py: " + r.why())
        return
    cases = [("input_bound", "step_time", r"^Input-pipeline bound"),
             ("tiny_ops", "op_config", r"^Dispatch-bound")]
    for base, checker, pattern in cases:
        name = "torch/" + base
        try:
            for suffix, bad in (("bad", True), ("ok", False)):
                trace = os.path.join(outdir, "%s_%s.json" % (base, suffix))
                s = os.path.join(tmp, "torch_%s_%s.tft" % (base, suffix))
                H.cli_import(binary, trace, s)
                j = advise(binary, s)
                probs = shape_problems(j)
                if probs:
                    raise AssertionError("; ".join(probs[:3]))
                f = has(j, checker, pattern)
                if bool(f) != bad:
                    raise AssertionError("%s: %s finding %s; findings %s; %s" % (
                        suffix, checker, bool(f), titles(j),
                        next(c["verdict"] for c in j["checked"] if c["checker"] == checker)))
            report("pass", name)
        except (AssertionError, H.CliError) as e:
            report("fail", name, str(e)[:500])


# ---- options and bad usage -----------------------------------------------------------------

def test_options(binary, tmp):
    s = import_traces(binary, tmp, "opts", [K.slow_steps(True)])
    try:
        j = advise(binary, s, "--checker", "step_time,memory")
        if [c["checker"] for c in j["checked"]] != ["step_time", "memory"]:
            raise AssertionError("--checker step_time,memory gave %s" % [c["checker"] for c in j["checked"]])
        if any(f["checker"] not in ("step_time", "memory") for f in j["findings"]):
            raise AssertionError("--checker let through %s" % titles(j))
        j2 = advise(binary, s, "--checker", "variability", "--checker", "critical_path")
        if [c["checker"] for c in j2["checked"]] != ["variability", "critical_path"]:
            raise AssertionError("repeated --checker gave %s" % [c["checker"] for c in j2["checked"]])
        j = advise(binary, s, "--step", "6")
        an = [st["index"] for st in j["steps"] if st["analysed"]]
        if an != [6] or j["analysed_steps"] != 1:
            raise AssertionError("--step 6 analysed %s" % an)
        j = advise(binary, s, "--all-steps")
        if j["analysed_steps"] != 10:
            raise AssertionError("--all-steps analysed %d of 10" % j["analysed_steps"])
        j = advise(binary, s)
        if j["analysed_steps"] != 9 or j["steps"][0]["analysed"]:
            raise AssertionError("default: %d analysed, first %s" % (j["analysed_steps"], j["steps"][0]["analysed"]))
        text = H.run([binary, "advise", s])
        if text.rc != 0 or "Findings" not in text.out or "Checked:" not in text.out:
            raise AssertionError("text output: " + text.why())
        report("pass", "options: --checker, --step, --all-steps, text")
    except (AssertionError, H.CliError) as e:
        report("fail", "options: --checker, --step, --all-steps, text", str(e)[:400])
    bad = [
        (["advise"], r"usage"),
        (["advise", s, "--step", "99"], r"no step 99 \(steps 0\.\.9\)"),
        (["advise", s, "--step", "x"], r"--step expects a step number"),
        (["advise", s, "--checker", "nope"], r"--checker expects .* not 'nope'"),
        (["advise", s, "--step", "1", "--all-steps"], r"exclude each other"),
        (["advise", os.path.join(tmp, "missing.tft")], r"missing\.tft: cannot open: no such file"),
        (["advise", s, "--frobnicate"], r"unknown option"),
    ]
    garbage = os.path.join(tmp, "garbage.tft")
    with open(garbage, "wb") as fp:
        fp.write(b"not a session at all\n" * 10)
    bad.append((["advise", garbage], r"garbage\.tft"))
    for argv, pattern in bad:
        name = "bad usage: " + " ".join(a if not a.startswith("/") else os.path.basename(a) for a in argv[1:]) or "no file"
        r = H.run([binary] + argv)
        lines = [l for l in r.err.splitlines() if l.strip()]
        if r.crashed or r.rc != 2 or not re.search(pattern, r.err) or (argv != ["advise"] and len(lines) != 1):
            report("fail", name, "exit %d, stderr %r" % (r.rc, r.err[:300]))
        else:
            report("pass", name)


def main(argv):
    want = argv[1:]
    binary = H.tft_bin()
    if not os.path.exists(binary):
        report("fail", "advise", "no CLI at %s" % binary)
        return 1
    tmp = tempfile.mkdtemp(prefix="tft-advise-")
    try:
        test_scenarios(binary, tmp, want)
        if not want or any(w in "scenario details" for w in want):
            test_scenario_details(binary, tmp)
        test_real(binary, tmp, want)
        if not want or any(w in "resnet" for w in want):
            test_resnet_workers(binary, tmp)
        if not want or any(w in "torch" for w in want):
            test_torch(binary, tmp)
        if not want or any(w in "options bad usage" for w in want):
            test_options(binary, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if results["fail"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
