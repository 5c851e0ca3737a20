#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""BENCHMARKS.md's Results table from one `make bench` run's JSON lines.

Usage: tools/bench_results.py [RESULTS.jsonl] [--commit C]

Reads the lines bench/run.sh appended (default: the newest bench/results/*.jsonl),
keeps those of one run (commit C, default the last line's commit; a commit's
later lines replace its earlier ones for the same input and bench) and prints
the table: one row per (input, bench), every number as the run printed it.
tools/check_benchmarks.py then checks the targets table against that table.
"""
import glob
import json
import os
import sys

COLS = ("input", "bench", "MB", "wall s", "wall MB/s", "CPU s", "peak RSS MB", "ratio",
        "B/slice", "p99 ms", "ns/event", "notes")


def num(v, fmt=None):
    if v is None or v == "":
        return ""
    if fmt:
        return fmt % v
    return str(v)


def rows_of(lines):
    out = []
    runtime = {}
    for r in lines:
        b, inp = r.get("bench"), r.get("input", "")
        row = dict.fromkeys(COLS, "")
        row["input"] = inp
        if "error" in r:
            row["bench"] = b
            row["notes"] = "error: " + r["error"]
            out.append(row)
            continue
        if b == "import":
            row.update({"bench": "import", "MB": num(r.get("input_mb")), "wall s": num(r.get("seconds")),
                        "wall MB/s": num(r.get("mb_per_s")), "CPU s": num(r.get("cpu_s")),
                        "peak RSS MB": num(r.get("max_rss_mb")),
                        "notes": "best of %s; %s slices, %s events" % (r.get("reps"), r.get("slices"),
                                                                      r.get("events"))})
        elif b == "python_json_load":
            row.update({"bench": "python json.load (peer)", "MB": num(r.get("input_mb")),
                        "wall s": num(r.get("seconds")), "wall MB/s": num(r.get("mb_per_s")),
                        "CPU s": num(r.get("cpu_s")), "peak RSS MB": num(r.get("max_rss_mb")),
                        "notes": "best of %s" % r.get("reps", 1)})
        elif b == "import_vs_python":
            row.update({"bench": "ratio python / tftracer", "ratio": num(r.get("ratio")),
                        "notes": "wall, the two bests (best of %s each); CPU %s" % (r.get("reps", 1),
                                                                                   r.get("cpu_ratio"))})
        elif b == "import_store_threads_0":
            row.update({"bench": "import, store on the importing thread (peer)", "MB": num(r.get("input_mb")),
                        "wall s": num(r.get("seconds")), "wall MB/s": num(r.get("mb_per_s")),
                        "CPU s": num(r.get("cpu_s")), "ratio": num(r.get("ratio")),
                        "notes": "ratio: this peer's time / the import's (TFT_STORE_THREADS=0)"})
        elif b == "session_size":
            row.update({"bench": ".tft size", "B/slice": num(r.get("tft_bytes_per_slice")),
                        "notes": "JSON input: %s B/slice" % r.get("json_bytes_per_slice")
                        if inp in ("mtia",) or inp.startswith("gen_") else "input: %s B/slice"
                        % r.get("json_bytes_per_slice")})
        elif b == "export_chrome":
            row.update({"bench": "export chrome", "MB": num(r.get("output_mb")), "wall s": num(r.get("seconds")),
                        "wall MB/s": num(r.get("mb_per_s")), "CPU s": num(r.get("cpu_s")),
                        "peak RSS MB": num(r.get("max_rss_mb")), "notes": "MB of JSON written"})
        elif b == "store_write":
            row.update({"bench": "store write", "wall s": num(r.get("seconds")), "CPU s": num(r.get("cpu_s")),
                        "peak RSS MB": num(r.get("max_rss_mb")), "B/slice": num(r.get("bytes_per_slice")),
                        "notes": "%s slices, %.1f M slices/s" % (r.get("slices"), r.get("events_per_s", 0) / 1e6)})
        elif b == "store_read":
            tot = r.get("open_s", 0) + r.get("first_window_s", 0)
            row.update({"bench": "reopen + first window query", "wall s": "%.5f" % tot,
                        "notes": "open %s s + first window %s s" % (r.get("open_s"), r.get("first_window_s"))})
        elif b == "viewport_all":
            row.update({"bench": "viewport, all windows", "p99 ms": num(r.get("p99_ms")),
                        "notes": "%s queries, p50 %s ms; panning p50 %s, p99 %s ms" % (
                            r.get("queries"), r.get("p50_ms"), r.get("pan_p50_ms"), r.get("pan_p99_ms"))})
        elif b == "viewport_concurrency":
            row.update({"bench": "viewport, %s threads, %s" % (r.get("threads"), r.get("mode")),
                        "p99 ms": num(r.get("p99_ms")),
                        "notes": "%s queries/s, p50 %s ms" % (r.get("qps"), r.get("p50_ms"))})
        elif b == "stats_whole":
            row.update({"bench": "stats, whole session", "wall s": "%.4f" % (r.get("best_ms", 0) / 1e3),
                        "ratio": num(r.get("ratio")),
                        "notes": "best of 3, by name, %s events; cold %s ms; ratio: every event scanned "
                                 "(%s ms) / stored statistics" % (r.get("events"), r.get("cold_ms"), r.get("scan_ms"))})
        elif b == "stats_windows":
            row.update({"bench": "stats, windows (clipped)", "p99 ms": num(r.get("max_ms")),
                        "notes": "%s windows from the whole trace to 10 us, the slowest (p50 %s ms); "
                                 "scanned: up to %s ms" % (r.get("windows"), r.get("p50_ms"), r.get("scan_max_ms"))})
        elif b == "advise":
            row.update({"bench": "advise (CLI)", "wall s": num(r.get("seconds")), "CPU s": num(r.get("cpu_s")),
                        "peak RSS MB": num(r.get("max_rss_mb")),
                        "notes": "tftracer advise --json, best of %s; %s events, %s findings" % (
                            r.get("reps"), r.get("events"), r.get("findings"))})
        elif b == "advise_lib":
            row.update({"bench": "advise (library)", "wall s": "%.3f" % (r.get("best_ms", 0) / 1e3),
                        "notes": "tft_advise_run in one process, best of 3 (first %s ms); %s events, %s flows, "
                                 "%s steps" % (r.get("first_ms"), r.get("events"), r.get("flows"), r.get("steps"))})
        elif b == "runtime":
            runtime[r["case"]] = r
            row.update({"bench": r["case"], "ns/event": num(r.get("min")),
                        "notes": "min of %s batches of %s events (median %s)" % (r.get("batches"), r.get("n"),
                                                                              r.get("median"))})
        else:
            continue
        out.append(row)
    inst, bare = runtime.get("tft_instant (enabled)"), runtime.get("bare rdtsc+store loop")
    lt = runtime.get("lttng tracepoint (enabled)")
    if inst and bare:
        row = dict.fromkeys(COLS, "")
        row.update({"input": "runtime", "bench": "tft_instant / bare loop",
                    "ratio": "%.2f" % (inst["min"] / bare["min"]), "notes": "min / min, same run"})
        out.append(row)
    if inst:
        row = dict.fromkeys(COLS, "")
        row.update({"input": "runtime", "bench": "tft_instant / lttng tracepoint (enabled)"})
        if lt:
            row.update({"ratio": "%.3f" % (inst["min"] / lt["min"]), "notes": "min / min, same run"})
        else:
            row["notes"] = "not measured: no enabled LTTng session"
        out.append(row)
    return out


def table(rows):
    lines = ["| " + " | ".join(COLS) + " |",
             "|" + "|".join("---:" if c not in ("input", "bench", "notes") else "---" for c in COLS) + "|"]
    for r in rows:
        lines.append("| " + " | ".join(str(r[c]) for c in COLS) + " |")
    return "\n".join(lines)


def load(path, commit=None):
    lines = [json.loads(l) for l in open(path) if l.strip().startswith("{")]
    if not lines:
        raise SystemExit("%s: no result line" % path)
    commit = commit or lines[-1].get("commit")
    keep = {}
    for r in lines:
        if r.get("commit") == commit:
            key = (r.get("input"), r.get("bench"), r.get("case"), r.get("mode"))
            keep.pop(key, None)
            keep[key] = r
    return commit, list(keep.values())


def main(argv):
    commit = None
    if "--commit" in argv:
        i = argv.index("--commit")
        commit = argv[i + 1]
        del argv[i:i + 2]
    if argv:
        path = argv[0]
    else:
        files = sorted(glob.glob(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench",
                                              "results", "*.jsonl")))
        if not files:
            raise SystemExit("no bench/results/*.jsonl: run make bench")
        path = files[-1]
    commit, lines = load(path, commit)
    print("<!-- tools/bench_results.py: %s, commit %s -->" % (os.path.basename(path), commit))
    print(table(rows_of(lines)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
