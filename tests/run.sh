#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `make test`: builds the normal and the ASan+UBSan trees, runs the unit tests,
# the corpus/round-trip/PyTorch/bad-input suites and a short fuzz smoke run.
#
# One line per test (PASS name / FAIL name (reason) / SKIP name (reason)); the
# LAST line is the summary "N passed, N failed[, N skipped]"; exit 1 if any failed.
# Knobs (env): TFT_JOBS (2), TFT_SKIP_BUILD=1 (reuse build/ and build-asan/),
# TFT_SKIP_FUZZ=1, FUZZ_SMOKE_SECONDS (2), TFT_DATA (../shared/data),
# TFT_ASAN_MAX_MB (6: larger inputs use the normal build), TFT_ONLY (a subset of:
# layers sizes symbols units bad_input torch roundtrip corpus pickles browser tsan fuzz, or the
# NAME of any other tests/e2e/test_NAME.py or test_NAME.sh, which all run too),
# TFT_BUILD_DIR (build), TFT_ASAN_DIR (build-asan), TFT_FUZZ_DIR (build-fuzz),
# TFT_UNIT_TIMEOUT (300 s per unit binary), TFT_SUITE_TIMEOUT (900 s per suite).
# A skip is printed and counted, never a pass; a missing input file or
# reference is a failure (tests/lib/runner.sh has the verdicts).
set -uo pipefail

cd "$(dirname "$0")/.." || exit 2
ROOT=$(pwd)
JOBS=${TFT_JOBS:-2}
PY=/usr/bin/python3
BUILD=${TFT_BUILD_DIR:-build}
ASAN=${TFT_ASAN_DIR:-build-asan}
FUZZD=${TFT_FUZZ_DIR:-build-fuzz}
case $ASAN in
/*) LOGDIR=$ASAN/test-logs ;;
*) LOGDIR=$ROOT/$ASAN/test-logs ;;
esac
FUZZ_SECS=${FUZZ_SMOKE_SECONDS:-2}
export TFT_DATA=${TFT_DATA:-$ROOT/../shared/data}
export TFT_JOBS=$JOBS
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

T0=$SECONDS
want() { [ -z "${TFT_ONLY:-}" ] || [[ " $TFT_ONLY " == *" $1 "* ]]; }
# pass/fail/skip/note, run_unit, run_suite, summary: the verdicts
# shellcheck source=tests/lib/runner.sh
. "$ROOT/tests/lib/runner.sh"

mkdir -p "$LOGDIR" 2>/dev/null || { LOGDIR=$(mktemp -d); }

# ---- builds -------------------------------------------------------------------
build() { # name log make-args...
	local name=$1 log=$2
	shift 2
	if make "$@" >"$log" 2>&1; then
		pass "$name"
	else
		fail "$name" "make $*: $(grep -m1 -E 'error|Error' "$log" | cut -c1-300)"
	fi
}

if [ "${TFT_SKIP_BUILD:-0}" != 1 ]; then
	note "building (make -j$JOBS O=$BUILD; ASan+UBSan tree in $ASAN)"
	build build "$LOGDIR/build.log" -k -j"$JOBS" O="$BUILD"
	build build-asan "$LOGDIR/build-asan.log" -k -j"$JOBS" O="$ASAN" ASAN=1 all units
fi

# ---- the layer stack (tools/check_layers.sh) -------------------------------------
if want layers; then
	if tools/check_layers.sh >"$LOGDIR/layers.log" 2>&1; then
		pass layers
	else
		fail layers "$(grep -m3 'layer violation' "$LOGDIR/layers.log" | tr '\n' ' ' | cut -c1-400)(log $LOGDIR/layers.log)"
	fi
fi

# ---- what every file and symbol keeps to (tools/check_size.sh, check_symbols.sh) --
if want sizes; then
	if tools/check_size.sh >"$LOGDIR/sizes.log" 2>&1; then
		pass sizes
	else
		fail sizes "$(grep -m3 'too long' "$LOGDIR/sizes.log" | tr '\n' ' ' | cut -c1-400)(log $LOGDIR/sizes.log)"
	fi
fi
if want symbols; then
	if tools/check_symbols.sh "$BUILD" >"$LOGDIR/symbols.log" 2>&1; then
		pass symbols
	else
		fail symbols "$(grep -m3 'unprefixed\|no ' "$LOGDIR/symbols.log" | tr '\n' ' ' | cut -c1-400)(log $LOGDIR/symbols.log)"
	fi
fi

# ---- unit tests (TAP, one test per binary) ------------------------------------
# CPU-bound suites and unit binaries without timing or server ports run two at a
# time first (tests/lib/runner.sh, prerun_*); the rest run alone after them.
PAR_SUITES="bad_input roundtrip pickles accounting pip install ctf job stats_device tf_flows_oplog benchmarks advise torch"
if [ "$JOBS" -gt 1 ]; then
	# the TSan and fuzz builds, one core each, beside the first suites (their
	# sections below then find them built)
	if want tsan; then
		prerun_slot
		make -j1 O="${TFT_TSAN_DIR:-build-tsan}" TSAN=1 "${TFT_TSAN_DIR:-build-tsan}/tests/test_runtime_mt" \
			>"$LOGDIR/tsan-prebuild.log" 2>&1 &
		PRERUN_PID[tsan-build]=$!
	fi
	if want fuzz && [ "${TFT_SKIP_FUZZ:-0}" != 1 ] && command -v clang >/dev/null; then
		prerun_slot
		make -j1 fuzz-build O="$BUILD" FUZZ_O="$FUZZD" >"$LOGDIR/fuzz-prebuild.log" 2>&1 &
		PRERUN_PID[fuzz-build]=$!
	fi
	if want units; then
		for src in tests/unit/test_*.c; do
			[ -e "$src" ] || continue
			name=$(basename "$src" .c)
			case $name in test_runtime* | test_emit_preempt | test_rt_* | test_server_http) continue ;; esac
			prerun_unit "$name" "$ASAN/tests/$name"
		done
	fi
	if [ -x "$PY" ]; then
		for name in $PAR_SUITES; do
			want "$name" || continue
			case $name in
			pickles) prerun_suite pickles tests/python/make_pickles.py --check ;;
			*) for script in tests/e2e/test_"$name".py tests/e2e/test_"$name".sh; do
				[ -f "$script" ] && prerun_suite "$name" "$script"
			done ;;
			esac
		done
	fi
	prerun_wait
fi

if want units; then
	for src in tests/unit/test_*.c; do
		[ -e "$src" ] || continue
		name=$(basename "$src" .c)
		run_unit "$name" "$ASAN/tests/$name"
	done
fi

# ---- Python suites --------------------------------------------------------------
if [ ! -x "$PY" ]; then
	fail python-suites "$PY not found: no Python suite can run"
else
	if [ ! -x "$ASAN/tftracer" ] || [ ! -x "$BUILD/tftracer" ]; then
		note "warning: $ASAN/tftracer or $BUILD/tftracer missing; CLI suites will fail"
	fi
	want bad_input && run_suite bad_input tests/e2e/test_bad_input.py
	want torch && run_suite torch tests/e2e/test_torch.py
	want roundtrip && run_suite roundtrip tests/e2e/test_roundtrip.py
	want corpus && run_suite corpus tests/corpus/test_corpus.py -j "$JOBS"
	want pickles && run_suite pickles tests/python/make_pickles.py --check
	# other end-to-end suites that follow the same protocol (tests/e2e/test_*.py)
	for script in tests/e2e/test_*.py; do
		[ -e "$script" ] || continue
		name=$(basename "$script" .py)
		name=${name#test_}
		case $name in bad_input | torch | roundtrip) continue ;; esac
		want "$name" && run_suite "$name" "$script"
	done
	# shell suites (load test, crash recovery ...) and the browser tests
	for script in tests/e2e/test_*.sh; do
		[ -e "$script" ] || continue
		name=$(basename "$script" .sh)
		name=${name#test_}
		want "$name" && run_suite "$name" "$script"
	done
	[ -f tests/browser/run.sh ] && want browser && run_suite browser tests/browser/run.sh
fi

# ---- ThreadSanitizer: the runtime's producer/drain concurrency ------------------
if want tsan; then
	TSAN_DIR=${TFT_TSAN_DIR:-build-tsan}
	if make -j"$JOBS" O="$TSAN_DIR" TSAN=1 "$TSAN_DIR/tests/test_runtime_mt" >"$LOGDIR/tsan-build.log" 2>&1; then
		if TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" timeout 600 \
			"$TSAN_DIR/tests/test_runtime_mt" >"$LOGDIR/tsan.log" 2>&1 && ! grep -q "WARNING: ThreadSanitizer" "$LOGDIR/tsan.log"; then
			pass "tsan/test_runtime_mt"
		else
			fail "tsan/test_runtime_mt" "$(grep -m1 -E 'WARNING: ThreadSanitizer|not ok' "$LOGDIR/tsan.log" | cut -c1-200)"
		fi
	else
		fail "tsan-build" "$(grep -m1 -E 'error' "$LOGDIR/tsan-build.log" | cut -c1-300)"
	fi
fi

# ---- fuzz smoke -------------------------------------------------------------------
if want fuzz; then
	if [ "${TFT_SKIP_FUZZ:-0}" = 1 ]; then
		skip fuzz "TFT_SKIP_FUZZ=1"
	elif ! ls fuzz/fuzz_*.c >/dev/null 2>&1; then
		skip fuzz "no fuzz/fuzz_*.c targets"
	elif ! command -v clang >/dev/null; then
		skip fuzz "clang not installed"
	elif ! make -j"$JOBS" fuzz-build O="$BUILD" FUZZ_O="$FUZZD" >"$LOGDIR/fuzz-build.log" 2>&1; then
		fail fuzz-build "make fuzz-build: $(grep -m1 -E 'error' "$LOGDIR/fuzz-build.log" | cut -c1-300)"
	else
		# each target FUZZ_SECS, TFT_JOBS at a time (independent processes: CPU only);
		# the verdicts are then counted in the targets' order
		for src in fuzz/fuzz_*.c; do
			name=$(basename "$src" .c)
			bin=$FUZZD/$name
			[ -x "$bin" ] || continue
			work=$FUZZD/corpus/$name
			art=$FUZZD/artifacts/$name
			mkdir -p "$work" "$art"
			seeds=()
			[ -d "fuzz/corpus/$name" ] && seeds=("fuzz/corpus/$name")
			log=$LOGDIR/fuzz-$name.log
			rm -f "$log.rc"
			prerun_slot
			( timeout $((FUZZ_SECS + 120)) "$bin" -max_total_time="$FUZZ_SECS" -max_len=65536 \
				-timeout=10 -rss_limit_mb=2048 -artifact_prefix="$art/" \
				"$work" "${seeds[@]}" >"$log" 2>&1
			  echo $? >"$log.rc" ) &
		done
		wait
		for src in fuzz/fuzz_*.c; do
			name=$(basename "$src" .c)
			if [ ! -x "$FUZZD/$name" ]; then
				fail "fuzz/$name" "not built"
				continue
			fi
			log=$LOGDIR/fuzz-$name.log
			rc=$(cat "$log.rc" 2>/dev/null || echo 1)
			if [ "$rc" -eq 0 ]; then
				pass "fuzz/$name"
			else
				why=$(grep -m1 -E 'ERROR: |SUMMARY: |runtime error:' "$log" | cut -c1-200)
				crash=$(grep -m1 -oE "Test unit written to [^ ]+" "$log")
				fail "fuzz/$name" "exit $rc: ${why:-$(tail_of "$log" 2)} ${crash}"
			fi
		done
	fi
fi

note "total time $((SECONDS - T0)) s; logs in $LOGDIR"
summary
[ "$nfail" -eq 0 ]
