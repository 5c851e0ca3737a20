#!/usr/bin/env bash
# Install the Debian packages that building, testing and the demo need.
# Idempotent: packages already present are not touched, apt-get update runs
# only when something is missing.
set -euo pipefail

PKGS=(
	build-essential pkg-config bc time
	clang libclang-rt-14-dev          # libFuzzer + sanitizers
	lld wasi-libc libclang-rt-14-dev-wasm32 # the static export's query engine (WebAssembly)
	libsqlite3-dev sqlite3            # session file container
	libzstd-dev zlib1g-dev            # chunk compression, gzip input
	libmicrohttpd-dev libgnutls28-dev # HTTP(S) server
	wrk openssl                       # load test, test TLS certificate
	chromium                          # browser tests (driven by playwright-core from npm)
	liblttng-ust-dev lttng-tools      # runtime benchmark peer (LTTng-UST tracepoint)
	libbabeltrace2-dev babeltrace2    # CTF (LTTng) import; babeltrace2 checks it in the tests
	python3 python3-torch python3-numpy   # real PyTorch fixtures
	python3-torchvision               # resnet18 in tests/e2e/test_model_params.py
	python3-dev python3-wheel         # the Python module (make, pip install .)
	libedit-dev                       # the tfprof> shell's line editing (tftracer prof; BSD licence)
	golang-go                         # `go tool pprof`, which reads prof's pprof output (tests)
	ocl-icd-opencl-dev ocl-icd-libopencl1 # OpenCL headers + ICD loader (the preload library's interceptor)
	pocl-opencl-icd clinfo python3-pyopencl # a real OpenCL CPU device for its tests
	libopenmpi-dev openmpi-bin        # MPI headers (the preload library's interceptor) + mpirun for its tests
	python3-venv python3-setuptools   # pip install --no-build-isolation . in a venv (tests/e2e/test_pip.sh)
	go-md2man man-db                  # man pages from docs/ (make man), checked with man/lexgrog
	debhelper dh-python dpkg-dev lintian debootstrap   # the .debs (debian/, tests/e2e/test_deb.sh)
)

# Node.js + npm for the browser tests: Debian's packages unless a Node.js
# (e.g. one whose nodejs package bundles npm) is already installed.
command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || PKGS+=(nodejs npm)

missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done

if [ "${#missing[@]}" -eq 0 ]; then
	exit 0
fi

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
# (other apt-get runs, e.g. of colleagues on the same machine, are waited for)
$SUDO apt-get -o DPkg::Lock::Timeout=600 update -qq
$SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
