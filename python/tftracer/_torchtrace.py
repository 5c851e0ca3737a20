# SPDX-License-Identifier: MIT
"""A torch.profiler run as a Kineto-style Chrome trace, for the live import.

A PyTorch built with Kineto writes this itself (export_chrome_trace): cpu_op,
user_annotation and python_function events on the OS pid and thread ids, with
"Input Dims", "Input type", "Sequence number" ... in their args. A build
without Kineto (Debian's python3-torch) exports the legacy format instead: no
categories, no args, every op on a process "CPU functions" and thread 1. Its
results hold all of it though (the event tree: times in ns, the recording
thread, inputs; the event list: FLOPs, forward thread), and write_trace()
writes the Kineto form from them, so that a traced step's ops land on the
job's own process and threads with their shapes, categories and args.

The profiler numbers threads 1, 2 ... in the order they first record
something; THREAD_MARK, recorded on a thread right after the profiler starts,
tells which number that thread (the one running the step) has.
"""
import json
import os

THREAD_MARK = "tftracer::thread"
MODULE_PREFIX = "nn.Module: "  # (_models.SCOPE_PREFIX)
SYNTH_TID = 1 << 40  # thread numbers with no OS thread id known: SYNTH_TID + n


def range_api(torch):
    """(enter(name) -> handle, leave(handle)): a profiler range (a record_function) that
    records nothing else. record_function itself makes a tensor in its constructor and
    one as its handle, which the profiler records as ops of the step (aten::zeros,
    aten::empty) that the program never ran."""
    try:
        ops = torch.ops.profiler
        enter = ops._record_function_enter_new
        leave = ops._record_function_exit._RecordFunction
        return (lambda name: enter(name, None)), leave
    except Exception:  # an older PyTorch: record_function
        rf = torch.autograd.profiler.record_function

        def enter_rf(name):
            r = rf(name)
            r.__enter__()
            return r
        return enter_rf, (lambda r: r.__exit__(None, None, None))


def range_hook(torch):
    """A zone_hook: name -> a context manager over range_api's range."""
    enter, leave = range_api(torch)

    class Range:
        __slots__ = ("name", "h")

        def __init__(self, name):
            self.name = name
            self.h = None

        def __enter__(self):
            self.h = enter(self.name)
            return self

        def __exit__(self, *exc):
            h, self.h = self.h, None
            if h is not None:
                leave(h)
            return False
    return Range


def mark_thread(torch):
    """Record THREAD_MARK on this thread (the profiler runs): which profiler thread
    number is this thread."""
    enter, leave = range_api(torch)
    leave(enter(THREAD_MARK))


def kineto_exports(torch):
    """True when export_chrome_trace already writes the Kineto form."""
    try:
        return bool(torch.autograd.kineto_available())
    except Exception:
        return False


def profile_kwargs(torch):
    """What a traced step's profiler records beyond the ops: input shapes, FLOPs
    (later analyses read them), where this PyTorch knows these keywords."""
    import inspect
    try:
        params = inspect.signature(torch.profiler.profile).parameters
    except (TypeError, ValueError):
        return {}
    return {k: True for k in ("record_shapes", "with_flops") if k in params}


def _tag_name(tag):
    s = str(tag)
    return s.rsplit(".", 1)[-1]


def _scope_name(scope):
    return str(scope).rsplit(".", 1)[-1]


def _concrete(values):
    """Kineto's "Concrete Inputs": scalars as text, "" for tensors and the rest."""
    out = []
    for v in values:
        if isinstance(v, (bool, int, float, str)) and not isinstance(v, bytes):
            out.append(str(v))
        else:
            out.append("")
    return out


def _comm(tid):
    """An OS thread's name (what the runtime names its track), or None."""
    try:
        with open("/proc/self/task/%d/comm" % tid, encoding="utf-8", errors="replace") as f:
            return f.read().strip() or None
    except OSError:
        return None


def _program():
    """The process's name as the runtime gives it (program_invocation_short_name)."""
    try:
        with open("/proc/self/comm", encoding="utf-8", errors="replace") as f:
            return f.read().strip() or "python"
    except OSError:
        return "python"


def _events_of(results):
    """(correlation id -> KinetoEvent) for FLOPs and the forward thread."""
    by_id = {}
    try:
        for k in results.events():
            by_id[k.correlation_id()] = k
    except Exception:
        pass
    return by_id


def write_trace(prof, path, tid_map, pid=None):
    """Write prof's results (a stopped torch.profiler.profile) to path as a Kineto
    Chrome trace. tid_map: {profiler thread number: OS thread id} (the step's
    thread, found by THREAD_MARK, is added). Returns the number of events written.
    Raises when this PyTorch keeps no event tree (then use export_chrome_trace)."""
    results = prof.profiler.kineto_results
    roots = results.experimental_event_tree()
    kinfo = _events_of(results)
    pid = os.getpid() if pid is None else pid
    names = {}  # enum value -> its name (str() of a pybind enum is slow)

    def name_of(v, fn):
        got = names.get(v)
        if got is None:
            got = names[v] = fn(v)
        return got

    def info(c):  # (each node's name and tag read once: pybind attributes are slow)
        return c, c.name, name_of(c.tag, _tag_name)
    slice_kinds = ("TorchOp", "Backend", "PyCall", "PyCCall")
    nodes = []  # (node, name, kind) in depth-first order
    stack = [info(r) for r in reversed(list(roots))]
    while stack:
        item = stack.pop()
        nodes.append(item)
        kids = [info(c) for c in item[0].children]
        # An op whose only child is an op of its own name (a redispatch: aten::div
        # calling aten::div) is one op, as PyTorch's own tables and its legacy export
        # count it (EventList._remove_dup_nodes): the child is left out, its children
        # kept, so that counts and FLOPs per op equal key_averages().
        while kids:
            ops = [k for k in kids if k[2] in slice_kinds]
            if len(ops) != 1 or ops[0][1] != item[1]:
                break
            kids = [info(c) for c in ops[0][0].children]
        stack.extend(reversed(kids))
    tid_map = dict(tid_map)
    marks = [n for n, name, _ in nodes if name == THREAD_MARK]
    if marks and "native" in tid_map:
        tid_map[marks[0].start_tid] = tid_map["native"]
    tid_map.pop("native", None)

    def tid_of(t):
        return tid_map.get(t, SYNTH_TID + int(t))

    base = None
    out = []
    tids = {}   # profiler thread number -> tid (and the ones seen)
    for n, name, kind in nodes:
        if name == THREAD_MARK:
            continue
        ef = None
        if kind == "TorchOp":
            ef = n.extra_fields
            if name_of(ef.scope, _scope_name) != "USER_SCOPE":
                cat = "cpu_op"
            elif name.startswith(MODULE_PREFIX):
                cat = "python_module"  # a module's forward (_models.Scopes)
            else:
                cat = "user_annotation"
        elif kind == "Backend":
            cat = "cpu_op"
        elif kind in ("PyCall", "PyCCall"):
            cat = "python_function"
        else:
            continue  # allocations and the like: not slices
        start = n.start_time_ns
        end = n.end_time_ns
        if end < start:
            continue  # never closed
        if base is None or start < base:
            base = start
        num = n.start_tid
        tid = tids.get(num)
        if tid is None:
            tid = tids[num] = tid_of(num)
        corr = n.correlation_id
        args = {"External id": corr}
        if ef is not None:
            inputs = ef.inputs
            shapes = inputs.shapes
            if shapes or cat == "cpu_op":  # (every op has its dims, [] for none)
                args["Input Dims"] = shapes
                args["Input type"] = inputs.dtypes
                strides = inputs.strides
                if any(strides):
                    args["Input Strides"] = strides
                vals = inputs.ivalues
                if vals:
                    conc = _concrete(vals)
                    if any(conc):
                        args["Concrete Inputs"] = conc
            seq = ef.sequence_number
            k = kinfo.get(corr)
            if seq >= 0:
                args["Sequence number"] = seq
                fwd = k.fwd_thread_id() if k is not None else 0
                if fwd:  # (0: none recorded, a forward op)
                    args["Fwd thread id"] = tid_of(fwd)
            if k is not None:
                flops = k.flops()
                if flops:
                    args["flops"] = flops
        out.append((start, end, name, cat, tid, args))
    base = (base // 1000000000) * 1000000000 if base is not None else 0
    # (x / 1000 prints as the shortest decimal that reads back the same: 3 decimals at most)
    ev = [{"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": (start - base) / 1000,
           "dur": (end - start) / 1000, "args": args} for start, end, name, cat, tid, args in out]
    ev.append({"ph": "M", "name": "process_name", "pid": pid, "args": {"name": _program()}})
    for num, tid in sorted(tids.items()):
        tname = _comm(tid) if tid < SYNTH_TID else None
        ev.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid,
                   "args": {"name": tname or "torch thread %d" % num}})
    doc = {"schemaVersion": 1, "displayTimeUnit": "ms", "baseTimeNanoseconds": base,
           "traceName": path, "traceEvents": ev}
    text = json.dumps(doc, separators=(",", ":"))  # (the C encoder: dump() to a file is not)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return len(out)
