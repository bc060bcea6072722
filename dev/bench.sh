#!/bin/sh
# rnnsearch bench: training and decoding speed, GFLOP/s against the machine's
# bound on the same products (every GEMM road it runs) and peak memory beside
# the analytic bound, for configs S and M with 1 and 2 threads, on Multi30k (DATA, by default
# ../shared/corpora/multi30k beside the checkout: not in a clone). Extra
# options go to `rnnsearch bench` (e.g. --tsv).
# Figures depend on what else the machine is doing; for ratios against PyTorch
# run dev/bench-vs-pytorch.sh, for where a step's time goes perf
# (dev/profile-decode.sh; docs/performance.md, "How to measure").
set -eu
cd "$(dirname "$0")/.."
[ -x ./rnnsearch ] || make rnnsearch >/dev/null
exec ./rnnsearch bench --data "${DATA:-../shared/corpora/multi30k}" "$@"
