#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# The job's PyTorch models in the session (python/tftracer/_models.py; the spec
# /work/notes/model-params-spec.md, docs/python.md "Models"), with real PyTorch:
# - meta model_params: total params == sum(p.numel() for p in model.parameters()), per
#   module own params == numel of module.parameters(recurse=False), buffers, dtypes,
#   trainable counts, tied weights counted once, optimizer groups and their modules
#   (an MLP, a CNN with BatchNorm, tied weights and a module called twice, torchvision's
#   resnet18), under TracingServer (found from the optimizer, named after the program's
#   variable; or given with model= / watch()) and under `tftracer record`;
# - module scopes in traced steps: `nn.Module: <path>` slices (category python_module)
#   on the training thread, nested as the modules are (resnet18's layer1.0.conv1 inside
#   layer1.0 inside layer1 inside the root), one per forward call, each leaf's holding
#   the ops that module runs (profiled on its own by the test);
# - per-op args: every aten op's "Input Dims"; "flops" per op name (and the count of the
#   ops with FLOPs) equal to an independent torch.profiler key_averages(with_flops=True) of
#   the same step; a strided, padded convolution's flops equal the formula;
# - untraced steps unchanged: no hook left on any module, no optimizer method replaced,
#   no gc pass after the first step; a Kineto-style trace's "nn.Module: " annotation gets
#   category python_module in the live import.
"""Usage: test_model_params.py [CASE ...]   (each case runs in its own process)"""
import collections
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
BUILD = os.environ.get("TFT_BUILD_DIR", "build")
B = BUILD if os.path.isabs(BUILD) else os.path.join(ROOT, BUILD)
PYDIR = os.path.join(B, "python")
CLI = os.path.join(B, "tftracer")
PYTHON = "/usr/bin/python3"
SUITE = "model_params"


def emit(kind, name, reason=None):
    line = "%s %s/%s" % (kind, SUITE, name)
    if reason:
        line += " (%s)" % " ".join(str(reason).split())[:900]
    print(line, flush=True)


def check(name, problems):
    if problems:
        emit("FAIL", name, "; ".join(problems))
    else:
        emit("PASS", name)


# ---- reading a session back (independent of the module under test) ----------------------

def meta(path, key="model_params"):
    con = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    try:
        row = con.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    finally:
        con.close()
    return json.loads(row[0]) if row and row[0] is not None else None


def slices(path, tmp):
    """Every complete slice of the session (Chrome export), times in integer ns."""
    out = os.path.join(tmp, "export-%d.json" % len(os.listdir(tmp)))
    r = subprocess.run([CLI, "export", path, "-f", "chrome", "-o", out], capture_output=True,
                       text=True, timeout=120)
    if r.returncode:
        raise RuntimeError("export: %s" % r.stderr.strip())
    with open(out) as f:
        doc = json.load(f)
    ev = []
    for e in doc["traceEvents"]:
        if e.get("ph") != "X":
            continue
        t0 = round(e["ts"] * 1000)
        ev.append({"name": e["name"], "cat": e.get("cat", ""), "tid": e.get("tid"),
                   "pid": e.get("pid"), "t0": t0, "t1": t0 + round(e.get("dur", 0) * 1000),
                   "args": e.get("args") or {}})
    return ev


def nest(ev):
    """Parent of each slice by time on its thread (a stack; the longer first at a tie)."""
    by = collections.defaultdict(list)
    for i, e in enumerate(ev):
        by[(e["pid"], e["tid"])].append(i)
    for idx in by.values():
        idx.sort(key=lambda i: (ev[i]["t0"], -ev[i]["t1"]))
        stack = []
        for i in idx:
            while stack and ev[stack[-1]]["t1"] < ev[i]["t1"]:
                stack.pop()
            ev[i]["parent"] = stack[-1] if stack else None
            ev[i]["children"] = []
            if stack:
                ev[stack[-1]]["children"].append(i)
            stack.append(i)
    return ev


def ancestors(ev, i):
    out = []
    p = ev[i]["parent"]
    while p is not None:
        out.append(ev[p]["name"])
        p = ev[p]["parent"]
    return out


# ---- what the test expects, computed from the model itself ---------------------------------

def check_model_entry(m, model, probs, label):
    """model_params of one model against the nn.Module (numbers computed here)."""
    total = sum(p.numel() for p in model.parameters())
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    if m.get("total_params") != total:
        probs.append("%s: total_params %r, sum(p.numel()) %d" % (label, m.get("total_params"), total))
    if m.get("trainable_params") != trainable:
        probs.append("%s: trainable_params %r, want %d" % (label, m.get("trainable_params"), trainable))
    if m.get("class") != type(model).__name__:
        probs.append("%s: class %r" % (label, m.get("class")))
    want = list(model.named_modules())
    mods = m.get("modules", [])
    if [x["path"] for x in mods] != [p for p, _ in want]:
        probs.append("%s: module paths %r, want %r" % (label, [x["path"] for x in mods][:8],
                                                       [p for p, _ in want][:8]))
        return
    shared_numel = 0
    for ent, (path, mod) in zip(mods, want):
        own = sum(p.numel() for p in mod.parameters(recurse=False))
        bufs = sum(b.numel() for b in mod.buffers(recurse=False))
        if ent["params"] != own or ent["buffers"] != bufs or ent["class"] != type(mod).__name__:
            probs.append("%s: module %r: params %d buffers %d class %s, want %d %d %s" % (
                label, path, ent["params"], ent["buffers"], ent["class"], own, bufs,
                type(mod).__name__))
        plist = ent.get("parameters", [])
        wantp = list(mod.named_parameters(recurse=False))
        if [(p["name"], p["shape"], p["dtype"], p["numel"], p["trainable"]) for p in plist] != \
                [(n, list(p.shape), str(p.dtype).replace("torch.", ""), p.numel(), p.requires_grad)
                 for n, p in wantp]:
            probs.append("%s: module %r parameters %r" % (label, path, plist))
        shared_numel += sum(p["numel"] for p in plist if "shared_with" in p)
    if sum(x["params"] for x in mods) - shared_numel != total:
        probs.append("%s: own params %d - shared %d != total %d" % (
            label, sum(x["params"] for x in mods), shared_numel, total))


def run_case_process(name, fn):
    tmp = tempfile.mkdtemp(prefix="tft-mp-%s-" % name)
    old = os.getcwd()
    os.chdir(tmp)
    try:
        fn(tmp)
    finally:
        os.chdir(old)
        shutil.rmtree(tmp, ignore_errors=True)


def train_step(model, opt, x, y):
    import torch
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()


# ---- models -------------------------------------------------------------------------------

def make_cnn():
    """A small CNN: BatchNorm, a strided padded conv, tied weights (embed / out share one
    tensor), a block called twice (one module, two forward calls), a frozen layer."""
    import torch
    nn = torch.nn

    class Block(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.conv = nn.Conv2d(c, c, 3, padding=1, bias=False)
            self.bn = nn.BatchNorm2d(c)
            self.act = nn.ReLU(inplace=True)

        def forward(self, x):
            return self.act(self.bn(self.conv(x))) + x

    class TiedCNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Conv2d(3, 8, 3, stride=2, padding=1)
            self.bn = nn.BatchNorm2d(8)
            self.block = Block(8)
            self.pool = nn.AdaptiveAvgPool2d(1)
            self.proj = nn.Linear(8, 16)
            self.frozen = nn.Linear(16, 16)
            self.out = nn.Linear(16, 10, bias=False)
            self.embed = nn.Embedding(10, 16)
            self.out.weight = self.embed.weight  # tied: [10, 16] both
            for p in self.frozen.parameters():
                p.requires_grad_(False)

        def forward(self, x):
            x = torch.relu(self.bn(self.stem(x)))
            x = self.block(self.block(x))  # one module, two calls
            x = self.pool(x).flatten(1)
            return self.out(self.frozen(self.proj(x)))
    return TiedCNN()


# ---- cases --------------------------------------------------------------------------------

def case_mlp(tmp):
    """An MLP found from its optimizer (two param groups), named after the variable."""
    import torch
    import tftracer
    torch.manual_seed(0)
    mlp = torch.nn.Sequential(torch.nn.Linear(20, 64), torch.nn.ReLU(), torch.nn.Linear(64, 64),
                              torch.nn.Tanh(), torch.nn.Linear(64, 3))
    opt = torch.optim.SGD([{"params": list(mlp[0].parameters()) + list(mlp[2].parameters())},
                           {"params": mlp[4].parameters(), "lr": 0.01}], lr=0.1)
    x, y = torch.randn(16, 20), torch.randint(0, 3, (16,))
    path = os.path.join(tmp, "mlp.tft")
    srv = tftracer.TracingServer(port=0, session=path)
    for _ in range(3):
        with srv.step("train"):
            train_step(mlp, opt, x, y)
    srv.stop()
    probs = []
    d = meta(path)
    if not d:
        check("mlp", ["no model_params in the session"])
        return
    if d.get("framework") != "pytorch" or d.get("version") != torch.__version__:
        probs.append("framework/version %r %r" % (d.get("framework"), d.get("version")))
    ms = d.get("models", [])
    if [m["name"] for m in ms] != ["mlp"]:
        probs.append("models %r, want one named mlp" % [m["name"] for m in ms])
    if ms:
        check_model_entry(ms[0], mlp, probs, "mlp")
        g = ms[0].get("optimizer_groups", [])
        want = [{"optimizer": "SGD", "group": 0, "lr": 0.1,
                 "params": sum(p.numel() for p in list(mlp[0].parameters()) + list(mlp[2].parameters())),
                 "modules": ["0", "2"]},
                {"optimizer": "SGD", "group": 1, "lr": 0.01,
                 "params": sum(p.numel() for p in mlp[4].parameters()), "modules": ["4"]}]
        if g != want:
            probs.append("optimizer_groups %r, want %r" % (g, want))
    check("mlp", probs)


def case_cnn_shared(tmp):
    """BatchNorm buffers, tied weights counted once, a frozen layer, model= with a name."""
    import torch
    import tftracer
    torch.manual_seed(0)
    net = make_cnn()
    opt = torch.optim.SGD([p for p in net.parameters() if p.requires_grad], lr=0.05, momentum=0.9)
    x, y = torch.randn(4, 3, 16, 16), torch.randint(0, 10, (4,))
    path = os.path.join(tmp, "cnn.tft")
    srv = tftracer.TracingServer(port=0, session=path, model={"tied_cnn": net})
    for _ in range(2):
        with srv.step("train"):
            train_step(net, opt, x, y)
    srv.stop()
    probs = []
    d = meta(path)
    ms = (d or {}).get("models", [])
    if [m["name"] for m in ms] != ["tied_cnn"]:
        probs.append("models %r, want one named tied_cnn (the model= name; the optimizer's "
                     "model is the same one)" % [m["name"] for m in ms])
    if ms:
        m = ms[0]
        check_model_entry(m, net, probs, "cnn")
        tied = [(x["path"], p) for x in m["modules"] for p in x.get("parameters", [])
                if "shared_with" in p]
        if tied != [("embed", {"name": "weight", "shape": [10, 16], "dtype": "float32",
                               "numel": 160, "trainable": True, "shared_with": "out.weight"})]:
            probs.append("shared parameters %r, want embed.weight shared with out.weight" % tied)
        bn = [x for x in m["modules"] if x["path"] == "bn"]
        if not bn or bn[0]["buffers"] != 8 + 8 + 1:
            probs.append("bn buffers %r, want 17 (running_mean, running_var, num_batches_tracked)" % bn)
        g = m.get("optimizer_groups", [])
        want_n = sum(p.numel() for p in net.parameters() if p.requires_grad)
        if len(g) != 1 or g[0]["params"] != want_n or "frozen" in g[0]["modules"] or \
                g[0]["modules"] != ["stem", "bn", "block.conv", "block.bn", "proj", "out", "embed"]:
            probs.append("optimizer_groups %r (want %d params, every module with trainable "
                         "params but frozen)" % (g, want_n))
    check("cnn_shared", probs)


def _torchvision():
    try:
        import torchvision
        return torchvision, None
    except Exception as e:
        return None, "torchvision is not importable (%s): apt-get install python3-torchvision " \
                     "(scripts/install-deps.sh)" % e


def case_resnet18(tmp):
    """torchvision's resnet18: params exactly; module scopes nested as the modules are,
    one per forward call, on the training thread; hooks gone afterwards."""
    import threading
    import torch
    import tftracer
    tv, why = _torchvision()
    if tv is None:
        check("resnet18", [why])
        return
    torch.manual_seed(0)
    torch.set_num_threads(1)
    resnet = tv.models.resnet18(num_classes=10)
    opt = torch.optim.SGD(resnet.parameters(), lr=0.01, momentum=0.9)
    x, y = torch.randn(2, 3, 32, 32), torch.randint(0, 10, (2,))
    # forward calls per module, counted by the test's own hooks in an untraced step
    calls = collections.Counter()
    names = {id(m): p for p, m in resnet.named_modules()}
    hs = [m.register_forward_pre_hook(lambda mod, inp: calls.update([names[id(mod)]]))
          for m in resnet.modules()]
    train_step(resnet, opt, x, y)
    for h in hs:
        h.remove()
    path = os.path.join(tmp, "resnet.tft")
    srv = tftracer.TracingServer(port=0, session=path)
    for i in range(3):
        if i == 1:
            srv.trace_next(1)
        with srv.step("train"):
            train_step(resnet, opt, x, y)
    srv.wait_imports(120)
    srv.stop()
    probs = []
    d = meta(path)
    ms = (d or {}).get("models", [])
    if [m["name"] for m in ms] != ["resnet"]:
        probs.append("models %r, want one named resnet" % [m["name"] for m in ms])
    if ms:
        check_model_entry(ms[0], resnet, probs, "resnet18")
        if ms[0]["total_params"] != 11181642:  # resnet18 with 10 classes, a known number
            probs.append("resnet18 total %d" % ms[0]["total_params"])
    for m in resnet.modules():
        if m._forward_hooks or m._forward_pre_hooks:
            probs.append("hooks left on %s" % type(m).__name__)
            break
    ev = nest(slices(path, tmp))
    scopes = [i for i, e in enumerate(ev) if e["name"].startswith("nn.Module: ")]
    got = collections.Counter(ev[i]["name"][len("nn.Module: "):] for i in scopes)
    want = collections.Counter({("resnet" if p == "" else p): n for p, n in calls.items()})
    if got != want:
        probs.append("scope slices per module differ from forward calls: got-want %r, want-got %r" % (
            dict(got - want), dict(want - got)))
    if any(ev[i]["cat"] != "python_module" for i in scopes):
        probs.append("scope categories %r" % sorted({ev[i]["cat"] for i in scopes}))
    if {ev[i]["tid"] for i in scopes} != {threading.get_native_id()}:
        probs.append("scopes on threads %r" % sorted({ev[i]["tid"] for i in scopes}))
    conv = [i for i in scopes if ev[i]["name"] == "nn.Module: layer1.0.conv1"]
    if len(conv) != 1:
        probs.append("%d layer1.0.conv1 scopes" % len(conv))
    else:
        anc = [a for a in ancestors(ev, conv[0]) if a.startswith("nn.Module: ")]
        if anc != ["nn.Module: layer1.0", "nn.Module: layer1", "nn.Module: resnet"]:
            probs.append("layer1.0.conv1 nested in %r" % anc)
        kids = [ev[c]["name"] for c in ev[conv[0]]["children"]]
        if kids != ["aten::conv2d"]:
            probs.append("layer1.0.conv1 holds %r, want [aten::conv2d]" % kids)
    # every module scope inside its parent module's scope
    for i in scopes:
        path_ = ev[i]["name"][len("nn.Module: "):]
        mods = [a for a in ancestors(ev, i) if a.startswith("nn.Module: ")]
        if path_ == "resnet":
            if mods:
                probs.append("the root scope is inside %r" % mods)
            continue
        parent = path_.rsplit(".", 1)[0] if "." in path_ else "resnet"
        if not mods or mods[0] != "nn.Module: " + parent:
            probs.append("%s inside %r, want %s first" % (path_, mods[:2], parent))
            break
    # the block's residual add is in the block, not in a child module
    blk = [i for i in scopes if ev[i]["name"] == "nn.Module: layer1.0"]
    if blk:
        kids = [ev[c]["name"] for c in ev[blk[0]]["children"]]
        want_k = ["nn.Module: layer1.0.conv1", "nn.Module: layer1.0.bn1", "nn.Module: layer1.0.relu",
                  "nn.Module: layer1.0.conv2", "nn.Module: layer1.0.bn2", "aten::add_",
                  "nn.Module: layer1.0.relu"]
        if kids != want_k:
            probs.append("layer1.0 holds %r, want %r" % (kids, want_k))
    check("resnet18", probs)


def _leaf_ops_standalone(mod, inp):
    """The top-level ops of mod(*inp) run alone under the test's own profiler."""
    import copy
    import torch
    m2 = copy.deepcopy(mod)
    m2._forward_pre_hooks.clear()  # (the copy has the test's own hook)
    inp2 = tuple(t.detach().clone() if torch.is_tensor(t) else t for t in inp)
    with torch.autograd.profiler.profile(record_shapes=True) as p:
        m2(*inp2)
    # the profiler's own event tree (ns times; function_events nest by rounded µs)
    roots = p.kineto_results.experimental_event_tree()
    return [n.name for n in sorted(roots, key=lambda n: n.start_time_ns)]


def case_scope_ops(tmp):
    """Each leaf module's scope holds the ops that module runs, as its own profile says;
    the CNN's shared block has two scopes; the FLOPs per op of the step equal an
    independent torch.profiler run (and the scopes add no op); every aten op has Input Dims;
    the strided conv's flops equal the formula."""
    import torch
    import tftracer
    torch.manual_seed(0)
    torch.set_num_threads(1)
    net = make_cnn()
    opt = torch.optim.SGD([p for p in net.parameters() if p.requires_grad], lr=0.05)
    x, y = torch.randn(4, 3, 16, 16), torch.randint(0, 10, (4,))
    # leaf modules' inputs, from the test's own hooks
    names = {id(m): p for p, m in net.named_modules()}
    leaf_calls = []
    hs = [m.register_forward_pre_hook(
        lambda mod, inp: leaf_calls.append((names[id(mod)], _leaf_ops_standalone(mod, inp))))
        for m in net.modules() if not list(m.children())]
    with torch.no_grad():
        net(x)
    for h in hs:
        h.remove()
    net.train()
    path = os.path.join(tmp, "ops.tft")
    srv = tftracer.TracingServer(port=0, session=path)
    for i in range(4):
        if i == 2:
            srv.trace_next(1)
        with srv.step("train"):
            train_step(net, opt, x, y)
    srv.wait_imports(60)
    srv.stop()
    # the same step under the test's own profiler
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True, with_flops=True) as p:
        train_step(net, opt, x, y)
    ka = {e.key: (e.count, e.flops) for e in p.key_averages() if e.key.startswith("aten::")}
    probs = []
    ev = nest(slices(path, tmp))
    ops = [e for e in ev if e["cat"] == "cpu_op"]
    got = {}
    for e in ops:
        if e["name"].startswith("aten::"):
            c, f = got.get(e["name"], (0, 0))
            got[e["name"]] = (c + 1, f + int(e["args"].get("flops", 0)))
    # FLOPs per op name; counts of the ops PyTorch counts FLOPs for, and of aten::zeros
    # (record_function, which the scopes must not use, makes one per range). (Other ops'
    # counts can differ by a few: key_averages nests events by µs-rounded times and
    # drops an op that appears to be the only child of a same-named one.)
    flops_got = {k: f for k, (c, f) in got.items() if f or ka.get(k, (0, 0))[1]}
    flops_ka = {k: f for k, (c, f) in ka.items() if f or got.get(k, (0, 0))[1]}
    if flops_got != flops_ka:
        probs.append("FLOPs per aten op: session %r, key_averages %r" % (flops_got, flops_ka))
    counted = set(flops_ka) | {"aten::zeros"}
    cnt_got = {k: got.get(k, (0, 0))[0] for k in counted}
    cnt_ka = {k: ka.get(k, (0, 0))[0] for k in counted}
    if cnt_got != cnt_ka:
        probs.append("op counts: session %r, key_averages %r" % (cnt_got, cnt_ka))
    if sum(f for _, f in ka.values()) == 0:
        probs.append("key_averages counted no FLOPs")
    # a redispatch (MeanBackward1's aten::div calls aten::div) is one op, as PyTorch's
    # tables count it: no op is the only op inside an op of its own name
    dups = [e["name"] for e in ops if e["parent"] is not None and ev[e["parent"]]["name"] == e["name"]
            and [c for c in ev[e["parent"]]["children"] if ev[c]["cat"] == "cpu_op"] == [ev.index(e)]]
    if dups:
        probs.append("ops nested in an op of their own name, alone: %r" % dups)
    if got.get("aten::div", (0, 0))[0] != 1:
        probs.append("%r aten::div (want 1: the pool's MeanBackward1)" % (got.get("aten::div"),))
    nodims = sorted({e["name"] for e in ops if "Input Dims" not in e["args"]})
    if nodims:
        probs.append("ops without Input Dims: %r" % nodims[:10])
    stem = [e for e in ops if e["name"] == "aten::conv2d" and e["args"].get("Input Dims", [[]])[0] == [4, 3, 16, 16]]
    # 2 * N * Cout * Hout * Wout * Cin * kh * kw, Hout = (16 + 2*1 - 3) // 2 + 1
    ho = (16 + 2 * 1 - 3) // 2 + 1
    want_f = 2 * 4 * 8 * ho * ho * 3 * 3 * 3
    if [e["args"].get("flops") for e in stem] != [want_f]:
        probs.append("stem conv2d flops %r, want [%d] (stride 2, padding 1)" % (
            [e["args"].get("flops") for e in stem], want_f))
    # leaf scopes: in call order, each holding the ops the module runs alone
    scopes = [i for i, e in enumerate(ev) if e["cat"] == "python_module"]
    scopes.sort(key=lambda i: ev[i]["t0"])
    leaf_paths = {p for p, _ in leaf_calls}
    leaf_scopes = [i for i in scopes if ev[i]["name"][len("nn.Module: "):] in leaf_paths]
    got_leaf = [(ev[i]["name"][len("nn.Module: "):], [ev[c]["name"] for c in ev[i]["children"]])
                for i in leaf_scopes]
    if got_leaf != leaf_calls:
        probs.append("leaf scopes and their ops %r, want %r" % (got_leaf, leaf_calls))
    blocks = [i for i in scopes if ev[i]["name"] == "nn.Module: block"]
    if len(blocks) != 2:
        probs.append("%d scopes of the block called twice" % len(blocks))
    root = [i for i in scopes if ev[i]["name"] == "nn.Module: net"]
    if len(root) != 1 or any(ev[i]["parent"] is None for i in scopes if i not in root):
        probs.append("root scope %r; every other scope inside one" % [ev[i]["name"] for i in root])
    check("scope_ops", probs)


def case_untraced(tmp):
    """Untraced steps are untouched: after traced ones no hook is left (a hook of the
    program's own stays), no optimizer method is replaced, the models are described once
    (no gc pass per step), and only traced steps have module scopes."""
    import gc
    import torch
    import tftracer
    from tftracer import _models
    torch.manual_seed(0)
    net = make_cnn()
    opt = torch.optim.SGD([p for p in net.parameters() if p.requires_grad], lr=0.05)
    step_fn = type(opt).step
    user_hook = []
    net.proj.register_forward_hook(lambda m, i, o: user_hook.append(1))
    x, y = torch.randn(2, 3, 16, 16), torch.randint(0, 10, (2,))
    passes = [0]
    real = gc.get_objects

    def counting(*a, **k):
        passes[0] += 1
        return real(*a, **k)
    gc.get_objects = counting
    path = os.path.join(tmp, "untraced.tft")
    srv = tftracer.TracingServer(port=0, session=path)
    before = {n: (dict(m._forward_pre_hooks), dict(m._forward_hooks)) for n, m in net.named_modules()}
    probs = []
    for i in range(12):
        if i in (3, 7):
            srv.trace_next(1)
        with srv.step("train"):
            train_step(net, opt, x, y)
        if i == 1:
            after_first = passes[0]
    srv.wait_imports(60)
    srv.stop()
    gc.get_objects = real
    after = {n: (dict(m._forward_pre_hooks), dict(m._forward_hooks)) for n, m in net.named_modules()}
    if {n: (list(a), list(b)) for n, (a, b) in before.items()} != \
            {n: (list(a), list(b)) for n, (a, b) in after.items()}:
        probs.append("module hooks changed: %r" % {n: v for n, v in after.items() if v != before.get(n)})
    if len(user_hook) != 12:
        probs.append("the program's own hook ran %d times in 12 steps" % len(user_hook))
    if type(opt).step is not step_fn:
        probs.append("the optimizer's step method was replaced")
    if after_first > 2 or passes[0] != after_first:
        probs.append("gc passes: %d by the first steps, %d in all (want at most 2, none later)" % (
            after_first, passes[0]))
    if _models.registry.pending:
        probs.append("the registry is still pending after the steps")
    ev = slices(path, tmp)
    st = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    steps = st.execute("SELECT idx, start_ns, dur_ns, traced FROM steps ORDER BY idx").fetchall()
    st.close()
    scopes = [e for e in ev if e["cat"] == "python_module"]
    roots = [e for e in scopes if e["name"] == "nn.Module: net"]
    if len(roots) != 2:
        probs.append("%d root scopes, want 2 (one per traced step)" % len(roots))
    if [i for i, _, _, tr in steps if tr] != [3, 7]:
        probs.append("traced steps %r" % [i for i, _, _, tr in steps if tr])
    untraced = [(t0, t0 + d) for _, t0, d, tr in steps if not tr]
    inside = [e["name"] for e in scopes for a, b in untraced if a <= e["t0"] < b]
    if inside:
        probs.append("module scopes in untraced steps: %r" % inside[:5])
    traced = [(t0, t0 + d) for _, t0, d, tr in steps if tr]
    if sorted(sum(1 for e in roots if a <= e["t0"] < b) for a, b in traced) != [1, 1]:
        probs.append("root scopes not one in each traced step")
    check("untraced", probs)


def case_watch(tmp):
    """watch(): a model no optimizer updates (a teacher, in eval), by its given name, and
    its scopes in a traced step under that name; the trained one found beside it."""
    import torch
    import tftracer
    torch.manual_seed(0)
    student = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    teacher = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.Linear(32, 2)).eval()
    opt = torch.optim.Adam(student.parameters(), lr=1e-3)
    x, y = torch.randn(4, 8), torch.randint(0, 2, (4,))
    path = os.path.join(tmp, "watch.tft")
    srv = tftracer.TracingServer(port=0, session=path)
    srv.watch(teacher, "teacher")
    for i in range(3):
        if i == 1:
            srv.trace_next(1)
        with srv.step("train"):
            with torch.no_grad():
                t = teacher(x)
            loss = torch.nn.functional.cross_entropy(student(x), y) + \
                torch.nn.functional.mse_loss(student(x), t)
            opt.zero_grad()
            loss.backward()
            opt.step()
    srv.wait_imports(60)
    srv.stop()
    probs = []
    d = meta(path) or {}
    ms = {m["name"]: m for m in d.get("models", [])}
    if sorted(ms) != ["student", "teacher"]:
        probs.append("models %r" % sorted(ms))
    else:
        check_model_entry(ms["teacher"], teacher, probs, "teacher")
        check_model_entry(ms["student"], student, probs, "student")
        if ms["teacher"]["optimizer_groups"] != []:
            probs.append("teacher groups %r" % ms["teacher"]["optimizer_groups"])
        g = ms["student"]["optimizer_groups"]
        if [(x["optimizer"], x["params"], x["modules"]) for x in g] != \
                [("Adam", sum(p.numel() for p in student.parameters()), ["0", "2"])]:
            probs.append("student groups %r" % g)
    ev = nest(slices(path, tmp))
    names = collections.Counter(e["name"] for e in ev if e["cat"] == "python_module")
    want = collections.Counter({"nn.Module: teacher": 1, "nn.Module: student": 2, "nn.Module: 0": 3,
                                "nn.Module: 1": 3, "nn.Module: 2": 2})
    if names != want:
        probs.append("scopes %r, want %r" % (dict(names), dict(want)))
    try:
        srv.watch(42)
        probs.append("watch(42) did not raise TypeError")
    except TypeError:
        pass
    check("watch", probs)


def case_raising_forward(tmp):
    """A forward that raises inside a traced step (the program catches it): the scopes
    opened so far end, later ones still nest, and no hook is left."""
    import torch
    import tftracer
    torch.manual_seed(0)

    class Flaky(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(4, 4)
            self.fail = True

        def forward(self, x):
            x = self.lin(x)
            if self.fail:
                raise ValueError("flaky")
            return x

    class Outer(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.flaky = Flaky()
            self.head = torch.nn.Linear(4, 2)

        def forward(self, x):
            try:
                x = self.flaky(x)
            except ValueError:
                self.flaky.fail = False
                x = self.flaky(x)
            return self.head(x)
    outer = Outer()
    opt = torch.optim.SGD(outer.parameters(), lr=0.1)
    x = torch.randn(3, 4)
    path = os.path.join(tmp, "raise.tft")
    srv = tftracer.TracingServer(port=0, session=path)
    for i in range(3):
        if i == 1:
            srv.trace_next(1)
            outer.flaky.fail = True
        with srv.step("train"):
            loss = outer(x).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
    srv.wait_imports(60)
    srv.stop()
    probs = []
    ev = nest(slices(path, tmp))
    sc = [i for i, e in enumerate(ev) if e["cat"] == "python_module"]
    names = sorted(ev[i]["name"] for i in sc)
    want = sorted(["nn.Module: outer", "nn.Module: flaky", "nn.Module: flaky", "nn.Module: flaky.lin",
                   "nn.Module: flaky.lin", "nn.Module: head"])
    if names != want:
        probs.append("scopes %r, want %r" % (names, want))
    # the raising call's scope ends (when the next module call begins), so that the retry
    # and the head are not inside it
    for i in sc:
        mods = [a for a in ancestors(ev, i) if a.startswith("nn.")]
        want_anc = {"nn.Module: outer": [], "nn.Module: flaky": ["nn.Module: outer"],
                    "nn.Module: flaky.lin": ["nn.Module: flaky", "nn.Module: outer"],
                    "nn.Module: head": ["nn.Module: outer"]}[ev[i]["name"]]
        if mods != want_anc:
            probs.append("%s inside %r, want %r" % (ev[i]["name"], mods, want_anc))
    for m in outer.modules():
        if m._forward_hooks or m._forward_pre_hooks:
            probs.append("hooks left on %s" % type(m).__name__)
    check("raising_forward", probs)


def case_kineto_category(tmp):
    """A Kineto trace (what a PyTorch with Kineto exports) imported into the live session:
    its record_function "nn.Module: ..." ranges get category python_module, other
    user annotations keep theirs."""
    import tftracer
    path = os.path.join(tmp, "kineto.tft")
    srv = tftracer.TracingServer(port=0, session=path)
    pid, tid = os.getpid(), 1 << 41
    ev = [{"ph": "X", "cat": "user_annotation", "name": "nn.Module: model", "pid": pid, "tid": tid,
           "ts": 100.0, "dur": 50.0, "args": {}},
          {"ph": "X", "cat": "user_annotation", "name": "nn.Module: layer.0", "pid": pid, "tid": tid,
           "ts": 110.0, "dur": 20.0, "args": {}},
          {"ph": "X", "cat": "cpu_op", "name": "aten::addmm", "pid": pid, "tid": tid, "ts": 112.0,
           "dur": 5.0, "args": {"Input Dims": [[2], [3, 4], [4, 2]], "flops": 48}},
          {"ph": "X", "cat": "user_annotation", "name": "forward", "pid": pid, "tid": tid, "ts": 131.0,
           "dur": 5.0, "args": {}},
          {"ph": "X", "cat": "user_annotation", "name": "nn.Module:", "pid": pid, "tid": tid, "ts": 137.0,
           "dur": 1.0, "args": {}}]
    f = os.path.join(tmp, "k.json")
    with open(f, "w") as fh:
        json.dump({"schemaVersion": 1, "traceEvents": ev}, fh)
    n = srv.import_trace("torch", path=f, block=True)
    srv.stop()
    probs = []
    if n != 5:
        probs.append("imported %r events" % n)
    got = {e["name"]: (e["cat"], e["args"]) for e in slices(path, tmp) if e["tid"] == tid}
    want = {"nn.Module: model": "python_module", "nn.Module: layer.0": "python_module",
            "aten::addmm": "cpu_op", "forward": "user_annotation", "nn.Module:": "user_annotation"}
    if {k: v[0] for k, v in got.items()} != want:
        probs.append("categories %r, want %r" % ({k: v[0] for k, v in got.items()}, want))
    if got.get("aten::addmm", (0, {}))[1] != {"Input Dims": [[2], [3, 4], [4, 2]], "flops": 48}:
        probs.append("aten::addmm args %r" % (got.get("aten::addmm"),))
    check("kineto_category", probs)


def case_late_torch(tmp):
    """A job that imports PyTorch after its first steps: those steps cost no model work
    (nothing pending, no sync per step); once torch.optim is imported and an optimizer
    made, the next step describes the model."""
    import tftracer
    from tftracer import _models
    probs = []
    if "torch" in sys.modules:
        check("late_torch", ["torch was imported before the case began"])
        return
    path = os.path.join(tmp, "late.tft")
    srv = tftracer.TracingServer(port=0, session=path)
    calls = [0]
    real = _models.Registry.sync

    def counting(self, *a, **k):
        calls[0] += 1
        return real(self, *a, **k)
    _models.Registry.sync = counting
    for _ in range(50):
        with srv.step("warmup"):
            pass
    if calls[0] != 1 or _models.registry.pending:
        probs.append("%d syncs in 50 steps without torch (want 1), pending %r" % (
            calls[0], _models.registry.pending))
    import torch
    late = torch.nn.Sequential(torch.nn.Linear(5, 7), torch.nn.Linear(7, 1))
    opt = torch.optim.SGD(late.parameters(), lr=0.1)
    for _ in range(3):
        with srv.step("train"):
            late(torch.randn(2, 5)).sum().backward()
            opt.step()
    _models.Registry.sync = real
    srv.stop()
    d = meta(path) or {}
    ms = d.get("models", [])
    if [m["name"] for m in ms] != ["late"]:
        probs.append("models %r" % [m["name"] for m in ms])
    else:
        check_model_entry(ms[0], late, probs, "late")
    check("late_torch", probs)


RECORD_SCRIPT = r'''
import sys, torch
sys.path.insert(0, sys.argv[2])
import test_model_params as T
torch.manual_seed(0)
torch.set_num_threads(1)
model = T.make_cnn()
opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.05)
x, y = torch.randn(4, 3, 16, 16), torch.randint(0, 10, (4,))
for it in range(int(sys.argv[1])):
    T.train_step(model, opt, x, y)
'''


def case_record(tmp):
    """`tftracer record -- python3 train.py`: the script knows nothing of tftracer; its
    model is described (named after its variable) and scoped in the traced steps."""
    import torch
    script = os.path.join(tmp, "train.py")
    with open(script, "w") as f:
        f.write(RECORD_SCRIPT)
    sess = os.path.join(tmp, "rec.tft")
    env = dict(os.environ, PYTHONPATH=PYDIR, PYTHONDONTWRITEBYTECODE="1")
    r = subprocess.run([CLI, "record", "-o", sess, "--port", "0", "-q", "--trace-next", "2", "--",
                        PYTHON, script, "6", HERE], capture_output=True, text=True, timeout=300,
                       env=env)
    probs = []
    if r.returncode != 0:
        check("record", ["record exit %d: %s" % (r.returncode, r.stderr.strip()[-400:])])
        return
    d = meta(sess) or {}
    ms = d.get("models", [])
    if [m["name"] for m in ms] != ["model"]:
        probs.append("models %r" % [m["name"] for m in ms])
    else:
        sys.path.insert(0, HERE)
        torch.manual_seed(0)
        ref = make_cnn()  # the same architecture, built here
        check_model_entry(ms[0], ref, probs, "record")
    ev = nest(slices(sess, tmp))
    roots = [e for e in ev if e["name"] == "nn.Module: model" and e["cat"] == "python_module"]
    if len(roots) != 2:
        probs.append("%d root scopes, want 2 (two traced steps)" % len(roots))
    convs = [e for e in ev if e["name"] == "aten::conv2d"]
    if not convs or any(not any(ev[p]["name"].startswith("nn.Module: ") for p in [e["parent"]] if p is not None)
                        for e in convs):
        probs.append("aten::conv2d not all directly inside a module scope")
    check("record", probs)


def case_exports(tmp):
    """The module's runtime API is interposable (python/tftracer/_tftracer.map): every TFT_API
    function of include/tftracer/ is in its dynamic symbol table, so that under `tftracer
    record` (libtftracer-preload.so first) each call reaches the one runtime that owns the
    session. One left out runs the module's own copy: tft_set_meta was, and model_params
    went into a table that no drain reads (the record case's "models []")."""
    import glob
    want = set()
    for h in glob.glob(os.path.join(ROOT, "include", "tftracer", "*.h")):
        text = re.sub(r"/\*.*?\*/", " ", open(h).read(), flags=re.S)
        want.update(re.findall(r"\bTFT_API\b[^;{()]*?\b(tft_\w+)\s*\(", text))
    mod = glob.glob(os.path.join(PYDIR, "tftracer", "_tftracer*.so"))
    probs = []
    if len(want) < 10 or "tft_set_meta" not in want or len(mod) != 1:
        probs.append("TFT_API functions %r, module %r" % (sorted(want), mod))
    else:
        r = subprocess.run(["nm", "-D", "--defined-only", mod[0]], capture_output=True, text=True)
        have = {ln.split()[-1] for ln in r.stdout.splitlines() if ln.strip()}
        if r.returncode:
            probs.append("nm: %s" % r.stderr.strip()[-300:])
        elif want - have:
            probs.append("not exported by %s: %s" % (os.path.basename(mod[0]), " ".join(sorted(want - have))))
    check("exports", probs)


CASES = {
    "mlp": case_mlp,
    "cnn_shared": case_cnn_shared,
    "resnet18": case_resnet18,
    "scope_ops": case_scope_ops,
    "untraced": case_untraced,
    "watch": case_watch,
    "raising_forward": case_raising_forward,
    "kineto_category": case_kineto_category,
    "late_torch": case_late_torch,
    "record": case_record,
    "exports": case_exports,
}


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--case":
        sys.path.insert(0, PYDIR)
        name = sys.argv[2]
        import importlib.util
        if importlib.util.find_spec("torch") is None:  # (late_torch imports it itself)
            emit("FAIL", name, "torch not importable: install python3-torch")
            return 1
        try:
            run_case_process(name, CASES[name])
        except Exception as e:
            import traceback
            traceback.print_exc()
            emit("FAIL", name, "%s: %s" % (type(e).__name__, e))
            return 1
        return 0
    if not os.path.isdir(os.path.join(PYDIR, "tftracer")) or not os.path.exists(CLI):
        emit("FAIL", "module", "not built: %s, %s (make O=%s)" % (PYDIR, CLI, BUILD))
        return 1
    nfail = 0
    only = sys.argv[1:]
    for name in CASES:
        if only and name not in only:
            continue
        env = dict(os.environ, PYTHONPATH=PYDIR, PYTHONDONTWRITEBYTECODE="1")
        t = time.monotonic()
        try:
            r = subprocess.run([PYTHON, os.path.abspath(__file__), "--case", name], env=env,
                               capture_output=True, text=True, timeout=600)
            out, rc, err = r.stdout, r.returncode, r.stderr
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            rc, err = -1, "timeout"
        lines = [ln for ln in out.splitlines() if re.match(r"^(PASS|FAIL|SKIP|#) ", ln)]
        for ln in lines:
            print(ln, flush=True)
        nfail += sum(1 for ln in lines if ln.startswith("FAIL "))
        if rc != 0 and not any(ln.startswith("FAIL ") for ln in lines):
            emit("FAIL", name, "exit %s: %s" % (rc, " | ".join(err.strip().splitlines()[-4:])))
            nfail += 1
        elif not lines:
            emit("FAIL", name, "no verdict: %s" % " | ".join(err.strip().splitlines()[-4:]))
            nfail += 1
        print("# %s: %.1f s" % (name, time.monotonic() - t), flush=True)
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
