#!/bin/sh
# Beam search against the PyTorch twin, interleaved: rnnsearch translate
# --beam K and dev/torch-beam.py (the twin's model with rnnsearch's beam
# rules) on Multi30k test_2016, the same weights, one thread each, rounds
# alternating the two; then how many outputs are identical.
#   dev/ab-beam.sh MODEL [ROUNDS] [OUTDIR]
# MODEL: a word-level, lower-cased checkpoint such as ab-train.sh trains
# (../shared/bench/README.md); build/perfdata as ab-train.sh prepares it.
# BEAM=5 BATCH=32 KERNELS="Zen Haswell Sandybridge" (OPENBLAS_CORETYPE for
# both sides). rnnsearch's time is its whole process (loading included),
# the twin's its decoding loop only (torch-beam.py says what that covers).
set -eu
MODEL=$1; ROUNDS=${2:-3}; OUT=${3:-build/ab-beam}
BEAM=${BEAM:-5}; BATCH=${BATCH:-32}; KERNELS=${KERNELS:-"Zen Haswell Sandybridge"}
RS=${RS:-./rnnsearch}; D=${D:-build/perfdata}
SRC=$D/test_2016_flickr.de.raw; TOK=$D/test_2016_flickr.de.tok
# Not in a clone: $D comes from ../shared/bench/ab-train.sh (the PyTorch twin beside the checkout).
[ -f "$SRC" ] && [ -f "$TOK" ] || { echo "ab-beam: no $SRC or $TOK: ../shared/bench/ab-train.sh prepares $D (or set D)" >&2; exit 1; }
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE
mkdir -p "$OUT"
"$RS" export -m "$MODEL" "$OUT/model.safetensors" > /dev/null
NS=$(wc -l < "$SRC")
for k in $KERNELS; do
    for r in $(seq 1 "$ROUNDS"); do
        echo "$k round $r $(date -u +%T) load $(cut -d' ' -f1 /proc/loadavg)"
        OPENBLAS_CORETYPE=$k /usr/bin/time -f "%e %M" -o "$OUT/t" "$RS" translate -m "$MODEL" \
            --threads 1 --beam "$BEAM" --batch-size "$BATCH" "$SRC" > "$OUT/rs_$k.hyp" 2> /dev/null
        read -r wall rss < "$OUT/t"
        awk -v w="$wall" -v r="$rss" -v n="$NS" \
            'BEGIN { printf "  A rnnsearch: %.2fs  %.1f sent/s  peak_rss_MB=%.0f\n", w, n / w, r / 1024 }'
        OPENBLAS_CORETYPE=$k /usr/bin/python3 "$(dirname "$0")/torch-beam.py" --load "$OUT/model.safetensors" \
            --decode "$TOK" --beam "$BEAM" --batch-size "$BATCH" --threads 1 \
            --hyp-out "$OUT/pt_$k.hyp" | sed 's/^/  B torch /'
    done
    "$RS" tokenize --lowercase --tokenizer word "$OUT/rs_$k.hyp" > "$OUT/rs_$k.tok"
    same=$(paste -d '\t' "$OUT/rs_$k.tok" "$OUT/pt_$k.hyp" | sed 's/￭//g; s/ //g' |
        awk -F'\t' '$1 == $2' | wc -l)
    echo "$k: beam $BEAM outputs identical on $same / $NS sentences"
done
