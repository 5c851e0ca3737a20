#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# Independent counter for CTF traces (LTTng, OTF2 converted to CTF): what
# `tftracer import DIR` must produce, computed from `babeltrace2`'s own text
# output only (python3's standard library; no libbabeltrace2 bindings).
"""Expected slices and instants of a CTF trace, from babeltrace2's text output.

Usage: count_ctf.py DIR   prints one JSON object of counts.

Input: `babeltrace2 --names=all --clock-seconds --no-delta DIR` (every event
with its time in ns from its clock's origin and every field scope named).

Semantics (the import contract of docs/formats-lttng.md, written again here):
  OTF2 (GlobalDef_* events)  GlobalDef_* are definitions, not events.
                             Event_Enter/Event_Leave on a location: a slice
                             named by the region's name string; Event_Program
                             Begin/End: a slice named by the basename of the
                             program name; Event_MpiCollectiveBegin/End: a
                             slice named by the collective operation (on the
                             rank's comm track); anything else: an instant
                             named by the event.
  LTTng / any CTF            an event's track: its thread (context vtid, tid),
                             else its CPU (packet context cpu_id).
                             X_entry|X_exit, X_start|X_begin / X_end,
                             syscall_entry_X / syscall_exit_X: entry and exit
                             of one slice on the track, an exit closing the
                             innermost open entry of the same base name (and
                             the same `name` field, or `addr` for
                             lttng_ust_cyg_profile); an exit with no entry is
                             an instant (unmatched_ends); an entry never
                             exited is a slice to the last event's time
                             (unclosed_slices). Slice name: the `name` field,
                             else the address of lttng_ust_cyg_profile events
                             (0x...), else X of syscalls, else the base name.
                             tensorflowTracer:async_operation_* pair on one
                             track per process, oldest first.
                             Everything else: an instant named by the event.
  The TF profiler's device   interceptionTracer:kernel_*: time = the
  events                     process's runtime_initialized event (else its
                             hsa_init exit) + `timestamp`; hcTracer
                             kernel/barrier/async_memcpy(slo): `timestamp`
                             as a value of the trace's clock; cudaTracer
                             kernel/memcpy: `timestamp` us since the epoch;
                             openclTracer kernel_*/device_* and
                             clust_device_event: device times + the
                             process's min(emission time - device end).
                             Pairs close the oldest open one of the same
                             name on their queue track.
"""
import json
import os
import re
import subprocess
import sys

BABELTRACE = "babeltrace2"

# ---- babeltrace2's text output -----------------------------------------------------


class ParseError(Exception):
    pass


class _Val:
    """Parser of one babeltrace2 pretty-printed value."""

    def __init__(self, s, i):
        self.s, self.i = s, i

    def ws(self):
        while self.i < len(self.s) and self.s[self.i] == " ":
            self.i += 1

    def expect(self, t):
        self.ws()
        if not self.s.startswith(t, self.i):
            raise ParseError("expected %r at %d: %r" % (t, self.i, self.s[self.i:self.i + 40]))
        self.i += len(t)

    def string(self):
        self.expect('"')
        out = []
        s = self.s
        while True:
            c = s[self.i]
            if c == '"':
                self.i += 1
                return "".join(out)
            if c == "\\":
                n = s[self.i + 1]
                self.i += 2
                if n == "x":
                    out.append(chr(int(s[self.i:self.i + 2], 16)))
                    self.i += 2
                else:
                    out.append({"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b",
                                "f": "\f", "v": "\v"}.get(n, n))
                continue
            out.append(c)
            self.i += 1

    def value(self):
        self.ws()
        c = self.s[self.i]
        if c == "{":
            self.i += 1
            d = {}
            self.ws()
            if self.s[self.i] == "}":
                self.i += 1
                return d
            while True:
                self.ws()
                j = self.s.index(" = ", self.i)
                k = self.s[self.i:j]
                self.i = j + 3
                d[k] = self.value()
                self.ws()
                if self.s[self.i] == ",":
                    self.i += 1
                    continue
                self.expect("}")
                return d
        if c == "[":
            self.i += 1
            arr = []
            self.ws()
            if self.s[self.i] == "]":
                self.i += 1
                return arr
            while True:
                self.ws()
                j = self.s.index("] = ", self.i)
                self.i = j + 4
                arr.append(self.value())
                self.ws()
                if self.s[self.i] == ",":
                    self.i += 1
                    continue
                self.expect("]")
                return arr
        if c == "(":  # enumeration: ( "LABEL" : container = N )
            self.i += 1
            self.ws()
            labels = []
            if self.s[self.i] == '"':
                labels.append(self.string())
            elif self.s[self.i] == "{":
                self.i += 1
                while True:
                    self.ws()
                    labels.append(self.string())
                    self.ws()
                    if self.s[self.i] == ",":
                        self.i += 1
                        continue
                    self.expect("}")
                    break
            else:
                j = self.s.index(" : ", self.i)
                self.i = j
            self.expect(": container = ")
            v = self.value()
            self.expect(")")
            return {"enum": labels, "value": v}
        if c == '"':
            return self.string()
        m = re.compile(r"[-+]?(0x[0-9A-Fa-f]+|0b[01]+|[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?|nan|inf|true|false|<none>)").match(self.s, self.i)
        if not m:
            raise ParseError("no value at %d: %r" % (self.i, self.s[self.i:self.i + 40]))
        self.i = m.end()
        t = m.group(0)
        if t in ("true", "false"):
            return t == "true"
        if t == "<none>":
            return None
        if "0x" in t:
            return int(t, 16)
        if "0b" in t:
            return int(t, 2)
        if re.match(r"^[-+]?[0-9]+$", t):
            return int(t)
        return float(t)


def parse_line(line):
    """One event line: {"ts": ns, "name": ..., "packet": {...}, "ctx": {...},
    "ectx": {...}, "fields": {...}} (absent scopes: {})."""
    ev = {"ts": None, "name": None, "packet": {}, "ctx": {}, "ectx": {}, "fields": {}}
    i, n = 0, len(line)
    while i < n:
        j = line.index(" = ", i)
        key = line[i:j]
        i = j + 3
        if line[i] in "{[(\"":
            p = _Val(line, i)
            v = p.value()
            i = p.i
        else:
            k = line.find(", ", i)
            k = n if k < 0 else k
            v = line[i:k]
            i = k
        if key == "timestamp":
            sec, _, frac = v.partition(".")
            ns = int(sec) * 1000000000 + int((frac + "000000000")[:9])
            ev["ts"] = -ns if sec.startswith("-") and ns > 0 else ns
        elif key == "name":
            ev["name"] = v
        elif key == "stream.packet.context":
            ev["packet"] = v
        elif key == "stream.event.context":
            ev["ctx"] = v
        elif key == "event.context":
            ev["ectx"] = v
        elif key == "event.fields":
            ev["fields"] = v
        if line.startswith(", ", i):
            i += 2
    return ev


def read_trace(path, cycles=False):
    """Every event of the CTF trace(s) at path, as babeltrace2 prints them."""
    argv = [BABELTRACE, "--names=all", "--no-delta"]
    argv += ["--clock-cycles"] if cycles else ["--clock-seconds"]
    p = subprocess.run(argv + [path], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 0:
        raise ParseError("babeltrace2 failed: %s" % p.stderr.decode("utf-8", "replace")[-300:])
    out = []
    for line in p.stdout.decode("utf-8", "replace").splitlines():
        if not line:
            continue
        if cycles:
            m = re.match(r"^timestamp = (\d+), ", line)
            ev = parse_line("timestamp = 0" + line[m.end() - 2:]) if m else parse_line(line)
            ev["ts"] = int(m.group(1)) if m else None
        else:
            ev = parse_line(line)
        out.append(ev)
    return out


# ---- the mapping -------------------------------------------------------------------------

COLLECTIVES = ["barrier", "bcast", "gather", "gatherv", "scatter", "scatterv", "allgather",
               "allgatherv", "alltoall", "alltoallv", "alltoallw", "allreduce", "reduce",
               "reduce_scatter", "scan", "exscan", "reduce_scatter_block", "create_handle",
               "destroy_handle", "allocate", "deallocate", "create_handle_and_allocate",
               "destroy_handle_and_deallocate"]

# device begin/end pairs: (begin, end) -> (time rule, queue: None = by agent_handle/queue_id)
DEVICE = {
    ("interceptionTracer:kernel_begin", "interceptionTracer:kernel_end"): ("hsa_init", None),
    ("hcTracer:kernel_begin", "hcTracer:kernel_end"): ("clock", "HC kernels"),
    ("hcTracer:barrier_begin", "hcTracer:barrier_end"): ("clock", "HC kernels"),
    ("hcTracer:async_memcpy_begin", "hcTracer:async_memcpy_end"): ("clock", "HC copies"),
    ("hcTracer:async_memcpyslo_begin", "hcTracer:async_memcpyslo_end"): ("clock", "HC copies"),
    ("cudaTracer:kernel_begin", "cudaTracer:kernel_end"): ("us", "CUDA kernels"),
    ("cudaTracer:memcpy_begin", "cudaTracer:memcpy_end"): ("us", "CUDA memcpy"),
    ("openclTracer:kernel_begin", "openclTracer:kernel_end"): ("opencl", "OpenCL device"),
    ("openclTracer:device_begin", "openclTracer:device_end"): ("opencl", "OpenCL device"),
}
DEVICE_CAT = {"kernel_": "kernel", "barrier_": "barrier", "async_memcpy": "memcpy",
              "memcpy_": "memcpy", "device_": "command"}


def classify(name):
    """('begin'|'end'|None, base)"""
    ev = name.rsplit(":", 1)[-1]
    for suf, kind in (("_entry", "begin"), ("_exit", "end"), ("_start", "begin"),
                      ("_begin", "begin"), ("_end", "end")):
        if name.endswith(suf) and len(ev) > len(suf):
            return kind, name[:-len(suf)]
    for tok, kind in (("syscall_entry_", "begin"), ("syscall_exit_", "end")):
        k = ev.find(tok)
        if k >= 0 and len(ev) > k + len(tok) and (k == 0 or ev[k - 1] == "_"):
            pre = name[:len(name) - len(ev) + k]
            return kind, pre + "syscall_" + ev[k + len(tok):]
    return None, name


class Result:
    def __init__(self):
        self.slices = []     # (track key, name, ts, dur, unclosed)
        self.instants = []   # (track key, name, ts)
        self.unmatched_ends = 0
        self.steps = []      # (index, start, dur)
        self.tracks = {}     # track key -> kind

    def counts(self):
        per_name = {}
        for s in self.slices:
            per_name.setdefault(s[1], [0, 0])[0] += 1
        for i in self.instants:
            per_name.setdefault(i[1], [0, 0])[1] += 1
        return {"slices": len(self.slices), "instants": len(self.instants),
                "unclosed_slices": sum(1 for s in self.slices if s[4]),
                "unmatched_ends": self.unmatched_ends, "steps": len(self.steps),
                "per_name": per_name}


def _otf2(events):
    r = Result()
    strings, regions, locs, groups, comms = {}, {}, {}, {}, {}
    stacks = {}
    t_max = max(e["ts"] for e in events)
    for e in events:
        n, f = e["name"], e["fields"]
        if n == "GlobalDef_String":
            strings[f["self"]] = f["stringValue"]
        elif n == "GlobalDef_Region":
            regions[f["self"]] = f["name"]
        elif n == "GlobalDef_Comm":
            comms[f["self"]] = f["name"]
        if n.startswith("GlobalDef"):
            continue
        loc = f.get("locationID", -1)
        key = ("loc", loc)
        r.tracks.setdefault(key, "thread")
        if n in ("Event_Enter", "Event_ProgramBegin"):
            nm = (strings.get(regions.get(f["region"]), "region %d" % f["region"])
                  if n == "Event_Enter" else os.path.basename(strings.get(f["programName"], "")))
            stacks.setdefault(key, []).append((n, f.get("region"), nm, e["ts"]))
        elif n in ("Event_Leave", "Event_ProgramEnd"):
            want = "Event_Enter" if n == "Event_Leave" else "Event_ProgramBegin"
            st = stacks.get(key, [])
            for k in range(len(st) - 1, -1, -1):
                if st[k][0] == want and (n != "Event_Leave" or st[k][1] == f["region"]):
                    o = st.pop(k)
                    r.slices.append((key, o[2], o[3], e["ts"] - o[3], False))
                    break
            else:
                r.unmatched_ends += 1
                r.instants.append((key, n, e["ts"]))
        elif n == "Event_MpiCollectiveBegin":
            ck = ("comm", loc)
            r.tracks.setdefault(ck, "comm")
            stacks.setdefault(ck, []).append(("c", None, None, e["ts"]))
        elif n == "Event_MpiCollectiveEnd":
            ck = ("comm", loc)
            st = stacks.get(ck, [])
            if st:
                o = st.pop(0)
                op = f.get("collectiveOp")
                nm = COLLECTIVES[op] if isinstance(op, int) and 0 <= op < len(COLLECTIVES) else "collective"
                r.slices.append((ck, nm, o[3], e["ts"] - o[3], False))
            else:
                r.unmatched_ends += 1
                r.instants.append((ck, n, e["ts"]))
        else:
            r.instants.append((key, n, e["ts"]))
    for key, st in stacks.items():
        for o in st:
            r.slices.append((key, o[2], o[3], t_max - o[3], True))
    return r


def _lttng(events, cycles_of=None):
    """cycles_of: the same events' clock values (--clock-cycles), for hcTracer's times."""
    r = Result()
    stacks = {}
    hsa_init = {}
    cl_offset = {}
    cl_held = []
    t_max = max(e["ts"] for e in events)
    clock_offset = None
    if cycles_of:
        clock_offset = events[0]["ts"] - cycles_of[0]["ts"]  # (1 GHz clocks)
    for e in events:
        n, f, ctx, ts = e["name"], e["fields"], e["ctx"], e["ts"]
        tid = ctx.get("vtid", ctx.get("tid"))
        if tid is not None:
            pid = ctx.get("vpid", ctx.get("pid"))
            proc = ("pid", pid) if pid is not None else (("name", ctx["procname"]) if "procname" in ctx else ("trace",))
            key = (proc, "thread", tid)
        else:
            proc = ("trace",)
            key = (proc, "cpu", e["packet"].get("cpu_id"))
        r.tracks.setdefault(key, "thread")
        dev = next(((pair, rule) for pair, rule in DEVICE.items() if n in pair), None)
        if dev:
            (bname, ename), (rule, qname) = dev
            if qname is None:
                qkey = (proc, "queue", f.get("agent_handle"), f.get("queue_id"))
            else:
                qkey = (proc, "queue", qname)
            r.tracks.setdefault(qkey, "gpu_stream")
            t = ts
            v = f.get("timestamp")
            held = False  # an OpenCL device time, moved at the end
            if isinstance(v, int):
                if rule == "hsa_init" and proc in hsa_init:
                    t = hsa_init[proc] + v
                elif rule == "clock" and clock_offset is not None:
                    t = clock_offset + v
                elif rule == "us" and 0 <= v <= (2**63 - 1) // 1000:
                    t = v * 1000
                elif rule == "opencl":
                    t, held = v, True
            name = f.get("name") or next(c for p, c in DEVICE_CAT.items() if p in bname)
            st = stacks.setdefault(qkey, [])
            if n == bname:
                st.append((bname, name, t, held))
            else:
                for k in range(len(st)):
                    if st[k][0] == bname and st[k][1] == name:
                        o = st.pop(k)
                        if o[3] and held:
                            cl_held.append((qkey, name, o[2], t - o[2], proc))
                            off = ts - t
                            cl_offset[proc] = min(cl_offset.get(proc, off), off)
                        else:
                            r.slices.append((qkey, name, o[2], max(0, t - o[2]), False))
                        break
                else:
                    r.unmatched_ends += 1
                    r.instants.append((qkey, name, t))
            continue
        if n == "openclTracer:clust_device_event":
            start = f.get("start_field", f.get("start"))
            end = f.get("end_field", f.get("end"))
            if isinstance(start, int) and isinstance(end, int):
                q = f.get("queue_field", f.get("queue", 0))
                qkey = (proc, "clqueue", q)
                r.tracks.setdefault(qkey, "gpu_stream")
                cl_held.append((qkey, f.get("name") or "command", start, max(0, end - start), proc))
                off = ts - end
                cl_offset[proc] = min(cl_offset.get(proc, off), off)
                continue
        if n == "interceptionTracer:runtime_initialized":
            hsa_init[proc] = ts
        kind, base = classify(n)
        if kind is None:
            r.instants.append((key, n, ts))
            continue
        skey = key
        fifo = False
        if n.startswith("tensorflowTracer:async_operation_"):
            skey = (proc, "async")
            r.tracks.setdefault(skey, "async")
            fifo = True
        nm = f.get("name")
        if n.startswith("lttng_ust_cyg_profile") and "addr" in f:
            sname, match = "0x%x" % f["addr"], ("addr", f["addr"])
        elif isinstance(nm, str) and nm:
            sname, match = nm, ("name", nm)
        elif "syscall_" in base:
            sname, match = base[base.index("syscall_") + 8:], None
        else:
            sname, match = base, None
        st = stacks.setdefault(skey, [])
        if kind == "begin":
            step = f.get("count") if n == "tensorflowTracer:session_start" else None
            st.append((base, match, sname, ts, step, nm == "hsa_init"))
            continue
        order = range(len(st)) if fifo else range(len(st) - 1, -1, -1)
        for k in order:
            o = st[k]
            if o[0] == base and (match is None or o[1] is None or o[1] == match):
                st.pop(k)
                r.slices.append((skey, o[2], o[3], max(0, ts - o[3]), False))
                if o[4] is not None:
                    r.steps.append((o[4], o[3], ts - o[3]))
                if o[5] and proc not in hsa_init:
                    hsa_init[proc] = ts
                break
        else:
            r.unmatched_ends += 1
            r.instants.append((key, n, ts))
    for key, st in stacks.items():
        for o in st:
            if len(o) == 6:   # (base, match, name, ts, step, hsa_init): a thread's or async
                name, t = o[2], o[3]
            else:             # (begin event, name, device time, held): a device queue's
                name, t = o[1], o[2]
            r.slices.append((key, name, t, max(0, t_max - t), True))
    for qkey, name, t, dur, proc in cl_held:
        r.slices.append((qkey, name, t + cl_offset[proc], dur, False))
    return r


def expect(path):
    """The Result `tftracer import path` must give."""
    events = read_trace(path)
    if not events:
        return Result()
    if any(e["name"].startswith("GlobalDef") for e in events):
        return _otf2(events)
    cycles = None
    if any(e["name"].startswith("hcTracer:") for e in events):
        cycles = read_trace(path, cycles=True)
    return _lttng(events, cycles)


def main(argv):
    if len(argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    r = expect(argv[1])
    print(json.dumps(r.counts(), sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
