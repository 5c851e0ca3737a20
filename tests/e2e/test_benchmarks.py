#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# BENCHMARKS.md tells the truth: its targets table states what its Results table
# shows (tools/check_benchmarks.py), the check catches a drift either way, and
# `make bench` times python's json.load best of N like the import.
"""Usage: test_benchmarks.py   one PASS/FAIL line per check.

Env: TFT_BIN (the CLI bench/run.sh measures in the json.load check; default
build/tftracer)."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "corpus"))
import tft_harness as H  # noqa: E402

REPO = H.REPO
CHECK = os.path.join(REPO, "tools", "check_benchmarks.py")
DOC = os.path.join(REPO, "BENCHMARKS.md")


def run_check(path):
    p = subprocess.run([sys.executable, CHECK, path], capture_output=True, text=True, timeout=60)
    return p.returncode, (p.stdout + p.stderr).strip()


def check_doc():
    rc, out = run_check(DOC)
    return [] if rc == 0 else [out[-1500:]]


def check_drift(tmp):
    """Doctored copies of BENCHMARKS.md must fail the check: a Results number moved
    past its target, and a status turned around."""
    probs = []
    text = open(DOC, encoding="utf-8").read()
    lines = text.split("\n")
    head = next((i for i, l in enumerate(lines) if l.startswith("| input | bench | MB |")), None)
    if head is None:
        return ["BENCHMARKS.md has no Results table"]
    # 1. the first import's wall MB/s set to 1: the JSON import target is then missed
    doctored = list(lines)
    for i in range(head + 2, len(lines)):
        c = lines[i].split("|")
        if len(c) > 5 and c[2].strip() == "import":
            c[5] = " 1 "
            doctored[i] = "|".join(c)
            break
    else:
        return ["no import row in the Results table"]
    p = os.path.join(tmp, "moved.md")
    open(p, "w", encoding="utf-8").write("\n".join(doctored))
    rc, out = run_check(p)
    if rc != 1 or "measured says" not in out:
        probs.append("a Results number moved to 1 MB/s: check exit %d, %r" % (rc, out[-300:]))
    # 2. every status turned around (met <-> not met)
    flipped = re.sub(r"\| met \|$", "| **flip** |", text, flags=re.M)
    flipped = re.sub(r"\| \*\*not met\*\*: [^|]*\|$", "| met |", flipped, flags=re.M)
    flipped = flipped.replace("| **flip** |", "| **not met**: 0 (x) |")
    p = os.path.join(tmp, "flipped.md")
    open(p, "w", encoding="utf-8").write(flipped)
    rc, out = run_check(p)
    if rc != 1 or "status says" not in out:
        probs.append("statuses turned around: check exit %d, %r" % (rc, out[-300:]))
    # 3. json.load timed once while the import is best of 3
    once = re.sub(r"(\| python json\.load \(peer\) \|[^\n]*)best of \d+", r"\1one run", text)
    p = os.path.join(tmp, "once.md")
    open(p, "w", encoding="utf-8").write(once)
    rc, out = run_check(p)
    if once == text or rc != 1 or "not best of the same N" not in out:
        probs.append("json.load timed once: check exit %d, %r" % (rc, out[-300:]))
    return probs


def check_json_load_best_of_n(tmp):
    """bench/run.sh on a 1 MB generated trace, BENCH_REPS=2: json.load is timed best
    of 2 like the import, and the ratio is taken between the two bests."""
    res = os.path.join(tmp, "results.jsonl")
    env = dict(os.environ, BENCH_INPUTS="gen", BENCH_SIZE_MB="1", BENCH_REPS="2",
               BENCH_DIR=os.path.join(tmp, "bench"), BENCH_RESULTS=res, TFT_BIN=H.tft_bin())
    p = subprocess.run(["bash", os.path.join(REPO, "bench", "run.sh")], env=env, cwd=REPO,
                       capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        return ["bench/run.sh: exit %d: %s" % (p.returncode, p.stderr[-400:])]
    if not os.path.exists(res):
        return ["bench/run.sh wrote no %s (BENCH_RESULTS)" % res]
    rows = {r["bench"]: r for r in (json.loads(l) for l in open(res) if l.startswith("{"))}
    probs = []
    imp, py, ratio = rows.get("import"), rows.get("python_json_load"), rows.get("import_vs_python")
    if not imp or not py or not ratio or "error" in py:
        return ["rows: %s" % sorted(rows)]
    if py.get("reps") != 2 or imp.get("reps") != 2:
        probs.append("json.load reps %r, import reps %r: want 2 and 2" % (py.get("reps"), imp.get("reps")))
    if ratio.get("python_s") != py.get("seconds") or ratio.get("tftracer_s") != imp.get("seconds"):
        probs.append("the ratio's times %r / %r are not the two bests %r / %r" % (
            ratio.get("python_s"), ratio.get("tftracer_s"), py.get("seconds"), imp.get("seconds")))
    elif abs(ratio["ratio"] - py["seconds"] / imp["seconds"]) > 0.01:
        probs.append("ratio %r != %r / %r" % (ratio["ratio"], py["seconds"], imp["seconds"]))
    return probs


def main():
    rep = H.Reporter("benchmarks")
    rep.check("targets-agree", check_doc())
    for name, fn in (("catches-drift", check_drift), ("json-load-best-of-n", check_json_load_best_of_n)):
        tmp = tempfile.mkdtemp(prefix="tft-benchdoc-")
        try:
            rep.check(name, fn(tmp))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return rep.finish()


if __name__ == "__main__":
    sys.exit(H.main_guard(main))
