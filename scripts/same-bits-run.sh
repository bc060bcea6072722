#!/bin/sh
# The same-bits run: a short seeded training with every random part switched
# on (dropout, word dropout, label smoothing, two shards), its parameters
# exported and its greedy and beam-5 translations of 20 test sources.
# tests/cmd/test_same_bits.c runs it with the current build and compares the three
# files byte for byte with tests/fixtures/same-bits/CORE/, which this script
# wrote with the build of commit 83e02d7 on a processor whose OpenBLAS picks
# CORE's kernels (OPENBLAS_CORETYPE=CORE chooses them on any processor that
# can run them).
#
#   sh scripts/same-bits-run.sh PROGRAM OUT [more]
#
# writes OUT/params.safetensors, OUT/greedy.txt and OUT/beam5.txt (and the
# data and model it made, under OUT/work). Run from the checkout's top.
# With `more` (another road run twice, which has no fixture) it also writes
# the same training on one thread (params-1.safetensors) and greedy and
# beam-5 translations of 80 sources at batch 1 and 64 (greedy-b1.txt,
# greedy-b64.txt, beam5-b1.txt, beam5-b64.txt).
set -eu
[ $# -eq 2 ] || [ $# -eq 3 ] || { echo "usage: sh scripts/same-bits-run.sh PROGRAM OUT [more]" >&2; exit 2; }
prog=$1
out=$2
more=${3:-}
work=$out/work
rm -rf "$work"
mkdir -p "$work"
head -n 400 corpora/dates/train.tsv > "$work/train.tsv"
head -n 40 corpora/dates/dev.tsv > "$work/dev.tsv"
head -n 20 corpora/dates/test.tsv | cut -f1 > "$work/src.txt"
export OPENBLAS_NUM_THREADS=1
"$prog" train --train "$work/train.tsv" --dev "$work/dev.tsv" --out "$work/m" \
    --emb 16 --hidden 32 --att 16 --maxout 16 --batch-size 16 --epochs 40 --eval-every 500 \
    --dropout 0.1 --src-word-dropout 0.1 --tgt-word-dropout 0.1 --label-smoothing 0.1 \
    --threads 2 --seed 7 --quiet
"$prog" export -m "$work/m/last.ckpt" -o "$out/params.safetensors"
"$prog" translate -m "$work/m/last.ckpt" -o "$out/greedy.txt" "$work/src.txt"
"$prog" translate -m "$work/m/last.ckpt" --beam 5 -o "$out/beam5.txt" "$work/src.txt"
[ "$more" = more ] || exit 0
head -n 80 corpora/dates/test.tsv | cut -f1 > "$work/src80.txt"
for b in 1 64; do
    "$prog" translate -m "$work/m/last.ckpt" --batch-size $b -o "$out/greedy-b$b.txt" "$work/src80.txt"
    "$prog" translate -m "$work/m/last.ckpt" --beam 5 --batch-size $b -o "$out/beam5-b$b.txt" \
        "$work/src80.txt"
done
"$prog" train --train "$work/train.tsv" --dev "$work/dev.tsv" --out "$work/m1" \
    --emb 16 --hidden 32 --att 16 --maxout 16 --batch-size 16 --epochs 40 --eval-every 500 \
    --dropout 0.1 --src-word-dropout 0.1 --tgt-word-dropout 0.1 --label-smoothing 0.1 \
    --threads 1 --seed 7 --quiet
"$prog" export -m "$work/m1/last.ckpt" -o "$out/params-1.safetensors"
