#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# make demo: the main job. Trains a small PyTorch MLP on the CPU under
# tftracer.TracingServer and serves the web UI at http://127.0.0.1:9999 until
# Ctrl-C (examples/pytorch/train_mlp.py; the Runs page shows the steps live,
# "Trace" records a step's ops into the session).
#   scripts/demo.sh [--port N] [--steps N] [--trace-every K]
#   scripts/demo.sh --import   the previous demo: import a real PyTorch (Kineto)
#                              trace, print its summary and op statistics
# Env: TFT_BUILD_DIR (build), PYTHON (/usr/bin/python3), TFT_DATA (../shared/data).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${TFT_BUILD_DIR:-build}
BIN=${TFT_BIN:-$BUILD/tftracer}
PYTHON=${PYTHON:-/usr/bin/python3}
DATA=${TFT_DATA:-../shared/data}

demo_import() {
	local IN="$DATA/hta/trace_diff/control/control.json.gz"
	[ -f "$IN" ] || IN="$DATA/kineto/tb_plugin_samples/resnet50_num_workers_0/worker0.pt.trace.json.gz"
	local OUT=${DEMO_OUT:-$BUILD/demo.tft}
	rm -f "$OUT"
	echo "== tftracer import $IN -o $OUT"
	local start end
	start=$(date +%s.%N)
	"$BIN" import "$IN" -o "$OUT"
	end=$(date +%s.%N)
	printf "imported in %.2f s\n\n" "$(echo "$end - $start" | bc -l 2>/dev/null || echo 0)"
	echo "== tftracer info $OUT"
	"$BIN" info "$OUT"
	echo
	echo "== tftracer stats $OUT --top 15"
	"$BIN" stats "$OUT" --top 15
	echo
	echo "== tftracer export $OUT -f chrome -o $BUILD/demo.json"
	"$BIN" export "$OUT" -f chrome -o "$BUILD/demo.json"
	ls -l "$BUILD/demo.json"
}

if [ "${1:-}" = "--import" ]; then
	demo_import
	exit 0
fi

PORT=9999
STEPS=0 # 0: train until Ctrl-C
EXTRA=()
while [ $# -gt 0 ]; do
	case $1 in
	--port) PORT=$2; shift 2 ;;
	--steps) STEPS=$2; shift 2 ;;
	--trace-every) EXTRA+=(--trace-every "$2"); shift 2 ;;
	-h | --help) sed -n '2,12p' "$0"; exit 0 ;;
	*) echo "demo.sh: unknown option $1 (try --help)" >&2; exit 2 ;;
	esac
done

if [ ! -f "$BUILD/python/tftracer/__init__.py" ]; then
	echo "demo.sh: $BUILD/python/tftracer is not built (make)" >&2
	exit 1
fi
if ! "$PYTHON" -c 'import torch' 2>/dev/null; then
	echo "demo.sh: $PYTHON cannot import torch (apt-get install python3-torch);" \
		"running the import demo instead" >&2
	demo_import
	exit 0
fi
mkdir -p "$BUILD/demo"
SESSION="$BUILD/demo/train-$(date +%Y%m%d-%H%M%S).tft"
echo "== training examples/pytorch/train_mlp.py under tftracer (Ctrl-C to stop)"
echo "== session file: $SESSION"
# With --steps N the job trains N steps, then keeps serving until Ctrl-C.
ARGS=(--port "$PORT" --session "$SESSION" --steps "$STEPS" "${EXTRA[@]}")
[ "$STEPS" != 0 ] && ARGS+=(--serve)
PYTHONPATH="$BUILD/python${PYTHONPATH:+:$PYTHONPATH}" exec "$PYTHON" examples/pytorch/train_mlp.py "${ARGS[@]}"
