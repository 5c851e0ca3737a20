#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Check that BENCHMARKS.md's targets table states what its Results table shows.

Usage: tools/check_benchmarks.py [BENCHMARKS.md] [--fix]

The Results table is the one tools/bench_results.py prints (header "| input | bench |
MB | ..."). The targets table has the header "| target | Results cells | measured |
status |"; in each row:
  target         one threshold: "... >= N unit" or "... <= N unit"
  Results cells  the cells it is judged on, `INPUT` `BENCH` `COLUMN` each (three
                 code spans), separated by ";"
  measured       the values of those cells: "V (LABEL); V (LABEL)" (LABEL: the input,
                 or the bench where a row names one input twice)
  status         "met" when every value meets the threshold; else "**not met**: " and
                 the values that miss it, or "**not measured**: " the empty cells
Also: each input's python json.load (peer) is timed best of the same N as its import.
Prints one line per disagreement and exits 1; --fix rewrites measured and status
from the Results table instead. Run by `make test` (tests/e2e/test_benchmarks.py).
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_results import COLS  # noqa: E402

TARGET_HEAD = ("target", "Results cells", "measured", "status")
THRESHOLD_RE = re.compile(r"(>=|<=|≥|≤)\s*([0-9][0-9,]*(?:\.[0-9]+)?)")
NUM_RE = re.compile(r"-?[0-9][0-9,]*(?:\.[0-9]+)?")


def cells(line):
    line = line.strip()
    if not (line.startswith("|") and line.endswith("|")):
        return None
    return [c.strip() for c in line[1:-1].split("|")]


def tables(lines):
    """[(header cells, first row's line index, [(line index, cells)])] of every table."""
    out, i = [], 0
    while i < len(lines):
        head = cells(lines[i])
        if head and i + 1 < len(lines) and re.match(r"^\|\s*:?-{3,}", lines[i + 1].strip()):
            rows, j = [], i + 2
            while j < len(lines) and cells(lines[j]) is not None:
                rows.append((j, cells(lines[j])))
                j += 1
            out.append((head, rows))
            i = j
        else:
            i += 1
    return out


def norm(text):
    return " ".join(text.replace("**", "").split())


def value(text):
    m = NUM_RE.search(text.replace("**", ""))
    return float(m.group(0).replace(",", "")) if m else None


def check(path, fix=False):
    lines = open(path, encoding="utf-8").read().split("\n")
    probs = []
    tabs = tables(lines)
    res = [t for t in tabs if tuple(t[0]) == COLS]
    tgt = [t for t in tabs if tuple(t[0]) == TARGET_HEAD]
    if len(res) != 1:
        return ["%s: %d Results tables (header '| %s |'), want 1" % (path, len(res), " | ".join(COLS))]
    if len(tgt) != 1:
        return ["%s: %d targets tables (header '| %s |'), want 1" % (path, len(tgt), " | ".join(TARGET_HEAD))]
    results = {}
    for ln, row in res[0][1]:
        if len(row) != len(COLS):
            probs.append("line %d: Results row with %d cells, want %d" % (ln + 1, len(row), len(COLS)))
            continue
        key = (row[0], row[1])
        if key in results:
            probs.append("line %d: Results row %s %s twice" % (ln + 1, row[0], row[1]))
        results[key] = dict(zip(COLS, row))
    # the json.load peer: best of the same N as the import
    for (inp, bench), r in results.items():
        if bench != "python json.load (peer)":
            continue
        imp = results.get((inp, "import"))
        n_py = re.search(r"best of (\d+)", r["notes"])
        n_imp = re.search(r"best of (\d+)", imp["notes"]) if imp else None
        if not n_py or not n_imp or n_py.group(1) != n_imp.group(1):
            probs.append("Results: %s: python json.load is %s, the import %s: not best of the same N" % (
                inp, n_py.group(0) if n_py else "one run", n_imp.group(0) if n_imp else "missing"))
    if not tgt[0][1]:
        probs.append("the targets table has no row")
    for ln, row in tgt[0][1]:
        if len(row) != 4:
            probs.append("line %d: targets row with %d cells, want 4" % (ln + 1, len(row)))
            continue
        target, refs_text = row[0], row[1]
        m = THRESHOLD_RE.search(target)
        if not m:
            probs.append("line %d: target %r has no '>= N' or '<= N'" % (ln + 1, target))
            continue
        op, thr = m.group(1), float(m.group(2).replace(",", ""))
        refs = []
        for part in refs_text.split(";"):
            spans = re.findall(r"`([^`]*)`", part)
            if len(spans) != 3:
                probs.append("line %d: Results cell %r is not `INPUT` `BENCH` `COLUMN`" % (ln + 1, part.strip()))
                continue
            refs.append(tuple(spans))
        if not refs:
            probs.append("line %d: target %r names no Results cell" % (ln + 1, target))
            continue
        inputs = [r[0] for r in refs]
        measured, missed, empty = [], [], []
        for inp, bench, col in refs:
            label = inp if inputs.count(inp) == 1 else bench
            r = results.get((inp, bench))
            if r is None or col not in COLS:
                probs.append("line %d: no Results cell %s / %s / %s" % (ln + 1, inp, bench, col))
                continue
            text = r[col]
            v = value(text)
            if v is None:
                empty.append(label)
                measured.append("none (%s)" % label)
                continue
            measured.append("%s (%s)" % (text.replace("**", ""), label))
            good = v >= thr if op in (">=", "≥") else v <= thr
            if not good:
                missed.append("%s (%s)" % (text.replace("**", ""), label))
        want_measured = "; ".join(measured)
        if empty:
            want_status = "**not measured**: " + ", ".join(empty)
        elif missed:
            want_status = "**not met**: " + "; ".join(missed)
        else:
            want_status = "met"
        if fix:
            lines[ln] = "| %s | %s | %s | %s |" % (target, refs_text, want_measured, want_status)
            continue
        if norm(row[2]) != norm(want_measured):
            probs.append("line %d: %s: measured says %r, the Results table %r" % (ln + 1, target, row[2],
                                                                                 want_measured))
        if norm(row[3]) != norm(want_status):
            probs.append("line %d: %s: status says %r, the Results table gives %r" % (ln + 1, target, row[3],
                                                                                     want_status))
    if fix:
        with open(path, "w", encoding="utf-8") as fp:
            fp.write("\n".join(lines))
    return probs


def main(argv):
    fix = "--fix" in argv
    argv = [a for a in argv if a != "--fix"]
    path = argv[0] if argv else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "BENCHMARKS.md")
    probs = check(path, fix)
    for p in probs:
        print("check_benchmarks: " + p)
    if not probs and not fix:
        print("check_benchmarks: the targets table agrees with the Results table")
    return 1 if probs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
