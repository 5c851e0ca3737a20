#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Load test of /api/viewport with wrk (Debian package `wrk`): a server on a
# free loopback port, 32 connections for ~5 s, (1) the whole trace and (2)
# random windows from the whole trace down to ~1 us (a wrk Lua script).
# Asserts zero socket errors and zero non-2xx responses; prints throughput
# and p99 latency (PASS/FAIL lines, then one JSON line per run).
# Env: TFT_BIN (build/tftracer), TFT_DATA (../shared/data), WRK_SECONDS (5),
# WRK_CONNECTIONS (32), WRK_THREADS (2), WRK_TRACE (a Kineto trace in TFT_DATA).
set -uo pipefail

cd "$(dirname "$0")/../.."
ROOT=$(pwd)
BIN=${TFT_BIN:-build/tftracer}
DATA=${TFT_DATA:-$ROOT/../shared/data}
SECS=${WRK_SECONDS:-5}
CONNS=${WRK_CONNECTIONS:-32}
THREADS=${WRK_THREADS:-2}
TRACE=${WRK_TRACE:-$DATA/tracelens/kineto_h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz}
nfail=0

fail() { echo "FAIL wrk/$1 ($2)"; nfail=$((nfail + 1)); }
pass() { echo "PASS wrk/$1"; }

if ! command -v wrk >/dev/null; then
	echo "SKIP wrk/all (wrk is not installed: apt-get install wrk)"
	exit 0
fi
if [ ! -f "$TRACE" ]; then
	echo "SKIP wrk/all (missing $TRACE)"
	exit 0
fi
TMP=$(mktemp -d /tmp/tft-wrk-XXXXXX)
SRV=
cleanup() {
	[ -n "$SRV" ] && kill "$SRV" 2>/dev/null && wait "$SRV" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

if ! "$BIN" import "$TRACE" -o "$TMP/s.tft" >"$TMP/import.log" 2>&1; then
	fail setup "import: $(tail -n1 "$TMP/import.log")"
	exit 1
fi
"$BIN" serve "$TMP/s.tft" --port 0 --quiet >"$TMP/url" 2>"$TMP/serve.err" &
SRV=$!
for _ in $(seq 1 600); do
	[ -s "$TMP/url" ] && break
	kill -0 "$SRV" 2>/dev/null || break
	sleep 0.1
done
URL=$(head -n1 "$TMP/url" | tr -d '\n')
URL=${URL%/}
if [ -z "$URL" ]; then
	fail setup "server printed no URL: $(tail -n2 "$TMP/serve.err" | tr '\n' ' ')"
	exit 1
fi

# Session span for the windows.
read -r T0 T1 < <("$BIN" info "$TMP/s.tft" --json | python3 -c \
	'import json,sys; j=json.load(sys.stdin); print(j["start_ns"], j["end_ns"])')

cat >"$TMP/windows.lua" <<EOF
-- random viewport windows: the whole trace down to ~1 us, width 1500
local t0, span = $T0, $((T1 - T0))
math.randomseed(42)
request = function()
	local k = math.random(0, 24)
	local win = math.max(1000, math.floor(span / (2 ^ k)))
	local start = t0 + math.floor(math.random() * math.max(0, span - win))
	return wrk.format("GET", string.format("/api/viewport?t0=%d&t1=%d&width=1500&rel=1",
		start, start + win))
end
EOF

run() { # name path-or-empty [lua]
	local name=$1 path=$2 lua=${3:-} out=$TMP/$1.out
	local args=(-t"$THREADS" -c"$CONNS" -d"${SECS}s" --latency --timeout 10s)
	[ -n "$lua" ] && args+=(-s "$lua")
	if ! wrk "${args[@]}" "$URL$path" >"$out" 2>&1; then
		fail "$name" "wrk failed: $(tail -n2 "$out" | tr '\n' ' ')"
		return
	fi
	local rps p99 non2xx errs reqs
	rps=$(awk '/^Requests\/sec:/ {print $2}' "$out")
	p99=$(awk '$1 == "99%" {print $2}' "$out")
	reqs=$(awk '/requests in/ {print $1}' "$out")
	non2xx=$(awk '/Non-2xx or 3xx responses:/ {print $NF}' "$out")
	errs=$(awk '/Socket errors:/ {gsub(",", ""); print $4 + $6 + $8 + $10}' "$out")
	non2xx=${non2xx:-0}
	errs=${errs:-0}
	echo "# $name: $reqs requests, ${rps} req/s, p99 $p99, non-2xx $non2xx, socket errors $errs"
	echo "{\"bench\":\"wrk_viewport\",\"run\":\"$name\",\"connections\":$CONNS,\"seconds\":$SECS,\"requests\":${reqs:-0},\"rps\":${rps:-0},\"p99\":\"$p99\",\"non2xx\":$non2xx,\"socket_errors\":$errs}"
	if [ "$non2xx" != 0 ] || [ "$errs" != 0 ] || [ -z "$rps" ]; then
		fail "$name" "non-2xx $non2xx, socket errors $errs (see $out)"
		sed 's/^/#   /' "$out"
	else
		pass "$name"
	fi
}

run whole_trace "/api/viewport?width=1500"
run windows "/" "$TMP/windows.lua"

if ! kill -0 "$SRV" 2>/dev/null; then
	fail server "the server died: $(tail -n3 "$TMP/serve.err" | tr '\n' ' ')"
else
	kill -TERM "$SRV"
	wait "$SRV"
	rc=$?
	SRV=
	if [ "$rc" -ne 0 ]; then
		fail shutdown "exit $rc after SIGTERM: $(tail -n3 "$TMP/serve.err" | tr '\n' ' ')"
	else
		pass shutdown
	fi
fi
[ "$nfail" -eq 0 ]
