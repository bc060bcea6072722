#!/bin/sh
# Two rnnsearch builds translating the same file, rounds alternating A and B
# so that load from other jobs falls on both; one thread each.
#   dev/ab-translate.sh A_BINARY B_BINARY MODEL [ROUNDS] [SOURCE]
# BATCHES="1 64" (greedy at each batch size), KERNELS="default Haswell
# Sandybridge" (OPENBLAS_CORETYPE; default: OpenBLAS's own choice), BEAM=5
# adds beam search at batch 32. Prints per round wall and user+system CPU
# seconds, then per setting the ratio of medians A / B (> 1: B faster) of the
# seconds translating (translate's own figure, model loading excluded), of
# the process's CPU time (user + system, loading included), and
# whether the two builds' outputs are byte-identical.
# Needs a SOURCE: the default, build/perfdata/test_2016_flickr.de.raw, is not in
# a clone (../shared/bench/ab-train.sh prepares it).
set -eu
A=$1; B=$2; MODEL=$3; ROUNDS=${4:-5}
SRC=${5:-build/perfdata/test_2016_flickr.de.raw}
BATCHES=${BATCHES:-"1 64"}
KERNELS=${KERNELS:-"default Haswell Sandybridge"}
OUT=${OUT:-build/ab-translate}
# The default SOURCE is not in a clone: ../shared/bench/ab-train.sh prepares build/perfdata.
[ -f "$SRC" ] || { echo "ab-translate: no $SRC: give SOURCE, or run ../shared/bench/ab-train.sh to prepare build/perfdata" >&2; exit 1; }
mkdir -p "$OUT"
: > "$OUT/times.txt"
run() {   # side binary kernel batch round options...
    side=$1 bin=$2 k=$3 b=$4 r=$5; shift 5
    tag="${k}_b$b${BEAM_TAG:-}"
    if [ "$k" = default ]; then ct=; else ct=$k; fi
    env ${ct:+OPENBLAS_CORETYPE=$ct} OPENBLAS_NUM_THREADS=1 /usr/bin/time -f "%e %U %S" -o "$OUT/t" \
        "$bin" translate -m "$MODEL" --threads 1 --batch-size "$b" "$@" "$SRC" > "$OUT/${side}_$tag.hyp" 2> "$OUT/err"
    read -r wall user sys < "$OUT/t"
    # translate's own figure: the seconds spent translating (not loading)
    own=$(sed -n 's/.* \([0-9.]*\) s, [0-9.]* sentences\/s.*/\1/p' "$OUT/err" | tail -1)
    echo "$tag $side $r $own $(echo "$user $sys" | awk '{ print $1 + $2 }') $wall" >> "$OUT/times.txt"
}
echo "A=$A B=$B model=$MODEL rounds=$ROUNDS $(date -u +%T) load: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq 1 "$ROUNDS"); do
    for k in $KERNELS; do
        for b in $BATCHES; do
            run A "$A" "$k" "$b" "$r"
            run B "$B" "$k" "$b" "$r"
        done
        if [ -n "${BEAM:-}" ]; then
            BEAM_TAG=_beam$BEAM run A "$A" "$k" 32 "$r" --beam "$BEAM"
            BEAM_TAG=_beam$BEAM run B "$B" "$k" 32 "$r" --beam "$BEAM"
        fi
    done
done
echo "done $(date -u +%T) load: $(cut -d' ' -f1-3 /proc/loadavg)"
for tag in $(awk '{ print $1 }' "$OUT/times.txt" | sort -u); do
    same=identical
    cmp -s "$OUT/A_$tag.hyp" "$OUT/B_$tag.hyp" || same=DIFFERENT
    awk -v tag="$tag" -v same="$same" '
        function med(v, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
                                          if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
                                      return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }
        $1 == tag && $2 == "A" { aw[++na] = $4; ac[na] = $5; la = la " " $4 "/" $5 }
        $1 == tag && $2 == "B" { bw[++nb] = $4; bc[nb] = $5; lb = lb " " $4 "/" $5 }
        END { printf "%-22s A translating s/cpu s:%s\n%-22s B translating s/cpu s:%s\n", tag, la, "", lb
              printf "%-22s ratio A/B of medians: translating %.3f, cpu %.3f; outputs %s\n", "",
                     med(aw, na) / med(bw, nb), med(ac, na) / med(bc, nb), same }' "$OUT/times.txt"
done
