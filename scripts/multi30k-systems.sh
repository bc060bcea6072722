#!/bin/sh
# Checkpoint averaging and ensembling on Multi30k, measured: SEEDS models of
# the configuration of scripts/train-multi30k.sh trained side by side (one
# thread each, the same wall-time budget), then scored on val and on
# test_2016_flickr, beam 5: each seed's best.ckpt, the average of each seed's
# last K saved checkpoints (`rnnsearch average`), the ensemble of the best
# checkpoints and the ensemble of the averages (`translate -m A -m B ...`);
# finally the ensemble that scores higher on val, with the beam size and
# length penalty that score best on val (beam 5 or 10, penalty 0.6, 1.0 or
# 1.4). Selection stays on val; test is only read here, once per system.
# Writes models/multi30k-PAIR[-TAG]-systems.tsv.
#   scripts/multi30k-systems.sh [de-en|en-de|en-fr] [DATA_DIR]
# Environment: MINUTES (training budget per model, default 55), SEEDS (models,
# default 2), K (checkpoints averaged, 5), TRAIN=0 (only evaluate models
# trained before), OPTIONS and TAG (a variant, as in train-multi30k.sh).
set -eu
pair=${1:-de-en}
src=${pair%-*}
tgt=${pair#*-}
root=$(cd "$(dirname "$0")/.." && pwd)
data=${2:-$root/../shared/corpora/multi30k}
k=${K:-5}
seeds=$(seq 1 "${SEEDS:-2}")
bin=$root/rnnsearch
cd "$root"
[ -x "$bin" ] || make rnnsearch >/dev/null
# Model names as train-multi30k.sh gives them (TAG: a variant trained with OPTIONS).
base=multi30k-$pair${TAG:+-$TAG}
name_of() { if [ "$1" = 1 ]; then echo "$base"; else echo "$base-seed$1"; fi; }
mkdir -p build
if [ "${TRAIN:-1}" = 1 ]; then
    pids=
    for s in $seeds; do
        SYSTEM=0 SEED=$s KEEP=$k THREADS=1 MINUTES=${MINUTES:-55} sh scripts/train-multi30k.sh "$pair" "$data" \
            > "build/$(name_of "$s").out" 2>&1 &
        pids="$pids $!"
    done
    for p in $pids; do wait "$p"; done
fi
work=build/$base-systems
mkdir -p "$work"
for f in val test_2016_flickr; do
    for l in "$src" "$tgt"; do
        if [ -f "$data/$f.$l.gz" ]; then gzip -dc "$data/$f.$l.gz" > "$work/$f.$l"
        else cp "$data/$f.$l" "$work/$f.$l"; fi
    done
done
# The last K checkpoints a run kept, oldest first.
last_k() { ls models/"$1"/step-*.ckpt | sed 's/.*step-\([0-9]*\)\.ckpt/\1 &/' | sort -n | tail -n "$k" | cut -d' ' -f2; }
bests= averages=
for s in $seeds; do
    one=$(name_of "$s")
    "$bin" average -o "$work/$one.avg.ckpt" $(last_k "$one")
    bests="$bests -m models/$one/best.ckpt"
    averages="$averages -m $work/$one.avg.ckpt"
done
bleu_of() { "$bin" bleu "$1" "$2" --metric bleu 2>/dev/null | sed 's/^BLEU = \([0-9.]*\).*/\1/'; }
# translate TAG MODELS BEAM PENALTY SET: translates SET into $work/SET.TAG.$tgt
translate() {
    "$bin" translate $2 --beam "$3" --length-penalty "$4" --quiet "$work/$5.$src" > "$work/$5.$1.$tgt"
}
n=${SEEDS:-2}
{
    printf 'system\tval_bleu\ttest_bleu\ttest_bleu_lc\n'
    for s in $seeds; do
        echo "seed $s best|-m models/$(name_of "$s")/best.ckpt"
        echo "seed $s average of last $k|-m $work/$(name_of "$s").avg.ckpt"
    done | {
        cat
        echo "ensemble of the $n best|$bests"
        echo "ensemble of the $n averages|$averages"
    } | while IFS='|' read -r label models; do
        tag=$(printf '%s' "$label" | tr -c 'a-z0-9' '_')
        translate "$tag" "$models" 5 1.0 val
        translate "$tag" "$models" 5 1.0 test_2016_flickr
        lc=$("$bin" bleu --lowercase "$work/test_2016_flickr.$tag.$tgt" "$work/test_2016_flickr.$tgt" --metric bleu 2>/dev/null | sed 's/^BLEU = \([0-9.]*\).*/\1/')
        printf '%s\t%s\t%s\t%s\n' "$label" "$(bleu_of "$work/val.$tag.$tgt" "$work/val.$tgt")" \
            "$(bleu_of "$work/test_2016_flickr.$tag.$tgt" "$work/test_2016_flickr.$tgt")" "$lc"
    done
} | tee "models/$base-systems.tsv"
# The better ensemble on val, then its beam and length penalty on val.
val_best=$(awk -F'\t' '$1 ~ /best$/ && $1 ~ /^ensemble/ { print $2 }' "models/$base-systems.tsv")
val_avg=$(awk -F'\t' '$1 ~ /averages$/ { print $2 }' "models/$base-systems.tsv")
if awk -v a="$val_avg" -v b="$val_best" 'BEGIN { exit !(a >= b) }'; then
    final=$averages kind=averages
else
    final=$bests kind=best
fi
best_val=0
for beam in 5 10; do
    for lp in 0.6 1.0 1.4; do
        translate search "$final" "$beam" "$lp" val
        b=$(bleu_of "$work/val.search.$tgt" "$work/val.$tgt")
        printf 'search: ensemble of the %s, beam %s, length penalty %s: val %s\n' "$kind" "$beam" "$lp" "$b" >&2
        if awk -v a="$b" -v b="$best_val" 'BEGIN { exit !(a > b) }'; then
            best_val=$b best_beam=$beam best_lp=$lp
        fi
    done
done
translate final "$final" "$best_beam" "$best_lp" test_2016_flickr
lc=$("$bin" bleu --lowercase "$work/test_2016_flickr.final.$tgt" "$work/test_2016_flickr.$tgt" --metric bleu 2>/dev/null | sed 's/^BLEU = \([0-9.]*\).*/\1/')
printf 'ensemble of the %s %s, beam %s, length penalty %s (chosen on val)\t%s\t%s\t%s\n' \
    "$n" "$kind" "$best_beam" "$best_lp" "$best_val" \
    "$(bleu_of "$work/test_2016_flickr.final.$tgt" "$work/test_2016_flickr.$tgt")" "$lc" |
    tee -a "models/$base-systems.tsv"
