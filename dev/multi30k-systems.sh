#!/bin/sh
# A Multi30k system, measured: SEEDS models of the configuration of
# dev/train-multi30k.sh trained side by side (one thread each, the same
# wall-time budget), then, on val only (beam 5, length penalty 1.0), each
# seed's best.ckpt and two checkpoint averages (`rnnsearch average`): its last
# K saved checkpoints, and its K checkpoints with the best dev BLEU (which
# come from before the learning rate has been halved many times); the
# ensembles (`translate -m A -m B ...`) of the seeds' best checkpoints and of
# each kind of average; then the ensemble that scores highest on val, with the
# beam size (5, 10) and length penalty (0.6, 1.0, 1.4) that score best on val.
# test_2016_flickr is read twice in all: by that final system and by the
# single model that scores highest on val.
# Writes models/multi30k-PAIR[-TAG]-systems.tsv (val, test, test lower-cased;
# "-" where test was not read) and prints each stage's wall time.
#   dev/multi30k-systems.sh [de-en|en-de|en-fr] [DATA_DIR]
# Environment: MINUTES (training budget per model, default 55), SEEDS (models,
# default 2), K (checkpoints averaged, 5), KEEP (checkpoints each training
# keeps, one per epoch, default 40), TRAIN=0 (only evaluate models trained
# before), OPTIONS and TAG (a variant, as in train-multi30k.sh), JOBS
# (translations run at once, one thread each; default 2).
set -eu
pair=${1:-de-en}
src=${pair%-*}
tgt=${pair#*-}
root=$(cd "$(dirname "$0")/.." && pwd)
data=${2:-$root/../shared/corpora/multi30k}
k=${K:-5}
keep=${KEEP:-40}
jobs=${JOBS:-2}
seeds=$(seq 1 "${SEEDS:-2}")
n=${SEEDS:-2}
bin=$root/rnnsearch
cd "$root"
[ -x "$bin" ] || make rnnsearch >/dev/null
start=$(date +%s)
stage() { echo "multi30k-systems: $1 at $(date -u +%H:%M:%S) ($(( ($(date +%s) - start) / 60 )) min)" >&2; }
# Model names as train-multi30k.sh gives them (TAG: a variant trained with OPTIONS).
base=multi30k-$pair${TAG:+-$TAG}
name_of() { if [ "$1" = 1 ]; then echo "$base"; else echo "$base-seed$1"; fi; }
mkdir -p build
if [ "${TRAIN:-1}" = 1 ]; then
    pids=
    for s in $seeds; do
        SYSTEM=0 SEED=$s KEEP=$keep THREADS=1 TEST=0 MINUTES=${MINUTES:-55} \
            sh dev/train-multi30k.sh "$pair" "$data" > "build/$(name_of "$s").out" 2>&1 &
        pids="$pids $!"
    done
    for p in $pids; do wait "$p"; done
    stage "trainings done"
fi
work=build/$base-systems
mkdir -p "$work"
for f in val test_2016_flickr; do
    for l in "$src" "$tgt"; do
        if [ -f "$data/$f.$l.gz" ]; then gzip -dc "$data/$f.$l.gz" > "$work/$f.$l"
        else cp "$data/$f.$l" "$work/$f.$l"; fi
    done
done
# Saved checkpoints of a run (step-STEP.ckpt), as "STEP PATH", by step.
saved() { ls models/"$1"/step-*.ckpt | sed 's/.*step-\([0-9]*\)\.ckpt/\1 &/' | sort -n; }
# The last K of them, and the K whose evaluation (train.log.tsv: step, then
# dev BLEU in column 5) scored highest; ties go to the earlier step.
last_k() { saved "$1" | tail -n "$k" | cut -d' ' -f2; }
top_k() {
    saved "$1" > "$work/saved.txt"
    awk -F'\t' 'NR == FNR { path[$1] = $2; next }
                FNR > 1 && ($1 in path) { print $5 "\t" $1 "\t" path[$1] }' FS=' ' "$work/saved.txt" FS='\t' "models/$1/train.log.tsv" |
        sort -t "$(printf '\t')" -k1,1gr -k2,2n | head -n "$k" | cut -f3
}
bests= lasts= tops=
for s in $seeds; do
    one=$(name_of "$s")
    "$bin" average -o "$work/$one.last.ckpt" $(last_k "$one")
    "$bin" average -o "$work/$one.top.ckpt" $(top_k "$one")
    bests="$bests -m models/$one/best.ckpt"
    lasts="$lasts -m $work/$one.last.ckpt"
    tops="$tops -m $work/$one.top.ckpt"
done
stage "averages written"
bleu_of() { "$bin" bleu "$1" "$2" ${3:-} --metric bleu 2>/dev/null | sed 's/^BLEU = \([0-9.]*\).*/\1/'; }
# translate LABEL MODELS BEAM PENALTY SET: writes $work/SET.LABEL.$tgt
translate() {
    "$bin" translate $2 --beam "$3" --length-penalty "$4" --threads 1 --quiet \
        "$work/$5.$src" > "$work/$5.$1.$tgt"
}
# run_all FILE: runs the lines "LABEL|MODELS|BEAM|PENALTY|SET" of FILE in JOBS
# queues, dealt round-robin (the file lists the longest jobs first).
run_all() {
    i=0
    while [ "$i" -lt "$jobs" ]; do
        awk -v j="$jobs" -v i="$i" '(NR - 1) % j == i' "$1" | {
            while IFS='|' read -r label models beam lp set; do
                translate "$label" "$models" "$beam" "$lp" "$set"
            done
        } &
        i=$((i + 1))
    done
    wait
}
# The candidates, on val: "LABEL|DESCRIPTION|MODELS".
{
    for s in $seeds; do
        one=$(name_of "$s")
        echo "s${s}_best|seed $s best.ckpt|-m models/$one/best.ckpt"
        echo "s${s}_last|seed $s, mean of its last $k|-m $work/$one.last.ckpt"
        echo "s${s}_top|seed $s, mean of its $k best by dev BLEU|-m $work/$one.top.ckpt"
    done
    echo "ens_best|ensemble of the $n best.ckpt|$bests"
    echo "ens_last|ensemble of the $n means of the last $k|$lasts"
    echo "ens_top|ensemble of the $n means of the $k best|$tops"
} > "$work/candidates.txt"
# Ensembles first: the longest jobs start before the short ones.
{ grep '^ens_' "$work/candidates.txt"; grep -v '^ens_' "$work/candidates.txt"; } |
    awk -F'|' '{ print $1 "|" $3 "|5|1.0|val" }' > "$work/jobs.txt"
run_all "$work/jobs.txt"
while IFS='|' read -r label what models; do
    printf '%s\t%s\t%s\n' "$label" "$what" "$(bleu_of "$work/val.$label.$tgt" "$work/val.$tgt")"
done < "$work/candidates.txt" > "$work/val.tsv"
stage "candidates scored on val"
# best_of PATTERN: the label among candidates matching PATTERN with the highest val BLEU.
best_of() { grep "$1" "$work/val.tsv" | sort -t "$(printf '\t')" -k3,3gr | head -n 1 | cut -f1; }
single=$(best_of '^s[0-9]')
ensemble=$(best_of '^ens_')
final=$(awk -F'|' -v l="$ensemble" '$1 == l { print $3 }' "$work/candidates.txt")
final_what=$(awk -F'|' -v l="$ensemble" '$1 == l { print $2 }' "$work/candidates.txt")
: > "$work/jobs.txt"
for beam in 5 10; do
    for lp in 0.6 1.0 1.4; do
        echo "search_${beam}_$lp|$final|$beam|$lp|val" >> "$work/jobs.txt"
    done
done
run_all "$work/jobs.txt"
best_val=0
for beam in 5 10; do
    for lp in 0.6 1.0 1.4; do
        b=$(bleu_of "$work/val.search_${beam}_$lp.$tgt" "$work/val.$tgt")
        printf 'search: %s, beam %s, length penalty %s: val %s\n' "$final_what" "$beam" "$lp" "$b" >&2
        printf '%s\t%s\t%s\n' "$beam" "$lp" "$b" >> "$work/search.tsv.new"
        if awk -v a="$b" -v b="$best_val" 'BEGIN { exit !(a > b) }'; then
            best_val=$b best_beam=$beam best_lp=$lp
        fi
    done
done
mv "$work/search.tsv.new" "$work/search.tsv"
stage "beam and length penalty chosen on val"
# test_2016, read once by each of the two chosen systems.
single_models=$(awk -F'|' -v l="$single" '$1 == l { print $3 }' "$work/candidates.txt")
printf '%s\n' "single|$single_models|5|1.0|test_2016_flickr" "final|$final|$best_beam|$best_lp|test_2016_flickr" > "$work/jobs.txt"
run_all "$work/jobs.txt"
stage "test_2016 translated"
test_of() { echo "$(bleu_of "$work/test_2016_flickr.$1.$tgt" "$work/test_2016_flickr.$tgt")" \
    "$(bleu_of "$work/test_2016_flickr.$1.$tgt" "$work/test_2016_flickr.$tgt" --lowercase)"; }
{
    printf 'system\tval_bleu\ttest_bleu\ttest_bleu_lc\n'
    while IFS="$(printf '\t')" read -r label what val; do
        if [ "$label" = "$single" ]; then set -- $(test_of single); else set -- - -; fi
        printf '%s\t%s\t%s\t%s\n' "$what" "$val" "$1" "$2"
    done < "$work/val.tsv"
    set -- $(test_of final)
    printf '%s, beam %s, length penalty %s (chosen on val)\t%s\t%s\t%s\n' \
        "$final_what" "$best_beam" "$best_lp" "$best_val" "$1" "$2"
} | tee "models/$base-systems.tsv"
