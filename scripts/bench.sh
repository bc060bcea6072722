#!/bin/sh
# Speed and memory of training and greedy decoding (rnnsearch bench), for a
# small and a Multi30k-sized model, with one and two BLAS threads, measured
# back to back in one run. Figures depend on what else the machine is doing.
set -eu
cd "$(dirname "$0")/.."
[ -x ./rnnsearch ] || make rnnsearch >/dev/null
for size in "--emb 64 --hidden 128 --att 128 --maxout 64 --vocab 2000 --batch-size 32" \
            "--emb 256 --hidden 256 --att 256 --maxout 256 --vocab 6000 --batch-size 64"; do
    for threads in 1 2; do
        # shellcheck disable=SC2086
        ./rnnsearch bench $size --threads "$threads" --steps "${STEPS:-20}"
        echo
    done
done
