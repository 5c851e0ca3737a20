#!/usr/bin/env bash
# Check that #include "layer/..." dependencies only point down the layer stack
# (see ARCHITECTURE.md). Prints offending lines; exits 1 if any.
set -u
cd "$(dirname "$0")/.."
order=(core codec store collect runtime intercept analyze export server cli python)
rank() { local i; for i in "${!order[@]}"; do [ "${order[$i]}" = "$1" ] && { echo "$i"; return; }; done; echo -1; }
bad=0
for f in src/*/*.c src/*/*.h; do
	[ -f "$f" ] || continue
	layer=$(echo "$f" | cut -d/ -f2)
	lr=$(rank "$layer")
	while IFS= read -r inc; do
		dep=$(echo "$inc" | sed -E 's/.*#include "([a-z_]+)\/.*/\1/')
		dr=$(rank "$dep")
		[ "$dr" -lt 0 ] && continue
		if [ "$dr" -gt "$lr" ]; then
			echo "layer violation: $f includes $dep (${order[$dr]} is above ${order[$lr]})"
			bad=1
		fi
	done < <(grep -E '^#include "[a-z_]+/' "$f")
done
# core and codec must not depend on each other's upper neighbours, and codec has no model knowledge
if grep -l '#include "core/model.h"' src/codec/*.[ch] 2>/dev/null; then
	echo "layer violation: codec must not know the trace model"; bad=1
fi
[ $bad -eq 0 ] && echo "layers ok"
exit $bad
