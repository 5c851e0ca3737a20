#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# `tftracer record -- CMD` (src/cli/cmd_record.c, python/tftracer/_record.py):
# a real PyTorch training script that knows nothing of tftracer gets one step
# per optimizer step, op-level traces of the steps asked for, and a live UI
# while it runs; exit statuses pass through; signals reach the program; the
# program's own sitecustomize still runs; a native program using the C
# runtime records into the session; bad usage is refused before anything runs;
# the live page gets every step before the program's end (and --serve after it).
"""Usage: test_record.py"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
BUILD = os.environ.get("TFT_BUILD_DIR", "build")
B = BUILD if os.path.isabs(BUILD) else os.path.join(ROOT, BUILD)
CLI = os.path.join(B, "tftracer")  # the build next to build/python (the package record uses)
PYTHON = "/usr/bin/python3"
SUITE = "record"
nfail = 0


def emit(kind, name, reason=None):
    global nfail
    line = "%s %s/%s" % (kind, SUITE, name)
    if reason:
        line += " (%s)" % " ".join(str(reason).split())[:600]
    if kind == "FAIL":
        nfail += 1
    print(line, flush=True)


def check(name, problems):
    emit("FAIL" if problems else "PASS", name, "; ".join(problems) if problems else None)


def info(path):
    r = subprocess.run([CLI, "info", "--json", path], capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError("info %s: %s" % (path, r.stderr.strip()))
    return json.loads(r.stdout)


TRAIN = r'''
import json, os, sys, time, urllib.request
import torch
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(128, 32)
live = None
for it in range(int(sys.argv[1])):
    loss = model(x).pow(2).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if it == 3:  # the UI is live while the job runs
        url = os.environ["TFT_RECORD_URL"].rstrip("/")
        with urllib.request.urlopen(url + "/api/live/status", timeout=10) as r:
            live = json.load(r)
with open(sys.argv[2], "w") as f:
    json.dump({"live": live, "record": os.environ.get("TFT_RECORD")}, f)
'''


def case_torch(tmp):
    script = os.path.join(tmp, "train.py")
    with open(script, "w") as f:
        f.write(TRAIN)
    out = os.path.join(tmp, "out.json")
    sess = os.path.join(tmp, "run.tft")
    r = subprocess.run([CLI, "record", "-o", sess, "--port", "0", "--trace-next", "2", "--",
                        PYTHON, script, "10", out], capture_output=True, text=True, timeout=240,
                       cwd=tmp)
    p = []
    if r.returncode != 0:
        p.append("exit %d: %s" % (r.returncode, r.stderr.strip()[-400:]))
    if "live at http://127.0.0.1:" not in r.stderr or "session " + sess not in r.stderr:
        p.append("messages: %r" % r.stderr[-300:])
    if not os.path.exists(sess):
        p.append("no session file")
        return check("torch", p)
    got = json.load(open(out))
    if not got["live"] or got["live"].get("live") is not True:
        p.append("the UI was not live during the run: %r" % (got["live"],))
    if got["record"] != "started":
        p.append("TFT_RECORD in the program: %r" % got["record"])
    j = info(sess)
    steps = j.get("step_list", [])
    # 10 optimizer steps: 9 steps between them (the first begins when the first returns,
    # the open step after the last is the program's tail, not recorded)
    if j["steps"] != 9 or any(s.get("name") != "train" for s in steps):
        p.append("steps: %d %r" % (j["steps"], [s.get("name") for s in steps][:3]))
    traced = [s.get("index", i) for i, s in enumerate(steps) if s.get("traced")]
    if traced != [0, 1]:
        p.append("traced steps %r, want [0, 1]" % traced)
    if j["slices"] < 20:
        p.append("op-level slices of the traced steps: %d" % j["slices"])
    # on the program's own process and main thread, with shapes (not a process "CPU functions")
    procs = j.get("process_list", [])
    threads = [t for t in j.get("track_list", []) if t["kind"] == "thread"]
    if len(procs) != 1 or [(t["tid"], t["pid"]) for t in threads] != [(procs[0]["pid"], procs[0]["pid"])] \
            or threads[0]["slices"] != j["slices"]:
        p.append("processes %r, thread tracks %r: want the program's one process and its main thread"
                 % ([(x["name"], x["pid"]) for x in procs], [(t["name"], t["tid"], t["slices"]) for t in threads]))
    chrome = os.path.join(tmp, "run.json")
    subprocess.run([CLI, "export", sess, "-f", "chrome", "-o", chrome, "--quiet"], check=True)
    with open(chrome) as f:
        evs = json.load(f)
    evs = evs["traceEvents"] if isinstance(evs, dict) else evs
    mm = [e for e in evs if e.get("name") == "aten::addmm"]
    if not mm or any(e.get("cat") != "cpu_op" or e["args"].get("Input Dims") != [[64], [128, 32], [32, 64], [], []]
                     for e in mm[:1]):
        p.append("aten::addmm: %r" % mm[:1])
    # the traced steps' ops lie inside those steps
    if steps and j["slices"]:
        lo, hi = steps[0]["start_ns"], steps[1]["start_ns"] + steps[1]["dur_ns"]
        if not (lo - 50_000_000 <= j["start_ns"] and j["end_ns"] <= hi + 50_000_000):
            p.append("ops at %d..%d outside the traced steps %d..%d" % (j["start_ns"], j["end_ns"], lo, hi))
    check("torch", p)


HOLD = r"""
import json, os, sys, torch
from tftracer import _tftracer as _c
torch.manual_seed(0)
m = torch.nn.Linear(16, 4); opt = torch.optim.SGD(m.parameters(), lr=0.1); x = torch.randn(8, 16)
seen = None
for it in range(8):
    m(x).sum().backward(); opt.step(); opt.zero_grad()
    if it == 5:  # steps 0 (traced) to 4 have ended; step 0's trace waits at the gate
        _c.flush(5000)
        seen = _c.summary(_c.runtime_path())["steps"]
        open(sys.argv[2], "w").close()  # the gate opens
with open(sys.argv[1], "w") as f:
    json.dump({"seen": seen}, f)
"""


def case_hold(tmp):
    """Under record the hub holds the runtime of the preload library: while a traced
    step's trace waits to be imported (TFT_TEST_IMPORT_GATE, test-only), the steps after
    it stay out of the file; then everything is in, the ops on the main thread's track
    inside their step (docs/runtime.md "Holding a thread for an import")."""
    script = os.path.join(tmp, "hold.py")
    with open(script, "w") as f:
        f.write(HOLD)
    out, gate, sess = (os.path.join(tmp, n) for n in ("out.json", "gate", "hold.tft"))
    env = dict(os.environ, TFT_TEST_IMPORT_GATE=gate)
    r = subprocess.run([CLI, "record", "-q", "-o", sess, "--port", "0", "--trace-next", "1", "--",
                        PYTHON, script, out, gate], capture_output=True, text=True, timeout=240,
                       cwd=tmp, env=env)
    p = []
    if r.returncode != 0 or not os.path.exists(out):
        p.append("exit %d: %s" % (r.returncode, r.stderr.strip()[-400:]))
        return check("hold", p)
    seen = json.load(open(out))["seen"]
    if seen != 1:
        p.append("%r steps in the file while step 0's trace waited, want 1 (the rest held)" % seen)
    j = info(sess)
    steps = j.get("step_list", [])
    threads = [t for t in j.get("track_list", []) if t["kind"] == "thread"]
    if j["steps"] != 7 or [s.get("index", i) for i, s in enumerate(steps) if s.get("traced")] != [0]:
        p.append("steps %d, traced %r" % (j["steps"], [s.get("traced") for s in steps]))
    if len(threads) != 1 or threads[0]["slices"] != j["slices"] or not j["slices"]:
        p.append("thread tracks %r, %d slices" % ([(t["name"], t["tid"], t["slices"]) for t in threads], j["slices"]))
    elif steps and not (steps[0]["start_ns"] - 1000000 <= j["start_ns"] and
                        j["end_ns"] <= steps[0]["start_ns"] + steps[0]["dur_ns"] + 1000000):
        p.append("ops at %d..%d outside step 0 %d..+%d" % (j["start_ns"], j["end_ns"], steps[0]["start_ns"], steps[0]["dur_ns"]))
    check("hold", p)


LIVE_END = r'''
import os, sys, time
import torch
torch.manual_seed(0)
model = torch.nn.Linear(16, 4)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(8, 16)
ready, go, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
for it in range(n):
    model(x).sum().backward()
    opt.step()
    opt.zero_grad()
    if it == 0:  # the server runs from the first optimizer step: the test connects, then says go
        with open(ready + ".tmp", "w") as f:
            f.write(os.environ["TFT_RECORD_URL"])
        os.rename(ready + ".tmp", ready)
        while not os.path.exists(go):
            time.sleep(0.01)
'''


def case_live_end(tmp):
    """The program ends: its live page gets every step recorded, the last traced steps'
    ops, then `end` (next: "serve" with --serve), and the stream closes; then
    `record --serve` serves the session at the same address."""
    import socket
    sys.path.insert(0, HERE)
    from test_python import SSE, http_json, wait_for
    p = []
    script = os.path.join(tmp, "live.py")
    with open(script, "w") as f:
        f.write(LIVE_END)
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    ready, go, n = os.path.join(tmp, "ready"), os.path.join(tmp, "go"), 200
    sess = os.path.join(tmp, "end.tft")
    proc = subprocess.Popen([CLI, "record", "-q", "-o", sess, "--port", str(port), "--serve", "--",
                             PYTHON, script, ready, go, str(n)], cwd=tmp, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        if not wait_for(lambda: os.path.exists(ready), 120, 0.05):
            p.append("the program did not start")
            return check("live-end", p)
        url = open(ready).read().strip()
        if ":%d/" % port not in url:
            p.append("served at %s, not on port %d" % (url, port))
        sse = SSE(port)
        wait_for(lambda: sse.of("status"), 10)
        http_json("http://127.0.0.1:%d" % port, "/api/trace", {"steps": 2})
        open(go, "w").close()
        sse.th.join(60)
        runs = [e[2]["index"] for e in sse.of("run")]
        # n optimizer steps: n - 1 steps (the first from the first step's end; the tail is not one)
        if runs != list(range(n - 1)):
            p.append("%d run events of %d steps" % (len(runs), n - 1))
        last = sse.events[-1] if sse.events else None
        if sse.th.is_alive() or not last or last[1] != "end" or last[2].get("reason") != "stop" or \
                last[2].get("next") != "serve" or last[2].get("steps") != n - 1:
            p.append("the stream's end: alive %s, last %r" % (sse.th.is_alive(), last))
        done = [e[2] for e in sse.of("trace") if e[2].get("complete")]
        if len(done) != 2 or any(d["source"] != "torch" or d["events"] <= 0 for d in done):
            p.append("traced steps landed: %r" % done)
        # then the same address serves the file
        base = "http://127.0.0.1:%d" % port

        def served():  # the file server (the program gone), not the live one still stopping
            try:
                if http_json(base, "/api/live/status")[1].get("live") is not False:
                    return None
                return http_json(base, "/api/steps")[1]
            except Exception:
                return None
        got = wait_for(served, 60, 0.1)
        if not got or len(got.get("steps", [])) != n - 1:
            p.append("record --serve: /api/steps %r" % (got if not got else len(got.get("steps", []))))
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    if proc.returncode != 0:
        p.append("exit %s: %s" % (proc.returncode, proc.stderr.read()[-300:]))
    check("live-end", p)


def case_status(tmp):
    p = []
    r = subprocess.run([CLI, "record", "-q", "--port", "0", "--", PYTHON, "-c", "import sys; sys.exit(3)"],
                       capture_output=True, text=True, cwd=tmp, timeout=60)
    if r.returncode != 3:
        p.append("exit 3 gave %d (%s)" % (r.returncode, r.stderr.strip()))
    r = subprocess.run([CLI, "record", "-q", "--port", "0", "--", PYTHON, "-c",
                        "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"],
                       capture_output=True, text=True, cwd=tmp, timeout=60)
    if r.returncode != 128 + 9:
        p.append("SIGKILL gave %d" % r.returncode)
    r = subprocess.run([CLI, "record", "--", os.path.join(tmp, "no-such-program")],
                       capture_output=True, text=True, cwd=tmp, timeout=60)
    if r.returncode != 127 or "cannot run" not in r.stderr:
        p.append("missing program: %d %r" % (r.returncode, r.stderr))
    check("exit-status", p)


def case_usage(tmp):
    p = []
    existing = os.path.join(tmp, "exists.tft")
    open(existing, "w").close()
    marker = os.path.join(tmp, "ran")
    for args, what in ((["record"], "no command"), (["record", "--port", "x", "--", "true"], "bad port"),
                       (["record", "--bogus", "--", "true"], "unknown option"),
                       (["record", "-o", existing, "--", "touch", marker], "existing session")):
        r = subprocess.run([CLI] + args, capture_output=True, text=True, cwd=tmp, timeout=60)
        if r.returncode != 2 or not r.stderr.strip():
            p.append("%s: exit %d" % (what, r.returncode))
    if os.path.exists(marker):
        p.append("the program ran despite the existing session file")
    r = subprocess.run([CLI, "record", "--help"], capture_output=True, text=True, timeout=60)
    if r.returncode != 0 or "record [options] -- CMD" not in r.stdout:
        p.append("--help")
    check("usage", p)


def case_sitecustomize(tmp):
    """The program's own sitecustomize (first on its PYTHONPATH) still runs, once."""
    p = []
    d = os.path.join(tmp, "site")
    os.makedirs(d)
    with open(os.path.join(d, "sitecustomize.py"), "w") as f:
        f.write("import os\nos.environ['MY_SITE'] = os.environ.get('MY_SITE', '') + 'x'\n")
    out = os.path.join(tmp, "o.txt")
    env = dict(os.environ, PYTHONPATH=d)
    r = subprocess.run([CLI, "record", "-q", "--port", "0", "--", PYTHON, "-c",
                        "import os, sys; open(sys.argv[1], 'w').write(os.environ.get('MY_SITE', '-') + ' ' + "
                        "os.environ.get('TFT_RECORD', '-'))", out],
                       capture_output=True, text=True, cwd=tmp, env=env, timeout=60)
    got = open(out).read() if os.path.exists(out) else None
    # (no torch: the tracer waits for torch.optim, which never comes; the session is the one
    # record writes of a run in which nothing recorded: tftracer-record)
    if r.returncode != 0 or got != "x 1":
        p.append("exit %d, program saw %r (want 'x 1'): %s" % (r.returncode, got, r.stderr.strip()[-300:]))
    sessions = [n for n in os.listdir(tmp) if n.endswith(".tft")]
    if len(sessions) != 1 or info(os.path.join(tmp, sessions[0]))["format"] != "tftracer-record":
        p.append("without PyTorch: sessions %r, want the run's own" % sessions)
    # a record inside a record: the inner one traces, the hooks do not chain into each other
    r = subprocess.run([CLI, "record", "-q", "--port", "0", "--", CLI, "record", "-q", "--port", "0",
                        "-o", os.path.join(tmp, "inner.tft"), "--", PYTHON, os.path.join(tmp, "t.py"), "4"],
                       capture_output=True, text=True, cwd=tmp, env=env, timeout=120) \
        if open(os.path.join(tmp, "t.py"), "w").write(SMALL) else None
    if r.returncode != 0 or "recursion" in r.stderr or not os.path.exists(os.path.join(tmp, "inner.tft")):
        p.append("record in record: exit %d: %s" % (r.returncode, r.stderr.strip()[-300:]))
    elif info(os.path.join(tmp, "inner.tft"))["steps"] != 3:
        p.append("record in record: %d steps, want 3" % info(os.path.join(tmp, "inner.tft"))["steps"])
    check("sitecustomize", p)


SMALL = r'''
import sys, torch
m = torch.nn.Linear(4, 2); x = torch.randn(8, 4)
opt = torch.optim.SGD(m.parameters(), lr=0.01)
for _ in range(int(sys.argv[1])):
    opt.zero_grad(); m(x).sum().backward(); opt.step()
'''

STEPS = {
    # one optimizer after another (an LR finder, a second phase): the second takes over
    "phases": (r'''
import torch
m = torch.nn.Linear(4, 2); x = torch.randn(8, 4)
for opt in (torch.optim.SGD(m.parameters(), lr=0.01), torch.optim.Adam(m.parameters(), lr=0.01)):
    for _ in range(5):
        opt.zero_grad(); m(x).sum().backward(); opt.step()
''', 8),
    # a subclass whose step calls super().step(), beside a plain SGD: one step each
    "super": (r'''
import torch
m = torch.nn.Linear(4, 2); x = torch.randn(8, 4)
class MySGD(torch.optim.SGD):
    def step(self, closure=None):
        return super().step(closure)
other = torch.optim.SGD(m.parameters(), lr=0.01)
opt = MySGD(m.parameters(), lr=0.01)
for _ in range(10):
    opt.zero_grad(); m(x).sum().backward(); opt.step()
''', 9),
    # a GAN: two optimizers in turn, the first sets the pace
    "gan": (r'''
import torch
g = torch.nn.Linear(4, 4); d = torch.nn.Linear(4, 1); x = torch.randn(8, 4)
og = torch.optim.Adam(g.parameters()); od = torch.optim.Adam(d.parameters())
for _ in range(6):
    od.zero_grad(); d(g(x).detach()).sum().backward(); od.step()
    og.zero_grad(); d(g(x)).sum().backward(); og.step()
''', 5),
    # a forked child that exits normally (atexit runs in it) must not hang the program
    "fork": (r'''
import os, sys, torch
m = torch.nn.Linear(4, 2); x = torch.randn(8, 4); opt = torch.optim.SGD(m.parameters(), lr=0.01)
for i in range(4):
    opt.zero_grad(); m(x).sum().backward(); opt.step()
    if i == 1:
        pid = os.fork()
        if pid == 0:
            sys.exit(0)
        os.waitpid(pid, 0)
''', 3),
    # the tail step traced (--trace-every 1): not recorded; its profiler, on until the program
    # ends (nobody can tell the tail from a step before then), is stopped unexported: no leak
    "tail": (r'''
import torch
m = torch.nn.Linear(4, 2); x = torch.randn(8, 4); opt = torch.optim.SGD(m.parameters(), lr=0.01)
for _ in range(4):
    opt.zero_grad(); m(x).sum().backward(); opt.step()
print("profiler on in the tail:", torch.autograd._profiler_enabled())
''', 3),
}


def case_steps(tmp):
    """Step counts for optimizers in phases, subclasses, GANs, forks and a traced tail."""
    p = []
    for name, (prog, want) in STEPS.items():
        script = os.path.join(tmp, name + ".py")
        with open(script, "w") as f:
            f.write(prog)
        sess = os.path.join(tmp, name + ".tft")
        args = [CLI, "record", "-q", "--port", "0", "-o", sess]
        if name == "tail":
            args += ["--trace-every", "1"]
        try:
            r = subprocess.run(args + ["--", PYTHON, script], capture_output=True, text=True, cwd=tmp,
                               timeout=120)
        except subprocess.TimeoutExpired:
            p.append("%s: hung" % name)
            continue
        if r.returncode != 0 or not os.path.exists(sess):
            p.append("%s: exit %d: %s" % (name, r.returncode, r.stderr.strip()[-300:]))
            continue
        j = info(sess)
        if j["steps"] != want:
            p.append("%s: %d steps, want %d" % (name, j["steps"], want))
        if name == "tail":
            if "profiler on in the tail:" not in r.stdout or "Leaked" in r.stderr:
                p.append("tail: %r %r" % (r.stdout.strip(), r.stderr.strip()[-200:]))
            if not all(s.get("traced") for s in j.get("step_list", [])):
                p.append("tail: a step not traced with --trace-every 1")
    check("steps", p)


def case_environment(tmp):
    """A taken port, a wrapper script's first Python process, a long PYTHONPATH, stale
    TFT_RECORD_* variables, an ignored SIGCHLD."""
    p = []
    script = os.path.join(tmp, "t.py")
    with open(script, "w") as f:
        f.write(SMALL)
    import socket
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen()
    port = busy.getsockname()[1]
    sess = os.path.join(tmp, "busy.tft")
    r = subprocess.run([CLI, "record", "--port", str(port), "-o", sess, "--", PYTHON, script, "4"],
                       capture_output=True, text=True, cwd=tmp, timeout=120)
    busy.close()
    if r.returncode != 0 or "is taken: serving on" not in r.stderr or info(sess)["steps"] != 3:
        p.append("port taken: exit %d: %s" % (r.returncode, r.stderr.strip()[-300:]))
    # a wrapper: a Python version check first, then the training
    wrap = os.path.join(tmp, "run.sh")
    with open(wrap, "w") as f:
        f.write("#!/bin/sh\n%s -c 'import sys; print(sys.version_info[:2])'\n"
                "%s -c 'import torch; print(torch.__version__)'\nexec %s %s 5\n" % (PYTHON, PYTHON, PYTHON, script))
    os.chmod(wrap, 0o755)
    sess = os.path.join(tmp, "wrap.tft")
    r = subprocess.run([CLI, "record", "-q", "--port", "0", "-o", sess, "--", wrap],
                       capture_output=True, text=True, cwd=tmp, timeout=120)
    if r.returncode != 0 or not os.path.exists(sess) or info(sess)["steps"] != 4:
        p.append("wrapper script: exit %d, %s: %s" % (r.returncode, os.path.exists(sess), r.stderr.strip()[-300:]))
    # PYTHONPATH of 16 KiB with the module at its end; stale TFT_RECORD_* from the caller
    mods = os.path.join(tmp, "mods")
    os.makedirs(mods)
    with open(os.path.join(mods, "farmod.py"), "w") as f:
        f.write("X = 42\n")
    pp = ":".join("/nonexistent/%03d/%s" % (i, "p" * 70) for i in range(200)) + ":" + mods
    env = dict(os.environ, PYTHONPATH=pp, TFT_RECORD_TOKEN="stale", TFT_RECORD_QUIET="1",
               TFT_RECORD_SESSION=os.path.join(tmp, "elsewhere.tft"))
    r = subprocess.run([CLI, "record", "--port", "0", "-o", os.path.join(tmp, "env.tft"), "--", PYTHON, "-c",
                        "import farmod, torch; m = torch.nn.Linear(2, 1); o = torch.optim.SGD(m.parameters(), lr=0.1)\n"
                        "for _ in range(3): o.zero_grad(); m(torch.ones(2)).sum().backward(); o.step()\n"
                        "import os; print(os.environ['TFT_RECORD_URL'])"],
                       capture_output=True, text=True, cwd=tmp, env=env, timeout=120)
    if r.returncode != 0 or "recording to" not in r.stderr or not os.path.exists(os.path.join(tmp, "env.tft")):
        p.append("long PYTHONPATH / stale variables: exit %d: %s" % (r.returncode, r.stderr.strip()[-300:]))
    # SIGCHLD ignored by whoever started record: the program's status still comes back
    r = subprocess.run([PYTHON, "-c", "import os, signal, sys; signal.signal(signal.SIGCHLD, signal.SIG_IGN); "
                        "os.execv(sys.argv[1], [sys.argv[1], 'record', '-q', '--', 'sh', '-c', 'exit 3'])", CLI],
                       capture_output=True, text=True, cwd=tmp, timeout=60)
    if r.returncode != 3:
        p.append("SIGCHLD ignored: status %d, want 3" % r.returncode)
    # a program that exits 127 itself is not "cannot run"
    r = subprocess.run([CLI, "record", "-q", "--", "sh", "-c", "exit 127"], capture_output=True, text=True,
                       cwd=tmp, timeout=60)
    if r.returncode != 127 or "cannot run" in r.stderr:
        p.append("exit 127 of the program: %d %r" % (r.returncode, r.stderr))
    check("environment", p)


def case_signals(tmp):
    """SIGTERM to record reaches the program; its exit status comes back; the hook is removed."""
    p = []
    ready = os.path.join(tmp, "ready")
    prog = ("import os, signal, sys, time\n"
            "signal.signal(signal.SIGTERM, lambda *a: sys.exit(7))\n"
            "open(sys.argv[1], 'w').write(os.environ['PYTHONPATH'].split(':')[0])\n"
            "time.sleep(60)\n")
    rec = subprocess.Popen([CLI, "record", "-q", "--port", "0", "--", PYTHON, "-c", prog, ready],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp)
    t = time.monotonic()
    while not (os.path.exists(ready) and os.path.getsize(ready)) and time.monotonic() - t < 60:
        time.sleep(0.05)
    hook = open(ready).read() if os.path.exists(ready) else ""
    if not hook or not os.path.exists(os.path.join(hook, "sitecustomize.py")):
        p.append("no hook directory seen: %r" % hook)
    rec.send_signal(signal.SIGTERM)
    try:
        rc = rec.wait(timeout=60)
    except subprocess.TimeoutExpired:
        rec.kill()
        rc = None
    if rc != 7:
        p.append("program's status through SIGTERM: %r (want 7)" % rc)
    if hook and os.path.exists(hook):
        p.append("hook directory left: %s %r" % (hook, os.listdir(hook)))
    # SIGTERM at any moment of the start: never lost (the program would run to its end),
    # never a hook directory left behind
    import random
    tmpdir = os.path.join(tmp, "tmpdir")
    os.makedirs(tmpdir)
    env = dict(os.environ, TMPDIR=tmpdir)
    bad = {}
    for i in range(60):
        rec = subprocess.Popen([CLI, "record", "-q", "--", "/bin/sleep", "2"], env=env, cwd=tmp)
        time.sleep(random.uniform(0, 0.004))
        rec.send_signal(signal.SIGTERM)
        t = time.monotonic()
        rc = rec.wait(timeout=30)
        if rc not in (-signal.SIGTERM, 128 + signal.SIGTERM) or time.monotonic() - t > 1.5:
            bad[rc] = bad.get(rc, 0) + 1
    if bad or os.listdir(tmpdir):
        p.append("SIGTERM during start: statuses %r, left %r" % (bad, os.listdir(tmpdir)))
    check("signals", p)


def case_native(tmp):
    """A C program using the runtime (examples/c/train_sim, no -o) records into the session."""
    p = []
    r = subprocess.run(["make", "-s", "O=" + B, os.path.join(B, "examples", "train_sim")],
                       capture_output=True, text=True, cwd=ROOT, timeout=300)
    sim = os.path.join(B, "examples", "train_sim")
    if r.returncode or not os.path.exists(sim):
        return check("native", ["could not build train_sim: " + r.stderr[-300:]])
    sess = os.path.join(tmp, "native.tft")
    r = subprocess.run([CLI, "record", "-q", "-o", sess, "--", sim, "-n", "5", "-u", "20"],
                       capture_output=True, text=True, cwd=tmp, timeout=120)
    if r.returncode != 0:
        p.append("exit %d: %s" % (r.returncode, r.stderr.strip()[-300:]))
    elif not os.path.exists(sess):
        p.append("no session")
    else:
        j = info(sess)
        if j["steps"] != 5 or j["slices"] == 0:
            p.append("steps %d, slices %d" % (j["steps"], j["slices"]))
    check("native", p)


def main():
    if not os.access(CLI, os.X_OK):
        emit("FAIL", "build", "%s missing" % CLI)
        return 1
    try:
        import torch  # noqa: F401
        has_torch = True
    except ImportError:
        has_torch = False
    for name, fn, torch_needed in (("torch", case_torch, True), ("exit-status", case_status, False),
                                   ("usage", case_usage, False), ("sitecustomize", case_sitecustomize, True),
                                   ("steps", case_steps, True), ("environment", case_environment, True),
                                   ("signals", case_signals, False), ("native", case_native, False),
                                   ("live-end", case_live_end, True), ("hold", case_hold, True)):
        if torch_needed and not has_torch:
            emit("SKIP", name, "torch not importable")
            continue
        tmp = tempfile.mkdtemp(prefix="tft-record-test-")
        t = time.monotonic()
        try:
            fn(tmp)
        except Exception as e:
            emit("FAIL", name, "%s: %s" % (type(e).__name__, e))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        print("# %s: %.1f s" % (name, time.monotonic() - t), flush=True)
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
