#!/bin/sh
# Instructions per product of the int8 and the float (OpenBLAS) products at
# the en-de model's decoder shapes, under callgrind (counts that do not
# depend on the machine's load; a proxy for time, see dev/int8-count.c):
# the output layer W_out [6000,256] and the GRU's recurrent U [768,256], at
# B = 1, 32 and 64 input rows.
#   dev/int8-count.sh [PROGRAM]   (default build/int8-count: make build/int8-count)
# prints: shape, B, int8 instructions, float instructions, int8 / float.
set -eu
prog=${1:-build/int8-count}
command -v valgrind >/dev/null || { echo "int8-count: valgrind is not installed" >&2; exit 1; }
[ -x "$prog" ] || { echo "int8-count: no $prog (make build/int8-count)" >&2; exit 1; }
export OPENBLAS_NUM_THREADS=1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
count() { # KIND ROWS IN B REPS: instructions per product
    valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$out/cg" "$prog" "$@" \
        > /dev/null 2> "$out/err" || { cat "$out/err" >&2; exit 1; }
    awk -v reps="$5" '/^(summary|totals):/ { n = $2 } END { printf "%.0f", n / reps }' "$out/cg"
}
printf 'shape\tB\tint8\tfloat\tint8/float\n'
for shape in "W_out 6000" "U 768"; do
    set -- $shape
    name=$1 rows=$2
    for B in 1 32 64; do
        reps=$((B == 1 ? 20 : 3))
        a=$(count q8 "$rows" 256 "$B" "$reps")
        b=$(count float "$rows" 256 "$B" "$reps")
        awk -v s="$name [$rows,256]" -v B="$B" -v a="$a" -v b="$b" \
            'BEGIN { printf "%s\t%d\t%d\t%d\t%.2f\n", s, B, a, b, a / b }'
    done
done
