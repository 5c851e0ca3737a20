#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# Bad input: truncated, bit-flipped and garbage-injected copies of real traces
# plus hand-made broken files must fail cleanly (exit 2, one stderr line, no output).
"""Usage: test_bad_input.py [SUBSTRING...]

Each case runs `tftracer import CASE -o DIR/out.tft` in a fresh DIR and
checks: never killed by a signal, no sanitizer report, no timeout; on
failure exit 2, exactly one stderr line "tftracer: ..." naming the input
(and "byte N" with N inside the input for parse errors), and DIR left empty
(no out.tft, no out.tft.tmp.*). Cuts between two events of a top-level array
are legal (unterminated array) and must import the events before the cut."""
import gzip
import json
import os
import random
import resource
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "corpus"))
import count_chrome  # noqa: E402
import tft_harness as H  # noqa: E402

# (file, top-level form) — small real files, both Chrome forms, three producers.
SOURCES = (
    "catapult/simple_trace.json",                          # bare array: B/E/X/C/I/P/M
    "kineto/docs_traces/after_fix_trace.json",             # Kineto object form
    "ikhlestov-tf-profiling/GPU/timeline_01.json",         # tf.timeline object form
)
GZ_SOURCE = "catapult/simple_trace_gz.gz"
# Inputs from $TFT_DATA found missing while the cases were built: each one a FAIL
# ("input/REL"), never a case silently left out.
MISSING = []


def data_file(root, rel):
    """The path of rel under root, or None (recorded in MISSING) if it is not there."""
    p = os.path.join(root, rel)
    if os.path.exists(p):
        return p
    if rel not in MISSING:
        MISSING.append(rel)
    return None


BYTE_RE = re.compile(r"byte (\d+)")

# expectations
ERR = "error"            # exit 2, one line naming the file, "byte N" with lo <= N <= len
ERR_NOBYTE = "error-nb"  # exit 2, one line naming the file (no position required)
OK = "ok"                # exit 0, counts == count_chrome on the events before the cut
EITHER = "either"        # exit 0 (then counts must match) or a clean ERR
ANY = "any"              # exit 0 or a clean exit 2; only "no crash, no leftovers"


def event_spans(data):
    """Byte spans [start, end) of the elements of the events array, plus the
    array's '[' offset. data must be a complete, valid document."""
    n = len(data)
    i = 0

    def skip_string(j):  # data[j] == '"'; returns index after the closing quote
        j += 1
        while True:
            c = data[j]
            if c == 0x5C:
                j += 2
                continue
            j += 1
            if c == 0x22:
                return j

    while data[i] in b" \t\r\n":
        i += 1
    if data[i] == 0x7B:  # object: find "traceEvents" at depth 1
        depth = 0
        while i < n:
            c = data[i]
            if c == 0x22:
                j = skip_string(i)
                if depth == 1 and data[i:j] == b'"traceEvents"':
                    k = data.index(b"[", j)
                    i = k
                    break
                i = j
                continue
            if c in b"{[":
                depth += 1
            elif c in b"}]":
                depth -= 1
            i += 1
    arr = i
    assert data[arr] == 0x5B
    spans = []
    i = arr + 1
    depth = 0
    start = None
    while i < n:
        c = data[i]
        if c == 0x22:
            if start is None:
                start = i
            i = skip_string(i)
            if depth == 0:
                spans.append((start, i))
                start = None
            continue
        if c in b"{[":
            if depth == 0:
                start = i
            depth += 1
        elif c in b"}]":
            if depth == 0:  # end of the events array
                break
            depth -= 1
            if depth == 0:
                spans.append((start, i + 1))
                start = None
        elif depth == 0 and c not in b" \t\r\n,":
            if start is None:
                start = i
        i += 1
    return arr, spans


def structural_positions(data, lo, hi):
    """Offsets in [lo, hi) that are outside strings (data[lo] starts a value)."""
    out = []
    i = lo
    while i < hi:
        c = data[i]
        if c == 0x22:
            i += 1
            while data[i] != 0x22:
                i += 2 if data[i] == 0x5C else 1
            i += 1
            continue
        out.append(i)
        i += 1
    return out


class Case:
    def __init__(self, name, data, expect, lo=0, events=None, fname="in.json", path=None):
        self.name, self.data, self.expect, self.lo = name, data, expect, lo
        self.events, self.fname, self.path = events, fname, path


def cases_for_source(rel, data, rng):
    form = "array" if data.lstrip()[:1] == b"[" else "object"
    events = count_chrome.parse_trace(data)
    arr, spans = event_spans(data)
    assert len(spans) == len(events), (rel, len(spans), len(events))
    base = os.path.basename(rel).replace(".json", "")
    out = []
    picks = sorted({max(1, len(spans) // 4), len(spans) // 2, (3 * len(spans)) // 4,
                    len(spans) - 1})
    for k in picks:
        s, e = spans[k]
        # inside the event: after '{', middle, before '}', inside a string
        out.append(Case("%s:cut-after-brace-%d" % (base, k), data[:s + 1], ERR, s, fname=base + ".json"))
        out.append(Case("%s:cut-mid-%d" % (base, k), data[:(s + e) // 2], ERR, s, fname=base + ".json"))
        out.append(Case("%s:cut-before-close-%d" % (base, k), data[:e - 1], ERR, s, fname=base + ".json"))
        q = data.find(b'"', s + 1, e)
        if q > 0:
            out.append(Case("%s:cut-in-string-%d" % (base, k), data[:q + 2], ERR, s,
                            fname=base + ".json"))
        # between events: legal for the bare array form
        between = OK if form == "array" else EITHER
        out.append(Case("%s:cut-after-event-%d" % (base, k), data[:e], between, s,
                        events=events[:k + 1], fname=base + ".json"))
        comma = data.find(b",", e)
        if comma > 0 and k + 1 < len(spans) and comma < spans[k + 1][0]:
            out.append(Case("%s:cut-after-comma-%d" % (base, k), data[:comma + 1] + b"\n",
                            between, s, events=events[:k + 1], fname=base + ".json"))
    # garbage outside strings inside an event
    for k in picks[:3]:
        s, e = spans[k]
        pos = structural_positions(data, s, e)
        p = rng.choice(pos[1:])
        out.append(Case("%s:inject-hash-%d" % (base, k), data[:p] + b"#" + data[p:], ERR, p,
                        fname=base + ".json"))
        colon = data.find(b":", s, e)
        if colon > 0 and colon in pos:
            out.append(Case("%s:colon-to-semicolon-%d" % (base, k),
                            data[:colon] + b";" + data[colon + 1:], ERR, colon, fname=base + ".json"))
        out.append(Case("%s:double-brace-%d" % (base, k), data[:s] + b"{" + data[s:], ERR, s,
                        fname=base + ".json"))
        out.append(Case("%s:drop-close-%d" % (base, k), data[:e - 1] + data[e:], ERR, s,
                        fname=base + ".json"))
        out.append(Case("%s:nul-bytes-%d" % (base, k), data[:p] + b"\x00\xff\xfe" + data[p:], ERR, p,
                        fname=base + ".json"))
    # random bit flips anywhere: must not crash; outcome free
    for j in range(6):
        b = bytearray(data)
        for _ in range(1 + j % 3):
            p = rng.randrange(len(b))
            b[p] ^= 1 << rng.randrange(8)
        out.append(Case("%s:bitflip-%d" % (base, j), bytes(b), ANY, fname=base + ".json"))
    return out


def special_cases(root, rng):
    c = []
    c.append(Case("empty-file", b"", ERR, 0, fname="empty.json"))
    c.append(Case("whitespace-only", b"  \n\t\n", ERR, 0, fname="ws.json"))
    blob = bytes([0xF3]) + bytes(rng.randrange(256) for _ in range(4095))
    c.append(Case("binary-file", blob, ERR_NOBYTE, fname="blob.bin"))
    c.append(Case("json-null", b"null", ERR, 0, fname="null.json"))
    c.append(Case("json-number", b"42\n", ERR, 0, fname="num.json"))
    c.append(Case("object-without-traceEvents", b'{"foo": 1, "bar": [1, 2]}', ERR, 0,
                  fname="notrace.json"))
    c.append(Case("traceEvents-not-array", b'{"traceEvents": 5}', ERR, 0, fname="te5.json"))
    c.append(Case("array-of-numbers", b"[1, 2, 3]", ERR, 0, fname="nums.json"))
    c.append(Case("object-truncated-after-bracket", b'{"traceEvents": [', EITHER, 0, events=[],
                  fname="open.json"))
    c.append(Case("array-double-comma",
                  b'[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":2},,'
                  b'{"ph":"X","name":"b","pid":1,"tid":1,"ts":3,"dur":1}]', ERR, 0, fname="cc.json"))
    c.append(Case("deep-nesting-args",
                  b'[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":2,"args":{"x":' +
                  b"[" * 200000 + b"]" * 200000 + b"}}]", ERR, 0, fname="deep.json"))
    c.append(Case("deep-nesting-unclosed", b"[" + b"{\"a\":[" * 100000, ERR, 0, fname="deep2.json"))
    c.append(Case("bad-escape", b'[{"ph":"X","name":"a\\qb","pid":1,"tid":1,"ts":1,"dur":2}]',
                  ERR, 0, fname="esc.json"))
    c.append(Case("bad-unicode-escape",
                  b'[{"ph":"X","name":"a\\uZZ12","pid":1,"tid":1,"ts":1,"dur":2}]', ERR, 0,
                  fname="uesc.json"))
    c.append(Case("unterminated-string-eof", b'[{"ph":"X","name":"abc', ERR, 0, fname="ustr.json"))
    c.append(Case("ts-overflow",
                  b'[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1e999,"dur":2}]', ERR, 0,
                  fname="big.json"))
    c.append(Case("ts-huge-integer",
                  b'[{"ph":"X","name":"a","pid":1,"tid":1,"ts":99999999999999999999999,"dur":2}]',
                  ERR, 0, fname="bigint.json"))
    c.append(Case("trailing-garbage-after-object",
                  b'{"traceEvents": []} xyz', ERR, 0, fname="tail.json"))
    # gzip: truncated stream, corrupted stream, gzip of a non-trace
    gzp = data_file(root, GZ_SOURCE)
    gz = open(gzp, "rb").read() if gzp else None
    if gz:
        c.append(Case("gzip-truncated", gz[:len(gz) // 2], ERR_NOBYTE, fname="trunc.json.gz"))
        b = bytearray(gz)
        for p in range(20, len(b) - 20, 37):
            b[p] ^= 0x5A
        c.append(Case("gzip-corrupted", bytes(b), ERR_NOBYTE, fname="corrupt.json.gz"))
    c.append(Case("gzip-of-text", gzip.compress(b"hello, world\n"), ERR, 0, fname="hello.json.gz"))
    # real non-trace JSON from the corpus
    for rel in ("catapult/google_cloud_trace.json", "tensorboard/profile_demo/profile_demo.op_profile.json"):
        p = data_file(root, rel)
        if p:
            c.append(Case("real-" + os.path.basename(rel), open(p, "rb").read(), ERR, 0,
                          fname=os.path.basename(rel)))
    return c


def check_run(case, r, inpath, outdir, binary):
    """Problems with one import run of `case` (r: harness Result)."""
    probs = []
    if r.crashed:
        return [r.why(cmd=False)]
    left = sorted(os.listdir(outdir))
    expect = case.expect
    if r.rc == 0 and expect in (OK, EITHER, ANY):
        if "out.tft" not in left:
            probs.append("exit 0 but no out.tft")
        elif case.events is not None:
            try:
                info = H.cli_info(binary, os.path.join(outdir, "out.tft"))
                want = count_chrome.count_events(case.events)
                d = H.diff_counts(info, want)
                if d:
                    probs.append("counts after cut: " + ", ".join(d))
            except H.CliError as e:
                probs.append(str(e))
        extra = [f for f in left if f != "out.tft"]
        if extra:
            probs.append("files left besides out.tft: %s" % extra)
        return probs
    if expect == OK:
        probs.append("expected exit 0 (legal unterminated array), got " + r.why(cmd=False))
        return probs
    if r.rc != 2:
        probs.append("expected exit 2, got " + r.why(cmd=False))
    lines = r.err.strip().splitlines()
    if len(lines) != 1:
        probs.append("stderr has %d lines: %r" % (len(lines), r.err[:300]))
    elif not lines[0].startswith("tftracer: ") or inpath not in lines[0]:
        probs.append("stderr line lacks 'tftracer: %s': %r" % (inpath, lines[0][:300]))
    elif expect in (ERR, EITHER):
        m = BYTE_RE.search(lines[0])
        if not m:
            probs.append("no 'byte N' in %r" % lines[0][:300])
        elif not case.lo <= int(m.group(1)) <= len(case.data):
            probs.append("byte %s outside [%d, %d]: %r" % (m.group(1), case.lo, len(case.data),
                                                           lines[0][:200]))
    if left:
        probs.append("output left behind: %s" % left)
    return probs


def run_case(rep, binary, case, workdir):
    d = tempfile.mkdtemp(prefix="case-", dir=workdir)
    indir, outdir = os.path.join(d, "in"), os.path.join(d, "out")
    os.mkdir(indir)
    os.mkdir(outdir)
    inpath = case.path or os.path.join(indir, case.fname)
    if case.path is None:
        with open(inpath, "wb") as fp:
            fp.write(case.data)
    r = H.run([binary, "import", inpath, "-o", os.path.join(outdir, "out.tft")], timeout=60)
    probs = check_run(case, r, inpath, outdir, binary)
    if probs and case.path is None:
        keep = os.environ.get("TFT_FAILED_DIR") or os.path.join(tempfile.gettempdir(),
                                                                 "tft-bad-input-failures")
        os.makedirs(keep, exist_ok=True)
        kept = os.path.join(keep, case.name.replace("/", "_").replace(":", "_") + "-" + case.fname)
        shutil.copyfile(inpath, kept)
        probs.append("input kept as %s" % kept)
    rep.check(case.name, probs)
    shutil.rmtree(d, ignore_errors=True)


def main():
    filters = sys.argv[1:]
    root = H.data_dir()
    binary = H.tft_bin()
    rep = H.Reporter("bad_input")
    rng = random.Random(20240611)
    cases = []
    for rel in SOURCES:
        p = data_file(root, rel)
        if p:
            cases += cases_for_source(rel, count_chrome.read_bytes(p), rng)
    cases += special_cases(root, rng)
    for rel in MISSING:  # a missing input is a failure, never a skip
        rep.fail("input/" + rel, "input missing: %s (TFT_DATA)" % os.path.join(root, rel))
    work = tempfile.mkdtemp(prefix="tft-bad-")
    try:
        for case in cases:
            if filters and not any(s in case.name for s in filters):
                continue
            run_case(rep, binary, case, work)
        if not filters or any(s in "nonexistent-file" for s in filters):
            missing = os.path.join(work, "no-such-dir", "missing.json")
            c = Case("nonexistent-file", b"", ERR_NOBYTE, path=missing)
            run_case(rep, binary, c, work)
        if not filters or any(s in "second-input-bad" for s in filters):
            good = os.path.join(root, SOURCES[0])
            bad = os.path.join(work, "bad2.json")
            bad_data = b'[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":2},{"ph":'
            with open(bad, "wb") as fp:
                fp.write(bad_data)
            d = tempfile.mkdtemp(prefix="case-", dir=work)
            r = H.run([binary, "import", good, bad, "-o", os.path.join(d, "out.tft")], timeout=60)
            rep.check("second-input-bad",
                      check_run(Case("second-input-bad", bad_data, ERR, 0), r, bad, d, binary))
        if not filters or any(s in "not-a-trace" for s in filters):
            rep.check("not-a-trace", check_not_a_trace(binary, root, work))
        if not filters or any(s in "same-file" for s in filters):
            rep.check("same-file", check_same_file(binary, os.path.join(root, SOURCES[0]), work))
        if not filters or any(s in "cli-options" for s in filters):
            rep.check("cli-options", check_cli_options(binary, os.path.join(root, SOURCES[0]), work))
        if not filters or any(s in "one-line-usage" for s in filters):
            rep.check("one-line-usage", check_one_line_usage(binary, os.path.join(root, SOURCES[0]), work))
        if not filters or any(s in "fifo-output" for s in filters):
            rep.check("fifo-output", check_fifo_output(binary, os.path.join(root, SOURCES[0]), work))
        if not filters or any(s in "terminal-escapes" for s in filters):
            rep.check("terminal-escapes", check_terminal_escapes(binary, work))
        if not filters or any(s in "signal-cleanup" for s in filters):
            rep.check("signal-cleanup", check_signal_cleanup(binary, os.path.join(root, SOURCES[0]), work))
        if not filters or any(s in "write-failure" for s in filters):
            rep.check("write-failure", check_write_failure(binary, root, work))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return rep.finish()


def check_not_a_trace(binary, root, work):
    """Real TF/XLA files that are not traces: an XLA HloProto (sniffed by its
    content too, under another name) and XProf's tool outputs say what they are."""
    probs = []
    hlo = os.path.join(root, "tracelens/jax_mi300/jax_conv_minimal/jit_forward_3d_conv(15).hlo_proto.pb")
    cases = [(hlo, "HloProto"),
             (os.path.join(root, "tf-profiler-demo/GPU-input-bound/localhost.overview_page.pb"),
              "XProf overview page result"),
             (os.path.join(root, "tf-profiler-demo/Cloud-TPU/10.240.1.50.pod_viewer.json"),
              "XProf pod viewer result"),
             (os.path.join(root, "tensorboard/profile_demo/profile_demo.memory_viewer.json"),
              "XProf memory viewer result")]
    if os.path.exists(hlo):
        renamed = os.path.join(work, "module.pb")
        shutil.copyfile(hlo, renamed)
        cases.append((renamed, "HloProto"))
    for path, want in cases:
        if not os.path.exists(path):
            probs.append("input missing: %s (TFT_DATA)" % path)
            continue
        d = tempfile.mkdtemp(prefix="case-", dir=work)
        r = H.run([binary, "import", path, "-o", os.path.join(d, "out.tft")], timeout=60)
        lines = r.err.splitlines()
        if r.rc != 2 or len(lines) != 1 or want not in lines[0] or path not in lines[0] \
                or "byte 0" not in lines[0] or os.listdir(d):
            probs.append("%s: rc %s, stderr %r, left %r" % (os.path.basename(path), r.rc, lines,
                                                            os.listdir(d)))
    return probs


def check_same_file(binary, src, work):
    """An output that is an input (by name or by a link) is refused, exit 2, the input intact."""
    probs = []
    d = tempfile.mkdtemp(prefix="same-", dir=work)
    trace = os.path.join(d, "t.json")
    shutil.copyfile(src, trace)
    os.symlink(trace, os.path.join(d, "link.json"))
    with open(trace, "rb") as f:
        before = f.read()
    for out in (trace, os.path.join(d, "link.json")):
        r = H.run([binary, "import", trace, "-o", out], timeout=60)
        if r.rc != 2 or "names the input" not in r.err:
            probs.append("import -o %s: exit %d %r" % (os.path.basename(out), r.rc, r.err[-200:]))
    session = os.path.join(d, "s.tft")
    try:
        H.cli_import(binary, [trace], session)
    except H.CliError as e:
        return probs + ["the trace no longer imports: %s" % str(e)[:200]]
    r = H.run([binary, "export", session, "-o", session], timeout=60)
    if r.rc != 2 or "names the input" not in r.err:
        probs.append("export -o its input: exit %d %r" % (r.rc, r.err[-200:]))
    with open(trace, "rb") as f:
        if f.read() != before:
            probs.append("the input trace was changed")
    r = H.run([binary, "info", session], timeout=60)
    if r.rc != 0:
        probs.append("the session no longer opens: %r" % r.err[-200:])
    return probs


def check_cli_options(binary, src, work):
    """Bad option values and outputs are usage errors (exit 2, one line), before any work;
    numbers are digits only (no sign, no space, no overflow)."""
    probs = []
    d = tempfile.mkdtemp(prefix="opts-", dir=work)
    session = os.path.join(d, "s.tft")
    H.cli_import(binary, [src], session)
    out = os.path.join(d, "o.tft")
    cases = [
        ["import", src, "-o", out, "--mem-budget", "-18446744073709551615"],
        ["import", src, "-o", out, "--mem-budget", " 5"],
        ["import", src, "-o", out, "--level", "3x"],
        ["import", src, "-o", out, "--level", "0"],
        ["import", src, "-o", "-"],
        ["import", src, "-o", ""],
        ["import", src],
        ["export", session, "-o", ""],
        ["export", session, "-o", os.path.join(d, "x.json"), "--max-events", " -1"],
        ["stats", session, "--top", " -1"],
        ["stats", session, "--top", "99999999999999999999"],
        ["stats", session, "--process", "no-such-process"],
        ["export", session, "-o", os.path.join(d, "y.json"), "--max-events", "5"],
    ]
    for argv in cases:
        r = H.run([binary] + argv, timeout=60)
        first = r.err.strip().split("\n")[0] if r.err.strip() else ""
        if r.rc != 2 or not first.startswith("tftracer: "):
            probs.append("%r: exit %d, first line %r" % (argv[3:] or argv, r.rc, first[:80]))
    left = sorted(n for n in os.listdir(d) if n != "s.tft")
    if left or os.path.exists("-"):
        probs.append("files left: %s" % left)
    return probs


def check_one_line_usage(binary, src, work):
    """A trace given where a session is wanted says what to do; an unknown option or one
    missing its value is one line naming it (not getopt's text and the whole usage)."""
    probs = []
    for cmd in (["info", src], ["stats", src], ["export", src, "-o", os.path.join(work, "x.json")]):
        r = H.run([binary] + cmd, timeout=60)
        lines = r.err.strip().split("\n")
        if r.rc != 2 or len(lines) != 1 or "not a tftracer session" not in lines[0] or "import" not in lines[0]:
            probs.append("%s on a trace: exit %d, %r" % (cmd[0], r.rc, r.err[:160]))
    for argv in (["import", "--bogus", src], ["stats", src, "--top"], ["export", "x.tft", "-o"],
                 ["serve", "--nope", src], ["info", "-Z", src], ["record", "--port"]):
        r = H.run([binary] + argv, timeout=60)
        lines = r.err.strip().split("\n")
        if r.rc != 2 or len(lines) != 1 or not lines[0].startswith("tftracer: %s: " % argv[0]):
            probs.append("%r: exit %d, %d lines: %r" % (argv, r.rc, len(lines), r.err[:120]))
    if os.path.exists(os.path.join(work, "x.json")):
        probs.append("export of a trace left x.json")
    return probs


def check_fifo_output(binary, src, work):
    """-o naming a FIFO (or a device such as /dev/null) is written in place, never replaced by
    a renamed file; a session cannot go there: import refuses it with exit 2."""
    probs = []
    d = tempfile.mkdtemp(prefix="fifo-out-", dir=work)
    session, fifo = os.path.join(d, "s.tft"), os.path.join(d, "out.json")
    H.cli_import(binary, [src], session)
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()), daemon=True)
    reader.start()
    r = H.run([binary, "export", session, "-o", fifo], timeout=60)
    reader.join(30)
    if r.rc != 0:
        probs.append("export -o FIFO: exit %d %r" % (r.rc, r.err[-200:]))
    if not stat.S_ISFIFO(os.stat(fifo).st_mode):
        probs.append("export -o FIFO replaced the FIFO")
    try:
        json.loads(got[0] if got else b"")
    except ValueError:
        probs.append("the FIFO's reader got no JSON (%d bytes)" % len(got[0] if got else b""))
    r = H.run([binary, "import", src, "-o", fifo], timeout=60)
    if r.rc != 2 or not stat.S_ISFIFO(os.stat(fifo).st_mode):
        probs.append("import -o FIFO: exit %d (want 2), FIFO kept %s" % (r.rc, stat.S_ISFIFO(os.stat(fifo).st_mode)))
    # -o naming a directory: refused up front with exit 2 and one line, nothing left behind
    # (the rename used to fail after the whole import or export, with exit 1)
    sub = os.path.join(d, "adir")
    os.mkdir(sub)
    for cmd in (["import", src, "-o", sub], ["export", session, "-o", sub]):
        r = H.run([binary] + cmd, timeout=60)
        lines = r.err.strip().splitlines()
        left = [f for f in os.listdir(d) if f.startswith("adir")]
        if r.rc != 2 or len(lines) != 1 or "directory" not in lines[0] or left != ["adir"]:
            probs.append("%s -o DIR: exit %d (want 2), stderr %r, left %r" % (cmd[0], r.rc, lines, left))
    return probs


def check_terminal_escapes(binary, work):
    """Names from a trace reach the terminal without their control characters (an OSC
    sequence could retitle or rewrite it): info and stats print '?' for them."""
    probs = []
    d = tempfile.mkdtemp(prefix="esc-", dir=work)
    src, session = os.path.join(d, "esc.json"), os.path.join(d, "esc.tft")
    with open(src, "w") as f:
        f.write('[{"ph":"X","name":"a\\u001b[31mRED","pid":1,"tid":1,"ts":1,"dur":2},'
                '{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"t\\u001b]0;pwned\\u0007x"}},'
                '{"ph":"M","name":"process_name","pid":1,"args":{"name":"p\\u001b[2J"}}]')
    H.cli_import(binary, [src], session)
    for cmd in (["info", session], ["stats", session]):
        r = H.run([binary] + cmd, timeout=60)
        if r.rc != 0:
            probs.append("%s: exit %d" % (cmd[0], r.rc))
        elif any(c in r.out for c in "\x1b\x07"):
            probs.append("%s printed a control character: %r" % (cmd[0], r.out[-300:]))
    return probs


def check_signal_cleanup(binary, src, work):
    """SIGINT or SIGTERM during an import leaves no temporary file next to the output."""
    probs = []
    d = tempfile.mkdtemp(prefix="sig-", dir=work)
    out = os.path.join(d, "out.tft")
    ev = b'{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":2},'
    fifo = os.path.join(tempfile.mkdtemp(prefix="fifo-", dir=work), "trace.json")
    os.mkfifo(fifo)
    for sig in (signal.SIGINT, signal.SIGTERM):
        # from a pipe that stays open: the import waits for more input, mid-way, when the signal comes
        p = subprocess.Popen([binary, "import", "-q", fifo, "-o", out],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(fifo, "wb") as w:
            w.write(b"[" + ev * 20000)
            w.flush()
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and not any(".tmp." in n for n in os.listdir(d)):
                time.sleep(0.01)
            started = any(".tmp." in n for n in os.listdir(d))
            p.send_signal(sig)
            rc = p.wait(timeout=60)
        left = os.listdir(d)
        if not started:
            probs.append("%s: the import never created its temporary file" % sig.name)
        if rc != -sig and rc != 128 + sig:
            probs.append("%s: exit %r, want death by the signal" % (sig.name, rc))
        if left:
            probs.append("%s: left behind %s" % (sig.name, left))
        for n in left:
            os.unlink(os.path.join(d, n))
    return probs


def check_write_failure(binary, root, work):
    """A session that cannot be written (a file size limit, as a full disk) fails with exit 1
    and one line naming the session, not the input, and saying what to check; nothing is left."""
    probs = []
    rng = random.Random(7)
    src = os.path.join(tempfile.mkdtemp(prefix="wf-src-", dir=work), "big.json")
    with open(src, "w") as f:  # ~8 MB; random names and times keep the session large
        f.write("[")
        f.write(",".join('{"ph":"X","name":"op%d","pid":1,"tid":%d,"ts":%d,"dur":%d,"args":{"k":%d}}'
                         % (rng.randrange(1 << 30), t, 1000 * i + t, rng.randrange(900), rng.randrange(1 << 40))
                         for i in range(40000) for t in range(2)))
        f.write("]")

    def limit(n):
        def f():
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (n, n))
        return f
    # (an XSpace's importer reports its own failures at the input's place: a store failure
    # must still name the session)
    xplane = os.path.join(root, "tf-profiler-demo", "GPU-multi-worker", "34.83.195.179_6003.xplane.pb")
    runs = [(src, n) for n in (64 << 10, 512 << 10, 2 << 20)]
    if os.path.exists(xplane):
        runs.append((xplane, 64 << 10))
    else:
        probs.append("input missing: %s (TFT_DATA)" % xplane)
    for src, n in runs:
        d = tempfile.mkdtemp(prefix="wf-", dir=work)
        out = os.path.join(d, "s.tft")
        p = subprocess.run([binary, "import", "-q", src, "-o", out], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=120, preexec_fn=limit(n))
        err = p.stderr.decode("utf-8", "replace").strip()
        if p.returncode != 1:
            probs.append("limit %d: exit %d, want 1 (%r)" % (n, p.returncode, err[-200:]))
        if len(err.splitlines()) != 1 or not err.startswith("tftracer: %s: cannot write the session: " % out) \
                or "free space" not in err or src in err:
            probs.append("limit %d: message %r" % (n, err[-300:]))
        if os.listdir(d):
            probs.append("limit %d: left behind %s" % (n, os.listdir(d)))
    return probs


if __name__ == "__main__":
    sys.exit(H.main_guard(main))
