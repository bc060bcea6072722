#!/bin/sh
# rnnsearch bench: training and translation speed, GFLOP/s against the
# machine's sgemm, peak memory beside the analytic bound and a step's time by
# layer, for configs S and M with 1 and 2 threads, on Multi30k (DATA, by
# default ../shared/corpora/multi30k beside a development checkout). Extra
# options go to `rnnsearch bench` (e.g. --tsv).
# Figures depend on what else the machine is doing; for ratios against PyTorch
# run scripts/bench-vs-pytorch.sh.
set -eu
cd "$(dirname "$0")/.."
[ -x ./rnnsearch ] || make rnnsearch >/dev/null
exec ./rnnsearch bench --data "${DATA:-../shared/corpora/multi30k}" "$@"
