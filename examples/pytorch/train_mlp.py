# SPDX-License-Identifier: MIT
"""Train a small MLP on the CPU with tftracer's TracingServer (the `make demo` job).

Every training step is timed (`with server.step("train")`); evaluation steps form a
second run kind. Open the printed URL: the Runs page shows the step times live;
"Trace next step" records one step's PyTorch ops (torch.profiler) into the live
session, visible in the timeline a moment later.

    PYTHONPATH=build/python /usr/bin/python3 examples/pytorch/train_mlp.py [--steps N]
        [--port 9999] [--session run.tft] [--trace-every K] [--serve]
"""
import argparse
import math
import os
import sys
import time

import torch

import tftracer


def make_data(n=4096, d=32, seed=0):
    """A synthetic regression task: y = sin(x @ w) + noise."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, d, generator=g)
    w = torch.randn(d, 1, generator=g) / math.sqrt(d)
    y = torch.sin(x @ w) + 0.05 * torch.randn(n, 1, generator=g)
    return x, y


def make_model(d=32, hidden=128):
    return torch.nn.Sequential(
        torch.nn.Linear(d, hidden), torch.nn.ReLU(),
        torch.nn.Linear(hidden, hidden), torch.nn.ReLU(),
        torch.nn.Linear(hidden, 1))


def train(server, steps, batch=64, log_every=200, stop_flag=None):
    torch.manual_seed(0)
    x, y = make_data()
    model = make_model(x.shape[1])
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    loss_fn = torch.nn.MSELoss()
    n = x.shape[0]
    for step in range(steps):
        if stop_flag is not None and stop_flag():
            break
        i = (step * batch) % (n - batch)
        xb, yb = x[i:i + batch], y[i:i + batch]
        with server.step("train"):
            with tftracer.zone("forward"):
                loss = loss_fn(model(xb), yb)
            with tftracer.zone("backward"):
                opt.zero_grad()
                loss.backward()
            with tftracer.zone("optimizer"):
                opt.step()
        if step % 50 == 49:
            with server.step("eval"), torch.no_grad():
                val = loss_fn(model(x[:512]), y[:512]).item()
            if log_every and step % log_every == log_every - 1:
                print("step %6d  loss %.4f  val %.4f" % (step + 1, loss.item(), val), flush=True)
    return model


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=2000, help="training steps (0 = until Ctrl-C)")
    ap.add_argument("--port", type=int, default=9999)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--session", default=None, help="session file (default tftracer-<pid>.tft)")
    ap.add_argument("--trace-every", type=int, default=0, help="trace every k-th step")
    ap.add_argument("--serve", action="store_true",
                    help="keep serving after training until Ctrl-C or POST /api/stop")
    a = ap.parse_args(argv)
    torch.set_num_threads(1)
    server = tftracer.TracingServer(port=a.port, host=a.host, session=a.session)
    if not server.url:
        print("tftracer: no server (see the warning above); training anyway", file=sys.stderr)
    else:
        print("tftracer: open %s   (session %s)" % (server.url, server.session_path), flush=True)
    if a.trace_every:
        server.trace_every(a.trace_every)
    try:
        steps = a.steps if a.steps > 0 else 1 << 62
        t0 = time.time()
        train(server, steps, stop_flag=lambda: server.url == "" and server._srv is not None)
        print("trained in %.1f s" % (time.time() - t0), flush=True)
        if a.serve and server.url:
            print("tftracer: serving %s until Ctrl-C" % server.url, flush=True)
            server.join()
    except KeyboardInterrupt:
        print("\ninterrupted", flush=True)
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
