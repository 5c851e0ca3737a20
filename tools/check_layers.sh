#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Check that #include "layer/..." dependencies only point down the layer stack
# (see ARCHITECTURE.md): every folder under src/ is a layer of the stack below,
# a file (src/LAYER/, and python/ for the top layer) includes only its own layer's and lower layers' headers (or the public
# include/tftracer/), never through "../", and codec has no model knowledge.
# Prints one line per violation ("layer violation: FILE:LINE: ..."), then
# "layers ok" or the count; exits 1 on any. Run by `make check-layers` and by
# tests/run.sh (the test "layers").
set -u
cd "$(dirname "$0")/.." || exit 2
order="core codec store collect runtime intercept job analyze export query server cli python wasm"

{
	# folders that are no layer of the stack
	for d in src/*/; do
		d=${d%/}
		d=${d#src/}
		case " $order " in *" $d "*) ;; *) echo "DIR $d" ;; esac
	done
	dirs=(src)
	[ -d python ] && dirs+=(python)
	grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' --include='*.c' --include='*.h' "${dirs[@]}"
} | awk -v order="$order" '
BEGIN { n = split(order, o, " "); for (i = 1; i <= n; i++) rank[o[i]] = i }
/^DIR / { print "layer violation: src/" $2 "/ is not a layer of the stack (" order ")"; bad++; next }
{
	split($0, p, ":")              # src/LAYER/FILE:LINE:#include "..."
	file = p[1]; line = p[2]
	split(file, f, "/"); layer = f[1] == "src" ? f[2] : f[1]   # python/tftracer/*.c: python
	inc = $0; sub(/^[^"]*"/, "", inc); sub(/".*$/, "", inc)
	if (index(inc, "/") == 0) next                 # same folder
	if (inc ~ /(^|\/)\.\.(\/|$)/) {
		print "layer violation: " file ":" line ": includes \"" inc "\" through ../"; bad++; next
	}
	split(inc, d, "/"); dep = d[1]
	if (dep == "tftracer") next                    # the public headers (include/tftracer/)
	if (!(dep in rank)) {
		print "layer violation: " file ":" line ": includes " dep "/, not a layer of the stack"; bad++; next
	}
	if (rank[dep] > rank[layer]) {
		print "layer violation: " file ":" line ": includes " dep "/ (" dep " is above " layer ")"; bad++
	}
	if (layer == "codec" && inc == "core/model.h") {
		print "layer violation: " file ":" line ": codec must not know the trace model (core/model.h)"; bad++
	}
}
END { if (bad) { print bad " layer violation(s)"; exit 1 } print "layers ok" }'
