# SPDX-License-Identifier: MIT
"""torch.distributed under `tftracer record`: ranks, and their collectives on a track.

What a rank records (docs/python.md, "Distributed jobs"; docs/distributed-spec):

* Its own session file. In a job directory (TFT_JOB_DIR, which `record -o JOBDIR`
  sets) a rank writes JOBDIR/rank-<N>.tft, whether a launcher put its rank in
  the environment (mpirun, torchrun, srun) or it learns it from
  init_process_group (torch.multiprocessing.spawn): plan() says which, and
  _record starts the TracingServer then. A Python child of a recorded
  process that becomes a rank records its own file too.
* Every collective and point-to-point call of torch.distributed (all_reduce,
  broadcast, all_gather, barrier, send ... and those DDP makes: its gradient
  buckets' all_reduce through a communication hook equivalent to DDP's
  default, its parameter checks and broadcasts) as a slice `c10d::<name>`,
  category `collective`, on the rank's track "torch.distributed" (kind comm),
  from the call to its completion (an async call's work future), with args
  comm (the process group's id, the same on every rank), coll_seq (the call's
  number on that group on this rank), bytes, group_size, rank_in_group, dtype,
  shape/count, op, root/peer, async.

Nothing here may break the program: a failure turns recording off, said once.
"""
import atexit
import importlib.abc
import importlib.machinery
import os
import sys
import threading
import time
import zlib

TRACK = "torch.distributed"
CAT = "collective"

# name -> (kind, the argument that holds the tensor(s), root argument)
_CALLS = {
    "all_reduce": ("coll", "tensor", None),
    "all_reduce_coalesced": ("coll", "tensors", None),
    "broadcast": ("coll", "tensor", "src"),
    "reduce": ("coll", "tensor", "dst"),
    "all_gather": ("coll", "tensor", None),
    "all_gather_into_tensor": ("coll", "input_tensor", None),
    "_all_gather_base": ("coll", "input_tensor", None),
    "all_gather_coalesced": ("coll", "input_tensor_list", None),
    "gather": ("coll", "tensor", "dst"),
    "scatter": ("coll", "tensor", "src"),
    "reduce_scatter": ("coll", "input_list", None),
    "reduce_scatter_tensor": ("coll", "input", None),
    "_reduce_scatter_base": ("coll", "input", None),
    "all_to_all": ("coll", "input_tensor_list", None),
    "all_to_all_single": ("coll", "input", None),
    "barrier": ("coll", None, None),
    "monitored_barrier": ("coll", None, None),
    "all_gather_object": ("coll", None, None),
    "broadcast_object_list": ("coll", None, "src"),
    "gather_object": ("coll", None, "dst"),
    "scatter_object_list": ("coll", None, "src"),
    "send": ("send", "tensor", "dst"),
    "isend": ("send", "tensor", "dst"),
    "recv": ("recv", "tensor", "src"),
    "irecv": ("recv", "tensor", "src"),
}
# C++ functions DDP calls through torch.distributed: collectives on a process group
_INTERNAL = {
    "_broadcast_coalesced": "process_group",
    "_verify_params_across_processes": "process_group",
}

_lock = threading.Lock()
_local = threading.local()     # .depth: a collective in progress on this thread (object
                               # collectives call tensor ones: only the outermost is one)
_pending = {}                  # token -> record, started and not finished
_done = []                     # finished, not yet handed to the session
_coll = {}                     # comm id -> next coll_seq
_p2p = {}                      # (comm, send?, peer, tag) -> next seq
_next = [0]
_state = {"on": False, "hooked": False, "said": False, "lost": 0, "appended": 0}
_on_rank = []                  # callbacks(rank, size) after init_process_group
_sig = {}


def _say(msg):
    if not _state["said"]:
        _state["said"] = True
        try:
            sys.stderr.write("tftracer record: %s\n" % msg)
            sys.stderr.flush()
        except Exception:
            pass


# ---- where a rank's session goes --------------------------------------------------------------

# (as runtime/job.c reads them)
_RANK_VARS = ("TFT_JOB_RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "RANK", "SLURM_PROCID")
_SIZE_VARS = ("TFT_JOB_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "WORLD_SIZE", "SLURM_NTASKS")


def _env_int(names):
    for n in names:
        v = os.environ.get(n, "")
        if v.isdigit():
            return int(v)
    return None


def job_dir(child):
    """The job directory ranks write to: TFT_JOB_DIR, or for a child of a recorded process
    without one, the recorded session's path without .tft (run.tft -> run/)."""
    d = os.environ.get("TFT_JOB_DIR")
    if d:
        return d
    if child:
        s = os.environ.get("TFT_SESSION", "").replace("%%", "%")
        if s:
            return s[:-4] if s.endswith(".tft") else s + ".ranks"
    return None


def rank_path(d, rank):
    return os.path.join(d.rstrip("/") or "/", "rank-%d.tft" % rank)


def plan(child):
    """How this Python process records: ("file", None) as ever (TFT_SESSION), ("rank", path)
    a rank whose launcher said so, ("later", None) a rank once init_process_group says which,
    ("none", None) not at all (a child that is no rank, or inherited its parent's rank)."""
    d = job_dir(child)
    if d is None:
        return ("file", None) if not child else ("none", None)
    rank = _env_int(_RANK_VARS)
    taken = os.environ.get("TFT_JOB_RANK_TAKEN")
    if rank is not None and taken is not None and str(rank) == taken:
        return ("none", None)  # a worker of a rank (its DataLoader ...): the rank's file is its parent's
    if rank is not None:
        return ("rank", rank_path(d, rank))
    return ("later", None)


def env_rank():
    return _env_int(_RANK_VARS), _env_int(_SIZE_VARS)


def on_rank(fn):
    """Call fn(rank, size) once init_process_group has made this process a rank."""
    _on_rank.append(fn)


# ---- the collectives ---------------------------------------------------------------------------

def _nbytes(t):
    try:
        if isinstance(t, (list, tuple)):
            return sum(_nbytes(x) for x in t)
        return int(t.numel()) * int(t.element_size())
    except Exception:
        return None


def _describe(t, args):
    try:
        while isinstance(t, (list, tuple)) and t:
            args["tensors"] = len(t) if "tensors" not in args else args["tensors"]
            t = t[0]
        args["dtype"] = str(t.dtype).replace("torch.", "")
        args["shape"] = list(t.shape)
    except Exception:
        pass


def _comm(dist, group):
    """(comm id, group size, rank in group, the group) of a call's process group; comm 0 is the
    default group, another group's id a hash of its name and ranks (the same on every rank)."""
    c10d = dist.distributed_c10d
    default = c10d._get_default_group()
    pg = default if group is None or group is getattr(c10d.GroupMember, "WORLD", None) else group
    if pg is default:
        cid = 0
    else:
        try:
            name = c10d._pg_names.get(pg, "") if hasattr(c10d, "_pg_names") else ""
            ranks = sorted(c10d._pg_group_ranks.get(pg, {}).keys()) if hasattr(c10d, "_pg_group_ranks") else []
        except Exception:
            name, ranks = "", []
        cid = (zlib.crc32(("%s:%s" % (name, ranks)).encode()) << 20 | len(ranks)) & ((1 << 53) - 1) or 1
    try:
        return cid, dist.get_world_size(pg), dist.get_rank(pg), pg
    except Exception:
        return cid, -1, -1, pg


def _record(name, dist, orig, sig, a, kw):
    """One call: its slice begins now and ends when it (or its work) completes."""
    kind, targ, rarg = _CALLS.get(name, ("coll", None, None))
    try:
        bound = sig.bind_partial(*a, **kw).arguments
    except Exception:
        bound = {}
    group = bound.get("group", bound.get("process_group"))
    try:
        cid, gsize, grank, pg = _comm(dist, group)
    except Exception:
        return orig(*a, **kw)  # not initialised (the call raises as it would)
    if grank < 0 and gsize < 0:
        return orig(*a, **kw)
    args = {"comm": cid, "group_size": gsize, "rank_in_group": grank}
    t = bound.get(targ) if targ else None
    if t is not None:
        b = _nbytes(t)
        if b is not None:
            args["bytes"] = b
        _describe(t, args)
    elif kind == "coll":
        args["bytes"] = 0 if name in ("barrier", "monitored_barrier") else -1
    if args.get("bytes") == -1:
        del args["bytes"]
    op = bound.get("op")
    if op is not None:
        args["op"] = str(getattr(op, "name", op)).split(".")[-1]
    async_op = bool(bound.get("async_op", False)) or name in ("isend", "irecv")
    args["async"] = async_op
    with _lock:
        tok = _next[0]
        _next[0] += 1
        if kind == "coll":
            args["coll_seq"] = _coll.get(cid, 0)
            _coll[cid] = args["coll_seq"] + 1
            if rarg and bound.get(rarg) is not None:
                args["root"] = int(bound[rarg])
        else:
            peer = bound.get(rarg)
            tag = int(bound.get("tag", 0) or 0)
            args["tag"] = tag
            if peer is not None:
                args["peer"] = int(peer)
                key = (cid, kind == "send", int(peer), tag)
                args["seq"] = _p2p.get(key, 0)
                _p2p[key] = args["seq"] + 1
        rec = {"name": "c10d::" + name, "t0": time.monotonic_ns(), "t1": None, "args": args}
        _pending[tok] = rec
    _local.depth = 1
    try:
        r = orig(*a, **kw)
    except BaseException:
        _local.depth = 0
        _finish(tok, failed=True)
        raise
    _local.depth = 0
    if kind == "recv" and name == "recv" and "peer" not in args and isinstance(r, int):
        args["peer"] = r  # (recv from any source returns the sender)
    if async_op and r is not None:
        try:
            r.get_future().add_done_callback(lambda _f, tok=tok: _finish(tok))
            return r
        except Exception:
            pass  # (gloo's send and recv works have no future: their call is their slice)
    _finish(tok)
    return r


def _finish(tok, failed=False):
    with _lock:
        rec = _pending.pop(tok, None)
        if rec is None:
            return
        rec["t1"] = time.monotonic_ns()
        if failed:
            rec["args"]["failed"] = True
        _done.append(rec)
        # (the live page sees them within half a second, the file within the next commit)
        many = len(_done) >= 256 or rec["t1"] - _done[0]["t1"] > 500000000
    if many:
        flush()


def flush(final=False):
    """Hand the finished calls to the session, in order of their start, up to the first still
    in flight (final: all, those in flight ending now, marked unfinished)."""
    try:
        from . import _tftracer
    except Exception:
        return
    with _lock:
        if final:
            now = time.monotonic_ns()
            for rec in _pending.values():
                rec["t1"] = now
                rec["args"]["unfinished"] = True
                _done.append(rec)
            _pending.clear()
        if not _done:
            return
        first = min((r["t0"] for r in _pending.values()), default=None)
        _done.sort(key=lambda r: r["t0"])
        k = len(_done) if first is None else sum(1 for r in _done if r["t0"] <= first)
        batch, _done[:] = _done[:k], _done[k:]
    if not batch:
        return
    try:
        _state["appended"] += _tftracer.append_slices(
            "comm", TRACK, [(r["name"], CAT, r["t0"], r["t1"], r["args"]) for r in batch])
    except Exception:
        _state["lost"] += len(batch)  # no session (yet, or any more): not recorded


def _wrap(dist, mod, name, orig):
    import inspect
    try:
        sig = inspect.signature(orig)
    except (TypeError, ValueError):
        return None

    def traced(*a, **kw):
        if not _state["on"] or getattr(_local, "depth", 0):
            return orig(*a, **kw)
        return _record(name, dist, orig, sig, a, kw)
    traced.__wrapped__ = orig
    traced.__name__ = getattr(orig, "__name__", name)
    traced.__qualname__ = getattr(orig, "__qualname__", name)
    traced.__doc__ = getattr(orig, "__doc__", None)
    traced._tftracer = True
    return traced


def _hook_init(dist, c10d):
    """init_process_group: once it returns, the process is a rank (its session starts, if
    it waited for its rank), and the clocks are exchanged with rank 0; again before
    destroy_process_group of the default group."""
    orig = c10d.init_process_group
    orig_destroy = getattr(c10d, "destroy_process_group", None)

    def init_process_group(*a, **kw):
        r = orig(*a, **kw)
        try:
            rank, size = dist.get_rank(), dist.get_world_size()
            for fn in list(_on_rank):
                fn(rank, size)
        except Exception as e:
            _say("recording the rank failed: %s" % e)
        if _state["on"]:
            clock_sync(dist, "init")
        return r
    init_process_group.__wrapped__ = orig
    init_process_group.__doc__ = orig.__doc__
    init_process_group._tftracer = True
    for m in (c10d, dist):
        if getattr(m, "init_process_group", None) is orig:
            setattr(m, "init_process_group", init_process_group)
    if orig_destroy is None:
        return

    def destroy_process_group(group=None):
        if _state["on"] and group is None:
            try:
                if dist.is_initialized():
                    clock_sync(dist, "finalize")
            except Exception:
                pass
        return orig_destroy(group)
    destroy_process_group.__wrapped__ = orig_destroy
    destroy_process_group.__doc__ = orig_destroy.__doc__
    destroy_process_group._tftracer = True
    for m in (c10d, dist):
        if getattr(m, "destroy_process_group", None) is orig_destroy:
            setattr(m, "destroy_process_group", destroy_process_group)


def _hook_dist(c10d):
    dist = sys.modules.get("torch.distributed")
    if dist is None or _state["hooked"]:
        return
    _state["hooked"] = True
    _hook_init(dist, c10d)
    for name in _CALLS:
        orig = getattr(c10d, name, None)
        if orig is None or getattr(orig, "_tftracer", False):
            continue
        w = _wrap(dist, c10d, name, orig)
        if w is None:
            continue
        for m in (c10d, dist):
            if getattr(m, name, None) is orig:
                setattr(m, name, w)
    for name, _ in _INTERNAL.items():
        orig = getattr(dist, name, None)
        if orig is None or getattr(orig, "_tftracer", False):
            continue

        def internal(*a, _orig=orig, _name=name, **kw):
            if not _state["on"] or getattr(_local, "depth", 0):
                return _orig(*a, **kw)
            return _record(_name, dist, _orig, _InternalSig(), a, kw)
        internal._tftracer = True
        setattr(dist, name, internal)


class _InternalSig:
    """The C++ functions' arguments: the process group first."""

    class _B:
        def __init__(self, a):
            self.arguments = {"process_group": a[0] if a else None}
            if len(a) > 1:
                self.arguments["tensor"] = a[1]

    def bind_partial(self, *a, **kw):
        return self._B(a)


_CALLS.update({"_broadcast_coalesced": ("coll", "tensor", None),
               "_verify_params_across_processes": ("coll", None, None)})


# ---- clock exchange with rank 0 (meta clock_sync, as the MPI interceptor's) -----------------------

ROUNDS = 10
_sync = {"points": [], "said": False}


def _now():
    """The session's clock: CLOCK_MONOTONIC plus the test-only skew the runtime adds."""
    return time.monotonic_ns() + _skew()


def _skew():
    try:
        return int(os.environ.get("TFT_TEST_CLOCK_SKEW_NS", "0") or 0)
    except ValueError:
        return 0


def clock_sync(dist, at):
    """Rank 0 and each rank k play ROUNDS rounds of ping-pong through the default group's
    store (a key of its own per round: the program's keys and messages are untouched):
    rank 0 notes its clock t0 and sets the ping, k answers with its clock, 0 notes t1
    when the answer is there; then 0 gives k its rows. Each rank stores the rows it took
    part in as meta clock_sync (docs/python.md): the job layer's offset of k is
    local - (ref_t0 + ref_t1) / 2 of the round with the smallest ref_t1 - ref_t0, within
    (ref_t1 - ref_t0) / 2. Every wait is bounded (a rank that does not take part, not
    being recorded, costs the others TFT_TORCH_CLOCK_WAIT_S, default 10 s, once)."""
    import json
    from datetime import timedelta
    from . import _tftracer
    if os.environ.get("TFT_TORCH_CLOCK_SYNC") == "0":
        return
    c10d = dist.distributed_c10d
    try:
        wait = timedelta(seconds=float(os.environ.get("TFT_TORCH_CLOCK_WAIT_S", "10") or 10))
        rank, size = dist.get_rank(), dist.get_world_size()
        store = c10d.PrefixStore("tftracer/clock/%s/" % at, c10d._get_default_store())
    except Exception as e:
        _say("no clock exchange (%s)" % e)
        return
    if size < 2:
        return
    rows = []
    try:
        if rank == 0:
            for k in range(1, size):
                try:
                    store.wait(["ready/%d" % k], wait)
                except Exception:
                    continue  # (rank k does not take part)
                mine = []
                for i in range(ROUNDS):
                    t0 = _now()
                    store.set("ping/%d/%d" % (k, i), str(t0))
                    store.wait(["pong/%d/%d" % (k, i)], wait)
                    local = int(store.get("pong/%d/%d" % (k, i)))
                    t1 = _now()
                    mine.append({"at": at, "ref_t0": t0, "ref_t1": t1, "local": local})
                store.set("rows/%d" % k, json.dumps(mine))
                rows += [dict(r, peer=k) for r in mine]
        else:
            store.set("ready/%d" % rank, "1")
            for i in range(ROUNDS):
                store.wait(["ping/%d/%d" % (rank, i)], wait)
                store.set("pong/%d/%d" % (rank, i), str(_now()))
            store.wait(["rows/%d" % rank], wait)
            rows = json.loads(store.get("rows/%d" % rank))
    except Exception as e:
        _say("the clock exchange at %s failed (%s)" % (at, e))
        return
    _sync["points"] += rows
    try:
        _tftracer.set_meta("clock_sync", json.dumps({"reference_rank": 0, "points": _sync["points"]},
                                                    separators=(",", ":")))
    except Exception as e:
        _say("clock_sync not stored (%s)" % e)


# ---- DDP: its gradient all_reduce, through a communication hook ----------------------------------

def _hook_ddp(mod):
    """DistributedDataParallel's reducer calls the process group from C++: its default
    all_reduce of each gradient bucket is replaced by the same computation as a
    communication hook (the bucket divided by the group's size, then summed by
    dist.all_reduce), so that each bucket's all_reduce is a call of torch.distributed.
    A hook the program registers itself runs instead (recorded where it calls
    torch.distributed); a built-in one runs as its Python twin."""
    DDP = getattr(mod, "DistributedDataParallel", None)
    if DDP is None or getattr(DDP.__init__, "_tftracer", False):
        return
    orig_init = DDP.__init__
    orig_register = getattr(DDP, "register_comm_hook", None)
    orig_builtin = getattr(DDP, "_register_builtin_comm_hook", None)
    if orig_register is None:
        return

    def _default(state, bucket):
        from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
        return default_hooks.allreduce_hook(state, bucket)

    def _dispatch(ddp):
        def hook(state, bucket):
            user = getattr(ddp, "_tft_user_hook", None)
            if user is not None:
                return user[1](user[0], bucket)
            return _default(ddp.process_group, bucket)
        hook.__qualname__ = "tftracer.allreduce_hook"
        return hook

    def __init__(self, *a, **kw):
        orig_init(self, *a, **kw)
        if not _state["on"]:
            return
        try:
            self._tft_user_hook = None
            orig_register(self, None, _dispatch(self))
            self._tft_hooked = True
        except Exception as e:
            _say("DDP's gradient all_reduce is not recorded: %s" % e)

    def register_comm_hook(self, state, hook):
        if not getattr(self, "_tft_hooked", False):
            return orig_register(self, state, hook)
        check = getattr(self, "_check_comm_hook", None)
        if check is not None:
            check(hook)
        self._tft_user_hook = (state, hook)

    def _register_builtin_comm_hook(self, comm_hook_type):
        if not getattr(self, "_tft_hooked", False) or orig_builtin is None:
            return orig_builtin(self, comm_hook_type)
        from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
        name = str(getattr(comm_hook_type, "name", comm_hook_type))
        fn = default_hooks.fp16_compress_hook if "FP16" in name else default_hooks.allreduce_hook
        self._tft_user_hook = (self.process_group, fn)

    __init__._tftracer = True
    __init__.__wrapped__ = orig_init
    DDP.__init__ = __init__
    DDP.register_comm_hook = register_comm_hook
    if orig_builtin is not None:
        DDP._register_builtin_comm_hook = _register_builtin_comm_hook


# ---- installation -----------------------------------------------------------------------------------

_WATCH = {"torch.distributed.distributed_c10d": _hook_dist, "torch.nn.parallel.distributed": _hook_ddp}


class _Loader(importlib.abc.Loader):
    def __init__(self, loader, fn):
        self._loader, self._fn = loader, fn

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        try:
            self._fn(module)
        except Exception as e:
            _say("torch.distributed is not recorded (%s)" % e)


class _Finder(importlib.abc.MetaPathFinder):
    """Notices the import of the modules in _WATCH, importing nothing itself."""

    def find_spec(self, name, path, target=None):
        fn = _WATCH.get(name)
        if fn is None:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return None
        spec.loader = _Loader(spec.loader, fn)
        return spec


_installed = [False]


def install():
    """Follow torch.distributed in this process (once; the hooks wait for its import)."""
    if _installed[0]:
        return
    _installed[0] = True
    _state["on"] = True
    need = False
    for name, fn in _WATCH.items():
        mod = sys.modules.get(name)
        if mod is not None:
            fn(mod)
        else:
            need = True
    if need:
        sys.meta_path.insert(0, _Finder())
    atexit.register(flush, True)


def stop():
    """No more recording (the session ends): what finished is handed over first."""
    flush(True)
    _state["on"] = False


def recorded():
    """Calls handed to the session so far."""
    return _state["appended"]
