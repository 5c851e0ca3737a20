# shellcheck shell=bash
# SPDX-License-Identifier: MIT
# The verdicts of tests/run.sh, sourced by it and by tests/e2e/test_runner.sh
# (which feeds them made-up unit binaries and suites): one line per test,
# "PASS name", "FAIL name (reason)" or "SKIP name (reason)", tallied for the
# summary line "N passed, N failed[, N skipped]".
#
# A skip is a test that did not run, for a reason outside the tree and the
# shared data (the CPU has no AVX2, clang is not installed, TFT_SKIP_FUZZ=1);
# it is printed and counted, never folded into a pass. A missing input file or
# a missing independent reference makes the test that needs it fail.
#
# Needs (set by the caller): LOGDIR, PY, ASAN, BUILD. Knob: TFT_UNIT_TIMEOUT (300 s).

npass=0
nfail=0
nskip=0

pass() { npass=$((npass + 1)); echo "PASS $1"; }
fail() { nfail=$((nfail + 1)); echo "FAIL $1 ($2)"; }
skip() { nskip=$((nskip + 1)); echo "SKIP $1 ($2)"; }
note() { echo "# $*"; }

# last few lines of a log, on one line, for FAIL reasons
tail_of() { tail -n "${2:-3}" "$1" 2>/dev/null | tr '\n' ' ' | tr -s ' ' | cut -c1-400; }

# run_unit NAME BIN: one unit binary (TAP from tests/lib/tap.h) is one test. It
# passes when it exits 0 with a plan "1..N", N test points and none "not ok";
# each point "ok N # SKIP reason" is also one SKIP line of its own.
# Suites and unit binaries that can run beside another one (CPU-bound, no server
# port, no timing) start early in the background, TFT_JOBS at a time, and
# run_unit/run_suite then wait for them and count their lines in the usual order;
# everything else runs alone after them (prerun_wait).
declare -A PRERUN_PID
prerun_slot() {
	while [ "$(jobs -rp | wc -l)" -ge "${TFT_JOBS:-2}" ]; do wait -n; done
}
prerun_unit() { # NAME BIN
	local log=$LOGDIR/unit-$1.log bin=$2
	[ -x "$bin" ] || return 0
	prerun_slot
	( (TFT_DATA=$TFT_DATA timeout "${TFT_UNIT_TIMEOUT:-300}" "$bin") >"$log" 2>&1; echo $? >"$log.rc" ) &
	PRERUN_PID[unit-$1]=$!
}
prerun_suite() { # NAME SCRIPT [ARGS]
	local name=$1 script=$2 log=$LOGDIR/$1.log runner=("$PY")
	shift 2
	[ -f "$script" ] || return 0
	case $script in *.sh) runner=(bash) ;; esac
	prerun_slot
	local t0=$SECONDS
	( TFT_BIN=$ASAN/tftracer TFT_BIN_BIG=$BUILD/tftracer TFT_BUILD_DIR=$BUILD TFT_BUILD=$BUILD TFT_ASAN_DIR=$ASAN \
		timeout "${TFT_SUITE_TIMEOUT:-900}" "${runner[@]}" "$script" "$@" >"$log" 2>&1
	  echo $? >"$log.rc"; echo $((SECONDS - t0)) >"$log.secs" ) &
	PRERUN_PID[$name]=$!
}
# Wait for every prerun job (before the suites that must run alone).
prerun_wait() {
	wait "${PRERUN_PID[@]}" 2>/dev/null
	return 0
}

run_unit() {
	local name=$1 bin=$2 log=$LOGDIR/unit-$1.log rc ntests nok plan why
	if [ ! -x "$bin" ]; then
		fail "unit/$name" "not built: $bin (see $LOGDIR/build-asan.log)"
		return
	fi
	if [ -n "${PRERUN_PID[unit-$name]:-}" ]; then
		wait "${PRERUN_PID[unit-$name]}"
		rc=$(cat "$log.rc" 2>/dev/null || echo 1)
	else
		(TFT_DATA=$TFT_DATA timeout "${TFT_UNIT_TIMEOUT:-300}" "$bin") >"$log" 2>&1
		rc=$?
	fi
	ntests=$(grep -cE '^(not )?ok [0-9]+' "$log")
	nok=$(grep -c '^not ok' "$log")
	plan=$(grep -m1 -oE '^1\.\.[0-9]+' "$log" | cut -c4-)
	if [ "$rc" -eq 0 ] && [ "$nok" -eq 0 ] && [ -n "$plan" ] && [ "$plan" -eq "$ntests" ] &&
		[ "$ntests" -gt 0 ]; then
		pass "unit/$name"
	else
		if [ "$rc" -eq 124 ]; then why="timeout after ${TFT_UNIT_TIMEOUT:-300} s"
		elif [ "$rc" -gt 128 ]; then why="killed by signal $((rc - 128))"
		elif grep -qE 'AddressSanitizer|runtime error:|LeakSanitizer' "$log"; then
			why="sanitizer: $(grep -m1 -E 'ERROR: |runtime error:' "$log" | cut -c1-200)"
		elif [ -z "$plan" ]; then why="exit $rc, no TAP plan (crashed or no done_testing)"
		elif [ "$nok" -gt 0 ]; then why="exit $rc, $nok failed"
		elif [ "$ntests" -eq 0 ]; then why="exit $rc, no test point"
		elif [ "$plan" -ne "$ntests" ]; then why="exit $rc, plan 1..$plan but $ntests test points"
		else why="exit $rc"; fi
		fail "unit/$name" "$why; log $log"
		grep -A3 '^not ok' "$log" | grep -E '^(not ok|#)' | head -n 20 | sed 's/^/    /'
	fi
	local line n reason
	while IFS= read -r line; do
		n=$(echo "$line" | sed -E 's/^ok ([0-9]+).*/\1/')
		reason=$(echo "$line" | sed -E 's/^ok [0-9]+( -)? *# SKIP *//')
		skip "unit/$name/$n" "${reason:-no reason given}"
	done < <(grep -E '^ok [0-9]+( -)? *# SKIP' "$log")
}

# run_suite NAME SCRIPT [ARGS]: a Python or shell suite printing PASS/FAIL/SKIP
# lines (tests/corpus/tft_harness.py), or TAP (the browser tests: one line per
# test point, "ok N - name # SKIP why" a skip). Its lines are counted; it also
# fails as a whole when it exits non-zero without a FAIL line, prints no result
# at all, bails out, or its TAP plan does not match its test points.
run_suite() {
	local name=$1 script=$2 log=$LOGDIR/$1.log
	shift 2
	if [ ! -f "$script" ]; then
		fail "$name" "missing $script"
		return
	fi
	local t=$SECONDS runner=("$PY") rc tap=0
	case $script in *.sh) runner=(bash) ;; esac
	if [ -n "${PRERUN_PID[$name]:-}" ]; then
		wait "${PRERUN_PID[$name]}"
		rc=$(cat "$log.rc" 2>/dev/null || echo 1)
		t=$((SECONDS - $(cat "$log.secs" 2>/dev/null || echo 0)))
	else
		TFT_BIN=$ASAN/tftracer TFT_BIN_BIG=$BUILD/tftracer TFT_BUILD_DIR=$BUILD TFT_BUILD=$BUILD TFT_ASAN_DIR=$ASAN \
			timeout "${TFT_SUITE_TIMEOUT:-900}" "${runner[@]}" "$script" "$@" >"$log" 2>&1
		rc=$?
	fi
	if grep -qE '^(not )?ok [0-9]+' "$log"; then
		tap=1
		sed -E -n -e "s|^ok [0-9]+ - (.*) # SKIP (.*)|SKIP $name/\1 (\2)|p" \
			-e "s|^ok ([0-9]+) # SKIP (.*)|SKIP $name/\1 (\2)|p" \
			-e "s|^ok [0-9]+ - (.*)|PASS $name/\1|p" \
			-e "s|^ok ([0-9]+)\$|PASS $name/\1|p" \
			-e "s|^not ok [0-9]+ - (.*)|FAIL $name/\1 (see $log)|p" \
			-e "s|^not ok ([0-9]+)( .*)?\$|FAIL $name/\1 (see $log)|p" "$log" >"$log.tap"
		cat "$log.tap" >>"$log"
	fi
	local p f s
	p=$(grep -c '^PASS ' "$log")
	f=$(grep -c '^FAIL ' "$log")
	s=$(grep -c '^SKIP ' "$log")
	grep -E '^(PASS|FAIL|SKIP) ' "$log"
	npass=$((npass + p))
	nfail=$((nfail + f))
	nskip=$((nskip + s))
	if grep -q '^Bail out!' "$log"; then
		fail "$name" "$(grep -m1 '^Bail out!' "$log" | cut -c1-300)"
	elif [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		fail "$name" "exit $rc with no FAIL line: $(tail_of "$log" 3)"
	elif [ $((p + f + s)) -eq 0 ]; then
		fail "$name" "exit $rc with no PASS/FAIL/SKIP line: $(tail_of "$log" 3)"
	elif [ "$tap" -eq 1 ]; then
		local plan ntests
		# (a suite of several TAP scripts, such as the browser's: their plans add up)
		plan=$(grep -oE '^1\.\.[0-9]+' "$log" | cut -c4- | awk '{ n += $1 } END { if (NR) print n }')
		ntests=$(grep -cE '^(not )?ok [0-9]+' "$log")
		if [ -z "$plan" ] || [ "$plan" -ne "$ntests" ]; then
			fail "$name" "TAP plan '1..${plan:-(none)}' but $ntests test points: $(tail_of "$log" 2)"
		fi
	fi
	note "$name: $p passed, $f failed, $s skipped in $((SECONDS - t)) s (log $log)"
}

# the last line of the run
summary() {
	if [ "$nskip" -gt 0 ]; then
		echo "$npass passed, $nfail failed, $nskip skipped"
	else
		echo "$npass passed, $nfail failed"
	fi
}
