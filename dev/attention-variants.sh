#!/bin/sh
# Trains the dates model once per attention score and reports the exact-match
# rate of each on corpora/dates/test.tsv (greedy). Not part of `make check`.
#   dev/attention-variants.sh [EPOCHS]      (default 3)
set -eu
cd "$(dirname "$0")/.."
epochs=${1:-3}
[ -x ./rnnsearch ] || make rnnsearch >/dev/null
mkdir -p build
cut -f1 corpora/dates/test.tsv > build/variants.src
cut -f2 corpora/dates/test.tsv > build/variants.ref
printf 'attention\tepochs\ttrain_seconds\ttest_exact\n'
for kind in additive general scaled-dot; do
    dir=build/variant-$kind
    rm -rf "$dir"
    start=$(date +%s)
    ./rnnsearch train --train corpora/dates/train.tsv --dev corpora/dates/dev.tsv --out "$dir" \
        --attention "$kind" --epochs "$epochs" --threads 1 --quiet 2>/dev/null
    end=$(date +%s)
    ./rnnsearch translate -m "$dir" build/variants.src > "$dir/test.hyp"
    paste "$dir/test.hyp" build/variants.ref | awk -F'\t' -v k="$kind" -v e="$epochs" -v s=$((end - start)) '
        $1 == $2 { ok++ } END { printf "%s\t%d\t%d\t%.2f%%\n", k, e, s, 100 * ok / NR }'
done
