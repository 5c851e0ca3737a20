#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# GET /api/advise (docs/http-api.md, docs/cmd-advise.md) on `tftracer serve`: the same
# JSON as `tftracer advise --json` with and without step=, all_steps=, checker=; every
# evidence slice id opens its slice through /api/slice; bad parameters are 400 (an
# unknown step 404) with a one-line {"error"} that echoes nothing of the request; and
# the static HTML export answers the page's api/advise from what the exporter
# precomputed (web/staticapi.js run by node), the same result.
"""Usage: test_http_advise.py [SUBSTRING...]   one PASS/FAIL/SKIP line per test.

Env: TFT_BIN (the CLI, default build/tftracer), TFT_DATA (the trace corpus), NODE."""
import json
import os
import re
import shutil
import sys
import tempfile
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "corpus"))
import tft_harness as H  # noqa: E402
import kineto_gen as K  # noqa: E402
from test_http_api import Server, T, expect, get_json, req  # noqa: E402

RESNET = "kineto/tb_plugin_samples/resnet50_num_workers_0/worker0.pt.trace.json.gz"
SLICE_ID = re.compile(r"^(\d+)\.(-?\d+)\.(\d+)$")

NODE_DRIVER = r"""// BigInt (exact big integers, where node can read them) as strings
const out = queries.map((q) => {
	try { return { status: 200, body: sess.query('api/advise', q) }; }
	catch (e) { return { status: e.status || 500, body: { error: String(e.message) } }; }
});
process.stdout.write(JSON.stringify(out, (k, v) => (typeof v === 'bigint' ? v.toString() : v)));
"""


def advise_http(s, **q):
    return get_json(s.base, "/api/advise" + ("?" + urllib.parse.urlencode(q) if q else ""))


def cli(session, *args):
    return H.cli_json(H.tft_bin(), ["advise", session, "--json"] + list(args), timeout=600)


def steps_of(session):
    idx = sorted({st["index"] for st in cli(session)["steps"]})
    return str(idx[min(2, len(idx) - 1)]), str(idx[-1])


def check_same(s, session):
    probs = []
    a, b = steps_of(session)
    for q, args in (({}, []), ({"step": a}, ["--step", a]), ({"all_steps": "1"}, ["--all-steps"]),
                    ({"checker": "memory,variability"}, ["--checker", "memory,variability"]),
                    ({"step": b, "checker": "critical_path"}, ["--step", b, "--checker", "critical_path"])):
        got, want = advise_http(s, **q), cli(session, *args)
        expect(got == want, "/api/advise?%s differs from advise --json %s" % (urllib.parse.urlencode(q), " ".join(args)),
               probs)
    st, hd, body = req(s.base, "/api/advise", method="HEAD")
    expect(st == 200 and not body, "HEAD /api/advise: %d, %d body bytes" % (st, len(body)), probs)
    return probs


def check_evidence(s, session):
    """Every slice id of every finding names a slice: /api/slice finds it, at that start."""
    probs = []
    j = advise_http(s)
    n = 0
    expect(j["findings"], "no findings to check the evidence of", probs)
    for f in j["findings"]:
        for e in f["evidence"]:
            for sid in e["slice_ids"][:8]:
                m = SLICE_ID.match(sid)
                if not m:
                    probs.append("bad slice id %r" % sid)
                    continue
                track, ts, depth = m.groups()
                st, _, body = req(s.base, "/api/slice?track=%s&ts=%s&depth=%s" % (track, ts, depth))
                if st != 200:
                    probs.append("%s (%s): /api/slice %d" % (sid, f["title"], st))
                    continue
                d = json.loads(body)
                if str(d.get("ts")) != ts or int(d.get("depth", -1)) != int(depth):
                    probs.append("%s opens the slice at ts %s depth %s" % (sid, d.get("ts"), d.get("depth")))
                n += 1
    expect(n > 0, "no slice id checked", probs)
    return probs


def check_errors(s, session):
    probs = []
    a, _ = steps_of(session)
    for q, want in (("step=x", 400), ("step=", 400), ("step=1.5", 400), ("step=99999", 404),
                    ("all_steps=2", 400), ("all_steps=yes", 400), ("step=%s&all_steps=1" % a, 400),
                    ("checker=nope", 400), ("checker=", 400), ("checker=memory,", 400),
                    ("checker=%3Cscript%3E", 400), ("step=%3Cscript%3E", 400),
                    ("checker=memory", 200), ("all_steps=0", 200), ("step=" + a, 200)):
        st, hd, body = req(s.base, "/api/advise?" + q)
        if st != want:
            probs.append("advise?%s: %d, want %d (%r)" % (q, st, want, body[:120]))
            continue
        if st != 200:
            try:
                err = json.loads(body)["error"]
                expect(isinstance(err, str) and "\n" not in err and "script" not in err and "nope" not in err,
                       "advise?%s: error %r" % (q, err), probs)
            except (ValueError, KeyError):
                probs.append("advise?%s: body %r is not {\"error\": ...}" % (q, body[:100]))
    st, _, _ = req(s.base, "/api/advise", method="POST", body=b"{}")
    expect(st == 405, "POST /api/advise: %d, want 405" % st, probs)
    return probs


def check_static(s, session, tmp):
    node = os.environ.get("NODE") or shutil.which("node")
    if not node:
        return ("skip", "node is not installed")
    html = os.path.join(tmp, "page.html")
    r = H.run([H.tft_bin(), "export", session, "-f", "html", "-o", html])
    if r.rc != 0:
        return ["export -f html: " + r.why()]
    sess = get_json(s.base, "/api/session")
    answers = H.run_static_session(node, NODE_DRIVER, html, sess["start_ns"], [{}, {"step": steps_of(session)[0]}], tmp)
    if isinstance(answers, str):
        return [answers]
    probs = []
    want = advise_http(s)
    got = answers[0]
    if got["status"] != 200:
        return ["static api/advise: %d %s" % (got["status"], got["body"])]

    def norm(v):
        # node before 21 reads integers past 2^53 rounded: compare those within 1 us
        if isinstance(v, dict):
            return {k: norm(x) for k, x in v.items()}
        if isinstance(v, list):
            return [norm(x) for x in v]
        if isinstance(v, str) and re.fullmatch(r"-?\d{16,}", v):
            return int(v) // 1000
        if isinstance(v, int) and abs(v) >= 2 ** 53:
            return v // 1000
        return v
    expect(norm(got["body"]) == norm(want), "the static page's advice differs from the server's", probs)
    expect(answers[1]["status"] == 404, "static api/advise?step=N: %d, want 404" % answers[1]["status"], probs)
    return probs


def main():
    filters = sys.argv[1:]
    rep = H.Reporter("http_advise")
    t = T(rep, filters)
    tmp = tempfile.mkdtemp(prefix="tft-http-advise-")
    try:
        sessions = []
        paths = [K.straggler(r, 2).write(os.path.join(tmp, "rank%d.json" % r)) for r in range(4)]
        paths.append(K.nchw_convs(True).write(os.path.join(tmp, "nchw.json")))
        ranks = os.path.join(tmp, "ranks.tft")
        H.cli_import(H.tft_bin(), paths[:4], ranks)
        sessions.append(("ranks", ranks))
        resnet = os.path.join(H.data_dir(), RESNET)
        if not os.path.exists(resnet):
            rep.fail("resnet", "missing data: %s" % resnet)
        else:
            out = os.path.join(tmp, "resnet.tft")
            H.cli_import(H.tft_bin_big(), resnet, out)
            sessions.append(("resnet", out))
        for name, session in sessions:
            s = Server(["serve", session, "--port", "0", "--quiet"])
            try:
                t.run(name + "/same_as_cli", lambda: check_same(s, session))
                t.run(name + "/evidence_opens", lambda: check_evidence(s, session))
                t.run(name + "/errors", lambda: check_errors(s, session))
                t.run(name + "/static_export", lambda: check_static(s, session, tmp))
            finally:
                s.stop()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if rep.n["FAIL"] else 0


if __name__ == "__main__":
    sys.exit(H.main_guard(main))
