# SPDX-License-Identifier: MIT
# Shared helpers for the Python test scripts (corpus, e2e, PyTorch): locating
# the binaries and the data, running the CLI, and PASS/FAIL/SKIP reporting.
import json
import os
import re
import signal
import subprocess
import sys
import threading

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

# Counts compared between an import and the independent counter / another import.
COUNT_KEYS = ("slices", "instants", "counters", "flows", "steps", "unclosed_slices",
              "unmatched_flows")
SANITIZER_RE = re.compile(r"AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|"
                          r"runtime error:|==\d+==ERROR")


def _bin(var, default):
    path = os.environ.get(var) or default
    if not os.path.isabs(path):
        path = os.path.join(REPO, path)
    return path


def tft_bin():
    """The CLI under test: $TFT_BIN (default build/tftracer)."""
    return _bin("TFT_BIN", "build/tftracer")


def tft_bin_big():
    """The CLI for big inputs: $TFT_BIN_BIG (default: same as TFT_BIN).
    tests/run.sh points TFT_BIN at the ASan build and this at the normal one."""
    return _bin("TFT_BIN_BIG", os.environ.get("TFT_BIN") or "build/tftracer")


def big_threshold():
    """Uncompressed-size estimate (bytes) above which tft_bin_big() is used."""
    return int(float(os.environ.get("TFT_ASAN_MAX_MB", "6")) * 1e6)


def est_size(path):
    """Rough uncompressed size of a data file (gzip ~ 12x)."""
    size = os.path.getsize(path)
    with open(path, "rb") as fp:
        if fp.read(2) == b"\x1f\x8b":
            return size * 12
    return size


def bin_for(path):
    return tft_bin_big() if est_size(path) > big_threshold() else tft_bin()


def data_dir():
    """The read-only trace corpus: $TFT_DATA (default ../shared/data from the repo)."""
    d = os.environ.get("TFT_DATA") or os.path.join(REPO, "..", "shared", "data")
    if not os.path.isabs(d):
        d = os.path.join(REPO, d)
    return os.path.abspath(d)


class Result:
    def __init__(self, rc, out, err, argv):
        self.rc, self.out, self.err, self.argv = rc, out, err, argv

    @property
    def crashed(self):
        """Killed by a signal, timed out, or a sanitizer report on stderr."""
        return self.rc < 0 or self.rc == 124 or bool(SANITIZER_RE.search(self.err))

    def why(self, cmd=True):
        """One-line description of a failed run for FAIL lines (with the
        command line unless cmd is false)."""
        tail = (": " + " ".join(self.argv)) if cmd else ""
        if self.rc == 124:
            return "timeout" + tail
        if self.rc < 0:
            try:
                sig = signal.Signals(-self.rc).name
            except ValueError:
                sig = str(-self.rc)
            return "killed by %s%s" % (sig, tail)
        m = SANITIZER_RE.search(self.err)
        if m:
            line = next((l for l in self.err.splitlines() if SANITIZER_RE.search(l)), m.group(0))
            return "sanitizer: %s%s" % (line.strip()[:200], tail)
        first = self.err.strip().splitlines()[:1]
        return "exit %d%s%s" % (self.rc, (" (" + first[0][:200] + ")") if first else "", tail)


def run(argv, timeout=300, cwd=None):
    """Run a command; rc 124 on timeout. Output decoded leniently."""
    try:
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=timeout, cwd=cwd)
        return Result(p.returncode, p.stdout.decode("utf-8", "replace"),
                      p.stderr.decode("utf-8", "replace"), [str(a) for a in argv])
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode("utf-8", "replace")
        err = (e.stderr or b"").decode("utf-8", "replace")
        return Result(124, out, err, [str(a) for a in argv])
    except OSError as e:
        return Result(127, "", "cannot run %s: %s" % (argv[0], e), [str(a) for a in argv])


class CliError(Exception):
    pass


def cli_import(binary, inputs, out, timeout=600):
    if isinstance(inputs, str):
        inputs = [inputs]
    r = run([binary, "import"] + list(inputs) + ["-o", out], timeout=timeout)
    if r.rc != 0 or r.crashed:
        raise CliError("import " + r.why())
    if not os.path.exists(out):
        raise CliError("import exited 0 but wrote no %s" % out)
    return r


def cli_json(binary, args, timeout=300):
    r = run([binary] + list(args), timeout=timeout)
    if r.rc != 0 or r.crashed:
        raise CliError(args[0] + " " + r.why())
    try:
        return json.loads(r.out)
    except ValueError as e:
        raise CliError("%s --json printed invalid JSON (%s): %r" % (args[0], e, r.out[:200]))


def cli_info(binary, session):
    return cli_json(binary, ["info", session, "--json"])


def cli_stats(binary, session, by="name"):
    return cli_json(binary, ["stats", session, "--json", "--by", by])


def cli_export(binary, session, out, timeout=600):
    r = run([binary, "export", session, "-f", "chrome", "-o", out], timeout=timeout)
    if r.rc != 0 or r.crashed:
        raise CliError("export " + r.why())
    if not os.path.exists(out):
        raise CliError("export exited 0 but wrote no %s" % out)
    return r


def info_consistency(info):
    """Internal consistency of `info --json`: problems as a list of strings."""
    probs = []
    for k in ("format", "processes", "tracks", "track_list", "step_list") + COUNT_KEYS:
        if k not in info:
            probs.append("info --json lacks key %r" % k)
    if probs:
        return probs
    tl = info["track_list"]
    if len(tl) != info["tracks"]:
        probs.append("tracks=%s but track_list has %d" % (info["tracks"], len(tl)))
    for k in ("slices", "instants", "counters"):
        s = sum(int(t.get(k, 0)) for t in tl)
        if s != info[k]:
            probs.append("%s=%s but track_list sums to %d" % (k, info[k], s))
    if len(info["step_list"]) != info["steps"]:
        probs.append("steps=%s but step_list has %d" % (info["steps"], len(info["step_list"])))
    return probs


def diff_counts(got, want, keys=COUNT_KEYS):
    """'key got G want W' for every differing key."""
    return ["%s %s!=%s" % (k, got.get(k), want.get(k)) for k in keys if got.get(k) != want.get(k)]


def _stats_by_name(stats):
    rows = {}
    for r in stats.get("rows", []):
        rows[r.get("name")] = (r.get("count"), r.get("total_ns"), r.get("min_ns"), r.get("max_ns"))
    return rows


def _export_multiset(path):
    """Exported Chrome JSON reduced to a multiset of (ph, name, ts, dur), metadata
    dropped (pids/tids/ids are allowed to be renumbered by a round trip)."""
    events = count_chrome_mod().parse_trace(count_chrome_mod().read_bytes(path))
    out = {}
    for e in events:
        if not isinstance(e, dict) or e.get("ph") == "M":
            continue
        k = (e.get("ph"), e.get("name"), repr(e.get("ts")), repr(e.get("dur")))
        out[k] = out.get(k, 0) + 1
    return out


def count_chrome_mod():
    import count_chrome  # same directory as this module
    return count_chrome


def roundtrip(binary, path, tmp, fixed_point=True, extra_keys=()):
    """import(path) -> a.tft -> export a.json -> import -> b.tft; compare a and b:
    info counts (and extra_keys, such as "tracks") and time span, stats rows by name
    (count, total, min, max) and, with fixed_point, export(b) == export(a) as event
    multisets. Problems list."""
    a, aj = os.path.join(tmp, "a.tft"), os.path.join(tmp, "a.json")
    b, bj = os.path.join(tmp, "b.tft"), os.path.join(tmp, "b.json")
    try:
        cli_import(binary, path, a)
        ia = cli_info(binary, a)
        probs = info_consistency(ia)
        if probs:
            return ["first import: " + p for p in probs]
        cli_export(binary, a, aj)
        cli_import(binary, aj, b)
        ib = cli_info(binary, b)
        probs = ["re-import: " + p for p in info_consistency(ib)]
        probs += diff_counts(ib, ia, COUNT_KEYS + ("start_ns", "end_ns") + tuple(extra_keys))
        sa = _stats_by_name(cli_stats(binary, a))
        sb = _stats_by_name(cli_stats(binary, b))
        if sa != sb:
            bad = sorted(set(sa) ^ set(sb))[:3]
            bad += [n for n in sorted(set(sa) & set(sb), key=str) if sa[n] != sb[n]][:3]
            probs.append("stats by name differ (%d vs %d rows), e.g. %s" % (
                len(sa), len(sb), "; ".join("%s: %s vs %s" % (n, sa.get(n), sb.get(n)) for n in bad)))
        if fixed_point and not probs:
            cli_export(binary, b, bj)
            ma, mb = _export_multiset(aj), _export_multiset(bj)
            if ma != mb:
                only_a = [k for k in ma if ma[k] != mb.get(k, 0)][:2]
                only_b = [k for k in mb if mb[k] != ma.get(k, 0)][:2]
                probs.append("export(b) != export(a): %d vs %d distinct events; a-only %s b-only %s"
                             % (len(ma), len(mb), only_a, only_b))
        return probs
    except CliError as e:
        return [str(e)]


class Reporter:
    """Prints PASS/FAIL/SKIP lines (one per test) and keeps the tally."""

    def __init__(self, suite):
        self.suite = suite
        self.n = {"PASS": 0, "FAIL": 0, "SKIP": 0}
        self.lock = threading.Lock()

    def _emit(self, kind, name, reason=None):
        with self.lock:
            self.n[kind] += 1
            line = "%s %s/%s" % (kind, self.suite, name)
            if reason:
                line += " (%s)" % " ".join(str(reason).split())[:600]
            print(line, flush=True)

    def ok(self, name):
        self._emit("PASS", name)

    def fail(self, name, reason):
        self._emit("FAIL", name, reason)

    def skip(self, name, reason):
        self._emit("SKIP", name, reason)

    def check(self, name, problems):
        if problems:
            self.fail(name, "; ".join(problems))
        else:
            self.ok(name)

    def finish(self):
        """Print a '#' tally line and return the process exit code."""
        print("# %s: %d passed, %d failed, %d skipped" %
              (self.suite, self.n["PASS"], self.n["FAIL"], self.n["SKIP"]), flush=True)
        return 1 if self.n["FAIL"] else 0


# A node script's start (node FILE PAGE.html QUERIES.json): it loads the standalone HTML
# export's own JavaScript and its query engine (WebAssembly), so `sess.query(path, q)`
# answers as the offline page does;
# `queries` and `startNs` come from QUERIES.json. Tests append what they ask.
STATIC_SESSION_JS = r"""// The static export's own JavaScript (web/staticapi.js and the modules it imports, as
// inlined in the page, loaded the way its worker loads them): `sess` answers the page's API.
const fs = require('fs');
const html = fs.readFileSync(process.argv[2], 'utf8');
const { start_ns: startNs, queries } = JSON.parse(fs.readFileSync(process.argv[3], 'utf8'));
const mod = (n) => {
	const m = html.match(new RegExp('<script type="text/plain" data-tft-module="' + n + '">([\\s\\S]*?)</script>'));
	if (!m) throw new Error('no module ' + n + ' in the page');
	return m[1];
};
const data = html.match(/<script type="application\/json" id="tft-data">([\s\S]*?)<\/script>/);
if (!data) throw new Error('no data in the page');
const wasm = html.match(/<script type="application\/octet-stream" id="tft-wasm">([\s\S]*?)<\/script>/);
if (!wasm) throw new Error('no query engine in the page');
// staticapi.js and the modules it imports, each once, dependencies first (its workerSource)
const order = [], seen = new Set();
const visit = (n) => {
	if (seen.has(n)) return;
	seen.add(n);
	const t = mod(n);
	for (const m of t.matchAll(/^import\s[^;]*?\bfrom\s*['"]\.\/([A-Za-z0-9_.-]+\.js)['"];/gm)) visit(m[1]);
	order.push(t);
};
visit('staticapi.js');
const src = order.map((t) => t.replace(/^import\s[^;]*;[ \t]*$/gm, '')
	.replace(/^export\s+(?=(?:async\s+)?function\b|class\b|const\b|let\b)/gm, '')).join('\n;\n');
const sess = new Function('text', 'wasm', src + '\n;return openSessionSync(text, wasm);')(data[1], wasm[1]);
if (sess.error) throw new Error(sess.error);
"""


def run_static_session(node, driver_js, html, start_ns, queries, tmp):
    """Run STATIC_SESSION_JS + the test's part under node on an exported page: its
    parsed stdout, or an error string."""
    qpath, drv = os.path.join(tmp, "queries.json"), os.path.join(tmp, "static_driver.js")
    with open(qpath, "w") as fp:
        json.dump({"start_ns": str(start_ns), "queries": queries}, fp)
    with open(drv, "w") as fp:
        fp.write(STATIC_SESSION_JS + driver_js)
    p = subprocess.run([node, drv, html, qpath], capture_output=True, timeout=300)
    if p.returncode != 0:
        return "node: exit %d: %s" % (p.returncode, p.stderr.decode("utf-8", "replace")[-400:])
    return json.loads(p.stdout)


def note(msg):
    print("# " + msg, flush=True)


def main_guard(fn):
    """Run fn(); an unexpected exception is one FAIL line, not a traceback only."""
    try:
        return fn()
    except KeyboardInterrupt:
        raise
    except Exception as e:  # noqa: BLE001 - report anything as a failure
        import traceback
        traceback.print_exc()
        print("FAIL %s (harness error: %s: %s)" % (os.path.basename(sys.argv[0]),
                                                   type(e).__name__, e), flush=True)
        return 1
