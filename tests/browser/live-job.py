# SPDX-License-Identifier: MIT
"""A small training-like loop under tftracer.TracingServer, for the browser tests.

Steps named "train" (about 15 ms, three nested zones: recorded when a step is
traced) and every 10th an "eval" step; prints the server URL on its first line,
then runs until POST /api/stop, SIGTERM or --seconds.

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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--dir", default=None, help="where the session file goes (default: a temp dir)")
    a = ap.parse_args()
    d = a.dir or tempfile.mkdtemp(prefix="tft-live-")
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    srv = tftracer.TracingServer(port=a.port, session=os.path.join(d, "live-%p.tft"), torch_profile=False)
    if not srv.url:
        print("no server", flush=True)
        return 1
    print(srv.url, flush=True)
    t_end = time.monotonic() + a.seconds
    i = 0
    try:
        while not stop and time.monotonic() < t_end and not srv.join(0):
            with srv.step("train"):
                with tftracer.zone("forward"):
                    with tftracer.zone("matmul"):
                        busy(4)
                    busy(1)
                with tftracer.zone("backward"):
                    busy(6)
                with tftracer.zone("optimizer"):
                    busy(2)
            i += 1
            if i % 10 == 0:
                with srv.step("eval"):
                    with tftracer.zone("eval forward"):
                        busy(3)
            time.sleep(0.002)
    finally:
        srv.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
