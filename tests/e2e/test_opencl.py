#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# OpenCL from below (src/intercept/opencl.c) on Debian's PoCL CPU device: real
# programs built here (tests/e2e/progs/), run under `tftracer record`, checked
# against what they say they enqueued: every command once on its queue's
# gpu_stream track, named by its kernel, in enqueue order on in-order queues,
# with the zone open at its enqueue as `op`, device times inside their API
# calls' windows, launch flows, nothing dropped; the program's own queue
# queries answered as it made the queues; several threads; a program that
# dlopen()s libOpenCL; a Python (pyopencl) program with tftracer zones;
# --no-intercept and --intercept without opencl.
"""Usage: test_opencl.py"""
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
PYTHON = "/usr/bin/python3"
SUITE = "opencl"
nfail = 0

# the API function of each command kind the programs enqueue
API = {"WriteBuffer": "clEnqueueWriteBuffer", "FillBuffer": "clEnqueueFillBuffer",
       "ReadBuffer": "clEnqueueReadBuffer", "CopyBuffer": "clEnqueueCopyBuffer",
       "MapBuffer": "clEnqueueMapBuffer", "UnmapMemObject": "clEnqueueUnmapMemObject",
       "Marker": "clEnqueueMarkerWithWaitList"}
CL_QUEUE_PROPERTIES = 0x1093


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


def build(tmp, name, extra):
    out = os.path.join(tmp, name)
    r = subprocess.run(["cc", "-O2", "-I" + os.path.join(ROOT, "include"), "-o", out,
                        os.path.join(HERE, "progs", name + ".c")] + extra,
                       capture_output=True, text=True, timeout=300)
    if r.returncode:
        raise RuntimeError("cc %s: %s" % (name, r.stderr[-400:]))
    return out


def build_multi(tmp):
    return build(tmp, "ocl_multi", ["-lOpenCL", "-L" + B, "-l:libtftracer.so", "-Wl,-rpath," + B, "-lpthread"])


def record(tmp, sess, cmd, extra=(), env=None, timeout=300):
    r = subprocess.run([CLI, "record", "-q", "--port", "0", "-o", sess] + list(extra) + ["--"] + cmd,
                       capture_output=True, text=True, cwd=tmp, env=env, timeout=timeout)
    return r


def meta(sess):
    db = sqlite3.connect("file:%s?mode=ro" % sess, uri=True)
    try:
        return dict(db.execute("SELECT key, value FROM meta").fetchall())
    finally:
        db.close()


def info(sess):
    r = subprocess.run([CLI, "info", "--json", sess], capture_output=True, text=True, timeout=120)
    if r.returncode:
        raise RuntimeError("info: " + r.stderr.strip())
    return json.loads(r.stdout)


class Trace:
    """The Chrome export of a session: slices per track, flows, track names."""

    def __init__(self, sess, tmp):
        self.tids = {t["tid"] for t in info(sess)["track_list"] if t["kind"] == "thread"}
        out = os.path.join(tmp, os.path.basename(sess) + ".json")
        r = subprocess.run([CLI, "export", sess, "-f", "chrome", "-q", "-o", out],
                           capture_output=True, text=True, timeout=120)
        if r.returncode:
            raise RuntimeError("export: " + r.stderr.strip())
        d = json.load(open(out))
        ev = d["traceEvents"] if isinstance(d, dict) else d
        self.names = {}
        self.slices = collections.defaultdict(list)
        self.flows = collections.defaultdict(dict)
        for e in ev:
            ph = e.get("ph")
            if ph == "M" and e.get("name") == "thread_name":
                self.names[(e["pid"], e["tid"])] = e["args"]["name"]
            elif ph == "X":
                ts = round(e["ts"] * 1000)
                self.slices[(e["pid"], e["tid"])].append(
                    {"name": e["name"], "ts": ts, "end": ts + round(e.get("dur", 0) * 1000),
                     "args": e.get("args") or {}})
            elif ph in ("s", "f"):
                self.flows[e["id"]][ph] = ((e["pid"], e["tid"]), round(e["ts"] * 1000), e.get("name"))
        for v in self.slices.values():
            v.sort(key=lambda s: (s["ts"], -s["end"]))

    def queues(self):
        """{queue ordinal: track key} of the OpenCL tracks."""
        q = {}
        for k, n in self.names.items():
            if n.startswith("OpenCL ") and " queue " in n:
                q[int(n.split(" queue ")[1].split()[0])] = k
        return q

    def threads(self):
        """The thread tracks (not the queues, not the steps' track)."""
        return [k for k, n in self.names.items() if not n.startswith("OpenCL ") and k[1] in self.tids]


def read_manifest(path):
    cmds, props = [], {}
    for line in open(path):
        o = json.loads(line)
        if "name" in o:
            cmds.append(o)
        else:
            props.update(o)
    return cmds, props


def check_commands(tr, cmds, m, p, ooo=(), steps=None):
    """Every command of the manifest once on its queue, in order, with its op; device
    times inside the API windows; flows; counts."""
    queues = tr.queues()
    api_all = []
    for k in tr.threads():
        api_all += [s for s in tr.slices[k] if s["name"].startswith("cl")]
    api_all.sort(key=lambda s: s["ts"])
    err = 0
    for key in ("opencl_clock.0",):
        v = m.get(key, "")
        if "error_ns=" not in v:
            p.append("no clock offset stated (%s): %r" % (key, v))
        else:
            err = int(v.split("error_ns=")[1].split()[0])
            if err > 2_000_000:
                p.append("clock offset error %d ns" % err)
    tol = err + 1000
    by_queue = collections.defaultdict(list)
    for c in cmds:
        by_queue[c["queue"]].append(c)
    if sorted(queues) != sorted(by_queue):
        p.append("queue tracks %r, the program's queues %r" % (sorted(queues), sorted(by_queue)))
    launches = set()
    for q, want in by_queue.items():
        got = tr.slices.get(queues.get(q), [])
        names_got = [(s["name"], s["args"].get("op", "")) for s in got]
        names_want = [(c["name"], c["zone"]) for c in want]
        if q in ooo:
            if sorted(names_got) != sorted(names_want):
                p.append("queue %d (out of order): %r, want %r" % (q, sorted(names_got)[:6], sorted(names_want)[:6]))
        elif names_got != names_want:
            p.append("queue %d: %r ..., want %r ..." % (q, names_got[:6], names_want[:6]))
        for s in got:
            launches.add(s["args"].get("launch"))
            qd = s["args"].get("queued_ns")
            api = API.get(s["name"], "clEnqueueNDRangeKernel")
            win = [a for a in api_all if a["name"] == api and a["ts"] - tol <= qd <= a["end"] + tol]
            if not win:
                p.append("%s on queue %d: queued at %s, inside no %s" % (s["name"], q, qd, api))
                continue
            a = win[0]
            if s["ts"] < a["ts"] - tol:
                p.append("%s starts %d ns before its %s" % (s["name"], a["ts"] - s["ts"], api))
            if steps is not None and not any(st[0] - tol <= s["ts"] and s["end"] <= st[1] + tol for st in steps):
                p.append("%s [%d, %d] outside every step" % (s["name"], s["ts"], s["end"]))
            if not (s["args"].get("submit_ns", 0) >= qd and s["ts"] >= s["args"].get("submit_ns", 0) - tol):
                p.append("%s: queued %s, submit %s, start %s out of order" % (s["name"], qd, s["args"].get("submit_ns"), s["ts"]))
    ncmd = len(cmds)
    if len(launches) != ncmd:
        p.append("%d distinct launches on the queues, %d commands" % (len(launches), ncmd))
    # API slices: one per command, per kind
    want_api = collections.Counter(API.get(c["name"], "clEnqueueNDRangeKernel") for c in cmds)
    got_api = collections.Counter(a["name"] for a in api_all if a["name"].startswith("clEnqueue"))
    if want_api != got_api:
        p.append("API slices %r, want %r" % (dict(got_api), dict(want_api)))
    # a launch flow per command, from inside its API slice to the start of its slice
    qkeys = set(queues.values())
    flows = [f for f in tr.flows.values() if "f" in f and f["f"][0] in qkeys]
    if len(flows) != ncmd:
        p.append("%d launch flows, want %d" % (len(flows), ncmd))
    for f in flows:
        if "s" not in f:
            p.append("a flow without its start")
            continue
        (skey, sts, _), (dkey, dts, _) = f["s"], f["f"]
        if not any(a["ts"] <= sts <= a["end"] for a in api_all):
            p.append("a flow starts outside the API calls")
        if not any(s["ts"] == dts for s in tr.slices[dkey]):
            p.append("a flow ends where no command starts")
    for key in ("opencl_untimed", "opencl_incomplete", "opencl_dropped", "dropped", "unmatched_flows"):
        if int(m.get(key) or 0):
            p.append("%s = %s" % (key, m.get(key)))
    if int(m.get("opencl_commands") or 0) != ncmd:
        p.append("opencl_commands %s, want %d" % (m.get("opencl_commands"), ncmd))


def case_multi(tmp, exe):
    """Three queues, three kernels, every buffer command kind, three steps."""
    p = []
    sess, man = os.path.join(tmp, "multi.tft"), os.path.join(tmp, "multi.json")
    r = record(tmp, sess, [exe, man, "-s", "3"])
    if r.returncode:
        return check("multi", ["exit %d: %s" % (r.returncode, r.stderr[-400:])])
    cmds, props = read_manifest(man)
    if props.get("q1_profiling") != 0 or props.get("q0_profiling") != 1:
        p.append("queue properties as the program sees them: %r" % props)
    if props.get("q2_props_array") != [CL_QUEUE_PROPERTIES, 1, 0]:
        p.append("the out-of-order queue's property list: %r" % props.get("q2_props_array"))
    j, m = info(sess), meta(sess)
    tr = Trace(sess, tmp)
    if j["steps"] != 3:
        p.append("%d steps" % j["steps"])
    kinds = collections.Counter(t["kind"] for t in j["track_list"])
    if kinds["gpu_stream"] != 3 or kinds["thread"] != 1 or j["processes"] != 1:
        p.append("tracks %r, processes %d" % (dict(kinds), j["processes"]))
    steps = [(s["start_ns"], s["start_ns"] + s["dur_ns"]) for s in j["step_list"]]
    # the program's zones are on the same thread track as the API calls
    zones = collections.Counter(s["name"] for k in tr.threads() for s in tr.slices[k]
                                if not s["name"].startswith("cl"))
    if zones != {"forward": 3, "backward": 3}:
        p.append("the program's zones: %r" % dict(zones))
    check_commands(tr, cmds, m, p, ooo=(2,), steps=steps)
    for s in tr.slices[tr.queues()[0]]:
        if s["name"] == "vadd" and (s["args"].get("global") != [4096] or s["args"].get("local") != [64]):
            p.append("vadd sizes %r" % s["args"])
        if s["name"] == "WriteBuffer" and s["args"].get("bytes") != 16384:
            p.append("WriteBuffer bytes %r" % s["args"])
    check("multi", p)


def case_threads(tmp, exe):
    """Three threads, three queues each, all enqueuing at once."""
    p = []
    sess, man = os.path.join(tmp, "threads.tft"), os.path.join(tmp, "threads.json")
    r = record(tmp, sess, [exe, man, "-s", "4", "--threads", "3"])
    if r.returncode:
        return check("threads", ["exit %d: %s" % (r.returncode, r.stderr[-400:])])
    cmds, _ = read_manifest(man)
    tr = Trace(sess, tmp)
    m = meta(sess)
    if len(tr.queues()) != 9:
        p.append("%d queue tracks, want 9" % len(tr.queues()))
    check_commands(tr, cmds, m, p, ooo=(2, 5, 8))
    if len(tr.threads()) != 3:  # the 3 workers, each with its API slices (main enqueues nothing)
        p.append("thread tracks %r" % [tr.names[k] for k in tr.threads()])
    check("threads", p)


def case_init(tmp, exe):
    """A program that starts the runtime itself: one runtime, one session, its zones with the kernels."""
    p = []
    sess, man = os.path.join(tmp, "init.tft"), os.path.join(tmp, "init.json")
    r = record(tmp, sess, [exe, man, "-s", "2", "--init"])
    if r.returncode:
        return check("init", ["exit %d: %s" % (r.returncode, r.stderr[-400:])])
    cmds, _ = read_manifest(man)
    left = [f for f in os.listdir(tmp) if f.endswith(".tft") and f not in ("init.tft", "multi.tft", "threads.tft")]
    if left:
        p.append("other session files: %r" % left)
    j = info(sess)
    if j["processes"] != 1 or j["steps"] != 2:
        p.append("processes %d, steps %d" % (j["processes"], j["steps"]))
    check_commands(Trace(sess, tmp), cmds, meta(sess), p, ooo=(2,))
    check("init", p)


def case_dlopen(tmp):
    """libOpenCL opened with dlopen(RTLD_LOCAL), every function taken with dlsym."""
    p = []
    exe = build(tmp, "ocl_dlopen", ["-ldl"])
    sess = os.path.join(tmp, "dlopen.tft")
    r = record(tmp, sess, [exe, "5"])
    if r.returncode or r.stdout.strip() != "15":
        return check("dlopen", ["exit %d, said %r: %s" % (r.returncode, r.stdout, r.stderr[-300:])])
    tr, m = Trace(sess, tmp), meta(sess)
    q = tr.queues()
    got = [s["name"] for s in tr.slices.get(q.get(0), [])]
    if got != ["WriteBuffer", "twice", "ReadBuffer"] * 5:
        p.append("queue slices %r" % got[:9])
    api = collections.Counter(s["name"] for k in tr.threads() for s in tr.slices[k])
    if api["clEnqueueNDRangeKernel"] != 5 or api["clEnqueueWriteBuffer"] != 5 or api["clFinish"] != 1:
        p.append("API slices %r" % dict(api))
    if int(m.get("opencl_commands") or 0) != 15 or int(m.get("dropped") or 0):
        p.append("opencl_commands %s, dropped %s" % (m.get("opencl_commands"), m.get("dropped")))
    check("dlopen", p)


PYPROG = r'''
import json, sys
import numpy as np
import pyopencl as cl
import tftracer
ctx = cl.create_some_context(interactive=False)
q = cl.CommandQueue(ctx)
src = """
__kernel void scale(__global float *a, float k) { int i = get_global_id(0); a[i] *= k; }
__kernel void add1(__global float *a) { int i = get_global_id(0); a[i] += 1.0f; }
"""
prg = cl.Program(ctx, src).build()
a = np.arange(4096, dtype=np.float32)
buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=a)
q.finish()
man = []
for step in range(int(sys.argv[2])):
    with tftracer.zone("layer1"):
        prg.scale(q, a.shape, None, buf, np.float32(2.0))
        man.append({"name": "scale", "queue": 0, "zone": "layer1"})
    with tftracer.zone("layer2"):
        prg.add1(q, a.shape, None, buf)
        man.append({"name": "add1", "queue": 0, "zone": "layer2"})
        cl.enqueue_copy(q, a, buf)
        man.append({"name": "ReadBuffer", "queue": 0, "zone": "layer2"})
q.finish()
with open(sys.argv[1], "w") as f:
    for c in man:
        f.write(json.dumps(c) + "\n")
'''


def case_python(tmp):
    """pyopencl (libOpenCL loaded RTLD_LOCAL by an extension) with the tftracer module's zones."""
    r = subprocess.run([PYTHON, "-c", "import pyopencl"], capture_output=True, text=True)
    if r.returncode:
        return emit("SKIP", "python", "pyopencl not importable (python3-pyopencl)")
    p = []
    prog = os.path.join(tmp, "prog.py")
    with open(prog, "w") as f:
        f.write(PYPROG)
    sess, man = os.path.join(tmp, "py.tft"), os.path.join(tmp, "py.json")
    r = record(tmp, sess, [PYTHON, prog, man, "5"])
    if r.returncode:
        return check("python", ["exit %d: %s" % (r.returncode, r.stderr[-400:])])
    cmds, _ = read_manifest(man)
    tr, m = Trace(sess, tmp), meta(sess)
    check_commands(tr, cmds, m, p)
    zones = collections.Counter(s["name"] for k in tr.threads() for s in tr.slices[k]
                                if not s["name"].startswith("cl"))
    if zones != {"layer1": 5, "layer2": 5}:
        p.append("the module's zones: %r" % dict(zones))
    check("python", p)


def case_selection(tmp, exe):
    """--no-intercept: the program as it is (its own runtime); --intercept=cuda: no OpenCL."""
    p = []
    # (without the library the program's runtime records only when the program starts it)
    for opt, args in ((["--no-intercept"], ["--init"]), (["--intercept=cuda,mpi"], [])):
        sess, man = os.path.join(tmp, "sel%d.tft" % len(opt[0])), os.path.join(tmp, "sel.json")
        r = record(tmp, sess, [exe, man, "-s", "1"] + args, extra=opt)
        if r.returncode:
            p.append("%s: exit %d: %s" % (opt, r.returncode, r.stderr[-300:]))
            continue
        _, props = read_manifest(man)
        j = info(sess)
        kinds = collections.Counter(t["kind"] for t in j["track_list"])
        if kinds["gpu_stream"]:
            p.append("%s: %d queue tracks" % (opt, kinds["gpu_stream"]))
        if props.get("q1_profiling") != 0:
            p.append("%s: queue properties %r" % (opt, props))
        tr = Trace(sess, tmp)
        names = collections.Counter(s["name"] for k in tr.threads() for s in tr.slices[k])
        if names.get("forward") != 1 or any(n.startswith("cl") for n in names):
            p.append("%s: thread slices %r" % (opt, dict(names)))
    r = subprocess.run([CLI, "record", "--intercept=opencl,bogus", "--", "true"], capture_output=True, text=True)
    if r.returncode != 2 or "bogus" not in r.stderr:
        p.append("--intercept=bogus: exit %d %r" % (r.returncode, r.stderr))
    check("selection", p)


def main():
    if not os.access(CLI, os.X_OK) or not os.path.exists(os.path.join(B, "libtftracer-preload.so")):
        emit("FAIL", "build", "%s or its libtftracer-preload.so missing" % CLI)
        return 1
    r = subprocess.run(["clinfo", "-l"], capture_output=True, text=True)
    if r.returncode or "Device" not in r.stdout:
        emit("FAIL", "device", "no OpenCL device (pocl-opencl-icd, clinfo): %s" % (r.stdout + r.stderr)[-200:])
        return 1
    tmp = tempfile.mkdtemp(prefix="tft-opencl-test-")
    try:
        try:
            exe = build_multi(tmp)
        except Exception as e:
            emit("FAIL", "build-programs", e)
            return 1
        for name, fn, args in (("multi", case_multi, (exe,)), ("threads", case_threads, (exe,)),
                               ("init", case_init, (exe,)), ("dlopen", case_dlopen, ()),
                               ("python", case_python, ()), ("selection", case_selection, (exe,))):
            t = time.monotonic()
            try:
                fn(tmp, *args)
            except Exception as e:
                emit("FAIL", name, "%s: %s" % (type(e).__name__, e))
            print("# %s: %.1f s" % (name, time.monotonic() - t), flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
