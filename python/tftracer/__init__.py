# SPDX-License-Identifier: MIT
"""tftracer: op-level tracing for deep-learning jobs, live in the browser.

The work is done in C (tftracer._tftracer): the runtime records steps into a
session file, an HTTP server inside the process serves it to the web UI, and
profiler traces (torch.profiler, TF RunMetadata, TF2 XSpace) are imported into
the same file. This module is the glue to the frameworks. See docs/python.md.
"""
import collections
import glob
import logging
import os
import shutil
import sys
import tempfile
import threading
import time
import warnings
import weakref

from . import _tftracer as _c
from . import _models
from ._tftracer import Error, zone, flush, stats

__version__ = _c.VERSION
__all__ = ["TracingServer", "Timeline", "hook_inject", "watch", "Error", "zone", "flush", "stats",
           "__version__"]

_log = logging.getLogger("tftracer")
_servers = weakref.WeakSet()
_RUN_KINDS = 64  # distinct session.run kinds the hook names (LRU)


def _tf():
    """TensorFlow if the program can import it (the hook's and Timeline's API), else None."""
    tf = sys.modules.get("tensorflow")
    if tf is None:
        try:
            import tensorflow as tf  # noqa: F401
        except Exception:  # not installed, or broken: tracing never breaks training
            return None
    return tf


def _tf_v1(tf):
    """The TF1 API (tf.compat.v1 when present)."""
    compat = getattr(tf, "compat", None)
    return getattr(compat, "v1", None) or tf


class _NullStep:
    """What step() gives when tracing could not start: times nothing, costs nothing."""
    index = -1
    traced = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


_NULL_STEP = _NullStep()


class TracingServer:
    """Trace a training job and serve it live at http://HOST:PORT/.

    TracingServer(port=9999, host="127.0.0.1", session=None, keep_traces=5, start=True)

    - session: the session file the runtime writes (a path; "%p" is the pid);
      default $TFT_SESSION, else tftracer-<pid>.tft in the working directory.
    - keep_traces: raw profiler trace files (torch.profiler JSON, XSpace)
      kept on disk next to the session, newest first; their events are in the
      session file whatever this says. 0 deletes each after its import.
    - token: an access token (required when host is not a loopback address;
      one is generated and put in .url when not given).
    - torch_profile: run traced steps that use PyTorch under torch.profiler.
    - model: the job's PyTorch model(s) to describe in the session and scope in
      traced steps (an nn.Module, an optimizer, a list, or a dict {name: model});
      the models the job's optimizers update are found without it (watch()).

    Seed-compatible keywords: server_port, server_ip, start_web_server_on_start.
    """

    def __init__(self, port=9999, host="127.0.0.1", session=None, keep_traces=5, start=True,
                 token=None, torch_profile=True, threads=4, model=None, **kwargs):
        port = kwargs.pop("server_port", port)
        host = kwargs.pop("server_ip", host)
        start = kwargs.pop("start_web_server_on_start", start)
        self.port_requested = port
        self.host = host
        self.session_template = session
        self.keep_traces = max(0, int(keep_traces))
        self.token = token
        self.torch_profile = torch_profile
        self.threads = threads
        self._srv = None
        self._own_runtime = False
        self._traces = collections.deque()
        self._traces_dir = None
        self._hook = None
        self._lock = threading.Lock()
        self._exports = set()  # threads writing a traced step's profiler trace
        self._export_last = None  # the newest of them: the next one queues its import after it
        self._models = _models.registry
        if model is not None:
            self._models.watch(model, frame=sys._getframe(1))
        if start:
            self.start()

    # ---- lifecycle ---------------------------------------------------------

    def start(self):
        """Start the runtime (if the program has not) and the server."""
        if self._srv is not None:
            return self
        if _c.stats()["state"] != "running":
            try:
                _c.init(session=self.session_template, enabled=False)
                self._own_runtime = True
            except (Error, OSError, ValueError) as e:
                warnings.warn("tftracer: tracing is off (%s); training continues" % e,
                              RuntimeWarning, stacklevel=2)
                return self
        try:
            self._srv = _c.Server(host=self.host, port=self.port_requested, token=self.token,
                                  threads=self.threads)
        except (Error, OSError, ValueError) as e:
            # Steps go through the server (step() is a no-op without it): tracing is off, and
            # the runtime this object started stops, its session file (empty) removed.
            if self._own_runtime:
                path = _c.runtime_path()
                self._own_runtime = False
                _c.shutdown()
                _remove_session_file(path)
            warnings.warn("tftracer: tracing is off (the tracing server did not start: %s); "
                          "training continues" % e, RuntimeWarning, stacklevel=2)
            return self
        if self.torch_profile:
            self._srv.on_traced = self._on_traced
        self._models.restart()  # model_params goes into this session at the next step
        _servers.add(self)
        _log.info("tftracer: tracing server at %s (session %s)", self.url, self.session_path)
        return self

    def stop(self):
        """Stop the server (traces being written and queued imports finish first) and the
        runtime if it started it."""
        self._join_exports(30)
        srv, self._srv = self._srv, None
        if srv is not None:
            srv.stop()
        if self._own_runtime:
            self._own_runtime = False
            _c.shutdown()

    stop_web_server = stop  # seed names
    start_web_server = start

    def join(self, timeout=None):
        """Block until the server stops (POST /api/stop, stop(), Ctrl-C). True if it did."""
        if self._srv is None:
            return True
        return self._srv.wait(-1 if timeout is None else timeout)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False

    # ---- properties --------------------------------------------------------

    @property
    def url(self):
        """The URL to open (with ?token= when auth is on); "" when not serving."""
        return self._srv.url if self._srv is not None else ""

    @property
    def port(self):
        return self._srv.port if self._srv is not None else 0

    @property
    def session_path(self):
        """The live session file the runtime writes."""
        return _c.runtime_path()

    def status(self):
        """The /api/live/status object, plus import counters (a dict)."""
        if self._srv is None:
            st = _c.stats()
            st["live"] = False
            return st
        return self._srv.status()

    # ---- steps and tracing -------------------------------------------------

    def step(self, name=None):
        """Context manager timing one step of any loop: `with server.step("train"): ...`."""
        srv = self._srv
        if srv is None:
            return _NULL_STEP
        if self._models.pending:  # (once, and when an optimizer or a model comes)
            self._models.sync(sys._getframe(1))
        return srv.step(name)

    def watch(self, model, name=None):
        """Describe a PyTorch model in the session (meta model_params) and scope its modules
        in traced steps: an nn.Module (name: what the session calls it; default the
        program's variable name), an optimizer (its models), a list, or a dict
        {name: model}. Models that the job's optimizers update are found without it."""
        self._models.watch(model, name, frame=sys._getframe(1))
        if self._srv is not None:
            self._models.sync(sys._getframe(1))
        return model

    def trace_next(self, n=1):
        """Record op-level events for the next n steps (0 cancels)."""
        if self._srv is not None:
            self._srv.trace_next(n)

    def trace_every(self, k):
        """Record every k-th step (0 turns it off)."""
        if self._srv is not None:
            self._srv.trace_every(k)

    def set_tracing(self, on):
        """Op-level tracing for every step (costly) or off."""
        if self._srv is not None:
            self._srv.set_tracing(bool(on))

    # ---- sessions ------------------------------------------------------------

    def save_session(self, path=None):
        """Write a consistent copy of the live session (.tft; must not exist). Returns the path."""
        if self._srv is None:
            src = _c.runtime_path()
            if not src:
                raise Error("no session to save")
            _c.flush(1000)
            _c.save_copy(src, path)
            return path
        return self._srv.save(path)[0]

    def load_session(self, path):
        """Serve a saved session file instead of the live one (None: the live one again)."""
        if self._srv is None:
            raise Error("the server is not running")
        if path is not None:
            path = os.fspath(path)
            if not os.path.exists(path):
                raise FileNotFoundError(path)
        self._srv.serve(path)

    def import_trace(self, source, path=None, data=None, step=-1, block=False):
        """Import a profiler trace ("torch", "runmetadata", "xspace") into the live session."""
        if self._srv is None:
            return 0 if block else False
        now = _c.monotonic_ns()
        return self._srv.import_trace(source, path=path, data=data, step=step, t0=now, t1=now,
                                      block=block)

    def wait_imports(self, timeout=30):
        """Wait until traced steps' traces are written and queued imports have landed in
        the session (tests, before saving)."""
        end = time.monotonic() + timeout
        if not self._join_exports(timeout):
            return False
        left = max(0.0, end - time.monotonic())
        return self._srv.drain_imports(left) if self._srv is not None else True

    def _join_exports(self, timeout):
        """Wait for the threads writing profiler traces; False on timeout."""
        end = time.monotonic() + timeout
        while True:
            with self._lock:
                ths = [t for t in self._exports if t is not threading.current_thread()]
            if not ths:
                return True
            for t in ths:
                t.join(max(0.0, end - time.monotonic()))
            if time.monotonic() >= end:
                with self._lock:
                    return not any(t.is_alive() for t in self._exports)

    # ---- raw trace files (keep_traces) -------------------------------------------

    def _trace_dir(self):
        if self._traces_dir is None:
            base = _c.runtime_path() or os.path.join(tempfile.gettempdir(), "tftracer")
            self._traces_dir = base + ".traces"
            os.makedirs(self._traces_dir, exist_ok=True)
        return self._traces_dir

    def _keep(self, path):
        """Remember a raw trace file; delete the oldest beyond keep_traces."""
        with self._lock:
            self._traces.append(path)
            while len(self._traces) > self.keep_traces:
                old = self._traces.popleft()
                if os.path.isdir(old):
                    shutil.rmtree(old, ignore_errors=True)
                else:
                    try:
                        os.unlink(old)
                    except OSError:
                        pass

    def _import_later(self, source, path, step, t0, t1, name):
        """Queue an import (the worker thread reads the file; we never block training)."""
        srv = self._srv
        if srv is None:
            return
        # keep_traces == 0: the worker deletes the file once imported.
        queued = srv.import_trace(source, path=path, step=step, t0=t0, t1=t1,
                                  name=name or source, unlink=self.keep_traces == 0)
        if not queued:
            _log.warning("tftracer: import queue full; a %s trace of step %d was dropped",
                         source, step)
        elif self.keep_traces:
            self._keep(path)

    # ---- PyTorch: traced steps run under torch.profiler ------------------------------

    def _on_traced(self, index, name):
        """A traced step begins: run it under torch.profiler (CPU ops with their input
        shapes and FLOPs, CUDA kernels where there is CUDA). The closer, called as the
        step ends, exports the trace and queues its import into the live session: on
        the job's own process and threads (a PyTorch without Kineto gets its trace
        written by _torchtrace). Meanwhile zone() on this thread is recorded by the
        profiler (the server's zone_hook), so zones and ops share one clock and nest."""
        torch = sys.modules.get("torch")
        if torch is None or not hasattr(torch, "profiler"):
            return None  # no PyTorch in this program: the runtime's zones only
        from . import _torchtrace
        srv = self._srv
        # the models' forward calls as ranges of this profiler (hooks until the step ends;
        # the models described again first, outside the profiled time)
        scopes = _models.scopes_begin(torch)
        try:
            acts = [torch.profiler.ProfilerActivity.CPU]
            if torch.cuda.is_available():
                acts.append(torch.profiler.ProfilerActivity.CUDA)
            prof = torch.profiler.profile(activities=acts, **_torchtrace.profile_kwargs(torch))
            kineto = _torchtrace.kineto_exports(torch)
            t0 = _c.monotonic_ns()
            prof.__enter__()
            tids = {}
            if not kineto:
                # which of the profiler's thread numbers is this thread
                tids["native"] = threading.get_native_id()
                _torchtrace.mark_thread(torch)
            if srv is not None and srv.zone_hook is None:
                srv.zone_hook = _torchtrace.range_hook(torch)
        except Exception as e:  # a profiler that cannot start leaves the step untraced
            if scopes is not None:
                scopes.close()
            _log.warning("tftracer: torch.profiler did not start: %s", e)
            return None
        server = self

        def close(idx):
            if scopes is not None:
                scopes.close()
            try:
                prof.__exit__(None, None, None)
            except Exception as e:
                if idx >= 0:
                    _failed(idx, "torch.profiler did not stop: %s" % e)
                return
            if idx < 0:
                return  # the step was abandoned: nothing to import
            t1 = _c.monotonic_ns()
            path = os.path.join(server._trace_dir(), "step-%d.pt.trace.json" % idx)
            if kineto:  # Kineto's export, in C++
                export(idx, t1, path, None)
                return
            # Written in Python (about 0.1 ms an op): on a thread of its own, so that the
            # training thread goes on (wait_imports() and stop() wait for it).
            with server._lock:
                prev = server._export_last
                th = threading.Thread(target=export, args=(idx, t1, path, prev),
                                      name="tftracer-export", daemon=True)
                server._export_last = th
                server._exports.add(th)
            th.start()

        def export(idx, t1, path, prev):
            try:
                if os.path.exists(path):
                    os.unlink(path)
                if kineto:
                    prof.export_chrome_trace(path)
                else:
                    try:
                        _torchtrace.write_trace(prof, path, tids)
                    except AttributeError:  # no event tree in this PyTorch: its own export
                        prof.export_chrome_trace(path)
            except Exception as e:
                _log.warning("tftracer: torch.profiler export failed: %s", e)
                _failed(idx, "torch.profiler export failed: %s" % e)
            else:
                # In step order: the store appends a thread's track in time order, so
                # an earlier step's ops imported after a later one's would go beside
                # it (docs/python.md). The previous step's export queues first.
                if prev is not None:
                    prev.join()
                server._import_later("torch", path, idx, t0, t1, name or "step")
            finally:  # (queued first: wait_imports() then finds the import)
                with server._lock:
                    server._exports.discard(threading.current_thread())

        def _failed(idx, why):
            s = server._srv
            if s is not None:
                s.import_failed(idx, why)
        return close

    # ---- TensorFlow ---------------------------------------------------------------

    @property
    def hook(self):
        """A tf.train.SessionRunHook tracing session.run calls (FULL_TRACE when asked)."""
        if self._hook is None:
            self._hook = _make_hook(self)
        return self._hook

    def keras_callback(self):
        """A tf.keras callback: each batch is a step; traced batches run under
        tf.profiler.experimental and their XSpace is imported."""
        return _make_keras_callback(self)


def watch(model, name=None):
    """TracingServer.watch for the process (any server, `tftracer record`): describe a
    PyTorch model in the session and scope its modules in traced steps."""
    _models.registry.watch(model, name, frame=sys._getframe(1))
    if any(s._srv is not None for s in list(_servers)):
        _models.registry.sync(sys._getframe(1))
    return model


# ---- the TF1 hook -------------------------------------------------------------------

def _make_hook(server):
    tf = _tf()
    base = object
    if tf is not None:
        base = getattr(getattr(_tf_v1(tf), "train", None), "SessionRunHook", object)

    class TracingServerHook(base):
        """Times each session.run as a step named after its fetches (a bounded LRU of
        run kinds); traced runs get RunOptions(trace_level=FULL_TRACE) and their
        RunMetadata is imported into the live session."""

        def __init__(self):
            self._kinds = collections.OrderedDict()
            self._next_id = 0
            self._step = None
            self._t0 = 0
            self._name = None
            self._expect = False  # this run's RunMetadata import is expected

        def _kind(self, key):
            kinds = self._kinds
            name = kinds.get(key)
            if name is not None:
                kinds.move_to_end(key)
                return name
            name = "run %d: %s" % (self._next_id, key[:96])
            self._next_id += 1
            kinds[key] = name
            if len(kinds) > _RUN_KINDS:
                kinds.popitem(last=False)
            return name

        def begin(self):
            pass

        def after_create_session(self, session, coord):
            pass

        def before_run(self, run_context):
            args = getattr(run_context, "original_args", None)
            fetches = getattr(args, "fetches", args)
            self._name = self._kind(repr(fetches))
            self._step = server.step(self._name)
            self._step.__enter__()
            self._t0 = _c.monotonic_ns()
            self._expect = False
            if not self._step.traced:
                return None
            tfm = _tf()
            if tfm is None:
                return None
            v1 = _tf_v1(tfm)
            opts = v1.RunOptions(trace_level=v1.RunOptions.FULL_TRACE)
            args = v1.train.SessionRunArgs(None, None, options=opts)
            if server._srv is not None:  # its RunMetadata lands when after_run imports it
                server._srv.expect_imports(self._step.index, 1)
                self._expect = True
            return args

        def after_run(self, run_context, run_values):
            step, self._step = self._step, None
            if step is None:
                return
            t1 = _c.monotonic_ns()
            step.__exit__(None, None, None)
            expect, self._expect = self._expect, False
            srv = server._srv

            def failed(why):
                if expect and srv is not None:
                    srv.import_failed(step.index, why)
            md = getattr(run_values, "run_metadata", None)
            if md is None or not step.traced:
                failed("the session.run gave no RunMetadata")
                return
            try:
                data = md.SerializeToString()
            except Exception as e:
                _log.warning("tftracer: cannot serialize RunMetadata: %s", e)
                failed("cannot serialize the RunMetadata: %s" % e)
                return
            if not data:
                failed("the RunMetadata is empty")
            elif srv is not None:
                if not srv.import_trace("runmetadata", data=data, step=step.index,
                                        t0=self._t0, t1=t1, name=self._name):
                    _log.warning("tftracer: import queue full; RunMetadata dropped")

        def end(self, session):
            pass

    return TracingServerHook()


# ---- the TF2 Keras callback --------------------------------------------------------

def _make_keras_callback(server):
    tf = _tf()
    base = object
    if tf is not None:
        base = getattr(getattr(getattr(tf, "keras", None), "callbacks", None), "Callback", object)

    class TracingCallback(base):
        """Each training batch is a step "train_batch"; a traced batch runs under
        tf.profiler.experimental.start/stop and its XSpace files are imported."""

        def __init__(self):
            if base is not object:
                super().__init__()
            self._step = None
            self._logdir = None
            self._t0 = 0

        def on_train_batch_begin(self, batch, logs=None):
            self._step = server.step("train_batch")
            self._step.__enter__()
            if not self._step.traced:
                return
            tfm = _tf()
            if tfm is None:
                return
            self._logdir = os.path.join(server._trace_dir(), "xspace-%d" % self._step.index)
            try:
                self._t0 = _c.monotonic_ns()
                tfm.profiler.experimental.start(self._logdir)
            except Exception as e:
                _log.warning("tftracer: tf.profiler did not start: %s", e)
                self._logdir = None
                return
            if server._srv is not None:  # its XSpace lands when the batch ends
                server._srv.expect_imports(self._step.index, 1)

        def on_train_batch_end(self, batch, logs=None):
            step, self._step = self._step, None
            if step is None:
                return
            logdir, self._logdir = self._logdir, None
            t1 = _c.monotonic_ns()
            srv = server._srv
            why = None
            if logdir is not None:
                try:
                    _tf().profiler.experimental.stop()
                except Exception as e:
                    _log.warning("tftracer: tf.profiler did not stop: %s", e)
                    why = "tf.profiler did not stop: %s" % e
            step.__exit__(None, None, None)
            if logdir is None:
                return
            files = [] if why else sorted(glob.glob(os.path.join(logdir, "**", "*.xplane.pb"),
                                                    recursive=True))
            if srv is None:
                return
            if not files:
                srv.import_failed(step.index, why or "tf.profiler wrote no XSpace")
                return
            # one expected already; one import per host's file
            srv.expect_imports(step.index, len(files) - 1)
            for f in files:
                srv.import_trace("xspace", path=f, step=step.index, t0=self._t0,
                                 t1=t1, name="train_batch")
            server._keep(logdir)

    return TracingCallback()


# ---- hook_inject -------------------------------------------------------------------

_injected = None


def hook_inject(*args, **kwargs):
    """(Experimental) Create one global TracingServer and add its hook to every
    tf.train.MonitoredTrainingSession (Estimator, MonitoredTrainingSession). A no-op
    with a warning when TensorFlow is not installed. Returns the server or None."""
    global _injected
    if _injected is not None:
        return _injected
    tf = _tf()
    if tf is None:
        warnings.warn("tftracer.hook_inject: TensorFlow is not installed; nothing to inject",
                      RuntimeWarning, stacklevel=2)
        return None
    server = TracingServer(*args, **kwargs)
    hook = server.hook
    patched = False
    for ns in {id(tf): tf, id(_tf_v1(tf)): _tf_v1(tf)}.values():
        train = getattr(ns, "train", None)
        orig = getattr(train, "MonitoredTrainingSession", None)
        if orig is None or getattr(orig, "_tftracer_orig", None) is not None:
            continue

        def patched_mts(*a, _orig=orig, **kw):
            hooks = list(kw.get("hooks") or [])
            if hook not in hooks:
                hooks.append(hook)
            kw["hooks"] = hooks
            return _orig(*a, **kw)

        patched_mts._tftracer_orig = orig
        patched_mts.__doc__ = orig.__doc__
        setattr(train, "MonitoredTrainingSession", patched_mts)
        patched = True
    if not patched:
        warnings.warn("tftracer.hook_inject: tf.train.MonitoredTrainingSession not found; "
                      "pass server.hook yourself", RuntimeWarning, stacklevel=2)
    _injected = server
    return server


# ---- Timeline ---------------------------------------------------------------------

class Timeline:
    """Trace one step and look at it offline.

    TensorFlow (TF1 API): `with Timeline() as tl: sess.run(op, **tl.kwargs)`.
    PyTorch (no TensorFlow): `with Timeline() as tl: model(x)` runs the block under
    torch.profiler. Then tl.visualize("step.html") writes a standalone page (the
    web UI with the data inlined; opens from file://), tl.save("step.tft"),
    Timeline.load(path), and the seed's step_time() / communication_time() /
    computation_time() (microseconds).
    """

    def __init__(self, run_metadata=None, comm_op_name="RecvTensor", **kwargs):
        self._md = run_metadata
        self._options = None
        self._comm = comm_op_name
        self._session = None        # a .tft file with the data
        self._owned = None          # a temporary directory we remove
        self._prof = None
        self.wall_clock_elapsed = None
        self._t0 = None

    def __enter__(self):
        self._session = None
        self._t0 = time.time()
        tf = _tf()
        if tf is not None:
            v1 = _tf_v1(tf)
            self._md = v1.RunMetadata()
            try:
                self._options = v1.RunOptions(trace_level=v1.RunOptions.FULL_TRACE,
                                              output_partition_graphs=True)
            except TypeError:
                self._options = v1.RunOptions(trace_level=v1.RunOptions.FULL_TRACE)
            return self
        torch = sys.modules.get("torch")
        if torch is not None:
            from . import _torchtrace
            self._prof = torch.profiler.profile(
                activities=[torch.profiler.ProfilerActivity.CPU], **_torchtrace.profile_kwargs(torch))
            self._kineto = _torchtrace.kineto_exports(torch)
            self._prof.__enter__()
            self._tids = {}
            if not self._kineto:  # (see TracingServer._on_traced)
                self._tids["native"] = threading.get_native_id()
                _torchtrace.mark_thread(torch)
        return self

    def __exit__(self, *exc):
        self.wall_clock_elapsed = time.time() - self._t0
        if self._prof is not None:
            prof, self._prof = self._prof, None
            prof.__exit__(None, None, None)
            path = os.path.join(self._tmpdir(), "trace.json")
            from . import _torchtrace
            try:
                if self._kineto:
                    raise AttributeError
                _torchtrace.write_trace(prof, path, self._tids)
            except AttributeError:  # Kineto's own export (or no event tree in this PyTorch)
                prof.export_chrome_trace(path)
            self._session = os.path.join(self._tmpdir(), "timeline.tft")
            if os.path.exists(self._session):
                os.unlink(self._session)
            _c.ingest(self._session, "torch", path=path)
            os.unlink(path)
        return False

    @property
    def kwargs(self):
        """dict(options=..., run_metadata=...) for sess.run(fetches, **tl.kwargs)."""
        if self._md is None:
            raise Exception("TensorFlow is not found")
        return dict(options=self._options, run_metadata=self._md)

    @property
    def run_metadata(self):
        return self._md

    def _tmpdir(self):
        if self._owned is None:
            self._owned = tempfile.mkdtemp(prefix="tftracer-timeline-")
            weakref.finalize(self, shutil.rmtree, self._owned, True)
        return self._owned

    def _path(self):
        """The session file holding the data (imported from the RunMetadata on first use)."""
        if self._session is not None:
            return self._session
        if self._md is None:
            raise Exception("No data has been collected yet")
        data = self._md.SerializeToString()
        if not data:
            raise Exception("No data has been collected yet")
        path = os.path.join(self._tmpdir(), "timeline.tft")
        if os.path.exists(path):
            os.unlink(path)
        _c.ingest(path, "runmetadata", data=data)
        self._session = path
        return path

    @classmethod
    def load(cls, path):
        """A Timeline over a saved session (.tft) or any trace file tftracer imports."""
        path = os.fspath(path)
        if not os.path.exists(path):
            raise FileNotFoundError(path)
        tl = cls()
        if path.endswith(".tft"):
            tl._session = path
        else:
            tl._session = os.path.join(tl._tmpdir(), "timeline.tft")
            _c.ingest(tl._session, "auto", path=path)
        return tl

    @classmethod
    def from_pickle(cls, pickle_file_name, **kwargs):
        """The seed's RunMetadata pickle (Timeline.to_pickle): read by tftracer's own
        pickle importer, no TensorFlow needed."""
        return cls.load(pickle_file_name)

    def to_pickle(self, pickle_file_name):
        """pickle.dump the RunMetadata, as the seed did (needs the TF RunMetadata)."""
        import pickle
        if self._md is None or not self._md.SerializeToString():
            raise Exception("No data has been collected yet")
        with open(pickle_file_name, "wb") as f:
            pickle.dump(self._md, f)

    def save(self, path):
        """Save the data as a session file (open it with `tftracer FILE`)."""
        path = os.fspath(path)
        _c.save_copy(self._path(), path)
        return path

    def visualize(self, output_file=None, device_pattern=None, max_events=0):
        """Write a standalone HTML page (no server, no network needed); without
        output_file, return the HTML text."""
        if output_file is None:
            out = os.path.join(self._tmpdir(), "timeline.html")
            _c.export_html(self._path(), out, max_events)
            with open(out, encoding="utf-8") as f:
                return f.read()
        _c.export_html(self._path(), os.fspath(output_file), max_events)
        return output_file

    def _times(self, device=None, exclude=None):
        return _c.op_times(self._path(), device=device, exclude=exclude, comm_name=self._comm)

    def step_time(self, device_search_pattern=None):
        """First op start to last op end, in microseconds."""
        return self._times(device_search_pattern)["step"] / 1000.0

    def communication_elapsed_time(self, device_search_pattern=None, exclude_pattern=None):
        """First to last communication op, in microseconds."""
        return self._times(device_search_pattern, exclude_pattern)["comm_elapsed"] / 1000.0

    def communication_time(self, device_search_pattern=None, exclude_pattern=None):
        """Time covered by communication ops (overlaps merged), in microseconds."""
        return self._times(device_search_pattern, exclude_pattern)["comm"] / 1000.0

    def computation_time(self, device_search_pattern=None, exclude_pattern=None):
        """Time covered by any op (busy time, overlaps merged), in microseconds."""
        return self._times(device_search_pattern, exclude_pattern)["busy"] / 1000.0


def _remove_session_file(path):
    """Delete a session file this process made and left empty, with SQLite's side files."""
    for suffix in ("", "-wal", "-shm", "-journal") if path else ():
        try:
            os.unlink(path + suffix)
        except OSError:
            pass


def _stop_all():
    for s in list(_servers):
        try:
            s.stop()
        except Exception:
            pass


import atexit  # noqa: E402

atexit.register(_stop_all)
