#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# CTF import (src/collect/ctf/, docs/formats-lttng.md): real LTTng-UST
# and OTF2->CTF traces, a trace LTTng writes here from a program instrumented
# with the LTTng-based TensorFlow profiler's providers, a kernel-domain trace
# this script writes in CTF, every path form, and broken traces.
"""Usage: test_ctf.py [NAME-SUBSTRING...]

Every import is checked against tests/corpus/count_ctf.py, which computes
what the session must hold from `babeltrace2`'s own text output: the counts,
the multiset of every slice (name, start, duration, ns exact) and instant
(name, time), and the tracks' kinds and counts; the real traces and the
LTTng one also make the round trip through the Chrome export. Broken traces must fail with
exit 2, one stderr line naming the file and what was expected, and no output.
"""
import collections
import decimal
import glob
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "corpus"))
import count_ctf as C  # noqa: E402
import tft_harness as H  # noqa: E402

R = H.Reporter("ctf")
BIN = H.tft_bin()
DATA = H.data_dir()
TC = os.path.join(DATA, "tracecompass")
ONLY = sys.argv[1:]


def want(name):
    return not ONLY or any(s in name for s in ONLY)


# ---- a session, read back ---------------------------------------------------------


def ns(d):
    """Chrome JSON microseconds (exact decimals) -> int ns."""
    return int(decimal.Decimal(d) * 1000)


class Session:
    def __init__(self, path, tmp):
        self.info = H.cli_info(BIN, path)
        js = os.path.join(tmp, "export.json")
        H.cli_export(BIN, path, js)
        with open(js) as fp:
            doc = json.load(fp, parse_float=decimal.Decimal)
        os.unlink(js)
        self.events = [e for e in doc["traceEvents"] if e.get("ph") != "M"]
        # X slices; B without E: an unclosed slice (its end: the trace's); b/e: async slices
        self.slices = collections.Counter()
        opened, ended = {}, []
        for e in self.events:
            if e["ph"] == "X":
                self.slices[(e["name"], ns(e["ts"]), ns(e["dur"]))] += 1
            elif e["ph"] == "B":
                self.slices[(e["name"], ns(e["ts"]), "unclosed")] += 1
            elif e["ph"] == "b":
                opened[(e["pid"], e.get("id"), e["name"])] = e
            elif e["ph"] == "e":
                b = opened.pop((e["pid"], e.get("id"), e["name"]))
                b = dict(b, ph="X", dur=decimal.Decimal(e["ts"]) - decimal.Decimal(b["ts"]))
                ended.append(b)
                self.slices[(b["name"], ns(b["ts"]), ns(b["dur"]))] += 1
        self.events += ended
        for b in opened.values():
            self.slices[(b["name"], ns(b["ts"]), "unclosed")] += 1
        self.instants = collections.Counter((e["name"], ns(e["ts"]))
                                            for e in self.events if e["ph"] in "iI")
        self.tracks = self.info["track_list"]

    def by_name(self, name, ph="X"):
        return [e for e in self.events if e["ph"] == ph and e["name"] == name]


def import_ok(inputs, out):
    r = H.run([BIN, "import"] + list(inputs) + ["-o", out], timeout=600)
    if r.rc != 0 or r.crashed:
        raise H.CliError("import " + r.why())
    return r


def diff_multiset(what, got, exp, probs):
    if got != exp:
        extra = list((got - exp).items())[:3]
        missing = list((exp - got).items())[:3]
        probs.append("%s differ (%d vs %d): only imported %s; only expected %s" % (
            what, sum(got.values()), sum(exp.values()), extra, missing))


def roundtrip(path, tmp):
    """import -> Chrome export -> import again: the same counts, tracks and stats."""
    sub = os.path.join(tmp, "roundtrip")
    os.makedirs(sub)
    probs = ["round trip: " + p for p in H.roundtrip(BIN, path, sub, extra_keys=("tracks",))]
    shutil.rmtree(sub)
    return probs


def compare(path, tmp, imported=None):
    """Import path (or use the session `imported`) and compare with count_ctf. (Session, Result, problems)"""
    exp = C.expect(path)
    out = imported or os.path.join(tmp, "s.tft")
    if not imported:
        import_ok([path], out)
    s = Session(out, tmp)
    probs = H.info_consistency(s.info)
    c = exp.counts()
    for k in ("slices", "instants", "unclosed_slices", "steps"):
        if s.info.get(k) != c[k]:
            probs.append("%s: imported %s, babeltrace2 says %s" % (k, s.info.get(k), c[k]))
    diff_multiset("slices (name, ts, dur)", s.slices,
                  collections.Counter((x[1], x[2], "unclosed" if x[4] else x[3]) for x in exp.slices),
                  probs)
    diff_multiset("instants (name, ts)", s.instants,
                  collections.Counter((x[1], x[2]) for x in exp.instants), probs)
    # tracks: kind and counts (and the tid of thread tracks)
    per = collections.defaultdict(lambda: [0, 0])
    for x in exp.slices:
        per[x[0]][0] += 1
    for x in exp.instants:
        per[x[0]][1] += 1
    want_tracks = collections.Counter()
    for key, (ns_, ni) in per.items():
        kind = exp.tracks.get(key, "thread")
        tid = key[2] if kind == "thread" and len(key) == 3 and key[1] == "thread" else None
        want_tracks[(kind, tid, ns_, ni)] += 1
    got_tracks = collections.Counter()
    for t in s.tracks:
        if t["slices"] or t["instants"]:
            tid = t["tid"] if t["kind"] == "thread" and any(
                k[1] == "thread" for k in per if len(k) == 3) else None
            got_tracks[(t["kind"], tid, t["slices"], t["instants"])] += 1
    diff_multiset("tracks (kind, tid, slices, instants)", got_tracks, want_tracks, probs)
    return s, exp, probs


def case(name, fn):
    if not want(name):
        return
    tmp = tempfile.mkdtemp(prefix="tft-ctf-")
    try:
        res = fn(tmp)
        if isinstance(res, tuple) and res and res[0] == "skip":
            R.skip(name, res[1])
        else:
            R.check(name, res)
    except (H.CliError, C.ParseError, OSError, subprocess.SubprocessError, KeyError,
            ValueError) as e:
        R.fail(name, "%s: %s" % (type(e).__name__, e))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def copy_trace(src, dst):
    shutil.copytree(src, dst)
    for root, dirs, files in os.walk(dst):
        os.chmod(root, 0o755)
        for f in files:
            os.chmod(os.path.join(root, f), 0o644)
    return dst


# ---- the real traces ----------------------------------------------------------------------


def bt_events(path, name):
    return [e for e in C.read_trace(path) if e["name"] == name]


def t_context_switches(tmp):
    d = os.path.join(TC, "context-switches-ust")
    if not os.path.isdir(d):
        return ("skip", "missing data: %s" % d)
    s, exp, probs = compare(d, tmp)
    # LTTng-UST without vpid: a process per procname, a thread track per vtid
    procs = sorted(p["name"] for p in s.info["process_list"])
    if procs != ["lemon_server", "lock_test"]:
        probs.append("processes %s, want lemon_server and lock_test" % procs)
    if s.info["unclosed_slices"] != 3:
        probs.append("unclosed_slices %s, want 3 (1948 func_entry, 1945 func_exit)" %
                     s.info["unclosed_slices"])
    # fields as args: every tracef message, exactly
    want_msgs = collections.Counter((e["ts"], e["fields"]["msg"])
                                    for e in bt_events(d, "lttng_ust_tracef:event"))
    got_msgs = collections.Counter((ns(e["ts"]), e["args"]["msg"])
                                   for e in s.by_name("lttng_ust_tracef:event", "i"))
    diff_multiset("tracef messages", got_msgs, want_msgs, probs)
    # cyg_profile slices: named by the address, with addr/call_site args
    bad = [e for e in s.events if e["ph"] == "X" and e.get("cat") == "lttng_ust_cyg_profile"
           and int(e["args"]["addr"], 16) != int(e["name"], 16)]
    if bad:
        probs.append("func slices whose addr arg is not their name: %s" % bad[:2])
    unclosed = [e for e in s.events if e["ph"] == "B" and e.get("cat") == "lttng_ust_cyg_profile"]
    if len(unclosed) != 3:
        probs.append("%d unclosed func slices exported, want 3" % len(unclosed))
    probs += roundtrip(d, tmp)
    return probs


def t_ros2(tmp):
    d = os.path.join(TC, "ros2")
    if not os.path.isdir(d):
        return ("skip", "missing data: %s" % d)
    s, exp, probs = compare(d, tmp)
    pids = sorted((p["name"], p["pid"]) for p in s.info["process_list"])
    if pids != [("sink", 427934), ("source", 427930), ("sync_one_to_one", 427932)]:
        probs.append("processes %s" % pids)
    if len(s.by_name("ros2:callback")) != 6065:
        probs.append("%d ros2:callback slices (callback_start/_end pairs), want 6065" %
                     len(s.by_name("ros2:callback")))
    # structured fields: arrays as JSON, hex as 0x..., strings
    want_w = sorted((e["ts"], e["fields"]["topic_name"], json.dumps(e["fields"]["gid_prefix"]),
                     e["fields"]["writer"]) for e in bt_events(d, "dds:create_writer"))
    got_w = sorted((ns(e["ts"]), e["args"]["topic_name"], json.dumps(json.loads(e["args"]["gid_prefix"])
                    if isinstance(e["args"]["gid_prefix"], str) else e["args"]["gid_prefix"]),
                    int(e["args"]["writer"], 16)) for e in s.by_name("dds:create_writer", "i"))
    if want_w != got_w:
        probs.append("dds:create_writer args differ: %s vs %s" % (got_w[:1], want_w[:1]))
    probs += roundtrip(d, tmp)
    return probs


def t_mpi(tmp):
    d = os.path.join(TC, "mpi_allreduce")
    if not os.path.isdir(d):
        return ("skip", "missing data: %s" % d)
    s, exp, probs = compare(d, tmp)
    ranks = sorted((p["rank"], p["name"]) for p in s.info["process_list"])
    if ranks != [(i, "MPI Rank %d" % i) for i in range(8)]:
        probs.append("ranks %s, want MPI Rank 0..7 with rank set" % ranks)
    kinds = collections.Counter(t["kind"] for t in s.tracks)
    if kinds != {"thread": 8, "comm": 8}:
        probs.append("track kinds %s, want 8 thread + 8 comm" % dict(kinds))
    calls = collections.Counter(e["name"] for e in s.events if e["ph"] == "X" and e.get("cat") == "MPI")
    if calls.get("MPI_Allreduce") != 8 or calls.get("MPI_Init") != 8:
        probs.append("MPI call slices %s" % dict(calls))
    ar = s.by_name("allreduce")
    if len(ar) != 8 or any(e["args"].get("bytes_sent") != 16 for e in ar):
        probs.append("allreduce collectives %s" % ar[:2])
    probs += roundtrip(d, tmp)
    return probs


# ---- path forms -----------------------------------------------------------------------------


def t_paths(tmp):
    d = os.path.join(TC, "context-switches-ust")
    m = os.path.join(TC, "mpi_allreduce")
    if not os.path.isdir(d) or not os.path.isdir(m):
        return ("skip", "missing data")
    probs = []
    base = os.path.join(tmp, "base.tft")
    import_ok([d], base)
    ref = H.cli_info(BIN, base)
    for i, p in enumerate([os.path.join(d, "metadata"), os.path.join(d, "channel0_0"), d + "/"]):
        out = os.path.join(tmp, "p%d.tft" % i)
        import_ok([p], out)
        got = H.cli_info(BIN, out)
        probs += ["import %s: %s" % (p, x) for x in H.diff_counts(got, ref, H.COUNT_KEYS + ("tracks",))]
    # an LTTng session's output directory: its traces below it (ust/uid/UID/64-bit ...),
    # each read on its own (their clocks need not correlate)
    sess = os.path.join(tmp, "session")
    copy_trace(d, os.path.join(sess, "ust", "uid", "1000", "64-bit"))
    out = os.path.join(tmp, "sess1.tft")
    import_ok([sess], out)
    _, _, p2 = compare(sess, tmp, imported=out)
    probs += ["session dir: " + x for x in p2]
    copy_trace(m, os.path.join(sess, "otf2"))
    os.symlink(d, os.path.join(sess, "link"))  # (symlinks are not followed: no loops)
    out = os.path.join(tmp, "sess2.tft")
    import_ok([sess], out)
    both = H.cli_info(BIN, out)
    mo = os.path.join(tmp, "mpi.tft")
    import_ok([m], mo)
    mi = H.cli_info(BIN, mo)
    for k in ("slices", "instants", "unclosed_slices", "tracks", "processes"):
        if both[k] != ref[k] + mi[k]:
            probs.append("session dir with LTTng and OTF2 traces: %s %s, want %s + %s" % (
                k, both[k], ref[k], mi[k]))
    if both["format"] != "ctf" or both.get("producer") not in ("LTTng + OTF2", "OTF2 + LTTng"):
        probs.append("session dir: format %r producer %r" % (both["format"], both.get("producer")))
    # an LTTng index file names its trace too
    r = os.path.join(TC, "ros2", "index", "ros2_0.idx")
    if os.path.isfile(r):
        out = os.path.join(tmp, "idx.tft")
        import_ok([r], out)
        if H.cli_info(BIN, out)["tracks"] != 6:
            probs.append("index file: not the ros2 trace")
    # an XSpace profile run directory is still one
    x = os.path.join(DATA, "tracelens", "jax_mi300", "jax08_gemm")
    if os.path.isdir(x):
        files = sorted(os.path.join(x, f) for f in os.listdir(x) if f.endswith(".xplane.pb"))
        a, b = os.path.join(tmp, "xdir.tft"), os.path.join(tmp, "xfiles.tft")
        import_ok([x], a)
        import_ok(files, b)
        ia, ib = H.cli_info(BIN, a), H.cli_info(BIN, b)
        if ia["format"] != "xspace":
            probs.append("profile dir: format %r" % ia["format"])
        probs += ["profile dir: " + p for p in H.diff_counts(ia, ib)]
    return probs


# ---- a kernel-domain trace, written here in CTF ------------------------------------------------

KERNEL_METADATA = """/* CTF 1.8 */
typealias integer { size = 8; align = 8; signed = false; } := uint8_t;
typealias integer { size = 32; align = 8; signed = false; } := uint32_t;
typealias integer { size = 64; align = 8; signed = false; } := uint64_t;
typealias integer { size = 32; align = 8; signed = true; } := int32_t;
typealias integer { size = 64; align = 8; signed = true; } := int64_t;
trace {
	major = 1;
	minor = 8;
	byte_order = le;
	packet.header := struct { uint32_t magic; uint32_t stream_id; };
};
env {
	hostname = "ctf-test-host";
	domain = "kernel";
	tracer_name = "lttng-modules";
	tracer_major = 2;
	tracer_minor = 13;
};
clock {
	name = "monotonic";
	freq = 1000000000;
	offset_s = 1700000000;
	offset = 0;
};
typealias integer { size = 64; align = 8; signed = false; map = clock.monotonic.value; } := uint64_clock_t;
stream {
	id = 0;
	event.header := struct { uint32_t id; uint64_clock_t timestamp; };
	packet.context := struct {
		uint64_clock_t timestamp_begin;
		uint64_clock_t timestamp_end;
		uint64_t content_size;
		uint64_t packet_size;
		uint64_t events_discarded;
		uint32_t cpu_id;
	};
};
event { name = "sched_switch"; id = 0; stream_id = 0; fields := struct {
	integer { size = 8; align = 8; signed = false; encoding = UTF8; } prev_comm[16];
	int32_t prev_tid; int32_t next_tid; }; };
event { name = "syscall_entry_read"; id = 1; stream_id = 0; fields := struct { uint32_t fd; uint64_t count; }; };
event { name = "syscall_exit_read"; id = 2; stream_id = 0; fields := struct { int64_t ret; }; };
event { name = "irq_handler_entry"; id = 3; stream_id = 0; fields := struct { int32_t irq; string name; }; };
event { name = "irq_handler_exit"; id = 4; stream_id = 0; fields := struct { int32_t irq; int32_t ret; }; };
event { name = "syscall_entry_openat"; id = 5; stream_id = 0; fields := struct { int32_t dfd; string filename; }; };
event { name = "syscall_exit_write"; id = 6; stream_id = 0; fields := struct { int64_t ret; }; };
"""


def kernel_event(eid, ts, *fields):
    out = struct.pack("<IQ", eid, ts)
    for f in fields:
        out += f
    return out


def kernel_packet(cpu, events, discarded=0):
    body = b"".join(events)
    ts = [struct.unpack_from("<Q", e, 4)[0] for e in events]
    size = 8 + 40 + 4 + len(body)
    head = struct.pack("<II", 0xC1FC1FC1, 0) + struct.pack("<QQQQQI", min(ts), max(ts), size * 8, size * 8,
                                                            discarded, cpu)
    return head + body


def write_kernel_trace(d):
    """Two CPUs: a read syscall with an IRQ inside it, context switches, an openat that
    never returns, a write exit whose entry was not traced; 2 events discarded on CPU 1."""
    os.makedirs(d)
    with open(os.path.join(d, "metadata"), "w") as fp:
        fp.write(KERNEL_METADATA)
    i32, i64, u32, u64 = (lambda v: struct.pack("<i", v)), (lambda v: struct.pack("<q", v)), \
        (lambda v: struct.pack("<I", v)), (lambda v: struct.pack("<Q", v))
    comm = lambda s: s.encode().ljust(16, b"\0")  # noqa: E731
    cstr = lambda s: s.encode() + b"\0"  # noqa: E731
    cpu0 = [
        kernel_event(6, 900, i64(12)),                          # exit without entry
        kernel_event(1, 1000, u32(3), u64(4096)),                # read(3, 4096)
        kernel_event(3, 1500, i32(16), cstr("eth0")),            # IRQ 16 inside it
        kernel_event(4, 1600, i32(16), i32(1)),
        kernel_event(2, 2000, i64(4096)),                        # read returns
        kernel_event(0, 2500, comm("python3"), i32(101), i32(0)),
        kernel_event(5, 3000, i32(-100), cstr("/etc/hosts")),   # openat never returns
    ]
    cpu1 = [
        kernel_event(0, 1200, comm("swapper/1"), i32(0), i32(202)),
        kernel_event(1, 1300, u32(5), u64(10)),
        kernel_event(2, 1350, i64(-11)),
        kernel_event(1, 4000, u32(6), u64(1)),
        kernel_event(2, 4100, i64(1)),
    ]
    with open(os.path.join(d, "stream_0"), "wb") as fp:
        fp.write(kernel_packet(0, cpu0))
    with open(os.path.join(d, "stream_1"), "wb") as fp:
        fp.write(kernel_packet(1, cpu1[:3]) + kernel_packet(1, cpu1[3:], discarded=2))


def t_kernel(tmp):
    d = os.path.join(tmp, "kernel")
    write_kernel_trace(d)
    s, exp, probs = compare(d, tmp)
    cpus = sorted((t["name"], t["tid"]) for t in s.tracks)
    if cpus != [("CPU 0", 0), ("CPU 1", 1)]:
        probs.append("tracks %s, want CPU 0 and CPU 1" % cpus)
    if [p["name"] for p in s.info["process_list"]] != ["kernel"]:
        probs.append("processes %s" % s.info["process_list"])
    reads = s.by_name("read")
    if sorted((ns(e["ts"]) % 10**9, ns(e["dur"])) for e in reads) != [(1000, 1000), (1300, 50), (4000, 100)] \
            or reads[0]["cat"] != "syscall" or not any(e["args"].get("ret") == -11 for e in reads):
        probs.append("read syscall slices %s" % reads)
    irq = s.by_name("eth0")  # (named by its `name` field, the handler's)
    if len(irq) != 1 or irq[0]["args"].get("name") != "eth0" or ns(irq[0]["dur"]) != 100:
        probs.append("irq slice %s" % irq)
    if s.info["dropped"] != 2:
        probs.append("dropped %s, want the 2 discarded events" % s.info["dropped"])
    if s.info["start_ns"] != 1700000000 * 10**9 + 900:
        probs.append("start_ns %s: the clock's offset_s not applied" % s.info["start_ns"])
    return probs


# ---- a trace LTTng writes here, from the TF profiler's providers ---------------------------------

# The providers' events and fields as pzins/tensorflow-profiler documents them
# (../shared/reference/seed-systems.md A4.2): (event, [(type, field)]).
STR, U64, U64X, INT, U16A3, U32A3 = "string", "uint64_t", "hex", "int", "uint16_t[3]", "uint32_t[3]"
SEED_PROVIDERS = {
    "tensorflowTracer": [
        ("session_start", [(STR, "cat"), (STR, "name"), (INT, "count")]),
        ("session_end", [(STR, "cat"), (STR, "name"), (INT, "count")]),
        ("operation_start", [(STR, "cat"), (STR, "placement"), (STR, "name")]),
        ("operation_end", [(STR, "cat"), (STR, "placement"), (STR, "name")]),
        ("async_operation_start", [(STR, "cat"), (STR, "placement"), (STR, "name")]),
        ("async_operation_end", [(STR, "cat"), (STR, "placement"), (STR, "name")]),
        ("rdv_send", [(STR, "cat"), (STR, "name")]),
    ],
    "hsaTracer": [("function_entry", [(STR, "cat"), (STR, "name")]),
                  ("function_exit", [(STR, "cat"), (STR, "name")])],
    "hipTracer": [("function_entry", [(STR, "cat"), (STR, "name")]),
                  ("function_exit", [(STR, "cat"), (STR, "name")])],
    "openclTracer": [
        ("function_entry", [(STR, "name"), (STR, "cat")]),
        ("function_exit", [(STR, "name"), (STR, "cat")]),
        ("kernel_begin", [(STR, "name"), (STR, "tf_name"), (STR, "cat"), (U64, "timestamp")]),
        ("kernel_end", [(STR, "name"), (STR, "cat"), (U64, "timestamp")]),
        ("clust_device_event", [(STR, "name"), (STR, "cat"), (U64X, "queue_field"),
                                (INT, "command_field"), (U64, "queued_field"), (U64, "submit_field"),
                                (U64, "start_field"), (U64, "end_field")]),
    ],
    "interceptionTracer": [
        ("runtime_initialized", [(STR, "cat")]),
        ("function_entry", [(STR, "cat"), (STR, "name")]),
        ("function_exit", [(STR, "cat"), (STR, "name")]),
        ("kernel_begin", [(STR, "cat"), (U64X, "kernel_object"), (STR, "name"), (STR, "tf_name"),
                          (U64X, "agent_handle"), (U64, "queue_id"), (U64, "timestamp")]),
        ("kernel_end", [(STR, "cat"), (U64X, "kernel_object"), (STR, "name"), (STR, "tf_name"),
                        (U64X, "agent_handle"), (U64, "queue_id"), (U64, "timestamp")]),
    ],
    "hcTracer": [
        ("kernel_begin", [(STR, "cat"), (U64, "timestamp"), (STR, "name"), (STR, "long_name"),
                          (STR, "tf_name"), (U16A3, "workgroup_size"), (U32A3, "grid_size")]),
        ("kernel_end", [(STR, "cat"), (U64, "timestamp"), (STR, "name")]),
    ],
    "cudaTracer": [
        ("kernel_begin", [(STR, "cat"), (STR, "name"), (U64, "timestamp")]),
        ("kernel_end", [(STR, "cat"), (STR, "name"), (U64, "timestamp")]),
    ],
}


def provider_header(prov, events):
    g = prov.upper()
    out = ["#undef LTTNG_UST_TRACEPOINT_PROVIDER", "#define LTTNG_UST_TRACEPOINT_PROVIDER " + prov,
           "#undef LTTNG_UST_TRACEPOINT_INCLUDE", '#define LTTNG_UST_TRACEPOINT_INCLUDE "./tp_%s.h"' % prov,
           "#if !defined(TP_%s_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)" % g,
           "#define TP_%s_H" % g, "#include <lttng/tracepoint.h>", "#include <stdint.h>"]
    for ev, fields in events:
        args, body = [], []
        for typ, f in fields:
            if typ == STR:
                args.append("const char *, %s_a" % f)
                body.append("lttng_ust_field_string(%s, %s_a)" % (f, f))
            elif typ == U64:
                args.append("uint64_t, %s_a" % f)
                body.append("lttng_ust_field_integer(uint64_t, %s, %s_a)" % (f, f))
            elif typ == U64X:
                args.append("uint64_t, %s_a" % f)
                body.append("lttng_ust_field_integer_hex(uint64_t, %s, %s_a)" % (f, f))
            elif typ == INT:
                args.append("int, %s_a" % f)
                body.append("lttng_ust_field_integer(int, %s, %s_a)" % (f, f))
            else:
                t = typ.split("[")[0]
                args.append("const %s *, %s_a" % (t, f))
                body.append("lttng_ust_field_array(%s, %s, %s_a, 3)" % (t, f, f))
        out.append("LTTNG_UST_TRACEPOINT_EVENT(%s, %s, LTTNG_UST_TP_ARGS(%s),\n\tLTTNG_UST_TP_FIELDS(%s))"
                   % (prov, ev, ", ".join(args), "\n\t\t".join(body)))
    out += ["#endif", "#include <lttng/tracepoint-event.h>", ""]
    return "\n".join(out)


def sh(argv, **kw):
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120, **kw)


class Lttng:
    """A user-space LTTng recording session (the session daemon running here, or one
    started for the test and stopped after it if no other session uses it)."""

    def __init__(self, tmp):
        self.name = "tftctf%d" % os.getpid()
        self.out = os.path.join(tmp, "lttng-out")
        self.pidfile = os.path.join(tmp, "sessiond.pid")
        self.started_daemon = False
        self.created = False

    def start(self, events):
        if not shutil.which("lttng") or not shutil.which("lttng-sessiond"):
            return "lttng-tools not installed (scripts/install-deps.sh)"
        r = sh(["lttng", "create", self.name, "--output=" + self.out])
        if r.returncode != 0:
            d = sh(["lttng-sessiond", "--daemonize", "--no-kernel", "--pidfile=" + self.pidfile])
            if d.returncode == 0:
                self.started_daemon = True
            r = sh(["lttng", "create", self.name, "--output=" + self.out])
            if r.returncode != 0:
                return "cannot create an LTTng session here: %s %s" % (
                    d.stderr.decode(errors="replace").strip()[-200:],
                    r.stderr.decode(errors="replace").strip()[-200:])
        self.created = True
        for argv in (["lttng", "enable-event", "-s", self.name, "-u", ",".join(events)],
                     ["lttng", "add-context", "-s", self.name, "-u", "-t", "vpid", "-t", "vtid",
                      "-t", "procname"],
                     ["lttng", "start", self.name]):
            r = sh(argv)
            if r.returncode != 0:
                raise OSError("%s: %s" % (" ".join(argv), r.stderr.decode(errors="replace").strip()))
        return None

    def stop(self):
        if self.created:
            sh(["lttng", "stop", self.name])
            sh(["lttng", "destroy", self.name])
            self.created = False
        if self.started_daemon:
            # (stopped only if no one else's session has appeared on it meanwhile)
            r = sh(["lttng", "list"])
            if r.returncode == 0 and "no available recording session" in r.stdout.decode(errors="replace"):
                try:
                    with open(self.pidfile) as fp:
                        os.kill(int(fp.read().strip()), 15)
                except (OSError, ValueError):
                    pass
            self.started_daemon = False


def build_seed_app(tmp):
    src = os.path.join(HERE, "ctf_seed")
    for prov, events in SEED_PROVIDERS.items():
        with open(os.path.join(tmp, "tp_%s.h" % prov), "w") as fp:
            fp.write(provider_header(prov, events))
    with open(os.path.join(tmp, "tp_all.h"), "w") as fp:
        fp.write("".join('#include "tp_%s.h"\n' % p for p in SEED_PROVIDERS))
    app = os.path.join(tmp, "seed_app")
    cc = os.environ.get("CC", "cc")
    obj = os.path.join(tmp, "cyg.o")
    for argv in ([cc, "-std=gnu11", "-O1", "-finstrument-functions", "-c", "-o", obj,
                  os.path.join(src, "cyg.c")],
                 [cc, "-std=gnu11", "-O1", "-I", tmp, "-o", app, os.path.join(src, "app.c"), obj,
                  "-llttng-ust", "-ldl", "-lpthread"]):
        r = sh(argv)
        if r.returncode != 0:
            raise OSError("building the seed app: " + r.stderr.decode(errors="replace")[-600:])
    return app


def t_lttng_seed(tmp):
    if not glob.glob("/usr/include/lttng/tracepoint.h") + glob.glob("/usr/include/*/lttng/tracepoint.h"):
        return ("skip", "liblttng-ust-dev not installed (scripts/install-deps.sh)")
    app = build_seed_app(tmp)
    cyg = "liblttng-ust-cyg-profile.so.1"
    lt = Lttng(tmp)
    why = lt.start(["%s:*" % p for p in SEED_PROVIDERS] + ["lttng_ust_cyg_profile:*"])
    if why:
        return ("skip", why)
    try:
        env = dict(os.environ, LD_PRELOAD=cyg, LTTNG_UST_REGISTER_TIMEOUT="20000")
        r = sh([app], env=env)
        if r.returncode != 0:
            return ["the seed app exited %d: %s" % (r.returncode, r.stderr.decode(errors="replace")[-300:])]
    finally:
        lt.stop()
    probs = []
    evs = C.read_trace(lt.out)
    names = collections.Counter(e["name"] for e in evs)
    if names.get("tensorflowTracer:session_start") != 3 or names.get("lttng_ust_cyg_profile:func_entry", 0) < 6:
        return ["LTTng recorded too little (registration too slow?): %s" % dict(names)]
    s, exp, probs = compare(lt.out, tmp)
    kinds = {t["name"]: t["kind"] for t in s.tracks}
    for q in ("GPU agent 0x1000 queue 0", "HC kernels", "CUDA kernels", "OpenCL queue 0xabc",
              "OpenCL device"):
        if kinds.get(q) != "gpu_stream":
            probs.append("track %r: kind %r, want gpu_stream" % (q, kinds.get(q)))
    if kinds.get("TensorFlow async ops") != "async":
        probs.append("no async track for the TF async ops: %s" % kinds)
    steps = sorted(st.get("index") for st in s.info["step_list"])
    if steps != [1, 2, 3]:
        probs.append("steps %s, want the 3 session runs" % steps)
    # op slices, API slices inside them, kernels with their op
    by = lambda n: sorted(s.by_name(n), key=lambda e: ns(e["ts"]))  # noqa: E731
    ops, hip = by("MatMul_1") + by("MatMul_2") + by("MatMul_3"), by("hipLaunchKernel")
    hsa_k, hc_k, cl_k = by("matmul_kernel"), [], by("vadd")
    hc_k = [e for e in hsa_k if e.get("cat") == "kernel" and "long_name" in e["args"]]
    hsa_k = [e for e in hsa_k if "kernel_object" in e["args"]]
    if len(ops) != 3 or len(hip) != 3 or len(hsa_k) != 3 or len(hc_k) != 3:
        probs.append("ops %d, hipLaunchKernel %d, HSA kernels %d, HC kernels %d (want 3 each)" % (
            len(ops), len(hip), len(hsa_k), len(hc_k)))
    else:
        for i in range(3):
            o, h = ops[i], hip[i]
            if not (ns(o["ts"]) <= ns(h["ts"]) and ns(h["ts"]) + ns(h["dur"]) <= ns(o["ts"]) + ns(o["dur"])):
                probs.append("hipLaunchKernel %d not inside its op" % i)
            h_end = ns(h["ts"]) + ns(h["dur"])
            # device times on the trace's clock: right after the launch that preceded them
            for what, k, slack in (("HC", hc_k[i], 2 * 10**6), ("HSA", hsa_k[i], 2 * 10**6)):
                if not (h_end <= ns(k["ts"]) <= h_end + slack):
                    probs.append("%s kernel %d at %+d ns from its launch's end" % (what, i, ns(k["ts"]) - h_end))
            if hsa_k[i]["args"].get("op") != "MatMul_%d" % (i + 1):
                probs.append("HSA kernel %d op arg %r" % (i, hsa_k[i]["args"].get("op")))
    cl_q = [e for e in cl_k if "command" in e["args"]]  # clust_device_event's
    if any(e.get("cat") != "kernel" for e in cl_q):
        probs.append("OpenCL NDRange commands not in category kernel: %s" % cl_q[:1])
    enq = by("clEnqueueNDRangeKernel")
    if len(cl_q) != 3 or len(enq) != 3:
        probs.append("OpenCL commands %d, enqueues %d" % (len(cl_q), len(enq)))
    else:
        for i in range(3):
            t = ns(cl_q[i]["ts"]) - (ns(enq[i]["ts"]) + ns(enq[i]["dur"]))
            if not (0 <= t <= 2 * 10**6):
                probs.append("OpenCL command %d at %+d ns from its enqueue's end (offset estimate)" % (i, t))
    if s.info["unclosed_slices"] < 1:
        probs.append("no unclosed slice: cyg_never_returns's func_entry has no exit")
    for orphan in ("interceptionTracer:function_exit", "tensorflowTracer:async_operation_end"):
        o = s.by_name(orphan, "i")
        main_tid = next((t["tid"] for t in s.tracks if t["kind"] == "thread" and t["tid"] == t["pid"]), None)
        if len(o) != 1 or o[0]["tid"] != main_tid:
            probs.append("the orphan %s is not one instant on the main thread: %s" % (orphan, o))
    probs += roundtrip(lt.out, tmp)
    return probs


# ---- broken traces ------------------------------------------------------------------------------


# libbabeltrace2 2.0.4 leaks on two error paths: 16 bytes when source.ctf.fs fails to
# parse a trace's TSDL (allocated inside its plugin during the component's
# initialization), 8 bytes when a component appends an error cause (the muxer, on
# timestamps going back). Under ASan the broken traces run with those allocation sites
# suppressed, and a full unwind so that the sites can be seen (what tftracer's own code
# allocates is still reported).
BT_LEAK = "leak:bt_graph_add_source_component\nleak:bt_current_thread_error_append_cause_from_component\n"


def bad(tmp, trace, file_re, msg_re=r"expected"):
    """Import a broken trace: exit 2, one line naming the file, nothing left behind."""
    outdir = os.path.join(tmp, "out")
    os.makedirs(outdir, exist_ok=True)
    supp = os.path.join(tmp, "lsan.supp")
    with open(supp, "w") as fp:
        fp.write(BT_LEAK)
    saved = {k: os.environ.get(k) for k in ("LSAN_OPTIONS", "ASAN_OPTIONS")}
    os.environ["LSAN_OPTIONS"] = "suppressions=" + supp + ":print_suppressions=0"
    os.environ["ASAN_OPTIONS"] = (saved["ASAN_OPTIONS"] + ":" if saved["ASAN_OPTIONS"] else "") + \
        "fast_unwind_on_malloc=0"
    try:
        r = H.run([BIN, "import", trace, "-o", os.path.join(outdir, "s.tft")], timeout=120)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    lines = r.err.strip().splitlines()
    probs = []
    if r.crashed:
        return ["%s: %s" % (trace, r.why())]
    if r.rc != 2:
        probs.append("%s: exit %d, want 2 (%s)" % (trace, r.rc, r.err.strip()[:200]))
    if len(lines) != 1 or not lines[0].startswith("tftracer: "):
        probs.append("%s: %d stderr lines: %r" % (trace, len(lines), r.err[:300]))
    elif not re.search(file_re, lines[0]) or not re.search(msg_re, lines[0]):
        probs.append("%s: %r does not match %r / %r" % (trace, lines[0], file_re, msg_re))
    if os.listdir(outdir):
        probs.append("%s: left %s" % (trace, os.listdir(outdir)))
    shutil.rmtree(outdir)
    return probs


def t_bad(tmp):
    cs = os.path.join(TC, "context-switches-ust")
    ros = os.path.join(TC, "ros2")
    mpi = os.path.join(TC, "mpi_allreduce")
    if not all(os.path.isdir(d) for d in (cs, ros, mpi)):
        return ("skip", "missing data")
    probs = []

    def mutate(src, name, fn):
        d = copy_trace(src, os.path.join(tmp, name))
        if os.path.isdir(os.path.join(d, "index")):
            shutil.rmtree(os.path.join(d, "index"))
        fn(d)
        return d

    def cut(path, n):
        with open(path, "r+b") as fp:
            fp.truncate(n)

    def poke(path, off, data):
        with open(path, "r+b") as fp:
            fp.seek(off)
            fp.write(data)

    # a stream cut inside a packet
    d = mutate(cs, "cut_stream", lambda d: cut(os.path.join(d, "channel0_0"), 70000))
    probs += bad(tmp, d, re.escape(d + "/channel0_0") + r": expected CTF packets")
    # a stream whose first packet's magic is wrong
    d = mutate(cs, "bad_magic", lambda d: poke(os.path.join(d, "channel0_0"), 0, b"\xff" * 4))
    probs += bad(tmp, d, re.escape(d + "/channel0_0") + r": expected", r"magic")
    # corruption found while reading (a later packet of ros2_3)
    d = mutate(ros, "bad_event", lambda d: poke(os.path.join(d, "ros2_3"), 32768 * 5 + 2000, b"\xff" * 200))
    probs += bad(tmp, d, re.escape(d + "/ros2_3") + r": expected CTF packets")
    # a timestamp going back in a stream (one byte of an event's header): refused where
    # libbabeltrace2 merges the streams
    d = mutate(mpi, "time_back", lambda d: poke(os.path.join(d, "0"), 446, b"\xff"))
    probs += bad(tmp, d, re.escape(d) + r": expected each stream's events in time order")
    # a packet context whose content size does not fit int64 (the top byte of stream 5's
    # first content_size): libbabeltrace2 2.0.4 asserts and aborts the process reading it
    d = mutate(mpi, "abort", lambda d: poke(os.path.join(d, "5"), 27, b"\xff"))
    probs += bad(tmp, d, re.escape(d) + r": expected CTF packets", r"libbabeltrace2 crashed reading this trace \(babeltrace2: signal 6")
    # packetized metadata cut short (libbabeltrace2 2.0 alone would loop forever)
    d = mutate(cs, "cut_meta", lambda d: cut(os.path.join(d, "metadata"), 100))
    probs += bad(tmp, d, re.escape(d + "/metadata") + r": byte 28: expected a metadata packet of 4096 bytes")
    # metadata packet with a wrong magic, then one with a bad size
    d = mutate(cs, "meta_magic", lambda d: poke(os.path.join(d, "metadata"), 0, b"\x57\x1d\xd1\x75" + b"\0" * 20 + b"\xff\xff\xff\x7f"))
    probs += bad(tmp, d, re.escape(d + "/metadata") + r": byte 24: expected")
    # text metadata with a syntax error
    d = mutate(mpi, "meta_syntax", lambda d: poke(os.path.join(d, "metadata"), 20000, b"}}}}"))
    probs += bad(tmp, d, re.escape(d + "/metadata") + r": expected CTF 1.8 metadata")
    # an empty metadata file
    d = mutate(mpi, "meta_empty", lambda d: cut(os.path.join(d, "metadata"), 0))
    probs += bad(tmp, d, re.escape(d + "/metadata") + r": byte 0: expected CTF metadata")
    # a cut between two packets is a shorter, valid trace: it imports what is left
    d = mutate(ros, "cut_packet", lambda d: cut(os.path.join(d, "ros2_0"), 32768 * 3))
    try:
        _, exp, p2 = compare(d, tmp)
        probs += ["cut between packets: " + p for p in p2]
        if exp.counts()["instants"] >= 87208:
            probs.append("cut between packets: nothing was cut")
    except H.CliError as e:
        probs.append("cut between packets: %s" % e)
    return probs


def main():
    if not os.path.exists(BIN):
        print("FAIL ctf/build (no %s)" % BIN)
        return 1
    if not shutil.which(C.BABELTRACE):
        R.fail("babeltrace2", "babeltrace2 not installed (scripts/install-deps.sh)")
        return R.finish()
    case("context_switches_ust", t_context_switches)
    case("ros2", t_ros2)
    case("mpi_allreduce", t_mpi)
    case("paths", t_paths)
    case("kernel_domain", t_kernel)
    case("lttng_tf_profiler", t_lttng_seed)
    case("bad_input", t_bad)
    return R.finish()


if __name__ == "__main__":
    sys.exit(main())
