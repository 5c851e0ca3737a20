#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# PyTorch distributed under `tftracer record` (python/tftracer/_distributed.py,
# _record.py): a real gloo DDP job of 2 and 4 ranks started by
# torch.multiprocessing.spawn from a recorded parent (2 ranks under
# `record -o run.tft`: run/rank-<N>.tft; 4 under `record -o JOB/`), and by
# torchrun (Debian's torch 1.13 on Python 3.11 needs `--redirects 2 --tee 1`)
# both above record (each worker `record -o JOB`) and below it; the four
# cases run at once. Each rank writes JOB/rank-<N>.tft with its rank and job
# (job_id the launcher's); its collectives (DDP's
# gradient bucket all_reduce, its parameter check and broadcast, the
# script's own all_reduce, broadcast, all_gather, barrier, reduce, gather,
# scatter, a subgroup's all_reduce, an async all_reduce, send/recv) are
# slices on its "torch.distributed" comm track with sizes; every rank has the
# same number of each, calls with the same (comm, coll_seq) are the same
# collective with the same size on every member, the bucket is the model's
# gradient bytes, a send pairs with its receive; and the training computes
# what it computes untraced (the parameters equal a single-process
# reference, bit for bit).
"""Usage: test_ddp.py"""
import collections
import json
import os
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
CLI = os.path.join(B, "tftracer")
PYTHON = "/usr/bin/python3"
SUITE = "ddp"
STEPS = 5
SKEW_NS = -3000000000000  # rank 1's TFT_TEST_CLOCK_SKEW_NS in record-below-torchrun (-3000 s)
# the model: Linear(32, 64), ReLU, Linear(64, 4): its gradients in one bucket
PARAM_BYTES = (32 * 64 + 64 + 64 * 4 + 4) * 4
nfail = 0

TRAIN = r'''
import json, os, sys, torch, torch.distributed as dist

STEPS = %(steps)d


def model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4))


def train(rank, n, out):
    x = torch.randn(16, 32, generator=torch.Generator().manual_seed(1))  # the same on every rank
    ddp = torch.nn.parallel.DistributedDataParallel(model())
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
    for _ in range(STEPS):
        opt.zero_grad()
        ddp(x).pow(2).sum().backward()
        opt.step()
    got = torch.cat([p.detach().flatten() for p in ddp.parameters()])
    # the same data on every rank: the average gradient is one process's gradient
    # (SGD's update by hand: another optimizer's steps would be steps of the session)
    ref = model()
    for _ in range(STEPS):
        for q in ref.parameters():
            q.grad = None
        ref(x).pow(2).sum().backward()
        with torch.no_grad():
            for q in ref.parameters():
                q.add_(q.grad, alpha=-0.1)
    want = torch.cat([p.detach().flatten() for p in ref.parameters()])
    # the script's own calls
    t = torch.ones(10) * rank
    dist.all_reduce(t)
    dist.broadcast(t, 0)
    parts = [torch.zeros(10) for _ in range(n)]
    dist.all_gather(parts, t)
    dist.reduce(t, 1 %% n)
    dist.gather(t, [torch.zeros(10) for _ in range(n)] if rank == 0 else None, 0)
    s = torch.zeros(10)
    dist.scatter(s, [torch.ones(10) * i for i in range(n)] if rank == 0 else None, 0)
    w = dist.all_reduce(torch.ones(1000), async_op=True)
    w.wait()
    sub = dist.new_group([0, 1])  # every rank makes it; its members use it
    if rank < 2:
        dist.all_reduce(torch.ones(7), group=sub)
        if rank == 0:
            dist.send(torch.arange(5.0), 1)
            dist.send(torch.arange(5.0), 1)
        else:
            for _ in range(2):
                dist.recv(torch.zeros(5), 0)
    dist.barrier()
    with open(os.path.join(out, "result-%%d.json" %% rank), "w") as f:
        json.dump({"equal": bool(torch.equal(got, want)), "sum": float(got.sum()),
                   "env": os.environ.get("TFT_RECORD")}, f)
    dist.destroy_process_group()
'''

SPAWN = TRAIN + r'''

def run(rank, n, port, out):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=n)
    train(rank, n, out)


if __name__ == "__main__":
    import torch.multiprocessing as mp
    n = int(sys.argv[1])
    mp.spawn(run, args=(n, int(sys.argv[2]), sys.argv[3]), nprocs=n)
'''

ENV = TRAIN + r'''

if __name__ == "__main__":
    dist.init_process_group("gloo")
    train(dist.get_rank(), dist.get_world_size(), sys.argv[1])
'''


def emit(kind, name, reason=None):
    global nfail
    line = "%s %s/%s" % (kind, SUITE, name)
    if reason:
        line += " (%s)" % " ".join(str(reason).split())[:900]
    if kind == "FAIL":
        nfail += 1
    print(line, flush=True)


def check(name, problems):
    emit("FAIL" if problems else "PASS", name, "; ".join(problems[:8]) if problems else None)


def meta(sess):
    db = sqlite3.connect("file:%s?mode=ro" % sess, uri=True)
    try:
        return dict(db.execute("SELECT key, value FROM meta").fetchall())
    finally:
        db.close()


def info(sess):
    r = subprocess.run([CLI, "info", "--json", sess], capture_output=True, text=True, timeout=120)
    if r.returncode:
        raise RuntimeError("info %s: %s" % (sess, r.stderr.strip()))
    return json.loads(r.stdout)


def comm_slices(sess, tmp):
    """The slices of the rank's torch.distributed comm track, in time order."""
    j = info(sess)
    tracks = [t for t in j["track_list"] if t["kind"] == "comm" and t["name"] == "torch.distributed"]
    out = os.path.join(tmp, "x.json")
    r = subprocess.run([CLI, "export", sess, "-f", "chrome", "-q", "-o", out], capture_output=True,
                       text=True, timeout=120)
    if r.returncode:
        raise RuntimeError("export: " + r.stderr.strip())
    d = json.load(open(out))
    ev = d["traceEvents"] if isinstance(d, dict) else d
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev
             if e.get("ph") == "M" and e.get("name") == "thread_name"}
    res = [dict(name=e["name"], cat=e.get("cat"), ts=e["ts"], dur=e.get("dur", 0), args=e.get("args") or {})
           for e in ev if e.get("ph") == "X" and names.get((e["pid"], e["tid"])) == "torch.distributed"]
    res.sort(key=lambda s: s["ts"])
    return j, tracks, res


def check_job(label, job, out, n, tmp, job_id_prefix=None, skew=None):
    skew = skew or {}
    p = []
    files = sorted(f for f in os.listdir(job) if f.endswith(".tft"))
    if files != ["rank-%d.tft" % r for r in range(n)]:
        return check(label, ["job directory holds %r, want one file per rank" % files])
    res = {}
    for r in range(n):
        path = os.path.join(out, "result-%d.json" % r)
        res[r] = json.load(open(path)) if os.path.exists(path) else None
    if any(v is None for v in res.values()):
        p.append("results %r" % res)
    elif not all(v["equal"] for v in res.values()) or len({v["sum"] for v in res.values()}) != 1:
        p.append("the traced training differs from the untraced reference: %r" % res)
    per = {}
    ids = set()
    for r in range(n):
        sess = os.path.join(job, "rank-%d.tft" % r)
        j, tracks, sl = comm_slices(sess, tmp)
        m = meta(sess)
        ids.add(m.get("job_id"))
        if [x.get("rank") for x in j["process_list"]] != [r] or m.get("job_rank") != str(r) or \
                m.get("job_size") != str(n):
            p.append("rank %d: process ranks %r, meta %r" % (r, [x.get("rank") for x in j["process_list"]],
                                                           (m.get("job_rank"), m.get("job_size"))))
        if len(tracks) != 1 or tracks[0]["slices"] != len(sl):
            p.append("rank %d: comm tracks %r" % (r, tracks))
        if j["steps"] != STEPS - 1:
            p.append("rank %d: %d steps, want %d" % (r, j["steps"], STEPS - 1))
        per[r] = sl
    if len(ids) != 1 or not list(ids)[0] or (job_id_prefix and not list(ids)[0].startswith(job_id_prefix)):
        p.append("job ids %r" % ids)
    # per rank the same number of each collective (the subgroup's on its members)
    counts = {r: collections.Counter(s["name"] for s in per[r] if s["args"].get("comm") == 0 and
                                     s["name"] not in ("c10d::send", "c10d::recv")) for r in range(n)}
    if len({tuple(sorted(c.items())) for c in counts.values()}) != 1:
        p.append("collectives per rank differ: %r" % counts)
    want = {"c10d::all_reduce": STEPS + 2, "c10d::broadcast": 1, "c10d::all_gather": 1, "c10d::barrier": 1,
            "c10d::reduce": 1, "c10d::gather": 1, "c10d::scatter": 1, "c10d::_broadcast_coalesced": 1,
            "c10d::_verify_params_across_processes": 1}
    if counts[0] != want:
        p.append("rank 0's collectives %r, want %r" % (dict(counts[0]), want))
    # one collective per (comm, coll_seq): the same call and size on every member
    groups = collections.defaultdict(dict)
    for r in range(n):
        for s in per[r]:
            a = s["args"]
            if s["cat"] != "collective" or "comm" not in a:
                p.append("rank %d: %s %r" % (r, s["name"], a))
                continue
            if "coll_seq" in a:
                groups[(a["comm"], a["coll_seq"])][r] = (s["name"], a.get("bytes"), a.get("group_size"))
            if a.get("group_size") != (n if a["comm"] == 0 else 2) or a.get("rank_in_group") != r:
                p.append("rank %d: %s group %r rank %r" % (r, s["name"], a.get("group_size"), a.get("rank_in_group")))
    for key, g in sorted(groups.items()):
        size = next(iter(g.values()))[2]
        if len(set(g.values())) != 1 or len(g) != size:
            p.append("collective %r: %r" % (key, g))
    # sizes: the gradient bucket, the script's tensors
    buckets = [s for s in per[0] if s["name"] == "c10d::all_reduce" and s["args"].get("async")
               and s["args"].get("bytes") == PARAM_BYTES]
    if len(buckets) != STEPS:
        p.append("DDP's bucket all_reduce: %d of %d bytes, want %d" % (len(buckets), PARAM_BYTES, STEPS))
    mine = [s["args"].get("bytes") for s in per[0] if s["name"] == "c10d::all_reduce" and not s["args"].get("async")]
    if 40 not in mine:
        p.append("the script's all_reduce of 10 floats: %r" % mine)
    sub = [s for s in per[0] if s["args"].get("comm") not in (0, None)]
    sub1 = [s for s in per[1] if s["args"].get("comm") not in (0, None)]
    if [s["name"] for s in sub if s["name"] == "c10d::all_reduce"] != ["c10d::all_reduce"] or \
            {s["args"]["comm"] for s in sub} != {s["args"]["comm"] for s in sub1}:
        p.append("the subgroup: rank 0 %r, rank 1 %r" % ([(s["name"], s["args"]) for s in sub],
                                                         [(s["name"], s["args"]) for s in sub1]))
    # the clock exchanges with rank 0 at init_process_group and destroy_process_group: each
    # rank's offset (the spec's estimate) is its test skew, within the error it states
    syncs = {}
    for r in range(n):
        try:
            syncs[r] = json.loads(meta(os.path.join(job, "rank-%d.tft" % r)).get("clock_sync") or "null")
        except ValueError as e:
            p.append("rank %d: clock_sync %s" % (r, e))
    if all(syncs.get(r) for r in range(n)):
        for k in range(1, n):
            for at in ("init", "finalize"):
                rows = [q for q in syncs[0]["points"] if q.get("peer") == k and q["at"] == at]
                mine = [q for q in syncs[k]["points"] if q["at"] == at]
                if len(rows) != 10 or [dict(q, peer=k) for q in mine] != rows:
                    p.append("rank %d at %s: rows %d on rank 0, %d of its own, alike %s" %
                             (k, at, len(rows), len(mine), [dict(q, peer=k) for q in mine] == rows))
                    continue
                best = min(rows, key=lambda q: q["ref_t1"] - q["ref_t0"])
                off = best["local"] - (best["ref_t0"] + best["ref_t1"]) / 2.0
                err = (best["ref_t1"] - best["ref_t0"]) / 2.0
                want = skew.get(k, 0)
                if abs(off - want) > err or err > 50e6:
                    p.append("rank %d at %s: offset %.0f ns, skew %d, error %.0f" % (k, at, off, want, err))
    else:
        p.append("clock_sync: %r" % {r: bool(syncs.get(r)) for r in range(n)})
    sends = [(s["args"].get("peer"), s["args"].get("seq")) for s in per[0] if s["name"] == "c10d::send"]
    recvs = [(s["args"].get("peer"), s["args"].get("seq")) for s in per[1] if s["name"] == "c10d::recv"]
    if sends != [(1, 0), (1, 1)] or recvs != [(0, 0), (0, 1)]:
        p.append("send/recv: %r %r" % (sends, recvs))
    check(label, p)


def start_case(label, cmd, tmp, n, job, out, prefix, skew=None):
    """Start a case (the cases run at once: most of their time is torch's import and
    the launchers' waits); finish_case checks it."""
    log = open(os.path.join(tmp, label + ".log"), "w+")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, text=True, cwd=tmp)
    return dict(label=label, proc=proc, log=log, n=n, job=job, out=out, prefix=prefix, skew=skew,
                t0=time.monotonic())


def finish_case(c, tmp, deadline):
    label = c["label"]
    try:
        rc = c["proc"].wait(timeout=max(1, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        c["proc"].kill()
        c["proc"].wait()
        return check(label, ["timed out"])
    sys.stderr.write("ddp: %s: %.1f s\n" % (label, time.monotonic() - c["t0"]))
    c["log"].seek(0)
    text = c["log"].read()
    c["log"].close()
    if rc:
        return check(label, ["exit %d: %s" % (rc, text[-700:])])
    check_job(label, c["job"], c["out"], c["n"], tmp, c["prefix"], c.get("skew"))


def main():
    tmp = tempfile.mkdtemp(prefix="tft-ddp-")
    cases = []
    try:
        for name, text in (("spawn.py", SPAWN), ("env.py", ENV)):
            with open(os.path.join(tmp, name), "w") as f:
                f.write(text % {"steps": STEPS})
        port = 29400 + os.getpid() % 500 * 8
        # 2 ranks spawned by a process recorded into run.tft: they write run/rank-N.tft
        job, out = os.path.join(tmp, "run"), os.path.join(tmp, "out-spawn2")
        os.makedirs(out)
        port += 1
        cases.append(start_case("spawn-2-ranks", [CLI, "record", "-q", "--port", "0", "-o", job + ".tft", "--",
                                                  PYTHON, os.path.join(tmp, "spawn.py"), "2", str(port), out],
                                tmp, 2, job, out, "127.0.0.1:%d" % port))
        # 4 ranks spawned below `record -o JOB/`
        job, out = os.path.join(tmp, "spawn4"), os.path.join(tmp, "out-spawn4")
        os.makedirs(out)
        port += 1
        cases.append(start_case("spawn-4-ranks", [CLI, "record", "-q", "--port", "0", "-o", job + "/", "--",
                                                  PYTHON, os.path.join(tmp, "spawn.py"), "4", str(port), out],
                                tmp, 4, job, out, "record:"))
        torchrun = [PYTHON, "-m", "torch.distributed.run", "--redirects", "2", "--tee", "1", "--nproc_per_node", "2",
                    "--monitor_interval", "0.2"]
        job, out = os.path.join(tmp, "trabove"), os.path.join(tmp, "out-trabove")
        os.makedirs(out)
        port += 1
        cases.append(start_case("torchrun-below-record", [CLI, "record", "-q", "--port", "0", "-o", job + "/", "--"] +
                                torchrun + ["--master_port", str(port), os.path.join(tmp, "env.py"), out],
                                tmp, 2, job, out, "record:"))
        job, out = os.path.join(tmp, "trbelow"), os.path.join(tmp, "out-trbelow")
        os.makedirs(out)
        port += 1
        # (rank 1's clock moved by SKEW_NS, test only: its offset must come out of the exchange)
        cases.append(start_case("record-below-torchrun",
                                torchrun + ["--master_port", str(port), "--no_python", "/bin/sh", "-c",
                                            '[ "$RANK" = 1 ] && export TFT_TEST_CLOCK_SKEW_NS=%d; exec "$@"' % SKEW_NS,
                                            "sh", CLI, "record", "-q", "--port", "0", "-o", job, "--", PYTHON,
                                            os.path.join(tmp, "env.py"), out],
                                tmp, 2, job, out, "127.0.0.1:%d" % port, {1: SKEW_NS}))
        deadline = time.monotonic() + 600
        for c in cases:
            finish_case(c, tmp, deadline)
    finally:
        for c in cases:
            if c["proc"].poll() is None:
                c["proc"].kill()
                c["proc"].wait()
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
