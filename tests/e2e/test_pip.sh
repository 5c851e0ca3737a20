#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `pip install --no-build-isolation .` offline (docs/packaging.md): in a venv made
# with --system-site-packages from /usr/bin/python3 (Debian's setuptools and
# wheel are seen there), with --no-index so that nothing is fetched. Then, from
# another folder, the venv's python imports the module from the venv, at the
# header's version, records 3 steps with TracingServer and the CLI reads them
# back; `pip uninstall` removes it again.
# Output: one line per check (PASS name / FAIL name (reason)).
# Env: TFT_BUILD (build dir with the CLI, default build).
set -uo pipefail

cd "$(dirname "$0")/../.." || exit 2
ROOT=$(pwd)
B=${TFT_BUILD:-build}
case $B in /*) ;; *) B=$ROOT/$B ;; esac
nfail=0
pass() { echo "PASS pip/$1"; }
fail() {
	echo "FAIL pip/$1 ($2)"
	nfail=$((nfail + 1))
}

W=$B/pip-test
rm -rf "$W"
mkdir -p "$W/elsewhere"
trap 'rm -rf "$W"' EXIT
VERSION=$(sed -n 's/^#define TFT_VERSION_STRING "\(.*\)"$/\1/p' include/tftracer/tftracer.h)

if ! /usr/bin/python3 -m venv --system-site-packages "$W/venv" >"$W/venv.log" 2>&1; then
	fail venv "python3 -m venv: $(tail -c 300 "$W/venv.log") (python3-venv)"
	exit 1
fi
if PIP_CONFIG_FILE=/dev/null timeout 1200 "$W/venv/bin/pip" install --no-build-isolation --no-index --no-deps \
	--no-cache-dir . >"$W/pip.log" 2>&1; then
	pass install
else
	fail install "$(grep -m2 -iE 'error' "$W/pip.log" | tr '\n' ' ' | cut -c1-400)"
	exit 1
fi

out=$(cd "$W/elsewhere" && timeout 120 "$W/venv/bin/python" -c "
import sys, tftracer
s = tftracer.TracingServer(port=0, session=sys.argv[1])
for i in range(3):
    with s.step('train'):
        sum(range(100000))
s.stop()
print(tftracer.__file__)
print(tftracer.__version__)
" "$W/pip.tft" 2>"$W/py.err")
rc=$?
p=""
if [ "$rc" -ne 0 ]; then
	p="exit $rc: $(tail -c 300 "$W/py.err")"
else
	file=$(echo "$out" | sed -n 1p)
	[[ $file == "$W/venv/"* ]] || p+="imported $file, not the venv's; "
	[ "$(echo "$out" | sed -n 2p)" = "$VERSION" ] || p+="__version__ $(echo "$out" | sed -n 2p) != $VERSION; "
	if [ -x "$B/tftracer" ]; then
		steps=$("$B/tftracer" info "$W/pip.tft" --json 2>/dev/null | /usr/bin/python3 -c "import json, sys; print(json.load(sys.stdin)['steps'])")
		[ "$steps" = 3 ] || p+="the CLI reads ${steps:-no} steps from the session, expected 3; "
	else
		p+="no CLI $B/tftracer to read the session with; "
	fi
fi
if [ -z "$p" ]; then pass module; else fail module "$p"; fi

if "$W/venv/bin/pip" uninstall -y tftracer >"$W/uninstall.log" 2>&1 &&
	! (cd "$W/elsewhere" && "$W/venv/bin/python" -c 'import tftracer' 2>/dev/null) &&
	[ -z "$(find "$W/venv" -path '*tftracer*' | head -n 1)" ]; then
	pass uninstall
else
	fail uninstall "$(tail -c 200 "$W/uninstall.log"); left: $(find "$W/venv" -path '*tftracer*' | head -n 3 | tr '\n' ' ')"
fi
[ "$nfail" -eq 0 ]
