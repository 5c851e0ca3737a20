#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Crash safety of the in-process runtime: run a traced C program
# (examples/c/train_sim), SIGKILL it mid-run, then open its session with the
# reader (`tftracer info --json`) and check that everything the program
# reported durable is there: after each tft_flush() it prints the steps, main
# thread zones and loss samples recorded so far; the session must hold at
# least the last reported numbers. The kill lands at a random point (mid
# step, mid drain cycle or mid commit).
#
# Output: one line per check (PASS name / FAIL name (reason) / SKIP name
# (reason)); exit 1 if any failed.
# Env: TFT_BUILD (build dir, default build), ROUNDS (default 5).
set -uo pipefail

cd "$(dirname "$0")/../.."
B=${TFT_BUILD:-build}
ROUNDS=${ROUNDS:-5}
PY=/usr/bin/python3
nfail=0

pass() { echo "PASS $1"; }
fail() { echo "FAIL $1 ($2)"; nfail=$((nfail + 1)); }

if ! make -s O="$B" "$B/tftracer" examples >/dev/null 2>&1; then
	fail runtime_crash/build "make O=$B $B/tftracer examples failed"
	exit 1
fi
SIM=$B/examples/train_sim
CLI=$B/tftracer
work=$(mktemp -d /tmp/tft-crash-XXXXXX)
trap 'rm -rf "$work"' EXIT

for round in $(seq 1 "$ROUNDS"); do
	name=runtime_crash/round$round
	session=$work/crash-$round.tft
	out=$work/out-$round
	want=$((1 + round % 3)) # flush reports to wait for before the kill
	: >"$out"
	"$SIM" -o "$session" -n 0 -u 30 -f 4 >"$out" 2>"$work/err-$round" &
	pid=$!
	deadline=$((SECONDS + 60))
	while [ "$(grep -c '^flushed' "$out" 2>/dev/null)" -lt "$want" ]; do
		if ! kill -0 "$pid" 2>/dev/null || [ $SECONDS -gt $deadline ]; then
			break
		fi
		sleep 0.02
	done
	# land the kill anywhere in the next few steps / drain cycles
	sleep "0.0$((RANDOM % 10))$((RANDOM % 10))"
	kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	last=$(grep '^flushed' "$out" | tail -n 1)
	if [ -z "$last" ]; then
		fail "$name" "the program reported no flush: $(head -c 300 "$work/err-$round")"
		continue
	fi
	if ! "$CLI" info "$session" --json >"$work/info-$round.json" 2>"$work/info-err-$round"; then
		fail "$name" "reader cannot open the killed session: $(head -c 300 "$work/info-err-$round")"
		continue
	fi
	if msg=$("$PY" - "$work/info-$round.json" "$last" <<'EOF'
import json, sys
info = json.load(open(sys.argv[1]))
want = dict(kv.split("=") for kv in sys.argv[2].split()[1:])
want = {k: int(v) for k, v in want.items()}
tracks = {t["name"]: t for t in info["track_list"]}
got = {
    "steps": info["steps"],
    "zones": tracks.get("main", {}).get("slices", 0),
    "counters": tracks.get("loss", {}).get("counters", 0),
}
bad = [f"{k} {got[k]} < {want[k]}" for k in want if got[k] < want[k]]
if info.get("format") != "tftracer-runtime":
    bad.append("format %r" % info.get("format"))
if bad:
    print("; ".join(bad))
    sys.exit(1)
print("reported %s, session has %s" % (want, got))
EOF
	); then
		pass "$name ($msg)"
	else
		fail "$name" "$msg"
	fi
done
[ "$nfail" -eq 0 ]
