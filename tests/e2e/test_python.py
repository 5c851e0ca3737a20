#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# The Python module (python/tftracer, built into $TFT_BUILD_DIR/python): import,
# TracingServer in a real PyTorch loop (runs, SSE, trace on demand -> ops visible
# within 1 s, controls, save/load), the job's end (every step before the `end` event),
# trace requests counted as their steps land, a traced step's ops on the job's own
# process and thread with shapes and categories, Timeline (PyTorch and TF stand-in),
# the TF hook and Keras callback glue, disk full, unwritable path, bounded memory,
# GIL release.
#
# TensorFlow is not installable here: the hook, the Keras callback and hook_inject
# are tested against a SMALL STAND-IN for the TF API they touch (fake_tf below:
# SessionRunHook/SessionRunArgs/RunOptions/RunMetadata/MonitoredTrainingSession,
# keras Callback, profiler.experimental). The data they hand to C is real: RunMetadata
# bytes built with the protobuf wire format (as tests/unit/test_ingest_runmeta.c
# does) and a real XSpace file from the shared corpus.
"""Usage: test_python.py [--case NAME]   (each case runs in its own process)"""
import http.client
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import types
import urllib.error
import urllib.request
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
BUILD = os.environ.get("TFT_BUILD_DIR", "build")
PYDIR = os.path.join(ROOT, BUILD, "python") if not os.path.isabs(BUILD) else os.path.join(BUILD, "python")
DATA = os.environ.get("TFT_DATA", os.path.join(ROOT, "..", "shared", "data"))
PYTHON = "/usr/bin/python3"
SUITE = "python"


def emit(kind, name, reason=None):
    line = "%s %s/%s" % (kind, SUITE, name)
    if reason:
        line += " (%s)" % " ".join(str(reason).split())[:600]
    print(line, flush=True)


def check(name, problems):
    if problems:
        emit("FAIL", name, "; ".join(problems))
    else:
        emit("PASS", name)


def note(msg):
    print("# " + msg, flush=True)


# ---- helpers used inside the cases ------------------------------------------------

def http_json(base, path, body=None, headers=None, method=None):
    data = json.dumps(body).encode() if isinstance(body, (dict, list)) else body
    req = urllib.request.Request(base + path, data=data, headers=headers or {},
                                 method=method or ("POST" if data is not None else "GET"))
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


class SSE:
    """Reads /api/live in a thread: a list of (time, event, data). Like the web page
    (web/runs.js), it says when it read `end` (POST /api/live/ended), unless ack=False:
    a stopping server waits for that (2 s at most)."""

    def __init__(self, port, path="/api/live", ack=True):
        self.events = []
        self.status = None
        self.port, self.ack = port, ack
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        self.conn.request("GET", path)
        self.resp = self.conn.getresponse()
        self.status = self.resp.status
        self.ctype = self.resp.getheader("Content-Type")
        self.th = threading.Thread(target=self._run, daemon=True)
        self.th.start()

    def _run(self):
        ev, data = None, None
        try:
            while True:
                line = self.resp.readline()
                if not line:
                    return
                line = line.decode().rstrip("\n")
                if line.startswith("event: "):
                    ev = line[7:]
                elif line.startswith("data: "):
                    data = line[6:]
                elif line == "" and ev:
                    self.events.append((time.monotonic(), ev, json.loads(data)))
                    if ev == "end" and self.ack:
                        try:
                            http_json("http://127.0.0.1:%d" % self.port, "/api/live/ended", {})
                        except Exception:
                            pass
                    ev, data = None, None
        except Exception:
            return

    def of(self, kind):
        return [e for e in self.events if e[1] == kind]

    def close(self):
        try:
            self.conn.close()
        except Exception:
            pass


def rss_kb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


# RunMetadata bytes by the protobuf wire format (tensorflow/core/protobuf/config.proto:
# RunMetadata.step_stats = 1; step_stats.proto: StepStats.dev_stats = 1;
# DeviceStepStats.device = 1, node_stats = 2; NodeExecStats.node_name = 1,
# all_start_micros = 2, op_start_rel_micros = 3, op_end_rel_micros = 4,
# all_end_rel_micros = 5, timeline_label = 8).
def _varint(v):
    out = bytearray()
    v &= (1 << 64) - 1
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _field_int(num, v):
    return _varint(num << 3) + _varint(v)


def _field_bytes(num, b):
    return _varint((num << 3) | 2) + _varint(len(b)) + b


def node_stats(name, start_us, dur_us, label=None):
    b = _field_bytes(1, name.encode()) + _field_int(2, start_us) + _field_int(3, 0)
    b += _field_int(4, dur_us) + _field_int(5, dur_us)
    if label:
        b += _field_bytes(8, label.encode())
    return b


def run_metadata_bytes(t0_us):
    """One step: MatMul/Relu on GPU:0, a RecvTensor on the CPU (communication)."""
    gpu = _field_bytes(1, b"/job:worker/replica:0/task:0/device:GPU:0")
    gpu += _field_bytes(2, node_stats("dense/MatMul", t0_us + 10, 100, "dense/MatMul = MatMul(x, w)"))
    gpu += _field_bytes(2, node_stats("dense/Relu", t0_us + 120, 30, "dense/Relu = Relu(dense/MatMul)"))
    cpu = _field_bytes(1, b"/job:worker/replica:0/task:0/device:CPU:0")
    cpu += _field_bytes(2, node_stats("RecvTensor", t0_us, 50, "RecvTensor"))
    step_stats = _field_bytes(1, gpu) + _field_bytes(1, cpu)
    return _field_bytes(1, step_stats)


def fake_tf(mts_calls=None, xplane=None):
    """The smallest stand-in for the TF API the glue touches (NOT TensorFlow)."""
    tf = types.ModuleType("tensorflow")
    tf.__tftracer_stand_in__ = True

    class RunOptions:
        FULL_TRACE = 3
        NO_TRACE = 0

        def __init__(self, trace_level=0, output_partition_graphs=False):
            self.trace_level = trace_level

    class RunMetadata:
        def __init__(self):
            self.data = b""

        def SerializeToString(self):
            return self.data

        def ByteSize(self):
            return len(self.data)

    class SessionRunHook:
        pass

    class SessionRunArgs:
        def __init__(self, fetches, feed_dict=None, options=None):
            self.fetches, self.feed_dict, self.options = fetches, feed_dict, options

    def MonitoredTrainingSession(*a, **kw):
        if mts_calls is not None:
            mts_calls.append(kw)
        return "session"

    tf.RunOptions, tf.RunMetadata = RunOptions, RunMetadata
    tf.train = types.SimpleNamespace(SessionRunHook=SessionRunHook, SessionRunArgs=SessionRunArgs,
                                     MonitoredTrainingSession=MonitoredTrainingSession)

    class Callback:
        def __init__(self):
            self.model = None

    def prof_start(logdir):
        tf._logdir = logdir

    def prof_stop():
        d = os.path.join(tf._logdir, "plugins", "profile", "2024_01_01_00_00_00")
        os.makedirs(d, exist_ok=True)
        shutil.copy(xplane, os.path.join(d, "host.xplane.pb"))

    tf.keras = types.SimpleNamespace(callbacks=types.SimpleNamespace(Callback=Callback))
    tf.profiler = types.SimpleNamespace(experimental=types.SimpleNamespace(start=prof_start,
                                                                           stop=prof_stop))
    tf.compat = types.SimpleNamespace(v1=tf)
    return tf


def wait_for(fn, timeout=5.0, every=0.02):
    end = time.monotonic() + timeout
    while True:
        v = fn()
        if v or time.monotonic() > end:
            return v
        time.sleep(every)


# ---- cases (each runs in a child process) ---------------------------------------------

def case_import(tmp):
    import tftracer
    probs = []
    if not tftracer.__file__.startswith(PYDIR):
        probs.append("imported from %s, not %s" % (tftracer.__file__, PYDIR))
    for name in ("TracingServer", "Timeline", "hook_inject", "Error", "zone"):
        if not hasattr(tftracer, name):
            probs.append("no tftracer.%s" % name)
    if not re.match(r"\d+\.\d+\.\d+$", tftracer.__version__):
        probs.append("version %r" % tftracer.__version__)
    check("import", probs)


def case_traced_midstep(tmp):
    """Tracing switched on and off inside steps (the UI's switch): a step is traced when
    tracing was on as it began, in the session as in what step() said."""
    import torch
    import tftracer
    probs = []
    m = torch.nn.Linear(4, 2)
    x = torch.randn(8, 4)
    opt = torch.optim.SGD(m.parameters(), lr=0.01)
    path = os.path.join(tmp, "mid.tft")
    server = tftracer.TracingServer(port=0, session=path)
    said = []
    for i in range(10):
        with server.step("train") as st:
            if i == 3:
                server.set_tracing(True)
            if i == 6:
                server.set_tracing(False)
            m(x).sum().backward()
            opt.step()
            opt.zero_grad()
        said.append(st.traced)
    server.wait_imports(60)
    server.stop()
    from tftracer import _tftracer  # noqa: F401  (the CLI reads the file back)
    cli = os.path.join(ROOT, BUILD, "tftracer") if not os.path.isabs(BUILD) else os.path.join(BUILD, "tftracer")
    out = subprocess.run([cli, "info", "--json", path], capture_output=True, text=True)
    got = [s["traced"] for s in json.loads(out.stdout)["step_list"]] if out.returncode == 0 else out.stderr
    want = [False] * 4 + [True] * 3 + [False] * 3
    if said != want or got != want:
        probs.append("step() said %r, the session has %r, want %r" % (said, got, want))
    check("traced_midstep", probs)


def case_port_taken(tmp):
    """The server cannot start (port taken): one warning that tracing is off, the runtime
    it started stopped, no session file left behind, step() a no-op."""
    import socket
    import tftracer
    probs = []
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen()
    path = os.path.join(tmp, "taken.tft")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        srv = tftracer.TracingServer(port=busy.getsockname()[1], session=path)
    busy.close()
    msgs = [str(w.message) for w in caught]
    if len(msgs) != 1 or "tracing is off" not in msgs[0]:
        probs.append("warnings %r" % msgs)
    if srv.url or os.path.exists(path) or tftracer.stats()["state"] != "off":
        probs.append("url %r, file left %s, runtime %s" % (srv.url, os.path.exists(path), tftracer.stats()["state"]))
    with srv.step("x") as st:
        pass
    if st.index != -1:
        probs.append("step() recorded index %r" % st.index)
    check("port_taken", probs)


def case_import_blocking(tmp):
    """import_trace(block=True): a text-format RunMetadata imports as `tftracer import` reads
    it, and blocking imports count in status() as queued ones do."""
    import tftracer
    probs = []
    pbtxt = os.path.join(DATA, "tensorboard", "run_metadata_run_step99_tag_train.pbtxt")
    if not os.path.exists(pbtxt):
        emit("SKIP", "import_blocking", "missing data: %s" % pbtxt)
        return
    srv = tftracer.TracingServer(port=0, session=os.path.join(tmp, "ib.tft"))
    try:
        n = srv.import_trace("runmetadata", path=pbtxt, block=True)
        if n != 1:
            probs.append("text RunMetadata: %r events, want 1" % n)
        bad = os.path.join(tmp, "bad.pb")
        with open(bad, "wb") as f:
            f.write(b"\xff\xff\xff")
        try:
            srv.import_trace("xspace", path=bad, block=True)
            probs.append("a bad XSpace imported")
        except tftracer.Error:
            pass
        st = srv.status()
        if (st["imports"], st["import_errors"], st["imported_events"]) != (1, 1, 1) or "bad.pb" not in st["last_import_error"]:
            probs.append("status %r" % {k: st[k] for k in ("imports", "import_errors", "imported_events", "last_import_error")})
    finally:
        srv.stop()
    check("import_blocking", probs)


def case_live_torch(tmp):
    import torch
    import tftracer
    sys.path.insert(0, os.path.join(ROOT, "examples", "pytorch"))
    import train_mlp
    torch.set_num_threads(1)
    srv = tftracer.TracingServer(port=0, session=os.path.join(tmp, "run-%p.tft"), keep_traces=2)
    base = "http://127.0.0.1:%d" % srv.port
    probs = []
    if not srv.url.startswith("http://127.0.0.1:"):
        probs.append("url %r" % srv.url)
    sse = SSE(srv.port)
    if sse.status != 200 or "text/event-stream" not in (sse.ctype or ""):
        probs.append("/api/live: %s %s" % (sse.status, sse.ctype))
    train_mlp.train(srv, 200, log_every=0)     # 200 train + 4 eval steps
    ok = wait_for(lambda: len(sse.of("run")) >= 204, 3)
    st, runs = http_json(base, "/api/runs?recent=5")
    kinds = {r["name"]: r for r in runs.get("runs", [])} if st == 200 else {}
    if kinds.get("train", {}).get("count") != 200 or kinds.get("eval", {}).get("count") != 4:
        probs.append("/api/runs counts: %s" % {k: v.get("count") for k, v in kinds.items()})
    tr = kinds.get("train", {})
    if not (0 < tr.get("min_ns", 0) <= tr.get("p50_ns", 0) <= tr.get("p99_ns", 0) <= tr.get("max_ns", 0)):
        probs.append("train stats out of order: %s" % {k: tr.get(k) for k in ("min_ns", "p50_ns", "p99_ns", "max_ns")})
    if len(tr.get("recent", [])) != 5:
        probs.append("recent: %d items" % len(tr.get("recent", [])))
    check("runs", probs)

    probs = []
    if not ok:
        probs.append("%d run events, want 204" % len(sse.of("run")))
    if not wait_for(lambda: sse.of("status"), 2.5):
        probs.append("no status event")
    else:
        s = sse.of("status")[-1][2]
        for k in ("live", "state", "tracing", "pending", "events", "dropped", "steps", "generation"):
            if k not in s:
                probs.append("status lacks %s" % k)
    idx = [e[2]["index"] for e in sse.of("run")]
    if idx != sorted(idx):
        probs.append("run events out of order")
    check("sse", probs)

    # trace the next step on demand: its ops must be queryable within 1 s of its end
    probs = []
    st, r = http_json(base, "/api/trace", {"steps": 1})
    if st != 200 or r.get("pending") != 1:
        probs.append("POST /api/trace: %s %s" % (st, r))
    train_mlp.train(srv, 1, log_every=0)
    seen = wait_for(lambda: http_json(base, "/api/search?q=aten::addmm&limit=5")[1].get("total", 0) > 0, 5, 0.005)
    t_seen = time.monotonic_ns()   # CLOCK_MONOTONIC: the session clock
    traced = wait_for(lambda: [s for s in http_json(base, "/api/steps")[1].get("steps", [])
                               if s["traced"]], 2) or []
    if not seen:
        probs.append("aten::addmm never appeared")
    elif traced:
        # from the step's end as the runtime recorded it (tft_step_end), profiler export included
        latency = (t_seen - (traced[0]["start_ns"] + traced[0]["dur_ns"])) / 1e9
        note("traced step: aten::addmm searchable %.3f s after the step ended" % latency)
        if latency > 1.0:
            probs.append("aten::addmm appeared %.3f s after the step ended (> 1 s)" % latency)
    if len(traced) != 1:
        probs.append("%d traced steps in /api/steps" % len(traced))
    else:
        t = traced[0]
        st, res = http_json(base, "/api/search?q=aten::&limit=10000")
        ops = res.get("results", [])
        inside = [o for o in ops if t["start_ns"] <= o["ts"] and o["ts"] + o["dur"] <= t["start_ns"] + t["dur_ns"]]
        if len(inside) < 0.95 * len(ops):
            probs.append("only %d of %d ops inside the traced step's time" % (len(inside), len(ops)))
        st, sess = http_json(base, "/api/session")
        tids = [tk["id"] for tk in sess["track_list"] if tk["slices"]]
        st, vp = http_json(base, "/api/viewport?tracks=%s&t0=%d&t1=%d&width=800" % (
            ",".join(map(str, tids)), t["start_ns"], t["start_ns"] + t["dur_ns"]))
        names = set()
        for tk in vp.get("tracks", []):
            names |= {vp["strings"][str(n)] for n in tk.get("name", [])}
        if not any(n.startswith("aten::") for n in names):
            probs.append("viewport over the step shows no aten:: op: %s" % sorted(names)[:8])
    if not wait_for(lambda: [e for e in sse.of("trace") if e[2]["source"] == "torch"], 3):
        probs.append("no trace event with source torch: %s" % [e[2] for e in sse.of("trace")])
    check("trace_on_demand", probs)

    probs = []
    st, r = http_json(base, "/api/trace", {"every": 10})
    if st != 200 or r.get("every") != 10:
        probs.append("every: %s %s" % (st, r))
    before = srv.status()["imports"]
    train_mlp.train(srv, 20, log_every=0)
    http_json(base, "/api/trace", {"every": 0})
    srv.wait_imports()
    got = srv.status()["imports"] - before
    if got < 2:
        probs.append("trace every 10 over 20 steps: %d imports" % got)
    for body, want in (({"steps": -1}, 400), ({"steps": "x"}, 400), ({}, 400), (b"{", 400),
                       ({"on": 3}, 400)):
        path = "/api/tracing" if "on" in (body if isinstance(body, dict) else {}) else "/api/trace"
        st, r = http_json(base, path, body, headers={"Content-Type": "application/json"})
        if st != want:
            probs.append("%s %r: %s, want %s" % (path, body, st, want))
    st, r = http_json(base, "/api/tracing", {"on": True})
    on = srv.status()["tracing"]
    g_on = (http_json(base, "/api/live/status")[1].get("global"), srv.status().get("global"))
    st2, r2 = http_json(base, "/api/tracing", {"on": False})
    if st != 200 or not on or srv.status()["tracing"]:
        probs.append("/api/tracing on/off did not switch")
    g_off = (http_json(base, "/api/live/status")[1].get("global"), srv.status().get("global"))
    if g_on != (True, True) or g_off != (False, False):
        probs.append("global (HTTP, status()): %r after on, %r after off" % (g_on, g_off))
    raw = [f for f in os.listdir(srv._trace_dir())]
    if len(raw) > 2:
        probs.append("keep_traces=2 but %d raw trace files" % len(raw))
    check("controls", probs)

    # save (HTTP and Python), then serve the copy and come back
    probs = []
    saved = os.path.join(tmp, "saved-http.tft")
    st, r = http_json(base, "/api/save", {"path": saved})
    if st != 200 or not os.path.exists(saved):
        probs.append("POST /api/save: %s %s" % (st, r))
    st, r = http_json(base, "/api/save", {"path": saved})
    if st != 400:
        probs.append("saving over an existing file: %s" % st)
    p2 = srv.save_session(os.path.join(tmp, "saved.tft"))
    summ = tftracer._tftracer.summary(p2)
    if summ["steps"] < 225 or summ["slices"] < 10:
        probs.append("saved session: %s" % summ)
    srv.load_session(p2)
    st, sess = http_json(base, "/api/session")
    st2, _ = http_json(base, "/api/live/status")
    st3, runs = http_json(base, "/api/runs")
    if st != 200 or sess.get("steps") != summ["steps"] or runs.get("live") is not False:
        probs.append("serving the saved file: %s steps, runs live=%s" % (sess.get("steps"), runs.get("live")))
    srv.load_session(None)
    st, s = http_json(base, "/api/live/status")
    if not s.get("live"):
        probs.append("back to live: %s" % s)
    check("save_load", probs)

    probs = []
    st, r = http_json(base, "/api/stop", {})
    if st != 200 or not srv.join(timeout=5):
        probs.append("POST /api/stop: %s, join did not return" % st)
    sse.close()
    with srv.step("train"):   # the job goes on after the server stopped
        pass
    srv.stop()
    check("stop", probs)


def case_timeline_torch(tmp):
    import torch
    import tftracer
    probs = []
    m = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 8))
    x = torch.randn(16, 32)
    with tftracer.Timeline() as tl:
        m(x).sum().backward()
    out = os.path.join(tmp, "step.html")
    tl.visualize(out)
    html = open(out, encoding="utf-8").read()
    if 'id="tft-data"' not in html or "aten::addmm" not in html:
        probs.append("page lacks the inlined data")
    # no reference to another host (an XML namespace name is not a reference)
    refs = [u for u in re.findall(r"https?://[^\s\"'<>)]+", html) if "www.w3.org/" not in u]
    if refs:
        probs.append("references other hosts: %s" % refs[:3])
    if re.search(r"<script[^>]+src=|<link[^>]+href=\"(?!data:)", html):
        probs.append("the page loads files (script src / link href)")
    if not (tl.step_time() > 0 and 0 < tl.computation_time() <= tl.step_time() + 1e-6):
        probs.append("times: step %s busy %s" % (tl.step_time(), tl.computation_time()))
    saved = tl.save(os.path.join(tmp, "step.tft"))
    tl2 = tftracer.Timeline.load(saved)
    if abs(tl2.step_time() - tl.step_time()) > 1e-6:
        probs.append("load: step_time %s != %s" % (tl2.step_time(), tl.step_time()))
    # the ops on this process and thread (not "CPU functions", thread 1), with their shapes
    chrome = os.path.join(tmp, "step.json")
    cli = os.path.join(ROOT, BUILD, "tftracer") if not os.path.isabs(BUILD) else os.path.join(BUILD, "tftracer")
    subprocess.run([cli, "export", saved, "-f", "chrome", "-o", chrome, "--quiet"], check=True)
    with open(chrome) as f:
        evs = json.load(f)
    evs = evs["traceEvents"] if isinstance(evs, dict) else evs
    ops = [e for e in evs if e.get("ph") == "X"]
    where = {(e["pid"], e["tid"]) for e in ops}
    if where != {(os.getpid(), threading.get_native_id())}:
        probs.append("ops on (pid, tid) %r, want this process and thread" % sorted(where)[:4])
    mm = [e for e in ops if e["name"] == "aten::addmm"]
    if not mm or mm[0].get("cat") != "cpu_op" or mm[0]["args"].get("Input Dims") != [[64], [16, 32], [32, 64], [], []]:
        probs.append("aten::addmm %r" % mm[:1])
    check("timeline_torch", probs)


def case_timeline_tf(tmp):
    sys.modules["tensorflow"] = fake_tf()
    import tftracer
    probs = []
    t0 = 1700000000000000
    with tftracer.Timeline() as tl:
        kw = tl.kwargs   # what sess.run(..., **tl.kwargs) gets
        if kw["options"].trace_level != 3:
            probs.append("options not FULL_TRACE")
        kw["run_metadata"].data = run_metadata_bytes(t0)   # sess.run fills it
    if abs(tl.step_time() - 150.0) > 1e-6:
        probs.append("step_time %s us, want 150" % tl.step_time())
    if abs(tl.communication_time() - 50.0) > 1e-6:
        probs.append("communication_time %s us, want 50" % tl.communication_time())
    if abs(tl.computation_time() - 140.0) > 1e-6:   # [0,110] and [120,150] are busy
        probs.append("computation_time %s us, want 140" % tl.computation_time())
    if abs(tl.step_time("GPU:0") - 140.0) > 1e-6:
        probs.append("step_time(GPU:0) %s us, want 140" % tl.step_time("GPU:0"))
    html = tl.visualize()
    if "dense/MatMul" not in html:
        probs.append("visualize() text lacks the ops")
    check("timeline_tf_standin", probs)


def case_hook(tmp):
    mts = []
    sys.modules["tensorflow"] = fake_tf(mts_calls=mts)
    tf = sys.modules["tensorflow"]
    import tftracer
    srv = tftracer.TracingServer(port=0, session=os.path.join(tmp, "hook-%p.tft"))
    base = "http://127.0.0.1:%d" % srv.port
    hook = srv.hook
    probs = []
    if not isinstance(hook, tf.train.SessionRunHook):
        probs.append("hook is not a SessionRunHook")

    def run(fetches, traced_data):
        ctx = types.SimpleNamespace(original_args=tf.train.SessionRunArgs(fetches))
        args = hook.before_run(ctx)
        md = tf.RunMetadata()
        full = args is not None and args.options is not None and args.options.trace_level == 3
        if full:
            md.data = traced_data
        hook.after_run(ctx, types.SimpleNamespace(results=None, run_metadata=md))
        return full

    hook.begin()
    t0 = int(time.time() * 1e6)
    fulls = [run("train_op", run_metadata_bytes(t0)) for _ in range(5)]
    srv.trace_next(1)
    fulls.append(run("train_op", run_metadata_bytes(t0)))
    run("loss", b"")
    hook.end(None)
    if fulls != [False] * 5 + [True]:
        probs.append("FULL_TRACE requested for runs %s" % fulls)
    srv.wait_imports()
    st, r = wait_for(lambda: (lambda x: x if x[1].get("total") else None)(
        http_json(base, "/api/search?q=dense/MatMul")), 3) or (0, {})
    if not r.get("total"):
        probs.append("the RunMetadata ops are not in the live session: %s" % srv.status())
    st, runs = http_json(base, "/api/runs")
    counts = sorted(x["count"] for x in wait_for(lambda: http_json(base, "/api/runs")[1]["runs"]
                                                  if len(http_json(base, "/api/runs")[1]["runs"]) == 2 else None, 3) or [])
    if counts != [1, 6]:
        probs.append("run kinds by fetches: %s" % counts)
    for i in range(200):   # many distinct fetches: the run-kind table stays bounded
        run("op%d" % i, b"")
    if len(hook._kinds) > 64:
        probs.append("%d run kinds kept (LRU bound 64)" % len(hook._kinds))
    srv.stop()
    check("hook_standin", probs)

    # hook_inject: MonitoredTrainingSession gets the hook added
    probs = []
    server = tftracer.hook_inject(port=0, session=os.path.join(tmp, "inject-%p.tft"))
    tf.train.MonitoredTrainingSession(hooks=[])
    tf.compat.v1.train.MonitoredTrainingSession()
    if len(mts) != 2 or any(server.hook not in kw.get("hooks", []) for kw in mts):
        probs.append("MonitoredTrainingSession calls: %s" % mts)
    server.stop()
    check("hook_inject_standin", probs)


def case_hook_inject_no_tf(tmp):
    import builtins
    real = builtins.__import__

    def no_tf(name, *a, **kw):
        if name == "tensorflow" or name.startswith("tensorflow."):
            raise ImportError("no tensorflow here")
        return real(name, *a, **kw)
    builtins.__import__ = no_tf
    import tftracer
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = tftracer.hook_inject(port=0)
    msgs = [str(x.message) for x in w]
    check("hook_inject_without_tf", [] if r is None and any("TensorFlow is not installed" in m for m in msgs)
          else ["returned %r, warnings %s" % (r, msgs)])


def case_keras(tmp):
    xplane = os.path.join(DATA, "tracelens", "jax_mi300", "jax08_gemm", "tw003.xplane.pb")
    if not os.path.exists(xplane):
        emit("SKIP", "keras_callback_standin", "no %s" % xplane)
        return
    sys.modules["tensorflow"] = fake_tf(xplane=xplane)
    import tftracer
    srv = tftracer.TracingServer(port=0, session=os.path.join(tmp, "keras-%p.tft"))
    base = "http://127.0.0.1:%d" % srv.port
    cb = srv.keras_callback()
    probs = []
    for b in range(3):
        if b == 1:
            srv.trace_next(1)
        cb.on_train_batch_begin(b)
        time.sleep(0.002)
        cb.on_train_batch_end(b)
    srv.wait_imports()
    s = srv.status()
    if s["imports"] != 1 or s["import_errors"]:
        probs.append("imports %s, errors %s (%s)" % (s["imports"], s["import_errors"], s["last_import_error"]))
    st, sess = http_json(base, "/api/session")
    if sess.get("slices", 0) < 1000:
        probs.append("XSpace events not in the live session: %s slices" % sess.get("slices"))
    # The follower aggregates finished steps on its own tick, after the import
    # may have returned: /api/runs catches up within a tick or two.
    got = {}

    def three_runs():
        got["runs"] = http_json(base, "/api/runs")[1]
        return [r["count"] for r in got["runs"]["runs"]] == [3]
    if not wait_for(three_runs, timeout=5.0):
        probs.append("runs %s" % got.get("runs"))
    srv.stop()
    check("keras_callback_standin", probs)


def case_disk_full(tmp):
    # Writes past 256 KiB fail (RLIMIT_FSIZE, EFBIG) like a full disk (the session
    # compresses these regular zones to ~1 byte each, so a larger cap may never fill).
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (256 << 10, 256 << 10))
    import tftracer
    probs = []
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        srv = tftracer.TracingServer(port=0, session=os.path.join(tmp, "full-%p.tft"))
        srv.set_tracing(True)
        done = 0
        for i in range(4000):   # ~ 400 k zones: far more than 4 MiB
            with srv.step("train"):
                for _ in range(100):
                    with tftracer.zone("op%d" % (i % 1000)):
                        pass
            done += 1
            if i % 100 == 0:
                time.sleep(0.01)
        time.sleep(0.3)
        with srv.step("train"):
            pass
    mine = [x for x in w if "tftracer" in str(x.message)]
    s = srv.status()
    if done != 4000:
        probs.append("training stopped at %d" % done)
    if len(mine) != 1 or "disabled" not in str(mine[0].message):
        probs.append("warnings: %s" % [str(x.message) for x in mine])
    if s["state"] != "disabled" or not s["disabled_reason"]:
        probs.append("state %s (%s)" % (s["state"], s["disabled_reason"]))
    if not (s["dropped"] > 0 or s["lost_steps"] > 0):
        probs.append("nothing counted as lost: %s" % s)
    note("disk full: %s; dropped %d events, %d steps not recorded" % (
        s["disabled_reason"], s["dropped"], s["lost_steps"]))
    srv.stop()
    check("disk_full", probs)


def case_unwritable(tmp):
    import tftracer
    probs = []
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        srv = tftracer.TracingServer(port=0, session="/proc/tftracer-no-such-dir/run.tft")
        for _ in range(100):
            with srv.step("train"):
                pass
    mine = [str(x.message) for x in w if "tftracer" in str(x.message)]
    if len(mine) != 1 or "tracing is off" not in mine[0]:
        probs.append("warnings: %s" % mine)
    srv.stop()
    check("unwritable_session", probs)


def case_memory(tmp):
    if "libasan" in os.environ.get("LD_PRELOAD", ""):
        emit("SKIP", "bounded_memory", "under ASan (its quarantine holds freed memory)")
        return
    import tftracer
    srv = tftracer.TracingServer(port=0, session=os.path.join(tmp, "mem-%p.tft"))
    kinds = ["train", "eval", "data"]

    def steps(n):
        for i in range(n):
            with srv.step(kinds[i % 3]):
                pass
    steps(200)
    time.sleep(0.3)
    a = rss_kb()
    steps(1800)
    time.sleep(0.3)
    b = rss_kb()
    steps(18000)
    time.sleep(0.5)
    c = rss_kb()
    note("RSS after 200 / 2000 / 20000 steps: %d / %d / %d KiB" % (a, b, c))
    probs = []
    # The writer's SQLite page cache (capped at 16 MiB) fills as the file grows.
    if b - a > 4096 or c - a > 20480:
        probs.append("RSS grew %d KiB (2000 steps) / %d KiB (20000 steps)" % (b - a, c - a))
    srv.stop()
    check("bounded_memory", probs)


def case_gil(tmp):
    import tftracer
    from tftracer import _tftracer as c
    big = os.path.join(DATA, "hta", "df_index_resolver", "df_index_resolver.json.gz")
    if not os.path.exists(big):
        emit("SKIP", "gil_released", "no %s" % big)
        return
    count = [0]
    stop = [False]

    def spin():
        while not stop[0]:
            count[0] += 1
    th = threading.Thread(target=spin)
    th.start()
    time.sleep(0.05)
    out = os.path.join(tmp, "big.tft")
    c0 = count[0]
    t = time.monotonic()
    c.ingest(out, "auto", path=big)
    dt = time.monotonic() - t
    c1 = count[0]
    # a slow flush: many events waiting in the runtime's rings
    c.init(session=os.path.join(tmp, "gil-%p.tft"), enabled=True, buffer_bytes=64 << 20)
    for i in range(300000):
        with tftracer.zone("z"):
            pass
    c2 = count[0]
    t2 = time.monotonic()
    c.flush(10000)
    dt2 = time.monotonic() - t2
    c3 = count[0]
    stop[0] = True
    th.join()
    c.shutdown()
    note("during a %.2f s import the other thread counted %d; during a %.3f s flush %d" % (
        dt, c1 - c0, dt2, c3 - c2))
    probs = []
    if dt > 0.2 and c1 - c0 < 10000:
        probs.append("the other thread was stuck during the import (%d)" % (c1 - c0))
    if dt2 > 0.02 and c3 - c2 < 1000:
        probs.append("the other thread was stuck during the flush (%d)" % (c3 - c2))
    check("gil_released", probs)


def case_auth(tmp):
    import tftracer
    srv = tftracer.TracingServer(port=0, token="secret-token-123", session=os.path.join(tmp, "a-%p.tft"))
    base = "http://127.0.0.1:%d" % srv.port
    probs = []
    st, _ = http_json(base, "/api/trace", {"steps": 1})
    if st != 401:
        probs.append("POST without token: %s" % st)
    st, _ = http_json(base, "/api/trace", {"steps": 1}, headers={"X-TFT-Token": "secret-token-123"})
    if st != 200:
        probs.append("POST with token: %s" % st)
    st, _ = http_json(base, "/api/trace", {"steps": 1}, headers={"X-TFT-Token": "secret-token-123",
                                                                "Origin": "http://evil.example"})
    if st != 403:
        probs.append("cross-origin POST: %s" % st)
    if "token=secret-token-123" not in srv.url:
        probs.append("url %s" % srv.url)
    srv.stop()
    check("auth", probs)


def _sse_done(sse, timeout):
    """Wait for the stream's reader to see its end (EOF): True if it did."""
    sse.th.join(timeout)
    return not sse.th.is_alive()


def case_live_end(tmp):
    """The job stops its server (TracingServer.stop(), as at the end of a script): every
    step it recorded reaches the stream (a run each; a trace each for the traced ones,
    their profiler imports included), then `end`, then the stream ends cleanly."""
    import torch
    import tftracer
    torch.set_num_threads(1)
    probs = []
    m = torch.nn.Linear(8, 4)
    x = torch.randn(4, 8)
    srv = tftracer.TracingServer(port=0, session=os.path.join(tmp, "end.tft"))
    sse = SSE(srv.port)
    wait_for(lambda: sse.of("status"), 5)
    n = 400
    for i in range(n):
        if i == n - 3:
            srv.trace_next(3)   # the last three: their torch.profiler traces land at the end
        with srv.step("train"):
            with tftracer.zone("forward"):
                m(x).sum().backward()
    srv.stop()   # at once: nothing waited for
    ended = _sse_done(sse, 15)
    runs = [e[2]["index"] for e in sse.of("run")]
    kinds = [e[1] for e in sse.events]
    if not ended:
        probs.append("the stream did not end after stop()")
    if runs != list(range(n)):
        probs.append("%d of %d run events (missing %s)" % (len(runs), n, sorted(set(range(n)) - set(runs))[:5]))
    if not kinds or kinds[-1] != "end":
        probs.append("last events %s, want ... end" % kinds[-4:])
    else:
        end = sse.events[-1][2]
        if end.get("reason") != "stop" or end.get("steps") != n or end.get("session") != "end.tft":
            probs.append("end event %r" % end)
    done = [e[2] for e in sse.of("trace") if e[2].get("complete")]
    if sorted(d["step"] for d in done) != [n - 3, n - 2, n - 1] or any(d["source"] != "torch" or not d["events"] for d in done):
        probs.append("traced steps landed before the end: %r" % [(d["step"], d["source"], d["events"]) for d in done])
    check("live_end", probs)

    # the page's stop (POST /api/stop): the same, reason "api"; the job goes on
    probs = []
    srv = tftracer.TracingServer(port=0, session=os.path.join(tmp, "end2.tft"))
    base = "http://127.0.0.1:%d" % srv.port
    sse = SSE(srv.port)
    for i in range(20):
        with srv.step("train"):
            pass
    st, r = http_json(base, "/api/stop", {})
    if st != 200 or not srv.join(timeout=5) or not _sse_done(sse, 5):
        probs.append("POST /api/stop: %s; the server or the stream did not end" % st)
    runs = [e[2]["index"] for e in sse.of("run")]
    if runs != list(range(20)) or [e[1] for e in sse.events][-1:] != ["end"] or sse.events[-1][2].get("reason") != "api":
        probs.append("after POST /api/stop: runs %s, last %s" % (runs[-3:], sse.events[-1:]))
    srv.stop()
    check("live_end_api", probs)


def case_live_end_read(tmp):
    """A page may ask something after its stream's `end` left the server and before it
    reads it (a busy browser): the stopping server waits for the page to say it read
    `end` (POST /api/live/ended), so that request is answered, not refused; once the
    page said so the stop ends promptly, and a client that never says it (a script's
    stream) holds the stop 2 s at most."""
    import tftracer
    probs = []
    srv = tftracer.TracingServer(port=0, session=os.path.join(tmp, "read.tft"))
    base = "http://127.0.0.1:%d" % srv.port
    sse = SSE(srv.port, ack=False)  # it says so itself below, late
    wait_for(lambda: sse.of("status"), 5)
    for i in range(5):
        with srv.step("train"):
            pass
    done = {}

    def stop():
        t = time.monotonic()
        srv.stop()
        done["stop_s"], done["at"] = time.monotonic() - t, time.monotonic()

    th = threading.Thread(target=stop)
    th.start()
    if not wait_for(lambda: sse.of("end"), 10):
        probs.append("no end event after stop()")
    time.sleep(0.6)  # the page reads `end` late: longer than the stop's 100 ms without a request
    try:
        st, sess = http_json(base, "/api/session")
        if st != 200 or not isinstance(sess, dict) or "tracks" not in sess:
            probs.append("a request before the page read `end`: HTTP %s" % st)
    except Exception as e:
        probs.append("a request before the page read `end` was not answered: %s" % e)
    if "at" in done:
        probs.append("the server stopped %.2f s into the stop, before the page said it read `end`" % done["stop_s"])
    t_read = time.monotonic()
    try:
        st, _ = http_json(base, "/api/live/ended", {})
        if st != 200:
            probs.append("POST /api/live/ended: HTTP %s" % st)
    except Exception as e:
        probs.append("POST /api/live/ended was not answered: %s" % e)
    th.join(10)
    if "at" not in done:
        probs.append("stop() did not return")
    elif done["at"] - t_read > 0.9:
        probs.append("the stop took %.2f s after the page said it read `end`" % (done["at"] - t_read))
    sse.close()

    # a stream whose reader never says it read `end`: the stop waits 2 s at most
    srv = tftracer.TracingServer(port=0, session=os.path.join(tmp, "read2.tft"))
    sse = SSE(srv.port, ack=False)
    wait_for(lambda: sse.of("status"), 5)
    t = time.monotonic()
    srv.stop()
    took = time.monotonic() - t
    if took > 3.5:
        probs.append("stop() with a silent stream took %.2f s (want 2 s at most, and the streams' own 2 s)" % took)
    sse.close()
    check("live_end_read", probs)


def case_live_request(tmp):
    """A trace request's steps are counted as they land: a traced PyTorch step has landed
    once its torch.profiler trace is imported (one `trace` event with complete: true and
    the request's count), not when the first piece of it arrives; a trace that cannot be
    written lands as a failure with its reason; POST /api/trace names the request."""
    import torch
    import tftracer
    torch.set_num_threads(1)
    probs = []
    m = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
    x = torch.randn(8, 16)
    srv = tftracer.TracingServer(port=0, session=os.path.join(tmp, "req.tft"))
    base = "http://127.0.0.1:%d" % srv.port
    sse = SSE(srv.port)
    for i in range(3):
        with srv.step("train"):
            m(x).sum().backward()
    st, r = http_json(base, "/api/trace", {"steps": 3})
    rid = r.get("request")
    if st != 200 or not rid or r.get("pending") != 3:
        probs.append("POST /api/trace: %s %r" % (st, r))
    q = srv.status().get("request")
    if q != {"id": rid, "steps": 3, "begun": 0, "landed": 0, "failed": 0}:
        probs.append("status request before any step: %r" % q)
    counts = []
    for i in range(5):
        with srv.step("train"):
            m(x).sum().backward()
        q = http_json(base, "/api/live/status")[1].get("request") or {}
        counts.append((q.get("begun"), q.get("landed")))
    srv.wait_imports(30)
    wait_for(lambda: (srv.status().get("request") or {}).get("landed") == 3, 5)
    q = srv.status().get("request") or {"begun": None, "landed": None, "failed": None}
    if q["begun"] != 3 or q["landed"] != 3 or q["failed"] != 0:
        probs.append("request after 5 steps: %r" % q)
    if counts and counts[0][0] != 1:
        probs.append("begun after the first step %r" % (counts,))
    def of_request():
        return [e[2] for e in sse.of("trace") if (e[2].get("request") or {}).get("id") == rid]
    wait_for(lambda: len([d for d in of_request() if d.get("complete")]) >= 3, 5)
    done = [d for d in of_request() if d.get("complete")]
    landed = [d["request"]["landed"] for d in done]
    if landed != [1, 2, 3]:
        probs.append("the request's landed count as its steps landed: %r" % landed)
    for d in done:
        if d["source"] != "torch" or d["events"] <= 0:
            probs.append("step %s landed as %s with %s events (its torch trace is part of it)" % (d["step"], d["source"], d["events"]))
    # every trace event that says complete came once its import was done
    imports_seen = [e for e in sse.of("trace") if e[2]["source"] == "torch"]
    if len(imports_seen) < 3:
        probs.append("%d torch trace events" % len(imports_seen))
    check("live_request", probs)

    # a profiler trace that cannot be written: the step lands, as a failure that says why
    probs = []
    from tftracer import _torchtrace
    real = _torchtrace.write_trace

    def broken(*a, **kw):
        raise OSError("disk full (test)")
    _torchtrace.write_trace = broken
    try:
        st, r = http_json(base, "/api/trace", {"steps": 1})
        rid = r.get("request")
        with srv.step("train"):
            m(x).sum().backward()
        ok = wait_for(lambda: srv.status()["request"]["landed"] == 1, 5)
    finally:
        _torchtrace.write_trace = real
    q = srv.status()["request"]
    if not ok or q["id"] != rid or q["failed"] != 1:
        probs.append("request with a failed trace: %r" % q)
    bad = wait_for(lambda: [e[2] for e in sse.of("trace") if (e[2].get("request") or {}).get("id") == rid], 5)
    if not bad or not bad[-1]["complete"] or "disk full (test)" not in bad[-1].get("error", ""):
        probs.append("its trace event: %r" % bad)
    # cancelled: steps 0, nothing more counted
    st, r = http_json(base, "/api/trace", {"steps": 0})
    if st != 200 or srv.status()["request"]["steps"] != 0:
        probs.append("cancel: %s %r" % (st, srv.status()["request"]))
    srv.stop()
    sse.close()
    check("live_request_failed", probs)


def case_live_ops(tmp):
    """A traced step's ops land on the job's own process (its pid) and on the thread track
    the runtime has for the thread that ran them (its OS tid), inside their step, nested
    in the step's zones, with categories, input shapes, FLOPs and the profiler's args;
    /api/slice gives their step's number."""
    import torch
    import tftracer
    torch.set_num_threads(1)
    probs = []
    m = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    x = torch.randn(8, 16)
    srv = tftracer.TracingServer(port=0, session=os.path.join(tmp, "ops.tft"))
    base = "http://127.0.0.1:%d" % srv.port
    tid = threading.get_native_id()
    for i in range(6):
        if i in (1, 4):
            srv.trace_next(1)
        if i == 3:   # a zone the runtime records (a traced step without a profiler)
            srv._srv.on_traced, saved = None, srv._srv.on_traced
            srv.trace_next(1)
        with srv.step("train"):
            with tftracer.zone("forward"):
                loss = m(x).sum()
            with tftracer.zone("backward"):
                loss.backward()
            opt.step()
            opt.zero_grad()
        if i == 3:
            srv._srv.on_traced = saved
    srv.wait_imports(30)
    srv.stop()
    cli = os.path.join(ROOT, BUILD, "tftracer") if not os.path.isabs(BUILD) else os.path.join(BUILD, "tftracer")
    srv2 = subprocess.Popen([cli, "serve", os.path.join(tmp, "ops.tft"), "--port", "0", "--quiet"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        url = srv2.stdout.readline().strip()
        base = re.match(r"(https?://[^/]+)", url).group(1)
        st, sess = http_json(base, "/api/session")
        procs = sess.get("process_list", [])
        if [p["pid"] for p in procs] != [os.getpid()]:
            probs.append("processes %r, want only this job (pid %d)" % ([(p["name"], p["pid"]) for p in procs], os.getpid()))
        threads = [t for t in sess.get("track_list", []) if t["kind"] == "thread"]
        if [t["tid"] for t in threads] != [tid]:
            probs.append("thread tracks %r, want one: tid %d" % ([(t["name"], t["tid"]) for t in threads], tid))
        st, steps = http_json(base, "/api/steps")
        traced = [s for s in steps.get("steps", []) if s["traced"]]
        if [s["index"] for s in traced] != [1, 3, 4]:
            probs.append("traced steps %r" % [s["index"] for s in traced])
        st, res = http_json(base, "/api/search?q=aten::addmm&exact=1&limit=100")
        hits = res.get("results", [])
        for s in traced:
            mine = [h for h in hits if s["start_ns"] <= h["ts"] and h["ts"] + h["dur"] <= s["start_ns"] + s["dur_ns"]]
            if s["index"] != 3 and len(mine) != 2:
                probs.append("step %d: %d aten::addmm inside it (want 2)" % (s["index"], len(mine)))
            if s["index"] == 3 and mine:
                probs.append("step 3 (no profiler) has %d aten::addmm" % len(mine))
        if hits and threads and any(h["track"] != threads[0]["id"] for h in hits):
            probs.append("aten::addmm on tracks %s" % sorted({h["track"] for h in hits}))
        if hits:
            h = hits[0]
            st, sl = http_json(base, "/api/slice?track=%d&ts=%d&depth=%d" % (h["track"], h["ts"], h["depth"]))
            a = sl.get("args", {})
            if sl.get("cat") != "cpu_op" or a.get("Input Dims") != [[32], [8, 16], [16, 32], [], []] or \
               a.get("Input type", [None])[0] != "float" or a.get("flops") != 8192 or "External id" not in a:
                probs.append("aten::addmm: cat %r args %r" % (sl.get("cat"), a))
            if sl.get("step") not in (1, 4) or (sl.get("process") or {}).get("pid") != os.getpid():
                probs.append("aten::addmm: step %r, process %r" % (sl.get("step"), sl.get("process")))
            anc = [x["name"] for x in sl.get("ancestors", [])]
            want = ["forward", "nn.Module: m", "nn.Module: 0" if a.get("Input Dims", [[0]])[0] == [32]
                    else "nn.Module: 2", "aten::linear"]
            if anc[:4] != want:
                probs.append("aten::addmm nested in %r, want %s (the zone, the model's and "
                             "the layer's scopes)" % (anc, " > ".join(want)))
        st, res = http_json(base, "/api/search?q=forward&exact=1&limit=100")
        fw = res.get("results", [])
        if len(fw) != 3:
            probs.append("%d forward zones (want one per traced step)" % len(fw))
        for h in fw:
            st, sl = http_json(base, "/api/slice?track=%d&ts=%d&depth=%d" % (h["track"], h["ts"], h["depth"]))
            want = "python" if sl.get("step") == 3 else "user_annotation"
            if sl.get("cat") != want or sl.get("track", {}).get("id") != (threads[0]["id"] if threads else None):
                probs.append("forward zone of step %s: cat %r on track %r" % (sl.get("step"), sl.get("cat"), sl.get("track")))
        st, res = http_json(base, "/api/search?q=CPU%20functions&in=track&limit=10")
        if res.get("total"):
            probs.append("a 'CPU functions' track or process is there")
    finally:
        srv2.terminate()
        srv2.wait()
    check("live_ops", probs)


def case_live_hold(tmp):
    """The runtime holds a thread's records after a traced step's end until the step's
    profiler trace is in (docs/runtime.md "Holding a thread for an import"): the program
    records that thread's later zones and steps before the import runs (the import waits
    for a gate file, TFT_TEST_IMPORT_GATE, test-only), and still the ops land on the
    thread's own track inside their step, the zones after them. With a short
    TFT_IMPORT_HOLD_MS the hold gives up: the later zones go in, the ops land beside the
    thread's track ("<thread> (profiler)"), both counted in the session's meta counts."""
    import sqlite3
    import torch
    import tftracer
    from tftracer import _tftracer as _c
    torch.set_num_threads(1)
    m = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
    x = torch.randn(8, 16)
    tid = threading.get_native_id()
    cli = os.path.join(ROOT, BUILD, "tftracer") if not os.path.isabs(BUILD) else os.path.join(BUILD, "tftracer")

    def meta(path):
        db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
        try:
            return {k: v for k, v in db.execute("SELECT key, value FROM meta").fetchall()}
        finally:
            db.close()

    def count(path, key):
        return int(meta(path).get(key) or 0)

    def run(name, hold_ms):
        path = os.path.join(tmp, name + ".tft")
        gate = os.path.join(tmp, name + ".gate")
        os.environ["TFT_TEST_IMPORT_GATE"] = gate
        os.environ["TFT_IMPORT_HOLD_MS"] = str(hold_ms)  # read when the runtime starts
        srv = tftracer.TracingServer(port=0, session=path)
        for i in range(5):
            if i == 1:  # under torch.profiler: its trace waits at the gate
                srv.trace_next(1)
            if i == 2:  # traced without a profiler: the runtime records its zone, after step 1
                srv._srv.on_traced, saved = None, srv._srv.on_traced
                srv.trace_next(1)
            with srv.step("train"):
                with tftracer.zone("forward"):
                    loss = m(x).sum()
                loss.backward()
            if i == 2:
                srv._srv.on_traced = saved
        return srv, path, gate

    def look(path):
        """(thread tracks, steps, aten::addmm hits, forward hits) of a finished session."""
        p = subprocess.Popen([cli, "serve", path, "--port", "0", "--quiet"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            base = re.match(r"(https?://[^/]+)", p.stdout.readline().strip()).group(1)
            sess = http_json(base, "/api/session")[1]
            threads = [t for t in sess.get("track_list", []) if t["kind"] == "thread"]
            steps = http_json(base, "/api/steps")[1].get("steps", [])
            mm = http_json(base, "/api/search?q=aten::addmm&exact=1&limit=100")[1].get("results", [])
            fw = http_json(base, "/api/search?q=forward&exact=1&limit=100")[1].get("results", [])
            return threads, steps, mm, fw
        finally:
            p.terminate()
            p.wait()

    def inside(hits, step):
        return [h for h in hits if step["start_ns"] <= h["ts"] and
                h["ts"] + h["dur"] <= step["start_ns"] + step["dur_ns"]]

    # ---- held until the import: the ops on the thread's track ----
    probs = []
    srv, path, gate = run("held", 120000)
    _c.flush(2000)
    s = _c.summary(path)
    # steps 0 and 1 are in; step 1's end holds the thread: steps 2-4 and step 2's zone wait
    if s["steps"] != 2 or s["slices"] != 0:
        probs.append("while the import waits: %d steps, %d slices in the file (want 2, 0: held)"
                     % (s["steps"], s["slices"]))
    st = srv.status()
    if st["dropped"]:
        probs.append("dropped %d while held" % st["dropped"])
    open(gate, "w").close()
    if not srv.wait_imports(60):
        probs.append("the import did not land")
    srv.stop()
    threads, steps, mm, fw = look(path)
    if [(t["name"], t["tid"]) for t in threads] != [(threads[0]["name"] if threads else "", tid)]:
        probs.append("thread tracks %r, want one: tid %d" % ([(t["name"], t["tid"]) for t in threads], tid))
    if len(steps) != 5 or [x["index"] for x in steps if x["traced"]] != [1, 2]:
        probs.append("steps %r" % [(x["index"], x["traced"]) for x in steps])
    elif threads:
        if len(inside(mm, steps[1])) != 2 or len(mm) != 2 or any(h["track"] != threads[0]["id"] for h in mm):
            probs.append("aten::addmm: %d in step 1 of %d, on tracks %s (thread track %d)"
                         % (len(inside(mm, steps[1])), len(mm), sorted({h["track"] for h in mm}), threads[0]["id"]))
        # step 1's forward (the profiler's) and step 2's (the runtime's, held), both on the thread
        if len(fw) != 2 or len(inside(fw, steps[2])) != 1 or any(h["track"] != threads[0]["id"] for h in fw):
            probs.append("forward zones %r" % [(h["track"], h["ts"]) for h in fw])
    c = (count(path, "import_hold_timeouts"), count(path, "imports_beside"), count(path, "dropped"))
    if c != (0, 0, 0):
        probs.append("import_hold_timeouts, imports_beside, dropped = %r, want 0s" % (c,))
    check("live_hold", probs)

    # ---- the hold times out: the zones go in, the ops beside the track, counted ----
    probs = []
    srv, path, gate = run("timeout", 200)
    # wait on the state: the timeout counted, step 2's zone and every step in the file
    end = time.monotonic() + 60
    while time.monotonic() < end:
        _c.flush(2000)
        if count(path, "import_hold_timeouts") >= 1 and _c.summary(path)["steps"] == 5:
            break
        time.sleep(0.02)
    s = _c.summary(path)
    if count(path, "import_hold_timeouts") != 1 or s["steps"] != 5 or s["slices"] != 1:
        probs.append("after the hold timed out: %d timeouts, %d steps, %d slices (want 1, 5, 1)"
                     % (count(path, "import_hold_timeouts"), s["steps"], s["slices"]))
    open(gate, "w").close()
    if not srv.wait_imports(60):
        probs.append("the import did not land")
    srv.stop()
    threads, steps, mm, fw = look(path)
    names = [(t["name"], t["tid"]) for t in threads]
    if len(threads) != 2 or threads[1]["name"] != threads[0]["name"] + " (profiler)" or \
            {t["tid"] for t in threads} != {tid}:
        probs.append("thread tracks %r, want the thread's and its (profiler) companion" % names)
    elif len(steps) == 5:
        if len(mm) != 2 or len(inside(mm, steps[1])) != 2 or any(h["track"] != threads[1]["id"] for h in mm):
            probs.append("aten::addmm %r, want 2 in step 1 on the companion" % [(h["track"], h["ts"]) for h in mm])
        if len(inside(fw, steps[2])) != 1 or [h["track"] for h in inside(fw, steps[2])] != [threads[0]["id"]]:
            probs.append("step 2's forward zone %r" % [(h["track"], h["ts"]) for h in fw])
    c = (count(path, "import_hold_timeouts"), count(path, "imports_beside"), count(path, "dropped"))
    if c != (1, 1, 0):
        probs.append("import_hold_timeouts, imports_beside, dropped = %r, want 1, 1, 0" % (c,))
    del os.environ["TFT_TEST_IMPORT_GATE"], os.environ["TFT_IMPORT_HOLD_MS"]
    check("live_hold_timeout", probs)

    # ---- two traced steps in a row, the first one's trace much longer to write (this
    # PyTorch has no Kineto: traces are written in Python, on a thread each): the second
    # one's must not be imported first, or the first one's ops would go beside the track ----
    probs = []
    path = os.path.join(tmp, "order.tft")
    srv = tftracer.TracingServer(port=0, session=path)
    y = torch.zeros(4)
    for i in range(4):
        if i == 1:
            srv.trace_next(2)
        with srv.step("train"):
            if i == 1:
                for _ in range(3000):  # 3000 ops: about 0.3 s to write
                    y = y + 1
            else:
                m(x).sum().backward()
    if not srv.wait_imports(120):
        probs.append("the imports did not land")
    srv.stop()
    threads, steps, mm, fw = look(path)
    if len(threads) != 1 or threads[0]["tid"] != tid:
        probs.append("thread tracks %r, want one: tid %d" % ([(t["name"], t["tid"]) for t in threads], tid))
    elif len(steps) != 4 or [x["index"] for x in steps if x["traced"]] != [1, 2]:
        probs.append("steps %r" % [(x["index"], x["traced"]) for x in steps])
    elif len(mm) != 2 or len(inside(mm, steps[2])) != 2 or any(h["track"] != threads[0]["id"] for h in mm):
        probs.append("aten::addmm %r, want 2 in step 2 on the thread's track" % [(h["track"], h["ts"]) for h in mm])
    if count(path, "imports_beside"):
        probs.append("imports_beside %d" % count(path, "imports_beside"))
    check("live_hold_order", probs)


CASES = {
    "import": (case_import, False),
    "live_torch": (case_live_torch, True),
    "traced_midstep": (case_traced_midstep, True),
    "port_taken": (case_port_taken, False),
    "import_blocking": (case_import_blocking, False),
    "timeline_torch": (case_timeline_torch, True),
    "timeline_tf": (case_timeline_tf, False),
    "hook": (case_hook, False),
    "hook_inject_no_tf": (case_hook_inject_no_tf, False),
    "keras": (case_keras, False),
    "disk_full": (case_disk_full, False),
    "unwritable": (case_unwritable, False),
    "memory": (case_memory, False),
    "gil": (case_gil, False),
    "auth": (case_auth, False),
    "live_end": (case_live_end, True),
    "live_end_read": (case_live_end_read, False),
    "live_request": (case_live_request, True),
    "live_ops": (case_live_ops, True),
    "live_hold": (case_live_hold, True),
}


def run_case(name):
    fn, needs_torch = CASES[name]
    if needs_torch:
        try:
            import torch  # noqa: F401
        except ImportError:
            emit("SKIP", name, "torch not importable")
            return 0
    tmp = tempfile.mkdtemp(prefix="tft-py-%s-" % name)
    old = os.getcwd()
    os.chdir(tmp)
    try:
        fn(tmp)
    finally:
        os.chdir(old)
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--case":
        sys.path.insert(0, PYDIR)
        try:
            return run_case(sys.argv[2])
        except Exception as e:
            import traceback
            traceback.print_exc()
            emit("FAIL", sys.argv[2], "%s: %s" % (type(e).__name__, e))
            return 1
    if not os.path.isdir(os.path.join(PYDIR, "tftracer")):
        emit("FAIL", "module", "not built: %s (make O=%s)" % (PYDIR, BUILD))
        return 1
    nfail = 0
    only = sys.argv[1:]
    for name in CASES:
        if only and name not in only:
            continue
        env = dict(os.environ, PYTHONPATH=PYDIR, PYTHONDONTWRITEBYTECODE="1")
        t = time.monotonic()
        try:
            r = subprocess.run([PYTHON, os.path.abspath(__file__), "--case", name], env=env,
                               capture_output=True, text=True, timeout=300)
            out, rc = r.stdout, r.returncode
            err = r.stderr
        except subprocess.TimeoutExpired as e:
            out, rc, err = (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or ""), -1, "timeout"
        lines = [ln for ln in out.splitlines() if re.match(r"^(PASS|FAIL|SKIP|#) ", ln)]
        for ln in lines:
            print(ln, flush=True)
        nfail += sum(1 for ln in lines if ln.startswith("FAIL "))
        if rc != 0 and not any(ln.startswith("FAIL ") for ln in lines):
            emit("FAIL", name, "exit %s: %s" % (rc, " | ".join(err.strip().splitlines()[-4:])))
            nfail += 1
        note("%s: %.1f s" % (name, time.monotonic() - t))
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
