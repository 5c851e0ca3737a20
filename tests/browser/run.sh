#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Browser tests of the web UI: imports a real trace from shared/data, starts
# `tftracer serve` on a free port, runs ui.test.mjs in headless Chromium (TAP on
# stdout, screenshots and metrics in build/test-artifacts/), stops the server.
# Then advisor.test.mjs (the Advisor page, the Overview's advice) and analysis.test.mjs (the Analysis
# page, tftracer prof's views) on the same session and export.
# Also: a static HTML export (`tftracer export -f html`, of a TF XSpace session with
# communication tracks) opened from file://, and the live Runs page against
# tests/browser/live-job.py under tftracer.TracingServer ($O/python must have the module;
# TFT_UI_LIVE=0 skips that test). A missing input or module is a FAIL line, not a skip.
#
#   tests/browser/run.sh                      # the default Kineto ResNet-50 trace
#   TFT_UI_TRACE=path/to/trace.json.gz tests/browser/run.sh
#   TFT_UI_BIG=10000000 tests/browser/run.sh  # also: first draw / fps on a synthetic N-event session
# Knobs: TFT (binary; default build/tftracer, built if missing), O (build dir), CHROMIUM,
# TFT_UI_STATIC_TRACE (the trace of the static export), PYTHON.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
data=${TFT_DATA:-$root/../shared/data}
trace=${TFT_UI_TRACE:-$data/kineto/tb_plugin_samples/resnet50_num_workers_0/worker0.pt.trace.json.gz}
static_trace=${TFT_UI_STATIC_TRACE:-$data/tf-profiler-demo/GPU-multi-worker/34.83.195.179_6003.xplane.pb}
PYTHON=${PYTHON:-/usr/bin/python3}
art=${TFT_UI_ARTIFACTS:-$root/build/test-artifacts}
O=${O:-build}
TFT=${TFT:-$root/$O/tftracer}

bail() { echo "Bail out! $*"; exit 1; }

command -v node >/dev/null || bail "node is not installed (apt-get install nodejs npm)"
CHROMIUM=${CHROMIUM:-$(command -v chromium || true)}
[ -n "$CHROMIUM" ] || bail "chromium is not installed (apt-get install chromium)"
export CHROMIUM
if [ ! -d "$here/node_modules/playwright-core" ]; then
	(cd "$here" && npm install --no-audit --no-fund >&2) || bail "npm install failed in tests/browser"
fi
if [ ! -x "$TFT" ]; then
	make -C "$root" O="$O" -j2 >&2 || bail "build failed"
fi
"$TFT" serve --help >/dev/null 2>&1 || bail "$TFT has no 'serve' command"
[ -f "$trace" ] || bail "trace not found: $trace"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tft-ui.XXXXXX")
server=""
cleanup() {
	if [ -n "$server" ]; then
		kill "$server" 2>/dev/null || true
		wait "$server" 2>/dev/null || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
mkdir -p "$art"

# serve SESSION: start the server on a free port; sets $server and $url.
serve() {
	: >"$tmp/serve.out"
	"$TFT" serve "$1" --port 0 --quiet >"$tmp/serve.out" 2>"$tmp/serve.err" &
	server=$!
	url=""
	for _ in $(seq 1 300); do
		url=$(grep -o 'https\?://[^ ]*' "$tmp/serve.out" | head -n 1 || true)
		[ -n "$url" ] && break
		kill -0 "$server" 2>/dev/null || { cat "$tmp/serve.err" >&2; bail "tftracer serve exited"; }
		sleep 0.1
	done
	[ -n "$url" ] || bail "tftracer serve printed no URL"
	node -e '
		const u = new URL("api/session", process.argv[1]);
		const t0 = Date.now();
		(async function poll() {
			try { const r = await fetch(u); if (r.ok) process.exit(0); } catch {}
			if (Date.now() - t0 > 30000) { console.error("server not answering " + u); process.exit(1); }
			setTimeout(poll, 100);
		})();' "$url" || bail "server not ready"
}

stop() {
	kill "$server" 2>/dev/null || true
	wait "$server" 2>/dev/null || true
	server=""
}

rc=0
# A test that cannot run for want of its input fails (a line "FAIL browser/NAME
# (why)", counted by tests/run.sh), never a silent SKIP.
fail() { echo "FAIL browser/$1 ($2)"; rc=1; }
echo "# importing $trace" >&2
"$TFT" import "$trace" -o "$tmp/ui.tft" --quiet >&2 || bail "import failed: $trace"

# the static export (tftracer export -f html)
extra=()
if [ ! -f "$static_trace" ]; then
	fail "static export" "input missing: $static_trace (TFT_DATA)"
elif ! "$TFT" import "$static_trace" -o "$tmp/static.tft" --quiet >&2; then
	fail "static export" "tftracer import $static_trace failed"
elif ! "$TFT" export "$tmp/static.tft" -f html -o "$tmp/static.html" --quiet >&2; then
	fail "static export" "tftracer export -f html failed"
else
	extra+=(--static "$tmp/static.html")
fi
# The live job needs the Python module (make builds it into $O/python with
# python3-dev): without it the live test fails, saying why (TFT_UI_LIVE=0 skips it).
pydir=$(dirname "$TFT")/python
extra+=(--python-path "$pydir" --python "$PYTHON")

serve "$tmp/ui.tft"
echo "# serving $url" >&2
node "$here/ui.test.mjs" "$url" --artifacts "$art" --tag ui --tft "$TFT" --data "$data" "${extra[@]}" || rc=1
# the Advisor page and the Overview's advice, on the same session and the same static export
adv_extra=()
[ -f "$tmp/static.html" ] && adv_extra+=(--static "$tmp/static.html")
node "$here/advisor.test.mjs" "$url" --artifacts "$art" "${adv_extra[@]}" || rc=1
# the Analysis page (tftracer prof's views) against `tftracer prof --json` on the same sessions
# (its static export: of this session, whose ops have a scope tree; the XSpace one's ops have none)
an_extra=()
if "$TFT" export "$tmp/ui.tft" -f html -o "$tmp/ui.html" --quiet >&2; then
	an_extra+=(--static "$tmp/ui.html" --static-session "$tmp/ui.tft")
else
	fail "analysis static export" "tftracer export -f html of $trace failed"
fi
node "$here/analysis.test.mjs" "$url" --artifacts "$art" --tft "$TFT" --session "$tmp/ui.tft" "${an_extra[@]}" || rc=1
stop

if [ -n "${TFT_UI_BIG:-}" ]; then
	echo "# generating a synthetic ${TFT_UI_BIG}-event trace" >&2
	node "$here/gen-trace.mjs" "$TFT_UI_BIG" "$tmp/big.json"
	t0=$(date +%s.%N)
	"$TFT" import "$tmp/big.json" -o "$tmp/big.tft" --quiet >&2 || bail "import of the big trace failed"
	echo "# import took $(echo "$(date +%s.%N) - $t0" | bc) s" >&2
	rm -f "$tmp/big.json"
	serve "$tmp/big.tft"
	node "$here/ui.test.mjs" "$url" --artifacts "$art" --tag big --perf-only || rc=1
	stop
fi
exit $rc
