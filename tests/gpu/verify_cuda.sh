#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Verify the CUDA interceptor (src/intercept/cupti.c) on a machine with an
# NVIDIA GPU, CUDA + CUPTI and PyTorch (not part of `make test`: no GPU there).
#
#   tests/gpu/verify_cuda.sh            from the repository root; about 2-4 minutes
#
# 1. builds (with the CUPTI headers of $CUDA_HOME, default /usr/local/cuda) and
#    checks that the preload library has the CUDA and NVTX injection entry points;
# 2. runs tests/gpu/train_gpu.py under torch.profiler (CUDA activities): the
#    reference kernel, memcpy and memset counts of 5 training steps;
# 3. runs the same program with the library as CUDA and NVTX injection
#    (LD_PRELOAD, CUDA_INJECTION64_PATH, NVTX_INJECTION64_PATH, TFT_SESSION) and
#    compares (tests/gpu/check_cuda.py): the same kernels, memcpys and memsets
#    in the loop, each with the NVTX range it was launched in as `op`, a launch
#    flow each, nothing dropped; API calls as slices; the clock offset stated;
# 4. for information: the same under `tftracer record` (the PyTorch integration
#    on: tracing off until asked, then with --trace-next 2, where torch.profiler
#    and the CUPTI interceptor meet).
# Everything goes to $OUT (default /tmp/tft-gpu-verify); the exit status is 0
# when steps 1-3 pass.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/tft-gpu-verify}
PY=${PY:-python3}
B=${BUILD:-build}
rm -rf "$OUT" && mkdir -p "$OUT"
fail=0
echo "== machine"
nvidia-smi -L 2>&1 | head -4
$PY -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.is_available())'
echo "== 1. build"
if ! make -j"$(nproc)" O="$B" ${CUDA_HOME:+CUDA_HOME=$CUDA_HOME} >"$OUT/build.log" 2>&1; then
	echo "FAIL build (see $OUT/build.log)"; tail -20 "$OUT/build.log"; exit 1
fi
grep -E "^preload:" "$OUT/build.log"
if nm -D --defined-only "$B/libtftracer-preload.so" | grep -qw InitializeInjection &&
	nm -D --defined-only "$B/libtftracer-preload.so" | grep -qw InitializeInjectionNvtx2; then
	echo "PASS the library has InitializeInjection and InitializeInjectionNvtx2"
else
	echo "FAIL built without CUPTI (no InitializeInjection): is \$CUDA_HOME/include/cupti.h there?"; exit 1
fi
LIB=$(readlink -f "$B/libtftracer-preload.so")
echo "== 2. torch.profiler"
$PY tests/gpu/train_gpu.py --mode profiler --steps 5 --out "$OUT/torch.json" || { echo "FAIL the program under torch.profiler"; exit 1; }
echo "== 3. the library as CUDA and NVTX injection"
LD_PRELOAD=$LIB CUDA_INJECTION64_PATH=$LIB NVTX_INJECTION64_PATH=$LIB TFT_SESSION=$OUT/cupti.tft \
	$PY tests/gpu/train_gpu.py --mode nvtx --steps 5 2>"$OUT/cupti.stderr"
rc=$?
cat "$OUT/cupti.stderr"
if [ $rc -ne 0 ] || [ ! -f "$OUT/cupti.tft" ]; then
	echo "FAIL the program under the library: exit $rc"; fail=1
else
	"$B/tftracer" info "$OUT/cupti.tft" | head -30
	$PY tests/gpu/check_cuda.py "$OUT/torch.json" "$OUT/cupti.tft" "$B/tftracer" || fail=1
fi
echo "== 4. (information) tftracer record"
"$B/tftracer" record -o "$OUT/record.tft" --port 0 -- $PY tests/gpu/train_gpu.py --mode nvtx --steps 5 \
	>"$OUT/record.out" 2>&1
echo "record, tracing off (exit $?):"; tail -5 "$OUT/record.out"
"$B/tftracer" info "$OUT/record.tft" 2>&1 | sed -n 4,20p
$PY - "$OUT/record.tft" <<'EOF'
import sqlite3, sys
m = dict(sqlite3.connect(sys.argv[1]).execute("SELECT key, value FROM meta").fetchall())
print("meta:", {k: v for k, v in m.items() if k.startswith("cuda")})
EOF
"$B/tftracer" record -o "$OUT/record-traced.tft" --port 0 --trace-next 2 -- $PY tests/gpu/train_gpu.py --mode nvtx \
	--steps 5 >"$OUT/record-traced.out" 2>&1
echo "record --trace-next 2 (torch.profiler and CUPTI together; exit $?):"; tail -8 "$OUT/record-traced.out"
"$B/tftracer" info "$OUT/record-traced.tft" 2>&1 | sed -n 4,24p
$PY - "$OUT/record-traced.tft" <<'EOF'
import sqlite3, sys
m = dict(sqlite3.connect(sys.argv[1]).execute("SELECT key, value FROM meta").fetchall())
print("meta:", {k: v for k, v in m.items() if k.startswith("cuda")})
EOF
echo "== result: $([ $fail -eq 0 ] && echo PASS || echo FAIL) (files in $OUT)"
exit $fail
