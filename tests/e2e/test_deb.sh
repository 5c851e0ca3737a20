#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Debian packages, built and installed in clean Debian 12 chroots
# (docs/packaging.md). Slow (about 15 minutes the first time: debootstrap, the
# build dependencies, two builds' worth of compiling) and needs the Debian
# mirror, so `make test` runs it only when asked: TFT_DEB_TEST=1.
#   base          debootstrap --variant=minbase bookworm into $B/deb/base, kept
#                 as $B/deb/bookworm-minbase.tar for the next run
#   build-nocheck in a copy of the base: `apt-get build-dep -P nocheck ./` installs
#                 all that the build gets (nothing else is there), then
#                 DEB_BUILD_OPTIONS=nocheck dpkg-buildpackage -us -uc -b -Pnocheck
#                 builds tftracer and python3-tftracer without running a test
#   build-tests   `apt-get build-dep ./` adds the test dependencies; the build's
#                 test step (debian/rules override_dh_auto_test: unit tests and
#                 the install test) passes there, with the real traces copied in
#   lintian       no error on the packages (warnings are listed)
#   chroot-*      a second, clean copy of the base: apt-get installs both .debs
#                 (their Depends come from the mirror), then `tftracer import`,
#                 `tftracer info`, `python3 -c "import tftracer"` and a
#                 TracingServer session read back by the CLI, `tftracer record`
#                 with the installed preload library; both packages
#                 purge without leaving a file
#
# Output: one line per check (PASS name / FAIL name (reason) / SKIP name (reason)).
# Env: TFT_DEB_TEST=1 (else one SKIP), TFT_BUILD (build dir, default build),
# TFT_DATA (../shared/data), TFT_DEB_MIRROR (the host's Debian mirror),
# TFT_DEB_FRESH=1 (debootstrap again instead of reusing the saved base).
set -uo pipefail

cd "$(dirname "$0")/../.." || exit 2
ROOT=$(pwd)
B=${TFT_BUILD:-build}
case $B in /*) ;; *) B=$ROOT/$B ;; esac
DATA=${TFT_DATA:-$ROOT/../shared/data}
TRACE_REL=hta/critical_path/simple_add/benchmark_result_493459_1694039959_trace.json.gz
nfail=0

pass() { echo "PASS deb/$1"; }
fail() {
	echo "FAIL deb/$1 ($2)"
	nfail=$((nfail + 1))
}
skip() { echo "SKIP deb/$1 ($2)"; }

if [ "${TFT_DEB_TEST:-0}" != 1 ]; then
	skip packages "set TFT_DEB_TEST=1 to build the .debs and install them in a Debian 12 chroot (slow, needs the Debian mirror)"
	exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
	skip packages "needs root (debootstrap, chroot)"
	exit 0
fi
for tool in debootstrap dpkg-buildpackage lintian; do
	if ! command -v "$tool" >/dev/null; then
		fail packages "$tool is not installed (scripts/install-deps.sh installs it)"
		exit 1
	fi
done

VERSION=$(sed -n 's/^#define TFT_VERSION_STRING "\(.*\)"$/\1/p' include/tftracer/tftracer.h)
ARCH=$(dpkg --print-architecture)
W=$B/deb
LOG=$W/logs
BASE_TAR=$W/bookworm-minbase.tar
MIRROR=${TFT_DEB_MIRROR:-$(sed -n 's/^URIs: *\(http[^ ]*\/debian\)$/\1/p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n 1)}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
mkdir -p "$LOG"

MOUNTED=()
cleanup() {
	for m in "${MOUNTED[@]}"; do umount "$m" 2>/dev/null; done
}
trap cleanup EXIT

# new_chroot DIR: a fresh copy of the base, /proc mounted, the package lists read
new_chroot() {
	rm -rf "$1" && mkdir -p "$1" && tar -C "$1" -xf "$BASE_TAR" || return 1
	cp /etc/resolv.conf "$1/etc/resolv.conf" 2>/dev/null
	mount -t proc proc "$1/proc" && MOUNTED+=("$1/proc") || return 1
	chroot "$1" apt-get update -qq
}
in_chroot() { # DIR LOGNAME COMMAND: runs COMMAND under sh in DIR, output to the log
	local dir=$1 log=$LOG/$2.log
	shift 2
	chroot "$dir" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 \
		DEBIAN_FRONTEND=noninteractive sh -c "$*" >"$log" 2>&1
}
last() { tail -n "${2:-3}" "$LOG/$1.log" 2>/dev/null | tr '\n' ' ' | cut -c1-400; }

# ---- base ----------------------------------------------------------------------------------
if [ "${TFT_DEB_FRESH:-0}" = 1 ] || [ ! -s "$BASE_TAR" ]; then
	rm -rf "$W/base" "$BASE_TAR"
	if debootstrap --variant=minbase bookworm "$W/base" "$MIRROR" >"$LOG/debootstrap.log" 2>&1 &&
		chroot "$W/base" apt-get clean && tar -C "$W/base" -cf "$BASE_TAR.tmp" . && mv "$BASE_TAR.tmp" "$BASE_TAR"; then
		pass base
	else
		fail base "debootstrap bookworm from $MIRROR: $(last debootstrap)"
		exit 1
	fi
	rm -rf "$W/base"
else
	pass base
fi

# ---- build without tests, with only what Build-Depends names ---------------------------------
BC=$W/chroot-build
SRC=/src/tftracer-$VERSION
if ! new_chroot "$BC" >"$LOG/build-chroot.log" 2>&1; then
	fail build-nocheck "cannot set up $BC: $(last build-chroot)"
	exit 1
fi
mkdir -p "$BC$SRC"
# the tree as git sees it (committed, changed and new files; no build output)
if git rev-parse --git-dir >/dev/null 2>&1; then
	git ls-files -co --exclude-standard -z | xargs -0 cp --parents -t "$BC$SRC"
else
	tar -C "$ROOT" --exclude='./build*' --exclude=./.git -cf - . | tar -C "$BC$SRC" -xf -
fi
if ! in_chroot "$BC" builddep-nocheck "cd $SRC && apt-get build-dep -y -q -P nocheck ./"; then
	fail build-nocheck "apt-get build-dep -P nocheck ./: $(last builddep-nocheck)"
	exit 1
fi
if ! in_chroot "$BC" build-nocheck "cd $SRC && DEB_BUILD_OPTIONS='nocheck parallel=${TFT_JOBS:-2}' dpkg-buildpackage -us -uc -b -Pnocheck"; then
	fail build-nocheck "dpkg-buildpackage: $(grep -m2 -iE 'error|unmet' "$LOG/build-nocheck.log" | tr '\n' ' ' | cut -c1-300) (log $LOG/build-nocheck.log)"
	exit 1
fi
DEBS=("$BC/src/tftracer_${VERSION}_$ARCH.deb" "$BC/src/python3-tftracer_${VERSION}_$ARCH.deb")
p=""
for d in "${DEBS[@]}"; do [ -f "$d" ] || p+="no $(basename "$d"); "; done
grep -qE '^(PASS|FAIL) |tests/run.sh' "$LOG/build-nocheck.log" && p+="tests ran under nocheck; "
if [ -z "$p" ]; then pass build-nocheck; else fail build-nocheck "$p"; fi

# ---- the build's test step, with the test dependencies --------------------------------------------
if ! in_chroot "$BC" builddep-check "cd $SRC && apt-get build-dep -y -q ./"; then
	fail build-tests "apt-get build-dep ./: $(last builddep-check)"
else
	if [ -d "$DATA" ]; then
		mkdir -p "$BC/src/shared" && cp -r "$DATA" "$BC/src/shared/data"
	fi
	in_chroot "$BC" build-tests "cd $SRC && DEB_BUILD_OPTIONS='parallel=${TFT_JOBS:-2}' debian/rules override_dh_auto_test"
	rc=$?
	summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$LOG/build-tests.log" | tail -n 1)
	if [ "$rc" -eq 0 ] && [[ $summary == *" 0 failed"* ]] && ! grep -q '^FAIL ' "$LOG/build-tests.log"; then
		pass build-tests
	else
		fail build-tests "exit $rc, '$summary': $(grep -m3 '^FAIL ' "$LOG/build-tests.log" | tr '\n' ' ' | cut -c1-300) (log $LOG/build-tests.log)"
	fi
fi

# ---- lintian ----------------------------------------------------------------------------------------
lintian --pedantic "$BC/src/tftracer_${VERSION}_$ARCH.changes" >"$LOG/lintian.log" 2>&1
rc=$? # 0 clean, 1 tags of error level, 2 lintian itself failed
errors=$(grep -c '^E: ' "$LOG/lintian.log")
warnings=$(grep '^W: ' "$LOG/lintian.log" | cut -d' ' -f2- | tr '\n' ';' | cut -c1-300)
if [ "$rc" -ge 2 ]; then
	fail lintian "lintian exit $rc: $(last lintian)"
elif [ "$errors" -eq 0 ]; then
	pass lintian
	[ -z "$warnings" ] || echo "# lintian warnings: $warnings"
else
	fail lintian "$errors errors: $(grep -m3 '^E: ' "$LOG/lintian.log" | tr '\n' ' ' | cut -c1-300)"
fi

# ---- install in a clean chroot, use, purge ---------------------------------------------------------------
IC=$W/chroot-install
if ! new_chroot "$IC" >"$LOG/install-chroot.log" 2>&1; then
	fail chroot-install "cannot set up $IC: $(last install-chroot)"
	exit 1
fi
mkdir -p "$IC/tmp/debs" "$IC/tmp/t"
cp "${DEBS[@]}" "$IC/tmp/debs/"
before=$(chroot "$IC" sh -c 'find / -xdev \( -path /proc -o -path /tmp -o -path /var \) -prune -o -print' | sort)
if in_chroot "$IC" install "apt-get install -y -q --no-install-recommends /tmp/debs/*.deb"; then
	pass chroot-install
else
	fail chroot-install "apt-get install: $(last install)"
	exit 1
fi
if [ -f "$DATA/$TRACE_REL" ]; then
	cp "$DATA/$TRACE_REL" "$IC/tmp/t/trace.json.gz"
	want=$(/usr/bin/python3 -c "import gzip, json, sys; print(sum(e.get('ph') == 'X' for e in json.load(gzip.open(sys.argv[1]))['traceEvents']))" "$DATA/$TRACE_REL")
	if in_chroot "$IC" import "cd /tmp/t && tftracer import trace.json.gz -o run.tft"; then
		pass chroot-import
	else
		fail chroot-import "$(last import)"
	fi
	if in_chroot "$IC" info "tftracer info /tmp/t/run.tft && tftracer info /tmp/t/run.tft --json | grep '\"slices\": $want,'"; then
		pass chroot-info
	else
		fail chroot-info "no '\"slices\": $want' (X events of the trace): $(last info 4)"
	fi
	# the standalone page carries the query engine the package built (WebAssembly, base64)
	if in_chroot "$IC" html "cd /tmp/t && tftracer export run.tft -f html -o run.html -q && grep -c 'id=\"tft-wasm\">' run.html && sed -n '/id=\"tft-wasm\">/{n;p;q}' run.html | grep -q '^AGFzbQ'"; then
		pass chroot-export-html
	else
		fail chroot-export-html "no query engine (a line of base64 starting AGFzbQ, the wasm magic) in the page: $(last html 4)"
	fi
else
	fail chroot-import "missing $DATA/$TRACE_REL"
fi
if in_chroot "$IC" python "cd /tmp && python3 -c 'import tftracer' && python3 -c '
import tftracer
s = tftracer.TracingServer(port=0, session=\"/tmp/t/py.tft\")
for i in range(2):
    with s.step(\"train\"):
        pass
s.stop()
print(tftracer.__file__, tftracer.__version__)
' && tftracer info /tmp/t/py.tft --json | grep '\"steps\": 2,' && tftracer --version | grep -x 'tftracer $VERSION'"; then
	pass chroot-python
else
	fail chroot-python "$(last python 4)"
fi
# record finds the installed preload library (/usr/lib/<multiarch>/libtftracer-preload.so)
if in_chroot "$IC" record "cd /tmp/t && tftracer record -o rec.tft -- true && tftracer info rec.tft" &&
	! grep -q 'no libtftracer-preload.so' "$LOG/record.log"; then
	pass chroot-record
else
	fail chroot-record "$(last record 3)"
fi
in_chroot "$IC" purge "apt-get purge -y -q tftracer python3-tftracer && apt-get autoremove --purge -y -q"
after=$(chroot "$IC" sh -c 'find / -xdev \( -path /proc -o -path /tmp -o -path /var \) -prune -o -print' | sort)
left=$(comm -13 <(echo "$before") <(echo "$after") | head -n 5 | tr '\n' ' ')
if [ -z "$left" ] && ! chroot "$IC" sh -c 'command -v tftracer' >/dev/null; then
	pass chroot-purge
else
	fail chroot-purge "left after purge: ${left:-tftracer still on PATH} ($(last purge 2))"
fi

[ "$nfail" -eq 0 ]
