#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# Real PyTorch for tests/e2e/test_prof.py: trains a small model one step under
# torch.profiler (record_shapes, with_flops, with_stack) and writes what prof is
# checked against, all from PyTorch itself.
"""Usage: gen_prof_torch.py OUTDIR

Writes into OUTDIR:
  trace.json         the run as a Kineto Chrome trace (tftracer's own writer,
                     python/tftracer/_torchtrace.py: what a traced step stores), with
                     each module's forward call as an "nn.Module: <path>" range (the
                     root "nn.Module: model"), as tftracer's Python module marks them
  keyavg.json        {op name: {"flops": key_averages() flops, "count": calls}}
  model_params.json  the session meta model_params (docs: /work/notes/model-params-spec.md)
  expected.json      {"total_params": sum(p.numel()), "modules": {path: params of the
                     module and its children}, "conv": {module path: [stride, padding,
                     dilation, groups, weight shape]}}
Exit 77 if torch cannot be imported."""
import importlib.util
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))


def load_torchtrace():
    spec = importlib.util.spec_from_file_location(
        "tft_torchtrace", os.path.join(REPO, "python", "tftracer", "_torchtrace.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: gen_prof_torch.py OUTDIR\n")
        return 2
    try:
        import torch
        from torch.profiler import ProfilerActivity, profile, record_function
    except Exception as e:  # noqa: BLE001
        sys.stderr.write("gen_prof_torch: torch not importable: %s\n" % e)
        return 77
    out = argv[1]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    torch.set_num_threads(1)

    class Mixer(torch.nn.Module):
        """bmm, baddbmm, mul and add: the other ops PyTorch counts flops for."""

        def __init__(self):
            super().__init__()
            self.scale = torch.nn.Parameter(torch.ones(10))

        def forward(self, x):
            a = x.view(2, 2, 10)
            b = torch.bmm(a, a.transpose(1, 2))            # [2,2,2]
            c = torch.baddbmm(b, a[:, :, :2], a[:, :2, :2])  # [2,2,2]
            return x * self.scale + c.sum()

    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, stride=2, padding=1),
        torch.nn.ReLU(),
        torch.nn.Conv2d(8, 8, 3, stride=1, padding=2, dilation=2, groups=2),
        torch.nn.Flatten(),
        torch.nn.Linear(8 * 8 * 8, 10),
        Mixer(),
    )
    x = torch.randn(4, 3, 16, 16)
    y = torch.randn(4, 10)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)

    # each module's forward call as a range named after its path (the root: "model")
    names = {m: (p if p else "model") for p, m in model.named_modules()}
    ctx = {}

    def pre(m, inp):
        r = record_function("nn.Module: " + names[m])
        r.__enter__()
        ctx.setdefault(m, []).append(r)

    def post(m, inp, outp):
        ctx[m].pop().__exit__(None, None, None)

    for m in names:
        m.register_forward_pre_hook(pre)
        m.register_forward_hook(post)

    with profile(activities=[ProfilerActivity.CPU], record_shapes=True, with_flops=True,
                 with_stack=True) as prof:
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    tt = load_torchtrace()
    tt.write_trace(prof, os.path.join(out, "trace.json"), {})
    keyavg = {}
    for e in prof.key_averages():
        keyavg[e.key] = {"flops": int(e.flops or 0), "count": int(e.count)}
    with open(os.path.join(out, "keyavg.json"), "w") as f:
        json.dump(keyavg, f)
    # the model_params meta, as the spec has it
    modules = []
    for path, m in model.named_modules():
        own = list(m.named_parameters(recurse=False))
        modules.append({"path": path, "class": type(m).__name__,
                        "params": sum(p.numel() for _, p in own), "buffers": 0,
                        "parameters": [{"name": n, "shape": list(p.shape), "dtype": str(p.dtype).replace("torch.", ""),
                                        "numel": p.numel(), "trainable": p.requires_grad} for n, p in own]})
    total = sum(p.numel() for p in model.parameters())
    meta = {"framework": "pytorch", "version": torch.__version__,
            "models": [{"name": "model", "class": type(model).__name__, "modules": modules,
                        "total_params": total, "trainable_params": total, "optimizer_groups": []}]}
    with open(os.path.join(out, "model_params.json"), "w") as f:
        json.dump(meta, f)
    expected = {"total_params": total,
                "modules": {path: sum(p.numel() for p in m.parameters()) for path, m in model.named_modules()},
                "conv": {path: [list(m.stride), list(m.padding), list(m.dilation), m.groups, list(m.weight.shape)]
                         for path, m in model.named_modules() if isinstance(m, torch.nn.Conv2d)}}
    with open(os.path.join(out, "expected.json"), "w") as f:
        json.dump(expected, f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
