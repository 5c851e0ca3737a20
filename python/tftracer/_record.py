# SPDX-License-Identifier: MIT
"""`tftracer record -- python3 train.py`: tracing a Python program that does not know.

The CLI starts the program with a `sitecustomize` that calls start() before the
program's first line. start() opens a TracingServer (the session file, port and
host come from TFT_RECORD_* variables the CLI sets) and makes steps without
any change to the program: each optimizer step of PyTorch ends one step of
the run kind "train" and begins the next, so the first step starts when the
first optimizer step returns (the warm-up iteration before it is not one).
The open step when the program ends (its tail: evaluation, saving) is not
one either. Several optimizers (a GAN): the first that steps sets the pace.

Nothing here may break the program: any failure warns once on stderr and
leaves the program running untraced. See docs/cmd-record.md.
"""
import atexit
import importlib.abc
import importlib.util
import os
import sys
import threading

_server = None
_step = None
_lead = None  # the optimizer whose steps end steps (a weak identity: id())
_lock = threading.Lock()
_KIND = "train"


def _warn(msg):
    try:
        sys.stderr.write("tftracer record: %s\n" % msg)
        sys.stderr.flush()
    except Exception:
        pass


def _boundary(opt):
    """An optimizer step returned: end the current step, begin the next."""
    global _step, _lead
    srv = _server
    if srv is None:
        return
    with _lock:
        if _lead is None:
            _lead = id(opt)
        elif _lead != id(opt):
            return
        try:
            if _step is not None:
                _step.__exit__(None, None, None)
            _step = srv.step(_KIND)
            _step.__enter__()
        except Exception as e:  # never break training
            _step = None
            _warn("step tracking stopped: %s" % e)
            _unhook()


_hooked = []


def _unhook():
    for undo in _hooked:
        try:
            undo()
        except Exception:
            pass
    del _hooked[:]


def _hook_torch(mod):
    """Steps from torch.optim: the global post-step hook (PyTorch >= 2.0), else a
    wrapper around each optimizer class's step (1.x: where its profiler hook goes)."""
    reg = getattr(mod, "register_optimizer_step_post_hook", None)
    if reg is not None:
        h = reg(lambda opt, args, kwargs: _boundary(opt))
        _hooked.append(h.remove)
        return
    opt_cls = getattr(mod, "Optimizer", None)
    orig = getattr(opt_cls, "_hook_for_profile", None)
    if orig is None:
        _warn("this PyTorch has no optimizer hook: steps are not tracked")
        return

    def wrap_step(step):
        def step_and_mark(self, *args, **kwargs):
            r = step(self, *args, **kwargs)
            _boundary(self)
            return r
        step_and_mark.__wrapped__ = step
        step_and_mark.__name__ = getattr(step, "__name__", "step")
        step_and_mark.__doc__ = getattr(step, "__doc__", None)
        step_and_mark.hooked = True  # (torch's own profiler hook: already applied below us)
        step_and_mark._tftracer = True
        return step_and_mark

    def hook_for_profile(self):
        orig(self)
        cls = self.__class__
        if not getattr(cls.step, "_tftracer", False):
            cls.step = wrap_step(cls.step)

    opt_cls._hook_for_profile = hook_for_profile
    _hooked.append(lambda: setattr(opt_cls, "_hook_for_profile", orig))


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
            _warn("could not hook %s: %s" % (module.__name__, e))


class _Finder(importlib.abc.MetaPathFinder):
    """Notices the import of the modules to hook, without importing anything itself."""

    def __init__(self, hooks):
        self._hooks = hooks

    def find_spec(self, name, path, target=None):
        fn = self._hooks.get(name)
        if fn is None:
            return None
        del self._hooks[name]
        if not self._hooks and self in sys.meta_path:
            sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return None
        spec.loader = _Loader(spec.loader, fn)
        return spec


def _close():
    global _server, _step
    srv, _server = _server, None
    _unhook()
    # The open step is the program's tail, not a training step: dropped.
    step, _step = _step, None
    if step is not None:
        try:
            step.abandon()
        except Exception:
            pass
    if srv is not None:
        try:
            srv.stop()
        except Exception:
            pass


def start():
    """Start tracing as TFT_RECORD_* say (once; a second call does nothing)."""
    global _server
    if _server is not None or os.environ.get("TFT_RECORD") != "1":
        return None
    os.environ["TFT_RECORD"] = "started"  # child processes are not traced again
    try:
        import tftracer
        port = int(os.environ.get("TFT_RECORD_PORT", "9999"))
        host = os.environ.get("TFT_RECORD_HOST", "127.0.0.1")
        token = os.environ.get("TFT_RECORD_TOKEN") or None
        session = os.environ.get("TFT_RECORD_SESSION") or None
        srv = tftracer.TracingServer(port=port, host=host, session=session, token=token)
    except Exception as e:
        _warn("tracing is off (%s); the program runs untraced" % e)
        return None
    if not srv.url:
        return None  # (TracingServer warned)
    _server = srv
    every = int(os.environ.get("TFT_RECORD_TRACE_EVERY", "0") or 0)
    nxt = int(os.environ.get("TFT_RECORD_TRACE_NEXT", "0") or 0)
    if every:
        srv.trace_every(every)
    if nxt:
        srv.trace_next(nxt)
    atexit.register(_close)
    os.environ["TFT_RECORD_URL"] = srv.url  # for the program, and what it starts
    if os.environ.get("TFT_RECORD_QUIET") != "1":
        _warn("recording to %s, live at %s" % (srv.session_path, srv.url))
    hooks = {"torch.optim.optimizer": _hook_torch}
    if "torch.optim.optimizer" in sys.modules:
        _hook_torch(sys.modules["torch.optim.optimizer"])
    else:
        sys.meta_path.insert(0, _Finder(hooks))
    return srv
