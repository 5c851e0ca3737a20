#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The test runner tells the truth: tests/run.sh, copied into a scratch tree with
# made-up unit binaries (built from C with tests/lib/tap.h) and suites, must
#   - count a skip inside a unit binary (tap_skip) as a skip: a SKIP line and
#     "N skipped" in the summary line, the binary still a pass;
#   - fail a binary that passes a skip off as a pass (ok(1, "# SKIP ...")), one
#     that crashes before its plan, one whose plan disagrees with its points;
#   - fail a suite that exits 0 without any result line, one that exits non-zero
#     without a FAIL line, one that bails out, and count a suite's SKIP lines;
#   - run tools/check_layers.sh as the test "layers", failing on a violation;
# and the suites that read $TFT_DATA (roundtrip, bad_input, corpus) FAIL on a
# missing input file instead of skipping it. Prints PASS/FAIL lines.
# Env: TFT_BIN (the CLI, default build/tftracer), CC (cc).
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
PY=/usr/bin/python3
CC=${CC:-cc}
BIN=${TFT_BIN:-build/tftracer}
case $BIN in /*) ;; *) BIN=$root/$BIN ;; esac
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tft-runner.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

np=0
nf=0
: >"$tmp/p"
problem() { echo "$*;" >>"$tmp/p"; }
# verdict NAME [OUTPUT-FILE]: PASS, or FAIL with the problems noted since the last verdict
verdict() {
	if [ ! -s "$tmp/p" ]; then
		echo "PASS runner/$1"
		np=$((np + 1))
	else
		echo "FAIL runner/$1 ($(tr '\n' ' ' <"$tmp/p")${2:+ output: $(tail -n 12 "$2" | tr '\n' '|' | cut -c1-700)})"
		nf=$((nf + 1))
	fi
	: >"$tmp/p"
}

# ---- a scratch tree: the runner, the TAP header, the layer check, a tiny src/ ----
tree=$tmp/tree
mkdir -p "$tree/tests/lib" "$tree/tests/unit" "$tree/tests/e2e" "$tree/tools" \
	"$tree/src/core" "$tree/src/store" "$tree/build-asan/tests"
cp "$root/tests/run.sh" "$tree/tests/"
cp "$root"/tests/lib/*.sh "$root/tests/lib/tap.h" "$tree/tests/lib/"
cp "$root/tools/check_layers.sh" "$tree/tools/"
printf '#include "core/a.h"\n' >"$tree/src/store/b.c"
printf '#include "core/x.h"\n' >"$tree/src/core/a.c"

unit() { # name C-body: a unit test built with tap.h into the tree's ASan dir
	printf '#include "tap.h"\n#include <stdlib.h>\nint main(void)\n{\n%s\n}\n' "$2" >"$tree/tests/unit/$1.c"
	$CC -std=c11 -Wall -Wextra -Werror -I"$tree/tests/lib" -o "$tree/build-asan/tests/$1" \
		"$tree/tests/unit/$1.c" 2>>"$tmp/cc.log"
}
unit test_skips 'ok(1, "first"); tap_skip("no AVX2 here"); is_int(2, 2, "second"); tap_skip("no GPU"); return done_testing();'
unit test_fakeskip 'ok(1, "first"); ok(1, "# SKIP %s not found", "x.json"); return done_testing();'
unit test_crash 'ok(1, "first"); fflush(stdout); abort();'
unit test_planless 'ok(1, "first"); return 0;'
unit test_shortplan 'ok(1, "first"); ok(1, "second"); printf("1..1\n"); return 0;'
unit test_good 'ok(1, "one"); is_str("a", "a", "two"); return done_testing();'
printf '' >"$tree/tests/unit/test_notbuilt.c"
[ -s "$tmp/cc.log" ] && problem "cc: $(head -c 300 "$tmp/cc.log")"
verdict tap-builds

# suites: tests/e2e/test_NAME.py (the Python protocol) and test_NAME.sh
cat >"$tree/tests/e2e/test_silent.py" <<'EOF'
# exits 0 and prints no result: nothing was checked
print("# nothing to see")
EOF
cat >"$tree/tests/e2e/test_skips.py" <<'EOF'
print("PASS skips/a")
print("SKIP skips/b (clang not installed)")
EOF
cat >"$tree/tests/e2e/test_dies.py" <<'EOF'
import sys
print("PASS dies/a")
sys.exit(3)
EOF
cat >"$tree/tests/e2e/test_bails.sh" <<'EOF'
echo "ok 1 - first"
echo "Bail out! input missing"
exit 0
EOF
cat >"$tree/tests/e2e/test_tapskip.sh" <<'EOF'
echo "ok 1 - first"
echo "ok 2 - second # SKIP TFT_UI_LIVE=0"
echo "not ok 3 - third # detail"
echo "1..3"
exit 1
EOF
cat >"$tree/tests/e2e/test_tapshort.sh" <<'EOF'
echo "ok 1 - first"
exit 0
EOF

run_tree() { # TFT_ONLY -> $tmp/out
	(cd "$tree" && TFT_SKIP_BUILD=1 TFT_SKIP_FUZZ=1 TFT_ONLY="$1" TFT_DATA=$tmp/nodata \
		TFT_UNIT_TIMEOUT=60 bash tests/run.sh) >"$tmp/out" 2>&1
	echo $? >"$tmp/rc"
}
want_line() { grep -qE -- "$1" "$tmp/out" || problem "no line '$1'"; }
want_last() { [ "$(tail -n 1 "$tmp/out")" = "$1" ] || problem "summary line '$(tail -n 1 "$tmp/out")', want '$1'"; }
want_rc() { [ "$(cat "$tmp/rc")" = "$1" ] || problem "exit $(cat "$tmp/rc"), want $1"; }

run_tree "units"
want_line '^PASS unit/test_skips$'
want_line '^SKIP unit/test_skips/2 \(no AVX2 here\)$'
want_line '^SKIP unit/test_skips/4 \(no GPU\)$'
want_line '^FAIL unit/test_fakeskip \(exit 1, 1 failed'
want_line '^FAIL unit/test_crash \(killed by signal 6'
want_line '^FAIL unit/test_planless \(exit 0, no TAP plan'
want_line '^FAIL unit/test_shortplan \(exit 0, plan 1\.\.1 but 2 test points'
want_line '^PASS unit/test_good$'
want_line '^FAIL unit/test_notbuilt \(not built'
want_last "2 passed, 5 failed, 2 skipped"
want_rc 1
verdict unit-verdicts "$tmp/out"

run_tree "silent skips dies bails tapskip tapshort"
want_line '^FAIL silent \(exit 0 with no PASS/FAIL/SKIP line'
want_line '^PASS skips/a$'
want_line '^SKIP skips/b \(clang not installed\)$'
want_line '^PASS dies/a$'
want_line '^FAIL dies \(exit 3 with no FAIL line'
want_line '^FAIL bails \(Bail out! input missing\)'
want_line '^PASS tapskip/first$'
want_line '^SKIP tapskip/second \(TFT_UI_LIVE=0\)$'
want_line '^FAIL tapskip/third'
want_line '^FAIL tapshort \(TAP plan'
# passes: skips/a dies/a bails/first tapskip/first tapshort/first; fails: silent dies
# bails tapskip/third tapshort; skips: skips/b tapskip/second
want_last "5 passed, 5 failed, 2 skipped"
want_rc 1
verdict suite-verdicts "$tmp/out"

run_tree "layers"
want_line '^PASS layers$'
want_last "1 passed, 0 failed"
want_rc 0
printf '#include "store/b.h"\n' >>"$tree/src/core/a.c" # a layer including one above it
run_tree "layers"
want_line '^FAIL layers \(layer violation: src/core/a.c:2: includes store/ \(store is above core\)'
want_rc 1
verdict layers-in-make-test "$tmp/out"

# ---- the real suites on a data directory without the file they need ----------------
mkdir -p "$tmp/nodata/catapult"
missing() { # name expected-FAIL-regex command...
	local name=$1 re=$2
	shift 2
	(cd "$root" && TFT_DATA=$tmp/nodata TFT_BIN=$BIN TFT_BIN_BIG=$BIN timeout 300 "$@") >"$tmp/m.out" 2>&1
	local rc=$?
	grep -qE "$re" "$tmp/m.out" || problem "no line matching '$re'"
	grep -q '^SKIP ' "$tmp/m.out" && problem "a SKIP line: $(grep -m1 '^SKIP ' "$tmp/m.out")"
	[ "$rc" -eq 1 ] || problem "exit $rc, want 1"
	verdict "$name" "$tmp/m.out"
}
missing roundtrip-missing-input '^FAIL roundtrip/catapult/flow\.json \(input missing: ' \
	"$PY" tests/e2e/test_roundtrip.py catapult/flow.json
missing bad-input-missing-input '^FAIL bad_input/input/catapult/simple_trace\.json \(input missing: ' \
	"$PY" tests/e2e/test_bad_input.py nonexistent-file
missing corpus-missing-corpus '^FAIL corpus/data \(no JSON file under ' \
	"$PY" tests/corpus/test_corpus.py

# test_corpus.py drops no file uncounted: a listed non-trace is refused by the CLI (a
# PASS), an unlisted file without trace events is a FAIL, a trace is compared (a PASS)
data=${TFT_DATA:-$root/../shared/data}
mkdir -p "$tmp/cdata/catapult" "$tmp/cdata/misc"
cp "$data/catapult/google_cloud_trace.json" "$data/catapult/flow_simple.json" "$tmp/cdata/catapult/" 2>/dev/null ||
	problem "input missing: $data/catapult/google_cloud_trace.json or flow_simple.json (TFT_DATA)"
printf '{"displayTimeUnit": "ns", "otherData": {}}\n' >"$tmp/cdata/misc/settings.json"
(cd "$root" && TFT_DATA=$tmp/cdata TFT_BIN=$BIN TFT_BIN_BIG=$BIN timeout 300 "$PY" tests/corpus/test_corpus.py) >"$tmp/out" 2>&1
echo $? >"$tmp/rc"
want_line '^PASS corpus/catapult/flow_simple\.json$'
want_line '^PASS corpus/not-a-trace/catapult/google_cloud_trace\.json$'
want_line '^FAIL corpus/not-a-trace/misc/settings\.json \(count_chrome\.py finds no trace events .* NOT_TRACE does not list it'
want_line '^# corpus: 2 passed, 1 failed, 0 skipped$'
want_rc 1
verdict corpus-counts-every-file "$tmp/out"

echo "# runner: $np passed, $nf failed"
[ "$nf" -eq 0 ]
