#!/bin/sh
# Instruction counts of two builds on the same work, under callgrind (which
# counts instructions whatever the load: the A/B for a shared machine, where
# wall-clock time is too noisy to settle a few per cent). Program A trains a
# small seeded model (the demo sizes, 20 updates on the dates corpus, one
# thread) and both programs, in turn, train it again and translate 200 test
# dates greedily at batch 1 and 32 and with beam 5; each count is the
# program's whole run (start-up and loading included, the same for both).
#   dev/callgrind-ab.sh PROGRAM_A PROGRAM_B [OUT]
# prints one row per run: instructions of A, of B, and B against A.
# RUNS chooses the runs (default: train greedy1 greedy32 beam5). Needs valgrind.
set -eu
[ $# -ge 2 ] || { echo "usage: $0 PROGRAM_A PROGRAM_B [OUT]" >&2; exit 2; }
a=$1 b=$2 out=${3:-build/callgrind-ab}
command -v valgrind >/dev/null || { echo "callgrind-ab: valgrind is not installed" >&2; exit 1; }
cd "$(dirname "$0")/.."
rm -rf "$out" && mkdir -p "$out"
head -n 2000 corpora/dates/train.tsv > "$out/train.tsv"
head -n 200 corpora/dates/test.tsv | cut -f1 > "$out/src.txt"
export OPENBLAS_NUM_THREADS=1
train() { "$1" train --train "$out/train.tsv" --out "$2" --max-steps 20 --threads 1 --seed 3 --quiet; }
train "$a" "$out/model"
count() { # LABEL PROGRAM ARGS...: the instructions of one run
    label=$1 prog=$2; shift 2
    valgrind --tool=callgrind --callgrind-out-file="$out/$label.cg" "$prog" "$@" \
        > "$out/$label.out" 2> "$out/$label.err"
    sed -n 's/^summary: *\([0-9]*\).*/\1/p' "$out/$label.cg"
}
printf 'run\tA\tB\tB/A\n'
for run in ${RUNS:-train greedy1 greedy32 beam5}; do
    for side in A B; do
        if [ "$side" = A ]; then prog=$a; else prog=$b; fi
        case $run in
        train) n=$(count "$run.$side" "$prog" train --train "$out/train.tsv" --out "$out/t.$side" \
                   --max-steps 20 --threads 1 --seed 3 --quiet) ;;
        greedy1) n=$(count "$run.$side" "$prog" translate -m "$out/model/last.ckpt" --batch-size 1 "$out/src.txt") ;;
        greedy32) n=$(count "$run.$side" "$prog" translate -m "$out/model/last.ckpt" --batch-size 32 "$out/src.txt") ;;
        beam5) n=$(count "$run.$side" "$prog" translate -m "$out/model/last.ckpt" --beam 5 "$out/src.txt") ;;
        esac
        eval "n_$side=\$n"
    done
    cmp -s "$out/$run.A.out" "$out/$run.B.out" || [ "$run" = train ] ||
        echo "callgrind-ab: $run: the two programs' outputs differ" >&2
    awk -v r="$run" -v a="$n_A" -v b="$n_B" 'BEGIN { printf "%s\t%s\t%s\t%+.2f %%\n", r, a, b, 100 * (b / a - 1) }'
done
