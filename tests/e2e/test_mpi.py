#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# MPI from above its profiling interface (src/intercept/mpi*.c) with Debian's
# Open MPI: tests/e2e/progs/mpi_cases.c (a ring, collectives, a deliberate
# straggler, a deadlock-free Irecv/Isend exchange with persistent requests,
# MPI_ANY_SOURCE and MPI_ANY_TAG receives, one-sided, communicators) run
# under `mpirun -np 4 tftracer record -o JOBDIR` and under
# `tftracer record -o JOBDIR/ -- mpirun ...`. Each rank's program writes a log
# of the MPI calls it made and of the messages it got (every message carries
# the sender's own count k of its messages to that peer with that tag): the
# trace must have every call once per rank, in order, with the spec's args
# (docs/intercept.md, "MPI"), every receive's envelope number equal to the k
# of the message it got, every send paired with exactly one receive on its
# peer, collectives numbered alike on every member, communicator ids agreed
# by their members; the rank and job in each session; the clock exchange's
# rows, and with TFT_TEST_CLOCK_SKEW_NS on two ranks the spec's offset
# formula recovers each skew within its stated error; the straggler waits
# least. The library loads in programs without MPI, and MPI runs untraced
# when not intercepted.
"""Usage: test_mpi.py"""
import collections
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
BUILD = os.environ.get("TFT_BUILD_DIR", "build")
B = BUILD if os.path.isabs(BUILD) else os.path.join(ROOT, BUILD)
CLI = os.path.join(B, "tftracer")
PRELOAD = os.path.join(B, "libtftracer-preload.so")
SUITE = "mpi"
NP = 4
MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", str(NP)]
nfail = 0


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


def slices(sess, tmp):
    """The rank's slices on its main thread, in time order (Chrome export)."""
    pid = info(sess)["process_list"][0]["pid"]
    out = os.path.join(tmp, os.path.basename(sess) + ".json")
    r = subprocess.run([CLI, "export", sess, "-f", "chrome", "-q", "-o", out],
                       capture_output=True, text=True, timeout=120)
    if r.returncode:
        raise RuntimeError("export: " + r.stderr.strip())
    d = json.load(open(out))
    ev = d["traceEvents"] if isinstance(d, dict) else d
    res = [dict(name=e["name"], cat=e.get("cat"), ts=round(e["ts"] * 1000), dur=round(e.get("dur", 0) * 1000),
                args=e.get("args") or {}, tid=e.get("tid"))
           for e in ev if e.get("ph") == "X"]
    res = [s for s in res if s["tid"] == pid]
    res.sort(key=lambda s: (s["ts"], -s["dur"]))
    return res


def parse_log(path):
    """[(function, {key: value})] of a rank's log; 'recv' values as [(src, tag, k)]."""
    out = []
    for line in open(path):
        parts = line.split()
        if not parts:
            continue
        kv = {}
        for p in parts[1:] if parts[0] != "members" else []:
            k, _, v = p.partition("=")
            if k == "recv":
                kv[k] = [tuple(int(x) for x in item.split("/")) for item in v.split(",") if item]
            else:
                kv[k] = int(v) if re.fullmatch(r"-?\d+", v) else v
        if parts[0] == "members":
            kv = {"name": parts[1], "members": [int(x) for x in parts[2].split(",")]}
        out.append((parts[0], kv))
    return out


def build(tmp):
    exe = os.path.join(tmp, "mpi_cases")
    r = subprocess.run(["mpicc", "-O1", "-o", exe, os.path.join(HERE, "progs", "mpi_cases.c")],
                       capture_output=True, text=True, timeout=300)
    if r.returncode:
        raise RuntimeError("mpicc: " + r.stderr[-500:])
    return exe


def run(cmd, tmp, env=None, timeout=300):
    return subprocess.run(cmd, capture_output=True, text=True, cwd=tmp, env=env, timeout=timeout)


# ---- the checks of one job ---------------------------------------------------------------------

class Job:
    """The sessions and logs of one run: per rank its MPI slices and its log."""

    def __init__(self, jobdir, logdir, tmp):
        self.jobdir = jobdir
        self.sess = {r: os.path.join(jobdir, "rank-%d.tft" % r) for r in range(NP)}
        self.meta = {r: meta(self.sess[r]) for r in range(NP)}
        self.info = {r: info(self.sess[r]) for r in range(NP)}
        self.all = {r: slices(self.sess[r], tmp) for r in range(NP)}
        self.mpi = {r: [s for s in self.all[r] if s["cat"] == "mpi" and s["name"] not in
                        ("MPI_Init", "MPI_Init_thread", "MPI_Finalize")] for r in range(NP)}
        self.log = {r: parse_log(os.path.join(logdir, "log-%d.txt" % r)) for r in range(NP)}


def check_identity(job, p):
    ids = set()
    for r in range(NP):
        procs = job.info[r]["process_list"]
        if len(procs) != 1 or procs[0].get("rank") != r:
            p.append("rank %d: process_list %r, want one process with rank %d" % (r, procs, r))
        m = job.meta[r]
        if m.get("job_rank") != str(r) or m.get("job_size") != str(NP) or not m.get("job_id"):
            p.append("rank %d: job meta %r" % (r, {k: m.get(k) for k in ("job_rank", "job_size", "job_id")}))
        ids.add(m.get("job_id"))
        if "Open MPI" not in m.get("mpi_library", ""):
            p.append("rank %d: mpi_library %r" % (r, m.get("mpi_library")))
        names = [s["name"] for s in job.all[r] if s["cat"] == "mpi"]
        if names[:1] not in (["MPI_Init"], ["MPI_Init_thread"]) or names[-1:] != ["MPI_Finalize"]:
            p.append("rank %d: MPI calls from %r to %r" % (r, names[:1], names[-1:]))
        syncs = [s["args"].get("at") for s in job.all[r] if s["name"] == "tftracer clock sync"]
        if syncs != ["init", "finalize"]:
            p.append("rank %d: clock sync zones %r" % (r, syncs))
    if len(ids) != 1:
        p.append("job ids differ: %r" % ids)


def check_clock_rows(job, p, rounds=10):
    """Rank 0 holds every k's rows, k its own: the same rows."""
    sync = {r: json.loads(job.meta[r].get("clock_sync", "null") or "null") for r in range(NP)}
    for r in range(NP):
        if not sync[r] or sync[r].get("reference_rank") != 0:
            p.append("rank %d: clock_sync %r" % (r, (job.meta[r].get("clock_sync") or "")[:200]))
            return None
    pts0 = sync[0]["points"]
    for k in range(1, NP):
        mine = [(q["at"], q["ref_t0"], q["ref_t1"], q["local"]) for q in sync[k]["points"]]
        theirs = [(q["at"], q["ref_t0"], q["ref_t1"], q["local"]) for q in pts0 if q.get("peer") == k]
        if len(mine) != 2 * rounds or mine != theirs:
            p.append("rank %d: %d clock rows, rank 0 has %d for it (equal: %s)"
                     % (k, len(mine), len(theirs), mine == theirs))
        for at, t0, t1, loc in mine:
            if not t0 < t1:
                p.append("rank %d: a round with ref_t1 %d <= ref_t0 %d" % (k, t1, t0))
                break
    return sync


def offset(sync, k, at):
    """The spec's estimate of rank k's offset from rank 0 at `at`: (offset, error)."""
    rows = [q for q in sync[0]["points"] if q.get("peer") == k and q["at"] == at]
    best = min(rows, key=lambda q: q["ref_t1"] - q["ref_t0"])
    return (best["local"] - (best["ref_t0"] + best["ref_t1"]) / 2.0,
            (best["ref_t1"] - best["ref_t0"]) / 2.0)


def check_calls(job, p):
    """Every call of the log once, in order, with its args; returns the comm ids by name."""
    comm_ids = collections.defaultdict(dict)  # name -> rank -> id
    members = {}
    for r in range(NP):
        comm_ids["world"][r] = 0
        calls = [(f, kv) for f, kv in job.log[r] if f != "members"]
        for f, kv in job.log[r]:
            if f == "members":
                members[(kv["name"], r)] = kv["members"]
        got = job.mpi[r]
        names_log = [f for f, _ in calls]
        names_tr = [s["name"] for s in got]
        if names_log != names_tr:
            i = next((i for i, (a, b) in enumerate(zip(names_log, names_tr)) if a != b),
                     min(len(names_log), len(names_tr)))
            p.append("rank %d: calls differ at %d: log %r, trace %r (%d vs %d calls)"
                     % (r, i, names_log[i:i + 3], names_tr[i:i + 3], len(names_log), len(names_tr)))
            continue
        for (f, kv), s in zip(calls, got):
            a = s["args"]
            bad = []
            if "new" in kv:
                comm_ids[kv["new"]][r] = a.get("new_comm")
            if f in ("MPI_Send", "MPI_Isend", "MPI_Sendrecv"):
                if (a.get("peer"), a.get("tag"), a.get("seq")) != (kv["peer"], kv["tag"], kv["k"]):
                    bad.append("send peer/tag/seq %r, log %r" % ((a.get("peer"), a.get("tag"), a.get("seq")), kv))
                if a.get("bytes") != 16 or a.get("datatype") != "MPI_INT" or a.get("count") != 4:
                    bad.append("bytes/datatype/count %r" % ((a.get("bytes"), a.get("datatype"), a.get("count")),))
                if f == "MPI_Isend" and not isinstance(a.get("request"), int):
                    bad.append("no request id")
            if f == "MPI_Recv" and (a.get("peer"), a.get("tag"), a.get("seq"), a.get("bytes")) != \
                    (kv["peer"], kv["tag"], kv["k"], 16):
                bad.append("recv %r, log %r" % ((a.get("peer"), a.get("tag"), a.get("seq"), a.get("bytes")), kv))
            if f == "MPI_Sendrecv":
                want = kv["recv"][0]
                if (a.get("recv_peer"), a.get("recv_tag"), a.get("recv_seq")) != want:
                    bad.append("recv half %r, log %r" % ((a.get("recv_peer"), a.get("recv_tag"), a.get("recv_seq")), want))
            if f in ("MPI_Irecv", "MPI_Recv_init", "MPI_Send_init"):
                if (a.get("peer"), a.get("tag")) != (kv["peer"], kv["tag"]) or not isinstance(a.get("request"), int):
                    bad.append("posted %r, log %r" % (a, kv))
            if f in ("MPI_Waitall", "MPI_Waitsome"):
                got_r = [(x["peer"], x["tag"], x["seq"]) for x in json.loads(json.dumps(a.get("recv", [])))]
                if got_r != kv.get("recv", []):
                    bad.append("completed receives %r, log %r" % (got_r, kv.get("recv")))
                if f == "MPI_Waitall" and not a.get("completes"):
                    bad.append("no completes")
            if f in ("MPI_Waitany", "MPI_Wait", "MPI_Test") and kv.get("recv"):
                if (a.get("peer"), a.get("tag"), a.get("seq")) != kv["recv"][0] or len(a.get("completes", [])) != 1:
                    bad.append("completion %r, log %r" % (a, kv))
            if f == "MPI_Test" and a.get("flag") != bool(kv.get("recv")):
                bad.append("flag %r, log %r" % (a.get("flag"), kv))
            if f == "MPI_Startall":
                sends = [x for x in a.get("started", []) if x["kind"] == "send"]
                if [x["seq"] for x in sends] != [kv["send_k"]]:
                    bad.append("started %r, send k %d" % (a.get("started"), kv["send_k"]))
            if "comm" in kv and f.startswith("MPI_") and "new" not in kv:
                if a.get("comm") is None or "coll_seq" not in a and f not in ("MPI_Win_create",):
                    if f != "MPI_Win_create":
                        bad.append("collective without comm/coll_seq: %r" % a)
            if "root" in kv and a.get("root") != kv["root"]:
                bad.append("root %r, log %d" % (a.get("root"), kv["root"]))
            if f in ("MPI_Put", "MPI_Get") and (a.get("peer") != kv["peer"] or a.get("win") is None):
                bad.append("rma %r, log %r" % (a, kv))
            if bad:
                p.append("rank %d %s: %s" % (r, f, "; ".join(bad)))
    # communicators: members agree on the id, different communicators differ
    for name, per in comm_ids.items():
        groups = collections.defaultdict(set)
        for r, cid in per.items():
            groups[tuple(members.get((name, r), range(NP)))].add(cid)
        for mem, ids in groups.items():
            if len(ids) != 1 or None in ids:
                p.append("communicator %s %r: ids %r" % (name, mem, ids))
    every = [cid for per in comm_ids.values() for cid in per.values()]
    distinct = {(name, tuple(members.get((name, r), range(NP)))): cid
                for name, per in comm_ids.items() for r, cid in per.items()}
    if len(set(distinct.values())) != len(distinct):
        p.append("different communicators share an id: %r" % distinct)
    return {name: per for name, per in comm_ids.items()}, every


def check_collectives(job, comm_ids, p):
    """Calls with the same (comm, coll_seq) on every member are one collective: same name."""
    groups = collections.defaultdict(dict)
    for r in range(NP):
        for s in job.mpi[r]:
            a = s["args"]
            if "coll_seq" in a:
                key = (a["comm"], a["coll_seq"])
                if r in groups[key]:
                    p.append("rank %d: two calls with comm %s coll_seq %s" % (r, a["comm"], a["coll_seq"]))
                groups[key][r] = (s["name"], a.get("comm_size"))
    for (comm, seq), per in sorted(groups.items()):
        names = {v[0] for v in per.values()}
        sizes = {v[1] for v in per.values()}
        if len(names) != 1 or len(sizes) != 1 or len(per) != list(sizes)[0]:
            p.append("collective comm %s seq %s: %r" % (comm, seq, per))
    # numbered 0, 1, 2 ... per communicator on each rank
    for r in range(NP):
        seqs = collections.defaultdict(list)
        for s in job.mpi[r]:
            if "coll_seq" in s["args"]:
                seqs[s["args"]["comm"]].append(s["args"]["coll_seq"])
        for comm, v in seqs.items():
            if v != list(range(len(v))):
                p.append("rank %d comm %s: coll_seq %r" % (r, comm, v[:10]))
    return len(groups)


def check_pairing(job, p):
    """Every send has exactly one receive on its peer: (comm, src, dst, tag, seq) both sides."""
    sends, recvs = collections.Counter(), collections.Counter()
    by_request = {}
    for r in range(NP):
        for s in job.mpi[r]:
            a, f = s["args"], s["name"]
            if f in ("MPI_Send", "MPI_Isend", "MPI_Ssend", "MPI_Bsend", "MPI_Rsend", "MPI_Sendrecv"):
                sends[(a["comm"], r, a["peer"], a["tag"], a.get("seq"))] += 1
            if f == "MPI_Startall":
                for x in a.get("started", []):
                    if x["kind"] == "send":
                        sends[(x["comm"], r, x["peer"], x["tag"], x["seq"])] += 1
            if f in ("MPI_Recv",):
                recvs[(a["comm"], a["peer"], r, a["tag"], a.get("seq"))] += 1
            if f == "MPI_Sendrecv":
                recvs[(a["comm"], a["recv_peer"], r, a["recv_tag"], a.get("recv_seq"))] += 1
            if f == "MPI_Irecv":
                by_request[(r, a["request"])] = a["comm"]
            if f == "MPI_Startall":
                for x in a.get("started", []):
                    by_request[(r, x["request"])] = x["comm"]
        for s in job.mpi[r]:
            for x in s["args"].get("recv", []) if isinstance(s["args"].get("recv"), list) else []:
                comm = by_request.get((r, x["request"]))
                recvs[(comm, x["peer"], r, x["tag"], x["seq"])] += 1
    if not sends:
        p.append("no sends")
    unmatched = [k for k in sends if sends[k] != recvs.get(k, 0)] + [k for k in recvs if k not in sends]
    dup = [k for k, v in list(sends.items()) + list(recvs.items()) if v != 1]
    if unmatched or dup or any(k[4] is None or k[4] < 0 for k in sends):
        p.append("%d sends, %d receives; unmatched %r; duplicates %r" % (sum(sends.values()), sum(recvs.values()),
                                                                     unmatched[:6], dup[:6]))
    return sum(sends.values())


# ---- cases ----------------------------------------------------------------------------------------

def case_patterns(tmp, exe):
    """mpirun -np 4 tftracer record -o JOB -- mpi_cases ...: every pattern."""
    job, logs = os.path.join(tmp, "job"), os.path.join(tmp, "logs")
    os.makedirs(logs)
    r = run(MPIRUN + [CLI, "record", "-q", "--port", "0", "-o", job, "--", exe, logs,
                      "p2p,coll,irecv,anysource,rma,comms"], tmp)
    p = []
    if r.returncode:
        return check("patterns", ["mpirun: exit %d: %s" % (r.returncode, r.stderr[-600:])])
    files = sorted(os.listdir(job))
    if files != ["rank-%d.tft" % i for i in range(NP)]:
        return check("patterns", ["job directory holds %r" % files])
    j = Job(job, logs, tmp)
    check_identity(j, p)
    check("identity", p)
    p = []
    check_clock_rows(j, p)
    check("clock-rows", p)
    p = []
    comm_ids, _ = check_calls(j, p)
    ncoll = check_collectives(j, comm_ids, p)
    nsend = check_pairing(j, p)
    if ncoll < 30 or nsend < 80:
        p.append("only %d collectives, %d messages" % (ncoll, nsend))
    check("calls", p)


def case_skew(tmp, exe):
    """tftracer record -o JOB/ -- mpirun ...: a launcher below record, two ranks' clocks
    skewed on purpose (TFT_TEST_CLOCK_SKEW_NS), a straggler."""
    skew = {0: 0, 1: -2500000000, 2: 7000000000, 3: 0}
    job, logs = os.path.join(tmp, "job2"), os.path.join(tmp, "logs2")
    os.makedirs(logs)
    script = ("case $OMPI_COMM_WORLD_RANK in 1) export TFT_TEST_CLOCK_SKEW_NS=%d;; "
              "2) export TFT_TEST_CLOCK_SKEW_NS=%d;; esac; exec \"$0\" \"$@\"" % (skew[1], skew[2]))
    r = run([CLI, "record", "-q", "--port", "0", "-o", job + "/", "--"] + MPIRUN +
            ["sh", "-c", script, exe, logs, "straggler,p2p"], tmp)
    if r.returncode:
        return check("skew", ["record -- mpirun: exit %d: %s" % (r.returncode, r.stderr[-600:])])
    p = []
    ranks = sorted(f for f in os.listdir(job) if f.startswith("rank-"))
    if ranks != ["rank-%d.tft" % i for i in range(NP)]:
        return check("skew", ["job directory holds %r" % sorted(os.listdir(job))])
    j = Job(job, logs, tmp)
    check_identity(j, p)
    if not j.meta[0].get("job_id", "").startswith("record:"):
        p.append("job id %r: want the one record gave its launcher's ranks" % j.meta[0].get("job_id"))
    sync = check_clock_rows(j, p)
    check_calls(j, p)
    check_pairing(j, p)
    check("launcher-below-record", p)
    p = []
    if sync:
        for k in range(1, NP):
            for at in ("init", "finalize"):
                off, err = offset(sync, k, at)
                if abs(off - skew[k]) > err:
                    p.append("rank %d at %s: offset %.0f ns, skew %d, error %.0f" % (k, at, off, skew[k], err))
                elif err > 50e6:
                    p.append("rank %d at %s: error bound %.0f ns (a round trip of %.0f ms)" % (k, at, err, 2 * err / 1e6))
        # the events moved with the clock: each rank's first allreduce ends together (within a round trip)
        ends = {r: next(s["ts"] + s["dur"] for s in j.mpi[r] if s["name"] == "MPI_Allreduce") for r in range(NP)}
        for k in range(1, NP):
            d = ends[k] - ends[0] - skew[k]
            if abs(d) > 20e6:
                p.append("rank %d: first allreduce ends %.3f ms from rank 0's once the skew is removed" % (k, d / 1e6))
    check("clock-skew-recovered", p)
    # the straggler (rank 2 computes 60 ms before each allreduce, the others 5 ms) waits least
    p = []
    waits = {r: sorted(s["dur"] for s in j.mpi[r] if s["name"] == "MPI_Allreduce")[1:] for r in range(NP)}
    med = {r: v[len(v) // 2] for r, v in waits.items()}
    for r in (0, 1, 3):
        if med[r] < 25e6 or med[2] * 2 > med[r]:
            p.append("median allreduce: rank %d %.1f ms, straggler %.1f ms" % (r, med[r] / 1e6, med[2] / 1e6))
    check("straggler", p)


def case_untraced(tmp, exe):
    """The library loads where there is no MPI; MPI runs untraced when not intercepted; the
    clock exchange can be turned off."""
    p = []
    r = run(["nm", "-D", "--undefined-only", PRELOAD], tmp)
    und = [l.split()[-1] for l in r.stdout.splitlines() if re.search(r"\b(P?MPI_|ompi_)", l)]
    if r.returncode or und:
        p.append("the preload library needs MPI symbols: %r" % und[:5])
    env = dict(os.environ, LD_PRELOAD=PRELOAD, LD_BIND_NOW="1")
    r = run(["/bin/sh", "-c", "echo loaded"], tmp, env=env)
    if r.returncode or r.stdout.strip() != "loaded" or r.stderr.strip():
        p.append("a program without MPI: exit %d %r %r" % (r.returncode, r.stdout, r.stderr[-200:]))
    # --intercept without mpi: MPI untouched (no MPI slices, no exchange)
    job, logs = os.path.join(tmp, "job3"), os.path.join(tmp, "logs3")
    os.makedirs(logs)
    r = run(MPIRUN + [CLI, "record", "-q", "--port", "0", "--intercept=opencl", "-o", job, "--", exe, logs, "p2p"], tmp)
    if r.returncode:
        p.append("--intercept=opencl: exit %d: %s" % (r.returncode, r.stderr[-300:]))
    else:
        for k in range(NP):
            sess = os.path.join(job, "rank-%d.tft" % k)
            m = meta(sess)
            if m.get("format") != "tftracer-record" or "clock_sync" in m or info(sess)["process_list"][0]["rank"] != k:
                p.append("rank %d without MPI interception: %r" % (k, {x: m.get(x) for x in ("format", "clock_sync", "job_rank")}))
    # the exchange off: calls recorded, no clock_sync
    job, logs = os.path.join(tmp, "job4"), os.path.join(tmp, "logs4")
    os.makedirs(logs)
    env = dict(os.environ, TFT_MPI_CLOCK_SYNC="0")
    r = run(MPIRUN + ["-x", "TFT_MPI_CLOCK_SYNC", CLI, "record", "-q", "--port", "0", "-o", job, "--", exe, logs, "p2p"],
            tmp, env=env)
    if r.returncode:
        p.append("TFT_MPI_CLOCK_SYNC=0: exit %d: %s" % (r.returncode, r.stderr[-300:]))
    else:
        m = meta(os.path.join(job, "rank-1.tft"))
        names = [s["name"] for s in slices(os.path.join(job, "rank-1.tft"), tmp)]
        if "clock_sync" in m or "tftracer clock sync" in names or names.count("MPI_Sendrecv") != 5:
            p.append("TFT_MPI_CLOCK_SYNC=0: %r %r" % ("clock_sync" in m, collections.Counter(names)))
    # a rank file that exists already is refused before anything runs
    r = run(MPIRUN + [CLI, "record", "-q", "-o", os.path.join(tmp, "job"), "--", exe, logs, "p2p"], tmp)
    if r.returncode != 2 or "exists" not in r.stderr:
        p.append("an existing rank file: exit %d %r" % (r.returncode, r.stderr[-300:]))
    check("untraced", p)


def main():
    if not shutil.which("mpirun") or not shutil.which("mpicc"):
        emit("FAIL", "setup", "mpirun/mpicc not found: scripts/install-deps.sh installs openmpi-bin, libopenmpi-dev")
        return 1
    tmp = tempfile.mkdtemp(prefix="tft-mpi-")
    try:
        exe = build(tmp)
        for case in (case_patterns, case_skew, case_untraced):
            try:
                case(tmp, exe)
            except subprocess.TimeoutExpired as e:
                emit("FAIL", case.__name__[5:], "timed out: %s" % (e.cmd,))
            except Exception as e:  # a broken case is a failure, never a crash of the suite
                emit("FAIL", case.__name__[5:], "%s: %s" % (type(e).__name__, e))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
