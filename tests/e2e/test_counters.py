#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# `tftracer record --counters` (src/intercept/counters.c, perf.c): on a program
# whose work is known (tests/e2e/progs/counters_prog.c), the counters the
# kernel grants are recorded per zone (args on the slice: page faults of the
# zone that touches 8 MiB, task-clock of the one that spins 20 ms, a context
# switch for the one that sleeps) and per process (counter tracks sampled at
# every step boundary, so a step's count is the difference); the ones it
# refuses are said once for the whole command, with why, and named in the
# session's meta. Run as root and as an unprivileged user (the kernel's share
# of the counters refused: user space only, marked ":u").
"""Usage: test_counters.py"""
import collections
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
BUILD = os.environ.get("TFT_BUILD_DIR", "build")
B = BUILD if os.path.isabs(BUILD) else os.path.join(ROOT, BUILD)
CLI = os.path.join(B, "tftracer")
LIBDIR = B  # where the program finds libtftracer.so (main() copies it)
SUITE = "counters"
ALL = ["cycles", "instructions", "cache-misses", "branch-misses", "task-clock", "page-faults",
       "context-switches"]
nfail = 0


def emit(kind, name, reason=None):
    global nfail
    line = "%s %s/%s" % (kind, SUITE, name)
    if reason:
        line += " (%s)" % " ".join(str(reason).split())[:700]
    if kind == "FAIL":
        nfail += 1
    print(line, flush=True)


def check(name, problems):
    emit("FAIL" if problems else "PASS", name, "; ".join(problems[:8]) if problems else None)


def meta(sess):
    db = sqlite3.connect("file:%s?mode=ro" % sess, uri=True)
    try:
        return dict(db.execute("SELECT key, value FROM meta").fetchall())
    finally:
        db.close()


def load(sess, tmp):
    out = os.path.join(tmp, os.path.basename(sess) + ".json")
    r = subprocess.run([CLI, "export", sess, "-f", "chrome", "-q", "-o", out], capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError("export: " + r.stderr)
    d = json.load(open(out))
    ev = d["traceEvents"] if isinstance(d, dict) else d
    zones = collections.defaultdict(list)
    tracks = collections.defaultdict(list)
    for e in ev:
        if e.get("ph") == "X":
            zones[e["name"]].append(e.get("args") or {})
        elif e.get("ph") == "C":
            tracks[e["name"]].append((round(e["ts"] * 1000), list(e["args"].values())[0]))
    j = json.loads(subprocess.run([CLI, "info", "--json", sess], capture_output=True, text=True, check=True).stdout)
    return zones, tracks, j


def at(samples, ts):
    """The counter's value at ts: the last sample at or before it."""
    v = None
    for t, x in samples:
        if t <= ts:
            v = x
    return v


def check_run(sess, tmp, stderr, p, steps):
    m = meta(sess)
    rec = [c for c in (m.get("counters") or "").split(",") if c]
    names = [c.split(":")[0] for c in rec]
    refused = m.get("counters_refused") or ""
    said = [l for l in stderr.splitlines() if "counters not recorded" in l]
    # every counter asked for: recorded, or refused with why, and said once
    for c in ALL:
        if (c in names) == (c + ":" in refused):
            p.append("%s: recorded %s, refused %s" % (c, c in names, c + ":" in refused))
    if refused:
        if len(said) != 1 or any(c.split(":")[0] + ":" not in said[0] for c in refused.split("; ")):
            p.append("refusals said %d times: %r" % (len(said), said))
        if not all(("not supported" in r or "not permitted" in r) for r in refused.split("; ")):
            p.append("refusals without a reason: %r" % refused)
    elif said:
        p.append("said %r with nothing refused" % said)
    for c in ("task-clock", "page-faults", "context-switches"):
        if c not in names:
            p.append("the OS counter %s was not recorded (%s)" % (c, refused))
    zones, tracks, j = load(sess, tmp)
    if len(zones.get("touch", [])) != steps or len(zones.get("spin", [])) != steps:
        return p.append("zones %r" % {k: len(v) for k, v in zones.items()})
    # every touch zone, the thread's first included (its group opened at its begin), counts
    # each of its 2048 fresh pages (huge pages off for them), plus a few faults of the
    # runtime's own (a ring page); a group whose members joined a running leader counted
    # 0 or 1476-2047 there until the thread was next scheduled in
    for a in zones["touch"]:
        if not 2048 <= a.get("perf.page-faults", -1) <= 2048 + 64:
            p.append("touch (2048 fresh pages): page faults %r" % a.get("perf.page-faults"))
    for a in zones["spin"]:
        if not 15e6 <= a.get("perf.task-clock", -1) <= 200e6:
            p.append("spin (20 ms of CPU): task-clock %r" % a.get("perf.task-clock"))
        if "instructions" in names and a.get("perf.instructions", 0) < 1e6:
            p.append("spin: instructions %r" % a.get("perf.instructions"))
    kernel_too = "context-switches" in rec  # (not "context-switches:u": the kernel's share refused)
    for a in zones["sleep"]:
        if a.get("perf.task-clock", 1e9) > 10e6 or (kernel_too and a.get("perf.context-switches", 0) < 1):
            p.append("sleep (20 ms): task-clock %r, context switches %r" % (a.get("perf.task-clock"),
                                                                           a.get("perf.context-switches")))
    # counter tracks: monotonic, sampled at each step boundary; a step's difference
    for c in names:
        s = tracks.get("perf." + c, [])
        if len(s) < 2 * steps or any(b[1] < a[1] for a, b in zip(s, s[1:])):
            p.append("track perf.%s: %d samples, monotonic %s" % (c, len(s), all(b[1] >= a[1] for a, b in zip(s, s[1:]))))
    for st in j["step_list"]:
        t0, t1 = st["start_ns"], st["start_ns"] + st["dur_ns"]
        pf = tracks.get("perf.page-faults", [])
        tc = tracks.get("perf.task-clock", [])
        if pf and (at(pf, t1) or 0) - (at(pf, t0) or 0) < 1500:
            p.append("step %d: page faults %r" % (st["index"], (at(pf, t1) or 0) - (at(pf, t0) or 0)))
        if tc and (at(tc, t1) or 0) - (at(tc, t0) or 0) < 15e6:
            p.append("step %d: task-clock %r" % (st["index"], (at(tc, t1) or 0) - (at(tc, t0) or 0)))


def case_root(tmp, exe):
    p = []
    sess = os.path.join(tmp, "c.tft")
    # three processes of the command load the library (sh, true, the program sh execs): the
    # program takes the session, and the refusals are said once
    r = subprocess.run([CLI, "record", "-q", "-o", sess, "--counters", "--", "sh", "-c",
                        "true && exec '%s' 4" % exe], capture_output=True, text=True, cwd=tmp, timeout=300)
    if r.returncode or "done 4" not in r.stdout:
        return check("root", ["exit %d %r: %s" % (r.returncode, r.stdout, r.stderr[-400:])])
    if os.geteuid() != 0:
        return emit("SKIP", "root", "not root")
    check_run(sess, tmp, r.stderr, p, 4)
    check("root", p)


def case_user(tmp, exe):
    """As nobody: the kernel's share is not permitted (perf_event_paranoid >= 2): user space only."""
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        return emit("SKIP", "user", "needs root and setpriv to run as nobody")
    p = []
    os.chmod(tmp, 0o777)
    sess = os.path.join(tmp, "u.tft")
    r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", CLI, "record", "-q",
                        "-o", sess, "--counters", "--", exe, "3"], capture_output=True, text=True, cwd=tmp,
                       timeout=300)
    if r.returncode or "done 3" not in r.stdout:
        return check("user", ["exit %d %r: %s" % (r.returncode, r.stdout, r.stderr[-400:])])
    m = meta(sess)
    paranoid = int(open("/proc/sys/kernel/perf_event_paranoid").read())
    if paranoid >= 2 and ":u" not in (m.get("counters") or ""):
        p.append("paranoid %d: counters %r, want user space only (:u)" % (paranoid, m.get("counters")))
    check_run(sess, tmp, r.stderr, p, 3)
    check("user", p)


def case_alone(tmp, exe):
    """The library on its own (TFT_COUNTERS): it says the refusals itself, once."""
    p = []
    sess = os.path.join(tmp, "a.tft")
    env = dict(os.environ, LD_PRELOAD=os.path.join(LIBDIR, "libtftracer-preload.so"), TFT_SESSION=sess,
               TFT_COUNTERS="all", TFT_PRELOAD_START="load")
    r = subprocess.run([exe, "2"], capture_output=True, text=True, cwd=tmp, env=env, timeout=300)
    if r.returncode:
        return check("alone", ["exit %d: %s" % (r.returncode, r.stderr[-300:])])
    m = meta(sess)
    said = [l for l in r.stderr.splitlines() if "counters not recorded" in l]
    if bool(m.get("counters_refused")) != (len(said) == 1) or len(said) > 1:
        p.append("refused %r, said %r" % (m.get("counters_refused"), said))
    check_run(sess, tmp, r.stderr, p, 2)
    check("alone", p)


def case_usage(tmp, exe):
    p = []
    r = subprocess.run([CLI, "record", "--counters=cycles,bogus", "--", "true"], capture_output=True, text=True)
    if r.returncode != 2 or "bogus" not in r.stderr:
        p.append("--counters=bogus: exit %d %r" % (r.returncode, r.stderr))
    sess = os.path.join(tmp, "n.tft")
    r = subprocess.run([CLI, "record", "-q", "-o", sess, "--", exe, "1"], capture_output=True, text=True, cwd=tmp)
    zones, tracks, _ = load(sess, tmp)
    if tracks or any(k.startswith("perf.") for a in zones.get("spin", []) for k in a):
        p.append("counters without --counters: %r" % list(tracks))
    check("usage", p)


def main():
    global CLI, LIBDIR
    if not os.access(CLI, os.X_OK):
        emit("FAIL", "build", "%s missing" % CLI)
        return 1
    tmp = tempfile.mkdtemp(prefix="tft-counters-test-")
    os.chmod(tmp, 0o755)
    try:
        # The CLI and its libraries copied where the "user" case's nobody can reach them
        # (a checkout in a 0700 directory, as mktemp -d makes, is not)
        LIBDIR = os.path.join(tmp, "bin")
        os.makedirs(LIBDIR)
        os.chmod(LIBDIR, 0o755)
        for f in ("tftracer", "libtftracer.so", "libtftracer-preload.so"):
            shutil.copy2(os.path.join(B, f), LIBDIR)
        CLI = os.path.join(LIBDIR, "tftracer")
        exe = os.path.join(tmp, "counters_prog")
        r = subprocess.run(["cc", "-O2", "-I" + os.path.join(ROOT, "include"), "-o", exe,
                            os.path.join(HERE, "progs", "counters_prog.c"), "-L" + LIBDIR, "-l:libtftracer.so",
                            "-Wl,-rpath," + LIBDIR], capture_output=True, text=True)
        if r.returncode:
            emit("FAIL", "build-programs", r.stderr[-400:])
            return 1
        for name, fn in (("root", case_root), ("user", case_user), ("alone", case_alone), ("usage", case_usage)):
            t = time.monotonic()
            sub = os.path.join(tmp, name)
            os.makedirs(sub)
            try:
                fn(sub, exe)
            except Exception as e:
                emit("FAIL", name, "%s: %s" % (type(e).__name__, e))
            print("# %s: %.1f s" % (name, time.monotonic() - t), flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
