#!/bin/sh
# The C examples as their users see them (run by `make check`, and by `make
# check-asan` against the sanitized library; tests/cmd/install-test.sh builds one
# against an installed copy):
#   - examples/translate prints what `rnnsearch translate` prints (greedy and
#     beam), examples/align what `rnnsearch score` prints for a given target;
#   - a missing model fails with a message naming it;
#   - docs/library.md shows examples/align.c as it is.
#   usage: scripts/check-lib.sh BUILD_DIR MODEL_DIR
set -eu
[ $# -eq 2 ] || { echo "usage: $0 BUILD_DIR MODEL_DIR" >&2; exit 2; }
cd "$(dirname "$0")/.."
build=$1
model=$(cd "$2" && pwd)
tmp=$(mktemp -d /tmp/rnnsearch-lib-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "check-lib: FAIL: $*" >&2; exit 1; }

printf '%s\n' "21 May 2001" "3/4/99" "" "Saturday, 21 November 2026" "JULY 4, 1976" > "$tmp/in.txt"
# A line longer than any fixed buffer (7000 bytes) is one sentence, cut to
# 250 tokens as the program cuts it.
awk 'BEGIN { for (i = 0; i < 1000; i++) printf "3/4/99 "; printf "\n" }' >> "$tmp/in.txt"
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
