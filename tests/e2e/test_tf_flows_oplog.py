#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# TensorFlow inputs end to end through the CLI and the HTTP API (docs/formats-tensorflow.md):
# a RunMetadata's dataflow and launch flows (the session's own, the same edges as the
# tf.timeline export's arrows, listed in a slice's details), and a tfprof OpLogProto
# (tfprof_log): alone a session of format "oplog", with the graph and RunMetadata it
# annotates its types, float ops and code in the slice's graph node; bad ones refused
# with exit 2 and one line naming the file and the byte.
"""Usage: test_tf_flows_oplog.py [SUBSTRING...]   one PASS/FAIL/SKIP line per test.

Env: TFT_BIN (the CLI, default build/tftracer), TFT_DATA (the trace corpus).
The protobuf inputs are built here from the .proto field numbers (step_stats.proto,
config.proto, tfprof_log.proto), independently of tftracer's readers."""
import json
import os
import re
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "corpus"))
import tft_harness as H  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_http_api import Server, get_json, search  # noqa: E402

GRAPH = "tensorboard/graphdef/graphdef_mnist.pbtxt"
T0 = 1500000000000000
CPU = "/job:localhost/replica:0/task:0/device:CPU:0"
GPU = "/job:localhost/replica:0/task:0/device:GPU:0"
BYTE_RE = re.compile(r"byte (\d+)")


# ---- protobuf wire encoding ---------------------------------------------------------

def varint(v):
    out = bytearray()
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


def output():
    """NodeOutput {slot 1, tensor_description 3 {dtype 1, shape 2, allocation_description 4}}"""
    td = f_int(1, 1) + f_bytes(2, f_bytes(2, f_int(1, 4))) + f_bytes(4, f_int(1, 16) + f_bytes(3, "cpu"))
    return f_bytes(7, f_int(1, 0) + f_bytes(3, td))


def node(name, start, dur, label, outputs=0):
    n = f_bytes(1, name) + f_int(2, start) + f_int(3, 0) + f_int(4, dur) + f_int(5, dur)
    n += b"".join(output() for _ in range(outputs))
    return f_bytes(2, n + f_bytes(8, label))


def device(name, nodes):
    return f_bytes(1, f_bytes(1, name) + b"".join(nodes))


def run_metadata():
    """The MNIST graph's first layer run: the weights on the CPU, MatMul and its add on
    the GPU (its kernel on stream:all), a Relu on the CPU reading the add."""
    cpu = device(CPU, [
        node("layer1/weights/Variable/read", T0 + 100, 5, "layer1/weights/Variable/read = Identity(layer1/weights/Variable)", 1),
        node("input/x-input", T0 + 102, 5, "input/x-input = Placeholder()", 1),
        node("layer1/activation", T0 + 160, 5, "layer1/activation = Relu(layer1/Wx_plus_b/add)", 1),
    ])
    gpu = device(GPU, [
        node("layer1/Wx_plus_b/MatMul", T0 + 110, 20, "layer1/Wx_plus_b/MatMul = MatMul(input/x-input, layer1/weights/Variable/read)", 1),
        node("layer1/Wx_plus_b/add", T0 + 140, 10, "layer1/Wx_plus_b/add = Add(layer1/Wx_plus_b/MatMul, layer1/biases/Variable/read)", 1),
    ])
    kernels = device("/device:GPU:0/stream:all", [
        node("layer1/Wx_plus_b/MatMul:MatMul", T0 + 115, 12, "sgemm regs:64 shm:0 grid:1,1,1 block:128,1,1@@layer1/Wx_plus_b/MatMul:MatMul"),
    ])
    return f_bytes(1, cpu + gpu + kernels)


def tfprof_log():
    """write_op_log's OpLogProto: trainable variables, MatMul's float ops and code."""
    def entry(name, float_ops=0, types=(), code=b""):
        e = f_bytes(1, name) + (f_int(2, float_ops) if float_ops else b"")
        e += b"".join(f_bytes(3, t) for t in types)
        return f_bytes(1, e + (f_bytes(4, code) if code else b""))

    def trace(file_id, lineno, function_id):
        return f_bytes(1, f_int(2, lineno) + f_int(5, 1) + f_int(6, file_id) + f_int(7, function_id) + f_int(8, 5))

    log = entry("layer1/weights/Variable", types=["_trainable_variables"])
    log += entry("layer1/biases/Variable", types=["_trainable_variables"])
    log += entry("layer2/weights/Variable", types=["_trainable_variables"])
    log += entry("layer1/Wx_plus_b/MatMul", 392000, code=trace(1, 42, 2) + trace(3, 1876, 4))
    for k, v in ((0, "none"), (1, "mnist_with_summaries.py"), (2, "nn_layer"),
                 (3, "tensorflow/python/ops/math_ops.py"), (4, "matmul")):
        log += f_bytes(2, f_int(1, k) + f_bytes(2, v))
    return log


# ---- checks ----------------------------------------------------------------------------

def write(tmp, name, data):
    p = os.path.join(tmp, name)
    with open(p, "wb") as f:
        f.write(data)
    return p


def chrome_events(path):
    with open(path, "rb") as f:
        j = json.load(f)
    return j["traceEvents"] if isinstance(j, dict) else j


def check_dataflow(tmp):
    """The session's DataFlow flows are the edges of the tf.timeline export's arrows, and
    the consumer's slice lists them (GET /api/slice); MatMul's kernel has its launch."""
    probs = []
    binary = H.tft_bin()
    rm = write(tmp, "run_meta", run_metadata())
    sess = os.path.join(tmp, "flows.tft")
    H.cli_import(binary, [rm], sess)
    chrome, tl = os.path.join(tmp, "flows.json"), os.path.join(tmp, "tl.json")
    for args, out in ((["-f", "chrome"], chrome), (["-f", "chrome", "--tf-timeline", "--show-dataflow"], tl)):
        r = H.run([binary, "export", sess, "-o", out] + args)
        if r.rc != 0:
            return ["export %s: %s" % (args, r.why())]
    # the export's arrows: (tensor, producer end us, consumer start us)
    ev = chrome_events(tl)
    s = {e["id"]: e for e in ev if e.get("ph") == "s"}
    want = sorted((e["name"], s[e["id"]]["ts"] - T0, e["ts"] - T0) for e in ev if e.get("ph") == "t")
    # the session's (chrome export of the session): s at the producer's start, f at the consumer's
    ev = chrome_events(chrome)
    xs = [e for e in ev if e.get("ph") == "X"]
    starts = {e["id"]: e for e in ev if e.get("ph") == "s" and e.get("cat") == "DataFlow"}
    got = []
    for f in (e for e in ev if e.get("ph") == "f" and e.get("cat") == "DataFlow"):
        src = starts[f["id"]]
        prod = [x for x in xs if x["pid"] == src["pid"] and x["tid"] == src["tid"] and x["ts"] == src["ts"]]
        if len(prod) != 1:
            probs.append("flow %r: %d producer slices at its start" % (f["name"], len(prod)))
            continue
        got.append((f["name"], round(prod[0]["ts"] + prod[0]["dur"]) - T0, round(f["ts"]) - T0))
    got.sort()
    if not want:
        probs.append("the tf.timeline export drew no arrow")
    if got != want:
        probs.append("session flows %r != the tf.timeline arrows %r" % (got, want))
    launches = [e for e in ev if e.get("ph") == "s" and e.get("cat") == "launch"]
    if len(launches) != 1 or launches[0]["name"] != "layer1/Wx_plus_b/MatMul":
        probs.append("launch flows: %r" % launches)
    # the UI's slice details: MatMul's incoming arrows, and its kernel
    srv = Server(["serve", sess, "--port", "0", "--quiet"])
    try:
        hits = search(srv, q="^layer1/Wx_plus_b/MatMul$", regex=1)["results"]
        if len(hits) != 1:
            probs.append("search MatMul: %r" % hits)
        else:
            h = hits[0]
            j = get_json(srv.base, "/api/slice?track=%d&ts=%d&deepest=1" % (h["track"], h["ts"]))
            ins = sorted(f["name"] for f in j["flows_in"] if f["cat"] == "DataFlow")
            outs = sorted((f["cat"], f["name"]) for f in j["flows_out"])
            if ins != ["input/x-input", "layer1/weights/Variable/read"]:
                probs.append("MatMul's incoming dataflow %r" % ins)
            if outs != [("launch", "layer1/Wx_plus_b/MatMul")]:
                probs.append("MatMul's outgoing flows %r (its add is on its lane: no arrow)" % outs)
    finally:
        srv.stop()
    return probs


def variables_log():
    """What write_op_log writes for four trainable variables alone: name + types entries,
    which read as a NodeDef's name + input (the issue: taken for a 4-node GraphDef)."""
    return b"".join(f_bytes(1, f_bytes(1, n) + f_bytes(3, "_trainable_variables"))
                    for n in ("layer1/weights/Variable", "layer1/biases/Variable",
                              "layer2/weights/Variable", "layer2/biases/Variable"))


def check_oplog_alone(tmp):
    """A tfprof_log alone: format oplog, its entries as graph rows (not a 4-node GraphDef)."""
    probs = []
    for data, rows in ((variables_log(), 4), (tfprof_log(), 4)):
        log = write(tmp, "tfprof_log", data)
        sess = os.path.join(tmp, "alone.tft")
        H.cli_import(H.tft_bin(), [log], sess)
        info = H.cli_info(H.tft_bin(), sess)
        if info.get("format") != "oplog" or info.get("graph_nodes") != rows:
            probs.append("info --json format %r, graph_nodes %r; want 'oplog', %d" %
                         (info.get("format"), info.get("graph_nodes"), rows))
    return probs


def check_oplog_with(tmp, graph):
    """`import run_meta graph.pbtxt tfprof_log`: the MatMul slice's graph node has its op from
    the graph, its float ops and code from the log; a variable's node its type."""
    probs = []
    rm = write(tmp, "run_meta", run_metadata())
    log = write(tmp, "tfprof_log", tfprof_log())
    sess = os.path.join(tmp, "all.tft")
    H.cli_import(H.tft_bin(), [rm, graph, log], sess)
    info = H.cli_info(H.tft_bin(), sess)
    if info.get("format") != "runmeta+graphdef+oplog":
        probs.append("format %r" % info.get("format"))
    srv = Server(["serve", sess, "--port", "0", "--quiet"])
    try:
        hits = search(srv, q="^layer1/Wx_plus_b/MatMul$", regex=1)["results"]
        if len(hits) != 1:
            return probs + ["search MatMul: %r" % hits]
        h = hits[0]
        j = get_json(srv.base, "/api/slice?track=%d&ts=%d&deepest=1" % (h["track"], h["ts"]))
        g = j.get("graph") or []
        if len(g) != 1 or g[0].get("kind") != "graphdef" or g[0].get("op") != "MatMul" \
                or g[0].get("float_ops") != 392000 \
                or g[0].get("code") != ["mnist_with_summaries.py:42:nn_layer",
                                        "tensorflow/python/ops/math_ops.py:1876:matmul"] \
                or g[0].get("op_types") is not None:
            probs.append("MatMul's graph node: %r" % g)
    finally:
        srv.stop()
    rows = H.cli_json(H.tft_bin(), ["info", sess, "--json"])
    if rows.get("format") is None:
        probs.append("info lost its format")
    return probs


def check_bad(tmp):
    """Bad tfprof inputs: exit 2, one line naming the file, the byte where it went wrong."""
    probs = []
    good = tfprof_log()
    bad_id = good.replace(f_int(6, 3), f_int(6, 77))  # a trace naming string id 77
    at = bad_id.index(f_int(6, 77)) + 1  # its value
    text = b'log_entries {\n  name: "a"\n  float_ops: lots\n}\n'
    profile = f_bytes(1, f_int(1, 7) + f_bytes(2, f_bytes(1, "conv") + f_bytes(9, "Conv2D")))
    cases = [
        ("cut", "tfprof_log", good[:good.index(b"layer2") + 3], None),  # inside the third entry
        ("string-id", "tfprof_log", bad_id, (at, at)),
        ("text-value", "op_log.pbtxt", text, (text.index(b"lots"), text.index(b"lots"))),
        ("profile-proto", "profile_100", profile, (0, 0)),
    ]
    for name, fname, data, where in cases:
        d = tempfile.mkdtemp(prefix="bad-", dir=tmp)
        path = write(d, fname, data)
        out = os.path.join(d, "out.tft")
        r = H.run([H.tft_bin(), "import", path, "-o", out])
        lines = r.err.strip().splitlines()
        m = BYTE_RE.search(lines[0]) if len(lines) == 1 else None
        lo, hi = where if where else (0, len(data))
        if r.crashed or r.rc != 2 or len(lines) != 1 or path not in lines[0] or not m \
                or not lo <= int(m.group(1)) <= hi or os.path.exists(out):
            probs.append("%s: exit %s, stderr %r (want exit 2, one line naming %s, byte in [%d, %d])" %
                         (name, r.rc, r.err[-300:], fname, lo, hi))
    return probs


def main():
    filters = sys.argv[1:]
    rep = H.Reporter("tf_flows_oplog")
    graph = os.path.join(H.data_dir(), GRAPH)
    tmp = tempfile.mkdtemp(prefix="tft-tfflows-")
    tests = [("dataflow", lambda: check_dataflow(tmp)),
             ("oplog-alone", lambda: check_oplog_alone(tmp)),
             ("oplog-with-graph", lambda: check_oplog_with(tmp, graph) if os.path.exists(graph)
              else ["missing %s" % graph]),
             ("oplog-bad", lambda: check_bad(tmp))]
    try:
        for name, fn in tests:
            if filters and not any(f in name for f in filters):
                continue
            try:
                rep.check(name, fn())
            except (H.CliError, AssertionError, RuntimeError, KeyError, ValueError) as e:
                rep.fail(name, e)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return rep.finish()


if __name__ == "__main__":
    sys.exit(H.main_guard(main))
