#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# Real PyTorch fixtures: trains a tiny MLP under torch.profiler and writes the
# Chrome traces into OUTDIR (a temp dir, never the repo), plus manifest.json.
"""Usage: gen_torch_trace.py OUTDIR

Writes:
  OUTDIR/mlp_train_<k>.json   one trace per profiler cycle: schedule
                              wait=1 warmup=1 active=3, repeat=2 -> 2 traces of
                              3 ProfilerStep#N each (training: forward, MSE
                              loss, backward, SGD step)
  OUTDIR/mlp_threads.json     no schedule; a second Python thread runs
                              inference under record_function while the main
                              thread trains one step
  OUTDIR/manifest.json        [{"file", "steps", "ops": [names that must appear]}]
Exit 77 if torch cannot be imported (the caller prints SKIP)."""
import json
import os
import sys
import threading

ACTIVE = 3
REPEAT = 2
WAIT = 1
WARMUP = 1


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: gen_torch_trace.py OUTDIR\n")
        return 2
    try:
        import torch
        from torch.profiler import ProfilerActivity, profile, record_function, schedule
    except Exception as e:  # noqa: BLE001 - any import failure means "no torch"
        sys.stderr.write("gen_torch_trace: torch not importable: %s\n" % e)
        return 77
    outdir = argv[1]
    os.makedirs(outdir, exist_ok=True)
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 8))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    manifest = []

    def train_step():
        x = torch.randn(16, 32)
        y = torch.randn(16, 8)
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()

    # 1. scheduled training: on_trace_ready fires once per active window.
    traces = []

    def ready(prof):
        path = os.path.join(outdir, "mlp_train_%d.json" % len(traces))
        prof.export_chrome_trace(path)
        traces.append(path)

    sched = schedule(wait=WAIT, warmup=WARMUP, active=ACTIVE, repeat=REPEAT)
    with profile(activities=[ProfilerActivity.CPU], schedule=sched, record_shapes=True,
                 on_trace_ready=ready) as prof:
        for _ in range((WAIT + WARMUP + ACTIVE) * REPEAT + 1):
            train_step()
            prof.step()
    for path in traces:
        manifest.append({"file": os.path.basename(path), "steps": ACTIVE,
                         "ops": ["aten::linear", "aten::addmm", "aten::mse_loss"]})

    # 2. two threads, annotations, no steps.
    def infer():
        with torch.no_grad():
            for _ in range(3):
                with record_function("side_thread_infer"):
                    model(torch.randn(4, 32))

    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        th = threading.Thread(target=infer)
        th.start()
        with record_function("main_train_block"):
            train_step()
        th.join()
    path = os.path.join(outdir, "mlp_threads.json")
    prof.export_chrome_trace(path)
    manifest.append({"file": "mlp_threads.json", "steps": 0,
                     "ops": ["aten::linear", "aten::addmm", "main_train_block"]})

    with open(os.path.join(outdir, "manifest.json"), "w") as fp:
        json.dump({"torch": torch.__version__, "fixtures": manifest}, fp, indent=1)
    print(json.dumps({"torch": torch.__version__, "files": [m["file"] for m in manifest]}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
