#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# tftracer prof end to end (docs/cmd-prof.md): tfprof's views on TF RunMetadata + GraphDef
# built here and on the real GraphDefs of the corpus, on real PyTorch (Debian's torch,
# run here) and real Kineto traces; every expected value is computed in this file from
# the inputs (shapes, the .pbtxt, torch's own key_averages() and parameters), never by
# tftracer. Also the outputs (text layout, JSON, CSV, pprof read by `go tool pprof`, the
# timeline read back by `tftracer import`), the tfprof> shell through a pseudo-terminal,
# the HTTP endpoint, and bad input (one line, exit 2).
"""Usage: test_prof.py [SUBSTRING...]   one PASS/FAIL/SKIP line per test.

Env: TFT_BIN (the CLI, default build/tftracer), TFT_DATA (the trace corpus)."""
import csv
import gzip
import io
import json
import os
import pty
import re
import select
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "corpus"))
import tft_harness as H  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_http_api import Server, get_json, req  # noqa: E402

PY = "/usr/bin/python3"
T0 = 1600000000000000  # us
CPU = "/job:localhost/replica:0/task:0/device:CPU:0"
GPU = "/job:localhost/replica:0/task:0/device:GPU:0"
GRAPHS = ["tensorboard/graphdef/graphdef_mnist.pbtxt", "tensorboard/graphdef/functionaltests_graph.pbtxt",
          "tensorboard/graphdef/tf_graph_demo_graph.pbtxt"]


# ---- protobuf wire encoding (field numbers from the .proto files) ------------------------------

def varint(v):
    out = bytearray()
    v &= (1 << 64) - 1
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def f_int(num, v):
    return varint(num << 3) + varint(v)


def f_bytes(num, b):
    if isinstance(b, str):
        b = b.encode()
    return varint(num << 3 | 2) + varint(len(b)) + b


def shape_pb(dims):
    """TensorShapeProto {dim 2 {size 1}}"""
    return b"".join(f_bytes(2, f_int(1, d)) for d in dims)


def attr(key, value):
    """NodeDef.attr map entry {key 1, value 2 AttrValue}"""
    return f_bytes(5, f_bytes(1, key) + f_bytes(2, value))


def a_shape(dims):
    return f_bytes(7, shape_pb(dims))


def a_bool(b):
    return f_int(5, 1 if b else 0)


def a_str(s):
    return f_bytes(2, s)


def a_ints(v):
    return f_bytes(1, b"".join(f_int(3, i) for i in v))


def a_shapes(list_of_dims):
    return f_bytes(1, b"".join(f_bytes(7, shape_pb(d)) for d in list_of_dims))


def node_def(name, op, inputs=(), attrs=b"", device=CPU):
    """NodeDef {name 1, op 2, input 3, device 4, attr 5}"""
    n = f_bytes(1, name) + f_bytes(2, op) + b"".join(f_bytes(3, i) for i in inputs) + f_bytes(4, device)
    return f_bytes(1, n + attrs)


def exec_stats(name, start, dur, label="", outputs=(), memory=(), memstats=None):
    """NodeExecStats {node_name 1, all_start_micros 2, op_start_rel 3, op_end_rel 4, all_end_rel 5,
    memory 6 {allocator_name 1, total 2, peak 3, live 4}, output 7 {slot 1, tensor_description 3
    {dtype 1, shape 2, allocation_description 4 {requested 1, allocated 2, allocator_name 3}}},
    timeline_label 8, memory_stats 12 {temp 1, persistent 3}}"""
    n = f_bytes(1, name) + f_int(2, start) + f_int(3, 0) + f_int(4, dur) + f_int(5, dur)
    for alloc, total, peak, live in memory:
        n += f_bytes(6, f_bytes(1, alloc) + f_int(2, total) + f_int(3, peak) + f_int(4, live))
    for slot, dims, req, alloc in outputs:
        td = f_int(1, 1) + f_bytes(2, shape_pb(dims)) + f_bytes(4, f_int(1, req) + f_int(2, alloc) + f_bytes(3, "cpu"))
        n += f_bytes(7, f_int(1, slot) + f_bytes(3, td))
    if label:
        n += f_bytes(8, label)
    if memstats:
        n += f_bytes(12, f_int(1, memstats[0]) + f_int(3, memstats[1]))
    return f_bytes(2, n)


def device(name, nodes):
    return f_bytes(1, f_bytes(1, name) + b"".join(nodes))


class Skip(Exception):
    pass


def run_in(argv, stdin_data, timeout=300):
    """Run with stdin_data on standard input (H.run gives none)."""
    p = subprocess.run(argv, input=stdin_data.encode(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=timeout)
    return H.Result(p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace"),
                    [str(a) for a in argv])


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)
    return path


# ---- the TF model: a GraphDef and two steps of RunMetadata -------------------------------------

# (name, op, inputs, attrs dict for this file's checks, output shape in the graph or None)
VARS = {"w": [16, 32], "b": [32], "k": [3, 3, 3, 4], "step": []}
CONV = {"strides": [1, 2, 2, 1], "data_format": "NHWC"}


def tf_graph():
    nodes = [
        node_def("x", "Placeholder", attrs=attr("_output_shapes", a_shapes([[8, 16]]))),
        node_def("xt", "Placeholder", attrs=attr("_output_shapes", a_shapes([[16, 8]]))),
        node_def("img", "Placeholder", attrs=attr("_output_shapes", a_shapes([[2, 9, 9, 3]]))),
        node_def("img2", "Placeholder"),  # its shape only in the RunMetadata's output
    ]
    for v, dims in VARS.items():
        nodes.append(node_def(v, "VariableV2", attrs=attr("shape", a_shape(dims)) +
                              attr("_output_shapes", a_shapes([dims]))))
        nodes.append(node_def(v + "/read", "Identity", [v], attr("_output_shapes", a_shapes([dims]))))
    nodes += [
        node_def("mm", "MatMul", ["x", "w/read"], attr("transpose_a", a_bool(False)) +
                 attr("_output_shapes", a_shapes([[8, 32]]))),
        node_def("mmT", "MatMul", ["xt", "w/read"], attr("transpose_a", a_bool(True)) +
                 attr("_output_shapes", a_shapes([[8, 32]]))),
        node_def("bias", "BiasAdd", ["mm", "b/read"], attr("_output_shapes", a_shapes([[8, 32]]))),
        node_def("conv", "Conv2D", ["img", "k/read"], attr("strides", a_ints(CONV["strides"])) +
                 attr("data_format", a_str("NHWC")) + attr("padding", a_str("VALID")) +
                 attr("_output_shapes", a_shapes([[2, 4, 4, 4]]))),
        node_def("conv_rm", "Conv2D", ["img2", "k/read", "^x"], attr("strides", a_ints(CONV["strides"])) +
                 attr("data_format", a_str("NHWC"))),
        node_def("gpu_mm", "MatMul", ["x", "w/read"], attr("_output_shapes", a_shapes([[8, 32]])), device=GPU),
    ]
    return b"".join(nodes) + f_bytes(4, f_int(1, 27))


def mm_flops(k, out):
    n = 1
    for d in out:
        n *= d
    return 2 * k * n


# independent expectations of the rules (tfprof's formulas on this graph's shapes)
FLOPS = {"mm": mm_flops(16, [8, 32]), "mmT": mm_flops(16, [8, 32]), "bias": 8 * 32,
         "conv": 2 * 4 * 4 * 4 * 3 * 3 * 3 * 2, "conv_rm": 2 * 4 * 4 * 4 * 3 * 3 * 3 * 2, "gpu_mm": mm_flops(16, [8, 32])}
PARAMS = {"w": 16 * 32, "b": 32, "k": 3 * 3 * 3 * 4, "step": 1}  # a scalar variable: shape [] counts 1, as tfprof
MM_MEM = {"memory": [("cpu", 1024, 1000, 512)], "memstats": (64, 32), "out": (1024, 2048)}
# tfprof's AddMemoryStats: requested = total + temp + persistent; peak = peak + temp + persistent;
# residual = live + persistent; output = max(requested, allocated)
MM_BYTES = {"bytes": 1024 + 64 + 32, "peak_bytes": 1000 + 64 + 32, "residual_bytes": 512 + 32, "output_bytes": 2048}


def tf_step(k):
    """Step k (0, 1): the CPU ops with their durations; mm runs twice in step 1 (a while loop);
    gpu_mm on the GPU executor with its kernel on stream:7 and a copy on stream:all."""
    t = T0 + k * 10000
    dur = {"mm": 10 + k, "mmT": 20, "bias": 5, "conv": 30, "conv_rm": 40}
    cpu = [exec_stats("x", t, 1, "x = Placeholder()", [(0, [8, 16], 512, 512)]),
           exec_stats("xt", t + 1, 1, "xt = Placeholder()", [(0, [16, 8], 512, 512)]),
           exec_stats("img", t + 2, 1, "img = Placeholder()", [(0, [2, 9, 9, 3], 1944, 1944)]),
           exec_stats("img2", t + 3, 1, "img2 = Placeholder()", [(0, [2, 9, 9, 3], 1944, 1944)]),
           exec_stats("w/read", t + 4, 1, "w/read = Identity(w)", [(0, [16, 32], 2048, 2048)]),
           exec_stats("b/read", t + 5, 1, "b/read = Identity(b)", [(0, [32], 128, 128)]),
           exec_stats("k/read", t + 6, 1, "k/read = Identity(k)", [(0, [3, 3, 3, 4], 432, 432)]),
           exec_stats("mm", t + 10, dur["mm"], "mm = MatMul(x, w/read)", [(0, [8, 32], MM_MEM["out"][0], MM_MEM["out"][1])],
                      MM_MEM["memory"], MM_MEM["memstats"]),
           exec_stats("mmT", t + 30, dur["mmT"], "mmT = MatMul(xt, w/read)", [(0, [8, 32], 1024, 1024)]),
           exec_stats("bias", t + 60, dur["bias"], "bias = BiasAdd(mm, b/read)", [(0, [8, 32], 1024, 1024)]),
           exec_stats("conv", t + 70, dur["conv"], "conv = Conv2D(img, k/read)", [(0, [2, 4, 4, 4], 512, 512)]),
           exec_stats("conv_rm", t + 110, dur["conv_rm"], "conv_rm = Conv2D(img2, k/read)",
                      [(0, [2, 4, 4, 4], 512, 512)])]
    if k == 1:
        cpu.append(exec_stats("mm", t + 200, dur["mm"], "mm = MatMul(x, w/read)",
                              [(0, [8, 32], MM_MEM["out"][0], MM_MEM["out"][1])], MM_MEM["memory"], MM_MEM["memstats"]))
    gpu = [exec_stats("gpu_mm", t + 300, 8, "gpu_mm = MatMul(x, w/read)", [(0, [8, 32], 1024, 1024)])]
    label = "sgemm grid:1,1,1 block:128,1,1@@gpu_mm:MatMul"
    stream = [exec_stats("gpu_mm:MatMul", t + 305, 25 + k, label)]
    runmeta = f_bytes(1, device(CPU, cpu) + device(GPU, gpu) + device(GPU + "/stream:7", stream) +
                      device(GPU + "/stream:all", stream))
    runs = {"mm": 1 + k, "mmT": 1, "bias": 1, "conv": 1, "conv_rm": 1}
    return runmeta, dur, runs, 25 + k


def walk(node, path=()):
    yield node, path
    for c in node.get("children", []):
        yield from walk(c, path + (node["name"],))


def by_name(doc):
    return {n["name"]: n for n, _ in walk(doc["root"])}


def prof_json(sess, view, *opts):
    return H.cli_json(H.tft_bin(), ["prof", sess, view, "--json"] + list(opts))


def tf_session(tmp):
    g = write(os.path.join(tmp, "graph.pb"), tf_graph())
    steps = []
    files = []
    for k in range(2):
        rm, dur, runs, kdur = tf_step(k)
        files.append(write(os.path.join(tmp, "step_%d.pb" % k), rm))
        steps.append((dur, runs, kdur))
    sess = os.path.join(tmp, "tf.tft")
    H.cli_import(H.tft_bin(), files + [g], sess)
    return sess, steps


def close(a, b):
    return abs(a - b) <= 1e-6 * max(1.0, abs(a), abs(b))


# ---- checks: TF -----------------------------------------------------------------------------------

def check_tf_steps(tmp):
    """Per step (-step 0, 1) and averaged (-step -1): cpu time from the executor's slices, the
    kernel's time as accelerator time (stream:all not counted twice), runs, float ops = the
    shapes' formulas x runs, parameters = the variables' shape products, memory by tfprof's rules."""
    probs = []
    sess, steps = tf_session(tmp)
    for step in (0, 1, -1):
        j = prof_json(sess, "scope", "-step", str(step), "-max_depth", "100", "-select",
                      "micros,accelerator_micros,cpu_micros,occurrence,float_ops,params,bytes,peak_bytes,"
                      "residual_bytes,output_bytes")
        nodes = by_name(j)
        ks = [0, 1] if step < 0 else [step]
        if j.get("step") != step or j.get("steps") != len(ks):
            probs.append("step %d: JSON step %r steps %r" % (step, j.get("step"), j.get("steps")))

        def avg(f):
            return sum(f(k) for k in ks) / len(ks)
        for name, fl in FLOPS.items():
            n = nodes.get(name)
            if name == "gpu_mm":
                want_cpu, want_runs = 8, 1
            else:
                want_cpu = avg(lambda k: steps[k][0][name] * steps[k][1][name])
                want_runs = avg(lambda k: steps[k][1][name])
            want_fl = fl * want_runs
            if not n or not close(n["self"]["cpu_micros"], want_cpu) or not close(n["self"]["occurrence"], want_runs) \
                    or not close(n["self"]["float_ops"], want_fl):
                probs.append("step %d: %s self %r; want cpu %g, runs %g, float_ops %g" %
                             (step, name, n and n["self"], want_cpu, want_runs, want_fl))
        n = nodes.get("gpu_mm")
        want_acc = avg(lambda k: steps[k][2])
        if not n or not close(n["self"]["accelerator_micros"], want_acc) or \
                not close(n["self"]["micros"], want_acc + 8):
            probs.append("step %d: gpu_mm accelerator %r; want %g (the stream:7 kernel once)" %
                         (step, n and n["self"], want_acc))
        for v, p in PARAMS.items():
            n = nodes.get(v)
            if not n or n["self"]["params"] != p or n.get("shape") != ("x".join(map(str, VARS[v])) or "1"):
                probs.append("%s: params %r shape %r; want %d" % (v, n and n["self"], n and n.get("shape"), p))
        if j["root"]["total"]["params"] != sum(PARAMS.values()):
            probs.append("root params %r, want %d" % (j["root"]["total"]["params"], sum(PARAMS.values())))
        n = nodes["mm"]
        for key, per_run in MM_BYTES.items():
            want = per_run * avg(lambda k: steps[k][1]["mm"])
            if not close(n["self"][key], want):
                probs.append("step %d: mm %s %r, want %g" % (step, key, n["self"][key], want))
        total_cpu = sum(x["self"]["cpu_micros"] for x, _ in walk(j["root"]))
        if not close(j["root"]["total"]["cpu_micros"], total_cpu):
            probs.append("step %d: root total cpu %r != the sum of selves %r" % (step, j["root"]["total"], total_cpu))
    r = H.run([H.tft_bin(), "prof", sess, "scope", "-step", "5"])
    if r.rc != 2 or len(r.err.strip().splitlines()) != 1 or "-step 5" not in r.err:
        probs.append("-step 5 of 2 steps: exit %d, %r" % (r.rc, r.err))
    return probs


def check_tf_views(tmp):
    """The graph view: roots are the nodes nothing takes as input, children their inputs; the op
    view per op type; the text layout of tfprof's -select params."""
    probs = []
    sess, _ = tf_session(tmp)
    j = prof_json(sess, "graph", "-max_depth", "100", "-select", "float_ops")
    roots = sorted(c["name"] for c in j["root"]["children"])
    # independently: the nodes no other node has as a (data or control) input
    inputs = {"x", "w/read", "xt", "b/read", "img", "img2", "k/read", "w", "b", "k", "step", "mm"}
    all_nodes = {"x", "xt", "img", "img2", "mm", "mmT", "bias", "conv", "conv_rm", "gpu_mm"} | \
        {v for v in VARS} | {v + "/read" for v in VARS}
    want_roots = sorted(all_nodes - inputs)
    if roots != want_roots:
        probs.append("graph roots %r, want %r" % (roots, want_roots))
    bias = next((c for c in j["root"]["children"] if c["name"] == "bias"), None)
    kids = sorted(c["name"] for c in bias["children"]) if bias else None
    if kids != ["b/read", "mm"]:
        probs.append("bias's children (its inputs) %r" % kids)
    j = prof_json(sess, "op", "-select", "float_ops,occurrence", "-step", "0", "-max_depth", "100")
    ops = {c["name"]: c for c in j["root"]["children"]}
    want = FLOPS["mm"] + FLOPS["mmT"] + FLOPS["gpu_mm"]
    if "MatMul" not in ops or ops["MatMul"]["self"]["float_ops"] != want or ops["MatMul"].get("defined") != 3:
        probs.append("op MatMul %r, want float_ops %d, defined 3" % (ops.get("MatMul"), want))
    if abs(j["root"]["total"]["float_ops"] - sum(FLOPS.values())) > 1e-6:
        probs.append("op root float_ops %r, want %d" % (j["root"]["total"]["float_ops"], sum(FLOPS.values())))
    r = H.run([H.tft_bin(), "prof", sess, "scope", "-select", "params", "-account_type_regexes", "VariableV2"])
    lines = r.out.splitlines()
    total = sum(PARAMS.values())
    want = ["node name | # parameters", "_TFProfRoot (--/%d params)" % total, "  b (32, 32/32 params)",
            "  k (3x3x3x4, 108/108 params)", "  step (1, 1/1 params)", "  w (16x32, 512/512 params)"]
    if r.rc != 0 or lines[lines.index("Profile:") + 1:lines.index("Profile:") + 7] != want:
        probs.append("text: %r, want %r" % (lines, want))
    return probs


def parse_pbtxt(text):
    """A minimal protobuf text-format reader: messages as lists of (field, value)."""
    toks = re.findall(r'"(?:\\.|[^"\\])*"|[{}:]|[^\s{}:]+', text)
    pos = 0

    def msg():
        nonlocal pos
        out = []
        while pos < len(toks) and toks[pos] != "}":
            key = toks[pos]
            pos += 1
            if toks[pos] == ":":
                pos += 1
            if toks[pos] == "{":
                pos += 1
                out.append((key, msg()))
                pos += 1
            else:
                v = toks[pos]
                pos += 1
                out.append((key, v[1:-1] if v.startswith('"') else v))
        return out
    return msg()


def get(m, key):
    return [v for k, v in m if k == key]


def check_real_graphs(tmp):
    """The corpus' GraphDefs: a variable's params = its shape's product (read from the .pbtxt
    here); a MatMul that never ran keeps its static float ops, 2*k*out from the _output_shapes."""
    probs = []
    for rel in GRAPHS:
        path = os.path.join(H.data_dir(), rel)
        if not os.path.exists(path):
            probs.append("missing %s" % path)
            continue
        with open(path, encoding="utf-8") as f:
            nodes = get(parse_pbtxt(f.read()), "node")
        byname = {get(n, "name")[0]: n for n in nodes}
        want, flops = {}, {}

        def attrs(n):
            return {get(a, "key")[0]: get(a, "value")[0] for a in get(n, "attr")}

        def shapes_of(n):
            a = attrs(n).get("_output_shapes")
            if not a:
                return None
            return [[int(get(d, "size")[0]) if get(d, "size") else 0 for d in get(s, "dim")]
                    for s in get(get(a, "list")[0], "shape")]
        for n in nodes:
            op, name = get(n, "op")[0], get(n, "name")[0]
            if op in ("Variable", "VariableV2", "VarHandleOp"):
                dims = [int(get(d, "size")[0]) for d in get(get(attrs(n)["shape"], "shape")[0], "dim")]
                p = 1
                for d in dims:
                    p = p * d if d >= 0 else 0
                want[name] = p
            if op == "MatMul":
                ins = [i for i in get(n, "input") if not i.startswith("^")]
                src, _, port = ins[0].partition(":")
                a, out = shapes_of(byname[src]), shapes_of(n)
                if not a or not out:
                    continue  # (no _output_shapes: tfprof counts nothing)
                a, out = a[int(port or 0)], out[0]
                ta = get(attrs(n).get("transpose_a", []), "b") == ["true"]
                if all(d > 0 for d in a + out):
                    flops[name] = mm_flops(a[0] if ta else a[1], out)
        sess = os.path.join(tmp, os.path.basename(rel) + ".tft")
        H.cli_import(H.tft_bin(), [path], sess)
        j = prof_json(sess, "scope", "-select", "params,float_ops", "-max_depth", "1000",
                      "-account_type_regexes", "Variable,VariableV2,VarHandleOp")
        got = {n["name"]: n["self"]["params"] for n, _ in walk(j["root"]) if n["accounted"]}
        if got != want or j["root"]["total"]["params"] != sum(want.values()):
            probs.append("%s: params %r, want %r" % (rel, got, want))
        if flops:
            j = prof_json(sess, "scope", "-select", "float_ops", "-max_depth", "1000")
            nodes = by_name(j)
            for name, f in flops.items():
                if name not in nodes or nodes[name]["self"]["float_ops"] != f:
                    probs.append("%s: %s float_ops %r, want %d" % (rel, name, nodes.get(name), f))
        elif rel.endswith("tf_graph_demo_graph.pbtxt"):
            probs.append("%s: no MatMul with shapes to check" % rel)
    return probs


def check_oplog(tmp):
    """An OpLogProto's _trainable_variables type: -account_type_regexes _trainable_variables counts
    what it marks (not the optimizer slot), and its code traces make the code view."""
    probs = []

    def entry(name, types=(), float_ops=0, code=b""):
        e = f_bytes(1, name) + (f_int(2, float_ops) if float_ops else b"")
        e += b"".join(f_bytes(3, t) for t in types)
        return f_bytes(1, e + (f_bytes(4, code) if code else b""))

    def trace(file_id, lineno, function_id):
        return f_bytes(1, f_int(2, lineno) + f_int(6, file_id) + f_int(7, function_id))
    log = entry("w", ["_trainable_variables"]) + entry("b", ["_trainable_variables"])
    log += entry("mm", float_ops=777, code=trace(1, 12, 2) + trace(3, 99, 4))
    log += entry("bias", code=trace(1, 12, 2) + trace(3, 120, 5))
    for k, v in ((0, "none"), (1, "/src/model.py"), (2, "build"), (3, "lib/layers.py"), (4, "dense"), (5, "add_bias")):
        log += f_bytes(2, f_int(1, k) + f_bytes(2, v))
    g = write(os.path.join(tmp, "graph.pb"), tf_graph())
    rm, dur, runs, _ = tf_step(0)
    files = [write(os.path.join(tmp, "run.pb"), rm), g, write(os.path.join(tmp, "tfprof_log"), log)]
    sess = os.path.join(tmp, "oplog.tft")
    H.cli_import(H.tft_bin(), files, sess)
    j = prof_json(sess, "scope", "-select", "params", "-account_type_regexes", "_trainable_variables",
                  "-max_depth", "100")
    got = sorted(n["name"] for n, _ in walk(j["root"]) if n["accounted"])
    if got != ["b", "w"] or j["root"]["total"]["params"] != PARAMS["w"] + PARAMS["b"]:
        probs.append("_trainable_variables: %r, %r" % (got, j["root"]["total"]))
    j = prof_json(sess, "scope", "-select", "float_ops", "-max_depth", "100")
    if by_name(j)["mm"]["self"]["float_ops"] != 777:
        probs.append("the OpLog's float_ops: %r" % by_name(j)["mm"]["self"])
    j = prof_json(sess, "code", "-select", "cpu_micros", "-max_depth", "100")
    paths = {tuple(p[1:] + (n["name"],)): n for n, p in walk(j["root"])}
    top = paths.get(("model.py:12:build",))
    if not top or not close(top["total"]["cpu_micros"], dur["mm"] + dur["bias"]) \
            or ("model.py:12:build", "layers.py:99:dense") not in paths \
            or ("model.py:12:build", "layers.py:120:add_bias") not in paths:
        probs.append("code view: %r" % sorted(paths))
    return probs


# ---- checks: PyTorch ------------------------------------------------------------------------------------

def torch_session(tmp):
    """Debian's torch runs tests/python/gen_prof_torch.py; its trace imported, its model_params set."""
    out = os.path.join(tmp, "torch")
    r = H.run([PY, os.path.join(H.REPO, "tests", "python", "gen_prof_torch.py"), out], timeout=600)
    if r.rc == 77:
        raise Skip("torch not importable")
    if r.rc != 0:
        raise RuntimeError("gen_prof_torch.py: exit %d: %s" % (r.rc, r.err[-400:]))
    with open(os.path.join(out, "trace.json")) as f:
        trace = json.load(f)
    # the Python module marks module calls with category python_module (the shared spec)
    for e in trace["traceEvents"]:
        if e.get("cat") == "user_annotation" and e.get("name", "").startswith("nn.Module: "):
            e["cat"] = "python_module"
    load = lambda n: json.load(open(os.path.join(out, n)))  # noqa: E731
    return out, trace, load("keyavg.json"), load("model_params.json"), load("expected.json")


def import_trace(tmp, trace, name, meta=None):
    path = os.path.join(tmp, name + ".json")
    with open(path, "w") as f:
        json.dump(trace, f)
    sess = os.path.join(tmp, name + ".tft")
    H.cli_import(H.tft_bin(), [path], sess)
    if meta is not None:
        db = sqlite3.connect(sess)
        db.execute("INSERT INTO meta(key, value) VALUES ('model_params', ?)", (json.dumps(meta),))
        db.commit()
        db.close()
    return sess


def check_torch(tmp):
    """Real PyTorch: FLOPs per aten op = key_averages()'s (with_flops=True), from the trace's flops
    args and again from its shapes alone; parameters = sum(p.numel()), per module as PyTorch counts;
    op-view counts and times = the session's slices (`tftracer stats`)."""
    probs = []
    out, trace, keyavg, meta, expected = torch_session(tmp)
    sess = import_trace(tmp, trace, "torch", meta)
    j = prof_json(sess, "op", "-select", "float_ops,occurrence,cpu_micros", "-max_depth", "100000")
    ops = {c["name"]: c for c in j["root"]["children"]}
    counted = {k: v for k, v in keyavg.items() if v["flops"]}
    if len(counted) < 6:
        probs.append("key_averages counted flops for only %r" % sorted(counted))
    for name, v in counted.items():
        got = ops.get(name, {}).get("self", {}).get("float_ops")
        if got != v["flops"]:
            probs.append("%s: float_ops %r, key_averages %d" % (name, got, v["flops"]))
    for name, c in ops.items():
        if c["self"]["float_ops"] and name not in counted:
            probs.append("%s: float_ops %r where PyTorch counts none" % (name, c["self"]["float_ops"]))
    # op view = the session's slices, name by name (no steps: one step)
    st = {r["name"]: r for r in H.cli_json(H.tft_bin(), ["stats", sess, "--json", "--exact"])["rows"]}
    for name, c in ops.items():
        if name == "Parameter":
            continue
        r = st.get(name)
        if not r or c["self"]["occurrence"] != r["count"] or abs(c["self"]["cpu_micros"] * 1000 - r["self_ns"]) > 0.5 \
                or abs(c["total"]["cpu_micros"] * 1000 - r["total_ns"]) > 0.5:
            probs.append("op %s %r vs stats %r" % (name, c, r))
    # FLOPs from the shapes: the flops args removed, conv2d's strides as newer profilers record them
    stripped = json.loads(json.dumps(trace))
    conv = {tuple(v[4]): v for v in expected["conv"].values()}  # weight shape -> config
    for e in stripped["traceEvents"]:
        a = e.get("args", {})
        a.pop("flops", None)
        if e.get("name") == "aten::conv2d":
            w = a.get("Input Dims", [[], []])[1]
            s, p, d, g, _ = conv[tuple(w)]
            a["Concrete Inputs"] = ["", "", "", str(s), str(p), str(d), str(g)]
    sess2 = import_trace(tmp, stripped, "torch_shapes")
    j = prof_json(sess2, "op", "-select", "float_ops", "-max_depth", "100000")
    ops = {c["name"]: c for c in j["root"]["children"]}
    for name, v in counted.items():
        got = ops.get(name, {}).get("self", {}).get("float_ops")
        if got != v["flops"]:
            probs.append("from shapes: %s float_ops %r, key_averages %d" % (name, got, v["flops"]))
    # parameters: the root = sum(p.numel()); each module its own and its children's
    j = prof_json(sess, "scope", "-select", "params", "-max_depth", "100")
    nodes = by_name(j)
    if j["root"]["total"]["params"] != expected["total_params"]:
        probs.append("root params %r, want %d" % (j["root"]["total"]["params"], expected["total_params"]))
    for path, p in expected["modules"].items():
        name = "model/" + path.replace(".", "/") if path else "model"
        if name not in nodes or nodes[name]["total"]["params"] != p:
            probs.append("module %r: %r, want %d" % (name, nodes.get(name, {}).get("total"), p))
    # the module tree: the ops a module ran are under it; a backward op under its forward op's module
    kids = {c["name"] for c in nodes.get("model/0", {}).get("children", [])}
    if "model/0/aten::conv2d" not in kids or "model/0/autograd::engine::evaluate_function: ConvolutionBackward0" not in kids:
        probs.append("model/0's children %r" % sorted(kids))
    return probs


def check_kineto_totals(tmp):
    """A real Kineto GPU trace without steps: each op type's count, self and total time (cpu) are
    `tftracer stats`'s for that name, and the accelerator time of all op types is the kernels'."""
    probs = []
    rel = "kineto/tb_plugin_samples/resnet50_autograd_api_num_workers_0/worker0.pt.trace.json.gz"
    path = os.path.join(H.data_dir(), rel)
    if not os.path.exists(path):
        return ["missing %s" % path]
    sess = os.path.join(tmp, "r50.tft")
    H.cli_import(H.tft_bin_big(), [path], sess)
    j = H.cli_json(H.tft_bin_big(), ["prof", sess, "op", "--json", "-max_depth", "100000", "-select",
                                     "cpu_micros,accelerator_micros,occurrence"])
    st = {r["name"]: r for r in H.cli_json(H.tft_bin_big(), ["stats", sess, "--json", "--exact"])["rows"]}
    tracks = H.cli_json(H.tft_bin_big(), ["stats", sess, "--json", "--by", "track"])["rows"]
    info = H.cli_json(H.tft_bin_big(), ["info", sess, "--json"])
    gpu_ids = {t["id"] for t in info["track_list"] if t["kind"] == "gpu_stream" and not t["derived"]}
    kernels = sum(r["total_ns"] for r in tracks if r["track_id"] in gpu_ids) / 1000.0
    acc = 0.0
    for c in j["root"]["children"]:
        acc += c["self"]["accelerator_micros"]
        r = st.get(c["name"])
        if c["self"]["occurrence"] == 0:
            continue  # (a kernel no op launched: its own type, no host time)
        if not r or c["self"]["occurrence"] != r["count"] or abs(c["self"]["cpu_micros"] * 1000 - r["self_ns"]) > 0.5 \
                or abs(c["total"]["cpu_micros"] * 1000 - r["total_ns"]) > 0.5:
            probs.append("op %s %r vs stats %r" % (c["name"], c, r))
            if len(probs) > 5:
                break
    if abs(acc - kernels) > 1e-3 * max(1, kernels) or not kernels:
        probs.append("accelerator time of the op types %g us, the GPU tracks' slices %g us" % (acc, kernels))
    if abs(j["root"]["total"]["accelerator_micros"] - acc) > 1e-3 * max(1, acc):
        probs.append("root accelerator total %r != the op types' %g" % (j["root"]["total"], acc))
    # this older trace spells "Input dims": aten::addmm's FLOPs are 2*M*K*N of its inputs, from the raw JSON
    ev = json.load(gzip.open(path))["traceEvents"]
    want = sum(2 * a["Input dims"][1][0] * a["Input dims"][1][1] * a["Input dims"][2][1]
               for e in ev if e.get("name") == "aten::addmm" and e.get("ph") == "X"
               for a in [e.get("args") or {}] if len(a.get("Input dims") or []) >= 3)
    f = H.cli_json(H.tft_bin_big(), ["prof", sess, "op", "--json", "-max_depth", "100000", "-select", "float_ops"])
    got = {c["name"]: c["self"].get("float_ops") for c in f["root"]["children"]}.get("aten::addmm")
    if not want or got != want:
        probs.append("aten::addmm float_ops %r, want %r (2*M*K*N from Input dims)" % (got, want))
    return probs


# ---- checks: roofline -----------------------------------------------------------------------------------

# H100 SXM datasheet (dense): BF16 tensor 989.4 TFLOP/s, FP32 66.9 TFLOP/s, HBM3 3.35 TB/s
H100_BF16, H100_FP32, H100_BW = 989.4e12, 66.9e12, 3.35e12
TORCH_SIZES = {"float": 4, "c10::Half": 2, "c10::BFloat16": 2, "double": 8, "long int": 8, "int": 4, "bool": 1}


def check_roofline(tmp):
    """--roofline on a real H100 Kineto trace (BERT, bf16): aten::addmm's count, kernel time (its
    kernels' durations by External id), FLOPs (2*M*K*N from Input Dims), bytes (its tensor inputs),
    rates, intensity and attainable rate against the datasheet, computed here from the raw JSON;
    each kernel row's count and time are its slices'; the kernels launched only by addmm carry
    its FLOPs between them; a host-only view op has no rate; CSV = JSON."""
    probs = []
    rel = "tracelens/kineto_h100/gaunernst_bert-small-uncased__1016001.json.gz"
    path = os.path.join(H.data_dir(), rel)
    if not os.path.exists(path):
        return ["missing %s" % path]
    with gzip.open(path, "rt") as f:
        evs = json.load(f)["traceEvents"]
    sess = os.path.join(tmp, "bert.tft")
    H.cli_import(H.tft_bin(), [path], sess)
    j = H.cli_json(H.tft_bin(), ["prof", sess, "--roofline", "--json"])
    rows = {(r["kind"], r["name"]): r for r in j["rows"]}
    ops = {e["args"]["External id"]: e for e in evs if e.get("cat") == "cpu_op" and e.get("ph") == "X"}
    mm = [e for e in ops.values() if e["name"] == "aten::addmm"]
    flops = nbytes = 0
    for e in mm:
        dims, types = e["args"]["Input Dims"], e["args"]["Input type"]
        (m, k), (_, n) = dims[1], dims[2]
        flops += 2 * m * k * n
        for d, t in zip(dims, types):
            if t in TORCH_SIZES:
                numel = 1
                for x in d:
                    numel *= x
                nbytes += numel * TORCH_SIZES[t]
    kern = [e for e in evs if e.get("cat") == "kernel" and e.get("ph") == "X"]
    mm_ids = {e["args"]["External id"] for e in mm}
    mm_kern = [e for e in kern if e["args"].get("External id") in mm_ids]
    us = sum(e["dur"] for e in mm_kern)
    sec = us / 1e6
    inten = flops / nbytes
    att = min(H100_BF16, inten * H100_BW)
    want = {"count": len(mm), "micros": us, "flops": flops, "bytes": nbytes, "flops_per_s": flops / sec,
            "bytes_per_s": nbytes / sec, "intensity": inten, "peak_flops_per_s": H100_BF16,
            "peak_bytes_per_s": H100_BW, "attainable_flops_per_s": att, "of_attainable": flops / sec / att}
    r = rows.get(("op", "aten::addmm"))
    if not r:
        return ["no aten::addmm row in %r" % sorted(rows)[:10]]
    for key, v in want.items():
        if r[key] is None or abs(r[key] - v) > 1e-6 * max(1.0, abs(v)) + (1e-3 if key == "micros" else 0):
            probs.append("aten::addmm %s = %r, computed %r" % (key, r[key], v))
    if r["dtype"] != "fp16/bf16" or r["bound"] != ("memory" if inten * H100_BW < H100_BF16 else "compute") \
            or "H100" not in r["device"]:
        probs.append("aten::addmm dtype/bound/device %r %r %r" % (r["dtype"], r["bound"], r["device"]))
    # kernel rows: count and time are the kernel slices'; addmm's own kernels share its FLOPs
    by_name = {}
    for e in kern:
        c = by_name.setdefault(e["name"], [0, 0.0, set()])
        c[0] += 1
        c[1] += e["dur"]
        c[2].add(ops[e["args"]["External id"]]["name"] if e["args"].get("External id") in ops else None)
    shared = 0.0
    for name, (cnt, dur, owners) in by_name.items():
        kr = rows.get(("kernel", name))
        if not kr or kr["count"] != cnt or abs(kr["micros"] - dur) > 1e-3:
            probs.append("kernel %s: %r, slices %d x %.3f us" % (name[:60], kr and (kr["count"], kr["micros"]), cnt, dur))
        elif owners == {"aten::addmm"}:
            shared += kr["flops"]
    if abs(shared - flops) > 1e-6 * flops:
        probs.append("addmm's kernels carry %r FLOPs, addmm %r" % (shared, flops))
    v = rows.get(("op", "aten::view"))
    if not v or v["bytes_per_s"] is not None or v["flops_per_s"] is not None:
        probs.append("aten::view (host only, no FLOPs) has rates: %r" % v)
    # CSV: the same rows
    out = H.run([H.tft_bin(), "prof", sess, "--roofline", "--csv"])
    cs = list(csv.DictReader(io.StringIO(out.out)))
    if out.rc != 0 or len(cs) != len(j["rows"]) or cs[0]["name"] != j["rows"][0]["name"] \
            or abs(float(cs[0]["flops_per_s"] or 0) - (j["rows"][0]["flops_per_s"] or 0)) > 1e-6 * (j["rows"][0]["flops_per_s"] or 1):
        probs.append("CSV %s: %d rows vs JSON %d" % (out.why(), len(cs), len(j["rows"])))
    return probs


# ---- checks: outputs ----------------------------------------------------------------------------------

def check_outputs(tmp):
    """CSV (one row per shown node, the JSON's values), pprof (`go tool pprof` reads it: its total is
    the view's), the timeline (a Chrome trace of the shown nodes' executions, imported back)."""
    probs = []
    sess, steps = tf_session(tmp)
    j = prof_json(sess, "scope", "-select", "cpu_micros,float_ops", "-max_depth", "100")
    r = H.run([H.tft_bin(), "prof", sess, "scope", "--csv", "-select", "cpu_micros,float_ops", "-max_depth", "100"])
    rows = list(csv.DictReader(io.StringIO(r.out)))
    nodes = by_name(j)
    if r.rc != 0 or len(rows) != len(nodes) or any(
            not close(float(row["float_ops_total"]), nodes[row["name"]]["total"]["float_ops"]) for row in rows):
        probs.append("csv: %r" % r.out[:300])
    pp = os.path.join(tmp, "p.pb.gz")
    r = H.run([H.tft_bin(), "prof", sess, "scope", "-select", "float_ops", "-max_depth", "100",
               "-output", "pprof:outfile=" + pp])
    if r.rc != 0 or not os.path.exists(pp):
        probs.append("pprof: %s" % r.why())
    elif shutil.which("go") is None:
        probs.append("go not installed (scripts/install-deps.sh: golang-go)")
    else:
        g = H.run(["go", "tool", "pprof", "-top", "-nodecount=1000", pp], timeout=300)
        m = re.search(r"of ([\d.]+)(\w*) total", g.out)
        want = j["root"]["total"]["float_ops"]
        if g.rc != 0 or not m or abs(float(m.group(1)) - want) > 1e-6 * want:
            probs.append("go tool pprof -top: exit %d, %r (want a total of %g)" % (g.rc, (g.out + g.err)[:400], want))
        if "mm" not in g.out or "conv" not in g.out:
            probs.append("pprof -top lists no mm / conv: %r" % g.out[:400])
    tl = os.path.join(tmp, "tl.json")
    r = H.run([H.tft_bin(), "prof", sess, "scope", "-step", "1", "-max_depth", "100",
               "-output", "timeline:outfile=" + tl])
    if r.rc != 0 or "Timeline file is written to %s." % tl not in r.out:
        probs.append("timeline: %s %r" % (r.why(), r.out))
    else:
        with open(tl) as f:
            ev = json.load(f)["traceEvents"]
        ops = [e for e in ev if e.get("ph") == "X" and e["cat"] == "Op"]
        kernels = [e for e in ev if e.get("ph") == "X" and e["cat"] == "Kernel"]
        want_ops = 7 + sum(steps[1][1].values()) + 1  # 7 placeholders/reads, the runs, gpu_mm
        if len(ops) != want_ops or len(kernels) != 1 or kernels[0]["dur"] != steps[1][2]:
            probs.append("timeline: %d ops (want %d), kernels %r" % (len(ops), want_ops, kernels))
        back = os.path.join(tmp, "tl.tft")
        r = H.run([H.tft_bin(), "import", tl, "-o", back])
        if r.rc != 0:
            probs.append("the timeline does not import: %s" % r.why())
    return probs


def check_bad_input(tmp):
    """Bad options, a regex that does not compile, an unknown view, no such file, a session that is
    not one: one line on stderr, exit 2, nothing on stdout."""
    probs = []
    sess, _ = tf_session(tmp)
    junk = write(os.path.join(tmp, "junk.tft"), b"not a session at all")
    cases = [
        [sess, "scope", "-max_depth", "x"], [sess, "scope", "-show_name_regexes", "a(b"],
        [sess, "scope", "-select", "micros,speed"], [sess, "scope", "-order_by", "size"],
        [sess, "scope", "-nosuch", "1"], [sess, "scope", "-output", "pprof"], [sess, "flame"],
        [sess, "scope", "-max_depth"], [sess, "scope", "--json", "--csv"],
        [os.path.join(tmp, "missing.tft"), "scope"], [junk, "scope"], [sess, "scope", "extra"],
        [sess, "scope", "-account_type_regexes", "[z-a]"], [sess, "scope", "-step", "-3"],
        [sess, "op", "-select", "micros,bytes", "-output", "pprof:outfile=" + os.path.join(tmp, "x.gz")],
    ]
    for args in cases:
        r = H.run([H.tft_bin(), "prof"] + args)
        lines = r.err.strip().splitlines()
        if r.crashed or r.rc != 2 or len(lines) != 1 or not lines[0].startswith("tftracer: ") or r.out:
            probs.append("%r: exit %d, stderr %r, stdout %r" % (args[1:], r.rc, r.err[-200:], r.out[:100]))
    if os.path.exists(os.path.join(tmp, "x.gz")):
        probs.append("a refused pprof output left its file")
    return probs


def check_http(tmp):
    """GET /api/prof?view=...&<options>: the --json document; node=ID: that node's executions as slice ids
    (each found by /api/slice); slice=: its node, FLOPs and rate; roofline=1: the CLI's; a bad value: 400."""
    probs = []
    sess, _ = tf_session(tmp)
    want = prof_json(sess, "op", "-select", "float_ops,micros", "-step", "1", "-order_by", "float_ops")
    srv = Server(["serve", sess, "--port", "0", "--quiet"])
    try:
        got = get_json(srv.base, "/api/prof?view=op&select=float_ops,micros&step=1&order_by=float_ops")
        if got != want:
            probs.append("/api/prof %r != the CLI's %r" % (got, want))
        got = get_json(srv.base, "/api/prof?view=scope&select=params&account_type_regexes=VariableV2"
                       "&max_depth=3")
        if got["root"]["total"]["params"] != sum(PARAMS.values()):
            probs.append("/api/prof scope params %r" % got["root"]["total"])
        # node=ID: the executions of the MatMul type in step 1 (mm twice, mmT, gpu_mm and its kernel, counted
        # once: stream:all is derived), each a slice /api/slice finds; slice=: that slice's node and rate
        ops = get_json(srv.base, "/api/prof?view=op&select=float_ops,micros&step=1")
        mmt = [c for c in ops["root"]["children"] if c["name"] == "MatMul"][0]
        ex = get_json(srv.base, "/api/prof?view=op&select=float_ops,micros&step=1&node=%d" % mmt["id"])
        names = []
        for sid in ex["slice_ids"]:
            t, ts, d = sid.split(".")
            names.append(get_json(srv.base, "/api/slice?track=%s&ts=%s&depth=%s" % (t, ts, d))["name"])
        if ex["executions"] != 5 or len(ex["slice_ids"]) != 5 or sorted(names) != ["gpu_mm", "gpu_mm:MatMul", "mm", "mm", "mmT"] \
                or ex["track"] is not None:
            probs.append("/api/prof node=MatMul: %r, slices named %r" % (ex, names))
        else:
            sid = ex["slice_ids"][names.index("mm")]
            sl = get_json(srv.base, "/api/prof?slice=" + sid)
            _, dur, _, _ = tf_step(1)
            want_sl = {"found": True, "record": "mm", "op": "MatMul", "accelerator": False, "float_ops": FLOPS["mm"]}
            if any(sl.get(k) != v for k, v in want_sl.items()) or \
                    not close(sl["flops_per_s"], FLOPS["mm"] / (dur["mm"] * 1e-6)):
                probs.append("/api/prof slice=%s: %r" % (sid, sl))
        rl = get_json(srv.base, "/api/prof?roofline=1&step=1")
        cli_rl = H.cli_json(H.tft_bin(), ["prof", sess, "--roofline", "--json", "-step", "1"])
        if rl != cli_rl:
            probs.append("/api/prof?roofline=1 %r != the CLI's %r" % (rl, cli_rl))
        for q in ("view=flame", "select=speed", "max_depth=x", "show_name_regexes=a(b", "output=file:outfile=x",
                  "step=9", "node=999", "node=x", "slice=1.2"):
            st, _, body = req(srv.base, "/api/prof?" + q)
            if st not in (400, 404) or b"error" not in body:
                probs.append("/api/prof?%s: status %r %r" % (q, st, body[:200]))
    finally:
        srv.stop()
    return probs


# ---- the tfprof> shell through a pseudo-terminal -------------------------------------------------------

class Pty:
    def __init__(self, argv, env):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.execve(argv[0], argv, env)
        self.buf = b""

    def read_until(self, pattern, timeout=60):
        """Read until pattern (bytes regex) appears in what came since the last match."""
        end = time.time() + timeout
        while True:
            m = re.search(pattern, self.buf)
            if m:
                seen, self.buf = self.buf[:m.end()], self.buf[m.end():]
                return seen
            left = end - time.time()
            if left <= 0:
                raise RuntimeError("no %r in %r" % (pattern, self.buf[-500:]))
            r, _, _ = select.select([self.fd], [], [], left)
            if r:
                try:
                    data = os.read(self.fd, 65536)
                except OSError:
                    data = b""
                if not data:
                    raise RuntimeError("the shell ended; no %r in %r" % (pattern, self.buf[-500:]))
                self.buf += data

    def send(self, s):
        os.write(self.fd, s.encode() if isinstance(s, str) else s)

    def wait(self, timeout=30):
        end = time.time() + timeout
        while time.time() < end:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                return os.waitstatus_to_exitcode(status)
            try:
                select.select([self.fd], [], [], 0.2)
                os.read(self.fd, 65536)
            except OSError:
                pass
        os.kill(self.pid, 9)
        return None


def check_shell(tmp):
    """`tftracer prof SESSION` on a terminal: the tfprof> prompt, views with options, `set`, the
    empty line's option listing, completion (TAB), history (up arrow), quit; history saved."""
    probs = []
    sess, _ = tf_session(tmp)
    hist = os.path.join(tmp, "history")
    env = dict(os.environ, TFT_PROF_HISTORY=hist, TERM="xterm")
    sh = Pty([H.tft_bin(), "prof", sess], env)
    try:
        sh.read_until(rb"tfprof> ")
        sh.send("scope -max_depth 2 -select params -account_type_regexes VariableV2\r")
        out = sh.read_until(rb"tfprof> ")
        if b"_TFProfRoot (--/%d params)" % sum(PARAMS.values()) not in out:
            probs.append("scope in the shell: %r" % out[-400:])
        sh.send("set -select float_ops -max_depth 1\r")
        sh.read_until(rb"tfprof> ")
        sh.send("\r")
        out = sh.read_until(rb"tfprof> ")
        if not re.search(rb"-select\s+float_ops", out) or not re.search(rb"-max_depth\s+1\r?\n", out):
            probs.append("the empty line's listing: %r" % out[-600:])
        sh.send("gra\t -max_depth 1\r")  # TAB completes the command
        out = sh.read_until(rb"tfprof> ")
        if b"graph: The nodes in the model graph are organized by their operation input" not in out or \
                b"flops" not in out:
            probs.append("TAB completion to graph: %r" % out[-600:])
        sh.send("\x1b[A\x1b[A\r")  # up twice: the empty line was not kept; "set ..."
        out = sh.read_until(rb"tfprof> ")
        sh.send("op\r")
        out = sh.read_until(rb"tfprof> ")
        if b"MatMul" not in out or b"float_ops (" not in out:
            probs.append("op after set: %r" % out[-400:])
        sh.send("scope -select speed\r")
        out = sh.read_until(rb"tfprof> ")
        if b"tftracer: prof: -select: 'speed'" not in out:
            probs.append("a bad option in the shell: %r" % out[-300:])
        sh.send("quit\r")
        rc = sh.wait()
        if rc != 0:
            probs.append("quit: exit %r" % rc)
    except RuntimeError as e:
        probs.append(str(e))
        sh.wait(1)
    # (libedit writes its history with strvis(3): a space is "\\040")
    if not os.path.exists(hist) or "scope -max_depth 2" not in open(hist, errors="replace").read().replace("\\040", " "):
        probs.append("history not saved to $TFT_PROF_HISTORY")
    # not a terminal: commands from stdin, one per line
    r = run_in([H.tft_bin(), "prof", sess], "set -select params\nscope -account_type_regexes VariableV2\n")
    if r.rc != 0 or "_TFProfRoot (--/%d params)" % sum(PARAMS.values()) not in r.out or "tfprof>" in r.out:
        probs.append("commands from a pipe: %s %r" % (r.why(), r.out[-300:]))
    return probs


def check_xspace_device_steps(tmp):
    """A real TF2 XSpace whose only steps are a GPU plane's "Steps" line: the host ops run in none of
    them, so the session is profiled as one step (not zeros); op types' counts and self times are
    `tftracer stats`'s (names that are also kernels on a device differ: stats adds the kernels)."""
    probs = []
    path = os.path.join(H.data_dir(), "tf-profiler-demo/GPU-multi-worker/34.83.195.179_6003.xplane.pb")
    if not os.path.exists(path):
        return ["missing %s" % path]
    sess = os.path.join(tmp, "x.tft")
    H.cli_import(H.tft_bin_big(), [path], sess)
    j = H.cli_json(H.tft_bin_big(), ["prof", sess, "op", "--json", "-max_depth", "100000", "-select",
                                     "cpu_micros,occurrence"])
    st = {r["name"]: r for r in H.cli_json(H.tft_bin_big(), ["stats", sess, "--json", "--exact"])["rows"]}
    rows = [c for c in j["root"]["children"] if c["self"]["occurrence"]]
    same = [c for c in rows if c["name"] in st and st[c["name"]]["count"] == c["self"]["occurrence"]
            and abs(c["self"]["cpu_micros"] * 1000 - st[c["name"]]["self_ns"]) <= 0.5]
    if len(rows) < 300 or len(same) < 0.95 * len(rows):
        probs.append("%d op types with executions, %d equal to stats (want >= 300, 95%%)" % (len(rows), len(same)))
    txt = H.run([H.tft_bin_big(), "prof", sess, "op"])
    if "held none of them: the whole session is one step" not in txt.out:
        probs.append("the footer does not say the steps held nothing: %r" % txt.out[-300:])
    return probs


def main():
    filters = sys.argv[1:]
    rep = H.Reporter("prof")
    tmp = tempfile.mkdtemp(prefix="tft-prof-")
    tests = [("tf-steps", check_tf_steps), ("tf-views", check_tf_views), ("tf-real-graphs", check_real_graphs),
             ("tf-oplog", check_oplog), ("torch", check_torch), ("kineto-totals", check_kineto_totals),
             ("xspace-device-steps", check_xspace_device_steps),
             ("roofline", check_roofline),
             ("outputs", check_outputs), ("bad-input", check_bad_input), ("http", check_http),
             ("shell", check_shell)]
    try:
        for name, fn in tests:
            if filters and not any(f in name for f in filters):
                continue
            d = tempfile.mkdtemp(prefix=name + "-", dir=tmp)
            try:
                rep.check(name, fn(d))
            except Skip as e:
                rep.skip(name, str(e))
            except (H.CliError, AssertionError, RuntimeError, KeyError, ValueError, OSError) as e:
                rep.fail(name, e)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return rep.finish()


if __name__ == "__main__":
    sys.exit(H.main_guard(main))
