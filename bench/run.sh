#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `make bench`: every target of BENCHMARKS.md ("Against the targets"), measured on
# this machine in one run:
#   - import/export throughput and peak RSS of the CLI, the ratio to python3's
#     json.load (best of BENCH_REPS like the import), and bytes per slice, on the
#     real 83 MB MTIA Kineto trace and a generated Kineto-style trace
#     (bench/gen_chrome.c); PyTorch 2.x traces recorded with with_stack=True: the
#     real vLLM (34 MB) and SGLang (0.6 MB) decode traces of tracelens and a
#     generated one of their shape (bench/gen_chrome.c --with-stack, BENCH_SIZE_MB);
#   - a generated TF2-profiler XSpace, the real TF2 GPU profile x50 and a generated
#     TF1 RunMetadata (bench/gen_xspace.c; their peer is the same import with the
#     store on the importing thread, TFT_STORE_THREADS=0, in the same script);
#   - the session store alone (bench/bench_store.c: append rate, bytes per slice,
#     reopen and first-window query on a generated 10M-slice Kineto-like session);
#   - statistics by name on a generated 10M-event session (bench/bench_stats.c): the
#     whole session and 40 clipped windows from the stored chunk statistics, against
#     scanning every event (the peer, same process);
#   - `tftracer advise` on a generated 10M-event GPU training session (bench/bench_advise.c
#     makes it: steps, launches with their flows, kernels on two streams, copies, an
#     all-reduce): the CLI's wall, CPU and peak RSS, and the library's best of 3;
#   - /api/viewport's core on a generated 10M-event session (bench/bench_viewport.c:
#     p50/p99 over windows from the whole trace down to 1 us, width 1500);
#   - the runtime's ns per recorded event against a bare rdtsc + store loop and an
#     enabled LTTng-UST tracepoint, and disabled calls (bench/bench_runtime.c);
#   - the standalone HTML export's query engine (the server's C code as WebAssembly,
#     under node's V8 as the page runs it) against the server answering the same
#     queries, on the real vLLM and ResNet-50 Kineto traces (bench/bench_static.mjs).
#
# Env: BENCH_SIZE_MB (1000: size of the generated trace), BENCH_REPS (3: best
# of N import runs and of N json.load runs), BENCH_DIR (/tmp/tft-bench: inputs
# and scratch, never the repo), BENCH_PY_MAX_MB (1100: skip json.load above this
# size, it needs ~4.5x the file in RAM), BENCH_INPUTS ("mtia vllm sglang gen gen_stack
# xspace xspace_real runmeta store stats advise viewport runtime"; xspace_real is the real TF2 GPU profile
# tf-profiler-demo/GPU-multi-worker/34.83.195.179_6003.xplane.pb concatenated 50
# times: protobuf reads that as one XSpace with 50x the planes, tftracer as 50
# hosts' XSpaces, since session 9), BENCH_XSPACE_MB (300: size of the generated
# XSpace), BENCH_RUNMETA_MB (100: one step's RunMetadata; at 200 its per-device
# events pass the 96 MB sort budget and spill), BENCH_STORE_SLICES (10000000:
# slices bench_store generates, the target's size), BENCH_ADVISE_EVENTS (10000000: the
# advise session's events, generated once into BENCH_DIR), BENCH_VIEWPORT_EVENTS (10000000:
# the viewport session's events, generated once into BENCH_DIR), TFT_BIN (build/tftracer;
# bench_store links the libtftracer.a next to it, bench_viewport and
# bench_runtime are built in its directory), TFT_DATA (../shared/data).
# BENCH_RESULTS (bench/results/<date>.jsonl).
# Output: one JSON line per result (also appended to BENCH_RESULTS)
# and a table; tools/bench_results.py turns a run's lines into BENCHMARKS.md's
# Results table, tools/check_benchmarks.py checks the targets table against it.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$(pwd)
BIN=${TFT_BIN:-build/tftracer}
SIZE_MB=${BENCH_SIZE_MB:-1000}
REPS=${BENCH_REPS:-3}
WORK=${BENCH_DIR:-/tmp/tft-bench}
PY_MAX_MB=${BENCH_PY_MAX_MB:-1100}
INPUTS=${BENCH_INPUTS:-mtia vllm sglang gen gen_stack xspace xspace_real runmeta store stats advise viewport runtime static}
ADVISE_EVENTS=${BENCH_ADVISE_EVENTS:-10000000}
STATS_EVENTS=${BENCH_STATS_EVENTS:-10000000}
STORE_SLICES=${BENCH_STORE_SLICES:-10000000}
VIEWPORT_EVENTS=${BENCH_VIEWPORT_EVENTS:-10000000}
XSPACE_MB=${BENCH_XSPACE_MB:-300}
RUNMETA_MB=${BENCH_RUNMETA_MB:-100}
DATA=${TFT_DATA:-$ROOT/../shared/data}
PY=/usr/bin/python3
TIME=/usr/bin/time
DATE=$(date +%F)
RESULTS=${BENCH_RESULTS:-bench/results/$DATE.jsonl}
COMMIT=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
DIRTY=$(git status --porcelain -uno 2>/dev/null | grep -q . && echo "+dirty" || true)
HOST=$(hostname)

mkdir -p "$WORK" "$(dirname "$RESULTS")"
[ -x "$TIME" ] || { echo "bench: $TIME missing (Debian package 'time')" >&2; exit 1; }
[ -x "$BIN" ] || make -j2 >/dev/null
ROWS=$WORK/rows.$$
: >"$ROWS"

emit() { # JSON object text
	local line="{\"date\":\"$DATE\",\"commit\":\"$COMMIT$DIRTY\",\"host\":\"$HOST\",$1}"
	echo "$line"
	echo "$line" >>"$RESULTS"
	echo "$line" >>"$ROWS"
}

# run CMD... under /usr/bin/time -v: sets WALL (s), CPU (user+sys s), RSS_MB;
# returns the exit status. CPU time is the figure to trust on a busy machine.
measure() {
	local tv=$WORK/time.$$ t0 t1 rc=0
	t0=$(date +%s.%N)
	"$TIME" -v -o "$tv" "$@" >"$WORK/cmd.out" 2>"$WORK/cmd.err" || rc=$?
	t1=$(date +%s.%N)
	WALL=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
	RSS_MB=$(awk -F': ' '/Maximum resident set size/ { printf "%.1f", $2 / 1024 }' "$tv")
	CPU=$(awk -F': ' '/User time|System time/ { s += $2 } END { printf "%.3f", s }' "$tv")
	rm -f "$tv"
	return "$rc"
}

mbps() { awk -v b="$1" -v s="$2" 'BEGIN { printf "%.1f", (s > 0) ? b / 1e6 / s : 0 }'; }
jget() { "$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }
errmsg() { head -c 300 "$WORK/cmd.err" | tr '\n"\\' '   '; }

# bench/gen_chrome output: prepare_gen [--with-stack] (gen_N MB.json, gen_stack_N MB.json)
prepare_gen() {
	local gen=$WORK/gen_chrome out=$WORK/gen_${SIZE_MB}MB.json
	[ "${1:-}" = --with-stack ] && out=$WORK/gen_stack_${SIZE_MB}MB.json
	if [ ! -x "$gen" ] || [ bench/gen_chrome.c -nt "$gen" ]; then
		cc -O2 -std=c11 -Wall -Wextra -o "$gen" bench/gen_chrome.c
	fi
	if [ ! -s "$out" ] || [ "$gen" -nt "$out" ]; then
		"$gen" "$@" "$SIZE_MB" "$out.part" 2>/dev/null && mv "$out.part" "$out"
	fi
	echo "$out"
}

# a real trace of ../shared/data, decompressed into WORK once: prepare_real SRC OUT-NAME
prepare_real() {
	local src=$DATA/$1 out=$WORK/$2
	[ -f "$src" ] || { echo ""; return; }
	if [ ! -s "$out" ]; then
		zcat "$src" >"$out.part" && mv "$out.part" "$out"
	fi
	echo "$out"
}

# bench/gen_xspace output: prepare_pb OUT [--runmeta] MB
prepare_pb() {
	local gen=$WORK/gen_xspace out=$1
	shift
	if [ ! -x "$gen" ] || [ bench/gen_xspace.c -nt "$gen" ]; then
		cc -O2 -std=c11 -Wall -Wextra -o "$gen" bench/gen_xspace.c
	fi
	if [ ! -s "$out" ] || [ "$gen" -nt "$out" ]; then
		"$gen" "$@" "$out.part" >/dev/null 2>&1 && mv "$out.part" "$out"
	fi
	echo "$out"
}

prepare_xspace() { prepare_pb "$WORK/gen_${XSPACE_MB}MB.xplane.pb" "$XSPACE_MB"; }
prepare_runmeta() { prepare_pb "$WORK/gen_${RUNMETA_MB}MB.runmeta.pb" --runmeta "$RUNMETA_MB"; }

prepare_mtia() {
	local src=$DATA/hta/mtia_trace_single_rank/mtia_rank_0.json.gz out=$WORK/mtia_rank_0.json
	[ -f "$src" ] || { echo ""; return; }
	if [ ! -s "$out" ]; then
		zcat "$src" >"$out.part" && mv "$out.part" "$out"
	fi
	echo "$out"
}

prepare_xspace_real() {
	local src=$DATA/tf-profiler-demo/GPU-multi-worker/34.83.195.179_6003.xplane.pb
	local out=$WORK/real_x50.xplane.pb i
	[ -f "$src" ] || return 0
	if [ ! -s "$out" ]; then
		for i in $(seq 50); do cat "$src"; done >"$out.part" && mv "$out.part" "$out"
	fi
	echo "$out"
}

# The same import with the store on the importing thread (the peer of the
# protobuf imports): best of REPS, emitted with the ratio to the default.
bench_single_thread() { # label file
	local label=$1 in=$2 bytes best="" best_cpu="" i tft=$WORK/bench1.tft
	bytes=$(stat -c %s "$in")
	for i in $(seq 1 "$REPS"); do
		rm -f "$tft"
		TFT_STORE_THREADS=0 measure "$BIN" import "$in" -o "$tft" || return 0
		if [ -z "$best" ] || awk -v a="$WALL" -v b="$best" 'BEGIN { exit !(a < b) }'; then
			best=$WALL
			best_cpu=$CPU
		fi
	done
	rm -f "$tft" "$tft"-*
	emit "\"bench\":\"import_store_threads_0\",\"input\":\"$label\",\"input_mb\":$(mbps "$bytes" 1),\"seconds\":$best,\"mb_per_s\":$(mbps "$bytes" "$best"),\"cpu_s\":$best_cpu,\"cpu_mb_per_s\":$(mbps "$bytes" "$best_cpu"),\"ratio\":$(awk -v p="$best" -v t="$IMPORT_S" 'BEGIN { printf "%.2f", p / t }')"
}

# The peer of a JSON import: python3's json.load of the same file, best of REPS
# like the import (the fastest run is the least disturbed one on a shared
# machine); the ratio is taken between the two bests. Needs IMPORT_S, IMPORT_CPU.
bench_python() { # label file
	local label=$1 in=$2 bytes py="" pycpu="" rss_peak=0 i
	bytes=$(stat -c %s "$in")
	for i in $(seq 1 "$REPS"); do
		if ! measure "$PY" -c 'import json,sys; json.load(open(sys.argv[1]))' "$in"; then
			emit "\"bench\":\"python_json_load\",\"input\":\"$label\",\"error\":\"$(errmsg)\""
			return
		fi
		if [ -z "$py" ] || awk -v a="$WALL" -v b="$py" 'BEGIN { exit !(a < b) }'; then
			py=$WALL
			pycpu=$CPU
		fi
		rss_peak=$(awk -v a="$RSS_MB" -v b="$rss_peak" 'BEGIN { print (a > b) ? a : b }')
	done
	emit "\"bench\":\"python_json_load\",\"input\":\"$label\",\"input_mb\":$(mbps "$bytes" 1),\"reps\":$REPS,\"seconds\":$py,\"mb_per_s\":$(mbps "$bytes" "$py"),\"cpu_s\":$pycpu,\"max_rss_mb\":$rss_peak"
	emit "\"bench\":\"import_vs_python\",\"input\":\"$label\",\"reps\":$REPS,\"ratio\":$(awk -v p="$py" -v t="$IMPORT_S" 'BEGIN { printf "%.2f", p / t }'),\"cpu_ratio\":$(awk -v p="$pycpu" -v t="$IMPORT_CPU" 'BEGIN { printf "%.2f", (t > 0) ? p / t : 0 }'),\"python_s\":$py,\"tftracer_s\":$IMPORT_S"
}

bench_input() { # label file [nopy: no python json.load baseline]
	local label=$1 in=$2 nopy=${3:-} bytes best="" best_cpu="" rss_peak=0 i tft=$WORK/bench.tft exp=$WORK/bench-export.json
	bytes=$(stat -c %s "$in")
	cat "$in" >/dev/null # warm the page cache for both tftracer and python
	for i in $(seq 1 "$REPS"); do
		rm -f "$tft"
		if ! measure "$BIN" import "$in" -o "$tft"; then
			emit "\"bench\":\"import\",\"input\":\"$label\",\"error\":\"$(errmsg)\""
			return
		fi
		if [ -z "$best" ] || awk -v a="$WALL" -v b="$best" 'BEGIN { exit !(a < b) }'; then
			best=$WALL
			best_cpu=$CPU
		fi
		rss_peak=$(awk -v a="$RSS_MB" -v b="$rss_peak" 'BEGIN { print (a > b) ? a : b }')
	done
	measure "$BIN" info "$tft" --json || true
	cp "$WORK/cmd.out" "$WORK/info.json"
	local slices events tft_bytes
	slices=$(jget "$WORK/info.json" slices 2>/dev/null || echo 0)
	events=$("$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(sum(d[k] for k in ("slices","instants","counters","flows")))' "$WORK/info.json" 2>/dev/null || echo 0)
	tft_bytes=$(stat -c %s "$tft")
	emit "\"bench\":\"import\",\"input\":\"$label\",\"input_mb\":$(mbps "$bytes" 1),\"reps\":$REPS,\"seconds\":$best,\"mb_per_s\":$(mbps "$bytes" "$best"),\"cpu_s\":$best_cpu,\"cpu_mb_per_s\":$(mbps "$bytes" "$best_cpu"),\"max_rss_mb\":$rss_peak,\"events\":$events,\"slices\":$slices"
	IMPORT_S=$best
	IMPORT_CPU=$best_cpu

	if [ "$slices" -gt 0 ] 2>/dev/null; then
		emit "\"bench\":\"session_size\",\"input\":\"$label\",\"json_bytes\":$bytes,\"tft_bytes\":$tft_bytes,\"slices\":$slices,\"tft_bytes_per_slice\":$(awk -v a="$tft_bytes" -v b="$slices" 'BEGIN { printf "%.2f", a / b }'),\"json_bytes_per_slice\":$(awk -v a="$bytes" -v b="$slices" 'BEGIN { printf "%.1f", a / b }')"
	fi

	if [ -n "$nopy" ]; then
		bench_single_thread "$label" "$in" # not JSON: the single-threaded import is the peer
	elif awk -v b="$bytes" -v m="$PY_MAX_MB" 'BEGIN { exit !(b / 1e6 <= m) }'; then
		bench_python "$label" "$in"
	else
		emit "\"bench\":\"python_json_load\",\"input\":\"$label\",\"skipped\":\"larger than BENCH_PY_MAX_MB=$PY_MAX_MB\""
	fi

	rm -f "$exp"
	if measure "$BIN" export "$tft" -f chrome -o "$exp"; then
		local ob
		ob=$(stat -c %s "$exp")
		emit "\"bench\":\"export_chrome\",\"input\":\"$label\",\"output_mb\":$(mbps "$ob" 1),\"seconds\":$WALL,\"mb_per_s\":$(mbps "$ob" "$WALL"),\"cpu_s\":$CPU,\"cpu_mb_per_s\":$(mbps "$ob" "$CPU"),\"max_rss_mb\":$RSS_MB"
	else
		emit "\"bench\":\"export_chrome\",\"input\":\"$label\",\"error\":\"$(errmsg)\""
	fi
	rm -f "$tft" "$tft"-* "$exp"
}

# re-emit a tool's JSON result lines ({"bench":...}) with the common fields
emit_lines() { # input-label file [bench-name-regex]
	local line
	while read -r line; do
		case $line in "{\"bench\":"*) ;; *) continue ;; esac
		[ -n "${3:-}" ] && ! [[ $line =~ $3 ]] && continue
		line=${line#\{}
		emit "\"input\":\"$1\",${line%\}}"
	done <"$2"
}

bench_viewport() { # /api/viewport's core on a generated 10M-event session (bench/bench_viewport.c)
	local o exe session=$WORK/viewport-$VIEWPORT_EVENTS.tft
	o=$(dirname "$BIN")
	exe=$o/bench/bench_viewport
	make -j2 O="$o" "$exe" >/dev/null || { emit "\"bench\":\"viewport_all\",\"error\":\"make $exe failed\""; return; }
	if ! "$exe" --session "$session" --events "$VIEWPORT_EVENTS" >"$WORK/cmd.out" 2>"$WORK/cmd.err"; then
		emit "\"bench\":\"viewport_all\",\"error\":\"$(errmsg)\""
		return
	fi
	emit_lines "viewport_$VIEWPORT_EVENTS" "$WORK/cmd.out" '"bench":"viewport_(all|concurrency)"'
}

bench_static() { # the static export's engine against the server, same queries (bench/bench_static.mjs)
	local label f s
	for label in vllm_decode resnet50; do
		case $label in
		vllm_decode) f=$DATA/tracelens/inference/vllm_decode_full/graph_capture_rank_0.1773709742341309550.pt.trace.json.gz ;;
		resnet50) f=$DATA/kineto/tb_plugin_samples/resnet50_num_workers_0/worker0.pt.trace.json.gz ;;
		esac
		[ -f "$f" ] || { emit "\"input\":\"$label\",\"bench\":\"static_open\",\"error\":\"missing $f\""; continue; }
		s=$WORK/static-$label.tft
		[ -s "$s" ] || "$BIN" import "$f" -o "$s" -q >/dev/null
		if ! node bench/bench_static.mjs "$BIN" "$s" >"$WORK/cmd.out" 2>"$WORK/cmd.err"; then
			emit "\"input\":\"$label\",\"bench\":\"static_open\",\"error\":\"$(errmsg)\""
			continue
		fi
		while read -r line; do
			line=${line#\{}
			emit "\"input\":\"$label\",${line%\}}"
		done <"$WORK/cmd.out"
	done
}

bench_stats() { # stats by name on a generated 10M-event session: stored statistics vs a scan (bench/bench_stats.c)
	local lib exe=$WORK/bench_stats session=$WORK/stats-$STATS_EVENTS.tft
	lib=$(dirname "$BIN")/libtftracer.a
	[ -f "$lib" ] || make -j2 O="$(dirname "$BIN")" "$lib" >/dev/null
	if [ ! -x "$exe" ] || [ bench/bench_stats.c -nt "$exe" ] || [ "$lib" -nt "$exe" ]; then
		cc -O2 -std=c11 -D_GNU_SOURCE -Iinclude -Isrc -o "$exe" bench/bench_stats.c "$lib" \
			-lsqlite3 -lzstd -lz -lpthread -lm -lmicrohttpd
	fi
	# the session is written by this build (its statistics' format is this build's)
	[ "$lib" -nt "$session" ] && rm -f "$session"
	if ! "$exe" --session "$session" --events "$STATS_EVENTS" >"$WORK/cmd.out" 2>"$WORK/cmd.err"; then
		emit "\"bench\":\"stats_whole\",\"input\":\"stats_$STATS_EVENTS\",\"error\":\"$(errmsg)\""
		return
	fi
	emit_lines "stats_$STATS_EVENTS" "$WORK/cmd.out"
}

bench_advise() { # tftracer advise on a generated 10M-event GPU training session (bench/bench_advise.c)
	local lib exe=$WORK/bench_advise session=$WORK/advise-$ADVISE_EVENTS.tft
	lib=$(dirname "$BIN")/libtftracer.a
	[ -f "$lib" ] || make -j2 O="$(dirname "$BIN")" "$lib" >/dev/null
	if [ ! -x "$exe" ] || [ bench/bench_advise.c -nt "$exe" ] || [ "$lib" -nt "$exe" ]; then
		cc -O2 -std=c11 -D_GNU_SOURCE -Iinclude -Isrc -o "$exe" bench/bench_advise.c "$lib" \
			-lsqlite3 -lzstd -lz -lpthread -lm -lmicrohttpd
	fi
	# the session is written by this build (its format is this build's)
	[ "$lib" -nt "$session" ] && rm -f "$session"
	if ! "$exe" --session "$session" --events "$ADVISE_EVENTS" --gen-only >"$WORK/cmd.out" 2>"$WORK/cmd.err"; then
		emit "\"bench\":\"advise\",\"input\":\"advise_$ADVISE_EVENTS\",\"error\":\"$(errmsg)\""
		return
	fi
	# the CLI, best of BENCH_REPS (page cache warm after the first)
	local best="" bcpu="" brss="" i
	for i in $(seq "$REPS"); do
		if ! measure "$BIN" advise "$session" --json; then
			emit "\"bench\":\"advise\",\"input\":\"advise_$ADVISE_EVENTS\",\"error\":\"$(errmsg)\""
			return
		fi
		if [ -z "$best" ] || awk -v a="$WALL" -v b="$best" 'BEGIN { exit !(a < b) }'; then
			best=$WALL bcpu=$CPU brss=$RSS_MB
		fi
	done
	local nf
	nf=$("$PY" -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["findings"]))' "$WORK/cmd.out" 2>/dev/null || echo "")
	emit "\"bench\":\"advise\",\"input\":\"advise_$ADVISE_EVENTS\",\"events\":$ADVISE_EVENTS,\"seconds\":$best,\"cpu_s\":$bcpu,\"max_rss_mb\":$brss,\"reps\":$REPS,\"findings\":${nf:-null}"
	if "$exe" --session "$session" >"$WORK/cmd.out" 2>"$WORK/cmd.err"; then
		emit_lines "advise_$ADVISE_EVENTS" "$WORK/cmd.out"
	else
		emit "\"bench\":\"advise_lib\",\"input\":\"advise_$ADVISE_EVENTS\",\"error\":\"$(errmsg)\""
	fi
}

bench_runtime() { # ns per recorded event against a bare loop and LTTng-UST (bench/bench_runtime.c)
	local o exe
	o=$(dirname "$BIN")
	exe=$o/bench/bench_runtime
	make -j2 O="$o" "$exe" >/dev/null || { emit "\"bench\":\"runtime\",\"error\":\"make $exe failed\""; return; }
	rm -f "$WORK/runtime.jsonl"
	if ! BENCH_JSON=$WORK/runtime.jsonl "$exe" >"$WORK/cmd.out" 2>"$WORK/cmd.err"; then
		emit "\"bench\":\"runtime\",\"error\":\"$(errmsg)\""
		return
	fi
	emit_lines runtime "$WORK/runtime.jsonl"
	rm -f "$WORK/runtime.jsonl"
}

bench_store() { # the store alone: write, then reopen and query (bench/bench_store.c)
	local lib exe=$WORK/bench_store out=$WORK/bench-store.tft
	lib=$(dirname "$BIN")/libtftracer.a
	[ -f "$lib" ] || make -j2 O="$(dirname "$BIN")" "$lib" >/dev/null
	if [ ! -x "$exe" ] || [ bench/bench_store.c -nt "$exe" ] || [ "$lib" -nt "$exe" ]; then
		cc -O2 -std=c11 -D_GNU_SOURCE -Iinclude -Isrc -o "$exe" bench/bench_store.c "$lib" \
			-lsqlite3 -lzstd -lz -lpthread -lm
	fi
	rm -f "$out"
	if ! "$exe" -n "$STORE_SLICES" -o "$out" >"$WORK/cmd.out" 2>"$WORK/cmd.err"; then
		emit "\"bench\":\"store_write\",\"input\":\"gen_store\",\"error\":\"$(errmsg)\""
		return
	fi
	emit_lines "gen_store_${STORE_SLICES}" "$WORK/cmd.out"
	rm -f "$out" "$out"-*
}

echo "# tftracer bench: $BIN ($COMMIT$DIRTY) on $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo) RAM, load $(cut -d' ' -f1-3 /proc/loadavg)"
for what in $INPUTS; do
	case $what in
	mtia)
		f=$(prepare_mtia)
		if [ -n "$f" ]; then bench_input mtia "$f"; else echo "# mtia trace not found under $DATA" >&2; fi
		;;
	vllm | sglang)
		if [ "$what" = vllm ]; then
			f=$(prepare_real tracelens/inference/vllm_decode_full/graph_capture_rank_0.1773709742341309550.pt.trace.json.gz vllm_decode.json)
		else
			f=$(prepare_real tracelens/inference/sglang_decode/sglang_Qwen3-8B_decode.json.gz sglang_decode.json)
		fi
		if [ -n "$f" ]; then bench_input "${what}_decode" "$f"; else echo "# $what trace not found under $DATA" >&2; fi
		;;
	gen)
		f=$(prepare_gen)
		bench_input "gen_${SIZE_MB}MB" "$f"
		;;
	gen_stack)
		f=$(prepare_gen --with-stack)
		bench_input "gen_stack_${SIZE_MB}MB" "$f"
		;;
	xspace)
		f=$(prepare_xspace)
		bench_input "xspace_${XSPACE_MB}MB" "$f" nopy
		;;
	xspace_real)
		f=$(prepare_xspace_real)
		if [ -n "$f" ]; then bench_input xspace_real_x50 "$f" nopy; else echo "# real XSpace not found under $DATA" >&2; fi
		;;
	runmeta)
		f=$(prepare_runmeta)
		bench_input "runmeta_${RUNMETA_MB}MB" "$f" nopy
		;;
	store) bench_store ;;
	stats) bench_stats ;;
	advise) bench_advise ;;
	viewport) bench_viewport ;;
	static) bench_static ;;
	runtime) bench_runtime ;;
	*) echo "bench: unknown input '$what'" >&2 ;;
	esac
done

"$PY" - "$ROWS" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print()
print("%-16s %-18s %10s %10s %10s %10s %s" % ("input", "bench", "MB", "seconds", "MB/s", "cpu MB/s",
                                                "other"))
for r in rows:
    other = ", ".join("%s=%s" % (k, r[k]) for k in ("case", "min", "median", "p50_ms", "p99_ms",
                      "pan_p99_ms", "qps", "mode", "reps", "max_rss_mb", "ratio", "cpu_ratio",
                      "tft_bytes_per_slice", "bytes_per_slice", "events_per_s", "open_s",
                      "first_window_s", "overview_s", "full_scan_events_per_s",
                      "json_bytes_per_slice", "slices", "events", "open_ms", "engine_p50_ms",
                      "server_p50_ms", "differ", "error", "skipped") if k in r)
    mb = r.get("input_mb", r.get("output_mb", ""))
    print("%-16s %-18s %10s %10s %10s %10s %s" % (r.get("input", ""), r["bench"], mb,
                                                  r.get("seconds", ""), r.get("mb_per_s", ""),
                                                  r.get("cpu_mb_per_s", ""), other))
EOF
rm -f "$ROWS" "$WORK/cmd.out" "$WORK/cmd.err" "$WORK/info.json"
echo "# results appended to $RESULTS"
