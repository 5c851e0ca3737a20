#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# Real PyTorch traces with a known performance problem, and their fixed twins, for
# the advisor's tests (tests/e2e/test_advise.py): torch.profiler over a CPU training
# loop, written as Chrome traces into OUTDIR (a temp dir, never the repo).
"""Usage: gen_advise_traces.py OUTDIR

Writes:
  OUTDIR/input_bound_bad.json   a DataLoader whose samples take ~1 ms each to make
                                (Python work per sample): the step waits for its batch
  OUTDIR/input_bound_ok.json    the same model fed from tensors made beforehand
  OUTDIR/tiny_ops_bad.json      a loop of 600 element-wise ops on 16-element tensors
                                per step (each op costs its dispatch, not its arithmetic)
  OUTDIR/tiny_ops_ok.json       the same result from a few ops on whole tensors, with
                                larger matrix products to do
Exit 77 if torch cannot be imported (the caller prints SKIP)."""
import os
import sys
import time

STEPS = 6  # active steps per trace


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: gen_advise_traces.py OUTDIR\n")
        return 2
    try:
        import torch
        from torch.profiler import ProfilerActivity, profile, schedule
        from torch.utils.data import DataLoader, Dataset
    except Exception as e:  # noqa: BLE001 - any import failure means "no torch"
        sys.stderr.write("gen_advise_traces: torch not importable: %s\n" % e)
        return 77
    out = argv[1]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    torch.set_num_threads(1)

    def run(path, batches, step_fn):
        """Profile STEPS steps (after one wait and one warm-up step) into path."""
        done = []

        def ready(prof):
            prof.export_chrome_trace(path)
            done.append(path)

        sched = schedule(wait=1, warmup=1, active=STEPS, repeat=1)
        with profile(activities=[ProfilerActivity.CPU], schedule=sched, on_trace_ready=ready) as prof:
            for i, batch in enumerate(batches):
                step_fn(batch)
                prof.step()
                if i + 1 >= STEPS + 2:
                    break
        if not done:
            raise RuntimeError("no trace written for %s" % path)

    # ---- input-bound: the loader makes each sample in Python -----------------------------
    model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 16))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)

    def train(batch):
        x, y = batch
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()

    class SlowSamples(Dataset):
        def __len__(self):
            return 100000

        def __getitem__(self, i):
            t = time.perf_counter()
            while time.perf_counter() - t < 0.001:  # decoding, augmenting: 1 ms of Python per sample
                pass
            return torch.randn(256), torch.randn(16)

    run(os.path.join(out, "input_bound_bad.json"), DataLoader(SlowSamples(), batch_size=32, num_workers=0), train)
    ready = [(torch.randn(32, 256), torch.randn(32, 16)) for _ in range(STEPS + 2)]
    big = torch.nn.Sequential(torch.nn.Linear(256, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 16))
    bopt = torch.optim.SGD(big.parameters(), lr=0.01)

    def train_big(batch):
        x, y = batch
        loss = torch.nn.functional.mse_loss(big(x), y)
        bopt.zero_grad()
        loss.backward()
        bopt.step()

    run(os.path.join(out, "input_bound_ok.json"), iter(ready), train_big)

    # ---- tiny ops: a Python loop of element-wise ops on small tensors --------------------
    def tiny(_):
        x = torch.zeros(16)
        for _ in range(600):
            x = x + 1.0
        return x

    a = torch.randn(128, 128)

    def vectorised(_):
        x = torch.zeros(16) + 600.0
        for _ in range(6):
            torch.mm(a, a)
        return x

    run(os.path.join(out, "tiny_ops_bad.json"), iter(range(STEPS + 2)), tiny)
    run(os.path.join(out, "tiny_ops_ok.json"), iter(range(STEPS + 2)), vectorised)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
