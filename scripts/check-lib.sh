#!/bin/sh
# The library as its users see it (run by `make check`):
#   - examples/translate prints what `rnnsearch translate` prints (greedy and
#     beam), examples/align what `rnnsearch score` prints for a given target;
#   - a missing model fails with a message naming it;
#   - `make install PREFIX=<temporary>` installs a header, libraries and
#     rnnsearch.pc with which examples/translate.c builds (cc and pkg-config
#     only) and runs from another directory, and a Python package that
#     imports and translates from there; `pip install ./python` likewise;
#   - docs/library.md shows examples/align.c as it is.
#   usage: scripts/check-lib.sh BUILD_DIR MODEL_DIR [--no-install]
# (--no-install: the examples only, as make check-asan runs them)
set -eu
[ $# -eq 2 ] || [ $# -eq 3 ] && [ "${3:---no-install}" = --no-install ] ||
    { echo "usage: $0 BUILD_DIR MODEL_DIR [--no-install]" >&2; exit 2; }
cd "$(dirname "$0")/.."
repo=$(pwd)
build=$1
model=$(cd "$2" && pwd)
tmp=$(mktemp -d /tmp/rnnsearch-lib-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "check-lib: FAIL: $*" >&2; exit 1; }

printf '%s\n' "21 May 2001" "3/4/99" "" "Saturday, 21 November 2026" "JULY 4, 1976" > "$tmp/in.txt"
for beam in 1 3; do
    ./rnnsearch translate -m "$model" --beam $beam --quiet "$tmp/in.txt" > "$tmp/want.txt"
    "$build/examples/translate" "$model" $beam < "$tmp/in.txt" > "$tmp/got.txt"
    cmp -s "$tmp/want.txt" "$tmp/got.txt" || fail "examples/translate (beam $beam) differs from rnnsearch translate"
done
printf '21 May 2001\t2001-05-21\n' | ./rnnsearch score -m "$model" > "$tmp/want.txt"
"$build/examples/align" "$model" "21 May 2001" "2001-05-21" | sed -n 's/^log p = //p' > "$tmp/got.txt"
cmp -s "$tmp/want.txt" "$tmp/got.txt" || fail "examples/align's log p differs from rnnsearch score"
[ "$("$build/examples/align" "$model" "21 May 2001" | head -n 1)" = "$(sed -n 1p "$tmp/in.txt" |
    ./rnnsearch translate -m "$model" --quiet)" ] || fail "examples/align translates otherwise"
if "$build/examples/align" "$tmp/missing" x > /dev/null 2> "$tmp/err.txt"; then
    fail "a missing model did not fail"
fi
grep -q "$tmp/missing" "$tmp/err.txt" || fail "a missing model's message does not name it: $(cat "$tmp/err.txt")"
# docs/library.md shows examples/align.c whole: the first ```c block is it.
awk '/^```c$/ { on = 1; next } on && /^```$/ { exit } on' docs/library.md | cmp -s - examples/align.c ||
    fail "docs/library.md's example is not examples/align.c"
echo "check-lib: $build/examples agree with rnnsearch translate and score"
[ $# -eq 3 ] && exit 0

# Install, then build and run from elsewhere as a user would.
${MAKE:-make} --no-print-directory install PREFIX="$tmp/prefix" > "$tmp/install.log" 2>&1 ||
    { cat "$tmp/install.log"; fail "make install"; }
for f in include/rnnsearch.h lib/librnnsearch.so lib/librnnsearch.so.0 lib/librnnsearch.a lib/pkgconfig/rnnsearch.pc; do
    [ -e "$tmp/prefix/$f" ] || fail "make install did not install $f"
done
mkdir "$tmp/elsewhere"
cd "$tmp/elsewhere"
export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig"
# shellcheck disable=SC2046
cc -o translate "$repo/examples/translate.c" $(pkg-config --cflags --libs rnnsearch) ||
    fail "examples/translate.c does not build against the installed library"
LD_LIBRARY_PATH="$tmp/prefix/lib" ./translate "$model" < "$tmp/in.txt" > got.txt
"$repo/rnnsearch" translate -m "$model" --quiet "$tmp/in.txt" > want.txt
cmp -s want.txt got.txt || fail "the installed library translates otherwise"
echo "check-lib: examples/translate.c builds with pkg-config from $tmp/prefix and translates"
pydir=$(find "$tmp/prefix/lib" -type d -name rnnsearch -path '*-packages/*' | head -n 1)
[ -n "$pydir" ] || fail "make install did not install the Python package"
python=${PYTHON:-python3}
if "$python" -c 'import numpy' 2>/dev/null; then
    got=$(env -u RNNSEARCH_LIBRARY PYTHONPATH="$(dirname "$pydir")" RNNSEARCH_MODELS="$(dirname "$model")" \
        "$python" -c 'import rnnsearch; print(rnnsearch.Model("'"$(basename "$model")"'").translate(["21 May 2001"])[0])') ||
        fail "the installed Python package does not import or translate"
    [ "$got" = "$(head -n 1 want.txt)" ] || fail "the installed Python package translates '$got'"
    echo "check-lib: the installed Python package finds its library and translates"
elif [ "${RNNSEARCH_NO_SKIPS:-}" = 1 ]; then
    fail "no $python with NumPy (RNNSEARCH_NO_SKIPS=1)"
else
    echo "check-lib: skipped the installed Python package: no $python with NumPy"
fi

# pip install ./python (offline, Debian's setuptools), from a copy: pip builds in the tree.
if "$python" -m pip --version > /dev/null 2>&1 && "$python" -c 'import setuptools' 2>/dev/null; then
    cp -R "$repo/python" "$tmp/python-copy"
    "$python" -m pip install --quiet --no-build-isolation --no-deps --no-index --target "$tmp/pip" \
        "$tmp/python-copy" > "$tmp/pip.log" 2>&1 || { cat "$tmp/pip.log"; fail "pip install ./python"; }
    got=$(RNNSEARCH_LIBRARY="$repo/$build/librnnsearch.so.0" PYTHONPATH="$tmp/pip" \
        "$python" -c 'import rnnsearch, sys; print(rnnsearch.Model(sys.argv[1]).translate("21 May 2001"))' "$model") ||
        fail "the package pip installed does not import or translate"
    [ "$got" = "$(head -n 1 want.txt)" ] || fail "the package pip installed translates '$got'"
    echo "check-lib: pip install ./python installs a package that translates"
elif [ "${RNNSEARCH_NO_SKIPS:-}" = 1 ]; then
    fail "no pip or setuptools for $python (RNNSEARCH_NO_SKIPS=1)"
else
    echo "check-lib: skipped pip install ./python: no pip or setuptools for $python"
fi
