#!/bin/sh
# Why attention, measured (Bahdanau, Cho & Bengio 2014, Figure 2): the
# fixed-length encoder-decoder RNNencdec (`--attention none`: the decoder
# reads one context, the encoder's two final states, at every step) beside
# RNNsearch (`--attention additive`), both of the same sizes, each trained on
# pairs cut at 30 and at 50 source and target tokens (RNNxxx-30 / -50, as the
# paper does), all four side by side with one thread each and the same
# wall-time budget; then each translates the test set (beam 5) and
# `rnnsearch bleu --by-length` scores it by source length in words. Writes,
# in build/bottleneck-CORPUS/:
#   SYSTEM.tsv        per bucket: bucket, sentences, bleu, chrf (bleu --by-length)
#   results.tsv       every system's buckets in one table, and overall BLEU
#   figure.svg        BLEU against source length, one line per system
#   speed.tsv         each training's steps, target tokens per second, epochs
#   dev/bottleneck.sh [long|iwslt] [DATA_DIR]
# CORPUS: long (default: sentences of 5-80 words from corpora/gen-long.py,
# whose translation needs every source word; a few minutes) or iwslt
# (IWSLT'15 en->vi, 30k pairs, ../shared/corpora/iwslt15-en-vi-30k or
# DATA_DIR; about two hours).
# Environment: MINUTES (training budget per model; default 12 for long, 100
# for iwslt), SEED (1), CUTS ("30 50"), KINDS ("none additive"), JOBS
# (translations at once, default 2).
set -eu
corpus=${1:-long}
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$root/rnnsearch
work=$root/build/bottleneck-$corpus
seed=${SEED:-1}
jobs=${JOBS:-2}
mkdir -p "$work"
cd "$root"
[ -x "$bin" ] || make rnnsearch >/dev/null
start=$(date +%s)
stage() { echo "bottleneck: $1 at $(date -u +%H:%M:%S) ($(( ($(date +%s) - start) / 60 )) min)" >&2; }

case "$corpus" in
long)
    data=${2:-$work/data}
    [ -f "$data/train.tsv" ] || python3 corpora/gen-long.py --out "$data" >&2
    cut -f1 "$data/test.tsv" > "$work/test.src"
    cut -f2 "$data/test.tsv" > "$work/test.ref"
    minutes=${MINUTES:-12}
    set -- --train "$data/train.tsv" --dev "$data/dev.tsv" \
        --emb 64 --hidden 128 --att 128 --maxout 64 --batch-size 32 --epochs 1000
    ;;
iwslt)
    data=${2:-$root/../shared/corpora/iwslt15-en-vi-30k}
    gzip -dc "$data/test.en.gz" > "$work/test.src"
    gzip -dc "$data/test.vi.gz" > "$work/test.ref"
    minutes=${MINUTES:-100}
    set -- --src "$data/train.en.gz" --tgt "$data/train.vi.gz" \
        --dev-src "$data/val.en.gz" --dev-tgt "$data/val.vi.gz" --tokenizer space \
        --emb 256 --hidden 256 --att 256 --maxout 256 --max-vocab 16000 \
        --batch-size 64 --dropout 0.3 --label-smoothing 0.1 --lr-decay 0.5 --epochs 1000
    ;;
*) echo "usage: $0 [long|iwslt] [DATA_DIR]" >&2; exit 2 ;;
esac

label_of() { if [ "$1" = none ]; then echo "RNNencdec-$2"; else echo "RNNsearch-$2"; fi; }
systems=
for kind in ${KINDS:-none additive}; do
    for cut in ${CUTS:-30 50}; do
        systems="$systems $(label_of "$kind" "$cut"):$kind:$cut"
    done
done

if [ "${TRAIN:-1}" = 1 ]; then
    pids=
    for s in $systems; do
        label=${s%%:*} rest=${s#*:}
        kind=${rest%%:*} cut=${rest#*:}
        "$bin" train "$@" --attention "$kind" --max-len "$cut" --dev-bleu \
            --max-minutes "$minutes" --threads 1 --seed "$seed" --quiet \
            --out "models/bottleneck-$corpus-$label" --overwrite \
            > "$work/$label.train.out" 2>&1 &
        pids="$pids $!"
    done
    for p in $pids; do wait "$p"; done
    stage "trainings done"
fi

# Translations, JOBS at once, one thread each.
i=0
for s in $systems; do
    label=${s%%:*}
    "$bin" translate -m "models/bottleneck-$corpus-$label/best.ckpt" --beam 5 --threads 1 --quiet \
        "$work/test.src" > "$work/$label.hyp" &
    i=$((i + 1))
    [ $((i % jobs)) = 0 ] && wait
done
wait
stage "test set translated"

printf 'system\tbucket\tsentences\tbleu\tchrf\n' > "$work/results.tsv"
printf 'system\tsteps\tepochs\ttarget_tokens_per_s\tminutes\n' > "$work/speed.tsv"
tables=
for s in $systems; do
    label=${s%%:*}
    "$bin" bleu --by-length --src "$work/test.src" --format tsv \
        "$work/$label.hyp" "$work/test.ref" > "$work/$label.tsv"
    awk -F'\t' -v s="$label" 'NR > 1 { print s "\t" $0 }' "$work/$label.tsv" >> "$work/results.tsv"
    all=$("$bin" bleu "$work/$label.hyp" "$work/test.ref" --metric bleu | sed 's/^BLEU = \([0-9.]*\).*/\1/')
    printf '%s\tall\t%s\t%s\t-\n' "$label" "$(wc -l < "$work/test.src")" "$all" >> "$work/results.tsv"
    # The training's speed: the log's last evaluation row (step, epoch, ...,
    # target tokens per second since the start, ..., wall seconds); epochs
    # as updates over the first row's, which ends the first epoch.
    awk -F'\t' -v s="$label" 'NR == 2 { per = $1 }
        NR > 1 { r = s "\t" $1 "\t" sprintf("%.1f", $1 / per) "\t" int($6) "\t" sprintf("%.1f", $8 / 60) }
        END { print r }' "models/bottleneck-$corpus-$label/train.log.tsv" >> "$work/speed.tsv"
    tables="$tables $label=$work/$label.tsv"
done
"$bin" plot --by-length $tables --title "BLEU by source length ($corpus)" -o "$work/figure.svg"
stage "scored"
column -t -s "$(printf '\t')" "$work/results.tsv" >&2 || cat "$work/results.tsv" >&2
column -t -s "$(printf '\t')" "$work/speed.tsv" >&2 || cat "$work/speed.tsv" >&2
echo "bottleneck: the tables and figure are in $work (results.tsv, speed.tsv, figure.svg)" >&2
