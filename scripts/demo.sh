#!/bin/sh
# The demo: train on the bundled dates corpus, measure exact match on its test
# split, translate a few dates, and show what the decoder looked at.
set -eu
cd "$(dirname "$0")/.."
bin=./rnnsearch
model=models/dates
start=$(date +%s)
echo "== training on corpora/dates (20000 pairs; 3 epochs) =="
rm -rf "$model"
# corpora/dates/config.yaml: the data, the model's sizes, --name dates, 3 epochs.
"$bin" train --config corpora/dates/config.yaml --quiet
end=$(date +%s)

echo
echo "== exact match on corpora/dates/test.tsv =="
cut -f1 corpora/dates/test.tsv > build/dates-test.src
cut -f2 corpora/dates/test.tsv > build/dates-test.ref
"$bin" translate -m "$model" build/dates-test.src > build/dates-test.hyp
paste build/dates-test.hyp build/dates-test.ref | awk -F'\t' -v secs=$((end - start)) '
    $1 == $2 { ok++ }
    END { printf "%d of %d exact (%.2f%%), trained in %d s\n", ok, NR, 100 * ok / NR, secs
          if (ok < 0.99 * NR) exit 1 }'

echo
echo "== a few dates typed by hand =="
printf '%s\n' "Saturday, 21 November 2026" "11/21/26" "21 nov. 2026" "the 3rd of March 1999" \
    "JULY 4, 1976" > build/dates-demo.src
"$bin" translate -m "$model" --beam 5 build/dates-demo.src > build/dates-demo.hyp
paste build/dates-demo.src build/dates-demo.hyp | awk -F'\t' '{ printf "  %-30s -> %s\n", $1, $2 }'

echo
echo "== what the decoder looked at (rnnsearch align) =="
echo "Saturday, 21 November 2026" | "$bin" align -m "$model" --format text
