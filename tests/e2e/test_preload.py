#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# libtftracer-preload.so in programs that are hard on it (src/intercept/preload.c,
# tests/e2e/progs/preload_cases.c), under `tftracer record` and on its own
# (LD_PRELOAD + TFT_SESSION): fork, threads that start and end, exec, a
# program that never uses what it intercepts, zones recorded from a signal
# handler, SIGKILL (the session still opens), a session it cannot create
# (one line on stderr, the program's output and status unchanged), no
# OpenCL platform (the same answers as without the library), and the ASan
# build of the library with the sanitizer runtime first in LD_PRELOAD.
"""Usage: test_preload.py"""
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
ASAN = os.environ.get("TFT_ASAN_DIR", "build-asan")
A = ASAN if os.path.isabs(ASAN) else os.path.join(ROOT, ASAN)
CLI = os.path.join(B, "tftracer")
PRELOAD = os.path.join(B, "libtftracer-preload.so")
PYTHON = "/usr/bin/python3"
SUITE = "preload"
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


def info(sess):
    r = subprocess.run([CLI, "info", "--json", sess], capture_output=True, text=True, timeout=120)
    if r.returncode:
        raise RuntimeError("info %s: %s" % (sess, r.stderr.strip()))
    return json.loads(r.stdout)


def meta(sess):
    db = sqlite3.connect("file:%s?mode=ro" % sess, uri=True)
    try:
        return dict(db.execute("SELECT key, value FROM meta").fetchall())
    finally:
        db.close()


def slice_names(sess, tmp):
    out = os.path.join(tmp, "names.json")
    r = subprocess.run([CLI, "export", sess, "-f", "chrome", "-q", "-o", out], capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError("export: " + r.stderr)
    d = json.load(open(out))
    ev = d["traceEvents"] if isinstance(d, dict) else d
    names = {}
    for e in ev:
        if e.get("ph") == "X":
            names[e["name"]] = names.get(e["name"], 0) + 1
    return names


def record(tmp, sess, cmd, env=None, timeout=300):
    return subprocess.run([CLI, "record", "-q", "--port", "0", "-o", sess, "--"] + cmd, capture_output=True,
                          text=True, cwd=tmp, env=env, timeout=timeout)


def own_lines(stderr):
    return [l for l in stderr.splitlines() if l.startswith("tftracer:")]


def case_fork(tmp, exe):
    p = []
    sess = os.path.join(tmp, "fork.tft")
    r = record(tmp, sess, [exe, "fork"])
    if r.returncode or r.stdout.strip() != "fork 20 child 7":
        return check("fork", ["exit %d, said %r: %s" % (r.returncode, r.stdout, r.stderr[-300:])])
    names, m = slice_names(sess, tmp), meta(sess)
    if names.get("inc") != 20 or names.get("before_fork") != 1 or names.get("after_fork") != 1:
        p.append("slices %r (the kernels before and after the fork, once each)" % names)
    if "in_child" in names:
        p.append("the fork child recorded into its parent's session")
    if int(m.get("opencl_commands") or 0) != 20 or int(m.get("dropped") or 0):
        p.append("meta %r" % {k: m.get(k) for k in ("opencl_commands", "dropped")})
    if own_lines(r.stderr):
        p.append("said %r" % own_lines(r.stderr))
    check("fork", p)


def case_threads(tmp, exe):
    p = []
    sess = os.path.join(tmp, "threads.tft")
    r = record(tmp, sess, [exe, "threads"])
    if r.returncode or r.stdout.strip() != "threads 160":
        return check("threads", ["exit %d, said %r: %s" % (r.returncode, r.stdout, r.stderr[-300:])])
    j, names, m = info(sess), slice_names(sess, tmp), meta(sess)
    threads = [t for t in j["track_list"] if t["kind"] == "thread"]
    if len(threads) != 32:  # 8 waves of 4 threads, each its own track
        p.append("%d thread tracks, want 32" % len(threads))
    if names.get("inc") != 160 or names.get("in_thread") != 32 or names.get("clEnqueueNDRangeKernel") != 160:
        p.append("slices %r" % names)
    if int(m.get("opencl_commands") or 0) != 160 or j["dropped"] or j["unmatched_flows"] or j["flows"] != 160:
        p.append("commands %s, dropped %d, flows %d (%d unmatched)" % (m.get("opencl_commands"), j["dropped"],
                                                                       j["flows"], j["unmatched_flows"]))
    check("threads", p)


def case_exec(tmp, exe):
    """The session closes before exec (complete, its commands all there); the new image runs
    untraced (the session is taken), says so in one line, and its status comes back."""
    p = []
    sess = os.path.join(tmp, "exec.tft")
    r = record(tmp, sess, [exe, "exec"])
    if r.returncode != 9 or r.stdout.split() != ["exec", "12", "exec2", "6"]:
        return check("exec", ["exit %d, said %r: %s" % (r.returncode, r.stdout, r.stderr[-300:])])
    lines = own_lines(r.stderr)
    if len(lines) != 1 or "runs untraced" not in lines[0]:
        p.append("said %r" % lines)
    if os.path.exists(sess + "-wal") and os.path.getsize(sess + "-wal"):
        p.append("the session was left open (a WAL) at exec")
    names, m = slice_names(sess, tmp), meta(sess)
    if names.get("inc") != 12 or names.get("before_exec") != 1 or "after_exec" in names:
        p.append("slices %r" % names)
    if int(m.get("opencl_commands") or 0) != 12 or int(m.get("opencl_incomplete") or 0):
        p.append("meta %r" % m)
    check("exec", p)


def case_none(tmp, exe):
    """Programs that never use the runtime or OpenCL: same output and status; a session of the run."""
    p = []
    sess = os.path.join(tmp, "none.tft")
    r = record(tmp, sess, [exe, "none"])
    if r.returncode != 5 or not r.stdout.startswith("none "):
        p.append("linked with the runtime: exit %d, said %r" % (r.returncode, r.stdout))
    elif info(sess)["processes"] != 1:
        p.append("linked with the runtime: no process in the session")
    sess = os.path.join(tmp, "none-py.tft")
    r = record(tmp, sess, [PYTHON, "-c", "import sys; print(sum(range(10))); sys.exit(4)"])
    if r.returncode != 4 or r.stdout.strip() != "45":
        p.append("python: exit %d, said %r" % (r.returncode, r.stdout))
    elif not os.path.exists(sess):
        p.append("python without PyTorch: no session")
    else:
        j = info(sess)
        out = os.path.join(tmp, "none.json")
        subprocess.run([CLI, "export", sess, "-f", "chrome", "-q", "-o", out], check=True)
        d = json.load(open(out))
        ev = [e for e in (d["traceEvents"] if isinstance(d, dict) else d) if e.get("ph") == "X"]
        if j["format"] != "tftracer-record" or len(ev) != 1 or ev[0]["args"].get("exit_status") != 4 \
                or "import sys" not in ev[0]["args"].get("command", "") or ev[0]["args"].get("user_time_ns") is None:
            p.append("the run's session: %r %r" % (j["format"], ev[:1]))
    # on its own: no session wanted, nothing written, nothing said
    env = dict(os.environ, LD_PRELOAD=PRELOAD)
    env.pop("TFT_SESSION", None)
    r = subprocess.run(["sh", "-c", "echo hi; exit 6"], capture_output=True, text=True, cwd=tmp, env=env)
    if r.returncode != 6 or r.stdout != "hi\n" or r.stderr or [f for f in os.listdir(tmp) if f.startswith("tftracer-")]:
        p.append("sh under the library alone: exit %d %r %r %r" % (r.returncode, r.stdout, r.stderr, os.listdir(tmp)))
    check("none", p)


def case_signal(tmp, exe):
    """Zones from a 1 ms SIGALRM handler: each recorded, or dropped and counted (interrupting a recording call)."""
    p = []
    sess = os.path.join(tmp, "signal.tft")
    r = record(tmp, sess, [exe, "signal"])
    parts = r.stdout.split()
    if r.returncode or len(parts) != 4 or parts[0] != "signal":
        return check("signal", ["exit %d, said %r: %s" % (r.returncode, r.stdout, r.stderr[-300:])])
    n, ticks = int(parts[1]), int(parts[3])
    names, j, m = slice_names(sess, tmp), info(sess), meta(sess)
    got = names.get("in_handler", 0)
    if got + j["dropped"] // 2 != ticks or j["dropped"] % 2:
        p.append("handler zones %d + dropped %d/2, ticks %d" % (got, j["dropped"], ticks))
    if got < ticks // 2:
        p.append("only %d of %d handler zones recorded" % (got, ticks))
    if names.get("inc") != n or int(m.get("opencl_commands") or 0) != n:
        p.append("kernels %s / %s, want %d" % (names.get("inc"), m.get("opencl_commands"), n))
    check("signal", p)


def case_kill(tmp, exe):
    """SIGKILL after a flush: the session opens, with everything flushed."""
    p = []
    sess = os.path.join(tmp, "kill.tft")
    r = record(tmp, sess, [exe, "kill"])
    if r.returncode != 137 or r.stdout.strip() != "kill 20 flush 0":
        return check("kill", ["exit %d, said %r: %s" % (r.returncode, r.stdout, r.stderr[-300:])])
    names = slice_names(sess, tmp)
    if names.get("inc") != 20 or names.get("clEnqueueNDRangeKernel") != 20:
        p.append("after SIGKILL: %r" % names)
    check("kill", p)


def case_untraceable(tmp, exe):
    """A session it cannot create: one line, then the program exactly as without the library."""
    p = []
    plain = subprocess.run([exe, "fork"], capture_output=True, text=True, cwd=tmp)
    bad = os.path.join(tmp, "no-such-dir", "x.tft")
    r = record(tmp, bad, [exe, "fork"])
    lines = own_lines(r.stderr)
    if r.returncode != plain.returncode or r.stdout != plain.stdout:
        p.append("under record: exit %d %r, without: %d %r" % (r.returncode, r.stdout, plain.returncode, plain.stdout))
    if len([l for l in lines if "runs untraced" in l]) != 1:
        p.append("said %r" % lines)
    env = dict(os.environ, LD_PRELOAD=PRELOAD, TFT_SESSION=bad)
    r = subprocess.run([exe, "fork"], capture_output=True, text=True, cwd=tmp, env=env)
    lines = r.stderr.strip().splitlines()
    if r.returncode != plain.returncode or r.stdout != plain.stdout or len(lines) != 1 \
            or "runs untraced: cannot create session" not in lines[0]:
        p.append("alone: exit %d %r %r" % (r.returncode, r.stdout, r.stderr))
    # no OpenCL platform at all: the same answers as without the library
    dl = os.path.join(tmp, "ocl_dlopen")
    if subprocess.run(["cc", "-O2", "-o", dl, os.path.join(HERE, "progs", "ocl_dlopen.c"), "-ldl"]).returncode == 0:
        empty = os.path.join(tmp, "no-icds")
        os.makedirs(empty, exist_ok=True)
        base = dict(os.environ, OCL_ICD_VENDORS=empty)
        a = subprocess.run([dl, "2"], capture_output=True, text=True, env=base)
        b = subprocess.run([dl, "2"], capture_output=True, text=True,
                           env=dict(base, LD_PRELOAD=PRELOAD, TFT_SESSION=os.path.join(tmp, "noplat.tft")))
        if (a.returncode, a.stdout, a.stderr) != (b.returncode, b.stdout, b.stderr):
            p.append("no platform: %r vs %r" % ((a.returncode, a.stdout, a.stderr), (b.returncode, b.stdout, b.stderr)))
    else:
        p.append("could not build ocl_dlopen")
    check("untraceable", p)


def case_alone(tmp, exe):
    """LD_PRELOAD and TFT_SESSION, without record."""
    p = []
    sess = os.path.join(tmp, "alone.tft")
    env = dict(os.environ, LD_PRELOAD=PRELOAD, TFT_SESSION=sess)
    r = subprocess.run([exe, "threads"], capture_output=True, text=True, cwd=tmp, env=env, timeout=300)
    if r.returncode or r.stdout.strip() != "threads 160" or r.stderr:
        return check("alone", ["exit %d %r %r" % (r.returncode, r.stdout, r.stderr)])
    m = meta(sess)
    if int(m.get("opencl_commands") or 0) != 160:
        p.append("meta %r" % m)
    check("alone", p)


def case_asan(tmp):
    """The ASan build of the library, with the sanitizer runtime first in LD_PRELOAD."""
    lib = os.path.join(A, "libtftracer-preload.so")
    if not os.path.exists(lib):
        return emit("SKIP", "asan", "no %s (make ASAN=1 O=%s preload)" % (lib, ASAN))
    rt = subprocess.run(["gcc", "-print-file-name=libasan.so"], capture_output=True, text=True).stdout.strip()
    if not os.path.exists(rt):
        return emit("SKIP", "asan", "no libasan.so")
    p = []
    exe = os.path.join(tmp, "ocl_multi_asan")
    r = subprocess.run(["cc", "-O2", "-I" + os.path.join(ROOT, "include"), "-o", exe,
                        os.path.join(HERE, "progs", "ocl_multi.c"), "-lOpenCL", "-L" + B, "-l:libtftracer.so",
                        "-Wl,-rpath," + B, "-lpthread"], capture_output=True, text=True)
    if r.returncode:
        return check("asan", ["cc: " + r.stderr[-300:]])
    sess = os.path.join(tmp, "asan.tft")
    env = dict(os.environ, LD_PRELOAD=rt + ":" + lib, TFT_SESSION=sess,
               ASAN_OPTIONS="detect_leaks=0:halt_on_error=1:abort_on_error=0")
    r = subprocess.run([exe, os.path.join(tmp, "asan.json"), "-s", "2", "--threads", "2"], capture_output=True,
                       text=True, cwd=tmp, env=env, timeout=600)
    if r.returncode or "ERROR: AddressSanitizer" in r.stderr or "runtime error:" in r.stderr:
        return check("asan", ["exit %d: %s" % (r.returncode, r.stderr[-600:])])
    m = meta(sess)
    if int(m.get("opencl_commands") or 0) != 2 * 2 * 11 or int(m.get("dropped") or 0):
        p.append("meta %r" % {k: m.get(k) for k in ("opencl_commands", "dropped")})
    check("asan", p)


def main():
    if not os.access(CLI, os.X_OK) or not os.path.exists(PRELOAD):
        emit("FAIL", "build", "%s or %s missing" % (CLI, PRELOAD))
        return 1
    tmp = tempfile.mkdtemp(prefix="tft-preload-test-")
    try:
        exe = os.path.join(tmp, "preload_cases")
        r = subprocess.run(["cc", "-O2", "-I" + os.path.join(ROOT, "include"), "-o", exe,
                            os.path.join(HERE, "progs", "preload_cases.c"), "-lOpenCL", "-L" + B,
                            "-l:libtftracer.so", "-Wl,-rpath," + B, "-lpthread"], capture_output=True, text=True)
        if r.returncode:
            emit("FAIL", "build-programs", r.stderr[-400:])
            return 1
        for name, fn, args in (("fork", case_fork, (exe,)), ("threads", case_threads, (exe,)),
                               ("exec", case_exec, (exe,)), ("none", case_none, (exe,)),
                               ("signal", case_signal, (exe,)), ("kill", case_kill, (exe,)),
                               ("untraceable", case_untraceable, (exe,)), ("alone", case_alone, (exe,)),
                               ("asan", case_asan, ())):
            t = time.monotonic()
            sub = os.path.join(tmp, name)
            os.makedirs(sub)
            try:
                fn(sub, *args)
            except Exception as e:
                emit("FAIL", name, "%s: %s" % (type(e).__name__, e))
            print("# %s: %.1f s" % (name, time.monotonic() - t), flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
