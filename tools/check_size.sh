#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Check that the C sources stay small enough to read: no file in src/ over
# 1500 lines, no function over 150 (a function runs from its definition's
# first line at column 0 to the closing "}" at column 0, the house style's
# layout). Prints one line per file or function over the limit, then
# "sizes ok" or the count; exits 1 on any. Run by `make check-size` and by
# tests/run.sh (the test "sizes"). Limits: TFT_MAX_FILE_LINES, TFT_MAX_FN_LINES.
set -u
cd "$(dirname "$0")/.." || exit 2
max_file=${TFT_MAX_FILE_LINES:-1500}
max_fn=${TFT_MAX_FN_LINES:-150}
find src -name '*.c' -o -name '*.h' | LC_ALL=C sort | xargs awk -v maxf="$max_file" -v maxfn="$max_fn" '
FNR == 1 { if (prev != "" && plines > maxf) { print "too long: " prev ": " plines " lines (max " maxf ")"; bad++ }
           infn = 0; cand = "" }
{ prev = FILENAME; plines = FNR }
/^[A-Za-z_]/ && !/^\}/ { cand = $0; candline = FNR }
/^\{/ { if (cand != "") { start = candline; name = cand; infn = 1 } next }
/^\}/ { if (infn) { len = FNR - start + 1
		if (len > maxfn) { sub(/\(.*/, "", name); n = split(name, w, /[ *]+/)
			print "too long: " FILENAME ":" start ": " w[n] "() " len " lines (max " maxfn ")"; bad++ }
		infn = 0 } }
END { if (plines > maxf) { print "too long: " prev ": " plines " lines (max " maxf ")"; bad++ }
      if (bad) { print bad " over the size limits"; exit 1 } print "sizes ok" }'
