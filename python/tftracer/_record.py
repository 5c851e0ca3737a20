# SPDX-License-Identifier: MIT
"""`tftracer record -- python3 train.py`: tracing a Python program that does not know.

The CLI starts the program with a `sitecustomize` that calls install() before
the program's first line (only where TFT_RECORD=1). Nothing starts then: when
the program imports torch.optim (import torch does), a TracingServer opens (the session file is
TFT_SESSION, the port and host come from TFT_RECORD_* variables the CLI sets)
and steps come without any change to the program: each optimizer step ends
one step of the run kind "train" and begins the next. So the first step
starts when the first optimizer step returns (the warm-up iteration before it
is not one), and the open step when the program ends (its tail: evaluation,
saving) is abandoned, never recorded. Several optimizers: one sets the pace
(the first that steps; another takes over when it is gone or when another
steps twice in a row without it: a new training phase). A process that ends
without a step gives the session file back (it deletes it), so that the next
Python process of a wrapper script can take it.

A rank of a distributed job records its own file (python/tftracer/_distributed.py:
JOBDIR/rank-<N>.tft, its torch.distributed calls on a comm track), also when it is a
child of a recorded process (TFT_RECORD=started): its server starts when it knows its
rank, from its launcher's environment or from init_process_group.

Nothing here may break the program: any failure says so once on stderr and
leaves the program running untraced. See docs/cmd-record.md.
"""
import atexit
import importlib.abc
import importlib.machinery
import os
import sys
import threading
import warnings
import weakref

_KIND = "train"
_pid = None         # the process that installed the hooks (a fork child does nothing)
_server = None      # the TracingServer, once started
_step = None        # the open step (a step context of the server)
_lead = None        # weakref to the optimizer that sets the pace
_others = 0         # steps of other optimizers in a row since the lead's last one
_lock = threading.Lock()
_local = threading.local()  # .depth: optimizer steps in progress on this thread (super().step())
_unhooks = []
_warned = False
_plan = ("file", None)  # how this process records (_distributed.plan)


def _write(msg):
    """A line on stderr (never stdout: that is the program's)."""
    try:
        sys.stderr.write("tftracer record: %s\n" % msg)
        sys.stderr.flush()
    except Exception:
        pass


def _say(msg):
    """News (where the UI is): not with -q."""
    if os.environ.get("TFT_RECORD_QUIET") != "1":
        _write(msg)


def _warn(msg):
    """Something went wrong (tracing is off, or partly): said once, even with -q."""
    global _warned
    if not _warned:
        _warned = True
        _write(msg)


def _start_server(session=None, rank=None):
    """The TracingServer, on TFT_RECORD_PORT (+ the rank of a job's rank; any free port when
    that one is taken), writing `session` (default TFT_SESSION)."""
    import tftracer
    port = int(os.environ.get("TFT_RECORD_PORT", "9999"))
    if port and rank:
        port = port + rank if port + rank <= 65535 else 0
    host = os.environ.get("TFT_RECORD_HOST", "127.0.0.1")
    token = os.environ.get("TFT_RECORD_TOKEN") or None
    msgs = []
    srv = None
    for p in ((port, 0) if port else (0,)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            srv = tftracer.TracingServer(port=p, host=host, token=token,
                                         session=session.replace("%", "%%") if session else None)
        msgs += [str(w.message) for w in caught]
        if srv.url:
            if p != port:
                _say("port %d is taken: serving on %d instead" % (port, srv.port))
            return srv
        srv.stop()  # (TracingServer stopped the runtime it started, its empty file removed)
    raise RuntimeError("; ".join(msgs) or "the server did not start")


def _boundary(opt):
    """An optimizer step returned (the outermost one on its thread): the next step."""
    global _step, _lead, _others
    if os.getpid() != _pid:
        return
    with _lock:
        lead = _lead() if _lead is not None else None
        if lead is None:
            _lead, _others = weakref.ref(opt), 0
        elif lead is not opt:
            _others += 1
            if _others < 2:
                return
            _lead, _others = weakref.ref(opt), 0  # another phase: this one sets the pace now
        else:
            _others = 0
        try:
            if _server is None:
                return
            if _step is not None:
                _step.__exit__(None, None, None)
            _step = _server.step(_KIND)
            _step.__enter__()
        except Exception as e:  # never break training
            _step = None
            _warn("step tracking stopped: %s" % e)
            _unhook()


def _unhook():
    for undo in _unhooks:
        try:
            undo()
        except Exception:
            pass
    del _unhooks[:]


def _wrap_step(step):
    def step_and_mark(self, *args, **kwargs):
        depth = getattr(_local, "depth", 0)
        _local.depth = depth + 1
        try:
            r = step(self, *args, **kwargs)
        finally:
            _local.depth = depth
        if depth == 0:  # (a subclass calling super().step() is one step)
            _boundary(self)
        return r
    step_and_mark.__wrapped__ = step
    step_and_mark.__name__ = getattr(step, "__name__", "step")
    step_and_mark.__qualname__ = getattr(step, "__qualname__", "step")
    step_and_mark.__doc__ = getattr(step, "__doc__", None)
    step_and_mark.hooked = True  # torch's own profiler wrapper is below this one
    step_and_mark._tftracer = True
    return step_and_mark


def _hook_torch(mod):
    """Wrap each optimizer class's step where torch puts its own profiler wrapper: in
    the method every Optimizer.__init__ calls (_hook_for_profile in 1.x,
    _patch_step_function in 2.x)."""
    opt_cls = getattr(mod, "Optimizer", None)
    for name in ("_patch_step_function", "_hook_for_profile"):
        orig = getattr(opt_cls, name, None)
        if orig is not None:
            break
    else:
        _warn("this PyTorch has no optimizer hook that tftracer knows: steps are not tracked")
        return

    def hook(self, *args, **kwargs):
        r = orig(self, *args, **kwargs)
        cls = self.__class__
        step = cls.__dict__.get("step") or getattr(cls, "step", None)
        if step is not None and not getattr(step, "_tftracer", False):
            cls.step = _wrap_step(step)
        return r

    setattr(opt_cls, name, hook)
    _unhooks.append(lambda: setattr(opt_cls, name, orig))
    _start()


class _Loader(importlib.abc.Loader):
    """Runs a module's own loader, then fn(module)."""

    def __init__(self, loader, fn):
        self._loader, self._fn = loader, fn

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        try:
            self._fn(module)
        except Exception as e:
            _warn("tracing is off (%s); the program runs untraced" % e)


class _Finder(importlib.abc.MetaPathFinder):
    """Notices the import of torch.optim.optimizer, without importing anything itself."""
    NAME = "torch.optim.optimizer"

    def find_spec(self, name, path, target=None):
        if name != self.NAME:
            return None
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return None
        spec.loader = _Loader(spec.loader, _hook_torch)
        return spec


def _start(rank=None, size=None):
    """Open the TracingServer (at the first torch.optim import; a rank that learns its rank
    from init_process_group: then, with rank and size)."""
    global _server
    if _server is not None or os.getpid() != _pid:
        return
    from . import _distributed
    kind, path = _plan
    if kind == "later":
        if rank is None:
            return
        path = _distributed.rank_path(_distributed.job_dir(True), rank)
        os.makedirs(os.path.dirname(path), exist_ok=True)
    elif kind == "rank":
        rank, size = _distributed.env_rank()
    try:
        srv = _start_server(path, rank)
    except Exception as e:
        os.environ["TFT_RECORD"] = "failed"
        _warn("tracing is off (%s); the program runs untraced" % e)
        _unhook()
        return
    _server = srv
    os.environ["TFT_RECORD"] = "started"  # Python processes it starts now are not traced again
    if rank is not None:
        os.environ["TFT_JOB_RANK_TAKEN"] = str(rank)  # (its workers are not that rank)
        if kind == "later":
            from . import _tftracer
            _tftracer.set_job(rank, size if size is not None else -1)
    os.environ["TFT_RECORD_URL"] = srv.url  # for the program, and what it starts
    every = int(os.environ.get("TFT_RECORD_TRACE_EVERY", "0") or 0)
    nxt = int(os.environ.get("TFT_RECORD_TRACE_NEXT", "0") or 0)
    if every:
        srv.trace_every(every)
    if nxt:
        srv.trace_next(nxt)
    _say("recording to %s, live at %s" % (srv.session_path, srv.url))


def _close():
    global _server, _step
    if os.getpid() != _pid:
        return  # a fork child: the parent's server and session are not its own
    _unhook()
    with _lock:
        srv, _server = _server, None
        step, _step = _step, None
    if srv is None:
        return
    # The open step is the program's tail, not a training step: abandoned.
    if step is not None:
        try:
            step.abandon()
        except Exception:
            pass
    path = srv.session_path
    try:
        from . import _distributed
        _distributed.stop()  # (its last calls into the session first)
        st = srv.status()
        empty = not (st.get("steps") or st.get("events") or st.get("imported_events") or
                     _distributed.recorded())
    except Exception:
        empty = False
    try:
        # `record --serve` serves the session at this address next: the live page says so
        if os.environ.get("TFT_RECORD_SERVE") == "1" and srv._srv is not None and \
                srv.port == int(os.environ.get("TFT_RECORD_PORT", "0") or 0):
            srv._srv.set_end_next("serve")
    except Exception:
        pass
    try:
        srv.stop()
    except Exception:
        pass
    if empty:
        # No step, no event: the session file is given back for the next Python
        # process of the command (a wrapper script's version check came first).
        from . import _remove_session_file
        _remove_session_file(path)


def install():
    """Where TFT_RECORD=1: wait for torch.optim (once per process). A child of a recorded
    process (TFT_RECORD=started) records only as a rank of a distributed job."""
    global _pid, _plan
    state = os.environ.get("TFT_RECORD")
    if _pid is not None or state not in ("1", "started"):
        return
    from . import _distributed
    _plan = _distributed.plan(child=state == "started")
    if _plan[0] == "none":
        return
    _pid = os.getpid()
    atexit.register(_close)
    _distributed.install()
    if _plan[0] == "later":
        _distributed.on_rank(_start)
    mod = sys.modules.get(_Finder.NAME)
    if mod is not None:
        _hook_torch(mod)
    else:
        sys.meta_path.insert(0, _Finder())


start = install  # (the name the first release used)
