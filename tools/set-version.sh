#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tools/set-version.sh X.Y.Z ["change line" ...]: make X.Y.Z the version of the
# tree (docs/packaging.md). It is defined once, in include/tftracer/tftracer.h
# (TFT_VERSION_MAJOR/MINOR/PATCH/STRING), where the CLI, the library, the Python
# module, the pkg-config file and setup.py read it; debian/changelog, which
# dpkg reads, gets a new entry for it (debian/rules refuses to build while the
# two differ). Exit status: 0 ok, 2 bad usage.
set -euo pipefail
cd "$(dirname "$0")/.." || exit 2
v=${1:-}
if ! [[ $v =~ ^([0-9]+)\.([0-9]+)\.([0-9]+)$ ]]; then
	echo "usage: tools/set-version.sh X.Y.Z [\"change\" ...]" >&2
	exit 2
fi
shift
h=include/tftracer/tftracer.h
sed -i -E \
	-e "s/^(#define TFT_VERSION_MAJOR ).*/\1${BASH_REMATCH[1]}/" \
	-e "s/^(#define TFT_VERSION_MINOR ).*/\1${BASH_REMATCH[2]}/" \
	-e "s/^(#define TFT_VERSION_PATCH ).*/\1${BASH_REMATCH[3]}/" \
	-e "s/^(#define TFT_VERSION_STRING ).*/\1\"$v\"/" "$h"
if [ "$(sed -n '1s/^tftracer (\([^)]*\)).*/\1/p' debian/changelog)" != "$v" ]; then
	maint=$(sed -n 's/^Maintainer: //p' debian/control)
	{
		printf 'tftracer (%s) unstable; urgency=medium\n\n' "$v"
		if [ $# -eq 0 ]; then set -- "New version $v."; fi
		for line in "$@"; do printf '  * %s\n' "$line" | fold -s -w 78 | sed '2,$s/^/    /'; done
		printf '\n -- %s  %s\n\n' "$maint" "$(date -R)"
		cat debian/changelog
	} >debian/changelog.new
	mv debian/changelog.new debian/changelog
fi
echo "version $v: $h, debian/changelog"
