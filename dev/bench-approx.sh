#!/bin/sh
# translate's approximate options against the exact path, on one model:
# speed (one thread; rounds interleaving the settings, so that load from
# other jobs falls on all of them) and BLEU on Multi30k val and test_2016.
#   dev/bench-approx.sh MODEL LEXICON [PAIR] [ROUNDS]
# MODEL a checkpoint trained on PAIR (default en-de) of Multi30k, LEXICON its
# `rnnsearch lexicon` table. Settings: exact, --shortlist LEXICON (Marian's
# sizes 100,100 unless SHORTLIST="FIRST,BEST"), --int8, and both. Speed:
# greedy at batch 1 and 64 and beam 5 at batch 32 on test_2016 (1 000
# sentences), translate's own seconds (model loading excluded), the median
# of ROUNDS (default 3). BLEU: greedy at batch 64 and beam 5, on val and
# test_2016, with the share of sentences whose output is the exact one's.
# Writes OUT/speed.tsv and OUT/bleu.tsv (OUT=build/bench-approx).
# Needs Multi30k's gzipped files in DATA (default ../shared/corpora/multi30k,
# not in a clone; dev/train-multi30k.sh downloads them when missing).
set -eu
MODEL=$1; LEX=$2; PAIR=${3:-en-de}; ROUNDS=${4:-3}
src=${PAIR%-*}; tgt=${PAIR#*-}
BIN=$(realpath "${RNNSEARCH:-./rnnsearch}")
DATA=${DATA:-../shared/corpora/multi30k}
OUT=${OUT:-build/bench-approx}
[ -f "$DATA/val.$src.gz" ] || { echo "bench-approx: no $DATA/val.$src.gz: set DATA to a Multi30k directory (dev/train-multi30k.sh downloads one)" >&2; exit 1; }
SL="$LEX${SHORTLIST:+,$SHORTLIST}"
mkdir -p "$OUT"
for f in val test_2016_flickr; do
    for l in "$src" "$tgt"; do gzip -dc "$DATA/$f.$l.gz" > "$OUT/$f.$l"; done
done
options() { # SETTING: its translate options
    case $1 in
    exact) ;;
    shortlist) echo "--shortlist $SL" ;;
    int8) echo --int8 ;;
    both) echo "--int8 --shortlist $SL" ;;
    esac
}
SETTINGS="exact shortlist int8 both"
# translate SETTING SET BATCH EXTRA...: OUT/SET.SETTING.bBATCH[EXTRA].hyp; prints the seconds.
translate() {
    setting=$1 set=$2 batch=$3; shift 3
    tag=$(echo "$*" | tr -d ' -')
    OPENBLAS_NUM_THREADS=1 "$BIN" translate -m "$MODEL" --threads 1 --batch-size "$batch" \
        $(options "$setting") "$@" "$OUT/$set.$src" > "$OUT/$set.$setting.b$batch$tag.hyp" \
        2> "$OUT/err"
    sed -n 's/.* \([0-9.]*\) s, [0-9.]* sentences\/s.*/\1/p' "$OUT/err" | tail -1
}
echo "bench-approx: $MODEL, $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
: > "$OUT/times.txt"
for r in $(seq "$ROUNDS"); do
    for s in $SETTINGS; do
        echo "greedy_b1 $s $(translate "$s" test_2016_flickr 1)" >> "$OUT/times.txt"
        echo "greedy_b64 $s $(translate "$s" test_2016_flickr 64)" >> "$OUT/times.txt"
        echo "beam5_b32 $s $(translate "$s" test_2016_flickr 32 --beam 5)" >> "$OUT/times.txt"
    done
done
# Medians, and the speed-up over exact (> 1: faster).
median() { # RUN SETTING
    awk -v k="$1 $2" '$1 " " $2 == k { print $3 }' "$OUT/times.txt" | sort -g |
        awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
printf "run\tsetting\tseconds\tspeedup\n" | tee "$OUT/speed.tsv"
for run in greedy_b1 greedy_b64 beam5_b32; do
    exact=$(median "$run" exact)
    for s in $SETTINGS; do
        m=$(median "$run" "$s")
        printf "%s\t%s\t%s\t%s\n" "$run" "$s" "$m" "$(awk -v a="$exact" -v b="$m" 'BEGIN { printf "%.2f", a / b }')"
    done | tee -a "$OUT/speed.tsv"
done
bleu() { "$BIN" bleu "$1" "$2" --metric bleu 2>/dev/null | sed 's/^BLEU = \([0-9.]*\).*/\1/'; }
same() { paste "$1" "$2" | awk -F '\t' '$1 == $2 { s++ } END { printf "%.1f", 100 * s / NR }'; }
printf "set\tsearch\tsetting\tbleu\tsame_as_exact_percent\n" | tee "$OUT/bleu.tsv"
for set in val test_2016_flickr; do
    [ "$set" = val ] && for s in $SETTINGS; do
        translate "$s" val 64 > /dev/null
        translate "$s" val 32 --beam 5 > /dev/null
    done
    for search in b64 b32beam5; do
        for s in $SETTINGS; do
            hyp=$OUT/$set.$s.$search.hyp
            printf "%s\t%s\t%s\t%s\t%s\n" "$set" "$search" "$s" "$(bleu "$hyp" "$OUT/$set.$tgt")" \
                "$(same "$hyp" "$OUT/$set.exact.$search.hyp")" | tee -a "$OUT/bleu.tsv"
        done
    done
done
