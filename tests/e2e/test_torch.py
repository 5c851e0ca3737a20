#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# Real PyTorch traces: generate fixtures with tests/python/gen_torch_trace.py
# (Debian python3-torch) in a temp dir, import them, check steps/ops/counts, round-trip.
"""Usage: test_torch.py   SKIP lines (not PASS) when torch is not importable."""
import json
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "corpus"))
import count_chrome  # noqa: E402
import tft_harness as H  # noqa: E402

GEN = os.path.join(HERE, "..", "python", "gen_torch_trace.py")
PYTHON = os.environ.get("TFT_TORCH_PYTHON", "/usr/bin/python3")


def check_fixture(rep, binary, tmp, fx):
    name = fx["file"]
    path = os.path.join(tmp, name)
    want = count_chrome.count_file(path)
    probs = []
    out = os.path.join(tmp, name + ".tft")
    try:
        H.cli_import(binary, path, out)
        info = H.cli_info(binary, out)
        probs += H.info_consistency(info)
        probs += H.diff_counts(info, want)
        if info.get("steps") != fx["steps"]:
            probs.append("steps %s, profiled %d" % (info.get("steps"), fx["steps"]))
        names = {r.get("name") for r in H.cli_stats(binary, out).get("rows", [])}
        missing = [op for op in fx["ops"] if op not in names]
        if missing:
            probs.append("ops missing from stats: %s" % ", ".join(missing))
    except H.CliError as e:
        probs.append(str(e))
    rep.check(name, probs)
    rt = os.path.join(tmp, "rt-" + name)
    os.mkdir(rt)
    rep.check(name + ":roundtrip", H.roundtrip(binary, path, rt))


def main():
    rep = H.Reporter("torch")
    tmp = tempfile.mkdtemp(prefix="tft-torch-")
    try:
        r = H.run([PYTHON, GEN, tmp], timeout=300)
        if r.rc == 77:
            rep.skip("fixtures", "torch not importable by %s" % PYTHON)
            return rep.finish()
        if r.rc != 0:
            rep.fail("fixtures", "gen_torch_trace.py failed: " + r.why() + " " +
                     " | ".join(r.err.strip().splitlines()[-3:]))
            return rep.finish()
        with open(os.path.join(tmp, "manifest.json")) as fp:
            manifest = json.load(fp)
        H.note("torch %s fixtures: %s" % (manifest["torch"],
                                           ", ".join(f["file"] for f in manifest["fixtures"])))
        for fx in manifest["fixtures"]:
            check_fixture(rep, H.tft_bin(), tmp, fx)
        # All training windows into one session: steps add up.
        train = [os.path.join(tmp, f["file"]) for f in manifest["fixtures"]
                 if f["file"].startswith("mlp_train_")]
        both = os.path.join(tmp, "all_train.tft")
        try:
            H.cli_import(H.tft_bin(), train, both)
            info = H.cli_info(H.tft_bin(), both)
            want = sum(f["steps"] for f in manifest["fixtures"] if f["file"].startswith("mlp_train_"))
            rep.check("multi-file-import", [] if info.get("steps") == want else
                      ["steps %s != %d over %d files" % (info.get("steps"), want, len(train))])
        except H.CliError as e:
            rep.fail("multi-file-import", str(e))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return rep.finish()


if __name__ == "__main__":
    sys.exit(H.main_guard(main))
