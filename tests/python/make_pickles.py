#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# Writes tfvis/tftracer-shaped pickles with Python's real pickle module, and
# (with --check) runs them through the CLI: import, info, export --tf-timeline.
"""Usage:
  make_pickles.py OUTDIR               write the pickles (and expected timelines) to OUTDIR
  make_pickles.py --check [TFTRACER]   write them to a temp dir and check the CLI
                                       (TFTRACER default: $TFT_BIN or build/tftracer);
                                       one PASS/FAIL line per check. Also re-exports the
                                       real tf.timeline JSONs of $TFT_DATA with
                                       --tf-timeline: processes and ops must come back.

TensorFlow and tftracer are NOT installable here, so the classes the pickles
name are stand-ins defined below under the original module and class names
(tensorflow.core.protobuf.config_pb2.RunMetadata, tftracer.tracing_server.
TracingSource). They pickle exactly like the originals: a protobuf message
reduces to (cls, (), {'serialized': <wire bytes>}) and a TracingSource is a
plain object whose __dict__ is restored by BUILD. The RunMetadata wire bytes
are encoded here from step_stats.proto / config.proto (field numbers in
docs/formats-tensorflow.md).

The expected tf.timeline JSON is computed by reference_timeline() below, a
transcription of the algorithm of TensorFlow's timeline.py (seed-systems.md
B.4) run on the same StepStats, printed with Python's json module.
"""
import collections
import datetime
import gzip
import json
import os
import pickle
import re
import resource
import shutil
import sys
import tempfile
import types

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "corpus"))

# ---- stand-in classes under the original names -------------------------------------


def _module(name):
    parts = name.split(".")
    for i in range(1, len(parts) + 1):
        mod = ".".join(parts[:i])
        if mod not in sys.modules:
            sys.modules[mod] = types.ModuleType(mod)
            if i > 1:
                setattr(sys.modules[".".join(parts[:i - 1])], parts[i - 1], sys.modules[mod])
    return sys.modules[name]


class _ProtoMessage(object):
    """Pickles like google.protobuf.message.Message (__reduce__ / __getstate__)."""

    def __init__(self, serialized=b""):
        self._serialized = serialized

    def SerializePartialToString(self):
        return self._serialized

    def __getstate__(self):
        return dict(serialized=self.SerializePartialToString())

    def __setstate__(self, state):
        self._serialized = state["serialized"]

    def __reduce__(self):
        return type(self), (), self.__getstate__()


_config_pb2 = _module("tensorflow.core.protobuf.config_pb2")
RunMetadata = type("RunMetadata", (_ProtoMessage,), {"__module__": _config_pb2.__name__})
_config_pb2.RunMetadata = RunMetadata
_step_stats_pb2 = _module("tensorflow.core.framework.step_stats_pb2")
StepStats = type("StepStats", (_ProtoMessage,), {"__module__": _step_stats_pb2.__name__})
_step_stats_pb2.StepStats = StepStats

_tracing_server = _module("tftracer.tracing_server")


class TracingSource(object):
    """tftracer 1.1.0 TracingSource: the attributes __init__ sets."""

    def __init__(self, keep_traces=5):
        self._run_profile = collections.OrderedDict()
        self._traces = {}
        self.global_tracing = False
        self.running = False
        self._keep_traces = keep_traces


TracingSource.__module__ = _tracing_server.__name__
_tracing_server.TracingSource = TracingSource

# ---- protobuf wire encoding (step_stats.proto, config.proto) -----------------------


def _varint(v):
    v &= (1 << 64) - 1
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def f_int(num, v):
    return _varint(num << 3) + _varint(v)


def f_bytes(num, b):
    return _varint(num << 3 | 2) + _varint(len(b)) + b


def f_str(num, s):
    return f_bytes(num, s.encode("utf-8"))


DTYPES = {1: "DT_FLOAT", 3: "DT_INT32", 9: "DT_INT64", 7: "DT_STRING", 101: "DT_FLOAT_REF"}


def enc_tensor_desc(td):
    b = b""
    if td.get("dtype"):
        b += f_int(1, td["dtype"])
    if "shape" in td:
        sb = b"".join(f_bytes(2, f_int(1, d) if d else b"") for d in td["shape"])
        b += f_bytes(2, sb)
    ad = b""
    if td.get("requested_bytes"):
        ad += f_int(1, td["requested_bytes"])
    if td.get("allocated_bytes"):
        ad += f_int(2, td["allocated_bytes"])
    if td.get("allocator_name"):
        ad += f_str(3, td["allocator_name"])
    if td.get("allocation_id"):
        ad += f_int(4, td["allocation_id"])
    if td.get("has_single_reference"):
        ad += f_int(5, 1)
    if ad:
        b += f_bytes(4, ad)
    return b


def enc_node(n):
    b = f_str(1, n["node_name"]) + f_int(2, n["all_start_micros"])
    b += f_int(3, n.get("op_start_rel_micros", 0))
    b += f_int(4, n.get("op_end_rel_micros", n.get("all_end_rel_micros", 0)))
    if n.get("all_end_rel_micros"):
        b += f_int(5, n["all_end_rel_micros"])
    for m in n.get("memory", ()):
        mb = f_str(1, m["allocator_name"]) + f_int(2, m["total_bytes"]) + f_int(3, m["peak_bytes"])
        b += f_bytes(6, mb)
    for slot, td in enumerate(n.get("output", ())):
        b += f_bytes(7, f_int(1, slot) + f_bytes(3, enc_tensor_desc(td)))
    if n.get("timeline_label"):
        b += f_str(8, n["timeline_label"])
    if n.get("scheduled_micros"):
        b += f_int(9, n["scheduled_micros"])
    if n.get("thread_id"):
        b += f_int(10, n["thread_id"])
    return b


def enc_stepstats(step_stats):
    ss = b""
    for dev in step_stats:
        db = f_str(1, dev["device"]) + b"".join(f_bytes(2, enc_node(n)) for n in dev["node_stats"])
        ss += f_bytes(1, db)
    return ss


def enc_runmeta(step_stats):
    # step_stats, then a partition graph (a graph_nodes row named after the pickle and step)
    return (f_bytes(1, enc_stepstats(step_stats)) +
            f_bytes(3, f_bytes(1, f_str(1, "x") + f_str(2, "Const"))))


# ---- the StepStats used by every pickle --------------------------------------------

W0 = "/job:worker/replica:0/task:0"
W1 = "/job:worker/replica:0/task:1"


def node(name, start, dur, label, outputs=(), op_end=None, thread=0):
    n = {"node_name": name, "all_start_micros": start, "all_end_rel_micros": dur,
         "timeline_label": label, "output": list(outputs)}
    if op_end is not None:
        n["op_end_rel_micros"] = op_end
    if thread:
        n["thread_id"] = thread
    return n


def out(alloc, nbytes, shape=(), dtype=1, alloc_id=0):
    td = {"dtype": dtype, "shape": list(shape), "requested_bytes": nbytes,
          "allocated_bytes": nbytes + (nbytes % 256 and 256 - nbytes % 256), "allocator_name": alloc}
    if alloc_id:
        td["allocation_id"] = alloc_id
        td["has_single_reference"] = True
    return td


def make_step(t0):
    """Two workers; CPU + GPU with CUPTI streams and memcpy; Send/RecvTensor/Recv."""
    k = "volta_sgemm_128x64_nn regs:64 shm:1024 grid:4,1,1 block:256,1,1@@"
    gpu = [
        node("dense/kernel/read", t0 + 10, 4, "dense/kernel/read = Identity(dense/kernel)",
             [out("GPU_0_bfc", 4096, (32, 32), 1, 7)]),
        node("dense/MatMul", t0 + 20, 35,
             "[GPU_0_bfc 0.1MB 0.1MB] dense/MatMul = MatMul(x, dense/kernel/read)",
             [out("GPU_0_bfc", 1280, (32, 10))], thread=4242),
        # overlaps MatMul: second lane; starts exactly at an end: new lane (strict >)
        node("aux/Fill", t0 + 24, 10, "aux/Fill = Fill(aux/dims, aux/value)",
             [out("GPU_0_bfc", 0, (0,))]),
        node("aux/Const", t0 + 34, 1, "aux/Const = Const()", [out("cuda_host_bfc", 64, ())]),
        node("split", t0 + 60, 5, "split = Split(split/dim, dense/MatMul)",
             [out("GPU_0_bfc", 640, (16, 10)), out("GPU_0_bfc", 640, (16, 10))]),
        node("add", t0 + 70, 6, "add = Add(split, split:1, ^dense/MatMul)",
             [out("GPU_0_bfc", 640, (16, 10))]),
        node("loss", t0 + 80, 9, "loss = Mean(add/_3, missing_tensor)", [out("GPU_0_bfc", 4, ())]),
        node("caf\u00e9/op", t0 + 90, 2, "caf\u00e9/op = NoOp()"),
    ]
    return [
        {"device": W0 + "/device:CPU:0", "node_stats": [
            node("_SOURCE", t0 + 1, 1, "_SOURCE = NoOp()"),
            node("x", t0 + 2, 3, "x = Const()", [out("cpu", 128, (32, 1))]),
            node("x/_1", t0 + 6, 1, "x/_1 = _Send(x @" + W1 + "/device:CPU:0"),
        ]},
        {"device": W0 + "/device:GPU:0", "node_stats": gpu},
        {"device": W0 + "/device:GPU:0/stream:all", "node_stats": [
            node("dense/MatMul:MatMul", t0 + 25, 12, k + "dense/MatMul:MatMul#id=3#"),
            node("split:Split", t0 + 61, 2, k + "split:Split"),
        ]},
        {"device": W0 + "/device:GPU:0/stream:14", "node_stats": [
            node("dense/MatMul:MatMul", t0 + 25, 12, k + "dense/MatMul:MatMul#id=3#"),
        ]},
        {"device": W0 + "/device:GPU:0/memcpy", "node_stats": [
            node("edge_7_x:MEMCPYHtoD", t0 + 12, 3, "MEMCPYHtoD bytes:128"),
        ]},
        {"device": W1 + "/device:CPU:0", "node_stats": [
            # the RPC logger sets op_end_rel_micros only
            node("RecvTensor", t0 + 7, 0,
                 "[128B] " + W0 + "/device:CPU:0;0000000000000001;" + W1 + "/device:CPU:0;"
                 "edge_5_x;0:0 from " + W0 + "/device:CPU:0 to " + W1 + "/device:CPU:0",
                 op_end=4),
            node("x/_2", t0 + 8, 5, "x/_2 = _Recv(x @" + W0 + "/device:CPU:0",
                 [out("cpu", 128, (32, 1))]),
            node("y", t0 + 14, 3, "y = Mul(x/_2, x/_2)", [out("cpu", 128, (32, 1))]),
            node("y2", t0 + 14, 2, "y2 = Square(y)", [out("cpu", 128, (32, 1))]),
        ]},
    ]


def session_order(step):
    """The node order a session returns: per device by (start, longer first, arrival)."""
    res = []
    for dev in step:
        def key(n):
            dur = n["all_end_rel_micros"] or n.get("op_end_rel_micros", 0)
            return (n["all_start_micros"], -dur)
        res.append({"device": dev["device"], "node_stats": sorted(dev["node_stats"], key=key)})
    return res


# ---- reference: timeline.py's algorithm (seed-systems.md B.4) ----------------------


def _parse_op_label(label):
    m = re.match(r"(.*) = (.*)\((.*)\)", label)
    if m is None:
        return "unknown", "unknown", []
    nn, op, inputs = m.groups()
    return nn, op, (inputs.split(", ") if inputs else [])


def _parse_kernel_label(label, node_name):
    start, end = label.find("@@"), label.find("#")
    if start >= 0 and end >= 0 and start + 2 < end:
        node_name = label[start + 2:end]
    fields = node_name.split(":") + ["unknown"]
    return fields[0], fields[1]


def _tensor_text(td):
    """str(TensorDescription) in protobuf text format, quotes removed."""
    s = ""
    if td.get("dtype"):
        s += "dtype: %s\n" % DTYPES[td["dtype"]]
    if "shape" in td:
        s += "shape {\n"
        for d in td["shape"]:
            s += "  dim {\n" + ("    size: %d\n" % d if d else "") + "  }\n"
        s += "}\n"
    a = ""
    for key in ("requested_bytes", "allocated_bytes", "allocator_name", "allocation_id"):
        if td.get(key):
            a += "  %s: %s\n" % (key, td[key])
    if td.get("has_single_reference"):
        a += "  has_single_reference: true\n"
    if a:
        s += "allocation_description {\n" + a + "}\n"
    return s


def reference_timeline(steps, show_dataflow, show_memory, peaks=None):
    """timeline.py per StepStats; several StepStats concatenated with pids,
    flow ids and object ids continuing (tftracer's multi-step export).
    peaks (a list) receives (allocator, num_bytes, timestamp, len(tensors))
    of each AllocationMaximum, as analyze_step_stats() computes them."""
    metadata, events = [], []
    metadata.append({"name": "process_name", "ph": "M", "pid": 0, "args": {"name": "Allocators"}})
    next_pid, next_flow, object_base = 1, 0, 0
    per_step = []
    for step in steps:
        pids = {}
        for dev in step:
            pids[dev["device"]] = (next_pid, next_pid + 1)
            for k, what in ((0, " Compute"), (1, " Tensors")):
                metadata.append({"name": "process_name", "ph": "M", "pid": next_pid + k,
                                 "args": {"name": dev["device"] + what}})
            next_pid += 2
        per_step.append(pids)

    def ev(ph, cat, name, pid, tid, ts):
        return {"ph": ph, "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts}

    for step, pids in zip(steps, per_step):
        lanes_of = {}
        for dev in step:  # _assign_lanes
            lanes = [0]
            for i, ns in enumerate(dev["node_stats"]):
                end = ns["all_start_micros"] + ns["all_end_rel_micros"]
                lane = next((j for j, lts in enumerate(lanes) if ns["all_start_micros"] > lts), -1)
                if lane < 0:
                    lane = len(lanes)
                    lanes.append(end)
                else:
                    lanes[lane] = end
                lanes_of[(dev["device"], i)] = lane
        tensors, flow_starts = {}, {}
        for dev in step:  # _analyze_tensors
            cpid, tpid = pids[dev["device"]]
            for i, ns in enumerate(dev["node_stats"]):
                tid, start = lanes_of[(dev["device"], i)], ns["all_start_micros"]
                end = start + ns["all_end_rel_micros"]
                for index, td in enumerate(ns["output"]):
                    name = "%s:%d" % (ns["node_name"], index) if index else ns["node_name"]
                    t = {"name": name, "id": object_base + len(tensors), "create": start,
                         "pid": tpid, "alloc": td.get("allocator_name", ""),
                         "bytes": td.get("requested_bytes", 0), "unrefs": [end]}
                    tensors[name] = t
                    flow_starts[name] = (end, cpid, tid)
                    if show_memory:
                        e = ev("N", "Tensor", name, tpid, tid, start)
                        e["id"] = t["id"]
                        events.append(e)
                        e = ev("O", "Tensor", name, tpid, tid, end - 1)
                        e["id"] = t["id"]
                        e["args"] = {"snapshot": {"tensor_description": _tensor_text(td)}}
                        events.append(e)
        for dev in step:  # _show_compute
            cpid = pids[dev["device"]][0]
            gputrace = "/stream:" in dev["device"] or "/memcpy" in dev["device"]
            for i, ns in enumerate(dev["node_stats"]):
                tid, start = lanes_of[(dev["device"], i)], ns["all_start_micros"]
                end = start + ns["all_end_rel_micros"]
                name, inputs = ns["node_name"], []
                if gputrace:
                    name, op = _parse_kernel_label(ns["timeline_label"], name)
                elif name == "RecvTensor":
                    op = "RecvTensor"
                else:
                    _, op, inputs = _parse_op_label(ns["timeline_label"])
                args = {"name": name, "op": op}
                for k, iname in enumerate(inputs):
                    args["input%d" % k] = iname
                e = ev("X", "Op", op, cpid, tid, start)
                e["dur"] = ns["all_end_rel_micros"]
                e["args"] = args
                events.append(e)
                if gputrace or ns["node_name"] == "RecvTensor":
                    continue
                for iname in inputs:
                    if iname not in tensors:
                        idx = iname.rfind("/_")
                        if idx > 0:
                            iname = iname[:idx]
                    if iname not in tensors:
                        continue
                    tensors[iname]["unrefs"].append(end - 1)
                    ctime, cp, ct = flow_starts[iname]
                    if show_dataflow and (cp != cpid or ct != tid):
                        for ph, ts, p, t in (("s", ctime, cp, ct), ("t", start, cpid, tid)):
                            e = {"ph": ph, "cat": "DataFlow", "name": iname, "pid": p, "tid": t,
                                 "ts": ts, "id": next_flow}
                            events.append(e)
                        next_flow += 1
        if show_memory:  # _show_memory_counters
            allocations = {}
            for name, t in tensors.items():
                e = ev("D", "Tensor", name, t["pid"], 0, max(t["unrefs"]))
                e["id"] = t["id"]
                events.append(e)
                allocations.setdefault(t["alloc"], []).append((t["create"], t["bytes"], name))
                allocations[t["alloc"]].append((max(t["unrefs"]), -t["bytes"], name))
            for alloc, lst in allocations.items():
                total, live, peak = 0, set(), (0, 0, set())
                for time, nbytes, name in sorted(lst):
                    total += nbytes
                    if nbytes < 0:
                        live.discard(name)
                    else:
                        live.add(name)
                    if total > peak[1]:
                        peak = (time, total, set(live))
                    e = ev("C", "Memory", alloc, 0, 0, time)
                    e["args"] = {alloc: total}
                    events.append(e)
                if peaks is not None:
                    peaks.append((alloc, peak[1], peak[0], len(peak[2])))
        object_base += len(tensors)
    return json.dumps({"traceEvents": metadata + events}, indent=4, separators=(",", ": "))


# ---- the pickles --------------------------------------------------------------------

T0 = 1543561200000000  # 2018-11-30 07:00:00 UTC in microseconds
LOCAL_OFFSET = datetime.timedelta(hours=2)  # the tracing host's local time: UTC+2


def local_dt(us):
    """datetime.now()-style naive local time of an epoch-microsecond instant."""
    return datetime.datetime(1970, 1, 1) + datetime.timedelta(microseconds=us) + LOCAL_OFFSET


def build_session():
    """A TracingSource: run 0 with two traces, run 1 never traced, run 2 with its
    first trace evicted (keep_traces), like TracingSource.add_run leaves it."""
    src = TracingSource(keep_traces=1)
    steps = [make_step(T0), make_step(T0 + 5000000), make_step(T0 + 9000000)]
    runtime = datetime.timedelta(microseconds=1500)
    runs = [
        ("SessionRunArgs(fetches=Tensor(\"loss:0\"), feed_dict=None, options=None)",
         [(0, steps[0]), (1, steps[1])]),
        ("SessionRunArgs(fetches=<tf.Operation 'init'>, feed_dict=None, options=None)", []),
        ("SessionRunArgs(fetches=[Tensor(\"acc:0\")], feed_dict=None, options=None)",
         [(0, None), (1, steps[2])]),
    ]
    for run_id, (key, traces) in enumerate(runs):
        first = local_dt(T0 - 1000000 + run_id * 100000)
        prof = {
            "info": {"fetches": key.split("fetches=")[1].split(", feed_dict")[0],
                     "feeds": "None", "options": "None"},
            "stats": {"runs": 100 + run_id, "traces": len(traces), "runtimes": runtime,
                      "first_run": first, "last_run": first + datetime.timedelta(seconds=30)},
            "traces": [], "key": key, "run_id": run_id, "tracing": False,
        }
        src._run_profile[key] = prof
        src._traces[run_id] = []
        for trace_id, step in traces:
            if step is None:  # evicted: _traces[run_id][0] = None
                date = local_dt(T0 + 2000000)
                src._traces[run_id].append(None)
            else:
                date = local_dt(step_end(step) + 300)
                src._traces[run_id].append(RunMetadata(enc_runmeta(step)))
            prof["traces"].append({"trace_id": trace_id, "date": date})
    return src, [steps[0], steps[1], steps[2]]


def build_interleaved_session():
    """A TracingSource whose two runs' traces interleave in time (a train and an eval run,
    traced in turn): run 0 at T0 and T0+10 s, run 1 at T0+5 s and T0+15 s. The importer
    stores them in time order, so that each trace continues the workers' processes and
    tracks (collect/runmeta/devices.c)."""
    src = TracingSource(keep_traces=5)
    runtime = datetime.timedelta(microseconds=1500)
    steps = {off: make_step(T0 + off) for off in (0, 5000000, 10000000, 15000000)}
    runs = [("SessionRunArgs(fetches=Tensor(\"loss:0\"), feed_dict=None, options=None)", [0, 10000000]),
            ("SessionRunArgs(fetches=Tensor(\"acc:0\"), feed_dict=None, options=None)", [5000000, 15000000])]
    for run_id, (key, offs) in enumerate(runs):
        first = local_dt(T0 - 1000000 + run_id * 100000)
        prof = {"info": {"fetches": "x", "feeds": "None", "options": "None"},
                "stats": {"runs": 100, "traces": len(offs), "runtimes": runtime,
                          "first_run": first, "last_run": first + datetime.timedelta(seconds=30)},
                "traces": [], "key": key, "run_id": run_id, "tracing": False}
        src._run_profile[key] = prof
        src._traces[run_id] = []
        for tid, off in enumerate(offs):
            src._traces[run_id].append(RunMetadata(enc_runmeta(steps[off])))
            prof["traces"].append({"trace_id": tid, "date": local_dt(step_end(steps[off]) + 300)})
    return src, [steps[off] for off in sorted(steps)]


def step_end(step):
    return max(n["all_start_micros"] + n["all_end_rel_micros"] for d in step for n in d["node_stats"])


class _Evil(object):
    def __init__(self, fn, args):
        self.fn, self.args = fn, args

    def __reduce__(self):
        return self.fn, self.args


def write_all(outdir):
    """Write every pickle; returns {file: expectations}."""
    import builtins
    import subprocess
    os.makedirs(outdir, exist_ok=True)
    step = make_step(T0)
    rm = RunMetadata(enc_runmeta(step))
    files = {}

    def dump(name, obj, protocol, gz=False, **expect):
        data = pickle.dumps(obj, protocol=protocol)
        if gz:
            data = gzip.compress(data)
        with open(os.path.join(outdir, name), "wb") as fp:
            fp.write(data)
        files[name] = expect

    # Timeline.to_pickle / the download button: pickle.dump(run_metadata)
    dump("step.pickle", rm, 3, steps=[step], traced=1, untraced=0, fmt="runmeta-pickle")
    dump("run_metadata-0-1.pickle", RunMetadata(enc_runmeta(make_step(T0 + 77))), 4,
         steps=[make_step(T0 + 77)], traced=1, untraced=0, fmt="runmeta-pickle")
    dump("step-proto2.pickle", rm, 2, steps=[step], traced=1, untraced=0, fmt="runmeta-pickle")
    dump("step-proto5.pickle", rm, 5, steps=[step], traced=1, untraced=0, fmt="runmeta-pickle")
    dump("stepstats.pickle", StepStats(enc_stepstats(step)), 4, steps=[step], traced=1,
         untraced=0, fmt="stepstats-pickle")
    dump("empty-runmeta.pickle", RunMetadata(b""), 4, traced=0, untraced=1, fmt="runmeta-pickle")
    dump("list.pickle", [rm, None, RunMetadata(enc_runmeta(make_step(T0 + 5000000)))], 4,
         steps=[step, make_step(T0 + 5000000)], traced=2, untraced=0, fmt="runmeta-pickle")
    # save_session (protocol 3: Python 3.6/3.7 default) and /save_session (gzip, protocol 4)
    src, steps = build_session()
    dump("session.pickle", src, 3, steps=steps, traced=3, untraced=2,
         fmt="tftracer-session-pickle")
    dump("tracing-session.pickle.gz", src, 4, gz=True, steps=steps, traced=3, untraced=2,
         fmt="tftracer-session-pickle")
    src, isteps = build_interleaved_session()
    dump("interleaved-session.pickle", src, 4, steps=isteps, traced=4, untraced=0,
         fmt="tftracer-session-pickle", processes=2)
    # hostile files: none of these may run anything
    marker = os.path.join(outdir, "PWNED")
    dump("evil-os-system.pickle", _Evil(os.system, ("touch " + marker,)), 2,
         error="is not allowed")
    dump("evil-eval.pickle", _Evil(builtins.eval, ("__import__('os').system('touch %s')" % marker,)),
         4, error="is not allowed")
    dump("evil-subprocess.pickle", _Evil(subprocess.Popen, (["touch", marker],)), 5,
         error="is not allowed")
    bad = TracingSource()
    bad._traces[0] = [_Evil(os.system, ("touch " + marker,))]
    dump("evil-in-session.pickle", bad, 3, error="is not allowed")
    with open(os.path.join(outdir, "bomb-nesting.pickle"), "wb") as fp:
        fp.write(b"\x80\x02" + b"]" * 100000 + b"a" * 99999 + b".")
    files["bomb-nesting.pickle"] = {"error": "nested deeper"}
    with open(os.path.join(outdir, "truncated.pickle"), "wb") as fp:
        fp.write(pickle.dumps(rm, protocol=4)[:-40])
    files["truncated.pickle"] = {"error": "truncated"}
    # expected timelines
    for name, exp in files.items():
        if "steps" in exp and exp["steps"]:
            exp["peaks"] = []
            exp["timeline"] = reference_timeline([session_order(s) for s in exp["steps"]],
                                                 True, True, exp["peaks"])
            exp["timeline_plain"] = reference_timeline([session_order(s) for s in exp["steps"]],
                                                       False, False)
    return files, marker


# ---- CLI checks -----------------------------------------------------------------------


def check(binary):
    import tft_harness as H
    rep = H.Reporter("pickles")
    tmp = tempfile.mkdtemp(prefix="tft-pickles-")
    try:
        files, marker = write_all(tmp)
        for name, exp in sorted(files.items()):
            path = os.path.join(tmp, name)
            sess = path + ".tft"
            r = H.run([binary, "import", path, "-o", sess])
            if "error" in exp:
                problems = []
                if r.crashed:
                    problems.append("crashed: " + r.why())
                elif r.rc != 2:
                    problems.append("exit %d, want 2" % r.rc)
                if exp["error"] not in r.err:
                    problems.append("stderr %r lacks %r" % (r.err.strip()[:200], exp["error"]))
                if os.path.exists(marker):
                    problems.append("the payload ran")
                rep.check(name, problems)
                continue
            if r.rc != 0 or r.crashed:
                rep.fail(name, "import " + r.why())
                continue
            problems = []
            r = H.run([binary, "info", "--json", "--memory", sess])
            try:
                info = json.loads(r.out)
            except ValueError:
                rep.fail(name, "info " + r.why())
                continue
            peaks = [(p["allocator"], p["bytes"], p["ts_us"], p["tensors"]) for p in info["peak_memory"]]
            if peaks != exp.get("peaks", []):
                problems.append("peak memory %r, want %r" % (peaks, exp.get("peaks")))
            steps = info["step_list"]
            traced = sum(1 for s in steps if s["traced"])
            if traced != exp["traced"] or len(steps) - traced != exp["untraced"]:
                problems.append("steps traced/untraced %d/%d, want %d/%d" %
                                (traced, len(steps) - traced, exp["traced"], exp["untraced"]))
            if "processes" in exp and info["processes"] != exp["processes"]:
                problems.append("%d processes, want %d (a worker's traces continue its process)" %
                                (info["processes"], exp["processes"]))
                seen = [(t["process_id"], t["name"]) for t in info["track_list"]]
                if len(seen) != len(set(seen)):
                    problems.append("a process lists a track twice: %r" % sorted(seen))
            if info["format"] != exp["fmt"]:
                problems.append("format %r, want %r" % (info["format"], exp["fmt"]))
            # each pickled RunMetadata's partition graph: named after the pickle and its step
            # (two steps' graphs apart, and apart from another pickle's)
            import sqlite3
            db = sqlite3.connect("file:%s?mode=ro" % sess, uri=True)
            try:
                graphs = [g for (g,) in db.execute("SELECT DISTINCT graph FROM graph_nodes")] \
                    if db.execute("SELECT 1 FROM sqlite_master WHERE name = 'graph_nodes'").fetchone() else []
            finally:
                db.close()
            if exp["fmt"] == "runmeta-pickle" and len(graphs) != exp["traced"]:
                problems.append("%d graphs %r, want one per traced RunMetadata (%d)" %
                                (len(graphs), graphs, exp["traced"]))
            bad = [g for g in graphs if not g.startswith(path + ":")]
            if bad:
                problems.append("graphs not named after the pickle %s: %r" % (path, bad))
            if name.startswith(("session", "tracing-session")):
                # untraced run 1 starts at its first_run, converted from UTC+2 local time
                want_ns = (T0 - 1000000 + 100000) * 1000
                got = [s for s in steps if s["name"] == "run 1"]
                if not got or got[0]["start_ns"] != want_ns:
                    problems.append("run 1 step %r, want start_ns %d" % (got, want_ns))
            for flags, key in ((["--show-dataflow", "--show-memory"], "timeline"), ([], "timeline_plain")):
                if not exp.get(key):
                    continue
                out = sess + ".json"
                r = H.run([binary, "export", sess, "-f", "chrome", "--tf-timeline"] + flags +
                          ["-o", out])
                if r.rc != 0:
                    problems.append("export " + r.why())
                    continue
                with open(out, encoding="utf-8") as fp:
                    got = fp.read()
                if got != exp[key]:
                    a, b = got.splitlines(), exp[key].splitlines()
                    i = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]), min(len(a), len(b)))
                    problems.append("%s differs from timeline.py at line %d: got %r want %r" %
                                    (key, i + 1, a[i] if i < len(a) else None,
                                     b[i] if i < len(b) else None))
            rep.check(name, problems)
        timeline_roundtrip(H, rep, binary, tmp)
        many_steps(H, rep, binary, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return rep.finish()


def timeline_roundtrip(H, rep, binary, tmp):
    """Real tf.timeline output (ikhlestov/tensorflow_profiling, TF 1.0): import it, export
    --tf-timeline: the M and X events must be the original ones (lanes kept from the tids)."""
    root = os.path.join(H.data_dir(), "ikhlestov-tf-profiling")
    names = ["CPU/timeline_01.json", "CPU/timeline_03_merged_5_runs.json",
             "GPU/timeline_01.json", "GPU/timeline_02_step_1.json"]
    for rel in names:
        path = os.path.join(root, rel)
        name = "tf-timeline-roundtrip/" + rel
        if not os.path.exists(path):
            rep.skip(name, "missing " + path)
            continue
        sess, out = os.path.join(tmp, "rt.tft"), os.path.join(tmp, "rt.json")
        for f in (sess, out):
            if os.path.exists(f):
                os.unlink(f)
        r = H.run([binary, "import", path, "-o", sess])
        if r.rc == 0:
            r = H.run([binary, "export", sess, "-f", "chrome", "--tf-timeline", "-o", out])
        if r.rc != 0 or r.crashed:
            rep.fail(name, r.why())
            continue
        key = lambda e: json.dumps(e, sort_keys=True)  # noqa: E731
        with open(path, encoding="utf-8") as fp:
            want = sorted(key(e) for e in json.load(fp)["traceEvents"] if e["ph"] in "MX")
        with open(out, encoding="utf-8") as fp:
            got = sorted(key(e) for e in json.load(fp)["traceEvents"] if e["ph"] in "MX")
        rep.check(name, [] if got == want else
                  ["%d M/X events, want %d; first difference %r" %
                   (len(got), len(want), next((g for g, w in zip(got, want) if g != w), None))])


def cpu_children():
    """CPU seconds of the finished child processes (timings immune to other load)."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def many_steps(H, rep, binary, tmp):
    """A list of many traced steps (tfvis keeps one RunMetadata per traced step): the import
    time grows with the steps, not with their square (one step's work must not scan what
    the earlier steps stored). 8x the steps may take at most 20x the time (64x if quadratic)."""
    times = {}
    binary = H.tft_bin_big()  # (the normal build: ASan's fixed cost per import would shrink the ratio)
    for n in (2000, 16000):
        path = os.path.join(tmp, "steps%d.pickle" % n)
        w = "/job:worker/replica:0/task:0/device:CPU:0"
        rms = [RunMetadata(enc_runmeta([{"device": w, "node_stats": [
            node("x/_1", 1600000000000000 + k * 1000, 1, "x/_1 = _Send(e @/job:worker/replica:0/task:1/device:CPU:0"),
            node("y", 1600000000000000 + k * 1000 + 2, 3, "y = Neg(x)")]}])) for k in range(n)]
        with open(path, "wb") as f:
            pickle.dump(rms, f, protocol=4)
        sess = os.path.join(tmp, "steps%d.tft" % n)
        t0 = cpu_children()
        r = H.run([binary, "import", "-q", path, "-o", sess])
        times[n] = cpu_children() - t0
        if r.rc != 0 or r.crashed:
            rep.fail("many-steps", r.why())
            return
    # the same steps, the list in reverse time order (every other one a bare StepStats):
    # stored in time order all the same, so the worker's steps share its one process
    # (not one process per step)
    path = os.path.join(tmp, "reversed.pickle")
    mixed = [StepStats(enc_stepstats([{"device": w, "node_stats": [
        node("y", 1600000000000000 + k * 1000 + 2, 3, "y = Neg(x)")]}])) if k % 2 else rms[k]
        for k in range(2000)]
    with open(path, "wb") as f:
        pickle.dump(mixed[::-1], f, protocol=4)
    sess = os.path.join(tmp, "reversed.tft")
    t0 = cpu_children()
    r = H.run([binary, "import", "-q", path, "-o", sess])
    rev_s = cpu_children() - t0
    info = H.cli_info(binary, sess) if r.rc == 0 else None
    if not info or info["processes"] != 1 or info["steps"] != 2000:
        rep.fail("many-steps", "a reversed list of 2000 steps: %s" % (
            r.why() if r.rc else "%d processes, %d steps; want 1, 2000" % (info["processes"], info["steps"])))
        return
    print("# many-steps: the reversed list of 2000 steps (half of them StepStats) %.2f s of CPU" % rev_s)
    ratio = times[16000] / max(times[2000], 1e-3)
    print("# many-steps: 2000 steps %.2f s, 16000 steps %.2f s of CPU (x%.1f)" % (times[2000], times[16000], ratio))
    rep.check("many-steps", [] if ratio < 20 else
              ["16000 steps took %.1fx the time of 2000 (%.2f s, %.2f s): superlinear" %
               (ratio, times[16000], times[2000])])


def main():
    args = sys.argv[1:]
    if args and args[0] == "--check":
        binary = args[1] if len(args) > 1 else os.environ.get("TFT_BIN", "build/tftracer")
        return check(os.path.abspath(binary))
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    files, _ = write_all(args[0])
    for name, exp in files.items():
        if exp.get("timeline"):
            with open(os.path.join(args[0], name + ".timeline.json"), "w", encoding="utf-8") as fp:
                fp.write(exp["timeline"])
    print("wrote %d pickles to %s" % (len(files), args[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
