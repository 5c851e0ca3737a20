#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# Round trip on real traces: import -> export chrome -> import again must keep
# the counts, the time span and the per-name statistics (tests/corpus/tft_harness.py).
"""Usage: test_roundtrip.py [SUBSTRING...]   one PASS/FAIL line per file.

A file of FILES missing under $TFT_DATA is a FAIL: this suite never skips."""
import json
import os
import resource
import shutil
import sys
import tempfile
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "corpus"))
import tft_harness as H  # noqa: E402

# Small and medium files covering every producer and phase family.
FILES = (
    # Kineto, old schema (Operator/Runtime/Kernel)
    "kineto/tb_plugin_test/gpu_metrics_input.json",
    "kineto/tb_plugin_samples/resnet50_num_workers_4/worker0.pt.trace.json.gz",
    # Kineto, new schema (cpu_op/cuda_runtime/kernel/ac2g), baseTimeNanoseconds
    "kineto/docs_traces/after_fix_trace.json",
    "hta/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz",
    "hta/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz",
    "hta/trace_filter/sampled_rank-0.json.gz",
    "hta/with_gpu_user_annotation/step_based_trace_2543932.json.gz",
    "tracelens/kineto_h100/gaunernst_bert-small-uncased__1016001.json.gz",
    "hta/mtia_inference_trace/mtia_inference_rank_0.json.gz",
    # tf.timeline CPU + GPU (s/t flows)
    "ikhlestov-tf-profiling/CPU/timeline_02_step_0.json",
    "ikhlestov-tf-profiling/GPU/timeline_03_merged_5_runs.json",
    # catapult: flows, async (b/e, S/T/F), counters, objects, unclosed B
    "catapult/flow.json",
    "catapult/flow_simple.json",
    "catapult/async_begin_end.json",
    "catapult/nestable_async.json",
    "catapult/instance_counters.json",
    "catapult/simple_trace.json",
    "catapult/x_event_trace.json",
    "catapult/main_thread_has_unclosed_slices.json",
    "catapult/webview.json.gz",
    "catapult/fuchsia_trace.json.gz",
)


# Written by the test: counters whose names hold dots or that have ids (a counter "gpu.mem"
# with a value and a counter "gpu" with a key "mem" are two counters, and stay two).
GENERATED = {
    "generated/counter_names.json": [
        {"ph": "C", "name": "gpu.mem", "pid": 1, "ts": 1, "args": {"value": 5}},
        {"ph": "C", "name": "gpu", "pid": 1, "ts": 2, "args": {"mem": 7}},
        {"ph": "C", "name": "cpu", "pid": 1, "ts": 3, "args": {"cpu": 1, "x.y": 2}},
        {"ph": "C", "name": "ctr", "id": 1, "pid": 1, "ts": 4, "args": {"a": 1}},
        {"ph": "C", "name": "ctr", "id": "b", "pid": 1, "ts": 4, "args": {"a": 100}},
        {"ph": "X", "name": "s", "pid": 1, "tid": 1, "ts": 0, "dur": 10},
    ],
}


STEPSTATS = '''step_stats {
  dev_stats { device: "/job:worker/replica:0/task:%(task)d/device:CPU:0"
    node_stats { node_name: "a" all_start_micros: %(t0)d all_end_rel_micros: 100 timeline_label: "a = Add()" }
    node_stats { node_name: "b" all_start_micros: %(t1)d all_end_rel_micros: 30 timeline_label: "b = Mul()" } }
  dev_stats { device: "/job:ps/replica:0/task:0/device:CPU:0"
    node_stats { node_name: "c" all_start_micros: %(t2)d all_end_rel_micros: 100 timeline_label: "c = Recv()" } }
}
'''


# A _Recv waits for its _Send (it starts first): the flow must still survive a round trip,
# and the same worker's next step (a later file) continues its process and tracks.
SENDRECV = '''step_stats {
  dev_stats { device: "/job:worker/replica:0/task:0/device:CPU:0"
    node_stats { node_name: "b" all_start_micros: %(t0)d all_end_rel_micros: 10 timeline_label: "b = MatMul(a, a)" }
    node_stats { node_name: "b/_1" all_start_micros: %(t12)d all_end_rel_micros: 3
      timeline_label: "b/_1 = _Send(b @/job:worker/replica:0/task:1/device:CPU:0)" } }
  dev_stats { device: "/job:worker/replica:0/task:1/device:CPU:0"
    node_stats { node_name: "b/_2" all_start_micros: %(t11)d all_end_rel_micros: 10
      timeline_label: "b/_2 = _Recv(b @/job:worker/replica:0/task:0/device:CPU:0)" } }
}
'''


def check_sendrecv(tmp):
    probs = []
    ins = []
    for k, t0 in enumerate((1600000000000000, 1600000000010000)):
        p = os.path.join(tmp, "step%d.pbtxt" % k)
        with open(p, "w") as f:
            f.write(SENDRECV % {"t0": t0, "t11": t0 + 11, "t12": t0 + 12})
        ins.append(p)
    both = os.path.join(tmp, "both.tft")
    H.cli_import(H.tft_bin(), ins, both)
    info = H.cli_info(H.tft_bin(), both)
    if (info["flows"], info["unmatched_flows"], info["processes"], info["tracks"]) != (2, 0, 2, 3):
        probs.append("two steps of two workers: %d flows (%d unmatched), %d processes, %d tracks; "
                     "want 2 (0), 2, 3" % (info["flows"], info["unmatched_flows"], info["processes"],
                                          info["tracks"]))
    # the later step first on the command line (a shell glob's step_10 before step_2):
    # imported in time order all the same, each worker's steps on its one process
    rev = os.path.join(tmp, "rev.tft")
    H.cli_import(H.tft_bin(), ins[::-1], rev)
    info = H.cli_info(H.tft_bin(), rev)
    if (info["flows"], info["processes"], info["tracks"]) != (2, 2, 3):
        probs.append("the later step's file first: %d flows, %d processes, %d tracks; want 2, 2, 3"
                     % (info["flows"], info["processes"], info["tracks"]))
    # ... also with the graph joined (`import step_10 step_2 graph.pbtxt`): a GraphDef
    # has no events and does not stop the ordering
    graph = os.path.join(tmp, "graph.pbtxt")
    with open(graph, "w") as f:
        f.write('node { name: "b" op: "MatMul" input: "a" input: "a" }\n')
    revg = os.path.join(tmp, "revg.tft")
    H.cli_import(H.tft_bin(), ins[::-1] + [graph], revg)
    info = H.cli_info(H.tft_bin(), revg)
    if (info["flows"], info["processes"], info["tracks"], info.get("graph_nodes")) != (2, 2, 3, 1):
        probs.append("the later step's file first, then a GraphDef: %d flows, %d processes, "
                     "%d tracks, %s graph nodes; want 2, 2, 3, 1" % (
                         info["flows"], info["processes"], info["tracks"], info.get("graph_nodes")))
    probs += H.roundtrip(H.tft_bin(), ins[0], tmp, extra_keys=("tracks",))
    # One worker's own RunMetadata: its _Send's partner is in the other worker's file.
    lone = os.path.join(tmp, "worker0.pbtxt")
    with open(lone, "w") as f:
        f.write(SENDRECV.split("  dev_stats { device: \"/job:worker/replica:0/task:1")[0] % {
            "t0": 1600000000000000, "t11": 1600000000000011, "t12": 1600000000000012} + "}\n")
    one = os.path.join(tmp, "lone.tft")
    H.cli_import(H.tft_bin(), [lone], one)
    info = H.cli_info(H.tft_bin(), one)
    if (info["flows"], info["unmatched_flows"]) != (1, 1):
        probs.append("a _Send without its _Recv: %d flows, %d unmatched; want 1, 1" % (
            info["flows"], info["unmatched_flows"]))
    # ... and with the other worker's own file: linked across the two files.
    peer = os.path.join(tmp, "worker1.pbtxt")
    with open(peer, "w") as f:
        w1 = "  dev_stats { device: \"/job:worker/replica:0/task:1"
        f.write("step_stats {\n" + w1 + SENDRECV.split(w1)[1] % {
            "t0": 1600000000000000, "t11": 1600000000000011, "t12": 1600000000000012})
    pair = os.path.join(tmp, "pair.tft")
    H.cli_import(H.tft_bin(), [lone, peer], pair)
    info = H.cli_info(H.tft_bin(), pair)
    if (info["flows"], info["unmatched_flows"], info["processes"]) != (1, 0, 2):
        probs.append("a worker's file per worker: %d flows (%d unmatched), %d processes; want 1 (0), 2"
                     % (info["flows"], info["unmatched_flows"], info["processes"]))
    # the same two files through pipes (`import <(zcat a) <(zcat b)`): read once, as given
    fifos = []
    for k, src in enumerate((lone, peer)):
        fifo = os.path.join(tmp, "pipe%d" % k)
        os.mkfifo(fifo)
        fifos.append(fifo)
        threading.Thread(target=lambda f=fifo, s=src: open(f, "wb").write(open(s, "rb").read()),
                         daemon=True).start()
    piped = os.path.join(tmp, "piped.tft")
    try:
        H.cli_import(H.tft_bin(), fifos, piped, timeout=60)
        info = H.cli_info(H.tft_bin(), piped)
        if (info["flows"], info["unmatched_flows"]) != (1, 0):
            probs.append("the workers' files through pipes: %d flows (%d unmatched); want 1 (0)"
                         % (info["flows"], info["unmatched_flows"]))
    except H.CliError as e:
        probs.append("the workers' files through pipes: %s" % e)
    return probs


def cpu_children():
    """CPU seconds of the finished child processes (timings immune to other load)."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def check_flows_scale(tmp):
    """One worker sends a tensor N times in a loop, the other receives it N times (each
    in its own file): linking them across the files takes time linear in N, not
    quadratic: 8x the pairs may take at most 20x the time (64x if quadratic)."""
    probs, times = [], {}
    big = H.tft_bin_big()  # (the normal build: ASan's fixed cost per import would shrink the ratio)
    w0, w1 = "/job:worker/replica:0/task:0/device:CPU:0", "/job:worker/replica:0/task:1/device:CPU:0"
    t0 = 1500000000000000
    for n in (5000, 40000):
        ins = []
        for k, (dev, fmt) in enumerate(((w0, 'node_stats { node_name: "x/_1" all_start_micros: %d '
                                              'all_end_rel_micros: 1 timeline_label: "x/_1 = _Send(e @' + w1 + '" }\n'),
                                         (w1, 'node_stats { node_name: "x/_2" all_start_micros: %d '
                                              'all_end_rel_micros: 5 timeline_label: "x/_2 = _Recv(e @' + w0 + '" }\n'))):
            p = os.path.join(tmp, "loop%d_w%d.pbtxt" % (n, k))
            with open(p, "w") as f:
                f.write('step_stats { dev_stats { device: "%s"\n' % dev)
                for i in range(n):
                    f.write(fmt % (t0 + 10 * i + (10 * n if k else 0)))
                f.write("} }\n")
            ins.append(p)
        out = os.path.join(tmp, "loop%d.tft" % n)
        start = cpu_children()
        H.cli_import(big, ins, out)
        times[n] = cpu_children() - start
        info = H.cli_info(big, out)
        if (info["flows"], info["unmatched_flows"]) != (n, 0):
            probs.append("%d sends and receives in two files: %d flows (%d unmatched); want %d (0)"
                         % (n, info["flows"], info["unmatched_flows"], n))
    ratio = times[40000] / max(times[5000], 1e-3)
    print("# flows-scale: 5000 pairs %.2f s, 40000 pairs %.2f s of CPU (x%.1f)" % (times[5000], times[40000], ratio))
    if ratio >= 20:
        probs.append("40000 pairs took %.1fx the time of 5000: superlinear" % ratio)
    return probs


def check_ranks(tmp, root):
    """Two Kineto ranks in one session: each rank's processes (its Global process of
    global instants included) carry the rank, and a round trip keeps them apart."""
    src = os.path.join(root, "kineto/docs_traces/after_fix_trace.json")
    if not os.path.exists(src):
        return ["input missing: %s (TFT_DATA)" % src]
    doc = json.load(open(src))
    ins = []
    for rank in (0, 1):
        doc["distributedInfo"] = {"rank": rank, "world_size": 2, "backend": "nccl"}
        p = os.path.join(tmp, "rank%d.json" % rank)
        with open(p, "w") as f:
            json.dump(doc, f)
        ins.append(p)
    a, aj, b = os.path.join(tmp, "a.tft"), os.path.join(tmp, "a.json"), os.path.join(tmp, "b.tft")
    H.cli_import(H.tft_bin(), ins, a)
    H.cli_export(H.tft_bin(), a, aj)
    H.cli_import(H.tft_bin(), [aj], b)
    ia, ib = H.cli_info(H.tft_bin(), a), H.cli_info(H.tft_bin(), b)
    probs = []
    glob = [p for p in ia["process_list"] if p["name"] == "Global"]
    if sorted(p["rank"] for p in glob) != [0, 1]:
        probs.append("Global processes' ranks %r, want [0, 1]" % [p["rank"] for p in glob])
    key = lambda info: sorted((p["name"], p["rank"], p["host"]) for p in info["process_list"])  # noqa: E731
    if key(ia) != key(ib):
        probs.append("processes after a round trip: %r, want %r" % (key(ib), key(ia)))
    probs += H.diff_counts(ib, ia, H.COUNT_KEYS + ("tracks", "processes"))
    return probs


def check_step_events(tmp):
    """Steps no slice stands for are drawn as tftracer.step X events: two workers' RunMetadata
    steps (each spanning worker and ps: no process of their own) overlap in time, so they take
    two lanes of a Steps process and never overlap on one thread; an import takes the events as
    steps again, also without the export's metadata."""
    probs = []
    ins = []
    for task, t0 in ((0, 1000000), (1, 1000050)):
        p = os.path.join(tmp, "w%d.pbtxt" % task)
        with open(p, "w") as f:
            f.write(STEPSTATS % {"task": task, "t0": t0, "t1": t0 + 10, "t2": t0 + 20})
        ins.append(p)
    sess, out = os.path.join(tmp, "w.tft"), os.path.join(tmp, "w.json")
    H.cli_import(H.tft_bin(), ins, sess)
    r = H.run([H.tft_bin(), "export", sess, "-o", out, "-q"], timeout=60)
    if r.rc:
        return ["export: %s" % r.err]
    doc = json.load(open(out))
    steps = [e for e in doc["traceEvents"] if e.get("cat") == "tftracer.step"]
    spans = sorted((e["pid"], e["tid"], float(e["ts"]), float(e["ts"]) + float(e["dur"])) for e in steps)
    if len(steps) != 2 or any(a[:2] == b[:2] and b[2] < a[3] for a, b in zip(spans, spans[1:])):
        probs.append("step events %r" % spans)
    named = {e["pid"] for e in doc["traceEvents"] if e.get("ph") == "M" and e.get("name") == "process_name"
             and e["args"].get("name") == "Steps"}
    if {e["pid"] for e in steps} != named:
        probs.append("steps without a process not in a Steps process: %r %r" % (steps, named))
    doc.pop("metadata")
    bare = os.path.join(tmp, "bare.json")
    with open(bare, "w") as f:
        json.dump(doc, f)
    back = os.path.join(tmp, "back.tft")
    H.cli_import(H.tft_bin(), [bare], back)
    r = H.run([H.tft_bin(), "info", "--json", back], timeout=60)
    got = json.loads(r.out)
    if got["steps"] != 2 or got["slices"] != 6:
        probs.append("re-import without metadata: %d steps, %d slices" % (got["steps"], got["slices"]))
    return probs


def main():
    filters = sys.argv[1:]
    root = H.data_dir()
    rep = H.Reporter("roundtrip")
    for rel, events in GENERATED.items():
        if filters and not any(s in rel for s in filters):
            continue
        tmp = tempfile.mkdtemp(prefix="tft-rt-")
        try:
            path = os.path.join(tmp, os.path.basename(rel))
            with open(path, "w") as f:
                json.dump({"traceEvents": events}, f)
            rep.check(rel, H.roundtrip(H.bin_for(path), path, tmp, extra_keys=("tracks",)))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    # checks on inputs written by the test, each in a directory of its own
    for name, fn in (("sendrecv", check_sendrecv), ("flows-scale", check_flows_scale),
                     ("ranks", lambda tmp: check_ranks(tmp, root)),
                     ("step-events", check_step_events)):
        if filters and not any(s in name for s in filters):
            continue
        tmp = tempfile.mkdtemp(prefix="tft-rt-")
        try:
            rep.check(name, fn(tmp))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    for rel in FILES:
        if filters and not any(s in rel for s in filters):
            continue
        path = os.path.join(root, rel)
        if not os.path.exists(path):  # a missing input is a failure, never a skip
            rep.fail(rel, "input missing: %s (TFT_DATA)" % path)
            continue
        tmp = tempfile.mkdtemp(prefix="tft-rt-")
        try:
            rep.check(rel, H.roundtrip(H.bin_for(path), path, tmp))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return rep.finish()


if __name__ == "__main__":
    sys.exit(H.main_guard(main))
