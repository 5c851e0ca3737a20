#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# Distributed jobs end to end (issue #24), through the CLI and the HTTP API:
#   - a generated MPI job (tests/e2e/progs/gen_job.c: rank files as the capture spec
#     says, a simulated run whose truth is known, ranks' clocks skewed on purpose as the
#     capture's TEST-ONLY TFT_TEST_CLOCK_SKEW_NS does): `info JOBDIR` (every message
#     matched, every collective complete, each skew recovered within the error the
#     alignment reports), `stats --by rank` (the deliberate straggler and its op),
#     `export`, `merge` (one file: events, flows, meta; aligned within the reported
#     error, and --raw), the merged file analysed again as one session, `serve JOBDIR`
#     (/api/session's job, /api/ranks, /api/slice's flows across ranks, POST /api/clock,
#     /api/advise), `advise JOBDIR` (the straggler finding names the rank and the op that
#     made it late, from the matched communication; a job without one has no such finding);
#   - a job without the ping-pong (clocks from collectives and messages);
#   - real Kineto ranks (hta/trace_filter/sampled_rank-0/1: ranks of a 128-rank job):
#     as a job directory and imported together, the same ranks and collectives;
#   - bad job directories: one line naming the file, exit 2.
"""Usage: test_job.py"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "corpus"))
sys.path.insert(0, HERE)
import tft_harness as H  # noqa: E402
from test_http_api import Server, get_json, req  # noqa: E402

SKEW = {1: 2500000, 3: -4000000, 6: 900000}  # ns added to every timestamp of these ranks
STRAGGLER = 5


def build_gen(tmp):
    """tests/e2e/progs/gen_job.c against the normal build's library."""
    lib = os.path.join(os.path.dirname(H.tft_bin_big()), "libtftracer.a")
    exe = os.path.join(tmp, "gen_job")
    r = H.run(["cc", "-O2", "-std=c11", "-D_GNU_SOURCE", "-I" + os.path.join(H.REPO, "src"),
               "-I" + os.path.join(H.REPO, "include"), "-I" + os.path.join(H.REPO, "tests", "lib"),
               "-o", exe, os.path.join(HERE, "progs", "gen_job.c"), lib,
               "-lsqlite3", "-lzstd", "-lz", "-lpthread", "-lm"])
    if r.rc:
        raise H.CliError("building gen_job: %s" % r.err[-300:])
    return exe


def gen(exe, out, *args):
    r = H.run([exe, out] + list(args))
    if r.rc:
        raise H.CliError("gen_job %s: %s" % (" ".join(args), r.err[-300:]))
    return json.loads(r.out)


def clock_probs(clock, skew, limit):
    """Each rank's offset within its error of the true skew (rank 0's subtracted)."""
    probs = []
    for r in clock["ranks"]:
        want = skew.get(r["rank"], 0) - skew.get(0, 0)
        err = r["error_ns"]
        if r["rank"] == clock["reference_rank"]:
            continue
        if err < 0 or abs(r["offset_ns"] - want) > err:
            probs.append("rank %d: offset %d, truth %d, error %d" % (r["rank"], r["offset_ns"], want, err))
        if err > limit:
            probs.append("rank %d: error %d above %d" % (r["rank"], err, limit))
    return probs


def first_ends(chrome_path, name):
    """Per process (pid): the end (us) of its first slice called name."""
    doc = json.load(open(chrome_path))
    first = {}
    for e in doc["traceEvents"] if isinstance(doc, dict) else doc:
        if e.get("ph") == "X" and e.get("name") == name:
            ts = float(e["ts"])
            if e["pid"] not in first or ts < first[e["pid"]][0]:
                first[e["pid"]] = (ts, ts + float(e.get("dur", 0)))
    return {k: v[1] for k, v in first.items()}


def check_job(b, exe, tmp):
    job = os.path.join(tmp, "job")
    skews = []
    for r, ns in SKEW.items():
        skews += ["--skew", "%d:%d" % (r, ns)]
    truth = gen(exe, job, "--ranks", "8", "--steps", "8", "--fillers", "20", "--straggler", str(STRAGGLER), *skews)
    probs = []
    info = H.cli_json(b, ["info", job, "--json"])
    j = info.get("job") or {}
    if j.get("ranks") != 8 or [p["rank"] for p in info["process_list"]] != list(range(8)):
        probs.append("info: job ranks %r, process ranks %r" % (j.get("ranks"), [p["rank"] for p in info["process_list"]]))
    comm = j.get("comm") or {}
    if comm.get("messages") != truth["messages"] or comm.get("unmatched_sends") or comm.get("unmatched_receives"):
        probs.append("info: messages %r (want %d), unmatched %r/%r" % (comm.get("messages"), truth["messages"],
                     comm.get("unmatched_sends"), comm.get("unmatched_receives")))
    if comm.get("collectives") != truth["collectives"] or comm.get("incomplete_collectives"):
        probs.append("info: collectives %r (want %d), incomplete %r" % (comm.get("collectives"), truth["collectives"],
                     comm.get("incomplete_collectives")))
    probs += ["info clock: " + p for p in clock_probs(j.get("clock") or {"ranks": []}, SKEW, 3000)]
    txt = H.run([b, "info", job])
    if txt.rc or "clocks:     aligned to rank 0" not in txt.out or "%d messages matched" % truth["messages"] not in txt.out:
        probs.append("info text: %r" % txt.out[-600:])

    # stats --by rank: the straggler and the op that made it late
    st = H.cli_json(b, ["stats", job, "--by", "rank", "--json"])
    s = st.get("straggler") or {}
    if s.get("rank") != STRAGGLER or not s.get("ops") or s["ops"][0]["name"] != "slow_op":
        probs.append("stats --by rank: straggler %r" % s)
    for k, step in enumerate(st["steps"]):
        for i, c in enumerate(step["cells"]):
            if c["compute_ns"] + c["comm_ns"] + c["wait_ns"] + c["idle_ns"] != c["end_ns"] - c["start_ns"]:
                probs.append("stats --by rank: step %d rank %d does not sum to its length" % (k, i))
    if sum(p["messages"] for p in st["matrix"]) != truth["messages"]:
        probs.append("stats --by rank: the matrix holds %d messages" % sum(p["messages"] for p in st["matrix"]))
    txt = H.run([b, "stats", job, "--by", "rank"])
    if txt.rc or "straggler: rank %d" % STRAGGLER not in txt.out or "slow_op" not in txt.out:
        probs.append("stats --by rank text: %r" % txt.out[-500:])
    csv = H.run([b, "stats", job, "--by", "rank", "--csv"])
    if csv.rc or len(csv.out.splitlines()) != 9 or not csv.out.startswith("rank,compute_ns,"):
        probs.append("stats --by rank --csv: %r" % csv.out[:200])

    # advise JOBDIR: the straggler finding names the rank, and the op that made it late
    probs += check_advise(b, job, STRAGGLER)

    # export of the job: every rank's slices
    ex = os.path.join(tmp, "job.json")
    H.cli_export(b, job, ex)
    doc = json.load(open(ex))
    n = sum(1 for e in doc["traceEvents"] if e.get("ph") == "X" and e.get("cat") != "tftracer.step")
    if n != info["slices"]:
        probs.append("export: %d slices, info says %d" % (n, info["slices"]))

    # merge: one file, aligned
    m = os.path.join(tmp, "merged.tft")
    r = H.run([b, "merge", job, "-o", m])
    if r.rc or "merged 8 ranks" not in r.out:
        probs.append("merge: rc %d %r %r" % (r.rc, r.out, r.err))
        return probs
    mi = H.cli_json(b, ["info", m, "--json"])
    for k in ("slices", "steps", "flows", "processes", "tracks"):
        if mi[k] != info[k] and not (k == "flows" and mi[k] >= info[k]):
            probs.append("merged %s: %r, the job %r" % (k, mi[k], info[k]))
    if not (mi.get("job") or {}).get("clock") or not mi["job"]["clock"].get("applied"):
        probs.append("merged: no applied job_clock: %r" % mi.get("job"))
    probs += ["merged clock: " + p for p in clock_probs(mi["job"]["clock"], SKEW, 3000)]
    probs += ["merged: " + p for p in check_advise(b, m, STRAGGLER)]
    # prof JOBDIR: the op view of the job read in place is the merged file's
    def ops(path):
        d = H.cli_json(b, ["prof", path, "op", "--json", "-select", "micros,occurrence"])
        return {c["name"]: (c["total"].get("occurrence"), round(c["total"].get("micros", 0), 3))
                for c in d["root"]["children"]}
    pj, pm = ops(job), ops(m)
    if not pj or pj != pm or not any(n.startswith("MPI_") for n in pj):
        probs.append("prof op: job %r, merged %r" % (sorted(pj.items())[:4], sorted(pm.items())[:4]))
    ms = H.cli_json(b, ["stats", m, "--by", "rank", "--json"])
    if (ms.get("straggler") or {}).get("rank") != STRAGGLER or ms["comm"]["messages"] != truth["messages"]:
        probs.append("merged: stats --by rank straggler %r, messages %r" % (ms.get("straggler"), ms["comm"]["messages"]))
    # aligned within the reported error: every rank leaves its first MPI_Allreduce at one
    # time (true exits are within 300 ns of each other); raw, they are the skews apart
    maxerr = max(r["error_ns"] for r in mi["job"]["clock"]["ranks"])
    mj = os.path.join(tmp, "merged.json")
    H.cli_export(b, m, mj)
    ends = first_ends(mj, "MPI_Allreduce")
    spread_ns = (max(ends.values()) - min(ends.values())) * 1000
    if len(ends) != 8 or spread_ns > 300 + 2 * maxerr + 2:
        probs.append("merged: first MPI_Allreduce ends spread %.0f ns over %d ranks (limit %d)" %
                     (spread_ns, len(ends), 300 + 2 * maxerr))
    raw = os.path.join(tmp, "raw.tft")
    r = H.run([b, "merge", job, "-o", raw, "--raw", "--quiet"])
    rj = os.path.join(tmp, "raw.json")
    if r.rc:
        probs.append("merge --raw: %r" % r.err)
    else:
        H.cli_export(b, raw, rj)
        ends = first_ends(rj, "MPI_Allreduce")
        spread_ns = (max(ends.values()) - min(ends.values())) * 1000
        if spread_ns < 6e6:
            probs.append("merge --raw: the first MPI_Allreduce ends only %.0f ns apart (skews of 6.5 ms)" % spread_ns)
        ri = H.cli_json(b, ["info", raw, "--json"])
        if (ri.get("job") or {}).get("clock") is not None or not ri["job"].get("clock_estimate"):
            probs.append("merge --raw: job %r" % ri.get("job"))
    probs += check_serve(job, truth)
    return probs


def straggler_findings(adv):
    return [f for f in adv["findings"] if f["checker"] == "variability" and "straggler" in f["title"]]


def check_advise(b, job, rank):
    probs = []
    txt = H.run([b, "advise", job])
    if txt.rc or "Rank %d is a straggler" % rank not in txt.out:
        probs.append("advise text: rc %d %r %r" % (txt.rc, txt.out[:300], txt.err[-300:]))
    adv = H.cli_json(b, ["advise", job, "--json"])
    fs = straggler_findings(adv)
    if len(fs) != 1 or not fs[0]["title"].startswith("Rank %d is a straggler" % rank):
        probs.append("advise --json: straggler findings %r" % [f["title"] for f in fs])
    else:
        e = fs[0]["explanation"]
        # the ranks analysis's straggler (matched communication), not the step-time guess
        if "Matching the ranks' communication" not in e or "slow_op" not in e or not fs[0]["evidence"]:
            probs.append("advise: the straggler finding does not come from the matched communication: %r" % e)
    return probs


def check_serve(job, truth):
    probs = []
    srv = Server(["serve", job, "--port", "0", "--quiet"])
    try:
        base = srv.base
        s = get_json(base, "/api/session")
        if not s.get("job") or not s["job"].get("clock_switchable"):
            probs.append("serve: /api/session job %r" % s.get("job"))
        rk = get_json(base, "/api/ranks")
        a = rk["analysis"]
        if rk["clock_mode"] != "aligned" or (a.get("straggler") or {}).get("rank") != STRAGGLER:
            probs.append("serve: /api/ranks mode %r straggler %r" % (rk["clock_mode"], a.get("straggler")))
        if a["comm"]["messages"] != truth["messages"] or a["collectives_total"] != truth["collectives"]:
            probs.append("serve: /api/ranks comm %r" % a["comm"])
        # a collective's slice shows the flows of its group, across ranks
        c = a["collectives"][0]
        sl = get_json(base, "/api/slice?track=%d&ts=%d&deepest=1" % (c["last_track"], c["last_ts"]))
        other = {f["track"] for f in sl.get("flows_out", []) if f["cat"] == "comm.collective"}
        if sl.get("name") != c["name"] or len(other) != 7:
            probs.append("serve: the last arrival of %s #%d: %r, flows out to %d tracks" %
                         (c["name"], c["seq"], sl.get("name"), len(other)))
        adv = get_json(base, "/api/advise")
        fs = straggler_findings(adv)
        if len(fs) != 1 or not fs[0]["title"].startswith("Rank %d is a straggler" % STRAGGLER):
            probs.append("serve: /api/advise straggler findings %r" % [f["title"] for f in fs])
        tl = {t["id"]: t["min_ts_ns"] for t in s["track_list"]}
        st, _, body = req(base, "/api/clock?mode=raw", method="POST")
        if st != 200 or json.loads(body)["clock_mode"] != "raw":
            probs.append("serve: POST /api/clock?mode=raw: %d %r" % (st, body[:200]))
        s2 = get_json(base, "/api/session")
        for t in s2["track_list"]:
            p = s2["process_list"][t["process"]]
            moved = t["min_ts_ns"] - tl[t["id"]]
            want = SKEW.get(p["rank"], 0)
            if abs(moved - want) > 3000:
                probs.append("serve raw: rank %d's track moved %d ns, its skew is %d" % (p["rank"], moved, want))
        if s2["job"]["clock"] is not None:
            probs.append("serve raw: job clock %r" % s2["job"]["clock"])
        if get_json(base, "/api/ranks")["clock_mode"] != "raw":
            probs.append("serve raw: /api/ranks still aligned")
        st, _, body = req(base, "/api/clock?mode=sideways", method="POST")
        if st != 400:
            probs.append("serve: a bad clock mode answered %d" % st)
        req(base, "/api/clock?mode=aligned", method="POST")
        s3 = get_json(base, "/api/session")
        if {t["id"]: t["min_ts_ns"] for t in s3["track_list"]} != tl:
            probs.append("serve: aligned again, the tracks moved")
    finally:
        rc = srv.stop()
        if rc not in (0, None) or H.SANITIZER_RE.search(srv.stderr()):
            probs.append("serve exited %r: %s" % (rc, srv.stderr()[-300:]))
    return probs


def check_collectives_clock(b, exe, tmp):
    job = os.path.join(tmp, "coll")
    skew = {0: 1000, 2: -700000, 3: 5000000}
    args = []
    for r, ns in skew.items():
        args += ["--skew", "%d:%d" % (r, ns)]
    gen(exe, job, "--ranks", "4", "--steps", "10", "--no-pingpong", *args)
    info = H.cli_json(b, ["info", job, "--json"])
    clock = info["job"]["clock"]
    probs = clock_probs(clock, skew, 20000)
    # no straggler in this job: advise has no straggler finding
    fs = straggler_findings(H.cli_json(b, ["advise", job, "--json"]))
    if fs:
        probs.append("advise of a job without a straggler: %r" % [f["title"] for f in fs])
    for r in clock["ranks"][1:]:
        if "pingpong" in r["method"] or "collectives" not in r["method"]:
            probs.append("rank %d aligned by %r" % (r["rank"], r["method"]))
    return probs


def check_kineto(b, tmp):
    """Two ranks of a 128-rank NCCL job: a job directory of their imports, and both
    imported together: the same ranks and collectives."""
    root = H.data_dir()
    src = [os.path.join(root, "hta", "trace_filter", "sampled_rank-%d.json.gz" % r) for r in (0, 1)]
    for p in src:
        if not os.path.exists(p):
            return ["missing input %s" % p]
    job = os.path.join(tmp, "kjob")
    os.mkdir(job)
    for r, p in enumerate(src):
        H.cli_import(b, p, os.path.join(job, "rank-%d.tft" % r))
    one = os.path.join(tmp, "k.tft")
    H.cli_import(b, src, one)
    probs = []
    a = H.cli_json(b, ["stats", job, "--by", "rank", "--json"])
    o = H.cli_json(b, ["stats", one, "--by", "rank", "--json"])
    # c10d::allreduce_ x4, alltoall_base_ x4, _allgather_base_ x2 on both ranks (a hand count of the files)
    for name, x in (("job dir", a), ("one import", o)):
        if [r["rank"] for r in x["ranks"]] != [0, 1]:
            probs.append("%s: ranks %r" % (name, [r["rank"] for r in x["ranks"]]))
        if x["comm"]["collectives"] != 10 or x["comm"]["incomplete_collectives"] or x["comm"]["inferred_collectives"] != 10:
            probs.append("%s: collectives %r" % (name, x["comm"]))
    if [(r["compute_ns"], r["comm_ns"] + r["wait_ns"]) for r in a["ranks"]] != \
            [(r["compute_ns"], r["comm_ns"] + r["wait_ns"]) for r in o["ranks"]]:
        probs.append("compute/communication differ: job dir %r, one import %r" % (a["ranks"], o["ranks"]))
    names = sorted({c["name"] for c in a["collectives"]})
    if names != ["c10d::_allgather_base_", "c10d::allreduce_", "c10d::alltoall_base_"]:
        probs.append("collective names %r" % names)
    # the CPU side of NCCL collectives does not wait: no ordering to align on, and it says so
    info = H.cli_json(b, ["info", job, "--json"])
    r1 = info["job"]["clock"]["ranks"][1]
    if r1["error_ns"] != -1:
        probs.append("rank 1's clock claims an error bound %r from asynchronous collectives" % r1)
    r = H.run([b, "merge", one, "-o", os.path.join(tmp, "k2.tft"), "--quiet"])
    if r.rc:
        probs.append("merge of the import: %r" % r.err)
    return probs


def check_bad(b, exe, tmp):
    probs = []
    empty = os.path.join(tmp, "empty")
    os.mkdir(empty)
    r = H.run([b, "info", empty])
    if r.rc != 2 or "not a job" not in r.err or r.err.count("\n") != 1:
        probs.append("info of an empty directory: %d %r" % (r.rc, r.err))
    bad = os.path.join(tmp, "bad")
    gen(exe, bad, "--ranks", "3", "--steps", "2")
    with open(os.path.join(bad, "rank-1.tft"), "r+b") as fp:
        fp.seek(0)
        fp.write(b"garbage, no SQLite header at all")
    for cmd in (["info", bad], ["stats", bad, "--by", "rank"], ["merge", bad, "-o", os.path.join(tmp, "x.tft")]):
        r = H.run([b] + cmd)
        if r.rc != 2 or "rank-1.tft" not in r.err or r.err.count("\n") != 1 or r.crashed:
            probs.append("%s with a bad rank file: %d %r" % (cmd[0], r.rc, r.err))
    if os.path.exists(os.path.join(tmp, "x.tft")):
        probs.append("merge left an output behind")
    single = os.path.join(tmp, "single")
    gen(exe, single, "--ranks", "1", "--steps", "2")
    r = H.run([b, "merge", os.path.join(single, "rank-0.tft"), "-o", os.path.join(tmp, "y.tft")])
    if r.rc != 2 or "one rank" not in r.err:
        probs.append("merge of a one-rank file: %d %r" % (r.rc, r.err))
    r = H.run([b, "merge", single])
    if r.rc != 2:
        probs.append("merge without -o: %d" % r.rc)
    return probs


def main(argv):
    rep = H.Reporter("job")
    b = H.tft_bin()
    with tempfile.TemporaryDirectory(prefix="tft-job-") as tmp:
        try:
            exe = build_gen(tmp)
        except H.CliError as e:
            rep.fail("gen_job", str(e))
            return rep.finish()
        for name, fn in (("generated job: info, stats, export, merge, serve", lambda: check_job(b, exe, tmp)),
                         ("clocks from collectives (no ping-pong)", lambda: check_collectives_clock(b, exe, tmp)),
                         ("Kineto ranks: job directory = imported together", lambda: check_kineto(b, tmp)),
                         ("bad job directories", lambda: check_bad(b, exe, tmp))):
            if argv and not any(a in name for a in argv):
                continue
            try:
                rep.check(name, fn())
            except (H.CliError, AssertionError, KeyError, ValueError, RuntimeError) as e:
                rep.fail(name, "%s: %s" % (type(e).__name__, e))
    return rep.finish()


if __name__ == "__main__":
    sys.exit(H.main_guard(lambda: main(sys.argv[1:])))
