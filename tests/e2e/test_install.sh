#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `make install` / `make uninstall` (docs/packaging.md), run by `make test`:
# installs the build into DESTDIR=$B/install-test (PREFIX=/usr/local) and uses
# what is installed there, as a user would:
#   files     the CLI, every $B/lib*.so and lib*.a, every public header, the
#             pkg-config file, a man page per docs/cmd-*.md and tftracer(1),
#             bash completion, the Python module
#   version   `tftracer --version`: the header's version, then TLS / Python /
#             interceptors; the same version in debian/changelog, setup.py,
#             tftracer.pc and the Python module
#   cli       the installed CLI imports a real trace and `info` counts its
#             slices as python's json module does
#   python    the installed module (PYTHONPATH=DESTDIR/...) records 3 steps with
#             TracingServer; the installed CLI reads them back
#   c-shared, c-static  examples/c/train_sim.c built with `pkg-config tftracer`
#             against the installed headers and libtftracer.so / libtftracer.a
#   man       every page renders (man -l), NAME is whatis-parsable (lexgrog),
#             `man -w tftracer-NAME` finds it; a new docs/cmd-NAME.md gets its
#             page and its SEE ALSO entry with no change to the Makefile
#   completion  the installed script completes commands, options and values
#             from the installed CLI's help
#   build-depends  every library the Makefile links (-lX) comes from a
#             package that debian/control's Build-Depends names
#   set-version  tools/set-version.sh changes the header and debian/changelog
#             together (in a copy of the tree)
#   uninstall `make uninstall` leaves no file, link or tftracer path behind
#
# Output: one line per check (PASS name / FAIL name (reason) / SKIP name (reason)).
# Env: TFT_BUILD (build dir, default build), TFT_DATA (../shared/data).
set -uo pipefail

cd "$(dirname "$0")/../.." || exit 2
ROOT=$(pwd)
B=${TFT_BUILD:-build}
case $B in /*) ;; *) B=$ROOT/$B ;; esac
DATA=${TFT_DATA:-$ROOT/../shared/data}
PY=/usr/bin/python3
TRACE=$DATA/hta/critical_path/simple_add/benchmark_result_493459_1694039959_trace.json.gz
nfail=0

pass() { echo "PASS install/$1"; }
fail() {
	echo "FAIL install/$1 ($2)"
	nfail=$((nfail + 1))
}
skip() { echo "SKIP install/$1 ($2)"; }
# check NAME PROBLEMS...: PASS when no problem was collected
check() {
	local name=$1
	shift
	if [ $# -eq 0 ]; then pass "$name"; else fail "$name" "$(printf '%s; ' "$@" | cut -c1-600)"; fi
}

D=$B/install-test
WORK=$B/install-test-work
rm -rf "$D" "$WORK"
mkdir -p "$WORK"
trap 'rm -rf "$D" "$WORK"' EXIT
MK=(make --no-print-directory -s O="$B" PREFIX=/usr/local)

if ! "${MK[@]}" -j"${TFT_JOBS:-2}" all man >"$WORK/build.log" 2>&1; then
	fail build "make O=$B all man: $(grep -m1 -iE 'error|cannot' "$WORK/build.log" | cut -c1-300)"
	exit 1
fi
if ! "${MK[@]}" install DESTDIR="$D" >"$WORK/install.log" 2>&1; then
	fail make-install "$(tail -n 3 "$WORK/install.log" | tr '\n' ' ' | cut -c1-300)"
	exit 1
fi
VERSION=$(sed -n 's/^#define TFT_VERSION_STRING "\(.*\)"$/\1/p' include/tftracer/tftracer.h)
PREFIX=$D/usr/local
BIN=$PREFIX/bin/tftracer
PYDIR=$D$("$PY" tools/python_site.py /usr/local)
HAVE_PY=0
[ -d "$B/python/tftracer" ] && HAVE_PY=1

# ---- files -------------------------------------------------------------------------
p=()
[ -x "$BIN" ] || p+=("no executable $BIN")
for f in "$B"/lib*.so "$B"/lib*.a; do
	[ -e "$f" ] || continue
	[ -f "$PREFIX/lib/$(basename "$f")" ] || p+=("$(basename "$f") not installed in lib/")
done
[ -f "$PREFIX/lib/libtftracer.so" ] && [ -f "$PREFIX/lib/libtftracer.a" ] || p+=("libtftracer.so/.a missing")
for h in include/tftracer/*.h; do
	cmp -s "$h" "$PREFIX/include/tftracer/$(basename "$h")" || p+=("header $h not installed")
done
[ -f "$PREFIX/lib/pkgconfig/tftracer.pc" ] || p+=("no tftracer.pc")
[ -f "$PREFIX/share/man/man1/tftracer.1" ] || p+=("no tftracer.1")
for md in docs/cmd-*.md; do
	n=$(basename "$md" .md)
	n=${n#cmd-}
	[ -f "$PREFIX/share/man/man1/tftracer-$n.1" ] || p+=("no man page tftracer-$n.1 for $md")
done
[ -f "$PREFIX/share/bash-completion/completions/tftracer" ] || p+=("no bash completion")
if [ "$HAVE_PY" = 1 ]; then
	for f in "$B"/python/tftracer/*; do
		[ -f "$PYDIR/tftracer/$(basename "$f")" ] || p+=("python: $(basename "$f") not in $PYDIR/tftracer")
	done
fi
check files "${p[@]}"

# ---- version -------------------------------------------------------------------------
p=()
"$BIN" --version >"$WORK/version.txt" 2>&1 || p+=("--version exit $?")
"$BIN" version >"$WORK/version2.txt" 2>&1 || p+=("version exit $?")
cmp -s "$WORK/version.txt" "$WORK/version2.txt" || p+=("'version' and '--version' differ")
[ "$(head -n 1 "$WORK/version.txt")" = "tftracer $VERSION" ] ||
	p+=("first line '$(head -n 1 "$WORK/version.txt")', expected 'tftracer $VERSION'")
grep -qE '^TLS: +(yes|no) ' "$WORK/version.txt" || p+=("no TLS line")
grep -qE '^interceptors: +' "$WORK/version.txt" || p+=("no interceptors line")
if [ "$HAVE_PY" = 1 ]; then
	pyv=$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
	grep -qE "^Python: +yes \(module for CPython $pyv " "$WORK/version.txt" || p+=("Python line does not say yes for $pyv")
else
	grep -qE '^Python: +no ' "$WORK/version.txt" || p+=("Python line does not say no")
fi
# TLS: what the libmicrohttpd it runs with says (serve with --tls-cert needs it)
mhd_tls=$("$PY" -c 'import ctypes; l = ctypes.CDLL("libmicrohttpd.so.12"); print("yes" if l.MHD_is_feature_supported(2) == 1 else "no")' 2>/dev/null)
[ -z "$mhd_tls" ] || grep -qE "^TLS: +$mhd_tls " "$WORK/version.txt" || p+=("TLS line is not '$mhd_tls'")
# one version everywhere
h=$(sed -n -E 's/^#define TFT_VERSION_(MAJOR|MINOR|PATCH) ([0-9]+)$/\2/p' include/tftracer/tftracer.h | paste -sd.)
[ "$h" = "$VERSION" ] || p+=("header MAJOR.MINOR.PATCH $h != TFT_VERSION_STRING $VERSION")
c=$(sed -n '1s/^tftracer (\([^)]*\)).*/\1/p' debian/changelog)
[ "$c" = "$VERSION" ] || p+=("debian/changelog $c != $VERSION")
s=$(cd "$WORK" && "$PY" -c "import runpy, sys; sys.argv = ['setup.py', '--version']; runpy.run_path('$ROOT/setup.py', run_name='__main__')" 2>/dev/null | tail -n 1)
[ "$s" = "$VERSION" ] || p+=("setup.py --version '$s' != $VERSION")
m=$("${MK[@]}" version)
[ "$m" = "$VERSION" ] || p+=("make version '$m' != $VERSION")
pc=$(PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$D pkg-config --modversion tftracer 2>&1)
[ "$pc" = "$VERSION" ] || p+=("pkg-config --modversion '$pc' != $VERSION")
check version "${p[@]}"

# ---- the installed CLI on a real trace ---------------------------------------------------
if [ ! -f "$TRACE" ]; then
	fail cli "missing $TRACE (TFT_DATA=$DATA)"
else
	p=()
	want=$("$PY" -c "import gzip, json, sys; print(sum(e.get('ph') == 'X' for e in json.load(gzip.open(sys.argv[1]))['traceEvents']))" "$TRACE")
	if ! "$BIN" import "$TRACE" -o "$WORK/cli.tft" --quiet >"$WORK/import.log" 2>&1; then
		p+=("import failed: $(head -c 300 "$WORK/import.log")")
	elif ! "$BIN" info "$WORK/cli.tft" --json >"$WORK/info.json" 2>"$WORK/info.err"; then
		p+=("info failed: $(head -c 300 "$WORK/info.err")")
	else
		got=$("$PY" -c "import json, sys; print(json.load(open(sys.argv[1]))['slices'])" "$WORK/info.json")
		[ "$got" = "$want" ] || p+=("info says $got slices, the trace has $want X events")
	fi
	"$BIN" stats "$WORK/cli.tft" --top 3 >"$WORK/stats.txt" 2>&1 || p+=("stats failed: $(head -c 200 "$WORK/stats.txt")")
	check cli "${p[@]}"
fi

# ---- the installed Python module -----------------------------------------------------------
if [ "$HAVE_PY" != 1 ]; then
	fail python "the build has no Python module ($B/python/tftracer; python3-dev missing?)"
else
	p=()
	out=$(cd "$WORK" && PYTHONPATH=$PYDIR timeout 120 "$PY" -c "
import sys, tftracer
s = tftracer.TracingServer(port=0, session=sys.argv[1])
for i in range(3):
    with s.step('train'):
        sum(range(100000))
s.stop()
print(tftracer.__file__)
print(tftracer.__version__)
" "$WORK/py.tft" 2>"$WORK/py.err")
	rc=$?
	if [ "$rc" -ne 0 ]; then
		p+=("exit $rc: $(tail -c 300 "$WORK/py.err")")
	else
		file=$(echo "$out" | sed -n 1p)
		[[ $file == "$PYDIR/tftracer/"* ]] || p+=("imported $file, not the one in $PYDIR")
		[ "$(echo "$out" | sed -n 2p)" = "$VERSION" ] || p+=("tftracer.__version__ $(echo "$out" | sed -n 2p) != $VERSION")
		steps=$("$BIN" info "$WORK/py.tft" --json 2>/dev/null | "$PY" -c "import json, sys; print(json.load(sys.stdin)['steps'])")
		[ "$steps" = 3 ] || p+=("the installed CLI reads ${steps:-no} steps from the module's session, expected 3")
	fi
	check python "${p[@]}"
fi

# ---- the C library through pkg-config: shared and static -----------------------------------
export PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$D
for kind in shared static; do
	p=()
	exe=$WORK/train_sim-$kind
	if [ $kind = shared ]; then
		# shellcheck disable=SC2046
		cc -std=c11 -D_GNU_SOURCE -DTFT_ENABLE -o "$exe" examples/c/train_sim.c \
			$(pkg-config --cflags --libs tftracer) -lpthread >"$WORK/cc-$kind.log" 2>&1
	else
		# -ltftracer from the archive, the libraries it needs (Libs.private) as usual
		# shellcheck disable=SC2046
		cc -std=c11 -D_GNU_SOURCE -DTFT_ENABLE -o "$exe" examples/c/train_sim.c \
			$(pkg-config --cflags tftracer) -L"$PREFIX/lib" -Wl,-Bstatic -ltftracer -Wl,-Bdynamic \
			$(pkg-config --static --libs-only-l tftracer | sed 's/-ltftracer//') >"$WORK/cc-$kind.log" 2>&1
	fi
	rc=$?
	if [ "$rc" -ne 0 ]; then
		fail "c-$kind" "cc with pkg-config tftracer: $(head -c 300 "$WORK/cc-$kind.log")"
		continue
	fi
	needed=$(readelf -d "$exe" | grep -c 'NEEDED.*libtftracer')
	if [ $kind = shared ]; then
		[ "$needed" = 1 ] || p+=("not linked with libtftracer.so")
		lib=$(LD_LIBRARY_PATH=$PREFIX/lib ldd "$exe" | awk '/libtftracer/ { print $3 }')
		[ "$lib" = "$PREFIX/lib/libtftracer.so" ] || p+=("runs with '$lib', not the installed library")
	else
		[ "$needed" = 0 ] || p+=("linked with libtftracer.so, not the archive")
	fi
	if ! LD_LIBRARY_PATH=$PREFIX/lib timeout 120 "$exe" -o "$WORK/c-$kind.tft" -n 3 -u 50 >"$WORK/run-$kind.log" 2>&1; then
		p+=("train_sim failed: $(tail -c 300 "$WORK/run-$kind.log")")
	else
		steps=$("$BIN" info "$WORK/c-$kind.tft" --json 2>/dev/null | "$PY" -c "import json, sys; print(json.load(sys.stdin)['steps'])")
		[ "$steps" = 3 ] || p+=("${steps:-no} steps in its session, expected 3")
	fi
	check "c-$kind" "${p[@]}"
done
unset PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR

# ---- man pages -------------------------------------------------------------------------------
if ! command -v man >/dev/null || ! command -v lexgrog >/dev/null; then
	fail man "man-db is not installed (man, lexgrog): scripts/install-deps.sh installs it"
else
	p=()
	for page in "$PREFIX"/share/man/man1/tftracer*.1; do
		n=$(basename "$page" .1)
		if ! LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l -Tutf8 -Z "$page" >/dev/null 2>"$WORK/man-$n.err"; then
			p+=("$n: man -l failed: $(head -c 200 "$WORK/man-$n.err")")
		fi
		# roff errors (not the line-breaking notes about long words in narrow table cells)
		# (tbl says where on a line of its own: "warning: file '<standard input>', around line N:")
		bad=$(grep -vE "can't break line|cannot adjust line|table wider than line width|around line [0-9]+:\$|^ *$" "$WORK/man-$n.err" | head -n 2 | tr '\n' ' ')
		[ -z "$bad" ] || p+=("$n: $bad")
		w=$(lexgrog "$page" 2>&1)
		[[ $w == *"\"$n - "* ]] || p+=("$n: whatis entry: $w")
		grep -q "^\.SH SEE ALSO" "$page" || p+=("$n: no SEE ALSO")
		[ "$(MANPATH=$PREFIX/share/man man -w "$n" 2>/dev/null)" = "$page" ] || p+=("man -w $n does not find $page")
	done
	# the summary of tftracer-info comes from docs/cli.md's row for it
	row=$(grep -E '\(cmd-info\.md\)' docs/cli.md | sed 's/\\|/\x01/g' | awk -F'|' '{ gsub(/^ +| +$/, "", $3); print $3 }' | tr '\001' '|')
	lexgrog "$PREFIX/share/man/man1/tftracer-info.1" | grep -qF "tftracer-info - $row" || p+=("tftracer-info's NAME is not docs/cli.md's '$row'")
	check man "${p[@]}"

	# a new subcommand page: picked up by the Makefile's wildcard, no change needed
	p=()
	T=$WORK/newpage
	mkdir -p "$T/docs" "$T/tools" "$T/include"
	cp -r docs/*.md "$T/docs/" && cp tools/mkman.py "$T/tools/" && cp -r include/tftracer "$T/include/" && cp Makefile "$T/"
	# shellcheck disable=SC2016 # (backticks: Markdown, not a command)
	printf '# tftracer zzz\n\n```\ntftracer zzz FILE [--deep]\n```\n\nDoes zzz to a session. More text.\n\n## Options\n\n| option | meaning |\n|---|---|\n| `--deep` | deeper |\n' >"$T/docs/cmd-zzz.md"
	if ! make --no-print-directory -s -C "$T" O=out man >"$WORK/newpage.log" 2>&1; then
		p+=("make man: $(head -c 300 "$WORK/newpage.log")")
	else
		[ -f "$T/out/man/tftracer-zzz.1" ] || p+=("no tftracer-zzz.1")
		lexgrog "$T/out/man/tftracer-zzz.1" | grep -qF "tftracer-zzz - Does zzz to a session" || p+=("NAME not from the page's first sentence: $(lexgrog "$T/out/man/tftracer-zzz.1")")
		grep -q 'tftracer-zzz' "$T/out/man/tftracer.1" || p+=("tftracer.1's SEE ALSO lacks tftracer-zzz")
		grep -q 'no row links it' "$WORK/newpage.log" || p+=("no warning that docs/cli.md has no row for it")
		grep -q '^\.SH OPTIONS' "$T/out/man/tftracer-zzz.1" || p+=("its ## heading is no section")
	fi
	check man-new-page "${p[@]}"
fi

# ---- bash completion ---------------------------------------------------------------------------
p=()
comp=$(PATH=$PREFIX/bin:$PATH bash --norc -c '
	. "$1"
	c() { COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=(); _tftracer 2>/dev/null; echo "${COMPREPLY[*]}"; }
	c tftracer ""; c tftracer stats --by ""; c tftracer export -f ""; c tftracer info --j; c tftracer serve --port ""
' _ "$PREFIX/share/bash-completion/completions/tftracer" 2>&1)
cmds=$("$BIN" --help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }' | tr '\n' ' ')
line1=$(echo "$comp" | sed -n 1p)
for c in $cmds; do [[ " $line1 " == *" $c "* ]] || p+=("command $c not offered"); done
[ -n "$cmds" ] || p+=("the CLI's --help lists no command")
# (values named in docs/cmd-stats.md and docs/cmd-export.md; later ones may join them)
for v in name category track; do
	[[ " $(echo "$comp" | sed -n 2p) " == *" $v "* ]] || p+=("stats --by: '$(echo "$comp" | sed -n 2p)' lacks $v")
done
for v in chrome html; do
	[[ " $(echo "$comp" | sed -n 3p) " == *" $v "* ]] || p+=("export -f: '$(echo "$comp" | sed -n 3p)' lacks $v")
done
[[ "$(echo "$comp" | sed -n 3p)" != *[A-Z/]* ]] || p+=("export -f offers more than format names: '$(echo "$comp" | sed -n 3p)'")
[ "$(echo "$comp" | sed -n 4p)" = "--json" ] || p+=("info --j: '$(echo "$comp" | sed -n 4p)'")
[ -z "$(echo "$comp" | sed -n 5p)" ] || p+=("serve --port offers '$(echo "$comp" | sed -n 5p)'")
check completion "${p[@]}"

# ---- Build-Depends: every library the Makefile links --------------------------------------------
p=()
# shellcheck disable=SC2016 # ($(LDLIBS): make's, not the shell's)
libs=$(make --no-print-directory -s -f Makefile -f - O="$B" tft-print-libs <<<'tft-print-libs: ; @echo $(LDLIBS) $(SO_LIBS)' 2>/dev/null)
bdeps=$(sed -n '/^Build-Depends:/,/^[A-Z][A-Za-z-]*:/p' debian/control | sed 's/^Build-Depends://' |
	tr ',' '\n' | sed -E 's/[<(\[].*//; s/^ +| +$//g' | grep -v '^$' | grep -v ':$')
[ -n "$libs" ] || p+=("cannot read LDLIBS from the Makefile")
for l in $(tr ' ' '\n' <<<"$libs" | sed -n 's/^-l//p' | sort -u); do
	so=$(cc -print-file-name="lib$l.so")
	[ "$so" != "lib$l.so" ] || so=$(cc -print-file-name="lib$l.a")
	so=$(realpath -s "$so") # (lexically: the -dev package owns the link, not its target)
	pkg=$(dpkg -S "$so" 2>/dev/null | head -n 1 | cut -d: -f1)
	case $pkg in
	"") p+=("-l$l: no package owns $so") ;;
	libc6-dev | libgcc-*-dev) ;; # build-essential, which Build-Depends does not list
	*) grep -qxF "$pkg" <<<"$bdeps" || p+=("-l$l comes from $pkg, which debian/control's Build-Depends does not name") ;;
	esac
done
check build-depends "${p[@]}"

# ---- tools/set-version.sh, in a copy of the tree ------------------------------------------------
p=()
T=$WORK/setversion
mkdir -p "$T/tools" "$T/include/tftracer" "$T/debian"
cp tools/set-version.sh "$T/tools/" && cp include/tftracer/tftracer.h "$T/include/tftracer/" &&
	cp debian/changelog debian/control "$T/debian/" && cp setup.py Makefile "$T/"
if ! "$T/tools/set-version.sh" 7.8.9 "Seven eight nine." >"$WORK/setversion.log" 2>&1; then
	p+=("exit: $(head -c 200 "$WORK/setversion.log")")
else
	[ "$(make --no-print-directory -s -C "$T" version)" = 7.8.9 ] || p+=("make version is not 7.8.9")
	grep -q '^#define TFT_VERSION_MINOR 8$' "$T/include/tftracer/tftracer.h" || p+=("TFT_VERSION_MINOR not 8")
	[ "$(sed -n 1p "$T/debian/changelog")" = "tftracer (7.8.9) unstable; urgency=medium" ] || p+=("changelog: $(sed -n 1p "$T/debian/changelog")")
	grep -q '^  \* Seven eight nine\.$' "$T/debian/changelog" || p+=("changelog lacks the change line")
	(cd "$T/debian/.." && dpkg-parsechangelog -S Version >/dev/null 2>&1) || p+=("dpkg-parsechangelog rejects the new changelog")
	"$T/tools/set-version.sh" 1.2 >/dev/null 2>&1 && p+=("took '1.2'")
fi
check set-version "${p[@]}"

# ---- uninstall -------------------------------------------------------------------------------------
p=()
if ! "${MK[@]}" uninstall DESTDIR="$D" >"$WORK/uninstall.log" 2>&1; then
	p+=("make uninstall: $(tail -n 2 "$WORK/uninstall.log" | tr '\n' ' ')")
fi
left=$(find "$D" \( -type f -o -type l -o -name '*tftracer*' \) | sed "s|^$D||" | head -n 5 | tr '\n' ' ')
[ -z "$left" ] || p+=("left behind: $left")
check uninstall "${p[@]}"

[ "$nfail" -eq 0 ]
