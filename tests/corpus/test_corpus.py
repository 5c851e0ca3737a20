#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# Corpus test: every Chrome-trace-format file under $TFT_DATA is imported with
# the CLI and its `info --json` counts are compared with count_chrome.py's; every
# other JSON file there (no trace events: XProf tool outputs, execution traces) is
# a test too: the CLI must refuse it in one line. No file is dropped uncounted.
"""Usage: test_corpus.py [-j N] [--list] [SUBSTRING...]

Env: TFT_BIN (CLI, default build/tftracer), TFT_BIN_BIG (CLI for inputs over
TFT_ASAN_MAX_MB uncompressed, default TFT_BIN), TFT_DATA (default
../shared/data). One PASS/FAIL line per file: "corpus/REL" for a trace,
"corpus/not-a-trace/REL" for a JSON file without trace events. A missing corpus,
or one without a trace, is a failure."""
import multiprocessing
import os
import re
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import count_chrome  # noqa: E402
import tft_harness as H  # noqa: E402

# JSON files that are not Chrome traces (CATALOGUE.md format column). count_chrome.py
# must find no trace events in each (and trace events in every other file); the CLI
# must refuse each with one line naming it and a byte offset, exit 2, no session.
NOT_TRACE = ("op_profile", "memory_viewer", "overview_page", "input_pipeline", "pod_viewer",
             "xprof/golden/", "rocprof/", "_et.json", "google_cloud_trace", "memory_timeline")
EXTS = (".json", ".json.gz", ".gz")


def candidates(root):
    """Every file under root with a JSON or gzip name, traces or not."""
    out = []
    for dp, _, files in os.walk(root):
        for f in files:
            p = os.path.join(dp, f)
            rel = os.path.relpath(p, root)
            if f.endswith(EXTS):
                out.append(rel)
    return sorted(out)


def listed_not_trace(rel):
    return any(s in rel for s in NOT_TRACE)


def check_not_a_trace(path, why):
    """The CLI on a JSON file without trace events: exit 2, one stderr line naming
    the file and a byte offset, nothing written. Problems list."""
    tmp = tempfile.mkdtemp(prefix="tft-corpus-")
    try:
        r = H.run([H.bin_for(path), "import", path, "-o", os.path.join(tmp, "a.tft")], timeout=120)
        if r.crashed:
            return [r.why()]
        lines = r.err.strip().splitlines()
        probs = []
        if r.rc != 2:
            probs.append("import exit %d, want 2 (count_chrome.py: %s)" % (r.rc, why))
        if len(lines) != 1 or path not in lines[0] or not re.search(r"byte \d+", lines[0]):
            probs.append("stderr %r: want one line naming the file and a byte offset" % lines[:3])
        if os.listdir(tmp):
            probs.append("left %s" % os.listdir(tmp))
        return probs
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def catalogue_formats(root):
    """{relative path: expected info.format} from CATALOGUE.md's format column
    ("Kineto ..." -> kineto, "TF tf.timeline ..." -> tf_timeline, else chrome)."""
    out = {}
    try:
        with open(os.path.join(root, "CATALOGUE.md"), encoding="utf-8") as fp:
            for line in fp:
                cols = [c.strip() for c in line.split("|")]
                if len(cols) < 7 or not re.match(r"^`[^`]+`$", cols[1]):
                    continue
                fmt = cols[6]
                out[cols[1].strip("`")] = ("kineto" if "Kineto" in fmt else
                                           "tf_timeline" if "tf.timeline" in fmt else "chrome")
    except OSError:
        pass
    return out


def check_file(args):
    root, rel, want_format = args
    path = os.path.join(root, rel)
    try:
        want = count_chrome.count_file(path)
    except count_chrome.NotATrace as e:
        probs = check_not_a_trace(path, e)
        if not listed_not_trace(rel):
            probs.append("count_chrome.py finds no trace events (%s) but NOT_TRACE does not list it: "
                         "a trace the counter cannot count, or a new non-trace to list" % e)
        return rel, "not-a-trace", probs
    except (OSError, ValueError) as e:
        return rel, "fail", ["count_chrome cannot read it: %s" % e]
    if listed_not_trace(rel):
        return rel, "fail", ["NOT_TRACE lists it, but count_chrome.py counts %d slices in it"
                             % want["slices"]]
    binary = H.bin_for(path)
    tmp = tempfile.mkdtemp(prefix="tft-corpus-")
    try:
        out = os.path.join(tmp, "a.tft")
        try:
            H.cli_import(binary, path, out)
            info = H.cli_info(binary, out)
            probs = H.info_consistency(info)
            probs += H.diff_counts(info, want)
            if want_format and info.get("format") != want_format:
                probs.append("format %r, CATALOGUE.md says %s" % (info.get("format"), want_format))
            if not probs:
                stats = H.cli_stats(binary, out)
                rows = stats.get("rows")
                if not isinstance(rows, list):
                    probs.append("stats --json has no rows array")
                else:
                    # each execution once: the derived tracks' slices repeat others'
                    n = sum(int(r.get("count", 0)) for r in rows)
                    counted = sum(int(t["slices"]) for t in info["track_list"]
                                  if not t.get("derived"))
                    if n != counted:
                        probs.append("stats rows count %d != slices %d on the tracks not derived"
                                     % (n, counted))
                    if want["steps"]:
                        names = sorted((s.get("name") for s in info["step_list"]),
                                       key=lambda s: int(str(s).split("#")[-1])
                                       if str(s).split("#")[-1].isdigit() else -1)
                        if names != want["step_names"]:
                            probs.append("step names %s != %s" % (names[:4], want["step_names"][:4]))
        except H.CliError as e:
            probs = [str(e)]
        return rel, ("fail" if probs else "pass"), probs
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    argv = sys.argv[1:]
    jobs = int(os.environ.get("TFT_JOBS", "2"))
    if "-j" in argv:
        i = argv.index("-j")
        jobs = int(argv[i + 1])
        del argv[i:i + 2]
    list_only = "--list" in argv
    filters = [a for a in argv if not a.startswith("--")]
    root = H.data_dir()
    rep = H.Reporter("corpus")
    if not os.path.isdir(root):
        rep.fail("data", "no corpus at %s (set TFT_DATA)" % root)
        return rep.finish()
    files = [f for f in candidates(root) if not filters or any(s in f for s in filters)]
    if not files:
        rep.fail("data", "no JSON file under %s%s" % (root, " matching %s" % filters if filters else ""))
        return rep.finish()
    if list_only:
        for f in files:
            print(f)
        return 0
    H.note("corpus: %d candidate files under %s, CLI %s (big: %s)" %
           (len(files), root, H.tft_bin(), H.tft_bin_big()))
    # Largest first so the long ones overlap the many small ones.
    files.sort(key=lambda f: -H.est_size(os.path.join(root, f)))
    formats = catalogue_formats(root)
    results = {}
    with multiprocessing.Pool(max(1, jobs)) as pool:
        work = [(root, f, formats.get(f)) for f in files]
        for rel, status, probs in pool.imap_unordered(check_file, work):
            results[rel] = (status, probs)
    ntrace = nnot = 0
    for rel in sorted(results):
        status, probs = results[rel]
        name = rel
        if status == "not-a-trace":
            name = "not-a-trace/" + rel
            nnot += 1
        else:
            ntrace += 1
        if probs:
            rep.fail(name, "; ".join(probs))
        else:
            rep.ok(name)
    H.note("corpus: %d files: %d traces compared with count_chrome.py, %d without trace events "
           "refused by the CLI" % (len(results), ntrace, nnot))
    if len(results) != len(files):
        rep.fail("all-files", "%d candidate files, %d results" % (len(files), len(results)))
    return rep.finish()


if __name__ == "__main__":
    sys.exit(H.main_guard(main))
