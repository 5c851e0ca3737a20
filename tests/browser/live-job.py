# SPDX-License-Identifier: MIT
"""A small training-like loop under tftracer.TracingServer, for the browser tests.

Steps named "train" (about 15 ms, three nested zones: recorded when a step is
traced) and every 10th an "eval" step; prints the server URL on its first line,
then runs until POST /api/stop, SIGTERM or --seconds.

--torch: the steps train a small PyTorch model instead (zones around its
forward, backward and optimizer step), so that a traced step runs under
torch.profiler and its trace is imported, as in a real job.
--steps N: run N train steps, then stop the server (TracingServer.stop(), as a
job that ends does), print "recorded K steps" (train and eval) and exit.
--wait: wait for a line on stdin before the first step (the page is open).

    PYTHONPATH=build/python python3 tests/browser/live-job.py [--port 0] [--seconds 60] [--dir DIR]
"""
import argparse
import os
import signal
import sys
import tempfile
import time

import tftracer


def busy(ms):
    """Spin for ms milliseconds (a stand-in for compute)."""
    end = time.perf_counter() + ms / 1000.0
    x = 0
    while time.perf_counter() < end:
        x += 1
    return x


def busy_step():
    with tftracer.zone("forward"):
        with tftracer.zone("matmul"):
            busy(4)
        busy(1)
    with tftracer.zone("backward"):
        busy(6)
    with tftracer.zone("optimizer"):
        busy(2)


def torch_step_fn():
    import torch
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(32, 64)
    y = torch.randint(0, 10, (32,))

    def step():
        with tftracer.zone("forward"):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        with tftracer.zone("backward"):
            loss.backward()
        with tftracer.zone("optimizer"):
            opt.step()
            opt.zero_grad()
        busy(5)
    return step


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--dir", default=None, help="where the session file goes (default: a temp dir)")
    ap.add_argument("--torch", action="store_true", help="train a small PyTorch model")
    ap.add_argument("--steps", type=int, default=0, help="run this many train steps, then stop")
    ap.add_argument("--wait", action="store_true", help="wait for a line on stdin first")
    ap.add_argument("--step-ms", type=float, default=None, help="busy time of a step (no --torch)")
    a = ap.parse_args()
    d = a.dir or tempfile.mkdtemp(prefix="tft-live-")
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    one_step = torch_step_fn() if a.torch else busy_step
    if a.step_ms is not None and not a.torch:
        def one_step(ms=a.step_ms):
            with tftracer.zone("work"):
                busy(ms)
    srv = tftracer.TracingServer(port=a.port, session=os.path.join(d, "live-%p.tft"),
                                 torch_profile=a.torch)
    if not srv.url:
        print("no server", flush=True)
        return 1
    print(srv.url, flush=True)
    if a.wait:
        sys.stdin.readline()
    t_end = time.monotonic() + a.seconds
    i = recorded = 0
    try:
        while not stop and time.monotonic() < t_end and not srv.join(0):
            if a.steps and i >= a.steps:
                break
            with srv.step("train") as st:
                one_step()
            recorded += st.index >= 0
            i += 1
            if i % 10 == 0:
                with srv.step("eval") as st:
                    with tftracer.zone("eval forward"):
                        busy(3)
                recorded += st.index >= 0
            time.sleep(0.002)
    finally:
        srv.stop()
    print("recorded %d steps" % recorded, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
