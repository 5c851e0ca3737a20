#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Check that libtftracer.a defines no global symbol outside the tft_ name space:
# users link it into their programs, so an unprefixed global (a helper shared
# by two files of one module) could clash with theirs. Usage:
# tools/check_symbols.sh [BUILD_DIR] (default build). Prints one line per
# symbol, then "symbols ok" or the count; exits 1 on any, 2 without the archive.
# Run by `make check-symbols` and by tests/run.sh (the test "symbols").
set -u
cd "$(dirname "$0")/.." || exit 2
a=${1:-build}/libtftracer.a
[ -f "$a" ] || { echo "no $a: build first"; exit 2; }
nm -g --defined-only "$a" 2>/dev/null | awk '
NF == 3 && $3 !~ /^(tft_|_)/ { print "unprefixed global: " $3 " (" member ")"; bad++ }
/:$/ { member = $1; sub(/:$/, "", member) }
END { if (bad) { print bad " unprefixed global symbol(s)"; exit 1 } print "symbols ok" }'
