# SPDX-License-Identifier: MIT
"""The job's PyTorch models: found, described in the session, scoped in traced steps.

Models are the nn.Module trees the job trains (the roots whose parameters its
optimizers update) and the ones the program names itself (watch(),
TracingServer(model=...)). Each is described in the live session's meta value
`model_params` (docs/python.md, "Models"): its modules in named_modules()
order with their own parameters (name, shape, dtype, numel, trainable) and
buffers, the totals (a parameter shared by several modules counted once) and
the optimizers' parameter groups with the modules they update.

When: never on an untraced step's path. The registry is `pending` when
something may have changed (a TracingServer started, an optimizer was
constructed, watch() was called, a job without PyTorch at its first step
imported torch.optim); TracingServer.step() checks that flag
before it begins a step and then calls sync(). The first sync finds the
optimizers that exist already with one pass over the garbage collector's
objects (gc.get_objects) and, from then on, notes each new one from
Optimizer.__init__; the model roots of an optimizer's parameters come from
one more such pass (modules that are nobody's child and hold its
parameters). A traced step syncs again (a model can grow, a param group be
added) and writes the value only when it changed.

Module scopes: while a step is traced, every module of the known models has
a forward pre-hook and a forward hook that open and close a profiler range
`nn.Module: <path>` (the root: `nn.Module: <model name>`), recorded by
torch.profiler like the step's ops, on their clock and thread, so that they
nest; the hooks are removed when the step ends. _torchtrace (and, for a
Kineto trace, the live import) gives these ranges the category
python_module.

Nothing here may break training: failures are logged and tracing goes on
without model information.
"""
import gc
import json
import logging
import sys
import threading
import weakref

KEY = "model_params"
SCOPE_PREFIX = "nn.Module: "
_log = logging.getLogger("tftracer")
_SKIP_FRAMES = ("tftracer", "torch", "importlib", "threading", "contextlib")


def _dtype_name(dt):
    s = str(dt)
    return s[6:] if s.startswith("torch.") else s


def _number(v):
    """A JSON number for an optimizer hyper-parameter (a float, an int or a 0-d tensor), or None."""
    try:
        if isinstance(v, bool):
            return None
        f = float(v)
    except Exception:
        return None
    if f != f or f in (float("inf"), float("-inf")):
        return None
    return f


def _param_entry(name, p):
    try:
        shape = [int(d) for d in p.shape]
        n = int(p.numel())
        ok = True
    except Exception:  # an uninitialized (lazy) parameter
        shape, n, ok = [], 0, False
    e = {"name": name, "shape": shape, "dtype": _dtype_name(getattr(p, "dtype", "")),
         "numel": n, "trainable": bool(getattr(p, "requires_grad", False))}
    if not ok:
        e["uninitialized"] = True
    return e


def describe(root, name, optimizers):
    """One model's entry of model_params (a dict): root is an nn.Module, optimizers a
    list of torch optimizers (their groups are listed where they update this model)."""
    modules = []
    first = {}    # id(param) -> "path.name" of its first owner (named_modules order)
    owners = {}   # id(param) -> [module index, ...]
    numel = {}    # id(param) -> numel
    total = trainable = 0
    paths = []
    for path, m in root.named_modules():
        own = 0
        plist = []
        for pname, p in m.named_parameters(recurse=False):
            e = _param_entry(pname, p)
            n = e["numel"]
            own += n
            k = id(p)
            where = first.get(k)
            if where is None:
                first[k] = (path + "." + pname) if path else pname
                numel[k] = n
                total += n
                if e["trainable"]:
                    trainable += n
            else:
                e["shared_with"] = where  # counted once: at its first owner
            owners.setdefault(k, []).append(len(modules))
            plist.append(e)
        try:
            bufs = sum(int(b.numel()) for _, b in m.named_buffers(recurse=False))
        except Exception:
            bufs = 0
        ent = {"path": path, "class": type(m).__name__, "params": own, "buffers": bufs}
        if plist:
            ent["parameters"] = plist
        modules.append(ent)
        paths.append(path)
    groups = []
    for opt in optimizers:
        try:
            pgs = list(opt.param_groups)
        except Exception:
            continue
        for gi, g in enumerate(pgs):
            seen = set()
            n = 0
            mods = set()
            for p in g.get("params", ()):
                k = id(p)
                if k not in owners or k in seen:
                    continue
                seen.add(k)
                n += numel[k]
                mods.update(owners[k])
            if not seen:
                continue
            groups.append({"optimizer": type(opt).__name__, "group": gi, "lr": _number(g.get("lr")),
                           "params": n, "modules": [paths[i] for i in sorted(mods)]})
    return {"name": name, "class": type(root).__name__, "modules": modules,
            "total_params": total, "trainable_params": trainable, "optimizer_groups": groups}


def _caller_name(obj, frame):
    """The name the program gives obj: a local or global of the first frame outside
    tftracer and torch that refers to it (or an attribute of its `self`); None."""
    f = frame
    while f is not None:
        mod = f.f_globals.get("__name__", "") or ""
        if not mod.split(".")[0] in _SKIP_FRAMES:
            try:
                loc = f.f_locals
            except Exception:
                loc = {}
            for k, v in loc.items():
                if v is obj and not k.startswith("_"):
                    return k
            me = loc.get("self")
            d = getattr(me, "__dict__", None) if me is not None else None
            if isinstance(d, dict):
                for k, v in d.items():
                    if v is obj and not k.startswith("_"):
                        return k
            for k, v in f.f_globals.items():
                if v is obj and not k.startswith("_"):
                    return k
        f = f.f_back
    return None


class Registry:
    """The process's models (one runtime per process, so one registry)."""

    def __init__(self):
        self.pending = False       # sync() at the next step (TracingServer.step checks it)
        self._lock = threading.Lock()
        self._explicit = []        # [weakref(module), name or None] in watch() order
        self._optims = []          # weakrefs of the known optimizers, in the order found
        self._optim_ids = set()
        self._resolved = {}        # id(optimizer) -> its param signature when its roots were found
        self._roots = []           # [weakref(module)] found from the optimizers
        self._names = weakref.WeakKeyDictionary()  # module -> its name in the session
        self._scanned = False      # the first gc pass for optimizers is done
        self._hooked = False       # Optimizer.__init__ notes new optimizers
        self._last = None          # (session path, JSON) last written
        self._failed = False

    # ---- what the program says --------------------------------------------------------

    def watch(self, obj, name=None, frame=None):
        """Models (nn.Module), optimizers, or a list / dict of them (a dict: {name: model})."""
        if isinstance(obj, dict):
            for k, v in obj.items():
                self.watch(v, str(k), frame)
            return
        if isinstance(obj, (list, tuple)):
            for v in obj:
                self.watch(v, None, frame)
            return
        torch = sys.modules.get("torch")
        if torch is None:
            raise TypeError("watch() takes torch.nn.Module or torch.optim.Optimizer objects")
        if isinstance(obj, torch.nn.Module):
            if not name and frame is not None:
                name = _caller_name(obj, frame)  # what the program calls it
            with self._lock:
                for ent in self._explicit:
                    if ent[0]() is obj:
                        if name:
                            ent[1] = name
                        break
                else:
                    self._explicit.append([weakref.ref(obj), name])
                if name:
                    self._names[obj] = name
        elif isinstance(obj, torch.optim.Optimizer):
            self.note_optimizer(obj)
        else:
            raise TypeError("watch() takes torch.nn.Module or torch.optim.Optimizer objects, "
                            "not %s" % type(obj).__name__)
        self.pending = True

    def note_optimizer(self, opt):
        with self._lock:
            if id(opt) in self._optim_ids and any(r() is opt for r in self._optims):
                return
            self._optims.append(weakref.ref(opt))
            self._optim_ids.add(id(opt))
        self.pending = True

    def restart(self):
        """A (new) session: write the value again at the next sync."""
        self.pending = True

    # ---- finding them ------------------------------------------------------------------

    def _hook_init(self, torch):
        """Note each optimizer as it is constructed (one call per optimizer, none per step)."""
        opt_cls = torch.optim.Optimizer
        orig = opt_cls.__init__
        if getattr(orig, "_tftracer", False):
            self._hooked = True
            return
        reg = self

        def __init__(self, *args, **kwargs):
            orig(self, *args, **kwargs)
            try:
                reg.note_optimizer(self)
            except Exception:
                pass
        __init__.__wrapped__ = orig
        __init__.__doc__ = orig.__doc__
        __init__.__qualname__ = getattr(orig, "__qualname__", "Optimizer.__init__")
        __init__._tftracer = True
        opt_cls.__init__ = __init__
        self._hooked = True

    @staticmethod
    def _scan(torch, want_optims, want_modules):
        """One pass over the collector's objects: (optimizers, modules)."""
        Mod, Opt = torch.nn.Module, torch.optim.Optimizer
        kinds = {}
        opts, mods = [], []
        for o in gc.get_objects():
            t = type(o)  # (never isinstance: it may run a proxy's __class__)
            k = kinds.get(t)
            if k is None:
                try:
                    k = kinds[t] = 1 if issubclass(t, Mod) else 2 if issubclass(t, Opt) else 0
                except TypeError:
                    k = kinds[t] = 0
            if k == 1 and want_modules:
                mods.append(o)
            elif k == 2 and want_optims:
                opts.append(o)
        return opts, mods

    @staticmethod
    def _signature(opt):
        try:
            return tuple(len(g["params"]) for g in opt.param_groups)
        except Exception:
            return ()

    def _find_roots(self, torch, optims):
        """Model roots of the optimizers not resolved yet (one gc pass if any)."""
        todo = [o for o in optims if self._resolved.get(id(o)) != self._signature(o)]
        if not todo:
            return
        known = set()
        for r in self._roots + [e[0] for e in self._explicit]:
            m = r()
            if m is not None:
                known.update(id(p) for p in m.parameters())
        want = set()
        for o in todo:
            for g in o.param_groups:
                want.update(id(p) for p in g["params"] if id(p) not in known)
        if want:
            _, mods = self._scan(torch, False, True)
            children = set()
            for m in mods:
                for c in getattr(m, "_modules", {}).values():
                    if c is not None:
                        children.add(id(c))
            cands = []
            for m in mods:
                if id(m) in children:
                    continue
                try:
                    ids = {id(p) for p in m.parameters()}
                except Exception:
                    continue
                hit = ids & want
                if hit:
                    cands.append((len(hit), m, ids))
            # the roots covering most first; one that adds nothing new (a second
            # wrapper of the same parameters) is left out
            cands.sort(key=lambda c: -c[0])
            for _, m, ids in cands:
                if not (ids & want):
                    continue
                self._roots.append(weakref.ref(m))
                want -= ids
            del mods
        for o in todo:
            self._resolved[id(o)] = self._signature(o)

    def _models(self, frame):
        """[(root, name)] of the explicit models and the optimizers' roots, names unique."""
        out, used = [], set()
        seen = set()
        for ref, name in [(e[0], e[1]) for e in self._explicit] + [(r, None) for r in self._roots]:
            m = ref()
            if m is None or id(m) in seen:
                continue
            seen.add(id(m))
            nm = name or self._names.get(m)
            if not nm:
                nm = _caller_name(m, frame) or "model"
            base, k = nm, 2
            while nm in used:
                nm = "%s_%d" % (base, k)
                k += 1
            used.add(nm)
            self._names[m] = nm
            out.append((m, nm))
        return out

    def sync(self, frame=None):
        """Find what changed and write model_params if its text did (the training thread,
        before a step begins). Returns [(root, name)]; never raises."""
        torch = sys.modules.get("torch")
        if torch is None or "torch.optim" not in sys.modules or not hasattr(torch, "nn"):
            # a job without PyTorch (yet): nothing until it imports torch.optim
            self.pending = False
            _OptimImport.install(self)
            return []
        if not self._lock.acquire(False):
            return []  # another thread syncs now
        try:
            return self._sync(torch, frame if frame is not None else sys._getframe(1))
        except Exception as e:
            if not self._failed:
                self._failed = True
                _log.warning("tftracer: cannot describe the models: %s", e)
            self.pending = False
            return []
        finally:
            self._lock.release()

    def _sync(self, torch, frame):
        from . import _tftracer as _c
        self.pending = False
        if not self._hooked:
            self._hook_init(torch)
        if not self._scanned:
            self._scanned = True
            opts, _ = self._scan(torch, True, False)
            for o in opts:
                if id(o) not in self._optim_ids:
                    self._optims.append(weakref.ref(o))
                    self._optim_ids.add(id(o))
        optims = []
        live = []
        for r in self._optims:
            o = r()
            if o is not None:
                optims.append(o)
                live.append(r)
        self._optims = live
        self._optim_ids = {id(o) for o in optims}
        self._resolved = {k: v for k, v in self._resolved.items() if k in self._optim_ids}
        self._find_roots(torch, optims)
        self._roots = [r for r in self._roots if r() is not None]
        models = self._models(frame)
        if not models:
            return []
        doc = {"framework": "pytorch", "version": str(getattr(torch, "__version__", "")),
               "models": [describe(m, nm, optims) for m, nm in models]}
        text = json.dumps(doc, separators=(",", ":"))
        path = _c.runtime_path()
        if self._last != (path, text):
            try:
                if _c.set_meta(KEY, text):
                    self._last = (path, text)
                else:
                    self.pending = True  # no session yet: at the next step
            except ValueError as e:
                if not self._failed:
                    self._failed = True
                    _log.warning("tftracer: model_params not recorded: %s", e)
        return models

    def optimizers_changed(self):
        """Cheap: has a known optimizer gained or lost parameters since its roots were found?"""
        for r in self._optims:
            o = r()
            if o is not None and self._resolved.get(id(o)) != self._signature(o):
                return True
        return False


class _OptimImport:
    """Sets the registry pending when the program imports torch.optim (a job that
    imports PyTorch after its first steps); imports nothing itself."""
    _installed = None

    def __init__(self, reg):
        self._reg = reg

    @classmethod
    def install(cls, reg):
        if cls._installed is None:
            cls._installed = cls(reg)
            sys.meta_path.insert(0, cls._installed)

    def find_spec(self, name, path=None, target=None):
        if name == "torch.optim":
            try:
                sys.meta_path.remove(self)
            except ValueError:
                pass
            type(self)._installed = None
            self._reg.pending = True
        return None


registry = Registry()


# ---- module scopes in traced steps ------------------------------------------------------

def _always_call(torch):
    """register_forward_hook(..., always_call=True) where this PyTorch has it (2.1+):
    the range ends even when forward raises."""
    import inspect
    try:
        return "always_call" in inspect.signature(torch.nn.Module.register_forward_hook).parameters
    except (TypeError, ValueError):
        return False


class Scopes:
    """The hooks of one traced step: open() registers them, close() removes them and
    ends any range a raising forward left open."""

    def __init__(self, torch, models):
        self._torch = torch
        self._models = models
        self._handles = []
        self._local = threading.local()
        self._open = []  # every thread's stacks, to end what is left at close()
        self._olock = threading.Lock()

    def _stack(self):
        s = getattr(self._local, "s", None)
        if s is None:
            s = self._local.s = []
            with self._olock:
                self._open.append(s)
        return s

    def open(self):
        from ._torchtrace import range_api
        enter, leave = range_api(self._torch)
        always = _always_call(self._torch)
        labels = {}
        for root, name in self._models:
            for path, m in root.named_modules():
                if id(m) not in labels:
                    labels[id(m)] = (m, SCOPE_PREFIX + (path if path else name))
        stack_of = self._stack

        getframe = sys._getframe

        def alive(frame):
            """Is frame (a module call's) still running: on this thread's call stack?"""
            f = getframe(2)
            while f is not None:
                if f is frame:
                    return True
                f = f.f_back
            return False

        def pre(mod, inp):
            label = labels.get(id(mod))
            if label is None:
                return
            s = stack_of()
            # a range whose module call is over without its forward hook (forward raised,
            # the caller went on): it ends now, before this module's begins
            while s and not alive(s[-1][2]):
                leave(s.pop()[1])
            s.append((id(mod), enter(label[1]), getframe(1)))

        def post(mod, inp, out):
            s = stack_of()
            k = id(mod)
            if not any(e[0] == k for e in s):
                return
            # ranges above this module's (a child whose forward raised) end with it
            while s:
                e = s.pop()
                leave(e[1])
                if e[0] == k:
                    break

        kw = {"always_call": True} if always else {}
        for m, _ in labels.values():
            try:
                self._handles.append(m.register_forward_pre_hook(pre))
                self._handles.append(m.register_forward_hook(post, **kw))
            except Exception:  # a ScriptModule, or a module that takes no hooks
                continue
        return self

    def close(self):
        for h in self._handles:
            try:
                h.remove()
            except Exception:
                pass
        self._handles = []
        from ._torchtrace import range_api
        _, leave = range_api(self._torch)
        with self._olock:
            stacks, self._open = self._open, []
        for s in stacks:
            while s:
                try:
                    leave(s.pop()[1])
                except Exception:
                    pass


def scopes_begin(torch):
    """A traced step begins (its profiler runs): sync the models and hook them. Returns a
    Scopes to close() when the step ends, or None."""
    reg = registry
    if reg.optimizers_changed():
        reg.pending = True
    models = reg.sync(sys._getframe(1))
    if not models:
        return None
    try:
        return Scopes(torch, models).open()
    except Exception as e:
        _log.warning("tftracer: module scopes are off for this step: %s", e)
        return None
