#!/bin/sh
# Trains and evaluates rnnsearch on Multi30k (task 1) end to end.
#   dev/train-multi30k.sh [de-en|en-de|en-fr] [DATA_DIR]
# DATA_DIR holds train/val/test_2016_flickr.{de,en,fr}[.gz]; default
# ../shared/corpora/multi30k; when neither exists the official release is
# downloaded (and the script says so). Selection is on val only; test_2016 is
# translated once at the end. Writes models/multi30k-PAIR/results.tsv.
# Environment: MINUTES (training wall-time budget, default 115), THREADS (1),
# SEED (1; another seed trains models/multi30k-PAIR-seedN), KEEP (keep the last
# KEEP checkpoints as step-N.ckpt, to average; default 5),
# LR (learning rate, default 0.002), OPTIONS (more train options, e.g. "--tie-embeddings") with TAG (a name for
# the variant: trains models/multi30k-PAIR-TAG), EVAL_ONLY=1 (evaluate
# models/multi30k-PAIR without training), TEST=0 (stop after training: for
# variants compared on val, test_2016 left unread),
# SYSTEM=1 (the best system instead of one model: SEEDS models side by side,
# averaged and ensembled by dev/multi30k-systems.sh; SEEDS default 2).
set -eu
[ "${SYSTEM:-0}" = 1 ] && exec sh "$(dirname "$0")/multi30k-systems.sh" "$@"
pair=${1:-de-en}
case "$pair" in de-en|en-de|en-fr) ;; *) echo "usage: $0 [de-en|en-de|en-fr] [DATA_DIR]" >&2; exit 2 ;; esac
src=${pair%-*}
tgt=${pair#*-}
root=$(cd "$(dirname "$0")/.." && pwd)
data=${2:-$root/../shared/corpora/multi30k}
minutes=${MINUTES:-115}
threads=${THREADS:-1}
seed=${SEED:-1}
keep=${KEEP:-5}
name=multi30k-$pair
[ -z "${TAG:-}" ] || name=$name-$TAG
[ "$seed" = 1 ] || name=$name-seed$seed
work=$root/build/$name
bin=$root/rnnsearch
mkdir -p "$work"

if [ ! -d "$data" ]; then
    data=$work/download
    echo "train-multi30k: no Multi30k at the given path; downloading the official release into $data" >&2
    mkdir -p "$data"
    base=https://raw.githubusercontent.com/multi30k/dataset/master/data/task1/raw
    for f in train val test_2016_flickr; do
        for l in de en fr; do
            curl -fsSL "$base/$f.$l.gz" -o "$data/$f.$l.gz"
        done
    done
fi
for f in train val test_2016_flickr; do
    for l in "$src" "$tgt"; do
        if [ -f "$data/$f.$l.gz" ]; then gzip -dc "$data/$f.$l.gz" > "$work/$f.$l"
        else cp "$data/$f.$l" "$work/$f.$l"; fi
    done
done

[ -x "$bin" ] || make -C "$root" rnnsearch >/dev/null
cd "$root"
# EVAL_ONLY=1 re-evaluates an existing model without training.
[ "${EVAL_ONLY:-0}" = 1 ] || "$bin" train --src "$work/train.$src" --tgt "$work/train.$tgt" \
    --dev-src "$work/val.$src" --dev-tgt "$work/val.$tgt" --dev-bleu \
    --out "models/$name" --overwrite --subwords 6000 --emb 256 --hidden 256 --att 256 --maxout 256 \
    --batch-size 64 --lr "${LR:-0.002}" --dropout 0.3 --label-smoothing 0.1 --lr-decay 0.5 \
    --patience 6 --epochs 40 --max-len 60 --max-minutes "$minutes" --threads "$threads" \
    --seed "$seed" --keep-last "$keep" ${OPTIONS:-} \
    2> "$work/train.log"

[ "${TEST:-1}" = 1 ] || exit 0
model=models/$name/best.ckpt
evaluate() { # NAME OPTIONS...
    label=$1; shift
    "$bin" translate -m "$model" "$@" "$work/test_2016_flickr.$src" > "$work/test.$label.$tgt"
    cased=$("$bin" bleu "$work/test.$label.$tgt" "$work/test_2016_flickr.$tgt" --metric bleu | sed 's/^BLEU = \([0-9.]*\).*/\1/')
    lower=$("$bin" bleu --lowercase "$work/test.$label.$tgt" "$work/test_2016_flickr.$tgt" --metric bleu | sed 's/^BLEU = \([0-9.]*\).*/\1/')
    echo "$cased $lower"
}
dev_bleu=$(awk -F'\t' 'NR > 1 && $5 > best { best = $5 } END { print best }' "models/$name/train.log.tsv")
epochs=$(awk -F'\t' 'NR > 1 { e = $2 } END { print e }' "models/$name/train.log.tsv")
# Training wall time as the log recorded it (SentencePiece training excluded).
minutes_trained=$(awk -F'\t' 'NR > 1 { w = $8 } END { printf "%.1f", w / 60 }' "models/$name/train.log.tsv")
greedy=$(evaluate greedy)
beam=$(evaluate beam5 --beam 5 --length-penalty 1.0)
{
    printf 'pair\ttrain_minutes\tepochs\tdev_bleu\ttest_greedy\ttest_greedy_lc\ttest_beam5\ttest_beam5_lc\n'
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$pair" "$minutes_trained" "$epochs" "$dev_bleu" \
        $greedy $beam
} | tee "models/$name/results.tsv"
