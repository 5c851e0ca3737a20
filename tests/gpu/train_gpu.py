#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""A small PyTorch training loop on the GPU for tests/gpu/verify_cuda.sh.

  train_gpu.py --mode profiler --steps N --out TRACE.json   torch.profiler (CUDA activities) around the loop
  train_gpu.py --mode nvtx --steps N                         NVTX ranges: train > step > forward/backward/optimizer

The same seed, model and data in both modes, so the kernels launched in the
loop are the same. Prints one JSON line: what the program itself counted.
"""
import argparse
import json
import sys

import torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=("profiler", "nvtx", "plain"), default="plain")
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--out")
    a = ap.parse_args()
    if not torch.cuda.is_available():
        print(json.dumps({"error": "no CUDA device"}))
        return 3
    torch.manual_seed(0)
    dev = torch.device("cuda:0")
    torch.backends.cudnn.benchmark = False
    model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512),
                                torch.nn.ReLU(), torch.nn.Linear(512, 10)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(128, 256)
    y = torch.randint(0, 10, (128,))
    # one warm-up step outside what is compared (cuBLAS handles, allocator)
    loss = torch.nn.functional.cross_entropy(model(x.to(dev)), y.to(dev))
    loss.backward()
    opt.step()
    opt.zero_grad()
    torch.cuda.synchronize()

    def step():
        with rng("step"):
            with rng("forward"):
                xb, yb = x.to(dev, non_blocking=False), y.to(dev)
                loss = torch.nn.functional.cross_entropy(model(xb), yb)
            with rng("backward"):
                loss.backward()
            with rng("optimizer"):
                opt.step()
                opt.zero_grad()
        return loss

    class rng:
        def __init__(self, name):
            self.name = name

        def __enter__(self):
            if a.mode == "nvtx":
                torch.cuda.nvtx.range_push(self.name)

        def __exit__(self, *e):
            if a.mode == "nvtx":
                torch.cuda.nvtx.range_pop()

    if a.mode == "profiler":
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for _ in range(a.steps):
                step()
            torch.cuda.synchronize()
        prof.export_chrome_trace(a.out)
    else:
        with rng("train"):
            for _ in range(a.steps):
                step()
            torch.cuda.synchronize()
    print(json.dumps({"mode": a.mode, "steps": a.steps, "torch": torch.__version__,
                      "cuda": torch.version.cuda, "device": torch.cuda.get_device_name(0)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
