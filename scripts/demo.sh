#!/usr/bin/env bash
# make demo: import a real PyTorch (Kineto) trace from ../shared/data into a
# session file, then print its summary and op statistics.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${TFT_BIN:-build/tftracer}
DATA=${TFT_DATA:-../shared/data}
IN="$DATA/hta/trace_diff/control/control.json.gz"
[ -f "$IN" ] || IN="$DATA/kineto/tb_plugin_samples/resnet50_num_workers_0/worker0.pt.trace.json.gz"
OUT=${DEMO_OUT:-build/demo.tft}

echo "== tftracer import $IN -o $OUT"
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
echo "== tftracer export $OUT -f chrome -o build/demo.json"
"$BIN" export "$OUT" -f chrome -o build/demo.json
ls -l build/demo.json
