#!/bin/sh
# How well attention finds the word correspondence: trains rnnsearch on the
# toy reordering corpus (corpora/reorder, see corpora/README.md), force-decodes
# the test targets, takes the hard (argmax) alignment of every target word
# (the </s> row and column left out) and reports the share of the gold links
# of corpora/reorder/test.align that it agrees with. The corpus has no
# punctuation, so the word tokenizer's tokens are exactly the whitespace words
# the gold alignments count.
#
# usage: scripts/align-accuracy.sh [--model DIR] [--out DIR] [--epochs N] [--min PCT] [-- TRAIN OPTIONS]
#   --model DIR   measure an already trained model instead of training one
#   --out DIR     where to train (default: models/reorder-align; replaced)
#   --epochs N    training epochs (default: 6, about a minute on two cores)
#   --min PCT     exit with status 1 when the agreement is below PCT (default: 90)
# Options after "--" go to `rnnsearch train` (e.g. -- --attention general --seed 2).
# Set RNNSEARCH to use another binary (default: ./rnnsearch).
set -eu

RNNSEARCH=${RNNSEARCH:-./rnnsearch}
CORPUS=corpora/reorder
model=
out=models/reorder-align
epochs=6
min=90
while [ $# -gt 0 ]; do
    case $1 in
    --model) model=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --epochs) epochs=$2; shift 2 ;;
    --min) min=$2; shift 2 ;;
    --) shift; break ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "align-accuracy.sh: unknown option $1 (try --help)" >&2; exit 2 ;;
    esac
done

for f in "$CORPUS/train.tsv" "$CORPUS/dev.tsv" "$CORPUS/test.tsv" "$CORPUS/test.align"; do
    [ -r "$f" ] || { echo "align-accuracy.sh: $f missing (run from the repository root)" >&2; exit 1; }
done
[ -x "$RNNSEARCH" ] || { echo "align-accuracy.sh: $RNNSEARCH not found (make first)" >&2; exit 1; }

if [ -z "$model" ]; then
    rm -rf "$out"
    start=$(date +%s)
    "$RNNSEARCH" train --train "$CORPUS/train.tsv" --dev "$CORPUS/dev.tsv" --out "$out" \
        --epochs "$epochs" "$@" >&2
    echo "trained $out in $(( $(date +%s) - start )) s" >&2
    model=$out
fi

hyp=$(mktemp)
trap 'rm -f "$hyp"' EXIT
"$RNNSEARCH" align -m "$model" --pairs --format pharaoh "$CORPUS/test.tsv" > "$hyp"

# Lines are paired: hypothesis links, gold links, and the pair (for the word counts).
paste -d '\t' "$hyp" "$CORPUS/test.align" "$CORPUS/test.tsv" | awk -F '\t' -v min="$min" '
{
    ns = split($3, sw, " "); nt = split($4, tw, " ")
    nh = split($1, h, " "); ng = split($2, g, " ")
    delete H
    for (k = 1; k <= nh; k++) {
        if (split(h[k], ij, "-") != 2 || ij[1] !~ /^[0-9]+$/ || ij[2] !~ /^[0-9]+$/ ||
            ij[1] >= ns || ij[2] >= nt) {
            printf "line %d: bad or out-of-range link %s\n", NR, h[k] > "/dev/stderr"; bad = 1; exit 1
        }
        H[h[k]] = 1
    }
    right = 0
    for (k = 1; k <= ng; k++) if (g[k] in H) right++
    gold += ng; hyps += nh; agree += right; sentences++
    if (right == ng && nh == ng) whole++
}
END {
    if (bad) exit 1
    if (sentences == 0 || gold == 0) { print "no sentences" > "/dev/stderr"; exit 1 }
    pct = 100 * agree / gold
    printf "test sentences:        %d\n", sentences
    printf "gold links:            %d\n", gold
    printf "hypothesis links:      %d\n", hyps
    printf "links agreeing:        %d\n", agree
    printf "alignment agreement:   %.2f%% of gold links (precision %.2f%%)\n", pct, 100 * agree / hyps
    printf "sentences all correct: %d (%.1f%%)\n", whole, 100 * whole / sentences
    if (pct < min) { printf "below the required %s%%\n", min; exit 1 }
}'
