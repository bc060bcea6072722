#!/bin/sh
# Checkpoint averaging and ensembling on Multi30k, measured: two seeds of the
# model of scripts/train-multi30k.sh trained side by side (one core each, the
# same wall-time budget), then five systems scored on val and on
# test_2016_flickr, beam 5: each seed's best.ckpt, the average of each seed's
# last K saved checkpoints (`rnnsearch average`), and the ensemble of the two
# best.ckpt (`translate -m A -m B`) and of the two averages; finally the last
# with the beam size and length penalty that score best on val (beam 5 or 10,
# penalty 0.6, 1.0 or 1.4). Selection stays on val; test is only read here,
# once per system. Writes models/multi30k-PAIR-systems.tsv.
#   scripts/multi30k-systems.sh [de-en|en-de|en-fr] [DATA_DIR]
# Environment: MINUTES (per model, default 55), K (checkpoints averaged, 5),
# TRAIN=0 (only evaluate models trained before).
set -eu
pair=${1:-de-en}
src=${pair%-*}
tgt=${pair#*-}
root=$(cd "$(dirname "$0")/.." && pwd)
data=${2:-$root/../shared/corpora/multi30k}
k=${K:-5}
bin=$root/rnnsearch
cd "$root"
[ -x "$bin" ] || make rnnsearch >/dev/null
one=multi30k-$pair
two=multi30k-$pair-seed2
if [ "${TRAIN:-1}" = 1 ]; then
    SEED=1 KEEP=$k THREADS=1 MINUTES=${MINUTES:-55} sh scripts/train-multi30k.sh "$pair" "$data" > build/$one.out 2>&1 &
    first=$!
    SEED=2 KEEP=$k THREADS=1 MINUTES=${MINUTES:-55} sh scripts/train-multi30k.sh "$pair" "$data" > build/$two.out 2>&1 &
    second=$!
    wait $first
    wait $second
fi
work=build/multi30k-systems-$pair
mkdir -p "$work"
for f in val test_2016_flickr; do
    for l in "$src" "$tgt"; do
        if [ -f "$data/$f.$l.gz" ]; then gzip -dc "$data/$f.$l.gz" > "$work/$f.$l"
        else cp "$data/$f.$l" "$work/$f.$l"; fi
    done
done
# The last K checkpoints a run kept, oldest first.
last_k() { ls models/"$1"/step-*.ckpt | sed 's/.*step-\([0-9]*\)\.ckpt/\1 &/' | sort -n | tail -n "$k" | cut -d' ' -f2; }
"$bin" average -o "$work/$one.avg.ckpt" $(last_k "$one")
"$bin" average -o "$work/$two.avg.ckpt" $(last_k "$two")
bleu_of() { "$bin" bleu "$1" "$2" --metric bleu 2>/dev/null | sed 's/^BLEU = \([0-9.]*\).*/\1/'; }
{
    printf 'system\tval_bleu\ttest_bleu\ttest_bleu_lc\n'
    for system in "seed 1 best|-m models/$one/best.ckpt" "seed 2 best|-m models/$two/best.ckpt" \
                  "seed 1 average of last $k|-m $work/$one.avg.ckpt" \
                  "seed 2 average of last $k|-m $work/$two.avg.ckpt" \
                  "ensemble of the two best|-m models/$one/best.ckpt -m models/$two/best.ckpt" \
                  "ensemble of the two averages|-m $work/$one.avg.ckpt -m $work/$two.avg.ckpt"; do
        label=${system%%|*}
        models=${system#*|}
        tag=$(printf '%s' "$label" | tr -c 'a-z0-9' '_')
        "$bin" translate $models --beam "${beam:-5}" --length-penalty "${lp:-1.0}" --quiet \
            "$work/val.$src" > "$work/val.$tag.$tgt"
        "$bin" translate $models --beam "${beam:-5}" --length-penalty "${lp:-1.0}" --quiet \
            "$work/test_2016_flickr.$src" > "$work/test.$tag.$tgt"
        lc=$("$bin" bleu --lowercase "$work/test.$tag.$tgt" "$work/test_2016_flickr.$tgt" --metric bleu 2>/dev/null | sed 's/^BLEU = \([0-9.]*\).*/\1/')
        printf '%s\t%s\t%s\t%s\n' "$label" "$(bleu_of "$work/val.$tag.$tgt" "$work/val.$tgt")" \
            "$(bleu_of "$work/test.$tag.$tgt" "$work/test_2016_flickr.$tgt")" "$lc"
    done
} | tee "models/multi30k-$pair-systems.tsv"
# The ensemble of the two averages with the beam and length penalty best on val.
best_val=0
for beam in 5 10; do
    for lp in 0.6 1.0 1.4; do
        "$bin" translate -m "$work/$one.avg.ckpt" -m "$work/$two.avg.ckpt" --beam "$beam" \
            --length-penalty "$lp" --quiet "$work/val.$src" > "$work/val.search.$tgt"
        b=$(bleu_of "$work/val.search.$tgt" "$work/val.$tgt")
        if awk -v a="$b" -v b="$best_val" 'BEGIN { exit !(a > b) }'; then
            best_val=$b best_beam=$beam best_lp=$lp
        fi
    done
done
"$bin" translate -m "$work/$one.avg.ckpt" -m "$work/$two.avg.ckpt" --beam "$best_beam" \
    --length-penalty "$best_lp" --quiet "$work/test_2016_flickr.$src" > "$work/test.final.$tgt"
lc=$("$bin" bleu --lowercase "$work/test.final.$tgt" "$work/test_2016_flickr.$tgt" --metric bleu 2>/dev/null | sed 's/^BLEU = \([0-9.]*\).*/\1/')
printf 'ensemble of the two averages, beam %s, length penalty %s (chosen on val)\t%s\t%s\t%s\n' \
    "$best_beam" "$best_lp" "$best_val" "$(bleu_of "$work/test.final.$tgt" "$work/test_2016_flickr.$tgt")" "$lc" |
    tee -a "models/multi30k-$pair-systems.tsv"
